/* Loading from memory and from a path, every error the DPM loader can give, and choosing one
   skeleton of a Sims CMX that has two. */
#define _POSIX_C_SOURCE 200809L

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "check.h"
#include "fixture.h"

/* Failed loads must leave *out alone: it is preset to this and compared afterwards. */
static char sentinel_storage;
#define SENTINEL ((ossa_model *)(void *)&sentinel_storage)

static fx_model small;
static fx_buf small_dpm;
static fx_layout small_layout;

static int contains_nocase(const char *hay, const char *needle)
{
    size_t n = strlen(needle), i, j;
    for (i = 0; hay[i]; i++) {
        for (j = 0; j < n && hay[i + j]; j++)
            if (tolower((unsigned char)hay[i + j]) != tolower((unsigned char)needle[j]))
                break;
        if (j == n)
            return 1;
    }
    return 0;
}

static void preset_error(ossa_error *err)
{
    memset(err, 0x5a, sizeof *err);
    err->message[sizeof err->message - 1] = '\0';
}

/* The error record of a failed call: same result, a sentence, and (for binary data where a byte is
   known, want_offset) a byte offset; `size` bounds the offset when the offending byte is in the data. */
static void check_error_record(const ossa_error *err, uint32_t ret, const char *word, int want_offset,
                               size_t size)
{
    CHECK_RESULT(err->result, ret);
    CHECK(memchr(err->message, '\0', sizeof err->message) != NULL);
    if (memchr(err->message, '\0', sizeof err->message) == NULL)
        return;
    CHECK(strlen(err->message) > 0);
    if (word && !contains_nocase(err->message, word)) {
        CHECK(!"error message names the structure");
        fprintf(stderr, "    message \"%s\" lacks \"%s\"\n", err->message, word);
    }
    if (want_offset) {
        CHECK(err->offset != UINT64_MAX);
        if (size && err->offset != UINT64_MAX)
            CHECK(err->offset < size);
    }
}

/* Load a copy of `data` in a buffer of exactly `size` bytes (so the sanitizers see any read past it). */
static uint32_t load_copy(const uint8_t *data, size_t size, const ossa_load_options *options, ossa_model **out,
                          ossa_error *err)
{
    uint8_t *copy = malloc(size ? size : 1);
    uint32_t r;
    if (size)
        memcpy(copy, data, size);
    r = ossa_load_memory(copy, size, options, out, err);
    free(copy);
    return r;
}

/* Expect one failing load: the code, the record, and *out untouched. */
static void expect_load_error(const uint8_t *data, size_t size, const ossa_load_options *options, uint32_t want,
                              const char *word, int want_offset)
{
    ossa_model *out = SENTINEL;
    ossa_error err;
    uint32_t r;
    preset_error(&err);
    r = load_copy(data, size, options, &out, &err);
    CHECK_RESULT(r, want);
    CHECK(out == SENTINEL);
    if (r != OSSA_OK)
        check_error_record(&err, r, word, want_offset, want == OSSA_ERR_MALFORMED ? size : 0);
    else if (out != SENTINEL)
        ossa_model_free(out);
}

/* A fresh copy of the small model's file for one corruption. */
static uint8_t *corrupt_copy(void)
{
    uint8_t *p = malloc(small_dpm.size);
    memcpy(p, small_dpm.data, small_dpm.size);
    return p;
}

static void test_load_memory_ok(void)
{
    ossa_model *model = NULL;
    ossa_load_options opt;
    ossa_model_info info;
    ossa_error err;

    CHECK_OK(ossa_load_memory(small_dpm.data, small_dpm.size, NULL, &model, &err));
    CHECK(model != NULL);
    if (model) {
        CHECK_OK(ossa_model_get_info(model, &info));
        CHECK_EQ_U(info.format, OSSA_FORMAT_DPM);
        CHECK_EQ_U(info.bone_count, 4);
        CHECK_EQ_U(info.mesh_count, 2);
        CHECK_EQ_U(info.frame_count, 3);
        CHECK_EQ_U(ossa_model_warning_count(model), 0);
        ossa_model_free(model);
    }

    /* Defaults from init, a forced format, a name, and no error record. */
    ossa_load_options_init(&opt);
    model = NULL;
    CHECK_OK(ossa_load_memory(small_dpm.data, small_dpm.size, &opt, &model, NULL));
    ossa_model_free(model);
    opt.format = OSSA_FORMAT_DPM;
    opt.name = "models/test/small.dpm";
    model = NULL;
    CHECK_OK(ossa_load_memory(small_dpm.data, small_dpm.size, &opt, &model, &err));
    CHECK(model != NULL);
    ossa_model_free(model);

    /* The caller's buffer may go away right after loading: the model keeps what it needs. */
    {
        uint8_t *copy = malloc(small_dpm.size);
        ossa_mesh_info mesh;
        memcpy(copy, small_dpm.data, small_dpm.size);
        model = NULL;
        CHECK_OK(ossa_load_memory(copy, small_dpm.size, NULL, &model, NULL));
        memset(copy, 0xee, small_dpm.size);
        free(copy);
        if (model) {
            CHECK_OK(ossa_model_get_mesh(model, 0, &mesh));
            CHECK_STR(mesh.shader, "models/test/body");
            CHECK_EQ_U(mesh.indices[5], small.meshes[0].indices[5]);
            ossa_model_free(model);
        }
    }

    /* Strict mode accepts a clean file. */
    opt.flags = OSSA_LOAD_STRICT;
    model = NULL;
    CHECK_OK(ossa_load_memory(small_dpm.data, small_dpm.size, &opt, &model, &err));
    ossa_model_free(model);
}

