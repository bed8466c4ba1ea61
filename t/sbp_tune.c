/* sbp_tune.c - the tuning variables of the two SBP algorithms at the bounds
 * their parsers accept, each against the oracle bit for bit:
 *   CLTOPK_SBP       sbp-radix: wg 32 .. the device's largest group, ipt 1..32,
 *                    digit 4..11, c (any: clamped), reduce 0/1
 *   CLTOPK_SBP_TREE  sbp-tree: WG 1 .. the largest group (a power of two, tile
 *                    >= 8), PER 1..64, SPLIT 1..63 (2^h - 1), NS 2..1024,
 *                    CMAX 1 to half the tile, C (any: clamped), CF, CFMAX, TASK
 * Each configuration: 32- and 64-bit keys, n from one element to several
 * levels, k = 1, 33 and the largest k it accepts, both directions.  Values
 * outside the bounds of CLTOPK_SBP_TREE are UNSUPPORTED with a message. */
#include "testlib.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static rng_t rng;
static cltopk_context *ctx;

/* the largest k algo accepts for type (bisection over cltopk_workspace_size) */
static size_t limit_of(cltopk_algo algo, cltopk_dtype t)
{
    size_t lo = 0, hi = (size_t)1 << 20;
    while (lo < hi) {
        size_t mid = lo + (hi - lo + 1) / 2, bytes = 0;
        if (cltopk_workspace_size(ctx, t, mid, mid, 0, algo, &bytes) == CLTOPK_OK)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* one configuration: every call equals the oracle */
static void run_spec(cltopk_algo algo, const char *var, const char *spec)
{
    static const cltopk_dtype types[2] = {CLTOPK_INT32, CLTOPK_INT64};
    static const size_t ns[] = {1, 31, 4097, 70001};
    static const char *const dl[] = {"uniform", "few", "increasing", "bucket"};
    char msg[512];
    setenv(var, spec, 1);
    int good = 1;
    size_t calls = 0, lim[2];
    for (int ti = 0; ti < 2; ti++)
        lim[ti] = limit_of(algo, types[ti]);
    /* a key width this device's local memory cannot take at these bounds (a
     * GPU's 48 KB against POCL's larger local memory), or a bound a POCL
     * version's compiler cannot take, is refused with that reason, and is
     * skipped; any other refusal fails */
    int skipped = 0;
    for (int ti = 0; ti < 2; ti++) {
        if (lim[ti])
            continue;
        size_t bytes;
        int st = cltopk_workspace_size(ctx, types[ti], 100, 1, 0, algo, &bytes);
        if (st == CLTOPK_ERR_UNSUPPORTED && (strstr(cltopk_last_error(ctx), "local memory") ||
                                             strstr(cltopk_last_error(ctx), "POCL"))) {
            diag("%s=%s: %s refused by this device: %s", var, spec, tname(types[ti]),
                 cltopk_last_error(ctx));
            skipped++;
            continue;
        }
        ok(0, "%s=%s: %s refused (status %d: %s)", var, spec, tname(types[ti]), st,
           cltopk_last_error(ctx));
        unsetenv(var);
        return;
    }
    if (skipped == 2) {
        skip("%s=%s: neither key width fits this device's local memory", var, spec);
        unsetenv(var);
        return;
    }
    for (int ti = 0; ti < 2 && good; ti++)
        for (size_t z = 0; z < sizeof ns / sizeof *ns && good && lim[ti]; z++) {
            cltopk_dtype t = types[ti];
            size_t n = ns[z];
            const char *dist = dl[(z + (size_t)ti) % 4];
            void *keys = bmalloc(n * tsize(t));
            size_t ks[3] = {1, 33, lim[ti]}, prev = 0;
            for (int ki = 0; ki < 3 && good; ki++) {
                size_t k = ks[ki] < n ? ks[ki] : n;
                k = k < lim[ti] ? k : lim[ti];
                if (k == prev)
                    continue;
                prev = k;
                int smallest = (int)((z + (size_t)ki) & 1);
                gen_data(t, dist, n, smallest, &rng, keys);
                int64_t *perm = oracle_order(t, keys, n, smallest);
                if (!check_topk(ctx, algo, t, keys, n, k, smallest, perm, WANT_BOTH, CLTOPK_OK,
                                msg, sizeof msg)) {
                    good = 0;
                    diag_after("%s %s n = %zu k = %zu %s: %s", tname(t), dist, n, k,
                               smallest ? "smallest" : "largest", msg);
                }
                calls++;
                free(perm);
            }
            free(keys);
        }
    ok(good, "%s=%s: %zu calls equal the oracle (k up to %zu / %zu)", var, spec, calls, lim[0],
       lim[1]);
    unsetenv(var);
}

/* a configuration outside the bounds: UNSUPPORTED with a message, nothing written */
static void refused(cltopk_algo algo, const char *var, const char *spec)
{
    setenv(var, spec, 1);
    int32_t keys[100], ok_[4] = {7, 7, 7, 7};
    int64_t oi[4] = {7, 7, 7, 7};
    for (int i = 0; i < 100; i++)
        keys[i] = (int32_t)rng_next(&rng);
    int st = cltopk_topk(ctx, CLTOPK_INT32, keys, 100, 4, 0, algo, ok_, oi);
    int untouched = 1;
    for (int i = 0; i < 4; i++)
        untouched &= ok_[i] == 7 && oi[i] == 7;
    ok(st == CLTOPK_ERR_UNSUPPORTED && cltopk_last_error(ctx)[0] && untouched,
       "%s=%s: UNSUPPORTED, nothing written (status %d: %s)", var, spec, st,
       cltopk_last_error(ctx));
    unsetenv(var);
}

int main(void)
{
    plan_lazy();
    watchdog(1800);
    rng_init(&rng, test_seed() ^ 0x7E57);
    char why[512];
    if (!open_test_cl(&ctx, why, sizeof why))
        skip_all("%s", why);
    unsetenv("CLTOPK_SBP");
    unsetenv("CLTOPK_SBP_TREE");
    size_t maxwg = 0;
#if CLTOPK_HAVE_OPENCL
    cl_device_id dev;
    if (cltopk_get_cl(ctx, NULL, &dev, NULL) == CLTOPK_OK)
        clGetDeviceInfo(dev, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof maxwg, &maxwg, NULL);
#endif
    size_t mwg = 1;
    while (mwg * 2 <= maxwg)
        mwg *= 2;
    diag("largest work-group: %zu", maxwg);
    char spec[128];

    /* sbp-radix (ipt=1 lost candidates and wrote past its group's pairs: a
     * race on the pair count in the kernel); the bounds of each variable, a
     * few to a configuration (one kernel build each) */
    static const char *const radix[] = {
        "ipt=1", "wg=32,ipt=1,digit=4,reduce=0,c=1", "wg=32,ipt=32,digit=11,reduce=1,c=4294967295",
        "ipt=1,digit=11,reduce=1", "ipt=32,digit=4,reduce=0"};
    for (size_t i = 0; i < sizeof radix / sizeof *radix; i++)
        run_spec(CLTOPK_ALGO_SBP_RADIX, "CLTOPK_SBP", radix[i]);
    snprintf(spec, sizeof spec, "wg=%zu,ipt=1,digit=11,reduce=0", maxwg);
    run_spec(CLTOPK_ALGO_SBP_RADIX, "CLTOPK_SBP", spec);
    snprintf(spec, sizeof spec, "wg=%zu,ipt=32,digit=4,c=1", maxwg);
    run_spec(CLTOPK_ALGO_SBP_RADIX, "CLTOPK_SBP", spec);

    /* sbp-tree: the same; SPLIT=0 passed the check and failed to build, a CMAX
     * above half the tile made levels that never shrink (an endless loop) */
    static const char *const tree[] = {
        "SPLIT=1,NS=1024,C=0,CF=0,TASK=0", "SPLIT=63,NS=2,C=4294967295,CF=1,CFMAX=0,TASK=1",
        "WG=1,PER=8,SPLIT=63,NS=1024", "WG=8,PER=64,SPLIT=1,NS=2,C=1",
        "WG=1,PER=8,CMAX=4,TASK=0", "CMAX=1,SPLIT=7"};
    for (size_t i = 0; i < sizeof tree / sizeof *tree; i++)
        run_spec(CLTOPK_ALGO_SBP_TREE, "CLTOPK_SBP_TREE", tree[i]);
    snprintf(spec, sizeof spec, "WG=%zu,PER=1,SPLIT=15", mwg);
    run_spec(CLTOPK_ALGO_SBP_TREE, "CLTOPK_SBP_TREE", spec);
    static const char *const bad[] = {"SPLIT=0", "SPLIT=2", "SPLIT=127", "NS=1", "NS=1025",
                                      "PER=0", "PER=65", "WG=3", "WG=1,PER=4",
                                      "WG=32,PER=8,CMAX=129", "WG=1,PER=8,CMAX=7"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        refused(CLTOPK_ALGO_SBP_TREE, "CLTOPK_SBP_TREE", bad[i]);
    snprintf(spec, sizeof spec, "WG=%zu", mwg * 2);
    refused(CLTOPK_ALGO_SBP_TREE, "CLTOPK_SBP_TREE", spec);
    cltopk_close(ctx);
    return tap_done();
}
