/* device.c - OpenCL device discovery, capabilities and limits. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if HAVE_OPENCL



static void info_str(cl_device_id d, cl_device_info what, char *buf, size_t len)
{
    buf[0] = 0;
    if (clGetDeviceInfo(d, what, len, buf, NULL) != CL_SUCCESS)
        buf[0] = 0;
    buf[len - 1] = 0;
    /* trim trailing blanks some drivers leave */
    size_t l = strlen(buf);
    while (l && (buf[l - 1] == ' ' || buf[l - 1] == '\n'))
        buf[--l] = 0;
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

int cltopk_devcaps_query(cl_device_id d, cltopk_devcaps *c)
{
    memset(c, 0, sizeof *c);
    c->device = d;
    if (clGetDeviceInfo(d, CL_DEVICE_PLATFORM, sizeof c->platform, &c->platform, NULL) !=
        CL_SUCCESS)
        return CLTOPK_ERR_OPENCL;
    if (clGetPlatformInfo(c->platform, CL_PLATFORM_NAME, sizeof c->platform_name,
                          c->platform_name, NULL) != CL_SUCCESS)
        c->platform_name[0] = 0;
    c->platform_name[sizeof c->platform_name - 1] = 0;
    info_str(d, CL_DEVICE_NAME, c->device_name, sizeof c->device_name);
    info_str(d, CL_DEVICE_VERSION, c->device_version, sizeof c->device_version);
    info_str(d, CL_DRIVER_VERSION, c->driver_version, sizeof c->driver_version);
    clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof c->type, &c->type, NULL);
    clGetDeviceInfo(d, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof c->global_mem, &c->global_mem, NULL);
    clGetDeviceInfo(d, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof c->max_alloc, &c->max_alloc, NULL);
    clGetDeviceInfo(d, CL_DEVICE_LOCAL_MEM_SIZE, sizeof c->local_mem, &c->local_mem, NULL);
    clGetDeviceInfo(d, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof c->max_wg, &c->max_wg, NULL);
    clGetDeviceInfo(d, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof c->compute_units, &c->compute_units,
                    NULL);
    cl_device_fp_config fp = 0;
    if (clGetDeviceInfo(d, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof fp, &fp, NULL) == CL_SUCCESS)
        c->fp64 = fp != 0;
    char profile[64] = "";
    info_str(d, CL_DEVICE_PROFILE, profile, sizeof profile);
    c->int64 = strcmp(profile, "EMBEDDED_PROFILE") != 0 || has_extension(d, "cl_khr_int64");
    return CLTOPK_OK;
}

int cltopk_devices_scan(cltopk_devcaps **list, size_t *count, char *err, size_t errlen)
{
    *list = NULL;
    *count = 0;
    cl_uint np = 0;
    cl_int e = clGetPlatformIDs(0, NULL, &np);
    if (e != CL_SUCCESS || np == 0) {
        snprintf(err, errlen, "clGetPlatformIDs: %s",
                 e == CL_SUCCESS ? "no platform" : cltopk_clerror_name(e));
        return CLTOPK_OK; /* no platform is not an error: there is simply no device */
    }
    cl_platform_id *plats = calloc(np, sizeof *plats);
    if (!plats)
        return CLTOPK_ERR_NO_MEMORY;
    clGetPlatformIDs(np, plats, NULL);
    size_t cap = 0;
    for (cl_uint p = 0; p < np; p++) {
        cl_uint nd = 0;
        if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 0, NULL, &nd) != CL_SUCCESS || !nd)
            continue;
        cl_device_id *devs = calloc(nd, sizeof *devs);
        cltopk_devcaps *grown = realloc(*list, (cap + nd) * sizeof **list);
        if (!devs || !grown) {
            free(devs);
            free(grown ? grown : *list);
            free(plats);
            *list = NULL;
            *count = 0;
            return CLTOPK_ERR_NO_MEMORY;
        }
        *list = grown;
        cap += nd;
        clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, nd, devs, NULL);
        for (cl_uint d = 0; d < nd; d++) {
            cltopk_devcaps *c = &(*list)[*count];
            if (cltopk_devcaps_query(devs[d], c) != CLTOPK_OK)
                continue;
            c->pi = p;
            c->di = d;
            (*count)++;
        }
        free(devs);
    }
    free(plats);
    return CLTOPK_OK;
}

size_t cltopk_device_count(void)
{
    cltopk_devcaps *list;
    size_t n;
    char err[256];
    if (cltopk_devices_scan(&list, &n, err, sizeof err) != CLTOPK_OK)
        return 0;
    free(list);
    return n;
}

int cltopk_device_get(size_t i, cltopk_device_info *info)
{
    if (!info)
        return CLTOPK_ERR_INVALID_ARGUMENT;
    cltopk_devcaps *list;
    size_t n;
    char err[256];
    int st = cltopk_devices_scan(&list, &n, err, sizeof err);
    if (st != CLTOPK_OK)
        return st;
    if (i >= n) {
        free(list);
        return CLTOPK_ERR_NO_DEVICE;
    }
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
    free(list);
    return CLTOPK_OK;
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
