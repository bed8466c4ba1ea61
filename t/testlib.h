/* testlib.h - what the test programs share: the seed and a random generator, test
 * data, device choice, the bitonic limit, and the poisoned-output checks that
 * compare a library call with the oracle bit for bit. */
#ifndef CLTOPK_T_TESTLIB_H
#define CLTOPK_T_TESTLIB_H

#include <stddef.h>
#include <stdint.h>

#include "cltopk.h"
#include "oracle.h"
#include "tap.h"

/* ------------------------------------------------------------ randomness */

typedef struct {
    uint64_t s;
} rng_t;

/* The run's seed: $CLTOPK_TEST_SEED (decimal or 0x hex) if set, else from the
 * clock and pid.  Printed once as a diag line so that any failure can be
 * repeated. */
uint64_t test_seed(void);
/* 1 under make check-full ($CLTOPK_TEST_FULL set and not 0): the long sweeps
 * run whole; make check runs a share of them (every path still taken) */
int test_full(void);
void rng_init(rng_t *r, uint64_t seed);
uint64_t rng_next(rng_t *r);
/* uniform in [0, bound), bound > 0 */
uint64_t rng_below(rng_t *r, uint64_t bound);

/* ------------------------------------------------------------------ data */

extern const cltopk_dtype all_types[6];
size_t tsize(cltopk_dtype type);
const char *tname(cltopk_dtype type);
int is_float(cltopk_dtype type);
/* 1 for the three types on which make check builds an OpenCL configuration's
 * programs where it does not take all six (float32, int32, int64: both key
 * widths, float and integer keys; each type is a set of kernels of seconds to
 * build on POCL); make check-full takes every type */
int check_type(cltopk_dtype type);
/* 1 where this run takes the type in those configurations: every type under
 * make check-full, check_type's under make check */
int check_runs_type(cltopk_dtype type);

/* Names of the distributions of gen_data, NULL-terminated:
 *   uniform     floats U(-1,1); integers uniform over the whole type
 *   bits        random raw bits (floats: every class, NaNs included)
 *   narrow      16 small values (-8..7, floats with both zeros): ties everywhere
 *   equal       one value everywhere (drawn from the special values)
 *   few         8 distinct values (special and random), shuffled
 *   special     special values (NaNs of several payloads and both signs,
 *               +-inf, +-0, denormals, +-max, +-min; integer min/max/0/+-1)
 *               mixed half and half with uniform values
 *   nan         floats: mostly NaNs of many payloads and signs, with +-inf,
 *               +-0 and a few uniform values (integers: as special)
 *   denorm      floats: denormals of both signs and +-0, a few normals
 *               (integers: values in -3..3)
 *   increasing  uniform values sorted ascending (ties in order)
 *   decreasing  sorted descending
 *   bucket      bucket killer: one value except 1/64 that differ from it in
 *               one byte each
 *   worst       the last key of the direction (the sentinel's key: -inf for
 *               LARGEST floats, NaN of any payload for SMALLEST floats, the
 *               integer type's min resp. max) except 1/64 uniform values
 *   worstall    the worst key everywhere (floats SMALLEST: NaNs, mixed payloads)
 *   five        five distinct values (-2..2 scaled: floats x 1.5, i32 x 1000,
 *               u32 (v + 2) x 7, i64 << 40, u64 (v + 2) << 50), shuffled; not
 *               in dists[] (the sample-filter and band tests name it)
 * The direction matters only for worst and worstall. */
extern const char *const dists[];
void gen_data(cltopk_dtype type, const char *dist, size_t n, int smallest, rng_t *r, void *out);

/* The raw bits of element i (4- or 8-byte types), widened. */
uint64_t elem_bits(cltopk_dtype type, const void *keys, size_t i);

/* ---------------------------------------------------------------- devices */

