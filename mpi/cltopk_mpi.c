/* cltopk_mpi.c - top-k and selection over the ranks of an MPI communicator
 * (include/cltopk_mpi.h is the manual; docs/SCALE.md the cost model).
 *
 * Built on the public API of libcltopk only (cltopk_topk runs each rank's local
 * step) and on lib/order.h, the library's host-side transform of an element
 * into its order key, so that the merge and the narrowing compare exactly as
 * every algorithm of the library does.
 *
 * The merge: each rank turns its local top-min(k, local_n) into k records
 * (order key, global position, raw bits), padded with sentinels that come after
 * every real element, and one MPI_Reduce / MPI_Allreduce combines the lists
 * with merge_op, which keeps the k first of two sorted lists.  The whole list
 * is one element of a contiguous datatype (count 1), so MPI cannot cut it into
 * segments that the operation would merge separately.  The operation is
 * commutative: positions are unique, so the order is total and the k first of
 * a union do not depend on the order of the operands. */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cltopk_mpi.h"
#include "order.h"

typedef struct {
    uint64_t u;   /* order key: larger comes first */
    int64_t pos;  /* global position: smaller comes first among equal keys */
    uint64_t bits; /* the element, bit for bit */
} mpi_rec;

static int rec_better(const mpi_rec *a, const mpi_rec *b)
{
    return a->u > b->u || (a->u == b->u && a->pos < b->pos);
}

/* b = the k first of the sorted lists a and b (each k long), in place: count
 * how many of each the result takes, then merge those from the back, writing
 * the worse one last (b's taken prefix never moves before it is read). */
static void merge_lists(const mpi_rec *a, mpi_rec *b, size_t k)
{
    size_t i = 0, j = 0;
    while (i + j < k) {
        if (rec_better(&a[i], &b[j]))
            i++;
        else
            j++;
    }
    size_t w = k;
    while (i > 0) {
        if (j > 0 && rec_better(&a[i - 1], &b[j - 1]))
            b[--w] = b[--j];
        else
            b[--w] = a[--i];
    }
}

static void merge_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    MPI_Count size = 0;
    MPI_Type_size_x(*dt, &size);
    size_t k = (size_t)size / sizeof(mpi_rec);
    for (int l = 0; l < *len; l++)
        merge_lists((const mpi_rec *)in + (size_t)l * k, (mpi_rec *)inout + (size_t)l * k, k);
}

/* Element size and order kind of a type; 0 for an unknown type. */
static int type_bytes(cltopk_dtype type, int *kind)
{
    switch (type) {
    case CLTOPK_FLOAT32: *kind = KIND_FLOAT; return 4;
    case CLTOPK_FLOAT64: *kind = KIND_FLOAT; return 8;
    case CLTOPK_INT32: *kind = KIND_SIGNED; return 4;
    case CLTOPK_UINT32: *kind = KIND_UNSIGNED; return 4;
    case CLTOPK_INT64: *kind = KIND_SIGNED; return 8;
    case CLTOPK_UINT64: *kind = KIND_UNSIGNED; return 8;
    }
    *kind = 0;
    return 0;
}

static uint64_t raw_bits(const void *keys, size_t i, int bytes)
{
    if (bytes == 4) {
        uint32_t x;
        memcpy(&x, (const char *)keys + i * 4, 4);
        return x;
    }
    uint64_t x;
    memcpy(&x, (const char *)keys + i * 8, 8);
    return x;
}

static void put_bits(void *out, size_t i, int bytes, uint64_t bits)
{
    if (bytes == 4) {
        uint32_t x = (uint32_t)bits;
        memcpy((char *)out + i * 4, &x, 4);
    } else {
        memcpy((char *)out + i * 8, &bits, 8);
    }
}

static int64_t clamp64(uint64_t v)
{
    return v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v;
}

/* The first collective: every rank's status and the arguments that must agree.
 * Returns the status every rank then returns (the most negative one), or
 * CLTOPK_ERR_INVALID_ARGUMENT on every rank when the shared arguments differ. */
