/* indexdev.c - the early-stopping index on the OpenCL device (cl/index.cl).
 *
 * The layout's four arrays live in device buffers for the index's life.  A
 * query makes small buffers of its own (the attributes and weights, the
 * partitions' state and lists, the block list of a full evaluation, the
 * outputs), then:
 *   1. index_scan, a work-group a partition, at most q->probe blocks each,
 *      all sharing one bound (a uint in device memory raised by atomic_max:
 *      the best k-th score of any partition so far);
 *   2. reads the partitions' state back and decides (cltopk_ix_decide, as
 *      cpu/indexcpu.c): another round of index_scan, or index_full over every
 *      block not read yet (groups of consecutive blocks: 4 a compute unit on
 *      GPUs, 2 else);
 *   3. index_merge, one work-group, the k best of all the lists (with 4096
 *      local slots where the device has them);
 * and reads the outputs and the state (the statistics) back.
 * An index kept in host memory (it did not fit, or CLTOPK_INDEX=resident=0)
 * is streamed: before each round the blocks it reads (probe blocks of each
 * partition still reading, fewer where the staging buffers would overflow)
 * are gathered on the host and written to staging buffers, index_scan
 * finding them through a map of (first slot, first block, count) a
 * partition; after a switch, the blocks left go through the staging a chunk
 * at a time, index_full's groups going on from their lists.  The writes are
 * blocking, between the launches: no overlap of copies and kernels yet.
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

/* the build options of cl/index.cl for work-groups of wg and sn local slots */
static void ixd_options(char *buf, size_t len, unsigned wg, size_t sn)
{
    snprintf(buf, len, "-D KEY_BITS=32 -D KEY_KIND=2 -D WG=%u -D SN=%zu", wg, sn);
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

void cltopk_index_dev_release(cltopk_ix_dev *dev)
{
    cl_mem *m[] = {&dev->data, &dev->ids, &dev->thr, &dev->pstart};
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++) {
        if (*m[i])
            clReleaseMemObject(*m[i]);
        *m[i] = NULL;
    }
}

/* a blocking read of bytes of m after the context's work */
static int ixd_read(cltopk_context *ctx, cl_mem m, size_t bytes, void *host, const char *what)
{
    if (!bytes)
        return CLTOPK_OK;
    cl_event *own;
    cl_uint nw = cltopk_after_own(ctx, &own);
    cl_int err = clEnqueueReadBuffer(ctx->queue, m, CL_TRUE, 0, bytes, host, nw, nw ? own : NULL,
                                     NULL);
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
    int st = ixd_read(ctx, dev->data, nb * d * B * 4, data, "the index's attributes");
    if (st == CLTOPK_OK)
        st = ixd_read(ctx, dev->ids, nb * B * 4, ids, "the index's tuples");
    if (st == CLTOPK_OK)
        st = ixd_read(ctx, dev->thr, nb * d * 4, thr, "the thresholds");
    return st;
}

/* a blocking write of a host array to m (after the context's work) */
static int ixd_write(cltopk_context *ctx, cl_mem m, size_t bytes, const void *host)
{
    cl_event *own;
    cl_uint nw = cltopk_after_own(ctx, &own);
    cl_int err = clEnqueueWriteBuffer(ctx->queue, m, CL_TRUE, 0, bytes, host, nw,
                                      nw ? own : NULL, NULL);
    return err == CL_SUCCESS ? CLTOPK_OK
                             : cltopk_clfail(ctx, err, "clEnqueueWriteBuffer (the index's block "
                                             "list)");
}

/* Where the kernels read blocks: the index's own buffers (resident), or
 * staging buffers of `cap` blocks that the blocks of a round or a chunk are
 * copied to from the host layout (streamed: an index kept in host memory). */
typedef struct {
    int streamed;
    size_t cap;               /* blocks the staging buffers hold */
    cl_mem data, ids, thr;    /* resident: the index's; streamed: staging */
    float *hdata, *hthr;      /* streamed: the host side of the staging */
    uint32_t *hids;
} ixd_src;

/* copy blocks list[0 .. nl) of the host layout to staging slots 0 .. nl-1 */
static int ixd_stage(cltopk_context *ctx, const cltopk_ix_layout *L, ixd_src *src,
                     const uint32_t *list, size_t nl)
{
    const size_t d = L->d, B = L->B;
    for (size_t x = 0; x < nl; x++) {
        memcpy(src->hdata + x * d * B, L->data + (size_t)list[x] * d * B, d * B * 4);
        memcpy(src->hids + x * B, L->ids + (size_t)list[x] * B, B * 4);
        memcpy(src->hthr + x * d, L->thr + (size_t)list[x] * d, d * 4);
    }
    int st = ixd_write(ctx, src->data, nl * d * B * 4, src->hdata);
    if (st == CLTOPK_OK)
        st = ixd_write(ctx, src->ids, nl * B * 4, src->hids);
    if (st == CLTOPK_OK)
        st = ixd_write(ctx, src->thr, nl * d * 4, src->hthr);
    return st;
}

