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
 * dp_bound_relative and dp_bound_blends (x86-64 with AVX2 and FMA) give the benchmark two parts
 * of a lower bound for any exact palette skinning, each alone and vectorised: `pose * inverse
 * bind` for the bones the sets use, and every distinct set's blend, in two ways, of which the
 * benchmark takes the faster (and adds ossa's own fastest transform, that of vertices sharing one
 * matrix).
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
    uint32_t *set_bones;     /* the bones the sets use, each once */
    uint32_t set_bone_count;
    /* The sets grouped by their bones for the bound's blends: list k has list_count[k] sets of
       list_bones[k] (list_size[k] bones, ascending) whose weights, in the bones' order, follow
       one another from list_weights + list_weight_at[k] and whose blends go to consecutive
       palette entries from list_first[k]. */
    uint32_t list_count_total, *list_size, *list_count, *list_first, *list_weight_at, *list_bones;
    float *list_weights;
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

void dp_skin_free(dp_skin_model *m);

/* A set's bones in ascending order, and its weights in that order. */
static void sorted_members(const dp_skin_model *m, uint32_t set, uint32_t *bones, float *weights)
{
    const dp_member *x = m->members + m->blends[set].first;
    uint32_t n = m->blends[set].count;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t j = k;
        while (j > 0 && bones[j - 1] > x[k].bone) {
            bones[j] = bones[j - 1];
            weights[j] = weights[j - 1];
            j--;
        }
        bones[j] = x[k].bone;
        weights[j] = x[k].weight;
    }
}

/* Fills the lists: sets of equal bones (in any order) together; lists of several sets first,
   each part in order of size so that the bound's dispatch on a list's size repeats. Quadratic in the sets: fine for a
   benchmark's preparation. Returns 0 when out of memory. */
