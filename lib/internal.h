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
    /* bit-packed source (lib/codec.c): when pk_starts is set, dkeys holds the
     * data words of a validated GPU-FOR column of n values and pk_starts its
     * pk_nblocks + 1 block starts; the SortReducer decodes them on load */
    cl_mem pk_starts;
    cl_uint pk_nblocks;
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
       /* bit-packed columns (lib/codec.c): the two arrays and the decoded values */
       SCR_PK_DATA, SCR_PK_STARTS, SCR_PK_VALUES,
       /* radix select and SBP radix */
       SCR_RS_STATE, SCR_RS_HIST, SCR_RS_RES_K, SCR_RS_RES_I,
       /* sbp-tree: candidate pairs of two levels (keys, indices) */
       SCR_TREE_K0, SCR_TREE_I0, SCR_TREE_K1, SCR_TREE_I1, SCR_TREE_SPL,
       SCR_TREE_SPLI,
       /* the device sort (devsort.c): two sets of pairs, digit counts, their totals */
       SCR_DS_K0, SCR_DS_P0, SCR_DS_K1, SCR_DS_P1, SCR_DS_HIST, SCR_DS_TOTALS,
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
CLTOPK_INTERNAL extern const cltopk_algorithm cltopk_algo_sort;
#endif

/* ---- radix select, SBP radix, the planner's models (algo_radix.c,
 * algo_sbp_radix.c, model.c) */
#if HAVE_OPENCL
CLTOPK_INTERNAL extern const cltopk_algorithm cltopk_algo_radix_select;
CLTOPK_INTERNAL extern const cltopk_algorithm cltopk_algo_sbp_radix;
/* the element at position rank (cltopk_select) by the device radix select */
CLTOPK_INTERNAL int cltopk_radix_select_host(cltopk_context *ctx, const cltopk_request *rq,
                                             size_t rank, void *out_key, int64_t *out_index);
/* the device selection of rank in device data (cltopk_benchmark) */
CLTOPK_INTERNAL int cltopk_bench_select_buffer(cltopk_context *ctx, cltopk_dtype type,
                                               cl_mem keys, size_t n, size_t rank,
                                               unsigned flags, cl_mem out_key, cl_mem out_index,
                                               cl_event *done);
/* a device top-k of keys[off .. off+n) of `in` into out_keys / out_index (want
 * bits: 1 keys, 2 positions offset by index_base), enqueued after `wait`; arg is
 * the caller's (e.g. a configuration) */
typedef int (*cltopk_devrun)(cltopk_context *ctx, const cltopk_request *rq, void *arg, cl_mem in,
                             size_t off, size_t n, size_t k, cl_mem out_keys, cl_mem out_index,
                             cl_uint want, uint64_t index_base, cl_uint num_wait,
                             const cl_event *wait);
/* Host data through devrun, one device chunk at a time, each chunk's best
 * min(k, len) read back and merged on the host into rq's outputs.  index 0:
 * keys alone (devrun gets want 1 and no position buffer); then with float keys
 * and ambiguous not NULL, a zero or NaN among a chunk's keys (whose bits need
 * the position) stops the run with *ambiguous = 1 and nothing written. */
CLTOPK_INTERNAL int cltopk_chunked_topk(cltopk_context *ctx, const cltopk_request *rq,
                                        cltopk_devrun devrun, void *arg, int index,
                                        int *ambiguous);
/* a key whose bits its order key cannot restore: a float zero or NaN */
CLTOPK_INTERNAL int cltopk_ambiguous_float(const void *keys, size_t i, int bytes);
/* sort k (order key, 32-bit position) pairs on the device (radix_select.cl) and
 * write the input's bits and positions in output order */
CLTOPK_INTERNAL int cltopk_rs_sort_write(cltopk_context *ctx, const cltopk_request *rq,
                                         cl_mem rk, cl_mem ri, size_t k, cl_uint want,
                                         cl_mem in, size_t off, cl_mem out_keys,
                                         cl_mem out_index, uint64_t index_base);
#endif
/* ---- the device sort (devsort.c, cl/radix_sort.cl) */
#if HAVE_OPENCL
/* m (key, 32-bit position) pairs to sort into THE ORDER: larger order key
 * first, then smaller position; stable. */
typedef struct {
    int key_bits;      /* 32 or 64 */
    int kind;          /* KIND_* of the keys' bits: the sort is by order_key(key, kind,
                          smallest); KIND_UNSIGNED with smallest 0 sorts order keys */
    int smallest;
    size_t m;          /* pairs, below 2^32 - 1 */
    cl_mem keys;       /* m keys from element key_off */
    size_t key_off;
    cl_mem pos;        /* m uint positions from element 0, or NULL: key i is at position i */
    unsigned pos_bits; /* REQUIRED when the pairs are not in position order: every
                          position is below 2^pos_bits, and the sort orders the positions
                          too (pos_bits / DIGIT passes more; 32 always works).  0: the
                          pairs arrive in increasing position order (pos NULL is), and the
                          sort by the key alone keeps ties in that order */
    /* final 0: the sorted pairs to out_keys / out_pos (which may be keys / pos
     * themselves: in place), k == m; final 1: the first k (<= m) keys' bits to
     * out_keys (want & 1) and positions + base as int64 to out_index (want & 2) */
    int final;
    size_t k;
    cl_uint want;
    cl_mem out_keys, out_pos, out_index;
    uint64_t base;
    /* optional: two buffers of m keys and two of m positions for the passes
     * (distinct from the above); NULL: the context's scratch slots SCR_DS_* */
    cl_mem tmp_keys[2], tmp_pos[2];
} cltopk_devsort_job;
/* Enqueue the sort (about (pos_bits + key_bits) / 8 passes of three launches)
 * after the context's last event and the wait list; the last launch's event
 * becomes the context's last.  CLTOPK_ERR_UNSUPPORTED when the tiles cannot fit
 * the device (or CLTOPK_SORT is invalid). */
