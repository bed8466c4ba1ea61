/* cmd_index.c - `cltopk index build|query|bench`: the early-stopping top-k
 * index (cltopk_index_*, issue 15). */
#include "cli.h"
#include "gen.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void index_help(void)
{
    printf("Usage: cltopk index build --dims D [options] TUPLES OUT.cix\n"
           "       cltopk index query -k K --attrs LIST [--weights LIST] [--full] INDEX.cix\n"
           "       cltopk index bench [--tuples N] [--dims D] [options]\n"
           "\n"
           "The early-stopping top-k index (seed 002; cltopk.h states every rule): tuples\n"
           "of D float32 attributes in partitions of ordered blocks, each block with the\n"
           "per-attribute maximum of the blocks after it; a query with weights >= 0 reads a\n"
           "partition block by block and stops once its k-th score is above the next\n"
           "blocks' bound.  score = acc, acc = fma(w[j], attribute attrs[j], acc) from 0.\n"
           "\n"
           "build: read TUPLES (D float32 columns one after the other, as `cltopk gen\n"
           "  --tuples` writes them: N = file size / (4 D)), build, save to OUT.cix.\n"
           "  -D, --dims D             attributes a tuple (required)\n"
           "  --partitioning P         random (default) or angle\n"
           "  --partitions P           at most this many partitions (default: chosen)\n"
           "  --block B                tuples a block (default: chosen)\n"
           "  -s, --seed S             the random partitioning's seed (default 0)\n"
           "query: load INDEX.cix and print the k best tuples (rank, tuple, score) and\n"
           "  what the query read.\n"
           "  -k K                     results\n"
           "  --attrs LIST             attribute numbers, e.g. 0,1,2 (in this order);\n"
           "                           none (or '') for m = 0: every score 0, the answer\n"
           "                           tuples 0 .. k-1\n"
           "  --weights LIST           one weight >= 0 an attribute (default all 1.0;\n"
           "                           none (or '') with --attrs none)\n"
           "  --full                   the full evaluation instead (cltopk_index_full_topk)\n"
           "  --json                   one JSON object\n"
           "bench: generate N tuples (default 2^20) of D attributes (default 8) for each\n"
           "  distribution, build an index for each partitioning, and time, for each m\n"
           "  and k, the query of the paper's Table 1 Q0 (weight 1.0 on attributes 0 ..\n"
           "  m-1) against the full evaluation of the same index in the same run: median\n"
           "  of R runs after a warm-up, the speedup, tuples evaluated, blocks read, and\n"
           "  whether the query switched to full evaluation.  The index's answer is\n"
           "  compared with the full evaluation's and with the expression top-k's (not\n"
           "  with --no-query); a difference fails the command.  Also timed, once per\n"
           "  data set, m and k: the expression top-k (cltopk_benchmark_query, order_by\n"
           "  a0 + ... + a(m-1) over the same columns: the same scores, since fma(1, a,\n"
           "  acc) rounds as a + acc) and its read of those columns (`read ms`); `x best`\n"
           "  is the speedup over the faster full evaluation, `x full` over the index's\n"
           "  own.\n"
           "  --tuples N, -D/--dims D  the table (N as 1M, 2^24, ...)\n"
           "  --dist LIST              correlated,independent,anticorrelated (default all)\n"
           "  --partitioning LIST      random,angle (default both)\n"
           "  -m LIST                  attributes a query (default 2,4,6,8; at most D)\n"
           "  -k LIST                  k (default 4,16,64,256)\n"
           "  --partitions P, --block B  the indexes' shape (default: chosen)\n"
           "  -r, --reps R             runs a measurement (default 5)\n"
           "  --no-query               skip the expression top-k\n"
           "  -s, --seed S             the data's seed (default 1)\n"
           "  --json                   one JSON object a line\n"
           "Every subcommand takes --device DEV (default auto; cpu: OpenMP, no OpenCL).\n"
           "\n"
           "Examples:\n"
           "  cltopk gen --tuples 1M --dims 8 --dist correlated corr.f32\n"
           "  cltopk index build --dims 8 --partitioning angle corr.f32 corr.cix\n"
           "  cltopk index query -k 10 --attrs 0,1,2 --weights 1,0.5,2 corr.cix\n"
           "  cltopk index bench --device cpu --tuples 2^24\n");
}

