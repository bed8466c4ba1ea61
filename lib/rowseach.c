/* rowseach.c - many rows of device data a row at a time: each dense row or
 * segment of a cl_mem by a single-array device algorithm (sample filter,
 * radix select, the sort, ...), its answer into scratch and then copied to
 * the row's place in the outputs, so that the data never leaves the device.
 * This is the rows calls' way for k above the device kernel's largest (2048
 * for 4-byte keys where local memory is 48 KiB), where AUTO otherwise reads
 * the input back and runs the CPU heap (cltopk_rows_cpu_on_buffer): AUTO
 * takes it where the model predicts it faster (a few long rows), and a named
 * single-array algorithm asks for it.  Every row follows THE ORDER as a
 * single array does (ties by smaller position), so the bits equal the CPU's.
 * CLTOPK_BITS each=on|off forces the choice (tests). */
#include "internal.h"
#include "../cpu/isa.h"

#if HAVE_OPENCL

#include <math.h>
#include <stdio.h>

/* row r's first element (from the input's start) and its length */
static void each_row(const cltopk_rows_job *job, size_t r, size_t *start, size_t *len)
{
    if (job->mode == ROWS_DENSE) {
        *start = r * job->ld;
        *len = job->cols;
    } else {
        *start = (size_t)job->offsets[r];
        *len = (size_t)(job->offsets[r + 1] - job->offsets[r]);
    }
}

/* the single-array request of a row of n elements from element `start` (k
 * capped at n), its outputs into the scratch buffers ok / oi */
static cltopk_request each_request(const cltopk_request *rq, size_t start, size_t n, cl_mem ok,
                                   cl_mem oi)
{
    cltopk_request r = *rq; /* (r.tune: rq's cache of the tuning variables) */
    r.n = n;
    r.k = rq->k < n ? rq->k : n;
    r.select = 0;
    r.doffset = rq->doffset + start;
    r.dout_keys = rq->want_keys ? ok : NULL;
    r.dout_index = rq->want_index ? oi : NULL;
    r.num_wait = 0;
    r.wait = NULL;
    r.pk_starts = NULL;
    r.pk_nblocks = 0;
    return r;
}

/* AUTO's algorithm for a row: the planner's choice among the device's
 * records (a short row whose planner prefers the host takes the fastest
 * device record, so that nothing blocks), or the sort where its model is
 * faster: AUTO weighs the sort of a single array only from k = n / 4, but a
 * row's launches count more than its bytes (64 x 131072 at k = 4096 on the
 * H200: 7.5 ms a sort a row, 15.5 ms a sample filter a row) */
static int each_auto(cltopk_context *ctx, const cltopk_request *one, int device_only,
                     const cltopk_algorithm **a, double *t)
{
    int st = cltopk_plan_time(ctx, one, CLTOPK_ALGO_AUTO, device_only, a, t);
    cltopk_consts c;
    char why[256];
    if (st == CLTOPK_OK && *t >= 0 && (*a)->on_device && (*a)->id != CLTOPK_ALGO_SORT &&
        cltopk_consts_get(ctx, &c) == CLTOPK_OK &&
        cltopk_can_run(ctx, &cltopk_algo_sort, one, why, sizeof why)) {
        double ts = cltopk_devsort_time(&c, one->n, one->bytes);
        if (ts < *t) {
            *a = &cltopk_algo_sort;
            *t = ts;
        }
    }
    return st;
}

/* seconds the host adds to each row a row at a time on the device: the H200
 * took 95-108 us a row of 131072 float32 at k = 4096 by the sort (64 rows:
 * 6.1-6.9 ms), where the sort's model said 51 (3.28 ms); its host enqueues
 * some ten launches and copies a row at about 5 us each (bench/RESULTS.md) */
#define EACH_ROW_HOST 45e-6

/* seconds a row's selection and sort take a pair and level (k (log2 k + 1)
 * of them) on one thread: on 2 cores, 64 x 131072 at k = 4096 took 32 rows
 * a thread in 10.7 ms */
#define CPU_PAIR_LEVEL 6.5e-9

