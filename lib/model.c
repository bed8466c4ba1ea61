/* model.c - the AUTO planner's cost models and the device constants they use.
 *
 * Constants, measured once per device and kept in the disk cache beside the
 * program binaries (file plan-HASH.txt, HASH of library version, platform,
 * device and driver; read and written as lib/cachefile.c says), and in memory
 * for the process:
 *   bw      device read bandwidth, bytes/s (cl/bandwidth.cl read_max, as the
 *           benchmark's read floor)
 *   launch  seconds a kernel launch adds when enqueued back to back
 *   lrate   local-histogram increments per second over the whole device
 *           (cl/calib.cl): the inner operation of the radix and SBP kernels,
 *           and the unit of local-memory work in the bitonic model
 *   h2d     host-to-device copy bandwidth, bytes/s
 *   cpubw   host memory read bandwidth of all cores, bytes/s
 * CLTOPK_PLAN_CONSTS="bw=..,launch=..,lrate=..,h2d=..,cpubw=.." sets them
 * (tests, what-if runs): it wins over the disk cache and is never saved; a
 * name it lacks comes from the disk cache or is measured.
 *
 * Models (seconds; uniform data; R = one read of the input = n * bytes / bw):
 *   cpu-heap      host data: n * bytes / cpubw * 1.5 + k log2 k merge work;
 *                 device data adds the copy to the host
 *   bitonic       s(K) = log2(2K) (log2(2K) + 1) / 2 compare-exchanges an
 *                 element (K = k rounded up to a power of two); GPUs: R (10.7
 *                 + 0.87 s(K)), fitted to the foundation kernel's H200 times
 *                 (bench/RESULTS.md); CPU devices: R + n s(K) / (8 lrate) (a
 *                 compare-exchange about 1/8 of a local atomic increment on
 *                 POCL); plus launches
 *   sbp-radix     R * T / (T - C) (level 0 plus the shrinking levels) + n * 3
 *                 / lrate (about 1.5 passes a tile of histogram, OR/AND and
 *                 filter work) + levels' launches + the sort of k
 *   sbp-tree      as sbp-radix with 1.9 passes (research note 2.6); refined
 *                 by its own model where the tree registers one
 *   radix-select  2R for integers (histogram and filter of pass 0; later
 *                 passes read n / 256, ...), 3R for floats (pass 0 narrows
 *                 without a copy, pass 1 reads the input again) + n * 3 /
 *                 lrate + 3 launches a digit + the sort of k (bitonic in
 *                 global memory)
 *   every device algorithm on host data adds n * bytes / h2d.
 * The choice is the smallest predicted time among the algorithms that support
 * the call; cltopk_explain prints every row. */
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    double bw, launch, lrate, h2d, cpubw;
} plan_consts;

/* ---------------------------------------------------------------- constants */

#if HAVE_OPENCL
static pthread_mutex_t consts_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    cl_device_id dev;
    plan_consts c;
} known[16];
static int nknown;

static uint64_t hash_str(uint64_t h, const char *s)
{
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 0x100000001b3ull;
    }
    return h;
}

static int consts_path(const cltopk_context *ctx, char *dir, size_t dlen, char *path, size_t plen)
{
    if (!cltopk_cache_dir(dir, dlen))
        return 0;
    uint64_t h = hash_str(0xcbf29ce484222325ull, CLTOPK_VERSION_STRING);
    h = hash_str(h, ctx->caps.platform_name);
    h = hash_str(h, ctx->caps.device_name);
    h = hash_str(h, ctx->caps.device_version);
    h = hash_str(h, ctx->caps.driver_version);
    int n = snprintf(path, plen, "%s/plan-%016llx.txt", dir, (unsigned long long)h);
    return n > 0 && (size_t)n < plen;
}

