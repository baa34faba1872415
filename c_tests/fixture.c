/* See fixture.h. */
#define _POSIX_C_SOURCE 200809L

#include "fixture.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void *fx_xmalloc(size_t n)
{
    void *p = calloc(1, n ? n : 1);
    if (p == NULL) {
        fprintf(stderr, "fixture: out of memory (%zu bytes)\n", n);
        exit(2);
    }
    return p;
}

/* ---- byte buffer ---- */

void fx_buf_free(fx_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->size = b->cap = 0;
}

void fx_put_bytes(fx_buf *b, const void *p, size_t n)
{
    if (b->size + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->size + n)
            cap *= 2;
        b->data = realloc(b->data, cap);
        if (b->data == NULL) {
            fprintf(stderr, "fixture: out of memory\n");
            exit(2);
        }
        b->cap = cap;
    }
    if (n)
        memcpy(b->data + b->size, p, n);
    b->size += n;
}

uint32_t fx_collect(void *user, const uint8_t *data, size_t size)
{
    fx_put_bytes(user, data, size);
    return 0; /* OSSA_OK */
}

void fx_set_u32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

void fx_set_f32(uint8_t *p, float v)
{
    uint32_t u;
    memcpy(&u, &v, 4);
    fx_set_u32(p, u);
}

uint32_t fx_get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

void fx_put_u32(fx_buf *b, uint32_t v)
{
    uint8_t q[4];
    fx_set_u32(q, v);
    fx_put_bytes(b, q, 4);
}

void fx_put_i32(fx_buf *b, int32_t v)
{
    fx_put_u32(b, (uint32_t)v);
}

void fx_put_f32(fx_buf *b, float v)
{
    uint8_t q[4];
    fx_set_f32(q, v);
    fx_put_bytes(b, q, 4);
}

void fx_put_name(fx_buf *b, const char *s, size_t field)
{
    uint8_t pad[64];
    size_t n = strlen(s);
    if (n > field)
        n = field;
    memset(pad, 0, sizeof pad);
    fx_put_bytes(b, s, n);
    fx_put_bytes(b, pad, field - n);
}

/* ---- matrices and quaternions ---- */

void fx_m34_identity(double out[12])
{
    memset(out, 0, 12 * sizeof *out);
    out[0] = out[5] = out[10] = 1.0;
}

void fx_m34_mul(const double a[12], const double b[12], double out[12])
{
    double r[12];
    int i, j;
    for (i = 0; i < 3; i++) {
        for (j = 0; j < 4; j++)
            r[4 * i + j] = a[4 * i] * b[j] + a[4 * i + 1] * b[4 + j] + a[4 * i + 2] * b[8 + j];
        r[4 * i + 3] += a[4 * i + 3];
    }
    memcpy(out, r, sizeof r);
}

void fx_m34_from_axis_angle(double out[12], double ax, double ay, double az, double angle, double tx,
                            double ty, double tz)
{
    double len = sqrt(ax * ax + ay * ay + az * az);
    double x = ax / len, y = ay / len, z = az / len;
    double c = cos(angle), s = sin(angle), k = 1.0 - c;
    out[0] = c + x * x * k;
    out[1] = x * y * k - z * s;
    out[2] = x * z * k + y * s;
    out[3] = tx;
    out[4] = y * x * k + z * s;
    out[5] = c + y * y * k;
    out[6] = y * z * k - x * s;
    out[7] = ty;
    out[8] = z * x * k - y * s;
    out[9] = z * y * k + x * s;
    out[10] = c + z * z * k;
    out[11] = tz;
}

void fx_quat_from_m34(const double m[12], double q[4])
{
    double tr = m[0] + m[5] + m[10], s;
    if (tr > 0) {
        s = sqrt(tr + 1.0) * 2;
        q[3] = 0.25 * s;
        q[0] = (m[9] - m[6]) / s;
        q[1] = (m[2] - m[8]) / s;
        q[2] = (m[4] - m[1]) / s;
    } else if (m[0] > m[5] && m[0] > m[10]) {
        s = sqrt(1.0 + m[0] - m[5] - m[10]) * 2;
        q[3] = (m[9] - m[6]) / s;
        q[0] = 0.25 * s;
        q[1] = (m[1] + m[4]) / s;
        q[2] = (m[2] + m[8]) / s;
    } else if (m[5] > m[10]) {
        s = sqrt(1.0 + m[5] - m[0] - m[10]) * 2;
        q[3] = (m[2] - m[8]) / s;
        q[0] = (m[1] + m[4]) / s;
        q[1] = 0.25 * s;
        q[2] = (m[6] + m[9]) / s;
    } else {
        s = sqrt(1.0 + m[10] - m[0] - m[5]) * 2;
        q[3] = (m[4] - m[1]) / s;
        q[0] = (m[2] + m[8]) / s;
        q[1] = (m[6] + m[9]) / s;
        q[2] = 0.25 * s;
    }
}

