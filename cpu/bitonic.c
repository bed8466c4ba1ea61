/* bitonic.c - the paper's CPU bitonic top-k (Appendix C, Algorithm 5).
 *
 * Every thread takes an equal partition of the input and reads it one vector of
 * V = max(2048, 16 kk) items at a time (kk = k rounded up to a power of two, at
 * least 16), small enough to stay in L1.  Each vector goes through the bitonic
 * network of the per-ISA kernel (isa.h, bitonic16: local sort into runs of kk,
 * then four times merge + rebuild), which keeps 1/16 of it: the best kk of every
 * 16 kk.  The outputs are appended to a buffer; while that buffer holds a whole
 * vector or more, it is reduced again the same way (its runs are already
 * sorted, so the local sort is skipped) into the other buffer.  What is left is
 * sorted and the best kk kept: the thread's top kk.  The threads' results are
 * then merged (sorted together) and the first k taken.
 *
 * Items: for 32-bit keys the network sorts 64-bit composites (order key << 32 |
 * ~(position in the partition)), so ties go to the smaller index inside the
 * network itself and the result needs no second pass.  For 64-bit keys there is
 * no room for the position: the network reduces the order keys alone, which
 * yields the k-th key T exactly, and one more pass over the input collects the
 * entries above T and the first ties (cltopk_cpu_collect_topk).  Padding is the
 * item 0, below every real composite (a position is never all ones) and no
 * larger than any 64-bit key, so it never displaces a real item. */
#include "internal.h"
#include "isa.h"

#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

static int cmp_u64_desc(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x > y ? -1 : x < y;
}

static void fill_keys64(const cltopk_request *rq, const uint64_t *x, size_t n, uint64_t *out)
{
    for (size_t j = 0; j < n; j++)
        out[j] = order_key64(cpu_ld64(x, j), rq->kind, rq->smallest);
}

/* The top kk items of keys[lo, hi) into res (sorted, best first); returns how
 * many (min(kk, hi - lo) for composites, kk for 64-bit keys, padding included).
 * vec holds V items, buf two buffers of cap items each. */
static size_t part_topk(const cpu_isa_ops *ops, const cltopk_request *rq, const void *keys,
                        size_t lo, size_t hi, size_t kk, size_t V, uint64_t *vec,
                        uint64_t *buf[2], uint64_t *res)
{
    int comp = rq->bytes == 4;
    size_t pos = 0;
    for (size_t c = lo; c < hi; c += V) {
        size_t len = hi - c < V ? hi - c : V;
        if (comp)
            ops->composite32((const uint32_t *)keys + c, len, rq->kind, rq->smallest,
                             (uint32_t)(c - lo), vec);
        else
            fill_keys64(rq, (const uint64_t *)keys + c, len, vec);
        memset(vec + len, 0, (V - len) * sizeof *vec);
        ops->bitonic16(vec, V, kk, 0, buf[0] + pos);
        pos += V / 16;
    }
    int cur = 0;
    while (pos >= V) {
        size_t np = 0;
        for (size_t c = 0; c < pos; c += V) {
            size_t len = pos - c < V ? pos - c : V;
            uint64_t *src = buf[cur] + c;
            if (len < V) {
                memcpy(vec, src, len * sizeof *vec);
                memset(vec + len, 0, (V - len) * sizeof *vec);
                src = vec;
            }
            ops->bitonic16(src, V, kk, 1, buf[1 - cur] + np);
            np += V / 16;
        }
        cur = 1 - cur;
        pos = np;
    }
    qsort(buf[cur], pos, sizeof *buf[cur], cmp_u64_desc);
    size_t m = pos < kk ? pos : kk;
    if (comp && m > hi - lo)
        m = hi - lo;
    memcpy(res, buf[cur], m * sizeof *res);
    return m;
}

