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
 * written); a user event that gates the work (the call returns at once, the
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

/* blocking read after `after` (may be NULL) */
static void readbuf(const env_t *e, cl_mem m, size_t bytes, void *out, cl_event after)
{
    cl_int err = clEnqueueReadBuffer(e->q, m, CL_TRUE, 0, bytes, out, after ? 1 : 0,
                                     after ? &after : NULL, NULL);
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
 * keys, poisoned outputs, the oracle's answer. */
typedef struct {
    cltopk_dtype t;
    size_t n, off, k, cap;
    int smallest, want, expect;
    int no_done;     /* the call was made with done NULL */
    char *host;      /* off + n + 5 elements; the slice at host + off */
    int64_t *perm;   /* oracle order of the slice */
    char *pk;        /* poison of out_keys */
    int64_t *pi;     /* poison of out_index */
    cl_mem in, ok, oi;
} prep_t;

static void prepare(const env_t *e, prep_t *p, cltopk_dtype t, const char *dist, size_t n,
                    size_t off, size_t k, int smallest, int want, int expect)
{
    memset(p, 0, sizeof *p);
    p->t = t, p->n = n, p->off = off, p->k = k, p->smallest = smallest, p->want = want;
    p->expect = expect;
    size_t w = tsize(t), total = off + n + 5;
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
    make_poison(t, p->host + off * w, expect == CLTOPK_OK && k <= n ? p->perm : NULL, k, p->cap,
                p->pk, p->pi);
    p->in = mkbuf(e, total * w, p->host);
    p->ok = (want & WANT_KEYS) ? mkbuf(e, p->cap * w, p->pk) : NULL;
    p->oi = (want & WANT_INDEX) ? mkbuf(e, p->cap * 8, p->pi) : NULL;
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

static int launch(const env_t *e, prep_t *p, cltopk_algo algo, cl_uint nw, const cl_event *wl,
                  cl_event *done)
{
    return cltopk_topk_buffer(e->ctx, p->t, p->in, p->off, p->n, p->k,
                              p->smallest ? CLTOPK_SMALLEST : CLTOPK_LARGEST, algo, p->ok, p->oi,
                              nw, wl, done);
}

/* After the call (status st, event done): the outputs against the oracle, or
 * untouched after a failure. */
static int verify(const env_t *e, prep_t *p, int st, cl_event done, char *msg, size_t len)
{
    size_t w = tsize(p->t);
    if (st != p->expect) {
        snprintf(msg, len, "status %d (%s), expected %d (%s); detail: %s", st,
                 cltopk_strerror(st), p->expect, cltopk_strerror(p->expect),
                 cltopk_last_error(e->ctx));
        return 0;
    }
    if (st == CLTOPK_OK && p->k > 0 && !done && !p->no_done) {
        snprintf(msg, len, "no done event");
        return 0;
    }
    if (st != CLTOPK_OK && !cltopk_last_error(e->ctx)[0]) {
        snprintf(msg, len, "failed without a detail text");
        return 0;
    }
    if (st != CLTOPK_OK || !done)
        clFinish(e->q); /* the test's own wait: whatever was enqueued is done */
    char *gk = p->ok ? bmalloc(p->cap * w) : NULL;
    int64_t *gi = p->oi ? bmalloc(p->cap * 8) : NULL;
    if (gk)
        readbuf(e, p->ok, p->cap * w, gk, done);
    if (gi)
        readbuf(e, p->oi, p->cap * 8, gi, done);
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
            good = compare_outputs(p->t, p->host + p->off * w, p->n, p->perm, p->k, p->cap, gk,
                                   gi, p->pk, p->pi, msg, len);
        }
    } else {
        good = (!gk || !memcmp(gk, p->pk, p->cap * w)) && (!gi || !memcmp(gi, p->pi, p->cap * 8));
        if (!good)
            snprintf(msg, len, "status %d but the outputs were written", st);
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
                char msg[1024];
                int good = 1;
                size_t calls = 0;
                for (size_t zi = 0; zi < 4 && good; zi++) {
                    size_t n = ns[zi];
                    size_t off = (zi + (size_t)s) % 2 ? 37 : 0;
                    size_t ks[] = {1, 7, 64, lim, n};
                    for (size_t ki = 0; ki < 5 && good; ki++) {
                        size_t k = ks[ki];
                        if (k > n || (quick && ki == 2))
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

/* bad arguments and too-small buffers: status, detail, nothing written */
static void bad_buffers(const env_t *e)
{
    char msg[1024];
    prep_t p;
    cl_event done = NULL;
    const size_t n = 1000, k = 10;
    int st;

    /* keys: one element short of offset + n */
    prepare(e, &p, CLTOPK_FLOAT32, "uniform", n, 0, k, 0, WANT_BOTH, CLTOPK_ERR_BUFFER_SIZE);
    clReleaseMemObject(p.in);
    p.in = mkbuf(e, (n - 1) * 4, p.host);
    st = launch(e, &p, CLTOPK_ALGO_BITONIC, 0, NULL, &done);
    if (!ok(verify(e, &p, st, NULL, msg, sizeof msg), "%s: keys buffer too small -> buffer size",
       e->name))
        diag("%s", msg);
    /* keys big enough for n, not for offset + n */
    st = cltopk_topk_buffer(e->ctx, p.t, p.in, 1, n - 1, k, 0, CLTOPK_ALGO_AUTO, p.ok, p.oi, 0,
                            NULL, &done);
    if (!ok(verify(e, &p, st, NULL, msg, sizeof msg), "%s: offset + n past the keys -> buffer size",
       e->name))
        diag("%s", msg);
    unprepare(&p);

    /* out_keys too small */
    prepare(e, &p, CLTOPK_FLOAT64, "uniform", n, 0, k, 1, WANT_BOTH, CLTOPK_ERR_BUFFER_SIZE);
    clReleaseMemObject(p.ok);
    p.cap = k - 1;
    p.ok = mkbuf(e, p.cap * 8, p.pk);
    {
        cl_mem oi2 = mkbuf(e, (k + GUARD) * 8, p.pi);
        clReleaseMemObject(p.oi);
        p.oi = oi2;
        st = launch(e, &p, CLTOPK_ALGO_AUTO, 0, NULL, &done);
        /* verify reads cap elements of both: out_index holds more, compares its head */
        if (!ok(verify(e, &p, st, NULL, msg, sizeof msg), "%s: out_keys too small -> buffer size",
           e->name))
        diag("%s", msg);
    }
    unprepare(&p);

    /* out_index too small */
    prepare(e, &p, CLTOPK_UINT64, "uniform", n, 5, k, 0, WANT_INDEX, CLTOPK_ERR_BUFFER_SIZE);
    clReleaseMemObject(p.oi);
    p.cap = k - 1;
    p.oi = mkbuf(e, p.cap * 8, p.pi);
    st = launch(e, &p, CLTOPK_ALGO_BITONIC, 0, NULL, &done);
    if (!ok(verify(e, &p, st, NULL, msg, sizeof msg), "%s: out_index too small -> buffer size",
       e->name))
        diag("%s", msg);
    unprepare(&p);

    /* invalid arguments */
    struct {
        const char *what;
        int keys_null, outs_null, bad_wait, type, algo;
        unsigned flags;
        size_t k;
        int expect;
    } cases[] = {
        {"keys NULL", 1, 0, 0, CLTOPK_INT32, CLTOPK_ALGO_AUTO, 0, 10, CLTOPK_ERR_INVALID_ARGUMENT},
        {"both outputs NULL", 0, 1, 0, CLTOPK_INT32, CLTOPK_ALGO_AUTO, 0, 10,
         CLTOPK_ERR_INVALID_ARGUMENT},
        {"num_wait 1 with wait NULL", 0, 0, 1, CLTOPK_INT32, CLTOPK_ALGO_AUTO, 0, 10,
         CLTOPK_ERR_INVALID_ARGUMENT},
        {"k > n", 0, 0, 0, CLTOPK_INT32, CLTOPK_ALGO_AUTO, 0, n + 1, CLTOPK_ERR_K_RANGE},
        {"bad type", 0, 0, 0, 6, CLTOPK_ALGO_AUTO, 0, 10, CLTOPK_ERR_BAD_TYPE},
        {"bad algorithm", 0, 0, 0, CLTOPK_INT32, 99, 0, 10, CLTOPK_ERR_BAD_ALGO},
        {"bad flags", 0, 0, 0, CLTOPK_INT32, CLTOPK_ALGO_AUTO, 2, 10, CLTOPK_ERR_BAD_FLAGS},
        {"cpu-heap (a host algorithm)", 0, 0, 0, CLTOPK_INT32, CLTOPK_ALGO_CPU_HEAP, 0, 10,
         CLTOPK_ERR_UNSUPPORTED},
        {"cpu-bitonic (a host algorithm)", 0, 0, 0, CLTOPK_INT32, CLTOPK_ALGO_CPU_BITONIC, 0,
         10, CLTOPK_ERR_UNSUPPORTED},
        {"cpu-radix (a host algorithm)", 0, 0, 0, CLTOPK_INT32, CLTOPK_ALGO_CPU_RADIX, 0, 10,
         CLTOPK_ERR_UNSUPPORTED},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        prepare(e, &p, CLTOPK_INT32, "uniform", n, 0, 10, 0, WANT_BOTH, cases[i].expect);
        cl_event ev = NULL;
        st = cltopk_topk_buffer(e->ctx, (cltopk_dtype)cases[i].type,
                                cases[i].keys_null ? NULL : p.in, 0, n, cases[i].k,
                                cases[i].flags, (cltopk_algo)cases[i].algo,
                                cases[i].outs_null ? NULL : p.ok,
                                cases[i].outs_null ? NULL : p.oi, cases[i].bad_wait ? 1 : 0,
                                NULL, &ev);
        if (!ok(verify(e, &p, st, NULL, msg, sizeof msg) && ev == NULL,
           "%s: topk_buffer %s -> %s, nothing written", e->name, cases[i].what,
           cltopk_strerror(cases[i].expect)))
        diag("%s", msg);
        if (ev)
            clReleaseEvent(ev);
        unprepare(&p);
    }
    /* an offset so large that offset + n overflows: rejected, nothing written */
    prepare(e, &p, CLTOPK_FLOAT32, "uniform", n, 0, 10, 0, WANT_BOTH, CLTOPK_ERR_INVALID_ARGUMENT);
    {
        cl_event ev = NULL;
        st = cltopk_topk_buffer(e->ctx, p.t, p.in, SIZE_MAX / 2, n, 10, 0, CLTOPK_ALGO_AUTO,
                                p.ok, p.oi, 0, NULL, &ev);
        /* either status says it: a bad size, or a buffer too small for it */
        if (st == CLTOPK_ERR_BUFFER_SIZE)
            p.expect = st;
        if (!ok(verify(e, &p, st, NULL, msg, sizeof msg) && ev == NULL,
                "%s: offset SIZE_MAX / 2 is rejected, nothing written", e->name))
            diag("%s", msg);
    }
    unprepare(&p);

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
