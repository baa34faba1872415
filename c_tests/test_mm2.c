/* Midtown Madness 2 pedestrians through the C ABI: a .skel and a .mod written here line by line
 * from the format's documents, loaded from memory and through a callback filesystem, joined with
 * ossa_model_bind or found as the .mod's sidecar, posed with caller-made local matrices through
 * ossa_pose_concat, skinned with ossa_skin_mesh, and saved back with ossa_save.
 *
 * 1. The documented skeleton (Mm2kiwi "Pedestrian skeleton"): the head at the sum of its four
 *    offsets; its `NumBones 3` for four bones is a warning, and an error in strict mode.
 * 2. A two-bone doll, hips at (0, 1, 0) and chest at (0, 1.5, 0.25), and a mesh of two materials
 *    whose positions are relative to their bones (`mtxv 2 2`).
 * 3. The same doll found beside the mesh by ossa_load_file and ossa_load_memory through io.
 * 4. Vertex colours: each corner's `c` record as 4 bytes through ossa_mesh_colors, kept by a save
 *    and a load; a file without `c` records has none.
 * 5. Errors carry their line; a mesh bound to a skeleton of another bone count is a mismatch;
 *    saving gives the files' text back. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fixture.h"
#include "memfs.h"

static const char SEED[] = "NumBones 3\n"
                           "bone root {\n"
                           "   offset 0.000570 1.109821 -0.000000\n"
                           "   bone spine {\n"
                           "      offset 0.000000 0.034733 -0.000000\n"
                           "      bone neck {\n"
                           "         offset 0.000000 0.329534 -0.000000\n"
                           "         bone head {\n"
                           "            offset 0.000000 0.107686 -0.000000\n"
                           "         }\n"
                           "      }\n"
                           "   }\n"
                           "}\n";

/* What the writer gives for SEED: the bones counted, CRLF lines. */
static const char SEED_WRITTEN[] = "NumBones 4\r\n"
                                   "bone root {\r\n"
                                   "   offset 0.000570 1.109821 -0.000000\r\n"
                                   "   bone spine {\r\n"
                                   "      offset 0.000000 0.034733 -0.000000\r\n"
                                   "      bone neck {\r\n"
                                   "         offset 0.000000 0.329534 -0.000000\r\n"
                                   "         bone head {\r\n"
                                   "            offset 0.000000 0.107686 -0.000000\r\n"
                                   "         }\r\n"
                                   "      }\r\n"
                                   "   }\r\n"
                                   "}\r\n";

static const char DOLL_SKEL[] = "NumBones 2\n"
                                "bone hips {\n"
                                "\toffset 0 1 0\n"
                                "\tbone chest {\n"
                                "\t\toffset 0 0.5 0.25\n"
                                "\t}\n"
                                "}\n";

/* Material legs: corners 0..3, one triangle; torso: corners 3..7, a strip (3 4 5), (5 4 6) and a
   triangle. Positions 0, 1 are the hips', 2, 3 the chest's. */
static const char DOLL_MOD[] = "version: 1.09\n"
                               "verts: 4\nnormals: 2\ncolors: 1\ntex1s: 2\ntex2s: 0\ntangents: 0\n"
                               "materials: 2\nadjuncts: 7\nprimitives: 3\nmatrices: 2\n"
                               "v 0.5 0 0\nv -0.5 0 0\nv 0 0.25 0\nv 0 0 0.5\n"
                               "n 0 0 1\nn 0 1 0\n"
                               "c 1 1 1 1\n"
                               "t1 0 0\nt1 1 1\n"
                               "mtl doll:legs {\n\tadjuncts: 3\n\tprimitives: 1\n}\n"
                               "mtl doll:torso {\n\tadjuncts: 4\n\tprimitives: 2\n"
                               "\ttexture: 0 \"torso skin\"\n}\n"
                               "adj 0 0 0 0 0\nadj 1 0 0 1 0\nadj 2 1 0 0 0\n"
                               "adj 0 0 0 0 0\nadj 2 1 0 1 0\nadj 3 1 0 1 0\nadj 1 0 0 0 0\n"
                               "tri 0 1 2\n"
                               "str 4 3 4 5 6\n"
                               "tri 6 5 3\n"
                               "mtxv 2 2\n"
                               "mtxn 1 1\n";

