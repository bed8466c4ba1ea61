/* device.c - OpenCL device discovery (once per process), capabilities and limits. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if HAVE_OPENCL



/* A string query into buf; "?" when the query fails or its answer does not
 * fit (buf is never left unset for the string functions). */
static void info_str(cl_device_id d, cl_device_info what, char *buf, size_t len)
{
    size_t got = 0;
    buf[0] = 0;
    if (clGetDeviceInfo(d, what, len, buf, &got) != CL_SUCCESS || got == 0 || got > len) {
        snprintf(buf, len, "?");
        return;
    }
    buf[got - 1] = 0;
    buf[len - 1] = 0;
    /* trim trailing blanks some drivers leave */
    size_t l = strlen(buf);
    while (l && (buf[l - 1] == ' ' || buf[l - 1] == '\n'))
        buf[--l] = 0;
}

/* A numeric query into out (size bytes); 0 when it fails. */
static void info_num(cl_device_id d, cl_device_info what, void *out, size_t size)
{
    if (clGetDeviceInfo(d, what, size, out, NULL) != CL_SUCCESS)
        memset(out, 0, size);
}

/* 1 if the space-separated extension list of d holds exactly the token ext */
static int has_extension(cl_device_id d, const char *ext)
{
    size_t len = 0;
    if (clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, 0, NULL, &len) != CL_SUCCESS || !len)
        return 0;
    char *list = malloc(len + 1);
    if (!list)
        return 0;
    int found = 0;
    if (clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, len, list, NULL) == CL_SUCCESS) {
        list[len] = 0;
        size_t el = strlen(ext);
        for (char *p = list; *p;) {
            while (*p == ' ')
                p++;
            size_t tl = strcspn(p, " ");
            if (tl == el && !strncmp(p, ext, el))
                found = 1;
            p += tl;
        }
    }
    free(list);
    return found;
}

/* The scan of the platforms and their devices is done once per process, under
 * scan_lock, and kept: an OpenCL platform need not be thread-safe while it
 * initialises (POCL crashes when several threads query it at once in a fresh
 * process).  Device queries take the same lock. */
static pthread_mutex_t scan_lock = PTHREAD_MUTEX_INITIALIZER;
static int scanned;                 /* under scan_lock; then the list never changes */
static cltopk_devcaps *scan_list;
static size_t scan_count;
static char scan_err[256];

static int caps_query(cl_device_id d, cltopk_devcaps *c)
{
    memset(c, 0, sizeof *c);
    c->device = d;
    if (clGetDeviceInfo(d, CL_DEVICE_PLATFORM, sizeof c->platform, &c->platform, NULL) !=
        CL_SUCCESS)
        return CLTOPK_ERR_OPENCL;
    size_t got = 0;
    if (clGetPlatformInfo(c->platform, CL_PLATFORM_NAME, sizeof c->platform_name,
                          c->platform_name, &got) != CL_SUCCESS ||
        got == 0 || got > sizeof c->platform_name)
        snprintf(c->platform_name, sizeof c->platform_name, "?");
    c->platform_name[sizeof c->platform_name - 1] = 0;
    c->ptx = strstr(c->platform_name, "NVIDIA") != NULL;
    info_str(d, CL_DEVICE_NAME, c->device_name, sizeof c->device_name);
    info_str(d, CL_DEVICE_VERSION, c->device_version, sizeof c->device_version);
    info_str(d, CL_DRIVER_VERSION, c->driver_version, sizeof c->driver_version);
    /* a failed numeric query leaves 0 (unknown) */
    info_num(d, CL_DEVICE_TYPE, &c->type, sizeof c->type);
    info_num(d, CL_DEVICE_GLOBAL_MEM_SIZE, &c->global_mem, sizeof c->global_mem);
    info_num(d, CL_DEVICE_MAX_MEM_ALLOC_SIZE, &c->max_alloc, sizeof c->max_alloc);
    info_num(d, CL_DEVICE_LOCAL_MEM_SIZE, &c->local_mem, sizeof c->local_mem);
    info_num(d, CL_DEVICE_MAX_WORK_GROUP_SIZE, &c->max_wg, sizeof c->max_wg);
    info_num(d, CL_DEVICE_MAX_COMPUTE_UNITS, &c->compute_units, sizeof c->compute_units);
    cl_uint abits; /* (bits) */
    info_num(d, CL_DEVICE_MEM_BASE_ADDR_ALIGN, &abits, sizeof abits);
    c->base_align = abits >= 64 ? abits / 8 : 8;
    info_num(d, CL_DEVICE_SINGLE_FP_CONFIG, &c->fp32_config, sizeof c->fp32_config);
    info_num(d, CL_DEVICE_DOUBLE_FP_CONFIG, &c->fp64_config, sizeof c->fp64_config);
    c->fp64 = c->fp64_config != 0;
    char profile[64] = "";
    info_str(d, CL_DEVICE_PROFILE, profile, sizeof profile);
    c->int64 = strcmp(profile, "EMBEDDED_PROFILE") != 0 || has_extension(d, "cl_khr_int64");
    return CLTOPK_OK;
}

