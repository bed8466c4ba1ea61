/* topk.c - the API entry points of top-k and selection: take the context's
 * lock, describe the request once (lib/request.c), choose the record
 * (lib/plan.c), run it, and hand out the event. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cltopk_enter(cltopk_context *ctx)
{
    pthread_mutex_lock(&ctx->lock);
    ctx->err[0] = 0;
}

/* a record's top-k on host data: AUTO runs what the planner means by it */
static int run_host_topk(cltopk_context *ctx, const cltopk_request *rq, cltopk_algo algo,
                         const cltopk_algorithm *a)
{
    if (algo == CLTOPK_ALGO_AUTO && a->run_planned) {
        int st = a->run_planned(rq, rq->keys, rq->n, rq->k, rq->out_keys, rq->out_index);
        return st == CLTOPK_OK ? st
                               : cltopk_fail(ctx, st, "%s: out of host memory for %zu results",
                                             a->name, rq->k);
    }
    return a->run_host(ctx, rq);
}

#if HAVE_OPENCL
/* ---------------------------------------- contexts of several devices */

/* one device's part of a call: the top-min(k, len) of its consecutive part,
 * keys and positions (local to the part) into its own arrays */
typedef struct {
    cltopk_context *dev;
    cltopk_request rq;
    cltopk_algo algo;
    const cltopk_algorithm *a;
    int member; /* not the calling context: take its lock */
    int st;
    double secs; /* the part's time on the host: transfer and top-k */
} split_part;

static void *split_part_run(void *arg)
{
    split_part *p = arg;
    double t0 = cltopk_now();
    if (p->member)
        cltopk_enter(p->dev);
    p->st = run_host_topk(p->dev, &p->rq, p->algo, p->a);
    if (p->member)
        pthread_mutex_unlock(&p->dev->lock);
    p->secs = cltopk_now() - t0;
    return NULL;
}

/* A call on host data over the devices of ctx (ctx->nmembers > 0): each
 * device's part (cltopk_multi_split) on a thread of its own (the first
 * device's on this one), the parts' best min(k, len) merged in THE ORDER with
 * their positions made global; the first k to rq's outputs (rank SIZE_MAX), or
 * the element at rank (k = rank + 1) to out_key / out_index.  Each part is
 * timed on its thread (its lock, transfer and top-k) and the call as a whole,
 * for the next call's split (cltopk_split_record).  *ran 0: no split (the
 * caller runs the call on the first device). */
