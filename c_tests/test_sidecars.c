/* Sidecar files, binding and animation scenes.
 *
 * 1. A filesystem of callbacks (ossa_file_io) serving the corpus' Warsow monada and testbox from
 *    memory under engine paths ("models/players/monada/tris.skm"): which paths an SKM asks for and
 *    in which order (NAME.cfg, its import, NAME.skp, a LOD's base model), what a .cfg may import
 *    (never an absolute path or `..`), and every successful read released exactly once, also when
 *    the load fails.
 * 2. ossa_model_bind: an SKM and its SKP loaded separately and joined skin exactly as the model bound
 *    through its sidecars, and keep working when both inputs are freed; what does not fit is
 *    OSSA_ERR_MISMATCH.
 * 3. Animation scenes of a generated DPM from its MODEL.dpm.framegroups file, their frame blends at
 *    given times, and the per-frame scenes without the file.
 *
 * Parts 1 and 2 need $OSSA_CORPUS/skm and say so when it is absent; part 3 needs no corpus. */
#define _POSIX_C_SOURCE 200809L

#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fixture.h"
#include "memfs.h"

/* Failed calls must leave *out alone: it is preset to this and compared afterwards. */
static char sentinel_storage;
#define SENTINEL ((ossa_model *)(void *)&sentinel_storage)

#define MONADA "models/players/monada/"
#define TESTBOX "models/players/testbox/"

static void preset_error(ossa_error *err)
{
    memset(err, 0x5a, sizeof *err);
    err->message[sizeof err->message - 1] = '\0';
}

/* Whether the decimal number `n` appears as a whole number in `text`. */
static int has_number(const char *text, unsigned long n)
{
    const char *p = text;
    while (*p) {
        if (*p >= '0' && *p <= '9') {
            char *end;
            unsigned long v = strtoul(p, &end, 10);
            if (v == n)
                return 1;
            p = end;
        } else {
            p++;
        }
    }
    return 0;
}

/* ---- the corpus files ---- */

typedef struct corpus {
    fx_buf skm, skp, skm2, skm3, cfg; /* monada: tris, its LODs, its animation.cfg */
    fx_buf box_skm, box_skp;          /* testbox */
} corpus;

static int load_corpus(corpus *c, const char *dir)
{
    static const char *const names[] = {
        "wsw05sdk_monada_tris.skm",   "wsw05sdk_monada_tris.skp",      "wsw05sdk_monada_tris_2.skm",
        "wsw05sdk_monada_tris_3.skm", "wsw05sdk_monada_animation.cfg", "wsw05sdk_testbox_tris.skm",
        "wsw05sdk_testbox_tris.skp",
    };
    fx_buf *bufs[7];
    char path[8192];
    size_t i;
    bufs[0] = &c->skm;
    bufs[1] = &c->skp;
    bufs[2] = &c->skm2;
    bufs[3] = &c->skm3;
    bufs[4] = &c->cfg;
    bufs[5] = &c->box_skm;
    bufs[6] = &c->box_skp;
    memset(c, 0, sizeof *c);
    for (i = 0; i < 7; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (fx_read_file(path, bufs[i]) != 0 || bufs[i]->size == 0)
            return -1;
    }
    return 0;
}

static void free_corpus(corpus *c)
{
    fx_buf_free(&c->skm);
    fx_buf_free(&c->skp);
    fx_buf_free(&c->skm2);
    fx_buf_free(&c->skm3);
    fx_buf_free(&c->cfg);
    fx_buf_free(&c->box_skm);
    fx_buf_free(&c->box_skp);
}

/* ---- skinning ---- */

/* Positions and normals of every mesh in frame 0, one after another; NULL on failure. */
static float *skin_frame0(const ossa_model *model, size_t *floats_out)
{
    ossa_model_info info;
    ossa_mat3x4 *bones;
    ossa_frame_blend blend;
    float *out;
    size_t total = 0, at = 0;
    uint32_t mesh;

    *floats_out = 0;
    if (!CHECK_OK(ossa_model_get_info(model, &info)) || info.bone_count == 0)
        return NULL;
    bones = malloc(sizeof *bones * info.bone_count);
    blend.frame = 0;
    blend.weight = 1;
    if (!CHECK_OK(ossa_pose_frames(model, &blend, 1, NULL, bones, info.bone_count))) {
        free(bones);
        return NULL;
    }
    total = 6 * (size_t)info.vertex_count;
    out = calloc(total ? total : 1, sizeof *out);
    for (mesh = 0; mesh < info.mesh_count; mesh++) {
        ossa_mesh_info mi;
        ossa_skin_target t;
        if (!CHECK_OK(ossa_model_get_mesh(model, mesh, &mi)) || mi.vertex_count == 0)
            continue;
        if (at + 6 * (size_t)mi.vertex_count > total) {
            CHECK(!"mesh vertex counts add up to info.vertex_count");
            break;
        }
        t.positions = out + at;
        t.position_stride = 12;
        t.position_bytes = 12 * (size_t)mi.vertex_count;
        t.normals = out + at + 3 * (size_t)mi.vertex_count;
        t.normal_stride = 12;
        t.normal_bytes = 12 * (size_t)mi.vertex_count;
        CHECK_OK(ossa_skin_mesh(model, mesh, bones, info.bone_count, 0, mi.vertex_count, 0, &t));
        at += 6 * (size_t)mi.vertex_count;
    }
    free(bones);
    *floats_out = total;
    return out;
}

/* Two models skin frame 0 to the same bytes. */
static void check_same_skin(const ossa_model *a, const ossa_model *b)
{
    size_t na, nb;
    float *pa = skin_frame0(a, &na), *pb = skin_frame0(b, &nb);
    CHECK(pa != NULL && pb != NULL);
    CHECK_EQ_U(na, nb);
    CHECK(na > 0);
    if (pa && pb && na == nb) {
        size_t i, finite = 0;
        CHECK(memcmp(pa, pb, na * sizeof *pa) == 0);
        for (i = 0; i < na; i++)
            finite += isfinite(pa[i]) ? 1 : 0;
        CHECK_EQ_U(finite, na);
    }
    free(pa);
    free(pb);
}

/* ---- 1. sidecars through the caller's filesystem ---- */

static void check_monada(const ossa_model *model)
{
    ossa_model_info info;
    if (!CHECK_OK(ossa_model_get_info(model, &info)))
        return;
    CHECK_EQ_U(info.format, OSSA_FORMAT_SKM);
    CHECK_EQ_U(info.flags & OSSA_MODEL_UNBOUND, 0);
    CHECK_EQ_U(info.bone_count, 27);
    CHECK_EQ_U(info.mesh_count, 2);
    CHECK_EQ_U(info.frame_count, 739);
    CHECK(info.vertex_count > 0);
    CHECK(info.max_influences > 0);
    CHECK(info.mins[0] < info.maxs[0] && info.mins[1] < info.maxs[1] && info.mins[2] < info.maxs[2]);
}

