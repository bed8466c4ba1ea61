/* sample_filter.c - CLTOPK_ALGO_SAMPLE_FILTER against the oracle, bit for bit, on
 * the OpenCL test device: every type, both directions; uniform, increasing,
 * decreasing, all-equal, five distinct values, bucket killer (and the float
 * specials); k from 1 (the reduction) to the final sort's capacity and beyond
 * it (the band: everything at or above a sampled bound, then the radix select
 * and the device sort of the winners);
 * host data (also in several chunks) and cl_mem data at odd offsets, with keys
 * only, positions only or both, every output poisoned first.  Each exceptional
 * path is forced through CLTOPK_SAMPLE_FILTER and checked to have run (check=):
 * too few survivors, too many for the buffer, spills past a full segment; with
 * a fixed seed, one group, tiny samples.  Inputs laid out against the sampler:
 * every survivor in one region, the top k in the last group's range.  And the
 * strict parsing of the variable. */
#include "testlib.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SF CLTOPK_ALGO_SAMPLE_FILTER

static rng_t rng;

/* host data: top-k for each k of ks (0-terminated) */
static int run_set(cltopk_context *ctx, cltopk_dtype t, int smallest, const void *keys, size_t n,
                   const int64_t *perm, const size_t *ks, char *msg, size_t msglen)
{
    for (size_t i = 0; ks[i]; i++) {
        size_t k = ks[i];
        if (k > n)
            continue;
        int want = (int)((i + n + k) % 3) + 1;
        int expect = CLTOPK_OK;
        char m[768];
        if (!check_topk(ctx, SF, t, keys, n, k, smallest, perm, want, expect, m, sizeof m)) {
            snprintf(msg, msglen, "k = %zu want %d: %s", k, want, m);
            return 0;
        }
    }
    return 1;
}

static void one_set(cltopk_context *ctx, cltopk_dtype t, int smallest, const char *dist,
                    size_t n)
{
    void *keys = bmalloc(n * tsize(t));
    gen_data(t, dist, n, smallest, &rng, keys);
    int64_t *perm = oracle_order(t, keys, n, smallest);
    /* around the final sort's capacity (2048 or 4096 pairs), and past it */
    size_t ks[] = {1, 2, 3, 32, 100, 256, 1 + (size_t)rng_below(&rng, 4096), 2048, 2049, 4096,
                   4097, 9000, 0};
    char msg[1024] = "";
    ok(run_set(ctx, t, smallest, keys, n, perm, ks, msg, sizeof msg), "%s %s %s n=%zu%s%s",
       tname(t), smallest ? "smallest" : "largest", dist, n, msg[0] ? ": " : "", msg);
    free(perm);
    free(keys);
}

/* with CLTOPK_SAMPLE_FILTER=spec: the given k on one data set */
static void with_knobs(cltopk_context *ctx, const char *spec, cltopk_dtype t, int smallest,
                       const char *dist, size_t n, const size_t *ks)
{
    setenv("CLTOPK_SAMPLE_FILTER", spec, 1);
    void *keys = bmalloc(n * tsize(t));
    gen_data(t, dist, n, smallest, &rng, keys);
    int64_t *perm = oracle_order(t, keys, n, smallest);
    char msg[1024] = "";
    ok(run_set(ctx, t, smallest, keys, n, perm, ks, msg, sizeof msg), "%s: %s %s %s n=%zu%s%s",
       spec, tname(t), smallest ? "smallest" : "largest", dist, n, msg[0] ? ": " : "", msg);
    free(perm);
    free(keys);
    unsetenv("CLTOPK_SAMPLE_FILTER");
}

/* the types of the small final sort's cases (sort=64: each type a program of
 * its own, with and without the band): make check maps int32 and uint32 to
 * float32 and uint64 to int64, so that float32, int64 and float64 (both key
 * widths, float and integer keys) build them, some 20 s fewer of POCL builds
 * on 2 cores; make check-full keeps every type */
static cltopk_dtype st64(cltopk_dtype t)
{
    if (test_full())
        return t;
    return t == CLTOPK_INT32 || t == CLTOPK_UINT32 ? CLTOPK_FLOAT32
           : t == CLTOPK_UINT64                    ? CLTOPK_INT64
                                                   : t;
}

/* inputs against the sampler: the best `hot` values all inside [at, at + hot),
 * the rest below them (every survivor in one region) */