static void test_load_file(const char *dir)
{
    char path[4096];
    ossa_model *model = NULL, *out;
    ossa_model_info a, b;
    ossa_error err;
    ossa_load_options opt;
    uint8_t *bad;

    snprintf(path, sizeof path, "%s/small.dpm", dir);
    CHECK(fx_write_file(path, small_dpm.data, small_dpm.size) == 0);
    CHECK_OK(ossa_load_file(path, NULL, &model, &err));
    if (model) {
        ossa_model *mem = NULL;
        CHECK_OK(ossa_model_get_info(model, &a));
        CHECK_OK(ossa_load_memory(small_dpm.data, small_dpm.size, NULL, &mem, NULL));
        if (mem) {
            CHECK_OK(ossa_model_get_info(mem, &b));
            CHECK(memcmp(&a, &b, sizeof a) == 0);
            ossa_model_free(mem);
        }
        ossa_model_free(model);
    }

    /* Content decides, not the extension. */
    snprintf(path, sizeof path, "%s/small.bin", dir);
    CHECK(fx_write_file(path, small_dpm.data, small_dpm.size) == 0);
    model = NULL;
    CHECK_OK(ossa_load_file(path, NULL, &model, NULL));
    ossa_model_free(model);

    /* A nonexistent path: NOT_FOUND, naming the file, no byte offset. */
    snprintf(path, sizeof path, "%s/missing.dpm", dir);
    out = SENTINEL;
    preset_error(&err);
    CHECK_RESULT(ossa_load_file(path, NULL, &out, &err), OSSA_ERR_NOT_FOUND);
    CHECK(out == SENTINEL);
    check_error_record(&err, OSSA_ERR_NOT_FOUND, "missing.dpm", 0, 0);
    CHECK(err.offset == UINT64_MAX);
    CHECK_EQ_U(err.line, 0);
    CHECK_RESULT(ossa_load_file(path, NULL, &out, NULL), OSSA_ERR_NOT_FOUND);
    CHECK(out == SENTINEL);

    /* A directory cannot be read as a file. */
    snprintf(path, sizeof path, "%s/subdir.dpm", dir);
    CHECK(mkdir(path, 0700) == 0);
    out = SENTINEL;
    preset_error(&err);
    CHECK_RESULT(ossa_load_file(path, NULL, &out, &err), OSSA_ERR_IO);
    CHECK(out == SENTINEL);
    check_error_record(&err, OSSA_ERR_IO, NULL, 0, 0);

    /* A broken file on disk: the message says which file. */
    bad = corrupt_copy();
    fx_set_u32(bad + small_layout.ofs_bones + 2 * FX_BONE_SIZE + FX_BONE_PARENT, 3);
    snprintf(path, sizeof path, "%s/bad_parent.dpm", dir);
    CHECK(fx_write_file(path, bad, small_dpm.size) == 0);
    free(bad);
    out = SENTINEL;
    preset_error(&err);
    CHECK_RESULT(ossa_load_file(path, NULL, &out, &err), OSSA_ERR_MALFORMED);
    CHECK(out == SENTINEL);
    check_error_record(&err, OSSA_ERR_MALFORMED, "bad_parent.dpm", 1, small_dpm.size);
    if (!contains_nocase(err.message, "bone"))
        CHECK(!"message for a bad parent mentions the bone");

    /* An empty file. */
    snprintf(path, sizeof path, "%s/empty.dpm", dir);
    CHECK(fx_write_file(path, "", 0) == 0);
    out = SENTINEL;
    preset_error(&err);
    {
        uint32_t r = ossa_load_file(path, NULL, &out, &err);
        CHECK(r == OSSA_ERR_UNKNOWN_FORMAT || r == OSSA_ERR_TRUNCATED);
        CHECK(out == SENTINEL);
        if (r != OSSA_OK)
            check_error_record(&err, r, NULL, 0, 0);
    }

    /* Options go through ossa_load_file too. */
    snprintf(path, sizeof path, "%s/small.dpm", dir);
    ossa_load_options_init(&opt);
    opt.size = 4;
    out = SENTINEL;
    CHECK_RESULT(ossa_load_file(path, &opt, &out, NULL), OSSA_ERR_INVALID_ARGUMENT);
    CHECK(out == SENTINEL);
    ossa_load_options_init(&opt);
    opt.max_bytes = 1;
    preset_error(&err);
    CHECK_RESULT(ossa_load_file(path, &opt, &out, &err), OSSA_ERR_LIMIT);
    CHECK(out == SENTINEL);
    check_error_record(&err, OSSA_ERR_LIMIT, NULL, 0, 0);
}

