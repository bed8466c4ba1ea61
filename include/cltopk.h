/*
 * cltopk.h - top-k, k-th element selection and bit-unpacking on any OpenCL device,
 * with an OpenMP CPU path that needs no OpenCL at all.
 *
 * This header is the manual.  Every function states its parameters, the statuses
 * it returns, who owns what, and what may run concurrently.
 *
 * THE ORDER
 *   Every algorithm, on every device, returns the same answer: the first k entries
 *   of the *stable* sort of the input under this order:
 *     - CLTOPK_LARGEST (0): descending; CLTOPK_SMALLEST (1): ascending.
 *     - Floats use a total order in which -0.0 == +0.0, every NaN (any sign, any
 *       payload) equals every other NaN, and NaN is greater than +inf.
 *     - Equal keys are ordered by smaller index first, in both directions.
 *   out_index[i] is the position of the i-th entry; out_keys[i] is the input
 *   element at that position, bit for bit (a -0.0 stays -0.0, a NaN keeps its
 *   payload).  cltopk_select() returns the entry at position `rank` of the same
 *   order.  Results are therefore exact and deterministic.
 *
 * STATUS CODES
 *   0 is success.  Errors are negative, stable (never renumbered), and
 *   cltopk_strerror() explains each.  After a failed call, cltopk_last_error()
 *   gives a detail text that says what to do; a successful call clears it.  A
 *   call that fails writes nothing to its outputs.
 *
 * THREADS
 *   Distinct contexts may be used from different threads at the same time.
 *   Calls on one context are serialized by a lock inside the context, so sharing
 *   one context between threads is safe but gives no parallelism; the detail text
 *   of cltopk_last_error() belongs to the most recent failing call on the context.
 *   The program caches are shared by all contexts and guarded by a mutex.
 *   The CPU algorithms use OpenMP threads (OMP_NUM_THREADS is honoured).
 *
 * ENVIRONMENT (an explicit argument always wins over the environment)
 *   CLTOPK_DEVICE          device for cltopk_open(ctx, NULL or "auto")
 *   CLTOPK_CACHE=0         do not read or write the on-disk kernel binary cache
 *   CLTOPK_CACHE_DIR       directory of that cache (default $XDG_CACHE_HOME/cltopk,
 *                          else $HOME/.cache/cltopk)
 *   CLTOPK_SHOW_BUILD_LOG=1  print OpenCL build logs to stderr
 *   CLTOPK_BUILD_OPTIONS   extra options appended to every OpenCL program build
 *   CLTOPK_MAX_CHUNK       cap, in elements, of one device chunk of host input
 *                          (testing aid; the default comes from the device limits)
 *   CLTOPK_BITONIC         parameters of the bitonic kernels, for tuning and
 *                          ablation: "B=8,WG=128,OUT=64,MAXM=4,SWZ=0" or "basic=1"
 *                          (see `cltopk tune`); an invalid set makes bitonic
 *                          calls fail with CLTOPK_ERR_UNSUPPORTED
 */
#ifndef CLTOPK_H
#define CLTOPK_H

#include <stddef.h>
#include <stdint.h>

#include "cltopk_version.h"

#if CLTOPK_HAVE_OPENCL
#  ifndef CL_TARGET_OPENCL_VERSION
#    define CL_TARGET_OPENCL_VERSION 120
#  endif
#  ifdef __APPLE__
#    include <OpenCL/cl.h>
#  else
#    include <CL/cl.h>
#  endif
#else
/* Built without OpenCL: the same handle types as the Khronos headers, so the
 * interop functions keep their signatures (they return CLTOPK_ERR_NO_OPENCL). */
typedef struct _cl_context *cl_context;
typedef struct _cl_device_id *cl_device_id;
typedef struct _cl_command_queue *cl_command_queue;
typedef struct _cl_mem *cl_mem;
typedef struct _cl_event *cl_event;
typedef uint32_t cl_uint;
#endif

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32) && defined(CLTOPK_BUILDING)
#  define CLTOPK_API __declspec(dllexport)
#elif defined(__GNUC__)
#  define CLTOPK_API __attribute__((visibility("default")))
#else
#  define CLTOPK_API
#endif

/* ------------------------------------------------------------------ types */

typedef struct cltopk_context cltopk_context;

typedef enum {
    CLTOPK_FLOAT32 = 0, CLTOPK_FLOAT64 = 1, CLTOPK_INT32 = 2, CLTOPK_UINT32 = 3,
    CLTOPK_INT64 = 4, CLTOPK_UINT64 = 5
} cltopk_dtype;

