/* select.c - cltopk_select against the oracle, bit for bit.
 *
 * Ranks 0, 1, n/2, n - 1, the bitonic limit - 1 and limit, and random ranks; on
 * the "cpu" context (AUTO = the CPU radix selection, CPU_HEAP) and the OpenCL
 * test device (AUTO, CPU_HEAP, BITONIC: UNSUPPORTED from rank = limit on); every
 * type, both directions, tie-heavy and special data; key only, position only,
 * or both, poisoned first. */
#include "testlib.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *name;
    cltopk_context *ctx;
    int is_cl;
    size_t limit[6];
} device;

static rng_t rng;

static void run_set(const device *d, cltopk_algo algo, cltopk_dtype t, int smallest,
                    const char *dist, size_t n, int nrandom)
{
    size_t w = tsize(t);
    void *keys = bmalloc(n * w);
    gen_data(t, dist, n, smallest, &rng, keys);
    int64_t *perm = oracle_order(t, keys, n, smallest);
    size_t lim = d->limit[t];
    size_t ranks[32], nr = 0;
    ranks[nr++] = 0;
    ranks[nr++] = 1;
    ranks[nr++] = n / 2;
    ranks[nr++] = n - 1;
    if (n > 2)
        ranks[nr++] = n - 2;
    if (lim) {
        ranks[nr++] = lim - 1;
        ranks[nr++] = lim;
    }
    for (int i = 0; i < nrandom; i++)
        ranks[nr++] = (size_t)rng_below(&rng, n);
    /* BITONIC: random ranks below its limit too, so that it does real work */
    if (algo == CLTOPK_ALGO_BITONIC)
        for (int i = 0; i < 3; i++)
            ranks[nr++] = (size_t)rng_below(&rng, lim < n ? lim : n);
    char msg[1024];
    int good = 1;
    size_t calls = 0;
    for (size_t i = 0; i < nr && good; i++) {
        size_t r = ranks[i];
        if (r >= n)
            continue;
        int expect = (algo == CLTOPK_ALGO_BITONIC && r >= lim) ? CLTOPK_ERR_UNSUPPORTED
                                                                : CLTOPK_OK;
        int want = (int)(i % 3) + 1; /* keys, index, both in turn */
        calls++;
        if (!check_select(d->ctx, algo, t, keys, n, r, smallest, perm, want, expect, msg,
                          sizeof msg)) {
            good = 0;
            diag_after("rank %zu, outputs %s: %s", r,
                 want == WANT_BOTH ? "key+index" : want == WANT_KEYS ? "key" : "index", msg);
        }
    }
    ok(good, "%s: select %s %s %s %s n=%zu (%zu calls)", d->name, cltopk_algo_name(algo),
       tname(t), smallest ? "smallest" : "largest", dist, n, calls);
    free(perm);
    free(keys);
}

/* every rank of a small tie-heavy input, against the oracle */
static void every_rank(const device *d, cltopk_algo algo, cltopk_dtype t, int smallest,
                       const char *dist, size_t n)
{
    size_t w = tsize(t);
    void *keys = bmalloc(n * w);
    gen_data(t, dist, n, smallest, &rng, keys);
    int64_t *perm = oracle_order(t, keys, n, smallest);
    char msg[1024];
    int good = 1;
    for (size_t r = 0; r < n && good; r++) {
        int expect = (algo == CLTOPK_ALGO_BITONIC && r >= d->limit[t]) ? CLTOPK_ERR_UNSUPPORTED
                                                                        : CLTOPK_OK;
        if (!check_select(d->ctx, algo, t, keys, n, r, smallest, perm, WANT_BOTH, expect, msg,
                          sizeof msg)) {
            good = 0;
            diag_after("rank %zu: %s", r, msg);
        }
    }
    ok(good, "%s: select %s %s %s %s n=%zu, every rank", d->name, cltopk_algo_name(algo),
       tname(t), smallest ? "smallest" : "largest", dist, n);
    free(perm);
    free(keys);
}

int main(void)
{
    plan_lazy();
    watchdog(900);
    rng_init(&rng, test_seed() ^ 0x5E1EC7);

    device devs[2];
    int ndev = 1;
    memset(devs, 0, sizeof devs);
    if (cltopk_open(&devs[0].ctx, "cpu") != CLTOPK_OK)
        bail("cannot open the cpu device: %s", cltopk_last_error(NULL));
    devs[0].name = "cpu";
    char why[512];
    cltopk_context *cl;
    if (open_test_cl(&cl, why, sizeof why)) {
        devs[1].name = "opencl";
        devs[1].ctx = cl;
        devs[1].is_cl = 1;
        for (int t = 0; t < 6; t++)
            devs[1].limit[t] = bitonic_limit(cl, all_types[t]);
        ndev = 2;
    }

    static const char *const ds[] = {"narrow", "equal", "few", "worst", "worstall",
                                     "nan",    "special", "uniform", "bucket", "denorm"};
    const size_t nds = sizeof ds / sizeof ds[0];
    for (int dv = 0; dv < ndev; dv++) {
        const device *d = &devs[dv];
        cltopk_algo algos[3];
        int na = 0;
        algos[na++] = CLTOPK_ALGO_AUTO;
        algos[na++] = CLTOPK_ALGO_CPU_HEAP;
        if (d->is_cl)
            algos[na++] = CLTOPK_ALGO_BITONIC;
        for (int t = 0; t < 6; t++) {
            size_t tile = d->limit[t] ? 2 * d->limit[t] : 8192;
            size_t ns[] = {1, 2, 1000, tile + 5, 50000};
            for (int s = 0; s < 2; s++)
                for (int a = 0; a < na; a++) {
                    /* make check on an OpenCL device: bitonic on check_type's
                     * types, as t/topk.t (each type and k is a kernel build of
                     * its own); check-full: all six */
                    if (d->is_cl && algos[a] == CLTOPK_ALGO_BITONIC &&
                        !check_runs_type(all_types[t]))
                        continue;
                    for (size_t z = 0; z < sizeof ns / sizeof ns[0]; z++)
                        for (size_t di = 0; di < nds; di++) {
                            /* the largest size with a few distributions only */
                            if (z == 4 && di % 3 != (size_t)(t + s) % 3)
                                continue;
                            run_set(d, algos[a], all_types[t], s, ds[di], ns[z],
                                    z == 4 ? 3 : 6);
                        }
                    every_rank(d, algos[a], all_types[t], s, ds[(t * 2 + s) % nds], 97);
                }
            /* AUTO on a larger input: the CPU radix selection's passes */
            for (int s = 0; s < 2; s++)
                run_set(d, CLTOPK_ALGO_AUTO, all_types[t], s, ds[(t + s) % nds], 300007, 4);
        }
    }
    if (ndev < 2)
        skip("OpenCL device: %s", why);
    for (int dv = 0; dv < ndev; dv++)
        cltopk_close(devs[dv].ctx);
    return tap_done();
}
