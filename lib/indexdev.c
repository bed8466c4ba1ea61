/* indexdev.c - the early-stopping index on the OpenCL device (cl/index.cl).
 *
 * The layout's four arrays live in device buffers for the index's life.  The
 * query's buffers (cl/index.cl's qb: the attributes, weights, control word
 * and partitions' state; the partitions' and groups' lists; the merge's
 * lists; the k best keys; the map of the blocks left) are kept in
 * cltopk_ix_dev from the first query to cltopk_index_dev_release, made anew
 * only when a query needs more (a larger k), so that a query makes no
 * buffer.  A query with k sampled tuples from the host (q->bslots:
 * lib/index.c's foresee), whose least score is its bound, is read in one
 * launch (ixd_direct: index_direct and a read, or where its last group
 * did not merge the candidates, two merges and a second read); where its
 * candidates overflow, or without such a bound, a query:
 *   1. writes qb (one copy, not waited for);
 *   2. enqueues every round at once: index_scan, a work-group a partition,
 *      probe * grow^r blocks each in round r, all sharing one bound (raised
 *      by atomic_max: the best k-th score of any partition so far), then
 *      index_decide, one work-group, which ends the reading (every partition
 *      finished), lets it go on, or switches to full evaluation (the switch
 *      rule of cpu/indexcpu.c) and maps the blocks not read; rounds after
 *      the end do nothing; as many rounds as read the longest partition
 *      (CLTOPK_INDEX=sync: the phase read back every sync rounds, and no
 *      more rounds once it is not 0; first, the default: read back after the
 *      first round, and where that round finished the reading, none of step
 *      3's launches either, and where the partitions' lists are few keys
 *      index_decide has merged them, so that the read brings the answer: a
 *      correlated query's 16 launches and a read became 2 and a read);
 *   3. the full evaluation of the blocks a switch left (none without one):
 *      CLTOPK_INDEX=full=filter (the default): index_merge of the
 *      partitions' lists, groups of q->fan lists, each group's k-th raising
 *      the bound (k scanned tuples score at least that); index_filter, one
 *      read of the blocks' m columns keeping every tuple at or above the
 *      bound in a buffer of candidates (at most q->cands, else n / 16 within
 *      2^16 .. 2^24); index_full gated on their overflow; index_merge of the
 *      candidates (gated on no overflow) into the groups' lists.  full=old:
 *      index_full alone, groups of consecutive blocks (4 a compute unit on
 *      GPUs, 2 else).  A plain full evaluation (cltopk_index_full_topk) with
 *      the filter first reads one round (the blocks for 4 k tuples and one
 *      more) of every partition with no stop and switches: the
 *      bound, then the same; with full=old, index_full over every block;
 *   4. index_merge: groups of q->fan lists each their k best, then one group
 *      those (one level where the lists are at most fan), into qb after the
 *      state (with the filter: the groups' lists by groups of fan after the
 *      partitions' groups' lists of step 3, then one group all of those);
 * and waits for its one read: the state (the statistics) and the k best
 * keys (decoded here).  No host round trip between the launches.
 * An index kept in host memory (it did not fit, or CLTOPK_INDEX=resident=0)
 * is streamed: before each round the blocks it reads (the round's blocks of
 * each partition still reading, fewer where a staging buffer would
 * overflow) are copied to a staging buffer, index_scan finding them through
 * a map of (first slot, first block, count) a partition, and the state is
 * read back after index_decide; after a switch, the blocks left go through
 * the staging a chunk at a time, index_full's groups going on from their
 * lists, or index_filter gathering candidates over the chunks (their count
 * then read back: on an overflow the chunks go through index_full again).
 * The copies (ixd_stage) overlap: the host gathers a piece of blocks into
 * one of the context's two pinned buffers while the other's piece moves to
 * the device on the context's transfer queue, and the chunks of the full
 * evaluation alternate between two staging buffers, so that chunk i + 1
 * moves while the kernels read chunk i; events order it (no blocking
 * write).  The rounds still wait for their state: the next round's blocks
 * depend on it.
 * Work-groups of 256 work-items on GPUs, 64 elsewhere; SN local slots of 8
 * bytes (ixd_sn: 512 up to k = 256, 4096 above): k up to 2048 where the
 * device has the local memory (cltopk_index_dev_kmax). */
#include "internal.h"

#if HAVE_OPENCL

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define IXD_KMAX 2048

static unsigned ixd_wg(const cltopk_context *ctx)
{
    unsigned wg = (ctx->caps.type & CL_DEVICE_TYPE_GPU) ? 256 : 64;
    size_t maxwg = cltopk_pow2_le(ctx->caps.max_wg ? ctx->caps.max_wg : 1);
    while (wg > maxwg)
        wg >>= 1;
    return wg;
}

/* local slots: a power of two >= max(2 k, k + wg), and at least 512 (then
 * 4096 where k <= 2048 and wg <= 2048): few programs serve every k (each is
 * a build: some 15 s on POCL), at the price of larger sorts for small k */
static size_t ixd_sn(size_t k, unsigned wg)
{
    size_t a = cltopk_pow2_ge(2 * k), b = cltopk_pow2_ge(k + wg);
    size_t sn = a > b ? a : b;
    return sn <= 512 ? 512 : sn <= 4096 ? 4096 : sn;
}

/* slots a work-item of index_filter scores at once: 8 loads of each
 * attribute in flight */
#define IXD_TPI 8

/* the most keys of the partitions' lists (P k) that index_decide merges
 * itself once every partition finished, one group loading IXD_UF keys a
 * work-item at a time (CLTOPK_INDEX=first then reads the answer with the
 * state after the first round): on the H200 two merge launches of 972 lists
 * of 4 keys took 16-20 us of the device and some 10 us of the host */
#define IXD_SPEC 16384

/* whether index_decide merges the partitions' lists of a query that is not
 * a plain full evaluation (the rounds of one never finish) */
static int ixd_decide_merges(const cltopk_ix_layout *L, size_t k, int full)
{
    return !full && L->P * k <= IXD_SPEC;
}

/* the build options of cl/index.cl for work-groups of wg and sn local slots */
static void ixd_options(char *buf, size_t len, unsigned wg, size_t sn)
{
    snprintf(buf, len, "-D KEY_BITS=32 -D KEY_KIND=2 -D WG=%u -D SN=%zu -D TPI=%d", wg, sn,
             IXD_TPI);
}

size_t cltopk_index_dev_kmax(cltopk_context *ctx)
{
    if (!ctx->is_cl || !ctx->caps.int64)
        return 0;
    unsigned wg = ixd_wg(ctx);
    if (wg < 16)
        return 0;
    size_t k = IXD_KMAX;
    while (k > 0 && ixd_sn(k, wg) * 8 + 64 > ctx->caps.local_mem)
        k /= 2;
    return k;
}

static cl_mem ixd_buffer(cltopk_context *ctx, cl_mem_flags flags, size_t bytes, const void *host,
                         const char *what, int *st)
{
    cl_int err;
    if (*st != CLTOPK_OK)
        return NULL;
    cl_mem m = clCreateBuffer(ctx->clctx, flags | (host ? CL_MEM_COPY_HOST_PTR : 0),
                              bytes ? bytes : 8, (void *)host, &err);
    if (!m) {
        char msg[96];
        snprintf(msg, sizeof msg, "clCreateBuffer (%s)", what);
        *st = cltopk_clfail(ctx, err, msg);
    }
    return m;
}

int cltopk_index_dev_upload(cltopk_context *ctx, const cltopk_ix_layout *L, cltopk_ix_dev *dev)
{
    const size_t nb = L->nblocks, d = L->d, B = L->B;
    const size_t bytes = nb * d * B * 4;
    memset(dev, 0, sizeof *dev);
    if (bytes > ctx->caps.max_alloc || bytes + nb * B * 4 > ctx->caps.global_mem / 2)
        return cltopk_fail(ctx, CLTOPK_ERR_DEVICE_MEMORY, "the index (%zu bytes) does not fit "
                           "%s (one allocation of at most %llu bytes, half of its memory)",
                           bytes, ctx->name, (unsigned long long)ctx->caps.max_alloc);
    int st = CLTOPK_OK;
    dev->data = ixd_buffer(ctx, CL_MEM_READ_ONLY, bytes, L->data, "the index's attributes", &st);
    dev->ids = ixd_buffer(ctx, CL_MEM_READ_ONLY, nb * B * 4, L->ids, "the index's tuples", &st);
    dev->thr = ixd_buffer(ctx, CL_MEM_READ_ONLY, nb * d * 4, L->thr, "the thresholds", &st);
    dev->pstart = ixd_buffer(ctx, CL_MEM_READ_ONLY, (L->P + 1) * 4, L->pstart,
                             "the partitions", &st);
    if (st != CLTOPK_OK)
        cltopk_index_dev_release(dev);
    return st;
}

/* hq given back where it is pinned (mapped from hqm): then NULL */
static void ixd_unpin(cltopk_ix_dev *dev)
{
    if (!dev->hqm)
        return;
    clEnqueueUnmapMemObject(dev->hqm_q, dev->hqm, dev->hq, 0, NULL, NULL);
    clFinish(dev->hqm_q);
    clReleaseMemObject(dev->hqm);
    clReleaseCommandQueue(dev->hqm_q);
    dev->hqm = NULL;
    dev->hqm_q = NULL;
    dev->hq = NULL;
    dev->hq_n = 0;
}

