/* args.c - every bad argument of every entry point, and the small helpers.
 *
 * Every failing call must return its documented status, leave a non-empty
 * detail text, and write nothing: outputs are poisoned first and compared after.
 * Runs on the "cpu" context and, when one exists, on the OpenCL test device. */
#include "testlib.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NK 16 /* elements of the poisoned output buffers */

/* outputs of one call, poisoned */
typedef struct {
    unsigned char keys[NK * 8];
    int64_t index[NK];
} outs;

static void poison(outs *o)
{
    for (size_t i = 0; i < sizeof o->keys; i++)
        o->keys[i] = (unsigned char)(0xA5 ^ i);
    for (size_t i = 0; i < NK; i++)
        o->index[i] = -7 - (int64_t)i;
}

static int intact(const outs *o)
{
    outs ref;
    poison(&ref);
    return !memcmp(o, &ref, sizeof ref);
}

/* One cltopk_topk call that must fail with `expect` and write nothing. */
static void topk_fails(cltopk_context *ctx, const char *dev, int type, const void *keys,
                       size_t n, size_t k, unsigned flags, int algo, int want, int expect,
                       const char *what)
{
    outs o;
    poison(&o);
    int st = cltopk_topk(ctx, (cltopk_dtype)type, keys, n, k, flags, (cltopk_algo)algo,
                         (want & WANT_KEYS) ? o.keys : NULL,
                         (want & WANT_INDEX) ? o.index : NULL);
    int good = st == expect && intact(&o) && (!ctx || cltopk_last_error(ctx)[0]);
    if (!ok(good, "%s: topk %s -> %s", dev, what, cltopk_strerror(expect)))
        diag("status %d (%s), outputs %s, detail \"%s\"", st, cltopk_strerror(st),
             intact(&o) ? "intact" : "WRITTEN", ctx ? cltopk_last_error(ctx) : "");
}

static void select_fails(cltopk_context *ctx, const char *dev, int type, const void *keys,
                         size_t n, size_t rank, unsigned flags, int algo, int want, int expect,
                         const char *what)
{
    outs o;
    poison(&o);
    int st = cltopk_select(ctx, (cltopk_dtype)type, keys, n, rank, flags, (cltopk_algo)algo,
                           (want & WANT_KEYS) ? o.keys : NULL,
                           (want & WANT_INDEX) ? o.index : NULL);
    int good = st == expect && intact(&o) && (!ctx || cltopk_last_error(ctx)[0]);
    if (!ok(good, "%s: select %s -> %s", dev, what, cltopk_strerror(expect)))
        diag("status %d (%s), outputs %s, detail \"%s\"", st, cltopk_strerror(st),
             intact(&o) ? "intact" : "WRITTEN", ctx ? cltopk_last_error(ctx) : "");
}

static void workspace_fails(cltopk_context *ctx, const char *dev, int type, size_t n, size_t k,
                            unsigned flags, int algo, int expect, const char *what)
{
    size_t bytes = 0xBADBADu;
    int st = cltopk_workspace_size(ctx, (cltopk_dtype)type, n, k, flags, (cltopk_algo)algo,
                                   &bytes);
    if (!ok(st == expect && bytes == 0xBADBADu, "%s: workspace_size %s -> %s", dev, what,
            cltopk_strerror(expect)))
        diag("status %d (%s), bytes %zu", st, cltopk_strerror(st), bytes);
}

static void plan_fails(cltopk_context *ctx, const char *dev, int type, size_t n, size_t k,
                       unsigned flags, int expect, const char *what)
{
    cltopk_algo chosen = (cltopk_algo)77;
    int st = cltopk_plan(ctx, (cltopk_dtype)type, n, k, flags, &chosen);
    if (!ok(st == expect && chosen == (cltopk_algo)77, "%s: plan %s -> %s", dev, what,
            cltopk_strerror(expect)))
        diag("status %d (%s), chosen %d", st, cltopk_strerror(st), (int)chosen);
}

/* device algorithms, UNSUPPORTED on the "cpu" context */
static const int device_only[] = {CLTOPK_ALGO_RADIX_SELECT, CLTOPK_ALGO_SBP_RADIX,
                                  CLTOPK_ALGO_SBP_TREE, CLTOPK_ALGO_SAMPLE_FILTER,
                                  CLTOPK_ALGO_SORT, CLTOPK_ALGO_BITS};
static const int bad_types[] = {6, 7, -1, 1000, INT_MIN};
static const int bad_algos[] = {11, 12, -1, 100, INT_MAX};
static const unsigned bad_flags[] = {2u, 3u, 4u, 0x80000000u, 0xFFFFFFFFu};

