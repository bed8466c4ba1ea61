/* algo_bits.c - CLTOPK_ALGO_BITS: the many-rows kernel of cl/rows.cl (seed
 * 004's "bits": one work-group a row, a local buffer of the elements that beat
 * the current k-th, merged by a bitonic sort) as a record of the table.
 *
 * Its home is cltopk_topk_rows, cltopk_topk_segments and cltopk_knn (lib/rows.c),
 * which call the runtime (lib/rowsdev.c) directly.  The record lets the single-
 * array entry points name it too: one array is one row, so one work-group does
 * all the work; it is exact but slow on large arrays, and AUTO never picks it
 * for them (no predict()). */
#include "internal.h"

#if HAVE_OPENCL

#include <string.h>

static int bits_supports(cltopk_context *ctx, const cltopk_request *rq, char *why,
                         size_t whylen)
{
    cltopk_rows_job job = {.mode = ROWS_DENSE, .nrows = 1};
    job.cols = job.ld = rq->on_device ? rq->n : cltopk_chunk_elems(ctx, rq->bytes);
    if (job.cols > rq->n)
        job.cols = job.ld = rq->n;
    return cltopk_rows_dev_can(ctx, rq, &job, why, whylen);
}

/* one row: keys[off .. off + n) of `in` */
static int bits_device(cltopk_context *ctx, const cltopk_request *rq, void *arg, cl_mem in,
                       size_t off, size_t n, size_t k, cl_mem out_keys, cl_mem out_index,
                       cl_uint want, uint64_t index_base, cl_uint num_wait, const cl_event *wait)
{
    (void)arg;
    cltopk_request r = *rq;
    r.on_device = 1;
    r.n = n;
    r.k = k;
    r.dkeys = in;
    r.doffset = off;
    r.want_keys = (want & 1u) != 0;
    r.want_index = (want & 2u) != 0;
    r.dout_keys = r.want_keys ? out_keys : NULL;
    r.dout_index = r.want_index ? out_index : NULL;
    r.num_wait = num_wait;
    r.wait = wait;
    cltopk_rows_job job = {.mode = ROWS_DENSE, .nrows = 1, .cols = n, .ld = n,
                           .ibase = index_base};
    return cltopk_rows_dev_buffer(ctx, &r, &job);
}

static int bits_run_buffer(cltopk_context *ctx, const cltopk_request *rq)
{
    cl_uint want = (rq->want_keys ? 1u : 0u) | (rq->want_index ? 2u : 0u);
    return bits_device(ctx, rq, NULL, rq->dkeys, rq->doffset, rq->n, rq->k, rq->dout_keys,
                       rq->dout_index, want, 0, rq->num_wait, rq->wait);
}

static int bits_run_host(cltopk_context *ctx, const cltopk_request *rq)
{
    return cltopk_chunked_topk(ctx, rq, bits_device, NULL, 1, NULL);
}

const cltopk_algorithm cltopk_algo_bits = {
    .id = CLTOPK_ALGO_BITS,
    .name = "bits",
    .on_device = 1,
    .needs_int64 = 1,
    .kmax32 = 2048,
    .kmax64 = 2048,
    .max_buffer_n = 0xFFFFFFFE,
    .supports = bits_supports,
    .run_host = bits_run_host,
    .run_buffer = bits_run_buffer,
};

#endif
