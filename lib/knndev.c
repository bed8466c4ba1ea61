/* knndev.c - kNN on the OpenCL device by tiles of distances (cl/knn.cl),
 * called by the many-rows runtime (lib/rowsdev.c) for each launch of kNN
 * queries; rows.cl's one-group-a-query kernel (rows_knn) remains where the
 * tiles are off (CLTOPK_KNN=tile=0) or do not fit the device.
 *
 * A batch of queries: where np is at most the sample size S, every distance
 * is computed by the tiles into a matrix of order keys and a work-group a
 * query selects its answer (direct).  Else the tiles compute the distances of
 * a sample of S points (every (np / S)-th point) to the queries, a work-group
 * a query takes the k-th best key of its sample as its threshold, the tiles
 * go over every point again and keep, a query, the pairs at or above its
 * threshold (at least k: the sample's best k; every true winner is one), and
 * a work-group a query selects the answer among them.  The lists hold capq
 * candidates a query; the count goes on past it, and a query whose list
 * overflowed (many ties at the threshold, or a sample that was a poor guide)
 * is answered by a second kernel over every point (rows_knn's method, exact,
 * slow); the decision is taken on the device (both kernels are launched,
 * each returns at once for the queries that are not its), so the cl_mem form
 * reads nothing back.
 *
 * Parameters (CLTOPK_KNN, strict as every tuning variable): tile (0: the old
 * kernel), tq, tp (queries and points of a tile), mq, mp (a work-item's
 * micro-tile: multiples of 4 dividing tq and tp), dc (the most coordinates a
 * chunk in local memory: the chunk is the power of two at or above d up to
 * it), sample (S: points of the sample, at least per_k * k; np <= S is direct),
 * per_k, cap (candidates a query; 0: 4 times the expected k * np / S plus
 * 1024) and batch (queries a batch; 0: as many as a quarter of the device's
 * memory holds).  cap, sample and batch are also the tests' knobs: a tiny cap
 * forces the overflow path. */
#include "internal.h"

#if HAVE_OPENCL

#include <stdio.h>
#include <string.h>

enum { KP_TILE, KP_TQ, KP_TP, KP_MQ, KP_MP, KP_DC, KP_SAMPLE, KP_PERK, KP_CAP, KP_BATCH };
static const cltopk_param knn_params[] = {
    [KP_TILE] = {.name = "tile", .gpu = 1, .cpu = 1, .min = 0, .max = 1, .integer = 1},
    [KP_TQ] = {.name = "tq", .gpu = 64, .cpu = 16, .min = 4, .max = 512, .integer = 1},
    [KP_TP] = {.name = "tp", .gpu = 128, .cpu = 32, .min = 4, .max = 1024, .integer = 1},
    [KP_MQ] = {.name = "mq", .gpu = 8, .cpu = 4, .min = 4, .max = 16, .integer = 1},
    [KP_MP] = {.name = "mp", .gpu = 4, .cpu = 4, .min = 4, .max = 16, .integer = 1},
    [KP_DC] = {.name = "dc", .gpu = 16, .cpu = 16, .min = 1, .max = 128, .integer = 1},
    [KP_SAMPLE] = {.name = "sample", .gpu = 8192, .cpu = 1024, .min = 1, .max = 1 << 24,
                   .integer = 1},
    [KP_PERK] = {.name = "per_k", .gpu = 16, .cpu = 16, .min = 1, .max = 1024, .integer = 1},
    [KP_CAP] = {.name = "cap", .gpu = 0, .cpu = 0, .min = 0, .max = 1 << 30, .integer = 1},
    [KP_BATCH] = {.name = "batch", .gpu = 0, .cpu = 0, .min = 0, .max = 1 << 24, .integer = 1},
};
static const cltopk_param_table knn_table = {"CLTOPK_KNN", knn_params,
                                             sizeof knn_params / sizeof knn_params[0], NULL};

/* the plan of a kNN job: the tile, the sample, the lists */
typedef struct {
    unsigned tq, tp, mq, mp, dc, twg;
    size_t s, pstride; /* sample points, every pstride-th */
    int direct;        /* np <= s: every distance in the matrix */
    size_t capq;       /* candidates a query */
    size_t batch;      /* queries a batch (0: from memory) */
} knn_plan;

/* the plan for the job: 1; 0 where the tiles are off or do not fit (the
 * reason in why); -1 for a bad CLTOPK_KNN (the reason in why) */
