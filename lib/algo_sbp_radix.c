/* algo_sbp_radix.c - host side of SBP radix top-k (cl/sbp_radix.cl).
 *
 * Levels of sbp_level, enqueued back to back with no read-back: level 0 reads
 * the input in tiles of T = WG * IPT elements and writes C pairs a tile at
 * group * C; each later level reads the previous level's pairs, until they fit
 * one tile; that group runs with C = k and writes the exact answer, which the
 * radix select's bitonic sort orders (cltopk_rs_sort_write).  The number of
 * launches follows from n alone: ceil(log_{T/C}(n / T)) + 1, plus the sort.
 *
 * Parameters: WG 256 (or the device's maximum), IPT 16 on GPUs and 4 on CPUs,
 * DIGIT 8; C = max(k rounded up to 4, min(128, T / 8)); k at most T / 4 (a tile
 * must shrink by 4 at least).  CLTOPK_SBP="wg=W,ipt=I,digit=D,c=C,reduce=R"
 * overrides (for the benchmark and tuning; reduce=0: the OR/AND reduction of
 * the common-prefix skip by local atomics instead of a tree). */
#include "internal.h"

#if HAVE_OPENCL

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    size_t wg, ipt, digit, c_min, T, tree;
} sbp_cfg;

static size_t pow2_le(size_t x)
{
    size_t w = 1;
    while (w * 2 <= x)
        w *= 2;
    return w;
}

static void sbp_configure(const cltopk_context *ctx, sbp_cfg *c)
{
    c->wg = pow2_le(ctx->caps.max_wg < 256 ? ctx->caps.max_wg : 256);
    c->ipt = (ctx->caps.type & CL_DEVICE_TYPE_GPU) ? 16 : 4;
    c->digit = 8;
    c->c_min = 0;
    c->tree = 1;
    const char *spec = cltopk_env("CLTOPK_SBP");
    if (spec) {
        const char *p = spec;
        while (*p) {
            unsigned long v;
            char name[16];
            int used = 0;
            if (sscanf(p, "%15[a-z_]=%lu%n", name, &v, &used) == 2 && used > 0) {
                if (!strcmp(name, "wg") && v >= 32 && v <= ctx->caps.max_wg)
                    c->wg = pow2_le(v);
                else if (!strcmp(name, "ipt") && v >= 1 && v <= 32)
                    c->ipt = v;
                else if (!strcmp(name, "digit") && v >= 4 && v <= 11)
                    c->digit = v;
                else if (!strcmp(name, "c"))
                    c->c_min = v;
                else if (!strcmp(name, "reduce"))
                    c->tree = v != 0;
                p += used;
            } else {
                p++;
            }
            if (*p == ',')
                p++;
        }
    }
    c->T = c->wg * c->ipt;
}

static size_t kmax_of(const sbp_cfg *c)
{
    return c->T / 4;
}

/* pairs a tile writes for k */
static size_t c_of(const sbp_cfg *c, size_t k)
{
    size_t C = (k + 3) / 4 * 4, lo = c->c_min ? c->c_min : (c->T / 8 < 128 ? c->T / 8 : 128);
    if (C < lo)
        C = lo;
    if (C > c->T / 2)
        C = c->T / 2;
    if (C < k)
        C = k;
    return C;
}

static int supports(cltopk_context *ctx, const cltopk_request *rq, char *why, size_t whylen)
{
    if (!ctx->caps.int64) {
        snprintf(why, whylen,
                 "%s is an embedded-profile device without cl_khr_int64; SBP radix needs 64-bit "
                 "integers (use the CPU algorithms)", ctx->name);
        return 0;
    }
    if (rq->n > 0x7FFFFFFFull && rq->on_device) {
        snprintf(why, whylen,
                 "SBP radix of a cl_mem takes at most 2^31 - 1 elements per call; split the "
                 "buffer");
        return 0;
    }
    sbp_cfg c;
    sbp_configure(ctx, &c);
    if (rq->k > kmax_of(&c)) {
        snprintf(why, whylen,
                 "SBP radix keeps a tile's best k of its %zu elements: k = %zu is above its "
                 "limit %zu on %s; use CLTOPK_ALGO_RADIX_SELECT or CLTOPK_ALGO_AUTO",
                 c.T, rq->k, kmax_of(&c), ctx->name);
        return 0;
    }
    return 1;
}

