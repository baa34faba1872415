/* One model shared by threads: each thread poses on its own and skins its range of one mesh into a
   shared interleaved buffer; the result must be byte-identical to a single-threaded skin. */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fixture.h"

#define STRIDE 32
#define VERTS 4000
#define MAX_BONES 64

static fx_model big;
static ossa_model *model;
static const ossa_frame_blend blends[3] = {{1, 0.5f}, {2, 0.3f}, {3, 0.2f}};

typedef struct job {
    uint32_t mesh, first, count, flags;
    uint8_t *buffer;  /* element 0 of the whole mesh */
    size_t buffer_size;
    uint32_t pose_result, skin_result;
} job;

/* Skin [first, first + count) into the shared buffer at element `first`. */
static void *run_job(void *arg)
{
    job *j = arg;
    ossa_mat3x4 bones[MAX_BONES];
    ossa_skin_target t;
    j->pose_result = ossa_pose_frames(model, blends, 3, NULL, bones, big.bone_count);
    if (j->pose_result != OSSA_OK)
        return NULL;
    t.positions = (float *)(void *)(j->buffer + (size_t)STRIDE * j->first);
    t.position_stride = STRIDE;
    t.position_bytes = j->buffer_size - (size_t)STRIDE * j->first;
    t.normals = (float *)(void *)(j->buffer + (size_t)STRIDE * j->first + 12);
    t.normal_stride = STRIDE;
    t.normal_bytes = t.position_bytes - 12;
    j->skin_result = ossa_skin_mesh(model, j->mesh, bones, big.bone_count, j->first, j->count, j->flags, &t);
    return NULL;
}

static uint8_t *fresh_buffer(size_t size)
{
    uint8_t *b = malloc(size);
    size_t i;
    for (i = 0; i < size; i++)
        b[i] = (uint8_t)(i * 131 + 7);
    return b;
}

/* Split the mesh among `threads` threads (the last range taking the rest). */
static void compare_split(uint32_t mesh, uint32_t threads, uint32_t flags)
{
    const uint32_t n = big.meshes[mesh].vertex_count;
    const size_t size = (size_t)STRIDE * n;
    uint8_t *single = fresh_buffer(size), *shared = fresh_buffer(size);
    pthread_t tid[8];
    job jobs[8], whole;
    uint32_t i, first = 0;

    whole.mesh = mesh;
    whole.first = 0;
    whole.count = n;
    whole.flags = flags;
    whole.buffer = single;
    whole.buffer_size = size;
    run_job(&whole);
    CHECK_OK(whole.pose_result);
    CHECK_OK(whole.skin_result);

    for (i = 0; i < threads; i++) {
        /* Uneven ranges, so no boundary lines up with anything in particular. */
        uint32_t count = i + 1 == threads ? n - first : n / threads + 17 * i + 3;
        jobs[i] = whole;
        jobs[i].buffer = shared;
        jobs[i].first = first;
        jobs[i].count = count;
        first += count;
    }
    for (i = 0; i < threads; i++)
        CHECK(pthread_create(&tid[i], NULL, run_job, &jobs[i]) == 0);
    for (i = 0; i < threads; i++) {
        CHECK(pthread_join(tid[i], NULL) == 0);
        CHECK_OK(jobs[i].pose_result);
        CHECK_OK(jobs[i].skin_result);
    }
    CHECK(memcmp(single, shared, size) == 0);
    free(single);
    free(shared);
}

/* The threaded result is also the right one, not merely a repeatable one. */
static void check_against_fixture(void)
{
    static const uint32_t frames[3] = {1, 2, 3};
    static const double weights[3] = {0.5, 0.3, 0.2};
    double local[MAX_BONES * 12], want[MAX_BONES * 12], p[3], n[3];
    const fx_mesh *me = &big.meshes[0];
    const size_t size = (size_t)STRIDE * me->vertex_count;
    uint8_t *b = fresh_buffer(size);
    job whole;
    uint32_t v, bad = 0;
    int k;

    fx_blend_local(&big, frames, weights, 3, local);
    fx_concat(&big, local, NULL, want);
    whole.mesh = 0;
    whole.first = 0;
    whole.count = me->vertex_count;
    whole.flags = 0;
    whole.buffer = b;
    whole.buffer_size = size;
    run_job(&whole);
    CHECK_OK(whole.skin_result);
    for (v = 0; v < me->vertex_count; v++) {
        float got[6];
        memcpy(got, b + (size_t)STRIDE * v, sizeof got);
        fx_skin_vertex(&me->verts[v], want, p, n);
        for (k = 0; k < 3; k++) {
            if (!(fabs(got[k] - p[k]) <= 1e-4 * (fabs(p[k]) > 1 ? fabs(p[k]) : 1)) ||
                !(fabs(got[3 + k] - n[k]) <= 1e-4)) {
                if (bad++ < 5)
                    fprintf(stderr, "    vertex %u: got (%g %g %g) want (%g %g %g)\n", (unsigned)v, got[0],
                            got[1], got[2], p[0], p[1], p[2]);
            }
        }
    }
    CHECK_EQ_U(bad, 0);
    free(b);
}

int main(void)
{
    fx_buf dpm = {NULL, 0, 0};
    int round;

    fx_make_big(&big, VERTS, 12345);
    fx_write_dpm(&big, &dpm, NULL);
    CHECK_OK(ossa_load_memory(dpm.data, dpm.size, NULL, &model, NULL));
    if (model) {
        check_against_fixture();
        for (round = 0; round < 4; round++) {
            check_context("round %d, two threads", round);
            compare_split(0, 2, 0);
            compare_split(1, 2, OSSA_SKIN_NORMALIZE);
            check_context("round %d, eight threads", round);
            compare_split(0, 8, OSSA_SKIN_NORMALIZE);
        }
        check_context(NULL);
        ossa_model_free(model);
    }
    fx_buf_free(&dpm);
    fx_model_free(&big);
    return check_finish("test_threads");
}