/* The OpenCL device the tests use: $CLTOPK_TEST_DEVICE if set ("cpu" means
 * none), else "P:D" of the first OpenCL device cltopk_device_get reports.
 * Returns 1 with the device string in buf, or 0 with the reason in buf. */
int test_cl_device(char *buf, size_t len);
/* make check's quick builds: a test whose time is mostly POCL building its
 * kernels (a configuration's programs take seconds each to build) calls this
 * first, before it opens a device.  Where $CLTOPK_TEST_QUICK is 1 (t/local.mk
 * sets it for make check), not make check-full, neither CLTOPK_TEST_DEVICE
 * nor CLTOPK_BUILD_OPTIONS is set, and the first OpenCL device (the one the
 * tests take) is POCL's, it sets CLTOPK_BUILD_OPTIONS=-cl-opt-disable for
 * this process: the same OpenCL C built in a third of the time.  Not for
 * the bitonic reducers (reducer.cl: CLTOPK_BUILD_FILES is set to
 * $CLTOPK_TEST_QUICK_FILES, which t/local.mk sets to the other kernel
 * files, as for t/cli.sh; unset or empty, no quick builds), whose programs
 * the optimised tests build
 * at the same k and types: built quick as well they were some 20 programs
 * twice, and optimised they take little longer.  What it
 * computes does not change (the kernels' results are exact or fixed by
 * FP_CONTRACT OFF and fma); the optimised builds are tested by the other
 * tests of make check, by make check-full and on any named device. */
void test_quick_builds(void);

/* Set (value NULL: unset) the environment variable name for a while; the old
 * value back with env_pop (which frees what env_push returned). */
char *env_push(const char *name, const char *value);
void env_pop(const char *name, char *old);

/* A call whose kernel fails to build (CLTOPK_BUILD_OPTIONS set to an option no
 * OpenCL compiler takes, for every kernel file) must fail with
 * CLTOPK_ERR_BUILD, naming the build, write nothing, and have ended its
 * transfers of the caller's keys when it returns.  failed_build_call runs it
 * in a child process that opens the test device afresh (where a copy left in
 * flight reliably outlives the call: in a process that had run kernels
 * before, POCL's threads often finished it in time), the keys in pages of
 * their own (mmap) unmapped right after the call, then the context closed:
 * a copy still in flight reads unmapped memory and the child dies of it.
 * Call it before this process first touches OpenCL (fork).  run makes the
 * call on ctx from keys, into outputs it poisons (out_keys bytes, out_index
 * count) and checks; returns 1 when all of it holds, else 0 with the reason
 * in why; -1 (why says so) where there is no OpenCL device to test. */
typedef int (*failed_build_fn)(cltopk_context *ctx, const void *keys, void *out_keys,
                               int64_t *out_index, void *arg);
int failed_build_call(size_t key_bytes, failed_build_fn run, void *arg, size_t out_bytes,
                      size_t out_count, char *why, size_t whylen);

/* Open that device (1), or report why not (0: skip; the reason in why).
 * A device that exists but fails to open is a failed test and returns 0. */
int open_test_cl(cltopk_context **ctx, char *why, size_t whylen);

/* The largest k that CLTOPK_ALGO_BITONIC accepts for keys of this type on ctx,
 * found by asking (cltopk_workspace_size) rather than assumed; 0 when it
 * accepts none (e.g. the "cpu" context). */
size_t bitonic_limit(cltopk_context *ctx, cltopk_dtype type);

/* Sorted, deduplicated list of the k values worth testing up to n: 0..3,
 * 2^i - 1, 2^i, 2^i + 1 up to limit (every other i under make check; all
 * under check-full) and limit, limit + 1, plus n - 1 and n.
 * Returns the count (out must hold 128). */
size_t k_list(size_t limit, size_t n, size_t *out);

/* ----------------------------------------------------------------- checks */

enum { WANT_KEYS = 1, WANT_INDEX = 2, WANT_BOTH = 3 };

