/* context.c - open/close, device choice, last error, names and versions. */
#include "internal.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static _Thread_local char open_error[8192];

const char *cltopk_env(const char *name)
{
    const char *v = getenv(name);
    return (v && *v) ? v : NULL;
}

double cltopk_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int cltopk_fail(cltopk_context *ctx, int status, const char *fmt, ...)
{
    char *buf = ctx ? ctx->err : open_error;
    size_t len = ctx ? sizeof ctx->err : sizeof open_error;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, len, fmt, ap);
    va_end(ap);
    return status;
}

const char *cltopk_last_error(const cltopk_context *ctx)
{
    return ctx ? ctx->err : open_error;
}

const char *cltopk_strerror(int status)
{
    switch (status) {
    case CLTOPK_OK: return "success";
    case CLTOPK_ERR_INVALID_ARGUMENT: return "invalid argument (NULL pointer or bad size)";
    case CLTOPK_ERR_BAD_TYPE: return "unknown element type";
    case CLTOPK_ERR_BAD_ALGO: return "unknown algorithm";
    case CLTOPK_ERR_BAD_FLAGS: return "unknown flag bits";
    case CLTOPK_ERR_K_RANGE: return "k is larger than n";
    case CLTOPK_ERR_RANK_RANGE: return "rank is not below n";
    case CLTOPK_ERR_UNSUPPORTED: return "the named algorithm cannot run this call here";
    case CLTOPK_ERR_NO_DEVICE: return "no device matches";
    case CLTOPK_ERR_NO_OPENCL: return "OpenCL is not available";
    case CLTOPK_ERR_OPENCL: return "an OpenCL call failed";
    case CLTOPK_ERR_BUILD: return "an OpenCL kernel failed to build";
    case CLTOPK_ERR_NO_MEMORY: return "out of host memory";
    case CLTOPK_ERR_DEVICE_MEMORY: return "out of device memory";
    case CLTOPK_ERR_BUFFER_SIZE: return "a device buffer is too small for the call";
    case CLTOPK_ERR_CORRUPT: return "packed data is corrupt";
    case CLTOPK_ERR_INTERNAL: return "internal error (a bug in cltopk)";
    default: return status < 0 ? "unknown error status" : "unknown status";
    }
}

const char *cltopk_version_string(void)
{
    return CLTOPK_VERSION_STRING;
}

unsigned cltopk_version_number(void)
{
    return CLTOPK_VERSION_NUMBER;
}

/* ------------------------------------------------------------- type names */

static const char *const dtype_names[] = {"f32", "f64", "i32", "u32", "i64", "u64"};
static const char *const dtype_alias[] = {"float", "double", "int32", "uint32", "int64", "uint64"};
static const char *const algo_names[] = {"auto", "bitonic", "sbp-radix", "sbp-tree",
                                         "radix-select", "sort", "cpu-heap", "cpu-bitonic",
                                         "cpu-radix", "sample-filter"};

size_t cltopk_dtype_size(cltopk_dtype type)
{
    switch (type) {
    case CLTOPK_FLOAT32: case CLTOPK_INT32: case CLTOPK_UINT32: return 4;
    case CLTOPK_FLOAT64: case CLTOPK_INT64: case CLTOPK_UINT64: return 8;
    default: return 0;
    }
}

const char *cltopk_dtype_name(cltopk_dtype type)
{
    return ((unsigned)type < 6) ? dtype_names[type] : NULL;
}

int cltopk_dtype_parse(const char *name, cltopk_dtype *type)
{
    if (!name || !type)
        return CLTOPK_ERR_INVALID_ARGUMENT;
    for (int i = 0; i < 6; i++)
        if (!strcmp(name, dtype_names[i]) || !strcmp(name, dtype_alias[i])) {
            *type = (cltopk_dtype)i;
            return CLTOPK_OK;
        }
    return CLTOPK_ERR_BAD_TYPE;
}

const char *cltopk_algo_name(cltopk_algo algo)
{
    return ((unsigned)algo < sizeof algo_names / sizeof *algo_names) ? algo_names[algo] : NULL;
}