typedef enum {
    CLTOPK_ALGO_AUTO = 0,         /* the planner chooses (the only value that does) */
    CLTOPK_ALGO_BITONIC = 1,      /* bitonic top-k, SortReducer/BitonicReducer      */
    CLTOPK_ALGO_SBP_RADIX = 2,    /* split-bucket radix (not in this version)        */
    CLTOPK_ALGO_SBP_TREE = 3,     /* split-bucket search tree, k <= 2048 or 4096     */
    CLTOPK_ALGO_RADIX_SELECT = 4, /* global radix select (not in this version)       */
    CLTOPK_ALGO_SORT = 5,         /* full device sort (not in this version)          */
    CLTOPK_ALGO_CPU_HEAP = 6,     /* OpenMP per-thread heaps, merged; any context    */
    CLTOPK_ALGO_CPU_BITONIC = 7   /* CPU SIMD bitonic (not in this version)          */
} cltopk_algo;

#define CLTOPK_LARGEST  0u   /* flags: descending order (the default)  */
#define CLTOPK_SMALLEST 1u   /* flags: ascending order                 */
#define CLTOPK_BENCH_KEYS_ONLY 0x100u /* cltopk_benchmark only: time keys alone */

/* Status codes.  Stable: new codes are added below, never renumbered. */
#define CLTOPK_OK                   0
#define CLTOPK_ERR_INVALID_ARGUMENT (-1)  /* NULL where data is needed, bad size       */
#define CLTOPK_ERR_BAD_TYPE         (-2)  /* unknown cltopk_dtype                        */
#define CLTOPK_ERR_BAD_ALGO         (-3)  /* unknown cltopk_algo                         */
#define CLTOPK_ERR_BAD_FLAGS        (-4)  /* unknown flag bit                            */
#define CLTOPK_ERR_K_RANGE          (-5)  /* k > n                                       */
#define CLTOPK_ERR_RANK_RANGE       (-6)  /* rank >= n                                   */
#define CLTOPK_ERR_UNSUPPORTED      (-7)  /* the named algorithm cannot do this call     */
#define CLTOPK_ERR_NO_DEVICE        (-8)  /* no device matches the device string         */
#define CLTOPK_ERR_NO_OPENCL        (-9)  /* built without OpenCL, or no platform        */
#define CLTOPK_ERR_OPENCL           (-10) /* an OpenCL call failed (detail says which)   */
#define CLTOPK_ERR_BUILD            (-11) /* a kernel failed to build (log in detail)    */
#define CLTOPK_ERR_NO_MEMORY        (-12) /* host memory allocation failed               */
#define CLTOPK_ERR_DEVICE_MEMORY    (-13) /* device memory allocation failed             */
#define CLTOPK_ERR_BUFFER_SIZE      (-14) /* a cl_mem is smaller than the call needs     */
#define CLTOPK_ERR_CORRUPT          (-15) /* packed input is malformed                   */
#define CLTOPK_ERR_INTERNAL         (-16) /* a bug: please report it with the detail     */

/* ---------------------------------------------------------------- version */

/* The library's version as "MAJOR.MINOR.PATCH"; a static string. */
CLTOPK_API const char *cltopk_version_string(void);
/* The library's version as MAJOR*10000 + MINOR*100 + PATCH.  Compare with
 * CLTOPK_VERSION_NUMBER (the header's) to detect a header/library mismatch. */
CLTOPK_API unsigned cltopk_version_number(void);

/* --------------------------------------------------------------- contexts */

/* Open a context on a device.
 *   ctx     receives the new context (set to NULL on failure).  Free it with
 *           cltopk_close().
 *   device  NULL or "auto": $CLTOPK_DEVICE if set, else the first GPU, else any
 *           OpenCL device, else "cpu".
 *           "cpu": no OpenCL at all; only CPU algorithms.
 *           "gpu": the first OpenCL GPU, or CLTOPK_ERR_NO_DEVICE.
 *           "P:D": device D of platform P (0-based, as `cltopk devices` lists them).
 *           anything else: the first device whose "platform / device" name
 *           contains the string, case-insensitively.
 * Returns CLTOPK_OK, CLTOPK_ERR_INVALID_ARGUMENT (ctx NULL), CLTOPK_ERR_NO_DEVICE,
 * CLTOPK_ERR_NO_OPENCL (an OpenCL device was asked for but OpenCL is missing),
 * CLTOPK_ERR_OPENCL, CLTOPK_ERR_NO_MEMORY.  On failure the detail text is
 * available through cltopk_last_error(NULL). */
CLTOPK_API int cltopk_open(cltopk_context **ctx, const char *device);

