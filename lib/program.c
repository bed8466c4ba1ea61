/* program.c - kernel source assembly, builds, and the two program caches.
 *
 * A program is the embedded cl/common.cl, cl/schedule.h and cl/bitpack.h
 * followed by one kernel file (its lines #include "NAME" of other embedded
 * files, such as cl/tile.h, replaced by their text), built with
 * "-D" options that specialise it.  Built programs are kept per context (memory
 * cache); their binaries are also kept on disk, keyed by library version, device,
 * driver, options and the full source, and written with a temporary file and a
 * rename (lib/cachefile.c: a private directory, no link or FIFO followed).  Any
 * problem reading the disk cache is a miss. */
#include "internal.h"

#if HAVE_OPENCL

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static pthread_mutex_t disk_lock = PTHREAD_MUTEX_INITIALIZER;

static const cltopk_kernel_source *find_source(const char *name)
{
    for (size_t i = 0; i < cltopk_kernel_source_count; i++)
        if (!strcmp(cltopk_kernel_sources[i].name, name))
            return &cltopk_kernel_sources[i];
    return NULL;
}

static uint64_t fnv(uint64_t h, const void *data, size_t len)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

static uint64_t fnv_str(uint64_t h, const char *s)
{
    return fnv(h, s, strlen(s) + 1);
}

/* a kernel object, created once per (program, name) of a context */
struct cltopk_kernel_entry {
    struct cltopk_kernel_entry *next;
    cl_program program;
    cl_kernel kernel;
    char name[64];
};

void cltopk_programs_free(cltopk_context *ctx)
{
    while (ctx->kernels) {
        struct cltopk_kernel_entry *e = ctx->kernels;
        ctx->kernels = e->next;
        clReleaseKernel(e->kernel);
        free(e);
    }
    cltopk_program *p = ctx->programs;
    while (p) {
        cltopk_program *next = p->next;
        clReleaseProgram(p->program);
        free(p->options);
        free(p);
        p = next;
    }
    ctx->programs = NULL;
}

/* ------------------------------------------------------------- disk cache */

/* The cache directory, or 0 when the disk cache is off: CLTOPK_CACHE=0, no
 * directory, or one that others could tamper with (not the effective user's,
 * or writable by group or others: then the cache is off as with
 * CLTOPK_CACHE=0, silently; lib/cachefile.c checks again at each use). */
static int cache_dir(char *buf, size_t len)
{
    const char *off = cltopk_env("CLTOPK_CACHE");
    if (off && !strcmp(off, "0"))
        return 0;
    const char *d = cltopk_env("CLTOPK_CACHE_DIR");
    int n;
    if (d)
        n = snprintf(buf, len, "%s", d);
    else if ((d = cltopk_env("XDG_CACHE_HOME")))
        n = snprintf(buf, len, "%s/cltopk", d);
    else if ((d = cltopk_env("HOME")))
        n = snprintf(buf, len, "%s/.cache/cltopk", d);
    else
        return 0;
    return n > 0 && (size_t)n < len && cltopk_cachedir_usable(buf);
}

/* mkdir -p; what it makes is the user's alone (0700) */
static int mkdirs(char *path)
{
    for (char *p = path + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        int r = mkdir(path, 0700);
        *p = '/';
        if (r != 0 && errno != EEXIST)
            return -1;
    }
    return (mkdir(path, 0700) == 0 || errno == EEXIST) ? 0 : -1;
}

/* the cache directory and mkdir -p, for the planner's constants */
int cltopk_cache_dir(char *buf, size_t len)
{
    return cache_dir(buf, len);
}

int cltopk_mkdirs(char *path)
{
    return mkdirs(path);
}

/* File layout: "CLTOPKBIN2\n", key text length (uint32), key text, binary length
 * (uint64), binary, FNV-1a hash of the binary (uint64).  The key text is compared
 * in full, so a hash collision is a miss, not a wrong program; the hash makes a
 * damaged binary a miss instead of something handed to the driver.  The file
 * must be exactly as long as its header says: nothing past that is read. */
