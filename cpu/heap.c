/* heap.c - CPU top-k with OpenMP per-thread heaps and a SIMD filter.
 *
 * Each thread scans a contiguous range in index order with a hand-written heap
 * of its best min(k, range) (order key, index) pairs whose root is the worst.  A
 * later element with an equal key has a larger index, so only a strictly larger
 * key replaces the root (replace-top, one sift-down): ties are exact.  Between
 * inserts the per-ISA filter (isa.h: 8 or 16 keys a compare with AVX2 or
 * AVX-512, scalar elsewhere) skips every element whose key is not above the
 * current threshold, so the heap is touched only by candidates.
 *
 * Sorted input would make every element a candidate (increasing input is the
 * heap's worst case).  So before the scan a small stratified sample of the
 * input (up to 2048 runs of 8 elements) gives a floor: its r-th best key with r
 * chosen so that, for data in any order, the k-th best key of the whole input
 * lies above it with near certainty.  Elements below the floor never reach the
 * heap.  The floor is only a hint: if the heaps end with fewer than k entries
 * in all, the scan is repeated without it, so the result is exact whatever the
 * sample said.  Each heap is then sorted in place (heapsort) and the first k of
 * the sorted heaps taken by a merge. */
#include "internal.h"
#include "isa.h"

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

static void sift_up(okey_pair *h, size_t i)
{
    okey_pair x = h[i];
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!worse(&x, &h[p]))
            break;
        h[i] = h[p];
        i = p;
    }
    h[i] = x;
}

/* One thread's range [lo, hi): fills h (at most min(k, hi - lo) pairs) with the
 * best of the elements whose key is above `floor` (every element when
 * !use_floor) and returns how many it holds, or (size_t)-1 after more than
 * `budget` inserts. */
static size_t scan_range(const cpu_isa_ops *ops, const cltopk_request *rq, const void *keys,
                         size_t lo, size_t hi, size_t k, int use_floor, uint64_t floor,
                         size_t budget, okey_pair *h)
{
    int bytes = rq->bytes, kind = rq->kind, sm = rq->smallest;
    size_t cap = hi - lo < k ? hi - lo : k, size = 0, i = lo;
    if (cap == 0)
        return 0;
    uint64_t thr = floor;
    if (!use_floor) {
        for (; size < cap; size++, i++) {
            h[size].u = order_key_at(keys, i, bytes, kind, sm);
            h[size].i = (int64_t)i;
        }
        for (size_t j = cap / 2; j-- > 0;)
            sift_down(h, cap, j);
        thr = h[0].u;
    }
    while (i < hi) {
        size_t j = bytes == 4 ? ops->skip32(keys, i, hi, kind, sm, (uint32_t)thr)
                              : ops->skip64(keys, i, hi, kind, sm, thr);
        if (j >= hi)
            break;
        okey_pair p = {order_key_at(keys, j, bytes, kind, sm), (int64_t)j};
        if (budget-- == 0)
            return (size_t)-1;
        if (size < cap) {
            h[size] = p;
            sift_up(h, size);
            if (++size == cap)
                thr = h[0].u;
        } else {
            h[0] = p;
            sift_down(h, size, 0);
            thr = h[0].u;
        }
        i = j + 1;
    }
    return size;
}

/* Sort a heap of m pairs in place, best first: its worst (the root) goes to
 * the end, one at a time (a scan that is repeated later starts a new heap). */
static void sort_heap(okey_pair *h, size_t m)
{
    for (; m > 1; m--) {
        okey_pair x = h[0];
        h[0] = h[m - 1];
        h[m - 1] = x;
        sift_down(h, m - 1, 0);
    }
}

/* The k-th (1-based) largest of v[0..n), by a three-way quickselect. */
uint64_t cltopk_cpu_kth_largest(uint64_t *v, size_t n, size_t r)
{
    size_t lo = 0, hi = n; /* the answer is in v[lo..hi), at rank r - 1 from lo */
    size_t want = r - 1;
    uint64_t seed = 0x9E3779B97F4A7C15ull;
    for (;;) {
        if (hi - lo == 1)
            return v[lo];
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        uint64_t piv = v[lo + (size_t)((seed >> 33) % (hi - lo))];
        /* v[lo..a) > piv, v[a..b) == piv, v[b..hi) < piv */
        size_t a = lo, b = lo, c = hi;
        while (b < c) {
            uint64_t x = v[b];
            if (x > piv) {
                v[b] = v[a];
                v[a++] = x;
                b++;
            } else if (x < piv) {
                v[b] = v[--c];
                v[c] = x;
            } else {
                b++;
            }
        }
        if (want < a - lo) {
            hi = a;
        } else if (want < b - lo) {
            return piv;
        } else {
            want -= b - lo;
            lo = b;
        }
    }
}

/* A floor for the scan, from a stratified sample: 1 with the floor in *floor,
 * 0 when a floor would not pay (small n, or k a large part of n). */
