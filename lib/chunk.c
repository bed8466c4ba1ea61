/* chunk.c - host data through a device algorithm: the input goes to the device
 * one chunk at a time (cltopk_chunk_elems), each chunk's best min(k, len) comes
 * back, and the chunks' answers are merged on the host in THE ORDER.  Every
 * device record's run_host is this loop around its device function.
 *
 * Streaming (CLTOPK_STREAM; the default on devices that are not CPUs): the
 * input goes in pieces of some 32 MiB through two pinned staging buffers and
 * two device inputs, the transfer of piece i + 1 on a second queue while piece
 * i is reduced, and each piece's answer is folded into the answer on the host
 * while later pieces move.  The fold is the merge of the chunk loop, done a
 * piece at a time rather than once at the end: it runs behind the transfers,
 * and its memory stays 3 k results whatever the number of pieces. */
#include "internal.h"

#include <stdio.h>
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
/* The answer so far of a chunked call: the best n (<= k) of the chunks folded
 * in, in THE ORDER; tk / ti the room of the next merge. */
typedef struct {
    const cltopk_request *rq;
    size_t k, n;
    char *keys, *tk;
    int64_t *idx, *ti;
} chunk_acc;

/* a chunk's best `got` (positions already global) into the answer */
static void acc_fold(chunk_acc *a, const char *pk, const int64_t *pi, size_t got)
{
    size_t kb = (size_t)a->rq->bytes;
    if (a->n == 0) {
        memcpy(a->keys, pk, got * kb);
        memcpy(a->idx, pi, got * 8);
        a->n = got;
        return;
    }
    size_t mn = a->n + got < a->k ? a->n + got : a->k;
    cltopk_merge_lists(a->rq, a->keys, a->idx, a->n, pk, pi, got, mn, a->tk, a->ti);
    char *sk = a->keys;
    int64_t *si = a->idx;
    a->keys = a->tk, a->idx = a->ti, a->tk = sk, a->ti = si;
    a->n = mn;
}

/* CLTOPK_STREAM: 0 the chunk loop, each chunk waiting for its transfer; 1
 * streaming through pinned staging buffers; 2 ("direct") streaming with the
 * transfers straight from the caller's memory (memory the caller pinned);
 * unset: streaming on devices that are not CPUs.  -1: an invalid value (the
 * detail set when report). */
static int stream_mode(cltopk_context *ctx, int report)
{
    const char *v = cltopk_env("CLTOPK_STREAM");
    if (!v)
        return (ctx->caps.type & CL_DEVICE_TYPE_CPU) ? 0 : 1;
    if (!strcmp(v, "0") || !strcmp(v, "1"))
        return v[0] - '0';
    if (!strcmp(v, "direct"))
        return 2;
    if (report)
        cltopk_fail(ctx, CLTOPK_ERR_UNSUPPORTED,
                "CLTOPK_STREAM=\"%s\": use 0 (the chunk loop), 1 (streaming through pinned "
                "staging buffers) or direct (streaming from the caller's memory)", v);
    return -1;
}

/* Elements of one streamed piece: 32 MiB of keys (a transfer of about 2 ms at
 * 16 GB/s, long beside a launch chain of some 100 us), or 64 k if more (a
 * piece's answer and its fold on the host stay small beside its transfer: on
 * the H200, 2^32 floats at k = 2^20 in pieces of 32 MiB took 3.6-5.3 s against
 * 0.39 s for the chunk loop), within one chunk (so that CLTOPK_MAX_CHUNK caps
 * it too) and at least k */
static size_t stream_piece(const cltopk_context *ctx, int bytes, size_t k)
{
    size_t piece = ((size_t)32 << 20) / (size_t)bytes, chunk = cltopk_chunk_elems(ctx, bytes);
    if (k <= SIZE_MAX / 64 && piece < 64 * k)
        piece = 64 * k;
    if (piece > chunk)
        piece = chunk;
    return piece < k ? k : piece;
}

/* Whether n elements of rq's keys stream (mode > 0) in pieces of *piece
 * (best k of each): more than one piece, and two of them within what one
 * chunk may hold on the device (the two device inputs) */
