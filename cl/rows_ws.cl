/* rows_ws.cl - many top-k at once for k <= 32: a row a warp, read once
 * front to back (seed 004's filtered buffer; the queue of WarpSelect).
 *
 * A warp of 32 work-items streams its row in chunks of 128 columns, WSU
 * chunks in flight (each work-item 4 columns a chunk), and keeps the 32 best
 * composites seen so far sorted across its lanes, lane i the i-th best.  A
 * composite is c = (order key u) : ~j (common.cl's order: larger first, ties
 * by smaller column j), so that no two elements are equal; 0 is "none",
 * below every element (j < 2^32 - 1).  T, the list's k-th, only rises: an
 * element is a candidate where c > T (exact at any T: the k best of the row
 * are all above the k-th best of any k of its elements, or among them).
 *
 *   1. the first WSU chunks' work-items' maxima, sorted across the lanes,
 *      start the list (32 elements of the row: T tight from the start, and
 *      the row's best where it is sorted ascending or descending: WSL);
 *   2. each chunk: a candidate's slot in the warp's buffer (local memory)
 *      from ballots, no atomics; where the buffer holds 32 or more, merge;
 *   3. a merge takes the buffer 32 at a time, the ones still above T: a
 *      bitonic sort across the lanes (ascending), the list's lane i against
 *      the batch's lane i (the 32 best of both, a bitonic sequence), a
 *      bitonic merge (descending); T from lane k - 1;
 *   4. lanes 0 .. k - 1 write the answer.
 *
 * Every warp's control flow is uniform (T, the buffer's count and the votes
 * are the same in its 32 lanes), so that the exchanges across lanes are
 * NVIDIA's shuffles and votes (WSP 1, inline PTX; warps of a group work on
 * rows of their own, WSG of them) or, on any other device, the same values
 * through local memory behind barriers (WSP 0: a group of 32 a row).  The
 * time of a row depends on its order: a row whose best lie in its middle
 * chunks merges more (ascending ones merged every chunk before WSL).
 *
 * -D options (defaults below, so that the file compiles on its own): KEY_BITS
 * (32 only), KEY_KIND (common.cl), WSP, WSG (warps a group: 1 where WSP is
 * 0), WSU (chunks in flight, at least 1), WSV (1: a work-item's 4 columns of
 * a chunk adjacent, one 16-byte load: every row's start a multiple of 4
 * elements and its columns too; 0: 32 apart, 4 loads), WSFULL (1: the row's
 * columns a multiple of 128: no slot past its end), WSL (1: the row's
 * last chunk streamed first, then the others in order). */
#ifndef CLTOPK_COMMON_CL
#include "common.cl"
#endif

#if KEY_BITS != 32
#error "rows_ws.cl: 32-bit keys only"
#endif
#ifndef WSP
#define WSP 0
#endif
#ifndef WSG
#define WSG 1
#endif
#ifndef WSU
#define WSU 4
#endif
#ifndef WSV
#define WSV 0
#endif
#ifndef WSFULL
#define WSFULL 0
#endif
#ifndef WSL
#define WSL 1
#endif
#if !WSP && WSG != 1
#error "rows_ws.cl: several warps a group need WSP"
#endif
/* a warp's buffer: 31 waiting and a chunk's 128 (through local memory, 32
 * more: every work-item stores, those with no candidate past the rest) */
#if WSP
#define WSB 160
#else
#define WSB 192
#endif
/* loops over the lanes' exchanges and the chunks in flight: unrolled with
 * NVIDIA's warp instructions (registers); rolled where each exchange is two
 * barriers (a CPU device's compiler takes minutes over hundreds of them) */
#if WSP
#define WS_UNROLL _Pragma("unroll")
#else
#define WS_UNROLL _Pragma("unroll 1")
#endif

#if WSP
/* NVIDIA's warp instructions; the whole warp takes part in each */
inline uint ws_ballot(int p)
{
    uint r;
    asm volatile("{\n\t.reg .pred q;\n\tsetp.ne.s32 q, %1, 0;\n\t"
                 "vote.sync.ballot.b32 %0, q, 0xffffffff;\n\t}"
                 : "=r"(r)
                 : "r"(p));
    return r;
}

inline uint ws_xor32(uint v, uint j)
{
    uint r;
    asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=r"(r) : "r"(v), "r"(j));
    return r;
}

