/* multi_resident.c - top-k of device-resident data already split across
 * several devices (one cl_mem a device), and the cost of merging the devices'
 * answers (issue 18, part 2).
 *
 * The library has no call that takes one cl_mem a device: a context of
 * several devices (cltopk_open "0:0,0:1", "all") splits host data only, and
 * its cl_mem calls run on the first device.  This program measures the
 * closest thing built on the public API: one context a device (cltopk_open
 * with each spec of the list), N float32 values in a buffer of each, then a
 * thread a device runs cltopk_topk_buffer on its own buffer and reads its k
 * (key, position) pairs back, and the host merges the P lists exactly (THE
 * ORDER: larger key first, ties by smaller position of the whole input; the
 * devices hold consecutive parts, device d positions d * N ...).
 *
 * Each row: the median over R runs (after one warm-up) of the slowest device's
 * top-k (enqueue to completion), the slowest device's read of its k results,
 * the host merge, and the whole (from the first device's call, the threads
 * released together by a barrier, to the merged answer); merge share =
 * (whole - slowest top-k) / whole: what the split costs beyond the devices'
 * own work (the read of k results, the merge, the devices' uneven starts).
 * The values are a hash of the global position (uniform in [0, 1), 2^24
 * levels: many ties at 2^30 and more), so the merged answer is checked
 * exactly without keeping the input on the host: every returned key is the
 * value at its position, the order holds, and one pass over all positions
 * counts the values above the k-th key and the ties before the last returned
 * tie (--check full, the default; --check sample checks the
 * first two properties and the count on every 64th block of 2^16).
 *
 *   multi_resident --devices LIST -n N [-k LIST] [--reps R] [--algo NAME]
 *                  [--check full|sample|none]
 *
 * With --host: host data instead (issue 18, part 1, and the single-process
 * figure beside MPI's): N values in all in malloc'd (pageable) memory, one
 * context of the devices (cltopk_open with the list as given), and the median
 * of R cltopk_topk calls, each splitting the input across the devices; the
 * same exact check.
 *
 * Built by bench/multi-gpu.sh against the built library (not by the
 * Makefile).  Exit status 0 when every row ran and checked, 1 otherwise. */
#include <cltopk.h>

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAXDEV 64
#define MAXK 32

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* the value at global position i: bench --stream's generator */
static inline float value_at(uint64_t i)
{
    uint64_t z = (i + 1) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 31)) * 0xBF58476D1CE4E5B9ull;
    return (float)((z ^ (z >> 29)) >> 40) * (1.0f / 16777216.0f);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

typedef struct {
    cltopk_context *ctx;
    cl_context cx;
    cl_command_queue q;
    cl_mem keys, ok, oi;
    float *hk;          /* k keys read back */
    int64_t *hi;        /* k positions (of this device's part) */
    size_t n, k;
    cltopk_algo algo;
    int st;
    double t_start, t_topk, t_read;
    pthread_barrier_t *go; /* the device threads start their calls together */
    pthread_t th;
} device;

static void *run_device(void *arg)
{
    device *d = arg;
    cl_event done = NULL;
    pthread_barrier_wait(d->go);
    double t0 = d->t_start = now();
    d->st = cltopk_topk_buffer(d->ctx, CLTOPK_FLOAT32, d->keys, 0, d->n, d->k, 0, d->algo, d->ok,
                               d->oi, 0, NULL, &done);
    if (d->st == CLTOPK_OK && done) {
        if (clWaitForEvents(1, &done) != CL_SUCCESS)
            d->st = CLTOPK_ERR_OPENCL;
        clReleaseEvent(done);
    }
    double t1 = now();
    if (d->st == CLTOPK_OK &&
        (clEnqueueReadBuffer(d->q, d->ok, CL_FALSE, 0, d->k * 4, d->hk, 0, NULL, NULL) ||
         clEnqueueReadBuffer(d->q, d->oi, CL_TRUE, 0, d->k * 8, d->hi, 0, NULL, NULL)))
        d->st = CLTOPK_ERR_OPENCL;
    d->t_topk = t1 - t0;
    d->t_read = now() - t1;
    return NULL;
}