/* Whether a warning of `model` mentions `needle`. */
static int has_warning(const ossa_model *model, const char *needle)
{
    uint32_t i, n = ossa_model_warning_count(model);
    for (i = 0; i < n; i++)
        if (contains(ossa_model_warning(model, i), needle))
            return 1;
    return 0;
}

static void test_io_plain(const corpus *c)
{
    mem_fs fs;
    ossa_load_options opt;
    ossa_model *model = NULL;
    ossa_error err;

    check_context("tris.skm and tris.skp");
    fs_init(&fs);
    fs_add(&fs, MONADA "tris.skm", &c->skm);
    fs_add(&fs, MONADA "tris.skp", &c->skp);
    fs_add(&fs, TESTBOX "tris.skm", &c->box_skm);
    ossa_load_options_init(&opt);
    opt.io = &fs.io;
    CHECK_OK(ossa_load_file(MONADA "tris.skm", &opt, &model, &err));
    CHECK_ASKED(&fs, MONADA "tris.skm", MONADA "tris.cfg", MONADA "tris.skp", NULL);
    CHECK_EQ_U(fs.reads, 2);
    CHECK_EQ_U(fs.misses, 1);
    CHECK_RELEASED(&fs);
    if (model) {
        check_monada(model);
        CHECK(!has_warning(model, "no import"));
        /* The bytes read are gone (scribbled and freed); the model does not need them. */
        {
            size_t n;
            float *p = skin_frame0(model, &n);
            CHECK(p != NULL && n > 0);
            free(p);
        }
        ossa_model_free(model);
    }
    CHECK_EQ_U(fs.releases, fs.reads);

    /* The model itself missing: NOT_FOUND, and nothing else asked. */
    check_context("no model file");
    fs_init(&fs);
    fs_add(&fs, MONADA "tris.skp", &c->skp);
    ossa_load_options_init(&opt);
    opt.io = &fs.io;
    model = SENTINEL;
    preset_error(&err);
    CHECK_RESULT(ossa_load_file(MONADA "tris.skm", &opt, &model, &err), OSSA_ERR_NOT_FOUND);
    CHECK(model == SENTINEL);
    CHECK_RESULT(err.result, OSSA_ERR_NOT_FOUND);
    CHECK_MESSAGE(err.message, "tris.skm");
    CHECK_ASKED(&fs, MONADA "tris.skm", NULL);
    CHECK_EQ_U(fs.reads, 0);
    CHECK_RELEASED(&fs);

    /* A skeleton nowhere: NOT_FOUND naming the files tried, every read released. */
    check_context("no skeleton");
    fs_init(&fs);
    fs_add(&fs, MONADA "tris.skm", &c->skm);
    ossa_load_options_init(&opt);
    opt.io = &fs.io;
    model = SENTINEL;
    preset_error(&err);
    CHECK_RESULT(ossa_load_file(MONADA "tris.skm", &opt, &model, &err), OSSA_ERR_NOT_FOUND);
    CHECK(model == SENTINEL);
    CHECK_RESULT(err.result, OSSA_ERR_NOT_FOUND);
    CHECK_MESSAGE(err.message, "tris.cfg");
    CHECK_MESSAGE(err.message, "tris.skp");
    CHECK_EQ_U(err.line, 0);
    CHECK_ASKED(&fs, MONADA "tris.skm", MONADA "tris.cfg", MONADA "tris.skp", NULL);
    CHECK_EQ_U(fs.reads, 1);
    CHECK_RELEASED(&fs);

    /* A skeleton found but broken (cut short), or not fitting (testbox's 3 bones): the load fails
       and both reads are released. */
    {
        fx_buf cut;
        cut.data = c->skp.data;
        cut.size = c->skp.size / 2;
        cut.cap = 0;
        check_context("tris.skp cut short");
        fs_init(&fs);
        fs_add(&fs, MONADA "tris.skm", &c->skm);
        fs_add(&fs, MONADA "tris.skp", &cut);
        ossa_load_options_init(&opt);
        opt.io = &fs.io;
        model = SENTINEL;
        preset_error(&err);
        CHECK_RESULT(ossa_load_file(MONADA "tris.skm", &opt, &model, &err), OSSA_ERR_TRUNCATED);
        CHECK(model == SENTINEL);
        CHECK_RESULT(err.result, OSSA_ERR_TRUNCATED);
        CHECK_MESSAGE(err.message, "tris.skp");
        CHECK_EQ_U(fs.reads, 2);
        CHECK_RELEASED(&fs);

        check_context("testbox's skeleton as monada's tris.skp");
        fs_init(&fs);
        fs_add(&fs, MONADA "tris.skm", &c->skm);
        fs_add(&fs, MONADA "tris.skp", &c->box_skp);
        ossa_load_options_init(&opt);
        opt.io = &fs.io;
        model = SENTINEL;
        preset_error(&err);
        CHECK_RESULT(ossa_load_file(MONADA "tris.skm", &opt, &model, &err), OSSA_ERR_MISMATCH);
        CHECK(model == SENTINEL);
        CHECK_RESULT(err.result, OSSA_ERR_MISMATCH);
        CHECK_MESSAGE(err.message, "tris.skp");
        CHECK(has_number(err.message, 3) && has_number(err.message, 27));
        CHECK_EQ_U(fs.reads, 2);
        CHECK_RELEASED(&fs);
    }

    /* A failing read callback is an I/O error, whatever code it gives; reads so far are released. */
    {
        static const uint32_t codes[] = {OSSA_ERR_IO, 77};
        size_t i;
        for (i = 0; i < 2; i++) {
            check_context("the callback fails on tris.cfg with %u", (unsigned)codes[i]);
            fs_init(&fs);
            fs_add(&fs, MONADA "tris.skm", &c->skm);
            fs_add_failing(&fs, MONADA "tris.cfg", codes[i]);
            fs_add(&fs, MONADA "tris.skp", &c->skp);
            ossa_load_options_init(&opt);
            opt.io = &fs.io;
            model = SENTINEL;
            preset_error(&err);
            CHECK_RESULT(ossa_load_file(MONADA "tris.skm", &opt, &model, &err), OSSA_ERR_IO);
            CHECK(model == SENTINEL);
            CHECK_RESULT(err.result, OSSA_ERR_IO);
            CHECK_MESSAGE(err.message, "tris.cfg");
            CHECK_EQ_U(fs.failures, 1);
            CHECK(!fs_was_asked(&fs, "tris.skp"));
            CHECK_RELEASED(&fs);
        }
    }
    check_context(NULL);
}

