/* rows.c - the API of many top-k at once: cltopk_topk_rows, cltopk_topk_segments,
 * cltopk_knn and their cl_mem forms.  Each validates everything before it
 * writes anything, describes the call once (a cltopk_request for the type,
 * order, k, outputs and data, and a cltopk_rows_job for the rows), chooses
 * where it runs and runs it:
 *   CLTOPK_ALGO_CPU_HEAP   OpenMP over the rows, the SIMD heap (cpu/rowscpu.c)
 *   CLTOPK_ALGO_BITS       the device kernel, a work-group a row (lib/rowsdev.c)
 *   CLTOPK_ALGO_AUTO       host data: the device kernel on a GPU where it can
 *                          run the call, else the CPU; cl_mem data: the device
 *                          kernel where it can, else the CPU on a host copy
 * kNN takes no algorithm: the device kernel on an OpenCL context where it can
 * run the call, else the CPU (the same bits either way). */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the four ways to run a job */
enum { RUN_CPU = 0, RUN_DEVICE = 1, RUN_CPU_STAGED = 2, RUN_DEVICE_EACH = 3 };

/* a single-array device record (any but bits, which is the rows' own
 * kernel), which the rows calls run a row at a time on cl_mem data */
static int one_array_device(cltopk_algo algo)
{
    const cltopk_algorithm *a = cltopk_algorithm_get(algo);
    return a && a->on_device && algo != CLTOPK_ALGO_BITS;
}

/* where the job runs, or a refusal (the context's lock is held) */
static int rows_choose(cltopk_context *ctx, const char *fn, cltopk_algo algo,
                       const cltopk_request *rq, const cltopk_rows_job *job, int *how)
{
    char why[512] = "";
    int dev = 0;
#if HAVE_OPENCL
    dev = cltopk_rows_dev_can(ctx, rq, job, why, sizeof why); /* says so on "cpu" */
#else
    snprintf(why, sizeof why, "this cltopk was built without OpenCL");
#endif
    if (algo == CLTOPK_ALGO_AUTO) {
#if HAVE_OPENCL
        int gpu = ctx->is_cl && (ctx->caps.type & CL_DEVICE_TYPE_GPU);
#else
        int gpu = 0;
#endif
        if (rq->on_device) {
            *how = dev ? RUN_DEVICE : RUN_CPU_STAGED;
#if HAVE_OPENCL
            /* what the device kernel cannot run: a row at a time on the
             * device, where the model (or CLTOPK_BITS each=on) says so */
            int each = *how == RUN_CPU_STAGED && job->mode != ROWS_KNN && ctx->is_cl
                           ? cltopk_rows_each_mode(ctx, rq, why, sizeof why)
                           : 2;
            if (each < 0)
                return cltopk_fail(ctx, CLTOPK_ERR_UNSUPPORTED, "%s: %s", fn, why);
            /* (auto: on GPUs only, where the model's constants were
             * measured; on any device where the host may not read the input,
             * which the host copy needs: it would fail) */
            const int noread = each == 0 && cltopk_mem_host_unreadable(rq->dkeys) != NULL;
            double te = -1,
                   ts = each == 0 && gpu && !noread ? cltopk_rows_staged_time(ctx, rq, job) : -1;
            if ((each == 1 || (each == 0 && (gpu || noread))) &&
                cltopk_rows_each_can(ctx, rq, job, CLTOPK_ALGO_AUTO, &te, NULL, why,
                                     sizeof why) &&
                (each == 1 || noread || (ts >= 0 && te >= 0 && te < ts)))
                *how = RUN_DEVICE_EACH;
#endif
        } else
            *how = dev && (gpu || job->mode == ROWS_KNN) ? RUN_DEVICE : RUN_CPU;
        return CLTOPK_OK;
    }
    if (algo == CLTOPK_ALGO_CPU_HEAP) {
        if (rq->on_device)
            return cltopk_fail(ctx, CLTOPK_ERR_UNSUPPORTED,
                               "%s: cpu-heap runs on host memory; cl_mem data takes bits or "
                               "CLTOPK_ALGO_AUTO", fn);
        *how = RUN_CPU;
        return CLTOPK_OK;
    }
    if (algo == CLTOPK_ALGO_BITS) {
        if (!dev)
            return cltopk_fail(ctx, CLTOPK_ERR_UNSUPPORTED, "%s: bits cannot run this call: %s",
                               fn, why);
        *how = RUN_DEVICE;
        return CLTOPK_OK;
    }
    if (one_array_device(algo) && job->mode != ROWS_KNN) {
        if (!rq->on_device)
            return cltopk_fail(ctx, CLTOPK_ERR_UNSUPPORTED,
                               "%s: %s runs a row at a time on cl_mem data; host data takes "
                               "auto, cpu-heap or bits", fn, cltopk_algo_name(algo));
#if HAVE_OPENCL
        if (!cltopk_rows_each_can(ctx, rq, job, algo, NULL, NULL, why, sizeof why))
            return cltopk_fail(ctx, CLTOPK_ERR_UNSUPPORTED, "%s: %s a row at a time: %s", fn,
                               cltopk_algo_name(algo), why);
        *how = RUN_DEVICE_EACH;
        return CLTOPK_OK;
#endif
    }
    return cltopk_fail(ctx, CLTOPK_ERR_UNSUPPORTED,
                       "%s: many rows take auto, cpu-heap or bits (and cl_mem rows or segments "
                       "a single-array device algorithm, a row at a time), not %s", fn,
                       cltopk_algo_name(algo));
}

