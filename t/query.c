/* query.c - TAP test of cltopk_query_topk, cltopk_query_topk_buffer and
 * cltopk_query_check.
 *
 * The reference is this file's own: random expression trees (a bounded
 * generator: a few from a fixed seed, the same every run, then more from the
 * run's seed; both printed) are rendered to text for the library and
 * evaluated here by walking the tree with the typing rules of cltopk.h (exact
 * comparisons of integer terms, everything else one rounding an operation in
 * the score type), then the rows that pass are ordered by (score in THE ORDER,
 * row) with a plain sort.  log and exp, whose bits are cltopk's own, are
 * checked against the C library within a tolerance and for the same bits on
 * every device.  Every column type, NaN, infinities, -0, the integer extremes;
 * division by zero (of positive, negative, zero and NaN values, float and
 * integer columns, over +0 and -0), NaN and both zeros in the order, and
 * comparisons with NaN in a where clause, with rows and score bits written
 * out by hand from cltopk.h's rules, in both score types on every device (the
 * cpu one too); the paper's three queries on a tweet-like table; filters
 * passing no row, one row, fewer than k, every row; k = 0, n = 0; the CPU
 * context, the host form on the OpenCL context and the cl_mem form (the device
 * kernel built for each query, and for some queries also the interpreter,
 * CLTOPK_QUERY=spec=0, and the threshold, thr=1) give the same rows and score
 * bits; the specialised kernel at its limits (64 operations, 32 stack slots)
 * and one operation past them (the interpreter), with the explanation naming
 * each.  Malformed expressions and arguments: a negative status with a detail
 * naming the exact position, nothing written; through both forms on a fresh
 * context of the OpenCL device with the binary cache in a fresh directory,
 * nothing compiled (no binary written there, where a well-formed query then
 * writes one: make check-full).
 *
 * Built with -DQUERY_SF=1 (t/query_sf.t): the sample-filter query
 * (CLTOPK_QUERY=path=sf) against the same reference, on the cl_mem form of
 * the OpenCL device only: the paper's queries, random trees over every column
 * type, filters passing no row, one, fewer than k, every row, NaN and
 * division by zero, each exceptional path forced and checked (check=served
 * or fallback: too few survivors, an overflowing survivor buffer, every row
 * surviving), the specialised kernel once; and cltopk_benchmark_query_peer. */
#include "tap.h"
#include "testlib.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

static rng_t rng;

#ifndef QUERY_SF
#define QUERY_SF 0
#endif
/* QUERY_SF: the CLTOPK_QUERY options added to every check (sf_env), and only
 * the cl_mem form on the OpenCL device checked */
static const char *sf_env = "path=sf";

/* ------------------------------------------------------------ the table */

#define NCOL 8
typedef struct {
    cltopk_column cols[NCOL];
    int ncols;
    size_t n;
    void *data[NCOL];
} table;

static const char *const colnames[NCOL] = {"f", "d", "i", "u", "l", "ul", "x_2", "Y"};

/* a value of type t: specials one time in eight */
static void gen_value(cltopk_dtype t, void *p)
{
    int special = rng_below(&rng, 8) == 0;
    uint64_t r = rng_next(&rng);
    switch (t) {
    case CLTOPK_FLOAT32: {
        static const float sp[] = {NAN, INFINITY, -INFINITY, -0.0f, 0.0f, 1e-40f, 3.4e38f, -1.0f};
        float v = special ? sp[r % 8] : (float)((int)(r % 2001) - 1000) / 8.0f;
        memcpy(p, &v, 4);
        return;
    }
    case CLTOPK_FLOAT64: {
        static const double sp[] = {NAN, INFINITY, -INFINITY, -0.0, 0.0, 1e-310, 1e300, 0.1};
        double v = special ? sp[r % 8] : (double)((int64_t)(r % 200001) - 100000) / 64.0;
        memcpy(p, &v, 8);
        return;
    }
    case CLTOPK_INT32: {
        static const int32_t sp[] = {INT32_MIN, INT32_MAX, 0, -1, 1, 16777217, -16777217, 7};
        int32_t v = special ? sp[r % 8] : (int32_t)(r % 201) - 100;
        memcpy(p, &v, 4);
        return;
    }
    case CLTOPK_UINT32: {
        static const uint32_t sp[] = {0, UINT32_MAX, 1, 16777217, 2147483648u, 5, 6, 7};
        uint32_t v = special ? sp[r % 8] : (uint32_t)(r % 201);
        memcpy(p, &v, 4);
        return;
    }
    case CLTOPK_INT64: {
        static const int64_t sp[] = {INT64_MIN, INT64_MAX, 0, -1, 9007199254740993LL,
                                     -9007199254740993LL, 4294967296LL, 3};
        int64_t v = special ? sp[r % 8] : (int64_t)(r % 201) - 100;
        memcpy(p, &v, 8);
        return;
    }
    default: {
        static const uint64_t sp[] = {0, UINT64_MAX, 1, 9007199254740993ULL,
                                      9223372036854775808ULL, 18446744073709551615ULL - 1, 2, 3};
        uint64_t v = special ? sp[r % 8] : r % 201;
        memcpy(p, &v, 8);
        return;
    }
    }
}

static void table_make(table *tb, size_t n)
{
    static const cltopk_dtype types[NCOL] = {CLTOPK_FLOAT32, CLTOPK_FLOAT64, CLTOPK_INT32,
                                             CLTOPK_UINT32,  CLTOPK_INT64,   CLTOPK_UINT64,
                                             CLTOPK_INT32,   CLTOPK_FLOAT32};
    tb->n = n;
    tb->ncols = NCOL;
    for (int c = 0; c < NCOL; c++) {
        size_t w = tsize(types[c]);
        tb->data[c] = bmalloc(n * w + 8);
        for (size_t i = 0; i < n; i++)
            gen_value(types[c], (char *)tb->data[c] + i * w);
        tb->cols[c] = (cltopk_column){colnames[c], types[c], tb->data[c]};
    }
}

static void table_free(table *tb)
{
    for (int c = 0; c < tb->ncols; c++)
        free(tb->data[c]);
}

/* ------------------------------------------------------------ expression trees */

enum { E_COL, E_LITI, E_LITF, E_BIN, E_NEG, E_FN1, E_FN2, E_IF, E_CMP, E_AND, E_OR, E_NOT };
typedef struct enode {
    int kind, op, col;
    uint64_t bits; /* E_LITI: two's complement */
    int neg;
    char text[32]; /* E_LITF */
    struct enode *a[3];
} enode;

static enode pool[4096];
static int npool;

static enode *en(int kind)
{
    if (npool >= 4096)
        bail("expression pool exhausted");
    enode *x = &pool[npool++];
    memset(x, 0, sizeof *x);
    x->kind = kind;
    return x;
}

static int col_int(const table *tb, int c)
{
    return !is_float(tb->cols[c].type);
}

static enode *gen_num(const table *tb, int depth, int allow_logexp);

static enode *gen_int_term(const table *tb)
{
    if (rng_below(&rng, 2)) {
        int c;
        do
            c = (int)rng_below(&rng, NCOL);
        while (!col_int(tb, c));
        enode *x = en(E_COL);
        x->col = c;
        return x;
    }
    enode *x = en(E_LITI);
    static const uint64_t mags[] = {0, 1, 7, 100, 16777217, 9007199254740993ULL,
                                    9223372036854775808ULL, UINT64_MAX};
    uint64_t m = mags[rng_below(&rng, 8)];
    if (m && m <= 9223372036854775808ULL && rng_below(&rng, 2)) {
        x->neg = 1;
        x->bits = (uint64_t)0 - m;
    } else {
        x->bits = m;
    }
    x->op = (int)rng_below(&rng, 2); /* 1: hexadecimal text */
    return x;
}

static enode *gen_cond(const table *tb, int depth, int allow_logexp)
{
    int r = depth <= 0 ? 0 : (int)rng_below(&rng, 6);
    if (r <= 2) {
        enode *x = en(E_CMP);
        x->op = (int)rng_below(&rng, 6);
        if (rng_below(&rng, 2)) {
            x->a[0] = gen_int_term(tb);
            x->a[1] = gen_int_term(tb);
        } else {
            x->a[0] = gen_num(tb, depth - 1, allow_logexp);
            x->a[1] = gen_num(tb, depth - 1, allow_logexp);
        }
        return x;
    }
    if (r == 3) {
        enode *x = en(E_NOT);
        x->a[0] = gen_cond(tb, depth - 1, allow_logexp);
        return x;
    }
    enode *x = en(r == 4 ? E_AND : E_OR);
    x->a[0] = gen_cond(tb, depth - 1, allow_logexp);
    x->a[1] = gen_cond(tb, depth - 1, allow_logexp);
    return x;
}

static enode *gen_num(const table *tb, int depth, int allow_logexp)
{
    int r = depth <= 0 ? (int)rng_below(&rng, 3) : (int)rng_below(&rng, 10);
    if (r == 0) {
        enode *x = en(E_COL);
        x->col = (int)rng_below(&rng, NCOL);
        return x;
    }
    if (r == 1)
        return gen_int_term(tb);
    if (r == 2) {
        enode *x = en(E_LITF);
        static const char *const lits[] = {"0.5", "1.5", "2e3", ".25", "0.1", "3.4e38",
                                           "1e-3", "0.0", "7.", "1E+2"};
        snprintf(x->text, sizeof x->text, "%s", lits[rng_below(&rng, 10)]);
        x->neg = rng_below(&rng, 4) == 0;
        return x;
    }
    if (r <= 5) {
        enode *x = en(E_BIN);
        x->op = (int)rng_below(&rng, 4);
        x->a[0] = gen_num(tb, depth - 1, allow_logexp);
        x->a[1] = gen_num(tb, depth - 1, allow_logexp);
        return x;
    }
    if (r == 6) {
        enode *x = en(E_NEG);
        x->a[0] = gen_num(tb, depth - 1, allow_logexp);
        return x;
    }
    if (r == 7) {
        enode *x = en(E_FN1);
        x->op = (int)rng_below(&rng, allow_logexp ? 6 : 4); /* abs sqrt floor ceil [log exp] */
        x->a[0] = gen_num(tb, depth - 1, allow_logexp);
        return x;
    }
    if (r == 8) {
        enode *x = en(E_FN2);
        x->op = (int)rng_below(&rng, 2);
        x->a[0] = gen_num(tb, depth - 1, allow_logexp);
        x->a[1] = gen_num(tb, depth - 1, allow_logexp);
        return x;
    }
    enode *x = en(E_IF);
    x->a[0] = gen_cond(tb, depth - 1, allow_logexp);
    x->a[1] = gen_num(tb, depth - 1, allow_logexp);
    x->a[2] = gen_num(tb, depth - 1, allow_logexp);
    return x;
}

/* the text of a tree, fully parenthesised where it matters, with spacing
 * varied */
