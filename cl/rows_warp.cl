/* rows_warp.cl - many top-k at once, a row a work-group of 32 WN work-items
 * (WN warps on NVIDIA GPUs; one for rows of up to 1024 columns) holding the
 * whole row in registers: no radix pass on most rows.
 *
 * Every element is the composite c = (order key u) : ~j, u its order key
 * (common.cl, larger first) in the top 32 bits and the complement of its
 * column j in the low 32, so that no two elements are equal and a larger c
 * comes first exactly as THE ORDER says (larger key, then smaller position);
 * a slot past the row's end is (0, ~j) with j >= cols, below every element.
 * Work-item l of the group's G = 32 WN holds columns l, l + G, ... (WR of
 * them: each load of the group reads G consecutive elements).
 *
 *   1. each work-item's WQ best composites; each warp's T_w the kw-th best
 *      of its 32 WQ (kw = ceil(k / WN) <= 32 WQ), and the threshold T the
 *      least T_w, so that at least WN kw >= k elements are at or above T:
 *      the k best are among them (in rows shorter than G WQ, every element);
 *   2. the elements at or above T counted (some 1.5-4 k on uniform rows; k
 *      on sorted or all-equal rows, whose work-items' best are their first
 *      or last columns); where more than WCAP, an exact bisection over the 64
 *      bits of c finds the k-th best instead (then exactly k are at or above
 *      it): rows built so that one work-item holds the best values take it;
 *   3. those candidates written to local memory (WONE 1, the default: in
 *      the same pass as the count, each by a local atomic, in no particular
 *      order; 2: a work-item's counted, then written from one atomic; 0: in
 *      column order, each work-item at its prefix of the counts), and each
 *      one's rank among them counted; the ranks below k
 *      are the outputs: the input's bits (want & 1; WINV: from the
 *      composite where it determines them) and column + ibase (want & 2)
 *      at row * k + rank.
 *
 * The group exchanges values through local memory behind barriers (32 WN
 * work-items: on NVIDIA's GPUs WN warps, whose barrier is cheap), so that the
 * kernel is plain OpenCL C and runs the same on every device.
 *
 * -D options (defaults below, so that the file compiles on its own): KEY_BITS
 * (32 only), KEY_KIND (common.cl), WN (warps of 32 work-items a row: 1, 2, 4
 * or 8), WR (columns a work-item holds: the row's columns at most G WR), WQ
 * (each work-item's best kept for the threshold: ceil(k / WN) <= 32 WQ;
 * more makes T tighter), WCAP (candidates ranked in local memory, at least G
 * WQ), WFULL (1: the row has exactly G WR columns: its loads need no test),
 * WINV, WONE, WB32, WREL (below), WVEC (1: work-item l's slots 4q .. 4q +
 * 3 are the columns 4 (q G + l) .. 4 (q G + l) + 3, loaded as one 16-byte
 * vector: rows of exactly G WR columns (WFULL), WR a multiple of 4, every
 * row's start a multiple of 4 elements; 0: slot r is column r G + l, one
 * element a load), WWIN
 * (1: a group whose G WR slots all lie inside the buffer, in_len
 * elements from its start, loads them all with no test, the slots past the
 * row's end reading the next row's elements, which are then dropped; 0:
 * every load clamped to the row's last column; the host sets it on GPUs
 * only), WLEAN (below), WREGROUP (WN > 1; 1: where more than max(G, 4 k)
 * candidates pass T, T again once as the k-th best of the whole group's
 * best, and the candidates again: rows in order, whose warps hold bands
 * far apart, some 400 candidates at 4096 columns and k = 32 against 4 k).
 *
 * WLEAN (WQ 1, WR <= 32, WONE 1 or 2): fewer instructions an element.  The
 * registers hold a proxy p of each key, as cheap as a float's bits made
 * monotone (order_key's zeros and NaNs are not singled out), a work-item's
 * best the largest p (no column), T_p each warp's kw-th largest of them,
 * and the candidates the slots of p at or above T_p (T_p lowered to the
 * least p of T's key first: the zeros' and NaNs' proxies differ where their
 * keys do not), each appended by its column, its key read again; a superset
 * of the k best, ranked by composites as before.  A float row holding a NaN
 * whose sign bit is set (p puts it at the wrong end), or whose candidates
 * overflow WCAP (ties at T's key), takes the steps above instead (the same
 * answer, slower), each slot's key read again from the input where those
 * steps use it, in rolled loops (WLRR 1, WLRU slots a turn; WLRR 0: the
 * order keys held in registers, full rows read again, others from the
 * proxies: 92 registers against 56 at 4096 columns, so 5 groups a compute
 * unit against 8, slower on every row that does not take these steps). */
