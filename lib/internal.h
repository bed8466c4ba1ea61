/* internal.h - what the library's files share; never installed. */
#ifndef CLTOPK_INTERNAL_H
#define CLTOPK_INTERNAL_H

#include "config.h"

#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "cltopk.h"
#include "base.h"
#include "order.h"
#include "tune.h"

/* ------------------------------------------------------------ the request */

/* One call, described once by lib/request.c (DESIGN.md step 2); every later
 * stage reads this and nothing re-derives it. */
typedef struct {
    cltopk_dtype type;
    int bytes;      /* 4 or 8 */
    int kind;       /* KIND_UNSIGNED, KIND_SIGNED, KIND_FLOAT */
    size_t n, k;
    int smallest;
    int want_keys, want_index;
    int on_device;  /* the data is a cl_mem (else host memory) */
    int select;     /* a selection of the element at k - 1: AUTO plans it by the
                       records' select_predict, and their k limits do not apply
                       to a record that selects */
    /* host data (cltopk_topk) */
    const void *keys;
    void *out_keys;
    int64_t *out_index;
#if HAVE_OPENCL
    /* device data (cltopk_topk_buffer) */
    cl_mem dkeys;
    size_t doffset;
    cl_mem dout_keys, dout_index;
    cl_uint num_wait;
    const cl_event *wait;
    /* bit-packed source (lib/codec.c): when pk_starts is set, dkeys holds the
     * data words of a validated GPU-FOR column of n values and pk_starts its
     * pk_nblocks + 1 block starts; an algorithm whose record says
     * decodes_packed decodes them on load */
    cl_mem pk_starts;
    cl_uint pk_nblocks;
#endif
    /* the tuning variables, parsed once per call (tune.h): tune points at
     * tune_store of the request the API layer described */
    cltopk_tune_cache *tune;
    cltopk_tune_cache tune_store;
} cltopk_request;

/* request.c (API layer): validate what every entry point shares (type, flags
 * against `allowed`, algo against the table, n) and describe the request; the
 * context's lock is held (or ctx is NULL).  k is stored as given. */
CLTOPK_INTERNAL int cltopk_describe(cltopk_context *ctx, const char *fn, cltopk_dtype type,
                                    size_t n, size_t k, unsigned flags, unsigned allowed,
                                    cltopk_algo algo, cltopk_request *rq);
/* request.c: host arrays of a call: keys (n elements) and the outputs; NULLs
 * are INVALID_ARGUMENT */
CLTOPK_INTERNAL int cltopk_describe_host(cltopk_context *ctx, const char *fn, cltopk_request *rq,
                                         const void *keys, void *out_keys, int64_t *out_index,
                                         size_t count);
/* request.c: an output (count elements) that overlaps the input or the other
 * output (host memory, or byte ranges of one cl_mem or its sub-buffers) is
 * INVALID_ARGUMENT; checked after the choice, so that an unsupported call
 * says so first */
CLTOPK_INTERNAL int cltopk_outputs_apart(cltopk_context *ctx, const char *fn,
                                         const cltopk_request *rq, size_t count);
/* topk.c (API layer): take the context's lock and clear its detail text */
CLTOPK_INTERNAL void cltopk_enter(cltopk_context *ctx);
#if HAVE_OPENCL
/* topk.c: what the cl_mem entry points share: the context is an OpenCL one,
 * num_wait and wait agree; k == 0 (nothing to compute) sets *nothing and
 * still gives an event after the wait list.  *done is written only on
 * success (a failing call writes nothing), by the marker here or by
 * cltopk_hand_off */
CLTOPK_INTERNAL int cltopk_buffer_start(cltopk_context *ctx, const char *fn, size_t k,
                                        cl_uint num_wait, const cl_event *wait, cl_event *done,
                                        int *nothing);
/* request.c: device arrays of a call, checked against their sizes (count
 * output elements) and for overlaps, with the event list (already checked) */
CLTOPK_INTERNAL int cltopk_describe_buffer(cltopk_context *ctx, const char *fn,
                                           cltopk_request *rq, cl_mem keys, size_t offset,
                                           cl_mem out_keys, cl_mem out_index, size_t count,
                                           cl_uint num_wait, const cl_event *wait);
/* request.c: rq's cl_mem outputs (count elements, after cltopk_describe_buffer)
 * share no byte with the `bytes` bytes from byte `off` of m (a second input of
 * the call, named by `what`), in one buffer or through sub-buffers of one
 * (INVALID_ARGUMENT) */
CLTOPK_INTERNAL int cltopk_outputs_apart_from(cltopk_context *ctx, const char *fn,
                                              const cltopk_request *rq, size_t count,
                                              const char *what, cl_mem m, size_t off,
                                              size_t bytes);
#endif

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
    cl_uint base_align; /* CL_DEVICE_MEM_BASE_ADDR_ALIGN in bytes (a sub-buffer's origin), >= 8 */
    int fp64;
    int int64; /* 64-bit integers: full profile, or cl_khr_int64 */
    int ptx;   /* NVIDIA's platform: kernels may take its inline PTX (asm) */
    /* CL_DEVICE_SINGLE_FP_CONFIG and CL_DEVICE_DOUBLE_FP_CONFIG (0: no fp64,
     * or the query failed); read through cltopk_fp_exact */
    cl_device_fp_config fp32_config, fp64_config;
} cltopk_devcaps;

/* device.c */
CLTOPK_INTERNAL int cltopk_devices_scan(cltopk_devcaps **list, size_t *count, char *err,
                                        size_t errlen);
CLTOPK_INTERNAL int cltopk_devcaps_query(cl_device_id dev, cltopk_devcaps *caps);
struct cltopk_context;
/* take (1) or give back (0) the process-wide lock of the OpenCL platforms */
CLTOPK_INTERNAL void cltopk_platform_lock(int lock);
/* POCL's major version on a POCL device, else 0 */
CLTOPK_INTERNAL int cltopk_pocl_major(const struct cltopk_context *ctx);
/* Whether the device rounds float32 arithmetic (and, with fp64 set, float64)
 * as the CPU does, which kNN's distances, the queries' scores and the index's
 * scores need for the bits cltopk.h promises: subnormals kept (CL_FP_DENORM),
 * round to nearest even (CL_FP_ROUND_TO_NEAREST), inf and NaN
 * (CL_FP_INF_NAN), after CLTOPK_FP_CONFIG.  1, else 0 with why naming the
 * missing capability (or the malformed variable). */