/* The line of DOLL_MOD's `tri 0 1 2`. */
#define DOLL_TRI_LINE 37

static ossa_load_options options(uint32_t format, uint32_t flags)
{
    ossa_load_options opt;
    ossa_load_options_init(&opt);
    opt.format = format;
    opt.flags = flags;
    return opt;
}

static uint32_t load_text(const char *text, const ossa_load_options *opt, ossa_model **out, ossa_error *err)
{
    return ossa_load_memory((const uint8_t *)text, strlen(text), opt, out, err);
}

/* Mesh `mesh` of `model` skinned with `bones` into `pos` (3 floats per vertex, room for `max`). */
static uint32_t skin(const ossa_model *model, uint32_t mesh, const ossa_mat3x4 *bones, size_t bone_count,
                     float *pos, uint32_t max)
{
    ossa_mesh_info info;
    ossa_skin_target target;
    uint32_t r = ossa_model_get_mesh(model, mesh, &info);
    if (r != OSSA_OK || info.vertex_count > max)
        return r != OSSA_OK ? r : OSSA_ERR_INVALID_ARGUMENT;
    memset(&target, 0, sizeof target);
    target.positions = pos;
    target.position_stride = 12;
    target.position_bytes = (size_t)max * 12;
    return ossa_skin_mesh(model, mesh, bones, bone_count, 0, info.vertex_count, 0, &target);
}

static void check_point(const float *p, double x, double y, double z)
{
    CHECK_NEAR(p[0], x, 1e-6);
    CHECK_NEAR(p[1], y, 1e-6);
    CHECK_NEAR(p[2], z, 1e-6);
}

/* ---- 1. the documented skeleton ---- */

static void test_documented_skeleton(void)
{
    ossa_load_options opt = options(OSSA_FORMAT_AUTO, 0);
    ossa_model *skel = NULL;
    ossa_model_info info;
    ossa_error err;
    ossa_frame_blend rest = {0, 1.0f};
    ossa_mat3x4 bones[4];
    fx_buf saved = {0};
    int32_t head;

    check_context("documented skeleton");
    opt.name = "anim/pedmodel_woman.skel";
    if (!CHECK_OK(load_text(SEED, &opt, &skel, &err)))
        return;
    CHECK_OK(ossa_model_get_info(skel, &info));
    CHECK_EQ_U(info.format, OSSA_FORMAT_MM2_SKEL);
    CHECK_EQ_U(info.bone_count, 4);
    CHECK_EQ_U(info.frame_count, 1);
    CHECK_EQ_U(info.mesh_count, 0);
    CHECK_EQ_U(info.up_axis, 1);
    CHECK_EQ_I(info.handedness, 1);
    CHECK_EQ_U(ossa_model_warning_count(skel), 1);
    CHECK_MESSAGE(ossa_model_warning(skel, 0), "pedmodel_woman.skel line 1: NumBones says 3, the file has 4 bones");
    head = ossa_model_find_bone(skel, "head");
    CHECK_EQ_I(head, 3);
    CHECK_OK(ossa_pose_frames(skel, &rest, 1, NULL, bones, 4));
    if (head == 3) {
        /* 1.109821 + 0.034733 + 0.329534 + 0.107686 */
        CHECK_NEAR(bones[3].m[3], 0.000570, 1e-6);
        CHECK_NEAR(bones[3].m[7], 1.581774, 1e-6);
        CHECK_NEAR(bones[3].m[11], 0.0, 1e-6);
        CHECK_NEAR(bones[3].m[0], 1.0, 0.0);
        CHECK_NEAR(bones[3].m[1], 0.0, 0.0);
    }
    CHECK_OK(ossa_save(skel, OSSA_FORMAT_MM2_SKEL, 0, fx_collect, &saved, &err));
    CHECK_EQ_U(saved.size, strlen(SEED_WRITTEN));
    CHECK(saved.size == strlen(SEED_WRITTEN) && memcmp(saved.data, SEED_WRITTEN, saved.size) == 0);
    fx_buf_free(&saved);
    ossa_model_free(skel);

    /* Strict mode rejects the count, on its line. */
    opt = options(OSSA_FORMAT_MM2_SKEL, OSSA_LOAD_STRICT);
    skel = NULL;
    CHECK_RESULT(load_text(SEED, &opt, &skel, &err), OSSA_ERR_MALFORMED);
    CHECK(skel == NULL);
    CHECK_EQ_U(err.line, 1);
    CHECK_EQ_U(err.offset, UINT64_MAX);
    CHECK_MESSAGE(err.message, "NumBones says 3");
    check_context(NULL);
}

