/* query.c - the API of queries over columns: cltopk_query_topk, its cl_mem
 * form and cltopk_query_check.  Each validates the columns, compiles the
 * expressions (lib/expr.c) before anything is written, describes the call
 * once (a cltopk_query_job) and runs it: on the CPU (cpu/querycpu.c) for a CPU
 * context or a non-GPU device, or on the device (lib/querydev.c, cl/query.cl)
 * where the device can run it. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const reserved_words[] = {"and", "or", "not", "if", "min", "max", "abs",
                                             "sqrt", "log", "exp", "floor", "ceil", NULL};

static int name_ok(const char *s)
{
    if (!s || !((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_'))
        return 0;
    size_t n = 0;
    for (; s[n]; n++)
        if (!((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= 'A' && s[n] <= 'Z') ||
              (s[n] >= '0' && s[n] <= '9') || s[n] == '_') || n >= 64)
            return 0;
    return 1;
}

/* the columns and the expressions: compiled into q, the used columns' types
 * into job; a status with the detail */
static int query_compile(cltopk_context *ctx, const char *fn, const cltopk_column *cols,
                         size_t ncols, const char *order_by, const char *where,
                         cltopk_dtype score_type, expr_query *q, cltopk_query_job *job)
{
    if (ncols && !cols)
        return cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT, "%s: cols is NULL (ncols = %zu)",
                           fn, ncols);
    if (ncols > EXPR_MAX_COLS)
        return cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT,
                           "%s: %zu columns; a query takes at most %d", fn, ncols,
                           EXPR_MAX_COLS);
    if (score_type != CLTOPK_FLOAT32 && score_type != CLTOPK_FLOAT64)
        return cltopk_fail(ctx, CLTOPK_ERR_BAD_TYPE,
                           "%s: score_type %d: scores are CLTOPK_FLOAT32 or CLTOPK_FLOAT64", fn,
                           (int)score_type);
    expr_col ec[EXPR_MAX_COLS];
    for (size_t i = 0; i < ncols; i++) {
        if (!name_ok(cols[i].name))
            return cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT,
                               "%s: column %zu's name %s%.64s%s is not [A-Za-z_][A-Za-z0-9_]* "
                               "(at most 64 characters)", fn, i, cols[i].name ? "'" : "",
                               cols[i].name ? cols[i].name : "NULL", cols[i].name ? "'" : "");
        for (int r = 0; reserved_words[r]; r++)
            if (!strcmp(cols[i].name, reserved_words[r]))
                return cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT,
                                   "%s: column %zu may not be named '%s' (a reserved word)", fn,
                                   i, cols[i].name);
        for (size_t j = 0; j < i; j++)
            if (!strcmp(cols[i].name, cols[j].name))
                return cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT,
                                   "%s: columns %zu and %zu are both named '%s'", fn, j, i,
                                   cols[i].name);
        if ((unsigned)cols[i].type > CLTOPK_UINT64)
            return cltopk_fail(ctx, CLTOPK_ERR_BAD_TYPE, "%s: column '%s' has type %d", fn,
                               cols[i].name, (int)cols[i].type);
        ec[i].name = cols[i].name;
        ec[i].type = (int)cols[i].type;
    }
    char err[512];
    if (cltopk_expr_compile(ec, (int)ncols, order_by, where, score_type == CLTOPK_FLOAT64, q,
                            err, sizeof err))
        return cltopk_fail(ctx, CLTOPK_ERR_EXPRESSION, "%s: %s", fn, err);
    job->q = q;
    for (int r = 0; r < q->nrefs; r++)
        job->types[r] = (int)cols[q->refs[r]].type;
    return CLTOPK_OK;
}

/* what every entry point starts with (the context's lock held): *q
 * allocated (the caller frees it, NULL when out of memory), job cleared, the
 * expressions compiled */
static int query_start(cltopk_context *ctx, const char *fn, const cltopk_column *cols,
                       size_t ncols, const char *order_by, const char *where,
                       cltopk_dtype score_type, expr_query **q, cltopk_query_job *job)
{
    memset(job, 0, sizeof *job);
    *q = malloc(sizeof **q);
    if (!*q)
        return cltopk_fail(ctx, CLTOPK_ERR_NO_MEMORY, "%s: out of host memory", fn);
    return query_compile(ctx, fn, cols, ncols, order_by, where, score_type, *q, job);
}

/* the flags: CLTOPK_SMALLEST only */
static int query_flags(cltopk_context *ctx, const char *fn, unsigned flags)
{
    if (flags & ~(unsigned)CLTOPK_SMALLEST)
        return cltopk_fail(ctx, CLTOPK_ERR_BAD_FLAGS,
                           "%s: flags 0x%x: a query takes CLTOPK_SMALLEST only", fn, flags);
    return CLTOPK_OK;
}

