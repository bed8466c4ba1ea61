/* bitonic.c - the bitonic reducer at every k from 1 to its limit.
 *
 * The authors' released code processed one half of the tile twice at k = 128
 * and 256 (research note, section 0); a schedule bug of that kind shows at
 * particular k only, so every k from 1 to the device's limit is run here, on the
 * OpenCL test device, for 32- and 64-bit keys, keys only and key + position,
 * both directions, against the oracle bit for bit.  Each k gets fresh data of a
 * size that spans several work-groups (so both the sort_reducer and the
 * bitonic_reducer run), cycling through random, tie-heavy and adversarial
 * distributions.  Keys-only floats with zeros and NaN in the answer exercise the
 * re-run with positions.  Set CLTOPK_BITONIC (e.g. "MAXM=2,SWZ=0") to run the
 * same checks on another configuration.  make check runs float32 and int64
 * (both key widths; each k's power of two is a kernel build per type and per
 * index output, some 30 POCL builds more for uint32 and float64, whose order
 * keys the other algorithms test on every type); make check-full all four. */
#include "testlib.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const bdists[] = {"uniform", "narrow", "bucket", "increasing", "decreasing",
                                    "special", "few", "worst", "bits", "equal"};

int main(void)
{
    plan_lazy();
    watchdog(1500);
    rng_t rng;
    rng_init(&rng, test_seed() ^ 0xB170);
    cltopk_context *ctx;
    char why[512];
    if (!open_test_cl(&ctx, why, sizeof why))
        skip_all("%s", why);
    const cltopk_dtype types[] = {CLTOPK_FLOAT32, CLTOPK_UINT32, CLTOPK_INT64, CLTOPK_FLOAT64};
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
        cltopk_dtype t = types[ti];
        if (!check_runs_type(t)) {
            diag("%s: make check-full runs it (make check: check_type's types)", tname(t));
            continue;
        }
        size_t lim = bitonic_limit(ctx, t);
        ok(lim >= 1024 || lim == 0, "%s: the bitonic limit is %zu (at least 1024 where any)",
           tname(t), lim);
        if (!lim)
            continue;
        size_t w = tsize(t), maxn = lim + 9000;
        void *keys = bmalloc(maxn * w);
        char msg[1024];
        /* every k for the 32-bit float type; the others every k up to 300, then a
         * stride, to keep the run short */
        size_t calls = 0, bad = 0;
        for (size_t k = 1; k <= lim; k += (t == CLTOPK_FLOAT32 || k < 300) ? 1 : 7) {
            int smallest = (int)(k & 1);
            const char *dist = bdists[k % (sizeof bdists / sizeof bdists[0])];
            size_t n = k + (size_t)rng_below(&rng, 9000);
            gen_data(t, dist, n, smallest, &rng, keys);
            int64_t *perm = oracle_order(t, keys, n, smallest);
            int want = (int)(k % 3) + 1;
            calls++;
            if (!check_topk(ctx, CLTOPK_ALGO_BITONIC, t, keys, n, k, smallest, perm, want,
                            CLTOPK_OK, msg, sizeof msg)) {
                if (bad++ < 5)
                    diag("%s k=%zu n=%zu %s %s want=%d: %s", tname(t), k, n, dist,
                         smallest ? "smallest" : "largest", want, msg);
            }
            free(perm);
        }
        ok(bad == 0, "%s: every k checked (%zu calls) equals the oracle (%zu wrong)", tname(t),
           calls, bad);
        /* one past the limit: unsupported, nothing written */
        size_t n = lim + 100;
        gen_data(t, "uniform", n, 0, &rng, keys);
        int64_t *perm = oracle_order(t, keys, n, 0);
        ok(check_topk(ctx, CLTOPK_ALGO_BITONIC, t, keys, n, lim + 1, 0, perm, WANT_BOTH,
                      CLTOPK_ERR_UNSUPPORTED, msg, sizeof msg),
           "%s: k = limit + 1 is refused, nothing written %s", tname(t), msg);
        free(perm);
        /* keys only, floats: zeros and NaN at the k-th place need positions */
        if (is_float(t)) {
            for (int s = 0; s < 2; s++) {
                n = maxn; /* the buffer holds maxn keys */
                gen_data(t, "nan", n, s, &rng, keys);
                perm = oracle_order(t, keys, n, s);
                int good = 1;
                for (size_t k = 1; k <= 64 && good; k += 9)
                    good = check_topk(ctx, CLTOPK_ALGO_BITONIC, t, keys, n, k, s, perm,
                                      WANT_KEYS, CLTOPK_OK, msg, sizeof msg);
                ok(good, "%s: keys only with NaN, +-0 ties (%s) %s", tname(t),
                   s ? "smallest" : "largest", good ? "" : msg);
                free(perm);
            }
        }
        free(keys);
    }
    cltopk_close(ctx);
    return tap_done();
}
