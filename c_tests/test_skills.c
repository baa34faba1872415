/* The Sims 1 skills added to a loaded skeleton: ossa_model_add_skills and
 * ossa_model_add_skills_memory.
 *
 * A filesystem of callbacks (ossa_file_io) serves the corpus under the game's own names, without
 * the corpus prefixes ("characters/adult-skeleton.cmx", "characters/xskill-A2O-idle1.cfp"). The
 * adult body (an SKN) is bound to the adult skeleton (a CMX), the idle and walking skill files are
 * added, and each scene is checked against what its skill file declares (frames, duration), then
 * played: the skinned body keeps its feet on the floor and its top above 4.5 at several times,
 * and frame 0 (the rest pose) is unchanged. Also: which files are asked for and every read
 * released once; a missing CFP is OSSA_ERR_NOT_FOUND naming it; a CFP name trying to escape is
 * OSSA_ERR_INVALID_ARGUMENT and never asked for; the OS filesystem; NULL and misuse.
 *
 * "characters/a2o-walking-loop.cmx" is the corpus's ross-walking-loop.cmx without its first skill
 * (a2o-walking-start, whose CFP the corpus lacks); the whole file gives the NOT_FOUND case.
 * Needs $OSSA_CORPUS/sims and says so when it is absent; the NULL checks run without it. */
#define _POSIX_C_SOURCE 200809L

#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fixture.h"
#include "memfs.h"

/* Failed calls must leave *out alone: it is preset to this and compared afterwards. */
static char sentinel_storage;
#define SENTINEL ((ossa_model *)(void *)&sentinel_storage)

#define DIR "characters/"

static void preset_error(ossa_error *err)
{
    memset(err, 0x5a, sizeof *err);
    err->message[sizeof err->message - 1] = '\0';
}

/* ---- the corpus files, and what a skill file declares ---- */

typedef struct corpus {
    fx_buf skeleton, body, idle, walking, walking_bcf;
    fx_buf cfp_idle, cfp_walk, cfp_fast;
    fx_buf walking_loop; /* walking without its first skill */
    fx_buf evil;         /* idle with the animation name "../../x" */
} corpus;

/* Where the line whose text (without CR) is `text` starts in `b`; -1 if none. */
static long find_line(const fx_buf *b, const char *text)
{
    size_t at = 0, n = strlen(text);
    while (at < b->size) {
        const uint8_t *end = memchr(b->data + at, '\n', b->size - at);
        size_t len = end ? (size_t)(end - (b->data + at)) : b->size - at;
        size_t content = len > 0 && b->data[at + len - 1] == '\r' ? len - 1 : len;
        if (content == n && memcmp(b->data + at, text, n) == 0)
            return (long)at;
        at += len + 1;
    }
    return -1;
}

/* The text of the line after the one starting at `*at`, and moves `*at` to it. */
static int next_line(const fx_buf *b, size_t *at, char *out, size_t cap)
{
    const uint8_t *end;
    size_t len;
    end = memchr(b->data + *at, '\n', b->size - *at);
    if (end == NULL)
        return -1;
    *at = (size_t)(end - b->data) + 1;
    end = memchr(b->data + *at, '\n', b->size - *at);
    len = end ? (size_t)(end - (b->data + *at)) : b->size - *at;
    if (len > 0 && b->data[*at + len - 1] == '\r')
        len--;
    if (len >= cap)
        return -1;
    memcpy(out, b->data + *at, len);
    out[len] = '\0';
    return 0;
}

/* What a CMX text declares for the skill named `name`: its duration (ms) and its first
   motion's frame count, read from the lines after the name (animation, duration, distance,
   moving, translation count, rotation count, motion count, bone, frame count). */
typedef struct skill_decl {
    double duration_ms;
    unsigned frames;
} skill_decl;

