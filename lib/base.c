/* base.c - the bottom layer: detail texts, status names, OpenCL error names,
 * versions and type names, the environment, the clock and the median.  Calls
 * nothing of the library. */
#include "internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static _Thread_local char open_error[8192];

char *cltopk_open_error(void)
{
    return open_error;
}

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

uint64_t cltopk_fresh_seed(const void *salt)
{
    static uint64_t counter;
    uint64_t c = __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED);
    double t = cltopk_now();
    uint64_t tb;
    memcpy(&tb, &t, sizeof tb);
    return cltopk_mix64(tb ^ cltopk_mix64(c + 0x9E3779B97F4A7C15ull) ^ (uint64_t)(uintptr_t)salt);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double cltopk_median(double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    return t[n / 2];
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
    case CLTOPK_ERR_CORRUPT: return "packed data or a saved index is corrupt";
    case CLTOPK_ERR_INTERNAL: return "internal error (a bug in cltopk)";
    case CLTOPK_ERR_EXPRESSION: return "malformed query expression";
    default: return status < 0 ? "unknown error status" : "unknown status";
    }
}

/* ------------------------------------------------- versions and type names */

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

#if HAVE_OPENCL
const char *cltopk_clerror_name(cl_int err)
{
    switch (err) {
#define E(x) case x: return #x;
    E(CL_SUCCESS) E(CL_DEVICE_NOT_FOUND) E(CL_DEVICE_NOT_AVAILABLE) E(CL_COMPILER_NOT_AVAILABLE)
    E(CL_MEM_OBJECT_ALLOCATION_FAILURE) E(CL_OUT_OF_RESOURCES) E(CL_OUT_OF_HOST_MEMORY)
    E(CL_PROFILING_INFO_NOT_AVAILABLE) E(CL_MEM_COPY_OVERLAP) E(CL_IMAGE_FORMAT_MISMATCH)
    E(CL_IMAGE_FORMAT_NOT_SUPPORTED) E(CL_BUILD_PROGRAM_FAILURE) E(CL_MAP_FAILURE)
    E(CL_MISALIGNED_SUB_BUFFER_OFFSET) E(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    E(CL_COMPILE_PROGRAM_FAILURE) E(CL_LINKER_NOT_AVAILABLE) E(CL_LINK_PROGRAM_FAILURE)
    E(CL_DEVICE_PARTITION_FAILED) E(CL_KERNEL_ARG_INFO_NOT_AVAILABLE) E(CL_INVALID_VALUE)
    E(CL_INVALID_DEVICE_TYPE) E(CL_INVALID_PLATFORM) E(CL_INVALID_DEVICE) E(CL_INVALID_CONTEXT)
    E(CL_INVALID_QUEUE_PROPERTIES) E(CL_INVALID_COMMAND_QUEUE) E(CL_INVALID_HOST_PTR)
    E(CL_INVALID_MEM_OBJECT) E(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR) E(CL_INVALID_IMAGE_SIZE)
    E(CL_INVALID_SAMPLER) E(CL_INVALID_BINARY) E(CL_INVALID_BUILD_OPTIONS) E(CL_INVALID_PROGRAM)
    E(CL_INVALID_PROGRAM_EXECUTABLE) E(CL_INVALID_KERNEL_NAME) E(CL_INVALID_KERNEL_DEFINITION)
    E(CL_INVALID_KERNEL) E(CL_INVALID_ARG_INDEX) E(CL_INVALID_ARG_VALUE) E(CL_INVALID_ARG_SIZE)
    E(CL_INVALID_KERNEL_ARGS) E(CL_INVALID_WORK_DIMENSION) E(CL_INVALID_WORK_GROUP_SIZE)
    E(CL_INVALID_WORK_ITEM_SIZE) E(CL_INVALID_GLOBAL_OFFSET) E(CL_INVALID_EVENT_WAIT_LIST)
    E(CL_INVALID_EVENT) E(CL_INVALID_OPERATION) E(CL_INVALID_GL_OBJECT) E(CL_INVALID_BUFFER_SIZE)
    E(CL_INVALID_MIP_LEVEL) E(CL_INVALID_GLOBAL_WORK_SIZE) E(CL_INVALID_PROPERTY)
    E(CL_INVALID_IMAGE_DESCRIPTOR) E(CL_INVALID_COMPILER_OPTIONS) E(CL_INVALID_LINKER_OPTIONS)
    E(CL_INVALID_DEVICE_PARTITION_COUNT)
#undef E
    case -1001: return "CL_PLATFORM_NOT_FOUND_KHR (the ICD loader found no platform)";
    default: return "unknown OpenCL error";
    }
}

int cltopk_clfail(cltopk_context *ctx, cl_int err, const char *what)
{
    int st = (err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_RESOURCES ||
              err == CL_INVALID_BUFFER_SIZE)
                 ? CLTOPK_ERR_DEVICE_MEMORY
                 : CLTOPK_ERR_OPENCL;
    return cltopk_fail(ctx, st, "%s failed: %s (%d) on %s%s", what, cltopk_clerror_name(err),
                       (int)err, ctx ? ctx->name : "?",
                       st == CLTOPK_ERR_DEVICE_MEMORY
                           ? "; the device is out of memory: free buffers or use smaller inputs"
                           : "");
}
#endif
