/* querycpu.c - cltopk_query_topk on the CPU: the programs of lib/expr.h
 * interpreted over blocks of QB rows (one operation at a time over the whole
 * block), OpenMP over contiguous row ranges; each thread keeps its best k
 * pairs (order key of the score, row), adding a block's rows only where they
 * pass the filter and beat its k-th best so far (an equal key loses: its row
 * is later), and the threads' lists are merged at the end.  Scores are written
 * by evaluating the program again at the winning rows, a NaN as the quiet NaN
 * (0x7FC00000, 0x7FF8000000000000), so that every device writes the same
 * bits. */
#include "internal.h"
#include "isa.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* each operation rounded once, as on the device (cl/query.cl) */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

enum { QB = 256 };

typedef struct {
    uint64_t v[EXPR_MAX_STACK][QB];
    uint8_t neg[EXPR_MAX_STACK][QB];
} qstack;

static inline float as_f32(uint64_t b)
{
    uint32_t u = (uint32_t)b;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static inline uint64_t of_f32(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static inline double as_f64(uint64_t b)
{
    double f;
    memcpy(&f, &b, 8);
    return f;
}

static inline uint64_t of_f64(double f)
{
    uint64_t u;
    memcpy(&u, &f, 8);
    return u;
}

/* column value i as an exact integer: its 64 bits (sign-extended) and whether
 * it is negative */
static void col_exact(int type, const void *d, size_t i, uint64_t *v, uint8_t *neg)
{
    switch (type) {
    case CLTOPK_INT32: {
        int32_t x = ((const int32_t *)d)[i];
        *v = (uint64_t)(int64_t)x, *neg = x < 0;
        return;
    }
    case CLTOPK_UINT32:
        *v = ((const uint32_t *)d)[i], *neg = 0;
        return;
    case CLTOPK_INT64: {
        int64_t x = ((const int64_t *)d)[i];
        *v = (uint64_t)x, *neg = x < 0;
        return;
    }
    default:
        *v = ((const uint64_t *)d)[i], *neg = 0;
        return;
    }
}

/* min and max: NaN if either is; else the first unless the second is
 * strictly smaller (larger) */
static inline float minf_(float x, float y) { return isnan(x) || isnan(y) ? NAN : y < x ? y : x; }
static inline float maxf_(float x, float y) { return isnan(x) || isnan(y) ? NAN : y > x ? y : x; }
static inline double mind_(double x, double y) { return isnan(x) || isnan(y) ? NAN : y < x ? y : x; }
static inline double maxd_(double x, double y) { return isnan(x) || isnan(y) ? NAN : y > x ? y : x; }

static inline int cmp_num(int c, double x, double y)
{
    switch (c) {
    case XCMP_LT: return x < y;
    case XCMP_LE: return x <= y;
    case XCMP_GT: return x > y;
    case XCMP_GE: return x >= y;
    case XCMP_EQ: return x == y;
    default: return x != y;
    }
}

/* a binary operation over the block, in the score type */
#define NUM2(F32, F64)                                                                        \
    do {                                                                                      \
        sp--;                                                                                 \
        uint64_t *X = st->v[sp - 1], *Y = st->v[sp];                                          \
        if (f64)                                                                              \
            for (size_t i = 0; i < m; i++) {                                                  \
                double x = as_f64(X[i]), y = as_f64(Y[i]);                                    \
                X[i] = of_f64(F64);                                                           \
            }                                                                                 \
        else                                                                                  \
            for (size_t i = 0; i < m; i++) {                                                  \
                float x = as_f32(X[i]), y = as_f32(Y[i]);                                     \
                X[i] = of_f32(F32);                                                           \
            }                                                                                 \
    } while (0)
#define NUM1(F32, F64)                                                                        \
    do {                                                                                      \
        uint64_t *X = st->v[sp - 1];                                                          \
        if (f64)                                                                              \
            for (size_t i = 0; i < m; i++) {                                                  \
                double x = as_f64(X[i]);                                                      \
                X[i] = of_f64(F64);                                                           \
            }                                                                                 \
        else                                                                                  \
            for (size_t i = 0; i < m; i++) {                                                  \
                float x = as_f32(X[i]);                                                       \
                X[i] = of_f32(F32);                                                           \
            }                                                                                 \
    } while (0)

/* run program pr over rows [r0, r0 + m); the result in st->v[0] */
static void eval_block(const expr_prog *pr, const cltopk_query_job *job, size_t r0, size_t m,
                       qstack *st)
{
    const int f64 = job->q->score64;
    int sp = 0;
    for (int o = 0; o < pr->nops; o++) {
        const int op = (int)(pr->ops[o] & 255u);
        const uint32_t a = pr->ops[o] >> 8;
        switch (op) {
        case XOP_COLF: {
            /* one loop a type and width (the conversion inlined) */
            uint64_t *X = st->v[sp];
            const void *d = job->data[a];
#define COLF_LOOP(T, CT)                                                                      \
    do {                                                                                      \
        const CT *s_ = (const CT *)d + r0;                                                    \
        if (f64)                                                                              \
            for (size_t i = 0; i < m; i++)                                                    \
                X[i] = of_f64((double)s_[i]);                                                 \
        else                                                                                  \
            for (size_t i = 0; i < m; i++)                                                    \
                X[i] = of_f32((float)s_[i]);                                                  \
    } while (0)
            switch (job->types[a]) {
            case CLTOPK_FLOAT32: COLF_LOOP(0, float); break;
            case CLTOPK_FLOAT64: COLF_LOOP(1, double); break;
            case CLTOPK_INT32: COLF_LOOP(2, int32_t); break;
            case CLTOPK_UINT32: COLF_LOOP(3, uint32_t); break;
            case CLTOPK_INT64: COLF_LOOP(4, int64_t); break;
            default: COLF_LOOP(5, uint64_t); break;
            }
#undef COLF_LOOP
            sp++;
            break;
        }
        case XOP_COLI: {
            uint64_t *X = st->v[sp];
            uint8_t *N = st->neg[sp];
            const void *d = job->data[a];
            switch (job->types[a]) {
            case CLTOPK_INT32:
                for (size_t i = 0; i < m; i++) {
                    int32_t x = ((const int32_t *)d)[r0 + i];
                    X[i] = (uint64_t)(int64_t)x, N[i] = x < 0;
                }
                break;
            case CLTOPK_INT64:
                for (size_t i = 0; i < m; i++) {
                    int64_t x = ((const int64_t *)d)[r0 + i];
                    X[i] = (uint64_t)x, N[i] = x < 0;
                }
                break;
            default:
                for (size_t i = 0; i < m; i++)
                    col_exact(job->types[a], d, r0 + i, &X[i], &N[i]);
                break;
            }
            sp++;
            break;
        }
        case XOP_CONF:
            for (size_t i = 0; i < m; i++)
                st->v[sp][i] = pr->consts[a];
            sp++;
            break;
        case XOP_CONI:
            for (size_t i = 0; i < m; i++) {
                st->v[sp][i] = pr->consts[a];
                st->neg[sp][i] = (uint8_t)pr->consts[a + 1];
            }
            sp++;
            break;
        case XOP_ADD: NUM2(x + y, x + y); break;
        case XOP_SUB: NUM2(x - y, x - y); break;
        case XOP_MUL: NUM2(x * y, x * y); break;
        case XOP_DIV: NUM2(x / y, x / y); break;
        case XOP_MIN: NUM2(minf_(x, y), mind_(x, y)); break;
        case XOP_MAX: NUM2(maxf_(x, y), maxd_(x, y)); break;
        case XOP_NEG: NUM1(-x, -x); break;
        case XOP_ABS: NUM1(fabsf(x), fabs(x)); break;
        case XOP_SQRT: NUM1(sqrtf(x), sqrt(x)); break;
        case XOP_LOG: NUM1(cltopk_expr_logf(x), cltopk_expr_log(x)); break;
        case XOP_EXP: NUM1(cltopk_expr_expf(x), cltopk_expr_exp(x)); break;
        case XOP_FLOOR: NUM1(floorf(x), floor(x)); break;
        case XOP_CEIL: NUM1(ceilf(x), ceil(x)); break;
        case XOP_CMPF: {
            sp--;
            uint64_t *X = st->v[sp - 1], *Y = st->v[sp];
            for (size_t i = 0; i < m; i++)
                X[i] = (uint64_t)(f64 ? cmp_num((int)a, as_f64(X[i]), as_f64(Y[i]))
                                      : cmp_num((int)a, as_f32(X[i]), as_f32(Y[i])));
            break;
        }
        case XOP_CMPI: {
            sp--;
            uint64_t *X = st->v[sp - 1], *Y = st->v[sp];
            uint8_t *XN = st->neg[sp - 1], *YN = st->neg[sp];
            /* one loop a comparison (lt: a negative one is below any other) */
#define CMPI_LOOP(E)                                                                          \
    for (size_t i = 0; i < m; i++) {                                                          \
        uint64_t lt = XN[i] != YN[i] ? XN[i] : X[i] < Y[i];                                   \
        uint64_t eq = (XN[i] == YN[i]) & (X[i] == Y[i]);                                      \
        (void)lt, (void)eq;                                                                   \
        X[i] = (E);                                                                           \
    }
            switch (a) {
            case XCMP_LT: CMPI_LOOP(lt); break;
            case XCMP_LE: CMPI_LOOP(lt | eq); break;
            case XCMP_GT: CMPI_LOOP(!lt & !eq); break;
            case XCMP_GE: CMPI_LOOP(!lt); break;
            case XCMP_EQ: CMPI_LOOP(eq); break;
            default: CMPI_LOOP(!eq); break;
            }
#undef CMPI_LOOP
            break;
        }
        case XOP_AND:
            sp--;
            for (size_t i = 0; i < m; i++)
                st->v[sp - 1][i] &= st->v[sp][i];
            break;
        case XOP_OR:
            sp--;
            for (size_t i = 0; i < m; i++)
                st->v[sp - 1][i] |= st->v[sp][i];
            break;
        case XOP_NOT:
            for (size_t i = 0; i < m; i++)
                st->v[sp - 1][i] ^= 1u;
            break;
        case XOP_SEL:
            sp -= 2;
            for (size_t i = 0; i < m; i++)
                st->v[sp - 1][i] = st->v[sp - 1][i] ? st->v[sp][i] : st->v[sp + 1][i];
            break;
        }
    }
}

/* merge the sorted pairs c[0 .. m) into the sorted best (have of them, k of
 * room) through tmp */
static void qmerge(okey_pair *best, size_t *have, const okey_pair *c, size_t m, size_t k,
                   okey_pair *tmp)
{
    size_t a = 0, b = 0, w = 0;
    while (w < k && (a < *have || b < m)) {
        if (b >= m || (a < *have && pair_better(&best[a], &c[b])))
            tmp[w++] = best[a++];
        else
            tmp[w++] = c[b++];
    }
    memcpy(best, tmp, w * sizeof *best);
    *have = w;
}

/* the rows of [lo, hi) on this thread: its best min(k, passing) in best
 * (sorted), the rows that pass in *passing.  Once it holds k, a block's
 * candidates come from the heap's SIMD scan (isa.h: the rows whose key is
 * above the k-th's), a row the filter drops first set to the worst score
 * (-inf largest first, NaN smallest first), whose key is never above a real
 * one: no branch a row on the filter (at selectivity 0.5 that branch cost as
 * much as the evaluation). */
static void query_range(const cltopk_query_job *job, const cpu_isa_ops *ops, size_t lo,
                        size_t hi, qstack *st, okey_pair *best, size_t *have, okey_pair *cand,
                        okey_pair *tmp, uint64_t *pass, size_t *passing)
{
    const int f64 = job->q->score64, sm = job->smallest, wh = job->q->has_where;
    const size_t k = job->k;
    const uint64_t worst = cltopk_query_worst(f64, sm);
    uint32_t w[QB];
    *have = 0;
    *passing = 0;
    for (size_t r0 = lo; r0 < hi; r0 += QB) {
        size_t m = hi - r0 < QB ? hi - r0 : QB;
        if (wh) {
            eval_block(&job->q->where, job, r0, m, st);
            memcpy(pass, st->v[0], m * sizeof *pass);
        }
        eval_block(&job->q->order, job, r0, m, st);
        uint64_t *v = st->v[0];
        size_t c = 0;
        if (*have == k) {
            size_t np = m;
            if (wh) {
                np = 0;
                for (size_t i = 0; i < m; i++) {
                    /* a mask, not a branch (gcc made `pass ? v : worst` one) */
                    uint64_t keep = 0 - (uint64_t)(pass[i] != 0);
                    np += keep & 1u;
                    v[i] = (v[i] & keep) | (worst & ~keep);
                }
            }
            *passing += np;
            const uint64_t thr = best[k - 1].u;
            if (f64) {
                for (size_t j = ops->skip64(v, 0, m, KIND_FLOAT, sm, thr); j < m;
                     j = ops->skip64(v, j + 1, m, KIND_FLOAT, sm, thr))
                    cand[c++] = (okey_pair){order_key64(v[j], KIND_FLOAT, sm), (int64_t)(r0 + j)};
            } else {
                for (size_t i = 0; i < m; i++)
                    w[i] = (uint32_t)v[i];
                for (size_t j = ops->skip32(w, 0, m, KIND_FLOAT, sm, (uint32_t)thr); j < m;
                     j = ops->skip32(w, j + 1, m, KIND_FLOAT, sm, (uint32_t)thr))
                    cand[c++] = (okey_pair){order_key32(w[j], KIND_FLOAT, sm), (int64_t)(r0 + j)};
            }
        } else {
            for (size_t i = 0; i < m; i++) {
                if (wh && !pass[i])
                    continue;
                (*passing)++;
                uint64_t key = f64 ? order_key64(v[i], KIND_FLOAT, sm)
                                   : order_key32((uint32_t)v[i], KIND_FLOAT, sm);
                cand[c++] = (okey_pair){key, (int64_t)(r0 + i)};
            }
        }
        if (c) {
            cltopk_sort_pairs(cand, c);
            qmerge(best, have, cand, c < k ? c : k, k, tmp);
        }
    }
}

int cltopk_cpu_query(const cltopk_query_job *job)
{
    const size_t k = job->k, n = job->n;
    const cpu_isa_ops *ops = cltopk_cpu_ops();
    int nt = cltopk_cpu_threads();
    size_t per = 64 * (size_t)QB; /* rows a thread at least */
    if ((size_t)nt > (n + per - 1) / per)
        nt = (int)((n + per - 1) / per);
    if (nt < 1)
        nt = 1;
    qstack *st = malloc((size_t)nt * sizeof *st);
    okey_pair *best = malloc(((size_t)nt * k + 1) * sizeof *best);
    okey_pair *cand = malloc((size_t)nt * (QB + 2 * k + 1) * sizeof *cand);
    uint64_t *pass = malloc((size_t)nt * QB * sizeof *pass);
    size_t *have = calloc((size_t)nt, sizeof *have), *passing = calloc((size_t)nt, sizeof *passing);
    if (!st || !best || !cand || !pass || !have || !passing) {
        free(st), free(best), free(cand), free(pass), free(have), free(passing);
        return CLTOPK_ERR_NO_MEMORY;
    }
    if (k > 0 && n > 0) {
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(static, 1) if (nt > 1)
#endif
        for (int t = 0; t < nt; t++) {
            size_t lo = n / (size_t)nt * (size_t)t + ((size_t)t < n % (size_t)nt ? (size_t)t : n % (size_t)nt);
            size_t len = n / (size_t)nt + ((size_t)t < n % (size_t)nt);
            okey_pair *c = cand + (size_t)t * (QB + 2 * k + 1);
            query_range(job, ops, lo, lo + len, &st[t], best + (size_t)t * k, &have[t], c,
                        c + QB, pass + (size_t)t * QB, &passing[t]);
        }
    }
    /* the threads' lists: all together, sorted, the first k */
    size_t total = 0, count = 0;
    for (int t = 0; t < nt; t++) {
        memmove(best + total, best + (size_t)t * k, have[t] * sizeof *best);
        total += have[t];
        count += passing[t];
    }
    cltopk_sort_pairs(best, total);
    if (total > k)
        total = k;
    const int f64 = job->q->score64;
    const size_t w = f64 ? 8 : 4;
    for (size_t i = 0; i < k; i++) {
        if (i < total) {
            size_t row = (size_t)best[i].i;
            if (job->out_scores) {
                eval_block(&job->q->order, job, row, 1, &st[0]);
                uint64_t b = st[0].v[0][0];
                if (f64 ? isnan(as_f64(b)) : isnan(as_f32(b)))
                    b = f64 ? 0x7FF8000000000000ull : 0x7FC00000u;
                if (f64) {
                    memcpy((char *)job->out_scores + i * w, &b, 8);
                } else {
                    uint32_t u = (uint32_t)b;
                    memcpy((char *)job->out_scores + i * w, &u, 4);
                }
            }
            if (job->out_index)
                job->out_index[i] = (int64_t)row;
        } else {
            if (job->out_scores)
                memset((char *)job->out_scores + i * w, 0, w);
            if (job->out_index)
                job->out_index[i] = -1;
        }
    }
    if (job->out_count)
        *job->out_count = count < k ? count : k;
    free(st), free(best), free(cand), free(pass), free(have), free(passing);
    return CLTOPK_OK;
}
