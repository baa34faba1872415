/* DashGL DMF 1.5 from memory, binary and JSON: textures (the PNG bytes by pointer and length),
   materials, per-vertex colours and mesh materials, a scene posed with ossa_animation_blend and
   ossa_pose_frames, and skinning, compared with values computed here in double precision.
   Saving through ossa_save gives back the binary file written here byte for byte. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fixture.h"

/* ---- the file, little-endian, written field by field ---- */

static void put_u16(fx_buf *b, uint16_t v)
{
    uint8_t x[2];
    x[0] = (uint8_t)(v & 0xff);
    x[1] = (uint8_t)(v >> 8);
    fx_put_bytes(b, x, 2);
}

static void put_u32(fx_buf *b, uint32_t v)
{
    put_u16(b, (uint16_t)(v & 0xffff));
    put_u16(b, (uint16_t)(v >> 16));
}

static void put_f32s(fx_buf *b, const float *v, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) {
        uint32_t bits;
        memcpy(&bits, &v[i], 4);
        put_u32(b, bits);
    }
}

static void put_name(fx_buf *b, const char *s)
{
    uint8_t field[32];
    memset(field, 0, sizeof field);
    memcpy(field, s, strlen(s));
    fx_put_bytes(b, field, sizeof field);
}

static void put_zeros(fx_buf *b, size_t n)
{
    static const uint8_t zeros[16];
    fx_put_bytes(b, zeros, n);
}

static const uint8_t PNG[16] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 13, 'I', 'H', 'D', 'R'};

#define H 0.70710678f

static void put_face(fx_buf *b, uint16_t material, uint32_t i0, uint32_t i1, uint32_t i2, int red_first,
                     const float uv[6])
{
    static const uint8_t white[4] = {255, 255, 255, 255}, red[4] = {255, 0, 0, 255};
    static const float up[9] = {0, 0, 1, 0, 0, 1, 0, 0, 1};
    put_u16(b, material);
    put_u16(b, 0);
    put_u32(b, i0);
    put_u32(b, i1);
    put_u32(b, i2);
    fx_put_bytes(b, red_first ? red : white, 4);
    fx_put_bytes(b, white, 4);
    fx_put_bytes(b, white, 4);
    put_f32s(b, up, 9);
    put_f32s(b, uv, 6);
}

static void put_track(fx_buf *b, int16_t bone, int16_t flags, float time, const float pos[3], const float rot[4],
                      const float scl[3])
{
    put_u16(b, (uint16_t)bone);
    put_u16(b, (uint16_t)flags);
    put_f32s(b, &time, 1);
    put_f32s(b, pos, 3);
    put_f32s(b, rot, 4);
    put_f32s(b, scl, 3);
}

/* Two bones (root up 1 along y; arm 1 along x from it, turned 90 degrees about z), four vertices in
   model space, three faces in two materials, one texture, and a 0.5 s animation at 10 fps whose
   tracks use every channel flag. The layout of the spec's section 2.3. */
