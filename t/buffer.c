/* buffer.c - cltopk_topk_buffer: device data, offsets, events, queues, sizes.
 *
 *   own       the library's context and queue (cltopk_get_cl)
 *   app       cltopk_open_cl on an application's context and in-order queue
 *             (reference counts: retained, then released by cltopk_close)
 *   ooo       an out-of-order queue, when the device has one
 * On each: every type and direction, offsets (the elements around the slice
 * hold keys that would win, so a read outside it shows), keys only / positions
 * only / both, poisoned; k above the bitonic limit (BITONIC: UNSUPPORTED, AUTO:
 * exact through the CPU fallback); too-small buffers (BUFFER_SIZE, nothing
 * written); every bad argument of cltopk_topk_buffer and cltopk_select_buffer
 * (its status, a detail naming the function, nothing written to the outputs
 * or the input, *done left as it was); a user event that gates the work (the call returns at once, the
 * work waits for it); the done event; back-to-back calls that reuse the
 * context's scratch buffers without waiting in between. */
#include "testlib.h"

#if CLTOPK_HAVE_OPENCL

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    const char *name;
    cltopk_context *ctx;
    cl_context c;
    cl_device_id d;
    cl_command_queue q; /* the context's queue */
    int ooo;            /* q is out-of-order */
    size_t limit[6];
} env_t;

static rng_t rng;

static cl_mem mkbuf(const env_t *e, size_t bytes, const void *init)
{
    cl_int err;
    cl_mem m = clCreateBuffer(e->c, CL_MEM_READ_WRITE | (init ? CL_MEM_COPY_HOST_PTR : 0),
                              bytes ? bytes : 1, (void *)init, &err);
    if (!m)
        bail("clCreateBuffer(%zu bytes): %d", bytes, (int)err);
    return m;
}

/* the flags added to the output keys' buffers (CL_MEM_HOST_NO_ACCESS: the
 * library may not read them back; CL_MEM_READ_ONLY: in place of
 * CL_MEM_READ_WRITE), and the input's kernel access in place of
 * CL_MEM_READ_WRITE (0: that) */
static cl_mem_flags ok_flags_extra, in_access;

/* blocking read after `after` (may be NULL); a buffer the host may not read
 * through a device copy to one it may */
static void readbuf(const env_t *e, cl_mem m, size_t bytes, void *out, cl_event after)
{
    cl_mem_flags f = 0;
    cl_int err = clGetMemObjectInfo(m, CL_MEM_FLAGS, sizeof f, &f, NULL);
    cl_mem src = m;
    cl_event copied = NULL;
    if (err == CL_SUCCESS && (f & (CL_MEM_HOST_NO_ACCESS | CL_MEM_HOST_WRITE_ONLY))) {
        src = mkbuf(e, bytes, NULL);
        err = clEnqueueCopyBuffer(e->q, m, src, 0, 0, bytes ? bytes : 1, after ? 1 : 0,
                                  after ? &after : NULL, &copied);
        after = copied;
    }
    if (err == CL_SUCCESS)
        err = clEnqueueReadBuffer(e->q, src, CL_TRUE, 0, bytes, out, after ? 1 : 0,
                                  after ? &after : NULL, NULL);
    if (copied)
        clReleaseEvent(copied);
    if (src != m)
        clReleaseMemObject(src);
    if (err != CL_SUCCESS)
        bail("clEnqueueReadBuffer: %d", (int)err);
}

/* the key that comes first in the direction (pads around a slice) */
static uint64_t best_bits(cltopk_dtype t, int smallest)
{
    switch (t) {
    case CLTOPK_FLOAT32: return smallest ? 0xFF800000u : 0x7FC00000u;
    case CLTOPK_FLOAT64: return smallest ? 0xFFF0000000000000ull : 0x7FF8000000000000ull;
    case CLTOPK_INT32: return smallest ? 0x80000000u : 0x7FFFFFFFu;
    case CLTOPK_UINT32: return smallest ? 0 : 0xFFFFFFFFu;
    case CLTOPK_INT64: return smallest ? 0x8000000000000000ull : 0x7FFFFFFFFFFFFFFFull;
    case CLTOPK_UINT64: return smallest ? 0 : ~0ull;
    }
    return 0;
}

static void put_bits(cltopk_dtype t, void *a, size_t i, uint64_t b)
{
    if (tsize(t) == 4) {
        uint32_t x = (uint32_t)b;
        memcpy((char *)a + 4 * i, &x, 4);
    } else {
        memcpy((char *)a + 8 * i, &b, 8);
    }
}

/* A prepared call: input slice at `off` in a device buffer padded with winning
 * keys, poisoned outputs, the oracle's answer.  The call is cltopk_topk_buffer
 * of k, or with sel cltopk_select_buffer at rank k - 1 (one result). */
typedef struct {
    cltopk_context *ctx; /* the context of the call (the env's, NULL, another) */
    cltopk_dtype t;
    size_t n, off, k, cap;
    int sel, smallest, want, expect;
    int no_done;     /* the call was made with done NULL */
    char *host;      /* off + n + 5 elements; the slice at host + off */
    size_t total;    /* its bytes */
    int64_t *perm;   /* oracle order of the slice */
    char *pk;        /* poison of out_keys */
    int64_t *pi;     /* poison of out_index */
    cl_mem in, ok, oi;
} prep_t;

