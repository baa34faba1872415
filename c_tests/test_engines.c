/* Engine rules from C: ossa_check_engine lists what DarkPlaces', FTE's, qfusion's and Warfork's
   IQM loaders would refuse or get wrong, each finding with its rule id, kind, byte offset and
   sentence; the count is of all findings whatever the capacity; a version 1 file made here is
   refused by qfusion; a Warfork player model's animation.cfg is read through the caller's io;
   bad arguments write nothing; ossa_save_with's engine writes an IQM qfusion loads, and refuses
   (naming the rule) a format that is not IQM; with `beside` it hands over the sidecars ossa
   convert --engine writes. The corpus checks skip when it is absent. */
#define _POSIX_C_SOURCE 200809L

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fixture.h"
#include "memfs.h"

#define MAX_FINDINGS 16

/* A version 1 IQM of nothing but its header. */
static void version_1_header(uint8_t out[124])
{
    memset(out, 0, 124);
    memcpy(out, "INTERQUAKEMODEL", 16);
    out[16] = 1;   /* version */
    out[20] = 124; /* filesize */
}

/* The finding of `rule` among `n`, or NULL. */
static const ossa_engine_finding *find(const ossa_engine_finding *f, size_t n, const char *rule)
{
    size_t k;
    for (k = 0; k < n; k++)
        if (strcmp(f[k].rule, rule) == 0)
            return &f[k];
    return NULL;
}

static void check_version_1(void)
{
    uint8_t file[124];
    ossa_engine_finding findings[MAX_FINDINGS];
    size_t count = 99;
    ossa_error error;
    version_1_header(file);

    check_context("version 1 in qfusion");
    CHECK_OK(ossa_check_engine(file, sizeof file, OSSA_ENGINE_QFUSION, 0, NULL, findings, MAX_FINDINGS,
                               &count, &error));
    CHECK_EQ_U(count, 1);
    CHECK_STR(findings[0].rule, "qfusion.version");
    CHECK_EQ_U(findings[0].kind, OSSA_FINDING_REFUSES);
    CHECK_EQ_U(findings[0].offset, 16);
    CHECK_EQ_U(findings[0].line, 0);
    CHECK_MESSAGE(findings[0].message, "version 1");

    /* DarkPlaces and FTE read version 1: an empty one breaks nothing. */
    check_context("version 1 in DarkPlaces and FTE");
    CHECK_OK(ossa_check_engine(file, sizeof file, OSSA_ENGINE_DARKPLACES, 0, NULL, findings, MAX_FINDINGS,
                               &count, &error));
    CHECK_EQ_U(count, 0);
    CHECK_OK(ossa_check_engine(file, sizeof file, OSSA_ENGINE_FTE, 0, NULL, findings, MAX_FINDINGS, &count,
                               &error));
    CHECK_EQ_U(count, 0);
    check_context(NULL);
}

static void check_arguments(void)
{
    uint8_t file[124];
    ossa_engine_finding findings[2];
    size_t count;
    ossa_error error;
    version_1_header(file);

    memset(findings, POISON, sizeof findings);
    memset(&count, POISON, sizeof count);
    CHECK_RESULT(ossa_check_engine(file, sizeof file, OSSA_ENGINE_QFUSION, 0, NULL, findings, 2, NULL, &error),
                 OSSA_ERR_NULL_ARGUMENT);
    CHECK_RESULT(ossa_check_engine(NULL, 0, OSSA_ENGINE_QFUSION, 0, NULL, findings, 2, &count, &error),
                 OSSA_ERR_NULL_ARGUMENT);
    CHECK_RESULT(ossa_check_engine(file, sizeof file, OSSA_ENGINE_QFUSION, 0, NULL, NULL, 2, &count, &error),
                 OSSA_ERR_NULL_ARGUMENT);
    CHECK_RESULT(ossa_check_engine(file, sizeof file, 9, 0, NULL, findings, 2, &count, &error),
                 OSSA_ERR_INVALID_ARGUMENT);
    CHECK_MESSAGE(error.message, "no ossa_engine");
    CHECK_RESULT(ossa_check_engine(file, sizeof file, OSSA_ENGINE_QFUSION, 2, NULL, findings, 2, &count, &error),
                 OSSA_ERR_INVALID_ARGUMENT);
    CHECK_RESULT(ossa_check_engine((const uint8_t *)"hello", 5, OSSA_ENGINE_QFUSION, 0, NULL, findings, 2, &count,
                                   &error),
                 OSSA_ERR_UNKNOWN_FORMAT);
    CHECK(is_poisoned(findings, sizeof findings));
    CHECK(is_poisoned(&count, sizeof count));

    /* Capacity 0 with no buffer: the count alone. */
    CHECK_OK(ossa_check_engine(file, sizeof file, OSSA_ENGINE_WARFORK, 0, NULL, NULL, 0, &count, &error));
    CHECK_EQ_U(count, 1);

    CHECK_STR(ossa_engine_name(OSSA_ENGINE_WARFORK), "OSSA_ENGINE_WARFORK");
    CHECK_STR(ossa_engine_name(OSSA_ENGINE_DARKPLACES), "OSSA_ENGINE_DARKPLACES");
    CHECK_STR(ossa_engine_name(0), "OSSA_ENGINE_UNKNOWN");
}

