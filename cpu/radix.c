/* radix.c - CPU radix selection: the key at any rank, top-k for any k, and the
 * element at any rank (cltopk_select).
 *
 * The key at rank r is found digit by digit (11-bit digits from the top of the
 * order key, order.h): every OpenMP thread histograms its own range of the
 * entries that match the digits fixed so far, the histograms are summed, and the
 * digit whose bucket holds rank r is fixed.  As soon as that bucket holds at
 * most n / 16 entries, its keys are copied out (each thread knows from its own
 * histogram where its share goes) and the later digits work on that copy only,
 * so uniform data costs two reads of the input; data that piles into one bucket
 * (the bucket killer) costs one read a digit.
 *
 * Top-k then takes every entry whose key is above the k-th key and the first
 * (in index order) of those equal to it, in index order, and sorts these k
 * pairs stably by key with an LSD radix sort: equal keys keep index order, which
 * is THE ORDER's tie rule.  No step depends on the order of the input.
 *
 * Top-k first tries the shortcut of the heap's sampled floor (heap.c): one pass
 * of the SIMD filter (isa.h) collects every entry at or above the floor (about
 * 2k + n / 2048 of them) in index order, and the selection and the sort above
 * run on those alone.  When the floor let fewer than k through (the sample was
 * misleading), or far more than expected (keys piled up at the floor), the full
 * selection runs instead: the result is exact either way. */
#include "internal.h"
#include "isa.h"

#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* Call F(..., bytes, kind, smallest, ...) with the three as constants, so that
 * the always-inlined F is compiled once per type and direction. */
#define DISPATCH(rq, F, ...)                                                           \
    switch ((rq)->bytes * 100 + (rq)->kind * 10 + (rq)->smallest) {                   \
    case 400: F(4, 0, 0, __VA_ARGS__); break;                                          \
    case 401: F(4, 0, 1, __VA_ARGS__); break;                                          \
    case 410: F(4, 1, 0, __VA_ARGS__); break;                                          \
    case 411: F(4, 1, 1, __VA_ARGS__); break;                                          \
    case 420: F(4, 2, 0, __VA_ARGS__); break;                                          \
    case 421: F(4, 2, 1, __VA_ARGS__); break;                                          \
    case 800: F(8, 0, 0, __VA_ARGS__); break;                                          \
    case 801: F(8, 0, 1, __VA_ARGS__); break;                                          \
    case 810: F(8, 1, 0, __VA_ARGS__); break;                                          \
    case 811: F(8, 1, 1, __VA_ARGS__); break;                                          \
    case 820: F(8, 2, 0, __VA_ARGS__); break;                                          \
    default: F(8, 2, 1, __VA_ARGS__); break;                                           \
    }
#define INLINE static inline __attribute__((always_inline))

INLINE uint64_t okey(const void *keys, size_t i, int bytes, int kind, int sm)
{
    if (bytes == 4)
        return order_key32(cpu_ld32(keys, i), kind, sm);
    return order_key64(cpu_ld64(keys, i), kind, sm);
}

#define DIGIT 11
#define NB (1u << DIGIT)
#if DIGIT > CLTOPK_CPU_LSD_MAX
#error "DIGIT is wider than cltopk_cpu_lsd_pairs takes"
#endif

static int threads_for(size_t n)
{
    int nt = cltopk_cpu_threads();
    size_t maxt = n / 65536 ? n / 65536 : 1;
    if ((size_t)nt > maxt)
        nt = (int)maxt;
    return nt < 1 ? 1 : nt;
}

static inline void range_of(size_t n, int nt, int t, size_t *lo, size_t *hi)
{
    size_t part = (n + (size_t)nt - 1) / (size_t)nt;
    *lo = (size_t)t * part < n ? (size_t)t * part : n;
    *hi = *lo + part < n ? *lo + part : n;
}

