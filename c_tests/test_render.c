/* Rendering through the C ABI: a quad facing the model's front (+X in DPM's frame) drawn at the
   bind pose and at caller-made bones, the defaults of ossa_render_options_init, the caller's
   textures, and every argument error. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fixture.h"

#define W 48
#define H 40

static ossa_model *model;

static const uint8_t bg[4] = {1, 2, 3, 4};

static int pixel_is(const uint8_t *rgba, int x, int y, const uint8_t want[4])
{
    return memcmp(rgba + ((size_t)y * W + (size_t)x) * 4, want, 4) == 0;
}

/* The quad with texture coordinates: s across the model's y (0 on its right, the picture's
   left), t down its z (0 at the top). */
static int textured;

static void make_quad(fx_model *m)
{
    static const double pos[4][3] = {{0, -1, -1}, {0, 1, -1}, {0, 1, 1}, {0, -1, 1}};
    static const double nrm[3] = {1, 0, 0};
    static const uint32_t tris[6] = {0, 1, 2, 0, 2, 3};
    static const uint32_t bone = 0;
    static const float weight = 1;
    uint32_t i;
    fx_model_alloc(m, 1, 1, 1);
    snprintf(m->bones[0].name, sizeof m->bones[0].name, "root");
    m->bones[0].parent = -1;
    snprintf(m->frames[0].name, sizeof m->frames[0].name, "bind");
    fx_set_local(m, 0, 0, 0, 0, 1, 0, 0, 0, 0);
    fx_mesh_alloc(&m->meshes[0], "models/test/quad", 4, 2);
    for (i = 0; i < 4; i++)
        fx_bind_vertex(m, &m->meshes[0].verts[i], pos[i], nrm, 1, &bone, &weight,
                       textured ? (float)(pos[i][1] + 1) / 2 : 0, textured ? (float)(1 - pos[i][2]) / 2 : 0);
    memcpy(m->meshes[0].indices, tris, sizeof tris);
    fx_compute_bounds(m);
}

static void options(ossa_render_options *o, uint32_t view, uint32_t flags)
{
    ossa_render_options_init(o);
    o->width = W;
    o->height = H;
    o->view = view;
    o->flags = flags;
    memcpy(o->background, bg, 4);
}

static void test_defaults(void)
{
    ossa_render_options o;
    memset(&o, 0xab, sizeof o);
    ossa_render_options_init(&o);
    CHECK_EQ_U(o.size, sizeof o);
    CHECK_EQ_U(o.width, 256);
    CHECK_EQ_U(o.height, 256);
    CHECK_EQ_U(o.view, OSSA_VIEW_THREE_QUARTER);
    CHECK(o.yaw_degrees != o.yaw_degrees); /* NaN: the view's */
    CHECK(o.pitch_degrees != o.pitch_degrees);
    CHECK_EQ_U(o.background[3], 255);
    CHECK_EQ_U(o.flags, 0);
    ossa_render_options_init(NULL); /* a no-op */
}

static void test_pictures(void)
{
    static const uint8_t white[4] = {255, 255, 255, 255};
    static const uint32_t views[4] = {OSSA_VIEW_FRONT, OSSA_VIEW_THREE_QUARTER, OSSA_VIEW_SIDE, OSSA_VIEW_TOP};
    uint8_t *a = malloc(W * H * 4), *b = malloc(W * H * 4);
    ossa_render_options o;
    ossa_mat3x4 bones[1];
    ossa_frame_blend blend = {0, 1.0f};
    int v;

    for (v = 0; v < 4; v++) {
        uint32_t flags;
        for (flags = 0; flags < 8; flags++) {
            check_context("view %u, flags %u", (unsigned)views[v], (unsigned)flags);
            options(&o, views[v], flags);
            CHECK_OK(ossa_render(model, NULL, 0, &o, a, W * H * 4));
            /* The corners are margin; the quad covers the middle except edge-on (side, top). */
            CHECK(pixel_is(a, 0, 0, bg));
            CHECK(pixel_is(a, W - 1, H - 1, bg));
            if (views[v] == OSSA_VIEW_FRONT || views[v] == OSSA_VIEW_THREE_QUARTER)
                CHECK(!pixel_is(a, W / 2 - 3, H / 2 + 5, bg));
        }
    }
    check_context(NULL);

    /* Facing the camera and its light, the front view is white; the same bones passed in
       explicitly give the same bytes. */
    options(&o, OSSA_VIEW_FRONT, 0);
    CHECK_OK(ossa_render(model, NULL, 0, &o, a, W * H * 4));
    CHECK(pixel_is(a, W / 2 - 3, H / 2 + 5, white));
    CHECK_OK(ossa_pose_frames(model, &blend, 1, NULL, bones, 1));
    CHECK_OK(ossa_render(model, bones, 1, &o, b, W * H * 4));
    CHECK(memcmp(a, b, W * H * 4) == 0);

    /* Turned half round about the up axis, the quad shows its back: no longer white. */
    memset(bones, 0, sizeof bones);
    bones[0].m[0] = -1;
    bones[0].m[5] = -1;
    bones[0].m[10] = 1;
    CHECK_OK(ossa_render(model, bones, 1, &o, b, W * H * 4));
    CHECK(!pixel_is(b, W / 2 - 3, H / 2 + 5, bg));
    CHECK(!pixel_is(b, W / 2 - 3, H / 2 + 5, white));

    /* Options NULL: the defaults (256x256). */
    {
        uint8_t *big = malloc(256 * 256 * 4);
        CHECK_OK(ossa_render(model, NULL, 0, NULL, big, 256 * 256 * 4));
        free(big);
    }
    free(a);
    free(b);
}

