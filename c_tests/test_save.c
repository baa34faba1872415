/* ossa_save to DPM through a write callback; the bytes load back into the same model.
   The saver may reorder or strip things (the DPM saver optimisations of the seed), so the meshes are
   compared as sorted lists of skinned triangles, not vertex by vertex. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fixture.h"

#define MAX_BONES 64
#define CORNER 8 /* floats per triangle corner: position, normal, texcoord */
#define TRI (3 * CORNER)

typedef struct sink {
    fx_buf bytes;
    unsigned calls;
    uint32_t fail_with; /* OSSA_OK: accept everything */
} sink;

static uint32_t collect(void *user, const uint8_t *data, size_t size)
{
    sink *s = user;
    s->calls++;
    if (s->fail_with != OSSA_OK)
        return s->fail_with;
    fx_put_bytes(&s->bytes, data, size);
    return OSSA_OK;
}

static size_t null_user_bytes;

static uint32_t count_bytes(void *user, const uint8_t *data, size_t size)
{
    (void)data;
    if (user != NULL)
        return OSSA_ERR_INVALID_ARGUMENT;
    null_user_bytes += size;
    return OSSA_OK;
}

static int cmp_floats(const float *a, const float *b, int n)
{
    int i;
    for (i = 0; i < n; i++)
        if (a[i] != b[i])
            return a[i] < b[i] ? -1 : 1;
    return 0;
}

static int cmp_tri(const void *a, const void *b)
{
    return cmp_floats(a, b, TRI);
}

/* Every triangle of `mesh` skinned at `frame`: corners rotated (winding kept) to start at the smallest
   position, triangles sorted. Returns the triangle count; *out is malloc'd. */
static uint32_t triangle_list(const ossa_model *m, uint32_t mesh, uint32_t frame, float **out)
{
    ossa_model_info info;
    ossa_mesh_info mi;
    ossa_mat3x4 bones[MAX_BONES];
    ossa_frame_blend blend;
    ossa_skin_target t;
    float *pos, *nrm, *tris;
    uint32_t i, c;

    *out = NULL;
    if (ossa_model_get_info(m, &info) != OSSA_OK || info.bone_count > MAX_BONES ||
        ossa_model_get_mesh(m, mesh, &mi) != OSSA_OK)
        return 0;
    blend.frame = frame;
    blend.weight = 1;
    if (ossa_pose_frames(m, &blend, 1, NULL, bones, info.bone_count) != OSSA_OK)
        return 0;
    pos = malloc(12 * (size_t)mi.vertex_count + 12);
    nrm = malloc(12 * (size_t)mi.vertex_count + 12);
    t.positions = pos;
    t.position_stride = 12;
    t.position_bytes = 12 * (size_t)mi.vertex_count;
    t.normals = nrm;
    t.normal_stride = 12;
    t.normal_bytes = 12 * (size_t)mi.vertex_count;
    tris = malloc(sizeof(float) * TRI * ((size_t)mi.triangle_count + 1));
    if (ossa_skin_mesh(m, mesh, bones, info.bone_count, 0, mi.vertex_count, 0, &t) != OSSA_OK) {
        free(pos);
        free(nrm);
        free(tris);
        return 0;
    }
    for (i = 0; i < mi.triangle_count; i++) {
        float corners[3][CORNER];
        int start = 0, k;
        for (c = 0; c < 3; c++) {
            uint32_t v = mi.indices[3 * i + c];
            memcpy(corners[c], pos + 3 * v, 12);
            memcpy(corners[c] + 3, nrm + 3 * v, 12);
            corners[c][6] = mi.texcoords ? mi.texcoords[2 * v] : 0;
            corners[c][7] = mi.texcoords ? mi.texcoords[2 * v + 1] : 0;
        }
        for (k = 1; k < 3; k++)
            if (cmp_floats(corners[k], corners[start], 3) < 0)
                start = k;
        for (k = 0; k < 3; k++)
            memcpy(tris + (size_t)TRI * i + CORNER * k, corners[(start + k) % 3], sizeof corners[0]);
    }
    qsort(tris, mi.triangle_count, sizeof(float) * TRI, cmp_tri);
    free(pos);
    free(nrm);
    *out = tris;
    return mi.triangle_count;
}

