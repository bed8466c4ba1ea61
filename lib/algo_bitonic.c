/* algo_bitonic.c - host side of the bitonic top-k.
 *
 * The reducer (cl/reducer.cl, configured by lib/bitonic_cfg.h) is the default:
 * sort_reducer over ceil(n/E) groups, then bitonic_reducer while more than one
 * tile of candidates remains, the last launch (one group) writing the answer; no
 * host round trip between launches.  Keys travel alone where ties cannot be
 * told apart (integers, or floats whose answer holds no zero or NaN, which is
 * checked); else with their 32-bit index.
 *
 * The foundation kernel (cl/bitonic.cl, "basic": one pass over local memory
 * per step, always key + index) stays for comparison, CLTOPK_BITONIC=basic=1.
 * Its parameters from the device limits: TILE = the largest power of two of pairs
 * (key + 32-bit index) that fits local memory with room to spare, at most 8192;
 * WG = min(256, max work-group size, TILE/2).  K = k rounded up to a power of two
 * must be at most TILE/2.  Launches: bitonic_first over ceil(n/TILE) groups, then
 * bitonic_next while more than one tile of candidates remains; the last launch
 * (one group) writes the answer.  No host round trip between launches. */
#include "internal.h"

#if HAVE_OPENCL

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bitonic_cfg.h"

#define MAX_TILE 8192
#define MAX_WG 256

typedef struct {
    size_t tile, wg;
} bitonic_params;

static bitonic_params basic_params(const cltopk_context *ctx, int bytes)
{
    bitonic_params p;
    uint64_t budget = ctx->caps.local_mem > 2048 ? ctx->caps.local_mem - 2048 : 0;
    uint64_t per = (uint64_t)bytes + 4;
    p.tile = 0;
    for (size_t t = 2; t <= MAX_TILE && t * per <= budget; t <<= 1)
        p.tile = t;
    p.wg = MAX_WG;
    if (p.wg > ctx->caps.max_wg)
        p.wg = ctx->caps.max_wg;
    while (p.wg > p.tile / 2 && p.wg > 1)
        p.wg >>= 1;
    /* the work-group size must be a power of two */
    size_t w = 1;
    while (w * 2 <= p.wg)
        w *= 2;
    p.wg = w;
    return p;
}

/* the kernels for (width, kind) with the device's parameters */
static int basic_kernels(cltopk_context *ctx, const cltopk_request *rq, bitonic_params *p,
                   cl_kernel *first, cl_kernel *next)
{
    *p = basic_params(ctx, rq->bytes);
    for (;;) {
        char opts[256];
        snprintf(opts, sizeof opts, "-D KEY_BITS=%d -D KEY_KIND=%d -D TILE=%zu -D WG=%zu",
                 rq->bytes * 8, rq->kind, p->tile, p->wg);
        int st = cltopk_kernel_get(ctx, "bitonic.cl", opts, "bitonic_first", first);
        if (st != CLTOPK_OK)
            return st;
        size_t kwg = 0;
        clGetKernelWorkGroupInfo(*first, ctx->dev, CL_KERNEL_WORK_GROUP_SIZE, sizeof kwg, &kwg,
                                 NULL);
        if (kwg && kwg < p->wg && p->wg > 1) {
            /* the compiled kernel needs more resources than WG work-items allow */
            clReleaseKernel(*first);
            p->wg >>= 1;
            continue;
        }
        st = cltopk_kernel_get(ctx, "bitonic.cl", opts, "bitonic_next", next);
        if (st != CLTOPK_OK) {
            clReleaseKernel(*first);
            return st;
        }
        return CLTOPK_OK;
    }
}

/* The launch chain shared by both kernel families: the first kernel reduces
 * in[off .. off+n) to `per_group` candidates a tile of E elements, the next
 * kernel reduces the candidates the same way, ping-ponging between two scratch
 * pairs, until one group writes the answer.  Argument lists (after the first
 * kernel's `first_extra` inserted at position 3 when first_has_extra):
 *   first: in, off, n, [extra,] smallest, cu, ci, fin, want, out_keys, out_index, base
 *   next:  cu, ci, m, next3, cu', ci', fin, want, in, off, out_keys, out_index, base */