double cltopk_rows_staged_time(cltopk_context *ctx, const cltopk_request *rq,
                               const cltopk_rows_job *job)
{
    cltopk_consts c;
    if (!ctx->is_cl || cltopk_consts_get(ctx, &c) != CLTOPK_OK)
        return -1;
    double in = (double)rq->n * rq->bytes, out = (double)job->nrows * rq->k * (rq->bytes + 8);
    /* the input read back, the heap's scan at about the host's read speed,
     * the outputs written; and each row's selection and sort of its k, some
     * CPU_PAIR_LEVEL seconds a pair and level on one thread, the rows shared
     * by the threads (64 x 131072 at k = 4096: 11.1 ms on 2 cores, where the
     * read is 0.3-0.5; 2.66 ms on the 16 of the H200's host, where the
     * model's 256 bytes of the host's read a pair and level had said 5.7 and
     * AUTO took the sort a row at a time on the device: 6.25 ms) */
    double lk = rq->k > 1 ? log2((double)rq->k) : 0;
    double nt = cltopk_cpu_threads(), per = ceil((double)job->nrows / (nt >= 1 ? nt : 1));
    return (in + out) / c.h2d + in / c.cpubw + per * (double)rq->k * (lk + 1) * CPU_PAIR_LEVEL;
}

int cltopk_rows_each_can(cltopk_context *ctx, const cltopk_request *rq, const cltopk_rows_job *job,
                         cltopk_algo algo, double *secs, const char **name, char *why,
                         size_t whylen)
{
    if (!ctx->is_cl || !rq->on_device || (job->mode != ROWS_DENSE && job->mode != ROWS_SEGMENTS)) {
        snprintf(why, whylen, "a row at a time takes dense rows or segments of cl_mem data");
        return 0;
    }
    if (job->ibase) {
        snprintf(why, whylen, "a row at a time writes positions within the row");
        return 0;
    }
    if (job->nrows == 0)
        return 1;
    /* a row of the average length stands for all (the longest for a named
     * algorithm's limits) */
    size_t longest = 0, total = 0;
    for (size_t r = 0; r < job->nrows; r++) {
        size_t s, n;
        each_row(job, r, &s, &n);
        total += n;
        if (n > longest)
            longest = n;
    }
    if (longest == 0) {
        if (secs)
            *secs = (double)job->nrows * 2e-6;
        if (name)
            *name = "none (every segment empty)";
        return 1;
    }
    size_t avg = (total + job->nrows - 1) / job->nrows;
    cltopk_request r = each_request(rq, 0, algo == CLTOPK_ALGO_AUTO ? avg : longest, NULL, NULL);
    const cltopk_algorithm *a;
    double t = -1;
    /* (AUTO: the device's records alone, as the run takes them (each_pick):
     * whether the host is faster is the caller's comparison of *secs with a
     * host copy's time, not a refusal here, so that each=on does not hang on
     * the measured constants of a loaded machine) */
    int st = algo == CLTOPK_ALGO_AUTO ? each_auto(ctx, &r, 1, &a, &t)
                                      : cltopk_plan_time(ctx, &r, algo, 0, &a, &t);
    if (st != CLTOPK_OK) {
        snprintf(why, whylen, "a row of %zu at k = %zu: %s", r.n, r.k, ctx->err);
        ctx->err[0] = 0;
        return 0;
    }
    if (!a->on_device) {
        snprintf(why, whylen, "%s runs a row of %zu at k = %zu on the host, not on the device",
                 algo == CLTOPK_ALGO_AUTO ? "AUTO" : a->name, r.n, r.k);
        return 0;
    }
    if (secs) {
        cltopk_consts c = {0};
        double launch = cltopk_consts_get(ctx, &c) == CLTOPK_OK ? c.launch : 1e-5;
        /* the row's time (its model's, or a read at the device's rate), its
         * two copies, and the host's enqueueing of its launches, which the
         * device's back-to-back launch cost does not count */
        double row = t >= 0 ? t : 3.0 * r.n * rq->bytes / (c.bw > 0 ? c.bw : 1e11) + 10 * launch;
        *secs = (double)job->nrows * (row + 2 * launch + EACH_ROW_HOST);
    }
    if (name)
        *name = a->name;
    return 1;
}