static double ix_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* a count option --name from lo to hi: 0, or EXIT_USAGE after saying why */
static int count_opt(const char *cmd, const char *name, const char *arg, uint64_t lo, uint64_t hi,
                     uint64_t *out)
{
    if (parse_count(arg, hi, out) < 0 || *out < lo)
        return usage_error(cmd, "bad %s '%s' (%llu to %llu)", name, arg, (unsigned long long)lo,
                           (unsigned long long)hi);
    return 0;
}

/* the options build and bench share: the data's and the index's shape */
enum { OS_DIMS = 1, OS_PARTS, OS_BLOCK, OS_SEED, OS_DEVICE, OS_HELP, OS_OWN };
typedef struct {
    uint64_t d, parts, block, seed;
    const char *device;
} shape_opts;

/* handle option id if it is one of those: 0 (handled), EXIT_OK (--help,
 * printed), EXIT_USAGE (a bad value, said), or -1 (not one of them) */
static int shape_opt(const char *cmd, int id, const char *arg, shape_opts *o)
{
    switch (id) {
    case OS_DIMS: return count_opt(cmd, "--dims", arg, 1, 64, &o->d);
    case OS_PARTS: return count_opt(cmd, "--partitions", arg, 0, (uint64_t)1 << 32, &o->parts);
    case OS_BLOCK: return count_opt(cmd, "--block", arg, 0, (uint64_t)1 << 20, &o->block);
    case OS_SEED:
        return parse_u64(arg, &o->seed) < 0 ? usage_error(cmd, "bad seed '%s'", arg) : 0;
    case OS_DEVICE: o->device = arg; return 0;
    case OS_HELP: index_help(); return EXIT_OK;
    default: return -1;
    }
}
#define SHAPE_OPTIONS                                                                          \
    {OS_DIMS, 'D', "dims", 1}, {OS_PARTS, 0, "partitions", 1}, {OS_BLOCK, 0, "block", 1},        \
        {OS_SEED, 's', "seed", 1}, {OS_DEVICE, 0, "device", 1}, {OS_HELP, 'h', "help", 0}

static int parse_partitioning(const char *s, cltopk_partitioning *p)
{
    if (!strcmp(s, "random"))
        *p = CLTOPK_PARTITION_RANDOM;
    else if (!strcmp(s, "angle"))
        *p = CLTOPK_PARTITION_ANGLE;
    else
        return -1;
    return 0;
}

static const char *partitioning_name(cltopk_partitioning p)
{
    return p == CLTOPK_PARTITION_ANGLE ? "angle" : "random";
}

/* ------------------------------------------------------------------ build */

