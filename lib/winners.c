/* winners.c - the device sort of a selection's winners: (order key, 32-bit
 * position) pairs sorted into THE ORDER and written as the input's bits and
 * positions (cl/winners.cl).  Radix select and SBP radix end with it. */
#include "internal.h"

#if HAVE_OPENCL

#include <math.h>
#include <stdio.h>
#include <string.h>

enum { W_PAD, W_LOCAL, W_GLOBAL, W_WRITE, W_N };
static const char *const winner_kernels[W_N] = {"bs_pad", "bs_local", "bs_global", "rs_write"};

/* the kernels at work-groups of wg (halved while a kernel cannot run it) */
static int winners_kernels(cltopk_context *ctx, const cltopk_request *rq, cl_kernel *kk,
                           size_t *wg_out, size_t *blk_out)
{
    size_t wg = cltopk_pow2_le(ctx->caps.max_wg < 256 ? ctx->caps.max_wg : 256);
    for (;;) {
        size_t blk = 1024 < 2 * wg ? 2 * wg : 1024;
        char opts[128];
        snprintf(opts, sizeof opts, "-D KEY_BITS=%d -D KEY_KIND=%d -D WG=%zu -D BLK=%zu",
                 rq->bytes * 8, rq->kind, wg, blk);
        int st = CLTOPK_OK, again = 0;
        for (int i = 0; i < W_N; i++)
            kk[i] = NULL;
        for (int i = 0; i < W_N && st == CLTOPK_OK; i++) {
            st = cltopk_kernel_get(ctx, "winners.cl", opts, winner_kernels[i], &kk[i]);
            size_t kwg = 0;
            if (st == CLTOPK_OK && i == W_LOCAL &&
                clGetKernelWorkGroupInfo(kk[i], ctx->dev, CL_KERNEL_WORK_GROUP_SIZE, sizeof kwg,
                                         &kwg, NULL) == CL_SUCCESS &&
                kwg && kwg < wg)
                again = 1;
        }
        if (st == CLTOPK_OK && !again) {
            *wg_out = wg;
            *blk_out = blk;
            return CLTOPK_OK;
        }
        for (int i = 0; i < W_N; i++)
            if (kk[i])
                clReleaseKernel(kk[i]);
        if (st != CLTOPK_OK)
            return st;
        if (wg <= 32)
            return cltopk_fail(ctx, CLTOPK_ERR_UNSUPPORTED,
                               "the winners' sort: %s cannot run 32 work-items a group",
                               ctx->name);
        wg >>= 1;
    }
}

/* the sorted winners' bits and positions to the outputs */
static int winners_out(cltopk_context *ctx, cl_kernel *kk, cl_mem ri, size_t k, cl_uint want,
                       cl_mem in, size_t off, cl_mem out_keys, cl_mem out_index,
                       uint64_t index_base)
{
    cl_uint k32 = (cl_uint)k;
    cl_ulong off64 = off, base64 = index_base;
    size_t g = (k + 63) / 64 * 64;
    int st = cltopk_set_args(ctx, kk[W_WRITE], 8, sizeof(cl_mem), &ri, sizeof k32, &k32,
                             sizeof want, &want, sizeof(cl_mem), &in, sizeof off64, &off64,
                             sizeof(cl_mem), &out_keys, sizeof(cl_mem), &out_index,
                             sizeof base64, &base64);
    if (st == CLTOPK_OK)
        st = cltopk_launch(ctx, kk[W_WRITE], g, 64, 0, NULL);
    return st;
}

