/* The timing reference ossa's skinning is held to: DarkPlaces' default CPU skinning
 * (Mod_Skeletal_AnimateVertices_SSE, used wherever the CPU has SSE), written from its
 * description, on ossa's influences. The benchmark builds it with DarkPlaces' release flags
 * (-O3 -fno-math-errno -fno-trapping-math; SSE2 is x86-64's baseline) and again with
 * -march=native added.
 *
 * At preparation, as DarkPlaces does when it loads a DPM:
 *   - all meshes of the model are one vertex array;
 *   - a vertex's bind position is the plain sum over all its influences of the bind pose applied
 *     to (origin, weight), and its bind normal the plain sum of the bind pose's rotation applied
 *     to the influences' normals (not normalised);
 *   - its 4 strongest influences are kept (ties: the earlier one), their weights scaled to bytes
 *     summing to 255: truncated after scaling by 255 / their sum, then taken from or given to the
 *     influences one at a time, in order, until the sum is 255 (Mod_Skeletal_CompressBlend);
 *   - a vertex whose second kept byte weight is 0 follows its strongest bone alone (blend index =
 *     the bone); any other vertex gets bone count + the index of its unique (4 bones, 4 byte
 *     weights) set (Mod_Skeletal_AddBlend), stored in 16 bits as DarkPlaces stores it (32 where
 *     more than 65,536 matrices are needed).
 * Per call: `pose * inverse bind` for every bone into an aligned column-major 4x4, one blended
 * matrix per unique set (its weights / 255, stopping at the first zero weight after the first),
 * then per vertex the 4 aligned columns of its matrix, and its position and normal transformed by
 * broadcasting each coordinate with a shuffle (the normal by the 3x3 part; no normalisation, as
 * in DarkPlaces). Each vertex is loaded and stored 16 bytes at a time, the 4th float the next
 * vertex's; the last vertex is transformed with scalars so that nothing is read or written past
 * the arrays.
 *
 * The exact palette (`exact` = 1) is the same kernel with every influence and its float weight:
 * one matrix per unique set of all (bone, float weight) pairs, and the bind point the influences'
 * common point (the plain sum divided by the sum of the weights, as dp_skin.c explains), so that
 * it matches ossa's own skinning; that is the same work ossa does.
 *
 * Build: cc -O3 -fno-math-errno -fno-trapping-math -shared -fPIC dp_sse.c -o dp_sse.so (the
 * benchmark does it at run time). Elsewhere than x86-64 with SSE2, dps_prepare returns NULL. */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* One influence as ossa lays it out: origin[3], weight, normal[3], bone. */
typedef struct {
    float origin[3];
    float weight;
    float normal[3];
    uint32_t bone;
} dps_influence;

#if defined(__x86_64__) && defined(__SSE2__)
#include <xmmintrin.h>

typedef struct {
    uint32_t first, count; /* members[first .. first + count) */
} dps_set;

typedef struct {
    uint32_t vertex_count, bone_count, set_count, wide;
    float *vertex3f;      /* bind positions, 3 per vertex */
    float *normal3f;      /* bind normals, 3 per vertex */
    uint16_t *blends16;   /* per vertex: a bone, or bone_count + set (when it fits) */
    uint32_t *blends32;   /* the same, where it does not */
    dps_set *sets;
    uint32_t *member_bone;
    float *member_weight; /* byte weight / 255, or the float weight */
    float *inverse_bind;  /* 12 per bone, row-major 3x4 */
    float *matrices;      /* 16 per bone, then 16 per set, column-major, 16-byte aligned */
} dps_model;

void dps_free(dps_model *m)
{
    if (!m)
        return;
    free(m->vertex3f);
    free(m->normal3f);
    free(m->blends16);
    free(m->blends32);
    free(m->sets);
    free(m->member_bone);
    free(m->member_weight);
    free(m->inverse_bind);
    free(m->matrices);
    free(m);
}

/* Open addressing over the sets seen so far: (bones, weights) hashed as bits. */
static uint32_t hash_set(const uint32_t *bones, const float *weights, uint32_t n)
{
    uint32_t h = 2166136261u;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t w;
        memcpy(&w, &weights[k], 4);
        h = (h ^ bones[k]) * 16777619u;
        h = (h ^ w) * 16777619u;
    }
    return h;
}

static int same_set(const dps_model *m, uint32_t set, const uint32_t *bones, const float *weights,
                    uint32_t n)
{
    const dps_set *s = &m->sets[set];
    if (s->count != n)
        return 0;
    return memcmp(m->member_bone + s->first, bones, 4 * n) == 0 &&
           memcmp(m->member_weight + s->first, weights, 4 * n) == 0;
}

