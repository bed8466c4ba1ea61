/* band.c - selection at any rank by sample-filter's band (a sampled band of
 * the input around the rank, one filtering read, the radix select of the band)
 * and by radix-select, against the oracle, bit for bit, on the OpenCL test
 * device: every type, both directions; uniform, increasing, decreasing,
 * all-equal, five distinct values, bucket killer and the float specials; ranks
 * 0, 1, n / 2, n - 2, n - 1 and random ones; host data (also in several chunks)
 * and cl_mem data at odd offsets with the key, the position or both, every
 * output poisoned first.  Each path is forced through CLTOPK_SAMPLE_FILTER and
 * checked to have run (check=): the band served, the rank outside the band
 * (force=few), the band overflowing its buffer (cap=, force=all), spills past
 * full segments; small bands finished by one group or (small=0) by the radix
 * select; the dense and the sparse band filters; inputs too small to sample;
 * the band's bounds through the bracket of the sorted sample runs (bm=,
 * check=bracket), also for the top-k's band.  And AUTO's selection plan,
 * with CLTOPK_PLAN_SELECT. */
#include "testlib.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SF CLTOPK_ALGO_SAMPLE_FILTER
#define RS CLTOPK_ALGO_RADIX_SELECT

static rng_t rng;

/* the ranks of a set: the ends, the middle and nrandom random ones; with
 * small_ranks set, ranks about the final sort's capacity instead (the ranks
 * that seltop=1 serves as a top-k, and the first it does not) */
static int small_ranks;
static size_t ranks_of(size_t n, size_t *r, int nrandom)
{
    size_t m = 0;
    size_t fixed[] = {0, 1, n / 2, n - 2, n - 1};
    size_t sfixed[] = {0, 1, 2, 31, 1023, 2047, 4095, 4096};
    const size_t *f = small_ranks ? sfixed : fixed;
    size_t nf = small_ranks ? 8 : 5;
    for (size_t i = 0; i < nf; i++)
        if (f[i] < n)
            r[m++] = f[i];
    for (int i = 0; i < nrandom; i++)
        r[m++] = (size_t)rng_below(&rng, n);
    return m;
}

/* host data: algo at every rank of the set, with `spec` in CLTOPK_SAMPLE_FILTER */
static void host_set(cltopk_context *ctx, cltopk_algo algo, const char *spec, cltopk_dtype t,
                     int smallest, const char *dist, size_t n, int nrandom)
{
    if (spec)
        setenv("CLTOPK_SAMPLE_FILTER", spec, 1);
    char *keys = bmalloc(n * tsize(t));
    gen_data(t, dist, n, smallest, &rng, keys);
    int64_t *perm = oracle_order(t, keys, n, smallest);
    size_t r[16];
    size_t m = ranks_of(n, r, nrandom);
    char msg[1024] = "";
    int good = 1;
    for (size_t i = 0; i < m && good; i++)
        if (!check_select(ctx, algo, t, keys, n, r[i], smallest, perm, (int)(i % 3) + 1,
                          CLTOPK_OK, msg, sizeof msg)) {
            good = 0;
            diag_after("rank %zu: %s", r[i], msg);
        }
    ok(good, "%s%s%s: select %s %s %s n=%zu (%zu ranks)", cltopk_algo_name(algo),
       spec ? " " : "", spec ? spec : "", tname(t), smallest ? "smallest" : "largest", dist, n,
       m);
    free(keys);
    free(perm);
    if (spec)
        unsetenv("CLTOPK_SAMPLE_FILTER");
}

/* host data: a top-k of k by algo with `spec`, against the oracle (the band's
 * top-k: k above the final sort's capacity) */