static int split_run(cltopk_context *ctx, const cltopk_request *rq, cltopk_algo algo,
                     size_t rank, void *out_key, int64_t *out_index, int *ran)
{
    size_t nd = ctx->nmembers + 1, kb = (size_t)rq->bytes, k = rq->k;
    cltopk_split sp;
    const size_t *lens = sp.lens;
    cltopk_request prq = *rq;
    prq.select = 0; /* each device runs the top-k of its part */
    prq.tune = &prq.tune_store;
    *ran = 0;
    int st = cltopk_multi_split(ctx, &prq, algo, &sp);
    if (st != CLTOPK_OK || !sp.split)
        return st;
    *ran = 1;
    double t0 = cltopk_now();
    split_part *parts = calloc(nd, sizeof *parts);
    pthread_t *th = calloc(nd, sizeof *th);
    char *tk = malloc(k * kb), *ak = malloc(k * kb);
    int64_t *ti = malloc(k * 8), *ai = malloc(k * 8);
    int *started = calloc(nd, sizeof *started);
    if (!parts || !th || !tk || !ak || !ti || !ai || !started) {
        st = cltopk_fail(ctx, CLTOPK_ERR_NO_MEMORY, "out of host memory for %zu results", k);
        goto out;
    }
    size_t off = 0;
    for (size_t d = 0; d < nd && st == CLTOPK_OK; d++) {
        split_part *p = &parts[d];
        p->dev = cltopk_device_at(ctx, d);
        p->member = d > 0;
        p->algo = algo;
        p->a = sp.recs[d];
        p->rq = prq;
        p->rq.tune = &p->rq.tune_store;
        p->rq.keys = (const char *)rq->keys + off * kb;
        p->rq.n = lens[d];
        p->rq.k = k < lens[d] ? k : lens[d];
        p->rq.want_keys = p->rq.want_index = 1;
        p->rq.out_keys = malloc(p->rq.k ? p->rq.k * kb : 1);
        p->rq.out_index = malloc(p->rq.k ? p->rq.k * 8 : 1);
        if (!p->rq.out_keys || !p->rq.out_index)
            st = cltopk_fail(ctx, CLTOPK_ERR_NO_MEMORY, "out of host memory for %zu results",
                             p->rq.k);
        off += lens[d];
    }
    /* the members on threads of their own (inline where none can start) */
    for (size_t d = 1; d < nd && st == CLTOPK_OK; d++)
        if (parts[d].rq.k)
            started[d] = pthread_create(&th[d], NULL, split_part_run, &parts[d]) == 0;
    if (st == CLTOPK_OK && parts[0].rq.k)
        split_part_run(&parts[0]);
    for (size_t d = 1; d < nd && st == CLTOPK_OK; d++)
        if (started[d])
            pthread_join(th[d], NULL);
        else if (parts[d].rq.k)
            split_part_run(&parts[d]);
    for (size_t d = 0; d < nd && st == CLTOPK_OK; d++)
        if (parts[d].rq.k && parts[d].st != CLTOPK_OK) {
            char detail[sizeof ctx->err];
            snprintf(detail, sizeof detail, "%s", parts[d].dev->err);
            st = cltopk_fail(ctx, parts[d].st, "on %s (its part of %zu elements): %s",
                             parts[d].dev->name, lens[d], detail);
        }
    /* merge the parts in device order, positions made global */
    size_t an = 0, base = 0;
    for (size_t d = 0; d < nd && st == CLTOPK_OK; base += lens[d], d++) {
        split_part *p = &parts[d];
        for (size_t j = 0; j < p->rq.k; j++)
            p->rq.out_index[j] += (int64_t)base;
        size_t mn = an + p->rq.k < k ? an + p->rq.k : k;
        cltopk_merge_lists(rq, ak, ai, an, p->rq.out_keys, p->rq.out_index, p->rq.k, mn, tk, ti);
        char *sk = ak;
        int64_t *si = ai;
        ak = tk, ai = ti, tk = sk, ti = si;
        an = mn;
    }
    /* the measured speeds for the next call's split (every part ran) */
    if (st == CLTOPK_OK) {
        double secs[CLTOPK_DEVICES_MAX];
        for (size_t d = 0; d < nd; d++)
            secs[d] = parts[d].rq.k ? parts[d].secs : 0;
        cltopk_split_record(ctx, rq->bytes, lens, secs, cltopk_now() - t0);
    }
    if (st == CLTOPK_OK && an != k)
        st = cltopk_fail(ctx, CLTOPK_ERR_INTERNAL, "split top-k: %zu results for k = %zu", an,
                         k);
    if (st == CLTOPK_OK && rank != SIZE_MAX) {
        if (out_key)
            memcpy(out_key, ak + rank * kb, kb);
        if (out_index)
            *out_index = ai[rank];
    } else if (st == CLTOPK_OK) {
        if (rq->out_keys)
            memcpy(rq->out_keys, ak, k * kb);
        if (rq->out_index)
            memcpy(rq->out_index, ai, k * 8);
    }
out:
    for (size_t d = 0; parts && d < nd; d++) {
        free(parts[d].rq.out_keys);
        free(parts[d].rq.out_index);
    }
    free(parts), free(th), free(started);
    free(tk), free(ak), free(ti), free(ai);
    return st;
}
#endif

/* a top-k on host data of any context: split over the devices of a context of
 * several, else the record's */
static int run_topk_call(cltopk_context *ctx, const cltopk_request *rq, cltopk_algo algo,
                         const cltopk_algorithm *a)
{
#if HAVE_OPENCL
    int ran = 0;
    if (ctx->is_cl && ctx->nmembers) {
        int st = split_run(ctx, rq, algo, SIZE_MAX, NULL, NULL, &ran);
        if (st != CLTOPK_OK || ran)
            return st;
    }
#endif
    return run_host_topk(ctx, rq, algo, a);
}