typedef struct {
    cl_kernel first, next;
    int first_has_extra;
    cl_uint first_extra, next3;
    size_t E, per_group, wg;
    int index; /* candidates carry the index */
} chain_desc;

static int run_chain(cltopk_context *ctx, const cltopk_request *rq, const chain_desc *d,
                     cl_mem in, size_t off, size_t n, cl_mem out_keys, cl_mem out_index,
                     cl_uint want, uint64_t index_base, cl_uint num_wait, const cl_event *wait)
{
    int st = CLTOPK_OK;
    size_t kbytes = (size_t)rq->bytes;
    cl_uint smallest = (cl_uint)rq->smallest, kout = (cl_uint)rq->k, n32 = (cl_uint)n;
    cl_ulong off64 = off, base64 = index_base;
    size_t groups = (n + d->E - 1) / d->E;
    if (groups == 0)
        groups = 1;
    size_t cand = groups * d->per_group;
    cl_mem cu[2] = {NULL, NULL}, ci[2] = {NULL, NULL};
    if (groups > 1 &&
        ((st = cltopk_scratch(ctx, SCR_CAND_U0, cand * kbytes, &cu[0])) != CLTOPK_OK ||
         (st = cltopk_scratch(ctx, SCR_CAND_U1, cand * kbytes, &cu[1])) != CLTOPK_OK ||
         (d->index && ((st = cltopk_scratch(ctx, SCR_CAND_I0, cand * 4, &ci[0])) != CLTOPK_OK ||
                       (st = cltopk_scratch(ctx, SCR_CAND_I1, cand * 4, &ci[1])) != CLTOPK_OK))))
        return st;
    cl_uint fin = groups == 1 ? kout : 0;
    int x = d->first_has_extra;
    if (x)
        st = cltopk_set_args(ctx, d->first, 12, sizeof(cl_mem), &in, sizeof off64, &off64,
                             sizeof n32, &n32, sizeof d->first_extra, &d->first_extra,
                             sizeof smallest, &smallest, sizeof(cl_mem), &cu[0], sizeof(cl_mem),
                             &ci[0], sizeof fin, &fin, sizeof want, &want, sizeof(cl_mem),
                             &out_keys, sizeof(cl_mem), &out_index, sizeof base64, &base64);
    else
        st = cltopk_set_args(ctx, d->first, 11, sizeof(cl_mem), &in, sizeof off64, &off64,
                             sizeof n32, &n32, sizeof smallest, &smallest, sizeof(cl_mem),
                             &cu[0], sizeof(cl_mem), &ci[0], sizeof fin, &fin, sizeof want,
                             &want, sizeof(cl_mem), &out_keys, sizeof(cl_mem), &out_index,
                             sizeof base64, &base64);
    if (st == CLTOPK_OK)
        st = cltopk_launch(ctx, d->first, groups * d->wg, d->wg, num_wait, wait);
    int cur = 0;
    size_t m = cand;
    while (st == CLTOPK_OK && groups > 1) {
        groups = (m + d->E - 1) / d->E;
        fin = groups == 1 ? kout : 0;
        cl_uint m32 = (cl_uint)m;
        st = cltopk_set_args(ctx, d->next, 13, sizeof(cl_mem), &cu[cur], sizeof(cl_mem), &ci[cur],
                             sizeof m32, &m32, sizeof d->next3, &d->next3, sizeof(cl_mem),
                             &cu[!cur], sizeof(cl_mem), &ci[!cur], sizeof fin, &fin, sizeof want,
                             &want, sizeof(cl_mem), &in, sizeof off64, &off64, sizeof(cl_mem),
                             &out_keys, sizeof(cl_mem), &out_index, sizeof base64, &base64);
        if (st == CLTOPK_OK)
            st = cltopk_launch(ctx, d->next, groups * d->wg, d->wg, 0, NULL);
        cur = !cur;
        m = groups * d->per_group;
    }
    return st;
}

/* Reduce keys[off .. off+n) of device buffer `in` to the answer in out_keys /
 * out_index (want bits: 1 keys, 2 index), positions offset by index_base. */
