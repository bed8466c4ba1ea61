/* cmd_demo.c - `cltopk demo`: every device and algorithm must agree bit for bit. */
#include "cli.h"
#include "gen.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static void demo_help(void)
{
    printf("Usage: cltopk demo [--quick]\n"
           "\n"
           "Generate a few data sets, run top-k on every OpenCL device (algorithms bitonic\n"
           "and auto) and on the cpu device (cpu-heap, the reference, and a CPU radix\n"
           "selection of rank k-1), and check that all results agree bit for bit: the same\n"
           "values and the same positions.  Prints one row per run: data set, device,\n"
           "algorithm, time, build, agree.\n"
           "\n"
           "The data sets:\n"
           "  2^20 f32 uniform,          k = 32,  largest first\n"
           "  2^18 i64 few (8 distinct), k = 100, largest first (ties: by position)\n"
           "  2^16 f64 special,          k = 17,  smallest first (NaN, +-inf, +-0, ...)\n"
           "\n"
           "On an OpenCL device each call runs twice: 'time ms' is the second run (the\n"
           "copy of the data to the device included), 'build ms' what the first took\n"
           "beyond it: building the OpenCL kernels, or loading them from the disk cache\n"
           "(CLTOPK_CACHE_DIR) once built.  With no OpenCL device only the cpu device\n"
           "runs, and the demo says so.\n"
           "\n"
           "Options:\n"
           "  --quick     smaller data sets (2^14 elements each)\n"
           "  -h, --help  this text\n"
           "\n"
           "Exit status: 0 when everything agrees, 1 when anything disagrees or fails.\n");
}

typedef struct {
    cltopk_dtype type;
    const char *dist;
    size_t n, k;
    unsigned flags;
} demo_case;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Print one row; st is the call's status, verdict what to say when it succeeded;
 * build_ms < 0: no build column (a CPU call).
 * Returns 1 when the row is a failure (an error, or a disagreement). */
static int row(const char *data, const char *dev, const char *algo, double ms, double build_ms,
               int st, const char *verdict, const cltopk_context *ctx)
{
    const char *say = st == CLTOPK_OK ? verdict
                      : st == CLTOPK_ERR_UNSUPPORTED ? "unsupported"
                                                     : "FAILED";
    char build[32] = "-";
    if (build_ms >= 0)
        snprintf(build, sizeof build, "%.1f", build_ms);
    printf("%-22s %-40.40s %-18s %9.2f %9s  %s\n", data, dev, algo, ms, build, say);
    if (st != CLTOPK_OK)
        printf("    %s: %s\n", cltopk_strerror(st), cltopk_last_error(ctx));
    fflush(stdout);
    return (st != CLTOPK_OK && st != CLTOPK_ERR_UNSUPPORTED) || !strcmp(say, "NO");
}

/* Run one data set on every context (ctx[0] the cpu device, the reference).
 * Returns the number of failed rows, or -1 when there is no reference. */
static int run_case(const demo_case *dc, const void *data, cltopk_context *const *ctx,
                    char (*dev_label)[80], size_t nctx, void *ref_keys, int64_t *ref_index,
                    void *keys, int64_t *index)
{
    size_t bytes = cltopk_dtype_size(dc->type), k = dc->k;
    char label[64], algo[64];
    int failures = 0;
    snprintf(label, sizeof label, "%s %s k=%zu%s", cltopk_dtype_name(dc->type), dc->dist, k,
             dc->flags & CLTOPK_SMALLEST ? " min" : "");

    /* the reference: cpu-heap on the cpu device */
    double t0 = now();
    int st = cltopk_topk(ctx[0], dc->type, data, dc->n, k, dc->flags, CLTOPK_ALGO_CPU_HEAP,
                         ref_keys, ref_index);
    row(label, dev_label[0], "cpu-heap", (now() - t0) * 1e3, -1, st, "reference", ctx[0]);
    if (st != CLTOPK_OK)
        return -1;

    /* a second, independent CPU algorithm: the radix selection of the last rank
     * must give the last entry of the reference */
    char sel_key[8];
    int64_t sel_index = -1;
    t0 = now();
    st = cltopk_select(ctx[0], dc->type, data, dc->n, k - 1, dc->flags, CLTOPK_ALGO_AUTO,
                       sel_key, &sel_index);
    int same = st == CLTOPK_OK && !memcmp(sel_key, (char *)ref_keys + (k - 1) * bytes, bytes) &&
               sel_index == ref_index[k - 1];
    snprintf(algo, sizeof algo, "select rank %zu", k - 1);
    failures += row(label, dev_label[0], algo, (now() - t0) * 1e3, -1, st, same ? "yes" : "NO",
                    ctx[0]);

    /* every OpenCL device: bitonic, and what auto chooses there */
    static const cltopk_algo algos[] = {CLTOPK_ALGO_BITONIC, CLTOPK_ALGO_AUTO};
    for (size_t d = 1; d < nctx; d++) {
        if (!ctx[d])
            continue;
        for (size_t a = 0; a < sizeof algos / sizeof algos[0]; a++) {
            cltopk_algo chosen = algos[a];
            if (algos[a] == CLTOPK_ALGO_AUTO &&
                cltopk_plan(ctx[d], dc->type, dc->n, k, dc->flags, &chosen) != CLTOPK_OK)
                chosen = CLTOPK_ALGO_AUTO;
            snprintf(algo, sizeof algo, "%s%s", algos[a] == CLTOPK_ALGO_AUTO ? "auto -> " : "",
                     cltopk_algo_name(chosen));
            /* the first call builds the kernels (or loads them from the disk
             * cache); the second runs them: its time is the row's, the
             * difference the build's.  Both must agree with the reference. */
            t0 = now();
            st = cltopk_topk(ctx[d], dc->type, data, dc->n, k, dc->flags, algos[a], keys,
                             index);
            double first = now() - t0, second = 0;
            same = st == CLTOPK_OK && !memcmp(keys, ref_keys, k * bytes) &&
                   !memcmp(index, ref_index, k * sizeof *index);
            if (st == CLTOPK_OK) {
                memset(keys, 0xA5, k * bytes); /* poisoned: the second call must write */
                memset(index, 0xA5, k * sizeof *index);
                t0 = now();
                st = cltopk_topk(ctx[d], dc->type, data, dc->n, k, dc->flags, algos[a], keys,
                                 index);
                second = now() - t0;
                same = same && st == CLTOPK_OK && !memcmp(keys, ref_keys, k * bytes) &&
                       !memcmp(index, ref_index, k * sizeof *index);
            }
            double build = first > second ? first - second : 0;
            failures += row(label, dev_label[d], algo, (st == CLTOPK_OK ? second : first) * 1e3,
                            st == CLTOPK_OK ? build * 1e3 : -1, st, same ? "yes" : "NO",
                            ctx[d]);
        }
    }
    return failures;
}

