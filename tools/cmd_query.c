/* cmd_query.c - `cltopk query`: the top k rows of a table of column files by
 * an expression, among the rows where a filter holds (cltopk_query_topk). */
#include "cli.h"
#include "gen.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define QUERY_MAX_COLS 64

static void query_help(void)
{
    printf("Usage: cltopk query -k K --col NAME:TYPE:FILE ... --order EXPR [--where COND]\n"
           "                    [--smallest] [--f64] [--device DEV] [--text|--binary] [--json]\n"
           "                    [--check] [--explain]\n"
           "The k rows with the largest (--smallest: smallest) score EXPR among the rows where\n"
           "COND holds (SQL: SELECT ... WHERE COND ORDER BY EXPR [DESC] LIMIT K), evaluated\n"
           "as the columns are read.  Each --col names a column: NAME ([A-Za-z_][A-Za-z0-9_]*),\n"
           "TYPE (f32 f64 i32 u32 i64 u64) and FILE (raw little-endian binary, or text with\n"
           "--text or a .txt/.csv name); every column holds the same number of rows.\n"
           "Expressions: + - * / and unary minus, parentheses, numbers (1, 0x1F, 1.5, 2e3),\n"
           "min max abs sqrt log exp floor ceil if(cond, a, b); conditions: < <= > >= == !=,\n"
           "and or not.  Integer comparisons are exact; arithmetic is float32 (--f64:\n"
           "float64), one rounding an operation (cltopk.h states every rule).\n"
           "Prints the rows (rank, row, score) best first, or with --json an object.\n"
           "  --check   only check the expressions against the columns (no files are read)\n"
           "  --explain also print the plan: the columns used, each program's operations,\n"
           "            where it runs and why (cltopk_query_explain)\n"
           "Example:\n"
           "  cltopk query -k 50 --col retweets:i32:rt.bin --col likes:i32:likes.bin \\\n"
           "      --col time:i64:time.bin --order 'retweets + 0.5 * likes' \\\n"
           "      --where 'time < 1500000000'\n");
}

