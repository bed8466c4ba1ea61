/* topk.c - cltopk_topk against the oracle, bit for bit.
 *
 * Devices: the "cpu" context (CPU_HEAP, CPU_RADIX, CPU_BITONIC and AUTO) and,
 * when there is one, the OpenCL test device (BITONIC and the same; make
 * check's sweeps there BITONIC and AUTO only).  Every type, both directions,
 * outputs keys only, positions only, or both, each poisoned before the call.
 *
 *   order     a hand-made example of THE ORDER (checks the oracle too), and the
 *             oracle against a second formulation (counting ranks)
 *   k sweep   k = 0..3, 2^i - 1, 2^i, 2^i + 1 up to the bitonic limit, the limit
 *             + 1 (UNSUPPORTED for BITONIC, success otherwise), n - 1, n
 *   n sweep   n = 1, 2, 3, primes, powers of two +-1, k - 1, k, k + 1, tile
 *             sizes +-1 (the device's tile and 4096, 2048), several tiles
 *   values    every distribution of testlib.h and of tools/gen.c
 *   large     n up to 262147 */
#include "testlib.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"

typedef struct {
    const char *name;
    cltopk_context *ctx;
    int is_cl;
    size_t limit[6]; /* bitonic limit per type (0 on the cpu device) */
} device;

static rng_t rng;

static const char *dir_name(int smallest)
{
    return smallest ? "smallest" : "largest";
}

/* the algorithms worth running on d */
static int algos_of(const device *d, cltopk_algo *out)
{
    int n = 0;
    if (d->is_cl)
        out[n++] = CLTOPK_ALGO_BITONIC;
    out[n++] = CLTOPK_ALGO_CPU_HEAP;
    out[n++] = CLTOPK_ALGO_CPU_RADIX;
    out[n++] = CLTOPK_ALGO_CPU_BITONIC; /* k <= 4096 (cpu/plan_cpu.c) */
    out[n++] = CLTOPK_ALGO_AUTO;
    return n;
}

/* the algorithms of the sweeps on d: make check on an OpenCL device leaves
 * out the CPU algorithms, the same host code as on the cpu device, whose
 * sweeps run them on the same data shapes (on the OpenCL context: the
 * hand-made example and the unaligned calls; 10 of the test's 25 s of
 * running); check-full: all */
static int sweep_algos_of(const device *d, cltopk_algo *out)
{
    if (!d->is_cl || test_full())
        return algos_of(d, out);
    out[0] = CLTOPK_ALGO_BITONIC;
    out[1] = CLTOPK_ALGO_AUTO;
    return 2;
}

/* data of a distribution: ours (testlib) or "gen:NAME" of tools/gen.c */
static void make_data(cltopk_dtype t, const char *dist, size_t n, int smallest, void *out)
{
    if (!strncmp(dist, "gen:", 4)) {
        if (gen_fill(t, dist + 4, n, rng_next(&rng), out) != 0)
            bail("gen_fill(%s, %s, %zu) failed", tname(t), dist + 4, n);
    } else {
        gen_data(t, dist, n, smallest, &rng, out);
    }
}

/* One data set, many k: one TAP line.  modes: 0 rotates keys-only and
 * index-only beside both; 1 runs all three for every k. */
