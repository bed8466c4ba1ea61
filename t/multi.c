/* multi.c - a context over several devices of one host (cltopk_open with "all"
 * or a comma list): host data split across the devices, each part's top-k
 * merged, against the oracle and the single-device answer.
 *
 * The devices: $CLTOPK_TEST_MULTI (a device list for cltopk_open), else "all".
 * POCL gives two CPU devices with POCL_DEVICES="basic pthread", which this test
 * sets when neither variable is set (two devices of different speeds: an
 * uneven split); with one device it skips.  Every type and direction; k = 1, k within
 * a part, k spanning parts, k = n; ties across the boundary (all equal: the
 * first k positions), the best all in the first or all in the last part;
 * selections; bad lists; explain's split; the split by measured speeds
 * (CLTOPK_SPLIT). */
#include "testlib.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static rng_t rng;

/* the top-k of a single-device context equals the split context's (both
 * outputs, bit for bit) */
static int same_as_single(cltopk_context *multi, cltopk_context *one, cltopk_dtype ty,
                          const void *keys, size_t n, size_t k, unsigned flags, char *msg,
                          size_t len)
{
    size_t w = tsize(ty);
    char *mk = bmalloc(k * w), *sk = bmalloc(k * w);
    int64_t *mi = bmalloc(k * 8), *si = bmalloc(k * 8);
    memset(mk, 0x5A, k * w), memset(sk, 0xA5, k * w);
    for (size_t i = 0; i < k; i++)
        mi[i] = -1, si[i] = -2;
    int a = cltopk_topk(multi, ty, keys, n, k, flags, CLTOPK_ALGO_RADIX_SELECT, mk, mi);
    int b = cltopk_topk(one, ty, keys, n, k, flags, CLTOPK_ALGO_RADIX_SELECT, sk, si);
    int good = a == CLTOPK_OK && b == CLTOPK_OK && !memcmp(mk, sk, k * w) &&
               !memcmp(mi, si, k * 8);
    if (!good)
        snprintf(msg, len, "multi %s / single %s (%s)", cltopk_strerror(a), cltopk_strerror(b),
                 a ? cltopk_last_error(multi) : cltopk_last_error(one));
    free(mk), free(sk), free(mi), free(si);
    return good;
}

/* explain's split lines: each device's elements and its measured rate (M
 * elements/s; 0 where none shown); the number of devices */
static size_t split_lines(const char *text, size_t *lens, double *rates, size_t max)
{
    size_t nd = 0;
    for (const char *l = strstr(text, "split"); l && *l && nd < max;) {
        const char *e = strchr(l, '\n');
        size_t ll = e ? (size_t)(e - l) : strlen(l);
        char line[1024];
        snprintf(line, sizeof line, "%.*s", (int)ll, l);
        const char *g = strstr(line, " get ");
        if (!g)
            g = strstr(line, " gets ");
        if (g && strstr(line, " elements (")) {
            lens[nd] = (size_t)strtoull(strchr(g + 1, ' ') + 1, NULL, 10);
            const char *m = strstr(line, "measured ");
            rates[nd] = m ? strtod(m + 9, NULL) : 0;
            nd++;
        }
        l = e ? e + 1 : NULL;
    }
    return nd;
}

/* the split by measured speeds, on a context of its own (no measurement
 * yet): the model's split first, then from the second call on the measured
 * rates (explain's shares in proportion to its rates, over the devices given
 * a part); the answers exact whatever the split; CLTOPK_SPLIT=model keeps the
 * model's split; another value is refused */
