/* cmd_bench.c - `cltopk bench`: median times beside the read floor. */
#include "cli.h"
#include "gen.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_LIST 64

static const char *outputs_name(unsigned flags)
{
    return flags & CLTOPK_BENCH_KEYS_ONLY ? "keys only" : "keys + index";
}

static void bench_help(void)
{
    printf("Usage: cltopk bench [--device SPEC] [-t TYPE] [-n N] [-k LIST] [--algo LIST]\n"
           "                    [--dist LIST] [--reps R] [--seed S] [--smallest] [--keys-only]\n"
           "                    [--select] [--json]\n"
           "       cltopk bench --grid paper|ablation|sbp [--device SPEC] [-n N] [--algo LIST]\n"
           "                    [--reps R] [--seed S] [--smallest] [--json]\n"
           "       cltopk bench --cpu ...   (CPU algorithms beside std:: and numpy peers;\n"
           "                    see cltopk bench --cpu --help)\n"
           "       cltopk bench --stream ...   (host data streamed to the device against the\n"
           "                    chunk loop; see cltopk bench --stream --help)\n"
           "       cltopk bench --rows R ...   (the top-k of every row of a matrix; see\n"
           "                    cltopk bench --rows --help)\n"
           "       cltopk bench --segments ...   (the top-k of segments of power-law\n"
           "                    lengths; see cltopk bench --segments --help)\n"
           "       cltopk bench --knn ...   (k nearest points of many queries; see\n"
           "                    cltopk bench --knn --help)\n"
           "       cltopk bench --query ...   (the fused queries of cltopk query on a\n"
           "                    tweet-like table; see cltopk bench --query --help)\n"
           "       cltopk bench --unpack ...   (packed columns decoded, and their top-k;\n"
           "                    see cltopk bench --unpack --help)\n"
           "\n"
           "Time top-k on one device for every (distribution, k, algorithm) of the lists.\n"
           "Each row gives the median of R runs after one warm-up (the data is on the\n"
           "device already: no transfers), the read floor (the median time of one pass\n"
           "reading the same bytes at the device's streaming bandwidth, measured in the\n"
           "same call: no top-k can be faster), time / floor, elements per second and\n"
           "the effective bandwidth n * element size / time, and on an OpenCL device the\n"
           "first call's kernel build apart from the run (build ms: a first call minus a\n"
           "second one, on host data; loading from the disk cache once built).  A\n"
           "combination that an algorithm cannot run prints 'unsupported: <reason>'\n"
           "instead of failing.  A terminal shows the row being run on standard error.\n"
           "\n"
           "Options:\n"
           "      --device SPEC  auto (default), cpu, gpu, P:D, or part of one device's name\n"
           "  -t, --type TYPE    f32 (default), f64, i32, u32, i64, u64\n"
           "  -n, --count N      elements (default 2^24 = 16M; 1M, 2^20 forms work)\n"
           "  -k, --k LIST       comma-separated k values (default 1,32,256,1024)\n"
           "  -a, --algo LIST    algorithms (default: bitonic,sbp-tree,cpu-heap on an OpenCL\n"
           "                     device, cpu-heap on the cpu device); auto is allowed and\n"
           "                     the row shows what it ran\n"
           "      --dist LIST    distributions of 'cltopk gen' (default uniform)\n"
           "  -r, --reps R       timed runs per row, 1 to 64 (default 5)\n"
           "  -s, --seed S       seed of the data (default 1)\n"
           "      --smallest     time the ascending order (default: largest first)\n"
           "      --keys-only    ask for the keys alone (default: keys and int64 positions);\n"
           "                     the kernels then carry no index where ties cannot be told\n"
           "                     apart (integers), as the paper's keys-only figures do\n"
           "      --select       time the selection of rank k - 1 (cltopk_select_buffer)\n"
           "                     instead of the top-k; auto shows its selection plan\n"
           "      --json         JSON lines: one object per row, with the fields device,\n"
           "                     type, n, dist, k, algo, ran (what auto chose), status\n"
           "                     (ok, unsupported or error), median_s, floor_s, ratio,\n"
           "                     elements_per_s, gb_per_s, build_s (OpenCL rows) (ok\n"
           "                     rows) or reason (others);\n"
           "                     grid rows add grid (and config: CLTOPK_BITONIC)\n"
           "      --grid NAME    a fixed grid of rows instead of -t, -k and --dist:\n"
           "        paper        the SIGMOD'18 top-k grid: f32 uniform, k = 1,2,4,..,1024;\n"
           "                     u32 uniform and f64 uniform (n / 2), k = 1,32,256,1024;\n"
           "                     f32 increasing and bucket-killer, k = 32,256; f32\n"
           "                     uniform, k = 64, for n / 256, n / 64, n / 16, n / 4, n.\n"
           "                     n is 2^29 unless -n gives it (-n 2^22 scales the whole\n"
           "                     grid down); rows with k > n are left out.  Algorithms:\n"
           "                     --algo (default bitonic).\n"
           "        ablation     bitonic on f32 uniform (n = 2^29 or -n), k = 32,256,1024\n"
           "                     (or -k), a row per step of the kernel's design, with\n"
           "                     CLTOPK_BITONIC set for the row: basic=1 (the foundation\n"
           "                     kernel, one pass per step), MAXM=2,SWZ=0 (fused kernels,\n"
           "                     sort in registers), MAXM=2 (+ swizzled local layout),\n"
           "                     SWZ=0 (combined steps, plain layout), default (all).\n"
           "                     CLTOPK_BITONIC is unset afterwards.\n"
           "        sbp          f32 uniform, k = 1,2,4,..,1024, 4096, 65536, 2^20, n / 2;\n"
           "                     f32 increasing, decreasing, bucket-killer, normal, k =\n"
           "                     32,128; u32 uniform and f64 uniform (n / 2), k = 32,\n"
           "                     1024, 65536; the selection of ranks 0 and n / 2 (f32\n"
           "                     uniform: radix-select, auto).  Before each k a line\n"
           "                     with the planner's predicted times (cltopk_explain).\n"
           "                     Algorithms: --algo (default sbp-radix, radix-select,\n"
           "                     bitonic, auto).\n"
           "                     A grid's --reps defaults to 3: without a GPU (POCL alone)\n"
           "                     the grid still runs, slowly; scale it down with -n.\n"
           "  -h, --help         this text\n"
           "\n"
           "Exit status 1 if any row failed with an error (not counting unsupported).\n"
           "\n"
           "Examples:\n"
           "  cltopk bench\n"
           "  cltopk bench --device 0:0 -t f64 -n 2^26 -k 1,64 --dist uniform,bucket-killer\n"
           "  cltopk bench --grid paper --algo bitonic,auto\n"
           "  cltopk bench --grid ablation -n 2^22 --reps 1\n");
}

