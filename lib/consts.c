/* consts.c - the device constants of the planner's cost models (lib/plan.c and
 * each record's predict()).
 *
 * Measured once per device and kept in the disk cache beside the program
 * binaries (file plan-HASH.txt, HASH of library version, platform, device and
 * driver), and in memory for the process:
 *   bw      device read bandwidth, bytes/s (cl/bandwidth.cl read_max, as the
 *           benchmark's read floor)
 *   launch  seconds a kernel launch adds when enqueued back to back
 *   lrate   local-histogram increments per second over the whole device
 *           (cl/calib.cl): the inner operation of the radix and SBP kernels,
 *           and the unit of local-memory work in the bitonic model
 *   h2d     host-to-device copy bandwidth, bytes/s
 *   cpubw   host memory read bandwidth of all cores, bytes/s
 * CLTOPK_PLAN_CONSTS="bw=..,launch=..,lrate=..,h2d=..,cpubw=.." sets them
 * (tests, what-if runs; parsed strictly, tune.h): it wins over the disk cache
 * and is never saved; a name it lacks comes from the disk cache or is
 * measured. */
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


/* ---------------------------------------------------------------- constants */

#if HAVE_OPENCL
/* CLTOPK_PLAN_CONSTS: the names of the disk file, positive numbers */
static const cltopk_param consts_params[] = {
    {.name = "bw", .min = 1, .max = 1e16},     {.name = "launch", .min = 1e-9, .max = 1},
    {.name = "lrate", .min = 1, .max = 1e18},  {.name = "h2d", .min = 1, .max = 1e16},
    {.name = "cpubw", .min = 1, .max = 1e16},
};
static const cltopk_param_table consts_table = {"CLTOPK_PLAN_CONSTS", consts_params, 5, NULL};

static pthread_mutex_t consts_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    cl_device_id dev;
    cltopk_consts c;
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

static void parse_consts(const char *s, cltopk_consts *c)
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

static void load_consts(const char *path, cltopk_consts *c)
{
    size_t n;
    char *buf = cltopk_cachefile_slurp(path, CONSTS_FILE_MAX, &n);
    if (!buf)
        return;
    if (n >= 14 && !strncmp(buf, "cltopk-plan 2\n", 14))
        parse_consts(buf + 14, c);
    free(buf);
}

static void save_consts(char *dir, const char *path, const cltopk_consts *c)
{
    if (cltopk_mkdirs(dir) != 0)
        return;
    char text[512];
    int n = snprintf(text, sizeof text,
                     "cltopk-plan 2\nbw %.6g\nlaunch %.6g\nlrate %.6g\nh2d %.6g\ncpubw %.6g\n",
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
static int measure(cltopk_context *ctx, cltopk_consts *c)
{
    int st = CLTOPK_OK;
    int gpu = (ctx->caps.type & CL_DEVICE_TYPE_GPU) != 0;
    size_t bytes = gpu ? (size_t)512 << 20 : (size_t)32 << 20;
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
    /* bandwidth: the slope between reads of a quarter and of the whole buffer
     * (medians of 5, the benchmark's read floor), so that the launch and the
     * ramp of one read do not count: on the H200 a read of 256 MB alone gave
     * 3.23 TB/s where a read of 2 GB reaches 4.4 */
    if (!c->bw) {
        double tr, tq;
        if ((st = cltopk_device_read_time(ctx, buf, bytes, 5, &tr)) != CLTOPK_OK ||
            (st = cltopk_device_read_time(ctx, buf, bytes / 4, 5, &tq)) != CLTOPK_OK)
            goto out;
        c->bw = tr > tq * 1.5 ? 0.75 * bytes / (tr - tq) : bytes / tr;
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

int cltopk_consts_get(cltopk_context *ctx, cltopk_consts *out)
{
    pthread_mutex_lock(&consts_lock);
    for (int i = 0; i < nknown; i++)
        if (known[i].dev == ctx->dev) {
            *out = known[i].c;
            out->gpu = (ctx->caps.type & CL_DEVICE_TYPE_GPU) != 0;
            pthread_mutex_unlock(&consts_lock);
            return CLTOPK_OK;
        }
    pthread_mutex_unlock(&consts_lock);
    cltopk_consts c;
    memset(&c, 0, sizeof c);
    char dir[4096], path[4200];
    int disk = consts_path(ctx, dir, sizeof dir, path, sizeof path);
    if (disk)
        load_consts(path, &c);
    /* the environment wins over the disk, and is never written to it */
    const char *env = cltopk_env("CLTOPK_PLAN_CONSTS");
    cltopk_params p = {{0}, 0, 0};
    char why[300];
    if (cltopk_params_apply(&consts_table, env, "CLTOPK_PLAN_CONSTS", &p, why, sizeof why) != 0)
        return cltopk_fail(ctx, CLTOPK_ERR_UNSUPPORTED, "the planner: %s", why);
    double *slot[] = {&c.bw, &c.launch, &c.lrate, &c.h2d, &c.cpubw};
    for (int i = 0; i < 5; i++)
        if ((p.set >> i) & 1u)
            *slot[i] = p.v[i];
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
    out->gpu = (ctx->caps.type & CL_DEVICE_TYPE_GPU) != 0;
    return CLTOPK_OK;
}
#endif


#if !HAVE_OPENCL
int cltopk_consts_get(cltopk_context *ctx, cltopk_consts *out)
{
    (void)out;
    return cltopk_fail(ctx, CLTOPK_ERR_NO_OPENCL, "the planner's constants need OpenCL");
}
#endif
