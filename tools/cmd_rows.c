/* cmd_rows.c - many rows at once from the command line: `cltopk topk --rows R
 * [--ld L]` and `cltopk topk --segments OFFSETS` (called by cmd_topk.c once
 * the keys are read), and `cltopk knn`. */
#include "cli.h"
#include "gen.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* print rows x k results: a table (row, rank, index, value), or JSON rows */
static void print_rows(cltopk_dtype type, size_t rows, size_t k, const void *keys,
                       const int64_t *index, int json)
{
    size_t bytes = cltopk_dtype_size(type);
    if (json) {
        printf("\"results\": [");
        for (size_t r = 0; r < rows; r++) {
            printf("%s\n  [", r ? "," : "");
            for (size_t i = 0; i < k; i++) {
                char v[64];
                format_value_json(type, gen_bits(keys, bytes, r * k + i), v, sizeof v);
                printf("%s{\"rank\": %zu, \"index\": %" PRId64 ", \"value\": %s}", i ? ", " : "",
                       i, index[r * k + i], v);
            }
            printf("]");
        }
        printf("%s]", rows ? "\n" : "");
        return;
    }
    printf("\n%6s %6s %12s  %s\n", "row", "rank", "index", "value");
    for (size_t r = 0; r < rows; r++)
        for (size_t i = 0; i < k; i++) {
            char v[64];
            format_value(type, gen_bits(keys, bytes, r * k + i), v, sizeof v);
            printf("%6zu %6zu %12" PRId64 "  %s\n", r, i, index[r * k + i], v);
        }
}

