/* staging.c - scratch buffers, chunk sizes, kernel arguments, launches, the
 * event handed to the caller, and host algorithms run on device data. */
#include "internal.h"

#if HAVE_OPENCL

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cltopk_scratch(cltopk_context *ctx, int slot, size_t bytes, cl_mem *out)
{
    if (bytes == 0)
        bytes = 16;
    if (ctx->scratch[slot] && ctx->scratch_size[slot] >= bytes) {
        *out = ctx->scratch[slot];
        return CLTOPK_OK;
    }
    if (bytes > ctx->caps.max_alloc)
        return cltopk_fail(ctx, CLTOPK_ERR_DEVICE_MEMORY,
                           "a scratch buffer of %zu bytes exceeds the device's largest "
                           "allocation (%llu bytes) on %s",
                           bytes, (unsigned long long)ctx->caps.max_alloc, ctx->name);
    if (ctx->scratch[slot]) {
        /* the old buffer may still be in use by enqueued work: wait for it */
        int st = cltopk_finish_own(ctx);
        if (st != CLTOPK_OK)
            return st;
        clReleaseMemObject(ctx->scratch[slot]);
        ctx->scratch[slot] = NULL;
        ctx->scratch_size[slot] = 0;
    }
    cl_int err;
    cl_mem m = clCreateBuffer(ctx->clctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
    if (!m)
        return cltopk_clfail(ctx, err, "clCreateBuffer (scratch)");
    ctx->scratch[slot] = m;
    ctx->scratch_size[slot] = bytes;
    *out = m;
    return CLTOPK_OK;
}

void cltopk_scratch_free(cltopk_context *ctx)
{
    for (int i = 0; i < SCR_COUNT; i++) {
        if (ctx->scratch[i])
            clReleaseMemObject(ctx->scratch[i]);
        ctx->scratch[i] = NULL;
        ctx->scratch_size[i] = 0;
    }
}

size_t cltopk_chunk_room(const cltopk_context *ctx, int bytes)
{
    /* one allocation; with the candidate buffers of a reduction (at most half as
     * many (key, index) pairs, twice) within half the device's memory; below 2^31
     * elements so that 32-bit indices carry positions inside a chunk */
    uint64_t elems = ctx->caps.max_alloc / (uint64_t)bytes;
    uint64_t fit = ctx->caps.global_mem / 2 / (2 * (uint64_t)bytes + 4);
    if (fit < elems)
        elems = fit;
    if (elems > (1ull << 31))
        elems = 1ull << 31;
    return elems ? (size_t)elems : 1;
}

size_t cltopk_chunk_elems(const cltopk_context *ctx, int bytes)
{
    uint64_t elems = cltopk_chunk_room(ctx, bytes);
    const char *cap = cltopk_env("CLTOPK_MAX_CHUNK");
    if (cap) {
        unsigned long long c = strtoull(cap, NULL, 10);
        if (c > 0 && c < elems)
            elems = c;
    }
    return elems ? (size_t)elems : 1;
}

int cltopk_set_args(cltopk_context *ctx, cl_kernel kern, int nargs, ...)
{
    va_list ap;
    va_start(ap, nargs);
    for (int i = 0; i < nargs; i++) {
        size_t size = va_arg(ap, size_t);
        const void *val = va_arg(ap, const void *);
        cl_int err = clSetKernelArg(kern, (cl_uint)i, size, val);
        if (err != CL_SUCCESS) {
            va_end(ap);
            char what[64];
            snprintf(what, sizeof what, "clSetKernelArg(%d)", i);
            return cltopk_clfail(ctx, err, what);
        }
    }
    va_end(ap);
    return CLTOPK_OK;
}

/* Launches on an in-order queue carry no event: the queue orders them, and an
 * event per launch cost about 7 us of host time each (64 empty kernels back
 * to back on the H200: 13.75 us with events, 6.18 without).  cltopk_after_own
 * makes the one event a call needs. */
int cltopk_quiet(const cltopk_context *ctx)
{
    return ctx->inorder && !ctx->event_each && !ctx->prof;
}

int cltopk_launch(cltopk_context *ctx, cl_kernel kern, size_t global, size_t local,
                  cl_uint num_wait, const cl_event *wait)
{
    cl_event small[8];
    cl_event *list = small;
    if (num_wait + 1 > 8 && !(list = malloc((num_wait + 1) * sizeof *list)))
        return cltopk_fail(ctx, CLTOPK_ERR_NO_MEMORY, "out of memory for an event list");
    cl_uint nl = 0;
    if (ctx->last && !ctx->inorder)
        list[nl++] = ctx->last;
    for (cl_uint i = 0; i < num_wait; i++)
        list[nl++] = wait[i];
    cl_event ev = NULL;
    const int quiet = cltopk_quiet(ctx);
    cl_int err = clEnqueueNDRangeKernel(ctx->queue, kern, 1, NULL, &global, &local, nl,
                                        nl ? list : NULL, quiet ? NULL : &ev);
    if (list != small)
        free(list);
    if (err != CL_SUCCESS)
        return cltopk_clfail(ctx, err, "clEnqueueNDRangeKernel");
    if (quiet) {
        ctx->pending = 1;
        return CLTOPK_OK;
    }
    if (ctx->prof) {
        if (ctx->nprof == 64)
            cltopk_prof_flush(ctx);
        clRetainEvent(ev);
        ctx->prof_ev[ctx->nprof] = ev;
        if (clGetKernelInfo(kern, CL_KERNEL_FUNCTION_NAME, sizeof ctx->prof_name[0],
                            ctx->prof_name[ctx->nprof], NULL) != CL_SUCCESS)
            snprintf(ctx->prof_name[ctx->nprof], sizeof ctx->prof_name[0], "?");
        char g[32];
        snprintf(g, sizeof g, "[%zu/%zu]", global, local);
        size_t l = strlen(ctx->prof_name[ctx->nprof]);
        snprintf(ctx->prof_name[ctx->nprof] + l, sizeof ctx->prof_name[0] - l, "%s", g);
        ctx->nprof++;
    }
    cltopk_own_event(ctx, ev);
    return CLTOPK_OK;
}

void cltopk_own_event(cltopk_context *ctx, cl_event ev)
{
    if (ctx->last)
        clReleaseEvent(ctx->last);
    ctx->last = ev;
    ctx->pending = 0;
}

cl_uint cltopk_after_own(cltopk_context *ctx, cl_event **list)
{
    if (ctx->pending) {
        cl_event ev = NULL;
        if (clEnqueueMarkerWithWaitList(ctx->queue, 0, NULL, &ev) == CL_SUCCESS) {
            if (ctx->last)
                clReleaseEvent(ctx->last);
            ctx->last = ev;
            ctx->pending = 0;
        } else if (clFinish(ctx->queue) == CL_SUCCESS) {
            /* no marker (out of resources): everything before has completed */
            ctx->pending = 0;
        }
    }
    *list = ctx->last ? &ctx->last : NULL;
    return ctx->last ? 1u : 0u;
}

int cltopk_write_own(cltopk_context *ctx, cl_mem m, const void *src, size_t bytes,
                     const char *what)
{
    cl_event *own;
    cl_uint nown = cltopk_after_own(ctx, &own);
    cl_int err = clEnqueueWriteBuffer(ctx->queue, m, CL_TRUE, 0, bytes, src, nown, own, NULL);
    return err == CL_SUCCESS ? CLTOPK_OK : cltopk_clfail(ctx, err, what);
}

void cltopk_events_print(const char *label, cl_event *ev, const char *const *names, int n)
{
    cl_ulong t0 = 0, end = 0, q0 = 0, qn = 0;
    fprintf(stderr, "%s:", label);
    for (int i = 0; i < n; i++) {
        cl_ulong a = 0, b = 0;
        clGetEventProfilingInfo(ev[i], CL_PROFILING_COMMAND_START, sizeof a, &a, NULL);
        clGetEventProfilingInfo(ev[i], CL_PROFILING_COMMAND_END, sizeof b, &b, NULL);
        if (i == 0) {
            t0 = a;
            clGetEventProfilingInfo(ev[i], CL_PROFILING_COMMAND_QUEUED, sizeof q0, &q0, NULL);
        }
        if (i == n - 1)
            clGetEventProfilingInfo(ev[i], CL_PROFILING_COMMAND_QUEUED, sizeof qn, &qn, NULL);
        fprintf(stderr, " %s %.1f us (gap %.1f);", names[i], (double)(b - a) * 1e-3,
                i ? (double)(a - end) * 1e-3 : 0.0);
        end = b;
        clReleaseEvent(ev[i]);
    }
    fprintf(stderr, " first start to last end %.1f us", (double)(end - t0) * 1e-3);
    /* the host's side: the first launch queued to its start, the first
     * queued to the last queued (0 where the device keeps no such times) */
    if (n && q0 && q0 <= t0 && qn >= q0)
        fprintf(stderr, " (first queued %.1f us before its start, the last %.1f us after it)",
                (double)(t0 - q0) * 1e-3, (double)(qn - q0) * 1e-3);
}

void cltopk_prof_flush(cltopk_context *ctx)
{
    if (!ctx->nprof)
        return;
    clWaitForEvents((cl_uint)ctx->nprof, ctx->prof_ev);
    const char *names[64];
    for (int i = 0; i < ctx->nprof; i++)
        names[i] = ctx->prof_name[i];
    cltopk_events_print("profile", ctx->prof_ev, names, ctx->nprof);
    fprintf(stderr, "\n");
    ctx->nprof = 0;
}

int cltopk_wait_done(cltopk_context *ctx, cl_event done, const char *what)
{
    if (!done)
        return CLTOPK_OK;
    cl_int err = clWaitForEvents(1, &done);
    clReleaseEvent(done);
    if (ctx->prof) {
        pthread_mutex_lock(&ctx->lock);
        cltopk_prof_flush(ctx);
        pthread_mutex_unlock(&ctx->lock);
    }
    if (err == CL_SUCCESS)
        return CLTOPK_OK;
    pthread_mutex_lock(&ctx->lock);
    int st = cltopk_clfail(ctx, err, what);
    pthread_mutex_unlock(&ctx->lock);
    return st;
}

int cltopk_finish_own(cltopk_context *ctx)
{
    cl_event *ev;
    if (!cltopk_after_own(ctx, &ev))
        return CLTOPK_OK;
    cl_int err = clWaitForEvents(1, ev);
    clReleaseEvent(ctx->last);
    ctx->last = NULL;
    cltopk_prof_flush(ctx);
    if (err != CL_SUCCESS)
        return cltopk_clfail(ctx, err, "clWaitForEvents (a kernel failed)");
    return CLTOPK_OK;
}

int cltopk_ambiguous_float(const void *keys, size_t i, int bytes)
{
    if (bytes == 4) {
        uint32_t x;
        memcpy(&x, (const char *)keys + 4 * i, 4);
        x &= 0x7FFFFFFFu;
        return x == 0 || x > 0x7F800000u;
    }
    uint64_t x;
    memcpy(&x, (const char *)keys + 8 * i, 8);
    x &= 0x7FFFFFFFFFFFFFFFull;
    return x == 0 || x > 0x7FF0000000000000ull;
}

int cltopk_hand_off(cltopk_context *ctx, cl_event *done)
{
    if (!done)
        return CLTOPK_OK;
    cl_event *ev;
    if (cltopk_after_own(ctx, &ev)) {
        clRetainEvent(*ev);
        *done = *ev;
        return CLTOPK_OK;
    }
    cl_int err = clEnqueueMarkerWithWaitList(ctx->queue, 0, NULL, done);
    return err == CL_SUCCESS ? CLTOPK_OK : cltopk_clfail(ctx, err, "clEnqueueMarkerWithWaitList");
}

/* the context's own last event and rq's wait list, in a new list (*wl, freed
 * by the caller) of *nw events; CLTOPK_ERR_NO_MEMORY */
static int own_and_wait(cltopk_context *ctx, const cltopk_request *rq, cl_event **wl,
                        cl_uint *nw)
{
    if (!(*wl = malloc((rq->num_wait + 1) * sizeof **wl)))
        return cltopk_fail(ctx, CLTOPK_ERR_NO_MEMORY, "out of host memory for an event list");
    cl_event *own;
    *nw = cltopk_after_own(ctx, &own);
    if (*nw)
        (*wl)[0] = *own;
    for (cl_uint i = 0; i < rq->num_wait; i++)
        (*wl)[(*nw)++] = rq->wait[i];
    return CLTOPK_OK;
}

int cltopk_read_after_wait(cltopk_context *ctx, const cltopk_request *rq, cl_mem m, size_t at,
                           size_t bytes, void *host)
{
    if (!bytes)
        return CLTOPK_OK;
    cl_event *wl;
    cl_uint nw;
    int st = own_and_wait(ctx, rq, &wl, &nw);
    if (st != CLTOPK_OK)
        return st;
    cl_int err = clEnqueueReadBuffer(ctx->queue, m, CL_TRUE, at, bytes, host, nw,
                                     nw ? wl : NULL, NULL);
    free(wl);
    return err == CL_SUCCESS ? CLTOPK_OK
                             : cltopk_clfail(ctx, err, "clEnqueueReadBuffer (device data to the "
                                             "host)");
}

/* map `bytes` of m from byte `at` for reading, after the context's work and
 * rq's wait list; blocks.  *host the mapped bytes (unmapped by
 * cltopk_input_view_end), or NULL where the map failed (no memory to map
 * it: the caller reads instead), then CLTOPK_OK still; other failures as a
 * status */
static int map_after_wait(cltopk_context *ctx, const cltopk_request *rq, cl_mem m, size_t at,
                          size_t bytes, void **host)
{
    *host = NULL;
    if (!bytes)
        return CLTOPK_OK;
    cl_event *wl;
    cl_uint nw;
    int st = own_and_wait(ctx, rq, &wl, &nw);
    if (st != CLTOPK_OK)
        return st;
    cl_int err;
    void *p = clEnqueueMapBuffer(ctx->queue, m, CL_TRUE, CL_MAP_READ, at, bytes, nw,
                                 nw ? wl : NULL, NULL, &err);
    free(wl);
    *host = err == CL_SUCCESS ? p : NULL;
    return CLTOPK_OK;
}

/* m's flags (0 where it cannot say) */
static cl_mem_flags mem_flags(cl_mem m)
{
    cl_mem_flags f = 0;
    if (!m || clGetMemObjectInfo(m, CL_MEM_FLAGS, sizeof f, &f, NULL) != CL_SUCCESS)
        return 0;
    return f;
}

const char *cltopk_mem_host_unreadable(cl_mem m)
{
    const cl_mem_flags f = mem_flags(m);
    return (f & CL_MEM_HOST_NO_ACCESS)    ? "CL_MEM_HOST_NO_ACCESS"
           : (f & CL_MEM_HOST_WRITE_ONLY) ? "CL_MEM_HOST_WRITE_ONLY"
                                          : NULL;
}

int cltopk_host_may_read(cltopk_context *ctx, cl_mem m, const char *what, const char *advice)
{
    const char *flag = cltopk_mem_host_unreadable(m);
    if (!flag)
        return CLTOPK_OK;
    return cltopk_fail(ctx, CLTOPK_ERR_UNSUPPORTED,
                       "%s was created with %s, and this call runs on the host's CPU, which "
                       "cannot read it: create the buffer without that flag%s",
                       what, flag, advice);
}

int cltopk_mem_access(cltopk_context *ctx, const char *fn, const char *what, cl_mem m,
                      int written)
{
    const cl_mem_flags f = mem_flags(m);
    const cl_mem_flags bad = written ? CL_MEM_READ_ONLY : CL_MEM_WRITE_ONLY;
    if (f & bad)
        return cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT,
                           "%s: %s was created with %s, and the call's kernels %s it: create it "
                           "with CL_MEM_READ_WRITE%s",
                           fn, what, written ? "CL_MEM_READ_ONLY" : "CL_MEM_WRITE_ONLY",
                           written ? "write" : "read",
                           written ? " or CL_MEM_WRITE_ONLY" : " or CL_MEM_READ_ONLY");
    return CLTOPK_OK;
}