/* run the described job the chosen way */
static int rows_run(cltopk_context *ctx, const char *fn, const cltopk_request *rq,
                    const cltopk_rows_job *job, int how, cltopk_algo algo)
{
    if (how == RUN_CPU) {
        int st = cltopk_cpu_rows(rq, job);
        return st == CLTOPK_OK ? st
                               : cltopk_fail(ctx, st, "%s: out of host memory for the CPU rows "
                                             "(fewer threads help: cltopk_set_threads)", fn);
    }
#if HAVE_OPENCL
    if (how == RUN_CPU_STAGED)
        return cltopk_rows_cpu_on_buffer(ctx, rq, job);
    if (how == RUN_DEVICE_EACH)
        return cltopk_rows_dev_each(ctx, rq, job, algo);
    return rq->on_device ? cltopk_rows_dev_buffer(ctx, rq, job) : cltopk_rows_dev_host(ctx, rq, job);
#else
    (void)algo;
    return cltopk_fail(ctx, CLTOPK_ERR_INTERNAL, "%s: no device path without OpenCL", fn);
#endif
}

/* dense rows: their arguments (rows x cols, ld) and the input's extent */
static int dense_args(cltopk_context *ctx, const char *fn, size_t rows, size_t cols, size_t ld,
                      size_t k, size_t *extent)
{
    if (ld < cols)
        return cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT,
                           "%s: ld = %zu is smaller than cols = %zu (ld is the distance of row "
                           "starts in elements, at least cols)", fn, ld, cols);
    if (k > cols)
        return cltopk_fail(ctx, CLTOPK_ERR_K_RANGE, "%s: k = %zu is larger than cols = %zu", fn,
                           k, cols);
    *extent = 0;
    if (rows == 0)
        return CLTOPK_OK;
    if (ld && rows - 1 > (SIZE_MAX / 16 - cols) / ld)
        return cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT,
                           "%s: rows = %zu of ld = %zu elements are too large", fn, rows, ld);
    *extent = (rows - 1) * ld + cols;
    return CLTOPK_OK;
}

/* segment offsets: nseg + 1 of them, from 0 up, never decreasing */
static int segment_args(cltopk_context *ctx, const char *fn, size_t nseg, const int64_t *offsets,
                        size_t *extent)
{
    *extent = 0;
    if (nseg == 0)
        return CLTOPK_OK;
    if (!offsets)
        return cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT,
                           "%s: offsets is NULL (nseg + 1 = %zu offsets are needed)", fn,
                           nseg + 1);
    if (nseg > SIZE_MAX / 16)
        return cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT, "%s: nseg = %zu is too large", fn,
                           nseg);
    if (offsets[0] < 0)
        return cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT,
                           "%s: offsets[0] = %lld is negative", fn, (long long)offsets[0]);
    /* the first decrease (threads share the pass over millions of segments) */
    size_t bad = nseg;
#pragma omp parallel for reduction(min : bad) schedule(static) if (nseg > 65536)
    for (size_t s = 0; s < nseg; s++)
        if (offsets[s + 1] < offsets[s] && s < bad)
            bad = s;
    if (bad < nseg)
        return cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT,
                           "%s: offsets[%zu] = %lld is smaller than offsets[%zu] = %lld "
                           "(offsets must not decrease)", fn, bad + 1,
                           (long long)offsets[bad + 1], bad, (long long)offsets[bad]);
    if ((uint64_t)offsets[nseg] > SIZE_MAX / 16)
        return cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT,
                           "%s: offsets[%zu] = %lld is out of range", fn, nseg,
                           (long long)offsets[nseg]);
    *extent = (size_t)offsets[nseg];
    return CLTOPK_OK;
}

/* the outputs' element count rows * k, which must fit */
static int out_count(cltopk_context *ctx, const char *fn, size_t rows, size_t k, size_t *count)
{
    if (k && rows > SIZE_MAX / 16 / k)
        return cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT,
                           "%s: rows * k = %zu * %zu outputs are too many", fn, rows, k);
    *count = rows * k;
    return CLTOPK_OK;
}