inline uint ws_idx32(uint v, uint src)
{
    uint r;
    asm volatile("shfl.sync.idx.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=r"(r) : "r"(v), "r"(src));
    return r;
}

/* the lane of j's xor, the lane src's */
#define WS_XOR(v, j) (((ulong)ws_xor32((uint)((v) >> 32), (j)) << 32) | ws_xor32((uint)(v), (j)))
#define WS_UNUSED_XV (void)xv
#define WS_IDX(v, s) (((ulong)ws_idx32((uint)((v) >> 32), (s)) << 32) | ws_idx32((uint)(v), (s)))
#define WS_BALLOT(p) ws_ballot(p)
/* the buffer's stores seen by the warp's other lanes, its loads done before
 * it is written again */
#define WS_SYNC() asm volatile("bar.warp.sync 0xffffffff;" ::: "memory")
#else
/* through local memory: the group is the warp (32 work-items) */
inline ulong ws_xchg(ulong v, uint src, __local ulong *xv)
{
    barrier(CLK_LOCAL_MEM_FENCE);
    xv[get_local_id(0)] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    return xv[src];
}

inline uint ws_ballot_lm(int p, __local ulong *xv)
{
    const uint lane = get_local_id(0);
    barrier(CLK_LOCAL_MEM_FENCE);
    xv[lane] = p ? 1UL << lane : 0UL;
    barrier(CLK_LOCAL_MEM_FENCE);
    ulong m = 0;
    for (uint l = 0; l < 32u; l++)
        m |= xv[l];
    return (uint)m;
}
#define WS_XOR(v, j) ws_xchg((v), lane ^ (j), xv)
#define WS_UNUSED_XV
#define WS_IDX(v, s) ws_xchg((v), (s), xv)
#define WS_BALLOT(p) ws_ballot_lm((p), xv)
#define WS_SYNC() barrier(CLK_LOCAL_MEM_FENCE)
#endif

/* v sorted across the warp's lanes by a bitonic sort: descending (lane 0 the
 * largest) where desc, else ascending */
inline ulong ws_sort(ulong v, int desc, uint lane, __local ulong *xv)
{
    WS_UNUSED_XV;
    WS_UNROLL for (uint size = 2; size <= 32u; size <<= 1)
        WS_UNROLL for (uint j = size / 2u; j > 0u; j >>= 1)
    {
        ulong p = WS_XOR(v, j);
        /* the lower of a pair keeps the larger where its run goes down */
        int big = (((lane & j) == 0u) == ((lane & size) == 0u)) == desc;
        v = big == (p > v) ? p : v;
    }
    return v;
}

/* the buffer's nb candidates merged into the list (*top, descending across
 * the lanes) 32 at a time, those still above *t; *t the list's k-th after */
inline void ws_merge(__local const ulong *buf, uint nb, ulong *top, ulong *t, uint k, uint lane,
                     __local ulong *xv)
{
    WS_UNUSED_XV;
    WS_SYNC();
    for (uint b = 0; b < nb; b += 32u) {
        ulong v = b + lane < nb ? buf[b + lane] : 0UL;
        v = v > *t ? v : 0UL;
        if (WS_BALLOT(v != 0UL)) { /* (uniform) */
            v = ws_sort(v, 0, lane, xv);
            /* the list's lane i against the batch's lane i: the 32 best of
             * both, descending then ascending; a bitonic merge sorts them */
            ulong u = *top > v ? *top : v;
            WS_UNROLL for (uint j = 16u; j > 0u; j >>= 1)
            {
                ulong p = WS_XOR(u, j);
                u = ((lane & j) == 0u) == (p > u) ? p : u;
            }
            *top = u;
            *t = WS_IDX(u, k - 1u);
        }
    }
    WS_SYNC();
}

/* a chunk's 4 elements of this work-item: their raw bits, and the column of
 * slot v of chunk ch */
#if WSV
#define WS_COL(ch, v) ((ch) * 128u + 4u * lane + (v))
#else
#define WS_COL(ch, v) ((ch) * 128u + 32u * (v) + lane)
#endif