static int read_skill_decl(const fx_buf *cmx, const char *name, skill_decl *out)
{
    char line[128];
    long start = find_line(cmx, name);
    size_t at;
    int i;
    if (start < 0)
        return -1;
    at = (size_t)start;
    if (next_line(cmx, &at, line, sizeof line) || next_line(cmx, &at, line, sizeof line))
        return -1;
    out->duration_ms = strtod(line, NULL);
    for (i = 0; i < 7; i++)
        if (next_line(cmx, &at, line, sizeof line))
            return -1;
    out->frames = (unsigned)strtoul(line, NULL, 10);
    return 0;
}

static int load_corpus(corpus *c, const char *dir)
{
    static const char *const names[] = {
        "so_adult-skeleton.cmx",          "so_xskin-b001mafit_01-PELVIS-BODY.skn", "so_adult-idle1.cmx",
        "so_ross-walking-loop.cmx",       "olt_ross-walking-loop.cmx.bcf",         "so_xskill-A2O-idle1.cfp",
        "so_xskill-A2O-walking-loop.cfp", "so_xskill-A2O-walking-fast-loop.cfp",
    };
    fx_buf *bufs[8];
    char path[8192];
    static const char header[] = "// Character File. Copyright 1997, Maxis Inc.\r\nversion 300\r\n0\r\n0\r\n2\r\n";
    static const char escape[] = "../../x";
    long at;
    size_t i;
    memset(c, 0, sizeof *c);
    bufs[0] = &c->skeleton;
    bufs[1] = &c->body;
    bufs[2] = &c->idle;
    bufs[3] = &c->walking;
    bufs[4] = &c->walking_bcf;
    bufs[5] = &c->cfp_idle;
    bufs[6] = &c->cfp_walk;
    bufs[7] = &c->cfp_fast;
    for (i = 0; i < 8; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (fx_read_file(path, bufs[i]) != 0 || bufs[i]->size == 0)
            return -1;
    }
    /* The walking file from its second skill on, under a header that counts two skills. */
    at = find_line(&c->walking, "a2o-walking-fast-loop");
    if (at < 0)
        return -1;
    fx_put_bytes(&c->walking_loop, header, strlen(header));
    fx_put_bytes(&c->walking_loop, c->walking.data + at, c->walking.size - (size_t)at);
    /* The idle file pointing its skill at ../../x.cfp. */
    at = find_line(&c->idle, "xskill-A2O-idle1");
    if (at < 0)
        return -1;
    fx_put_bytes(&c->evil, c->idle.data, (size_t)at);
    fx_put_bytes(&c->evil, escape, strlen(escape));
    fx_put_bytes(&c->evil, c->idle.data + at + strlen("xskill-A2O-idle1"),
                 c->idle.size - (size_t)at - strlen("xskill-A2O-idle1"));
    return 0;
}

static void free_corpus(corpus *c)
{
    fx_buf_free(&c->skeleton);
    fx_buf_free(&c->body);
    fx_buf_free(&c->idle);
    fx_buf_free(&c->walking);
    fx_buf_free(&c->walking_bcf);
    fx_buf_free(&c->cfp_idle);
    fx_buf_free(&c->cfp_walk);
    fx_buf_free(&c->cfp_fast);
    fx_buf_free(&c->walking_loop);
    fx_buf_free(&c->evil);
}

static void serve_corpus(mem_fs *fs, const corpus *c)
{
    fs_init(fs);
    fs_add(fs, DIR "adult-skeleton.cmx", &c->skeleton);
    fs_add(fs, DIR "xskin-b001mafit_01-PELVIS-BODY.skn", &c->body);
    fs_add(fs, DIR "adult-idle1.cmx", &c->idle);
    fs_add(fs, DIR "ross-walking-loop.cmx", &c->walking);
    fs_add(fs, DIR "ross-walking-loop.cmx.bcf", &c->walking_bcf);
    fs_add(fs, DIR "a2o-walking-loop.cmx", &c->walking_loop);
    fs_add(fs, DIR "evil.cmx", &c->evil);
    fs_add(fs, DIR "xskill-A2O-idle1.cfp", &c->cfp_idle);
    fs_add(fs, DIR "xskill-A2O-walking-loop.cfp", &c->cfp_walk);
    fs_add(fs, DIR "xskill-A2O-walking-fast-loop.cfp", &c->cfp_fast);
}

