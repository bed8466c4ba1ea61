/* order.h - THE ORDER of cltopk.h as an order-preserving unsigned key (host side).
 *
 * order_key32/64(bits, kind, smallest) maps the raw bits of one element to an
 * unsigned integer u such that "a comes before b" in the requested order exactly
 * when u(a) > u(b), or u(a) == u(b) and index(a) < index(b).  Every CPU algorithm
 * sorts these keys; cl/common.cl holds the same transform for the device.
 *   kind 0 unsigned: u = x
 *   kind 1 signed:   u = x ^ signbit
 *   kind 2 float:    every NaN -> all ones (above +inf), -0 -> +0, then
 *                    negative: ~x, non-negative: x | signbit
 *   smallest:        u = ~u (the worst of "largest" becomes the best)
 * The sentinel (u = 0, index = all ones) never comes before a real element. */
#ifndef CLTOPK_ORDER_H
#define CLTOPK_ORDER_H

#include <stdint.h>
#include <string.h>

enum { KIND_UNSIGNED = 0, KIND_SIGNED = 1, KIND_FLOAT = 2 };

static inline uint32_t order_key32(uint32_t x, int kind, int smallest)
{
    uint32_t u;
    if (kind == KIND_UNSIGNED) {
        u = x;
    } else if (kind == KIND_SIGNED) {
        u = x ^ 0x80000000u;
    } else if ((x & 0x7FFFFFFFu) > 0x7F800000u) {
        u = 0xFFFFFFFFu;
    } else {
        if (x == 0x80000000u)
            x = 0;
        u = (x & 0x80000000u) ? ~x : (x | 0x80000000u);
    }
    return smallest ? ~u : u;
}

static inline uint64_t order_key64(uint64_t x, int kind, int smallest)
{
    const uint64_t sign = 0x8000000000000000ull;
    uint64_t u;
    if (kind == KIND_UNSIGNED) {
        u = x;
    } else if (kind == KIND_SIGNED) {
        u = x ^ sign;
    } else if ((x & ~sign) > 0x7FF0000000000000ull) {
        u = ~0ull;
    } else {
        if (x == sign)
            x = 0;
        u = (x & sign) ? ~x : (x | sign);
    }
    return smallest ? ~u : u;
}

/* The order key of element i of an array of 4- or 8-byte elements, widened to 64
 * bits (32-bit keys keep their order when widened). */
static inline uint64_t order_key_at(const void *keys, size_t i, int bytes, int kind,
                                    int smallest)
{
    if (bytes == 4) {
        uint32_t x;
        memcpy(&x, (const char *)keys + i * 4, 4);
        return order_key32(x, kind, smallest);
    }
    uint64_t x;
    memcpy(&x, (const char *)keys + i * 8, 8);
    return order_key64(x, kind, smallest);
}

/* An (order key, index) pair; "better" = comes first in the output. */
typedef struct {
    uint64_t u;
    int64_t i;
} okey_pair;

static inline int pair_better(const okey_pair *a, const okey_pair *b)
{
    return a->u > b->u || (a->u == b->u && a->i < b->i);
}

#endif