int cltopk_cpu_bitonic_topk(const cltopk_request *rq, const void *keys, size_t n, size_t k,
                            void *out_keys, int64_t *out_index)
{
    if (k == 0)
        return CLTOPK_OK;
    const cpu_isa_ops *ops = cltopk_cpu_ops();
    size_t kk = 16;
    while (kk < k)
        kk *= 2;
    size_t V = 16 * kk > 2048 ? 16 * kk : 2048;
    int nt = cltopk_cpu_threads();
    size_t maxt = n / 65536 ? n / 65536 : 1;
    if ((size_t)nt > maxt)
        nt = (int)maxt;
    if (nt < 1)
        nt = 1;
    /* partitions: one a thread, more when a partition would not fit the 32-bit
     * positions of the composites */
    size_t parts = (size_t)nt;
    while ((n + parts - 1) / parts >= 0xFFFFFFF0u)
        parts += (size_t)nt;
    size_t part = (n + parts - 1) / parts;
    /* buffer: the first phase writes part / V * V/16 (+ one vector) items */
    size_t cap = (part + V - 1) / V * (V / 16) + V;
    uint64_t *res = malloc(parts * kk * sizeof *res);
    size_t *cnt = calloc(parts, sizeof *cnt);
    int fail = !res || !cnt;
    if (!fail) {
#ifdef _OPENMP
#pragma omp parallel num_threads(nt) if (nt > 1)
#endif
        {
            uint64_t *vec = malloc(V * sizeof *vec);
            uint64_t *b0 = malloc(2 * cap * sizeof *b0);
            uint64_t *buf[2] = {b0, b0 ? b0 + cap : NULL};
            int ok = vec && b0;
#ifdef _OPENMP
#pragma omp for schedule(static, 1)
#endif
            for (size_t p = 0; p < parts; p++) {
                size_t lo = p * part < n ? p * part : n, hi = lo + part < n ? lo + part : n;
                if (!ok) {
                    cnt[p] = (size_t)-1;
                    continue;
                }
                cnt[p] = hi > lo ? part_topk(ops, rq, keys, lo, hi, kk, V, vec, buf,
                                             res + p * kk)
                                 : 0;
            }
            free(vec);
            free(b0);
        }
        for (size_t p = 0; p < parts; p++)
            if (cnt[p] == (size_t)-1)
                fail = 1;
    }
    if (fail) {
        free(res);
        free(cnt);
        return CLTOPK_ERR_NO_MEMORY;
    }
    int st = CLTOPK_OK;
    if (rq->bytes == 4) {
        /* composites to (key, global index) pairs; merge by sorting */
        size_t total = 0;
        for (size_t p = 0; p < parts; p++)
            total += cnt[p];
        okey_pair *all = malloc(total * sizeof *all);
        if (!all) {
            st = CLTOPK_ERR_NO_MEMORY;
        } else {
            size_t w = 0;
            for (size_t p = 0; p < parts; p++)
                for (size_t j = 0; j < cnt[p]; j++) {
                    uint64_t c = res[p * kk + j];
                    all[w].u = c >> 32;
                    all[w++].i = (int64_t)(p * part + (uint32_t)~(uint32_t)c);
                }
            cltopk_sort_pairs(all, total);
            for (size_t j = 0; j < k; j++) {
                if (out_keys)
                    memcpy((char *)out_keys + j * 4, (const char *)keys + (size_t)all[j].i * 4,
                           4);
                if (out_index)
                    out_index[j] = all[j].i;
            }
            free(all);
        }
    } else {
        /* 64-bit keys: the k-th key of the union, then one collecting pass */
        size_t total = 0;
        for (size_t p = 0; p < parts; p++) {
            memmove(res + total, res + p * kk, cnt[p] * sizeof *res);
            total += cnt[p];
        }
        qsort(res, total, sizeof *res, cmp_u64_desc);
        st = cltopk_cpu_collect_topk(rq, keys, n, k, res[k - 1], out_keys, out_index);
    }
    free(res);
    free(cnt);
    return st;
}