/* a host job: described, checked, chosen and run (the lock is held) */
static int host_job(cltopk_context *ctx, const char *fn, cltopk_request *rq,
                    const cltopk_rows_job *job, cltopk_algo algo, const void *keys,
                    void *out_keys, int64_t *out_index)
{
    static const char empty[8];
    size_t count = 0;
    int st, how;
    if ((st = out_count(ctx, fn, job->nrows, rq->k, &count)) != CLTOPK_OK || count == 0)
        return st;
    /* an empty input (all segments empty) may come as NULL */
    if (!keys && rq->n == 0)
        keys = empty;
    if ((st = cltopk_describe_host(ctx, fn, rq, keys, out_keys, out_index, count)) !=
            CLTOPK_OK ||
        (st = rows_choose(ctx, fn, algo, rq, job, &how)) != CLTOPK_OK ||
        (st = cltopk_outputs_apart(ctx, fn, rq, count)) != CLTOPK_OK)
        return st;
    return rows_run(ctx, fn, rq, job, how, algo);
}

/* the job's own arguments (dense rows or segments) and the input's extent */
static int job_args(cltopk_context *ctx, const char *fn, const cltopk_rows_job *job, size_t k,
                    size_t *extent)
{
    if (job->mode == ROWS_DENSE)
        return dense_args(ctx, fn, job->nrows, job->cols, job->ld, k, extent);
    return segment_args(ctx, fn, job->nrows, job->offsets, extent);
}

/* validate the job and describe the request over its input */
static int job_describe(cltopk_context *ctx, const char *fn, cltopk_dtype type,
                        const cltopk_rows_job *job, size_t k, unsigned flags, cltopk_algo algo,
                        cltopk_request *rq)
{
    size_t extent = 0;
    int st = job_args(ctx, fn, job, k, &extent);
    return st == CLTOPK_OK
               ? cltopk_describe(ctx, fn, type, extent, k, flags, CLTOPK_SMALLEST, algo, rq)
               : st;
}

/* an entry point of host data (rows or segments) */
static int host_entry(cltopk_context *ctx, const char *fn, cltopk_dtype type, const void *keys,
                      const cltopk_rows_job *job, size_t k, unsigned flags, cltopk_algo algo,
                      void *out_keys, int64_t *out_index)
{
    if (!ctx)
        return cltopk_fail(NULL, CLTOPK_ERR_INVALID_ARGUMENT, "%s: ctx is NULL", fn);
    cltopk_enter(ctx);
    cltopk_request rq;
    int st = job_describe(ctx, fn, type, job, k, flags, algo, &rq);
    if (st == CLTOPK_OK)
        st = host_job(ctx, fn, &rq, job, algo, keys, out_keys, out_index);
    pthread_mutex_unlock(&ctx->lock);
    return st;
}

int cltopk_topk_rows(cltopk_context *ctx, cltopk_dtype type, const void *keys, size_t rows,
                     size_t cols, size_t ld, size_t k, unsigned flags, cltopk_algo algo,
                     void *out_keys, int64_t *out_index)
{
    cltopk_rows_job job = {.mode = ROWS_DENSE, .nrows = rows, .cols = cols, .ld = ld};
    return host_entry(ctx, "cltopk_topk_rows", type, keys, &job, k, flags, algo, out_keys,
                      out_index);
}

int cltopk_topk_segments(cltopk_context *ctx, cltopk_dtype type, const void *keys, size_t nseg,
                         const int64_t *offsets, size_t k, unsigned flags, cltopk_algo algo,
                         void *out_keys, int64_t *out_index)
{
    cltopk_rows_job job = {.mode = ROWS_SEGMENTS, .nrows = nseg, .offsets = offsets};
    return host_entry(ctx, "cltopk_topk_segments", type, keys, &job, k, flags, algo, out_keys,
                      out_index);
}

/* kNN's arguments: the metric, sizes and the request over the points */
static int knn_args(cltopk_context *ctx, const char *fn, cltopk_metric metric, size_t nq,
                    size_t np, size_t d, size_t k, cltopk_request *rq, cltopk_rows_job *job)
{
    if (metric != CLTOPK_L2SQ && metric != CLTOPK_INNER_PRODUCT)
        return cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT,
                           "%s: unknown metric %d (CLTOPK_L2SQ or CLTOPK_INNER_PRODUCT)", fn,
                           (int)metric);
    if (d == 0)
        return cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT,
                           "%s: d = 0 (points and queries need at least one dimension)", fn);
    if (nq == 0)
        return cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT,
                           "%s: nq = 0 (at least one query is needed)", fn);
    if (np > SIZE_MAX / 16 / d || nq > SIZE_MAX / 16 / d)
        return cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT,
                           "%s: %zu points or %zu queries of dimension %zu are too large", fn,
                           np, nq, d);
    if (k > np)
        return cltopk_fail(ctx, CLTOPK_ERR_K_RANGE, "%s: k = %zu is larger than np = %zu", fn,
                           k, np);
    int st = cltopk_describe(ctx, fn, CLTOPK_FLOAT32, np * d, k,
                             metric == CLTOPK_L2SQ ? CLTOPK_SMALLEST : 0u, CLTOPK_SMALLEST,
                             CLTOPK_ALGO_AUTO, rq);
    memset(job, 0, sizeof *job);
    job->mode = ROWS_KNN;
    job->nrows = nq;
    job->metric = (int)metric;
    job->np = np;
    job->d = d;
    return st;
}

