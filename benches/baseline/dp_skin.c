/* The C baseline ossa's skinning is measured against: DarkPlaces' CPU skinning
 * (Mod_Skeletal_AnimateVertices_Generic), written from its description, on ossa's influences.
 *
 * At preparation, as DarkPlaces does at load: every vertex gets its bind-pose position and
 * normal, and one entry of a palette: its bone when it has a single influence of weight 1, else
 * the set of (bone, weight) pairs it has, each distinct set stored once (Mod_Skeletal_AddBlend;
 * a hash table finds repeats here where DarkPlaces searches linearly, which only speeds up the
 * preparation). Per call: one `pose * inverse bind` matrix per bone, one blended matrix per set,
 * then one 3x4 transform per vertex, stored 12 bytes at a time.
 *
 * Three departures from DarkPlaces, each so that the result is exact and comparable with ossa's:
 *   - every influence is kept (DarkPlaces keeps the strongest four);
 *   - weights stay the stored floats (DarkPlaces quantises them to bytes summing to 255);
 *   - the bind point is the influences' common point, their sum divided by the sum of their
 *     weights, so that weights that do not sum to 1 still give the stored formula
 *     (DarkPlaces skins the plain sum, which is off by the weight sum's error).
 * Build: cc -O2 -shared -fPIC dp_skin.c -o dp_skin.so (the benchmark does it at run time). */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* One influence as ossa lays it out: origin[3], weight, normal[3], bone. */
typedef struct {
    float origin[3];
    float weight;
    float normal[3];
    uint32_t bone;
} dp_influence;

typedef struct {
    uint32_t first, count; /* members[first .. first + count) */
} dp_blend;

typedef struct {
    uint32_t bone;
    float weight;
} dp_member;

typedef struct {
    uint32_t vertex_count, bone_count, blend_count;
    float *bind3f;           /* bind-pose positions, 3 per vertex */
    float *normal3f;         /* bind-pose normals, 3 per vertex */
    uint32_t *palette_index; /* per vertex: a bone (< bone_count) or bone_count + blend */
    dp_blend *blends;
    dp_member *members;
    float *inverse_bind;     /* 12 per bone */
    float *palette;          /* 12 per bone, then 12 per blend: filled per call */
} dp_skin_model;

static void transform_point(const float *m, const float *v, float w, float *out)
{
    out[0] = m[0] * v[0] + m[1] * v[1] + m[2] * v[2] + m[3] * w;
    out[1] = m[4] * v[0] + m[5] * v[1] + m[6] * v[2] + m[7] * w;
    out[2] = m[8] * v[0] + m[9] * v[1] + m[10] * v[2] + m[11] * w;
}

static void transform_vector(const float *m, const float *v, float *out)
{
    out[0] = m[0] * v[0] + m[1] * v[1] + m[2] * v[2];
    out[1] = m[4] * v[0] + m[5] * v[1] + m[6] * v[2];
    out[2] = m[8] * v[0] + m[9] * v[1] + m[10] * v[2];
}

/* a * b for 3x4 row-major affine matrices. */
static void concat(const float *a, const float *b, float *out)
{
    for (int r = 0; r < 3; r++) {
        const float *x = a + 4 * r;
        for (int c = 0; c < 4; c++)
            out[4 * r + c] = x[0] * b[c] + x[1] * b[4 + c] + x[2] * b[8 + c];
        out[4 * r + 3] += x[3];
    }
}

static uint32_t hash_set(const dp_influence *in, uint32_t n)
{
    uint32_t h = 2166136261u;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t w;
        memcpy(&w, &in[k].weight, 4);
        h = (h ^ in[k].bone) * 16777619u;
        h = (h ^ w) * 16777619u;
    }
    return h;
}

static int same_set(const dp_skin_model *m, uint32_t blend, const dp_influence *in, uint32_t n)
{
    const dp_blend *b = &m->blends[blend];
    if (b->count != n)
        return 0;
    for (uint32_t k = 0; k < n; k++) {
        const dp_member *x = &m->members[b->first + k];
        if (x->bone != in[k].bone || memcmp(&x->weight, &in[k].weight, 4) != 0)
            return 0;
    }
    return 1;
}

void dp_skin_free(dp_skin_model *m)
{
    if (!m)
        return;
    free(m->bind3f);
    free(m->normal3f);
    free(m->palette_index);
    free(m->blends);
    free(m->members);
    free(m->inverse_bind);
    free(m->palette);
    free(m);
}

/* influence_start has vertex_count + 1 entries; bind_pose and inverse_bind 12 floats per bone.
   Returns NULL when out of memory or when a vertex's weights sum to 0. */
