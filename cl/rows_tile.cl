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
 *   rows_tile_segpart, rows_tile_segmerge
 *                    longer segments in parts of WG * RT elements, a group a
 *                    part, merged by a group a segment (as rows_tile and
 *                    rows_tile_merge do for dense rows)
 *
 * -D options (defaults in common.cl and tile.h, so that the file compiles on
 * its own): KEY_BITS, KEY_KIND (common.cl), WG (work-items, at least 16), RT
 * (elements a work-item holds), MCAP (gathered pairs, a power of two >= 2k),
 * PB (position bits: every position is at most 2^PB - 2; at most 31). */
#ifndef CLTOPK_COMMON_CL
#include "common.cl"
#endif

#include "tile.h"

/* the tile's slots from len elements of in at start, positions first + j */
inline void tile_from_keys(__global const key_t *in, ulong start, uint len, uint first,
                           uint smallest, okey_t *u, uint *lo)
{
    const uint lid = get_local_id(0);
#pragma unroll
    for (uint r = 0; r < RT; r++) {
        uint j = r * WG + lid;
        int real = j < len;
        u[r] = real ? order_key(in[start + j], smallest) : (okey_t)0;
        lo[r] = real ? LO_OF(first + j) : 0u;
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
    tile_from_keys(in, start, len, (uint)first, smallest, u, lo);
    const uint kk = k < len ? k : len;
    if (kk)
        tile_select(u, lo, kk, &L);
    if (parts == 1) {
        TILE_WRITE(in_off + row * ld, kk)
    } else {
        tile_store(cand_u, cand_i, g * k, k, kk, 0, &L);
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
    tile_from_cands(cand_u, cand_i, c0, len, u, lo);
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
    tile_from_keys(in, start, len, 0, smallest, u, lo);
    const uint kk = k < len ? k : len;
    if (kk)
        tile_select(u, lo, kk, &L);
    TILE_WRITE(start, kk)
}

/* Long segments in parts: group g takes part g of the list (plist[g]: its
 * segment, plist[nparts + g]: its first element), at most WG * RT elements,
 * and writes its best k pairs (order key, position in the segment; the
 * sentinel past a part shorter than k) to cand_u / cand_i at g * k ... */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
rows_tile_segpart(__global const key_t *in, long in_off, __global const long *offs,
                  __global const uint *plist, uint nparts, uint k, uint smallest,
                  __global okey_t *cand_u, __global uint *cand_i)
{
    __local tile_locals L;
    const ulong g = get_group_id(0), s = plist[g];
    const uint first = plist[nparts + g];
    const ulong seglen = (ulong)(offs[s + 1] - offs[s]);
    const uint len = (uint)(seglen - first < (ulong)(WG * RT) ? seglen - first : (ulong)(WG * RT));
    const ulong start = (ulong)(in_off + offs[s]) + first;
    okey_t u[RT];
    uint lo[RT];
    tile_from_keys(in, start, len, first, smallest, u, lo);
    const uint kk = k < len ? k : len;
    if (kk)
        tile_select(u, lo, kk, &L);
    tile_store(cand_u, cand_i, g * k, k, kk, 0, &L);
}

/* ... then group h takes segment mlist[h] (after the parts' 2 * nparts
 * entries: the segments, their first candidates, their parts) and writes its
 * k first as rows_tile_seg does */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
rows_tile_segmerge(__global const key_t *in, long in_off, __global const long *offs,
                   __global const uint *plist, uint nparts, uint nseg, uint k,
                   __global const okey_t *cand_u, __global const uint *cand_i,
                   __global key_t *out_keys, __global long *out_index, uint want)
{
    __local tile_locals L;
    const uint lid = get_local_id(0);
    __global const uint *mlist = plist + 2 * (ulong)nparts;
    const ulong h = get_group_id(0), row = mlist[h];
    const ulong c0 = mlist[nseg + h];
    const uint len = mlist[2 * nseg + h] * k;
    const ulong ibase = 0;
    okey_t u[RT];
    uint lo[RT];
    tile_from_cands(cand_u, cand_i, c0, len, u, lo);
    tile_select(u, lo, k, &L);
    TILE_WRITE((ulong)(in_off + offs[row]), k)
}
