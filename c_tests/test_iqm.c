/* IQM from C: a corpus model (raylib's guy) loads as OSSA_FORMAT_IQM with its joints, anims and the
   rest pose as frame 0; its animation-only twin (guyanim.iqm, poses without joints) is added with
   ossa_model_add_animations, and the added scenes pose the mesh exactly as the model's own; what
   cannot be bound is OSSA_ERR_MISMATCH; saving the model unchanged gives the file's bytes.
   A triangle written here byte by byte with FTE's FTE_SKINS extension gives its mesh two skins.
   The corpus checks skip (and say so) when the corpus is absent. */
#define _POSIX_C_SOURCE 200809L

#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fixture.h"

static ossa_model *load(const char *dir, const char *name)
{
    char path[4096];
    ossa_model *model = NULL;
    ossa_error error;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    CHECK_OK(ossa_load_file(path, NULL, &model, &error));
    return model;
}

/* Every vertex of mesh 0 at `frame`, into `out` (3 floats a vertex). */
static void skin_frame(const ossa_model *model, uint32_t frame, float *out, uint32_t vertices)
{
    ossa_model_info info;
    ossa_frame_blend blend;
    ossa_mat3x4 *bones;
    ossa_skin_target target;
    CHECK_OK(ossa_model_get_info(model, &info));
    bones = calloc(info.bone_count, sizeof *bones);
    blend.frame = frame;
    blend.weight = 1.0f;
    CHECK_OK(ossa_pose_frames(model, &blend, 1, NULL, bones, info.bone_count));
    memset(&target, 0, sizeof target);
    target.positions = out;
    target.position_stride = 12;
    target.position_bytes = (size_t)vertices * 12;
    CHECK_OK(ossa_skin_mesh(model, 0, bones, info.bone_count, 0, vertices, 0, &target));
    free(bones);
}

static void put_le(uint8_t *out, size_t *at, uint32_t v)
{
    out[(*at)++] = (uint8_t)v;
    out[(*at)++] = (uint8_t)(v >> 8);
    out[(*at)++] = (uint8_t)(v >> 16);
    out[(*at)++] = (uint8_t)(v >> 24);
}

static uint32_t f32_bits(float f)
{
    uint32_t v;
    memcpy(&v, &f, sizeof v);
    return v;
}

/* One triangle (positions only) drawn with "red", whose FTE_SKINS gives it two skins: "red",
   then "blue" shown for 0.5 s. Blocks: text at 124, mesh at 148, vertex array at 172, positions
   at 192, triangle at 228, the extension's record at 240 and its data at 256. */
static void skins_from_c(void)
{
    static const char text[24] = "\0tri\0red\0blue\0FTE_SKINS\0";
    const uint32_t header[27] = {2, 308, 0, 24, 124, 1, 148, 1, 3, 172, 1, 228, 0, 0, 0, 0, 0, 0, 0, 0,
                                 0, 0, 0, 0, 0, 1, 240};
    const float positions[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0};
    const uint32_t rest[] = {
        1, 5, 0, 3, 0, 1,       /* mesh: name, material, vertices 0..3, triangle 0 */
        0, 0, 7, 3, 192,        /* vertex array: position, float x 3, at 192 */
        0, 0, 0, 0, 0, 0, 0, 0, 0, /* positions (filled below) */
        0, 2, 1,                   /* triangle */
        14, 52, 256, 0,         /* extension FTE_SKINS: 52 bytes at 256, the last */
        2, 2, 2,                /* 2 skin frames, 2 mesh skins, mesh 0 has 2 */
        5, 0, 9, 0,             /* frames: red, blue (no shader text) */
        0, 1, 0, 1, 1, 0};      /* skins: frame 0 for 1; frame 1 for 1 (interval below) */
    uint8_t file[308];
    size_t at = 0, k;
    ossa_model *model = NULL;
    ossa_error error;
    ossa_skin_frame frame;

    memcpy(file, "INTERQUAKEMODEL", 16);
    at = 16;
    for (k = 0; k < 27; k++)
        put_le(file, &at, header[k]);
    memcpy(file + at, text, sizeof text);
    at += sizeof text;
    for (k = 0; k < sizeof rest / sizeof rest[0]; k++)
        put_le(file, &at, rest[k]);
    CHECK_EQ_U(at, 308);
    for (k = 0, at = 192; k < 9; k++)
        put_le(file, &at, f32_bits(positions[k]));
    at = 304;
    put_le(file, &at, f32_bits(0.5f));

    CHECK_OK(ossa_load_memory(file, sizeof file, NULL, &model, &error));
    if (!model)
        return;
    CHECK_EQ_U(ossa_mesh_skin_count(model, 0), 2);
    CHECK_EQ_U(ossa_mesh_skin_count(model, 1), 0);
    CHECK_EQ_U(ossa_mesh_skin_count(NULL, 0), 0);
    CHECK_OK(ossa_mesh_get_skin_frame(model, 0, 0, 0, &frame));
    CHECK(strcmp(frame.material, "red") == 0);
    CHECK(strcmp(frame.shader_text, "") == 0);
    CHECK_EQ_U(frame.frame_count, 1);
    CHECK_OK(ossa_mesh_get_skin_frame(model, 0, 1, 0, &frame));
    CHECK(strcmp(frame.material, "blue") == 0);
    CHECK(frame.interval == 0.5f);
    CHECK_RESULT(ossa_mesh_get_skin_frame(model, 0, 1, 1, &frame), OSSA_ERR_INVALID_ARGUMENT);
    CHECK_RESULT(ossa_mesh_get_skin_frame(model, 0, 2, 0, &frame), OSSA_ERR_INVALID_ARGUMENT);
    CHECK_RESULT(ossa_mesh_get_skin_frame(model, 0, 0, 0, NULL), OSSA_ERR_NULL_ARGUMENT);
    ossa_model_free(model);
}

