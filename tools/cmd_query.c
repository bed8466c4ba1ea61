/* cmd_query.c - `cltopk query`: the top k rows of a table of column files by
 * an expression, among the rows where a filter holds (cltopk_query_topk). */
#include "cli.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define QUERY_MAX_COLS 64

/* score i's bits */
static uint64_t score_bits(const void *scores, size_t i, int f64)
{
    if (f64) {
        uint64_t b;
        memcpy(&b, (const char *)scores + i * 8, 8);
        return b;
    }
    uint32_t b;
    memcpy(&b, (const char *)scores + i * 4, 4);
    return b;
}

static void query_help(void)
{
    printf("Usage: cltopk query -k K --col NAME:TYPE:FILE ... --order EXPR [--where COND]\n"
           "                    [--smallest] [--f64] [--device DEV] [--text|--binary] [--json]\n"
           "                    [--check]\n"
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
        O_JSON, O_CHECK, O_HELP
    };
    const cli_option opts[] = {
        {O_K, 'k', "k", 1},           {O_COL, 0, "col", 1},         {O_ORDER, 0, "order", 1},
        {O_WHERE, 0, "where", 1},     {O_SMALLEST, 0, "smallest", 0}, {O_F64, 0, "f64", 0},
        {O_DEVICE, 0, "device", 1},   {O_TEXT, 0, "text", 0},       {O_BINARY, 0, "binary", 0},
        {O_JSON, 0, "json", 0},       {O_CHECK, 0, "check", 0},     {O_HELP, 'h', "help", 0},
        {0, 0, NULL, 0},
    };
    cli_parser p;
    const char *arg, *order = NULL, *where = NULL, *device = NULL;
    const char *specs[QUERY_MAX_COLS];
    int id, nspec = 0, smallest = 0, f64 = 0, format = FORMAT_AUTO, json = 0, check = 0;
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
            printf(", \"smallest\": %s, \"score_type\": \"%s\", \"count\": %zu, \"results\": [",
                   smallest ? "true" : "false", f64 ? "f64" : "f32", count);
            for (size_t i = 0; i < count; i++) {
                format_value_json(stype, score_bits(scores, i, f64), v, sizeof v);
                printf("%s{\"row\": %" PRId64 ", \"score\": %s}", i ? ", " : "", idx[i], v);
            }
            printf("]}\n");
        } else {
            printf("device     %s\n", cltopk_device_name(ctx));
            printf("query      %zu rows; the %s %" PRIu64 " of %s%s%s\n", n,
                   smallest ? "smallest" : "largest", k, order, where ? " where " : "",
                   where ? where : "");
            printf("returned   %zu\n", count);
            printf("%8s %12s  %s\n", "rank", "row", "score");
            for (size_t i = 0; i < count; i++) {
                format_value(stype, score_bits(scores, i, f64), v, sizeof v);
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
