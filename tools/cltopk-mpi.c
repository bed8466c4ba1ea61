/* cltopk-mpi - top-k or the k-th element of one binary file across MPI ranks.
 *
 *   mpirun -np P cltopk-mpi topk -k 10 [-t f32] [--smallest] big.f32
 *   mpirun -np P cltopk-mpi select -r R [-t f32] [--smallest] big.f32
 *
 * Every rank reads its own slice of the file (raw little-endian elements, rank r
 * the r-th of P nearly equal consecutive slices) and the ranks answer together
 * through libcltopk_mpi; rank 0 prints.  --bench N times the call N times and
 * prints the best of the slowest rank's local top-k, of the whole call, of the
 * call on k elements a rank (the merge and the collectives), and of
 * bare MPI collectives (the constants of docs/SCALE.md's model).
 * Built on the public headers only. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "cltopk_mpi.h"

static int me, nranks;

static int usage(int select)
{
    if (me != 0)
        return EXIT_OK;
    printf("Usage: cltopk-mpi %s [-t TYPE] [--smallest] [--algo NAME] [--device D]\n"
           "                  [--bench N] FILE\n"
           "Run under mpirun: every rank reads its slice of FILE (raw little-endian\n"
           "elements) and the ranks find the %s of the whole file together; rank 0\n"
           "prints the result (positions are positions in FILE).\n\n"
           "  %s\n"
           "  -t, --type TYPE   f32 (default), f64, i32, u32, i64, u64\n"
           "      --smallest    ascending order (default: largest first)\n"
           "      --algo NAME   the local top-k's algorithm (default auto)%s\n"
           "      --device D    each rank's device, as for cltopk (default auto)\n"
           "      --bench N     run N times; print the best times (seconds) of the\n"
           "                    slowest rank's local top-k, the whole call, and of bare\n"
           "                    MPI collectives\n",
           select ? "select -r RANK" : "topk -k K", select ? "element of rank RANK" : "top K",
           select ? "-r, --rank RANK   0-based position in the order"
                  : "-k K              how many (k <= the file's elements)",
           select ? " (unused)" : "");
    return EXIT_OK;
}

/* "cltopk-mpi CMD: message" on rank 0 only */
static int say(const char *cmd, int status, const char *fmt, const char *arg)
{
    if (me == 0) {
        fprintf(stderr, "cltopk-mpi %s: ", cmd);
        fprintf(stderr, fmt, arg);
        fputc('\n', stderr);
    }
    return status;
}