/* query_start, then the flags (query_flags) */
static int query_start_flags(cltopk_context *ctx, const char *fn, const cltopk_column *cols,
                             size_t ncols, const char *order_by, const char *where,
                             cltopk_dtype score_type, unsigned flags, expr_query **q,
                             cltopk_query_job *job)
{
    int st = query_start(ctx, fn, cols, ncols, order_by, where, score_type, q, job);
    return st == CLTOPK_OK ? query_flags(ctx, fn, flags) : st;
}

/* the host data of the columns the expressions use (n > 0) */
static int query_data(cltopk_context *ctx, const char *fn, const cltopk_column *cols,
                      const expr_query *q)
{
    for (int r = 0; r < q->nrefs; r++)
        if (!cols[q->refs[r]].data)
            return cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT,
                               "%s: column '%s' is used but its data is NULL", fn,
                               cols[q->refs[r]].name);
    return CLTOPK_OK;
}

int cltopk_query_check(cltopk_context *ctx, const cltopk_column *cols, size_t ncols,
                       const char *order_by, const char *where, char *err, size_t errlen)
{
    const char *fn = "cltopk_query_check";
    if (!ctx)
        return cltopk_fail(NULL, CLTOPK_ERR_INVALID_ARGUMENT, "%s: ctx is NULL", fn);
    cltopk_enter(ctx);
    expr_query *q;
    cltopk_query_job job;
    int st = query_start(ctx, fn, cols, ncols, order_by, where, CLTOPK_FLOAT64, &q, &job);
    free(q);
    if (err && errlen) {
        snprintf(err, errlen, "%s", st == CLTOPK_OK ? "" : cltopk_last_error(ctx));
    }
    pthread_mutex_unlock(&ctx->lock);
    return st;
}

/* the outputs and flags every form checks */
static int query_outputs(cltopk_context *ctx, const char *fn, unsigned flags, int have_scores,
                         int have_index, size_t k)
{
    int st = query_flags(ctx, fn, flags);
    if (st != CLTOPK_OK)
        return st;
    if (k && !have_scores && !have_index)
        return cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT,
                           "%s: out_scores and out_index are both NULL (one is needed)", fn);
    if (k > SIZE_MAX / 16)
        return cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT, "%s: k = %zu is too large", fn, k);
    return CLTOPK_OK;
}

#if HAVE_OPENCL
/* the host form on the device: the used columns copied to device buffers,
 * the job run there, the outputs read back */
static int query_host_on_device(cltopk_context *ctx, cltopk_query_job *job, size_t *count)
{
    int st = CLTOPK_OK;
    cl_int err;
    size_t w = job->q->score64 ? 8 : 4;
    cl_mem outs = NULL, outi = NULL, outc = NULL;
    for (int r = 0; r < job->q->nrefs; r++)
        job->dcols[r] = NULL;
    for (int r = 0; r < job->q->nrefs && st == CLTOPK_OK; r++) {
        size_t bytes = job->n * (size_t)cltopk_dtype_size((cltopk_dtype)job->types[r]);
        job->dcols[r] = clCreateBuffer(ctx->clctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                       bytes ? bytes : 1, (void *)job->data[r], &err);
        job->doffs[r] = 0;
        if (!job->dcols[r])
            st = cltopk_clfail(ctx, err, "clCreateBuffer (a query column)");
    }
    if (st == CLTOPK_OK) {
        outs = clCreateBuffer(ctx->clctx, CL_MEM_READ_WRITE, job->k * w, NULL, &err);
        outi = outs ? clCreateBuffer(ctx->clctx, CL_MEM_READ_WRITE, job->k * 8, NULL, &err) : NULL;
        outc = outi ? clCreateBuffer(ctx->clctx, CL_MEM_READ_WRITE, 8, NULL, &err) : NULL;
        if (!outc)
            st = cltopk_clfail(ctx, err, "clCreateBuffer (the query's outputs)");
    }
    if (st == CLTOPK_OK) {
        job->dout_scores = outs;
        job->dout_index = outi;
        job->dout_count = outc;
        st = cltopk_query_dev(ctx, job, 0, NULL);
    }
    if (st == CLTOPK_OK) {
        cl_event *own;
        cl_uint nown = cltopk_after_own(ctx, &own);
        cl_ulong c = 0;
        void *hs = job->out_scores ? job->out_scores : NULL;
        if ((err = clEnqueueReadBuffer(ctx->queue, outc, CL_TRUE, 0, 8, &c, nown, own, NULL)) !=
                CL_SUCCESS ||
            (hs && (err = clEnqueueReadBuffer(ctx->queue, outs, CL_TRUE, 0, job->k * w, hs, 0,
                                              NULL, NULL)) != CL_SUCCESS) ||
            (job->out_index &&
             (err = clEnqueueReadBuffer(ctx->queue, outi, CL_TRUE, 0, job->k * 8,
                                        job->out_index, 0, NULL, NULL)) != CL_SUCCESS))
            st = cltopk_clfail(ctx, err, "reading the query's results back");
        *count = (size_t)c;
    }
    for (int r = 0; r < job->q->nrefs; r++)
        if (job->dcols[r])
            clReleaseMemObject(job->dcols[r]);
    if (outs)
        clReleaseMemObject(outs);
    if (outi)
        clReleaseMemObject(outi);
    if (outc)
        clReleaseMemObject(outc);
    return st;
}
#endif

