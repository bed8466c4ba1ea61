/* cpu.c - the CPU algorithms (cpu-heap, cpu-bitonic, cpu-radix, and AUTO on the
 * "cpu" device) against the oracle, bit for bit, with one instruction set of the
 * CPU kernels.
 *
 * Built three times (t/cpu_scalar.t, t/cpu_avx2.t, t/cpu_avx512.t) with TEST_ISA
 * naming the set; each program asks for it through CLTOPK_CPU_ISA before the
 * library's first CPU call and skips as a whole (TAP skip) when this processor
 * or this build lacks it, so a variant is never reported as passed untested.
 *
 *   types     all six, both directions, outputs keys+index / keys / index
 *   values    every distribution of testlib.h: uniform, raw bits with NaNs,
 *             narrow (ties), equal, few, special (NaN payloads, -0, inf),
 *             denormals, increasing (every element an insert for a plain heap),
 *             decreasing, the bucket killer, the worst key everywhere
 *   k         0..3, powers of two +-1 up to 4097 (beyond cpu-bitonic's limit,
 *             which must then fail as unsupported), n - 1, n
 *   n         small odd sizes, and sizes above the sampled floor (65536) and
 *             above two threads' share (131072), so that the floor, the
 *             per-thread partitions and their merge are all exercised
 *   threads   cltopk_set_threads(1), (3) (more than the cores, uneven parts) and
 *             back to the default (0); a negative count is refused
 *   select    cltopk_select (AUTO: radix selection; cpu-radix: its top-k) at
 *             ranks 0, 1, n/2, n-2, n-1 and random ranks */
#include "testlib.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef TEST_ISA
#error "compile with -DTEST_ISA=\"scalar\" (or avx2, avx512)"
#endif

#define BITONIC_MAX_K 4096 /* cpu/plan_cpu.c */

static rng_t rng;

static const cltopk_algo algos[] = {CLTOPK_ALGO_CPU_HEAP, CLTOPK_ALGO_CPU_BITONIC,
                                    CLTOPK_ALGO_CPU_RADIX, CLTOPK_ALGO_AUTO};
#define NALGO (sizeof algos / sizeof algos[0])

static const char *dir_name(int smallest)
{
    return smallest ? "smallest" : "largest";
}

/* one data set, every algorithm, the k of ks: one TAP line per algorithm */
static void run_set(cltopk_context *ctx, cltopk_dtype t, int smallest, const char *dist,
                    size_t n, const size_t *ks, size_t nk, const char *part)
{
    void *keys = bmalloc(n * tsize(t) + 8);
    gen_data(t, dist, n, smallest, &rng, keys);
    int64_t *perm = oracle_order(t, keys, n, smallest);
    for (size_t a = 0; a < NALGO; a++) {
        char msg[1024] = "";
        int good = 1;
        size_t calls = 0;
        for (size_t i = 0; i < nk && good; i++) {
            size_t k = ks[i];
            if (k > n)
                continue;
            int expect = (algos[a] == CLTOPK_ALGO_CPU_BITONIC && k > BITONIC_MAX_K)
                             ? CLTOPK_ERR_UNSUPPORTED
                             : CLTOPK_OK;
            int want = i % 3 == 0 ? WANT_BOTH : i % 3 == 1 ? WANT_KEYS : WANT_INDEX;
            calls++;
            if (!check_topk(ctx, algos[a], t, keys, n, k, smallest, perm, want, expect, msg,
                            sizeof msg)) {
                good = 0;
                diag_after("k = %zu, want %d: %s", k, want, msg);
            }
        }
        ok(good, "%s %s: %s %s %s n=%zu (%zu calls)", part, cltopk_algo_name(algos[a]),
           tname(t), dir_name(smallest), dist, n, calls);
    }
    free(perm);
    free(keys);
}

static size_t ks_for(size_t n, size_t *ks)
{
    size_t c = 0;
    static const size_t fixed[] = {0,   1,   2,   3,   7,    8,    15,   16,   17,  31,
                                   32,  63,  64,  65,  100,  255,  256,  257,  1023,
                                   1024, 1025, 2048, 4095, 4096, 4097};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        if (fixed[i] <= n)
            ks[c++] = fixed[i];
    ks[c++] = n / 2;
    if (n >= 1)
        ks[c++] = n - 1;
    ks[c++] = n;
    return c;
}

static void all_values(cltopk_context *ctx)
{
    /* every distribution, type and direction at a size with a partial vector
     * and a sampled floor, and at a small odd size */
    for (int d = 0; dists[d]; d++)
        for (int ti = 0; ti < 6; ti++)
            for (int s = 0; s < 2; s++) {
                size_t ks[64];
                size_t n = 70001 + rng_below(&rng, 2000);
                size_t nk = ks_for(n, ks);
                /* fewer k at this size: the oracle checks cost n each */
                size_t sel[] = {1, 16, 64, 256, 4096, 4097};
                size_t ks2[16], c = 0;
                for (size_t i = 0; i < sizeof sel / sizeof sel[0]; i++)
                    ks2[c++] = sel[i];
                ks2[c++] = ks[nk - 1];
                run_set(ctx, all_types[ti], s, dists[d], n, ks2, c, "values");
                n = 1 + rng_below(&rng, 3000);
                nk = ks_for(n, ks);
                run_set(ctx, all_types[ti], s, dists[d], n, ks, nk, "values-small");
            }
}