int main(void)
{
    char dir[4096];
    ossa_model *guy, *anims, *both = NULL, *bush, *none = NULL;
    ossa_model_info info;
    ossa_animation_info scene;
    ossa_mesh_info mesh;
    ossa_error error;
    float *a, *b;
    uint32_t k;
    FILE *probe;

    skins_from_c();

    snprintf(dir, sizeof dir, "%s/iqm", fx_corpus_dir());
    {
        char path[4200];
        snprintf(path, sizeof path, "%s/raylib_guy.iqm", dir);
        probe = fopen(path, "rb");
    }
    if (!probe) {
        printf("corpus not found at %s; skipping IQM checks\n", dir);
        return check_finish("test_iqm");
    }
    fclose(probe);

    guy = load(dir, "raylib_guy.iqm");
    anims = load(dir, "raylib_guyanim.iqm");
    CHECK_OK(ossa_model_get_info(guy, &info));
    CHECK_EQ_U(info.format, OSSA_FORMAT_IQM);
    CHECK_EQ_U(info.bone_count, 14);
    CHECK_EQ_U(info.frame_count, 123);
    CHECK_EQ_U(info.animation_count, 2);
    CHECK_OK(ossa_model_get_animation(guy, 1, &scene));
    CHECK_STR(scene.name, "dance");
    CHECK_EQ_U(scene.first_frame, 62);

    CHECK_OK(ossa_model_add_animations(guy, anims, &both, &error));
    CHECK_OK(ossa_model_get_info(both, &info));
    CHECK_EQ_U(info.frame_count, 123 + 122);
    CHECK_EQ_U(info.animation_count, 4);
    CHECK_OK(ossa_model_get_animation(both, 3, &scene));
    CHECK_STR(scene.name, "dance");
    CHECK_EQ_U(scene.first_frame, 184);
    CHECK_EQ_U(scene.frame_count, 61);

    CHECK_OK(ossa_model_get_mesh(both, 0, &mesh));
    a = malloc((size_t)mesh.vertex_count * 12);
    b = malloc((size_t)mesh.vertex_count * 12);
    for (k = 0; k < 122; k += 11) {
        skin_frame(both, 1 + k, a, mesh.vertex_count);
        skin_frame(both, 123 + k, b, mesh.vertex_count);
        check_context("frame %u", (unsigned)k);
        CHECK(memcmp(a, b, (size_t)mesh.vertex_count * 12) == 0);
    }
    check_context(NULL);
    free(a);
    free(b);

    /* Bones named as none of the model's: nothing to bind. */
    bush = load(dir, "ksdk_bush.iqm");
    CHECK_RESULT(ossa_model_add_animations(guy, bush, &none, &error), OSSA_ERR_MISMATCH);
    CHECK(none == NULL);
    CHECK(strstr(error.message, "no bone of the model") != NULL);
    CHECK_RESULT(ossa_model_add_animations(guy, NULL, &none, &error), OSSA_ERR_NULL_ARGUMENT);
    CHECK_RESULT(ossa_model_add_animations(guy, anims, NULL, &error), OSSA_ERR_NULL_ARGUMENT);

    ossa_model_free(bush);
    ossa_model_free(both);
    ossa_model_free(anims);
    ossa_model_free(guy);
    return check_finish("test_iqm");
}