static void write_dmf(fx_buf *b)
{
    static const struct {
        char label[5];
        uint32_t offset, count;
    } table[6] = {{"tex", 0x70, 1},   {"mat", 0xb0, 2},   {"vert", 0x190, 4},
                  {"face", 0x220, 3}, {"bone", 0x328, 2}, {"anim", 0x408, 1}};
    static const uint16_t skin_flags[12] = {1, 1, 4, 5, 1, 2, 2, 0, 0, 1, 1, 0};
    static const float skin_colours[13] = {0.5f, 1, 0.5f, 0.25f, 1, 0, 0, 0, 1, 0.5f, 0.5f, 0.5f, 30};
    static const float cloth_colours[13] = {0, 0.25f, 0.25f, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0};
    static const float pos[4][3] = {{0, 0, 0}, {1, 1, 0}, {2, 1, 0}, {1, 2, 0}};
    static const int16_t index[4][4] = {{0, 0, 0, 0}, {1, 0, 0, 0}, {0, 1, 0, 0}, {1, 0, 0, 0}};
    static const float weight[4][4] = {{1, 0, 0, 0}, {1, 0, 0, 0}, {0.5f, 0.5f, 0, 0}, {1, 0, 0, 0}};
    static const float uv0[6] = {0, 0, 1, 0, 1, 1}, uv1[6] = {0, 0, 1, 1, 0, 1}, uv2[6] = {1, 1, 0.5f, 0, 0, 1};
    static const float root_m[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 1, 0, 1};
    static const float arm_m[16] = {0, 1, 0, 0, -1, 0, 0, 0, 0, 0, 1, 0, 1, 0, 0, 1};
    static const float z3[3] = {0, 0, 0}, z4[4] = {0, 0, 0, 0};
    static const float p0[3] = {0, 1, 0}, p1[3] = {0, 2, 0}, q0[4] = {0, 0, 0, 1}, q1[4] = {0, 0, H, H};
    static const float s1[3] = {1, 1, 1}, s2[3] = {2, 2, 2};
    float half = 0.5f;
    int i, k;

    fx_put_bytes(b, "DASH", 4);
    put_u16(b, 1);
    put_u16(b, 5);
    put_u32(b, 0x10);
    put_u32(b, 6);
    for (i = 0; i < 6; i++) {
        uint8_t label[4] = {0, 0, 0, 0};
        memcpy(label, table[i].label, strlen(table[i].label));
        fx_put_bytes(b, label, 4);
        put_u32(b, 0);
        put_u32(b, table[i].offset);
        put_u32(b, table[i].count);
    }
    /* texture: id 0, flip_y 1, image at 0x528 (16 bytes), 2 x 2, repeat / clamp */
    put_name(b, "skin.png");
    put_u16(b, 0);
    put_u16(b, 1);
    put_u32(b, 0x528);
    put_u32(b, 16);
    put_u16(b, 2);
    put_u16(b, 2);
    put_u16(b, 2);
    put_u16(b, 0);
    put_zeros(b, 12);
    /* materials */
    put_name(b, "skin");
    put_u16(b, 0);
    put_u16(b, 0);
    for (k = 0; k < 12; k++)
        put_u16(b, skin_flags[k]);
    put_f32s(b, skin_colours, 13);
    put_name(b, "cloth");
    put_u16(b, 1);
    put_u16(b, 0xffff);
    for (k = 0; k < 12; k++)
        put_u16(b, k == 9 ? 1 : 0);
    put_f32s(b, cloth_colours, 13);
    /* vertices */
    for (i = 0; i < 4; i++) {
        put_f32s(b, pos[i], 3);
        for (k = 0; k < 4; k++)
            put_u16(b, (uint16_t)index[i][k]);
        put_f32s(b, weight[i], 4);
    }
    /* faces */
    put_face(b, 0, 0, 1, 2, 0, uv0);
    put_face(b, 1, 0, 2, 3, 1, uv1);
    put_face(b, 1, 2, 1, 3, 0, uv2);
    /* bones */
    put_name(b, "root");
    put_u16(b, 0);
    put_u16(b, 0xffff);
    put_zeros(b, 12);
    put_f32s(b, root_m, 16);
    put_name(b, "arm");
    put_u16(b, 1);
    put_u16(b, 0);
    put_zeros(b, 12);
    put_f32s(b, arm_m, 16);
    /* animation "wave": 10 fps, tracks at 0x438, 5 of them, 0.5 s */
    put_name(b, "wave");
    put_u16(b, 0);
    put_u16(b, 10);
    put_u32(b, 0x438);
    put_u32(b, 5);
    put_f32s(b, &half, 1);
    put_track(b, 0, 1, 0.0f, p0, z4, z3);
    put_track(b, 0, 1, 0.5f, p1, z4, z3);
    put_track(b, 1, 2, 0.0f, z3, q0, z3);
    put_track(b, 1, 6, 0.4f, z3, q1, s2);
    put_track(b, 1, 4, 0.0f, z3, z4, s1);
    fx_put_bytes(b, PNG, sizeof PNG);
}

