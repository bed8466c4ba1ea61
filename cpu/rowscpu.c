/* rowscpu.c - many top-k at once on the CPU: OpenMP over the rows (dense rows,
 * segments, kNN queries), each row by one thread with the SIMD-filtered heap
 * of heap.c (cltopk_cpu_heap_row).
 *
 * kNN computes the distances of one query to a block of points into the
 * thread's own array (never a distance matrix), selects the block's best k
 * and merges them with the query's best so far.  The distance is the fma
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

/* the best k of one query: distances of blocks of points, each block's best
 * merged with the best so far (a in, b scratch, both k pairs) */
enum { KNN_BLOCK = 4096 };
static void knn_query(const cltopk_request *rq, const cltopk_rows_job *job, size_t qi,
                      float *dist, okey_pair *h, okey_pair *acc, okey_pair *tmp)
{
    const float *q = job->queries + qi * job->d;
    const float *pts = rq->keys;
    size_t k = rq->k, have = 0;
    for (size_t lo = 0; lo < job->np; lo += KNN_BLOCK) {
        size_t len = job->np - lo < KNN_BLOCK ? job->np - lo : KNN_BLOCK;
        for (size_t j = 0; j < len; j++)
            dist[j] = cltopk_knn_distance(q, pts + (lo + j) * job->d, job->d, job->metric);
        size_t m = cltopk_cpu_heap_row(rq, dist, len, k, h);
        /* merge acc[0..have) with h[0..m) (positions + lo) into tmp, best k */
        size_t a = 0, b = 0, w = 0;
        while (w < k && (a < have || b < m)) {
            okey_pair hb = b < m ? (okey_pair){h[b].u, h[b].i + (int64_t)lo} : (okey_pair){0, 0};
            if (b >= m || (a < have && pair_better(&acc[a], &hb)))
                tmp[w++] = acc[a++];
            else
                tmp[w++] = hb, b++;
        }
        memcpy(acc, tmp, w * sizeof *acc);
        have = w;
    }
    for (size_t i = 0; i < k; i++) {
        int64_t idx = acc[i].i;
        size_t o = qi * k + i;
        if (rq->out_keys)
            ((float *)rq->out_keys)[o] =
                cltopk_knn_distance(q, pts + (size_t)idx * job->d, job->d, job->metric);
        if (rq->out_index)
            rq->out_index[o] = idx;
    }
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
    int knn = job->mode == ROWS_KNN;
    size_t per = knn ? 3 * k : k; /* pairs a thread needs */
    okey_pair *all = malloc((size_t)nt * per * sizeof *all);
    float *dist = knn ? malloc((size_t)nt * KNN_BLOCK * sizeof *dist) : NULL;
    if (!all || (knn && !dist)) {
        free(all);
        free(dist);
        return CLTOPK_ERR_NO_MEMORY;
    }
    long long rows = (long long)n;
#ifdef _OPENMP
#pragma omp parallel num_threads(nt) if (nt > 1)
#endif
    {
#ifdef _OPENMP
        int t = omp_get_thread_num();
#else
        int t = 0;
#endif
        okey_pair *h = all + (size_t)t * per;
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 16)
#endif
        for (long long r = 0; r < rows; r++) {
            if (knn) {
                knn_query(rq, job, (size_t)r, dist + (size_t)t * KNN_BLOCK, h, h + k, h + 2 * k);
                continue;
            }
            size_t start, len;
            row_span(job, (size_t)r, &start, &len);
            const void *row = (const char *)rq->keys + start * (size_t)rq->bytes;
            size_t m = len ? cltopk_cpu_heap_row(rq, row, len, k, h) : 0;
            write_row(rq, row, (size_t)r, h, m);
        }
    }
    free(all);
    free(dist);
    return CLTOPK_OK;
}