/* A read callback serving one file, small.dpm, as heap copies; release frees them, so any later use
   of the bytes by the library is a use-after-free the sanitizers see. Every other path (the
   model's .framegroups sidecar) does not exist. */
typedef struct io_state {
    int reads, releases, misses;
} io_state;

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static uint32_t io_read(void *user, const char *path, const uint8_t **data, size_t *size, void **token)
{
    io_state *s = user;
    uint8_t *copy;
    if (!ends_with(path, "small.dpm")) {
        s->misses++;
        return OSSA_ERR_NOT_FOUND;
    }
    copy = malloc(small_dpm.size);
    memcpy(copy, small_dpm.data, small_dpm.size);
    *data = copy;
    *size = small_dpm.size;
    *token = copy;
    s->reads++;
    return OSSA_OK;
}

static void io_release(void *user, void *token)
{
    io_state *s = user;
    memset(token, 0xee, small_dpm.size);
    free(token);
    s->releases++;
}

static void test_file_io_callbacks(const char *dir)
{
    char path[4096];
    io_state state = {0, 0, 0};
    ossa_file_io io;
    ossa_load_options opt;
    ossa_model *model = NULL;

    /* The file exists on disk, but with io the path is one of io's, relative: an absolute one is
       refused before io is asked, and nothing is read from disk either. */
    snprintf(path, sizeof path, "%s/small.dpm", dir);
    io.user = &state;
    io.read = io_read;
    io.release = io_release;
    ossa_load_options_init(&opt);
    opt.io = &io;
    CHECK_RESULT(ossa_load_file(path, &opt, &model, NULL), OSSA_ERR_INVALID_ARGUMENT);
    CHECK(model == NULL);
    CHECK_EQ_I(state.reads + state.misses, 0);
    /* The main file and its sidecar lookup both go through io. */
    CHECK_OK(ossa_load_file("models/test/small.dpm", &opt, &model, NULL));
    CHECK_EQ_I(state.reads, 1);
    CHECK_EQ_I(state.misses, 1);
    CHECK_EQ_I(state.releases, state.reads);
    if (model) {
        ossa_mesh_info mesh;
        CHECK_OK(ossa_model_get_mesh(model, 0, &mesh));
        CHECK_STR(mesh.shader, "models/test/body");
        ossa_model_free(model);
    }
    CHECK_EQ_I(state.releases, state.reads);
}

static void test_null_arguments(void)
{
    ossa_model *out = SENTINEL;
    ossa_error err;

    preset_error(&err);
    CHECK_RESULT(ossa_load_memory(NULL, small_dpm.size, NULL, &out, &err), OSSA_ERR_NULL_ARGUMENT);
    CHECK(out == SENTINEL);
    check_error_record(&err, OSSA_ERR_NULL_ARGUMENT, NULL, 0, 0);
    CHECK_RESULT(ossa_load_memory(NULL, 0, NULL, &out, NULL), OSSA_ERR_NULL_ARGUMENT);
    CHECK(out == SENTINEL);
    preset_error(&err);
    CHECK_RESULT(ossa_load_memory(small_dpm.data, small_dpm.size, NULL, NULL, &err), OSSA_ERR_NULL_ARGUMENT);
    check_error_record(&err, OSSA_ERR_NULL_ARGUMENT, NULL, 0, 0);

    preset_error(&err);
    CHECK_RESULT(ossa_load_file(NULL, NULL, &out, &err), OSSA_ERR_NULL_ARGUMENT);
    CHECK(out == SENTINEL);
    check_error_record(&err, OSSA_ERR_NULL_ARGUMENT, NULL, 0, 0);
    CHECK_RESULT(ossa_load_file("/nonexistent/x.dpm", NULL, NULL, NULL), OSSA_ERR_NULL_ARGUMENT);

    CHECK_RESULT(ossa_model_bind(NULL, NULL, &out, NULL), OSSA_ERR_NULL_ARGUMENT);
    CHECK(out == SENTINEL);
}