/* histogram of digit (u >> shift) & dm over x[lo..hi) matching (u & mask) == prefix */
/* Four interleaved histograms h[0..4 NB): keys that pile into one bucket (the
 * bucket killer, or the few top buckets of U(0,1) floats) would otherwise
 * serialise on one counter; the caller sums them. */
INLINE void hist_full(int bytes, int kind, int sm, const void *keys, size_t lo, size_t hi,
                      uint64_t mask, uint64_t prefix, int shift, uint32_t dm, uint64_t *h)
{
    size_t i = lo;
    for (; i + 4 <= hi; i += 4) {
        uint64_t u0 = okey(keys, i, bytes, kind, sm), u1 = okey(keys, i + 1, bytes, kind, sm);
        uint64_t u2 = okey(keys, i + 2, bytes, kind, sm), u3 = okey(keys, i + 3, bytes, kind, sm);
        h[(u0 >> shift) & dm] += (u0 & mask) == prefix;
        h[NB + ((u1 >> shift) & dm)] += (u1 & mask) == prefix;
        h[2 * NB + ((u2 >> shift) & dm)] += (u2 & mask) == prefix;
        h[3 * NB + ((u3 >> shift) & dm)] += (u3 & mask) == prefix;
    }
    for (; i < hi; i++) {
        uint64_t u = okey(keys, i, bytes, kind, sm);
        h[(u >> shift) & dm] += (u & mask) == prefix;
    }
}

INLINE void compact_range(int bytes, int kind, int sm, const void *keys, size_t lo, size_t hi,
                          uint64_t mask, uint64_t prefix, uint64_t *out)
{
    size_t o = 0;
    for (size_t i = lo; i < hi; i++) {
        uint64_t u = okey(keys, i, bytes, kind, sm);
        if ((u & mask) == prefix) /* no store past the share: it is the next thread's */
            out[o++] = u;
    }
}

int cltopk_cpu_radix_kth(const cltopk_request *rq, const void *keys, size_t n, size_t rank,
                         uint64_t *kth, size_t *above)
{
    int bits = rq->bytes * 8;
    int nt = threads_for(n);
    uint64_t *hists = malloc((size_t)nt * 4 * NB * sizeof *hists); /* 4 a thread */
    uint64_t *cand = NULL; /* keys of the chosen bucket, once small */
    size_t m = 0;
    if (!hists)
        return CLTOPK_ERR_NO_MEMORY;
    uint64_t prefix = 0, mask = 0;
    size_t before = 0, r = rank;
    int rem = bits;
    while (rem > 0) {
        int w = rem < DIGIT ? rem : DIGIT;
        int shift = rem - w;
        uint32_t dm = (1u << w) - 1;
        int ntc = cand ? threads_for(m) : nt;
        memset(hists, 0, (size_t)ntc * 4 * NB * sizeof *hists);
#ifdef _OPENMP
#pragma omp parallel for num_threads(ntc) schedule(static, 1) if (ntc > 1)
#endif
        for (int t = 0; t < ntc; t++) {
            size_t lo, hi;
            uint64_t *h = hists + (size_t)t * 4 * NB;
            if (cand) {
                range_of(m, ntc, t, &lo, &hi);
                for (size_t i = lo; i < hi; i++)
                    h[(cand[i] >> shift) & dm]++;
            } else {
                range_of(n, ntc, t, &lo, &hi);
                DISPATCH(rq, hist_full, keys, lo, hi, mask, prefix, shift, dm, h)
                for (uint32_t d = 0; d <= dm; d++)
                    h[d] += h[NB + d] + h[2 * NB + d] + h[3 * NB + d];
            }
        }
        uint64_t total[NB];
        for (uint32_t d = 0; d <= dm; d++) {
            uint64_t s = 0;
            for (int t = 0; t < ntc; t++)
                s += hists[(size_t)t * 4 * NB + d];
            total[d] = s;
        }
        uint32_t d = dm;
        for (; d > 0; d--) {
            if (r < total[d])
                break;
            r -= total[d];
            before += total[d];
        }
        prefix |= (uint64_t)d << shift;
        mask |= (uint64_t)dm << shift;
        rem = shift;
        size_t bucket = total[d];
        if (rem > 0 && !cand && bucket <= n / 16) {
            /* copy the bucket's keys out: thread t's share starts after the
             * shares of the threads before it */
            cand = malloc(bucket * sizeof *cand);
            if (cand) {
                size_t *off = malloc((size_t)nt * sizeof *off);
                if (!off) {
                    free(cand);
                    cand = NULL;
                } else {
                    size_t o = 0;
                    for (int t = 0; t < nt; t++) {
                        off[t] = o;
                        o += hists[(size_t)t * 4 * NB + d];
                    }
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(static, 1) if (nt > 1)
#endif
                    for (int t = 0; t < nt; t++) {
                        size_t lo, hi;
                        range_of(n, nt, t, &lo, &hi);
                        DISPATCH(rq, compact_range, keys, lo, hi, mask, prefix, cand + off[t])
                    }
                    free(off);
                    m = bucket;
                }
            }
            /* without memory for the copy, the later digits read the input */
        } else if (cand) {
            /* keep only the chosen bucket of the copy */
            size_t o = 0;
            for (size_t i = 0; i < m; i++)
                if ((cand[i] & mask) == prefix)
                    cand[o++] = cand[i];
            m = o;
        }
    }
    free(hists);
    free(cand);
    *kth = prefix;
    *above = before;
    return CLTOPK_OK;
}

