/* gen.h - test and benchmark data: the distributions of `cltopk gen`, shared by
 * the command, the benchmarks and the tests.  Deterministic for a given seed. */
#ifndef CLTOPK_GEN_H
#define CLTOPK_GEN_H

#include <stddef.h>
#include <stdint.h>

#include "cltopk.h"

/* Distributions:
 *   uniform        floats U(0,1); integers uniform over the whole type
 *   normal         floats N(0,1); integers rounded N(0, 2^20) (unsigned types:
 *                  centred on 2^(bits-1) to stay in range)
 *   increasing     sorted ascending (uniform values, sorted)
 *   decreasing     sorted descending
 *   equal          every element the same value
 *   few            few distinct values (8), shuffled
 *   bucket-killer  all one value except a few that differ from it in one digit
 *                  each (the worst case of radix selection): the bits of 1.0f
 *                  (1.0 for 64-bit types) everywhere except 4 (8) elements,
 *                  each that value plus one in one byte
 *   special        floats: NaN (several payloads, both signs), +-inf, +-0,
 *                  denormals, +-max, mixed with uniform values; integers: the
 *                  type's min and max, 0, +-1, mixed with uniform values
 * The columns of a tweet-like table (gen_table_dists; integers, floats get the
 * same values): powerlaw (counts: a long tail, many ties), timestamps (seconds
 * of May 2017), codes (0 40%, 1 20%, 2 .. 9 5% each: a language).
 * Returns 0, or -1 for an unknown distribution or type (nothing written). */
extern const char *const gen_table_dists[];
int gen_fill(cltopk_dtype type, const char *dist, size_t n, uint64_t seed, void *out);

/* The raw bits of element i of an array of 4- or 8-byte elements, widened. */
uint64_t gen_bits(const void *a, size_t bytes, size_t i);

/* NULL-terminated list of the distribution names above. */
extern const char *const gen_dists[];

/* The index of dist in a NULL-terminated list of names (gen_dists,
 * gen_table_dists, gen_tuple_dists, gen_point_dists), or -1. */
int gen_dist_index(const char *const *list, const char *dist);

/* Tuples for the early-stopping index: n tuples of d attributes (1 to 64) in
 * [0, 1), written column after column (attribute j of tuple t at out[j * n +
 * t]), from the standard skyline generator (Borzsonyi et al., ICDE 2001):
 *   correlated      near the diagonal: good in one attribute, good in all
 *   independent     uniform in each attribute
 *   anticorrelated  near the plane where the attributes sum to d/2: good in
 *                   one, bad in others
 * Returns 0, or -1 for an unknown distribution or d (nothing written). */
extern const char *const gen_tuple_dists[];
int gen_tuples(const char *dist, size_t n, size_t d, uint64_t seed, float *out);

/* Points for kNN (`cltopk knn`, `cltopk bench --knn`): n points of d float32
 * coordinates (1 to 65536), row-major (coordinate j of point t at out[t * d +
 * j]), from
 *   uniform    U(0,1) in every coordinate
 *   normal     N(0,1) in every coordinate
 *   clustered  around 64 centres drawn U(0,1)^d, N(0, 0.02^2) a coordinate;
 *              the centres depend on d alone, so queries drawn with another
 *              seed fall in the points' clusters
 * Returns 0, or -1 for an unknown distribution or d, or no memory (nothing
 * written). */
extern const char *const gen_point_dists[];
int gen_points(const char *dist, size_t n, size_t d, uint64_t seed, float *out);

#endif