static void render(const enode *x, char *buf, size_t len, size_t *at)
{
#define PUT(...)                                                                              \
    do {                                                                                      \
        int w_ = snprintf(buf + *at, *at < len ? len - *at : 0, __VA_ARGS__);                 \
        if (w_ > 0)                                                                           \
            *at += (size_t)w_;                                                                \
    } while (0)
    static const char *const bins[] = {"+", "-", "*", "/"};
    static const char *const cmps[] = {"<", "<=", ">", ">=", "==", "!="};
    static const char *const fn1[] = {"abs", "sqrt", "floor", "ceil", "log", "exp"};
    const char *sp = rng_below(&rng, 2) ? " " : "";
    switch (x->kind) {
    case E_COL: PUT("%s", colnames[x->col]); break;
    case E_LITI:
        if (x->neg)
            PUT("(-%s%llu)", sp, (unsigned long long)((uint64_t)0 - x->bits));
        else if (x->op)
            PUT("0x%llX", (unsigned long long)x->bits);
        else
            PUT("%llu", (unsigned long long)x->bits);
        break;
    case E_LITF: PUT(x->neg ? "(-%s)" : "%s", x->text); break;
    case E_BIN:
        PUT("(");
        render(x->a[0], buf, len, at);
        PUT("%s%s%s", sp, bins[x->op], sp);
        render(x->a[1], buf, len, at);
        PUT(")");
        break;
    case E_NEG:
        PUT("-(");
        render(x->a[0], buf, len, at);
        PUT(")");
        break;
    case E_FN1:
        PUT("%s(", fn1[x->op]);
        render(x->a[0], buf, len, at);
        PUT(")");
        break;
    case E_FN2:
        PUT("%s(", x->op ? "max" : "min");
        render(x->a[0], buf, len, at);
        PUT(",%s", sp);
        render(x->a[1], buf, len, at);
        PUT(")");
        break;
    case E_IF:
        PUT("if(");
        render(x->a[0], buf, len, at);
        PUT(", ");
        render(x->a[1], buf, len, at);
        PUT(", ");
        render(x->a[2], buf, len, at);
        PUT(")");
        break;
    case E_CMP:
        PUT("(");
        render(x->a[0], buf, len, at);
        PUT(" %s ", cmps[x->op]);
        render(x->a[1], buf, len, at);
        PUT(")");
        break;
    case E_AND:
    case E_OR:
        PUT("(");
        render(x->a[0], buf, len, at);
        PUT(" %s ", x->kind == E_AND ? "and" : "or");
        render(x->a[1], buf, len, at);
        PUT(")");
        break;
    case E_NOT:
        PUT("not ");
        render(x->a[0], buf, len, at);
        break;
    }
#undef PUT
}

/* ------------------------------------------------------------ the reference */

/* a column value as an exact integer: (negative, 64 bits) */
static void ref_exact(const table *tb, int c, size_t i, int *neg, uint64_t *v)
{
    const void *d = tb->data[c];
    switch (tb->cols[c].type) {
    case CLTOPK_INT32: {
        int32_t x = ((const int32_t *)d)[i];
        *neg = x < 0, *v = (uint64_t)(int64_t)x;
        return;
    }
    case CLTOPK_UINT32: *neg = 0, *v = ((const uint32_t *)d)[i]; return;
    case CLTOPK_INT64: {
        int64_t x = ((const int64_t *)d)[i];
        *neg = x < 0, *v = (uint64_t)x;
        return;
    }
    default: *neg = 0, *v = ((const uint64_t *)d)[i]; return;
    }
}

static double ref_col64(const table *tb, int c, size_t i)
{
    const void *d = tb->data[c];
    switch (tb->cols[c].type) {
    case CLTOPK_FLOAT32: return ((const float *)d)[i];
    case CLTOPK_FLOAT64: return ((const double *)d)[i];
    case CLTOPK_INT32: return ((const int32_t *)d)[i];
    case CLTOPK_UINT32: return ((const uint32_t *)d)[i];
    case CLTOPK_INT64: return (double)((const int64_t *)d)[i];
    default: return (double)((const uint64_t *)d)[i];
    }
}

static float ref_col32(const table *tb, int c, size_t i)
{
    const void *d = tb->data[c];
    switch (tb->cols[c].type) {
    case CLTOPK_FLOAT32: return ((const float *)d)[i];
    case CLTOPK_FLOAT64: return (float)((const double *)d)[i];
    case CLTOPK_INT32: return (float)((const int32_t *)d)[i];
    case CLTOPK_UINT32: return (float)((const uint32_t *)d)[i];
    case CLTOPK_INT64: return (float)((const int64_t *)d)[i];
    default: return (float)((const uint64_t *)d)[i];
    }
}

static int is_int_term(const table *tb, const enode *x)
{
    return x->kind == E_LITI || (x->kind == E_COL && col_int(tb, x->col));
}

static int ref_cond(const table *tb, const enode *x, size_t i, int f64);

static double ref_num(const table *tb, const enode *x, size_t i, int f64)
{
#define R(v) (f64 ? (double)(v) : (double)(float)(v))
    switch (x->kind) {
    case E_COL: return f64 ? ref_col64(tb, x->col, i) : ref_col32(tb, x->col, i);
    case E_LITI:
        if (f64)
            return x->neg ? (double)(int64_t)x->bits : (double)x->bits;
        return x->neg ? (float)(int64_t)x->bits : (float)x->bits;
    case E_LITF: {
        char t[40];
        snprintf(t, sizeof t, "%s%s", x->neg ? "-" : "", x->text);
        return f64 ? strtod(t, NULL) : strtof(t, NULL);
    }
    case E_BIN: {
        double a = ref_num(tb, x->a[0], i, f64), b = ref_num(tb, x->a[1], i, f64);
        if (f64) {
            switch (x->op) {
            case 0: return a + b;
            case 1: return a - b;
            case 2: return a * b;
            default: return a / b;
            }
        }
        float fa = (float)a, fb = (float)b;
        switch (x->op) {
        case 0: return fa + fb;
        case 1: return fa - fb;
        case 2: return fa * fb;
        default: return fa / fb;
        }
    }
    case E_NEG: return -ref_num(tb, x->a[0], i, f64);
    case E_FN1: {
        double a = ref_num(tb, x->a[0], i, f64);
        switch (x->op) {
        case 0: return fabs(a);
        case 1: return f64 ? sqrt(a) : sqrtf((float)a);
        case 2: return floor(a);
        default: return ceil(a);
        }
    }
    case E_FN2: {
        double a = ref_num(tb, x->a[0], i, f64), b = ref_num(tb, x->a[1], i, f64);
        if (isnan(a) || isnan(b))
            return NAN;
        return x->op ? (b > a ? b : a) : (b < a ? b : a);
    }
    case E_IF:
        return ref_cond(tb, x->a[0], i, f64) ? ref_num(tb, x->a[1], i, f64)
                                              : ref_num(tb, x->a[2], i, f64);
    }
    return 0;
#undef R
}

static int ref_cond(const table *tb, const enode *x, size_t i, int f64)
{
    switch (x->kind) {
    case E_CMP: {
        if (is_int_term(tb, x->a[0]) && is_int_term(tb, x->a[1])) {
            int an, bn;
            uint64_t av, bv;
            if (x->a[0]->kind == E_COL)
                ref_exact(tb, x->a[0]->col, i, &an, &av);
            else
                an = x->a[0]->neg, av = x->a[0]->bits;
            if (x->a[1]->kind == E_COL)
                ref_exact(tb, x->a[1]->col, i, &bn, &bv);
            else
                bn = x->a[1]->neg, bv = x->a[1]->bits;
            /* mathematical values: a negative one is below every other */
            int lt = an != bn ? an : av < bv, eq = an == bn && av == bv;
            switch (x->op) {
            case 0: return lt;
            case 1: return lt || eq;
            case 2: return !lt && !eq;
            case 3: return !lt;
            case 4: return eq;
            default: return !eq;
            }
        }
        double a = ref_num(tb, x->a[0], i, f64), b = ref_num(tb, x->a[1], i, f64);
        switch (x->op) {
        case 0: return a < b;
        case 1: return a <= b;
        case 2: return a > b;
        case 3: return a >= b;
        case 4: return a == b;
        default: return a != b;
        }
    }
    case E_AND: return ref_cond(tb, x->a[0], i, f64) & ref_cond(tb, x->a[1], i, f64);
    case E_OR: return ref_cond(tb, x->a[0], i, f64) | ref_cond(tb, x->a[1], i, f64);
    case E_NOT: return !ref_cond(tb, x->a[0], i, f64);
    }
    return 0;
}

/* the score's bits in THE ORDER (a NaN the quiet one) */
static uint64_t score_bits(double v, int f64)
{
    if (isnan(v))
        return f64 ? 0x7FF8000000000000ull : 0x7FC00000u;
    if (f64) {
        uint64_t b;
        memcpy(&b, &v, 8);
        return b;
    }
    float f = (float)v;
    uint32_t b;
    memcpy(&b, &f, 4);
    return b;
}

/* order key: larger first */
static uint64_t key_of(uint64_t bits, int f64, int smallest)
{
    uint64_t sign = f64 ? 1ull << 63 : 1ull << 31, ones = f64 ? ~0ull : 0xFFFFFFFFull;
    uint64_t u;
    uint64_t mag = bits & ~sign;
    if (mag > (f64 ? 0x7FF0000000000000ull : 0x7F800000ull))
        u = ones;
    else {
        if (bits == sign)
            bits = 0;
        u = (bits & sign) ? (~bits & ones) : (bits | sign);
    }
    return smallest ? (~u & ones) : u;
}

typedef struct {
    uint64_t key, bits;
    size_t row;
} refrow;

static int cmp_ref(const void *a, const void *b)
{
    const refrow *x = a, *y = b;
    if (x->key != y->key)
        return x->key > y->key ? -1 : 1;
    return (x->row > y->row) - (x->row < y->row);
}

/* the expected outputs: k rows and score bits, the count */
static size_t expect(const table *tb, const enode *order, const enode *where, size_t k, int f64,
                     int smallest, int64_t *eidx, uint64_t *ebits)
{
    refrow *rr = bmalloc(tb->n * sizeof *rr + 1);
    size_t m = 0;
    for (size_t i = 0; i < tb->n; i++) {
        if (where && !ref_cond(tb, where, i, f64))
            continue;
        uint64_t b = score_bits(ref_num(tb, order, i, f64), f64);
        rr[m++] = (refrow){key_of(b, f64, smallest), b, i};
    }
    qsort(rr, m, sizeof *rr, cmp_ref);
    size_t count = m < k ? m : k;
    for (size_t i = 0; i < k; i++) {
        eidx[i] = i < count ? (int64_t)rr[i].row : -1;
        ebits[i] = i < count ? rr[i].bits : 0;
    }
    free(rr);
    return count;
}

/* ------------------------------------------------------------ running */

enum { VIA_HOST = 0, VIA_BUFFER = 1 };

/* run one query on ctx (host form, or the cl_mem form) with poisoned outputs;
 * status, outputs, count.  oidx holds k + 1 entries: the cl_mem form's index
 * buffer is made from k + 1 (one past the outputs, poisoned too) */
