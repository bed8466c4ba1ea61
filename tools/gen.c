/* gen.c - the data distributions of gen.h.
 *
 * One generator, xoshiro256** seeded through splitmix64, so a (type, dist, n,
 * seed) always gives the same bytes on every machine with IEEE floats (the
 * normal distribution also depends on libm's log/sqrt, which are the same on
 * every glibc and musl we know of).  Only the public header is used, so the
 * tests may link this file as it is.
 *
 * Choices that gen.h leaves open:
 *   normal, unsigned types   centred on 2^(bits-1) instead of 0, so the bell
 *                            stays in range (signed: N(0, 2^20), rounded)
 *   equal                    one value drawn from "uniform"
 *   few                      8 distinct values drawn from "uniform"; each appears
 *                            at least once when n >= 8
 *   bucket-killer            32-bit types: 0x3F800000 (1.0f) everywhere except 4
 *                            elements, each that value plus 1 in one byte
 *                            (0x40800000, 0x3F810000, 0x3F800100, 0x3F800001);
 *                            64-bit types: 0x3FF0000000000000 (1.0) and 8 such
 *                            elements.  The odd ones sit at distinct random
 *                            positions (all of them when n is at least their
 *                            count).
 *   special                  every special value at least once when n allows,
 *                            then 1 in 4 special, the rest uniform with a random
 *                            sign (floats) or uniform over the type (integers),
 *                            shuffled.
 */
#include "gen.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *const gen_dists[] = {"uniform", "normal", "increasing", "decreasing", "equal",
                                 "few", "bucket-killer", "special", NULL};
/* the columns of a tweet-like table (cltopk query), apart from gen_dists,
 * which the tests sweep */
const char *const gen_table_dists[] = {"powerlaw", "timestamps", "codes", NULL};

/* ------------------------------------------------------------------ PRNG */

