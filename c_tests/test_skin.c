/* Skinning into caller buffers: one interleaved buffer (stride 32: position at byte 0, normal at byte
   12, 8 canary bytes), ranges, packed and padded strides, normalisation, argument errors.
   Expected vertices: p = sum_k (R_k o_k + f_k t_k), n = sum_k R_k n_k, computed in fixture.c. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fixture.h"

#define NB 4
#define STRIDE 32
#define TAIL 64 /* canary bytes after the last vertex */

static fx_model small;
static ossa_model *model;

static uint8_t canary(size_t i)
{
    return (uint8_t)(0xc3 ^ (i * 29));
}

/* A float-aligned buffer of `n` interleaved vertices plus a tail, every byte a canary. */
static uint8_t *canary_buffer(uint32_t n, size_t *size)
{
    size_t i;
    uint8_t *b;
    *size = (size_t)STRIDE * n + TAIL;
    b = malloc(*size);
    for (i = 0; i < *size; i++)
        b[i] = canary(i);
    return b;
}

/* Canary bytes that should be untouched: 24..31 of each vertex (all 32 for elements >= `written`), and
   everything after the last written vertex's normal. */
static int canaries_intact(const uint8_t *b, size_t size, uint32_t written)
{
    size_t i;
    for (i = 0; i < size; i++) {
        size_t in_vertex = i % STRIDE, vertex = i / STRIDE;
        if (vertex < written && in_vertex < 24)
            continue;
        if (b[i] != canary(i))
            return 0;
    }
    return 1;
}

static int all_canary(const uint8_t *b, size_t size)
{
    return canaries_intact(b, size, 0);
}

static ossa_skin_target interleaved(uint8_t *b, uint32_t n)
{
    ossa_skin_target t;
    t.positions = (float *)(void *)b;
    t.position_stride = STRIDE;
    t.position_bytes = (size_t)STRIDE * (n - 1) + 12; /* the exact minimum */
    t.normals = (float *)(void *)(b + 12);
    t.normal_stride = STRIDE;
    t.normal_bytes = (size_t)STRIDE * (n - 1) + 12;
    return t;
}

static void read_vec(const uint8_t *p, float v[3])
{
    memcpy(v, p, 3 * sizeof(float));
}

/* Compare element i (vertex first + i) of an interleaved buffer with the expected vertex. */
static void check_vertex(const uint8_t *b, uint32_t element, const fx_vertex *vx, const double *bones,
                         int normalized)
{
    double p[3], n[3], len;
    float gp[3], gn[3];
    int k;
    fx_skin_vertex(vx, bones, p, n);
    len = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    read_vec(b + (size_t)STRIDE * element, gp);
    read_vec(b + (size_t)STRIDE * element + 12, gn);
    for (k = 0; k < 3; k++) {
        double tol = 1e-5 * (fabs(p[k]) > 1 ? fabs(p[k]) : 1);
        if (!CHECK_NEAR(gp[k], p[k], tol))
            fprintf(stderr, "    element %u position[%d]\n", (unsigned)element, k);
        if (!CHECK_NEAR(gn[k], normalized ? n[k] / len : n[k], 1e-5))
            fprintf(stderr, "    element %u normal[%d]\n", (unsigned)element, k);
    }
    if (normalized)
        CHECK_NEAR(sqrt((double)gn[0] * gn[0] + (double)gn[1] * gn[1] + (double)gn[2] * gn[2]), 1.0, 1e-5);
}

/* Pose with ossa, skin the whole of every mesh, compare with the fixture's pose and formula. */
static void skin_and_compare(const ossa_frame_blend *blends, size_t count, const double *want_bones,
                             const ossa_mat3x4 *root, uint32_t flags)
{
    ossa_mat3x4 bones[NB];
    uint32_t mesh, v;
    CHECK_OK(ossa_pose_frames(model, blends, count, root, bones, NB));
    for (mesh = 0; mesh < small.mesh_count; mesh++) {
        const fx_mesh *me = &small.meshes[mesh];
        size_t size;
        uint8_t *b = canary_buffer(me->vertex_count, &size);
        ossa_skin_target t = interleaved(b, me->vertex_count);
        CHECK_OK(ossa_skin_mesh(model, mesh, bones, NB, 0, me->vertex_count, flags, &t));
        for (v = 0; v < me->vertex_count; v++)
            check_vertex(b, v, &me->verts[v], want_bones, flags & OSSA_SKIN_NORMALIZE);
        CHECK(canaries_intact(b, size, me->vertex_count));
        free(b);
    }
}