int cltopk_index_dev_query(cltopk_context *ctx, const cltopk_ix_layout *L, const cltopk_ix_dev *dev,
                           const cltopk_ix_query *q)
{
    const unsigned wg = ixd_wg(ctx);
    const size_t K = q->k, P = L->P, sn = ixd_sn(K, wg);
    const int gpu = (ctx->caps.type & CL_DEVICE_TYPE_GPU) != 0;
    size_t G = (size_t)ctx->caps.compute_units * (gpu ? 4 : 2);
    G = G < 1 ? 1 : G > L->nblocks ? (L->nblocks ? L->nblocks : 1) : G;
    /* the merge reads many lists in one group: a list of 4096 slots (where
     * local memory holds it) lets candidates gather before a sort, where 512
     * slots sort every round that brings one (k = 256 on the H200: the index
     * query 3.2 -> 1.3-1.5 ms).  Not index_full: with 4096 slots its many
     * groups took 2-8x longer (bench/RESULTS.md) */
    const size_t snbig = sn < 4096 && 4096 * 8 + 64 <= ctx->caps.local_mem ? 4096 : sn;
    char opts[128], optsbig[128];
    ixd_options(opts, sizeof opts, wg, sn);
    ixd_options(optsbig, sizeof optsbig, wg, snbig);
    cl_kernel ks = NULL, kf = NULL, km = NULL;
    int st = cltopk_kernel_get(ctx, "index.cl", opts, "index_scan", &ks);
    if (st == CLTOPK_OK)
        st = cltopk_kernel_get(ctx, "index.cl", opts, "index_full", &kf);
    if (st == CLTOPK_OK)
        st = cltopk_kernel_get(ctx, "index.cl", optsbig, "index_merge", &km);
    ixd_src src = {0};
    src.streamed = dev == NULL;
    if (src.streamed) {
        /* staging: q->stage blocks, else an eighth of one allocation (at most
         * 256 MiB), at least one block */
        const size_t bb = L->d * L->B * 4;
        size_t cap = q->stage;
        if (!cap) {
            size_t bytes = ctx->caps.max_alloc / 8;
            bytes = bytes > ((size_t)256 << 20) ? (size_t)256 << 20 : bytes;
            cap = bytes / bb;
        }
        src.cap = cap < 1 ? 1 : cap > L->nblocks ? (L->nblocks ? L->nblocks : 1) : cap;
        src.hdata = malloc(src.cap * bb);
        src.hids = malloc(src.cap * L->B * 4);
        src.hthr = malloc(src.cap * L->d * 4);
        if (st == CLTOPK_OK && (!src.hdata || !src.hids || !src.hthr))
            st = cltopk_fail(ctx, CLTOPK_ERR_NO_MEMORY, "the index query: out of host memory");
        src.data = ixd_buffer(ctx, CL_MEM_READ_ONLY, src.cap * bb, NULL, "staged blocks", &st);
        src.ids = ixd_buffer(ctx, CL_MEM_READ_ONLY, src.cap * L->B * 4, NULL, "staged tuples",
                             &st);
        src.thr = ixd_buffer(ctx, CL_MEM_READ_ONLY, src.cap * L->d * 4, NULL,
                             "staged thresholds", &st);
    } else {
        src.data = dev->data;
        src.ids = dev->ids;
        src.thr = dev->thr;
    }
    uint32_t *state = calloc(5 * P, sizeof *state), *todo = malloc((L->nblocks + 1) * 4);
    uint32_t *wmap = calloc(3 * P + 1, sizeof *wmap);
    cltopk_ix_progress *pr = calloc(P, sizeof *pr);
    uint32_t *scores = malloc(K * 4);
    int64_t *index = malloc(K * 8);
    if (st == CLTOPK_OK && (!state || !todo || !scores || !index || !pr || !wmap))
        st = cltopk_fail(ctx, CLTOPK_ERR_NO_MEMORY, "the index query: out of host memory");
    uint32_t zeros[1] = {0};
    cl_mem mattr = ixd_buffer(ctx, CL_MEM_READ_ONLY, q->m * 4, q->m ? (const void *)q->attr : zeros,
                              "the query's attributes", &st);
    cl_mem mw = ixd_buffer(ctx, CL_MEM_READ_ONLY, q->m * 4, q->m ? (const void *)q->w : zeros,
                           "the query's weights", &st);
    cl_mem mstate = ixd_buffer(ctx, CL_MEM_READ_WRITE, 5 * P * 4, state, "the partitions' state",
                               &st);
    cl_mem mlists = ixd_buffer(ctx, CL_MEM_READ_WRITE, (P + G) * K * 8, NULL,
                               "the partitions' lists", &st);
    cl_mem mtodo = ixd_buffer(ctx, CL_MEM_READ_ONLY, L->nblocks * 4, NULL, "the block list", &st);
    cl_mem mwmap = ixd_buffer(ctx, CL_MEM_READ_ONLY, (3 * P + 1) * 4, wmap, "the staged slots",
                              &st);
    cl_mem mpstart = src.streamed ? ixd_buffer(ctx, CL_MEM_READ_ONLY, (P + 1) * 4, L->pstart,
                                               "the partitions", &st)
                                  : dev->pstart;
    cl_mem mbound = ixd_buffer(ctx, CL_MEM_READ_WRITE, 4, zeros, "the shared bound", &st);
    cl_mem mscores = ixd_buffer(ctx, CL_MEM_WRITE_ONLY, K * 4, NULL, "the scores", &st);
    cl_mem mindex = ixd_buffer(ctx, CL_MEM_WRITE_ONLY, K * 8, NULL, "the tuple numbers", &st);
    cl_uint m = (cl_uint)q->m, d = (cl_uint)L->d, B = (cl_uint)L->B, k = (cl_uint)K;
    cl_uint streamed = (cl_uint)src.streamed;
    int full = q->full;
    if (!full && st == CLTOPK_OK) {
        cl_uint limit = q->probe > 0xFFFFFFFFu ? 0xFFFFFFFFu : (cl_uint)q->probe;
        while (st == CLTOPK_OK) {
            if (src.streamed) {
                /* this round's blocks of every partition still reading, as
                 * many as the staging holds (fewer a partition if need be;
                 * with more partitions open than staging slots, the first
                 * ones this round, the others in later rounds) */
                size_t open = 0, nl = 0;
                for (size_t i = 0; i < P; i++)
                    open += !state[5 * i + 2] && state[5 * i] < L->pstart[i + 1] - L->pstart[i];
                size_t lim = limit;
                if (open && lim * open > src.cap)
                    lim = src.cap / open ? src.cap / open : 1;
                for (size_t i = 0; i < P; i++) {
                    const uint32_t nb = L->pstart[i + 1] - L->pstart[i], pos = state[5 * i];
                    uint32_t cnt = 0;
                    wmap[3 * i] = (uint32_t)nl;
                    wmap[3 * i + 1] = pos;
                    for (uint32_t b = pos; !state[5 * i + 2] && b < nb && cnt < lim && nl < src.cap;
                         b++, cnt++)
                        todo[nl++] = L->pstart[i] + b;
                    wmap[3 * i + 2] = cnt;
                }
                st = ixd_stage(ctx, L, &src, todo, nl);
                if (st == CLTOPK_OK)
                    st = ixd_write(ctx, mwmap, 3 * P * 4, wmap);
            }
            if (st == CLTOPK_OK)
                st = cltopk_set_args(ctx, ks, 16, sizeof(cl_mem), &src.data, sizeof(cl_mem),
                                     &src.ids, sizeof(cl_mem), &src.thr, sizeof(cl_mem),
                                     &mpstart, sizeof(cl_mem), &mattr, sizeof(cl_mem), &mw,
                                     sizeof m, &m, sizeof d, &d, sizeof B, &B, sizeof k, &k,
                                     sizeof(cl_mem), &mlists, sizeof(cl_mem), &mstate,
                                     sizeof limit, &limit, sizeof(cl_mem), &mbound,
                                     sizeof(cl_mem), &mwmap, sizeof streamed, &streamed);
            if (st == CLTOPK_OK)
                st = cltopk_launch(ctx, ks, P * wg, wg, 0, NULL);
            if (st == CLTOPK_OK)
                st = ixd_read(ctx, mstate, 5 * P * 4, state, "the partitions' state");
            uint32_t bound = 0;
            if (st == CLTOPK_OK)
                st = ixd_read(ctx, mbound, 4, &bound, "the shared bound");
            if (st != CLTOPK_OK)
                break;
            size_t nonempty = 0, finished = 0;
            for (size_t i = 0; i < P; i++) {
                uint32_t nb = L->pstart[i + 1] - L->pstart[i];
                nonempty += nb > 0;
                finished += nb > 0 && (state[5 * i + 2] || state[5 * i] == nb);
                pr[i].pos = state[5 * i];
                pr[i].nb = nb;
                pr[i].done = state[5 * i + 2] != 0;
                memcpy(&pr[i].tfirst, &state[5 * i + 3], 4);
                memcpy(&pr[i].tnow, &state[5 * i + 4], 4);
            }
            if (finished == nonempty || (full = cltopk_ix_decide(q, pr, P, bound)))
                break;
        }
    }
    cl_ulong ncand = (cl_ulong)P * K;
    if (full && st == CLTOPK_OK) {
        size_t ntodo = 0;
        for (size_t i = 0; i < P; i++) {
            uint32_t nb = L->pstart[i + 1] - L->pstart[i];
            if (state[5 * i + 2])
                continue;
            for (uint32_t b = state[5 * i]; b < nb; b++)
                todo[ntodo++] = L->pstart[i] + b;
            state[5 * i] = nb;
        }
        /* resident: one launch over the list; streamed: one a chunk of the
         * staging's size, each group going on from its list */
        const size_t chunk = src.streamed ? src.cap : (ntodo ? ntodo : 1);
        cl_uint ob = (cl_uint)P;
        for (size_t c0 = 0, first = 1; st == CLTOPK_OK && (c0 < ntodo || first);
             c0 += chunk, first = 0) {
            size_t len = ntodo - c0 < chunk ? ntodo - c0 : chunk;
            if (src.streamed) {
                st = ixd_stage(ctx, L, &src, todo + c0, len);
                for (size_t x = 0; x < len; x++) /* the staged slots, in order */
                    todo[c0 + x] = (uint32_t)x;
            }
            if (st == CLTOPK_OK && len)
                st = ixd_write(ctx, mtodo, len * 4, todo + c0);
            cl_uint nt = (cl_uint)len, per = (cl_uint)((len + G - 1) / G);
            cl_uint resume = c0 > 0;
            if (st == CLTOPK_OK)
                st = cltopk_set_args(ctx, kf, 15, sizeof(cl_mem), &src.data, sizeof(cl_mem),
                                     &src.ids, sizeof(cl_mem), &mtodo, sizeof nt, &nt,
                                     sizeof per, &per, sizeof(cl_mem), &mattr, sizeof(cl_mem),
                                     &mw, sizeof m, &m, sizeof d, &d, sizeof B, &B, sizeof k, &k,
                                     sizeof(cl_mem), &mlists, sizeof ob, &ob, sizeof(cl_mem),
                                     &mbound, sizeof resume, &resume);
            if (st == CLTOPK_OK)
                st = cltopk_launch(ctx, kf, G * wg, wg, 0, NULL);
        }
        ncand += (cl_ulong)G * K;
    }
    /* a full evaluation from the start has no partitions' lists */
    cl_ulong first = q->full ? (cl_ulong)P * K : 0;
    if (st == CLTOPK_OK)
        st = cltopk_set_args(ctx, km, 6, sizeof(cl_mem), &mlists, sizeof first, &first,
                             sizeof ncand, &ncand, sizeof k, &k, sizeof(cl_mem), &mscores,
                             sizeof(cl_mem), &mindex);
    if (st == CLTOPK_OK)
        st = cltopk_launch(ctx, km, wg, wg, 0, NULL);
    if (st == CLTOPK_OK)
        st = ixd_read(ctx, mscores, K * 4, scores, "the scores");
    if (st == CLTOPK_OK)
        st = ixd_read(ctx, mindex, K * 8, index, "the tuple numbers");
    if (st == CLTOPK_OK) {
        if (q->out_scores)
            memcpy(q->out_scores, scores, K * 4);
        if (q->out_index)
            memcpy(q->out_index, index, K * 8);
        cltopk_index_stats *s = q->st;
        memset(s, 0, sizeof *s);
        s->tuples = L->n;
        for (size_t i = 0; i < P; i++) {
            uint64_t ev = (uint64_t)state[5 * i] * L->B;
            s->tuples_evaluated += ev < L->psize[i] ? ev : L->psize[i];
            s->blocks_read += state[5 * i];
            s->partitions += L->pstart[i + 1] > L->pstart[i];
            s->partitions_stopped += state[5 * i + 2] != 0;
        }
        s->stopped_early = s->tuples_evaluated < L->n;
        s->full_evaluation = full;
        s->on_device = 1;
    }
    cl_mem mine[] = {mattr, mw, mstate, mlists, mtodo, mwmap, mbound, mscores, mindex};
    for (size_t i = 0; i < sizeof mine / sizeof mine[0]; i++)
        if (mine[i])
            clReleaseMemObject(mine[i]);
    if (src.streamed) {
        cl_mem st_bufs[] = {mpstart, src.data, src.ids, src.thr};
        for (size_t i = 0; i < 4; i++)
            if (st_bufs[i])
                clReleaseMemObject(st_bufs[i]);
    }
    cl_kernel kk[] = {ks, kf, km};
    for (size_t i = 0; i < 3; i++)
        if (kk[i])
            clReleaseKernel(kk[i]);
    free(src.hdata);
    free(src.hids);
    free(src.hthr);
    free(state);
    free(pr);
    free(wmap);
    free(todo);
    free(scores);
    free(index);
    return st;
}

#endif