typedef struct {
    uint64_t s[4];
} rng;

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static void rng_seed(rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static uint64_t next64(rng *r)
{
    uint64_t *s = r->s;
    uint64_t out = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return out;
}

/* uniform in [0, bound), bound > 0, without modulo bias */
static uint64_t below(rng *r, uint64_t bound)
{
    uint64_t threshold = (0 - bound) % bound; /* 2^64 mod bound */
    for (;;) {
        uint64_t x = next64(r);
        if (x >= threshold)
            return x % bound;
    }
}

static double unit53(rng *r) /* [0, 1) with 53 random bits */
{
    return (double)(next64(r) >> 11) * 0x1.0p-53;
}

static float unit24(rng *r) /* [0, 1) with 24 random bits */
{
    return (float)(next64(r) >> 40) * 0x1.0p-24f;
}

/* N(0,1) by the polar method (no trigonometry) */
static double gauss(rng *r)
{
    for (;;) {
        double u = 2.0 * unit53(r) - 1.0, v = 2.0 * unit53(r) - 1.0;
        double s = u * u + v * v;
        if (s > 0.0 && s < 1.0)
            return u * sqrt(-2.0 * log(s) / s);
    }
}

/* ------------------------------------------------------- element access */

/* raw bits of element i (widened); declared in gen.h */
uint64_t gen_bits(const void *a, size_t bytes, size_t i)
{
    if (bytes == 4) {
        uint32_t x;
        memcpy(&x, (const char *)a + i * 4, 4);
        return x;
    }
    uint64_t x;
    memcpy(&x, (const char *)a + i * 8, 8);
    return x;
}

static void put_bits(void *a, size_t bytes, size_t i, uint64_t v)
{
    if (bytes == 4) {
        uint32_t x = (uint32_t)v;
        memcpy((char *)a + i * 4, &x, 4);
    } else {
        memcpy((char *)a + i * 8, &v, 8);
    }
}

static uint64_t f32_bits(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    return x;
}

static uint64_t f64_bits(double d)
{
    uint64_t x;
    memcpy(&x, &d, 8);
    return x;
}

/* one "uniform" element, as raw bits; signed_floats draws floats from (-1, 1) */
static uint64_t uniform_bits(rng *r, cltopk_dtype t, int signed_floats)
{
    switch (t) {
    case CLTOPK_FLOAT32: {
        float f = unit24(r);
        if (signed_floats && (next64(r) & 1))
            f = -f;
        return f32_bits(f);
    }
    case CLTOPK_FLOAT64: {
        double d = unit53(r);
        if (signed_floats && (next64(r) & 1))
            d = -d;
        return f64_bits(d);
    }
    case CLTOPK_INT32: case CLTOPK_UINT32:
        return next64(r) >> 32;
    default:
        return next64(r);
    }
}

static uint64_t normal_bits(rng *r, cltopk_dtype t)
{
    double z = gauss(r);
    switch (t) {
    case CLTOPK_FLOAT32: return f32_bits((float)z);
    case CLTOPK_FLOAT64: return f64_bits(z);
    default: break;
    }
    /* |z| < 40 always (the polar method cannot produce more), so z * 2^20 fits */
    int64_t v = (int64_t)llround(z * 1048576.0);
    switch (t) {
    case CLTOPK_INT32: return (uint32_t)(int32_t)v;
    case CLTOPK_UINT32: return (uint32_t)(0x80000000u + (uint32_t)v);
    case CLTOPK_INT64: return (uint64_t)v;
    default: return 0x8000000000000000ull + (uint64_t)v;
    }
}

static int cmp_u32(const void *pa, const void *pb)
{
    uint32_t a, b;
    memcpy(&a, pa, 4), memcpy(&b, pb, 4);
    return (a > b) - (a < b);
}

static int cmp_u64(const void *pa, const void *pb)
{
    uint64_t a, b;
    memcpy(&a, pa, 8), memcpy(&b, pb, 8);
    return (a > b) - (a < b);
}

/* Sort ascending.  Only for "uniform" data: floats in [0, 1) order as their
 * bits do; signed integers do once the sign bit is flipped. */
static void sort_uniform(void *a, cltopk_dtype t, size_t bytes, size_t n)
{
    uint64_t flip = t == CLTOPK_INT32 ? 0x80000000ull : t == CLTOPK_INT64 ? 1ull << 63 : 0;
    for (size_t i = 0; flip && i < n; i++)
        put_bits(a, bytes, i, gen_bits(a, bytes, i) ^ flip);
    qsort(a, n, bytes, bytes == 4 ? cmp_u32 : cmp_u64);
    for (size_t i = 0; flip && i < n; i++)
        put_bits(a, bytes, i, gen_bits(a, bytes, i) ^ flip);
}

static void reverse(void *a, size_t bytes, size_t n)
{
    for (size_t i = 0, j = n ? n - 1 : 0; i < j; i++, j--) {
        uint64_t x = gen_bits(a, bytes, i), y = gen_bits(a, bytes, j);
        put_bits(a, bytes, i, y);
        put_bits(a, bytes, j, x);
    }
}

static void shuffle(rng *r, void *a, size_t bytes, size_t n)
{
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)below(r, i);
        uint64_t x = gen_bits(a, bytes, i - 1), y = gen_bits(a, bytes, j);
        put_bits(a, bytes, i - 1, y);
        put_bits(a, bytes, j, x);
    }
}

/* -------------------------------------------------------- special values */

static const uint32_t special_f32[] = {
    0x7FC00000u, 0xFFC00000u, 0x7F800001u, 0xFF800001u, 0x7FC12345u, 0xFFA54321u, 0x7FFFFFFFu,
    0x7F800000u, 0xFF800000u, /* +-inf */
    0x00000000u, 0x80000000u, /* +-0 */
    0x00000001u, 0x80000001u, 0x007FFFFFu, 0x807FFFFFu, 0x00400000u, /* denormals */
    0x00800000u, 0x80800000u, /* +-smallest normal */
    0x7F7FFFFFu, 0xFF7FFFFFu, /* +-max */
    0x3F800000u, 0xBF800000u, /* +-1 */
};

static const uint64_t special_f64[] = {
    0x7FF8000000000000ull, 0xFFF8000000000000ull, 0x7FF0000000000001ull, 0xFFF0000000000001ull,
    0x7FF8000000012345ull, 0xFFF4000000054321ull, 0x7FFFFFFFFFFFFFFFull,
    0x7FF0000000000000ull, 0xFFF0000000000000ull,
    0x0000000000000000ull, 0x8000000000000000ull,
    0x0000000000000001ull, 0x8000000000000001ull, 0x000FFFFFFFFFFFFFull, 0x800FFFFFFFFFFFFFull,
    0x0008000000000000ull,
    0x0010000000000000ull, 0x8010000000000000ull,
    0x7FEFFFFFFFFFFFFFull, 0xFFEFFFFFFFFFFFFFull,
    0x3FF0000000000000ull, 0xBFF0000000000000ull,
};