static void clustered(cltopk_context *ctx, const char *spec, cltopk_dtype t, size_t n,
                      size_t at, size_t hot, int smallest, const size_t *ks)
{
    if (spec)
        setenv("CLTOPK_SAMPLE_FILTER", spec, 1);
    size_t w = tsize(t);
    char *keys = bmalloc(n * w);
    /* increasing values in the cluster, low values elsewhere; in the order's
     * terms (both directions) by generating for LARGEST and flipping sign
     * ranks through the data itself */
    for (size_t i = 0; i < n; i++) {
        int in = i >= at && i < at + hot;
        uint64_t r = rng_next(&rng);
        int64_t v = in ? 1000000 + (int64_t)(r % 100000) : (int64_t)(r % 1000);
        if (smallest)
            v = -v;
        switch (t) {
        case CLTOPK_FLOAT32: ((float *)keys)[i] = (float)v; break;
        case CLTOPK_FLOAT64: ((double *)keys)[i] = (double)v; break;
        case CLTOPK_INT32: ((int32_t *)keys)[i] = (int32_t)v; break;
        case CLTOPK_INT64: ((int64_t *)keys)[i] = v; break;
        case CLTOPK_UINT32: ((uint32_t *)keys)[i] = (uint32_t)(v + 2000000); break;
        case CLTOPK_UINT64: ((uint64_t *)keys)[i] = (uint64_t)(v + 2000000) << 20; break;
        }
    }
    int64_t *perm = oracle_order(t, keys, n, smallest);
    char msg[1024] = "";
    ok(run_set(ctx, t, smallest, keys, n, perm, ks, msg, sizeof msg),
       "clustered %s: %s %s n=%zu best %zu at %zu%s%s", spec ? spec : "(defaults)", tname(t),
       smallest ? "smallest" : "largest", n, hot, at, msg[0] ? ": " : "", msg);
    free(perm);
    free(keys);
    if (spec)
        unsetenv("CLTOPK_SAMPLE_FILTER");
}

#if CLTOPK_HAVE_OPENCL
/* device buffers: data at an offset, outputs poisoned (with guards past k), the
 * done event */
static void buffers(cltopk_context *ctx, const char *spec, cltopk_dtype t, int smallest,
                    const char *dist, size_t n, size_t off, size_t k, int want)
{
    cl_context c;
    cl_command_queue q;
    if (cltopk_get_cl(ctx, &c, NULL, &q) != CLTOPK_OK)
        bail("cltopk_get_cl failed on an OpenCL context");
    if (spec)
        setenv("CLTOPK_SAMPLE_FILTER", spec, 1);
    size_t w = tsize(t), cap = k + GUARD;
    char *keys = bmalloc((n + off) * w);
    gen_data(t, dist, n + off, smallest, &rng, keys);
    int64_t *perm = oracle_order(t, keys + off * w, n, smallest);
    char *pk = bmalloc(cap * w), *okb = bmalloc(cap * w);
    int64_t *pi = bmalloc(cap * 8), *oib = bmalloc(cap * 8);
    make_poison(t, keys + off * w, perm, k, cap, pk, pi);
    cl_int err;
    cl_mem din = clCreateBuffer(c, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, (n + off) * w, keys,
                                &err);
    cl_mem dk = clCreateBuffer(c, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, cap * w, pk, &err);
    cl_mem di = clCreateBuffer(c, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, cap * 8, pi, &err);
    if (!din || !dk || !di)
        bail("clCreateBuffer failed: %d", (int)err);
    cl_event done = NULL;
    int st = cltopk_topk_buffer(ctx, t, din, off, n, k, smallest ? CLTOPK_SMALLEST : 0, SF,
                                (want & WANT_KEYS) ? dk : NULL, (want & WANT_INDEX) ? di : NULL,
                                0, NULL, &done);
    int good = st == CLTOPK_OK && done;
    char msg[768] = "";
    if (good) {
        good = clWaitForEvents(1, &done) == CL_SUCCESS &&
               clEnqueueReadBuffer(q, dk, CL_TRUE, 0, cap * w, okb, 0, NULL, NULL) ==
                   CL_SUCCESS &&
               clEnqueueReadBuffer(q, di, CL_TRUE, 0, cap * 8, oib, 0, NULL, NULL) == CL_SUCCESS;
        clReleaseEvent(done);
        /* an output not asked for must be untouched: compare it with its poison */
        if (good)
            good = compare_outputs(t, keys + off * w, n, perm, (want & WANT_KEYS) ? k : 0, cap,
                                   okb, NULL, pk, pi, msg, sizeof msg) &&
                   compare_outputs(t, keys + off * w, n, perm, (want & WANT_INDEX) ? k : 0, cap,
                                   NULL, oib, pk, pi, msg, sizeof msg);
    } else {
        snprintf(msg, sizeof msg, "status %d: %s", st, cltopk_last_error(ctx));
    }
    ok(good, "buffer %s: %s %s %s n=%zu offset=%zu k=%zu want %d%s%s", spec ? spec : "",
       tname(t), smallest ? "smallest" : "largest", dist, n, off, k, want, msg[0] ? ": " : "",
       msg);
    clReleaseMemObject(din);
    clReleaseMemObject(dk);
    clReleaseMemObject(di);
    free(keys), free(perm), free(pk), free(pi), free(okb), free(oib);
    if (spec)
        unsetenv("CLTOPK_SAMPLE_FILTER");
}
#endif