static unsigned char *cache_read(const char *path, const char *keytext, size_t *size)
{
    uint64_t fsize;
    int fd = cltopk_cachefile_open(path, &fsize);
    if (fd < 0)
        return NULL;
    unsigned char *bin = NULL;
    char magic[11];
    uint32_t kl;
    uint64_t bl;
    size_t tl = strlen(keytext);
    char *kt = NULL;
    if (cltopk_cachefile_read(fd, magic, 11) != 0 || memcmp(magic, "CLTOPKBIN2\n", 11) ||
        cltopk_cachefile_read(fd, &kl, sizeof kl) != 0 || kl != tl)
        goto out;
    kt = malloc(tl + 1);
    if (!kt || cltopk_cachefile_read(fd, kt, tl) != 0 || memcmp(kt, keytext, tl))
        goto out;
    if (cltopk_cachefile_read(fd, &bl, sizeof bl) != 0 || bl == 0 || bl > (1u << 30) ||
        fsize != 11 + sizeof kl + tl + sizeof bl + bl + sizeof(uint64_t))
        goto out;
    bin = malloc(bl);
    uint64_t sum = 0;
    if (!bin || cltopk_cachefile_read(fd, bin, bl) != 0 ||
        cltopk_cachefile_read(fd, &sum, sizeof sum) != 0 ||
        sum != fnv(0xcbf29ce484222325ull, bin, bl)) {
        free(bin);
        bin = NULL;
        goto out;
    }
    *size = bl;
out:
    free(kt);
    close(fd);
    return bin;
}

static void cache_write(const char *dir, const char *path, const char *keytext,
                        const unsigned char *bin, size_t size)
{
    char dcopy[4096];
    int dl = snprintf(dcopy, sizeof dcopy, "%s", dir);
    if (dl < 0 || (size_t)dl >= sizeof dcopy || mkdirs(dcopy) != 0)
        return;
    uint32_t kl = (uint32_t)strlen(keytext);
    uint64_t bl = size, sum = fnv(0xcbf29ce484222325ull, bin, size);
    const void *parts[6] = {"CLTOPKBIN2\n", &kl, keytext, &bl, bin, &sum};
    const size_t lens[6] = {11, sizeof kl, kl, sizeof bl, size, sizeof sum};
    if (cltopk_cachefile_write(path, 6, parts, lens) != 0) {
        /* not written: only a miss next time */
    }
}

/* --------------------------------------------------------------- building */

static void keep_log(cltopk_context *ctx, cl_program prog, const char *file, const char *opts,
                     int failed)
{
    size_t len = 0;
    if (clGetProgramBuildInfo(prog, ctx->dev, CL_PROGRAM_BUILD_LOG, 0, NULL, &len) != CL_SUCCESS)
        return;
    char *log = malloc(len + 1);
    if (!log)
        return;
    if (clGetProgramBuildInfo(prog, ctx->dev, CL_PROGRAM_BUILD_LOG, len, log, NULL) !=
        CL_SUCCESS)
        len = 0;
    log[len] = 0;
    const char *show = cltopk_env("CLTOPK_SHOW_BUILD_LOG");
    if (show && strcmp(show, "0") && len > 1)
        fprintf(stderr, "cltopk: build log of %s [%s] on %s:\n%s\n", file, opts, ctx->name, log);
    if (failed)
        cltopk_fail(ctx, CLTOPK_ERR_BUILD,
                    "building %s with \"%s\" failed on %s; the build log follows (set "
                    "CLTOPK_SHOW_BUILD_LOG=1 to print every log):\n%s",
                    file, opts, ctx->name, log);
    free(log);
}