static void test_frames(void)
{
    double local[NB * 12], want[NB * 12], root_d[12];
    ossa_frame_blend blends[2];
    ossa_mat3x4 root;
    uint32_t f;
    int i;

    for (f = 0; f < small.frame_count; f++) {
        blends[0].frame = f;
        blends[0].weight = 1;
        fx_frame_local(&small, f, local);
        fx_concat(&small, local, NULL, want);
        check_context("frame %u", (unsigned)f);
        skin_and_compare(blends, 1, want, NULL, 0);
        check_context("frame %u, normalised", (unsigned)f);
        skin_and_compare(blends, 1, want, NULL, OSSA_SKIN_NORMALIZE);
    }

    /* A 50/50 blend under a root matrix. */
    {
        static const uint32_t frames[2] = {1, 2};
        static const double weights[2] = {0.5, 0.5};
        fx_m34_from_axis_angle(root_d, 0, 1, 1, 0.8, 5, 6, -7);
        for (i = 0; i < 12; i++)
            root.m[i] = (float)root_d[i];
        for (i = 0; i < 12; i++)
            root_d[i] = root.m[i];
        blends[0].frame = 1;
        blends[0].weight = 0.5f;
        blends[1].frame = 2;
        blends[1].weight = 0.5f;
        fx_blend_local(&small, frames, weights, 2, local);
        fx_concat(&small, local, root_d, want);
        check_context("50/50 blend of frames 1 and 2 under a root");
        skin_and_compare(blends, 2, want, &root, 0);
    }
    check_context(NULL);
}

/* Frame 0 with weight 1 gives the bind mesh: the positions the fixture made the vertices from. */
static void test_bind_mesh(void)
{
    ossa_frame_blend blend = {0, 1.0f};
    ossa_mat3x4 bones[NB];
    uint32_t mesh, v;
    int k;
    CHECK_OK(ossa_pose_frames(model, &blend, 1, NULL, bones, NB));
    for (mesh = 0; mesh < small.mesh_count; mesh++) {
        const fx_mesh *me = &small.meshes[mesh];
        size_t size;
        uint8_t *b = canary_buffer(me->vertex_count, &size);
        ossa_skin_target t = interleaved(b, me->vertex_count);
        CHECK_OK(ossa_skin_mesh(model, mesh, bones, NB, 0, me->vertex_count, 0, &t));
        for (v = 0; v < me->vertex_count; v++) {
            float p[3];
            read_vec(b + (size_t)STRIDE * v, p);
            check_context("bind mesh %u vertex %u", (unsigned)mesh, (unsigned)v);
            for (k = 0; k < 3; k++)
                CHECK_NEAR(p[k], me->verts[v].bind_pos[k], 1e-5);
        }
        free(b);
    }
    check_context(NULL);
}

/* Skinning alone, with bone matrices made by the test (no ossa posing involved). */
static void test_own_bones(void)
{
    double local[NB * 12], want[NB * 12];
    ossa_mat3x4 bones[NB];
    const fx_mesh *me = &small.meshes[0];
    size_t size;
    uint8_t *b;
    ossa_skin_target t;
    uint32_t v;
    int i;

    fx_frame_local(&small, 2, local);
    fx_concat(&small, local, NULL, want);
    /* A scale on one bone: skinning applies matrices as given. */
    for (i = 0; i < 3; i++)
        want[12 * 2 + 4 * i + 1] *= 1.5;
    for (i = 0; i < NB * 12; i++) {
        bones[i / 12].m[i % 12] = (float)want[i];
        want[i] = bones[i / 12].m[i % 12];
    }
    b = canary_buffer(me->vertex_count, &size);
    t = interleaved(b, me->vertex_count);
    CHECK_OK(ossa_skin_mesh(model, 0, bones, NB, 0, me->vertex_count, 0, &t));
    check_context("caller-made bones");
    for (v = 0; v < me->vertex_count; v++)
        check_vertex(b, v, &me->verts[v], want, 0);
    CHECK(canaries_intact(b, size, me->vertex_count));
    check_context(NULL);
    free(b);
}

static void test_ranges(void)
{
    double local[NB * 12], want[NB * 12];
    ossa_frame_blend blend = {1, 1.0f};
    ossa_mat3x4 bones[NB];
    const fx_mesh *me = &small.meshes[0];
    static const uint32_t ranges[][2] = {{2, 3}, {0, 1}, {5, 1}, {1, 5}};
    size_t r;

    fx_frame_local(&small, 1, local);
    fx_concat(&small, local, NULL, want);
    CHECK_OK(ossa_pose_frames(model, &blend, 1, NULL, bones, NB));
    for (r = 0; r < sizeof ranges / sizeof ranges[0]; r++) {
        uint32_t first = ranges[r][0], count = ranges[r][1], i;
        size_t size;
        uint8_t *b = canary_buffer(count, &size);
        ossa_skin_target t = interleaved(b, count);
        check_context("range first %u count %u", (unsigned)first, (unsigned)count);
        CHECK_OK(ossa_skin_mesh(model, 0, bones, NB, first, count, 0, &t));
        for (i = 0; i < count; i++)
            check_vertex(b, i, &me->verts[first + i], want, 0);
        CHECK(canaries_intact(b, size, count));
        free(b);
    }

    /* An empty range writes nothing (and may be refused as pointless). */
    {
        size_t size;
        uint8_t *b = canary_buffer(1, &size);
        ossa_skin_target t = interleaved(b, 1);
        uint32_t res;
        check_context("empty ranges");
        res = ossa_skin_mesh(model, 0, bones, NB, 0, 0, 0, &t);
        CHECK(res == OSSA_OK || res == OSSA_ERR_INVALID_ARGUMENT);
        res = ossa_skin_mesh(model, 0, bones, NB, me->vertex_count, 0, 0, &t);
        CHECK(res == OSSA_OK || res == OSSA_ERR_INVALID_ARGUMENT);
        CHECK(all_canary(b, size));
        free(b);
    }
    check_context(NULL);
}