int cltopk_devcaps_query(cl_device_id d, cltopk_devcaps *c)
{
    pthread_mutex_lock(&scan_lock);
    int st = caps_query(d, c);
    pthread_mutex_unlock(&scan_lock);
    return st;
}

/* the scan itself, under scan_lock: CLTOPK_OK (with or without devices, the
 * reason for none in scan_err) or CLTOPK_ERR_NO_MEMORY (not kept: tried again) */
static int scan_devices(void)
{
    cltopk_devcaps *list = NULL;
    size_t count = 0, cap = 0;
    scan_err[0] = 0;
    cl_uint np = 0;
    cl_int e = clGetPlatformIDs(0, NULL, &np);
    if (e != CL_SUCCESS || np == 0) {
        snprintf(scan_err, sizeof scan_err, "clGetPlatformIDs: %s",
                 e == CL_SUCCESS ? "no platform" : cltopk_clerror_name(e));
        return CLTOPK_OK; /* no platform is not an error: there is simply no device */
    }
    cl_platform_id *plats = calloc(np, sizeof *plats);
    if (!plats)
        return CLTOPK_ERR_NO_MEMORY;
    e = clGetPlatformIDs(np, plats, &np);
    if (e != CL_SUCCESS) {
        snprintf(scan_err, sizeof scan_err, "clGetPlatformIDs: %s", cltopk_clerror_name(e));
        np = 0;
    }
    for (cl_uint p = 0; p < np; p++) {
        cl_uint nd = 0;
        if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 0, NULL, &nd) != CL_SUCCESS || !nd)
            continue;
        cl_device_id *devs = calloc(nd, sizeof *devs);
        cltopk_devcaps *grown = realloc(list, (cap + nd) * sizeof *list);
        if (!devs || !grown) {
            free(devs);
            free(grown ? grown : list);
            free(plats);
            return CLTOPK_ERR_NO_MEMORY;
        }
        list = grown;
        cap += nd;
        cl_uint got = 0;
        if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, nd, devs, &got) != CL_SUCCESS)
            got = 0;
        for (cl_uint d = 0; d < got && d < nd; d++) {
            cltopk_devcaps *c = &list[count];
            if (caps_query(devs[d], c) != CLTOPK_OK)
                continue;
            c->pi = p;
            c->di = d;
            count++;
        }
        free(devs);
    }
    free(plats);
    scan_list = list;
    scan_count = count;
    return CLTOPK_OK;
}

/* the process's device list (never freed, never changed once made) */
static int scan_once(const cltopk_devcaps **list, size_t *count)
{
    int st = CLTOPK_OK;
    pthread_mutex_lock(&scan_lock);
    if (!scanned) {
        st = scan_devices();
        scanned = st == CLTOPK_OK;
    }
    pthread_mutex_unlock(&scan_lock);
    *list = scan_list;
    *count = scanned ? scan_count : 0;
    return st;
}

int cltopk_devices_scan(cltopk_devcaps **list, size_t *count, char *err, size_t errlen)
{
    const cltopk_devcaps *all;
    size_t n;
    *list = NULL;
    *count = 0;
    int st = scan_once(&all, &n);
    if (st != CLTOPK_OK)
        return st;
    if (errlen)
        snprintf(err, errlen, "%s", scan_err);
    if (n == 0)
        return CLTOPK_OK;
    *list = malloc(n * sizeof *all);
    if (!*list)
        return CLTOPK_ERR_NO_MEMORY;
    memcpy(*list, all, n * sizeof *all);
    *count = n;
    return CLTOPK_OK;
}

size_t cltopk_device_count(void)
{
    const cltopk_devcaps *list;
    size_t n;
    if (scan_once(&list, &n) != CLTOPK_OK)
        return 0;
    return n;
}