static int build(cltopk_context *ctx, const cltopk_kernel_source *common,
                 const cltopk_kernel_source *sched, const cltopk_kernel_source *bp,
                 const cltopk_kernel_source *src,
                 const char *file, const char *opts, cl_program *out, int *from_disk)
{
    cl_int err;
    char dir[4096], path[4200];
    const cltopk_devcaps *c = &ctx->caps;
    size_t keylen = strlen(opts) + 1024;
    char *keytext = malloc(keylen);
    if (!keytext)
        return cltopk_fail(ctx, CLTOPK_ERR_NO_MEMORY, "out of memory building %s", file);
    int kt = snprintf(keytext, keylen, "v=%s\np=%s\nd=%s\ndv=%s\ndr=%s\no=%s\nf=%s\n",
                      CLTOPK_VERSION_STRING, c->platform_name, c->device_name,
                      c->device_version, c->driver_version, opts, file);
    uint64_t h = fnv_str(0xcbf29ce484222325ull, keytext);
    h = fnv(h, common->data, common->size);
    h = fnv(h, sched->data, sched->size);
    h = fnv(h, bp->data, bp->size); /* cl/bitpack.h */
    h = fnv(h, src->data, src->size);
    /* the source itself is in the hash; its length in the key text guards it too */
    snprintf(keytext + kt, keylen - (size_t)kt, "s=%zu:%zu:%zu:%016llx\n", common->size,
             sched->size, src->size, (unsigned long long)h);
    int use_disk = cache_dir(dir, sizeof dir);
    if (use_disk)
        snprintf(path, sizeof path, "%s/%016llx.bin", dir, (unsigned long long)h);

    *from_disk = 0;
    cl_program prog = NULL;
    if (use_disk) {
        size_t bsize = 0;
        pthread_mutex_lock(&disk_lock);
        unsigned char *bin = cache_read(path, keytext, &bsize);
        pthread_mutex_unlock(&disk_lock);
        if (bin) {
            const unsigned char *bins[1] = {bin};
            cl_int bst;
            prog = clCreateProgramWithBinary(ctx->clctx, 1, &ctx->dev, &bsize, bins, &bst, &err);
            free(bin);
            if (prog && (bst != CL_SUCCESS ||
                         clBuildProgram(prog, 1, &ctx->dev, opts, NULL, NULL) != CL_SUCCESS)) {
                clReleaseProgram(prog);
                prog = NULL;
            }
            if (prog)
                *from_disk = 1;
        }
    }
    if (!prog) {
        const char *strs[4] = {(const char *)common->data, (const char *)sched->data,
                               (const char *)bp->data, (const char *)src->data};
        size_t lens[4] = {common->size, sched->size, bp->size, src->size};
        prog = clCreateProgramWithSource(ctx->clctx, 4, strs, lens, &err);
        if (!prog) {
            free(keytext);
            return cltopk_clfail(ctx, err, "clCreateProgramWithSource");
        }
        err = clBuildProgram(prog, 1, &ctx->dev, opts, NULL, NULL);
        keep_log(ctx, prog, file, opts, err != CL_SUCCESS);
        if (err != CL_SUCCESS) {
            clReleaseProgram(prog);
            free(keytext);
            if (err == CL_BUILD_PROGRAM_FAILURE || err == CL_INVALID_BUILD_OPTIONS)
                return CLTOPK_ERR_BUILD;
            return cltopk_clfail(ctx, err, "clBuildProgram");
        }
        if (use_disk) {
            size_t bsize = 0;
            if (clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof bsize, &bsize, NULL) ==
                    CL_SUCCESS &&
                bsize > 0) {
                unsigned char *bin = malloc(bsize);
                unsigned char *bins[1] = {bin};
                if (bin && clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof bins, bins, NULL) ==
                               CL_SUCCESS) {
                    pthread_mutex_lock(&disk_lock);
                    cache_write(dir, path, keytext, bin, bsize);
                    pthread_mutex_unlock(&disk_lock);
                }
                free(bin);
            }
        }
    }
    free(keytext);
    *out = prog;
    return CLTOPK_OK;
}

