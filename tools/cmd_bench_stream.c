/* cmd_bench_stream.c - `cltopk bench --stream`: top-k of host data larger than
 * a chunk, the streaming path (CLTOPK_STREAM=1, and direct) against the chunk
 * loop (CLTOPK_STREAM=0) in the same run, beside the host-to-device bandwidth
 * measured from the same pinned memory. */
#include "cli.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static void stream_help(void)
{
    printf("Usage: cltopk bench --stream [--device SPEC] [-n N] [-k LIST] [--algo A]\n"
           "                    [--reps R] [--pageable] [--modes LIST]\n"
           "\n"
           "Time cltopk_topk on float32 host data (uniform in [0, 1)) for each mode of\n"
           "CLTOPK_STREAM: 0 (the chunk loop: each chunk transferred before its\n"
           "reduction), 1 (pieces streamed through pinned staging, the transfer of one\n"
           "beside the reduction of the one before) and direct (the pieces written from\n"
           "the caller's memory).  The input lies in pinned host memory (a mapped\n"
           "CL_MEM_ALLOC_HOST_PTR buffer of the device's context), or with --pageable\n"
           "in malloc'd memory.  The host-to-device bandwidth is measured first, from\n"
           "the same memory: the median of R writes of 1 GiB.  Each row: the median of\n"
           "R calls after a warm-up, GB/s of input, its share of that bandwidth, and\n"
           "its speed over mode 0; every mode must give mode 0's answer.\n"
           "\n"
           "Options:\n"
           "      --device SPEC  the device (default gpu); a list (\"gpu,1:0\") or all opens\n"
           "                     a context of several devices\n"
           "  -n, --count N      elements (default 2^32)\n"
           "  -k, --k LIST       k values (default 1000)\n"
           "  -a, --algo A       the algorithm (default radix-select: AUTO may take the\n"
           "                     host CPU for host data)\n"
           "  -r, --reps R       timed calls a row, 1 to 64 (default 3)\n"
           "      --modes LIST   CLTOPK_STREAM values (default 0,1,direct)\n"
           "      --pageable     the input in malloc'd memory instead of pinned\n"
           "  -h, --help         this text\n");
}

#if CLTOPK_HAVE_OPENCL
/* the median seconds of `reps` blocking writes of `bytes` from host to a
 * device buffer; < 0 on an OpenCL error */
static double h2d_time(cl_context cx, cl_command_queue q, const void *host, size_t bytes,
                       int reps)
{
    cl_int err;
    cl_mem d = clCreateBuffer(cx, CL_MEM_READ_WRITE, bytes, NULL, &err);
    if (!d)
        return -1;
    double t[64];
    for (int r = -1; r < reps; r++) {
        double t0 = cli_seconds();
        err = clEnqueueWriteBuffer(q, d, CL_TRUE, 0, bytes, host, 0, NULL, NULL);
        if (err != CL_SUCCESS)
            break;
        if (r >= 0)
            t[r] = cli_seconds() - t0;
    }
    clReleaseMemObject(d);
    return err == CL_SUCCESS ? cli_median(t, (size_t)reps) : -1;
}
#endif

