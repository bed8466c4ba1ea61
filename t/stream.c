/* stream.c - host input streamed to the device in pieces (CLTOPK_STREAM=1,
 * pieces capped by CLTOPK_MAX_CHUNK), against the oracle.
 *
 * The streaming path (lib/chunk.c) overlaps the transfer of piece i + 1 with
 * the reduction of piece i through pinned staging buffers and two device
 * inputs; small caps make it run on small inputs.  Every type (make check:
 * float32, int32 and int64) and direction,
 * k = 1, k around the piece size and k above it (fewer, larger pieces), keys
 * alone and with positions, selections, ties across every piece boundary, and
 * the "direct" mode (no staging copy); explain must say that it streams, and
 * an invalid CLTOPK_STREAM is refused with nothing written. */
#include "testlib.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static rng_t rng;

static void set_cap(size_t cap)
{
    char val[32];
    snprintf(val, sizeof val, "%zu", cap);
    setenv("CLTOPK_MAX_CHUNK", val, 1);
}

/* explain's text for a float32 top-k of n, k on host data contains `what` */
static int explains(cltopk_context *ctx, size_t n, size_t k, const char *what)
{
    char buf[8192];
    int st = cltopk_explain(ctx, CLTOPK_FLOAT32, n, k, 0, 0, buf, sizeof buf);
    if (st != CLTOPK_OK || !strstr(buf, what)) {
        diag_after("explain (n = %zu, k = %zu): %s%s", n, k, st ? cltopk_last_error(ctx) : "",
                   buf);
        return 0;
    }
    return 1;
}

static void one_cap(cltopk_context *ctx, size_t cap, const char *mode)
{
    setenv("CLTOPK_STREAM", mode, 1);
    set_cap(cap);
    size_t n = 5 * cap + cap / 3 + 1; /* five whole pieces and a short one */
    static const char *const ds[] = {"uniform", "narrow", "few", "nan", "increasing",
                                     "decreasing", "special", "equal"};
    /* device algorithms by name (AUTO takes the CPU for inputs this small) */
    static const cltopk_algo algos[] = {CLTOPK_ALGO_RADIX_SELECT, CLTOPK_ALGO_BITONIC,
                                        CLTOPK_ALGO_SAMPLE_FILTER};
    for (int t = 0; t < 6; t++)
        for (int s = 0; s < 2; s++) {
            cltopk_dtype ty = all_types[t];
            /* make check: check_type's types (each type is a kernel build
             * of its own per algorithm and k; the pieces' loop and merge
             * see 4- and 8-byte keys, floats and integers); check-full:
             * all six */
            if (!check_runs_type(ty))
                continue;
            const char *dist = ds[(size_t)(2 * t + s) % (sizeof ds / sizeof ds[0])];
            size_t lim = bitonic_limit(ctx, ty);
            void *keys = bmalloc(n * tsize(ty));
            gen_data(ty, dist, n, s, &rng, keys);
            int64_t *perm = oracle_order(ty, keys, n, s);
            size_t ks[] = {1, cap - 1, cap, cap + 1, 2 * cap + 3};
            char msg[1024];
            int good = 1;
            size_t calls = 0;
            for (size_t a = 0; a < sizeof algos / sizeof algos[0] && good; a++)
                for (size_t i = 0; i < sizeof ks / sizeof ks[0] && good; i++) {
                    size_t k = ks[i];
                    if (algos[a] == CLTOPK_ALGO_BITONIC && k > lim)
                        continue;
                    /* keys alone, positions alone and both, in turn; radix
                     * select takes every call, the others where they say so */
                    int want = (int)((i + a + (size_t)t) % 3) + 1;
                    size_t bytes;
                    int expect = a == 0 ? CLTOPK_OK
                                        : cltopk_workspace_size(ctx, ty, n, k,
                                                                s ? CLTOPK_SMALLEST : 0, algos[a],
                                                                &bytes);
                    calls++;
                    if (!check_topk(ctx, algos[a], ty, keys, n, k, s, perm, want, expect, msg,
                                    sizeof msg)) {
                        good = 0;
                        diag_after("%s k = %zu: %s", cltopk_algo_name(algos[a]), k, msg);
                    }
                }
            size_t ranks[] = {0, cap, n / 2, n - 1};
            for (size_t i = 0; i < sizeof ranks / sizeof ranks[0] && good; i++) {
                calls++;
                if (!check_select(ctx, CLTOPK_ALGO_RADIX_SELECT, ty, keys, n, ranks[i], s, perm,
                                  WANT_BOTH, CLTOPK_OK, msg, sizeof msg)) {
                    good = 0;
                    diag_after("select rank %zu: %s", ranks[i], msg);
                }
            }
            ok(good, "stream=%s piece %zu: %s %s %s n = %zu (%zu calls)", mode, cap, tname(ty),
               s ? "smallest" : "largest", dist, n, calls);
            free(perm);
            free(keys);
        }

    /* ties across every piece boundary: all equal, the answer is positions
     * 0..k-1, for k within one piece and k spanning pieces */
    int32_t *keys = bmalloc(n * 4);
    for (size_t i = 0; i < n; i++)
        keys[i] = 7;
    int good = 1;
    size_t ks[] = {1, cap, cap + 1, 3 * cap};
    for (size_t j = 0; j < sizeof ks / sizeof ks[0] && good; j++) {
        size_t k = ks[j];
        int64_t *idx = bmalloc(k * 8);
        int32_t *out = bmalloc(k * 4);
        for (size_t i = 0; i < k; i++)
            idx[i] = -1, out[i] = 0;
        int st = cltopk_topk(ctx, CLTOPK_INT32, keys, n, k, j % 2 ? CLTOPK_SMALLEST : 0,
                             CLTOPK_ALGO_RADIX_SELECT, out, idx);
        good = st == CLTOPK_OK;
        if (!good)
            diag_after("k = %zu: %s: %s", k, cltopk_strerror(st), cltopk_last_error(ctx));
        for (size_t i = 0; i < k && good; i++)
            if (idx[i] != (int64_t)i || out[i] != 7) {
                diag_after("k = %zu, position %zu: index %lld", k, i, (long long)idx[i]);
                good = 0;
            }
        free(idx);
        free(out);
    }
    ok(good, "stream=%s piece %zu: all-equal int32 n = %zu gives positions 0..k-1", mode, cap,
       n);
    free(keys);
}

