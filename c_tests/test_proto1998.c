/* The Sims as it was in 1998, through the C ABI. colonelsuit.CMX (a version 200 skeleton and
   suit) loads with its 25 bones and the suit's 21 skins; each skin's .msh loads as a mesh waiting
   for a skeleton (OSSA_FORMAT_SIMS_MSH), binds to the skeleton by the bone its file name gives,
   and the parts, at rest, stand on the floor with the head on top and left and right mirrored.
   adult-greet01.cmx's skill plays from its uncompressed .bin numbers, with the feet on the floor
   at every frame; Adult-argue.cmx's skills, whose numbers the archive lacks, load as scenes
   without frames, with a warning each, and ossa_animation_blend refuses them. Needs
   $OSSA_CORPUS/sims/proto1998 and says so when it is absent. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "fixture.h"

#define SKINS 21

static char dir[1024];

static ossa_model *load(const char *name)
{
    char path[1200];
    ossa_load_options opt;
    ossa_model *m = NULL;
    ossa_error err;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    ossa_load_options_init(&opt);
    if (!CHECK_OK(ossa_load_file(path, &opt, &m, &err)))
        printf("%s: %s\n", name, err.message);
    return m;
}

/* The y of the lowest and highest vertex of `m` (bound) at its frame `frame`. */
static void y_range(const ossa_model *m, uint32_t frame, float *lo, float *hi)
{
    ossa_model_info info;
    ossa_mesh_info mesh;
    ossa_frame_blend blend;
    ossa_mat3x4 bones[64];
    static float positions[3 * 4096];
    uint32_t i, v;

    *lo = 1e9f;
    *hi = -1e9f;
    blend.frame = frame;
    blend.weight = 1.0f;
    if (!CHECK_OK(ossa_model_get_info(m, &info)) || info.bone_count > 64)
        return;
    if (!CHECK_OK(ossa_pose_frames(m, &blend, 1, NULL, bones, info.bone_count)))
        return;
    for (i = 0; i < info.mesh_count; i++) {
        ossa_skin_target target;
        if (!CHECK_OK(ossa_model_get_mesh(m, i, &mesh)) || mesh.vertex_count > 4096)
            continue;
        memset(&target, 0, sizeof target);
        target.positions = positions;
        target.position_stride = 3 * sizeof(float);
        target.position_bytes = sizeof positions;
        if (!CHECK_OK(ossa_skin_mesh(m, i, bones, info.bone_count, 0, mesh.vertex_count, 0, &target)))
            continue;
        for (v = 0; v < mesh.vertex_count; v++) {
            float y = positions[3 * v + 1];
            *lo = y < *lo ? y : *lo;
            *hi = y > *hi ? y : *hi;
        }
    }
}

static void test_colonel(void)
{
    ossa_model *character = load("colonelsuit.CMX");
    ossa_model_info info;
    ossa_suit_info suit;
    float lowest = 1e9f, highest = -1e9f, head_top = -1e9f;
    float left_x = 0.0f, right_x = 0.0f;
    uint32_t k;

    check_context("colonel");
    if (!character)
        return;
    if (CHECK_OK(ossa_model_get_info(character, &info))) {
        CHECK_EQ_U(info.format, OSSA_FORMAT_SIMS_CMX);
        CHECK_EQ_U(info.bone_count, 25);
    }
    CHECK_EQ_U(ossa_model_suit_count(character), 1);
    if (CHECK_OK(ossa_model_get_suit(character, 0, &suit))) {
        CHECK_STR(suit.name, "colonel");
        CHECK_EQ_U(suit.kind, 0);
        CHECK_EQ_U(suit.skin_count, SKINS);
        CHECK_EQ_U(suit.property_count, 0);
    }
    for (k = 0; k < SKINS; k++) {
        ossa_suit_skin skin;
        char file[300];
        ossa_model *mesh, *bound = NULL;
        ossa_error err;
        float lo, hi;
        if (!CHECK_OK(ossa_suit_get_skin(character, 0, k, &skin)))
            continue;
        CHECK_EQ_U(skin.censor_flags, 0);
        check_context("colonel skin %u (%s on %s)", (unsigned)k, skin.mesh, skin.bone);
        snprintf(file, sizeof file, "%s.msh", skin.mesh);
        mesh = load(file);
        if (!mesh)
            continue;
        if (CHECK_OK(ossa_model_get_info(mesh, &info))) {
            CHECK_EQ_U(info.format, OSSA_FORMAT_SIMS_MSH);
            CHECK_EQ_U(info.flags & OSSA_MODEL_UNBOUND, OSSA_MODEL_UNBOUND);
            CHECK_EQ_U(info.max_influences, 1);
        }
        if (CHECK_OK(ossa_model_bind(mesh, character, &bound, &err))) {
            y_range(bound, 0, &lo, &hi);
            lowest = lo < lowest ? lo : lowest;
            highest = hi > highest ? hi : highest;
            if (strcmp(skin.bone, "HEAD") == 0 && hi > head_top)
                head_top = hi;
            if (CHECK_OK(ossa_model_get_info(bound, &info))) {
                /* The hands, mirror images: the left one's x the right one's negated. */
                if (strcmp(skin.mesh, "xskin-colonel-L_HAND-HANDR") == 0)
                    left_x = info.mins[0];
                if (strcmp(skin.mesh, "xskin-colonel-R_HAND-HANDL") == 0)
                    right_x = info.maxs[0];
            }
        } else {
            printf("bind: %s\n", err.message);
        }
        ossa_model_free(bound);
        ossa_model_free(mesh);
    }
    check_context("colonel at rest");
    /* Feet on the floor, the head on top, about 5.5 units tall. */
    CHECK_NEAR(lowest, 0.0, 0.01);
    CHECK_NEAR(highest, 5.47, 0.01);
    CHECK_NEAR(head_top, highest, 0.0);
    CHECK_NEAR(left_x, -0.81, 0.01);
    CHECK_NEAR(right_x, 0.81, 0.01);
    printf("colonel: y from %.3f to %.3f\n", lowest, highest);
    check_context(NULL);
    ossa_model_free(character);
}

