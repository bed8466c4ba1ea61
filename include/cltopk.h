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
 *   The CPU algorithms use OpenMP threads (OMP_NUM_THREADS is honoured, and
 *   cltopk_set_threads overrides it).
 *
 * ENVIRONMENT (an explicit argument always wins over the environment)
 *   CLTOPK_DEVICE          device for cltopk_open(ctx, NULL or "auto")
 *   CLTOPK_CACHE=0         do not read or write the on-disk kernel binary cache
 *   CLTOPK_CACHE_DIR       directory of that cache (default $XDG_CACHE_HOME/cltopk,
 *                          else $HOME/.cache/cltopk); it must be owned by the
 *                          effective user and not writable by group or others,
 *                          else the disk cache is off as with CLTOPK_CACHE=0 (no
 *                          error); directories cltopk makes get mode 0700, files
 *                          0600; the planner's constants are kept there too
 *   CLTOPK_SHOW_BUILD_LOG=1  print OpenCL build logs to stderr
 *   CLTOPK_BUILD_OPTIONS   extra options appended to every OpenCL program build
 *   CLTOPK_BUILD_FILES     a comma-separated list of kernel file names (e.g.
 *                          "query.cl,rows_warp.cl"): CLTOPK_BUILD_OPTIONS then
 *                          applies to the programs of those files only (empty
 *                          or unset: every file)
 *   CLTOPK_CPU_ISA         scalar, avx2 or avx512: the CPU kernels to use (see
 *                          cltopk_cpu_isa)
 *   CLTOPK_SPLIT           how a context of several devices splits host data
 *                          (cltopk_open): measured (the default) by the speeds
 *                          measured in the context's earlier splits, model by
 *                          the planner's predicted speeds only (a fixed split,
 *                          the same every call).  Another value makes top-k and
 *                          selection on host data of such a context fail with
 *                          CLTOPK_ERR_UNSUPPORTED; one-device contexts ignore it
 *
 *   Tuning and testing (not a stable interface; for benchmarks, tuning, tests).
 *   Each takes "NAME=VALUE,..." and is parsed strictly: an unknown name, a value
 *   that is not a number, out of range, or not an integer where one is needed
 *   makes the algorithm refuse the call with CLTOPK_ERR_UNSUPPORTED and a detail
 *   naming the variable and the bounds (for CLTOPK_PLAN_CONSTS: every AUTO call
 *   on an OpenCL context).  `cltopk(1)` lists each name with its bounds.
 *   CLTOPK_BITONIC         bitonic: B, WG, OUT, MAXM, SWZ, basic (e.g.
 *                          "B=8,WG=128,OUT=64,MAXM=4,SWZ=0" or "basic=1"; see
 *                          `cltopk tune`); an invalid set is UNSUPPORTED too
 *   CLTOPK_SBP             sbp-radix: wg, ipt, digit, c, reduce
 *   CLTOPK_SBP_TREE        sbp-tree: WG, PER, SPLIT, NS, CMAX, C, CF, CFMAX, TASK
 *   CLTOPK_RADIX           radix-select: hc, narrow, ipt, first, pre, gpc, lastg,
 *                          fuse, act
 *   CLTOPK_SAMPLE_FILTER   sample-filter: seed, s, rank, cap, lseg, force
 *                          (none|all|few), wg, unr, fwg, groups, sort, digit,
 *                          reduce, profile, check (none|normal|few|overflow|
 *                          spill: fail unless that path ran; testing), bs,
 *                          small, dense, range, seltop, ofs, part (a top-k
 *                          with k at least this, default n / 16, above the
 *                          final sort: the k-th selected, the input
 *                          partitioned by it, the k sorted), fbg (the
 *                          work-groups of the rare exact fallback that reads
 *                          the input: default 2 a compute unit, 1: one)
 *   CLTOPK_PLAN_CONSTS     the planner's device constants: bw, launch, lrate, h2d,
 *                          cpubw (see cltopk_explain); never saved to the cache
 *   CLTOPK_PROFILE         1: every kernel launch of a context opened by
 *                          cltopk_open gets an event, and each call's launches
 *                          are printed to stderr with their device times once
 *                          the call's work is waited for (costs ~7 us a launch)
 *   CLTOPK_MAX_CHUNK       cap, in elements, of one device chunk of host input
 *                          (the default comes from the device limits); it caps
 *                          the pieces of CLTOPK_STREAM too
 *   CLTOPK_STREAM          how a device algorithm moves host data larger than
 *                          one piece (32 MiB of keys, or CLTOPK_MAX_CHUNK, or
 *                          k if larger): 1 streams the pieces through two
 *                          pinned staging buffers, the transfer of one beside
 *                          the reduction of the one before (the default on
 *                          devices that are not CPUs); direct streams them
 *                          from the caller's memory without the staging copy
 *                          (for memory the caller pinned); 0 the chunk loop,
 *                          each chunk transferred before its reduction (the
 *                          default on CPU devices).  Another value makes such
 *                          calls fail with CLTOPK_ERR_UNSUPPORTED.
 *                          cltopk_explain says which path host data takes
 *   CLTOPK_PACKED_FUSED    0: never fuse decoding into top-k; require: fail
 *                          where it cannot fuse (see cltopk_benchmark_topk_packed)
 *   CLTOPK_SORT            the device sort (CLTOPK_ALGO_SORT, and radix select's
 *                          winners above k = 4096): wg, ipt, digit, lb, hc, gpc,
 *                          reg, ld, xs, tl, pf (1: the next tile loaded while
 *                          one is ranked; the GPU default), wr (1: a tile
 *                          ranked by warps of 32 work-items; the GPU
 *                          default), ptx (0: their votes through local
 *                          memory), wc (1, with wr: output sectors whole),
 *                          hu (vectors the histogram loads before counting),
 *                          os (1, with wr: one sweep a pass, offsets by a
 *                          look-back over the tiles before; the default on
 *                          NVIDIA GPUs), wsc (1, with NVIDIA's PTX: the
 *                          tile's scan by warp shuffles; on with os), hs
 *                          (histogram groups a scatter group), sk (without
 *                          os: the skewed passes by the wsc build)
 *   CLTOPK_BITS            bits (the many-rows kernels): wg and r (work-items a
 *                          group, elements a work-item a round: powers of two),
 *                          parts (a long dense row's work-groups; 0 = chosen),
 *                          tile (1: rows and segments that fit a group's
 *                          registers by the register tile; 0: never), rt
 *                          (elements a work-item holds there, a power of
 *                          two), maxima (0: the tile by radix passes only,
 *                          not the threshold of the work-items' maxima),
 *                          tkmax (dense rows take the tile up to this k),
 *                          and the sample filter of long dense rows: path
 *                          (auto: on GPUs where the tile does not take the
 *                          call and its model says so; sf: wherever it can
 *                          run, k up to wg x rt / 2 and 1024; nosf: never),
 *                          s (its sample a row; 0 = chosen), cap (candidates
 *                          a row, a multiple of 32, at most wg x rt; 0 =
 *                          chosen), sfpart (elements a filtering work-group
 *                          reads; 0 = chosen), fuse (0: the rows finished by a launch
 *                          of their own, not by each row's last filtering
 *                          work-group), srun (the sample in runs of srun
 *                          neighbours, a power of two: 8 on GPUs, 1
 *                          elsewhere), sfull (0: every load of the filter
 *                          tested, not its whole rounds without tests), fwg
 *                          and frt (with fuse=0, the finish's own tile; 0 =
 *                          the filter's), fmax (the finish's tile also by
 *                          the threshold of the maxima: 1 always, 0 never,
 *                          2 = where k is at most a quarter of its
 *                          work-items, the GPU default; 1 elsewhere), sfunr
 *                          (vectors a filtering work-item loads a round, a
 *                          power of two; 4, the default), shfl (the
 *                          finish's sort of 2 wg slots by warp shuffles: 1,
 *                          the GPU default, on NVIDIA's platform only; 2
 *                          emulated through local memory on any device, for
 *                          tests; 0 off), fpre (1, the GPU default: the
 *                          finish's radix passes from the first byte where
 *                          its candidates differ; 0, elsewhere: from the
 *                          top), force (all: the threshold below every
 *                          element; few: above all but the best possible
 *                          one) and check (served or fallback: the call
 *                          fails with CLTOPK_ERR_INTERNAL unless every row
 *                          was served by its candidates, resp. done over
 *                          the whole row; for tests)
 *   CLTOPK_KNN             cltopk_knn's distance tiles: tile (0: the old
 *                          kernel, a work-group a query), tq, tp (queries and
 *                          points of a tile), mq, mp (a work-item's micro-tile:
 *                          multiples of 4 dividing tq and tp), dc (the most
 *                          coordinates a chunk), sample and per_k (the sample:
 *                          max(sample, per_k * k) points; np at or below it
 *                          is computed whole), cap (candidates a query; 0 =
 *                          chosen; small values force the overflow path:
 *                          testing), batch (queries a batch; 0 = chosen)
 *   CLTOPK_INDEX           the early-stopping index's queries: probe (rounds of
 *                          1/probe of the longest partition's blocks, on
 *                          OpenCL devices the first round; default 32 on
 *                          GPUs, 16 elsewhere), grow (on OpenCL devices each
 *                          round grow times the one before; 2 on GPUs, 1
 *                          elsewhere), fan (the lists a work-group of the
 *                          device's merge takes; 16), sync (on OpenCL
 *                          devices read the rounds' progress back every
 *                          sync rounds, stopping early; 0, the default:
 *                          never, all rounds enqueued at once), switch (0:
 *                          never switch to full evaluation; 1, the default:
 *                          by the rounds' progress; 2: always after the
 *                          first round), ratio (the cost of a
 *                          full-evaluation block over an index block that the
 *                          rule assumes; 0.8 on CPUs, 0.2 on GPUs), resident
 *                          (0: indexes built or loaded stay in host memory,
 *                          their blocks copied to the device by the queries),
 *                          stage (blocks such a copy holds, in each of its two
 *                          device buffers; 0: chosen), piece (blocks a piece of
 *                          it gathered into pinned memory; 0: 32 MiB), full
 *                          (on OpenCL devices the full evaluation, after a
 *                          switch and in cltopk_index_full_topk: query, the
 *                          default, the query engine of cltopk_query_topk
 *                          reading the index in place, filter where its
 *                          answer does not stand; filter, one read keeping
 *                          the tuples at or above a bound, then their k
 *                          best; old, the kernel that keeps each
 *                          work-group's k best as it reads; fallback: the
 *                          filter's exact fallback forced, testing), cands
 *                          (the filter's room for candidates; 0: chosen;
 *                          small values force its fallback: testing),
 *                          pre (on OpenCL devices, with full=query and
 *                          switch=1, a query that an estimate from a host
 *                          sample and the thresholds says reads more than
 *                          this share of the blocks is evaluated in full
 *                          before any round; 0.1; 0: never) and spre (the
 *                          same for an index kept in host memory; 0.5)
 *   CLTOPK_QUERY           the device query (cltopk_query_topk): spec (1: the
 *                          kernel built for each query shape from its
 *                          programs; 0: the interpreter, one program for
 *                          every query, the default on CPU devices; 2, the
 *                          default on GPUs: that kernel from 2^22 rows) and
 *                          thr (1: tiles skip rows that k rows already beat;
 *                          0, the default: no threshold); path (tile: the
 *                          tile query; sf: the sample-filter query, a
 *                          threshold from a sample of rows, one read keeping
 *                          the rows at or above it, then their top k, with
 *                          an exact fallback to the tile query decided on
 *                          the device; auto, the default: sf on GPUs from
 *                          2^22 rows for a query without a filter) and, for
 *                          sf, s (its sample size), cap
 *                          (its survivor buffer, pairs), force (few: a
 *                          threshold that leaves too few survivors; all:
 *                          every passing row survives) and check (served or
 *                          fallback: the call waits and fails with
 *                          CLTOPK_ERR_INTERNAL unless that path ran): tests
 *   CLTOPK_FP_CONFIG       denorm (0: the OpenCL device is taken to lack
 *                          CL_FP_DENORM, as one that flushes subnormals to
 *                          zero, so that kNN, queries and the index run on
 *                          the CPU as they would there; 1, the default: the
 *                          device's word): tests.  A malformed value keeps
 *                          their device paths from running too
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
    CLTOPK_ALGO_SBP_RADIX = 2,    /* split-bucket radix top-k, k up to T / 4         */
    CLTOPK_ALGO_SBP_TREE = 3,     /* split-bucket search tree, k <= 2048 or 4096     */
    CLTOPK_ALGO_RADIX_SELECT = 4, /* global radix select: any k, any rank            */
    CLTOPK_ALGO_SORT = 5,         /* full device sort (stable radix sort), any k     */
    CLTOPK_ALGO_CPU_HEAP = 6,     /* OpenMP per-thread heaps, merged; any context    */
    CLTOPK_ALGO_CPU_BITONIC = 7,  /* CPU SIMD bitonic top-k (paper's Appendix C)      */
    CLTOPK_ALGO_CPU_RADIX = 8,    /* CPU radix select + collect; any k, any context  */
    CLTOPK_ALGO_SAMPLE_FILTER = 9, /* sampled threshold or band, one filtering read;
                                      any k, any rank */
    CLTOPK_ALGO_BITS = 10         /* many rows: a work-group a row, a filtered local
                                     buffer merged by bitonic sort; k <= 2048 (1024
                                     for 8-byte keys with 48 KiB of local memory).
                                     Made for cltopk_topk_rows/segments/knn; one
                                     array is one row (one work-group: slow on large
                                     arrays, never AUTO's choice there)            */
} cltopk_algo;

#define CLTOPK_LARGEST  0u   /* flags: descending order (the default)  */
#define CLTOPK_SMALLEST 1u   /* flags: ascending order                 */

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
#define CLTOPK_ERR_CORRUPT          (-15) /* packed input or a saved index is malformed   */
#define CLTOPK_ERR_INTERNAL         (-16) /* a bug: please report it with the detail     */
#define CLTOPK_ERR_EXPRESSION       (-17) /* a query expression is malformed (detail)    */

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
 *           "P:D": device D of platform P (0-based, as `cltopk devices` lists them;
 *           two plain decimal numbers, no sign or blank).
 *           anything else: the device whose "platform / device" name contains
 *           the string, case-insensitively; a string that matches several is
 *           CLTOPK_ERR_NO_DEVICE, the detail listing them.
 *           "cpu", "gpu" and "auto" are accepted in any case.
 *           "all", or a comma list of the specs above ("0:0,0:1", "gpu,Portable";
 *           OpenCL devices only: no "cpu" or "auto", no device twice, no blank
 *           around the commas): a context of several devices (at most 64), see
 *           below.  "all" on a host of one device opens that device alone.
 * A context of several devices is the first listed device's context for
 * everything (cltopk_get_cl, the cl_mem calls, rows, queries, indexes, the
 * benchmarks, cltopk_plan), except cltopk_topk and cltopk_select on host data:
 * those split the input into consecutive parts, one a device, in proportion to
 * each device's speed, run each part's top-k on its device at the same time (a
 * thread a device), and merge the parts' answers on the host: the answer, the
 * order and the ties (by smaller position; positions are of the whole input)
 * are those of one device, whatever the split.  The speeds: the first call
 * with keys of a size (4 or 8 bytes) splits by the speed the planner predicts
 * for each device (its measured constants; the named device algorithm's
 * model, or with CLTOPK_ALGO_AUTO each device's fastest); each split call then
 * records, per device, the elements a second of its part (its transfer and
 * top-k, timed on the host while the other parts run; the mean of the
 * previous rate and the latest part's, whatever the algorithm, n and k), and
 * the time the split costs besides its slowest part (threads, merge); later
 * calls with keys of that size split by those rates, and give parts only to
 * the fewest fastest devices whose predicted time together (plus that cost
 * where more than one) is least: the fastest device alone where it is
 * predicted faster than any split.  After 16 splits in a row that left a
 * device out, the next gives every device a part by its last rate, so that
 * a device left out on one slow measurement is measured again.  CLTOPK_SPLIT=model keeps the first
 * call's way for every call.  The rates belong to the context and change
 * under its lock (thread rules as ever).  A selection of rank r takes the best r + 1 of each part (host
 * memory of (r + 1) x (key size + 8) bytes a device).  AUTO runs the call on
 * the host alone where a CPU algorithm is predicted faster than the devices
 * together; a named CPU algorithm runs on the host once.  A named device
 * algorithm must be able to run the call on every device (else
 * CLTOPK_ERR_UNSUPPORTED naming the device).  cltopk_explain shows the split.
 * cltopk_device_name gives the devices' names joined by " + ".
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
 * The outputs may not overlap the input or each other (INVALID_ARGUMENT,
 * nothing written; checked once the algorithm is known to run the call).
 * Blocks until the outputs are written.  Host inputs larger than one device
 * allocation (or than a streamed piece: CLTOPK_STREAM) are processed in chunks
 * whose results are merged.  On a context of several devices (cltopk_open)
 * the input is split across them.
 * Returns CLTOPK_OK or CLTOPK_ERR_INVALID_ARGUMENT, CLTOPK_ERR_BAD_TYPE,
 * CLTOPK_ERR_BAD_ALGO, CLTOPK_ERR_BAD_FLAGS, CLTOPK_ERR_K_RANGE,
 * CLTOPK_ERR_UNSUPPORTED, CLTOPK_ERR_OPENCL, CLTOPK_ERR_BUILD,
 * CLTOPK_ERR_NO_MEMORY, CLTOPK_ERR_DEVICE_MEMORY. */
CLTOPK_API int cltopk_topk(cltopk_context *ctx, cltopk_dtype type, const void *keys, size_t n,
                           size_t k, unsigned flags, cltopk_algo algo, void *out_keys,
                           int64_t *out_index);

/* The entry at 0-based position `rank` of THE ORDER (rank 0 = the first of the
 * top-k).  out_key (one element) and out_index (one int64) may each be NULL, not
 * both.  Any rank < n is answered, with no top-k: by CLTOPK_ALGO_SAMPLE_FILTER
 * (a band of the input between two samples around the rank, kept by one
 * filtering read that counts what lies above it, then the device radix
 * selection of the band, or of the input where the band missed; exact either
 * way), CLTOPK_ALGO_RADIX_SELECT (the device radix selection of the input) or
 * CLTOPK_ALGO_CPU_RADIX; AUTO takes the one its selection model predicts
 * fastest (cltopk_plan with CLTOPK_PLAN_SELECT tells which).  Another named
 * algorithm answers through its top-k of rank + 1 where that fits.  On a
 * context of several devices: each device's best rank + 1 of its part, merged
 * (cltopk_open).
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
 *              completes when both outputs are written; a call that fails
 *              leaves *done as it was
 * Only device algorithms (BITONIC, SBP_RADIX, SBP_TREE, RADIX_SELECT, SORT,
 * SAMPLE_FILTER, BITS, or AUTO) are accepted; the call enqueues its
 * kernels on the context's queue and returns without waiting for them.  It never
 * calls clFinish on the caller's queue.  Two cases wait.  Float keys with
 * out_index NULL: the kernels run without positions, then the call reads the k
 * keys back and, if a zero or a NaN is among them (whose exact bits need the
 * position), runs again with positions; it returns when the outputs are
 * written (into an out_keys the host may not read, CL_MEM_HOST_NO_ACCESS or
 * CL_MEM_HOST_WRITE_ONLY, they run with positions from the start).  And where
 * AUTO's planner (cltopk_plan_buffer tells) chooses a CPU algorithm, that
 * algorithm blocks until the wait list has completed, maps the keys for
 * reading (keys the host may not read: CLTOPK_ERR_UNSUPPORTED), and writes
 * the outputs before it returns (done is then already complete).
 * out_index counts positions from `offset` (the first key is position 0).
 * The output ranges may not overlap the input range or each other, in one
 * buffer or in sub-buffers of one buffer (INVALID_ARGUMENT).  keys made
 * CL_MEM_WRITE_ONLY, or an output made CL_MEM_READ_ONLY, is INVALID_ARGUMENT
 * (the kernels read and write them; the same in every cl_mem form).
 * The context keeps scratch buffers that later calls reuse; work from
 * successive calls is ordered by events, so an out-of-order queue is safe.
 * n must stay below 2^32 - 1 elements per call.
 * Returns as cltopk_topk, plus CLTOPK_ERR_BUFFER_SIZE (a cl_mem too small) and
 * CLTOPK_ERR_NO_OPENCL (a CPU context). */
CLTOPK_API int cltopk_topk_buffer(cltopk_context *ctx, cltopk_dtype type, cl_mem keys,
                                  size_t offset, size_t n, size_t k, unsigned flags,
                                  cltopk_algo algo, cl_mem out_keys, cl_mem out_index,
                                  cl_uint num_wait, const cl_event *wait, cl_event *done);

/* The entry at 0-based position `rank` of THE ORDER among the n elements of
 * device-resident data, as cltopk_select.  Arguments as cltopk_topk_buffer,
 * with out_key (one element of `type`) and out_index (one int64, counted from
 * `offset`) cl_mem outputs, either NULL, not both.  A named algorithm must
 * select device data itself (sample-filter and radix-select do, with no host
 * round trip); AUTO selects on the device,
 * or where its planner prefers the host, reads the keys to the host after the
 * wait list, selects there and writes the outputs back before it returns.
 * Returns as cltopk_topk_buffer, with CLTOPK_ERR_RANK_RANGE for rank >= n. */
CLTOPK_API int cltopk_select_buffer(cltopk_context *ctx, cltopk_dtype type, cl_mem keys,
                                    size_t offset, size_t n, size_t rank, unsigned flags,
                                    cltopk_algo algo, cl_mem out_key, cl_mem out_index,
                                    cl_uint num_wait, const cl_event *wait, cl_event *done);

/* ------------------------------------------------------- many rows at once
 * Many independent top-k in one call: the rows of a matrix, the segments of an
 * array, or the k nearest points of many queries.  Every row follows THE
 * ORDER on its own (ties by smaller position within the row).  Outputs are
 * rows x k, row r's answer at r * k, best first.  A call that fails writes
 * nothing.  Thread rules as cltopk_topk.
 *
 * Algorithms (the algo argument of the row calls):
 *   CLTOPK_ALGO_AUTO      host data: CLTOPK_ALGO_BITS on a GPU where it can run
 *                         the call, else CLTOPK_ALGO_CPU_HEAP; cl_mem data:
 *                         BITS where it can run the call, else, on a GPU where
 *                         the planner predicts it faster (a few long rows),
 *                         the rows a row at a time on the device (below),
 *                         else the CPU heap on a host copy (the call then
 *                         blocks)
 *   CLTOPK_ALGO_CPU_HEAP  OpenMP over the rows, each row by one thread with the
 *                         SIMD filter and a heap of k (from k = 256 a buffer of
 *                         2k candidates kept to its best k by a quickselect);
 *                         any k, any context, host data only
 *   CLTOPK_ALGO_BITS      the device kernel: a work-group a row keeps its best
 *                         k in local memory and a buffer of the elements that
 *                         beat the current k-th, merged by a bitonic sort (seed
 *                         004's "bits"); k <= 2048 (4-byte keys) or 1024 (8-byte
 *                         keys) where the device has 48 KiB of local memory;
 *                         rows below 2^32 - 1 elements; OpenCL with 64-bit
 *                         integers.  Rows that fit a work-group's registers
 *                         take the register tile instead (k <= 1024); long
 *                         dense rows at larger k, on GPUs, a sample filter (a
 *                         threshold a row from a sample, one read keeping
 *                         the elements at or above it, the top-k of those; a
 *                         row with too few or too many is done whole, decided
 *                         on the device).  Host data travels in batches of
 *                         whole rows that fit one device allocation.
 *   CLTOPK_ALGO_SAMPLE_FILTER, RADIX_SELECT, SORT, BITONIC, SBP_RADIX, SBP_TREE
 *                         (dense rows and segments of cl_mem data only) a row
 *                         at a time on the device: each row or segment by that
 *                         single-array algorithm with its limits (a segment
 *                         shorter than k at its length), its answer copied to
 *                         its place; the data never leaves the device, and
 *                         each row costs that algorithm's launches, so it
 *                         suits a few long rows at k above BITS' largest.
 *                         On host data CLTOPK_ERR_UNSUPPORTED.
 * Any other algorithm is CLTOPK_ERR_UNSUPPORTED with a detail.  Every
 * algorithm gives the same bits.
 * ------------------------------------------------------------------------ */

/* Top-k of every row of a row-major matrix.
 *   keys       rows x cols elements of `type`, row r at keys + r * ld (elements);
 *              may be NULL when rows == 0 or k == 0
 *   rows       0 succeeds and writes nothing
 *   cols       elements of a row
 *   ld         elements between row starts, ld >= cols (INVALID_ARGUMENT else)
 *   k          0 <= k <= cols (CLTOPK_ERR_K_RANGE else); 0 writes nothing
 *   flags, algo  CLTOPK_LARGEST or CLTOPK_SMALLEST; algo as above
 *   out_keys   rows * k elements of `type`, or NULL
 *   out_index  rows * k int64: the column of each entry within its row, or
 *              NULL (not both NULL)
 * The outputs may not overlap the input or each other (INVALID_ARGUMENT).
 * Blocks until the outputs are written.
 * Returns CLTOPK_OK, CLTOPK_ERR_INVALID_ARGUMENT, CLTOPK_ERR_BAD_TYPE,
 * CLTOPK_ERR_BAD_ALGO, CLTOPK_ERR_BAD_FLAGS, CLTOPK_ERR_K_RANGE,
 * CLTOPK_ERR_UNSUPPORTED, CLTOPK_ERR_OPENCL, CLTOPK_ERR_BUILD,
 * CLTOPK_ERR_NO_MEMORY, CLTOPK_ERR_DEVICE_MEMORY. */
CLTOPK_API int cltopk_topk_rows(cltopk_context *ctx, cltopk_dtype type, const void *keys,
                                size_t rows, size_t cols, size_t ld, size_t k, unsigned flags,
                                cltopk_algo algo, void *out_keys, int64_t *out_index);

/* Top-k of every segment of an array: segment s is keys[offsets[s] ..
 * offsets[s + 1]).
 *   nseg       number of segments; 0 succeeds and writes nothing (offsets may
 *              then be NULL)
 *   offsets    nseg + 1 int64 in host memory: offsets[0] >= 0 and never
 *              decreasing (INVALID_ARGUMENT with the first offending entry
 *              else); segments may be empty; keys holds offsets[nseg] elements
 *              (keys may be NULL when that is 0)
 *   k          any k >= 0: a segment shorter than k is padded, past its length,
 *              with index -1 and a key of all zero bytes
 *   out_index  nseg * k int64: the position of each entry within its segment
 * Other arguments, blocking and returns as cltopk_topk_rows (no K_RANGE). */
CLTOPK_API int cltopk_topk_segments(cltopk_context *ctx, cltopk_dtype type, const void *keys,
                                    size_t nseg, const int64_t *offsets, size_t k,
                                    unsigned flags, cltopk_algo algo, void *out_keys,
                                    int64_t *out_index);

typedef enum { CLTOPK_L2SQ = 0, CLTOPK_INNER_PRODUCT = 1 } cltopk_metric;

/* Exact k nearest neighbours: for each of nq queries, the k of np points with
 * the smallest squared L2 distance (CLTOPK_L2SQ), or the largest inner
 * product (CLTOPK_INNER_PRODUCT), ties by smaller point index.
 *   queries    nq x d floats, row-major (query q at queries + q * d)
 *   points     np x d floats, row-major
 *   d          dimension, >= 1 (d = 0 is INVALID_ARGUMENT); any d, not only
 *              multiples of a vector width
 *   nq         >= 1 (nq = 0 is INVALID_ARGUMENT)
 *   k          0 <= k <= np (CLTOPK_ERR_K_RANGE else); 0 writes nothing
 *   out_dist   nq * k floats: the distances (or products), or NULL
 *   out_index  nq * k int64: the point indices, or NULL (not both NULL)
 * The distance is defined so that every device returns the same bits:
 *     acc = 0.0f; for j = 0 .. d-1 in order: acc = fma(q[j] - p[j], q[j] - p[j], acc)
 * (the difference rounded to float first; inner product: acc = fma(q[j], p[j],
 * acc)), each fma rounded once, subnormals kept.  The results are ranked by
 * THE ORDER on these floats: a NaN distance (NaN or infinite coordinates)
 * comes after +inf for CLTOPK_L2SQ (smallest first) and, as everywhere in THE
 * ORDER, before +inf for CLTOPK_INNER_PRODUCT (largest first).  A NaN is written as the quiet NaN
 * 0x7FC00000 on every device.
 * On an OpenCL context the device kernels run the call where they can (k as
 * CLTOPK_ALGO_BITS, np < 2^32 - 1, the points in one device allocation, a
 * device whose float32 arithmetic rounds as the CPU's: CL_FP_DENORM,
 * CL_FP_ROUND_TO_NEAREST and CL_FP_INF_NAN in CL_DEVICE_SINGLE_FP_CONFIG, as
 * on POCL and NVIDIA's OpenCL; a device that flushes subnormals to zero would
 * give other bits, so the call runs on the CPU there, on host copies for the
 * cl_mem form, and cltopk_explain_knn says why): tiles
 * of queries x points compute the distances (each by one work-item, in the
 * order above), first of a sample of the points, whose k-th best distance
 * is a bound a query, then of every point, keeping a list a query of those
 * within its bound; a work-group a query selects its k among them.  Where np
 * is at most the sample every distance is kept.  A query whose list
 * overflows (many points tied at its bound, as when all points are equal) is
 * recomputed over every point, a work-group for it: exact, but slow.  The
 * decision is taken on the device: the cl_mem form reads nothing back.
 * Elsewhere, and on the "cpu" context, OpenMP threads over the queries
 * compute the same bits.  No algorithm argument.
 * The outputs may not overlap the points, the queries or each other.  Blocks
 * until the outputs are written.
 * Returns as cltopk_topk_rows. */
CLTOPK_API int cltopk_knn(cltopk_context *ctx, cltopk_metric metric, const float *queries,
                          size_t nq, const float *points, size_t np, size_t d, size_t k,
                          float *out_dist, int64_t *out_index);

/* What the many-rows calls would run, and why, without running them: a text
 * of a few lines into buf (at most len bytes, NUL-terminated, truncated if
 * longer): the request, cpu-heap, bits (its configuration on this device, or
 * why it cannot run the call), for device rows and segments a row at a time
 * (the single-array algorithm a row takes and the predicted times against a
 * host copy's) and AUTO's choice (the line "-> ...").
 * cltopk_explain_rows: rows x cols dense rows (offsets NULL) or the nseg =
 * rows segments of offsets; cltopk_explain_knn: a kNN call.  device_data 1
 * explains the cl_mem forms (CLTOPK_ERR_NO_OPENCL on the "cpu" context).
 * Returns CLTOPK_OK, or what the call itself would return for these
 * arguments (INVALID_ARGUMENT, BAD_TYPE, BAD_FLAGS, K_RANGE ...).  Thread
 * rules as cltopk_topk. */
CLTOPK_API int cltopk_explain_rows(cltopk_context *ctx, cltopk_dtype type, size_t rows,
                                   size_t cols, const int64_t *offsets, size_t k, unsigned flags,
                                   int device_data, char *buf, size_t len);
CLTOPK_API int cltopk_explain_knn(cltopk_context *ctx, cltopk_metric metric, size_t nq,
                                  size_t np, size_t d, size_t k, int device_data, char *buf,
                                  size_t len);

/* cl_mem forms of the three.  As cltopk_topk_buffer: `offset` (of keys),
 * q_offset and p_offset are in elements; outputs start at element 0 of their
 * buffers (rows * k elements, nq * k for kNN); num_wait / wait are the events
 * the work waits for; done (if not NULL) receives an event that completes when
 * the outputs are written (the caller releases it).  The calls enqueue their
 * kernels and return without waiting, except where they run on the CPU
 * (AUTO when neither the device kernel nor a row at a time on the device
 * takes the call: they then wait for the wait list, compute on a host copy
 * (the input mapped for reading) and write the outputs before returning).
 * An input (keys, points or queries) created with CL_MEM_HOST_NO_ACCESS or
 * CL_MEM_HOST_WRITE_ONLY is never taken to the host: AUTO runs rows and
 * segments a row at a time on the device where the device kernel cannot,
 * and where only the host could run the call (CLTOPK_BITS=each=off, kNN
 * past the kernel's k) the call is CLTOPK_ERR_UNSUPPORTED, naming the flag,
 * with nothing written.
 * Segment offsets stay in host memory (validated and copied by the call; the
 * caller may reuse them on return); they count from `offset`.  A named host
 * algorithm (cpu-heap) is CLTOPK_ERR_UNSUPPORTED here; a named single-array
 * device algorithm runs the rows or segments a row at a time (above; kNN
 * takes none: CLTOPK_ERR_UNSUPPORTED).  rows = 0, nseg = 0 or
 * k = 0 enqueue nothing but still give an event after the wait list (kNN's
 * nq = 0 is CLTOPK_ERR_INVALID_ARGUMENT, as in cltopk_knn).  The kNN outputs
 * may not overlap the queries' or the points' ranges, in one buffer or in
 * sub-buffers of one buffer (INVALID_ARGUMENT).
 * Returns as the host forms, plus CLTOPK_ERR_BUFFER_SIZE (a cl_mem too small)
 * and CLTOPK_ERR_NO_OPENCL (a CPU context). */
CLTOPK_API int cltopk_topk_rows_buffer(cltopk_context *ctx, cltopk_dtype type, cl_mem keys,
                                       size_t offset, size_t rows, size_t cols, size_t ld,
                                       size_t k, unsigned flags, cltopk_algo algo,
                                       cl_mem out_keys, cl_mem out_index, cl_uint num_wait,
                                       const cl_event *wait, cl_event *done);
CLTOPK_API int cltopk_topk_segments_buffer(cltopk_context *ctx, cltopk_dtype type, cl_mem keys,
                                           size_t offset, size_t nseg, const int64_t *offsets,
                                           size_t k, unsigned flags, cltopk_algo algo,
                                           cl_mem out_keys, cl_mem out_index, cl_uint num_wait,
                                           const cl_event *wait, cl_event *done);
CLTOPK_API int cltopk_knn_buffer(cltopk_context *ctx, cltopk_metric metric, cl_mem queries,
                                 size_t q_offset, size_t nq, cl_mem points, size_t p_offset,
                                 size_t np, size_t d, size_t k, cl_mem out_dist,
                                 cl_mem out_index, cl_uint num_wait, const cl_event *wait,
                                 cl_event *done);

/* ================================================== queries over columns
 * The top k rows of a table by an expression, among the rows where a filter
 * holds: SQL's SELECT ... WHERE where ORDER BY order_by [DESC] LIMIT k, the
 * filter and the score evaluated as the columns are read (seed 000, section 5).
 *
 * Expressions.  order_by is a number; where a condition.  Loosest first:
 *   or, and, not, a comparison (< <= > >= == !=: not chained), + -, * /,
 *   unary minus; parentheses; literals (decimal or 0x hexadecimal integers up
 *   to 2^64 - 1, a minus sign before one making a negative integer; decimals
 *   with a point or an exponent: 1.5, .5, 2e3); column names
 *   ([A-Za-z_][A-Za-z0-9_]*, case-sensitive); functions min(a, b), max(a, b),
 *   abs(a), sqrt(a), log(a), exp(a), floor(a), ceil(a), if(condition, a, b).
 *   The words and or not if min max abs sqrt log exp floor ceil are reserved.
 *   At most 4096 bytes an expression, nesting 64 deep, 512 operations, 32
 *   stack slots, 64 columns a call of which 8 may be used.
 * Typing.  A comparison of two integer terms (an integer column or an integer
 *   literal) is exact: their mathematical values, whatever their widths and
 *   signedness (an int64 -1 is less than a uint64 2^64 - 1).  Everything else
 *   is arithmetic in score_type (CLTOPK_FLOAT32 or CLTOPK_FLOAT64): a column
 *   or literal is converted to it rounding to nearest (a decimal literal
 *   rounded once from its text), and each operation rounds once, IEEE 754,
 *   with no fused multiply-add: x / 0 is +-inf, 0 / 0 NaN, sqrt correctly
 *   rounded (of a negative number: NaN).  log and exp are cltopk's own (a
 *   few ulp from the exact value; log of a negative number NaN, of 0 -inf;
 *   exp overflows to +inf): the same operations, so the same bits, on every
 *   device.  min and max give NaN if either argument is NaN, else the first
 *   unless the second is strictly smaller (larger).  Comparisons of numbers
 *   are IEEE (NaN is unequal to everything: only != holds; -0 == +0).
 *   if(c, a, b) is a where c holds, else b.
 * Order.  Scores order as THE ORDER orders floats: a NaN score above +inf
 *   (first with CLTOPK_LARGEST, last with CLTOPK_SMALLEST), -0 equal to +0;
 *   ties by smaller row.  Every device (the CPU, POCL, a GPU) returns the
 *   same rows and score bits; a NaN score is written as the quiet NaN
 *   0x7FC00000 (0x7FF8000000000000 for float64).  An OpenCL device runs a
 *   query only where its arithmetic rounds as the CPU's: CL_FP_DENORM,
 *   CL_FP_ROUND_TO_NEAREST and CL_FP_INF_NAN in CL_DEVICE_SINGLE_FP_CONFIG,
 *   and in CL_DEVICE_DOUBLE_FP_CONFIG where it computes in float64 (float64
 *   scores or columns, or float32 division without
 *   CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT); elsewhere (a device that flushes
 *   subnormals to zero) the query runs on the CPU, on host copies for the
 *   cl_mem form, and cltopk_query_explain says why.
 * Errors.  A malformed expression is CLTOPK_ERR_EXPRESSION with a detail
 *   naming the expression, the byte position (from 1) and what was expected,
 *   e.g. "order_by: at 17: unknown column 'likes_count'; columns are: id,
 *   retweets" (an unknown name before '(' lists the functions instead; an
 *   empty expression is at its end, a too long one at byte 4097); nothing is
 *   written and nothing compiled. */
typedef struct {
    const char *name;  /* unique in the call; not a reserved word */
    cltopk_dtype type;
    const void *data;  /* n elements (host memory) */
} cltopk_column;

/* The k rows with the largest (CLTOPK_LARGEST) or smallest (CLTOPK_SMALLEST)
 * order_by among those where `where` holds (NULL: every row) of a table of n
 * rows whose columns are cols[0 .. ncols).  out_scores (k scores of
 * score_type) and out_index (k row numbers) are written best first, entries
 * past the rows returned with score bytes 0 and index -1; either may be NULL,
 * not both.  *out_count (may be NULL) receives min(k, rows passing the
 * filter).  k = 0 or n = 0 write nothing but *out_count = 0.  Columns may be
 * unused by the expressions (their data may then be NULL).  Runs on the
 * context's device: an OpenCL GPU evaluates the expressions as it reads the
 * columns (cl/query.cl), a CPU context on the host (OpenMP).  Flags:
 * CLTOPK_SMALLEST only.  Returns CLTOPK_OK, CLTOPK_ERR_INVALID_ARGUMENT (NULL
 * where data is needed, a bad column name, a duplicate name, too many
 * columns), CLTOPK_ERR_BAD_TYPE (a column's or score_type), CLTOPK_ERR_BAD_FLAGS,
 * CLTOPK_ERR_EXPRESSION, CLTOPK_ERR_NO_MEMORY, or an OpenCL status.  Blocks
 * until the outputs are written.  Thread rules as cltopk_topk. */
CLTOPK_API int cltopk_query_topk(cltopk_context *ctx, const cltopk_column *cols, size_t ncols,
                                 size_t n, const char *order_by, const char *where, size_t k,
                                 unsigned flags, cltopk_dtype score_type, void *out_scores,
                                 int64_t *out_index, size_t *out_count);

/* Check the expressions against the columns (names and types; data is not
 * read and may be NULL) without running anything: CLTOPK_OK, or the status
 * and detail cltopk_query_topk would give; the detail is also copied to err
 * (errlen bytes, NUL-terminated; err may be NULL). */
CLTOPK_API int cltopk_query_check(cltopk_context *ctx, const cltopk_column *cols, size_t ncols,
                                  const char *order_by, const char *where, char *err,
                                  size_t errlen);

/* The cl_mem form: cols[i].data is ignored; dcols[i] holds column i from
 * element doffsets[i] (doffsets may be NULL: all 0; an unused column's
 * buffer may be NULL).  out_scores and out_index start at element 0 (k
 * elements); out_count (may be NULL) receives one cl_ulong, the rows
 * returned.  num_wait / wait / done as cltopk_topk_buffer.  On a GPU the
 * work is enqueued and the call returns; where the device cannot run the
 * query it runs on the CPU on host copies (after the wait list).  Returns as
 * cltopk_query_topk, plus CLTOPK_ERR_BUFFER_SIZE and CLTOPK_ERR_NO_OPENCL
 * (a CPU context). */
CLTOPK_API int cltopk_query_topk_buffer(cltopk_context *ctx, const cltopk_column *cols,
                                        const cl_mem *dcols, const size_t *doffsets,
                                        size_t ncols, size_t n, const char *order_by,
                                        const char *where, size_t k, unsigned flags,
                                        cltopk_dtype score_type, cl_mem out_scores,
                                        cl_mem out_index, cl_mem out_count, cl_uint num_wait,
                                        const cl_event *wait, cl_event *done);
/* What cltopk_query_topk (device_data 0) or its cl_mem form (1) would run,
 * without running it: a text of a few lines into buf (len bytes,
 * NUL-terminated, truncated if longer): the request, the columns used, each
 * program's operations, whether the device can run it (or why not) and with
 * which kernel: the one built for this query from its programs (with what
 * that build costs, or that this context already holds it) or the
 * interpreter (and why), and the choice (the line "-> ...").  Column data is not read.  Returns
 * CLTOPK_OK, or what the call would return for these arguments
 * (CLTOPK_ERR_EXPRESSION ...), CLTOPK_ERR_NO_OPENCL for device data on the
 * "cpu" context.  Thread rules as cltopk_topk. */
CLTOPK_API int cltopk_query_explain(cltopk_context *ctx, const cltopk_column *cols, size_t ncols,
                                    size_t n, const char *order_by, const char *where, size_t k,
                                    unsigned flags, cltopk_dtype score_type, int device_data,
                                    char *buf, size_t len);
/* Time cltopk_query_topk: on an OpenCL context the used columns are copied to
 * the device once and the cl_mem form is timed (enqueue to completion); on
 * the "cpu" context the host form.  *median_s: the median of reps (1..64)
 * calls after one warm-up; *floor_s (may be NULL): one read of the columns the
 * expressions use, measured in the same call (as cltopk_benchmark's floor).
 * n and k at least 1.  Returns as cltopk_query_topk. */
CLTOPK_API int cltopk_benchmark_query(cltopk_context *ctx, const cltopk_column *cols,
                                      size_t ncols, size_t n, const char *order_by,
                                      const char *where, size_t k, unsigned flags,
                                      cltopk_dtype score_type, int reps, double *median_s,
                                      double *floor_s);
/* The device peer of a query, for benchmarks: what a user of cltopk_topk
 * would run without the fused query.  A kernel evaluates the filter and the
 * score (the same operations and bits as the query) and writes the score
 * column of all n rows to device memory, the rows failing the filter getting
 * the worst score (-inf with CLTOPK_LARGEST, a NaN with CLTOPK_SMALLEST),
 * then cltopk_topk_buffer (CLTOPK_ALGO_AUTO) finds its k best; the two are
 * enqueued back to back on the columns copied to the device once.
 * *median_s: the median of reps (1..64) such runs after one warm-up (enqueue
 * to completion); *score_s (may be NULL): the median of the score kernel
 * alone.  Its rows equal the query's where at least k rows pass the filter
 * and the k-th best score is above the worst score (it does not compact the
 * passing rows).  After the runs its answer is checked once against
 * cltopk_query_topk's (the first min(k, rows passing) scores bit for bit, and
 * their rows wherever the score is not the worst one, which a passing row
 * may tie): a difference is CLTOPK_ERR_INTERNAL.  n >= k >= 1, n below
 * 2^31 - 1; the score column needs n scores of device memory beside the
 * columns.  Returns as
 * cltopk_benchmark_query, plus CLTOPK_ERR_NO_OPENCL on the "cpu" context and
 * CLTOPK_ERR_UNSUPPORTED where the device query cannot run (k too large,
 * no fp64 where it is needed, arithmetic that does not round as the CPU's:
 * the detail names the missing CL_FP_* capability). */
CLTOPK_API int cltopk_benchmark_query_peer(cltopk_context *ctx, const cltopk_column *cols,
                                           size_t ncols, size_t n, const char *order_by,
                                           const char *where, size_t k, unsigned flags,
                                           cltopk_dtype score_type, int reps, double *median_s,
                                           double *score_s);
/* ============================================== end queries over columns */

/* ================================================ early-stopping top-k index
 * The k best tuples of a table of scored tuples under a weighted sum of some of
 * their attributes, read block by block until the rest cannot enter (seed 002:
 * Zois, Tsotras, Najjar, ADMS'19, "the ordered data-threshold table").
 *
 * Build.  The n tuples (d float32 attributes each) are split into partitions:
 *   CLTOPK_PARTITION_RANDOM  a random permutation (seed) cut into equal parts;
 *   CLTOPK_PARTITION_ANGLE   angle-space partitioning: each tuple's d - 1
 *                            hyperspherical angles around a reference point
 *                            beyond the best corner (per attribute: its maximum
 *                            plus a tenth of its range), phi_j = atan2(sqrt(
 *                            sum over l > j of r_l^2), r_j) with r_l the
 *                            distance to that point; the tuples are cut by
 *                            phi_0 into s_0 equal-count slabs, each slab by
 *                            phi_1 into s_1, and so on (the product of the
 *                            s_j is at most `partitions`: the partition count
 *                            may come out smaller: cltopk_index_info_get).
 * Within a partition tuples are ordered by their largest attribute,
 * descending (ties by tuple number), and cut into blocks of `block` tuples
 * (the last one padded).  Each block keeps a threshold tuple: per attribute
 * the maximum over all LATER blocks of its partition.
 *
 * Query.  score(t) = acc, where acc = 0.0f and for j = 0 .. m-1 in order
 *   acc = fmaf(w[j], a[attr[j]][t], acc)   (one rounding each, IEEE 754)
 * with every w[j] >= 0 and finite.  The answer is the k tuples with the best
 * scores under THE ORDER for CLTOPK_LARGEST float keys (a NaN score, which
 * only an overflow to both infinities can make, above +inf; -0 equal to +0),
 * ties by smaller tuple number: the same tuples and score bits as the full
 * evaluation (cltopk_index_full_topk), on every device.  A score is written as
 * computed, except a NaN, written 0x7FC00000, and a zero, written +0.0.
 * Each partition is read block by block keeping its k best.  Every
 * partition that holds k tuples publishes its k-th score to a bound shared by
 * all (the largest such score so far); after a block, a partition stops when
 * the bound is strictly greater than the score of the block's threshold tuple
 * computed by the same rule (and that score is neither NaN nor +inf).  This is
 * exact: fmaf with a weight >= 0 rounds to nearest a function non-decreasing
 * in each argument, so no later tuple of the partition can score above the
 * threshold's score, hence none reaches the bound, below which k tuples of
 * one partition already lie (with >= a later tuple tying the k-th with a
 * smaller tuple number could be lost).  The partitions are read in rounds
 * (each 1/16 of the longest partition's blocks, CLTOPK_INDEX=probe; on a GPU
 * a first round of 1/32, each later one twice as long as the one before,
 * CLTOPK_INDEX=grow).  After each round the query projects, from how fast
 * each unfinished partition's threshold score fell in its last round, how
 * many more blocks it needs to fall below the bound; when reading those
 * costs more than scoring every block left by the full evaluation (whose
 * blocks cost CLTOPK_INDEX=ratio of an index block: 0.8 on CPUs, 0.2 on
 * GPUs), it does the latter (stats->full_evaluation).  Data whose thresholds
 * do not fall switches after its first round, so it costs about one full
 * evaluation.  On an OpenCL device that decision is taken by a kernel after
 * each round (the rule in float arithmetic: it chooses the path, never the
 * answer), and the host enqueues every round at once and waits only for the
 * answer (an index in host memory: after each round, for its copies).  An
 * index in device memory also keeps on the host its thresholds (a B-th of
 * its data) and a sample of tuples (some 4096, the first of each
 * partition): before any round, the sample's k-th best score and the
 * thresholds estimate the share of blocks the query would read, and where
 * it is more than a tenth (CLTOPK_INDEX=pre) the query goes to the full
 * evaluation at once.  The estimate only chooses the path: the answer is
 * the same either way.
 *
 * Where it runs.  On an OpenCL context whose device rounds float32 as the
 * CPU (CL_FP_DENORM, CL_FP_ROUND_TO_NEAREST and CL_FP_INF_NAN in
 * CL_DEVICE_SINGLE_FP_CONFIG; a device that flushes subnormals to zero would
 * score other bits) the index is kept in device memory where it fits (the
 * attributes in one allocation of at most
 * CL_DEVICE_MAX_MEM_ALLOC_SIZE and half the device's memory; several indexes
 * may share a device) and queried by cl/index.cl (a work-group a partition;
 * k up to 2048, less where local memory is small).  Before any device work,
 * the host scores a sample of the index's tuples (the first of each
 * partition) and, with the thresholds it keeps, estimates the share of
 * blocks the query reads: above a tenth, the query is evaluated in full at
 * once (below); else a bound, the least exact score of k sampled tuples (so
 * never above the k-th best), lets one launch read every block the
 * thresholds do not rule out and keep the tuples scoring at or above it,
 * whose k best are the answer (where they overflow their buffer, the rounds
 * below answer instead); the estimate chooses the way, never the answer.  An index that does not
 * fit (or CLTOPK_INDEX=resident=0) stays in host memory, and its queries copy
 * the blocks each round reads (and, after a switch, the blocks left, a chunk
 * at a time) to the device as they go, through the context's two pinned
 * staging buffers and second queue (those of streamed host data): the host
 * gathers a piece of blocks while the previous piece moves, and the full
 * evaluation's chunks alternate between two device buffers, so that a
 * chunk moves while the kernels read the one before (a round still waits for
 * the round before it, whose state says which blocks it reads).  A k above
 * the kernels' limit is answered on the host by the OpenMP code of the "cpu"
 * context (from a copy read back for the call where the device holds the
 * index).  On another device, the index stays in host memory and every
 * query runs on that OpenMP code (stats->on_device 0).  On the "cpu" context
 * everything is in host memory and runs on OpenMP threads.
 *
 * Threads.  An index belongs to the context it was built or loaded on, which
 * must outlive it; its calls take that context's lock (thread rules as
 * cltopk_topk), so the queries of one context run one at a time.  On an
 * OpenCL device an index keeps its queries' buffers (the partitions' state
 * and lists, the merge's lists, the block list; some 8 (P + 4 compute units)
 * k bytes, P the partitions; the full evaluation's candidates, n / 2 bytes
 * within 512 KiB .. 128 MiB; the query engine's answer, 12 (k + 1) bytes;
 * on the host, the foresee's sample and the thresholds of up to 64
 * partitions, some 4 d (64 n / (P B) + 2048) bytes, for the index's life; an index in host memory also its two staging
 * buffers of CLTOPK_INDEX=stage blocks, by default each at most an eighth of
 * one allocation and 256 MiB, the second only where one does not hold every
 * block) from its first query until cltopk_index_free, made larger when a
 * query asks a larger k; that lock covers them too.  The pinned buffers its
 * copies go through (two of 32 MiB, or one piece if larger) are the
 * context's, kept until cltopk_close.
 * Failing calls set the context's detail text.
 * ======================================================================== */

typedef struct cltopk_index cltopk_index;

typedef enum { CLTOPK_PARTITION_RANDOM = 0, CLTOPK_PARTITION_ANGLE = 1 } cltopk_partitioning;

typedef struct {
    cltopk_partitioning partitioning;
    size_t partitions; /* at most this many partitions; 0: chosen from n and the
                          device (one a 2^18 tuples, on an OpenCL GPU one a
                          2^16 and two a compute unit at least; 16 to 2048) */
    size_t block;      /* tuples a block, 1 to 2^20; 0: chosen (256, fewer for
                          small partitions) */
    uint64_t seed;     /* the random partitioning's permutation */
} cltopk_index_options;

typedef struct {
    uint64_t tuples_evaluated;    /* scores computed (padding not counted)     */
    uint64_t blocks_read;         /* blocks whose attributes were read          */
    uint64_t tuples;              /* n                                          */
    size_t partitions;            /* non-empty partitions                       */
    size_t partitions_stopped;    /* of those, stopped before their last block  */
    int stopped_early;            /* 1: some tuples were never evaluated        */
    int full_evaluation;          /* 1: the blocks left after the probe were
                                     evaluated in full (or the call was
                                     cltopk_index_full_topk)                    */
    int on_device;                /* 1: run by the OpenCL device's kernels      */
} cltopk_index_stats;

/* What an index is made of (cltopk_index_info). */
typedef struct {
    size_t n, d;
    size_t partitions;            /* partitions made (some may be empty)        */
    size_t block;                 /* tuples a block                             */
    size_t blocks;                /* blocks of all partitions                   */
    cltopk_partitioning partitioning;
    uint64_t seed;
    int on_device;                /* 1: held in the device's memory             */
    uint64_t bytes;               /* memory the index holds (device or host)    */
} cltopk_index_info;

/* Build an index of n tuples of d attributes.
 *   ctx    an open context: the index lives on its device (see above)
 *   attrs  d pointers to n floats each: attrs[j][t] is attribute j of tuple t
 *          (copied; the caller keeps its arrays); every value finite
 *   d      1 to 64; n 1 to 2^32 - 2
 *   opt    NULL: defaults (random partitioning, seed 0, chosen sizes)
 *   out    receives the index (NULL on failure); free it with cltopk_index_free
 * Returns CLTOPK_OK, CLTOPK_ERR_INVALID_ARGUMENT (a NULL pointer, d or n out
 * of range, an unknown partitioning, block out of range, a NaN or infinite
 * attribute: the detail names the tuple and attribute), CLTOPK_ERR_NO_MEMORY,
 * CLTOPK_ERR_OPENCL.  Blocks until the index is built. */
CLTOPK_API int cltopk_index_build(cltopk_context *ctx, const float *const *attrs, size_t d,
                                  size_t n, const cltopk_index_options *opt,
                                  cltopk_index **out);

/* The top k tuples of the index by the score above.
 *   attr        m attribute numbers (each < d; repeats allowed), NULL when m = 0
 *   w           m weights, each finite and >= 0 (-0.0 counts as 0), NULL when
 *               m = 0
 *   m           0 to 64; m = 0 makes every score 0: the answer is tuples 0 ..
 *               k-1 with score +0.0
 *   k           0 <= k <= n (CLTOPK_ERR_K_RANGE above, as cltopk_topk); 0
 *               writes nothing (not even stats)
 *   out_scores  k floats, best first, or NULL
 *   out_index   k tuple numbers (int64), or NULL (not both NULL)
 *   stats       receives what the query did, or NULL
 * Returns CLTOPK_OK, CLTOPK_ERR_INVALID_ARGUMENT (idx NULL, a NULL array, an
 * attribute number out of range, a weight negative, NaN or infinite, m > 64:
 * the detail says which), CLTOPK_ERR_K_RANGE, CLTOPK_ERR_UNSUPPORTED (a
 * malformed CLTOPK_INDEX), CLTOPK_ERR_NO_MEMORY, CLTOPK_ERR_OPENCL,
 * CLTOPK_ERR_BUILD, CLTOPK_ERR_DEVICE_MEMORY.  A call that fails writes
 * nothing (outputs and stats).  Blocks until the outputs are written. */
CLTOPK_API int cltopk_index_topk(cltopk_index *idx, const unsigned *attr, const float *w,
                                 size_t m, size_t k, float *out_scores, int64_t *out_index,
                                 cltopk_index_stats *stats);

/* The same answer by full evaluation: every tuple of the index scored, no
 * threshold (the baseline of the early stop).  On an OpenCL device holding
 * the index, the query engine of cltopk_query_topk reads it in place (the
 * score as the fma rule above, one program; the best k + 1 tuples by score;
 * the same for an index query that switched after its first round or was
 * foreseen to read most blocks).  Its ties are broken by place in the
 * index, not by tuple number, and it scores the padding after each
 * partition's last tuple (0): its answer stands where the k-th score is
 * strictly above the (k+1)-th and no padding is among the k, the k then
 * ordered by the rule above; else (or where it cannot take the query: more
 * than 8 distinct attributes, m = 0) a first round reads the first blocks
 * of every partition (those of 4 k tuples, no partition stopping) for a
 * bound, the k-th score of groups of them; one read of the other blocks
 * then keeps the tuples scoring at or above it, and their best k and the
 * round's are merged (where the kept tuples overflow their buffer, an exact
 * fallback reads the blocks again; CLTOPK_INDEX=full=filter takes this way
 * always, full=old: work-groups read consecutive blocks each keeping its
 * best k); an index in host memory takes the filter's way, its blocks
 * copied in chunks.  On the "cpu" context OpenMP threads score every block.
 * Arguments and returns as cltopk_index_topk; stats->full_evaluation is 1. */
CLTOPK_API int cltopk_index_full_topk(cltopk_index *idx, const unsigned *attr, const float *w,
                                      size_t m, size_t k, float *out_scores, int64_t *out_index,
                                      cltopk_index_stats *stats);

/* Fill *info (the index's shape, fixed once built: no lock is taken, any
 * thread may ask).  Returns CLTOPK_OK or CLTOPK_ERR_INVALID_ARGUMENT (a NULL;
 * info NULL sets the index's context's detail text, under its lock). */
CLTOPK_API int cltopk_index_info_get(const cltopk_index *idx, cltopk_index_info *info);

/* Free an index and its memory (host and device).  NULL is a no-op.  Call it
 * before closing the index's context. */
CLTOPK_API void cltopk_index_free(cltopk_index *idx);

/* Save an index to a file (docs/FORMAT.md, "Index files": little-endian, a
 * versioned header, the partitions, thresholds, tuple numbers and attributes,
 * a 64-bit checksum of everything before it).  The file is written under a
 * temporary name in the same directory and renamed over path when complete.
 * Returns CLTOPK_OK, CLTOPK_ERR_INVALID_ARGUMENT (a NULL), CLTOPK_ERR_OPENCL
 * (reading a device index back), CLTOPK_ERR_NO_MEMORY, or
 * CLTOPK_ERR_UNSUPPORTED when the file cannot be written (the detail gives
 * the system's reason).  Big-endian hosts are refused (UNSUPPORTED). */
CLTOPK_API int cltopk_index_save(cltopk_index *idx, const char *path);

/* Load an index saved by cltopk_index_save onto ctx's device (as
 * cltopk_index_build places it).  The file is untrusted: its magic, version,
 * sizes, checksum, partition table, tuple numbers (a permutation of 0 .. n-1
 * in the blocks, padding exactly where a partition ends), attributes (finite)
 * and every threshold tuple (recomputed) are checked; any defect, and a file
 * shorter or longer than its header says, is CLTOPK_ERR_CORRUPT with a
 * detail saying what and where, *out NULL and nothing else changed.  Returns
 * CLTOPK_OK, CLTOPK_ERR_CORRUPT, CLTOPK_ERR_INVALID_ARGUMENT (a NULL),
 * CLTOPK_ERR_UNSUPPORTED (cannot open or read the file: the system's reason),
 * CLTOPK_ERR_NO_MEMORY, CLTOPK_ERR_OPENCL. */
CLTOPK_API int cltopk_index_load(cltopk_context *ctx, const char *path, cltopk_index **out);
/* ============================================ end early-stopping top-k index */

/* Device scratch memory, in bytes, that a cltopk_topk / cltopk_topk_buffer call
 * with these arguments needs beyond its inputs and outputs (0 for CPU
 * algorithms, which use host memory of at most n * 16 bytes).  For host data on
 * a device algorithm (cltopk_topk) it includes the device's copy of the input
 * and the k results: all n at once, one chunk at a time (CLTOPK_MAX_CHUNK), or,
 * where the input streams (CLTOPK_STREAM, with the environment as it is at
 * this call), the two device inputs of one piece each (some 32 MiB) with
 * each reduction over a piece; the pinned staging buffers of streaming are
 * host memory and not counted.  Fails as the call itself would (bad
 * arguments, unsupported algorithm). */
CLTOPK_API int cltopk_workspace_size(cltopk_context *ctx, cltopk_dtype type, size_t n, size_t k,
                                     unsigned flags, cltopk_algo algo, size_t *bytes);

/* The algorithm AUTO would run for this call (without running it); with
 * CLTOPK_PLAN_SELECT in flags, for cltopk_select of rank k - 1 instead (a
 * record with a selection of its own).  On an OpenCL context the first plan for
 * a device may measure the cost models' constants (see cltopk_explain), which
 * then stay in the kernel cache. */
CLTOPK_API int cltopk_plan(cltopk_context *ctx, cltopk_dtype type, size_t n, size_t k,
                           unsigned flags, cltopk_algo *chosen);

/* The algorithm AUTO would run for cltopk_topk_buffer with these arguments (data
 * already on the device: no transfer in the models).  Returns as cltopk_plan,
 * plus CLTOPK_ERR_NO_OPENCL on a CPU context. */
CLTOPK_API int cltopk_plan_buffer(cltopk_context *ctx, cltopk_dtype type, size_t n, size_t k,
                                  unsigned flags, cltopk_algo *chosen);

/* ---------------------------------------------------------------- helpers */

/* Size in bytes of one element of type, or 0 for an unknown type. */
CLTOPK_API size_t cltopk_dtype_size(cltopk_dtype type);
/* "f32" "f64" "i32" "u32" "i64" "u64", or NULL for an unknown type. */
CLTOPK_API const char *cltopk_dtype_name(cltopk_dtype type);
/* Parse a name of cltopk_dtype_name() (also "float", "double", "int32", ...). */
CLTOPK_API int cltopk_dtype_parse(const char *name, cltopk_dtype *type);
/* "auto" "bitonic" "sbp-radix" "sbp-tree" "radix-select" "sort" "cpu-heap"
 * "cpu-bitonic" "cpu-radix" "sample-filter" "bits", or NULL for an unknown value. */
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

/* ========================================================= bit-packed columns
 * (bit-unpacking block: GPU-FOR, GPU-DFOR, GPU-RFOR; docs/FORMAT.md is the
 * byte-exact description of the three layouts and of the file container)
 *
 * A packed column of int32 (or uint32: the codecs work on bits, mod 2^32) is two
 * arrays of little-endian uint32: `data` (a 4-word header, then the blocks) and
 * `block_starts` (the word offset of every block in `data`, then the number of
 * words of `data`: nstarts = number of blocks + 1).
 *   CLTOPK_CODEC_FOR   frame of reference + bit-packing: blocks of 128 values,
 *                      4 miniblocks of 32 with their own width 0..32
 *   CLTOPK_CODEC_DFOR  the same over deltas restarted every 512 values
 *   CLTOPK_CODEC_RFOR  run-length + FOR + bit-packing: tiles of 512 values as
 *                      (value, run length) pairs, each stream FOR-packed
 *
 * Packed input is untrusted.  cltopk_unpack and cltopk_topk_packed check the
 * header, the block starts (monotonic, in range), every block's size against its
 * widths, the widths (<= 32) and the count, never read or write outside the
 * arrays they are given (no slack word is needed), and on any defect return
 * CLTOPK_ERR_CORRUPT with a detail text that says what is wrong and where,
 * writing nothing.  Decoding on an OpenCL context runs on the device and gives
 * the same bits as the CPU decoder.
 * ======================================================================== */

typedef enum { CLTOPK_CODEC_FOR = 0, CLTOPK_CODEC_DFOR = 1, CLTOPK_CODEC_RFOR = 2 } cltopk_codec;

/* Worst-case number of data words cltopk_pack writes for n values of codec
 * (0 for an unknown codec or an n that a column cannot hold: n >= 2^32). */
CLTOPK_API size_t cltopk_pack_bound(cltopk_codec codec, size_t n);

/* Number of block_starts entries cltopk_pack writes for n values (exact):
 * ceil(n/128) + 1 for FOR and DFOR, ceil(n/512) + 1 for RFOR; 0 as above. */
CLTOPK_API size_t cltopk_pack_starts_bound(cltopk_codec codec, size_t n);

/* Pack n int32 values (0 <= n < 2^32; values may be NULL when n == 0).
 *   data, data_cap          output words and their capacity (cltopk_pack_bound
 *                           always suffices)
 *   data_words              receives the number of words written
 *   block_starts, starts_cap  output offsets and their capacity
 *                           (cltopk_pack_starts_bound)
 *   nstarts                 receives the number of offsets written
 * The encoder chooses per block the reference (signed or unsigned minimum,
 * whichever gives the narrower range) and per miniblock the smallest width; it
 * runs on OpenMP threads.  It needs no context: errors set the detail text of
 * cltopk_last_error(NULL) for this thread.
 * Returns CLTOPK_OK, CLTOPK_ERR_INVALID_ARGUMENT (NULL pointer, a capacity too
 * small, n too large, unknown codec; nothing written), CLTOPK_ERR_NO_MEMORY.
 * Thread-safe: any number of threads may pack at once. */
CLTOPK_API int cltopk_pack(cltopk_codec codec, const int32_t *values, size_t n, uint32_t *data,
                           size_t data_cap, size_t *data_words, uint32_t *block_starts,
                           size_t starts_cap, size_t *nstarts);

/* Decode a packed column.
 *   ctx          a context: "cpu" decodes on OpenMP threads, an OpenCL context
 *                on its device (the arrays are copied there and the values back)
 *   data, data_words, block_starts, nstarts   the column (untrusted, see above)
 *   out, out_cap  receives the count values; out may be NULL (with any out_cap)
 *                to validate the column and learn its count only
 *   n_out        receives the count (may be NULL)
 * Blocks until out is written.
 * Returns CLTOPK_OK, CLTOPK_ERR_CORRUPT (detail says what), CLTOPK_ERR_INVALID_ARGUMENT
 * (NULL arrays, unknown codec, out_cap below the count), CLTOPK_ERR_NO_MEMORY,
 * CLTOPK_ERR_OPENCL, CLTOPK_ERR_BUILD, CLTOPK_ERR_DEVICE_MEMORY.  Nothing is
 * written on failure.  Thread rules as every call on a context. */
CLTOPK_API int cltopk_unpack(cltopk_context *ctx, cltopk_codec codec, const uint32_t *data,
                             size_t data_words, const uint32_t *block_starts, size_t nstarts,
                             int32_t *out, size_t out_cap, size_t *n_out);

/* Top-k of a packed column under THE ORDER for CLTOPK_INT32 keys (ties by
 * smaller index), as cltopk_topk over the decoded values: k <= count, flags and
 * algo as there, out_keys (k int32) and out_index (k int64) either may be NULL,
 * not both.  On an OpenCL context with a device algorithm the column goes to the
 * device and is reduced there: decoded on load by the top-k kernel itself (GPU-FOR
 * with the bitonic reducer at WG=128: "Fusion" below), else decoded into device
 * scratch memory first; the decoded column never reaches the host.  Otherwise
 * (CPU context or CPU algorithm) it is decoded on the host and reduced by the
 * CPU heap.  Blocks until the outputs are written.
 * Returns as cltopk_topk plus CLTOPK_ERR_CORRUPT; nothing written on failure. */
CLTOPK_API int cltopk_topk_packed(cltopk_context *ctx, cltopk_codec codec, const uint32_t *data,
                                  size_t data_words, const uint32_t *block_starts, size_t nstarts,
                                  size_t k, unsigned flags, cltopk_algo algo, int32_t *out_keys,
                                  int64_t *out_index);

/* "for" "dfor" "rfor", or NULL for an unknown codec; and the reverse. */
CLTOPK_API const char *cltopk_codec_name(cltopk_codec codec);
CLTOPK_API int cltopk_codec_parse(const char *name, cltopk_codec *codec);

/* ===================================================== end bit-packed columns */

/* ---------------------------------------------------------------- planner */

/* What CLTOPK_ALGO_AUTO would run for a top-k of n elements of `type` (k > 0;
 * with CLTOPK_PLAN_SELECT in flags, the selection of rank k - 1),
 * on host data (device_data 0) or a cl_mem (1), and why: a text of a few lines
 * into buf (at most len bytes, NUL-terminated, truncated if longer) giving the
 * device constants the models use (read bandwidth, launch cost, local-memory
 * rate, host copies; measured on first use and kept in the kernel cache
 * directory), each algorithm's predicted time or why it cannot run the call,
 * and the choice (the line marked "->"); on host data, how a device algorithm
 * moves it (one transfer, chunks, or streamed pieces: CLTOPK_STREAM), and on a
 * context of several devices the split for CLTOPK_ALGO_AUTO (lines "split
 * ...", saying whether by the model or by measured speeds, and one line a
 * device: its P:D, name, the elements of its part and its share, its
 * predicted time for the whole input, and its measured rate once there is
 * one).  Predictions assume uniform data.
 * May measure the constants (a fraction of a second on a GPU, seconds on a CPU
 * device) on the first call for a device.  Thread rules as cltopk_topk.
 * Returns CLTOPK_OK, CLTOPK_ERR_INVALID_ARGUMENT, CLTOPK_ERR_BAD_TYPE,
 * CLTOPK_ERR_K_RANGE, CLTOPK_ERR_OPENCL, CLTOPK_ERR_BUILD, CLTOPK_ERR_NO_MEMORY. */
CLTOPK_API int cltopk_explain(cltopk_context *ctx, cltopk_dtype type, size_t n, size_t k,
                              unsigned flags, int device_data, char *buf, size_t len);

/* ------------------------------------------------------ CPU algorithms */

/* The CPU algorithms (cpu-heap, cpu-bitonic, cpu-radix, and AUTO when it runs
 * on the host) use OpenMP threads: n > 0 threads from now on, in every context
 * of the process; n == 0 goes back to OpenMP's default (OMP_NUM_THREADS, else
 * one a core).  Small inputs may use fewer.  Thread-safe; affects calls that
 * start after it returns.  Returns CLTOPK_OK, or CLTOPK_ERR_INVALID_ARGUMENT
 * for n < 0. */
CLTOPK_API int cltopk_set_threads(int n);

/* The instruction set of the CPU kernels in use: "scalar", "avx2" or "avx512".
 * Chosen once per process at the first CPU call: the widest this processor
 * and this build support, or the one the environment variable CLTOPK_CPU_ISA
 * names (scalar, avx2, avx512) if the processor has it.  The string is static. */
CLTOPK_API const char *cltopk_cpu_isa(void);

/* ==================================================== benchmark and tuning
 * Not part of the stable API: these calls and flags serve `cltopk bench`,
 * `cltopk tune` and the measurements of bench/RESULTS.md, and may change
 * between minor versions.
 * ======================================================================== */

#define CLTOPK_BENCH_KEYS_ONLY 0x100u /* cltopk_benchmark only: time keys alone */
#define CLTOPK_PLAN_SELECT 0x400u     /* cltopk_plan, cltopk_plan_buffer and
                                          cltopk_explain only: plan the selection
                                          of rank k - 1 (cltopk_select), not the
                                          top-k */
#define CLTOPK_BENCH_SELECT 0x200u    /* cltopk_benchmark only: time the selection of
                                         rank k - 1 (see cltopk_benchmark)          */

/* Time one algorithm on this context's device.  The keys are copied to the
 * device once (for device algorithms); then the call is run `reps` times after
 * one warm-up and the median wall time of the device work (enqueue to
 * completion, no transfers) goes to *median_s.  *floor_s (may be NULL) receives
 * the median time of one read pass over the same n elements at the device's
 * streaming bandwidth, measured in the same call: the floor for any top-k.
 * CPU algorithms are timed on the host array, and their floor is a parallel
 * vectorised OR over its 64-bit words (one read, on as many threads as the CPU
 * algorithms use: see cltopk_set_threads).  The call asks for keys and
 * positions, or with CLTOPK_BENCH_KEYS_ONLY in flags for keys alone (device
 * algorithms then carry no positions; float keys include the read-back of the k
 * keys that cltopk_topk_buffer makes, see there).  With CLTOPK_BENCH_SELECT in
 * flags the call timed is the selection of rank k - 1 instead: on an OpenCL
 * device cltopk_select_buffer of the device data, else cltopk_select on the
 * host array.  Returns as cltopk_topk. */
CLTOPK_API int cltopk_benchmark(cltopk_context *ctx, cltopk_dtype type, const void *keys,
                                size_t n, size_t k, unsigned flags, cltopk_algo algo,
                                int reps, double *median_s, double *floor_s);

/* Time the decoding of a valid column on this context's device: the column is
 * copied once (device contexts), then decoded `reps` times (1..64) after one
 * warm-up; *median_s receives the median decode time (device work only for
 * OpenCL, wall time of the OpenMP decoder for "cpu").  *copy_bw (may be NULL)
 * receives the copy bandwidth in bytes/s (bytes read + bytes written per second)
 * of a plain device (or host memcpy) copy of count * 4 bytes, measured in the
 * same call: the floor of a decode is (packed bytes + 4 * count) / copy_bw.
 * Returns as cltopk_unpack. */
CLTOPK_API int cltopk_benchmark_unpack(cltopk_context *ctx, cltopk_codec codec,
                                       const uint32_t *data, size_t data_words,
                                       const uint32_t *block_starts, size_t nstarts, int reps,
                                       double *median_s, double *copy_bw);
/* Time top-k of a valid column whose arrays are resident on this context's
 * device (copied once): *packed_s receives the median time of top-k of the
 * packed column the way cltopk_topk_packed runs it (*fused, may be NULL, says
 * whether decoding was fused into the top-k kernel or ran before it), *plain_s
 * (may be NULL) the median time of the same top-k over the same values stored
 * as plain int32 on the device, measured in the same call.  k, flags, algo as
 * cltopk_topk_packed; a device algorithm (or AUTO choosing one) is required.
 * Returns as cltopk_topk_packed, CLTOPK_ERR_UNSUPPORTED on a CPU context or for
 * a host algorithm.
 *
 * Fusion: for GPU-FOR columns the bitonic SortReducer decodes on load
 * (cl/bitpack.h LoadBitPack) when its configuration has work-groups of 128
 * (the default for k <= 256; CLTOPK_BITONIC=WG=128 asks for it above); else
 * the column is decoded into device scratch first.  CLTOPK_PACKED_FUSED=0 never
 * fuses; CLTOPK_PACKED_FUSED=require fails with CLTOPK_ERR_UNSUPPORTED where it
 * cannot fuse (testing). */
CLTOPK_API int cltopk_benchmark_topk_packed(cltopk_context *ctx, cltopk_codec codec,
                                            const uint32_t *data, size_t data_words,
                                            const uint32_t *block_starts, size_t nstarts,
                                            size_t k, unsigned flags, cltopk_algo algo, int reps,
                                            double *packed_s, int *fused, double *plain_s);
/* Time the many-rows calls: rows x cols dense rows (ld = cols; offsets NULL)
 * or the nseg = rows segments of offsets, as cltopk_topk_rows /
 * cltopk_topk_segments with keys and positions; on an OpenCL context the keys
 * are copied to the device once and the cl_mem form is timed (enqueue to
 * completion; with CLTOPK_ALGO_CPU_HEAP, or on the "cpu" context, the host
 * form).  *median_s: the median of `reps` (1..64) calls after one warm-up;
 * *floor_s (may be NULL): one read of the keys, as cltopk_benchmark.  Returns
 * as cltopk_topk_rows. */
CLTOPK_API int cltopk_benchmark_rows(cltopk_context *ctx, cltopk_dtype type, const void *keys,
                                     size_t rows, size_t cols, const int64_t *offsets, size_t k,
                                     unsigned flags, cltopk_algo algo, int reps, double *median_s,
                                     double *floor_s);
/* The same for cltopk_knn (cltopk_knn_buffer on an OpenCL context, the
 * queries and points copied there once), distances and indices. */
CLTOPK_API int cltopk_benchmark_knn(cltopk_context *ctx, cltopk_metric metric,
                                    const float *queries, size_t nq, const float *points,
                                    size_t np, size_t d, size_t k, int reps, double *median_s);
/* ================================================ end benchmark and tuning */

#ifdef __cplusplus
}
#endif

#endif /* CLTOPK_H */
