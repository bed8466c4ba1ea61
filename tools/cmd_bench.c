/* cmd_bench.c - `cltopk bench`: median times beside the read floor. */
#include "cli.h"
#include "gen.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LIST 64

static void bench_help(void)
{
    printf("Usage: cltopk bench [--device SPEC] [-t TYPE] [-n N] [-k LIST] [--algo LIST]\n"
           "                    [--dist LIST] [--reps R] [--seed S] [--smallest] [--json]\n"
           "\n"
           "Time top-k on one device for every (distribution, k, algorithm) of the lists.\n"
           "Each row gives the median of R runs after one warm-up (the data is on the\n"
           "device already: no transfers), the read floor (the median time of one pass\n"
           "reading the same bytes at the device's streaming bandwidth, measured in the\n"
           "same call: no top-k can be faster), time / floor, elements per second and\n"
           "the effective bandwidth n * element size / time.  A combination that an\n"
           "algorithm cannot run prints 'unsupported: <reason>' instead of failing.\n"
           "\n"
           "Options:\n"
           "      --device SPEC  auto (default), cpu, gpu, P:D, or part of a device name\n"
           "  -t, --type TYPE    f32 (default), f64, i32, u32, i64, u64\n"
           "  -n, --count N      elements (default 2^24 = 16M; 1M, 2^20 forms work)\n"
           "  -k, --k LIST       comma-separated k values (default 1,32,256,1024)\n"
           "  -a, --algo LIST    algorithms (default: bitonic,cpu-heap on an OpenCL device,\n"
           "                     cpu-heap on the cpu device); auto is allowed and the row\n"
           "                     shows what it ran\n"
           "      --dist LIST    distributions of 'cltopk gen' (default uniform)\n"
           "  -r, --reps R       timed runs per row, 1 to 64 (default 5)\n"
           "  -s, --seed S       seed of the data (default 1)\n"
           "      --smallest     time the ascending order (default: largest first)\n"
           "      --json         JSON lines: one object per row, with the fields device,\n"
           "                     type, n, dist, k, algo, ran (what auto chose), status\n"
           "                     (ok, unsupported or error), median_s, floor_s, ratio,\n"
           "                     elements_per_s, gb_per_s (ok rows) or reason (others)\n"
           "  -h, --help         this text\n"
           "\n"
           "Exit status 1 if any row failed with an error (not counting unsupported).\n"
           "\n"
           "Examples:\n"
           "  cltopk bench\n"
           "  cltopk bench --device 0:0 -t f64 -n 2^26 -k 1,64 --dist uniform,bucket-killer\n");
}

