/* cmd_pack.c - `cltopk pack`, `cltopk unpack` and `cltopk topk --packed`: int32
 * columns to and from the packed-column container (docs/FORMAT.md). */
#include "cli.h"
#include "container.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Write buf to path through the output helper (cli.h: a temporary renamed
 * into place, never the input unless in_place). */
static int write_all(const char *cmd, const char *path, unsigned flags, const char *input,
                     const void *buf, size_t len)
{
    out_file out;
    int rc = out_open(&out, cmd, path, flags, input);
    if (!rc)
        rc = out_write(&out, buf, len);
    if (!rc)
        rc = out_commit(&out);
    return rc;
}

/* Read and check a packed-column file ("-": standard input): the header
 * first, against the file's size when it is a regular file; on a stream no
 * more than the header announces (container.c, packed_read). */
static int read_packed(const char *cmd, const char *path, packed_file *pf)
{
    int from_stdin = !strcmp(path, "-");
    FILE *f = from_stdin ? stdin : fopen(path, "rb");
    if (!f)
        return fail(cmd, "cannot open '%s': %s", path, strerror(errno));
    long long file_len = -1;
    struct stat st;
    if (!from_stdin) {
        if (fstat(fileno(f), &st) != 0) {
            int e = errno;
            fclose(f);
            return fail(cmd, "cannot read '%s': %s", path, strerror(e));
        }
        if (S_ISDIR(st.st_mode)) {
            fclose(f);
            return fail(cmd, "cannot read '%s': it is a directory", path);
        }
        if (S_ISREG(st.st_mode))
            file_len = (long long)st.st_size;
    }
    char why[300];
    errno = 0;
    int rc = packed_read(f, file_len, pf, why, sizeof why);
    int e = errno;
    if (!from_stdin)
        fclose(f);
    if (rc == PACKED_IO)
        return fail(cmd, "cannot read '%s': %s", display_name(path), strerror(e ? e : EIO));
    if (rc == PACKED_NOMEM)
        return fail(cmd, "out of memory reading '%s'", display_name(path));
    if (rc)
        return fail(cmd, "'%s': %s", display_name(path), why);
    return 0;
}

/* ------------------------------------------------------------------ pack */

static void pack_help(void)
{
    printf("Usage: cltopk pack -c for|dfor|rfor [--text|--binary] [--in-place] IN|- OUT|-\n"
           "\n"
           "Pack a column of 32-bit integers (int32 or uint32: the codecs work on bits)\n"
           "into a packed-column file (docs/FORMAT.md):\n"
           "  for    GPU-FOR: blocks of 128, a reference and 4 miniblock widths each\n"
           "  dfor   GPU-DFOR: GPU-FOR over deltas restarted every 512 values (sorted data)\n"
           "  rfor   GPU-RFOR: runs (value, length) per 512 values, both FOR-packed\n"
           "Prints the size in bits per value and the input format (on standard error\n"
           "when OUT is -).\n"
           "\n"
           "Options:\n"
           "  -c, --codec NAME   for, dfor or rfor (required)\n"
           "      --text         IN holds one integer per line (the default for a name\n"
           "                     ending in .txt or .csv)\n"
           "      --binary       IN holds raw little-endian int32 (the default for any\n"
           "                     other name and for -; never guessed from the contents)\n"
           "      --in-place     allow OUT to be IN: IN is read whole, then replaced\n"
           "                     once OUT is complete (without it, that is refused)\n"
           "  -h, --help         this text\n"
           "\n"
           "OUT is written to a temporary file beside it and renamed over it at the\n"
           "end: a failed write leaves OUT as it was.\n"
           "\n"
           "Example:\n"
           "  cltopk gen -t i32 -n 1M col.i32 && cltopk pack -c for col.i32 col.pk\n");
}

