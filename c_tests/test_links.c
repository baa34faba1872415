/* Nothing outside the allowed directory is read, whatever its symbolic links say, and the caller's
 * read callback is never asked for an absolute path or one with `..`.
 *
 * 1. A temporary directory with base/ (the allowed directory) and outside/: an SKM whose .skp links
 *    outside, a model that is itself a link outside, and a linked directory are refused with
 *    OSSA_ERR_INVALID_ARGUMENT; links that stay inside base/ are followed.
 * 2. A recording ossa_file_io: model paths and names that leave it (`..`, absolute, backslashes) are
 *    refused before anything is asked, for models and skill files, from files and from memory.
 *
 * Needs no corpus: the SKM and SKP are saved from a generated DPM. */
#define _POSIX_C_SOURCE 200809L

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "fixture.h"
#include "memfs.h"

/* Failed calls must leave *out alone: it is preset to this and compared afterwards. */
static char sentinel_storage;
#define SENTINEL ((ossa_model *)(void *)&sentinel_storage)

/* A line no model file holds: found in a message, it came from the file outside. */
#define SECRET "root:x:0:0:ossa-outside-secret:/root:/bin/sh\n"

typedef struct files {
    fx_buf dpm, skm, skp;
} files;

static void make_files(files *f)
{
    fx_model fx;
    ossa_model *model = NULL;
    memset(f, 0, sizeof *f);
    fx_make_small(&fx);
    fx_write_dpm(&fx, &f->dpm, NULL);
    fx_model_free(&fx);
    if (!CHECK_OK(ossa_load_memory(f->dpm.data, f->dpm.size, NULL, &model, NULL)))
        return;
    CHECK_OK(ossa_save(model, OSSA_FORMAT_SKM, 0, fx_collect, &f->skm, NULL));
    CHECK_OK(ossa_save(model, OSSA_FORMAT_SKP, 0, fx_collect, &f->skp, NULL));
    ossa_model_free(model);
}

static void free_files(files *f)
{
    fx_buf_free(&f->dpm);
    fx_buf_free(&f->skm);
    fx_buf_free(&f->skp);
}

/* `path` loads under `base` (NULL: the model's own directory) only to OSSA_ERR_INVALID_ARGUMENT,
   whose message names `named` and holds nothing of the outside file. */
static void check_refused(const char *path, const char *base, const char *named)
{
    ossa_load_options opt;
    ossa_model *model = SENTINEL;
    ossa_error err;
    ossa_load_options_init(&opt);
    opt.base_dir = base;
    check_context("%s under %s", path, base ? base : "its own directory");
    CHECK_RESULT(ossa_load_file(path, &opt, &model, &err), OSSA_ERR_INVALID_ARGUMENT);
    CHECK(model == SENTINEL);
    CHECK_MESSAGE(err.message, named);
    CHECK(!contains(err.message, "ossa-outside-secret"));
    check_context(NULL);
}

static uint32_t load_bones(const char *path, const char *base)
{
    ossa_load_options opt;
    ossa_model *model = NULL;
    ossa_model_info info;
    ossa_error err;
    uint32_t bones = 0;
    ossa_load_options_init(&opt);
    opt.base_dir = base;
    if (!CHECK_OK(ossa_load_file(path, &opt, &model, &err))) {
        fprintf(stderr, "    %s: %s\n", path, err.message);
        return 0;
    }
    if (CHECK_OK(ossa_model_get_info(model, &info))) {
        CHECK(!(info.flags & OSSA_MODEL_UNBOUND));
        bones = info.bone_count;
    }
    ossa_model_free(model);
    return bones;
}

static void test_links(const files *f)
{
    char dir[4096], base[4200], outside[4200], sub[4300], path[4400], target[4400];

    if (fx_make_temp_dir(dir, sizeof dir) != 0) {
        CHECK(!"could not make a temporary directory");
        return;
    }
    snprintf(base, sizeof base, "%s/base", dir);
    snprintf(outside, sizeof outside, "%s/outside", dir);
    CHECK(mkdir(base, 0700) == 0);
    CHECK(mkdir(outside, 0700) == 0);

    /* base/tube.skm beside base/tube.skp -> outside/tube.skp, a valid skeleton. */
    snprintf(path, sizeof path, "%s/tube.skm", base);
    CHECK(fx_write_file(path, f->skm.data, f->skm.size) == 0);
    snprintf(target, sizeof target, "%s/tube.skp", outside);
    CHECK(fx_write_file(target, f->skp.data, f->skp.size) == 0);
    snprintf(path, sizeof path, "%s/tube.skp", base);
    CHECK(symlink(target, path) == 0);
    snprintf(path, sizeof path, "%s/tube.skm", base);
    check_refused(path, base, "\"tube.skp\" leads outside the files the model may read");
    check_refused(path, NULL, "\"tube.skp\" leads outside");
    /* The link loaded as the model itself. */
    snprintf(path, sizeof path, "%s/tube.skp", base);
    check_refused(path, base, "\"tube.skp\" leads outside");
    CHECK_EQ_U(load_bones(target, outside), 4);

    /* The same by a relative link to a text file: its line is not in the message. */
    snprintf(target, sizeof target, "%s/secret.skp", outside);
    CHECK(fx_write_file(target, SECRET, strlen(SECRET)) == 0);
    snprintf(path, sizeof path, "%s/tube.skp", base);
    CHECK(unlink(path) == 0);
    CHECK(symlink("../outside/secret.skp", path) == 0);
    snprintf(path, sizeof path, "%s/tube.skm", base);
    check_refused(path, base, "\"tube.skp\" leads outside");

    /* A link that stays inside is followed. */
    snprintf(path, sizeof path, "%s/real.skp", base);
    CHECK(fx_write_file(path, f->skp.data, f->skp.size) == 0);
    snprintf(path, sizeof path, "%s/tube.skp", base);
    CHECK(unlink(path) == 0);
    CHECK(symlink("real.skp", path) == 0);
    snprintf(path, sizeof path, "%s/tube.skm", base);
    CHECK_EQ_U(load_bones(path, base), 4);

    /* The model itself linking outside: refused with a base directory; without one, the
       caller's own link is followed and the file's directory is the base. */
    snprintf(target, sizeof target, "%s/tube.dpm", outside);
    CHECK(fx_write_file(target, f->dpm.data, f->dpm.size) == 0);
    snprintf(path, sizeof path, "%s/linked.dpm", base);
    CHECK(symlink(target, path) == 0);
    check_refused(path, base, "\"linked.dpm\" leads outside");
    CHECK_EQ_U(load_bones(path, NULL), 4);
    CHECK_EQ_U(load_bones(target, outside), 4);

    /* A directory linking outside puts what is under it outside. */
    snprintf(sub, sizeof sub, "%s/sub", base);
    CHECK(symlink(outside, sub) == 0);
    snprintf(path, sizeof path, "%s/tube.dpm", sub);
    check_refused(path, base, "is not inside the allowed directory");

    snprintf(path, sizeof path, "%s/tube.skp", base);
    unlink(path);
    fx_remove_temp_dir(base);
    fx_remove_temp_dir(outside);
    fx_remove_temp_dir(dir);
}