/* what the rows of one bench run share */
typedef struct {
    cltopk_context *ctx;
    const char *dev;
    unsigned flags;
    uint64_t reps;
    int json;
    const char *grid;   /* NULL, "paper" or "ablation" */
    int errors;         /* rows that failed with an error */
} bench_run;

static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Time one row and print it.  config/adds: the CLTOPK_BITONIC value of an
 * ablation row and what it adds (NULL otherwise). */
static void bench_row(bench_run *b, cltopk_dtype type, const char *dist, uint64_t n,
                      const void *data, size_t k, cltopk_algo a, const char *config,
                      const char *adds)
{
    size_t bytes = cltopk_dtype_size(type);
    cltopk_algo ran = a;
    const char *ran_name = cltopk_algo_name(a);
    char label[64]; /* "bitonic", "auto -> bitonic" */
    int st = CLTOPK_OK;
    if (a == CLTOPK_ALGO_AUTO) {
        /* what cltopk_benchmark times (cltopk.h): auto's plan for data on the
         * device on an OpenCL context, else for host data; the plan takes the
         * order flag only (not the benchmark's KEYS_ONLY and SELECT bits) */
        unsigned order = b->flags & CLTOPK_SMALLEST;
        int cl = cltopk_get_cl(b->ctx, NULL, NULL, NULL) == CLTOPK_OK;
        st = cl ? cltopk_plan_buffer(b->ctx, type, (size_t)n, k, order, &ran)
                : cltopk_plan(b->ctx, type, (size_t)n, k, order, &ran);
        ran_name = cltopk_algo_name(ran);
        if (st == CLTOPK_OK && (b->flags & CLTOPK_BENCH_SELECT)) {
            /* a selection: AUTO's selection plan (cltopk_benchmark's) */
            unsigned ps = order | CLTOPK_PLAN_SELECT;
            st = cl ? cltopk_plan_buffer(b->ctx, type, (size_t)n, k, ps, &ran)
                    : cltopk_plan(b->ctx, type, (size_t)n, k, ps, &ran);
            ran_name = cltopk_algo_name(ran);
        }
    }
    snprintf(label, sizeof label, "%s%s", a == CLTOPK_ALGO_AUTO ? "auto -> " : "",
             st == CLTOPK_OK ? ran_name : "?");
    double med = 0, flo = 0;
    /* The first call's kernel build, apart from the run (plain rows on an
     * OpenCL device): two host calls of what the row runs, before the timing;
     * the first builds the programs (or loads them from the disk cache), the
     * second runs them; build = first - second.  cltopk_benchmark's warm-up
     * then finds them built. */
    double build = -1;
    if (st == CLTOPK_OK && !b->grid && !config && cltopk_get_cl(b->ctx, NULL, NULL, NULL) ==
        CLTOPK_OK) {
        int sel = (b->flags & CLTOPK_BENCH_SELECT) != 0;
        unsigned order = b->flags & CLTOPK_SMALLEST;
        size_t m = sel ? 1 : k;
        void *ok_keys = malloc(m * bytes);
        int64_t *ok_index = (b->flags & CLTOPK_BENCH_KEYS_ONLY) ? NULL : malloc(m * 8);
        if (ok_keys && (ok_index || (b->flags & CLTOPK_BENCH_KEYS_ONLY))) {
            double t[3];
            int bst = CLTOPK_OK;
            progress("bench: %s %s k=%zu %s: building ...", cltopk_dtype_name(type), dist, k,
                     label);
            for (int i = 0; i < 2 && bst == CLTOPK_OK; i++) {
                t[i] = wall_now();
                bst = sel ? cltopk_select(b->ctx, type, data, (size_t)n, k - 1, order, ran,
                                          ok_keys, ok_index)
                          : cltopk_topk(b->ctx, type, data, (size_t)n, k, order, ran, ok_keys,
                                        ok_index);
                t[i + 1] = wall_now();
            }
            if (bst == CLTOPK_OK)
                build = (t[1] - t[0]) - (t[2] - t[1]) > 0 ? (t[1] - t[0]) - (t[2] - t[1]) : 0;
        }
        free(ok_keys);
        free(ok_index);
    }
    progress("bench: %s %s k=%zu %s ...", cltopk_dtype_name(type), dist, k, label);
    if (st == CLTOPK_OK)
        st = cltopk_benchmark(b->ctx, type, data, (size_t)n, k, b->flags, a, (int)b->reps, &med,
                              &flo);
    progress_done();
    const char *status = st == CLTOPK_OK                ? "ok"
                         : st == CLTOPK_ERR_UNSUPPORTED ? "unsupported"
                                                        : "error";
    if (st != CLTOPK_OK && st != CLTOPK_ERR_UNSUPPORTED)
        b->errors++;
    char reason[1200] = "";
    if (st == CLTOPK_ERR_UNSUPPORTED && *cltopk_last_error(b->ctx))
        snprintf(reason, sizeof reason, "%s", cltopk_last_error(b->ctx));
    else if (st != CLTOPK_OK)
        snprintf(reason, sizeof reason, "%s%s%s", cltopk_strerror(st),
                 *cltopk_last_error(b->ctx) ? ": " : "", cltopk_last_error(b->ctx));
    double gbs = med > 0 ? (double)n * (double)bytes / med / 1e9 : 0;
    double eps = med > 0 ? (double)n / med : 0;
    double ratio = flo > 0 ? med / flo : 0;
    if (b->json) {
        printf("{\"device\": ");
        json_string(stdout, b->dev);
        if (b->grid)
            printf(", \"grid\": \"%s\"", b->grid);
        if (config)
            printf(", \"config\": \"%s\"", config);
        printf(", \"type\": \"%s\", \"n\": %" PRIu64 ", \"dist\": \"%s\", \"k\": "
               "%zu, \"algo\": \"%s\", \"ran\": ",
               cltopk_dtype_name(type), n, dist, k, cltopk_algo_name(a));
        json_string(stdout, st == CLTOPK_OK || a != CLTOPK_ALGO_AUTO ? ran_name : "?");
        printf(", \"order\": \"%s\", \"outputs\": \"%s\", \"status\": \"%s\"",
               b->flags & CLTOPK_SMALLEST ? "smallest" : "largest", outputs_name(b->flags),
               status);
        if (st == CLTOPK_OK) {
            printf(", \"median_s\": %.9g, \"floor_s\": %.9g, \"ratio\": %.6g, "
                   "\"elements_per_s\": %.6g, \"gb_per_s\": %.6g",
                   med, flo, ratio, eps, gbs);
            if (build >= 0)
                printf(", \"build_s\": %.6g", build);
            printf("}\n");
        } else {
            printf(", \"reason\": ");
            json_string(stdout, reason);
            printf("}\n");
        }
        fflush(stdout);
        return;
    }
    if (config) /* ablation */
        printf("%6zu  %-13s %-37s", k, config, adds);
    else if (b->grid)
        printf("%-4s %-13s %10" PRIu64 " %5zu  %-22s", cltopk_dtype_name(type), dist, n, k, label);
    else
        printf("%-13s %6zu  %-22s", dist, k, label);
    if (st == CLTOPK_OK && build >= 0)
        printf(" %10.3f %10.3f %7.2f %10.1f %8.2f %9.1f\n", med * 1e3, flo * 1e3, ratio,
               eps / 1e6, gbs, build * 1e3);
    else if (st == CLTOPK_OK)
        printf(" %10.3f %10.3f %7.2f %10.1f %8.2f\n", med * 1e3, flo * 1e3, ratio, eps / 1e6,
               gbs);
    else
        printf(" %s: %s\n", st == CLTOPK_ERR_UNSUPPORTED ? "unsupported" : "error", reason);
    fflush(stdout);
}