static void test_errors(void)
{
    uint8_t *a = malloc(W * H * 4);
    ossa_render_options o;
    ossa_mat3x4 bones[2];
    memset(bones, 0, sizeof bones);
    bones[0].m[0] = bones[0].m[5] = bones[0].m[10] = 1;

    options(&o, OSSA_VIEW_FRONT, 0);
    CHECK_RESULT(ossa_render(NULL, NULL, 0, &o, a, W * H * 4), OSSA_ERR_NULL_ARGUMENT);
    CHECK_RESULT(ossa_render(model, NULL, 0, &o, NULL, W * H * 4), OSSA_ERR_NULL_ARGUMENT);
    CHECK_RESULT(ossa_render(model, NULL, 0, &o, a, W * H * 4 - 1), OSSA_ERR_INVALID_ARGUMENT);
    CHECK_RESULT(ossa_render(model, NULL, 0, &o, a, W * H * 4 + 4), OSSA_ERR_INVALID_ARGUMENT);
    CHECK_RESULT(ossa_render(model, bones, 2, &o, a, W * H * 4), OSSA_ERR_INVALID_ARGUMENT);
    CHECK_RESULT(ossa_render(model, bones, 0, &o, a, W * H * 4), OSSA_ERR_INVALID_ARGUMENT);
    bones[0].m[3] = 1e10f;
    CHECK_RESULT(ossa_render(model, bones, 1, &o, a, W * H * 4), OSSA_ERR_INVALID_ARGUMENT);
    bones[0].m[3] = 0;
    /* The output over the bones or the options. */
    CHECK_RESULT(ossa_render(model, bones, 1, &o, (uint8_t *)(void *)bones, W * H * 4),
                 OSSA_ERR_INVALID_ARGUMENT);
    {
        uint8_t *both = malloc(W * H * 4 + sizeof o);
        memcpy(both + W * H * 4 - 8, &o, sizeof o);
        CHECK_RESULT(ossa_render(model, NULL, 0, (const ossa_render_options *)(void *)(both + W * H * 4 - 8),
                                 both, W * H * 4),
                     OSSA_ERR_INVALID_ARGUMENT);
        free(both);
    }

    options(&o, OSSA_VIEW_FRONT, 0);
    o.size = 4;
    CHECK_RESULT(ossa_render(model, NULL, 0, &o, a, W * H * 4), OSSA_ERR_INVALID_ARGUMENT);
    options(&o, 4, 0);
    CHECK_RESULT(ossa_render(model, NULL, 0, &o, a, W * H * 4), OSSA_ERR_INVALID_ARGUMENT);
    options(&o, OSSA_VIEW_FRONT, 8);
    CHECK_RESULT(ossa_render(model, NULL, 0, &o, a, W * H * 4), OSSA_ERR_INVALID_ARGUMENT);
    options(&o, OSSA_VIEW_FRONT, 0);
    o.yaw_degrees = (float)HUGE_VAL;
    CHECK_RESULT(ossa_render(model, NULL, 0, &o, a, W * H * 4), OSSA_ERR_INVALID_ARGUMENT);
    options(&o, OSSA_VIEW_FRONT, 0);
    o.width = 0;
    CHECK_RESULT(ossa_render(model, NULL, 0, &o, a, 0), OSSA_ERR_INVALID_ARGUMENT);
    /* Too large is refused before the buffer is looked at. */
    options(&o, OSSA_VIEW_FRONT, 0);
    o.width = 16385;
    o.height = 1;
    CHECK_RESULT(ossa_render(model, NULL, 0, &o, a, (size_t)16385 * 4), OSSA_ERR_LIMIT);
    o.width = 8192;
    o.height = 8193;
    CHECK_RESULT(ossa_render(model, NULL, 0, &o, a, W * H * 4), OSSA_ERR_LIMIT);
    o.width = 4097;
    o.height = 4096;
    o.flags = OSSA_RENDER_ANTIALIAS;
    CHECK_RESULT(ossa_render(model, NULL, 0, &o, a, W * H * 4), OSSA_ERR_LIMIT);
    free(a);
}

