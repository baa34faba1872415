/* Version, result and format names, load options defaults. */
#include <stdlib.h>
#include <string.h>

#include "check.h"

static void test_version(void)
{
    uint32_t v = ossa_version();
    CHECK_EQ_U(v >> 16, OSSA_VERSION_MAJOR);
    CHECK_EQ_U((v >> 8) & 0xff, OSSA_VERSION_MINOR);
    CHECK_EQ_U(v & 0xff, OSSA_VERSION_PATCH);
    CHECK_EQ_U(v, ((uint32_t)OSSA_VERSION_MAJOR << 16) | ((uint32_t)OSSA_VERSION_MINOR << 8) | OSSA_VERSION_PATCH);
}

static void test_result_names(void)
{
    static const struct {
        uint32_t value;
        const char *name;
    } known[] = {
        {OSSA_OK, "OSSA_OK"},
        {OSSA_ERR_NULL_ARGUMENT, "OSSA_ERR_NULL_ARGUMENT"},
        {OSSA_ERR_INVALID_ARGUMENT, "OSSA_ERR_INVALID_ARGUMENT"},
        {OSSA_ERR_UNKNOWN_FORMAT, "OSSA_ERR_UNKNOWN_FORMAT"},
        {OSSA_ERR_TRUNCATED, "OSSA_ERR_TRUNCATED"},
        {OSSA_ERR_MALFORMED, "OSSA_ERR_MALFORMED"},
        {OSSA_ERR_UNSUPPORTED, "OSSA_ERR_UNSUPPORTED"},
        {OSSA_ERR_LIMIT, "OSSA_ERR_LIMIT"},
        {OSSA_ERR_IO, "OSSA_ERR_IO"},
        {OSSA_ERR_NOT_FOUND, "OSSA_ERR_NOT_FOUND"},
        {OSSA_ERR_MISMATCH, "OSSA_ERR_MISMATCH"},
        {OSSA_ERR_OUT_OF_MEMORY, "OSSA_ERR_OUT_OF_MEMORY"},
        {OSSA_ERR_PANIC, "OSSA_ERR_PANIC"},
    };
    static const uint32_t unknown[] = {13, 100, 0x7fffffffu, 0xffffffffu};
    size_t i;

    /* The values are part of the ABI. */
    CHECK_EQ_U(OSSA_OK, 0);
    for (i = 0; i < sizeof known / sizeof known[0]; i++) {
        CHECK_EQ_U(known[i].value, i);
        CHECK_STR(ossa_result_name(known[i].value), known[i].name);
    }
    for (i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        const char *name = ossa_result_name(unknown[i]);
        check_context("result %u", (unsigned)unknown[i]);
        CHECK(name != NULL);
        if (name)
            CHECK(strlen(name) > 0);
    }
    check_context(NULL);
}

static void test_format_names(void)
{
    static const uint32_t formats[] = {
        OSSA_FORMAT_AUTO,     OSSA_FORMAT_DPM,      OSSA_FORMAT_SKM,      OSSA_FORMAT_SKP,
        OSSA_FORMAT_SIMS_SKN, OSSA_FORMAT_SIMS_BMF, OSSA_FORMAT_SIMS_CMX, OSSA_FORMAT_SIMS_BCF,
        OSSA_FORMAT_MM2_SKEL, OSSA_FORMAT_DMF,      OSSA_FORMAT_DMF_JSON, OSSA_FORMAT_MM2_MOD,
        OSSA_FORMAT_GLB,      OSSA_FORMAT_GLTF,     OSSA_FORMAT_SIMS_MSH, OSSA_FORMAT_IQM,
    };
    const char *names[sizeof formats / sizeof formats[0]];
    size_t i, j;
    const char *dpm;

    for (i = 0; i < sizeof formats / sizeof formats[0]; i++) {
        CHECK_EQ_U(formats[i], i);
        names[i] = ossa_format_name(formats[i]);
        check_context("format %u", (unsigned)formats[i]);
        CHECK(names[i] != NULL && names[i][0] != '\0');
    }
    /* Every format has a name of its own. */
    for (i = 0; i < sizeof formats / sizeof formats[0]; i++)
        for (j = i + 1; j < sizeof formats / sizeof formats[0]; j++)
            if (names[i] && names[j]) {
                check_context("formats %u and %u", (unsigned)i, (unsigned)j);
                CHECK(strcmp(names[i], names[j]) != 0);
            }
    check_context(NULL);
    dpm = ossa_format_name(OSSA_FORMAT_DPM);
    CHECK(dpm != NULL && (strstr(dpm, "DPM") != NULL || strstr(dpm, "dpm") != NULL));
    /* Unknown values still get a string (the header promises it; a NULL would be crash bait). */
    CHECK(ossa_format_name(16) != NULL);
    CHECK(strcmp(ossa_format_name(OSSA_FORMAT_SIMS_MSH), "OSSA_FORMAT_SIMS_MSH") == 0);
    CHECK(strcmp(ossa_format_name(OSSA_FORMAT_IQM), "OSSA_FORMAT_IQM") == 0);
    CHECK(ossa_format_name(0xffffffffu) != NULL);
}

static void test_options_init(void)
{
    ossa_load_options o;
    memset(&o, 0xab, sizeof o);
    ossa_load_options_init(&o);
    CHECK_EQ_U(o.size, sizeof o);
    CHECK_EQ_U(o.format, OSSA_FORMAT_AUTO);
    CHECK_EQ_U(o.flags, 0);
    CHECK(o.io == NULL);
    CHECK(o.name == NULL);
    CHECK(o.skeleton == NULL);
    ossa_load_options_init(NULL); /* checked for NULL like every pointer: must not crash */
}

int main(void)
{
    test_version();
    test_result_names();
    test_format_names();
    test_options_init();
    ossa_model_free(NULL); /* a no-op */
    return check_finish("test_basics");
}
