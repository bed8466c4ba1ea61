/* internal.h - what the library's files share; never installed. */
#ifndef CLTOPK_INTERNAL_H
#define CLTOPK_INTERNAL_H

#include "config.h"

#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "cltopk.h"
#include "order.h"

#define CLTOPK_INTERNAL __attribute__((visibility("hidden")))

/* ------------------------------------------------------------ the request */

/* One call, described once (DESIGN.md step 2); every later stage reads this. */
typedef struct {
    cltopk_dtype type;
    int bytes;      /* 4 or 8 */
    int kind;       /* KIND_UNSIGNED, KIND_SIGNED, KIND_FLOAT */
    size_t n, k;
    int smallest;
    int want_keys, want_index;
    /* host data (cltopk_topk) */
    const void *keys;
    void *out_keys;
    int64_t *out_index;
#if HAVE_OPENCL
    /* device data (cltopk_topk_buffer) */
    int on_device;
    cl_mem dkeys;
    size_t doffset;
    cl_mem dout_keys, dout_index;
    cl_uint num_wait;
    const cl_event *wait;
    cl_event *done;
#endif
} cltopk_request;

/* ------------------------------------------------------- device and programs */

#if HAVE_OPENCL
typedef struct {
    cl_platform_id platform;
    cl_device_id device;
    unsigned pi, di;
    char platform_name[128], device_name[128], device_version[128], driver_version[64];
    cl_device_type type;
    cl_ulong global_mem, max_alloc, local_mem;
    size_t max_wg;
    cl_uint compute_units;
    int fp64;
    int int64; /* 64-bit integers: full profile, or cl_khr_int64 */
} cltopk_devcaps;

/* device.c */
CLTOPK_INTERNAL int cltopk_devices_scan(cltopk_devcaps **list, size_t *count, char *err,
                                        size_t errlen);
CLTOPK_INTERNAL int cltopk_devcaps_query(cl_device_id dev, cltopk_devcaps *caps);

typedef struct cltopk_program {
    struct cltopk_program *next;
    uint64_t key;
    char *options;
    cl_program program;
} cltopk_program;
#endif

/* ---------------------------------------------------------------- context */

/* the context's scratch buffers */
enum { SCR_INPUT = 0, SCR_CAND_U0, SCR_CAND_I0, SCR_CAND_U1, SCR_CAND_I1, SCR_OUT_KEYS,
       SCR_OUT_INDEX, SCR_BENCH,
       /* sbp-tree: candidate pairs of two levels (keys, indices) */
       SCR_TREE_K0, SCR_TREE_I0, SCR_TREE_K1, SCR_TREE_I1, SCR_TREE_SPL,
       SCR_TREE_SPLI,
       SCR_COUNT };


struct cltopk_context {
    pthread_mutex_t lock;
    int is_cl;
    char name[300];
    char err[8192];
#if HAVE_OPENCL
    cl_context clctx;
    cl_device_id dev;
    cl_command_queue queue;
    cltopk_devcaps caps;
    cltopk_program *programs;   /* in-memory program cache */
    cl_event last;              /* last event of our own work, for ordering */
    /* scratch buffers, grown on demand and kept for later calls */
    cl_mem scratch[SCR_COUNT];
    size_t scratch_size[SCR_COUNT];
#endif
};


/* Set the context's detail text and return status.  ctx may be NULL (then the
 * thread's open-error text is set). */
