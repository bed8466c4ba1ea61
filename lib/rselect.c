/* rselect.c - the device radix select (cl/radix_select.cl): the engine of
 * radix-select's top-k and selection, and the exact step after sample-filter's
 * band (lib/algo_sample_filter.c) narrows a selection to a few candidates.
 *
 * Each call enqueues rs_init, then for every digit of the composite key (order
 * key : ~position, KEY_BITS + 32 bits, 8 bits a pass) a histogram and a
 * filter, back to back: by default rs_hist of digit 0, then rs_pass for each
 * later digit (the filter of the digit before and the histogram of this one
 * in one launch, the candidates kept counted as they are written), then
 * rs_filter of the last digit: D + 1 launches for D digits (fuse=1; the
 * default, auto, fuses where the call starts from a caller's candidates, the
 * band's).  The last work-group to finish a histogram chooses the pass's bin
 * and bounds the elements the next histogram reads: with act=1 (the
 * default) only the groups that have some take part (a pass over a few
 * candidates is one group's work).  With
 * fuse=0, rs_hist and rs_filter are launched for every digit (2 D launches);
 * with lastg=0 also a rs_choose launch between them.  The state (need,
 * candidates, where they are, the pass's mode, the prefix a narrowed input is
 * matched against) lives in a small device buffer, so there is no host
 * read-back until the result.  A target bucket holding more than 1/8 of the
 * input is not copied: the next pass reads the input again against the prefix
 * (one read instead of a copy of 2 bytes an input byte); smaller buckets are
 * copied.  CLTOPK_RADIX="hc=H,narrow=N,ipt=I,first=F,pre=P,gpc=G,lastg=L" sets
 * the histogram copies (GPU default 4, CPU 1), that fraction (0: always copy),
 * the elements a work-item loads a round (GPU 8, CPU 4), the bits of the first
 * digit (8..12, default 8: a wider one splits the few exponents of uniform
 * floats in pass 0), the digits histogrammed in pass 0 (1 or 2), the
 * work-groups a compute unit at most (GPU 16, CPU 2: every pass is launched
 * with them, also one whose search has ended) and whether the last group
 * chooses (1, the default; 0: rs_choose), and whether a pass's filter and
 * the next histogram share a launch (fuse=1; 0 apart; auto, the default: fused
 * from a caller's candidates; fusing needs lastg=1), and act (above).
 * Passes after the search has ended
 * cost a launch each and return at once.  Top-k then sorts its k winners on
 * the device (lib/winners.c) and writes the input's bits and positions.  The
 * variable is parsed strictly (lib/tune.h).
 *
 * A call may start from candidates already in the first candidate buffer
 * (cltopk_rselect_job.from): rs_init then reads, on the device, how many there
 * are and how many elements rank above them, and searches them when they hold
 * the wanted rank (else the input: an exact fallback with no host round trip).
 *
 * Scratch: two candidate buffers of n (key, 32-bit position) pairs, the winners
 * (k rounded up to a power of two pairs), 72 bytes of state, 3 KB of
 * histograms and the work-groups' ticket. */
#include "internal.h"

#if HAVE_OPENCL

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RS_IPT 4
#define RS_PRE 2
#define RS_STATE_WORDS 18 /* cl: S_WORDS */

typedef struct {
    size_t wg, groups;
    int first; /* bits of digit 0 */
    int lastg; /* the last group of rs_hist chooses the bin: no rs_choose launches */
    int fuse;  /* rs_pass: a filter and the next histogram in one launch (with lastg) */
    char opts[256];
} rs_cfg;

/* passes over the composite key of a request: digit 0 of `first` bits, then 8 */
static int rs_digits(const cltopk_request *rq, int first)
{
    return 1 + (rq->bytes * 8 + 32 - first + 7) / 8;
}


/* CLTOPK_RADIX: hc histogram copies, narrow (0: always copy), ipt elements a
 * work-item a round, first bits of digit 0, pre digits histogrammed in pass 0 */