CLTOPK_INTERNAL int cltopk_fp_exact(const struct cltopk_context *ctx, int fp64, char *why,
                                    size_t whylen);

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
       /* sample-filter's selection: its state beside the radix select's */
       SCR_SF_STATE, SCR_SF_PART_K, SCR_SF_PART_I,
       /* many rows (rowsdev.c): the queries of kNN on host data */
       SCR_ROWS_Q, SCR_ROWS_OFFS, SCR_ROWS_IDS, SCR_ROWS_SPLIT,
       /* kNN by tiles (knndev.c): the sample's keys, the thresholds, the counts */
       SCR_KNN_KEYS, SCR_KNN_THR, SCR_KNN_COUNT,
       /* streaming host data (chunk.c): the second device input of the two
        * that alternate (SCR_INPUT the first) */
       SCR_STREAM_IN,
       /* the sample-filter query (querydev.c): its state */
       SCR_QSF_STATE,
       /* the device query's programs, offsets and counts (lib/querydev.c) */
       SCR_QDEV,
       /* the sample filter of long dense rows (rowsdev.c): the rows' state */
       SCR_ROWS_SF,
       /* rowseach.c: a row's answer before it is copied to its place */
       SCR_EACH_K, SCR_EACH_I,
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
    struct cltopk_kernel_entry *kernels; /* kernel objects of those programs */
    cl_event last;              /* last event of our own work, for ordering */
    int inorder;                /* the queue runs commands in order */
    int pending;                /* launches after `last` without an event (inorder) */
    int event_each;             /* an event every launch anyway (profiling) */
    /* CLTOPK_PROFILE=1: each launch's event and kernel name, printed to
     * stderr with their device times when the call's work is waited for */
    int prof;
    int nprof;
    cl_event prof_ev[64];
    char prof_name[64][40];
    /* scratch buffers, grown on demand and kept for later calls */
    cl_mem scratch[SCR_COUNT];
    size_t scratch_size[SCR_COUNT];
    /* streaming host data (chunk.c): a second queue of our own for the
     * transfers, and two pinned staging buffers (CL_MEM_ALLOC_HOST_PTR) kept
     * mapped at stage_ptr while the context lives; made on first use */
    cl_command_queue tqueue;
    cl_mem stage[2];
    void *stage_ptr[2];
    size_t stage_size;
    /* a context of several devices (cltopk_open with "all" or a list): this
     * context is the first device, members[0 .. nmembers) the others, each a
     * context of its own that only this one uses (under this one's lock) */
    struct cltopk_context **members;
    size_t nmembers;
    /* the split by measured speeds (lib/plan.c, CLTOPK_SPLIT): this device's
     * elements a second in its parts of the context's splits (its part's
     * transfer and top-k, timed on the host), for 4- and 8-byte keys, each
     * the mean of the previous value and the latest part's (0: none yet);
     * on the first device, split_over: the seconds a split costs besides its
     * slowest part (threads, merge), averaged the same way, and split_left:
     * the splits in a row that left a device out (at CLTOPK_SPLIT_PROBE the
     * next gives every device its part, to measure the left-out ones again) */
    double split_rate[2];
    double split_over[2];
    int split_left[2];
#endif
};

#if HAVE_OPENCL
/* device d of a context: 0 the context itself, d >= 1 its member d - 1 */
static inline cltopk_context *cltopk_device_at(cltopk_context *ctx, size_t d)
{
    return d ? ctx->members[d - 1] : ctx;
}
#endif


#if HAVE_OPENCL
/* program.c: the program for kernel file `file` (e.g. "bitonic.cl") specialised
 * with `options` ("-D ..."), from the memory cache, the disk cache or a build. */
CLTOPK_INTERNAL int cltopk_program_get(cltopk_context *ctx, const char *file,
                                       const char *options, cl_program *out);
CLTOPK_INTERNAL void cltopk_programs_free(cltopk_context *ctx);
/* program.c: 1 if that program is already in ctx's memory cache (built or
 * loaded from disk in this context), else 0; builds nothing */
CLTOPK_INTERNAL int cltopk_program_cached(cltopk_context *ctx, const char *file,
                                          const char *options);
/* A kernel of such a program (the caller releases it).  Kernel objects are
 * created once per program and context and handed out retained; every launch
 * sets all of its arguments. */
CLTOPK_INTERNAL int cltopk_kernel_get(cltopk_context *ctx, const char *file, const char *options,
                                      const char *name, cl_kernel *out);

/* staging.c */
CLTOPK_INTERNAL int cltopk_scratch(cltopk_context *ctx, int slot, size_t bytes, cl_mem *out);
CLTOPK_INTERNAL void cltopk_scratch_free(cltopk_context *ctx);
/* Elements of one host chunk for a device algorithm: cltopk_chunk_room capped
 * by CLTOPK_MAX_CHUNK. */
CLTOPK_INTERNAL size_t cltopk_chunk_elems(const cltopk_context *ctx, int bytes);
/* The most elements one chunk may hold on this device (its memory and largest
 * allocation), whatever CLTOPK_MAX_CHUNK says. */
CLTOPK_INTERNAL size_t cltopk_chunk_room(const cltopk_context *ctx, int bytes);
/* Set kernel argument i; the sizes are those of the values. */
CLTOPK_INTERNAL int cltopk_set_args(cltopk_context *ctx, cl_kernel kern, int nargs, ...);
/* Enqueue a 1-D kernel, waiting for the context's last event (and the caller's
 * list for the first launch); the new event becomes the context's last. */
CLTOPK_INTERNAL int cltopk_launch(cltopk_context *ctx, cl_kernel kern, size_t global,
                                  size_t local, cl_uint num_wait, const cl_event *wait);
/* whether a command on the context's queue goes without an event of its own
 * (an in-order queue, no profiling): the queue orders it, and the caller sets
 * ctx->pending so that cltopk_after_own makes the event where one is needed */
CLTOPK_INTERNAL int cltopk_quiet(const cltopk_context *ctx);
CLTOPK_INTERNAL int cltopk_finish_own(cltopk_context *ctx);
/* CLTOPK_PROFILE=1: print the recorded launches' device times (after their
 * completion) and forget them; nothing otherwise */
CLTOPK_INTERNAL void cltopk_prof_flush(cltopk_context *ctx);
/* "label: name T us (gap G); ... first start to last end T us" on stderr
 * (no newline) for n completed events, which it releases */
CLTOPK_INTERNAL void cltopk_events_print(const char *label, cl_event *ev,
                                         const char *const *names, int n);
/* The event after which all of the context's work so far completes (a marker
 * is enqueued for launches made without events on an in-order queue); NULL
 * when the context has enqueued nothing.  Commands that must follow our work
 * wait for it: `n = cltopk_after_own(ctx, &ev)` gives a wait list of n events. */
CLTOPK_INTERNAL cl_uint cltopk_after_own(cltopk_context *ctx, cl_event **list);
/* staging.c: ev (enqueued after the context's own work) becomes the context's
 * last event; the context takes the caller's reference */
CLTOPK_INTERNAL void cltopk_own_event(cltopk_context *ctx, cl_event ev);
/* bytes of host memory written to m by a blocking write that follows the
 * context's work (so the caller may reuse the memory at once); what names
 * it in the error */
CLTOPK_INTERNAL int cltopk_write_own(cltopk_context *ctx, cl_mem m, const void *src,
                                     size_t bytes, const char *what);

/* kernel sources embedded at build time (cl/kernels.c, generated) */
typedef struct {
    const char *name;
    const unsigned char *data;
    size_t size;
} cltopk_kernel_source;
extern const cltopk_kernel_source cltopk_kernel_sources[];
extern const size_t cltopk_kernel_source_count;
#endif

/* ------------------------------------------- runtime: shared machinery */

#if HAVE_OPENCL
/* program.c: the disk cache directory (0 when off) and mkdir -p */
CLTOPK_INTERNAL int cltopk_cache_dir(char *buf, size_t len);
CLTOPK_INTERNAL int cltopk_mkdirs(char *path);
/* staging.c: hand the context's last event of this call to the caller (a
 * marker when the call enqueued nothing); *done untouched when done is NULL */