/* Everything a context must reject, on ctx (named dev). */
static void bad_calls(cltopk_context *ctx, const char *dev, int is_cl)
{
    float data[64];
    for (int i = 0; i < 64; i++)
        data[i] = (float)(i * 7 % 64);
    char what[128];

    /* NULL data, both outputs NULL, k > n, rank >= n */
    topk_fails(ctx, dev, CLTOPK_FLOAT32, NULL, 10, 3, 0, CLTOPK_ALGO_AUTO, WANT_BOTH,
               CLTOPK_ERR_INVALID_ARGUMENT, "keys NULL with n = 10");
    topk_fails(ctx, dev, CLTOPK_FLOAT32, NULL, 10, 3, 0, CLTOPK_ALGO_CPU_HEAP, WANT_KEYS,
               CLTOPK_ERR_INVALID_ARGUMENT, "keys NULL, cpu-heap");
    topk_fails(ctx, dev, CLTOPK_FLOAT32, data, 64, 3, 0, CLTOPK_ALGO_AUTO, 0,
               CLTOPK_ERR_INVALID_ARGUMENT, "both outputs NULL");
    topk_fails(ctx, dev, CLTOPK_FLOAT32, data, 64, 3, CLTOPK_SMALLEST, CLTOPK_ALGO_CPU_HEAP, 0,
               CLTOPK_ERR_INVALID_ARGUMENT, "both outputs NULL, cpu-heap");
    topk_fails(ctx, dev, CLTOPK_FLOAT32, data, 10, 11, 0, CLTOPK_ALGO_AUTO, WANT_BOTH,
               CLTOPK_ERR_K_RANGE, "k = n + 1");
    topk_fails(ctx, dev, CLTOPK_INT64, data, 5, 16, 0, CLTOPK_ALGO_CPU_HEAP, WANT_BOTH,
               CLTOPK_ERR_K_RANGE, "k = 16 > n = 5, cpu-heap");
    topk_fails(ctx, dev, CLTOPK_UINT32, NULL, 0, 1, 0, CLTOPK_ALGO_AUTO, WANT_BOTH,
               CLTOPK_ERR_K_RANGE, "k = 1 > n = 0");
    topk_fails(ctx, dev, CLTOPK_FLOAT32, data, 64, (size_t)-1, 0, CLTOPK_ALGO_AUTO, WANT_BOTH,
               CLTOPK_ERR_K_RANGE, "k = SIZE_MAX");
    topk_fails(ctx, dev, CLTOPK_FLOAT32, data, (size_t)-1, 3, 0, CLTOPK_ALGO_AUTO, WANT_BOTH,
               CLTOPK_ERR_INVALID_ARGUMENT, "n = SIZE_MAX");
    select_fails(ctx, dev, CLTOPK_FLOAT32, NULL, 10, 3, 0, CLTOPK_ALGO_AUTO, WANT_BOTH,
                 CLTOPK_ERR_INVALID_ARGUMENT, "keys NULL with n = 10");
    select_fails(ctx, dev, CLTOPK_FLOAT32, data, 64, 3, 0, CLTOPK_ALGO_AUTO, 0,
                 CLTOPK_ERR_INVALID_ARGUMENT, "both outputs NULL");
    select_fails(ctx, dev, CLTOPK_FLOAT32, data, 64, 3, 0, CLTOPK_ALGO_CPU_HEAP, 0,
                 CLTOPK_ERR_INVALID_ARGUMENT, "both outputs NULL, cpu-heap");
    select_fails(ctx, dev, CLTOPK_FLOAT32, data, 10, 10, 0, CLTOPK_ALGO_AUTO, WANT_BOTH,
                 CLTOPK_ERR_RANK_RANGE, "rank = n");
    select_fails(ctx, dev, CLTOPK_FLOAT32, data, 10, 11, CLTOPK_SMALLEST, CLTOPK_ALGO_CPU_HEAP,
                 WANT_KEYS, CLTOPK_ERR_RANK_RANGE, "rank = n + 1, cpu-heap");
    select_fails(ctx, dev, CLTOPK_FLOAT64, data, 0, 0, 0, CLTOPK_ALGO_AUTO, WANT_INDEX,
                 CLTOPK_ERR_RANK_RANGE, "rank 0 of n = 0");
    select_fails(ctx, dev, CLTOPK_FLOAT32, data, 64, (size_t)-1, 0, CLTOPK_ALGO_AUTO, WANT_BOTH,
                 CLTOPK_ERR_RANK_RANGE, "rank = SIZE_MAX");

    /* bad type, algorithm, flags: for topk, select, workspace_size and plan */
    for (size_t i = 0; i < sizeof bad_types / sizeof bad_types[0]; i++) {
        snprintf(what, sizeof what, "type %d", bad_types[i]);
        topk_fails(ctx, dev, bad_types[i], data, 16, 4, 0, CLTOPK_ALGO_AUTO, WANT_BOTH,
                   CLTOPK_ERR_BAD_TYPE, what);
        select_fails(ctx, dev, bad_types[i], data, 16, 4, 0, CLTOPK_ALGO_AUTO, WANT_BOTH,
                     CLTOPK_ERR_BAD_TYPE, what);
        workspace_fails(ctx, dev, bad_types[i], 16, 4, 0, CLTOPK_ALGO_AUTO, CLTOPK_ERR_BAD_TYPE,
                        what);
        plan_fails(ctx, dev, bad_types[i], 16, 4, 0, CLTOPK_ERR_BAD_TYPE, what);
    }
    for (size_t i = 0; i < sizeof bad_algos / sizeof bad_algos[0]; i++) {
        snprintf(what, sizeof what, "algorithm %d", bad_algos[i]);
        topk_fails(ctx, dev, CLTOPK_FLOAT32, data, 16, 4, 0, bad_algos[i], WANT_BOTH,
                   CLTOPK_ERR_BAD_ALGO, what);
        select_fails(ctx, dev, CLTOPK_FLOAT32, data, 16, 4, 0, bad_algos[i], WANT_BOTH,
                     CLTOPK_ERR_BAD_ALGO, what);
        workspace_fails(ctx, dev, CLTOPK_FLOAT32, 16, 4, 0, bad_algos[i], CLTOPK_ERR_BAD_ALGO,
                        what);
    }
    for (size_t i = 0; i < sizeof bad_flags / sizeof bad_flags[0]; i++) {
        snprintf(what, sizeof what, "flags 0x%x", bad_flags[i]);
        topk_fails(ctx, dev, CLTOPK_FLOAT32, data, 16, 4, bad_flags[i], CLTOPK_ALGO_AUTO,
                   WANT_BOTH, CLTOPK_ERR_BAD_FLAGS, what);
        topk_fails(ctx, dev, CLTOPK_INT32, data, 16, 4, bad_flags[i], CLTOPK_ALGO_CPU_HEAP,
                   WANT_INDEX, CLTOPK_ERR_BAD_FLAGS, what);
        select_fails(ctx, dev, CLTOPK_FLOAT32, data, 16, 4, bad_flags[i], CLTOPK_ALGO_AUTO,
                     WANT_BOTH, CLTOPK_ERR_BAD_FLAGS, what);
        workspace_fails(ctx, dev, CLTOPK_FLOAT32, 16, 4, bad_flags[i], CLTOPK_ALGO_AUTO,
                        CLTOPK_ERR_BAD_FLAGS, what);
        plan_fails(ctx, dev, CLTOPK_FLOAT32, 16, 4, bad_flags[i], CLTOPK_ERR_BAD_FLAGS, what);
    }
    workspace_fails(ctx, dev, CLTOPK_FLOAT32, 10, 11, 0, CLTOPK_ALGO_AUTO, CLTOPK_ERR_K_RANGE,
                    "k = n + 1");
    plan_fails(ctx, dev, CLTOPK_FLOAT32, 10, 11, 0, CLTOPK_ERR_K_RANGE, "k = n + 1");

    for (size_t i = 0; !is_cl && i < sizeof device_only / sizeof device_only[0]; i++) {
        int a = device_only[i];
        snprintf(what, sizeof what, "%s on the cpu device", cltopk_algo_name((cltopk_algo)a));
        topk_fails(ctx, dev, CLTOPK_FLOAT32, data, 64, 5, 0, a, WANT_BOTH,
                   CLTOPK_ERR_UNSUPPORTED, what);
        select_fails(ctx, dev, CLTOPK_FLOAT32, data, 64, 0, 0, a, WANT_BOTH,
                     CLTOPK_ERR_UNSUPPORTED, what);
        workspace_fails(ctx, dev, CLTOPK_FLOAT32, 64, 5, 0, a, CLTOPK_ERR_UNSUPPORTED, what);
    }
    if (!is_cl) {
        topk_fails(ctx, dev, CLTOPK_FLOAT32, data, 64, 5, 0, CLTOPK_ALGO_BITONIC, WANT_BOTH,
                   CLTOPK_ERR_UNSUPPORTED, "bitonic on the cpu device");
        select_fails(ctx, dev, CLTOPK_FLOAT32, data, 64, 0, 0, CLTOPK_ALGO_BITONIC, WANT_BOTH,
                     CLTOPK_ERR_UNSUPPORTED, "bitonic on the cpu device");
        workspace_fails(ctx, dev, CLTOPK_FLOAT32, 64, 5, 0, CLTOPK_ALGO_BITONIC,
                        CLTOPK_ERR_UNSUPPORTED, "bitonic on the cpu device");
        /* sbp-tree: an OpenCL algorithm too */
        topk_fails(ctx, dev, CLTOPK_FLOAT32, data, 64, 5, 0, CLTOPK_ALGO_SBP_TREE, WANT_BOTH,
                   CLTOPK_ERR_UNSUPPORTED, "sbp-tree on the cpu device");
        select_fails(ctx, dev, CLTOPK_FLOAT32, data, 64, 0, 0, CLTOPK_ALGO_SBP_TREE, WANT_BOTH,
                     CLTOPK_ERR_UNSUPPORTED, "sbp-tree on the cpu device");
        workspace_fails(ctx, dev, CLTOPK_FLOAT32, 64, 5, 0, CLTOPK_ALGO_SBP_TREE,
                        CLTOPK_ERR_UNSUPPORTED, "sbp-tree on the cpu device");
    }

    /* NULL result pointers of the helpers */
    is_int(CLTOPK_ERR_INVALID_ARGUMENT,
           cltopk_workspace_size(ctx, CLTOPK_FLOAT32, 16, 4, 0, CLTOPK_ALGO_AUTO, NULL),
           "%s: workspace_size with bytes NULL", dev);
    is_int(CLTOPK_ERR_INVALID_ARGUMENT, cltopk_plan(ctx, CLTOPK_FLOAT32, 16, 4, 0, NULL),
           "%s: plan with chosen NULL", dev);
    is_int(CLTOPK_ERR_INVALID_ARGUMENT, cltopk_plan_buffer(ctx, CLTOPK_FLOAT32, 16, 4, 0, NULL),
           "%s: plan_buffer with chosen NULL", dev);

    /* a failing call after a good one: the detail is set again */
    {
        float k1;
        int64_t i1;
        int st = cltopk_topk(ctx, CLTOPK_FLOAT32, data, 64, 1, 0, CLTOPK_ALGO_AUTO, &k1, &i1);
        ok(st == CLTOPK_OK && k1 == 63.0f && data[i1] == 63.0f, "%s: a good call in between",
           dev);
        st = cltopk_topk(ctx, CLTOPK_FLOAT32, data, 64, 65, 0, CLTOPK_ALGO_AUTO, &k1, &i1);
        ok(st == CLTOPK_ERR_K_RANGE && cltopk_last_error(ctx)[0] != 0,
           "%s: detail of the next failing call is non-empty", dev);
    }
}

