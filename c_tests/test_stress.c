/* Eight threads share one model and each poses (ossa_pose_frames, with a blend that changes every
   iteration) and skins (ossa_skin_mesh) it a thousand times; every pose and every skinned mesh must
   equal, byte for byte, what one thread computed first for the same parameters. Run on the C
   fixture model, and on a corpus DPM when the corpus is there.

   OSSA_TEST_LIGHT=1 (run.sh sets it under valgrind, where threads run one at a time and every
   instruction is slow) cuts the iterations to 25 per thread. */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fixture.h"

#define THREADS 8
#define ITERATIONS 1000
#define LIGHT_ITERATIONS 25
/* Distinct parameter sets. Prime, so that every thread's walk through them (a stride of its own,
   coprime with it) meets each one. */
#define PARAMS 61
/* Interleaved output: position at byte 0, normal at byte 12. */
#define STRIDE 32
#define FILL 0x5a

typedef struct params {
    ossa_frame_blend blends[3];
    size_t blend_count;
    int has_root;
    ossa_mat3x4 root;
    uint32_t mesh, flags;
} params;

typedef struct stress {
    ossa_model *model;
    uint32_t bone_count, mesh_count, max_vertices;
    uint32_t *vertex_counts;
    params p[PARAMS];
    ossa_mat3x4 *want_bones[PARAMS];
    uint8_t *want_vertices[PARAMS];
} stress;

typedef struct worker {
    const stress *s;
    unsigned index, iterations;
    unsigned calls_failed, poses_differ, meshes_differ;
} worker;

/* Parameters of set k: two or three frames with weights that change with k, a root matrix on
   every fourth, each mesh in turn, normalised normals on every other. */
static void make_params(params *p, uint32_t k, uint32_t frame_count, uint32_t mesh_count)
{
    float w = 0.05f + 0.9f * (float)(k % 17) / 16.0f;
    memset(p, 0, sizeof *p);
    p->blends[0].frame = (k * 7) % frame_count;
    p->blends[0].weight = w;
    p->blends[1].frame = (k * 13 + 1) % frame_count;
    p->blends[1].weight = 1.0f - w + 0.01f;
    p->blend_count = 2;
    if (k % 3 == 0) {
        p->blends[2].frame = (k * 3 + 2) % frame_count;
        p->blends[2].weight = 0.25f;
        p->blend_count = 3;
    }
    p->has_root = k % 4 == 1;
    if (p->has_root) {
        float a = 0.1f * (float)k, c = cosf(a), sn = sinf(a);
        const float m[12] = {c, -sn, 0, (float)k, sn, c, 0, -2.0f, 0, 0, 1, 0.5f};
        memcpy(p->root.m, m, sizeof m);
    }
    p->mesh = k % mesh_count;
    p->flags = k % 2 ? OSSA_SKIN_NORMALIZE : 0;
}

/* Pose and skin with parameters p into bones (bone_count) and vertices (the mesh's vertex count
   times STRIDE bytes). */
static uint32_t run_params(const stress *s, const params *p, ossa_mat3x4 *bones, uint8_t *vertices)
{
    const uint32_t n = s->vertex_counts[p->mesh];
    const size_t bytes = (size_t)n * STRIDE;
    ossa_skin_target t;
    uint32_t r = ossa_pose_frames(s->model, p->blends, p->blend_count, p->has_root ? &p->root : NULL, bones,
                                  s->bone_count);
    if (r != OSSA_OK)
        return r;
    t.positions = (float *)(void *)vertices;
    t.position_stride = STRIDE;
    t.position_bytes = bytes;
    t.normals = (float *)(void *)(vertices + 12);
    t.normal_stride = STRIDE;
    t.normal_bytes = bytes < 12 ? 0 : bytes - 12;
    return ossa_skin_mesh(s->model, p->mesh, bones, s->bone_count, 0, n, p->flags, &t);
}

static void *work(void *arg)
{
    worker *w = arg;
    const stress *s = w->s;
    ossa_mat3x4 *bones = malloc((size_t)s->bone_count * sizeof *bones);
    uint8_t *vertices = malloc((size_t)s->max_vertices * STRIDE);
    /* Each thread starts at its own set and walks with its own stride (1 to 8, all coprime with
       PARAMS), so the threads are on different parameters at any moment. */
    uint32_t k = w->index * 7 % PARAMS, step = w->index + 1, it;

    for (it = 0; it < w->iterations; it++, k = (k + step) % PARAMS) {
        const params *p = &s->p[k];
        const size_t bytes = (size_t)s->vertex_counts[p->mesh] * STRIDE;
        /* The bytes between the slots are never written: fill them as the reference was. */
        memset(bones, FILL, (size_t)s->bone_count * sizeof *bones);
        memset(vertices, FILL, bytes);
        if (run_params(s, p, bones, vertices) != OSSA_OK) {
            w->calls_failed++;
            continue;
        }
        if (memcmp(bones, s->want_bones[k], (size_t)s->bone_count * sizeof *bones) != 0)
            w->poses_differ++;
        if (memcmp(vertices, s->want_vertices[k], bytes) != 0)
            w->meshes_differ++;
    }
    free(bones);
    free(vertices);
    return NULL;
}