/* the exact merge of the P lists: larger key first, ties by smaller global
 * position (device d's part starts at d * n) */
static void merge(device *dv, int P, size_t k, float *mk, int64_t *mi)
{
    size_t at[MAXDEV] = {0};
    for (size_t j = 0; j < k; j++) {
        int best = -1;
        for (int d = 0; d < P; d++) {
            if (at[d] >= k)
                continue;
            if (best < 0 || dv[d].hk[at[d]] > dv[best].hk[at[best]])
                best = d; /* equal keys: the lower device holds the smaller position */
        }
        mk[j] = dv[best].hk[at[best]];
        mi[j] = dv[best].hi[at[best]] + (int64_t)((size_t)best * dv[best].n);
        at[best]++;
    }
}

/* 0 when (mk, mi) is the top-k of the total values value_at(0 .. total) */
static int check(const float *mk, const int64_t *mi, size_t k, uint64_t total, int sample,
                 char *why, size_t len)
{
    for (size_t j = 0; j < k; j++) {
        if (mi[j] < 0 || (uint64_t)mi[j] >= total || value_at((uint64_t)mi[j]) != mk[j])
            return snprintf(why, len, "entry %zu: position %" PRId64 " does not hold %.9g", j,
                            mi[j], mk[j]), 1;
        if (j && (mk[j] > mk[j - 1] || (mk[j] == mk[j - 1] && mi[j] <= mi[j - 1])))
            return snprintf(why, len, "entries %zu and %zu out of order", j - 1, j), 1;
    }
    float t = mk[k - 1];
    uint64_t ties = 0, last = 0, above = 0, ties_before = 0;
    for (size_t j = 0; j < k; j++)
        if (mk[j] == t)
            ties++, last = (uint64_t)mi[j];
    uint64_t blocks = (total + 65535) / 65536;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) reduction(+ : above, ties_before)
#endif
    for (long long b = 0; b < (long long)blocks; b++) {
        if (sample && b % 64)
            continue;
        for (uint64_t i = (uint64_t)b * 65536; i < total && i < (uint64_t)(b + 1) * 65536; i++) {
            float v = value_at(i);
            above += v > t;
            ties_before += v == t && i <= last;
        }
    }
    if (sample) {
        /* on a sample: no more above the k-th key than the answer has */
        if (above > k - ties)
            return snprintf(why, len, "the sample has %" PRIu64 " values above the k-th key, "
                            "the answer %" PRIu64, above, (uint64_t)(k - ties)), 1;
        return 0;
    }
    if (above != k - ties || ties_before != ties)
        return snprintf(why, len, "%" PRIu64 " values above the k-th key (answer: %" PRIu64
                        "), %" PRIu64 " ties up to its last tie (answer: %" PRIu64 ")",
                        above, (uint64_t)(k - ties), ties_before, ties), 1;
    return 0;
}

