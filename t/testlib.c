/* testlib.c - the shared test helpers of testlib.h. */
#include "testlib.h"

#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------ randomness */

int test_full(void)
{
    const char *e = getenv("CLTOPK_TEST_FULL");
    return e && *e && strcmp(e, "0") != 0;
}

uint64_t test_seed(void)
{
    static int done;
    static uint64_t seed;
    if (done)
        return seed;
    const char *e = getenv("CLTOPK_TEST_SEED");
    if (e && *e) {
        char *end;
        seed = strtoull(e, &end, 0);
        if (*end)
            bail("CLTOPK_TEST_SEED=%s is not a number", e);
    } else {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        seed = ((uint64_t)ts.tv_sec * 1000003u) ^ (uint64_t)ts.tv_nsec ^
               ((uint64_t)getpid() << 32);
    }
    done = 1;
    diag("seed %" PRIu64 " (CLTOPK_TEST_SEED=%" PRIu64 " repeats this run)", seed, seed);
    return seed;
}

void rng_init(rng_t *r, uint64_t seed)
{
    r->s = seed;
}

/* splitmix64 */
uint64_t rng_next(rng_t *r)
{
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

uint64_t rng_below(rng_t *r, uint64_t bound)
{
    /* the bias of a plain modulo is irrelevant for test data */
    return rng_next(r) % bound;
}

/* ------------------------------------------------------------------ data */

const cltopk_dtype all_types[6] = {CLTOPK_FLOAT32, CLTOPK_FLOAT64, CLTOPK_INT32,
                                   CLTOPK_UINT32,  CLTOPK_INT64,   CLTOPK_UINT64};

size_t tsize(cltopk_dtype type)
{
    switch (type) {
    case CLTOPK_FLOAT32: case CLTOPK_INT32: case CLTOPK_UINT32: return 4;
    case CLTOPK_FLOAT64: case CLTOPK_INT64: case CLTOPK_UINT64: return 8;
    }
    bail("tsize: unknown type %d", (int)type);
}

const char *tname(cltopk_dtype type)
{
    static const char *const names[] = {"float32", "float64", "int32", "uint32", "int64",
                                        "uint64"};
    return (unsigned)type < 6 ? names[type] : "?";
}

int is_float(cltopk_dtype type)
{
    return type == CLTOPK_FLOAT32 || type == CLTOPK_FLOAT64;
}

int check_type(cltopk_dtype type)
{
    return type == CLTOPK_FLOAT32 || type == CLTOPK_INT32 || type == CLTOPK_INT64;
}

int check_runs_type(cltopk_dtype type)
{
    return test_full() || check_type(type);
}

const char *const dists[] = {"uniform", "bits",       "narrow",     "equal",  "few",
                             "special", "nan",        "denorm",     "increasing",
                             "decreasing", "bucket",  "worst",      "worstall", NULL};

static void put(cltopk_dtype type, void *out, size_t i, uint64_t bits)
{
    if (tsize(type) == 4) {
        uint32_t x = (uint32_t)bits;
        memcpy((char *)out + i * 4, &x, 4);
    } else {
        memcpy((char *)out + i * 8, &bits, 8);
    }
}

uint64_t elem_bits(cltopk_dtype type, const void *keys, size_t i)
{
    if (tsize(type) == 4) {
        uint32_t x;
        memcpy(&x, (const char *)keys + i * 4, 4);
        return x;
    }
    uint64_t x;
    memcpy(&x, (const char *)keys + i * 8, 8);
    return x;
}

static const uint64_t special_f32[] = {
    0x7FC00000, 0xFFC00000, 0x7F800001, 0xFF800001, 0x7FFFFFFF, 0xFFFFFFFF, 0x7FA5A5A5,
    0xFFC12345, 0x7F800000, 0xFF800000, 0x00000000, 0x80000000, 0x00000001, 0x80000001,
    0x007FFFFF, 0x807FFFFF, 0x00800000, 0x80800000, 0x7F7FFFFF, 0xFF7FFFFF, 0x3F800000,
    0xBF800000};
static const uint64_t special_f64[] = {
    0x7FF8000000000000ull, 0xFFF8000000000000ull, 0x7FF0000000000001ull, 0xFFF0000000000001ull,
    0x7FFFFFFFFFFFFFFFull, 0xFFFFFFFFFFFFFFFFull, 0x7FF4A5A5A5A5A5A5ull, 0xFFF8123456789ABCull,
    0x7FF0000000000000ull, 0xFFF0000000000000ull, 0x0000000000000000ull, 0x8000000000000000ull,
    0x0000000000000001ull, 0x8000000000000001ull, 0x000FFFFFFFFFFFFFull, 0x800FFFFFFFFFFFFFull,
    0x0010000000000000ull, 0x8010000000000000ull, 0x7FEFFFFFFFFFFFFFull, 0xFFEFFFFFFFFFFFFFull,
    0x3FF0000000000000ull, 0xBFF0000000000000ull};
static const uint64_t special_i32[] = {0x80000000, 0x80000001, 0xFFFFFFFF, 0x00000000,
                                       0x00000001, 0x7FFFFFFE, 0x7FFFFFFF, 0xFFFFFFFE};
static const uint64_t special_u32[] = {0x00000000, 0x00000001, 0x7FFFFFFF, 0x80000000,
                                       0x80000001, 0xFFFFFFFE, 0xFFFFFFFF};
static const uint64_t special_i64[] = {0x8000000000000000ull, 0x8000000000000001ull,
                                       0xFFFFFFFFFFFFFFFFull, 0, 1, 0x7FFFFFFFFFFFFFFEull,
                                       0x7FFFFFFFFFFFFFFFull, 0xFFFFFFFF80000000ull,
                                       0x00000000FFFFFFFFull};
static const uint64_t special_u64[] = {0, 1, 0x7FFFFFFFFFFFFFFFull, 0x8000000000000000ull,
                                       0xFFFFFFFFFFFFFFFEull, 0xFFFFFFFFFFFFFFFFull,
                                       0x00000000FFFFFFFFull, 0x0000000100000000ull};

static const uint64_t *specials(cltopk_dtype type, size_t *count)
{
#define S(a) (*count = sizeof a / sizeof a[0], a)
    switch (type) {
    case CLTOPK_FLOAT32: return S(special_f32);
    case CLTOPK_FLOAT64: return S(special_f64);
    case CLTOPK_INT32: return S(special_i32);
    case CLTOPK_UINT32: return S(special_u32);
    case CLTOPK_INT64: return S(special_i64);
    case CLTOPK_UINT64: return S(special_u64);
    }
#undef S
    bail("specials: unknown type %d", (int)type);
}

static uint64_t special(cltopk_dtype type, rng_t *r)
{
    size_t c;
    const uint64_t *s = specials(type, &c);
    return s[rng_below(r, c)];
}

static uint64_t uniform(cltopk_dtype type, rng_t *r)
{
    uint64_t b = rng_next(r);
    double u = (double)(b >> 11) * 0x1.0p-53 * 2.0 - 1.0;
    switch (type) {
    case CLTOPK_FLOAT32: {
        float f = (float)u;
        uint32_t x;
        memcpy(&x, &f, 4);
        return x;
    }
    case CLTOPK_FLOAT64: {
        uint64_t x;
        memcpy(&x, &u, 8);
        return x;
    }
    case CLTOPK_INT32: case CLTOPK_UINT32: return b & 0xFFFFFFFFu;
    default: return b;
    }
}

static uint64_t random_nan(cltopk_dtype type, rng_t *r)
{
    uint64_t b = rng_next(r);
    if (type == CLTOPK_FLOAT32) {
        uint32_t m = (uint32_t)b & 0x7FFFFFu;
        return (uint32_t)(((b >> 40) & 1) << 31) | 0x7F800000u | (m ? m : 1u);
    }
    uint64_t m = b & 0xFFFFFFFFFFFFFull;
    return (rng_next(r) & 0x8000000000000000ull) | 0x7FF0000000000000ull | (m ? m : 1u);
}

/* small integer v as the type's bits (floats: the value v, with -0 for v == -0) */
static uint64_t small_value(cltopk_dtype type, int v, int negzero)
{
    switch (type) {
    case CLTOPK_FLOAT32: {
        float f = negzero ? -0.0f : (float)v;
        uint32_t x;
        memcpy(&x, &f, 4);
        return x;
    }
    case CLTOPK_FLOAT64: {
        double d = negzero ? -0.0 : (double)v;
        uint64_t x;
        memcpy(&x, &d, 8);
        return x;
    }
    case CLTOPK_INT32: return (uint32_t)(int32_t)v;
    case CLTOPK_UINT32: return (uint32_t)(v + 8);
    case CLTOPK_INT64: return (uint64_t)(int64_t)v;
    case CLTOPK_UINT64: return (uint64_t)(v + 8);
    }
    return 0;
}

static uint64_t worst_value(cltopk_dtype type, int smallest, rng_t *r)
{
    switch (type) {
    case CLTOPK_FLOAT32: return smallest ? random_nan(type, r) : 0xFF800000u;
    case CLTOPK_FLOAT64: return smallest ? random_nan(type, r) : 0xFFF0000000000000ull;
    case CLTOPK_INT32: return smallest ? 0x7FFFFFFFu : 0x80000000u;
    case CLTOPK_UINT32: return smallest ? 0xFFFFFFFFu : 0;
    case CLTOPK_INT64: return smallest ? 0x7FFFFFFFFFFFFFFFull : 0x8000000000000000ull;
    case CLTOPK_UINT64: return smallest ? ~0ull : 0;
    }
    return 0;
}

static void sort_into(cltopk_dtype type, void *out, size_t n, int descending)
{
    size_t w = tsize(type);
    int64_t *p = oracle_order(type, out, n, !descending);
    char *tmp = bmalloc(n * w);
    for (size_t i = 0; i < n; i++)
        memcpy(tmp + i * w, (char *)out + (size_t)p[i] * w, w);
    memcpy(out, tmp, n * w);
    free(tmp);
    free(p);
}

void gen_data(cltopk_dtype type, const char *dist, size_t n, int smallest, rng_t *r, void *out)
{
    size_t w = tsize(type);
    int fl = is_float(type);
    if (!strcmp(dist, "uniform")) {
        for (size_t i = 0; i < n; i++)
            put(type, out, i, uniform(type, r));
    } else if (!strcmp(dist, "five")) {
        for (size_t i = 0; i < n; i++) {
            int v = (int)rng_below(r, 5) - 2;
            switch (type) {
            case CLTOPK_FLOAT32: ((float *)out)[i] = (float)v * 1.5f; break;
            case CLTOPK_FLOAT64: ((double *)out)[i] = (double)v * 1.5; break;
            case CLTOPK_INT32: ((int32_t *)out)[i] = v * 1000; break;
            case CLTOPK_UINT32: ((uint32_t *)out)[i] = (uint32_t)(v + 2) * 7u; break;
            case CLTOPK_INT64: ((int64_t *)out)[i] = (int64_t)v * ((int64_t)1 << 40); break;
            case CLTOPK_UINT64: ((uint64_t *)out)[i] = (uint64_t)(v + 2) << 50; break;
            }
        }
    } else if (!strcmp(dist, "bits")) {
        for (size_t i = 0; i < n; i++)
            put(type, out, i, rng_next(r));
    } else if (!strcmp(dist, "narrow")) {
        for (size_t i = 0; i < n; i++) {
            int v = (int)rng_below(r, 16) - 8;
            put(type, out, i, small_value(type, v, v == 0 && (rng_next(r) & 1)));
        }
    } else if (!strcmp(dist, "equal")) {
        uint64_t v = (rng_next(r) & 1) ? special(type, r) : uniform(type, r);
        for (size_t i = 0; i < n; i++)
            put(type, out, i, v);
    } else if (!strcmp(dist, "few")) {
        uint64_t pool[8];
        for (int j = 0; j < 8; j++)
            pool[j] = (j & 1) ? special(type, r) : uniform(type, r);
        for (size_t i = 0; i < n; i++)
            put(type, out, i, pool[rng_below(r, 8)]);
    } else if (!strcmp(dist, "special")) {
        for (size_t i = 0; i < n; i++)
            put(type, out, i, (rng_next(r) & 1) ? special(type, r) : uniform(type, r));
    } else if (!strcmp(dist, "nan")) {
        for (size_t i = 0; i < n; i++) {
            uint64_t c = rng_below(r, 16);
            uint64_t v;
            if (!fl)
                v = (c & 1) ? special(type, r) : uniform(type, r);
            else if (c < 10)
                v = random_nan(type, r);
            else if (c < 14)
                v = special(type, r);
            else
                v = uniform(type, r);
            put(type, out, i, v);
        }
    } else if (!strcmp(dist, "denorm")) {
        for (size_t i = 0; i < n; i++) {
            uint64_t b = rng_next(r), v;
            if (!fl) {
                v = small_value(type, (int)(b % 7) - 3, 0);
            } else if (b % 16 == 0) {
                v = uniform(type, r);
            } else if (b % 16 == 1) {
                v = w == 4 ? ((b >> 8) & 1) << 31 : ((b >> 8) & 1) << 63; /* +-0 */
            } else if (w == 4) {
                uint32_t m = (uint32_t)(b >> 20) & 0x7FFFFFu;
                if (b & 0x100)
                    m &= 0xF; /* many ties among tiny denormals */
                v = ((b >> 9) & 1) << 31 | (m ? m : 1u);
            } else {
                uint64_t m = (b >> 12) & 0xFFFFFFFFFFFFFull;
                if (b & 0x100)
                    m &= 0xF;
                v = ((b >> 9) & 1) << 63 | (m ? m : 1u);
            }
            put(type, out, i, v);
        }
    } else if (!strcmp(dist, "increasing") || !strcmp(dist, "decreasing")) {
        for (size_t i = 0; i < n; i++)
            put(type, out, i, (rng_below(r, 8) == 0) ? special(type, r) : uniform(type, r));
        sort_into(type, out, n, dist[0] == 'd');
    } else if (!strcmp(dist, "bucket")) {
        uint64_t v = uniform(type, r);
        for (size_t i = 0; i < n; i++) {
            uint64_t x = v;
            if (rng_below(r, 64) == 0) {
                unsigned byte = (unsigned)rng_below(r, w);
                x &= ~(0xFFull << (8 * byte));
                x |= (rng_next(r) & 0xFF) << (8 * byte);
            }
            put(type, out, i, x);
        }
    } else if (!strcmp(dist, "worst")) {
        for (size_t i = 0; i < n; i++)
            put(type, out, i,
                rng_below(r, 64) == 0 ? uniform(type, r) : worst_value(type, smallest, r));
    } else if (!strcmp(dist, "worstall")) {
        for (size_t i = 0; i < n; i++)
            put(type, out, i, worst_value(type, smallest, r));
    } else {
        bail("gen_data: unknown distribution %s", dist);
    }
}

/* ---------------------------------------------------------------- devices */

int test_cl_device(char *buf, size_t len)
{
    const char *e = getenv("CLTOPK_TEST_DEVICE");
    if (e && *e) {
        if (!strcmp(e, "cpu")) {
            snprintf(buf, len, "CLTOPK_TEST_DEVICE=cpu: no OpenCL device is tested");
            return 0;
        }
        snprintf(buf, len, "%s", e);
        return 1;
    }
    if (cltopk_device_count() == 0) {
        snprintf(buf, len, "no OpenCL device (cltopk_device_count() is 0)");
        return 0;
    }
    cltopk_device_info info;
    int st = cltopk_device_get(0, &info);
    if (st != CLTOPK_OK) {
        snprintf(buf, len, "cltopk_device_get(0) failed: %s", cltopk_strerror(st));
        return 0;
    }
    snprintf(buf, len, "%u:%u", info.platform, info.device);
    return 1;
}

void test_quick_builds(void)
{
    const char *q = getenv("CLTOPK_TEST_QUICK"), *d = getenv("CLTOPK_TEST_DEVICE");
    const char *o = getenv("CLTOPK_BUILD_OPTIONS");
    /* the kernel files built without optimisation (t/local.mk's
     * TEST_QUICK_FILES, t/cli.sh's too) */
    const char *files = getenv("CLTOPK_TEST_QUICK_FILES");
    if (!q || strcmp(q, "1") || test_full() || (d && *d) || (o && *o) || !files || !*files)
        return;
    cltopk_device_info info;
    if (cltopk_device_count() == 0 || cltopk_device_get(0, &info) != CLTOPK_OK ||
        !strstr(info.platform_name, "Portable Computing Language"))
        return;
    if (setenv("CLTOPK_BUILD_OPTIONS", "-cl-opt-disable", 1) != 0 ||
        setenv("CLTOPK_BUILD_FILES", files, 1) != 0)
        bail("setenv(CLTOPK_BUILD_OPTIONS): out of memory");
    diag("POCL's builds without optimisation in this test (CLTOPK_TEST_QUICK=1; "
         "CLTOPK_TEST_QUICK=0 or make check-full builds them optimised)");
}

int open_test_cl(cltopk_context **ctx, char *why, size_t whylen)
{
    char dev[256];
    *ctx = NULL;
    if (!test_cl_device(dev, sizeof dev)) {
        snprintf(why, whylen, "%s", dev);
        return 0;
    }
    int st = cltopk_open(ctx, dev);
    if (!ok(st == CLTOPK_OK, "cltopk_open(\"%s\")", dev)) {
        diag("status %d (%s): %s", st, cltopk_strerror(st), cltopk_last_error(NULL));
        snprintf(why, whylen, "device %s failed to open", dev);
        return 0;
    }
    diag("OpenCL device %s: %s", dev, cltopk_device_name(*ctx));
    return 1;
}

size_t bitonic_limit(cltopk_context *ctx, cltopk_dtype type)
{
    size_t lim = 0;
    for (size_t k = 1; k <= ((size_t)1 << 28); k <<= 1) {
        size_t bytes = 0;
        int st = cltopk_workspace_size(ctx, type, k, k, CLTOPK_LARGEST, CLTOPK_ALGO_BITONIC,
                                       &bytes);
        if (st != CLTOPK_OK)
            break;
        lim = k;
    }
    return lim;
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x > y) - (x < y);
}