static void numbers_header(void)
{
    printf(" %10s %10s %7s %10s %8s\n", "time ms", "floor ms", "ratio", "Melem/s", "GB/s");
}

/* --grid paper: the SIGMOD'18 grid, n = 2^29 scaled to `base` */
static int grid_paper(bench_run *b, uint64_t base, uint64_t seed, const cltopk_algo *algos,
                      size_t nalgo)
{
    static const size_t k_pow[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};
    static const size_t k_four[] = {1, 32, 256, 1024};
    static const size_t k_two[] = {32, 256};
    static const size_t k_64[] = {64};
    static const struct {
        cltopk_dtype type;
        const char *dist;
        unsigned shift; /* n = base >> shift */
        const size_t *ks;
        size_t nk;
    } sets[] = {
        {CLTOPK_FLOAT32, "uniform", 0, k_pow, 11},
        {CLTOPK_UINT32, "uniform", 0, k_four, 4},
        {CLTOPK_FLOAT64, "uniform", 1, k_four, 4},
        {CLTOPK_FLOAT32, "increasing", 0, k_two, 2},
        {CLTOPK_FLOAT32, "bucket-killer", 0, k_two, 2},
        {CLTOPK_FLOAT32, "uniform", 8, k_64, 1},
        {CLTOPK_FLOAT32, "uniform", 6, k_64, 1},
        {CLTOPK_FLOAT32, "uniform", 4, k_64, 1},
        {CLTOPK_FLOAT32, "uniform", 2, k_64, 1},
        {CLTOPK_FLOAT32, "uniform", 0, k_64, 1},
    };
    size_t most = 0;
    for (size_t s = 0; s < sizeof sets / sizeof sets[0]; s++) {
        uint64_t n = base >> sets[s].shift;
        size_t bytes = cltopk_dtype_size(sets[s].type);
        if (n > SIZE_MAX / bytes)
            return fail("bench", "n = %" PRIu64 " does not fit in memory here", n);
        if ((size_t)n * bytes > most)
            most = (size_t)n * bytes;
    }
    void *data = malloc(most ? most : 1);
    if (!data)
        return fail("bench", "out of memory for %zu bytes of data", most);
    if (!b->json) {
        printf("device     %s\n", b->dev);
        printf("grid       paper (SIGMOD'18), n = %" PRIu64 ", %s first, median of %" PRIu64
               " runs, %s\n\n", base, b->flags & CLTOPK_SMALLEST ? "smallest" : "largest", b->reps,
               outputs_name(b->flags));
        printf("%-4s %-13s %10s %5s  %-22s", "type", "dist", "n", "k", "algorithm");
        numbers_header();
        fflush(stdout);
    }
    int rc = EXIT_OK;
    for (size_t s = 0; s < sizeof sets / sizeof sets[0] && !rc; s++) {
        uint64_t n = base >> sets[s].shift;
        if (n == 0 || sets[s].ks[0] > n)
            continue;
        if (gen_fill(sets[s].type, sets[s].dist, (size_t)n, seed, data) != 0) {
            rc = fail("bench", "cannot generate '%s' data", sets[s].dist);
            break;
        }
        for (size_t ki = 0; ki < sets[s].nk; ki++)
            for (size_t ai = 0; ai < nalgo && sets[s].ks[ki] <= n; ai++)
                bench_row(b, sets[s].type, sets[s].dist, n, data, sets[s].ks[ki], algos[ai],
                          NULL, NULL);
    }
    free(data);
    return rc;
}