int cltopk_query_topk(cltopk_context *ctx, const cltopk_column *cols, size_t ncols, size_t n,
                      const char *order_by, const char *where, size_t k, unsigned flags,
                      cltopk_dtype score_type, void *out_scores, int64_t *out_index,
                      size_t *out_count)
{
    const char *fn = "cltopk_query_topk";
    if (!ctx)
        return cltopk_fail(NULL, CLTOPK_ERR_INVALID_ARGUMENT, "%s: ctx is NULL", fn);
    cltopk_enter(ctx);
    expr_query *q;
    cltopk_query_job job;
    int st = query_start(ctx, fn, cols, ncols, order_by, where, score_type, &q, &job);
    if (st == CLTOPK_OK)
        st = query_outputs(ctx, fn, flags, out_scores != NULL, out_index != NULL, k);
    if (st == CLTOPK_OK && n)
        st = query_data(ctx, fn, cols, q);
    if (st == CLTOPK_OK && n > SIZE_MAX / 16)
        st = cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT, "%s: n = %zu is too large", fn, n);
    if (st == CLTOPK_OK && k && n) {
        /* outputs apart from the used columns and from each other */
        size_t sw = score_type == CLTOPK_FLOAT64 ? 8 : 4;
        const char *s0 = out_scores, *i0 = (const char *)out_index;
        if (s0 && i0 && s0 < i0 + k * 8 && i0 < s0 + k * sw)
            st = cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT,
                             "%s: out_scores and out_index overlap; give separate arrays", fn);
        for (int r = 0; st == CLTOPK_OK && r < q->nrefs; r++) {
            const char *c0 = cols[q->refs[r]].data;
            size_t cb = n * (size_t)cltopk_dtype_size(cols[q->refs[r]].type);
            if ((s0 && s0 < c0 + cb && c0 < s0 + k * sw) || (i0 && i0 < c0 + cb && c0 < i0 + k * 8))
                st = cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT,
                                 "%s: an output overlaps column '%s'; give separate arrays", fn,
                                 cols[q->refs[r]].name);
        }
    }
    if (st == CLTOPK_OK && (k == 0 || n == 0)) {
        if (out_count)
            *out_count = 0;
    } else if (st == CLTOPK_OK) {
        job.n = n;
        job.k = k;
        job.smallest = (flags & CLTOPK_SMALLEST) != 0;
        for (int r = 0; r < q->nrefs; r++)
            job.data[r] = cols[q->refs[r]].data;
        job.out_scores = out_scores;
        job.out_index = out_index;
        size_t count = 0;
        job.out_count = &count;
        int on_device = 0;
#if HAVE_OPENCL
        char why[256];
        on_device = ctx->is_cl && (ctx->caps.type & CL_DEVICE_TYPE_GPU) &&
                    cltopk_query_dev_can(ctx, &job, why, sizeof why);
        if (on_device)
            st = query_host_on_device(ctx, &job, &count);
#endif
        if (!on_device) {
            st = cltopk_cpu_query(&job);
            if (st != CLTOPK_OK)
                st = cltopk_fail(ctx, st, "%s: out of host memory for the CPU query (fewer "
                                 "threads help: cltopk_set_threads)", fn);
        }
        if (st == CLTOPK_OK && out_count)
            *out_count = count;
    }
    free(q);
    pthread_mutex_unlock(&ctx->lock);
    return st;
}

#if HAVE_OPENCL
/* the size of m in bytes (0 when it cannot be read) */
static size_t mem_size(cl_mem m)
{
    size_t size = 0;
    if (!m || clGetMemObjectInfo(m, CL_MEM_SIZE, sizeof size, &size, NULL) != CL_SUCCESS)
        return 0;
    return size;
}

/* the buffer form on the CPU: the used columns read to the host (after the
 * wait list), the query run there, the outputs written back; blocks */