/* Same meshes (shader, triangles) and frames (names, skinned triangles) in both models. */
static void compare_models(const ossa_model *a, const ossa_model *b)
{
    ossa_model_info ia, ib;
    uint32_t mesh, frame;
    CHECK_OK(ossa_model_get_info(a, &ia));
    CHECK_OK(ossa_model_get_info(b, &ib));
    CHECK_EQ_U(ib.format, OSSA_FORMAT_DPM);
    CHECK_EQ_U(ib.mesh_count, ia.mesh_count);
    CHECK_EQ_U(ib.frame_count, ia.frame_count);
    CHECK_EQ_U(ib.triangle_count, ia.triangle_count);
    CHECK_EQ_U(ib.max_influences, ia.max_influences);
    if (ia.mesh_count != ib.mesh_count || ia.frame_count != ib.frame_count)
        return;
    for (frame = 0; frame < ia.frame_count; frame++) {
        ossa_frame_info fa, fb;
        CHECK_OK(ossa_model_get_frame(a, frame, &fa));
        CHECK_OK(ossa_model_get_frame(b, frame, &fb));
        CHECK_STR(fb.name, fa.name);
    }
    for (mesh = 0; mesh < ia.mesh_count; mesh++) {
        ossa_mesh_info ma, mb;
        CHECK_OK(ossa_model_get_mesh(a, mesh, &ma));
        CHECK_OK(ossa_model_get_mesh(b, mesh, &mb));
        CHECK_STR(mb.shader, ma.shader);
        for (frame = 0; frame < ia.frame_count; frame++) {
            float *ta, *tb;
            uint32_t na = triangle_list(a, mesh, frame, &ta), nb = triangle_list(b, mesh, frame, &tb), i;
            size_t worst = 0;
            double worst_diff = 0;
            check_context("mesh %u frame %u", (unsigned)mesh, (unsigned)frame);
            CHECK_EQ_U(nb, na);
            CHECK(ta != NULL && tb != NULL);
            if (na == nb && ta && tb) {
                for (i = 0; i < TRI * na; i++) {
                    double d = fabs((double)ta[i] - tb[i]) / (fabs(ta[i]) > 1 ? fabs(ta[i]) : 1);
                    if (!(d <= worst_diff)) {
                        worst_diff = d;
                        worst = i;
                    }
                }
                if (!CHECK(worst_diff <= 1e-5))
                    fprintf(stderr, "    triangle %u float %u: %g vs %g\n", (unsigned)(worst / TRI),
                            (unsigned)(worst % TRI), ta[worst], tb[worst]);
            }
            free(ta);
            free(tb);
        }
    }
    check_context(NULL);
}

static void round_trip(const fx_model *fx, const char *what)
{
    fx_buf dpm = {NULL, 0, 0};
    ossa_model *model = NULL, *back = NULL;
    sink s;
    ossa_error err;

    memset(&s, 0, sizeof s);
    fx_write_dpm(fx, &dpm, NULL);
    check_context("%s", what);
    CHECK_OK(ossa_load_memory(dpm.data, dpm.size, NULL, &model, NULL));
    if (model == NULL) {
        fx_buf_free(&dpm);
        return;
    }
    CHECK_OK(ossa_save(model, OSSA_FORMAT_DPM, 0, collect, &s, &err));
    CHECK(s.calls > 0);
    CHECK(s.bytes.size >= FX_HEADER_SIZE);
    if (s.bytes.size >= FX_HEADER_SIZE) {
        /* The saved header, read independently of ossa. */
        CHECK(memcmp(s.bytes.data, "DARKPLACESMODEL", 16) == 0);
        CHECK_EQ_U(fx_get_u32(s.bytes.data + FX_HDR_TYPE), 2);
        CHECK_EQ_U(fx_get_u32(s.bytes.data + FX_HDR_FILESIZE), s.bytes.size);
        CHECK_EQ_U(fx_get_u32(s.bytes.data + FX_HDR_NUM_MESHES), fx->mesh_count);
        CHECK_EQ_U(fx_get_u32(s.bytes.data + FX_HDR_NUM_FRAMES), fx->frame_count);
    }
    CHECK_OK(ossa_load_memory(s.bytes.data, s.bytes.size, NULL, &back, &err));
    if (back) {
        CHECK_EQ_U(ossa_model_warning_count(back), 0);
        compare_models(model, back);

        /* Saving is repeatable: the same model gives the same bytes. */
        {
            sink again;
            memset(&again, 0, sizeof again);
            CHECK_OK(ossa_save(model, OSSA_FORMAT_DPM, 0, collect, &again, NULL));
            CHECK(again.bytes.size == s.bytes.size &&
                  memcmp(again.bytes.data, s.bytes.data, s.bytes.size) == 0);
            fx_buf_free(&again.bytes);
        }
        ossa_model_free(back);
    }
    check_context(NULL);
    fx_buf_free(&s.bytes);
    ossa_model_free(model);
    fx_buf_free(&dpm);
}

