/* query.cl - cltopk_query_topk on the device: the programs of lib/expr.h
 * interpreted as the columns are read (nothing but the candidates is
 * written), with the operations of cpu/querycpu.c one for one.
 *
 *   query_tile   group g: rows [g * TL, g * TL + TL), TL = WG * RT, a row a
 *                register slot; the filter and the score evaluated, the
 *                order keys of the passing rows that reach the threshold
 *                thr[0] (query_tile) selected by the register tile (tile.h),
 *                or, when few, sorted in local memory, with their positions
 *                in the tile as the tie-break; the group's best min(k, those)
 *                written as (order key, row) candidates at g * k (the
 *                sentinel row past them), its passing rows added to count[0]
 *   query_merge  group g: the candidates of parts groups of the level below
 *                (parts * k of them, at most TL; rows as the tie-break);
 *                writes its best k as the next level's candidates, or, with
 *                final 1 (one group), the outputs: rows as int64 (-1 past the
 *                count), scores evaluated again at those rows (a NaN as the
 *                quiet NaN; 0 past the count), and the count min(k, count[0])
 *   query_score  the device peer: the score column (cltopk_benchmark_query_peer)
 *   qsf_sample, qsf_thresh, qsf_filter, qsf_reduce  the sample-filter query
 *                (below): a threshold from sampled rows, one read keeping the
 *                rows at or above it, their top k through query_merge, or
 *                the tile query as the exact fallback (its launches gated on
 *                the decision, made on the device)
 *
 * -D options (defaults below and in tile.h, so that the file compiles on its
 * own): KEY_BITS (32: float32 scores, 64: float64), WG, RT, MCAP, PB (tile.h: 16 for
 * query_tile's positions in a tile, 31 for query_merge's rows), QKERNELS and
 * QROWS (the kernels a program holds, below), F64 (1: the
 * device has fp64, so float64 columns can be read; their types come at run
 * time, offs[8 ..]: 0 float32, 1 float64, 2 int32, 3 uint32, 4 int64, 5
 * uint64, so that one program serves every query), DIV64 (1: float32 division and
 * square root computed in float64 and rounded once, which is the correctly
 * rounded result, where the device does not round them correctly), QTHR (1:
 * query_tile keeps the threshold below), QSPEC (1: the programs come as -D
 * options, below; 0: they are interpreted from ops / consts), QFULL (1:
 * qsf_filter and query_score read a whole tile's rows unclamped; 0: every
 * row clamped and tested, for measuring). */
#pragma OPENCL FP_CONTRACT OFF

#ifndef KEY_BITS
#define KEY_BITS 32
#endif
#define KEY_KIND 2
#define STACK 32 /* lib/expr.h: EXPR_MAX_STACK */
#ifndef DIV64
#define DIV64 0
#endif
#ifndef QTHR
#define QTHR 1
#endif
#ifndef QFULL
#define QFULL 1 /* qsf_filter and query_score: whole tiles' rows unclamped */
#endif

#ifndef F64
#define F64 0
#endif
#if KEY_BITS == 64 || DIV64 || F64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define HAVE_F64 1
#else
#define HAVE_F64 0
#endif

#ifndef CLTOPK_COMMON_CL
#include "common.cl"
#endif
#include "tile.h"

/* operations and comparisons: lib/expr.h */
#define XOP_COLF 1
#define XOP_COLI 2
#define XOP_CONF 3
#define XOP_CONI 4
#define XOP_ADD 5
#define XOP_SUB 6
#define XOP_MUL 7
#define XOP_DIV 8
#define XOP_NEG 9
#define XOP_MIN 10
#define XOP_MAX 11
#define XOP_ABS 12
#define XOP_SQRT 13
#define XOP_LOG 14
#define XOP_EXP 15
#define XOP_FLOOR 16
#define XOP_CEIL 17
#define XOP_CMPF 18
#define XOP_CMPI 19
#define XOP_AND 20
#define XOP_OR 21
#define XOP_NOT 22
#define XOP_SEL 23
#define XOP_FMA 24

#if KEY_BITS == 64
typedef double score_t;
#define AS_SCORE(b) as_double(b)
#define SCORE_BITS(x) as_ulong(x)
#define QNAN_BITS 0x7FF8000000000000UL
#else
typedef float score_t;
#define AS_SCORE(b) as_float((uint)(b))
#define SCORE_BITS(x) ((ulong)as_uint(x))
#define QNAN_BITS 0x7FC00000UL
#endif

/* ---- cltopk's own log and exp (lib/expr.c: the same operations) ---- */
inline float q_expf(float x)
{
    if (isnan(x))
        return x;
    if (x > 0x1.62e43p+6f)
        return INFINITY;
    if (x < -0x1.9fe36ap+6f)
        return 0.0f;
    float n = floor(x * 0x1.715476p+0f + 0.5f);
    float r = (x - n * 0x1.62e4p-1f) - n * 0x1.7f7d1cp-20f;
    float p = 0x1.a01a02p-13f;
    p = p * r + 0x1.6c16c2p-10f;
    p = p * r + 0x1.111112p-7f;
    p = p * r + 0x1.555556p-5f;
    p = p * r + 0x1.555556p-3f;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    return ldexp(p, (int)n);
}

inline float q_divf(float x, float y)
{
#if DIV64
    return convert_float_rte((double)x / (double)y);
#else
    return x / y;
#endif
}

inline float q_sqrtf(float x)
{
#if DIV64
    return convert_float_rte(sqrt((double)x));
#else
    return sqrt(x);
#endif
}

inline float q_logf(float x)
{
    if (isnan(x) || x < 0.0f)
        return NAN;
    if (x == 0.0f)
        return -INFINITY;
    if (isinf(x))
        return x;
    int e;
    float m = frexp(x, &e);
    if (m < 0x1.6a09e6p-1f) {
        m = m * 2.0f;
        e = e - 1;
    }
    float s = q_divf(m - 1.0f, m + 1.0f), z = s * s;
    float p = 0x1.745d18p-4f;
    p = p * z + 0x1.c71c72p-4f;
    p = p * z + 0x1.24924ap-3f;
    p = p * z + 0x1.99999ap-3f;
    p = p * z + 0x1.555556p-2f;
    p = p * z + 1.0f;
    float lm = 2.0f * s * p;
    float fe = (float)e;
    return (fe * 0x1.62e4p-1f + lm) + fe * 0x1.7f7d1cp-20f;
}

#if HAVE_F64
__constant double q_exp_coef[14] = {
    0x1.6124613a86d09p-33, 0x1.1eed8eff8d898p-29, 0x1.ae64567f544e4p-26,
    0x1.27e4fb7789f5cp-22, 0x1.71de3a556c734p-19, 0x1.a01a01a01a01ap-16,
    0x1.a01a01a01a01ap-13, 0x1.6c16c16c16c17p-10, 0x1.1111111111111p-7,
    0x1.5555555555555p-5,  0x1.5555555555555p-3,  0.5,
    1.0,                   1.0};