static int index_build(int argc, char **argv)
{
    const char *cmd = "index build";
    enum { O_PART = OS_OWN };
    static const cli_option opts[] = {
        SHAPE_OPTIONS, {O_PART, 0, "partitioning", 1}, {0, 0, NULL, 0},
    };
    cli_parser p;
    const char *arg, *in = NULL, *outp = NULL;
    shape_opts so = {0, 0, 0, 0, NULL};
    cltopk_partitioning part = CLTOPK_PARTITION_RANDOM;
    int id, r;
    cli_init(&p, cmd, argc, argv);
    while ((id = cli_next(&p, opts, &arg)) != -1) {
        if (id == -2)
            return EXIT_USAGE;
        if (id == 0) {
            if (!in)
                in = arg;
            else if (!outp)
                outp = arg;
            else
                return usage_error(cmd, "too many operands ('%s')", arg);
        } else if (id == O_PART) {
            if (parse_partitioning(arg, &part))
                return usage_error(cmd, "bad --partitioning '%s' (random or angle)", arg);
        } else if ((r = shape_opt(cmd, id, arg, &so)) != 0) {
            return r;
        }
    }
    const uint64_t d = so.d;
    const char *device = so.device;
    if (!d)
        return usage_error(cmd, "the attributes a tuple are missing: give --dims D");
    if (!in || !outp)
        return usage_error(cmd, "give the tuples file and the index file to write");
    char *buf;
    size_t len;
    int rc = read_whole_file(cmd, in, &buf, &len);
    if (rc)
        return rc;
    if (len == 0 || len % (4 * d)) {
        free(buf);
        return fail(cmd, "%s has %zu bytes: not a whole number of %llu float32 columns",
                    display_name(in), len, (unsigned long long)d);
    }
    const size_t n = len / 4 / d;
    float *cols = malloc(len);
    if (!cols) {
        free(buf);
        return fail(cmd, "out of memory");
    }
    memcpy(cols, buf, len);
    free(buf);
    to_little_endian(cols, 4, n * d);
    const float *attrs[64];
    for (size_t j = 0; j < d; j++)
        attrs[j] = cols + j * n;
    cltopk_context *ctx;
    if ((rc = open_device(cmd, device, &ctx))) {
        free(cols);
        return rc;
    }
    cltopk_index_options o = {part, (size_t)so.parts, (size_t)so.block, so.seed};
    cltopk_index *idx;
    double t0 = ix_now();
    int st = cltopk_index_build(ctx, attrs, (size_t)d, n, &o, &idx);
    double t1 = ix_now();
    free(cols);
    if (st != CLTOPK_OK) {
        rc = lib_fail(cmd, "cltopk_index_build", st, ctx);
        cltopk_close(ctx);
        return rc;
    }
    st = cltopk_index_save(idx, outp);
    if (st != CLTOPK_OK)
        rc = lib_fail(cmd, "cltopk_index_save", st, ctx);
    else {
        cltopk_index_info info;
        cltopk_index_info_get(idx, &info);
        printf("%s: %zu tuples x %zu attributes, %s partitioning: %zu partitions, %zu blocks "
               "of %zu; built in %.3f s on %s\n", outp, info.n, info.d,
               partitioning_name(info.partitioning), info.partitions, info.blocks, info.block,
               t1 - t0, cltopk_device_name(ctx));
    }
    cltopk_index_free(idx);
    cltopk_close(ctx);
    return rc;
}

/* ------------------------------------------------------------------ query */

static int parse_float_list(const char *s, float *out, size_t cap, size_t *len)
{
    char *copy = strdup(s);
    const char *items[64];
    size_t n;
    if (!copy || split_list(copy, items, cap < 64 ? cap : 64, &n) < 0) {
        free(copy);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        char *end;
        out[i] = strtof(items[i], &end);
        if (*end) {
            free(copy);
            return -1;
        }
    }
    free(copy);
    *len = n;
    return 0;
}

static void print_stats(const cltopk_index_stats *st)
{
    printf("# tuples evaluated %" PRIu64 " of %" PRIu64 " (%.3g%%), blocks read %" PRIu64
           ", partitions stopped %zu of %zu, %s%s\n",
           st->tuples_evaluated, st->tuples,
           st->tuples ? 100.0 * (double)st->tuples_evaluated / (double)st->tuples : 0.0,
           st->blocks_read, st->partitions_stopped, st->partitions,
           st->full_evaluation ? "full evaluation" : "index", st->on_device ? ", on the device" : "");
}