static void parse_consts(const char *s, plan_consts *c)
{
    while (s && *s) {
        char name[16];
        double v;
        int used = 0;
        if (sscanf(s, " %15[a-z0-9]%*[ =]%lf%n", name, &v, &used) == 2 && used > 0) {
            if (v > 0) {
                if (!strcmp(name, "bw"))
                    c->bw = v;
                else if (!strcmp(name, "launch"))
                    c->launch = v;
                else if (!strcmp(name, "lrate"))
                    c->lrate = v;
                else if (!strcmp(name, "h2d"))
                    c->h2d = v;
                else if (!strcmp(name, "cpubw"))
                    c->cpubw = v;
            }
            s += used;
        } else {
            s++;
        }
        while (*s == ',' || *s == '\n' || *s == ' ')
            s++;
    }
}

/* the constants file is a few lines: a larger one is no constants file */
#define CONSTS_FILE_MAX 4096

static void load_consts(const char *path, plan_consts *c)
{
    size_t n;
    char *buf = cltopk_cachefile_slurp(path, CONSTS_FILE_MAX, &n);
    if (!buf)
        return;
    if (n >= 14 && !strncmp(buf, "cltopk-plan 1\n", 14))
        parse_consts(buf + 14, c);
    free(buf);
}

static void save_consts(char *dir, const char *path, const plan_consts *c)
{
    if (cltopk_mkdirs(dir) != 0)
        return;
    char text[512];
    int n = snprintf(text, sizeof text,
                     "cltopk-plan 1\nbw %.6g\nlaunch %.6g\nlrate %.6g\nh2d %.6g\ncpubw %.6g\n",
                     c->bw, c->launch, c->lrate, c->h2d, c->cpubw);
    if (n <= 0 || (size_t)n >= sizeof text)
        return;
    const void *parts[1] = {text};
    const size_t lens[1] = {(size_t)n};
    if (cltopk_cachefile_write(path, 1, parts, lens) != 0) {
        /* not written: measured again by the next process */
    }
}