static int group_sets(dp_skin_model *m, uint32_t member_count)
{
    uint32_t n = m->blend_count;
    m->list_size = malloc(sizeof(uint32_t) * (n + 1));
    m->list_count = malloc(sizeof(uint32_t) * (n + 1));
    m->list_first = malloc(sizeof(uint32_t) * (n + 1));
    m->list_weight_at = malloc(sizeof(uint32_t) * (n + 1));
    m->list_bones = malloc(sizeof(uint32_t) * (member_count + 1));
    m->list_weights = malloc(sizeof(float) * (member_count + 1));
    uint32_t *ab = malloc(sizeof(uint32_t) * (member_count + 1));
    float *aw = malloc(sizeof(float) * (member_count + 1));
    unsigned char *taken = calloc(n + 1, 1);
    int ok = m->list_size && m->list_count && m->list_first && m->list_weight_at && m->list_bones &&
             m->list_weights && ab && aw && taken;
    if (ok) {
        /* Every set's sorted bones and weights, where its members are. */
        for (uint32_t s = 0; s < n; s++)
            sorted_members(m, s, ab + m->blends[s].first, aw + m->blends[s].first);
        uint32_t lists = 0, bones_at = 0, weights_at = 0, entry = 0, max = 0;
        for (uint32_t s = 0; s < n; s++)
            max = m->blends[s].count > max ? m->blends[s].count : max;
        /* First the lists of several sets, then those of one, which blend faster apart. */
        for (uint32_t pass = 0; pass < 2; pass++)
        for (uint32_t size = 1; size <= max; size++) {
            for (uint32_t s = 0; s < n; s++) {
                if (taken[s] || m->blends[s].count != size)
                    continue;
                const uint32_t *key = ab + m->blends[s].first;
                if (pass == 0) {
                    uint32_t same = 0;
                    for (uint32_t t = s; t < n && same < 2; t++)
                        same += !taken[t] && m->blends[t].count == size &&
                                memcmp(ab + m->blends[t].first, key, sizeof(uint32_t) * size) == 0;
                    if (same < 2)
                        continue;
                }
                m->list_size[lists] = size;
                m->list_count[lists] = 0;
                m->list_first[lists] = entry;
                m->list_weight_at[lists] = weights_at;
                memcpy(m->list_bones + bones_at, key, sizeof(uint32_t) * size);
                bones_at += size;
                for (uint32_t t = s; t < n; t++) {
                    if (taken[t] || m->blends[t].count != size ||
                        memcmp(ab + m->blends[t].first, key, sizeof(uint32_t) * size) != 0)
                        continue;
                    taken[t] = 1;
                    m->list_count[lists]++;
                    entry++;
                    memcpy(m->list_weights + weights_at, aw + m->blends[t].first,
                           sizeof(float) * size);
                    weights_at += size;
                }
                lists++;
            }
        }
        m->list_count_total = lists;
    }
    free(ab);
    free(aw);
    free(taken);
    return ok;
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
    free(m->set_bones);
    free(m->list_size);
    free(m->list_count);
    free(m->list_first);
    free(m->list_weight_at);
    free(m->list_bones);
    free(m->list_weights);
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
    m->palette = calloc(12 * (bone_count + vertex_count + 1), sizeof(float));
    m->set_bones = calloc(bone_count + 1, sizeof(uint32_t));
    if (!table || !m->bind3f || !m->normal3f || !m->palette_index || !m->blends || !m->members ||
        !m->inverse_bind || !m->palette || !m->set_bones) {
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
    /* set_bones[b] marks bone b used, then the array is compacted into the list. */
    for (uint32_t k = 0; k < member_count; k++)
        m->set_bones[m->members[k].bone] = 1;
    for (uint32_t b = 0; b < bone_count; b++)
        if (m->set_bones[b])
            m->set_bones[m->set_bone_count++] = b;
    if (!group_sets(m, member_count)) {
        dp_skin_free(m);
        return NULL;
    }
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

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

static int has_avx2_fma(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

/* `bones * inverse bind` for the bones the sets use, a row at a time: each element of the
   bone's row broadcast from memory, times a row of the inverse. */
__attribute__((target("avx2,fma"))) static void bound_relative(dp_skin_model *m, const float *bones)
{
    const __m128 w = _mm_setr_ps(0, 0, 0, 1);
    for (uint32_t k = 0; k < m->set_bone_count; k++) {
        uint32_t b = m->set_bones[k];
        const float *a = bones + 12 * b, *i = m->inverse_bind + 12 * b;
        __m128 i0 = _mm_loadu_ps(i), i1 = _mm_loadu_ps(i + 4), i2 = _mm_loadu_ps(i + 8);
        for (int r = 0; r < 3; r++) {
            const float *x = a + 4 * r;
            __m128 t = _mm_mul_ps(_mm_broadcast_ss(x), i0);
            t = _mm_fmadd_ps(_mm_broadcast_ss(x + 1), i1, t);
            t = _mm_fmadd_ps(_mm_broadcast_ss(x + 2), i2, t);
            _mm_storeu_ps(m->palette + 12 * b + 4 * r, _mm_fmadd_ps(_mm_broadcast_ss(x + 3), w, t));
        }
    }
}

/* One list's blends, its K bones' matrices held in registers (eight and four lanes). */
#define BOUND_LIST(K)                                                                            \
    do {                                                                                         \
        __m256 a[K];                                                                             \
        __m128 b[K];                                                                             \
        for (int j = 0; j < K; j++) {                                                            \
            a[j] = _mm256_loadu_ps(palette + 12 * bones[j]);                                     \
            b[j] = _mm_loadu_ps(palette + 12 * bones[j] + 8);                                    \
        }                                                                                        \
        for (uint32_t s = 0; s < count; s++, w += K, out += 12) {                                \
            __m256 f = _mm256_broadcast_ss(w);                                                   \
            __m256 x = _mm256_mul_ps(f, a[0]);                                                   \
            __m128 y = _mm_mul_ps(_mm256_castps256_ps128(f), b[0]);                              \
            for (int j = 1; j < K; j++) {                                                        \
                f = _mm256_broadcast_ss(w + j);                                                  \
                x = _mm256_fmadd_ps(f, a[j], x);                                                 \
                y = _mm_fmadd_ps(_mm256_castps256_ps128(f), b[j], y);                            \
            }                                                                                    \
            _mm256_storeu_ps(out, x);                                                            \
            _mm_storeu_ps(out + 8, y);                                                           \
        }                                                                                        \
    } while (0)

/* Every set's blend as dp_skin blends it, eight and four lanes at a time. */
__attribute__((target("avx2,fma"))) static void bound_blends(dp_skin_model *m)
{
    float *palette = m->palette;
    for (uint32_t i = 0; i < m->blend_count; i++) {
        const dp_member *x = m->members + m->blends[i].first;
        const dp_member *end = x + m->blends[i].count;
        const float *s = palette + 12 * x->bone;
        __m256 f = _mm256_set1_ps(x->weight);
        __m256 a = _mm256_mul_ps(f, _mm256_loadu_ps(s));
        __m128 b = _mm_mul_ps(_mm256_castps256_ps128(f), _mm_loadu_ps(s + 8));
        for (x++; x < end; x++) {
            s = palette + 12 * x->bone;
            f = _mm256_set1_ps(x->weight);
            a = _mm256_fmadd_ps(f, _mm256_loadu_ps(s), a);
            b = _mm_fmadd_ps(_mm256_castps256_ps128(f), _mm_loadu_ps(s + 8), b);
        }
        float *out = palette + 12 * (m->bone_count + i);
        _mm256_storeu_ps(out, a);
        _mm_storeu_ps(out + 8, b);
    }
}

/* Every set's blend, a list of sets at a time: a list of several sets with its bones' matrices
   loaded once (sets with the same bones but other weights are common: xon_zombie.dpm has 449
   sets in 53 lists of bones, and they blend in about 60% of the time), a list of one as above. */
__attribute__((target("avx2,fma"))) static void bound_blends_grouped(dp_skin_model *m)
{
    float *palette = m->palette;
    const uint32_t *bones = m->list_bones;
    for (uint32_t l = 0; l < m->list_count_total; bones += m->list_size[l], l++) {
        uint32_t count = m->list_count[l], size = m->list_size[l];
        const float *w = m->list_weights + m->list_weight_at[l];
        float *out = palette + 12 * (m->bone_count + m->list_first[l]);
        if (count > 1 && size <= 8) {
            switch (size) {
            case 1: BOUND_LIST(1); continue;
            case 2: BOUND_LIST(2); continue;
            case 3: BOUND_LIST(3); continue;
            case 4: BOUND_LIST(4); continue;
            case 5: BOUND_LIST(5); continue;
            case 6: BOUND_LIST(6); continue;
            case 7: BOUND_LIST(7); continue;
            default: BOUND_LIST(8); continue;
            }
        }
        for (uint32_t s = 0; s < count; s++, out += 12) {
            const float *r = palette + 12 * bones[0];
            __m256 f = _mm256_broadcast_ss(w++);
            __m256 x = _mm256_mul_ps(f, _mm256_loadu_ps(r));
            __m128 y = _mm_mul_ps(_mm256_castps256_ps128(f), _mm_loadu_ps(r + 8));
            for (uint32_t j = 1; j < size; j++) {
                r = palette + 12 * bones[j];
                f = _mm256_broadcast_ss(w++);
                x = _mm256_fmadd_ps(f, _mm256_loadu_ps(r), x);
                y = _mm_fmadd_ps(_mm256_castps256_ps128(f), _mm_loadu_ps(r + 8), y);
            }
            _mm256_storeu_ps(out, x);
            _mm_storeu_ps(out + 8, y);
        }
    }
}

/* The palette's matrices of the bones the sets use, from model-space bone matrices (12 floats
   per bone); 0, doing nothing, where this CPU lacks AVX2 or FMA. */
int dp_bound_relative(dp_skin_model *m, const float *bones)
{
    if (!has_avx2_fma())
        return 0;
    bound_relative(m, bones);
    return 1;
}

/* Every set's blend into the palette, from the bones' matrices there, grouped by bones or not;
   0, doing nothing, where this CPU lacks AVX2 or FMA. */
int dp_bound_blends(dp_skin_model *m, int grouped)
{
    if (!has_avx2_fma())
        return 0;
    if (grouped)
        bound_blends_grouped(m);
    else
        bound_blends(m);
    return 1;
}
#else
int dp_bound_relative(dp_skin_model *m, const float *bones)
{
    (void)m;
    (void)bones;
    return 0;
}

int dp_bound_blends(dp_skin_model *m, int grouped)
{
    (void)m;
    (void)grouped;
    return 0;
}
#endif