/* count keys above and equal to T in [lo, hi) */
INLINE void count_body(int bytes, int kind, int sm, const void *keys, size_t lo, size_t hi,
                       uint64_t T, size_t *gt, size_t *eq)
{
    size_t g = 0, e = 0;
    for (size_t i = lo; i < hi; i++) {
        uint64_t u = okey(keys, i, bytes, kind, sm);
        g += u > T;
        e += u == T;
    }
    *gt = g;
    *eq = e;
}

static void count_range(const cltopk_request *rq, const void *keys, size_t lo, size_t hi,
                        uint64_t T, size_t *gt, size_t *eq)
{
    DISPATCH(rq, count_body, keys, lo, hi, T, gt, eq)
}

/* the pairs of keys above T and the first `left` keys equal to T, in index order */
INLINE void collect_body(int bytes, int kind, int sm, const void *keys, size_t lo, size_t hi,
                         uint64_t T, size_t left, okey_pair *p)
{
    size_t w = 0;
    for (size_t i = lo; i < hi; i++) {
        uint64_t u = okey(keys, i, bytes, kind, sm);
        if (u > T || (u == T && left > 0)) {
            if (u == T)
                left--;
            p[w].u = u;
            p[w++].i = (int64_t)i;
        }
    }
}

int cltopk_cpu_collect_topk(const cltopk_request *rq, const void *keys, size_t n, size_t k,
                            uint64_t T, void *out_keys, int64_t *out_index)
{
    int nt = threads_for(n);
    size_t *gt = calloc((size_t)nt * 3, sizeof *gt), *eq = gt + nt, *off = gt + 2 * nt;
    okey_pair *p = malloc(k * sizeof *p), *tmp = malloc(k * sizeof *tmp);
    if (!gt || !p || !tmp) {
        free(gt);
        free(p);
        free(tmp);
        return CLTOPK_ERR_NO_MEMORY;
    }
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(static, 1) if (nt > 1)
#endif
    for (int t = 0; t < nt; t++) {
        size_t lo, hi;
        range_of(n, nt, t, &lo, &hi);
        count_range(rq, keys, lo, hi, T, &gt[t], &eq[t]);
    }
    size_t above = 0, ties = 0;
    for (int t = 0; t < nt; t++)
        above += gt[t], ties += eq[t];
    if (above >= k || above + ties < k) { /* T is not the k-th key */
        free(gt);
        free(p);
        free(tmp);
        return CLTOPK_ERR_INTERNAL;
    }
    /* ties: the first need = k - above of them in index order */
    size_t need = k - above, o = 0;
    for (int t = 0; t < nt; t++) {
        size_t take = eq[t] < need ? eq[t] : need;
        need -= take;
        eq[t] = take;
        off[t] = o;
        o += gt[t] + take;
    }
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(static, 1) if (nt > 1)
#endif
    for (int t = 0; t < nt; t++) {
        size_t lo, hi;
        range_of(n, nt, t, &lo, &hi);
        DISPATCH(rq, collect_body, keys, lo, hi, T, eq[t], p + off[t])
    }
    cltopk_cpu_lsd_pairs(p, tmp, k, 0, rq->bytes * 8, DIGIT);
    for (size_t j = 0; j < k; j++) {
        if (out_keys)
            memcpy((char *)out_keys + j * (size_t)rq->bytes,
                   (const char *)keys + (size_t)p[j].i * (size_t)rq->bytes, (size_t)rq->bytes);
        if (out_index)
            out_index[j] = p[j].i;
    }
    free(gt);
    free(p);
    free(tmp);
    return CLTOPK_OK;
}