static void topk_set(cltopk_context *ctx, cltopk_algo algo, const char *spec, cltopk_dtype t,
                     int smallest, const char *dist, size_t n, size_t k)
{
    setenv("CLTOPK_SAMPLE_FILTER", spec, 1);
    char *keys = bmalloc(n * tsize(t));
    gen_data(t, dist, n, smallest, &rng, keys);
    int64_t *perm = oracle_order(t, keys, n, smallest);
    char msg[1024] = "";
    int good = check_topk(ctx, algo, t, keys, n, k, smallest, perm, WANT_BOTH, CLTOPK_OK, msg,
                          sizeof msg);
    if (!good)
        diag_after("%s", msg);
    ok(good, "%s %s: top-k %s %s %s n=%zu k=%zu", cltopk_algo_name(algo), spec, tname(t),
       smallest ? "smallest" : "largest", dist, n, k);
    free(keys);
    free(perm);
    unsetenv("CLTOPK_SAMPLE_FILTER");
}

/* The band's bounds through the bracket (bm=): the subsample of every m-th
 * sample of each sorted run, the bracket of samples between the two pairs it
 * gives, the bounds selected among those (checked to have run, check=bracket),
 * against the oracle: every type, both directions, the distributions with
 * ties (all-equal, few and five distinct, sorted, the bucket killer), strides
 * 2, 4 and 16, samples that fill their runs and samples that leave the last
 * run padded, and the top-k's band (no upper bound). */
static void bracket_sets(cltopk_context *ctx)
{
    static const char *const bdists[] = {"uniform", "equal",  "few",   "increasing",
                                         "bucket",  "five",   "decreasing"};
    static const char *const bspecs[] = {
        "bs=4096,bm=16,check=bracket", "bs=1000,bm=4,check=bracket",
        "bs=8192,bm=2,small=0,check=bracket", "bs=3000,bm=16,check=bracket",
        "bs=16384,bm=4,check=bracket", "bs=65,bm=16,check=bracket"};
    size_t ns[] = {1 << 14, 1 << 16, 1 << 18, 100003};
    int i = 0;
    for (int ti = 0; ti < 6; ti++)
        for (int sm = 0; sm < 2; sm++)
            for (int d = 0; d < 7; d++, i++) {
                if (!test_full() && (ti + sm + d) % 6) /* make check: a sixth */
                    continue;
                size_t n = ns[(size_t)i % 4];
                host_set(ctx, SF, bspecs[i % 6], all_types[ti], sm, bdists[d], n, 3);
            }
    /* the dense filter and the radix select after a bracket's band; a wide
     * gather group (the runs longer), the largest stride (make check-full:
     * wg=256 builds a program set of its own, a minute of a cold make check
     * on POCL with the sample of 131072 below) */
    host_set(ctx, SF, "bs=32768,bm=16,dense=1,small=0,check=bracket", CLTOPK_FLOAT32, 0,
             "uniform", 1 << 18, 3);
    if (test_full()) {
        host_set(ctx, SF, "wg=256,bs=5000,bm=16,check=bracket", CLTOPK_INT64, 1, "five",
                 1 << 16, 3);
        host_set(ctx, SF, "wg=256,bs=4096,bm=256,check=bracket", CLTOPK_UINT32, 0, "bucket",
                 1 << 16, 3);
    }
    host_set(ctx, SF, "bs=2048,bm=64,check=bracket", CLTOPK_FLOAT64, 1, "uniform", 1 << 15,
             3);
    /* a sample above the one-step path's old limit (bs up to 2^20) */
    if (test_full())
        host_set(ctx, SF, "bs=131072,bm=16,check=bracket", CLTOPK_FLOAT32, 1, "uniform",
                 1 << 18, 2);
    else
        host_set(ctx, SF, "bs=70000,bm=16,check=bracket", CLTOPK_FLOAT32, 1, "uniform",
                 1 << 17, 2);
    /* the top-k's band (k above the final sort, below the partition) */
    topk_set(ctx, SF, "bs=8192,bm=16,check=bracket", CLTOPK_FLOAT32, 0, "uniform", 1 << 17,
             5000);
    topk_set(ctx, SF, "bs=3000,bm=4,check=bracket", CLTOPK_INT64, 1, "few", 1 << 16, 4500);
    /* check=bracket fails where the one-step selection ran (bm=0) */
    {
        setenv("CLTOPK_SAMPLE_FILTER", "bs=4096,bm=0,check=bracket", 1);
        char *keys = bmalloc((1 << 14) * 4);
        gen_data(CLTOPK_FLOAT32, "uniform", 1 << 14, 0, &rng, keys);
        int64_t *perm = oracle_order(CLTOPK_FLOAT32, keys, 1 << 14, 0);
        char msg[1024] = "";
        int good = check_select(ctx, SF, CLTOPK_FLOAT32, keys, 1 << 14, 1 << 13, 0, perm,
                                WANT_BOTH, CLTOPK_ERR_INTERNAL, msg, sizeof msg);
        if (!good)
            diag_after("%s", msg);
        ok(good, "sample-filter bm=0,check=bracket: the one-step selection fails the check");
        free(keys), free(perm);
        unsetenv("CLTOPK_SAMPLE_FILTER");
    }
    /* refused: a stride not a power of two, or wider than the gather's group */
    {
        static const char *const bad[] = {"bm=3", "bm=1", "wg=64,bm=128", "bs=1048577"};
        for (int b = 0; b < 4; b++) {
            setenv("CLTOPK_SAMPLE_FILTER", bad[b], 1);
            int64_t pos = -1;
            float key = 0, in[256] = {0};
            int st = cltopk_select(ctx, CLTOPK_FLOAT32, in, 256, 7, 0, SF, &key, &pos);
            ok(st == CLTOPK_ERR_UNSUPPORTED, "sample-filter %s: refused (%d)", bad[b], st);
            unsetenv("CLTOPK_SAMPLE_FILTER");
        }
    }
}