static void run_set(const device *d, cltopk_algo algo, cltopk_dtype t, int smallest,
                    const char *dist, size_t n, const size_t *ks, size_t nk, int all_modes,
                    const char *part)
{
    size_t w = tsize(t);
    void *keys = bmalloc(n * w);
    make_data(t, dist, n, smallest, keys);
    int64_t *perm = oracle_order(t, keys, n, smallest);
    size_t lim = d->limit[t];
    char msg[1024] = "";
    int good = 1;
    size_t calls = 0;
    for (size_t i = 0; i < nk && good; i++) {
        size_t k = ks[i];
        if (k > n)
            continue;
        int expect = (algo == CLTOPK_ALGO_BITONIC && k > lim) ||
                             (algo == CLTOPK_ALGO_CPU_BITONIC && k > 4096)
                         ? CLTOPK_ERR_UNSUPPORTED
                         : CLTOPK_OK;
        /* make check on an OpenCL device: bitonic's keys-only calls on
         * float32 only (each k's power of two is a kernel build of its own
         * per type and per index output: the integer types' keys-only
         * kernels were some 26 more POCL builds, 3 s each on 2 cores); the
         * other types take index-only calls in their place.  check-full:
         * every type */
        int kout = !(d->is_cl && !test_full() && t != CLTOPK_FLOAT32 &&
                     algo == CLTOPK_ALGO_BITONIC);
        int modes[3] = {WANT_BOTH, (i & 1) && kout ? WANT_KEYS : WANT_INDEX, 0};
        int nm = 2;
        if (all_modes && kout) {
            modes[1] = WANT_KEYS;
            modes[2] = WANT_INDEX;
            nm = 3;
        } else if (all_modes) {
            modes[1] = WANT_INDEX;
        }
        for (int m = 0; m < nm && good; m++) {
            calls++;
            if (!check_topk(d->ctx, algo, t, keys, n, k, smallest, perm, modes[m], expect, msg,
                            sizeof msg)) {
                good = 0;
                diag_after("k = %zu, outputs %s: %s", k,
                     modes[m] == WANT_BOTH ? "keys+index"
                                           : modes[m] == WANT_KEYS ? "keys" : "index",
                     msg);
            }
        }
    }
    ok(good, "%s %s: %s %s %s %s n=%zu (%zu calls)", part, d->name,
       cltopk_algo_name(algo), tname(t), dir_name(smallest), dist, n, calls);
    free(perm);
    free(keys);
}

/* ------------------------------------------------------------------ order */

/* THE ORDER on a hand-made float array, expected positions written from the
 * header's rules: NaNs equal each other and above +inf; -0 == +0; ties by
 * position. */
static void hand_example(device *devs, int ndev)
{
    /* 0: 1.0  1: NaN  2: -0.0  3: +0.0  4: -inf  5: +inf  6: -NaN(payload)  7: 1.0
     * 8: min denormal  9: -min denormal */
    static const uint32_t bits[10] = {0x3F800000, 0x7FC00000, 0x80000000, 0x00000000,
                                      0xFF800000, 0x7F800000, 0xFFC12345, 0x3F800000,
                                      0x00000001, 0x80000001};
    static const int64_t largest[10] = {1, 6, 5, 0, 7, 8, 2, 3, 9, 4};
    static const int64_t smallest[10] = {4, 9, 2, 3, 8, 0, 7, 5, 1, 6};
    for (int s = 0; s < 2; s++) {
        const int64_t *want = s ? smallest : largest;
        int64_t *perm = oracle_order(CLTOPK_FLOAT32, bits, 10, s);
        ok(!memcmp(perm, want, sizeof largest), "oracle: hand-made float32 example, %s",
           dir_name(s));
        for (int dv = 0; dv < ndev; dv++) {
            cltopk_algo algos[6];
            int na = algos_of(&devs[dv], algos);
            for (int a = 0; a < na; a++) {
                char msg[1024];
                int good = 1;
                for (size_t k = 0; k <= 10 && good; k++)
                    good = check_topk(devs[dv].ctx, algos[a], CLTOPK_FLOAT32, bits, 10, k, s,
                                      want, WANT_BOTH, CLTOPK_OK, msg, sizeof msg);
                if (!ok(good, "%s %s: hand-made float32 example, %s", devs[dv].name,
                        cltopk_algo_name(algos[a]), dir_name(s)))
                    diag("%s", msg);
            }
        }
        free(perm);
    }
    /* the same with doubles widened from the floats */
    uint64_t dbits[10];
    for (int i = 0; i < 10; i++) {
        float f;
        double x;
        memcpy(&f, &bits[i], 4);
        x = (double)f;
        memcpy(&dbits[i], &x, 8);
    }
    dbits[6] = 0xFFF8000012345678ull; /* keep a negative NaN with a payload */
    for (int s = 0; s < 2; s++) {
        int64_t *perm = oracle_order(CLTOPK_FLOAT64, dbits, 10, s);
        ok(!memcmp(perm, s ? smallest : largest, sizeof largest),
           "oracle: hand-made float64 example, %s", dir_name(s));
        free(perm);
    }
    /* integers: the extremes and ties */
    static const int32_t i32[6] = {0, INT32_MIN, -1, INT32_MAX, -1, 1};
    static const int64_t i32_l[6] = {3, 5, 0, 2, 4, 1};
    static const uint64_t u64[5] = {1, UINT64_MAX, 0, 0x8000000000000000ull, 1};
    static const int64_t u64_s[5] = {2, 0, 4, 3, 1};
    int64_t *p = oracle_order(CLTOPK_INT32, i32, 6, 0);
    ok(!memcmp(p, i32_l, sizeof i32_l), "oracle: hand-made int32 example, largest");
    free(p);
    p = oracle_order(CLTOPK_UINT64, u64, 5, 1);
    ok(!memcmp(p, u64_s, sizeof u64_s), "oracle: hand-made uint64 example, smallest");
    free(p);
}