static int run_query(cltopk_context *ctx, int via, const table *tb, const char *order,
                     const char *where, size_t k, int f64, int smallest, int64_t *oidx,
                     uint64_t *obits, size_t *count)
{
    size_t w = f64 ? 8 : 4;
    unsigned char *os = bmalloc(k * w + 8);
    memset(os, 0xA5, k * w + 8);
    for (size_t i = 0; i <= k; i++)
        oidx[i] = -77;
    *count = 12345;
    cltopk_dtype st_ = f64 ? CLTOPK_FLOAT64 : CLTOPK_FLOAT32;
    unsigned flags = smallest ? CLTOPK_SMALLEST : 0;
    int st;
#if CLTOPK_HAVE_OPENCL
    if (via == VIA_BUFFER) {
        cl_context cctx;
        cl_device_id dev;
        cl_command_queue q;
        if (cltopk_get_cl(ctx, &cctx, &dev, &q) != CLTOPK_OK)
            bail("cltopk_get_cl: %s", cltopk_last_error(ctx));
        cl_mem dc[NCOL];
        size_t offs[NCOL];
        cl_int err;
        for (int c = 0; c < tb->ncols; c++) {
            size_t es = tsize(tb->cols[c].type);
            offs[c] = (size_t)c % 3; /* columns from element 0, 1 or 2 */
            unsigned char *h = bmalloc((tb->n + 3) * es);
            memset(h, 0x5A, (tb->n + 3) * es);
            memcpy(h + offs[c] * es, tb->data[c], tb->n * es);
            dc[c] = clCreateBuffer(cctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                   (tb->n + 3) * es, h, &err);
            free(h);
        }
        cl_mem ms = clCreateBuffer(cctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, k * w + 8, os,
                                   &err);
        cl_mem mi = clCreateBuffer(cctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, k * 8 + 8,
                                   oidx, &err);
        cl_ulong c0 = 12345;
        cl_mem mc = clCreateBuffer(cctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, 8, &c0, &err);
        cl_event done = NULL;
        st = cltopk_query_topk_buffer(ctx, tb->cols, dc, offs, (size_t)tb->ncols, tb->n, order,
                                      where, k, flags, st_, ms, mi, mc, 0, NULL, &done);
        if (st == CLTOPK_OK) {
            clWaitForEvents(1, &done);
            clReleaseEvent(done);
            clEnqueueReadBuffer(q, ms, CL_TRUE, 0, k * w, os, 0, NULL, NULL);
            clEnqueueReadBuffer(q, mi, CL_TRUE, 0, k * 8, oidx, 0, NULL, NULL);
            clEnqueueReadBuffer(q, mc, CL_TRUE, 0, 8, &c0, 0, NULL, NULL);
            *count = (size_t)c0;
        }
        for (int c = 0; c < tb->ncols; c++)
            clReleaseMemObject(dc[c]);
        clReleaseMemObject(ms);
        clReleaseMemObject(mi);
        clReleaseMemObject(mc);
    } else
#endif
        st = cltopk_query_topk(ctx, tb->cols, (size_t)tb->ncols, tb->n, order, where, k, flags,
                               st_, os, oidx, count);
    (void)via;
    for (size_t i = 0; i < k; i++) {
        if (f64) {
            memcpy(&obits[i], os + i * 8, 8);
        } else {
            uint32_t b;
            memcpy(&b, os + i * 4, 4);
            obits[i] = b;
        }
    }
    free(os);
    return st;
}

static const char *via_name(int via)
{
    return via == VIA_BUFFER ? "buffer" : "host";
}

/* one query against the reference on ctx */
static void check_query(cltopk_context *ctx, const char *dev, int via, const table *tb,
                        const enode *ordt, const enode *wheret, const char *order,
                        const char *where, size_t k, int f64, int smallest, const char *what)
{
    char env[256] = "", *before = NULL;
    if (QUERY_SF) {
        if (via != VIA_BUFFER || !strcmp(dev, "cpu"))
            return;
        const char *e = getenv("CLTOPK_QUERY");
        before = e ? strdup(e) : NULL;
        snprintf(env, sizeof env, "%s%s%s", e ? e : "", e ? "," : "", sf_env);
        setenv("CLTOPK_QUERY", env, 1);
    }
    int64_t *eidx = bmalloc(k * 8 + 8), *oidx = bmalloc(k * 8 + 8);
    uint64_t *ebits = bmalloc(k * 8 + 8), *obits = bmalloc(k * 8 + 8);
    size_t ecount = expect(tb, ordt, wheret, k, f64, smallest, eidx, ebits), count;
    int st = run_query(ctx, via, tb, order, where, k, f64, smallest, oidx, obits, &count);
    if (QUERY_SF) {
        if (before)
            setenv("CLTOPK_QUERY", before, 1);
        else
            unsetenv("CLTOPK_QUERY");
        free(before);
    }
    char msg[256] = "";
    int good = st == CLTOPK_OK && count == ecount;
    for (size_t i = 0; good && i < k; i++)
        if (oidx[i] != eidx[i] || obits[i] != ebits[i]) {
            snprintf(msg, sizeof msg, "at %zu: row %lld (want %lld), score 0x%llx (want 0x%llx)",
                     i, (long long)oidx[i], (long long)eidx[i], (unsigned long long)obits[i],
                     (unsigned long long)ebits[i]);
            good = 0;
        }
    if (!ok(good, "%s %s%s%s: %s, %s scores, %s, k %zu, n %zu (%zu returned)", dev,
            via_name(via), env[0] ? ", CLTOPK_QUERY=" : "", env, what,
            f64 ? "float64" : "float32", smallest ? "smallest" : "largest", k, tb->n, ecount)) {
        diag("order_by: %s", order);
        diag("where: %s", where ? where : "(none)");
        diag("status %d (%s), count %zu (want %zu) %s", st, cltopk_last_error(ctx), count, ecount,
             msg);
    }
    free(eidx), free(oidx), free(ebits), free(obits);
}

/* ------------------------------------------------------------ the parts */

static void random_queries(cltopk_context *const *ctxs, const char *const *devs, int nctx,
                           int first, int count, const char *label)
{
    table tb;
    char what[128];
    table_make(&tb, 3000 + (size_t)rng_below(&rng, 3000));
    for (int t = first; t < first + count; t++) {
        npool = 0;
        /* QUERY_SF: float32 scores and k below 64, the two programs of the
         * sample-filter query that the paper's queries built (builds are
         * minutes on POCL) */
        int f64 = QUERY_SF ? 0 : t & 1, smallest = (t >> 1) & 1;
        enode *ordt = gen_num(&tb, 1 + (int)rng_below(&rng, 4), 0);
        enode *wheret = rng_below(&rng, 3) ? gen_cond(&tb, 1 + (int)rng_below(&rng, 3), 0) : NULL;
        char order[2048], where[2048];
        size_t at = 0;
        render(ordt, order, sizeof order, &at);
        at = 0;
        if (wheret)
            render(wheret, where, sizeof where, &at);
        size_t k = 1 + rng_below(&rng, t % 5 == 0 && !QUERY_SF ? 600 : 60);
        for (int c = 0; c < nctx; c++)
            for (int via = 0; via <= (c > 0); via++)
                check_query(ctxs[c], devs[c], via, &tb, ordt, wheret, order,
                            wheret ? where : NULL, k, f64, smallest, label);
        /* the device's other paths (tables this small take the interpreter
         * by default): the specialised kernel (a program build each), alone
         * and with the threshold, and the interpreter with the threshold */
        static const char *const other[3] = {"spec=1", "spec=1,thr=1", "thr=1"};
        static const char *const otherw[3] = {"specialised (spec=1)",
                                              "specialised, threshold",
                                              "threshold (thr=1)"};
        int m = test_full() ? 6 : 15; /* every m-th tree builds a program */
        int o = t % m == 0 ? 0 : t % m == m / 2 ? 1 : t % 3 == 1 ? 2 : -1;
        /* make check: the threshold's programs for float32 scores and k up
         * to 60 only (each width and tile size is a program of two kernels,
         * some 5 s each to build on POCL) */
        if (!test_full() && o >= 1 && (f64 || t % 5 == 0))
            o = -1;
        if (nctx > 1 && o >= 0 && !QUERY_SF) {
            setenv("CLTOPK_QUERY", other[o], 1);
            snprintf(what, sizeof what, "%s, %s", label, otherw[o]);
            check_query(ctxs[1], devs[1], VIA_BUFFER, &tb, ordt, wheret, order,
                        wheret ? where : NULL, k, f64, smallest, what);
            unsetenv("CLTOPK_QUERY");
        }
    }
    table_free(&tb);
}

/* The random trees: a few from a fixed seed (the same trees, table and k
 * every run), then `count` from the run's seed (test_seed(): fresh each run,
 * or CLTOPK_TEST_SEED); both seeds printed */
#define FIXED_SEED 20170514u
static void random_runs(cltopk_context *const *ctxs, const char *const *devs, int nctx,
                        int fixed, int count)
{
    rng_t run = rng;
    rng_init(&rng, FIXED_SEED);
    diag("random trees: %d from the fixed seed %u (the same every run), then %d from the "
         "run's seed %llu", fixed, FIXED_SEED, count, (unsigned long long)test_seed());
    random_queries(ctxs, devs, nctx, 0, fixed, "random tree (fixed seed)");
    rng = run;
    /* (numbered on from the fixed ones: every m-th tree of both builds a
     * program, not the first of each) */
    random_queries(ctxs, devs, nctx, fixed, count, "random tree");
}

/* a sum of m columns (cycling through the table's), nested to the left
 * (a stack of 2 slots) or to the right (m slots) */
static enode *chain(int m, int right)
{
    enode *x = en(E_COL);
    x->col = (m - 1) % NCOL;
    for (int j = m - 2; j >= 0; j--) {
        enode *y = en(E_COL), *s = en(E_BIN);
        y->col = j % NCOL;
        s->op = 0;
        s->a[0] = right ? y : x;
        s->a[1] = right ? x : y;
        x = s;
    }
    return x;
}

/* the specialised device kernel at its limits: the longest program it
 * unrolls (64 operations), the deepest stack (32 slots: v31), one operation
 * more (the interpreter); each also through the interpreter (spec=0), and
 * the explanation naming the kernel that runs */
static void spec_limits(cltopk_context *ctx, const char *dev)
{
    table tb;
    table_make(&tb, 1500 + (size_t)rng_below(&rng, 1500));
    static const struct {
        int m, right, neg, spec;
        const char *what;
    } cases[] = {{32, 0, 1, 1, "64 operations (specialised)"},
                 {32, 1, 0, 1, "a stack of 32 slots (specialised)"},
                 {33, 0, 0, 0, "65 operations (the interpreter)"}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        npool = 0;
        enode *ordt = chain(cases[c].m, cases[c].right);
        if (cases[c].neg) {
            enode *x = en(E_NEG);
            x->a[0] = ordt;
            ordt = x;
        }
        /* i > -50 (most rows) or not (a random condition) */
        enode *wheret = en(E_OR), *gt = en(E_CMP), *lit = en(E_LITI), *no = en(E_NOT);
        lit->neg = 1;
        lit->bits = (uint64_t)0 - 50;
        gt->op = 2;
        gt->a[0] = en(E_COL);
        gt->a[0]->col = 2;
        gt->a[1] = lit;
        no->a[0] = gen_cond(&tb, 1, 0);
        wheret->a[0] = gt;
        wheret->a[1] = no;
        char order[4096], where[2048];
        size_t at = 0;
        render(ordt, order, sizeof order, &at);
        at = 0;
        render(wheret, where, sizeof where, &at);
        int f64 = (int)c & 1;
        char ex[4096] = "";
        setenv("CLTOPK_QUERY", "spec=1", 1);
        int st = cltopk_query_explain(ctx, tb.cols, (size_t)tb.ncols, tb.n, order, where, 20, 0,
                                      f64 ? CLTOPK_FLOAT64 : CLTOPK_FLOAT32, 1, ex, sizeof ex);
        const char *dl = strstr(ex, "\ndevice ");
        int says = dl && (cases[c].spec ? strstr(dl, "specialised to this query") != NULL
                                        : strstr(dl, "the interpreter of cl/query.cl (a program "
                                                     "longer") != NULL);
        if (!ok(st == CLTOPK_OK && says, "%s explain: %s", dev, cases[c].what))
            diag("status %d, explanation:\n%s", st, ex);
        for (int spec = 1; spec >= 0; spec--) {
            setenv("CLTOPK_QUERY", spec ? "spec=1" : "spec=0", 1);
            char what[128];
            snprintf(what, sizeof what, "%s%s", cases[c].what, spec ? "" : ", spec=0");
            check_query(ctx, dev, VIA_BUFFER, &tb, ordt, wheret, order, where, 20, f64, 0, what);
            unsetenv("CLTOPK_QUERY");
        }
    }
    setenv("CLTOPK_QUERY", "spec=3", 1);
    int64_t oi[5]; /* k + 1: run_query */
    uint64_t ob[4];
    size_t count;
    int st = run_query(ctx, VIA_BUFFER, &tb, "f", NULL, 4, 0, 0, oi, ob, &count);
    unsetenv("CLTOPK_QUERY");
    if (!ok(st == CLTOPK_ERR_UNSUPPORTED && strstr(cltopk_last_error(ctx), "CLTOPK_QUERY"),
            "%s: CLTOPK_QUERY=spec=3 is refused with a reason", dev))
        diag("status %d: %s", st, cltopk_last_error(ctx));
    table_free(&tb);
}