#if CLTOPK_HAVE_OPENCL
/* device data at an offset: cltopk_select_buffer at each rank of the set, the
 * outputs poisoned (with guards), the done event */
static void buffer_set(cltopk_context *ctx, cltopk_algo algo, const char *spec, cltopk_dtype t,
                       int smallest, const char *dist, size_t n, size_t off)
{
    cl_context c;
    cl_command_queue q;
    if (cltopk_get_cl(ctx, &c, NULL, &q) != CLTOPK_OK)
        bail("cltopk_get_cl failed on an OpenCL context");
    if (spec)
        setenv("CLTOPK_SAMPLE_FILTER", spec, 1);
    size_t w = tsize(t), cap = 1 + GUARD;
    char *keys = bmalloc((n + off) * w);
    gen_data(t, dist, n + off, smallest, &rng, keys);
    int64_t *perm = oracle_order(t, keys + off * w, n, smallest);
    cl_int err;
    cl_mem din = clCreateBuffer(c, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, (n + off) * w, keys,
                                &err);
    if (!din)
        bail("clCreateBuffer failed: %d", (int)err);
    size_t r[16];
    size_t m = ranks_of(n, r, 2);
    char msg[768] = "";
    int good = 1;
    for (size_t i = 0; i < m && good; i++) {
        int want = (int)(i % 3) + 1;
        char *pk = bmalloc(cap * w), *okb = bmalloc(cap * w);
        int64_t *pi = bmalloc(cap * 8), *oib = bmalloc(cap * 8);
        make_poison(t, keys + off * w, perm + r[i], 1, cap, pk, pi);
        cl_mem dk = clCreateBuffer(c, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, cap * w, pk, &err);
        cl_mem di = clCreateBuffer(c, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, cap * 8, pi, &err);
        if (!dk || !di)
            bail("clCreateBuffer failed: %d", (int)err);
        cl_event done = NULL;
        int st = cltopk_select_buffer(ctx, t, din, off, n, r[i], smallest ? CLTOPK_SMALLEST : 0,
                                      algo, (want & WANT_KEYS) ? dk : NULL,
                                      (want & WANT_INDEX) ? di : NULL, 0, NULL, &done);
        good = st == CLTOPK_OK && done;
        if (good) {
            good = clWaitForEvents(1, &done) == CL_SUCCESS &&
                   clEnqueueReadBuffer(q, dk, CL_TRUE, 0, cap * w, okb, 0, NULL, NULL) ==
                       CL_SUCCESS &&
                   clEnqueueReadBuffer(q, di, CL_TRUE, 0, cap * 8, oib, 0, NULL, NULL) ==
                       CL_SUCCESS;
            clReleaseEvent(done);
            /* an output not asked for stays as poisoned */
            if (good)
                good = compare_outputs(t, keys + off * w, n, perm + r[i],
                                       (want & WANT_KEYS) ? 1 : 0, cap, okb, NULL, pk, pi, msg,
                                       sizeof msg) &&
                       compare_outputs(t, keys + off * w, n, perm + r[i],
                                       (want & WANT_INDEX) ? 1 : 0, cap, NULL, oib, pk, pi, msg,
                                       sizeof msg);
        } else {
            snprintf(msg, sizeof msg, "status %d: %s", st, cltopk_last_error(ctx));
        }
        if (!good)
            diag_after("rank %zu, want %d: %s", r[i], want, msg);
        clReleaseMemObject(dk);
        clReleaseMemObject(di);
        free(pk), free(pi), free(okb), free(oib);
    }
    ok(good, "%s buffer%s%s: select %s %s %s n=%zu offset=%zu (%zu ranks)",
       cltopk_algo_name(algo), spec ? " " : "", spec ? spec : "", tname(t),
       smallest ? "smallest" : "largest", dist, n, off, m);
    clReleaseMemObject(din);
    free(keys), free(perm);
    if (spec)
        unsetenv("CLTOPK_SAMPLE_FILTER");
}
#endif