void fx_m34_from_quat(const double q[4], const double t[3], double out[12])
{
    double x = q[0], y = q[1], z = q[2], w = q[3];
    out[0] = 1 - 2 * (y * y + z * z);
    out[1] = 2 * (x * y - z * w);
    out[2] = 2 * (x * z + y * w);
    out[3] = t[0];
    out[4] = 2 * (x * y + z * w);
    out[5] = 1 - 2 * (x * x + z * z);
    out[6] = 2 * (y * z - x * w);
    out[7] = t[1];
    out[8] = 2 * (x * z - y * w);
    out[9] = 2 * (y * z + x * w);
    out[10] = 1 - 2 * (x * x + y * y);
    out[11] = t[2];
}

void fx_frame_local(const fx_model *m, uint32_t frame, double *local)
{
    uint32_t i;
    for (i = 0; i < m->bone_count * 12; i++)
        local[i] = m->frames[frame].local[i];
}

void fx_blend_local(const fx_model *m, const uint32_t *frames, const double *weights, size_t count,
                    double *local)
{
    double total = 0, one[12];
    uint32_t b;
    size_t i;
    for (i = 0; i < count; i++)
        total += weights[i];
    for (b = 0; b < m->bone_count; b++) {
        double q[4] = {0, 0, 0, 0}, t[3] = {0, 0, 0}, len;
        for (i = 0; i < count; i++) {
            double qi[4], w = weights[i] / total, sign;
            int j;
            for (j = 0; j < 12; j++)
                one[j] = m->frames[frames[i]].local[12 * b + j];
            fx_quat_from_m34(one, qi);
            /* Align with what is summed so far, so the blend takes the short way round. */
            sign = q[0] * qi[0] + q[1] * qi[1] + q[2] * qi[2] + q[3] * qi[3] < 0 ? -1.0 : 1.0;
            for (j = 0; j < 4; j++)
                q[j] += sign * w * qi[j];
            t[0] += w * one[3];
            t[1] += w * one[7];
            t[2] += w * one[11];
        }
        len = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
        q[0] /= len;
        q[1] /= len;
        q[2] /= len;
        q[3] /= len;
        fx_m34_from_quat(q, t, local + 12 * b);
    }
}

void fx_concat(const fx_model *m, const double *local, const double *root, double *bones)
{
    double id[12];
    uint32_t b;
    fx_m34_identity(id);
    for (b = 0; b < m->bone_count; b++) {
        int32_t parent = m->bones[b].parent;
        const double *base = parent < 0 ? (root ? root : id) : bones + 12 * parent;
        fx_m34_mul(base, local + 12 * b, bones + 12 * b);
    }
}

void fx_skin_vertex(const fx_vertex *v, const double *bones, double p[3], double n[3])
{
    uint32_t k;
    int i;
    for (i = 0; i < 3; i++)
        p[i] = n[i] = 0;
    for (k = 0; k < v->count; k++) {
        const fx_influence *f = &v->inf[k];
        const double *a = bones + 12 * f->bone;
        for (i = 0; i < 3; i++) {
            p[i] += a[4 * i] * f->origin[0] + a[4 * i + 1] * f->origin[1] + a[4 * i + 2] * f->origin[2] +
                    (double)f->influence * a[4 * i + 3];
            n[i] += a[4 * i] * f->normal[0] + a[4 * i + 1] * f->normal[1] + a[4 * i + 2] * f->normal[2];
        }
    }
}

/* ---- model building ---- */