static void test_skills(void)
{
    char path[1200];
    ossa_model *skeleton = load("adult-greet01.cmx");
    ossa_model *greeting = NULL, *arguing = NULL;
    ossa_load_options opt;
    ossa_animation_info scene;
    ossa_model_info info;
    ossa_error err;
    uint32_t i;

    check_context("skills");
    if (!skeleton)
        return;
    ossa_load_options_init(&opt);
    snprintf(path, sizeof path, "%s/adult-greet01.cmx", dir);
    if (CHECK_OK(ossa_model_add_skills(skeleton, path, &opt, &greeting, &err))) {
        CHECK_EQ_U(ossa_model_warning_count(greeting), 0);
        if (CHECK_OK(ossa_model_get_animation(greeting, 0, &scene))) {
            CHECK_STR(scene.name, "adult-greet01");
            CHECK_EQ_U(scene.first_frame, 1);
            CHECK_EQ_U(scene.frame_count, 91);
            CHECK_NEAR(scene.fps, 91.0 * 1000.0 / 3033.0, 1e-3);
        }
        /* The toes stay on the floor at every frame. */
        {
            int32_t toe = ossa_model_find_bone(greeting, "L_TOE0");
            ossa_mat3x4 bones[25];
            CHECK(toe >= 0);
            for (i = 1; toe >= 0 && i <= 91; i++) {
                ossa_frame_blend blend;
                blend.frame = i;
                blend.weight = 1.0f;
                if (CHECK_OK(ossa_pose_frames(greeting, &blend, 1, NULL, bones, 25))) {
                    float y = bones[toe].m[7];
                    if (y < -0.01f || y > 0.1f)
                        CHECK_NEAR(y, 0.0, 0.1);
                }
            }
        }
    } else {
        printf("greeting: %s\n", err.message);
    }
    snprintf(path, sizeof path, "%s/Adult-argue.cmx", dir);
    if (CHECK_OK(ossa_model_add_skills(skeleton, path, &opt, &arguing, &err))) {
        if (CHECK_OK(ossa_model_get_info(arguing, &info))) {
            CHECK_EQ_U(info.frame_count, 1);
            CHECK(info.animation_count > 0);
            CHECK_EQ_U(ossa_model_warning_count(arguing), info.animation_count);
            if (CHECK_OK(ossa_model_get_animation(arguing, 0, &scene)))
                CHECK_EQ_U(scene.frame_count, 0);
            {
                ossa_frame_blend blends[2];
                size_t n = 0;
                CHECK_RESULT(ossa_animation_blend(arguing, 0, 0.0, blends, &n), OSSA_ERR_INVALID_ARGUMENT);
            }
        }
    } else {
        printf("arguing: %s\n", err.message);
    }
    check_context(NULL);
    ossa_model_free(arguing);
    ossa_model_free(greeting);
    ossa_model_free(skeleton);
}

int main(void)
{
    FILE *probe;
    snprintf(dir, sizeof dir, "%s/sims/proto1998", fx_corpus_dir());
    {
        char path[1200];
        snprintf(path, sizeof path, "%s/colonelsuit.CMX", dir);
        probe = fopen(path, "rb");
    }
    if (!probe) {
        printf("test_proto1998: corpus not found at %s; skipping\n", dir);
        return check_finish("test_proto1998");
    }
    fclose(probe);
    test_colonel();
    test_skills();
    return check_finish("test_proto1998");
}
