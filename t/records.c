/* records.c - every algorithm of the library's table through every entry point
 * (topk, select, topk_packed, topk_buffer, select_buffer, workspace, plan,
 * explain, benchmark) on the "cpu" device and on the OpenCL test device: each
 * call either answers exactly (against the oracle) or refuses with
 * CLTOPK_ERR_UNSUPPORTED and a reason; never "unknown algorithm".  The value
 * past the last algorithm is CLTOPK_ERR_BAD_ALGO everywhere. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cltopk.h"
#include "oracle.h"
#include "tap.h"
#include "testlib.h"

#define N 3000
#define K 20
#define RANK 77

/* the algorithms: 0 (auto) .. last, where cltopk_algo_name stops */
static int algo_count(void)
{
    int a = 0;
    while (cltopk_algo_name((cltopk_algo)a))
        a++;
    return a;
}

/* a refusal is UNSUPPORTED with a reason that is not "unknown algorithm" */
static int refusal_ok(cltopk_context *ctx, int st)
{
    const char *d = cltopk_last_error(ctx);
    return st == CLTOPK_ERR_UNSUPPORTED && d[0] && !strstr(d, "unknown algorithm");
}

static void host_calls(cltopk_context *ctx, const char *dev, int a, cltopk_dtype type,
                       const void *keys, const int64_t *perm)
{
    const char *name = cltopk_algo_name((cltopk_algo)a);
    char msg[512];
    size_t ws = 0;
    int exp = cltopk_workspace_size(ctx, type, N, K, 0, (cltopk_algo)a, &ws);
    ok(exp == CLTOPK_OK || refusal_ok(ctx, exp), "%s %s %s: workspace answers or refuses (%s)",
       dev, name, tname(type), cltopk_last_error(ctx));
    int good = check_topk(ctx, (cltopk_algo)a, type, keys, N, K, 0, perm, WANT_BOTH, exp, msg,
                          sizeof msg);
    if (!ok(good && (exp == CLTOPK_OK || refusal_ok(ctx, exp)), "%s %s %s: topk %s", dev, name,
            tname(type), exp == CLTOPK_OK ? "exact" : "refused with a reason"))
        diag("%s", msg);
    int sexp = cltopk_workspace_size(ctx, type, N, RANK + 1, 0, (cltopk_algo)a, &ws);
    good = check_select(ctx, (cltopk_algo)a, type, keys, N, RANK, 0, perm, WANT_BOTH, sexp, msg,
                        sizeof msg);
    if (!ok(good && (sexp == CLTOPK_OK || refusal_ok(ctx, sexp)), "%s %s %s: select %s", dev,
            name, tname(type), sexp == CLTOPK_OK ? "exact" : "refused with a reason"))
        diag("%s", msg);
}

static void packed_call(cltopk_context *ctx, const char *dev, int a, const int32_t *vals)
{
    const char *name = cltopk_algo_name((cltopk_algo)a);
    size_t cap = cltopk_pack_bound(CLTOPK_CODEC_FOR, N), scap = cltopk_pack_starts_bound(CLTOPK_CODEC_FOR, N);
    uint32_t *data = malloc(cap * 4), *starts = malloc(scap * 4);
    size_t words = 0, ns = 0;
    int st = cltopk_pack(CLTOPK_CODEC_FOR, vals, N, data, cap, &words, starts, scap, &ns);
    int64_t *perm = oracle_order(CLTOPK_INT32, vals, N, 0);
    int32_t ok_[K + GUARD], pk[K + GUARD];
    int64_t oi[K + GUARD], pi[K + GUARD];
    make_poison(CLTOPK_INT32, vals, perm, K, K + GUARD, pk, pi);
    memcpy(ok_, pk, sizeof ok_);
    memcpy(oi, pi, sizeof oi);
    if (st == CLTOPK_OK)
        st = cltopk_topk_packed(ctx, CLTOPK_CODEC_FOR, data, words, starts, ns, K, 0,
                                (cltopk_algo)a, ok_, oi);
    char msg[512] = "";
    int good = st == CLTOPK_OK
                   ? compare_outputs(CLTOPK_INT32, vals, N, perm, K, K + GUARD, ok_, oi, pk, pi,
                                     msg, sizeof msg)
                   : refusal_ok(ctx, st) && !memcmp(ok_, pk, sizeof ok_) &&
                         !memcmp(oi, pi, sizeof oi);
    if (!ok(good, "%s %s: topk_packed %s", dev, name, st == CLTOPK_OK ? "exact" : "refused"))
        diag("status %d: %s %s", st, cltopk_last_error(ctx), msg);
    free(perm);
    free(data);
    free(starts);
}