/* ---- posing and skinning ---- */

/* Model-space bones of `blend_count` blends; NULL on failure. */
static ossa_mat3x4 *pose(const ossa_model *model, const ossa_frame_blend *blends, size_t blend_count,
                         uint32_t bone_count)
{
    ossa_mat3x4 *bones = malloc(sizeof *bones * bone_count);
    if (bones == NULL || !CHECK_OK(ossa_pose_frames(model, blends, blend_count, NULL, bones, bone_count))) {
        free(bones);
        return NULL;
    }
    return bones;
}

/* Positions of mesh 0 skinned with `bones` (3 floats a vertex); NULL on failure. */
static float *skin_body(const ossa_model *model, const ossa_mat3x4 *bones, uint32_t bone_count, uint32_t *count)
{
    ossa_mesh_info mesh;
    ossa_skin_target t;
    float *out;
    if (!CHECK_OK(ossa_model_get_mesh(model, 0, &mesh)) || mesh.vertex_count == 0)
        return NULL;
    out = malloc(12 * (size_t)mesh.vertex_count);
    if (out == NULL)
        return NULL;
    t.positions = out;
    t.position_stride = 12;
    t.position_bytes = 12 * (size_t)mesh.vertex_count;
    t.normals = NULL;
    t.normal_stride = 0;
    t.normal_bytes = 0;
    if (!CHECK_OK(ossa_skin_mesh(model, 0, bones, bone_count, 0, mesh.vertex_count, 0, &t))) {
        free(out);
        return NULL;
    }
    *count = mesh.vertex_count;
    return out;
}

static void y_range(const float *p, uint32_t count, float *lo, float *hi)
{
    uint32_t i;
    *lo = INFINITY;
    *hi = -INFINITY;
    for (i = 0; i < count; i++) {
        float y = p[3 * i + 1];
        *lo = y < *lo ? y : *lo;
        *hi = y > *hi ? y : *hi;
    }
}

/* Scene `scene` played at several times: the skinned body on the floor with its top above 4.5. */
static void play_scene(const ossa_model *model, uint32_t scene, uint32_t bone_count)
{
    static const double times[] = {0.0, 0.1, 0.37, 0.5, 0.81, 1.0, 1.25, 1.9};
    ossa_animation_info a;
    float lowest = INFINITY, highest_low = -INFINITY, lowest_top = INFINITY;
    size_t k;
    if (!CHECK_OK(ossa_model_get_animation(model, scene, &a)))
        return;
    for (k = 0; k < sizeof times / sizeof times[0]; k++) {
        ossa_frame_blend blends[2];
        size_t n = 0;
        ossa_mat3x4 *bones;
        float *p, lo, hi;
        uint32_t count = 0;
        check_context("%s at %.2f s", a.name, times[k]);
        if (!CHECK_OK(ossa_animation_blend(model, scene, times[k], blends, &n)))
            continue;
        CHECK(n >= 1 && n <= 2);
        CHECK(blends[0].frame >= a.first_frame && blends[0].frame < a.first_frame + a.frame_count);
        bones = pose(model, blends, n, bone_count);
        p = bones ? skin_body(model, bones, bone_count, &count) : NULL;
        if (p) {
            y_range(p, count, &lo, &hi);
            CHECK_NEAR(lo, 0, 0.1);
            CHECK(hi > 4.5f);
            lowest = lo < lowest ? lo : lowest;
            highest_low = lo > highest_low ? lo : highest_low;
            lowest_top = hi < lowest_top ? hi : lowest_top;
        }
        free(p);
        free(bones);
    }
    check_context(NULL);
    printf("%s: frames %u+%u at %.3f fps, looping %u; skinned body's lowest point y %.3f..%.3f, top >= %.3f\n",
           a.name, (unsigned)a.first_frame, (unsigned)a.frame_count, a.fps, (unsigned)a.looping, lowest, highest_low,
           lowest_top);
}