int cmd_query(int argc, char **argv)
{
    const char *cmd = "query";
    enum {
        O_K = 1, O_COL, O_ORDER, O_WHERE, O_SMALLEST, O_F64, O_DEVICE, O_TEXT, O_BINARY,
        O_JSON, O_CHECK, O_HELP, O_EXPLAIN
    };
    const cli_option opts[] = {
        {O_K, 'k', "k", 1},           {O_COL, 0, "col", 1},         {O_ORDER, 0, "order", 1},
        {O_WHERE, 0, "where", 1},     {O_SMALLEST, 0, "smallest", 0}, {O_F64, 0, "f64", 0},
        {O_DEVICE, 0, "device", 1},   {O_TEXT, 0, "text", 0},       {O_BINARY, 0, "binary", 0},
        {O_JSON, 0, "json", 0},       {O_CHECK, 0, "check", 0},     {O_HELP, 'h', "help", 0},
        {O_EXPLAIN, 0, "explain", 0}, {0, 0, NULL, 0},
    };
    cli_parser p;
    const char *arg, *order = NULL, *where = NULL, *device = NULL;
    const char *specs[QUERY_MAX_COLS];
    int id, nspec = 0, smallest = 0, f64 = 0, format = FORMAT_AUTO, json = 0, check = 0;
    int explain = 0;
    uint64_t k = 0;
    int have_k = 0;
    cli_init(&p, cmd, argc, argv);
    while ((id = cli_next(&p, opts, &arg)) != -1) {
        switch (id) {
        case -2: return EXIT_USAGE;
        case 0: return usage_error(cmd, "unexpected operand '%s' (columns come with --col)", arg);
        case O_K:
            if (parse_count(arg, UINT32_MAX, &k) < 0)
                return usage_error(cmd, "bad k '%s' (a number like 50 or 1K)", arg);
            have_k = 1;
            break;
        case O_COL:
            if (nspec == QUERY_MAX_COLS)
                return usage_error(cmd, "more than %d columns", QUERY_MAX_COLS);
            specs[nspec++] = arg;
            break;
        case O_ORDER: order = arg; break;
        case O_WHERE: where = arg; break;
        case O_SMALLEST: smallest = 1; break;
        case O_F64: f64 = 1; break;
        case O_DEVICE: device = arg; break;
        case O_TEXT: format = FORMAT_TEXT; break;
        case O_BINARY: format = FORMAT_BINARY; break;
        case O_JSON: json = 1; break;
        case O_CHECK: check = 1; break;
        case O_EXPLAIN: explain = 1; break;
        case O_HELP: query_help(); return EXIT_OK;
        }
    }
    if (!order)
        return usage_error(cmd, "the ranking expression is missing: give --order EXPR");
    if (!have_k && !check)
        return usage_error(cmd, "k is missing: give -k K");
    /* NAME:TYPE:FILE */
    cltopk_column cols[QUERY_MAX_COLS];
    char names[QUERY_MAX_COLS][72];
    const char *paths[QUERY_MAX_COLS];
    for (int c = 0; c < nspec; c++) {
        const char *a = strchr(specs[c], ':'), *b = a ? strchr(a + 1, ':') : NULL;
        if (!a || !b || a == specs[c] || b[1] == 0)
            return usage_error(cmd, "bad --col '%s' (NAME:TYPE:FILE, e.g. likes:i32:likes.bin)",
                               specs[c]);
        size_t nl = (size_t)(a - specs[c]), tl = (size_t)(b - a - 1);
        if (nl >= sizeof names[c] || tl >= 8)
            return usage_error(cmd, "bad --col '%s' (a name of at most 64 characters)", specs[c]);
        memcpy(names[c], specs[c], nl);
        names[c][nl] = 0;
        char tname[8];
        memcpy(tname, a + 1, tl);
        tname[tl] = 0;
        if (parse_type(cmd, tname, &cols[c].type) != 0)
            return EXIT_USAGE;
        cols[c].name = names[c];
        cols[c].data = NULL;
        paths[c] = b + 1;
    }
    cltopk_context *ctx = NULL;
    int rc = open_device(cmd, device, &ctx);
    if (rc)
        return rc;
    char err[512];
    int st = cltopk_query_check(ctx, cols, (size_t)nspec, order, where, err, sizeof err);
    if (st != CLTOPK_OK) {
        rc = lib_fail(cmd, "cltopk_query_check", st, ctx);
        cltopk_close(ctx);
        return rc;
    }
    if (check) {
        printf("ok: the expressions are valid for these columns\n");
        cltopk_close(ctx);
        return EXIT_OK;
    }
    size_t n = 0;
    void *data[QUERY_MAX_COLS] = {NULL};
    for (int c = 0; c < nspec && !rc; c++) {
        int fmt = format;
        size_t nc = 0;
        rc = read_elements(cmd, paths[c], cols[c].type, "give the right TYPE in --col", &fmt,
                           &data[c], &nc);
        if (!rc && c > 0 && nc != n)
            rc = fail(cmd, "column '%s' holds %zu rows and '%s' %zu: every column needs the "
                      "same number", names[0], n, names[c], nc);
        n = nc;
        cols[c].data = data[c];
    }
    size_t w = f64 ? 8 : 4;
    void *scores = NULL;
    int64_t *idx = NULL;
    size_t count = 0;
    if (!rc) {
        scores = malloc(k ? k * w : 1);
        idx = malloc(k ? k * 8 : 1);
        st = !scores || !idx ? CLTOPK_ERR_NO_MEMORY
                             : cltopk_query_topk(ctx, cols, (size_t)nspec, n, order, where,
                                                 (size_t)k, smallest ? CLTOPK_SMALLEST : 0,
                                                 f64 ? CLTOPK_FLOAT64 : CLTOPK_FLOAT32, scores,
                                                 idx, &count);
        if (st != CLTOPK_OK)
            rc = lib_fail(cmd, "cltopk_query_topk", st, ctx);
    }
    char plan[4096] = "";
    if (!rc && explain &&
        cltopk_query_explain(ctx, cols, (size_t)nspec, n, order, where, (size_t)k,
                             smallest ? CLTOPK_SMALLEST : 0,
                             f64 ? CLTOPK_FLOAT64 : CLTOPK_FLOAT32, 0, plan, sizeof plan) !=
            CLTOPK_OK)
        plan[0] = 0;
    if (!rc) {
        char v[64];
        cltopk_dtype stype = f64 ? CLTOPK_FLOAT64 : CLTOPK_FLOAT32;
        if (json) {
            printf("{\"device\": ");
            json_string(stdout, cltopk_device_name(ctx));
            printf(", \"rows\": %zu, \"k\": %" PRIu64 ", \"order\": ", n, k);
            json_string(stdout, order);
            printf(", \"where\": ");
            if (where)
                json_string(stdout, where);
            else
                printf("null");
            printf(", \"smallest\": %s, \"score_type\": \"%s\", \"count\": %zu, ",
                   smallest ? "true" : "false", f64 ? "f64" : "f32", count);
            if (plan[0]) {
                printf("\"plan\": ");
                json_string(stdout, plan);
                printf(", ");
            }
            printf("\"results\": [");
            for (size_t i = 0; i < count; i++) {
                format_value_json(stype, gen_bits(scores, w, i), v, sizeof v);
                printf("%s{\"row\": %" PRId64 ", \"score\": %s}", i ? ", " : "", idx[i], v);
            }
            printf("]}\n");
        } else {
            printf("device     %s\n", cltopk_device_name(ctx));
            printf("%s", plan);
            printf("query      %zu rows; the %s %" PRIu64 " of %s%s%s\n", n,
                   smallest ? "smallest" : "largest", k, order, where ? " where " : "",
                   where ? where : "");
            printf("returned   %zu\n", count);
            printf("%8s %12s  %s\n", "rank", "row", "score");
            for (size_t i = 0; i < count; i++) {
                format_value(stype, gen_bits(scores, w, i), v, sizeof v);
                printf("%8zu %12" PRId64 "  %s\n", i, idx[i], v);
            }
        }
    }
    free(scores);
    free(idx);
    for (int c = 0; c < nspec; c++)
        free(data[c]);
    cltopk_close(ctx);
    return rc;
}