inline double q_exp(double x)
{
    if (isnan(x))
        return x;
    if (x > 0x1.62e42fefa39efp+9)
        return INFINITY;
    if (x < -0x1.74910d52d3052p+9)
        return 0.0;
    double n = floor(x * 0x1.71547652b82fep+0 + 0.5);
    double r = (x - n * 0x1.62e42feep-1) - n * 0x1.a39ef35793c76p-33;
    double p = q_exp_coef[0];
    for (int i = 1; i < 14; i++)
        p = p * r + q_exp_coef[i];
    return ldexp(p, (int)n);
}

inline double q_log(double x)
{
    if (isnan(x) || x < 0.0)
        return NAN;
    if (x == 0.0)
        return -INFINITY;
    if (isinf(x))
        return x;
    int e;
    double m = frexp(x, &e);
    if (m < 0x1.6a09e667f3bcdp-1) {
        m = m * 2.0;
        e = e - 1;
    }
    double s = (m - 1.0) / (m + 1.0), z = s * s;
    double p = 1.0 / 23.0;
    for (int i = 21; i >= 1; i -= 2)
        p = p * z + 1.0 / (double)i;
    double lm = 2.0 * s * p;
    double fe = (double)e;
    return (fe * 0x1.62e42feep-1 + lm) + fe * 0x1.a39ef35793c76p-33;
}
#endif

#if KEY_BITS == 64
#define Q_DIV(x, y) ((x) / (y))
#define Q_SQRT(x) sqrt(x)
#define Q_LOG(x) q_log(x)
#define Q_EXP(x) q_exp(x)
#else
#define Q_DIV(x, y) q_divf(x, y)
#define Q_SQRT(x) q_sqrtf(x)
#define Q_LOG(x) q_logf(x)
#define Q_EXP(x) q_expf(x)
#endif

/* ---- the columns: c0 .. c7, of types T0 .. T7 ----
 * Row i's element: element i, or (QBB defined: the blocked layout of the
 * index's device data, lib/indexdev.c) element i % QBB of the row's block of
 * QBB rows, each block of a column QBS elements after the one before */
#ifdef QBB
#define QIX(i) ((i) / QBB * (ulong)QBS + (i) % QBB)
#else
#define QIX(i) (i)
#endif
#if KEY_BITS == 64
#define TO_SCORE_F(x) ((double)(x))
#define TO_SCORE_D(x) (x)
#define TO_SCORE_I(x) convert_double_rte(x)
#else
#define TO_SCORE_F(x) (x)
#define TO_SCORE_D(x) convert_float_rte(x)
#define TO_SCORE_I(x) convert_float_rte(x)
#endif
inline score_t num_of_0(__global const uchar *p, ulong i)
{
    return TO_SCORE_F(((__global const float *)p)[QIX(i)]);
}
#if HAVE_F64
inline score_t num_of_1(__global const uchar *p, ulong i)
{
    return TO_SCORE_D(((__global const double *)p)[QIX(i)]);
}
#else
inline score_t num_of_1(__global const uchar *p, ulong i)
{
    return 0; /* never reached: the host requires fp64 for float64 columns */
}
#endif
inline score_t num_of_2(__global const uchar *p, ulong i)
{
    return TO_SCORE_I(((__global const int *)p)[QIX(i)]);
}
inline score_t num_of_3(__global const uchar *p, ulong i)
{
    return TO_SCORE_I(((__global const uint *)p)[QIX(i)]);
}
inline score_t num_of_4(__global const uchar *p, ulong i)
{
    return TO_SCORE_I(((__global const long *)p)[QIX(i)]);
}
inline score_t num_of_5(__global const uchar *p, ulong i)
{
    return TO_SCORE_I(((__global const ulong *)p)[QIX(i)]);
}
/* exact integers: the 64 bits (sign-extended) and whether negative */
inline ulong exact_of_2(__global const uchar *p, ulong i, uchar *neg)
{
    int v = ((__global const int *)p)[QIX(i)];
    *neg = v < 0;
    return (ulong)(long)v;
}
inline ulong exact_of_3(__global const uchar *p, ulong i, uchar *neg)
{
    *neg = 0;
    return (ulong)((__global const uint *)p)[QIX(i)];
}
inline ulong exact_of_4(__global const uchar *p, ulong i, uchar *neg)
{
    long v = ((__global const long *)p)[QIX(i)];
    *neg = v < 0;
    return (ulong)v;
}
inline ulong exact_of_5(__global const uchar *p, ulong i, uchar *neg)
{
    *neg = 0;
    return ((__global const ulong *)p)[QIX(i)];
}
#define COLS_ARGS                                                                             \
    __global const uchar *c0, __global const uchar *c1, __global const uchar *c2,             \
        __global const uchar *c3, __global const uchar *c4, __global const uchar *c5,         \
        __global const uchar *c6, __global const uchar *c7, __global const ulong *ctype
#define COLS_PASS c0, c1, c2, c3, c4, c5, c6, c7, ctype
/* a kernel's column buffers b0 .. b7, their byte offsets offs[0 .. 8) and
 * their types offs[8 .. 16) */
#define KCOLS_ARGS                                                                            \
    __global const uchar *b0, __global const uchar *b1, __global const uchar *b2,             \
        __global const uchar *b3, __global const uchar *b4, __global const uchar *b5,         \
        __global const uchar *b6, __global const uchar *b7, __global const ulong *offs
#define KCOLS_START                                                                           \
    __global const uchar *c0 = b0 + offs[0], *c1 = b1 + offs[1], *c2 = b2 + offs[2];           \
    __global const uchar *c3 = b3 + offs[3], *c4 = b4 + offs[4], *c5 = b5 + offs[5];           \
    __global const uchar *c6 = b6 + offs[6], *c7 = b7 + offs[7];                               \
    __global const ulong *ctype = offs + 8

inline __global const uchar *col_ptr(COLS_ARGS, uint r)
{
    switch (r) {
    case 0: return c0;
    case 1: return c1;
    case 2: return c2;
    case 3: return c3;
    case 4: return c4;
    case 5: return c5;
    case 6: return c6;
    default: return c7;
    }
}

inline score_t col_number(COLS_ARGS, uint r, ulong i)
{
    __global const uchar *p = col_ptr(COLS_PASS, r);
    switch (ctype[r]) {
    case 0: return num_of_0(p, i);
    case 1: return num_of_1(p, i);
    case 2: return num_of_2(p, i);
    case 3: return num_of_3(p, i);
    case 4: return num_of_4(p, i);
    default: return num_of_5(p, i);
    }
}

