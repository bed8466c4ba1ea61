/* indexcpu.c - the early-stopping index queried on the host (issue 15; seed
 * 002's threshold algorithm over ordered blocks), OpenMP over partitions.
 *
 * Every partition keeps a min-heap of its best tuples by rank key
 * (cltopk_ix_key: score order key above the complemented tuple number), at
 * most min(k, its tuples).  A block is scored attribute after attribute
 * (acc = fmaf(w[j], a, acc) from 0.0f, the rule of cltopk.h: fmaf and the
 * AVX2 _mm256_fmadd_ps round once, the same bits), its tuples pushed where
 * they beat the heap's least, then the stop test of cltopk.h: the k-th key's
 * score strictly above the score of the block's threshold tuple, which is
 * neither NaN nor +inf.
 *
 * Why the test is exact.  For w >= 0 and round to nearest, fmaf(w, a, acc) =
 * RN(w * a + acc) is non-decreasing in a and in acc: w * a and the exact sum
 * are, and RN is monotone.  A later tuple t of the partition has every
 * attribute <= the threshold tuple H's, so by induction over the chain each
 * partial sum of t is <= H's, as long as no NaN arises; a NaN needs an
 * infinity of each sign, and t's chain reaching +inf would force H's to
 * +inf (excluded), so score(t) <= score(H) < k-th.  A tie with the k-th is
 * impossible, so no later tuple with a smaller number could displace it
 * (hence strictly greater: with >= an equal score could still enter).
 *
 * A shared bound (the largest order key of any partition's k-th score so
 * far, raised atomically) stops a partition as soon as its threshold score
 * is strictly below it, and keeps out of the heaps every tuple scoring below
 * it: k tuples of one partition score at least that much, so neither can be
 * among the k best (a tuple scoring exactly the bound is still kept).
 *
 * The query reads the partitions in rounds of q->probe blocks; after each,
 * cltopk_ix_decide may decide to score every block not yet read on all
 * threads instead, each thread keeping its own heap; the heaps are merged
 * last. */
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define IXC_X86 1
#endif

float cltopk_ix_score(const float *tuple, const unsigned *attr, const float *w, size_t m)
{
    float acc = 0.0f;
    for (size_t j = 0; j < m; j++)
        acc = fmaf(w[j], tuple[attr[j]], acc);
    return acc;
}

/* sc[0 .. B) = the scores of block g's slots (padding included) */
static void ixc_scores_plain(const cltopk_ix_layout *L, size_t g, const unsigned *attr,
                             const float *w, size_t m, float *sc)
{
    const size_t B = L->B;
    for (size_t s = 0; s < B; s++)
        sc[s] = 0.0f;
    for (size_t j = 0; j < m; j++) {
        const float *col = L->data + (g * L->d + attr[j]) * B;
        const float wj = w[j];
        for (size_t s = 0; s < B; s++)
            sc[s] = fmaf(wj, col[s], sc[s]);
    }
}

#ifdef IXC_X86
__attribute__((target("avx2,fma"))) static void ixc_scores_fma(const cltopk_ix_layout *L,
                                                               size_t g, const unsigned *attr,
                                                               const float *w, size_t m,
                                                               float *sc)
{
    const size_t B = L->B, B8 = B & ~(size_t)7;
    for (size_t s = 0; s < B; s++)
        sc[s] = 0.0f;
    for (size_t j = 0; j < m; j++) {
        const float *col = L->data + (g * L->d + attr[j]) * B;
        const __m256 wv = _mm256_set1_ps(w[j]);
        size_t s = 0;
        for (; s < B8; s += 8)
            _mm256_storeu_ps(sc + s, _mm256_fmadd_ps(wv, _mm256_loadu_ps(col + s),
                                                     _mm256_loadu_ps(sc + s)));
        for (; s < B; s++)
            sc[s] = fmaf(w[j], col[s], sc[s]);
    }
}
#endif

typedef void (*ixc_scorer)(const cltopk_ix_layout *, size_t, const unsigned *, const float *,
                           size_t, float *);

static ixc_scorer ixc_pick(void)
{
#ifdef IXC_X86
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return ixc_scores_fma;
#endif
    return ixc_scores_plain;
}