int topk_rows_file(const char *cmd, const char *path, cltopk_dtype type, const void *keys,
                   size_t n, uint64_t rows, uint64_t ld, const char *segfile, uint64_t k,
                   unsigned flags, cltopk_algo algo, const char *device, int json,
                   int explain)
{
    int64_t *offsets = NULL;
    size_t nrows = 0, cols = 0, noffs = 0;
    int rc;
    if (segfile) {
        int fmt = FORMAT_AUTO;
        void *o = NULL;
        if ((rc = read_elements(cmd, segfile, CLTOPK_INT64, "offsets are int64 (8 bytes each)",
                                &fmt, &o, &noffs)))
            return rc;
        offsets = o;
        if (noffs == 0) {
            free(offsets);
            return fail(cmd, "'%s' holds no offsets (nseg + 1 are needed)",
                        display_name(segfile));
        }
        nrows = noffs - 1;
        if (offsets[nrows] > (int64_t)n) {
            rc = fail(cmd, "the last offset %" PRId64 " is past the %zu elements of '%s'",
                      offsets[nrows], n, display_name(path));
            free(offsets);
            return rc;
        }
    } else {
        nrows = (size_t)rows; /* (at least 1: cmd_topk.c refuses --rows 0) */
        if (!ld) {
            if (n % nrows)
                return fail(cmd, "'%s' holds %zu elements, not a multiple of %zu rows (give "
                            "--ld for rows that are not packed)", display_name(path), n, nrows);
            ld = n / nrows;
        }
        /* an empty file of packed rows: rows of no column (ld 0) */
        if (ld && (nrows - 1) > (n / ld))
            return fail(cmd, "%zu rows %" PRIu64 " elements apart do not fit the %zu elements "
                        "of '%s' (the file holds (rows - 1) * ld + cols)", nrows, ld, n,
                        display_name(path));
        if (ld && n - (nrows - 1) * ld > ld)
            return fail(cmd, "'%s' holds %zu elements: %zu rows %" PRIu64 " elements apart "
                        "leave %zu for the last row, more than ld (the file holds (rows - 1) * "
                        "ld + cols, cols <= ld)", display_name(path), n, nrows, ld,
                        n - (nrows - 1) * (size_t)ld);
        cols = n - (nrows - 1) * (size_t)ld;
    }
    cltopk_context *ctx = NULL;
    if ((rc = open_device(cmd, device, &ctx))) {
        free(offsets);
        return rc;
    }
    size_t bytes = cltopk_dtype_size(type), count = nrows * (size_t)k;
    void *out_keys = malloc(count ? count * bytes : 1);
    int64_t *out_index = malloc(count ? count * 8 : 1);
    char plan[2048] = "";
    int st = explain ? cltopk_explain_rows(ctx, type, nrows, cols, offsets, (size_t)k, flags, 0,
                                           plan, sizeof plan)
                     : CLTOPK_OK;
    if (st != CLTOPK_OK) {
        rc = lib_fail(cmd, "cltopk_explain_rows", st, ctx);
        free(out_keys);
        free(out_index);
        free(offsets);
        cltopk_close(ctx);
        return rc;
    }
    st = !out_keys || !out_index ? CLTOPK_ERR_NO_MEMORY
             : segfile ? cltopk_topk_segments(ctx, type, keys, nrows, offsets, (size_t)k, flags,
                                              algo, out_keys, out_index)
                       : cltopk_topk_rows(ctx, type, keys, nrows, cols, (size_t)ld, (size_t)k,
                                          flags, algo, out_keys, out_index);
    rc = 0;
    const char *order = flags & CLTOPK_SMALLEST ? "smallest" : "largest";
    if (st != CLTOPK_OK) {
        rc = lib_fail(cmd, segfile ? "cltopk_topk_segments" : "cltopk_topk_rows", st, ctx);
    } else if (json) {
        printf("{\"device\": ");
        json_string(stdout, cltopk_device_name(ctx));
        printf(", \"algorithm\": ");
        json_string(stdout, cltopk_algo_name(algo));
        if (segfile)
            printf(", \"type\": \"%s\", \"segments\": %zu, \"k\": %" PRIu64 ", \"order\": \"%s\", ",
                   cltopk_dtype_name(type), nrows, k, order);
        else
            printf(", \"type\": \"%s\", \"rows\": %zu, \"cols\": %zu, \"ld\": %" PRIu64
                   ", \"k\": %" PRIu64 ", \"order\": \"%s\", ",
                   cltopk_dtype_name(type), nrows, cols, ld, k, order);
        if (plan[0]) {
            printf("\"plan\": ");
            json_string(stdout, plan);
            printf(", ");
        }
        print_rows(type, nrows, (size_t)k, out_keys, out_index, 1);
        printf("}\n");
    } else {
        printf("device     %s\n", cltopk_device_name(ctx));
        printf("%s", plan);
        printf("algorithm  %s\n", cltopk_algo_name(algo));
        if (segfile)
            printf("input      %zu segments of %s (offsets from '%s'), the %" PRIu64
                   " %s of each (index -1: past a short segment)\n",
                   nrows, cltopk_dtype_name(type), display_name(segfile), k, order);
        else
            printf("input      %zu rows x %zu of %s (ld %" PRIu64 "), the %" PRIu64
                   " %s of each\n", nrows, cols, cltopk_dtype_name(type), ld, k, order);
        print_rows(type, nrows, (size_t)k, out_keys, out_index, 0);
    }
    free(out_keys);
    free(out_index);
    free(offsets);
    cltopk_close(ctx);
    return rc;
}

