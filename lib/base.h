/* base.h - the bottom layer: errors and measurement.
 *
 * Every other part of the library may call these; they call nothing of the
 * library (only the C library and, for the names of OpenCL errors, nothing of
 * the OpenCL runtime either).  See docs/DESIGN.md, "Layers". */
#ifndef CLTOPK_BASE_H
#define CLTOPK_BASE_H

#include <stddef.h>
#include <stdint.h>

#include "cltopk.h"

#define CLTOPK_INTERNAL __attribute__((visibility("hidden")))

/* The detail-text buffer of a failing call: the context's (ctx not NULL) or
 * this thread's open-error text.  cltopk_fail writes the text there and
 * returns status. */
CLTOPK_INTERNAL int cltopk_fail(cltopk_context *ctx, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* the buffer cltopk_fail(NULL, ...) writes: this thread's */
CLTOPK_INTERNAL char *cltopk_open_error(void);
/* getenv, with "" read as unset */
CLTOPK_INTERNAL const char *cltopk_env(const char *name);

#if CLTOPK_HAVE_OPENCL
CLTOPK_INTERNAL const char *cltopk_clerror_name(cl_int err);
/* Fail with CLTOPK_ERR_OPENCL, or CLTOPK_ERR_DEVICE_MEMORY for allocation
 * failures, naming the call `what` and the context's device. */
CLTOPK_INTERNAL int cltopk_clfail(cltopk_context *ctx, cl_int err, const char *what);
#endif

/* monotonic seconds */
CLTOPK_INTERNAL double cltopk_now(void);
/* the median of t[0..n) (sorts t) */
CLTOPK_INTERNAL double cltopk_median(double *t, int n);
/* a 64-bit seed that differs from call to call (a counter, the clock and
 * salt, e.g. the context's address, mixed): for samples whose answers do not
 * depend on it */
CLTOPK_INTERNAL uint64_t cltopk_fresh_seed(const void *salt);

/* SplitMix64's finaliser */
static inline uint64_t cltopk_mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* small arithmetic every layer uses */
static inline size_t cltopk_pow2_ge(size_t x)
{
    size_t p = 1;
    while (p < x)
        p <<= 1;
    return p;
}

static inline int cltopk_is_pow2(uint64_t x)
{
    return x && !(x & (x - 1));
}

static inline size_t cltopk_pow2_le(size_t x)
{
    size_t p = 1;
    while (p * 2 <= x)
        p <<= 1;
    return p;
}

#endif