/* measure what is still 0 in c */
static int measure(cltopk_context *ctx, plan_consts *c)
{
    int st = CLTOPK_OK;
    int gpu = (ctx->caps.type & CL_DEVICE_TYPE_GPU) != 0;
    size_t bytes = gpu ? (size_t)256 << 20 : (size_t)32 << 20;
    while (bytes > ctx->caps.max_alloc / 2 && bytes > 4096)
        bytes /= 2;
    size_t wg = ctx->caps.max_wg < 256 ? ctx->caps.max_wg : 256;
    cl_kernel rk = NULL, lk = NULL;
    cl_mem buf = NULL, sink;
    char *host = NULL;
    cl_int err;
    size_t cu = ctx->caps.compute_units ? ctx->caps.compute_units : 1;
    size_t global = cu * 2048;
    global = (global / wg) * wg;
    if ((st = cltopk_finish_own(ctx)) != CLTOPK_OK ||
        (st = cltopk_kernel_get(ctx, "bandwidth.cl", "-D KEY_BITS=32 -D KEY_KIND=0", "read_max",
                                &rk)) != CLTOPK_OK)
        goto out;
    buf = clCreateBuffer(ctx->clctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
    host = calloc(1, bytes);
    if (!buf || !host) {
        st = buf ? cltopk_fail(ctx, CLTOPK_ERR_NO_MEMORY, "planner: out of host memory")
                 : cltopk_clfail(ctx, err, "planner: clCreateBuffer");
        goto out;
    }
    if ((st = cltopk_scratch(ctx, SCR_BENCH, global * 4, &sink)) != CLTOPK_OK)
        goto out;
    /* h2d (also fills the buffer) */
    double t0 = cltopk_now();
    err = clEnqueueWriteBuffer(ctx->queue, buf, CL_TRUE, 0, bytes, host, 0, NULL, NULL);
    double t1 = cltopk_now();
    if (err != CL_SUCCESS) {
        st = cltopk_clfail(ctx, err, "planner: clEnqueueWriteBuffer");
        goto out;
    }
    if (!c->h2d) {
        t0 = cltopk_now();
        err = clEnqueueWriteBuffer(ctx->queue, buf, CL_TRUE, 0, bytes, host, 0, NULL, NULL);
        t1 = cltopk_now();
        c->h2d = bytes / (t1 - t0 > 1e-9 ? t1 - t0 : 1e-9);
    }
    if (!c->cpubw)
        c->cpubw = bytes / cltopk_cpu_read_time(host, bytes, 5);
    /* bandwidth: median of 5 reads (the benchmark's read floor) */
    if (!c->bw) {
        double tr;
        if ((st = cltopk_device_read_time(ctx, buf, bytes, 5, &tr)) != CLTOPK_OK)
            goto out;
        c->bw = bytes / tr;
    }
    /* launch: 64 empty launches back to back */
    if (!c->launch) {
        cl_ulong zero = 0;
        st = cltopk_set_args(ctx, rk, 3, sizeof(cl_mem), &buf, sizeof zero, &zero,
                             sizeof(cl_mem), &sink);
        if (st == CLTOPK_OK)
            st = cltopk_launch(ctx, rk, wg, wg, 0, NULL);
        if (st == CLTOPK_OK)
            st = cltopk_finish_own(ctx);
        t0 = cltopk_now();
        for (int r = 0; r < 64 && st == CLTOPK_OK; r++)
            st = cltopk_launch(ctx, rk, wg, wg, 0, NULL);
        if (st == CLTOPK_OK)
            st = cltopk_finish_own(ctx);
        if (st != CLTOPK_OK)
            goto out;
        c->launch = (cltopk_now() - t0) / 64;
    }
    if (!c->lrate) {
        char opts[64];
        snprintf(opts, sizeof opts, "-D WG=%zu", wg);
        if ((st = cltopk_kernel_get(ctx, "calib.cl", opts, "local_rate", &lk)) != CLTOPK_OK)
            goto out;
        cl_uint iters = gpu ? 4096 : 1024;
        double t[3];
        st = cltopk_set_args(ctx, lk, 2, sizeof iters, &iters, sizeof(cl_mem), &sink);
        for (int r = -1; r < 3 && st == CLTOPK_OK; r++) {
            t0 = cltopk_now();
            st = cltopk_launch(ctx, lk, global, wg, 0, NULL);
            if (st == CLTOPK_OK)
                st = cltopk_finish_own(ctx);
            if (r >= 0)
                t[r] = cltopk_now() - t0;
        }
        if (st != CLTOPK_OK)
            goto out;
        c->lrate = (double)global * iters / cltopk_median(t, 3);
    }
out:
    if (rk)
        clReleaseKernel(rk);
    if (lk)
        clReleaseKernel(lk);
    if (buf)
        clReleaseMemObject(buf);
    free(host);
    return st;
}

static int get_consts(cltopk_context *ctx, plan_consts *out)
{
    pthread_mutex_lock(&consts_lock);
    for (int i = 0; i < nknown; i++)
        if (known[i].dev == ctx->dev) {
            *out = known[i].c;
            pthread_mutex_unlock(&consts_lock);
            return CLTOPK_OK;
        }
    pthread_mutex_unlock(&consts_lock);
    plan_consts c;
    memset(&c, 0, sizeof c);
    char dir[4096], path[4200];
    int disk = consts_path(ctx, dir, sizeof dir, path, sizeof path);
    if (disk)
        load_consts(path, &c);
    /* the environment wins over the disk, and is never written to it */
    const char *env = cltopk_env("CLTOPK_PLAN_CONSTS");
    parse_consts(env, &c);
    int missing = !c.bw || !c.launch || !c.lrate || !c.h2d || !c.cpubw;
    if (missing) {
        int st = measure(ctx, &c);
        if (st != CLTOPK_OK)
            return st;
        if (disk && !env)
            save_consts(dir, path, &c);
    }
    pthread_mutex_lock(&consts_lock);
    if (nknown < 16) {
        known[nknown].dev = ctx->dev;
        known[nknown].c = c;
        nknown++;
    }
    pthread_mutex_unlock(&consts_lock);
    *out = c;
    return CLTOPK_OK;
}
#endif

/* ------------------------------------------------------------------ models */

static double lg2(double x)
{
    return x > 1 ? log2(x) : 0;
}

#if HAVE_OPENCL
static size_t pow2_ge(size_t k)
{
    size_t K = 1;
    while (K < k)
        K <<= 1;
    return K;
}

/* the device bitonic sort of k pairs (radix select, SBP): launches and traffic */
static double sort_time(const plan_consts *c, size_t k, int kb)
{
    if (k <= 1)
        return 2 * c->launch;
    double K2 = (double)pow2_ge(k), blk = 1024, pb = kb + 4;
    double launches = 2, bytes = 0;
    double stages = lg2(K2) > lg2(blk) ? lg2(K2) - lg2(blk) : 0;
    /* global steps: sum over stages of (log2 s - log2 blk); local: one a stage */
    double gsteps = stages * (stages + 1) / 2;
    launches += gsteps + stages + 1;
    bytes += (gsteps + stages + 1) * 2 * K2 * pb;
    double local = K2 * lg2(blk < K2 ? blk : K2) * (lg2(blk < K2 ? blk : K2) + 1) / 2 * 2;
    return launches * c->launch + bytes / c->bw + local / c->lrate + k * (kb + 8) / c->bw;
}

#endif

static double model_cpu(const plan_consts *c, const cltopk_request *rq, int device_data)
{
    double n = (double)rq->n, kb = rq->bytes, k = (double)rq->k;
    double t = n * kb / c->cpubw * 1.5 + k * lg2(k) * 8 * 5e-9;
    if (device_data)
        t += n * kb / c->h2d;
    return t;
}

#if HAVE_OPENCL
/* GPUs: the models are fitted to the H200 measurements of bench/RESULTS.md (2^29
 * f32, keys and positions, the read time R = n * kb / bw taken with the
 * planner's bandwidth constant, which reads about 0.76 of the benchmark's read
 * floor there), in units of R; other GPUs scale with their own R and launch
 * cost.  (Keys alone cost about 0.6 of that for the bitonic reducer; the
 * plans assume positions, which every algorithm's costs grow alike with.) */
static double model_bitonic(const plan_consts *c, const cltopk_request *rq, int gpu)
{
    double n = (double)rq->n, kb = rq->bytes, K = (double)pow2_ge(rq->k);
    double s = lg2(2 * K) * (lg2(2 * K) + 1) / 2;
    double levels = 1 + ceil(lg2(n / 4096) / (lg2(4096 / K) > 1 ? lg2(4096 / K) : 1));
    if (gpu) {
        /* SortReducer/BitonicReducer: 6.8, 17.2 ms at k = 32, 1024 against a
         * 0.49 ms floor: t = R (3.0 + 0.357 s) (k = 8 .. 1024 within 5%; k <= 4
         * predicted high, where bitonic wins anyway) */
        return n * kb / c->bw * (3.0 + 0.357 * s) + levels * c->launch;
    }
    /* a compare-exchange in local memory: about 1/8 of a local atomic increment
     * (POCL measurement, n = 2^16, k = 1 .. 1024) */
    return n * kb / c->bw + n * s / (8 * c->lrate) + levels * c->launch;
}

static double model_sbp(const plan_consts *c, const cltopk_request *rq, double passes, int gpu)
{
    double n = (double)rq->n, kb = rq->bytes, k = (double)rq->k;
    double T = 4096, C = k < 128 ? 128 : k;
    double R = n * kb / c->bw;
    double levels = 1 + (n > T ? ceil(lg2(n / T) / lg2(T / C)) : 0);
    if (gpu)
        /* SBP radix measured 4.2 ms (k <= 64) rising to 7.3 ms (k = 1024) */
        return R * (6.5 + 1.2 * (k > 64 ? lg2(k / 64) : 0)) * passes / 1.5 + levels * c->launch +
               sort_time(c, rq->k, rq->bytes);
    return R * T / (T - C) + n * passes * 2 / c->lrate + levels * c->launch +
           sort_time(c, rq->k, rq->bytes);
}

static double model_radix(const plan_consts *c, const cltopk_request *rq, int gpu)
{
    double n = (double)rq->n, kb = rq->bytes;
    double digits = rq->bytes + 4;
    double R = n * kb / c->bw;
    if (gpu)
        /* measured 5.2 ms f32 and 3.2 ms u32 uniform (2^29), any k to 2^20 */
        return R * (rq->kind == KIND_FLOAT ? 8.1 : 4.9) + (1 + 3 * digits) * c->launch +
               sort_time(c, rq->k, rq->bytes);
    /* integers: digit 0 already cuts to 1/256 (histogram + filter: 2R); floats
     * of one sign and a few exponents: digit 0 narrows, digit 1 cuts (3R) */
    double reads = rq->kind == KIND_FLOAT ? 3 : 2;
    return reads * R * (1 + 1.0 / 256) + n * 3 / c->lrate + (1 + 3 * digits) * c->launch +
           sort_time(c, rq->k, rq->bytes);
}

#endif

/* ------------------------------------------------------------------ choice */

typedef struct {
    const cltopk_algorithm *a;
    double t;
    int ok;
    char why[256];
} plan_row;

/* every candidate's prediction; the index of the best in *best (-1: none) */
static int plan_rows(cltopk_context *ctx, const cltopk_request *rq, int device_data,
                     plan_row *rows, int *nrows, int *best, plan_consts *pc)
{
    int n = 0;
    *best = -1;
    memset(pc, 0, sizeof *pc);
#if HAVE_OPENCL
    if (ctx->is_cl) {
        int st = get_consts(ctx, pc);
        if (st != CLTOPK_OK)
            return st;
        const cltopk_algo ids[] = {CLTOPK_ALGO_BITONIC, CLTOPK_ALGO_SBP_RADIX,
                                   CLTOPK_ALGO_SBP_TREE, CLTOPK_ALGO_RADIX_SELECT};
        double xfer = device_data ? 0 : (double)rq->n * rq->bytes / pc->h2d;
        int gpu = (ctx->caps.type & CL_DEVICE_TYPE_GPU) != 0;
        for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
            const cltopk_algorithm *a = cltopk_algorithm_get(ids[i]);
            if (!a) /* not in this build (the tree registers itself in plan.c) */
                continue;
            plan_row *r = &rows[n++];
            r->a = a;
            r->why[0] = 0;
            r->ok = a->supports(ctx, rq, r->why, sizeof r->why);
            switch (ids[i]) {
            case CLTOPK_ALGO_BITONIC:
                r->t = model_bitonic(pc, rq, gpu);
                break;
            case CLTOPK_ALGO_SBP_RADIX: r->t = model_sbp(pc, rq, 1.5, gpu); break;
            case CLTOPK_ALGO_SBP_TREE: r->t = model_sbp(pc, rq, 1.9, gpu); break;
            default: r->t = model_radix(pc, rq, gpu); break;
            }
            r->t += xfer;
        }
    }
#endif
    /* the CPU: one entry, the CPU planner's choice (cpu/plan_cpu.c); cl_mem data
     * takes the record with a run_buffer, which runs the same planner */
    plan_row *r = &rows[n++];
    r->a = device_data ? &cltopk_algo_cpu_heap : cltopk_cpu_auto_algorithm(rq);
    r->ok = 1;
    r->why[0] = 0;
    r->t = pc->cpubw > 0 ? model_cpu(pc, rq, device_data) : 0;
    for (int i = 0; i < n; i++)
        if (rows[i].ok && (*best < 0 || rows[i].t < rows[*best].t))
            *best = i;
    *nrows = n;
    return CLTOPK_OK;
}

