/* Posing: file poses, blends (hemisphere-aligned nlerp, lerped translations), root matrix,
   local + concat, argument errors. Expected matrices come from fixture.c in double precision. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fixture.h"

#define NB 4 /* bones of the small model */
#define PI 3.14159265358979323846

static fx_model small;
static ossa_model *model;

/* Compare ossa matrices with expected ones, relative to the size of the value. */
static void check_bones(const ossa_mat3x4 *got, const double *want, uint32_t count, double tol)
{
    uint32_t b;
    int i;
    for (b = 0; b < count; b++)
        for (i = 0; i < 12; i++) {
            double w = want[12 * b + i];
            if (!CHECK_NEAR(got[b].m[i], w, tol * (fabs(w) > 1 ? fabs(w) : 1)))
                fprintf(stderr, "    bone %u element %d\n", (unsigned)b, i);
        }
}

static void to_mat(const double *d, ossa_mat3x4 *m)
{
    int i;
    for (i = 0; i < 12; i++)
        m->m[i] = (float)d[i];
}

/* The fixture itself: frame 0 reproduces the positions the vertices were made from. */
static void test_fixture_consistent(void)
{
    double local[NB * 12], bones[NB * 12], p[3], n[3];
    uint32_t i, v;
    fx_frame_local(&small, 0, local);
    fx_concat(&small, local, NULL, bones);
    for (i = 0; i < small.mesh_count; i++)
        for (v = 0; v < small.meshes[i].vertex_count; v++) {
            const fx_vertex *vx = &small.meshes[i].verts[v];
            fx_skin_vertex(vx, bones, p, n);
            CHECK_NEAR(p[0], vx->bind_pos[0], 1e-5);
            CHECK_NEAR(p[1], vx->bind_pos[1], 1e-5);
            CHECK_NEAR(p[2], vx->bind_pos[2], 1e-5);
            CHECK_NEAR(n[0] * n[0] + n[1] * n[1] + n[2] * n[2], 1.0, 1e-5);
        }
}

static void test_single_frames(void)
{
    static const float weights[] = {1.0f, 0.25f, 7.0f};
    double local[NB * 12], want[NB * 12];
    ossa_mat3x4 got[NB];
    uint32_t f;
    size_t w;
    for (f = 0; f < small.frame_count; f++)
        for (w = 0; w < sizeof weights / sizeof weights[0]; w++) {
            ossa_frame_blend blend;
            blend.frame = f;
            blend.weight = weights[w];
            check_context("frame %u alone, weight %g", (unsigned)f, weights[w]);
            fx_frame_local(&small, f, local);
            fx_concat(&small, local, NULL, want);
            CHECK_OK(ossa_pose_frames(model, &blend, 1, NULL, got, NB));
            check_bones(got, want, NB, 1e-5);
            /* Left parent-relative, it is the file's own local pose. */
            CHECK_OK(ossa_pose_frames_local(model, &blend, 1, got, NB));
            check_bones(got, local, NB, 1e-5);
        }
    check_context(NULL);
}

static void test_halfway_blend(void)
{
    ossa_frame_blend blends[2];
    ossa_mat3x4 local[NB], bones[NB];
    double want_local[NB * 12], want[NB * 12], halfway[12];
    static const uint32_t frames[2] = {1, 2};
    static const double weights[2] = {0.5, 0.5};

    blends[0].frame = 1;
    blends[0].weight = 0.5f;
    blends[1].frame = 2;
    blends[1].weight = 0.5f;
    CHECK_OK(ossa_pose_frames_local(model, blends, 2, local, NB));

    /* Bone 0 turns 20 and 80 degrees about z: halfway is 50, translations (1,0,2) and (0,2,4) meet at
       (0.5,1,3).  Written out by hand, not through the fixture's quaternions. */
    fx_m34_from_axis_angle(halfway, 0, 0, 1, 50 * PI / 180, 0.5, 1, 3);
    check_context("50/50 blend, bone 0 local");
    check_bones(&local[0], halfway, 1, 1e-5);
    /* Bone 1 turns +170 and -170 degrees: the short way, halfway is 180 (a rotation by pi about z). */
    {
        static const double half_turn[12] = {-1, 0, 0, 0, 0, -1, 0, 0.5, 0, 0, 1, 3};
        check_context("50/50 blend, bone 1 local (+170/-170 degrees)");
        check_bones(&local[1], half_turn, 1, 1e-5);
    }

    check_context("50/50 blend, all bones local");
    fx_blend_local(&small, frames, weights, 2, want_local);
    check_bones(local, want_local, NB, 1e-5);
    check_context("50/50 blend, model space");
    fx_concat(&small, want_local, NULL, want);
    CHECK_OK(ossa_pose_frames(model, blends, 2, NULL, bones, NB));
    check_bones(bones, want, NB, 1e-5);

    /* Unnormalised weights mean the same. */
    blends[0].weight = 3.0f;
    blends[1].weight = 3.0f;
    check_context("3/3 blend, model space");
    CHECK_OK(ossa_pose_frames(model, blends, 2, NULL, bones, NB));
    check_bones(bones, want, NB, 1e-5);
    check_context(NULL);
}

