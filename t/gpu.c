/* gpu.c - the core checks on an OpenCL GPU (cltopk_open(&ctx, "gpu")).
 *
 * Skips entirely where no GPU is found (the normal case on a CPU-only machine);
 * CLTOPK_TEST_GPU=P:D runs it on another device instead.
 * On a GPU: the bitonic limit from the device's local memory, the planner's
 * choice, top-k for every type and direction over k and n edges and special
 * data (BITONIC, AUTO, CPU_HEAP), selection, and a cl_mem call with an offset,
 * all against the oracle bit for bit. */
#include "testlib.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static rng_t rng;

static void topk_sets(cltopk_context *ctx, cltopk_dtype t, size_t lim)
{
    static const char *const ds[] = {"uniform", "special", "narrow", "worst", "nan",
                                     "equal",   "bucket",  "increasing", "decreasing"};
    const size_t nds = sizeof ds / sizeof ds[0];
    size_t tile = 2 * lim;
    size_t ns[] = {1, 3, 1000, tile - 1, tile, tile + 1, 3 * tile + 5, 100003, 1u << 20};
    cltopk_algo algos[] = {CLTOPK_ALGO_BITONIC, CLTOPK_ALGO_AUTO, CLTOPK_ALGO_CPU_HEAP};
    for (int s = 0; s < 2; s++)
        for (int a = 0; a < 3; a++) {
            int good = 1;
            size_t calls = 0;
            char msg[1024];
            for (size_t zi = 0; zi < sizeof ns / sizeof ns[0] && good; zi++) {
                size_t n = ns[zi];
                if (n == (1u << 20) && a == 2)
                    continue;
                const char *dist = ds[(zi + (size_t)s + (size_t)t) % nds];
                void *keys = bmalloc(n * tsize(t));
                gen_data(t, dist, n, s, &rng, keys);
                int64_t *perm = oracle_order(t, keys, n, s);
                size_t ks[128];
                size_t nk = k_list(lim, n, ks);
                for (size_t i = 0; i < nk && good; i++) {
                    size_t k = ks[i];
                    /* every k on small inputs, a few on large ones */
                    if (n > 200000 && k != 1 && k != 32 && k != lim && k != lim + 1)
                        continue;
                    int expect = (algos[a] == CLTOPK_ALGO_BITONIC && k > lim)
                                     ? CLTOPK_ERR_UNSUPPORTED
                                     : CLTOPK_OK;
                    int want = (int)(i % 3) + 1;
                    calls++;
                    if (!check_topk(ctx, algos[a], t, keys, n, k, s, perm, want, expect, msg,
                                    sizeof msg)) {
                        good = 0;
                        diag_after("n = %zu, k = %zu, %s: %s", n, k, dist, msg);
                    }
                }
                /* selection at a few ranks */
                size_t ranks[] = {0, n / 2, n - 1, lim - 1, (size_t)rng_below(&rng, n)};
                for (size_t i = 0; i < 5 && good; i++) {
                    size_t r = ranks[i];
                    if (r >= n)
                        continue;
                    int expect = (algos[a] == CLTOPK_ALGO_BITONIC && r >= lim)
                                     ? CLTOPK_ERR_UNSUPPORTED
                                     : CLTOPK_OK;
                    calls++;
                    if (!check_select(ctx, algos[a], t, keys, n, r, s, perm, WANT_BOTH, expect,
                                      msg, sizeof msg)) {
                        good = 0;
                        diag_after("select n = %zu, rank %zu, %s: %s", n, r, dist, msg);
                    }
                }
                free(perm);
                free(keys);
            }
            ok(good, "gpu: %s %s %s (%zu calls)", cltopk_algo_name(algos[a]), tname(t),
               s ? "smallest" : "largest", calls);
        }
}