/* The sampled path: every entry above the sample's floor, collected by the
 * SIMD filter in one pass into per-thread lists (in index order), then the
 * selection among those alone.  Returns CLTOPK_CPU_DEGRADED when the floor
 * let fewer than k entries through, or more than a budget (the caller then
 * runs the full radix). */
static int floor_topk(const cltopk_request *rq, const void *keys, size_t n, size_t k,
                      uint64_t floor, void *out_keys, int64_t *out_index)
{
    const cpu_isa_ops *ops = cltopk_cpu_ops();
    int nt = threads_for(n);
    okey_pair **lists = calloc((size_t)nt, sizeof *lists);
    size_t *cnt = calloc((size_t)nt, sizeof *cnt);
    int st = CLTOPK_OK;
    if (!lists || !cnt) {
        free(lists);
        free(cnt);
        return CLTOPK_ERR_NO_MEMORY;
    }
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(static, 1) if (nt > 1)
#endif
    for (int t = 0; t < nt; t++) {
        size_t lo, hi, c = 0, cap = 1024;
        range_of(n, nt, t, &lo, &hi);
        /* a floor that lets much more than its expected 2k + n / 2048 through
         * (many keys equal to it: the bucket killer) is no shortcut */
        size_t budget = 4 * k + n / 64 + 4096;
        okey_pair *l = malloc(cap * sizeof *l);
        int bytes = rq->bytes, kind = rq->kind, sm = rq->smallest;
        for (size_t i = lo; l && i < hi; i++) {
            i = bytes == 4 ? ops->skip32(keys, i, hi, kind, sm, (uint32_t)floor)
                           : ops->skip64(keys, i, hi, kind, sm, floor);
            if (i >= hi)
                break;
            if (c >= budget) {
                c = (size_t)-2;
                break;
            }
            if (c == cap) {
                okey_pair *g = realloc(l, 2 * cap * sizeof *l);
                if (!g) {
                    free(l);
                    l = NULL;
                    break;
                }
                l = g;
                cap *= 2;
            }
            l[c].u = order_key_at(keys, i, bytes, kind, sm);
            l[c++].i = (int64_t)i;
        }
        lists[t] = l;
        cnt[t] = l ? c : (size_t)-1;
    }
    size_t m = 0;
    for (int t = 0; t < nt; t++) {
        if (cnt[t] == (size_t)-1)
            st = CLTOPK_ERR_NO_MEMORY;
        else if (cnt[t] == (size_t)-2 && st == CLTOPK_OK)
            st = CLTOPK_CPU_DEGRADED;
        else
            m += cnt[t];
    }
    okey_pair *c = NULL, *p = NULL;
    uint64_t *u = NULL;
    if (st == CLTOPK_OK && m < k)
        st = CLTOPK_CPU_DEGRADED;
    if (st == CLTOPK_OK) {
        c = malloc(m * sizeof *c);
        u = malloc(m * sizeof *u);
        p = malloc(2 * k * sizeof *p);
        if (!c || !u || !p)
            st = CLTOPK_ERR_NO_MEMORY;
    }
    if (st == CLTOPK_OK) {
        size_t o = 0;
        for (int t = 0; t < nt; t++) {
            memcpy(c + o, lists[t], cnt[t] * sizeof *c);
            o += cnt[t];
        }
        for (size_t j = 0; j < m; j++)
            u[j] = c[j].u;
        uint64_t T = cltopk_cpu_kth_largest(u, m, k);
        size_t above = 0;
        for (size_t j = 0; j < m; j++)
            above += c[j].u > T;
        size_t need = k - above, w = 0;
        for (size_t j = 0; j < m; j++)
            if (c[j].u > T || (c[j].u == T && need > 0)) {
                if (c[j].u == T)
                    need--;
                p[w++] = c[j];
            }
        cltopk_cpu_lsd_pairs(p, p + k, k, 0, rq->bytes * 8, DIGIT);
        for (size_t j = 0; j < k; j++) {
            if (out_keys)
                memcpy((char *)out_keys + j * (size_t)rq->bytes,
                       (const char *)keys + (size_t)p[j].i * (size_t)rq->bytes,
                       (size_t)rq->bytes);
            if (out_index)
                out_index[j] = p[j].i;
        }
    }
    for (int t = 0; t < nt; t++)
        free(lists[t]);
    free(lists);
    free(cnt);
    free(c);
    free(u);
    free(p);
    return st;
}