static int knn_planning(cltopk_context *ctx, const cltopk_request *rq,
                        const cltopk_rows_job *job, knn_plan *kp, char *why, size_t whylen)
{
    int gpu = (ctx->caps.type & CL_DEVICE_TYPE_GPU) != 0;
    cltopk_tune_for f = {gpu, ctx->caps.device_name, 4, -1, rq->k};
    cltopk_params p;
    if (cltopk_params_get(rq->tune, &knn_table, &f, &p, why, whylen) != 0)
        return -1;
    kp->tq = (unsigned)p.v[KP_TQ];
    kp->tp = (unsigned)p.v[KP_TP];
    kp->mq = (unsigned)p.v[KP_MQ];
    kp->mp = (unsigned)p.v[KP_MP];
    if (kp->mq % 4 || kp->mp % 4 || kp->tq % kp->mq || kp->tp % kp->mp) {
        snprintf(why, whylen, "CLTOPK_KNN: mq = %u and mp = %u must be multiples of 4 dividing "
                 "tq = %u and tp = %u", kp->mq, kp->mp, kp->tq, kp->tp);
        return -1;
    }
    if (!p.v[KP_TILE]) {
        snprintf(why, whylen, "CLTOPK_KNN=tile=0");
        return 0;
    }
    /* the chunk: the power of two at or above d, at least 4, at most dc */
    unsigned dmax = (unsigned)p.v[KP_DC];
    kp->dc = 4;
    while (kp->dc < job->d && kp->dc < dmax)
        kp->dc <<= 1;
    kp->twg = (kp->tq / kp->mq) * (kp->tp / kp->mp);
    size_t local = (size_t)kp->dc * (kp->tq + 4 + kp->tp + 4) * 4 + (size_t)kp->tq * 8 + 64;
    if (kp->twg > ctx->caps.max_wg || local > ctx->caps.local_mem) {
        snprintf(why, whylen, "a tile of %u x %u (%u work-items, %zu bytes of local memory) "
                 "does not fit %s", kp->tq, kp->tp, kp->twg, local, ctx->name);
        return 0;
    }
    size_t np = job->np, k = rq->k ? rq->k : 1;
    size_t s = (size_t)p.v[KP_SAMPLE], perk = (size_t)p.v[KP_PERK];
    if (s < perk * k)
        s = perk * k;
    kp->direct = np <= s;
    kp->s = kp->direct ? np : s;
    kp->pstride = kp->direct ? 1 : np / s;
    kp->capq = (size_t)p.v[KP_CAP];
    if (!kp->capq) {
        double expect = (double)k * (double)np / (double)kp->s;
        kp->capq = (size_t)(4 * expect) + 1024;
    }
    if (kp->capq > np)
        kp->capq = np; /* then no list overflows */
    if (kp->capq < k)
        kp->capq = k;
    kp->batch = (size_t)p.v[KP_BATCH];
    return 1;
}

int cltopk_knn_dev_can(cltopk_context *ctx, const cltopk_request *rq,
                       const cltopk_rows_job *job, char *why, size_t whylen)
{
    knn_plan kp;
    return knn_planning(ctx, rq, job, &kp, why, whylen) >= 0;
}

/* queries a batch: the matrix of keys and the lists within a quarter of the
 * device's memory, each buffer within one allocation */
static size_t batch_size(const cltopk_context *ctx, const knn_plan *kp, size_t nq)
{
    size_t per = kp->s * 4 + (kp->direct ? 0 : kp->capq * 8 + 8);
    size_t nb = (size_t)(ctx->caps.global_mem / 4) / per;
    size_t most = kp->s * 4 > kp->capq * 4 ? kp->s * 4 : kp->capq * 4;
    if (nb > ctx->caps.max_alloc / most)
        nb = (size_t)(ctx->caps.max_alloc / most);
    if (kp->batch && nb > kp->batch)
        nb = kp->batch;
    if (nb > (1u << 24))
        nb = 1u << 24;
    if (nb > nq)
        nb = nq;
    return nb;
}