void fx_model_alloc(fx_model *m, uint32_t bone_count, uint32_t mesh_count, uint32_t frame_count)
{
    uint32_t f;
    memset(m, 0, sizeof *m);
    m->bone_count = bone_count;
    m->mesh_count = mesh_count;
    m->frame_count = frame_count;
    m->bones = fx_xmalloc(bone_count * sizeof *m->bones);
    m->meshes = fx_xmalloc(mesh_count * sizeof *m->meshes);
    m->frames = fx_xmalloc(frame_count * sizeof *m->frames);
    for (f = 0; f < frame_count; f++)
        m->frames[f].local = fx_xmalloc(bone_count * 12 * sizeof(float));
}

void fx_mesh_alloc(fx_mesh *mesh, const char *shader, uint32_t vertex_count, uint32_t triangle_count)
{
    snprintf(mesh->shader, sizeof mesh->shader, "%s", shader);
    mesh->vertex_count = vertex_count;
    mesh->triangle_count = triangle_count;
    mesh->verts = fx_xmalloc(vertex_count * sizeof *mesh->verts);
    mesh->indices = fx_xmalloc(triangle_count * 3 * sizeof *mesh->indices);
    mesh->groupids = fx_xmalloc(triangle_count * sizeof *mesh->groupids);
}

void fx_model_free(fx_model *m)
{
    uint32_t i;
    for (i = 0; i < m->mesh_count; i++) {
        free(m->meshes[i].verts);
        free(m->meshes[i].indices);
        free(m->meshes[i].groupids);
    }
    for (i = 0; i < m->frame_count; i++)
        free(m->frames[i].local);
    free(m->bones);
    free(m->meshes);
    free(m->frames);
    memset(m, 0, sizeof *m);
}

void fx_set_local(fx_model *m, uint32_t frame, uint32_t bone, double ax, double ay, double az, double angle,
                  double tx, double ty, double tz)
{
    double r[12];
    int i;
    fx_m34_from_axis_angle(r, ax, ay, az, angle, tx, ty, tz);
    for (i = 0; i < 12; i++)
        m->frames[frame].local[12 * bone + i] = (float)r[i];
}

void fx_bind_vertex(const fx_model *m, fx_vertex *v, const double pos[3], const double nrm[3], uint32_t count,
                    const uint32_t *bones, const float *weights, float s, float t)
{
    double *local = fx_xmalloc(m->bone_count * 12 * sizeof(double));
    double *abs = fx_xmalloc(m->bone_count * 12 * sizeof(double));
    uint32_t k;
    int i;
    fx_frame_local(m, 0, local);
    fx_concat(m, local, NULL, abs);
    memset(v, 0, sizeof *v);
    v->count = count;
    v->st[0] = s;
    v->st[1] = t;
    for (i = 0; i < 3; i++)
        v->bind_pos[i] = pos[i];
    for (k = 0; k < count; k++) {
        const double *a = abs + 12 * bones[k];
        double d[3];
        v->inf[k].bone = bones[k];
        v->inf[k].influence = weights[k];
        for (i = 0; i < 3; i++)
            d[i] = pos[i] - a[4 * i + 3];
        /* The inverse of a rigid [R|t] is [R^T | -R^T t]; origin and normal are pre-weighted. */
        for (i = 0; i < 3; i++) {
            v->inf[k].origin[i] = (float)(weights[k] * (a[i] * d[0] + a[4 + i] * d[1] + a[8 + i] * d[2]));
            v->inf[k].normal[i] = (float)(weights[k] * (a[i] * nrm[0] + a[4 + i] * nrm[1] + a[8 + i] * nrm[2]));
        }
    }
    free(local);
    free(abs);
}