int cltopk_cpu_radix_topk(const cltopk_request *rq, const void *keys, size_t n, size_t k,
                          void *out_keys, int64_t *out_index)
{
    if (k == 0)
        return CLTOPK_OK;
    uint64_t T;
    if (cltopk_cpu_sample_floor(rq, keys, n, k, &T)) {
        int st = floor_topk(rq, keys, n, k, T, out_keys, out_index);
        if (st != CLTOPK_CPU_DEGRADED)
            return st;
    }
    size_t above;
    int st = cltopk_cpu_radix_kth(rq, keys, n, k - 1, &T, &above);
    if (st != CLTOPK_OK)
        return st;
    return cltopk_cpu_collect_topk(rq, keys, n, k, T, out_keys, out_index);
}

int cltopk_cpu_select(const cltopk_request *rq, size_t rank, void *out_key, int64_t *out_index)
{
    const void *keys = rq->keys;
    size_t n = rq->n;
    uint64_t T;
    size_t above;
    int st = cltopk_cpu_radix_kth(rq, keys, n, rank, &T, &above);
    if (st != CLTOPK_OK)
        return st;
    /* the (rank - above)-th entry holding T, in index order */
    size_t r = rank - above;
    int nt = threads_for(n);
    size_t *gt = calloc((size_t)nt * 2, sizeof *gt), *eq = gt + nt;
    if (!gt)
        return CLTOPK_ERR_NO_MEMORY;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(static, 1) if (nt > 1)
#endif
    for (int t = 0; t < nt; t++) {
        size_t lo, hi;
        range_of(n, nt, t, &lo, &hi);
        count_range(rq, keys, lo, hi, T, &gt[t], &eq[t]);
    }
    size_t found = (size_t)-1;
    for (int t = 0; t < nt && found == (size_t)-1; t++) {
        if (r >= eq[t]) {
            r -= eq[t];
            continue;
        }
        size_t lo, hi;
        range_of(n, nt, t, &lo, &hi);
        for (size_t i = lo; i < hi; i++)
            if (order_key_at(keys, i, rq->bytes, rq->kind, rq->smallest) == T && r-- == 0) {
                found = i;
                break;
            }
    }
    free(gt);
    if (found == (size_t)-1)
        return CLTOPK_ERR_INTERNAL;
    if (out_key)
        memcpy(out_key, (const char *)keys + found * (size_t)rq->bytes, (size_t)rq->bytes);
    if (out_index)
        *out_index = (int64_t)found;
    return CLTOPK_OK;
}
