/* cmd_unpackbench.c - `cltopk bench --unpack`: decode time of packed columns
 * beside the copy floor, and top-k of a packed column against plain int32. */
#include "cli.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static void help(void)
{
    printf("Usage: cltopk bench --unpack [--device SPEC] [-n N] [--widths LIST]\n"
           "                    [--codec LIST] [--reps R] [--seed S] [-k K] [--json]\n"
           "\n"
           "Time the decoding of packed int32 columns (docs/FORMAT.md) at bit widths b,\n"
           "values uniform in [2^(b-1), 2^b) (b = 1: all 1), as in the thesis.  Each row:\n"
           "bits per value of the column (with block_starts), the median decode time of R\n"
           "runs after a warm-up (the column on the device already: no transfers), the\n"
           "floor = (packed bytes read + 4 bytes per value written) at the copy bandwidth\n"
           "measured in the same call, time / floor, and decoded GB/s (4 bytes a value).\n"
           "Then, on an OpenCL device, top-k (k = 32, largest) of the FOR column for the\n"
           "widths <= 16 of the list, against top-k of the same values stored as plain\n"
           "int32 on the device ('fused': the top-k kernel decodes on load, which needs\n"
           "the bitonic reducer at WG=128, e.g. CLTOPK_BITONIC=WG=128; 'decode': the column\n"
           "is decoded to device memory first).\n"
           "\n"
           "Options:\n"
           "      --device SPEC  auto (default), cpu, gpu, P:D, or part of one device's name\n"
           "  -n, --count N      values (default 2^28 on an OpenCL GPU, 2^24 otherwise;\n"
           "                     250M is the thesis's size)\n"
           "      --widths LIST  bit widths 1..32 (default all of them)\n"
           "  -d, --dist NAME    uniform: in [2^(b-1), 2^b) (default); sorted: the thesis's\n"
           "                     D1, sorted with 2^b distinct values; normal: D2, sigma 20\n"
           "                     around 2^b\n"
           "  -c, --codec LIST   for, dfor, rfor (default for,dfor)\n"
           "  -k, --k K          k of the top-k rows (default 32; 0 leaves them out)\n"
           "  -r, --reps R       timed runs per row, 1 to 64 (default 5)\n"
           "  -s, --seed S       seed of the data (default 1)\n"
           "      --json         JSON lines, one object per row\n"
           "  -h, --help         this text\n");
}

static uint64_t mix(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* the thesis's distributions at parameter b (counter-based: the same for any
 * thread count):
 *   uniform  uniform in [2^(b-1), 2^b)
 *   sorted   D1: sorted, 2^b distinct values (runs of n / 2^b)
 *   normal   D2: normal, sigma 20, mean 2^b (clamped to 32 bits) */
static void gen_width(uint32_t *v, size_t n, unsigned b, uint64_t seed, const char *dist)
{
    long long nl = (long long)n;
    uint64_t lo = 1ull << (b - 1);
    int d = !strcmp(dist, "sorted") ? 1 : !strcmp(dist, "normal") ? 2 : 0;
#pragma omp parallel for schedule(static)
    for (long long i = 0; i < nl; i++) {
        uint64_t r = mix(seed ^ mix((uint64_t)i));
        if (d == 1) {
            v[i] = (uint32_t)((unsigned __int128)(uint64_t)i * (lo * 2) / (uint64_t)nl);
        } else if (d == 2) {
            /* Irwin-Hall of 12 uniforms: mean 6, variance 1 */
            double z = -6.0;
            for (int j = 0; j < 12; j++) {
                z += (double)(r >> 11) / 9007199254740992.0;
                r = mix(r);
            }
            double x = (double)(lo * 2) + 20.0 * z;
            v[i] = x < 0 ? 0u : x > 4294967295.0 ? 0xFFFFFFFFu : (uint32_t)x;
        } else {
            v[i] = (uint32_t)(lo + r % lo);
        }
    }
}