/* Scene `scene` is skill `name` of `cmx` at `first`: its frames, and the rate that plays them
   in the declared duration. */
static void check_scene(const ossa_model *model, uint32_t scene, const fx_buf *cmx, const char *name, uint32_t first)
{
    ossa_animation_info a;
    skill_decl d = {0, 0};
    check_context("scene %u (%s)", (unsigned)scene, name);
    if (CHECK(read_skill_decl(cmx, name, &d) == 0) && CHECK_OK(ossa_model_get_animation(model, scene, &a))) {
        CHECK_STR(a.name, name);
        CHECK_EQ_U(a.first_frame, first);
        CHECK_EQ_U(a.frame_count, d.frames);
        CHECK_NEAR(a.fps, d.frames * 1000.0 / d.duration_ms, 1e-3);
        CHECK_NEAR(a.frame_count * 1000.0 / a.fps, d.duration_ms, 0.5);
        CHECK_EQ_U(a.looping, strstr(name, "loop") != NULL);
    }
    check_context(NULL);
}

/* Scene `scene` is a2o-walking-loop: it moves the character 4.06978 units a play, and its
   events are the file's time properties (ms, bone, key, value), by time and in file order at
   one time. */
static void check_walk_events(const ossa_model *model, uint32_t scene)
{
    static const struct {
        unsigned ms;
        const char *bone, *key, *value;
    } listed[] = {
        {0, "ROOT", "interruptable", "0"},    {0, "L_TOE02", "anchor", "1"},     {166, "ROOT", "footstep", "2"},
        {366, "R_TOE02", "anchor", "2"},      {400, "L_TOE02", "anchor", "0"},   {466, "ROOT", "interruptable", "2"},
        {600, "ROOT", "interruptable", "0"},  {800, "ROOT", "footstep", "1"},    {1000, "L_TOE02", "anchor", "1"},
        {1033, "R_TOE02", "anchor", "0"},     {1100, "ROOT", "interruptable", "1"},
        {1233, "ROOT", "interruptable", "0"},
    };
    const uint32_t n = (uint32_t)(sizeof listed / sizeof listed[0]);
    ossa_animation_travel travel;
    ossa_animation_event e;
    uint32_t i;

    check_context("walk events");
    if (CHECK_OK(ossa_animation_get_travel(model, scene, &travel))) {
        CHECK_NEAR(travel.distance, 4.06978, 1e-6);
        CHECK_EQ_U(travel.moving, 1);
    }
    CHECK_EQ_U(ossa_animation_event_count(model, scene), n);
    for (i = 0; i < n; i++) {
        if (!CHECK_OK(ossa_animation_get_event(model, scene, i, &e)))
            continue;
        CHECK_NEAR(e.time, listed[i].ms / 1000.0, 1e-6);
        CHECK_EQ_I(e.bone, ossa_model_find_bone(model, listed[i].bone));
        CHECK_STR(e.key, listed[i].key);
        CHECK_STR(e.value, listed[i].value);
    }
    CHECK_RESULT(ossa_animation_get_event(model, scene, n, &e), OSSA_ERR_INVALID_ARGUMENT);
    CHECK_RESULT(ossa_animation_get_event(model, 99, 0, &e), OSSA_ERR_INVALID_ARGUMENT);
    CHECK_RESULT(ossa_animation_get_event(model, scene, 0, NULL), OSSA_ERR_NULL_ARGUMENT);
    CHECK_RESULT(ossa_animation_get_travel(model, 99, &travel), OSSA_ERR_INVALID_ARGUMENT);
    CHECK_EQ_U(ossa_animation_event_count(model, 99), 0);
    CHECK_EQ_U(ossa_animation_event_count(NULL, scene), 0);
    check_context(NULL);
}

