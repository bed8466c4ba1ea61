/* cmd_gen.c - `cltopk gen`: write test data. */
#include "cli.h"
#include "gen.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void gen_help(void)
{
    printf("Usage: cltopk gen -t TYPE -n N [-d DIST] [-s SEED] [--text] OUT\n"
           "       cltopk gen -t TYPE -n N ... -        (to standard output)\n"
           "       cltopk gen --tuples N --dims D --dist DIST [-s SEED] OUT\n"
           "       cltopk gen --points N --dims D [--dist DIST] [-s SEED] OUT\n"
           "\n"
           "Write N elements of TYPE drawn from DIST to the file OUT.  The same TYPE, N,\n"
           "DIST and SEED always give the same bytes.\n"
           "\n"
           "Options:\n"
           "  -t, --type TYPE   f32, f64, i32, u32, i64 or u64 (also float, double, int32...)\n"
           "  -n, --count N     number of elements: 1000, 64K, 1M, 2^20 (K, M, G, T are\n"
           "                    powers of 1024)\n"
           "  -d, --dist DIST   distribution (default uniform):\n"
           "                      uniform        floats in [0,1); integers over the whole type\n"
           "                      normal         floats N(0,1); integers round(N(0,1) * 2^20),\n"
           "                                     unsigned ones centred on 2^(bits-1)\n"
           "                      increasing     uniform values, sorted ascending\n"
           "                      decreasing     uniform values, sorted descending\n"
           "                      equal          one value everywhere\n"
           "                      few            8 distinct values\n"
           "                      bucket-killer  one value everywhere but 4 (32-bit) or 8\n"
           "                                     (64-bit) elements that differ from it in one\n"
           "                                     byte each: the worst case of radix selection\n"
           "                      special        NaNs (several payloads, both signs), +-inf,\n"
           "                                     +-0, denormals, +-max (floats); min, max, 0,\n"
           "                                     +-1 (integers); mixed with uniform values\n"
           "                      powerlaw       counts with a long tail and many ties\n"
           "                      timestamps     seconds of May 2017 (from 1493596800)\n"
           "                      codes          0 (40%%), 1 (20%%), 2..9 (5%% each)\n"
           "                    (the last three make a tweet-like table for cltopk query)\n"
           "  -s, --seed SEED   64-bit seed, decimal or 0x-hex (default 1)\n"
           "      --tuples N    instead: N tuples of D float32 attributes in [0,1) for\n"
           "                    `cltopk index`, from the standard skyline generator\n"
           "                    (Borzsonyi et al., ICDE 2001); DIST is one of\n"
           "                      correlated     near the diagonal (good in one attribute,\n"
           "                                     good in all)\n"
           "                      independent    uniform in every attribute\n"
           "                      anticorrelated near the plane where they sum to D/2\n"
           "                    Written as D columns one after the other (attribute j of\n"
           "                    tuple t at float number j * N + t), raw little-endian\n"
           "                    binary; the same N, D, DIST and SEED give the same bytes\n"
           "      --points N    instead: N points of D float32 coordinates for `cltopk\n"
           "                    knn` (points and queries), row-major (coordinate j of\n"
           "                    point t at float number t * D + j), raw little-endian\n"
           "                    binary; DIST (default uniform) is one of\n"
           "                      uniform        U(0,1) in every coordinate\n"
           "                      normal         N(0,1) in every coordinate\n"
           "                      clustered      around 64 centres in [0,1)^D, spread\n"
           "                                     0.02; the centres depend on D alone, so\n"
           "                                     queries drawn with another -s fall in the\n"
           "                                     points' clusters\n"
           "  -D, --dims D      attributes a tuple (1 to 64) for --tuples, coordinates a\n"
           "                    point (1 to 65536) for --points; with either, -d D (a\n"
           "                    number) says the same\n"
           "      --text        one number per line instead of raw binary (the default\n"
           "                    for an OUT ending in .txt or .csv); floats are printed\n"
           "                    with enough digits to read back exactly (%%.9g, %%.17g),\n"
           "                    NaN as nan, -nan or nan(0xPAYLOAD), inf, -inf\n"
           "      --binary      raw little-endian binary (the default for any other\n"
           "                    name and for -)\n"
           "  -h, --help        this text\n"
           "\n"
           "Examples:\n"
           "  cltopk gen -t f32 -n 1M data.f32\n"
           "  cltopk gen -t i64 -n 100 -d few --text - | head\n"
           "  cltopk gen --tuples 1M --dims 8 --dist anticorrelated anti.f32\n"
           "  cltopk gen --points 1M --dims 128 --dist clustered points.f32\n"
           "  cltopk gen --points 1000 --dims 128 --dist clustered -s 2 queries.f32\n");
}

