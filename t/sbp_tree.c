/* sbp_tree.c - CLTOPK_ALGO_SBP_TREE (split-bucket partition with a sampled search
 * tree) against the oracle, bit for bit, on the OpenCL test device.
 *
 * Research note seed-003 section 8.4: every type, both directions, keys only /
 * positions only / both, poisoned first; all-equal, few distinct, narrow, the
 * bucket killer (ours in both directions, and tools/gen.c's), sorted both ways,
 * Zipf-like heavy duplicates, NaN / inf / -0 / denormals, the sentinel's own key
 * (worst, worstall); k = 1, the per-tile output C and C + 1, the largest k, n - 1
 * and n; n below one tile, the tile +- 1, primes, several levels.  Several
 * configurations (CLTOPK_SBP_TREE): the default (tiles of 4096), and tiny tiles
 * with 3, 15 and 31 splitters, with and without the control-flow and the task
 * optimisations, down to a sample of 2 and C = k, so that small inputs run many
 * levels and many rounds of the search tree.  Also cltopk_select below the limit, k above it
 * (UNSUPPORTED, nothing written), and cltopk_topk_buffer (device data at an
 * offset). */
#include "testlib.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"

static rng_t rng;
static cltopk_context *ctx;

typedef struct {
    const char *spec; /* CLTOPK_SBP_TREE, "" for the default */
    unsigned tile, cmax;
    unsigned ntypes;
    cltopk_dtype types[6];
    size_t maxn;
} config;

static const char *const dl[] = {"uniform", "bits",       "narrow",     "equal",
                                 "few",     "special",    "nan",        "denorm",
                                 "increasing", "decreasing", "bucket",  "worst",
                                 "worstall", "gen:bucket-killer", "gen:normal", "zipf",
                                 NULL};

/* Zipf-like: value r (1, 2, 3, ...) with probability about 1 / r^1.5, random sign
 * for signed types; heavy duplicates at the top of one direction */
static void zipf(cltopk_dtype t, size_t n, void *out)
{
    for (size_t i = 0; i < n; i++) {
        double u = ((double)(rng_next(&rng) >> 11) + 0.5) / 9007199254740992.0;
        double r = floor(pow(u, -2.0));
        if (r > 1e9)
            r = 1e9;
        int neg = (rng_next(&rng) & 1) != 0;
        switch (t) {
        case CLTOPK_FLOAT32: ((float *)out)[i] = (float)(neg ? -r : r); break;
        case CLTOPK_FLOAT64: ((double *)out)[i] = neg ? -r : r; break;
        case CLTOPK_INT32: ((int32_t *)out)[i] = (int32_t)(neg ? -r : r); break;
        case CLTOPK_UINT32: ((uint32_t *)out)[i] = (uint32_t)r; break;
        case CLTOPK_INT64: ((int64_t *)out)[i] = (int64_t)(neg ? -r : r); break;
        case CLTOPK_UINT64: ((uint64_t *)out)[i] = (uint64_t)r; break;
        }
    }
}

static void make_data(cltopk_dtype t, const char *dist, size_t n, int smallest, void *out)
{
    if (!strcmp(dist, "zipf"))
        zipf(t, n, out);
    else if (!strncmp(dist, "gen:", 4)) {
        if (gen_fill(t, dist + 4, n, rng_next(&rng), out) != 0)
            bail("gen_fill(%s, %s, %zu) failed", tname(t), dist + 4, n);
    } else
        gen_data(t, dist, n, smallest, &rng, out);
}

/* the largest k the library accepts for this type (asked, not assumed: it
 * depends on the device's local memory) */