/* Open a context on the application's own OpenCL objects.  The library retains
 * context, device and queue (clRetain*) and releases them in cltopk_close(); it
 * never calls clFinish on the queue.  The queue may be in-order or out-of-order.
 * Returns CLTOPK_OK, CLTOPK_ERR_INVALID_ARGUMENT, CLTOPK_ERR_NO_OPENCL,
 * CLTOPK_ERR_OPENCL, CLTOPK_ERR_NO_MEMORY. */
CLTOPK_API int cltopk_open_cl(cltopk_context **ctx, cl_context context, cl_device_id device,
                              cl_command_queue queue);

/* Free a context and everything it owns.  NULL is a no-op.  Waits for the work
 * the context enqueued on its own queue; never for the caller's queue. */
CLTOPK_API void cltopk_close(cltopk_context *ctx);

/* "cpu" for a CPU context, else "platform / device".  Owned by the context. */
CLTOPK_API const char *cltopk_device_name(const cltopk_context *ctx);

/* The detail text of the last failing call on ctx ("" if none).  With ctx NULL,
 * the detail of the last failing cltopk_open/cltopk_open_cl of this thread.
 * Owned by the library; valid until the next call on the same context. */
CLTOPK_API const char *cltopk_last_error(const cltopk_context *ctx);

/* A static, never-NULL English description of any int status. */
CLTOPK_API const char *cltopk_strerror(int status);

/* ------------------------------------------------------------------ top-k */

/* The k first entries of the input under THE ORDER above.
 *   type       element type of keys and out_keys
 *   keys       n elements in host memory (may be NULL when n == 0 or k == 0)
 *   k          0 <= k <= n; k == 0 succeeds and writes nothing (other
 *              arguments then only need a valid type, flags and algo)
 *   flags      CLTOPK_LARGEST or CLTOPK_SMALLEST; other bits are an error
 *   algo       CLTOPK_ALGO_AUTO lets the planner choose; a named algorithm runs
 *              that algorithm or fails with CLTOPK_ERR_UNSUPPORTED (the detail
 *              says why).  CPU algorithms run in any context.
 *   out_keys   k elements of `type`, or NULL
 *   out_index  k int64 positions, or NULL (not both NULL)
 * Blocks until the outputs are written.  Host inputs larger than one device
 * allocation are processed in chunks whose results are merged.
 * Returns CLTOPK_OK or CLTOPK_ERR_INVALID_ARGUMENT, CLTOPK_ERR_BAD_TYPE,
 * CLTOPK_ERR_BAD_ALGO, CLTOPK_ERR_BAD_FLAGS, CLTOPK_ERR_K_RANGE,
 * CLTOPK_ERR_UNSUPPORTED, CLTOPK_ERR_OPENCL, CLTOPK_ERR_BUILD,
 * CLTOPK_ERR_NO_MEMORY, CLTOPK_ERR_DEVICE_MEMORY. */
CLTOPK_API int cltopk_topk(cltopk_context *ctx, cltopk_dtype type, const void *keys, size_t n,
                           size_t k, unsigned flags, cltopk_algo algo, void *out_keys,
                           int64_t *out_index);

/* The entry at 0-based position `rank` of THE ORDER (rank 0 = the first of the
 * top-k).  out_key (one element) and out_index (one int64) may each be NULL, not
 * both.  Any rank < n is answered: through a device top-k where rank + 1 fits the
 * algorithm, else (with CLTOPK_ALGO_AUTO) by a CPU selection.
 * Returns as cltopk_topk, with CLTOPK_ERR_RANK_RANGE for rank >= n. */
CLTOPK_API int cltopk_select(cltopk_context *ctx, cltopk_dtype type, const void *keys, size_t n,
                             size_t rank, unsigned flags, cltopk_algo algo, void *out_key,
                             int64_t *out_index);

/* Top-k of device-resident data.
 *   keys       cl_mem holding at least offset + n elements of `type`
 *   offset     in elements
 *   out_keys   cl_mem of at least k elements, or NULL
 *   out_index  cl_mem of at least k int64, or NULL (not both NULL)
 *   num_wait, wait   events the work waits for (wait NULL when num_wait == 0)
 *   done       if not NULL, receives an event (the caller releases it) that
 *              completes when both outputs are written
 * Only device algorithms (BITONIC, or AUTO) are accepted; the call enqueues its
 * kernels on the context's queue and returns without waiting for them.  It never
 * calls clFinish on the caller's queue.  One case must wait: with AUTO and a k
 * that no device algorithm of this version takes, the call falls back to the
 * CPU heap, which blocks until the wait list has completed, reads the keys,
 * and writes the outputs before it returns (done is then already complete).
 * out_index counts positions from `offset` (the first key is position 0).
 * The context keeps scratch buffers that later calls reuse; work from
 * successive calls is ordered by events, so an out-of-order queue is safe.
 * n must stay below 2^32 - 1 elements per call.
 * Returns as cltopk_topk, plus CLTOPK_ERR_BUFFER_SIZE (a cl_mem too small) and
 * CLTOPK_ERR_NO_OPENCL (a CPU context). */