void cltopk_index_dev_release(cltopk_ix_dev *dev)
{
    cl_mem *m[] = {&dev->data,     &dev->ids,      &dev->thr,     &dev->pstart,
                   &dev->qb,       &dev->lists,    &dev->part,    &dev->todo,
                   &dev->wmap,     &dev->cand,     &dev->xs,      &dev->xi,
                   &dev->sdata[0], &dev->sdata[1],
                   &dev->sids[0],  &dev->sids[1],  &dev->sthr[0], &dev->sthr[1]};
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++) {
        if (*m[i])
            clReleaseMemObject(*m[i]);
        *m[i] = NULL;
    }
    ixd_unpin(dev);
    void *h[] = {dev->hq, dev->hwmap, dev->htodo};
    for (size_t i = 0; i < sizeof h / sizeof h[0]; i++)
        free(h[i]);
    memset(dev, 0, sizeof *dev);
}

/* Reads and writes of a query's small arrays go on the context's queue.  On
 * an in-order queue they name no event to wait for and make none (as
 * cltopk_launch's launches): the queue orders them, and a marker and an event
 * a call cost the one-launch query some 3 us of host time (bench/RESULTS.md,
 * "the index's host calls").  Elsewhere, and with CLTOPK_INDEX=pin=0, they
 * wait for the context's work, as every call did before. */
static cl_uint ixd_before(cltopk_context *ctx, const cltopk_ix_dev *dev, cl_event **own)
{
    if (ctx->inorder && dev->quiet) {
        *own = NULL;
        return 0;
    }
    return cltopk_after_own(ctx, own);
}

/* a blocking read of bytes of m from byte at, after the context's work */
static int ixd_read(cltopk_context *ctx, const cltopk_ix_dev *dev, cl_mem m, size_t at,
                    size_t bytes, void *host, const char *what)
{
    if (!bytes)
        return CLTOPK_OK;
    cl_event *own;
    cl_uint nw = ixd_before(ctx, dev, &own);
    cl_int err = clEnqueueReadBuffer(ctx->queue, m, CL_TRUE, at, bytes, host, nw,
                                     nw ? own : NULL, NULL);
    if (err != CL_SUCCESS) {
        char msg[96];
        snprintf(msg, sizeof msg, "clEnqueueReadBuffer (%s)", what);
        return cltopk_clfail(ctx, err, msg);
    }
    return CLTOPK_OK;
}

int cltopk_index_dev_read(cltopk_context *ctx, const cltopk_ix_layout *L, const cltopk_ix_dev *dev,
                          float *data, uint32_t *ids, float *thr)
{
    const size_t nb = L->nblocks, d = L->d, B = L->B;
    int st = ixd_read(ctx, dev, dev->data, 0, nb * d * B * 4, data, "the index's attributes");
    if (st == CLTOPK_OK)
        st = ixd_read(ctx, dev, dev->ids, 0, nb * B * 4, ids, "the index's tuples");
    if (st == CLTOPK_OK)
        st = ixd_read(ctx, dev, dev->thr, 0, nb * d * 4, thr, "the thresholds");
    return st;
}

/* a write of a host array to m after the context's work, which then follows
 * it; not waited for: the host array stays untouched until a later blocking
 * read */
static int ixd_write_at(cltopk_context *ctx, const cltopk_ix_dev *dev, cl_mem m, size_t at,
                        size_t bytes, const void *host, const char *what)
{
    cl_event *own, ev = NULL;
    const int quiet = dev->quiet && cltopk_quiet(ctx);
    cl_uint nw = ixd_before(ctx, dev, &own);
    cl_int err = clEnqueueWriteBuffer(ctx->queue, m, CL_FALSE, at, bytes, host, nw,
                                      nw ? own : NULL, quiet ? NULL : &ev);
    if (err != CL_SUCCESS) {
        char msg[96];
        snprintf(msg, sizeof msg, "clEnqueueWriteBuffer (%s)", what);
        return cltopk_clfail(ctx, err, msg);
    }
    if (quiet)
        ctx->pending = 1; /* cltopk_after_own makes the event where one is needed */
    else
        cltopk_own_event(ctx, ev);
    return CLTOPK_OK;
}

static int ixd_write(cltopk_context *ctx, const cltopk_ix_dev *dev, cl_mem m, size_t bytes,
                     const void *host, const char *what)
{
    return ixd_write_at(ctx, dev, m, 0, bytes, host, what);
}

/* a kept device buffer of at least bytes: *m as it is where *have is enough,
 * else made anew (its contents are not kept) */
static int ixd_keep(cltopk_context *ctx, cl_mem *m, size_t *have, size_t bytes, const char *what)
{
    if (*m && *have >= bytes)
        return CLTOPK_OK;
    if (*m)
        clReleaseMemObject(*m);
    *m = NULL;
    *have = 0;
    int st = CLTOPK_OK;
    *m = ixd_buffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, what, &st);
    if (st == CLTOPK_OK)
        *have = bytes;
    return st;
}

/* a kept host array of at least bytes, as ixd_keep */
static int ixd_keep_host(cltopk_context *ctx, void *pp, size_t *have, size_t bytes)
{
    void **p = pp;
    if (*p && *have >= bytes)
        return CLTOPK_OK;
    free(*p);
    *have = 0;
    if (!(*p = malloc(bytes ? bytes : 8)))
        return cltopk_fail(ctx, CLTOPK_ERR_NO_MEMORY, "the index query: out of host memory");
    *have = bytes;
    return CLTOPK_OK;
}

/* hq, the query's host array, of at least bytes: pinned where the device
 * takes a mapped buffer (a copy from or to pinned memory saves the driver a
 * staging copy; with the copies' events gone, 15-25 us of the one-launch
 * query on the H200), else from malloc (pin 0, CLTOPK_INDEX=pin=0); its
 * contents are not kept when it grows */
static int ixd_keep_hq(cltopk_context *ctx, cltopk_ix_dev *dev, size_t bytes, int pin)
{
    if (dev->hq && dev->hq_n >= bytes)
        return CLTOPK_OK;
    ixd_unpin(dev);
    if (pin) {
        cl_int err;
        cl_mem m = clCreateBuffer(ctx->clctx, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes,
                                  NULL, &err);
        void *p = m ? clEnqueueMapBuffer(ctx->queue, m, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0,
                                         bytes, 0, NULL, NULL, &err)
                    : NULL;
        if (p && clRetainCommandQueue(ctx->queue) == CL_SUCCESS) {
            free(dev->hq);
            dev->hq = p;
            dev->hq_n = bytes;
            dev->hqm = m;
            dev->hqm_q = ctx->queue;
            return CLTOPK_OK;
        }
        if (p) {
            clEnqueueUnmapMemObject(ctx->queue, m, p, 0, NULL, NULL);
            clFinish(ctx->queue);
        }
        if (m)
            clReleaseMemObject(m); /* no pinned memory: malloc's serves */
    }
    return ixd_keep_host(ctx, &dev->hq, &dev->hq_n, bytes);
}

/* The copies of a streamed query.  A chunk of blocks (a round's, or one of
 * the full evaluation) goes to device staging buffer `buf` (sdata, sids,
 * sthr) in pieces of bpp blocks: each piece gathered by the host into one of
 * the context's two pinned buffers (cltopk_stream_setup; the attributes,
 * tuple numbers and thresholds of bpp blocks, one after the other), then
 * written from it on the context's transfer queue while the host gathers
 * the next piece into the other.  Events order it: a gather waits for the
 * last write from its pinned buffer (wr), a staging buffer's first write
 * for the end of the launches that last read it (used), and the launches
 * for the chunk's last write (ready; the transfer queue runs in order).  So
 * with two staging buffers, chunk i + 1 is gathered and moves while the
 * kernels read chunk i, and no call blocks on a copy. */
typedef struct {
    size_t bpp;       /* blocks a pinned piece */
    int nbuf;         /* staging buffers: 2, or 1 where one holds every block */
    int buf;          /* the one the next launches read (ixd_stage sets it) */
    int pin;          /* the pinned buffer of the next piece */
    cl_event wr[2];   /* the last write from each pinned buffer */
    cl_event used[2]; /* the end of the launches that last read each one */
    cl_event ready;   /* the chunk's last write (one of wr, not owned), or NULL */
} ixd_stream;

/* the pinned piece's bytes a block: its attributes, tuple numbers, threshold */
static size_t ixd_block_bytes(const cltopk_ix_layout *L)
{
    return L->d * L->B * 4 + L->B * 4 + L->d * 4;
}

/* copy blocks list[0 .. nl) of the host layout to slots 0 .. nl-1 of
 * staging buffer buf, as above */