void fx_compute_bounds(fx_model *m)
{
    double *local = fx_xmalloc(m->bone_count * 12 * sizeof(double));
    double *abs = fx_xmalloc(m->bone_count * 12 * sizeof(double));
    uint32_t f, i, v;
    int k;
    for (f = 0; f < m->frame_count; f++) {
        fx_frame *fr = &m->frames[f];
        double mins[3] = {1e30, 1e30, 1e30}, maxs[3] = {-1e30, -1e30, -1e30}, yaw = 0, rad = 0;
        fx_frame_local(m, f, local);
        fx_concat(m, local, NULL, abs);
        for (i = 0; i < m->mesh_count; i++) {
            for (v = 0; v < m->meshes[i].vertex_count; v++) {
                double p[3], n[3];
                fx_skin_vertex(&m->meshes[i].verts[v], abs, p, n);
                for (k = 0; k < 3; k++) {
                    mins[k] = p[k] < mins[k] ? p[k] : mins[k];
                    maxs[k] = p[k] > maxs[k] ? p[k] : maxs[k];
                }
                yaw = fmax(yaw, sqrt(p[0] * p[0] + p[1] * p[1]));
                rad = fmax(rad, sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]));
            }
        }
        for (k = 0; k < 3; k++) {
            fr->mins[k] = (float)mins[k];
            fr->maxs[k] = (float)maxs[k];
        }
        fr->yaw_radius = (float)yaw;
        fr->radius = (float)rad;
    }
    for (k = 0; k < 3; k++) {
        m->mins[k] = m->frames[0].mins[k];
        m->maxs[k] = m->frames[0].maxs[k];
    }
    m->yaw_radius = m->frames[0].yaw_radius;
    m->radius = m->frames[0].radius;
    free(local);
    free(abs);
}

void fx_make_small(fx_model *m)
{
    static const double deg = 3.14159265358979323846 / 180.0;
    /* Bind positions, normals, influences (bone, weight: dyadic, so sums are exactly 1). */
    static const struct {
        double pos[3], nrm[3];
        uint32_t count, bones[3];
        float weights[3];
    } body[6] = {
        {{1, 0, 0}, {1, 0, 0}, 1, {0}, {1}},
        {{0, 1, 3}, {0, 1, 0}, 1, {2}, {1}},
        {{1, 1, 2}, {0.70710678118654752, 0.70710678118654752, 0}, 2, {0, 1}, {0.5f, 0.5f}},
        {{-1, 2, 4}, {0, 0, 1}, 2, {1, 2}, {0.25f, 0.75f}},
        {{2, -1, 3}, {0.57735026918962576, -0.57735026918962576, 0.57735026918962576}, 3, {0, 1, 2},
         {0.25f, 0.25f, 0.5f}},
        {{0.5, 0.5, 5}, {0, 0.6, -0.8}, 3, {2, 1, 3}, {0.5f, 0.25f, 0.25f}},
    };
    static const uint32_t body_tris[9] = {0, 1, 2, 2, 3, 4, 3, 5, 4};
    static const double tag[3][3] = {{2, 2, 0}, {3, 2, 0}, {2, 3, 0.5}};
    uint32_t i;

    fx_model_alloc(m, 4, 2, 3);
    snprintf(m->bones[0].name, sizeof m->bones[0].name, "root");
    m->bones[0].parent = -1;
    snprintf(m->bones[1].name, sizeof m->bones[1].name, "spine");
    m->bones[1].parent = 0;
    snprintf(m->bones[2].name, sizeof m->bones[2].name, "head");
    m->bones[2].parent = 1;
    snprintf(m->bones[3].name, sizeof m->bones[3].name, "tag_weapon");
    m->bones[3].parent = -1;
    m->bones[3].flags = 1; /* DPMBONEFLAG_ATTACHMENT */

    snprintf(m->frames[0].name, sizeof m->frames[0].name, "bind");
    fx_set_local(m, 0, 0, 0, 0, 1, 0.3, 0.5, -1.0, 2.0);
    fx_set_local(m, 0, 1, 1, 0, 0, -0.4, 0, 0, 3);
    fx_set_local(m, 0, 2, 1, 1, 1, 0.6, 0.25, 0.5, 1.5);
    fx_set_local(m, 0, 3, 0, 1, 0, 1.1, 2, 2, 0);

    /* Frames 1 and 2 differ only about z for bones 0 and 1: their 50/50 blend is the halfway
       rotation.  Bone 1 turns +170 and -170 degrees: halfway the short way round is 180, which only
       a hemisphere-aligned blend gets (an unaligned sum gives 0). */
    snprintf(m->frames[1].name, sizeof m->frames[1].name, "pose_a");
    fx_set_local(m, 1, 0, 0, 0, 1, 20 * deg, 1, 0, 2);
    fx_set_local(m, 1, 1, 0, 0, 1, 170 * deg, 0, 0, 3);
    fx_set_local(m, 1, 2, 1, 0, 0, 30 * deg, 0.25, 0.5, 1.5);
    fx_set_local(m, 1, 3, 0, 1, 0, 0.5, 2, 1, 0);
    snprintf(m->frames[2].name, sizeof m->frames[2].name, "pose_b");
    fx_set_local(m, 2, 0, 0, 0, 1, 80 * deg, 0, 2, 4);
    fx_set_local(m, 2, 1, 0, 0, 1, -170 * deg, 0, 1, 3);
    fx_set_local(m, 2, 2, 0, 1, 0, 40 * deg, 0.5, 0, 1);
    fx_set_local(m, 2, 3, 0, 0, 1, 0.7, 1, 1, 1);

    fx_mesh_alloc(&m->meshes[0], "models/test/body", 6, 3);
    for (i = 0; i < 6; i++)
        fx_bind_vertex(m, &m->meshes[0].verts[i], body[i].pos, body[i].nrm, body[i].count, body[i].bones,
                       body[i].weights, 0.125f * (float)i, 1.0f - 0.0625f * (float)i);
    memcpy(m->meshes[0].indices, body_tris, sizeof body_tris);
    for (i = 0; i < 3; i++)
        m->meshes[0].groupids[i] = 7 + i;

    fx_mesh_alloc(&m->meshes[1], "models/test/tag", 3, 1);
    for (i = 0; i < 3; i++) {
        static const double up[3] = {0, 0, 1};
        static const uint32_t bone = 3;
        static const float one = 1.0f;
        fx_bind_vertex(m, &m->meshes[1].verts[i], tag[i], up, 1, &bone, &one, 0.5f, 0.25f * (float)i);
        m->meshes[1].indices[i] = i;
    }
    m->meshes[1].groupids[0] = 42;
    fx_compute_bounds(m);
}