static int basic_run(cltopk_context *ctx, const cltopk_request *rq, cl_mem in, size_t off,
                     size_t n, cl_mem out_keys, cl_mem out_index, cl_uint want,
                     uint64_t index_base, cl_uint num_wait, const cl_event *wait)
{
    bitonic_params p;
    cl_kernel kf = NULL, kn = NULL;
    int st = basic_kernels(ctx, rq, &p, &kf, &kn);
    if (st != CLTOPK_OK)
        return st;
    cl_uint K = (cl_uint)cltopk_pow2_ge(rq->k);
    chain_desc d = {kf, kn, 1, K, K, p.tile, K, p.wg, 1};
    st = run_chain(ctx, rq, &d, in, off, n, out_keys, out_index, want, index_base, num_wait,
                   wait);
    clReleaseKernel(kf);
    clReleaseKernel(kn);
    return st;
}

/* ------------------------------------------------------------- the reducer */

/* local memory for one tile: what a group may use with 1 KB to spare, at most
 * 48 KB, so every device runs configurations that t/banks.c proves */
static size_t local_budget(const cltopk_context *ctx)
{
    uint64_t b = ctx->caps.local_mem > 1024 ? ctx->caps.local_mem - 1024 : 0;
    return b > 47 * 1024 ? 47 * 1024 : (size_t)b;
}

/* the configuration of a call; -1 with the reason in why */
static int bitonic_configure(const cltopk_context *ctx, const cltopk_request *rq, unsigned index,
                     bitonic_cfg *c, char *why, size_t whylen)
{
    size_t K = cltopk_pow2_ge(rq->k);
    size_t budget = local_budget(ctx);
    cltopk_params p;
    cltopk_tune_for f = {(ctx->caps.type & CL_DEVICE_TYPE_GPU) != 0, ctx->caps.device_name,
                         (unsigned)rq->bytes, (int)index, K};
    if (cltopk_params_get(rq->tune, &bcfg_table, &f, &p, why, whylen) != 0)
        return -1;
    /* CPU devices have no banks to spare and compile the unrolled 16-item
     * networks slowly (POCL: about 13 s of CPU a program against 1.5 s for 4
     * items), so they take 4 items a work-item and combined steps of 4 */
    unsigned max_b = (ctx->caps.type & CL_DEVICE_TYPE_CPU) ? 4 : 16;
    if (K > 4096 || bcfg_default(c, (unsigned)K, (unsigned)rq->bytes, index, budget,
                                 ctx->caps.max_wg, max_b) != 0) {
        /* no reducer tile fits: only the basic kernel could, if asked for */
        memset(c, 0, sizeof *c);
        c->K = (unsigned)(K > 4096 ? 4096 : K);
        c->key_bytes = (unsigned)rq->bytes;
        c->index = index;
        if (!((p.set >> BP_BASIC) & 1u) || !p.v[BP_BASIC]) {
            snprintf(why, whylen,
                     "bitonic top-k keeps two runs of k (rounded up to a power of two) in local "
                     "memory: k = %zu is too large for %zu bytes of local memory with %d-byte "
                     "keys%s on %s; use CLTOPK_ALGO_AUTO",
                     rq->k, budget, rq->bytes, index ? " and indices" : "", ctx->name);
            return -1;
        }
    }
    bcfg_apply(c, &p);
    if (c->basic) {
        bitonic_params bp = basic_params(ctx, rq->bytes);
        if (K > bp.tile / 2) {
            snprintf(why, whylen, "basic bitonic: k = %zu exceeds its limit %zu on %s", rq->k,
                     bp.tile / 2, ctx->name);
            return -1;
        }
        return 0;
    }
    if (bcfg_check(c, budget, ctx->caps.max_wg, why, whylen) != 0)
        return -1;
    return 0;
}

/* whether the index must travel: asked for, or floats where a zero or NaN in
 * the answer could not be told from its twins without it and no re-run is
 * possible (device data, several chunks) */
static unsigned need_index(const cltopk_request *rq, int rerun_possible)
{
    if (rq->want_index)
        return 1;
    return rq->kind == KIND_FLOAT && !rerun_possible;
}

/* POCL 4 and 5 abort the process (an assertion in their parallel-region
 * formation, pocl issue 1435) compiling the reducer's nested local phases for
 * K > 4; measured with POCL 5.0, which compiles and runs the flat form
 * (cl/reducer.cl, FLAT) exactly.  Other versions keep the nested form: POCL 3.1
 * and 6.0 run it, 6.0 twice as fast as the flat one (k = 1024, n = 2^22). */
