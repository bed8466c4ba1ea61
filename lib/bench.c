/* bench.c - cltopk_benchmark: time one algorithm beside the read floor. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double cltopk_median(double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    return t[n / 2];
}

#if HAVE_OPENCL
/* median seconds of one read pass over `bytes` of buffer `buf` */
int cltopk_device_read_time(cltopk_context *ctx, cl_mem buf, size_t bytes, int reps, double *out)
{
    cl_kernel kern;
    int st = cltopk_kernel_get(ctx, "bandwidth.cl", "-D KEY_BITS=32 -D KEY_KIND=0", "read_max",
                               &kern);
    if (st != CLTOPK_OK)
        return st;
    size_t wg = ctx->caps.max_wg < 256 ? ctx->caps.max_wg : 256;
    size_t global = (size_t)ctx->caps.compute_units * 2048;
    if (global < wg)
        global = wg;
    global = (global / wg) * wg;
    cl_mem sink;
    cl_ulong n4 = bytes / 16;
    double t[64];
    st = cltopk_scratch(ctx, SCR_BENCH, global * 4, &sink);
    if (st == CLTOPK_OK)
        st = cltopk_set_args(ctx, kern, 3, sizeof(cl_mem), &buf, sizeof n4, &n4, sizeof(cl_mem),
                             &sink);
    for (int r = -1; r < reps && st == CLTOPK_OK; r++) {
        double t0 = cltopk_now();
        st = cltopk_launch(ctx, kern, global, wg, 0, NULL);
        if (st == CLTOPK_OK)
            st = cltopk_finish_own(ctx);
        if (r >= 0)
            t[r] = cltopk_now() - t0;
    }
    clReleaseKernel(kern);
    if (st == CLTOPK_OK)
        *out = cltopk_median(t, reps);
    return st;
}
#endif

int cltopk_benchmark(cltopk_context *ctx, cltopk_dtype type, const void *keys, size_t n, size_t k,
                     unsigned flags, cltopk_algo algo, int reps, double *median_s,
                     double *floor_s)
{
    if (!ctx || !median_s || !keys || reps < 1)
        return cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT,
                           "cltopk_benchmark: ctx, keys and median_s are needed, reps >= 1");
    if (reps > 64)
        reps = 64;
    size_t bytes = cltopk_dtype_size(type);
    if (!bytes)
        return cltopk_fail(ctx, CLTOPK_ERR_BAD_TYPE, "cltopk_benchmark: unknown type");
    if (k == 0 || k > n)
        return cltopk_fail(ctx, CLTOPK_ERR_K_RANGE, "cltopk_benchmark: need 0 < k <= n");
    int keys_only = (flags & CLTOPK_BENCH_KEYS_ONLY) != 0;
    flags &= ~CLTOPK_BENCH_KEYS_ONLY;
    /* time a selection of rank k - 1 */
    int sel = (flags & CLTOPK_BENCH_SELECT) != 0;
    flags &= ~CLTOPK_BENCH_SELECT;
    cltopk_algo chosen = algo;
    int st = CLTOPK_OK;
    /* AUTO: what cltopk_topk_buffer would run on device data (timed so), else
     * what cltopk_topk would run */
    if (algo == CLTOPK_ALGO_AUTO &&
        (st = ctx->is_cl ? cltopk_plan_buffer(ctx, type, n, k, flags, &chosen)
                         : cltopk_plan(ctx, type, n, k, flags, &chosen)) != CLTOPK_OK)
        return st;
    void *ok = malloc(k * bytes);
    int64_t *oi = malloc(k * sizeof *oi);
    double t[64];
    if (!ok || !oi) {
        free(ok);
        free(oi);
        return cltopk_fail(ctx, CLTOPK_ERR_NO_MEMORY, "cltopk_benchmark: out of memory");
    }
    const cltopk_algorithm *a = cltopk_algorithm_get(chosen);
    if (!a || !a->needs_opencl || !ctx->is_cl) {
        /* host algorithm on the host array; and any call the host API rejects
         * (a device algorithm on the "cpu" context: UNSUPPORTED, as cltopk_topk) */
        for (int r = -1; r < reps && st == CLTOPK_OK; r++) {
            double t0 = cltopk_now();
            st = sel ? cltopk_select(ctx, type, keys, n, k - 1, flags, algo, ok, oi)
                     : cltopk_topk(ctx, type, keys, n, k, flags, chosen, ok, keys_only ? NULL : oi);
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
        st = cltopk_clfail(ctx, err, "cltopk_benchmark: clCreateBuffer");
        goto out;
    }
    err = clEnqueueWriteBuffer(ctx->queue, din, CL_TRUE, 0, n * bytes, keys, 0, NULL, NULL);
    if (err != CL_SUCCESS) {
        st = cltopk_clfail(ctx, err, "cltopk_benchmark: clEnqueueWriteBuffer");
        goto out;
    }
    for (int r = -1; r < reps && st == CLTOPK_OK; r++) {
        cl_event done = NULL;
        double t0 = cltopk_now();
        if (sel)
            st = chosen == CLTOPK_ALGO_RADIX_SELECT || algo == CLTOPK_ALGO_AUTO
                     ? cltopk_bench_select_buffer(ctx, type, din, n, k - 1, flags, dk, di, &done)
                     : cltopk_fail(ctx, CLTOPK_ERR_UNSUPPORTED,
                                   "selection of device data is timed for radix-select and "
                                   "auto only");
        else
            st = cltopk_topk_buffer(ctx, type, din, 0, n, k, flags, chosen, dk,
                                    keys_only ? NULL : di, 0, NULL, &done);
        if (st == CLTOPK_OK) {
            err = clWaitForEvents(1, &done);
            clReleaseEvent(done);
            if (err != CL_SUCCESS)
                st = cltopk_clfail(ctx, err, "cltopk_benchmark: waiting for the kernels");
        }
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
