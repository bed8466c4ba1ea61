/* plan.c - the choice among the records of lib/table.c: a named algorithm if
 * it can run the call, or AUTO's pick, the supporter with the smallest
 * predicted time (each record's predict(), its cost model, lives beside it);
 * and the explanation of that choice (cltopk_explain).
 *
 * Device records on host data add the copy of the input to the device
 * (n * bytes / h2d).  Host records predict their own costs, the copy of device
 * data to the host included.  On the "cpu" context there are no constants and
 * only host records; their predict() says which one AUTO runs (the CPU
 * planner's rule, cpu/algo_cpu.c).
 *
 * The GPU models are in units of R, one read of the input at the bandwidth
 * constant (lib/consts.c: the slope of two reads, 4.4 TB/s on the H200).
 * They were fitted with a constant measured by one read of 256 MB (3.23 TB/s
 * there) and carry the factor 4.4 / 3.23 = 1.37 since. */
#include "internal.h"

#include <stdio.h>
#include <string.h>

int cltopk_can_run(cltopk_context *ctx, const cltopk_algorithm *a, const cltopk_request *rq,
                   char *why, size_t whylen)
{
    if (a->missing) {
        snprintf(why, whylen, "%s", a->missing);
        return 0;
    }
    if (a->on_device && !ctx->is_cl) {
        snprintf(why, whylen,
                 "%s runs on an OpenCL device, and this context is the \"cpu\" device; open one "
                 "with cltopk_open(&ctx, \"gpu\") or similar", a->name);
        return 0;
    }
    size_t kmax = rq->bytes == 4 ? a->kmax32 : a->kmax64;
    int selects = rq->select && (rq->on_device ? a->select_buffer != NULL : a->select_host != NULL);
    if (kmax && rq->k > kmax && !selects) {
        snprintf(why, whylen, "%s takes k <= %zu for %d-byte keys; k = %zu: use "
                 "CLTOPK_ALGO_AUTO or radix-select", a->name, kmax, rq->bytes, rq->k);
        return 0;
    }
#if HAVE_OPENCL
    if (a->on_device && a->needs_int64 && !ctx->caps.int64) {
        snprintf(why, whylen, "%s is an embedded-profile device without cl_khr_int64; %s needs "
                 "64-bit integers (use the CPU algorithms)", ctx->name, a->name);
        return 0;
    }
#endif
    if (a->max_buffer_n && rq->on_device && rq->n > a->max_buffer_n) {
        snprintf(why, whylen, "%s takes at most %zu elements of a cl_mem per call (32-bit "
                 "positions inside one launch); split the buffer", a->name, a->max_buffer_n);
        return 0;
    }
    return !a->supports || a->supports(ctx, rq, why, whylen);
}

typedef struct {
    const cltopk_algorithm *a;
    double t;   /* predicted seconds; < 0: not a candidate */
    int ok;
    char why[512];
} plan_row;

/* every record's row; the index of the best in *best (-1: none) */
static int plan_rows(cltopk_context *ctx, const cltopk_request *rq, plan_row *rows,
                     int *best, cltopk_consts *pc)
{
    const cltopk_consts *c = NULL;
    memset(pc, 0, sizeof *pc);
    *best = -1;
    if (ctx->is_cl) {
        int st = cltopk_consts_get(ctx, pc);
        if (st != CLTOPK_OK)
            return st;
        c = pc;
    }
    for (size_t i = 0; i < cltopk_algorithm_count; i++) {
        const cltopk_algorithm *a = cltopk_algorithms[i];
        plan_row *r = &rows[i];
        r->a = a;
        r->why[0] = 0;
        r->t = -1;
        double (*pf)(const cltopk_context *, const cltopk_request *, const cltopk_consts *) =
            rq->select ? a->select_predict : a->predict;
        r->ok = pf && cltopk_can_run(ctx, a, rq, r->why, sizeof r->why);
        if (!r->ok)
            continue;
        r->t = pf(ctx, rq, c);
        if (r->t >= 0 && a->on_device && !rq->on_device && c)
            r->t += (double)rq->n * rq->bytes / c->h2d;
        if (r->t >= 0 && (*best < 0 || r->t < rows[*best].t))
            *best = (int)i;
    }
    return CLTOPK_OK;
}