/* ---- the tests ---- */

static void test_add_skills(const corpus *c)
{
    mem_fs fs;
    ossa_load_options opt;
    ossa_model *skeleton = NULL, *skin = NULL, *body = NULL, *idle = NULL, *model = NULL;
    ossa_model_info info;
    ossa_error err;

    serve_corpus(&fs, c);
    ossa_load_options_init(&opt);
    opt.io = &fs.io;
    check_context("load and bind");
    CHECK_OK(ossa_load_file(DIR "adult-skeleton.cmx", &opt, &skeleton, &err));
    CHECK_OK(ossa_load_file(DIR "xskin-b001mafit_01-PELVIS-BODY.skn", &opt, &skin, &err));
    if (skeleton && skin)
        CHECK_OK(ossa_model_bind(skin, skeleton, &body, &err));
    check_context(NULL);
    CHECK_RELEASED(&fs);
    if (!body)
        goto done;

    /* The idle file by path, then the walking file from memory. */
    fs_reset(&fs);
    check_context("idle");
    CHECK_OK(ossa_model_add_skills(body, DIR "adult-idle1.cmx", &opt, &idle, &err));
    CHECK_ASKED(&fs, DIR "adult-idle1.cmx", DIR "xskill-A2O-idle1.cfp", NULL);
    CHECK_RELEASED(&fs);
    fs_reset(&fs);
    check_context("walking");
    opt.name = DIR "a2o-walking-loop.cmx";
    if (idle)
        CHECK_OK(ossa_model_add_skills_memory(idle, c->walking_loop.data, c->walking_loop.size, &opt, &model, &err));
    opt.name = NULL;
    CHECK_ASKED(&fs, DIR "xskill-A2O-walking-fast-loop.cfp", DIR "xskill-A2O-walking-loop.cfp", NULL);
    CHECK_RELEASED(&fs);
    check_context(NULL);
    if (!model)
        goto done;

    /* Counts, and the inputs unchanged. */
    if (CHECK_OK(ossa_model_get_info(model, &info))) {
        CHECK_EQ_U(info.bone_count, 29);
        CHECK_EQ_U(info.mesh_count, 1);
        CHECK_EQ_U(info.frame_count, 1 + 60 + 20 + 38);
        CHECK_EQ_U(info.animation_count, 3);
        CHECK_EQ_U(info.flags & OSSA_MODEL_UNBOUND, 0);
        CHECK_EQ_U(info.format, OSSA_FORMAT_SIMS_SKN);
        CHECK_EQ_U(ossa_model_warning_count(model), 0);
    }
    if (CHECK_OK(ossa_model_get_info(body, &info))) {
        CHECK_EQ_U(info.frame_count, 1);
        CHECK_EQ_U(info.animation_count, 0);
    }
    if (CHECK_OK(ossa_model_get_info(idle, &info)))
        CHECK_EQ_U(info.animation_count, 1);
    check_scene(model, 0, &c->idle, "a2o-idle1", 1);
    check_scene(model, 1, &c->walking, "a2o-walking-fast-loop", 61);
    check_scene(model, 2, &c->walking, "a2o-walking-loop", 81);
    check_walk_events(model, 2);
    /* The idle stands: no travel, no events. */
    {
        ossa_animation_travel travel;
        if (CHECK_OK(ossa_animation_get_travel(model, 0, &travel))) {
            CHECK_EQ_U(travel.moving, 0);
            CHECK_NEAR(travel.distance, 0.0, 0.0);
        }
        CHECK_EQ_U(ossa_animation_event_count(model, 0), 0);
    }

    /* Frame 0 is the rest pose still: the same bones and bind mesh as the body without skills. */
    {
        ossa_frame_blend rest = {0, 1.0f};
        ossa_mat3x4 *a = pose(model, &rest, 1, 29), *b = pose(body, &rest, 1, 29);
        uint32_t na = 0, nb = 0;
        float *pa = a ? skin_body(model, a, 29, &na) : NULL, *pb = b ? skin_body(body, b, 29, &nb) : NULL;
        check_context("rest pose");
        CHECK(a && b && memcmp(a, b, 29 * sizeof *a) == 0);
        CHECK(pa && pb && na == nb && na > 0 && memcmp(pa, pb, 12 * (size_t)na) == 0);
        check_context(NULL);
        free(pa);
        free(pb);
        free(a);
        free(b);
    }

    /* The inputs freed, the result plays on its own. */
    ossa_model_free(skeleton);
    ossa_model_free(skin);
    ossa_model_free(body);
    ossa_model_free(idle);
    skeleton = skin = body = idle = NULL;
    play_scene(model, 0, 29);
    play_scene(model, 1, 29);
    play_scene(model, 2, 29);

done:
    ossa_model_free(model);
    ossa_model_free(idle);
    ossa_model_free(body);
    ossa_model_free(skin);
    ossa_model_free(skeleton);
    CHECK_RELEASED(&fs);
}