/* integers: min, max, 0, +-1, min+1, max-1 (as raw bits of the type) */
static size_t special_int(cltopk_dtype t, uint64_t out[8])
{
    size_t n = 0;
    switch (t) {
    case CLTOPK_INT32:
        out[n++] = 0x80000000u, out[n++] = 0x7FFFFFFFu, out[n++] = 0, out[n++] = 1;
        out[n++] = 0xFFFFFFFFu, out[n++] = 0x80000001u, out[n++] = 0x7FFFFFFEu;
        break;
    case CLTOPK_UINT32:
        out[n++] = 0, out[n++] = 0xFFFFFFFFu, out[n++] = 1, out[n++] = 0xFFFFFFFEu;
        out[n++] = 0x80000000u, out[n++] = 0x7FFFFFFFu;
        break;
    case CLTOPK_INT64:
        out[n++] = 0x8000000000000000ull, out[n++] = 0x7FFFFFFFFFFFFFFFull, out[n++] = 0;
        out[n++] = 1, out[n++] = ~0ull, out[n++] = 0x8000000000000001ull;
        out[n++] = 0x7FFFFFFFFFFFFFFEull;
        break;
    default:
        out[n++] = 0, out[n++] = ~0ull, out[n++] = 1, out[n++] = ~0ull - 1;
        out[n++] = 0x8000000000000000ull, out[n++] = 0x7FFFFFFFFFFFFFFFull;
        break;
    }
    return n;
}

/* `count` distinct positions in [0, n) (count <= n), by rejection: count is tiny */
static void distinct_positions(rng *r, size_t n, size_t count, size_t *pos)
{
    for (size_t i = 0; i < count; i++) {
        int again;
        do {
            pos[i] = (size_t)below(r, n);
            again = 0;
            for (size_t j = 0; j < i; j++)
                if (pos[j] == pos[i])
                    again = 1;
        } while (again);
    }
}

/* ---------------------------------------------------------------- gen_fill */

int gen_dist_index(const char *const *list, const char *dist)
{
    for (int i = 0; list[i]; i++)
        if (!strcmp(dist, list[i]))
            return i;
    return -1;
}