int cltopk_input_view(cltopk_context *ctx, const cltopk_request *rq, int map, char **keys,
                      int *mapped)
{
    size_t kb = (size_t)rq->bytes;
    void *mp = NULL;
    int st;
    *keys = NULL;
    *mapped = 0;
    if ((st = cltopk_host_may_read(ctx, rq->dkeys, "the input cl_mem",
                                   ", or name a device algorithm (rows: CLTOPK_BITS=each=on)")) !=
        CLTOPK_OK)
        return st;
    if (map && (st = map_after_wait(ctx, rq, rq->dkeys, rq->doffset * kb, rq->n * kb,
                                           &mp)) != CLTOPK_OK)
        return st;
    if (mp) {
        *keys = mp;
        *mapped = 1;
        return CLTOPK_OK;
    }
    if (!(*keys = malloc(rq->n ? rq->n * kb : 1)))
        return cltopk_fail(ctx, CLTOPK_ERR_NO_MEMORY,
                           "out of host memory staging %zu elements for the CPU", rq->n);
    if ((st = cltopk_read_after_wait(ctx, rq, rq->dkeys, rq->doffset * kb, rq->n * kb, *keys)) !=
        CLTOPK_OK) {
        free(*keys);
        *keys = NULL;
    }
    return st;
}