/* `gen --tuples N --dims D --dist DIST OUT`: the skyline generator's columns;
 * `gen --points N --dims D [--dist DIST] OUT`: kNN points, row-major */
static int gen_matrix_file(int points, const char *out_path, uint64_t n, uint64_t d,
                           const char *dist, uint64_t seed, int format, int typed)
{
    const char *opt = points ? "--points" : "--tuples";
    if (gen_dist_index(points ? gen_point_dists : gen_tuple_dists, dist) < 0)
        return usage_error("gen", "%s takes --dist %s (not '%s')", opt,
                           points ? "uniform, normal or clustered"
                                  : "correlated, independent or anticorrelated",
                           dist);
    if (!d)
        return usage_error("gen", "the %s are missing: give --dims D",
                           points ? "coordinates a point" : "attributes a tuple");
    if (!points && d > 64)
        return usage_error("gen", "--tuples takes 1 to 64 attributes (--dims %llu)",
                           (unsigned long long)d);
    if (typed)
        return usage_error("gen", "%s writes float32 %s: no -t or -n", opt,
                           points ? "rows" : "columns");
    if (format == FORMAT_TEXT)
        return usage_error("gen", "%s writes binary %s only (no --text)", opt,
                           points ? "rows" : "columns");
    if (!out_path)
        return usage_error("gen", "the output is missing: give a file name, or - for stdout");
    int rc = out_check("gen", out_path, OUT_BINARY, NULL);
    if (rc)
        return rc;
    if (n > SIZE_MAX / 4 / d)
        return fail("gen", "%llu %s do not fit in memory here", (unsigned long long)n,
                    points ? "points" : "tuples");
    float *data = malloc((size_t)(n * d) * 4);
    if (!data || (points ? gen_points(dist, (size_t)n, (size_t)d, seed, data)
                         : gen_tuples(dist, (size_t)n, (size_t)d, seed, data))) {
        free(data);
        return fail("gen", "out of memory for %llu x %llu floats", (unsigned long long)n,
                    (unsigned long long)d);
    }
    out_file out;
    if ((rc = out_open(&out, "gen", out_path, OUT_BINARY, NULL))) {
        free(data);
        return rc;
    }
    to_little_endian(data, 4, (size_t)(n * d));
    rc = out_write(&out, data, (size_t)(n * d) * 4);
    free(data);
    return rc ? rc : out_commit(&out);
}