static void test_io_lods(const corpus *c)
{
    static const char *const lods[] = {"2", "3"};
    size_t i;

    for (i = 0; i < 2; i++) {
        mem_fs fs;
        ossa_load_options opt;
        ossa_model *model = NULL, *base = NULL;
        ossa_error err;
        char path[128], cfg[128], skp[128];
        const fx_buf *file = i == 0 ? &c->skm2 : &c->skm3;

        snprintf(path, sizeof path, MONADA "tris_%s.skm", lods[i]);
        snprintf(cfg, sizeof cfg, MONADA "tris_%s.cfg", lods[i]);
        snprintf(skp, sizeof skp, MONADA "tris_%s.skp", lods[i]);

        /* Rule 3: neither tris_N.cfg nor tris_N.skp, so the base model's tris.skp. */
        check_context("LOD %s", path);
        fs_init(&fs);
        fs_add(&fs, path, file);
        fs_add(&fs, MONADA "tris.skm", &c->skm);
        fs_add(&fs, MONADA "tris.skp", &c->skp);
        ossa_load_options_init(&opt);
        opt.io = &fs.io;
        CHECK_OK(ossa_load_file(path, &opt, &model, &err));
        CHECK_ASKED(&fs, path, cfg, skp, MONADA "tris.cfg", MONADA "tris.skp", NULL);
        CHECK_RELEASED(&fs);
        if (model) {
            ossa_model_info lod_info, base_info;
            check_monada(model);
            CHECK_OK(ossa_load_file(MONADA "tris.skm", &opt, &base, NULL));
            CHECK_RELEASED(&fs);
            if (base) {
                ossa_bone_info a, b;
                CHECK_OK(ossa_model_get_info(model, &lod_info));
                CHECK_OK(ossa_model_get_info(base, &base_info));
                /* A lower level of detail: fewer vertices, the same skeleton. */
                CHECK(lod_info.vertex_count < base_info.vertex_count);
                CHECK_OK(ossa_model_get_bone(model, 26, &a));
                CHECK_OK(ossa_model_get_bone(base, 26, &b));
                CHECK_STR(a.name, b.name);
                CHECK_EQ_I(a.parent, b.parent);
                ossa_model_free(base);
            }
            {
                size_t n;
                float *p = skin_frame0(model, &n);
                CHECK(p != NULL && n > 0);
                free(p);
            }
            ossa_model_free(model);
        }

        /* The base model's tris.cfg import also serves its LODs. */
        check_context("LOD %s with tris.cfg importing a skeleton", path);
        fs_init(&fs);
        fs_add(&fs, path, file);
        fs_add_text(&fs, MONADA "tris.cfg", "// skeleton\nimport models/skeletons/rig\n");
        fs_add(&fs, "models/skeletons/rig.skp", &c->skp);
        ossa_load_options_init(&opt);
        opt.io = &fs.io;
        model = NULL;
        CHECK_OK(ossa_load_file(path, &opt, &model, &err));
        CHECK_ASKED(&fs, path, cfg, skp, MONADA "tris.cfg", "models/skeletons/rig.skp", NULL);
        CHECK_RELEASED(&fs);
        if (model)
            check_monada(model);
        ossa_model_free(model);

        /* No skeleton at all: the message names all four files tried. */
        check_context("LOD %s, no skeleton", path);
        fs_init(&fs);
        fs_add(&fs, path, file);
        ossa_load_options_init(&opt);
        opt.io = &fs.io;
        model = SENTINEL;
        preset_error(&err);
        CHECK_RESULT(ossa_load_file(path, &opt, &model, &err), OSSA_ERR_NOT_FOUND);
        CHECK(model == SENTINEL);
        CHECK_ASKED(&fs, path, cfg, skp, MONADA "tris.cfg", MONADA "tris.skp", NULL);
        CHECK_MESSAGE(err.message, cfg + strlen(MONADA));
        CHECK_MESSAGE(err.message, skp + strlen(MONADA));
        CHECK_MESSAGE(err.message, "tris.cfg");
        CHECK_MESSAGE(err.message, "tris.skp");
        CHECK_RELEASED(&fs);
    }
    check_context(NULL);
}

