/* algo_bitonic.c - host side of the bitonic top-k (cl/bitonic.cl).
 *
 * Parameters from the device limits: TILE = the largest power of two of pairs
 * (key + 32-bit index) that fits local memory with room to spare, at most 8192;
 * WG = min(256, max work-group size, TILE/2).  K = k rounded up to a power of two
 * must be at most TILE/2.  Launches: bitonic_first over ceil(n/TILE) groups, then
 * bitonic_next while more than one tile of candidates remains; the last launch
 * (one group) writes the answer.  No host round trip between launches. */
#include "internal.h"

#if HAVE_OPENCL

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TILE 8192
#define MAX_WG 256

typedef struct {
    size_t tile, wg;
} bitonic_params;

static bitonic_params params(const cltopk_context *ctx, int bytes)
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

size_t cltopk_bitonic_max_k(const cltopk_context *ctx, int bytes)
{
    if (!ctx->is_cl)
        return 0;
    bitonic_params p = params(ctx, bytes);
    return p.tile >= 2 ? p.tile / 2 : 0;
}

static size_t pow2_at_least(size_t k)
{
    size_t K = 1;
    while (K < k)
        K <<= 1;
    return K;
}

static int supports(cltopk_context *ctx, const cltopk_request *rq, char *why, size_t whylen)
{
    if (!ctx->caps.int64) {
        snprintf(why, whylen,
                 "%s is an embedded-profile device without cl_khr_int64; the bitonic kernels "
                 "need 64-bit integers (use the CPU algorithms)", ctx->name);
        return 0;
    }
    size_t maxk = cltopk_bitonic_max_k(ctx, rq->bytes);
    if (pow2_at_least(rq->k) > maxk) {
        snprintf(why, whylen,
                 "bitonic top-k keeps k (rounded up to a power of two) key+index pairs twice "
                 "in local memory: k = %zu exceeds the %zu that %llu bytes of local memory "
                 "allow for %d-byte keys on %s; use CLTOPK_ALGO_AUTO",
                 rq->k, maxk, (unsigned long long)ctx->caps.local_mem, rq->bytes, ctx->name);
        return 0;
    }
    if (rq->n > 0xFFFFFFFEull && rq->on_device) {
        snprintf(why, whylen,
                 "bitonic top-k of a cl_mem takes at most 4294967294 elements per call "
                 "(32-bit positions inside one launch); split the buffer");
        return 0;
    }
    return 1;
}

