/* cmd_devices.c - `cltopk devices`: every OpenCL device, the cpu device, and
 * which one "auto" picks. */
#include "cli.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static void devices_help(void)
{
    printf("Usage: cltopk devices [--json] [--split all|LIST [--measure N]]\n"
           "\n"
           "List every OpenCL device the ICD loader finds, with the limits that matter for\n"
           "top-k, then the 'cpu' device (the OpenMP path that needs no OpenCL), and which\n"
           "device 'auto' (the default of --device) picks here.\n"
           "\n"
           "The first column, P:D (platform:device, from 0), is what --device takes.  'auto'\n"
           "means $CLTOPK_DEVICE if set, else the first GPU, else the first OpenCL device,\n"
           "else cpu.\n"
           "\n"
           "Options:\n"
           "  --json      one JSON object: {\"version\", \"auto\", \"devices\": [...]}\n"
           "  --split all|LIST  also open a context of several devices (all of them, or\n"
           "              a comma list such as 0:0,0:1 or gpu,Portable, as --device takes\n"
           "              it) and show how it splits a top-k of 2^26 float32 host data\n"
           "              (k = 32) across them: each device's elements, share and\n"
           "              predicted time (cltopk_explain's split lines: by the model or\n"
           "              by measured speeds, and the rates); may measure the devices'\n"
           "              constants first (seconds on a CPU device)\n"
           "  --measure N with --split: first run N top-ks of that data (radix-select,\n"
           "              split over the devices) so that the split shown is the one by\n"
           "              their measured speeds (a fresh context has measured nothing:\n"
           "              without this the split is the model's); 0 by default\n"
           "  -h, --help  this text\n"
           "\n"
           "A GPU that is missing here is usually a driver whose ICD file is not registered\n"
           "in /etc/OpenCL/vendors; OCL_ICD_VENDORS can point at a directory of .icd files.\n");
}

/* "12.0 GiB" */
static void human_bytes(uint64_t b, char *buf, size_t len)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)b;
    int u = 0;
    while (v >= 1024.0 && u < 4)
        v /= 1024.0, u++;
    if (u == 0)
        snprintf(buf, len, "%" PRIu64 " B", b);
    else
        snprintf(buf, len, "%.*f %s", v < 10 ? 2 : v < 100 ? 1 : 0, v, units[u]);
}

static const char *type_name(const cltopk_device_info *d)
{
    return d->is_gpu ? "GPU" : d->is_cpu ? "CPU" : "other";
}