static void test_weighted_blends(void)
{
    static const struct {
        size_t count;
        uint32_t frames[8];
        double weights[8];
    } cases[] = {
        {2, {1, 2}, {0.25, 0.75}},
        {2, {0, 1}, {0.6, 0.4}},
        {2, {0, 2}, {0.1, 0.9}},
        {3, {1, 2, 1}, {1, 3, 0.5}},
        {8, {1, 2, 1, 2, 1, 2, 1, 2}, {1, 2, 3, 4, 5, 6, 7, 8}},
        {8, {2, 2, 2, 2, 2, 2, 2, 2}, {1, 1, 1, 1, 1, 1, 1, 1}},
    };
    size_t c, i;
    for (c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        ossa_frame_blend blends[8];
        ossa_mat3x4 got[NB];
        double local[NB * 12], want[NB * 12];
        for (i = 0; i < cases[c].count; i++) {
            blends[i].frame = cases[c].frames[i];
            blends[i].weight = (float)cases[c].weights[i];
        }
        fx_blend_local(&small, cases[c].frames, cases[c].weights, cases[c].count, local);
        fx_concat(&small, local, NULL, want);
        check_context("blend case %u (%u frames)", (unsigned)c, (unsigned)cases[c].count);
        CHECK_OK(ossa_pose_frames_local(model, blends, cases[c].count, got, NB));
        check_bones(got, local, NB, 2e-5);
        CHECK_OK(ossa_pose_frames(model, blends, cases[c].count, NULL, got, NB));
        check_bones(got, want, NB, 2e-5);
    }
    check_context(NULL);
}

static void test_root(void)
{
    double root_d[12], local[NB * 12], want[NB * 12], tag[12];
    ossa_mat3x4 root, got[NB];
    ossa_frame_blend blend;
    fx_m34_from_axis_angle(root_d, 0.3, -0.5, 0.8, 0.9, 10, -20, 5);
    to_mat(root_d, &root);
    /* Expected from the float root actually passed. */
    {
        int i;
        for (i = 0; i < 12; i++)
            root_d[i] = root.m[i];
    }
    blend.frame = 1;
    blend.weight = 1;
    fx_frame_local(&small, 1, local);
    fx_concat(&small, local, root_d, want);
    check_context("frame 1 with a root matrix");
    CHECK_OK(ossa_pose_frames(model, &blend, 1, &root, got, NB));
    check_bones(got, want, NB, 1e-5);
    /* Both parentless bones (0 and the tag, 3) hang off the root. */
    fx_m34_mul(root_d, local + 12 * 3, tag);
    check_context("tag bone with a root matrix");
    check_bones(&got[3], tag, 1, 1e-5);
    check_context(NULL);
}

static void test_local_then_concat(void)
{
    static const float weights[3][3] = {{1, 0, 0}, {0, 0.5f, 0.5f}, {0.2f, 0.3f, 0.5f}};
    double root_d[12];
    ossa_mat3x4 root, local[NB], a[NB], b[NB];
    size_t c;
    int i;
    fx_m34_from_axis_angle(root_d, 1, 1, 0, -0.7, 3, 4, 5);
    to_mat(root_d, &root);
    for (c = 0; c < 3; c++) {
        ossa_frame_blend blends[3];
        size_t n = 0;
        uint32_t f;
        for (f = 0; f < 3; f++)
            if (weights[c][f] > 0) {
                blends[n].frame = f;
                blends[n].weight = weights[c][f];
                n++;
            }
        check_context("local + concat, case %u", (unsigned)c);
        CHECK_OK(ossa_pose_frames_local(model, blends, n, local, NB));
        CHECK_OK(ossa_pose_concat(model, local, &root, a, NB));
        CHECK_OK(ossa_pose_frames(model, blends, n, &root, b, NB));
        for (i = 0; i < NB; i++) {
            double want[12];
            int k;
            for (k = 0; k < 12; k++)
                want[k] = b[i].m[k];
            check_bones(&a[i], want, 1, 1e-6);
        }
        /* NULL root is identity. */
        CHECK_OK(ossa_pose_concat(model, local, NULL, a, NB));
        CHECK_OK(ossa_pose_frames(model, blends, n, NULL, b, NB));
        for (i = 0; i < NB; i++) {
            double want[12];
            int k;
            for (k = 0; k < 12; k++)
                want[k] = b[i].m[k];
            check_bones(&a[i], want, 1, 1e-6);
        }
    }
    check_context(NULL);
}