/* Packed (stride 12) and padded (stride 16) separate arrays allocated to the exact minimum size, so the
   sanitizers catch any write past them; and positions only. */
static void test_separate_arrays(void)
{
    double local[NB * 12], want[NB * 12];
    ossa_frame_blend blend = {2, 1.0f};
    ossa_mat3x4 bones[NB];
    const fx_mesh *me = &small.meshes[0];
    const uint32_t n = me->vertex_count;
    float *pos = malloc(16 * (n - 1) + 12), *nrm = malloc(12 * n);
    ossa_skin_target t;
    uint32_t v;
    int k;

    fx_frame_local(&small, 2, local);
    fx_concat(&small, local, NULL, want);
    CHECK_OK(ossa_pose_frames(model, &blend, 1, NULL, bones, NB));
    t.positions = pos;
    t.position_stride = 16;
    t.position_bytes = 16 * (n - 1) + 12;
    t.normals = nrm;
    t.normal_stride = 12;
    t.normal_bytes = 12 * n;
    CHECK_OK(ossa_skin_mesh(model, 0, bones, NB, 0, n, OSSA_SKIN_NORMALIZE, &t));
    for (v = 0; v < n; v++) {
        double p[3], nn[3], len;
        fx_skin_vertex(&me->verts[v], want, p, nn);
        len = sqrt(nn[0] * nn[0] + nn[1] * nn[1] + nn[2] * nn[2]);
        check_context("separate arrays, vertex %u", (unsigned)v);
        for (k = 0; k < 3; k++) {
            CHECK_NEAR(pos[4 * v + k], p[k], 1e-5 * (fabs(p[k]) > 1 ? fabs(p[k]) : 1));
            CHECK_NEAR(nrm[3 * v + k], nn[k] / len, 1e-5);
        }
    }

    /* Positions only, packed. */
    memset(pos, 0, 16 * (n - 1) + 12);
    t.position_stride = 12;
    t.position_bytes = 12 * n;
    t.normals = NULL;
    t.normal_stride = 0;
    t.normal_bytes = 0;
    CHECK_OK(ossa_skin_mesh(model, 0, bones, NB, 0, n, 0, &t));
    for (v = 0; v < n; v++) {
        double p[3], nn[3];
        fx_skin_vertex(&me->verts[v], want, p, nn);
        check_context("positions only, vertex %u", (unsigned)v);
        for (k = 0; k < 3; k++)
            CHECK_NEAR(pos[3 * v + k], p[k], 1e-5 * (fabs(p[k]) > 1 ? fabs(p[k]) : 1));
    }
    check_context(NULL);
    free(pos);
    free(nrm);
}