/* two threads' shares and more, on the inputs that are hard for heaps */
static void large(cltopk_context *ctx)
{
    static const char *const hard[] = {"uniform", "increasing", "decreasing", "bucket",
                                       "narrow", "worst"};
    static const cltopk_dtype ty[] = {CLTOPK_FLOAT32, CLTOPK_UINT64, CLTOPK_INT32,
                                      CLTOPK_FLOAT64};
    for (size_t d = 0; d < sizeof hard / sizeof hard[0]; d++)
        for (size_t ti = 0; ti < sizeof ty / sizeof ty[0]; ti++) {
            size_t n = 262144 + 1 + rng_below(&rng, 5000);
            size_t ks[] = {1, 32, 64, 256, 1000, 4096, 40000, n - 3};
            run_set(ctx, ty[ti], (int)((d + ti) & 1), hard[d], n, ks, sizeof ks / sizeof *ks,
                    "large");
        }
    /* the heap's guard: increasing input below the floor's size (no floor, so
     * every element is an insert) sends AUTO to radix */
    size_t ks[] = {1, 16, 100};
    run_set(ctx, CLTOPK_FLOAT32, 0, "increasing", 60000, ks, 3, "guard");
    run_set(ctx, CLTOPK_INT64, 1, "decreasing", 60000, ks, 3, "guard");
}

static void threads(cltopk_context *ctx)
{
    is_int(CLTOPK_ERR_INVALID_ARGUMENT, cltopk_set_threads(-1), "set_threads(-1) is refused");
    static const int counts[] = {1, 3, 0};
    for (size_t c = 0; c < 3; c++) {
        is_int(CLTOPK_OK, cltopk_set_threads(counts[c]), "set_threads(%d)", counts[c]);
        size_t n = 300000 + rng_below(&rng, 1000);
        size_t ks[] = {1, 64, 1024, 5000};
        run_set(ctx, CLTOPK_FLOAT32, (int)(c & 1), "uniform", n, ks, 4, "threads");
        run_set(ctx, CLTOPK_INT64, 1, "increasing", n, ks, 4, "threads");
    }
}

/* the planner's choices on the "cpu" device (cpu/plan_cpu.c) */
static void planner(cltopk_context *ctx)
{
    static const struct {
        size_t n, k;
        cltopk_algo want;
    } cases[] = {
        {1000, 10, CLTOPK_ALGO_CPU_HEAP},        {1000, 1000, CLTOPK_ALGO_CPU_HEAP},
        {1 << 24, 64, CLTOPK_ALGO_CPU_HEAP},     {1 << 24, 4096, CLTOPK_ALGO_CPU_HEAP},
        {1 << 24, 4097, CLTOPK_ALGO_CPU_RADIX},  {1 << 17, (1 << 17) / 64, CLTOPK_ALGO_CPU_HEAP},
        {1 << 17, (1 << 17) / 64 + 1, CLTOPK_ALGO_CPU_RADIX},
        {1 << 20, 1 << 20, CLTOPK_ALGO_CPU_RADIX},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cltopk_algo got = CLTOPK_ALGO_AUTO;
        int st = cltopk_plan(ctx, CLTOPK_FLOAT32, cases[i].n, cases[i].k, 0, &got);
        ok(st == CLTOPK_OK && got == cases[i].want, "plan n=%zu k=%zu: %s (got %s)", cases[i].n,
           cases[i].k, cltopk_algo_name(cases[i].want), cltopk_algo_name(got));
    }
}

static void selection(cltopk_context *ctx)
{
    static const char *const ds[] = {"uniform", "narrow", "bucket", "increasing", "nan"};
    for (size_t d = 0; d < sizeof ds / sizeof ds[0]; d++)
        for (int ti = 0; ti < 6; ti++)
            for (int s = 0; s < 2; s++) {
                size_t n = (d & 1) ? 1 + rng_below(&rng, 500) : 140000 + rng_below(&rng, 500);
                void *keys = bmalloc(n * 8);
                gen_data(all_types[ti], ds[d], n, s, &rng, keys);
                int64_t *perm = oracle_order(all_types[ti], keys, n, s);
                size_t ranks[] = {0, 1, n / 2, n - 2, n - 1, rng_below(&rng, n),
                                  rng_below(&rng, n)};
                char msg[1024] = "";
                int good = 1;
                for (size_t r = 0; r < sizeof ranks / sizeof *ranks && good; r++) {
                    size_t rank = ranks[r] < n ? ranks[r] : n - 1;
                    cltopk_algo al = r & 1 ? CLTOPK_ALGO_CPU_RADIX : CLTOPK_ALGO_AUTO;
                    if (!check_select(ctx, al, all_types[ti], keys, n, rank, s, perm,
                                      WANT_BOTH, CLTOPK_OK, msg, sizeof msg)) {
                        good = 0;
                        diag_after("rank %zu, %s: %s", rank, cltopk_algo_name(al), msg);
                    }
                }
                ok(good, "select: %s %s %s n=%zu", tname(all_types[ti]), dir_name(s), ds[d], n);
                free(perm);
                free(keys);
            }
}

int main(void)
{
    watchdog(1200);
    setenv("CLTOPK_CPU_ISA", TEST_ISA, 1);
    cltopk_context *ctx = NULL;
    if (cltopk_open(&ctx, "cpu") != CLTOPK_OK)
        bail("cltopk_open(\"cpu\") failed: %s", cltopk_last_error(NULL));
    const char *isa = cltopk_cpu_isa();
    if (strcmp(isa, TEST_ISA) != 0)
        skip_all("the %s CPU kernels are not available here (this processor or build runs %s)",
                 TEST_ISA, isa);
    plan_lazy();
    rng_init(&rng, test_seed());
    diag("CPU kernels: %s", isa);
    is_string(TEST_ISA, cltopk_cpu_isa(), "cltopk_cpu_isa() is %s", TEST_ISA);
    all_values(ctx);
    large(ctx);
    threads(ctx);
    planner(ctx);
    selection(ctx);
    cltopk_close(ctx);
    return tap_done();
}
