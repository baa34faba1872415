/* Model, bone, frame and mesh queries: values as written, NULLs, indices out of range. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fixture.h"

static fx_model small;


static void test_info(const ossa_model *model)
{
    ossa_model_info info;
    int k;
    CHECK_OK(ossa_model_get_info(model, &info));
    CHECK_EQ_U(info.format, OSSA_FORMAT_DPM);
    CHECK_EQ_U(info.bone_count, 4);
    CHECK_EQ_U(info.mesh_count, 2);
    CHECK_EQ_U(info.frame_count, 3);
    CHECK_EQ_U(info.vertex_count, 9);
    CHECK_EQ_U(info.triangle_count, 4);
    CHECK_EQ_U(info.max_influences, 3);
    CHECK_EQ_U(info.flags & OSSA_MODEL_UNBOUND, 0);
    CHECK_EQ_U(info.up_axis, 2); /* Quake: Z up, right-handed */
    CHECK_EQ_I(info.handedness, 1);
    /* The fixture's header holds the true bind bounds, so stored or recomputed bounds both match. */
    for (k = 0; k < 3; k++) {
        CHECK_NEAR(info.mins[k], small.mins[k], 1e-4);
        CHECK_NEAR(info.maxs[k], small.maxs[k], 1e-4);
    }
}

static void test_bones(const ossa_model *model)
{
    ossa_bone_info bone;
    uint32_t b;
    for (b = 0; b < small.bone_count; b++) {
        check_context("bone %u", (unsigned)b);
        CHECK_OK(ossa_model_get_bone(model, b, &bone));
        CHECK_STR(bone.name, small.bones[b].name);
        CHECK_EQ_I(bone.parent, small.bones[b].parent);
        CHECK_EQ_U(bone.flags, small.bones[b].flags);
        CHECK_EQ_I(ossa_model_find_bone(model, small.bones[b].name), b);
    }
    check_context(NULL);
    CHECK_EQ_U(OSSA_BONE_ATTACHMENT, 1);
    CHECK_OK(ossa_model_get_bone(model, 3, &bone));
    CHECK_EQ_U(bone.flags & OSSA_BONE_ATTACHMENT, OSSA_BONE_ATTACHMENT);

    /* Exact matches only. */
    CHECK_EQ_I(ossa_model_find_bone(model, "Root"), -1);
    CHECK_EQ_I(ossa_model_find_bone(model, "roo"), -1);
    CHECK_EQ_I(ossa_model_find_bone(model, "rootx"), -1);
    CHECK_EQ_I(ossa_model_find_bone(model, "root "), -1);
    CHECK_EQ_I(ossa_model_find_bone(model, ""), -1);
    CHECK_EQ_I(ossa_model_find_bone(model, "bind"), -1); /* a frame's name, not a bone's */
    CHECK_EQ_I(ossa_model_find_bone(model, NULL), -1);
    CHECK_EQ_I(ossa_model_find_bone(NULL, "root"), -1);
}

static void test_frames(const ossa_model *model)
{
    ossa_frame_info frame;
    uint32_t f;
    int k;
    for (f = 0; f < small.frame_count; f++) {
        const fx_frame *want = &small.frames[f];
        check_context("frame %u", (unsigned)f);
        CHECK_OK(ossa_model_get_frame(model, f, &frame));
        CHECK_STR(frame.name, want->name);
        for (k = 0; k < 3; k++) {
            CHECK_NEAR(frame.mins[k], want->mins[k], 1e-4);
            CHECK_NEAR(frame.maxs[k], want->maxs[k], 1e-4);
        }
        CHECK_NEAR(frame.yaw_radius, want->yaw_radius, 1e-4);
        CHECK_NEAR(frame.radius, want->radius, 1e-4);
        CHECK_EQ_I(ossa_model_find_frame(model, want->name), f);
    }
    check_context(NULL);
    CHECK_EQ_I(ossa_model_find_frame(model, "pose"), -1);
    CHECK_EQ_I(ossa_model_find_frame(model, "pose_c"), -1);
    CHECK_EQ_I(ossa_model_find_frame(model, "BIND"), -1);
    CHECK_EQ_I(ossa_model_find_frame(model, "root"), -1);
    CHECK_EQ_I(ossa_model_find_frame(model, ""), -1);
    CHECK_EQ_I(ossa_model_find_frame(model, NULL), -1);
    CHECK_EQ_I(ossa_model_find_frame(NULL, "bind"), -1);
}

static void test_meshes(const ossa_model *model)
{
    ossa_mesh_info mesh;
    uint32_t i, v, t;
    for (i = 0; i < small.mesh_count; i++) {
        const fx_mesh *want = &small.meshes[i];
        check_context("mesh %u", (unsigned)i);
        CHECK_OK(ossa_model_get_mesh(model, i, &mesh));
        CHECK_STR(mesh.name, ""); /* DPM meshes have no names */
        CHECK_STR(mesh.shader, want->shader);
        CHECK_EQ_U(mesh.vertex_count, want->vertex_count);
        CHECK_EQ_U(mesh.triangle_count, want->triangle_count);
        CHECK(mesh.indices != NULL && mesh.texcoords != NULL && mesh.group_ids != NULL);
        if (mesh.indices == NULL || mesh.texcoords == NULL || mesh.group_ids == NULL ||
            mesh.triangle_count != want->triangle_count || mesh.vertex_count != want->vertex_count)
            continue;
        /* DPM files are already counter-clockwise-front: indices come out in file order. */
        for (t = 0; t < 3 * want->triangle_count; t++)
            CHECK_EQ_U(mesh.indices[t], want->indices[t]);
        for (t = 0; t < want->triangle_count; t++)
            CHECK_EQ_U(mesh.group_ids[t], want->groupids[t]);
        for (v = 0; v < want->vertex_count; v++) {
            CHECK(mesh.texcoords[2 * v] == want->verts[v].st[0]);
            CHECK(mesh.texcoords[2 * v + 1] == want->verts[v].st[1]);
        }
    }
    check_context(NULL);
}

