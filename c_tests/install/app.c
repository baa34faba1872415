/* Built by c_tests/install_test.sh against an installed ossa (pkg-config, shared and static, and
 * CMake), with only the installed header on the include path. It loads the hand-made model of
 * c_tests/fixture.c from memory, poses frame 1 and skins mesh 0, and compares every vertex with
 * the position fixture.c computes on its own in double precision; then, when the corpus is there,
 * loads xon_zombie.dpm from a file and checks its counts. Prints "install app: ok (...)" on success. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "ossa.h"

static int failures;

#define EXPECT(cond)                                                        \
    do {                                                                    \
        if (!(cond)) {                                                      \
            fprintf(stderr, "%s:%d: failed: %s\n", __FILE__, __LINE__, #cond); \
            failures++;                                                     \
        }                                                                   \
    } while (0)

/* The fixture's model: 4 bones, 2 meshes (6 and 3 vertices), 3 frames. */
static void check_memory_model(void)
{
    fx_model fx;
    fx_buf file = {0};
    ossa_model *model = NULL;
    ossa_error err;
    ossa_model_info info;
    ossa_mesh_info mesh;
    ossa_frame_blend blend = {1, 1.0f};
    ossa_mat3x4 bones[4];
    float positions[6 * 3];
    double local[4 * 12], expected_bones[4 * 12];
    ossa_skin_target target;
    uint32_t v;

    fx_make_small(&fx);
    fx_write_dpm(&fx, &file, NULL);
    EXPECT(ossa_load_memory(file.data, file.size, NULL, &model, &err) == OSSA_OK);
    if (model == NULL) {
        fprintf(stderr, "load: %s\n", err.message);
        exit(1);
    }
    EXPECT(ossa_model_get_info(model, &info) == OSSA_OK);
    EXPECT(info.format == OSSA_FORMAT_DPM);
    EXPECT(info.bone_count == 4 && info.mesh_count == 2 && info.frame_count == 3);
    EXPECT(info.vertex_count == 9 && info.triangle_count == 4);
    EXPECT(ossa_model_find_bone(model, "tag_weapon") == 3);
    EXPECT(ossa_model_get_mesh(model, 0, &mesh) == OSSA_OK);
    EXPECT(mesh.vertex_count == 6 && mesh.triangle_count == 3 && strcmp(mesh.shader, "models/test/body") == 0);

    EXPECT(ossa_pose_frames(model, &blend, 1, NULL, bones, 4) == OSSA_OK);
    memset(&target, 0, sizeof target);
    target.positions = positions;
    target.position_stride = 12;
    target.position_bytes = sizeof positions;
    EXPECT(ossa_skin_mesh(model, 0, bones, 4, 0, 6, 0, &target) == OSSA_OK);

    fx_frame_local(&fx, 1, local);
    fx_concat(&fx, local, NULL, expected_bones);
    for (v = 0; v < 6; v++) {
        double p[3], n[3];
        int k;
        fx_skin_vertex(&fx.meshes[0].verts[v], expected_bones, p, n);
        for (k = 0; k < 3; k++)
            EXPECT(fabs(positions[v * 3 + k] - p[k]) < 1e-4);
    }
    ossa_model_free(model);
    fx_buf_free(&file);
    fx_model_free(&fx);
}

/* A corpus file through the file loader: xon_zombie.dpm's counts as `ossa info` gives them. */
static int check_corpus_file(void)
{
    char path[4096];
    ossa_model *model = NULL;
    ossa_error err;
    ossa_model_info info;

    snprintf(path, sizeof path, "%s/dpm/xon_zombie.dpm", fx_corpus_dir());
    if (ossa_load_file(path, NULL, &model, &err) != OSSA_OK) {
        if (err.result == OSSA_ERR_IO) {
            printf("skipping the corpus check: %s is absent (set OSSA_CORPUS)\n", path);
            return 0;
        }
        fprintf(stderr, "%s\n", err.message);
        failures++;
        return 0;
    }
    EXPECT(ossa_model_get_info(model, &info) == OSSA_OK);
    EXPECT(info.bone_count == 34 && info.mesh_count == 2 && info.frame_count == 1587);
    EXPECT(info.vertex_count == 2744 && info.triangle_count == 1593);
    EXPECT(ossa_model_find_bone(model, "Bip01 Head") == 10);
    ossa_model_free(model);
    return 1;
}

int main(void)
{
    int corpus;
    EXPECT(ossa_version() == (((uint32_t)OSSA_VERSION_MAJOR << 16) | ((uint32_t)OSSA_VERSION_MINOR << 8) |
                              (uint32_t)OSSA_VERSION_PATCH));
    check_memory_model();
    corpus = check_corpus_file();
    if (failures) {
        fprintf(stderr, "install app: %d failures\n", failures);
        return 1;
    }
    printf("install app: ok (memory model%s)\n", corpus ? ", xon_zombie.dpm" : "");
    return 0;
}