int cmd_pack(int argc, char **argv)
{
    const char *cmd = "pack";
    enum { O_CODEC = 1, O_TEXT, O_BINARY, O_IN_PLACE, O_HELP };
    const cli_option opts[] = {
        {O_CODEC, 'c', "codec", 1},       {O_TEXT, 0, "text", 0}, {O_BINARY, 0, "binary", 0},
        {O_IN_PLACE, 0, "in-place", 0}, {O_HELP, 'h', "help", 0}, {0, 0, NULL, 0},
    };
    cli_parser p;
    const char *arg, *paths[2] = {NULL, NULL};
    int id, have_codec = 0, format = FORMAT_AUTO, np = 0;
    unsigned oflags = OUT_BINARY;
    cltopk_codec codec = CLTOPK_CODEC_FOR;
    cli_init(&p, cmd, argc, argv);
    while ((id = cli_next(&p, opts, &arg)) != -1) {
        switch (id) {
        case -2: return EXIT_USAGE;
        case 0:
            if (np == 2)
                return usage_error(cmd, "too many operands ('%s'): give IN and OUT", arg);
            paths[np++] = arg;
            break;
        case O_CODEC:
            if (cltopk_codec_parse(arg, &codec) != CLTOPK_OK)
                return usage_error(cmd, "unknown codec '%s' (for, dfor or rfor)", arg);
            have_codec = 1;
            break;
        case O_TEXT: format = FORMAT_TEXT; break;
        case O_BINARY: format = FORMAT_BINARY; break;
        case O_IN_PLACE: oflags |= OUT_IN_PLACE; break;
        case O_HELP: pack_help(); return EXIT_OK;
        }
    }
    if (!have_codec)
        return usage_error(cmd, "the codec is missing: give -c for, -c dfor or -c rfor");
    if (np != 2)
        return usage_error(cmd, "give the input and the output file");
    int rc = out_check(cmd, paths[1], oflags, paths[0]);
    if (rc)
        return rc;
    void *vals = NULL;
    size_t n = 0;
    int asked = format;
    rc = read_elements(cmd, paths[0], CLTOPK_INT32,
                       "pack reads 32-bit integers only; give --text for a text file",
                       &format, &vals, &n);
    if (rc)
        return rc;
    size_t cap = cltopk_pack_bound(codec, n), scap = cltopk_pack_starts_bound(codec, n);
    if (!cap) {
        free(vals);
        return fail(cmd, "'%s' holds %zu values; a packed column holds fewer than 2^32",
                    display_name(paths[0]), n);
    }
    packed_file pf = {codec, n, malloc(cap * 4), 0, malloc(scap * 4), 0};
    if (!pf.data || !pf.starts) {
        rc = fail(cmd, "out of memory");
        goto out;
    }
    int st = cltopk_pack(codec, (const int32_t *)vals, n, pf.data, cap, &pf.data_words,
                         pf.starts, scap, &pf.nstarts);
    if (st != CLTOPK_OK) {
        rc = lib_fail(cmd, "cltopk_pack", st, NULL);
        goto out;
    }
    size_t len;
    unsigned char *buf = packed_build(&pf, &len);
    if (!buf) {
        rc = fail(cmd, "out of memory");
        goto out;
    }
    rc = write_all(cmd, paths[1], oflags, paths[0], buf, len);
    free(buf);
    /* the report goes to stderr when the column itself goes to stdout */
    if (!rc)
        fprintf(strcmp(paths[1], "-") ? stdout : stderr,
                "%s: %zu values (%s input: %s) -> %zu + %zu words (%.3f bits/value)\n",
                cltopk_codec_name(codec), n, format == FORMAT_TEXT ? "text" : "binary",
                format_reason(paths[0], asked), pf.data_words, pf.nstarts,
                n ? 32.0 * (double)(pf.data_words + pf.nstarts) / (double)n : 0.0);
out:
    packed_free(&pf);
    free(vals);
    return rc;
}

/* ---------------------------------------------------------------- unpack */

static void unpack_help(void)
{
    printf("Usage: cltopk unpack [--device SPEC] [--text|--binary] [--in-place] IN|- OUT|-\n"
           "\n"
           "Decode a packed-column file (cltopk pack) to raw little-endian int32, or one\n"
           "number per line with --text or for an OUT ending in .txt or .csv (--binary\n"
           "writes binary whatever the name).  The file is untrusted: a damaged one is\n"
           "refused with what is wrong, and nothing is written.  On an OpenCL device the\n"
           "column is decoded there (the same bits as on the cpu device).\n"
           "\n"
           "Options:\n"
           "      --device SPEC  auto (default), cpu, gpu, P:D, or part of one device's name\n"
           "      --text         write decimal text\n"
           "      --binary       write raw little-endian int32 (the default)\n"
           "      --in-place     allow OUT to be IN: IN is read whole, then replaced\n"
           "                     once OUT is complete (without it, that is refused)\n"
           "  -h, --help         this text\n"
           "\n"
           "OUT is written to a temporary file beside it and renamed over it at the\n"
           "end: a failed write leaves OUT as it was.\n");
}