/* a min-heap of at most cap keys (h[0] the least) */
static void ixc_push(uint64_t *h, size_t *cnt, size_t cap, uint64_t key)
{
    size_t i;
    if (*cnt < cap) {
        i = (*cnt)++;
        while (i > 0 && h[(i - 1) / 2] > key) {
            h[i] = h[(i - 1) / 2];
            i = (i - 1) / 2;
        }
        h[i] = key;
        return;
    }
    if (cap == 0 || key <= h[0])
        return;
    i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= cap)
            break;
        if (c + 1 < cap && h[c + 1] < h[c])
            c++;
        if (h[c] >= key)
            break;
        h[i] = h[c];
        i = c;
    }
    h[i] = key;
}

/* push the tuples of block g (scores sc) whose keys exceed floor into the
 * heap */
static void ixc_take(const cltopk_ix_layout *L, size_t g, const float *sc, uint64_t *h,
                     size_t *cnt, size_t cap, uint64_t floor)
{
    const uint32_t *ids = L->ids + g * L->B;
    for (size_t s = 0; s < L->B && ids[s] != IX_PAD; s++) {
        uint64_t key = cltopk_ix_key(sc[s], ids[s]);
        if (key > floor && (*cnt < cap || key > h[0]))
            ixc_push(h, cnt, cap, key);
    }
}

/* the stop test: the bound (the order key of a k-th score) strictly above
 * the threshold score t, and t neither NaN nor +inf (see the top) */
static int ixc_stops(float t, uint32_t bound)
{
    uint32_t b;
    memcpy(&b, &t, 4);
    if (isnan(t) || (isinf(t) && t > 0))
        return 0;
    return bound > order_key32(b, KIND_FLOAT, 0);
}

/* the shared bound: the largest order key of a partition's k-th score so far
 * (every partition that holds k tuples publishes its k-th) */
static uint32_t ixc_bound_raise(uint32_t *bound, uint32_t v)
{
    uint32_t cur = __atomic_load_n(bound, __ATOMIC_RELAXED);
    while (cur < v && !__atomic_compare_exchange_n(bound, &cur, v, 1, __ATOMIC_RELAXED,
                                                   __ATOMIC_RELAXED))
        ;
    return cur > v ? cur : v;
}

typedef struct {
    uint64_t *h; /* min(k, the partition's tuples) keys of room */
    size_t cap, cnt;
    size_t pos, nb; /* blocks read, blocks */
    int stopped;
    float tfirst, tnow; /* threshold scores after the first and the last block read */
} ixc_part;

/* read partition i from its position, at most `limit` blocks, testing the
 * threshold after each block that has one against the shared bound */
static void ixc_scan(const cltopk_ix_layout *L, const cltopk_ix_query *q, ixc_part *p, size_t i,
                     size_t limit, ixc_scorer score, float *sc, uint32_t *bound)
{
    const size_t g0 = L->pstart[i];
    while (p->pos < p->nb && limit-- > 0) {
        const size_t g = g0 + p->pos;
        score(L, g, q->attr, q->w, q->m, sc);
        uint32_t b = __atomic_load_n(bound, __ATOMIC_RELAXED);
        ixc_take(L, g, sc, p->h, &p->cnt, p->cap, (uint64_t)b << 32);
        p->pos++;
        if (p->cnt == q->k)
            b = ixc_bound_raise(bound, (uint32_t)(p->h[0] >> 32));
        if (p->pos == p->nb)
            break;
        const float t = cltopk_ix_score(L->thr + g * L->d, q->attr, q->w, q->m);
        p->tnow = t;
        if (p->pos == 1)
            p->tfirst = t;
        if (b && ixc_stops(t, b)) {
            p->stopped = 1;
            break;
        }
    }
}