int cltopk_choose(cltopk_context *ctx, const cltopk_request *rq, cltopk_algo algo,
                  const cltopk_algorithm **out)
{
    char why[512] = "";
    if (algo != CLTOPK_ALGO_AUTO) {
        const cltopk_algorithm *a = cltopk_algorithm_get(algo);
        if (!a)
            return cltopk_fail(ctx, CLTOPK_ERR_BAD_ALGO, "unknown algorithm %d", (int)algo);
        if (!cltopk_can_run(ctx, a, rq, why, sizeof why))
            return cltopk_fail(ctx, CLTOPK_ERR_UNSUPPORTED, "%s", why);
        *out = a;
        return CLTOPK_OK;
    }
    plan_row rows[CLTOPK_RECORDS_MAX];
    cltopk_consts pc;
    int best, st = plan_rows(ctx, rq, rows, &best, &pc);
    if (st != CLTOPK_OK)
        return st;
    if (best < 0)
        return cltopk_fail(ctx, CLTOPK_ERR_INTERNAL,
                           "the planner found no algorithm for n = %zu, k = %zu", rq->n, rq->k);
    *out = rows[best].a;
    return CLTOPK_OK;
}

#if HAVE_OPENCL
int cltopk_multi_split(cltopk_context *ctx, const cltopk_request *rq, cltopk_algo algo,
                       size_t *lens, const cltopk_algorithm **recs, double *secs, int *split,
                       double *host_secs)
{
    size_t nd = ctx->nmembers + 1;
    plan_row rows[CLTOPK_RECORDS_MAX];
    cltopk_consts pc;
    double speed = 0, host = -1;
    int st, best;
    *split = 0;
    *host_secs = -1;
    const cltopk_algorithm *named = algo == CLTOPK_ALGO_AUTO ? NULL : cltopk_algorithm_get(algo);
    if (named && !named->on_device)
        return CLTOPK_OK; /* a host algorithm: once, on the host */
    for (size_t d = 0; d < nd; d++) {
        cltopk_context *dc = cltopk_device_at(ctx, d);
        if (named) {
            char why[512];
            if (!cltopk_can_run(dc, named, rq, why, sizeof why))
                return cltopk_fail(ctx, CLTOPK_ERR_UNSUPPORTED, "on %s: %s", dc->name, why);
        }
        if ((st = plan_rows(dc, rq, rows, &best, &pc)) != CLTOPK_OK) {
            if (dc != ctx)
                cltopk_fail(ctx, st, "on %s: %s", dc->name, dc->err);
            return st;
        }
        /* the device's time: the named record's prediction, else (or where it
         * has none) the fastest device record's; AUTO's host record apart */
        recs[d] = named;
        secs[d] = -1;
        for (size_t i = 0; i < cltopk_algorithm_count; i++) {
            const plan_row *r = &rows[i];
            if (!r->ok || r->t < 0)
                continue;
            if (!r->a->on_device) {
                if (d == 0 && (host < 0 || r->t < host))
                    host = r->t;
                continue;
            }
            if (secs[d] < 0 || r->t < secs[d]) {
                secs[d] = r->t;
                if (!named)
                    recs[d] = r->a;
            }
        }
        if (secs[d] <= 0)
            return cltopk_fail(ctx, CLTOPK_ERR_INTERNAL, "the planner predicts no time for "
                               "n = %zu, k = %zu on %s", rq->n, rq->k, dc->name);
        speed += 1 / secs[d];
    }
    *host_secs = host;
    size_t given = 0, fastest = 0;
    for (size_t d = 0; d < nd; d++) {
        lens[d] = (size_t)((double)rq->n * (1 / secs[d]) / speed);
        if (lens[d] > rq->n - given)
            lens[d] = rq->n - given;
        given += lens[d];
        if (secs[d] < secs[fastest])
            fastest = d;
    }
    lens[fastest] += rq->n - given;
    /* AUTO: the host alone where it beats the devices together */
    *split = named || host < 0 || host >= 1 / speed;
    return CLTOPK_OK;
}