int cmd_gen(int argc, char **argv)
{
    enum { O_TYPE = 1, O_N, O_DIST, O_SEED, O_TEXT, O_BINARY, O_HELP, O_TUPLES, O_DIMS, O_POINTS };
    static const cli_option opts[] = {
        {O_TYPE, 't', "type", 1}, {O_N, 'n', "count", 1},      {O_DIST, 'd', "dist", 1},
        {O_SEED, 's', "seed", 1}, {O_TEXT, 0, "text", 0},      {O_BINARY, 0, "binary", 0},
        {O_HELP, 'h', "help", 0}, {O_TUPLES, 0, "tuples", 1},  {O_DIMS, 'D', "dims", 1},
        {O_POINTS, 0, "points", 1}, {0, 0, NULL, 0},
    };
    cli_parser p;
    const char *arg, *out_path = NULL, *dist = "uniform";
    int id, format = FORMAT_AUTO, have_type = 0, have_n = 0;
    cltopk_dtype type = CLTOPK_FLOAT32;
    uint64_t n = 0, seed = 1, tuples = 0, dims = 0;
    int have_tuples = 0, have_points = 0, have_dist = 0;
    const char *ddims = NULL; /* -d D, a number */
    cli_init(&p, "gen", argc, argv);
    while ((id = cli_next(&p, opts, &arg)) != -1) {
        switch (id) {
        case -2: return EXIT_USAGE;
        case 0:
            if (out_path)
                return usage_error("gen", "more than one output ('%s' and '%s')", out_path, arg);
            out_path = arg;
            break;
        case O_TYPE:
            if (parse_type("gen", arg, &type))
                return EXIT_USAGE;
            have_type = 1;
            break;
        case O_N:
            if (parse_count(arg, (uint64_t)1 << 40, &n) < 0)
                return usage_error("gen", "bad count '%s' (a number like 1000, 64K, 1M or 2^20, "
                                   "at most 2^40)", arg);
            have_n = 1;
            break;
        case O_DIST:
            /* a number: the dimensions of --tuples or --points (the spelling
             * `gen --tuples N -d D --dist DIST`), decided below */
            if (arg[0] >= '0' && arg[0] <= '9') {
                ddims = arg;
                break;
            }
            dist = arg;
            have_dist = 1;
            if (have_tuples || have_points)
                break; /* checked below against the tuples' or points' distributions */
            if (!known_dist(arg))
                return usage_error("gen", "unknown distribution '%s' (uniform, normal, "
                                   "increasing, decreasing, equal, few, bucket-killer, "
                                   "special, powerlaw, timestamps, codes)", arg);
            break;
        case O_TUPLES:
        case O_POINTS:
            if (parse_count(arg, (uint64_t)1 << 36, &tuples) < 0 || tuples == 0)
                return usage_error("gen", "bad %s '%s' (a count from 1 to 2^36)",
                                   id == O_TUPLES ? "--tuples" : "--points", arg);
            have_tuples |= id == O_TUPLES;
            have_points |= id == O_POINTS;
            break;
        case O_DIMS:
            if (parse_count(arg, 65536, &dims) < 0 || dims == 0)
                return usage_error("gen", "bad --dims '%s' (1 to 64 attributes a tuple, 1 to "
                                   "65536 coordinates a point)", arg);
            break;
        case O_SEED:
            if (parse_u64(arg, &seed) < 0)
                return usage_error("gen", "bad seed '%s' (a 64-bit number)", arg);
            break;
        case O_TEXT: format = FORMAT_TEXT; break;
        case O_BINARY: format = FORMAT_BINARY; break;
        case O_HELP: gen_help(); return EXIT_OK;
        }
    }
    if (have_tuples && have_points)
        return usage_error("gen", "give --tuples or --points, not both");
    if (ddims) {
        if (!have_tuples && !have_points)
            return usage_error("gen", "unknown distribution '%s' (a number gives the dimensions "
                               "of --tuples or --points)", ddims);
        if (dims)
            return usage_error("gen", "the dimensions given twice (-d %s and --dims)", ddims);
        if (parse_count(ddims, 65536, &dims) < 0 || dims == 0)
            return usage_error("gen", "bad -d '%s' (1 to 64 attributes a tuple, 1 to 65536 "
                               "coordinates a point)", ddims);
    }
    if (have_tuples || have_points)
        return gen_matrix_file(have_points, out_path, tuples, dims,
                               have_dist || !have_points ? dist : "uniform", seed, format,
                               have_type || have_n);
    if (dims)
        return usage_error("gen", "--dims goes with --tuples or --points");
    if (!have_type)
        return usage_error("gen", "the element type is missing: give -t TYPE");
    if (!have_n)
        return usage_error("gen", "the number of elements is missing: give -n N");
    if (!out_path)
        return usage_error("gen", "the output is missing: give a file name, or - for stdout");
    int text = file_format(out_path, format) == FORMAT_TEXT;
    unsigned oflags = (text ? 0 : OUT_BINARY) | OUT_CAN_TEXT;
    int rc = out_check("gen", out_path, oflags, NULL);
    if (rc)
        return rc;

    size_t bytes = cltopk_dtype_size(type);
    if (n > SIZE_MAX / bytes)
        return fail("gen", "%llu elements do not fit in memory here", (unsigned long long)n);
    void *data = malloc(n ? (size_t)n * bytes : 1);
    if (!data)
        return fail("gen", "out of memory for %llu %s elements (%llu bytes)",
                    (unsigned long long)n, cltopk_dtype_name(type),
                    (unsigned long long)(n * bytes));
    if (n >= ((uint64_t)1 << 24))
        progress("gen: generating %llu %s elements (%s)", (unsigned long long)n,
                 cltopk_dtype_name(type), dist);
    if (gen_fill(type, dist, (size_t)n, seed, data) != 0) {
        progress_done();
        free(data);
        return fail("gen", "cannot generate '%s' data of type %s", dist, cltopk_dtype_name(type));
    }

    out_file out;
    if ((rc = out_open(&out, "gen", out_path, oflags, NULL))) {
        free(data);
        return rc;
    }
    if (text) {
        char buf[64];
        for (size_t i = 0; i < n; i++) {
            if (n >= ((uint64_t)1 << 20) && (i & 0xFFFFF) == 0)
                progress("gen: writing text, %.0f%% of %llu", 100.0 * (double)i / (double)n,
                         (unsigned long long)n);
            format_value(type, gen_bits(data, bytes, i), buf, sizeof buf);
            fputs(buf, out.f);
            fputc('\n', out.f);
        }
    } else {
        to_little_endian(data, bytes, (size_t)n);
        if (n >= ((uint64_t)1 << 24))
            progress("gen: writing %llu bytes", (unsigned long long)(n * bytes));
        rc = out_write(&out, data, (size_t)n * bytes);
    }
    progress_done();
    free(data);
    if (rc)
        return rc;
    /* out_commit sees any error of the text loop's stream (ferror) */
    return out_commit(&out);
}
