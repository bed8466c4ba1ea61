/* index.cl - the early-stopping top-k index on the device (issue 15; seed 002's
 * threshold algorithm over ordered blocks with threshold tuples).
 *
 * The layout is lib/internal.h's cltopk_ix_layout: block g's attribute a at
 * data[(g * d + a) * B + slot], tuple numbers in ids (IX_PAD: padding), the
 * threshold tuple of block g at thr[g * d], partition i = blocks pstart[i] ..
 * pstart[i + 1] - 1.  A tuple is ranked by its key: the order key of its
 * score (common.cl, float32, largest first) above its complemented number, so
 * that a larger key is better, keys are distinct, and 0 is below all.
 *
 * score = acc, acc = fma(w[j], a[attr[j]], acc) from 0.0f for j = 0 .. m-1:
 * OpenCL's fma rounds once (IEEE 754), as C's fmaf, so every device gives the
 * CPU's bits; the threshold's score is computed by the same function.
 *
 * A work-group keeps its best K keys in local memory, S[0 .. K) sorted
 * descending, and appends the keys of a block that beat its K-th (all of them
 * while it holds fewer than K) after them; when the room (SN - K) could
 * overflow, and after each block, a bitonic sort of all SN slots (empty slots
 * 0) puts the best K first.
 *   index_scan   a work-group a partition, from its saved position for at most
 *                `limit` blocks, stopping when the bound (the best K-th score
 *                of any partition so far, its own included) is strictly above
 *                the threshold score of the block just read (which is neither
 *                NaN nor +inf): see cpu/indexcpu.c for why this is exact.  The
 *                list and position are saved for the next launch.
 *   index_full   work-groups each read a contiguous share of a list of blocks
 *                with no threshold (full evaluation), each writing its K best.
 *   index_merge  one work-group: the K best of all the lists, written as score
 *                bits (a zero +0.0, a NaN 0x7FC00000) and tuple numbers.
 *
 * Options (defaults let the file compile alone): WG work-items a group, SN
 * local slots (a power of two >= K + WG, and >= 2 K).  Needs 64-bit integers. */
#pragma OPENCL FP_CONTRACT OFF

#ifndef WG
#define WG 64
#endif
#ifndef SN
#define SN 512
#endif

#define IX_PAD 0xFFFFFFFFu

inline ulong ix_key(float s, uint id)
{
    return ((ulong)order_key(as_uint(s), 0u) << 32) | (ulong)(~id);
}

/* the score of the tuple whose attribute a is at base[a * stride] */
inline float ix_score(__global const float *base, ulong stride, __global const uint *attr,
                      __global const float *w, uint m)
{
    float acc = 0.0f;
    for (uint j = 0; j < m; j++)
        acc = fma(w[j], base[attr[j] * stride], acc);
    return acc;
}

/* S[0 .. SN) sorted descending (bitonic); ends with a barrier */
inline void ix_sort(__local ulong *S, uint lid)
{
    for (uint size = 2; size <= SN; size <<= 1)
        for (uint j = size >> 1; j > 0; j >>= 1) {
            barrier(CLK_LOCAL_MEM_FENCE);
            for (uint c = lid; c < SN / 2; c += WG) {
                uint i = lower_of(c, j), p = i + j;
                ulong a = S[i], b = S[p];
                int desc = (i & size) == 0;
                if ((a < b) == desc) {
                    S[i] = b;
                    S[p] = a;
                }
            }
        }
    barrier(CLK_LOCAL_MEM_FENCE);
}

/* the candidates join the list: meta[0] keys in the list, meta[1] candidates
 * at S[K ..]; the best K first, the rest emptied; returns the new K-th (0
 * while fewer than K) */
inline ulong ix_merge(__local ulong *S, __local uint *meta, uint K, uint lid)
{
    ix_sort(S, lid);
    uint cnt = meta[0] + meta[1];
    for (uint x = K + lid; x < SN; x += WG)
        S[x] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
        meta[0] = min(cnt, K);
        meta[1] = 0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    return meta[0] == K ? S[K - 1] : 0;
}

