/* measure.c - the read floors: one streaming read of device memory
 * (cl/bandwidth.cl) and of host memory, each the median of several after a
 * warm-up.  The benchmark reports every figure next to them, and the planner's
 * constants (lib/consts.c) are measured with them. */
#include "internal.h"
#include "../cpu/isa.h"

#ifdef _OPENMP
#include <omp.h>
#endif

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

/* One read of the array: an OR over 64-bit words, which every x86-64 and Arm
 * vectorises (an unsigned 32-bit max needs SSE4.1 and was 4x slower here). */
double cltopk_cpu_read_time(const void *data, size_t bytes, int reps)
{
    const uint64_t *w = data;
    size_t nw = bytes / 8;
    double t[64];
    if (reps > 64)
        reps = 64;
    if (reps < 1)
        reps = 1;
    volatile uint64_t sink = 0;
    int nt = cltopk_cpu_threads(); /* as many threads as the CPU algorithms use */
    for (int r = -1; r < reps; r++) {
        double t0 = cltopk_now();
        uint64_t m = 0;
#ifdef _OPENMP
#pragma omp parallel for simd reduction(| : m) schedule(static) num_threads(nt) \
    if (nw >= 65536 && nt > 1)
#endif
        for (size_t i = 0; i < nw; i++)
            m |= w[i];
        sink = m;
        if (r >= 0)
            t[r] = cltopk_now() - t0;
    }
    (void)sink;
    return cltopk_median(t, reps);
}