/* The 4 strongest of `n` influences (ties keep the earlier), as byte weights summing to 255
   turned back into floats (byte / 255); returns how many are kept, trailing zero bytes dropped
   except the first. */
static uint32_t strongest_four(const dps_influence *in, uint32_t n, uint32_t *bones, float *weights)
{
    uint32_t index[4] = {0, 0, 0, 0};
    float influence[4] = {0, 0, 0, 0};
    for (uint32_t k = 0; k < n; k++) {
        float w = in[k].weight;
        for (int l = 0; l < 4; l++) {
            if (w > influence[l]) {
                for (int j = 3; j > l; j--) {
                    index[j] = index[j - 1];
                    influence[j] = influence[j - 1];
                }
                index[l] = in[k].bone;
                influence[l] = w;
                break;
            }
        }
    }
    float sum = influence[0] + influence[1] + influence[2] + influence[3];
    float scale = sum > 0 ? 255.0f / sum : 0;
    unsigned bytes[4];
    int total = 0;
    for (int l = 0; l < 4; l++) {
        bytes[l] = (unsigned)(unsigned char)(influence[l] * scale);
        total += (int)bytes[l];
    }
    while (total > 255)
        for (int l = 0; l < 4 && total > 255; l++)
            if (bytes[l] > 0) {
                bytes[l]--;
                total--;
            }
    while (total < 255)
        for (int l = 0; l < 4 && total < 255; l++)
            if (bytes[l] < 255) {
                bytes[l]++;
                total++;
            }
    uint32_t kept = 1;
    bones[0] = index[0];
    weights[0] = (float)bytes[0] * (1.0f / 255.0f);
    while (kept < 4 && bytes[kept]) {
        bones[kept] = index[kept];
        weights[kept] = (float)bytes[kept] * (1.0f / 255.0f);
        kept++;
    }
    return kept;
}

/* Prepares a whole model: `vertex_count` vertices of all meshes one after another, vertex v's
   influences at influences[starts[v] .. starts[v + 1]); `bind` and `inverse_bind` hold 12 floats
   (row-major 3x4) per bone. `exact`: every influence and its float weight, else DarkPlaces' 4
   byte weights. NULL when a vertex has no influence or a zero weight sum, or out of memory. */