static int query_buffer_on_cpu(cltopk_context *ctx, cltopk_query_job *job, cl_uint num_wait,
                               const cl_event *wait)
{
    int st = CLTOPK_OK;
    void *host[EXPR_MAX_REFS] = {NULL};
    size_t w = job->q->score64 ? 8 : 4;
    void *hs = malloc(job->k * w + 1);
    int64_t *hi = malloc(job->k * 8 + 8);
    size_t count = 0;
    if (!hs || !hi)
        st = cltopk_fail(ctx, CLTOPK_ERR_NO_MEMORY, "out of host memory for the query");
    for (int r = 0; r < job->q->nrefs && st == CLTOPK_OK; r++) {
        size_t es = (size_t)cltopk_dtype_size((cltopk_dtype)job->types[r]);
        host[r] = malloc(job->n * es);
        if (!host[r]) {
            st = cltopk_fail(ctx, CLTOPK_ERR_NO_MEMORY, "out of host memory for a column copy");
            break;
        }
        /* the first read waits for the caller's list (the queue keeps order) */
        cl_int err = clEnqueueReadBuffer(ctx->queue, job->dcols[r], CL_TRUE,
                                         job->doffs[r] * es, job->n * es, host[r],
                                         r == 0 ? num_wait : 0, r == 0 ? wait : NULL, NULL);
        if (err != CL_SUCCESS)
            st = cltopk_clfail(ctx, err, "reading a query column to the host");
        job->data[r] = host[r];
    }
    if (st == CLTOPK_OK) {
        cltopk_query_job hj = *job;
        hj.out_scores = hs;
        hj.out_index = hi;
        hj.out_count = &count;
        st = cltopk_cpu_query(&hj);
        if (st != CLTOPK_OK)
            st = cltopk_fail(ctx, st, "out of host memory for the CPU query");
    }
    if (st == CLTOPK_OK) {
        cl_ulong c = count;
        cl_int err = CL_SUCCESS;
        if (job->dout_scores)
            err = clEnqueueWriteBuffer(ctx->queue, job->dout_scores, CL_TRUE, 0, job->k * w, hs,
                                       0, NULL, NULL);
        if (err == CL_SUCCESS && job->dout_index)
            err = clEnqueueWriteBuffer(ctx->queue, job->dout_index, CL_TRUE, 0, job->k * 8, hi,
                                       0, NULL, NULL);
        if (err == CL_SUCCESS && job->dout_count)
            err = clEnqueueWriteBuffer(ctx->queue, job->dout_count, CL_TRUE, 0, 8, &c, 0, NULL,
                                       NULL);
        if (err != CL_SUCCESS)
            st = cltopk_clfail(ctx, err, "writing the query's results");
    }
    for (int r = 0; r < job->q->nrefs; r++)
        free(host[r]);
    free(hs);
    free(hi);
    return st;
}
#endif

int cltopk_query_topk_buffer(cltopk_context *ctx, const cltopk_column *cols,
                             const cl_mem *dcols, const size_t *doffsets, size_t ncols, size_t n,
                             const char *order_by, const char *where, size_t k, unsigned flags,
                             cltopk_dtype score_type, cl_mem out_scores, cl_mem out_index,
                             cl_mem out_count, cl_uint num_wait, const cl_event *wait,
                             cl_event *done)
{
    const char *fn = "cltopk_query_topk_buffer";
    if (!ctx)
        return cltopk_fail(NULL, CLTOPK_ERR_INVALID_ARGUMENT, "%s: ctx is NULL", fn);
#if HAVE_OPENCL
    cltopk_enter(ctx);
    expr_query *q;
    cltopk_query_job job;
    int st = query_start(ctx, fn, cols, ncols, order_by, where, score_type, &q, &job);
    if (st == CLTOPK_OK)
        st = query_outputs(ctx, fn, flags, out_scores != NULL, out_index != NULL, k);
    if (st == CLTOPK_OK && n > SIZE_MAX / 16)
        st = cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT, "%s: n = %zu is too large", fn, n);
    if (st == CLTOPK_OK && q->nrefs && !dcols)
        st = cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT, "%s: dcols is NULL", fn);
    size_t sw = score_type == CLTOPK_FLOAT64 ? 8 : 4;
    for (int r = 0; st == CLTOPK_OK && r < q->nrefs; r++) {
        int c = q->refs[r];
        size_t es = (size_t)cltopk_dtype_size(cols[c].type), off = doffsets ? doffsets[c] : 0;
        if (!dcols[c])
            st = cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT,
                             "%s: column '%s' is used but dcols[%d] is NULL", fn, cols[c].name, c);
        else if (n && (off > SIZE_MAX / es - n || mem_size(dcols[c]) < (off + n) * es))
            st = cltopk_fail(ctx, CLTOPK_ERR_BUFFER_SIZE,
                             "%s: column '%s' needs %zu elements from element %zu: its buffer "
                             "holds %zu bytes", fn, cols[c].name, n, off, mem_size(dcols[c]));
        job.dcols[r] = dcols[c];
        job.doffs[r] = off;
    }
    if (st == CLTOPK_OK && k &&
        ((out_scores && mem_size(out_scores) < k * sw) || (out_index && mem_size(out_index) < k * 8)))
        st = cltopk_fail(ctx, CLTOPK_ERR_BUFFER_SIZE,
                         "%s: out_scores needs %zu bytes and out_index %zu", fn, k * sw, k * 8);
    if (st == CLTOPK_OK && out_count && mem_size(out_count) < 8)
        st = cltopk_fail(ctx, CLTOPK_ERR_BUFFER_SIZE, "%s: out_count needs 8 bytes", fn);
    if (st == CLTOPK_OK && ((out_scores && (out_scores == out_index || out_scores == out_count)) ||
                            (out_index && out_index == out_count)))
        st = cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT,
                         "%s: the outputs must be separate buffers", fn);
    for (int r = 0; st == CLTOPK_OK && r < q->nrefs; r++)
        if (job.dcols[r] == out_scores || job.dcols[r] == out_index || job.dcols[r] == out_count)
            st = cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT,
                             "%s: an output is the buffer of column '%s'", fn,
                             cols[q->refs[r]].name);
    int nothing = 0;
    if (st == CLTOPK_OK)
        st = cltopk_buffer_start(ctx, fn, k && n ? 1 : 0, num_wait, wait, done, &nothing);
    if (st == CLTOPK_OK && nothing && out_count) {
        /* k = 0 or n = 0: the count 0, after the wait list */
        cl_ulong zero = 0;
        cl_int err = clEnqueueWriteBuffer(ctx->queue, out_count, CL_TRUE, 0, 8, &zero, num_wait,
                                          wait, NULL);
        if (err != CL_SUCCESS)
            st = cltopk_clfail(ctx, err, "writing the query's count");
    }
    if (st == CLTOPK_OK && !nothing) {
        job.n = n;
        job.k = k;
        job.smallest = (flags & CLTOPK_SMALLEST) != 0;
        job.dout_scores = out_scores;
        job.dout_index = out_index;
        job.dout_count = out_count;
        char why[256];
        if (cltopk_query_dev_can(ctx, &job, why, sizeof why))
            st = cltopk_query_dev(ctx, &job, num_wait, wait);
        else
            st = query_buffer_on_cpu(ctx, &job, num_wait, wait);
        if (st == CLTOPK_OK)
            st = cltopk_hand_off(ctx, done);
    }
    free(q);
    pthread_mutex_unlock(&ctx->lock);
    return st;