/* The corpus's bush: triangles of mesh 0 use mesh 1's vertices, and it has joints without poses,
   frames or bounds. */
static void check_bush(const char *dir)
{
    char path[4200];
    fx_buf file = {0};
    ossa_engine_finding findings[MAX_FINDINGS], one;
    const ossa_engine_finding *f;
    size_t count, all;
    ossa_error error;
    ossa_load_options options;

    snprintf(path, sizeof path, "%s/ksdk_bush.iqm", dir);
    if (fx_read_file(path, &file) != 0) {
        fx_buf_free(&file);
        printf("corpus not found at %s; skipping the corpus checks\n", dir);
        return;
    }
    check_context("ksdk_bush.iqm in FTE");
    CHECK_OK(ossa_check_engine(file.data, file.size, OSSA_ENGINE_FTE, 0, NULL, findings, MAX_FINDINGS, &count,
                               &error));
    f = find(findings, count, "fte.mesh_range");
    CHECK(f != NULL);
    if (f) {
        CHECK_EQ_U(f->kind, OSSA_FINDING_MISREADS);
        CHECK_EQ_U(f->offset, 0x840);
        CHECK_MESSAGE(f->message, "mesh 0 (Cube) triangle 0 corner 0: vertex 16");
        CHECK_MESSAGE(f->message, "at byte 0x840");
    }
    CHECK(find(findings, count, "fte.weights_zero") != NULL);

    check_context("ksdk_bush.iqm in qfusion");
    CHECK_OK(ossa_check_engine(file.data, file.size, OSSA_ENGINE_QFUSION, 0, NULL, findings, MAX_FINDINGS, &all,
                               &error));
    CHECK(all >= 4);
    CHECK_STR(findings[0].rule, "qfusion.animations");
    CHECK_EQ_U(findings[0].kind, OSSA_FINDING_REFUSES);
    CHECK_EQ_U(findings[0].offset, 92);
    CHECK(find(findings, all, "qfusion.poses") != NULL);
    CHECK(find(findings, all, "qfusion.bounds") != NULL);
    f = find(findings, all, "qfusion.mesh_range");
    CHECK(f != NULL && f->kind == OSSA_FINDING_MISREADS);

    /* A buffer of one: the first finding, and the count of all. */
    memset(&one, POISON, sizeof one);
    CHECK_OK(ossa_check_engine(file.data, file.size, OSSA_ENGINE_QFUSION, 0, NULL, &one, 1, &count, &error));
    CHECK_EQ_U(count, all);
    CHECK_STR(one.rule, "qfusion.animations");

    /* The same through the file's path. */
    CHECK_OK(ossa_check_engine_file(path, OSSA_ENGINE_QFUSION, 0, NULL, findings, MAX_FINDINGS, &count, &error));
    CHECK_EQ_U(count, all);

    /* A Warfork player model: animation.cfg beside it, read through io; missing, it refuses. */
    check_context("ksdk_bush.iqm as a Warfork player model");
    {
        mem_fs fs;
        ossa_engine_finding many[MAX_FINDINGS];
        fs_init(&fs);
        ossa_load_options_init(&options);
        options.io = &fs.io;
        options.name = "players/bush/tris.iqm";
        CHECK_OK(ossa_check_engine(file.data, file.size, OSSA_ENGINE_WARFORK, 0, &options, many, MAX_FINDINGS,
                                   &count, &error));
        f = find(many, count < MAX_FINDINGS ? count : MAX_FINDINGS, "warfork.animation_cfg");
        CHECK(f != NULL && f->kind == OSSA_FINDING_REFUSES);
        CHECK(fs_was_asked(&fs, "players/bush/animation.cfg"));
        CHECK_RELEASED(&fs);

        /* Present, with too few anims: read, and refused for its count on its line. */
        fs_reset(&fs);
        fs_add_text(&fs, "players/bush/animation.cfg", "sex m\n0 0 0 10\n");
        CHECK_OK(ossa_check_engine(file.data, file.size, OSSA_ENGINE_WARFORK, 0, &options, many, MAX_FINDINGS,
                                   &count, &error));
        f = find(many, count < MAX_FINDINGS ? count : MAX_FINDINGS, "warfork.animation_cfg_count");
        CHECK(f != NULL);
        if (f) {
            CHECK_EQ_U(f->kind, OSSA_FINDING_REFUSES);
            CHECK_EQ_U(f->line, 2);
            CHECK_EQ_U(f->offset, UINT64_MAX);
            CHECK_MESSAGE(f->message, "animation.cfg line 2: 1 anim of 4 numbers read");
        }
        CHECK_RELEASED(&fs);

        /* Without io the config is not read: a note says so. The flag makes any name a player. */
        CHECK_OK(ossa_check_engine(file.data, file.size, OSSA_ENGINE_WARFORK, OSSA_ENGINE_PLAYER, NULL, many,
                                   MAX_FINDINGS, &count, &error));
        f = find(many, count < MAX_FINDINGS ? count : MAX_FINDINGS, "warfork.animation_cfg_unchecked");
        CHECK(f != NULL && f->kind == OSSA_FINDING_NOTE);
    }
    check_context(NULL);
    fx_buf_free(&file);
}