static void knn_help(void)
{
    printf("Usage: cltopk knn -k K -d D [--metric l2|ip] [--device SPEC] [--json] [--explain]\n"
           "                  [--text|--binary] QUERIES POINTS\n"
           "\n"
           "For each query (a row of D float32 values in QUERIES), the K points of POINTS\n"
           "with the smallest squared L2 distance (--metric l2, the default) or the\n"
           "largest inner product (--metric ip), ties by smaller point index.  Exact: the\n"
           "distance is acc = fma(q[j] - p[j], q[j] - p[j], acc) from 0 in dimension\n"
           "order on every device (cltopk.h, cltopk_knn).\n"
           "\n"
           "  -k, --k K         neighbours per query (at most the number of points)\n"
           "  -d, --dim D       the dimension: both files hold a multiple of D values\n"
           "      --metric M    l2 (squared Euclidean) or ip (inner product)\n"
           "      --device SPEC auto (default), cpu, gpu, P:D from 'cltopk devices'\n"
           "      --json        one JSON object: the settings and a list per query\n"
           "      --explain     what runs (the CPU or the device kernel) and why\n"
           "      --text        read text files (one number a line); default: raw\n"
           "                    little-endian float32 (a .txt or .csv name reads text)\n"
           "      --binary      read raw binary whatever the name\n"
           "\n"
           "Example:\n"
           "  cltopk gen -t f32 -n 32K p.f32 && cltopk gen -t f32 -n 320 q.f32\n"
           "  cltopk knn -k 5 -d 32 q.f32 p.f32\n");
}

int cmd_knn(int argc, char **argv)
{
    const char *cmd = "knn";
    enum { O_K = 1, O_DIM, O_METRIC, O_DEVICE, O_JSON, O_TEXT, O_BINARY, O_HELP, O_EXPLAIN };
    const cli_option opts[] = {
        {O_K, 'k', "k", 1},       {O_DIM, 'd', "dim", 1},     {O_METRIC, 0, "metric", 1},
        {O_DEVICE, 0, "device", 1}, {O_JSON, 0, "json", 0},   {O_TEXT, 0, "text", 0},
        {O_BINARY, 0, "binary", 0}, {O_HELP, 'h', "help", 0}, {O_EXPLAIN, 0, "explain", 0},
        {0, 0, NULL, 0},
    };
    cli_parser p;
    const char *arg, *files[2] = {NULL, NULL}, *device = NULL;
    int id, json = 0, format = FORMAT_AUTO, nfiles = 0, explain = 0;
    uint64_t k = 0, d = 0;
    cltopk_metric metric = CLTOPK_L2SQ;
    cli_init(&p, cmd, argc, argv);
    while ((id = cli_next(&p, opts, &arg)) != -1) {
        switch (id) {
        case -2: return EXIT_USAGE;
        case 0:
            if (nfiles == 2)
                return usage_error(cmd, "more than two inputs (QUERIES and POINTS)");
            files[nfiles++] = arg;
            break;
        case O_K:
        case O_DIM:
            if (parse_count(arg, UINT32_MAX, id == O_K ? &k : &d) < 0)
                return usage_error(cmd, "bad %s '%s' (a number like 10 or 1K)",
                                   id == O_K ? "k" : "dimension", arg);
            break;
        case O_METRIC:
            if (!strcmp(arg, "l2"))
                metric = CLTOPK_L2SQ;
            else if (!strcmp(arg, "ip"))
                metric = CLTOPK_INNER_PRODUCT;
            else
                return usage_error(cmd, "unknown metric '%s' (l2 or ip)", arg);
            break;
        case O_DEVICE: device = arg; break;
        case O_JSON: json = 1; break;
        case O_TEXT: format = FORMAT_TEXT; break;
        case O_BINARY: format = FORMAT_BINARY; break;
        case O_HELP: knn_help(); return EXIT_OK;
        case O_EXPLAIN: explain = 1; break;
        }
    }
    if (nfiles != 2)
        return usage_error(cmd, "give two inputs: QUERIES and POINTS");
    if (d == 0)
        return usage_error(cmd, "the dimension is missing: give -d D (at least 1)");
    void *qv = NULL, *pv = NULL;
    size_t nqv = 0, npv = 0;
    int fq = format, fp = format;
    int rc = read_elements(cmd, files[0], CLTOPK_FLOAT32, "queries are float32", &fq, &qv, &nqv);
    if (!rc)
        rc = read_elements(cmd, files[1], CLTOPK_FLOAT32, "points are float32", &fp, &pv, &npv);
    if (!rc && (nqv % d || npv % d))
        rc = fail(cmd, "'%s' holds %zu values and '%s' %zu: both must be multiples of d = %"
                  PRIu64, display_name(files[0]), nqv, display_name(files[1]), npv, d);
    size_t nq = nqv / (size_t)d, np = npv / (size_t)d;
    if (!rc && k > np)
        rc = fail(cmd, "k = %" PRIu64 " is larger than the %zu points of '%s'", k, np,
                  display_name(files[1]));
    cltopk_context *ctx = NULL;
    if (!rc)
        rc = open_device(cmd, device, &ctx);
    float *dist = NULL;
    int64_t *idx = NULL;
    if (!rc) {
        size_t count = nq * (size_t)k;
        dist = malloc(count ? count * 4 : 1);
        idx = malloc(count ? count * 8 : 1);
        char plan[2048] = "";
        if (explain) {
            int est = cltopk_explain_knn(ctx, metric, nq, np, (size_t)d, (size_t)k, 0, plan,
                                         sizeof plan);
            if (est != CLTOPK_OK)
                plan[0] = 0, fprintf(stderr, "cltopk knn: cltopk_explain_knn: %s\n",
                                     cltopk_last_error(ctx));
        }
        int st = !dist || !idx ? CLTOPK_ERR_NO_MEMORY
                               : cltopk_knn(ctx, metric, qv, nq, pv, np, (size_t)d, (size_t)k,
                                            dist, idx);
        if (st != CLTOPK_OK) {
            rc = lib_fail(cmd, "cltopk_knn", st, ctx);
        } else if (json) {
            printf("{\"device\": ");
            json_string(stdout, cltopk_device_name(ctx));
            printf(", \"metric\": \"%s\", \"queries\": %zu, \"points\": %zu, \"d\": %" PRIu64
                   ", \"k\": %" PRIu64 ", ", metric == CLTOPK_L2SQ ? "l2" : "ip", nq, np, d, k);
            if (plan[0]) {
                printf("\"plan\": ");
                json_string(stdout, plan);
                printf(", ");
            }
            print_rows(CLTOPK_FLOAT32, nq, (size_t)k, dist, idx, 1);
            printf("}\n");
        } else {
            printf("device     %s\n", cltopk_device_name(ctx));
            printf("%s", plan);
            printf("input      %zu queries, %zu points of dimension %" PRIu64 ", the %" PRIu64
                   " %s\n", nq, np, d, k,
                   metric == CLTOPK_L2SQ ? "nearest (squared L2)" : "largest inner products");
            print_rows(CLTOPK_FLOAT32, nq, (size_t)k, dist, idx, 0);
        }
    }
    free(dist);
    free(idx);
    free(qv);
    free(pv);
    cltopk_close(ctx);
    return rc;
}