enum { RP_HC, RP_NARROW, RP_IPT, RP_FIRST, RP_PRE, RP_GPC, RP_LASTG, RP_FUSE, RP_ACT, RP_N };
static const char *const fuse_words[] = {"0", "1", "auto", NULL};
static const cltopk_param radix_params[] = {
    [RP_HC] = {.name = "hc", .gpu = 4, .cpu = 1, .min = 1, .max = 16, .integer = 1},
    [RP_NARROW] = {.name = "narrow", .gpu = 8, .cpu = 8, .min = 0, .max = 1 << 20, .integer = 1},
    [RP_IPT] = {.name = "ipt", .gpu = 8, .cpu = RS_IPT, .min = 1, .max = 32, .integer = 1},
    [RP_FIRST] = {.name = "first", .gpu = 8, .cpu = 8, .min = 8, .max = 12, .integer = 1},
    [RP_PRE] = {.name = "pre", .gpu = RS_PRE, .cpu = RS_PRE, .min = 1, .max = 2, .integer = 1},
    [RP_GPC] = {.name = "gpc", .gpu = 16, .cpu = 2, .min = 1, .max = 1024, .integer = 1},
    [RP_LASTG] = {.name = "lastg", .gpu = 1, .cpu = 1, .min = 0, .max = 1, .integer = 1},
    [RP_FUSE] = {.name = "fuse", .gpu = 2, .cpu = 2, .min = 0, .max = 2, .integer = 1,
                 .words = fuse_words},
    /* 1 everywhere: on the H200 the median of 2^29 f32 took 1.114 ms with
     * act=1 against 1.167 with 0 (bucket-killer 1.235 against 1.291) */
    [RP_ACT] = {.name = "act", .gpu = 1, .cpu = 1, .min = 0, .max = 1, .integer = 1},
};
static const cltopk_param_table radix_table = {"CLTOPK_RADIX", radix_params, RP_N, NULL};

static int rs_params(const cltopk_context *ctx, const cltopk_request *rq, cltopk_params *p,
                     char *why, size_t whylen)
{
    cltopk_tune_for f = {(ctx->caps.type & CL_DEVICE_TYPE_GPU) != 0, ctx->caps.device_name,
                         (unsigned)rq->bytes, -1, rq->k};
    return cltopk_params_get(rq->tune, &radix_table, &f, p, why, whylen);
}

static void rs_configure(const cltopk_context *ctx, const cltopk_request *rq,
                         const cltopk_params *p, size_t n, int from, size_t wg, rs_cfg *c)
{
    c->wg = wg;
    int ipt = (int)p->v[RP_IPT], hc = (int)p->v[RP_HC], narrow = (int)p->v[RP_NARROW];
    int first = (int)p->v[RP_FIRST], pre = (int)p->v[RP_PRE];
    size_t per = wg * (size_t)ipt;
    size_t g = (n + per - 1) / per;
    size_t cap = (size_t)(ctx->caps.compute_units ? ctx->caps.compute_units : 1) *
                 (size_t)p->v[RP_GPC];
    if (g > cap)
        g = cap;
    c->groups = g ? g : 1;
    c->first = first;
    c->lastg = (int)p->v[RP_LASTG];
    /* fuse=auto: fused where the call starts from a caller's candidates (the
     * band's; measured on the H200 at the median of 2^29: the passes' device
     * time 232 us against 257), apart over the whole input (radix-select's
     * top-k of 2^29 f32: 6.43 ms fused against 5.85 apart) */
    int fuse = (int)p->v[RP_FUSE];
    c->fuse = c->lastg && (fuse == 2 ? from : fuse);
    snprintf(c->opts, sizeof c->opts,
             "-D KEY_BITS=%d -D KEY_KIND=%d -D WG=%zu -D IPT=%d -D PRE=%d -D HC=%d "
             "-D NARROW=%d -D FIRST=%d -D LASTG=%d -D ACT=%d",
             rq->bytes * 8, rq->kind, wg, ipt, pre, hc, narrow, first, c->lastg,
             (int)p->v[RP_ACT]);
}

static size_t start_wg(const cltopk_context *ctx)
{
    size_t w = 256;
    while (w > ctx->caps.max_wg && w > 1)
        w >>= 1;
    return w;
}

enum { K_INIT, K_HIST, K_CHOOSE, K_FILTER, K_SELOUT, K_PASS, K_N };
static const char *const knames[K_N] = {"rs_init",   "rs_hist",       "rs_choose",
                                        "rs_filter", "rs_select_out", "rs_pass"};

/* the kernels, halving the work-group size while a kernel cannot run it */
static int rs_kernels(cltopk_context *ctx, const cltopk_request *rq, size_t n, int from,
                      rs_cfg *c, cl_kernel *k)
{
    size_t wg = start_wg(ctx);
    cltopk_params p;
    char why[300];
    if (rs_params(ctx, rq, &p, why, sizeof why) != 0)
        return cltopk_fail(ctx, CLTOPK_ERR_UNSUPPORTED, "radix select: %s", why);
    for (;;) {
        rs_configure(ctx, rq, &p, n, from, wg, c);
        memset(k, 0, K_N * sizeof *k);
        int st = CLTOPK_OK, again = 0;
        for (int i = 0; i < K_N && st == CLTOPK_OK; i++) {
            if ((i == K_CHOOSE && c->lastg) || (i == K_PASS && !c->fuse))
                continue; /* rs_hist's last group chooses; rs_pass only fused */
            st = cltopk_kernel_get(ctx, "radix_select.cl", c->opts, knames[i], &k[i]);
            if (st != CLTOPK_OK)
                break;
            size_t kwg = 0;
            clGetKernelWorkGroupInfo(k[i], ctx->dev, CL_KERNEL_WORK_GROUP_SIZE, sizeof kwg, &kwg,
                                     NULL);
            if (kwg && kwg < wg && i != K_SELOUT)
                again = 1;
        }
        if (st == CLTOPK_OK && !again)
            return CLTOPK_OK;
        for (int i = 0; i < K_N; i++)
            if (k[i])
                clReleaseKernel(k[i]);
        if (st != CLTOPK_OK)
            return st;
        if (wg <= 32)
            return cltopk_fail(ctx, CLTOPK_ERR_UNSUPPORTED,
                               "radix select: %s cannot run 32 work-items a group", ctx->name);
        wg >>= 1;
    }
}

