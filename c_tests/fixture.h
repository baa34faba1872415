/* Test fixtures: DPM files written byte by byte, and the expected poses and skinned vertices
 * computed independently of ossa (in double precision, from the values written to the file).
 *
 * Matrices are 3x4 row-major acting on column vectors, as in DPM and ossa_mat3x4:
 * x' = m[0]x + m[1]y + m[2]z + m[3], y' = m[4].. + m[7], z' = m[8].. + m[11]. */
#ifndef OSSA_C_TESTS_FIXTURE_H
#define OSSA_C_TESTS_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#define FX_MAX_INFLUENCES 8
#define FX_LAYOUT_MAX 8 /* meshes and frames whose offsets fx_layout records */

/* ---- growing byte buffer with big-endian writers ---- */

typedef struct fx_buf {
    uint8_t *data;
    size_t size, cap;
} fx_buf;

void fx_buf_free(fx_buf *b);
void fx_put_bytes(fx_buf *b, const void *p, size_t n);
void fx_put_u32(fx_buf *b, uint32_t v);
void fx_put_i32(fx_buf *b, int32_t v);
void fx_put_f32(fx_buf *b, float v);
void fx_put_name(fx_buf *b, const char *s, size_t field); /* up to `field` bytes, NUL-padded */
void fx_set_u32(uint8_t *p, uint32_t v);                 /* overwrite in place, big-endian */
void fx_set_f32(uint8_t *p, float v);
uint32_t fx_get_u32(const uint8_t *p);
/* An ossa_write_fn for ossa_save: appends what it is given to the fx_buf `user`; returns OSSA_OK. */
uint32_t fx_collect(void *user, const uint8_t *data, size_t size);

/* ---- model description ---- */

typedef struct fx_influence {
    uint32_t bone;
    float influence;
    float origin[3]; /* pre-weighted, in the bone's frame-0 model space, as DPM stores it */
    float normal[3];
} fx_influence;

typedef struct fx_vertex {
    uint32_t count;
    fx_influence inf[FX_MAX_INFLUENCES];
    float st[2];
    double bind_pos[3]; /* the position the vertex was made from */
} fx_vertex;

typedef struct fx_mesh {
    char shader[33];
    uint32_t vertex_count, triangle_count;
    fx_vertex *verts;
    uint32_t *indices;
    uint32_t *groupids;
} fx_mesh;

typedef struct fx_bone {
    char name[33]; /* 32 characters fill the file's field with no terminator */
    int32_t parent;
    uint32_t flags;
} fx_bone;

typedef struct fx_frame {
    char name[33];
    float mins[3], maxs[3], yaw_radius, radius;
    float *local; /* bone_count * 12 floats, parent-relative, exactly as written */
} fx_frame;

typedef struct fx_model {
    uint32_t bone_count, mesh_count, frame_count;
    fx_bone *bones;
    fx_mesh *meshes;
    fx_frame *frames;
    float mins[3], maxs[3], yaw_radius, radius; /* header values */
} fx_model;

/* Where fx_write_dpm put things, so tests can corrupt single fields. */
typedef struct fx_layout {
    uint32_t ofs_bones, ofs_meshes, ofs_frames;
    uint32_t ofs_verts[FX_LAYOUT_MAX], ofs_texcoords[FX_LAYOUT_MAX];
    uint32_t ofs_indices[FX_LAYOUT_MAX], ofs_groupids[FX_LAYOUT_MAX];
    uint32_t ofs_poses[FX_LAYOUT_MAX];
} fx_layout;

/* DPM field offsets inside the structures (FORMATS.md 2.1). */
enum {
    FX_HEADER_SIZE = 80,
    FX_BONE_SIZE = 40,
    FX_MESH_SIZE = 56,
    FX_FRAME_SIZE = 68,
    FX_BONEVERT_SIZE = 32,
    FX_POSE_SIZE = 48,
    FX_HDR_TYPE = 16,
    FX_HDR_FILESIZE = 20,
    FX_HDR_NUM_BONES = 56,
    FX_HDR_NUM_MESHES = 60,
    FX_HDR_NUM_FRAMES = 64,
    FX_HDR_OFS_BONES = 68,
    FX_HDR_OFS_MESHES = 72,
    FX_HDR_OFS_FRAMES = 76,
    FX_BONE_PARENT = 32,
    FX_MESH_NUM_VERTS = 32,
    FX_MESH_NUM_TRIS = 36,
    FX_FRAME_OFS_POSES = 64,
    FX_BONEVERT_INFLUENCE = 12,
    FX_BONEVERT_NORMAL = 16,
    FX_BONEVERT_BONE = 28
};