/* ------------------------------------------------ cltopk bench --rows / --knn */

static void bench_rows_help(void)
{
    printf("Usage: cltopk bench --rows R [-n COLS] [-k K] [-t TYPE] [--algo LIST] [--reps N]\n"
           "                    [--device SPEC] [--json]\n"
           "       cltopk bench --segments [-n TOTAL] [--max-len L] [-k K] [...]\n"
           "       cltopk bench --knn [-q NQ] [-p NP] [-d D] [-k K] [--metric l2|ip] [...]\n"
           "\n"
           "Time the many-rows calls (cltopk_benchmark_rows, cltopk_benchmark_knn) on\n"
           "uniform data (rows and segments: --dist): R rows of COLS (default 4096), or\n"
           "segments of power-law lengths from 1 to L (default 100000) holding TOTAL\n"
           "elements (default 2^26), or kNN of NQ queries (1000) among NP points (2^20)\n"
           "of dimension D (32).  On an OpenCL device the data is copied there once and\n"
           "the cl_mem forms are timed; the rows' read floor (one read of the keys) is\n"
           "shown beside them, and after '->' what AUTO ran (cltopk_explain_rows; \"ran\"\n"
           "in --json).\n"
           "\n"
           "  -k K            per row (default 32; kNN 10)\n"
           "  -a, --algo LIST auto, bits, cpu-heap, or a single-array device algorithm\n"
           "                  (sort, sample-filter, ...: cl_mem rows a row at a time)\n"
           "                  (default: auto)\n"
           "  -t, --type T    f32 (default), f64, i32, u32, i64, u64\n"
           "      --dist D    the keys' distribution, as 'cltopk gen' names them\n"
           "                  (default uniform; increasing puts every row's best last:\n"
           "                  the data is one sequence, so each row ascends too)\n"
           "      --smallest  the k smallest of each row (default: the largest)\n"
           "      --reps N    timed calls, 1 to 64 (default 10), after one warm-up\n"
           "      --seed S    data seed (default 1)\n");
}

