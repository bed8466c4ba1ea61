/* algo_cpu.c - the records of the CPU algorithms (cpu-heap, cpu-bitonic,
 * cpu-radix) and the CPU planner's rule: what AUTO runs on the "cpu" device and
 * wherever it runs on the host.  Each record's predict() carries the rule: it
 * predicts a time only for the record the rule picks.
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

#include <math.h>
#include <stdio.h>

#define HEAP_MAX_K 4096
#define BITONIC_MAX_K 4096

/* the CPU algorithm AUTO runs for rq on the host */
static cltopk_algo cpu_choose(const cltopk_request *rq)
{
    if (rq->k <= HEAP_MAX_K && (rq->n < 65536 || rq->k <= rq->n / 64))
        return CLTOPK_ALGO_CPU_HEAP;
    return CLTOPK_ALGO_CPU_RADIX;
}

/* AUTO's CPU top-k: the heap with its guard, falling back to radix */
static int cpu_auto_topk(const cltopk_request *rq, const void *keys, size_t n, size_t k,
                         void *out_keys, int64_t *out_index)
{
    if (cpu_choose(rq) == CLTOPK_ALGO_CPU_HEAP) {
        int st = cltopk_cpu_heap_topk_guarded(rq, keys, n, k, out_keys, out_index);
        if (st != CLTOPK_CPU_DEGRADED)
            return st;
    }
    return cltopk_cpu_radix_topk(rq, keys, n, k, out_keys, out_index);
}

static int cpu_status(cltopk_context *ctx, int st, const char *who)
{
    if (st == CLTOPK_ERR_NO_MEMORY)
        return cltopk_fail(ctx, st, "%s: out of host memory (try a smaller k or fewer threads, "
                           "cltopk_set_threads)", who);
    if (st != CLTOPK_OK)
        return cltopk_fail(ctx, st, "%s failed (an internal error: please report it)", who);
    return st;
}

/* seconds of one CPU top-k: a read at the host's bandwidth with the heap's
 * filter work, plus the merge; device data adds the copy to the host.  On the
 * "cpu" context (no constants) 0: the rule alone decides. */
static double cpu_time(const cltopk_request *rq, const cltopk_consts *c)
{
    if (!c || c->cpubw <= 0)
        return 0;
    double n = (double)rq->n, kb = rq->bytes, k = (double)rq->k;
    double t = n * kb / c->cpubw * 1.5 + k * (k > 1 ? log2(k) : 0) * 8 * 5e-9;
    if (rq->on_device)
        t += n * kb / c->h2d;
    return t;
}

/* AUTO's host pick is the rule's, for host and (staged) device data alike, so
 * that a plan names what runs */
static double heap_predict(const cltopk_context *ctx, const cltopk_request *rq,
                           const cltopk_consts *c)
{
    (void)ctx;
    return cpu_choose(rq) == CLTOPK_ALGO_CPU_HEAP ? cpu_time(rq, c) : -1;
}

static double radix_cpu_predict(const cltopk_context *ctx, const cltopk_request *rq,
                                const cltopk_consts *c)
{
    (void)ctx;
    return cpu_choose(rq) == CLTOPK_ALGO_CPU_RADIX ? cpu_time(rq, c) : -1;
}

/* a selection: pairs copied and partitioned, about three reads of the input
 * at the host's bandwidth (device data: its copy to the host) */
static double radix_cpu_select_predict(const cltopk_context *ctx, const cltopk_request *rq,
                                       const cltopk_consts *c)
{
    (void)ctx;
    if (!c || c->cpubw <= 0)
        return 0;
    double n = (double)rq->n, t = n * (rq->bytes + 8) / c->cpubw * 3;
    if (rq->on_device)
        t += n * rq->bytes / c->h2d;
    return t;
}

static int heap_run_host(cltopk_context *ctx, const cltopk_request *rq)
{
    return cpu_status(ctx, cltopk_cpu_heap_topk(rq, rq->keys, rq->n, rq->k, rq->out_keys,
                                                rq->out_index), "cpu-heap");
}

static int radix_cpu_run_host(cltopk_context *ctx, const cltopk_request *rq)
{
    return cpu_status(ctx, cltopk_cpu_radix_topk(rq, rq->keys, rq->n, rq->k, rq->out_keys,
                                                 rq->out_index), "cpu-radix");
}

static int radix_cpu_select(cltopk_context *ctx, const cltopk_request *rq, size_t rank,
                            void *out_key, int64_t *out_index)
{
    return cpu_status(ctx, cltopk_cpu_select(rq, rank, out_key, out_index), "cpu selection");
}

static int bitonic_cpu_run_host(cltopk_context *ctx, const cltopk_request *rq)
{
    return cpu_status(ctx, cltopk_cpu_bitonic_topk(rq, rq->keys, rq->n, rq->k, rq->out_keys,
                                                   rq->out_index), "cpu-bitonic");
}

const cltopk_algorithm cltopk_algo_cpu_heap = {
    .id = CLTOPK_ALGO_CPU_HEAP,
    .name = "cpu-heap",
    .predict = heap_predict,
    .run_host = heap_run_host,
    .run_planned = cpu_auto_topk,
};

/* CPU bitonic (Appendix C) does O(n log^2 k) work and is never faster here than
 * the heap (the paper found the same): AUTO never picks it */
const cltopk_algorithm cltopk_algo_cpu_bitonic = {
    .id = CLTOPK_ALGO_CPU_BITONIC,
    .name = "cpu-bitonic",
    .kmax32 = BITONIC_MAX_K, /* its vectors of 16 k items must stay in the cache */
    .kmax64 = BITONIC_MAX_K,
    .run_host = bitonic_cpu_run_host,
};

const cltopk_algorithm cltopk_algo_cpu_radix = {
    .id = CLTOPK_ALGO_CPU_RADIX,
    .name = "cpu-radix",
    .predict = radix_cpu_predict,
    .run_host = radix_cpu_run_host,
    .select_host = radix_cpu_select,
    .select_predict = radix_cpu_select_predict,
};
