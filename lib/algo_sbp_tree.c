/* algo_sbp_tree.c - host side of the split-bucket partition top-k with a sampled
 * search tree (cl/sbp_tree.cl; research note seed-003, sections 1, 3, 7).
 *
 * Levels: sbp_tree over ceil(n / TILE) groups, each writing c candidate pairs at
 * its fixed offset; again over those candidates while more than one tile
 * remains; the last launch (one group) writes the answer.  Every level's size
 * follows from n, k and c alone, so the launches are enqueued back to back with
 * no read-back until the result.
 *
 * Parameters: WG = 256 and PER = 16 (a tile of 4096 pairs in registers), SPLIT
 * = 3 (the paper's 3 splitters, 4 buckets + 3 equality classes), NS = 128
 * samples, CMAX = TILE / 2; so k <= CMAX.  Above k = 1024, PER = 32 where the
 * staging of 4096 pairs fits local memory (32-bit keys on 48 KB, any on POCL).
 * The per-tile output c = 3k/2 rounded up to a multiple of 32, at least 128, at
 * most CMAX: each level shrinks its input by TILE / c.
 *
 * The control-flow optimisation (CF: splitters aimed at the need-th candidate,
 * the worst class found in one comparison and never counted) is on for every k
 * (CFMAX=K bounds it: the paper had its version, in-order gathering, for small k
 * only; ours costs nothing more for large k, and was faster on POCL at k = 256 to
 * 4096).  The task optimisation (TASK=1): when level 0 has more than one tile, one
 * work-group first builds a level-wide tree (sbp_tree_splitters) that the tiles
 * use in their first round instead of sampling their own.  CLTOPK_SBP_TREE
 * ("WG=64,PER=8,SPLIT=15,NS=64,CMAX=256,C=256,CF=0,CFMAX=64,TASK=0") overrides
 * any of them (tests, benchmarks, tuning). */
#include "internal.h"

#if HAVE_OPENCL

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct {
    unsigned wg, per, split, ns, cmax; /* compile time */
    unsigned c, cf, task;              /* run time */
    unsigned c_set, cf_set, cf_max, tile_set;
} tree_cfg;

static unsigned tile_of(const tree_cfg *p)
{
    return p->wg * p->per;
}

/* CLTOPK_SBP_TREE (parsed strictly, lib/tune.h); CMAX and C 0: derived */
enum { TP_WG, TP_PER, TP_SPLIT, TP_NS, TP_CMAX, TP_C, TP_CF, TP_CFMAX, TP_TASK, TP_N };
static const cltopk_param tree_params[] = {
    [TP_WG] = {.name = "WG", .gpu = 256, .cpu = 256, .min = 1, .max = 65536, .integer = 1},
    [TP_PER] = {.name = "PER", .gpu = 16, .cpu = 16, .min = 1, .max = 64, .integer = 1},
    [TP_SPLIT] = {.name = "SPLIT", .gpu = 3, .cpu = 3, .min = 1, .max = 63, .integer = 1},
    [TP_NS] = {.name = "NS", .gpu = 128, .cpu = 128, .min = 2, .max = 1024, .integer = 1},
    [TP_CMAX] = {.name = "CMAX", .min = 0, .max = 4294967295.0, .integer = 1},
    [TP_C] = {.name = "C", .min = 0, .max = 4294967295.0, .integer = 1},
    [TP_CF] = {.name = "CF", .gpu = 1, .cpu = 1, .min = 0, .max = 1, .integer = 1},
    /* every k: faster on POCL at k = 256..4096 too */
    [TP_CFMAX] = {.name = "CFMAX", .gpu = 4294967295.0, .cpu = 4294967295.0, .min = 0,
                  .max = 4294967295.0, .integer = 1},
    [TP_TASK] = {.name = "TASK", .gpu = 1, .cpu = 1, .min = 0, .max = 1, .integer = 1},
};
static const cltopk_param_table tree_table = {"CLTOPK_SBP_TREE", tree_params, TP_N, NULL};