inline ulong col_exact(COLS_ARGS, uint r, ulong i, uchar *neg)
{
    __global const uchar *p = col_ptr(COLS_PASS, r);
    switch (ctype[r]) {
    case 2: return exact_of_2(p, i, neg);
    case 3: return exact_of_3(p, i, neg);
    case 4: return exact_of_4(p, i, neg);
    case 5: return exact_of_5(p, i, neg);
    default: *neg = 0; return 0; /* never emitted for float columns */
    }
}

inline score_t q_min(score_t x, score_t y)
{
    return isnan(x) || isnan(y) ? (score_t)NAN : y < x ? y : x;
}

inline score_t q_max(score_t x, score_t y)
{
    return isnan(x) || isnan(y) ? (score_t)NAN : y > x ? y : x;
}

inline int q_cmp_num(uint c, score_t x, score_t y)
{
    switch (c) {
    case 0: return x < y;
    case 1: return x <= y;
    case 2: return x > y;
    case 3: return x >= y;
    case 4: return x == y;
    default: return x != y;
    }
}

inline int q_cmp_exact(uint c, ulong x, uchar xn, ulong y, uchar yn)
{
    int lt = xn != yn ? (int)xn : x < y, eq = xn == yn && x == y;
    switch (c) {
    case 0: return lt;
    case 1: return lt || eq;
    case 2: return !lt && !eq;
    case 3: return !lt;
    case 4: return eq;
    default: return !eq;
    }
}

/* the program (nops words of ops, constants consts) at row i: the top slot */
inline ulong run_prog(COLS_ARGS, __global const uint *ops, uint nops,
                      __global const ulong *consts, ulong i)
{
    ulong v[STACK];
    uchar ng[STACK];
    int sp = 0;
    for (uint o = 0; o < nops; o++) {
        const uint op = ops[o] & 255u, a = ops[o] >> 8;
        switch (op) {
        case XOP_COLF: v[sp] = SCORE_BITS(col_number(COLS_PASS, a, i)); sp++; break;
        case XOP_COLI: v[sp] = col_exact(COLS_PASS, a, i, &ng[sp]); sp++; break;
        case XOP_CONF: v[sp] = consts[a]; sp++; break;
        case XOP_CONI: v[sp] = consts[a]; ng[sp] = (uchar)consts[a + 1]; sp++; break;
        case XOP_ADD: sp--; v[sp - 1] = SCORE_BITS(AS_SCORE(v[sp - 1]) + AS_SCORE(v[sp])); break;
        case XOP_SUB: sp--; v[sp - 1] = SCORE_BITS(AS_SCORE(v[sp - 1]) - AS_SCORE(v[sp])); break;
        case XOP_MUL: sp--; v[sp - 1] = SCORE_BITS(AS_SCORE(v[sp - 1]) * AS_SCORE(v[sp])); break;
        case XOP_DIV:
            sp--;
            v[sp - 1] = SCORE_BITS(Q_DIV(AS_SCORE(v[sp - 1]), AS_SCORE(v[sp])));
            break;
        case XOP_MIN: sp--; v[sp - 1] = SCORE_BITS(q_min(AS_SCORE(v[sp - 1]), AS_SCORE(v[sp]))); break;
        case XOP_MAX: sp--; v[sp - 1] = SCORE_BITS(q_max(AS_SCORE(v[sp - 1]), AS_SCORE(v[sp]))); break;
        case XOP_NEG: v[sp - 1] = SCORE_BITS(-AS_SCORE(v[sp - 1])); break;
        case XOP_ABS: v[sp - 1] = SCORE_BITS(fabs(AS_SCORE(v[sp - 1]))); break;
        case XOP_SQRT: v[sp - 1] = SCORE_BITS(Q_SQRT(AS_SCORE(v[sp - 1]))); break;
        case XOP_LOG: v[sp - 1] = SCORE_BITS(Q_LOG(AS_SCORE(v[sp - 1]))); break;
        case XOP_EXP: v[sp - 1] = SCORE_BITS(Q_EXP(AS_SCORE(v[sp - 1]))); break;
        case XOP_FLOOR: v[sp - 1] = SCORE_BITS(floor(AS_SCORE(v[sp - 1]))); break;
        case XOP_CEIL: v[sp - 1] = SCORE_BITS(ceil(AS_SCORE(v[sp - 1]))); break;
        case XOP_CMPF:
            sp--;
            v[sp - 1] = (ulong)q_cmp_num(a, AS_SCORE(v[sp - 1]), AS_SCORE(v[sp]));
            break;
        case XOP_CMPI:
            sp--;
            v[sp - 1] = (ulong)q_cmp_exact(a, v[sp - 1], ng[sp - 1], v[sp], ng[sp]);
            break;
        case XOP_AND: sp--; v[sp - 1] &= v[sp]; break;
        case XOP_OR: sp--; v[sp - 1] |= v[sp]; break;
        case XOP_NOT: v[sp - 1] ^= 1UL; break;
        case XOP_SEL: sp -= 2; v[sp - 1] = v[sp - 1] ? v[sp] : v[sp + 1]; break;
        case XOP_FMA:
            sp -= 2;
            v[sp - 1] = SCORE_BITS(fma(AS_SCORE(v[sp]), AS_SCORE(v[sp + 1]), AS_SCORE(v[sp - 1])));
            break;
        }
    }
    return v[0];
}

/* ---- the specialised programs (QSPEC 1) ----
 * The host turns the two programs into options (numbers only: never the
 * caller's text): QO_N / QW_N the score's and the filter's lengths (QW_N 0:
 * no filter), and for step i of program P (QO_ or QW_) P OPi the operation,
 * P Si the stack slot it writes (operands at Si, Si + 1, Si + 2: the stack
 * depth at each step is known when the program is compiled, so the stack is
 * the named registers v0 .. v31 and their sign flags g0 .. g31), P Ai its
 * operand (a column 0 .. 7, a comparison, or the index of a constant in the
 * program's constant buffer, so that queries differing only in constants
 * share one program); QCT0 .. QCT7 the columns' types (as
 * offs[8 ..] above: each column load is one typed load) and QO_COLS /
 * QW_COLS the columns each program reads (bit r: column r), QRB the rows of
 * a batch.  A work-item takes its rows QRB at a time: it reads the filter's
 * columns of all of them (loads issued together, none waiting for another),
 * runs the filter on each, reads the score's other columns where the filter
 * holds (so each column is read once a row, and not at all where no row of
 * a memory segment passes), then runs the score on each.
 * cl/query_steps.h unrolls up to QMAX steps; longer programs take the
 * interpreter (the host decides). */