int cmd_bench_stream(int argc, char **argv)
{
    const char *cmd = "bench";
    enum { O_STREAM = 1, O_DEVICE, O_N, O_K, O_ALGO, O_REPS, O_MODES, O_PAGEABLE, O_HELP };
    static const cli_option opts[] = {
        {O_STREAM, 0, "stream", 0}, {O_DEVICE, 0, "device", 1}, {O_N, 'n', "count", 1},
        {O_K, 'k', "k", 1},         {O_ALGO, 'a', "algo", 1},   {O_REPS, 'r', "reps", 1},
        {O_MODES, 0, "modes", 1},   {O_PAGEABLE, 0, "pageable", 0}, {O_HELP, 'h', "help", 0},
        {0, 0, NULL, 0}};
    cli_parser p;
    const char *arg, *device = "gpu";
    char modes_buf[256] = "0,1,direct";
    uint64_t n = 1ull << 32, ks[64] = {1000}, reps = 3;
    size_t nk = 1;
    cltopk_algo algo = CLTOPK_ALGO_RADIX_SELECT;
    int pageable = 0, id;
    cli_init(&p, cmd, argc, argv);
    while ((id = cli_next(&p, opts, &arg)) != -1) {
        switch (id) {
        case -2: return EXIT_USAGE;
        case 0: return usage_error(cmd, "unexpected argument '%s'", arg);
        case O_STREAM: break;
        case O_DEVICE: device = arg; break;
        case O_N:
            if (parse_count(arg, UINT64_MAX / 8, &n) || n == 0)
                return usage_error(cmd, "bad -n '%s'", arg);
            break;
        case O_K:
            if (parse_count_list(arg, UINT64_MAX, ks, 64, &nk))
                return usage_error(cmd, "bad -k '%s'", arg);
            break;
        case O_ALGO:
            if (parse_algo(cmd, arg, &algo))
                return EXIT_USAGE;
            break;
        case O_REPS:
            if (parse_count(arg, 64, &reps) || reps == 0)
                return usage_error(cmd, "bad --reps '%s' (1 to 64)", arg);
            break;
        case O_MODES: snprintf(modes_buf, sizeof modes_buf, "%s", arg); break;
        case O_PAGEABLE: pageable = 1; break;
        case O_HELP: stream_help(); return EXIT_OK;
        }
    }
    const char *modes[16];
    size_t nmodes;
    if (split_list(modes_buf, modes, 16, &nmodes) || nmodes == 0)
        return usage_error(cmd, "bad --modes '%s'", modes_buf);
    for (size_t i = 0; i < nk; i++)
        if (ks[i] == 0 || ks[i] > n)
            return usage_error(cmd, "k = %" PRIu64 " is not in 1..n", ks[i]);
#if CLTOPK_HAVE_OPENCL
    cltopk_context *ctx;
    int rc = open_device(cmd, device, &ctx);
    if (rc)
        return rc;
    cl_context cx;
    cl_command_queue q;
    int st = cltopk_get_cl(ctx, &cx, NULL, &q);
    if (st != CLTOPK_OK) {
        rc = lib_fail(cmd, "cltopk_get_cl (--stream needs an OpenCL device)", st, ctx);
        cltopk_close(ctx);
        return rc;
    }
    size_t bytes = (size_t)n * 4, kmax = 0;
    for (size_t i = 0; i < nk; i++)
        kmax = ks[i] > kmax ? (size_t)ks[i] : kmax;
    cl_int err = CL_SUCCESS;
    cl_mem pin = NULL;
    float *keys = NULL;
    double t0 = cli_seconds();
    if (pageable) {
        keys = malloc(bytes);
    } else {
        pin = clCreateBuffer(cx, CL_MEM_READ_ONLY | CL_MEM_ALLOC_HOST_PTR, bytes, NULL, &err);
        if (pin)
            keys = clEnqueueMapBuffer(q, pin, CL_TRUE, CL_MAP_WRITE, 0, bytes, 0, NULL, NULL,
                                      &err);
    }
    float *ok_ = malloc(kmax * 4), *ok0 = malloc(kmax * 4);
    int64_t *oi = malloc(kmax * 8), *oi0 = malloc(kmax * 8);
    if (!keys || !ok_ || !ok0 || !oi || !oi0) {
        rc = fail(cmd, "cannot allocate %zu bytes of %s host memory (OpenCL status %d)", bytes,
                  pageable ? "pageable" : "pinned", (int)err);
        goto out;
    }
    /* uniform floats in [0, 1) from a counter hash: every thread its range */
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
    for (long long b = 0; b < (long long)((n + 65535) / 65536); b++)
        for (uint64_t i = (uint64_t)b * 65536; i < n && i < (uint64_t)(b + 1) * 65536; i++) {
            uint64_t z = (i + 1) * 0x9E3779B97F4A7C15ull;
            z = (z ^ (z >> 31)) * 0xBF58476D1CE4E5B9ull;
            keys[i] = (float)((z ^ (z >> 29)) >> 40) * (1.0f / 16777216.0f);
        }
    printf("device   %s\n", cltopk_device_name(ctx));
    printf("data     %" PRIu64 " float32 (%.2f GiB) in %s host memory, made in %.1f s\n", n,
           (double)bytes / (1 << 30), pageable ? "pageable" : "pinned", cli_seconds() - t0);
    size_t hb = bytes < ((size_t)1 << 30) ? bytes : (size_t)1 << 30;
    double th = h2d_time(cx, q, keys, hb, (int)reps);
    double bw = th > 0 ? (double)hb / th : 0;
    printf("h2d      %.2f GB/s (median of %d blocking writes of %zu MiB from that memory)\n",
           bw / 1e9, (int)reps, hb >> 20);
    printf("%-8s %-12s %10s %10s %9s %9s %s\n", "k", "CLTOPK_STREAM", "median s", "GB/s",
           "of h2d", "vs 0", "answer");
    const char *old = getenv("CLTOPK_STREAM");
    char *saved = old ? strdup(old) : NULL;
    for (size_t ki = 0; ki < nk; ki++) {
        size_t k = (size_t)ks[ki];
        double base = 0;
        for (size_t m = 0; m < nmodes; m++) {
            setenv("CLTOPK_STREAM", modes[m], 1);
            double t[64];
            st = CLTOPK_OK;
            for (int r = -1; r < (int)reps && st == CLTOPK_OK; r++) {
                double a = cli_seconds();
                st = cltopk_topk(ctx, CLTOPK_FLOAT32, keys, (size_t)n, k, 0, algo,
                                 m ? ok_ : ok0, m ? oi : oi0);
                if (r >= 0)
                    t[r] = cli_seconds() - a;
            }
            if (st != CLTOPK_OK) {
                printf("%-8zu %-12s error: %s: %s\n", k, modes[m], cltopk_strerror(st),
                       cltopk_last_error(ctx));
                rc = EXIT_FAIL;
                continue;
            }
            double med = cli_median(t, (size_t)reps);
            if (m == 0)
                base = med;
            int same = !m || (!memcmp(ok_, ok0, k * 4) && !memcmp(oi, oi0, k * 8));
            if (!same)
                rc = EXIT_FAIL;
            printf("%-8zu %-12s %10.4f %10.2f %8.1f%% %8.2fx %s\n", k, modes[m], med,
                   (double)bytes / med / 1e9, bw > 0 ? 100.0 * (double)bytes / med / bw : 0.0,
                   base > 0 ? base / med : 0.0,
                   m ? (same ? "= mode 0's" : "DIFFERS from mode 0's") : "reference");
            fflush(stdout);
        }
    }
    if (saved)
        setenv("CLTOPK_STREAM", saved, 1);
    else
        unsetenv("CLTOPK_STREAM");
    free(saved);
out:
    if (pin) {
        if (keys)
            clEnqueueUnmapMemObject(q, pin, keys, 0, NULL, NULL);
        clFinish(q);
        clReleaseMemObject(pin);
    } else {
        free(keys);
    }
    free(ok_), free(ok0), free(oi), free(oi0);
    cltopk_close(ctx);
    return rc;
#else
    (void)device, (void)algo, (void)pageable, (void)reps;
    return fail(cmd, "--stream needs OpenCL, and this cltopk was built without it");
#endif
}