static void test_errors(void)
{
    fx_model small;
    fx_buf dpm = {NULL, 0, 0};
    ossa_model *model = NULL;
    sink s;
    ossa_error err;
    uint32_t format, r;

    fx_make_small(&small);
    fx_write_dpm(&small, &dpm, NULL);
    CHECK_OK(ossa_load_memory(dpm.data, dpm.size, NULL, &model, NULL));
    if (model == NULL)
        goto out;
    memset(&s, 0, sizeof s);

    CHECK_RESULT(ossa_save(NULL, OSSA_FORMAT_DPM, 0, collect, &s, &err), OSSA_ERR_NULL_ARGUMENT);
    CHECK_RESULT(err.result, OSSA_ERR_NULL_ARGUMENT);
    CHECK_RESULT(ossa_save(model, OSSA_FORMAT_DPM, 0, NULL, &s, &err), OSSA_ERR_NULL_ARGUMENT);
    CHECK_EQ_U(s.calls, 0);

    /* The callback's error stops saving and comes back. */
    s.fail_with = OSSA_ERR_IO;
    memset(&err, 0, sizeof err);
    CHECK_RESULT(ossa_save(model, OSSA_FORMAT_DPM, 0, collect, &s, &err), OSSA_ERR_IO);
    CHECK_RESULT(err.result, OSSA_ERR_IO);
    CHECK(err.message[0] != '\0');
    CHECK_EQ_U(s.calls, 1);
    s.fail_with = OSSA_OK;

    /* `user` is passed through as it is, NULL included. */
    null_user_bytes = 0;
    CHECK_OK(ossa_save(model, OSSA_FORMAT_DPM, 0, count_bytes, NULL, NULL));
    CHECK(null_user_bytes >= FX_HEADER_SIZE);

    /* Other formats: not saved yet (UNSUPPORTED, nothing written) or, once they are, saved. */
    for (format = OSSA_FORMAT_SKM; format <= OSSA_FORMAT_DMF_JSON; format++) {
        sink other;
        memset(&other, 0, sizeof other);
        check_context("save as format %u", (unsigned)format);
        r = ossa_save(model, format, 0, collect, &other, &err);
        CHECK(r == OSSA_ERR_UNSUPPORTED || r == OSSA_OK);
        if (r == OSSA_ERR_UNSUPPORTED) {
            CHECK_EQ_U(other.calls, 0);
            CHECK_RESULT(err.result, r);
        }
        fx_buf_free(&other.bytes);
    }
    /* glTF: a GLB container (magic, version 2, its own length) and JSON; both load back, with
       the model's bones. */
    {
        sink glb, gltf;
        const uint8_t *b;
        memset(&glb, 0, sizeof glb);
        memset(&gltf, 0, sizeof gltf);
        check_context("save as glTF");
        CHECK_OK(ossa_save(model, OSSA_FORMAT_GLB, 0, collect, &glb, &err));
        b = glb.bytes.data;
        CHECK(glb.bytes.size > 20 && memcmp(b, "glTF", 4) == 0 && memcmp(b + 16, "JSON", 4) == 0);
        if (glb.bytes.size > 20) {
            CHECK_EQ_U(b[4] | b[5] << 8 | b[6] << 16 | (uint32_t)b[7] << 24, 2);
            CHECK_EQ_U(b[8] | b[9] << 8 | b[10] << 16 | (uint32_t)b[11] << 24, glb.bytes.size);
        }
        CHECK_OK(ossa_save(model, OSSA_FORMAT_GLTF, 0, collect, &gltf, &err));
        CHECK(gltf.bytes.size > 0 && gltf.bytes.data[0] == '{');
        {
            ossa_model *back = NULL;
            ossa_model_info a, bk;
            CHECK_OK(ossa_load_memory(glb.bytes.data, glb.bytes.size, NULL, &back, &err));
            if (back) {
                ossa_model_get_info(model, &a);
                ossa_model_get_info(back, &bk);
                CHECK_EQ_U(bk.bone_count, a.bone_count);
                ossa_model_free(back);
            }
            back = NULL;
            CHECK_OK(ossa_load_memory(gltf.bytes.data, gltf.bytes.size, NULL, &back, &err));
            ossa_model_free(back);
        }
        CHECK_STR(ossa_format_name(OSSA_FORMAT_GLB), "OSSA_FORMAT_GLB");
        CHECK_STR(ossa_format_name(OSSA_FORMAT_GLTF), "OSSA_FORMAT_GLTF");
        fx_buf_free(&glb.bytes);
        fx_buf_free(&gltf.bytes);
    }
    check_context("save as AUTO / unknown formats");
    s.calls = 0;
    r = ossa_save(model, OSSA_FORMAT_AUTO, 0, collect, &s, NULL);
    CHECK(r == OSSA_ERR_INVALID_ARGUMENT || r == OSSA_ERR_UNSUPPORTED);
    r = ossa_save(model, 999, 0, collect, &s, NULL);
    CHECK(r == OSSA_ERR_INVALID_ARGUMENT || r == OSSA_ERR_UNSUPPORTED);
    CHECK_EQ_U(s.calls, 0);
    check_context(NULL);
    fx_buf_free(&s.bytes);
    ossa_model_free(model);
out:
    fx_buf_free(&dpm);
    fx_model_free(&small);
}

int main(void)
{
    fx_model small, big;

    fx_make_small(&small);
    round_trip(&small, "small model");
    fx_model_free(&small);
    fx_make_big(&big, 1500, 99);
    round_trip(&big, "generated model");
    fx_model_free(&big);
    test_errors();
    return check_finish("test_save");
}