#else
    (void)cols, (void)dcols, (void)doffsets, (void)ncols, (void)n, (void)order_by, (void)where;
    (void)k, (void)flags, (void)score_type, (void)out_scores, (void)out_index, (void)out_count;
    (void)num_wait, (void)wait, (void)done;
    return cltopk_fail(ctx, CLTOPK_ERR_NO_OPENCL, "%s: built without OpenCL", fn);
#endif
}

/* ------------------------------------------------------------ benchmark */

int cltopk_benchmark_query(cltopk_context *ctx, const cltopk_column *cols, size_t ncols,
                           size_t n, const char *order_by, const char *where, size_t k,
                           unsigned flags, cltopk_dtype score_type, int reps, double *median_s,
                           double *floor_s)
{
    const char *fn = "cltopk_benchmark_query";
    if (!ctx)
        return cltopk_fail(NULL, CLTOPK_ERR_INVALID_ARGUMENT, "%s: ctx is NULL", fn);
    cltopk_enter(ctx);
    expr_query *q;
    cltopk_query_job job;
    int st = query_start(ctx, fn, cols, ncols, order_by, where, score_type, &q, &job);
    if (st == CLTOPK_OK && (!median_s || reps < 1 || reps > 64 || n == 0 || k == 0))
        st = cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT,
                         "%s: median_s is needed, n and k >= 1, reps 1 to 64", fn);
    if (st == CLTOPK_OK)
        st = query_data(ctx, fn, cols, q);
    pthread_mutex_unlock(&ctx->lock);
    double t[64];
    size_t sw = score_type == CLTOPK_FLOAT64 ? 8 : 4;
    void *os = st == CLTOPK_OK ? malloc(k * sw) : NULL;
    int64_t *oi = st == CLTOPK_OK ? malloc(k * 8) : NULL;
    if (st == CLTOPK_OK && (!os || !oi))
        st = CLTOPK_ERR_NO_MEMORY;
    if (st == CLTOPK_OK && !ctx->is_cl) {
        /* host data: the call itself; the floor, one read of the used columns */
        for (int r = -1; r < reps && st == CLTOPK_OK; r++) {
            double t0 = cltopk_now();
            size_t count;
            st = cltopk_query_topk(ctx, cols, ncols, n, order_by, where, k, flags, score_type,
                                   os, oi, &count);
            if (r >= 0)
                t[r] = cltopk_now() - t0;
        }
        if (st == CLTOPK_OK) {
            *median_s = cltopk_median(t, reps);
            if (floor_s) {
                *floor_s = 0;
                for (int r = 0; r < q->nrefs; r++)
                    *floor_s += cltopk_cpu_read_time(cols[q->refs[r]].data,
                                                     n * cltopk_dtype_size(cols[q->refs[r]].type),
                                                     reps);
            }
        }
    }
