/* bitonic.cl - bitonic top-k in local memory (Shanbhag, Pirk, Madden, SIGMOD'18).
 *
 * Every item is an (order key, 32-bit index) pair, so ties are exact: a pair
 * comes first when its key is larger, or keys are equal and its index smaller.
 * Tails are padded with the sentinel (key 0, index SENTINEL_IDX), which no real
 * element ever follows.
 *
 * A work-group takes a tile of TILE pairs and reduces it to the best K, sorted:
 *   local sort  -> runs of K, alternating ascending / descending
 *   merge       -> keep the better of (run 2j)[i] and (run 2j+1)[i]: half the
 *                  pairs, runs of K that are bitonic and hold the best K of both
 *   rebuild     -> sort each bitonic run again (log K steps), alternating
 * until K remain.  Group g writes its K ascending when g is even and descending
 * when odd, so the next level's tiles already hold alternating sorted runs and
 * start with a merge.  The last level (one group) writes the final k in output
 * order: keys gathered from the original input by index, and int64 positions.
 *
 * -D options (defaults below): KEY_BITS, KEY_KIND (common.cl), TILE (pairs per
 * group, a power of two), WG (work-items per group, a power of two <= TILE/2).
 * K, the direction and the sizes are run-time arguments. */
#ifndef CLTOPK_COMMON_CL
#include "common.cl"
#endif

#ifndef TILE
#define TILE 4096
#endif
#ifndef WG
#define WG 256
#endif
#define PER (TILE / 2 / WG) /* pairs of a merge per work-item */

#if (TILE & (TILE - 1)) || (WG & (WG - 1)) || WG > TILE / 2
#error "TILE and WG must be powers of two with WG <= TILE/2"
#endif

/* want bits of the final write */
#define WANT_KEYS 1u
#define WANT_INDEX 2u

/* order pair a before pair b when asc (the worse first), else the other way */
inline void cas(__local okey_t *su, __local uint *si, uint a, uint b, int asc)
{
    okey_t ua = su[a], ub = su[b];
    uint ia = si[a], ib = si[b];
    int swap = asc ? pair_better(ua, ia, ub, ib) : pair_better(ub, ib, ua, ia);
    if (swap) {
        su[a] = ub;
        su[b] = ua;
        si[a] = ib;
        si[b] = ia;
    }
}

/* one bitonic step over the first `pairs` compare-exchanges: stride inc, and
 * blocks of dir items alternate direction (block 0 ascending) */
inline void step(__local okey_t *su, __local uint *si, uint pairs, uint inc, uint dir, uint lid)
{
    for (uint p = lid; p < pairs; p += WG) {
        uint i = (p << 1) - (p & (inc - 1));
        cas(su, si, i, i + inc, (dir & i) == 0);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
}

/* sz pairs holding alternating sorted runs of k -> sz/2 pairs of bitonic runs */
inline void merge(__local okey_t *su, __local uint *si, uint sz, uint k, uint lid)
{
    okey_t ru[PER];
    uint ri[PER];
    uint hn = sz >> 1;
    for (uint j = 0; j < PER; j++) {
        uint p = lid + j * WG;
        if (p < hn) {
            uint i = (p << 1) - (p & (k - 1));
            okey_t ua = su[i], ub = su[i + k];
            uint ia = si[i], ib = si[i + k];
            if (pair_better(ub, ib, ua, ia)) {
                ua = ub;
                ia = ib;
            }
            ru[j] = ua;
            ri[j] = ia;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint j = 0; j < PER; j++) {
        uint p = lid + j * WG;
        if (p < hn) {
            su[p] = ru[j];
            si[p] = ri[j];
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
}

/* TILE pairs of alternating sorted runs of k -> the best k, ascending, at 0 */
inline void reduce_tile(__local okey_t *su, __local uint *si, uint k, uint lid)
{
    for (uint sz = TILE; sz > k; sz >>= 1) {
        merge(su, si, sz, k, lid);
        for (uint inc = k >> 1; inc > 0; inc >>= 1)
            step(su, si, sz >> 2, inc, k, lid);
    }
}

/* write the group's k: candidates for the next level, or the final answer */
inline void emit(__local okey_t *su, __local uint *si, uint k, uint lid, size_t g,
                 __global okey_t *cu, __global uint *ci, uint final_k, uint want,
                 __global const okey_t *orig, ulong orig_off, __global okey_t *out_keys,
                 __global long *out_index, ulong index_base)
{
    if (final_k) {
        for (uint j = lid; j < final_k; j += WG) {
            uint idx = si[k - 1 - j];
            if (want & WANT_KEYS)
                out_keys[j] = orig[orig_off + idx];
            if (want & WANT_INDEX)
                out_index[j] = (long)(index_base + idx);
        }
        return;
    }
    size_t base = g * (size_t)k;
    int reverse = (int)(g & 1);
    for (uint j = lid; j < k; j += WG) {
        uint s = reverse ? k - 1 - j : j;
        cu[base + j] = su[s];
        ci[base + j] = si[s];
    }
}

/* Level 0: raw elements in[off .. off+n) -> one sorted run of k per group.
 * final_k != 0 (one group only): write the answer instead. */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void bitonic_first(__global const okey_t *in, ulong off, uint n, uint k, uint smallest,
                   __global okey_t *cu, __global uint *ci, uint final_k, uint want,
                   __global okey_t *out_keys, __global long *out_index, ulong index_base)
{
    __local okey_t su[TILE];
    __local uint si[TILE];
    uint lid = get_local_id(0);
    size_t g = get_group_id(0);
    size_t base = g * (size_t)TILE;
    for (uint j = lid; j < TILE; j += WG) {
        size_t pos = base + j;
        if (pos < n) {
            su[j] = order_key(in[off + pos], smallest);
            si[j] = (uint)pos;
        } else {
            su[j] = 0;
            si[j] = SENTINEL_IDX;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint len = 1; len < k; len <<= 1)
        for (uint inc = len; inc > 0; inc >>= 1)
            step(su, si, TILE / 2, inc, len << 1, lid);
    reduce_tile(su, si, k, lid);
    emit(su, si, k, lid, g, cu, ci, final_k, want, in, off, out_keys, out_index, index_base);
}

/* Level >= 1: m candidate pairs (runs of k, alternating) -> one run per group. */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void bitonic_next(__global const okey_t *su_in, __global const uint *si_in, uint m, uint k,
                  __global okey_t *cu, __global uint *ci, uint final_k, uint want,
                  __global const okey_t *orig, ulong orig_off, __global okey_t *out_keys,
                  __global long *out_index, ulong index_base)
{
    __local okey_t su[TILE];
    __local uint si[TILE];
    uint lid = get_local_id(0);
    size_t g = get_group_id(0);
    size_t base = g * (size_t)TILE;
    for (uint j = lid; j < TILE; j += WG) {
        size_t pos = base + j;
        if (pos < m) {
            su[j] = su_in[pos];
            si[j] = si_in[pos];
        } else {
            su[j] = 0;
            si[j] = SENTINEL_IDX;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    reduce_tile(su, si, k, lid);
    emit(su, si, k, lid, g, cu, ci, final_k, want, orig, orig_off, out_keys, out_index,
         index_base);
}
