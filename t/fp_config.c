/* fp_config.c - kNN, queries and the index on an OpenCL device whose
 * floating-point arithmetic does not round as the CPU's (cltopk.h: CL_FP_DENORM,
 * CL_FP_ROUND_TO_NEAREST and CL_FP_INF_NAN), made so on the test device by
 * CLTOPK_FP_CONFIG=denorm=0: AUTO runs each on the CPU and returns the "cpu"
 * context's bits (host and cl_mem forms, an index built there and one built
 * before on the device), the explain texts name the missing capability, and
 * cltopk_benchmark_query_peer, which only the device runs, is
 * CLTOPK_ERR_UNSUPPORTED naming it, its outputs unwritten.  The data make
 * subnormal distances and scores, where a device that flushes them would
 * differ.  Nothing here builds a kernel. */
#include "testlib.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static rng_t rng;

#define LACKS "lacks CL_FP_DENORM in CL_DEVICE_SINGLE_FP_CONFIG"

/* a float of magnitude scale * [0, 1), either sign */
static float tiny(float scale)
{
    float u = (float)rng_below(&rng, 1u << 24) / (float)(1u << 24);
    return (rng_next(&rng) & 1 ? -u : u) * scale;
}

/* the explain text for the current environment, or "" on failure */
static void knn_plan(cltopk_context *ctx, int metric, int device_data, char *buf, size_t len)
{
    if (cltopk_explain_knn(ctx, (cltopk_metric)metric, 4, 300, 5, 7, device_data, buf, len) !=
        CLTOPK_OK)
        buf[0] = 0;
}

#if CLTOPK_HAVE_OPENCL
static void from_device(cltopk_context *ctx, cl_mem m, void *host, size_t bytes)
{
    cl_command_queue q;
    if (cltopk_get_cl(ctx, NULL, NULL, &q) != CLTOPK_OK ||
        clEnqueueReadBuffer(q, m, CL_TRUE, 0, bytes, host, 0, NULL, NULL) != CL_SUCCESS)
        bail("reading a buffer back failed");
}
#endif

static void knn(cltopk_context *cpu, cltopk_context *cl)
{
    enum { NQ = 4, NP = 300, D = 5, K = 7 };
    float q[NQ * D], p[NP * D];
    /* coordinates near 1e-20: squares and products near 1e-40, subnormal */
    for (size_t i = 0; i < NQ * D; i++)
        q[i] = tiny(1e-20f);
    for (size_t i = 0; i < NP * D; i++)
        p[i] = tiny(1e-20f);
    char plan_txt[2048];
    for (int metric = 0; metric < 2; metric++) {
        const char *m = metric ? "inner product" : "L2";
        float rd[NQ * K], hd[NQ * K];
        int64_t ri[NQ * K], hi[NQ * K];
        is_int(CLTOPK_OK, cltopk_knn(cpu, (cltopk_metric)metric, q, NQ, p, NP, D, K, rd, ri),
               "knn %s: the cpu context", m);
        int sub = 0;
        for (size_t i = 0; i < NQ * K; i++)
            sub += rd[i] != 0 && rd[i] > -1.1754944e-38f && rd[i] < 1.1754944e-38f;
        ok(sub > 0, "knn %s: %d of the distances are subnormal", m, sub);
        memset(hd, 0xA5, sizeof hd);
        memset(hi, 0xA5, sizeof hi);
        is_int(CLTOPK_OK, cltopk_knn(cl, (cltopk_metric)metric, q, NQ, p, NP, D, K, hd, hi),
               "knn %s: the OpenCL context", m);
        ok(!memcmp(rd, hd, sizeof rd) && !memcmp(ri, hi, sizeof ri),
           "knn %s: the OpenCL context returns the cpu context's bits", m);
#if CLTOPK_HAVE_OPENCL
        cl_mem dq = host_mem(cl, q, sizeof q), dp = host_mem(cl, p, sizeof p);
        cl_mem dd = host_mem(cl, hd, sizeof hd), di = host_mem(cl, hi, sizeof hi);
        cl_event ev = NULL;
        is_int(CLTOPK_OK, cltopk_knn_buffer(cl, (cltopk_metric)metric, dq, 0, NQ, dp, 0, NP, D,
                                            K, dd, di, 0, NULL, &ev),
               "knn_buffer %s", m);
        if (ev) {
            clWaitForEvents(1, &ev);
            clReleaseEvent(ev);
        }
        memset(hd, 0xA5, sizeof hd);
        memset(hi, 0xA5, sizeof hi);
        from_device(cl, dd, hd, sizeof hd);
        from_device(cl, di, hi, sizeof hi);
        ok(!memcmp(rd, hd, sizeof rd) && !memcmp(ri, hi, sizeof ri),
           "knn_buffer %s: the cpu context's bits", m);
        clReleaseMemObject(dq);
        clReleaseMemObject(dp);
        clReleaseMemObject(dd);
        clReleaseMemObject(di);
#endif
        knn_plan(cl, metric, 0, plan_txt, sizeof plan_txt);
        ok(strstr(plan_txt, "bits       cannot run this call: ") && strstr(plan_txt, LACKS) &&
               strstr(plan_txt, "(CLTOPK_FP_CONFIG=denorm=0 says so)") &&
               strstr(plan_txt, "\n-> cpu-heap\n"),
           "explain_knn %s: the CPU, and why", m);
        knn_plan(cl, metric, 1, plan_txt, sizeof plan_txt);
        ok(strstr(plan_txt, LACKS) && strstr(plan_txt, "\n-> cpu-heap on a host copy\n"),
           "explain_knn %s, device data: the CPU on a host copy, and why", m);
    }
}