#if CLTOPK_HAVE_OPENCL
/* topk_buffer (select 0) or select_buffer (1) of keys on the device */
static void buffer_call(cltopk_context *ctx, const char *dev, int a, cltopk_dtype type,
                        const void *keys, const int64_t *perm, int select)
{
    const char *name = cltopk_algo_name((cltopk_algo)a);
    cl_context cc;
    cl_command_queue q;
    cltopk_get_cl(ctx, &cc, NULL, &q);
    size_t kb = tsize(type), cnt = select ? 1 : K;
    cl_int err;
    cl_mem in = clCreateBuffer(cc, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, N * kb, (void *)keys,
                               &err);
    cl_mem dk = clCreateBuffer(cc, CL_MEM_READ_WRITE, (K + GUARD) * kb, NULL, &err);
    cl_mem di = clCreateBuffer(cc, CL_MEM_READ_WRITE, (K + GUARD) * 8, NULL, &err);
    char pk[(K + GUARD) * 8], ok_[(K + GUARD) * 8];
    int64_t pi[K + GUARD], oi[K + GUARD];
    const int64_t *expect = select ? perm + RANK : perm;
    make_poison(type, keys, expect, cnt, K + GUARD, pk, pi);
    clEnqueueWriteBuffer(q, dk, CL_TRUE, 0, (K + GUARD) * kb, pk, 0, NULL, NULL);
    clEnqueueWriteBuffer(q, di, CL_TRUE, 0, (K + GUARD) * 8, pi, 0, NULL, NULL);
    cl_event done = NULL;
    int st = select ? cltopk_select_buffer(ctx, type, in, 0, N, RANK, 0, (cltopk_algo)a, dk, di,
                                           0, NULL, &done)
                    : cltopk_topk_buffer(ctx, type, in, 0, N, K, 0, (cltopk_algo)a, dk, di, 0,
                                         NULL, &done);
    if (done) {
        clWaitForEvents(1, &done);
        clReleaseEvent(done);
    }
    clEnqueueReadBuffer(q, dk, CL_TRUE, 0, (K + GUARD) * kb, ok_, 0, NULL, NULL);
    clEnqueueReadBuffer(q, di, CL_TRUE, 0, (K + GUARD) * 8, oi, 0, NULL, NULL);
    char msg[512] = "";
    int good = st == CLTOPK_OK
                   ? compare_outputs(type, keys, N, expect, cnt, K + GUARD, ok_, oi, pk, pi, msg,
                                     sizeof msg)
                   : refusal_ok(ctx, st) && !memcmp(ok_, pk, (K + GUARD) * kb) &&
                         !memcmp(oi, pi, sizeof oi) && !done;
    if (!ok(good, "%s %s %s: %s %s", dev, name, tname(type),
            select ? "select_buffer" : "topk_buffer", st == CLTOPK_OK ? "exact" : "refused"))
        diag("status %d: %s %s", st, cltopk_last_error(ctx), msg);
    clReleaseMemObject(in);
    clReleaseMemObject(dk);
    clReleaseMemObject(di);
}
#endif

static void planner_calls(cltopk_context *ctx, const char *dev, int count, const void *keys)
{
    static char buf[8192];
    int st = cltopk_explain(ctx, CLTOPK_FLOAT32, N, K, 0, 0, buf, sizeof buf);
    int all = st == CLTOPK_OK;
    for (int a = 1; a < count && all; a++) {
        char line[64];
        snprintf(line, sizeof line, " %s ", cltopk_algo_name((cltopk_algo)a));
        all = strstr(buf, line) != NULL;
    }
    if (!ok(all, "%s: explain names every algorithm of the table", dev))
        diag("status %d: %s\n%s", st, cltopk_last_error(ctx), buf);
    cltopk_algo chosen = (cltopk_algo)-1;
    st = cltopk_plan(ctx, CLTOPK_FLOAT32, N, K, 0, &chosen);
    ok(st == CLTOPK_OK && chosen > CLTOPK_ALGO_AUTO && (int)chosen < count,
       "%s: plan picks a record (%s)", dev, cltopk_algo_name(chosen));
    for (int a = 0; a < count; a++) {
        double med = -1, flo = -1;
        st = cltopk_benchmark(ctx, CLTOPK_FLOAT32, keys, N, K, 0, (cltopk_algo)a, 1, &med, &flo);
        ok((st == CLTOPK_OK && med >= 0 && flo > 0) || refusal_ok(ctx, st),
           "%s %s: benchmark times or refuses (%d %s)", dev, cltopk_algo_name((cltopk_algo)a),
           st, st ? cltopk_last_error(ctx) : "");
    }
}