int main(void)
{
    plan_lazy();
    watchdog(900);
    rng_init(&rng, test_seed() ^ 0x57EA);
    unsetenv("CLTOPK_STREAM");
    unsetenv("CLTOPK_MAX_CHUNK");
    char why[512];
    cltopk_context *ctx;
    if (!open_test_cl(&ctx, why, sizeof why)) {
        if (tap_count() == 0)
            skip_all("%s", why);
        return tap_done();
    }

    /* the knob: explain says which path host data takes */
    set_cap(1000);
    setenv("CLTOPK_STREAM", "1", 1);
    ok(explains(ctx, 5500, 10, "streamed in 6 pieces of 1000 elements, through pinned staging"),
       "CLTOPK_STREAM=1, cap 1000: explain shows 6 streamed pieces");
    ok(explains(ctx, 5500, 2003, "streamed in 3 pieces of 2003 elements"),
       "k above the cap: pieces of k elements, still streamed");
    setenv("CLTOPK_STREAM", "direct", 1);
    ok(explains(ctx, 5500, 10, "written from the caller's memory"),
       "CLTOPK_STREAM=direct: explain shows the direct writes");
    setenv("CLTOPK_STREAM", "0", 1);
    ok(explains(ctx, 5500, 10, "6 chunks of 1000 elements, each transferred before"),
       "CLTOPK_STREAM=0: explain shows the chunk loop");
    ok(explains(ctx, 5500, 2000, "3 chunks of 2000 elements"),
       "a chunk holds at least k elements");
    setenv("CLTOPK_STREAM", "1", 1);
    ok(explains(ctx, 900, 10, "one transfer"), "an input of one piece is not streamed");

    /* an invalid value: refused, nothing written */
    {
        setenv("CLTOPK_STREAM", "yes", 1);
        size_t n = 3000;
        float *keys = bmalloc(n * 4);
        gen_data(CLTOPK_FLOAT32, "uniform", n, 0, &rng, keys);
        int64_t *perm = oracle_order(CLTOPK_FLOAT32, keys, n, 0);
        char msg[1024];
        int good = check_topk(ctx, CLTOPK_ALGO_RADIX_SELECT, CLTOPK_FLOAT32, keys, n, 5, 0, perm,
                              WANT_BOTH, CLTOPK_ERR_UNSUPPORTED, msg, sizeof msg);
        ok(good && strstr(cltopk_last_error(ctx), "CLTOPK_STREAM"),
           "CLTOPK_STREAM=yes: UNSUPPORTED naming the variable, nothing written%s%s",
           good ? "" : ": ", good ? "" : msg);
        free(perm);
        free(keys);
    }

    one_cap(ctx, 1000, "1");
    one_cap(ctx, 257, "direct");
    /* larger pieces after smaller ones: the context's staging buffers grow */
    one_cap(ctx, 4099, "1");
    cltopk_close(ctx);
    unsetenv("CLTOPK_STREAM");
    unsetenv("CLTOPK_MAX_CHUNK");
    return tap_done();
}