static size_t tree_limit(cltopk_dtype t)
{
    size_t lo = 0, hi = (size_t)1 << 20, bytes;
    while (lo < hi) {
        size_t mid = (lo + hi + 1) / 2;
        if (cltopk_workspace_size(ctx, t, mid, mid, 0, CLTOPK_ALGO_SBP_TREE, &bytes) ==
            CLTOPK_OK)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* the largest k worth a call: above 1024 the library builds another kernel
 * (larger tiles), so only the float types go there, to keep a cold POCL run
 * short */
static size_t kcap(cltopk_dtype t, size_t lim)
{
    return (t != CLTOPK_FLOAT32 && t != CLTOPK_FLOAT64 && lim > 1024) ? 1024 : lim;
}

/* the per-tile output the library picks for k (algo_sbp_tree.c) unless C= is set */
static size_t c_of(const config *c, size_t k)
{
    size_t v = (k * 3 / 2 + 31) / 32 * 32;
    if (v < 128)
        v = 128;
    if (v > c->cmax)
        v = c->cmax;
    return v < k ? k : v;
}

/* one data set, several k: returns the number of wrong calls, calls counted */
static size_t run_set(const config *c, size_t lim, cltopk_dtype t, const char *dist, size_t n,
                      int smallest, size_t *calls, char *first, size_t flen)
{
    size_t w = tsize(t);
    void *keys = bmalloc((n ? n : 1) * w);
    make_data(t, dist, n, smallest, keys);
    int64_t *perm = oracle_order(t, keys, n, smallest);
    size_t klim = c->spec[0] ? lim : kcap(t, lim);
    size_t ks[20], nk = 0, top = n < klim ? n : klim;
    size_t cand[] = {1, 2, 3, 64, 65, c_of(c, 1), c_of(c, 1) + 1, 127, 128, 129,
                     c->cmax / 2 + 1, c->cmax, klim / 2 + 1, klim, n - 1, n,
                     1 + (size_t)rng_below(&rng, top)};
    for (size_t i = 0; i < sizeof cand / sizeof cand[0]; i++) {
        size_t k = cand[i];
        if (k < 1 || k > top)
            continue;
        int dup = 0;
        for (size_t j = 0; j < nk; j++)
            dup |= ks[j] == k;
        if (!dup)
            ks[nk++] = k;
    }
    size_t bad = 0;
    char msg[1024];
    for (size_t i = 0; i < nk; i++) {
        int want = (int)((i + n) % 3) + 1;
        (*calls)++;
        if (!check_topk(ctx, CLTOPK_ALGO_SBP_TREE, t, keys, n, ks[i], smallest, perm, want,
                        CLTOPK_OK, msg, sizeof msg)) {
            if (!bad++ && !first[0])
                snprintf(first, flen, "%s n=%zu k=%zu %s want=%d: %s", dist, n, ks[i],
                         smallest ? "smallest" : "largest", want, msg);
        }
    }
    /* one past the limit: refused, nothing written */
    if (n > lim) {
        (*calls)++;
        if (!check_topk(ctx, CLTOPK_ALGO_SBP_TREE, t, keys, n, lim + 1, smallest, perm,
                        WANT_BOTH, CLTOPK_ERR_UNSUPPORTED, msg, sizeof msg)) {
            if (!bad++ && !first[0])
                snprintf(first, flen, "%s n=%zu k=limit+1: %s", dist, n, msg);
        }
    }
    free(perm);
    free(keys);
    return bad;
}

static void run_config(const config *c)
{
    if (c->spec[0])
        setenv("CLTOPK_SBP_TREE", c->spec, 1);
    else
        unsetenv("CLTOPK_SBP_TREE");
    const char *cname = c->spec[0] ? c->spec : "default";
    size_t T = c->tile;
    /* sizes: below one tile, the tile +- 1, primes, several tiles and levels */
    size_t sizes[] = {1, 2, 7, T / 2 + 3, T - 1, T, T + 1, 3 * T + 1, 997, 7919,
                      (size_t)T * 37 + 13, c->maxn};
    size_t nsz = sizeof sizes / sizeof sizes[0];
    for (unsigned ti = 0; ti < c->ntypes; ti++) {
        cltopk_dtype t = c->types[ti];
        size_t calls = 0, bad = 0, si = ti, lim = tree_limit(t);
        if (!ok(lim >= c->cmax, "%s %s: the limit is %zu (at least %u)", cname, tname(t), lim,
                c->cmax))
            continue;
        char first[1200] = "";
        for (size_t di = 0; dl[di]; di++) {
            for (int s = 0; s < 2; s++) {
                size_t n = sizes[si++ % nsz];
                /* make check: one direction a distribution, in turn (both
                 * directions over the types and distributions; the sweeps
                 * took 19 s of make check); make check-full: both */
                if (!test_full() && (s + (int)di + (int)ti) % 2)
                    continue;
                if (n > c->maxn)
                    n = c->maxn;
                bad += run_set(c, lim, t, dl[di], n, s, &calls, first, sizeof first);
            }
        }
        ok(bad == 0, "%s %s: every distribution, %s, k sweep (%zu calls, %zu wrong)",
           cname, tname(t), test_full() ? "both directions" : "a direction each", calls, bad);
        if (bad)
            diag("first: %s", first);
    }
}

/* cltopk_select below the limit */
static void selections(void)
{
    unsetenv("CLTOPK_SBP_TREE");
    char msg[1024];
    for (int ti = 0; ti < 6; ti++) {
        cltopk_dtype t = all_types[ti];
        const char *dist = ti & 1 ? "few" : "special";
        size_t n = 9000 + (size_t)rng_below(&rng, 3000), w = tsize(t);
        void *keys = bmalloc(n * w);
        for (int s = 0; s < 2; s++) {
            gen_data(t, dist, n, s, &rng, keys);
            int64_t *perm = oracle_order(t, keys, n, s);
            size_t lim = tree_limit(t);
            size_t kc = kcap(t, lim);
            size_t ranks[] = {0, 1, 127, kc - 1, lim, (size_t)rng_below(&rng, kc)};
            int good = 1;
            for (size_t i = 0; i < sizeof ranks / sizeof ranks[0] && good; i++) {
                int expect = ranks[i] >= lim ? CLTOPK_ERR_UNSUPPORTED : CLTOPK_OK;
                good = check_select(ctx, CLTOPK_ALGO_SBP_TREE, t, keys, n, ranks[i], s, perm,
                                    (int)(i % 3) + 1, expect, msg, sizeof msg);
                if (!good)
                    diag("rank %zu: %s", ranks[i], msg);
            }
            ok(good, "select %s %s %s n=%zu: ranks 0, 1, 127, %zu, random; limit %zu refused",
               tname(t), s ? "smallest" : "largest", dist, n, kc - 1, lim);
            free(perm);
        }
        free(keys);
    }
}

#if CLTOPK_HAVE_OPENCL
/* cltopk_topk_buffer: the slice [off, off + n) of a device buffer whose other
 * elements would win; outputs poisoned, read back, compared bit for bit */
static int buffer_case(cltopk_dtype t, const char *dist, size_t n, size_t off, size_t k,
                       int smallest, int want, char *msg, size_t len)
{
    cl_context cc;
    cl_device_id dev;
    cl_command_queue q;
    if (cltopk_get_cl(ctx, &cc, &dev, &q) != CLTOPK_OK)
        bail("cltopk_get_cl failed");
    size_t w = tsize(t), total = off + n + 5;
    char *host = bmalloc(total * w);
    gen_data(t, "worst", total, !smallest, &rng, host); /* the best keys of our direction */
    make_data(t, dist, n, smallest, host + off * w);
    int64_t *perm = oracle_order(t, host + off * w, n, smallest);
    size_t cap = k + GUARD;
    char *pk = bmalloc(cap * w);
    int64_t *pi = bmalloc(cap * 8);
    make_poison(t, host + off * w, perm, k, cap, pk, pi);
    cl_int err;
    cl_mem in = clCreateBuffer(cc, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, total * w, host,
                               &err);
    cl_mem ok_ = (want & WANT_KEYS) ? clCreateBuffer(cc, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                                                     cap * w, pk, &err)
                                    : NULL;
    cl_mem oi = (want & WANT_INDEX) ? clCreateBuffer(cc, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                                                     cap * 8, pi, &err)
                                    : NULL;
    if (!in || ((want & WANT_KEYS) && !ok_) || ((want & WANT_INDEX) && !oi))
        bail("clCreateBuffer: %d", (int)err);
    cl_event done = NULL;
    int st = cltopk_topk_buffer(ctx, t, in, off, n, k, smallest ? CLTOPK_SMALLEST : 0,
                                CLTOPK_ALGO_SBP_TREE, ok_, oi, 0, NULL, &done);
    int good = st == CLTOPK_OK && done;
    if (!good)
        snprintf(msg, len, "status %d (%s)", st, cltopk_last_error(ctx));
    char *gk = (want & WANT_KEYS) ? bmalloc(cap * w) : NULL;
    int64_t *gi = (want & WANT_INDEX) ? bmalloc(cap * 8) : NULL;
    if (good && gk &&
        clEnqueueReadBuffer(q, ok_, CL_TRUE, 0, cap * w, gk, 1, &done, NULL) != CL_SUCCESS)
        bail("read keys");
    if (good && gi &&
        clEnqueueReadBuffer(q, oi, CL_TRUE, 0, cap * 8, gi, 1, &done, NULL) != CL_SUCCESS)
        bail("read index");
    if (good)
        good = compare_outputs(t, host + off * w, n, perm, k, cap, gk, gi, pk, pi, msg, len);
    if (done)
        clReleaseEvent(done);
    clReleaseMemObject(in);
    if (ok_)
        clReleaseMemObject(ok_);
    if (oi)
        clReleaseMemObject(oi);
    free(gk), free(gi), free(pk), free(pi), free(perm), free(host);
    return good;
}

static void buffers(void)
{
    unsetenv("CLTOPK_SBP_TREE");
    char msg[1024];
    static const char *const bd[] = {"uniform", "equal", "bucket", "nan", "decreasing", "few"};
    for (int ti = 0; ti < 6; ti++) {
        cltopk_dtype t = all_types[ti];
        int good = 1;
        for (int i = 0; i < 6 && good; i++) {
            size_t n = 1 + (size_t)rng_below(&rng, 30000), off = (size_t)rng_below(&rng, 100);
            size_t lim = kcap(t, tree_limit(t));
            size_t k = 1 + (size_t)rng_below(&rng, n < lim ? n : lim);
            if (i == 0)
                k = n < lim ? n : lim;
            good = buffer_case(t, bd[i], n, off, k, i & 1, i % 3 + 1, msg, sizeof msg);
            if (!good)
                diag("%s n=%zu off=%zu k=%zu: %s", bd[i], n, off, k, msg);
        }
        ok(good, "topk_buffer %s: slices at offsets, both directions, every output choice",
           tname(t));
    }
}
#endif

int main(void)
{
    plan_lazy();
    watchdog(900);
    test_quick_builds(); /* POCL builds dominate: see testlib.h */
    rng_init(&rng, test_seed() ^ 0x5B97);
    char why[512];
    if (!open_test_cl(&ctx, why, sizeof why))
        skip_all("%s", why);
    {
        /* declined where the platform cannot run it (POCL 4 and 5): the reason */
        size_t bytes;
        int st = cltopk_workspace_size(ctx, CLTOPK_INT32, 100, 1, 0, CLTOPK_ALGO_SBP_TREE, &bytes);
        if (st == CLTOPK_ERR_UNSUPPORTED && strstr(cltopk_last_error(ctx), "POCL")) {
            skip("sbp-tree on this device: %s", cltopk_last_error(ctx));
            cltopk_close(ctx);
            return tap_done();
        }
    }
    const config configs[] = {
        {"", 4096, 2048, 6,
         {CLTOPK_FLOAT32, CLTOPK_FLOAT64, CLTOPK_INT32, CLTOPK_UINT32, CLTOPK_INT64,
          CLTOPK_UINT64}, 300000},
        {"WG=16,PER=4,SPLIT=15,NS=16", 64, 32, 3, {CLTOPK_FLOAT64, CLTOPK_UINT32, CLTOPK_INT64},
         20000},
        {"WG=32,PER=8,SPLIT=31,NS=64,CF=0,TASK=0", 256, 128, 3,
         {CLTOPK_FLOAT32, CLTOPK_INT32, CLTOPK_UINT64}, 40000},
        {"WG=8,PER=3,SPLIT=3,NS=2,C=4", 24, 12, 2, {CLTOPK_FLOAT32, CLTOPK_INT64}, 3000},
    };
    for (size_t i = 0; i < sizeof configs / sizeof configs[0]; i++)
        run_config(&configs[i]);
    selections();
#if CLTOPK_HAVE_OPENCL
    buffers();
#endif
    cltopk_close(ctx);
    return tap_done();
}