static int pocl_needs_flat(const cltopk_context *ctx)
{
    int major = cltopk_pocl_major(ctx);
    return major >= 4 && major < 6;
}

static int bitonic_supports(cltopk_context *ctx, const cltopk_request *rq, char *why,
                            size_t whylen)
{
    /* one limit per key width: the configuration that carries the index (which
     * a keys-only float call may need on its re-run) must fit */
    bitonic_cfg c;
    return bitonic_configure(ctx, rq, 1, &c, why, whylen) == 0;
}

/* Reduce keys[off .. off+n) of device buffer `in` to the answer in out_keys /
 * out_index (want bits: 1 keys, 2 index), positions offset by index_base. */
static int bitonic_device(cltopk_context *ctx, const cltopk_request *rq, const bitonic_cfg *c,
                      cl_mem in, size_t off, size_t n, cl_mem out_keys, cl_mem out_index,
                      cl_uint want, uint64_t index_base, cl_uint num_wait, const cl_event *wait)
{
    if (c->basic)
        return basic_run(ctx, rq, in, off, n, out_keys, out_index, want, index_base, num_wait,
                         wait);
    char opts[320];
    snprintf(opts, sizeof opts,
             "-D KEY_BITS=%d -D KEY_KIND=%d -D K=%u -D B=%u -D WG=%u -D OUT=%u -D INDEX=%u "
             "-D MAXM=%u -D SWZ=%u%s%s",
             rq->bytes * 8, rq->kind, c->K, c->B, c->WG, c->OUT, c->index, c->MAXM, c->SWZ,
             rq->pk_starts ? " -D PACKED_FOR" : "", /* bit-packed source: lib/codec.c */
             pocl_needs_flat(ctx) ? " -D FLAT=1" : "");
    cl_kernel ks = NULL, kb = NULL;
    int st = cltopk_kernel_get(ctx, "reducer.cl", opts, "sort_reducer", &ks);
    if (st == CLTOPK_OK)
        st = cltopk_kernel_get(ctx, "reducer.cl", opts, "bitonic_reducer", &kb);
    for (int i = 0; i < 2 && st == CLTOPK_OK; i++) {
        size_t kwg = 0;
        clGetKernelWorkGroupInfo(i ? kb : ks, ctx->dev, CL_KERNEL_WORK_GROUP_SIZE, sizeof kwg,
                                 &kwg, NULL);
        if (kwg && kwg < c->WG)
            st = cltopk_fail(ctx, CLTOPK_ERR_UNSUPPORTED,
                             "the bitonic reducer built with %s runs at most %zu work-items a "
                             "group on %s, not %u; set CLTOPK_BITONIC=WG=%zu or smaller",
                             opts, kwg, ctx->name, c->WG, kwg);
    }
    if (st != CLTOPK_OK)
        goto out;
    {
        /* local arrays: keys (two for 64-bit keys), then the index */
        size_t E = bcfg_E(c), lw = E * 4, l1 = rq->bytes == 8 ? lw : 4, l2 = c->index ? lw : 4;
        for (int i = 0; i < 2 && st == CLTOPK_OK; i++) {
            cl_kernel kk = i ? kb : ks;
            cl_uint a0 = i ? 13 : 11;
            cl_int err = clSetKernelArg(kk, a0, lw, NULL);
            if (err == CL_SUCCESS)
                err = clSetKernelArg(kk, a0 + 1, l1, NULL);
            if (err == CL_SUCCESS)
                err = clSetKernelArg(kk, a0 + 2, l2, NULL);
            if (err != CL_SUCCESS)
                st = cltopk_clfail(ctx, err, "clSetKernelArg (local memory)");
        }
        if (st == CLTOPK_OK && rq->pk_starts) { /* bit-packed source: lib/codec.c */
            cl_int e = clSetKernelArg(ks, 14, sizeof(cl_mem), &rq->pk_starts);
            if (e == CL_SUCCESS)
                e = clSetKernelArg(ks, 15, sizeof(cl_uint), &rq->pk_nblocks);
            if (e != CL_SUCCESS)
                st = cltopk_clfail(ctx, e, "clSetKernelArg (packed source)");
        }
        chain_desc d = {ks, kb, 0, 0, (cl_uint)rq->smallest, E, c->OUT, c->WG, (int)c->index};
        if (st == CLTOPK_OK)
            st = run_chain(ctx, rq, &d, in, off, n, out_keys, out_index, want, index_base,
                           num_wait, wait);
    }
out:
    if (ks)
        clReleaseKernel(ks);
    if (kb)
        clReleaseKernel(kb);
    return st;
}

