/* Arguments a caller can get wrong in ways that are not NULL: an options size that is no released
   layout, outputs that share memory with inputs, overlapping position and normal buffers, and
   times that are not finite. Each is refused with OSSA_ERR_INVALID_ARGUMENT, outputs untouched,
   or (a root matrix inside the output) read before anything is written. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fixture.h"

#define NB 4
#define PACKED_AFTER ((size_t)-1)

static fx_model small;
static fx_buf dpm;
static ossa_model *model;

/* An io callback that must never be called: the test counts calls. */
static unsigned io_calls;
static uint32_t counting_read(void *user, const char *path, const uint8_t **data, size_t *size, void **token)
{
    (void)user;
    (void)path;
    (void)data;
    (void)size;
    (void)token;
    io_calls++;
    return OSSA_ERR_NOT_FOUND;
}

/* Only the sizes of released layouts are read: the whole struct, the struct before sample_fps and
   the struct before base_dir.
   Every other size could end inside a pointer field; the pointers here are valid, so reading half
   of one would give a wild pointer (a crash before this was checked). */
static void test_options_size(void)
{
    static const ossa_file_io io = {NULL, counting_read, NULL};
    const size_t earlier = offsetof(ossa_load_options, base_dir);
    const size_t before_fps = offsetof(ossa_load_options, sample_fps);
    ossa_load_options opt;
    ossa_model *out = NULL;
    ossa_error err;
    uint32_t size;
    char dir[512], path[600], elsewhere[512];

    for (size = 0; size <= sizeof opt + 16; size++) {
        int released = size == sizeof opt || size == earlier || size == before_fps;
        check_context("options.size %u", (unsigned)size);
        ossa_load_options_init(&opt);
        opt.size = size;
        opt.io = &io;
        opt.name = "small.dpm";
        out = NULL;
        if (released) {
            CHECK_OK(ossa_load_memory(dpm.data, dpm.size, &opt, &out, &err));
            CHECK(out != NULL);
            ossa_model_free(out);
        } else {
            memset(&err, POISON, sizeof err);
            CHECK_RESULT(ossa_load_memory(dpm.data, dpm.size, &opt, &out, &err), OSSA_ERR_INVALID_ARGUMENT);
            CHECK(out == NULL);
            CHECK(strstr(err.message, "options->size") != NULL);
        }
    }
    check_context(NULL);

    /* The earlier layout has no base_dir: bytes past it are not read, so a base_dir the model is
       not in is ignored there and refused with the whole struct. */
    if (fx_make_temp_dir(dir, sizeof dir) != 0 || fx_make_temp_dir(elsewhere, sizeof elsewhere) != 0) {
        CHECK(!"temporary directories");
        return;
    }
    snprintf(path, sizeof path, "%s/small.dpm", dir);
    CHECK(fx_write_file(path, dpm.data, dpm.size) == 0);
    ossa_load_options_init(&opt);
    opt.base_dir = elsewhere;
    out = NULL;
    CHECK_RESULT(ossa_load_file(path, &opt, &out, NULL), OSSA_ERR_INVALID_ARGUMENT);
    CHECK(out == NULL);
    opt.size = (uint32_t)earlier;
    CHECK_OK(ossa_load_file(path, &opt, &out, NULL));
    ossa_model_free(out);
    fx_remove_temp_dir(dir);
    fx_remove_temp_dir(elsewhere);
    /* Only the loads with a released size (three layouts) asked for small.dpm.framegroups. */
    CHECK(io_calls == 3);
}

/* A root matrix inside bones_out is read before anything is written: the pose equals the one
   with a copy of the root. Blends inside the output are refused. */
static void test_root_in_output(void)
{
    ossa_frame_blend blend = {1, 1.0f};
    ossa_mat3x4 root, want[NB], got[NB], local[NB];
    double root_d[12];
    uint32_t b;
    int i;

    fx_m34_from_axis_angle(root_d, 0.3, -0.5, 0.8, 0.9, 10, -20, 5);
    for (i = 0; i < 12; i++)
        root.m[i] = (float)root_d[i];
    CHECK_OK(ossa_pose_frames(model, &blend, 1, &root, want, NB));
    for (b = 0; b < NB; b++) {
        check_context("root in bones_out[%u]", (unsigned)b);
        memset(got, 0, sizeof got);
        got[b] = root;
        CHECK_OK(ossa_pose_frames(model, &blend, 1, &got[b], got, NB));
        CHECK(memcmp(got, want, sizeof got) == 0);
    }
    CHECK_OK(ossa_pose_frames_local(model, &blend, 1, local, NB));
    for (b = 0; b < NB; b++) {
        check_context("ossa_pose_concat root in bones_out[%u]", (unsigned)b);
        memset(got, 0, sizeof got);
        got[b] = root;
        CHECK_OK(ossa_pose_concat(model, local, &got[b], got, NB));
        CHECK(memcmp(got, want, sizeof got) == 0);
    }

    check_context("blends inside bones_out");
    {
        ossa_frame_blend *inside = (ossa_frame_blend *)(void *)&got[1];
        ossa_mat3x4 before[NB];
        inside->frame = 1;
        inside->weight = 1.0f;
        memcpy(before, got, sizeof got);
        CHECK_RESULT(ossa_pose_frames(model, inside, 1, NULL, got, NB), OSSA_ERR_INVALID_ARGUMENT);
        CHECK_RESULT(ossa_pose_frames_local(model, inside, 1, got, NB), OSSA_ERR_INVALID_ARGUMENT);
        CHECK(memcmp(got, before, sizeof got) == 0);
    }
    check_context("local overlapping bones_out");
    memcpy(got, local, sizeof got);
    CHECK_RESULT(ossa_pose_concat(model, got, NULL, got, NB), OSSA_ERR_INVALID_ARGUMENT);
    CHECK(memcmp(got, local, sizeof got) == 0);
    {
        ossa_mat3x4 wide[2 * NB];
        memcpy(wide, local, sizeof local);
        CHECK_RESULT(ossa_pose_concat(model, wide, NULL, wide + 1, NB), OSSA_ERR_INVALID_ARGUMENT);
        CHECK_RESULT(ossa_skinning_matrices(model, wide, wide + 3, NB), OSSA_ERR_INVALID_ARGUMENT);
        CHECK(memcmp(wide, local, sizeof local) == 0);
    }
    check_context(NULL);
}