/* Q1's filter tweet_time < X at selectivity sel / 10 (tc: the time column),
 * its text in where */
static enode *q1_filter(enode *tc, int sel, char *where, size_t len)
{
    enode *x = en(E_LITI);
    x->bits = (uint64_t)(1493596800 + 267840 * (int64_t)sel);
    enode *cmp = en(E_CMP);
    cmp->op = 0, cmp->a[0] = tc, cmp->a[1] = x;
    snprintf(where, len, "tweet_time < %llu", (unsigned long long)x->bits);
    return cmp;
}

/* one of the paper's shapes on tb under CLTOPK_QUERY=env (sf_env), k = 50:
 * sel >= 0 Q1 at selectivity sel / 10, -1 Q2, -2 Q3 (rc, sum, orr, tc as in
 * sf_paths) */
static void sf_shape(cltopk_context *ctx, const char *dev, const table *tb, const char *env,
                     int sel, int f64, const char *what, enode *rc, enode *sum, enode *orr,
                     enode *tc)
{
    char where[128] = "lang == 1 or lang == 2";
    enode *w = sel >= 0 ? q1_filter(tc, sel, where, sizeof where) : sel == -2 ? orr : NULL;
    sf_env = env;
    check_query(ctx, dev, VIA_BUFFER, tb, sel == -1 ? sum : rc, w,
                sel == -1 ? "retweet_count + 0.5 * likes_count" : "retweet_count",
                w ? where : NULL, 50, f64, 0, what);
}

/* QUERY_SF: the sample-filter query's paths, each forced and checked, on the
 * tweet-like table (rc retweets, sum Q2's score, orr Q3's filter, tc the
 * time column, lc likes), NaN and division by zero, the specialised kernel;
 * and the device peer */
static void sf_paths(cltopk_context *ctx, const char *dev, const table *tb, enode *rc,
                     enode *sum, enode *orr, enode *tc, enode *lc)
{
    static const struct {
        const char *env, *what;
        int sel; /* Q1's selectivity / 10; -1: Q2, -2: Q3 */
    } cs[] = {
        {"path=sf,check=served", "Q1 at 0.5, its survivors serve", 5},
        {"path=sf,check=served", "Q1 at 0 (no row passes)", 0},
        {"path=sf,check=served", "Q1 at 1", 10},
        {"path=sf,check=served", "Q3", -2},
        {"path=sf,force=few,check=fallback", "Q2, too few survivors (force=few)", -1},
        {"path=sf,force=few,check=fallback", "Q3, too few survivors (force=few)", -2},
        {"path=sf,cap=1,check=fallback", "Q1 at 0.5, survivors overflow (cap=1)", 5},
        {"path=sf,force=all,check=fallback", "Q2, every row survives: overflow", -1},
        {"path=sf,force=all,cap=20000,check=served", "Q1 at 0.3, every passing row survives",
         3},
        {"path=sf,s=64,check=served", "Q2, the smallest sample", -1},
        {"path=tile", "Q2, the tile query (path=tile)", -1},
        {"spec=1,path=sf,check=served", "Q1 at 0.9, specialised kernels (spec=1)", 9},
        /* the one read's loads: the score's columns only where the filter
         * holds (lazy=1, a second kernel), every column at once (lazy=0),
         * chosen from the sample (auto: lazily where fewer than 1 / lazydiv
         * of the samples pass) */
        {"spec=1,path=sf,lazy=1,check=served", "Q1 at 0.1, the score's columns lazily", 1},
        {"spec=1,path=sf,lazy=0,check=served", "Q1 at 0.1, every column at once", 1},
        {"spec=1,path=sf,lazy=1,check=served", "Q1 at 0.9, the score's columns lazily", 9},
        {"spec=1,path=sf,lazy=1,check=served", "Q1 at 0, the score's columns lazily", 0},
        {"spec=1,path=sf,lazy=1,check=served", "Q3, the score's columns lazily", -2},
        {"spec=1,path=sf,lazy=1,check=served", "Q2 (no filter), the score's columns lazily", -1},
        {"spec=1,path=sf,lazy=1,force=few,check=fallback", "Q1 at 0.3, lazily, too few survivors",
         3},
        {"spec=1,path=sf,lazy=auto,lazydiv=2,check=served", "Q1 at 0.2, lazy chosen (lazydiv=2)",
         2},
        /* the sample's rows a work-item (more, smaller sample groups) */
        {"path=sf,srt=1,check=served", "Q1 at 0.5, one sample row a work-item (srt=1)", 5},
        {"path=sf,srt=3,s=64,check=served", "Q3, three sample rows a work-item, 64 samples", -2},
        {"spec=1,path=sf,srt=1,check=served", "Q2, specialised, one batch of samples (srt=1)", -1},
        {"spec=1,path=sf,srt=5,check=served", "Q1 at 0.7, specialised, srt=5 (whole batches)", 7},
    };
    for (size_t c = 0; c < sizeof cs / sizeof cs[0]; c++) {
        /* srt=3, srt=5 and the interpreter's srt=1 under make check-full:
         * programs of their own, some 20-30 s each to build on POCL (make
         * check keeps the specialised srt=1) */
        if (!test_full() && (strstr(cs[c].env, "srt=3") || strstr(cs[c].env, "srt=5") ||
                             !strcmp(cs[c].env, "path=sf,srt=1,check=served")))
            continue;
        sf_shape(ctx, dev, tb, cs[c].env, cs[c].sel, cs[c].sel == -1 && c % 2, cs[c].what, rc,
                 sum, orr, tc);
    }
    /* the one read's last tile, partial (its rows clamped and tested; the
     * table above is whole tiles): views of the first 20000 rows and of the
     * first 200 (shorter than one tile), each query shape, eagerly and lazily;
     * served or fallen back, the answer is exact */
    static const struct {
        const char *env;
        int sel;
    } zs[] = {{"spec=1,path=sf", 5}, {"spec=1,path=sf", -1}, {"spec=1,path=sf", -2},
              {"spec=1,path=sf,lazy=1", -2}, {"spec=1,path=sf,lazy=1", 3}, {"path=sf", -2}};
    static const size_t zn[2] = {20000, 200};
    for (size_t z = 0; z < 2; z++) {
        table tz = *tb;
        tz.n = zn[z] < tb->n ? zn[z] : tb->n;
        for (size_t c = 0; c < sizeof zs / sizeof zs[0]; c++)
            sf_shape(ctx, dev, &tz, zs[c].env, zs[c].sel, 0,
                     zs[c].sel == -1   ? "Q2, a last tile of the read partial"
                     : zs[c].sel == -2 ? "Q3, a last tile of the read partial"
                                       : "Q1, a last tile of the read partial",
                     rc, sum, orr, tc);
    }
    /* --explain names the lazy read where it may be taken */
    static const struct {
        const char *env, *says;
    } ex[] = {
        {"spec=1,path=sf", "only for the rows passing the filter where fewer than 1/32"},
        {"spec=1,path=sf,lazy=1,lazydiv=4", "(CLTOPK_QUERY lazy=1)"},
        {"spec=1,path=sf,lazy=0", NULL},
        {"spec=0,path=sf", NULL},
    };
    for (size_t e = 0; e < sizeof ex / sizeof ex[0]; e++) {
        char buf[4096] = "";
        setenv("CLTOPK_QUERY", ex[e].env, 1);
        int st = cltopk_query_explain(ctx, tb->cols, (size_t)tb->ncols, tb->n, "retweet_count",
                                      "lang == 1 or lang == 2", 50, 0, CLTOPK_FLOAT32, 1, buf,
                                      sizeof buf);
        unsetenv("CLTOPK_QUERY");
        const char *dl = strstr(buf, "\ndevice ");
        int good = st == CLTOPK_OK && dl && strstr(dl, "sample-filter query") &&
                   (ex[e].says ? strstr(dl, ex[e].says) != NULL
                               : strstr(dl, "only for the rows passing") == NULL);
        if (!ok(good, "%s explain, CLTOPK_QUERY=%s: %s", dev, ex[e].env,
                ex[e].says ? ex[e].says : "no lazy read"))
            diag("status %d, explanation:\n%s", st, buf);
    }
    /* NaN and infinities: retweets / (likes - likes), the largest and the
     * smallest */
    enode *d0 = en(E_BIN), *dv = en(E_BIN);
    d0->op = 1, d0->a[0] = lc, d0->a[1] = lc;
    dv->op = 3, dv->a[0] = rc, dv->a[1] = d0;
    sf_env = "path=sf,check=served";
    for (int sm = 0; sm < 2; sm++)
        check_query(ctx, dev, VIA_BUFFER, tb, dv, NULL,
                    "retweet_count / (likes_count - likes_count)", NULL, 40, sm, sm,
                    "division by zero: NaN and inf scores");
    sf_env = "path=sf";
    /* the device peer: runs, and refuses the cpu context */
    double tp = -1, ts = -1;
    int st = cltopk_benchmark_query_peer(ctx, tb->cols, (size_t)tb->ncols, tb->n,
                                         "retweet_count + 0.5 * likes_count",
                                         "lang == 1 or lang == 2", 20, 0, CLTOPK_FLOAT32, 2, &tp,
                                         &ts);
    cltopk_context *cpu = NULL;
    int st2 = cltopk_open(&cpu, "cpu") == CLTOPK_OK
                  ? cltopk_benchmark_query_peer(cpu, tb->cols, (size_t)tb->ncols, tb->n,
                                                "retweet_count", NULL, 20, 0, CLTOPK_FLOAT32, 2,
                                                &tp, NULL)
                  : -1;
    int st3 = cltopk_benchmark_query_peer(ctx, tb->cols, (size_t)tb->ncols, tb->n, "retweet_count",
                                          NULL, 20, 0, CLTOPK_FLOAT32, 0, &tp, NULL);
    /* its score kernel's last, partial tile (the first 20000 rows), the
     * smallest: its answer checked against the query's inside */
    double tp2 = -1;
    int st4 = cltopk_benchmark_query_peer(ctx, tb->cols, (size_t)tb->ncols,
                                          tb->n < 20000 ? tb->n : 20000, "retweet_count",
                                          "lang == 1 or lang == 2", 30, CLTOPK_SMALLEST,
                                          CLTOPK_FLOAT32, 1, &tp2, NULL);
    ok(st == CLTOPK_OK && tp > 0 && ts > 0 && st2 == CLTOPK_ERR_NO_OPENCL &&
           st3 == CLTOPK_ERR_INVALID_ARGUMENT && st4 == CLTOPK_OK && tp2 > 0,
       "%s: cltopk_benchmark_query_peer times the score kernel and the top-k, its answer the "
       "query's (a partial tile too); refuses the cpu context and reps 0 (%d %d %d %d: %s)",
       dev, st, st2, st3, st4, st4 == CLTOPK_OK ? "" : cltopk_last_error(ctx));
    cltopk_close(cpu);
}