static int ixd_stage(cltopk_context *ctx, const cltopk_ix_layout *L, cltopk_ix_dev *dev,
                     ixd_stream *sp, int buf, const uint32_t *list, size_t nl)
{
    const size_t d = L->d, B = L->B, db = d * B * 4, ib = B * 4, tb = d * 4, bpp = sp->bpp;
    sp->buf = buf;
    sp->ready = NULL;
    for (size_t x0 = 0; x0 < nl; x0 += bpp) {
        const size_t cnt = nl - x0 < bpp ? nl - x0 : bpp;
        const int p = sp->pin;
        sp->pin ^= 1;
        cl_int err = CL_SUCCESS;
        cltopk_settle(&sp->wr[p], &err);
        if (err != CL_SUCCESS)
            return cltopk_clfail(ctx, err, "clWaitForEvents (a copy of index blocks)");
        char *h = ctx->stage_ptr[p];
        float *hd = (float *)h, *ht = (float *)(h + bpp * (db + ib));
        uint32_t *hi = (uint32_t *)(h + bpp * db);
        const long nc = (long)cnt;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) if (cnt * (db + ib + tb) >= ((size_t)4 << 20))
#endif
        for (long x = 0; x < nc; x++) {
            const size_t g = list[x0 + (size_t)x];
            memcpy(hd + (size_t)x * d * B, L->data + g * d * B, db);
            memcpy(hi + (size_t)x * B, L->ids + g * B, ib);
            memcpy(ht + (size_t)x * d, L->thr + g * d, tb);
        }
        /* the buffer's first write after the launches that last read it; the
         * piece's last write (the queue runs in order) frees the buffer */
        const cl_event *after = x0 == 0 && sp->used[buf] ? &sp->used[buf] : NULL;
        const char *what = "the index blocks' attributes";
        err = clEnqueueWriteBuffer(ctx->tqueue, dev->sdata[buf], CL_FALSE, x0 * db, cnt * db,
                                   hd, after ? 1 : 0, after, NULL);
        if (err == CL_SUCCESS) {
            what = "the index blocks' tuple numbers";
            err = clEnqueueWriteBuffer(ctx->tqueue, dev->sids[buf], CL_FALSE, x0 * ib,
                                       cnt * ib, hi, 0, NULL, NULL);
        }
        if (err == CL_SUCCESS) {
            what = "the index blocks' thresholds";
            err = clEnqueueWriteBuffer(ctx->tqueue, dev->sthr[buf], CL_FALSE, x0 * tb,
                                       cnt * tb, ht, 0, NULL, &sp->wr[p]);
        }
        char msg[96];
        if (err != CL_SUCCESS) {
            /* none of the piece's writes may outlive the call */
            clFinish(ctx->tqueue);
            snprintf(msg, sizeof msg, "clEnqueueWriteBuffer (%s, staged)", what);
            return cltopk_clfail(ctx, err, msg);
        }
        /* the transfer queue starts it now, not at the next wait */
        if ((err = clFlush(ctx->tqueue)) != CL_SUCCESS)
            return cltopk_clfail(ctx, err, "clFlush (the transfer queue)");
        sp->ready = sp->wr[p];
    }
    return CLTOPK_OK;
}

/* after the launches that read staging buffer sp->buf: their end, which that
 * buffer's next copy waits for; the context's queue flushed, so that the
 * transfer queue never waits on work not submitted */
static int ixd_used(cltopk_context *ctx, ixd_stream *sp)
{
    cl_event *own;
    const int s = sp->buf;
    if (sp->used[s])
        clReleaseEvent(sp->used[s]);
    sp->used[s] = NULL;
    if (cltopk_after_own(ctx, &own)) {
        clRetainEvent(*own);
        sp->used[s] = *own;
    }
    cl_int err = clFlush(ctx->queue);
    return err == CL_SUCCESS ? CLTOPK_OK
                             : cltopk_clfail(ctx, err, "clFlush (the index query's launches)");
}

/* the end of a streamed query: every copy and launch it waited on done and
 * released (the pinned buffers free for the context's next user); st, or
 * the first error of those waits */
static int ixd_stream_end(cltopk_context *ctx, ixd_stream *sp, int st)
{
    cl_int err = CL_SUCCESS;
    for (int s = 0; s < 2; s++) {
        cltopk_settle(&sp->wr[s], &err);
        cltopk_settle(&sp->used[s], &err);
    }
    sp->ready = NULL;
    if (st == CLTOPK_OK && err != CL_SUCCESS)
        st = cltopk_clfail(ctx, err, "clWaitForEvents (the index query's copies)");
    return st;
}

/* The query buffer's layout (cl/index.cl, "The query's buffer qb"): the
 * keys from uint ixd_keyoff(P) */
#define IXQ_W 64
#define IXQ_CTL 128
#define IXQ_STATE 132
#define IX_ST 7

static size_t ixd_keyoff(size_t P)
{
    return (IXQ_STATE + IX_ST * P + 1) & ~(size_t)1;
}

/* the kept buffers of a query of k on P partitions, nlists lists, merge
 * work-groups of ng lists (above one: a second merge level), room for ncand
 * candidates (index_filter; 0: none); streamed, staging buffers of cap blocks
 * (the second where one does not hold every block) and the context's pinned
 * buffers for pieces of bpp blocks; hq pinned where pin (ixd_keep_hq) */
static int ixd_prepare(cltopk_context *ctx, const cltopk_ix_layout *L, cltopk_ix_dev *dev,
                       size_t K, size_t nlists, size_t ng, size_t cap, size_t bpp,
                       size_t ncand, int pin)
{
    const size_t P = L->P, nq = ixd_keyoff(P) + 2 * K;
    int st = ixd_keep(ctx, &dev->qb, &dev->qb_n, nq * 4, "the query's state");
    if (st == CLTOPK_OK)
        st = ixd_keep(ctx, &dev->lists, &dev->lists_n, nlists * K * 8, "the partitions' lists");
    if (st == CLTOPK_OK)
        st = ixd_keep(ctx, &dev->part, &dev->part_n, (ng > 1 ? ng + (ng + 1) / 2 : 1) * K * 8,
                      "the merge's lists");
    if (st == CLTOPK_OK)
        st = ixd_keep(ctx, &dev->todo, &dev->todo_n, (2 * P + 2) * 4, "the block map");
    if (st == CLTOPK_OK && !dev->pstart)
        dev->pstart = ixd_buffer(ctx, CL_MEM_READ_ONLY, (P + 1) * 4, L->pstart,
                                 "the partitions", &st);
    if (st == CLTOPK_OK && ncand)
        st = ixd_keep(ctx, &dev->cand, &dev->cand_n, ncand * 8, "the candidates");
    if (st == CLTOPK_OK)
        st = ixd_keep_hq(ctx, dev, nq * 4, pin);
    if (st != CLTOPK_OK || dev->data)
        return st;
    /* streamed: the staging buffers, the pinned pieces, the map of a
     * round's slots */
    const size_t d = L->d, B = L->B;
    for (int s = 0; s < (L->nblocks > cap ? 2 : 1) && st == CLTOPK_OK; s++) {
        st = ixd_keep(ctx, &dev->sdata[s], &dev->sdata_n[s], cap * d * B * 4, "staged blocks");
        if (st == CLTOPK_OK)
            st = ixd_keep(ctx, &dev->sids[s], &dev->sids_n[s], cap * B * 4, "staged tuples");
        if (st == CLTOPK_OK)
            st = ixd_keep(ctx, &dev->sthr[s], &dev->sthr_n[s], cap * d * 4,
                          "staged thresholds");
    }
    if (st == CLTOPK_OK)
        st = cltopk_stream_setup(ctx, bpp * ixd_block_bytes(L));
    if (st == CLTOPK_OK)
        st = ixd_keep(ctx, &dev->wmap, &dev->wmap_n, (3 * P + 1) * 4, "the staged slots");
    if (st == CLTOPK_OK)
        st = ixd_keep_host(ctx, &dev->hwmap, &dev->hwmap_n, (3 * P + 1) * 4);
    if (st == CLTOPK_OK)
        st = ixd_keep_host(ctx, &dev->htodo, &dev->htodo_n, (L->nblocks + 1) * 4);
    return st;
}

/* the launches' wait for a streamed chunk's copy: 1 and *w, or 0 */
static cl_uint ixd_wait(const ixd_stream *sp, const cl_event **w)
{
    *w = sp && sp->ready ? &sp->ready : NULL;
    return *w ? 1u : 0u;
}

/* the blocks the launches read: the resident arrays, or (sp) those of
 * staging buffer sp->buf (thr may be NULL) */
static void ixd_blocks(const cltopk_ix_dev *dev, const ixd_stream *sp, cl_mem *data, cl_mem *ids,
                       cl_mem *thr)
{
    *data = sp ? dev->sdata[sp->buf] : dev->data;
    *ids = sp ? dev->sids[sp->buf] : dev->ids;
    if (thr)
        *thr = sp ? dev->sthr[sp->buf] : dev->thr;
}

/* one round of index_scan (at most limit blocks a partition; nostop: no
 * partition stops), then index_decide; sp: streamed, the blocks in staging
 * buffer sp->buf */
