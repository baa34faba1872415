/* glTF export through ossa_save_with: the options' scale and influence cap show in the report, the
   textures beside the model are read through the caller's io (and only beside it), and misuse is
   refused before anything is written. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fixture.h"
#include "memfs.h"

/* A 2x1 uncompressed true-colour TGA (BGRA): a red and a green pixel. */
static const uint8_t tga[18 + 8] = {
    0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 1, 0, 32, 8,
    0, 0, 255, 255, 0, 255, 0, 255,
};

static int holds(const fx_buf *b, const char *needle)
{
    size_t n = strlen(needle), i;
    for (i = 0; i + n <= b->size; i++)
        if (memcmp(b->data + i, needle, n) == 0)
            return 1;
    return 0;
}

static ossa_model *load_small(fx_buf *dpm)
{
    fx_model small;
    ossa_model *model = NULL;
    fx_make_small(&small);
    fx_write_dpm(&small, dpm, NULL);
    fx_model_free(&small);
    CHECK_OK(ossa_load_memory(dpm->data, dpm->size, NULL, &model, NULL));
    return model;
}

int main(void)
{
    fx_buf dpm = {0}, plain = {0}, scaled = {0}, capped = {0}, textured = {0}, dpm_out = {0};
    ossa_model *model = load_small(&dpm);
    ossa_save_options opt;
    ossa_export_report report, twice, cap;
    ossa_model_info info;
    ossa_error err;
    mem_fs fs;
    fx_buf image = {0};

    if (model == NULL)
        return check_finish("test_gltf");
    CHECK_OK(ossa_model_get_info(model, &info));

    /* Defaults: the file's units, every influence, nothing read. */
    ossa_save_options_init(&opt);
    CHECK_EQ_U(opt.size, sizeof opt);
    CHECK(opt.scale == 1.0f && opt.max_influences == 0 && opt.name == NULL && opt.report == NULL);
    memset(&report, 0xff, sizeof report);
    opt.report = &report;
    CHECK_OK(ossa_save_with(model, OSSA_FORMAT_GLB, &opt, fx_collect, &plain, &err));
    CHECK(plain.size > 20 && memcmp(plain.data, "glTF", 4) == 0);
    CHECK(report.size > 0.0f);
    CHECK_EQ_U(report.inexact_vertices, 0);
    CHECK_EQ_U(report.frame_count, info.frame_count);
    CHECK_EQ_U(report.frames_checked, info.frame_count);
    CHECK_EQ_U(report.capped_vertices, 0);
    CHECK_EQ_U(report.images, 0);

    /* Twice the scale: twice the size. */
    opt.scale = 2.0f;
    opt.report = &twice;
    CHECK_OK(ossa_save_with(model, OSSA_FORMAT_GLB, &opt, fx_collect, &scaled, &err));
    CHECK_NEAR(twice.size, 2.0 * report.size, 1e-4 * report.size);

    /* One influence a vertex: the vertices with more lose them, and say so. */
    opt.scale = 1.0f;
    opt.max_influences = 1;
    opt.report = &cap;
    CHECK_OK(ossa_save_with(model, OSSA_FORMAT_GLB, &opt, fx_collect, &capped, &err));
    CHECK(cap.capped_vertices > 0);
    CHECK_EQ_U(cap.most_dropped, info.max_influences - 1);
    CHECK(!holds(&capped, "JOINTS_1"));

    /* Textures beside the model, through the caller's io: the body's shader names
       models/test/body, whose file name is found beside the model and embedded as PNG. */
    fx_put_bytes(&image, tga, sizeof tga);
    fs_init(&fs);
    fs_add(&fs, "m/small.dpm", &dpm);
    fs_add(&fs, "m/body.tga", &image);
    ossa_save_options_init(&opt);
    opt.io = &fs.io;
    opt.name = "m/small.dpm";
    opt.report = &report;
    CHECK_OK(ossa_save_with(model, OSSA_FORMAT_GLB, &opt, fx_collect, &textured, &err));
    CHECK_EQ_U(report.images, 1);
    CHECK(report.texture_warnings >= 1); /* the tag mesh's texture is not there */
    CHECK(holds(&textured, "image/png") && holds(&textured, "\x89PNG"));
    CHECK(fs_was_asked(&fs, "m/body.tga"));
    CHECK_RELEASED(&fs);
    /* A name that leaves io is looked beside for nothing, and nothing outside is asked for. */
    fs_reset(&fs);
    opt.name = "../small.dpm";
    CHECK_OK(ossa_save_with(model, OSSA_FORMAT_GLB, &opt, fx_collect, &dpm_out, &err));
    CHECK_EQ_U(report.images, 0);
    CHECK(!fs_was_asked(&fs, ".."));
    CHECK_RELEASED(&fs);
    fx_buf_free(&dpm_out);

    /* Misuse: nothing written, the error says why. */
    ossa_save_options_init(&opt);
    opt.scale = 2.0f;
    CHECK_RESULT(ossa_save_with(model, OSSA_FORMAT_DPM, &opt, fx_collect, &dpm_out, &err),
                 OSSA_ERR_INVALID_ARGUMENT);
    CHECK(strstr(err.message, "glTF") != NULL);
    opt.scale = 0.0f;
    CHECK_RESULT(ossa_save_with(model, OSSA_FORMAT_GLB, &opt, fx_collect, &dpm_out, &err),
                 OSSA_ERR_INVALID_ARGUMENT);
    ossa_save_options_init(&opt);
    opt.size = 8;
    CHECK_RESULT(ossa_save_with(model, OSSA_FORMAT_GLB, &opt, fx_collect, &dpm_out, &err),
                 OSSA_ERR_INVALID_ARGUMENT);
    ossa_save_options_init(&opt);
    opt.flags = 0x80000000u;
    CHECK_RESULT(ossa_save_with(model, OSSA_FORMAT_GLB, &opt, fx_collect, &dpm_out, &err),
                 OSSA_ERR_INVALID_ARGUMENT);
    CHECK_RESULT(ossa_save_with(NULL, OSSA_FORMAT_GLB, NULL, fx_collect, &dpm_out, &err),
                 OSSA_ERR_NULL_ARGUMENT);
    CHECK_RESULT(ossa_save_with(model, OSSA_FORMAT_GLB, NULL, NULL, &dpm_out, &err),
                 OSSA_ERR_NULL_ARGUMENT);
    CHECK_EQ_U(dpm_out.size, 0);
    /* NULL options: the defaults, as ossa_save. */
    CHECK_OK(ossa_save_with(model, OSSA_FORMAT_DPM, NULL, fx_collect, &dpm_out, &err));
    CHECK(dpm_out.size > 16 && memcmp(dpm_out.data, "DARKPLACESMODEL", 15) == 0);

    fx_buf_free(&image);
    fx_buf_free(&dpm_out);
    fx_buf_free(&textured);
    fx_buf_free(&capped);
    fx_buf_free(&scaled);
    fx_buf_free(&plain);
    fx_buf_free(&dpm);
    ossa_model_free(model);
    return check_finish("test_gltf");
}