/* Caller-made locals (here with a scale, which no file pose has) are concatenated as they are. */
static void test_concat_dynamic(void)
{
    double local_d[NB * 12], want[NB * 12], root_d[12];
    ossa_mat3x4 local[NB], root, got[NB];
    uint32_t b;
    int i;
    fx_frame_local(&small, 2, local_d);
    for (i = 0; i < 3; i++) {
        local_d[12 + i] *= 2.0; /* bone 1: scale x by 2 */
        local_d[12 + 4 + i] *= 0.5;
    }
    for (b = 0; b < NB; b++)
        to_mat(local_d + 12 * b, &local[b]);
    for (i = 0; i < NB * 12; i++)
        local_d[i] = local[i / 12].m[i % 12];
    fx_m34_from_axis_angle(root_d, 0, 0, 1, 0.25, -1, 0, 2);
    to_mat(root_d, &root);
    for (i = 0; i < 12; i++)
        root_d[i] = root.m[i];
    fx_concat(&small, local_d, root_d, want);
    check_context("concat of caller-made locals");
    CHECK_OK(ossa_pose_concat(model, local, &root, got, NB));
    check_bones(got, want, NB, 1e-5);
    check_context(NULL);
}

/* Each bad call returns its code and leaves the whole output array (one spare entry included) alone. */
static void test_errors(void)
{
    ossa_mat3x4 out[NB + 1], local[NB];
    ossa_frame_blend good = {1, 1.0f}, blends[9];
    size_t i;
    static const size_t bad_counts[] = {0, NB - 1, NB + 1, 1000};
    static const struct {
        const char *what;
        uint32_t frame;
        float weight;
    } bad_blends[] = {
        {"weight 0", 1, 0.0f},
        {"weight -1", 1, -1.0f},
        {"weight -0", 1, -0.0f},
        {"weight NaN", 1, (float)NAN},
        {"frame == frame count", 3, 1.0f},
        {"frame 0xffffffff", 0xffffffffu, 1.0f},
    };

    CHECK_OK(ossa_pose_frames_local(model, &good, 1, local, NB));
    for (i = 0; i < 9; i++)
        blends[i] = good;

#define EXPECT_UNTOUCHED(call, want)                \
    do {                                            \
        memset(out, POISON, sizeof out);            \
        CHECK_RESULT(call, want);                   \
        CHECK(is_poisoned(out, sizeof out));        \
    } while (0)

    for (i = 0; i < sizeof bad_counts / sizeof bad_counts[0]; i++) {
        check_context("bone_count %u", (unsigned)bad_counts[i]);
        EXPECT_UNTOUCHED(ossa_pose_frames(model, &good, 1, NULL, out, bad_counts[i]), OSSA_ERR_INVALID_ARGUMENT);
        EXPECT_UNTOUCHED(ossa_pose_frames_local(model, &good, 1, out, bad_counts[i]), OSSA_ERR_INVALID_ARGUMENT);
        EXPECT_UNTOUCHED(ossa_pose_concat(model, local, NULL, out, bad_counts[i]), OSSA_ERR_INVALID_ARGUMENT);
    }
    check_context("blend_count 0");
    EXPECT_UNTOUCHED(ossa_pose_frames(model, blends, 0, NULL, out, NB), OSSA_ERR_INVALID_ARGUMENT);
    EXPECT_UNTOUCHED(ossa_pose_frames_local(model, blends, 0, out, NB), OSSA_ERR_INVALID_ARGUMENT);
    check_context("blend_count 9");
    EXPECT_UNTOUCHED(ossa_pose_frames(model, blends, 9, NULL, out, NB), OSSA_ERR_INVALID_ARGUMENT);
    EXPECT_UNTOUCHED(ossa_pose_frames_local(model, blends, 9, out, NB), OSSA_ERR_INVALID_ARGUMENT);
    check_context("blend_count 8");
    CHECK_OK(ossa_pose_frames(model, blends, 8, NULL, out, NB));

    /* A root or local poses not finite or beyond 1e9: posing them could overflow. */
    {
        static const float bad_values[] = {INFINITY, -INFINITY, NAN, 3e38f, -2e9f};
        ossa_mat3x4 root, far[NB];
        size_t k;
        for (k = 0; k < sizeof bad_values / sizeof bad_values[0]; k++) {
            check_context("root element %g", (double)bad_values[k]);
            memset(&root, 0, sizeof root);
            root.m[0] = root.m[5] = root.m[10] = 1.0f;
            root.m[7] = bad_values[k];
            EXPECT_UNTOUCHED(ossa_pose_frames(model, &good, 1, &root, out, NB), OSSA_ERR_INVALID_ARGUMENT);
            EXPECT_UNTOUCHED(ossa_pose_concat(model, local, &root, out, NB), OSSA_ERR_INVALID_ARGUMENT);
            memcpy(far, local, sizeof far);
            far[NB - 1].m[3] = bad_values[k];
            EXPECT_UNTOUCHED(ossa_pose_concat(model, far, NULL, out, NB), OSSA_ERR_INVALID_ARGUMENT);
        }
        check_context("root element 1e9");
        root.m[7] = 1e9f;
        CHECK_OK(ossa_pose_frames(model, &good, 1, &root, out, NB));
        CHECK(isfinite(out[NB - 1].m[7]));
    }

    for (i = 0; i < sizeof bad_blends / sizeof bad_blends[0]; i++) {
        ossa_frame_blend two[2];
        two[0] = good;
        two[1].frame = bad_blends[i].frame;
        two[1].weight = bad_blends[i].weight;
        check_context("%s", bad_blends[i].what);
        EXPECT_UNTOUCHED(ossa_pose_frames(model, &two[1], 1, NULL, out, NB), OSSA_ERR_INVALID_ARGUMENT);
        EXPECT_UNTOUCHED(ossa_pose_frames(model, two, 2, NULL, out, NB), OSSA_ERR_INVALID_ARGUMENT);
        EXPECT_UNTOUCHED(ossa_pose_frames_local(model, two, 2, out, NB), OSSA_ERR_INVALID_ARGUMENT);
    }

    check_context("NULL arguments");
    EXPECT_UNTOUCHED(ossa_pose_frames(NULL, &good, 1, NULL, out, NB), OSSA_ERR_NULL_ARGUMENT);
    EXPECT_UNTOUCHED(ossa_pose_frames(model, NULL, 1, NULL, out, NB), OSSA_ERR_NULL_ARGUMENT);
    CHECK_RESULT(ossa_pose_frames(model, &good, 1, NULL, NULL, NB), OSSA_ERR_NULL_ARGUMENT);
    EXPECT_UNTOUCHED(ossa_pose_frames_local(NULL, &good, 1, out, NB), OSSA_ERR_NULL_ARGUMENT);
    EXPECT_UNTOUCHED(ossa_pose_frames_local(model, NULL, 1, out, NB), OSSA_ERR_NULL_ARGUMENT);
    CHECK_RESULT(ossa_pose_frames_local(model, &good, 1, NULL, NB), OSSA_ERR_NULL_ARGUMENT);
    EXPECT_UNTOUCHED(ossa_pose_concat(NULL, local, NULL, out, NB), OSSA_ERR_NULL_ARGUMENT);
    EXPECT_UNTOUCHED(ossa_pose_concat(model, NULL, NULL, out, NB), OSSA_ERR_NULL_ARGUMENT);
    CHECK_RESULT(ossa_pose_concat(model, local, NULL, NULL, NB), OSSA_ERR_NULL_ARGUMENT);
    check_context(NULL);
#undef EXPECT_UNTOUCHED
}

int main(void)
{
    fx_buf dpm = {NULL, 0, 0};

    fx_make_small(&small);
    fx_write_dpm(&small, &dpm, NULL);
    test_fixture_consistent();
    CHECK_OK(ossa_load_memory(dpm.data, dpm.size, NULL, &model, NULL));
    if (model) {
        test_single_frames();
        test_halfway_blend();
        test_weighted_blends();
        test_root();
        test_local_then_concat();
        test_concat_dynamic();
        test_errors();
        ossa_model_free(model);
    }
    fx_buf_free(&dpm);
    fx_model_free(&small);
    return check_finish("test_pose");
}