static void query(cltopk_context *cpu, cltopk_context *cl)
{
    enum { N = 1000, K = 9 };
    float a[N];
    double b[N];
    /* a near 1e-20 and b near 1e-160: their squares are subnormal */
    for (size_t i = 0; i < N; i++) {
        a[i] = tiny(1e-20f);
        b[i] = (double)tiny(1.0f) * 1e-160;
    }
    cltopk_column cols[2] = {{"a", CLTOPK_FLOAT32, a}, {"b", CLTOPK_FLOAT64, b}};
    static const struct {
        const char *order;
        cltopk_dtype score;
    } qs[] = {{"a * a", CLTOPK_FLOAT32}, {"a * a / 3", CLTOPK_FLOAT32},
              {"b * b", CLTOPK_FLOAT64}};
    for (size_t c = 0; c < sizeof qs / sizeof qs[0]; c++) {
        const char *e = qs[c].order;
        size_t sw = qs[c].score == CLTOPK_FLOAT64 ? 8 : 4;
        unsigned char rs[K * 8], hs[K * 8];
        int64_t ri[K], hi[K];
        size_t rn = 0;
        is_int(CLTOPK_OK, cltopk_query_topk(cpu, cols, 2, N, e, NULL, K, 0, qs[c].score, rs, ri,
                                            &rn),
               "query %s: the cpu context", e);
        int sub = 0;
        for (size_t i = 0; i < K; i++) {
            double v;
            if (sw == 4) {
                float f;
                memcpy(&f, rs + 4 * i, 4);
                sub += f != 0 && f > -1.1754944e-38f && f < 1.1754944e-38f;
            } else {
                memcpy(&v, rs + 8 * i, 8);
                sub += v != 0 && v > -2.2250738585072014e-308 && v < 2.2250738585072014e-308;
            }
        }
        ok(sub > 0, "query %s: %d of the scores are subnormal", e, sub);
#if CLTOPK_HAVE_OPENCL
        cl_mem dc[2] = {host_mem(cl, a, sizeof a), host_mem(cl, b, sizeof b)};
        memset(hs, 0xA5, sizeof hs);
        memset(hi, 0xA5, sizeof hi);
        cl_ulong hn = 0;
        cl_mem ds = host_mem(cl, hs, sizeof hs), di = host_mem(cl, hi, sizeof hi);
        cl_mem dn = host_mem(cl, &hn, sizeof hn);
        cl_event ev = NULL;
        is_int(CLTOPK_OK, cltopk_query_topk_buffer(cl, cols, dc, NULL, 2, N, e, NULL, K, 0,
                                                   qs[c].score, ds, di, dn, 0, NULL, &ev),
               "query_buffer %s", e);
        if (ev) {
            clWaitForEvents(1, &ev);
            clReleaseEvent(ev);
        }
        from_device(cl, ds, hs, sizeof hs);
        from_device(cl, di, hi, sizeof hi);
        from_device(cl, dn, &hn, sizeof hn);
        ok(!memcmp(rs, hs, K * sw) && !memcmp(ri, hi, sizeof ri) && hn == rn,
           "query_buffer %s: the cpu context's rows and score bits", e);
        for (int r = 0; r < 2; r++)
            clReleaseMemObject(dc[r]);
        clReleaseMemObject(ds);
        clReleaseMemObject(di);
        clReleaseMemObject(dn);
#endif
        char txt[4096];
        int st = cltopk_query_explain(cl, cols, 2, N, e, NULL, K, 0, qs[c].score, 1, txt,
                                      sizeof txt);
        ok(st == CLTOPK_OK && strstr(txt, "device     cannot run it: ") && strstr(txt, LACKS) &&
               strstr(txt, "\n-> cpu on host copies\n"),
           "query_explain %s, device data: the CPU on host copies, and why", e);
        /* the peer runs on the device alone: refused, nothing written */
        double med = -1, sco = -2;
        st = cltopk_benchmark_query_peer(cl, cols, 2, N, e, NULL, K, 0, qs[c].score, 1, &med,
                                         &sco);
        is_int(CLTOPK_ERR_UNSUPPORTED, st, "query_peer %s: unsupported", e);
        const char *d = cltopk_last_error(cl);
        ok(strstr(d, "cltopk_benchmark_query_peer") && strstr(d, LACKS) != NULL,
           "query_peer %s: the detail names CL_FP_DENORM: %s", e, d);
        ok(med == -1 && sco == -2, "query_peer %s: its outputs unwritten", e);
    }
}