static void test_io_cfg(const corpus *c)
{
    static const char *const escapes[] = {
        "import ../../etc/passwd\n",
        "import /etc/passwd\n",
        "// tries to leave the tree\nimport \"/etc/passwd\"\n",
        "import models/players/../../../etc/passwd\n",
    };
    mem_fs fs;
    ossa_load_options opt;
    ossa_model *model = NULL, *plain = NULL;
    ossa_error err;
    size_t i;

    /* Rule 1: the .cfg's import names the skeleton, from the root of the filesystem; tris.skp
       beside the model is not asked for. */
    check_context("tris.cfg imports models/skeletons/rig");
    fs_init(&fs);
    fs_add(&fs, MONADA "tris.skm", &c->skm);
    fs_add_text(&fs, MONADA "tris.cfg", "import models/skeletons/rig\n");
    fs_add(&fs, MONADA "tris.skp", &c->box_skp); /* would not fit: must not be used */
    fs_add(&fs, "models/skeletons/rig.skp", &c->skp);
    ossa_load_options_init(&opt);
    opt.io = &fs.io;
    CHECK_OK(ossa_load_file(MONADA "tris.skm", &opt, &model, &err));
    CHECK_ASKED(&fs, MONADA "tris.skm", MONADA "tris.cfg", "models/skeletons/rig.skp", NULL);
    CHECK_EQ_U(fs.reads, 3);
    CHECK_RELEASED(&fs);
    if (model) {
        check_monada(model);
        CHECK(!has_warning(model, "no import"));
        /* The same skeleton as tris.skp beside the model gives: the same vertices. */
        fs_init(&fs);
        fs_add(&fs, MONADA "tris.skm", &c->skm);
        fs_add(&fs, MONADA "tris.skp", &c->skp);
        opt.io = &fs.io;
        CHECK_OK(ossa_load_file(MONADA "tris.skm", &opt, &plain, NULL));
        CHECK_RELEASED(&fs);
        if (plain) {
            check_same_skin(model, plain);
            ossa_model_free(plain);
        }
        ossa_model_free(model);
    }

    /* Imports leaving the filesystem's root: refused before anything is asked for. */
    for (i = 0; i < sizeof escapes / sizeof escapes[0]; i++) {
        check_context("tris.cfg \"%.*s\"", (int)strcspn(escapes[i], "\n"), escapes[i]);
        fs_init(&fs);
        fs_add(&fs, MONADA "tris.skm", &c->skm);
        fs_add_text(&fs, MONADA "tris.cfg", escapes[i]);
        fs_add(&fs, MONADA "tris.skp", &c->skp);
        fs_add(&fs, "etc/passwd.skp", &c->skp);
        fs_add(&fs, "/etc/passwd.skp", &c->skp);
        fs_add(&fs, "../../etc/passwd.skp", &c->skp);
        ossa_load_options_init(&opt);
        opt.io = &fs.io;
        model = SENTINEL;
        preset_error(&err);
        CHECK_RESULT(ossa_load_file(MONADA "tris.skm", &opt, &model, &err), OSSA_ERR_INVALID_ARGUMENT);
        CHECK(model == SENTINEL);
        CHECK_RESULT(err.result, OSSA_ERR_INVALID_ARGUMENT);
        CHECK_MESSAGE(err.message, "tris.cfg");
        CHECK_ASKED(&fs, MONADA "tris.skm", MONADA "tris.cfg", NULL);
        CHECK(!fs_was_asked(&fs, "passwd"));
        CHECK_RELEASED(&fs);
    }

    /* A .cfg without import (Warsow's animation.cfg, served as tris.cfg): a warning, then tris.skp. */
    check_context("tris.cfg without import");
    fs_init(&fs);
    fs_add(&fs, MONADA "tris.skm", &c->skm);
    fs_add(&fs, MONADA "tris.cfg", &c->cfg);
    fs_add(&fs, MONADA "tris.skp", &c->skp);
    ossa_load_options_init(&opt);
    opt.io = &fs.io;
    model = NULL;
    CHECK_OK(ossa_load_file(MONADA "tris.skm", &opt, &model, &err));
    CHECK_ASKED(&fs, MONADA "tris.skm", MONADA "tris.cfg", MONADA "tris.skp", NULL);
    CHECK_EQ_U(fs.reads, 3);
    CHECK_RELEASED(&fs);
    if (model) {
        uint32_t n = ossa_model_warning_count(model), k, found = 0;
        check_monada(model);
        CHECK(n >= 1);
        for (k = 0; k < n; k++) {
            const char *w = ossa_model_warning(model, k);
            CHECK(w != NULL);
            if (contains(w, "no import")) {
                found++;
                CHECK_MESSAGE(w, "tris.cfg");
            }
        }
        CHECK_EQ_U(found, 1);
        CHECK(ossa_model_warning(model, n) == NULL);
        ossa_model_free(model);
    }

    /* The same through a short text with no import line at all. */
    check_context("tris.cfg of settings only");
    fs_init(&fs);
    fs_add(&fs, MONADA "tris.skm", &c->skm);
    fs_add_text(&fs, MONADA "tris.cfg", "sex m\nFPS 24\n// import is only mentioned here\n");
    fs_add(&fs, MONADA "tris.skp", &c->skp);
    ossa_load_options_init(&opt);
    opt.io = &fs.io;
    model = NULL;
    CHECK_OK(ossa_load_file(MONADA "tris.skm", &opt, &model, &err));
    CHECK_ASKED(&fs, MONADA "tris.skm", MONADA "tris.cfg", MONADA "tris.skp", NULL);
    CHECK_RELEASED(&fs);
    if (model) {
        CHECK(has_warning(model, "no import"));
        check_monada(model);
        ossa_model_free(model);
    }
    check_context(NULL);
}

static void test_io_memory(const corpus *c)
{
    mem_fs fs;
    ossa_load_options opt;
    ossa_model *model = NULL, *from_file = NULL;
    ossa_model_info info;
    ossa_error err;

    /* ossa_load_memory with a name and io: the sidecars are found beside the name. */
    check_context("ossa_load_memory with name and io");
    fs_init(&fs);
    fs_add(&fs, MONADA "tris.skp", &c->skp);
    ossa_load_options_init(&opt);
    opt.io = &fs.io;
    opt.name = MONADA "tris.skm";
    CHECK_OK(ossa_load_memory(c->skm.data, c->skm.size, &opt, &model, &err));
    CHECK_ASKED(&fs, MONADA "tris.cfg", MONADA "tris.skp", NULL);
    CHECK_RELEASED(&fs);
    if (model) {
        check_monada(model);
        fs_init(&fs);
        fs_add(&fs, MONADA "tris.skm", &c->skm);
        fs_add(&fs, MONADA "tris.skp", &c->skp);
        ossa_load_options_init(&opt);
        opt.io = &fs.io;
        CHECK_OK(ossa_load_file(MONADA "tris.skm", &opt, &from_file, NULL));
        CHECK_RELEASED(&fs);
        if (from_file) {
            check_same_skin(model, from_file);
            ossa_model_free(from_file);
        }
        ossa_model_free(model);
    }

    /* A name alone reads nothing: the meshes wait for a skeleton. */
    check_context("ossa_load_memory with a name, without io");
    ossa_load_options_init(&opt);
    opt.name = MONADA "tris.skm";
    model = NULL;
    CHECK_OK(ossa_load_memory(c->skm.data, c->skm.size, &opt, &model, &err));
    if (model) {
        ossa_mesh_info mesh;
        CHECK_OK(ossa_model_get_info(model, &info));
        CHECK_EQ_U(info.format, OSSA_FORMAT_SKM);
        CHECK_EQ_U(info.flags & OSSA_MODEL_UNBOUND, OSSA_MODEL_UNBOUND);
        CHECK_EQ_U(info.bone_count, 0);
        CHECK_EQ_U(info.mesh_count, 2);
        CHECK(info.vertex_count > 0);
        CHECK_OK(ossa_model_get_mesh(model, 0, &mesh));
        if (mesh.vertex_count > 0) {
            ossa_mat3x4 unused;
            ossa_skin_target t;
            float *buf = malloc(12 * (size_t)mesh.vertex_count);
            memset(buf, POISON, 12 * (size_t)mesh.vertex_count);
            memset(&t, 0, sizeof t);
            t.positions = buf;
            t.position_stride = 12;
            t.position_bytes = 12 * (size_t)mesh.vertex_count;
            memset(&unused, 0, sizeof unused);
            CHECK_RESULT(ossa_skin_mesh(model, 0, &unused, 0, 0, mesh.vertex_count, 0, &t),
                         OSSA_ERR_INVALID_ARGUMENT);
            CHECK(is_poisoned(buf, 12 * (size_t)mesh.vertex_count));
            free(buf);
        }
        ossa_model_free(model);
    }

    /* Without a name there is nowhere to look, even with io. */
    check_context("ossa_load_memory with io, without a name");
    fs_init(&fs);
    fs_add(&fs, "tris.skp", &c->skp);
    ossa_load_options_init(&opt);
    opt.io = &fs.io;
    model = NULL;
    CHECK_OK(ossa_load_memory(c->skm.data, c->skm.size, &opt, &model, &err));
    CHECK_EQ_U(fs.asked_count, 0);
    CHECK_RELEASED(&fs);
    if (model) {
        CHECK_OK(ossa_model_get_info(model, &info));
        CHECK_EQ_U(info.flags & OSSA_MODEL_UNBOUND, OSSA_MODEL_UNBOUND);
        ossa_model_free(model);
    }
    check_context(NULL);
}