/* Deterministic pseudo-random numbers, so every run builds the same model. */
static uint32_t fx_rand(uint32_t *state)
{
    *state = *state * 1664525u + 1013904223u;
    return *state >> 8;
}

static double fx_randf(uint32_t *state, double lo, double hi)
{
    return lo + (hi - lo) * (double)fx_rand(state) / 16777216.0;
}

void fx_make_big(fx_model *m, uint32_t vertex_count, uint32_t seed)
{
    uint32_t s = seed, b, f, i, j, mesh;
    fx_model_alloc(m, 12, 2, 4);
    for (b = 0; b < m->bone_count; b++) {
        snprintf(m->bones[b].name, sizeof m->bones[b].name, "bone%02u", (unsigned)b);
        m->bones[b].parent = b == 0 ? -1 : (int32_t)(fx_rand(&s) % b);
    }
    for (f = 0; f < m->frame_count; f++) {
        snprintf(m->frames[f].name, sizeof m->frames[f].name, "frame%u", (unsigned)f);
        for (b = 0; b < m->bone_count; b++)
            fx_set_local(m, f, b, fx_randf(&s, -1, 1), fx_randf(&s, -1, 1), fx_randf(&s, 0.1, 1),
                         fx_randf(&s, -1.5, 1.5), fx_randf(&s, -2, 2), fx_randf(&s, -2, 2), fx_randf(&s, -2, 2));
    }
    for (mesh = 0; mesh < m->mesh_count; mesh++) {
        uint32_t n = mesh == 0 ? vertex_count : vertex_count / 2;
        fx_mesh *me = &m->meshes[mesh];
        fx_mesh_alloc(me, mesh == 0 ? "models/big/skin" : "models/big/armour", n, n - 2);
        for (i = 0; i < n; i++) {
            double pos[3], nrm[3], len;
            uint32_t count = 1 + i % 4, bones[4], parts[4], sum = 0;
            float weights[4];
            for (j = 0; j < 3; j++) {
                pos[j] = fx_randf(&s, -3, 3);
                nrm[j] = fx_randf(&s, -1, 1);
            }
            len = sqrt(nrm[0] * nrm[0] + nrm[1] * nrm[1] + nrm[2] * nrm[2]) + 1e-3;
            for (j = 0; j < 3; j++)
                nrm[j] /= len;
            for (j = 0; j < count; j++) {
                uint32_t k, again;
                do { /* distinct bones per vertex */
                    bones[j] = fx_rand(&s) % m->bone_count;
                    again = 0;
                    for (k = 0; k < j; k++)
                        again |= bones[k] == bones[j];
                } while (again);
                parts[j] = 1 + fx_rand(&s) % 8;
                sum += parts[j];
            }
            for (j = 0; j < count; j++)
                weights[j] = (float)parts[j] / (float)sum;
            fx_bind_vertex(m, &me->verts[i], pos, nrm, count, bones, weights, (float)fx_randf(&s, 0, 1),
                           (float)fx_randf(&s, 0, 1));
        }
        for (i = 0; i < n - 2; i++) {
            me->indices[3 * i] = i;
            me->indices[3 * i + 1] = i + 1 + (i & 1);
            me->indices[3 * i + 2] = i + 2 - (i & 1);
            me->groupids[i] = i % 3;
        }
    }
    fx_compute_bounds(m);
}