/* the best K of the index on ctx, or 0 on failure; its stats in *s */
static int index_query(cltopk_index *ix, size_t k, float *sc, int64_t *id, cltopk_index_stats *s)
{
    static const unsigned attr[3] = {0, 2, 1};
    static const float w[3] = {1e-10f, 3e-11f, 0.5f};
    return cltopk_index_topk(ix, attr, w, 3, k, sc, id, s) == CLTOPK_OK;
}

static void index_cases(cltopk_context *cpu, cltopk_context *cl)
{
    enum { N = 5000, D = 3, K = 20 };
    static float col[D][N];
    /* attributes 0 and 2 near 1e-30 (their weighted products near 1e-40,
     * subnormal), 1 near 1e-38 */
    for (size_t t = 0; t < N; t++) {
        col[0][t] = tiny(1e-30f);
        col[1][t] = tiny(1e-38f);
        col[2][t] = tiny(1e-30f);
    }
    const float *attrs[D] = {col[0], col[1], col[2]};
    cltopk_index_options opt = {.partitioning = CLTOPK_PARTITION_RANDOM, .partitions = 8,
                                .block = 64, .seed = 7};
    cltopk_index *ref = NULL, *on = NULL, *off = NULL;
    float rs[K], hs[K];
    int64_t ri[K], hi[K];
    cltopk_index_stats st;
    if (cltopk_index_build(cpu, attrs, D, N, &opt, &ref) != CLTOPK_OK ||
        !index_query(ref, K, rs, ri, &st))
        bail("the cpu context's index: %s", cltopk_last_error(cpu));
    int sub = 0;
    for (size_t i = 0; i < K; i++)
        sub += rs[i] != 0 && rs[i] > -1.1754944e-38f && rs[i] < 1.1754944e-38f;
    ok(sub > 0, "index: %d of the scores are subnormal", sub);
    cltopk_index_info info;
    /* built before the device is refused: on the device */
    unsetenv("CLTOPK_FP_CONFIG");
    is_int(CLTOPK_OK, cltopk_index_build(cl, attrs, D, N, &opt, &on), "index built on the device");
    ok(on && cltopk_index_info_get(on, &info) == CLTOPK_OK && info.on_device,
       "index: without the knob it is held by the device");
    setenv("CLTOPK_FP_CONFIG", "denorm=0", 1);
    is_int(CLTOPK_OK, cltopk_index_build(cl, attrs, D, N, &opt, &off), "index built refused");
    ok(off && cltopk_index_info_get(off, &info) == CLTOPK_OK && !info.on_device,
       "index: with the device refused it stays in host memory");
    cltopk_index *both[2] = {on, off};
    for (int b = 0; b < 2; b++) {
        const char *what = b ? "in host memory" : "on the device";
        memset(&st, 0xA5, sizeof st);
        memset(hs, 0xA5, sizeof hs);
        memset(hi, 0xA5, sizeof hi);
        ok(both[b] && index_query(both[b], K, hs, hi, &st), "index %s: the query", what);
        ok(!memcmp(rs, hs, sizeof rs) && !memcmp(ri, hi, sizeof ri),
           "index %s: the cpu context's tuples and score bits", what);
        is_int(0, st.on_device, "index %s: run on the CPU", what);
    }
    cltopk_index_free(ref);
    cltopk_index_free(on);
    cltopk_index_free(off);
}