/* The same model in the spec's JSON, with its own spellings "verterices" and "verex_color". */
static const char JSON[] =
    "{\"format\": \"DASH\", \"version\": \"1.5\",\n"
    "\"textures\": [{\"id\": 0, \"name\": \"skin.png\", \"flip_y\": true,\n"
    "  \"img\": \"data:image/png;base64,iVBORw0KGgoAAAANSUhEUg==\", \"width\": 2, \"height\": 2,\n"
    "  \"wrap_s\": \"repeat\", \"wrap_t\": \"clamp\"}],\n"
    "\"materials\": [\n"
    " {\"id\": 0, \"name\": \"skin\", \"texture\": 0, \"use_blending\": true, \"blend_equation\": \"add\",\n"
    "  \"blend_src\": \"src_alpha\", \"blend_dst\": \"one_minus_src_alpha\", \"skinning\": true,\n"
    "  \"shader_type\": \"phong\", \"face_side\": \"double\", \"shadow_side\": \"front\", \"ignore_lights\": false,\n"
    "  \"vertex_color\": true, \"use_alpha\": true, \"skip_render\": false, \"alpha_test\": 0.5,\n"
    "  \"diffuse\": [1, 0.5, 0.25, 1], \"emissive\": [0, 0, 0, 1], \"specular\": [0.5, 0.5, 0.5, 30]},\n"
    " {\"id\": 1, \"name\": \"cloth\", \"texture\": -1, \"diffuse\": [0.25, 0.25, 1, 1]}],\n"
    "\"verterices\": [\n"
    " {\"pos\": [0, 0, 0], \"skin_index\": [0, 0, 0, 0], \"skin_weight\": [1, 0, 0, 0]},\n"
    " {\"pos\": [1, 1, 0], \"skin_index\": [1, 0, 0, 0], \"skin_weight\": [1, 0, 0, 0]},\n"
    " {\"pos\": [2, 1, 0], \"skin_index\": [0, 1, 0, 0], \"skin_weight\": [0.5, 0.5, 0, 0]},\n"
    " {\"pos\": [1, 2, 0], \"skin_index\": [1, 0, 0, 0], \"skin_weight\": [1, 0, 0, 0]}],\n"
    "\"faces\": [\n"
    " {\"material\": 0, \"indices\": [0, 1, 2], \"normals\": [[0, 0, 1], [0, 0, 1], [0, 0, 1]],\n"
    "  \"diffuse_uv\": [[0, 0], [1, 0], [1, 1]]},\n"
    " {\"material\": 1, \"indices\": [0, 2, 3],\n"
    "  \"verex_color\": [\"rgba('255, 0, 0, 1.0)\", \"rgba('255, 255, 255, 1.0)\", \"rgba(255, 255, 255, 1)\"],\n"
    "  \"normals\": [[0, 0, 1], [0, 0, 1], [0, 0, 1]], \"diffuse_uv\": [[0, 0], [1, 1], [0, 1]]},\n"
    " {\"material\": 1, \"indices\": [2, 1, 3], \"normals\": [[0, 0, 1], [0, 0, 1], [0, 0, 1]],\n"
    "  \"diffuse_uv\": [[1, 1], [0.5, 0], [0, 1]]}],\n"
    "\"skeleton\": [\n"
    " {\"name\": \"root\", \"id\": 0, \"parent_id\": -1, \"matrix\": [1,0,0,0, 0,1,0,0, 0,0,1,0, 0,1,0,1]},\n"
    " {\"name\": \"arm\", \"id\": 1, \"parent_id\": 0, \"matrix\": [0,1,0,0, -1,0,0,0, 0,0,1,0, 1,0,0,1]}],\n"
    "\"animations\": [{\"id\": 0, \"name\": \"wave\", \"fps\": 10, \"duration\": 0.5, \"tracks\": [\n"
    " {\"bone_id\": 0, \"time\": 0, \"pos\": [0, 1, 0]},\n"
    " {\"bone_id\": 0, \"time\": 0.5, \"pos\": [0, 2, 0]},\n"
    " {\"bone_id\": 1, \"time\": 0, \"rot\": [0, 0, 0, 1]},\n"
    " {\"bone_id\": 1, \"time\": 0.4, \"rot\": [0, 0, 0.70710678, 0.70710678], \"scl\": [2, 2, 2]},\n"
    " {\"bone_id\": 1, \"time\": 0, \"scl\": [1, 1, 1]}]}]}\n";

/* ---- checks ---- */

