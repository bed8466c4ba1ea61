/* tile.h - the register tile's selection (cl/rows_tile.cl, cl/query.cl): the
 * k best of a work-group's elements, RT a work-item in registers, by a radix
 * selection over the composite (order key, position) in local memory; see
 * rows_tile.cl for the method.  Needs WG, RT, MCAP, PB (and common.cl). */
#ifndef CLTOPK_TILE_H
#define CLTOPK_TILE_H

/* defaults, so that a file including this compiles on its own */
#ifndef WG
#define WG 64
#endif
#ifndef RT
#define RT 16
#endif
#ifndef MCAP
#define MCAP 128
#endif
#ifndef PB
#define PB 16
#endif
#if PB < 1 || PB > 31
#error "PB must be 1 to 31"
#endif
#if WG < 16
#error "WG must be at least 16"
#endif

#ifndef TILE_NOMAX
#define TILE_NOMAX 0 /* 1: never the threshold of the maxima (testing) */
#endif
/* the most gathered elements a selection of k sorts without further radix
 * passes: 2k, at least 64, at most MCAP */
#define TILE_STOP(k) ((k) > MCAP / 2 ? MCAP : (k) * 2u < 64u ? (64u < MCAP ? 64u : MCAP) : (k) * 2u)
#define LOSHIFT (32 - PB)
#define PMAXV ((1u << PB) - 1u)
#define UPASSES (KEY_BITS / 8)
#define NPASS (UPASSES + (PB + 7) / 8)

/* the lo word of position pos */
#define LO_OF(pos) ((PMAXV - (uint)(pos)) << LOSHIFT)

#ifndef TILE_PRE
#define TILE_PRE 0 /* 1: tile_by_radix starts at the first byte of the key where the
                      real elements differ, its passes over the bytes they all share
                      skipped (the sample filter's finish: candidates above a
                      threshold share their leading bits) */
#endif

typedef struct {
    uint hist[256];
    uint part[16];
#if TILE_PRE
    uint pre[4]; /* the AND and the OR of the real keys, low and high words */
#endif
    uint sel[3];
    uint cnt;
    okey_t cu[MCAP];
    uint ci[MCAP];
} tile_locals;

/* composite (u, lo) a better than b */
#define TILE_BETTER(au, al, bu, bl) (((au) > (bu)) | (((au) == (bu)) & ((al) > (bl))))

#ifndef TILE_SHFL
#define TILE_SHFL 0 /* 1 (NVIDIA, WG >= 64): tile_sort_gathered's bitonic of 2 WG slots
                       in registers, its steps within a warp by shuffles (inline PTX);
                       2: the same with the shuffles' partners through local memory,
                       so that any device tests the way */
#endif
#if TILE_SHFL && WG < 64
#undef TILE_SHFL
#define TILE_SHFL 0
#endif

/* one step of the bitonic sort of L->cu / L->ci [0 .. m) through local
 * memory: the pairs j apart in runs of `size`, WG work-items (then a barrier) */