int cltopk_input_view_end(cltopk_context *ctx, const cltopk_request *rq, char *keys, int mapped,
                          int st)
{
    if (!mapped) {
        free(keys);
        return st;
    }
    /* (the queue is in order: the results' writes, and any later work on
     * the buffer, come after the unmap) */
    cl_int err = clEnqueueUnmapMemObject(ctx->queue, rq->dkeys, keys, 0, NULL, NULL);
    if (err == CL_SUCCESS)
        err = clFinish(ctx->queue);
    if (err != CL_SUCCESS && st == CLTOPK_OK)
        st = cltopk_clfail(ctx, err, "clEnqueueUnmapMemObject (the input)");
    return st;
}

int cltopk_own_after_wait(cltopk_context *ctx, const cltopk_request *rq)
{
    if (!rq->num_wait)
        return CLTOPK_OK;
    cl_event *wl, ev = NULL;
    cl_uint nw;
    int st = own_and_wait(ctx, rq, &wl, &nw);
    if (st != CLTOPK_OK)
        return st;
    cl_int err = clEnqueueMarkerWithWaitList(ctx->queue, nw, wl, &ev);
    free(wl);
    if (err != CL_SUCCESS)
        return cltopk_clfail(ctx, err, "clEnqueueMarkerWithWaitList");
    cltopk_own_event(ctx, ev);
    return CLTOPK_OK;
}

