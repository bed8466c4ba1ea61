/* bench.c - cltopk_benchmark: time one algorithm beside the read floor. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if HAVE_OPENCL
/* cltopk_clfail under the context's lock (this file calls the locking API) */
static int bench_clfail(cltopk_context *ctx, cl_int err, const char *what)
{
    pthread_mutex_lock(&ctx->lock);
    int st = cltopk_clfail(ctx, err, what);
    pthread_mutex_unlock(&ctx->lock);
    return st;
}
#endif

int cltopk_benchmark(cltopk_context *ctx, cltopk_dtype type, const void *keys, size_t n, size_t k,
                     unsigned flags, cltopk_algo algo, int reps, double *median_s,
                     double *floor_s)
{
    const char *fn = "cltopk_benchmark";
    if (!ctx)
        return cltopk_fail(NULL, CLTOPK_ERR_INVALID_ARGUMENT, "%s: ctx is NULL", fn);
    /* the shared checks, under the context's lock like every detail text */
    pthread_mutex_lock(&ctx->lock);
    cltopk_request rq;
    int st = cltopk_describe(ctx, fn, type, n, k, flags,
                             CLTOPK_SMALLEST | CLTOPK_BENCH_KEYS_ONLY | CLTOPK_BENCH_SELECT, algo,
                             &rq);
    if (st == CLTOPK_OK && (!median_s || !keys || reps < 1))
        st = cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT,
                         "%s: keys and median_s are needed, reps >= 1", fn);
    if (st == CLTOPK_OK && (k == 0 || k > n))
        st = cltopk_fail(ctx, CLTOPK_ERR_K_RANGE, "%s: need 0 < k <= n", fn);
    pthread_mutex_unlock(&ctx->lock);
    if (st != CLTOPK_OK)
        return st;
    if (reps > 64)
        reps = 64;
    size_t bytes = (size_t)rq.bytes;
    int keys_only = (flags & CLTOPK_BENCH_KEYS_ONLY) != 0;
    flags &= ~CLTOPK_BENCH_KEYS_ONLY;
    /* time a selection of rank k - 1 */
    int sel = (flags & CLTOPK_BENCH_SELECT) != 0;
    flags &= ~CLTOPK_BENCH_SELECT;
    cltopk_algo chosen = algo;
    /* AUTO: what cltopk_topk_buffer would run on device data (timed so), else
     * what cltopk_topk would run */
    if (algo == CLTOPK_ALGO_AUTO &&
        (st = ctx->is_cl ? cltopk_plan_buffer(ctx, type, n, k, flags | (sel ? CLTOPK_PLAN_SELECT : 0u), &chosen)
                         : cltopk_plan(ctx, type, n, k, flags | (sel ? CLTOPK_PLAN_SELECT : 0u), &chosen)) != CLTOPK_OK)
        return st;
    void *ok = malloc(k * bytes);
    int64_t *oi = malloc(k * sizeof *oi);
    double t[64];
    if (!ok || !oi) {
        free(ok);
        free(oi);
        pthread_mutex_lock(&ctx->lock);
        st = cltopk_fail(ctx, CLTOPK_ERR_NO_MEMORY, "%s: out of memory", fn);
        pthread_mutex_unlock(&ctx->lock);
        return st;
    }
    const cltopk_algorithm *a = cltopk_algorithm_get(chosen);
    if (!a || !a->on_device || !ctx->is_cl) {
        /* host algorithm on the host array; and any call the host API rejects
         * (a device algorithm on the "cpu" context: UNSUPPORTED, as cltopk_topk) */
        for (int r = -1; r < reps && st == CLTOPK_OK; r++) {
            double t0 = cltopk_now();
            /* AUTO runs as AUTO: its host records may guard and switch (the heap) */
            st = sel ? cltopk_select(ctx, type, keys, n, k - 1, flags, algo, ok, oi)
                     : cltopk_topk(ctx, type, keys, n, k, flags, algo, ok, keys_only ? NULL : oi);
            if (r >= 0)
                t[r] = cltopk_now() - t0;
        }
        if (st == CLTOPK_OK) {
            *median_s = cltopk_median(t, reps);
            if (floor_s)
                *floor_s = cltopk_cpu_read_time(keys, n * bytes, reps);
        }
        free(ok);
        free(oi);
        return st;
    }
#if HAVE_OPENCL
    cl_int err;
    cl_mem din = clCreateBuffer(ctx->clctx, CL_MEM_READ_ONLY, n * bytes, NULL, &err);
    cl_mem dk = din ? clCreateBuffer(ctx->clctx, CL_MEM_READ_WRITE, k * bytes, NULL, &err) : NULL;
    cl_mem di = dk ? clCreateBuffer(ctx->clctx, CL_MEM_READ_WRITE, k * 8, NULL, &err) : NULL;
    if (!di) {
        st = bench_clfail(ctx, err, "cltopk_benchmark: clCreateBuffer");
        goto out;
    }
    err = clEnqueueWriteBuffer(ctx->queue, din, CL_TRUE, 0, n * bytes, keys, 0, NULL, NULL);
    if (err != CL_SUCCESS) {
        st = bench_clfail(ctx, err, "cltopk_benchmark: clEnqueueWriteBuffer");
        goto out;
    }
    for (int r = -1; r < reps && st == CLTOPK_OK; r++) {
        cl_event done = NULL;
        double t0 = cltopk_now();
        if (sel)
            st = cltopk_select_buffer(ctx, type, din, 0, n, k - 1, flags, algo, dk, di, 0, NULL,
                                      &done);
        else
            st = cltopk_topk_buffer(ctx, type, din, 0, n, k, flags, chosen, dk,
                                    keys_only ? NULL : di, 0, NULL, &done);
        if (st == CLTOPK_OK)
            st = cltopk_wait_done(ctx, done, "cltopk_benchmark: waiting for the kernels");
        if (r >= 0)
            t[r] = cltopk_now() - t0;
    }
    if (st == CLTOPK_OK) {
        *median_s = cltopk_median(t, reps);
        if (floor_s) {
            pthread_mutex_lock(&ctx->lock);
            st = cltopk_device_read_time(ctx, din, n * bytes, reps, floor_s);
            pthread_mutex_unlock(&ctx->lock);
        }
    }
out:
    if (din)
        clReleaseMemObject(din);
    if (dk)
        clReleaseMemObject(dk);
    if (di)
        clReleaseMemObject(di);
#endif
    free(ok);
    free(oi);
    return st;
}