size_t k_list(size_t limit, size_t n, size_t *out)
{
    size_t c = 0;
    size_t cand[128];
    for (size_t k = 0; k <= 3; k++)
        cand[c++] = k;
    /* make check: every other power of two (each is a kernel build of its own
     * on an OpenCL device); make check-full: all of them */
    for (size_t p = 4; p <= limit && c + 3 < 120; p <<= (test_full() ? 1 : 2)) {
        cand[c++] = p - 1;
        cand[c++] = p;
        cand[c++] = p + 1;
    }
    if (limit) {
        cand[c++] = limit;
        cand[c++] = limit + 1;
    }
    if (n)
        cand[c++] = n - 1;
    cand[c++] = n;
    qsort(cand, c, sizeof cand[0], cmp_size);
    size_t m = 0;
    for (size_t i = 0; i < c; i++)
        if (cand[i] <= n && (m == 0 || out[m - 1] != cand[i]))
            out[m++] = cand[i];
    return m;
}

/* ----------------------------------------------------------------- checks */


static uint64_t poison_bits(size_t i)
{
    return 0xDEADBEEFCAFEF00Dull ^ ((uint64_t)i * 0x9E3779B97F4A7C15ull);
}

static void hexbits(char *buf, size_t len, cltopk_dtype type, uint64_t b)
{
    if (tsize(type) == 4)
        snprintf(buf, len, "0x%08" PRIx32, (uint32_t)b);
    else
        snprintf(buf, len, "0x%016" PRIx64, b);
}