int main(void)
{
    plan_lazy();
    watchdog(900);
    test_quick_builds(); /* POCL builds dominate: see testlib.h */
    rng_init(&rng, test_seed() ^ 0xBA9D);
    unsetenv("CLTOPK_SAMPLE_FILTER");
    cltopk_context *ctx;
    char why[512];
    if (!open_test_cl(&ctx, why, sizeof why))
        skip_all("no OpenCL device: %s", why);

    /* every type, both directions, the distributions of the issue, both algorithms */
    static const char *const sdists[] = {"uniform", "increasing", "decreasing", "equal", "five",
                                         "bucket"};
    for (int ti = 0; ti < 6; ti++)
        for (int s = 0; s < 2; s++)
            for (int d = 0; d < 6; d++) {
                size_t n = d % 2 ? 65536 : 40000 + (size_t)rng_below(&rng, 30000);
                if (!test_full() && (ti + d + s) % 2) /* make check: one direction */
                    continue;
                host_set(ctx, SF, "check=normal", all_types[ti], s, sdists[d], n, 3);
                if ((d + s) % 3 == 0)
                    host_set(ctx, RS, NULL, all_types[ti], s, sdists[d], n, 2);
            }
    static const char *const fdists[] = {"special", "nan", "denorm", "worst", "worstall"};
    for (int d = 0; d < 5; d++) {
        host_set(ctx, SF, NULL, CLTOPK_FLOAT32, d & 1, fdists[d], 50000, 3);
        host_set(ctx, SF, NULL, CLTOPK_FLOAT64, !(d & 1), fdists[d], 30000, 3);
    }
    /* sizes: too small to sample (the radix select alone), odd, larger */
    {
        size_t ns[] = {1, 2, 3, 100, 127, 128, 129, 1000, 4097, 70001, 1 << 20};
        for (size_t i = 0; i < sizeof ns / sizeof *ns; i++)
            host_set(ctx, SF, NULL, all_types[i % 6], (int)(i & 1), sdists[i % 6], ns[i], 2);
    }
    /* host data in several chunks: each chunk's best rank + 1, merged */
    setenv("CLTOPK_MAX_CHUNK", "30011", 1);
    host_set(ctx, SF, NULL, CLTOPK_FLOAT32, 0, "uniform", 70000, 0);
    host_set(ctx, SF, NULL, CLTOPK_INT64, 1, "five", 70000, 0);
    unsetenv("CLTOPK_MAX_CHUNK");

    /* the radix select after the band with its filters and histograms in
     * launches of their own (its default from the band fuses them), and with
     * only the groups that have elements in each histogram launch */
    setenv("CLTOPK_RADIX", "fuse=0", 1);
    host_set(ctx, SF, "check=normal", CLTOPK_FLOAT32, 1, "uniform", 70001, 3);
    host_set(ctx, SF, "check=normal", CLTOPK_INT64, 0, "five", 65536, 2);
    /* (only the groups with elements in each histogram launch: the CPU's
     * default, and here on every device) */
    setenv("CLTOPK_RADIX", "act=1", 1);
    host_set(ctx, SF, "check=normal", CLTOPK_FLOAT32, 0, "uniform", 100000, 3);
    host_set(ctx, SF, "check=normal", CLTOPK_UINT32, 1, "bucket", 65536, 2);
    unsetenv("CLTOPK_RADIX");

    /* small ranks as the last of a top-k (seltop=1, the GPU default) and by
     * the band (seltop=0, the CPU default), ranks about the final sort's
     * capacity: every type, both directions, runs of equal keys */
    small_ranks = 1;
    for (int ti = 0; ti < 6; ti++)
        for (int sel = 0; sel < 2; sel++)
            if (test_full() || (ti + sel) % 2 == 0 || ti == 0)
                host_set(ctx, SF, sel ? "seltop=1" : "seltop=0", all_types[ti], (ti + sel) & 1,
                         sdists[(ti + 2 * sel) % 6], 30000 + 2 * (size_t)ti, 1);
    small_ranks = 0;

    /* the paths, forced and checked */
    host_set(ctx, SF, "force=few,check=few", CLTOPK_FLOAT32, 0, "uniform", 100000, 2);
    /* (not all-equal input: its value may be the extreme one, whose pair at
     * position 0 is the one pair force=few keeps, and rank 0 is then served) */
    host_set(ctx, SF, "force=few,check=few", CLTOPK_UINT64, 0, "five", 60000, 2);
    host_set(ctx, SF, "force=all,check=normal", CLTOPK_INT32, 0, "bucket", 60000, 2);
    host_set(ctx, SF, "force=all,cap=1000,check=overflow", CLTOPK_UINT32, 1, "uniform", 60000, 2);
    host_set(ctx, SF, "force=all,cap=4294967294,check=normal", CLTOPK_FLOAT64, 1, "five", 50000,
             2);
    host_set(ctx, SF, "cap=1,check=overflow", CLTOPK_FLOAT32, 1, "five", 100000, 2);
    host_set(ctx, SF, "cap=1,check=overflow", CLTOPK_INT64, 0, "uniform", 80000, 2);
    /* (one group: a band of two members or more spills for sure; with many
     * groups a band at the ends, of some ten members, may fall one a group) */
    host_set(ctx, SF, "lseg=1,groups=1,check=spill", CLTOPK_FLOAT32, 0, "uniform", 100000, 2);
    host_set(ctx, SF, "lseg=1,groups=1,check=spill", CLTOPK_UINT32, 1, "equal", 100000, 2);
    host_set(ctx, SF, "s=64,check=normal", CLTOPK_FLOAT32, 0, "decreasing", 100000, 3);
    host_set(ctx, SF, "seed=0,groups=1,check=normal", CLTOPK_INT32, 1, "increasing", 100000, 3);
    host_set(ctx, SF, "digit=8", CLTOPK_FLOAT64, 0, "bucket", 100000, 3);
    /* the dense band filter (members a tile, segments flushed when full, tiles
     * larger than the segment straight to the shared buffer) and the sparse one */
    host_set(ctx, SF, "dense=1,check=normal", CLTOPK_FLOAT32, 0, "uniform", 200000, 4);
    host_set(ctx, SF, "dense=1,check=normal", CLTOPK_INT64, 1, "increasing", 100000, 4);
    host_set(ctx, SF, "dense=1,lseg=1,check=spill", CLTOPK_UINT32, 0, "five", 100000, 3);
    host_set(ctx, SF, "dense=1,lseg=1,bs=64", CLTOPK_FLOAT64, 1, "equal", 100000, 3);
    host_set(ctx, SF, "dense=1,force=all,cap=4294967294,check=normal", CLTOPK_INT32, 0,
             "decreasing", 70000, 3);
    host_set(ctx, SF, "dense=0,bs=64,check=normal", CLTOPK_FLOAT32, 1, "increasing", 100000, 3);
    /* small=0: the radix select finishes every band (the default leaves bands of
     * up to 32768 pairs to one group, which covers most sets above) */
    for (int ti = 0; ti < 6; ti++)
        if (test_full() || ti % 3 == 0) /* make check: float32 and int64 */
            host_set(ctx, SF, "small=0,check=normal", all_types[ti], ti & 1,
                     sdists[(ti + 1) % 6], 60000, 3);
    host_set(ctx, SF, "small=0,force=few,check=few", CLTOPK_FLOAT32, 0, "uniform", 60000, 2);
    host_set(ctx, SF, "small=0,cap=1,check=overflow", CLTOPK_INT64, 1, "five", 60000, 2);
    host_set(ctx, SF, "small=0,dense=1,lseg=1", CLTOPK_FLOAT64, 0, "bucket", 100000, 3);
    /* ofs=0: the members keep their keys (the default stores (u - L) << z) */
    host_set(ctx, SF, "ofs=0,small=0,check=normal", CLTOPK_FLOAT32, 1, "uniform", 60000, 3);
    host_set(ctx, SF, "ofs=0,dense=1,check=normal", CLTOPK_INT64, 0, "five", 60000, 2);
    /* the sparse filter's two ways of testing the band, each on every device
     * (range=1: one unsigned compare of the key, the position at the bounds'
     * keys, the CPU default; range=0: the composite word, the GPU default):
     * keys in runs of equals (the bounds inside a run), special floats, both
     * key widths, both directions, the band at the ends */
    {
        static const char *const rspec[] = {"range=0,dense=0,small=0,check=normal",
                                            "range=1,dense=0,small=0,check=normal"};
        /* (make check: the two float types; the others in check-full, each
         * a build of seconds on POCL) */
        for (int r = 0; r < 2; r++) {
            int all = test_full();
            host_set(ctx, SF, rspec[r], CLTOPK_FLOAT32, r, "five", 100000, 3);
            if (all)
                host_set(ctx, SF, rspec[r], CLTOPK_UINT32, !r, "equal", 70001, 2);
            host_set(ctx, SF, rspec[r], CLTOPK_FLOAT64, r, "special", 60000, 3);
            if (all) {
                host_set(ctx, SF, rspec[r], CLTOPK_INT64, !r, "uniform", 100000, 3);
                host_set(ctx, SF, rspec[r], CLTOPK_INT32, r, "bucket", 80000, 3);
            }
        }
    }

#if CLTOPK_HAVE_OPENCL
    /* device data: both algorithms, odd offsets, every type */
    for (int ti = 0; ti < 6; ti++) {
        buffer_set(ctx, SF, "check=normal", all_types[ti], ti & 1, sdists[ti], 50000,
                   (size_t)ti * 3 + 1);
        buffer_set(ctx, RS, NULL, all_types[ti], !(ti & 1), sdists[(ti + 2) % 6], 30000,
                   (size_t)ti);
    }
    buffer_set(ctx, SF, "force=few,check=few", CLTOPK_FLOAT32, 1, "uniform", 70000, 5);
    buffer_set(ctx, SF, "cap=1,check=overflow", CLTOPK_FLOAT64, 0, "five", 70000, 3);
    buffer_set(ctx, SF, NULL, CLTOPK_INT32, 0, "equal", 100, 7);
    buffer_set(ctx, SF, "small=0,check=normal", CLTOPK_UINT32, 1, "uniform", 50000, 9);
    buffer_set(ctx, SF, NULL, CLTOPK_UINT64, 1, "uniform", 1, 0);
    /* small ranks on device data: the one winner written alone at the output
     * (guards after it), both ways */
    small_ranks = 1;
    buffer_set(ctx, SF, "seltop=1", CLTOPK_FLOAT32, 0, "five", 20000, 3);
    buffer_set(ctx, SF, "seltop=1", CLTOPK_INT64, 1, "uniform", 9000, 1);
    buffer_set(ctx, SF, "seltop=0", CLTOPK_FLOAT64, 1, "bucket", 20000, 5);
    small_ranks = 0;
    /* the bracket on device data */
    buffer_set(ctx, SF, "bs=4000,bm=16,check=bracket", CLTOPK_UINT64, 0, "uniform", 1 << 16,
               5);
    buffer_set(ctx, SF, "bs=2048,bm=2,check=bracket", CLTOPK_INT32, 1, "equal", 1 << 15, 2);
#endif
    bracket_sets(ctx);

    /* CLTOPK_PLAN_SELECT: the plan of a selection names a record that selects
     * by itself, and explain says it plans a selection */
    {
        static const cltopk_algo selecting[] = {SF, RS, CLTOPK_ALGO_CPU_RADIX};
        cltopk_context *cpu;
        if (cltopk_open(&cpu, "cpu") != CLTOPK_OK)
            bail("cannot open the cpu device: %s", cltopk_last_error(NULL));
        cltopk_context *cs[2] = {ctx, cpu};
        for (int i = 0; i < 2; i++) {
            cltopk_algo a = (cltopk_algo)77, b = (cltopk_algo)77;
            int st = cltopk_plan(cs[i], CLTOPK_FLOAT32, 1 << 20, (1 << 19) + 1,
                                 CLTOPK_PLAN_SELECT, &a);
            int sb = i == 0 ? cltopk_plan_buffer(cs[i], CLTOPK_FLOAT32, 1 << 20, 1024,
                                                 CLTOPK_PLAN_SELECT | CLTOPK_SMALLEST, &b)
                            : CLTOPK_OK;
            int good = st == CLTOPK_OK && sb == CLTOPK_OK, sel_a = 0, sel_b = i != 0;
            for (size_t j = 0; j < 3; j++) {
                sel_a |= a == selecting[j];
                sel_b |= b == selecting[j];
            }
            char buf[4096] = "";
            int se = cltopk_explain(cs[i], CLTOPK_FLOAT32, 1 << 20, 7, CLTOPK_PLAN_SELECT, 0, buf,
                                    sizeof buf);
            int bad = cltopk_plan(cs[i], CLTOPK_FLOAT32, 100, 5, 0x800u, &a);
            ok(good && sel_a && sel_b && (i == 0 || a == CLTOPK_ALGO_CPU_RADIX) &&
                   se == CLTOPK_OK && strstr(buf, "the selection of rank k - 1 of") &&
                   bad == CLTOPK_ERR_BAD_FLAGS,
               "%s: CLTOPK_PLAN_SELECT plans a selecting record (%s, %s), explain says so, an "
               "unknown flag is refused (%d)",
               i == 0 ? "opencl" : "cpu", cltopk_algo_name(a) ? cltopk_algo_name(a) : "?",
               i == 0 && cltopk_algo_name(b) ? cltopk_algo_name(b) : "-", bad);
        }
        cltopk_close(cpu);
    }
    /* AUTO: the planner's pick among the records that select */
    host_set(ctx, CLTOPK_ALGO_AUTO, NULL, CLTOPK_FLOAT32, 0, "uniform", 300007, 4);
    host_set(ctx, CLTOPK_ALGO_AUTO, NULL, CLTOPK_UINT64, 1, "bucket", 200003, 4);
    cltopk_close(ctx);
    return tap_done();
}