int cltopk_device_get(size_t i, cltopk_device_info *info)
{
    if (!info)
        return CLTOPK_ERR_INVALID_ARGUMENT;
    const cltopk_devcaps *list;
    size_t n;
    int st = scan_once(&list, &n);
    if (st != CLTOPK_OK)
        return st;
    if (i >= n)
        return CLTOPK_ERR_NO_DEVICE;
    const cltopk_devcaps *c = &list[i];
    memset(info, 0, sizeof *info);
    info->platform = c->pi;
    info->device = c->di;
    snprintf(info->platform_name, sizeof info->platform_name, "%s", c->platform_name);
    snprintf(info->device_name, sizeof info->device_name, "%s", c->device_name);
    snprintf(info->device_version, sizeof info->device_version, "%s", c->device_version);
    snprintf(info->driver_version, sizeof info->driver_version, "%s", c->driver_version);
    info->is_gpu = (c->type & CL_DEVICE_TYPE_GPU) != 0;
    info->is_cpu = (c->type & CL_DEVICE_TYPE_CPU) != 0;
    info->global_mem_bytes = c->global_mem;
    info->max_alloc_bytes = c->max_alloc;
    info->local_mem_bytes = c->local_mem;
    info->max_work_group_size = c->max_wg;
    info->compute_units = c->compute_units;
    info->has_fp64 = c->fp64;
    return CLTOPK_OK;
}

/* the process-wide lock of the device scan, also held while a context and its
 * queue are created: POCL 5.0 aborted with 4 threads creating contexts at once */
void cltopk_platform_lock(int lock)
{
    if (lock)
        pthread_mutex_lock(&scan_lock);
    else
        pthread_mutex_unlock(&scan_lock);
}

/* POCL's major version on a POCL device, else 0: its work-group compilers of
 * versions 4 and 5 abort on some kernels that others run (the records that
 * work around them say which) */
int cltopk_pocl_major(const cltopk_context *ctx)
{
    if (!ctx->is_cl || !strstr(ctx->caps.platform_name, "Portable Computing Language"))
        return 0;
    return atoi(ctx->caps.driver_version);
}

/* CLTOPK_FP_CONFIG (parsed strictly, lib/tune.h): denorm=0 treats the device
 * as lacking CL_FP_DENORM in both configurations, so that the refusal and the
 * CPU paths it leads to can be tested on a device that keeps subnormals
 * (POCL); 1, the default, takes the device's word */
static const cltopk_param fp_params[] = {
    {.name = "denorm", .gpu = 1, .cpu = 1, .min = 0, .max = 1, .integer = 1},
};
static const cltopk_param_table fp_table = {"CLTOPK_FP_CONFIG", fp_params,
                                            sizeof fp_params / sizeof fp_params[0], NULL};

/* CL_FP_FMA is not asked for: it says the device fuses in hardware, while
 * OpenCL's fma() is correctly rounded on every device, full and embedded
 * profile alike (done in software where the hardware cannot: slower, the
 * same bits).  Flushed subnormals, round toward zero (the embedded profile's
 * other default for float32) and missing inf and NaN change bits. */
int cltopk_fp_exact(const cltopk_context *ctx, int fp64, char *why, size_t whylen)
{
    static const struct {
        cl_device_fp_config bit;
        const char *name;
    } need[] = {{CL_FP_DENORM, "CL_FP_DENORM"},
                {CL_FP_ROUND_TO_NEAREST, "CL_FP_ROUND_TO_NEAREST"},
                {CL_FP_INF_NAN, "CL_FP_INF_NAN"}};
    cltopk_tune_for f = {(ctx->caps.type & CL_DEVICE_TYPE_GPU) != 0, ctx->caps.device_name, 4,
                         -1, 0};
    cltopk_params p;
    if (cltopk_params_get(NULL, &fp_table, &f, &p, why, whylen) != 0)
        return 0;
    cl_device_fp_config drop = p.v[0] == 0 ? CL_FP_DENORM : 0;
    for (int w = 0; w < 1 + (fp64 != 0); w++) {
        cl_device_fp_config have = (w ? ctx->caps.fp64_config : ctx->caps.fp32_config) & ~drop;
        for (size_t i = 0; i < sizeof need / sizeof need[0]; i++)
            if (!(have & need[i].bit)) {
                snprintf(why, whylen, "%s lacks %s in CL_DEVICE_%s_FP_CONFIG%s: its float%d "
                         "arithmetic may not give the CPU's bits", ctx->name, need[i].name,
                         w ? "DOUBLE" : "SINGLE",
                         (drop & need[i].bit) ? " (CLTOPK_FP_CONFIG=denorm=0 says so)" : "",
                         w ? 64 : 32);
                return 0;
            }
    }
    return 1;
}

#else /* !HAVE_OPENCL */

size_t cltopk_device_count(void)
{
    return 0;
}

int cltopk_device_get(size_t i, cltopk_device_info *info)
{
    (void)i;
    return info ? CLTOPK_ERR_NO_DEVICE : CLTOPK_ERR_INVALID_ARGUMENT;
}


#endif
