/* Sims suits through the C ABI: a character file of two suits, loaded from memory, lists each
   suit's name, type, properties and skins (mesh, bone, censor flags, properties); a file with a
   skeleton and a suit keeps both, and binding a mesh carries the suit along; saving as CMX and
   BCF gives the suits back. Indices past the end and NULL arguments are refused. */
#include <string.h>

#include "check.h"
#include "fixture.h"

/* Suit 0: a body and a head, with properties on the suit and on the head skin; suit 1: the
   censor box of the pelvis. */
static const char SUITS[] =
    "// Character File. Copyright 1997, Maxis Inc.\r\n"
    "version 300\r\n"
    "0\r\n"
    "2\r\n"
    "b001mafit_01\r\n0\r\n"
    "1\r\n2\r\nskinColor\r\nmed\r\nage\r\nadult\r\n"
    "2\r\n"
    "PELVIS\r\nxskin-b001mafit_01-PELVIS-BODY\r\n0\r\n0\r\n"
    "HEAD\r\nxskin-c004mc_nerd-HEAD-HEAD\r\n0\r\n1\r\n1\r\ntexture\r\nc004mc_nerdlgt\r\n"
    "child-censor\r\n1\r\n0\r\n"
    "1\r\n"
    "PELVIS\r\nxskin-child-censor-PELVIS-PELVISBOX\r\n1\r\n0\r\n"
    "0\r\n";

/* A two-bone skeleton (ROOT at y 3, HEAD 2 above it) and a suit of one mesh on HEAD. */
static const char SKELETON_AND_SUIT[] =
    "// Character File. Copyright 1997, Maxis Inc.\n"
    "version 300\n"
    "1\nsmall\n2\n"
    "ROOT\nNULL\n0\n| 0 3 0 |\n| 0 0 0 1 |\n1\n1\n0\n0\n0\n"
    "HEAD\nROOT\n0\n| 0 2 0 |\n| 0 0 0 1 |\n0\n1\n1\n0\n0\n"
    "1\nhead-only\n0\n0\n1\nHEAD\nhead-mesh\n0\n0\n"
    "0\n";

/* One triangle on HEAD, in HEAD's space. */
static const char HEAD_SKN[] = "head-mesh\nx\n1\nHEAD\n1\n0 1 2\n1\n0 0 3 -1 0\n3\n0 0\n1 0\n0 1\n0\n3\n"
                               "0 0 0 0 0 1\n1 0 0 0 0 1\n0 1 0 0 0 1\n";

static ossa_model *load(const char *text, size_t size, uint32_t format)
{
    ossa_load_options opt;
    ossa_model *m = NULL;
    ossa_error err;
    ossa_load_options_init(&opt);
    opt.format = format;
    if (!CHECK_OK(ossa_load_memory((const uint8_t *)text, size, &opt, &m, &err)))
        printf("load: %s\n", err.message);
    return m;
}

static void check_property(const ossa_property *p, uint32_t list, const char *key, const char *value)
{
    CHECK_EQ_U(p->list, list);
    CHECK_STR(p->key, key);
    CHECK_STR(p->value, value);
}

static void check_suits(const ossa_model *m)
{
    ossa_suit_info s;
    ossa_suit_skin k;
    ossa_property p;

    CHECK_EQ_U(ossa_model_suit_count(m), 2);
    if (CHECK_OK(ossa_model_get_suit(m, 0, &s))) {
        CHECK_STR(s.name, "b001mafit_01");
        CHECK_EQ_U(s.kind, 0);
        CHECK_EQ_U(s.skin_count, 2);
        CHECK_EQ_U(s.property_count, 2);
    }
    if (CHECK_OK(ossa_suit_get_property(m, 0, 0, &p)))
        check_property(&p, 0, "skinColor", "med");
    if (CHECK_OK(ossa_suit_get_property(m, 0, 1, &p)))
        check_property(&p, 0, "age", "adult");
    if (CHECK_OK(ossa_suit_get_skin(m, 0, 0, &k))) {
        CHECK_STR(k.bone, "PELVIS");
        CHECK_STR(k.mesh, "xskin-b001mafit_01-PELVIS-BODY");
        CHECK_EQ_U(k.censor_flags, 0);
        CHECK_EQ_U(k.property_count, 0);
    }
    if (CHECK_OK(ossa_suit_get_skin(m, 0, 1, &k))) {
        CHECK_STR(k.bone, "HEAD");
        CHECK_STR(k.mesh, "xskin-c004mc_nerd-HEAD-HEAD");
        CHECK_EQ_U(k.property_count, 1);
    }
    if (CHECK_OK(ossa_suit_skin_get_property(m, 0, 1, 0, &p)))
        check_property(&p, 0, "texture", "c004mc_nerdlgt");
    if (CHECK_OK(ossa_model_get_suit(m, 1, &s))) {
        CHECK_STR(s.name, "child-censor");
        CHECK_EQ_U(s.kind, 1);
        CHECK_EQ_U(s.skin_count, 1);
        CHECK_EQ_U(s.property_count, 0);
    }
    if (CHECK_OK(ossa_suit_get_skin(m, 1, 0, &k))) {
        CHECK_STR(k.bone, "PELVIS");
        CHECK_STR(k.mesh, "xskin-child-censor-PELVIS-PELVISBOX");
        CHECK_EQ_U(k.censor_flags, 1);
    }
}