/* the candidate buffers a call over n elements uses, in the sizes it asks for
 * (so that a caller may fill the first before the call) */
static int rs_cands(cltopk_context *ctx, const cltopk_request *rq, size_t n, cl_mem *ak,
                    cl_mem *ai, cl_mem *bk, cl_mem *bi)
{
    size_t kb = (size_t)rq->bytes;
    int st;
    if ((st = cltopk_scratch(ctx, SCR_CAND_U0, n * kb, ak)) != CLTOPK_OK ||
        (st = cltopk_scratch(ctx, SCR_CAND_I0, n * 4, ai)) != CLTOPK_OK ||
        (st = cltopk_scratch(ctx, SCR_CAND_U1, n * kb, bk)) != CLTOPK_OK ||
        (st = cltopk_scratch(ctx, SCR_CAND_I1, n * 4, bi)) != CLTOPK_OK)
        return st;
    return CLTOPK_OK;
}

int cltopk_rselect_cands(cltopk_context *ctx, const cltopk_request *rq, size_t n, cl_mem *keys,
                         cl_mem *pos)
{
    cl_mem bk, bi;
    return rs_cands(ctx, rq, n, keys, pos, &bk, &bi);
}

/* rs_filter of digit p */
static int filter_launch(cltopk_context *ctx, cl_kernel k, cl_uint p, cl_mem in, cl_ulong off64,
                         cl_uint smallest, cl_mem ak, cl_mem ai, cl_mem bk, cl_mem bi,
                         cl_mem state, cl_mem rk, cl_mem ri, size_t G, size_t wg)
{
    int st = cltopk_set_args(ctx, k, 11, sizeof p, &p, sizeof(cl_mem), &in, sizeof off64, &off64,
                             sizeof smallest, &smallest, sizeof(cl_mem), &ak, sizeof(cl_mem), &ai,
                             sizeof(cl_mem), &bk, sizeof(cl_mem), &bi, sizeof(cl_mem), &state,
                             sizeof(cl_mem), &rk, sizeof(cl_mem), &ri);
    return st == CLTOPK_OK ? cltopk_launch(ctx, k, G, wg, 0, NULL) : st;
}