/* the kernels for (width, kind) with the device's parameters */
static int kernels(cltopk_context *ctx, const cltopk_request *rq, bitonic_params *p,
                   cl_kernel *first, cl_kernel *next)
{
    *p = params(ctx, rq->bytes);
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

/* Reduce keys[off .. off+n) of device buffer `in` to the answer in out_keys /
 * out_index (want bits: 1 keys, 2 index), positions offset by index_base. */
static int run_device(cltopk_context *ctx, const cltopk_request *rq, cl_mem in, size_t off,
                      size_t n, cl_mem out_keys, cl_mem out_index, cl_uint want,
                      uint64_t index_base, cl_uint num_wait, const cl_event *wait)
{
    bitonic_params p;
    cl_kernel kf = NULL, kn = NULL;
    int st = kernels(ctx, rq, &p, &kf, &kn);
    if (st != CLTOPK_OK)
        return st;
    cl_uint K = (cl_uint)pow2_at_least(rq->k);
    cl_uint kout = (cl_uint)rq->k;
    cl_uint smallest = (cl_uint)rq->smallest;
    cl_uint n32 = (cl_uint)n;
    cl_ulong off64 = off, base64 = index_base;
    size_t groups = (n + p.tile - 1) / p.tile;
    if (groups == 0)
        groups = 1;
    size_t kb = (size_t)rq->bytes;
    size_t cand = groups * K;
    cl_mem cu[2] = {NULL, NULL}, ci[2] = {NULL, NULL};
    if (groups > 1 &&
        ((st = cltopk_scratch(ctx, SCR_CAND_U0, cand * kb, &cu[0])) != CLTOPK_OK ||
         (st = cltopk_scratch(ctx, SCR_CAND_I0, cand * 4, &ci[0])) != CLTOPK_OK ||
         (st = cltopk_scratch(ctx, SCR_CAND_U1, cand * kb, &cu[1])) != CLTOPK_OK ||
         (st = cltopk_scratch(ctx, SCR_CAND_I1, cand * 4, &ci[1])) != CLTOPK_OK))
        goto out;

    cl_uint fin = groups == 1 ? kout : 0;
    st = cltopk_set_args(ctx, kf, 12, sizeof(cl_mem), &in, sizeof off64, &off64, sizeof n32, &n32,
                         sizeof K, &K, sizeof smallest, &smallest, sizeof(cl_mem), &cu[0],
                         sizeof(cl_mem), &ci[0], sizeof fin, &fin, sizeof want, &want,
                         sizeof(cl_mem), &out_keys, sizeof(cl_mem), &out_index, sizeof base64,
                         &base64);
    if (st == CLTOPK_OK)
        st = cltopk_launch(ctx, kf, groups * p.wg, p.wg, num_wait, wait);
    int cur = 0;
    size_t m = cand;
    while (st == CLTOPK_OK && groups > 1) {
        groups = (m + p.tile - 1) / p.tile;
        fin = groups == 1 ? kout : 0;
        cl_uint m32 = (cl_uint)m;
        st = cltopk_set_args(ctx, kn, 13, sizeof(cl_mem), &cu[cur], sizeof(cl_mem), &ci[cur],
                             sizeof m32, &m32, sizeof K, &K, sizeof(cl_mem), &cu[!cur],
                             sizeof(cl_mem), &ci[!cur], sizeof fin, &fin, sizeof want, &want,
                             sizeof(cl_mem), &in, sizeof off64, &off64, sizeof(cl_mem),
                             &out_keys, sizeof(cl_mem), &out_index, sizeof base64, &base64);
        if (st == CLTOPK_OK)
            st = cltopk_launch(ctx, kn, groups * p.wg, p.wg, 0, NULL);
        cur = !cur;
        m = groups * K;
    }
out:
    clReleaseKernel(kf);
    clReleaseKernel(kn);
    return st;
}

static int run_buffer(cltopk_context *ctx, const cltopk_request *rq)
{
    cl_uint want = (rq->want_keys ? 1u : 0u) | (rq->want_index ? 2u : 0u);
    int st = run_device(ctx, rq, rq->dkeys, rq->doffset, rq->n, rq->dout_keys, rq->dout_index,
                        want, 0, rq->num_wait, rq->wait);
    if (st == CLTOPK_OK && rq->done) {
        clRetainEvent(ctx->last);
        *rq->done = ctx->last;
    }
    return st;
}

static int run_host(cltopk_context *ctx, const cltopk_request *rq)
{
    size_t kb = (size_t)rq->bytes, k = rq->k;
    size_t chunk = cltopk_chunk_elems(ctx, rq->bytes);
    if (chunk < k)
        chunk = k; /* every chunk but the last must hold k elements */
    size_t first = rq->n < chunk ? rq->n : chunk;
    cl_mem in, ok, oi;
    int st;
    if ((st = cltopk_scratch(ctx, SCR_INPUT, first * kb, &in)) != CLTOPK_OK ||
        (st = cltopk_scratch(ctx, SCR_OUT_KEYS, k * kb, &ok)) != CLTOPK_OK ||
        (st = cltopk_scratch(ctx, SCR_OUT_INDEX, k * 8, &oi)) != CLTOPK_OK)
        return st;
    /* acc: the answer so far; part: one chunk's; tmp: their merge */
    char *acc_k = malloc(k * kb), *part_k = malloc(k * kb), *tmp_k = malloc(k * kb);
    int64_t *acc_i = malloc(k * 8), *part_i = malloc(k * 8), *tmp_i = malloc(k * 8);
    size_t acc_n = 0;
    if (!acc_k || !part_k || !tmp_k || !acc_i || !part_i || !tmp_i) {
        st = cltopk_fail(ctx, CLTOPK_ERR_NO_MEMORY, "out of host memory for %zu results", k);
        goto out;
    }
    for (size_t lo = 0; lo < rq->n && st == CLTOPK_OK; lo += chunk) {
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
        cltopk_request sub = *rq;
        sub.n = len;
        sub.k = kk;
        st = run_device(ctx, &sub, in, 0, len, ok, oi, 3u, lo, 1, &wr);
        clReleaseEvent(wr);
        if (st != CLTOPK_OK)
            break;
        cl_event evs[2];
        err = clEnqueueReadBuffer(ctx->queue, ok, CL_FALSE, 0, kk * kb, part_k, 1, &ctx->last,
                                  &evs[0]);
        if (err == CL_SUCCESS) {
            err = clEnqueueReadBuffer(ctx->queue, oi, CL_FALSE, 0, kk * 8, part_i, 1, &ctx->last,
                                      &evs[1]);
            if (err == CL_SUCCESS) {
                err = clWaitForEvents(2, evs);
                clReleaseEvent(evs[1]);
            } else {
                clWaitForEvents(1, evs);
            }
            clReleaseEvent(evs[0]);
        }
        if (err != CL_SUCCESS) {
            st = cltopk_clfail(ctx, err, "reading the results back (a kernel may have failed)");
            break;
        }
        if (lo == 0) {
            memcpy(acc_k, part_k, kk * kb);
            memcpy(acc_i, part_i, kk * 8);
            acc_n = kk;
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
    if (st == CLTOPK_OK && acc_n != k)
        st = cltopk_fail(ctx, CLTOPK_ERR_INTERNAL, "bitonic: %zu results for k = %zu", acc_n, k);
    if (st == CLTOPK_OK) {
        if (rq->out_keys)
            memcpy(rq->out_keys, acc_k, k * kb);
        if (rq->out_index)
            memcpy(rq->out_index, acc_i, k * 8);
    }
out:
    if (st != CLTOPK_OK)
        cltopk_finish_own(ctx);
    free(acc_k), free(part_k), free(tmp_k);
    free(acc_i), free(part_i), free(tmp_i);
    return st;
}

static size_t workspace(cltopk_context *ctx, const cltopk_request *rq)
{
    bitonic_params p = params(ctx, rq->bytes);
    size_t n = rq->n;
    if (!rq->on_device) {
        size_t chunk = cltopk_chunk_elems(ctx, rq->bytes);
        if (n > chunk)
            n = chunk;
    }
    size_t K = pow2_at_least(rq->k);
    size_t groups = (n + p.tile - 1) / p.tile;
    size_t cand = groups > 1 ? groups * K : 0;
    size_t bytes = 2 * cand * ((size_t)rq->bytes + 4);
    if (!rq->on_device)
        bytes += n * (size_t)rq->bytes + rq->k * ((size_t)rq->bytes + 8);
    return bytes;
}

const cltopk_algorithm cltopk_algo_bitonic = {
    CLTOPK_ALGO_BITONIC, 1, supports, run_host, run_buffer, workspace,
};

#endif
