/* rowscpu.c - many top-k at once on the CPU: OpenMP over the rows (dense rows,
 * segments, kNN queries), each row by one thread with the SIMD-filtered heap
 * of heap.c (cltopk_cpu_heap_row).
 *
 * kNN takes the points a block at a time (transposed once for all queries)
 * and computes each query's distances to the block into the thread's own
 * array (never a distance matrix), selects the block's best k and merges them
 * with the query's best so far.  The distance is the fma
 * definition of cltopk.h: acc = fmaf(a, b, acc) from acc = 0.0f in dimension
 * order.  This file's arithmetic is subtractions and explicit fmaf calls only,
 * so there is no product a compiler could contract or reorder, and the bits
 * are those of every OpenCL device (cl/rows.cl computes the same). */
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "isa.h"

/* k from which a row's best go through a buffer of 2k candidates
 * (cltopk_cpu_buf_row) rather than a heap of k (cltopk_cpu_heap_row) */
#define CPU_BUF_K 256

float cltopk_knn_distance(const float *q, const float *p, size_t d, int metric)
{
    float acc = 0.0f;
    if (metric == CLTOPK_INNER_PRODUCT) {
        for (size_t j = 0; j < d; j++)
            acc = fmaf(q[j], p[j], acc);
    } else {
        for (size_t j = 0; j < d; j++) {
            float t = q[j] - p[j];
            acc = fmaf(t, t, acc);
        }
    }
    if (isnan(acc)) { /* one NaN for every device: the quiet NaN */
        uint32_t qn = 0x7FC00000u;
        memcpy(&acc, &qn, 4);
    }
    return acc;
}

/* row r of the job: its first element and length (dense rows, segments) */
static void row_span(const cltopk_rows_job *job, size_t r, size_t *start, size_t *len)
{
    if (job->mode == ROWS_DENSE) {
        *start = r * job->ld;
        *len = job->cols;
    } else {
        *start = (size_t)job->offsets[r];
        *len = (size_t)(job->offsets[r + 1] - job->offsets[r]);
    }
}

/* write row r's m best pairs h (positions within the row), padded to k */
static void write_row(const cltopk_request *rq, const void *row_keys, size_t r,
                      const okey_pair *h, size_t m)
{
    size_t kb = (size_t)rq->bytes, k = rq->k;
    for (size_t i = 0; i < k; i++) {
        char *ok = rq->out_keys ? (char *)rq->out_keys + (r * k + i) * kb : NULL;
        if (i < m) {
            if (ok)
                memcpy(ok, (const char *)row_keys + (size_t)h[i].i * kb, kb);
            if (rq->out_index)
                rq->out_index[r * k + i] = h[i].i;
        } else {
            if (ok)
                memset(ok, 0, kb);
            if (rq->out_index)
                rq->out_index[r * k + i] = -1;
        }
    }
}

/* ---- kNN: the points in blocks of KNN_BLOCK, each block transposed once
 * (dimension-major, padded with zeros to a multiple of 32 points; 512 KiB at
 * d = 128, which stays in a core's L2 cache) and used by every query; each
 * query keeps its best k over the blocks.  The distances of a block come from
 * a vector kernel, each lane its own fma chain in dimension order (the same
 * bits as fmaf): AVX-512, 8 queries x 32 points a step, where the CPU kernels
 * in use are the AVX-512 ones; AVX2 + FMA, 2 queries x 32 points, where the
 * processor has both; else cltopk_knn_distance's loop. ---- */
enum { KNN_BLOCK = 1024, KNN_GROUP = 8 };

/* the distances of the nw (1..KNN_GROUP) queries qs[] to the block's first
 * len points (a multiple of 32), into outs[] */
typedef void (*knn_block_fn)(const float *const *qs, int nw, const float *soa, size_t len,
                             size_t d, int ip, float *const *outs);