int cltopk_knn(cltopk_context *ctx, cltopk_metric metric, const float *queries, size_t nq,
               const float *points, size_t np, size_t d, size_t k, float *out_dist,
               int64_t *out_index)
{
    const char *fn = "cltopk_knn";
    if (!ctx)
        return cltopk_fail(NULL, CLTOPK_ERR_INVALID_ARGUMENT, "%s: ctx is NULL", fn);
    cltopk_enter(ctx);
    cltopk_request rq;
    cltopk_rows_job job;
    int st = knn_args(ctx, fn, metric, nq, np, d, k, &rq, &job);
    if (st == CLTOPK_OK && k > 0 && !queries)
        st = cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT, "%s: queries is NULL", fn);
    if (st == CLTOPK_OK && k > 0 &&
        ((out_dist && (const void *)out_dist < (const void *)(queries + nq * d) &&
          (const void *)queries < (const void *)(out_dist + nq * k)) ||
         (out_index && (const void *)out_index < (const void *)(queries + nq * d) &&
          (const void *)queries < (const void *)(out_index + nq * k))))
        st = cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT,
                         "%s: an output overlaps the queries; give separate arrays", fn);
    if (st == CLTOPK_OK) {
        job.queries = queries;
        st = host_job(ctx, fn, &rq, &job, CLTOPK_ALGO_AUTO, points, out_dist, out_index);
    }
    pthread_mutex_unlock(&ctx->lock);
    return st;
}

/* ------------------------------------------------------------ cl_mem forms */

#if HAVE_OPENCL
/* a device job: described, checked, chosen and run; the event handed out */
static int buffer_job(cltopk_context *ctx, const char *fn, cltopk_request *rq,
                      const cltopk_rows_job *job, cltopk_algo algo, cl_mem keys, size_t offset,
                      cl_mem out_keys, cl_mem out_index, cl_uint num_wait, const cl_event *wait,
                      cl_event *done)
{
    size_t count = 0;
    int st, how, nothing;
    if ((st = out_count(ctx, fn, job->nrows, rq->k, &count)) != CLTOPK_OK ||
        (st = cltopk_buffer_start(ctx, fn, count, num_wait, wait, done, &nothing)) !=
            CLTOPK_OK ||
        nothing)
        return st;
    if ((st = cltopk_describe_buffer(ctx, fn, rq, keys, offset, out_keys, out_index, count,
                                     num_wait, wait)) != CLTOPK_OK ||
        (st = rows_choose(ctx, fn, algo, rq, job, &how)) != CLTOPK_OK ||
        (st = cltopk_outputs_apart(ctx, fn, rq, count)) != CLTOPK_OK ||
        (job->mode == ROWS_KNN &&
         (st = cltopk_outputs_apart_from(ctx, fn, rq, count, "the queries", job->dqueries,
                                         job->qoffset * 4, job->nrows * job->d * 4)) !=
             CLTOPK_OK) ||
        (st = rows_run(ctx, fn, rq, job, how, algo)) != CLTOPK_OK)
        return st;
    return cltopk_hand_off(ctx, done);
}
#endif

#if HAVE_OPENCL
/* an entry point of device data (rows or segments) */
static int buffer_entry(cltopk_context *ctx, const char *fn, cltopk_dtype type, cl_mem keys,
                        size_t offset, const cltopk_rows_job *job, size_t k, unsigned flags,
                        cltopk_algo algo, cl_mem out_keys, cl_mem out_index, cl_uint num_wait,
                        const cl_event *wait, cl_event *done)
{
    cltopk_enter(ctx);
    cltopk_request rq;
    int st = job_describe(ctx, fn, type, job, k, flags, algo, &rq);
    if (st == CLTOPK_OK)
        st = buffer_job(ctx, fn, &rq, job, algo, keys, offset, out_keys, out_index, num_wait,
                        wait, done);
    pthread_mutex_unlock(&ctx->lock);
    return st;
}
#endif

