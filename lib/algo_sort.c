/* algo_sort.c - CLTOPK_ALGO_SORT: the whole input sorted on the device into THE
 * ORDER (the device sort of devsort.c), then its first k written.
 *
 * The input is read where it lies (no copy of pairs first): the first pass
 * takes its keys and their indices as positions, and since these arrive in
 * position order, the passes of the key alone give the stable order, KEY_BITS
 * / 8 passes of three launches.  The keys travel as the input's bits, so the
 * last pass writes out_keys (bit for bit: -0 stays -0, NaN payloads stay) and
 * out_index (int64) directly; it writes only the first k.  Keys alone cost
 * the same passes (the positions are what keeps the sort stable).
 *
 * Scratch: two sets of n (key, 32-bit position) pairs and the per-group digit
 * counts (devsort.c).  Host data larger than one device chunk runs per chunk
 * and merges the chunks' first k on the host (cltopk_chunked_topk). */
#include "internal.h"

#if HAVE_OPENCL

#include <stdio.h>

static int sort_supports(cltopk_context *ctx, const cltopk_request *rq, char *why,
                         size_t whylen)
{
    if (!rq->on_device && rq->k > ((size_t)1 << 31)) {
        snprintf(why, whylen,
                 "sort of host data takes k up to 2^31 (one device chunk holds the first k, "
                 "with 32-bit positions); use cpu-radix");
        return 0;
    }
    return cltopk_devsort_scratch(ctx, rq->bytes * 8, 1, why, whylen) != 0;
}

/* sort keys[off .. off+n) of `in` and write its first k (want bits: 1 keys, 2
 * positions + index_base) */
static int sort_device(cltopk_context *ctx, const cltopk_request *rq, void *arg, cl_mem in,
                       size_t off, size_t n, size_t k, cl_mem out_keys, cl_mem out_index,
                       cl_uint want, uint64_t index_base, cl_uint num_wait,
                       const cl_event *wait)
{
    (void)arg;
    return cltopk_devsort_input(ctx, rq, in, off, n, k, out_keys, out_index, want, index_base,
                                NULL, NULL, num_wait, wait);
}

static int sort_run_buffer(cltopk_context *ctx, const cltopk_request *rq)
{
    cl_uint want = (rq->want_keys ? 1u : 0u) | (rq->want_index ? 2u : 0u);
    return sort_device(ctx, rq, NULL, rq->dkeys, rq->doffset, rq->n, rq->k, rq->dout_keys,
                       rq->dout_index, want, 0, rq->num_wait, rq->wait);
}

static int sort_run_host(cltopk_context *ctx, const cltopk_request *rq)
{
    return cltopk_chunked_topk(ctx, rq, sort_device, NULL, 1, NULL);
}

static size_t sort_workspace(cltopk_context *ctx, const cltopk_request *rq)
{
    char why[512];
    size_t n = rq->n, host = 0;
    if (!rq->on_device) /* one chunk or streamed piece at a time */
        n = cltopk_host_input(ctx, rq, &host);
    size_t bytes = cltopk_devsort_scratch(ctx, rq->bytes * 8, n, why, sizeof why);
    bytes += host; /* 0 for device data */
    return bytes;
}

/* KEY_BITS / 8 passes of three launches, each reading and writing the pairs
 * (about 4 reads' worth of traffic a pass with its local ranking, measured:
 * 36.4 ms for 2^29 f32 on the H200, 73 reads there); the winners' time of a
 * selection is the same per pass.  AUTO considers it from k = n / 4 up, where
 * the output dominates. */
static double sort_predict(const cltopk_context *ctx, const cltopk_request *rq,
                           const cltopk_consts *c)
{
    (void)ctx;
    if (!c || rq->k < rq->n / 4)
        return -1;
    return cltopk_devsort_time(c, rq->n, rq->bytes);
}

const cltopk_algorithm cltopk_algo_sort = {
    .id = CLTOPK_ALGO_SORT,
    .name = "sort",
    .on_device = 1,
    .needs_int64 = 1,
    .max_buffer_n = 0xFFFFFFFE,
    .supports = sort_supports,
    .predict = sort_predict,
    .run_host = sort_run_host,
    .run_buffer = sort_run_buffer,
    .workspace = sort_workspace,
};

#endif