/* Whether one of the `/`-separated components of `p` is `..`. */
static int has_dotdot(const char *p)
{
    for (;;) {
        const char *end = strchr(p, '/');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n == 2 && p[0] == '.' && p[1] == '.')
            return 1;
        if (!end)
            return 0;
        p = end + 1;
    }
}

/* No path asked for is absolute or holds a `..` component or a backslash. */
static void check_asked_inside(const mem_fs *fs)
{
    size_t i;
    CHECK(has_dotdot("a/../b") && has_dotdot("..") && has_dotdot("a/..") && !has_dotdot("a..b/.x"));
    for (i = 0; i < fs->asked_count && i < FS_MAX_ASKED; i++) {
        const char *p = fs->asked[i];
        check_context("asked \"%s\"", p);
        CHECK(p[0] != '/');
        CHECK(!has_dotdot(p));
        CHECK(!contains(p, "\\"));
        check_context(NULL);
    }
}

static void test_io_names(const files *f)
{
    static const char *const names[] = {
        "../../../etc/x.dpm", "/etc/x.dpm", "models/../../x.dpm", "..\\x.dpm", "models/..", "C:/x.dpm",
    };
    static const char *const skill_names[] = {
        "../../../etc/x.cmx", "/etc/x.cmx", "models/../../x.cmx", "..\\x.cmx", "models/../x.cmx", "C:/x.cmx",
    };
    static const char skill_file[] = "// Character File. Copyright 1997, Maxis Inc.\nversion 300\n0\n0\n0\n";
    mem_fs fs;
    ossa_load_options opt;
    ossa_model *skeleton = NULL;
    size_t i;

    fs_init(&fs);
    fs_add(&fs, "models/x.dpm", &f->dpm);
    fs_add_text(&fs, "models/x.cmx", skill_file);
    ossa_load_options_init(&opt);
    opt.io = &fs.io;
    if (!CHECK_OK(ossa_load_memory(f->dpm.data, f->dpm.size, NULL, &skeleton, NULL)))
        return;

    for (i = 0; i < sizeof names / sizeof names[0]; i++) {
        ossa_model *model = SENTINEL;
        ossa_error err;
        const char *cmx = skill_names[i];
        check_context("name \"%s\"", names[i]);

        opt.name = NULL;
        CHECK_RESULT(ossa_load_file(names[i], &opt, &model, &err), OSSA_ERR_INVALID_ARGUMENT);
        CHECK(model == SENTINEL);
        opt.name = names[i];
        CHECK_RESULT(ossa_load_memory(f->dpm.data, f->dpm.size, &opt, &model, &err), OSSA_ERR_INVALID_ARGUMENT);
        CHECK(model == SENTINEL);
        CHECK_MESSAGE(err.message, "the model's name:");
        opt.name = NULL;
        CHECK_RESULT(ossa_model_add_skills(skeleton, cmx, &opt, &model, &err), OSSA_ERR_INVALID_ARGUMENT);
        CHECK(model == SENTINEL);
        opt.name = cmx;
        CHECK_RESULT(ossa_model_add_skills_memory(skeleton, (const uint8_t *)skill_file, strlen(skill_file), &opt,
                                                  &model, &err),
                     OSSA_ERR_INVALID_ARGUMENT);
        CHECK(model == SENTINEL);
        check_context(NULL);
    }
    CHECK_ASKED(&fs, NULL);

    /* Names inside are asked for as they are. */
    {
        ossa_model *model = NULL;
        opt.name = NULL;
        CHECK_OK(ossa_load_file("models/x.dpm", &opt, &model, NULL));
        ossa_model_free(model);
        model = NULL;
        opt.name = "models/x.dpm";
        CHECK_OK(ossa_load_memory(f->dpm.data, f->dpm.size, &opt, &model, NULL));
        ossa_model_free(model);
        CHECK_ASKED(&fs, "models/x.dpm", "models/x.dpm.framegroups", "models/x.dpm.framegroups", NULL);
    }
    check_asked_inside(&fs);
    CHECK_RELEASED(&fs);
    ossa_model_free(skeleton);
}

int main(void)
{
    files f;
    make_files(&f);
    test_links(&f);
    test_io_names(&f);
    free_files(&f);
    return check_finish("test_links");
}