int cmd_demo(int argc, char **argv)
{
    static const cli_option opts[] = {{1, 0, "quick", 0}, {2, 'h', "help", 0}, {0, 0, NULL, 0}};
    cli_parser p;
    const char *arg;
    int id, quick = 0;
    cli_init(&p, "demo", argc, argv);
    while ((id = cli_next(&p, opts, &arg)) != -1) {
        if (id == -2)
            return EXIT_USAGE;
        if (id == 0)
            return usage_error("demo", "unexpected argument '%s'", arg);
        if (id == 1)
            quick = 1;
        if (id == 2) {
            demo_help();
            return EXIT_OK;
        }
    }
    demo_case cases[] = {
        {CLTOPK_FLOAT32, "uniform", (size_t)1 << 20, 32, CLTOPK_LARGEST},
        {CLTOPK_INT64, "few", (size_t)1 << 18, 100, CLTOPK_LARGEST},
        {CLTOPK_FLOAT64, "special", (size_t)1 << 16, 17, CLTOPK_SMALLEST},
    };
    size_t ncases = sizeof cases / sizeof cases[0];
    if (quick)
        for (size_t c = 0; c < ncases; c++)
            cases[c].n = (size_t)1 << 14;

    size_t ndev = cltopk_device_count();
    printf("cltopk %s demo: ", cltopk_version_string());
    if (ndev == 0)
        printf("no OpenCL device found, so only the cpu device runs (see 'cltopk devices')\n");
    else
        printf("%zu OpenCL device%s and the cpu device\n", ndev, ndev == 1 ? "" : "s");

    /* the contexts: cpu first (the reference), then each OpenCL device */
    cltopk_context **ctx = calloc(ndev + 1, sizeof *ctx);
    char (*label_of)[80] = calloc(ndev + 1, sizeof *label_of);
    if (!ctx || !label_of) {
        free(ctx);
        free(label_of);
        return fail("demo", "out of memory");
    }
    snprintf(label_of[0], sizeof label_of[0], "cpu");
    int failures = 0, rc = EXIT_OK;
    if ((rc = open_device("demo", "cpu", &ctx[0]))) {
        free(ctx);
        free(label_of);
        return rc;
    }
    for (size_t d = 0; d < ndev; d++) {
        cltopk_device_info info;
        char spec[32];
        int st = cltopk_device_get(d, &info);
        if (st != CLTOPK_OK) {
            lib_fail("demo", "cltopk_device_get", st, NULL);
            failures++;
            continue;
        }
        snprintf(spec, sizeof spec, "%u:%u", info.platform, info.device);
        snprintf(label_of[d + 1], sizeof label_of[d + 1], "%s %.40s", spec, info.device_name);
        st = cltopk_open(&ctx[d + 1], spec);
        if (st != CLTOPK_OK) {
            char what[64];
            snprintf(what, sizeof what, "cannot open device %s", spec);
            lib_fail("demo", what, st, NULL);
            failures++;
        }
    }

    printf("\n%-22s %-40s %-18s %9s %9s  %s\n", "data", "device", "algorithm", "time ms",
           "build ms", "agree");
    for (size_t c = 0; c < ncases && rc == EXIT_OK; c++) {
        const demo_case *dc = &cases[c];
        size_t bytes = cltopk_dtype_size(dc->type);
        void *data = malloc(dc->n * bytes);
        void *ref_keys = malloc(dc->k * bytes), *keys = malloc(dc->k * bytes);
        int64_t *ref_index = malloc(dc->k * 8), *index = malloc(dc->k * 8);
        if (!data || !ref_keys || !keys || !ref_index || !index) {
            rc = fail("demo", "out of memory");
        } else if (gen_fill(dc->type, dc->dist, dc->n, 42 + c, data) != 0) {
            rc = fail("demo", "cannot generate %s data", dc->dist);
        } else {
            int f = run_case(dc, data, ctx, label_of, ndev + 1, ref_keys, ref_index, keys,
                             index);
            if (f < 0)
                rc = EXIT_FAIL; /* no reference: nothing can be checked */
            else
                failures += f;
        }
        free(data);
        free(ref_keys);
        free(keys);
        free(ref_index);
        free(index);
    }
    for (size_t d = 0; d <= ndev; d++)
        cltopk_close(ctx[d]);
    free(ctx);
    free(label_of);
    if (rc == EXIT_OK && failures)
        rc = EXIT_FAIL;
    printf("\n%s\n", rc == EXIT_OK ? "all results agree" : "RESULTS DISAGREE OR FAILED");
    return rc;
}