static void test_invalid_options(void)
{
    static const uint32_t bad_sizes[] = {0, 4};
    static const uint32_t bad_formats[] = {OSSA_FORMAT_IQM + 1, 999, 0xffffffffu};
    ossa_load_options opt;
    size_t i;

    for (i = 0; i < sizeof bad_sizes / sizeof bad_sizes[0]; i++) {
        check_context("options.size %u", (unsigned)bad_sizes[i]);
        ossa_load_options_init(&opt);
        opt.size = bad_sizes[i];
        expect_load_error(small_dpm.data, small_dpm.size, &opt, OSSA_ERR_INVALID_ARGUMENT, NULL, 0);
    }
    for (i = 0; i < sizeof bad_formats / sizeof bad_formats[0]; i++) {
        check_context("options.format %u", (unsigned)bad_formats[i]);
        ossa_load_options_init(&opt);
        opt.format = bad_formats[i];
        expect_load_error(small_dpm.data, small_dpm.size, &opt, OSSA_ERR_INVALID_ARGUMENT, NULL, 0);
    }
    check_context(NULL);
}

static void test_unknown_format(void)
{
    uint8_t garbage[256];
    static const char text[] = "this is not a model file at all\n";
    ossa_model *out = SENTINEL;
    size_t i;

    for (i = 0; i < sizeof garbage; i++)
        garbage[i] = (uint8_t)(i * 37 + 11);
    expect_load_error(garbage, sizeof garbage, NULL, OSSA_ERR_UNKNOWN_FORMAT, NULL, 0);
    expect_load_error((const uint8_t *)text, sizeof text - 1, NULL, OSSA_ERR_UNKNOWN_FORMAT, NULL, 0);
    CHECK_RESULT(ossa_load_memory(garbage, sizeof garbage, NULL, &out, NULL), OSSA_ERR_UNKNOWN_FORMAT);
    CHECK(out == SENTINEL);

    /* The id is all 16 bytes, the NUL included. */
    {
        uint8_t *p = corrupt_copy();
        p[15] = 'X';
        expect_load_error(p, small_dpm.size, NULL, OSSA_ERR_UNKNOWN_FORMAT, NULL, 0);
        free(p);
    }
}

static void test_truncations(void)
{
    ossa_load_options forced;
    size_t n;

    ossa_load_options_init(&forced);
    forced.format = OSSA_FORMAT_DPM;
    /* Every prefix of the file cuts some structure it declares (the file has no slack). */
    for (n = 1; n < small_dpm.size; n++) {
        check_context("DPM forced, truncated to %zu of %zu bytes", n, small_dpm.size);
        expect_load_error(small_dpm.data, n, &forced, OSSA_ERR_TRUNCATED, NULL, 1);
    }
    for (n = 16; n < small_dpm.size; n++) {
        check_context("auto-detected, truncated to %zu of %zu bytes", n, small_dpm.size);
        expect_load_error(small_dpm.data, n, NULL, OSSA_ERR_TRUNCATED, NULL, 1);
    }
    /* Shorter than the id, detection may give up first. */
    for (n = 0; n < 16; n++) {
        ossa_model *out = SENTINEL;
        uint32_t r = load_copy(small_dpm.data, n, NULL, &out, NULL);
        check_context("auto-detected, truncated to %zu bytes", n);
        CHECK(r == OSSA_ERR_TRUNCATED || r == OSSA_ERR_UNKNOWN_FORMAT);
        CHECK(out == SENTINEL);
    }
    {
        ossa_model *out = SENTINEL;
        uint32_t r = load_copy(small_dpm.data, 0, &forced, &out, NULL);
        check_context("DPM forced, empty");
        CHECK(r == OSSA_ERR_TRUNCATED || r == OSSA_ERR_UNKNOWN_FORMAT);
        CHECK(out == SENTINEL);
    }
    check_context(NULL);
}

/* Offsets and counts pointing past the end: TRUNCATED (or LIMIT for counts no input could justify),
   never a crash or a huge allocation. */