dps_model *dps_prepare(uint32_t vertex_count, const uint32_t *starts, const dps_influence *influences,
                       uint32_t bone_count, const float *bind, const float *inverse_bind, int exact)
{
    dps_model *m = calloc(1, sizeof(dps_model));
    if (!m)
        return NULL;
    uint32_t member_capacity = 0;
    for (uint32_t v = 0; v < vertex_count; v++) {
        uint32_t n = starts[v + 1] - starts[v];
        member_capacity += exact ? n : (n < 4 ? n : 4);
    }
    uint32_t slots = 1;
    while (slots < 2 * vertex_count + 2)
        slots *= 2;
    uint32_t *table = malloc(sizeof(uint32_t) * slots);
    uint32_t *bones = malloc(sizeof(uint32_t) * (member_capacity + 4));
    float *weights = malloc(sizeof(float) * (member_capacity + 4));
    m->vertex_count = vertex_count;
    m->bone_count = bone_count;
    /* One float more than the vertices take, so that the 16-byte loads of the next-to-last vertex
       stay inside. */
    m->vertex3f = malloc(sizeof(float) * (3 * (size_t)vertex_count + 1));
    m->normal3f = malloc(sizeof(float) * (3 * (size_t)vertex_count + 1));
    m->blends32 = malloc(sizeof(uint32_t) * ((size_t)vertex_count + 1));
    m->sets = malloc(sizeof(dps_set) * ((size_t)vertex_count + 1));
    m->member_bone = malloc(sizeof(uint32_t) * (member_capacity + 1));
    m->member_weight = malloc(sizeof(float) * (member_capacity + 1));
    m->inverse_bind = malloc(sizeof(float) * (12 * (size_t)bone_count + 1));
    if (!table || !bones || !weights || !m->vertex3f || !m->normal3f || !m->blends32 || !m->sets ||
        !m->member_bone || !m->member_weight || !m->inverse_bind)
        goto fail;
    memset(table, 0xff, sizeof(uint32_t) * slots);
    memcpy(m->inverse_bind, inverse_bind, sizeof(float) * 12 * bone_count);
    m->vertex3f[3 * (size_t)vertex_count] = 0;
    m->normal3f[3 * (size_t)vertex_count] = 0;

    uint32_t member_count = 0;
    for (uint32_t v = 0; v < vertex_count; v++) {
        const dps_influence *in = influences + starts[v];
        uint32_t n = starts[v + 1] - starts[v];
        float p[3] = {0, 0, 0}, q[3] = {0, 0, 0}, sum = 0;
        for (uint32_t k = 0; k < n; k++) {
            const float *b = bind + 12 * in[k].bone;
            const float *o = in[k].origin, *r = in[k].normal;
            for (int a = 0; a < 3; a++) {
                p[a] += b[4 * a] * o[0] + b[4 * a + 1] * o[1] + b[4 * a + 2] * o[2] +
                        b[4 * a + 3] * in[k].weight;
                q[a] += b[4 * a] * r[0] + b[4 * a + 1] * r[1] + b[4 * a + 2] * r[2];
            }
            sum += in[k].weight;
        }
        if (n == 0 || sum == 0)
            goto fail;
        float divide = exact ? sum : 1.0f;
        for (int a = 0; a < 3; a++) {
            m->vertex3f[3 * v + a] = p[a] / divide;
            m->normal3f[3 * v + a] = q[a] / divide;
        }
        uint32_t *sb = bones, kept;
        float *sw = weights;
        if (exact) {
            kept = n;
            for (uint32_t k = 0; k < n; k++) {
                sb[k] = in[k].bone;
                sw[k] = in[k].weight;
            }
            if (n == 1 && in[0].weight == 1.0f) {
                m->blends32[v] = in[0].bone;
                continue;
            }
        } else {
            kept = strongest_four(in, n, sb, sw);
            if (kept == 1) {
                m->blends32[v] = sb[0];
                continue;
            }
        }
        uint32_t h = hash_set(sb, sw, kept) & (slots - 1);
        while (table[h] != UINT32_MAX && !same_set(m, table[h], sb, sw, kept))
            h = (h + 1) & (slots - 1);
        if (table[h] == UINT32_MAX) {
            dps_set *s = &m->sets[m->set_count];
            s->first = member_count;
            s->count = kept;
            memcpy(m->member_bone + member_count, sb, 4 * kept);
            memcpy(m->member_weight + member_count, sw, 4 * kept);
            member_count += kept;
            table[h] = m->set_count++;
        }
        m->blends32[v] = bone_count + table[h];
    }
    free(table);
    free(bones);
    free(weights);
    table = NULL;
    bones = NULL;
    weights = NULL;
    size_t matrices = (size_t)bone_count + m->set_count;
    m->matrices = aligned_alloc(16, sizeof(float) * 16 * (matrices + 1));
    if (!m->matrices)
        goto fail;
    if (matrices <= 65536) {
        m->blends16 = malloc(sizeof(uint16_t) * ((size_t)vertex_count + 1));
        if (!m->blends16)
            goto fail;
        for (uint32_t v = 0; v < vertex_count; v++)
            m->blends16[v] = (uint16_t)m->blends32[v];
        free(m->blends32);
        m->blends32 = NULL;
    } else {
        m->wide = 1;
    }
    return m;
fail:
    free(table);
    free(bones);
    free(weights);
    dps_free(m);
    return NULL;
}

/* Unique sets the model's palette blends per call. */
uint32_t dps_set_count(const dps_model *m)
{
    return m->set_count;
}

/* The column-major 4x4 of `pose * inverse bind` (both row-major 3x4). */
static void relative(const float *a, const float *b, float *out)
{
    for (int r = 0; r < 3; r++) {
        const float *x = a + 4 * r;
        for (int c = 0; c < 4; c++)
            out[4 * c + r] = x[0] * b[c] + x[1] * b[4 + c] + x[2] * b[8 + c];
        out[12 + r] += x[3];
    }
    out[3] = out[7] = out[11] = 0;
    out[15] = 1;
}