int cltopk_plan_auto(cltopk_context *ctx, const cltopk_request *rq, int device_data,
                     const cltopk_algorithm **out)
{
    plan_row rows[8];
    int n, best;
    plan_consts pc;
    int st = plan_rows(ctx, rq, device_data, rows, &n, &best, &pc);
    if (st != CLTOPK_OK)
        return st;
    *out = best >= 0 ? rows[best].a : &cltopk_algo_cpu_heap;
    return CLTOPK_OK;
}

static const int kind_of[6] = {KIND_FLOAT, KIND_FLOAT, KIND_SIGNED, KIND_UNSIGNED, KIND_SIGNED,
                               KIND_UNSIGNED};

int cltopk_explain(cltopk_context *ctx, cltopk_dtype type, size_t n, size_t k, unsigned flags,
                   int device_data, char *buf, size_t len)
{
    if (!ctx || !buf || !len)
        return cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT,
                           "cltopk_explain: ctx and buf must not be NULL, len > 0");
    size_t bytes = cltopk_dtype_size(type);
    if (!bytes)
        return cltopk_fail(ctx, CLTOPK_ERR_BAD_TYPE, "cltopk_explain: unknown type %d",
                           (int)type);
    if (k == 0 || k > n)
        return cltopk_fail(ctx, CLTOPK_ERR_K_RANGE, "cltopk_explain: need 0 < k <= n");
    pthread_mutex_lock(&ctx->lock);
    cltopk_request rq;
    memset(&rq, 0, sizeof rq);
    rq.type = type;
    rq.bytes = (int)bytes;
    rq.kind = kind_of[type];
    rq.n = n;
    rq.k = k;
    rq.smallest = (flags & CLTOPK_SMALLEST) != 0;
    rq.want_keys = rq.want_index = 1;
