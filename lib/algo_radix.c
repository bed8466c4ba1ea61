/* algo_radix.c - host side of the global radix select (cl/radix_select.cl).
 *
 * Top-k for any k up to n and the element at any rank.  Each call enqueues
 * rs_init, then for every digit of the composite key (order key : ~position,
 * KEY_BITS + 32 bits, 8 bits a pass) rs_hist, rs_choose and rs_filter, back to
 * back; the state (need, candidates, where they are, the pass's mode, the
 * prefix a narrowed input is matched against) lives in a small device buffer,
 * so there is no host read-back until the result.  A target bucket holding
 * more than 1/8 of the input is not copied: the next pass reads the input
 * again against the prefix (one read instead of a copy of 2 bytes an input
 * byte); smaller buckets are copied.  CLTOPK_RADIX="hc=H,narrow=N,ipt=I,first=F,
 * pre=P" sets the histogram copies (GPU default 4, CPU 1), that fraction (0:
 * always copy), the elements a work-item loads a round (GPU 8, CPU 4), the bits
 * of the first digit (8..12, default 8: a wider one splits the few exponents
 * of uniform floats in pass 0) and the digits histogrammed in pass 0 (1 or 2).
 * Passes after the search has ended cost a launch each and return at once.
 * Top-k then sorts its k winners on the device (bitonic, k rounded up to a
 * power of two) and writes the input's bits and positions.
 *
 * Scratch: two candidate buffers of n (key, 32-bit position) pairs, the winners
 * (k rounded up to a power of two pairs), 64 bytes of state, 3 KB of histograms.
 * Host data larger than one device chunk (cltopk_chunk_elems) runs per chunk
 * and merges the chunks' answers on the host. */
#include "internal.h"

#if HAVE_OPENCL

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RS_IPT 4
#define RS_PRE 2
#define RS_BLK 1024

typedef struct {
    size_t wg, groups, blk;
    int first; /* bits of digit 0 */
    char opts[256];
} rs_cfg;

/* passes over the composite key of a request: digit 0 of `first` bits, then 8 */
static int rs_digits(const cltopk_request *rq, int first)
{
    return 1 + (rq->bytes * 8 + 32 - first + 7) / 8;
}

static size_t pow2_ge(size_t k)
{
    size_t K = 1;
    while (K < k)
        K <<= 1;
    return K;
}

static void rs_configure(const cltopk_context *ctx, const cltopk_request *rq, size_t n, size_t wg,
                         rs_cfg *c)
{
    c->wg = wg;
    int gpu = (ctx->caps.type & CL_DEVICE_TYPE_GPU) != 0;
    /* GPUs: 8 elements a work-item a round, loaded before they are counted, so
     * that enough loads are in flight; 4 histogram copies */
    int ipt = gpu ? 8 : RS_IPT, hc = gpu ? 4 : 1, narrow = 8, first = 8, pre = RS_PRE;
    const char *spec = cltopk_env("CLTOPK_RADIX"); /* "hc=H,narrow=N,ipt=I,first=F,pre=P" */
    if (spec) {
        const char *h = strstr(spec, "hc="), *nw = strstr(spec, "narrow="),
                   *ip = strstr(spec, "ipt="), *fi = strstr(spec, "first="),
                   *pr = strstr(spec, "pre=");
        if (fi && atoi(fi + 6) >= 8 && atoi(fi + 6) <= 12)
            first = atoi(fi + 6);
        if (pr && (atoi(pr + 4) == 1 || atoi(pr + 4) == 2))
            pre = atoi(pr + 4);
        if (h && atoi(h + 3) >= 1 && atoi(h + 3) <= 16)
            hc = atoi(h + 3);
        if (nw && atoi(nw + 7) >= 0)
            narrow = atoi(nw + 7);
        if (ip && atoi(ip + 4) >= 1 && atoi(ip + 4) <= 32)
            ipt = atoi(ip + 4);
    }
    size_t per = wg * (size_t)ipt;
    size_t g = (n + per - 1) / per;
    size_t cap = (size_t)(ctx->caps.compute_units ? ctx->caps.compute_units : 1) *
                 (gpu ? 16 : 2);
    if (g > cap)
        g = cap;
    c->groups = g ? g : 1;
    c->blk = RS_BLK < 2 * wg ? 2 * wg : RS_BLK;
    c->first = first;
    snprintf(c->opts, sizeof c->opts,
             "-D KEY_BITS=%d -D KEY_KIND=%d -D WG=%zu -D IPT=%d -D PRE=%d -D BLK=%zu -D HC=%d "
             "-D NARROW=%d -D FIRST=%d",
             rq->bytes * 8, rq->kind, wg, ipt, pre, c->blk, hc, narrow, first);
}

