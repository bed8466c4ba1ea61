/* isa_avx512.c - the AVX-512 instance of the per-ISA kernels (isa_body.h),
 * compiled with -mavx512f -mavx512bw -mavx512vl -mavx512dq (Makefile.am) and
 * used only where the processor has all four.
 *
 * The filter compares 4 vectors of 16 (32-bit) or 8 (64-bit) order keys with the
 * threshold into mask registers and moves on when all masks are empty. */
#include "config.h"

#include <immintrin.h>
#include <stdint.h>

#include "order.h"

static inline size_t skip32_tail(const uint32_t *x, size_t i, size_t hi, int kind, int smallest,
                                 uint32_t thr);
static inline size_t skip64_tail(const uint64_t *x, size_t i, size_t hi, int kind, int smallest,
                                 uint64_t thr);

static inline __m512i okey16(__m512i x, int kind, int smallest)
{
    const __m512i sign = _mm512_set1_epi32((int)0x80000000u);
    __m512i u;
    if (kind == KIND_UNSIGNED) {
        u = x;
    } else if (kind == KIND_SIGNED) {
        u = _mm512_xor_si512(x, sign);
    } else {
        __mmask16 nan = _mm512_cmpgt_epi32_mask(_mm512_andnot_si512(sign, x),
                                                _mm512_set1_epi32(0x7F800000));
        x = _mm512_maskz_mov_epi32((__mmask16)~_mm512_cmpeq_epi32_mask(x, sign), x);
        u = _mm512_xor_si512(x, _mm512_or_si512(_mm512_srai_epi32(x, 31), sign));
        u = _mm512_mask_mov_epi32(u, nan, _mm512_set1_epi32(-1));
    }
    if (smallest)
        u = _mm512_xor_si512(u, _mm512_set1_epi32(-1));
    return u;
}

static inline size_t skip32_v(const uint32_t *x, size_t i, size_t hi, int kind,
                                   int smallest, uint32_t thr)
{
    const __m512i t = _mm512_set1_epi32((int)thr);
    for (; i + 64 <= hi; i += 64) {
        __mmask16 m0 = _mm512_cmpgt_epu32_mask(okey16(_mm512_loadu_si512(x + i), kind, smallest), t);
        __mmask16 m1 = _mm512_cmpgt_epu32_mask(okey16(_mm512_loadu_si512(x + i + 16), kind, smallest), t);
        __mmask16 m2 = _mm512_cmpgt_epu32_mask(okey16(_mm512_loadu_si512(x + i + 32), kind, smallest), t);
        __mmask16 m3 = _mm512_cmpgt_epu32_mask(okey16(_mm512_loadu_si512(x + i + 48), kind, smallest), t);
        if ((m0 | m1 | m2 | m3) != 0) {
            uint64_t m = (uint64_t)m0 | (uint64_t)m1 << 16 | (uint64_t)m2 << 32 |
                         (uint64_t)m3 << 48;
            return i + (size_t)__builtin_ctzll(m);
        }
    }
    return skip32_tail(x, i, hi, kind, smallest, thr);
}

static inline __m512i okey8(__m512i x, int kind, int smallest)
{
    const __m512i sign = _mm512_set1_epi64((long long)0x8000000000000000ull);
    __m512i u;
    if (kind == KIND_UNSIGNED) {
        u = x;
    } else if (kind == KIND_SIGNED) {
        u = _mm512_xor_si512(x, sign);
    } else {
        __mmask8 nan = _mm512_cmpgt_epi64_mask(_mm512_andnot_si512(sign, x),
                                               _mm512_set1_epi64(0x7FF0000000000000ll));
        x = _mm512_maskz_mov_epi64((__mmask8)~_mm512_cmpeq_epi64_mask(x, sign), x);
        u = _mm512_xor_si512(x, _mm512_or_si512(_mm512_srai_epi64(x, 63), sign));
        u = _mm512_mask_mov_epi64(u, nan, _mm512_set1_epi64(-1));
    }
    if (smallest)
        u = _mm512_xor_si512(u, _mm512_set1_epi64(-1));
    return u;
}

static inline size_t skip64_v(const uint64_t *x, size_t i, size_t hi, int kind,
                                   int smallest, uint64_t thr)
{
    const __m512i t = _mm512_set1_epi64((long long)thr);
    for (; i + 32 <= hi; i += 32) {
        __mmask8 m0 = _mm512_cmpgt_epu64_mask(okey8(_mm512_loadu_si512(x + i), kind, smallest), t);
        __mmask8 m1 = _mm512_cmpgt_epu64_mask(okey8(_mm512_loadu_si512(x + i + 8), kind, smallest), t);
        __mmask8 m2 = _mm512_cmpgt_epu64_mask(okey8(_mm512_loadu_si512(x + i + 16), kind, smallest), t);
        __mmask8 m3 = _mm512_cmpgt_epu64_mask(okey8(_mm512_loadu_si512(x + i + 24), kind, smallest), t);
        if ((m0 | m1 | m2 | m3) != 0) {
            uint32_t m = (uint32_t)m0 | (uint32_t)m1 << 8 | (uint32_t)m2 << 16 |
                         (uint32_t)m3 << 24;
            return i + (size_t)__builtin_ctz(m);
        }
    }
    return skip64_tail(x, i, hi, kind, smallest, thr);
}

/* The bitonic steps of strides jfrom, ..., 2, 1 (jfrom < 8) over a[0..len)
 * (len a multiple of 8), in registers: each vector of 8 meets its own
 * permutation (lane t with lane t ^ j); lane t keeps the max when it is the
 * lower of its pair in a descending block, or the upper in an ascending one
 * (block direction: (index & dirbit) == 0 is descending). */
static inline void small_steps(uint64_t *a, size_t len, size_t jfrom, size_t dirbit)
{
    static const unsigned char lower[8] = {0, 0x55, 0x33, 0, 0x0F, 0, 0, 0};
    const __m512i iota = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
    const __m512i p4 = _mm512_xor_si512(iota, _mm512_set1_epi64(4));
    const __m512i p2 = _mm512_xor_si512(iota, _mm512_set1_epi64(2));
    const __m512i p1 = _mm512_xor_si512(iota, _mm512_set1_epi64(1));
    unsigned lane_desc = 0; /* lanes whose block is descending, for dirbit < 8 */
    for (unsigned t = 0; t < 8; t++)
        if ((t & dirbit) == 0)
            lane_desc |= 1u << t;
    for (size_t b = 0; b < len; b += 8) {
        unsigned desc = dirbit < 8 ? lane_desc : ((b & dirbit) == 0 ? 0xFFu : 0u);
        __m512i v = _mm512_loadu_si512(a + b);
        for (size_t j = jfrom; j >= 1; j /= 2) {
            __mmask8 takemax = (__mmask8)(~(lower[j] ^ desc) & 0xFF);
            __m512i p = _mm512_permutexvar_epi64(j == 4 ? p4 : j == 2 ? p2 : p1, v);
            v = _mm512_mask_blend_epi64(takemax, _mm512_min_epu64(v, p), _mm512_max_epu64(v, p));
        }
        _mm512_storeu_si512(a + b, v);
    }
}
#define ISA_W 8
#define ISA_SMALL_STEPS small_steps

#define ISA_SKIP32 skip32_v
#define ISA_SKIP64 skip64_v
#define ISA_SUFFIX avx512
#define ISA_NAME "avx512"
#include "isa_body.h"