/* Device data.  A keys-only float call runs without the index, then reads the
 * k keys back (waiting for the device) and, when a zero or a NaN is among them
 * (whose bits the order key cannot restore), runs again with the index; into
 * an output buffer the host may not read, with the index from the start. */
static int bitonic_run_buffer(cltopk_context *ctx, const cltopk_request *rq)
{
    bitonic_cfg c;
    char why[512];
    /* float keys alone: without positions, then the keys read back and the
     * call run again with them where a zero or NaN is among them; with them
     * from the start where the host may not read the output buffer */
    int float_ko = !rq->want_index && rq->kind == KIND_FLOAT && !rq->pk_starts &&
                   !cltopk_mem_host_unreadable(rq->dout_keys);
    if (bitonic_configure(ctx, rq, need_index(rq, float_ko) || rq->pk_starts, &c, why, sizeof why) != 0)
        return cltopk_fail(ctx, CLTOPK_ERR_UNSUPPORTED, "%s", why);
    /* bit-packed source (lib/codec.c): the SortReducer decodes a GPU-FOR column on
     * load in work-groups of 128 with the index; other configurations decline */
    if (rq->pk_starts && (c.basic || c.WG != 128 || c.B % 4 || !c.index || rq->bytes != 4))
        return cltopk_fail(ctx, CLTOPK_ERR_UNSUPPORTED,
                           "top-k fused with decoding needs the bitonic reducer with WG=128 "
                           "and the index (CLTOPK_BITONIC=WG=128,...)");
    cl_uint want = (rq->want_keys ? 1u : 0u) | (rq->want_index ? 2u : 0u);
    int st = bitonic_device(ctx, rq, &c, rq->dkeys, rq->doffset, rq->n, rq->dout_keys,
                        rq->dout_index, want, 0, rq->num_wait, rq->wait);
    if (st == CLTOPK_OK && float_ko && !c.basic && !c.index) {
        size_t kb = (size_t)rq->bytes;
        char *back = malloc(rq->k * kb);
        if (!back)
            return cltopk_fail(ctx, CLTOPK_ERR_NO_MEMORY, "out of host memory for %zu keys",
                               rq->k);
        cl_event *own;
        cl_uint nown = cltopk_after_own(ctx, &own);
        cl_int err = clEnqueueReadBuffer(ctx->queue, rq->dout_keys, CL_TRUE, 0, rq->k * kb, back,
                                         nown, own, NULL);
        int again = 0;
        for (size_t j = 0; err == CL_SUCCESS && j < rq->k && !again; j++)
            again = cltopk_ambiguous_float(back, j, rq->bytes);
        free(back);
        if (err != CL_SUCCESS)
            return cltopk_clfail(ctx, err, "reading the keys back (a kernel may have failed)");
        if (again) {
            if (bitonic_configure(ctx, rq, 1, &c, why, sizeof why) != 0)
                return cltopk_fail(ctx, CLTOPK_ERR_UNSUPPORTED, "%s", why);
            st = bitonic_device(ctx, rq, &c, rq->dkeys, rq->doffset, rq->n, rq->dout_keys,
                            rq->dout_index, want, 0, 0, NULL);
        }
    }
    return st;
}

/* one chunk of host data (cltopk_chunked_topk): the call's configuration in arg */
static int bitonic_chunk(cltopk_context *ctx, const cltopk_request *rq, void *arg, cl_mem in,
                     size_t off, size_t n, size_t k, cl_mem out_keys, cl_mem out_index,
                     cl_uint want, uint64_t index_base, cl_uint num_wait, const cl_event *wait)
{
    cltopk_request sub = *rq;
    sub.n = n;
    sub.k = k;
    return bitonic_device(ctx, &sub, arg, in, off, n, out_keys, out_index, want, index_base,
                      num_wait, wait);
}