void make_poison(cltopk_dtype type, const void *keys, const int64_t *expect_pos, size_t count,
                 size_t cap, void *pk, int64_t *pi)
{
    size_t w = tsize(type);
    for (size_t i = 0; i < cap; i++) {
        uint64_t pb = poison_bits(i + count);
        if (expect_pos && i < count) /* differs from the expected element */
            pb = elem_bits(type, keys, (size_t)expect_pos[i]) ^
                 (w == 4 ? 0x5A5A5A5Aull : 0x5A5A5A5A5A5A5A5Aull);
        put(type, pk, i, pb);
        pi[i] = -1 - (int64_t)i; /* never a position */
    }
}

int compare_outputs(cltopk_dtype type, const void *keys, size_t n, const int64_t *expect_pos,
                    size_t count, size_t cap, const void *okeys, const int64_t *oidx,
                    const void *pk, const int64_t *pi, char *msg, size_t msglen)
{
    size_t w = tsize(type);
    for (size_t i = 0; i < count; i++) {
        int64_t ei = expect_pos[i];
        uint64_t eb = elem_bits(type, keys, (size_t)ei);
        if (oidx && oidx[i] != ei) {
            char h[40];
            hexbits(h, sizeof h, type, eb);
            snprintf(msg, msglen,
                     "out_index[%zu] = %" PRId64 ", expected %" PRId64 " (key %s)%s", i,
                     oidx[i], ei, h,
                     (oidx[i] >= 0 && (uint64_t)oidx[i] < n) ? "" : " [not a valid position]");
            if (oidx[i] >= 0 && (uint64_t)oidx[i] < n) {
                char g[40];
                hexbits(g, sizeof g, type, elem_bits(type, keys, (size_t)oidx[i]));
                size_t l = strlen(msg);
                snprintf(msg + l, msglen - l, " got the element with key %s", g);
            }
            return 0;
        }
        if (okeys && elem_bits(type, okeys, i) != eb) {
            char h[40], g[40];
            hexbits(h, sizeof h, type, eb);
            hexbits(g, sizeof g, type, elem_bits(type, okeys, i));
            snprintf(msg, msglen, "out_keys[%zu] = %s, expected %s (position %" PRId64 ")", i, g,
                     h, ei);
            return 0;
        }
    }
    if ((okeys && memcmp((const char *)okeys + count * w, (const char *)pk + count * w,
                         (cap - count) * w)) ||
        (oidx && memcmp(oidx + count, pi + count, (cap - count) * 8))) {
        snprintf(msg, msglen, "wrote past the %zu output elements", count);
        return 0;
    }
    return 1;
}