static void test_bad_offsets_and_counts(void)
{
    static const struct {
        const char *what;
        int field; /* 0: header; 1: mesh 0 header; 2: frame 1 header */
        uint32_t at, value;
        int malformed_too; /* a negative offset may also be called a broken rule */
    } cases[] = {
        {"ofs_bones past the end", 0, FX_HDR_OFS_BONES, 0xfffffff0u, 0},
        {"ofs_meshes past the end", 0, FX_HDR_OFS_MESHES, 0x7fffffffu, 0},
        {"ofs_frames at the very end", 0, FX_HDR_OFS_FRAMES, 0, 0},
        {"mesh ofs_verts past the end", 1, 40, 0xffffff00u, 0},
        {"mesh ofs_texcoords past the end", 1, 44, 0x10000000u, 0},
        {"mesh ofs_indices past the end", 1, 48, 0, 0},
        {"mesh ofs_groupids past the end", 1, 52, 0, 0},
        {"frame ofs_bonepositions past the end", 2, FX_FRAME_OFS_POSES, 0, 0},
        {"frame ofs_bonepositions negative", 2, FX_FRAME_OFS_POSES, 0xfffffffcu, 1},
    };
    size_t i;

    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint8_t *p = corrupt_copy();
        uint32_t at = cases[i].at, value = cases[i].value;
        if (cases[i].field == 1)
            at += small_layout.ofs_meshes;
        else if (cases[i].field == 2)
            at += small_layout.ofs_frames + FX_FRAME_SIZE;
        /* 0 stands for "just past the end": the structure starts inside the file and runs out. */
        if (value == 0)
            value = (uint32_t)small_dpm.size - 4;
        fx_set_u32(p + at, value);
        check_context("%s", cases[i].what);
        if (cases[i].malformed_too) {
            ossa_model *out = SENTINEL;
            ossa_error err;
            uint32_t r;
            preset_error(&err);
            r = load_copy(p, small_dpm.size, NULL, &out, &err);
            CHECK(r == OSSA_ERR_TRUNCATED || r == OSSA_ERR_MALFORMED);
            CHECK(out == SENTINEL);
            if (r != OSSA_OK)
                check_error_record(&err, r, NULL, 1, 0);
        } else {
            expect_load_error(p, small_dpm.size, NULL, OSSA_ERR_TRUNCATED, NULL, 1);
        }
        free(p);
    }

    /* Huge counts. */
    {
        static const struct {
            const char *what;
            int in_mesh;
            uint32_t at, value;
        } counts[] = {
            {"num_bones huge", 0, FX_HDR_NUM_BONES, 0xffffffffu},
            {"num_meshs huge", 0, FX_HDR_NUM_MESHES, 0x10000000u},
            {"num_frames huge", 0, FX_HDR_NUM_FRAMES, 0x7fffffffu},
            {"num_verts huge", 1, FX_MESH_NUM_VERTS, 0xffffffffu},
            {"num_tris huge", 1, FX_MESH_NUM_TRIS, 0x55555556u},
        };
        for (i = 0; i < sizeof counts / sizeof counts[0]; i++) {
            uint8_t *p = corrupt_copy();
            ossa_model *out = SENTINEL;
            ossa_error err;
            uint32_t r;
            fx_set_u32(p + counts[i].at + (counts[i].in_mesh ? small_layout.ofs_meshes : 0), counts[i].value);
            check_context("%s", counts[i].what);
            preset_error(&err);
            r = load_copy(p, small_dpm.size, NULL, &out, &err);
            CHECK(r == OSSA_ERR_TRUNCATED || r == OSSA_ERR_LIMIT || r == OSSA_ERR_MALFORMED);
            CHECK(out == SENTINEL);
            if (r != OSSA_OK)
                check_error_record(&err, r, NULL, 0, 0);
            free(p);
        }
    }

    /* A vertex declaring more influences than the file holds. */
    {
        uint8_t *p = corrupt_copy();
        ossa_model *out = SENTINEL;
        uint32_t r;
        fx_set_u32(p + small_layout.ofs_verts[1] + 2 * (4 + FX_BONEVERT_SIZE), 0xfffffff0u);
        check_context("numbones of the last vertex huge");
        r = load_copy(p, small_dpm.size, NULL, &out, NULL);
        CHECK(r == OSSA_ERR_TRUNCATED || r == OSSA_ERR_LIMIT || r == OSSA_ERR_MALFORMED);
        CHECK(out == SENTINEL);
        free(p);
    }
    check_context(NULL);
}

