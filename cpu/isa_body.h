/* isa_body.h - the per-ISA CPU kernels, written once (see isa.h).
 *
 * Included by cpu/isa_scalar.c, cpu/isa_avx2.c and cpu/isa_avx512.c, each
 * compiled with its own -m flags; ISA_SUFFIX names the instance.  The SIMD files
 * define ISA_SKIP32 / ISA_SKIP64 (hand-written filters) before including this;
 * the bitonic network below is plain C in a form that the compiler turns into
 * vector min/max for the strides of at least one vector (and scalar code for the
 * smaller strides), so that each instance runs the widest vectors it was compiled
 * for. */
#include "isa.h"
#include "order.h"

#include <stdint.h>
#include <string.h>

#define ISA_CAT2(a, b) a##b
#define ISA_CAT(a, b) ISA_CAT2(a, b)
#define ISA_FN(name) ISA_CAT(name, ISA_SUFFIX)

/* ------------------------------------------------------- scalar filters */

/* The scalar filter, with kind and smallest constant after inlining. */
static inline size_t skip32_tail(const uint32_t *x, size_t i, size_t hi, int kind, int smallest,
                                 uint32_t thr)
{
    for (; i < hi; i++)
        if (order_key32(cpu_ld32(x, i), kind, smallest) > thr)
            return i;
    return hi;
}

static inline size_t skip64_tail(const uint64_t *x, size_t i, size_t hi, int kind, int smallest,
                                 uint64_t thr)
{
    for (; i < hi; i++)
        if (order_key64(cpu_ld64(x, i), kind, smallest) > thr)
            return i;
    return hi;
}

#define SKIP_CASES(F, x, i, hi, kind, smallest, thr)                                   \
    switch ((kind) * 2 + (smallest)) {                                                 \
    case 0: return F(x, i, hi, 0, 0, thr);                                             \
    case 1: return F(x, i, hi, 0, 1, thr);                                             \
    case 2: return F(x, i, hi, 1, 0, thr);                                             \
    case 3: return F(x, i, hi, 1, 1, thr);                                             \
    case 4: return F(x, i, hi, 2, 0, thr);                                             \
    default: return F(x, i, hi, 2, 1, thr);                                            \
    }

#ifndef ISA_SKIP32
#define ISA_SKIP32 skip32_tail
#define ISA_SKIP64 skip64_tail
#endif

static size_t ISA_FN(skip32_)(const uint32_t *x, size_t i, size_t hi, int kind, int smallest,
                              uint32_t thr)
{
    SKIP_CASES(ISA_SKIP32, x, i, hi, kind, smallest, thr)
}

static size_t ISA_FN(skip64_)(const uint64_t *x, size_t i, size_t hi, int kind, int smallest,
                              uint64_t thr)
{
    SKIP_CASES(ISA_SKIP64, x, i, hi, kind, smallest, thr)
}

/* ------------------------------------------------------- composite keys */

static inline void comp32_body(const uint32_t *restrict x, size_t n, int kind, int smallest,
                               uint32_t base, uint64_t *restrict out)
{
    for (size_t j = 0; j < n; j++)
        out[j] = ((uint64_t)order_key32(cpu_ld32(x, j), kind, smallest) << 32) |
                 (uint32_t)~(base + (uint32_t)j);
}

static void ISA_FN(composite32_)(const uint32_t *x, size_t n, int kind, int smallest,
                                 uint32_t base, uint64_t *out)
{
    switch (kind * 2 + smallest) {
    case 0: comp32_body(x, n, 0, 0, base, out); break;
    case 1: comp32_body(x, n, 0, 1, base, out); break;
    case 2: comp32_body(x, n, 1, 0, base, out); break;
    case 3: comp32_body(x, n, 1, 1, base, out); break;
    case 4: comp32_body(x, n, 2, 0, base, out); break;
    default: comp32_body(x, n, 2, 1, base, out); break;
    }
}

/* ------------------------------------------------- the bitonic network */

/* One step of stride j over a[0..len): the pair (i, i + j), i & j == 0, is put
 * in descending order when (i & dirbit) == 0, else ascending. */
static inline void bstep(uint64_t *restrict a, size_t len, size_t j, size_t dirbit)
{
#ifdef ISA_W
    if (j >= ISA_W) {
#else
    if (j >= 8) {
#endif
        /* whole runs of j share one direction: straight vector min/max */
        for (size_t b = 0; b < len; b += 2 * j) {
            uint64_t *restrict p = a + b, *restrict q = a + b + j;
            if ((b & dirbit) == 0) {
                for (size_t t = 0; t < j; t++) {
                    uint64_t u = p[t], v = q[t];
                    p[t] = u > v ? u : v;
                    q[t] = u > v ? v : u;
                }
            } else {
                for (size_t t = 0; t < j; t++) {
                    uint64_t u = p[t], v = q[t];
                    p[t] = u > v ? v : u;
                    q[t] = u > v ? u : v;
                }
            }
        }
        return;
    }
    for (size_t b = 0; b < len; b += 2 * j)
        for (size_t t = b; t < b + j; t++) {
            uint64_t u = a[t], v = a[t + j];
            int desc = (t & dirbit) == 0;
            uint64_t mx = u > v ? u : v, mn = u > v ? v : u;
            a[t] = desc ? mx : mn;
            a[t + j] = desc ? mn : mx;
        }
}

/* The steps of strides jfrom, jfrom / 2, ..., 1 with one direction rule; the
 * strides inside one vector run together in registers where the ISA has a
 * kernel for them (ISA_SMALL_STEPS: one load and one store per vector). */
static inline void bsteps(uint64_t *restrict a, size_t len, size_t jfrom, size_t dirbit)
{
    size_t j = jfrom;
#ifdef ISA_SMALL_STEPS
    for (; j >= ISA_W; j /= 2)
        bstep(a, len, j, dirbit);
    if (j >= 1 && len >= ISA_W)
        ISA_SMALL_STEPS(a, len, j, dirbit);
#else
    for (; j >= 1; j /= 2)
        bstep(a, len, j, dirbit);
#endif
}

static void ISA_FN(bitonic16_)(uint64_t *a, size_t len, size_t kk, int sorted_in,
                               uint64_t *out)
{
    /* Every run of kk ends each step sorted descending (dirbit = len: never
     * set), so that runs of any origin can be merged; the stages below kk
     * alternate directions, as a bitonic sort needs. */
    if (!sorted_in)
        for (size_t s = 2; s <= kk; s *= 2)
            bsteps(a, len, s / 2, s < kk ? s : len);
    for (int round = 0; round < 4; round++) {
        /* merge: the best kk of two descending runs, the second read backwards,
         * form one bitonic run */
        size_t half = len / 2;
        for (size_t b = 0; b < half; b += kk) {
            const uint64_t *p = a + 2 * b, *q = a + 2 * b + kk;
            uint64_t *w = a + b;
            for (size_t t = 0; t < kk; t++) {
                uint64_t u = p[t], v = q[kk - 1 - t];
                w[t] = u > v ? u : v;
            }
        }
        len = half;
        /* rebuild: sort every run of kk descending */
        bsteps(a, len, kk / 2, 2 * len);
    }
    memcpy(out, a, len * sizeof *a);
}

const cpu_isa_ops ISA_FN(cltopk_isa_) = {
    ISA_NAME, ISA_FN(skip32_), ISA_FN(skip64_), ISA_FN(composite32_), ISA_FN(bitonic16_),
};