#if HAVE_OPENCL
    else if (st == CLTOPK_OK) {
        /* device data: the used columns copied once, the cl_mem form timed */
        cl_mem dcols[EXPR_MAX_COLS] = {NULL}, ms = NULL, mi = NULL;
        cl_int err = CL_SUCCESS;
        for (int r = 0; r < q->nrefs && err == CL_SUCCESS; r++) {
            int c = q->refs[r];
            dcols[c] = clCreateBuffer(ctx->clctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                      n * cltopk_dtype_size(cols[c].type), (void *)cols[c].data,
                                      &err);
        }
        if (err == CL_SUCCESS)
            ms = clCreateBuffer(ctx->clctx, CL_MEM_READ_WRITE, k * sw, NULL, &err);
        if (err == CL_SUCCESS)
            mi = clCreateBuffer(ctx->clctx, CL_MEM_READ_WRITE, k * 8, NULL, &err);
        if (err != CL_SUCCESS) {
            pthread_mutex_lock(&ctx->lock);
            st = cltopk_clfail(ctx, err, "benchmark: the device copy of the columns");
            pthread_mutex_unlock(&ctx->lock);
        }
        for (int r = -1; r < reps && st == CLTOPK_OK; r++) {
            cl_event done = NULL;
            double t0 = cltopk_now();
            st = cltopk_query_topk_buffer(ctx, cols, dcols, NULL, ncols, n, order_by, where, k,
                                          flags, score_type, ms, mi, NULL, 0, NULL, &done);
            if (st == CLTOPK_OK)
                st = cltopk_wait_done(ctx, done, "benchmark: waiting for the kernels");
            if (r >= 0)
                t[r] = cltopk_now() - t0;
        }
        if (st == CLTOPK_OK) {
            *median_s = cltopk_median(t, reps);
            if (floor_s) {
                *floor_s = 0;
                pthread_mutex_lock(&ctx->lock);
                for (int r = 0; r < q->nrefs && st == CLTOPK_OK; r++) {
                    double ft = 0;
                    int c = q->refs[r];
                    st = cltopk_device_read_time(ctx, dcols[c], n * cltopk_dtype_size(cols[c].type),
                                                 reps, &ft);
                    *floor_s += ft;
                }
                pthread_mutex_unlock(&ctx->lock);
            }
        }
        for (size_t c = 0; c < ncols && c < EXPR_MAX_COLS; c++)
            if (dcols[c])
                clReleaseMemObject(dcols[c]);
        if (ms)
            clReleaseMemObject(ms);
        if (mi)
            clReleaseMemObject(mi);
    }
#endif
    free(os);
    free(oi);
    free(q);
    return st;
}

#if HAVE_OPENCL
/* the peer's answer (ok: k scores of sw bytes, oi: k rows, on the device)
 * against the fused query's: the same scores in the same order, and the same
 * rows except where the score is the one the peer gives a failing row (-inf
 * for the largest, the quiet NaN for the smallest), which a passing row of
 * that score ties; only the first min(k, rows passing) are compared */
static int peer_check(cltopk_context *ctx, const char *fn, const cltopk_column *cols,
                      size_t ncols, size_t n, const char *order_by, const char *where, size_t k,
                      unsigned flags, cltopk_dtype score_type, cl_mem ok, cl_mem oi, size_t sw)
{
    unsigned char *pk = malloc(k * sw), *fk = malloc(k * sw);
    int64_t *pi = malloc(k * 8), *fi = malloc(k * 8);
    int st = CLTOPK_OK;
    if (!pk || !fk || !pi || !fi) {
        st = cltopk_fail(ctx, CLTOPK_ERR_NO_MEMORY, "%s: out of host memory checking the peer",
                         fn);
        goto out;
    }
    pthread_mutex_lock(&ctx->lock);
    cl_int err = clEnqueueReadBuffer(ctx->queue, ok, CL_TRUE, 0, k * sw, pk, 0, NULL, NULL);
    if (err == CL_SUCCESS)
        err = clEnqueueReadBuffer(ctx->queue, oi, CL_TRUE, 0, k * 8, pi, 0, NULL, NULL);
    if (err != CL_SUCCESS)
        st = cltopk_clfail(ctx, err, "benchmark: reading the peer's answer");
    pthread_mutex_unlock(&ctx->lock);
    size_t cnt = 0;
    if (st == CLTOPK_OK)
        st = cltopk_query_topk(ctx, cols, ncols, n, order_by, where, k, flags, score_type, fk, fi,
                               &cnt);
    const uint64_t fill = cltopk_query_worst(sw == 8, (flags & CLTOPK_SMALLEST) != 0);
    for (size_t i = 0; st == CLTOPK_OK && i < cnt; i++) {
        uint64_t bits = 0;
        memcpy(&bits, fk + i * sw, sw);
        if (memcmp(pk + i * sw, fk + i * sw, sw) || (bits != fill && pi[i] != fi[i]))
            st = cltopk_fail(ctx, CLTOPK_ERR_INTERNAL,
                             "%s: the peer's answer differs from the fused query's at rank %zu "
                             "(row %lld, fused row %lld): a bug, please report it",
                             fn, i, (long long)pi[i], (long long)fi[i]);
    }
out:
    free(pk), free(fk), free(pi), free(fi);
    return st;
}
#endif

