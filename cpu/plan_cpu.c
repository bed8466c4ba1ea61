/* plan_cpu.c - the CPU algorithms' table records (cpu-radix, cpu-bitonic) and
 * the CPU planner: what AUTO runs on the "cpu" device and wherever it falls back
 * to the host.
 *
 * The heap (heap.c) is the fastest on almost every input when k is small: after
 * its sampled floor and with the SIMD filter it reads the input once and touches
 * the heap a few thousand times, whatever the order of the input (increasing
 * input included).  Its guard stops it when a thread's heap takes more inserts
 * than pays, and AUTO then runs cpu-radix, whose cost does not depend on the
 * data's order at all: it collects every entry above the same sampled floor in
 * one SIMD-filtered pass and selects among those (or, without a usable floor,
 * runs the full radix selection).  Large k (more than HEAP_MAX_K, or more than
 * n / 64) goes to cpu-radix directly: the heaps would no longer fit the cache
 * (at k = 2^18 of 2^25 floats the heap took 113 ms of CPU, cpu-radix 40 ms).  CPU bitonic
 * (Appendix C) does O(n log^2 k) work and is never faster here than the heap
 * (the paper found the same), so AUTO never picks it; it stays for comparison. */
#include "internal.h"

#include <stdio.h>

#define HEAP_MAX_K 4096
#define BITONIC_MAX_K 4096

cltopk_algo cltopk_cpu_choose(const cltopk_request *rq)
{
    if (rq->k <= HEAP_MAX_K && (rq->n < 65536 || rq->k <= rq->n / 64))
        return CLTOPK_ALGO_CPU_HEAP;
    return CLTOPK_ALGO_CPU_RADIX;
}

int cltopk_cpu_auto_topk(const cltopk_request *rq, const void *keys, size_t n, size_t k,
                         void *out_keys, int64_t *out_index)
{
    if (cltopk_cpu_choose(rq) == CLTOPK_ALGO_CPU_HEAP) {
        int st = cltopk_cpu_heap_topk_guarded(rq, keys, n, k, out_keys, out_index);
        if (st != CLTOPK_CPU_DEGRADED)
            return st;
    }
    return cltopk_cpu_radix_topk(rq, keys, n, k, out_keys, out_index);
}

static int any_supports(cltopk_context *ctx, const cltopk_request *rq, char *why, size_t len)
{
    (void)ctx, (void)rq, (void)why, (void)len;
    return 1;
}

static size_t no_workspace(cltopk_context *ctx, const cltopk_request *rq)
{
    (void)ctx, (void)rq;
    return 0;
}

static int nomem(cltopk_context *ctx, int st, const char *who)
{
    if (st == CLTOPK_ERR_NO_MEMORY)
        return cltopk_fail(ctx, st, "%s: out of host memory (try a smaller k or fewer threads, "
                           "cltopk_set_threads)", who);
    if (st != CLTOPK_OK)
        return cltopk_fail(ctx, st, "%s failed (an internal error: please report it)", who);
    return st;
}

static int radix_run_host(cltopk_context *ctx, const cltopk_request *rq)
{
    return nomem(ctx, cltopk_cpu_radix_topk(rq, rq->keys, rq->n, rq->k, rq->out_keys,
                                            rq->out_index), "cpu-radix");
}

const cltopk_algorithm cltopk_algo_cpu_radix = {
    CLTOPK_ALGO_CPU_RADIX, 0, any_supports, radix_run_host, NULL, no_workspace,
};

static int bitonic_supports(cltopk_context *ctx, const cltopk_request *rq, char *why,
                            size_t len)
{
    (void)ctx;
    if (rq->k > BITONIC_MAX_K) {
        snprintf(why, len, "cpu-bitonic takes k <= %d (its vectors of 16 k items must stay "
                 "in the cache); k = %zu: use cpu-radix or CLTOPK_ALGO_AUTO",
                 BITONIC_MAX_K, rq->k);
        return 0;
    }
    return 1;
}

static int bitonic_run_host(cltopk_context *ctx, const cltopk_request *rq)
{
    return nomem(ctx, cltopk_cpu_bitonic_topk(rq, rq->keys, rq->n, rq->k, rq->out_keys,
                                              rq->out_index), "cpu-bitonic");
}

const cltopk_algorithm cltopk_algo_cpu_bitonic = {
    CLTOPK_ALGO_CPU_BITONIC, 0, bitonic_supports, bitonic_run_host, NULL, no_workspace,
};

/* AUTO's heap: guarded, falling back to radix */
static int auto_heap_run_host(cltopk_context *ctx, const cltopk_request *rq)
{
    return nomem(ctx, cltopk_cpu_auto_topk(rq, rq->keys, rq->n, rq->k, rq->out_keys,
                                           rq->out_index), "cpu-heap");
}

static const cltopk_algorithm auto_heap = {
    CLTOPK_ALGO_CPU_HEAP, 0, any_supports, auto_heap_run_host, NULL, no_workspace,
};

const cltopk_algorithm *cltopk_cpu_auto_algorithm(const cltopk_request *rq)
{
    return cltopk_cpu_choose(rq) == CLTOPK_ALGO_CPU_HEAP ? &auto_heap : &cltopk_algo_cpu_radix;
}