static void check_textures_and_materials(const ossa_model *m)
{
    ossa_texture_info t;
    ossa_material_info mat;
    static const float skin_diffuse[4] = {1, 0.5f, 0.25f, 1}, skin_specular[4] = {0.5f, 0.5f, 0.5f, 30};
    int k;

    CHECK_EQ_U(ossa_model_texture_count(m), 1);
    CHECK_OK(ossa_model_get_texture(m, 0, &t));
    CHECK_STR(t.name, "skin.png");
    CHECK_EQ_U(t.width, 2);
    CHECK_EQ_U(t.height, 2);
    CHECK_EQ_U(t.flip_y, 1);
    CHECK_EQ_U(t.wrap_s, 2);
    CHECK_EQ_U(t.wrap_t, 0);
    CHECK_EQ_U(t.image_size, sizeof PNG);
    CHECK(t.image != NULL && memcmp(t.image, PNG, sizeof PNG) == 0);
    memset(&t, POISON, sizeof t);
    CHECK_RESULT(ossa_model_get_texture(m, 1, &t), OSSA_ERR_INVALID_ARGUMENT);
    CHECK(is_poisoned(&t, sizeof t));
    CHECK_RESULT(ossa_model_get_texture(m, 0, NULL), OSSA_ERR_NULL_ARGUMENT);
    CHECK_RESULT(ossa_model_get_texture(NULL, 0, &t), OSSA_ERR_NULL_ARGUMENT);

    CHECK_EQ_U(ossa_model_material_count(m), 2);
    CHECK_OK(ossa_model_get_material(m, 0, &mat));
    CHECK_STR(mat.name, "skin");
    CHECK_EQ_I(mat.texture, 0);
    CHECK_EQ_U(mat.use_blending, 1);
    CHECK_EQ_U(mat.blend_equation, 1);
    CHECK_EQ_U(mat.blend_src, 4);
    CHECK_EQ_U(mat.blend_dst, 5);
    CHECK_EQ_U(mat.skinning, 1);
    CHECK_EQ_U(mat.shader_type, 2);
    CHECK_EQ_U(mat.face_side, 2);
    CHECK_EQ_U(mat.shadow_side, 0);
    CHECK_EQ_U(mat.ignore_lights, 0);
    CHECK_EQ_U(mat.vertex_color, 1);
    CHECK_EQ_U(mat.use_alpha, 1);
    CHECK_EQ_U(mat.skip_render, 0);
    CHECK_NEAR(mat.alpha_test, 0.5, 0);
    for (k = 0; k < 4; k++) {
        CHECK_NEAR(mat.diffuse[k], skin_diffuse[k], 0);
        CHECK_NEAR(mat.specular[k], skin_specular[k], 0);
        CHECK_NEAR(mat.emissive[k], k == 3 ? 1 : 0, 0);
    }
    CHECK_OK(ossa_model_get_material(m, 1, &mat));
    CHECK_STR(mat.name, "cloth");
    CHECK_EQ_I(mat.texture, -1);
    CHECK_EQ_U(mat.vertex_color, 1);
    CHECK_NEAR(mat.diffuse[2], 1, 0);
    CHECK_RESULT(ossa_model_get_material(m, 2, &mat), OSSA_ERR_INVALID_ARGUMENT);
}

static void check_meshes(const ossa_model *m)
{
    ossa_mesh_info mi;
    const uint8_t *c;
    static const uint32_t indices1[6] = {0, 1, 2, 1, 3, 2};
    static const float uv1[8] = {0, 0, 1, 1, 0, 1, 0.5f, 0};
    int k;

    CHECK_OK(ossa_model_get_mesh(m, 0, &mi));
    CHECK_STR(mi.shader, "skin");
    CHECK_EQ_U(mi.vertex_count, 3);
    CHECK_EQ_I(ossa_mesh_material(m, 0), 0);
    c = ossa_mesh_colors(m, 0);
    CHECK(c != NULL);
    for (k = 0; c && k < 12; k++)
        CHECK_EQ_U(c[k], 255);

    /* Mesh 1 (cloth): faces 1 and 2; face 2 shares the corners on vertices 2 and 3 with face 1,
       and its corner on vertex 1 is a vertex of its own. */
    CHECK_OK(ossa_model_get_mesh(m, 1, &mi));
    CHECK_STR(mi.shader, "cloth");
    CHECK_EQ_U(mi.vertex_count, 4);
    CHECK_EQ_U(mi.triangle_count, 2);
    for (k = 0; k < 6; k++)
        CHECK_EQ_U(mi.indices[k], indices1[k]);
    for (k = 0; k < 8; k++)
        CHECK_NEAR(mi.texcoords[k], uv1[k], 0);
    CHECK_EQ_I(ossa_mesh_material(m, 1), 1);
    c = ossa_mesh_colors(m, 1);
    CHECK(c != NULL);
    if (c) {
        CHECK(c[0] == 255 && c[1] == 0 && c[2] == 0 && c[3] == 255); /* the red corner */
        for (k = 4; k < 16; k++)
            CHECK_EQ_U(c[k], 255);
    }
    CHECK_EQ_I(ossa_mesh_material(m, 2), -1);
    CHECK(ossa_mesh_colors(m, 2) == NULL);
    CHECK_EQ_I(ossa_mesh_material(NULL, 0), -1);
    CHECK(ossa_mesh_colors(NULL, 0) == NULL);
}