/* --grid ablation: bitonic with each step of the design turned on in turn */
static int grid_ablation(bench_run *b, uint64_t n, uint64_t seed, const uint64_t *ks, size_t nk)
{
    static const struct {
        const char *config; /* CLTOPK_BITONIC; NULL: unset */
        const char *adds;
    } steps[] = {
        {"basic=1", "foundation kernel, one pass per step"},
        {"MAXM=2,SWZ=0", "+ fused kernels, sort in registers"},
        {"MAXM=2", "+ swizzled local layout"},
        {"SWZ=0", "combined steps, plain layout"},
        {NULL, "everything: combined steps + swizzle"},
    };
    if (n > SIZE_MAX / 4)
        return fail("bench", "n = %" PRIu64 " does not fit in memory here", n);
    void *data = malloc((size_t)n * 4);
    if (!data)
        return fail("bench", "out of memory for %" PRIu64 " elements", n);
    if (gen_fill(CLTOPK_FLOAT32, "uniform", (size_t)n, seed, data) != 0) {
        free(data);
        return fail("bench", "cannot generate 'uniform' data");
    }
    if (!b->json) {
        printf("device     %s\n", b->dev);
        printf("grid       ablation of bitonic: %" PRIu64 " x f32 uniform (%.1f MiB), %s first,"
               " median of %" PRIu64 " runs, %s\n\n", n, (double)n * 4 / 1048576.0,
               b->flags & CLTOPK_SMALLEST ? "smallest" : "largest", b->reps,
               outputs_name(b->flags));
        printf("%6s  %-13s %-37s", "k", "CLTOPK_BITONIC", "adds");
        numbers_header();
        fflush(stdout);
    }
    int rc = EXIT_OK;
    for (size_t ki = 0; ki < nk && !rc; ki++) {
        if (ks[ki] > n)
            continue;
        for (size_t si = 0; si < sizeof steps / sizeof steps[0]; si++) {
            int e = steps[si].config ? setenv("CLTOPK_BITONIC", steps[si].config, 1)
                                     : unsetenv("CLTOPK_BITONIC");
            if (e != 0) {
                rc = fail("bench", "cannot set CLTOPK_BITONIC: %s", strerror(errno));
                break;
            }
            bench_row(b, CLTOPK_FLOAT32, "uniform", n, data, (size_t)ks[ki], CLTOPK_ALGO_BITONIC,
                      steps[si].config ? steps[si].config : "default", steps[si].adds);
        }
    }
    unsetenv("CLTOPK_BITONIC");
    free(data);
    return rc;
}

/* ---- --grid sbp, the SBP radix / radix select grid with the
 * planner's predictions beside the measurements */

/* one line of the planner's predictions for (type, n, k) on device data */
static void plan_line(bench_run *b, cltopk_dtype type, uint64_t n, size_t k)
{
    char buf[4096], line[1024] = "";
    if (cltopk_explain(b->ctx, type, (size_t)n, k, b->flags & CLTOPK_SMALLEST, 1, buf,
                       sizeof buf) != CLTOPK_OK)
        return;
    size_t o = 0;
    for (char *l = strtok(buf, "\n"); l; l = strtok(NULL, "\n")) {
        char name[32];
        double ms;
        int chosen = l[0] == '-';
        if (sscanf(l + 2, " %31s predicted %lf ms", name, &ms) == 2) {
            int w = snprintf(line + o, sizeof line - o, "%s%s%s %.3f", o ? ", " : "",
                             chosen ? "*" : "", name, ms);
            if (w > 0 && (size_t)w < sizeof line - o)
                o += (size_t)w;
        }
    }
    if (b->json) {
        printf("{\"device\": ");
        json_string(stdout, b->dev);
        printf(", \"grid\": \"sbp\", \"type\": \"%s\", \"n\": %" PRIu64 ", \"k\": %zu, "
               "\"predicted_ms\": ", cltopk_dtype_name(type), n, k);
        json_string(stdout, line);
        printf("}\n");
    } else {
        printf("     plan (predicted ms, * = auto's choice): %s\n", line);
    }
    fflush(stdout);
}