static void test_refused(const corpus *c)
{
    mem_fs fs;
    ossa_load_options opt;
    ossa_model *skeleton = NULL, *skin = NULL, *out;
    ossa_error err;

    serve_corpus(&fs, c);
    ossa_load_options_init(&opt);
    opt.io = &fs.io;
    CHECK_OK(ossa_load_file(DIR "adult-skeleton.cmx", &opt, &skeleton, &err));
    CHECK_OK(ossa_load_file(DIR "xskin-b001mafit_01-PELVIS-BODY.skn", &opt, &skin, &err));
    CHECK_RELEASED(&fs);
    if (!skeleton || !skin)
        goto done;

    /* A skill whose CFP is missing, text and binary: NOT_FOUND naming it, nothing handed out. */
    {
        static const char *const files[] = {DIR "ross-walking-loop.cmx", DIR "ross-walking-loop.cmx.bcf"};
        size_t i;
        for (i = 0; i < 2; i++) {
            fs_reset(&fs);
            check_context("missing CFP (%s)", files[i]);
            out = SENTINEL;
            preset_error(&err);
            CHECK_RESULT(ossa_model_add_skills(skeleton, files[i], &opt, &out, &err), OSSA_ERR_NOT_FOUND);
            CHECK(out == SENTINEL);
            CHECK_RESULT(err.result, OSSA_ERR_NOT_FOUND);
            CHECK_MESSAGE(err.message, DIR "xskill-A2O-walking-start.cfp");
            CHECK_MESSAGE(err.message, "a2o-walking-start");
            CHECK_ASKED(&fs, files[i], DIR "xskill-A2O-walking-start.cfp", NULL);
            CHECK_EQ_U(fs.reads, 1);
            CHECK_RELEASED(&fs);
            printf("missing CFP: %s\n", err.message);
        }
    }

    /* A CFP name trying to escape: INVALID_ARGUMENT, and the CFP is never asked for. */
    fs_reset(&fs);
    check_context("escaping CFP name");
    out = SENTINEL;
    preset_error(&err);
    CHECK_RESULT(ossa_model_add_skills(skeleton, DIR "evil.cmx", &opt, &out, &err), OSSA_ERR_INVALID_ARGUMENT);
    CHECK(out == SENTINEL);
    CHECK_RESULT(err.result, OSSA_ERR_INVALID_ARGUMENT);
    CHECK_MESSAGE(err.message, "evil.cmx");
    CHECK_MESSAGE(err.message, "../../x");
    CHECK_ASKED(&fs, DIR "evil.cmx", NULL);
    CHECK_RELEASED(&fs);
    printf("escaping CFP name: %s\n", err.message);
    /* The same from memory. */
    fs_reset(&fs);
    opt.name = DIR "evil.cmx";
    out = SENTINEL;
    CHECK_RESULT(ossa_model_add_skills_memory(skeleton, c->evil.data, c->evil.size, &opt, &out, &err),
                 OSSA_ERR_INVALID_ARGUMENT);
    CHECK(out == SENTINEL);
    CHECK_EQ_U(fs.asked_count, 0);
    opt.name = NULL;

    /* Meshes waiting for a skeleton: MISMATCH, nothing read past the skill file. */
    fs_reset(&fs);
    check_context("unbound meshes");
    out = SENTINEL;
    preset_error(&err);
    CHECK_RESULT(ossa_model_add_skills(skin, DIR "adult-idle1.cmx", &opt, &out, &err), OSSA_ERR_MISMATCH);
    CHECK(out == SENTINEL);
    CHECK_MESSAGE(err.message, "ossa_model_bind");
    CHECK_ASKED(&fs, DIR "adult-idle1.cmx", NULL);
    CHECK_RELEASED(&fs);

    /* A file without skills: INVALID_ARGUMENT. */
    fs_reset(&fs);
    check_context("no skills");
    out = SENTINEL;
    CHECK_RESULT(ossa_model_add_skills(skeleton, DIR "adult-skeleton.cmx", &opt, &out, &err),
                 OSSA_ERR_INVALID_ARGUMENT);
    CHECK(out == SENTINEL);
    CHECK_MESSAGE(err.message, "no skills");
    CHECK_RELEASED(&fs);

    /* The skill file itself missing: NOT_FOUND naming it. */
    fs_reset(&fs);
    check_context("no skill file");
    out = SENTINEL;
    CHECK_RESULT(ossa_model_add_skills(skeleton, DIR "adult-idle2.cmx", &opt, &out, &err), OSSA_ERR_NOT_FOUND);
    CHECK(out == SENTINEL);
    CHECK_MESSAGE(err.message, "adult-idle2.cmx");
    CHECK_RELEASED(&fs);

    /* From memory without io there is nowhere to read the CFPs from. */
    check_context("memory without io");
    out = SENTINEL;
    CHECK_RESULT(ossa_model_add_skills_memory(skeleton, c->idle.data, c->idle.size, NULL, &out, &err),
                 OSSA_ERR_INVALID_ARGUMENT);
    CHECK(out == SENTINEL);
    CHECK_MESSAGE(err.message, "io");
    check_context(NULL);

done:
    ossa_model_free(skeleton);
    ossa_model_free(skin);
    CHECK_RELEASED(&fs);
}