static int bitonic_host_cfg(cltopk_context *ctx, const cltopk_request *rq, int force_index)
{
    int chunks = rq->n > cltopk_chunk_elems(ctx, rq->bytes) && rq->n > rq->k;
    bitonic_cfg c;
    char why[512];
    unsigned index = force_index || need_index(rq, !chunks);
    if (bitonic_configure(ctx, rq, index, &c, why, sizeof why) != 0)
        return cltopk_fail(ctx, CLTOPK_ERR_UNSUPPORTED, "%s", why);
    if (c.basic)
        index = 1;
    int rerun = 0;
    int st = cltopk_chunked_topk(ctx, rq, bitonic_chunk, &c, (int)index, &rerun);
    /* a zero or NaN in a keys-only answer: its bits need the index */
    if (st == CLTOPK_OK && rerun)
        return bitonic_host_cfg(ctx, rq, 1);
    return st;
}

static int bitonic_run_host(cltopk_context *ctx, const cltopk_request *rq)
{
    return bitonic_host_cfg(ctx, rq, 0);
}

static size_t bitonic_workspace(cltopk_context *ctx, const cltopk_request *rq)
{
    bitonic_cfg c;
    char why[512];
    size_t n = rq->n, chunk = cltopk_chunk_elems(ctx, rq->bytes), host = 0;
    int chunks = !rq->on_device && n > chunk;
    unsigned index = need_index(rq, !rq->on_device && !chunks) || rq->kind == KIND_FLOAT;
    if (!rq->on_device) /* one chunk or streamed piece at a time */
        n = cltopk_host_input(ctx, rq, &host);
    if (bitonic_configure(ctx, rq, index, &c, why, sizeof why) != 0)
        return 0;
    size_t bytes;
    if (c.basic) {
        bitonic_params p = basic_params(ctx, rq->bytes);
        size_t groups = (n + p.tile - 1) / p.tile;
        size_t cand = groups > 1 ? groups * cltopk_pow2_ge(rq->k) : 0;
        bytes = 2 * cand * ((size_t)rq->bytes + 4);
    } else {
        size_t E = bcfg_E(&c), groups = (n + E - 1) / E;
        size_t cand = groups > 1 ? groups * c.OUT : 0;
        bytes = 2 * cand * ((size_t)rq->bytes + (c.index ? 4 : 0));
    }
    bytes += host; /* 0 for device data */
    return bytes;
}

/* s(K) = log2(2K) (log2(2K) + 1) / 2 compare-exchanges an element (K = k
 * rounded up to a power of two).  GPUs: the SortReducer/BitonicReducer took
 * 6.8 and 17.2 ms at k = 32 and 1024 against a 0.49 ms floor on the H200:
 * t = R (4.1 + 0.49 s), R a read at the bandwidth constant (k = 8 .. 1024 within
 * 5%; k <= 4 predicted high, where bitonic wins anyway).  CPU devices: a compare-exchange in local memory costs
 * about 1/8 of a local atomic increment (POCL, n = 2^16, k = 1 .. 1024). */
static double bitonic_predict(const cltopk_context *ctx, const cltopk_request *rq,
                              const cltopk_consts *c)
{
    (void)ctx;
    if (!c)
        return -1;
    double n = (double)rq->n, kb = rq->bytes, K = (double)cltopk_pow2_ge(rq->k);
    double s = log2(2 * K) * (log2(2 * K) + 1) / 2;
    double fan = log2(4096 / K) > 1 ? log2(4096 / K) : 1;
    double levels = 1 + (n > 4096 ? ceil(log2(n / 4096) / fan) : 0);
    if (c->gpu)
        return n * kb / c->bw * (4.1 + 0.49 * s) + levels * c->launch;
    return n * kb / c->bw + n * s / (8 * c->lrate) + levels * c->launch;
}

const cltopk_algorithm cltopk_algo_bitonic = {
    .id = CLTOPK_ALGO_BITONIC,
    .name = "bitonic",
    .on_device = 1,
    .kmax32 = 4096,
    .kmax64 = 4096,
    .needs_int64 = 1,
    .max_buffer_n = 0xFFFFFFFE,
    .decodes_packed = 1,
    .supports = bitonic_supports,
    .predict = bitonic_predict,
    .run_host = bitonic_run_host,
    .run_buffer = bitonic_run_buffer,
    .workspace = bitonic_workspace,
};

#endif
