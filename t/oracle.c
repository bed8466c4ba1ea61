/* oracle.c - the reference of oracle.h: typed comparisons and a stable merge sort. */
#include "oracle.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"

/* three-way compare of two numbers that are not NaN */
#define CMP3(x, y) (((x) > (y)) - ((x) < (y)))

int oracle_cmp(cltopk_dtype type, const void *a, const void *b)
{
    switch (type) {
    case CLTOPK_FLOAT32: {
        float x, y;
        memcpy(&x, a, sizeof x);
        memcpy(&y, b, sizeof y);
        int nx = isnan(x) != 0, ny = isnan(y) != 0;
        if (nx || ny)
            return nx - ny;      /* NaN is above everything else, equal to NaN */
        return CMP3(x, y);       /* -0.0f == +0.0f in IEEE comparison */
    }
    case CLTOPK_FLOAT64: {
        double x, y;
        memcpy(&x, a, sizeof x);
        memcpy(&y, b, sizeof y);
        int nx = isnan(x) != 0, ny = isnan(y) != 0;
        if (nx || ny)
            return nx - ny;
        return CMP3(x, y);
    }
    case CLTOPK_INT32: {
        int32_t x, y;
        memcpy(&x, a, sizeof x);
        memcpy(&y, b, sizeof y);
        return CMP3(x, y);
    }
    case CLTOPK_UINT32: {
        uint32_t x, y;
        memcpy(&x, a, sizeof x);
        memcpy(&y, b, sizeof y);
        return CMP3(x, y);
    }
    case CLTOPK_INT64: {
        int64_t x, y;
        memcpy(&x, a, sizeof x);
        memcpy(&y, b, sizeof y);
        return CMP3(x, y);
    }
    case CLTOPK_UINT64: {
        uint64_t x, y;
        memcpy(&x, a, sizeof x);
        memcpy(&y, b, sizeof y);
        return CMP3(x, y);
    }
    }
    bail("oracle: unknown type %d", (int)type);
}

int oracle_before(cltopk_dtype type, const void *a, const void *b, int smallest)
{
    int c = oracle_cmp(type, a, b);
    return smallest ? c < 0 : c > 0;
}

static size_t width(cltopk_dtype type)
{
    return (type == CLTOPK_FLOAT64 || type == CLTOPK_INT64 || type == CLTOPK_UINT64) ? 8 : 4;
}

/* stable top-down merge sort of p[0..n) (positions), tmp of n entries */
static void msort(cltopk_dtype type, const char *keys, int smallest, int64_t *p, int64_t *tmp,
                  size_t n)
{
    if (n < 2)
        return;
    size_t h = n / 2, w = width(type);
    msort(type, keys, smallest, p, tmp, h);
    msort(type, keys, smallest, p + h, tmp, n - h);
    size_t i = 0, j = h, o = 0;
    while (i < h && j < n) {
        /* take from the right half only when it is strictly before: stability */
        if (oracle_before(type, keys + (size_t)p[j] * w, keys + (size_t)p[i] * w, smallest))
            tmp[o++] = p[j++];
        else
            tmp[o++] = p[i++];
    }
    while (i < h)
        tmp[o++] = p[i++];
    while (j < n)
        tmp[o++] = p[j++];
    memcpy(p, tmp, n * sizeof *p);
}

int64_t *oracle_order(cltopk_dtype type, const void *keys, size_t n, int smallest)
{
    int64_t *p = bmalloc(n * sizeof *p);
    int64_t *tmp = bmalloc(n * sizeof *tmp);
    for (size_t i = 0; i < n; i++)
        p[i] = (int64_t)i;
    msort(type, keys, smallest, p, tmp, n);
    free(tmp);
    return p;
}

void oracle_topk(cltopk_dtype type, const void *keys, size_t n, size_t k, int smallest,
                 const int64_t *perm, void *out_keys, int64_t *out_index)
{
    int64_t *own = NULL;
    if (k > n)
        bail("oracle_topk: k = %zu > n = %zu", k, n);
    if (!perm)
        perm = own = oracle_order(type, keys, n, smallest);
    size_t w = width(type);
    for (size_t i = 0; i < k; i++) {
        if (out_keys)
            memcpy((char *)out_keys + i * w, (const char *)keys + (size_t)perm[i] * w, w);
        if (out_index)
            out_index[i] = perm[i];
    }
    free(own);
}

void oracle_select(cltopk_dtype type, const void *keys, size_t n, size_t rank, int smallest,
                   const int64_t *perm, void *out_key, int64_t *out_index)
{
    int64_t *own = NULL;
    if (rank >= n)
        bail("oracle_select: rank = %zu >= n = %zu", rank, n);
    if (!perm)
        perm = own = oracle_order(type, keys, n, smallest);
    size_t w = width(type);
    if (out_key)
        memcpy(out_key, (const char *)keys + (size_t)perm[rank] * w, w);
    if (out_index)
        *out_index = perm[rank];
    free(own);
}

size_t oracle_rank_of(cltopk_dtype type, const void *keys, size_t n, size_t i, int smallest)
{
    size_t w = width(type), r = 0;
    const char *ki = (const char *)keys + i * w;
    for (size_t j = 0; j < n; j++) {
        const char *kj = (const char *)keys + j * w;
        if (oracle_before(type, kj, ki, smallest) || (j < i && oracle_cmp(type, kj, ki) == 0))
            r++;
    }
    return r;
}