/* ---- 2. binding and posing ---- */

/* The doll's seven vertices (legs 0..3, torso 0..4) at rest and with the chest bent, worked
   out by hand: a position plus its bone's joint, hips (0, 1, 0) or chest (0, 1.5, 0.25). */
static const double at_rest[7][3] = {
    {0.5, 1.0, 0.0}, {-0.5, 1.0, 0.0}, {0.0, 1.75, 0.25},                   /* legs */
    {0.5, 1.0, 0.0}, {0.0, 1.75, 0.25}, {0.0, 1.5, 0.75}, {-0.5, 1.0, 0.0}, /* torso */
};
static const double bent[7][3] = {
    {0.5, 1.0, 0.0}, {-0.5, 1.0, 0.0}, {0.0, 1.5, 0.5},
    {0.5, 1.0, 0.0}, {0.0, 1.5, 0.5},  {0.0, 1.0, 0.25}, {-0.5, 1.0, 0.0},
};

/* Poses the doll with `local` through ossa_pose_concat, skins both meshes and compares. */
static void pose_and_check(const ossa_model *doll, const ossa_mat3x4 *local, const double want[7][3])
{
    ossa_mat3x4 bones[2];
    float pos[3 * 8];
    uint32_t first[2] = {0, 3}, count[2] = {3, 4}, mesh, v;

    CHECK_OK(ossa_pose_concat(doll, local, NULL, bones, 2));
    for (mesh = 0; mesh < 2; mesh++) {
        if (!CHECK_OK(skin(doll, mesh, bones, 2, pos, 8)))
            continue;
        for (v = 0; v < count[mesh]; v++)
            check_point(pos + 3 * v, want[first[mesh] + v][0], want[first[mesh] + v][1], want[first[mesh] + v][2]);
    }
}

/* Checks a bound doll, at rest and bent, then frees it; NULL (a failed load) is left alone. */
static void check_doll_and_free(ossa_model **model)
{
    const ossa_model *doll = *model;
    ossa_model_info info;
    ossa_mat3x4 local[2];
    size_t i;

    if (doll == NULL)
        return;

    CHECK_OK(ossa_model_get_info(doll, &info));
    CHECK_EQ_U(info.flags & OSSA_MODEL_UNBOUND, 0);
    CHECK_EQ_U(info.bone_count, 2);
    CHECK_EQ_U(info.vertex_count, 7);
    CHECK_EQ_U(info.triangle_count, 4);
    CHECK_EQ_U(info.max_influences, 1);

    /* The rest pose from caller-made locals: translations only. */
    for (i = 0; i < 2; i++) {
        memset(&local[i], 0, sizeof local[i]);
        local[i].m[0] = local[i].m[5] = local[i].m[10] = 1.0f;
    }
    local[0].m[7] = 1.0f;
    local[1].m[7] = 0.5f;
    local[1].m[11] = 0.25f;
    pose_and_check(doll, local, at_rest);

    /* The chest turned 90 degrees about x at its joint: (x, y, z) -> (x, -z, y). */
    local[1].m[5] = 0.0f;
    local[1].m[6] = -1.0f;
    local[1].m[9] = 1.0f;
    local[1].m[10] = 0.0f;
    pose_and_check(doll, local, bent);
    ossa_model_free(*model);
    *model = NULL;
}

