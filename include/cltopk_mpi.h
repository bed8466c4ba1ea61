/*
 * cltopk_mpi.h - top-k and k-th element over the ranks of an MPI communicator
 * (libcltopk_mpi, built by `configure --with-mpi`; pkg-config: cltopk_mpi).
 *
 * This header is the manual of the MPI layer; cltopk.h is the manual of the
 * library below it, whose contexts, types, flags, algorithms and status codes
 * these calls take and return.
 *
 * THE INPUT
 *   A collective call sees one array: the concatenation, in rank order of comm,
 *   of every rank's local_keys.  The global position of local element j on rank
 *   r is (local_n of ranks 0 .. r - 1, summed) + j.  Ranks may hold no data
 *   (local_n = 0, local_keys may then be NULL).
 *
 * THE ORDER
 *   Exactly THE ORDER of cltopk.h over that array: largest first unless
 *   CLTOPK_SMALLEST; floats with -0.0 == +0.0, every NaN equal to every NaN
 *   and above +inf; equal keys by smaller global position first.  out_index[i]
 *   is the global position of the i-th entry and out_keys[i] the input element
 *   there, bit for bit.  The answer is the one cltopk_topk / cltopk_select gives
 *   on the concatenated array, whatever the number of ranks.
 *
 * COLLECTIVE CALLS AND STATUS CODES
 *   Every rank of comm calls the same function with the same type, k (or rank),
 *   flags, algo and root; the data, local_n and the outputs are per rank.
 *   Statuses are those of cltopk.h, and they are collective: when an argument
 *   is bad on one rank, or the local step fails on one rank, every rank returns
 *   an error status, the same one on every rank (the most negative of the
 *   ranks' statuses), and no rank is left waiting.  Arguments that differ
 *   between ranks where they must agree (type, k, rank, flags, algo, root) are
 *   CLTOPK_ERR_INVALID_ARGUMENT on every rank.  A failed call writes nothing to
 *   its outputs.  cltopk_last_error(ctx) holds a detail text only on a rank
 *   whose own local step failed.  The one error that cannot be collective:
 *   comm == MPI_COMM_NULL returns CLTOPK_ERR_INVALID_ARGUMENT at once.  An MPI
 *   call that fails (with an error handler that returns) gives
 *   CLTOPK_ERR_INTERNAL.
 *
 * THREADS AND MPI
 *   MPI must be initialized (MPI_Init or MPI_Init_thread) and not finalized.
 *   As with any MPI collective, the calls on one communicator must be made in
 *   the same order on every rank.  Calls from several threads at once need
 *   MPI_THREAD_MULTIPLE and distinct communicators; the calls keep no global
 *   state (each creates and frees its own MPI datatype and operation).  The
 *   context rules of cltopk.h apply to ctx (one context per rank, typically).
 *
 * HOW (costs in docs/SCALE.md)
 *   cltopk_mpi_topk: each rank runs cltopk_topk of min(k, local_n) on its ctx,
 *   then one MPI_Reduce (MPI_Allreduce for _all) of k (key, position) records
 *   with a merging operation: ceil(log2 P) rounds of k-record messages in
 *   Open MPI's tree algorithms.  cltopk_mpi_select: a radix narrowing of the
 *   order keys on the host, 8 bits a round (4 rounds for 4-byte types, 8 for
 *   8-byte types), each an MPI_Allreduce of 256 counts, then one MPI_Exscan
 *   among the keys equal to the answer's: the data never moves.
 */
#ifndef CLTOPK_MPI_H
#define CLTOPK_MPI_H

#include <mpi.h>

#include "cltopk.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The k first entries of THE ORDER over every rank's data, on rank `root`.
 *   ctx         this rank's context (cltopk_open); its device runs the local
 *               top-k.  Must not be NULL on any rank.
 *   comm        the communicator; every rank of it must call
 *   type        element type of local_keys and out_keys (same on every rank)
 *   local_keys  local_n elements in host memory (NULL allowed if local_n == 0)
 *   k           0 <= k <= the total n and k <= INT_MAX (same on every rank);
 *               k > total n is CLTOPK_ERR_K_RANGE on every rank, as cltopk_topk
 *               gives for k > n; k > INT_MAX is CLTOPK_ERR_UNSUPPORTED.
 *               k == 0 succeeds and writes nothing.
 *   flags       CLTOPK_LARGEST or CLTOPK_SMALLEST (same on every rank)
 *   algo        the local top-k's algorithm, as for cltopk_topk (AUTO lets
 *               each rank's planner choose); an algorithm that cannot do one
 *               rank's local call fails the call on every rank
 *   root        the rank that receives the answer, 0 <= root < size (same on
 *               every rank)
 *   out_keys    on root: k elements of `type`, or NULL; ignored elsewhere
 *   out_index   on root: k int64 global positions, or NULL (not both NULL on
 *               root); ignored elsewhere
 * Memory: the call allocates about 64 * k bytes on every rank (plus the
 * local top-k's own), freed before it returns; the caller keeps every buffer.
 * Returns CLTOPK_OK or, on every rank alike, CLTOPK_ERR_INVALID_ARGUMENT,
 * CLTOPK_ERR_BAD_TYPE, CLTOPK_ERR_BAD_FLAGS, CLTOPK_ERR_BAD_ALGO,
 * CLTOPK_ERR_K_RANGE, CLTOPK_ERR_UNSUPPORTED, CLTOPK_ERR_NO_MEMORY,
 * CLTOPK_ERR_INTERNAL, or a status of the local cltopk_topk
 * (CLTOPK_ERR_OPENCL, CLTOPK_ERR_BUILD, CLTOPK_ERR_DEVICE_MEMORY, ...). */
CLTOPK_API int cltopk_mpi_topk(cltopk_context *ctx, MPI_Comm comm, cltopk_dtype type,
                               const void *local_keys, size_t local_n, size_t k, unsigned flags,
                               cltopk_algo algo, int root, void *out_keys, int64_t *out_index);

/* As cltopk_mpi_topk, with the answer on every rank: out_keys and out_index
 * (k elements each, not both NULL) are written on every rank. */
CLTOPK_API int cltopk_mpi_topk_all(cltopk_context *ctx, MPI_Comm comm, cltopk_dtype type,
                                   const void *local_keys, size_t local_n, size_t k,
                                   unsigned flags, cltopk_algo algo, void *out_keys,
                                   int64_t *out_index);

/* The entry at 0-based position `rank` of THE ORDER over every rank's data
 * (rank 0 = the first of the top-k), on every rank.
 *   ctx         this rank's context: it checks the type and flags (the
 *               narrowing runs on the host, OpenMP threads counting); not NULL
 *   rank        0 <= rank < the total n (same on every rank), else
 *               CLTOPK_ERR_RANK_RANGE on every rank
 *   out_key     one element of `type`, or NULL
 *   out_index   one int64 global position, or NULL (not both NULL, on every rank)
 * Memory: a few KiB, no copy of the data.
 * Returns CLTOPK_OK or, on every rank alike, CLTOPK_ERR_INVALID_ARGUMENT,
 * CLTOPK_ERR_BAD_TYPE, CLTOPK_ERR_BAD_FLAGS, CLTOPK_ERR_RANK_RANGE,
 * CLTOPK_ERR_INTERNAL. */
CLTOPK_API int cltopk_mpi_select(cltopk_context *ctx, MPI_Comm comm, cltopk_dtype type,
                                 const void *local_keys, size_t local_n, uint64_t rank,
                                 unsigned flags, void *out_key, int64_t *out_index);

#ifdef __cplusplus
}
#endif

#endif