/* A 2x2 texture on the quad seen from the front: each quarter of the picture's square shows its
   texel's colour (lit head-on, so unchanged); and the texture arguments' errors. */
static void test_textures(void)
{
    static const uint8_t texels[16] = {200, 0, 0, 255, 0, 200, 0, 255, 0, 0, 200, 255, 200, 200, 0, 255};
    uint8_t *out = malloc(W * H * 4);
    ossa_render_texture tex = {2, 2, texels}, none = {0, 0, NULL}, pair[2];
    ossa_render_options o;
    fx_model quad;
    fx_buf dpm = {NULL, 0, 0};
    ossa_model *m = NULL;
    int q;

    textured = 1;
    make_quad(&quad);
    textured = 0;
    fx_write_dpm(&quad, &dpm, NULL);
    CHECK_OK(ossa_load_memory(dpm.data, dpm.size, NULL, &m, NULL));
    if (m == NULL || out == NULL)
        goto done;
    options(&o, OSSA_VIEW_FRONT, 0);
    o.textures = &tex;
    o.texture_count = 1;
    CHECK_OK(ossa_render(m, NULL, 0, &o, out, W * H * 4));
    /* The quad fills the middle H * 0.9 pixels square: quarter centres a quarter of that out. */
    for (q = 0; q < 4; q++) {
        int x = W / 2 + (q % 2 ? 9 : -9), y = H / 2 + (q / 2 ? 9 : -9), k;
        const uint8_t *p = out + ((size_t)y * W + (size_t)x) * 4;
        check_context("quarter %d at (%d, %d): %u %u %u %u", q, x, y, p[0], p[1], p[2], p[3]);
        for (k = 0; k < 4; k++)
            CHECK(abs((int)p[k] - (int)texels[q * 4 + k]) <= 2);
    }
    check_context(NULL);
    /* A NULL rgba leaves the mesh untextured: white, head-on. */
    o.textures = &none;
    CHECK_OK(ossa_render(m, NULL, 0, &o, out, W * H * 4));
    CHECK(out[((size_t)(H / 2) * W + W / 2) * 4] == 255);

    o.textures = NULL; /* with texture_count 1 */
    CHECK_RESULT(ossa_render(m, NULL, 0, &o, out, W * H * 4), OSSA_ERR_NULL_ARGUMENT);
    pair[0] = tex;
    pair[1] = tex;
    o.textures = pair;
    o.texture_count = 2; /* one mesh */
    CHECK_RESULT(ossa_render(m, NULL, 0, &o, out, W * H * 4), OSSA_ERR_INVALID_ARGUMENT);
    o.texture_count = 1;
    pair[0].width = 0;
    CHECK_RESULT(ossa_render(m, NULL, 0, &o, out, W * H * 4), OSSA_ERR_INVALID_ARGUMENT);
    pair[0].width = 20000;
    CHECK_RESULT(ossa_render(m, NULL, 0, &o, out, W * H * 4), OSSA_ERR_LIMIT);
    pair[0].width = 2;
    pair[0].rgba = out + 8; /* inside the picture it would draw */
    CHECK_RESULT(ossa_render(m, NULL, 0, &o, out, W * H * 4), OSSA_ERR_INVALID_ARGUMENT);
done:
    ossa_model_free(m);
    fx_buf_free(&dpm);
    fx_model_free(&quad);
    free(out);
}

int main(void)
{
    fx_model quad;
    fx_buf dpm = {NULL, 0, 0};

    make_quad(&quad);
    fx_write_dpm(&quad, &dpm, NULL);
    CHECK_OK(ossa_load_memory(dpm.data, dpm.size, NULL, &model, NULL));
    test_defaults();
    if (model) {
        test_pictures();
        test_errors();
        test_textures();
        ossa_model_free(model);
    }
    fx_buf_free(&dpm);
    fx_model_free(&quad);
    return check_finish("test_render");
}