int cltopk_algo_parse(const char *name, cltopk_algo *algo)
{
    if (!name || !algo)
        return CLTOPK_ERR_INVALID_ARGUMENT;
    for (int i = 0; i < (int)(sizeof algo_names / sizeof *algo_names); i++) {
        const char *a = algo_names[i], *b = name;
        while (*a && (*a == *b || (*a == '-' && *b == '_')))
            a++, b++;
        if (!*a && !*b) {
            *algo = (cltopk_algo)i;
            return CLTOPK_OK;
        }
    }
    return CLTOPK_ERR_BAD_ALGO;
}

/* ---------------------------------------------------------------- contexts */

static cltopk_context *context_new(void)
{
    cltopk_context *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    pthread_mutex_init(&c->lock, NULL);
    return c;
}

void cltopk_close(cltopk_context *ctx)
{
    if (!ctx)
        return;
#if HAVE_OPENCL
    if (ctx->is_cl) {
        if (ctx->last) {
            clWaitForEvents(1, &ctx->last);
            clReleaseEvent(ctx->last);
        }
        cltopk_scratch_free(ctx);
        cltopk_programs_free(ctx);
        if (ctx->queue)
            clReleaseCommandQueue(ctx->queue);
        if (ctx->clctx)
            clReleaseContext(ctx->clctx);
        if (ctx->dev)
            clReleaseDevice(ctx->dev);
    }
#endif
    pthread_mutex_destroy(&ctx->lock);
    free(ctx);
}

const char *cltopk_device_name(const cltopk_context *ctx)
{
    return ctx ? ctx->name : "";
}

static int open_cpu(cltopk_context **out)
{
    cltopk_context *c = context_new();
    if (!c)
        return cltopk_fail(NULL, CLTOPK_ERR_NO_MEMORY, "cltopk_open: out of memory");
    snprintf(c->name, sizeof c->name, "cpu");
    *out = c;
    return CLTOPK_OK;
}

#if HAVE_OPENCL
static int contains_nocase(const char *hay, const char *needle)
{
    size_t nl = strlen(needle);
    for (; *hay; hay++) {
        size_t i = 0;
        while (i < nl && hay[i] && tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]))
            i++;
        if (i == nl)
            return 1;
    }
    return nl == 0;
}

static int open_device(cltopk_context **out, const cltopk_devcaps *caps)
{
    cl_int err;
    cltopk_context *c = context_new();
    if (!c)
        return cltopk_fail(NULL, CLTOPK_ERR_NO_MEMORY, "cltopk_open: out of memory");
    c->is_cl = 1;
    c->caps = *caps;
    c->dev = caps->device;
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)caps->platform,
                                     0};
    c->clctx = clCreateContext(props, 1, &c->dev, NULL, NULL, &err);
    if (!c->clctx) {
        c->dev = NULL;
        cltopk_close(c);
        return cltopk_fail(NULL, CLTOPK_ERR_OPENCL,
                           "clCreateContext failed on %s / %s: %s (is the driver installed "
                           "and the device free?)",
                           caps->platform_name, caps->device_name, cltopk_clerror_name(err));
    }
    clRetainDevice(c->dev);
    c->queue = clCreateCommandQueue(c->clctx, c->dev, CL_QUEUE_PROFILING_ENABLE, &err);
    if (!c->queue) {
        cltopk_close(c);
        return cltopk_fail(NULL, CLTOPK_ERR_OPENCL, "clCreateCommandQueue failed on %s: %s",
                           caps->device_name, cltopk_clerror_name(err));
    }
    snprintf(c->name, sizeof c->name, "%s / %s", caps->platform_name, caps->device_name);
    *out = c;
    return CLTOPK_OK;
}
#endif