int cltopk_cpu_sample_floor(const cltopk_request *rq, const void *keys, size_t n, size_t k,
                            uint64_t *floor)
{
    /* short runs: on sorted input the floor can only be as fine as one stride
     * (n / runs), which bounds the candidates there (n / 2048 at most) */
    enum { RUN = 8, MAXRUNS = 2048 };
    if (n < 65536)
        return 0;
    size_t runs = n / 512 < MAXRUNS ? n / 512 : MAXRUNS;
    size_t s = runs * RUN, stride = n / runs;
    /* r - 1 sample keys above the floor is what the input's top k would give
     * on average times two, plus 8 for the luck of the draw */
    double lambda = (double)k * (double)s / (double)n;
    size_t r = (size_t)(2 * lambda) + 8;
    if (r > s / 4)
        return 0;
    uint64_t *v = malloc(s * sizeof *v);
    if (!v)
        return 0;
    uint64_t h = 0x243F6A8885A308D3ull;
    for (size_t b = 0; b < runs; b++) {
        h ^= h >> 29;
        h *= 0xBF58476D1CE4E5B9ull;
        h ^= h >> 32;
        size_t start = b * stride + (size_t)(h % (stride - RUN + 1));
        for (size_t j = 0; j < RUN; j++)
            v[b * RUN + j] = order_key_at(keys, start + j, rq->bytes, rq->kind, rq->smallest);
    }
    uint64_t t = cltopk_cpu_kth_largest(v, s, r);
    free(v);
    if (t == 0)
        return 0;
    *floor = t - 1; /* keys >= t pass */
    return 1;
}

/* Stable LSD radix sort of p[0..n) (tmp: n pairs), db bits a pass (1 ..
 * CLTOPK_CPU_LSD_MAX): by the index ascending over its low ibits bits, then
 * by the key descending over its low kbits bits; a pass whose digit every
 * pair shares is skipped.  With ibits 0 the pairs keep their order among
 * equal keys (THE ORDER where they come in index order); with ibits covering
 * the indices, THE ORDER from any order. */
void cltopk_cpu_lsd_pairs(okey_pair *p, okey_pair *tmp, size_t n, int ibits, int kbits, int db)
{
    okey_pair *src = p, *dst = tmp;
    size_t nb = (size_t)1 << db, mask = nb - 1, cnt[(size_t)1 << CLTOPK_CPU_LSD_MAX];
    for (int f = 0; f < 2; f++)
        for (int shift = 0; shift < (f ? kbits : ibits); shift += db) {
#define LSD_DIGIT(q)                                                                    \
    (f ? (size_t)((q).u >> shift) & mask : (size_t)((uint64_t)(q).i >> shift) & mask)
            memset(cnt, 0, nb * sizeof *cnt);
            for (size_t i = 0; i < n; i++)
                cnt[LSD_DIGIT(src[i])]++;
            int trivial = 0;
            for (size_t d = 0; d < nb; d++)
                if (cnt[d] == n)
                    trivial = 1;
            if (trivial)
                continue;
            /* the key descending: the largest digit first */
            size_t o = 0;
            for (size_t e = 0; e < nb; e++) {
                size_t d = f ? mask - e : e, c = cnt[d];
                cnt[d] = o;
                o += c;
            }
            for (size_t i = 0; i < n; i++)
                dst[cnt[LSD_DIGIT(src[i])]++] = src[i];
#undef LSD_DIGIT
            okey_pair *sw = src;
            src = dst;
            dst = sw;
        }
    if (src != p)
        memcpy(p, src, n * sizeof *p);
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

static int heap_topk(const cltopk_request *rq, const void *keys, size_t n, size_t k,
                     void *out_keys, int64_t *out_index, int guard)
{
    if (k == 0)
        return CLTOPK_OK;
    const cpu_isa_ops *ops = cltopk_cpu_ops();
    int nt = cltopk_cpu_threads();
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
    uint64_t floor = 0;
    int use_floor = cltopk_cpu_sample_floor(rq, keys, n, k, &floor);
    size_t total;
    for (;;) {
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(static, 1) if (nt > 1)
#endif
        for (int t = 0; t < nt; t++) {
            size_t lo = (size_t)t * part, hi = lo + part;
            if (lo > n)
                lo = n;
            if (hi > n)
                hi = n;
            /* the guard: a heap that pays takes few inserts (k (1 + ln(range / k))
             * on random data); past a sixteenth of its range, radix is cheaper */
            size_t budget = guard ? 8 * k + (hi - lo) / 16 + 1024 : (size_t)-1;
            sizes[t] = scan_range(ops, rq, keys, lo, hi, k, use_floor, floor, budget,
                                  all + (size_t)t * hk);
            if (sizes[t] != (size_t)-1) /* in the same parallel region: one is enough */
                sort_heap(all + (size_t)t * hk, sizes[t]);
        }
        total = 0;
        for (int t = 0; t < nt; t++) {
            if (sizes[t] == (size_t)-1) {
                free(all);
                free(sizes);
                return CLTOPK_CPU_DEGRADED;
            }
            total += sizes[t];
        }
        if (total >= k || !use_floor)
            break;
        use_floor = 0; /* the sample misled us: scan again without the floor */
    }
    /* the heaps are sorted (best first, see sort_heap): merge nt lists */
    size_t *pos = calloc((size_t)nt, sizeof *pos);
    if (!pos) {
        free(all);
        free(sizes);
        return CLTOPK_ERR_NO_MEMORY;
    }
    for (size_t j = 0; j < k; j++) {
        int best = -1;
        for (int t = 0; t < nt; t++)
            if (pos[t] < sizes[t] &&
                (best < 0 || pair_better(&all[(size_t)t * hk + pos[t]],
                                         &all[(size_t)best * hk + pos[best]])))
                best = t;
        const okey_pair *p = &all[(size_t)best * hk + pos[best]++];
        if (out_keys)
            memcpy((char *)out_keys + j * (size_t)rq->bytes,
                   (const char *)keys + (size_t)p->i * (size_t)rq->bytes, (size_t)rq->bytes);
        if (out_index)
            out_index[j] = p->i;
    }
    free(pos);
    free(all);
    free(sizes);
    return CLTOPK_OK;
}

int cltopk_cpu_heap_topk(const cltopk_request *rq, const void *keys, size_t n, size_t k,
                         void *out_keys, int64_t *out_index)
{
    return heap_topk(rq, keys, n, k, out_keys, out_index, 0);
}

int cltopk_cpu_heap_topk_guarded(const cltopk_request *rq, const void *keys, size_t n, size_t k,
                                 void *out_keys, int64_t *out_index)
{
    return heap_topk(rq, keys, n, k, out_keys, out_index, 1);
}

size_t cltopk_cpu_heap_row(const cltopk_request *rq, const void *keys, size_t n, size_t k,
                           okey_pair *h)
{
    size_t m = scan_range(cltopk_cpu_ops(), rq, keys, 0, n, k, 0, 0, (size_t)-1, h);
    sort_heap(h, m);
    return m;
}

/* p[r] = the pair of rank r (0: the best) of p[0..n), the better ones before
 * it and the worse after (a quickselect; the pairs are distinct, their
 * indices are) */
static void nth_pair(okey_pair *p, size_t n, size_t r)
{
    size_t lo = 0, hi = n - 1;
    uint64_t seed = 0x9E3779B97F4A7C15ull ^ n;
    while (lo < hi) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        size_t pi = lo + (size_t)((seed >> 33) % (hi - lo + 1));
        okey_pair piv = p[pi], x;
        p[pi] = p[hi];
        p[hi] = piv;
        size_t s = lo;
        for (size_t i = lo; i < hi; i++)
            if (pair_better(&p[i], &piv)) {
                x = p[i];
                p[i] = p[s];
                p[s++] = x;
            }
        p[hi] = p[s];
        p[s] = piv;
        if (r == s)
            return;
        if (r < s)
            hi = s - 1;
        else
            lo = s + 1;
    }
}