CLTOPK_INTERNAL int cltopk_fail(cltopk_context *ctx, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
CLTOPK_INTERNAL const char *cltopk_env(const char *name);

#if HAVE_OPENCL
CLTOPK_INTERNAL const char *cltopk_clerror_name(cl_int err);
/* Fail with CLTOPK_ERR_OPENCL (or DEVICE_MEMORY for allocation failures). */
CLTOPK_INTERNAL int cltopk_clfail(cltopk_context *ctx, cl_int err, const char *what);

/* program.c: the program for kernel file `file` (e.g. "bitonic.cl") specialised
 * with `options` ("-D ..."), from the memory cache, the disk cache or a build. */
CLTOPK_INTERNAL int cltopk_program_get(cltopk_context *ctx, const char *file,
                                       const char *options, cl_program *out);
CLTOPK_INTERNAL void cltopk_programs_free(cltopk_context *ctx);
/* A kernel of such a program (the caller releases it). */
CLTOPK_INTERNAL int cltopk_kernel_get(cltopk_context *ctx, const char *file, const char *options,
                                      const char *name, cl_kernel *out);

/* staging.c */
CLTOPK_INTERNAL int cltopk_scratch(cltopk_context *ctx, int slot, size_t bytes, cl_mem *out);
CLTOPK_INTERNAL void cltopk_scratch_free(cltopk_context *ctx);
/* Elements of one host chunk for a device algorithm. */
CLTOPK_INTERNAL size_t cltopk_chunk_elems(const cltopk_context *ctx, int bytes);
/* Set kernel argument i; the sizes are those of the values. */
CLTOPK_INTERNAL int cltopk_set_args(cltopk_context *ctx, cl_kernel kern, int nargs, ...);
/* Enqueue a 1-D kernel, waiting for the context's last event (and the caller's
 * list for the first launch); the new event becomes the context's last. */
CLTOPK_INTERNAL int cltopk_launch(cltopk_context *ctx, cl_kernel kern, size_t global,
                                  size_t local, cl_uint num_wait, const cl_event *wait);
CLTOPK_INTERNAL int cltopk_finish_own(cltopk_context *ctx);

/* kernel sources embedded at build time (cl/kernels.c, generated) */
typedef struct {
    const char *name;
    const unsigned char *data;
    size_t size;
} cltopk_kernel_source;
extern const cltopk_kernel_source cltopk_kernel_sources[];
extern const size_t cltopk_kernel_source_count;
#endif

/* --------------------------------------------------------------- algorithms */

typedef struct {
    cltopk_algo id;
    int needs_opencl;
    /* 1 if it can run this request here; else 0 with the reason in why */
    int (*supports)(cltopk_context *ctx, const cltopk_request *rq, char *why, size_t whylen);
    /* host pointers in and out */
    int (*run_host)(cltopk_context *ctx, const cltopk_request *rq);
    /* device buffers in and out (NULL: host only) */
    int (*run_buffer)(cltopk_context *ctx, const cltopk_request *rq);
    /* device scratch bytes */
    size_t (*workspace)(cltopk_context *ctx, const cltopk_request *rq);
} cltopk_algorithm;

CLTOPK_INTERNAL const cltopk_algorithm *cltopk_algorithm_get(cltopk_algo id);
CLTOPK_INTERNAL extern const cltopk_algorithm cltopk_algo_cpu_heap;
#if HAVE_OPENCL
CLTOPK_INTERNAL extern const cltopk_algorithm cltopk_algo_bitonic;
CLTOPK_INTERNAL extern const cltopk_algorithm cltopk_algo_sbp_tree;
#endif

/* cpu/: the CPU algorithms work on host arrays. */
/* top-k by per-thread heaps; outputs as in cltopk_topk (either may be NULL) */
CLTOPK_INTERNAL int cltopk_cpu_heap_topk(const cltopk_request *rq, const void *keys, size_t n,
                                         size_t k, void *out_keys, int64_t *out_index);
/* the element at position rank, by selection over (key, index) pairs */
CLTOPK_INTERNAL int cltopk_cpu_select(const cltopk_request *rq, size_t rank, void *out_key,
                                      int64_t *out_index);
/* merge two lists in output order (keys of rq's type + indices) into the first k
 * of their union; out may not alias the inputs */
CLTOPK_INTERNAL void cltopk_merge_lists(const cltopk_request *rq, const void *ak,
                                        const int64_t *ai, size_t an, const void *bk,
                                        const int64_t *bi, size_t bn, size_t k, void *ok,
                                        int64_t *oi);
/* sort pairs into output order (best first) */
CLTOPK_INTERNAL void cltopk_sort_pairs(okey_pair *p, size_t n);
/* median seconds of one parallel read (max) of `bytes` of host memory */
CLTOPK_INTERNAL double cltopk_cpu_read_time(const void *data, size_t bytes, int reps);

/* plan.c */
CLTOPK_INTERNAL int cltopk_choose(cltopk_context *ctx, const cltopk_request *rq, cltopk_algo algo,
                                  int device_data, const cltopk_algorithm **out);

CLTOPK_INTERNAL double cltopk_now(void);
/* bench.c: the median of t[0..n) (sorts t) */
CLTOPK_INTERNAL double cltopk_median(double *t, int n);

#endif