static void prepare_as(const env_t *e, prep_t *p, int sel, cltopk_dtype t, const char *dist,
                       size_t n, size_t off, size_t k, int smallest, int want, int expect)
{
    memset(p, 0, sizeof *p);
    p->ctx = e->ctx;
    p->t = t, p->n = n, p->off = off, p->k = k, p->smallest = smallest, p->want = want;
    p->sel = sel, p->expect = expect;
    size_t w = tsize(t), total = off + n + 5;
    p->total = total * w;
    p->host = bmalloc(total * w);
    for (size_t i = 0; i < total; i++)
        put_bits(t, p->host, i, best_bits(t, smallest));
    gen_data(t, dist, n, smallest, &rng, p->host + off * w);
    p->perm = oracle_order(t, p->host + off * w, n, smallest);
    p->cap = k + GUARD;
    p->pk = bmalloc(p->cap * w);
    p->pi = bmalloc(p->cap * 8);
    /* the oracle has n positions: k > n (a call that must fail) gets no expected
     * answer to read */
    make_poison(t, p->host + off * w,
                expect == CLTOPK_OK && k <= n ? p->perm + (sel ? k - 1 : 0) : NULL,
                sel ? 1 : k, p->cap, p->pk, p->pi);
    if (in_access) {
        cl_int err;
        p->in = clCreateBuffer(e->c, in_access | CL_MEM_COPY_HOST_PTR, total * w, p->host, &err);
        if (!p->in)
            bail("clCreateBuffer(%zu bytes): %d", total * w, (int)err);
    } else
        p->in = mkbuf(e, total * w, p->host);
    p->ok = NULL;
    if (want & WANT_KEYS) {
        cl_int err;
        cl_mem_flags fl = ok_flags_extra & CL_MEM_READ_ONLY ? ok_flags_extra
                                                            : CL_MEM_READ_WRITE | ok_flags_extra;
        p->ok = clCreateBuffer(e->c, fl | CL_MEM_COPY_HOST_PTR, p->cap * w, p->pk, &err);
        if (!p->ok)
            bail("clCreateBuffer(%zu bytes): %d", p->cap * w, (int)err);
    }
    p->oi = (want & WANT_INDEX) ? mkbuf(e, p->cap * 8, p->pi) : NULL;
}

static void prepare(const env_t *e, prep_t *p, cltopk_dtype t, const char *dist, size_t n,
                    size_t off, size_t k, int smallest, int want, int expect)
{
    prepare_as(e, p, 0, t, dist, n, off, k, smallest, want, expect);
}

static void unprepare(prep_t *p)
{
    if (p->in)
        clReleaseMemObject(p->in);
    if (p->ok)
        clReleaseMemObject(p->ok);
    if (p->oi)
        clReleaseMemObject(p->oi);
    free(p->host);
    free(p->perm);
    free(p->pk);
    free(p->pi);
}

static const char *fn_of(const prep_t *p)
{
    return p->sel ? "cltopk_select_buffer" : "cltopk_topk_buffer";
}

/* p's call (its context and form) with these arguments */
static int call(const prep_t *p, cltopk_dtype t, cl_mem in, size_t off, size_t n, size_t k,
                unsigned flags, cltopk_algo algo, cl_mem ok, cl_mem oi, cl_uint nw,
                const cl_event *wl, cl_event *done)
{
    return p->sel ? cltopk_select_buffer(p->ctx, t, in, off, n, k - 1, flags, algo, ok, oi, nw,
                                         wl, done)
                  : cltopk_topk_buffer(p->ctx, t, in, off, n, k, flags, algo, ok, oi, nw, wl,
                                       done);
}

static int launch(const env_t *e, prep_t *p, cltopk_algo algo, cl_uint nw, const cl_event *wl,
                  cl_event *done)
{
    (void)e;
    return call(p, p->t, p->in, p->off, p->n, p->k,
                p->smallest ? CLTOPK_SMALLEST : CLTOPK_LARGEST, algo, p->ok, p->oi, nw, wl, done);
}

/* at most `most` bytes of m (fewer where m is smaller), read after `after` (may
 * be NULL); returns the bytes read */
static size_t readback(const env_t *e, cl_mem m, size_t most, void *out, cl_event after)
{
    size_t size = 0;
    if (clGetMemObjectInfo(m, CL_MEM_SIZE, sizeof size, &size, NULL) != CL_SUCCESS)
        bail("clGetMemObjectInfo(CL_MEM_SIZE) failed");
    if (size > most)
        size = most;
    readbuf(e, m, size, out, after);
    return size;
}

/* After the call (status st, event done): the outputs against the oracle, or
 * after a failure or k = 0 the outputs and the input untouched (as much of
 * each as its buffer holds) and a detail text that names the function. */
static int verify(const env_t *e, prep_t *p, int st, cl_event done, char *msg, size_t len)
{
    size_t w = tsize(p->t);
    const char *detail = cltopk_last_error(p->ctx);
    if (st != p->expect) {
        snprintf(msg, len, "status %d (%s), expected %d (%s); detail: %s", st,
                 cltopk_strerror(st), p->expect, cltopk_strerror(p->expect), detail);
        return 0;
    }
    if (st == CLTOPK_OK && p->k > 0 && !done && !p->no_done) {
        snprintf(msg, len, "no done event");
        return 0;
    }
    /* every call on a context clears its detail first; the thread's detail of
     * a call with ctx NULL must name the call */
    if (st != CLTOPK_OK && (p->ctx ? !detail[0] : !strstr(detail, fn_of(p)))) {
        snprintf(msg, len, "failed without a detail text%s (\"%s\")",
                 p->ctx ? "" : " naming the function", detail);
        return 0;
    }
    if (st != CLTOPK_OK || !done)
        clFinish(e->q); /* the test's own wait: whatever was enqueued is done */
    char *gk = p->ok ? bmalloc(p->cap * w) : NULL;
    int64_t *gi = p->oi ? bmalloc(p->cap * 8) : NULL;
    size_t nk = gk ? readback(e, p->ok, p->cap * w, gk, done) : 0;
    size_t ni = gi ? readback(e, p->oi, p->cap * 8, gi, done) : 0;
    int good;
    if (st == CLTOPK_OK && p->k > 0) {
        cl_int es = CL_COMPLETE;
        if (done)
            clGetEventInfo(done, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof es, &es, NULL);
        if (es != CL_COMPLETE) {
            snprintf(msg, len, "done event in state %d after the reads that waited for it",
                     (int)es);
            good = 0;
        } else {
            good = compare_outputs(p->t, p->host + p->off * w, p->n,
                                   p->perm + (p->sel ? p->k - 1 : 0), p->sel ? 1 : p->k, p->cap,
                                   gk, gi, p->pk, p->pi, msg, len);
        }
    } else {
        good = (!gk || !memcmp(gk, p->pk, nk)) && (!gi || !memcmp(gi, p->pi, ni));
        if (!good)
            snprintf(msg, len, "status %d but the outputs were written", st);
        char *gin = bmalloc(p->total);
        size_t nin = readback(e, p->in, p->total, gin, NULL);
        if (good && memcmp(gin, p->host, nin)) {
            snprintf(msg, len, "status %d but the input was written", st);
            good = 0;
        }
        free(gin);
    }
    free(gk);
    free(gi);
    return good;
}

