/* isa_avx2.c - the AVX2 instance of the per-ISA kernels (isa_body.h), compiled
 * with -mavx2 (Makefile.am) and used only where the processor has AVX2.
 *
 * The filter loads 4 vectors of 8 (32-bit) or 4 (64-bit) elements, turns them
 * into order keys (order.h, in vector form), compares them with the threshold
 * and moves on when none is above it: the common case of a top-k scan whose
 * k-th key is already large. */
#include "config.h"

#include <immintrin.h>
#include <stdint.h>

#include "order.h"

static inline size_t skip32_tail(const uint32_t *x, size_t i, size_t hi, int kind, int smallest,
                                 uint32_t thr);
static inline size_t skip64_tail(const uint64_t *x, size_t i, size_t hi, int kind, int smallest,
                                 uint64_t thr);

/* order keys with the sign bit flipped, so that a signed compare orders them */
static inline __m256i okey8s(__m256i x, int kind, int smallest)
{
    const __m256i sign = _mm256_set1_epi32((int)0x80000000u);
    __m256i u;
    if (kind == KIND_UNSIGNED) {
        u = x;
    } else if (kind == KIND_SIGNED) {
        u = _mm256_xor_si256(x, sign);
    } else {
        __m256i ax = _mm256_andnot_si256(sign, x);
        __m256i nan = _mm256_cmpgt_epi32(ax, _mm256_set1_epi32(0x7F800000));
        x = _mm256_andnot_si256(_mm256_cmpeq_epi32(x, sign), x); /* -0 -> +0 */
        u = _mm256_xor_si256(x, _mm256_or_si256(_mm256_srai_epi32(x, 31), sign));
        u = _mm256_or_si256(u, nan);
    }
    if (smallest)
        u = _mm256_xor_si256(u, _mm256_set1_epi32(-1));
    return _mm256_xor_si256(u, sign);
}

static inline size_t skip32_v(const uint32_t *x, size_t i, size_t hi, int kind, int smallest,
                                 uint32_t thr)
{
    const __m256i t = _mm256_set1_epi32((int)(thr ^ 0x80000000u));
    for (; i + 32 <= hi; i += 32) {
        __m256i c0 = _mm256_cmpgt_epi32(okey8s(_mm256_loadu_si256((const void *)(x + i)), kind, smallest), t);
        __m256i c1 = _mm256_cmpgt_epi32(okey8s(_mm256_loadu_si256((const void *)(x + i + 8)), kind, smallest), t);
        __m256i c2 = _mm256_cmpgt_epi32(okey8s(_mm256_loadu_si256((const void *)(x + i + 16)), kind, smallest), t);
        __m256i c3 = _mm256_cmpgt_epi32(okey8s(_mm256_loadu_si256((const void *)(x + i + 24)), kind, smallest), t);
        __m256i any = _mm256_or_si256(_mm256_or_si256(c0, c1), _mm256_or_si256(c2, c3));
        if (!_mm256_testz_si256(any, any)) {
            uint32_t m = (uint32_t)_mm256_movemask_ps(_mm256_castsi256_ps(c0)) |
                         (uint32_t)_mm256_movemask_ps(_mm256_castsi256_ps(c1)) << 8 |
                         (uint32_t)_mm256_movemask_ps(_mm256_castsi256_ps(c2)) << 16 |
                         (uint32_t)_mm256_movemask_ps(_mm256_castsi256_ps(c3)) << 24;
            return i + (size_t)__builtin_ctz(m);
        }
    }
    return skip32_tail(x, i, hi, kind, smallest, thr);
}

static inline __m256i okey4s(__m256i x, int kind, int smallest)
{
    const __m256i sign = _mm256_set1_epi64x((long long)0x8000000000000000ull);
    __m256i u;
    if (kind == KIND_UNSIGNED) {
        u = x;
    } else if (kind == KIND_SIGNED) {
        u = _mm256_xor_si256(x, sign);
    } else {
        __m256i ax = _mm256_andnot_si256(sign, x);
        __m256i nan = _mm256_cmpgt_epi64(ax, _mm256_set1_epi64x(0x7FF0000000000000ll));
        x = _mm256_andnot_si256(_mm256_cmpeq_epi64(x, sign), x);
        __m256i neg = _mm256_cmpgt_epi64(_mm256_setzero_si256(), x);
        u = _mm256_xor_si256(x, _mm256_or_si256(neg, sign));
        u = _mm256_or_si256(u, nan);
    }
    if (smallest)
        u = _mm256_xor_si256(u, _mm256_set1_epi64x(-1));
    return _mm256_xor_si256(u, sign);
}