static int each_copy(cltopk_context *ctx, cl_mem src, cl_mem dst, size_t at, size_t bytes)
{
    cl_event *own, ev = NULL;
    cl_uint n = cltopk_after_own(ctx, &own);
    cl_int err = clEnqueueCopyBuffer(ctx->queue, src, dst, 0, at, bytes, n, own, &ev);
    if (err != CL_SUCCESS)
        return cltopk_clfail(ctx, err, "copying a row's answer to its place (clEnqueueCopyBuffer)");
    cltopk_own_event(ctx, ev);
    return CLTOPK_OK;
}

static int each_fill(cltopk_context *ctx, cl_mem dst, const void *pat, size_t psize, size_t at,
                     size_t bytes)
{
    cl_event *own, ev = NULL;
    cl_uint n = cltopk_after_own(ctx, &own);
    cl_int err = clEnqueueFillBuffer(ctx->queue, dst, pat, psize, at, bytes, n, own, &ev);
    if (err != CL_SUCCESS)
        return cltopk_clfail(ctx, err, "padding a short segment's answer (clEnqueueFillBuffer)");
    cltopk_own_event(ctx, ev);
    return CLTOPK_OK;
}

/* a row's algorithm: the named one, or AUTO's (each_auto) */
static int each_pick(cltopk_context *ctx, const cltopk_request *one, cltopk_algo algo,
                     const cltopk_algorithm **a)
{
    double t;
    return algo == CLTOPK_ALGO_AUTO ? each_auto(ctx, one, 1, a, &t)
                                    : cltopk_choose(ctx, one, algo, a);
}

int cltopk_rows_dev_each(cltopk_context *ctx, const cltopk_request *rq,
                         const cltopk_rows_job *job, cltopk_algo algo)
{
    size_t kb = (size_t)rq->bytes, k = rq->k;
    cl_mem ok = NULL, oi = NULL;
    int st = CLTOPK_OK;
    if (job->nrows == 0 || k == 0)
        return CLTOPK_OK;
    if ((rq->want_keys && (st = cltopk_scratch(ctx, SCR_EACH_K, k * kb, &ok)) != CLTOPK_OK) ||
        (rq->want_index && (st = cltopk_scratch(ctx, SCR_EACH_I, k * 8, &oi)) != CLTOPK_OK))
        return st;
    /* the caller's wait list, once, as the context's last event */
    if ((st = cltopk_own_after_wait(ctx, rq)) != CLTOPK_OK)
        return st;
    const cltopk_algorithm *a = NULL;
    size_t alen = SIZE_MAX; /* the row length a was chosen for */
    const cl_long none = -1;
    const cl_ulong zero = 0;
    for (size_t r = 0; r < job->nrows && st == CLTOPK_OK; r++) {
        size_t start, n;
        each_row(job, r, &start, &n);
        cltopk_request one = each_request(rq, start, n, ok, oi);
        size_t kr = one.k;
        if (kr) {
            if (n != alen || !a) {
                if ((st = each_pick(ctx, &one, algo, &a)) != CLTOPK_OK)
                    break;
                alen = n;
            }
            st = a->on_device ? a->run_buffer(ctx, &one) : cltopk_host_on_buffer(ctx, &one, a,
                                                                                 SIZE_MAX);
            if (st == CLTOPK_OK && ok)
                st = each_copy(ctx, ok, rq->dout_keys, r * k * kb, kr * kb);
            if (st == CLTOPK_OK && oi)
                st = each_copy(ctx, oi, rq->dout_index, r * k * 8, kr * 8);
        }
        if (st == CLTOPK_OK && kr < k && ok)
            st = each_fill(ctx, rq->dout_keys, &zero, kb, (r * k + kr) * kb, (k - kr) * kb);
        if (st == CLTOPK_OK && kr < k && oi)
            st = each_fill(ctx, rq->dout_index, &none, 8, (r * k + kr) * 8, (k - kr) * 8);
    }
    return st;
}

#endif