/* an empty list (no keys, no candidates); ends with a barrier */
inline void ix_list_empty(__local ulong *S, __local uint *meta, uint lid)
{
    for (uint x = lid; x < SN; x += WG)
        S[x] = 0;
    if (lid == 0) {
        meta[0] = 0;
        meta[1] = 0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
}

/* one round of at most WG keys offered to the list: room is made first (a
 * merge when the candidates could overflow), then each work-item's key (0:
 * none) joins the candidates if it beats the K-th and floor; returns the
 * K-th.  ix_flush ends the rounds: the candidates merged */
inline ulong ix_offer(__local ulong *S, __local uint *meta, uint K, uint lid, ulong kth,
                      ulong key, ulong floor)
{
    barrier(CLK_LOCAL_MEM_FENCE);
    uint nc = meta[1];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (nc + WG > SN - K)
        kth = ix_merge(S, meta, K, lid);
    if (key > kth && key > floor)
        S[K + atomic_inc(&meta[1])] = key;
    return kth;
}

inline ulong ix_flush(__local ulong *S, __local uint *meta, uint K, uint lid, ulong kth)
{
    barrier(CLK_LOCAL_MEM_FENCE);
    if (meta[1] > 0)
        kth = ix_merge(S, meta, K, lid);
    return kth;
}

/* read block g into the list (keys above bfloor only); returns the K-th
 * after it */
inline ulong ix_block(__global const float *data, __global const uint *ids, ulong g, uint d,
                      uint B, __global const uint *attr, __global const float *w, uint m,
                      uint K, __local ulong *S, __local uint *meta, ulong kth, ulong bfloor,
                      uint lid)
{
    for (uint base = 0; base < B; base += WG) {
        uint s = base + lid;
        uint id = s < B ? ids[g * B + s] : IX_PAD;
        ulong key = id != IX_PAD
                        ? ix_key(ix_score(data + g * d * B + s, (ulong)B, attr, w, m), id)
                        : 0;
        kth = ix_offer(S, meta, K, lid, kth, key, bfloor);
    }
    return ix_flush(S, meta, K, lid, kth);
}

/* state: 5 uints a partition: blocks read, keys in its list, stopped, and
 * the bits of the threshold scores after its first and its last block read
 * (for the host's switch rule).
 * bound: the largest order key of a partition's K-th score so far, shared by
 * all work-groups (atomic_max): no tuple scoring below it can be among the K
 * best, so keys at or below bound << 32 are not kept, and a partition stops
 * when its threshold score is strictly below it (its own K-th included) */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
index_scan(__global const float *data, __global const uint *ids, __global const float *thr,
           __global const uint *pstart, __global const uint *attr, __global const float *w,
           uint m, uint d, uint B, uint K, __global ulong *lists, __global uint *state,
           uint limit, __global uint *bound, __global const uint *wmap, uint streamed)
{
    __local ulong S[SN];
    __local uint meta[3];
    const uint i = get_group_id(0), lid = get_local_id(0);
    const uint g0 = pstart[i], nb = pstart[i + 1] - g0;
    uint pos = state[5 * i], stopped = state[5 * i + 2];
    const uint cnt = state[5 * i + 1];
    float tfirst = as_float(state[5 * i + 3]), tnow = as_float(state[5 * i + 4]);
    if (nb == 0) /* an empty partition: an empty list */
        for (uint x = lid; x < K; x += WG)
            lists[(ulong)i * K + x] = 0;
    if (stopped || pos >= nb)
        return;
    for (uint x = lid; x < SN; x += WG)
        S[x] = x < cnt ? lists[(ulong)i * K + x] : 0;
    if (lid == 0) {
        meta[0] = cnt;
        meta[1] = 0;
        meta[2] = atomic_max(bound, 0u);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    ulong kth = cnt == K ? S[K - 1] : 0;
    uint b = meta[2];
    /* streamed: this round's wmap[3 i + 2] blocks of the partition were
     * copied to slots wmap[3 i] .. of the buffers, from its block wmap[3 i +
     * 1] (which is pos) */
    for (uint left = streamed ? min(limit, wmap[3 * i + 2]) : limit; pos < nb && left > 0;
         left--) {
        const ulong g = streamed ? (ulong)wmap[3 * i] + (pos - wmap[3 * i + 1]) : (ulong)g0 + pos;
        kth = ix_block(data, ids, g, d, B, attr, w, m, K, S, meta, kth, (ulong)b << 32, lid);
        pos++;
        /* publish this partition's K-th, read the bound: one value for all */
        if (lid == 0) {
            uint v = kth ? (uint)(kth >> 32) : 0u;
            meta[2] = max(atomic_max(bound, v), v);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        b = meta[2];
        if (pos == nb)
            break;
        const float t = ix_score(thr + g * d, 1, attr, w, m);
        tnow = t;
        if (pos == 1)
            tfirst = t;
        if (b != 0 && !isnan(t) && !(isinf(t) && t > 0) && b > order_key(as_uint(t), 0u)) {
            stopped = 1;
            break;
        }
    }
    for (uint x = lid; x < K; x += WG)
        lists[(ulong)i * K + x] = S[x];
    if (lid == 0) {
        state[5 * i] = pos;
        state[5 * i + 1] = meta[0];
        state[5 * i + 2] = stopped;
        state[5 * i + 3] = as_uint(tfirst);
        state[5 * i + 4] = as_uint(tnow);
    }
}

/* group q reads blocks todo[q * per .. min((q + 1) * per, ntodo)) and writes
 * its K best to lists[(obase + q) * K ..] */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
index_full(__global const float *data, __global const uint *ids, __global const uint *todo,
           uint ntodo, uint per, __global const uint *attr, __global const float *w, uint m,
           uint d, uint B, uint K, __global ulong *lists, uint obase,
           __global const uint *bound, uint resume)
{
    const ulong bfloor = (ulong)bound[0] << 32; /* final: the scans are done */
    __local ulong S[SN];
    __local uint meta[2];
    const uint q = get_group_id(0), lid = get_local_id(0);
    ix_list_empty(S, meta, lid);
    if (resume) {
        /* on from the group's list of the last launch (streamed chunks):
         * its keys first, sorted, empty slots 0 */
        for (uint x = lid; x < K; x += WG) {
            ulong key = lists[(ulong)(obase + q) * K + x];
            S[x] = key;
            if (key != 0)
                atomic_inc(&meta[0]);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    ulong kth = meta[0] == K ? S[K - 1] : 0;
    const uint lo = min(q * per, ntodo), hi = min(lo + per, ntodo);
    for (uint x = lo; x < hi; x++)
        kth = ix_block(data, ids, todo[x], d, B, attr, w, m, K, S, meta, kth, bfloor, lid);
    for (uint x = lid; x < K; x += WG)
        lists[(ulong)(obase + q) * K + x] = S[x];
}

/* the K best keys of cand[first .. ncand) (0: empty) to the outputs */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
index_merge(__global const ulong *cand, ulong first, ulong ncand, uint K, __global uint *out_scores,
            __global long *out_index)
{
    __local ulong S[SN];
    __local uint meta[2];
    const uint lid = get_local_id(0);
    ix_list_empty(S, meta, lid);
    ulong kth = 0;
    for (ulong base = first; base < ncand; base += WG) {
        ulong x = base + lid;
        kth = ix_offer(S, meta, K, lid, kth, x < ncand ? cand[x] : 0, 0);
    }
    ix_flush(S, meta, K, lid, kth);
    for (uint x = lid; x < K; x += WG) {
        ulong key = S[x];
        uint u = (uint)(key >> 32);
        out_scores[x] = u == 0xFFFFFFFFu ? 0x7FC00000u : (u & 0x80000000u) ? u ^ 0x80000000u : ~u;
        out_index[x] = (long)(~(uint)key);
    }
}