static int index_query(int argc, char **argv)
{
    const char *cmd = "index query";
    enum { O_K = 1, O_ATTRS, O_WEIGHTS, O_FULL, O_JSON, O_DEVICE, O_HELP };
    static const cli_option opts[] = {
        {O_K, 'k', "k", 1},       {O_ATTRS, 0, "attrs", 1}, {O_WEIGHTS, 0, "weights", 1},
        {O_FULL, 0, "full", 0},   {O_JSON, 0, "json", 0},   {O_DEVICE, 0, "device", 1},
        {O_HELP, 'h', "help", 0}, {0, 0, NULL, 0},
    };
    cli_parser p;
    const char *arg, *path = NULL, *device = NULL;
    uint64_t k = 0, al[64];
    float w[64];
    unsigned attr[64];
    size_t m = 0, nw = 0;
    int id, full = 0, json = 0, have_k = 0, have_attrs = 0, have_w = 0;
    cli_init(&p, cmd, argc, argv);
    while ((id = cli_next(&p, opts, &arg)) != -1) {
        switch (id) {
        case -2: return EXIT_USAGE;
        case 0:
            if (path)
                return usage_error(cmd, "more than one index ('%s' and '%s')", path, arg);
            path = arg;
            break;
        case O_K:
            if (count_opt(cmd, "-k", arg, 0, 0xFFFFFFFEull, &k))
                return EXIT_USAGE;
            have_k = 1;
            break;
        case O_ATTRS: {
            have_attrs = 1;
            if (!strcmp(arg, "none") || !*arg) { /* m = 0: every score 0 */
                m = 0;
                break;
            }
            char *copy = strdup(arg);
            int bad = !copy || parse_count_list(copy, 1u << 20, al, 64, &m) < 0;
            free(copy);
            if (bad)
                return usage_error(cmd, "bad --attrs '%s' (attribute numbers, e.g. 0,1,2)", arg);
            for (size_t j = 0; j < m; j++)
                attr[j] = (unsigned)al[j];
            break;
        }
        case O_WEIGHTS:
            have_w = 1;
            if (!strcmp(arg, "none") || !*arg)
                nw = 0;
            else if (parse_float_list(arg, w, 64, &nw) < 0)
                return usage_error(cmd, "bad --weights '%s' (numbers, e.g. 1,0.5,2)", arg);
            break;
        case O_FULL: full = 1; break;
        case O_JSON: json = 1; break;
        case O_DEVICE: device = arg; break;
        case O_HELP: index_help(); return EXIT_OK;
        }
    }
    if (!path)
        return usage_error(cmd, "the index file is missing");
    if (!have_k)
        return usage_error(cmd, "k is missing: give -k K");
    if (!have_attrs)
        return usage_error(cmd, "the attributes are missing: give --attrs LIST (none: m = 0)");
    if (have_w && nw != m)
        return usage_error(cmd, "%zu weights for %zu attributes", nw, m);
    for (size_t j = nw; j < m; j++)
        w[j] = 1.0f;
    cltopk_context *ctx;
    int rc = open_device(cmd, device, &ctx);
    if (rc)
        return rc;
    cltopk_index *idx;
    int st = cltopk_index_load(ctx, path, &idx);
    if (st != CLTOPK_OK) {
        rc = lib_fail(cmd, "cltopk_index_load", st, ctx);
        cltopk_close(ctx);
        return rc;
    }
    float *sc = malloc((k ? k : 1) * sizeof *sc);
    int64_t *ix = malloc((k ? k : 1) * sizeof *ix);
    cltopk_index_stats stats = {0};
    double t0 = ix_now();
    st = !sc || !ix ? CLTOPK_ERR_NO_MEMORY
         : full     ? cltopk_index_full_topk(idx, attr, w, m, (size_t)k, sc, ix, &stats)
                    : cltopk_index_topk(idx, attr, w, m, (size_t)k, sc, ix, &stats);
    double t1 = ix_now();
    if (st != CLTOPK_OK)
        rc = lib_fail(cmd, full ? "cltopk_index_full_topk" : "cltopk_index_topk", st, ctx);
    else if (json) {
        printf("{\"k\": %llu, \"seconds\": %.9g, \"tuples_evaluated\": %" PRIu64
               ", \"blocks_read\": %" PRIu64 ", \"partitions_stopped\": %zu, \"partitions\": %zu, "
               "\"full_evaluation\": %d, \"on_device\": %d, \"results\": [",
               (unsigned long long)k, t1 - t0, stats.tuples_evaluated, stats.blocks_read,
               stats.partitions_stopped, stats.partitions, stats.full_evaluation,
               stats.on_device);
        for (uint64_t r = 0; r < k; r++) {
            char b[64];
            uint32_t bits;
            memcpy(&bits, &sc[r], 4);
            format_value_json(CLTOPK_FLOAT32, bits, b, sizeof b);
            printf("%s{\"tuple\": %lld, \"score\": %s}", r ? ", " : "", (long long)ix[r], b);
        }
        printf("]}\n");
    } else {
        for (uint64_t r = 0; r < k; r++) {
            char b[64];
            uint32_t bits;
            memcpy(&bits, &sc[r], 4);
            format_value(CLTOPK_FLOAT32, bits, b, sizeof b);
            printf("%llu\t%lld\t%s\n", (unsigned long long)r, (long long)ix[r], b);
        }
        print_stats(&stats);
        printf("# %.3f ms on %s\n", 1e3 * (t1 - t0), cltopk_device_name(ctx));
    }
    free(sc);
    free(ix);
    cltopk_index_free(idx);
    cltopk_close(ctx);
    return rc;
}