int cltopk_topk_rows_buffer(cltopk_context *ctx, cltopk_dtype type, cl_mem keys, size_t offset,
                            size_t rows, size_t cols, size_t ld, size_t k, unsigned flags,
                            cltopk_algo algo, cl_mem out_keys, cl_mem out_index,
                            cl_uint num_wait, const cl_event *wait, cl_event *done)
{
    const char *fn = "cltopk_topk_rows_buffer";
    if (!ctx)
        return cltopk_fail(NULL, CLTOPK_ERR_INVALID_ARGUMENT, "%s: ctx is NULL", fn);
#if HAVE_OPENCL
    cltopk_rows_job job = {.mode = ROWS_DENSE, .nrows = rows, .cols = cols, .ld = ld};
    return buffer_entry(ctx, fn, type, keys, offset, &job, k, flags, algo, out_keys, out_index,
                        num_wait, wait, done);
#else
    (void)type, (void)keys, (void)offset, (void)rows, (void)cols, (void)ld, (void)k;
    (void)flags, (void)algo, (void)out_keys, (void)out_index, (void)num_wait, (void)wait;
    (void)done;
    return cltopk_fail(ctx, CLTOPK_ERR_NO_OPENCL, "%s: built without OpenCL", fn);
#endif
}

int cltopk_topk_segments_buffer(cltopk_context *ctx, cltopk_dtype type, cl_mem keys,
                                size_t offset, size_t nseg, const int64_t *offsets, size_t k,
                                unsigned flags, cltopk_algo algo, cl_mem out_keys,
                                cl_mem out_index, cl_uint num_wait, const cl_event *wait,
                                cl_event *done)
{
    const char *fn = "cltopk_topk_segments_buffer";
    if (!ctx)
        return cltopk_fail(NULL, CLTOPK_ERR_INVALID_ARGUMENT, "%s: ctx is NULL", fn);
#if HAVE_OPENCL
    cltopk_rows_job job = {.mode = ROWS_SEGMENTS, .nrows = nseg, .offsets = offsets};
    return buffer_entry(ctx, fn, type, keys, offset, &job, k, flags, algo, out_keys, out_index,
                        num_wait, wait, done);
#else
    (void)type, (void)keys, (void)offset, (void)nseg, (void)offsets, (void)k, (void)flags;
    (void)algo, (void)out_keys, (void)out_index, (void)num_wait, (void)wait, (void)done;
    return cltopk_fail(ctx, CLTOPK_ERR_NO_OPENCL, "%s: built without OpenCL", fn);
#endif
}

int cltopk_knn_buffer(cltopk_context *ctx, cltopk_metric metric, cl_mem queries,
                      size_t q_offset, size_t nq, cl_mem points, size_t p_offset, size_t np,
                      size_t d, size_t k, cl_mem out_dist, cl_mem out_index, cl_uint num_wait,
                      const cl_event *wait, cl_event *done)
{
    const char *fn = "cltopk_knn_buffer";
    if (!ctx)
        return cltopk_fail(NULL, CLTOPK_ERR_INVALID_ARGUMENT, "%s: ctx is NULL", fn);
#if HAVE_OPENCL
    cltopk_enter(ctx);
    cltopk_request rq;
    cltopk_rows_job job;
    int st = knn_args(ctx, fn, metric, nq, np, d, k, &rq, &job);
    if (st == CLTOPK_OK && k > 0 && ctx->is_cl) {
        size_t size = 0;
        cl_int err = queries ? clGetMemObjectInfo(queries, CL_MEM_SIZE, sizeof size, &size, NULL)
                             : CL_INVALID_MEM_OBJECT;
        if (err != CL_SUCCESS)
            st = cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT,
                             "%s: queries is not a valid cl_mem (%s)", fn,
                             cltopk_clerror_name(err));
        else if (q_offset > SIZE_MAX / 16 - nq * d || size < (q_offset + nq * d) * 4)
            st = cltopk_fail(ctx, CLTOPK_ERR_BUFFER_SIZE,
                             "%s: queries holds %zu bytes, the call needs %zu", fn, size,
                             (q_offset + nq * d) * 4);
        else
            st = cltopk_mem_access(ctx, fn, "queries", queries, 0);
    }
    if (st == CLTOPK_OK) {
        job.dqueries = queries;
        job.qoffset = q_offset;
        st = buffer_job(ctx, fn, &rq, &job, CLTOPK_ALGO_AUTO, points, p_offset, out_dist,
                        out_index, num_wait, wait, done);
    }
    pthread_mutex_unlock(&ctx->lock);
    return st;
#else
    (void)metric, (void)queries, (void)q_offset, (void)nq, (void)points, (void)p_offset;
    (void)np, (void)d, (void)k, (void)out_dist, (void)out_index, (void)num_wait, (void)wait;
    (void)done;
    return cltopk_fail(ctx, CLTOPK_ERR_NO_OPENCL, "%s: built without OpenCL", fn);
