/* cmd_topk.c - `cltopk topk` and `cltopk select`: run the library on a file. */
#include "cli.h"
#include "gen.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static void topk_help(int select)
{
    if (select)
        printf("Usage: cltopk select -r RANK [-t TYPE] [--smallest] [--algo NAME]\n"
               "                     [--device SPEC] [--json] [--explain] [--text|--binary]\n"
               "                     FILE|-\n"
               "\n"
               "Print the element at position RANK (from 0) of the order that topk uses: with\n"
               "-r 0 the largest, with -r 9 the 10th largest (--smallest: the 10th smallest),\n"
               "with its position in the file.  Any RANK below the number of elements works.\n"
               "\n"
               "Options:\n"
               "  -r, --rank RANK     the rank, from 0 (1000, 64K, 2^20 are accepted)\n");
    else
        printf("Usage: cltopk topk -k K [-t TYPE] [--smallest] [--algo NAME]\n"
               "                   [--device SPEC] [--json] [--explain] [--text|--binary] FILE|-\n"
               "\n"
               "Print the K largest (or smallest) elements of FILE (- reads standard input)\n"
               "with their positions, best first.  Equal values are listed by position;\n"
               "NaN counts as larger than +inf, -0 equals +0.  Every device and algorithm\n"
               "gives the same answer, bit for bit.\n"
               "\n"
               "Options:\n"
               "  -k, --k K           how many (0 <= K <= number of elements; 1K, 2^10 work)\n");
    printf("  -t, --type TYPE     element type: f32 (default), f64, i32, u32, i64, u64\n"
           "      --smallest      ascending order (default: largest first)\n"
           "      --largest       descending order (the default)\n"
           "  -a, --algo NAME     auto (default); bitonic, sbp-radix, sbp-tree,\n"
           "                      radix-select, sample-filter, sort, bits (OpenCL\n"
           "                      device); cpu-heap, cpu-radix, cpu-bitonic (any\n"
           "                      device)%s\n"
           "      --device SPEC   auto (default), cpu, gpu, P:D from 'cltopk devices', or\n"
           "                      part of one device's name\n"
           "      --explain       print the planner's choice for this call and every\n"
           "                      algorithm's predicted time (JSON: \"plan\"); for select,\n"
           "                      the selection's plan (auto picks one of sample-filter,\n"
           "                      radix-select, cpu-radix: those select without a top-k)\n"
           "      --json          one JSON object: device, algorithm (as asked), ran (what\n"
           "                      ran: auto's choice), type, format, n, k (rank), order,\n"
           "                      results\n"
           "                      [{rank, index, value[, bits]}]; floats that\n"
           "                      are NaN or infinite are strings (\"nan\", \"-inf\"), and\n"
           "                      'bits' gives the exact bits of every float in hex\n"
           "      --text          FILE holds one number per line (the default for a\n"
           "                      name ending in .txt or .csv)\n"
           "      --binary        FILE holds raw little-endian elements of TYPE (the\n"
           "                      default for any other name and for -)\n"
           "%s"
           "  -h, --help          this text\n"
           "\n"
           "The format is never guessed from the contents: binary unless --text is given\n"
           "or the name ends in .txt or .csv; the report (JSON: \"format\") says which.\n"
           "Text: blank lines and lines starting with # are skipped; integers are decimal\n"
           "or 0x-hex and must fit TYPE; floats as C reads them, plus nan, -nan,\n"
           "nan(0xPAYLOAD), inf, -inf.  A line that does not parse is an error.\n"
           "\n"
           "Examples:\n"
           "  cltopk gen -t f32 -n 1M data.f32 && cltopk %s data.f32\n"
           "  printf '3\\n1\\n4\\n1\\n5\\n' | cltopk %s -t i32 --text -\n",
           select ? "; another than sample-filter,\n"
                    "                      radix-select or cpu-radix answers through its\n"
                    "                      top-(RANK + 1)"
                  : "; with --rows or --segments: auto,\n"
                    "                      cpu-heap or bits",
           select ? ""
                  : "      --packed        FILE is a packed int32 column of 'cltopk pack' (with\n"
                    "                      -t i32 or no -t, and no --text or --binary)\n"
                    "      --rows R        FILE holds R rows: the top K of each (K <= a row's\n"
                    "                      length); rows of n / R elements, or with --ld\n"
                    "      --ld L          rows start L elements apart: FILE holds\n"
                    "                      (R - 1) * L + cols elements\n"
                    "      --segments OFFS the segments keys[OFFS[s] .. OFFS[s+1]) of FILE,\n"
                    "                      OFFS a file of int64 offsets (binary, or text by\n"
                    "                      its name or --text); short segments are padded\n"
                    "                      with index -1 (cltopk_topk_segments); --explain\n"
                    "                      works with --rows and --segments\n",
           select ? "select -r 99" : "topk -k 10", select ? "select -r 1" : "topk -k 2");
}