CLTOPK_INTERNAL int cltopk_hand_off(cltopk_context *ctx, cl_event *done);
/* staging.c: wait for and release `done`, an event a cl_mem entry point
 * handed out (NULL: none); its failure becomes a status with `what`, set
 * under the context's lock, which the caller does not hold (the benchmarks) */
CLTOPK_INTERNAL int cltopk_wait_done(cltopk_context *ctx, cl_event done, const char *what);
/* staging.c: a host record (a) on device data: the keys are read to the host
 * (after the wait list), a runs there (top-k with rank SIZE_MAX, AUTO's
 * run_planned where it has one; else the selection of rank), and the outputs
 * are written back; blocks */
struct cltopk_algorithm;
CLTOPK_INTERNAL int cltopk_host_on_buffer(cltopk_context *ctx, const cltopk_request *rq,
                                          const struct cltopk_algorithm *a, size_t rank);
/* staging.c: a marker after the context's own work and rq's wait list (none
 * where the list is empty) becomes the context's last event, so that what a
 * call enqueues next with cltopk_after_own waits for both */
CLTOPK_INTERNAL int cltopk_own_after_wait(cltopk_context *ctx, const cltopk_request *rq);
/* staging.c: read `bytes` of m from byte `at` into host memory, after the
 * context's work and rq's wait list; blocks */
CLTOPK_INTERNAL int cltopk_read_after_wait(cltopk_context *ctx, const cltopk_request *rq,
                                           cl_mem m, size_t at, size_t bytes, void *host);
/* staging.c: the kernels may read m (written 0) or write it (written 1):
 * CLTOPK_OK, or CLTOPK_ERR_INVALID_ARGUMENT naming `what` where m was created
 * CL_MEM_WRITE_ONLY or CL_MEM_READ_ONLY (OpenCL leaves such an access
 * undefined); m NULL: CLTOPK_OK */
CLTOPK_INTERNAL int cltopk_mem_access(cltopk_context *ctx, const char *fn, const char *what,
                                      cl_mem m, int written);
/* staging.c: the flag (CL_MEM_HOST_NO_ACCESS or CL_MEM_HOST_WRITE_ONLY) by
 * which the host may not read m, or NULL */
CLTOPK_INTERNAL const char *cltopk_mem_host_unreadable(cl_mem m);
/* staging.c: CLTOPK_OK where the host may read m (or m is NULL), else
 * CLTOPK_ERR_UNSUPPORTED saying that `what` was created with that flag, that
 * the call runs on the host's CPU, and what to do (then `advice`, "" or text
 * starting ", ") */
CLTOPK_INTERNAL int cltopk_host_may_read(cltopk_context *ctx, cl_mem m, const char *what,
                                         const char *advice);
/* staging.c: rq's device input (n elements from doffset) in host memory
 * for a CPU algorithm, after the context's work and rq's wait list; blocks:
 * mapped where map is set and the map succeeds (*mapped 1: on a CPU device
 * no copy, on a GPU one transfer to pinned memory), else read into memory
 * allocated here; CLTOPK_ERR_UNSUPPORTED where the host may not read the
 * buffer (cltopk_mem_host_unreadable).  End with cltopk_input_view_end(st:
 * the caller's status so far), which unmaps or frees it and returns st or
 * the unmap's failure */
CLTOPK_INTERNAL int cltopk_input_view(cltopk_context *ctx, const cltopk_request *rq, int map,
                                      char **keys, int *mapped);
CLTOPK_INTERNAL int cltopk_input_view_end(cltopk_context *ctx, const cltopk_request *rq,
                                          char *keys, int mapped, int st);
/* a key whose bits its order key cannot restore: a float zero or NaN */
CLTOPK_INTERNAL int cltopk_ambiguous_float(const void *keys, size_t i, int bytes);

/* a device top-k of keys[off .. off+n) of `in` into out_keys / out_index (want
 * bits: 1 keys, 2 positions offset by index_base), enqueued after `wait`; arg is
 * the caller's (e.g. a configuration) */
typedef int (*cltopk_devrun)(cltopk_context *ctx, const cltopk_request *rq, void *arg, cl_mem in,
                             size_t off, size_t n, size_t k, cl_mem out_keys, cl_mem out_index,
                             cl_uint want, uint64_t index_base, cl_uint num_wait,
                             const cl_event *wait);
/* chunk.c: host data through devrun, one device chunk at a time, each chunk's
 * best min(k, len) read back and merged on the host into rq's outputs.  index
 * 0: keys alone (devrun gets want 1 and no position buffer); then with float
 * keys and ambiguous not NULL, a zero or NaN among a chunk's keys (whose bits
 * need the position) stops the run with *ambiguous = 1 and nothing written. */
CLTOPK_INTERNAL int cltopk_chunked_topk(cltopk_context *ctx, const cltopk_request *rq,
                                        cltopk_devrun devrun, void *arg, int index,
                                        int *ambiguous);
/* chunk.c: for the workspace of a device algorithm on rq's host data, the
 * elements of its device input and of each reduction: all n in one transfer,
 * a chunk (at least k) of the chunk loop, or a streamed piece; and in *host
 * the device bytes that host data adds: that input (two of them where it
 * streams) and the k results' keys and int64 positions.  The pinned staging
 * buffers are host memory and not counted. */
CLTOPK_INTERNAL size_t cltopk_host_input(cltopk_context *ctx, const cltopk_request *rq,
                                         size_t *host);
/* chunk.c: how the device records move rq's host data (streamed pieces,
 * chunks or one transfer), a line of text for explain; its length */
CLTOPK_INTERNAL size_t cltopk_staging_describe(cltopk_context *ctx, const cltopk_request *rq,
                                               char *buf, size_t len);
/* chunk.c: the context's transfer queue (made on first use) and its two
 * pinned staging buffers (ctx->stage, mapped at ctx->stage_ptr), at least
 * `bytes` each (made anew where smaller; 0: the queue alone).  Their users
 * hold the context's lock and leave no transfer from them pending. */
CLTOPK_INTERNAL int cltopk_stream_setup(cltopk_context *ctx, size_t bytes);
/* chunk.c: wait for and release *ev (if any, then NULL); its error into *err
 * unless one is there (err NULL: the error is not wanted, as for a write from
 * the caller's memory that a failure left without its launch: it must only be
 * over before the call returns) */
CLTOPK_INTERNAL void cltopk_settle(cl_event *ev, cl_int *err);
/* chunk.c: unmap and free the pinned staging buffers of streaming (the
 * transfer queue stays) */
CLTOPK_INTERNAL void cltopk_stage_free(cltopk_context *ctx);
/* chunk.c: the element at `rank` of host data: one chunk by `select` (a devrun
 * whose k is rank + 1 and which writes the one element), several by the best
 * rank + 1 of each chunk through `topk`, merged */
CLTOPK_INTERNAL int cltopk_chunked_select(cltopk_context *ctx, const cltopk_request *rq,
                                          cltopk_devrun topk, cltopk_devrun select, void *arg,
                                          size_t rank, void *out_key, int64_t *out_index);