#ifndef QSPEC
#define QSPEC 0
#endif
/* the kernels a program holds (fewer to compile): QROWS 1 the kernels that
 * read the rows (query_tile; with QKERNELS 1 also qsf_sample and qsf_filter;
 * QKERNELS 2: query_score alone), QROWS 0 those that read candidates
 * (query_merge; with QKERNELS 1 also qsf_thresh and qsf_reduce) */
#ifndef QKERNELS
#define QKERNELS 1
#endif
#ifndef QROWS
#define QROWS 1
#endif
#define QMAX 64 /* cl/query_steps.h; lib/querydev.c: QDEV_SPEC_MAX */
#if QSPEC
#define QCAT(a, b) QCAT_(a, b)
#define QCAT_(a, b) a##b
/* the slot after slot s */
#define QNX0 1
#define QNX1 2
#define QNX2 3
#define QNX3 4
#define QNX4 5
#define QNX5 6
#define QNX6 7
#define QNX7 8
#define QNX8 9
#define QNX9 10
#define QNX10 11
#define QNX11 12
#define QNX12 13
#define QNX13 14
#define QNX14 15
#define QNX15 16
#define QNX16 17
#define QNX17 18
#define QNX18 19
#define QNX19 20
#define QNX20 21
#define QNX21 22
#define QNX22 23
#define QNX23 24
#define QNX24 25
#define QNX25 26
#define QNX26 27
#define QNX27 28
#define QNX28 29
#define QNX29 30
#define QNX30 31
#define QV(s) QCAT(v, s)
#define QG(s) QCAT(g, s)
#define QV1(s) QV(QCAT(QNX, s))
#define QG1(s) QG(QCAT(QNX, s))
#define QV2(s) QV(QCAT(QNX, QCAT(QNX, s)))
#define QSLOTS                                                                                \
    ulong v0 = 0, v1 = 0, v2 = 0, v3 = 0, v4 = 0, v5 = 0, v6 = 0, v7 = 0, v8 = 0, v9 = 0;      \
    ulong v10 = 0, v11 = 0, v12 = 0, v13 = 0, v14 = 0, v15 = 0, v16 = 0, v17 = 0, v18 = 0;     \
    ulong v19 = 0, v20 = 0, v21 = 0, v22 = 0, v23 = 0, v24 = 0, v25 = 0, v26 = 0, v27 = 0;     \
    ulong v28 = 0, v29 = 0, v30 = 0, v31 = 0;                                                 \
    uint g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0, g8 = 0, g9 = 0;       \
    uint g10 = 0, g11 = 0, g12 = 0, g13 = 0, g14 = 0, g15 = 0, g16 = 0, g17 = 0, g18 = 0;      \
    uint g19 = 0, g20 = 0, g21 = 0, g22 = 0, g23 = 0, g24 = 0, g25 = 0, g26 = 0, g27 = 0;      \
    uint g28 = 0, g29 = 0, g30 = 0, g31 = 0

/* the columns: element types, a value as a number, as an exact integer and
 * its sign */
#define QTYPE_0 float
#define QTYPE_1 double
#define QTYPE_2 int
#define QTYPE_3 uint
#define QTYPE_4 long
#define QTYPE_5 ulong
#define QNUM_0(x) TO_SCORE_F(x)
#define QNUM_1(x) TO_SCORE_D(x)
#define QNUM_2(x) TO_SCORE_I(x)
#define QNUM_3(x) TO_SCORE_I(x)
#define QNUM_4(x) TO_SCORE_I(x)
#define QNUM_5(x) TO_SCORE_I(x)
#define QEX_2(x) ((ulong)(long)(x))
#define QEX_3(x) ((ulong)(x))
#define QEX_4(x) ((ulong)(x))
#define QEX_5(x) ((ulong)(x))
#define QNG_2(x) ((uint)((x) < 0))
#define QNG_3(x) 0u
#define QNG_4(x) ((uint)((x) < 0))
#define QNG_5(x) 0u
#define QT(r) QCAT(QTYPE_, QCAT(QCT, r))
#define QX(r) QCAT(x, r)[qb]
#define QPTR(r) QCAT(p, r)
#define QCMPF_0(x, y) ((x) < (y))
#define QCMPF_1(x, y) ((x) <= (y))
#define QCMPF_2(x, y) ((x) > (y))
#define QCMPF_3(x, y) ((x) >= (y))
#define QCMPF_4(x, y) ((x) == (y))
#define QCMPF_5(x, y) ((x) != (y))

/* one operation: op at slot s, operand a (b unused) */
#define QSTEP(i)                                                                              \
    QSTEP_(QCAT(QCAT(QP, OP), i), QCAT(QCAT(QP, S), i), QCAT(QCAT(QP, A), i), 0)
#define QSTEP_(op, s, a, b) QSTEP__(op, s, a, b)
#define QSTEP__(op, s, a, b) QOP_##op(s, a, b);
#define QBIN(s, E)                                                                            \
    do {                                                                                      \
        const score_t x = AS_SCORE(QV(s)), y = AS_SCORE(QV1(s));                              \
        QV(s) = SCORE_BITS(E);                                                                \
    } while (0)
#define QUN(s, E)                                                                             \
    do {                                                                                      \
        const score_t x = AS_SCORE(QV(s));                                                    \
        QV(s) = SCORE_BITS(E);                                                                \
    } while (0)
#define QOP_1(s, a, b) QV(s) = SCORE_BITS(QCAT(QNUM_, QCAT(QCT, a))(QX(a)))
#define QOP_2(s, a, b)                                                                        \
    QV(s) = QCAT(QEX_, QCAT(QCT, a))(QX(a)), QG(s) = QCAT(QNG_, QCAT(QCT, a))(QX(a))
/* constants: a is the index into the program's constants (QK: consts or
 * wconsts), so that a query that differs in its constants only is the same
 * program */
#define QOP_3(s, a, b) QV(s) = QK[a]
#define QOP_4(s, a, b) QV(s) = QK[a], QG(s) = (uint)(QK[(a) + 1] & 1u)
#define QOP_5(s, a, b) QBIN(s, x + y)
#define QOP_6(s, a, b) QBIN(s, x - y)
#define QOP_7(s, a, b) QBIN(s, x * y)
#define QOP_8(s, a, b) QBIN(s, Q_DIV(x, y))
#define QOP_9(s, a, b) QUN(s, -x)
#define QOP_10(s, a, b) QBIN(s, q_min(x, y))
#define QOP_11(s, a, b) QBIN(s, q_max(x, y))
#define QOP_12(s, a, b) QUN(s, fabs(x))
#define QOP_13(s, a, b) QUN(s, Q_SQRT(x))
#define QOP_14(s, a, b) QUN(s, Q_LOG(x))
#define QOP_15(s, a, b) QUN(s, Q_EXP(x))
#define QOP_16(s, a, b) QUN(s, floor(x))
#define QOP_17(s, a, b) QUN(s, ceil(x))
#define QOP_18(s, a, b)                                                                       \
    QV(s) = (ulong)QCAT(QCMPF_, a)(AS_SCORE(QV(s)), AS_SCORE(QV1(s)))