/* defaults, then CLTOPK_SBP_TREE; -1 with the reason in why */
static int tree_configure(const cltopk_context *ctx, const cltopk_request *rq, tree_cfg *p,
                          char *why, size_t whylen)
{
    cltopk_params v;
    cltopk_tune_for f = {(ctx->caps.type & CL_DEVICE_TYPE_GPU) != 0, ctx->caps.device_name,
                         (unsigned)rq->bytes, -1, rq->k};
    if (cltopk_params_get(rq->tune, &tree_table, &f, &v, why, whylen) != 0)
        return -1;
    memset(p, 0, sizeof *p);
    p->wg = (unsigned)v.v[TP_WG];
    p->per = (unsigned)v.v[TP_PER];
    p->split = (unsigned)v.v[TP_SPLIT];
    p->ns = (unsigned)v.v[TP_NS];
    p->cmax = (unsigned)v.v[TP_CMAX];
    p->c = (unsigned)v.v[TP_C];
    p->cf = v.v[TP_CF] != 0;
    p->cf_max = (unsigned)v.v[TP_CFMAX];
    p->task = v.v[TP_TASK] != 0;
    p->tile_set = ((v.set >> TP_WG) & 1u) || ((v.set >> TP_PER) & 1u);
    p->c_set = (v.set >> TP_C) & 1u;
    p->cf_set = (v.set >> TP_CF) & 1u;
    if (!p->tile_set)
        while (p->wg > ctx->caps.max_wg && p->wg > 1) {
            p->wg >>= 1;
            p->per <<= 1;
        }
    /* POCL 5.0's work-group compiler aborts the process on this kernel with
     * fewer than 4 work-items a group ("Could not find a dominating
     * alternative variable"; WG = 4 and up run), so those are declined there */
    int pocl = cltopk_pocl_major(ctx);
    if (p->wg < 4 && pocl >= 4 && pocl < 6) {
        snprintf(why, whylen,
                 "sbp-tree: POCL %s aborts compiling it with fewer than 4 work-items a group "
                 "(WG=%u); use WG=4 or more, or POCL 6", ctx->caps.driver_version, p->wg);
        return -1;
    }
    /* and on 16 cores POCL 5.0 ran it with ties out of order (7 of 350 calls of
     * 64-bit keys in one run, a crash in another; exact on POCL 3.1 and 6, in a
     * 2-core POCL 5.0, and on NVIDIA): declined there until that is understood */
    if (pocl >= 4 && pocl < 6) {
        snprintf(why, whylen,
                 "sbp-tree is declined on POCL %s, where it gave wrong tie orders on a 16-core "
                 "machine; use CLTOPK_ALGO_AUTO, radix-select or sample-filter, or POCL 6",
                 ctx->caps.driver_version);
        return -1;
    }
    unsigned tile = p->wg * p->per;
    if (!cltopk_is_pow2(p->wg) || p->wg > ctx->caps.max_wg || p->per < 1 || p->per > 64 ||
        tile < 8 || p->split < 1 || !cltopk_is_pow2(p->split + 1) || p->split > 63 ||
        p->ns < 2 || p->ns > 1024) {
        snprintf(why, whylen,
                 "sbp-tree: bad configuration WG=%u PER=%u SPLIT=%u NS=%u (WG a power of two "
                 "up to %zu, PER 1..64, SPLIT 2^h-1 from 1 to 63, NS 2..1024)",
                 p->wg, p->per, p->split, p->ns, ctx->caps.max_wg);
        return -1;
    }
    /* local memory: sample (2 NS, twice), staging (CMAX), splitters, counters */
    size_t kb = (size_t)rq->bytes + 4;
#define LMEM(cm) (4 * p->ns * kb + cltopk_pow2_ge(cm) * kb + p->split * kb + (2 * p->split + 6) * 4)
    /* k above 1024: a tile of twice as many pairs a work-item, where its
     * staging fits (more candidates a tile, fewer levels) */
    if (!p->tile_set && !p->cmax && rq->k > 1024 && p->per * 2 <= 64 &&
        LMEM(tile) + 1024 <= ctx->caps.local_mem) {
        p->per *= 2;
        tile *= 2;
    }
    if (!p->cmax)
        p->cmax = tile / 2;
    size_t lmem = LMEM(p->cmax);
#undef LMEM
    /* each level must shrink: ceil(m / tile) * c < m for every m > tile, so
     * c <= tile / 2 (above it, m = 14 with a tile of 8 and c = 7 stays 14) */
    if (p->cmax > tile / 2 || p->cmax < 1 || lmem + 1024 > ctx->caps.local_mem) {
        snprintf(why, whylen,
                 "sbp-tree: CMAX=%u must be 1 to half the tile (%u) and %zu bytes of local "
                 "memory must fit in %llu on %s",
                 p->cmax, tile, lmem, (unsigned long long)ctx->caps.local_mem, ctx->name);
        return -1;
    }
    if (rq->k > p->cmax) {
        snprintf(why, whylen,
                 "sbp-tree keeps at most %u candidates a tile (half its tile of %u): k = %zu is "
                 "too large; use CLTOPK_ALGO_AUTO", p->cmax, tile, rq->k);
        return -1;
    }
    if (!p->c_set) {
        /* room for k and a target class of about k / 2 (the control-flow
         * optimisation's splitters bracket the k-th candidate closely): most
         * tiles finish in one or two rounds and each level shrinks by TILE / c */
        size_t c = (rq->k * 3 / 2 + 31) / 32 * 32;
        p->c = c < 128 ? 128 : (unsigned)(c < p->cmax ? c : p->cmax);
    }
    if (p->c > p->cmax)
        p->c = p->cmax;
    if (p->c < rq->k)
        p->c = (unsigned)rq->k;
    if (!p->cf_set)
        p->cf = rq->k <= p->cf_max;
    return 0;
}