#define DPS_TRANSFORM(INDEX)                                                                      \
    do {                                                                                          \
        const float *v = m->vertex3f, *n = m->normal3f;                                           \
        const INDEX *b = blends;                                                                  \
        uint32_t last = m->vertex_count - 1;                                                      \
        for (uint32_t i = 0; i < last; i++, v += 3, n += 3, b++, vertex3f += 3, normal3f += 3) { \
            const float *x = matrices + 16 * (size_t)*b;                                          \
            __m128 c0 = _mm_load_ps(x), c1 = _mm_load_ps(x + 4);                                  \
            __m128 c2 = _mm_load_ps(x + 8), c3 = _mm_load_ps(x + 12);                             \
            __m128 p = _mm_loadu_ps(v);                                                           \
            __m128 t = _mm_add_ps(_mm_mul_ps(_mm_shuffle_ps(p, p, 0x00), c0),                     \
                                  _mm_mul_ps(_mm_shuffle_ps(p, p, 0x55), c1));                    \
            t = _mm_add_ps(t, _mm_mul_ps(_mm_shuffle_ps(p, p, 0xaa), c2));                        \
            _mm_storeu_ps(vertex3f, _mm_add_ps(t, c3));                                           \
            __m128 q = _mm_loadu_ps(n);                                                           \
            __m128 u = _mm_add_ps(_mm_mul_ps(_mm_shuffle_ps(q, q, 0x00), c0),                     \
                                  _mm_mul_ps(_mm_shuffle_ps(q, q, 0x55), c1));                    \
            u = _mm_add_ps(u, _mm_mul_ps(_mm_shuffle_ps(q, q, 0xaa), c2));                        \
            _mm_storeu_ps(normal3f, u);                                                           \
        }                                                                                         \
        const float *x = matrices + 16 * (size_t)*b;                                              \
        for (int a = 0; a < 3; a++) {                                                             \
            vertex3f[a] = v[0] * x[a] + v[1] * x[4 + a] + v[2] * x[8 + a] + x[12 + a];            \
            normal3f[a] = n[0] * x[a] + n[1] * x[4 + a] + n[2] * x[8 + a];                        \
        }                                                                                         \
    } while (0)

/* Skins every vertex with model-space bone matrices (12 floats per bone, row-major 3x4) into
   packed positions and normals (3 floats per vertex each). */
void dps_skin(dps_model *m, const float *bones, float *vertex3f, float *normal3f)
{
    float *matrices = m->matrices;
    for (uint32_t b = 0; b < m->bone_count; b++)
        relative(bones + 12 * b, m->inverse_bind + 12 * b, matrices + 16 * (size_t)b);

    for (uint32_t i = 0; i < m->set_count; i++) {
        const dps_set *s = &m->sets[i];
        const uint32_t *bone = m->member_bone + s->first;
        const float *weight = m->member_weight + s->first;
        const float *x = matrices + 16 * (size_t)bone[0];
        __m128 f = _mm_set1_ps(weight[0]);
        __m128 c0 = _mm_mul_ps(_mm_load_ps(x), f), c1 = _mm_mul_ps(_mm_load_ps(x + 4), f);
        __m128 c2 = _mm_mul_ps(_mm_load_ps(x + 8), f), c3 = _mm_mul_ps(_mm_load_ps(x + 12), f);
        for (uint32_t k = 1; k < s->count; k++) {
            x = matrices + 16 * (size_t)bone[k];
            f = _mm_set1_ps(weight[k]);
            c0 = _mm_add_ps(_mm_mul_ps(_mm_load_ps(x), f), c0);
            c1 = _mm_add_ps(_mm_mul_ps(_mm_load_ps(x + 4), f), c1);
            c2 = _mm_add_ps(_mm_mul_ps(_mm_load_ps(x + 8), f), c2);
            c3 = _mm_add_ps(_mm_mul_ps(_mm_load_ps(x + 12), f), c3);
        }
        float *out = matrices + 16 * ((size_t)m->bone_count + i);
        _mm_store_ps(out, c0);
        _mm_store_ps(out + 4, c1);
        _mm_store_ps(out + 8, c2);
        _mm_store_ps(out + 12, c3);
    }

    if (m->vertex_count == 0)
        return;
    if (m->wide) {
        const uint32_t *blends = m->blends32;
        DPS_TRANSFORM(uint32_t);
    } else {
        const uint16_t *blends = m->blends16;
        DPS_TRANSFORM(uint16_t);
    }
}
#else
typedef struct dps_model dps_model;

dps_model *dps_prepare(uint32_t vertex_count, const uint32_t *starts, const dps_influence *influences,
                       uint32_t bone_count, const float *bind, const float *inverse_bind, int exact)
{
    (void)vertex_count;
    (void)starts;
    (void)influences;
    (void)bone_count;
    (void)bind;
    (void)inverse_bind;
    (void)exact;
    return NULL;
}

uint32_t dps_set_count(const dps_model *m)
{
    (void)m;
    return 0;
}

void dps_skin(dps_model *m, const float *bones, float *vertex3f, float *normal3f)
{
    (void)m;
    (void)bones;
    (void)vertex3f;
    (void)normal3f;
}

void dps_free(dps_model *m)
{
    (void)m;
}
#endif
