/* ossa_check_character: a Sims character checked across its files. The corpus's adult skeleton, the
 * b001mafit_01 suit, its body mesh, the adult-idle1 skill and its CFP are copied into a temporary
 * directory under the game's own names; the copy is clean, then one thing at a time is broken and
 * each problem comes back in the file it belongs to, with its code and message. Skips (and says
 * so) when the corpus is absent. */
#define _POSIX_C_SOURCE 200809L

#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fixture.h"
#include "memfs.h"

static const char *const files[][2] = {
    {"so_adult-skeleton.cmx", "adult-skeleton.cmx"},
    {"so_B001MAFit_01.cmx", "B001MAFit_01.cmx"},
    {"so_xskin-b001mafit_01-PELVIS-BODY.skn", "xskin-b001mafit_01-PELVIS-BODY.skn"},
    {"so_adult-idle1.cmx", "adult-idle1.cmx"},
    {"so_xskill-A2O-idle1.cfp", "xskill-A2O-idle1.cfp"},
};

/* Copies the corpus files into `dir`; nonzero when the corpus is absent. */
static int copy_corpus(const char *dir)
{
    size_t k;
    for (k = 0; k < sizeof files / sizeof files[0]; k++) {
        char from[4200], to[4200];
        fx_buf b = {0};
        snprintf(from, sizeof from, "%s/sims/%s", fx_corpus_dir(), files[k][0]);
        snprintf(to, sizeof to, "%s/%s", dir, files[k][1]);
        if (fx_read_file(from, &b) != 0)
            return 1;
        CHECK(fx_write_file(to, b.data, b.size) == 0);
        fx_buf_free(&b);
    }
    return 0;
}

/* The character of `dir`: the skeleton's file, the suit, the idle skill. */
static uint32_t check_dir(const char *dir, ossa_problem *problems, size_t capacity, size_t *count, size_t *more,
                          ossa_error *err)
{
    char path[4200], skill[4200];
    const char *skills[1];
    ossa_character character;
    snprintf(path, sizeof path, "%s/adult-skeleton.cmx", dir);
    snprintf(skill, sizeof skill, "%s/adult-idle1.cmx", dir);
    skills[0] = skill;
    memset(&character, 0, sizeof character);
    character.size = sizeof character;
    character.suit = "b001mafit_01";
    character.skills = skills;
    character.skill_count = 1;
    return ossa_check_character(path, &character, NULL, problems, capacity, count, more, err);
}

static void test_clean_then_broken(const char *dir)
{
    ossa_problem problems[4];
    size_t count = 99, more = 99;
    ossa_error err;
    char path[4200], want[4400];

    CHECK_OK(check_dir(dir, problems, 4, &count, &more, &err));
    CHECK_EQ_U(count, 0);
    CHECK_EQ_U(more, 0);

    /* The mesh gone: NOT_FOUND in the suit's file, naming the directory looked in. */
    snprintf(path, sizeof path, "%s/xskin-b001mafit_01-PELVIS-BODY.skn", dir);
    {
        fx_buf mesh = {0};
        CHECK(fx_read_file(path, &mesh) == 0);
        CHECK(remove(path) == 0);
        /* Sized first, then read. */
        CHECK_OK(check_dir(dir, NULL, 0, &count, NULL, &err));
        CHECK_EQ_U(count, 1);
        memset(problems, 0x5a, sizeof problems);
        CHECK_OK(check_dir(dir, problems, 4, &count, &more, &err));
        if (CHECK_EQ_U(count, 1)) {
            CHECK_EQ_U(problems[0].code, OSSA_ERR_NOT_FOUND);
            CHECK_EQ_U(problems[0].line, 0);
            CHECK(problems[0].offset == UINT64_MAX);
            snprintf(want, sizeof want, "%s/B001MAFit_01.cmx", dir);
            CHECK_STR(problems[0].file, want);
            snprintf(want, sizeof want,
                     "suit b001mafit_01 skin 0 (mesh xskin-b001mafit_01-PELVIS-BODY on bone PELVIS): no "
                     "xskin-b001mafit_01-PELVIS-BODY.skn, xskin-b001mafit_01-PELVIS-BODY.bmf or "
                     "xskin-b001mafit_01-PELVIS-BODY.msh in %s",
                     dir);
            CHECK_STR(problems[0].message, want);
        }
        CHECK(problems[1].code == 0x5a5a5a5a);
        CHECK(fx_write_file(path, mesh.data, mesh.size) == 0);
        fx_buf_free(&mesh);
    }

    /* The CFP cut short: TRUNCATED in the CFP, naming the skill. */
    snprintf(path, sizeof path, "%s/xskill-A2O-idle1.cfp", dir);
    {
        fx_buf cfp = {0};
        CHECK(fx_read_file(path, &cfp) == 0);
        CHECK(fx_write_file(path, cfp.data, cfp.size / 2) == 0);
        CHECK_OK(check_dir(dir, problems, 4, &count, &more, &err));
        if (CHECK_EQ_U(count, 1)) {
            CHECK_EQ_U(problems[0].code, OSSA_ERR_TRUNCATED);
            CHECK_STR(problems[0].file, path);
            CHECK_MESSAGE(problems[0].message,
                          "xskill-A2O-idle1.cfp: skill a2o-idle1 (120 translations, 1740 rotations): the stream "
                          "ends after 3505 of 7320 values");
        }
        CHECK(fx_write_file(path, cfp.data, cfp.size) == 0);
        fx_buf_free(&cfp);
    }
    CHECK_OK(check_dir(dir, problems, 4, &count, &more, &err));
    CHECK_EQ_U(count, 0);
}