static void test_errors(void)
{
    ossa_frame_blend blend = {1, 1.0f};
    ossa_mat3x4 bones[NB + 1];
    const uint32_t n = small.meshes[0].vertex_count;
    size_t size;
    uint8_t *b = canary_buffer(n, &size);
    ossa_skin_target good = interleaved(b, n), t;
    static const size_t bad_strides[] = {0, 4, 8, 14, 13, 18};
    size_t i;

    CHECK_OK(ossa_pose_frames(model, &blend, 1, NULL, bones, NB));

#define EXPECT_UNTOUCHED(call, want)          \
    do {                                      \
        CHECK_RESULT(call, want);             \
        CHECK(all_canary(b, size));           \
    } while (0)

    for (i = 0; i < sizeof bad_strides / sizeof bad_strides[0]; i++) {
        check_context("position stride %u", (unsigned)bad_strides[i]);
        t = good;
        t.position_stride = bad_strides[i];
        t.position_bytes = size;
        EXPECT_UNTOUCHED(ossa_skin_mesh(model, 0, bones, NB, 0, n, 0, &t), OSSA_ERR_INVALID_ARGUMENT);
        check_context("normal stride %u", (unsigned)bad_strides[i]);
        t = good;
        t.normal_stride = bad_strides[i];
        t.normal_bytes = size - 12;
        EXPECT_UNTOUCHED(ossa_skin_mesh(model, 0, bones, NB, 0, n, 0, &t), OSSA_ERR_INVALID_ARGUMENT);
    }
    check_context("positions one byte too small");
    t = good;
    t.position_bytes--;
    EXPECT_UNTOUCHED(ossa_skin_mesh(model, 0, bones, NB, 0, n, 0, &t), OSSA_ERR_INVALID_ARGUMENT);
    check_context("normals one byte too small");
    t = good;
    t.normal_bytes--;
    EXPECT_UNTOUCHED(ossa_skin_mesh(model, 0, bones, NB, 0, n, 0, &t), OSSA_ERR_INVALID_ARGUMENT);
    check_context("positions sized for one vertex less");
    t = good;
    t.position_bytes = (size_t)STRIDE * (n - 2) + 12;
    t.normal_bytes = t.position_bytes;
    EXPECT_UNTOUCHED(ossa_skin_mesh(model, 0, bones, NB, 0, n, 0, &t), OSSA_ERR_INVALID_ARGUMENT);

    check_context("range past the end");
    EXPECT_UNTOUCHED(ossa_skin_mesh(model, 0, bones, NB, 1, n, 0, &good), OSSA_ERR_INVALID_ARGUMENT);
    EXPECT_UNTOUCHED(ossa_skin_mesh(model, 0, bones, NB, n, 1, 0, &good), OSSA_ERR_INVALID_ARGUMENT);
    EXPECT_UNTOUCHED(ossa_skin_mesh(model, 0, bones, NB, 0, n + 1, 0, &good), OSSA_ERR_INVALID_ARGUMENT);
    EXPECT_UNTOUCHED(ossa_skin_mesh(model, 0, bones, NB, 0xffffffffu, 2, 0, &good), OSSA_ERR_INVALID_ARGUMENT);
    EXPECT_UNTOUCHED(ossa_skin_mesh(model, 0, bones, NB, 2, 0xffffffffu, 0, &good), OSSA_ERR_INVALID_ARGUMENT);

    check_context("mesh index");
    EXPECT_UNTOUCHED(ossa_skin_mesh(model, 2, bones, NB, 0, 1, 0, &good), OSSA_ERR_INVALID_ARGUMENT);
    EXPECT_UNTOUCHED(ossa_skin_mesh(model, 0xffffffffu, bones, NB, 0, 1, 0, &good), OSSA_ERR_INVALID_ARGUMENT);

    check_context("bone count");
    EXPECT_UNTOUCHED(ossa_skin_mesh(model, 0, bones, NB - 1, 0, n, 0, &good), OSSA_ERR_INVALID_ARGUMENT);
    EXPECT_UNTOUCHED(ossa_skin_mesh(model, 0, bones, NB + 1, 0, n, 0, &good), OSSA_ERR_INVALID_ARGUMENT);
    EXPECT_UNTOUCHED(ossa_skin_mesh(model, 0, bones, 0, 0, n, 0, &good), OSSA_ERR_INVALID_ARGUMENT);

    check_context("NULL arguments");
    EXPECT_UNTOUCHED(ossa_skin_mesh(NULL, 0, bones, NB, 0, n, 0, &good), OSSA_ERR_NULL_ARGUMENT);
    EXPECT_UNTOUCHED(ossa_skin_mesh(model, 0, NULL, NB, 0, n, 0, &good), OSSA_ERR_NULL_ARGUMENT);
    EXPECT_UNTOUCHED(ossa_skin_mesh(model, 0, bones, NB, 0, n, 0, NULL), OSSA_ERR_NULL_ARGUMENT);
    t = good;
    t.positions = NULL;
    EXPECT_UNTOUCHED(ossa_skin_mesh(model, 0, bones, NB, 0, n, 0, &t), OSSA_ERR_NULL_ARGUMENT);
    check_context(NULL);
#undef EXPECT_UNTOUCHED

    /* After all that, the good target still works. */
    CHECK_OK(ossa_skin_mesh(model, 0, bones, NB, 0, n, 0, &good));
    CHECK(canaries_intact(b, size, n));
    free(b);
}

int main(void)
{
    fx_buf dpm = {NULL, 0, 0};

    fx_make_small(&small);
    fx_write_dpm(&small, &dpm, NULL);
    CHECK_OK(ossa_load_memory(dpm.data, dpm.size, NULL, &model, NULL));
    if (model) {
        test_frames();
        test_bind_mesh();
        test_own_bones();
        test_ranges();
        test_separate_arrays();
        test_errors();
        ossa_model_free(model);
    }
    fx_buf_free(&dpm);
    fx_model_free(&small);
    return check_finish("test_skin");
}
