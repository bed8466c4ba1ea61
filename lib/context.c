/* context.c - open/close, device choice, the context's OpenCL objects. */
#include "internal.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

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
        cl_event *own;
        if (cltopk_after_own(ctx, &own)) {
            clWaitForEvents(1, own);
            clReleaseEvent(ctx->last);
        }
        cltopk_prof_flush(ctx);
        for (size_t m = 0; m < ctx->nmembers; m++)
            cltopk_close(ctx->members[m]);
        free(ctx->members);
        cltopk_scratch_free(ctx);
        cltopk_stage_free(ctx);
        if (ctx->tqueue)
            clReleaseCommandQueue(ctx->tqueue);
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
/* "P:D": two plain decimal numbers below 2^32 (no sign, blank or wrap-around) */
static int parse_pd(const char *s, unsigned *p, unsigned *d)
{
    unsigned long long v[2] = {0, 0};
    for (int i = 0; i < 2; i++) {
        if (!isdigit((unsigned char)*s))
            return 0;
        while (isdigit((unsigned char)*s)) {
            v[i] = v[i] * 10 + (unsigned)(*s++ - '0');
            if (v[i] > 0xFFFFFFFFull)
                return 0;
        }
        if (*s++ != (i ? '\0' : ':'))
            return 0;
    }
    *p = (unsigned)v[0];
    *d = (unsigned)v[1];
    return 1;
}

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
    cltopk_platform_lock(1);
    c->clctx = clCreateContext(props, 1, &c->dev, NULL, NULL, &err);
    if (c->clctx) {
        c->queue = clCreateCommandQueue(c->clctx, c->dev, CL_QUEUE_PROFILING_ENABLE, &err);
        c->inorder = 1; /* no CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE */
        const char *pe = cltopk_env("CLTOPK_PROFILE");
        c->prof = pe && atoi(pe) > 0;
    }
    cltopk_platform_lock(0);
    if (!c->clctx) {
        c->dev = NULL;
        cltopk_close(c);
        return cltopk_fail(NULL, CLTOPK_ERR_OPENCL,
                           "clCreateContext failed on %s / %s: %s (is the driver installed "
                           "and the device free?)",
                           caps->platform_name, caps->device_name, cltopk_clerror_name(err));
    }
    clRetainDevice(c->dev);
    if (!c->queue) {
        cltopk_close(c);
        return cltopk_fail(NULL, CLTOPK_ERR_OPENCL, "clCreateCommandQueue failed on %s: %s",
                           caps->device_name, cltopk_clerror_name(err));
    }
    snprintf(c->name, sizeof c->name, "%s / %s", caps->platform_name, caps->device_name);
    *out = c;
    return CLTOPK_OK;
}

/* the device that `device` names among list[0 .. count) (automatic: the first
 * GPU, else the first device) */
static int pick_device(const char *device, int automatic, const cltopk_devcaps *list,
                       size_t count, const cltopk_devcaps **out)
{
    const cltopk_devcaps *pick = NULL;
    unsigned p, d;
    if (automatic || !strcasecmp(device, "gpu")) {
        for (size_t i = 0; i < count && !pick; i++)
            if (list[i].type & CL_DEVICE_TYPE_GPU)
                pick = &list[i];
        if (!pick && automatic)
            pick = &list[0];
    } else if (parse_pd(device, &p, &d)) {
        for (size_t i = 0; i < count && !pick; i++)
            if (list[i].pi == p && list[i].di == d)
                pick = &list[i];
    } else {
        char names[1024] = "";
        size_t matches = 0, o = 0;
        for (size_t i = 0; i < count; i++) {
            char full[300];
            snprintf(full, sizeof full, "%s / %s", list[i].platform_name, list[i].device_name);
            if (!contains_nocase(full, device))
                continue;
            if (!matches++)
                pick = &list[i];
            int w = snprintf(names + o, sizeof names - o, "%s%u:%u %s", o ? "; " : "",
                             list[i].pi, list[i].di, full);
            if (w > 0 && (size_t)w < sizeof names - o)
                o += (size_t)w;
        }
        if (matches > 1)
            return cltopk_fail(NULL, CLTOPK_ERR_NO_DEVICE,
                               "\"%s\" matches %zu devices (%s); name one by P:D or a longer "
                               "part of its name", device, matches, names);
    }
    if (!pick)
        return cltopk_fail(NULL, CLTOPK_ERR_NO_DEVICE,
                           "no OpenCL device matches \"%s\"; `cltopk devices` lists them (for "
                           "an NVIDIA GPU that is missing, see README: Troubleshooting)",
                           device);
    *out = pick;
    return CLTOPK_OK;
}

/* "all" (every device of list) or a comma list of device specs (each as
 * cltopk_open takes one, but not cpu or auto, and no device twice): the first
 * device's context with the others as its members */