static void test_bind_and_pose(void)
{
    ossa_load_options opt = options(OSSA_FORMAT_MM2_MOD, 0);
    ossa_model *mesh = NULL, *skel = NULL, *doll = NULL, *reloaded = NULL;
    ossa_model_info info;
    ossa_mesh_info m;
    ossa_error err;
    fx_buf saved = {0};
    static const uint32_t torso[] = {0, 1, 2, 2, 1, 3, 3, 2, 0};

    check_context("bind and pose");
    if (!CHECK_OK(load_text(DOLL_MOD, &opt, &mesh, &err)))
        return;
    CHECK_OK(ossa_model_get_info(mesh, &info));
    CHECK_EQ_U(info.format, OSSA_FORMAT_MM2_MOD);
    CHECK_EQ_U(info.flags & OSSA_MODEL_UNBOUND, OSSA_MODEL_UNBOUND);
    CHECK_EQ_U(info.mesh_count, 2);
    CHECK_OK(ossa_model_get_mesh(mesh, 1, &m));
    CHECK_STR(m.name, "doll:torso");
    CHECK_STR(m.shader, "torso skin");
    CHECK_EQ_U(m.vertex_count, 4);
    CHECK_EQ_U(m.triangle_count, 3);
    CHECK(m.triangle_count == 3 && memcmp(m.indices, torso, sizeof torso) == 0);
    CHECK(m.texcoords != NULL && m.texcoords[2] == 1.0f && m.texcoords[3] == 1.0f);
    CHECK_OK(ossa_model_get_mesh(mesh, 0, &m));
    CHECK_STR(m.shader, "doll:legs");

    opt = options(OSSA_FORMAT_MM2_SKEL, OSSA_LOAD_STRICT);
    CHECK_OK(load_text(DOLL_SKEL, &opt, &skel, &err));
    CHECK_OK(ossa_model_bind(mesh, skel, &doll, &err));
    /* Both inputs may go first. */
    ossa_model_free(mesh);
    ossa_model_free(skel);
    if (doll == NULL)
        return;

    /* Saved and loaded again, the mesh binds the same way. */
    CHECK_OK(ossa_save(doll, OSSA_FORMAT_MM2_MOD, 0, fx_collect, &saved, &err));
    opt = options(OSSA_FORMAT_AUTO, OSSA_LOAD_STRICT);
    CHECK_OK(ossa_load_memory(saved.data, saved.size, &opt, &reloaded, &err));
    if (reloaded != NULL) {
        CHECK_OK(ossa_model_get_info(reloaded, &info));
        CHECK_EQ_U(info.format, OSSA_FORMAT_MM2_MOD);
        CHECK_EQ_U(info.vertex_count, 7);
        ossa_model_free(reloaded);
    }
    fx_buf_free(&saved);
    check_doll_and_free(&doll);
    check_context(NULL);
}

/* ---- 3. the skeleton beside the mesh ---- */

static void test_sidecar(void)
{
    mem_fs fs;
    ossa_load_options opt = options(OSSA_FORMAT_AUTO, 0);
    ossa_model *doll = NULL;
    ossa_error err;

    check_context("sidecar");
    fs_init(&fs);
    fs_add_text(&fs, "anim/pedmodel_doll.mod", DOLL_MOD);
    fs_add_text(&fs, "anim/pedmodel_doll.skel", DOLL_SKEL);
    fs_add_text(&fs, "anim/pedmodel_cat.mod", DOLL_MOD);
    opt.io = &fs.io;

    CHECK_OK(ossa_load_file("anim/pedmodel_doll.mod", &opt, &doll, &err));
    CHECK_ASKED(&fs, "anim/pedmodel_doll.mod", "anim/pedmodel_doll.skel", NULL);
    CHECK_RELEASED(&fs);
    check_doll_and_free(&doll);
    fs_reset(&fs);

    opt.name = "anim/pedmodel_doll.mod";
    CHECK_OK(load_text(DOLL_MOD, &opt, &doll, &err));
    CHECK_ASKED(&fs, "anim/pedmodel_doll.skel", NULL);
    CHECK_RELEASED(&fs);
    check_doll_and_free(&doll);
    fs_reset(&fs);

    opt.name = NULL;
    CHECK_RESULT(ossa_load_file("anim/pedmodel_cat.mod", &opt, &doll, &err), OSSA_ERR_NOT_FOUND);
    CHECK(doll == NULL);
    CHECK_MESSAGE(err.message, "anim/pedmodel_cat.skel does not exist");
    CHECK_ASKED(&fs, "anim/pedmodel_cat.mod", "anim/pedmodel_cat.skel", NULL);
    CHECK_RELEASED(&fs);
    check_context(NULL);
}