/* ------------------------------------------------------------------ bench */

static int dbl_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* median seconds of reps calls (after one warm-up) of the index query or the
 * full evaluation; the last call's outputs and stats kept */
static int bench_one(cltopk_index *idx, int full, const unsigned *attr, const float *w, size_t m,
                     size_t k, int reps, float *sc, int64_t *ix, cltopk_index_stats *st,
                     double *median)
{
    double t[64];
    for (int r = -1; r < reps; r++) {
        double t0 = ix_now();
        int s = full ? cltopk_index_full_topk(idx, attr, w, m, k, sc, ix, st)
                     : cltopk_index_topk(idx, attr, w, m, k, sc, ix, st);
        if (s != CLTOPK_OK)
            return s;
        if (r >= 0)
            t[r] = ix_now() - t0;
    }
    qsort(t, (size_t)reps, sizeof t[0], dbl_cmp);
    *median = t[reps / 2];
    return CLTOPK_OK;
}

/* Q0 on attributes 0 .. m-1 as an expression: "a0 + a1 + ..." ("0" for m =
 * 0); fma(1, a, acc) rounds as a + acc, so its scores are the index's */
static void q0_expr(char *buf, size_t len, size_t m)
{
    snprintf(buf, len, "0");
    for (size_t j = 0, at = 0; j < m && at < len; j++)
        at += (size_t)snprintf(buf + at, len - at, "%sa%zu", j ? " + " : "", j);
}