/* keys[0..n) into b (2k pairs of room), in index order, those whose key is
 * above thr (every one while !have); whenever b fills, its best k are kept
 * and thr rises to the k-th's key (a later element of that key has a larger
 * index, so it cannot be among the best k); returns how many b holds */
static size_t buf_scan(const cpu_isa_ops *ops, const cltopk_request *rq, const void *keys,
                       size_t n, size_t k, int have, uint64_t thr, okey_pair *b)
{
    int bytes = rq->bytes, kind = rq->kind, sm = rq->smallest;
    size_t size = 0, i = 0;
    while (i < n) {
        size_t j = !have ? i
                   : bytes == 4 ? ops->skip32(keys, i, n, kind, sm, (uint32_t)thr)
                                : ops->skip64(keys, i, n, kind, sm, thr);
        if (j >= n)
            break;
        b[size].u = order_key_at(keys, j, bytes, kind, sm);
        b[size].i = (int64_t)j;
        if (++size == 2 * k) {
            nth_pair(b, size, k - 1);
            size = k;
            thr = b[k - 1].u;
            have = 1;
        }
        i = j + 1;
    }
    return size;
}

size_t cltopk_cpu_buf_row(const cltopk_request *rq, const void *keys, size_t n, size_t k,
                          okey_pair *h)
{
    if (k > n)
        k = n;
    if (k == 0)
        return 0;
    const cpu_isa_ops *ops = cltopk_cpu_ops();
    uint64_t floor = 0;
    int use_floor = cltopk_cpu_sample_floor(rq, keys, n, k, &floor);
    size_t m = buf_scan(ops, rq, keys, n, k, use_floor, floor, h);
    if (m < k) /* the sample's floor was too high: every element again */
        m = buf_scan(ops, rq, keys, n, k, 0, 0, h);
    if (m > k) {
        nth_pair(h, m, k - 1);
        m = k;
    }
    int ibits = 0;
    while (ibits < 63 && ((uint64_t)(n - 1) >> ibits) != 0)
        ibits++;
    /* THE ORDER from the quickselect's order (h + k: the buffer's other half),
     * by 8-bit digits: with 11 (cpu-radix's) 16384 rows of 1024 at k = 256
     * took 206 ms against 148 on 2 cores, the counts outweighing the pairs */
    cltopk_cpu_lsd_pairs(h, h + k, m, ibits, rq->bytes * 8, 8);
    return m;
}