/* ---- 4. vertex colours ---- */

/* One bone, one material, three corners: the header's colour count, the `c` records, and the
   colour indices of corners 0 and 2 (corner 1 names colour 0). */
#define PAINT(count, records, c0, c2)                                                                 \
    "version: 1.09\n"                                                                                 \
    "verts: 3\nnormals: 1\ncolors: " count "\ntex1s: 0\ntex2s: 0\ntangents: 0\n"                      \
    "materials: 1\nadjuncts: 3\nprimitives: 1\nmatrices: 1\n"                                         \
    "v 0 0 0\nv 1 0 0\nv 0 1 0\n"                                                                     \
    "n 0 0 1\n" records "mtl paint {\n\tadjuncts: 3\n\tprimitives: 1\n}\n"                            \
    "adj 0 0 " c0 " 0 0\nadj 1 0 0 0 0\nadj 2 0 " c2 " 0 0\n"                                         \
    "tri 0 1 2\n"                                                                                     \
    "mtxv 3\n"                                                                                        \
    "mtxn 1\n"

/* Corners 0 and 2 name colour 1: `0.5 * 255 = 127.5` rounds away from 0, 1.5 and -0.25 are
   clamped. */
static const char PAINT_MOD[] = PAINT("2", "c 1 0 0 1\nc 0.5 1.5 -0.25 0.2\n", "1", "1");
/* No `c` records: the corners' colour index is 0, into the empty list. */
static const char PLAIN_MOD[] = PAINT("0", "", "0", "0");

static const uint8_t PAINT_COLORS[12] = {128, 255, 0, 51, 255, 0, 0, 255, 128, 255, 0, 51};

static void check_paint(const ossa_model *model)
{
    const uint8_t *c = ossa_mesh_colors(model, 0);
    if (CHECK(c != NULL))
        CHECK(memcmp(c, PAINT_COLORS, sizeof PAINT_COLORS) == 0);
    CHECK(ossa_mesh_colors(model, 1) == NULL);
}

static void test_colours(void)
{
    ossa_load_options opt = options(OSSA_FORMAT_MM2_MOD, OSSA_LOAD_STRICT);
    ossa_model *model = NULL, *reloaded = NULL;
    ossa_error err;
    fx_buf saved = {0};

    check_context("colours");
    if (!CHECK_OK(load_text(PAINT_MOD, &opt, &model, &err)))
        return;
    check_paint(model);
    /* Saved, each distinct colour is written once as k / 255 (128 / 255 in the shortest form that
       reads back exactly) and read back as the same bytes. */
    CHECK_OK(ossa_save(model, OSSA_FORMAT_MM2_MOD, 0, fx_collect, &saved, &err));
    fx_put_bytes(&saved, "", 1);
    CHECK(strstr((const char *)saved.data, "colors: 2\r\n") != NULL);
    CHECK(strstr((const char *)saved.data, "\r\nc\t0.5019608\t1.000000\t0.000000\t0.200000\r\n"
                                           "c\t1.000000\t0.000000\t0.000000\t1.000000\r\n") != NULL);
    CHECK_OK(ossa_load_memory(saved.data, saved.size - 1, &opt, &reloaded, &err));
    if (reloaded != NULL) {
        check_paint(reloaded);
        ossa_model_free(reloaded);
    }
    fx_buf_free(&saved);
    ossa_model_free(model);

    /* The doll's one colour is white. */
    opt = options(OSSA_FORMAT_MM2_MOD, 0);
    if (CHECK_OK(load_text(DOLL_MOD, &opt, &model, &err))) {
        const uint8_t *c = ossa_mesh_colors(model, 1);
        size_t i;
        if (CHECK(c != NULL))
            for (i = 0; i < 4 * 4; i++)
                CHECK_EQ_U(c[i], 255);
        ossa_model_free(model);
    }

    /* Without `c` records, none. */
    opt = options(OSSA_FORMAT_MM2_MOD, OSSA_LOAD_STRICT);
    if (CHECK_OK(load_text(PLAIN_MOD, &opt, &model, &err))) {
        CHECK(ossa_mesh_colors(model, 0) == NULL);
        ossa_model_free(model);
    }
    check_context(NULL);
}

