/* GPU skinning data: linear blend skinning done here, with the bind-pose vertices, the strongest
 * N influences and the skinning matrices ossa hands out, matches ossa_skin_mesh within 1e-5 of
 * the model's size wherever no vertex has more than N influences. Where some do, the largest
 * difference is reported. Runs on a generated model, and on every corpus DPM and SKM when present. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fixture.h"

static double max_d(double a, double b) { return a > b ? a : b; }

/* Largest difference over every mesh between ossa_skin_mesh and LBS with `per_vertex` influences,
   at a blend of two frames; `*dropped` gets the most influences any vertex lost. */
static double lbs_difference(const ossa_model *model, uint32_t per_vertex, uint32_t *dropped)
{
    ossa_model_info info;
    ossa_mat3x4 *bones, *shader;
    ossa_frame_blend blend[2];
    double worst = 0.0;
    uint32_t mesh;

    *dropped = 0;
    CHECK_OK(ossa_model_get_info(model, &info));
    bones = malloc(sizeof *bones * info.bone_count);
    shader = malloc(sizeof *shader * info.bone_count);
    blend[0].frame = info.frame_count / 3;
    blend[0].weight = 0.6f;
    blend[1].frame = info.frame_count - 1;
    blend[1].weight = 0.4f;
    CHECK_OK(ossa_pose_frames(model, blend, 2, NULL, bones, info.bone_count));
    CHECK_OK(ossa_skinning_matrices(model, bones, shader, info.bone_count));

    for (mesh = 0; mesh < info.mesh_count; mesh++) {
        ossa_mesh_info mi;
        size_t n, v;
        float *bind, *skinned;
        uint16_t *ids;
        float *weights;
        uint32_t lost = 0;
        ossa_skin_target t;

        CHECK_OK(ossa_model_get_mesh(model, mesh, &mi));
        n = mi.vertex_count;
        if (n == 0)
            continue;
        bind = malloc(12 * n);
        skinned = malloc(12 * n);
        ids = malloc(sizeof *ids * n * per_vertex);
        weights = malloc(sizeof *weights * n * per_vertex);
        memset(&t, 0, sizeof t);
        t.positions = bind;
        t.position_stride = 12;
        t.position_bytes = 12 * n;
        CHECK_OK(ossa_mesh_bind_vertices(model, mesh, 0, (uint32_t)n, 0, &t));
        CHECK_OK(ossa_mesh_gpu_weights(model, mesh, per_vertex, ids, weights, n * per_vertex, &lost));
        if (lost > *dropped)
            *dropped = lost;
        t.positions = skinned;
        CHECK_OK(ossa_skin_mesh(model, mesh, bones, info.bone_count, 0, (uint32_t)n, 0, &t));

        for (v = 0; v < n; v++) {
            const float *p = bind + 3 * v;
            double out[3] = {0, 0, 0}, sum = 0;
            uint32_t k;
            for (k = 0; k < per_vertex; k++) {
                const float *m = shader[ids[v * per_vertex + k]].m;
                double w = weights[v * per_vertex + k];
                sum += w;
                out[0] += w * (m[0] * p[0] + m[1] * p[1] + m[2] * p[2] + m[3]);
                out[1] += w * (m[4] * p[0] + m[5] * p[1] + m[6] * p[2] + m[7]);
                out[2] += w * (m[8] * p[0] + m[9] * p[1] + m[10] * p[2] + m[11]);
            }
            CHECK(fabs(sum - 1.0) < 1e-5);
            worst = max_d(worst, fabs(out[0] - skinned[3 * v]));
            worst = max_d(worst, fabs(out[1] - skinned[3 * v + 1]));
            worst = max_d(worst, fabs(out[2] - skinned[3 * v + 2]));
        }
        free(bind);
        free(skinned);
        free(ids);
        free(weights);
    }
    free(bones);
    free(shader);
    return worst;
}

static double model_size(const ossa_model *model)
{
    ossa_model_info info;
    CHECK_OK(ossa_model_get_info(model, &info));
    return max_d(max_d(info.maxs[0] - info.mins[0], info.maxs[1] - info.mins[1]), info.maxs[2] - info.mins[2]);
}

/* Whether the loader warned that some influence sums are not 1: then weights that sum to 1 cannot
   reproduce the stored formula exactly (translations do not scale with the weights). */