/* a malformed CLTOPK_SAMPLE_FILTER: the call is refused with a reason naming it */
static void refused(cltopk_context *ctx, const char *spec)
{
    setenv("CLTOPK_SAMPLE_FILTER", spec, 1);
    float x[300], ok_[4];
    for (int i = 0; i < 300; i++)
        x[i] = (float)i;
    memset(ok_, 0x5A, sizeof ok_);
    int st = cltopk_topk(ctx, CLTOPK_FLOAT32, x, 300, 4, 0, SF, ok_, NULL);
    const char *e = cltopk_last_error(ctx);
    unsigned char *b = (unsigned char *)ok_;
    int untouched = 1;
    for (size_t i = 0; i < sizeof ok_; i++)
        untouched &= b[i] == 0x5A;
    ok(st == CLTOPK_ERR_UNSUPPORTED && strstr(e, "CLTOPK_SAMPLE_FILTER") && untouched,
       "CLTOPK_SAMPLE_FILTER=\"%s\" refused: %s", spec, e);
    unsetenv("CLTOPK_SAMPLE_FILTER");
}

int main(void)
{
    plan_lazy();
    watchdog(900);
    test_quick_builds(); /* POCL builds dominate: see testlib.h */
    rng_init(&rng, test_seed() ^ 0x5F11);
    unsetenv("CLTOPK_SAMPLE_FILTER");
    cltopk_context *ctx;
    char why[512];
    if (!open_test_cl(&ctx, why, sizeof why))
        skip_all("no OpenCL device: %s", why);

    /* every type, both directions, the distributions the issue names */
    static const char *const sdists[] = {"uniform", "increasing", "decreasing", "equal", "five",
                                         "bucket"};
    for (int ti = 0; ti < 6; ti++) {
        cltopk_dtype t = all_types[ti];
        for (int s = 0; s < 2; s++)
            for (int d = 0; d < 6; d++)
                if (test_full() || (ti + d + s) % 2 == 0) /* make check: one direction */
                    one_set(ctx, t, s, sdists[d],
                            d % 2 ? 65536 : 40000 + (size_t)rng_below(&rng, 30000));
    }
    /* the float specials */
    static const char *const fdists[] = {"special", "nan", "denorm", "worst", "worstall"};
    for (int d = 0; d < 5; d++) {
        one_set(ctx, CLTOPK_FLOAT32, d & 1, fdists[d], 50000);
        one_set(ctx, CLTOPK_FLOAT64, !(d & 1), fdists[d], 30000);
    }
    /* sizes: tiny (everything survives), odd, one group's worth, larger */
    {
        size_t ns[] = {1, 2, 3, 5, 127, 128, 129, 1000, 4097, 70001, 1 << 20};
        for (size_t i = 0; i < sizeof ns / sizeof *ns; i++)
            one_set(ctx, all_types[i % 6], (int)(i & 1), sdists[i % 6], ns[i]);
    }
    /* host data in several chunks (merged on the host) */
    setenv("CLTOPK_MAX_CHUNK", "30011", 1);
    one_set(ctx, CLTOPK_FLOAT32, 0, "uniform", 100000);
    one_set(ctx, CLTOPK_INT64, 1, "five", 70000);
    unsetenv("CLTOPK_MAX_CHUNK");

    /* the exceptional paths, forced and checked */
    {
        size_t ks[] = {2, 17, 256, 1000, 0};
        size_t k1[] = {2, 100, 0};
        with_knobs(ctx, "check=normal", CLTOPK_FLOAT32, 0, "uniform", 200000, ks);
        /* without the per-group cut of the survivors before the final selection */
        with_knobs(ctx, "reduce=0,check=normal", CLTOPK_INT64, 1, "few", 150000, ks);
        /* 8-bit digits with 4 histogram copies (where local memory is short) */
        with_knobs(ctx, "digit=8", CLTOPK_FLOAT64, 0, "bucket", 100000, ks);
        with_knobs(ctx, "force=few,check=few", CLTOPK_FLOAT32, 0, "uniform", 100000, ks);
        with_knobs(ctx, "force=few,check=few", CLTOPK_UINT64, 1, "equal", 60000, k1);
        with_knobs(ctx, "force=few,check=few", CLTOPK_INT32, 1, "bucket", 60000, k1);
        with_knobs(ctx, "cap=1,check=overflow", CLTOPK_FLOAT32, 1, "five", 100000, ks);
        with_knobs(ctx, "cap=2,check=overflow", CLTOPK_FLOAT64, 0, "uniform", 80000, k1);
        with_knobs(ctx, "cap=2,check=overflow", CLTOPK_INT64, 0, "equal", 80000, k1);
        /* the fallback on one group, and on several (fbg=: each the best k of
         * a slice of the input, the last to finish merging them): an odd
         * count, more groups than a small input has elements for, slices
         * without a survivor */
        with_knobs(ctx, "force=few,fbg=1,check=few", CLTOPK_FLOAT32, 0, "uniform", 100000, ks);
        with_knobs(ctx, "force=few,fbg=7,check=few", CLTOPK_INT64, 1, "five", 70001, ks);
        with_knobs(ctx, "force=few,fbg=64,check=few", CLTOPK_UINT32, 0, "uniform", 100,
                   (const size_t[]){2, 3, 50, 100, 0});
        with_knobs(ctx, "cap=2,fbg=64,check=overflow", CLTOPK_FLOAT64, 0, "equal", 80000, k1);
        with_knobs(ctx, "cap=2,fbg=3,check=overflow", CLTOPK_INT32, 1, "bucket", 80000, ks);
        /* rank 1: about n / s survivors, fewer than a large k: too few */
        with_knobs(ctx, "rank=1,s=1024,check=few", CLTOPK_FLOAT32, 0, "increasing", 100000,
                   (const size_t[]){1000, 0});
        with_knobs(ctx, "rank=1,s=64", CLTOPK_FLOAT32, 0, "increasing", 100000,
                   (const size_t[]){2, 30, 1000, 0});
        /* segments of one pair: every survivor after the first of a group spills */
        with_knobs(ctx, "lseg=1,check=spill", CLTOPK_FLOAT32, 0, "uniform", 100000, ks);
        with_knobs(ctx, "lseg=1,check=spill", CLTOPK_FLOAT32, 1, "equal", 100000, k1);
        /* everything survives; fixed seeds; one group; a tiny sample; many groups */
        with_knobs(ctx, "force=all,check=normal", CLTOPK_INT32, 0, "uniform", 30000, ks);
        with_knobs(ctx, "seed=0", CLTOPK_UINT32, 0, "uniform", 100000, ks);
        with_knobs(ctx, "seed=0xFFFFFFFFFFFFFFFF,groups=1", CLTOPK_FLOAT32, 1, "decreasing",
                   100000, ks);
        with_knobs(ctx, "s=64,groups=37", CLTOPK_FLOAT32, 0, "bucket", 100000, ks);
        with_knobs(ctx, "s=65536,unr=1", CLTOPK_FLOAT32, 0, "uniform", 300000, ks);
        /* a sample above 65536 (GPUs take n / 2048 up to 262144 of a large n) */
        with_knobs(ctx, "s=262144,unr=8", CLTOPK_FLOAT32, 1, "few", 1 << 20, ks);
        /* the threshold against the host's r-th best of the kept samples
         * (every distribution, 64-bit keys; r above the gather group's size
         * at k = 4000; a survivor buffer of 3; one gather group at s=64) */
        for (int d = 0; d < 6; d++)
            with_knobs(ctx, "s=4096,check=sample", all_types[d], d & 1, sdists[d],
                       100000 + (size_t)d * 4099, (const size_t[]){2, 30, 60, 0});
        with_knobs(ctx, "check=sample", CLTOPK_FLOAT32, 1, "bucket", 200000,
                   (const size_t[]){4000, 0});
        with_knobs(ctx, "cap=3,check=sample", CLTOPK_INT32, 0, "uniform", 100000,
                   (const size_t[]){2, 0});
        with_knobs(ctx, "s=64,check=sample", CLTOPK_UINT32, 0, "five", 100000, ks);
        /* samples as the best of units of 4 to 16 elements (the GPU default:
         * a 32-byte sector), every distribution, the threshold checked; the
         * best values in one region; units cut by the input's ends below
         * (buffers at offsets) */
        for (int d = 0; d < 6; d++)
            with_knobs(ctx, d & 1 ? "unit=4,s=4096,check=sample" : "unit=8,s=4096,check=sample",
                       all_types[d], !(d & 1), sdists[(d + 2) % 6], 90001 + (size_t)d * 4099,
                       (const size_t[]){2, 30, 300, 0});
        with_knobs(ctx, "unit=16,check=normal", CLTOPK_INT32, 0, "equal", 100003, ks);
        with_knobs(ctx, "unit=8,check=normal", CLTOPK_FLOAT64, 1, "increasing", 100000, ks);
        clustered(ctx, "unit=8,check=normal", CLTOPK_FLOAT32, 200000, 150000, 3000, 0, ks);
        /* a smaller final sort: k above it by the band, each path forced
         * (st64: make check on float32, int64 and float64) */
        size_t kb[] = {63, 64, 65, 1000, 5000, 0};
        with_knobs(ctx, "sort=64", st64(CLTOPK_FLOAT32), 0, "uniform", 100000, kb);
        with_knobs(ctx, "sort=64,check=normal", st64(CLTOPK_INT64), 1, "five", 60000,
                   (const size_t[]){65, 3000, 0});
        with_knobs(ctx, "sort=64,check=normal", st64(CLTOPK_FLOAT64), 0, "equal", 60000,
                   (const size_t[]){100, 4097, 0});
        with_knobs(ctx, "sort=64,force=few,check=few", st64(CLTOPK_UINT32), 0, "bucket", 50000,
                   (const size_t[]){65, 2000, 0});
        with_knobs(ctx, "sort=64,cap=10,check=overflow", st64(CLTOPK_FLOAT32), 1, "increasing",
                   50000, (const size_t[]){65, 5000, 0});
        with_knobs(ctx, "sort=64,lseg=1,check=spill", st64(CLTOPK_INT32), 0, "uniform", 50000,
                   (const size_t[]){65, 700, 0});
        /* the partition: the k-th selected, the pairs at or above it kept by one
         * stable pass, those k sorted alone (every type, ties at the k-th: equal
         * and five-value input, k at the ends, the band's paths forced) */
        static const char *const pdists[] = {"uniform", "equal", "five", "increasing",
                                             "decreasing", "bucket"};
        /* (make check: the first three, uniform, equal and five-value input;
         * check-full: all six) */
        for (int ti = 0; ti < (test_full() ? 6 : 3); ti++)
            with_knobs(ctx, "sort=64,part=65", st64(all_types[ti]), ti & 1, pdists[ti],
                       40000 + (size_t)ti * 777, (const size_t[]){64, 65, 3001, 39999, 0});
        /* (and never: the band's winners with their positions' bits, at k = n / 2) */
        with_knobs(ctx, "sort=64,part=4294967294", st64(CLTOPK_FLOAT32), 1, "few", 30000,
                   (const size_t[]){65, 15000, 0});
        with_knobs(ctx, "sort=64,part=1", st64(CLTOPK_FLOAT32), 0, "equal", 30000,
                   (const size_t[]){65, 15000, 30000, 0});
        with_knobs(ctx, "sort=64,part=1", st64(CLTOPK_UINT64), 1, "five", 30000,
                   (const size_t[]){100, 29999, 0});
        with_knobs(ctx, "sort=64,part=1,force=few", st64(CLTOPK_INT32), 0, "bucket", 30000,
                   (const size_t[]){65, 20000, 0});
        with_knobs(ctx, "sort=64,part=1,small=0,bs=64", st64(CLTOPK_FLOAT64), 1, "nan", 30000,
                   (const size_t[]){66, 12345, 0});
        /* the partition's one-bit pass and the sort after it with several
         * histogram groups a scatter group (CLTOPK_SORT hs=) */
        setenv("CLTOPK_SORT", "hs=3", 1);
        with_knobs(ctx, "sort=64,part=65", st64(CLTOPK_FLOAT32), 0, "five", 40001,
                   (const size_t[]){65, 20000, 40001, 0});
        unsetenv("CLTOPK_SORT");
    }

    /* against the sampler: every survivor in one region, the top k at the end
     * (the last group's tiles), with spills and one group */
    {
        size_t ks[] = {1, 5, 256, 1000, 0};
        size_t n = 1 << 18;
        clustered(ctx, NULL, CLTOPK_FLOAT32, n, 1000, 20000, 0, ks);
        clustered(ctx, "lseg=16,check=normal", CLTOPK_FLOAT32, n, 70000, 40000, 0, ks);
        clustered(ctx, NULL, CLTOPK_INT64, n, n - 3000, 3000, 1, ks);
        clustered(ctx, "groups=1", CLTOPK_UINT32, n, n - 1, 1, 0, (const size_t[]){1, 2, 0});
        clustered(ctx, "force=few,fbg=5,check=few", CLTOPK_FLOAT32, n, n - 3000, 3000, 0, ks);
        clustered(ctx, NULL, CLTOPK_FLOAT64, n - 7, n - 7 - 700, 700, 0, ks);
    }

#if CLTOPK_HAVE_OPENCL
    /* device data at offsets that leave a head and a tail outside the vectors */
    for (int ti = 0; ti < 6; ti++) {
        cltopk_dtype t = all_types[ti];
        buffers(ctx, NULL, t, ti & 1, sdists[ti], 50001, (size_t)ti, 100, WANT_BOTH);
        buffers(ctx, NULL, t, !(ti & 1), sdists[(ti + 3) % 6], 65536, 3, 1, WANT_KEYS);
        buffers(ctx, NULL, t, ti & 1, "uniform", 40000, 1, 2048, WANT_INDEX);
        buffers(ctx, NULL, t, !(ti & 1), sdists[(ti + 1) % 6], 40000, 5, 5000, WANT_BOTH);
    }
    buffers(ctx, "force=few,check=few", CLTOPK_FLOAT32, 0, "nan", 50000, 7, 300, WANT_BOTH);
    buffers(ctx, "cap=5,check=overflow", CLTOPK_INT64, 1, "bucket", 20011, 3, 200, WANT_KEYS);
    buffers(ctx, "force=few,fbg=3,check=few", CLTOPK_FLOAT64, 1, "five", 30001, 5, 40, WANT_BOTH);
    buffers(ctx, "lseg=1,check=spill", CLTOPK_UINT32, 0, "five", 30000, 2, 50, WANT_INDEX);
    buffers(ctx, NULL, CLTOPK_FLOAT32, 0, "uniform", 3, 1, 2, WANT_BOTH);
    buffers(ctx, "unit=8,check=normal", CLTOPK_FLOAT32, 0, "uniform", 50001, 3, 300, WANT_BOTH);
    buffers(ctx, "unit=4,check=normal", CLTOPK_FLOAT64, 1, "decreasing", 30001, 1, 100, WANT_BOTH);
    buffers(ctx, "unit=16,check=normal", CLTOPK_INT32, 0, "five", 20011, 7, 64, WANT_INDEX);
#endif

    /* strict parsing */
    refused(ctx, "bogus=1");
    refused(ctx, "unit=3");
    refused(ctx, "unit=32");
    refused(ctx, "s=10");
    refused(ctx, "s=2000000");
    refused(ctx, "rank=0");
    refused(ctx, "cap=0");
    refused(ctx, "lseg=0");
    refused(ctx, "wg=48");
    refused(ctx, "unr=17");
    refused(ctx, "force=maybe");
    refused(ctx, "check=sometimes");
    refused(ctx, "sort=100");
    refused(ctx, "seed=-1");
    refused(ctx, "seed");
    refused(ctx, "s=1e3");
    refused(ctx, "reduce=2");
    refused(ctx, "digit=9");
    refused(ctx, "profile=yes");
    refused(ctx, "bs=10");
    refused(ctx, "dense=maybe");
    refused(ctx, "small=-1");
    refused(ctx, "fbg=0");
    refused(ctx, "fbg=65537");

    cltopk_close(ctx);
    return tap_done();
}