/* the value past the table: BAD_ALGO at every entry point */
static void past_the_end(cltopk_context *ctx, const char *dev, int count, const void *keys)
{
    cltopk_algo bad = (cltopk_algo)count;
    float k1[4];
    int64_t i1[4];
    size_t ws;
    double m;
    ok(cltopk_algo_name(bad) == NULL, "%s: no name past the last algorithm", dev);
    ok(cltopk_topk(ctx, CLTOPK_FLOAT32, keys, N, 2, 0, bad, k1, i1) == CLTOPK_ERR_BAD_ALGO,
       "%s: topk algo %d -> bad algo", dev, count);
    ok(cltopk_select(ctx, CLTOPK_FLOAT32, keys, N, 2, 0, bad, k1, i1) == CLTOPK_ERR_BAD_ALGO,
       "%s: select algo %d -> bad algo", dev, count);
    ok(cltopk_workspace_size(ctx, CLTOPK_FLOAT32, N, 2, 0, bad, &ws) == CLTOPK_ERR_BAD_ALGO,
       "%s: workspace algo %d -> bad algo", dev, count);
    ok(cltopk_benchmark(ctx, CLTOPK_FLOAT32, keys, N, 2, 0, bad, 1, &m, NULL) ==
           CLTOPK_ERR_BAD_ALGO,
       "%s: benchmark algo %d -> bad algo", dev, count);
    uint32_t data[8] = {0}, starts[2] = {4, 4};
    int32_t pk[2];
    ok(cltopk_topk_packed(ctx, CLTOPK_CODEC_FOR, data, 4, starts, 1, 0, 0, bad, pk, NULL) ==
           CLTOPK_ERR_BAD_ALGO,
       "%s: topk_packed algo %d -> bad algo", dev, count);
}

static void run_on(cltopk_context *ctx, const char *dev, int is_cl)
{
    int count = algo_count();
    rng_t r;
    rng_init(&r, test_seed());
    static float f[N];
    static int32_t v[N];
    gen_data(CLTOPK_FLOAT32, "special", N, 0, &r, f);
    gen_data(CLTOPK_INT32, "uniform", N, 0, &r, v);
    int64_t *pf = oracle_order(CLTOPK_FLOAT32, f, N, 0);
    int64_t *pv = oracle_order(CLTOPK_INT32, v, N, 0);
    for (int a = 0; a < count; a++) {
        host_calls(ctx, dev, a, CLTOPK_FLOAT32, f, pf);
        host_calls(ctx, dev, a, CLTOPK_INT32, v, pv);
        packed_call(ctx, dev, a, v);
#if CLTOPK_HAVE_OPENCL
        if (is_cl) {
            buffer_call(ctx, dev, a, CLTOPK_FLOAT32, f, pf, 0);
            buffer_call(ctx, dev, a, CLTOPK_FLOAT32, f, pf, 1);
        }
#else
        (void)is_cl;
#endif
    }
    planner_calls(ctx, dev, count, f);
    past_the_end(ctx, dev, count, f);
    free(pf);
    free(pv);
}

int main(void)
{
    plan_lazy();
    watchdog(900);
    test_quick_builds(); /* POCL builds dominate: see testlib.h */
    int count = algo_count();
    ok(count >= 9, "the table names %d algorithms after auto", count - 1);
    for (int a = 0; a < count; a++) {
        cltopk_algo back = (cltopk_algo)-1;
        ok(cltopk_algo_parse(cltopk_algo_name((cltopk_algo)a), &back) == CLTOPK_OK &&
               back == (cltopk_algo)a,
           "algorithm %d: its name %s parses back", a, cltopk_algo_name((cltopk_algo)a));
    }
    cltopk_context *cpu = NULL;
    if (ok(cltopk_open(&cpu, "cpu") == CLTOPK_OK, "open cpu")) {
        run_on(cpu, "cpu", 0);
        cltopk_close(cpu);
    }
    char why[512];
    cltopk_context *cl = NULL;
    if (open_test_cl(&cl, why, sizeof why)) {
        run_on(cl, "opencl", 1);
        cltopk_close(cl);
    } else {
        skip("the OpenCL device: %s", why);
    }
    return tap_done();
}
