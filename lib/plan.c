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
        /* a selection asks a top-k record too, for explain's line (named, it
         * answers through its top-k of rank + 1) */
        r->ok = (pf || (rq->select && a->predict)) && cltopk_can_run(ctx, a, rq, r->why,
                                                                     sizeof r->why);
        if (!r->ok || !pf) {
            r->ok = 0;
            continue;
        }
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
    double t;
    return cltopk_plan_time(ctx, rq, algo, 0, out, &t);
}

int cltopk_plan_time(cltopk_context *ctx, const cltopk_request *rq, cltopk_algo algo,
                     int device_only, const cltopk_algorithm **out, double *t)
{
    plan_row rows[CLTOPK_RECORDS_MAX];
    cltopk_consts pc;
    int best, st = plan_rows(ctx, rq, rows, &best, &pc);
    if (st != CLTOPK_OK)
        return st;
    if (algo == CLTOPK_ALGO_AUTO && device_only && best >= 0 && !rows[best].a->on_device) {
        /* the fastest device record by its model, else the first that can
         * run rq in the table's order */
        best = -1;
        for (size_t i = 0; i < cltopk_algorithm_count; i++)
            if (rows[i].a->on_device && rows[i].ok && rows[i].t >= 0 &&
                (best < 0 || rows[i].t < rows[best].t))
                best = (int)i;
        for (size_t i = 0; i < cltopk_algorithm_count && best < 0; i++)
            if (rows[i].a->on_device &&
                cltopk_can_run(ctx, rows[i].a, rq, rows[i].why, sizeof rows[i].why))
                best = (int)i;
    }
    if (algo != CLTOPK_ALGO_AUTO) {
        for (size_t i = 0; i < cltopk_algorithm_count; i++)
            if (rows[i].a->id == algo) {
                if (!cltopk_can_run(ctx, rows[i].a, rq, rows[i].why, sizeof rows[i].why))
                    return cltopk_fail(ctx, CLTOPK_ERR_UNSUPPORTED, "%s", rows[i].why);
                best = (int)i;
                break;
            }
        if (best < 0 || rows[best].a->id != algo)
            return cltopk_fail(ctx, CLTOPK_ERR_BAD_ALGO, "unknown algorithm %d", (int)algo);
    } else if (best < 0) {
        return cltopk_fail(ctx, CLTOPK_ERR_INTERNAL,
                           "the planner found no algorithm for n = %zu, k = %zu", rq->n, rq->k);
    }
    *out = rows[best].a;
    *t = rows[best].t;
    return CLTOPK_OK;
}

#if HAVE_OPENCL
/* CLTOPK_SPLIT: 0 "model", 1 "measured" (and unset); -1 another value, the
 * detail set in ctx */
static int split_mode(cltopk_context *ctx)
{
    const char *v = cltopk_env("CLTOPK_SPLIT");
    if (!v || !strcmp(v, "measured"))
        return 1;
    if (!strcmp(v, "model"))
        return 0;
    cltopk_fail(ctx, CLTOPK_ERR_UNSUPPORTED,
                "CLTOPK_SPLIT=\"%s\": use measured (split host data over the devices by their "
                "measured speeds, the default) or model (by the planner's predicted speeds)", v);
    return -1;
}

/* the rates' slot of a key size */
static int split_slot(int bytes)
{
    return bytes == 8;
}

void cltopk_split_record(cltopk_context *ctx, int bytes, const size_t *lens, const double *secs,
                         double call)
{
    size_t nd = ctx->nmembers + 1, parts = 0;
    int s = split_slot(bytes);
    double slowest = 0;
    for (size_t d = 0; d < nd; d++) {
        if (!lens[d] || secs[d] <= 0)
            continue;
        cltopk_context *dc = cltopk_device_at(ctx, d);
        double r = (double)lens[d] / secs[d];
        dc->split_rate[s] = dc->split_rate[s] > 0 ? 0.5 * (dc->split_rate[s] + r) : r;
        if (secs[d] > slowest)
            slowest = secs[d];
        parts++;
    }
    if (parts > 1) {
        double o = call > slowest ? call - slowest : 0;
        ctx->split_over[s] = ctx->split_over[s] > 0 ? 0.5 * (ctx->split_over[s] + o) : o;
    }
    ctx->split_left[s] = parts < nd ? ctx->split_left[s] + 1 : 0;
}