static void test_malformed(void)
{
    const uint32_t bones = small_layout.ofs_bones;
    const size_t v4i0 = fx_influence_offset(&small, &small_layout, 0, 4, 0);
    const size_t v2i1 = fx_influence_offset(&small, &small_layout, 0, 2, 1);
    const size_t v5i2 = fx_influence_offset(&small, &small_layout, 0, 5, 2);
    const size_t pose_f1b2 = small_layout.ofs_poses[1] + 2 * FX_POSE_SIZE;
    /* IEEE-754 binary32 bit patterns, written big-endian like every other field. */
    const uint32_t nan = 0x7fc00000u, inf = 0x7f800000u, neg_inf = 0xff800000u;
    const struct {
        const char *what;
        const char *word; /* the structure the message must name */
        size_t at;
        uint32_t value;
    } cases[] = {
        {"bone 1 is its own parent", "bone", bones + 1 * FX_BONE_SIZE + FX_BONE_PARENT, 1},
        {"bone 2 has a later parent", "bone", bones + 2 * FX_BONE_SIZE + FX_BONE_PARENT, 3},
        {"bone 1 has parent -2", "bone", bones + 1 * FX_BONE_SIZE + FX_BONE_PARENT, (uint32_t)-2},
        {"bone 0 has parent 0", "bone", bones + 0 * FX_BONE_SIZE + FX_BONE_PARENT, 0},
        {"influence names bone 4 of 4", "vertex", v2i1 + FX_BONEVERT_BONE, 4},
        {"influence names bone 0xffffffff", "vertex", v5i2 + FX_BONEVERT_BONE, 0xffffffffu},
        {"triangle index == vertex count", "triangle", small_layout.ofs_indices[0] + 4 * 4, 6},
        {"triangle index in the second mesh huge", "triangle", small_layout.ofs_indices[1] + 2 * 4, 0x80000000u},
        {"zero frames", "frame", FX_HDR_NUM_FRAMES, 0},
        {"NaN vertex origin", "vertex", v4i0 + 4, nan},
        {"NaN influence", "vertex", v4i0 + FX_BONEVERT_INFLUENCE, nan},
        {"infinite normal", "vertex", v2i1 + FX_BONEVERT_NORMAL + 8, neg_inf},
        {"infinite bone pose", "frame", pose_f1b2 + 5 * 4, inf},
        {"NaN bone pose translation", "frame", pose_f1b2 + 11 * 4, nan},
        {"NaN texcoord", "texcoord", small_layout.ofs_texcoords[0] + 3 * 4, nan},
    };
    size_t i;

    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint8_t *p = corrupt_copy();
        ossa_load_options strict;
        fx_set_u32(p + cases[i].at, cases[i].value);
        check_context("%s", cases[i].what);
        expect_load_error(p, small_dpm.size, NULL, OSSA_ERR_MALFORMED, cases[i].word, 1);
        /* Neither mode accepts these. */
        ossa_load_options_init(&strict);
        strict.flags = OSSA_LOAD_STRICT;
        expect_load_error(p, small_dpm.size, &strict, OSSA_ERR_MALFORMED, cases[i].word, 1);
        free(p);
    }
    check_context(NULL);

    /* A memory load names the file after options->name. */
    {
        uint8_t *p = corrupt_copy();
        ossa_load_options named;
        ossa_load_options_init(&named);
        named.name = "models/test/broken.dpm";
        fx_set_u32(p + bones + 1 * FX_BONE_SIZE + FX_BONE_PARENT, 1);
        check_context("memory load named by options->name");
        expect_load_error(p, small_dpm.size, &named, OSSA_ERR_MALFORMED, "broken.dpm", 1);
        check_context(NULL);
        free(p);
    }
}

static void test_unsupported(void)
{
    static const uint32_t types[] = {1, 3, 0xffffffffu};
    size_t i;

    for (i = 0; i < sizeof types / sizeof types[0]; i++) {
        uint8_t *p = corrupt_copy();
        fx_set_u32(p + FX_HDR_TYPE, types[i]);
        check_context("DPM type %u", (unsigned)types[i]);
        expect_load_error(p, small_dpm.size, NULL, OSSA_ERR_UNSUPPORTED, NULL, 0);
        free(p);
    }
    check_context(NULL);

    /* An SKM header (little-endian "SKM1", type 2) declaring no meshes: qfusion requires one. */
    {
        static const uint8_t skm[24] = {'S', 'K', 'M', '1', 2, 0, 0, 0, 24, 0, 0, 0,
                                        1, 0, 0, 0,          0, 0, 0, 0, 24, 0, 0, 0};
        ossa_load_options opt;
        ossa_model *out = SENTINEL;
        ossa_error err;
        uint32_t r;
        ossa_load_options_init(&opt);
        opt.format = OSSA_FORMAT_SKM;
        preset_error(&err);
        r = load_copy(skm, sizeof skm, &opt, &out, &err);
        CHECK_RESULT(r, OSSA_ERR_MALFORMED);
        CHECK(out == SENTINEL);
        check_error_record(&err, OSSA_ERR_MALFORMED, "mesh count", 1, sizeof skm);
        CHECK_EQ_U(err.offset, 16);
        /* A DPM forced as SKM is no SKM. */
        out = SENTINEL;
        r = load_copy(small_dpm.data, small_dpm.size, &opt, &out, NULL);
        CHECK(r != OSSA_OK);
        CHECK(out == SENTINEL);
    }
}