void fx_model_alloc(fx_model *m, uint32_t bone_count, uint32_t mesh_count, uint32_t frame_count);
void fx_mesh_alloc(fx_mesh *mesh, const char *shader, uint32_t vertex_count, uint32_t triangle_count);
void fx_model_free(fx_model *m);

/* Local pose of `bone` in `frame`: rotation by `angle` radians about axis (ax, ay, az), then translation. */
void fx_set_local(fx_model *m, uint32_t frame, uint32_t bone, double ax, double ay, double az, double angle,
                  double tx, double ty, double tz);

/* Make the stored influences of a vertex at bind position `pos` with normal `nrm` from `count` bones and
   weights, against frame 0 (whose local poses must be set). */
void fx_bind_vertex(const fx_model *m, fx_vertex *v, const double pos[3], const double nrm[3], uint32_t count,
                    const uint32_t *bones, const float *weights, float s, float t);

/* Header and per-frame bounds from the expected skinned vertices of each frame. */
void fx_compute_bounds(fx_model *m);

/* The hand-made model: 4 bones (root -> spine -> head chain, plus a parentless attachment tag),
   2 meshes (6 vertices with 1, 2 and 3 influences; 3 vertices on the tag), 3 frames. */
void fx_make_small(fx_model *m);
/* A generated model: 12 bones, 4 frames, meshes of `vertex_count` and vertex_count / 2 vertices with
   1 to 4 influences each. */
void fx_make_big(fx_model *m, uint32_t vertex_count, uint32_t seed);

void fx_write_dpm(const fx_model *m, fx_buf *out, fx_layout *layout /* may be NULL */);
/* Byte offset of influence `k` of vertex `v` of mesh `mesh` in a file written with `layout`. */
size_t fx_influence_offset(const fx_model *m, const fx_layout *layout, uint32_t mesh, uint32_t v, uint32_t k);

/* ---- expected values (double precision) ---- */

void fx_m34_identity(double out[12]);
void fx_m34_mul(const double a[12], const double b[12], double out[12]); /* a * b */
void fx_m34_from_axis_angle(double out[12], double ax, double ay, double az, double angle, double tx,
                            double ty, double tz);
void fx_quat_from_m34(const double m[12], double q[4]); /* (x, y, z, w) */
void fx_m34_from_quat(const double q[4], const double t[3], double out[12]);

/* Parent-relative poses of one frame, as written (bone_count * 12). */
void fx_frame_local(const fx_model *m, uint32_t frame, double *local);
/* Weighted blend of frames: hemisphere-aligned normalised quaternion sum, translations lerped. */
void fx_blend_local(const fx_model *m, const uint32_t *frames, const double *weights, size_t count,
                    double *local);
/* Model-space poses: parents concatenated in index order, `root` (NULL = identity) for parentless bones. */
void fx_concat(const fx_model *m, const double *local, const double *root, double *bones);
/* p = sum_k (R_k o_k + f_k t_k), n = sum_k R_k n_k with model-space `bones` (bone_count * 12). */
void fx_skin_vertex(const fx_vertex *v, const double *bones, double p[3], double n[3]);

/* ---- files ---- */

/* A fresh directory under $TMPDIR (or /tmp); `out` receives its path. Returns 0 on success. */
int fx_make_temp_dir(char *out, size_t cap);
/* Remove the regular files in `dir`, then `dir` itself. */
void fx_remove_temp_dir(const char *dir);
int fx_write_file(const char *path, const void *data, size_t size);
int fx_read_file(const char *path, fx_buf *out);
/* $OSSA_CORPUS, else ../shared/corpus (relative to the repo root, where run.sh starts the tests). */
const char *fx_corpus_dir(void);

#endif
