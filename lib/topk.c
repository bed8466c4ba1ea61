/* topk.c - the API entry points: validate, describe, plan, run. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const int kind_of[6] = {KIND_FLOAT, KIND_FLOAT, KIND_SIGNED, KIND_UNSIGNED, KIND_SIGNED,
                               KIND_UNSIGNED};

/* Validate what every entry point shares and describe the request. */
static int describe(cltopk_context *ctx, const char *fn, cltopk_dtype type, size_t n, size_t k,
                    unsigned flags, cltopk_algo algo, cltopk_request *rq)
{
    memset(rq, 0, sizeof *rq);
    size_t bytes = cltopk_dtype_size(type);
    if (!bytes)
        return cltopk_fail(ctx, CLTOPK_ERR_BAD_TYPE, "%s: unknown type %d (use a cltopk_dtype)",
                           fn, (int)type);
    if (flags & ~CLTOPK_SMALLEST)
        return cltopk_fail(ctx, CLTOPK_ERR_BAD_FLAGS,
                           "%s: unknown flag bits 0x%x (only CLTOPK_SMALLEST is defined)", fn,
                           flags & ~CLTOPK_SMALLEST);
    if ((unsigned)algo > CLTOPK_ALGO_SAMPLE_FILTER)
        return cltopk_fail(ctx, CLTOPK_ERR_BAD_ALGO, "%s: unknown algorithm %d", fn, (int)algo);
    if (n > SIZE_MAX / 16)
        return cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT, "%s: n = %zu is too large", fn, n);
    rq->type = type;
    rq->bytes = (int)bytes;
    rq->kind = kind_of[type];
    rq->n = n;
    rq->k = k;
    rq->smallest = (flags & CLTOPK_SMALLEST) != 0;
    return CLTOPK_OK;
}

int cltopk_topk(cltopk_context *ctx, cltopk_dtype type, const void *keys, size_t n, size_t k,
                unsigned flags, cltopk_algo algo, void *out_keys, int64_t *out_index)
{
    if (!ctx)
        return cltopk_fail(NULL, CLTOPK_ERR_INVALID_ARGUMENT, "cltopk_topk: ctx is NULL");
    pthread_mutex_lock(&ctx->lock);
    ctx->err[0] = 0;
    cltopk_request rq;
    int st = describe(ctx, "cltopk_topk", type, n, k, flags, algo, &rq);
    if (st != CLTOPK_OK)
        goto out;
    if (k > n) {
        st = cltopk_fail(ctx, CLTOPK_ERR_K_RANGE, "cltopk_topk: k = %zu is larger than n = %zu",
                         k, n);
        goto out;
    }
    if (k == 0)
        goto out;
    if (!keys || (!out_keys && !out_index)) {
        st = cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT,
                         "cltopk_topk: %s", !keys ? "keys is NULL"
                                                  : "out_keys and out_index are both NULL");
        goto out;
    }
    rq.keys = keys;
    rq.out_keys = out_keys;
    rq.out_index = out_index;
    rq.want_keys = out_keys != NULL;
    rq.want_index = out_index != NULL;
    const cltopk_algorithm *a;
    st = cltopk_choose(ctx, &rq, algo, 0, &a);
    if (st == CLTOPK_OK)
        st = a->run_host(ctx, &rq);
out:
    pthread_mutex_unlock(&ctx->lock);
    return st;
}