#define QOP_19(s, a, b) QV(s) = (ulong)q_cmp_exact(a, QV(s), QG(s), QV1(s), QG1(s))
#define QOP_20(s, a, b) QV(s) &= QV1(s)
#define QOP_21(s, a, b) QV(s) |= QV1(s)
#define QOP_22(s, a, b) QV(s) ^= 1UL
#define QOP_23(s, a, b) QV(s) = QV(s) ? QV1(s) : QV2(s)
/* acc, y, z -> fma(y, z, acc): no expression makes it (the index's score,
 * lib/indexdev.c) */
#define QOP_24(s, a, b)                                                                       \
    do {                                                                                      \
        const score_t x = AS_SCORE(QV(s)), y = AS_SCORE(QV1(s)), z = AS_SCORE(QV2(s));        \
        QV(s) = SCORE_BITS(fma(y, z, x));                                                     \
    } while (0)

/* typed column pointers p0 .. p7 from the kernel's c0 .. c7 */
#define QPTRS_START                                                                           \
    __global const QT(0) *p0 = (__global const QT(0) *)c0;                                    \
    __global const QT(1) *p1 = (__global const QT(1) *)c1;                                    \
    __global const QT(2) *p2 = (__global const QT(2) *)c2;                                    \
    __global const QT(3) *p3 = (__global const QT(3) *)c3;                                    \
    __global const QT(4) *p4 = (__global const QT(4) *)c4;                                    \
    __global const QT(5) *p5 = (__global const QT(5) *)c5;                                    \
    __global const QT(6) *p6 = (__global const QT(6) *)c6;                                    \
    __global const QT(7) *p7 = (__global const QT(7) *)c7
/* the values of a batch of QRB rows: x0 .. x7[QRB] */
#define QXS_DECL                                                                              \
    QT(0) x0[QRB] = {0};                                                                      \
    QT(1) x1[QRB] = {0};                                                                      \
    QT(2) x2[QRB] = {0};                                                                      \
    QT(3) x3[QRB] = {0};                                                                      \
    QT(4) x4[QRB] = {0};                                                                      \
    QT(5) x5[QRB] = {0};                                                                      \
    QT(6) x6[QRB] = {0};                                                                      \
    QT(7) x7[QRB] = {0}
/* row i of the columns in mask m (a constant: the others cost nothing) into
 * batch slot qb */
#define QLOAD1(r, m, i)                                                                       \
    if (((m) >> r) & 1)                                                                       \
        QX(r) = QPTR(r)[QIX(i)];
#define QLOAD(m, i)                                                                           \
    QLOAD1(0, m, i) QLOAD1(1, m, i) QLOAD1(2, m, i) QLOAD1(3, m, i) QLOAD1(4, m, i)           \
        QLOAD1(5, m, i) QLOAD1(6, m, i) QLOAD1(7, m, i)
#endif /* QSPEC */

#define PROG_ARGS                                                                             \
    __global const uint *ops, uint nord, uint nwhere, __global const ulong *consts,         \
        __global const ulong *wconsts

/* the order key of row i, or 0 with *pass 0 where the filter fails */
inline okey_t row_key(COLS_ARGS, PROG_ARGS, ulong i, uint smallest, int *pass)
{
    if (nwhere && !run_prog(COLS_PASS, ops + nord, nwhere, wconsts, i)) {
        *pass = 0;
        return 0;
    }
    *pass = 1;
    return order_key((okey_t)run_prog(COLS_PASS, ops, nord, consts, i), smallest);
}

#if QSPEC
#define QSPEC_START QPTRS_START
#ifndef QRB
#define QRB 4
#endif
#else
#define QSPEC_START
#endif

/* the threshold *thr: the high 32 bits of an order key that k rows already
 * reach (each tile with k candidates raises it to its k-th); a row whose key
 * is below it cannot be among the k best, so it is no tile's candidate (it
 * still counts as passing).  Its value depends on the groups' timing, the
 * result does not. */
#if KEY_BITS == 64
#define THR_OF(key) ((uint)((key) >> 32))
#define THR_KEY(t) ((okey_t)(t) << 32)
#else
#define THR_OF(key) (key)
#define THR_KEY(t) (t)
#endif

/* row j of the tile (where the row is below n: in_) into slot r: its key
 * key_ where it passes (pass_) */
#define TILE_SET(r, j, in_, pass_, key_)                                                      \
    do {                                                                                      \
        const int p_ = (pass_) && (in_);                                                      \
        const int cand_ = p_ && (key_) >= tk;                                                 \
        u[r] = cand_ ? (key_) : (okey_t)0;                                                    \
        lo[r] = cand_ ? LO_OF(j) : 0u;                                                        \
        mine += (uint)p_;                                                                     \
        minec += (uint)cand_;                                                                 \
    } while (0)
/* the row of tile position j: past the last row, the last row (read, so that
 * every load is unconditional, and not passing) */
#define TILE_ROWNUM(j) (base + (j) < n ? base + (j) : n - 1)

/* ---- the gate: which of a call's launches run ----
 * The sample-filter query (qsf_* below) decides on the device whether its
 * survivors serve; the launches after it read that decision from its state
 * (st[QSF_GATE]: 1 served, 2 fall back) and return at once unless it is
 * their gmode (0: always run, the tile query alone). */
#define QSF_PASS 0  /* rows passing the filter (the count of the outputs) */
#define QSF_SURV 1  /* rows at or above the threshold (survivors) */
#define QSF_TROW 2  /* the threshold's row */
#define QSF_ALL 3   /* 1: every passing row survives */
#define QSF_TKEY 4  /* the threshold's order key: low word, then high (64-bit keys) */
#define QSF_GATE 6
#define QSF_LAZY 7  /* 1: qsf_filter reads the score's columns only where the filter holds */
#define QSF_WORDS 8 /* then each sample group's passing samples, at QSF_WORDS + group */
#define GATE_ARGS __global const uint *gate, uint gmode
#define GATE_CLOSED (gmode != 0u && gate[QSF_GATE] != gmode)

