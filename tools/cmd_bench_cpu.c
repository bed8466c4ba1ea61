/* cmd_bench_cpu.c - `cltopk bench --cpu`: the CPU algorithms beside the C++
 * standard library, numpy and the memory-read time of the same array. */
#include "cli.h"
#include "gen.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#define MAX_LIST 64

static void bench_cpu_help(void)
{
    printf("Usage: cltopk bench --cpu [-t TYPE] [-n N] [-k LIST] [--dist LIST] [--algo LIST]\n"
           "                    [--reps R] [--seed S] [--smallest] [--threads T]\n"
           "                    [--peers PROGRAM] [--numpy SCRIPT] [--no-peers] [--json]\n"
           "\n"
           "Time the CPU algorithms on the \"cpu\" device for every (distribution, k) of\n"
           "the lists, beside their peers on the same array in the same run:\n"
           "  std::partial_sort and std::nth_element + std::sort (keys only, one thread;\n"
           "  the program bench/cpu-peers, built by `make bench-peers`), and\n"
           "  numpy.argpartition + sort (positions; bench/cpu_peers_numpy.py, when\n"
           "  python3 has numpy).\n"
           "Each row gives the median of R runs after one warm-up, the read time (one\n"
           "vectorised pass over the same array on the same threads, measured in the same\n"
           "call; the peers' rows repeat the last all-threads read) and time / read.  A\n"
           "row 'cpu-heap, 1 thread' times the heap and the read on one thread.  Our\n"
           "algorithms return keys and positions.\n"
           "\n"
           "Options:\n"
           "  -t, --type TYPE    f32 (default), f64, i32, u32, i64, u64\n"
           "  -n, --count N      elements (default 2^25)\n"
           "  -k, --k LIST       k values (default 64)\n"
           "      --dist LIST    distributions of 'cltopk gen' (default\n"
           "                     uniform,increasing,decreasing,bucket-killer)\n"
           "  -a, --algo LIST    our algorithms (default cpu-heap,cpu-bitonic,cpu-radix,auto)\n"
           "  -r, --reps R       timed runs per row, 1 to 64 (default 5; peers at most 3)\n"
           "  -s, --seed S       seed of the data (default 1)\n"
           "      --smallest     the ascending order\n"
           "      --threads T    cltopk_set_threads(T) (default: OpenMP's default)\n"
           "      --peers PROG   the C++ peer program (default $CLTOPK_BENCH_PEERS, else\n"
           "                     bench/cpu-peers under the current directory)\n"
           "      --numpy SCRIPT the numpy peer (default $CLTOPK_BENCH_NUMPY, else\n"
           "                     bench/cpu_peers_numpy.py under the current directory)\n"
           "      --no-peers     our algorithms only\n"
           "      --json         JSON lines on standard output, one a row: device, type,\n"
           "                     n, dist, k, method, threads (all or 1), status, median_s,\n"
           "                     floor_s (the read), ratio; or reason (unsupported rows);\n"
           "                     the header lines go to standard error (bench/plot.py\n"
           "                     draws them)\n"
           "  -h, --help         this text\n"
           "\n"
           "Exit status 1 if a row of ours failed with an error (not counting\n"
           "unsupported), 2 for a bad command line (a k of 0 or above N included).\n"
           "\n"
           "Example:\n"
           "  make bench-peers && tools/cltopk bench --cpu -n 2^25 -k 64,256\n");
}

static void machine_line(FILE *out)
{
    char model[256] = "unknown processor";
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f) {
        char line[512];
        while (fgets(line, sizeof line, f))
            if (!strncmp(line, "model name", 10)) {
                char *c = strchr(line, ':');
                if (c) {
                    c++;
                    while (*c == ' ' || *c == '\t')
                        c++;
                    snprintf(model, sizeof model, "%s", c);
                    model[strcspn(model, "\n")] = 0;
                }
                break;
            }
        fclose(f);
    }
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    fprintf(out, "machine    %s, %ld logical cores\n", model, cores);
}

/* --json: rows as JSON lines (the header lines left out); else a table */
static int json_rows;
static const char *json_type;
static uint64_t json_n;

/* One timed row: method label, median and read seconds; one_thread: the
 * method and its read ran on one thread (the table says so); peer: a peer
 * program (one thread; its read column repeats ours). */