/* ---- 2. binding ---- */

static ossa_model *load_as(const fx_buf *file, uint32_t format, const char *name)
{
    ossa_load_options opt;
    ossa_model *model = NULL;
    ossa_error err;
    ossa_load_options_init(&opt);
    opt.format = format;
    opt.name = name;
    if (!CHECK_OK(ossa_load_memory(file->data, file->size, &opt, &model, &err))) {
        fprintf(stderr, "    %s\n", err.message);
        return NULL;
    }
    return model;
}

static void test_bind(const corpus *c)
{
    mem_fs fs;
    ossa_load_options opt;
    ossa_model *sidecar = NULL;
    int variant;

    fs_init(&fs);
    fs_add(&fs, MONADA "tris.skm", &c->skm);
    fs_add(&fs, MONADA "tris.skp", &c->skp);
    ossa_load_options_init(&opt);
    opt.io = &fs.io;
    CHECK_OK(ossa_load_file(MONADA "tris.skm", &opt, &sidecar, NULL));
    CHECK_RELEASED(&fs);
    if (sidecar == NULL)
        return;

    for (variant = 0; variant < 2; variant++) {
        ossa_model *meshes, *skeleton, *bound = NULL;
        ossa_model_info info, skel_info, want_info;
        ossa_error err;

        check_context("%s", variant == 0 ? "bind: detected, named" : "bind: forced formats, no names");
        if (variant == 0) {
            meshes = load_as(&c->skm, OSSA_FORMAT_AUTO, "tris.skm");
            skeleton = load_as(&c->skp, OSSA_FORMAT_AUTO, "tris.skp");
        } else {
            meshes = load_as(&c->skm, OSSA_FORMAT_SKM, NULL);
            skeleton = load_as(&c->skp, OSSA_FORMAT_SKP, NULL);
        }
        if (meshes == NULL || skeleton == NULL) {
            ossa_model_free(meshes);
            ossa_model_free(skeleton);
            continue;
        }
        CHECK_OK(ossa_model_get_info(meshes, &info));
        CHECK_EQ_U(info.format, OSSA_FORMAT_SKM);
        CHECK_EQ_U(info.flags & OSSA_MODEL_UNBOUND, OSSA_MODEL_UNBOUND);
        CHECK_EQ_U(info.bone_count, 0);
        CHECK_OK(ossa_model_get_info(skeleton, &skel_info));
        CHECK_EQ_U(skel_info.format, OSSA_FORMAT_SKP);
        CHECK_EQ_U(skel_info.flags & OSSA_MODEL_UNBOUND, 0);
        CHECK_EQ_U(skel_info.bone_count, 27);
        CHECK_EQ_U(skel_info.mesh_count, 0);
        CHECK_EQ_U(skel_info.frame_count, 739);

        CHECK_OK(ossa_model_bind(meshes, skeleton, &bound, &err));
        /* Both inputs go before the bound model is used: it shares the skeleton, not borrows it. */
        ossa_model_free(meshes);
        ossa_model_free(skeleton);
        if (bound == NULL)
            continue;
        check_monada(bound);
        CHECK_OK(ossa_model_get_info(bound, &info));
        CHECK_OK(ossa_model_get_info(sidecar, &want_info));
        CHECK(memcmp(&info, &want_info, sizeof info) == 0);
        {
            ossa_bone_info a, b;
            uint32_t i;
            for (i = 0; i < 27; i++) {
                CHECK_OK(ossa_model_get_bone(bound, i, &a));
                CHECK_OK(ossa_model_get_bone(sidecar, i, &b));
                CHECK_STR(a.name, b.name);
                CHECK_EQ_I(a.parent, b.parent);
            }
        }
        check_same_skin(bound, sidecar);
        ossa_model_free(bound);
    }
    check_context(NULL);
    ossa_model_free(sidecar);

    /* testbox binds to its own skeleton, not to monada's. */
    {
        ossa_model *box = load_as(&c->box_skm, OSSA_FORMAT_AUTO, "tris.skm");
        ossa_model *box_skel = load_as(&c->box_skp, OSSA_FORMAT_AUTO, "tris.skp");
        ossa_model *monada_skel = load_as(&c->skp, OSSA_FORMAT_AUTO, "tris.skp");
        ossa_model *monada = load_as(&c->skm, OSSA_FORMAT_AUTO, "tris.skm");
        ossa_model *out = NULL, *dpm = NULL, *bound = NULL;
        ossa_model_info info;
        ossa_error err;
        uint32_t box_bones = 0;

        if (box && box_skel && monada_skel && monada) {
            check_context("testbox on its own skeleton");
            CHECK_OK(ossa_model_get_info(box_skel, &info));
            box_bones = info.bone_count;
            CHECK_EQ_U(box_bones, 3);
            CHECK_OK(ossa_model_bind(box, box_skel, &out, NULL));
            if (out) {
                size_t n;
                float *p = skin_frame0(out, &n);
                CHECK_OK(ossa_model_get_info(out, &info));
                CHECK_EQ_U(info.bone_count, 3);
                CHECK_EQ_U(info.flags & OSSA_MODEL_UNBOUND, 0);
                CHECK(p != NULL && n > 0);
                free(p);
                ossa_model_free(out);
            }

            check_context("testbox's meshes on monada's skeleton");
            out = SENTINEL;
            preset_error(&err);
            CHECK_RESULT(ossa_model_bind(box, monada_skel, &out, &err), OSSA_ERR_MISMATCH);
            CHECK(out == SENTINEL);
            CHECK_RESULT(err.result, OSSA_ERR_MISMATCH);
            if (!CHECK(has_number(err.message, 3) && has_number(err.message, 27)))
                fprintf(stderr, "    message without both bone counts (3, 27): \"%s\"\n", err.message);

            check_context("monada's meshes on testbox's skeleton");
            out = SENTINEL;
            preset_error(&err);
            CHECK_RESULT(ossa_model_bind(monada, box_skel, &out, &err), OSSA_ERR_MISMATCH);
            CHECK(out == SENTINEL);
            if (!CHECK(has_number(err.message, 3) && has_number(err.message, 27)))
                fprintf(stderr, "    message without both bone counts (3, 27): \"%s\"\n", err.message);

            check_context("a skeleton bound to itself");
            out = SENTINEL;
            preset_error(&err);
            CHECK_RESULT(ossa_model_bind(monada_skel, monada_skel, &out, &err), OSSA_ERR_MISMATCH);
            CHECK(out == SENTINEL);
            CHECK_RESULT(err.result, OSSA_ERR_MISMATCH);
            CHECK(strlen(err.message) > 0);

            check_context("meshes bound to meshes");
            out = SENTINEL;
            CHECK_RESULT(ossa_model_bind(monada, monada, &out, NULL), OSSA_ERR_MISMATCH);
            CHECK(out == SENTINEL);

            check_context("a bound model bound again");
            CHECK_OK(ossa_model_bind(monada, monada_skel, &bound, NULL));
            if (bound) {
                out = SENTINEL;
                CHECK_RESULT(ossa_model_bind(bound, monada_skel, &out, NULL), OSSA_ERR_MISMATCH);
                CHECK(out == SENTINEL);
                ossa_model_free(bound);
            }

            /* NULLs: NULL_ARGUMENT, *out untouched. */
            check_context("bind with NULLs");
            out = SENTINEL;
            preset_error(&err);
            CHECK_RESULT(ossa_model_bind(NULL, monada_skel, &out, &err), OSSA_ERR_NULL_ARGUMENT);
            CHECK(out == SENTINEL);
            CHECK_RESULT(err.result, OSSA_ERR_NULL_ARGUMENT);
            CHECK_RESULT(ossa_model_bind(monada, NULL, &out, NULL), OSSA_ERR_NULL_ARGUMENT);
            CHECK(out == SENTINEL);
            preset_error(&err);
            CHECK_RESULT(ossa_model_bind(monada, monada_skel, NULL, &err), OSSA_ERR_NULL_ARGUMENT);
            CHECK_RESULT(err.result, OSSA_ERR_NULL_ARGUMENT);
            CHECK_RESULT(ossa_model_bind(NULL, NULL, NULL, NULL), OSSA_ERR_NULL_ARGUMENT);

            /* A DPM carries its own skeleton: nothing to bind, neither way round. */
            {
                fx_model fx;
                fx_buf bytes = {NULL, 0, 0};
                fx_make_big(&fx, 40, 3);
                fx_write_dpm(&fx, &bytes, NULL);
                CHECK_OK(ossa_load_memory(bytes.data, bytes.size, NULL, &dpm, NULL));
                if (dpm) {
                    check_context("two DPMs");
                    out = SENTINEL;
                    preset_error(&err);
                    CHECK_RESULT(ossa_model_bind(dpm, dpm, &out, &err), OSSA_ERR_MISMATCH);
                    CHECK(out == SENTINEL);
                    CHECK_RESULT(err.result, OSSA_ERR_MISMATCH);
                    check_context("SKM meshes on a DPM");
                    out = SENTINEL;
                    CHECK_RESULT(ossa_model_bind(monada, dpm, &out, NULL), OSSA_ERR_MISMATCH);
                    CHECK(out == SENTINEL);
                    check_context("a DPM on an SKP");
                    out = SENTINEL;
                    CHECK_RESULT(ossa_model_bind(dpm, monada_skel, &out, NULL), OSSA_ERR_MISMATCH);
                    CHECK(out == SENTINEL);
                    ossa_model_free(dpm);
                }
                fx_buf_free(&bytes);
                fx_model_free(&fx);
            }
        }
        check_context(NULL);
        ossa_model_free(box);
        ossa_model_free(box_skel);
        ossa_model_free(monada_skel);
        ossa_model_free(monada);
    }
}

