/* algo_sbp_radix.c - host side of SBP radix top-k (cl/sbp_radix.cl).
 *
 * Levels of sbp_level, enqueued back to back with no read-back: level 0 reads
 * the input in tiles of T = WG * IPT elements and writes C pairs a tile at
 * group * C; each later level reads the previous level's pairs, until they fit
 * one tile; that group runs with C = k and writes the exact answer, which the
 * shared winners' sort orders (lib/winners.c).  The number of
 * launches follows from n alone: ceil(log_{T/C}(n / T)) + 1, plus the sort.
 *
 * Parameters: WG 256 (or the device's maximum), IPT 16 on GPUs and 4 on CPUs,
 * DIGIT 8; C = max(k rounded up to 4, min(128, T / 8)); k at most T / 4 (a tile
 * must shrink by 4 at least).  CLTOPK_SBP="wg=W,ipt=I,digit=D,c=C,reduce=R"
 * overrides (for the benchmark and tuning; see sbp_params below). */
#include "internal.h"

#if HAVE_OPENCL

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct {
    size_t wg, ipt, digit, c_min, T, tree;
} sbp_cfg;

/* CLTOPK_SBP (parsed strictly, lib/tune.h): wg work-items a group (rounded
 * down to a power of two, at most the device's), ipt items a work-item, digit
 * bits, c pairs a tile writes at least (0: the default), reduce (0: the OR/AND
 * reduction by local atomics instead of a tree) */
enum { SP_WG, SP_IPT, SP_DIGIT, SP_C, SP_REDUCE };
static const cltopk_param sbp_params[] = {
    [SP_WG] = {.name = "wg", .gpu = 256, .cpu = 256, .min = 32, .max = 65536, .integer = 1},
    [SP_IPT] = {.name = "ipt", .gpu = 16, .cpu = 4, .min = 1, .max = 32, .integer = 1},
    [SP_DIGIT] = {.name = "digit", .gpu = 8, .cpu = 8, .min = 4, .max = 11, .integer = 1},
    [SP_C] = {.name = "c", .gpu = 0, .cpu = 0, .min = 0, .max = 4294967295.0, .integer = 1},
    [SP_REDUCE] = {.name = "reduce", .gpu = 1, .cpu = 1, .min = 0, .max = 1, .integer = 1},
};
static const cltopk_param_table sbp_table = {"CLTOPK_SBP", sbp_params, 5, NULL};

/* 0, or -1 with the reason (a bad CLTOPK_SBP) */
static int sbp_configure(const cltopk_context *ctx, const cltopk_request *rq, sbp_cfg *c,
                         char *why, size_t whylen)
{
    cltopk_params p;
    cltopk_tune_for f = {(ctx->caps.type & CL_DEVICE_TYPE_GPU) != 0, ctx->caps.device_name,
                         (unsigned)rq->bytes, -1, rq->k};
    if (cltopk_params_get(rq->tune, &sbp_table, &f, &p, why, whylen) != 0)
        return -1;
    size_t wg = (size_t)p.v[SP_WG];
    if (wg > ctx->caps.max_wg)
        wg = ctx->caps.max_wg;
    c->wg = cltopk_pow2_le(wg);
    c->ipt = (size_t)p.v[SP_IPT];
    c->digit = (size_t)p.v[SP_DIGIT];
    c->c_min = (size_t)p.v[SP_C];
    c->tree = p.v[SP_REDUCE] != 0;
    c->T = c->wg * c->ipt;
    return 0;
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

static int sbp_supports(cltopk_context *ctx, const cltopk_request *rq, char *why, size_t whylen)
{
    sbp_cfg c;
    if (sbp_configure(ctx, rq, &c, why, whylen) != 0)
        return 0;
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
    char why[300];
    if (sbp_configure(ctx, rq, &c, why, sizeof why) != 0)
        return cltopk_fail(ctx, CLTOPK_ERR_UNSUPPORTED, "sbp-radix: %s", why);
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
        st = cltopk_winners_write(ctx, rq, rk, ri, k, want, in, off, out_keys, out_index,
                                  index_base, 0, NULL);
out:
    if (kern)
        clReleaseKernel(kern);
    return st;
}

static int sbp_run_buffer(cltopk_context *ctx, const cltopk_request *rq)
{
    cl_uint want = (rq->want_keys ? 1u : 0u) | (rq->want_index ? 2u : 0u);
    return sbp_device(ctx, rq, NULL, rq->dkeys, rq->doffset, rq->n, rq->k, rq->dout_keys,
                      rq->dout_index, want, 0, rq->num_wait, rq->wait);
}

static int sbp_run_host(cltopk_context *ctx, const cltopk_request *rq)
{
    return cltopk_chunked_topk(ctx, rq, sbp_device, NULL, 1, NULL);
}

/* GPUs: fitted to the H200 (bench/RESULTS.md): 4.2 ms (k <= 64) rising to 7.3
 * ms (k = 1024) for 2^29 f32.  Other devices: level 0 plus the shrinking
 * levels, about 1.5 passes a tile of local histogram, OR/AND and filter work,
 * the launches and the sort of k. */
static double sbp_predict(const cltopk_context *ctx, const cltopk_request *rq,
                          const cltopk_consts *c)
{
    (void)ctx;
    if (!c)
        return -1;
    double n = (double)rq->n, kb = rq->bytes, k = (double)rq->k;
    double T = 4096, C = k < 128 ? 128 : k, R = n * kb / c->bw;
    double levels = 1 + (n > T ? ceil(log2(n / T) / (log2(T / C) > 1 ? log2(T / C) : 1)) : 0);
    double sort = cltopk_winners_time(c, rq->k, rq->bytes);
    if (c->gpu)
        return R * (8.9 + 1.64 * (k > 64 ? log2(k / 64) : 0)) + levels * c->launch + sort;
    return R * T / (T - C) + n * 3 / c->lrate + levels * c->launch + sort;
}

static size_t sbp_workspace(cltopk_context *ctx, const cltopk_request *rq)
{
    sbp_cfg c;
    char why[300];
    if (sbp_configure(ctx, rq, &c, why, sizeof why) != 0)
        return 0;
    size_t n = rq->n, kb = (size_t)rq->bytes, host = 0;
    if (!rq->on_device) /* one chunk or streamed piece at a time */
        n = cltopk_host_input(ctx, rq, &host);
    size_t groups = (n + c.T - 1) / c.T, K2 = 1;
    while (K2 < rq->k)
        K2 <<= 1;
    size_t bytes = (groups > 1 ? 2 * groups * c_of(&c, rq->k) * (kb + 4) : 0) + K2 * (kb + 4);
    bytes += host; /* 0 for device data */
    return bytes;
}

const cltopk_algorithm cltopk_algo_sbp_radix = {
    .id = CLTOPK_ALGO_SBP_RADIX,
    .name = "sbp-radix",
    .on_device = 1,
    .needs_int64 = 1,
    .max_buffer_n = 0x7FFFFFFF,
    .supports = sbp_supports,
    .predict = sbp_predict,
    .run_host = sbp_run_host,
    .run_buffer = sbp_run_buffer,
    .workspace = sbp_workspace,
};

#endif