/* devsort.c (cl/radix_sort.cl): the device sort */
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
    /* optional (final 1, pos NULL, pos_bits 0): the element whose bits are
     * part_key[0] and whose position is part_index[0] (int64, from key 0) is
     * the k-th of the m in THE ORDER; a first pass keeps the k pairs at or
     * above it, stably (a partition by a 1-bit digit), and only those are
     * sorted.  NULL: every pair is sorted */
    cl_mem part_key, part_index;
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
/* The device sort of the request's keys: keys[off .. off+n) of `in`, the first
 * k of THE ORDER written as cltopk_devsort's final pass writes them (want & 1:
 * the keys' bits to out_keys, want & 2: positions + base to out_index); with
 * part_key / part_index (else NULL), only the k pairs at or above that element
 * are sorted (cltopk_devsort_job.part_key) */
CLTOPK_INTERNAL int cltopk_devsort_input(cltopk_context *ctx, const cltopk_request *rq, cl_mem in,
                                         size_t off, size_t n, size_t k, cl_mem out_keys,
                                         cl_mem out_index, cl_uint want, uint64_t base,
                                         cl_mem part_key, cl_mem part_index, cl_uint num_wait,
                                         const cl_event *wait);
/* The planner's time of the device sort of m pairs of key_bytes keys in position
 * order (a pass about 17.8 reads of the keys on GPUs, measured on the H200) */
struct cltopk_consts_s;
CLTOPK_INTERNAL double cltopk_devsort_time(const struct cltopk_consts_s *c, size_t m,
                                           int key_bytes);
/* rselect.c (cl/radix_select.cl): the device radix select of keys[off ..
 * off+n) of `in`: topk 1, the best k in THE ORDER (sorted by the winners' sort);
 * topk 0, the element at position k - 1.  Outputs: the input's bits (want & 1)
 * to out_keys and positions + index_base (want & 2) as int64 to out_index.
 * from (NULL: none): a selection may start from candidates that a caller put in
 * the buffers of cltopk_rselect_cands (pairs of order key and 32-bit position,
 * all distinct composites): from[0] is how many it counted (exact, may exceed
 * from_cap, the pairs it could hold) and from[1] how many elements of the input
 * come before all of them in THE ORDER; rs_init searches them for position
 * k - 1 - from[1] when they hold it and fit, else the input, and writes what
 * it did to from[5] (1 the candidates, 2 the rank not among them, 3 too many). */
typedef struct {
    cl_mem in;
    size_t off, n, k;
    int topk;
    cl_mem out_keys, out_index;
    cl_uint want;
    uint64_t index_base;
    cl_mem from;
    size_t from_cap;
} cltopk_rselect_job;
CLTOPK_INTERNAL int cltopk_rselect(cltopk_context *ctx, const cltopk_request *rq,
                                   const cltopk_rselect_job *job, cl_uint num_wait,
                                   const cl_event *wait);
/* rselect.c: the first candidate buffer (keys, positions) of a job over n
 * elements, in the size the job asks for */
CLTOPK_INTERNAL int cltopk_rselect_cands(cltopk_context *ctx, const cltopk_request *rq,
                                         size_t n, cl_mem *keys, cl_mem *pos);
/* rselect.c: the device scratch bytes of rq through cltopk_rselect (host data:
 * per chunk, with its staging) */
CLTOPK_INTERNAL size_t cltopk_rselect_workspace(cltopk_context *ctx, const cltopk_request *rq);
/* rselect.c: whether CLTOPK_RADIX parses (else the reason in why) */
CLTOPK_INTERNAL int cltopk_rselect_supports(cltopk_context *ctx, const cltopk_request *rq,
                                            char *why, size_t whylen);
/* winners.c: sort k (order key, 32-bit position) pairs in rk / ri on the
 * device into THE ORDER and write the input's bits and positions (want bits:
 * 1 keys, 2 positions offset by index_base): up to CLTOPK_WINNERS_BITONIC_MAX
 * by a bitonic sort (rk / ri then hold k rounded up to a power of two pairs),
 * above by the device sort.  The winners' positions are below npos (0:
 * unknown); tmp (NULL: none) is two pairs of key and position buffers of k
 * pairs at least that the device sort may use. */
#define CLTOPK_WINNERS_BITONIC_MAX 4096
CLTOPK_INTERNAL int cltopk_winners_write(cltopk_context *ctx, const cltopk_request *rq,
                                         cl_mem rk, cl_mem ri, size_t k, cl_uint want,
                                         cl_mem in, size_t off, cl_mem out_keys,
                                         cl_mem out_index, uint64_t index_base, size_t npos,
                                         const cl_mem *tmp);
/* winners.c: the predicted seconds of cltopk_winners_write (cost models) */
struct cltopk_consts_s;
CLTOPK_INTERNAL double cltopk_winners_time(const struct cltopk_consts_s *c, size_t k, int kb);
/* measure.c: median seconds of one streaming read (cl/bandwidth.cl) of `bytes`
 * of buf, after a warm-up: the device's read floor */
CLTOPK_INTERNAL int cltopk_device_read_time(cltopk_context *ctx, cl_mem buf, size_t bytes,
                                            int reps, double *out);
#endif
/* chunk.c: merge two lists in output order (keys of rq's type + indices) into
 * the first k of their union; out may not alias the inputs */
CLTOPK_INTERNAL void cltopk_merge_lists(const cltopk_request *rq, const void *ak,
                                        const int64_t *ai, size_t an, const void *bk,
                                        const int64_t *bi, size_t bn, size_t k, void *ok,
                                        int64_t *oi);
/* measure.c: median seconds of one parallel read (OR) of `bytes` of host memory */
CLTOPK_INTERNAL double cltopk_cpu_read_time(const void *data, size_t bytes, int reps);

/* consts.c: the device constants of the cost models, measured once per device
 * and kept in the disk cache (CLTOPK_PLAN_CONSTS overrides) */
typedef struct cltopk_consts_s {
    double bw;     /* device read bandwidth, bytes/s */
    double launch; /* seconds a launch adds back to back */
    double lrate;  /* local-histogram increments per second, whole device */
    double h2d;    /* host-to-device copy, bytes/s */
    double cpubw;  /* host memory read bandwidth of all cores, bytes/s */
    int gpu;       /* the device is a GPU */
} cltopk_consts;
CLTOPK_INTERNAL int cltopk_consts_get(cltopk_context *ctx, cltopk_consts *out);

/* ------------------------------------------------------------ the records */

/* One algorithm, filled by field name; lib/table.c holds the one array of them
 * that names, range checks, the planner, explain, the benchmark and packed
 * top-k iterate. */