int cltopk_multi_split(cltopk_context *ctx, const cltopk_request *rq, cltopk_algo algo,
                       cltopk_split *sp)
{
    size_t nd = ctx->nmembers + 1;
    plan_row rows[CLTOPK_RECORDS_MAX];
    cltopk_consts pc;
    double host = -1;
    int st, best, slot = split_slot(rq->bytes);
    memset(sp, 0, sizeof *sp);
    sp->host = -1;
    if ((sp->mode = split_mode(ctx)) < 0)
        return CLTOPK_ERR_UNSUPPORTED;
    const cltopk_algorithm *named = algo == CLTOPK_ALGO_AUTO ? NULL : cltopk_algorithm_get(algo);
    if (named && !named->on_device)
        return CLTOPK_OK; /* a host algorithm: once, on the host */
    sp->measured = sp->mode == 1;
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
        sp->recs[d] = named;
        sp->model[d] = -1;
        for (size_t i = 0; i < cltopk_algorithm_count; i++) {
            const plan_row *r = &rows[i];
            if (!r->ok || r->t < 0)
                continue;
            if (!r->a->on_device) {
                if (d == 0 && (host < 0 || r->t < host))
                    host = r->t;
                continue;
            }
            if (sp->model[d] < 0 || r->t < sp->model[d]) {
                sp->model[d] = r->t;
                if (!named)
                    sp->recs[d] = r->a;
            }
        }
        if (sp->model[d] <= 0)
            return cltopk_fail(ctx, CLTOPK_ERR_INTERNAL, "the planner predicts no time for "
                               "n = %zu, k = %zu on %s", rq->n, rq->k, dc->name);
        sp->rate[d] = dc->split_rate[slot];
        if (!(sp->rate[d] > 0))
            sp->measured = 0; /* every device measured, or none used */
    }
    sp->host = host;
    sp->over = sp->measured ? ctx->split_over[slot] : 0;
    for (size_t d = 0; d < nd; d++)
        sp->secs[d] = sp->measured ? (double)(rq->n ? rq->n : 1) / sp->rate[d] : sp->model[d];
    /* the devices fastest first; the first m of them together take
     * 1 / (their speeds' sum), plus the split's own cost where m > 1: the m
     * with the least (by the model, whose split costs nothing, all of them;
     * all of them too on a probe, so that a device left out on a slow
     * measurement is not left out for good) */
    sp->probe = sp->measured && ctx->split_left[slot] >= CLTOPK_SPLIT_PROBE;
    size_t order[CLTOPK_DEVICES_MAX];
    for (size_t d = 0; d < nd; d++) {
        size_t j = d;
        for (; j > 0 && sp->secs[order[j - 1]] > sp->secs[d]; j--)
            order[j] = order[j - 1];
        order[j] = d;
    }
    double speed = 0, use_speed = 0;
    sp->used = 0;
    for (size_t m = 1; m <= nd; m++) {
        speed += 1 / sp->secs[order[m - 1]];
        double t = 1 / speed + (m > 1 ? sp->over : 0);
        if (m == 1 || t < sp->devices || sp->probe) {
            sp->devices = t;
            sp->used = m;
            use_speed = speed;
        }
    }
    size_t given = 0;
    for (size_t m = 0; m < nd; m++) {
        size_t d = order[m];
        size_t len = m < sp->used ? (size_t)((double)rq->n * (1 / sp->secs[d]) / use_speed) : 0;
        if (len > rq->n - given)
            len = rq->n - given;
        sp->lens[d] = len;
        given += len;
    }
    sp->lens[order[0]] += rq->n - given;
    /* AUTO: the host alone where it beats the devices */
    sp->split = named || host < 0 || host >= sp->devices;
    return CLTOPK_OK;
}

/* the split of host data on a context of several devices, for explain */
static size_t explain_split(cltopk_context *ctx, const cltopk_request *rq, char *buf,
                            size_t len)
{
    size_t nd = ctx->nmembers + 1, o = 0;
    cltopk_split sp;
    int w;
    cltopk_request prq = *rq;
    prq.select = 0; /* each device runs the top-k of its part */
    prq.tune = &prq.tune_store;
    int st = cltopk_multi_split(ctx, &prq, CLTOPK_ALGO_AUTO, &sp);
    char why[200];
    if (sp.measured)
        snprintf(why, sizeof why, "by the speeds measured in this context's earlier splits of "
                 "%d-byte keys (CLTOPK_SPLIT=measured; a split costs %.3f ms besides its parts)",
                 rq->bytes, sp.over * 1e3);
    else if (sp.mode == 1)
        snprintf(why, sizeof why, "by the model's predicted speeds: no split of %d-byte keys "
                 "measured yet on every device (CLTOPK_SPLIT=measured)", rq->bytes);
    else
        snprintf(why, sizeof why, "by the model's predicted speeds (CLTOPK_SPLIT=model)");
    if (st != CLTOPK_OK) {
        w = snprintf(buf, len, "split: none: %s\n", ctx->err);
        ctx->err[0] = 0; /* explain itself succeeds */
    }
    else if (!sp.split)
        w = snprintf(buf, len, "split: none: AUTO runs on the host (predicted %.3f ms; the "
                     "devices %.3f ms %s); by the devices' speeds:\n",
                     sp.host * 1e3, sp.devices * 1e3, why);
    else
        w = snprintf(buf, len, "split over %zu of %zu devices %s, each part in proportion to "
                     "its device's speed%s; predicted %.3f ms:\n", sp.used, nd, why,
                     sp.probe ? " (every device: a probe after splits that left some out)" : "",
                     sp.devices * 1e3);
    o += w > 0 ? (size_t)w : 0;
    for (size_t d = 0; st == CLTOPK_OK && d < nd; d++) {
        cltopk_context *dc = cltopk_device_at(ctx, d);
        char rate[64] = "";
        if (sp.rate[d] > 0)
            snprintf(rate, sizeof rate, "; measured %.4g M elements/s", sp.rate[d] * 1e-6);
        w = snprintf(buf + o, o < len ? len - o : 0,
                     "   %u:%u %-36.36s %s %12zu elements (%5.1f%%); %s predicted %.3f ms for "
                     "the whole input%s\n", dc->caps.pi, dc->caps.di, dc->caps.device_name,
                     sp.split ? "gets" : "would get", sp.lens[d],
                     rq->n ? 100.0 * (double)sp.lens[d] / (double)rq->n : 0.0,
                     sp.recs[d]->name, sp.model[d] * 1e3, rate);
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
        else if (rq->select && !r->a->select_predict && !r->why[0])
            PUT("   %-13s no selection of its own (named, it answers through its top-k of "
                "rank + 1)\n", r->a->name);
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