CLTOPK_INTERNAL int cltopk_devsort(cltopk_context *ctx, const cltopk_devsort_job *job,
                                   cl_uint num_wait, const cl_event *wait);
/* Device scratch bytes of a sort of m pairs of key_bits keys with the context's
 * own buffers; 0 (the reason in why) when the device cannot run it. */
CLTOPK_INTERNAL size_t cltopk_devsort_scratch(cltopk_context *ctx, int key_bits, size_t m,
                                              char *why, size_t whylen);
#endif
/* ---- end of the device sort */
#if HAVE_OPENCL
/* program.c: the disk cache directory (0 when off) and mkdir -p */
CLTOPK_INTERNAL int cltopk_cache_dir(char *buf, size_t len);
CLTOPK_INTERNAL int cltopk_mkdirs(char *path);
#endif
/* model.c: AUTO by the cost models (device constants measured once, cached) */
CLTOPK_INTERNAL int cltopk_plan_auto(cltopk_context *ctx, const cltopk_request *rq,
                                     int device_data, const cltopk_algorithm **out);


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

/* ---- cpu/: radix, bitonic and the CPU planner ---- */
/* radix.c: the order key at `rank` (0-based) and how many keys are above it */
CLTOPK_INTERNAL int cltopk_cpu_radix_kth(const cltopk_request *rq, const void *keys, size_t n,
                                         size_t rank, uint64_t *kth, size_t *above);
/* top-k given its k-th order key T: every key above T, the first ties of T in
 * index order, sorted into THE ORDER */
CLTOPK_INTERNAL int cltopk_cpu_collect_topk(const cltopk_request *rq, const void *keys,
                                            size_t n, size_t k, uint64_t T, void *out_keys,
                                            int64_t *out_index);
CLTOPK_INTERNAL int cltopk_cpu_radix_topk(const cltopk_request *rq, const void *keys, size_t n,
                                          size_t k, void *out_keys, int64_t *out_index);
/* bitonic.c: the paper's CPU bitonic top-k (Appendix C) */
CLTOPK_INTERNAL int cltopk_cpu_bitonic_topk(const cltopk_request *rq, const void *keys,
                                            size_t n, size_t k, void *out_keys,
                                            int64_t *out_index);
/* heap.c with a guard: returns CLTOPK_CPU_DEGRADED (and writes nothing) when a
 * thread's heap takes more inserts than a scan that pays, so that the caller
 * can switch to radix */
#define CLTOPK_CPU_DEGRADED 1
CLTOPK_INTERNAL int cltopk_cpu_heap_topk_guarded(const cltopk_request *rq, const void *keys,
                                                 size_t n, size_t k, void *out_keys,
                                                 int64_t *out_index);
/* heap.c: the k-th (1-based) largest of v[0..n) (reorders v); a floor below
 * the k-th key of the input with near certainty, from a sample (0: none) */
CLTOPK_INTERNAL uint64_t cltopk_cpu_kth_largest(uint64_t *v, size_t n, size_t r);
CLTOPK_INTERNAL int cltopk_cpu_sample_floor(const cltopk_request *rq, const void *keys, size_t n,
                                            size_t k, uint64_t *floor);
/* plan_cpu.c: the CPU algorithm AUTO runs for rq, and the run of it */
CLTOPK_INTERNAL cltopk_algo cltopk_cpu_choose(const cltopk_request *rq);
CLTOPK_INTERNAL int cltopk_cpu_auto_topk(const cltopk_request *rq, const void *keys, size_t n,
                                         size_t k, void *out_keys, int64_t *out_index);
CLTOPK_INTERNAL extern const cltopk_algorithm cltopk_algo_cpu_radix;
CLTOPK_INTERNAL extern const cltopk_algorithm cltopk_algo_cpu_bitonic;
/* the record AUTO runs on the host (cpu-heap with its guard, or cpu-radix) */
CLTOPK_INTERNAL const cltopk_algorithm *cltopk_cpu_auto_algorithm(const cltopk_request *rq);
/* ---- end of the cpu/ block ---- */

/* plan.c */
CLTOPK_INTERNAL int cltopk_choose(cltopk_context *ctx, const cltopk_request *rq, cltopk_algo algo,
                                  int device_data, const cltopk_algorithm **out);

CLTOPK_INTERNAL double cltopk_now(void);
/* bench.c: the median of t[0..n) (sorts t) */
CLTOPK_INTERNAL double cltopk_median(double *t, int n);
#if HAVE_OPENCL
/* bench.c: median seconds of one streaming read (cl/bandwidth.cl) of `bytes`
 * of buf, after a warm-up: the device's read floor */
CLTOPK_INTERNAL int cltopk_device_read_time(cltopk_context *ctx, cl_mem buf, size_t bytes,
                                            int reps, double *out);
#endif

#endif
