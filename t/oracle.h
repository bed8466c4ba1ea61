/* oracle.h - the tests' reference answer, written independently of the library.
 *
 * A plain stable merge sort of the positions 0..n-1, compared on the typed
 * values (float, double, int32_t, ...) with the rules of THE ORDER spelled out
 * directly (isnan, ==, <), not through the library's lib/order.h key transform.
 * Never optimized: it is meant to be obviously right. */
#ifndef CLTOPK_T_ORACLE_H
#define CLTOPK_T_ORACLE_H

#include <stddef.h>
#include <stdint.h>

#include "cltopk.h"

/* Compare elements a and b (pointers to one element of `type` each) in the
 * ascending total order: NaN (any sign or payload) above +inf and equal to every
 * NaN, -0.0 == +0.0.  Returns -1, 0 or 1. */
int oracle_cmp(cltopk_dtype type, const void *a, const void *b);

/* 1 when element a comes strictly before element b in direction `smallest`
 * (0: descending, 1: ascending), by value alone. */
int oracle_before(cltopk_dtype type, const void *a, const void *b, int smallest);

/* The positions of keys[0..n) in output order (a stable sort: equal values keep
 * increasing positions).  Returns a malloc'ed array of n entries (the caller
 * frees it), never NULL (bails out of the test program on allocation failure). */
int64_t *oracle_order(cltopk_dtype type, const void *keys, size_t n, int smallest);

/* The first k entries of that order: keys (raw bits, copied from the input) and
 * positions.  Either output may be NULL.  perm may be NULL (then computed). */
void oracle_topk(cltopk_dtype type, const void *keys, size_t n, size_t k, int smallest,
                 const int64_t *perm, void *out_keys, int64_t *out_index);

/* The entry at position rank of the order. */
void oracle_select(cltopk_dtype type, const void *keys, size_t n, size_t rank, int smallest,
                   const int64_t *perm, void *out_key, int64_t *out_index);

/* A second, slower formulation: the position of element i in the output order,
 * counted directly (how many elements come before it).  O(n). */
size_t oracle_rank_of(cltopk_dtype type, const void *keys, size_t n, size_t i, int smallest);

#endif