typedef struct cltopk_algorithm {
    cltopk_algo id;
    const char *name;
    int on_device;       /* runs on the OpenCL device; else on the host (any context) */
    /* limits the planner checks before supports(): largest k for 4- and 8-byte
     * keys (0: none), 64-bit integers needed on the device, largest n of a
     * cl_mem call (0: none) */
    size_t kmax32, kmax64;
    int needs_int64;
    size_t max_buffer_n;
    int decodes_packed;  /* run_buffer decodes a GPU-FOR column (rq->pk_starts) */
    const char *missing; /* not NULL: not in this build or version, and why */
    /* 1 if it can run this request here; else 0 with the reason (NULL: always) */
    int (*supports)(cltopk_context *ctx, const cltopk_request *rq, char *why, size_t whylen);
    /* predicted seconds for AUTO (c NULL on the "cpu" context); negative: AUTO
     * does not consider it for this request; NULL: never */
    double (*predict)(const cltopk_context *ctx, const cltopk_request *rq,
                      const cltopk_consts *c);
    /* host pointers in and out */
    int (*run_host)(cltopk_context *ctx, const cltopk_request *rq);
    /* what AUTO runs on host data when it picks this record (NULL: run_host) */
    int (*run_planned)(const cltopk_request *rq, const void *keys, size_t n, size_t k,
                       void *out_keys, int64_t *out_index);
    /* device buffers in and out, ending in the context's last event (NULL:
     * host records, which the API stages) */
    int (*run_buffer)(cltopk_context *ctx, const cltopk_request *rq);
    /* device scratch bytes (NULL: 0) */
    size_t (*workspace)(cltopk_context *ctx, const cltopk_request *rq);
    /* the element at rank (< n) without a top-k of rank + 1 (NULL: through one) */
    int (*select_host)(cltopk_context *ctx, const cltopk_request *rq, size_t rank,
                       void *out_key, int64_t *out_index);
    /* the same for a cl_mem, into rq's device outputs (one element each) */
    int (*select_buffer)(cltopk_context *ctx, const cltopk_request *rq, size_t rank);
    /* predicted seconds of that selection (rq->select, rank k - 1) for AUTO;
     * as predict (NULL: AUTO does not select with it) */
    double (*select_predict)(const cltopk_context *ctx, const cltopk_request *rq,
                             const cltopk_consts *c);
} cltopk_algorithm;

/* table.c; at most CLTOPK_RECORDS_MAX records (t/records.c checks) */
#define CLTOPK_RECORDS_MAX 32
CLTOPK_INTERNAL extern const cltopk_algorithm *const cltopk_algorithms[];
CLTOPK_INTERNAL extern const size_t cltopk_algorithm_count;
/* the record of id, or NULL (AUTO or out of range) */
CLTOPK_INTERNAL const cltopk_algorithm *cltopk_algorithm_get(cltopk_algo id);
/* whether id is CLTOPK_ALGO_AUTO or a record's id */
CLTOPK_INTERNAL int cltopk_algo_valid(cltopk_algo id);

/* each algorithm's record (lib/algo_*.c, cpu/algo_cpu.c) */
CLTOPK_INTERNAL extern const cltopk_algorithm cltopk_algo_bitonic;
CLTOPK_INTERNAL extern const cltopk_algorithm cltopk_algo_sbp_radix;
CLTOPK_INTERNAL extern const cltopk_algorithm cltopk_algo_sbp_tree;
CLTOPK_INTERNAL extern const cltopk_algorithm cltopk_algo_radix_select;
CLTOPK_INTERNAL extern const cltopk_algorithm cltopk_algo_cpu_heap;
CLTOPK_INTERNAL extern const cltopk_algorithm cltopk_algo_cpu_bitonic;
CLTOPK_INTERNAL extern const cltopk_algorithm cltopk_algo_cpu_radix;
CLTOPK_INTERNAL extern const cltopk_algorithm cltopk_algo_sample_filter;
CLTOPK_INTERNAL extern const cltopk_algorithm cltopk_algo_sort;
CLTOPK_INTERNAL extern const cltopk_algorithm cltopk_algo_bits;

/* plan.c: the record to run: the named one if it can (else UNSUPPORTED with
 * the reason), or AUTO's choice by predicted time */
CLTOPK_INTERNAL int cltopk_choose(cltopk_context *ctx, const cltopk_request *rq, cltopk_algo algo,
                                  const cltopk_algorithm **out);
/* plan.c: as cltopk_choose, with the record's predicted seconds in *t (< 0:
 * no model for it); device_only: AUTO chooses among the device's records
 * (the fastest by its model, else the first in the table that can run rq) */
CLTOPK_INTERNAL int cltopk_plan_time(cltopk_context *ctx, const cltopk_request *rq,
                                     cltopk_algo algo, int device_only,
                                     const cltopk_algorithm **out, double *t);
/* plan.c: whether a can run rq here (its limits, then supports); why on no */
CLTOPK_INTERNAL int cltopk_can_run(cltopk_context *ctx, const cltopk_algorithm *a,
                                   const cltopk_request *rq, char *why, size_t whylen);
#if HAVE_OPENCL
/* plan.c: how a context of several devices splits rq's host data */
#define CLTOPK_DEVICES_MAX 64
#define CLTOPK_SPLIT_PROBE 16
typedef struct {
    size_t lens[CLTOPK_DEVICES_MAX];  /* elements of device d (cltopk_device_at;
                                         consecutive parts in device order) */
    const cltopk_algorithm *recs[CLTOPK_DEVICES_MAX]; /* the record each runs */
    double model[CLTOPK_DEVICES_MAX]; /* the model's seconds for the whole input */
    double rate[CLTOPK_DEVICES_MAX];  /* measured elements a second (0: none) */
    double secs[CLTOPK_DEVICES_MAX];  /* the seconds the split goes by: the
                                         model's, or n / rate where measured */
    double over;      /* measured cost of a split besides its parts (0: model) */
    double devices;   /* predicted seconds of the devices given a part */
    double host;      /* AUTO's fastest host record's seconds (-1: none) */
    size_t used;      /* devices given a part */
    int probe;        /* every device given a part to measure them again */
    int measured;     /* secs from measured rates (else the model's) */
    int mode;         /* CLTOPK_SPLIT: 0 model, 1 measured */
    int split;        /* 0: the call runs as on one device */
} cltopk_split;
/* plan.c: the split of rq's host data over the devices of ctx, in proportion
 * to each device's speed: with CLTOPK_SPLIT=measured (the default) the rates
 * of its parts in the context's earlier splits of keys of rq's size, where
 * every device has one; else (the first call, CLTOPK_SPLIT=model) the speed
 * the planner predicts (the named device record's time for the whole input,
 * or for AUTO each device's fastest device record's, recs[d]).  By measured
 * rates, the fewest fastest devices whose predicted time (their time together
 * plus the measured cost of a split where more than one) is least get the
 * parts, the others none, except after CLTOPK_SPLIT_PROBE such splits in a
 * row (probe set): then every device, by its last rate; by the model, every
 * device.  split 0: no split,
 * the call runs as on one device: a named host record (lens unset), or AUTO
 * where the fastest host record (host) beats the devices (lens set all the
 * same).  A named record that a device cannot run is UNSUPPORTED, the device
 * named; an invalid CLTOPK_SPLIT is UNSUPPORTED. */
CLTOPK_INTERNAL int cltopk_multi_split(cltopk_context *ctx, const cltopk_request *rq,
                                       cltopk_algo algo, cltopk_split *sp);
/* plan.c: after a split call whose parts all ran: record each device's rate
 * (lens[d] elements in secs[d] seconds; parts of 0 elements or 0 seconds
 * skipped), the split's own cost (call - the slowest part) and whether it
 * left a device out */
CLTOPK_INTERNAL void cltopk_split_record(cltopk_context *ctx, int bytes, const size_t *lens,
                                         const double *secs, double call);
#endif
/* plan.c: the text of cltopk_explain for rq */
CLTOPK_INTERNAL int cltopk_plan_explain(cltopk_context *ctx, const cltopk_request *rq, char *buf,
                                        size_t len);

/* ----------------------------------------------------------------- cpu/ */
/* The CPU algorithms work on host arrays. */
/* top-k by per-thread heaps; outputs as in cltopk_topk (either may be NULL) */
CLTOPK_INTERNAL int cltopk_cpu_heap_topk(const cltopk_request *rq, const void *keys, size_t n,
                                         size_t k, void *out_keys, int64_t *out_index);