#endif
}

/* ------------------------------------------------------------ benchmarks */

/* the median seconds of reps calls of a job (after one warm-up): the cl_mem
 * forms on a device context (the data copied there once), else the host forms */
typedef struct {
    int knn;
    cltopk_dtype type;
    const void *keys; /* rows, segments' keys, or kNN points */
    size_t n;         /* elements of keys */
    size_t rows, cols;
    const int64_t *offsets;
    cltopk_metric metric;
    const float *queries;
    size_t d, k;
    unsigned flags;
    cltopk_algo algo;
} bench_job;

static int bench_host(cltopk_context *ctx, const bench_job *b, void *ok, int64_t *oi)
{
    if (b->knn)
        return cltopk_knn(ctx, b->metric, b->queries, b->rows, b->keys, b->n / b->d, b->d, b->k,
                          ok, oi);
    if (b->offsets)
        return cltopk_topk_segments(ctx, b->type, b->keys, b->rows, b->offsets, b->k, b->flags,
                                    b->algo, ok, oi);
    return cltopk_topk_rows(ctx, b->type, b->keys, b->rows, b->cols, b->cols, b->k, b->flags,
                            b->algo, ok, oi);
}

static int bench_run(cltopk_context *ctx, const bench_job *b, int reps, double *median_s,
                     double *floor_s)
{
    size_t kb = cltopk_dtype_size(b->type), count = b->rows * b->k;
    double t[64];
    int st = CLTOPK_OK;
    if (reps > 64)
        reps = 64;
    void *ok = malloc(count ? count * kb : 1);
    int64_t *oi = malloc(count ? count * 8 : 1);
    if (!ok || !oi) {
        free(ok);
        free(oi);
        return cltopk_fail(ctx, CLTOPK_ERR_NO_MEMORY, "benchmark: out of host memory");
    }
    if (!ctx->is_cl || b->algo == CLTOPK_ALGO_CPU_HEAP) {
        for (int r = -1; r < reps && st == CLTOPK_OK; r++) {
            double t0 = cltopk_now();
            st = bench_host(ctx, b, ok, oi);
            if (r >= 0)
                t[r] = cltopk_now() - t0;
        }
        if (st == CLTOPK_OK) {
            *median_s = cltopk_median(t, reps);
            if (floor_s)
                *floor_s = cltopk_cpu_read_time(b->keys, b->n * kb, reps);
        }
        free(ok);
        free(oi);
        return st;
    }
#if HAVE_OPENCL
    cl_int err = CL_SUCCESS;
    size_t qbytes = b->knn ? b->rows * b->d * 4 : 16;
    cl_mem m[4] = {NULL, NULL, NULL, NULL}; /* keys, queries, out keys, out index */
    size_t sz[4] = {b->n ? b->n * kb : 16, qbytes, count ? count * kb : 16,
                    count ? count * 8 : 16};
    for (int i = 0; i < 4 && err == CL_SUCCESS; i++)
        m[i] = clCreateBuffer(ctx->clctx, CL_MEM_READ_WRITE, sz[i], NULL, &err);
    if (err == CL_SUCCESS && b->n)
        err = clEnqueueWriteBuffer(ctx->queue, m[0], CL_TRUE, 0, b->n * kb, b->keys, 0, NULL,
                                   NULL);
    if (err == CL_SUCCESS && b->knn)
        err = clEnqueueWriteBuffer(ctx->queue, m[1], CL_TRUE, 0, qbytes, b->queries, 0, NULL,
                                   NULL);
    if (err != CL_SUCCESS) {
        pthread_mutex_lock(&ctx->lock);
        st = cltopk_clfail(ctx, err, "benchmark: the device copy of the data");
        pthread_mutex_unlock(&ctx->lock);
    }
    for (int r = -1; r < reps && st == CLTOPK_OK; r++) {
        cl_event done = NULL;
        double t0 = cltopk_now();
        st = b->knn ? cltopk_knn_buffer(ctx, b->metric, m[1], 0, b->rows, m[0], 0, b->n / b->d,
                                        b->d, b->k, m[2], m[3], 0, NULL, &done)
             : b->offsets
                 ? cltopk_topk_segments_buffer(ctx, b->type, m[0], 0, b->rows, b->offsets, b->k,
                                               b->flags, b->algo, m[2], m[3], 0, NULL, &done)
                 : cltopk_topk_rows_buffer(ctx, b->type, m[0], 0, b->rows, b->cols, b->cols,
                                           b->k, b->flags, b->algo, m[2], m[3], 0, NULL, &done);
        if (st == CLTOPK_OK)
            st = cltopk_wait_done(ctx, done, "benchmark: waiting for the kernels");
        if (r >= 0)
            t[r] = cltopk_now() - t0;
    }
    if (st == CLTOPK_OK) {
        *median_s = cltopk_median(t, reps);
        if (floor_s) {
            pthread_mutex_lock(&ctx->lock);
            st = b->n ? cltopk_device_read_time(ctx, m[0], b->n * kb, reps, floor_s) : CLTOPK_OK;
            pthread_mutex_unlock(&ctx->lock);
        }
    }
    for (int i = 0; i < 4; i++)
        if (m[i])
            clReleaseMemObject(m[i]);
#endif
    free(ok);
    free(oi);
    return st;
}