#if QROWS && QKERNELS != 2
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
query_tile(KCOLS_ARGS, PROG_ARGS, ulong n, uint k, uint smallest, __global okey_t *cand_u,
           __global uint *cand_i, __global uint *count, __global uint *thr, GATE_ARGS)
{
    /* no return before a barrier (POCL's work-group loops mishandle one): a
     * closed gate runs no tile.  Group g takes tiles g, g + groups, ... (the
     * host launches a group a tile, or, behind a gate, fewer) */
    const int open = !GATE_CLOSED;
    KCOLS_START;
    QSPEC_START;
    __local tile_locals L;
    __local uint passing, cands;
    const uint lid = get_local_id(0);
    const ulong ntiles = open ? (n + (ulong)(WG * RT) - 1) / (ulong)(WG * RT) : 0;
    for (ulong g = get_group_id(0); g < ntiles; g += get_num_groups(0)) {
        const ulong base = g * (ulong)(WG * RT);
        if (lid == 0) {
            passing = 0;
            cands = 0;
        }
#if QTHR
        const okey_t tk = THR_KEY(*(volatile __global uint *)thr);
#else
        const okey_t tk = 0;
#endif
        barrier(CLK_LOCAL_MEM_FENCE);
        okey_t u[RT];
        uint lo[RT], mine = 0, minec = 0;
#define QR_ROW(j) TILE_ROWNUM(j)
#define QR_SET(r, j, pass_, key_) TILE_SET(r, j, base + (j) < n, pass_, key_)
#include "query_rows.h"
#undef QR_SET
#undef QR_ROW
        if (mine)
            atomic_add(&passing, mine);
        if (minec)
            atomic_add(&cands, minec);
        barrier(CLK_LOCAL_MEM_FENCE);
        const uint cnt = passing, cc = cands;
        const uint kk = k < cc ? k : cc;
        tile_select_of(u, lo, k, cc, &L);
        tile_store(cand_u, cand_i, g * k, k, kk, (uint)base, &L);
        if (lid == 0 && cnt)
            atomic_add(count, cnt);
#if QTHR
        if (lid == 0 && cc >= k)
            atomic_max(thr, THR_OF(L.cu[k - 1]));
#endif
        barrier(CLK_LOCAL_MEM_FENCE); /* L and the counts free for the next tile */
    }
}

#endif

#if QROWS && QKERNELS == 2
/* ---- the device peer (cltopk_benchmark_query_peer) ----
 * query_score: the score column, materialised: row i's score (bits as
 * computed, a NaN as one NaN), or where the filter fails the worst score (-inf
 * for the largest, a NaN for the smallest), for a top-k of it afterwards.  A
 * group a tile of rows, as query_tile. */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
query_score(KCOLS_ARGS, PROG_ARGS, ulong n, uint smallest, __global okey_t *scores)
{
    KCOLS_START;
    QSPEC_START;
    const uint lid = get_local_id(0);
    const ulong base = get_group_id(0) * (ulong)(WG * RT), blid = base + lid;
    /* the key's inverse (order_key): the score's bits, or the worst key's */
#define QSCORE_PUT(in_, j, pass_, key_)                                                       \
    do {                                                                                      \
        const okey_t w_ = (pass_) ? (key_) ^ (smallest ? OKEY_ONES : (okey_t)0)               \
                                  : (smallest ? (okey_t)QNAN_BITS : (okey_t)(OKEY_SIGN | OKEY_INF));      \
        const okey_t b_ = !(pass_) ? w_ : (w_ & OKEY_SIGN) ? w_ ^ OKEY_SIGN : ~w_;           \
        if (in_)                                                                              \
            scores[base + (j)] = b_;                                                          \
    } while (0)
#if QFULL
    /* a whole tile: its rows unclamped (as qsf_filter's whole tiles) */
    if (base + (ulong)(WG * RT) <= n) {
#define QR_ROW(j) (blid + (ulong)((j) - lid))
#define QR_SET(r, j, pass_, key_) QSCORE_PUT(1, j, pass_, key_)
#include "query_rows.h"
#undef QR_SET
#undef QR_ROW
        return;
    }
#endif
#define QR_ROW(j) TILE_ROWNUM(j)
#define QR_SET(r, j, pass_, key_) QSCORE_PUT(base + (j) < n, j, pass_, key_)
#include "query_rows.h"
#undef QR_SET
#undef QR_ROW
#undef QSCORE_PUT
}

#endif

#if QROWS && QKERNELS == 1
/* ---- the sample-filter query (lib/querydev.c: the steps and their bounds) ----
 * qsf_sample  group g: samples g * WG * QSF_SRT .. of s (QSF_SRT a work-item,
 *             at most RT), sample t at a hashed row of
 *             stratum [t n / s, (t + 1) n / s) (rows increase with t); the
 *             filter and score evaluated there; the group's best rank passing
 *             samples (order key, row) written at g * rank, its passing
 *             samples' count at st[QSF_WORDS + g]
 * (qsf_thresh, qsf_reduce: in the program of query_merge, below) */
#ifndef QSF_SRT
#define QSF_SRT RT
#endif
#if QSF_SRT < 1 || QSF_SRT > RT
#error "QSF_SRT must be 1 to RT"
#endif
inline ulong qsf_row(ulong t, ulong n, ulong s, ulong seed)
{
    const ulong a = t * n / s, b = (t + 1) * n / s;
    ulong h = seed + t * 0x9E3779B97F4A7C15UL;
    h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9UL;
    h = (h ^ (h >> 27)) * 0x94D049BB133111EBUL;
    h ^= h >> 31;
    return a + h % (b - a);
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
qsf_sample(KCOLS_ARGS, PROG_ARGS, ulong n, uint smallest, uint s, uint rank, ulong seed,
           __global okey_t *cand_u, __global uint *cand_i, __global uint *st)
{
    KCOLS_START;
    QSPEC_START;
    __local tile_locals L;
    __local uint cands, passing;
    const uint lid = get_local_id(0);
    const ulong g = get_group_id(0), t0 = g * (ulong)(WG * QSF_SRT);
    if (lid == 0) {
        cands = 0;
        passing = 0;
    }
    const okey_t tk = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    okey_t u[RT];
    uint lo[RT], mine = 0, minec = 0;
#pragma unroll
    for (uint r = QSF_SRT; r < RT; r++) { /* slots past the sample's rows: none */
        u[r] = (okey_t)0;
        lo[r] = 0u;
    }
#define QR_N QSF_SRT
#define QR_ROW(j) qsf_row(t0 + (j) < s ? t0 + (j) : s - 1, n, s, seed)
#define QR_SET(r, j, pass_, key_) TILE_SET(r, j, t0 + (j) < s, pass_, key_)
#include "query_rows.h"
#undef QR_SET
#undef QR_ROW
    if (minec)
        atomic_add(&cands, minec);
    if (mine)
        atomic_add(&passing, mine);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0)
        st[QSF_WORDS + g] = passing;
    const uint cc = cands, kk = rank < cc ? rank : cc;
    tile_select_of(u, lo, rank, cc, &L);
    for (uint i = lid; i < rank; i += WG) {
        cand_u[g * rank + i] = i < kk ? L.cu[i] : (okey_t)0;
        cand_i[g * rank + i] = i < kk ? (uint)qsf_row(t0 + L.ci[i], n, s, seed) : SENTINEL_IDX;
    }
}