/* chunk ch's loads (its slots past the row's end: the row's last column) */
inline uint4 ws_load(__global const key_t *row_in, uint ch, uint cols, uint lane)
{
#if WSV
    __global const uint4 *p4 = (__global const uint4 *)row_in;
    uint q = ch * 32u + lane;
#if !WSFULL
    uint last = cols / 4u - 1u;
    q = q < last ? q : last;
#endif
    return p4[q];
#else
    uint4 x;
#if WSFULL
    x.s0 = row_in[WS_COL(ch, 0)];
    x.s1 = row_in[WS_COL(ch, 1)];
    x.s2 = row_in[WS_COL(ch, 2)];
    x.s3 = row_in[WS_COL(ch, 3)];
#else
    uint j0 = WS_COL(ch, 0), j1 = WS_COL(ch, 1), j2 = WS_COL(ch, 2), j3 = WS_COL(ch, 3);
    uint last = cols - 1u;
    x.s0 = row_in[j0 < last ? j0 : last];
    x.s1 = row_in[j1 < last ? j1 : last];
    x.s2 = row_in[j2 < last ? j2 : last];
    x.s3 = row_in[j3 < last ? j3 : last];
#endif
    return x;
#endif
}

/* The first test of a chunk's slots, on their raw bits against t's: a
 * slot whose composite is above t passes it (so do others: ties at t's key,
 * both zeros, NaNs where t's key is NaN's or none), and only where some slot
 * of the warp passes are composites made and compared.  Integers by their
 * order keys (a xor); floats by a float compare of their bits, the sign
 * flipped where the smallest come first (the smaller then the larger), so
 * that a NaN (unordered) passes. */
#if KEY_KIND == 2
typedef float ws_raw_t;
#define WS_RAWV(x) as_float((uint)(x) ^ flip)
#define WS_PASS(x) (!(WS_RAWV(x) < traw))
#else
typedef uint ws_raw_t;
#define WS_RAWV(x) order_key((x), smallest)
#define WS_PASS(x) (WS_RAWV(x) >= traw)
#endif

/* t's bits for WS_PASS */
inline ws_raw_t ws_raw(ulong t, uint smallest)
{
    const okey_t u = (okey_t)(t >> 32);
#if KEY_KIND == 2
    const uint flip = smallest ? 0x80000000u : 0u;
    /* a zero's key: +0 (both zeros pass); NaN's: a NaN (all pass) */
    uint b = okey_exact(u, smallest) ? okey_bits(u, smallest)
             : (u ^ (smallest ? OKEY_ONES : 0u)) == OKEY_SIGN ? 0u
                                                              : 0x7FC00000u;
    return as_float(b ^ flip);
#else
    (void)smallest;
    return u;
#endif
}

/* slot v's composite (0 past the row's end) */
#if WSFULL
#define WS_CV(x, ch, v) (((ulong)order_key((x), smallest) << 32) | (ulong)~WS_COL(ch, v))
#else
#define WS_CV(x, ch, v)                                                                        \
    (WS_COL(ch, v) < cols ? ((ulong)order_key((x), smallest) << 32) | (ulong)~WS_COL(ch, v)   \
                          : 0UL)
#endif