/* the merge sort against counting: perm[r] == i exactly when i has r elements
 * before it */
static void oracle_self_check(void)
{
    const char *ds[] = {"special", "nan", "narrow", "worst", "bits", "denorm"};
    for (int t = 0; t < 6; t++) {
        int good = 1;
        for (size_t di = 0; di < sizeof ds / sizeof ds[0] && good; di++)
            for (int s = 0; s < 2 && good; s++) {
                size_t n = 300 + rng_below(&rng, 100);
                void *keys = bmalloc(n * 8);
                gen_data(all_types[t], ds[di], n, s, &rng, keys);
                int64_t *perm = oracle_order(all_types[t], keys, n, s);
                for (size_t r = 0; r < n && good; r++) {
                    size_t rank = oracle_rank_of(all_types[t], keys, n, (size_t)perm[r], s);
                    if (rank != r) {
                        diag_after("%s %s: perm[%zu] = %" PRId64 " has rank %zu", ds[di],
                                   dir_name(s), r, perm[r], rank);
                        good = 0;
                    }
                }
                free(perm);
                free(keys);
            }
        ok(good, "oracle: merge sort agrees with rank counting, %s", tname(all_types[t]));
    }
}

/* ------------------------------------------------------------------ parts */

/* make check on an OpenCL device: bitonic on float32 and int64 only, the
 * types of t/bitonic.t's every k (one key width each), whose programs it
 * shares; every k's power of two is a kernel build per type and per index
 * output, some 40 s of POCL builds for the other three types on 2 cores and
 * 18 s for int32.  Their order keys are the other algorithms' (common.cl),
 * tested here on every type; make check-full runs bitonic on all six */
static int skip_bitonic(const device *d, int t, cltopk_algo algo)
{
    return d->is_cl && !test_full() && algo == CLTOPK_ALGO_BITONIC &&
           all_types[t] != CLTOPK_FLOAT32 && all_types[t] != CLTOPK_INT64;
}

static void k_sweep(const device *d)
{
    cltopk_algo algos[6];
    int na = sweep_algos_of(d, algos);
    static const char *const ds[] = {"uniform", "bits", "narrow", "special"};
    for (int t = 0; t < 6; t++) {
        /* make check on an OpenCL device: check_type's (each k's power of
         * two is a kernel build per type); check-full: all six */
        if (d->is_cl && !check_runs_type(all_types[t]))
            continue;
        size_t lim = d->limit[t] ? d->limit[t] : 4096;
        size_t tile = 2 * lim;
        size_t n = 2 * tile + tile / 2 + 3; /* several tiles, a partial last one */
        size_t ks[128];
        size_t nk = k_list(lim, n, ks);
        for (int s = 0; s < 2; s++)
            for (int a = 0; a < na; a++)
                if (!skip_bitonic(d, t, algos[a]))
                    run_set(d, algos[a], all_types[t], s, ds[(t + s + a) % 4], n, ks, nk, 0,
                            "k sweep");
    }
}

static int ndists(void);

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x > y) - (x < y);
}