/* ossa_save_with's engine: the bush saved for qfusion has frames, anims, poses and bounds. */
static void check_save(const char *dir)
{
    char path[4200];
    ossa_model *model = NULL;
    ossa_save_options opt;
    ossa_error error;
    fx_buf saved = {0};
    ossa_engine_finding findings[MAX_FINDINGS];
    size_t count, k;

    snprintf(path, sizeof path, "%s/ksdk_bush.iqm", dir);
    if (ossa_load_file(path, NULL, &model, &error) != OSSA_OK)
        return;
    ossa_save_options_init(&opt);
    opt.engine = OSSA_ENGINE_QFUSION;
    CHECK_OK(ossa_save_with(model, OSSA_FORMAT_IQM, &opt, fx_collect, &saved, &error));
    CHECK_OK(ossa_check_engine(saved.data, saved.size, OSSA_ENGINE_QFUSION, 0, NULL, findings, MAX_FINDINGS,
                               &count, &error));
    for (k = 0; k < count && k < MAX_FINDINGS; k++) {
        check_context("saved for qfusion: %s", findings[k].message);
        CHECK(findings[k].kind != OSSA_FINDING_REFUSES);
    }
    check_context(NULL);
    fx_buf_free(&saved);

    /* The layout callers built before `engine` existed is still taken (and writes no engine). */
    ossa_save_options_init(&opt);
    opt.size = (uint32_t)offsetof(ossa_save_options, engine);
    CHECK_OK(ossa_save_with(model, OSSA_FORMAT_IQM, &opt, fx_collect, &saved, &error));
    CHECK(saved.size > 0);
    fx_buf_free(&saved);

    ossa_save_options_init(&opt);
    opt.engine = OSSA_ENGINE_QFUSION;
    CHECK_RESULT(ossa_save_with(model, OSSA_FORMAT_DPM, &opt, fx_collect, &saved, &error),
                 OSSA_ERR_INVALID_ARGUMENT);
    CHECK_MESSAGE(error.message, "engine is for IQM");
    opt.engine = 7;
    CHECK_RESULT(ossa_save_with(model, OSSA_FORMAT_IQM, &opt, fx_collect, &saved, &error),
                 OSSA_ERR_INVALID_ARGUMENT);
    CHECK_EQ_U(saved.size, 0);
    fx_buf_free(&saved);
    ossa_model_free(model);

    /* An animation-only file saved for qfusion is refused, naming the rule: it has no meshes. */
    snprintf(path, sizeof path, "%s/rea_player_dead.iqm", dir);
    model = NULL;
    if (ossa_load_file(path, NULL, &model, &error) != OSSA_OK)
        return;
    ossa_save_options_init(&opt);
    opt.engine = OSSA_ENGINE_QFUSION;
    CHECK_RESULT(ossa_save_with(model, OSSA_FORMAT_IQM, &opt, fx_collect, &saved, &error),
                 OSSA_ERR_UNSUPPORTED);
    CHECK_MESSAGE(error.message, "qfusion.geometry");
    CHECK_EQ_U(saved.size, 0);
    fx_buf_free(&saved);
    ossa_model_free(model);
}