/* The scene at 0.25 s: half way between "wave 2" (0.2 s) and "wave 3" (0.3 s). Their local poses,
   from the keys: root at y 1.4 and 1.6; arm turned 45 and 67.5 degrees about z (slerp from none at
   0 s to 90 at 0.4 s) and scaled 1.5 and 1.75, 1 along x. Blended: root at y 1.5; arm at
   56.25 degrees (the normalised sum of two turns about one axis is the middle turn), scale 1.625. */
static void check_scene(const ossa_model *m)
{
    ossa_animation_info a;
    ossa_frame_blend blends[2];
    ossa_mat3x4 bones[2];
    ossa_skin_target target;
    ossa_model_info info;
    float pos[4 * 3], nrm[4 * 3];
    size_t n = 0;
    const double pi = 3.14159265358979323846;
    double angle = 56.25 * pi / 180, s = 1.625, ty = 1.5, c, sn;
    double want[4][3];
    int v, k;

    CHECK_OK(ossa_model_get_info(m, &info));
    CHECK_EQ_U(info.bone_count, 2);
    CHECK_EQ_U(info.frame_count, 7);
    CHECK_EQ_U(info.animation_count, 1);
    CHECK_EQ_U(info.up_axis, 1);
    CHECK_OK(ossa_model_get_animation(m, 0, &a));
    CHECK_STR(a.name, "wave");
    CHECK_EQ_U(a.first_frame, 1);
    CHECK_EQ_U(a.frame_count, 6);
    CHECK_NEAR(a.fps, 10, 0);
    CHECK_EQ_U(a.looping, 0);

    CHECK_OK(ossa_animation_blend(m, 0, 0.25, blends, &n));
    CHECK_EQ_U(n, 2);
    CHECK_EQ_U(blends[0].frame, 3);
    CHECK_EQ_U(blends[1].frame, 4);
    CHECK_NEAR(blends[0].weight, 0.5, 1e-6);
    CHECK_OK(ossa_pose_frames(m, blends, n, NULL, bones, 2));

    c = cos(angle) * s;
    sn = sin(angle) * s;
    /* Bone matrices: the root translates by (0, 1.5, 0); the arm is T(1, 1.5, 0) R(56.25) S(1.625). */
    CHECK_NEAR(bones[0].m[7], ty, 1e-6);
    CHECK_NEAR(bones[1].m[0], c, 1e-5);
    CHECK_NEAR(bones[1].m[4], sn, 1e-5);
    CHECK_NEAR(bones[1].m[3], 1, 1e-6);
    CHECK_NEAR(bones[1].m[7], ty, 1e-6);

    /* Mesh 1's vertices: (0,0,0) on the root; (2,1,0) half root, half arm; (1,2,0) and (1,1,0) on
       the arm. In bone space the arm's are (0,-1,0), (1,0,0) and (0,0,0). */
    want[0][0] = 0, want[0][1] = ty - 1, want[0][2] = 0;
    want[1][0] = (2 + 1 + sn) / 2, want[1][1] = (ty + ty - c) / 2, want[1][2] = 0;
    want[2][0] = 1 + c, want[2][1] = ty + sn, want[2][2] = 0;
    want[3][0] = 1, want[3][1] = ty, want[3][2] = 0;
    target.positions = pos;
    target.position_stride = 12;
    target.position_bytes = sizeof pos;
    target.normals = nrm;
    target.normal_stride = 12;
    target.normal_bytes = sizeof nrm;
    CHECK_OK(ossa_skin_mesh(m, 1, bones, 2, 0, 4, OSSA_SKIN_NORMALIZE, &target));
    for (v = 0; v < 4; v++) {
        check_context("vertex %d", v);
        for (k = 0; k < 3; k++)
            CHECK_NEAR(pos[3 * v + k], want[v][k], 1e-5);
        CHECK_NEAR(nrm[3 * v + 2], 1, 1e-6); /* turns about z keep the normal on z */
    }
    check_context(NULL);
}

static ossa_model *load(const uint8_t *data, size_t size, uint32_t format)
{
    ossa_load_options opt;
    ossa_model *m = NULL;
    ossa_error err;
    ossa_load_options_init(&opt);
    opt.format = format;
    opt.flags = OSSA_LOAD_STRICT;
    if (!CHECK_OK(ossa_load_memory(data, size, &opt, &m, &err)))
        fprintf(stderr, "  %s\n", err.message);
    return m;
}