static size_t start_wg(const cltopk_context *ctx)
{
    size_t w = 256;
    while (w > ctx->caps.max_wg && w > 1)
        w >>= 1;
    return w;
}

enum { K_INIT, K_HIST, K_CHOOSE, K_FILTER, K_PAD, K_LOCAL, K_GLOBAL, K_WRITE, K_SELOUT, K_N };
static const char *const knames[K_N] = {"rs_init",  "rs_hist",   "rs_choose", "rs_filter",
                                        "bs_pad",   "bs_local",  "bs_global", "rs_write",
                                        "rs_select_out"};

/* the kernels, halving the work-group size while a kernel cannot run it */
static int rs_kernels(cltopk_context *ctx, const cltopk_request *rq, size_t n, rs_cfg *c,
                      cl_kernel *k)
{
    size_t wg = start_wg(ctx);
    for (;;) {
        rs_configure(ctx, rq, n, wg, c);
        memset(k, 0, K_N * sizeof *k);
        int st = CLTOPK_OK, again = 0;
        for (int i = 0; i < K_N && st == CLTOPK_OK; i++) {
            st = cltopk_kernel_get(ctx, "radix_select.cl", c->opts, knames[i], &k[i]);
            if (st != CLTOPK_OK)
                break;
            size_t kwg = 0;
            clGetKernelWorkGroupInfo(k[i], ctx->dev, CL_KERNEL_WORK_GROUP_SIZE, sizeof kwg, &kwg,
                                     NULL);
            if (kwg && kwg < wg && (i == K_INIT || i == K_HIST || i == K_CHOOSE ||
                                    i == K_FILTER || i == K_LOCAL))
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

/* above this k the winners are sorted by the device radix sort (devsort.c),
 * at and below it by the bitonic sort here (a few launches, no passes) */
#define RS_BITONIC_MAX 4096

/* sort the k winners (rk, ri) on the device and write the input's bits and
 * positions (want bits: 1 keys, 2 positions offset by index_base).  The
 * winners' positions are below npos (0: unknown); tmp (NULL: none) is two
 * pairs of key and position buffers of k at least that the sort may use. */
static int sort_write(cltopk_context *ctx, const rs_cfg *cp, cl_kernel *kk, cl_mem rk, cl_mem ri,
                      size_t k, cl_uint want, cl_mem in, size_t off, cl_mem out_keys,
                      cl_mem out_index, uint64_t index_base, const cltopk_request *rq,
                      size_t npos, const cl_mem *tmp)
{
    rs_cfg c = *cp;
    int st = CLTOPK_OK;
    size_t K2 = pow2_ge(k);
    cl_uint k32 = (cl_uint)k;
    cl_ulong off64 = off, base64 = index_base;
    if (k > RS_BITONIC_MAX) {
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
        goto write;
    }
    /* pad to K2, blocks in local memory, then the stages */
    cl_uint len = (cl_uint)K2, zero = 0;
    size_t blk = K2 < c.blk ? K2 : c.blk;
    if (K2 > k) {
        size_t g = ((K2 - k) + 63) / 64 * 64;
        st = cltopk_set_args(ctx, kk[K_PAD], 4, sizeof(cl_mem), &rk, sizeof(cl_mem), &ri,
                             sizeof k32, &k32, sizeof len, &len);
        if (st == CLTOPK_OK)
            st = cltopk_launch(ctx, kk[K_PAD], g, 64, 0, NULL);
    }
    if (st == CLTOPK_OK && K2 > 1) {
        st = cltopk_set_args(ctx, kk[K_LOCAL], 4, sizeof(cl_mem), &rk, sizeof(cl_mem), &ri,
                             sizeof len, &len, sizeof zero, &zero);
        if (st == CLTOPK_OK)
            st = cltopk_launch(ctx, kk[K_LOCAL], (K2 / blk) * c.wg, c.wg, 0, NULL);
    }
    for (size_t s = 2 * blk; s <= K2 && st == CLTOPK_OK; s <<= 1) {
        cl_uint s32 = (cl_uint)s;
        for (size_t j = s / 2; j >= blk && st == CLTOPK_OK; j >>= 1) {
            cl_uint j32 = (cl_uint)j;
            size_t g = (K2 / 2 + 255) / 256 * 256;
            st = cltopk_set_args(ctx, kk[K_GLOBAL], 5, sizeof(cl_mem), &rk, sizeof(cl_mem), &ri,
                                 sizeof len, &len, sizeof s32, &s32, sizeof j32, &j32);
            if (st == CLTOPK_OK)
                st = cltopk_launch(ctx, kk[K_GLOBAL], g, 256 <= ctx->caps.max_wg ? 256 : 64, 0,
                                   NULL);
        }
        if (st == CLTOPK_OK)
            st = cltopk_set_args(ctx, kk[K_LOCAL], 4, sizeof(cl_mem), &rk, sizeof(cl_mem), &ri,
                                 sizeof len, &len, sizeof s32, &s32);
        if (st == CLTOPK_OK)
            st = cltopk_launch(ctx, kk[K_LOCAL], (K2 / blk) * c.wg, c.wg, 0, NULL);
    }
write:
    if (st == CLTOPK_OK) {
        size_t g = (k + 63) / 64 * 64;
        st = cltopk_set_args(ctx, kk[K_WRITE], 8, sizeof(cl_mem), &ri, sizeof k32, &k32,
                             sizeof want, &want, sizeof(cl_mem), &in, sizeof off64, &off64,
                             sizeof(cl_mem), &out_keys, sizeof(cl_mem), &out_index,
                             sizeof base64, &base64);
        if (st == CLTOPK_OK)
            st = cltopk_launch(ctx, kk[K_WRITE], g, 64, 0, NULL);
    }
    return st;
}

/* Radix select over keys[off .. off+n) of device buffer `in`.  topk: the best k
 * in order into out_keys / out_index; else the element at position k - 1.
 * want bits: 1 keys, 2 positions (offset by index_base). */
static int rs_device(cltopk_context *ctx, const cltopk_request *rq, cl_mem in, size_t off,
                     size_t n, size_t k, int topk, cl_mem out_keys, cl_mem out_index,
                     cl_uint want, uint64_t index_base, cl_uint num_wait, const cl_event *wait)
{
    rs_cfg c;
    cl_kernel kk[K_N];
    int st = rs_kernels(ctx, rq, n, &c, kk);
    if (st != CLTOPK_OK)
        return st;
    /* the winners: padded to a power of two for the bitonic sort */
    size_t kb = (size_t)rq->bytes, K2 = k > RS_BITONIC_MAX ? k : pow2_ge(k);
    int digits = rs_digits(rq, c.first);
    cl_mem state, hist, ak, ai, bk, bi, rk = NULL, ri = NULL;
    if ((st = cltopk_scratch(ctx, SCR_RS_STATE, 16 * 4, &state)) != CLTOPK_OK ||
        (st = cltopk_scratch(ctx, SCR_RS_HIST, ((size_t)digits << c.first) * 4, &hist)) !=
            CLTOPK_OK ||
        (st = cltopk_scratch(ctx, SCR_CAND_U0, n * kb, &ak)) != CLTOPK_OK ||
        (st = cltopk_scratch(ctx, SCR_CAND_I0, n * 4, &ai)) != CLTOPK_OK ||
        (st = cltopk_scratch(ctx, SCR_CAND_U1, n * kb, &bk)) != CLTOPK_OK ||
        (st = cltopk_scratch(ctx, SCR_CAND_I1, n * 4, &bi)) != CLTOPK_OK ||
        (topk && ((st = cltopk_scratch(ctx, SCR_RS_RES_K, K2 * kb, &rk)) != CLTOPK_OK ||
                  (st = cltopk_scratch(ctx, SCR_RS_RES_I, K2 * 4, &ri)) != CLTOPK_OK)))
        goto out;
    if (!topk)
        rk = ak, ri = ai; /* never written in selection */
    cl_uint n32 = (cl_uint)n, k32 = (cl_uint)k, tk = (cl_uint)topk;
    cl_uint smallest = (cl_uint)rq->smallest;
    cl_ulong off64 = off, base64 = index_base;
    size_t G = c.groups * c.wg;
    st = cltopk_set_args(ctx, kk[K_INIT], 5, sizeof(cl_mem), &state, sizeof(cl_mem), &hist,
                         sizeof n32, &n32, sizeof k32, &k32, sizeof tk, &tk);
    if (st == CLTOPK_OK)
        st = cltopk_launch(ctx, kk[K_INIT], c.wg, c.wg, num_wait, wait);
    for (cl_uint p = 0; p < (cl_uint)digits && st == CLTOPK_OK; p++) {
        st = cltopk_set_args(ctx, kk[K_HIST], 12, sizeof p, &p, sizeof(cl_mem), &in, sizeof off64,
                             &off64, sizeof smallest, &smallest, sizeof(cl_mem), &ak,
                             sizeof(cl_mem), &ai, sizeof(cl_mem), &bk, sizeof(cl_mem), &bi,
                             sizeof(cl_mem), &state, sizeof(cl_mem), &hist, sizeof(cl_mem), &rk,
                             sizeof(cl_mem), &ri);
        if (st == CLTOPK_OK)
            st = cltopk_launch(ctx, kk[K_HIST], G, c.wg, 0, NULL);
        if (st == CLTOPK_OK)
            st = cltopk_set_args(ctx, kk[K_CHOOSE], 3, sizeof p, &p, sizeof(cl_mem), &state,
                                 sizeof(cl_mem), &hist);
        if (st == CLTOPK_OK)
            st = cltopk_launch(ctx, kk[K_CHOOSE], c.wg, c.wg, 0, NULL);
        if (st == CLTOPK_OK)
            st = cltopk_set_args(ctx, kk[K_FILTER], 11, sizeof p, &p, sizeof(cl_mem), &in,
                                 sizeof off64, &off64, sizeof smallest, &smallest,
                                 sizeof(cl_mem), &ak, sizeof(cl_mem), &ai, sizeof(cl_mem), &bk,
                                 sizeof(cl_mem), &bi, sizeof(cl_mem), &state, sizeof(cl_mem),
                                 &rk, sizeof(cl_mem), &ri);
        if (st == CLTOPK_OK)
            st = cltopk_launch(ctx, kk[K_FILTER], G, c.wg, 0, NULL);
    }
    if (st != CLTOPK_OK)
        goto out;
    if (!topk) {
        st = cltopk_set_args(ctx, kk[K_SELOUT], 9, sizeof(cl_mem), &state, sizeof(cl_mem), &in,
                             sizeof off64, &off64, sizeof(cl_mem), &ai, sizeof(cl_mem), &bi,
                             sizeof want, &want, sizeof(cl_mem), &out_keys, sizeof(cl_mem),
                             &out_index, sizeof base64, &base64);
        if (st == CLTOPK_OK)
            st = cltopk_launch(ctx, kk[K_SELOUT], 1, 1, 0, NULL);
        goto out;
    }
    {
        const cl_mem tmp[4] = {ak, ai, bk, bi}; /* the candidates, n >= k pairs, done */
        st = sort_write(ctx, &c, kk, rk, ri, k, want, in, off, out_keys, out_index, index_base,
                        rq, n, tmp);
    }
out:
    for (int i = 0; i < K_N; i++)
        if (kk[i])
            clReleaseKernel(kk[i]);
    return st;
}

static int supports(cltopk_context *ctx, const cltopk_request *rq, char *why, size_t whylen)
{
    if (!ctx->caps.int64) {
        snprintf(why, whylen,
                 "%s is an embedded-profile device without cl_khr_int64; radix select needs "
                 "64-bit integers (use the CPU algorithms)", ctx->name);
        return 0;
    }
    if (rq->n > 0x7FFFFFFFull && rq->on_device) {
        snprintf(why, whylen,
                 "radix select of a cl_mem takes at most 2^31 - 1 elements per call "
                 "(32-bit positions and counts inside one launch); split the buffer");
        return 0;
    }
    return 1;
}

static int run_buffer(cltopk_context *ctx, const cltopk_request *rq)
{
    cl_uint want = (rq->want_keys ? 1u : 0u) | (rq->want_index ? 2u : 0u);
    int st = rs_device(ctx, rq, rq->dkeys, rq->doffset, rq->n, rq->k, 1, rq->dout_keys,
                       rq->dout_index, want, 0, rq->num_wait, rq->wait);
    if (st == CLTOPK_OK && rq->done) {
        clRetainEvent(ctx->last);
        *rq->done = ctx->last;
    }
    return st;
}

/* host data: per device chunk, top-min(k, len) (topk) or the one element
 * (single chunk selection), read back and merged */
static int rs_topk_device(cltopk_context *ctx, const cltopk_request *rq, void *arg, cl_mem in,
                          size_t off, size_t n, size_t k, cl_mem out_keys, cl_mem out_index,
                          cl_uint want, uint64_t index_base, cl_uint num_wait,
                          const cl_event *wait)
{
    (void)arg;
    return rs_device(ctx, rq, in, off, n, k, 1, out_keys, out_index, want, index_base, num_wait,
                     wait);
}

/* The host loop of every device algorithm: topk, or the element at `rank`
 * (sel_key / sel_index; one chunk selects on the device, several merge their
 * best rank + 1).  index and ambiguous as cltopk_chunked_topk. */
static int run_host_mode(cltopk_context *ctx, const cltopk_request *rq, int topk, size_t rank,
                         void *sel_key, int64_t *sel_index, cltopk_devrun devrun, void *arg,
                         int index, int *ambiguous)
{
    size_t kb = (size_t)rq->bytes, k = topk ? rq->k : 1;
    size_t chunk = cltopk_chunk_elems(ctx, rq->bytes);
    if (!topk && rq->n > chunk)
        topk = 1, k = rank + 1; /* several chunks: the best rank + 1 of each, merged */
    if (chunk < k)
        chunk = k; /* every chunk but the last must hold k elements */
    if (ambiguous)
        *ambiguous = 0;
    int check = !index && ambiguous && rq->kind == KIND_FLOAT;
    size_t first = rq->n < chunk ? rq->n : chunk;
    cl_mem in, ok, oi = NULL;
    int st;
    if ((st = cltopk_scratch(ctx, SCR_INPUT, first * kb, &in)) != CLTOPK_OK ||
        (st = cltopk_scratch(ctx, SCR_OUT_KEYS, k * kb, &ok)) != CLTOPK_OK ||
        (index && (st = cltopk_scratch(ctx, SCR_OUT_INDEX, k * 8, &oi)) != CLTOPK_OK))
        return st;
    /* acc: the answer so far; part: one chunk's; tmp: their merge */
    char *acc_k = malloc(k * kb), *part_k = malloc(k * kb), *tmp_k = malloc(k * kb);
    int64_t *acc_i = calloc(k, 8), *part_i = calloc(k, 8), *tmp_i = calloc(k, 8);
    size_t acc_n = 0;
    int stop = 0;
    if (!acc_k || !part_k || !tmp_k || !acc_i || !part_i || !tmp_i) {
        st = cltopk_fail(ctx, CLTOPK_ERR_NO_MEMORY, "out of host memory for %zu results", k);
        goto out;
    }
    for (size_t lo = 0; lo < rq->n && st == CLTOPK_OK && !stop; lo += chunk) {
        size_t len = rq->n - lo < chunk ? rq->n - lo : chunk;
        size_t kk = k < len ? k : len;
        cl_event wr;
        cl_int err = clEnqueueWriteBuffer(ctx->queue, in, CL_FALSE, 0, len * kb,
                                          (const char *)rq->keys + lo * kb, ctx->last ? 1 : 0,
                                          ctx->last ? &ctx->last : NULL, &wr);
        if (err != CL_SUCCESS) {
            st = cltopk_clfail(ctx, err, "clEnqueueWriteBuffer (input)");
            break;
        }
        if (topk)
            st = devrun(ctx, rq, arg, in, 0, len, kk, ok, oi, index ? 3u : 1u, lo, 1, &wr);
        else
            st = rs_device(ctx, rq, in, 0, len, rank + 1, 0, ok, oi, 3u, lo, 1, &wr);
        clReleaseEvent(wr);
        if (st != CLTOPK_OK)
            break;
        size_t got = topk ? kk : 1;
        cl_event evs[2];
        int nev = 0;
        err = clEnqueueReadBuffer(ctx->queue, ok, CL_FALSE, 0, got * kb, part_k, 1, &ctx->last,
                                  &evs[nev]);
        if (err == CL_SUCCESS)
            nev++;
        if (err == CL_SUCCESS && index) {
            err = clEnqueueReadBuffer(ctx->queue, oi, CL_FALSE, 0, got * 8, part_i, 1,
                                      &ctx->last, &evs[nev]);
            if (err == CL_SUCCESS)
                nev++;
        }
        if (nev) {
            cl_int werr = clWaitForEvents((cl_uint)nev, evs);
            if (err == CL_SUCCESS)
                err = werr;
            for (int e = 0; e < nev; e++)
                clReleaseEvent(evs[e]);
        }
        if (err != CL_SUCCESS) {
            st = cltopk_clfail(ctx, err, "reading the results back (a kernel may have failed)");
            break;
        }
        for (size_t j = 0; check && j < got && !stop; j++)
            stop = cltopk_ambiguous_float(part_k, j, rq->bytes);
        if (stop)
            break;
        if (lo == 0) {
            memcpy(acc_k, part_k, got * kb);
            memcpy(acc_i, part_i, got * 8);
            acc_n = got;
        } else {
            size_t mn = acc_n + kk < k ? acc_n + kk : k;
            cltopk_merge_lists(rq, acc_k, acc_i, acc_n, part_k, part_i, kk, mn, tmp_k, tmp_i);
            char *sk = acc_k;
            int64_t *si = acc_i;
            acc_k = tmp_k, acc_i = tmp_i, tmp_k = sk, tmp_i = si;
            acc_n = mn;
        }
    }
    if (st == CLTOPK_OK)
        st = cltopk_finish_own(ctx);
    if (st == CLTOPK_OK && !stop && acc_n != (topk ? k : 1))
        st = cltopk_fail(ctx, CLTOPK_ERR_INTERNAL, "%s: %zu results for k = %zu",
                         devrun == rs_topk_device ? "radix select" : "chunked top-k", acc_n, k);
    if (st == CLTOPK_OK && !stop) {
        if (sel_key || sel_index) {
            size_t at = topk ? rank : 0;
            if (sel_key)
                memcpy(sel_key, acc_k + at * kb, kb);
            if (sel_index)
                *sel_index = acc_i[at];
        } else {
            if (rq->out_keys)
                memcpy(rq->out_keys, acc_k, k * kb);
            if (rq->out_index)
                memcpy(rq->out_index, acc_i, k * 8);
        }
    }
    if (ambiguous)
        *ambiguous = stop;
out:
    if (st != CLTOPK_OK)
        cltopk_finish_own(ctx);
    free(acc_k), free(part_k), free(tmp_k);
    free(acc_i), free(part_i), free(tmp_i);
    return st;
}

static int run_host(cltopk_context *ctx, const cltopk_request *rq)
{
    return run_host_mode(ctx, rq, 1, 0, NULL, NULL, rs_topk_device, NULL, 1, NULL);
}

int cltopk_chunked_topk(cltopk_context *ctx, const cltopk_request *rq, cltopk_devrun devrun,
                        void *arg, int index, int *ambiguous)
{
    return run_host_mode(ctx, rq, 1, 0, NULL, NULL, devrun, arg, index, ambiguous);
}

int cltopk_rs_sort_write(cltopk_context *ctx, const cltopk_request *rq, cl_mem rk, cl_mem ri,
                         size_t k, cl_uint want, cl_mem in, size_t off, cl_mem out_keys,
                         cl_mem out_index, uint64_t index_base)
{
    rs_cfg c;
    cl_kernel kk[K_N];
    int st = rs_kernels(ctx, rq, k, &c, kk);
    if (st != CLTOPK_OK)
        return st;
    st = sort_write(ctx, &c, kk, rk, ri, k, want, in, off, out_keys, out_index, index_base, rq,
                    0, NULL);
    for (int i = 0; i < K_N; i++)
        if (kk[i])
            clReleaseKernel(kk[i]);
    return st;
}

int cltopk_radix_select_host(cltopk_context *ctx, const cltopk_request *rq, size_t rank,
                             void *out_key, int64_t *out_index)
{
    int64_t dummy;
    return run_host_mode(ctx, rq, 0, rank, out_key, out_index ? out_index : &dummy,
                         rs_topk_device, NULL, 1, NULL);
}

/* cltopk_benchmark's selection of device data (CLTOPK_BENCH_SELECT) */
int cltopk_bench_select_buffer(cltopk_context *ctx, cltopk_dtype type, cl_mem keys, size_t n,
                               size_t rank, unsigned flags, cl_mem out_key, cl_mem out_index,
                               cl_event *done)
{
    static const int kind_of[6] = {KIND_FLOAT, KIND_FLOAT, KIND_SIGNED, KIND_UNSIGNED,
                                   KIND_SIGNED, KIND_UNSIGNED};
    pthread_mutex_lock(&ctx->lock);
    ctx->err[0] = 0;
    cltopk_request rq;
    memset(&rq, 0, sizeof rq);
    rq.type = type;
    rq.bytes = (int)cltopk_dtype_size(type);
    rq.kind = kind_of[type];
    rq.n = n;
    rq.k = rank + 1;
    rq.smallest = (flags & CLTOPK_SMALLEST) != 0;
    rq.on_device = 1;
    char why[512];
    int st = CLTOPK_OK;
    if (!ctx->is_cl || !supports(ctx, &rq, why, sizeof why))
        st = cltopk_fail(ctx, CLTOPK_ERR_UNSUPPORTED, "radix select: %s",
                         ctx->is_cl ? why : "needs an OpenCL device");
    if (st == CLTOPK_OK)
        st = rs_device(ctx, &rq, keys, 0, n, rank + 1, 0, out_key, out_index, 3u, 0, 0, NULL);
    if (st == CLTOPK_OK && done) {
        clRetainEvent(ctx->last);
        *done = ctx->last;
    }
    pthread_mutex_unlock(&ctx->lock);
    return st;
}

static size_t workspace(cltopk_context *ctx, const cltopk_request *rq)
{
    size_t n = rq->n, chunk = cltopk_chunk_elems(ctx, rq->bytes), kb = (size_t)rq->bytes;
    if (!rq->on_device && n > chunk)
        n = chunk < rq->k ? rq->k : chunk;
    size_t kw = rq->k > RS_BITONIC_MAX ? rq->k : pow2_ge(rq->k);
    size_t bytes = 2 * n * (kb + 4) + kw * (kb + 4) + 64 + (kb + 5) * 4096 * 4;
    if (rq->k > RS_BITONIC_MAX) { /* the device sort's digit counts (it borrows the
                                     candidate buffers for its pairs) */
        char why[512];
        size_t ds = cltopk_devsort_scratch(ctx, rq->bytes * 8, rq->k, why, sizeof why);
        bytes += ds > 2 * rq->k * (kb + 4) ? ds - 2 * rq->k * (kb + 4) : 0;
    }
    if (!rq->on_device)
        bytes += n * kb + rq->k * (kb + 8);
    return bytes;
}

const cltopk_algorithm cltopk_algo_radix_select = {
    CLTOPK_ALGO_RADIX_SELECT, 1, supports, run_host, run_buffer, workspace,
};

#endif