/* Read this rank's slice of path; the status is the same on every rank. */
static int read_slice(const char *cmd, const char *path, int bytes, void **keys, size_t *local_n,
                      size_t *offset, size_t *total)
{
    int st = 0, fd = open(path, O_RDONLY);
    struct stat sb;
    char why[256] = "";
    *keys = NULL;
    if (fd < 0 || fstat(fd, &sb) != 0) {
        snprintf(why, sizeof why, "%s: %s", path, strerror(errno));
        st = 1;
    } else if (sb.st_size % bytes != 0) {
        snprintf(why, sizeof why, "%s: the size is not a multiple of the element size", path);
        st = 1;
    }
    if (st == 0) {
        size_t n = (size_t)sb.st_size / (size_t)bytes, q = n / (size_t)nranks,
               rem = n % (size_t)nranks, r = (size_t)me;
        *total = n;
        *offset = q * r + (r < rem ? r : rem);
        *local_n = q + (r < rem);
        *keys = malloc(*local_n ? *local_n * (size_t)bytes : 1);
        size_t want = *local_n * (size_t)bytes, got = 0;
        while (*keys && got < want) {
            ssize_t g = pread(fd, (char *)*keys + got, want - got,
                              (off_t)(*offset * (size_t)bytes + got));
            if (g <= 0)
                break;
            got += (size_t)g;
        }
        if (!*keys || got < want) {
            snprintf(why, sizeof why, "%s: reading %zu elements at %zu failed", path, *local_n,
                     *offset);
            st = 1;
        }
    }
    if (fd >= 0)
        close(fd);
    int all;
    MPI_Allreduce(&st, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (st)
        fprintf(stderr, "cltopk-mpi %s: rank %d: %s\n", cmd, me, why);
    if (all) {
        free(*keys);
        *keys = NULL;
    }
    return all ? EXIT_FAIL : EXIT_OK;
}

/* the best over reps of the slowest rank's time */
static double slowest(double t)
{
    double m;
    MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return m;
}

static void bench(cltopk_context *ctx, cltopk_dtype type, const void *keys, size_t local_n,
                  size_t k, unsigned flags, cltopk_algo algo, int bytes, int reps)
{
    void *ok = malloc(k * (size_t)bytes + 1);
    int64_t *oi = malloc(k * sizeof *oi + 1);
    size_t kk = k < local_n ? k : local_n;
    double best_local = 1e30, best_call = 1e30, best_small = 1e30, best_list = 1e30,
           best_merge = 1e30;
    uint64_t *list = calloc(3 * k + 1, sizeof *list), *sink = calloc(3 * k + 1, sizeof *sink);
    for (int r = 0; r < reps && ok && oi && list && sink; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t = MPI_Wtime();
        if (kk)
            cltopk_topk(ctx, type, keys, local_n, kk, flags, algo, ok, oi);
        t = slowest(MPI_Wtime() - t);
        best_local = t < best_local ? t : best_local;
        MPI_Barrier(MPI_COMM_WORLD);
        t = MPI_Wtime();
        cltopk_mpi_topk(ctx, MPI_COMM_WORLD, type, keys, local_n, k, flags, algo, 0, ok, oi);
        t = slowest(MPI_Wtime() - t);
        best_call = t < best_call ? t : best_call;
        /* the call on kk elements a rank: the local step is then a top-k of k
         * of k, and the time is the collectives' and the merge's */
        MPI_Barrier(MPI_COMM_WORLD);
        t = MPI_Wtime();
        cltopk_mpi_topk(ctx, MPI_COMM_WORLD, type, keys, kk, k, flags, algo, 0, ok, oi);
        t = slowest(MPI_Wtime() - t);
        best_merge = t < best_merge ? t : best_merge;
        /* bare collectives: an 8-byte allreduce (latency), a k-record reduce
         * with a built-in operation (transfer without the merge) */
        MPI_Barrier(MPI_COMM_WORLD);
        t = MPI_Wtime();
        MPI_Allreduce(list, sink, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
        t = slowest(MPI_Wtime() - t);
        best_small = t < best_small ? t : best_small;
        MPI_Barrier(MPI_COMM_WORLD);
        t = MPI_Wtime();
        MPI_Reduce(list, sink, (int)(3 * k), MPI_UINT64_T, MPI_MAX, 0, MPI_COMM_WORLD);
        t = slowest(MPI_Wtime() - t);
        best_list = t < best_list ? t : best_list;
    }
    if (me == 0)
        printf("bench      P=%d k=%zu reps=%d: local top-k %.6f s, whole call %.6f s, "
               "call - local %.6f s; the call on k elements a rank %.6f s; bare "
               "allreduce(8 B) %.6f s, reduce(%zu B) %.6f s\n",
               nranks, k, reps, best_local, best_call, best_call - best_local, best_merge,
               best_small, 24 * k, best_list);
    free(ok);
    free(oi);
    free(list);
    free(sink);
}

static int run(int argc, char **argv, int select)
{
    const char *cmd = select ? "select" : "topk";
    enum { O_K = 1, O_TYPE, O_SMALLEST, O_ALGO, O_DEVICE, O_BENCH, O_HELP };
    const cli_option opts[] = {
        {O_K, select ? 'r' : 'k', select ? "rank" : "k", 1},
        {O_TYPE, 't', "type", 1},
        {O_SMALLEST, 0, "smallest", 0},
        {O_ALGO, 'a', "algo", 1},
        {O_DEVICE, 0, "device", 1},
        {O_BENCH, 0, "bench", 1},
        {O_HELP, 'h', "help", 0},
        {0, 0, NULL, 0}};
    uint64_t k = 0, reps = 0;
    int have_k = 0;
    cltopk_dtype type = CLTOPK_FLOAT32;
    unsigned flags = CLTOPK_LARGEST;
    cltopk_algo algo = CLTOPK_ALGO_AUTO;
    const char *device = NULL, *path = NULL, *arg;
    cli_parser p;
    cli_init(&p, cmd, argc, argv);
    int id;
    /* every rank parses the same command line: the outcome is the same everywhere */
    while ((id = cli_next(&p, opts, &arg)) != -1) {
        switch (id) {
        case -2: return EXIT_USAGE;
        case 0:
            if (path)
                return say(cmd, EXIT_USAGE, "one FILE only (%s is extra)", arg);
            path = arg;
            break;
        case O_K:
            if (parse_count(arg, UINT64_MAX, &k) != 0)
                return say(cmd, EXIT_USAGE, "bad count '%s'", arg);
            have_k = 1;
            break;
        case O_TYPE:
            if (parse_type(cmd, arg, &type) != 0)
                return EXIT_USAGE;
            break;
        case O_SMALLEST: flags = CLTOPK_SMALLEST; break;
        case O_ALGO:
            if (parse_algo(cmd, arg, &algo) != 0)
                return EXIT_USAGE;
            break;
        case O_DEVICE: device = arg; break;
        case O_BENCH:
            if (parse_count(arg, 1000000, &reps) != 0 || reps == 0)
                return say(cmd, EXIT_USAGE, "bad --bench count '%s'", arg);
            break;
        case O_HELP: return usage(select);
        }
    }
    if (!have_k)
        return say(cmd, EXIT_USAGE, "%s is required", select ? "-r RANK" : "-k K");
    if (!path)
        return say(cmd, EXIT_USAGE, "a FILE is required%s", "");
    int bytes = (type == CLTOPK_FLOAT64 || type == CLTOPK_INT64 || type == CLTOPK_UINT64) ? 8 : 4;

    cltopk_context *ctx = NULL;
    int st = open_device(cmd, device, &ctx), all;
    MPI_Allreduce(&st, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (all) {
        cltopk_close(ctx);
        return EXIT_FAIL;
    }
    void *keys;
    size_t local_n = 0, offset = 0, total = 0;
    if (read_slice(cmd, path, bytes, &keys, &local_n, &offset, &total) != EXIT_OK) {
        cltopk_close(ctx);
        return EXIT_FAIL;
    }
    size_t count = select ? 1 : (size_t)k;
    if (!select && k > total)
        count = 0; /* the call fails on every rank with K_RANGE */
    void *out_keys = malloc(count * (size_t)bytes + 1);
    int64_t *out_index = malloc(count * sizeof *out_index + 1);
    if (!out_keys || !out_index)
        st = CLTOPK_ERR_NO_MEMORY;
    else if (select)
        st = cltopk_mpi_select(ctx, MPI_COMM_WORLD, type, keys, local_n, k, flags, out_keys,
                               out_index);
    else
        st = cltopk_mpi_topk(ctx, MPI_COMM_WORLD, type, keys, local_n, (size_t)k, flags, algo, 0,
                             out_keys, out_index);
    int rc = EXIT_OK;
    if (st != CLTOPK_OK) {
        if (me == 0)
            rc = lib_fail(cmd, select ? "cltopk_mpi_select" : "cltopk_mpi_topk", st, ctx);
        rc = EXIT_FAIL;
    } else if (me == 0) {
        printf("ranks      %d (device of rank 0: %s)\n", nranks, cltopk_device_name(ctx));
        printf("input      %zu x %s, the %s of the order, %s first\n", total,
               cltopk_dtype_name(type), select ? "element at one rank" : "first k",
               flags ? "smallest" : "largest");
        printf("\n%6s %12s  %s\n", "rank", "index", "value");
        for (size_t i = 0; i < count; i++) {
            uint64_t bits = 0;
            memcpy(&bits, (char *)out_keys + i * (size_t)bytes, (size_t)bytes);
            char v[80];
            format_value(type, bits, v, sizeof v);
            printf("%6" PRIu64 " %12" PRId64 "  %s\n", select ? k : (uint64_t)i, out_index[i], v);
        }
    }
    if (rc == EXIT_OK && reps > 0 && !select)
        bench(ctx, type, keys, local_n, (size_t)k, flags, algo, bytes, (int)reps);
    free(out_keys);
    free(out_index);
    free(keys);
    cltopk_close(ctx);
    return rc;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    int rc;
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        if (me == 0)
            printf("Usage: cltopk-mpi topk|select ... FILE (under mpirun)\n"
                   "  cltopk-mpi topk --help, cltopk-mpi select --help for the options\n");
        rc = argc < 2 ? EXIT_USAGE : EXIT_OK;
    } else if (!strcmp(argv[1], "topk")) {
        rc = run(argc - 1, argv + 1, 0);
    } else if (!strcmp(argv[1], "select")) {
        rc = run(argc - 1, argv + 1, 1);
    } else {
        rc = say(argv[1], EXIT_USAGE, "unknown command (use topk or select)%s", "");
    }
    MPI_Finalize();
    return rc;
}