/* the paper's three queries on a tweet-like table */
static void tweets(cltopk_context *const *ctxs, const char *const *devs, int nctx)
{
    /* 20480 = 2^12 x 5 rows: whole tiles of the sample-filter query's one
     * read for every batch of rows on every device (sf_paths takes shorter
     * views of it for a last, partial tile) */
    size_t n = 20480;
    int32_t *retweets = bmalloc(n * 4), *likes = bmalloc(n * 4);
    int64_t *ts = bmalloc(n * 8);
    uint32_t *lang = bmalloc(n * 4);
    /* the month from 1493596800 on; one row, `first`, at its first second and
     * every other row later, so that tweet_time < 1493596801 passes exactly
     * that row */
    size_t first = (size_t)rng_below(&rng, n);
    for (size_t i = 0; i < n; i++) {
        double u = (double)(rng_next(&rng) >> 11) / 9007199254740992.0;
        retweets[i] = (int32_t)(1.0 / (1.0 - 0.999 * u)) - 1; /* power law, many ties */
        likes[i] = (int32_t)rng_below(&rng, 5000);
        ts[i] = i == first ? 1493596800 : 1493596801 + (int64_t)rng_below(&rng, 2678399);
        lang[i] = (uint32_t)rng_below(&rng, 10);
    }
    table tb = {.n = n, .ncols = 4};
    tb.cols[0] = (cltopk_column){"retweet_count", CLTOPK_INT32, retweets};
    tb.cols[1] = (cltopk_column){"likes_count", CLTOPK_INT32, likes};
    tb.cols[2] = (cltopk_column){"tweet_time", CLTOPK_INT64, ts};
    tb.cols[3] = (cltopk_column){"lang", CLTOPK_UINT32, lang};
    for (int c = 0; c < 4; c++)
        tb.data[c] = (void *)tb.cols[c].data;
    /* the reference trees, built by hand */
    npool = 0;
    enode *rc = en(E_COL), *lc = en(E_COL), *tc = en(E_COL), *la = en(E_COL);
    rc->col = 0, lc->col = 1, tc->col = 2, la->col = 3;
    enode *half = en(E_LITF);
    snprintf(half->text, sizeof half->text, "0.5");
    enode *mul = en(E_BIN);
    mul->op = 2, mul->a[0] = half, mul->a[1] = lc;
    enode *sum = en(E_BIN);
    sum->op = 0, sum->a[0] = rc, sum->a[1] = mul;
    for (int sel = 0; sel <= 10; sel += 5) {
        char where[128];
        enode *cmp = q1_filter(tc, sel, where, sizeof where);
        for (int c = 0; c < nctx; c++)
            for (int via = 0; via <= (c > 0); via++)
                check_query(ctxs[c], devs[c], via, &tb, rc, cmp, "retweet_count", where, 50,
                            0, 0, "Q1 filter on time");
    }
    for (int c = 0; c < nctx; c++)
        for (int via = 0; via <= (c > 0); via++) {
            check_query(ctxs[c], devs[c], via, &tb, sum, NULL, "retweet_count + 0.5 * likes_count",
                        NULL, 50, 0, 0, "Q2 weighted sum");
            check_query(ctxs[c], devs[c], via, &tb, sum, NULL, "retweet_count+0.5*likes_count",
                        NULL, 1000, 1, 1, "Q2 weighted sum");
        }
    enode *one = en(E_LITI), *two = en(E_LITI);
    one->bits = 1, two->bits = 2;
    enode *e1 = en(E_CMP), *e2 = en(E_CMP), *orr = en(E_OR);
    e1->op = 4, e1->a[0] = la, e1->a[1] = one;
    e2->op = 4, e2->a[0] = la, e2->a[1] = two;
    orr->a[0] = e1, orr->a[1] = e2;
    for (int c = 0; c < nctx; c++)
        for (int via = 0; via <= (c > 0); via++)
            check_query(ctxs[c], devs[c], via, &tb, rc, orr, "retweet_count",
                        "lang == 1 or lang == 2", 50, 0, 0, "Q3 an or of equalities");
    /* the three through the specialised kernel (a table this small takes the
     * interpreter by default); Q1 at two selectivities is one program */
    if (nctx > 1 && !QUERY_SF) {
        setenv("CLTOPK_QUERY", "spec=1", 1);
        for (int sel = 1; sel <= 9; sel += 8) {
            char where[128];
            enode *cmp = q1_filter(tc, sel, where, sizeof where);
            check_query(ctxs[1], devs[1], VIA_BUFFER, &tb, rc, cmp, "retweet_count", where, 50,
                        0, 0, "Q1 filter on time, specialised (spec=1)");
        }
        check_query(ctxs[1], devs[1], VIA_BUFFER, &tb, sum, NULL,
                    "retweet_count + 0.5 * likes_count", NULL, 50, 0, 0,
                    "Q2 weighted sum, specialised (spec=1)");
        check_query(ctxs[1], devs[1], VIA_BUFFER, &tb, rc, orr, "retweet_count",
                    "lang == 1 or lang == 2", 50, 0, 0, "Q3 an or of equalities, specialised");
        unsetenv("CLTOPK_QUERY");
    }
    /* filters passing no row, one row (the row `first`), fewer than k (the
     * 20479 other rows spread over 2678399 s: some 30 within the first 4000
     * s, fewer than 2 or more than 99 with a chance below 1e-11), every row;
     * the rows passing by the reference asserted first, then each device's
     * outputs against the reference's */
    static const struct {
        uint64_t bound;
        const char *text;
    } fs[] = {{0, "tweet_time < 0"},
              {1493596801, "tweet_time < 1493596801"},
              {1493596800 + 4000, "tweet_time < 1493600800"},
              {UINT64_MAX, "tweet_time < 0xFFFFFFFFFFFFFFFF"}};
    for (size_t f = 0; f < 4; f++) {
        enode *x = en(E_LITI);
        x->bits = fs[f].bound;
        enode *cmp = en(E_CMP);
        cmp->op = 0, cmp->a[0] = tc, cmp->a[1] = x;
        int64_t eidx[100];
        uint64_t ebits[100];
        size_t ecount = expect(&tb, sum, cmp, 100, (int)f & 1, 0, eidx, ebits), passing = 0;
        for (size_t i = 0; i < n; i++)
            passing += (size_t)ref_cond(&tb, cmp, i, 0);
        int fits = f == 0   ? passing == 0 && ecount == 0
                   : f == 1 ? passing == 1 && ecount == 1 && eidx[0] == (int64_t)first &&
                                  eidx[1] == -1
                   : f == 2 ? passing >= 2 && passing < 100 && ecount == passing
                            : passing == n && ecount == 100;
        if (!ok(fits, "the filter %s passes %s (%zu rows)", fs[f].text,
                f == 0   ? "no row"
                : f == 1 ? "exactly one row, the one at the first second"
                : f == 2 ? "more than one row and fewer than k = 100"
                         : "every row",
                passing))
            diag("%zu returned, the first row %lld; the row at the first second %zu", ecount,
                 (long long)eidx[0], first);
        for (int c = 0; c < nctx; c++)
            for (int via = 0; via <= (c > 0); via++)
                check_query(ctxs[c], devs[c], via, &tb, sum, cmp,
                            "retweet_count + 0.5 * likes_count", fs[f].text, 100, (int)f & 1,
                            0, "few passing");
    }
    if (QUERY_SF && nctx > 1)
        sf_paths(ctxs[1], devs[1], &tb, rc, sum, orr, tc, lc);
    free(retweets), free(likes), free(ts), free(lang);
}

/* ------------------------------------------------------------ NaN, zeros */

#define NZ 10
/* the rows a query must return, best first, and their score bits: checked on
 * every context, both forms on the OpenCL one, with k = NZ + 2 (the entries
 * past the rows returned: index -1, score bytes 0) */
static void check_exact(cltopk_context *const *ctxs, const char *const *devs, int nctx,
                        const table *tb, const char *order, const char *where, int f64,
                        int smallest, size_t nrows, const int64_t *rows, const uint64_t *bits)
{
    size_t k = NZ + 2;
    int64_t oidx[NZ + 3]; /* k + 1: run_query */
    uint64_t obits[NZ + 2];
    int good = 1;
    char msg[512] = "";
    for (int c = 0; c < nctx; c++)
        for (int via = 0; via <= (c > 0); via++) {
            size_t count;
            int st = run_query(ctxs[c], via, tb, order, where, k, f64, smallest, oidx, obits,
                               &count);
            int same = st == CLTOPK_OK && count == nrows;
            for (size_t i = 0; same && i < k; i++)
                same = i < nrows ? oidx[i] == rows[i] && obits[i] == bits[i]
                                 : oidx[i] == -1 && obits[i] == 0;
            if (!same && good) {
                int at = snprintf(msg, sizeof msg, "%s %s: status %d, count %zu (want %zu), "
                                  "got", devs[c], via_name(via), st, count, nrows);
                for (size_t i = 0; i < k && at > 0 && (size_t)at < sizeof msg; i++)
                    at += snprintf(msg + at, sizeof msg - (size_t)at, " %lld:%llx",
                                   (long long)oidx[i], (unsigned long long)obits[i]);
            }
            good &= same;
        }
    if (!ok(good, "%s%s%s, %s scores, %s: the rows and score bits of cltopk.h's rules on %s",
            order, where ? " where " : "", where ? where : "", f64 ? "float64" : "float32",
            smallest ? "smallest" : "largest", nctx > 1 ? "every device" : "the cpu")) {
        diag("%s", msg);
        for (size_t i = 0; i < nrows; i++)
            diag("  want %lld:%llx", (long long)rows[i], (unsigned long long)bits[i]);
    }
}

/* x / 0 (of a positive, a negative, either zero, NaN, the infinities), x / -0,
 * integer columns over 0, NaN and both zeros in THE ORDER, comparisons with
 * NaN in a where clause: every score and row written out by hand from the
 * rules of cltopk.h, in both score types, both directions, on every device */