__kernel __attribute__((reqd_work_group_size(32 * WSG, 1, 1))) void
rows_ws(__global const key_t *in, ulong in_off, ulong ld, uint cols, uint k, uint smallest,
        __global key_t *out_keys, __global long *out_index, uint want, ulong ibase, ulong nrows)
{
    __local ulong bufs[WSG * WSB];
#if WSP
    __local ulong *xv = bufs; /* (unused) */
#else
    __local ulong xv[32];
#endif
    const uint lid = get_local_id(0), lane = lid % 32u, warp = lid / 32u;
    const ulong row = get_group_id(0) * (ulong)WSG + warp;
    if (row >= nrows) /* (the warp's every lane) */
        return;
    __local ulong *buf = bufs + warp * WSB;
    __global const key_t *row_in = in + in_off + row * ld;
    const uint nch = cols / 128u + (cols % 128u != 0u); /* (cols up to 2^32 - 2) */

    /* (WSL) the stream's chunk c the row's c - 1, its first the row's last:
     * a row in ascending order starts from its best, as a descending one
     * does (before, every chunk of an ascending row merged: 0.679 ms at
     * 8192 x 8192, k = 32, on the H200, against 0.083 descending) */
#if WSL
#define WS_PH(c) ((c) ? (c) - 1u : nch - 1u)
#else
#define WS_PH(c) (c)
#endif

    /* the first WSU chunks in flight */
    uint4 x[WSU];
#pragma unroll
    for (uint s = 0; s < WSU; s++)
        x[s] = ws_load(row_in, WS_PH(s < nch ? s : nch - 1u), cols, lane);

    /* 1. this work-item's best of them (its column kept out of the
     * candidates below: it is in the list), the 32 sorted: the list */
    ulong top = 0UL;
#pragma unroll
    for (uint s = 0; s < WSU; s++) {
        if (s < nch) { /* (uniform) */
            const uint pc = WS_PH(s);
            ulong c0 = WS_CV(x[s].s0, pc, 0), c1 = WS_CV(x[s].s1, pc, 1);
            ulong c2 = WS_CV(x[s].s2, pc, 2), c3 = WS_CV(x[s].s3, pc, 3);
            c0 = c0 > c1 ? c0 : c1;
            c2 = c2 > c3 ? c2 : c3;
            c0 = c0 > c2 ? c0 : c2;
            top = top > c0 ? top : c0;
        }
    }
    const uint mcol = top ? ~(uint)top : 0xFFFFFFFFu;
    top = ws_sort(top, 1, lane, xv);
    ulong t = WS_IDX(top, k - 1u);
    ws_raw_t traw = ws_raw(t, smallest);
#if KEY_KIND == 2
    const uint flip = smallest ? 0x80000000u : 0u;
#endif
    uint nb = 0; /* the buffer's candidates (uniform) */

    /* 2. every chunk: its candidates into the buffer */
    for (uint c0 = 0; c0 < nch; c0 += WSU) {
        WS_UNROLL for (uint s = 0; s < WSU; s++)
        {
            const uint ch = c0 + s, pc = WS_PH(ch);
            const uint4 cur = x[s];
            if (ch + WSU < nch) /* (uniform) the chunk WSU on */
                x[s] = ws_load(row_in, WS_PH(ch + WSU), cols, lane);
            /* (uniform) */
            if (ch < nch &&
                WS_BALLOT(WS_PASS(cur.s0) | WS_PASS(cur.s1) | WS_PASS(cur.s2) | WS_PASS(cur.s3))) {
                ulong c[4] = {WS_CV(cur.s0, pc, 0), WS_CV(cur.s1, pc, 1), WS_CV(cur.s2, pc, 2),
                              WS_CV(cur.s3, pc, 3)};
                int p[4];
#pragma unroll
                for (uint v = 0; v < 4u; v++)
                    p[v] = c[v] > t && WS_COL(pc, v) != mcol;
                WS_UNROLL for (uint v = 0; v < 4u; v++)
                {
                    uint m = WS_BALLOT(p[v]);
#if WSP
                    if (p[v])
                        buf[nb + popcount(m & ((1u << lane) - 1u))] = c[v];
#else
                    /* no branch around a store: some POCL versions'
                     * work-group compilers took a condition for the whole
                     * group (README, Troubleshooting) */
                    buf[p[v] ? nb + popcount(m & ((1u << lane) - 1u)) : 160u + lane] = c[v];
#endif
                    nb += popcount(m);
                }
                if (nb >= 32u) { /* 3. merged */
                    ws_merge(buf, nb, &top, &t, k, lane, xv);
                    traw = ws_raw(t, smallest);
                    nb = 0;
                }
            }
        }
    }
    if (nb)
        ws_merge(buf, nb, &top, &t, k, lane, xv);

    /* 4. the answer: lane i the i-th best (every one an element: k <= cols) */
#if WSP
    if (lane < k) {
#else
    /* (no branch: every work-item past k - 1 stores the k-th's, as the k-th
     * does; POCL 3.1 stored every lane's answer past k - 1 behind `lane <
     * k` in one build, a condition taken for the whole group) */
    top = WS_IDX(top, lane < k ? lane : k - 1u);
    {
#endif
        const uint j = ~(uint)top, i = lane < k ? lane : k - 1u;
        const ulong o = row * (ulong)k + i;
        if (want & 1u) {
            const okey_t ku = (okey_t)(top >> 32);
            const key_t raw = row_in[j];
            out_keys[o] = okey_exact(ku, smallest) ? okey_bits(ku, smallest) : raw;
        }
        if (want & 2u)
            out_index[o] = (long)(j + ibase);
    }
}