/* one call, start to end */
static int one(const env_t *e, cltopk_dtype t, const char *dist, size_t n, size_t off, size_t k,
               int smallest, cltopk_algo algo, int want, int expect, char *msg, size_t len)
{
    prep_t p;
    prepare(e, &p, t, dist, n, off, k, smallest, want, expect);
    cl_event done = NULL;
    int st = launch(e, &p, algo, 0, NULL, &done);
    int good = verify(e, &p, st, done, msg, len);
    if (done)
        clReleaseEvent(done);
    unprepare(&p);
    return good;
}

/* ------------------------------------------------------------------ parts */

static void sweep(const env_t *e, int quick)
{
    static const char *const ds[] = {"uniform", "narrow", "special", "worst", "nan", "equal"};
    for (int t = 0; t < 6; t++) {
        size_t lim = e->limit[t];
        size_t ns[] = {1, 100, 2 * lim + 5, quick ? 3 * lim : 50000};
        for (int s = 0; s < 2; s++)
            for (int algo = 0; algo < 2; algo++) {
                cltopk_algo a = algo ? CLTOPK_ALGO_AUTO : CLTOPK_ALGO_BITONIC;
                /* make check: bitonic on check_type's types, as t/topk.t
                 * (each type and k is a kernel build of its own); AUTO on
                 * all six; check-full: all six */
                if (a == CLTOPK_ALGO_BITONIC && !check_runs_type(all_types[t]))
                    continue;
                char msg[1024];
                int good = 1;
                size_t calls = 0;
                for (size_t zi = 0; zi < 4 && good; zi++) {
                    size_t n = ns[zi];
                    size_t off = (zi + (size_t)s) % 2 ? 37 : 0;
                    size_t ks[] = {1, 7, 64, lim, n};
                    for (size_t ki = 0; ki < 5 && good; ki++) {
                        size_t k = ks[ki];
                        /* k = 64 (a kernel build per type and output):
                         * make check on check_type's types only */
                        if (k > n || ((quick || !check_runs_type(all_types[t])) && ki == 2))
                            continue;
                        int expect = (a == CLTOPK_ALGO_BITONIC && k > lim)
                                         ? CLTOPK_ERR_UNSUPPORTED
                                         : CLTOPK_OK;
                        int want = (int)((ki + zi) % 3) + 1;
                        const char *dist = ds[(ki + zi + (size_t)t) % 6];
                        calls++;
                        if (!one(e, all_types[t], dist, n, off, k, s, a, want, expect, msg,
                                 sizeof msg)) {
                            good = 0;
                            diag_after("n = %zu, offset %zu, k = %zu, %s, want %d: %s", n, off, k,
                                 dist, want, msg);
                        }
                    }
                }
                ok(good, "%s: %s %s %s (%zu calls)", e->name, cltopk_algo_name(a),
                   tname(all_types[t]), s ? "smallest" : "largest", calls);
            }
    }
}

/* k above the bitonic limit */
static void above_limit(const env_t *e)
{
    for (int t = 0; t < 6; t += 3) {
        size_t lim = e->limit[t], n = 3 * lim;
        char msg[1024];
        if (!ok(one(e, all_types[t], "narrow", n, 11, lim + 1, 0, CLTOPK_ALGO_BITONIC, WANT_BOTH,
                    CLTOPK_ERR_UNSUPPORTED, msg, sizeof msg),
                "%s: %s bitonic k = limit + 1 -> unsupported, nothing written", e->name,
                tname(all_types[t])))
            diag("%s", msg);
        if (!ok(one(e, all_types[t], "narrow", n, 11, lim + 1, 1, CLTOPK_ALGO_AUTO, WANT_BOTH,
                    CLTOPK_OK, msg, sizeof msg),
                "%s: %s auto k = limit + 1 (CPU fallback) is exact", e->name,
                tname(all_types[t])))
            diag("%s", msg);
        if (!ok(one(e, all_types[t], "uniform", n, 0, n, 0, CLTOPK_ALGO_AUTO, WANT_INDEX,
                    CLTOPK_OK, msg, sizeof msg),
                "%s: %s auto k = n = %zu is exact", e->name, tname(all_types[t]), n))
            diag("%s", msg);
    }
}

/* the end of a call that had to fail: verify's checks, and *done as it was */
static int refused(const env_t *e, prep_t *p, int st, cl_event done, char *msg, size_t len)
{
    int good = verify(e, p, st, NULL, msg, len);
    if (good && done != EVENT_SENTINEL) {
        snprintf(msg, len, "*done was overwritten (%s)", done ? "an event" : "NULL");
        good = 0;
    }
    if (done != EVENT_SENTINEL && done)
        clReleaseEvent(done);
    return good;
}

/* the cases of refusals(): the context, the outputs given */
enum { CTX_OWN, CTX_NULL, CTX_CPU };
enum { OUT_BOTH, OUT_NONE, OUT_KEYS_ON_INPUT, OUT_INDEX_ON_INPUT, OUT_KEYS_ON_INDEX };

/* a bad argument of both forms; expect_sel 0: not a case of select_buffer */
typedef struct {
    const char *what;
    int ctx, keys_null, outs, bad_wait, type, algo;
    unsigned flags;
    size_t k;
    int expect, expect_sel;
} bad_case;

