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
#include <string.h>

static int supports(cltopk_context *ctx, const cltopk_request *rq, char *why, size_t whylen)
{
    if (!ctx->caps.int64) {
        snprintf(why, whylen,
                 "%s is an embedded-profile device without cl_khr_int64; sort needs 64-bit "
                 "integers (use the CPU algorithms)", ctx->name);
        return 0;
    }
    if (rq->n > 0xFFFFFFFEull && rq->on_device) {
        snprintf(why, whylen,
                 "sort of a cl_mem takes at most 4294967294 elements per call (32-bit "
                 "positions); split the buffer");
        return 0;
    }
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
    cltopk_devsort_job j;
    memset(&j, 0, sizeof j);
    j.key_bits = rq->bytes * 8;
    j.kind = rq->kind;
    j.smallest = rq->smallest;
    j.m = n;
    j.keys = in;
    j.key_off = off;
    j.final = 1;
    j.k = k;
    j.want = want;
    j.out_keys = (want & 1u) ? out_keys : NULL;
    j.out_index = (want & 2u) ? out_index : NULL;
    j.base = index_base;
    return cltopk_devsort(ctx, &j, num_wait, wait);
}

static int run_buffer(cltopk_context *ctx, const cltopk_request *rq)
{
    cl_uint want = (rq->want_keys ? 1u : 0u) | (rq->want_index ? 2u : 0u);
    int st = sort_device(ctx, rq, NULL, rq->dkeys, rq->doffset, rq->n, rq->k, rq->dout_keys,
                         rq->dout_index, want, 0, rq->num_wait, rq->wait);
    if (st == CLTOPK_OK && rq->done) {
        clRetainEvent(ctx->last);
        *rq->done = ctx->last;
    }
    return st;
}

static int run_host(cltopk_context *ctx, const cltopk_request *rq)
{
    return cltopk_chunked_topk(ctx, rq, sort_device, NULL, 1, NULL);
}

static size_t workspace(cltopk_context *ctx, const cltopk_request *rq)
{
    char why[512];
    size_t n = rq->n, chunk = cltopk_chunk_elems(ctx, rq->bytes);
    if (!rq->on_device && n > chunk)
        n = chunk < rq->k ? rq->k : chunk;
    size_t bytes = cltopk_devsort_scratch(ctx, rq->bytes * 8, n, why, sizeof why);
    if (!rq->on_device)
        bytes += n * (size_t)rq->bytes + rq->k * ((size_t)rq->bytes + 8);
    return bytes;
}

const cltopk_algorithm cltopk_algo_sort = {
    CLTOPK_ALGO_SORT, 1, supports, run_host, run_buffer, workspace,
};

#endif