int cltopk_open(cltopk_context **ctx, const char *device)
{
    if (!ctx)
        return cltopk_fail(NULL, CLTOPK_ERR_INVALID_ARGUMENT, "cltopk_open: ctx is NULL");
    *ctx = NULL;
    open_error[0] = 0;
    int automatic = 0;
    if (!device || !strcmp(device, "auto")) {
        device = cltopk_env("CLTOPK_DEVICE");
        if (!device || !strcmp(device, "auto")) {
            device = NULL;
            automatic = 1;
        }
    }
    if (device && !strcmp(device, "cpu"))
        return open_cpu(ctx);
#if HAVE_OPENCL
    cltopk_devcaps *list = NULL;
    size_t count = 0;
    char err[1024] = "";
    int st = cltopk_devices_scan(&list, &count, err, sizeof err);
    if (st != CLTOPK_OK || count == 0) {
        free(list);
        if (automatic)
            return open_cpu(ctx);
        return cltopk_fail(NULL, count == 0 && st == CLTOPK_OK ? CLTOPK_ERR_NO_DEVICE : st,
                           "no OpenCL device found for \"%s\" (%s); install an OpenCL driver "
                           "(e.g. pocl-opencl-icd) or use the \"cpu\" device",
                           device, err[0] ? err : "no platform reports a device");
    }
    const cltopk_devcaps *pick = NULL;
    unsigned p, d;
    char tail;
    if (automatic || !strcmp(device, "gpu")) {
        for (size_t i = 0; i < count && !pick; i++)
            if (list[i].type & CL_DEVICE_TYPE_GPU)
                pick = &list[i];
        if (!pick && automatic)
            pick = &list[0];
    } else if (sscanf(device, "%u:%u%c", &p, &d, &tail) == 2) {
        for (size_t i = 0; i < count && !pick; i++)
            if (list[i].pi == p && list[i].di == d)
                pick = &list[i];
    } else {
        for (size_t i = 0; i < count && !pick; i++) {
            char full[300];
            snprintf(full, sizeof full, "%s / %s", list[i].platform_name, list[i].device_name);
            if (contains_nocase(full, device))
                pick = &list[i];
        }
    }
    if (!pick) {
        free(list);
        return cltopk_fail(NULL, CLTOPK_ERR_NO_DEVICE,
                           "no OpenCL device matches \"%s\"; `cltopk devices` lists them (for "
                           "an NVIDIA GPU that is missing, see README: Troubleshooting)",
                           device);
    }
    st = open_device(ctx, pick);
    free(list);
    return st;
#else
    if (automatic)
        return open_cpu(ctx);
    return cltopk_fail(NULL, CLTOPK_ERR_NO_OPENCL,
                       "device \"%s\" needs OpenCL, but this cltopk was built without it; "
                       "use \"cpu\" or rebuild with the OpenCL headers and ICD loader",
                       device);
#endif
}

int cltopk_open_cl(cltopk_context **ctx, cl_context context, cl_device_id device,
                   cl_command_queue queue)
{
    if (!ctx)
        return cltopk_fail(NULL, CLTOPK_ERR_INVALID_ARGUMENT, "cltopk_open_cl: ctx is NULL");
    *ctx = NULL;
#if HAVE_OPENCL
    if (!context || !device || !queue)
        return cltopk_fail(NULL, CLTOPK_ERR_INVALID_ARGUMENT,
                           "cltopk_open_cl: context, device and queue must all be given");
    cltopk_context *c = context_new();
    if (!c)
        return cltopk_fail(NULL, CLTOPK_ERR_NO_MEMORY, "cltopk_open_cl: out of memory");
    int st = cltopk_devcaps_query(device, &c->caps);
    if (st != CLTOPK_OK) {
        free(c);
        return cltopk_fail(NULL, st, "cltopk_open_cl: the device does not answer clGetDeviceInfo");
    }
    c->is_cl = 1;
    c->clctx = context;
    c->dev = device;
    c->queue = queue;
    clRetainContext(context);
    clRetainDevice(device);
    clRetainCommandQueue(queue);
    snprintf(c->name, sizeof c->name, "%s / %s", c->caps.platform_name, c->caps.device_name);
    *ctx = c;
    return CLTOPK_OK;
#else
    (void)context, (void)device, (void)queue;
    return cltopk_fail(NULL, CLTOPK_ERR_NO_OPENCL, "cltopk_open_cl: built without OpenCL");
#endif
}

int cltopk_get_cl(const cltopk_context *ctx, cl_context *context, cl_device_id *device,
                  cl_command_queue *queue)
{
    if (!ctx)
        return CLTOPK_ERR_INVALID_ARGUMENT;
#if HAVE_OPENCL
    if (!ctx->is_cl)
        return CLTOPK_ERR_NO_OPENCL;
    if (context)
        *context = ctx->clctx;
    if (device)
        *device = ctx->dev;
    if (queue)
        *queue = ctx->queue;
    return CLTOPK_OK;
#else
    (void)context, (void)device, (void)queue;
    return CLTOPK_ERR_NO_OPENCL;
#endif
}