/* the split of host data on a context of several devices, for explain */
static size_t explain_split(cltopk_context *ctx, const cltopk_request *rq, char *buf,
                            size_t len)
{
    size_t nd = ctx->nmembers + 1, o = 0, lens[CLTOPK_DEVICES_MAX];
    const cltopk_algorithm *recs[CLTOPK_DEVICES_MAX];
    double secs[CLTOPK_DEVICES_MAX], host;
    int split, w;
    cltopk_request prq = *rq;
    prq.select = 0; /* each device runs the top-k of its part */
    prq.tune = &prq.tune_store;
    int st = cltopk_multi_split(ctx, &prq, CLTOPK_ALGO_AUTO, lens, recs, secs, &split, &host);
    if (st != CLTOPK_OK)
        w = snprintf(buf, len, "split: none: %s\n", ctx->err);
    else if (!split) {
        double speed = 0;
        for (size_t d = 0; d < nd; d++)
            speed += 1 / secs[d];
        w = snprintf(buf, len, "split: none: AUTO runs on the host (predicted %.3f ms; the %zu "
                     "devices together %.3f ms); by the devices' speeds:\n",
                     host * 1e3, nd, 1e3 / speed);
    }
    else
        w = snprintf(buf, len, "split over %zu devices, in proportion to each one's predicted "
                     "speed (AUTO; a named device algorithm splits by its own predictions):\n",
                     nd);
    o += w > 0 ? (size_t)w : 0;
    for (size_t d = 0; st == CLTOPK_OK && d < nd; d++) {
        cltopk_context *dc = cltopk_device_at(ctx, d);
        w = snprintf(buf + o, o < len ? len - o : 0,
                     "   %u:%u %-36.36s %s %12zu elements (%5.1f%%); %s predicted %.3f ms for "
                     "the whole input\n", dc->caps.pi, dc->caps.di, dc->caps.device_name,
                     split ? "gets" : "would get", lens[d],
                     rq->n ? 100.0 * (double)lens[d] / (double)rq->n : 0.0, recs[d]->name,
                     secs[d] * 1e3);
        o += w > 0 ? (size_t)w : 0;
    }
    return o;
}
#endif

int cltopk_plan_explain(cltopk_context *ctx, const cltopk_request *rq, char *buf, size_t len)
{
    plan_row rows[CLTOPK_RECORDS_MAX];
    cltopk_consts pc;
    int best, st = plan_rows(ctx, rq, rows, &best, &pc);
    if (st != CLTOPK_OK)
        return st;
    size_t o = 0;
#define PUT(...)                                                                                \
    do {                                                                                        \
        int w_ = snprintf(buf + o, o < len ? len - o : 0, __VA_ARGS__);                         \
        if (w_ > 0)                                                                             \
            o += (size_t)w_;                                                                    \
    } while (0)
    PUT("plan for %s n = %zu, k = %zu, %s, %s, %s data, on %s\n",
        rq->select ? "the selection of rank k - 1 of" : "the top-k of", rq->n, rq->k,
        cltopk_dtype_name(rq->type), rq->smallest ? "smallest" : "largest",
        rq->on_device ? "device" : "host", ctx->name);
    if (ctx->is_cl)
        PUT("constants: read %.1f GB/s, launch %.1f us, local %.3g incr/s, host->device "
            "%.1f GB/s, host read %.1f GB/s\n",
            pc.bw / 1e9, pc.launch * 1e6, pc.lrate, pc.h2d / 1e9, pc.cpubw / 1e9);
    for (size_t i = 0; i < cltopk_algorithm_count; i++) {
        const plan_row *r = &rows[i];
        const char *mark = (int)i == best ? "->" : "  ";
        if (!r->a->predict)
            PUT("   %-13s never chosen by AUTO (named only)\n", r->a->name);
        else if (!r->ok)
            PUT("   %-13s unsupported: %s\n", r->a->name, r->why);
        else if (r->t < 0)
            PUT("   %-13s not considered for this call\n", r->a->name);
        else if (ctx->is_cl)
            PUT("%s %-13s predicted %10.3f ms\n", mark, r->a->name, r->t * 1e3);
        else
            PUT("%s %-13s (the CPU planner's choice)\n", mark, r->a->name);
    }
    PUT("choice: %s\n", best >= 0 ? rows[best].a->name : "none");
#if HAVE_OPENCL
    if (ctx->is_cl && !rq->on_device)
        o += cltopk_staging_describe(ctx, rq, buf + o, o < len ? len - o : 0);
    if (ctx->is_cl && ctx->nmembers && rq->on_device)
        PUT("split: none: device data stays on the first device (%s)\n", ctx->caps.device_name);
    else if (ctx->is_cl && ctx->nmembers)
        o += explain_split(ctx, rq, buf + o, o < len ? len - o : 0);
#endif
#undef PUT
    if (o >= len)
        buf[len - 1] = 0;
    return CLTOPK_OK;
}