int cltopk_benchmark_rows(cltopk_context *ctx, cltopk_dtype type, const void *keys, size_t rows,
                          size_t cols, const int64_t *offsets, size_t k, unsigned flags,
                          cltopk_algo algo, int reps, double *median_s, double *floor_s)
{
    const char *fn = "cltopk_benchmark_rows";
    if (!ctx)
        return cltopk_fail(NULL, CLTOPK_ERR_INVALID_ARGUMENT, "%s: ctx is NULL", fn);
    cltopk_enter(ctx);
    cltopk_request rq;
    cltopk_rows_job job = {.mode = offsets ? ROWS_SEGMENTS : ROWS_DENSE, .nrows = rows,
                           .cols = cols, .ld = cols, .offsets = offsets};
    int st = job_describe(ctx, fn, type, &job, k, flags, algo, &rq);
    if (st == CLTOPK_OK && (!median_s || !keys || reps < 1 || rows == 0 || k == 0))
        st = cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT,
                         "%s: keys and median_s are needed, rows, k and reps >= 1", fn);
    pthread_mutex_unlock(&ctx->lock);
    if (st != CLTOPK_OK)
        return st;
    bench_job b = {.type = type, .keys = keys, .n = rq.n, .rows = rows, .cols = cols,
                   .offsets = offsets, .k = k, .flags = flags, .algo = algo};
    return bench_run(ctx, &b, reps, median_s, floor_s);
}

int cltopk_benchmark_knn(cltopk_context *ctx, cltopk_metric metric, const float *queries,
                         size_t nq, const float *points, size_t np, size_t d, size_t k, int reps,
                         double *median_s)
{
    const char *fn = "cltopk_benchmark_knn";
    if (!ctx)
        return cltopk_fail(NULL, CLTOPK_ERR_INVALID_ARGUMENT, "%s: ctx is NULL", fn);
    cltopk_enter(ctx);
    cltopk_request rq;
    cltopk_rows_job job;
    int st = knn_args(ctx, fn, metric, nq, np, d, k, &rq, &job);
    if (st == CLTOPK_OK && (!median_s || !queries || !points || reps < 1 || k == 0))
        st = cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT,
                         "%s: queries, points and median_s are needed, k and reps >= 1", fn);
    pthread_mutex_unlock(&ctx->lock);
    if (st != CLTOPK_OK)
        return st;
    bench_job b = {.knn = 1, .type = CLTOPK_FLOAT32, .keys = points, .n = np * d, .rows = nq,
                   .metric = metric, .queries = queries, .d = d, .k = k,
                   .algo = CLTOPK_ALGO_AUTO};
    return bench_run(ctx, &b, reps, median_s, NULL);
}

/* ---------------------------------------------------------------- explain */

/* the explain text of a described job: each way to run it, and AUTO's choice */
static int explain_job(cltopk_context *ctx, const char *fn, const cltopk_request *rq,
                       const cltopk_rows_job *job, const char *what, char *buf, size_t len)
{
    size_t n = 0;
#define PUT(...)                                                                               \
    do {                                                                                       \
        int w_ = snprintf(buf + n, len - n, __VA_ARGS__);                                      \
        n = w_ < 0 ? n : n + (size_t)w_ >= len ? len - 1 : n + (size_t)w_;                    \
    } while (0)
    PUT("request    %s, k = %zu, %s, %s data\n", what, rq->k,
        job->mode == ROWS_KNN ? (rq->smallest ? "nearest" : "largest products")
                              : (rq->smallest ? "smallest" : "largest"),
        rq->on_device ? "device" : "host");
    if (rq->on_device)
        PUT("cpu-heap   on a host copy (AUTO where bits cannot run the call)\n");
    else
        PUT("cpu-heap   OpenMP over the %s, each by one thread (%s kernels)\n",
            job->mode == ROWS_KNN ? "queries" : job->mode == ROWS_SEGMENTS ? "segments" : "rows",
            cltopk_cpu_isa());
    char why[512] = "";
    int dev = 0;
    const char *each_algo = NULL;
#if HAVE_OPENCL
    dev = cltopk_rows_dev_can(ctx, rq, job, why, sizeof why);
    if (dev) {
        char line[256];
        cltopk_rows_dev_describe(ctx, rq, job, line, sizeof line);
        PUT("bits       %s\n", line);
    } else {
        PUT("bits       cannot run this call: %s\n", why);
    }
    if (rq->on_device && job->mode != ROWS_KNN) {
        double te = -1, ts = cltopk_rows_staged_time(ctx, rq, job);
        char ewhy[512] = "";
        if (cltopk_rows_each_can(ctx, rq, job, CLTOPK_ALGO_AUTO, &te, &each_algo, ewhy,
                                 sizeof ewhy))
            PUT("each row   %s a row at a time on the device, predicted %.3f ms against %.3f "
                "ms on a host copy (AUTO takes it on GPUs where bits cannot run the call and "
                "it is faster; CLTOPK_BITS each=on|off)\n",
                each_algo, te * 1e3, ts * 1e3);
        else
            PUT("each row   cannot run this call: %s\n", ewhy);
    }
#else
    (void)why;
    PUT("bits       cannot run this call: built without OpenCL\n");
#endif
    int how = RUN_CPU;
    int st = rows_choose(ctx, fn, CLTOPK_ALGO_AUTO, rq, job, &how);
    if (st == CLTOPK_OK && how == RUN_DEVICE_EACH)
        PUT("-> %s a row at a time on the device\n", each_algo ? each_algo : "?");
    else if (st == CLTOPK_OK)
        PUT("-> %s\n", how == RUN_DEVICE ? "bits" : how == RUN_CPU_STAGED
                                                      ? "cpu-heap on a host copy"
                                                      : "cpu-heap");
#undef PUT
    (void)dev;
    return st;
}

