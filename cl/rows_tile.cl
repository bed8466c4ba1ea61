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

#ifndef TILE_MLOAD
#define TILE_MLOAD 0
#endif

/* the tile's slots from len elements of in at start, positions first + j.
 * TILE_MLOAD 1: every load unconditional (a slot past len reads element len
 * - 1) and its key masked to 0 with no branch (okey_live), so that a work-item's RT
 * loads can all be in flight at once (in the warp kernel, cl/rows_warp.cl,
 * the compiler put each conditional slot's load behind a branch of its own,
 * which on the H200 cost a third of its time); 0: each load behind its test */
inline void tile_from_keys(__global const key_t *in, ulong start, uint len, uint first,
                           uint smallest, okey_t *u, uint *lo)
{
    const uint lid = get_local_id(0);
#if TILE_MLOAD
    if (len > 0u) {
        key_t x[RT];
#pragma unroll
        for (uint r = 0; r < RT; r++) {
            uint j = r * WG + lid;
            x[r] = in[start + (j < len ? j : len - 1u)];
        }
#pragma unroll
        for (uint r = 0; r < RT; r++) {
            uint j = r * WG + lid;
            u[r] = order_key(x[r], smallest) & okey_live(j, len);
            lo[r] = j < len ? LO_OF(first + j) : 0u;
        }
        return;
    }
#endif
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

/* ------------------------------------------------------------------------
 * The sample filter for long dense rows (lib/rowsdev.c, CLTOPK_BITS path=sf):
 * a threshold a row from a sample of it, one read of every row by several
 * groups a row that keeps the elements at or above their row's threshold,
 * and an exact top-k of those, a row at a time, by the register tile.  On
 * the composite order (order key, then position; all distinct) the number of
 * elements at or above the sample's rank-th best depends on the sample's
 * positions, not on ties or repeated keys, and ties at the threshold are cut
 * by position.
 *
 *   rows_sf_sample  group r: s samples of row r, a run of SF_SRUN
 *                   neighbours in each of s / SF_SRUN equal strata at a
 *                   hashed offset (the seed changes per call; the answer
 *                   never depends on it); the rank-th best of them is
 *                   the row's threshold T (or, forced: below everything, or
 *                   above everything but the best possible pair); clears the
 *                   row's count and ticket
 *   rows_sf_filter  group g: part g % parts of row g / parts (plen elements,
 *                   vector loads where the part is aligned); an element at or
 *                   above T goes to the group's segment in local memory (a
 *                   local atomic), or, with the segment full, straight to the
 *                   row's candidates (a global atomic); at the end the group
 *                   reserves its place among the row's `cap` candidates with
 *                   one global atomic and copies its segment there.  The
 *                   count is exact past the buffer.  The group that takes the
 *                   row's last ticket finishes the row: at least k and at
 *                   most cap candidates: the k best of them (the tile); else
 *                   (too few: T above the k-th; too many for the buffer) the
 *                   exact top-k of the whole row, WG * RT - k new elements a
 *                   pass beside the k kept (decided on the device; the
 *                   outcome is left in the row's state for tests).
 *
 * The state of row r: SF_W words at r * SF_W. */
#define SF_W 8
#define SF_TLO 0    /* T: order key, low word */
#define SF_THI 1    /*    high word (64-bit keys) */
#define SF_TPOS 2   /*    position */
#define SF_COUNT 3  /* candidates (exact, also past the buffer) */
#define SF_TICKET 4 /* groups of the row done */
#define SF_PATH 5   /* 1 served by the candidates, 2 too few, 3 too many */

#define SF_FORCE_ALL 1u /* T below everything */
#define SF_FORCE_FEW 2u /* T above everything but the best possible pair */

inline uint sf_row_hash(ulong seed, ulong j)
{
    ulong z = seed + (j + 1UL) * 0x9E3779B97F4A7C15UL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9UL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBUL;
    return (uint)((z ^ (z >> 31)) >> 32);
}

#ifndef SF_SRUN
#define SF_SRUN 1 /* neighbours a sampled run (a power of two) */
#endif

__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
rows_sf_sample(__global const key_t *in, ulong in_off, ulong ld, ulong cols, uint smallest,
               uint s, uint rank, ulong seed, uint force, __global uint *state)
{
    __local tile_locals L;
    const uint lid = get_local_id(0);
    const ulong row = get_group_id(0), start = in_off + row * ld;
    /* s / SF_SRUN strata of w elements (the last takes the rest), a run of
     * SF_SRUN neighbours in each at a hashed offset (the host makes s a
     * multiple of SF_SRUN and w at least SF_SRUN); the offset by a multiply
     * and a shift, not a 64-bit remainder (cols < 2^31) */
    const uint nrun = s / SF_SRUN;
    const uint w = nrun ? (uint)(cols / nrun) : 0u;
    okey_t u[RT];
    uint lo[RT];
    const int sampled = force == 0u && s > 0u && w >= SF_SRUN && rank > 0u && rank <= s;
#pragma unroll
    for (uint r = 0; r < RT; r++) {
        const uint j = r * WG + lid, run = j / SF_SRUN;
        const int real = sampled && j < s;
        const uint h = sf_row_hash(seed, row * (ulong)nrun + run);
        const uint pos = run * w + (uint)(((ulong)h * (w - SF_SRUN + 1u)) >> 32) + j % SF_SRUN;
        u[r] = real ? order_key(in[start + pos], smallest) : (okey_t)0;
        lo[r] = real ? LO_OF(pos) : 0u;
    }
    if (sampled)
        tile_select(u, lo, rank, &L);
    if (lid == 0) {
        okey_t tu;
        uint tp;
        if (sampled) {
            tu = L.cu[rank - 1u];
            tp = L.ci[rank - 1u];
        } else if (force == SF_FORCE_FEW) {
            tu = (okey_t)~(okey_t)0;
            tp = 0u;
        } else { /* no sample, or forced: below everything */
            tu = 0;
            tp = 0xFFFFFFFEu;
        }
        __global uint *st = state + row * SF_W;
        st[SF_TLO] = (uint)tu;
        st[SF_THI] = (uint)((ulong)tu >> 32);
        st[SF_TPOS] = tp;
        st[SF_COUNT] = 0u;
        st[SF_TICKET] = 0u;
        st[SF_PATH] = 0u;
    }
}

#if KEY_BITS == 64
typedef ulong2 sf_vec_t;
#define SF_V 2
#define SF_LANES(X) X(s0, 0) X(s1, 1)
#else
typedef uint4 sf_vec_t;
#define SF_V 4
#define SF_LANES(X) X(s0, 0) X(s1, 1) X(s2, 2) X(s3, 3)
#endif
#ifndef SF_UNR
#define SF_UNR 4 /* vectors a work-item loads a round */
#endif

/* keep element x at position p of the row when at or above T (one compare
 * for most elements, the position only for a key at or above T's) */
#define SF_KEEP(x, p)                                                                         \
    do {                                                                                      \
        const okey_t u_ = order_key((x), smallest);                                           \
        const uint p_ = (uint)(p);                                                            \
        if (u_ >= tu && (u_ > tu || p_ <= tp)) {                                              \
            uint q_ = atomic_inc(&L.cnt);                                                     \
            if (q_ < MCAP) {                                                                  \
                L.cu[q_] = u_;                                                                \
                L.ci[q_] = p_;                                                                \
            } else {                                                                          \
                uint g_ = atomic_inc(&st[SF_COUNT]);                                          \
                if (g_ < cap) {                                                               \
                    cand_u[c0 + g_] = u_;                                                     \
                    cand_i[c0 + g_] = p_;                                                     \
                }                                                                             \
            }                                                                                 \
        }                                                                                     \
    } while (0)

#ifndef SF_FULL
/* 1: the filter's whole rounds without tests (the host's choice on GPUs,
 * sfull); 0: every load tested (elsewhere: a smaller kernel, and the same
 * program as the tile's other kernels) */
#define SF_FULL 0
#endif
#ifndef SF_APART
#define SF_APART 0 /* 1: rows_sf_finish finishes the rows, not the filter's last group */
#endif

/* Finish row `row` (its elements at in[rstart ..], its state st, `total`
 * candidates at c0 = row * cap): at least k and at most cap candidates: their
 * k best (the tile); else the exact top-k of the whole row, the k kept
 * (sorted, in L) beside the next WG * RT - k elements a pass.  Writes the
 * row's k first and its way in st[SF_PATH]. */
inline void sf_finish(__global const key_t *in, ulong rstart, ulong row, ulong cols, uint k,
                      uint smallest, uint cap, __global uint *st, uint total,
                      __global const okey_t *cand_u, __global const uint *cand_i,
                      __global key_t *out_keys, __global long *out_index, uint want,
                      ulong ibase, __local tile_locals *L)
{
    const uint lid = get_local_id(0);
    const ulong c0 = row * (ulong)cap;
    const uint served = total >= k && total <= cap;
    okey_t u[RT];
    uint lo[RT];
    if (served) {
        tile_from_cands(cand_u, cand_i, c0, total, u, lo);
        tile_select(u, lo, k, L);
    } else {
        uint kept = 0;
        for (ulong base = 0; base < cols;) {
            const uint take = WG * RT - kept;
            /* every slot's loads unconditional (a kept slot reads local
             * memory at j, else at 0; a new one the row at e, clamped to
             * its last element) and the slot's value chosen by masks, with
             * no branch: POCL 5 and 6 turned the branch's stores to u[r] and
             * lo[r] into new phis after their uniformity analysis had run,
             * and some builds then kept one value for the whole group
             * (README.md, Troubleshooting, "POCL 5 and 6") */
#pragma unroll
            for (uint r = 0; r < RT; r++) {
                const uint j = r * WG + lid;
                const uint keep = j < kept ? 1u : 0u;
                const ulong e = base + (ulong)(j - kept); /* wraps where keep */
                const uint real = (e < cols ? 1u : 0u) & (keep ^ 1u);
                const uint jk = j & (0u - keep);
                const okey_t mk = (okey_t)0 - (okey_t)keep, mr = (okey_t)0 - (okey_t)real;
                const okey_t ku = L->cu[jk];
                const uint kl = LO_OF(L->ci[jk]);
                const okey_t nu = order_key(in[rstart + (e < cols ? e : cols - 1u)], smallest);
                u[r] = (ku & mk) | (nu & mr);
                lo[r] = (kl & (uint)mk) | (LO_OF(e) & (uint)mr);
            }
            barrier(CLK_LOCAL_MEM_FENCE);
            const ulong left = cols - base;
            const uint real_n = kept + (uint)(left < take ? left : take);
            const uint kk = k < real_n ? k : real_n;
            tile_select(u, lo, kk, L);
            barrier(CLK_LOCAL_MEM_FENCE);
            kept = kk;
            base += take;
        }
    }
    for (uint i = lid; i < k; i += WG) {
        const uint idx = L->ci[i];
        const ulong o = row * (ulong)k + i;
        if (want & 1u)
            out_keys[o] = in[rstart + idx];
        if (want & 2u)
            out_index[o] = (long)(idx + ibase);
    }
    if (lid == 0)
        st[SF_PATH] = served ? 1u : total < k ? 2u : 3u;
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
rows_sf_filter(__global const key_t *in, ulong in_off, ulong ld, ulong cols, uint k,
               uint smallest, uint parts, ulong plen, uint cap, __global uint *state,
               __global okey_t *cand_u, __global uint *cand_i, __global key_t *out_keys,
               __global long *out_index, uint want, ulong ibase)
{
    __local tile_locals L;
    const uint lid = get_local_id(0);
    const ulong g = get_group_id(0), row = g / parts, part = g % parts;
    const ulong first = part * plen;
    const ulong len = first >= cols ? 0 : (cols - first < plen ? cols - first : plen);
    const ulong rstart = in_off + row * ld, start = rstart + first;
    const ulong c0 = row * (ulong)cap;
    __global uint *st = state + row * SF_W;
#if KEY_BITS == 64
    const okey_t tu = ((ulong)st[SF_THI] << 32) | st[SF_TLO];
#else
    const okey_t tu = st[SF_TLO];
#endif
    const uint tp = st[SF_TPOS];
    if (lid == 0)
        L.cnt = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    /* vectors where the part starts aligned, then the rest element by element */
    const ulong nv = start % SF_V == 0 ? len / SF_V : 0;
    __global const sf_vec_t *pv = (__global const sf_vec_t *)(in + start);
    ulong b0 = 0;
#if SF_FULL
    /* whole rounds first: no test, 32-bit offsets and positions (a row has
     * fewer than 2^31 elements), so that a work-item's loads are one address
     * and constant offsets */
    {
        const uint nfull = (uint)(nv / (WG * SF_UNR)) * (WG * SF_UNR), pf = (uint)first;
        __global const sf_vec_t *pl = pv + lid;
        for (uint b = 0; b < nfull; b += WG * SF_UNR) {
            sf_vec_t x[SF_UNR];
#pragma unroll
            for (uint q = 0; q < SF_UNR; q++)
                x[q] = pl[b + q * WG];
#pragma unroll
            for (uint q = 0; q < SF_UNR; q++) {
                const uint p0 = pf + (b + q * WG + lid) * SF_V;
#define SF_LANE(c, i) SF_KEEP(x[q].c, p0 + (i));
                SF_LANES(SF_LANE)
#undef SF_LANE
            }
        }
        b0 = nfull;
    }
#endif
    for (ulong b = b0; b < nv; b += (ulong)WG * SF_UNR) {
        sf_vec_t x[SF_UNR];
#pragma unroll
        for (uint q = 0; q < SF_UNR; q++) {
            const ulong v = b + q * WG + lid;
            if (v < nv)
                x[q] = pv[v];
        }
#pragma unroll
        for (uint q = 0; q < SF_UNR; q++) {
            const ulong v = b + q * WG + lid;
            if (v < nv) {
                const ulong p0 = first + v * SF_V;
#define SF_LANE(c, i) SF_KEEP(x[q].c, p0 + (i));
                SF_LANES(SF_LANE)
#undef SF_LANE
            }
        }
    }
    for (ulong j = nv * SF_V + lid; j < len; j += WG)
        SF_KEEP(in[start + j], first + j);
    /* the segment to the row's candidates */
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint n = L.cnt < MCAP ? L.cnt : MCAP;
    if (lid == 0)
        L.sel[0] = n ? atomic_add(&st[SF_COUNT], n) : 0u;
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint at = L.sel[0];
    for (uint i = lid; i < n; i += WG)
        if (at + i < cap) {
            cand_u[c0 + at + i] = L.cu[i];
            cand_i[c0 + at + i] = L.ci[i];
        }
#if !SF_APART
    /* the candidates reach the device before the ticket; the last group of
     * the row finishes it */
    mem_fence(CLK_GLOBAL_MEM_FENCE);
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    if (lid == 0) {
        uint last = atomic_inc(&st[SF_TICKET]) == parts - 1u;
        L.sel[1] = last;
        L.sel[2] = last ? atomic_add(&st[SF_COUNT], 0u) : 0u;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint last = L.sel[1], total = L.sel[2];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (last) {
        mem_fence(CLK_GLOBAL_MEM_FENCE);
        sf_finish(in, rstart, row, cols, k, smallest, cap, st, total, cand_u, cand_i,
                  out_keys, out_index, want, ibase, &L);
    }
#endif
}

#if SF_APART
/* group r finishes row r (the filter's last group does it unless SF_APART) */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
rows_sf_finish(__global const key_t *in, ulong in_off, ulong ld, ulong cols, uint k,
               uint smallest, uint cap, __global uint *state, __global const okey_t *cand_u,
               __global const uint *cand_i, __global key_t *out_keys,
               __global long *out_index, uint want, ulong ibase)
{
    __local tile_locals L;
    const ulong row = get_group_id(0);
    __global uint *st = state + row * SF_W;
    sf_finish(in, in_off + row * ld, row, cols, k, smallest, cap, st, st[SF_COUNT], cand_u,
              cand_i, out_keys, out_index, want, ibase, &L);
}
#endif
