/* radix.c - the radix algorithms (RADIX_SELECT, SBP_RADIX) against the oracle,
 * bit for bit, on the OpenCL test device (the research note on SBP, section
 * 8.4): every type, both directions; all-equal, few distinct, narrow, bucket
 * killer, sorted both ways, Zipf-like, NaN/inf/-0/denormals, the sentinel's
 * key (worst, worstall); k = 1, 2, C, C + 1, random, n - 1, n; ranks 0, 1,
 * n / 2, n - 1 and random; n = 1, below one tile, tile - 1, tile, tile + 1,
 * primes, several levels.  Outputs keys only, positions only or both, each
 * poisoned first.  AUTO's answer is compared with every named algorithm's. */
#include "testlib.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static rng_t rng;

/* the per-tile candidate count of SBP radix (lib/algo_sbp_radix.c) and its
 * tile sizes, to put k and n at the edges */
#define SBP_C 128

/* make check: the SBP algorithms on these types only (float and integer keys,
 * both widths; each type is a set of programs, the tree's some 4 s each to
 * build with POCL on 2 cores); make check-full: every type */
static const cltopk_dtype sbp_types[3] = {CLTOPK_FLOAT32, CLTOPK_FLOAT64, CLTOPK_INT64};

static const char *const rdists[] = {"uniform", "equal", "few", "narrow", "bucket",
                                     "increasing", "decreasing", "special", "nan", "denorm",
                                     "worst", "worstall", "bits", "zipf", NULL};

/* Zipf-like: value v drawn with probability ~ 1/v (heavy-tailed duplicates) */
static void zipf(cltopk_dtype t, size_t n, void *out)
{
    for (size_t i = 0; i < n; i++) {
        double u = ((double)(rng_next(&rng) >> 11) + 1.0) / 9007199254740993.0;
        double v = floor(1.0 / u); /* P(v >= x) ~ 1/x */
        if (v > 1e9)
            v = 1e9;
        switch (t) {
        case CLTOPK_FLOAT32: ((float *)out)[i] = (float)v; break;
        case CLTOPK_FLOAT64: ((double *)out)[i] = v; break;
        case CLTOPK_INT32: ((int32_t *)out)[i] = (rng_next(&rng) & 1) ? (int32_t)v : -(int32_t)v; break;
        case CLTOPK_UINT32: ((uint32_t *)out)[i] = (uint32_t)v; break;
        case CLTOPK_INT64: ((int64_t *)out)[i] = (rng_next(&rng) & 1) ? (int64_t)v : -(int64_t)v; break;
        case CLTOPK_UINT64: ((uint64_t *)out)[i] = (uint64_t)v << 20; break;
        }
    }
}

static void make(cltopk_dtype t, const char *dist, size_t n, int smallest, void *keys)
{
    if (!strcmp(dist, "zipf"))
        zipf(t, n, keys);
    else
        gen_data(t, dist, n, smallest, &rng, keys);
}