static unsigned iterations(void)
{
    const char *light = getenv("OSSA_TEST_LIGHT");
    return light != NULL && strcmp(light, "1") == 0 ? LIGHT_ITERATIONS : ITERATIONS;
}

/* The single-threaded results first, then THREADS threads comparing theirs with them. */
static void stress_model(ossa_model *model, const char *what)
{
    stress s;
    worker workers[THREADS];
    pthread_t tid[THREADS];
    ossa_model_info info;
    uint32_t m, k, t;
    unsigned calls = 0;

    check_context("%s", what);
    memset(&s, 0, sizeof s);
    s.model = model;
    CHECK_OK(ossa_model_get_info(model, &info));
    s.bone_count = info.bone_count;
    s.mesh_count = info.mesh_count;
    CHECK(info.frame_count > 1 && info.mesh_count > 0);
    if (info.frame_count < 2 || info.mesh_count == 0)
        return;
    s.vertex_counts = malloc(info.mesh_count * sizeof *s.vertex_counts);
    for (m = 0; m < info.mesh_count; m++) {
        ossa_mesh_info mesh;
        CHECK_OK(ossa_model_get_mesh(model, m, &mesh));
        s.vertex_counts[m] = mesh.vertex_count;
        if (mesh.vertex_count > s.max_vertices)
            s.max_vertices = mesh.vertex_count;
    }
    for (k = 0; k < PARAMS; k++) {
        const size_t bytes = (size_t)s.vertex_counts[k % info.mesh_count] * STRIDE;
        make_params(&s.p[k], k, info.frame_count, info.mesh_count);
        s.want_bones[k] = malloc((size_t)s.bone_count * sizeof(ossa_mat3x4));
        s.want_vertices[k] = malloc(bytes);
        memset(s.want_bones[k], FILL, (size_t)s.bone_count * sizeof(ossa_mat3x4));
        memset(s.want_vertices[k], FILL, bytes);
        CHECK_OK(run_params(&s, &s.p[k], s.want_bones[k], s.want_vertices[k]));
    }
    /* The parameter sets differ: no two consecutive ones pose alike. */
    CHECK(memcmp(s.want_bones[0], s.want_bones[1], (size_t)s.bone_count * sizeof(ossa_mat3x4)) != 0);

    for (t = 0; t < THREADS; t++) {
        memset(&workers[t], 0, sizeof workers[t]);
        workers[t].s = &s;
        workers[t].index = t;
        workers[t].iterations = iterations();
        CHECK(pthread_create(&tid[t], NULL, work, &workers[t]) == 0);
    }
    for (t = 0; t < THREADS; t++) {
        CHECK(pthread_join(tid[t], NULL) == 0);
        CHECK_EQ_U(workers[t].calls_failed, 0);
        CHECK_EQ_U(workers[t].poses_differ, 0);
        CHECK_EQ_U(workers[t].meshes_differ, 0);
        calls += workers[t].iterations;
    }
    printf("%s: %u threads, %u poses and skins of %u bones and up to %u vertices, each equal to the "
           "single-threaded result\n",
           what, THREADS, calls, (unsigned)s.bone_count, (unsigned)s.max_vertices);
    for (k = 0; k < PARAMS; k++) {
        free(s.want_bones[k]);
        free(s.want_vertices[k]);
    }
    free(s.vertex_counts);
    check_context(NULL);
}

int main(void)
{
    fx_model fixture;
    fx_buf dpm = {NULL, 0, 0};
    ossa_model *model = NULL;
    ossa_error err;
    char path[4096];

    fx_make_big(&fixture, 2000, 777);
    fx_write_dpm(&fixture, &dpm, NULL);
    CHECK_OK(ossa_load_memory(dpm.data, dpm.size, NULL, &model, &err));
    if (model != NULL) {
        stress_model(model, "fixture model");
        ossa_model_free(model);
        model = NULL;
    }
    fx_buf_free(&dpm);
    fx_model_free(&fixture);

    snprintf(path, sizeof path, "%s/dpm/xon_zombie.dpm", fx_corpus_dir());
    if (ossa_load_file(path, NULL, &model, &err) == OSSA_ERR_NOT_FOUND) {
        printf("corpus not found at %s; skipping the corpus model\n", path);
    } else {
        CHECK_STR(err.message, "");
        if (model != NULL) {
            stress_model(model, "xon_zombie.dpm");
            ossa_model_free(model);
        }
    }
    return check_finish("test_stress");
}