/* Two DPMs from generated data: binding fails without the corpus too. */
static void test_bind_dpms(void)
{
    fx_model fx;
    fx_buf bytes = {NULL, 0, 0};
    ossa_model *a = NULL, *b = NULL, *out = SENTINEL;
    ossa_error err;

    fx_make_big(&fx, 40, 5);
    fx_write_dpm(&fx, &bytes, NULL);
    CHECK_OK(ossa_load_memory(bytes.data, bytes.size, NULL, &a, NULL));
    CHECK_OK(ossa_load_memory(bytes.data, bytes.size, NULL, &b, NULL));
    if (a && b) {
        check_context("two generated DPMs");
        preset_error(&err);
        CHECK_RESULT(ossa_model_bind(a, b, &out, &err), OSSA_ERR_MISMATCH);
        CHECK(out == SENTINEL);
        CHECK_RESULT(err.result, OSSA_ERR_MISMATCH);
        CHECK(strlen(err.message) > 0);
        check_context(NULL);
    }
    ossa_model_free(a);
    ossa_model_free(b);
    fx_buf_free(&bytes);
    fx_model_free(&fx);
}

/* ---- 3. animation scenes ---- */

/* One blend call: its count, frames and weights (want_count 1: only frame a). */
#define CHECK_BLEND(model, anim, t, count, fa, wa, fb, wb) \
    check_blend((model), (anim), (t), (count), (fa), (wa), (fb), (wb), __LINE__)
static void check_blend(const ossa_model *model, uint32_t anim, double seconds, size_t want_count, uint32_t fa,
                        double wa, uint32_t fb, double wb, int line)
{
    ossa_frame_blend blends[2];
    size_t count = 99;
    check_context("animation %u at %g s (line %d)", (unsigned)anim, seconds, line);
    if (!CHECK_OK(ossa_animation_blend(model, anim, seconds, blends, &count)))
        return;
    if (!CHECK_EQ_U(count, want_count))
        return;
    CHECK_EQ_U(blends[0].frame, fa);
    CHECK_NEAR(blends[0].weight, wa, 1e-6);
    if (want_count == 2) {
        CHECK_EQ_U(blends[1].frame, fb);
        CHECK_NEAR(blends[1].weight, wb, 1e-6);
    }
    {
        ossa_mat3x4 bones[12];
        CHECK_OK(ossa_pose_frames(model, blends, count, NULL, bones, 12));
    }
    check_context(NULL);
}

static void check_scene(const ossa_model *model, uint32_t index, const char *name, uint32_t first, uint32_t count,
                        double fps, uint32_t looping)
{
    ossa_animation_info a;
    check_context("animation %u", (unsigned)index);
    if (CHECK_OK(ossa_model_get_animation(model, index, &a))) {
        CHECK_STR(a.name, name);
        CHECK_EQ_U(a.first_frame, first);
        CHECK_EQ_U(a.frame_count, count);
        CHECK_NEAR(a.fps, fps, 0);
        CHECK_EQ_U(a.looping, looping);
    }
    check_context(NULL);
}