/* shared body of check_topk and check_select: `count` results, expected from
 * perm[first .. first + count) */
static int check_call(int is_select, cltopk_context *ctx, cltopk_algo algo, cltopk_dtype type,
                      const void *keys, size_t n, size_t kr, int smallest, const int64_t *perm,
                      int want, int expect, char *msg, size_t msglen)
{
    size_t w = tsize(type);
    size_t count = is_select ? 1 : kr, first = is_select ? kr : 0;
    size_t cap = count + GUARD;
    char *okeys = (want & WANT_KEYS) ? bmalloc(cap * w) : NULL;
    int64_t *oidx = (want & WANT_INDEX) ? bmalloc(cap * 8) : NULL;
    char *save_k = bmalloc(cap * w);
    int64_t *save_i = bmalloc(cap * 8);
    int good = 0;
    msg[0] = 0;
    if (expect == CLTOPK_OK && first + count > n)
        bail("check_call: expecting %zu results from position %zu of n = %zu", count, first, n);
    make_poison(type, keys, expect == CLTOPK_OK ? perm + first : NULL, count, cap, save_k, save_i);
    if (okeys)
        memcpy(okeys, save_k, cap * w);
    if (oidx)
        memcpy(oidx, save_i, cap * 8);
    unsigned flags = smallest ? CLTOPK_SMALLEST : CLTOPK_LARGEST;
    int st = is_select ? cltopk_select(ctx, type, keys, n, kr, flags, algo, okeys, oidx)
                       : cltopk_topk(ctx, type, keys, n, kr, flags, algo, okeys, oidx);
    if (st != expect) {
        snprintf(msg, msglen, "status %d (%s), expected %d (%s); detail: %s", st,
                 cltopk_strerror(st), expect, cltopk_strerror(expect), cltopk_last_error(ctx));
        goto out;
    }
    if (expect != CLTOPK_OK) {
        if (!cltopk_last_error(ctx)[0]) {
            snprintf(msg, msglen, "status %d as expected but cltopk_last_error() is empty", st);
            goto out;
        }
        if ((okeys && memcmp(okeys, save_k, cap * w)) || (oidx && memcmp(oidx, save_i, cap * 8))) {
            snprintf(msg, msglen, "failed with %d but wrote to its outputs", st);
            goto out;
        }
        good = 1;
        goto out;
    }
    good = compare_outputs(type, keys, n, perm + first, count, cap, okeys, oidx, save_k, save_i,
                           msg, msglen);
out:
    free(okeys);
    free(oidx);
    free(save_k);
    free(save_i);
    return good;
}