static int tree_supports(cltopk_context *ctx, const cltopk_request *rq, char *why,
                         size_t whylen)
{
    tree_cfg p;
    return tree_configure(ctx, rq, &p, why, whylen) == 0;
}

/* the kernel; a group size the compiled kernel cannot run is halved (PER
 * doubled, the tile kept) */
static int get_kernel(cltopk_context *ctx, const cltopk_request *rq, tree_cfg *p, cl_kernel *out,
                      cl_kernel *spl)
{
    for (;;) {
        char opts[256];
        snprintf(opts, sizeof opts,
                 "-D KEY_BITS=%d -D KEY_KIND=%d -D WG=%u -D PER=%u -D SPLIT=%u -D NS=%u "
                 "-D CMAX=%u -D STAGE=%zu",
                 rq->bytes * 8, rq->kind, p->wg, p->per, p->split, p->ns, p->cmax,
                 cltopk_pow2_ge(p->cmax));
        int st = cltopk_kernel_get(ctx, "sbp_tree.cl", opts, "sbp_tree", out);
        if (st != CLTOPK_OK)
            return st;
        st = cltopk_kernel_get(ctx, "sbp_tree.cl", opts, "sbp_tree_splitters", spl);
        if (st != CLTOPK_OK) {
            clReleaseKernel(*out);
            *out = NULL;
            return st;
        }
        size_t kwg = 0;
        clGetKernelWorkGroupInfo(*out, ctx->dev, CL_KERNEL_WORK_GROUP_SIZE, sizeof kwg, &kwg,
                                 NULL);
        if (!kwg || kwg >= p->wg)
            return CLTOPK_OK;
        clReleaseKernel(*out);
        clReleaseKernel(*spl);
        *out = *spl = NULL;
        if (p->wg <= 1 || p->per >= 64)
            return cltopk_fail(ctx, CLTOPK_ERR_UNSUPPORTED,
                               "sbp-tree: the kernel built with %s runs at most %zu work-items "
                               "a group on %s; set CLTOPK_SBP_TREE=WG=%zu", opts, kwg, ctx->name,
                               kwg);
        p->wg >>= 1;
        p->per <<= 1;
    }
}

/* Reduce keys[off .. off+n) of device buffer `in` to the answer in out_keys /
 * out_index (want bits: 1 keys, 2 index), positions offset by index_base. */
