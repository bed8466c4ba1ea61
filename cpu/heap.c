/* heap.c - CPU top-k with OpenMP per-thread heaps, merged at the end.
 *
 * Each thread scans a contiguous range in index order with a heap of its best
 * min(k, range) pairs whose root is the worst.  A later element with an equal key
 * has a larger index, so only a strictly larger key replaces the root: ties are
 * exact.  The heaps are then sorted together and the first k taken. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* root = the worst pair */
static inline int worse(const okey_pair *a, const okey_pair *b)
{
    return pair_better(b, a);
}

static void sift_down(okey_pair *h, size_t n, size_t i)
{
    okey_pair x = h[i];
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && worse(&h[c + 1], &h[c]))
            c++;
        if (!worse(&h[c], &x))
            break;
        h[i] = h[c];
        i = c;
    }
    h[i] = x;
}

/* One thread's range [lo, hi): fills h (size min(k, hi - lo)), returns its size.
 * Instantiated per width and kind so the key transform is resolved at compile
 * time inside the hot loop. */
static inline size_t scan_range(const void *keys, size_t lo, size_t hi, size_t k, int bytes,
                                int kind, int smallest, okey_pair *h)
{
    size_t hn = hi - lo < k ? hi - lo : k;
    size_t i = lo;
    for (size_t j = 0; j < hn; j++, i++) {
        h[j].u = order_key_at(keys, i, bytes, kind, smallest);
        h[j].i = (int64_t)i;
    }
    if (hn == 0)
        return 0;
    for (size_t j = hn / 2; j-- > 0;)
        sift_down(h, hn, j);
    uint64_t root = h[0].u;
    for (; i < hi; i++) {
        uint64_t u = order_key_at(keys, i, bytes, kind, smallest);
        if (u > root) {
            h[0].u = u;
            h[0].i = (int64_t)i;
            sift_down(h, hn, 0);
            root = h[0].u;
        }
    }
    return hn;
}

#define SCAN_CASE(B, K, S) \
    case ((B) * 100 + (K) * 10 + (S)): return scan_range(keys, lo, hi, k, B, K, S, h)

static size_t scan_dispatch(const cltopk_request *rq, const void *keys, size_t lo, size_t hi,
                            size_t k, okey_pair *h)
{
    switch (rq->bytes * 100 + rq->kind * 10 + rq->smallest) {
    SCAN_CASE(4, 0, 0); SCAN_CASE(4, 0, 1); SCAN_CASE(4, 1, 0); SCAN_CASE(4, 1, 1);
    SCAN_CASE(4, 2, 0); SCAN_CASE(4, 2, 1); SCAN_CASE(8, 0, 0); SCAN_CASE(8, 0, 1);
    SCAN_CASE(8, 1, 0); SCAN_CASE(8, 1, 1); SCAN_CASE(8, 2, 0); SCAN_CASE(8, 2, 1);
    default: return scan_range(keys, lo, hi, k, rq->bytes, rq->kind, rq->smallest, h);
    }
}

static int cmp_pairs(const void *a, const void *b)
{
    const okey_pair *x = a, *y = b;
    if (pair_better(x, y))
        return -1;
    return pair_better(y, x) ? 1 : 0;
}

void cltopk_sort_pairs(okey_pair *p, size_t n)
{
    qsort(p, n, sizeof *p, cmp_pairs);
}

int cltopk_cpu_heap_topk(const cltopk_request *rq, const void *keys, size_t n, size_t k,
                         void *out_keys, int64_t *out_index)
{
    if (k == 0)
        return CLTOPK_OK;
    int nt = 1;
#ifdef _OPENMP
    nt = omp_get_max_threads();
#endif
    /* at least 64K elements a thread: fewer would cost more to merge than save */
    size_t maxt = n / 65536 ? n / 65536 : 1;
    if ((size_t)nt > maxt)
        nt = (int)maxt;
    if (nt < 1)
        nt = 1;
    size_t part = (n + (size_t)nt - 1) / (size_t)nt;
    size_t hk = k < part ? k : part;
    okey_pair *all = malloc((size_t)nt * hk * sizeof *all);
    size_t *sizes = calloc((size_t)nt, sizeof *sizes);
    if (!all || !sizes) {
        free(all);
        free(sizes);
        return CLTOPK_ERR_NO_MEMORY;
    }
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(static, 1) if (nt > 1)
#endif
    for (int t = 0; t < nt; t++) {
        size_t lo = (size_t)t * part, hi = lo + part;
        if (lo > n)
            lo = n;
        if (hi > n)
            hi = n;
        sizes[t] = scan_dispatch(rq, keys, lo, hi, k, all + (size_t)t * hk);
    }
    /* pack the heaps, sort them, keep the first k */
    size_t total = 0;
    for (int t = 0; t < nt; t++) {
        if (total != (size_t)t * hk)
            memmove(all + total, all + (size_t)t * hk, sizes[t] * sizeof *all);
        total += sizes[t];
    }
    cltopk_sort_pairs(all, total);
    for (size_t j = 0; j < k; j++) {
        if (out_keys)
            memcpy((char *)out_keys + j * (size_t)rq->bytes,
                   (const char *)keys + (size_t)all[j].i * (size_t)rq->bytes, (size_t)rq->bytes);
        if (out_index)
            out_index[j] = all[j].i;
    }
    free(all);
    free(sizes);
    return CLTOPK_OK;
}