int cltopk_rselect(cltopk_context *ctx, const cltopk_request *rq, const cltopk_rselect_job *j,
                   cl_uint num_wait, const cl_event *wait)
{
    rs_cfg c;
    cl_kernel kk[K_N];
    size_t n = j->n, k = j->k;
    int topk = j->topk;
    int st = rs_kernels(ctx, rq, n, j->from != NULL, &c, kk);
    if (st != CLTOPK_OK)
        return st;
    /* the winners: padded to a power of two for the bitonic sort */
    size_t kb = (size_t)rq->bytes,
           K2 = k > CLTOPK_WINNERS_BITONIC_MAX ? k : cltopk_pow2_ge(k);
    int digits = rs_digits(rq, c.first);
    cl_mem in = j->in, state, hist, ak, ai, bk, bi, rk = NULL, ri = NULL;
    if ((st = rs_cands(ctx, rq, n, &ak, &ai, &bk, &bi)) != CLTOPK_OK ||
        (st = cltopk_scratch(ctx, SCR_RS_STATE, RS_STATE_WORDS * 4, &state)) != CLTOPK_OK ||
        (st = cltopk_scratch(ctx, SCR_RS_HIST, (((size_t)digits << c.first) + 1) * 4, &hist)) !=
            CLTOPK_OK ||
        (topk && ((st = cltopk_scratch(ctx, SCR_RS_RES_K, K2 * kb, &rk)) != CLTOPK_OK ||
                  (st = cltopk_scratch(ctx, SCR_RS_RES_I, K2 * 4, &ri)) != CLTOPK_OK)))
        goto out;
    if (!topk)
        rk = ak, ri = ai; /* never written in selection */
    cl_uint n32 = (cl_uint)n, k32 = (cl_uint)k, tk = (cl_uint)topk;
    cl_uint smallest = (cl_uint)rq->smallest, use_from = j->from != NULL;
    cl_uint fcap = (cl_uint)(j->from_cap < n ? j->from_cap : n);
    cl_mem from = j->from ? j->from : state;
    cl_ulong off64 = j->off, base64 = j->index_base;
    size_t G = c.groups * c.wg;
    st = cltopk_set_args(ctx, kk[K_INIT], 8, sizeof(cl_mem), &state, sizeof(cl_mem), &hist,
                         sizeof n32, &n32, sizeof k32, &k32, sizeof tk, &tk, sizeof(cl_mem),
                         &from, sizeof use_from, &use_from, sizeof fcap, &fcap);
    if (st == CLTOPK_OK)
        st = cltopk_launch(ctx, kk[K_INIT], c.wg, c.wg, num_wait, wait);
    /* fused: rs_hist of digit 0, rs_pass of every later one, rs_filter of the
     * last; apart: rs_hist, (rs_choose,) rs_filter of every digit */
    for (cl_uint p = 0; p < (cl_uint)digits && st == CLTOPK_OK; p++) {
        int i = c.fuse && p > 0 ? K_PASS : K_HIST;
        st = cltopk_set_args(ctx, kk[i], 12, sizeof p, &p, sizeof(cl_mem), &in, sizeof off64,
                             &off64, sizeof smallest, &smallest, sizeof(cl_mem), &ak,
                             sizeof(cl_mem), &ai, sizeof(cl_mem), &bk, sizeof(cl_mem), &bi,
                             sizeof(cl_mem), &state, sizeof(cl_mem), &hist, sizeof(cl_mem), &rk,
                             sizeof(cl_mem), &ri);
        if (st == CLTOPK_OK)
            st = cltopk_launch(ctx, kk[i], G, c.wg, 0, NULL);
        if (st == CLTOPK_OK && !c.lastg)
            st = cltopk_set_args(ctx, kk[K_CHOOSE], 3, sizeof p, &p, sizeof(cl_mem), &state,
                                 sizeof(cl_mem), &hist);
        if (st == CLTOPK_OK && !c.lastg)
            st = cltopk_launch(ctx, kk[K_CHOOSE], c.wg, c.wg, 0, NULL);
        if (st == CLTOPK_OK && (!c.fuse || p + 1 == (cl_uint)digits))
            st = filter_launch(ctx, kk[K_FILTER], p, in, off64, smallest, ak, ai, bk, bi, state,
                               rk, ri, G, c.wg);
    }
    if (st != CLTOPK_OK)
        goto out;
    if (!topk) {
        st = cltopk_set_args(ctx, kk[K_SELOUT], 9, sizeof(cl_mem), &state, sizeof(cl_mem), &in,
                             sizeof off64, &off64, sizeof(cl_mem), &ai, sizeof(cl_mem), &bi,
                             sizeof j->want, &j->want, sizeof(cl_mem), &j->out_keys,
                             sizeof(cl_mem), &j->out_index, sizeof base64, &base64);
        if (st == CLTOPK_OK)
            st = cltopk_launch(ctx, kk[K_SELOUT], 1, 1, 0, NULL);
        goto out;
    }
    {
        const cl_mem tmp[4] = {ak, ai, bk, bi}; /* the candidates, n >= k pairs, done */
        st = cltopk_winners_write(ctx, rq, rk, ri, k, j->want, in, j->off, j->out_keys,
                                  j->out_index, j->index_base, n, tmp);
    }
out:
    for (int i = 0; i < K_N; i++)
        if (kk[i])
            clReleaseKernel(kk[i]);
    return st;
}

size_t cltopk_rselect_workspace(cltopk_context *ctx, const cltopk_request *rq)
{
    size_t n = rq->n, kb = (size_t)rq->bytes, host = 0;
    if (!rq->on_device) /* one chunk or streamed piece at a time */
        n = cltopk_host_input(ctx, rq, &host);
    size_t kw = rq->k > CLTOPK_WINNERS_BITONIC_MAX ? rq->k : cltopk_pow2_ge(rq->k);
    size_t bytes = 2 * n * (kb + 4) + kw * (kb + 4) + RS_STATE_WORDS * 4 + (kb + 5) * 4096 * 4;
    if (rq->k > CLTOPK_WINNERS_BITONIC_MAX) { /* the device sort's digit counts (it
                                                 borrows the candidate buffers) */
        char why[512];
        size_t ds = cltopk_devsort_scratch(ctx, rq->bytes * 8, rq->k, why, sizeof why);
        bytes += ds > 2 * rq->k * (kb + 4) ? ds - 2 * rq->k * (kb + 4) : 0;
    }
    bytes += host; /* 0 for device data */
    return bytes;
}

int cltopk_rselect_supports(cltopk_context *ctx, const cltopk_request *rq, char *why,
                            size_t whylen)
{
    cltopk_params p;
    return rs_params(ctx, rq, &p, why, whylen) == 0;
}

#endif