CLTOPK_API int cltopk_topk_buffer(cltopk_context *ctx, cltopk_dtype type, cl_mem keys,
                                  size_t offset, size_t n, size_t k, unsigned flags,
                                  cltopk_algo algo, cl_mem out_keys, cl_mem out_index,
                                  cl_uint num_wait, const cl_event *wait, cl_event *done);

/* Device scratch memory, in bytes, that a cltopk_topk / cltopk_topk_buffer call
 * with these arguments needs beyond its inputs and outputs (0 for CPU
 * algorithms, which use host memory of at most n * 16 bytes).  Fails as the call
 * itself would (bad arguments, unsupported algorithm). */
CLTOPK_API int cltopk_workspace_size(cltopk_context *ctx, cltopk_dtype type, size_t n, size_t k,
                                     unsigned flags, cltopk_algo algo, size_t *bytes);

/* The algorithm AUTO would run for this call (without running it). */
CLTOPK_API int cltopk_plan(cltopk_context *ctx, cltopk_dtype type, size_t n, size_t k,
                           unsigned flags, cltopk_algo *chosen);

/* ---------------------------------------------------------------- helpers */

/* Size in bytes of one element of type, or 0 for an unknown type. */
CLTOPK_API size_t cltopk_dtype_size(cltopk_dtype type);
/* "f32" "f64" "i32" "u32" "i64" "u64", or NULL for an unknown type. */
CLTOPK_API const char *cltopk_dtype_name(cltopk_dtype type);
/* Parse a name of cltopk_dtype_name() (also "float", "double", "int32", ...). */
CLTOPK_API int cltopk_dtype_parse(const char *name, cltopk_dtype *type);
/* "auto" "bitonic" "sbp-radix" "sbp-tree" "radix-select" "sort" "cpu-heap"
 * "cpu-bitonic", or NULL for an unknown value. */
CLTOPK_API const char *cltopk_algo_name(cltopk_algo algo);
CLTOPK_API int cltopk_algo_parse(const char *name, cltopk_algo *algo);

/* ---------------------------------------------------------------- devices */

typedef struct {
    unsigned platform, device;      /* the "P:D" indices                      */
    char platform_name[128];
    char device_name[128];
    char device_version[128];
    char driver_version[64];
    int is_gpu, is_cpu;
    uint64_t global_mem_bytes, max_alloc_bytes, local_mem_bytes;
    size_t max_work_group_size;
    unsigned compute_units;
    int has_fp64;
} cltopk_device_info;

/* Number of OpenCL devices on all platforms (0 without OpenCL or platforms). */
CLTOPK_API size_t cltopk_device_count(void);
/* Fill *info for device i (0 <= i < cltopk_device_count(), in "P:D" order).
 * Returns CLTOPK_OK, CLTOPK_ERR_INVALID_ARGUMENT, CLTOPK_ERR_NO_DEVICE. */
CLTOPK_API int cltopk_device_get(size_t i, cltopk_device_info *info);

/* The context's OpenCL objects (not retained for the caller; valid while the
 * context lives).  CLTOPK_ERR_NO_OPENCL for a CPU context. */
CLTOPK_API int cltopk_get_cl(const cltopk_context *ctx, cl_context *context,
                             cl_device_id *device, cl_command_queue *queue);

/* -------------------------------------------------------------- benchmark */

/* Time one algorithm on this context's device.  The keys are copied to the
 * device once (for device algorithms); then the call is run `reps` times after
 * one warm-up and the median wall time of the device work (enqueue to
 * completion, no transfers) goes to *median_s.  *floor_s (may be NULL) receives
 * the median time of one read pass over the same n elements at the device's
 * streaming bandwidth, measured in the same call: the floor for any top-k.
 * CPU algorithms are timed on the host array, and their floor is a parallel
 * vectorised OR over its 64-bit words (one read).  The call asks for keys and
 * positions, or with CLTOPK_BENCH_KEYS_ONLY in flags for keys alone (device
 * algorithms then carry no positions for integer keys; float keys on the device
 * carry them anyway, see CLTOPK_ALGO_BITONIC).  Returns as cltopk_topk. */
CLTOPK_API int cltopk_benchmark(cltopk_context *ctx, cltopk_dtype type, const void *keys,
                                size_t n, size_t k, unsigned flags, cltopk_algo algo,
                                int reps, double *median_s, double *floor_s);

#ifdef __cplusplus
}
#endif

#endif /* CLTOPK_H */