int cltopk_benchmark_query_peer(cltopk_context *ctx, const cltopk_column *cols, size_t ncols,
                                size_t n, const char *order_by, const char *where, size_t k,
                                unsigned flags, cltopk_dtype score_type, int reps,
                                double *median_s, double *score_s)
{
    const char *fn = "cltopk_benchmark_query_peer";
    if (!ctx)
        return cltopk_fail(NULL, CLTOPK_ERR_INVALID_ARGUMENT, "%s: ctx is NULL", fn);
    cltopk_enter(ctx);
    expr_query *q;
    cltopk_query_job job;
    int st = query_start_flags(ctx, fn, cols, ncols, order_by, where, score_type, flags, &q,
                               &job);
    if (st == CLTOPK_OK && (!median_s || reps < 1 || reps > 64 || n == 0 || k == 0 || k > n))
        st = cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT,
                         "%s: median_s is needed, n >= k >= 1, reps 1 to 64", fn);
    if (st == CLTOPK_OK && n > 0x7FFFFFFEu)
        st = cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT,
                         "%s: n = %zu: the device query takes fewer than 2^31 - 1 rows", fn, n);
    if (st == CLTOPK_OK)
        st = query_data(ctx, fn, cols, q);
    if (st == CLTOPK_OK && !ctx->is_cl)
        st = cltopk_fail(ctx, CLTOPK_ERR_NO_OPENCL,
                         "%s: the device peer needs an OpenCL context (the \"cpu\" context has "
                         "none: open a device)", fn);
#if HAVE_OPENCL
    char why[256];
    job.n = n;
    job.k = k;
    job.smallest = (flags & CLTOPK_SMALLEST) != 0;
    if (st == CLTOPK_OK && !cltopk_query_dev_can(ctx, &job, why, sizeof why))
        st = cltopk_fail(ctx, CLTOPK_ERR_UNSUPPORTED, "%s: %s", fn, why);
    pthread_mutex_unlock(&ctx->lock);
    size_t sw = score_type == CLTOPK_FLOAT64 ? 8 : 4;
    cl_mem dcols[EXPR_MAX_REFS] = {NULL}, score = NULL, ok = NULL, oi = NULL;
    cl_int err = CL_SUCCESS;
    for (int r = 0; st == CLTOPK_OK && r < q->nrefs && err == CL_SUCCESS; r++) {
        int c = q->refs[r];
        dcols[r] = clCreateBuffer(ctx->clctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                  n * cltopk_dtype_size(cols[c].type), (void *)cols[c].data,
                                  &err);
        job.dcols[r] = dcols[r];
        job.doffs[r] = 0;
    }
    if (st == CLTOPK_OK && err == CL_SUCCESS)
        score = clCreateBuffer(ctx->clctx, CL_MEM_READ_WRITE, n * sw, NULL, &err);
    if (st == CLTOPK_OK && err == CL_SUCCESS)
        ok = clCreateBuffer(ctx->clctx, CL_MEM_READ_WRITE, k * sw, NULL, &err);
    if (st == CLTOPK_OK && err == CL_SUCCESS)
        oi = clCreateBuffer(ctx->clctx, CL_MEM_READ_WRITE, k * 8, NULL, &err);
    if (st == CLTOPK_OK && err != CL_SUCCESS) {
        pthread_mutex_lock(&ctx->lock);
        st = cltopk_clfail(ctx, err, "benchmark: the device copy of the columns and the score "
                           "column (smaller n, or a device with more memory)");
        pthread_mutex_unlock(&ctx->lock);
    }
    /* the peer as its user would run it (the score kernel and the top-k
     * enqueued back to back), then the score kernel alone */
    double t[64], ts[64];
    for (int pass = 0; pass < 2; pass++)
        for (int r = -1; r < reps && st == CLTOPK_OK; r++) {
            double t0 = cltopk_now();
            pthread_mutex_lock(&ctx->lock);
            st = cltopk_query_dev_scores(ctx, &job, score);
            if (st == CLTOPK_OK && pass == 1)
                st = cltopk_finish_own(ctx);
            pthread_mutex_unlock(&ctx->lock);
            cl_event done = NULL;
            if (st == CLTOPK_OK && pass == 0)
                st = cltopk_topk_buffer(ctx, score_type, score, 0, n, k, flags,
                                        CLTOPK_ALGO_AUTO, ok, oi, 0, NULL, &done);
            if (st == CLTOPK_OK)
                st = cltopk_wait_done(ctx, done, "benchmark: waiting for the peer's top-k");
            if (r >= 0)
                (pass ? ts : t)[r] = cltopk_now() - t0;
        }
    if (st == CLTOPK_OK) {
        *median_s = cltopk_median(t, reps);
        if (score_s)
            *score_s = cltopk_median(ts, reps);
    }
    /* the first pass's last top-k is still in ok / oi (the second pass
     * rewrites the same score column only), waited for: checked */
    if (st == CLTOPK_OK)
        st = peer_check(ctx, fn, cols, ncols, n, order_by, where, k, flags, score_type, ok, oi,
                        sw);
    for (int r = 0; r < EXPR_MAX_REFS; r++)
        if (dcols[r])
            clReleaseMemObject(dcols[r]);
    cl_mem mine[] = {score, ok, oi};
    for (size_t i = 0; i < 3; i++)
        if (mine[i])
            clReleaseMemObject(mine[i]);
#else
    (void)reps, (void)score_s;
    pthread_mutex_unlock(&ctx->lock);