/* Run cltopk_topk(ctx, type, keys, n, k, flags, algo) with the outputs chosen by
 * want, each poisoned first (every element different from its expected value,
 * plus guard elements past k), and check:
 *   expect == CLTOPK_OK: the status, keys and positions equal to the oracle's
 *     bit for bit (perm from oracle_order), the guards intact;
 *   else: that status, a non-empty cltopk_last_error, every output byte intact.
 * Returns 1 on success, else 0 with what went wrong in msg. */
int check_topk(cltopk_context *ctx, cltopk_algo algo, cltopk_dtype type, const void *keys,
               size_t n, size_t k, int smallest, const int64_t *perm, int want, int expect,
               char *msg, size_t msglen);

/* The same for cltopk_select at position rank. */
int check_select(cltopk_context *ctx, cltopk_algo algo, cltopk_dtype type, const void *keys,
                 size_t n, size_t rank, int smallest, const int64_t *perm, int want,
                 int expect, char *msg, size_t msglen);

/* Elements past the results that the checks poison and verify. */
#define GUARD 3

/* The poison of an output of cap elements (keys in pk, positions in pi): with
 * expect_pos (the expected positions of the first count results), each key
 * differs from its expected value; the rest is a fixed pattern, positions are
 * negative. */
void make_poison(cltopk_dtype type, const void *keys, const int64_t *expect_pos, size_t count,
                 size_t cap, void *pk, int64_t *pi);
/* Compare outputs (either may be NULL) with the expected positions and the
 * keys they hold, bit for bit, and the elements count..cap with the poison.
 * 1 if equal, else 0 with the first difference in msg. */
int compare_outputs(cltopk_dtype type, const void *keys, size_t n, const int64_t *expect_pos,
                    size_t count, size_t cap, const void *okeys, const int64_t *oidx,
                    const void *pk, const int64_t *pi, char *msg, size_t msglen);

/* --------------------------------------------------------- cl_mem refusals */

/* What *done holds before a cl_mem call that must fail: a call that fails
 * writes nothing, so it stays. */
#define EVENT_SENTINEL ((cl_event)(uintptr_t)0x5E471E1u)

/* The byte poisoned_mem (and failed_build_call) fills a buffer with. */
#define MEM_POISON 0xA5

#if CLTOPK_HAVE_OPENCL

/* A buffer of `bytes` (at least 1) in ctx's OpenCL context holding host's
 * bytes; bails out on failure. */
cl_mem host_mem(cltopk_context *ctx, const void *host, size_t bytes);

/* A buffer of `bytes` (1 if 0) in ctx's OpenCL context, every byte MEM_POISON. */
cl_mem poisoned_mem(cltopk_context *ctx, size_t bytes);

/* 1 if every byte of the nb buffers of bufs (NULL ones skipped) is still
 * MEM_POISON, read on cl's queue once it has finished; else 0 with the first
 * written byte in msg. */
int mems_poisoned(cltopk_context *cl, const cl_mem *bufs, size_t nb, char *msg, size_t msglen);

/* After a call of the cl_mem function fn that had to fail with `expect`: its
 * status st, a detail text (of ctx, which every call clears first; with ctx
 * NULL the thread's, cltopk_last_error(NULL), naming fn), done still
 * EVENT_SENTINEL, and the buffers unwritten (mems_poisoned).  1 if all
 * hold, else 0 with the first failure in msg.  An event the call wrote to
 * done is released. */
int check_refused(cltopk_context *cl, cltopk_context *ctx, const char *fn, int st, int expect,
                  cl_event done, const cl_mem *bufs, size_t nb, char *msg, size_t msglen);
#endif

/* ------------------------------------------------------------------ misc */

/* Bail out after `seconds` (a hung OpenCL call must not hang `make check`). */
void watchdog(unsigned seconds);

/* The directory for temporary files: $CLTOPK_TEST_TMPDIR, else $TMPDIR, else
 * /tmp.  make check points the first into the build tree. */
const char *test_tmpdir(void);

#endif