int cltopk_select(cltopk_context *ctx, cltopk_dtype type, const void *keys, size_t n,
                  size_t rank, unsigned flags, cltopk_algo algo, void *out_key,
                  int64_t *out_index)
{
    if (!ctx)
        return cltopk_fail(NULL, CLTOPK_ERR_INVALID_ARGUMENT, "cltopk_select: ctx is NULL");
    pthread_mutex_lock(&ctx->lock);
    ctx->err[0] = 0;
    cltopk_request rq;
    char *tk = NULL;
    int64_t *ti = NULL;
    int st = describe(ctx, "cltopk_select", type, n, rank + 1, flags, algo, &rq);
    if (st != CLTOPK_OK)
        goto out;
    if (rank >= n) {
        st = cltopk_fail(ctx, CLTOPK_ERR_RANK_RANGE,
                         "cltopk_select: rank = %zu is not below n = %zu", rank, n);
        goto out;
    }
    if (!keys || (!out_key && !out_index)) {
        st = cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT, "cltopk_select: %s",
                         !keys ? "keys is NULL" : "out_key and out_index are both NULL");
        goto out;
    }
    rq.keys = keys;
    const cltopk_algorithm *a = NULL;
    if (algo == CLTOPK_ALGO_AUTO) {
        /* a device top-k of rank + 1 when AUTO would pick one, else a radix selection */
        st = cltopk_choose(ctx, &rq, algo, 0, &a);
        if (st != CLTOPK_OK)
            goto out;
        if (!a->needs_opencl) {
            st = cltopk_cpu_select(&rq, rank, out_key, out_index);
            if (st != CLTOPK_OK)
                cltopk_fail(ctx, st, "cltopk_select: CPU selection failed");
            goto out;
        }
#if HAVE_OPENCL
        /* on an OpenCL device, AUTO selects by the device radix select */
        st = cltopk_radix_select_host(ctx, &rq, rank, out_key, out_index);
        goto out;
#endif
    } else {
        st = cltopk_choose(ctx, &rq, algo, 0, &a);
        if (st != CLTOPK_OK)
            goto out;
#if HAVE_OPENCL
        if (a->id == CLTOPK_ALGO_RADIX_SELECT) { /* no top-k of rank + 1 */
            st = cltopk_radix_select_host(ctx, &rq, rank, out_key, out_index);
            goto out;
        }
#endif
    }
    tk = malloc(rq.k * (size_t)rq.bytes);
    ti = malloc(rq.k * sizeof *ti);
    if (!tk || !ti) {
        st = cltopk_fail(ctx, CLTOPK_ERR_NO_MEMORY,
                         "cltopk_select: out of host memory for a top-%zu (use CLTOPK_ALGO_AUTO, "
                         "which selects without it)", rq.k);
        goto out;
    }
    rq.out_keys = tk;
    rq.out_index = ti;
    rq.want_keys = rq.want_index = 1;
    st = a->run_host(ctx, &rq);
    if (st == CLTOPK_OK) {
        if (out_key)
            memcpy(out_key, tk + rank * (size_t)rq.bytes, (size_t)rq.bytes);
        if (out_index)
            *out_index = ti[rank];
    }
out:
    free(tk);
    free(ti);
    pthread_mutex_unlock(&ctx->lock);
    return st;
}

#if HAVE_OPENCL
static int check_mem(cltopk_context *ctx, cl_mem m, size_t need, const char *what)
{
    size_t size = 0;
    cl_int err = clGetMemObjectInfo(m, CL_MEM_SIZE, sizeof size, &size, NULL);
    if (err != CL_SUCCESS)
        return cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT,
                           "cltopk_topk_buffer: %s is not a valid cl_mem (%s)", what,
                           cltopk_clerror_name(err));
    if (size < need)
        return cltopk_fail(ctx, CLTOPK_ERR_BUFFER_SIZE,
                           "cltopk_topk_buffer: %s holds %zu bytes, the call needs %zu", what,
                           size, need);
    return CLTOPK_OK;
}
#endif

int cltopk_topk_buffer(cltopk_context *ctx, cltopk_dtype type, cl_mem keys, size_t offset,
                       size_t n, size_t k, unsigned flags, cltopk_algo algo, cl_mem out_keys,
                       cl_mem out_index, cl_uint num_wait, const cl_event *wait, cl_event *done)
{
    if (!ctx)
        return cltopk_fail(NULL, CLTOPK_ERR_INVALID_ARGUMENT, "cltopk_topk_buffer: ctx is NULL");
#if HAVE_OPENCL
    pthread_mutex_lock(&ctx->lock);
    ctx->err[0] = 0;
    cltopk_request rq;
    int st = describe(ctx, "cltopk_topk_buffer", type, n, k, flags, algo, &rq);
    if (st != CLTOPK_OK)
        goto out;
    if (!ctx->is_cl) {
        st = cltopk_fail(ctx, CLTOPK_ERR_NO_OPENCL,
                         "cltopk_topk_buffer: this context is the \"cpu\" device; cl_mem data "
                         "needs a context opened on an OpenCL device");
        goto out;
    }
    if (k > n) {
        st = cltopk_fail(ctx, CLTOPK_ERR_K_RANGE,
                         "cltopk_topk_buffer: k = %zu is larger than n = %zu", k, n);
        goto out;
    }
    if ((num_wait > 0) != (wait != NULL)) {
        st = cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT,
                         "cltopk_topk_buffer: num_wait and wait disagree");
        goto out;
    }
    if (done)
        *done = NULL;
    if (k == 0) {
        /* nothing to compute; the event still completes after the wait list */
        if (done) {
            cl_int err = clEnqueueMarkerWithWaitList(ctx->queue, num_wait, wait, done);
            if (err != CL_SUCCESS)
                st = cltopk_clfail(ctx, err, "clEnqueueMarkerWithWaitList");
        }
        goto out;
    }
    if (!keys || (!out_keys && !out_index)) {
        st = cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT, "cltopk_topk_buffer: %s",
                         !keys ? "keys is NULL" : "out_keys and out_index are both NULL");
        goto out;
    }
    if (offset > SIZE_MAX / 16 - n) {
        st = cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT, "cltopk_topk_buffer: offset too large");
        goto out;
    }
    if ((st = check_mem(ctx, keys, (offset + n) * (size_t)rq.bytes, "keys")) != CLTOPK_OK ||
        (out_keys && (st = check_mem(ctx, out_keys, k * (size_t)rq.bytes, "out_keys")) != CLTOPK_OK) ||
        (out_index && (st = check_mem(ctx, out_index, k * 8, "out_index")) != CLTOPK_OK))
        goto out;
    rq.on_device = 1;
    rq.dkeys = keys;
    rq.doffset = offset;
    rq.dout_keys = out_keys;
    rq.dout_index = out_index;
    rq.want_keys = out_keys != NULL;
    rq.want_index = out_index != NULL;
    rq.num_wait = num_wait;
    rq.wait = wait;
    rq.done = done;
    const cltopk_algorithm *a;
    st = cltopk_choose(ctx, &rq, algo, 1, &a);
    /* cltopk.h: only device algorithms (or AUTO, which may fall back) take cl_mem */
    if (st == CLTOPK_OK && algo != CLTOPK_ALGO_AUTO && !a->needs_opencl)
        st = cltopk_fail(ctx, CLTOPK_ERR_UNSUPPORTED,
                         "cltopk_topk_buffer: %s runs on host memory; cl_mem data takes a "
                         "device algorithm (bitonic) or CLTOPK_ALGO_AUTO",
                         cltopk_algo_name(algo));
    if (st == CLTOPK_OK && !a->run_buffer)
        st = cltopk_fail(ctx, CLTOPK_ERR_UNSUPPORTED, "%s cannot read device buffers",
                         cltopk_algo_name(a->id));
    if (st == CLTOPK_OK)
        st = a->run_buffer(ctx, &rq);