static void knn_block_scalar(const float *const *qs, int nw, const float *soa, size_t len,
                             size_t d, int ip, float *const *outs)
{
    for (int w = 0; w < nw; w++) {
        const float *q = qs[w];
        float *out = outs[w];
        for (size_t i = 0; i < len; i++) {
            float acc = 0.0f;
            for (size_t j = 0; j < d; j++) {
                float p = soa[j * KNN_BLOCK + i];
                if (ip) {
                    acc = fmaf(q[j], p, acc);
                } else {
                    float t = q[j] - p;
                    acc = fmaf(t, t, acc);
                }
            }
            out[i] = acc;
        }
    }
}

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#include <immintrin.h>
#define KNN_HAVE_FMA_KERNEL 1
/* 2 queries x 32 points: 8 independent fma chains share the loads */
__attribute__((target("avx2,fma"))) static void knn_pair_fma(const float *q0, const float *q1,
                                                             const float *soa, size_t len,
                                                             size_t d, int ip, float *out0,
                                                             float *out1)
{
    const float *qb = q1 ? q1 : q0;
    for (size_t i = 0; i < len; i += 32) {
        __m256 a[8];
        for (int v = 0; v < 8; v++)
            a[v] = _mm256_setzero_ps();
        for (size_t j = 0; j < d; j++) {
            const float *row = soa + j * KNN_BLOCK + i;
            __m256 x = _mm256_set1_ps(q0[j]), y = _mm256_set1_ps(qb[j]);
            for (int v = 0; v < 4; v++) {
                __m256 p = _mm256_loadu_ps(row + 8 * v);
                if (ip) {
                    a[v] = _mm256_fmadd_ps(x, p, a[v]);
                    a[v + 4] = _mm256_fmadd_ps(y, p, a[v + 4]);
                } else {
                    __m256 t = _mm256_sub_ps(x, p), u = _mm256_sub_ps(y, p);
                    a[v] = _mm256_fmadd_ps(t, t, a[v]);
                    a[v + 4] = _mm256_fmadd_ps(u, u, a[v + 4]);
                }
            }
        }
        for (int v = 0; v < 4; v++) {
            _mm256_storeu_ps(out0 + i + 8 * v, a[v]);
            if (q1)
                _mm256_storeu_ps(out1 + i + 8 * v, a[v + 4]);
        }
    }
}

static void knn_block_fma(const float *const *qs, int nw, const float *soa, size_t len,
                          size_t d, int ip, float *const *outs)
{
    for (int w = 0; w < nw; w += 2)
        knn_pair_fma(qs[w], w + 1 < nw ? qs[w + 1] : NULL, soa, len, d, ip, outs[w],
                     w + 1 < nw ? outs[w + 1] : NULL);
}

/* 8 queries x 32 points: 16 independent fma chains (of 32 registers) share
 * two loads a dimension; IP is a constant of each copy */
#define KNN_AVX512_STEP(IP)                                                                   \
    for (size_t i = 0; i < len; i += 32) {                                                   \
        __m512 a[KNN_GROUP][2];                                                              \
        _Pragma("GCC unroll 8") for (int w = 0; w < KNN_GROUP; w++)                          \
            a[w][0] = a[w][1] = _mm512_setzero_ps();                                         \
        for (size_t j = 0; j < d; j++) {                                                     \
            const float *row = soa + j * KNN_BLOCK + i;                                      \
            __m512 p0 = _mm512_loadu_ps(row), p1 = _mm512_loadu_ps(row + 16);                \
            _Pragma("GCC unroll 8") for (int w = 0; w < KNN_GROUP; w++) {                    \
                __m512 x = _mm512_set1_ps(q[w][j]);                                          \
                if (IP) {                                                                    \
                    a[w][0] = _mm512_fmadd_ps(x, p0, a[w][0]);                               \
                    a[w][1] = _mm512_fmadd_ps(x, p1, a[w][1]);                               \
                } else {                                                                     \
                    __m512 t0 = _mm512_sub_ps(x, p0), t1 = _mm512_sub_ps(x, p1);             \
                    a[w][0] = _mm512_fmadd_ps(t0, t0, a[w][0]);                              \
                    a[w][1] = _mm512_fmadd_ps(t1, t1, a[w][1]);                              \
                }                                                                            \
            }                                                                                \
        }                                                                                    \
        _Pragma("GCC unroll 8") for (int w = 0; w < KNN_GROUP; w++) {                        \
            if (w < nw) {                                                                    \
                _mm512_storeu_ps(outs[w] + i, a[w][0]);                                      \
                _mm512_storeu_ps(outs[w] + i + 16, a[w][1]);                                 \
            }                                                                                \
        }                                                                                    \
    }

__attribute__((target("avx512f"))) static void knn_block_avx512(const float *const *qs, int nw,
                                                                const float *soa, size_t len,
                                                                size_t d, int ip,
                                                                float *const *outs)
{
    const float *q[KNN_GROUP]; /* missing queries repeat the first (not stored) */
    for (int w = 0; w < KNN_GROUP; w++)
        q[w] = qs[w < nw ? w : 0];
    if (ip) {
        KNN_AVX512_STEP(1)
    } else {
        KNN_AVX512_STEP(0)
    }
}
#endif