static int ixd_round(cltopk_context *ctx, const cltopk_ix_layout *L, cltopk_ix_dev *dev,
                     const cltopk_ix_query *q, const ixd_stream *sp, cl_kernel ks, cl_kernel kd,
                     unsigned wg, cl_uint limit, cl_uint nostop)
{
    const int streamed = sp != NULL;
    cl_mem data, ids, thr, wmap = streamed ? dev->wmap : dev->todo;
    ixd_blocks(dev, sp, &data, &ids, &thr);
    cl_uint m = (cl_uint)q->m, d = (cl_uint)L->d, B = (cl_uint)L->B, k = (cl_uint)q->k;
    cl_uint sflag = (cl_uint)streamed, P = (cl_uint)L->P, sw = (cl_uint)q->sw;
    cl_float ratio = (cl_float)q->ratio;
    int st = cltopk_set_args(ctx, ks, 14, sizeof(cl_mem), &data, sizeof(cl_mem), &ids,
                             sizeof(cl_mem), &thr, sizeof(cl_mem), &dev->pstart, sizeof(cl_mem),
                             &dev->qb, sizeof m, &m, sizeof d, &d, sizeof B, &B, sizeof k, &k,
                             sizeof(cl_mem), &dev->lists, sizeof limit, &limit, sizeof(cl_mem),
                             &wmap, sizeof sflag, &sflag, sizeof nostop, &nostop);
    const cl_event *w;
    cl_uint nw = ixd_wait(sp, &w);
    if (st == CLTOPK_OK)
        st = cltopk_launch(ctx, ks, L->P * wg, wg, nw, w);
    /* where every partition finished and their lists are few keys,
     * index_decide merges them into the answer (no merge launch) */
    cl_uint merge = (cl_uint)ixd_decide_merges(L, q->k, nostop != 0),
            ko2 = (cl_uint)(ixd_keyoff(L->P) / 2);
    if (st == CLTOPK_OK)
        st = cltopk_set_args(ctx, kd, 10, sizeof(cl_mem), &dev->pstart, sizeof(cl_mem), &dev->qb,
                             sizeof P, &P, sizeof sw, &sw, sizeof ratio, &ratio, sizeof(cl_mem),
                             &dev->todo, sizeof(cl_mem), &dev->lists, sizeof k, &k,
                             sizeof merge, &merge, sizeof ko2, &ko2);
    if (st == CLTOPK_OK)
        st = cltopk_launch(ctx, kd, wg, wg, 0, NULL);
    return st;
}

/* index_full over ntodo blocks (0xFFFFFFFF: those a switch left in the block
 * list; direct: blocks 0 .. ntodo-1 of data) by G groups into lists P ..;
 * gate (not 0): only where index_filter's gate candidates overflowed; sp as
 * ixd_round */
static int ixd_full(cltopk_context *ctx, const cltopk_ix_layout *L, cltopk_ix_dev *dev,
                    const cltopk_ix_query *q, const ixd_stream *sp, cl_kernel kf, unsigned wg,
                    size_t G, cl_uint ntodo, cl_uint direct, cl_uint resume, cl_uint gate)
{
    cl_mem data, ids;
    ixd_blocks(dev, sp, &data, &ids, NULL);
    cl_uint m = (cl_uint)q->m, d = (cl_uint)L->d, B = (cl_uint)L->B, k = (cl_uint)q->k;
    cl_uint ob = (cl_uint)L->P;
    int st = cltopk_set_args(ctx, kf, 14, sizeof(cl_mem), &data, sizeof(cl_mem), &ids,
                             sizeof(cl_mem), &dev->todo, sizeof(cl_mem), &dev->qb, sizeof ntodo,
                             &ntodo, sizeof direct, &direct, sizeof m, &m, sizeof d, &d, sizeof B,
                             &B, sizeof k, &k, sizeof(cl_mem), &dev->lists, sizeof ob, &ob,
                             sizeof resume, &resume, sizeof gate, &gate);
    const cl_event *w;
    cl_uint nw = ixd_wait(sp, &w);
    return st == CLTOPK_OK ? cltopk_launch(ctx, kf, G * wg, wg, nw, w) : st;
}

/* index_filter over ntodo blocks (as ixd_full) by Gf groups, into the
 * candidates (room for ncand) */
static int ixd_filter(cltopk_context *ctx, const cltopk_ix_layout *L, cltopk_ix_dev *dev,
                      const cltopk_ix_query *q, const ixd_stream *sp, cl_kernel kfl,
                      unsigned wg, size_t Gf, cl_uint ntodo, cl_uint direct, cl_uint ncand)
{
    cl_mem data, ids;
    ixd_blocks(dev, sp, &data, &ids, NULL);
    cl_uint m = (cl_uint)q->m, d = (cl_uint)L->d, B = (cl_uint)L->B;
    int st = cltopk_set_args(ctx, kfl, 11, sizeof(cl_mem), &data, sizeof(cl_mem), &ids,
                             sizeof(cl_mem), &dev->todo, sizeof(cl_mem), &dev->qb, sizeof ntodo,
                             &ntodo, sizeof direct, &direct, sizeof m, &m, sizeof d, &d, sizeof B,
                             &B, sizeof(cl_mem), &dev->cand, sizeof ncand, &ncand);
    const cl_event *w;
    cl_uint nw = ixd_wait(sp, &w);
    return st == CLTOPK_OK ? cltopk_launch(ctx, kfl, Gf * wg, wg, nw, w) : st;
}

/* index_merge: ng groups of per candidates of cand[first .. ncand) to out
 * from element obase; fromcap (not 0): index_filter's candidates instead
 * (nothing where more than fromcap came); raise: 1 each group's k-th raises
 * the bound, 2 nothing where index_direct's last group merged (ctl[0] 3) */
static int ixd_merge(cltopk_context *ctx, cl_kernel km, unsigned wg, cl_mem cand, cl_ulong first,
                     cl_ulong ncand, cl_ulong per, size_t ng, cl_uint k, cl_mem qb, cl_mem out,
                     cl_ulong obase, cl_uint fromcap, cl_uint raise)
{
    int st = cltopk_set_args(ctx, km, 10, sizeof(cl_mem), &cand, sizeof first, &first,
                             sizeof ncand, &ncand, sizeof per, &per, sizeof k, &k,
                             sizeof(cl_mem), &qb, sizeof(cl_mem), &out, sizeof obase, &obase,
                             sizeof fromcap, &fromcap, sizeof raise, &raise);
    return st == CLTOPK_OK ? cltopk_launch(ctx, km, ng * wg, wg, 0, NULL) : st;
}

/* the last levels of the merge: the nl lists of K keys at the start of
 * dev->part to the K best, into qb after the state (ko words).  While one
 * group would take more than `big` keys, a level of groups of fan lists
 * (fan >= 2) writes their lists after the first ngmax lists of part, the
 * next level back at its start, and so on (the queue keeps them in order);
 * then one group.  (The H200, 2^26 x 8, k = 256: one group took 105-116 us
 * over 61-94 lists of 256 keys.) */
static int ixd_merge_last(cltopk_context *ctx, cl_kernel km, unsigned wg, cltopk_ix_dev *dev,
                          size_t nl, size_t K, size_t fan, size_t big, size_t ngmax, size_t ko)
{
    size_t at = 0, other = ngmax;
    int st = CLTOPK_OK;
    while (st == CLTOPK_OK && fan >= 2 && nl > fan && nl * K > big) {
        const size_t ngl = (nl + fan - 1) / fan;
        st = ixd_merge(ctx, km, wg, dev->part, (cl_ulong)(at * K), (cl_ulong)((at + nl) * K),
                       (cl_ulong)(fan * K), ngl, (cl_uint)K, dev->qb, dev->part,
                       (cl_ulong)(other * K), 0, 0);
        const size_t t = at;
        at = other;
        other = t;
        nl = ngl;
    }
    if (st == CLTOPK_OK)
        st = ixd_merge(ctx, km, wg, dev->part, (cl_ulong)(at * K), (cl_ulong)((at + nl) * K),
                       (cl_ulong)(nl * K), 1, (cl_uint)K, dev->qb, dev->qb, ko / 2, 0, 0);
    return st;
}

/* the partitions' lists alone (a query whose rounds finished the reading)
 * merged into qb after the state: ngA groups of fan lists, then the last
 * levels, or one group where ngA <= 1 */
static int ixd_merge_parts(cltopk_context *ctx, cl_kernel km, unsigned wg, cltopk_ix_dev *dev,
                           size_t P, size_t K, size_t fan, size_t big, size_t ngmax, size_t ko)
{
    const size_t ngA = (P + fan - 1) / fan;
    if (ngA <= 1)
        return ixd_merge(ctx, km, wg, dev->lists, 0, (cl_ulong)P * K, (cl_ulong)P * K, 1,
                         (cl_uint)K, dev->qb, dev->qb, ko / 2, 0, 0);
    int st = ixd_merge(ctx, km, wg, dev->lists, 0, (cl_ulong)P * K, (cl_ulong)fan * K, ngA,
                       (cl_uint)K, dev->qb, dev->part, 0, 0, 0);
    return st == CLTOPK_OK ? ixd_merge_last(ctx, km, wg, dev, ngA, K, fan, big, ngmax, ko) : st;
}

/* The streamed rounds: before each, the blocks it reads (q->probe * grow^r of
 * every partition still reading, as many as a staging buffer holds: fewer
 * a partition if need be; with more partitions open than the buffer has room
 * for, the first ones this round, the others in later rounds) are copied to
 * staging buffer 0 (its pieces overlapped with their gathering); after it, the
 * state is read back.  Ends when index_decide leaves phase 0. */