int check_topk(cltopk_context *ctx, cltopk_algo algo, cltopk_dtype type, const void *keys,
               size_t n, size_t k, int smallest, const int64_t *perm, int want, int expect,
               char *msg, size_t msglen)
{
    return check_call(0, ctx, algo, type, keys, n, k, smallest, perm, want, expect, msg, msglen);
}

int check_select(cltopk_context *ctx, cltopk_algo algo, cltopk_dtype type, const void *keys,
                 size_t n, size_t rank, int smallest, const int64_t *perm, int want, int expect,
                 char *msg, size_t msglen)
{
    return check_call(1, ctx, algo, type, keys, n, rank, smallest, perm, want, expect, msg,
                      msglen);
}

/* --------------------------------------------------------- cl_mem refusals */

#if CLTOPK_HAVE_OPENCL
cl_mem host_mem(cltopk_context *ctx, const void *host, size_t bytes)
{
    cl_context c;
    if (cltopk_get_cl(ctx, &c, NULL, NULL) != CLTOPK_OK)
        bail("host_mem: %s", cltopk_last_error(ctx));
    cl_int err;
    cl_mem m = clCreateBuffer(c, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, (void *)host,
                              &err);
    if (!m)
        bail("clCreateBuffer(%zu bytes): %d", bytes, (int)err);
    return m;
}