/* the block kernel of the CPU kernels in use (CLTOPK_CPU_ISA; the tests check
 * each): AVX-512 with the AVX-512 ones, else AVX2 + FMA where the processor
 * has both and the kernels in use are not the scalar ones, else the scalar
 * loop */
static knn_block_fn knn_kernel(void)
{
#ifdef KNN_HAVE_FMA_KERNEL
    static int have = -1, have512 = 0;
    if (have < 0) {
        __builtin_cpu_init();
        have = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
        have512 = __builtin_cpu_supports("avx512f");
    }
    const char *isa = cltopk_cpu_ops()->name;
    if (have512 && strcmp(isa, "avx512") == 0)
        return knn_block_avx512;
    if (have && strcmp(isa, "scalar") != 0)
        return knn_block_fma;
#endif
    return knn_block_scalar;
}

/* merge the best m pairs of a block (positions + lo) into the query's best
 * `*have` (acc, k pairs of room) through tmp */
static void knn_merge(okey_pair *acc, size_t *have, const okey_pair *h, size_t m, size_t lo,
                      size_t k, okey_pair *tmp)
{
    size_t a = 0, b = 0, w = 0;
    while (w < k && (a < *have || b < m)) {
        okey_pair hb = b < m ? (okey_pair){h[b].u, h[b].i + (int64_t)lo} : (okey_pair){0, 0};
        if (b >= m || (a < *have && pair_better(&acc[a], &hb)))
            tmp[w++] = acc[a++];
        else
            tmp[w++] = hb, b++;
    }
    memcpy(acc, tmp, w * sizeof *acc);
    *have = w;
}

static int knn_rows(const cltopk_request *rq, const cltopk_rows_job *job, int nt)
{
    size_t k = rq->k, nq = job->nrows, d = job->d;
    const float *pts = rq->keys;
    okey_pair *best = malloc(nq * k * sizeof *best);
    size_t *have = calloc(nq, sizeof *have);
    okey_pair *scratch = malloc((size_t)nt * (2 * k + KNN_BLOCK) * sizeof *scratch);
    float *dist = malloc((size_t)nt * KNN_GROUP * KNN_BLOCK * sizeof *dist);
    float *soa = malloc(d * KNN_BLOCK * sizeof *soa);
    if (!best || !have || !scratch || !dist || !soa) {
        free(best), free(have), free(scratch), free(dist), free(soa);
        return CLTOPK_ERR_NO_MEMORY;
    }
    knn_block_fn kern = knn_kernel();
    long long groups = (long long)((nq + KNN_GROUP - 1) / KNN_GROUP);
    for (size_t lo = 0; lo < job->np; lo += KNN_BLOCK) {
        size_t len = job->np - lo < KNN_BLOCK ? job->np - lo : KNN_BLOCK;
        size_t padded = (len + 31) / 32 * 32;
        for (size_t j = 0; j < d; j++) {
            for (size_t i = 0; i < len; i++)
                soa[j * KNN_BLOCK + i] = pts[(lo + i) * d + j];
            for (size_t i = len; i < padded; i++)
                soa[j * KNN_BLOCK + i] = 0.0f;
        }
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1) if (nt > 1)
#endif
        for (long long g = 0; g < groups; g++) {
#ifdef _OPENMP
            int t = omp_get_thread_num();
#else
            int t = 0;
#endif
            size_t q0 = (size_t)g * KNN_GROUP;
            int nw = nq - q0 < KNN_GROUP ? (int)(nq - q0) : KNN_GROUP;
            const float *qs[KNN_GROUP];
            float *outs[KNN_GROUP];
            for (int w = 0; w < nw; w++) {
                qs[w] = job->queries + (q0 + (size_t)w) * d;
                outs[w] = dist + ((size_t)t * KNN_GROUP + (size_t)w) * KNN_BLOCK;
            }
            okey_pair *h = scratch + (size_t)t * (2 * k + KNN_BLOCK);
            kern(qs, nw, soa, padded, d, job->metric == CLTOPK_INNER_PRODUCT, outs);
            for (int w = 0; w < nw; w++) {
                float *dw = outs[w];
                size_t qi = q0 + (size_t)w;
                if (have[qi] == k) {
                    /* a query's k best so far: a point of this block enters
                     * only by a better distance (an equal one has a larger
                     * index); most blocks have none.  The k-th best as a
                     * float (THE ORDER's key undone); a NaN one: no test */
                    uint32_t u = (uint32_t)best[qi * k + k - 1].u ^ (rq->smallest ? ~0u : 0u);
                    uint32_t x = u & 0x80000000u ? u ^ 0x80000000u : ~u;
                    float thr;
                    memcpy(&thr, &x, sizeof thr);
                    int above = 0;
                    if (isnan(thr))
                        above = 1;
                    else if (rq->smallest)
                        for (size_t i = 0; i < len; i++)
                            above |= dw[i] < thr;
                    else
                        for (size_t i = 0; i < len; i++)
                            above |= (dw[i] > thr) | (dw[i] != dw[i]);
                    if (!above)
                        continue;
                    if (!isnan(thr)) {
                        /* the few that beat it, sorted, merged */
                        okey_pair *cand = h + 2 * k;
                        size_t c = 0;
                        for (size_t i = 0; i < len; i++) {
                            float v = dw[i];
                            if (rq->smallest ? v < thr : (v > thr) | (v != v)) {
                                uint32_t b;
                                memcpy(&b, &v, sizeof b);
                                cand[c++] = (okey_pair){order_key32(b, 2, rq->smallest),
                                                        (int64_t)i};
                            }
                        }
                        cltopk_sort_pairs(cand, c);
                        knn_merge(best + qi * k, &have[qi], cand, c < k ? c : k, lo, k, h);
                        continue;
                    }
                }
                for (size_t i = 0; i < len; i++)
                    if (isnan(dw[i])) /* one NaN for all (the order key sees no payload) */
                        dw[i] = NAN;
                size_t m = cltopk_cpu_heap_row(rq, dw, len, k, h);
                knn_merge(best + (q0 + (size_t)w) * k, &have[q0 + (size_t)w], h, m, lo, k, h + k);
            }
        }
    }
    for (size_t qi = 0; qi < nq; qi++)
        for (size_t i = 0; i < k; i++) {
            int64_t idx = best[qi * k + i].i;
            if (rq->out_keys)
                ((float *)rq->out_keys)[qi * k + i] = cltopk_knn_distance(
                    job->queries + qi * d, pts + (size_t)idx * d, d, job->metric);
            if (rq->out_index)
                rq->out_index[qi * k + i] = idx;
        }
    free(best), free(have), free(scratch), free(dist), free(soa);
    return CLTOPK_OK;
}