static int ixd_streamed_rounds(cltopk_context *ctx, const cltopk_ix_layout *L, cltopk_ix_dev *dev,
                               const cltopk_ix_query *q, ixd_stream *sp, cl_kernel ks,
                               cl_kernel kd, unsigned wg, size_t cap, size_t maxnb,
                               cl_uint nostop)
{
    const size_t P = L->P;
    uint32_t *state = dev->hq + IXQ_STATE, *wmap = dev->hwmap, *todo = dev->htodo;
    size_t limit = q->probe;
    int st = CLTOPK_OK;
    while (st == CLTOPK_OK) {
        size_t open = 0, nl = 0;
        for (size_t i = 0; i < P; i++)
            open += !state[IX_ST * i + 2] && state[IX_ST * i] < L->pstart[i + 1] - L->pstart[i];
        size_t lim = limit;
        if (open && lim * open > cap)
            lim = cap / open ? cap / open : 1;
        for (size_t i = 0; i < P; i++) {
            const uint32_t nb = L->pstart[i + 1] - L->pstart[i], pos = state[IX_ST * i];
            uint32_t cnt = 0;
            wmap[3 * i] = (uint32_t)nl;
            wmap[3 * i + 1] = pos;
            for (uint32_t b = pos; !state[IX_ST * i + 2] && b < nb && cnt < lim && nl < cap;
                 b++, cnt++)
                todo[nl++] = L->pstart[i] + b;
            wmap[3 * i + 2] = cnt;
        }
        st = ixd_stage(ctx, L, dev, sp, 0, todo, nl);
        /* the map: not waited for (the state's read below follows it) */
        if (st == CLTOPK_OK)
            st = ixd_write(ctx, dev, dev->wmap, 3 * P * 4, wmap, "the staged slots");
        if (st == CLTOPK_OK)
            st = ixd_round(ctx, L, dev, q, sp, ks, kd, wg, (cl_uint)lim, nostop);
        if (st == CLTOPK_OK)
            st = ixd_used(ctx, sp);
        if (st == CLTOPK_OK)
            st = ixd_read(ctx, dev, dev->qb, IXQ_CTL * 4, (4 + IX_ST * P) * 4, dev->hq + IXQ_CTL,
                          "the partitions' state");
        if (st != CLTOPK_OK || dev->hq[IXQ_CTL] != 0)
            break;
        limit = limit * q->grow > maxnb ? maxnb : limit * q->grow;
    }
    return st;
}

/* The streamed full evaluation of every block not read (all, for
 * cltopk_index_full_topk with full=old): a chunk of a staging buffer's size
 * at a time, the chunks taking the two buffers in turn, so that a chunk's copy
 * overlaps the previous chunk's launches (none of them waited for here).
 * Old (ncand 0): index_full, each group going on from its list.  Filter:
 * index_filter's candidates gathered over the chunks; then, their count read
 * back, their K best by index_merge into the groups' lists, or where they
 * overflowed, the chunks again through index_full. */
static int ixd_streamed_full(cltopk_context *ctx, const cltopk_ix_layout *L, cltopk_ix_dev *dev,
                             const cltopk_ix_query *q, ixd_stream *sp, cl_kernel kf,
                             cl_kernel kfl, cl_kernel km, unsigned wg, size_t G, size_t Gf,
                             size_t cap, size_t ncand)
{
    const uint32_t *state = dev->hq + IXQ_STATE;
    uint32_t *todo = dev->htodo;
    size_t ntodo = 0;
    for (size_t i = 0; i < L->P; i++)
        if (!state[IX_ST * i + 2])
            for (uint32_t b = state[IX_ST * i]; b < L->pstart[i + 1] - L->pstart[i]; b++)
                todo[ntodo++] = L->pstart[i] + b;
    int st = CLTOPK_OK, buf = 0;
    for (int pass = ncand ? 0 : 1; pass < 2 && st == CLTOPK_OK; pass++) {
        for (size_t c0 = 0, first = 1; st == CLTOPK_OK && (c0 < ntodo || first);
             c0 += cap, first = 0, buf = (buf + 1) % sp->nbuf) {
            size_t len = ntodo - c0 < cap ? ntodo - c0 : cap;
            st = ixd_stage(ctx, L, dev, sp, buf, todo + c0, len);
            if (st == CLTOPK_OK && pass == 0)
                st = ixd_filter(ctx, L, dev, q, sp, kfl, wg, Gf, (cl_uint)len, 1,
                                (cl_uint)ncand);
            else if (st == CLTOPK_OK)
                st = ixd_full(ctx, L, dev, q, sp, kf, wg, G, (cl_uint)len, 1, c0 > 0, 0);
            if (st == CLTOPK_OK)
                st = ixd_used(ctx, sp);
        }
        if (st != CLTOPK_OK || pass == 1)
            break;
        st = ixd_read(ctx, dev, dev->qb, (IXQ_CTL + 3) * 4, 4, dev->hq + IXQ_CTL + 3,
                      "the candidates' count");
        if (st == CLTOPK_OK && dev->hq[IXQ_CTL + 3] <= ncand)
            return ixd_merge(ctx, km, wg, dev->cand, 0, 0, 0, G, (cl_uint)q->k, dev->qb,
                             dev->lists, (cl_ulong)L->P * q->k, (cl_uint)ncand, 0);
    }
    return st;
}

/* q->st from the partitions' state read back into hq (full: evaluated in
 * full after the rounds, so a partition not stopped was read to its end) */
static void ixd_stats(const cltopk_ix_layout *L, const cltopk_ix_query *q, const uint32_t *hq,
                      int full)
{
    const uint32_t *state = hq + IXQ_STATE;
    cltopk_index_stats *s = q->st;
    memset(s, 0, sizeof *s);
    s->tuples = L->n;
    for (size_t i = 0; i < L->P; i++) {
        const uint32_t nb = L->pstart[i + 1] - L->pstart[i];
        const int stopped = state[IX_ST * i + 2] != 0;
        const uint64_t pos = full && !stopped ? nb : state[IX_ST * i];
        const uint64_t ev = pos * L->B;
        s->tuples_evaluated += ev < L->psize[i] ? ev : L->psize[i];
        s->blocks_read += pos;
        s->partitions += nb > 0;
        s->partitions_stopped += stopped;
    }
    s->stopped_early = s->tuples_evaluated < L->n;
    s->full_evaluation = full;
    s->on_device = 1;
}

/* the answer read back into hq: the k best keys at hq + ko (0 where fewer
 * were found: a bug, reported with `how`, the way the query went) to q's
 * outputs, and q->st from the state (full as ixd_stats) */
static int ixd_answer(cltopk_context *ctx, const cltopk_ix_layout *L, const cltopk_ix_query *q,
                      uint32_t *hq, size_t ko, int full, const char *how)
{
    uint64_t *keys = (uint64_t *)(void *)(hq + ko); /* ko is even: 8-byte aligned */
    for (size_t r = 0; r < q->k; r++)
        if (!keys[r])
            return cltopk_fail(ctx, CLTOPK_ERR_INTERNAL, "the index query on %s found %zu of "
                               "k = %zu tuples%s (a bug: please report it)", ctx->name, r, q->k,
                               how);
    cltopk_ix_answer(q, keys, q->k);
    ixd_stats(L, q, hq, full);
    return CLTOPK_OK;
}

/* A query with the host's sampled tuples (q->bslots, resident, room for
 * ncand candidates): qb written with their slots where the k best keys will
 * be, index_direct (a work-group a partition: the bound, the least score of
 * those tuples; its blocks not ruled out, the tuples at or above the bound
 * appended to the candidates; its last group sorts them where they are few,
 * fuse), then (fuse, k small) a read of the state and the k best keys:
 * where the last group sorted the candidates, or they overflowed, that read
 * ends it: two writes, one launch and a read.  Else index_merge of the
 * candidates by ngc groups into the first ngc lists, one group of those into
 * qb after the state, and a read of the state and the k best keys (without
 * fuse, the only read): at most three launches and two reads, where the
 * rounds' way makes at least 2 launches and a read after each round.
 * *done 0 (and nothing decided) where the candidates overflowed their room:
 * the caller's rounds then answer */
