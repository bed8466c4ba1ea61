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
                   unsigned flags, cltopk_algo algo, const char *device, int json)
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
        if (rows == 0)
            return usage_error(cmd, "--rows needs at least 1 row");
        nrows = (size_t)rows;
        if (!ld) {
            if (n % nrows)
                return fail(cmd, "'%s' holds %zu elements, not a multiple of %zu rows (give "
                            "--ld for rows that are not packed)", display_name(path), n, nrows);
            ld = n / nrows;
        }
        if ((nrows - 1) > (n / ld) || n - (nrows - 1) * ld > ld)
            return fail(cmd, "%zu rows %" PRIu64 " elements apart do not fit the %zu elements "
                        "of '%s' (the file holds (rows - 1) * ld + cols)", nrows, ld, n,
                        display_name(path));
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
    int st = !out_keys || !out_index ? CLTOPK_ERR_NO_MEMORY
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
        print_rows(type, nrows, (size_t)k, out_keys, out_index, 1);
        printf("}\n");
    } else {
        printf("device     %s\n", cltopk_device_name(ctx));
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
    printf("Usage: cltopk knn -k K -d D [--metric l2|ip] [--device SPEC] [--json]\n"
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
    enum { O_K = 1, O_DIM, O_METRIC, O_DEVICE, O_JSON, O_TEXT, O_BINARY, O_HELP };
    const cli_option opts[] = {
        {O_K, 'k', "k", 1},       {O_DIM, 'd', "dim", 1},     {O_METRIC, 0, "metric", 1},
        {O_DEVICE, 0, "device", 1}, {O_JSON, 0, "json", 0},   {O_TEXT, 0, "text", 0},
        {O_BINARY, 0, "binary", 0}, {O_HELP, 'h', "help", 0}, {0, 0, NULL, 0},
    };
    cli_parser p;
    const char *arg, *files[2] = {NULL, NULL}, *device = NULL;
    int id, json = 0, format = FORMAT_AUTO, nfiles = 0;
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
            print_rows(CLTOPK_FLOAT32, nq, (size_t)k, dist, idx, 1);
            printf("}\n");
        } else {
            printf("device     %s\n", cltopk_device_name(ctx));
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