/* segments of power-law lengths (P(len >= x) ~ 1/x) in [1, maxlen], total
 * elements about n: offsets written to *out (malloc'd), their count - 1 */
static size_t powerlaw_offsets(size_t n, size_t maxlen, uint64_t seed, int64_t **out)
{
    size_t cap = 1024, ns = 0;
    int64_t *o = malloc(cap * sizeof *o);
    if (!o)
        return 0;
    o[0] = 0;
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
    while ((size_t)o[ns] < n) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        double u = ((s >> 11) + 1.0) / 9007199254740993.0; /* (0, 1] */
        size_t len = (size_t)(1.0 / u);
        if (len > maxlen)
            len = maxlen;
        if (len > n - (size_t)o[ns])
            len = n - (size_t)o[ns];
        if (ns + 2 > cap) {
            int64_t *t = realloc(o, 2 * cap * sizeof *o);
            if (!t) {
                free(o);
                return 0;
            }
            o = t, cap *= 2;
        }
        o[ns + 1] = o[ns] + (int64_t)len;
        ns++;
    }
    *out = o;
    return ns;
}

int cmd_bench_rows(int argc, char **argv)
{
    const char *cmd = "bench";
    enum { O_ROWS = 1, O_SEGS, O_KNN, O_N, O_MAXLEN, O_K, O_TYPE, O_ALGO, O_REPS, O_SEED,
           O_DEVICE, O_JSON, O_NQ, O_NP, O_DIM, O_METRIC, O_DIST, O_SMALLEST, O_HELP };
    const cli_option opts[] = {
        {O_ROWS, 0, "rows", 1},     {O_SEGS, 0, "segments", 0}, {O_KNN, 0, "knn", 0},
        {O_N, 'n', "count", 1},     {O_MAXLEN, 0, "max-len", 1}, {O_K, 'k', "k", 1},
        {O_TYPE, 't', "type", 1},   {O_ALGO, 'a', "algo", 1},   {O_REPS, 0, "reps", 1},
        {O_SEED, 0, "seed", 1},     {O_DEVICE, 0, "device", 1}, {O_JSON, 0, "json", 0},
        {O_NQ, 'q', "queries", 1},  {O_NP, 'p', "points", 1},   {O_DIM, 'd', "dim", 1},
        {O_METRIC, 0, "metric", 1}, {O_DIST, 0, "dist", 1},     {O_SMALLEST, 0, "smallest", 0},
        {O_HELP, 'h', "help", 0},   {0, 0, NULL, 0},
    };
    cli_parser p;
    const char *arg, *device = NULL, *algos = "auto", *dist = NULL;
    int id, json = 0, segs = 0, knn = 0, have_n = 0, have_k = 0;
    unsigned flags = CLTOPK_LARGEST;
    uint64_t rows = 0, n = 4096, maxlen = 100000, k = 32, reps = 10, seed = 1;
    uint64_t nq = 1000, np = 1u << 20, d = 32;
    cltopk_dtype type = CLTOPK_FLOAT32;
    cltopk_metric metric = CLTOPK_L2SQ;
    cli_init(&p, cmd, argc, argv);
    while ((id = cli_next(&p, opts, &arg)) != -1) {
        uint64_t *dst = NULL;
        switch (id) {
        case -2: return EXIT_USAGE;
        case 0: return usage_error(cmd, "unexpected argument '%s'", arg);
        case O_ROWS:
            /* `cltopk bench --rows --help`, as bench --help says */
            if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
                bench_rows_help();
                return EXIT_OK;
            }
            dst = &rows;
            break;
        case O_SEGS: segs = 1; break;
        case O_KNN: knn = 1; break;
        case O_N: dst = &n, have_n = 1; break;
        case O_MAXLEN: dst = &maxlen; break;
        case O_K: dst = &k, have_k = 1; break;
        case O_REPS: dst = &reps; break;
        case O_SEED: dst = &seed; break;
        case O_NQ: dst = &nq; break;
        case O_NP: dst = &np; break;
        case O_DIM: dst = &d; break;
        case O_TYPE:
            if (parse_type(cmd, arg, &type))
                return EXIT_USAGE;
            break;
        case O_ALGO: algos = arg; break;
        case O_DEVICE: device = arg; break;
        case O_JSON: json = 1; break;
        case O_DIST: dist = arg; break;
        case O_SMALLEST: flags = CLTOPK_SMALLEST; break;
        case O_METRIC:
            if (strcmp(arg, "l2") && strcmp(arg, "ip"))
                return usage_error(cmd, "unknown metric '%s' (l2 or ip)", arg);
            metric = strcmp(arg, "l2") ? CLTOPK_INNER_PRODUCT : CLTOPK_L2SQ;
            break;
        case O_HELP: bench_rows_help(); return EXIT_OK;
        }
        if (dst && (parse_count(arg, UINT64_MAX, dst) < 0 || *dst == 0))
            return usage_error(cmd, "bad number '%s' (1 or more, like 4096, 4K or 2^12)", arg);
    }
    if ((rows > 0) + segs + knn != 1)
        return usage_error(cmd, "give one of --rows R, --segments and --knn");
    if (reps > 64)
        return usage_error(cmd, "--reps takes 1 to 64");
    if (knn && (dist || flags != CLTOPK_LARGEST))
        return usage_error(cmd, "--dist and --smallest are for --rows and --segments");
    if (segs && !have_n)
        n = (uint64_t)1 << 26;
    if (knn && !have_k)
        k = 10;
    size_t bytes = knn ? 4 : cltopk_dtype_size(type);
    size_t total = knn ? (size_t)(np * d) : segs ? (size_t)n : (size_t)(rows * n);
    int64_t *offs = NULL;
    size_t nseg = segs ? powerlaw_offsets((size_t)n, (size_t)maxlen, seed, &offs) : 0;
    void *data = malloc(total * bytes + 1);
    float *queries = knn ? malloc((size_t)(nq * d) * 4) : NULL;
    if (!data || (segs && !nseg) || (knn && !queries)) {
        free(data), free(offs), free(queries);
        return fail(cmd, "out of memory for %zu elements", total);
    }
    if (gen_fill(knn ? CLTOPK_FLOAT32 : type, dist ? dist : "uniform", total, seed, data) != 0) {
        free(data), free(offs), free(queries);
        return usage_error(cmd, "unknown distribution '%s' (see cltopk gen --help)", dist);
    }
    if (knn)
        gen_fill(CLTOPK_FLOAT32, "uniform", (size_t)(nq * d), seed + 1, queries);
    cltopk_context *ctx = NULL;
    int rc = open_device(cmd, device, &ctx);
    if (rc) {
        free(data), free(offs), free(queries);
        return rc;
    }
    char list[256];
    snprintf(list, sizeof list, "%s", knn ? "auto" : algos);
    const char *names[16];
    size_t na = 0;
    if (split_list(list, names, 16, &na) != 0)
        rc = usage_error(cmd, "bad algorithm list '%s'", algos);
    if (json && !rc)
        printf("{\"device\": \"%s\", \"results\": [", cltopk_device_name(ctx));
    else if (!rc)
        printf("device  %s\n", cltopk_device_name(ctx));
    for (size_t i = 0; i < na && !rc; i++) {
        cltopk_algo algo;
        if (parse_algo(cmd, names[i], &algo)) {
            rc = EXIT_USAGE;
            break;
        }
        double med = 0, flo = 0;
        int st = knn ? cltopk_benchmark_knn(ctx, metric, queries, (size_t)nq, data, (size_t)np,
                                            (size_t)d, (size_t)k, (int)reps, &med)
                     : cltopk_benchmark_rows(ctx, type, data, segs ? nseg : (size_t)rows,
                                             (size_t)n, offs, (size_t)k, flags, algo,
                                             (int)reps, &med, &flo);
        if (st != CLTOPK_OK) {
            rc = lib_fail(cmd, knn ? "cltopk_benchmark_knn" : "cltopk_benchmark_rows", st, ctx);
            break;
        }
        /* what AUTO ran: the last line of cltopk_explain_rows ("-> ..."),
         * for the cl_mem forms where the device is an OpenCL one */
        char ran[96] = "";
        if (!knn && algo == CLTOPK_ALGO_AUTO) {
            char ex[4096];
            size_t nr = segs ? nseg : (size_t)rows;
            int es = cltopk_explain_rows(ctx, type, nr, (size_t)n, offs, (size_t)k, flags, 1,
                                         ex, sizeof ex);
            if (es == CLTOPK_ERR_NO_OPENCL)
                es = cltopk_explain_rows(ctx, type, nr, (size_t)n, offs, (size_t)k, flags, 0,
                                         ex, sizeof ex);
            const char *arrow = es == CLTOPK_OK ? strstr(ex, "-> ") : NULL;
            if (arrow) {
                size_t len = strcspn(arrow + 3, "\n");
                snprintf(ran, sizeof ran, " %.*s", (int)(len < 80 ? len : 80), arrow + 3);
            }
        }
        char what[160];
        if (knn)
            snprintf(what, sizeof what, "knn %s nq=%" PRIu64 " np=%" PRIu64 " d=%" PRIu64,
                     metric == CLTOPK_L2SQ ? "l2" : "ip", nq, np, d);
        else if (segs)
            snprintf(what, sizeof what, "%zu segments (1..%" PRIu64 ", %" PRIu64 " elements) %s",
                     nseg, maxlen, n, cltopk_dtype_name(type));
        else
            snprintf(what, sizeof what, "%" PRIu64 " x %" PRIu64 " %s", rows, n,
                     cltopk_dtype_name(type));
        if (!knn && (dist || flags != CLTOPK_LARGEST)) {
            size_t wl = strlen(what);
            snprintf(what + wl, sizeof what - wl, "%s%s%s", dist ? " " : "", dist ? dist : "",
                     flags != CLTOPK_LARGEST ? " smallest" : "");
        }
        if (json)
            printf("%s\n  {\"what\": \"%s\", \"k\": %" PRIu64 ", \"algorithm\": \"%s\", "
                   "%s%s%s\"median_s\": %.9g, \"floor_s\": %.9g}", i ? "," : "", what, k,
                   cltopk_algo_name(algo), ran[0] ? "\"ran\": \"" : "", ran[0] ? ran + 1 : "",
                   ran[0] ? "\", " : "", med, knn ? 0.0 : flo);
        else if (knn)
            printf("%s k=%" PRIu64 "  %-8s %10.3f ms\n", what, k, cltopk_algo_name(algo),
                   med * 1e3);
        else
            printf("%s k=%" PRIu64 "  %-8s %10.3f ms   floor %8.3f ms  (%.2fx)%s%s\n", what, k,
                   cltopk_algo_name(algo), med * 1e3, flo * 1e3, flo > 0 ? med / flo : 0.0,
                   ran[0] ? "  ->" : "", ran);
    }
    if (json && !rc)
        printf("\n]}\n");
    cltopk_close(ctx);
    free(data), free(offs), free(queries);
    return rc;
}