/* ---- DPM writer (the order of dpmodel's writemodel_dpm) ---- */

static uint32_t fx_vertex_bytes(const fx_mesh *mesh)
{
    uint32_t v, n = 0;
    for (v = 0; v < mesh->vertex_count; v++)
        n += 4 + FX_BONEVERT_SIZE * mesh->verts[v].count;
    return n;
}

void fx_write_dpm(const fx_model *m, fx_buf *out, fx_layout *layout)
{
    fx_layout lay;
    uint32_t ofs, i, v, k, b, total;
    memset(&lay, 0, sizeof lay);
    out->size = 0;

    lay.ofs_bones = FX_HEADER_SIZE;
    lay.ofs_meshes = lay.ofs_bones + m->bone_count * FX_BONE_SIZE;
    lay.ofs_frames = lay.ofs_meshes + m->mesh_count * FX_MESH_SIZE;
    ofs = lay.ofs_frames + m->frame_count * FX_FRAME_SIZE;
    {
        /* Mesh data and poses follow in order; record offsets as they are laid out. */
        uint32_t *mesh_ofs = fx_xmalloc(m->mesh_count * 4 * sizeof(uint32_t));
        uint32_t *pose_ofs = fx_xmalloc(m->frame_count * sizeof(uint32_t));
        for (i = 0; i < m->mesh_count; i++) {
            const fx_mesh *me = &m->meshes[i];
            mesh_ofs[4 * i] = ofs;
            ofs += fx_vertex_bytes(me);
            mesh_ofs[4 * i + 1] = ofs;
            ofs += me->vertex_count * 8;
            mesh_ofs[4 * i + 2] = ofs;
            ofs += me->triangle_count * 12;
            mesh_ofs[4 * i + 3] = ofs;
            ofs += me->triangle_count * 4;
            if (i < FX_LAYOUT_MAX) {
                lay.ofs_verts[i] = mesh_ofs[4 * i];
                lay.ofs_texcoords[i] = mesh_ofs[4 * i + 1];
                lay.ofs_indices[i] = mesh_ofs[4 * i + 2];
                lay.ofs_groupids[i] = mesh_ofs[4 * i + 3];
            }
        }
        for (i = 0; i < m->frame_count; i++) {
            pose_ofs[i] = ofs;
            ofs += m->bone_count * FX_POSE_SIZE;
            if (i < FX_LAYOUT_MAX)
                lay.ofs_poses[i] = pose_ofs[i];
        }
        total = ofs;

        fx_put_bytes(out, "DARKPLACESMODEL", 16); /* includes the terminating NUL */
        fx_put_u32(out, 2);
        fx_put_u32(out, total);
        for (k = 0; k < 3; k++)
            fx_put_f32(out, m->mins[k]);
        for (k = 0; k < 3; k++)
            fx_put_f32(out, m->maxs[k]);
        fx_put_f32(out, m->yaw_radius);
        fx_put_f32(out, m->radius);
        fx_put_u32(out, m->bone_count);
        fx_put_u32(out, m->mesh_count);
        fx_put_u32(out, m->frame_count);
        fx_put_u32(out, lay.ofs_bones);
        fx_put_u32(out, lay.ofs_meshes);
        fx_put_u32(out, lay.ofs_frames);

        for (b = 0; b < m->bone_count; b++) {
            fx_put_name(out, m->bones[b].name, 32);
            fx_put_i32(out, m->bones[b].parent);
            fx_put_u32(out, m->bones[b].flags);
        }
        for (i = 0; i < m->mesh_count; i++) {
            const fx_mesh *me = &m->meshes[i];
            fx_put_name(out, me->shader, 32);
            fx_put_u32(out, me->vertex_count);
            fx_put_u32(out, me->triangle_count);
            for (k = 0; k < 4; k++)
                fx_put_u32(out, mesh_ofs[4 * i + k]);
        }
        for (i = 0; i < m->frame_count; i++) {
            const fx_frame *fr = &m->frames[i];
            fx_put_name(out, fr->name, 32);
            for (k = 0; k < 3; k++)
                fx_put_f32(out, fr->mins[k]);
            for (k = 0; k < 3; k++)
                fx_put_f32(out, fr->maxs[k]);
            fx_put_f32(out, fr->yaw_radius);
            fx_put_f32(out, fr->radius);
            fx_put_u32(out, pose_ofs[i]);
        }
        for (i = 0; i < m->mesh_count; i++) {
            const fx_mesh *me = &m->meshes[i];
            for (v = 0; v < me->vertex_count; v++) {
                const fx_vertex *vx = &me->verts[v];
                fx_put_u32(out, vx->count);
                for (k = 0; k < vx->count; k++) {
                    const fx_influence *f = &vx->inf[k];
                    fx_put_f32(out, f->origin[0]);
                    fx_put_f32(out, f->origin[1]);
                    fx_put_f32(out, f->origin[2]);
                    fx_put_f32(out, f->influence);
                    fx_put_f32(out, f->normal[0]);
                    fx_put_f32(out, f->normal[1]);
                    fx_put_f32(out, f->normal[2]);
                    fx_put_u32(out, f->bone);
                }
            }
            for (v = 0; v < me->vertex_count; v++) {
                fx_put_f32(out, me->verts[v].st[0]);
                fx_put_f32(out, me->verts[v].st[1]);
            }
            for (k = 0; k < me->triangle_count * 3; k++)
                fx_put_u32(out, me->indices[k]);
            for (k = 0; k < me->triangle_count; k++)
                fx_put_u32(out, me->groupids[k]);
        }
        for (i = 0; i < m->frame_count; i++)
            for (k = 0; k < m->bone_count * 12; k++)
                fx_put_f32(out, m->frames[i].local[k]);
        free(mesh_ofs);
        free(pose_ofs);
    }
    if (out->size != total) {
        fprintf(stderr, "fixture: DPM writer laid out %u bytes but wrote %zu\n", (unsigned)total, out->size);
        exit(2);
    }
    if (layout)
        *layout = lay;
}