static void nan_and_zero(cltopk_context *const *ctxs, const char *const *devs, int nctx)
{
    static const uint32_t xb[NZ] = {0x3F800000, 0xFFC00001, 0x80000000, 0x7F800000,
                                    0x00000000, 0x7F800001, 0xFF800000, 0xC0200000,
                                    0x7FC00000, 0x80000000};
    /* 1, a negative NaN with a payload, -0, +inf, +0, a signalling NaN, -inf,
     * -2.5, the quiet NaN, -0 */
    static const uint64_t db[NZ] = {0x3FF0000000000000, 0xFFF8000000000001, 0x8000000000000000,
                                    0x7FF0000000000000, 0x0000000000000000, 0x7FF0000000000001,
                                    0xFFF0000000000000, 0xC004000000000000, 0x7FF8000000000000,
                                    0x8000000000000000};
    static const int32_t iv[NZ] = {7, -7, 0, 0, 1, -1, INT32_MAX, INT32_MIN, 3, 0};
    static const uint64_t uv[NZ] = {5, 0, UINT64_MAX, 0, 1, 2, 3, 0, 4, 9};
    float x[NZ], zf[NZ];
    double d[NZ];
    int32_t z[NZ], id[NZ];
    for (int r = 0; r < NZ; r++) {
        memcpy(&x[r], &xb[r], 4);
        memcpy(&d[r], &db[r], 8);
        zf[r] = 0.0f, z[r] = 0, id[r] = r;
    }
    table tb = {.n = NZ, .ncols = 7};
    tb.cols[0] = (cltopk_column){"x", CLTOPK_FLOAT32, x};
    tb.cols[1] = (cltopk_column){"d", CLTOPK_FLOAT64, d};
    tb.cols[2] = (cltopk_column){"i", CLTOPK_INT32, iv};
    tb.cols[3] = (cltopk_column){"u", CLTOPK_UINT64, uv};
    tb.cols[4] = (cltopk_column){"zf", CLTOPK_FLOAT32, zf};
    tb.cols[5] = (cltopk_column){"z", CLTOPK_INT32, z};
    tb.cols[6] = (cltopk_column){"id", CLTOPK_INT32, id};
    for (int c = 0; c < 7; c++)
        tb.data[c] = (void *)tb.cols[c].data;

    const double inf = INFINITY, nan = NAN;
    /* scores by row; each query's order: NaN above +inf (first largest, last
     * smallest), ties (both zeros, the same infinity, every NaN) by smaller
     * row */
    static const struct {
        const char *order;
        int64_t largest[NZ], smallest[NZ];
    } q[] = {
        /* x / 0: +inf (1, +inf), NaN (NaNs, -0, +0), -inf (-inf, -2.5) */
        {"x / 0", {1, 2, 4, 5, 8, 9, 0, 3, 6, 7}, {6, 7, 0, 3, 1, 2, 4, 5, 8, 9}},
        {"d / 0", {1, 2, 4, 5, 8, 9, 0, 3, 6, 7}, {6, 7, 0, 3, 1, 2, 4, 5, 8, 9}},
        /* over -0 (minus a column of +0): the infinities swap */
        {"x / -zf", {1, 2, 4, 5, 8, 9, 6, 7, 0, 3}, {0, 3, 6, 7, 1, 2, 4, 5, 8, 9}},
        /* integers over a column of 0 and over the literal 0: in the score type */
        {"i / z", {2, 3, 9, 0, 4, 6, 8, 1, 5, 7}, {1, 5, 7, 0, 4, 6, 8, 2, 3, 9}},
        {"u / 0", {1, 3, 7, 0, 2, 4, 5, 6, 8, 9}, {0, 2, 4, 5, 6, 8, 9, 1, 3, 7}},
        /* the columns themselves: NaNs, +inf, 1, the zeros (-0 == +0), -2.5,
         * -inf */
        {"x", {1, 5, 8, 3, 0, 2, 4, 9, 7, 6}, {6, 7, 2, 4, 9, 0, 3, 1, 5, 8}},
        {"d", {1, 5, 8, 3, 0, 2, 4, 9, 7, 6}, {6, 7, 2, 4, 9, 0, 3, 1, 5, 8}},
    };
    /* the score of row r in query j (the bits of the value; NaN canonical) */
    double xs[NZ] = {1, nan, -0.0, inf, 0.0, nan, -inf, -2.5, nan, -0.0};
    for (size_t j = 0; j < sizeof q / sizeof q[0]; j++) {
        double sc[NZ];
        for (int r = 0; r < NZ; r++) {
            switch (j) {
            case 0: case 1: /* x / 0 */
                sc[r] = isnan(xs[r]) || xs[r] == 0 ? nan : xs[r] > 0 ? inf : -inf;
                break;
            case 2: /* x / -0 */
                sc[r] = isnan(xs[r]) || xs[r] == 0 ? nan : xs[r] > 0 ? -inf : inf;
                break;
            case 3:
                sc[r] = iv[r] == 0 ? nan : iv[r] > 0 ? inf : -inf;
                break;
            case 4:
                sc[r] = uv[r] == 0 ? nan : inf;
                break;
            default: sc[r] = xs[r];
            }
        }
        for (int f64 = 0; f64 < 2; f64++)
            for (int sm = 0; sm < 2; sm++) {
                const int64_t *rows = sm ? q[j].smallest : q[j].largest;
                uint64_t bits[NZ];
                for (int i = 0; i < NZ; i++)
                    bits[i] = score_bits(sc[rows[i]], f64);
                check_exact(ctxs, devs, nctx, &tb, q[j].order, NULL, f64, sm, NZ, rows, bits);
            }
    }
    /* comparisons with NaN (unequal to everything: only != holds) and the
     * zeros (-0 == +0): the rows passing, by id (the smallest first) */
    static const struct {
        const char *where;
        int n;
        int64_t rows[NZ];
    } w[] = {
        {"x == x", 7, {0, 2, 3, 4, 6, 7, 9}},
        {"x != x", 3, {1, 5, 8}},
        {"x < 0", 2, {6, 7}},
        {"not (x >= 0)", 5, {1, 5, 6, 7, 8}},
        {"x == 0", 3, {2, 4, 9}},
        {"x <= -0.0 and x >= 0", 3, {2, 4, 9}},
        {"d > 0 or d <= 0", 7, {0, 2, 3, 4, 6, 7, 9}},
        {"d == x", 7, {0, 2, 3, 4, 6, 7, 9}},
        {"x / 0 == x / 0", 4, {0, 3, 6, 7}},
        {"min(x, 1) != min(x, 1)", 3, {1, 5, 8}},
        {"max(x, 0) < 1", 5, {2, 4, 6, 7, 9}},
        {"if(x > 0, 1, 0) == 0", 8, {1, 2, 4, 5, 6, 7, 8, 9}},
    };
    for (size_t j = 0; j < sizeof w / sizeof w[0]; j++)
        for (int f64 = 0; f64 < 2; f64++) {
            uint64_t bits[NZ];
            for (int i = 0; i < w[j].n; i++)
                bits[i] = score_bits((double)w[j].rows[i], f64);
            check_exact(ctxs, devs, nctx, &tb, "id", w[j].where, f64, 1, (size_t)w[j].n,
                        w[j].rows, bits);
        }
}

/* log and exp: near the C library's, the same bits on every device */
static void logexp(cltopk_context *const *ctxs, const char *const *devs, int nctx)
{
    size_t n = 4000;
    float *x = bmalloc(n * 4);
    double *y = bmalloc(n * 8);
    for (size_t i = 0; i < n; i++) {
        x[i] = (float)((double)(rng_next(&rng) >> 40) / 16777216.0 * 200.0 - 100.0);
        y[i] = (double)(rng_next(&rng) >> 11) / 9007199254740992.0 * 1400.0 - 700.0;
    }
    x[0] = 0.0f, x[1] = -1.0f, x[2] = NAN, x[3] = INFINITY, x[4] = 1e-45f, x[5] = 88.7f;
    y[0] = 0.0, y[1] = -0.5, y[2] = INFINITY, y[3] = 1e-320, y[4] = 709.0, y[5] = -745.0;
    cltopk_column cols[2] = {{"x", CLTOPK_FLOAT32, x}, {"y", CLTOPK_FLOAT64, y}};
    static const char *const exprs[4] = {"exp(x)", "log(abs(x))", "exp(y)", "log(abs(y))"};
    for (int e = 0; e < 4; e++) {
        int f64 = e >= 2;
        size_t w = f64 ? 8 : 4, k = 1000;
        unsigned char *first = bmalloc(k * w), *got = bmalloc(k * w);
        int64_t *fi = bmalloc(k * 8), *gi = bmalloc(k * 8);
        int good = 1, same = 1;
        for (int c = 0; c < nctx; c++) {
            unsigned char *o = c ? got : first;
            int64_t *oi = c ? gi : fi;
            size_t count;
            int st = cltopk_query_topk(ctxs[c], cols, 2, n, exprs[e], NULL, k, 0,
                                       f64 ? CLTOPK_FLOAT64 : CLTOPK_FLOAT32, o, oi, &count);
            good &= st == CLTOPK_OK && count == k;
            if (c)
                same &= !memcmp(first, got, k * w) && !memcmp(fi, gi, k * 8);
        }
        /* within a few ulp of the C library */
        double worst = 0;
        for (size_t i = 0; good && i < k; i++) {
            double v, ref;
            if (f64) {
                memcpy(&v, first + i * 8, 8);
                double a = y[fi[i]];
                ref = e == 2 ? exp(a) : log(fabs(a));
            } else {
                float fv;
                memcpy(&fv, first + i * 4, 4);
                v = fv;
                float a = x[fi[i]];
                ref = e == 0 ? (double)expf(a) : (double)logf(fabsf(a));
            }
            if (isnan(ref) ? !isnan(v) : (isinf(ref) ? v != ref : 0))
                good = 0;
            if (!isnan(ref) && !isinf(ref) && ref != 0) {
                double ulp = f64 ? nextafter(fabs(ref), INFINITY) - fabs(ref)
                                 : (double)(nextafterf((float)fabs(ref), INFINITY) -
                                            (float)fabs(ref));
                double d = fabs(v - ref) / ulp;
                if (d > worst)
                    worst = d;
            }
        }
        ok(good && same && worst <= 4.0,
           "%s: within %.1f ulp of the C library (at most 4), the same bits on %s", exprs[e],
           worst, nctx > 1 ? devs[1] : "the cpu only");
        free(first), free(got), free(fi), free(gi);
    }
    free(x), free(y);
}