/* The OS filesystem: the skill file and its CFP in one directory, no options. */
static void test_os_files(const corpus *c)
{
    char dir[4096], path[4200], cfp[4200];
    ossa_model *skeleton = NULL, *model = NULL;
    ossa_model_info info;
    ossa_error err;

    if (fx_make_temp_dir(dir, sizeof dir) != 0) {
        CHECK(!"could not make a temporary directory");
        return;
    }
    snprintf(path, sizeof path, "%s/adult-idle1.cmx", dir);
    snprintf(cfp, sizeof cfp, "%s/xskill-A2O-idle1.cfp", dir);
    CHECK(fx_write_file(path, c->idle.data, c->idle.size) == 0);
    check_context("OS filesystem");
    CHECK_OK(ossa_load_memory(c->skeleton.data, c->skeleton.size, NULL, &skeleton, &err));
    if (skeleton) {
        /* Without the CFP: NOT_FOUND naming it. */
        model = SENTINEL;
        CHECK_RESULT(ossa_model_add_skills(skeleton, path, NULL, &model, &err), OSSA_ERR_NOT_FOUND);
        CHECK(model == SENTINEL);
        CHECK_MESSAGE(err.message, "xskill-A2O-idle1.cfp");
        model = NULL;
        CHECK(fx_write_file(cfp, c->cfp_idle.data, c->cfp_idle.size) == 0);
        CHECK_OK(ossa_model_add_skills(skeleton, path, NULL, &model, &err));
        if (model && CHECK_OK(ossa_model_get_info(model, &info))) {
            CHECK_EQ_U(info.frame_count, 61);
            CHECK_EQ_U(info.animation_count, 1);
        }
        ossa_model_free(model);
    }
    check_context(NULL);
    ossa_model_free(skeleton);
    fx_remove_temp_dir(dir);
}