#if CLTOPK_HAVE_OPENCL
/* one cl_mem call with an offset on the context's own queue */
static void buffer_call(cltopk_context *ctx, cltopk_dtype t, size_t lim)
{
    cl_context c;
    cl_device_id d;
    cl_command_queue q;
    if (cltopk_get_cl(ctx, &c, &d, &q) != CLTOPK_OK)
        bail("get_cl on the gpu context failed");
    size_t w = tsize(t), n = 300001, off = 17, k = lim;
    char *host = bmalloc((n + off) * w);
    gen_data(t, "special", n + off, 0, &rng, host);
    int64_t *perm = oracle_order(t, host + off * w, n, 0);
    size_t cap = k + GUARD;
    char *pk = bmalloc(cap * w), *gk = bmalloc(cap * w);
    int64_t *pi = bmalloc(cap * 8), *gi = bmalloc(cap * 8);
    make_poison(t, host + off * w, perm, k, cap, pk, pi);
    cl_int err;
    cl_mem in = clCreateBuffer(c, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, (n + off) * w, host,
                               &err);
    cl_mem ok_ = clCreateBuffer(c, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, cap * w, pk, &err);
    cl_mem oi = clCreateBuffer(c, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, cap * 8, pi, &err);
    if (!in || !ok_ || !oi)
        bail("clCreateBuffer: %d", (int)err);
    cl_event done = NULL;
    int st = cltopk_topk_buffer(ctx, t, in, off, n, k, CLTOPK_LARGEST, CLTOPK_ALGO_AUTO, ok_, oi,
                                0, NULL, &done);
    char msg[1024] = "";
    int good = st == CLTOPK_OK && done;
    if (good) {
        clEnqueueReadBuffer(q, ok_, CL_TRUE, 0, cap * w, gk, 1, &done, NULL);
        clEnqueueReadBuffer(q, oi, CL_TRUE, 0, cap * 8, gi, 1, &done, NULL);
        good = compare_outputs(t, host + off * w, n, perm, k, cap, gk, gi, pk, pi, msg,
                               sizeof msg);
    } else {
        snprintf(msg, sizeof msg, "status %d: %s", st, cltopk_last_error(ctx));
    }
    if (!ok(good, "gpu: topk_buffer %s n=%zu offset %zu k=%zu", tname(t), n, off, k))
        diag("%s", msg);
    if (done)
        clReleaseEvent(done);
    clReleaseMemObject(in);
    clReleaseMemObject(ok_);
    clReleaseMemObject(oi);
    free(host), free(perm), free(pk), free(gk), free(pi), free(gi);
}
#endif

int main(void)
{
    plan_lazy();
    watchdog(900);
    cltopk_context *ctx = NULL;
    /* CLTOPK_TEST_GPU names another device to run these checks on (e.g. "0:0") */
    const char *dev = getenv("CLTOPK_TEST_GPU");
    if (!dev || !*dev)
        dev = "gpu";
    int st = cltopk_open(&ctx, dev);
    if (st == CLTOPK_ERR_NO_DEVICE || st == CLTOPK_ERR_NO_OPENCL)
        skip_all("no OpenCL GPU: %s", cltopk_last_error(NULL));
    rng_init(&rng, test_seed() ^ 0x6F0);
    if (!ok(st == CLTOPK_OK, "cltopk_open(\"%s\")", dev))
        bail("a GPU exists but does not open: %s", cltopk_last_error(NULL));
    diag("GPU: %s", cltopk_device_name(ctx));
    size_t lim[6];
    for (int t = 0; t < 6; t++) {
        lim[t] = bitonic_limit(ctx, all_types[t]);
        ok(lim[t] >= 1 && !(lim[t] & (lim[t] - 1)), "gpu: bitonic limit for %s is %zu",
           tname(all_types[t]), lim[t]);
        if (!lim[t])
            bail("bitonic takes no k on this GPU");
    }
    for (int t = 0; t < 6; t++) {
        cltopk_algo chosen = (cltopk_algo)77;
        st = cltopk_plan(ctx, all_types[t], 1000000, lim[t] + 1, 0, &chosen);
        ok(st == CLTOPK_OK && chosen != CLTOPK_ALGO_BITONIC && cltopk_algo_name(chosen),
           "gpu: plan for %s k = limit + 1 is not bitonic (%s)", tname(all_types[t]),
           cltopk_algo_name(chosen) ? cltopk_algo_name(chosen) : "?");
        st = cltopk_plan(ctx, all_types[t], 1000000, 32, 0, &chosen);
        /* any algorithm that can run the call (the planner's models choose) */
        size_t wbytes = 0;
        ok(st == CLTOPK_OK && chosen != CLTOPK_ALGO_AUTO &&
               cltopk_workspace_size(ctx, all_types[t], 1000000, 32, 0, chosen, &wbytes) ==
                   CLTOPK_OK,
           "gpu: plan for %s n = 10^6 k = 32 is an implemented algorithm (%s)",
           tname(all_types[t]), cltopk_algo_name(chosen));
        /* data on the device: no transfer in the models, so a device algorithm */
        st = cltopk_plan_buffer(ctx, all_types[t], 1 << 26, 32, 0, &chosen);
        ok(st == CLTOPK_OK && chosen != CLTOPK_ALGO_CPU_HEAP && chosen != CLTOPK_ALGO_CPU_RADIX &&
               chosen != CLTOPK_ALGO_CPU_BITONIC && chosen != CLTOPK_ALGO_AUTO,
           "gpu: plan_buffer for %s n = 2^26 k = 32 is a device algorithm (%s)",
           tname(all_types[t]), cltopk_algo_name(chosen));
    }
    for (int t = 0; t < 6; t++)
        topk_sets(ctx, all_types[t], lim[t]);
#if CLTOPK_HAVE_OPENCL
    for (int t = 0; t < 6; t++)
        buffer_call(ctx, all_types[t], lim[t]);
#endif
    cltopk_close(ctx);
    return tap_done();
}