int cltopk_topk(cltopk_context *ctx, cltopk_dtype type, const void *keys, size_t n, size_t k,
                unsigned flags, cltopk_algo algo, void *out_keys, int64_t *out_index)
{
    const char *fn = "cltopk_topk";
    if (!ctx)
        return cltopk_fail(NULL, CLTOPK_ERR_INVALID_ARGUMENT, "%s: ctx is NULL", fn);
    cltopk_enter(ctx);
    cltopk_request rq;
    const cltopk_algorithm *a;
    int st = cltopk_describe(ctx, fn, type, n, k, flags, CLTOPK_SMALLEST, algo, &rq);
    if (st == CLTOPK_OK && k > n)
        st = cltopk_fail(ctx, CLTOPK_ERR_K_RANGE, "%s: k = %zu is larger than n = %zu", fn, k, n);
    if (st != CLTOPK_OK || k == 0)
        goto out;
    if ((st = cltopk_describe_host(ctx, fn, &rq, keys, out_keys, out_index, k)) == CLTOPK_OK &&
        (st = cltopk_choose(ctx, &rq, algo, &a)) == CLTOPK_OK &&
        (st = cltopk_outputs_apart(ctx, fn, &rq, k)) == CLTOPK_OK)
        st = run_topk_call(ctx, &rq, algo, a);
out:
    pthread_mutex_unlock(&ctx->lock);
    return st;
}

/* the record that selects for rq: the chosen one if it selects, else the
 * first record of the table that selects where the chosen one runs */
static const cltopk_algorithm *selector(cltopk_context *ctx, const cltopk_request *rq,
                                        const cltopk_algorithm *chosen, int buffer)
{
    if (buffer ? chosen->select_buffer != NULL : chosen->select_host != NULL)
        return chosen;
    char why[256];
    for (size_t i = 0; i < cltopk_algorithm_count; i++) {
        const cltopk_algorithm *a = cltopk_algorithms[i];
        if (a->on_device == chosen->on_device && (buffer ? a->select_buffer != NULL : a->select_host != NULL) &&
            cltopk_can_run(ctx, a, rq, why, sizeof why))
            return a;
    }
    return NULL;
}

int cltopk_select(cltopk_context *ctx, cltopk_dtype type, const void *keys, size_t n,
                  size_t rank, unsigned flags, cltopk_algo algo, void *out_key,
                  int64_t *out_index)
{
    const char *fn = "cltopk_select";
    if (!ctx)
        return cltopk_fail(NULL, CLTOPK_ERR_INVALID_ARGUMENT, "%s: ctx is NULL", fn);
    cltopk_enter(ctx);
    cltopk_request rq;
    const cltopk_algorithm *a, *s;
    char *tk = NULL;
    int64_t *ti = NULL;
    int st = cltopk_describe(ctx, fn, type, n, rank + 1, flags, CLTOPK_SMALLEST, algo, &rq);
    rq.select = 1;
    if (st == CLTOPK_OK && rank >= n)
        st = cltopk_fail(ctx, CLTOPK_ERR_RANK_RANGE, "%s: rank = %zu is not below n = %zu", fn,
                         rank, n);
    if (st != CLTOPK_OK ||
        (st = cltopk_describe_host(ctx, fn, &rq, keys, out_key, out_index, 1)) != CLTOPK_OK ||
        (st = cltopk_choose(ctx, &rq, algo, &a)) != CLTOPK_OK ||
        (st = cltopk_outputs_apart(ctx, fn, &rq, 1)) != CLTOPK_OK)
        goto out;
#if HAVE_OPENCL
    /* several devices: the best rank + 1 of each part, merged */
    if (ctx->is_cl && ctx->nmembers) {
        int ran = 0;
        st = split_run(ctx, &rq, algo, rank, out_key, out_index, &ran);
        if (st != CLTOPK_OK || ran)
            goto out;
    }
#endif
    /* a selection without a top-k where the record (or, for AUTO, one beside
     * it) has one; else the top-k of rank + 1 */
    s = algo == CLTOPK_ALGO_AUTO ? selector(ctx, &rq, a, 0) : a->select_host ? a : NULL;
    if (s) {
        st = s->select_host(ctx, &rq, rank, out_key, out_index);
        goto out;
    }
    tk = malloc(rq.k * (size_t)rq.bytes);
    ti = malloc(rq.k * sizeof *ti);
    if (!tk || !ti) {
        st = cltopk_fail(ctx, CLTOPK_ERR_NO_MEMORY,
                         "%s: out of host memory for a top-%zu (use CLTOPK_ALGO_AUTO, which "
                         "selects without it)", fn, rq.k);
        goto out;
    }
    cltopk_request t = rq;
    t.out_keys = tk;
    t.out_index = ti;
    t.want_keys = t.want_index = 1;
    st = run_host_topk(ctx, &t, algo, a);
    if (st == CLTOPK_OK) {
        if (out_key)
            memcpy(out_key, tk + rank * (size_t)rq.bytes, (size_t)rq.bytes);
        if (out_index)
            *out_index = ti[rank];
    }
out:
    free(tk);
    free(ti);
    pthread_mutex_unlock(&ctx->lock);
    return st;
}