static void n_sweep(const device *d)
{
    cltopk_algo algos[6];
    int na = sweep_algos_of(d, algos);
    for (int t = 0; t < 6; t++) {
        size_t lim = d->limit[t] ? d->limit[t] : 4096;
        size_t tile = 2 * lim;
        size_t ns[64], nn = 0;
        static const size_t fixed[] = {1, 2, 3, 5, 7, 16, 31, 97, 1009, 10007};
        for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
            ns[nn++] = fixed[i];
        size_t tiles[] = {2048, 4096, tile, 2 * tile, 3 * tile};
        for (size_t i = 0; i < sizeof tiles / sizeof tiles[0]; i++) {
            ns[nn++] = tiles[i] - 1;
            ns[nn++] = tiles[i];
            ns[nn++] = tiles[i] + 1;
        }
        /* around k = the limit and k = 100 */
        ns[nn++] = lim - 1;
        ns[nn++] = lim + 1;
        ns[nn++] = 99;
        ns[nn++] = 100;
        ns[nn++] = 101;
        qsort(ns, nn, sizeof ns[0], cmp_size);
        size_t ks[] = {0, 1, 2, 3, 17, 100, lim - 1, lim, 0, 0};
        for (size_t i = 0; i < nn; i++) {
            if (i && ns[i] == ns[i - 1])
                continue;
            size_t n = ns[i];
            ks[8] = n - 1;
            ks[9] = n;
            for (int s = 0; s < 2; s++)
                for (int a = 0; a < na; a++)
                    /* make check: one direction, and on an OpenCL device
                     * every other n for float64, uint32 and uint64, and
                     * bitonic not for those (skip_bitonic) */
                    if (test_full() || ((i + (size_t)t + (size_t)s) % 2 == 0 &&
                                        (!d->is_cl || t % 2 == 0 || (i / 2 + t) % 2 == 0) &&
                                        !skip_bitonic(d, t, algos[a])))
                        run_set(d, algos[a], all_types[t], s,
                            dists[(i + (size_t)(t * 3 + s)) % (size_t)ndists()], n, ks, 10,
                            n <= 4096, "n sweep");
        }
    }
}

static int ndists(void)
{
    int n = 0;
    while (dists[n])
        n++;
    return n;
}

static void values(const device *d)
{
    cltopk_algo algos[6];
    int na = sweep_algos_of(d, algos);
    char names[64][32];
    int nd = 0;
    for (int i = 0; dists[i] && nd < 64; i++)
        snprintf(names[nd++], sizeof names[0], "%s", dists[i]);
    for (int i = 0; gen_dists[i] && nd < 64; i++)
        snprintf(names[nd++], sizeof names[0], "gen:%s", gen_dists[i]);
    for (int t = 0; t < 6; t++) {
        size_t lim = d->limit[t] ? d->limit[t] : 4096;
        size_t tile = 2 * lim;
        /* one tile; and a tile plus a last tile with fewer than k real items */
        size_t sizes[2] = {3001, tile + 5};
        for (int di = 0; di < nd; di++)
            for (int z = 0; z < 2; z++) {
                size_t n = sizes[z];
                size_t ks[] = {1, 5, 64, 1000, lim, n};
                for (int s = 0; s < 2; s++)
                    for (int a = 0; a < na; a++)
                        if (test_full() || ((t + di + z + s) % 2 == 0 && /* one direction */
                                            !skip_bitonic(d, t, algos[a])))
                        run_set(d, algos[a], all_types[t], s, names[di], n, ks, 6, 0, "values");
            }
    }
}

static void large(const device *d)
{
    cltopk_algo algos[6];
    int na = sweep_algos_of(d, algos);
    static const cltopk_dtype ts[] = {CLTOPK_FLOAT32, CLTOPK_INT64, CLTOPK_UINT32};
    static const size_t ns[] = {200000, 262147};
    for (size_t ti = 0; ti < 3; ti++) {
        cltopk_dtype t = ts[ti];
        size_t lim = d->limit[t] ? d->limit[t] : 4096;
        for (int s = 0; s < 2; s++)
            for (int a = 0; a < na; a++) {
                size_t nn = ns[(ti + (size_t)s) % 2];
                /* k beyond one thread's share of the CPU heap, and k = n - 1.
                 * make check on an OpenCL device: k = 100000 by AUTO on
                 * float32 only (its programs for large k, built optimised
                 * here, took 11-14 s of POCL builds a type on 2 cores; the
                 * other types' large k run in t/radix.t and t/sort.t);
                 * check-full: every type */
                size_t ks[] = {1, 100, lim, 100000, nn - 1};
                size_t nk = algos[a] == CLTOPK_ALGO_BITONIC ? 4 : 5;
                if (d->is_cl && !test_full() && t != CLTOPK_FLOAT32 &&
                    algos[a] == CLTOPK_ALGO_AUTO) {
                    ks[3] = nn - 1;
                    nk = 4;
                }
                run_set(d, algos[a], t, s, (ti + (size_t)s) % 2 ? "worst" : "uniform", nn, ks,
                        nk, 0, "large");
            }
    }
}