cl_mem poisoned_mem(cltopk_context *ctx, size_t bytes)
{
    if (!bytes)
        bytes = 1;
    unsigned char *fill = bmalloc(bytes);
    memset(fill, MEM_POISON, bytes);
    cl_mem m = host_mem(ctx, fill, bytes);
    free(fill);
    return m;
}

int mems_poisoned(cltopk_context *cl, const cl_mem *bufs, size_t nb, char *msg, size_t msglen)
{
    cl_command_queue q;
    if (cltopk_get_cl(cl, NULL, NULL, &q) != CLTOPK_OK)
        bail("mems_poisoned: %s", cltopk_last_error(cl));
    clFinish(q);
    for (size_t b = 0; b < nb; b++) {
        if (!bufs[b])
            continue;
        size_t bytes = 0;
        if (clGetMemObjectInfo(bufs[b], CL_MEM_SIZE, sizeof bytes, &bytes, NULL) != CL_SUCCESS)
            bail("clGetMemObjectInfo(CL_MEM_SIZE) failed");
        unsigned char *back = bmalloc(bytes);
        cl_int err = clEnqueueReadBuffer(q, bufs[b], CL_TRUE, 0, bytes, back, 0, NULL, NULL);
        if (err != CL_SUCCESS)
            bail("clEnqueueReadBuffer: %d", (int)err);
        size_t i = 0;
        while (i < bytes && back[i] == MEM_POISON)
            i++;
        free(back);
        if (i < bytes) {
            snprintf(msg, msglen, "buffer %zu: byte %zu of %zu was written", b, i, bytes);
            return 0;
        }
    }
    return 1;
}

