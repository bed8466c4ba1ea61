/* select.c - CPU selection by radix, merging of sorted lists, and the host read
 * floor.
 *
 * Selection needs no copy of the input: an MSD radix pass over the order keys
 * (8-bit digits, OpenMP histograms) narrows the key of the entry at `rank`, one
 * digit a pass; then the entries with exactly that key are counted in index
 * order to find the one at the right position among its ties. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

int cltopk_cpu_select(const cltopk_request *rq, size_t rank, void *out_key, int64_t *out_index)
{
    const void *keys = rq->keys;
    size_t n = rq->n;
    int bits = rq->bytes * 8;
    uint64_t prefix = 0, mask = 0; /* the digits fixed so far */
    size_t before = 0;             /* entries whose key is larger than the prefix */
    size_t r = rank;               /* rank among the entries matching the prefix */
    for (int shift = bits - 8; shift >= 0; shift -= 8) {
        uint64_t hist[256] = {0};
#ifdef _OPENMP
#pragma omp parallel if (n >= 65536)
#endif
        {
            uint64_t local[256] = {0};
#ifdef _OPENMP
#pragma omp for schedule(static)
#endif
            for (size_t i = 0; i < n; i++) {
                uint64_t u = order_key_at(keys, i, rq->bytes, rq->kind, rq->smallest);
                if ((u & mask) == prefix)
                    local[(u >> shift) & 255]++;
            }
#ifdef _OPENMP
#pragma omp critical
#endif
            for (int d = 0; d < 256; d++)
                hist[d] += local[d];
        }
        /* larger digits come first */
        int d = 255;
        for (; d > 0; d--) {
            if (r < hist[d])
                break;
            r -= hist[d];
            before += hist[d];
        }
        prefix |= (uint64_t)d << shift;
        mask |= (uint64_t)255 << shift;
    }
    (void)before;
    /* the key is `prefix`; find the r-th (0-based) entry holding it, by index */
    size_t found = (size_t)-1;
    for (size_t i = 0; i < n; i++) {
        if (order_key_at(keys, i, rq->bytes, rq->kind, rq->smallest) == prefix) {
            if (r == 0) {
                found = i;
                break;
            }
            r--;
        }
    }
    if (found == (size_t)-1)
        return CLTOPK_ERR_INTERNAL;
    if (out_key)
        memcpy(out_key, (const char *)keys + found * (size_t)rq->bytes, (size_t)rq->bytes);
    if (out_index)
        *out_index = (int64_t)found;
    return CLTOPK_OK;
}

void cltopk_merge_lists(const cltopk_request *rq, const void *ak, const int64_t *ai, size_t an,
                        const void *bk, const int64_t *bi, size_t bn, size_t k, void *ok,
                        int64_t *oi)
{
    size_t a = 0, b = 0, w = (size_t)rq->bytes;
    for (size_t j = 0; j < k && (a < an || b < bn); j++) {
        int take_a;
        if (a >= an) {
            take_a = 0;
        } else if (b >= bn) {
            take_a = 1;
        } else {
            okey_pair pa = {order_key_at(ak, a, rq->bytes, rq->kind, rq->smallest), ai[a]};
            okey_pair pb = {order_key_at(bk, b, rq->bytes, rq->kind, rq->smallest), bi[b]};
            take_a = pair_better(&pa, &pb);
        }
        if (take_a) {
            memcpy((char *)ok + j * w, (const char *)ak + a * w, w);
            oi[j] = ai[a++];
        } else {
            memcpy((char *)ok + j * w, (const char *)bk + b * w, w);
            oi[j] = bi[b++];
        }
    }
}

/* One read of the array: an OR over 64-bit words, which every x86-64 and Arm
 * vectorises (an unsigned 32-bit max needs SSE4.1 and was 4x slower here). */
double cltopk_cpu_read_time(const void *data, size_t bytes, int reps)
{
    const uint64_t *w = data;
    size_t nw = bytes / 8;
    double t[64];
    if (reps > 64)
        reps = 64;
    if (reps < 1)
        reps = 1;
    volatile uint64_t sink = 0;
    for (int r = -1; r < reps; r++) {
        double t0 = cltopk_now();
        uint64_t m = 0;
#ifdef _OPENMP
#pragma omp parallel for simd reduction(| : m) schedule(static) if (nw >= 65536)
#endif
        for (size_t i = 0; i < nw; i++)
            m |= w[i];
        sink = m;
        if (r >= 0)
            t[r] = cltopk_now() - t0;
    }
    (void)sink;
    return cltopk_median(t, reps);
}