/* the checks explain shares: buf, and device data only on an OpenCL context */
static int explain_start(cltopk_context *ctx, const char *fn, char *buf, size_t len,
                         int device_data)
{
    if (!buf || !len)
        return cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT,
                           "%s: buf must not be NULL and len > 0", fn);
    buf[0] = 0;
    if (device_data && !ctx->is_cl)
        return cltopk_fail(ctx, CLTOPK_ERR_NO_OPENCL,
                           "%s: the \"cpu\" context has no device buffers; open an OpenCL "
                           "device", fn);
    return CLTOPK_OK;
}

int cltopk_explain_rows(cltopk_context *ctx, cltopk_dtype type, size_t rows, size_t cols,
                        const int64_t *offsets, size_t k, unsigned flags, int device_data,
                        char *buf, size_t len)
{
    const char *fn = "cltopk_explain_rows";
    if (!ctx)
        return cltopk_fail(NULL, CLTOPK_ERR_INVALID_ARGUMENT, "%s: ctx is NULL", fn);
    cltopk_enter(ctx);
    cltopk_request rq;
    cltopk_rows_job job = {.mode = offsets ? ROWS_SEGMENTS : ROWS_DENSE, .nrows = rows,
                           .cols = cols, .ld = cols, .offsets = offsets};
    int st = explain_start(ctx, fn, buf, len, device_data);
    if (st == CLTOPK_OK)
        st = job_describe(ctx, fn, type, &job, k, flags, CLTOPK_ALGO_AUTO, &rq);
    if (st == CLTOPK_OK) {
        char what[128];
        if (offsets)
            snprintf(what, sizeof what, "%zu segments of %s (%lld elements)", rows,
                     cltopk_dtype_name(type), (long long)(rows ? offsets[rows] : 0));
        else
            snprintf(what, sizeof what, "%zu rows x %zu of %s", rows, cols,
                     cltopk_dtype_name(type));
        rq.on_device = device_data != 0;
        st = explain_job(ctx, fn, &rq, &job, what, buf, len);
    }
    pthread_mutex_unlock(&ctx->lock);
    return st;
}

int cltopk_explain_knn(cltopk_context *ctx, cltopk_metric metric, size_t nq, size_t np, size_t d,
                       size_t k, int device_data, char *buf, size_t len)
{
    const char *fn = "cltopk_explain_knn";
    if (!ctx)
        return cltopk_fail(NULL, CLTOPK_ERR_INVALID_ARGUMENT, "%s: ctx is NULL", fn);
    cltopk_enter(ctx);
    cltopk_request rq;
    cltopk_rows_job job;
    int st = explain_start(ctx, fn, buf, len, device_data);
    if (st == CLTOPK_OK)
        st = knn_args(ctx, fn, metric, nq, np, d, k, &rq, &job);
    if (st == CLTOPK_OK) {
        char what[128];
        snprintf(what, sizeof what, "%zu queries, %zu points of dimension %zu (%s)", nq, np, d,
                 metric == CLTOPK_L2SQ ? "squared L2" : "inner product");
        rq.on_device = device_data != 0;
        st = explain_job(ctx, fn, &rq, &job, what, buf, len);
    }
    pthread_mutex_unlock(&ctx->lock);
    return st;
}