static int grid_sbp(bench_run *b, uint64_t base, uint64_t seed, const cltopk_algo *algos,
                    size_t nalgo)
{
    size_t kk[20], nk = 0;
    for (size_t k = 1; k <= 1024; k *= 2)
        kk[nk++] = k;
    kk[nk++] = 4096;
    kk[nk++] = 65536;
    kk[nk++] = (size_t)1 << 20;
    kk[nk++] = (size_t)(base / 2);
    static const size_t k_hard[] = {32, 128};
    static const size_t k_types[] = {32, 1024, 65536};
    static const struct {
        cltopk_dtype type;
        const char *dist;
        unsigned shift;
        int hard; /* 0 the full k list, 1 k_hard, 2 k_types */
    } sets[] = {
        {CLTOPK_FLOAT32, "uniform", 0, 0},     {CLTOPK_FLOAT32, "increasing", 0, 1},
        {CLTOPK_FLOAT32, "decreasing", 0, 1},  {CLTOPK_FLOAT32, "bucket-killer", 0, 1},
        {CLTOPK_FLOAT32, "normal", 0, 1},      {CLTOPK_UINT32, "uniform", 0, 2},
        {CLTOPK_FLOAT64, "uniform", 1, 2},
    };
    size_t bytes = (size_t)base * 4;
    void *data = malloc(bytes ? bytes : 1);
    if (!data)
        return fail("bench", "out of memory for %zu bytes of data", bytes);
    if (!b->json) {
        printf("device     %s\n", b->dev);
        printf("grid       sbp: SBP radix, radix select, n = %" PRIu64 ", %s first, median of %"
               PRIu64 " runs\n\n", base, b->flags & CLTOPK_SMALLEST ? "smallest" : "largest",
               b->reps);
        printf("%-4s %-13s %10s %5s  %-22s", "type", "dist", "n", "k", "algorithm");
        numbers_header();
        fflush(stdout);
    }
    int rc = EXIT_OK;
    for (size_t s = 0; s < sizeof sets / sizeof sets[0] && !rc; s++) {
        uint64_t n = base >> sets[s].shift;
        if (gen_fill(sets[s].type, sets[s].dist, (size_t)n, seed, data) != 0) {
            rc = fail("bench", "cannot generate '%s' data", sets[s].dist);
            break;
        }
        const size_t *ks = sets[s].hard == 0 ? kk : sets[s].hard == 1 ? k_hard : k_types;
        size_t cnt = sets[s].hard == 0 ? nk : sets[s].hard == 1 ? 2 : 3;
        for (size_t ki = 0; ki < cnt; ki++) {
            size_t k = ks[ki];
            if (k == 0 || k > n)
                continue;
            plan_line(b, sets[s].type, n, k);
            for (size_t ai = 0; ai < nalgo; ai++)
                bench_row(b, sets[s].type, sets[s].dist, n, data, k, algos[ai], NULL, NULL);
        }
        if (s == 0) {
            /* selection at ranks 0 and n / 2 (the row's k is rank + 1) */
            unsigned saved = b->flags;
            size_t ranks[2] = {0, (size_t)(n / 2)};
            for (int r = 0; r < 2; r++) {
                if (!b->json)
                    printf("     select rank %zu (k = rank + 1):\n", ranks[r]);
                b->flags = saved | CLTOPK_BENCH_SELECT;
                bench_row(b, CLTOPK_FLOAT32, "uniform", n, data, ranks[r] + 1,
                          CLTOPK_ALGO_RADIX_SELECT, NULL, NULL);
                bench_row(b, CLTOPK_FLOAT32, "uniform", n, data, ranks[r] + 1, CLTOPK_ALGO_AUTO,
                          NULL, NULL);
                b->flags = saved;
            }
        }
    }
    free(data);
    return rc;
}