/* the largest k algo accepts for this type (powers of two, then bisection) */
static size_t limit_of(cltopk_context *ctx, cltopk_algo algo, cltopk_dtype t)
{
    size_t lo = 0, hi = (size_t)1 << 28;
    while (lo < hi) {
        size_t mid = lo + (hi - lo + 1) / 2, bytes = 0;
        if (cltopk_workspace_size(ctx, t, mid, mid, 0, algo, &bytes) == CLTOPK_OK)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

static size_t add(size_t *ks, size_t nk, size_t k, size_t n)
{
    if (k >= 1 && k <= n)
        ks[nk++] = k;
    return nk;
}

/* one data set: top-k for several k and selection at several ranks */
static void one_set(cltopk_context *ctx, cltopk_algo algo, cltopk_dtype t, int smallest,
                    const char *dist, size_t n)
{
    size_t w = tsize(t);
    void *keys = bmalloc(n * w);
    make(t, dist, n, smallest, keys);
    int64_t *perm = oracle_order(t, keys, n, smallest);
    size_t lim = limit_of(ctx, algo, t);
    size_t ks[16], nk = 0;
    nk = add(ks, nk, 1, n);
    nk = add(ks, nk, 2, n);
    nk = add(ks, nk, SBP_C, n);
    nk = add(ks, nk, SBP_C + 1, n);
    nk = add(ks, nk, 1 + (size_t)rng_below(&rng, n), n);
    nk = add(ks, nk, n - 1, n);
    nk = add(ks, nk, n, n);
    nk = add(ks, nk, lim, n);
    nk = add(ks, nk, lim + 1, n);
    nk = add(ks, nk, 1 + (size_t)rng_below(&rng, lim < n ? lim : n), n);
    char msg[1024] = "";
    int good = 1;
    size_t calls = 0;
    for (size_t i = 0; i < nk && good; i++) {
        int want = (int)((i + n) % 3) + 1;
        calls++;
        int expect = ks[i] > lim ? CLTOPK_ERR_UNSUPPORTED : CLTOPK_OK;
        if (!check_topk(ctx, algo, t, keys, n, ks[i], smallest, perm, want, expect, msg,
                        sizeof msg)) {
            good = 0;
            diag_after("top-k k = %zu want %d: %s", ks[i], want, msg);
        }
    }
    size_t rk[7] = {0, n / 2, n - 1, (size_t)rng_below(&rng, n), 1, lim - 1, lim};
    for (size_t i = 0; i < 7 && good; i++) {
        if (rk[i] >= n)
            continue;
        int want = (int)((i + n) % 3) + 1;
        calls++;
        int expect = rk[i] >= lim ? CLTOPK_ERR_UNSUPPORTED : CLTOPK_OK;
        if (!check_select(ctx, algo, t, keys, n, rk[i], smallest, perm, want, expect, msg,
                          sizeof msg)) {
            good = 0;
            diag_after("select rank = %zu want %d: %s", rk[i], want, msg);
        }
    }
    ok(good, "%s %s %s %s n=%zu (%zu calls, limit %zu)", cltopk_algo_name(algo), tname(t),
       smallest ? "smallest" : "largest", dist, n, calls, lim);
    free(perm);
    free(keys);
}

/* AUTO's answer equals each named algorithm's, byte for byte */
static void auto_equals(cltopk_context *ctx, const cltopk_algo *algos, int na, cltopk_dtype t,
                        const char *dist, size_t n, size_t k, int smallest)
{
    size_t w = tsize(t);
    void *keys = bmalloc(n * w);
    make(t, dist, n, smallest, keys);
    void *ak = bmalloc(k * w), *bk = bmalloc(k * w);
    int64_t *ai = bmalloc(k * 8), *bi = bmalloc(k * 8);
    unsigned fl = smallest ? CLTOPK_SMALLEST : 0;
    int st = cltopk_topk(ctx, t, keys, n, k, fl, CLTOPK_ALGO_AUTO, ak, ai);
    int good = st == CLTOPK_OK, compared = 0;
    for (int i = 0; i < na && good; i++) {
        memset(bk, 0xA5, k * w);
        memset(bi, 0xA5, k * 8);
        int s2 = cltopk_topk(ctx, t, keys, n, k, fl, algos[i], bk, bi);
        if (s2 == CLTOPK_ERR_UNSUPPORTED)
            continue; /* e.g. bitonic above its limit */
        compared++;
        if (s2 != CLTOPK_OK || memcmp(ak, bk, k * w) || memcmp(ai, bi, k * 8)) {
            good = 0;
            diag_after("%s differs from auto (status %d: %s)", cltopk_algo_name(algos[i]), s2,
                       cltopk_last_error(ctx));
        }
    }
    ok(good && compared > 0, "auto == every named algorithm (%d compared): %s %s %s n=%zu k=%zu",
       compared, tname(t), smallest ? "smallest" : "largest", dist, n, k);
    free(keys), free(ak), free(bk), free(ai), free(bi);
}

#if CLTOPK_HAVE_OPENCL
/* device buffers: data at an offset, results in cl_mem, the done event */
static void buffers(cltopk_context *ctx, cltopk_algo algo, cltopk_dtype t, int smallest,
                    const char *dist, size_t n, size_t off, size_t k)
{
    cl_context c;
    cl_command_queue q;
    if (cltopk_get_cl(ctx, &c, NULL, &q) != CLTOPK_OK)
        bail("cltopk_get_cl failed on an OpenCL context");
    size_t w = tsize(t);
    char *keys = bmalloc((n + off) * w);
    make(t, dist, n + off, smallest, keys);
    int64_t *perm = oracle_order(t, keys + off * w, n, smallest);
    cl_int err;
    cl_mem din = clCreateBuffer(c, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, (n + off) * w, keys,
                                &err);
    cl_mem dk = clCreateBuffer(c, CL_MEM_READ_WRITE, k * w, NULL, &err);
    cl_mem di = clCreateBuffer(c, CL_MEM_READ_WRITE, k * 8, NULL, &err);
    if (!din || !dk || !di)
        bail("clCreateBuffer failed: %d", (int)err);
    cl_event done = NULL;
    int st = cltopk_topk_buffer(ctx, t, din, off, n, k, smallest ? CLTOPK_SMALLEST : 0, algo, dk,
                                di, 0, NULL, &done);
    char *ok_ = bmalloc(k * w);
    int64_t *oi = bmalloc(k * 8);
    int good = st == CLTOPK_OK && done;
    if (k > limit_of(ctx, algo, t)) /* above the algorithm's limit: refused */
        good = st == CLTOPK_ERR_UNSUPPORTED && !done && cltopk_last_error(ctx)[0];
    else
    if (good) {
        good = clWaitForEvents(1, &done) == CL_SUCCESS &&
               clEnqueueReadBuffer(q, dk, CL_TRUE, 0, k * w, ok_, 0, NULL, NULL) == CL_SUCCESS &&
               clEnqueueReadBuffer(q, di, CL_TRUE, 0, k * 8, oi, 0, NULL, NULL) == CL_SUCCESS;
        clReleaseEvent(done);
    }
    for (size_t i = 0; good && st == CLTOPK_OK && i < k; i++)
        good = oi[i] == perm[i] && !memcmp(ok_ + i * w, keys + (off + (size_t)perm[i]) * w, w);
    ok(good, "%s buffer: %s %s %s n=%zu offset=%zu k=%zu (status %d)", cltopk_algo_name(algo),
       tname(t), smallest ? "smallest" : "largest", dist, n, off, k, st);
    clReleaseMemObject(din);
    clReleaseMemObject(dk);
    clReleaseMemObject(di);
    free(keys), free(perm), free(ok_), free(oi);
}
#endif

/* the planner: cltopk_explain agrees with cltopk_plan, names every model, and
 * with the constants set below (a fast device) picks device algorithms */
static void planner(cltopk_context *ctx, int is_cl)
{
    char buf[4096];
    static const size_t ks[] = {1, 16, 256, 5000, 500000};
    for (size_t i = 0; i < sizeof ks / sizeof *ks; i++) {
        cltopk_algo chosen = (cltopk_algo)77;
        int st = cltopk_plan(ctx, CLTOPK_FLOAT32, 1000000, ks[i], 0, &chosen);
        int se = cltopk_explain(ctx, CLTOPK_FLOAT32, 1000000, ks[i], 0, 0, buf, sizeof buf);
        char want[64];
        snprintf(want, sizeof want, "choice: %s\n",
                 cltopk_algo_name(chosen) ? cltopk_algo_name(chosen) : "?");
        /* the CPU row: the CPU planner's choice (heap for k <= 4096 and k <=
         * n / 64, else cpu-radix) */
        cltopk_algo cpu_pick = ks[i] <= 4096 ? CLTOPK_ALGO_CPU_HEAP : CLTOPK_ALGO_CPU_RADIX;
        int good = st == CLTOPK_OK && se == CLTOPK_OK && strstr(buf, want) &&
                   strstr(buf, cltopk_algo_name(cpu_pick)) &&
                   (!is_cl || (strstr(buf, "radix-select") && strstr(buf, "sbp-radix") &&
                               strstr(buf, "bitonic")));
        /* a fast device (CLTOPK_PLAN_CONSTS): never the CPU heap; above the SBP
         * and bitonic limits sample-filter's band, the radix select or (for k
         * near n) the sort */
        if (is_cl)
            good = good && chosen != CLTOPK_ALGO_CPU_HEAP &&
                   (ks[i] < 5000 || chosen == CLTOPK_ALGO_RADIX_SELECT ||
                    chosen == CLTOPK_ALGO_SAMPLE_FILTER || chosen == CLTOPK_ALGO_SORT);
        else
            good = good && chosen == cpu_pick;
        if (!ok(good, "%s: explain k = %zu agrees with plan (%s)", is_cl ? "opencl" : "cpu",
                ks[i], cltopk_algo_name(chosen) ? cltopk_algo_name(chosen) : "?"))
            diag("%s", buf);
    }
    ok(cltopk_explain(ctx, CLTOPK_FLOAT32, 10, 0, 0, 0, buf, sizeof buf) == CLTOPK_ERR_K_RANGE &&
           cltopk_explain(ctx, CLTOPK_FLOAT32, 10, 11, 0, 0, buf, sizeof buf) ==
               CLTOPK_ERR_K_RANGE &&
           cltopk_explain(ctx, (cltopk_dtype)9, 10, 1, 0, 0, buf, sizeof buf) ==
               CLTOPK_ERR_BAD_TYPE &&
           cltopk_explain(ctx, CLTOPK_FLOAT32, 10, 1, 0, 0, NULL, 5) ==
               CLTOPK_ERR_INVALID_ARGUMENT,
       "%s: explain rejects k = 0, k > n, a bad type, a NULL buffer", is_cl ? "opencl" : "cpu");
    /* truncation keeps a terminated string */
    memset(buf, 'x', sizeof buf);
    ok(cltopk_explain(ctx, CLTOPK_FLOAT32, 1000, 10, 0, 0, buf, 16) == CLTOPK_OK &&
           strlen(buf) == 15,
       "%s: explain truncates to the buffer", is_cl ? "opencl" : "cpu");
}

int main(void)
{
    plan_lazy();
    watchdog(1500);
    test_quick_builds(); /* POCL builds dominate: see testlib.h */
    rng_init(&rng, test_seed() ^ 0x4AD1);
    /* the planner's constants: a fast device and a slow host, so that AUTO
     * runs the device algorithms here too (the disk cache is not touched) */
    setenv("CLTOPK_PLAN_CONSTS", "bw=1e12,launch=1e-7,lrate=1e13,h2d=1e12,cpubw=1e8", 1);

    cltopk_context *ctx;
    char why[512];
    int have_cl = open_test_cl(&ctx, why, sizeof why);
    /* the "cpu" device: the planner chooses the CPU heap (the radix algorithms
     * refusing it are in t/args.t) */
    {
        cltopk_context *cpu;
        if (!ok(cltopk_open(&cpu, "cpu") == CLTOPK_OK, "open the cpu device"))
            bail("%s", cltopk_last_error(NULL));
        planner(cpu, 0);
        cltopk_close(cpu);
    }
    if (!have_cl) {
        diag("no OpenCL parts: %s", why);
        return tap_done();
    }
    planner(ctx, 1);
    cltopk_algo algos[4];
    int na = 0;
    algos[na++] = CLTOPK_ALGO_RADIX_SELECT;
    {
        /* the SBP algorithms this version has (the tree, once registered, gets the
         * same checks) */
        float x[4] = {1, 2, 3, 4}, o;
        const cltopk_algo sbp[2] = {CLTOPK_ALGO_SBP_RADIX, CLTOPK_ALGO_SBP_TREE};
        for (int i = 0; i < 2; i++)
            if (cltopk_topk(ctx, CLTOPK_FLOAT32, x, 4, 1, 0, sbp[i], &o, NULL) == CLTOPK_OK)
                algos[na++] = sbp[i];
    }
    for (int a = 0; a < na; a++) {
        /* every distribution on every type, a few thousand elements (several
         * tiles), both directions */
        int di = 0;
        for (size_t ti = 0; ti < 6; ti++) {
            cltopk_dtype t = all_types[ti];
            /* make check: the SBP algorithms on float32, float64 and int64
             * (sbp_types), radix select on all */
            int some = test_full() || algos[a] == CLTOPK_ALGO_RADIX_SELECT || ti == 0 ||
                       ti == 1 || ti == 4;
            for (int s = 0; s < 2; s++)
                for (int j = 0; j < 3; j++, di++) {
                    const char *d = rdists[(size_t)di % (sizeof rdists / sizeof *rdists - 1)];
                    if (some && (test_full() || j != 2)) /* make check: two of three */
                        one_set(ctx, algos[a], t, s, d, 3000 + (size_t)rng_below(&rng, 9000));
                }
        }
        /* every distribution on float32 both ways */
        for (int d = 0; rdists[d]; d++)
            for (int s = 0; s < 2; s++)
                one_set(ctx, algos[a], CLTOPK_FLOAT32, s, rdists[d], 5000);
        /* sizes at the edges: one element, below a tile, tiles +-1, primes, levels */
        size_t ns[] = {1, 2, 3, 127, 129, 1021, 1023, 1024, 1025, 2047, 2049, 4095, 4097, 7919,
                       65537, 300007};
        for (size_t i = 0; i < sizeof ns / sizeof *ns; i++) {
            const char *d = rdists[i % (sizeof rdists / sizeof *rdists - 1)];
            /* make check: the SBP algorithms on the three types above */
            cltopk_dtype t = test_full() || algos[a] == CLTOPK_ALGO_RADIX_SELECT
                                 ? all_types[i % 6]
                                 : sbp_types[i % 3];
            /* make check: radix select at 100003 rather than 300007 (its
             * unoptimised kernels on POCL took 4 s there); its passes over
             * several groups are the same */
            size_t n = !test_full() && algos[a] == CLTOPK_ALGO_RADIX_SELECT && ns[i] > 100003
                           ? 100003
                           : ns[i];
            one_set(ctx, algos[a], t, (int)(i & 1), d, n);
        }
    }
#if CLTOPK_HAVE_OPENCL
    for (int a = 0; a < na; a++) {
        buffers(ctx, algos[a], CLTOPK_FLOAT32, 0, "nan", 50000, 7, 100);
        buffers(ctx, algos[a], CLTOPK_INT64, 1, "bucket", 20011, 3, 200);
        buffers(ctx, algos[a], CLTOPK_UINT32, 0, "few", 4097, 0, 1);
    }
#endif
    /* other kernel configurations (the tuning knobs of the benchmark): one
     * element a work-item a round (many rounds a group: the barrier pattern of
     * the emitting histogram), narrowing only above half, 3 histogram copies;
     * a first digit of 12 or 11 bits (digits that straddle the key and the
     * position);
     * the last group not choosing (rs_choose launches), a filter and the next
     * histogram in one launch over the whole input (fuse=1; the default fuses
     * them only from the band's candidates); every histogram launch's groups
     * taking part (act=0) or only those with elements (act=1, the CPU default)
     * (the kernels' options repeat earlier sets' where they can: on POCL each
     * new set is a build of seconds);
     * SBP with 11-bit digits, and small groups with the atomic OR/AND */
    static const char *const rconf[] = {"ipt=1,narrow=2,hc=3", "narrow=0", "first=12,pre=1",
                                        "first=11,hc=2,ipt=2", "gpc=1,ipt=2",
                                        "lastg=0,ipt=2", "lastg=0,first=12,pre=1,hc=2",
                                        "fuse=1,ipt=1,narrow=2,hc=3", "fuse=1,narrow=0",
                                        "fuse=1,gpc=1,ipt=2", "act=0,fuse=1,ipt=2",
                                        "act=1,ipt=2", "act=1,fuse=1,first=12,pre=1"};
    for (size_t c = 0; c < sizeof rconf / sizeof *rconf; c++) {
        /* make check: every third set (each a build of seconds on POCL);
         * check-full: all of them */
        if (!test_full() && c % 3)
            continue;
        setenv("CLTOPK_RADIX", rconf[c], 1);
        diag("CLTOPK_RADIX=%s", rconf[c]);
        one_set(ctx, CLTOPK_ALGO_RADIX_SELECT, CLTOPK_FLOAT32, 1, "few", 3946);
        one_set(ctx, CLTOPK_ALGO_RADIX_SELECT, CLTOPK_INT64, 0, "bucket", 20000);
        one_set(ctx, CLTOPK_ALGO_RADIX_SELECT, CLTOPK_FLOAT32, 0, "uniform", 30011);
    }
    unsetenv("CLTOPK_RADIX");
    for (int a = 0; a < na; a++) {
        if (algos[a] != CLTOPK_ALGO_SBP_RADIX)
            continue;
        static const char *const sconf[] = {"digit=11", "wg=64,ipt=4,reduce=0,c=16"};
        for (size_t c = 0; c < sizeof sconf / sizeof *sconf; c++) {
            setenv("CLTOPK_SBP", sconf[c], 1);
            diag("CLTOPK_SBP=%s", sconf[c]);
            one_set(ctx, algos[a], CLTOPK_FLOAT32, 1, "increasing", 30011);
            one_set(ctx, algos[a], CLTOPK_UINT64, 0, "bucket", 20000);
            one_set(ctx, algos[a], CLTOPK_INT32, 0, "few", 5000);
        }
        unsetenv("CLTOPK_SBP");
    }
    /* AUTO against every named algorithm that runs here */
    cltopk_algo named[8];
    int nn = 0;
    named[nn++] = CLTOPK_ALGO_BITONIC;
    named[nn++] = CLTOPK_ALGO_CPU_HEAP;
    for (int a = 0; a < na; a++)
        named[nn++] = algos[a];
    size_t aks[] = {1, 16, 128, 129, 1000, 50000};
    for (size_t i = 0; i < sizeof aks / sizeof *aks; i++) /* make check: sbp_types */
        auto_equals(ctx, named, nn, test_full() ? all_types[i % 6] : sbp_types[i % 3],
                    rdists[i % 5], 100000, aks[i], (int)(i & 1));
    cltopk_close(ctx);
    return tap_done();
}