static void test_suit_file(void)
{
    ossa_model *m = load(SUITS, sizeof SUITS - 1, OSSA_FORMAT_AUTO);
    ossa_model_info info;
    uint32_t formats[2] = {OSSA_FORMAT_SIMS_CMX, OSSA_FORMAT_SIMS_BCF};
    size_t i;

    if (!m)
        return;
    check_context("suit file");
    check_suits(m);
    if (CHECK_OK(ossa_model_get_info(m, &info))) {
        CHECK_EQ_U(info.format, OSSA_FORMAT_SIMS_CMX);
        CHECK_EQ_U(info.bone_count, 0);
        CHECK_EQ_U(info.mesh_count, 0);
    }
    CHECK_EQ_U(ossa_model_warning_count(m), 0);

    /* Saved as CMX and as BCF, the suits come back. */
    for (i = 0; i < 2; i++) {
        fx_buf saved = {0};
        ossa_error err;
        ossa_model *back;
        check_context("saved as %s", ossa_format_name(formats[i]));
        CHECK_OK(ossa_save(m, formats[i], 0, fx_collect, &saved, &err));
        back = load((const char *)saved.data, saved.size, formats[i]);
        if (back)
            check_suits(back);
        ossa_model_free(back);
        fx_buf_free(&saved);
    }

    /* Out of range and NULL. */
    check_context("refusals");
    {
        ossa_suit_info s;
        ossa_suit_skin k;
        ossa_property p;
        CHECK_RESULT(ossa_model_get_suit(m, 2, &s), OSSA_ERR_INVALID_ARGUMENT);
        CHECK_RESULT(ossa_suit_get_skin(m, 0, 2, &k), OSSA_ERR_INVALID_ARGUMENT);
        CHECK_RESULT(ossa_suit_get_skin(m, 2, 0, &k), OSSA_ERR_INVALID_ARGUMENT);
        CHECK_RESULT(ossa_suit_get_property(m, 1, 0, &p), OSSA_ERR_INVALID_ARGUMENT);
        CHECK_RESULT(ossa_suit_skin_get_property(m, 0, 0, 0, &p), OSSA_ERR_INVALID_ARGUMENT);
        CHECK_RESULT(ossa_suit_skin_get_property(m, 0, 1, 1, &p), OSSA_ERR_INVALID_ARGUMENT);
        CHECK_RESULT(ossa_model_get_suit(m, 0, NULL), OSSA_ERR_NULL_ARGUMENT);
        CHECK_RESULT(ossa_suit_get_skin(NULL, 0, 0, &k), OSSA_ERR_NULL_ARGUMENT);
        CHECK_RESULT(ossa_suit_skin_get_property(m, 0, 1, 0, NULL), OSSA_ERR_NULL_ARGUMENT);
        CHECK_EQ_U(ossa_model_suit_count(NULL), 0);
    }
    check_context(NULL);
    ossa_model_free(m);
}

static void test_skeleton_with_a_suit(void)
{
    ossa_model *character = load(SKELETON_AND_SUIT, sizeof SKELETON_AND_SUIT - 1, OSSA_FORMAT_SIMS_CMX);
    ossa_model *mesh = load(HEAD_SKN, sizeof HEAD_SKN - 1, OSSA_FORMAT_SIMS_SKN);
    ossa_model *bound = NULL;
    ossa_suit_skin k;
    ossa_mesh_info mi;
    ossa_model_info info;
    ossa_error err;

    check_context("skeleton and suit");
    if (!character || !mesh)
        goto done;
    CHECK_EQ_U(ossa_model_suit_count(character), 1);
    /* The suit names the mesh and a bone of the skeleton. */
    if (CHECK_OK(ossa_suit_get_skin(character, 0, 0, &k))) {
        CHECK_STR(k.bone, "HEAD");
        CHECK_EQ_I(ossa_model_find_bone(character, k.bone), 1);
        if (CHECK_OK(ossa_model_get_mesh(mesh, 0, &mi)))
            CHECK_STR(mi.name, k.mesh);
    }
    if (CHECK_OK(ossa_model_bind(mesh, character, &bound, &err))) {
        CHECK_EQ_U(ossa_model_suit_count(bound), 1);
        if (CHECK_OK(ossa_suit_get_skin(bound, 0, 0, &k)))
            CHECK_STR(k.mesh, "head-mesh");
        /* The triangle hangs on HEAD, whose joint is at y 3 + 2. */
        if (CHECK_OK(ossa_model_get_info(bound, &info)))
            CHECK_NEAR(info.mins[1], 5.0, 0.0);
    }
done:
    check_context(NULL);
    ossa_model_free(bound);
    ossa_model_free(mesh);
    ossa_model_free(character);
}

int main(void)
{
    test_suit_file();
    test_skeleton_with_a_suit();
    return check_finish("test_suits");
}