static void test_limit(void)
{
    ossa_load_options opt;
    ossa_model *model = NULL;

    ossa_load_options_init(&opt);
    opt.max_bytes = 1;
    expect_load_error(small_dpm.data, small_dpm.size, &opt, OSSA_ERR_LIMIT, NULL, 0);
    opt.max_bytes = 64;
    expect_load_error(small_dpm.data, small_dpm.size, &opt, OSSA_ERR_LIMIT, NULL, 0);
    opt.max_bytes = (uint64_t)1 << 24;
    CHECK_OK(ossa_load_memory(small_dpm.data, small_dpm.size, &opt, &model, NULL));
    ossa_model_free(model);
}

/* What the default mode tolerates (and warns about) and strict mode rejects. */
static void test_tolerated(void)
{
    ossa_load_options strict;
    ossa_model *model;
    uint32_t i, n;

    ossa_load_options_init(&strict);
    strict.flags = OSSA_LOAD_STRICT;

    /* A name filling its whole 32-byte field, without a terminator. */
    {
        static const char long_name[] = "tag_weapon_with_a_very_long_name";
        fx_model m;
        fx_buf dpm = {NULL, 0, 0};
        fx_make_small(&m);
        CHECK_EQ_U(strlen(long_name), 32);
        memcpy(m.bones[3].name, long_name, 33);
        fx_write_dpm(&m, &dpm, NULL);
        model = NULL;
        check_context("32-character bone name");
        CHECK_OK(ossa_load_memory(dpm.data, dpm.size, NULL, &model, NULL));
        if (model) {
            ossa_bone_info bone;
            CHECK_OK(ossa_model_get_bone(model, 3, &bone));
            CHECK_STR(bone.name, long_name);
            CHECK_EQ_I(ossa_model_find_bone(model, long_name), 3);
            n = ossa_model_warning_count(model);
            CHECK(n > 0);
            for (i = 0; i < n; i++) {
                const char *w = ossa_model_warning(model, i);
                CHECK(w != NULL && w[0] != '\0');
            }
            CHECK(ossa_model_warning(model, n) == NULL);
            ossa_model_free(model);
        }
        expect_load_error(dpm.data, dpm.size, &strict, OSSA_ERR_MALFORMED, NULL, 1);
        fx_buf_free(&dpm);
        fx_model_free(&m);
    }

    /* An influence sum off by 5e-3. */
    {
        uint8_t *p = corrupt_copy();
        size_t at = fx_influence_offset(&small, &small_layout, 0, 3, 1) + FX_BONEVERT_INFLUENCE;
        fx_set_f32(p + at, 0.755f);
        check_context("influence sum 1.005");
        model = NULL;
        CHECK_OK(ossa_load_memory(p, small_dpm.size, NULL, &model, NULL));
        if (model) {
            CHECK(ossa_model_warning_count(model) > 0);
            CHECK(ossa_model_warning(model, 0) != NULL);
            ossa_model_free(model);
        }
        expect_load_error(p, small_dpm.size, &strict, OSSA_ERR_MALFORMED, "vertex", 1);
        free(p);
    }
    check_context(NULL);
}

/* A Sims CMX with two skeletons, `adult` then `child`, each ROOT > SPINE > HEAD without rotations
   (tests/sims_skeleton.rs has the same file): HEAD is at the sum of the translations, adult
   (0, 3 + 1.5 + 0.75, 0.25), child (0, 2 + 1 + 0.5, 0.125). */