int cmd_bench(int argc, char **argv)
{
    /* bit-packed columns: `cltopk bench --unpack ...` (cmd_unpackbench.c) */
    for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
        if (!strcmp(argv[i], "--unpack"))
            return cmd_bench_unpack(argc, argv);
    /* many rows at once: --rows, --segments, --knn (tools/cmd_rows.c) */
    for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
        if (!strcmp(argv[i], "--rows") || !strncmp(argv[i], "--rows=", 7) ||
            !strcmp(argv[i], "--segments") || !strcmp(argv[i], "--knn"))
            return cmd_bench_rows(argc, argv);
        else if (!strcmp(argv[i], "--query"))
            return cmd_bench_query(argc, argv);
    /* --cpu: the CPU algorithms beside their peers (tools/cmd_bench_cpu.c) */
    for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
        if (!strcmp(argv[i], "--cpu"))
            return cmd_bench_cpu(argc, argv);
        else if (!strcmp(argv[i], "--stream"))
            return cmd_bench_stream(argc, argv);
    enum { O_DEVICE = 1, O_TYPE, O_N, O_K, O_ALGO, O_DIST, O_REPS, O_SEED, O_SMALLEST, O_JSON,
           O_GRID, O_KEYS_ONLY, O_SELECT, O_HELP };
    static const cli_option opts[] = {
        {O_DEVICE, 0, "device", 1}, {O_TYPE, 't', "type", 1}, {O_N, 'n', "count", 1},
        {O_K, 'k', "k", 1},         {O_ALGO, 'a', "algo", 1}, {O_DIST, 0, "dist", 1},
        {O_REPS, 'r', "reps", 1},   {O_SEED, 's', "seed", 1}, {O_SMALLEST, 0, "smallest", 0},
        {O_JSON, 0, "json", 0},     {O_GRID, 0, "grid", 1},   {O_HELP, 'h', "help", 0},
        {O_KEYS_ONLY, 0, "keys-only", 0}, {O_SELECT, 0, "select", 0},
        {0, 0, NULL, 0},
    };
    cli_parser p;
    const char *arg, *device = NULL, *grid = NULL, *fixed_by_grid = NULL;
    int id, json = 0, have_algos = 0, have_n = 0, have_reps = 0, have_k = 0;
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
            fixed_by_grid = "-t";
            break;
        case O_N:
            if (parse_count(arg, (uint64_t)1 << 40, &n) < 0 || n == 0)
                return usage_error("bench", "bad count '%s' (a number like 1M or 2^24, 1 to "
                                   "2^40)", arg);
            have_n = 1;
            break;
        case O_K:
            if (parse_count_list(arg, UINT64_MAX, ks, MAX_LIST, &nk) < 0)
                return usage_error("bench", "bad k list '%s' (like 1,32,256; at most 64 "
                                   "values)", arg);
            if (!fixed_by_grid)
                fixed_by_grid = "-k";
            have_k = 1;
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
            fixed_by_grid = "--dist";
            break;
        case O_REPS:
            if (parse_count(arg, 64, &reps) < 0 || reps == 0)
                return usage_error("bench", "bad repetition count '%s' (1 to 64)", arg);
            have_reps = 1;
            break;
        case O_SEED:
            if (parse_u64(arg, &seed) < 0)
                return usage_error("bench", "bad seed '%s' (a 64-bit number)", arg);
            break;
        case O_SMALLEST: flags |= CLTOPK_SMALLEST; break;
        case O_KEYS_ONLY: flags |= CLTOPK_BENCH_KEYS_ONLY; break;
        case O_SELECT: flags |= CLTOPK_BENCH_SELECT; break;
        case O_JSON: json = 1; break;
        case O_GRID:
            if (strcmp(arg, "paper") && strcmp(arg, "ablation") && strcmp(arg, "sbp"))
                return usage_error("bench", "unknown grid '%s' (paper, ablation or sbp)", arg);
            grid = arg;
            break;
        case O_HELP: bench_help(); return EXIT_OK;
        }
    }
    if (grid) {
        int ablation = !strcmp(grid, "ablation");
        if (fixed_by_grid && !(ablation && have_k && !strcmp(fixed_by_grid, "-k")))
            return usage_error("bench", "--grid %s fixes the types, %sdistributions: drop %s",
                               grid, ablation ? "" : "k and ", fixed_by_grid);
        if (ablation && !have_k) {
            ks[0] = 32, ks[1] = 256, ks[2] = 1024;
            nk = 3;
        }
        if (!strcmp(grid, "ablation") && have_algos)
            return usage_error("bench", "--grid ablation times bitonic only: drop --algo");
        if (!have_n)
            n = (uint64_t)1 << 29;
        if (!have_reps)
            reps = 3;
    }
    for (size_t i = 0; i < nk && (!grid || have_k); i++)
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
    bench_run b = {ctx, cltopk_device_name(ctx), flags, reps, json, grid, 0};
    if (grid && !have_algos && !strcmp(grid, "sbp")) {
        algos[nalgo++] = CLTOPK_ALGO_SBP_RADIX;
        algos[nalgo++] = CLTOPK_ALGO_RADIX_SELECT;
        algos[nalgo++] = CLTOPK_ALGO_BITONIC;
        algos[nalgo++] = CLTOPK_ALGO_AUTO;
    }
    if (grid && !have_algos && !nalgo)
        algos[nalgo++] = CLTOPK_ALGO_BITONIC;
    if (!have_algos && !grid) {
        int is_cl = cltopk_get_cl(ctx, NULL, NULL, NULL) == CLTOPK_OK;
        if (is_cl)
            algos[nalgo++] = CLTOPK_ALGO_BITONIC;
        if (is_cl) /* sbp-tree */
            algos[nalgo++] = CLTOPK_ALGO_SBP_TREE;
        algos[nalgo++] = CLTOPK_ALGO_CPU_HEAP;
    }
    if (grid) {
        rc = !strcmp(grid, "paper")  ? grid_paper(&b, n, seed, algos, nalgo)
             : !strcmp(grid, "sbp") ? grid_sbp(&b, n, seed, algos, nalgo)
                                    : grid_ablation(&b, n, seed, ks, nk);
        goto done;
    }
    void *data = malloc((size_t)n * bytes);
    if (!data) {
        cltopk_close(ctx);
        return fail("bench", "out of memory for %" PRIu64 " elements", n);
    }
    double mib = (double)n * (double)bytes / 1048576.0;
    if (!json) {
        printf("device     %s\n", b.dev);
        printf("data       %" PRIu64 " x %s (%.1f MiB), %s first, median of %" PRIu64
               " runs, %s\n\n", n, cltopk_dtype_name(type), mib,
               flags & CLTOPK_SMALLEST ? "smallest" : "largest", reps, outputs_name(flags));
        printf("%-13s %6s  %-22s", "dist", "k", "algorithm");
        if (cltopk_get_cl(ctx, NULL, NULL, NULL) == CLTOPK_OK)
            printf(" %10s %10s %7s %10s %8s %9s\n", "time ms", "floor ms", "ratio", "Melem/s",
                   "GB/s", "build ms");
        else
            numbers_header();
        fflush(stdout);
    }
    for (size_t di = 0; di < ndist; di++) {
        if (gen_fill(type, dists[di], (size_t)n, seed, data) != 0) {
            rc = fail("bench", "cannot generate '%s' data", dists[di]);
            break;
        }
        for (size_t ki = 0; ki < nk; ki++)
            for (size_t ai = 0; ai < nalgo; ai++)
                bench_row(&b, type, dists[di], n, data, (size_t)ks[ki], algos[ai], NULL, NULL);
    }
    free(data);
done:
    cltopk_close(ctx);
    if (!rc && b.errors)
        rc = fail("bench", "%d row%s failed (see above)", b.errors, b.errors == 1 ? "" : "s");
    return rc;
}

/* ------------------------------------------------------------ cltopk tune */

static void tune_help(void)
{
    printf("Usage: cltopk tune [--device SPEC] [-n N] [-t TYPE] [-k LIST] [--reps R]\n"
           "                   [-b LIST] [--wg LIST] [--seed S] [--keys-only]\n"
           "\n"
           "Find the fastest configuration of the bitonic kernel for each k on one device.\n"
           "For every k it times (as 'cltopk bench' does: median of R runs, no transfers)\n"
           "each candidate B = 16, 8, 4 items per work-item and WG = 64, 128, 256, 512,\n"
           "1024 work-items per group, with MAXM = 16, SWZ = 1 and the default OUT, by\n"
           "setting CLTOPK_BITONIC for the call; candidates the device cannot run are\n"
           "skipped.  It prints the best next to the default configuration\n"
           "(CLTOPK_BITONIC unset) and ends with the entries, in the C form of the\n"
           "bcfg_rows[] table of lib/bitonic_cfg.h, where the best beats the default by more\n"
           "than 3%%.  Timing asks for keys and positions (entries with index = 1), or\n"
           "with --keys-only for keys alone (index = 0: the kernels carry no positions).\n"
           "CLTOPK_BITONIC is unset when tune ends.\n"
           "\n"
           "Options:\n"
           "      --device SPEC  auto (default), gpu, P:D, or part of one device's name\n"
           "  -n, --count N      elements of uniform data (default 2^26)\n"
           "  -t, --type TYPE    f32 (default), f64, i32, u32, i64, u64\n"
           "  -k, --k LIST       comma-separated k values (default 1,2,4,...,2048); an\n"
           "                     entry's K is k rounded up to a power of two\n"
           "  -r, --reps R       timed runs per candidate, 1 to 64 (default 5)\n"
           "  -b, --b LIST       the candidates' B values (default 16,8,4)\n"
           "      --wg LIST      the candidates' WG values (default 64,128,256,512,1024)\n"
           "  -s, --seed S       seed of the data (default 1)\n"
           "      --keys-only    time keys alone (default: keys and positions)\n"
           "  -h, --help         this text\n"
           "\n"
           "Every candidate is a kernel build the first time (then the kernel cache has\n"
           "it): seconds each on POCL; narrow -k, -b and --wg for a quick look.\n"
           "\n"
           "Exit status 1 if a candidate failed with an error (not counting unsupported).\n"
           "\n"
           "Examples:\n"
           "  cltopk tune\n"
           "  cltopk tune --device 0:0 -t f64 -k 32,256,1024 --reps 9\n");
}