#if HAVE_OPENCL
int cltopk_buffer_start(cltopk_context *ctx, const char *fn, size_t k, cl_uint num_wait,
                        const cl_event *wait, cl_event *done, int *nothing)
{
    *nothing = 0;
    if (!ctx->is_cl)
        return cltopk_fail(ctx, CLTOPK_ERR_NO_OPENCL,
                           "%s: this context is the \"cpu\" device; cl_mem data needs a context "
                           "opened on an OpenCL device", fn);
    if ((num_wait > 0) != (wait != NULL))
        return cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT,
                           "%s: num_wait and wait disagree (wait NULL exactly when num_wait 0)",
                           fn);
    if (k > 0)
        return CLTOPK_OK;
    *nothing = 1;
    if (!done)
        return CLTOPK_OK;
    cl_int err = clEnqueueMarkerWithWaitList(ctx->queue, num_wait, wait, done);
    return err == CL_SUCCESS ? CLTOPK_OK : cltopk_clfail(ctx, err, "clEnqueueMarkerWithWaitList");
}

/* the rest of what the cl_mem entry points share, after rq is described: the
 * buffers, the record (a named host algorithm does not take cl_mem; AUTO may
 * stage), outputs apart; *nothing when k is 0 */
static int buffer_plan(cltopk_context *ctx, const char *fn, cltopk_request *rq, size_t count,
                       cl_mem keys, size_t offset, cl_mem out_keys, cl_mem out_index,
                       cl_uint num_wait, const cl_event *wait, cl_event *done, cltopk_algo algo,
                       const cltopk_algorithm **a, int *nothing)
{
    int st;
    if ((st = cltopk_buffer_start(ctx, fn, count, num_wait, wait, done, nothing)) != CLTOPK_OK ||
        *nothing ||
        (st = cltopk_describe_buffer(ctx, fn, rq, keys, offset, out_keys, out_index, count,
                                     num_wait, wait)) != CLTOPK_OK ||
        (st = cltopk_choose(ctx, rq, algo, a)) != CLTOPK_OK ||
        (st = cltopk_outputs_apart(ctx, fn, rq, count)) != CLTOPK_OK)
        return st;
    if (!(*a)->on_device && algo != CLTOPK_ALGO_AUTO)
        return cltopk_fail(ctx, CLTOPK_ERR_UNSUPPORTED,
                           "%s: %s runs on host memory; cl_mem data takes a device algorithm "
                           "or CLTOPK_ALGO_AUTO", fn, (*a)->name);
    return CLTOPK_OK;
}
#endif