static inline size_t skip64_v(const uint64_t *x, size_t i, size_t hi, int kind, int smallest,
                                 uint64_t thr)
{
    const __m256i t = _mm256_set1_epi64x((long long)(thr ^ 0x8000000000000000ull));
    for (; i + 16 <= hi; i += 16) {
        __m256i c0 = _mm256_cmpgt_epi64(okey4s(_mm256_loadu_si256((const void *)(x + i)), kind, smallest), t);
        __m256i c1 = _mm256_cmpgt_epi64(okey4s(_mm256_loadu_si256((const void *)(x + i + 4)), kind, smallest), t);
        __m256i c2 = _mm256_cmpgt_epi64(okey4s(_mm256_loadu_si256((const void *)(x + i + 8)), kind, smallest), t);
        __m256i c3 = _mm256_cmpgt_epi64(okey4s(_mm256_loadu_si256((const void *)(x + i + 12)), kind, smallest), t);
        __m256i any = _mm256_or_si256(_mm256_or_si256(c0, c1), _mm256_or_si256(c2, c3));
        if (!_mm256_testz_si256(any, any)) {
            uint32_t m = (uint32_t)_mm256_movemask_pd(_mm256_castsi256_pd(c0)) |
                         (uint32_t)_mm256_movemask_pd(_mm256_castsi256_pd(c1)) << 4 |
                         (uint32_t)_mm256_movemask_pd(_mm256_castsi256_pd(c2)) << 8 |
                         (uint32_t)_mm256_movemask_pd(_mm256_castsi256_pd(c3)) << 12;
            return i + (size_t)__builtin_ctz(m);
        }
    }
    return skip64_tail(x, i, hi, kind, smallest, thr);
}

/* The bitonic steps of strides jfrom, ..., 1 (jfrom < 4) over a[0..len) (len a
 * multiple of 4), in registers, as in isa_avx512.c: lane t meets lane t ^ j;
 * AVX2 has no unsigned 64-bit max, so the compare flips the sign bits first. */
static inline __m256i takemax_of(size_t j, size_t dirbit, int desc_all)
{
    long long sel[4];
    for (unsigned t = 0; t < 4; t++) {
        int low = (t & j) == 0;
        int desc = dirbit < 4 ? (t & dirbit) == 0 : desc_all;
        sel[t] = low == desc ? -1 : 0;
    }
    return _mm256_set_epi64x(sel[3], sel[2], sel[1], sel[0]);
}

static inline void small_steps(uint64_t *a, size_t len, size_t jfrom, size_t dirbit)
{
    const __m256i sign = _mm256_set1_epi64x((long long)0x8000000000000000ull);
    /* [descending block][j] */
    __m256i tm[2][3];
    for (int d = 0; d < 2; d++)
        for (size_t j = 1; j <= 2; j *= 2)
            tm[d][j] = takemax_of(j, dirbit, d);
    for (size_t b = 0; b < len; b += 4) {
        int d = dirbit < 4 ? 1 : (b & dirbit) == 0;
        __m256i v = _mm256_loadu_si256((const void *)(a + b));
        for (size_t j = jfrom; j >= 1; j /= 2) {
            __m256i p = j == 2 ? _mm256_permute4x64_epi64(v, 0x4E) : _mm256_shuffle_epi32(v, 0x4E);
            __m256i gt = _mm256_cmpgt_epi64(_mm256_xor_si256(v, sign), _mm256_xor_si256(p, sign));
            __m256i mx = _mm256_blendv_epi8(p, v, gt), mn = _mm256_blendv_epi8(v, p, gt);
            v = _mm256_blendv_epi8(mn, mx, tm[d][j]);
        }
        _mm256_storeu_si256((void *)(a + b), v);
    }
}
#define ISA_W 4
#define ISA_SMALL_STEPS small_steps

#define ISA_SKIP32 skip32_v
#define ISA_SKIP64 skip64_v
#define ISA_SUFFIX avx2
#define ISA_NAME "avx2"
#include "isa_body.h"
