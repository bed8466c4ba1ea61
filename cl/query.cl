/* query.cl - cltopk_query_topk on the device: the programs of lib/expr.h
 * interpreted as the columns are read (nothing but the candidates is
 * written), with the operations of cpu/querycpu.c one for one.
 *
 *   query_tile   group g: rows [g * TL, g * TL + TL), TL = WG * RT, a row a
 *                register slot; the filter and the score evaluated, the
 *                passing rows' order keys selected by the register tile
 *                (tile.h) with their positions in the tile as the tie-break;
 *                the group's best min(k, passing) written as (order key, row)
 *                candidates at g * k (the sentinel row past them), its
 *                passing rows added to count[0]
 *   query_merge  group g: the candidates of parts groups of the level below
 *                (parts * k of them, at most TL; rows as the tie-break);
 *                writes its best k as the next level's candidates, or, with
 *                final 1 (one group), the outputs: rows as int64 (-1 past the
 *                count), scores evaluated again at those rows (a NaN as the
 *                quiet NaN; 0 past the count), and the count min(k, count[0])
 *
 * -D options (defaults below and in tile.h, so that the file compiles on its
 * own): KEY_BITS
 * (32: float32 scores, 64: float64), WG, RT, MCAP, PB (tile.h: 16 for
 * query_tile's positions in a tile, 31 for query_merge's rows), F64 (1: the
 * device has fp64, so float64 columns can be read; their types come at run
 * time, offs[8 ..]: 0 float32, 1 float64, 2 int32, 3 uint32, 4 int64, 5
 * uint64, so that one program serves every query), DIV64 (1: float32 division and
 * square root computed in float64 and rounded once, which is the correctly
 * rounded result, where the device does not round them correctly). */
#pragma OPENCL FP_CONTRACT OFF

#ifndef KEY_BITS
#define KEY_BITS 32
#endif
#define KEY_KIND 2
#define STACK 32 /* lib/expr.h: EXPR_MAX_STACK */
#ifndef DIV64
#define DIV64 0
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

/* ---- the columns: c0 .. c7, of types T0 .. T7 ---- */
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
    return TO_SCORE_F(((__global const float *)p)[i]);
}
#if HAVE_F64
inline score_t num_of_1(__global const uchar *p, ulong i)
{
    return TO_SCORE_D(((__global const double *)p)[i]);
}
#else
inline score_t num_of_1(__global const uchar *p, ulong i)
{
    return 0; /* never reached: the host requires fp64 for float64 columns */
}
#endif
inline score_t num_of_2(__global const uchar *p, ulong i)
{
    return TO_SCORE_I(((__global const int *)p)[i]);
}
inline score_t num_of_3(__global const uchar *p, ulong i)
{
    return TO_SCORE_I(((__global const uint *)p)[i]);
}
inline score_t num_of_4(__global const uchar *p, ulong i)
{
    return TO_SCORE_I(((__global const long *)p)[i]);
}
inline score_t num_of_5(__global const uchar *p, ulong i)
{
    return TO_SCORE_I(((__global const ulong *)p)[i]);
}
/* exact integers: the 64 bits (sign-extended) and whether negative */
inline ulong exact_of_2(__global const uchar *p, ulong i, uchar *neg)
{
    int v = ((__global const int *)p)[i];
    *neg = v < 0;
    return (ulong)(long)v;
}
inline ulong exact_of_3(__global const uchar *p, ulong i, uchar *neg)
{
    *neg = 0;
    return (ulong)((__global const uint *)p)[i];
}
inline ulong exact_of_4(__global const uchar *p, ulong i, uchar *neg)
{
    long v = ((__global const long *)p)[i];
    *neg = v < 0;
    return (ulong)v;
}
inline ulong exact_of_5(__global const uchar *p, ulong i, uchar *neg)
{
    *neg = 0;
    return ((__global const ulong *)p)[i];
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
        }
    }
    return v[0];
}

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

__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
query_tile(KCOLS_ARGS, PROG_ARGS, ulong n, uint k, uint smallest, __global okey_t *cand_u,
           __global uint *cand_i, __global uint *count)
{
    KCOLS_START;
    __local tile_locals L;
    __local uint passing;
    const uint lid = get_local_id(0);
    const ulong g = get_group_id(0), base = g * (ulong)(WG * RT);
    if (lid == 0)
        passing = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    okey_t u[RT];
    uint lo[RT], mine = 0;
#pragma unroll
    for (uint r = 0; r < RT; r++) {
        uint j = r * WG + lid;
        ulong row = base + j;
        int pass = 0;
        okey_t key = 0;
        if (row < n)
            key = row_key(COLS_PASS, ops, nord, nwhere, consts, wconsts, row, smallest, &pass);
        u[r] = pass ? key : (okey_t)0;
        lo[r] = pass ? LO_OF(j) : 0u;
        mine += (uint)pass;
    }
    if (mine)
        atomic_add(&passing, mine);
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint cnt = passing;
    const uint kk = k < cnt ? k : cnt;
    if (kk)
        tile_select(u, lo, kk, &L);
    tile_store(cand_u, cand_i, g * k, k, kk, (uint)base, &L);
    if (lid == 0 && cnt)
        atomic_add(count, cnt);
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
query_merge(KCOLS_ARGS, PROG_ARGS, uint k, uint parts, ulong ncand,
            __global const okey_t *in_u, __global const uint *in_i, __global okey_t *out_u,
            __global uint *out_i, uint final, __global const uint *count,
            __global uchar *out_scores, __global long *out_index, __global ulong *out_count,
            uint want)
{
    KCOLS_START;
    __local tile_locals L;
    __local uint real;
    const uint lid = get_local_id(0);
    const ulong g = get_group_id(0), first = g * (ulong)parts * k;
    const uint len = (uint)(ncand - first < (ulong)parts * k ? ncand - first : (ulong)parts * k);
    if (lid == 0)
        real = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    okey_t u[RT];
    uint lo[RT];
    const uint mine = tile_from_cands(in_u, in_i, first, len, u, lo);
    if (mine)
        atomic_add(&real, mine);
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint cnt = real;
    const uint kk = k < cnt ? k : cnt;
    if (kk)
        tile_select(u, lo, kk, &L);
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