dp_skin_model *dp_skin_prepare(uint32_t vertex_count, const uint32_t *influence_start,
                               const dp_influence *influences, uint32_t bone_count,
                               const float *bind_pose, const float *inverse_bind)
{
    dp_skin_model *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    uint32_t total = influence_start[vertex_count];
    uint32_t slots = 1;
    while (slots < 2 * vertex_count + 2)
        slots *= 2;
    uint32_t *table = malloc(sizeof *table * slots);
    m->vertex_count = vertex_count;
    m->bone_count = bone_count;
    m->bind3f = malloc(sizeof(float) * 3 * (vertex_count + 1));
    m->normal3f = malloc(sizeof(float) * 3 * (vertex_count + 1));
    m->palette_index = malloc(sizeof(uint32_t) * (vertex_count + 1));
    m->blends = malloc(sizeof(dp_blend) * (vertex_count + 1));
    m->members = malloc(sizeof(dp_member) * (total + 1));
    m->inverse_bind = malloc(sizeof(float) * 12 * (bone_count + 1));
    m->palette = malloc(sizeof(float) * 12 * (bone_count + vertex_count + 1));
    if (!table || !m->bind3f || !m->normal3f || !m->palette_index || !m->blends || !m->members ||
        !m->inverse_bind || !m->palette) {
        free(table);
        dp_skin_free(m);
        return NULL;
    }
    memset(table, 0xff, sizeof *table * slots);
    memcpy(m->inverse_bind, inverse_bind, sizeof(float) * 12 * bone_count);

    uint32_t member_count = 0;
    for (uint32_t v = 0; v < vertex_count; v++) {
        const dp_influence *in = influences + influence_start[v];
        uint32_t n = influence_start[v + 1] - influence_start[v];
        float p[3] = {0, 0, 0}, nrm[3] = {0, 0, 0}, sum = 0;
        for (uint32_t k = 0; k < n; k++) {
            const float *b = bind_pose + 12 * in[k].bone;
            float q[3], r[3];
            transform_point(b, in[k].origin, in[k].weight, q);
            transform_vector(b, in[k].normal, r);
            for (int a = 0; a < 3; a++) {
                p[a] += q[a];
                nrm[a] += r[a];
            }
            sum += in[k].weight;
        }
        if (sum == 0) {
            free(table);
            dp_skin_free(m);
            return NULL;
        }
        for (int a = 0; a < 3; a++) {
            m->bind3f[3 * v + a] = p[a] / sum;
            m->normal3f[3 * v + a] = nrm[a] / sum;
        }
        if (n == 1 && in[0].weight == 1.0f) {
            m->palette_index[v] = in[0].bone;
            continue;
        }
        uint32_t h = hash_set(in, n) & (slots - 1);
        while (table[h] != UINT32_MAX && !same_set(m, table[h], in, n))
            h = (h + 1) & (slots - 1);
        if (table[h] == UINT32_MAX) {
            dp_blend *b = &m->blends[m->blend_count];
            b->first = member_count;
            b->count = n;
            for (uint32_t k = 0; k < n; k++) {
                m->members[member_count].bone = in[k].bone;
                m->members[member_count].weight = in[k].weight;
                member_count++;
            }
            table[h] = m->blend_count++;
        }
        m->palette_index[v] = bone_count + table[h];
    }
    free(table);
    return m;
}

/* Skins every vertex with model-space bone matrices (12 floats per bone) into packed positions
   and normals (3 floats per vertex each). */
void dp_skin(dp_skin_model *m, const float *bones, float *vertex3f, float *normal3f)
{
    float *palette = m->palette;
    for (uint32_t b = 0; b < m->bone_count; b++)
        concat(bones + 12 * b, m->inverse_bind + 12 * b, palette + 12 * b);

    /* One blended matrix per distinct set of influences. */
    for (uint32_t i = 0; i < m->blend_count; i++) {
        float *out = palette + 12 * (m->bone_count + i);
        const dp_member *x = m->members + m->blends[i].first;
        const float *s = palette + 12 * x[0].bone;
        float f = x[0].weight;
        for (int e = 0; e < 12; e++)
            out[e] = f * s[e];
        for (uint32_t k = 1; k < m->blends[i].count; k++) {
            s = palette + 12 * x[k].bone;
            f = x[k].weight;
            for (int e = 0; e < 12; e++)
                out[e] += f * s[e];
        }
    }

    /* One transform per vertex. */
    const float *v = m->bind3f, *n = m->normal3f;
    for (uint32_t i = 0; i < m->vertex_count; i++, v += 3, n += 3, vertex3f += 3, normal3f += 3) {
        const float *x = palette + 12 * m->palette_index[i];
        transform_point(x, v, 1.0f, vertex3f);
        transform_vector(x, n, normal3f);
    }
}