/* keys and out_keys at odd addresses (the API takes void pointers) */
static void unaligned(const device *d)
{
    cltopk_algo algos[6];
    int na = algos_of(d, algos);
    for (int t = 0; t < 6; t++)
        for (int a = 0; a < na; a++) {
            size_t n = 20011, w = tsize(all_types[t]);
            size_t k = d->limit[all_types[t]] ? d->limit[all_types[t]] / 2 : 1000;
            char *kbuf = bmalloc(n * w + 8), *obuf = bmalloc(k * w + 8);
            char *keys = kbuf + 1 + (size_t)t % 3, *ok_ = obuf + 3;
            int s = (t + a) & 1;
            gen_data(all_types[t], "special", n, s, &rng, keys);
            int64_t *perm = oracle_order(all_types[t], keys, n, s);
            int64_t *oi = bmalloc(k * 8);
            memset(obuf, 0xA5, k * w + 8);
            unsigned flags = s ? CLTOPK_SMALLEST : CLTOPK_LARGEST;
            int st = cltopk_topk(d->ctx, all_types[t], keys, n, k, flags, algos[a], ok_, oi);
            char msg[1024] = "";
            int good = st == CLTOPK_OK;
            if (!good)
                snprintf(msg, sizeof msg, "status %d: %s", st, cltopk_last_error(d->ctx));
            for (size_t i = 0; i < k && good; i++)
                if (oi[i] != perm[i] || memcmp(ok_ + i * w, keys + (size_t)perm[i] * w, w)) {
                    snprintf(msg, sizeof msg, "entry %zu differs", i);
                    good = 0;
                }
            if (good && (obuf[0] != (char)0xA5 || obuf[3 + k * w] != (char)0xA5))
                snprintf(msg, sizeof msg, "wrote outside out_keys"), good = 0;
            if (!ok(good, "unaligned %s: %s %s keys at +%zu, out_keys at +3, k=%zu", d->name,
                    cltopk_algo_name(algos[a]), tname(all_types[t]), 1 + (size_t)t % 3, k))
                diag("%s", msg);
            int64_t idx = -1;
            st = cltopk_select(d->ctx, all_types[t], keys, n, k / 2, flags,
                               algos[a] == CLTOPK_ALGO_CPU_HEAP ? CLTOPK_ALGO_AUTO : algos[a],
                               ok_ + 1, &idx);
            ok(st == CLTOPK_OK && idx == perm[k / 2] &&
                   !memcmp(ok_ + 1, keys + (size_t)perm[k / 2] * w, w),
               "unaligned %s: select %s, out_key at +4", d->name, tname(all_types[t]));
            free(perm), free(oi), free(kbuf), free(obuf);
        }
}

int main(void)
{
    plan_lazy();
    watchdog(900);
    rng_init(&rng, test_seed());

    device devs[2];
    int ndev = 0;
    memset(devs, 0, sizeof devs);
    if (cltopk_open(&devs[0].ctx, "cpu") != CLTOPK_OK)
        bail("cannot open the cpu device: %s", cltopk_last_error(NULL));
    devs[0].name = "cpu";
    ndev = 1;

    char why[512];
    cltopk_context *cl;
    if (open_test_cl(&cl, why, sizeof why)) {
        devs[1].name = "opencl";
        devs[1].ctx = cl;
        devs[1].is_cl = 1;
        for (int t = 0; t < 6; t++) {
            devs[1].limit[t] = bitonic_limit(cl, all_types[t]);
            diag("bitonic limit for %s: k <= %zu", tname(all_types[t]), devs[1].limit[t]);
        }
        int good = 1;
        for (int t = 0; t < 6; t++)
            good &= devs[1].limit[t] >= 1 && !(devs[1].limit[t] & (devs[1].limit[t] - 1));
        if (!ok(good, "bitonic limits are powers of two"))
            bail("no usable bitonic limit on the OpenCL device");
        ndev = 2;
    } else {
        diag("OpenCL parts skipped: %s", why);
    }

    hand_example(devs, ndev);
    oracle_self_check();
    for (int dv = 0; dv < ndev; dv++) {
        k_sweep(&devs[dv]);
        n_sweep(&devs[dv]);
        values(&devs[dv]);
        large(&devs[dv]);
        unaligned(&devs[dv]);
    }
    if (ndev < 2)
        skip("OpenCL device: %s", why);

    for (int dv = 0; dv < ndev; dv++)
        cltopk_close(devs[dv].ctx);
    return tap_done();
}