int cltopk_winners_write(cltopk_context *ctx, const cltopk_request *rq, cl_mem rk, cl_mem ri,
                         size_t k, cl_uint want, cl_mem in, size_t off, cl_mem out_keys,
                         cl_mem out_index, uint64_t index_base, size_t npos, const cl_mem *tmp)
{
    cl_kernel kk[W_N];
    size_t wg = 0, blk_max = 0;
    int st = winners_kernels(ctx, rq, kk, &wg, &blk_max);
    if (st != CLTOPK_OK)
        return st;
    if (k > CLTOPK_WINNERS_BITONIC_MAX) {
        /* the winners come in no order: their positions are the low digits */
        cltopk_devsort_job j;
        memset(&j, 0, sizeof j);
        j.key_bits = rq->bytes * 8;
        j.kind = KIND_UNSIGNED; /* already order keys */
        j.m = j.k = k;
        j.keys = j.out_keys = rk;
        j.pos = j.out_pos = ri;
        j.pos_bits = 32;
        while (npos && j.pos_bits > 1 && ((npos - 1) >> (j.pos_bits - 1)) == 0)
            j.pos_bits--;
        if (tmp) {
            j.tmp_keys[0] = tmp[0], j.tmp_pos[0] = tmp[1];
            j.tmp_keys[1] = tmp[2], j.tmp_pos[1] = tmp[3];
        }
        st = cltopk_devsort(ctx, &j, 0, NULL);
        if (st == CLTOPK_OK)
            st = winners_out(ctx, kk, ri, k, want, in, off, out_keys, out_index, index_base);
        for (int i = 0; i < W_N; i++)
            clReleaseKernel(kk[i]);
        return st;
    }
    size_t K2 = cltopk_pow2_ge(k);
    cl_uint k32 = (cl_uint)k;
    /* pad to K2, blocks in local memory, then the stages */
    cl_uint len = (cl_uint)K2, zero = 0;
    size_t blk = K2 < blk_max ? K2 : blk_max;
    if (K2 > k) {
        size_t g = ((K2 - k) + 63) / 64 * 64;
        st = cltopk_set_args(ctx, kk[W_PAD], 4, sizeof(cl_mem), &rk, sizeof(cl_mem), &ri,
                             sizeof k32, &k32, sizeof len, &len);
        if (st == CLTOPK_OK)
            st = cltopk_launch(ctx, kk[W_PAD], g, 64, 0, NULL);
    }
    if (st == CLTOPK_OK && K2 > 1) {
        st = cltopk_set_args(ctx, kk[W_LOCAL], 4, sizeof(cl_mem), &rk, sizeof(cl_mem), &ri,
                             sizeof len, &len, sizeof zero, &zero);
        if (st == CLTOPK_OK)
            st = cltopk_launch(ctx, kk[W_LOCAL], (K2 / blk) * wg, wg, 0, NULL);
    }
    for (size_t s = 2 * blk; s <= K2 && st == CLTOPK_OK; s <<= 1) {
        cl_uint s32 = (cl_uint)s;
        for (size_t j = s / 2; j >= blk && st == CLTOPK_OK; j >>= 1) {
            cl_uint j32 = (cl_uint)j;
            size_t g = (K2 / 2 + 255) / 256 * 256;
            st = cltopk_set_args(ctx, kk[W_GLOBAL], 5, sizeof(cl_mem), &rk, sizeof(cl_mem), &ri,
                                 sizeof len, &len, sizeof s32, &s32, sizeof j32, &j32);
            if (st == CLTOPK_OK)
                st = cltopk_launch(ctx, kk[W_GLOBAL], g, 256 <= ctx->caps.max_wg ? 256 : 64, 0,
                                   NULL);
        }
        if (st == CLTOPK_OK)
            st = cltopk_set_args(ctx, kk[W_LOCAL], 4, sizeof(cl_mem), &rk, sizeof(cl_mem), &ri,
                                 sizeof len, &len, sizeof s32, &s32);
        if (st == CLTOPK_OK)
            st = cltopk_launch(ctx, kk[W_LOCAL], (K2 / blk) * wg, wg, 0, NULL);
    }
    if (st == CLTOPK_OK)
        st = winners_out(ctx, kk, ri, k, want, in, off, out_keys, out_index, index_base);
    for (int i = 0; i < W_N; i++)
        clReleaseKernel(kk[i]);
    return st;
}

static double lg2w(double x)
{
    return x > 1 ? log2(x) : 0;
}

/* predicted seconds of cltopk_winners_write for k pairs: launches and traffic */
double cltopk_winners_time(const struct cltopk_consts_s *c, size_t k, int kb)
{
    if (k <= 1)
        return 2 * c->launch;
    double K2 = (double)cltopk_pow2_ge(k), blk = 1024, pb = kb + 4;
    double launches = 2, bytes = 0;
    double stages = lg2w(K2) > lg2w(blk) ? lg2w(K2) - lg2w(blk) : 0;
    /* global steps: sum over stages of (log2 s - log2 blk); local: one a stage */
    double gsteps = stages * (stages + 1) / 2;
    launches += gsteps + stages + 1;
    bytes += (gsteps + stages + 1) * 2 * K2 * pb;
    double local = K2 * lg2w(blk < K2 ? blk : K2) * (lg2w(blk < K2 ? blk : K2) + 1) / 2 * 2;
    return launches * c->launch + bytes / c->bw + local / c->lrate + k * (kb + 8) / c->bw;
}

#endif
