/* algo_radix.c - the radix-select record: top-k for any k up to n and the
 * element at any rank by the device radix select (lib/rselect.c,
 * cl/radix_select.cl; CLTOPK_RADIX tunes it).  Host data larger than one device
 * chunk (cltopk_chunk_elems) runs per chunk and merges the chunks' answers on
 * the host. */
#include "internal.h"

#if HAVE_OPENCL

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int radix_supports(cltopk_context *ctx, const cltopk_request *rq, char *why,
                          size_t whylen)
{
    return cltopk_rselect_supports(ctx, rq, why, whylen);
}

/* keys[off .. off+n) of `in`: the best k in order (topk), or the element at
 * position k - 1 */
static int rs_run(cltopk_context *ctx, const cltopk_request *rq, cl_mem in, size_t off, size_t n,
                  size_t k, int topk, cl_mem out_keys, cl_mem out_index, cl_uint want,
                  uint64_t index_base, cl_uint num_wait, const cl_event *wait)
{
    cltopk_rselect_job j = {.in = in, .off = off, .n = n, .k = k, .topk = topk,
                            .out_keys = out_keys, .out_index = out_index, .want = want,
                            .index_base = index_base};
    return cltopk_rselect(ctx, rq, &j, num_wait, wait);
}

static int radix_run_buffer(cltopk_context *ctx, const cltopk_request *rq)
{
    cl_uint want = (rq->want_keys ? 1u : 0u) | (rq->want_index ? 2u : 0u);
    return rs_run(ctx, rq, rq->dkeys, rq->doffset, rq->n, rq->k, 1, rq->dout_keys,
                  rq->dout_index, want, 0, rq->num_wait, rq->wait);
}

/* host data, per device chunk: the best min(k, len), or (one chunk) the
 * element at k - 1 */
static int rs_topk_device(cltopk_context *ctx, const cltopk_request *rq, void *arg, cl_mem in,
                          size_t off, size_t n, size_t k, cl_mem out_keys, cl_mem out_index,
                          cl_uint want, uint64_t index_base, cl_uint num_wait,
                          const cl_event *wait)
{
    (void)arg;
    return rs_run(ctx, rq, in, off, n, k, 1, out_keys, out_index, want, index_base, num_wait,
                  wait);
}

static int rs_select_device(cltopk_context *ctx, const cltopk_request *rq, void *arg, cl_mem in,
                            size_t off, size_t n, size_t k, cl_mem out_keys, cl_mem out_index,
                            cl_uint want, uint64_t index_base, cl_uint num_wait,
                            const cl_event *wait)
{
    (void)arg;
    return rs_run(ctx, rq, in, off, n, k, 0, out_keys, out_index, want, index_base, num_wait,
                  wait);
}

static int radix_run_host(cltopk_context *ctx, const cltopk_request *rq)
{
    return cltopk_chunked_topk(ctx, rq, rs_topk_device, NULL, 1, NULL);
}

static int radix_select_host(cltopk_context *ctx, const cltopk_request *rq, size_t rank,
                             void *out_key, int64_t *out_index)
{
    return cltopk_chunked_select(ctx, rq, rs_topk_device, rs_select_device, NULL, rank, out_key,
                                 out_index);
}

static int radix_select_buffer(cltopk_context *ctx, const cltopk_request *rq, size_t rank)
{
    cl_uint want = (rq->want_keys ? 1u : 0u) | (rq->want_index ? 2u : 0u);
    return rs_run(ctx, rq, rq->dkeys, rq->doffset, rq->n, rank + 1, 0, rq->dout_keys,
                  rq->dout_index, want, 0, rq->num_wait, rq->wait);
}

/* GPUs: fitted to the H200 measurements (bench/RESULTS.md): 5.2 ms f32 and
 * 3.2 ms u32 uniform (2^29), any k to 2^20.  Other devices: integers, digit 0
 * already cuts to 1/256 (histogram + filter: 2R); floats of one sign and a few
 * exponents: digit 0 narrows, digit 1 cuts (3R); plus local work and launches. */
static double radix_predict(const cltopk_context *ctx, const cltopk_request *rq,
                            const cltopk_consts *c)
{
    (void)ctx;
    if (!c)
        return -1;
    double n = (double)rq->n, kb = rq->bytes, digits = rq->bytes + 4;
    double R = n * kb / c->bw, sort = cltopk_winners_time(c, rq->k, rq->bytes);
    if (c->gpu)
        return R * (rq->kind == KIND_FLOAT ? 11.1 : 6.7) + (1 + 3 * digits) * c->launch + sort;
    double reads = rq->kind == KIND_FLOAT ? 3 : 2;
    return reads * R * (1 + 1.0 / 256) + n * 3 / c->lrate + (1 + 3 * digits) * c->launch + sort;
}

static size_t radix_workspace(cltopk_context *ctx, const cltopk_request *rq)
{
    return cltopk_rselect_workspace(ctx, rq);
}

/* a selection: the same passes without the winners' sort */
static double radix_select_predict(const cltopk_context *ctx, const cltopk_request *rq,
                                   const cltopk_consts *c)
{
    if (!c)
        return -1;
    return radix_predict(ctx, rq, c) - cltopk_winners_time(c, rq->k, rq->bytes);
}

const cltopk_algorithm cltopk_algo_radix_select = {
    .id = CLTOPK_ALGO_RADIX_SELECT,
    .name = "radix-select",
    .on_device = 1,
    .needs_int64 = 1,
    .max_buffer_n = 0x7FFFFFFF, /* 32-bit positions and counts inside one launch */
    .supports = radix_supports,
    .predict = radix_predict,
    .run_host = radix_run_host,
    .run_buffer = radix_run_buffer,
    .workspace = radix_workspace,
    .select_host = radix_select_host,
    .select_buffer = radix_select_buffer,
    .select_predict = radix_select_predict,
};

#endif