/* one bad_case of 1000 keys (k = 10 but where it says) in p's form */
static void refuse_case(const env_t *e, cltopk_context *cpu, int sel, const bad_case *c)
{
    int expect = sel ? c->expect_sel : c->expect;
    if (!expect)
        return;
    char msg[1024];
    prep_t p;
    const size_t n = 1000;
    prepare_as(e, &p, sel, CLTOPK_INT32, "uniform", n, 0, 10, 0, WANT_BOTH, expect);
    p.ctx = c->ctx == CTX_NULL ? NULL : c->ctx == CTX_CPU ? cpu : e->ctx;
    cl_mem ok_ = c->outs == OUT_NONE ? NULL : c->outs == OUT_KEYS_ON_INPUT ? p.in
               : c->outs == OUT_KEYS_ON_INDEX ? p.oi : p.ok;
    cl_mem oi = c->outs == OUT_NONE ? NULL : c->outs == OUT_INDEX_ON_INPUT ? p.in : p.oi;
    cl_event none = NULL, done = EVENT_SENTINEL;
    int st = call(&p, (cltopk_dtype)c->type, c->keys_null ? NULL : p.in, 0, n, c->k, c->flags,
                  (cltopk_algo)c->algo, ok_, oi, c->bad_wait == 1 ? 1 : 0,
                  c->bad_wait == 2 ? &none : NULL, &done);
    if (!ok(refused(e, &p, st, done, msg, sizeof msg), "%s: %s %s -> %s, nothing written",
            e->name, sel ? "select_buffer" : "topk_buffer", c->what, cltopk_strerror(expect)))
        diag("%s", msg);
    unprepare(&p);
}

/* bad arguments and too-small buffers of cltopk_topk_buffer, or with sel of
 * cltopk_select_buffer (at rank k - 1): the status, a detail naming the
 * function, nothing written to the outputs or the input, *done as it was */