static int open_several(cltopk_context **out, const char *device, const cltopk_devcaps *list,
                        size_t count)
{
    const cltopk_devcaps **picks = calloc(count, sizeof *picks);
    size_t np = 0;
    int st = CLTOPK_OK;
    if (!picks)
        return cltopk_fail(NULL, CLTOPK_ERR_NO_MEMORY, "cltopk_open: out of memory");
    int all = !strcasecmp(device, "all");
    for (size_t i = 0; all && i < count; i++)
        picks[np++] = &list[i];
    /* each item once: a list longer than count names some device twice */
    for (const char *s = device; !all;) {
        const char *e = strchr(s, ',');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        char item[256];
        if (len == 0 || len >= sizeof item) {
            st = cltopk_fail(NULL, CLTOPK_ERR_NO_DEVICE,
                             "the device list \"%s\" has an empty or overlong item; give specs "
                             "separated by single commas, e.g. \"0:0,0:1\" or \"gpu,Portable\"",
                             device);
            break;
        }
        memcpy(item, s, len);
        item[len] = 0;
        if (!strcasecmp(item, "cpu") || !strcasecmp(item, "auto") || !strcasecmp(item, "all")) {
            st = cltopk_fail(NULL, CLTOPK_ERR_NO_DEVICE,
                             "the device list \"%s\" names \"%s\"; a list takes OpenCL devices "
                             "only (P:D, gpu or part of a name)", device, item);
            break;
        }
        const cltopk_devcaps *pick = NULL;
        if ((st = pick_device(item, 0, list, count, &pick)) != CLTOPK_OK)
            break;
        for (size_t i = 0; i < np; i++)
            if (picks[i] == pick)
                st = cltopk_fail(NULL, CLTOPK_ERR_NO_DEVICE,
                                 "the device list \"%s\" names %u:%u twice (\"%s\")", device,
                                 pick->pi, pick->di, item);
        if (st != CLTOPK_OK)
            break;
        picks[np++] = pick;
        if (!e)
            break;
        s = e + 1;
    }
    if (st == CLTOPK_OK && np > CLTOPK_DEVICES_MAX)
        st = cltopk_fail(NULL, CLTOPK_ERR_NO_DEVICE, "\"%s\" names %zu devices; a context takes "
                         "at most %d: list some by P:D", device, np, CLTOPK_DEVICES_MAX);
    cltopk_context *c = NULL;
    if (st == CLTOPK_OK && np > 1) {
        /* room for the members first: nothing to undo but contexts */
        cltopk_context **members = calloc(np - 1, sizeof *members);
        if (!members)
            st = cltopk_fail(NULL, CLTOPK_ERR_NO_MEMORY, "cltopk_open: out of memory");
        else if ((st = open_device(&c, picks[0])) != CLTOPK_OK)
            free(members);
        else
            c->members = members;
        for (size_t i = 1; st == CLTOPK_OK && i < np; i++)
            if ((st = open_device(&c->members[i - 1], picks[i])) == CLTOPK_OK)
                c->nmembers++;
        if (st != CLTOPK_OK) {
            cltopk_close(c);
            c = NULL;
        }
    } else if (st == CLTOPK_OK) {
        st = open_device(&c, picks[0]);
    }
    if (st == CLTOPK_OK && c->nmembers) {
        size_t o = 0;
        for (size_t d = 0; d <= c->nmembers && o < sizeof c->name; d++) {
            const cltopk_devcaps *cp = &cltopk_device_at(c, d)->caps;
            int w = snprintf(c->name + o, sizeof c->name - o, "%s%s / %s", d ? " + " : "",
                             cp->platform_name, cp->device_name);
            o += w > 0 ? (size_t)w : 0;
        }
    }
    free(picks);
    if (st == CLTOPK_OK)
        *out = c;
    return st;
}
#endif

int cltopk_open(cltopk_context **ctx, const char *device)
{
    if (!ctx)
        return cltopk_fail(NULL, CLTOPK_ERR_INVALID_ARGUMENT, "cltopk_open: ctx is NULL");
    *ctx = NULL;
    cltopk_open_error()[0] = 0;
    int automatic = 0;
    if (!device || !strcasecmp(device, "auto")) {
        device = cltopk_env("CLTOPK_DEVICE");
        if (!device || !strcasecmp(device, "auto")) {
            device = NULL;
            automatic = 1;
        }
    }
    if (device && !strcasecmp(device, "cpu"))
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
    if (!automatic && (!strcasecmp(device, "all") || strchr(device, ','))) {
        st = open_several(ctx, device, list, count);
        free(list);
        return st;
    }
    const cltopk_devcaps *pick = NULL;
    st = pick_device(device, automatic, list, count, &pick);
    if (st == CLTOPK_OK)
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
    cl_command_queue_properties qp = 0;
    c->inorder = clGetCommandQueueInfo(queue, CL_QUEUE_PROPERTIES, sizeof qp, &qp, NULL) ==
                     CL_SUCCESS &&
                 !(qp & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
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