int cltopk_cpu_rows(const cltopk_request *rq, const cltopk_rows_job *job)
{
    size_t k = rq->k, n = job->nrows;
    if (k == 0 || n == 0)
        return CLTOPK_OK;
    int nt = cltopk_cpu_threads();
    if ((size_t)nt > n)
        nt = (int)n;
    if (nt < 1)
        nt = 1;
    if (job->mode == ROWS_KNN)
        return knn_rows(rq, job, nt);
    /* the heap for small k, the buffer of 2k candidates above (CPU_BUF_K) */
    int buf = k >= CPU_BUF_K;
    okey_pair *all = malloc((size_t)nt * (buf ? 2 : 1) * k * sizeof *all);
    if (!all)
        return CLTOPK_ERR_NO_MEMORY;
    long long rows = (long long)n;
    /* chunks of up to 16 rows, at least four a thread (64 long rows on 16
     * threads went 16 a chunk: four threads worked) */
    int chunk = (int)(n / ((size_t)nt * 4));
    chunk = chunk < 1 ? 1 : chunk > 16 ? 16 : chunk;
#ifdef _OPENMP
#pragma omp parallel num_threads(nt) if (nt > 1)
#endif
    {
#ifdef _OPENMP
        int t = omp_get_thread_num();
#else
        int t = 0;
#endif
        okey_pair *h = all + (size_t)t * (buf ? 2 : 1) * k;
#ifdef _OPENMP
#pragma omp for schedule(dynamic, chunk)
#endif
        for (long long r = 0; r < rows; r++) {
            size_t start, len;
            row_span(job, (size_t)r, &start, &len);
            const void *row = (const char *)rq->keys + start * (size_t)rq->bytes;
            size_t m = !len ? 0
                       : buf  ? cltopk_cpu_buf_row(rq, row, len, k, h)
                              : cltopk_cpu_heap_row(rq, row, len, k, h);
            write_row(rq, row, (size_t)r, h, m);
        }
    }
    free(all);
    return CLTOPK_OK;
}