/* ------------------------------------------------ cltopk bench --query */

#include <time.h>

static double q_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void bench_query_help(void)
{
    printf("Usage: cltopk bench --query [-n ROWS] [-k K] [--reps R] [--device DEV]\n"
           "                           [--q1 SELS] [--paths PATHS]\n"
           "The paper's three queries (seed 000, section 5) on a tweet-like table of ROWS\n"
           "(default 2^24) rows: retweets and likes (i32, power-law), time (i64), lang (u32):\n"
           "  Q1  the top K retweets where time < T, at each selectivity of SELS (a comma\n"
           "      list in [0, 1]; default 0,0.1,...,1)\n"
           "  Q2  the top K of retweets + 0.5 * likes\n"
           "  Q3  the top K retweets where lang == 0 or lang == 1\n"
           "Each line: the fused query (cltopk_benchmark_query: host data on the cpu device;\n"
           "on an OpenCL device the cl_mem form on columns copied there once), once for\n"
           "each of PATHS (a comma list of CLTOPK_QUERY path values: auto, tile, sf,\n"
           "each with more CLTOPK_QUERY settings after '+' if any, e.g. sf+lazy=1;\n"
           "default auto), the read floor of the columns it references (measured in the\n"
           "same call), and the peer it replaces.  On an OpenCL device the peer is\n"
           "cltopk_benchmark_query_peer: a kernel writes the score column (rows the\n"
           "filter fails: the worst score), then cltopk_topk_buffer of it, device data\n"
           "throughout; on the cpu device, the score column computed and filtered by a\n"
           "compiled C loop, then cltopk_topk of it.  speedup: peer / fused (the first\n"
           "path).  Medians of R runs (default 5) after a warm-up.\n");
}

/* CLTOPK_QUERY for path p ("sf", or "sf+lazy=1+srt=4": settings after the
 * path word): the caller's value (base) with path=p added, its '+' as ',' */
static void bench_query_path(const char *base, const char *p)
{
    char v[512];
    snprintf(v, sizeof v, "%s%spath=%s", base ? base : "", base && *base ? "," : "", p);
    for (char *c = v; *c; c++)
        if (*c == '+')
            *c = ',';
    setenv("CLTOPK_QUERY", v, 1);
}

#define BENCH_QUERY_PATHS 6