static void print_row_json(cltopk_dtype type, size_t rank, int64_t index, uint64_t bits,
                           int first)
{
    char v[80];
    format_value_json(type, bits, v, sizeof v);
    printf("%s\n  {\"rank\": %zu, \"index\": %" PRId64 ", \"value\": %s", first ? "" : ",", rank,
           index, v);
    if (type == CLTOPK_FLOAT32)
        printf(", \"bits\": \"0x%08" PRIx32 "\"", (uint32_t)bits);
    else if (type == CLTOPK_FLOAT64)
        printf(", \"bits\": \"0x%016" PRIx64 "\"", bits);
    printf("}");
}

static int run(int argc, char **argv, int select)
{
    const char *cmd = select ? "select" : "topk";
    enum { O_K = 1, O_TYPE, O_SMALLEST, O_LARGEST, O_ALGO, O_DEVICE, O_JSON, O_TEXT, O_BINARY,
           O_HELP, O_PACKED, O_EXPLAIN, O_ROWS, O_LD, O_SEGMENTS };
    const cli_option opts[] = {
        {O_K, select ? 'r' : 'k', select ? "rank" : "k", 1},
        {O_TYPE, 't', "type", 1},
        {O_SMALLEST, 0, "smallest", 0},
        {O_LARGEST, 0, "largest", 0},
        {O_ALGO, 'a', "algo", 1},
        {O_DEVICE, 0, "device", 1},
        {O_JSON, 0, "json", 0},
        {O_TEXT, 0, "text", 0},
        {O_BINARY, 0, "binary", 0},
        {O_HELP, 'h', "help", 0},
        {O_EXPLAIN, 0, "explain", 0},
        /* bit-packed columns, topk only: for select an entry with no name, which
         * never matches (an id of 0 would end the table here) */
        {O_PACKED, 0, select ? NULL : "packed", 0},
        /* many rows at once, topk only */
        {O_ROWS, 0, select ? NULL : "rows", 1},
        {O_LD, 0, select ? NULL : "ld", 1},
        {O_SEGMENTS, 0, select ? NULL : "segments", 1},
        {0, 0, NULL, 0},
    };
    cli_parser p;
    const char *arg, *path = NULL, *device = NULL, *segfile = NULL;
    uint64_t rows = 0, ld = 0;
    int have_rows = 0;
    int id, json = 0, format = FORMAT_AUTO, have_k = 0, packed = 0, explain = 0, have_type = 0;
    unsigned flags = CLTOPK_LARGEST;
    cltopk_dtype type = CLTOPK_FLOAT32;
    cltopk_algo algo = CLTOPK_ALGO_AUTO;
    uint64_t k = 0;
    cli_init(&p, cmd, argc, argv);
    while ((id = cli_next(&p, opts, &arg)) != -1) {
        switch (id) {
        case -2: return EXIT_USAGE;
        case 0:
            if (path)
                return usage_error(cmd, "more than one input ('%s' and '%s')", path, arg);
            path = arg;
            break;
        case O_K:
            if (parse_count(arg, UINT64_MAX, &k) < 0)
                return usage_error(cmd, "bad %s '%s' (a number like 10, 1K or 2^10)",
                                   select ? "rank" : "k", arg);
            have_k = 1;
            break;
        case O_TYPE:
            if (parse_type(cmd, arg, &type))
                return EXIT_USAGE;
            have_type = 1;
            break;
        case O_SMALLEST: flags = CLTOPK_SMALLEST; break;
        case O_LARGEST: flags = CLTOPK_LARGEST; break;
        case O_ALGO:
            if (parse_algo(cmd, arg, &algo))
                return EXIT_USAGE;
            break;
        case O_DEVICE: device = arg; break;
        case O_JSON: json = 1; break;
        case O_TEXT: format = FORMAT_TEXT; break;
        case O_BINARY: format = FORMAT_BINARY; break;
        case O_HELP: topk_help(select); return EXIT_OK;
        case O_PACKED: packed = 1; break;
        case O_EXPLAIN: explain = 1; break;
        case O_ROWS:
        case O_LD:
            if (parse_count(arg, UINT64_MAX, id == O_ROWS ? &rows : &ld) < 0 ||
                (id == O_LD && ld == 0))
                return usage_error(cmd, "bad %s '%s' (a number like 64 or 1K)",
                                   id == O_ROWS ? "--rows" : "--ld", arg);
            if (id == O_ROWS && rows == 0)
                return usage_error(cmd, "--rows needs at least 1 row");
            have_rows |= id == O_ROWS;
            break;
        case O_SEGMENTS: segfile = arg; break;
        }
    }
    if (!have_k)
        return usage_error(cmd, select ? "the rank is missing: give -r RANK"
                                       : "k is missing: give -k K");
    if (!path)
        return usage_error(cmd, "the input is missing: give a file name, or - for stdin");
    int many = have_rows || segfile != NULL;
    if (ld && !have_rows)
        return usage_error(cmd, "--ld goes with --rows");
    if (have_rows && segfile)
        return usage_error(cmd, "give --rows or --segments, not both");
    if (many && packed)
        return usage_error(cmd, "--rows and --segments do not take --packed");
    if (packed) { /* a packed-column file of `cltopk pack` (int32) */
        if (have_type && type != CLTOPK_INT32)
            return usage_error(cmd, "--packed columns hold i32 values: drop -t %s",
                               cltopk_dtype_name(type));
        if (format != FORMAT_AUTO)
            return usage_error(cmd, "--packed reads a packed-column file of 'cltopk pack', "
                               "neither text nor raw binary: drop %s",
                               format == FORMAT_TEXT ? "--text" : "--binary");
        return topk_packed_file(path, k, flags, algo, device, json, explain);
    }


    void *keys = NULL;
    size_t n = 0, bytes = cltopk_dtype_size(type);
    int asked = format;
    int rc = read_elements(cmd, path, type, "give the right -t, or --text for a text file", &format, &keys, &n);
    if (rc)
        return rc;
    if (many) {
        rc = topk_rows_file(cmd, path, type, keys, n, rows, ld, segfile, k, flags, algo, device,
                            json, explain);
        free(keys);
        return rc;
    }
    if (select ? k >= n : k > n) {
        free(keys);
        if (select)
            return fail(cmd, "rank %" PRIu64 " is out of range: '%s' holds %zu element%s, so "
                        "the rank must be below %zu", k, display_name(path), n,
                        n == 1 ? "" : "s", n);
        return fail(cmd, "k = %" PRIu64 " is larger than the %zu element%s of '%s'", k, n,
                    n == 1 ? "" : "s", display_name(path));
    }

    cltopk_context *ctx = NULL;
    if ((rc = open_device(cmd, device, &ctx))) {
        free(keys);
        return rc;
    }
    size_t kk = select ? 1 : (size_t)k;
    void *out_keys = malloc(kk ? kk * bytes : 1);
    int64_t *out_index = malloc(kk ? kk * sizeof *out_index : 1);
    if (!out_keys || !out_index) {
        rc = fail(cmd, "out of memory for %zu results", kk);
        goto out;
    }
    /* what auto runs, for the report: for select, the planner's selection plan
     * (CLTOPK_PLAN_SELECT, planned as rank + 1), which is what cltopk_select runs
     * with auto (a record that selects: cltopk.h, cltopk_select) */
    const char *ran = cltopk_algo_name(algo);
    size_t pk = select ? (size_t)k + 1 : (size_t)k;
    unsigned pflags = flags | (select ? CLTOPK_PLAN_SELECT : 0u);
    if (algo == CLTOPK_ALGO_AUTO) {
        cltopk_algo chosen;
        int st = cltopk_plan(ctx, type, n, pk, pflags, &chosen);
        if (st != CLTOPK_OK) {
            rc = lib_fail(cmd, "cltopk_plan", st, ctx);
            goto out;
        }
        ran = cltopk_algo_name(chosen);
    }
    /* the planner's choice and every model's prediction (for select, of the
     * selection) */
    char plan[4096] = "";
    if (explain && n > 0 && (select || k > 0)) {
        int est = cltopk_explain(ctx, type, n, pk, pflags, 0, plan, sizeof plan);
        if (est != CLTOPK_OK) {
            rc = lib_fail(cmd, "cltopk_explain", est, ctx);
            goto out;
        }
    }
    int st = select ? cltopk_select(ctx, type, keys, n, (size_t)k, flags, algo, out_keys,
                                    out_index)
                    : cltopk_topk(ctx, type, keys, n, (size_t)k, flags, algo, out_keys,
                                  out_index);
    if (st != CLTOPK_OK) {
        rc = lib_fail(cmd, select ? "cltopk_select" : "cltopk_topk", st, ctx);
        goto out;
    }
    const char *order = flags & CLTOPK_SMALLEST ? "smallest" : "largest";
    if (json) {
        printf("{\"device\": ");
        json_string(stdout, cltopk_device_name(ctx));
        printf(", \"algorithm\": ");
        json_string(stdout, cltopk_algo_name(algo));
        printf(", \"ran\": ");
        json_string(stdout, ran);
        printf(", \"type\": \"%s\", \"format\": \"%s\", \"n\": %zu, \"%s\": %" PRIu64
               ", \"order\": \"%s\", \"results\": [",
               cltopk_dtype_name(type), format == FORMAT_TEXT ? "text" : "binary", n,
               select ? "rank" : "k", k, order);
        for (size_t i = 0; i < kk; i++)
            print_row_json(type, select ? (size_t)k : i, out_index[i],
                           gen_bits(out_keys, bytes, i), i == 0);
        printf("%s]", kk ? "\n" : "");
        if (plan[0]) {
            printf(", \"plan\": ");
            json_string(stdout, plan);
        }
        printf("}\n");
    } else {
        printf("device     %s\n", cltopk_device_name(ctx));
        if (plan[0])
            printf("%s", plan);
        if (algo == CLTOPK_ALGO_AUTO)
            printf("algorithm  auto -> %s\n", ran);
        else
            printf("algorithm  %s\n", ran);
        const char *fmt = format == FORMAT_TEXT ? "text" : "binary";
        const char *why = format_reason(path, asked);
        if (select)
            printf("input      %zu x %s (%s: %s), rank %" PRIu64 " of the %s first\n", n,
                   cltopk_dtype_name(type), fmt, why, k, order);
        else
            printf("input      %zu x %s (%s: %s), the %" PRIu64 " %s\n", n,
                   cltopk_dtype_name(type), fmt, why, k, order);
        printf("\n%6s %12s  %s\n", "rank", "index", "value");
        for (size_t i = 0; i < kk; i++) {
            char v[64];
            format_value(type, gen_bits(out_keys, bytes, i), v, sizeof v);
            printf("%6zu %12" PRId64 "  %s\n", select ? (size_t)k : i, out_index[i], v);
        }
    }
out:
    free(out_keys);
    free(out_index);
    free(keys);
    cltopk_close(ctx);
    return rc;
}

int cmd_topk(int argc, char **argv)
{
    return run(argc, argv, 0);
}

int cmd_select(int argc, char **argv)
{
    return run(argc, argv, 1);
}