int cltopk_knn_dev_run(cltopk_context *ctx, const cltopk_request *rq,
                       const cltopk_rows_job *job, const char *rows_opts, unsigned wg,
                       const cltopk_knn_launch *a, cl_uint num_wait, const cl_event *wait,
                       int *done)
{
    knn_plan kp;
    char why[256];
    *done = 0;
    int pl = knn_planning(ctx, rq, job, &kp, why, sizeof why);
    if (pl < 0)
        return cltopk_fail(ctx, CLTOPK_ERR_UNSUPPORTED, "knn: %s", why);
    if (pl == 0)
        return CLTOPK_OK; /* the caller runs rows_knn */
    *done = 1;
    size_t nq = a->nq, k = rq->k, np = job->np;
    size_t nb = batch_size(ctx, &kp, nq);
    if (nb == 0)
        return cltopk_fail(ctx, CLTOPK_ERR_DEVICE_MEMORY, "knn: the distances of one query "
                           "(%zu keys, %zu candidates) exceed the device's memory", kp.s,
                           kp.capq);
    char opts[512];
    snprintf(opts, sizeof opts, "%s -D TQ=%u -D TP=%u -D MQ=%u -D MP=%u -D DC=%u", rows_opts,
             kp.tq, kp.tp, kp.mq, kp.mp, kp.dc);
    cl_kernel kk = NULL, kt = NULL, kf = NULL, ks = NULL, kb = NULL;
    cl_mem keys = NULL, thr = NULL, cnt = NULL, cu = NULL, ci = NULL;
    int st;
    if ((st = cltopk_kernel_get(ctx, "knn.cl", opts, "knn_tile_keys", &kk)) != CLTOPK_OK ||
        (st = cltopk_kernel_get(ctx, "knn.cl", opts, "knn_thresh", &kt)) != CLTOPK_OK ||
        (st = cltopk_scratch(ctx, SCR_KNN_KEYS, nb * kp.s * 4, &keys)) != CLTOPK_OK ||
        (st = cltopk_scratch(ctx, SCR_KNN_THR, nb * 4, &thr)) != CLTOPK_OK ||
        (st = cltopk_scratch(ctx, SCR_KNN_COUNT, nb * 4, &cnt)) != CLTOPK_OK)
        goto out;
    if (!kp.direct &&
        ((st = cltopk_kernel_get(ctx, "knn.cl", opts, "knn_tile_filter", &kf)) != CLTOPK_OK ||
         (st = cltopk_kernel_get(ctx, "knn.cl", opts, "knn_select", &ks)) != CLTOPK_OK ||
         (st = cltopk_kernel_get(ctx, "knn.cl", opts, "knn_fallback", &kb)) != CLTOPK_OK ||
         (st = cltopk_scratch(ctx, SCR_CAND_U0, nb * kp.capq * 4, &cu)) != CLTOPK_OK ||
         (st = cltopk_scratch(ctx, SCR_CAND_I0, nb * kp.capq * 4, &ci)) != CLTOPK_OK))
        goto out;
    cl_uint kk32 = (cl_uint)k, sm = (cl_uint)rq->smallest, d = (cl_uint)job->d;
    cl_uint want = (rq->want_keys ? 1u : 0u) | (rq->want_index ? 2u : 0u);
    cl_uint direct = kp.direct ? 1u : 0u, capq = (cl_uint)kp.capq;
    cl_mem od = a->out_dist ? a->out_dist : a->p, oi = a->out_index ? a->out_index : a->p;
    cl_ulong po = a->p_off, npt = kp.s, pstride = kp.pstride, np64 = np;
    for (size_t b0 = 0; b0 < nq && st == CLTOPK_OK; b0 += nb) {
        cl_uint nqb = (cl_uint)(nq - b0 < nb ? nq - b0 : nb);
        cl_ulong qo = a->q_off + b0 * job->d, orow = b0;
        size_t qtiles = (nqb + kp.tq - 1) / kp.tq;
        /* the sample's keys (every key where direct), then a group a query */
        size_t groups = qtiles * ((kp.s + kp.tp - 1) / kp.tp);
        if ((st = cltopk_set_args(ctx, kk, 10, sizeof(cl_mem), &a->q, sizeof qo, &qo,
                                  sizeof nqb, &nqb, sizeof(cl_mem), &a->p, sizeof po, &po,
                                  sizeof npt, &npt, sizeof pstride, &pstride, sizeof d, &d,
                                  sizeof sm, &sm, sizeof(cl_mem), &keys)) != CLTOPK_OK ||
            (st = cltopk_launch(ctx, kk, groups * kp.twg, kp.twg, num_wait, wait)) !=
                CLTOPK_OK ||
            (st = cltopk_set_args(ctx, kt, 15, sizeof(cl_mem), &keys, sizeof npt, &npt,
                                  sizeof kk32, &kk32, sizeof direct, &direct, sizeof(cl_mem),
                                  &thr, sizeof(cl_mem), &cnt, sizeof(cl_mem), &a->q, sizeof qo,
                                  &qo, sizeof(cl_mem), &a->p, sizeof po, &po, sizeof d, &d,
                                  sizeof(cl_mem), &od, sizeof(cl_mem), &oi, sizeof want, &want,
                                  sizeof orow, &orow)) != CLTOPK_OK ||
            (st = cltopk_launch(ctx, kt, (size_t)nqb * wg, wg, 0, NULL)) != CLTOPK_OK)
            break;
        num_wait = 0;
        wait = NULL;
        if (kp.direct)
            continue;
        /* every point against the thresholds; the lists' answers; the overflows' */
        groups = qtiles * ((np + kp.tp - 1) / kp.tp);
        if ((st = cltopk_set_args(ctx, kf, 13, sizeof(cl_mem), &a->q, sizeof qo, &qo,
                                  sizeof nqb, &nqb, sizeof(cl_mem), &a->p, sizeof po, &po,
                                  sizeof np64, &np64, sizeof d, &d, sizeof sm, &sm,
                                  sizeof(cl_mem), &thr, sizeof(cl_mem), &cnt, sizeof capq, &capq,
                                  sizeof(cl_mem), &cu, sizeof(cl_mem), &ci)) != CLTOPK_OK ||
            (st = cltopk_launch(ctx, kf, groups * kp.twg, kp.twg, 0, NULL)) != CLTOPK_OK ||
            (st = cltopk_set_args(ctx, ks, 14, sizeof(cl_mem), &cnt, sizeof capq, &capq,
                                  sizeof(cl_mem), &cu, sizeof(cl_mem), &ci, sizeof kk32, &kk32,
                                  sizeof(cl_mem), &a->q, sizeof qo, &qo, sizeof(cl_mem), &a->p,
                                  sizeof po, &po, sizeof d, &d, sizeof(cl_mem), &od,
                                  sizeof(cl_mem), &oi, sizeof want, &want, sizeof orow,
                                  &orow)) != CLTOPK_OK ||
            (st = cltopk_launch(ctx, ks, (size_t)nqb * wg, wg, 0, NULL)) != CLTOPK_OK ||
            (st = cltopk_set_args(ctx, kb, 14, sizeof(cl_mem), &cnt, sizeof capq, &capq,
                                  sizeof(cl_mem), &a->q, sizeof qo, &qo, sizeof(cl_mem), &a->p,
                                  sizeof po, &po, sizeof np64, &np64, sizeof d, &d, sizeof kk32,
                                  &kk32, sizeof sm, &sm, sizeof(cl_mem), &od, sizeof(cl_mem),
                                  &oi, sizeof want, &want, sizeof orow, &orow)) != CLTOPK_OK)
            break;
        st = cltopk_launch(ctx, kb, (size_t)nqb * wg, wg, 0, NULL);
    }
out:
    if (kk)
        clReleaseKernel(kk);
    if (kt)
        clReleaseKernel(kt);
    if (kf)
        clReleaseKernel(kf);
    if (ks)
        clReleaseKernel(ks);
    if (kb)
        clReleaseKernel(kb);
    return st;
}

size_t cltopk_knn_dev_describe(cltopk_context *ctx, const cltopk_request *rq,
                               const cltopk_rows_job *job, unsigned wg, char *buf, size_t len)
{
    knn_plan kp;
    char why[256];
    if (knn_planning(ctx, rq, job, &kp, why, sizeof why) <= 0)
        return 0;
    int n;
    if (kp.direct)
        n = snprintf(buf, len, "distance tiles of %u queries x %u points (%u x %u a "
                     "work-item, chunks of %u) into a matrix of every distance; a group of %u "
                     "a query selects", kp.tq, kp.tp, kp.mq, kp.mp, kp.dc, wg);
    else
        n = snprintf(buf, len, "distance tiles of %u queries x %u points (%u x %u a "
                     "work-item, chunks of %u); a sample of %zu points (every %zu-th) bounds "
                     "each query; lists of %zu; a group of %u a query selects (overflow: "
                     "over every point)", kp.tq, kp.tp, kp.mq, kp.mp, kp.dc, kp.s, kp.pstride,
                     kp.capq, wg);
    return n < 0 ? 0 : (size_t)n < len ? (size_t)n : len;
}

#endif
