/* Real DPM files from $OSSA_CORPUS/dpm (default ../shared/corpus/dpm): every file loads, its frame 0
   skins to finite vertices inside the bind bounds and equal to an independent evaluation of the file,
   and truncated copies fail cleanly. Skips (and says so) when the corpus is absent. */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fixture.h"

#define TRUNCATIONS 40

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static float be_f32(const uint8_t *p)
{
    uint32_t u = fx_get_u32(p);
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* Model-space matrices of `frame`, read straight from the file bytes (the file is known to load, so
   offsets are in range). */
static void file_pose(const fx_buf *file, uint32_t frame, double *bones)
{
    const uint8_t *d = file->data;
    uint32_t nb = fx_get_u32(d + FX_HDR_NUM_BONES), b;
    uint32_t frames = fx_get_u32(d + FX_HDR_OFS_FRAMES);
    uint32_t poses = fx_get_u32(d + frames + FX_FRAME_SIZE * frame + FX_FRAME_OFS_POSES);
    double id[12];
    fx_m34_identity(id);
    for (b = 0; b < nb; b++) {
        int32_t parent = (int32_t)fx_get_u32(d + fx_get_u32(d + FX_HDR_OFS_BONES) + FX_BONE_SIZE * b + FX_BONE_PARENT);
        double local[12];
        int i;
        for (i = 0; i < 12; i++)
            local[i] = be_f32(d + poses + FX_POSE_SIZE * b + 4 * i);
        fx_m34_mul(parent < 0 ? id : bones + 12 * parent, local, bones + 12 * b);
    }
}

/* Expected positions of one mesh from the file bytes: p = sum_k (R_k o_k + f_k t_k). */
static void file_skin(const fx_buf *file, uint32_t mesh, const double *bones, double *out)
{
    const uint8_t *d = file->data;
    const uint8_t *mh = d + fx_get_u32(d + FX_HDR_OFS_MESHES) + FX_MESH_SIZE * mesh;
    uint32_t nv = fx_get_u32(mh + FX_MESH_NUM_VERTS), v, k;
    const uint8_t *p = d + fx_get_u32(mh + 40);
    for (v = 0; v < nv; v++) {
        uint32_t n = fx_get_u32(p);
        double sum[3] = {0, 0, 0};
        p += 4;
        for (k = 0; k < n; k++, p += FX_BONEVERT_SIZE) {
            const double *a = bones + 12 * fx_get_u32(p + FX_BONEVERT_BONE);
            double o[3], f = be_f32(p + FX_BONEVERT_INFLUENCE);
            int i;
            for (i = 0; i < 3; i++)
                o[i] = be_f32(p + 4 * i);
            for (i = 0; i < 3; i++)
                sum[i] += a[4 * i] * o[0] + a[4 * i + 1] * o[1] + a[4 * i + 2] * o[2] + f * a[4 * i + 3];
        }
        memcpy(out + 3 * v, sum, sizeof sum);
    }
}

/* Skin every mesh at `frame` with ossa; compare with the file's own evaluation; frame 0 also against
   the bind bounds. */
static void check_frame(const ossa_model *model, const ossa_model_info *info, const fx_buf *file,
                        uint32_t frame)
{
    ossa_mat3x4 *bones = malloc(sizeof *bones * info->bone_count);
    double *want_bones = malloc(sizeof(double) * 12 * info->bone_count);
    ossa_frame_blend blend;
    uint32_t mesh;
    double extent = 1;
    int k;

    for (k = 0; k < 3; k++)
        extent = fmax(extent, (double)info->maxs[k] - info->mins[k]);
    blend.frame = frame;
    blend.weight = 1;
    CHECK_OK(ossa_pose_frames(model, &blend, 1, NULL, bones, info->bone_count));
    file_pose(file, frame, want_bones);
    for (mesh = 0; mesh < info->mesh_count; mesh++) {
        ossa_mesh_info mi;
        ossa_skin_target t;
        float *pos, *nrm;
        double *want;
        uint32_t v, t_i, nonfinite = 0, outside = 0, differ = 0;
        double worst = 0;

        CHECK_OK(ossa_model_get_mesh(model, mesh, &mi));
        if (mi.vertex_count == 0)
            continue;
        for (t_i = 0; t_i < 3 * mi.triangle_count; t_i++)
            if (mi.indices[t_i] >= mi.vertex_count)
                outside++;
        CHECK_EQ_U(outside, 0);
        outside = 0;
        pos = malloc(12 * (size_t)mi.vertex_count);
        nrm = malloc(12 * (size_t)mi.vertex_count);
        want = malloc(sizeof(double) * 3 * mi.vertex_count);
        t.positions = pos;
        t.position_stride = 12;
        t.position_bytes = 12 * (size_t)mi.vertex_count;
        t.normals = nrm;
        t.normal_stride = 12;
        t.normal_bytes = 12 * (size_t)mi.vertex_count;
        CHECK_OK(ossa_skin_mesh(model, mesh, bones, info->bone_count, 0, mi.vertex_count, 0, &t));
        file_skin(file, mesh, want_bones, want);
        for (v = 0; v < mi.vertex_count; v++)
            for (k = 0; k < 3; k++) {
                float p = pos[3 * v + k], n = nrm[3 * v + k];
                double d;
                if (!isfinite(p) || !isfinite(n)) {
                    nonfinite++;
                    continue;
                }
                if (frame == 0 && (p < info->mins[k] - 1e-3 * extent || p > info->maxs[k] + 1e-3 * extent))
                    outside++;
                d = fabs(p - want[3 * v + k]);
                worst = fmax(worst, d);
                if (d > 1e-4 * extent)
                    differ++;
            }
        check_context("mesh %u frame %u", (unsigned)mesh, (unsigned)frame);
        CHECK_EQ_U(nonfinite, 0);
        CHECK_EQ_U(outside, 0);
        if (!CHECK_EQ_U(differ, 0))
            fprintf(stderr, "    largest difference from the file's own evaluation: %g\n", worst);
        check_context(NULL);
        free(pos);
        free(nrm);
        free(want);
    }
    free(bones);
    free(want_bones);
}

static void check_names(const ossa_model *model, const ossa_model_info *info)
{
    uint32_t i;
    for (i = 0; i < info->bone_count; i++) {
        ossa_bone_info b, found;
        int32_t at;
        CHECK_OK(ossa_model_get_bone(model, i, &b));
        CHECK(b.parent < (int32_t)i && b.parent >= -1);
        at = ossa_model_find_bone(model, b.name);
        /* Names may repeat: the one found must carry the same name. */
        CHECK(at >= 0 && (uint32_t)at < info->bone_count);
        if (at >= 0 && ossa_model_get_bone(model, (uint32_t)at, &found) == OSSA_OK)
            CHECK_STR(found.name, b.name);
    }
    for (i = 0; i < info->frame_count; i++) {
        ossa_frame_info f, found;
        int32_t at;
        CHECK_OK(ossa_model_get_frame(model, i, &f));
        at = ossa_model_find_frame(model, f.name);
        CHECK(at >= 0 && (uint32_t)at < info->frame_count);
        if (at >= 0 && ossa_model_get_frame(model, (uint32_t)at, &found) == OSSA_OK)
            CHECK_STR(found.name, f.name);
    }
}

static void check_truncations(const fx_buf *file)
{
    size_t i;
    for (i = 0; i < TRUNCATIONS; i++) {
        /* From just past the id to one byte short, spread evenly. */
        size_t n = 16 + (file->size - 17) * i / (TRUNCATIONS - 1);
        uint8_t *copy = malloc(n);
        ossa_model *out = NULL;
        ossa_error err;
        uint32_t r;
        memcpy(copy, file->data, n);
        r = ossa_load_memory(copy, n, NULL, &out, &err);
        check_context("truncated to %zu of %zu bytes", n, file->size);
        CHECK(r == OSSA_ERR_TRUNCATED || r == OSSA_ERR_MALFORMED);
        if (r == OSSA_OK)
            ossa_model_free(out);
        else
            CHECK_RESULT(err.result, r);
        free(copy);
    }
    check_context(NULL);
}

static void check_file(const char *path, const char *name)
{
    ossa_model *model = NULL;
    ossa_model_info info;
    ossa_error err;
    fx_buf file = {NULL, 0, 0};
    uint32_t r;

    check_context("%s", name);
    r = ossa_load_file(path, NULL, &model, &err);
    if (!CHECK_OK(r)) {
        fprintf(stderr, "    %s\n", err.message);
        check_context(NULL);
        return;
    }
    CHECK(fx_read_file(path, &file) == 0);
    CHECK_OK(ossa_model_get_info(model, &info));
    CHECK_EQ_U(info.format, OSSA_FORMAT_DPM);
    CHECK(info.bone_count > 0);
    CHECK(info.mesh_count > 0);
    CHECK(info.frame_count > 0);
    CHECK(info.vertex_count > 0);
    CHECK(info.triangle_count > 0);
    CHECK(info.max_influences > 0);
    CHECK(info.mins[0] <= info.maxs[0] && info.mins[1] <= info.maxs[1] && info.mins[2] <= info.maxs[2]);
    printf("  %-28s %3u bones %u meshes %4u frames %5u vertices, %u warnings\n", name, (unsigned)info.bone_count,
           (unsigned)info.mesh_count, (unsigned)info.frame_count, (unsigned)info.vertex_count,
           (unsigned)ossa_model_warning_count(model));
    check_names(model, &info);
    check_frame(model, &info, &file, 0);
    if (info.frame_count > 1) {
        check_context("%s, middle frame", name);
        check_frame(model, &info, &file, info.frame_count / 2);
        check_context("%s, last frame", name);
        check_frame(model, &info, &file, info.frame_count - 1);
    }
    check_context("%s", name);
    check_truncations(&file);
    check_context(NULL);
    ossa_model_free(model);
    fx_buf_free(&file);
}

int main(void)
{
    char dir[4096], path[8192];
    char *names[1024];
    size_t count = 0, i;
    DIR *d;
    struct dirent *e;

    snprintf(dir, sizeof dir, "%s/dpm", fx_corpus_dir());
    d = opendir(dir);
    if (d == NULL) {
        printf("corpus not found at %s; skipping corpus checks\n", dir);
        return check_finish("test_corpus");
    }
    while ((e = readdir(d)) != NULL && count < sizeof names / sizeof names[0]) {
        size_t n = strlen(e->d_name);
        if (n > 4 && strcmp(e->d_name + n - 4, ".dpm") == 0) {
            names[count] = malloc(n + 1);
            memcpy(names[count], e->d_name, n + 1);
            count++;
        }
    }
    closedir(d);
    qsort(names, count, sizeof names[0], cmp_names);
    printf("corpus: %u DPM files in %s\n", (unsigned)count, dir);
    CHECK(count > 0);
    for (i = 0; i < count; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        check_file(path, names[i]);
        free(names[i]);
    }
    return check_finish("test_corpus");
}