/* malformed expressions and arguments: a status, a detail, nothing written */
static void refusals(cltopk_context *ctx, const char *dev)
{
    float a[4] = {1, 2, 3, 4};
    int64_t b[4] = {5, 6, 7, 8};
    cltopk_column cols[2] = {{"a", CLTOPK_FLOAT32, a}, {"b", CLTOPK_INT64, b}};
    /* each detail with its exact position (bytes from 1): where the
     * expected thing is missing or the offending byte, word or literal
     * starts */
    static const struct {
        const char *order, *where, *want;
    } bad[] = {
        /* "a +": the end, byte 4 */
        {"a +", NULL, "order_by: at 4: expected a number, a column, a function or '(', found "
                      "the end"},
        {"(a + b", NULL, "order_by: at 7: expected ')' (to close the '(' at 1), found the end"},
        {"a + likes", NULL, "order_by: at 5: unknown column 'likes'; columns are: a, b"},
        {"foo(1)", NULL, "order_by: at 1: unknown function 'foo'; functions are: min, max, "
                         "abs, sqrt, log, exp, floor, ceil, if"},
        {"a + foo (b)", NULL, "order_by: at 5: unknown function 'foo'; functions are: min,"},
        /* a column followed by '(' is not called a function */
        {"a(1)", NULL, "order_by: at 2: expected an operator or the end, found '('"},
        /* the ')' at byte 6 where a ',' was expected */
        {"min(a)", NULL, "order_by: at 6: min takes 2 arguments: expected ',', found ')'"},
        {"sqrt(a, b)", NULL, "order_by: at 7: sqrt takes 1 argument: expected ')', found ','"},
        /* a whole expression of the wrong kind: its first byte past the blanks */
        {"a < b", NULL, "order_by: at 1: order_by must be a number, not a condition"},
        {"  a < b", NULL, "order_by: at 3: order_by must be a number, not a condition"},
        {"a", "a + 1", "where: at 1: where must be a condition (a comparison), not a number"},
        {"a", "a = 1", "where: at 3: '=' is not an operator: equality is '=='"},
        {"a", "a < b < 3", "where: at 7: a comparison cannot follow a comparison"},
        {"a and b", NULL, "order_by: at 1: expected a condition (a comparison), found a number"},
        {"a", "not a", "where: at 5: expected a condition (a comparison), found a number"},
        {"if(a, a, b)", NULL, "order_by: at 4: expected a condition (a comparison), found a "
                              "number"},
        /* a literal out of range: its digits */
        {"a", "b < 18446744073709551616", "where: at 5: the integer literal is larger than "
                                          "2^64 - 1"},
        {"a", "b < 0x10000000000000000", "where: at 5: the integer literal is larger than "
                                         "2^64 - 1"},
        {"a", "b < -9223372036854775809", "where: at 6: the negative integer literal is "
                                          "smaller than -2^63"},
        {"a } __kernel void x() { ", NULL, "order_by: at 3: expected an operator or the end, "
                                           "found '}'"},
        {"a\n#pragma OPENCL EXTENSION all : enable", NULL, "order_by: at 3: expected an "
                                                           "operator or the end, found '#'"},
        {"a; b", NULL, "order_by: at 2: expected an operator or the end, found ';'"},
        /* the literal "0x"; the 'e' without digits; the second '.' */
        {"0x", NULL, "order_by: at 1: a hexadecimal literal needs digits after 0x"},
        {"1e", NULL, "order_by: at 2: an exponent needs digits"},
        {"1.2.3", NULL, "order_by: at 4: unexpected '.' after a number"},
        /* empty: the end, past the blanks */
        {"", NULL, "order_by: at 1: the expression is empty"},
        {"   ", NULL, "order_by: at 4: the expression is empty"},
        {"a", "", "where: at 1: the expression is empty"},
        {"and", NULL, "order_by: at 1: expected a number, a column, a function or '(', found "
                      "the word 'and'"},
        {"a @ b", NULL, "order_by: at 3: expected an operator or the end, found '@'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        float os[4] = {-9, -9, -9, -9};
        int64_t oi[4] = {-9, -9, -9, -9};
        size_t count = 77;
        int st = cltopk_query_topk(ctx, cols, 2, 4, bad[i].order, bad[i].where, 2, 0,
                                   CLTOPK_FLOAT32, os, oi, &count);
        const char *e = cltopk_last_error(ctx);
        int untouched = count == 77 && os[0] == -9 && os[1] == -9 && oi[0] == -9 && oi[1] == -9;
        char err[256];
        int cst = cltopk_query_check(ctx, cols, 2, bad[i].order, bad[i].where, err, sizeof err);
        if (!ok(st == CLTOPK_ERR_EXPRESSION && strstr(e, bad[i].want) && untouched &&
                    cst == CLTOPK_ERR_EXPRESSION && strstr(err, bad[i].want),
                "%s: refused: order_by \"%s\" where \"%s\"", dev, bad[i].order,
                bad[i].where ? bad[i].where : "(none)"))
            diag("status %d / %d, detail \"%s\", check's \"%s\", untouched %d (want \"%s\")", st,
                 cst, e, err, untouched, bad[i].want);
    }
    /* the limits, each at its exact position: 4096 bytes (byte 4097 is one
     * too many), 64 levels (byte 65 is the 65th '(', inside 64 others and
     * the whole), 32 stack slots ((a+(a+ ...: the 33rd 'a', at 3 * 32 + 2, is
     * the 33rd value pushed), 512 operations (a+a+ ...+a of 257 columns: the
     * 513th operation is the last '+', at 512) */
    {
        char *s = bmalloc(5000);
        memset(s, ' ', 4096);
        s[0] = 'a';
        s[4096] = 0;
        int st0 = cltopk_query_check(ctx, cols, 2, s, NULL, NULL, 0);
        s[4096] = ' ';
        s[4097] = 0;
        int st = cltopk_query_check(ctx, cols, 2, s, NULL, NULL, 0);
        if (!ok(st0 == CLTOPK_OK && st == CLTOPK_ERR_EXPRESSION &&
                    strstr(cltopk_last_error(ctx),
                           "order_by: at 4097: the expression is longer than 4096 bytes"),
                "%s: an expression of 4096 bytes is taken, of 4097 refused at 4097", dev))
            diag("status %d, %d: %s", st0, st, cltopk_last_error(ctx));
        memset(s, 'a', 4999);
        s[4999] = 0;
        st = cltopk_query_check(ctx, cols, 2, s, NULL, NULL, 0);
        if (!ok(st == CLTOPK_ERR_EXPRESSION &&
                    strstr(cltopk_last_error(ctx),
                           "order_by: at 4097: the expression is longer than 4096 bytes"),
                "%s: an expression of 4999 bytes is refused at 4097", dev))
            diag("status %d: %s", st, cltopk_last_error(ctx));
        size_t at = 0;
        for (int d = 0; d < 70; d++)
            s[at++] = '(';
        s[at++] = 'a';
        for (int d = 0; d < 70; d++)
            s[at++] = ')';
        s[at] = 0;
        st = cltopk_query_check(ctx, cols, 2, s, NULL, NULL, 0);
        if (!ok(st == CLTOPK_ERR_EXPRESSION &&
                    strstr(cltopk_last_error(ctx),
                           "order_by: at 65: the expression nests deeper than 64"),
                "%s: nesting 70 deep is refused at 65", dev))
            diag("status %d: %s", st, cltopk_last_error(ctx));
        at = 0;
        for (int d = 0; d < 40; d++)
            at += (size_t)snprintf(s + at, 5000 - at, "(a+");
        s[at++] = 'a';
        for (int d = 0; d < 40; d++)
            s[at++] = ')';
        s[at] = 0;
        st = cltopk_query_check(ctx, cols, 2, s, NULL, NULL, 0);
        if (!ok(st == CLTOPK_ERR_EXPRESSION &&
                    strstr(cltopk_last_error(ctx),
                           "order_by: at 98: the expression needs more than 32 stack slots"),
                "%s: an expression needing 41 stack slots is refused at 98", dev))
            diag("status %d: %s", st, cltopk_last_error(ctx));
        at = 0;
        for (int d = 0; d < 257; d++)
            at += (size_t)snprintf(s + at, 5000 - at, "%sa", d ? "+" : "");
        st = cltopk_query_check(ctx, cols, 2, s, NULL, NULL, 0);
        if (!ok(st == CLTOPK_ERR_EXPRESSION &&
                    strstr(cltopk_last_error(ctx), "order_by: at 512: the expression is too "
                                                   "long (at most 512 operations)"),
                "%s: an expression of 513 operations is refused at 512", dev))
            diag("status %d: %s", st, cltopk_last_error(ctx));
        free(s);
    }
    /* arguments */
    float os[4] = {-9, -9, -9, -9};
    int64_t oi[4] = {-9, -9, -9, -9};
    size_t count = 77;
    cltopk_column dup[2] = {{"a", CLTOPK_FLOAT32, a}, {"a", CLTOPK_INT64, b}};
    cltopk_column badname[1] = {{"2a", CLTOPK_FLOAT32, a}};
    cltopk_column word[1] = {{"max", CLTOPK_FLOAT32, a}};
    cltopk_column badtype[1] = {{"a", (cltopk_dtype)9, a}};
    cltopk_column nodata[2] = {{"a", CLTOPK_FLOAT32, NULL}, {"b", CLTOPK_INT64, b}};
    struct {
        int st;
        const char *what;
    } r[] = {
        {cltopk_query_topk(ctx, dup, 2, 4, "a", NULL, 2, 0, CLTOPK_FLOAT32, os, oi, &count),
         "duplicate names"},
        {cltopk_query_topk(ctx, badname, 1, 4, "a", NULL, 2, 0, CLTOPK_FLOAT32, os, oi, &count),
         "a bad name"},
        {cltopk_query_topk(ctx, word, 1, 4, "a", NULL, 2, 0, CLTOPK_FLOAT32, os, oi, &count),
         "a reserved word as a name"},
        {cltopk_query_topk(ctx, cols, 2, 4, NULL, NULL, 2, 0, CLTOPK_FLOAT32, os, oi, &count),
         "order_by NULL"},
        {cltopk_query_topk(ctx, cols, 2, 4, "a", NULL, 2, 0, CLTOPK_FLOAT32, NULL, NULL, &count),
         "both outputs NULL"},
        {cltopk_query_topk(ctx, nodata, 2, 4, "a + b", NULL, 2, 0, CLTOPK_FLOAT32, os, oi,
                           &count),
         "a used column without data"},
        {cltopk_query_topk(ctx, NULL, 2, 4, "a", NULL, 2, 0, CLTOPK_FLOAT32, os, oi, &count),
         "cols NULL"},
        {cltopk_query_topk(ctx, cols, 2, 4, "a", NULL, 2, 0, CLTOPK_INT32, os, oi, &count),
         "an integer score type"},
        {cltopk_query_topk(ctx, badtype, 1, 4, "a", NULL, 2, 0, CLTOPK_FLOAT32, os, oi, &count),
         "a bad column type"},
        {cltopk_query_topk(ctx, cols, 2, 4, "a", NULL, 2, 0x40, CLTOPK_FLOAT32, os, oi, &count),
         "an unknown flag"},
        {cltopk_query_topk(ctx, cols, 2, 4, "a", NULL, 2, 0, CLTOPK_FLOAT32, (void *)a, oi,
                           &count),
         "out_scores over a column"},
    };
    static const int want[] = {CLTOPK_ERR_INVALID_ARGUMENT, CLTOPK_ERR_INVALID_ARGUMENT,
                               CLTOPK_ERR_INVALID_ARGUMENT, CLTOPK_ERR_EXPRESSION,
                               CLTOPK_ERR_INVALID_ARGUMENT, CLTOPK_ERR_INVALID_ARGUMENT,
                               CLTOPK_ERR_INVALID_ARGUMENT, CLTOPK_ERR_BAD_TYPE,
                               CLTOPK_ERR_BAD_TYPE,         CLTOPK_ERR_BAD_FLAGS,
                               CLTOPK_ERR_INVALID_ARGUMENT};
    int good = count == 77 && os[0] == -9 && oi[0] == -9 && a[0] == 1 && a[1] == 2;
    for (size_t i = 0; i < sizeof r / sizeof r[0]; i++)
        if (r[i].st != want[i]) {
            diag("%s: status %d, want %d", r[i].what, r[i].st, want[i]);
            good = 0;
        }
    ok(good, "%s: bad arguments are refused with their statuses, nothing written", dev);
    ok(cltopk_query_topk(NULL, cols, 2, 4, "a", NULL, 2, 0, CLTOPK_FLOAT32, os, oi, &count) ==
           CLTOPK_ERR_INVALID_ARGUMENT,
       "%s: ctx NULL is refused", dev);
    /* k = 0 and n = 0: nothing written but the count */
    count = 77;
    int st = cltopk_query_topk(ctx, cols, 2, 4, "a", NULL, 0, 0, CLTOPK_FLOAT32, os, oi, &count);
    int st2 = cltopk_query_topk(ctx, cols, 2, 0, "a", "b > 1", 3, 0, CLTOPK_FLOAT32, os, oi,
                                NULL);
    ok(st == CLTOPK_OK && st2 == CLTOPK_OK && count == 0 && os[0] == -9 && oi[0] == -9,
       "%s: k = 0 and n = 0 write nothing but the count 0", dev);
    /* the benchmark: a run, and its refusals */
    {
        double tq = -1, fl = -1;
        int bs = cltopk_benchmark_query(ctx, cols, 2, 4, "a * b", "b > 5", 2, 0, CLTOPK_FLOAT32,
                                        2, &tq, &fl);
        int b0 = cltopk_benchmark_query(ctx, cols, 2, 4, "a", NULL, 2, 0, CLTOPK_FLOAT32, 0,
                                        &tq, NULL);
        int b1 = cltopk_benchmark_query(ctx, cols, 2, 4, "a +", NULL, 2, 0, CLTOPK_FLOAT32, 1,
                                        &tq, NULL);
        int b2 = cltopk_benchmark_query(ctx, cols, 2, 4, "a", NULL, 2, 0, CLTOPK_FLOAT32, 1,
                                        NULL, NULL);
        ok(bs == CLTOPK_OK && tq > 0 && fl >= 0 && b0 == CLTOPK_ERR_INVALID_ARGUMENT &&
               b1 == CLTOPK_ERR_EXPRESSION && b2 == CLTOPK_ERR_INVALID_ARGUMENT,
           "%s: cltopk_benchmark_query times a query; reps 0, a bad expression, no median_s "
           "are refused (%d %d %d %d)", dev, bs, b0, b1, b2);
    }
    /* explain: the programs and the choice, or the refusals of the call */
    {
        char buf[2048] = "";
        int is_cl = strcmp(dev, "cpu") != 0;
        int e0 = cltopk_query_explain(ctx, cols, 2, 4, "a * b", "b > 5", 2, 0, CLTOPK_FLOAT32,
                                      is_cl, buf, sizeof buf);
        int fine = e0 == CLTOPK_OK && strstr(buf, "columns    a (f32), b (i64)") &&
                   strstr(buf, "order_by   3 operations") && strstr(buf, "col-exact b") &&
                   strstr(buf, is_cl ? "-> device" : "-> cpu");
        if (!fine)
            diag("%d: %s", e0, buf);
        int e1 = cltopk_query_explain(ctx, cols, 2, 4, "a +", NULL, 2, 0, CLTOPK_FLOAT32, 0, buf,
                                      sizeof buf);
        int e2 = cltopk_query_explain(ctx, cols, 2, 4, "a", NULL, 2, 0, CLTOPK_FLOAT32, 0, NULL,
                                      10);
        int e3 = cltopk_query_explain(ctx, cols, 2, 4, "a", NULL, 2, 0, CLTOPK_FLOAT32, 1, buf,
                                      sizeof buf);
        ok(fine && e1 == CLTOPK_ERR_EXPRESSION && e2 == CLTOPK_ERR_INVALID_ARGUMENT &&
               (is_cl ? e3 == CLTOPK_OK : e3 == CLTOPK_ERR_NO_OPENCL),
           "%s: cltopk_query_explain names the columns, the programs and the choice; refuses "
           "as the call does (%d %d %d %d)", dev, e0, e1, e2, e3);
    }
    /* an unused column may have no data; a column with an odd name */
    cltopk_column spare[3] = {{"unused", CLTOPK_FLOAT64, NULL}, {"a", CLTOPK_FLOAT32, a},
                              {"_B9", CLTOPK_INT64, b}};
    st = cltopk_query_topk(ctx, spare, 3, 4, "a * _B9", "_B9 != 6", 2, CLTOPK_SMALLEST,
                           CLTOPK_FLOAT32, os, oi, &count);
    ok(st == CLTOPK_OK && count == 2 && oi[0] == 0 && os[0] == 5.0f && oi[1] == 2 &&
           os[1] == 21.0f,
       "%s: an unused column without data; the smallest two of a * _B9 where _B9 != 6", dev);
}

#if CLTOPK_HAVE_OPENCL
/* the program binaries (*.bin) and temporary files in dir */
static int count_builds(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t len = strlen(de->d_name);
        n += len > 4 && (!strcmp(de->d_name + len - 4, ".bin") ||
                         !strcmp(de->d_name + len - 4, ".tmp"));
    }
    closedir(d);
    return n;
}