/* cltopk_benchmark: fails as the call itself would, writing nothing; else
 * positive times */
static void bench_fails(cltopk_context *ctx, const char *dev, int type, const void *keys,
                        size_t n, size_t k, unsigned flags, int algo, int reps, int expect,
                        const char *what)
{
    double m = -1.0, f = -2.0;
    int st = cltopk_benchmark(ctx, (cltopk_dtype)type, keys, n, k, flags, (cltopk_algo)algo, reps,
                              &m, &f);
    if (!ok(st == expect && m == -1.0 && f == -2.0, "%s: benchmark %s -> %s", dev, what,
            cltopk_strerror(expect)))
        diag("status %d (%s), median %g, floor %g", st, cltopk_strerror(st), m, f);
}

static void benchmark(cltopk_context *ctx, const char *dev, int is_cl)
{
    enum { N = 5000 };
    static float data[N];
    for (int i = 0; i < N; i++)
        data[i] = (float)((i * 7919) % N);
    bench_fails(ctx, dev, CLTOPK_FLOAT32, NULL, N, 5, 0, CLTOPK_ALGO_CPU_HEAP, 3,
                CLTOPK_ERR_INVALID_ARGUMENT, "keys NULL");
    bench_fails(ctx, dev, CLTOPK_FLOAT32, data, N, 5, 0, CLTOPK_ALGO_CPU_HEAP, 0,
                CLTOPK_ERR_INVALID_ARGUMENT, "reps = 0");
    bench_fails(ctx, dev, 6, data, N, 5, 0, CLTOPK_ALGO_CPU_HEAP, 3, CLTOPK_ERR_BAD_TYPE,
                "type 6");
    bench_fails(ctx, dev, CLTOPK_FLOAT32, data, N, 5, 2, CLTOPK_ALGO_CPU_HEAP, 3,
                CLTOPK_ERR_BAD_FLAGS, "flags 2");
    bench_fails(ctx, dev, CLTOPK_FLOAT32, data, N, 5, 2, CLTOPK_ALGO_AUTO, 3, CLTOPK_ERR_BAD_FLAGS,
                "auto, flags 2");
    bench_fails(ctx, dev, CLTOPK_FLOAT32, data, N, 5, 0, 11, 3, CLTOPK_ERR_BAD_ALGO,
                "algorithm 11");
    bench_fails(ctx, dev, CLTOPK_FLOAT32, data, N, N + 1, 0, CLTOPK_ALGO_CPU_HEAP, 3,
                CLTOPK_ERR_K_RANGE, "k = n + 1");
    if (!is_cl)
        bench_fails(ctx, dev, CLTOPK_FLOAT32, data, N, 5, 0, CLTOPK_ALGO_SORT, 3,
                    CLTOPK_ERR_UNSUPPORTED, "sort on the cpu device");
    if (!is_cl)
        bench_fails(ctx, dev, CLTOPK_FLOAT32, data, N, 5, 0, CLTOPK_ALGO_BITONIC, 3,
                    CLTOPK_ERR_UNSUPPORTED, "bitonic on the cpu device");
    double m = NAN, f = NAN;
    is_int(CLTOPK_ERR_INVALID_ARGUMENT,
           cltopk_benchmark(ctx, CLTOPK_FLOAT32, data, N, 5, 0, CLTOPK_ALGO_AUTO, 3, NULL, &f),
           "%s: benchmark with median NULL", dev);
    cltopk_algo algos[] = {CLTOPK_ALGO_CPU_HEAP, CLTOPK_ALGO_AUTO, CLTOPK_ALGO_BITONIC};
    for (int a = 0; a < (is_cl ? 3 : 2); a++) {
        m = f = NAN;
        int st = cltopk_benchmark(ctx, CLTOPK_FLOAT32, data, N, 16, CLTOPK_SMALLEST, algos[a], 3,
                                  &m, &f);
        if (!ok(st == CLTOPK_OK && m > 0 && m < 60 && f > 0 && f < 60,
                "%s: benchmark %s gives positive median and floor times", dev,
                cltopk_algo_name(algos[a])))
            diag("status %d (%s): median %g, floor %g; %s", st, cltopk_strerror(st), m, f,
                 cltopk_last_error(ctx));
        m = NAN;
        st = cltopk_benchmark(ctx, CLTOPK_UINT64, data, N / 2, 3, 0, algos[a], 1, &m, NULL);
        ok(st == CLTOPK_OK && m > 0, "%s: benchmark %s with floor NULL", dev,
           cltopk_algo_name(algos[a]));
    }
}