/* the embedded file a line `#include "NAME"` at src->data[i] (a line start)
 * names, when it is one to put in place: not one of the files every program
 * starts with (those are included behind guards); its line's length in *len */
static const cltopk_kernel_source *include_at(const cltopk_kernel_source *src, size_t i,
                                              size_t *len)
{
    static const char pre[] = "#include \"";
    const unsigned char *d = src->data + i;
    size_t rest = src->size - i, n = sizeof pre - 1, e = n;
    if (rest <= n || memcmp(d, pre, n) != 0)
        return NULL;
    while (e < rest && d[e] != '"' && d[e] != '\n')
        e++;
    if (e >= rest || d[e] != '"' || e - n >= 64)
        return NULL;
    char name[64];
    memcpy(name, d + n, e - n);
    name[e - n] = 0;
    if (!strcmp(name, "common.cl") || !strcmp(name, "schedule.h") || !strcmp(name, "bitpack.h"))
        return NULL;
    *len = e + 1 < rest && d[e + 1] == '\n' ? e + 2 : e + 1;
    return find_source(name);
}

/* src with each line `#include "NAME"` of an embedded file (see include_at)
 * replaced by that file's text, one level, into *out with the text in *buf
 * (malloc'd; NULL when src includes none, and *out is then untouched): 0, or
 * -1 out of memory */
static int inline_once(const cltopk_kernel_source *src, cltopk_kernel_source *out,
                       unsigned char **buf)
{
    *buf = NULL;
    size_t size = 0, len;
    int any = 0;
    for (int pass = 0; pass < 2; pass++) {
        size_t w = 0;
        for (size_t i = 0; i < src->size;) {
            const cltopk_kernel_source *inc =
                i == 0 || src->data[i - 1] == '\n' ? include_at(src, i, &len) : NULL;
            const unsigned char *from = inc ? inc->data : src->data + i;
            size_t n = inc ? inc->size : 1;
            if (pass)
                memcpy(*buf + w, from, n);
            w += n;
            i += inc ? len : 1;
            any |= inc != NULL;
        }
        if (!any)
            return 0;
        if (!pass) {
            size = w;
            if (!(*buf = malloc(size + 1)))
                return -1;
        }
    }
    (*buf)[size] = 0;
    out->name = src->name;
    out->data = *buf;
    out->size = size;
    return 0;
}

/* as inline_once, until no include is left (files that include files, such
 * as cl/query_rows.h including cl/query_steps.h; at most 4 levels) */
static int inline_includes(const cltopk_kernel_source *src, cltopk_kernel_source *out,
                           unsigned char **buf)
{
    *buf = NULL;
    for (int level = 0; level < 4; level++) {
        cltopk_kernel_source next;
        unsigned char *nbuf;
        if (inline_once(*buf ? out : src, &next, &nbuf) != 0) {
            free(*buf);
            *buf = NULL;
            return -1;
        }
        if (!nbuf)
            break;
        free(*buf);
        *buf = nbuf;
        *out = next;
    }
    return 0;
}

/* CLTOPK_BUILD_OPTIONS for file: all files, or only those CLTOPK_BUILD_FILES
 * names (a comma-separated list of kernel file names, e.g.
 * "query.cl,rows_warp.cl"); NULL where none applies */
static const char *extra_options(const char *file)
{
    const char *extra = cltopk_env("CLTOPK_BUILD_OPTIONS");
    const char *only = cltopk_env("CLTOPK_BUILD_FILES");
    if (!extra || !only)
        return extra;
    size_t len = strlen(file);
    for (const char *p = only; *p;) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n == len && !strncmp(p, file, len))
            return extra;
        if (!end)
            break;
        p = end + 1;
    }
    return NULL;
}