int cltopk_topk_buffer(cltopk_context *ctx, cltopk_dtype type, cl_mem keys, size_t offset,
                       size_t n, size_t k, unsigned flags, cltopk_algo algo, cl_mem out_keys,
                       cl_mem out_index, cl_uint num_wait, const cl_event *wait, cl_event *done)
{
    const char *fn = "cltopk_topk_buffer";
    if (!ctx)
        return cltopk_fail(NULL, CLTOPK_ERR_INVALID_ARGUMENT, "%s: ctx is NULL", fn);
#if HAVE_OPENCL
    cltopk_enter(ctx);
    cltopk_request rq;
    const cltopk_algorithm *a;
    int nothing;
    int st = cltopk_describe(ctx, fn, type, n, k, flags, CLTOPK_SMALLEST, algo, &rq);
    if (st == CLTOPK_OK && k > n)
        st = cltopk_fail(ctx, CLTOPK_ERR_K_RANGE, "%s: k = %zu is larger than n = %zu", fn, k, n);
    if (st != CLTOPK_OK ||
        (st = buffer_plan(ctx, fn, &rq, k, keys, offset, out_keys, out_index, num_wait, wait,
                          done, algo, &a, &nothing)) != CLTOPK_OK ||
        nothing)
        goto out;
    if (!a->on_device)
        st = cltopk_host_on_buffer(ctx, &rq, a, SIZE_MAX);
    else
        st = a->run_buffer(ctx, &rq);
    if (st == CLTOPK_OK)
        st = cltopk_hand_off(ctx, done);
out:
    pthread_mutex_unlock(&ctx->lock);
    return st;
#else
    (void)type, (void)keys, (void)offset, (void)n, (void)k, (void)flags, (void)algo;
    (void)out_keys, (void)out_index, (void)num_wait, (void)wait, (void)done;
    return cltopk_fail(ctx, CLTOPK_ERR_NO_OPENCL, "%s: built without OpenCL", fn);
#endif
}

int cltopk_select_buffer(cltopk_context *ctx, cltopk_dtype type, cl_mem keys, size_t offset,
                         size_t n, size_t rank, unsigned flags, cltopk_algo algo,
                         cl_mem out_key, cl_mem out_index, cl_uint num_wait,
                         const cl_event *wait, cl_event *done)
{
    const char *fn = "cltopk_select_buffer";
    if (!ctx)
        return cltopk_fail(NULL, CLTOPK_ERR_INVALID_ARGUMENT, "%s: ctx is NULL", fn);
#if HAVE_OPENCL
    cltopk_enter(ctx);
    cltopk_request rq;
    const cltopk_algorithm *a, *s;
    int nothing;
    int st = cltopk_describe(ctx, fn, type, n, rank + 1, flags, CLTOPK_SMALLEST, algo, &rq);
    rq.select = 1;
    if (st == CLTOPK_OK && rank >= n)
        st = cltopk_fail(ctx, CLTOPK_ERR_RANK_RANGE, "%s: rank = %zu is not below n = %zu", fn,
                         rank, n);
    if (st != CLTOPK_OK ||
        (st = buffer_plan(ctx, fn, &rq, 1, keys, offset, out_key, out_index, num_wait, wait, done,
                          algo, &a, &nothing)) != CLTOPK_OK)
        goto out;
    s = algo == CLTOPK_ALGO_AUTO ? selector(ctx, &rq, a, a->on_device)
                                 : a->select_buffer ? a : NULL;
    if (!s && !a->on_device)
        s = selector(ctx, &rq, a, 0);
    if (!s)
        st = cltopk_fail(ctx, CLTOPK_ERR_UNSUPPORTED,
                         "%s: %s has no selection of device data; use radix-select or "
                         "CLTOPK_ALGO_AUTO", fn, a->name);
    else if (!s->on_device)
        st = cltopk_host_on_buffer(ctx, &rq, s, rank);
    else
        st = s->select_buffer(ctx, &rq, rank);
    if (st == CLTOPK_OK)
        st = cltopk_hand_off(ctx, done);
out:
    pthread_mutex_unlock(&ctx->lock);
    return st;
#else
    (void)type, (void)keys, (void)offset, (void)n, (void)rank, (void)flags, (void)algo;
    (void)out_key, (void)out_index, (void)num_wait, (void)wait, (void)done;
    return cltopk_fail(ctx, CLTOPK_ERR_NO_OPENCL, "%s: built without OpenCL", fn);
#endif
}