/* NULL arguments, with a generated DPM as the model: no corpus needed. */
static void test_null_arguments(void)
{
    fx_model fx;
    fx_buf bytes = {NULL, 0, 0};
    ossa_model *model = NULL, *out;
    ossa_error err;
    static const char text[] = "// Character File.\nversion 300\n0\n0\n0\n";

    fx_make_big(&fx, 40, 5);
    fx_write_dpm(&fx, &bytes, NULL);
    CHECK_OK(ossa_load_memory(bytes.data, bytes.size, NULL, &model, NULL));
    check_context("NULL arguments");
    out = SENTINEL;
    preset_error(&err);
    CHECK_RESULT(ossa_model_add_skills(NULL, "a.cmx", NULL, &out, &err), OSSA_ERR_NULL_ARGUMENT);
    CHECK_RESULT(err.result, OSSA_ERR_NULL_ARGUMENT);
    CHECK_MESSAGE(err.message, "model");
    CHECK_RESULT(ossa_model_add_skills(model, NULL, NULL, &out, &err), OSSA_ERR_NULL_ARGUMENT);
    CHECK_MESSAGE(err.message, "path");
    CHECK_RESULT(ossa_model_add_skills(model, "a.cmx", NULL, NULL, &err), OSSA_ERR_NULL_ARGUMENT);
    CHECK_MESSAGE(err.message, "out");
    CHECK_RESULT(ossa_model_add_skills_memory(NULL, (const uint8_t *)text, strlen(text), NULL, &out, NULL),
                 OSSA_ERR_NULL_ARGUMENT);
    CHECK_RESULT(ossa_model_add_skills_memory(model, NULL, 4, NULL, &out, &err), OSSA_ERR_NULL_ARGUMENT);
    CHECK_MESSAGE(err.message, "data");
    CHECK_RESULT(ossa_model_add_skills_memory(model, (const uint8_t *)text, strlen(text), NULL, NULL, &err),
                 OSSA_ERR_NULL_ARGUMENT);
    CHECK(out == SENTINEL);
    /* Uninitialised options are refused before anything is read. */
    {
        ossa_load_options bad;
        memset(&bad, 0, sizeof bad);
        CHECK_RESULT(ossa_model_add_skills(model, "a.cmx", &bad, &out, &err), OSSA_ERR_INVALID_ARGUMENT);
        CHECK(out == SENTINEL);
    }
    check_context(NULL);
    ossa_model_free(model);
    fx_buf_free(&bytes);
    fx_model_free(&fx);
}

int main(void)
{
    char dir[4096];
    corpus c;

    snprintf(dir, sizeof dir, "%s/sims", fx_corpus_dir());
    if (load_corpus(&c, dir) != 0) {
        printf("corpus not found at %s; skipping the Sims skill checks\n", dir);
    } else {
        printf("corpus: adult-skeleton.cmx %u bytes, body %u bytes, idle %u + %u bytes, walking %u + %u + %u bytes\n",
               (unsigned)c.skeleton.size, (unsigned)c.body.size, (unsigned)c.idle.size, (unsigned)c.cfp_idle.size,
               (unsigned)c.walking_loop.size, (unsigned)c.cfp_fast.size, (unsigned)c.cfp_walk.size);
        test_add_skills(&c);
        test_refused(&c);
        test_os_files(&c);
    }
    free_corpus(&c);
    test_null_arguments();
    return check_finish("test_skills");
}