/* malformed CLTOPK_FP_CONFIG: the device paths refuse, naming the variable */
static void malformed(cltopk_context *cl)
{
    static const char *const bad[] = {"denorm=2", "denorm=0.5", "fma=0", "denorm"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv("CLTOPK_FP_CONFIG", bad[i], 1);
        char txt[2048];
        knn_plan(cl, 0, 0, txt, sizeof txt);
        ok(strstr(txt, "bits       cannot run this call: CLTOPK_FP_CONFIG") &&
               strstr(txt, "\n-> cpu-heap\n"),
           "CLTOPK_FP_CONFIG=%s: kNN takes the CPU, naming the variable", bad[i]);
        float a[4] = {1, 2, 3, 4};
        cltopk_column col = {"a", CLTOPK_FLOAT32, a};
        double med = -1;
        int st = cltopk_benchmark_query_peer(cl, &col, 1, 4, "a", NULL, 1, 0, CLTOPK_FLOAT32, 1,
                                             &med, NULL);
        ok(st == CLTOPK_ERR_UNSUPPORTED && strstr(cltopk_last_error(cl), "CLTOPK_FP_CONFIG") &&
               med == -1,
           "CLTOPK_FP_CONFIG=%s: the query peer is unsupported: %s", bad[i],
           cltopk_last_error(cl));
    }
    setenv("CLTOPK_FP_CONFIG", "denorm=1", 1);
    char txt[2048];
    knn_plan(cl, 0, 0, txt, sizeof txt);
    ok(strstr(txt, "\n-> bits\n") != NULL, "CLTOPK_FP_CONFIG=denorm=1: kNN on the device");
}

int main(void)
{
    watchdog(600);
    rng_init(&rng, test_seed());
    plan_lazy();
    cltopk_context *cpu = NULL, *cl = NULL;
    char why[512];
    if (!open_test_cl(&cl, why, sizeof why)) {
        skip("everything: %s", why);
        return tap_done();
    }
    if (cltopk_open(&cpu, "cpu") != CLTOPK_OK)
        bail("cltopk_open(cpu): %s", cltopk_last_error(NULL));
    /* the device as it is: its own word (POCL keeps subnormals) */
    unsetenv("CLTOPK_FP_CONFIG");
    char txt[2048];
    knn_plan(cl, 0, 0, txt, sizeof txt);
    if (!strstr(txt, "\n-> bits\n")) {
        skip("the test device does not run kNN as it is (%s)", txt);
        cltopk_close(cl);
        cltopk_close(cpu);
        return tap_done();
    }
    {
        float a[4] = {1, 2, 3, 4};
        cltopk_column col = {"a", CLTOPK_FLOAT32, a};
        int st = cltopk_query_explain(cl, &col, 1, 4, "a * a", NULL, 2, 0, CLTOPK_FLOAT32, 1,
                                      txt, sizeof txt);
        ok(st == CLTOPK_OK && strstr(txt, "\n-> device\n"),
           "the device as it is runs the query on device data");
    }
    setenv("CLTOPK_FP_CONFIG", "denorm=0", 1);
    knn(cpu, cl);
    query(cpu, cl);
    index_cases(cpu, cl);
    malformed(cl);
    unsetenv("CLTOPK_FP_CONFIG");
    cltopk_close(cl);
    cltopk_close(cpu);
    return tap_done();
}