int check_refused(cltopk_context *cl, cltopk_context *ctx, const char *fn, int st, int expect,
                  cl_event done, const cl_mem *bufs, size_t nb, char *msg, size_t msglen)
{
    const char *detail = cltopk_last_error(ctx);
    if (done != EVENT_SENTINEL && done)
        clReleaseEvent(done);
    if (st != expect || expect >= 0) {
        snprintf(msg, msglen, "status %d (%s), expected %d (%s); detail \"%s\"", st,
                 cltopk_strerror(st), expect, cltopk_strerror(expect), detail);
        return 0;
    }
    if (ctx ? !detail[0] : !strstr(detail, fn)) {
        snprintf(msg, msglen, "no detail text%s (\"%s\")", ctx ? "" : " naming the function",
                 detail);
        return 0;
    }
    if (done != EVENT_SENTINEL) {
        snprintf(msg, msglen, "*done was overwritten (%s)", done ? "an event" : "NULL");
        return 0;
    }
    return mems_poisoned(cl, bufs, nb, msg, msglen);
}
#endif

/* ------------------------------------------------------------------ misc */

static void on_alarm(int sig)
{
    static const char m[] = "Bail out! watchdog: the test ran too long (a hang?); "
                            "CLTOPK_TEST_TIMEOUT sets the limit in seconds\n";
    (void)sig;
    if (write(1, m, sizeof m - 1) < 0) {
        /* nothing more can be done */
    }
    _exit(255);
}

void watchdog(unsigned seconds)
{
    const char *e = getenv("CLTOPK_TEST_TIMEOUT");
    if (e && *e)
        seconds = (unsigned)strtoul(e, NULL, 10);
    if (!seconds)
        return;
    signal(SIGALRM, on_alarm);
    alarm(seconds);
}

const char *test_tmpdir(void)
{
    const char *d = getenv("CLTOPK_TEST_TMPDIR");
    if (d && *d)
        return d;
    d = getenv("TMPDIR");
    if (d && *d)
        return d;
    return "/tmp";
}

char *env_push(const char *name, const char *value)
{
    const char *o = getenv(name);
    char *old = NULL;
    if (o) {
        old = bmalloc(strlen(o) + 1);
        strcpy(old, o);
    }
    if (value ? setenv(name, value, 1) : unsetenv(name))
        bail("setenv(%s) failed", name);
    return old;
}

void env_pop(const char *name, char *old)
{
    if (old ? setenv(name, old, 1) : unsetenv(name))
        bail("setenv(%s) failed", name);
    free(old);
}