static int ixd_direct(cltopk_context *ctx, const cltopk_ix_layout *L, cltopk_ix_dev *dev,
                      const cltopk_ix_query *q, const char *opts, const char *optsbig,
                      unsigned wg, size_t ncand, int *done)
{
    *done = 0;
    const double t0 = ctx->prof ? cltopk_now() : 0;
    const size_t K = q->k, P = L->P, ko = ixd_keyoff(P);
    const size_t ngc = q->fan > 1 ? q->fan : 2;
    cl_kernel kx = NULL, km = NULL;
    int st = cltopk_kernel_get(ctx, "index.cl", opts, "index_direct", &kx);
    if (st == CLTOPK_OK)
        st = cltopk_kernel_get(ctx, "index.cl", optsbig, "index_merge", &km);
    if (st == CLTOPK_OK)
        st = ixd_prepare(ctx, L, dev, K, ngc, 1, 0, 0, ncand, q->pin);
    uint32_t *hq = dev->hq;
    if (st == CLTOPK_OK) {
        memset(hq, 0, IXQ_STATE * 4); /* the state: index_direct writes it */
        for (size_t j = 0; j < q->m; j++) {
            hq[j] = q->attr[j];
            memcpy(&hq[IXQ_W + j], &q->w[j], 4);
        }
        hq[IXQ_CTL] = 1; /* finished: the stats read no switch */
        memcpy(hq + ko, q->bslots, K * 4);
        st = ixd_write(ctx, dev, dev->qb, IXQ_STATE * 4, hq, "the query's state");
        if (st == CLTOPK_OK)
            st = ixd_write_at(ctx, dev, dev->qb, ko * 4, K * 4, hq + ko, "the sampled tuples");
    }
    cl_uint m = (cl_uint)q->m, d = (cl_uint)L->d, B = (cl_uint)L->B, cap = (cl_uint)ncand;
    /* the last group merges few candidates itself (fuse: the keys' ulong
     * index in qb; 0: never, CLTOPK_INDEX=fuse=0), the two merges then
     * doing nothing (raise bit 1) */
    cl_uint k32 = (cl_uint)K, sko = (cl_uint)ko, P32 = (cl_uint)P;
    cl_uint fuse = q->fuse ? (cl_uint)(ko / 2) : 0;
    if (st == CLTOPK_OK)
        st = cltopk_set_args(ctx, kx, 14, sizeof(cl_mem), &dev->data, sizeof(cl_mem), &dev->ids,
                             sizeof(cl_mem), &dev->thr, sizeof(cl_mem), &dev->pstart,
                             sizeof(cl_mem), &dev->qb, sizeof m, &m, sizeof d, &d, sizeof B, &B,
                             sizeof(cl_mem), &dev->cand, sizeof cap, &cap, sizeof k32, &k32,
                             sizeof sko, &sko, sizeof P32, &P32, sizeof fuse, &fuse);
    if (st == CLTOPK_OK)
        st = cltopk_launch(ctx, kx, P * wg, wg, 0, NULL);
    /* with fuse and k at most a sixteenth of the slots, the state and the
     * keys are read first: where the last group merged the candidates
     * (ctl[0] 3) or they overflowed, that read is the answer, and the
     * merges are never enqueued; else the merges run and a second read
     * brings their keys.  (The H200, 2^26 x 8, correlated: 4-148
     * candidates at k = 4, merged by the last group; 3590-8930 at k = 256,
     * where reading first cost a second read, 0.186 ms against 0.159) */
    const size_t rd = (ko + 2 * K - IXQ_CTL) * 4;
    int reads = 0, ended = 0; /* the first read is the answer (or the overflow) */
    if (st == CLTOPK_OK && q->fuse && 16 * K <= ixd_sn(K, wg)) {
        st = ixd_read(ctx, dev, dev->qb, IXQ_CTL * 4, rd, hq + IXQ_CTL,
                      "the state and the k best keys");
        reads = 1;
        ended = st == CLTOPK_OK && (hq[IXQ_CTL] == 3 || hq[IXQ_CTL + 3] > ncand);
    }
    if (st == CLTOPK_OK && !ended)
        st = ixd_merge(ctx, km, wg, dev->cand, 0, 0, 0, ngc, (cl_uint)K, dev->qb, dev->lists, 0,
                       cap, 2);
    if (st == CLTOPK_OK && !ended)
        st = ixd_merge(ctx, km, wg, dev->lists, 0, (cl_ulong)(ngc * K), (cl_ulong)(ngc * K), 1,
                       (cl_uint)K, dev->qb, dev->qb, ko / 2, 0, 2);
    const double t1 = ctx->prof ? cltopk_now() : 0;
    if (st == CLTOPK_OK && !ended) {
        st = ixd_read(ctx, dev, dev->qb, IXQ_CTL * 4, rd, hq + IXQ_CTL,
                      "the state and the k best keys");
        reads++;
    }
    if (st == CLTOPK_OK && ctx->prof) /* CLTOPK_PROFILE=1 */
        fprintf(stderr, "profile: index one launch: %u candidates (room %zu)%s; the host "
                "enqueued and read %d time(s) in %.1f us, then waited %.1f us\n",
                hq[IXQ_CTL + 3], ncand, hq[IXQ_CTL + 3] > ncand ? ": the rounds"
                       : hq[IXQ_CTL] == 3 ? ", merged by the last group" : "",
                reads, (t1 - t0) * 1e6, (cltopk_now() - t1) * 1e6);
    if (st == CLTOPK_OK && hq[IXQ_CTL + 3] <= ncand) {
        st = ixd_answer(ctx, L, q, hq, ko, 0, " by the host's bound");
        *done = st == CLTOPK_OK;
    }
    if (kx)
        clReleaseKernel(kx);
    if (km)
        clReleaseKernel(km);
    return st;
}

/* CLTOPK_INDEX=full=query (the default): the full evaluation by the query
 * engine (cl/query.cl, the fastest full evaluation the library has) over
 * the resident layout, its columns read in place (the job's blocked
 * layout): the score as one program, acc = +0.0f then for each attribute
 * acc = fma(w, a, acc) (XOP_FMA: the index's rule, so the same bits); the
 * best kq = K + 1 + K / 4 slots (K + 1 where the engine cannot take that
 * many; at most every slot) by (score, slot); index_ids turning them into
 * keys; one read.  The engine breaks ties by slot, not by tuple number, and
 * scores the padding (+0.0): its kq keys, sorted here by key (score, then
 * the smaller tuple number, padding last), hold the K best under the
 * index's rule where the kq-th's score is strictly below the K-th's (every
 * slot that ties the K-th is among them) or they are every slot, and those
 * K are tuples.  So a tie across the K-th that ends within the kq slots
 * still stands (2^28 independent tuples, m = 4, k = 256 on the H200: the
 * 256th and 257th scores were equal, and the filter's way took 3.0 ms
 * against the engine's 1.1).  Else (*done 0) and where the engine cannot take the
 * query (m = 0, more than 8 attributes, a device that flushes subnormals,
 * k past its kernel) the caller's way runs.  *done 1: the answer is in q's
 * outputs, q->st filled.  opts: index.cl's build (index_ids) */
static int ixd_by_query(cltopk_context *ctx, const cltopk_ix_layout *L, cltopk_ix_dev *dev,
                        const cltopk_ix_query *q, const char *opts, unsigned wg, int *done)
{
    *done = 0;
    const size_t K = q->k, slots = L->nblocks * L->B, m = q->m;
    size_t kq = K + 1 + K / 4 < slots ? K + 1 + K / 4 : slots;
    if (!dev->data || m == 0 || K == 0 || slots > 0x7FFFFFFEu)
        return CLTOPK_OK;
    expr_query *xq = calloc(1, sizeof *xq);
    if (!xq)
        return cltopk_fail(ctx, CLTOPK_ERR_NO_MEMORY, "the index query: out of host memory");
    expr_prog *pr = &xq->order;
    pr->ops[pr->nops++] = XOP_WORD(XOP_CONF, 0);
    pr->consts[pr->nconsts++] = 0; /* +0.0f */
    for (size_t j = 0; j < m; j++) {
        int r = 0;
        while (r < xq->nrefs && xq->refs[r] != (int)q->attr[j])
            r++;
        if (r == EXPR_MAX_REFS) { /* a 9th attribute: the engine reads 8 columns */
            free(xq);
            return CLTOPK_OK;
        }
        if (r == xq->nrefs)
            xq->refs[xq->nrefs++] = (int)q->attr[j];
        uint32_t wb;
        memcpy(&wb, &q->w[j], 4);
        pr->ops[pr->nops++] = XOP_WORD(XOP_CONF, pr->nconsts);
        pr->consts[pr->nconsts++] = wb;
        pr->ops[pr->nops++] = XOP_WORD(XOP_COLF, r);
        pr->ops[pr->nops++] = XOP_WORD(XOP_FMA, 0);
    }
    pr->depth = 3;
    cltopk_query_job job;
    memset(&job, 0, sizeof job);
    job.q = xq;
    job.n = slots;
    job.k = kq;
    job.blk = L->B;
    job.blk_stride = L->d * L->B;
    for (int r = 0; r < xq->nrefs; r++) {
        job.types[r] = CLTOPK_FLOAT32;
        job.dcols[r] = dev->data;
        job.doffs[r] = (size_t)xq->refs[r] * L->B;
    }
    char why[256];
    int can = cltopk_query_dev_can(ctx, &job, why, sizeof why);
    if (!can && kq > K + 1 && K + 1 < slots) { /* the engine's k: K + 1 then */
        job.k = kq = K + 1;
        can = cltopk_query_dev_can(ctx, &job, why, sizeof why);
    }
    if (!can) {
        free(xq);
        return CLTOPK_OK;
    }
    int st = ixd_keep(ctx, &dev->xs, &dev->xs_n, kq * 4, "the engine's scores");
    if (st == CLTOPK_OK)
        st = ixd_keep(ctx, &dev->xi, &dev->xi_n, kq * 8, "the engine's slots");
    uint64_t *keys = st == CLTOPK_OK ? malloc(kq * 8) : NULL;
    if (st == CLTOPK_OK && !keys)
        st = cltopk_fail(ctx, CLTOPK_ERR_NO_MEMORY, "the index query: out of host memory");
    job.dout_scores = dev->xs;
    job.dout_index = dev->xi;
    if (st == CLTOPK_OK)
        st = cltopk_query_dev(ctx, &job, 0, NULL);
    cl_kernel kid = NULL;
    if (st == CLTOPK_OK)
        st = cltopk_kernel_get(ctx, "index.cl", opts, "index_ids", &kid);
    const cl_uint nq = (cl_uint)kq;
    if (st == CLTOPK_OK)
        st = cltopk_set_args(ctx, kid, 4, sizeof(cl_mem), &dev->ids, sizeof(cl_mem), &dev->xs,
                             sizeof(cl_mem), &dev->xi, sizeof nq, &nq);
    if (st == CLTOPK_OK)
        st = cltopk_launch(ctx, kid, (kq + wg - 1) / wg * wg, wg, 0, NULL);
    if (st == CLTOPK_OK)
        st = ixd_read(ctx, dev, dev->xi, 0, kq * 8, keys, "the engine's answer");
    if (kid)
        clReleaseKernel(kid);
    free(xq);
    int stands = st == CLTOPK_OK;
    if (stands)
        cltopk_ix_sort(keys, kq);
    for (size_t r = 0; stands && r < K; r++)
        stands = (uint32_t)keys[r] != 0; /* ~IX_PAD: padding */
    const int allreal = stands;
    if (stands && kq < slots)
        stands = (keys[K - 1] >> 32) != (keys[kq - 1] >> 32);
    if (st == CLTOPK_OK && ctx->prof) /* CLTOPK_PROFILE=1 */
        fprintf(stderr, "profile: index full evaluation by the query engine: %s\n",
                stands     ? "its answer stands"
                : allreal ? "a tie across the k-th score past its slots: the filter's way"
                          : "padding among the k best: the filter's way");
    if (stands) {
        cltopk_ix_answer(q, keys, K);
        cltopk_index_stats *s = q->st;
        memset(s, 0, sizeof *s);
        s->tuples = s->tuples_evaluated = L->n;
        s->blocks_read = L->nblocks;
        for (size_t i = 0; i < L->P; i++)
            s->partitions += L->pstart[i + 1] > L->pstart[i];
        s->full_evaluation = 1;
        s->on_device = 1;
        *done = 1;
    }
    free(keys);
    return st;
}