/* one timing with CLTOPK_BITONIC = spec (NULL: unset); 1 timed, 0 unsupported,
 * -1 error (printed) */
static int tune_time(cltopk_context *ctx, cltopk_dtype type, const void *data, size_t n,
                     size_t k, int reps, unsigned flags, const char *spec, double *med,
                     double *flo)
{
    if ((spec ? setenv("CLTOPK_BITONIC", spec, 1) : unsetenv("CLTOPK_BITONIC")) != 0) {
        fail("tune", "cannot set CLTOPK_BITONIC: %s", strerror(errno));
        return -1;
    }
    int st = cltopk_benchmark(ctx, type, data, n, k, flags, CLTOPK_ALGO_BITONIC, reps, med, flo);
    if (st == CLTOPK_OK)
        return 1;
    if (st == CLTOPK_ERR_UNSUPPORTED)
        return 0;
    char what[96];
    snprintf(what, sizeof what, "k = %zu, CLTOPK_BITONIC=%s", k, spec ? spec : "");
    lib_fail("tune", what, st, ctx);
    return -1;
}

int cmd_tune(int argc, char **argv)
{
    enum { O_DEVICE = 1, O_TYPE, O_N, O_K, O_REPS, O_SEED, O_B, O_WG, O_KEYS_ONLY, O_HELP };
    static const cli_option opts[] = {
        {O_DEVICE, 0, "device", 1}, {O_TYPE, 't', "type", 1}, {O_N, 'n', "count", 1},
        {O_K, 'k', "k", 1},         {O_REPS, 'r', "reps", 1}, {O_SEED, 's', "seed", 1},
        {O_B, 'b', "b", 1},         {O_WG, 0, "wg", 1},       {O_HELP, 'h', "help", 0},
        {O_KEYS_ONLY, 0, "keys-only", 0}, {0, 0, NULL, 0},
    };
    unsigned flags = CLTOPK_LARGEST;
    uint64_t Bs[MAX_LIST] = {16, 8, 4}, WGs[MAX_LIST] = {64, 128, 256, 512, 1024};
    size_t NB = 3, NWG = 5;
    cli_parser p;
    const char *arg, *device = NULL;
    int id;
    cltopk_dtype type = CLTOPK_FLOAT32;
    uint64_t n = (uint64_t)1 << 26, seed = 1, reps = 5;
    uint64_t ks[MAX_LIST];
    size_t nk = 12;
    for (size_t i = 0; i < nk; i++)
        ks[i] = (uint64_t)1 << i;
    cli_init(&p, "tune", argc, argv);
    while ((id = cli_next(&p, opts, &arg)) != -1) {
        switch (id) {
        case -2: return EXIT_USAGE;
        case 0: return usage_error("tune", "unexpected argument '%s'", arg);
        case O_DEVICE: device = arg; break;
        case O_TYPE:
            if (parse_type("tune", arg, &type))
                return EXIT_USAGE;
            break;
        case O_N:
            if (parse_count(arg, (uint64_t)1 << 40, &n) < 0 || n == 0)
                return usage_error("tune", "bad count '%s' (a number like 1M or 2^26, 1 to "
                                   "2^40)", arg);
            break;
        case O_K:
            if (parse_count_list(arg, UINT64_MAX, ks, MAX_LIST, &nk) < 0)
                return usage_error("tune", "bad k list '%s' (like 1,32,256; at most 64 "
                                   "values)", arg);
            break;
        case O_REPS:
            if (parse_count(arg, 64, &reps) < 0 || reps == 0)
                return usage_error("tune", "bad repetition count '%s' (1 to 64)", arg);
            break;
        case O_SEED:
            if (parse_u64(arg, &seed) < 0)
                return usage_error("tune", "bad seed '%s' (a 64-bit number)", arg);
            break;
        case O_B:
            if (parse_count_list(arg, 16, Bs, MAX_LIST, &NB) < 0)
                return usage_error("tune", "bad B list '%s' (of 4, 8, 16)", arg);
            for (size_t i = 0; i < NB; i++)
                if (Bs[i] != 4 && Bs[i] != 8 && Bs[i] != 16)
                    return usage_error("tune", "bad B list '%s' (of 4, 8, 16)", arg);
            break;
        case O_WG:
            if (parse_count_list(arg, 65536, WGs, MAX_LIST, &NWG) < 0)
                return usage_error("tune", "bad WG list '%s' (powers of two, up to 65536)",
                                   arg);
            for (size_t i = 0; i < NWG; i++)
                if (!WGs[i] || (WGs[i] & (WGs[i] - 1)))
                    return usage_error("tune", "bad WG list '%s' (powers of two, up to 65536)",
                                       arg);
            break;
        case O_KEYS_ONLY: flags |= CLTOPK_BENCH_KEYS_ONLY; break;
        case O_HELP: tune_help(); return EXIT_OK;
        }
    }
    for (size_t i = 0; i < nk; i++)
        if (ks[i] == 0 || ks[i] > n || ks[i] > ((uint64_t)1 << 20))
            return usage_error("tune", "k = %" PRIu64 " is not between 1 and n = %" PRIu64
                               " (and at most 2^20)", ks[i], n);
    size_t bytes = cltopk_dtype_size(type);
    if (n > SIZE_MAX / bytes)
        return fail("tune", "n = %" PRIu64 " does not fit in memory here", n);
    cltopk_context *ctx = NULL;
    int rc = open_device("tune", device, &ctx);
    if (rc)
        return rc;
    if (cltopk_get_cl(ctx, NULL, NULL, NULL) != CLTOPK_OK) {
        cltopk_close(ctx);
        return fail("tune", "the bitonic kernel runs on OpenCL devices only, not '%s'",
                    device ? device : "cpu");
    }
    void *data = malloc((size_t)n * bytes);
    if (!data) {
        cltopk_close(ctx);
        return fail("tune", "out of memory for %" PRIu64 " elements", n);
    }
    if (gen_fill(type, "uniform", (size_t)n, seed, data) != 0) {
        free(data);
        cltopk_close(ctx);
        return fail("tune", "cannot generate the data");
    }
    /* the device name that the tuned table matches: "platform / device" -> device */
    const char *dev = cltopk_device_name(ctx), *slash = strstr(dev, " / ");
    const char *devname = slash ? slash + 3 : dev;
    printf("device     %s\n", dev);
    printf("data       %" PRIu64 " x %s uniform (%.1f MiB), %s, largest first, "
           "median of %" PRIu64 " runs\n", n, cltopk_dtype_name(type),
           (double)n * (double)bytes / 1048576.0, outputs_name(flags), reps);
    printf("candidates B =");
    for (size_t i = 0; i < NB; i++)
        printf("%s %" PRIu64, i ? "," : "", Bs[i]);
    printf("; WG =");
    for (size_t i = 0; i < NWG; i++)
        printf("%s %" PRIu64, i ? "," : "", WGs[i]);
    printf("; MAXM = 16, SWZ = 1, OUT = default\n\n");
    printf("%6s %6s  %-24s %10s %11s %10s %8s\n", "k", "K", "best B,WG,MAXM", "best ms",
           "default ms", "floor ms", "gain");
    fflush(stdout);

    struct { unsigned K, B, WG; } entry[MAX_LIST];
    size_t nentry = 0;
    int errors = 0;
    for (size_t ki = 0; ki < nk && !rc; ki++) {
        size_t k = (size_t)ks[ki];
        unsigned K = 1;
        while (K < k)
            K *= 2;
        double dmed = 0, dflo = 0, bmed = 0, med, flo;
        int dok = tune_time(ctx, type, data, (size_t)n, k, (int)reps, flags, NULL, &dmed,
                            &dflo);
        errors += dok < 0;
        unsigned bB = 0, bWG = 0;
        for (size_t bi = 0; bi < NB; bi++)
            for (size_t wi = 0; wi < NWG; wi++) {
                unsigned B = (unsigned)Bs[bi], WG = (unsigned)WGs[wi];
                char spec[96];
                if (2u * K > B * WG) /* a group must hold two runs of K */
                    continue;
                /* OUT: the library's default for B and WG */
                snprintf(spec, sizeof spec, "B=%u,WG=%u,MAXM=16,SWZ=1", B, WG);
                progress("tune: k=%zu (%zu of %zu), %s", k, ki + 1, nk, spec);
                int ok = tune_time(ctx, type, data, (size_t)n, k, (int)reps, flags, spec, &med,
                                         &flo);
                errors += ok < 0;
                if (ok == 1 && (!bB || med < bmed))
                    bB = B, bWG = WG, bmed = med;
            }
        progress_done();
        char best[64] = "-", bms[32] = "-", dms[32] = "-", fms[32] = "-", gain[32] = "-";
        if (bB) {
            snprintf(best, sizeof best, "%u,%u,16", bB, bWG);
            snprintf(bms, sizeof bms, "%.3f", bmed * 1e3);
        }
        if (dok == 1) {
            snprintf(dms, sizeof dms, "%.3f", dmed * 1e3);
            snprintf(fms, sizeof fms, "%.3f", dflo * 1e3);
        } else if (dok == 0)
            snprintf(dms, sizeof dms, "unsupported");
        if (bB && dok == 1) {
            snprintf(gain, sizeof gain, "%+.1f%%", (dmed / bmed - 1) * 100);
            if (bmed * 1.03 < dmed) {
                int dup = 0; /* two k of one K: keep the first */
                for (size_t e = 0; e < nentry; e++)
                    dup |= entry[e].K == K;
                if (!dup) {
                    entry[nentry].K = K, entry[nentry].B = bB, entry[nentry].WG = bWG;
                    nentry++;
                }
            }
        }
        printf("%6zu %6u  %-24s %10s %11s %10s %8s\n", k, K, best, bms, dms, fms, gain);
        fflush(stdout);
    }
    unsetenv("CLTOPK_BITONIC");

    printf("\n");
    if (nentry == 0)
        printf("/* no bcfg_rows[] entry: the default is within 3%% of the best for every k */\n");
    else
        printf("/* bcfg_rows[] entries for lib/bitonic_cfg.h (best > 3%% faster than the "
               "default):\n * {device, key_bytes, index, K from, K to, values} */\n");
    for (size_t e = 0; e < nentry; e++) {
        printf("    {\"");
        for (const char *c = devname; *c; c++) /* as a C string literal */
            if (*c == '"' || *c == '\\')
                printf("\\%c", *c);
            else if ((unsigned char)*c < 0x20 || *c == 0x7f)
                printf("\\%03o", (unsigned)(unsigned char)*c);
            else
                putchar(*c);
        printf("\", %zu, %d, %u, %u, \"B=%u,WG=%u,MAXM=16\"},\n", bytes,
               (flags & CLTOPK_BENCH_KEYS_ONLY) ? 0 : 1, entry[e].K, entry[e].K, entry[e].B,
               entry[e].WG);
    }
    free(data);
    cltopk_close(ctx);
    if (!rc && errors)
        rc = fail("tune", "%d timing%s failed (see above)", errors, errors == 1 ? "" : "s");
    return rc;
}