static void measured_split(const char *spec)
{
    cltopk_context *mc = NULL;
    int st = cltopk_open(&mc, spec);
    if (st != CLTOPK_OK) {
        ok(0, "a fresh context for the measured split: %s", cltopk_last_error(NULL));
        return;
    }
    unsetenv("CLTOPK_SPLIT");
    size_t n = 200000 + (size_t)rng_below(&rng, 50000), k = 100;
    static const cltopk_dtype tys[] = {CLTOPK_FLOAT32, CLTOPK_UINT64};
    char *text = bmalloc(16384);
    size_t lens0[2][64], lens[64];
    double rates[64];
    size_t nd = 0;
    int good = 1;
    for (int t = 0; t < 2; t++) {
        st = cltopk_explain(mc, tys[t], n, k, 0, 0, text, 16384);
        char want[80];
        snprintf(want, sizeof want, "no split of %d-byte keys measured yet", (int)tsize(tys[t]));
        if (st != CLTOPK_OK || !strstr(text, want) ||
            (nd = split_lines(text, lens0[t], rates, 64)) < 2) {
            good = 0;
            diag("%s", st ? cltopk_last_error(mc) : text);
        }
    }
    ok(good, "a fresh context splits by the model (explain: \"no split ... measured yet\")");

    /* calls of each key size, k and algorithm changing: exact every time,
     * and explain's split by the rates measured from the first on */
    int exact = 1, used = 1;
    size_t calls = 0;
    for (int t = 0; t < 2; t++) {
        cltopk_dtype ty = tys[t];
        void *keys = bmalloc(n * tsize(ty));
        gen_data(ty, t ? "few" : "uniform", n, 0, &rng, keys);
        int64_t *perm = oracle_order(ty, keys, n, 0);
        size_t ks[] = {k, 1, n / 2 + 1, k};
        for (size_t c = 0; c < 4 && exact && used; c++) {
            char msg[1024];
            calls++;
            cltopk_algo a = c == 2 ? CLTOPK_ALGO_AUTO : CLTOPK_ALGO_RADIX_SELECT;
            if (!check_topk(mc, a, ty, keys, n, ks[c], 0, perm, WANT_BOTH, CLTOPK_OK, msg,
                            sizeof msg)) {
                exact = 0;
                diag_after("%s call %zu (%s, k = %zu): %s", tname(ty), c, cltopk_algo_name(a),
                           ks[c], msg);
            }
            st = cltopk_explain(mc, ty, n, k, 0, 0, text, 16384);
            size_t m = st == CLTOPK_OK ? split_lines(text, lens, rates, 64) : 0;
            double sum = 0;
            size_t given = 0;
            for (size_t d = 0; d < m; d++)
                if (lens[d])
                    sum += rates[d], given += lens[d];
            int fine = st == CLTOPK_OK && strstr(text, "speeds measured in this context") && m == nd &&
                       given == n && sum > 0;
            for (size_t d = 0; d < m && fine; d++) {
                double share = (double)lens[d] / (double)n;
                fine = rates[d] > 0 && (!lens[d] || fabs(share - rates[d] / sum) < 0.01);
            }
            if (!fine) {
                used = 0;
                diag_after("%s after call %zu: %s", tname(ty), c,
                           st ? cltopk_last_error(mc) : text);
            } else if (c == 3) {
                for (size_t d = 0; d < m; d++)
                    diag("%s: device %zu: %zu elements (model %zu), %g M elements/s", tname(ty),
                         d, lens[d], lens0[t][d], rates[d]);
            }
        }
        free(perm);
        free(keys);
    }
    ok(exact, "exact over %zu calls whose split changes (CLTOPK_SPLIT unset)", calls);
    ok(used, "explain: the split by the measured rates after each call, the shares in "
       "proportion to them");

    /* CLTOPK_SPLIT=model: the model's split again, exact */
    setenv("CLTOPK_SPLIT", "model", 1);
    good = 1;
    for (int t = 0; t < 2 && good; t++) {
        st = cltopk_explain(mc, tys[t], n, k, 0, 0, text, 16384);
        good = st == CLTOPK_OK && strstr(text, "(CLTOPK_SPLIT=model)") &&
               split_lines(text, lens, rates, 64) == nd && !memcmp(lens, lens0[t], nd * sizeof *lens);
        if (!good)
            diag_after("%s", st ? cltopk_last_error(mc) : text);
    }
    {
        float *keys = bmalloc(n * 4);
        gen_data(CLTOPK_FLOAT32, "narrow", n, 1, &rng, keys);
        int64_t *perm = oracle_order(CLTOPK_FLOAT32, keys, n, 1);
        char msg[1024];
        if (good && !check_topk(mc, CLTOPK_ALGO_RADIX_SELECT, CLTOPK_FLOAT32, keys, n, 777, 1,
                                perm, WANT_BOTH, CLTOPK_OK, msg, sizeof msg)) {
            good = 0;
            diag_after("CLTOPK_SPLIT=model: %s", msg);
        }
        ok(good, "CLTOPK_SPLIT=model: the model's split after measurements, exact");

        /* another value: UNSUPPORTED naming the variable, nothing written;
         * explain says so */
        setenv("CLTOPK_SPLIT", "fastest", 1);
        good = check_topk(mc, CLTOPK_ALGO_RADIX_SELECT, CLTOPK_FLOAT32, keys, n, 10, 1, perm,
                          WANT_BOTH, CLTOPK_ERR_UNSUPPORTED, msg, sizeof msg) &&
               strstr(cltopk_last_error(mc), "CLTOPK_SPLIT=\"fastest\"");
        if (!good)
            diag_after("%s / %s", msg, cltopk_last_error(mc));
        char detail[512];
        snprintf(detail, sizeof detail, "%s", cltopk_last_error(mc));
        float v = 0;
        int64_t at = -7;
        st = cltopk_select(mc, CLTOPK_FLOAT32, keys, n, 5, 0, CLTOPK_ALGO_AUTO, &v, &at);
        good = good && st == CLTOPK_ERR_UNSUPPORTED && at == -7 &&
               strstr(cltopk_last_error(mc), "use measured");
        st = cltopk_explain(mc, CLTOPK_FLOAT32, n, k, 0, 0, text, 16384);
        good = good && st == CLTOPK_OK && strstr(text, "split: none: CLTOPK_SPLIT=\"fastest\"");
        ok(good, "CLTOPK_SPLIT=fastest: refused with UNSUPPORTED (%s)", detail);
        free(perm);
        free(keys);
    }
    unsetenv("CLTOPK_SPLIT");
    free(text);
    cltopk_close(mc);
}