/* the element at position rank, by selection over (key, index) pairs */
CLTOPK_INTERNAL int cltopk_cpu_select(const cltopk_request *rq, size_t rank, void *out_key,
                                      int64_t *out_index);
/* sort pairs into output order (best first) */
CLTOPK_INTERNAL void cltopk_sort_pairs(okey_pair *p, size_t n);
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

/* ------------------------------------------- many rows at once (issue 13) */

/* A batch of independent top-k problems, described by lib/rows.c; rq says the
 * type, the order, k, which outputs and where the data lies (rq->keys or
 * rq->dkeys / rq->doffset are the dense rows, the segments' keys, or the kNN
 * points; rq->n is the extent of that input in elements).  Outputs are nrows x
 * k, row r at r * k. */
enum { ROWS_DENSE = 0, ROWS_SEGMENTS = 1, ROWS_KNN = 2 };
typedef struct {
    int mode;
    size_t nrows;            /* rows, segments or queries */
    size_t cols, ld;         /* ROWS_DENSE: row r = keys[r * ld .. r * ld + cols) */
    uint64_t ibase;          /* ROWS_DENSE on the device: positions written + ibase */
    const int64_t *offsets;  /* ROWS_SEGMENTS: nrows + 1, in host memory, validated */
    int metric;              /* ROWS_KNN: cltopk_metric; rq->smallest for L2 */
    size_t np, d;            /* ROWS_KNN: points (np x d) and queries (nrows x d) */
    const float *queries;    /* ROWS_KNN, host data */
#if HAVE_OPENCL
    cl_mem dqueries;         /* ROWS_KNN, device data, from element qoffset */
    size_t qoffset;
#endif
} cltopk_rows_job;

/* heap.c: the best min(k, n) of keys[0..n) on the calling thread (the SIMD
 * filter and the heap of cltopk_cpu_heap_topk, no floor), sorted into THE
 * ORDER in h (k pairs of room); returns how many */
CLTOPK_INTERNAL size_t cltopk_cpu_heap_row(const cltopk_request *rq, const void *keys, size_t n,
                                           size_t k, okey_pair *h);
/* heap.c: the same by a buffer of 2k candidates (h: 2k pairs of room) that
 * keeps its best k whenever it fills (a quickselect) and raises the threshold
 * to their worst, with the sample's floor where n is large: for large k,
 * where the heap's sift-downs cost (64 x 131072 at k = 4096 on 2 cores: the
 * heap 48.8 ms, the buffer 11.1) */
CLTOPK_INTERNAL size_t cltopk_cpu_buf_row(const cltopk_request *rq, const void *keys, size_t n,
                                          size_t k, okey_pair *h);
/* heap.c: a stable LSD radix sort of pairs (tmp: n pairs of room), by the
 * index ascending over its low ibits bits, then by the key descending over
 * its low kbits bits, db (1 .. CLTOPK_CPU_LSD_MAX) bits a pass */
#define CLTOPK_CPU_LSD_MAX 11
CLTOPK_INTERNAL void cltopk_cpu_lsd_pairs(okey_pair *p, okey_pair *tmp, size_t n, int ibits,
                                          int kbits, int db);
/* rowscpu.c: the job on host arrays, OpenMP over rows; CLTOPK_OK or
 * CLTOPK_ERR_NO_MEMORY (nothing written then) */
CLTOPK_INTERNAL int cltopk_cpu_rows(const cltopk_request *rq, const cltopk_rows_job *job);
/* rowscpu.c: the distance of cltopk_knn (metric, the fma order of cltopk.h) */
CLTOPK_INTERNAL float cltopk_knn_distance(const float *q, const float *p, size_t d, int metric);
#if HAVE_OPENCL
/* rowsdev.c (cl/rows.cl): whether the device kernel can run the job (k
 * against local memory, row lengths, int64, a valid CLTOPK_BITS); why on no */
CLTOPK_INTERNAL int cltopk_rows_dev_can(cltopk_context *ctx, const cltopk_request *rq,
                                        const cltopk_rows_job *job, char *why, size_t whylen);
/* rowsdev.c: the job on device data (rq->dkeys ..., job->dqueries), enqueued
 * after the context's last event and rq's wait list; ends in the context's
 * last event.  Segment offsets are copied from the host by the call. */
CLTOPK_INTERNAL int cltopk_rows_dev_buffer(cltopk_context *ctx, const cltopk_request *rq,
                                           const cltopk_rows_job *job);
/* rowsdev.c: the device kernel's configuration for the job, a line of text
 * into buf (for cltopk_explain_rows); the length written */
CLTOPK_INTERNAL size_t cltopk_rows_dev_describe(cltopk_context *ctx, const cltopk_request *rq,
                                                const cltopk_rows_job *job, char *buf,
                                                size_t len);
/* knndev.c (cl/knn.cl): kNN by tiles of distances, for rowsdev.c.  A
 * launch: nq queries of q from element q_off against the job's points in p
 * from element p_off; outputs from element 0 (NULL: not wanted). */
typedef struct {
    cl_mem q, p, out_dist, out_index;
    size_t q_off, p_off, nq;
} cltopk_knn_launch;
/* whether the tiles' parameters (CLTOPK_KNN) are valid: 0 with why if not */
CLTOPK_INTERNAL int cltopk_knn_dev_can(cltopk_context *ctx, const cltopk_request *rq,
                                       const cltopk_rows_job *job, char *why, size_t whylen);
/* the launch by tiles, after the context's last event and the wait list;
 * rows_opts are rows.cl's options for kNN (its selection, wg work-items a
 * group), which cl/knn.cl includes.  *done 0 (and nothing enqueued) where
 * the tiles are off or do not fit: the caller runs rows_knn then. */
CLTOPK_INTERNAL int cltopk_knn_dev_run(cltopk_context *ctx, const cltopk_request *rq,
                                       const cltopk_rows_job *job, const char *rows_opts,
                                       unsigned wg, const cltopk_knn_launch *a,
                                       cl_uint num_wait, const cl_event *wait, int *done);
/* the tiles' configuration as a line of text (explain); 0 where they do not run */
CLTOPK_INTERNAL size_t cltopk_knn_dev_describe(cltopk_context *ctx, const cltopk_request *rq,
                                               const cltopk_rows_job *job, unsigned wg,
                                               char *buf, size_t len);
/* rowsdev.c: the job on host data through the device kernel, in batches of
 * rows that fit one device chunk; blocks until the outputs are written */
CLTOPK_INTERNAL int cltopk_rows_dev_host(cltopk_context *ctx, const cltopk_request *rq,
                                         const cltopk_rows_job *job);
/* rowsdev.c: the CPU rows on device data: input read to the host (after the
 * wait list), cltopk_cpu_rows, outputs written back; blocks */
CLTOPK_INTERNAL int cltopk_rows_cpu_on_buffer(cltopk_context *ctx, const cltopk_request *rq,
                                              const cltopk_rows_job *job);
/* rowsdev.c: CLTOPK_BITS each= (0 auto, 1 on, 2 off), -1 with why for a bad
 * CLTOPK_BITS */
CLTOPK_INTERNAL int cltopk_rows_each_mode(const cltopk_context *ctx, const cltopk_request *rq,
                                          char *why, size_t whylen);