static int streams(const cltopk_context *ctx, const cltopk_request *rq, int mode, size_t k,
                   size_t *piece)
{
    *piece = stream_piece(ctx, rq->bytes, k);
    return mode > 0 && rq->n > *piece && *piece <= cltopk_chunk_room(ctx, rq->bytes) / 2;
}

size_t cltopk_host_input(cltopk_context *ctx, const cltopk_request *rq, size_t *host)
{
    size_t chunk = cltopk_chunk_elems(ctx, rq->bytes), piece, n, kb = (size_t)rq->bytes;
    int mode = stream_mode(ctx, 0), two = streams(ctx, rq, mode, rq->k, &piece);
    if (two)
        n = piece;
    else if (rq->n <= chunk)
        n = rq->n;
    else
        n = chunk < rq->k ? rq->k : chunk;
    *host = (two ? 2 : 1) * n * kb + rq->k * (kb + 8);
    return n;
}

size_t cltopk_staging_describe(cltopk_context *ctx, const cltopk_request *rq, char *buf,
                               size_t len)
{
    size_t k = rq->k, chunk = cltopk_chunk_elems(ctx, rq->bytes);
    const char *v = cltopk_env("CLTOPK_STREAM");
    int mode = stream_mode(ctx, 0);
    if (mode < 0)
        return (size_t)snprintf(buf, len, "host data on a device algorithm: CLTOPK_STREAM=\"%s\" "
                                "is invalid\n", v);
    size_t piece;
    int stream = streams(ctx, rq, mode, k, &piece);
    if (chunk < k)
        chunk = k;
    int w;
    if (stream)
        w = snprintf(buf, len, "host data on a device algorithm: streamed in %zu pieces of %zu elements, %s, each "
                     "piece's transfer beside the previous one's reduction (CLTOPK_STREAM=%s)\n",
                     (rq->n + piece - 1) / piece, piece,
                     mode == 2 ? "written from the caller's memory" : "through pinned staging",
                     v ? v : "unset");
    else if (rq->n > chunk)
        w = snprintf(buf, len, "host data on a device algorithm: %zu chunks of %zu elements, each transferred before "
                     "its reduction (CLTOPK_STREAM=%s)\n", (rq->n + chunk - 1) / chunk, chunk,
                     v ? v : "unset");
    else
        w = snprintf(buf, len, "host data on a device algorithm: one transfer, then the reduction\n");
    return w > 0 ? (size_t)w : 0;
}

/* The transfer queue and the two mapped staging buffers of `bytes` each
 * (also the index's streamed queries, lib/indexdev.c) */
int cltopk_stream_setup(cltopk_context *ctx, size_t bytes)
{
    cl_int err;
    if (!ctx->tqueue) {
        ctx->tqueue = clCreateCommandQueue(ctx->clctx, ctx->dev, 0, &err);
        if (!ctx->tqueue)
            return cltopk_clfail(ctx, err, "clCreateCommandQueue (the transfer queue)");
    }
    if (ctx->stage_size >= bytes)
        return CLTOPK_OK;
    cltopk_stage_free(ctx);
    for (int s = 0; s < 2; s++) {
        ctx->stage[s] = clCreateBuffer(ctx->clctx, CL_MEM_READ_ONLY | CL_MEM_ALLOC_HOST_PTR, bytes,
                                       NULL, &err);
        if (!ctx->stage[s]) {
            cltopk_stage_free(ctx);
            return cltopk_clfail(ctx, err, "clCreateBuffer (pinned staging)");
        }
        ctx->stage_ptr[s] = clEnqueueMapBuffer(ctx->tqueue, ctx->stage[s], CL_TRUE, CL_MAP_WRITE,
                                               0, bytes, 0, NULL, NULL, &err);
        if (!ctx->stage_ptr[s]) {
            cltopk_stage_free(ctx);
            return cltopk_clfail(ctx, err, "clEnqueueMapBuffer (pinned staging)");
        }
    }
    ctx->stage_size = bytes;
    return CLTOPK_OK;
}

