/* select.c - merging of sorted lists, and the host read floor.  (The CPU
 * selection, cltopk_cpu_select, is in radix.c.) */
#include "internal.h"
#include "isa.h"

#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

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
    int nt = cltopk_cpu_threads(); /* as many threads as the CPU algorithms use */
    for (int r = -1; r < reps; r++) {
        double t0 = cltopk_now();
        uint64_t m = 0;
#ifdef _OPENMP
#pragma omp parallel for simd reduction(| : m) schedule(static) num_threads(nt) \
    if (nw >= 65536 && nt > 1)
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