int main(void)
{
    fx_buf bin = {0}, saved = {0}, json = {0};
    ossa_model *from_bin, *from_json, *again;
    ossa_error err;
    fx_model small;
    fx_buf dpm = {0};
    ossa_model *plain = NULL;

    write_dmf(&bin);
    CHECK_EQ_U(bin.size, 0x538);
    from_bin = load(bin.data, bin.size, OSSA_FORMAT_AUTO);
    from_json = load((const uint8_t *)JSON, strlen(JSON), OSSA_FORMAT_AUTO);
    if (from_bin && from_json) {
        ossa_model_info info;
        CHECK_OK(ossa_model_get_info(from_bin, &info));
        CHECK_EQ_U(info.format, OSSA_FORMAT_DMF);
        CHECK_OK(ossa_model_get_info(from_json, &info));
        CHECK_EQ_U(info.format, OSSA_FORMAT_DMF_JSON);
        check_context("binary");
        check_textures_and_materials(from_bin);
        check_meshes(from_bin);
        check_scene(from_bin);
        check_context("json");
        check_textures_and_materials(from_json);
        check_meshes(from_json);
        check_scene(from_json);
        check_context(NULL);

        /* Saved, the JSON model is the binary file written above, byte for byte. */
        CHECK_OK(ossa_save(from_json, OSSA_FORMAT_DMF, 0, fx_collect, &saved, &err));
        CHECK_EQ_U(saved.size, bin.size);
        CHECK(saved.size == bin.size && memcmp(saved.data, bin.data, bin.size) == 0);
        /* And as JSON, it loads back to the same model. */
        CHECK_OK(ossa_save(from_bin, OSSA_FORMAT_DMF_JSON, 0, fx_collect, &json, &err));
        again = load(json.data, json.size, OSSA_FORMAT_DMF_JSON);
        if (again) {
            check_context("saved json");
            check_textures_and_materials(again);
            check_meshes(again);
            check_scene(again);
            check_context(NULL);
            ossa_model_free(again);
        }
    }

    /* Errors carry the byte offset (binary) or the line (JSON). */
    {
        ossa_model *bad = NULL;
        bin.data[0x328 + 0x70 + 0x20] = 5; /* bone 1's id */
        CHECK_RESULT(ossa_load_memory(bin.data, bin.size, NULL, &bad, &err), OSSA_ERR_MALFORMED);
        CHECK_EQ_U(err.offset, 0x328 + 0x70 + 0x20);
        CHECK(strstr(err.message, "bone 1 id") != NULL);
        CHECK(bad == NULL);
        bin.data[0x328 + 0x70 + 0x20] = 1;
        bin.data[4] = 2; /* version 2.5 */
        CHECK_RESULT(ossa_load_memory(bin.data, bin.size, NULL, &bad, &err), OSSA_ERR_UNSUPPORTED);
        bin.data[4] = 1;
        {
            static const char broken[] = "{\"format\": \"DASH\", \"version\": \"1.5\",\n"
                                         "\"skeleton\": [{\"name\": \"a\", \"parent_id\": 3,\n"
                                         "  \"matrix\": [1,0,0,0, 0,1,0,0, 0,0,1,0, 0,0,0,1]}]}";
            CHECK_RESULT(ossa_load_memory((const uint8_t *)broken, strlen(broken), NULL, &bad, &err),
                         OSSA_ERR_MALFORMED);
            CHECK_EQ_U(err.line, 2);
            CHECK(strstr(err.message, "skeleton[0].parent_id") != NULL);
        }
    }

    /* A model of another format has no textures, materials or colours. */
    fx_make_small(&small);
    fx_write_dpm(&small, &dpm, NULL);
    if (CHECK_OK(ossa_load_memory(dpm.data, dpm.size, NULL, &plain, &err))) {
        CHECK_EQ_U(ossa_model_texture_count(plain), 0);
        CHECK_EQ_U(ossa_model_material_count(plain), 0);
        CHECK_EQ_I(ossa_mesh_material(plain, 0), -1);
        CHECK(ossa_mesh_colors(plain, 0) == NULL);
        ossa_model_free(plain);
    }
    CHECK_EQ_U(ossa_model_texture_count(NULL), 0);
    CHECK_EQ_U(ossa_model_material_count(NULL), 0);

    fx_model_free(&small);
    fx_buf_free(&dpm);
    ossa_model_free(from_bin);
    ossa_model_free(from_json);
    fx_buf_free(&bin);
    fx_buf_free(&saved);
    fx_buf_free(&json);
    return check_finish("test_dmf");
}
