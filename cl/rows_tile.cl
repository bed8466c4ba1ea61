/* rows_tile.cl - many top-k at once where a row (or a part of one) fits one
 * work-group's registers: WG work-items hold RT elements each, loaded once
 * (coalesced), and the group finds the row's k best by a radix selection in
 * local memory over the composite (order key, position), so that no two
 * elements are equal and the k best are exactly those at or above the k-th.
 *
 * Every element is the pair (u, lo): u its order key (common.cl, larger
 * first), lo = (PMAXV - position) << (32 - PB), larger for a smaller position,
 * so that the composite u:lo orders as THE ORDER does; a slot past the row's
 * end is (0, 0), below every element (an element's lo is at least 1 << (32 -
 * PB)).  A pass counts, in a 256-bin histogram, the next 8 bits of the
 * elements that share the prefix found so far; the bin holding the rank still
 * wanted extends the prefix.  As soon as the elements at or above the prefix
 * (those above it, all winners, and the bin's) number at most MCAP, they are
 * gathered into local memory (one compare of the composite against the
 * prefix), sorted best first (bitonic) and the k first written.  On most input
 * that is after the first pass; all-equal rows take every key pass and the
 * position passes.  A work-item adds runs of equal digits among its own
 * elements with one local atomic, which keeps equal keys cheap.
 *
 * Kernels:
 *   rows_tile        group g: part g % parts of row g / parts (plen elements
 *                    of it at in_off + row * ld + part * plen); with one part
 *                    it writes the row's k first (keys as the input's bits,
 *                    positions + ibase as int64), else the part's k best
 *                    pairs (order key, position in the row; the sentinel past
 *                    a part shorter than k) to cand_u / cand_i at g * k
 *   rows_tile_merge  group r: the parts * k candidates of row r, which carry
 *                    their positions; writes the row's k first
 *   rows_tile_seg    group g: segment ids[g] = in[in_off + offs[s] ..
 *                    in_off + offs[s + 1]), at most WG * RT elements; short
 *                    segments (fewer than k) padded with index -1, key 0
 *
 * -D options (defaults below, so that the file compiles on its own): KEY_BITS,
 * KEY_KIND (common.cl), WG (work-items, at least 16), RT (elements a
 * work-item holds), MCAP (gathered pairs, a power of two >= 2k), PB (position
 * bits: every position is at most 2^PB - 2; at most 31). */
#ifndef CLTOPK_COMMON_CL
#include "common.cl"
#endif

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

#if KEY_BITS == 64
typedef ulong key_t;
#else
typedef uint key_t;
#endif

#define LOSHIFT (32 - PB)
#define PMAXV ((1u << PB) - 1u)
#define UPASSES (KEY_BITS / 8)
#define NPASS (UPASSES + (PB + 7) / 8)

/* the lo word of position pos */
#define LO_OF(pos) ((PMAXV - (uint)(pos)) << LOSHIFT)

typedef struct {
    uint hist[256];
    uint part[16];
    uint sel[3];
    uint cnt;
    okey_t cu[MCAP];
    uint ci[MCAP];
} tile_locals;

inline uint lower_of(uint c, uint j)
{
    return ((c & ~(j - 1u)) << 1) | (c & (j - 1u));
}

/* The k best of the group's elements (u[r], lo[r]), at least k of them real:
 * leaves them sorted best first in L->cu / L->ci[0 .. k) (positions in ci).
 * Every work-item calls it. */