int cltopk_program_get(cltopk_context *ctx, const char *file, const char *options,
                       cl_program *out)
{
    const cltopk_kernel_source *common = find_source("common.cl");
    const cltopk_kernel_source *sched = find_source("schedule.h");
    const cltopk_kernel_source *bp = find_source("bitpack.h"); /* LoadBitPack for any kernel */
    const cltopk_kernel_source *src = find_source(file);
    if (!common || !sched || !bp || !src)
        return cltopk_fail(ctx, CLTOPK_ERR_INTERNAL, "kernel source %s is not embedded", file);
    const char *extra = extra_options(file);
    /* room for a specialised query's options (lib/querydev.c: a few KB) */
    char opts[16384];
    int n = snprintf(opts, sizeof opts, "%s%s%s", options, extra ? " " : "", extra ? extra : "");
    if (n < 0 || (size_t)n >= sizeof opts)
        return cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT,
                           "build options too long (check CLTOPK_BUILD_OPTIONS)");
    uint64_t key = fnv_str(fnv_str(0xcbf29ce484222325ull, file), opts);
    for (cltopk_program *p = ctx->programs; p; p = p->next)
        if (p->key == key && !strcmp(p->options, opts)) {
            *out = p->program;
            return CLTOPK_OK;
        }
    cltopk_program *entry = calloc(1, sizeof *entry);
    char *optcopy = malloc(strlen(opts) + 1);
    if (!entry || !optcopy) {
        free(entry);
        free(optcopy);
        return cltopk_fail(ctx, CLTOPK_ERR_NO_MEMORY, "out of memory caching a program");
    }
    cltopk_kernel_source merged;
    unsigned char *mbuf = NULL;
    if (inline_includes(src, &merged, &mbuf) != 0) {
        free(entry);
        free(optcopy);
        return cltopk_fail(ctx, CLTOPK_ERR_NO_MEMORY, "out of memory building %s", file);
    }
    if (mbuf)
        src = &merged;
    int from_disk;
    int st = build(ctx, common, sched, bp, src, file, opts, &entry->program, &from_disk);
    free(mbuf);
    if (st != CLTOPK_OK) {
        free(entry);
        free(optcopy);
        return st;
    }
    strcpy(optcopy, opts);
    entry->options = optcopy;
    entry->key = key;
    entry->next = ctx->programs;
    ctx->programs = entry;
    *out = entry->program;
    return CLTOPK_OK;
}

int cltopk_program_cached(cltopk_context *ctx, const char *file, const char *options)
{
    const char *extra = extra_options(file);
    char opts[16384];
    int n = snprintf(opts, sizeof opts, "%s%s%s", options, extra ? " " : "", extra ? extra : "");
    if (n < 0 || (size_t)n >= sizeof opts)
        return 0;
    uint64_t key = fnv_str(fnv_str(0xcbf29ce484222325ull, file), opts);
    for (cltopk_program *p = ctx->programs; p; p = p->next)
        if (p->key == key && !strcmp(p->options, opts))
            return 1;
    return 0;
}

int cltopk_kernel_get(cltopk_context *ctx, const char *file, const char *options,
                      const char *name, cl_kernel *out)
{
    cl_program prog;
    int st = cltopk_program_get(ctx, file, options, &prog);
    if (st != CLTOPK_OK)
        return st;
    for (struct cltopk_kernel_entry *e = ctx->kernels; e; e = e->next)
        if (e->program == prog && !strcmp(e->name, name)) {
            clRetainKernel(e->kernel);
            *out = e->kernel;
            return CLTOPK_OK;
        }
    cl_int err;
    *out = clCreateKernel(prog, name, &err);
    if (!*out)
        return cltopk_clfail(ctx, err, "clCreateKernel");
    struct cltopk_kernel_entry *e = calloc(1, sizeof *e);
    if (e && strlen(name) < sizeof e->name) {
        e->program = prog;
        e->kernel = *out;
        snprintf(e->name, sizeof e->name, "%s", name);
        clRetainKernel(*out);
        e->next = ctx->kernels;
        ctx->kernels = e;
    } else {
        free(e);
    }
    return CLTOPK_OK;
}

#endif