static void test_scenes(void)
{
    char dir[4096], path[4600], groups[4700];
    fx_model fx;
    fx_buf bytes = {NULL, 0, 0};
    ossa_model *model = NULL;
    ossa_model_info info;
    ossa_error err;

    if (fx_make_temp_dir(dir, sizeof dir) != 0) {
        CHECK(!"could not make a temporary directory");
        return;
    }
    fx_make_big(&fx, 60, 11);
    fx_write_dpm(&fx, &bytes, NULL);

    /* scene.dpm with its scene file. */
    snprintf(path, sizeof path, "%s/scene.dpm", dir);
    snprintf(groups, sizeof groups, "%s/scene.dpm.framegroups", dir);
    CHECK(fx_write_file(path, bytes.data, bytes.size) == 0);
    CHECK(fx_write_file(groups, "0 2 10 1 idle\n2 2 5 0 die\n", strlen("0 2 10 1 idle\n2 2 5 0 die\n")) == 0);
    CHECK_OK(ossa_load_file(path, NULL, &model, &err));
    if (model) {
        ossa_frame_blend blends[2];
        size_t count;
        ossa_animation_info a;

        CHECK_OK(ossa_model_get_info(model, &info));
        CHECK_EQ_U(info.frame_count, 4);
        CHECK_EQ_U(info.bone_count, 12);
        CHECK_EQ_U(info.animation_count, 2);
        check_scene(model, 0, "idle", 0, 2, 10, 1);
        check_scene(model, 1, "die", 2, 2, 5, 0);

        /* idle, 10 fps, looping over frames 0 and 1. */
        CHECK_BLEND(model, 0, 0.0, 1, 0, 1, 0, 0);
        CHECK_BLEND(model, 0, 0.05, 2, 0, 0.5, 1, 0.5);   /* position 0.5 */
        CHECK_BLEND(model, 0, 0.125, 2, 1, 0.75, 0, 0.25); /* 1.25: from the last frame round to the first */
        CHECK_BLEND(model, 0, 0.25, 2, 0, 0.5, 1, 0.5);   /* 2.5 wraps to 0.5 */
        CHECK_BLEND(model, 0, -0.025, 2, 1, 0.25, 0, 0.75); /* -0.25 wraps to 1.75 */
        /* die, 5 fps, held at its ends. */
        CHECK_BLEND(model, 1, 0.0, 1, 2, 1, 0, 0);
        CHECK_BLEND(model, 1, 0.1, 2, 2, 0.5, 3, 0.5); /* position 0.5 */
        CHECK_BLEND(model, 1, 10.0, 1, 3, 1, 0, 0);    /* 50, clamped to the last frame */
        CHECK_BLEND(model, 1, -3.0, 1, 2, 1, 0, 0);    /* before the start: the first frame */

        /* Out of range: INVALID_ARGUMENT, outputs untouched. */
        memset(blends, POISON, sizeof blends);
        memset(&count, POISON, sizeof count);
        CHECK_RESULT(ossa_animation_blend(model, 2, 0.1, blends, &count), OSSA_ERR_INVALID_ARGUMENT);
        CHECK(is_poisoned(blends, sizeof blends));
        CHECK(is_poisoned(&count, sizeof count));
        CHECK_RESULT(ossa_animation_blend(model, 0xffffffffu, 0.1, blends, &count), OSSA_ERR_INVALID_ARGUMENT);
        CHECK(is_poisoned(blends, sizeof blends));
        memset(&a, POISON, sizeof a);
        CHECK_RESULT(ossa_model_get_animation(model, 2, &a), OSSA_ERR_INVALID_ARGUMENT);
        CHECK(is_poisoned(&a, sizeof a));
        CHECK_RESULT(ossa_animation_blend(model, 0, 0.1, NULL, &count), OSSA_ERR_NULL_ARGUMENT);
        CHECK_RESULT(ossa_animation_blend(model, 0, 0.1, blends, NULL), OSSA_ERR_NULL_ARGUMENT);
        CHECK_RESULT(ossa_model_get_animation(model, 0, NULL), OSSA_ERR_NULL_ARGUMENT);
        ossa_model_free(model);
    }

    /* The same scene file through the caller's filesystem, for ossa_load_memory with a name. */
    {
        mem_fs fs;
        ossa_load_options opt;
        fs_init(&fs);
        fs_add_text(&fs, "models/gen/scene.dpm.framegroups", "0 2 10 1 idle\n2 2 5 0 die\n");
        ossa_load_options_init(&opt);
        opt.io = &fs.io;
        opt.name = "models/gen/scene.dpm";
        model = NULL;
        check_context("framegroups through io");
        CHECK_OK(ossa_load_memory(bytes.data, bytes.size, &opt, &model, &err));
        CHECK_ASKED(&fs, "models/gen/scene.dpm.framegroups", NULL);
        CHECK_RELEASED(&fs);
        check_context(NULL);
        if (model) {
            CHECK_OK(ossa_model_get_info(model, &info));
            CHECK_EQ_U(info.animation_count, 2);
            check_scene(model, 1, "die", 2, 2, 5, 0);
            ossa_model_free(model);
        }
    }

    /* plain.dpm without one: a scene per frame at 10 fps, named after its frame. */
    snprintf(path, sizeof path, "%s/plain.dpm", dir);
    CHECK(fx_write_file(path, bytes.data, bytes.size) == 0);
    model = NULL;
    CHECK_OK(ossa_load_file(path, NULL, &model, &err));
    if (model) {
        uint32_t i;
        CHECK_OK(ossa_model_get_info(model, &info));
        CHECK_EQ_U(info.animation_count, info.frame_count);
        CHECK_EQ_U(info.animation_count, 4);
        for (i = 0; i < info.animation_count; i++) {
            ossa_animation_info a;
            char name[16];
            snprintf(name, sizeof name, "frame%u", (unsigned)i);
            check_context("per-frame scene %u", (unsigned)i);
            if (CHECK_OK(ossa_model_get_animation(model, i, &a))) {
                CHECK_STR(a.name, name);
                CHECK_EQ_U(a.first_frame, i);
                CHECK_EQ_U(a.frame_count, 1);
                CHECK_NEAR(a.fps, 10, 0);
                CHECK(a.looping == 0 || a.looping == 1);
            }
            check_context(NULL);
            CHECK_BLEND(model, i, 0.37, 1, i, 1, 0, 0);
        }
        ossa_model_free(model);
    }

    /* bad.dpm: a scene past the last frame, on line 2. The default mode loads the model with its
       own scenes (one per frame) and a warning naming the file and line; strict mode refuses it. */
    snprintf(path, sizeof path, "%s/bad.dpm", dir);
    snprintf(groups, sizeof groups, "%s/bad.dpm.framegroups", dir);
    CHECK(fx_write_file(path, bytes.data, bytes.size) == 0);
    CHECK(fx_write_file(groups, "0 2 10 1 idle\n3 2 5 0 die\n", strlen("0 2 10 1 idle\n3 2 5 0 die\n")) == 0);
    model = NULL;
    CHECK_OK(ossa_load_file(path, NULL, &model, &err));
    if (model) {
        CHECK_OK(ossa_model_get_info(model, &info));
        CHECK_EQ_U(info.animation_count, 4);
        check_scene(model, 3, "frame3", 3, 1, 10, 1);
        CHECK_EQ_U(ossa_model_warning_count(model), 1);
        CHECK_STR(ossa_model_warning(model, 0),
                  "bad.dpm.framegroups line 2: scene \"die\" runs frames 3..5 but the model has 4 frames;"
                  " the file is not used, every frame is a scene of its own");
        ossa_model_free(model);
    }
    {
        ossa_load_options strict;
        ossa_load_options_init(&strict);
        strict.flags = OSSA_LOAD_STRICT;
        model = SENTINEL;
        preset_error(&err);
        CHECK_RESULT(ossa_load_file(path, &strict, &model, &err), OSSA_ERR_MALFORMED);
        CHECK(model == SENTINEL);
        CHECK_RESULT(err.result, OSSA_ERR_MALFORMED);
        CHECK_EQ_U(err.line, 2);
        CHECK(err.offset == UINT64_MAX);
        if (!CHECK(strncmp(err.message, "bad.dpm.framegroups line 2", 26) == 0))
            fprintf(stderr, "    message: \"%s\"\n", err.message);

        /* A comment and a blank line count as lines too, and so does a block comment's. */
        CHECK(fx_write_file(groups, "/* scenes\n*/\n\n0 2 10 1 idle\n0 5 5 0 die\n",
                            strlen("/* scenes\n*/\n\n0 2 10 1 idle\n0 5 5 0 die\n")) == 0);
        model = SENTINEL;
        preset_error(&err);
        CHECK_RESULT(ossa_load_file(path, &strict, &model, &err), OSSA_ERR_MALFORMED);
        CHECK(model == SENTINEL);
        CHECK_EQ_U(err.line, 5);
        if (!CHECK(strncmp(err.message, "bad.dpm.framegroups line 5", 26) == 0))
            fprintf(stderr, "    message: \"%s\"\n", err.message);
    }

    fx_buf_free(&bytes);
    fx_model_free(&fx);
    fx_remove_temp_dir(dir);
}