/* --host: cltopk_topk of n host values on one context of the listed devices */
static int host_run(const char *devices, uint64_t n, const size_t *ks, size_t nk, size_t kmax,
                    cltopk_algo algo, const char *algo_name, int reps, int sample, int nocheck)
{
    cltopk_context *ctx;
    int st = cltopk_open(&ctx, devices), rc = 0, P = 1;
    if (st != CLTOPK_OK) {
        fprintf(stderr, "multi_resident: devices '%s': %s: %s\n", devices, cltopk_strerror(st),
                cltopk_last_error(NULL));
        return 1;
    }
    for (const char *s = devices; *s; s++)
        P += *s == ',';
    float *keys = malloc((size_t)n * 4), *mk = malloc(kmax * 4);
    int64_t *mi = malloc(kmax * 8);
    if (!keys || !mk || !mi) {
        fprintf(stderr, "multi_resident: cannot allocate %" PRIu64 " floats\n", n);
        return 1;
    }
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
    for (long long i = 0; i < (long long)n; i++)
        keys[i] = value_at((uint64_t)i);
    printf("# devices '%s': %s\n", devices, cltopk_device_name(ctx));
    printf("# %" PRIu64 " float32 in pageable host memory, split by cltopk_topk, --algo %s, "
           "median of %d\n", n, algo_name, reps);
    printf("| P | n | k | median ms | GB/s | answer |\n|---|---|---|---|---|---|\n");
    for (size_t ki = 0; ki < nk; ki++) {
        size_t k = ks[ki];
        double t[64];
        st = CLTOPK_OK;
        for (int r = -1; r < reps && st == CLTOPK_OK; r++) {
            double t0 = now();
            st = cltopk_topk(ctx, CLTOPK_FLOAT32, keys, (size_t)n, k, 0, algo, mk, mi);
            if (r >= 0)
                t[r] = now() - t0;
        }
        if (st != CLTOPK_OK) {
            printf("| %d | %" PRIu64 " | %zu | error: %s: %s |\n", P, n, k, cltopk_strerror(st),
                   cltopk_last_error(ctx));
            rc = 1;
            continue;
        }
        char why[256] = "";
        const char *answer = "not checked";
        if (!nocheck) {
            int bad = check(mk, mi, k, n, sample, why, sizeof why);
            answer = bad ? "WRONG" : sample ? "exact (sampled count)" : "exact";
            if (bad) {
                fprintf(stderr, "multi_resident: P = %d, k = %zu: %s\n", P, k, why);
                rc = 1;
            }
        }
        double med = median(t, reps);
        printf("| %d | %" PRIu64 " | %zu | %.3f | %.2f | %s |\n", P, n, k, 1e3 * med,
               4.0 * (double)n / med / 1e9, answer);
        fflush(stdout);
    }
    free(keys), free(mk), free(mi);
    cltopk_close(ctx);
    return rc;
}

static int usage(const char *why)
{
    fprintf(stderr, "multi_resident: %s\nUsage: multi_resident [--host] --devices LIST -n N "
                    "[-k LIST] [--reps R] [--algo NAME] [--check full|sample|none]\n", why);
    return 2;
}

/* "2^30", "1024" or "1M" style counts, as cltopk's -n takes them (a subset) */
static int parse_n(const char *s, uint64_t *out)
{
    char *e;
    if (!strncmp(s, "2^", 2)) {
        unsigned long p = strtoul(s + 2, &e, 10);
        if (*e || p > 62)
            return -1;
        *out = 1ull << p;
        return 0;
    }
    uint64_t v = strtoull(s, &e, 10);
    if (e == s)
        return -1;
    if (*e == 'K' || *e == 'k')
        v <<= 10, e++;
    else if (*e == 'M')
        v <<= 20, e++;
    else if (*e == 'G')
        v <<= 30, e++;
    if (*e)
        return -1;
    *out = v;
    return 0;
}