inline void tile_select(const okey_t *u, const uint *lo, uint k, __local tile_locals *L)
{
    const uint lid = get_local_id(0);
    okey_t pu = 0, mu = 0; /* the prefix found on u, and its mask */
    uint pl = 0, ml = 0;   /* and on lo */
    uint need = k;         /* the rank still wanted among the prefix's elements */
    uint above = 0;        /* elements above the prefix: all winners */
    for (uint p = 0; p < NPASS; p++) {
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
        if (above + hb <= MCAP)
            break;
    }
    /* gather the elements at or above the prefix (at most MCAP) */
    if (lid == 0)
        L->cnt = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
    for (uint r = 0; r < RT; r++) {
        if ((u[r] > pu) | ((u[r] == pu) & (lo[r] >= pl))) {
            uint q = atomic_inc(&L->cnt);
            L->cu[q] = u[r];
            L->ci[q] = PMAXV - (lo[r] >> LOSHIFT);
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint cnt = L->cnt;
    uint m = 2;
    while (m < cnt)
        m <<= 1;
    for (uint i = cnt + lid; i < m; i += WG) {
        L->cu[i] = 0;
        L->ci[i] = SENTINEL_IDX;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    /* bitonic sort of cu / ci [0 .. m), best first */
    for (uint size = 2; size <= m; size <<= 1) {
        for (uint j = size >> 1; j > 0; j >>= 1) {
            for (uint c = lid; c < m / 2; c += WG) {
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
    }
}

/* write the k first pairs of row `row`, whose element j is in[start + j];
 * n real elements (past them: index -1, key 0) */
#define TILE_WRITE(start, n)                                                                  \
    for (uint i = lid; i < k; i += WG) {                                                      \
        uint idx = L.ci[i];                                                                   \
        ulong o = row * (ulong)k + i;                                                         \
        int real = i < (n);                                                                   \
        if (want & 1u)                                                                        \
            out_keys[o] = real ? in[(start) + idx] : (key_t)0;                                \
        if (want & 2u)                                                                        \
            out_index[o] = real ? (long)(idx + ibase) : (long)-1;                             \
    }

__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
rows_tile(__global const key_t *in, ulong in_off, ulong ld, ulong cols, uint k, uint smallest,
          uint parts, ulong plen, __global key_t *out_keys, __global long *out_index, uint want,
          ulong ibase, __global okey_t *cand_u, __global uint *cand_i)
{
    __local tile_locals L;
    const uint lid = get_local_id(0);
    const ulong g = get_group_id(0), row = g / parts, part = g % parts;
    const ulong first = part * plen;
    const uint len = first >= cols ? 0u : (uint)(cols - first < plen ? cols - first : plen);
    const ulong start = in_off + row * ld + first;
    okey_t u[RT];
    uint lo[RT];
#pragma unroll
    for (uint r = 0; r < RT; r++) {
        uint j = r * WG + lid;
        int real = j < len;
        u[r] = real ? order_key(in[start + j], smallest) : (okey_t)0;
        lo[r] = real ? LO_OF(first + j) : 0u;
    }
    const uint kk = k < len ? k : len;
    if (kk)
        tile_select(u, lo, kk, &L);
    if (parts == 1) {
        TILE_WRITE(in_off + row * ld, kk)
    } else {
        for (uint i = lid; i < k; i += WG) {
            cand_u[g * k + i] = i < kk ? L.cu[i] : (okey_t)0;
            cand_i[g * k + i] = i < kk ? L.ci[i] : SENTINEL_IDX;
        }
    }
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
rows_tile_merge(__global const key_t *in, ulong in_off, ulong ld, uint k, uint parts,
                __global const okey_t *cand_u, __global const uint *cand_i,
                __global key_t *out_keys, __global long *out_index, uint want, ulong ibase)
{
    __local tile_locals L;
    const uint lid = get_local_id(0);
    const ulong row = get_group_id(0);
    const uint len = parts * k;
    const ulong c0 = row * (ulong)len;
    okey_t u[RT];
    uint lo[RT];
#pragma unroll
    for (uint r = 0; r < RT; r++) {
        uint j = r * WG + lid;
        uint pos = j < len ? cand_i[c0 + j] : SENTINEL_IDX;
        int real = pos != SENTINEL_IDX;
        u[r] = real ? cand_u[c0 + j] : (okey_t)0;
        lo[r] = real ? LO_OF(pos) : 0u;
    }
    tile_select(u, lo, k, &L);
    TILE_WRITE(in_off + row * ld, k)
}

/* segment ids[id0 + group] (in_off may be negative: host batches pass offsets
 * relative to their first segment) */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
rows_tile_seg(__global const key_t *in, long in_off, __global const long *offs,
              __global const uint *ids, uint id0, uint k, uint smallest,
              __global key_t *out_keys, __global long *out_index, uint want, ulong ibase)
{
    __local tile_locals L;
    const uint lid = get_local_id(0);
    const ulong row = ids[id0 + get_group_id(0)];
    const ulong start = (ulong)(in_off + offs[row]);
    const uint len = (uint)(offs[row + 1] - offs[row]);
    okey_t u[RT];
    uint lo[RT];
#pragma unroll
    for (uint r = 0; r < RT; r++) {
        uint j = r * WG + lid;
        int real = j < len;
        u[r] = real ? order_key(in[start + j], smallest) : (okey_t)0;
        lo[r] = real ? LO_OF(j) : 0u;
    }
    const uint kk = k < len ? k : len;
    if (kk)
        tile_select(u, lo, kk, &L);
    TILE_WRITE(start, kk)
}