static void refusals(const env_t *e, cltopk_context *cpu, int sel)
{
    char msg[1024];
    prep_t p;
    cl_event done;
    const size_t n = 1000, k = 10, count = sel ? 1 : k;
    const char *form = sel ? "select_buffer" : "topk_buffer";
    const cltopk_algo named = sel ? CLTOPK_ALGO_RADIX_SELECT : CLTOPK_ALGO_BITONIC;
    int st;

    /* keys: one element short of offset + n */
    prepare_as(e, &p, sel, CLTOPK_FLOAT32, "uniform", n, 0, k, 0, WANT_BOTH,
               CLTOPK_ERR_BUFFER_SIZE);
    clReleaseMemObject(p.in);
    p.in = mkbuf(e, (n - 1) * 4, p.host);
    done = EVENT_SENTINEL;
    st = launch(e, &p, named, 0, NULL, &done);
    if (!ok(refused(e, &p, st, done, msg, sizeof msg), "%s: %s keys buffer too small -> buffer "
            "size", e->name, form))
        diag("%s", msg);
    /* keys big enough for n, not for offset + n */
    done = EVENT_SENTINEL;
    st = call(&p, p.t, p.in, 1, n - 1, k, 0, CLTOPK_ALGO_AUTO, p.ok, p.oi, 0, NULL, &done);
    if (!ok(refused(e, &p, st, done, msg, sizeof msg), "%s: %s offset + n past the keys -> "
            "buffer size", e->name, form))
        diag("%s", msg);
    unprepare(&p);

    /* out_keys one byte short of its results */
    prepare_as(e, &p, sel, CLTOPK_FLOAT64, "uniform", n, 0, k, 1, WANT_BOTH,
               CLTOPK_ERR_BUFFER_SIZE);
    clReleaseMemObject(p.ok);
    p.ok = mkbuf(e, count * 8 - 1, p.pk);
    done = EVENT_SENTINEL;
    st = launch(e, &p, CLTOPK_ALGO_AUTO, 0, NULL, &done);
    if (!ok(refused(e, &p, st, done, msg, sizeof msg), "%s: %s out_keys too small -> buffer "
            "size", e->name, form))
        diag("%s", msg);
    unprepare(&p);

    /* out_index one byte short of its results */
    prepare_as(e, &p, sel, CLTOPK_UINT64, "uniform", n, 5, k, 0, WANT_INDEX,
               CLTOPK_ERR_BUFFER_SIZE);
    clReleaseMemObject(p.oi);
    p.oi = mkbuf(e, count * 8 - 1, p.pi);
    done = EVENT_SENTINEL;
    st = launch(e, &p, named, 0, NULL, &done);
    if (!ok(refused(e, &p, st, done, msg, sizeof msg), "%s: %s out_index too small -> buffer "
            "size", e->name, form))
        diag("%s", msg);
    unprepare(&p);

    /* invalid arguments */
    const bad_case cases[] = {
        {"keys NULL", CTX_OWN, 1, OUT_BOTH, 0, CLTOPK_INT32, CLTOPK_ALGO_AUTO, 0, 10,
         CLTOPK_ERR_INVALID_ARGUMENT, CLTOPK_ERR_INVALID_ARGUMENT},
        {"both outputs NULL", CTX_OWN, 0, OUT_NONE, 0, CLTOPK_INT32, CLTOPK_ALGO_AUTO, 0, 10,
         CLTOPK_ERR_INVALID_ARGUMENT, CLTOPK_ERR_INVALID_ARGUMENT},
        {"num_wait 1 with wait NULL", CTX_OWN, 0, OUT_BOTH, 1, CLTOPK_INT32, CLTOPK_ALGO_AUTO, 0,
         10, CLTOPK_ERR_INVALID_ARGUMENT, CLTOPK_ERR_INVALID_ARGUMENT},
        {"num_wait 0 with a wait list", CTX_OWN, 0, OUT_BOTH, 2, CLTOPK_INT32, CLTOPK_ALGO_AUTO,
         0, 10, CLTOPK_ERR_INVALID_ARGUMENT, CLTOPK_ERR_INVALID_ARGUMENT},
        {"k > n (rank = n)", CTX_OWN, 0, OUT_BOTH, 0, CLTOPK_INT32, CLTOPK_ALGO_AUTO, 0, n + 1,
         CLTOPK_ERR_K_RANGE, CLTOPK_ERR_RANK_RANGE},
        {"bad type", CTX_OWN, 0, OUT_BOTH, 0, 6, CLTOPK_ALGO_AUTO, 0, 10, CLTOPK_ERR_BAD_TYPE,
         CLTOPK_ERR_BAD_TYPE},
        {"bad algorithm", CTX_OWN, 0, OUT_BOTH, 0, CLTOPK_INT32, 99, 0, 10, CLTOPK_ERR_BAD_ALGO,
         CLTOPK_ERR_BAD_ALGO},
        {"bad flags", CTX_OWN, 0, OUT_BOTH, 0, CLTOPK_INT32, CLTOPK_ALGO_AUTO, 2, 10,
         CLTOPK_ERR_BAD_FLAGS, CLTOPK_ERR_BAD_FLAGS},
        {"ctx NULL", CTX_NULL, 0, OUT_BOTH, 0, CLTOPK_INT32, CLTOPK_ALGO_AUTO, 0, 10,
         CLTOPK_ERR_INVALID_ARGUMENT, CLTOPK_ERR_INVALID_ARGUMENT},
        {"on the cpu context", CTX_CPU, 0, OUT_BOTH, 0, CLTOPK_INT32, CLTOPK_ALGO_AUTO, 0, 10,
         CLTOPK_ERR_NO_OPENCL, CLTOPK_ERR_NO_OPENCL},
        {"out_keys over the input range", CTX_OWN, 0, OUT_KEYS_ON_INPUT, 0, CLTOPK_INT32,
         CLTOPK_ALGO_AUTO, 0, 10, CLTOPK_ERR_INVALID_ARGUMENT, CLTOPK_ERR_INVALID_ARGUMENT},
        {"out_index over the input range", CTX_OWN, 0, OUT_INDEX_ON_INPUT, 0, CLTOPK_INT32,
         CLTOPK_ALGO_AUTO, 0, 10, CLTOPK_ERR_INVALID_ARGUMENT, CLTOPK_ERR_INVALID_ARGUMENT},
        {"out_keys over out_index", CTX_OWN, 0, OUT_KEYS_ON_INDEX, 0, CLTOPK_INT32,
         CLTOPK_ALGO_AUTO, 0, 10, CLTOPK_ERR_INVALID_ARGUMENT, CLTOPK_ERR_INVALID_ARGUMENT},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        refuse_case(e, cpu, sel, &cases[i]);
    /* the host algorithms (cl_mem data is not theirs), and for select_buffer
     * the device algorithms that cannot select device data */
    static const int algos[] = {CLTOPK_ALGO_CPU_HEAP,  CLTOPK_ALGO_CPU_BITONIC,
                                CLTOPK_ALGO_CPU_RADIX, CLTOPK_ALGO_BITONIC,
                                CLTOPK_ALGO_SBP_RADIX, CLTOPK_ALGO_SBP_TREE,
                                CLTOPK_ALGO_SORT,      CLTOPK_ALGO_BITS};
    for (size_t i = 0; i < sizeof algos / sizeof algos[0]; i++) {
        char what[96];
        int host = i < 3;
        snprintf(what, sizeof what, "%s (%s)", cltopk_algo_name((cltopk_algo)algos[i]),
                 host ? "a host algorithm" : "no selection of device data");
        bad_case c = {what, CTX_OWN, 0, OUT_BOTH, 0, CLTOPK_INT32, algos[i], 0, 10,
                      host ? CLTOPK_ERR_UNSUPPORTED : 0, CLTOPK_ERR_UNSUPPORTED};
        refuse_case(e, cpu, sel, &c);
    }
    /* an offset so large that offset + n overflows: rejected, nothing written */
    prepare_as(e, &p, sel, CLTOPK_FLOAT32, "uniform", n, 0, 10, 0, WANT_BOTH,
               CLTOPK_ERR_INVALID_ARGUMENT);
    done = EVENT_SENTINEL;
    st = call(&p, p.t, p.in, SIZE_MAX / 2, n, 10, 0, CLTOPK_ALGO_AUTO, p.ok, p.oi, 0, NULL, &done);
    /* either status says it: a bad size, or a buffer too small for it */
    if (st == CLTOPK_ERR_BUFFER_SIZE)
        p.expect = st;
    if (!ok(refused(e, &p, st, done, msg, sizeof msg),
            "%s: %s offset SIZE_MAX / 2 is rejected, nothing written", e->name, form))
        diag("%s", msg);
    unprepare(&p);
    /* the same harness answers a good call: the outputs are read back */
    prepare_as(e, &p, sel, CLTOPK_INT32, "narrow", n, 7, k, 1, WANT_BOTH, CLTOPK_OK);
    done = NULL;
    st = launch(e, &p, CLTOPK_ALGO_AUTO, 0, NULL, &done);
    if (!ok(verify(e, &p, st, done, msg, sizeof msg), "%s: %s auto at offset 7 is exact",
            e->name, form))
        diag("%s", msg);
    if (done)
        clReleaseEvent(done);
    unprepare(&p);
}

/* bad arguments and too-small buffers of both forms; k = 0; done NULL */
static void bad_buffers(const env_t *e)
{
    char msg[1024];
    prep_t p;
    cl_event done = NULL;
    const size_t n = 1000;
    int st;
    cltopk_context *cpu = NULL;
    if (cltopk_open(&cpu, "cpu") != CLTOPK_OK)
        bail("cltopk_open(\"cpu\"): %s", cltopk_last_error(NULL));
    refusals(e, cpu, 0);
    refusals(e, cpu, 1);
    cltopk_close(cpu);

    /* k = 0: success, nothing written; the done event (if asked) completes */
    prepare(e, &p, CLTOPK_FLOAT32, "uniform", n, 0, 0, 0, WANT_BOTH, CLTOPK_OK);
    done = NULL;
    st = launch(e, &p, CLTOPK_ALGO_BITONIC, 0, NULL, &done);
    int good = verify(e, &p, st, done, msg, sizeof msg);
    if (done) {
        good = good && clWaitForEvents(1, &done) == CL_SUCCESS;
        clReleaseEvent(done);
    }
    if (!ok(good, "%s: topk_buffer k = 0 succeeds, writes nothing", e->name))
        diag("%s", msg);
    st = launch(e, &p, CLTOPK_ALGO_AUTO, 0, NULL, NULL);
    ok(st == CLTOPK_OK, "%s: topk_buffer k = 0 with done NULL", e->name);
    unprepare(&p);
    /* an output the kernels may not write (CL_MEM_READ_ONLY), an input they
     * may not read (CL_MEM_WRITE_ONLY): refused, naming the flag, nothing
     * written */
    for (int which = 0; which < 2; which++) {
        ok_flags_extra = which ? 0 : CL_MEM_READ_ONLY;
        in_access = which ? CL_MEM_WRITE_ONLY : 0;
        prepare(e, &p, CLTOPK_FLOAT32, "uniform", n, 3, 10, 0, WANT_BOTH,
                CLTOPK_ERR_INVALID_ARGUMENT);
        done = NULL;
        st = launch(e, &p, CLTOPK_ALGO_AUTO, 0, NULL, &done);
        good = verify(e, &p, st, done, msg, sizeof msg) &&
               strstr(cltopk_last_error(e->ctx), which ? "CL_MEM_WRITE_ONLY" : "CL_MEM_READ_ONLY");
        if (done)
            clReleaseEvent(done);
        if (!ok(good, "%s: topk_buffer with %s refused, naming it, nothing written", e->name,
                which ? "an input made CL_MEM_WRITE_ONLY" : "out_keys made CL_MEM_READ_ONLY"))
            diag("%s (%s)", msg, cltopk_last_error(e->ctx));
        unprepare(&p);
    }
    ok_flags_extra = 0;
    in_access = 0;
    /* keys only / index only, done NULL: the caller orders by the queue */
    if (!e->ooo) {
        prepare(e, &p, CLTOPK_INT64, "narrow", 5000, 3, 50, 1, WANT_KEYS, CLTOPK_OK);
        st = launch(e, &p, CLTOPK_ALGO_BITONIC, 0, NULL, NULL);
        p.no_done = 1;
        if (!ok(st == CLTOPK_OK && verify(e, &p, st, NULL, msg, sizeof msg),
                "%s: done NULL on an in-order queue, results after clFinish", e->name))
            diag("%s", msg);
        unprepare(&p);
    }
}

/* run a call in a thread, to see whether it returns while its wait list is
 * still pending */
typedef struct {
    const env_t *e;
    prep_t *p;
    cltopk_algo algo;
    cl_event gate;
    cl_event done;
    int st;
    int returned;
} gated_t;

static void *gated_thread(void *arg)
{
    gated_t *g = arg;
    g->st = launch(g->e, g->p, g->algo, 1, &g->gate, &g->done);
    __atomic_store_n(&g->returned, 1, __ATOMIC_SEQ_CST);
    return NULL;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void gated(const env_t *e, cltopk_algo algo, size_t k, const char *what)
{
    char msg[1024];
    prep_t p;
    size_t n = 20000;
    cltopk_dtype t = CLTOPK_FLOAT32;
    /* warm up: build the kernels outside the timed part */
    one(e, t, "uniform", n, 0, k, 0, algo, WANT_BOTH, CLTOPK_OK, msg, sizeof msg);

    /* the slice holds A when the call is made; B is written (through another
     * queue) before the gate opens: the work must see B */
    prepare(e, &p, t, "uniform", n, 0, k, 0, WANT_BOTH, CLTOPK_OK);
    char *b = bmalloc(n * 4);
    gen_data(t, "narrow", n, 0, &rng, b);
    int64_t *perm_b = oracle_order(t, b, n, 0);
    /* poison the outputs against B's answer */
    make_poison(t, b, perm_b, k, p.cap, p.pk, p.pi);
    if (clEnqueueWriteBuffer(e->q, p.ok, CL_TRUE, 0, p.cap * 4, p.pk, 0, NULL, NULL) ||
        clEnqueueWriteBuffer(e->q, p.oi, CL_TRUE, 0, p.cap * 8, p.pi, 0, NULL, NULL))
        bail("writing the poison");

    /* what AUTO runs (asked before the call: a blocked call holds the context) */
    cltopk_algo ran = algo;
    if (algo == CLTOPK_ALGO_AUTO && k > 0 &&
        cltopk_plan_buffer(e->ctx, t, n, k, 0, &ran) != CLTOPK_OK)
        bail("cltopk_plan_buffer: %s", cltopk_last_error(e->ctx));
    cl_int err;
    cl_command_queue q2 = clCreateCommandQueue(e->c, e->d, 0, &err);
    cl_event gate = clCreateUserEvent(e->c, &err);
    if (!q2 || !gate)
        bail("clCreateCommandQueue / clCreateUserEvent: %d", (int)err);
    gated_t g = {e, &p, algo, gate, NULL, 0, 0};
    pthread_t th;
    if (pthread_create(&th, NULL, gated_thread, &g) != 0)
        bail("pthread_create failed");
    int waited = 0;
    while (!__atomic_load_n(&g.returned, __ATOMIC_SEQ_CST) && waited < 2000) {
        sleep_ms(10);
        waited += 10;
    }
    int returned = __atomic_load_n(&g.returned, __ATOMIC_SEQ_CST);
    if (ran == CLTOPK_ALGO_CPU_HEAP || ran == CLTOPK_ALGO_CPU_RADIX ||
        ran == CLTOPK_ALGO_CPU_BITONIC)
        /* cltopk.h: where AUTO runs a CPU algorithm on device data, the call
         * blocks until its wait list completes */
        ok(!returned, "%s: %s: the CPU fallback (%s) waits for its wait list, as documented",
           e->name, what, cltopk_algo_name(ran));
    else
        ok(returned, "%s: %s: the call returns while its wait list is pending", e->name, what);
    int early = 0;
    if (returned && g.st == CLTOPK_OK && g.done) {
        sleep_ms(100);
        cl_int es = 0;
        clGetEventInfo(g.done, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof es, &es, NULL);
        early = es == CL_COMPLETE;
    }
    /* write B, then open the gate */
    err = clEnqueueWriteBuffer(q2, p.in, CL_TRUE, 0, n * 4, b, 0, NULL, NULL);
    if (err != CL_SUCCESS)
        bail("clEnqueueWriteBuffer on a second queue: %d", (int)err);
    clSetUserEventStatus(gate, CL_COMPLETE);
    pthread_join(th, NULL);
    ok(g.st == CLTOPK_OK && g.done, "%s: %s: status %d, done event %s", e->name, what, g.st,
       g.done ? "given" : "missing");
    ok(!early, "%s: %s: the done event is not complete while the gate is closed", e->name,
       what);
    /* the answer is B's */
    memcpy(p.host, b, n * 4);
    free(p.perm);
    p.perm = perm_b;
    int good = g.done && verify(e, &p, g.st, g.done, msg, sizeof msg);
    if (!ok(good, "%s: %s: the work ran after the gate (it saw the data written before it opened)",
       e->name, what))
        diag("%s", msg);
    if (g.done)
        clReleaseEvent(g.done);
    clReleaseEvent(gate);
    clFinish(q2);
    clReleaseCommandQueue(q2);
    free(b);
    unprepare(&p);
}

/* several calls in flight, no wait between them; scratch grows and is reused */
static void back_to_back(const env_t *e)
{
    struct {
        cltopk_dtype t;
        size_t n, off, k;
        int s;
        const char *dist;
        int host; /* a host-pointer call in between */
    } plan_[] = {
        {CLTOPK_FLOAT32, 3000, 0, 10, 0, "uniform", 0},
        {CLTOPK_FLOAT32, 120000, 9, 1000, 1, "narrow", 0},
        {CLTOPK_UINT64, 50, 2, 50, 0, "special", 0},
        {CLTOPK_INT32, 70000, 0, 4096, 0, "worst", 1},
        {CLTOPK_FLOAT64, 90000, 1, 333, 1, "nan", 0},
        {CLTOPK_INT64, 200, 0, 1, 1, "equal", 0},
        {CLTOPK_FLOAT32, 180000, 3, 2048, 0, "bits", 1},
        {CLTOPK_UINT32, 10, 0, 10, 1, "few", 0},
    };
    enum { NP = sizeof plan_ / sizeof plan_[0] };
    prep_t p[NP];
    cl_event done[NP];
    int st[NP];
    char msg[1024];
    int host_ok = 1;
    for (int i = 0; i < NP; i++) {
        size_t k = plan_[i].k;
        if (k > e->limit[plan_[i].t])
            k = e->limit[plan_[i].t];
        prepare(e, &p[i], plan_[i].t, plan_[i].dist, plan_[i].n, plan_[i].off, k, plan_[i].s,
                WANT_BOTH, CLTOPK_OK);
    }
    for (int i = 0; i < NP; i++) {
        done[i] = NULL;
        st[i] = launch(e, &p[i], CLTOPK_ALGO_BITONIC, 0, NULL, &done[i]);
        if (plan_[i].host) {
            /* a host call on the same context in between (it shares the scratch) */
            size_t w = tsize(p[i].t);
            const char *hk = p[i].host + p[i].off * w;
            int64_t *hp = oracle_order(p[i].t, hk, p[i].n, !p[i].smallest);
            if (!check_topk(e->ctx, CLTOPK_ALGO_BITONIC, p[i].t, hk, p[i].n, p[i].k,
                            !p[i].smallest, hp, WANT_BOTH, CLTOPK_OK, msg, sizeof msg)) {
                host_ok = 0;
                diag_after("host call %d: %s", i, msg);
            }
            free(hp);
        }
    }
    int good = 1;
    for (int i = 0; i < NP; i++) {
        if (!verify(e, &p[i], st[i], done[i], msg, sizeof msg)) {
            good = 0;
            diag_after("call %d (%s n=%zu k=%zu): %s", i, tname(p[i].t), p[i].n, p[i].k, msg);
        }
        if (done[i])
            clReleaseEvent(done[i]);
        unprepare(&p[i]);
    }
    ok(good, "%s: %d calls in flight together, each exact", e->name, (int)NP);
    ok(host_ok, "%s: host calls in between, exact", e->name);
}

/* float keys alone: the kernels run without positions and the call reads the
 * keys back, running again with positions when a zero or NaN is in the answer;
 * k = n puts every zero and NaN of the input in the answer */
static void float_keys_only(const env_t *e)
{
    static const char *const ds[] = {"uniform", "special", "nan", "equal", "few"};
    for (int t = 0; t < 2; t++)
        for (int s = 0; s < 2; s++) {
            char msg[1024];
            int good = 1;
            size_t lim = e->limit[t], calls = 0;
            for (size_t d = 0; d < 5 && good; d++) {
                size_t ns[] = {lim, 5 * lim + 3};
                for (size_t zi = 0; zi < 2 && good; zi++) {
                    size_t n = ns[zi], ks[] = {1, 33, lim};
                    for (size_t ki = 0; ki < 3 && good; ki++) {
                        /* a small bitonic limit (n = lim) puts k = 33 above n:
                         * the oracle has n positions, not k */
                        if (ks[ki] > n)
                            continue;
                        calls++;
                        if (!one(e, all_types[t], ds[d], n, zi * 11, ks[ki], s,
                                 CLTOPK_ALGO_BITONIC, 1, CLTOPK_OK, msg, sizeof msg)) {
                            good = 0;
                            diag_after("%s n = %zu k = %zu: %s", ds[d], n, ks[ki], msg);
                        }
                    }
                }
            }
            ok(good, "%s: %s %s keys only, zeros and NaN in the answer (%zu calls)", e->name,
               tname(all_types[t]), s ? "smallest" : "largest", calls);
        }
    /* the output keys in a buffer the host may not read (the call cannot
     * read them back): with positions from the start, exact */
    ok_flags_extra = CL_MEM_HOST_NO_ACCESS;
    for (int t = 0; t < 2; t++) {
        static const char *const zd[] = {"special", "nan"};
        char msg[1024];
        int good = 1;
        size_t lim = e->limit[t];
        for (size_t d = 0; d < 2 && good; d++)
            for (int s = 0; s < 2 && good; s++) {
                size_t n = 3 * lim + 1, k = d ? lim : 33;
                if (!one(e, all_types[t], zd[d], n, 5, k, s, CLTOPK_ALGO_BITONIC, 1, CLTOPK_OK,
                         msg, sizeof msg)) {
                    good = 0;
                    diag_after("%s n = %zu k = %zu: %s", zd[d], n, k, msg);
                }
            }
        ok(good, "%s: %s keys only into a buffer the host may not read, zeros and NaN in the "
           "answer", e->name, tname(all_types[t]));
    }
    ok_flags_extra = 0;
}

static void all_parts(env_t *e, int quick)
{
    for (int t = 0; t < 6; t++)
        e->limit[t] = bitonic_limit(e->ctx, all_types[t]);
    sweep(e, quick);
    float_keys_only(e);
    above_limit(e);
    bad_buffers(e);
    gated(e, CLTOPK_ALGO_BITONIC, 100, "bitonic behind a user event");
    gated(e, CLTOPK_ALGO_AUTO, 0, "k = 0 behind a user event");
    gated(e, CLTOPK_ALGO_AUTO, e->limit[0] + 1, "auto k = limit + 1 behind a user event");
    back_to_back(e);
}

static cl_uint refcount_queue(cl_command_queue q)
{
    cl_uint r = 0;
    clGetCommandQueueInfo(q, CL_QUEUE_REFERENCE_COUNT, sizeof r, &r, NULL);
    return r;
}

static cl_uint refcount_context(cl_context c)
{
    cl_uint r = 0;
    clGetContextInfo(c, CL_CONTEXT_REFERENCE_COUNT, sizeof r, &r, NULL);
    return r;
}

/* an application's context and queue (properties: 0 or out-of-order) */
static void app_context(cl_device_id dev, cl_command_queue_properties props, const char *name)
{
    cl_int err;
    cl_context c = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    if (!c)
        bail("clCreateContext: %d", (int)err);
    cl_command_queue q = clCreateCommandQueue(c, dev, props, &err);
    if (!q) {
        skip("%s: clCreateCommandQueue(0x%llx) failed: %d", name, (unsigned long long)props,
             (int)err);
        clReleaseContext(c);
        return;
    }
    cl_uint rq0 = refcount_queue(q), rc0 = refcount_context(c);
    env_t e;
    memset(&e, 0, sizeof e);
    e.name = name;
    e.c = c;
    e.d = dev;
    e.q = q;
    e.ooo = (props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) != 0;
    int st = cltopk_open_cl(&e.ctx, c, dev, q);
    if (!ok(st == CLTOPK_OK && e.ctx, "%s: cltopk_open_cl", name)) {
        diag("%d: %s", st, cltopk_last_error(NULL));
        clReleaseCommandQueue(q);
        clReleaseContext(c);
        return;
    }
    ok(refcount_queue(q) > rq0 && refcount_context(c) > rc0,
       "%s: open_cl retains the queue and context", name);
    cl_context gc = NULL;
    cl_command_queue gq = NULL;
    cl_device_id gd = NULL;
    ok(cltopk_get_cl(e.ctx, &gc, &gd, &gq) == CLTOPK_OK && gc == c && gd == dev && gq == q,
       "%s: get_cl returns the application's objects", name);
    all_parts(&e, 1);
    cltopk_close(e.ctx);
    /* reference counts are stale at once: the runtime drops the references of
     * finished commands and events lazily, so wait (a leak never settles) */
    clFinish(q);
    for (int i = 0; i < 500 && (refcount_queue(q) != rq0 || refcount_context(c) != rc0); i++)
        sleep_ms(10);
    ok(refcount_queue(q) == rq0 && refcount_context(c) == rc0,
       "%s: cltopk_close releases what open_cl retained (queue %u -> %u, context %u -> %u)",
       name, rq0, refcount_queue(q), rc0, refcount_context(c));
    /* the queue is still the application's and still works */
    cl_mem m = mkbuf(&e, 16, NULL);
    char x[16] = {0};
    err = clEnqueueWriteBuffer(q, m, CL_TRUE, 0, 16, x, 0, NULL, NULL);
    ok(err == CL_SUCCESS, "%s: the application's queue works after cltopk_close", name);
    clReleaseMemObject(m);
    clReleaseCommandQueue(q);
    clReleaseContext(c);
}

int main(void)
{
    plan_lazy();
    watchdog(900);
    rng_init(&rng, test_seed() ^ 0xB0FF);
    char why[512];
    env_t e;
    memset(&e, 0, sizeof e);
    if (!open_test_cl(&e.ctx, why, sizeof why)) {
        if (tap_count() == 0)
            skip_all("%s", why);
        return tap_done();
    }
    e.name = "own";
    if (!ok(cltopk_get_cl(e.ctx, &e.c, &e.d, &e.q) == CLTOPK_OK && e.c && e.d && e.q,
            "get_cl on the library's context"))
        bail("no OpenCL objects");
    cl_command_queue_properties qp = 0;
    clGetCommandQueueInfo(e.q, CL_QUEUE_PROPERTIES, sizeof qp, &qp, NULL);
    e.ooo = (qp & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) != 0;
    all_parts(&e, 0);
    cl_device_id dev = e.d;
    clRetainDevice(dev);
    cltopk_close(e.ctx);

    app_context(dev, 0, "app in-order");
    cl_command_queue_properties dp = 0;
    clGetDeviceInfo(dev, CL_DEVICE_QUEUE_PROPERTIES, sizeof dp, &dp, NULL);
    if (dp & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)
        app_context(dev, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, "app out-of-order");
    else
        skip("the device has no out-of-order queue");
    clReleaseDevice(dev);
    return tap_done();
}

#else /* !CLTOPK_HAVE_OPENCL */

int main(void)
{
    skip_all("built without OpenCL");
}

#endif