void cltopk_stage_free(cltopk_context *ctx)
{
    for (int s = 0; s < 2; s++) {
        if (ctx->stage_ptr[s])
            clEnqueueUnmapMemObject(ctx->tqueue, ctx->stage[s], ctx->stage_ptr[s], 0, NULL, NULL);
        ctx->stage_ptr[s] = NULL;
    }
    if (ctx->tqueue)
        clFinish(ctx->tqueue);
    for (int s = 0; s < 2; s++) {
        if (ctx->stage[s])
            clReleaseMemObject(ctx->stage[s]);
        ctx->stage[s] = NULL;
    }
    ctx->stage_size = 0;
}

/* copy with the host's threads (one core copies some 10 GB/s: less than a
 * PCIe 5 transfer), in blocks of 1 MiB (32 of a 32 MiB piece) */
static void copy_wide(char *dst, const char *src, size_t bytes)
{
    const size_t block = (size_t)1 << 20;
    long nb = (long)((bytes + block - 1) / block);
#ifdef _OPENMP
#pragma omp parallel for schedule(static) if (nb > 2)
#endif
    for (long b = 0; b < nb; b++) {
        size_t lo = (size_t)b * block, len = bytes - lo < block ? bytes - lo : block;
        memcpy(dst + lo, src + lo, len);
    }
}

/* wait for and release *ev (if any); its error into *err (if any) unless one
 * is there */
void cltopk_settle(cl_event *ev, cl_int *err)
{
    if (!*ev)
        return;
    cl_int w = clWaitForEvents(1, ev);
    if (err && *err == CL_SUCCESS)
        *err = w;
    clReleaseEvent(*ev);
    *ev = NULL;
}

/* The streaming loop: piece i is copied to pinned staging slot i % 2 (unless
 * direct), written to device input i % 2 on the transfer queue, reduced on the
 * context's queue, and its best min(k, len) read back, while the host copies
 * piece i + 1 and folds piece i - 1's answer into a.  Ordering: the write of
 * piece i waits for piece i - 2's reduction and read (done[s], which also
 * frees the output buffers for the next reduction: it becomes the context's
 * last event); the host copy into slot s waits for piece i - 2's write. */