int cmd_devices(int argc, char **argv)
{
    static const cli_option opts[] = {{1, 0, "json", 0}, {2, 'h', "help", 0}, {3, 0, "split", 1},
                                      {4, 0, "measure", 1}, {0, 0, NULL, 0}};
    const char *split = NULL;
    uint64_t measure = 0;
    cli_parser p;
    const char *arg;
    int json = 0, id;
    cli_init(&p, "devices", argc, argv);
    while ((id = cli_next(&p, opts, &arg)) != -1) {
        if (id == -2)
            return EXIT_USAGE;
        if (id == 0)
            return usage_error("devices", "unexpected argument '%s'", arg);
        if (id == 1)
            json = 1;
        if (id == 2) {
            devices_help();
            return EXIT_OK;
        }
        if (id == 3)
            split = arg;
        if (id == 4 && parse_count(arg, 1000, &measure) < 0)
            return usage_error("devices", "--measure takes a count from 0 to 1000, not '%s'",
                               arg);
    }
    if (measure && !split)
        return usage_error("devices", "--measure needs --split");

    size_t count = cltopk_device_count();
    cltopk_device_info *info = calloc(count ? count : 1, sizeof *info);
    if (!info)
        return fail("devices", "out of memory");
    for (size_t i = 0; i < count; i++) {
        int st = cltopk_device_get(i, &info[i]);
        if (st != CLTOPK_OK) {
            free(info);
            return lib_fail("devices", "cltopk_device_get", st, NULL);
        }
    }

    /* what "auto" opens (as every command's --device resolves it, so that a bad
     * or ambiguous $CLTOPK_DEVICE shows here too): ask the library, then find
     * that device by name */
    cltopk_context *ctx = NULL;
    char auto_spec[32] = "", auto_error[3000] = "", exact[512];
    int bad = device_spec(NULL, exact, sizeof exact, auto_error, sizeof auto_error);
    int st = bad ? CLTOPK_OK : cltopk_open(&ctx, exact);
    if (!bad && st != CLTOPK_OK) {
        snprintf(auto_error, sizeof auto_error, "%s: %s", cltopk_strerror(st),
                 cltopk_last_error(NULL));
    } else if (!bad) {
        const char *name = cltopk_device_name(ctx);
        if (!strcmp(name, "cpu"))
            snprintf(auto_spec, sizeof auto_spec, "cpu");
        for (size_t i = 0; i < count && !auto_spec[0]; i++) {
            char full[300];
            snprintf(full, sizeof full, "%s / %s", info[i].platform_name, info[i].device_name);
            if (!strcmp(full, name))
                snprintf(auto_spec, sizeof auto_spec, "%u:%u", info[i].platform, info[i].device);
        }
        if (!auto_spec[0])
            snprintf(auto_spec, sizeof auto_spec, "?");
        cltopk_close(ctx);
    }
    const char *env = getenv("CLTOPK_DEVICE");
    /* --split: explain's lines from "split" on, for a context of several devices */
    char split_text[8192] = "";
    if (split) {
        cltopk_context *mc = NULL;
        char plan[8192];
        int rc = open_device("devices", split, &mc);
        if (rc) {
            free(info);
            return rc;
        }
        /* --measure: calls that time each device's part, for the split below */
        size_t n = (size_t)1 << 26;
        float *keys = measure ? malloc(n * sizeof *keys) : NULL, top[32];
        if (measure && !keys) {
            cltopk_close(mc);
            free(info);
            return fail("devices", "out of memory for 2^26 floats");
        }
        uint64_t x = 0x9E3779B97F4A7C15u;
        for (size_t i = 0; keys && i < n; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            keys[i] = (float)(x >> 40) * 0x1p-24f;
        }
        for (uint64_t r = 0; r < measure; r++)
            if ((st = cltopk_topk(mc, CLTOPK_FLOAT32, keys, n, 32, 0, CLTOPK_ALGO_RADIX_SELECT,
                                  top, NULL)) != CLTOPK_OK) {
                rc = lib_fail("devices", "cltopk_topk", st, mc);
                free(keys);
                cltopk_close(mc);
                free(info);
                return rc;
            }
        free(keys);
        st = cltopk_explain(mc, CLTOPK_FLOAT32, n, 32, 0, 0, plan, sizeof plan);
        if (st != CLTOPK_OK) {
            rc = lib_fail("devices", "cltopk_explain", st, mc);
            cltopk_close(mc);
            free(info);
            return rc;
        }
        const char *at = strstr(plan, "split");
        snprintf(split_text, sizeof split_text, "context \"%s\": %s\n%s", split,
                 cltopk_device_name(mc), at ? at : "one device: no split\n");
        cltopk_close(mc);
    }

    if (json) {
        printf("{\"version\": ");
        json_string(stdout, cltopk_version_string());
        printf(", \"auto\": ");
        if (auto_spec[0])
            json_string(stdout, auto_spec);
        else
            printf("null");
        if (auto_error[0]) {
            printf(", \"auto_error\": ");
            json_string(stdout, auto_error);
        }
        printf(", \"CLTOPK_DEVICE\": ");
        if (env)
            json_string(stdout, env);
        else
            printf("null");
        if (split) {
            printf(", \"split\": ");
            json_string(stdout, split_text);
        }
        printf(", \"devices\": [");
        for (size_t i = 0; i < count; i++) {
            const cltopk_device_info *d = &info[i];
            char spec[32];
            snprintf(spec, sizeof spec, "%u:%u", d->platform, d->device);
            printf("%s\n  {\"spec\": \"%s\", \"platform\": ", i ? "," : "", spec);
            json_string(stdout, d->platform_name);
            printf(", \"name\": ");
            json_string(stdout, d->device_name);
            printf(", \"version\": ");
            json_string(stdout, d->device_version);
            printf(", \"driver\": ");
            json_string(stdout, d->driver_version);
            printf(", \"type\": \"%s\", \"compute_units\": %u, \"global_mem_bytes\": %" PRIu64
                   ", \"max_alloc_bytes\": %" PRIu64 ", \"local_mem_bytes\": %" PRIu64
                   ", \"max_work_group_size\": %zu, \"fp64\": %s, \"auto\": %s}",
                   type_name(d), d->compute_units, d->global_mem_bytes, d->max_alloc_bytes,
                   d->local_mem_bytes, d->max_work_group_size, d->has_fp64 ? "true" : "false",
                   !strcmp(auto_spec, spec) ? "true" : "false");
        }
        printf("%s\n  {\"spec\": \"cpu\", \"platform\": null, \"name\": \"cpu\", "
               "\"type\": \"host\", \"auto\": %s}\n]}\n",
               count ? "," : "", !strcmp(auto_spec, "cpu") ? "true" : "false");
        free(info);
        return EXIT_OK;
    }

    printf("libcltopk %s\n\n", cltopk_version_string());
    if (count == 0)
        printf("OpenCL devices: none (no OpenCL platform, no driver, or built without OpenCL)\n");
    else
        printf("OpenCL devices: %zu\n", count);
    for (size_t i = 0; i < count; i++) {
        const cltopk_device_info *d = &info[i];
        char spec[32], g[32], a[32], l[32];
        snprintf(spec, sizeof spec, "%u:%u", d->platform, d->device);
        human_bytes(d->global_mem_bytes, g, sizeof g);
        human_bytes(d->max_alloc_bytes, a, sizeof a);
        human_bytes(d->local_mem_bytes, l, sizeof l);
        printf("\n  %-5s %s / %s%s\n", spec, d->platform_name, d->device_name,
               !strcmp(auto_spec, spec) ? "   <- auto" : "");
        printf("        type              %s\n", type_name(d));
        printf("        version           %s\n", d->device_version);
        printf("        driver            %s\n", d->driver_version);
        printf("        compute units     %u\n", d->compute_units);
        printf("        global memory     %s\n", g);
        printf("        max allocation    %s\n", a);
        printf("        local memory      %s\n", l);
        printf("        max work-group    %zu\n", d->max_work_group_size);
        printf("        fp64              %s\n", d->has_fp64 ? "yes" : "no");
    }
    printf("\n  %-5s the host CPU through OpenMP, no OpenCL (algorithm cpu-heap)%s\n", "cpu",
           !strcmp(auto_spec, "cpu") ? "   <- auto" : "");
    printf("\nauto: ");
    if (auto_error[0])
        printf("fails: %s\n", auto_error);
    else
        printf("%s\n", auto_spec);
    if (env)
        printf("      (from CLTOPK_DEVICE=%s)\n", env);
    if (split)
        printf("\nsplit of a top-k of 2^26 float32 host data, k = 32, on the %s", split_text);
    free(info);
    return EXIT_OK;
}