/* rowseach.c: dense rows or segments of device data a row at a time, each by
 * the single-array device algorithm algo (AUTO: the planner's choice for the
 * row); whether it can (1), else 0 with why; *secs the model's time of the
 * job (NULL: not wanted), *name the algorithm a row of the average length
 * takes (NULL: not wanted) */
CLTOPK_INTERNAL int cltopk_rows_each_can(cltopk_context *ctx, const cltopk_request *rq,
                                         const cltopk_rows_job *job, cltopk_algo algo,
                                         double *secs, const char **name, char *why,
                                         size_t whylen);
/* rowseach.c: the model's time of cltopk_rows_cpu_on_buffer for the job */
CLTOPK_INTERNAL double cltopk_rows_staged_time(cltopk_context *ctx, const cltopk_request *rq,
                                               const cltopk_rows_job *job);
/* rowseach.c: run it: after the context's last event and rq's wait list,
 * each row's answer into scratch, then copied to its place (short segments:
 * the rest of their k filled as cltopk.h says); ends in the context's last
 * event */
CLTOPK_INTERNAL int cltopk_rows_dev_each(cltopk_context *ctx, const cltopk_request *rq,
                                         const cltopk_rows_job *job, cltopk_algo algo);
#endif

/* ---- cachefile.c: the disk cache's files (kernel binaries, the planner's
 * constants), safe in a directory others can reach.  A cache directory is used
 * only when it is the effective user's and not writable by group or others;
 * entries are regular files of that user, opened without following links or
 * blocking; writes go to a new temporary file (O_EXCL, 0600) renamed over the
 * entry.  Every failure is a miss or a skipped write, never an error. ---- */
/* 1 if dir may hold the cache: such a directory, or nothing yet (then it is
 * made, mode 0700, when the first entry is written); 0 turns the cache off */
CLTOPK_INTERNAL int cltopk_cachedir_usable(const char *dir);
/* the entry at path ("DIR/NAME") opened for reading, its size in *size; -1 when
 * it is missing or may not be used */
CLTOPK_INTERNAL int cltopk_cachefile_open(const char *path, uint64_t *size);
/* exactly len bytes from fd into buf: 0, else -1 (an error or an early end) */
CLTOPK_INTERNAL int cltopk_cachefile_read(int fd, void *buf, size_t len);
/* the whole entry at path when it has at most cap bytes (malloc'd, with a
 * terminating 0 after its *len bytes), else NULL */
CLTOPK_INTERNAL char *cltopk_cachefile_slurp(const char *path, size_t cap, size_t *len);
/* write parts[0..nparts) (lens[i] bytes each) as the entry at path through a
 * new temporary file in its directory: 0, or -1 (nothing replaced) */
CLTOPK_INTERNAL int cltopk_cachefile_write(const char *path, int nparts,
                                           const void *const *parts, const size_t *lens);
/* ---- end of the cachefile.c block ---- */

/* ------------------------------------------- queries over columns (issue 14) */
#include "expr.h"

/* One cltopk_query_topk call, described by lib/query.c: the compiled
 * expressions, the columns they use (host data: data[r] for the program's
 * column r; device data: dcols / doffs), the rows and the outputs. */
typedef struct {
    const expr_query *q;
    size_t n, k;
    int smallest;
    int types[EXPR_MAX_REFS];    /* cltopk_dtype of each used column */
    const void *data[EXPR_MAX_REFS];
    void *out_scores;            /* k of them (4 or 8 bytes), or NULL */
    int64_t *out_index;          /* k, or NULL */
    size_t *out_count;           /* host: rows returned */
#if HAVE_OPENCL
    cl_mem dcols[EXPR_MAX_REFS]; /* device data, from element doffs[r] */
    size_t doffs[EXPR_MAX_REFS];
    /* 0: plain columns; else the index's blocked layout (lib/indexdev.c):
     * row i is element i % blk of its block of blk rows, a column's blocks
     * blk_stride elements apart */
    size_t blk, blk_stride;
    cl_mem dout_scores, dout_index, dout_count;
#endif
} cltopk_query_job;

/* The bits of the worst score, which a row failing the filter takes where a
 * score column is written whole: -inf (largest first) or the quiet NaN
 * (smallest first), float64 or float32 */
static inline uint64_t cltopk_query_worst(int f64, int smallest)
{
    return f64 ? (smallest ? 0x7FF8000000000000ull : 0xFFF0000000000000ull)
               : (smallest ? 0x7FC00000ull : 0xFF800000ull);
}

/* querycpu.c: the query on host columns, OpenMP over row ranges; CLTOPK_OK
 * or CLTOPK_ERR_NO_MEMORY (nothing written then) */
CLTOPK_INTERNAL int cltopk_cpu_query(const cltopk_query_job *job);
#if HAVE_OPENCL
/* querydev.c (cl/query.cl): whether the device can run the job (why on no) */
CLTOPK_INTERNAL int cltopk_query_dev_can(cltopk_context *ctx, const cltopk_query_job *job,
                                         char *why, size_t whylen);
/* querydev.c: the job on device columns, after the context's last event and
 * the wait list; ends in the context's last event */
CLTOPK_INTERNAL int cltopk_query_dev(cltopk_context *ctx, const cltopk_query_job *job,
                                     cl_uint num_wait, const cl_event *wait);
/* querydev.c: the device peer of the query (cltopk_benchmark_query_peer):
 * the score column of job's rows written to scores (job->n elements of the
 * score type; rows failing the filter the worst score: -inf, or a NaN for
 * the smallest), after the context's last event; ends in the context's last
 * event */
CLTOPK_INTERNAL int cltopk_query_dev_scores(cltopk_context *ctx, const cltopk_query_job *job,
                                            cl_mem scores);
/* querydev.c: one line for cltopk_query_explain saying which kernel would run
 * the job (the specialised one or the interpreter, and why) and what building
 * it costs; the job as for cltopk_query_dev_can */
CLTOPK_INTERNAL void cltopk_query_dev_explain(cltopk_context *ctx, const cltopk_query_job *job,
                                              char *buf, size_t len);
#endif

/* ------------------------------------- the early-stopping index (issue 15) */

/* The index's layout, the same in host and device memory (lib/index.c builds
 * it; docs/FORMAT.md "Index files" stores it): P partitions, partition i being
 * blocks pstart[i] .. pstart[i+1] - 1 holding psize[i] tuples; block g holds
 * B slots, attribute a of slot s at data[(g * d + a) * B + s], its tuple
 * number at ids[g * B + s] (IX_PAD in the padding after a partition's last
 * tuple, whose attributes are 0); thr[g * d + a] is the largest attribute a
 * of the blocks after g in its partition (-inf in a partition's last block,
 * which no query reads). */
#define IX_PAD 0xFFFFFFFFu
typedef struct {
    size_t n, d, B, P, nblocks;
    const uint32_t *pstart; /* P + 1 */
    const uint64_t *psize;  /* P */
    const float *data;      /* NULL where the index is on the device only */
    const uint32_t *ids;
    const float *thr;
} cltopk_ix_layout;