static void test_bad_indices_and_nulls(const ossa_model *model)
{
    ossa_model_info info;
    ossa_bone_info bone;
    ossa_frame_info frame;
    ossa_mesh_info mesh;
    const uint32_t bad[][3] = {/* bone, frame, mesh */
                               {small.bone_count, small.frame_count, small.mesh_count},
                               {small.bone_count + 1, small.frame_count + 1, small.mesh_count + 1},
                               {0x7fffffffu, 0x7fffffffu, 0x7fffffffu},
                               {0xffffffffu, 0xffffffffu, 0xffffffffu}};
    size_t i;

    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        check_context("indices %u %u %u", (unsigned)bad[i][0], (unsigned)bad[i][1], (unsigned)bad[i][2]);
        memset(&bone, POISON, sizeof bone);
        CHECK_RESULT(ossa_model_get_bone(model, bad[i][0], &bone), OSSA_ERR_INVALID_ARGUMENT);
        CHECK(is_poisoned(&bone, sizeof bone));
        memset(&frame, POISON, sizeof frame);
        CHECK_RESULT(ossa_model_get_frame(model, bad[i][1], &frame),
                     OSSA_ERR_INVALID_ARGUMENT);
        CHECK(is_poisoned(&frame, sizeof frame));
        memset(&mesh, POISON, sizeof mesh);
        CHECK_RESULT(ossa_model_get_mesh(model, bad[i][2], &mesh), OSSA_ERR_INVALID_ARGUMENT);
        CHECK(is_poisoned(&mesh, sizeof mesh));
    }
    check_context(NULL);

    memset(&info, POISON, sizeof info);
    CHECK_RESULT(ossa_model_get_info(NULL, &info), OSSA_ERR_NULL_ARGUMENT);
    CHECK(is_poisoned(&info, sizeof info));
    CHECK_RESULT(ossa_model_get_info(model, NULL), OSSA_ERR_NULL_ARGUMENT);
    memset(&bone, POISON, sizeof bone);
    CHECK_RESULT(ossa_model_get_bone(NULL, 0, &bone), OSSA_ERR_NULL_ARGUMENT);
    CHECK(is_poisoned(&bone, sizeof bone));
    CHECK_RESULT(ossa_model_get_bone(model, 0, NULL), OSSA_ERR_NULL_ARGUMENT);
    memset(&frame, POISON, sizeof frame);
    CHECK_RESULT(ossa_model_get_frame(NULL, 0, &frame), OSSA_ERR_NULL_ARGUMENT);
    CHECK(is_poisoned(&frame, sizeof frame));
    CHECK_RESULT(ossa_model_get_frame(model, 0, NULL), OSSA_ERR_NULL_ARGUMENT);
    memset(&mesh, POISON, sizeof mesh);
    CHECK_RESULT(ossa_model_get_mesh(NULL, 0, &mesh), OSSA_ERR_NULL_ARGUMENT);
    CHECK(is_poisoned(&mesh, sizeof mesh));
    CHECK_RESULT(ossa_model_get_mesh(model, 0, NULL), OSSA_ERR_NULL_ARGUMENT);

    CHECK_EQ_U(ossa_model_warning_count(model), 0);
    CHECK(ossa_model_warning(model, 0) == NULL);
    CHECK(ossa_model_warning(model, 0xffffffffu) == NULL);
    CHECK_EQ_U(ossa_model_warning_count(NULL), 0);
    CHECK(ossa_model_warning(NULL, 0) == NULL);
}

/* Strings live as long as their own model, whatever happens to others. */
static void test_independent_models(const fx_buf *dpm)
{
    ossa_model *a = NULL, *b = NULL;
    ossa_bone_info bone;
    ossa_mesh_info mesh;
    CHECK_OK(ossa_load_memory(dpm->data, dpm->size, NULL, &a, NULL));
    CHECK_OK(ossa_load_memory(dpm->data, dpm->size, NULL, &b, NULL));
    if (a == NULL || b == NULL) {
        ossa_model_free(a);
        ossa_model_free(b);
        return;
    }
    CHECK(a != b);
    CHECK_OK(ossa_model_get_bone(b, 2, &bone));
    CHECK_OK(ossa_model_get_mesh(b, 1, &mesh));
    ossa_model_free(a);
    CHECK_STR(bone.name, "head");
    CHECK_STR(mesh.shader, "models/test/tag");
    CHECK_EQ_U(mesh.indices[2], 2);
    ossa_model_free(b);
}

int main(void)
{
    fx_buf dpm = {NULL, 0, 0};
    ossa_model *model = NULL;

    fx_make_small(&small);
    fx_write_dpm(&small, &dpm, NULL);
    CHECK_OK(ossa_load_memory(dpm.data, dpm.size, NULL, &model, NULL));
    if (model) {
        test_info(model);
        test_bones(model);
        test_frames(model);
        test_meshes(model);
        test_bad_indices_and_nulls(model);
        ossa_model_free(model);
    }
    test_independent_models(&dpm);
    fx_buf_free(&dpm);
    fx_model_free(&small);
    return check_finish("test_query");
}