/* A framegroups served by the caller's io that is larger than max_bytes: not parsed. The default
   mode loads the model with its own scenes and a warning; strict mode fails with OSSA_ERR_LIMIT.
   Either way the read is released. */
static void test_framegroups_over_the_limit(void)
{
    enum { BIG = 4 << 20 };
    fx_model fx;
    fx_buf bytes;
    ossa_model *model;
    ossa_model_info info;
    ossa_error err;
    ossa_load_options opt;
    mem_fs fs;
    uint8_t *big = malloc(BIG);
    size_t i;

    if (!CHECK(big != NULL))
        return;
    for (i = 0; i < BIG; i += 4)
        memcpy(big + i, "0 1\n", 4);
    fx_make_big(&fx, 60, 11);
    fx_write_dpm(&fx, &bytes, NULL);
    fs_init(&fs);
    fs_add(&fs, "gen/scene.dpm", &bytes);
    {
        fx_buf groups;
        groups.data = big;
        groups.size = BIG;
        groups.cap = BIG;
        fs_add(&fs, "gen/scene.dpm.framegroups", &groups);
    }
    ossa_load_options_init(&opt);
    opt.io = &fs.io;
    opt.max_bytes = 1 << 20;

    check_context("framegroups over max_bytes, default mode");
    model = NULL;
    CHECK_OK(ossa_load_file("gen/scene.dpm", &opt, &model, &err));
    CHECK_ASKED(&fs, "gen/scene.dpm", "gen/scene.dpm.framegroups", NULL);
    CHECK_RELEASED(&fs);
    if (model) {
        CHECK_OK(ossa_model_get_info(model, &info));
        CHECK_EQ_U(info.animation_count, 4);
        check_scene(model, 2, "frame2", 2, 1, 10, 1);
        CHECK_EQ_U(ossa_model_warning_count(model), 1);
        CHECK_MESSAGE(ossa_model_warning(model, 0), "gen/scene.dpm.framegroups holds 4194304 bytes, more than the ");
        CHECK_MESSAGE(ossa_model_warning(model, 0), "; the file is not used, every frame is a scene of its own");
        ossa_model_free(model);
    }

    check_context("framegroups over max_bytes, strict");
    fs_reset(&fs);
    opt.flags = OSSA_LOAD_STRICT;
    model = SENTINEL;
    preset_error(&err);
    CHECK_RESULT(ossa_load_file("gen/scene.dpm", &opt, &model, &err), OSSA_ERR_LIMIT);
    CHECK(model == SENTINEL);
    CHECK_RESULT(err.result, OSSA_ERR_LIMIT);
    CHECK_MESSAGE(err.message, "gen/scene.dpm.framegroups holds 4194304 bytes, more than the ");
    CHECK_RELEASED(&fs);
    check_context(NULL);

    fx_buf_free(&bytes);
    fx_model_free(&fx);
    free(big);
}

int main(void)
{
    char dir[4096];
    corpus c;

    snprintf(dir, sizeof dir, "%s/skm", fx_corpus_dir());
    if (load_corpus(&c, dir) != 0) {
        printf("corpus not found at %s; skipping sidecar and binding checks on monada and testbox\n", dir);
    } else {
        printf("corpus: monada tris.skm %u bytes, tris.skp %u bytes, LODs %u and %u bytes; testbox %u + %u bytes\n",
               (unsigned)c.skm.size, (unsigned)c.skp.size, (unsigned)c.skm2.size, (unsigned)c.skm3.size,
               (unsigned)c.box_skm.size, (unsigned)c.box_skp.size);
        test_io_plain(&c);
        test_io_lods(&c);
        test_io_cfg(&c);
        test_io_memory(&c);
        test_bind(&c);
    }
    free_corpus(&c);
    test_bind_dpms();
    test_scenes();
    test_framegroups_over_the_limit();
    return check_finish("test_sidecars");
}