size_t fx_influence_offset(const fx_model *m, const fx_layout *layout, uint32_t mesh, uint32_t v, uint32_t k)
{
    size_t ofs = layout->ofs_verts[mesh];
    uint32_t i;
    for (i = 0; i < v; i++)
        ofs += 4 + FX_BONEVERT_SIZE * m->meshes[mesh].verts[i].count;
    return ofs + 4 + FX_BONEVERT_SIZE * (size_t)k;
}

/* ---- files ---- */

int fx_make_temp_dir(char *out, size_t cap)
{
    const char *base = getenv("TMPDIR");
    if (base == NULL || base[0] == '\0')
        base = "/tmp";
    if ((size_t)snprintf(out, cap, "%s/ossa_c_tests_XXXXXX", base) >= cap)
        return -1;
    return mkdtemp(out) ? 0 : -1;
}

void fx_remove_temp_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[4096];
    if (d == NULL)
        return;
    while ((e = readdir(d)) != NULL) {
        struct stat st;
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
            rmdir(path);
        else
            unlink(path);
    }
    closedir(d);
    rmdir(dir);
}

int fx_write_file(const char *path, const void *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    int ok;
    if (f == NULL)
        return -1;
    ok = fwrite(data, 1, size, f) == size;
    ok = (fclose(f) == 0) && ok;
    return ok ? 0 : -1;
}

int fx_read_file(const char *path, fx_buf *out)
{
    FILE *f = fopen(path, "rb");
    uint8_t chunk[65536];
    size_t n;
    if (f == NULL)
        return -1;
    out->size = 0;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        fx_put_bytes(out, chunk, n);
    n = (size_t)ferror(f);
    fclose(f);
    return n ? -1 : 0;
}

const char *fx_corpus_dir(void)
{
    const char *env = getenv("OSSA_CORPUS");
    return env && env[0] ? env : "../shared/corpus";
}