static int ixc_desc(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

void cltopk_ix_sort(uint64_t *keys, size_t n)
{
    qsort(keys, n, sizeof *keys, ixc_desc);
}

void cltopk_ix_answer(const cltopk_ix_query *q, uint64_t *keys, size_t n)
{
    cltopk_ix_sort(keys, n);
    for (size_t r = 0; r < n && r < q->k; r++) {
        if (q->out_scores) {
            uint32_t b = cltopk_ix_score_bits(keys[r]);
            memcpy(&q->out_scores[r], &b, 4);
        }
        if (q->out_index)
            q->out_index[r] = (int64_t)(uint32_t)~(uint32_t)keys[r];
    }
}

/* The switch rule.  An unfinished partition's threshold score falls as it is
 * read; at the rate of its last round (blocks read since the previous
 * decision, or since its first block) it needs about (tnow - bound) / rate
 * more blocks, at most the rest.  Reading on costs those blocks, switching
 * costs every block left, each block of the full evaluation q->ratio times
 * the cost of an index block; switch when that is cheaper.  No bound yet, a
 * threshold that does not fall, or a score that is not finite: the whole
 * rest.  Anti-correlated data then switches after its first round, and
 * correlated data reads on. */
int cltopk_ix_decide(const cltopk_ix_query *q, cltopk_ix_progress *pr, size_t P, uint32_t bound)
{
    double left = 0, need = 0;
    float bs = 0;
    if (bound) {
        uint32_t bb = cltopk_ix_score_bits((uint64_t)bound << 32);
        memcpy(&bs, &bb, 4);
    }
    for (size_t i = 0; i < P; i++) {
        cltopk_ix_progress *x = &pr[i];
        if (x->done || x->pos >= x->nb)
            continue;
        const double rest = (double)(x->nb - x->pos);
        uint32_t p0 = x->ppos ? x->ppos : 1;
        float t0 = x->ppos ? x->tprev : x->tfirst;
        double est = rest;
        if (bound && x->pos > p0 && isfinite(t0) && isfinite(x->tnow) && isfinite(bs) &&
            t0 > x->tnow) {
            double rate = ((double)t0 - (double)x->tnow) / (double)(x->pos - p0);
            double more = ((double)x->tnow - (double)bs) / rate;
            est = more < 1 ? 1 : more < rest ? more : rest;
        }
        left += rest;
        need += est;
        x->ppos = x->pos;
        x->tprev = x->tnow;
    }
    if (left == 0 || q->sw == 0)
        return 0;
    if (q->sw == 2)
        return 1;
    return need > q->ratio * left;
}

/* the query's host memory */
typedef struct {
    ixc_part *parts;
    cltopk_ix_progress *pr;
    uint64_t *heaps, *fin;
    size_t *tcnt;
    float *scr;
    uint32_t *todo;
} ixc_mem;

static int ixc_release(ixc_mem *a, int st)
{
    free(a->parts);
    free(a->pr);
    free(a->heaps);
    free(a->fin);
    free(a->tcnt);
    free(a->scr);
    free(a->todo);
    return st;
}

int cltopk_cpu_index_query(const cltopk_ix_layout *L, const cltopk_ix_query *q)
{
    const size_t P = L->P, K = q->k;
    ixc_mem a = {0};
    ixc_part *parts = a.parts = calloc(P ? P : 1, sizeof *parts);
    if (!parts)
        return CLTOPK_ERR_NO_MEMORY;
    size_t room = 0;
    for (size_t i = 0; i < P; i++) {
        parts[i].nb = L->pstart[i + 1] - L->pstart[i];
        parts[i].cap = L->psize[i] < K ? (size_t)L->psize[i] : K;
        room += parts[i].cap;
    }
    int nthreads = 1;
#ifdef _OPENMP
    nthreads = omp_get_max_threads();
#endif
    /* the heaps: the partitions', then one a thread for full evaluation */
    const size_t tcap = K < L->n ? K : L->n;
    uint64_t *heaps = a.heaps = malloc((room + (size_t)nthreads * tcap + 1) * sizeof *heaps);
    size_t *tcnt = a.tcnt = calloc((size_t)nthreads, sizeof *tcnt);
    uint64_t *fin = a.fin = malloc((K + 1) * sizeof *fin);
    float *scr = a.scr = malloc((size_t)nthreads * L->B * sizeof *scr);
    cltopk_ix_progress *pr = a.pr = calloc(P ? P : 1, sizeof *pr);
    if (!heaps || !tcnt || !fin || !scr || !pr)
        return ixc_release(&a, CLTOPK_ERR_NO_MEMORY);
    room = 0;
    for (size_t i = 0; i < P; i++) {
        parts[i].h = heaps + room;
        room += parts[i].cap;
    }
    uint64_t *theaps = heaps + room;
    const ixc_scorer score = ixc_pick();
    int full = q->full;
    size_t nonempty = 0, finished = 0;
    uint32_t bound = 0;
    if (!full) {
        /* rounds of q->probe blocks a partition until every partition is
         * finished or the rest is evaluated in full */
        for (;;) {
#pragma omp parallel for schedule(dynamic, 1)
            for (size_t i = 0; i < P; i++) {
                int t = 0;
#ifdef _OPENMP
                t = omp_get_thread_num();
#endif
                if (!parts[i].stopped)
                    ixc_scan(L, q, &parts[i], i, q->probe, score, scr + (size_t)t * L->B,
                             &bound);
            }
            nonempty = finished = 0;
            for (size_t i = 0; i < P; i++) {
                nonempty += parts[i].nb > 0;
                finished += parts[i].nb > 0 && (parts[i].stopped || parts[i].pos == parts[i].nb);
                pr[i].pos = (uint32_t)parts[i].pos;
                pr[i].nb = (uint32_t)parts[i].nb;
                pr[i].done = parts[i].stopped;
                pr[i].tfirst = parts[i].tfirst;
                pr[i].tnow = parts[i].tnow;
            }
            if (finished == nonempty)
                break;
            if ((full = cltopk_ix_decide(q, pr, P, __atomic_load_n(&bound, __ATOMIC_RELAXED))))
                break;
        }
    }
    if (full) {
        /* every block not read yet, in one list cut among the threads */
        size_t left = 0;
        for (size_t i = 0; i < P; i++)
            if (!parts[i].stopped)
                left += parts[i].nb - parts[i].pos;
        uint32_t *todo = a.todo = malloc((left ? left : 1) * sizeof *todo);
        if (!todo)
            return ixc_release(&a, CLTOPK_ERR_NO_MEMORY);
        left = 0;
        for (size_t i = 0; i < P; i++)
            if (!parts[i].stopped) {
                for (size_t b = parts[i].pos; b < parts[i].nb; b++)
                    todo[left++] = (uint32_t)(L->pstart[i] + b);
                parts[i].pos = parts[i].nb;
            }
#pragma omp parallel
        {
            int t = 0;
#ifdef _OPENMP
            t = omp_get_thread_num();
#endif
            uint64_t *h = theaps + (size_t)t * tcap;
            float *sc = scr + (size_t)t * L->B;
#pragma omp for schedule(dynamic, 16)
            for (size_t x = 0; x < left; x++) {
                score(L, todo[x], q->attr, q->w, q->m, sc);
                ixc_take(L, todo[x], sc, h, &tcnt[t], tcap, (uint64_t)bound << 32);
            }
        }
    }
    /* the k best of every heap */
    size_t nfin = 0;
    for (size_t i = 0; i < P; i++)
        for (size_t x = 0; x < parts[i].cnt; x++)
            ixc_push(fin, &nfin, K, parts[i].h[x]);
    for (int t = 0; t < nthreads; t++)
        for (size_t x = 0; x < tcnt[t]; x++)
            ixc_push(fin, &nfin, K, theaps[(size_t)t * tcap + x]);
    cltopk_ix_answer(q, fin, nfin);
    cltopk_index_stats *st = q->st;
    memset(st, 0, sizeof *st);
    st->tuples = L->n;
    for (size_t i = 0; i < P; i++) {
        uint64_t ev = (uint64_t)parts[i].pos * L->B;
        st->tuples_evaluated += ev < L->psize[i] ? ev : L->psize[i];
        st->blocks_read += parts[i].pos;
        st->partitions += parts[i].nb > 0;
        st->partitions_stopped += (size_t)parts[i].stopped;
    }
    st->stopped_early = st->tuples_evaluated < L->n;
    st->full_evaluation = full;
    return ixc_release(&a, nfin == K ? CLTOPK_OK : CLTOPK_ERR_INTERNAL);
}