static int tree_device(cltopk_context *ctx, const cltopk_request *rq, tree_cfg *p, cl_mem in,
                      size_t off, size_t n, cl_mem out_keys, cl_mem out_index, cl_uint want,
                      uint64_t index_base, cl_uint num_wait, const cl_event *wait)
{
    cl_kernel kern = NULL, kspl = NULL;
    int st = get_kernel(ctx, rq, p, &kern, &kspl);
    if (st != CLTOPK_OK)
        return st;
    size_t tile = tile_of(p), kb = (size_t)rq->bytes;
    size_t groups = (n + tile - 1) / tile;
    if (groups == 0)
        groups = 1;
    size_t cand = groups * p->c;
    cl_mem cu[2] = {NULL, NULL}, ci[2] = {NULL, NULL};
    if (groups > 1 &&
        ((st = cltopk_scratch(ctx, SCR_TREE_K0, cand * kb, &cu[0])) != CLTOPK_OK ||
         (st = cltopk_scratch(ctx, SCR_TREE_I0, cand * 4, &ci[0])) != CLTOPK_OK ||
         (st = cltopk_scratch(ctx, SCR_TREE_K1, cand * kb, &cu[1])) != CLTOPK_OK ||
         (st = cltopk_scratch(ctx, SCR_TREE_I1, cand * 4, &ci[1])) != CLTOPK_OK))
        goto out;
    /* the task optimisation: a level-wide tree for the first round of level 0 */
    cl_uint gtree = p->task && groups > 1;
    cl_mem gspl = NULL, gspl_i = NULL;
    if ((st = cltopk_scratch(ctx, SCR_TREE_SPL, 64 * kb, &gspl)) != CLTOPK_OK ||
        (st = cltopk_scratch(ctx, SCR_TREE_SPLI, 64 * 4, &gspl_i)) != CLTOPK_OK)
        goto out;
    if (gtree) {
        cl_uint n32 = (cl_uint)n, sm = (cl_uint)rq->smallest, k32 = (cl_uint)rq->k, c32 = p->c;
        cl_ulong o64 = off;
        st = cltopk_set_args(ctx, kspl, 8, sizeof(cl_mem), &in, sizeof o64, &o64, sizeof n32,
                             &n32, sizeof sm, &sm, sizeof k32, &k32, sizeof c32, &c32,
                             sizeof(cl_mem), &gspl, sizeof(cl_mem), &gspl_i);
        if (st == CLTOPK_OK)
            st = cltopk_launch(ctx, kspl, p->wg, p->wg, num_wait, wait);
        if (st != CLTOPK_OK)
            goto out;
        num_wait = 0;
        wait = NULL;
    }
    {
        cl_uint smallest = (cl_uint)rq->smallest, k = (cl_uint)rq->k, c = p->c, cf = p->cf;
        cl_ulong off64 = off, base64 = index_base, zero = 0;
        cl_mem src_k = in, src_i = in;
        cl_ulong src_off = off64;
        cl_uint first = 1, m = (cl_uint)n;
        int cur = 0, launches = 0;
        for (;;) {
            groups = (m + tile - 1) / tile;
            if (groups == 0)
                groups = 1;
            cl_uint fin = groups == 1 ? k : 0;
            /* the final launch writes no candidates: any buffer will do */
            cl_mem dk = fin ? in : cu[cur], di = fin ? in : ci[cur];
            cl_uint gt = launches == 0 ? gtree : 0;
            st = cltopk_set_args(ctx, kern, 21, sizeof(cl_mem), &src_k, sizeof(cl_mem), &src_i,
                                 sizeof src_off, &src_off, sizeof m, &m, sizeof first, &first,
                                 sizeof smallest, &smallest, sizeof k, &k, sizeof c, &c,
                                 sizeof cf, &cf, sizeof(cl_mem), &dk, sizeof(cl_mem), &di,
                                 sizeof fin, &fin, sizeof want, &want, sizeof(cl_mem), &in,
                                 sizeof off64, &off64, sizeof(cl_mem), &out_keys,
                                 sizeof(cl_mem), &out_index, sizeof base64, &base64, sizeof gt,
                                 &gt, sizeof(cl_mem), &gspl, sizeof(cl_mem), &gspl_i);
            if (st == CLTOPK_OK)
                st = cltopk_launch(ctx, kern, groups * p->wg, p->wg, launches ? 0 : num_wait,
                                   launches ? NULL : wait);
            launches++;
            if (st != CLTOPK_OK || fin)
                break;
            src_k = cu[cur];
            src_i = ci[cur];
            src_off = zero;
            first = 0;
            m = (cl_uint)(groups * p->c);
            cur = !cur;
        }
    }
out:
    clReleaseKernel(kern);
    clReleaseKernel(kspl);
    return st;
}