int gen_fill(cltopk_dtype type, const char *dist, size_t n, uint64_t seed, void *out)
{
    size_t bytes = cltopk_dtype_size(type);
    if (!bytes || !dist || (n > 0 && !out))
        return -1;
    int d = gen_dist_index(gen_dists, dist), dt = gen_dist_index(gen_table_dists, dist);
    if (dt >= 0)
        d = 100 + dt;
    if (d < 0)
        return -1;
    rng r;
    rng_seed(&r, seed);
    if (d >= 100) {
        /* powerlaw: floor(1 / (1 - 0.9999 u)^1.25) - 1, counts with a long tail
         * and many ties (retweets, likes); timestamps: seconds of May 2017
         * (from 1493596800), uniform; codes: 0 (40%), 1 (20%), 2 .. 9 (5% each),
         * a language.  Integer types; floats get the same values converted. */
        for (size_t i = 0; i < n; i++) {
            double v;
            if (d == 100)
                v = floor(1.0 / pow(1.0 - 0.9999 * unit53(&r), 1.25)) - 1.0;
            else if (d == 101)
                v = 1493596800.0 + (double)below(&r, 31u * 86400u);
            else {
                uint64_t c = below(&r, 20);
                v = c < 8 ? 0.0 : c < 12 ? 1.0 : (double)(2 + (c - 12));
            }
            uint64_t bits;
            switch (type) {
            case CLTOPK_FLOAT32: {
                float f = (float)v;
                uint32_t b;
                memcpy(&b, &f, 4);
                bits = b;
                break;
            }
            case CLTOPK_FLOAT64: memcpy(&bits, &v, 8); break;
            case CLTOPK_INT32:
            case CLTOPK_UINT32: bits = (uint32_t)(v > 2147483647.0 ? 2147483647.0 : v); break;
            default: bits = (uint64_t)v; break;
            }
            put_bits(out, bytes, i, bits);
        }
        return 0;
    }
    switch (d) {
    case 0: /* uniform */
        for (size_t i = 0; i < n; i++)
            put_bits(out, bytes, i, uniform_bits(&r, type, 0));
        break;
    case 1: /* normal */
        for (size_t i = 0; i < n; i++)
            put_bits(out, bytes, i, normal_bits(&r, type));
        break;
    case 2: case 3: /* increasing, decreasing */
        for (size_t i = 0; i < n; i++)
            put_bits(out, bytes, i, uniform_bits(&r, type, 0));
        sort_uniform(out, type, bytes, n);
        if (d == 3)
            reverse(out, bytes, n);
        break;
    case 4: { /* equal */
        uint64_t v = uniform_bits(&r, type, 0);
        for (size_t i = 0; i < n; i++)
            put_bits(out, bytes, i, v);
        break;
    }
    case 5: { /* few */
        uint64_t v[8];
        for (int i = 0; i < 8; i++) {
            int dup;
            do {
                v[i] = uniform_bits(&r, type, 0);
                dup = 0;
                for (int j = 0; j < i; j++)
                    dup |= v[j] == v[i];
            } while (dup);
        }
        for (size_t i = 0; i < n; i++)
            put_bits(out, bytes, i, v[next64(&r) >> 61]);
        if (n >= 8) {
            size_t pos[8];
            distinct_positions(&r, n, 8, pos);
            for (int i = 0; i < 8; i++)
                put_bits(out, bytes, pos[i], v[i]);
        }
        break;
    }
    case 6: { /* bucket-killer */
        uint64_t base = bytes == 4 ? 0x3F800000ull : 0x3FF0000000000000ull;
        size_t odd = bytes, pos[8];
        for (size_t i = 0; i < n; i++)
            put_bits(out, bytes, i, base);
        if (odd > n)
            odd = n;
        distinct_positions(&r, n, odd, pos);
        for (size_t j = 0; j < odd; j++) {
            /* byte (bytes - 1 - j), from the most significant down, plus one */
            int shift = (int)(8 * (bytes - 1 - j));
            uint64_t b = ((base >> shift) + 1) & 255;
            put_bits(out, bytes, pos[j], (base & ~((uint64_t)255 << shift)) | (b << shift));
        }
        break;
    }
    default: { /* special */
        uint64_t ints[8];
        const void *sp;
        size_t ns;
        if (type == CLTOPK_FLOAT32) {
            sp = special_f32, ns = sizeof special_f32 / sizeof special_f32[0];
        } else if (type == CLTOPK_FLOAT64) {
            sp = special_f64, ns = sizeof special_f64 / sizeof special_f64[0];
        } else {
            ns = special_int(type, ints);
            sp = ints;
        }
        size_t sb = type == CLTOPK_FLOAT32 ? 4 : 8;
        for (size_t i = 0; i < n; i++) {
            uint64_t v;
            if (i < ns)
                v = gen_bits(sp, sb, i);
            else if ((next64(&r) >> 62) == 0)
                v = gen_bits(sp, sb, (size_t)below(&r, ns));
            else
                v = uniform_bits(&r, type, 1);
            put_bits(out, bytes, i, v);
        }
        shuffle(&r, out, bytes, n);
        break;
    }
    }
    return 0;
}

/* ------------------------------------------------- tuples (skyline data) */

const char *const gen_tuple_dists[] = {"correlated", "independent", "anticorrelated", NULL};

/* the generator of Borzsonyi, Kossmann and Stocker ("The Skyline Operator",
 * ICDE 2001), as their published program draws: random_peak(min, max, dim) is
 * the mean of dim uniform draws scaled to [min, max); random_normal(med, var)
 * is random_peak(med - var, med + var, 12) */
static double sky_peak(rng *r, double lo, double hi, size_t dim)
{
    double sum = 0;
    for (size_t i = 0; i < dim; i++)
        sum += unit53(r);
    return sum / (double)dim * (hi - lo) + lo;
}

/* tuples [t0, t1) of a draw: their own generator, seeded from the seed and
 * the chunk, so that the bytes do not depend on the number of threads */
