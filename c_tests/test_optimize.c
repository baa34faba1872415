/* ossa_model_optimize with OSSA_OPTIMIZE_BONE_ORDER: the bones come out in the order the rule in
   ossa.h gives, worked out here from the fixture's own influence lists (not from ossa), and the
   model skins exactly as before with its matrices renumbered. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fixture.h"

#define NB 12 /* fx_make_big's bone count */

/* The rule: first use of each bone (meshes in order, each vertex's influences in order), a
   bone's subtree first used where any bone in it is; a pre-order of the tree whose children and
   roots are taken by that first use, then by number. order[new] = old. */
static void expected_order(const fx_model *fx, uint32_t *order)
{
    uint64_t first[NB], at = 0;
    uint32_t placed[NB] = {0};
    uint32_t stack[NB], depth = 0, n = 0, b, m, v, k;
    for (b = 0; b < NB; b++)
        first[b] = UINT64_MAX;
    for (m = 0; m < fx->mesh_count; m++)
        for (v = 0; v < fx->meshes[m].vertex_count; v++)
            for (k = 0; k < fx->meshes[m].verts[v].count; k++, at++) {
                uint32_t bone = fx->meshes[m].verts[v].inf[k].bone;
                if (first[bone] == UINT64_MAX)
                    first[bone] = at;
            }
    for (b = NB; b-- > 0;)
        if (fx->bones[b].parent >= 0 && first[b] < first[fx->bones[b].parent])
            first[fx->bones[b].parent] = first[b];
    /* Depth-first: the next bone is the unplaced child of the bone on top of the stack (or root,
       with an empty stack) with the earliest first use. */
    while (n < NB) {
        int32_t parent = depth ? (int32_t)stack[depth - 1] : -1;
        uint32_t best = NB;
        for (b = 0; b < NB; b++)
            if (!placed[b] && fx->bones[b].parent == parent && (best == NB || first[b] < first[best]))
                best = b;
        if (best == NB) {
            depth--;
            continue;
        }
        placed[best] = 1;
        order[n++] = best;
        stack[depth++] = best;
    }
}

/* Mesh `mesh` of `m` skinned at frame 2: 3 floats a vertex, malloc'd. */
static float *skinned(const ossa_model *m, uint32_t mesh, uint32_t *count)
{
    ossa_frame_blend blend = {2, 1.0f};
    ossa_mat3x4 bones[NB];
    ossa_mesh_info info;
    ossa_skin_target t;
    float *p;
    CHECK_OK(ossa_model_get_mesh(m, mesh, &info));
    *count = info.vertex_count;
    p = calloc((size_t)info.vertex_count * 3, sizeof *p);
    CHECK_OK(ossa_pose_frames(m, &blend, 1, NULL, bones, NB));
    memset(&t, 0, sizeof t);
    t.positions = p;
    t.position_stride = 3 * sizeof *p;
    t.position_bytes = (size_t)info.vertex_count * 3 * sizeof *p;
    CHECK_OK(ossa_skin_mesh(m, mesh, bones, NB, 0, info.vertex_count, 0, &t));
    return p;
}

int main(void)
{
    fx_model fx;
    fx_buf dpm = {0};
    ossa_model *model = NULL, *out = NULL;
    ossa_optimize_report report;
    uint32_t order[NB], i, mesh, moved = 0;

    fx_make_big(&fx, 200, 7);
    fx_write_dpm(&fx, &dpm, NULL);
    CHECK_OK(ossa_load_memory(dpm.data, dpm.size, NULL, &model, NULL));
    if (model == NULL)
        return check_finish("test_optimize");
    expected_order(&fx, order);
    for (i = 0; i < NB; i++)
        moved += order[i] != i;
    /* The fixture's random tree and influences make an order that is not the file's. */
    CHECK(moved > 0);

    memset(&report, 0xff, sizeof report);
    CHECK_OK(ossa_model_optimize(model, OSSA_OPTIMIZE_BONE_ORDER, &out, &report, NULL));
    if (out != NULL) {
        CHECK_EQ_U(report.bones_before, NB);
        CHECK_EQ_U(report.bones_after, NB);
        /* Bones alone: vertices and triangles keep their numbers. */
        CHECK_EQ_U(report.vertices_moved, 0);
        CHECK_EQ_U(report.triangles_moved, 0);
        for (i = 0; i < NB; i++) {
            ossa_bone_info got;
            int32_t want_parent = fx.bones[order[i]].parent;
            uint32_t k;
            check_context("new bone %u (file bone %u)", (unsigned)i, (unsigned)order[i]);
            CHECK_OK(ossa_model_get_bone(out, i, &got));
            CHECK_STR(got.name, fx.bones[order[i]].name);
            if (want_parent < 0) {
                CHECK_EQ_I(got.parent, -1);
            } else {
                for (k = 0; k < NB && order[k] != (uint32_t)want_parent; k++)
                    ;
                CHECK_EQ_I(got.parent, (int32_t)k);
                CHECK(got.parent < (int32_t)i);
            }
        }
        check_context(NULL);
        for (mesh = 0; mesh < fx.mesh_count; mesh++) {
            uint32_t n_before, n_after, v;
            float *before = skinned(model, mesh, &n_before);
            float *after = skinned(out, mesh, &n_after);
            CHECK_EQ_U(n_after, n_before);
            for (v = 0; v < 3 * n_before && v < 3 * n_after; v++) {
                check_context("mesh %u vertex %u", (unsigned)mesh, (unsigned)(v / 3));
                CHECK_NEAR(after[v], before[v], 1e-5);
            }
            check_context(NULL);
            free(before);
            free(after);
        }
        ossa_model_free(out);
    }

    /* A bad flag bit is refused, and nothing is made. */
    out = NULL;
    CHECK_RESULT(ossa_model_optimize(model, 0x100, &out, NULL, NULL), OSSA_ERR_INVALID_ARGUMENT);
    CHECK(out == NULL);

    ossa_model_free(model);
    fx_buf_free(&dpm);
    fx_model_free(&fx);
    return check_finish("test_optimize");
}