static const char TWO_SKELETONS[] =
    "// Character File. Copyright 1997, Maxis Inc.\n"
    "version 300\n"
    "2\n"
    "adult\n3\n"
    "ROOT\nNULL\n0\n| 0 3 0 |\n| 0 0 0 1 |\n1\n1\n1\n0\n0\n"
    "SPINE\nROOT\n0\n| 0 1.5 0 |\n| 0 0 0 1 |\n0\n1\n1\n0\n0\n"
    "HEAD\nSPINE\n0\n| 0 0.75 0.25 |\n| 0 0 0 1 |\n0\n1\n1\n0\n0\n"
    "child\n3\n"
    "ROOT\nNULL\n0\n| 0 2 0 |\n| 0 0 0 1 |\n1\n1\n1\n0\n0\n"
    "SPINE\nROOT\n0\n| 0 1 0 |\n| 0 0 0 1 |\n0\n1\n1\n0\n0\n"
    "HEAD\nSPINE\n0\n| 0 0.5 0.125 |\n| 0 0 0 1 |\n0\n1\n1\n0\n0\n"
    "0\n0\n";

/* Loads TWO_SKELETONS choosing `name` and checks the bones and HEAD's rest position. */
static void check_skeleton_choice(const char *name, double head_y, double head_z)
{
    static const char *const bones[3] = {"ROOT", "SPINE", "HEAD"};
    ossa_load_options opt;
    ossa_model *model = NULL;
    ossa_model_info info;
    ossa_bone_info bone;
    ossa_frame_blend rest = {0, 1.0f};
    ossa_mat3x4 posed[3];
    ossa_error err;
    uint32_t i;

    check_context("skeleton %s", name ? name : "NULL");
    ossa_load_options_init(&opt);
    opt.name = "characters/two-skeletons.cmx";
    opt.skeleton = name;
    if (!CHECK_OK(ossa_load_memory((const uint8_t *)TWO_SKELETONS, strlen(TWO_SKELETONS), &opt, &model, &err)))
        return;
    CHECK_OK(ossa_model_get_info(model, &info));
    CHECK_EQ_U(info.format, OSSA_FORMAT_SIMS_CMX);
    CHECK_EQ_U(info.bone_count, 3);
    CHECK_EQ_U(info.mesh_count, 0);
    for (i = 0; i < 3 && i < info.bone_count; i++) {
        CHECK_OK(ossa_model_get_bone(model, i, &bone));
        CHECK_STR(bone.name, bones[i]);
        CHECK_EQ_I(bone.parent, (int32_t)i - 1);
    }
    if (info.bone_count == 3 && CHECK_OK(ossa_pose_frames(model, &rest, 1, NULL, posed, 3))) {
        CHECK_NEAR(posed[2].m[3], 0.0, 0.0);
        CHECK_NEAR(posed[2].m[7], head_y, 0.0);
        CHECK_NEAR(posed[2].m[11], head_z, 0.0);
    }
    ossa_model_free(model);
}

/* ossa_load_options.skeleton picks one skeleton of a multi-skeleton file: NULL the first, a
   name exactly or else ignoring ASCII case; an unknown name is NOT_FOUND listing the names. */
static void test_skeleton_choice(void)
{
    ossa_load_options opt;
    ossa_model *out = SENTINEL;
    ossa_error err;

    check_skeleton_choice(NULL, 5.25, 0.25);
    check_skeleton_choice("adult", 5.25, 0.25);
    check_skeleton_choice("child", 3.5, 0.125);
    check_skeleton_choice("CHILD", 3.5, 0.125);

    check_context("skeleton teen");
    ossa_load_options_init(&opt);
    opt.format = OSSA_FORMAT_SIMS_CMX;
    opt.skeleton = "teen";
    preset_error(&err);
    CHECK_RESULT(load_copy((const uint8_t *)TWO_SKELETONS, strlen(TWO_SKELETONS), &opt, &out, &err),
                 OSSA_ERR_NOT_FOUND);
    CHECK(out == SENTINEL);
    check_error_record(&err, OSSA_ERR_NOT_FOUND, "teen", 0, 0);
    if (!CHECK(strstr(err.message, "no skeleton named \"teen\" (it has adult, child)") != NULL))
        fprintf(stderr, "    message \"%s\"\n", err.message);
    check_context(NULL);
}

int main(void)
{
    char dir[1024];

    fx_make_small(&small);
    fx_write_dpm(&small, &small_dpm, &small_layout);

    test_load_memory_ok();
    test_null_arguments();
    test_invalid_options();
    test_unknown_format();
    test_truncations();
    test_bad_offsets_and_counts();
    test_malformed();
    test_unsupported();
    test_limit();
    test_tolerated();
    test_skeleton_choice();
    if (fx_make_temp_dir(dir, sizeof dir) == 0) {
        test_load_file(dir);
        test_file_io_callbacks(dir);
        fx_remove_temp_dir(dir);
    } else {
        CHECK(!"could not make a temporary directory");
    }

    fx_buf_free(&small_dpm);
    fx_model_free(&small);
    return check_finish("test_load");
}