static int tree_run_buffer(cltopk_context *ctx, const cltopk_request *rq)
{
    tree_cfg p;
    char why[512];
    if (tree_configure(ctx, rq, &p, why, sizeof why) != 0)
        return cltopk_fail(ctx, CLTOPK_ERR_UNSUPPORTED, "%s", why);
    cl_mem ok = rq->dout_keys, oi = rq->dout_index;
    int st;
    /* the kernel takes buffers for both outputs; one not asked for is never written */
    if (!ok)
        ok = oi;
    if (!oi)
        oi = ok;
    cl_uint want = (rq->want_keys ? 1u : 0u) | (rq->want_index ? 2u : 0u);
    st = tree_device(ctx, rq, &p, rq->dkeys, rq->doffset, rq->n, ok, oi, want, 0, rq->num_wait,
                     rq->wait);
    return st;
}

/* one chunk of host data (cltopk_chunked_topk), configured for its own n and k */
static int tree_chunk(cltopk_context *ctx, const cltopk_request *rq, void *arg, cl_mem in,
                     size_t off, size_t n, size_t k, cl_mem out_keys, cl_mem out_index,
                     cl_uint want, uint64_t index_base, cl_uint num_wait, const cl_event *wait)
{
    (void)arg;
    cltopk_request sub = *rq;
    sub.n = n;
    sub.k = k;
    tree_cfg ps;
    char why[512];
    if (tree_configure(ctx, &sub, &ps, why, sizeof why) != 0)
        return cltopk_fail(ctx, CLTOPK_ERR_UNSUPPORTED, "%s", why);
    return tree_device(ctx, &sub, &ps, in, off, n, out_keys, out_index, want, index_base,
                      num_wait, wait);
}

static int tree_run_host(cltopk_context *ctx, const cltopk_request *rq)
{
    tree_cfg p;
    char why[512];
    if (tree_configure(ctx, rq, &p, why, sizeof why) != 0)
        return cltopk_fail(ctx, CLTOPK_ERR_UNSUPPORTED, "%s", why);
    return cltopk_chunked_topk(ctx, rq, tree_chunk, NULL, 1, NULL);
}

static size_t tree_workspace(cltopk_context *ctx, const cltopk_request *rq)
{
    tree_cfg p;
    char why[512];
    size_t n = rq->n, host = 0;
    if (!rq->on_device) /* one chunk or streamed piece at a time */
        n = cltopk_host_input(ctx, rq, &host);
    if (tree_configure(ctx, rq, &p, why, sizeof why) != 0)
        return 0;
    size_t tile = tile_of(&p), groups = (n + tile - 1) / tile;
    size_t cand = groups > 1 ? groups * p.c : 0;
    size_t bytes = 2 * cand * ((size_t)rq->bytes + 4);
    bytes += host; /* 0 for device data */
    return bytes;
}

/* as SBP radix with about 1.9 passes a tile instead of 1.5 (research note
 * 2.6); GPUs: measured 3.7 to 8.2 ms for 2^29 f32 on the H200 */
static double tree_predict(const cltopk_context *ctx, const cltopk_request *rq,
                           const cltopk_consts *c)
{
    (void)ctx;
    if (!c)
        return -1;
    double n = (double)rq->n, kb = rq->bytes, k = (double)rq->k, R = n * kb / c->bw;
    double C = k < 128 ? 128 : k;
    double fan = log2(4096 / C) > 1 ? log2(4096 / C) : 1;
    double levels = 1 + (n > 4096 ? ceil(log2(n / 4096) / fan) : 0);
    double tiles = c->gpu ? R * (8.9 + 1.64 * (k > 64 ? log2(k / 64) : 0)) * 1.9 / 1.5
                          : R * 4096 / (4096 - C) + n * 3.8 / c->lrate;
    return tiles + levels * c->launch + cltopk_winners_time(c, rq->k, rq->bytes);
}

const cltopk_algorithm cltopk_algo_sbp_tree = {
    .id = CLTOPK_ALGO_SBP_TREE,
    .name = "sbp-tree",
    .on_device = 1,
    .kmax32 = 4096,
    .kmax64 = 4096,
    .needs_int64 = 1,
    .max_buffer_n = 0xFFFFFFFE,
    .supports = tree_supports,
    .predict = tree_predict,
    .run_host = tree_run_host,
    .run_buffer = tree_run_buffer,
    .workspace = tree_workspace,
};

#endif