#if HAVE_OPENCL
    rq.on_device = device_data;
#endif
    plan_row rows[8];
    int nr, best;
    plan_consts pc;
    int st = plan_rows(ctx, &rq, device_data, rows, &nr, &best, &pc);
    if (st == CLTOPK_OK) {
        size_t o = 0;
#define PUT(...)                                                                            \
    do {                                                                                    \
        int w_ = snprintf(buf + o, o < len ? len - o : 0, __VA_ARGS__);                     \
        if (w_ > 0)                                                                         \
            o += (size_t)w_;                                                                \
    } while (0)
        PUT("plan for n = %zu, k = %zu, %s, %s data, on %s\n", n, k, cltopk_dtype_name(type),
            device_data ? "device" : "host", ctx->name);
        if (ctx->is_cl)
            PUT("constants: read %.1f GB/s, launch %.1f us, local %.3g incr/s, host->device "
                "%.1f GB/s, host read %.1f GB/s\n",
                pc.bw / 1e9, pc.launch * 1e6, pc.lrate, pc.h2d / 1e9, pc.cpubw / 1e9);
        for (int i = 0; i < nr; i++) {
            if (rows[i].ok && rows[i].t > 0)
                PUT("%s %-13s predicted %10.3f ms\n", i == best ? "->" : "  ",
                    cltopk_algo_name(rows[i].a->id), rows[i].t * 1e3);
            else if (rows[i].ok)
                PUT("%s %-13s (no model on this device)\n", i == best ? "->" : "  ",
                    cltopk_algo_name(rows[i].a->id));
            else
                PUT("   %-13s unsupported: %s\n", cltopk_algo_name(rows[i].a->id), rows[i].why);
        }
        PUT("choice: %s\n", best >= 0 ? cltopk_algo_name(rows[best].a->id) : "cpu-heap");
#undef PUT
        if (o >= len)
            buf[len - 1] = 0;
    }
    pthread_mutex_unlock(&ctx->lock);
    return st;
}