/* One query of the index: score(t) by the fma rule of cltopk.h over attr[0 ..
 * m) and w; the best k by (score, smaller tuple number).  full: no threshold
 * (cltopk_index_full_topk).  The index is read in rounds of `probe` blocks a
 * partition (lib/index.c chooses it); after each round cltopk_ix_decide says
 * whether the blocks not read yet are evaluated in full instead (sw and
 * ratio: CLTOPK_INDEX=switch and ratio). */
typedef struct {
    const unsigned *attr;
    const float *w;
    size_t m, k;
    int full;
    size_t probe;
    unsigned grow; /* on the device, round r reads probe * grow^r blocks */
    size_t fan;    /* on the device, the lists a merge work-group takes */
    size_t sync;   /* on the device, read the phase back every sync rounds (0:
                      never: every round enqueued at once) */
    int first;     /* ... and (sync 0) after the first round */
    int sw;
    double ratio;
    size_t stage; /* an index in host memory queried on the device: blocks
                     a staging slot holds (0: chosen) */
    size_t piece; /* ... and blocks a pinned piece of its copies (0: 32 MiB) */
    int filter;   /* on the device, the full evaluation (after a switch and
                     for full) by index_filter (1; 2: its fallback forced) or
                     index_full alone (0) */
    size_t cands; /* index_filter's room for candidates (0: chosen) */
    const uint32_t *bslots; /* on the device, not NULL: the layout's slots
                       of k distinct tuples (lib/index.c's foresee, from its
                       sample), whose least score is at most the k-th best:
                       the query is read in one launch from that bound
                       (index_direct), the rounds only where its candidates
                       overflow their room */
    int fuse;       /* ... and its last work-group merges few candidates
                       (CLTOPK_INDEX=fuse) */
    int pin;        /* ... and its host array in pinned memory */
    float *out_scores;   /* k, or NULL */
    int64_t *out_index;  /* k, or NULL */
    cltopk_index_stats *st; /* always set (the caller's or a local one) */
} cltopk_ix_query;

/* A tuple's rank key: the order key of its score (THE ORDER of float32,
 * largest first) above its complemented tuple number, so that a larger key
 * is a better tuple and no two tuples have one key; 0 is below every tuple. */
static inline uint64_t cltopk_ix_key(float score, uint32_t id)
{
    uint32_t b;
    memcpy(&b, &score, 4);
    return ((uint64_t)order_key32(b, KIND_FLOAT, 0) << 32) | (uint32_t)~id;
}

/* The score bits the API writes for a key: its float, +0.0 for a zero, the
 * quiet NaN 0x7FC00000 for a NaN */
static inline uint32_t cltopk_ix_score_bits(uint64_t key)
{
    uint32_t u = (uint32_t)(key >> 32);
    if (u == 0xFFFFFFFFu)
        return 0x7FC00000u;
    return (u & 0x80000000u) ? u ^ 0x80000000u : ~u;
}

/* What the switch rule knows of a partition after a round. */
typedef struct {
    uint32_t pos, nb; /* blocks read, blocks */
    int done;         /* stopped, or read to its end */
    float tfirst;     /* the threshold score after its first block */
    float tnow;       /* ... after the last block read */
    uint32_t ppos;    /* pos and tnow at the previous decision (ppos 0: none) */
    float tprev;
} cltopk_ix_progress;

/* indexcpu.c: after a round, whether to evaluate the blocks not read yet in
 * full (1) or read on (0), with bound the shared bound's order key (0: none
 * yet); updates pr's previous positions.  See cpu/indexcpu.c. */
CLTOPK_INTERNAL int cltopk_ix_decide(const cltopk_ix_query *q, cltopk_ix_progress *pr, size_t P,
                                     uint32_t bound);

/* indexcpu.c: the query on a host layout, OpenMP over partitions and blocks;
 * fills q->st; CLTOPK_OK or CLTOPK_ERR_NO_MEMORY (nothing written then) */
CLTOPK_INTERNAL int cltopk_cpu_index_query(const cltopk_ix_layout *L, const cltopk_ix_query *q);
/* indexcpu.c: the answer from n tuples' keys (sorted here, best first): the
 * best min(n, q->k) written to q's outputs (the score bits of
 * cltopk_ix_score_bits, the tuple numbers) */
CLTOPK_INTERNAL void cltopk_ix_answer(const cltopk_ix_query *q, uint64_t *keys, size_t n);
/* indexcpu.c: n tuples' keys sorted best first (larger key first) */
CLTOPK_INTERNAL void cltopk_ix_sort(uint64_t *keys, size_t n);
/* indexcpu.c: the score of one threshold tuple (or any d-attribute tuple) by
 * the fma rule */
CLTOPK_INTERNAL float cltopk_ix_score(const float *tuple, const unsigned *attr, const float *w,
                                      size_t m);

#if HAVE_OPENCL
/* indexdev.c (cl/index.cl): the layout in device memory (data NULL: the
 * index is in host memory), and what its queries keep from the first one to
 * cltopk_index_dev_release (grown when a query needs more; the context's lock
 * covers them): device buffers with their sizes in bytes, and host arrays */
typedef struct {
    cl_mem data, ids, thr, pstart;
    cl_mem qb, lists, part, todo, wmap, cand;
    cl_mem xs, xi; /* the query engine's scores and slots (full=query) */
    cl_mem sdata[2], sids[2], sthr[2]; /* streamed: the two staging slots */
    size_t qb_n, lists_n, part_n, todo_n, wmap_n, cand_n, xs_n, xi_n, sdata_n[2], sids_n[2],
        sthr_n[2];
    uint32_t *hq, *hwmap, *htodo;
    size_t hq_n, hwmap_n, htodo_n;
    cl_mem hqm;               /* hq's pinned buffer (hq mapped from it), or NULL: malloc */
    cl_command_queue hqm_q;   /* the queue that mapped it (retained) */
    int quiet;                /* the query's calls without events (CLTOPK_INDEX=pin) */
} cltopk_ix_dev;
/* copy the host layout's arrays to the device: CLTOPK_OK, or
 * CLTOPK_ERR_DEVICE_MEMORY (too large: nothing allocated) or an OpenCL status */
CLTOPK_INTERNAL int cltopk_index_dev_upload(cltopk_context *ctx, const cltopk_ix_layout *L,
                                            cltopk_ix_dev *dev);
CLTOPK_INTERNAL void cltopk_index_dev_release(cltopk_ix_dev *dev);
/* read the device arrays back into the host arrays data, ids, thr (the
 * layout's sizes); blocks */
CLTOPK_INTERNAL int cltopk_index_dev_read(cltopk_context *ctx, const cltopk_ix_layout *L,
                                          const cltopk_ix_dev *dev, float *data, uint32_t *ids,
                                          float *thr);
/* the largest k the device kernels take on this device (0: none) */
CLTOPK_INTERNAL size_t cltopk_index_dev_kmax(cltopk_context *ctx);
/* the query on the device (k <= cltopk_index_dev_kmax); fills q->st; blocks.
 * dev->data NULL: the index is in host memory (L's arrays) and its blocks are
 * copied to the device a round (or a chunk of the full evaluation) at a
 * time, through the context's pinned staging (cltopk_stream_setup) on its
 * transfer queue, the copies overlapped with the host's gathering and with
 * the kernels */
CLTOPK_INTERNAL int cltopk_index_dev_query(cltopk_context *ctx, const cltopk_ix_layout *L,
                                           cltopk_ix_dev *dev, const cltopk_ix_query *q);
#endif

#endif