int cmd_unpack(int argc, char **argv)
{
    const char *cmd = "unpack";
    enum { O_DEVICE = 1, O_TEXT, O_BINARY, O_IN_PLACE, O_HELP };
    const cli_option opts[] = {
        {O_DEVICE, 0, "device", 1},     {O_TEXT, 0, "text", 0},   {O_BINARY, 0, "binary", 0},
        {O_IN_PLACE, 0, "in-place", 0}, {O_HELP, 'h', "help", 0}, {0, 0, NULL, 0},
    };
    cli_parser p;
    const char *arg, *paths[2] = {NULL, NULL}, *device = NULL;
    int id, format = FORMAT_AUTO, np = 0, in_place = 0;
    cli_init(&p, cmd, argc, argv);
    while ((id = cli_next(&p, opts, &arg)) != -1) {
        switch (id) {
        case -2: return EXIT_USAGE;
        case 0:
            if (np == 2)
                return usage_error(cmd, "too many operands ('%s'): give IN and OUT", arg);
            paths[np++] = arg;
            break;
        case O_DEVICE: device = arg; break;
        case O_TEXT: format = FORMAT_TEXT; break;
        case O_BINARY: format = FORMAT_BINARY; break;
        case O_IN_PLACE: in_place = 1; break;
        case O_HELP: unpack_help(); return EXIT_OK;
        }
    }
    if (np != 2)
        return usage_error(cmd, "give the input and the output file");
    int text = file_format(paths[1], format) == FORMAT_TEXT;
    unsigned oflags = (text ? 0 : OUT_BINARY) | OUT_CAN_TEXT | (in_place ? OUT_IN_PLACE : 0);
    int rc = out_check(cmd, paths[1], oflags, paths[0]);
    if (rc)
        return rc;
    packed_file pf;
    rc = read_packed(cmd, paths[0], &pf);
    if (rc)
        return rc;
    cltopk_context *ctx = NULL;
    int32_t *out = malloc(pf.count ? pf.count * 4 : 1);
    char *txt = NULL;
    if (!out) {
        rc = fail(cmd, "out of memory for %" PRIu64 " values", pf.count);
        goto out;
    }
    if ((rc = open_device(cmd, device, &ctx)))
        goto out;
    size_t n = 0;
    int st = cltopk_unpack(ctx, pf.codec, pf.data, pf.data_words, pf.starts, pf.nstarts, out,
                           (size_t)pf.count, &n);
    if (st != CLTOPK_OK) {
        rc = lib_fail(cmd, "cltopk_unpack", st, ctx);
        goto out;
    }
    if (text) {
        txt = malloc(n * 12 + 1);
        if (!txt) {
            rc = fail(cmd, "out of memory");
            goto out;
        }
        size_t at = 0;
        for (size_t i = 0; i < n; i++)
            at += (size_t)sprintf(txt + at, "%" PRId32 "\n", out[i]);
        rc = write_all(cmd, paths[1], oflags, paths[0], txt, at);
    } else {
        to_little_endian(out, 4, n);
        rc = write_all(cmd, paths[1], oflags, paths[0], out, n * 4);
    }
out:
    free(txt);
    free(out);
    packed_free(&pf);
    cltopk_close(ctx);
    return rc;
}

/* ---------------------------------------------------------- topk --packed */

static int is_cpu_algo(cltopk_algo a)
{
    return a == CLTOPK_ALGO_CPU_HEAP || a == CLTOPK_ALGO_CPU_BITONIC || a == CLTOPK_ALGO_CPU_RADIX;
}

/* What cltopk_topk_packed runs for algo on ctx (cltopk.h): a named algorithm
 * runs as named; AUTO on an OpenCL context plans for data on the device (the
 * column goes there), and where that plan is a CPU algorithm, as everywhere on
 * the cpu device, the column is decoded on the host and AUTO plans for host
 * data.  *device_plan: whether the device-data plan decided. */
static int packed_plan(cltopk_context *ctx, size_t count, size_t k, unsigned flags,
                       cltopk_algo algo, cltopk_algo *ran, int *device_plan)
{
    *ran = algo;
    *device_plan = 0;
    if (algo != CLTOPK_ALGO_AUTO || k == 0)
        return CLTOPK_OK;
    int st = CLTOPK_OK;
    if (cltopk_get_cl(ctx, NULL, NULL, NULL) == CLTOPK_OK) {
        st = cltopk_plan_buffer(ctx, CLTOPK_INT32, count, k, flags, ran);
        if (st != CLTOPK_OK || !is_cpu_algo(*ran)) {
            *device_plan = 1;
            return st;
        }
    }
    return cltopk_plan(ctx, CLTOPK_INT32, count, k, flags, ran);
}