out:
    pthread_mutex_unlock(&ctx->lock);
    return st;
#else
    (void)type, (void)keys, (void)offset, (void)n, (void)k, (void)flags, (void)algo;
    (void)out_keys, (void)out_index, (void)num_wait, (void)wait, (void)done;
    return cltopk_fail(ctx, CLTOPK_ERR_NO_OPENCL, "cltopk_topk_buffer: built without OpenCL");
#endif
}

int cltopk_workspace_size(cltopk_context *ctx, cltopk_dtype type, size_t n, size_t k,
                          unsigned flags, cltopk_algo algo, size_t *bytes)
{
    if (!ctx || !bytes)
        return cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT,
                           "cltopk_workspace_size: ctx and bytes must not be NULL");
    pthread_mutex_lock(&ctx->lock);
    cltopk_request rq;
    int st = describe(ctx, "cltopk_workspace_size", type, n, k, flags, algo, &rq);
    if (st == CLTOPK_OK && k > n)
        st = cltopk_fail(ctx, CLTOPK_ERR_K_RANGE, "k = %zu is larger than n = %zu", k, n);
    const cltopk_algorithm *a = NULL;
    if (st == CLTOPK_OK && k > 0)
        st = cltopk_choose(ctx, &rq, algo, 0, &a);
    if (st == CLTOPK_OK)
        *bytes = a ? a->workspace(ctx, &rq) : 0;
    pthread_mutex_unlock(&ctx->lock);
    return st;
}

static int plan_for(cltopk_context *ctx, const char *fn, cltopk_dtype type, size_t n, size_t k,
                    unsigned flags, int device_data, cltopk_algo *chosen)
{
    if (!ctx || !chosen)
        return cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT, "%s: ctx and chosen must not be NULL",
                           fn);
    if (device_data && !ctx->is_cl)
        return cltopk_fail(ctx, CLTOPK_ERR_NO_OPENCL,
                           "%s: the \"cpu\" context has no device buffers; open an OpenCL "
                           "device", fn);
    pthread_mutex_lock(&ctx->lock);
    cltopk_request rq;
    int st = describe(ctx, fn, type, n, k, flags, CLTOPK_ALGO_AUTO, &rq);
    if (st == CLTOPK_OK && k > n)
        st = cltopk_fail(ctx, CLTOPK_ERR_K_RANGE, "k = %zu is larger than n = %zu", k, n);
    const cltopk_algorithm *a = NULL;
    if (st == CLTOPK_OK)
        st = cltopk_choose(ctx, &rq, CLTOPK_ALGO_AUTO, device_data, &a);
    if (st == CLTOPK_OK)
        *chosen = a->id;
    pthread_mutex_unlock(&ctx->lock);
    return st;
}

int cltopk_plan(cltopk_context *ctx, cltopk_dtype type, size_t n, size_t k, unsigned flags,
                cltopk_algo *chosen)
{
    return plan_for(ctx, "cltopk_plan", type, n, k, flags, 0, chosen);
}

int cltopk_plan_buffer(cltopk_context *ctx, cltopk_dtype type, size_t n, size_t k,
                       unsigned flags, cltopk_algo *chosen)
{
    return plan_for(ctx, "cltopk_plan_buffer", type, n, k, flags, 1, chosen);
}