int main(void)
{
    plan_lazy();
    watchdog(900);
    rng_init(&rng, test_seed() ^ 0x3D3D);
    if (!getenv("CLTOPK_TEST_MULTI"))
        setenv("POCL_DEVICES", "basic pthread", 0);
    /* (after POCL_DEVICES: it looks at the devices, which fixes them) */
    test_quick_builds(); /* POCL builds dominate: see testlib.h */
    unsetenv("CLTOPK_STREAM");
    unsetenv("CLTOPK_MAX_CHUNK");
    unsetenv("CLTOPK_SPLIT");
    char dev[256];
    if (!test_cl_device(dev, sizeof dev))
        skip_all("%s", dev);
    const char *spec = getenv("CLTOPK_TEST_MULTI");
    if (!spec || !*spec)
        spec = "all";
    if (cltopk_device_count() < 2)
        skip_all("one OpenCL device (POCL_DEVICES=\"basic pthread\" gives two)");
    cltopk_context *ctx = NULL, *one = NULL;
    int st = cltopk_open(&ctx, spec);
    if (st != CLTOPK_OK)
        bail("cltopk_open(\"%s\"): %s: %s", spec, cltopk_strerror(st), cltopk_last_error(NULL));
    const char *name = cltopk_device_name(ctx);
    if (!strstr(name, " + "))
        skip_all("\"%s\" opened one device (%s)", spec, name);
    diag("devices: %s", name);
    /* the first device alone ("all": 0:0; a list: its first item): the
     * single-device answer */
    char first[256] = "0:0";
    if (strcmp(spec, "all"))
        snprintf(first, sizeof first, "%.*s", (int)strcspn(spec, ","), spec);
    st = cltopk_open(&one, first);
    ok(st == CLTOPK_OK, "a single-device context to compare with: \"%s\"%s%s", first,
       st ? ": " : "", st ? cltopk_last_error(NULL) : "");

    /* explain shows the split, with each device's share */
    char buf[8192];
    st = cltopk_explain(ctx, CLTOPK_FLOAT32, 1 << 20, 32, 0, 0, buf, sizeof buf);
    ok(st == CLTOPK_OK && strstr(buf, "split") && strstr(buf, "elements ("),
       "explain shows the split of host data");
    if (st != CLTOPK_OK || !strstr(buf, "split"))
        diag("%s", st ? cltopk_last_error(ctx) : buf);

    static const char *const ds[] = {"uniform", "narrow", "few", "special", "nan",
                                     "increasing", "decreasing", "bits"};
    static const cltopk_algo algos[] = {CLTOPK_ALGO_RADIX_SELECT, CLTOPK_ALGO_SAMPLE_FILTER,
                                        CLTOPK_ALGO_AUTO};
    for (int t = 0; t < 6; t++)
        for (int s = 0; s < 2; s++) {
            /* make check: float32, uint32 and int64 (each type's programs
             * are builds of seconds on POCL, a device each); check-full:
             * all six */
            if (!test_full() && t != 0 && t != 3 && t != 4)
                continue;
            cltopk_dtype ty = all_types[t];
            /* make check: 6000 to 15000 keys (k = n / 3 to n are the device
             * sort's, unoptimised on POCL: 17 s of the test at 20000 to
             * 50000); make check-full: 20000 to 50000 */
            size_t n = test_full() ? 20000 + (size_t)rng_below(&rng, 30000)
                                   : 6000 + (size_t)rng_below(&rng, 9000);
            const char *dist = ds[(size_t)(2 * t + s) % (sizeof ds / sizeof ds[0])];
            void *keys = bmalloc(n * tsize(ty));
            gen_data(ty, dist, n, s, &rng, keys);
            int64_t *perm = oracle_order(ty, keys, n, s);
            size_t ks[] = {1, 77, n / 3, n / 2 + 1, n};
            char msg[1024];
            int good = 1;
            size_t calls = 0;
            for (size_t a = 0; a < sizeof algos / sizeof algos[0] && good; a++)
                for (size_t i = 0; i < sizeof ks / sizeof ks[0] && good; i++) {
                    size_t k = ks[i];
                    int expect = CLTOPK_OK;
                    /* radix select takes every call; another named algorithm
                     * must run on every device of the context, which the
                     * call itself says: a probe, then the checked call */
                    if (algos[a] == CLTOPK_ALGO_SAMPLE_FILTER) {
                        void *pk = bmalloc(k * tsize(ty));
                        int64_t *pi = bmalloc(k * 8);
                        expect = cltopk_topk(ctx, ty, keys, n, k, s ? CLTOPK_SMALLEST : 0,
                                             algos[a], pk, pi);
                        free(pk), free(pi);
                        if (expect != CLTOPK_OK && expect != CLTOPK_ERR_UNSUPPORTED) {
                            good = 0;
                            diag_after("%s k = %zu: %s: %s", cltopk_algo_name(algos[a]), k,
                                       cltopk_strerror(expect), cltopk_last_error(ctx));
                            break;
                        }
                    }
                    calls++;
                    if (!check_topk(ctx, algos[a], ty, keys, n, k, s, perm,
                                    (int)((i + a) % 3) + 1, expect, msg, sizeof msg)) {
                        good = 0;
                        diag_after("%s k = %zu: %s", cltopk_algo_name(algos[a]), k, msg);
                    }
                }
            size_t ranks[] = {0, n / 2, n - 1};
            for (size_t i = 0; i < 3 && good; i++) {
                calls++;
                cltopk_algo a = i == 1 ? CLTOPK_ALGO_AUTO : CLTOPK_ALGO_RADIX_SELECT;
                if (!check_select(ctx, a, ty, keys, n, ranks[i], s, perm, WANT_BOTH, CLTOPK_OK,
                                  msg, sizeof msg)) {
                    good = 0;
                    diag_after("select rank %zu (%s): %s", ranks[i], cltopk_algo_name(a), msg);
                }
            }
            calls++;
            if (good && one &&
                !same_as_single(ctx, one, ty, keys, n, n / 2 + 1, s ? CLTOPK_SMALLEST : 0, msg,
                                sizeof msg)) {
                good = 0;
                diag_after("against the single device: %s", msg);
            }
            ok(good, "several devices: %s %s %s n = %zu (%zu calls)", tname(ty),
               s ? "smallest" : "largest", dist, n, calls);
            free(perm);
            free(keys);
        }

    /* ties across the boundary: all equal, positions 0..k-1 whatever the split */
    {
        size_t n = 30011;
        int64_t *keys = bmalloc(n * 8);
        for (size_t i = 0; i < n; i++)
            keys[i] = -3;
        int good = 1;
        size_t ks[] = {1, n / 4, n / 2, n - 5, n};
        for (size_t j = 0; j < 5 && good; j++) {
            size_t k = ks[j];
            int64_t *idx = bmalloc(k * 8), *out = bmalloc(k * 8);
            for (size_t i = 0; i < k; i++)
                idx[i] = -1, out[i] = 0;
            st = cltopk_topk(ctx, CLTOPK_INT64, keys, n, k, j % 2 ? CLTOPK_SMALLEST : 0,
                             CLTOPK_ALGO_RADIX_SELECT, out, idx);
            good = st == CLTOPK_OK;
            if (!good)
                diag_after("k = %zu: %s: %s", k, cltopk_strerror(st), cltopk_last_error(ctx));
            for (size_t i = 0; i < k && good; i++)
                if (idx[i] != (int64_t)i || out[i] != -3) {
                    diag_after("k = %zu, position %zu: index %lld", k, i, (long long)idx[i]);
                    good = 0;
                }
            free(idx), free(out);
        }
        int64_t at = -1, v = 0;
        st = cltopk_select(ctx, CLTOPK_INT64, keys, n, n - 1, 0, CLTOPK_ALGO_RADIX_SELECT, &v,
                           &at);
        ok(good && st == CLTOPK_OK && at == (int64_t)(n - 1) && v == -3,
           "all-equal int64 over the devices: positions 0..k-1, rank n - 1 at n - 1");
        free(keys);
    }

    /* the best all in one part: increasing data, the largest at the end (the
     * last device's part) and the smallest at the start (the first's) */
    {
        size_t n = 40000, k = 1000;
        uint32_t *keys = bmalloc(n * 4);
        for (size_t i = 0; i < n; i++)
            keys[i] = (uint32_t)(i / 3);
        int good = 1;
        for (int s = 0; s < 2 && good; s++) {
            int64_t *perm = oracle_order(CLTOPK_UINT32, keys, n, s);
            char msg[1024];
            good = check_topk(ctx, CLTOPK_ALGO_RADIX_SELECT, CLTOPK_UINT32, keys, n, k, s, perm,
                              WANT_BOTH, CLTOPK_OK, msg, sizeof msg);
            if (!good)
                diag_after("%s: %s", s ? "smallest" : "largest", msg);
            free(perm);
        }
        ok(good, "the best in the last part (largest) and in the first (smallest)");
        free(keys);
    }

    measured_split(spec);

    /* bad calls write nothing */
    {
        size_t n = 1000;
        float *keys = bmalloc(n * 4);
        gen_data(CLTOPK_FLOAT32, "uniform", n, 0, &rng, keys);
        int64_t *perm = oracle_order(CLTOPK_FLOAT32, keys, n, 0);
        char msg[1024];
        size_t lim = bitonic_limit(ctx, CLTOPK_FLOAT32);
        ok(check_topk(ctx, CLTOPK_ALGO_BITONIC, CLTOPK_FLOAT32, keys, n,
                      lim + 1 <= n ? lim + 1 : n, 0, perm, WANT_BOTH,
                      lim + 1 <= n ? CLTOPK_ERR_UNSUPPORTED : CLTOPK_OK, msg, sizeof msg),
           "bitonic above its k limit: UNSUPPORTED, nothing written");
        free(perm);
        free(keys);
    }

    /* bad device lists: NO_DEVICE, no context, a detail */
    static const char *const bad[] = {"0:0,0:0", "0:0,cpu", "0:0,", ",0:0", "0:0,no such dev",
                                      "0:0,auto"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cltopk_context *c = (cltopk_context *)&rng;
        st = cltopk_open(&c, bad[i]);
        ok(st == CLTOPK_ERR_NO_DEVICE && c == NULL && cltopk_last_error(NULL)[0],
           "cltopk_open(\"%s\"): NO_DEVICE (%s)", bad[i], cltopk_last_error(NULL));
    }
    cltopk_close(one);
    cltopk_close(ctx);
    return tap_done();
}