#ifndef CLTOPK_COMMON_CL
#include "common.cl"
#endif

#if KEY_BITS != 32
#error "rows_warp.cl: 32-bit keys only"
#endif
#ifndef WN
#define WN 1
#endif
#ifndef WR
#define WR 4
#endif
#ifndef WQ
#define WQ 1
#endif
#ifndef WCAP
#define WCAP 512
#endif
#define WW (32 * WN) /* work-items a group */
#if WCAP < WW * WQ
#error "rows_warp.cl: WCAP must hold 32 WN WQ candidates"
#endif

#ifndef WWIN
#define WWIN 1
#endif
#ifndef WINV
#define WINV 1 /* 1: an output key from its order key where that determines it
                  (okey_exact), not read from the input again (the host: one
                  warp a row only, where the H200 measured it faster) */
#endif
#ifndef WONE
#define WONE 1 /* 1: the candidates at or above T appended to local memory by a
                  local atomic in one pass (their order does not matter to the
                  ranks), each slot's its own; 2: a work-item's counted first,
                  then appended from one atomic of their number (more
                  registers, no atomic's round trip a slot); 0: counted,
                  summed over the group, then written at each work-item's
                  prefix (two passes and a group sum) */
#endif
#ifndef WB32
#define WB32 1 /* 1 (WQ = 1): a work-item's best by its 32-bit keys, the first
                  of equal keys (the smallest column) kept, which is the best
                  composite; 0: by 64-bit composites */
#endif
#ifndef WREL
#define WREL (WONE == 2) /* (WONE 1 and 2) 1: the candidates first appended by
                  their 32-bit keys against T's (below), 0: by 64-bit
                  composites.  The H200 (ms, 1 against 0): with WONE=2,
                  65536 x 1024 k = 16 0.119-0.120 / 0.136-0.139, 16384 x
                  2048 k = 32 0.081-0.084 / 0.087-0.088; with WONE=1 at 4096
                  columns (4 warps) 0.144-0.148 / 0.129-0.133 */
#endif
#ifndef WFULL
#define WFULL 0 /* 1: the row has exactly 32 WN WR columns (no slot past its end) */
#endif
#ifndef WVEC
#define WVEC 0
#endif
#if WVEC && (!WFULL || WR % 4 != 0)
#error "rows_warp.cl: WVEC needs WFULL and WR a multiple of 4"
#endif
#ifndef WLEAN
#define WLEAN 0
#endif
#ifndef WLRR
#define WLRR 1
#endif
#ifndef WLRU
#define WLRU 1
#endif
#ifndef WREGROUP
#define WREGROUP 1
#endif
/* (WN > 1, WREGROUP) the candidates past which T is taken again over the
 * whole group: above every row of uniform data (at most 3.2 k there) */
#define WGLIM max((uint)WW, 4u * k)

#if WLEAN && (WQ != 1 || WR > 32 || !WONE)
#error "rows_warp.cl: WLEAN takes WQ 1, WR up to 32 and WONE 1 or 2"
#endif

/* a slot's key in the registers: its order key, or (WLEAN) its proxy; and
 * (WLEAN, floats) the largest raw bits seen, for a NaN whose sign bit is set */
#if WLEAN && KEY_KIND == 2
#define WKEY(x) ((x) ^ ((okey_t)((int)(x) >> 31) | OKEY_SIGN) ^ fm)
#define WSEEN(x) nn = max(nn, (okey_t)(x))
#else
#define WKEY(x) order_key((x), smallest)
#define WSEEN(x) (void)0
#endif

/* slots 4q .. 4q + 3 from the 16-byte vector x by F (a key of raw bits) */
#define WSET4(q, x, F)                                                                        \
    (u[4u * (q)] = F((x).s0), u[4u * (q) + 1u] = F((x).s1), u[4u * (q) + 2u] = F((x).s2),        \
     u[4u * (q) + 3u] = F((x).s3))
#define WORDER(x) order_key((x), smallest)

#if WLEAN
/* the least proxy of p's key: a float's zeros (+0 and -0 in either
 * direction: 0x7FFFFFFF and 0x80000000) and NaNs (the largest: above +inf's
 * 0xFF800000; the smallest: below its 0x007FFFFF, the lowest key) */
inline okey_t lean_floor(okey_t p, uint smallest)
{
#if KEY_KIND == 2
    p = p == OKEY_SIGN ? OKEY_SIGN - 1u : p;
    if (smallest)
        return p < 0x007FFFFFu ? 0u : p;
    return p > 0xFF800000u ? 0xFF800001u : p;
#else
    (void)smallest;
    return p;
#endif
}

/* gt := how many of the n4 x 4 proxies at x4 are above p, ge := at or above
 * it (a macro: n4 a constant, the loop unrolled) */
#define LEAN_COUNT(x4, n4, p, gt, ge)                                                         \
    {                                                                                         \
        gt = 0u;                                                                              \
        ge = 0u;                                                                              \
        _Pragma("unroll") for (uint l_ = 0; l_ < (n4); l_++)                                  \
        {                                                                                     \
            uint4 x_ = (x4)[l_];                                                              \
            gt += (uint)(x_.s0 > (p)) + (uint)(x_.s1 > (p)) + (uint)(x_.s2 > (p)) +           \
                  (uint)(x_.s3 > (p));                                                        \
            ge += (uint)(x_.s0 >= (p)) + (uint)(x_.s1 >= (p)) + (uint)(x_.s2 >= (p)) +        \
                  (uint)(x_.s3 >= (p));                                                       \
        }                                                                                     \
    }

/* the order key of the element of proxy p */
inline okey_t lean_key(okey_t p, uint smallest)
{
#if KEY_KIND == 2
    okey_t b = p ^ (smallest ? OKEY_ONES : 0u); /* the monotone bits */
    return order_key(b & OKEY_SIGN ? b ^ OKEY_SIGN : ~b, smallest);
#else
    (void)smallest;
    return p;
#endif
}
#endif

/* slot r's column (a slot of a larger r is a larger column) */
#if WVEC
#define WCOL(r) (4u * (((r) / 4u) * WW + lid) + (r) % 4u)
#else
#define WCOL(r) ((r) * WW + lid)
#endif

/* slot r's order key in the steps by composites: u[r], or (WLEAN with
 * WLRR, the default) the key read again from the input, each time, in loops
 * of WLRU slots unrolled (WUNR), so that no slot's key is held in a register
 * through those steps (a row's rare case there) and the kernel's registers
 * are the proxies' (the H200, 16384 x 4096, k = 32: 60 against 92 with the
 * keys held, 8 groups of 128 a compute unit against 5) */
#if WLEAN && WLRR
#if WFULL
#define WU(r) order_key(in[start + WCOL(r)], smallest)
#else
#define WU(r)                                                                                 \
    (order_key(in[start + min(WCOL(r), cols - 1u)], smallest) & okey_live(WCOL(r), cols))
#endif
#define WPRAGMA2(x) _Pragma(#x)
#define WPRAGMA(x) WPRAGMA2(x)
#define WUNR WPRAGMA(unroll WLRU)
#else
#define WU(r) u[r]
#define WUNR _Pragma("unroll")
#endif

/* the composite of slot r of work-item lid: past the row's end (u = 0, j >=
 * cols) below every element, whose composite is at least ~(cols - 1) (key
 * 0, the last column); T is never below that, so no such slot is counted
 * and no use tests j against cols */
#define WCV(r) (((ulong)WU(r) << 32) | (ulong)~WCOL(r))

/* the sum over the group of v (every work-item gets it), and the sum over the
 * work-items before this one in *before (NULL: not wanted); xc holds WW
 * words, xs WN: each work-item reads its warp's 32 words (4 at a time), then
 * where WN > 1 the warps' totals (the cost a work-item independent of WN) */
inline uint warp_sum(uint v, uint *before, __local uint *xc, __local uint *xs)
{
    const uint lid = get_local_id(0), lane = lid % 32u;
    xc[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    uint tot = 0, bef = 0;
    __local const uint4 *x4 = (__local const uint4 *)xc;
#if WN > 1
    x4 += (lid - lane) / 4u;
#endif
    for (uint l = 0; l < 8u; l++) {
        uint4 x = x4[l];
        tot += x.s0 + x.s1 + x.s2 + x.s3;
        uint b = 4u * l;
        bef += (b < lane ? x.s0 : 0u) + (b + 1u < lane ? x.s1 : 0u) +
               (b + 2u < lane ? x.s2 : 0u) + (b + 3u < lane ? x.s3 : 0u);
    }
#if WN > 1
    if (lane == 0u)
        xs[lid / 32u] = tot;
    barrier(CLK_LOCAL_MEM_FENCE);
    tot = 0;
#pragma unroll
    for (uint w = 0; w < WN; w++) {
        uint x = xs[w];
        tot += x;
        bef += w < lid / 32u ? x : 0u;
    }
#else
    (void)xs;
#endif
    barrier(CLK_LOCAL_MEM_FENCE);
    if (before)
        *before = bef;
    return tot;
}

__kernel __attribute__((reqd_work_group_size(WW, 1, 1))) void
rows_warp(__global const key_t *in, ulong in_off, ulong ld, uint cols, uint k, uint smallest,
          __global key_t *out_keys, __global long *out_index, uint want, ulong ibase,
          ulong in_len)
{
    __local ulong cand[WCAP];
    __local ulong xw[WW * WQ];
    __local ulong xt[WN];
#if WLEAN
    __local uint4 xl4[WW / 4]; /* each work-item's largest proxy */
#endif
    __local uint ncand; /* (WONE) the candidates appended */
    /* the group's counts (WW words), then the warps' totals (WN words) */
    __local uint4 xc4[(WW + WN + 3) / 4];
    __local uint *xc = (__local uint *)xc4, *xs = xc + WW;
    const uint lid = get_local_id(0);
    const ulong row = get_group_id(0);
    const ulong start = in_off + row * ld;
    okey_t u[WR];
#if WLEAN && KEY_KIND == 2
    const okey_t fm = smallest ? OKEY_ONES : 0u;
    okey_t nn = 0;
#endif
#if WFULL && WVEC
    (void)in_len;
    {
        __global const uint4 *p4 = (__global const uint4 *)(in + start) + lid;
        uint4 x[WR / 4];
#pragma unroll
        for (uint q = 0; q < WR / 4; q++)
            x[q] = p4[q * WW];
#pragma unroll
        for (uint q = 0; q < WR / 4; q++) {
            WSET4(q, x[q], WKEY);
            WSEEN(x[q].s0);
            WSEEN(x[q].s1);
            WSEEN(x[q].s2);
            WSEEN(x[q].s3);
        }
    }
#elif WFULL
    (void)in_len;
#pragma unroll
    for (uint r = 0; r < WR; r++) {
        key_t x = in[start + r * WW + lid];
        u[r] = WKEY(x);
        WSEEN(x);
    }
#else
#if WWIN
    if (start + (ulong)(WR * WW) <= in_len) {
        /* the whole window inside the buffer: the loads of a full row */
        __global const key_t *p = in + start + lid;
        key_t x[WR];
#pragma unroll
        for (uint r = 0; r < WR; r++)
            x[r] = p[r * WW];
#pragma unroll
        for (uint r = 0; r < WR; r++) {
            u[r] = WKEY(x[r]) & okey_live(r * WW + lid, cols);
            WSEEN(x[r]);
        }
    } else
#else
    (void)in_len;
#endif
    {
        /* every load unconditional (a slot past the end reads the last
         * column) and the key masked with no branch (okey_live), so that a
         * work-item's loads all go out at once: with a branch a slot, rows
         * of 1000 columns took 0.23 ms at 65536 x 1000, k = 16, on the H200
         * against 0.145 for full rows of 1024, whose loads have no test */
#pragma unroll
        for (uint r = 0; r < WR; r++) {
            uint j = r * WW + lid;
            key_t x = in[start + (j < cols ? j : cols - 1u)];
            u[r] = WKEY(x) & okey_live(j, cols);
            WSEEN(x);
        }
    }
#endif

    const uint wv = lid / 32u, lane = lid % 32u, kw = (k + WN - 1u) / WN;
    uint total;
#if WLEAN
    {
        /* 1. this work-item's largest proxy, T_p each warp's kw-th largest
         * of them, the least of the T_p, lowered to the least proxy of its
         * key */
        okey_t pb = u[0];
#pragma unroll
        for (uint r = 1; r < WR; r++)
            pb = max(pb, u[r]);
        __local uint *xp = (__local uint *)xl4 + wv * 32u;
        xp[lane] = pb;
        if (lid == 0u)
            ncand = 0u;
        barrier(CLK_LOCAL_MEM_FENCE);
        uint gt, ge;
        LEAN_COUNT(xl4 + wv * 8u, 8u, pb, gt, ge)
        if (gt < kw && kw <= ge) /* (the kw-th: every lane of that value) */
            xt[wv] = pb;
        barrier(CLK_LOCAL_MEM_FENCE);
        okey_t tp = (okey_t)xt[0];
#pragma unroll
        for (uint v = 1; v < WN; v++)
            tp = min(tp, (okey_t)xt[v]);
        tp = lean_floor(tp, smallest);
#if WN > 1
        for (uint pass = 0;; pass++) {
#endif
        /* 2. the slots at or above it appended by their columns, keys read
         * again (from the cache); a NaN whose sign bit is set counts past
         * WCAP: the exact steps below */
        uint m = 0;
#pragma unroll
        for (uint r = 0; r < WR; r++)
#if WFULL
            m |= (uint)(u[r] >= tp) << r;
#else
            m |= (uint)(u[r] >= tp && WCOL(r) < cols) << r;
#endif
        uint cnt = popcount(m);
#if KEY_KIND == 2
        cnt += nn > 0xFF800000u ? WCAP + 1u : 0u;
#endif
        uint q = cnt ? atomic_add(&ncand, cnt) : 0u;
        while (m) {
            const uint r = 31u - clz(m & (0u - m));
            m &= m - 1u;
            const uint j = WCOL(r);
            if (q < WCAP)
                cand[q] = ((ulong)order_key(in[start + j], smallest) << 32) | (ulong)~j;
            q++;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        total = ncand;
#if WN > 1
        /* (WREGROUP) where more than WGLIM, once: T_p the k-th largest of
         * the whole group's best, lowered as before, and the append again.
         * The least of the warps' T_p is loose where the warps' best lie
         * apart: on a row in order each warp holds a band of every 128 WN
         * columns, and the worst warp's kw-th some 400 of 4096 columns from
         * the row's best (k = 32) let as many through, ranked at O(total^2);
         * the group's k-th lets some 4 k through (each best brings its
         * vector's neighbours).  It is at least the least T_p (the warps'
         * kw-th hold WN kw >= k at or above it), and k of the group's best
         * are at or above it: valid alike */
        if (!WREGROUP || pass || total <= WGLIM) /* (uniform) */
            break;
        barrier(CLK_LOCAL_MEM_FENCE); /* (every work-item has read ncand) */
        LEAN_COUNT(xl4, WW / 4u, pb, gt, ge)
        if (gt < k && k <= ge) /* (the k-th: every work-item of that value) */
            xt[0] = pb;
        if (lid == 0u)
            ncand = 0u;
        barrier(CLK_LOCAL_MEM_FENCE);
        tp = lean_floor((okey_t)xt[0], smallest);
        }
#endif
    }
    if (total > WCAP) { /* (the same in every work-item) */
        barrier(CLK_LOCAL_MEM_FENCE); /* (every work-item has read ncand) */
#if WLRR
        /* (the keys read again where used: WU) */
#elif WFULL && WVEC
        /* full rows read again (from the cache), their order keys: the
         * proxies dead after the candidates' mask (the H200: 16384 x 2048 k
         * = 32 0.065-0.069 ms against 0.073-0.074 with the proxies kept and
         * turned into keys) */
        {
            __global const uint4 *p4 = (__global const uint4 *)(in + start) + lid;
#pragma unroll
            for (uint q = 0; q < WR / 4; q++) {
                uint4 x = p4[q * WW];
                WSET4(q, x, WORDER);
            }
        }
#else
#pragma unroll
        for (uint r = 0; r < WR; r++)
#if WFULL
            u[r] = lean_key(u[r], smallest);
#else
            u[r] = lean_key(u[r], smallest) & okey_live(WCOL(r), cols);
#endif
#endif
#endif
    /* 1. this work-item's WQ best (descending), then T */
    ulong b[WQ];
#if WQ == 1 && WB32
    {
        okey_t bu = WU(0);
        uint br = 0;
        WUNR for (uint r = 1; r < WR; r++)
        {
            okey_t ur = WU(r);
            int gt = ur > bu;
            bu = gt ? ur : bu;
            br = gt ? r : br;
        }
        b[0] = ((ulong)bu << 32) | (ulong)~WCOL(br);
    }
#else
#pragma unroll
    for (uint q = 0; q < WQ; q++)
        b[q] = 0UL;
    WUNR for (uint r = 0; r < WR; r++)
    {
        ulong c = WCV(r);
#pragma unroll
        for (uint q = 0; q < WQ; q++) {
            ulong hi = c > b[q] ? c : b[q];
            c = c > b[q] ? b[q] : c;
            b[q] = hi;
        }
    }
#endif
    /* T: each warp's T_w, the one of its 32 WQ ranked kw - 1 (kw = ceil(k /
     * WN), 32 WQ >= kw), then T the least of the T_w and at least the least
     * composite of an element.  Where every T_w is an element's, each warp
     * holds kw elements at or above T_w >= T: WN kw >= k in all; where one is
     * not (a warp's best include slots past the row's end only where they
     * hold all of its elements), T is that least composite, every element */
    __local ulong *xv = xw + wv * (32u * WQ);
#pragma unroll
    for (uint q = 0; q < WQ; q++)
        xv[q * 32u + lane] = b[q];
    if (lane == 0u)
        xt[wv] = 0UL;
    if (lid == 0u)
        ncand = 0u;
    barrier(CLK_LOCAL_MEM_FENCE);
    /* xt[slot] := the one of this work-item's best ranked kth - 1 among
     * the n composites at x0 (LOOP: the pragma of the loop over them) */
#define WKTH(x0, n, kth, slot, LOOP)                                                          \
    {                                                                                         \
        uint rb_[WQ];                                                                         \
        _Pragma("unroll") for (uint q = 0; q < WQ; q++) rb_[q] = 0u;                          \
        LOOP for (uint l_ = 0; l_ < (n); l_++)                                                \
        {                                                                                     \
            ulong x_ = (x0)[l_];                                                              \
            _Pragma("unroll") for (uint q = 0; q < WQ; q++) rb_[q] += x_ > b[q];              \
        }                                                                                     \
        _Pragma("unroll") for (uint q = 0; q < WQ; q++) if (rb_[q] == (kth) - 1u) xt[slot] =  \
            b[q];                                                                             \
    }
    WKTH(xv, 32u * WQ, kw, wv, _Pragma("unroll"))
    barrier(CLK_LOCAL_MEM_FENCE);
    const ulong least = (ulong)~(cols - 1u);
    ulong t = xt[0];
#pragma unroll
    for (uint v = 1; v < WN; v++)
        t = xt[v] < t ? xt[v] : t;
    t = t > least ? t : least;

    /* 2. the candidates at or above T, or the exact k-th by bisection */
    /* t := the k-th best composite, bit by bit over the group (then exactly k
     * are at or above it: composites are distinct) */
#define WBISECT                                                                               \
    {                                                                                         \
        ulong x = 0UL;                                                                        \
        for (int bit = 63; bit >= 0; bit--) {                                                 \
            ulong y = x | ((ulong)1 << bit);                                                  \
            uint m = 0;                                                                       \
            WUNR for (uint r = 0; r < WR; r++) m += WCV(r) >= y;                              \
            if (warp_sum(m, NULL, xc, xs) >= k)                                               \
                x = y;                                                                        \
        }                                                                                     \
        t = x;                                                                                \
    }
#if WONE == 2
    /* 2-3. counted, then appended from one local atomic a work-item (no
     * round trip a slot); where more than WCAP (the same in every
     * work-item), the exact k-th by bisection and the k at or above it */
#define WAPPEND                                                                               \
    {                                                                                         \
        uint m_ = 0;                                                                          \
        WUNR for (uint r = 0; r < WR; r++) m_ += WGE(r, WCV(r));                              \
        uint q_ = m_ ? atomic_add(&ncand, m_) : 0u;                                           \
        WUNR for (uint r = 0; r < WR; r++)                                                    \
        {                                                                                     \
            ulong c = WCV(r);                                                                 \
            if (WGE(r, c)) {                                                                  \
                if (q_ < WCAP)                                                                \
                    cand[q_] = c;                                                             \
                q_++;                                                                         \
            }                                                                                 \
        }                                                                                     \
    }
#elif WONE
    /* 2-3. appended in one pass; where more than WCAP (the same in every
     * work-item), the exact k-th by bisection and the k at or above it */
#define WAPPEND                                                                               \
    WUNR for (uint r = 0; r < WR; r++)                                                        \
    {                                                                                         \
        ulong c = WCV(r);                                                                     \
        if (WGE(r, c)) {                                                                      \
            uint q = atomic_inc(&ncand);                                                      \
            if (q < WCAP)                                                                     \
                cand[q] = c;                                                                  \
        }                                                                                     \
    }
#endif
#if WONE
    /* (WREL) the first append compares the 32-bit keys with T's: the
     * elements at or above T and those of T's key past T's column, a
     * superset of the candidates, exact as they are ranked by composites;
     * where ties at T's key overflow WCAP, the append again by composites
     * (then the bisection where that overflows too) */
    uint rel_ = WREL;
    const uint thi_ = (uint)(t >> 32);
#define WGE(r, c) (rel_ ? WU(r) >= thi_ : (c) >= t)
    WAPPEND
    barrier(CLK_LOCAL_MEM_FENCE);
    total = ncand;
    /* the append again, by composites, from an empty buffer */
#define WREDO                                                                                 \
    rel_ = 0;                                                                                 \
    if (lid == 0u)                                                                            \
        ncand = 0u;                                                                           \
    barrier(CLK_LOCAL_MEM_FENCE);                                                             \
    WAPPEND                                                                                   \
    barrier(CLK_LOCAL_MEM_FENCE);                                                             \
    total = ncand;
#if WN > 1
    /* (WREGROUP) where more than WGLIM (rows in order), once: T the k-th of
     * the whole group's best (at least the least T_w; k elements at or above
     * it), and the append again, by composites */
    if (WREGROUP && total > WGLIM) { /* (the same in every work-item) */
        barrier(CLK_LOCAL_MEM_FENCE); /* (every work-item has read ncand) */
        WKTH(xw, WW * WQ, k, 0, _Pragma("unroll 1"))
        barrier(CLK_LOCAL_MEM_FENCE);
        t = xt[0];
        t = t > least ? t : least;
        WREDO
    }
#endif
#if WREL
    if (total > WCAP) { /* (the same in every work-item) */
        barrier(CLK_LOCAL_MEM_FENCE); /* (every work-item has read ncand) */
        WREDO
    }
#endif
    if (total > WCAP) {
        WBISECT
        WREDO
    }
#undef WREDO
#undef WAPPEND
#undef WGE
#else
    uint mine = 0;
#pragma unroll
    for (uint r = 0; r < WR; r++)
        mine += WCV(r) >= t;
    uint before;
    total = warp_sum(mine, &before, xc, xs);
    if (total > WCAP) { /* (the same in every work-item) */
        WBISECT
        mine = 0;
#pragma unroll
        for (uint r = 0; r < WR; r++)
            mine += WCV(r) >= t;
        total = warp_sum(mine, &before, xc, xs);
    }

    /* 3. the candidates in local memory, ranked */
    uint w = before;
#pragma unroll
    for (uint r = 0; r < WR; r++) {
        ulong c = WCV(r);
        if (c >= t)
            cand[w++] = c;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
#undef WBISECT
#undef WKTH
#if WLEAN
    }
#endif
    /* each work-item's candidates e = lid, lid + WW, ...: WH at a time (1
     * where they are at most WW, else 4) against every candidate, read 4 at
     * a time (independent loads) */
#define WRANK(WH)                                                                             \
    for (uint e0 = 0; e0 < total; e0 += WW * (WH)) {                                          \
        if (WN > 1 && e0 + (lid - lid % 32u) >= total)                                        \
            break; /* none of this warp's (uniform in the warp) */                            \
        ulong c[WH];                                                                          \
        uint rk[WH];                                                                          \
        _Pragma("unroll") for (uint h = 0; h < (WH); h++)                                     \
        {                                                                                     \
            uint e = e0 + h * WW + lid;                                                       \
            c[h] = e < total ? cand[e] : ~0UL;                                                \
            rk[h] = 0u;                                                                       \
        }                                                                                     \
        uint x = 0;                                                                           \
        for (; x + 4u <= total; x += 4u) {                                                    \
            ulong v0 = cand[x], v1 = cand[x + 1u], v2 = cand[x + 2u], v3 = cand[x + 3u];      \
            _Pragma("unroll") for (uint h = 0; h < (WH); h++)                                 \
                rk[h] += (uint)(v0 > c[h]) + (uint)(v1 > c[h]) + (uint)(v2 > c[h]) +          \
                         (uint)(v3 > c[h]);                                                   \
        }                                                                                     \
        for (; x < total; x++) {                                                              \
            ulong v = cand[x];                                                                \
            _Pragma("unroll") for (uint h = 0; h < (WH); h++) rk[h] += v > c[h];              \
        }                                                                                     \
        _Pragma("unroll") for (uint h = 0; h < (WH); h++)                                     \
        {                                                                                     \
            uint e = e0 + h * WW + lid;                                                       \
            if (e < total && rk[h] < k) {                                                     \
                uint j = ~(uint)c[h];                                                         \
                ulong o = row * (ulong)k + rk[h];                                             \
                if (want & 1u) {                                                              \
                    okey_t ku = (okey_t)(c[h] >> 32);                                         \
                    out_keys[o] = WINV && okey_exact(ku, smallest) ? okey_bits(ku, smallest)  \
                                                                   : in[start + j];           \
                }                                                                             \
                if (want & 2u)                                                                \
                    out_index[o] = (long)(j + ibase);                                         \
            }                                                                                 \
        }                                                                                     \
    }
    if (total <= WW) {
        WRANK(1)
    } else {
        WRANK(4)
    }
#undef WRANK
}