static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *de;
        char path[4200];
        while ((de = readdir(d)))
            if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
                snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
                unlink(path);
            }
        closedir(d);
    }
    rmdir(dir);
}

/* Malformed expressions compile nothing: on a fresh context of the OpenCL
 * device (no program in its memory cache) with the binary cache on in a
 * fresh directory, every program the library built would be written there.
 * Each malformed expression through cltopk_query_topk and through
 * cltopk_query_topk_buffer: CLTOPK_ERR_EXPRESSION, the poisoned outputs (host
 * arrays and the count; buffers and the count buffer; the event) unchanged;
 * then no binary in the directory.  A well-formed query then writes one
 * (the observation can see a build). */
static void nothing_compiled(void)
{
    char devstr[256], dir[4096];
    if (!test_cl_device(devstr, sizeof devstr))
        return;
    cltopk_context *ctx = NULL;
    if (cltopk_open(&ctx, devstr) != CLTOPK_OK) {
        ok(0, "nothing compiled: open %s: %s", devstr, cltopk_last_error(NULL));
        return;
    }
    snprintf(dir, sizeof dir, "%s/query-nothing-compiled-%ld", test_tmpdir(), (long)getpid());
    remove_dir(dir);
    if (mkdir(dir, 0700) != 0)
        sysbail("mkdir %s", dir);
    const char *e = getenv("CLTOPK_CACHE_DIR"), *e2 = getenv("CLTOPK_CACHE");
    char *cdir = e ? strdup(e) : NULL, *cache = e2 ? strdup(e2) : NULL;
    setenv("CLTOPK_CACHE_DIR", dir, 1);
    setenv("CLTOPK_CACHE", "1", 1);

    float a[4] = {1, 2, 3, 4};
    int64_t b[4] = {5, 6, 7, 8};
    cltopk_column cols[2] = {{"a", CLTOPK_FLOAT32, a}, {"b", CLTOPK_INT64, b}};
    cl_context cctx;
    cl_command_queue q;
    if (cltopk_get_cl(ctx, &cctx, NULL, &q) != CLTOPK_OK)
        bail("cltopk_get_cl: %s", cltopk_last_error(ctx));
    cl_int err;
    cl_mem dc[2] = {clCreateBuffer(cctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof a, a,
                                   &err),
                    clCreateBuffer(cctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof b, b,
                                   &err)};
    if (!dc[0] || !dc[1])
        bail("clCreateBuffer: %d", (int)err);
    cl_mem outs[3] = {poisoned_mem(ctx, 64), poisoned_mem(ctx, 64), poisoned_mem(ctx, 64)};
    cl_mem ms = outs[0], mi = outs[1], mc = outs[2];
    char deep[200];
    memset(deep, '(', 70);
    deep[70] = 'a';
    memset(deep + 71, ')', 70);
    deep[141] = 0;
    static const char *const bad[][2] = {
        {"a +", NULL},
        {"(a + b", NULL},
        {"foo(a)", NULL},
        {"min(a)", NULL},
        {"a } __kernel void x(__global int *p) { p[0] = 1; ", NULL},
        {"a\n#pragma OPENCL EXTENSION all : enable", NULL},
        {"a", "b < 3 b"},
        {"a", "a"},
        {"a < b", NULL},
        {"", NULL},
        {NULL, NULL}, /* 70 deep */
    };
    int good = 1;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *order = bad[i][0] ? bad[i][0] : deep, *where = bad[i][1];
        /* the host form */
        float os[4] = {-9, -9, -9, -9};
        int64_t oi[4] = {-9, -9, -9, -9};
        size_t count = 77;
        int st = cltopk_query_topk(ctx, cols, 2, 4, order, where, 2, 0, CLTOPK_FLOAT32, os, oi,
                                   &count);
        int untouched = count == 77;
        for (int j = 0; j < 4; j++)
            untouched &= os[j] == -9 && oi[j] == -9;
        if (st != CLTOPK_ERR_EXPRESSION || !untouched) {
            diag("host form, order_by \"%s\": status %d (%s), outputs untouched %d", order, st,
                 cltopk_last_error(ctx), untouched);
            good = 0;
        }
        /* the cl_mem form: the outputs, the count and *done as they were */
        cl_event done = EVENT_SENTINEL;
        size_t offs[2] = {0, 0};
        char msg[256];
        st = cltopk_query_topk_buffer(ctx, cols, dc, offs, 2, 4, order, where, 2, 0,
                                      CLTOPK_FLOAT32, ms, mi, mc, 0, NULL, &done);
        if (!check_refused(ctx, ctx, "cltopk_query_topk_buffer", st, CLTOPK_ERR_EXPRESSION, done,
                           outs, 3, msg, sizeof msg)) {
            diag("cl_mem form, order_by \"%s\": %s", order, msg);
            good = 0;
        }
    }
    int built = count_builds(dir);
    ok(good && built == 0,
       "%s: %zu malformed expressions through cltopk_query_topk and cltopk_query_topk_buffer: "
       "refused, nothing written, nothing compiled (%d program binaries written)", devstr,
       sizeof bad / sizeof bad[0], built);
    /* the observation sees a build: a well-formed query through the cl_mem
     * form (which runs on the device; the host form may run on the host)
     * writes a binary.  make check-full only: with the binary cache on, POCL
     * compiles the program's kernels for every work-group size (some 30 s of
     * a cold make check here); t/cache.t checks in make check that a build
     * writes its binary there */
    if (test_full()) {
        cl_event done = NULL;
        size_t offs[2] = {0, 0};
        int st = cltopk_query_topk_buffer(ctx, cols, dc, offs, 2, 4, "a * b", "b > 5", 2, 0,
                                          CLTOPK_FLOAT32, ms, mi, mc, 0, NULL, &done);
        float os[2] = {0, 0};
        int64_t oi[2] = {0, 0};
        cl_ulong count = 0;
        if (st == CLTOPK_OK) {
            clWaitForEvents(1, &done);
            clReleaseEvent(done);
            clEnqueueReadBuffer(q, ms, CL_TRUE, 0, sizeof os, os, 0, NULL, NULL);
            clEnqueueReadBuffer(q, mi, CL_TRUE, 0, sizeof oi, oi, 0, NULL, NULL);
            clEnqueueReadBuffer(q, mc, CL_TRUE, 0, sizeof count, &count, 0, NULL, NULL);
        }
        built = count_builds(dir);
        if (!ok(st == CLTOPK_OK && count == 2 && oi[0] == 3 && oi[1] == 2 && os[0] == 32.0f &&
                    os[1] == 21.0f && built > 0,
                "%s: a well-formed query through the cl_mem form on that context compiles (%d "
                "program binaries written)", devstr, built))
            diag("status %d (%s), count %llu, rows %lld %lld, scores %g %g", st,
                 cltopk_last_error(ctx), (unsigned long long)count, (long long)oi[0],
                 (long long)oi[1], os[0], os[1]);
    }
    for (int j = 0; j < 2; j++)
        clReleaseMemObject(dc[j]);
    for (int j = 0; j < 3; j++)
        clReleaseMemObject(outs[j]);
    cltopk_close(ctx);
    if (cdir)
        setenv("CLTOPK_CACHE_DIR", cdir, 1);
    else
        unsetenv("CLTOPK_CACHE_DIR");
    if (cache)
        setenv("CLTOPK_CACHE", cache, 1);
    else
        unsetenv("CLTOPK_CACHE");
    free(cdir), free(cache);
    remove_dir(dir);
}
#endif

int main(void)
{
    plan_lazy();
    watchdog(600);
    test_quick_builds(); /* POCL builds dominate: see testlib.h */
    rng_init(&rng, test_seed() ^ 0x9E77);
    cltopk_context *ctxs[2];
    const char *devs[2] = {"cpu", "opencl"};
    if (cltopk_open(&ctxs[0], "cpu") != CLTOPK_OK)
        bail("cltopk_open(cpu): %s", cltopk_last_error(NULL));
    int nctx = 1;
    char why[512];
    if (open_test_cl(&ctxs[1], why, sizeof why))
        nctx = 2;
    else
        diag("no OpenCL device: %s", why);

    if (QUERY_SF) {
        /* the sample-filter query: its paths, then random trees through it */
        tweets(ctxs, devs, nctx);
        sf_env = "path=sf";
        random_runs(ctxs, devs, nctx, 4, test_full() ? 120 : 20);
    } else {
        refusals(ctxs[0], "cpu");
        if (nctx > 1)
            refusals(ctxs[1], "opencl");
#if CLTOPK_HAVE_OPENCL
        if (nctx > 1)
            nothing_compiled();
#endif
        nan_and_zero(ctxs, devs, nctx);
        tweets(ctxs, devs, nctx);
        random_runs(ctxs, devs, nctx, 8, test_full() ? 300 : 24);
        logexp(ctxs, devs, nctx);
        if (nctx > 1)
            spec_limits(ctxs[1], devs[1]);
    }
    if (nctx < 2)
        skip("the OpenCL parts: %s", why);
    for (int c = 0; c < nctx; c++)
        cltopk_close(ctxs[c]);
    return tap_done();
}