int cmd_bench(int argc, char **argv)
{
    enum { O_DEVICE = 1, O_TYPE, O_N, O_K, O_ALGO, O_DIST, O_REPS, O_SEED, O_SMALLEST, O_JSON,
           O_HELP };
    static const cli_option opts[] = {
        {O_DEVICE, 0, "device", 1}, {O_TYPE, 't', "type", 1}, {O_N, 'n', "count", 1},
        {O_K, 'k', "k", 1},         {O_ALGO, 'a', "algo", 1}, {O_DIST, 0, "dist", 1},
        {O_REPS, 'r', "reps", 1},   {O_SEED, 's', "seed", 1}, {O_SMALLEST, 0, "smallest", 0},
        {O_JSON, 0, "json", 0},     {O_HELP, 'h', "help", 0}, {0, 0, NULL, 0},
    };
    cli_parser p;
    const char *arg, *device = NULL;
    int id, json = 0, have_algos = 0;
    cltopk_dtype type = CLTOPK_FLOAT32;
    uint64_t n = (uint64_t)1 << 24, seed = 1, reps = 5;
    uint64_t ks[MAX_LIST] = {1, 32, 256, 1024};
    size_t nk = 4, nalgo = 0, ndist = 1;
    cltopk_algo algos[MAX_LIST];
    const char *dists[MAX_LIST] = {"uniform"};
    char dist_buf[1024];
    unsigned flags = CLTOPK_LARGEST;
    cli_init(&p, "bench", argc, argv);
    while ((id = cli_next(&p, opts, &arg)) != -1) {
        switch (id) {
        case -2: return EXIT_USAGE;
        case 0: return usage_error("bench", "unexpected argument '%s'", arg);
        case O_DEVICE: device = arg; break;
        case O_TYPE:
            if (parse_type("bench", arg, &type))
                return EXIT_USAGE;
            break;
        case O_N:
            if (parse_count(arg, (uint64_t)1 << 40, &n) < 0 || n == 0)
                return usage_error("bench", "bad count '%s' (a number like 1M or 2^24, 1 to "
                                   "2^40)", arg);
            break;
        case O_K:
            if (parse_count_list(arg, UINT64_MAX, ks, MAX_LIST, &nk) < 0)
                return usage_error("bench", "bad k list '%s' (like 1,32,256; at most 64 "
                                   "values)", arg);
            break;
        case O_ALGO: {
            char buf[1024];
            const char *items[MAX_LIST];
            if (strlen(arg) >= sizeof buf)
                return usage_error("bench", "algorithm list too long");
            strcpy(buf, arg);
            if (split_list(buf, items, MAX_LIST, &nalgo) < 0)
                return usage_error("bench", "bad algorithm list '%s' (like bitonic,cpu-heap)",
                                   arg);
            for (size_t i = 0; i < nalgo; i++)
                if (parse_algo("bench", items[i], &algos[i]))
                    return EXIT_USAGE;
            have_algos = 1;
            break;
        }
        case O_DIST:
            if (strlen(arg) >= sizeof dist_buf)
                return usage_error("bench", "distribution list too long");
            strcpy(dist_buf, arg);
            if (split_list(dist_buf, dists, MAX_LIST, &ndist) < 0)
                return usage_error("bench", "bad distribution list '%s' (like uniform,few)",
                                   arg);
            for (size_t i = 0; i < ndist; i++)
                if (!known_dist(dists[i]))
                    return usage_error("bench", "unknown distribution '%s' (uniform, normal, "
                                       "increasing, decreasing, equal, few, bucket-killer, "
                                       "special)", dists[i]);
            break;
        case O_REPS:
            if (parse_count(arg, 64, &reps) < 0 || reps == 0)
                return usage_error("bench", "bad repetition count '%s' (1 to 64)", arg);
            break;
        case O_SEED:
            if (parse_u64(arg, &seed) < 0)
                return usage_error("bench", "bad seed '%s' (a 64-bit number)", arg);
            break;
        case O_SMALLEST: flags = CLTOPK_SMALLEST; break;
        case O_JSON: json = 1; break;
        case O_HELP: bench_help(); return EXIT_OK;
        }
    }
    for (size_t i = 0; i < nk; i++)
        if (ks[i] == 0 || ks[i] > n)
            return usage_error("bench", "k = %" PRIu64 " is not between 1 and n = %" PRIu64,
                               ks[i], n);

    size_t bytes = cltopk_dtype_size(type);
    if (n > SIZE_MAX / bytes)
        return fail("bench", "n = %" PRIu64 " does not fit in memory here", n);
    cltopk_context *ctx = NULL;
    int rc = open_device("bench", device, &ctx);
    if (rc)
        return rc;
    if (!have_algos) {
        int is_cl = cltopk_get_cl(ctx, NULL, NULL, NULL) == CLTOPK_OK;
        if (is_cl)
            algos[nalgo++] = CLTOPK_ALGO_BITONIC;
        algos[nalgo++] = CLTOPK_ALGO_CPU_HEAP;
    }
    void *data = malloc((size_t)n * bytes);
    if (!data) {
        cltopk_close(ctx);
        return fail("bench", "out of memory for %" PRIu64 " elements", n);
    }
    const char *dev = cltopk_device_name(ctx);
    double mib = (double)n * (double)bytes / 1048576.0;
    if (!json) {
        printf("device     %s\n", dev);
        printf("data       %" PRIu64 " x %s (%.1f MiB), %s first, median of %" PRIu64
               " runs\n\n", n, cltopk_dtype_name(type), mib,
               flags & CLTOPK_SMALLEST ? "smallest" : "largest", reps);
        printf("%-13s %6s  %-22s %10s %10s %7s %10s %8s\n", "dist", "k", "algorithm", "time ms",
               "floor ms", "ratio", "Melem/s", "GB/s");
        fflush(stdout);
    }
    int errors = 0;
    for (size_t di = 0; di < ndist; di++) {
        if (gen_fill(type, dists[di], (size_t)n, seed, data) != 0) {
            rc = fail("bench", "cannot generate '%s' data", dists[di]);
            break;
        }
        for (size_t ki = 0; ki < nk; ki++)
            for (size_t ai = 0; ai < nalgo; ai++) {
                size_t k = (size_t)ks[ki];
                cltopk_algo a = algos[ai];
                cltopk_algo ran = a;
                char label[64]; /* "bitonic", "auto -> bitonic" */
                int st = CLTOPK_OK;
                if (a == CLTOPK_ALGO_AUTO)
                    st = cltopk_plan(ctx, type, (size_t)n, k, flags, &ran);
                snprintf(label, sizeof label, "%s%s", a == CLTOPK_ALGO_AUTO ? "auto -> " : "",
                         cltopk_algo_name(ran));
                double med = 0, flo = 0;
                if (st == CLTOPK_OK)
                    st = cltopk_benchmark(ctx, type, data, (size_t)n, k, flags, a, (int)reps,
                                          &med, &flo);
                const char *status = st == CLTOPK_OK            ? "ok"
                                     : st == CLTOPK_ERR_UNSUPPORTED ? "unsupported"
                                                                    : "error";
                if (st != CLTOPK_OK && st != CLTOPK_ERR_UNSUPPORTED)
                    errors++;
                char reason[1200] = "";
                if (st == CLTOPK_ERR_UNSUPPORTED && *cltopk_last_error(ctx))
                    snprintf(reason, sizeof reason, "%s", cltopk_last_error(ctx));
                else if (st != CLTOPK_OK)
                    snprintf(reason, sizeof reason, "%s%s%s", cltopk_strerror(st),
                             *cltopk_last_error(ctx) ? ": " : "", cltopk_last_error(ctx));
                double gbs = med > 0 ? (double)n * (double)bytes / med / 1e9 : 0;
                double eps = med > 0 ? (double)n / med : 0;
                double ratio = flo > 0 ? med / flo : 0;
                if (json) {
                    printf("{\"device\": ");
                    json_string(stdout, dev);
                    printf(", \"type\": \"%s\", \"n\": %" PRIu64 ", \"dist\": \"%s\", \"k\": "
                           "%zu, \"algo\": \"%s\", \"ran\": ",
                           cltopk_dtype_name(type), n, dists[di], k, cltopk_algo_name(a));
                    json_string(stdout, cltopk_algo_name(ran));
                    printf(", \"order\": \"%s\", \"status\": \"%s\"",
                           flags & CLTOPK_SMALLEST ? "smallest" : "largest", status);
                    if (st == CLTOPK_OK) {
                        printf(", \"median_s\": %.9g, \"floor_s\": %.9g, \"ratio\": %.6g, "
                               "\"elements_per_s\": %.6g, \"gb_per_s\": %.6g}\n",
                               med, flo, ratio, eps, gbs);
                    } else {
                        printf(", \"reason\": ");
                        json_string(stdout, reason);
                        printf("}\n");
                    }
                } else if (st == CLTOPK_OK) {
                    printf("%-13s %6zu  %-22s %10.3f %10.3f %7.2f %10.1f %8.2f\n", dists[di], k,
                           label, med * 1e3, flo * 1e3, ratio, eps / 1e6, gbs);
                } else {
                    printf("%-13s %6zu  %-22s %s: %s\n", dists[di], k, label,
                           st == CLTOPK_ERR_UNSUPPORTED ? "unsupported" : "error", reason);
                }
                fflush(stdout);
            }
    }
    free(data);
    cltopk_close(ctx);
    if (!rc && errors)
        rc = fail("bench", "%d row%s failed (see above)", errors, errors == 1 ? "" : "s");
    return rc;
}