static int stream_run(cltopk_context *ctx, const cltopk_request *rq, cltopk_devrun devrun,
                      void *arg, int index, int check, int direct, size_t piece, chunk_acc *a,
                      int *stop)
{
    size_t kb = (size_t)rq->bytes, k = a->k;
    size_t nparts = (rq->n + piece - 1) / piece;
    cl_mem in[2], ok, oi = NULL;
    int st;
    if ((st = cltopk_scratch(ctx, SCR_INPUT, piece * kb, &in[0])) != CLTOPK_OK ||
        (st = cltopk_scratch(ctx, SCR_STREAM_IN, piece * kb, &in[1])) != CLTOPK_OK ||
        (st = cltopk_scratch(ctx, SCR_OUT_KEYS, k * kb, &ok)) != CLTOPK_OK ||
        (index && (st = cltopk_scratch(ctx, SCR_OUT_INDEX, k * 8, &oi)) != CLTOPK_OK) ||
        (st = cltopk_stream_setup(ctx, direct ? 0 : piece * kb)) != CLTOPK_OK)
        return st;
    char *pk[2] = {malloc(k * kb), malloc(k * kb)};
    int64_t *pi[2] = {calloc(k, 8), calloc(k, 8)};
    cl_event wr[2] = {NULL, NULL}, done[2] = {NULL, NULL};
    size_t got[2] = {0, 0};
    cl_int err = CL_SUCCESS;
    if (!pk[0] || !pk[1] || !pi[0] || !pi[1]) {
        st = cltopk_fail(ctx, CLTOPK_ERR_NO_MEMORY, "out of host memory for %zu results", k);
        goto out;
    }
    for (size_t i = 0; i <= nparts && !*stop; i++) {
        int s = (int)(i & 1);
        if (i < nparts) {
            size_t lo = i * piece, len = rq->n - lo < piece ? rq->n - lo : piece;
            const char *src = (const char *)rq->keys + lo * kb;
            cltopk_settle(&wr[s], &err);
            if (err != CL_SUCCESS) {
                st = cltopk_clfail(ctx, err, "the transfer of a streamed piece");
                break;
            }
            if (!direct) {
                copy_wide(ctx->stage_ptr[s], src, len * kb);
                src = ctx->stage_ptr[s];
            }
            err = clEnqueueWriteBuffer(ctx->tqueue, in[s], CL_FALSE, 0, len * kb, src,
                                       done[s] ? 1 : 0, done[s] ? &done[s] : NULL, &wr[s]);
            if (err != CL_SUCCESS) {
                st = cltopk_clfail(ctx, err, "clEnqueueWriteBuffer (a streamed piece)");
                break;
            }
            /* the transfer queue starts it now, not at the next wait */
            clFlush(ctx->tqueue);
            got[s] = k < len ? k : len;
            if ((st = devrun(ctx, rq, arg, in[s], 0, len, got[s], ok, oi, index ? 3u : 1u, lo, 1,
                             &wr[s])) != CLTOPK_OK)
                break;
            cl_event rd[2], *own;
            cl_uint nown = cltopk_after_own(ctx, &own), nrd = 0;
            err = clEnqueueReadBuffer(ctx->queue, ok, CL_FALSE, 0, got[s] * kb, pk[s], nown, own,
                                      &rd[nrd]);
            if (err == CL_SUCCESS)
                nrd++;
            if (err == CL_SUCCESS && index &&
                (err = clEnqueueReadBuffer(ctx->queue, oi, CL_FALSE, 0, got[s] * 8, pi[s], nown,
                                           own, &rd[nrd])) == CL_SUCCESS)
                nrd++;
            if (done[s])
                clReleaseEvent(done[s]);
            done[s] = NULL;
            cl_int merr = nrd ? clEnqueueMarkerWithWaitList(ctx->queue, nrd, rd, &done[s])
                              : CL_SUCCESS;
            for (cl_uint e = 0; e < nrd; e++)
                clReleaseEvent(rd[e]);
            if (err == CL_SUCCESS)
                err = merr;
            if (err != CL_SUCCESS) {
                st = cltopk_clfail(ctx, err, "reading a streamed piece's results");
                break;
            }
            clRetainEvent(done[s]);
            cltopk_own_event(ctx, done[s]);
            clFlush(ctx->queue);
        }
        if (i == 0)
            continue;
        /* the previous piece's answer, folded while this one moves */
        int p = s ^ 1;
        cl_event pend = done[p];
        err = clWaitForEvents(1, &pend);
        if (err != CL_SUCCESS) {
            st = cltopk_clfail(ctx, err, "reading the results back (a kernel may have failed)");
            break;
        }
        for (size_t j = 0; check && j < got[p] && !*stop; j++)
            *stop = cltopk_ambiguous_float(pk[p], j, rq->bytes);
        if (!*stop)
            acc_fold(a, pk[p], pi[p], got[p]);
    }
out:
    err = CL_SUCCESS;
    for (int s = 0; s < 2; s++) {
        cltopk_settle(&wr[s], &err);
        cltopk_settle(&done[s], &err);
    }
    if (st == CLTOPK_OK && err != CL_SUCCESS)
        st = cltopk_clfail(ctx, err, "a streamed piece");
    free(pk[0]), free(pk[1]), free(pi[0]), free(pi[1]);
    return st;
}

/* The chunk loop: each chunk written, reduced and its answer read back
 * before the next one is written. */