int cmd_bench_query(int argc, char **argv)
{
    const char *cmd = "bench";
    enum { O_QUERY = 1, O_N, O_K, O_REPS, O_DEVICE, O_Q1, O_PATHS, O_HELP };
    const cli_option opts[] = {
        {O_QUERY, 0, "query", 0}, {O_N, 'n', "count", 1},   {O_K, 'k', "k", 1},
        {O_REPS, 0, "reps", 1},   {O_DEVICE, 0, "device", 1}, {O_Q1, 0, "q1", 1},
        {O_PATHS, 0, "paths", 1}, {O_HELP, 'h', "help", 0},   {0, 0, NULL, 0},
    };
    cli_parser p;
    const char *arg, *device = NULL;
    uint64_t n = (uint64_t)1 << 24, k = 50, reps = 5;
    double sels[16];
    int nsel = 11;
    for (int i = 0; i < nsel; i++)
        sels[i] = i / 10.0;
    char pathbuf[256] = "auto", *paths[BENCH_QUERY_PATHS] = {pathbuf};
    int npath = 1;
    int id;
    cli_init(&p, cmd, argc, argv);
    while ((id = cli_next(&p, opts, &arg)) != -1) {
        switch (id) {
        case -2: return EXIT_USAGE;
        case 0: return usage_error(cmd, "unexpected operand '%s'", arg);
        case O_QUERY: break;
        case O_N:
            if (parse_count(arg, (uint64_t)1 << 31, &n) < 0 || n == 0)
                return usage_error(cmd, "bad row count '%s'", arg);
            break;
        case O_K:
            if (parse_count(arg, 1u << 20, &k) < 0 || k == 0)
                return usage_error(cmd, "bad k '%s'", arg);
            break;
        case O_REPS:
            if (parse_count(arg, 64, &reps) < 0 || reps == 0)
                return usage_error(cmd, "bad --reps '%s' (1 to 64)", arg);
            break;
        case O_DEVICE: device = arg; break;
        case O_Q1: {
            nsel = 0;
            const char *c = arg;
            for (;;) {
                char *e;
                double v = strtod(c, &e);
                if (e == c || v < 0 || v > 1 || nsel == 16 || (*e && *e != ','))
                    return usage_error(cmd, "bad --q1 '%s': up to 16 selectivities in [0, 1], "
                                       "comma-separated (e.g. 0,0.1,0.5,1)", arg);
                sels[nsel++] = v;
                if (!*e)
                    break;
                c = e + 1;
            }
            break;
        }
        case O_PATHS: {
            if (strlen(arg) >= sizeof pathbuf)
                return usage_error(cmd, "bad --paths '%s'", arg);
            strcpy(pathbuf, arg);
            npath = 0;
            for (char *t = strtok(pathbuf, ","); t; t = strtok(NULL, ",")) {
                size_t w = strcspn(t, "+");
                int known = (w == 4 && (!strncmp(t, "auto", 4) || !strncmp(t, "tile", 4))) ||
                            (w == 2 && !strncmp(t, "sf", 2));
                if (!known || npath == BENCH_QUERY_PATHS)
                    return usage_error(cmd, "bad --paths '%s': up to %d of auto, tile, sf, "
                                       "comma-separated, each with CLTOPK_QUERY settings after "
                                       "'+' if any (sf+lazy=1+srt=4)", arg, BENCH_QUERY_PATHS);
                paths[npath++] = t;
            }
            if (!npath)
                return usage_error(cmd, "bad --paths '%s'", arg);
            break;
        }
        case O_HELP: bench_query_help(); return EXIT_OK;
        }
    }
    size_t rows = (size_t)n;
    int32_t *rt = malloc(rows * 4), *lk = malloc(rows * 4);
    int64_t *tm = malloc(rows * 8);
    uint32_t *lg = malloc(rows * 4);
    float *score = malloc(rows * 4);
    if (!rt || !lk || !tm || !lg || !score) {
        free(rt), free(lk), free(tm), free(lg), free(score);
        return fail(cmd, "out of memory for %zu rows", rows);
    }
    gen_fill(CLTOPK_INT32, "powerlaw", rows, 11, rt);
    gen_fill(CLTOPK_INT32, "powerlaw", rows, 12, lk);
    gen_fill(CLTOPK_INT64, "timestamps", rows, 13, tm);
    gen_fill(CLTOPK_UINT32, "codes", rows, 14, lg);
    cltopk_column cols[4] = {{"retweets", CLTOPK_INT32, rt}, {"likes", CLTOPK_INT32, lk},
                             {"time", CLTOPK_INT64, tm}, {"lang", CLTOPK_UINT32, lg}};
    cltopk_context *ctx = NULL;
    int rc = open_device(cmd, device, &ctx);
    if (rc) {
        free(rt), free(lk), free(tm), free(lg), free(score);
        return rc;
    }
    int is_cpu = !strcmp(cltopk_device_name(ctx), "cpu");
    char *base = getenv("CLTOPK_QUERY") ? strdup(getenv("CLTOPK_QUERY")) : NULL;
    printf("device  %s\n", cltopk_device_name(ctx));
    printf("table   %zu rows: retweets i32, likes i32, time i64, lang u32; k = %" PRIu64 "\n",
           rows, k);
    printf("peer    %s\n", is_cpu ? "the score column computed and filtered on the host, then "
                                    "cltopk_topk of it"
                                  : "a kernel writes the score column (failing rows: the worst "
                                    "score), then cltopk_topk_buffer of it, on the device");
    printf("%-34s", "query");
    for (int a = 0; a < npath; a++) {
        char h[300];
        snprintf(h, sizeof h, "%s ms", paths[a]);
        printf(" %10s %7s", h, "x floor");
    }
    printf(" %10s %10s %7s %8s\n", "floor ms", "peer ms", "x floor", "speedup");
    int nq = nsel + 2;
    for (int qi = 0; qi < nq && !rc; qi++) {
        char where[128] = "";
        const char *order = "retweets";
        int q1 = qi < nsel, q2 = qi == nsel;
        long long tlim = 0;
        if (q1) {
            tlim = 1493596800LL + (long long)(31.0 * 86400.0 * sels[qi] + 0.5);
            snprintf(where, sizeof where, "time < %lld", tlim);
        } else if (!q2) {
            snprintf(where, sizeof where, "lang == 0 or lang == 1");
        }
        if (q2)
            order = "retweets + 0.5 * likes";
        const char *wp = where[0] ? where : NULL;
        double tf[BENCH_QUERY_PATHS] = {0}, fl = 0;
        int st = CLTOPK_OK;
        for (int a = 0; a < npath && st == CLTOPK_OK; a++) {
            bench_query_path(base, paths[a]);
            st = cltopk_benchmark_query(ctx, cols, 4, rows, order, wp, (size_t)k, 0,
                                        CLTOPK_FLOAT32, (int)reps, &tf[a], a ? NULL : &fl);
        }
        if (base)
            setenv("CLTOPK_QUERY", base, 1);
        else
            unsetenv("CLTOPK_QUERY");
        if (st != CLTOPK_OK) {
            rc = lib_fail(cmd, "cltopk_benchmark_query", st, ctx);
            break;
        }
        double tp = 0;
        if (!is_cpu) {
            st = cltopk_benchmark_query_peer(ctx, cols, 4, rows, order, wp, (size_t)k, 0,
                                             CLTOPK_FLOAT32, (int)reps, &tp, NULL);
            if (st != CLTOPK_OK) {
                rc = lib_fail(cmd, "cltopk_benchmark_query_peer", st, ctx);
                break;
            }
        } else {
            /* the peer: materialise (timed on the host), then the top k */
            double tmat[64];
            size_t m = 0;
            for (uint64_t r = 0; r < reps; r++) {
                double p0 = q_now();
                m = 0;
                for (size_t i = 0; i < rows; i++) {
                    int pass = q1 ? tm[i] < tlim : q2 ? 1 : lg[i] == 0 || lg[i] == 1;
                    if (pass)
                        score[m++] = q2 ? (float)rt[i] + 0.5f * (float)lk[i] : (float)rt[i];
                }
                tmat[r] = q_now() - p0;
            }
            qsort(tmat, (size_t)reps, sizeof tmat[0], cmp_double);
            double tk = 0, tkf;
            if (m >= k && cltopk_benchmark(ctx, CLTOPK_FLOAT32, score, m, (size_t)k, 0,
                                           CLTOPK_ALGO_AUTO, (int)reps, &tk, &tkf) != CLTOPK_OK)
                tk = 0;
            tp = tk + tmat[reps / 2];
        }
        char label[96];
        if (q1)
            snprintf(label, sizeof label, "Q1 where time, selectivity %.2g", sels[qi]);
        else
            snprintf(label, sizeof label, "%s", q2 ? "Q2 retweets + 0.5 * likes"
                                                   : "Q3 lang == 0 or lang == 1");
        printf("%-34s", label);
        for (int a = 0; a < npath; a++)
            printf(" %10.3f %7.2f", tf[a] * 1e3, fl > 0 ? tf[a] / fl : 0.0);
        printf(" %10.3f %10.3f %7.2f %7.2fx\n", fl * 1e3, tp * 1e3, fl > 0 ? tp / fl : 0.0,
               tf[0] > 0 ? tp / tf[0] : 0.0);
        fflush(stdout);
    }
    cltopk_close(ctx);
    free(base);
    free(rt), free(lk), free(tm), free(lg), free(score);
    return rc;
}