static int index_bench(int argc, char **argv)
{
    const char *cmd = "index bench";
    enum { O_TUPLES = OS_OWN, O_DIST, O_PART, O_M, O_K, O_REPS, O_JSON, O_NOQ };
    static const cli_option opts[] = {
        SHAPE_OPTIONS,            {O_TUPLES, 0, "tuples", 1}, {O_DIST, 0, "dist", 1},
        {O_PART, 0, "partitioning", 1}, {O_M, 'm', NULL, 1}, {O_K, 'k', "k", 1},
        {O_REPS, 'r', "reps", 1}, {O_JSON, 0, "json", 0},   {O_NOQ, 0, "no-query", 0},
        {0, 0, NULL, 0},
    };
    cli_parser p;
    const char *arg;
    uint64_t n = (uint64_t)1 << 20, reps = 5;
    shape_opts so = {8, 0, 0, 1, NULL};
    uint64_t ms[64] = {2, 4, 6, 8}, ks[64] = {4, 16, 64, 256};
    size_t nm = 4, nk = 4, nd = 3, np = 2;
    const char *dists[3] = {"correlated", "independent", "anticorrelated"};
    cltopk_partitioning parts[2] = {CLTOPK_PARTITION_RANDOM, CLTOPK_PARTITION_ANGLE};
    int id, json = 0, noquery = 0, r;
    char dbuf[256], pbuf[64];
    cli_init(&p, cmd, argc, argv);
    while ((id = cli_next(&p, opts, &arg)) != -1) {
        if (id >= OS_DIMS && id < OS_OWN) {
            if ((r = shape_opt(cmd, id, arg, &so)) != 0)
                return r;
            continue;
        }
        switch (id) {
        case -2: return EXIT_USAGE;
        case 0: return usage_error(cmd, "no operands (got '%s')", arg);
        case O_TUPLES:
            if (count_opt(cmd, "--tuples", arg, 1, 0xFFFFFFFEull, &n))
                return EXIT_USAGE;
            break;
        case O_DIST: {
            const char *items[3];
            snprintf(dbuf, sizeof dbuf, "%s", arg);
            if (split_list(dbuf, items, 3, &nd) < 0)
                return usage_error(cmd, "bad --dist '%s'", arg);
            for (size_t i = 0; i < nd; i++) {
                if (gen_dist_index(gen_tuple_dists, items[i]) < 0)
                    return usage_error(cmd, "unknown distribution '%s' (correlated, "
                                       "independent, anticorrelated)", items[i]);
                dists[i] = items[i];
            }
            break;
        }
        case O_PART: {
            const char *items[2];
            snprintf(pbuf, sizeof pbuf, "%s", arg);
            if (split_list(pbuf, items, 2, &np) < 0)
                return usage_error(cmd, "bad --partitioning '%s'", arg);
            for (size_t i = 0; i < np; i++)
                if (parse_partitioning(items[i], &parts[i]))
                    return usage_error(cmd, "bad partitioning '%s' (random, angle)", items[i]);
            break;
        }
        case O_M:
            if (parse_count_list(arg, 64, ms, 64, &nm) < 0)
                return usage_error(cmd, "bad -m '%s'", arg);
            break;
        case O_K:
            if (parse_count_list(arg, (uint64_t)1 << 32, ks, 64, &nk) < 0)
                return usage_error(cmd, "bad -k '%s'", arg);
            break;
        case O_REPS:
            if (count_opt(cmd, "--reps", arg, 1, 63, &reps))
                return EXIT_USAGE;
            break;
        case O_JSON: json = 1; break;
        case O_NOQ: noquery = 1; break;
        }
    }
    const uint64_t d = so.d, seed = so.seed, nparts = so.parts, block = so.block;
    const char *device = so.device;
    for (size_t i = 0; i < nm; i++)
        if (ms[i] > d)
            return usage_error(cmd, "m = %llu is more than the %llu attributes",
                               (unsigned long long)ms[i], (unsigned long long)d);
    uint64_t kmax = 0;
    for (size_t i = 0; i < nk; i++)
        kmax = ks[i] > kmax ? ks[i] : kmax;
    if (kmax > n)
        return usage_error(cmd, "k = %llu is more than the tuples", (unsigned long long)kmax);
    cltopk_context *ctx;
    int rc = open_device(cmd, device, &ctx);
    if (rc)
        return rc;
    float *cols = malloc((size_t)(n * d) * sizeof *cols);
    float *s1 = malloc(kmax * 4), *s2 = malloc(kmax * 4);
    int64_t *i1 = malloc(kmax * 8), *i2 = malloc(kmax * 8);
    if (!cols || !s1 || !s2 || !i1 || !i2) {
        free(cols);
        free(s1);
        free(s2);
        free(i1);
        free(i2);
        cltopk_close(ctx);
        return fail(cmd, "out of memory for %llu x %llu tuples", (unsigned long long)n,
                    (unsigned long long)d);
    }
    if (!json)
        printf("# %s, %llu tuples x %llu attributes, Q0 (weights 1.0) on attributes 0..m-1, "
               "median of %llu\n", cltopk_device_name(ctx), (unsigned long long)n,
               (unsigned long long)d, (unsigned long long)reps);
    unsigned attr[64];
    float w[64];
    for (size_t j = 0; j < 64; j++) {
        attr[j] = (unsigned)j;
        w[j] = 1.0f;
    }
    /* the expression top-k's times (and reads) of a data set, per (m, k) */
    double qt[64][64], qf[64][64];
    char names[64][24]; /* "a" and a size_t: no truncation for any j */
    cltopk_column qcols[64];
    for (size_t j = 0; j < d; j++) {
        snprintf(names[j], sizeof names[j], "a%zu", j);
        qcols[j].name = names[j];
        qcols[j].type = CLTOPK_FLOAT32;
        qcols[j].data = cols + j * n;
    }
    for (size_t di = 0; di < nd && !rc; di++) {
        gen_tuples(dists[di], (size_t)n, (size_t)d, seed, cols);
        const float *attrs[64];
        for (size_t j = 0; j < d; j++)
            attrs[j] = cols + j * n;
        for (size_t mi = 0; mi < nm && !rc; mi++)
            for (size_t ki = 0; ki < nk && !rc; ki++) {
                char expr[64 * 5];
                q0_expr(expr, sizeof expr, (size_t)ms[mi]);
                qt[mi][ki] = qf[mi][ki] = 0;
                int st = noquery ? CLTOPK_OK
                                 : cltopk_benchmark_query(ctx, qcols, (size_t)d, (size_t)n, expr,
                                                          NULL, (size_t)ks[ki], 0, CLTOPK_FLOAT32,
                                                          (int)reps, &qt[mi][ki], &qf[mi][ki]);
                if (st != CLTOPK_OK)
                    rc = lib_fail(cmd, "cltopk_benchmark_query", st, ctx);
            }
        for (size_t pi = 0; pi < np && !rc; pi++) {
            cltopk_index_options o = {parts[pi], (size_t)nparts, (size_t)block, seed};
            cltopk_index *idx;
            double t0 = ix_now();
            int st = cltopk_index_build(ctx, attrs, (size_t)d, (size_t)n, &o, &idx);
            double tb = ix_now() - t0;
            if (st != CLTOPK_OK) {
                rc = lib_fail(cmd, "cltopk_index_build", st, ctx);
                break;
            }
            cltopk_index_info info;
            cltopk_index_info_get(idx, &info);
            if (!json) {
                printf("\n%s, %s partitioning: %zu partitions, %zu blocks of %zu, built in "
                       "%.2f s\n", dists[di], partitioning_name(parts[pi]), info.partitions,
                       info.blocks, info.block, tb);
                printf("%3s %5s %10s %10s %10s %10s %8s %8s %12s %7s %9s %6s\n", "m", "k",
                       "index ms", "full ms", "query ms", "read ms", "x best", "x full",
                       "evaluated", "%", "blocks", "path");
            }
            for (size_t mi = 0; mi < nm && !rc; mi++)
                for (size_t ki = 0; ki < nk && !rc; ki++) {
                    size_t m = (size_t)ms[mi], k = (size_t)ks[ki];
                    cltopk_index_stats sa, sb;
                    double ta, tf;
                    st = bench_one(idx, 0, attr, w, m, k, (int)reps, s1, i1, &sa, &ta);
                    if (st == CLTOPK_OK)
                        st = bench_one(idx, 1, attr, w, m, k, (int)reps, s2, i2, &sb, &tf);
                    if (st != CLTOPK_OK) {
                        rc = lib_fail(cmd, "the query", st, ctx);
                        break;
                    }
                    if (memcmp(s1, s2, k * 4) || memcmp(i1, i2, k * 8)) {
                        rc = fail(cmd, "%s, %s, m = %zu, k = %zu: the index and the full "
                                  "evaluation disagree", dists[di], partitioning_name(parts[pi]),
                                  m, k);
                        break;
                    }
                    double pct = 100.0 * (double)sa.tuples_evaluated / (double)n;
                    const double tq = qt[mi][ki], tr = qf[mi][ki];
                    const double best = tq > 0 && tq < tf ? tq : tf;
                    if (json)
                        printf("{\"device\": \"%s\", \"dist\": \"%s\", \"partitioning\": \"%s\", "
                               "\"n\": %llu, \"d\": %llu, \"partitions\": %zu, \"block\": %zu, "
                               "\"build_s\": %.6g, \"m\": %zu, \"k\": %zu, \"index_s\": %.9g, "
                               "\"full_s\": %.9g, \"query_s\": %.9g, \"read_s\": %.9g, "
                               "\"speedup\": %.6g, \"speedup_best\": %.6g, "
                               "\"tuples_evaluated\": %" PRIu64 ", \"blocks_read\": %" PRIu64
                               ", \"partitions_stopped\": %zu, \"full_evaluation\": %d}\n",
                               cltopk_device_name(ctx), dists[di], partitioning_name(parts[pi]),
                               (unsigned long long)n, (unsigned long long)d, info.partitions,
                               info.block, tb, m, k, ta, tf, tq, tr, tf / ta, best / ta,
                               sa.tuples_evaluated, sa.blocks_read, sa.partitions_stopped,
                               sa.full_evaluation);
                    else
                        printf("%3zu %5zu %10.3f %10.3f %10.3f %10.3f %8.2f %8.2f %12" PRIu64
                               " %7.3f %9" PRIu64 " %6s\n", m, k, 1e3 * ta, 1e3 * tf, 1e3 * tq,
                               1e3 * tr, best / ta, tf / ta, sa.tuples_evaluated, pct,
                               sa.blocks_read, sa.full_evaluation ? "full" : "index");
                    fflush(stdout);
                }
            /* then, untimed (its copies of the columns would slow the next
             * cell), each cell's answer against the expression top-k over
             * the plain columns, an independent way (ties by the smaller
             * row, the tuple) */
            for (size_t mi = 0; mi < nm && !rc && !noquery; mi++)
                for (size_t ki = 0; ki < nk && !rc; ki++) {
                    size_t m = (size_t)ms[mi], k = (size_t)ks[ki], got = 0;
                    char expr[64 * 5];
                    q0_expr(expr, sizeof expr, m);
                    st = cltopk_index_topk(idx, attr, w, m, k, s1, i1, NULL);
                    if (st != CLTOPK_OK) {
                        rc = lib_fail(cmd, "the query", st, ctx);
                        break;
                    }
                    st = cltopk_query_topk(ctx, qcols, (size_t)d, (size_t)n, expr, NULL, k, 0,
                                           CLTOPK_FLOAT32, s2, i2, &got);
                    if (st != CLTOPK_OK) {
                        rc = lib_fail(cmd, "cltopk_query_topk", st, ctx);
                        break;
                    }
                    if (got != k || memcmp(s1, s2, k * 4) || memcmp(i1, i2, k * 8))
                        rc = fail(cmd, "%s, %s, m = %zu, k = %zu: the index and the expression "
                                  "top-k (%s) disagree", dists[di], partitioning_name(parts[pi]),
                                  m, k, expr);
                }
            cltopk_index_free(idx);
        }
    }
    free(cols);
    free(s1);
    free(s2);
    free(i1);
    free(i2);
    cltopk_close(ctx);
    return rc;
}

int cmd_index(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        index_help();
        return argc < 2 ? EXIT_USAGE : EXIT_OK;
    }
    if (!strcmp(argv[1], "build"))
        return index_build(argc - 1, argv + 1);
    if (!strcmp(argv[1], "query"))
        return index_query(argc - 1, argv + 1);
    if (!strcmp(argv[1], "bench"))
        return index_bench(argc - 1, argv + 1);
    return usage_error("index", "unknown subcommand '%s' (build, query, bench)", argv[1]);
}