/* k == 0: success, nothing written, for every type, direction and algorithm that
 * can run here */
static void k_zero(cltopk_context *ctx, const char *dev, int is_cl)
{
    uint64_t data[8] = {5, 3, 9, 1, 7, 2, 8, 6};
    int algos[] = {CLTOPK_ALGO_AUTO, CLTOPK_ALGO_CPU_HEAP, CLTOPK_ALGO_BITONIC};
    int na = is_cl ? 3 : 2, good = 1;
    for (int t = 0; t < 6; t++)
        for (int s = 0; s < 2; s++)
            for (int a = 0; a < na; a++)
                for (size_t n = 0; n <= 8; n += 8) {
                    outs o;
                    poison(&o);
                    int st = cltopk_topk(ctx, all_types[t], n ? data : NULL, n, 0, (unsigned)s,
                                         (cltopk_algo)algos[a], o.keys, o.index);
                    if (st != CLTOPK_OK || !intact(&o)) {
                        if (good)
                            diag("%s %s n=%zu algo %s: status %d, outputs %s", tname(all_types[t]),
                                 s ? "smallest" : "largest", n,
                                 cltopk_algo_name((cltopk_algo)algos[a]), st,
                                 intact(&o) ? "intact" : "WRITTEN");
                        good = 0;
                    }
                }
    ok(good, "%s: k = 0 succeeds and writes nothing (all types, directions, algorithms)", dev);
    size_t bytes = 77;
    int st = cltopk_workspace_size(ctx, CLTOPK_FLOAT32, 8, 0, 0, CLTOPK_ALGO_AUTO, &bytes);
    ok(st == CLTOPK_OK, "%s: workspace_size for k = 0 succeeds", dev);
}