static int chunk_run(cltopk_context *ctx, const cltopk_request *rq, int topk, size_t rank,
                     cltopk_devrun devrun, cltopk_devrun select, void *arg, int index, int check,
                     size_t chunk, chunk_acc *a, int *stop)
{
    size_t kb = (size_t)rq->bytes, k = a->k;
    size_t first = rq->n < chunk ? rq->n : chunk;
    cl_mem in, ok, oi = NULL;
    int st;
    if ((st = cltopk_scratch(ctx, SCR_INPUT, first * kb, &in)) != CLTOPK_OK ||
        (st = cltopk_scratch(ctx, SCR_OUT_KEYS, k * kb, &ok)) != CLTOPK_OK ||
        (index && (st = cltopk_scratch(ctx, SCR_OUT_INDEX, k * 8, &oi)) != CLTOPK_OK))
        return st;
    char *part_k = malloc(k * kb);
    int64_t *part_i = calloc(k, 8);
    if (!part_k || !part_i) {
        free(part_k), free(part_i);
        return cltopk_fail(ctx, CLTOPK_ERR_NO_MEMORY, "out of host memory for %zu results", k);
    }
    for (size_t lo = 0; lo < rq->n && st == CLTOPK_OK && !*stop; lo += chunk) {
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
        if (st != CLTOPK_OK) {
            /* nothing of the context's waits for the write (a kernel that
             * failed to build never launched): it reads the caller's keys, so
             * it must be over before the call returns */
            cltopk_settle(&wr, NULL);
            break;
        }
        clReleaseEvent(wr);
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
        for (size_t j = 0; check && j < got && !*stop; j++)
            *stop = cltopk_ambiguous_float(part_k, j, rq->bytes);
        if (!*stop)
            acc_fold(a, part_k, part_i, got);
    }
    free(part_k), free(part_i);
    return st;
}

/* The host loop of every device algorithm: topk, or the element at `rank`
 * (sel_key / sel_index; one chunk selects on the device by `select`, several
 * merge their best rank + 1).  index and ambiguous as cltopk_chunked_topk. */
static int chunk_loop(cltopk_context *ctx, const cltopk_request *rq, int topk, size_t rank,
                      void *sel_key, int64_t *sel_index, cltopk_devrun devrun,
                      cltopk_devrun select, void *arg, int index, int *ambiguous)
{
    size_t kb = (size_t)rq->bytes, k = topk ? rq->k : 1;
    size_t chunk = cltopk_chunk_elems(ctx, rq->bytes);
    int mode = stream_mode(ctx, 1);
    if (mode < 0)
        return CLTOPK_ERR_UNSUPPORTED;
    size_t piece;
    int stream = streams(ctx, rq, mode, topk ? k : rank + 1, &piece);
    if (!topk && (rq->n > chunk || stream))
        topk = 1, k = rank + 1; /* several chunks: the best rank + 1 of each, merged */
    if (chunk < k)
        chunk = k; /* every chunk but the last must hold k elements */
    if (ambiguous)
        *ambiguous = 0;
    int check = !index && ambiguous && rq->kind == KIND_FLOAT;
    chunk_acc a = {rq, k, 0, malloc(k * kb), malloc(k * kb), calloc(k, 8), calloc(k, 8)};
    int st, stop = 0;
    if (!a.keys || !a.tk || !a.idx || !a.ti)
        st = cltopk_fail(ctx, CLTOPK_ERR_NO_MEMORY, "out of host memory for %zu results", k);
    else if (stream)
        st = stream_run(ctx, rq, devrun, arg, index, check, mode == 2, piece, &a, &stop);
    else
        st = chunk_run(ctx, rq, topk, rank, devrun, select, arg, index, check, chunk, &a, &stop);
    if (st == CLTOPK_OK)
        st = cltopk_finish_own(ctx);
    else
        cltopk_finish_own(ctx);
    if (st == CLTOPK_OK && !stop && a.n != (topk ? k : 1))
        st = cltopk_fail(ctx, CLTOPK_ERR_INTERNAL, "chunked top-k: %zu results for k = %zu",
                         a.n, k);
    if (st == CLTOPK_OK && !stop) {
        if (sel_key || sel_index) {
            size_t at = topk ? rank : 0;
            if (sel_key)
                memcpy(sel_key, a.keys + at * kb, kb);
            if (sel_index)
                *sel_index = a.idx[at];
        } else {
            if (rq->out_keys)
                memcpy(rq->out_keys, a.keys, k * kb);
            if (rq->out_index)
                memcpy(rq->out_index, a.idx, k * 8);
        }
    }
    if (ambiguous)
        *ambiguous = stop;
    free(a.keys), free(a.tk), free(a.idx), free(a.ti);
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
