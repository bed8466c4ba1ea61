/* plan.c - the algorithm table and the choice among its entries. */
#include "internal.h"

#include <stdio.h>
#include <string.h>

static int heap_supports(cltopk_context *ctx, const cltopk_request *rq, char *why, size_t len)
{
    (void)ctx, (void)rq, (void)why, (void)len;
    return 1;
}

static int heap_run_host(cltopk_context *ctx, const cltopk_request *rq)
{
    int st = cltopk_cpu_heap_topk(rq, rq->keys, rq->n, rq->k, rq->out_keys, rq->out_index);
    if (st != CLTOPK_OK)
        return cltopk_fail(ctx, st, "cpu-heap: out of host memory for %zu results a thread",
                           rq->k);
    return st;
}

static size_t heap_workspace(cltopk_context *ctx, const cltopk_request *rq)
{
    (void)ctx, (void)rq;
    return 0;
}

/* cl_mem data for a CPU algorithm: read to the host, run, write back (blocks) */
#if HAVE_OPENCL
#include <stdlib.h>
static int heap_run_buffer(cltopk_context *ctx, const cltopk_request *rq)
{
    size_t kb = (size_t)rq->bytes;
    char *keys = malloc(rq->n ? rq->n * kb : 1);
    char *ok = malloc(rq->k * kb);
    int64_t *oi = malloc(rq->k * 8);
    int st = CLTOPK_OK;
    cl_int err;
    if (!keys || !ok || !oi) {
        st = cltopk_fail(ctx, CLTOPK_ERR_NO_MEMORY, "out of host memory staging %zu elements",
                         rq->n);
        goto out;
    }
    {
        cl_event *wl = NULL;
        cl_uint nw = rq->num_wait + (ctx->last ? 1 : 0);
        if (nw && !(wl = malloc(nw * sizeof *wl))) {
            st = cltopk_fail(ctx, CLTOPK_ERR_NO_MEMORY, "out of memory for an event list");
            goto out;
        }
        cl_uint j = 0;
        if (ctx->last)
            wl[j++] = ctx->last;
        for (cl_uint i = 0; i < rq->num_wait; i++)
            wl[j++] = rq->wait[i];
        err = clEnqueueReadBuffer(ctx->queue, rq->dkeys, CL_TRUE, rq->doffset * kb, rq->n * kb,
                                  keys, nw, wl, NULL);
        free(wl);
    }
    if (err != CL_SUCCESS) {
        st = cltopk_clfail(ctx, err, "clEnqueueReadBuffer (keys to the host)");
        goto out;
    }
    st = cltopk_cpu_auto_topk(rq, keys, rq->n, rq->k, ok, oi); /* only AUTO gets here */
    if (st != CLTOPK_OK) {
        st = cltopk_fail(ctx, st, "cpu-heap: out of host memory");
        goto out;
    }
    cl_event ev = NULL;
    err = CL_SUCCESS;
    if (rq->want_keys)
        err = clEnqueueWriteBuffer(ctx->queue, rq->dout_keys, CL_TRUE, 0, rq->k * kb, ok, 0, NULL,
                                   NULL);
    if (err == CL_SUCCESS && rq->want_index)
        err = clEnqueueWriteBuffer(ctx->queue, rq->dout_index, CL_TRUE, 0, rq->k * 8, oi, 0, NULL,
                                   NULL);
    if (err == CL_SUCCESS && rq->done)
        err = clEnqueueMarkerWithWaitList(ctx->queue, 0, NULL, &ev);
    if (err != CL_SUCCESS) {
        st = cltopk_clfail(ctx, err, "writing the results to the device");
        goto out;
    }
    if (rq->done)
        *rq->done = ev;
out:
    free(keys);
    free(ok);
    free(oi);
    return st;
}
#endif

const cltopk_algorithm cltopk_algo_cpu_heap = {
    CLTOPK_ALGO_CPU_HEAP, 0, heap_supports, heap_run_host,
#if HAVE_OPENCL
    heap_run_buffer,
#else
    NULL,
#endif
    heap_workspace,
};

const cltopk_algorithm *cltopk_algorithm_get(cltopk_algo id)
{
    switch (id) {
    case CLTOPK_ALGO_CPU_HEAP: return &cltopk_algo_cpu_heap;
    case CLTOPK_ALGO_CPU_BITONIC: return &cltopk_algo_cpu_bitonic; /* cpu/plan_cpu.c */
    case CLTOPK_ALGO_CPU_RADIX: return &cltopk_algo_cpu_radix;
#if HAVE_OPENCL
    case CLTOPK_ALGO_BITONIC: return &cltopk_algo_bitonic;
    case CLTOPK_ALGO_RADIX_SELECT: return &cltopk_algo_radix_select;
    case CLTOPK_ALGO_SBP_RADIX: return &cltopk_algo_sbp_radix;
    case CLTOPK_ALGO_SBP_TREE: return &cltopk_algo_sbp_tree;
    case CLTOPK_ALGO_SORT: return &cltopk_algo_sort;
#endif
    default: return NULL;
    }
}

int cltopk_choose(cltopk_context *ctx, const cltopk_request *rq, cltopk_algo algo,
                  int device_data, const cltopk_algorithm **out)
{
    char why[512] = "";
    if (algo != CLTOPK_ALGO_AUTO) {
        const cltopk_algorithm *a = cltopk_algorithm_get(algo);
        if (!a) {
#if !HAVE_OPENCL
            if (algo == CLTOPK_ALGO_BITONIC)
                return cltopk_fail(ctx, CLTOPK_ERR_UNSUPPORTED,
                                   "bitonic needs OpenCL, and this cltopk was built without it");
#endif
            return cltopk_fail(ctx, CLTOPK_ERR_UNSUPPORTED,
                               "algorithm %s is not implemented in cltopk %s; use "
                               "CLTOPK_ALGO_AUTO or an implemented algorithm (cltopk.h lists them)",
                               cltopk_algo_name(algo), CLTOPK_VERSION_STRING);
        }
        if (a->needs_opencl && !ctx->is_cl)
            return cltopk_fail(ctx, CLTOPK_ERR_UNSUPPORTED,
                               "%s runs on an OpenCL device, and this context is the \"cpu\" "
                               "device; open one with cltopk_open(&ctx, \"gpu\") or similar",
                               cltopk_algo_name(algo));
        if (!a->supports(ctx, rq, why, sizeof why))
            return cltopk_fail(ctx, CLTOPK_ERR_UNSUPPORTED, "%s", why);
        *out = a;
        return CLTOPK_OK;
    }
#if HAVE_OPENCL
    /* the cost models of lib/model.c choose on OpenCL contexts */
    if (ctx->is_cl)
        return cltopk_plan_auto(ctx, rq, device_data, out);
#endif
    /* the host: the CPU planner (cpu/plan_cpu.c); cl_mem data takes the record
     * with a run_buffer, which runs the same planner */
    *out = device_data ? &cltopk_algo_cpu_heap : cltopk_cpu_auto_algorithm(rq);
    return CLTOPK_OK;
}