/* the helpers that need no context */
static void helpers(void)
{
    /* version */
    is_string(CLTOPK_VERSION_STRING, cltopk_version_string(), "version string matches header");
    is_int(CLTOPK_VERSION_NUMBER, cltopk_version_number(), "version number matches header");
    {
        unsigned ma = 0, mi = 0, pa = 0;
        char tail;
        int parsed = sscanf(cltopk_version_string(), "%u.%u.%u%c", &ma, &mi, &pa, &tail);
        ok(parsed == 3 && ma * 10000 + mi * 100 + pa == cltopk_version_number(),
           "version string \"%s\" and number %u agree", cltopk_version_string(),
           cltopk_version_number());
        ok(ma == CLTOPK_VERSION_MAJOR && mi == CLTOPK_VERSION_MINOR && pa == CLTOPK_VERSION_PATCH,
           "version parts match CLTOPK_VERSION_MAJOR/MINOR/PATCH");
    }

    /* strerror: never NULL or empty, distinct for the defined codes */
    {
        int good = 1;
        for (int s = -300; s <= 300 && good; s++) {
            const char *m = cltopk_strerror(s);
            if (!m || !m[0]) {
                diag("cltopk_strerror(%d) is %s", s, m ? "empty" : "NULL");
                good = 0;
            }
        }
        const int extremes[] = {INT_MIN, INT_MIN + 1, -1000000, 1000000, INT_MAX};
        for (size_t i = 0; i < sizeof extremes / sizeof extremes[0]; i++) {
            const char *m = cltopk_strerror(extremes[i]);
            if (!m || !m[0]) {
                diag("cltopk_strerror(%d) is %s", extremes[i], m ? "empty" : "NULL");
                good = 0;
            }
        }
        ok(good, "cltopk_strerror is never NULL or empty (-300..300 and extremes)");
        int distinct = 1;
        for (int a = CLTOPK_ERR_EXPRESSION; a <= 0; a++)
            for (int b = a + 1; b <= 0; b++)
                if (!strcmp(cltopk_strerror(a), cltopk_strerror(b))) {
                    diag("codes %d and %d share \"%s\"", a, b, cltopk_strerror(a));
                    distinct = 0;
                }
        ok(distinct, "the defined statuses 0..-17 have distinct descriptions");
        ok(strcmp(cltopk_strerror(CLTOPK_ERR_EXPRESSION - 1), cltopk_strerror(CLTOPK_OK)) != 0,
           "an unknown status is not described as success");
    }

    /* types */
    {
        static const char *const names[6] = {"f32", "f64", "i32", "u32", "i64", "u64"};
        static const char *const alias[6] = {"float", "double", "int32", "uint32", "int64",
                                             "uint64"};
        static const size_t sizes[6] = {4, 8, 4, 4, 8, 8};
        for (int t = 0; t < 6; t++) {
            cltopk_dtype ty = (cltopk_dtype)t;
            is_int((long long)sizes[t], (long long)cltopk_dtype_size(ty), "dtype_size(%s)",
                   names[t]);
            is_string(names[t], cltopk_dtype_name(ty), "dtype_name(%d)", t);
            cltopk_dtype p = (cltopk_dtype)99;
            int st = cltopk_dtype_parse(cltopk_dtype_name(ty), &p);
            ok(st == CLTOPK_OK && p == ty, "dtype_parse(dtype_name(%d)) round trip", t);
            p = (cltopk_dtype)99;
            st = cltopk_dtype_parse(alias[t], &p);
            ok(st == CLTOPK_OK && p == ty, "dtype_parse(\"%s\")", alias[t]);
        }
        for (size_t i = 0; i < sizeof bad_types / sizeof bad_types[0]; i++) {
            cltopk_dtype ty = (cltopk_dtype)bad_types[i];
            ok(cltopk_dtype_size(ty) == 0 && cltopk_dtype_name(ty) == NULL,
               "unknown type %d: size 0, name NULL", bad_types[i]);
        }
        const char *bad[] = {"", "f16", "F32", "f32 ", "float32x", "int", "i128"};
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            cltopk_dtype p = (cltopk_dtype)99;
            int st = cltopk_dtype_parse(bad[i], &p);
            ok(st != CLTOPK_OK && st < 0 && p == (cltopk_dtype)99,
               "dtype_parse(\"%s\") fails without writing", bad[i]);
        }
        cltopk_dtype p = (cltopk_dtype)99;
        is_int(CLTOPK_ERR_INVALID_ARGUMENT, cltopk_dtype_parse(NULL, &p), "dtype_parse(NULL)");
        is_int(CLTOPK_ERR_INVALID_ARGUMENT, cltopk_dtype_parse("f32", NULL),
               "dtype_parse(name, NULL)");
    }

    /* algorithms: the names the header lists */
    {
        static const char *const names[11] = {"auto",         "bitonic", "sbp-radix", "sbp-tree",
                                              "radix-select", "sort",    "cpu-heap",
                                              "cpu-bitonic",  "cpu-radix", "sample-filter",
                                              "bits"};
        for (int a = 0; a < 11; a++) {
            cltopk_algo al = (cltopk_algo)a;
            is_string(names[a], cltopk_algo_name(al), "algo_name(%d)", a);
            cltopk_algo p = (cltopk_algo)99;
            int st = cltopk_algo_parse(names[a], &p);
            ok(st == CLTOPK_OK && p == al, "algo_parse(\"%s\") round trip", names[a]);
        }
        for (size_t i = 0; i < sizeof bad_algos / sizeof bad_algos[0]; i++)
            ok(cltopk_algo_name((cltopk_algo)bad_algos[i]) == NULL, "algo_name(%d) is NULL",
               bad_algos[i]);
        const char *bad[] = {"", "heap", "bitonic2", "AUTOX", "cpu-heap-"};
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            cltopk_algo p = (cltopk_algo)99;
            int st = cltopk_algo_parse(bad[i], &p);
            ok(st != CLTOPK_OK && st < 0 && p == (cltopk_algo)99,
               "algo_parse(\"%s\") fails without writing", bad[i]);
        }
        cltopk_algo p = (cltopk_algo)99;
        is_int(CLTOPK_ERR_INVALID_ARGUMENT, cltopk_algo_parse(NULL, &p), "algo_parse(NULL)");
        is_int(CLTOPK_ERR_INVALID_ARGUMENT, cltopk_algo_parse("auto", NULL),
               "algo_parse(name, NULL)");
    }

    /* close(NULL) is a no-op (a crash would end the plan early) */
    cltopk_close(NULL);
    ok(1, "cltopk_close(NULL) returns");
}

/* the cl_mem entry points, each with its buffers NULL and sizes that would do */
static int b_topk(cltopk_context *c, cl_event *done)
{
    return cltopk_topk_buffer(c, CLTOPK_FLOAT32, NULL, 0, 8, 2, 0, CLTOPK_ALGO_AUTO, NULL, NULL,
                              0, NULL, done);
}
static int b_select(cltopk_context *c, cl_event *done)
{
    return cltopk_select_buffer(c, CLTOPK_FLOAT32, NULL, 0, 8, 2, 0, CLTOPK_ALGO_AUTO, NULL,
                                NULL, 0, NULL, done);
}
static int b_rows(cltopk_context *c, cl_event *done)
{
    return cltopk_topk_rows_buffer(c, CLTOPK_FLOAT32, NULL, 0, 2, 4, 4, 2, 0, CLTOPK_ALGO_AUTO,
                                   NULL, NULL, 0, NULL, done);
}
static int b_segments(cltopk_context *c, cl_event *done)
{
    static const int64_t offs[] = {0, 4, 8};
    return cltopk_topk_segments_buffer(c, CLTOPK_FLOAT32, NULL, 0, 2, offs, 2, 0,
                                       CLTOPK_ALGO_AUTO, NULL, NULL, 0, NULL, done);
}
static int b_knn(cltopk_context *c, cl_event *done)
{
    return cltopk_knn_buffer(c, CLTOPK_L2SQ, NULL, 0, 2, NULL, 0, 8, 4, 2, NULL, NULL, 0, NULL,
                             done);
}
static const struct {
    const char *fn;
    int (*call)(cltopk_context *, cl_event *);
} cl_calls[] = {{"cltopk_topk_buffer", b_topk},
                {"cltopk_select_buffer", b_select},
                {"cltopk_topk_rows_buffer", b_rows},
                {"cltopk_topk_segments_buffer", b_segments},
                {"cltopk_knn_buffer", b_knn}};

/* each cl_mem entry point on ctx (NULL or the cpu context) fails with expect,
 * leaves *done as it was, and says why (with ctx NULL, in the thread's detail,
 * naming the call) */
static void cl_calls_fail(cltopk_context *ctx, int expect, const char *what)
{
    for (size_t i = 0; i < sizeof cl_calls / sizeof cl_calls[0]; i++) {
        cl_event done = EVENT_SENTINEL;
        int st = cl_calls[i].call(ctx, &done);
        const char *detail = cltopk_last_error(ctx);
        if (!ok(st == expect && done == EVENT_SENTINEL &&
                    (ctx ? detail[0] != 0 : strstr(detail, cl_calls[i].fn) != NULL),
                "%s(%s) -> %s, event untouched", cl_calls[i].fn, what, cltopk_strerror(expect)))
            diag("status %d, event %s, detail \"%s\"", st,
                 done == EVENT_SENTINEL ? "untouched" : "written", detail);
    }
}