/* Arguments: NULL where a pointer is needed, a size not the struct's, a NULL character is the file
 * alone, io is refused. */
static void test_arguments(const char *dir)
{
    ossa_problem problems[1];
    size_t count = 0;
    ossa_error err;
    char path[4200];
    ossa_character character;
    ossa_load_options options;
    mem_fs fs;
    const char *none[1] = {NULL};

    snprintf(path, sizeof path, "%s/adult-skeleton.cmx", dir);
    CHECK_RESULT(ossa_check_character(NULL, NULL, NULL, NULL, 0, &count, NULL, &err), OSSA_ERR_NULL_ARGUMENT);
    CHECK_RESULT(ossa_check_character(path, NULL, NULL, NULL, 0, NULL, NULL, &err), OSSA_ERR_NULL_ARGUMENT);
    CHECK_RESULT(ossa_check_character(path, NULL, NULL, NULL, 1, &count, NULL, &err), OSSA_ERR_NULL_ARGUMENT);
    /* A size other than this layout's is refused before anything else is read. */
    memset(&character, 0, sizeof character);
    character.size = sizeof character - 8;
    CHECK_RESULT(ossa_check_character(path, &character, NULL, problems, 1, &count, NULL, &err),
                 OSSA_ERR_INVALID_ARGUMENT);
    character.size = sizeof character;
    character.skill_count = 1;
    CHECK_RESULT(ossa_check_character(path, &character, NULL, problems, 1, &count, NULL, &err),
                 OSSA_ERR_NULL_ARGUMENT);
    CHECK_STR(err.message, "character->skills is NULL");
    character.skills = none;
    CHECK_RESULT(ossa_check_character(path, &character, NULL, problems, 1, &count, NULL, &err),
                 OSSA_ERR_NULL_ARGUMENT);
    CHECK_STR(err.message, "character->skills[0] is NULL");
    CHECK_OK(ossa_check_character(path, NULL, NULL, problems, 1, &count, NULL, &err));
    CHECK_EQ_U(count, 0);
    /* A character is read from the OS filesystem: a caller's io is refused, and never asked. */
    fs_init(&fs);
    ossa_load_options_init(&options);
    options.io = &fs.io;
    CHECK_RESULT(ossa_check_character(path, NULL, &options, problems, 1, &count, NULL, &err),
                 OSSA_ERR_INVALID_ARGUMENT);
    CHECK_EQ_U(fs.reads, 0);
}

int main(void)
{
    char dir[4096];
    if (fx_make_temp_dir(dir, sizeof dir) != 0) {
        CHECK(!"could not make a temporary directory");
        return check_finish("test_character");
    }
    if (copy_corpus(dir) != 0) {
        printf("corpus not found at %s; skipping the character checks\n", fx_corpus_dir());
    } else {
        test_clean_then_broken(dir);
        test_arguments(dir);
    }
    fx_remove_temp_dir(dir);
    return check_finish("test_character");
}