/* the first byte of p[0 .. n) that is not MEM_POISON, or n */
static size_t first_unpoisoned(const void *p, size_t n)
{
    const unsigned char *b = p;
    size_t i = 0;
    while (i < n && b[i] == MEM_POISON)
        i++;
    return i;
}

/* the child's part of failed_build_call: 0 when all of it holds */
static int failed_build_child(size_t key_bytes, failed_build_fn run, void *arg, size_t out_bytes,
                              size_t out_count, char *why, size_t whylen)
{
    char dev[256];
    cltopk_context *ctx = NULL;
    if (!test_cl_device(dev, sizeof dev)) {
        snprintf(why, whylen, "%s", dev);
        return 2;
    }
    if (cltopk_open(&ctx, dev) != CLTOPK_OK) {
        snprintf(why, whylen, "cltopk_open(%s): %s", dev, cltopk_last_error(NULL));
        return 1;
    }
    void *keys = mmap(NULL, key_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
                      0);
    if (keys == MAP_FAILED) {
        snprintf(why, whylen, "mmap of %zu bytes failed", key_bytes);
        return 1;
    }
    unsigned char *ok_ = bmalloc(out_bytes + 1);
    int64_t *oi = bmalloc((out_count + 1) * sizeof *oi);
    memset(keys, 0x3c, key_bytes); /* float 0.0115, int 0x3c3c3c3c: any order */
    memset(ok_, MEM_POISON, out_bytes + 1);
    memset(oi, MEM_POISON, (out_count + 1) * sizeof *oi);
    char *o1 = env_push("CLTOPK_BUILD_OPTIONS", "-cl-no-such-option");
    char *o2 = env_push("CLTOPK_BUILD_FILES", NULL);
    int st = run(ctx, keys, ok_, oi, arg);
    munmap(keys, key_bytes); /* the call's copies of them must be over */
    env_pop("CLTOPK_BUILD_FILES", o2);
    env_pop("CLTOPK_BUILD_OPTIONS", o1);
    const char *detail = cltopk_last_error(ctx);
    int bad = 0;
    if (st != CLTOPK_ERR_BUILD) {
        snprintf(why, whylen, "status %d (%s), not CLTOPK_ERR_BUILD", st, cltopk_strerror(st));
        bad = 1;
    } else if (!strstr(detail, "-cl-no-such-option")) {
        snprintf(why, whylen, "the detail does not name the build: %s", detail);
        bad = 1;
    }
    size_t kb = out_bytes + 1, ib = (out_count + 1) * sizeof *oi, at;
    if (!bad && (at = first_unpoisoned(ok_, kb)) < kb) {
        snprintf(why, whylen, "out_keys byte %zu written", at);
        bad = 1;
    }
    if (!bad && (at = first_unpoisoned(oi, ib)) < ib) {
        snprintf(why, whylen, "out_index byte %zu written", at);
        bad = 1;
    }
    cltopk_close(ctx); /* a transfer still in flight would read the unmapped keys here */
    free(ok_);
    free(oi);
    return bad;
}

int failed_build_call(size_t key_bytes, failed_build_fn run, void *arg, size_t out_bytes,
                      size_t out_count, char *why, size_t whylen)
{
    int fd[2];
    fflush(stdout);
    fflush(stderr);
    if (pipe(fd) != 0)
        bail("pipe failed");
    pid_t pid = fork();
    if (pid < 0)
        bail("fork failed");
    if (pid == 0) {
        char w[512] = "";
        close(fd[0]);
        int code = failed_build_child(key_bytes, run, arg, out_bytes, out_count, w, sizeof w);
        ssize_t wn = write(fd[1], w, strlen(w));
        (void)wn;
        _exit(code);
    }
    close(fd[1]);
    char w[512];
    ssize_t got = read(fd[0], w, sizeof w - 1);
    close(fd[0]);
    w[got > 0 ? got : 0] = 0;
    int status = 0;
    if (waitpid(pid, &status, 0) != pid)
        bail("waitpid failed");
    if (WIFSIGNALED(status)) {
        snprintf(why, whylen, "the calling process died of signal %d (%s)", WTERMSIG(status),
                 strsignal(WTERMSIG(status)));
        return 0;
    }
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
    snprintf(why, whylen, "%s", w[0] ? w : "the calling process failed");
    return code == 0 ? 1 : code == 2 ? -1 : 0;
}