static int agree(MPI_Comm comm, int status, uint64_t count, int type, unsigned flags, int algo,
                 int root)
{
    int64_t v[11] = {status, clamp64(count), -clamp64(count), type, -(int64_t)type,
                     (int64_t)flags, -(int64_t)flags, algo, -(int64_t)algo, root, -(int64_t)root};
    int64_t m[11];
    if (MPI_Allreduce(v, m, 11, MPI_INT64_T, MPI_MIN, comm) != MPI_SUCCESS)
        return CLTOPK_ERR_INTERNAL;
    if (m[0] < 0)
        return (int)m[0];
    for (int i = 1; i < 11; i += 2)
        if (m[i] != -m[i + 1])
            return CLTOPK_ERR_INVALID_ARGUMENT;
    return CLTOPK_OK;
}

/* The status every rank returns after a local step: the most negative one. */
static int agree_status(MPI_Comm comm, int status)
{
    int all;
    if (MPI_Allreduce(&status, &all, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS)
        return CLTOPK_ERR_INTERNAL;
    return all;
}

/* The checks of type, flags and algo, by the library's own rules: a top-k of
 * k = 0 validates exactly those and writes nothing. */
static int check_local(cltopk_context *ctx, cltopk_dtype type, unsigned flags, cltopk_algo algo,
                       int *bytes, int *kind)
{
    if (!ctx)
        return CLTOPK_ERR_INVALID_ARGUMENT;
    int st = cltopk_topk(ctx, type, NULL, 0, 0, flags, algo, NULL, NULL);
    if (st != CLTOPK_OK)
        return st;
    *bytes = type_bytes(type, kind);
    return *bytes ? CLTOPK_OK : CLTOPK_ERR_BAD_TYPE;
}

/* The sum of local_n over all ranks, and over the ranks below this one. */
static int global_counts(MPI_Comm comm, uint64_t local_n, uint64_t *total, uint64_t *offset)
{
    int me;
    *offset = 0;
    if (MPI_Comm_rank(comm, &me) != MPI_SUCCESS ||
        MPI_Exscan(&local_n, offset, 1, MPI_UINT64_T, MPI_SUM, comm) != MPI_SUCCESS ||
        MPI_Allreduce(&local_n, total, 1, MPI_UINT64_T, MPI_SUM, comm) != MPI_SUCCESS)
        return CLTOPK_ERR_INTERNAL;
    if (me == 0)
        *offset = 0; /* MPI_Exscan leaves rank 0's result undefined */
    return CLTOPK_OK;
}

static int topk_common(cltopk_context *ctx, MPI_Comm comm, cltopk_dtype type,
                       const void *local_keys, size_t local_n, size_t k, unsigned flags,
                       cltopk_algo algo, int root, int all, void *out_keys, int64_t *out_index)
{
    if (comm == MPI_COMM_NULL)
        return CLTOPK_ERR_INVALID_ARGUMENT;
    int me, size;
    if (MPI_Comm_rank(comm, &me) != MPI_SUCCESS || MPI_Comm_size(comm, &size) != MPI_SUCCESS)
        return CLTOPK_ERR_INTERNAL;
    int bytes = 0, kind = 0;
    int st = check_local(ctx, type, flags, algo, &bytes, &kind);
    int receives = all || me == root;
    if (st == CLTOPK_OK && ((local_n > 0 && !local_keys) || root < 0 || root >= size ||
                            (k > 0 && receives && !out_keys && !out_index)))
        st = CLTOPK_ERR_INVALID_ARGUMENT;
    st = agree(comm, st, k, (int)type, flags, (int)algo, all ? 0 : root);
    if (st != CLTOPK_OK)
        return st;
    uint64_t total, offset;
    st = global_counts(comm, local_n, &total, &offset);
    if (st != CLTOPK_OK)
        return st;
    if (k > total)
        return CLTOPK_ERR_K_RANGE;
    if (k == 0)
        return CLTOPK_OK;
    if (k > (size_t)INT_MAX)
        return CLTOPK_ERR_UNSUPPORTED;

    /* the local step */
    size_t kk = k < local_n ? k : local_n;
    void *lkeys = malloc(kk ? kk * (size_t)bytes : 1);
    int64_t *lidx = malloc(kk ? kk * sizeof *lidx : 1);
    mpi_rec *send = malloc(k * sizeof *send);
    mpi_rec *recv = receives ? malloc(k * sizeof *recv) : NULL;
    st = (!lkeys || !lidx || !send || (receives && !recv)) ? CLTOPK_ERR_NO_MEMORY : CLTOPK_OK;
    if (st == CLTOPK_OK && kk > 0)
        st = cltopk_topk(ctx, type, local_keys, local_n, kk, flags, algo, lkeys, lidx);
    st = agree_status(comm, st);
    if (st == CLTOPK_OK) {
        int smallest = (flags & CLTOPK_SMALLEST) != 0;
        for (size_t i = 0; i < kk; i++) {
            send[i].u = order_key_at(lkeys, i, bytes, kind, smallest);
            send[i].pos = (int64_t)offset + lidx[i];
            send[i].bits = raw_bits(lkeys, i, bytes);
        }
        for (size_t i = kk; i < k; i++) {
            send[i].u = 0;
            send[i].pos = INT64_MAX;
            send[i].bits = 0;
        }
        /* the merge */
        MPI_Datatype rec3, list = MPI_DATATYPE_NULL;
        MPI_Op op;
        int rc = MPI_Type_contiguous(3, MPI_UINT64_T, &rec3);
        if (rc == MPI_SUCCESS) {
            rc = MPI_Type_contiguous((int)k, rec3, &list);
            MPI_Type_free(&rec3); /* list keeps what it needs */
        }
        if (rc == MPI_SUCCESS)
            rc = MPI_Type_commit(&list);
        if (rc == MPI_SUCCESS) {
            rc = MPI_Op_create(merge_op, 1, &op);
            if (rc == MPI_SUCCESS) {
                if (all)
                    rc = MPI_Allreduce(send, recv, 1, list, op, comm);
                else
                    rc = MPI_Reduce(send, recv, 1, list, op, root, comm);
                MPI_Op_free(&op);
            }
        }
        if (list != MPI_DATATYPE_NULL)
            MPI_Type_free(&list);
        st = rc == MPI_SUCCESS ? CLTOPK_OK : CLTOPK_ERR_INTERNAL;
        if (st == CLTOPK_OK && receives) {
            for (size_t i = 0; i < k; i++) {
                if (out_keys)
                    put_bits(out_keys, i, bytes, recv[i].bits);
                if (out_index)
                    out_index[i] = recv[i].pos;
            }
        }
    }
    free(lkeys);
    free(lidx);
    free(send);
    free(recv);
    return st;
}

CLTOPK_API int cltopk_mpi_topk(cltopk_context *ctx, MPI_Comm comm, cltopk_dtype type,
                               const void *local_keys, size_t local_n, size_t k, unsigned flags,
                               cltopk_algo algo, int root, void *out_keys, int64_t *out_index)
{
    return topk_common(ctx, comm, type, local_keys, local_n, k, flags, algo, root, 0, out_keys,
                       out_index);
}

CLTOPK_API int cltopk_mpi_topk_all(cltopk_context *ctx, MPI_Comm comm, cltopk_dtype type,
                                   const void *local_keys, size_t local_n, size_t k,
                                   unsigned flags, cltopk_algo algo, void *out_keys,
                                   int64_t *out_index)
{
    return topk_common(ctx, comm, type, local_keys, local_n, k, flags, algo, 0, 1, out_keys,
                       out_index);
}

/* One round of the narrowing: the counts of the next 8-bit digit of the order
 * keys that share the prefix chosen so far. */
static void digit_counts(const void *keys, size_t n, int bytes, int kind, int smallest,
                         uint64_t prefix, uint64_t mask, int shift, uint64_t *hist)
{
    memset(hist, 0, 256 * sizeof *hist);
#pragma omp parallel
    {
        uint64_t h[256] = {0};
#pragma omp for schedule(static)
        for (size_t j = 0; j < n; j++) {
            uint64_t u = order_key_at(keys, j, bytes, kind, smallest);
            if ((u & mask) == prefix)
                h[(u >> shift) & 255]++;
        }
#pragma omp critical
        for (int d = 0; d < 256; d++)
            hist[d] += h[d];
    }
}

CLTOPK_API int cltopk_mpi_select(cltopk_context *ctx, MPI_Comm comm, cltopk_dtype type,
                                 const void *local_keys, size_t local_n, uint64_t rank,
                                 unsigned flags, void *out_key, int64_t *out_index)
{
    if (comm == MPI_COMM_NULL)
        return CLTOPK_ERR_INVALID_ARGUMENT;
    int bytes = 0, kind = 0;
    int st = check_local(ctx, type, flags, CLTOPK_ALGO_AUTO, &bytes, &kind);
    if (st == CLTOPK_OK && ((local_n > 0 && !local_keys) || (!out_key && !out_index)))
        st = CLTOPK_ERR_INVALID_ARGUMENT;
    st = agree(comm, st, rank, (int)type, flags, 0, 0);
    if (st != CLTOPK_OK)
        return st;
    uint64_t total;
    if (MPI_Allreduce(&(uint64_t){local_n}, &total, 1, MPI_UINT64_T, MPI_SUM, comm) !=
        MPI_SUCCESS)
        return CLTOPK_ERR_INTERNAL;
    if (rank >= total)
        return CLTOPK_ERR_RANK_RANGE;

    /* the order key of the answer, 8 bits a round from the top; r becomes the
     * answer's rank among the elements of its order key */
    int smallest = (flags & CLTOPK_SMALLEST) != 0;
    uint64_t prefix = 0, mask = 0, r = rank;
    uint64_t hist[256], sum[256];
    for (int shift = 8 * bytes - 8; shift >= 0; shift -= 8) {
        digit_counts(local_keys, local_n, bytes, kind, smallest, prefix, mask, shift, hist);
        if (MPI_Allreduce(hist, sum, 256, MPI_UINT64_T, MPI_SUM, comm) != MPI_SUCCESS)
            return CLTOPK_ERR_INTERNAL;
        int d = 255;
        while (r >= sum[d]) { /* the digits of larger keys come first */
            r -= sum[d];
            d--;
        }
        prefix |= (uint64_t)d << shift;
        mask |= (uint64_t)255 << shift;
    }

    /* equal keys by global position: the rank holding the r-th of them */
    uint64_t mine[2] = {local_n, 0}, below[2] = {0, 0};
    for (size_t j = 0; j < local_n; j++)
        mine[1] += order_key_at(local_keys, j, bytes, kind, smallest) == prefix;
    int me;
    if (MPI_Comm_rank(comm, &me) != MPI_SUCCESS ||
        MPI_Exscan(mine, below, 2, MPI_UINT64_T, MPI_SUM, comm) != MPI_SUCCESS)
        return CLTOPK_ERR_INTERNAL;
    if (me == 0)
        below[0] = below[1] = 0;
    uint64_t found[2] = {0, 0}, answer[2]; /* position + 1, bits */
    if (r >= below[1] && r < below[1] + mine[1]) {
        uint64_t left = r - below[1];
        for (size_t j = 0; j < local_n; j++) {
            if (order_key_at(local_keys, j, bytes, kind, smallest) != prefix)
                continue;
            if (left-- == 0) {
                found[0] = below[0] + j + 1;
                found[1] = raw_bits(local_keys, j, bytes);
                break;
            }
        }
    }
    if (MPI_Allreduce(found, answer, 2, MPI_UINT64_T, MPI_MAX, comm) != MPI_SUCCESS)
        return CLTOPK_ERR_INTERNAL;
    if (answer[0] == 0)
        return CLTOPK_ERR_INTERNAL; /* no rank held it: cannot happen */
    if (out_key)
        put_bits(out_key, 0, bytes, answer[1]);
    if (out_index)
        *out_index = (int64_t)(answer[0] - 1);
    return CLTOPK_OK;
}
