/* ossa_skin_model: every mesh of the hand-made model in one call gives what ossa_skin_mesh gives
   mesh by mesh, and what fixture.c computes; a wrong target count, a target too small for its mesh
   and bones inside a target are refused before anything is written. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fixture.h"

#define NB 4

static ossa_skin_target packed(float *pos, float *nrm, uint32_t n)
{
    ossa_skin_target t;
    t.positions = pos;
    t.position_stride = 12;
    t.position_bytes = 12 * (size_t)n;
    t.normals = nrm;
    t.normal_stride = 12;
    t.normal_bytes = 12 * (size_t)n;
    return t;
}

int main(void)
{
    fx_model small;
    fx_buf dpm = {NULL, 0, 0};
    ossa_model *model = NULL;
    ossa_frame_blend blend = {2, 1.0f};
    ossa_mat3x4 bones[NB];
    double local[NB * 12], want[NB * 12];
    ossa_skin_target targets[2], one;
    float *pos[2], *nrm[2], *alone_p, *alone_n;
    uint32_t m, v;
    int k;

    fx_make_small(&small);
    fx_write_dpm(&small, &dpm, NULL);
    CHECK_OK(ossa_load_memory(dpm.data, dpm.size, NULL, &model, NULL));
    if (!model)
        return check_finish("test_skin_model");
    CHECK_EQ_U(small.mesh_count, 2);
    fx_frame_local(&small, 2, local);
    fx_concat(&small, local, NULL, want);
    CHECK_OK(ossa_pose_frames(model, &blend, 1, NULL, bones, NB));

    for (m = 0; m < 2; m++) {
        uint32_t n = small.meshes[m].vertex_count;
        pos[m] = calloc(3 * (size_t)n, sizeof(float));
        nrm[m] = calloc(3 * (size_t)n, sizeof(float));
        targets[m] = packed(pos[m], nrm[m], n);
    }
    CHECK_OK(ossa_skin_model(model, bones, NB, 0, targets, 2));
    for (m = 0; m < 2; m++) {
        const fx_mesh *me = &small.meshes[m];
        uint32_t n = me->vertex_count;
        alone_p = calloc(3 * (size_t)n, sizeof(float));
        alone_n = calloc(3 * (size_t)n, sizeof(float));
        one = packed(alone_p, alone_n, n);
        CHECK_OK(ossa_skin_mesh(model, m, bones, NB, 0, n, 0, &one));
        CHECK(memcmp(alone_p, pos[m], 12 * (size_t)n) == 0);
        CHECK(memcmp(alone_n, nrm[m], 12 * (size_t)n) == 0);
        for (v = 0; v < n; v++) {
            double p[3], nn[3];
            fx_skin_vertex(&me->verts[v], want, p, nn);
            check_context("mesh %u vertex %u", (unsigned)m, (unsigned)v);
            for (k = 0; k < 3; k++)
                CHECK_NEAR(pos[m][3 * v + k], p[k], 1e-5 * (fabs(p[k]) > 1 ? fabs(p[k]) : 1));
        }
        check_context(NULL);
        free(alone_p);
        free(alone_n);
    }

    /* Refusals: nothing written. */
    for (m = 0; m < 2; m++) {
        memset(pos[m], 0, 12 * (size_t)small.meshes[m].vertex_count);
        memset(nrm[m], 0, 12 * (size_t)small.meshes[m].vertex_count);
    }
    CHECK_RESULT(ossa_skin_model(model, bones, NB, 0, targets, 1), OSSA_ERR_INVALID_ARGUMENT);
    CHECK_RESULT(ossa_skin_model(model, bones, NB, 0, NULL, 2), OSSA_ERR_NULL_ARGUMENT);
    CHECK_RESULT(ossa_skin_model(model, bones, NB - 1, 0, targets, 2), OSSA_ERR_INVALID_ARGUMENT);
    CHECK_RESULT(ossa_skin_model(model, bones, NB, 8, targets, 2), OSSA_ERR_INVALID_ARGUMENT);
    one = targets[1];
    targets[1].position_bytes -= 12; /* one vertex short */
    CHECK_RESULT(ossa_skin_model(model, bones, NB, 0, targets, 2), OSSA_ERR_INVALID_ARGUMENT);
    targets[1] = one;
    targets[1].positions = (float *)(void *)bones; /* bones inside a target */
    targets[1].position_bytes = sizeof bones;
    targets[1].normals = NULL;
    CHECK_RESULT(ossa_skin_model(model, bones, NB, 0, targets, 2), OSSA_ERR_INVALID_ARGUMENT);
    targets[1] = one;
    {
        const float zero[3] = {0, 0, 0};
        CHECK(memcmp(pos[0], zero, sizeof zero) == 0);
        CHECK(memcmp(pos[1], zero, sizeof zero) == 0);
    }

    for (m = 0; m < 2; m++) {
        free(pos[m]);
        free(nrm[m]);
    }
    ossa_model_free(model);
    fx_buf_free(&dpm);
    fx_model_free(&small);
    return check_finish("test_skin_model");
}
