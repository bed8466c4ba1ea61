/* chunk.c - host data through a device algorithm: the input goes to the device
 * one chunk at a time (cltopk_chunk_elems), each chunk's best min(k, len) comes
 * back, and the chunks' answers are merged on the host in THE ORDER.  Every
 * device record's run_host is this loop around its device function. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

void cltopk_merge_lists(const cltopk_request *rq, const void *ak, const int64_t *ai, size_t an,
                        const void *bk, const int64_t *bi, size_t bn, size_t k, void *ok,
                        int64_t *oi)
{
    size_t a = 0, b = 0, w = (size_t)rq->bytes;
    for (size_t j = 0; j < k && (a < an || b < bn); j++) {
        int take_a;
        if (a >= an) {
            take_a = 0;
        } else if (b >= bn) {
            take_a = 1;
        } else {
            okey_pair pa = {order_key_at(ak, a, rq->bytes, rq->kind, rq->smallest), ai[a]};
            okey_pair pb = {order_key_at(bk, b, rq->bytes, rq->kind, rq->smallest), bi[b]};
            take_a = pair_better(&pa, &pb);
        }
        if (take_a) {
            memcpy((char *)ok + j * w, (const char *)ak + a * w, w);
            oi[j] = ai[a++];
        } else {
            memcpy((char *)ok + j * w, (const char *)bk + b * w, w);
            oi[j] = bi[b++];
        }
    }
}


#if HAVE_OPENCL
/* The host loop of every device algorithm: topk, or the element at `rank`
 * (sel_key / sel_index; one chunk selects on the device by `select`, several
 * merge their best rank + 1).  index and ambiguous as cltopk_chunked_topk. */
static int chunk_loop(cltopk_context *ctx, const cltopk_request *rq, int topk, size_t rank,
                      void *sel_key, int64_t *sel_index, cltopk_devrun devrun,
                      cltopk_devrun select, void *arg, int index, int *ambiguous)
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
        cl_event wr, *own;
        cl_uint nown = cltopk_after_own(ctx, &own);
        cl_int err = clEnqueueWriteBuffer(ctx->queue, in, CL_FALSE, 0, len * kb,
                                          (const char *)rq->keys + lo * kb, nown, own, &wr);
        if (err != CL_SUCCESS) {
            st = cltopk_clfail(ctx, err, "clEnqueueWriteBuffer (input)");
            break;
        }
        if (topk)
            st = devrun(ctx, rq, arg, in, 0, len, kk, ok, oi, index ? 3u : 1u, lo, 1, &wr);
        else
            st = select(ctx, rq, arg, in, 0, len, rank + 1, ok, oi, 3u, lo, 1, &wr);
        clReleaseEvent(wr);
        if (st != CLTOPK_OK)
            break;
        size_t got = topk ? kk : 1;
        cl_event evs[2];
        int nev = 0;
        nown = cltopk_after_own(ctx, &own);
        err = clEnqueueReadBuffer(ctx->queue, ok, CL_FALSE, 0, got * kb, part_k, nown, own,
                                  &evs[nev]);
        if (err == CL_SUCCESS)
            nev++;
        if (err == CL_SUCCESS && index) {
            err = clEnqueueReadBuffer(ctx->queue, oi, CL_FALSE, 0, got * 8, part_i, nown, own,
                                      &evs[nev]);
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
        st = cltopk_fail(ctx, CLTOPK_ERR_INTERNAL, "chunked top-k: %zu results for k = %zu",
                         acc_n, k);
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

int cltopk_chunked_topk(cltopk_context *ctx, const cltopk_request *rq, cltopk_devrun devrun,
                        void *arg, int index, int *ambiguous)
{
    return chunk_loop(ctx, rq, 1, 0, NULL, NULL, devrun, NULL, arg, index, ambiguous);
}

int cltopk_chunked_select(cltopk_context *ctx, const cltopk_request *rq, cltopk_devrun topk,
                          cltopk_devrun select, void *arg, size_t rank, void *out_key,
                          int64_t *out_index)
{
    int64_t dummy;
    return chunk_loop(ctx, rq, 0, rank, out_key, out_index ? out_index : &dummy, topk, select,
                      arg, 1, NULL);
}
#endif