/* qsf_filter  the one read: groups persistent, group g takes tiles g, g +
 *             groups, ... of QSF_N rows a work-item (WG * QSF_N rows a tile,
 *             row base + r * WG + lid), every referenced column of a batch
 *             read at once; the rows passing the filter counted
 *             (st[QSF_PASS]); those at or above the threshold (composite
 *             order: key, then smaller row) kept as (order key, row) in the
 *             group's local segment (a local atomic a row), or, the segment
 *             full, straight in the survivor buffer (a global atomic); the
 *             segment goes there at the end with one atomic a group.
 *             st[QSF_SURV] counts them all; those past cap are not written,
 *             and the call falls back.  No per-tile barrier and no key array
 *             in registers: the read runs at the occupancy of its loads.
 *             The whole tiles first, their rows unclamped (QFULL 1: a
 *             batch's loads of a column are one address with constant
 *             offsets; on the H200 Q3 read 0.62 ms against 0.73 with every
 *             row clamped and tested, bench/RESULTS.md), then the last,
 *             partial tile, clamped. */
#ifndef QSF_LSEG
#define QSF_LSEG 1024
#endif
#ifndef QSF_N
#if QSPEC
#define QSF_N QRB
#else
#define QSF_N 4
#endif
#endif
/* the read of qsf_filter (loadall 1: every referenced column of a batch at
 * once) and qsf_filter_lazy (0, specialised kernels only: the score's
 * columns only for the rows passing the filter, so that a filter rejecting
 * most rows leaves most of their sectors unread), a constant in each: two
 * kernels of the registers of one way each (one kernel holding both ways
 * behind a run-time branch read Q1 and Q3 some 15% slower on the H200).
 * The call enqueues both; the one that qsf_thresh's st[QSF_LAZY] does not
 * name returns at once. */