int cltopk_workspace_size(cltopk_context *ctx, cltopk_dtype type, size_t n, size_t k,
                          unsigned flags, cltopk_algo algo, size_t *bytes)
{
    const char *fn = "cltopk_workspace_size";
    if (!ctx)
        return cltopk_fail(NULL, CLTOPK_ERR_INVALID_ARGUMENT, "%s: ctx is NULL", fn);
    cltopk_enter(ctx);
    cltopk_request rq;
    const cltopk_algorithm *a = NULL;
    int st = bytes ? cltopk_describe(ctx, fn, type, n, k, flags, CLTOPK_SMALLEST, algo, &rq)
                   : cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT, "%s: bytes is NULL", fn);
    if (st == CLTOPK_OK && k > n)
        st = cltopk_fail(ctx, CLTOPK_ERR_K_RANGE, "%s: k = %zu is larger than n = %zu", fn, k, n);
    if (st == CLTOPK_OK && k > 0)
        st = cltopk_choose(ctx, &rq, algo, &a);
    if (st == CLTOPK_OK)
        *bytes = a && a->workspace ? a->workspace(ctx, &rq) : 0;
    pthread_mutex_unlock(&ctx->lock);
    return st;
}

/* describe a plan's request: k in kmin..n, the data on the host or the device */
static int plan_request(cltopk_context *ctx, const char *fn, cltopk_dtype type, size_t n,
                        size_t k, size_t kmin, unsigned flags, int device_data,
                        cltopk_request *rq)
{
    int st = cltopk_describe(ctx, fn, type, n, k, flags, CLTOPK_SMALLEST | CLTOPK_PLAN_SELECT,
                             CLTOPK_ALGO_AUTO, rq);
    rq->select = (flags & CLTOPK_PLAN_SELECT) != 0;
    if (st == CLTOPK_OK && (k < kmin || k > n))
        st = cltopk_fail(ctx, CLTOPK_ERR_K_RANGE, "%s: need %zu <= k <= n (k = %zu, n = %zu)",
                         fn, kmin, k, n);
    if (st == CLTOPK_OK && device_data && !ctx->is_cl)
        st = cltopk_fail(ctx, CLTOPK_ERR_NO_OPENCL,
                         "%s: the \"cpu\" context has no device buffers; open an OpenCL device",
                         fn);
    rq->on_device = device_data != 0;
    return st;
}

static int plan_for(cltopk_context *ctx, const char *fn, cltopk_dtype type, size_t n, size_t k,
                    unsigned flags, int device_data, cltopk_algo *chosen)
{
    if (!ctx)
        return cltopk_fail(NULL, CLTOPK_ERR_INVALID_ARGUMENT, "%s: ctx is NULL", fn);
    cltopk_enter(ctx);
    cltopk_request rq;
    const cltopk_algorithm *a;
    int st = chosen ? plan_request(ctx, fn, type, n, k, 0, flags, device_data, &rq)
                    : cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT, "%s: chosen is NULL", fn);
    if (st == CLTOPK_OK && (st = cltopk_choose(ctx, &rq, CLTOPK_ALGO_AUTO, &a)) == CLTOPK_OK)
        *chosen = a->id;
    pthread_mutex_unlock(&ctx->lock);
    return st;
}

int cltopk_plan(cltopk_context *ctx, cltopk_dtype type, size_t n, size_t k, unsigned flags,
                cltopk_algo *chosen)
{
    return plan_for(ctx, "cltopk_plan", type, n, k, flags, 0, chosen);
}

int cltopk_plan_buffer(cltopk_context *ctx, cltopk_dtype type, size_t n, size_t k,
                       unsigned flags, cltopk_algo *chosen)
{
    return plan_for(ctx, "cltopk_plan_buffer", type, n, k, flags, 1, chosen);
}

int cltopk_explain(cltopk_context *ctx, cltopk_dtype type, size_t n, size_t k, unsigned flags,
                   int device_data, char *buf, size_t len)
{
    const char *fn = "cltopk_explain";
    if (!ctx)
        return cltopk_fail(NULL, CLTOPK_ERR_INVALID_ARGUMENT, "%s: ctx is NULL", fn);
    cltopk_enter(ctx);
    cltopk_request rq;
    int st = buf && len ? plan_request(ctx, fn, type, n, k, 1, flags, device_data, &rq)
                        : cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT,
                                      "%s: buf must not be NULL and len > 0", fn);
    if (st == CLTOPK_OK)
        st = cltopk_plan_explain(ctx, &rq, buf, len);
    pthread_mutex_unlock(&ctx->lock);
    return st;
}