inline void tile_bitonic_step(uint m, uint size, uint j, __local tile_locals *L)
{
    for (uint c = get_local_id(0); c < m / 2; c += WG) {
        uint a = lower_of(c, j), h = a + j;
        okey_t ua = L->cu[a], uh = L->cu[h];
        uint ia = L->ci[a], ih = L->ci[h];
        int hb = pair_better(uh, ih, ua, ia);
        if (hb == ((a & size) == 0)) {
            L->cu[a] = uh;
            L->ci[a] = ih;
            L->cu[h] = ua;
            L->ci[h] = ia;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
}

#if TILE_SHFL
#if TILE_SHFL == 1
/* v of the lane whose id is this one's xor j (j < 32; the whole warp takes
 * part) */
inline uint tile_shfl_xor(uint v, uint j)
{
    uint r;
    asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=r"(r) : "r"(v), "r"(j));
    return r;
}

inline okey_t tile_shfl_key(okey_t u, uint j)
{
#if KEY_BITS == 64
    return ((okey_t)tile_shfl_xor((uint)(u >> 32), j) << 32) | tile_shfl_xor((uint)u, j);
#else
    return tile_shfl_xor(u, j);
#endif
}
#endif

/* a bitonic step j < 32 apart on a work-item's pair (u, i), the element x
 * of the sort, its partner's (pu, pi): the lower of two keeps the better
 * where x's run of `size` goes up, the upper the worse */
inline void tile_shfl_step(okey_t *u, uint *i, okey_t pu, uint pi, uint x, uint size, uint j)
{
    const int lower = (x & j) == 0, up = (x & size) == 0;
    const int take = lower == up ? pair_better(pu, pi, *u, *i) : pair_better(*u, *i, pu, pi);
    *u = take ? pu : *u;
    *i = take ? pi : *i;
}

/* the bitonic sort of L->cu / L->ci [0 .. 2 WG), padded, best first: a
 * work-item holds slots lid and lid + WG in registers; steps j < 32 apart by
 * shuffles, j = WG between its own two, the rest (32 <= j < WG) through local
 * memory, each work-item storing and loading only its own slots around them:
 * 14 barriers at WG = 256 where tile_bitonic_step's way takes 45 */
inline void tile_sort_shfl(__local tile_locals *L)
{
    const uint lid = get_local_id(0), m = 2u * WG;
    okey_t u0 = L->cu[lid], u1 = L->cu[lid + WG];
    uint i0 = L->ci[lid], i1 = L->ci[lid + WG];
    for (uint size = 2; size <= m; size <<= 1) {
        uint j = size >> 1;
        if (j == WG) { /* size m: slot lid (lower, going up) keeps the better */
            const int b = pair_better(u1, i1, u0, i0);
            const okey_t tu = u0;
            const uint ti = i0;
            u0 = b ? u1 : u0;
            i0 = b ? i1 : i0;
            u1 = b ? tu : u1;
            i1 = b ? ti : i1;
            j >>= 1;
        }
        if (j >= 32) {
            L->cu[lid] = u0;
            L->ci[lid] = i0;
            L->cu[lid + WG] = u1;
            L->ci[lid + WG] = i1;
            barrier(CLK_LOCAL_MEM_FENCE);
            for (; j >= 32; j >>= 1)
                tile_bitonic_step(m, size, j, L);
            u0 = L->cu[lid];
            i0 = L->ci[lid];
            u1 = L->cu[lid + WG];
            i1 = L->ci[lid + WG];
        }
        for (; j > 0; j >>= 1) {
#if TILE_SHFL == 2
            /* the partners through local memory (the slots' copies there
             * are stale now), where a warp's shuffles would take them */
            L->cu[lid] = u0;
            L->ci[lid] = i0;
            L->cu[lid + WG] = u1;
            L->ci[lid + WG] = i1;
            barrier(CLK_LOCAL_MEM_FENCE);
            const okey_t pu0 = L->cu[lid ^ j], pu1 = L->cu[(lid ^ j) + WG];
            const uint pi0 = L->ci[lid ^ j], pi1 = L->ci[(lid ^ j) + WG];
            barrier(CLK_LOCAL_MEM_FENCE);
#else
            const okey_t pu0 = tile_shfl_key(u0, j), pu1 = tile_shfl_key(u1, j);
            const uint pi0 = tile_shfl_xor(i0, j), pi1 = tile_shfl_xor(i1, j);
#endif
            tile_shfl_step(&u0, &i0, pu0, pi0, lid, size, j);
            tile_shfl_step(&u1, &i1, pu1, pi1, lid + WG, size, j);
        }
    }
    L->cu[lid] = u0;
    L->ci[lid] = i0;
    L->cu[lid + WG] = u1;
    L->ci[lid + WG] = i1;
    barrier(CLK_LOCAL_MEM_FENCE);
}
#endif

/* Sort the gathered L->cu / L->ci [0 .. cnt) best first: by rank (one
 * comparison of every pair, no barrier between steps) where cnt <= WG, else
 * bitonic over the next power of two (padded with the sentinel) */
inline void tile_sort_gathered(uint cnt, __local tile_locals *L)
{
    const uint lid = get_local_id(0);
    if (cnt <= WG) {
        okey_t mu = 0;
        uint mi = SENTINEL_IDX, rank = 0;
        if (lid < cnt) {
            mu = L->cu[lid];
            mi = L->ci[lid];
            for (uint j = 0; j < cnt; j++)
                rank += (uint)pair_better(L->cu[j], L->ci[j], mu, mi);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid < cnt) {
            L->cu[rank] = mu;
            L->ci[rank] = mi;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    } else {
        uint m = 2;
        while (m < cnt)
            m <<= 1;
        for (uint i = cnt + lid; i < m; i += WG) {
            L->cu[i] = 0;
            L->ci[i] = SENTINEL_IDX;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        /* bitonic sort of cu / ci [0 .. m), best first */
#if TILE_SHFL
        if (m == 2u * WG)
            tile_sort_shfl(L);
        else
#endif
            for (uint size = 2; size <= m; size <<= 1)
                for (uint j = size >> 1; j > 0; j >>= 1)
                    tile_bitonic_step(m, size, j, L);
    }
}

/* Gather the elements at or above the composite (tu, tl) into L->cu / L->ci
 * (positions), at most MCAP of them; returns how many are at or above it (more
 * than MCAP: not all were kept) */
inline uint tile_gather(const okey_t *u, const uint *lo, okey_t tu, uint tl,
                        __local tile_locals *L)
{
    if (get_local_id(0) == 0)
        L->cnt = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
    for (uint r = 0; r < RT; r++) {
        if ((u[r] > tu) | ((u[r] == tu) & (lo[r] >= tl))) {
            uint q = atomic_inc(&L->cnt);
            if (q < MCAP) {
                L->cu[q] = u[r];
                L->ci[q] = PMAXV - (lo[r] >> LOSHIFT);
            }
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    return L->cnt;
}

/* The threshold of the maxima: each work-item's best element; the k-th best
 * of those maxima (k <= WG; reduced to M leaders' below) is an element with at
 * least k elements at or above it (k distinct maxima), and on most input only
 * a few more (uniform keys: about 1.4 k; sorted or all-equal rows: exactly
 * k).  Gathers those (at most MCAP) and returns their count: 0
 * when fewer than k maxima are real elements.  The functions here have one
 * exit each and their barriers are reached by the whole group (POCL's kernel
 * compiler mishandles a barrier after an early return).  */
inline uint tile_by_maxima(const okey_t *u, const uint *lo, uint k, __local tile_locals *L)
{
    const uint lid = get_local_id(0);
    okey_t bu = u[0];
    uint bl = lo[0];
#pragma unroll
    for (uint r = 1; r < RT; r++) {
        int b = TILE_BETTER(u[r], lo[r], bu, bl);
        bu = b ? u[r] : bu;
        bl = b ? lo[r] : bl;
    }
    L->cu[lid] = bu;
    L->ci[lid] = bl;
    if (lid == 0)
        L->part[3] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    /* M leaders (the least power of two >= 2k, at least 16, at most WG) each
     * take the best of WG / M work-items' maxima: the k-th best of the M then
     * has about 1.4 k elements at or above it (half of the M beat it), at a
     * cost of M comparisons a leader instead of WG */
    uint M = 16;
    while (M < 2u * k && M < WG)
        M <<= 1;
    if (lid < M) {
        for (uint w = lid + M; w < WG; w += M) {
            const okey_t wu = L->cu[w];
            const uint wl = L->ci[w];
            const int b = TILE_BETTER(wu, wl, bu, bl);
            bu = b ? wu : bu;
            bl = b ? wl : bl;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < M) {
        L->cu[lid] = bu;
        L->ci[lid] = bl;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < M) {
        uint rank = 0;
        for (uint j = 0; j < M; j++)
            rank += (uint)TILE_BETTER(L->cu[j], L->ci[j], bu, bl);
        /* the k-th best, if it is a real element (lo of a real one is at
         * least 1 << LOSHIFT; padding maxima (0, 0) tie and may skip rank
         * k - 1) */
        if (rank == k - 1u && bl != 0) {
            L->part[0] = (uint)bu;
            L->part[1] = (uint)((ulong)bu >> 32);
            L->part[2] = bl;
            L->part[3] = 1u;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint found = L->part[3];
    const okey_t tu = (okey_t)(((ulong)L->part[1] << 32) | L->part[0]);
    const uint tl = L->part[2];
    barrier(CLK_LOCAL_MEM_FENCE);
    /* not found: a threshold above everything gathers nothing */
    return tile_gather(u, lo, found ? tu : (okey_t)~(okey_t)0, found ? tl : 0xFFFFFFFFu, L);
}

/* the radix selection: gathers the elements at or above the prefix that
 * leaves at most `stop` of them; returns their count */
inline uint tile_by_radix(const okey_t *u, const uint *lo, uint k, uint stop,
                          __local tile_locals *L)
{
    const uint lid = get_local_id(0);
    okey_t pu = 0, mu = 0; /* the prefix found on u, and its mask */
    uint pl = 0, ml = 0;   /* and on lo */
    uint need = k;         /* the rank still wanted among the prefix's elements */
    uint above = 0;        /* elements above the prefix: all winners */
    uint p0 = 0;           /* the first pass */
#if TILE_PRE
    {
        /* the leading bytes every real element's key shares (lo != 0 marks a
         * real one): the passes over them would put every real element in
         * one bin and change nothing but the prefix, which is set here */
        if (lid == 0) {
            L->pre[0] = 0xFFFFFFFFu;
            L->pre[1] = 0xFFFFFFFFu;
            L->pre[2] = 0u;
            L->pre[3] = 0u;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        okey_t a = ~(okey_t)0, o = 0;
#pragma unroll
        for (uint r = 0; r < RT; r++) {
            const okey_t m = (okey_t)0 - (okey_t)(lo[r] != 0u); /* all ones where real */
            a &= u[r] | ~m;
            o |= u[r] & m;
        }
        atomic_and(&L->pre[0], (uint)a);
        atomic_or(&L->pre[2], (uint)o);
#if KEY_BITS == 64
        atomic_and(&L->pre[1], (uint)(a >> 32));
        atomic_or(&L->pre[3], (uint)(o >> 32));
#endif
        barrier(CLK_LOCAL_MEM_FENCE);
#if KEY_BITS == 64
        const okey_t all = ((okey_t)L->pre[1] << 32) | L->pre[0];
        const okey_t any = ((okey_t)L->pre[3] << 32) | L->pre[2];
#else
        const okey_t all = L->pre[0], any = L->pre[2];
#endif
        /* no real element: all ones against zero, no byte shared; one key
         * only: every byte (clz(0) is the width) */
        p0 = (uint)clz(all ^ any) / 8u;
        if (p0 > 0u) {
            mu = p0 >= UPASSES ? ~(okey_t)0 : ~(okey_t)0 << (KEY_BITS - 8u * p0);
            pu = all & mu;
        }
    }
#endif
    for (uint p = p0; p < NPASS; p++) {
        const int onu = p < UPASSES;
        const uint sh = onu ? KEY_BITS - 8u * (p + 1u) : 24u - 8u * (p - UPASSES);
        for (uint i = lid; i < 256; i += WG)
            L->hist[i] = 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        uint run_d = 0, run_n = 0;
#pragma unroll
        for (uint r = 0; r < RT; r++) {
            if (((u[r] & mu) == pu) & ((lo[r] & ml) == pl)) {
                uint d = onu ? (uint)(u[r] >> sh) & 255u : (lo[r] >> sh) & 255u;
                if (run_n && d != run_d) {
                    atomic_add(&L->hist[run_d], run_n);
                    run_n = 0;
                }
                run_d = d;
                run_n++;
            }
        }
        if (run_n)
            atomic_add(&L->hist[run_d], run_n);
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid < 16) {
            uint s = 0;
            for (uint i = 0; i < 16; i++)
                s += L->hist[lid * 16u + i];
            L->part[lid] = s;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid == 0) {
            /* from the top bin down: the bin where the count reaches need */
            uint acc = 0;
            int c = 15;
            while (c > 0 && acc + L->part[c] < need)
                acc += L->part[c--];
            int b = c * 16 + 15;
            while (b > c * 16 && acc + L->hist[b] < need)
                acc += L->hist[b--];
            L->sel[0] = (uint)b;
            L->sel[1] = acc;
            L->sel[2] = L->hist[b];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        const uint b = L->sel[0], acc = L->sel[1], hb = L->sel[2];
        above += acc;
        need -= acc;
        if (onu) {
            pu |= (okey_t)b << sh;
            mu |= (okey_t)255u << sh;
        } else {
            pl |= b << sh;
            ml |= 255u << sh;
        }
        if (above + hb <= stop)
            break;
    }
    /* gather the elements at or above the prefix (at most MCAP) */
    return tile_gather(u, lo, pu, pl, L);
}

/* The k best of the group's elements (u[r], lo[r]), at least k of them real:
 * leaves them sorted best first in L->cu / L->ci[0 .. k) (positions in ci).
 * Every work-item calls it. */
inline void tile_select(const okey_t *u, const uint *lo, uint k, __local tile_locals *L)
{
    /* the passes stop once at most `stop` elements are at or above the prefix
     * (2k, at least 64, at most MCAP): another pass over the registers costs
     * less than sorting a larger gathered set */
    const uint stop = TILE_STOP(k);
    uint cnt = 0;
#if WG <= MCAP && !TILE_NOMAX /* (in the preprocessor: no constant operand of &&) */
    if (k <= WG) {
        cnt = tile_by_maxima(u, lo, k, L);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
#endif
    if (cnt < k || cnt > stop)
        cnt = tile_by_radix(u, lo, k, stop, L);
    tile_sort_gathered(cnt, L);
}

/* The k best of the group's elements when `real` of them are real (lo != 0):
 * at most TILE_STOP(k) are gathered and sorted whole, without a selection;
 * more take tile_select (k capped at real) */
inline void tile_select_of(const okey_t *u, const uint *lo, uint k, uint real,
                           __local tile_locals *L)
{
    if (real > TILE_STOP(k)) {
        tile_select(u, lo, k < real ? k : real, L);
    } else if (real) {
        /* the composite (0, 1) is below every real element and above the
         * padding (0, 0) */
        tile_gather(u, lo, (okey_t)0, 1u, L);
        tile_sort_gathered(real, L);
    }
}

/* The tile's slots from candidates (order key, position; the sentinel
 * position past what a group had) at c0 .. c0 + len: returns how many are
 * real */
inline uint tile_from_cands(__global const okey_t *cand_u, __global const uint *cand_i,
                            ulong c0, uint len, okey_t *u, uint *lo)
{
    const uint lid = get_local_id(0);
    uint real_n = 0;
#pragma unroll
    for (uint r = 0; r < RT; r++) {
        uint j = r * WG + lid;
        uint pos = j < len ? cand_i[c0 + j] : SENTINEL_IDX;
        int real = pos != SENTINEL_IDX;
        u[r] = real ? cand_u[c0 + j] : (okey_t)0;
        lo[r] = real ? LO_OF(pos) : 0u;
        real_n += (uint)real;
    }
    return real_n;
}

/* the k candidates of a group at at .. at + k: its kk best (positions +
 * base), the sentinel past them */
inline void tile_store(__global okey_t *cand_u, __global uint *cand_i, ulong at, uint k, uint kk,
                       uint base, __local const tile_locals *L)
{
    for (uint i = get_local_id(0); i < k; i += WG) {
        cand_u[at + i] = i < kk ? L->cu[i] : (okey_t)0;
        cand_i[at + i] = i < kk ? base + L->ci[i] : SENTINEL_IDX;
    }
}

#endif