static void time_row(const char *dist, size_t k, const char *method, double s, double rd,
                     int one_thread, int peer)
{
    if (json_rows)
        printf("{\"device\": \"cpu\", \"type\": \"%s\", \"n\": %" PRIu64 ", \"dist\": \"%s\", "
               "\"k\": %zu, \"method\": \"%s\", \"threads\": \"%s\", \"status\": \"ok\", "
               "\"median_s\": %.9g, \"floor_s\": %.9g, \"ratio\": %.4f}\n",
               json_type, json_n, dist, k, method, one_thread || peer ? "1" : "all", s, rd,
               rd > 0 ? s / rd : 0);
    else
        printf("%-13s %6zu  %-26s %10.3f %10.3f %7.2f%s\n", dist, k, method, s * 1e3, rd * 1e3,
               rd > 0 ? s / rd : 0, one_thread ? "   (read: 1 thread)" : "");
}

/* Run a peer on the array in `file`; print its rows beside the read time. */
static void run_peer(const char *prog, int python, cltopk_dtype type, size_t k, int reps,
                     const char *file, int smallest, const char *dist, double rd)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s%s %s %zu %d '%s'%s 2>&1", python ? "python3 " : "", prog,
             cltopk_dtype_name(type), k, reps, file, smallest ? " smallest" : "");
    FILE *p = popen(cmd, "r");
    if (!p) {
        printf("%-13s %6zu  %-26s could not start %s\n", dist, k, "(peer)", prog);
        return;
    }
    char line[512];
    int rows = 0;
    while (fgets(line, sizeof line, p)) {
        char name[128];
        double s;
        if (sscanf(line, "%127s %lf", name, &s) == 2) {
            char label[160];
            snprintf(label, sizeof label, "%s%s", python ? "" : "std::", name);
            /* the peers run on one thread; their read column repeats ours */
            time_row(dist, k, label, s, rd, 0, 1);
            rows++;
        } else {
            line[strcspn(line, "\n")] = 0;
            fprintf(json_rows ? stderr : stdout, "# %s: %s\n", prog, line);
        }
    }
    int st = pclose(p);
    if (python && WIFEXITED(st) && WEXITSTATUS(st) == 3)
        printf("%-13s %6zu  %-26s (python3 has no numpy)\n", dist, k, "numpy.argpartition");
    else if (!rows)
        printf("%-13s %6zu  %-26s failed (exit %d)\n", dist, k, prog, st);
    fflush(stdout);
}