static int sums_off(const ossa_model *model)
{
    uint32_t i;
    for (i = 0; i < ossa_model_warning_count(model); i++)
        if (strstr(ossa_model_warning(model, i), "influence sums") != NULL)
            return 1;
    return 0;
}

static void check_model(const ossa_model *model, const char *name)
{
    static const uint32_t counts[] = {4, 8};
    double size = model_size(model);
    int inexact = sums_off(model);
    size_t i;
    for (i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        uint32_t dropped = 0;
        double worst = lbs_difference(model, counts[i], &dropped);
        if (inexact) {
            printf("  %-36s N=%u: influence sums off 1 in the file, largest difference %.3g (size %.3g)\n", name,
                   counts[i], worst, size);
        } else if (dropped == 0) {
            CHECK(worst <= 1e-5 * max_d(size, 1.0));
            printf("  %-36s N=%u: exact, largest difference %.3g (size %.3g)\n", name, counts[i], worst, size);
        } else {
            printf("  %-36s N=%u: up to %u influences dropped, largest difference %.3g (size %.3g)\n", name,
                   counts[i], dropped, worst, size);
        }
    }
}

static void check_errors(const ossa_model *model)
{
    ossa_model_info info;
    uint16_t ids[4];
    float weights[4];
    ossa_mat3x4 m[1];
    CHECK_OK(ossa_model_get_info(model, &info));
    CHECK_RESULT(ossa_mesh_gpu_weights(model, 0, 0, ids, weights, 4, NULL), OSSA_ERR_INVALID_ARGUMENT);
    CHECK_RESULT(ossa_mesh_gpu_weights(model, 0, 9, ids, weights, 4, NULL), OSSA_ERR_INVALID_ARGUMENT);
    CHECK_RESULT(ossa_mesh_gpu_weights(model, 0, 4, ids, weights, 4, NULL), OSSA_ERR_INVALID_ARGUMENT);
    CHECK_RESULT(ossa_mesh_gpu_weights(model, info.mesh_count, 4, ids, weights, 4, NULL), OSSA_ERR_INVALID_ARGUMENT);
    CHECK_RESULT(ossa_mesh_gpu_weights(model, 0, 4, NULL, weights, 4, NULL), OSSA_ERR_NULL_ARGUMENT);
    CHECK_RESULT(ossa_model_inverse_bind(model, m, 1 + info.bone_count), OSSA_ERR_INVALID_ARGUMENT);
    CHECK_RESULT(ossa_skinning_matrices(model, m, m, 1 + info.bone_count), OSSA_ERR_INVALID_ARGUMENT);
    CHECK_RESULT(ossa_model_inverse_bind(NULL, m, 1), OSSA_ERR_NULL_ARGUMENT);
}

static void check_dir(const char *dir, const char *ext)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[8192];
    if (d == NULL) {
        printf("corpus not found at %s; skipping those checks\n", dir);
        return;
    }
    while ((e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name), m = strlen(ext);
        ossa_model *model = NULL;
        ossa_error err;
        if (n <= m || strcmp(e->d_name + n - m, ext) != 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        CHECK_OK(ossa_load_file(path, NULL, &model, &err));
        if (model == NULL) {
            fprintf(stderr, "    %s\n", err.message);
            continue;
        }
        check_model(model, e->d_name);
        ossa_model_free(model);
    }
    closedir(d);
}

int main(void)
{
    fx_model fx;
    fx_buf bytes = {0};
    ossa_model *model = NULL;
    char dir[4096];

    fx_make_big(&fx, 2000, 7);
    fx_write_dpm(&fx, &bytes, NULL);
    CHECK_OK(ossa_load_memory(bytes.data, bytes.size, NULL, &model, NULL));
    if (model) {
        check_model(model, "generated");
        check_errors(model);
        ossa_model_free(model);
    }
    fx_buf_free(&bytes);
    fx_model_free(&fx);

    snprintf(dir, sizeof dir, "%s/dpm", fx_corpus_dir());
    check_dir(dir, ".dpm");
    snprintf(dir, sizeof dir, "%s/skm", fx_corpus_dir());
    check_dir(dir, ".skm");
    return check_finish("test_gpu");
}