int cltopk_host_on_buffer(cltopk_context *ctx, const cltopk_request *rq,
                          const cltopk_algorithm *a, size_t rank)
{
    size_t kb = (size_t)rq->bytes, count = rank == SIZE_MAX ? rq->k : 1;
    char *ok = malloc(count * kb);
    int64_t *oi = malloc(count * 8);
    char *keys = NULL;
    int mapped = 0, st = CLTOPK_OK;
    cl_int err;
    if (!ok || !oi) {
        free(ok);
        free(oi);
        return cltopk_fail(ctx, CLTOPK_ERR_NO_MEMORY, "out of host memory for the results of %s",
                           a->name);
    }
    /* the input mapped (where the host may map it), else read */
    if ((st = cltopk_input_view(ctx, rq, 1, &keys, &mapped)) != CLTOPK_OK)
        goto out;
    cltopk_request h = *rq;
    h.on_device = 0;
    h.keys = keys;
    h.out_keys = ok;
    h.out_index = oi;
    h.want_keys = h.want_index = 1;
    if (rank != SIZE_MAX)
        st = a->select_host(ctx, &h, rank, ok, oi);
    else if (a->run_planned)
        st = a->run_planned(&h, keys, h.n, h.k, ok, oi) == CLTOPK_OK
                 ? CLTOPK_OK
                 : cltopk_fail(ctx, CLTOPK_ERR_NO_MEMORY, "%s: out of host memory", a->name);
    else
        st = a->run_host(ctx, &h);
    if (st != CLTOPK_OK)
        goto out;
    err = CL_SUCCESS;
    if (rq->want_keys)
        err = clEnqueueWriteBuffer(ctx->queue, rq->dout_keys, CL_TRUE, 0, count * kb, ok, 0, NULL,
                                   NULL);
    if (err == CL_SUCCESS && rq->want_index)
        err = clEnqueueWriteBuffer(ctx->queue, rq->dout_index, CL_TRUE, 0, count * 8, oi, 0,
                                   NULL, NULL);
    if (err != CL_SUCCESS)
        st = cltopk_clfail(ctx, err, "writing the results to the device");
out:
    if (keys)
        st = cltopk_input_view_end(ctx, rq, keys, mapped, st);
    free(ok);
    free(oi);
    return st;
}

#endif