inline void qsf_filter_run(COLS_ARGS, PROG_ARGS, ulong n, uint smallest, uint cap,
                           __global okey_t *surv_u, __global uint *surv_i, __global uint *st,
                           const int loadall, __local okey_t *lu, __local uint *li,
                           __local uint *sc)
{
    QSPEC_START;
    /* sc: the group's passing rows, its segment's fill, the segment's base */
    const uint lid = get_local_id(0);
    if (lid == 0) {
        sc[0] = 0;
        sc[1] = 0;
    }
    const uint all = st[QSF_ALL], trow = st[QSF_TROW];
#if KEY_BITS == 64
    const okey_t tk = (okey_t)st[QSF_TKEY] | ((okey_t)st[QSF_TKEY + 1] << 32);
#else
    const okey_t tk = st[QSF_TKEY];
#endif
    barrier(CLK_LOCAL_MEM_FENCE);
    uint mine = 0;
    const ulong tl = (ulong)WG * QSF_N, ntiles = (n + tl - 1) / tl;
    /* a row at or above the threshold (in_: below n) into the segment */
#define QSF_KEEP(in_, j, pass_, key_)                                                         \
    do {                                                                                      \
        const int p_ = (pass_) && (in_);                                                      \
        const okey_t k_ = (key_);                                                             \
        mine += (uint)p_;                                                                     \
        if (p_ && (all || k_ > tk || (k_ == tk && base + (j) <= trow))) {                     \
            const uint row_ = (uint)(base + (j));                                             \
            const uint q_ = atomic_inc(&sc[1]);                                               \
            if (q_ < QSF_LSEG) {                                                              \
                lu[q_] = k_;                                                                  \
                li[q_] = row_;                                                                \
            } else {                                                                          \
                const uint o_ = atomic_inc(st + QSF_SURV);                                    \
                if (o_ < cap) {                                                               \
                    surv_u[o_] = k_;                                                          \
                    surv_i[o_] = row_;                                                        \
                }                                                                             \
            }                                                                                 \
        }                                                                                     \
    } while (0)
#define QR_N QSF_N
#define QR_LOADALL (loadall)
#if QFULL
    /* the whole tiles: rows base + j unclamped, so that a batch's loads of a
     * column are one address and constant offsets (QFULL 0: every row
     * clamped to n - 1 and tested, as in the last tile) */
    const ulong nfull = n / tl;
    for (ulong t = get_group_id(0); t < nfull; t += get_num_groups(0)) {
        const ulong base = t * tl, blid = base + lid;
        /* j - lid: a constant of the unrolled batch */
#define QR_ROW(j) (blid + (ulong)((j) - lid))
#define QR_SET(r, j, pass_, key_) QSF_KEEP(1, j, pass_, key_)
#include "query_rows.h"
#undef QR_SET
#undef QR_ROW
    }
    const ulong t0 = nfull + (get_group_id(0) + get_num_groups(0) - nfull % get_num_groups(0)) %
                                 get_num_groups(0);
#else
    const ulong t0 = get_group_id(0);
#endif
    for (ulong t = t0; t < ntiles; t += get_num_groups(0)) {
        const ulong base = t * tl;
#define QR_N QSF_N
#define QR_ROW(j) TILE_ROWNUM(j)
#define QR_SET(r, j, pass_, key_) QSF_KEEP(base + (j) < n, j, pass_, key_)
#include "query_rows.h"
#undef QR_SET
#undef QR_ROW
    }
#undef QR_LOADALL
#undef QSF_KEEP
    if (mine)
        atomic_add(&sc[0], mine);
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint c = sc[1] < QSF_LSEG ? sc[1] : QSF_LSEG;
    if (lid == 0) {
        if (sc[0])
            atomic_add(st + QSF_PASS, sc[0]);
        sc[2] = c ? atomic_add(st + QSF_SURV, c) : 0u;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint lbase = sc[2];
    for (uint j = lid; j < c; j += WG)
        if (lbase + j < cap) {
            surv_u[lbase + j] = lu[j];
            surv_i[lbase + j] = li[j];
        }
}

#define QSF_FILTER_KERNEL(name, loadall)                                                      \
    __kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void name(                       \
        KCOLS_ARGS, PROG_ARGS, ulong n, uint smallest, uint cap, __global okey_t *surv_u,     \
        __global uint *surv_i, __global uint *st)                                             \
    {                                                                                         \
        KCOLS_START;                                                                          \
        __local okey_t lu[QSF_LSEG];                                                          \
        __local uint li[QSF_LSEG], sc[3];                                                     \
        if ((st[QSF_LAZY] != 0u) == (loadall))                                                \
            return; /* the other way reads (uniform: no barrier passed yet) */                \
        qsf_filter_run(COLS_PASS, ops, nord, nwhere, consts, wconsts, n, smallest, cap,       \
                       surv_u, surv_i, st, (loadall), lu, li, sc);                            \
    }
QSF_FILTER_KERNEL(qsf_filter, 1)
#if QSPEC
QSF_FILTER_KERNEL(qsf_filter_lazy, 0)
#endif
#endif

#if !QROWS
/* the group's best min(k, real) of the candidates first .. first + len (at
 * most a tile; the sentinel row marks none) selected into L (tile.h); their
 * real count, through *real, returned */
inline uint cands_select(__global const okey_t *in_u, __global const uint *in_i, ulong first,
                         uint len, uint k, __local tile_locals *L, __local uint *real)
{
    if (get_local_id(0) == 0)
        *real = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    okey_t u[RT];
    uint lo[RT];
    const uint mine = tile_from_cands(in_u, in_i, first, len, u, lo);
    if (mine)
        atomic_add(real, mine);
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint cnt = *real;
    tile_select_of(u, lo, k, cnt, L);
    return cnt;
}
#endif

/* in the program that reads candidates (QROWS 0), never specialised: one
 * program serves every query */
#if !QROWS && QKERNELS != 2
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
query_merge(KCOLS_ARGS, PROG_ARGS, uint k, uint parts, ulong ncand,
            __global const okey_t *in_u, __global const uint *in_i, __global okey_t *out_u,
            __global uint *out_i, uint final, __global const uint *count,
            __global uchar *out_scores, __global long *out_index, __global ulong *out_count,
            uint want, GATE_ARGS)
{
    const int open = !GATE_CLOSED; /* closed: nothing read or written (no return: query_tile) */
    KCOLS_START;
    __local tile_locals L;
    __local uint real;
    const uint lid = get_local_id(0);
    const ulong g = get_group_id(0), first = g * (ulong)parts * k;
    const uint len = !open ? 0u
                     : (uint)(ncand - first < (ulong)parts * k ? ncand - first : (ulong)parts * k);
    const uint cnt = cands_select(in_u, in_i, first, len, k, &L, &real);
    const uint kk = k < cnt ? k : cnt;
    if (!open)
        return;
    if (!final) {
        tile_store(out_u, out_i, g * k, k, kk, 0, &L);
        return;
    }
    for (uint i = lid; i < k; i += WG) {
        ulong row = L.ci[i];
        if (want & 1u) {
            ulong b = 0;
            if (i < kk) {
                b = run_prog(COLS_PASS, ops, nord, consts, row);
                if (isnan(AS_SCORE(b)))
                    b = QNAN_BITS;
            }
#if KEY_BITS == 64
            ((__global ulong *)out_scores)[i] = b;
#else
            ((__global uint *)out_scores)[i] = (uint)b;
#endif
        }
        if (want & 2u)
            out_index[i] = i < kk ? (long)row : (long)-1;
    }
    if (lid == 0 && (want & 4u))
        out_count[0] = (ulong)(k < count[0] ? k : count[0]);
}

#if !QROWS && QKERNELS == 1
/* qsf_thresh  (one group) the rank-th best of the groups' sampled candidates
 *             (ncand of them, at most TL) as the threshold T (composite
 *             order), or, with fewer than rank passing samples (or force 2),
 *             every passing row surviving; force 1: T above every row but
 *             row 0 at the best key (the "too few survivors" path); the
 *             counts cleared for qsf_filter.  lazy: 0 qsf_filter loads every
 *             column of a row at once, 1 the score's only where the filter
 *             holds, 2 that where fewer than s / lazy_div of the s samples
 *             passed (the sample groups' counts, ncand / rank of them, summed;
 *             a filter that rejects most rows then leaves most of the score's
 *             sectors unread) */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
qsf_thresh(uint rank, uint ncand, uint force, uint lazy, uint s, uint lazy_div,
           __global const okey_t *cand_u, __global const uint *cand_i, __global uint *st)
{
    __local tile_locals L;
    __local uint real, spass;
    const uint lid = get_local_id(0);
    if (lid == 0)
        spass = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    uint mine = 0;
    for (uint g = lid; g < ncand / rank; g += WG)
        mine += st[QSF_WORDS + g];
    if (mine)
        atomic_add(&spass, mine);
    const uint cnt = cands_select(cand_u, cand_i, 0, ncand, rank, &L, &real);
    if (lid == 0) {
        st[QSF_LAZY] = lazy == 2u ? (ulong)spass * lazy_div < (ulong)s : lazy;
        okey_t tk = cnt >= rank ? L.cu[rank - 1] : (okey_t)0;
        uint trow = cnt >= rank ? L.ci[rank - 1] : 0u, all = cnt < rank || force == 2u;
        if (force == 1u) {
            tk = OKEY_ONES;
            trow = 0;
            all = 0;
        }
        st[QSF_PASS] = 0;
        st[QSF_SURV] = 0;
        st[QSF_TROW] = trow;
        st[QSF_ALL] = all;
        st[QSF_TKEY] = (uint)tk;
#if KEY_BITS == 64
        st[QSF_TKEY + 1] = (uint)(tk >> 32);
#else
        st[QSF_TKEY + 1] = 0;
#endif
    }
}

/* qsf_reduce  the survivors serve when they are all in the buffer (at most
 *             cap) and at least min(k, passing rows): then every row they
 *             lack is below T, below k rows that are there (or none is
 *             missing).  Group g cuts survivors g * TL .. to its best k (as
 *             query_merge's candidates); group 0 writes the decision
 *             (st[QSF_GATE]: 1 served, 2 fall back) that the later launches
 *             read (an in-order queue: they start after this one ends) */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
qsf_reduce(uint k, uint cap, __global const okey_t *in_u, __global const uint *in_i,
           __global okey_t *out_u, __global uint *out_i, __global uint *st)
{
    __local tile_locals L;
    __local uint real;
    const uint lid = get_local_id(0);
    const ulong g = get_group_id(0), first = g * (ulong)(WG * RT);
    const uint m = st[QSF_SURV], p = st[QSF_PASS];
    const int serve = m <= cap && m >= (k < p ? k : p);
    if (g == 0 && lid == 0)
        st[QSF_GATE] = serve ? 1u : 2u;
    /* no return before the barriers (query_tile) */
    const uint len = !serve || first >= m ? 0u
                     : (uint)(m - first < WG * RT ? m - first : WG * RT);
    const uint cnt = cands_select(in_u, in_i, first, len, k, &L, &real);
    if (serve)
        tile_store(out_u, out_i, g * k, k, k < cnt ? k : cnt, 0, &L);
}
#endif
#endif