/* The files ossa_save_with hands to `beside`: their names, one after the other, and the last
   file's bytes. */
typedef struct beside_files {
    char names[512];
    fx_buf last;
    size_t count;
} beside_files;

static uint32_t collect_beside(void *user, const char *name, const uint8_t *data, size_t size)
{
    beside_files *b = user;
    size_t used = strlen(b->names);
    snprintf(b->names + used, sizeof b->names - used, "%s%s", used ? " " : "", name);
    fx_buf_free(&b->last);
    b->count++;
    return fx_collect(&b->last, data, size);
}

/* With `beside`, the sidecars ossa convert --engine writes: xon_zombie.dpm for DarkPlaces comes
   with its framegroups (one line a scene) and, named with the model's file, its four .skin files
   again; a Warfork player model with the animation.cfg made from its scenes. */
static void check_save_beside(const char *corpus)
{
    char path[4200];
    ossa_model *model = NULL;
    ossa_save_options opt;
    ossa_error error;
    fx_buf saved = {0};
    beside_files files = {{0}, {0}, 0};
    ossa_model_info info;
    size_t lines = 0, k;

    snprintf(path, sizeof path, "%s/dpm/xon_zombie.dpm", corpus);
    if (ossa_load_file(path, NULL, &model, &error) != OSSA_OK)
        return;
    ossa_save_options_init(&opt);
    opt.engine = OSSA_ENGINE_DARKPLACES;
    opt.output_name = "zombie.iqm";
    opt.beside = collect_beside;
    opt.beside_user = &files;
    CHECK_OK(ossa_save_with(model, OSSA_FORMAT_IQM, &opt, fx_collect, &saved, &error));
    CHECK(saved.size > 124 && memcmp(saved.data, "INTERQUAKEMODEL", 16) == 0);
    CHECK_STR(files.names, "zombie.iqm.framegroups");
    for (k = 0; k < files.last.size; k++)
        lines += files.last.data[k] == '\n';
    CHECK_OK(ossa_model_get_info(model, &info));
    CHECK_EQ_U(lines, info.animation_count);
    fx_buf_free(&saved);
    fx_buf_free(&files.last);

    /* Told the model's file, the .skin files beside it are written again for the IQM. */
    memset(&files, 0, sizeof files);
    opt.name = path;
    CHECK_OK(ossa_save_with(model, OSSA_FORMAT_IQM, &opt, fx_collect, &saved, &error));
    CHECK_STR(files.names, "zombie.iqm.framegroups zombie.iqm_0.skin zombie.iqm_1.skin zombie.iqm_2.skin "
                           "zombie.iqm_3.skin");
    CHECK(files.last.size > 0 && memchr(files.last.data, ',', files.last.size) != NULL);
    fx_buf_free(&saved);
    fx_buf_free(&files.last);

    /* The zombie as a Warfork player model is refused, naming the rule: its 31 scenes make an
       animation.cfg of fewer anims than Warfork's 49. */
    memset(&files, 0, sizeof files);
    ossa_save_options_init(&opt);
    opt.engine = OSSA_ENGINE_WARFORK;
    opt.save_flags = OSSA_SAVE_PLAYER;
    opt.output_name = "tris.iqm";
    opt.beside = collect_beside;
    opt.beside_user = &files;
    CHECK_RESULT(ossa_save_with(model, OSSA_FORMAT_IQM, &opt, fx_collect, &saved, &error),
                 OSSA_ERR_UNSUPPORTED);
    CHECK_MESSAGE(error.message, "warfork.animation_cfg_count");
    CHECK_EQ_U(saved.size, 0);
    CHECK_EQ_U(files.count, 0);

    /* What cannot be written is refused before anything is. */
    memset(&files, 0, sizeof files);
    opt.output_name = NULL;
    CHECK_RESULT(ossa_save_with(model, OSSA_FORMAT_IQM, &opt, fx_collect, &saved, &error),
                 OSSA_ERR_INVALID_ARGUMENT);
    CHECK_MESSAGE(error.message, "options->output_name names the saved file");
    opt.output_name = "tris.iqm";
    opt.engine = OSSA_ENGINE_FTE;
    CHECK_RESULT(ossa_save_with(model, OSSA_FORMAT_IQM, &opt, fx_collect, &saved, &error),
                 OSSA_ERR_INVALID_ARGUMENT);
    CHECK_MESSAGE(error.message, "OSSA_SAVE_PLAYER is for the engines qfusion and warfork");
    opt.save_flags = OSSA_SAVE_SIDECARS;
    opt.beside = NULL;
    CHECK_RESULT(ossa_save_with(model, OSSA_FORMAT_IQM, &opt, fx_collect, &saved, &error),
                 OSSA_ERR_INVALID_ARGUMENT);
    CHECK_MESSAGE(error.message, "options->beside receives them");
    opt.beside = collect_beside;
    CHECK_RESULT(ossa_save_with(model, OSSA_FORMAT_DPM, &opt, fx_collect, &saved, &error),
                 OSSA_ERR_INVALID_ARGUMENT);
    CHECK_MESSAGE(error.message, "engine is for IQM, not DPM");
    CHECK_EQ_U(saved.size, 0);
    CHECK_EQ_U(files.count, 0);

    /* The Warsow 0.5 player (its SKP beside it) as Warfork's tris.iqm and animation.cfg. */
    snprintf(path, sizeof path, "%s/skm/wsw05sdk_monada_tris.skm", corpus);
    {
        ossa_model *player = NULL;
        if (ossa_load_file(path, NULL, &player, &error) == OSSA_OK) {
            memset(&files, 0, sizeof files);
            opt.engine = OSSA_ENGINE_WARFORK;
            opt.save_flags = OSSA_SAVE_PLAYER;
            CHECK_OK(ossa_save_with(player, OSSA_FORMAT_IQM, &opt, fx_collect, &saved, &error));
            CHECK_STR(files.names, "animation.cfg");
            CHECK(files.last.size > 0 && memcmp(files.last.data, "//", 2) == 0);
            fx_buf_free(&saved);
            fx_buf_free(&files.last);
            ossa_model_free(player);
        }
    }

    /* The layout released before the files beside is still taken. */
    ossa_save_options_init(&opt);
    opt.size = (uint32_t)offsetof(ossa_save_options, save_flags);
    opt.engine = OSSA_ENGINE_DARKPLACES;
    CHECK_OK(ossa_save_with(model, OSSA_FORMAT_IQM, &opt, fx_collect, &saved, &error));
    CHECK(saved.size > 124);
    fx_buf_free(&saved);
    ossa_model_free(model);
}

int main(void)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/iqm", fx_corpus_dir());
    check_version_1();
    check_arguments();
    check_bush(dir);
    check_save(dir);
    check_save_beside(fx_corpus_dir());
    return check_finish("test_engines");
}