/* NULL context on every entry point */
static void null_context(void)
{
    float data[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    topk_fails(NULL, "NULL ctx", CLTOPK_FLOAT32, data, 8, 2, 0, CLTOPK_ALGO_AUTO, WANT_BOTH,
               CLTOPK_ERR_INVALID_ARGUMENT, "ctx NULL");
    select_fails(NULL, "NULL ctx", CLTOPK_FLOAT32, data, 8, 2, 0, CLTOPK_ALGO_AUTO, WANT_BOTH,
                 CLTOPK_ERR_INVALID_ARGUMENT, "ctx NULL");
    workspace_fails(NULL, "NULL ctx", CLTOPK_FLOAT32, 8, 2, 0, CLTOPK_ALGO_AUTO,
                    CLTOPK_ERR_INVALID_ARGUMENT, "ctx NULL");
    plan_fails(NULL, "NULL ctx", CLTOPK_FLOAT32, 8, 2, 0, CLTOPK_ERR_INVALID_ARGUMENT,
               "ctx NULL");
    cl_calls_fail(NULL, CLTOPK_ERR_INVALID_ARGUMENT, "ctx NULL");
    cl_context c = (cl_context)&data[1];
    cl_device_id d = (cl_device_id)&data[2];
    cl_command_queue q = (cl_command_queue)&data[3];
    int st = cltopk_get_cl(NULL, &c, &d, &q);
    ok(st == CLTOPK_ERR_INVALID_ARGUMENT && c == (cl_context)&data[1] &&
           d == (cl_device_id)&data[2] && q == (cl_command_queue)&data[3],
       "get_cl(NULL) -> invalid argument, outputs untouched");
    ok(cltopk_device_name(NULL) != NULL, "device_name(NULL) is not NULL");
}

static void cpu_context(void)
{
    cltopk_context *ctx = NULL;
    int st = cltopk_open(&ctx, "cpu");
    if (!ok(st == CLTOPK_OK && ctx, "open(\"cpu\")"))
        bail("cannot open the cpu device: %s", cltopk_last_error(NULL));
    is_string("cpu", cltopk_device_name(ctx), "the cpu device is named \"cpu\"");
    is_string("", cltopk_last_error(ctx), "a fresh context has an empty detail text");

    cl_context c = (cl_context)&st;
    cl_device_id d = (cl_device_id)&st;
    cl_command_queue q = (cl_command_queue)&st;
    st = cltopk_get_cl(ctx, &c, &d, &q);
    ok(st == CLTOPK_ERR_NO_OPENCL && c == (cl_context)&st && d == (cl_device_id)&st &&
           q == (cl_command_queue)&st,
       "get_cl on the cpu device -> no OpenCL, outputs untouched");

    /* cl_mem calls need an OpenCL context */
    cl_calls_fail(ctx, CLTOPK_ERR_NO_OPENCL, "the cpu context");

    /* planning on the cpu device chooses the CPU heap, which needs no scratch */
    cltopk_algo chosen = (cltopk_algo)77;
    st = cltopk_plan(ctx, CLTOPK_FLOAT32, 1000000, 100, 0, &chosen);
    ok(st == CLTOPK_OK && chosen == CLTOPK_ALGO_CPU_HEAP, "plan on the cpu device: cpu-heap");
    chosen = (cltopk_algo)77;
    st = cltopk_plan_buffer(ctx, CLTOPK_FLOAT32, 1000000, 100, 0, &chosen);
    ok(st == CLTOPK_ERR_NO_OPENCL && chosen == (cltopk_algo)77 && cltopk_last_error(ctx)[0],
       "plan_buffer on the cpu device -> no OpenCL, chosen untouched");
    size_t bytes = 77;
    st = cltopk_workspace_size(ctx, CLTOPK_FLOAT64, 1000000, 5000, CLTOPK_SMALLEST,
                               CLTOPK_ALGO_CPU_HEAP, &bytes);
    ok(st == CLTOPK_OK && bytes == 0, "workspace of cpu-heap is 0 device bytes");
    bytes = 77;
    st = cltopk_workspace_size(ctx, CLTOPK_FLOAT64, 1000000, 5000, 0, CLTOPK_ALGO_AUTO, &bytes);
    ok(st == CLTOPK_OK && bytes == 0, "workspace of auto on the cpu device is 0 device bytes");

    bad_calls(ctx, "cpu", 0);
    k_zero(ctx, "cpu", 0);
    benchmark(ctx, "cpu", 0);
    cltopk_close(ctx);
}

static void opening(void)
{
    cltopk_context *ctx = (cltopk_context *)&ctx;
    int st;

    st = cltopk_open(NULL, "cpu");
    ok(st == CLTOPK_ERR_INVALID_ARGUMENT && cltopk_last_error(NULL)[0],
       "open(NULL ctx) -> invalid argument with a detail");

    /* P:D is two plain decimal numbers: no sign, blank or wrap-around to 0:0 */
    const char *nonsense[] = {"no-such-device-xyzzy", "99:99", "0:99", "1:2:3", "cpux",
                              "+0:0", "-4294967296:0", "4294967296:0", " 0:0", "0:0 ", "0:+0"};
    for (size_t i = 0; i < sizeof nonsense / sizeof nonsense[0]; i++) {
        ctx = (cltopk_context *)&ctx;
        st = cltopk_open(&ctx, nonsense[i]);
        int want = CLTOPK_HAVE_OPENCL ? CLTOPK_ERR_NO_DEVICE : CLTOPK_ERR_NO_OPENCL;
        if (!ok(st == want && ctx == NULL && cltopk_last_error(NULL)[0],
                "open(\"%s\") -> %s, ctx NULL, detail set", nonsense[i], cltopk_strerror(want)))
            diag("status %d (%s): %s", st, cltopk_strerror(st), cltopk_last_error(NULL));
        if (st == CLTOPK_OK)
            cltopk_close(ctx);
    }

    /* the names cpu, gpu and auto in any case */
    ctx = NULL;
    st = cltopk_open(&ctx, "CPU");
    ok(st == CLTOPK_OK && ctx && !strcmp(cltopk_device_name(ctx), "cpu"), "open(\"CPU\") is cpu");
    cltopk_close(ctx);

    /* auto: always opens something (a device, else the cpu) */
    unsetenv("CLTOPK_DEVICE");
    ctx = NULL;
    st = cltopk_open(&ctx, "auto");
    ok(st == CLTOPK_OK && ctx, "open(\"auto\")");
    if (ctx)
        diag("auto opened: %s", cltopk_device_name(ctx));
    cltopk_close(ctx);
    ctx = NULL;
    st = cltopk_open(&ctx, NULL);
    ok(st == CLTOPK_OK && ctx, "open(NULL device)");
    cltopk_close(ctx);

    /* the environment, and an explicit argument winning over it */
    setenv("CLTOPK_DEVICE", "cpu", 1);
    ctx = NULL;
    st = cltopk_open(&ctx, NULL);
    ok(st == CLTOPK_OK && ctx && !strcmp(cltopk_device_name(ctx), "cpu"),
       "CLTOPK_DEVICE=cpu makes open(NULL) the cpu device");
    cltopk_close(ctx);
    setenv("CLTOPK_DEVICE", "no-such-device-xyzzy", 1);
    ctx = (cltopk_context *)&ctx;
    st = cltopk_open(&ctx, "auto");
    ok(st != CLTOPK_OK && ctx == NULL, "CLTOPK_DEVICE=nonsense makes open(\"auto\") fail");
    if (st == CLTOPK_OK)
        cltopk_close(ctx);
    ctx = NULL;
    st = cltopk_open(&ctx, "cpu");
    ok(st == CLTOPK_OK && ctx && !strcmp(cltopk_device_name(ctx), "cpu"),
       "open(\"cpu\") wins over CLTOPK_DEVICE=nonsense");
    cltopk_close(ctx);
    unsetenv("CLTOPK_DEVICE");

    /* cltopk_open_cl with NULLs */
    st = cltopk_open_cl(NULL, NULL, NULL, NULL);
    ok(st == CLTOPK_ERR_INVALID_ARGUMENT, "open_cl(NULL ctx) -> invalid argument");
    ctx = (cltopk_context *)&ctx;
    st = cltopk_open_cl(&ctx, NULL, NULL, NULL);
    ok(st == (CLTOPK_HAVE_OPENCL ? CLTOPK_ERR_INVALID_ARGUMENT : CLTOPK_ERR_NO_OPENCL) &&
           ctx == NULL && cltopk_last_error(NULL)[0],
       "open_cl(&ctx, NULL, NULL, NULL) fails, ctx NULL, detail set");

    /* devices */
    size_t count = cltopk_device_count();
    diag("%zu OpenCL device(s)", count);
    int gpus = 0, good = 1;
    for (size_t i = 0; i < count; i++) {
        cltopk_device_info info;
        st = cltopk_device_get(i, &info);
        if (st != CLTOPK_OK) {
            good = 0;
            diag("device_get(%zu): %d", i, st);
            continue;
        }
        gpus += info.is_gpu;
        if (!info.device_name[0] || !info.platform_name[0] || info.local_mem_bytes == 0 ||
            info.max_work_group_size == 0 || info.global_mem_bytes == 0)
            good = 0, diag("device %zu: incomplete information", i);
    }
    ok(good, "device_get succeeds for every i below device_count()");
    {
        cltopk_device_info info;
        memset(&info, 0x5C, sizeof info);
        st = cltopk_device_get(count, &info);
        int untouched = 1;
        for (size_t b = 0; b < sizeof info; b++)
            if (((unsigned char *)&info)[b] != 0x5C)
                untouched = 0;
        ok(st == CLTOPK_ERR_NO_DEVICE && untouched,
           "device_get(device_count()) -> no device, info untouched");
        is_int(CLTOPK_ERR_INVALID_ARGUMENT, cltopk_device_get(0, NULL), "device_get(0, NULL)");
    }

    /* "gpu" */
    ctx = (cltopk_context *)&ctx;
    st = cltopk_open(&ctx, "gpu");
    if (gpus)
        ok(st == CLTOPK_OK && ctx, "open(\"gpu\") with %d GPU(s)", gpus);
    else
        ok(st == (CLTOPK_HAVE_OPENCL ? CLTOPK_ERR_NO_DEVICE : CLTOPK_ERR_NO_OPENCL) &&
               ctx == NULL && cltopk_last_error(NULL)[0],
           "open(\"gpu\") without a GPU fails, ctx NULL, detail set");
    if (st == CLTOPK_OK)
        cltopk_close(ctx);

    /* every device by "P:D", and by a part of its name in other case */
    for (size_t i = 0; i < count; i++) {
        cltopk_device_info info;
        if (cltopk_device_get(i, &info) != CLTOPK_OK)
            continue;
        char pd[32], want[300];
        snprintf(pd, sizeof pd, "%u:%u", info.platform, info.device);
        snprintf(want, sizeof want, "%s / %s", info.platform_name, info.device_name);
        ctx = NULL;
        st = cltopk_open(&ctx, pd);
        ok(st == CLTOPK_OK && ctx && !strcmp(cltopk_device_name(ctx), want),
           "open(\"%s\") opens \"%s\"", pd, want);
        if (ctx) {
            is_string("", cltopk_last_error(ctx), "a fresh OpenCL context has no detail");
            cl_context c = NULL;
            cl_device_id d = NULL;
            cl_command_queue q = NULL;
            st = cltopk_get_cl(ctx, &c, &d, &q);
            ok(st == CLTOPK_OK && c && d && q, "get_cl on %s", pd);
            st = cltopk_get_cl(ctx, NULL, NULL, NULL);
            ok(st == CLTOPK_OK, "get_cl with NULL outputs");
        }
        cltopk_close(ctx);
        /* the device name, upper-cased: a case-insensitive substring */
        char up[128];
        size_t l = strlen(info.device_name);
        for (size_t j = 0; j <= l; j++)
            up[j] = (char)((info.device_name[j] >= 'a' && info.device_name[j] <= 'z')
                               ? info.device_name[j] - 32
                               : info.device_name[j]);
        ctx = NULL;
        st = cltopk_open(&ctx, up);
        ok(st == CLTOPK_OK && ctx && strstr(cltopk_device_name(ctx), info.device_name),
           "open(\"%s\") matches the device name case-insensitively", up);
        cltopk_close(ctx);
    }
}

/* outputs overlapping the input or each other: refused, nothing written (they
 * gave wrong answers with status 0: [1,2,3,4,5] became [5,4,3,4,5]) */
static void overlaps(cltopk_context *ctx, const char *dev, int is_cl)
{
    for (int a = 0; cltopk_algo_name((cltopk_algo)a); a++) {
        int32_t keys[8] = {1, 2, 3, 4, 5, 6, 7, 8}, want[8];
        memcpy(want, keys, sizeof keys);
        int64_t idx[8];
        int st = cltopk_topk(ctx, CLTOPK_INT32, keys, 5, 5, 0, (cltopk_algo)a, keys, idx);
        ok((st == CLTOPK_ERR_INVALID_ARGUMENT || st == CLTOPK_ERR_UNSUPPORTED) &&
               !memcmp(keys, want, sizeof keys),
           "%s %s: out_keys == keys -> refused, input intact (%d)", dev,
           cltopk_algo_name((cltopk_algo)a), st);
        st = cltopk_topk(ctx, CLTOPK_INT32, keys, 8, 2, 0, (cltopk_algo)a, keys + 6, idx);
        ok((st == CLTOPK_ERR_INVALID_ARGUMENT || st == CLTOPK_ERR_UNSUPPORTED) &&
               !memcmp(keys, want, sizeof keys),
           "%s %s: out_keys inside keys -> refused (%d)", dev, cltopk_algo_name((cltopk_algo)a),
           st);
        st = cltopk_select(ctx, CLTOPK_INT32, keys, 8, 0, 0, (cltopk_algo)a, keys + 3, NULL);
        ok((st == CLTOPK_ERR_INVALID_ARGUMENT || st == CLTOPK_ERR_UNSUPPORTED) &&
               !memcmp(keys, want, sizeof keys),
           "%s %s: select's out_key inside keys -> refused (%d)", dev,
           cltopk_algo_name((cltopk_algo)a), st);
    }
    int64_t both[8];
    int32_t keys[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    int st = cltopk_topk(ctx, CLTOPK_INT32, keys, 8, 4, 0, CLTOPK_ALGO_AUTO, (int32_t *)both, both);
    ok(st == CLTOPK_ERR_INVALID_ARGUMENT, "%s: out_keys overlapping out_index -> invalid", dev);
#if CLTOPK_HAVE_OPENCL
    if (!is_cl)
        return;
    cl_context cc;
    cl_command_queue q;
    cltopk_get_cl(ctx, &cc, NULL, &q);
    cl_int err;
    int32_t host[64];
    for (int i = 0; i < 64; i++)
        host[i] = i;
    cl_mem m = clCreateBuffer(cc, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof host, host, &err);
    cl_mem ix = clCreateBuffer(cc, CL_MEM_READ_WRITE, 64 * 8, NULL, &err);
    cl_buffer_region reg = {32 * 4, 32 * 4};
    cl_mem sub = clCreateSubBuffer(m, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &reg, &err);
    /* keys [0, 8) of m, out_keys m: overlap */
    st = cltopk_topk_buffer(ctx, CLTOPK_INT32, m, 0, 8, 4, 0, CLTOPK_ALGO_AUTO, m, ix, 0, NULL,
                            NULL);
    ok(st == CLTOPK_ERR_INVALID_ARGUMENT, "%s: cl_mem out_keys over the input range -> invalid",
       dev);
    /* keys in the sub-buffer [32, 64) of m, out_keys m at [32, 36): overlap through the parent */
    st = cltopk_topk_buffer(ctx, CLTOPK_INT32, m, 32, 32, 4, 0, CLTOPK_ALGO_AUTO, sub, ix, 0,
                            NULL, NULL);
    ok(st == CLTOPK_ERR_INVALID_ARGUMENT,
       "%s: cl_mem out_keys a sub-buffer over the input range -> invalid", dev);
    st = cltopk_select_buffer(ctx, CLTOPK_INT32, m, 0, 8, 2, 0, CLTOPK_ALGO_AUTO, m, NULL, 0,
                              NULL, NULL);
    ok(st == CLTOPK_ERR_INVALID_ARGUMENT, "%s: select_buffer out_key over the input -> invalid",
       dev);
    /* keys [32, 64) of m and out_keys m [0, 4): apart, and answered */
    st = cltopk_topk_buffer(ctx, CLTOPK_INT32, m, 32, 32, 4, 0, CLTOPK_ALGO_AUTO, m, ix, 0, NULL,
                            NULL);
    int32_t back[4] = {0};
    int64_t bi[4] = {0};
    clEnqueueReadBuffer(q, m, CL_TRUE, 0, sizeof back, back, 0, NULL, NULL);
    clEnqueueReadBuffer(q, ix, CL_TRUE, 0, sizeof bi, bi, 0, NULL, NULL);
    ok(st == CLTOPK_OK && back[0] == 63 && back[3] == 60 && bi[0] == 31 && bi[3] == 28,
       "%s: cl_mem output and input apart in one buffer -> answered (%d: %d %d)", dev, st,
       back[0], back[3]);
    clReleaseMemObject(sub);
    clReleaseMemObject(m);
    clReleaseMemObject(ix);
#else
    (void)is_cl;
#endif
}

int main(void)
{
    plan_lazy();
    watchdog(600);
    helpers();
    null_context();
    opening();
    cpu_context();
    {
        cltopk_context *c = NULL;
        if (cltopk_open(&c, "cpu") == CLTOPK_OK)
            overlaps(c, "cpu", 0);
        cltopk_close(c);
    }

    char why[512];
    cltopk_context *cl = NULL;
    if (open_test_cl(&cl, why, sizeof why)) {
        bad_calls(cl, "opencl", 1);
        overlaps(cl, "opencl", 1);
        k_zero(cl, "opencl", 1);
        benchmark(cl, "opencl", 1);
        /* the bitonic limit: k above it is UNSUPPORTED with a detail, nothing written */
        for (int t = 0; t < 6; t++) {
            size_t lim = bitonic_limit(cl, all_types[t]);
            ok(lim >= 1 && (lim & (lim - 1)) == 0, "%s: bitonic limit %zu is a power of two",
               tname(all_types[t]), lim);
            size_t n = lim + 1;
            char *data = bcalloc(n, 8);
            char what[96];
            snprintf(what, sizeof what, "%s bitonic k = limit + 1 = %zu", tname(all_types[t]),
                     lim + 1);
            topk_fails(cl, "opencl", all_types[t], data, n, lim + 1, 0, CLTOPK_ALGO_BITONIC,
                       WANT_BOTH, CLTOPK_ERR_UNSUPPORTED, what);
            snprintf(what, sizeof what, "%s bitonic rank = limit", tname(all_types[t]));
            select_fails(cl, "opencl", all_types[t], data, n, lim, CLTOPK_SMALLEST,
                         CLTOPK_ALGO_BITONIC, WANT_BOTH, CLTOPK_ERR_UNSUPPORTED, what);
            free(data);
        }
        cltopk_close(cl);
    } else {
        skip("OpenCL argument checks: %s", why);
    }
    return tap_done();
}