/* ---- 5. errors ---- */

static void test_errors(void)
{
    ossa_load_options opt = options(OSSA_FORMAT_MM2_MOD, 0);
    ossa_model *model = NULL;
    ossa_error err;
    char *text = malloc(sizeof DOLL_MOD);
    char *tri;

    check_context("errors");
    if (text == NULL)
        return;
    memcpy(text, DOLL_MOD, sizeof DOLL_MOD);
    tri = strstr(text, "tri 0 1 2");
    if (CHECK(tri != NULL)) {
        tri[8] = '3'; /* corner 3 is the torso's */
        CHECK_RESULT(load_text(text, &opt, &model, &err), OSSA_ERR_MALFORMED);
        CHECK(model == NULL);
        CHECK_EQ_U(err.line, DOLL_TRI_LINE);
        CHECK_MESSAGE(err.message, "is not one of material 0's adjuncts 0..3");
        tri[8] = 'x';
        CHECK_RESULT(load_text(text, &opt, &model, &err), OSSA_ERR_MALFORMED);
        CHECK_EQ_U(err.line, DOLL_TRI_LINE);
        CHECK_MESSAGE(err.message, "found `x`");
    }
    free(text);

    opt = options(OSSA_FORMAT_MM2_SKEL, 0);
    CHECK_RESULT(load_text("NumBones 1\nbone a {\n  offset 0 0 0\n", &opt, &model, &err), OSSA_ERR_TRUNCATED);
    CHECK_EQ_U(err.line, 2);
    CHECK_MESSAGE(err.message, "bone `a` is never closed");
    CHECK_RESULT(load_text("NumBones 1\nbone a {\n}\n}\n", &opt, &model, &err), OSSA_ERR_MALFORMED);
    CHECK_EQ_U(err.line, 2);
    CHECK_MESSAGE(err.message, "bone `a` has no offset");
    CHECK(model == NULL);

    /* The doll's mesh (`matrices: 2`) on the documented four-bone skeleton: the counts differ,
       so binding by index cannot be right, and the message gives both counts. */
    {
        ossa_model *mesh = NULL, *skel = NULL, *bound = NULL;
        opt = options(OSSA_FORMAT_MM2_MOD, OSSA_LOAD_STRICT);
        CHECK_OK(load_text(DOLL_MOD, &opt, &mesh, &err));
        opt = options(OSSA_FORMAT_MM2_SKEL, 0);
        CHECK_OK(load_text(SEED, &opt, &skel, &err));
        if (mesh != NULL && skel != NULL) {
            CHECK_RESULT(ossa_model_bind(mesh, skel, &bound, &err), OSSA_ERR_MISMATCH);
            CHECK(bound == NULL);
            CHECK_RESULT(err.result, OSSA_ERR_MISMATCH);
            CHECK_MESSAGE(err.message, "the meshes use 2 bones");
            CHECK_MESSAGE(err.message, "skeleton has 4");
            /* The same mesh binds to the doll's own two bones. */
            ossa_model_free(skel);
            skel = NULL;
            opt = options(OSSA_FORMAT_MM2_SKEL, OSSA_LOAD_STRICT);
            CHECK_OK(load_text(DOLL_SKEL, &opt, &skel, &err));
            if (skel != NULL) {
                CHECK_OK(ossa_model_bind(mesh, skel, &bound, &err));
                ossa_model_free(bound);
            }
        }
        ossa_model_free(mesh);
        ossa_model_free(skel);
    }
    check_context(NULL);
}

int main(void)
{
    test_documented_skeleton();
    test_bind_and_pose();
    test_sidecar();
    test_colours();
    test_errors();
    return check_finish("test_mm2");
}