int topk_packed_file(const char *path, uint64_t k, unsigned flags, cltopk_algo algo,
                     const char *device, int json, int explain)
{
    const char *cmd = "topk";
    packed_file pf;
    int rc = read_packed(cmd, path, &pf);
    if (rc)
        return rc;
    if (k > pf.count) {
        packed_free(&pf);
        return fail(cmd, "k = %" PRIu64 " is larger than the %" PRIu64 " values of '%s'", k,
                    pf.count, display_name(path));
    }
    cltopk_context *ctx = NULL;
    int32_t *ok = malloc(k ? k * 4 : 1);
    int64_t *oi = malloc(k ? k * 8 : 1);
    char plan[8192] = "";
    if (!ok || !oi) {
        rc = fail(cmd, "out of memory");
        goto out;
    }
    if ((rc = open_device(cmd, device, &ctx)))
        goto out;
    cltopk_algo ran;
    int device_plan;
    int st = packed_plan(ctx, (size_t)pf.count, (size_t)k, flags, algo, &ran, &device_plan);
    if (st != CLTOPK_OK) {
        rc = lib_fail(cmd, device_plan ? "cltopk_plan_buffer" : "cltopk_plan", st, ctx);
        goto out;
    }
    /* the plans auto decides by: for data on the device (an OpenCL context),
     * then, where that plan is a CPU algorithm, for host data */
    if (explain && k > 0) {
        int cl = cltopk_get_cl(ctx, NULL, NULL, NULL) == CLTOPK_OK;
        size_t at = 0;
        for (int dev = cl; dev >= 0 && st == CLTOPK_OK; dev--) {
            st = cltopk_explain(ctx, CLTOPK_INT32, (size_t)pf.count, (size_t)k, flags, dev,
                                plan + at, sizeof plan - at);
            at = strlen(plan);
            if (device_plan || (dev == 1 && algo != CLTOPK_ALGO_AUTO))
                break;
        }
        if (st != CLTOPK_OK) {
            rc = lib_fail(cmd, "cltopk_explain", st, ctx);
            goto out;
        }
    }
    st = cltopk_topk_packed(ctx, pf.codec, pf.data, pf.data_words, pf.starts, pf.nstarts,
                            (size_t)k, flags, algo, ok, oi);
    if (st != CLTOPK_OK) {
        rc = lib_fail(cmd, "cltopk_topk_packed", st, ctx);
        goto out;
    }
    const char *order = flags & CLTOPK_SMALLEST ? "smallest" : "largest";
    if (json) {
        printf("{\"device\": ");
        json_string(stdout, cltopk_device_name(ctx));
        printf(", \"algorithm\": \"%s\", \"ran\": \"%s\", \"codec\": \"%s\", \"type\": "
               "\"i32\", \"n\": %" PRIu64 ", \"k\": %" PRIu64 ", \"order\": \"%s\", "
               "\"results\": [",
               cltopk_algo_name(algo), cltopk_algo_name(ran), cltopk_codec_name(pf.codec),
               pf.count, k, order);
        for (size_t i = 0; i < k; i++)
            printf("%s\n  {\"rank\": %zu, \"index\": %" PRId64 ", \"value\": %" PRId32 "}",
                   i ? "," : "", i, oi[i], ok[i]);
        printf("%s]", k ? "\n" : "");
        if (plan[0]) {
            printf(", \"plan\": ");
            json_string(stdout, plan);
        }
        printf("}\n");
    } else {
        printf("device     %s\n", cltopk_device_name(ctx));
        if (plan[0])
            printf("%s", plan);
        if (algo == CLTOPK_ALGO_AUTO && k > 0)
            printf("algorithm  auto -> %s\n", cltopk_algo_name(ran));
        else
            printf("algorithm  %s\n", cltopk_algo_name(algo));
        printf("input      %" PRIu64 " x i32 (packed, %s), the %" PRIu64 " %s\n", pf.count,
               cltopk_codec_name(pf.codec), k, order);
        printf("\n%6s %12s  %s\n", "rank", "index", "value");
        for (size_t i = 0; i < k; i++)
            printf("%6zu %12" PRId64 "  %" PRId32 "\n", i, oi[i], ok[i]);
    }
out:
    free(ok);
    free(oi);
    packed_free(&pf);
    cltopk_close(ctx);
    return rc;
}