static int sbp_device(cltopk_context *ctx, const cltopk_request *rq, void *arg, cl_mem in,
                      size_t off, size_t n, size_t k, cl_mem out_keys, cl_mem out_index,
                      cl_uint want, uint64_t index_base, cl_uint num_wait, const cl_event *wait)
{
    (void)arg;
    sbp_cfg c;
    sbp_configure(ctx, &c);
    cl_kernel kern = NULL;
    int st;
    for (;;) {
        char opts[256];
        snprintf(opts, sizeof opts,
                 "-D KEY_BITS=%d -D KEY_KIND=%d -D WG=%zu -D IPT=%zu -D DIGIT=%zu -D REDUCE_TREE=%zu",
                 rq->bytes * 8, rq->kind, c.wg, c.ipt, c.digit, c.tree);
        st = cltopk_kernel_get(ctx, "sbp_radix.cl", opts, "sbp_level", &kern);
        if (st != CLTOPK_OK)
            return st;
        size_t kwg = 0;
        clGetKernelWorkGroupInfo(kern, ctx->dev, CL_KERNEL_WORK_GROUP_SIZE, sizeof kwg, &kwg,
                                 NULL);
        if (!kwg || kwg >= c.wg || c.wg <= 32)
            break;
        /* the compiled kernel runs fewer work-items: keep T, more items each */
        clReleaseKernel(kern);
        kern = NULL;
        c.wg >>= 1;
        c.ipt *= 2;
    }
    size_t kb = (size_t)rq->bytes, C = c_of(&c, k), K2 = 1;
    while (K2 < k)
        K2 <<= 1;
    size_t groups = (n + c.T - 1) / c.T;
    if (groups == 0)
        groups = 1;
    size_t cap = groups > 1 ? groups * C : 1;
    cl_mem bk[2] = {NULL, NULL}, bi[2] = {NULL, NULL}, rk, ri;
    if ((groups > 1 &&
         ((st = cltopk_scratch(ctx, SCR_CAND_U0, cap * kb, &bk[0])) != CLTOPK_OK ||
          (st = cltopk_scratch(ctx, SCR_CAND_I0, cap * 4, &bi[0])) != CLTOPK_OK ||
          (st = cltopk_scratch(ctx, SCR_CAND_U1, cap * kb, &bk[1])) != CLTOPK_OK ||
          (st = cltopk_scratch(ctx, SCR_CAND_I1, cap * 4, &bi[1])) != CLTOPK_OK)) ||
        (st = cltopk_scratch(ctx, SCR_RS_RES_K, K2 * kb, &rk)) != CLTOPK_OK ||
        (st = cltopk_scratch(ctx, SCR_RS_RES_I, K2 * 4, &ri)) != CLTOPK_OK)
        goto out;
    {
        cl_uint src = 0, smallest = (cl_uint)rq->smallest, K32 = (cl_uint)k;
        cl_ulong off64 = off;
        size_t m = n;
        int cur = 0;
        cl_mem ck = rk, ci = ri; /* level 0 reads no pairs: any buffer */
        for (int level = 0; st == CLTOPK_OK; level++) {
            groups = (m + c.T - 1) / c.T;
            if (groups == 0)
                groups = 1;
            int last = groups == 1;
            cl_uint len = (cl_uint)m, C32 = (cl_uint)(last ? k : C);
            cl_mem ok = last ? rk : bk[cur], oi = last ? ri : bi[cur];
            st = cltopk_set_args(ctx, kern, 11, sizeof src, &src, sizeof(cl_mem), &in,
                                 sizeof off64, &off64, sizeof smallest, &smallest,
                                 sizeof(cl_mem), &ck, sizeof(cl_mem), &ci, sizeof len, &len,
                                 sizeof K32, &K32, sizeof C32, &C32, sizeof(cl_mem), &ok,
                                 sizeof(cl_mem), &oi);
            if (st == CLTOPK_OK)
                st = cltopk_launch(ctx, kern, groups * c.wg, c.wg, level ? 0 : num_wait,
                                   level ? NULL : wait);
            if (last)
                break;
            ck = bk[cur];
            ci = bi[cur];
            cur = !cur;
            m = groups * C;
            src = 1;
        }
    }
    if (st == CLTOPK_OK)
        st = cltopk_rs_sort_write(ctx, rq, rk, ri, k, want, in, off, out_keys, out_index,
                                  index_base);
out:
    if (kern)
        clReleaseKernel(kern);
    return st;
}

static int run_buffer(cltopk_context *ctx, const cltopk_request *rq)
{
    cl_uint want = (rq->want_keys ? 1u : 0u) | (rq->want_index ? 2u : 0u);
    int st = sbp_device(ctx, rq, NULL, rq->dkeys, rq->doffset, rq->n, rq->k, rq->dout_keys,
                        rq->dout_index, want, 0, rq->num_wait, rq->wait);
    if (st == CLTOPK_OK && rq->done) {
        clRetainEvent(ctx->last);
        *rq->done = ctx->last;
    }
    return st;
}

static int run_host(cltopk_context *ctx, const cltopk_request *rq)
{
    return cltopk_chunked_topk(ctx, rq, sbp_device, NULL, 1, NULL);
}

static size_t workspace(cltopk_context *ctx, const cltopk_request *rq)
{
    sbp_cfg c;
    sbp_configure(ctx, &c);
    size_t n = rq->n, chunk = cltopk_chunk_elems(ctx, rq->bytes), kb = (size_t)rq->bytes;
    if (!rq->on_device && n > chunk)
        n = chunk < rq->k ? rq->k : chunk;
    size_t groups = (n + c.T - 1) / c.T, K2 = 1;
    while (K2 < rq->k)
        K2 <<= 1;
    size_t bytes = (groups > 1 ? 2 * groups * c_of(&c, rq->k) * (kb + 4) : 0) + K2 * (kb + 4);
    if (!rq->on_device)
        bytes += n * kb + rq->k * (kb + 8);
    return bytes;
}

const cltopk_algorithm cltopk_algo_sbp_radix = {
    CLTOPK_ALGO_SBP_RADIX, 1, supports, run_host, run_buffer, workspace,
};

#endif