#endif
    free(q);
    return st;
}

/* ------------------------------------------------------------ explain */

static const char *const op_names[] = {
    "?", "col", "col-exact", "const", "const-exact", "+", "-", "*", "/", "neg", "min", "max",
    "abs", "sqrt", "log", "exp", "floor", "ceil", "cmp", "cmp-exact", "and", "or", "not", "if"};

/* a program as text: its operations in order */
static size_t prog_text(const expr_prog *pr, const cltopk_column *cols, const expr_query *q,
                        char *buf, size_t len)
{
    static const char *const cmps[] = {"<", "<=", ">", ">=", "==", "!="};
    size_t n = 0;
    for (int o = 0; o < pr->nops && n + 1 < len; o++) {
        int op = (int)(pr->ops[o] & 255u);
        unsigned a = pr->ops[o] >> 8;
        int w;
        if (op == XOP_COLF || op == XOP_COLI)
            w = snprintf(buf + n, len - n, "%s%s %s", o ? ", " : "", op_names[op],
                         cols[q->refs[a]].name);
        else if (op == XOP_CMPF || op == XOP_CMPI)
            w = snprintf(buf + n, len - n, "%s%s %s", o ? ", " : "", op_names[op], cmps[a % 6]);
        else
            w = snprintf(buf + n, len - n, "%s%s", o ? ", " : "",
                         op >= 0 && op < (int)(sizeof op_names / sizeof op_names[0])
                             ? op_names[op] : "?");
        if (w < 0)
            break;
        n = n + (size_t)w >= len ? len - 1 : n + (size_t)w;
    }
    return n;
}

int cltopk_query_explain(cltopk_context *ctx, const cltopk_column *cols, size_t ncols, size_t n,
                         const char *order_by, const char *where, size_t k, unsigned flags,
                         cltopk_dtype score_type, int device_data, char *buf, size_t len)
{
    const char *fn = "cltopk_query_explain";
    if (!ctx)
        return cltopk_fail(NULL, CLTOPK_ERR_INVALID_ARGUMENT, "%s: ctx is NULL", fn);
    cltopk_enter(ctx);
    expr_query *q;
    cltopk_query_job job;
    int st = query_start_flags(ctx, fn, cols, ncols, order_by, where, score_type, flags, &q,
                               &job);
    if (st == CLTOPK_OK && (!buf || len == 0))
        st = cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT, "%s: buf is NULL or len 0", fn);
    if (st == CLTOPK_OK && device_data && !ctx->is_cl)
        st = cltopk_fail(ctx, CLTOPK_ERR_NO_OPENCL, "%s: device data on a CPU context", fn);
    if (st == CLTOPK_OK) {
        size_t at = 0;
#define PUT(...)                                                                               \
    do {                                                                                       \
        int w_ = snprintf(buf + at, len - at, __VA_ARGS__);                                    \
        at = w_ < 0 ? at : at + (size_t)w_ >= len ? len - 1 : at + (size_t)w_;                \
    } while (0)
        PUT("request    the %s %zu of %zu rows by a %s score, %s data\n",
            flags & CLTOPK_SMALLEST ? "smallest" : "largest", k, n,
            score_type == CLTOPK_FLOAT64 ? "float64" : "float32", device_data ? "device" : "host");
        PUT("columns    ");
        for (int r = 0; r < q->nrefs; r++)
            PUT("%s%s (%s)", r ? ", " : "", cols[q->refs[r]].name,
                cltopk_dtype_name(cols[q->refs[r]].type));
        PUT("%s\n", q->nrefs ? "" : "(none)");
        PUT("order_by   %d operations, %d stack slots: ", q->order.nops, q->order.depth);
        at += prog_text(&q->order, cols, q, buf + at, len - at);
        PUT("\n");
        if (q->has_where) {
            PUT("where      %d operations, %d stack slots: ", q->where.nops, q->where.depth);
            at += prog_text(&q->where, cols, q, buf + at, len - at);
            PUT("\n");
        }
        job.n = n;
        job.k = k;
        int dev = 0;
        char why[256] = "a CPU context";
#if HAVE_OPENCL
        dev = ctx->is_cl && cltopk_query_dev_can(ctx, &job, why, sizeof why);
        int gpu = ctx->is_cl && (ctx->caps.type & CL_DEVICE_TYPE_GPU);
#else
        int gpu = 0;
#endif
        if (dev) {
#if HAVE_OPENCL
            char line[1024];
            cltopk_query_dev_explain(ctx, &job, line, sizeof line);
            PUT("device     %s\n", line);
#endif
        } else {
            PUT("device     cannot run it: %s\n", why);
        }
        PUT("cpu        the interpreter of cpu/querycpu.c over blocks of 256 rows, OpenMP\n");
        PUT("-> %s\n", dev && (device_data || gpu) ? "device"
                       : device_data ? "cpu on host copies" : "cpu");
#undef PUT
    }
    free(q);
    pthread_mutex_unlock(&ctx->lock);
    return st;
}