static void sky_chunk(int kind, size_t n, size_t d, uint64_t seed, size_t t0, size_t t1,
                      float *out)
{
    rng r;
    uint64_t x = seed ^ (t0 * 0xD1B54A32D192ED03ull);
    rng_seed(&r, splitmix64(&x));
    double v[64];
    for (size_t t = t0; t < t1; t++) {
        for (int again = 1; again;) {
            if (kind == 1) {
                for (size_t j = 0; j < d; j++)
                    v[j] = unit53(&r);
            } else {
                /* correlated: a point on the diagonal, peaked at the middle,
                 * moved by normal steps that keep its sum; anti-correlated:
                 * near the plane sum = d/2, spread by uniform steps */
                double c = kind == 0 ? sky_peak(&r, 0, 1, d) : sky_peak(&r, 0.25, 0.75, 12);
                double l = c <= 0.5 ? c : 1.0 - c;
                for (size_t j = 0; j < d; j++)
                    v[j] = c;
                for (size_t j = 0; j < d; j++) {
                    double h = kind == 0 ? sky_peak(&r, -l, l, 12) : unit53(&r) * 2 * l - l;
                    v[j] += h;
                    v[(j + 1) % d] -= h;
                }
            }
            again = 0;
            for (size_t j = 0; j < d; j++)
                again |= v[j] < 0 || v[j] >= 1;
        }
        for (size_t j = 0; j < d; j++)
            out[j * n + t] = (float)v[j];
    }
}


int gen_tuples(const char *dist, size_t n, size_t d, uint64_t seed, float *out)
{
    const int kind = gen_dist_index(gen_tuple_dists, dist);
    if (kind < 0 || d < 1 || d > 64)
        return -1;
    const size_t chunk = 65536, nchunks = (n + chunk - 1) / chunk;
#pragma omp parallel for schedule(dynamic, 1)
    for (size_t c = 0; c < nchunks; c++)
        sky_chunk(kind, n, d, seed, c * chunk, c + 1 < nchunks ? (c + 1) * chunk : n, out);
    return 0;
}

/* ------------------------------------------------ points (kNN) */

const char *const gen_point_dists[] = {"uniform", "normal", "clustered", NULL};


/* points [t0, t1) of a draw, seeded from the seed and the chunk (bytes
 * independent of the thread count); clustered: centre c of GEN_CLUSTERS at
 * cen[c * d], the spread 0.02 a coordinate */
#define GEN_CLUSTERS 64
static void point_chunk(int kind, size_t d, uint64_t seed, size_t t0, size_t t1,
                        const float *cen, float *out)
{
    rng r;
    uint64_t x = seed ^ (t0 * 0x9E6C63D0676A9A99ull);
    rng_seed(&r, splitmix64(&x));
    for (size_t t = t0; t < t1; t++) {
        const float *c = kind == 2 ? cen + below(&r, GEN_CLUSTERS) * d : NULL;
        for (size_t j = 0; j < d; j++)
            out[t * d + j] = kind == 0   ? unit24(&r)
                             : kind == 1 ? (float)gauss(&r)
                                         : c[j] + (float)(0.02 * gauss(&r));
    }
}

int gen_points(const char *dist, size_t n, size_t d, uint64_t seed, float *out)
{
    const int kind = gen_dist_index(gen_point_dists, dist);
    if (kind < 0 || d < 1 || d > 65536)
        return -1;
    float *cen = NULL;
    if (kind == 2) {
        /* the centres depend on d alone: queries drawn with another seed fall
         * in the same clusters as the points */
        if (!(cen = malloc(GEN_CLUSTERS * d * sizeof *cen)))
            return -1;
        rng r;
        rng_seed(&r, 0xC1A57E25ull ^ (uint64_t)d);
        for (size_t i = 0; i < GEN_CLUSTERS * d; i++)
            cen[i] = unit24(&r);
    }
    const size_t chunk = 16384, nchunks = (n + chunk - 1) / chunk;
#pragma omp parallel for schedule(dynamic, 1)
    for (size_t c = 0; c < nchunks; c++)
        point_chunk(kind, d, seed, c * chunk, c + 1 < nchunks ? (c + 1) * chunk : n, cen, out);
    free(cen);
    return 0;
}