int main(int argc, char **argv)
{
    const char *devices = NULL, *klist = "32,1024,65536", *algo_name = "auto", *check_mode = "full";
    uint64_t n = 0;
    int reps = 5, host = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--host"))
            host = 1;
        else if (!strcmp(a, "--devices") && v)
            devices = v, i++;
        else if (!strcmp(a, "-n") && v) {
            if (parse_n(v, &n) || n == 0)
                return usage("bad -n");
            i++;
        } else if (!strcmp(a, "-k") && v)
            klist = v, i++;
        else if (!strcmp(a, "--reps") && v)
            reps = atoi(v), i++;
        else if (!strcmp(a, "--algo") && v)
            algo_name = v, i++;
        else if (!strcmp(a, "--check") && v)
            check_mode = v, i++;
        else
            return usage("unknown argument");
    }
    if (!devices || !n)
        return usage("--devices and -n are required");
    if (reps < 1 || reps > 64)
        return usage("--reps: 1 to 64");
    if (n >= 0xFFFFFFFFull && !host)
        return usage("-n: below 2^32 - 1 a device (cltopk_topk_buffer's limit)");
    cltopk_algo algo;
    if (cltopk_algo_parse(algo_name, &algo) != CLTOPK_OK)
        return usage("unknown --algo");
    int sample = !strcmp(check_mode, "sample"), nocheck = !strcmp(check_mode, "none");
    if (!sample && !nocheck && strcmp(check_mode, "full"))
        return usage("--check: full, sample or none");
    size_t ks[MAXK], nk = 0, kmax = 0;
    for (const char *s = klist; *s && nk < MAXK;) {
        uint64_t k;
        char item[64];
        size_t l = strcspn(s, ",");
        if (l == 0 || l >= sizeof item)
            return usage("bad -k");
        memcpy(item, s, l);
        item[l] = 0;
        if (parse_n(item, &k) || k == 0 || k > n)
            return usage("-k: each in 1..n");
        ks[nk++] = (size_t)k;
        kmax = k > kmax ? (size_t)k : kmax;
        s += l + (s[l] == ',');
    }
    if (host)
        return host_run(devices, n, ks, nk, kmax, algo, algo_name, reps, sample, nocheck);

    /* one context a device, each filled with its part */
    static device dv[MAXDEV];
    int P = 0, rc = 0;
    char spec[256];
    for (const char *s = devices; *s && P < MAXDEV;) {
        size_t l = strcspn(s, ",");
        if (l == 0 || l >= sizeof spec)
            return usage("bad --devices");
        memcpy(spec, s, l);
        spec[l] = 0;
        s += l + (s[l] == ',');
        device *d = &dv[P];
        int st = cltopk_open(&d->ctx, spec);
        if (st != CLTOPK_OK || cltopk_get_cl(d->ctx, &d->cx, NULL, &d->q) != CLTOPK_OK) {
            fprintf(stderr, "multi_resident: device '%s': %s: %s\n", spec, cltopk_strerror(st),
                    cltopk_last_error(NULL));
            return 1;
        }
        P++;
        cl_int err;
        d->n = (size_t)n;
        d->keys = clCreateBuffer(d->cx, CL_MEM_READ_ONLY, (size_t)n * 4, NULL, &err);
        d->ok = clCreateBuffer(d->cx, CL_MEM_READ_WRITE, kmax * 4, NULL, &err);
        d->oi = clCreateBuffer(d->cx, CL_MEM_READ_WRITE, kmax * 8, NULL, &err);
        d->hk = malloc(kmax * 4);
        d->hi = malloc(kmax * 8);
        size_t piece = (size_t)1 << 24;
        float *buf = malloc(piece * 4);
        if (!d->keys || !d->ok || !d->oi || !d->hk || !d->hi || !buf) {
            fprintf(stderr, "multi_resident: device '%s': cannot allocate %" PRIu64
                    " floats (OpenCL status %d)\n", spec, n, (int)err);
            return 1;
        }
        uint64_t base = (uint64_t)(P - 1) * n;
        for (size_t o = 0; o < (size_t)n && err == CL_SUCCESS; o += piece) {
            size_t m = (size_t)n - o < piece ? (size_t)n - o : piece;
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
            for (long long i = 0; i < (long long)m; i++)
                buf[i] = value_at(base + o + (uint64_t)i);
            err = clEnqueueWriteBuffer(d->q, d->keys, CL_TRUE, o * 4, m * 4, buf, 0, NULL, NULL);
        }
        free(buf);
        if (err != CL_SUCCESS) {
            fprintf(stderr, "multi_resident: writing device '%s' failed (%d)\n", spec, (int)err);
            return 1;
        }
        printf("# device %d: %s (%s), %" PRIu64 " float32 resident\n", P - 1, spec,
               cltopk_device_name(d->ctx), n);
    }
    printf("# P = %d, %" PRIu64 " float32 a device (%" PRIu64 " in all), --algo %s, median of %d;"
           " ms\n", P, n, n * (uint64_t)P, algo_name, reps);
    printf("| P | n a device | k | slowest top-k | slowest read of k | host merge | whole | "
           "merge share | answer |\n|---|---|---|---|---|---|---|---|---|\n");
    float *mk = malloc(kmax * 4);
    int64_t *mi = malloc(kmax * 8);
    for (size_t ki = 0; ki < nk && mk && mi; ki++) {
        size_t k = ks[ki];
        double tt[64], tr[64], tm[64], tw[64];
        int st = CLTOPK_OK;
        for (int r = -1; r < reps && st == CLTOPK_OK; r++) {
            pthread_barrier_t go;
            pthread_barrier_init(&go, NULL, (unsigned)P);
            for (int d = 0; d < P; d++) {
                dv[d].k = k, dv[d].algo = algo, dv[d].go = &go;
                pthread_create(&dv[d].th, NULL, run_device, &dv[d]);
            }
            double slow_t = 0, slow_r = 0, t0 = 0;
            for (int d = 0; d < P; d++) {
                pthread_join(dv[d].th, NULL);
                t0 = d == 0 || dv[d].t_start < t0 ? dv[d].t_start : t0;
                if (dv[d].st != CLTOPK_OK && st == CLTOPK_OK) {
                    st = dv[d].st;
                    fprintf(stderr, "multi_resident: device %d, k = %zu: %s: %s\n", d, k,
                            cltopk_strerror(st), cltopk_last_error(dv[d].ctx));
                }
                slow_t = dv[d].t_topk > slow_t ? dv[d].t_topk : slow_t;
                slow_r = dv[d].t_read > slow_r ? dv[d].t_read : slow_r;
            }
            double t1 = now();
            if (st == CLTOPK_OK)
                merge(dv, P, k, mk, mi);
            double t2 = now();
            pthread_barrier_destroy(&go);
            if (r >= 0)
                tt[r] = slow_t, tr[r] = slow_r, tm[r] = t2 - t1, tw[r] = t2 - t0;
        }
        if (st != CLTOPK_OK) {
            printf("| %d | %" PRIu64 " | %zu | error: %s |\n", P, n, k, cltopk_strerror(st));
            rc = 1;
            continue;
        }
        char why[256] = "";
        const char *answer = "not checked";
        if (!nocheck) {
            int bad = check(mk, mi, k, n * (uint64_t)P, sample, why, sizeof why);
            answer = bad ? "WRONG" : sample ? "exact (sampled count)" : "exact";
            if (bad) {
                fprintf(stderr, "multi_resident: P = %d, k = %zu: %s\n", P, k, why);
                rc = 1;
            }
        }
        /* the share from each run's own numbers, then its median */
        double share[64];
        for (int r = 0; r < reps; r++)
            share[r] = tw[r] > 0 ? (tw[r] - tt[r]) / tw[r] : 0;
        double ms = median(share, reps);
        printf("| %d | %" PRIu64 " | %zu | %.3f | %.3f | %.3f | %.3f | %.2f%% | %s |\n", P, n, k,
               1e3 * median(tt, reps), 1e3 * median(tr, reps), 1e3 * median(tm, reps),
               1e3 * median(tw, reps), 100 * ms, answer);
        fflush(stdout);
    }
    free(mk);
    free(mi);
    for (int d = 0; d < P; d++) {
        clReleaseMemObject(dv[d].keys);
        clReleaseMemObject(dv[d].ok);
        clReleaseMemObject(dv[d].oi);
        free(dv[d].hk);
        free(dv[d].hi);
        cltopk_close(dv[d].ctx);
    }
    return rc;
}