int cmd_bench_unpack(int argc, char **argv)
{
    const char *cmd = "bench --unpack";
    enum { O_UNPACK = 1, O_DEVICE, O_N, O_WIDTHS, O_CODEC, O_K, O_REPS, O_SEED, O_JSON, O_HELP,
           O_DIST };
    const cli_option opts[] = {
        {O_UNPACK, 0, "unpack", 0}, {O_DEVICE, 0, "device", 1},   {O_N, 'n', "count", 1},
        {O_WIDTHS, 0, "widths", 1}, {O_CODEC, 'c', "codec", 1},   {O_K, 'k', "k", 1},
        {O_REPS, 'r', "reps", 1},   {O_SEED, 's', "seed", 1},     {O_JSON, 0, "json", 0},
        {O_HELP, 'h', "help", 0},   {O_DIST, 'd', "dist", 1},     {0, 0, NULL, 0},
    };
    cli_parser p;
    const char *arg, *device = NULL, *dist = "uniform";
    int id, json = 0, have_n = 0;
    uint64_t n = 0, reps = 5, seed = 1, k = 32, widths[64];
    size_t nw = 32, nc = 2;
    cltopk_codec codecs[3] = {CLTOPK_CODEC_FOR, CLTOPK_CODEC_DFOR, CLTOPK_CODEC_RFOR};
    for (size_t i = 0; i < 32; i++)
        widths[i] = i + 1;
    cli_init(&p, "bench", argc, argv);
    while ((id = cli_next(&p, opts, &arg)) != -1) {
        switch (id) {
        case -2: return EXIT_USAGE;
        case 0: return usage_error(cmd, "unexpected operand '%s'", arg);
        case O_UNPACK: break;
        case O_DEVICE: device = arg; break;
        case O_N:
            if (parse_count(arg, UINT32_MAX, &n) < 0 || n == 0)
                return usage_error(cmd, "bad count '%s' (1 .. 2^32 - 1)", arg);
            have_n = 1;
            break;
        case O_WIDTHS:
            if (parse_count_list(arg, 32, widths, 64, &nw) < 0)
                return usage_error(cmd, "bad width list '%s' (widths 1..32)", arg);
            for (size_t i = 0; i < nw; i++)
                if (widths[i] < 1)
                    return usage_error(cmd, "bad width list '%s' (widths 1..32)", arg);
            break;
        case O_CODEC: {
            char buf[256];
            const char *items[3];
            snprintf(buf, sizeof buf, "%s", arg);
            if (split_list(buf, items, 3, &nc) < 0)
                return usage_error(cmd, "bad codec list '%s'", arg);
            for (size_t i = 0; i < nc; i++)
                if (cltopk_codec_parse(items[i], &codecs[i]) != CLTOPK_OK)
                    return usage_error(cmd, "unknown codec '%s' (for, dfor, rfor)", items[i]);
            break;
        }
        case O_K:
            if (parse_count(arg, UINT32_MAX, &k) < 0)
                return usage_error(cmd, "bad k '%s'", arg);
            break;
        case O_REPS:
            if (parse_count(arg, 64, &reps) < 0 || reps < 1)
                return usage_error(cmd, "bad --reps '%s' (1 to 64)", arg);
            break;
        case O_SEED:
            if (parse_u64(arg, &seed) < 0)
                return usage_error(cmd, "bad seed '%s'", arg);
            break;
        case O_JSON: json = 1; break;
        case O_DIST:
            if (strcmp(arg, "uniform") && strcmp(arg, "sorted") && strcmp(arg, "normal"))
                return usage_error(cmd, "unknown distribution '%s' (uniform, sorted, normal)",
                                   arg);
            dist = arg;
            break;
        case O_HELP: help(); return EXIT_OK;
        }
    }
    cltopk_context *ctx = NULL;
    int rc = open_device(cmd, device, &ctx);
    if (rc)
        return rc;
    const char *dev = cltopk_device_name(ctx);
    int is_cpu = !strcmp(dev, "cpu");
    int gpu = 0;
    for (size_t i = 0, nd = cltopk_device_count(); i < nd && !is_cpu; i++) {
        cltopk_device_info info;
        if (cltopk_device_get(i, &info) == CLTOPK_OK && info.is_gpu &&
            strstr(dev, info.device_name))
            gpu = 1;
    }
    if (!have_n)
        n = gpu ? 1ull << 28 : 1ull << 24;
    uint32_t *v = malloc(n * 4);
    size_t cap = cltopk_pack_bound(CLTOPK_CODEC_RFOR, n);
    size_t cap2 = cltopk_pack_bound(CLTOPK_CODEC_DFOR, n);
    cap = cap2 > cap ? cap2 : cap;
    uint32_t *data = malloc(cap * 4), *starts = malloc(((n + 127) / 128 + 1) * 4);
    if (!v || !data || !starts) {
        rc = fail(cmd, "out of memory for %" PRIu64 " values", n);
        goto out;
    }
    if (!json)
        printf("device %s, n = %" PRIu64 ", %s data, median of %" PRIu64 " runs\n\n"
               "%-5s %3s %9s %11s %11s %7s %9s %11s\n",
               dev, n, dist, reps, "codec", "b", "bits/val",
               "decode_ms", "floor_ms", "ratio", "GB/s", "copy_GB/s");
    for (size_t wi = 0; wi < nw; wi++) {
        unsigned b = (unsigned)widths[wi];
        gen_width(v, (size_t)n, b, seed + b, dist);
        for (size_t ci = 0; ci < nc; ci++) {
            size_t words, nst;
            int st = cltopk_pack(codecs[ci], (const int32_t *)v, (size_t)n, data, cap, &words,
                                 starts, (n + 127) / 128 + 1, &nst);
            if (st != CLTOPK_OK) {
                rc = lib_fail(cmd, "cltopk_pack", st, NULL);
                goto out;
            }
            double med = 0, bw = 0;
            st = cltopk_benchmark_unpack(ctx, codecs[ci], data, words, starts, nst, (int)reps,
                                         &med, &bw);
            if (st != CLTOPK_OK) {
                rc = lib_fail(cmd, "cltopk_benchmark_unpack", st, ctx);
                goto out;
            }
            double bits = 32.0 * (double)(words + nst) / (double)n;
            double bytes = 4.0 * (double)(words + nst) + 4.0 * (double)n;
            double floor_s = bytes / bw;
            if (json)
                printf("{\"device\": \"%s\", \"bench\": \"unpack\", \"dist\": \"%s\", "
                       "\"codec\": \"%s\", \"n\": %" PRIu64 ", \"width\": %u, "
                       "\"bits_per_value\": %.4f, \"median_s\": %.9g, "
                       "\"floor_s\": %.9g, \"ratio\": %.4f, \"gb_per_s\": %.4f, "
                       "\"copy_gb_per_s\": %.4f}\n",
                       dev, dist, cltopk_codec_name(codecs[ci]), n, b, bits, med, floor_s,
                       med / floor_s, 4.0 * (double)n / med / 1e9, bw / 1e9);
            else
                printf("%-5s %3u %9.3f %11.4f %11.4f %7.3f %9.1f %11.1f\n",
                       cltopk_codec_name(codecs[ci]), b, bits, med * 1e3, floor_s * 1e3,
                       med / floor_s, 4.0 * (double)n / med / 1e9, bw / 1e9);
            fflush(stdout);
        }
    }
    if (k == 0 || is_cpu || k > n)
        goto out;
    if (!json)
        printf("\ntop-%" PRIu64 " (largest) of a FOR column against the same values as plain "
               "int32, both on the device\n%3s %9s %14s %-6s %13s %7s\n", k, "b", "bits/val",
               "packed_ms", "how", "plain_ms", "ratio");
    for (size_t wi = 0; wi < nw; wi++) {
        unsigned b = (unsigned)widths[wi];
        if (b > 16)
            continue;
        gen_width(v, (size_t)n, b, seed + b, dist);
        size_t words, nst;
        int st = cltopk_pack(CLTOPK_CODEC_FOR, (const int32_t *)v, (size_t)n, data, cap, &words,
                             starts, (n + 127) / 128 + 1, &nst);
        double tp = 0, tu = 0;
        int fused = 0;
        if (st == CLTOPK_OK)
            st = cltopk_benchmark_topk_packed(ctx, CLTOPK_CODEC_FOR, data, words, starts, nst,
                                              (size_t)k, 0, CLTOPK_ALGO_BITONIC, (int)reps, &tp,
                                              &fused, &tu);
        if (st != CLTOPK_OK) {
            rc = lib_fail(cmd, "cltopk_benchmark_topk_packed", st, ctx);
            goto out;
        }
        double bits = 32.0 * (double)(words + nst) / (double)n;
        if (json)
            printf("{\"device\": \"%s\", \"bench\": \"topk_packed\", \"codec\": \"for\", \"n\": %"
                   PRIu64 ", \"width\": %u, \"k\": %" PRIu64 ", \"bits_per_value\": %.4f, "
                   "\"packed_s\": %.9g, \"fused\": %s, \"plain_s\": %.9g, \"ratio\": %.4f}\n",
                   dev, n, b, k, bits, tp, fused ? "true" : "false", tu, tp / tu);
        else
            printf("%3u %9.3f %14.4f %-6s %13.4f %7.3f\n", b, bits, tp * 1e3,
                   fused ? "fused" : "decode", tu * 1e3, tp / tu);
        fflush(stdout);
    }
out:
    free(v);
    free(data);
    free(starts);
    cltopk_close(ctx);
    return rc;
}