/* Positions and normals may interleave in one buffer, but a normal may not land on a position. */
static void test_overlapping_targets(void)
{
    const uint32_t n = small.meshes[0].vertex_count;
    ossa_frame_blend blend = {1, 1.0f};
    ossa_mat3x4 bones[NB];
    float *buf = calloc((size_t)n * 8 + 64, sizeof(float));
    float *copy = calloc((size_t)n * 8 + 64, sizeof(float));
    const size_t bytes = ((size_t)n * 8 + 64) * sizeof(float);
    ossa_skin_target t;
    static const struct {
        const char *what;
        size_t normal_float; /* where the normals start, in floats from the positions */
        size_t stride, normal_stride;
        uint32_t want;
    } cases[] = {
        {"the same buffer and stride", 0, 24, 24, OSSA_ERR_INVALID_ARGUMENT},
        {"normals 4 bytes after positions", 1, 24, 24, OSSA_ERR_INVALID_ARGUMENT},
        {"normals 8 bytes after positions", 2, 24, 24, OSSA_ERR_INVALID_ARGUMENT},
        {"interleaved, normals 12 bytes after", 3, 24, 24, OSSA_OK},
        {"interleaved in a 32-byte stride, normals 16 bytes after", 4, 32, 32, OSSA_OK},
        {"32-byte stride, normals 24 bytes after: over the next position", 6, 32, 32, OSSA_ERR_INVALID_ARGUMENT},
        {"packed positions, normals over them with another stride", 3, 12, 24, OSSA_ERR_INVALID_ARGUMENT},
        {"normals packed after the last position", PACKED_AFTER, 12, 12, OSSA_OK},
    };
    size_t i;

    CHECK_OK(ossa_pose_frames(model, &blend, 1, NULL, bones, NB));
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        check_context("%s", cases[i].what);
        memset(buf, POISON, bytes);
        t.positions = buf;
        t.position_stride = cases[i].stride;
        t.position_bytes = cases[i].stride * (n - 1) + 12;
        t.normals = buf + (cases[i].normal_float == PACKED_AFTER ? 3 * (size_t)n : cases[i].normal_float);
        t.normal_stride = cases[i].normal_stride;
        t.normal_bytes = cases[i].normal_stride * (n - 1) + 12;
        CHECK_RESULT(ossa_skin_mesh(model, 0, bones, NB, 0, n, 0, &t), cases[i].want);
        if (cases[i].want != OSSA_OK)
            CHECK(is_poisoned(buf, bytes));
    }

    check_context("bones inside the target");
    memset(buf, POISON, bytes);
    memcpy(buf + 12, bones, sizeof bones);
    memcpy(copy, buf, bytes);
    t.positions = buf;
    t.position_stride = 24;
    t.position_bytes = 24 * (n - 1) + 12;
    t.normals = buf + 3;
    t.normal_stride = 24;
    t.normal_bytes = t.position_bytes;
    CHECK_RESULT(ossa_skin_mesh(model, 0, (const ossa_mat3x4 *)(void *)(buf + 12), NB, 0, n, 0, &t),
                 OSSA_ERR_INVALID_ARGUMENT);
    CHECK(memcmp(buf, copy, bytes) == 0);
    /* Bones past the vertices written share the allocation, not the bytes: allowed. */
    memcpy(buf + 8 * n, bones, sizeof bones);
    CHECK_OK(ossa_skin_mesh(model, 0, (const ossa_mat3x4 *)(void *)(buf + 8 * n), NB, 0, n, 0, &t));
    check_context(NULL);
    free(buf);
    free(copy);
}

/* A time must be a finite number; a huge finite one is a place in the scene. */
static void test_times(void)
{
    ossa_frame_blend blends[2];
    size_t count;
    double bad[3];
    size_t i;
    bad[0] = INFINITY;
    bad[1] = -INFINITY;
    bad[2] = NAN;
    for (i = 0; i < 3; i++) {
        check_context("time %g", bad[i]);
        memset(blends, POISON, sizeof blends);
        memset(&count, POISON, sizeof count);
        CHECK_RESULT(ossa_animation_blend(model, 0, bad[i], blends, &count), OSSA_ERR_INVALID_ARGUMENT);
        CHECK(is_poisoned(blends, sizeof blends));
        CHECK(is_poisoned(&count, sizeof count));
    }
    check_context("time 1e308");
    CHECK_OK(ossa_animation_blend(model, 0, 1e308, blends, &count));
    CHECK(count >= 1 && count <= 2);
    CHECK(blends[0].frame == 0);
    check_context(NULL);
}

int main(void)
{
    fx_make_small(&small);
    fx_write_dpm(&small, &dpm, NULL);
    test_options_size();
    CHECK_OK(ossa_load_memory(dpm.data, dpm.size, NULL, &model, NULL));
    if (model) {
        test_root_in_output();
        test_overlapping_targets();
        test_times();
        ossa_model_free(model);
    }
    fx_buf_free(&dpm);
    fx_model_free(&small);
    return check_finish("test_args");
}