int cmd_bench_cpu(int argc, char **argv)
{
    enum { O_CPU = 1, O_TYPE, O_N, O_K, O_ALGO, O_DIST, O_REPS, O_SEED, O_SMALLEST, O_THREADS,
           O_PEERS, O_NUMPY, O_NOPEERS, O_JSON, O_HELP };
    static const cli_option opts[] = {
        {O_CPU, 0, "cpu", 0},        {O_TYPE, 't', "type", 1},       {O_N, 'n', "count", 1},
        {O_K, 'k', "k", 1},          {O_ALGO, 'a', "algo", 1},       {O_DIST, 0, "dist", 1},
        {O_REPS, 'r', "reps", 1},    {O_SEED, 's', "seed", 1},       {O_SMALLEST, 0, "smallest", 0},
        {O_THREADS, 0, "threads", 1}, {O_PEERS, 0, "peers", 1},      {O_NUMPY, 0, "numpy", 1},
        {O_NOPEERS, 0, "no-peers", 0}, {O_JSON, 0, "json", 0}, {O_HELP, 'h', "help", 0},     {0, 0, NULL, 0},
    };
    cli_parser p;
    const char *arg;
    int id, no_peers = 0, smallest = 0;
    cltopk_dtype type = CLTOPK_FLOAT32;
    uint64_t n = (uint64_t)1 << 25, seed = 1, reps = 5, threads = 0;
    uint64_t ks[MAX_LIST] = {64};
    size_t nk = 1, nalgo = 4, ndist = 4;
    cltopk_algo algos[MAX_LIST] = {CLTOPK_ALGO_CPU_HEAP, CLTOPK_ALGO_CPU_BITONIC,
                                   CLTOPK_ALGO_CPU_RADIX, CLTOPK_ALGO_AUTO};
    const char *dists[MAX_LIST] = {"uniform", "increasing", "decreasing", "bucket-killer"};
    char dist_buf[1024], algo_buf[1024];
    const char *peers = getenv("CLTOPK_BENCH_PEERS"), *numpy = getenv("CLTOPK_BENCH_NUMPY");
    if (!peers || !*peers)
        peers = "bench/cpu-peers";
    if (!numpy || !*numpy)
        numpy = "bench/cpu_peers_numpy.py";
    cli_init(&p, "bench", argc, argv);
    while ((id = cli_next(&p, opts, &arg)) != -1) {
        switch (id) {
        case -2: return EXIT_USAGE;
        case 0: return usage_error("bench", "unexpected argument '%s'", arg);
        case O_CPU: break;
        case O_TYPE:
            if (parse_type("bench", arg, &type))
                return EXIT_USAGE;
            break;
        case O_N:
            if (parse_count(arg, (uint64_t)1 << 40, &n) < 0 || n == 0)
                return usage_error("bench", "bad element count '%s'", arg);
            break;
        case O_K:
            if (parse_count_list(arg, (uint64_t)1 << 40, ks, MAX_LIST, &nk) < 0 || nk == 0)
                return usage_error("bench", "bad k list '%s'", arg);
            break;
        case O_ALGO: {
            const char *items[MAX_LIST];
            snprintf(algo_buf, sizeof algo_buf, "%s", arg);
            if (split_list(algo_buf, items, MAX_LIST, &nalgo) < 0 || nalgo == 0)
                return usage_error("bench", "bad algorithm list '%s'", arg);
            for (size_t i = 0; i < nalgo; i++)
                if (parse_algo("bench", items[i], &algos[i]))
                    return EXIT_USAGE;
            break;
        }
        case O_DIST:
            snprintf(dist_buf, sizeof dist_buf, "%s", arg);
            if (split_list(dist_buf, dists, MAX_LIST, &ndist) < 0 || ndist == 0)
                return usage_error("bench", "bad distribution list '%s'", arg);
            for (size_t i = 0; i < ndist; i++)
                if (!known_dist(dists[i]))
                    return usage_error("bench", "unknown distribution '%s'", dists[i]);
            break;
        case O_REPS:
            if (parse_u64(arg, &reps) < 0 || reps < 1 || reps > 64)
                return usage_error("bench", "--reps takes 1 to 64");
            break;
        case O_SEED:
            if (parse_u64(arg, &seed) < 0)
                return usage_error("bench", "bad seed '%s'", arg);
            break;
        case O_SMALLEST: smallest = 1; break;
        case O_THREADS:
            if (parse_u64(arg, &threads) < 0 || threads > 4096)
                return usage_error("bench", "bad thread count '%s'", arg);
            break;
        case O_PEERS: peers = arg; break;
        case O_NUMPY: numpy = arg; break;
        case O_NOPEERS: no_peers = 1; break;
        case O_JSON: json_rows = 1; break;
        case O_HELP: bench_cpu_help(); return EXIT_OK;
        }
    }
    for (size_t i = 0; i < nk; i++)
        if (ks[i] == 0 || ks[i] > n)
            return usage_error("bench", "k = %" PRIu64 " is not between 1 and n = %" PRIu64,
                               ks[i], n);
    size_t bytes = cltopk_dtype_size(type);
    if (n > SIZE_MAX / bytes)
        return fail("bench", "n = %" PRIu64 " does not fit in memory here", n);
    int st = cltopk_set_threads((int)threads);
    if (st != CLTOPK_OK)
        return lib_fail("bench", "cltopk_set_threads", st, NULL);
    cltopk_context *ctx = NULL;
    if (open_device("bench", "cpu", &ctx))
        return EXIT_FAIL;
    void *data = malloc((size_t)n * bytes);
    if (!data) {
        cltopk_close(ctx);
        return fail("bench", "out of memory for %" PRIu64 " elements", n);
    }
    int have_peers = !no_peers && access(peers, X_OK) == 0;
    int have_numpy = !no_peers && access(numpy, R_OK) == 0;
    char file[4096] = "";
    if (have_peers || have_numpy) {
        const char *tmp = getenv("TMPDIR");
        snprintf(file, sizeof file, "%s/cltopk-bench-cpu-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        int fd = mkstemp(file);
        if (fd < 0) {
            have_peers = have_numpy = 0;
            file[0] = 0;
        } else {
            close(fd);
        }
    }
    /* with --json the header goes to stderr: standard output holds the rows */
    FILE *hdr = json_rows ? stderr : stdout;
    json_type = cltopk_dtype_name(type);
    json_n = n;
    machine_line(hdr);
    /* the library's CPU algorithms run on OpenMP's default team (the same
     * runtime as this program's) unless --threads sets it */
    if (threads)
        fprintf(hdr, "threads    %d (--threads %d), CPU kernels %s\n", (int)threads, (int)threads,
               cltopk_cpu_isa());
    else
#ifdef _OPENMP
        fprintf(hdr, "threads    %d (OpenMP's default; --threads T sets it), CPU kernels %s\n",
               omp_get_max_threads(), cltopk_cpu_isa());
#else
        fprintf(hdr, "threads    default (OpenMP's; --threads T sets it), CPU kernels %s\n",
               cltopk_cpu_isa());
#endif
    fprintf(hdr, "data       %s, n = %" PRIu64 ", %s first, median of %" PRIu64
           " runs (peers: %d)\n", cltopk_dtype_name(type), n, smallest ? "smallest" : "largest",
           reps, reps < 3 ? (int)reps : 3);
    if (!no_peers && !have_peers)
        fprintf(hdr, "peers      %s not found (make bench-peers, or --peers PROG)\n", peers);
    fprintf(hdr, "\n%-13s %6s  %-26s %10s %10s %7s\n", "dist", "k", "method", "time ms", "read ms",
           "ratio");
    int errors = 0;
    for (size_t d = 0; d < ndist; d++) {
        if (gen_fill(type, dists[d], (size_t)n, seed, data) != 0) {
            fail("bench", "cannot generate '%s' data", dists[d]);
            errors++;
            continue;
        }
        if (file[0]) {
            /* the peers' copy of the array (a temporary of this command's own) */
            FILE *f = fopen(file, "wb");
            int bad = !f || fwrite(data, bytes, (size_t)n, f) != (size_t)n;
            if (f && fclose(f) != 0)
                bad = 1;
            if (bad && (have_peers || have_numpy)) {
                printf("# cannot write the peers' copy of the data to %s: %s; peers left out\n",
                       file, strerror(errno));
                have_peers = have_numpy = 0;
            }
        }
        for (size_t ki = 0; ki < nk; ki++) {
            size_t k = (size_t)ks[ki]; /* 1 <= k <= n, checked above */
            double rd = 0;
            for (size_t a = 0; a < nalgo; a++) {
                cltopk_algo ran = algos[a];
                st = CLTOPK_OK;
                if (algos[a] == CLTOPK_ALGO_AUTO) /* what cltopk_benchmark times */
                    st = cltopk_plan(ctx, type, (size_t)n, k, smallest, &ran);
                char label[64];
                snprintf(label, sizeof label, "%s%s", algos[a] == CLTOPK_ALGO_AUTO ? "auto -> " : "",
                         st == CLTOPK_OK ? cltopk_algo_name(ran) : "?");
                double med = 0, flo = 0;
                progress("bench --cpu: %s k=%zu %s ...", dists[d], k, label);
                if (st == CLTOPK_OK)
                    st = cltopk_benchmark(ctx, type, data, (size_t)n, k, smallest, algos[a],
                                          (int)reps, &med, &flo);
                progress_done();
                if (st == CLTOPK_OK) {
                    rd = flo;
                    time_row(dists[d], k, label, med, flo, 0, 0);
                } else {
                    if (st != CLTOPK_ERR_UNSUPPORTED)
                        errors++;
                    const char *what = st == CLTOPK_ERR_UNSUPPORTED ? "unsupported" : "error";
                    if (json_rows) {
                        printf("{\"device\": \"cpu\", \"type\": \"%s\", \"n\": %" PRIu64
                               ", \"dist\": \"%s\", \"k\": %zu, \"method\": \"%s\", "
                               "\"status\": \"%s\", \"reason\": ", json_type, n, dists[d], k,
                               label, what);
                        json_string(stdout, cltopk_last_error(ctx));
                        printf("}\n");
                    } else {
                        printf("%-13s %6zu  %-26s %s: %s\n", dists[d], k, label, what,
                               cltopk_last_error(ctx));
                    }
                }
                fflush(stdout);
            }
            /* the heap on one thread beside one thread's read (the peers' case) */
            if (threads != 1 && cltopk_set_threads(1) == CLTOPK_OK) {
                double med = 0, flo = 0;
                st = cltopk_benchmark(ctx, type, data, (size_t)n, k, smallest,
                                      CLTOPK_ALGO_CPU_HEAP, (int)reps, &med, &flo);
                cltopk_set_threads((int)threads);
                if (st == CLTOPK_OK)
                    time_row(dists[d], k, "cpu-heap, 1 thread", med, flo, 1, 0);
            }
            int pr = reps < 3 ? (int)reps : 3;
            if (have_peers)
                run_peer(peers, 0, type, k, pr, file, smallest, dists[d], rd);
            if (have_numpy)
                run_peer(numpy, 1, type, k, pr, file, smallest, dists[d], rd);
        }
    }
    if (file[0])
        unlink(file);
    free(data);
    cltopk_close(ctx);
    return errors ? EXIT_FAIL : EXIT_OK;
}