/* a query's end: on a failure, nothing left reading dev->hq (the launches
 * enqueued waited for); CLTOPK_PROFILE=1: the launches' device times */
static int ixd_end(cltopk_context *ctx, int st)
{
    cl_event *own;
    if (st != CLTOPK_OK && cltopk_after_own(ctx, &own))
        clWaitForEvents(1, own);
    cltopk_prof_flush(ctx);
    return st;
}

int cltopk_index_dev_query(cltopk_context *ctx, const cltopk_ix_layout *L, cltopk_ix_dev *dev,
                           const cltopk_ix_query *q)
{
    const unsigned wg = ixd_wg(ctx);
    dev->quiet = q->pin;
    const size_t K = q->k, P = L->P, sn = ixd_sn(K, wg);
    const int gpu = (ctx->caps.type & CL_DEVICE_TYPE_GPU) != 0, streamed = dev->data == NULL;
    size_t G = (size_t)ctx->caps.compute_units * (gpu ? 4 : 2);
    G = G < 1 ? 1 : G > L->nblocks ? (L->nblocks ? L->nblocks : 1) : G;
    /* the merge reads many lists in a group: where they hold more than 2 sn
     * keys, a list of 4096 slots (where local memory holds it) lets
     * candidates gather before a sort, where 512 slots sort every round that
     * brings one (k = 256 on the H200, one merge group: the index query 3.2
     * -> 1.3-1.5 ms); fewer keys (small k) take one sort of sn slots.  Not
     * index_full: with 4096 slots its many groups took 2-8x longer
     * (bench/RESULTS.md) */
    const size_t fan = q->fan ? q->fan : 1;
    const size_t snbig = sn < 4096 && 4096 * 8 + 64 <= ctx->caps.local_mem && fan * K > 2 * sn
                             ? 4096
                             : sn;
    char opts[128], optsbig[128];
    ixd_options(opts, sizeof opts, wg, sn);
    ixd_options(optsbig, sizeof optsbig, wg, snbig);
    /* CLTOPK_INDEX=full=query: a plain full evaluation by the query engine
     * (no round), and a query that switched after its first round likewise;
     * where the engine's answer does not stand, the filter's way */
    const int eng = q->filter == 3 && !streamed;
    int engdone = 0;
    if (eng && q->full) {
        int st = ixd_by_query(ctx, L, dev, q, opts, wg, &engdone);
        if (st != CLTOPK_OK || engdone)
            return ixd_end(ctx, st);
    }
    /* the full evaluation by index_filter (CLTOPK_INDEX=full=filter): where
     * the slots' numbers fit 32 bits; a plain one (q->full) first reads one
     * round of every partition (the blocks for 4 k tuples and one more, none
     * stopping) for the bound, then filters the blocks left as after a
     * switch; room for ncand candidates, Gf groups of the filter */
    const int filt = q->filter && (uint64_t)L->nblocks * L->B < 0xFFFFFFFFu;
    size_t ncand = 0, Gf = 0;
    if (filt) {
        const size_t slots = L->nblocks * L->B;
        ncand = q->cands ? q->cands : L->n / 16;
        if (!q->cands)
            ncand = ncand < ((size_t)1 << 16) ? (size_t)1 << 16
                    : ncand > ((size_t)1 << 24) ? (size_t)1 << 24
                                                 : ncand;
        ncand = ncand > slots ? slots : ncand;
        ncand = ncand > ctx->caps.max_alloc / 8 ? ctx->caps.max_alloc / 8 : ncand;
        ncand = ncand < 1 ? 1 : ncand;
        /* some 8 tiles of the filter a group where every block is left (the
         * host does not know how many a switch leaves), at least 2 groups a
         * compute unit */
        const size_t tiles = (slots + (size_t)wg * IXD_TPI - 1) / ((size_t)wg * IXD_TPI);
        const size_t gmin = (size_t)ctx->caps.compute_units * 2;
        Gf = (tiles + 7) / 8;
        Gf = Gf < gmin ? gmin : Gf > 65535 ? 65535 : Gf;
        Gf = Gf < 1 ? 1 : Gf;
    }
    /* sampled tuples from the host: one launch reads the query (the rounds
     * where its candidates overflow) */
    if (q->bslots && !q->full && !streamed && filt) {
        int dd = 0;
        int st = ixd_direct(ctx, L, dev, q, opts, optsbig, wg, ncand, &dd);
        if (st != CLTOPK_OK || dd)
            return ixd_end(ctx, st);
    }
    cl_kernel ks = NULL, kd = NULL, kf = NULL, km = NULL, kfl = NULL;
    int st = cltopk_kernel_get(ctx, "index.cl", opts, "index_scan", &ks);
    if (st == CLTOPK_OK)
        st = cltopk_kernel_get(ctx, "index.cl", opts, "index_decide", &kd);
    if (st == CLTOPK_OK)
        st = cltopk_kernel_get(ctx, "index.cl", opts, "index_full", &kf);
    if (st == CLTOPK_OK)
        st = cltopk_kernel_get(ctx, "index.cl", optsbig, "index_merge", &km);
    if (st == CLTOPK_OK && filt)
        st = cltopk_kernel_get(ctx, "index.cl", opts, "index_filter", &kfl);
    /* the lists: the partitions' (P), the full evaluation's (G); the merge
     * takes q->fan lists a group, then one group the groups' lists (not the
     * partitions' of a plain full evaluation by index_full: it reads none) */
    const int plainold = q->full && !filt;
    const size_t nlists = plainold ? G : P + G, ng = (nlists + fan - 1) / fan;
    const size_t ngAB = filt ? (P + fan - 1) / fan + (G + fan - 1) / fan : 0;
    size_t cap = 0, bpp = 0, maxnb = 0;
    for (size_t i = 0; i < P; i++)
        if (L->pstart[i + 1] - L->pstart[i] > maxnb)
            maxnb = L->pstart[i + 1] - L->pstart[i];
    if (streamed) {
        /* staging: q->stage blocks, else an eighth of one allocation (at most
         * 256 MiB), at least one block */
        const size_t bb = L->d * L->B * 4;
        cap = q->stage;
        if (!cap) {
            size_t bytes = ctx->caps.max_alloc / 8;
            bytes = bytes > ((size_t)256 << 20) ? (size_t)256 << 20 : bytes;
            cap = bytes / bb;
        }
        cap = cap < 1 ? 1 : cap > L->nblocks ? (L->nblocks ? L->nblocks : 1) : cap;
        /* pinned pieces: q->piece blocks, else 32 MiB as the streaming of
         * host data (a transfer of 1-2 ms at 16-32 GB/s, long beside the
         * fixed cost of a write; the same pinned buffers serve both), or the
         * pinned buffers' size where larger; at least one block, at most a
         * staging buffer */
        const size_t pb = ixd_block_bytes(L), pin = (size_t)32 << 20;
        bpp = q->piece ? q->piece : (ctx->stage_size > pin ? ctx->stage_size : pin) / pb;
        bpp = bpp < 1 ? 1 : bpp > cap ? cap : bpp;
    }
    const size_t ngmax = ng > ngAB ? ng : ngAB, ko = ixd_keyoff(P);
    if (st == CLTOPK_OK)
        st = ixd_prepare(ctx, L, dev, K, P + G, ngmax, cap, bpp, ncand, q->pin);
    ixd_stream sps = {.bpp = bpp, .nbuf = L->nblocks > cap ? 2 : 1};
    ixd_stream *sp = streamed ? &sps : NULL;
    if (st == CLTOPK_OK) {
        /* attr, w, a zero ctl and state: one copy, not waited for */
        uint32_t *hq = dev->hq;
        memset(hq, 0, ixd_keyoff(P) * 4);
        for (size_t j = 0; j < q->m; j++) {
            hq[j] = q->attr[j];
            memcpy(&hq[IXQ_W + j], &q->w[j], 4);
        }
        /* CLTOPK_INDEX=full=fallback (tests): the candidates' count starts
         * above their room, so that index_filter's fallback serves the query */
        if (filt && q->filter == 2)
            hq[IXQ_CTL + 3] = (uint32_t)ncand + 1;
        st = ixd_write(ctx, dev, dev->qb, ixd_keyoff(P) * 4, hq, "the query's state");
    }
    /* the rounds: resident, all enqueued at once (they do nothing once
     * index_decide has ended the reading), as many as read every block of
     * the longest partition; then the full evaluation of the blocks a switch
     * left (none without one): index_full, or index_filter, its gated
     * fallback and the merge of its candidates into the groups' lists.  A
     * plain full evaluation by index_filter: one round that never stops and
     * a switch (index_decide with switch=2), then the same */
    cltopk_ix_query qr = *q;
    if (q->full && filt) {
        qr.probe = (4 * K + L->B - 1) / L->B + 1;
        qr.sw = 2;
    }
    const cl_uint nostop = q->full != 0;
    /* the phase where a read after a round found the reading ended: 1
     * (finished: the partitions' lists hold the answer, so the full
     * evaluation's launches are not enqueued) or 2 (switched); 0 unknown */
    cl_uint known = 0;
    /* spec: where the partitions' lists are few keys (P k <= IXD_SPEC),
     * index_decide merges them when every partition finished, and the read
     * after the first round takes the state and the keys: a query that
     * finished in that round (answered) makes no other launch or read */
    const int spec = q->first && !q->sync && ixd_decide_merges(L, K, q->full);
    int answered = 0;
    if (st == CLTOPK_OK && !plainold && !streamed) {
        size_t limit = qr.probe;
        for (size_t done = 0, r = 1; st == CLTOPK_OK && done < maxnb; r++) {
            size_t lim = limit < maxnb ? limit : maxnb;
            st = ixd_round(ctx, L, dev, &qr, NULL, ks, kd, wg, (cl_uint)lim, nostop);
            done += lim;
            limit = limit * q->grow > maxnb ? maxnb : limit * q->grow;
            if (q->full) /* the switch follows the first round */
                break;
            /* CLTOPK_INDEX=sync: the phase back every q->sync rounds; first:
             * after the first round */
            const int rd = q->sync ? r % q->sync == 0 : q->first && r == 1;
            if (st == CLTOPK_OK && rd && done < maxnb && spec) {
                st = ixd_read(ctx, dev, dev->qb, IXQ_CTL * 4, (ko + 2 * K - IXQ_CTL) * 4,
                              dev->hq + IXQ_CTL, "the state and the k best keys");
                known = st == CLTOPK_OK ? dev->hq[IXQ_CTL] : 0;
                answered = known == 1;
                if (known != 0)
                    break;
            } else if (st == CLTOPK_OK && rd && done < maxnb) {
                st = ixd_read(ctx, dev, dev->qb, IXQ_CTL * 4, 4, dev->hq + IXQ_CTL, "the phase");
                known = st == CLTOPK_OK ? dev->hq[IXQ_CTL] : 0;
                if (known != 0)
                    break;
            }
        }
        if (st == CLTOPK_OK && eng && known == 2) {
            st = ixd_by_query(ctx, L, dev, q, opts, wg, &engdone);
            if (st != CLTOPK_OK || engdone)
                goto out;
        }
        if (st == CLTOPK_OK && !filt && known != 1)
            st = ixd_full(ctx, L, dev, q, NULL, kf, wg, G, 0xFFFFFFFFu, 0, 0, 0);
    } else if (st == CLTOPK_OK && !streamed) {
        st = ixd_full(ctx, L, dev, q, NULL, kf, wg, G, (cl_uint)L->nblocks, 1, 0, 0);
    } else if (st == CLTOPK_OK && !plainold) {
        st = ixd_streamed_rounds(ctx, L, dev, &qr, sp, ks, kd, wg, cap, maxnb, nostop);
    }
    /* index_filter's way: the partitions' lists merged first (ngA groups of
     * fan lists into part), each group's k-th raising the bound, so that the
     * filter keeps the tuples at or above the k-th of fan partitions'
     * scanned tuples (not only of one partition's); then the filter, its
     * gated fallback and the merge of its candidates into the groups' lists
     * (resident; streamed, a chunk at a time), the groups' lists merged by
     * ngB groups after part's first ngA lists, and one group all of part */
    const size_t ngA = (P + fan - 1) / fan, ngB = (G + fan - 1) / fan;
    const int fin = known == 1;
    if (st == CLTOPK_OK && filt && !fin)
        st = ixd_merge(ctx, km, wg, dev->lists, 0, (cl_ulong)P * K, (cl_ulong)fan * K, ngA,
                       (cl_uint)K, dev->qb, dev->part, 0, 0, 1);
    if (st == CLTOPK_OK && filt && !streamed && !fin) {
        st = ixd_filter(ctx, L, dev, q, NULL, kfl, wg, Gf, 0xFFFFFFFFu, 0, (cl_uint)ncand);
        if (st == CLTOPK_OK)
            st = ixd_full(ctx, L, dev, q, NULL, kf, wg, G, 0xFFFFFFFFu, 0, 0, (cl_uint)ncand);
        if (st == CLTOPK_OK)
            st = ixd_merge(ctx, km, wg, dev->cand, 0, 0, 0, G, (cl_uint)K, dev->qb,
                           dev->lists, (cl_ulong)P * K, (cl_uint)ncand, 0);
    } else if (st == CLTOPK_OK && streamed) {
        if (plainold || dev->hq[IXQ_CTL] == 2)
            st = ixd_streamed_full(ctx, L, dev, q, sp, kf, kfl, km, wg, G, Gf, cap,
                                   filt ? ncand : 0);
        else /* no switch: the groups' lists emptied */
            st = ixd_full(ctx, L, dev, q, sp, kf, wg, G, 0, 1, 0, 0);
    }
    /* the merge into qb after the state, then one read of both (the state
     * only where the rounds ran) */
    const cl_ulong first = plainold ? (cl_ulong)P * K : 0, nkeys = (cl_ulong)(P + G) * K;
    size_t nl = 0; /* lists at the start of part for the last levels (0: merged) */
    if (st == CLTOPK_OK && fin && !answered) {
        st = ixd_merge_parts(ctx, km, wg, dev, P, K, fan, 2 * snbig, ngmax, ko);
    } else if (st == CLTOPK_OK && fin) {
        /* the answer came with the first round's read */
    } else if (st == CLTOPK_OK && filt) {
        st = ixd_merge(ctx, km, wg, dev->lists, (cl_ulong)P * K, nkeys, (cl_ulong)fan * K, ngB,
                       (cl_uint)K, dev->qb, dev->part, (cl_ulong)ngA * K, 0, 0);
        nl = ngA + ngB;
    } else if (st == CLTOPK_OK && ng > 1) {
        st = ixd_merge(ctx, km, wg, dev->lists, first, nkeys, (cl_ulong)fan * K, ng,
                       (cl_uint)K, dev->qb, dev->part, 0, 0, 0);
        nl = ng;
    } else if (st == CLTOPK_OK) {
        st = ixd_merge(ctx, km, wg, dev->lists, first, nkeys, nkeys - first, 1, (cl_uint)K,
                       dev->qb, dev->qb, ko / 2, 0, 0);
    }
    if (st == CLTOPK_OK && nl)
        st = ixd_merge_last(ctx, km, wg, dev, nl, K, fan, 2 * snbig, ngmax, ko);
    const size_t from = q->full ? ko : IXQ_CTL;
    if (st == CLTOPK_OK && !answered)
        st = ixd_read(ctx, dev, dev->qb, from * 4, (ko + 2 * K - from) * 4, dev->hq + from,
                      q->full ? "the k best keys" : "the state and the k best keys");
    if (sp)
        st = ixd_stream_end(ctx, sp, st);
    /* the k best keys, after the state */
    if (st == CLTOPK_OK)
        st = ixd_answer(ctx, L, q, dev->hq, ko, q->full || dev->hq[IXQ_CTL] == 2, "");
out:;
    st = ixd_end(ctx, st);
    cl_kernel kk[] = {ks, kd, kf, km, kfl};
    for (size_t i = 0; i < 5; i++)
        if (kk[i])
            clReleaseKernel(kk[i]);
    return st;
}

#endif
