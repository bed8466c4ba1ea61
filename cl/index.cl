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
 * overflow, and after each block, a merge puts the best K first: a bitonic
 * sort of all SN slots (empty slots 0), or in index_scan and the decision's
 * last merge, where list and candidates are at most 2 WG keys, each key
 * written at its place (ix_merge's ranks).  index_merge takes sorted lists of
 * K keys (32 <= K <= WG) one at a time by binary searches (ix_merge_sorted).
 *   index_scan   a work-group a partition, from its saved position for at most
 *                `limit` blocks, stopping when the bound (the best K-th score
 *                of any partition so far, its own included) is strictly above
 *                the threshold score of the block just read (which is neither
 *                NaN nor +inf): see cpu/indexcpu.c for why this is exact.  The
 *                list and position are saved for the next launch; a launch
 *                after the phase left 0 does nothing.  With nostop (a plain
 *                full evaluation's first round) it never stops: that round
 *                only finds the bound.
 *   index_decide one work-group after each round: finished, read on, or
 *                switch to full evaluation (the block list for index_full), so
 *                that the host enqueues every round without waiting.
 *   index_full   work-groups each read a contiguous share of a list of blocks
 *                with no threshold (full evaluation), each writing its K best
 *                (CLTOPK_INDEX=full=old, and the fallback of index_filter).
 *   index_filter the full evaluation at read speed: every tuple of the list's
 *                blocks scoring at or above the bound appended to a buffer of
 *                candidates (one read of the m columns, no sort); index_merge
 *                then takes their K best, or, where they overflowed the
 *                buffer, a gated index_full launch reads the blocks again
 *                (decided by the kernels: no host read in between).
 *   index_merge  work-groups each the K best of a few lists (raw keys), then
 *                one work-group those lists' K best; the host decodes them.
 *                Before index_filter, the partitions' lists merged by groups
 *                whose K-th scores raise the bound.
 *   index_direct a query whose k tuples the host sampled (lib/index.c's
 *                foresee; the bound: their least score): a work-group a
 *                partition, the blocks its thresholds do not rule out,
 *                every tuple at or above the bound a candidate (one launch,
 *                no rounds); its last group or index_merge then.
 *   index_ids    the slots of cl/query.cl's answer over the layout (the full
 *                evaluation by the query engine) turned into tuple numbers.
 *
 * Options (defaults let the file compile alone): WG work-items a group, SN
 * local slots (a power of two >= K + WG, and >= 2 K), TPI slots a work-item
 * of index_filter scores at once (at most 32), IUA attributes whose loads it
 * issues together (1 .. 8, default 2).  Needs 64-bit integers. */
#ifndef CLTOPK_COMMON_CL
#include "common.cl"
#endif
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

/* ix_score with the attributes' numbers and weights in local memory */
inline float ix_score_local(__global const float *base, ulong stride, __local const uint *la,
                            __local const float *lw, uint m)
{
    float acc = 0.0f;
    for (uint j = 0; j < m; j++)
        acc = fma(lw[j], base[la[j] * stride], acc);
    return acc;
}

/* index_scan's stop rule: a partition stops after a block whose threshold
 * score t (the bound of every later block) is strictly below the bound b
 * (an order key; 0: none yet), t being neither NaN nor +inf */
inline int ix_stops(float t, uint b)
{
    return b != 0 && !isnan(t) && !(isinf(t) && t > 0) && b > order_key(as_uint(t), 0u);
}

/* the sort's slots for n keys at the start of S: the power of two at or
 * above n, at least 2, at most SN */
inline uint ix_sort_slots(uint n)
{
    uint n2 = 2;
    while (n2 < n && n2 < SN)
        n2 <<= 1;
    return n2;
}

/* S[0 .. n) sorted descending (bitonic; n a power of two, 2 .. SN, the
 * same for the whole group); ends with a barrier */
inline void ix_sort(__local ulong *S, uint lid, uint n)
{
    for (uint size = 2; size <= n; size <<= 1)
        for (uint j = size >> 1; j > 0; j >>= 1) {
            barrier(CLK_LOCAL_MEM_FENCE);
            for (uint c = lid; c < n / 2; c += WG) {
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

/* the keys of A[0 .. n) (descending) above u (ge: at or above) */
inline uint ix_count_above(__local const ulong *A, uint n, ulong u, int ge)
{
    uint lo = 0, hi = n;
    while (lo < hi) {
        const uint mid = (lo + hi) >> 1;
        if (A[mid] > u || (ge && A[mid] == u))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* the place of item j of the merge (below): the list's keys S[0 .. c0)
 * first (sorted, descending), then the candidates S[K .. K + nc); its key in
 * *v, and the items that go before it: the list's and the candidates' keys
 * above it, and those equal to it that come first (the list's, then the
 * candidates' in their order), so that the places are a permutation */
inline uint ix_place(__local const ulong *S, uint K, uint c0, uint nc, uint j, ulong *v)
{
    const int old = j < c0;
    const ulong u = S[min(old ? j : K + j - c0, (uint)SN - 1)];
    uint above = 0;
    const uint jc = old ? nc : j - c0;
    for (uint c = 0; c < nc; c++) {
        const ulong x = S[K + c];
        above += x > u || (x == u && c < jc);
    }
    above += old ? j : ix_count_above(S, c0, u, 1);
    *v = u;
    return above;
}

/* the candidates join the list: meta[0] keys in the list, meta[1] candidates
 * at S[K ..]; the best K first, the rest emptied; returns the new K-th (0
 * while fewer than K).  Called right after a barrier.  ranks (a constant at
 * each call): where list and candidates are at most 2 WG keys, each key is
 * written at its place (ix_place: a scan of the candidates, a binary search
 * of the list) with 3 barriers; else, and without ranks, a sort of the
 * slots that hold them (up to S[K + meta[1]], a power of two: 45 barriers
 * for all 512).  (Each inlined copy of the ranks' way cost POCL some 10-20
 * s of compiling: index_scan alone has it, at one call.) */
inline ulong ix_merge(__local ulong *S, __local uint *meta, uint K, uint lid, const int ranks)
{
    const uint c0 = meta[0], nc = meta[1];
    uint cnt = c0 + nc;
    /* (no barrier in the ranks' way but the one both ways share, and no
     * if-else with barriers in both arms: POCL 5.0's compiler failed an
     * assertion on that) */
    const int rk = ranks && cnt <= 2 * WG;
    /* every work-item places two items, with no branch (a place chosen by a
     * branch and live across the barrier is what POCL 5.0 and 6.0 can take
     * for uniform: README, troubleshooting); without ranks the places cost
     * nothing (no key to scan) and are not used */
    const uint last = cnt ? cnt - 1 : 0, rc0 = rk ? c0 : 0, rnc = rk ? nc : 0;
    ulong v0, v1;
    const uint q0 = ix_place(S, K, rc0, rnc, min(lid, last), &v0);
    const uint q1 = ix_place(S, K, rc0, rnc, min(lid + WG, last), &v1);
    const uint p0 = rk && lid < cnt ? q0 : SN, p1 = rk && lid + WG < cnt ? q1 : SN;
    /* the sort: the slots up to the last candidate's, rounded up to a power
     * of two (the slots after them are empty: 0, below every key), so that
     * a few candidates are not a sort of all SN slots */
    if (!rk)
        ix_sort(S, lid, ix_sort_slots(K + nc));
    barrier(CLK_LOCAL_MEM_FENCE);
    if (p0 < K)
        S[p0] = v0;
    if (p1 < K)
        S[p1] = v1;
    /* the candidates' slots emptied (after the ranks, the list's slots from
     * min(cnt, K) to K held no key, and none was written there) */
    for (uint x = K + lid; x < (rk ? K + nc : SN); x += WG)
        S[x] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
        meta[0] = min(cnt, K);
        meta[1] = 0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    return meta[0] == K ? S[K - 1] : 0;
}

/* a sorted list of meta[1] keys at S[K .. 2K) (descending, empty slots 0
 * after them; K <= WG) joins the list S[0 .. K): each key's place by a
 * binary search of the other list (the list's keys before equal ones), 3
 * barriers; returns the new K-th (0 while fewer than K).  Called right after
 * a barrier */
inline ulong ix_merge_sorted(__local ulong *S, __local uint *meta, uint K, uint lid)
{
    const uint c0 = meta[0], nz = meta[1];
    /* places chosen by selects, not branches, as in ix_merge (S[K + lid]
     * lies inside the slots: SN >= K + WG) */
    const ulong u0 = S[lid], u1 = S[K + lid];
    const uint q0 = lid + ix_count_above(S + K, nz, u0, 0);
    const uint q1 = lid + ix_count_above(S, c0, u1, 1);
    const uint p0 = lid < c0 ? q0 : SN, p1 = lid < nz ? q1 : SN;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (p0 < K)
        S[p0] = u0;
    if (p1 < K)
        S[p1] = u1;
    if (lid < K)
        S[K + lid] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
        meta[0] = min(c0 + nz, K);
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
        kth = ix_merge(S, meta, K, lid, 0);
    if (key > kth && key > floor)
        S[K + atomic_inc(&meta[1])] = key;
    return kth;
}

inline ulong ix_flush(__local ulong *S, __local uint *meta, uint K, uint lid, ulong kth,
                      const int ranks)
{
    barrier(CLK_LOCAL_MEM_FENCE);
    if (meta[1] > 0)
        kth = ix_merge(S, meta, K, lid, ranks);
    return kth;
}

/* read block g into the list (keys above bfloor only); returns the K-th
 * after it.  ix_offer's rounds and ix_flush in one loop with one call of
 * ix_merge (ranks: as there, a constant) */
inline ulong ix_block(__global const float *data, __global const uint *ids, ulong g, uint d,
                      uint B, __global const uint *attr, __global const float *w, uint m,
                      uint K, __local ulong *S, __local uint *meta, ulong kth, ulong bfloor,
                      uint lid, const int ranks)
{
    /* (a counted loop with no exit in its middle: POCL 5.0's compiler
     * failed an assertion on a loop of barriers left by a break) */
    const uint rounds = (B + WG - 1) / WG;
    for (uint r = 0; r <= rounds; r++) {
        const int end = r == rounds;
        barrier(CLK_LOCAL_MEM_FENCE);
        const uint nc = meta[1];
        barrier(CLK_LOCAL_MEM_FENCE);
        if (end ? nc > 0 : nc + WG > SN - K)
            kth = ix_merge(S, meta, K, lid, ranks);
        const uint s = r * WG + lid;
        const uint id = !end && s < B ? ids[g * B + s] : IX_PAD;
        const ulong key =
            id != IX_PAD ? ix_key(ix_score(data + g * d * B + s, (ulong)B, attr, w, m), id) : 0;
        if (key > kth && key > bfloor)
            S[K + atomic_inc(&meta[1])] = key;
    }
    return kth;
}

/* The query's buffer qb (uints; lib/indexdev.c fills and reads it):
 *   qb[0 .. 64)            the attribute numbers attr[0 .. m)
 *   qb[64 .. 128)          the weights w[0 .. m) (float bits)
 *   qb[128 .. 132)         ctl: the phase (0 reading, 1 every partition
 *                          finished, 2 switched to full evaluation), the
 *                          blocks the switch left (in todo), the bound, the
 *                          candidates index_filter found (written or not)
 *   qb[132 + 7 i ..]       partition i's state: blocks read, keys in its
 *                          list, stopped, the bits of the threshold scores
 *                          after its first and its last block read, and its
 *                          position and last threshold score at the previous
 *                          decision (0: none; index_decide's switch rule)
 *   then, from an even index, the K best keys (ulong: index_merge's output)
 * bound: the largest order key of a partition's K-th score so far, shared by
 * all work-groups (atomic_max): no tuple scoring below it can be among the K
 * best, so keys at or below bound << 32 are not kept, and a partition stops
 * when its threshold score is strictly below it (its own K-th included) */
#define IXQ_W 64
#define IXQ_CTL 128
#define IXQ_STATE 132
#define IX_ST 7

/* the float score whose order key is u (u != 0) */
inline float ix_key_score(uint u)
{
    return as_float((u & 0x80000000u) ? u ^ 0x80000000u : ~u);
}

/* index_scan: a work-group a partition, nothing once the phase is not 0 */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
index_scan(__global const float *data, __global const uint *ids, __global const float *thr,
           __global const uint *pstart, __global uint *qb, uint m, uint d, uint B, uint K,
           __global ulong *lists, uint limit, __global const uint *wmap, uint streamed,
           uint nostop)
{
    __local ulong S[SN];
    __local uint meta[3];
    const uint i = get_group_id(0), lid = get_local_id(0);
    __global const uint *attr = qb;
    __global const float *w = (__global const float *)(qb + IXQ_W);
    __global uint *ctl = qb + IXQ_CTL, *bound = ctl + 2, *state = qb + IXQ_STATE + IX_ST * i;
    const uint g0 = pstart[i], nb = pstart[i + 1] - g0;
    if (ctl[0] != 0)
        return;
    uint pos = state[0], stopped = state[2];
    const uint cnt = state[1];
    float tfirst = as_float(state[3]), tnow = as_float(state[4]);
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
        kth = ix_block(data, ids, g, d, B, attr, w, m, K, S, meta, kth, (ulong)b << 32, lid, 1);
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
        if (!nostop && ix_stops(t, b)) {
            stopped = 1;
            break;
        }
    }
    for (uint x = lid; x < K; x += WG)
        lists[(ulong)i * K + x] = S[x];
    if (lid == 0) {
        state[0] = pos;
        state[1] = meta[0];
        state[2] = stopped;
        state[3] = as_uint(tfirst);
        state[4] = as_uint(tnow);
    }
}

/* The blocks a switch left, in index_decide's map: todo[0] = P, todo[1 + i]
 * the blocks left before partition i (todo[1 + P]: all of them), todo[P + 2 +
 * i] partition i's first block left.  The x-th block left (x below the
 * total): its partition found by a binary search once (ix_todo_part), then x
 * and the partition stepped together (ix_todo_block, x never decreasing) */
inline uint ix_todo_part(__global const uint *todo, uint x)
{
    uint lo = 0, hi = todo[0]; /* todo[1 + lo] <= x < todo[1 + hi] */
    while (hi - lo > 1) {
        const uint mid = (lo + hi) >> 1;
        if (todo[1 + mid] <= x)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

inline uint ix_todo_block(__global const uint *todo, uint *i, uint x)
{
    while (todo[2 + *i] <= x)
        (*i)++;
    return todo[todo[0] + 2 + *i] + (x - todo[1 + *i]);
}

#define IXD_UF 8 /* keys a work-item of index_decide's merge loads at once */
#ifndef IXD_ROOM
#define IXD_ROOM(R) (R) /* the candidates' room of that merge's batches (tests: less) */
#endif

/* index_decide: one work-group after each round, while the phase is 0: every
 * partition finished (stopped or read to its end): phase 1; else the switch
 * rule of cpu/indexcpu.c (cltopk_ix_decide, here in float: the rule only
 * chooses the path, never the answer) with sw (CLTOPK_INDEX=switch: 0
 * never, 1 the rule, 2 always) and ratio; a switch (phase 2) maps the
 * blocks not read yet in todo (ix_todo_part), partition after partition, and
 * puts their count in ctl[1].  merge (not 0): where every partition finished,
 * the partitions' lists (P of K keys) merged into the answer */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
index_decide(__global const uint *pstart, __global uint *qb, uint P, uint sw, float ratio,
             __global uint *todo, __global const ulong *lists, uint K, uint merge, uint ko2)
{
    __local float needl[WG];
    __local uint leftl[WG], openl[WG];
    __local ulong S[SN];
    __local uint meta[2];
    __global uint *ctl = qb + IXQ_CTL, *state = qb + IXQ_STATE;
    const uint lid = get_local_id(0);
    if (ctl[0] != 0)
        return;
    const uint bound = ctl[2];
    const float bs = bound ? ix_key_score(bound) : 0.0f;
    const uint per = (P + WG - 1) / WG, lo = min(lid * per, P), hi = min(lo + per, P);
    float need = 0.0f;
    uint left = 0, open = 0;
    for (uint i = lo; i < hi; i++) {
        __global uint *s = state + IX_ST * i;
        const uint nb = pstart[i + 1] - pstart[i], pos = s[0];
        if (s[2] || pos >= nb)
            continue;
        const uint rest = nb - pos, ppos = s[5], p0 = ppos ? ppos : 1;
        const float t0 = as_float(ppos ? s[6] : s[3]), tn = as_float(s[4]);
        float est = (float)rest;
        if (bound && pos > p0 && isfinite(t0) && isfinite(tn) && isfinite(bs) && t0 > tn) {
            const float more = (tn - bs) / ((t0 - tn) / (float)(pos - p0));
            est = more < 1.0f ? 1.0f : more < (float)rest ? more : (float)rest;
        }
        open++;
        left += rest;
        need += est;
        s[5] = pos;
        s[6] = as_uint(tn);
    }
    needl[lid] = need;
    leftl[lid] = left;
    openl[lid] = open;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
        /* the sums, and leftl made the work-items' first slots in todo */
        float tneed = 0.0f;
        uint tleft = 0, topen = 0;
        for (uint x = 0; x < WG; x++) {
            const uint l = leftl[x];
            tneed += needl[x];
            topen += openl[x];
            leftl[x] = tleft;
            tleft += l;
        }
        const uint phase = topen == 0 ? 1u
                           : sw == 0  ? 0u
                           : sw == 2  ? 2u
                           : tneed > ratio * (float)tleft ? 2u : 0u;
        openl[0] = phase;
        if (phase == 2)
            ctl[1] = tleft;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint phase = openl[0];
    if (phase == 2) {
        /* the map of the blocks left (ix_todo_part): P + 1 prefixes and P
         * first blocks, not a word a block (one group writing a list of
         * 2^18 blocks took 270 us on the H200) */
        uint at = leftl[lid];
        for (uint i = lo; i < hi; i++) {
            __global const uint *s = state + IX_ST * i;
            const uint g0 = pstart[i], nb = pstart[i + 1] - g0, pos = s[0];
            todo[1 + i] = at;
            todo[P + 2 + i] = g0 + pos;
            if (!s[2] && pos < nb)
                at += nb - pos;
        }
        if (lid == 0) {
            todo[0] = P;
            todo[1 + P] = ctl[1];
        }
    }
    if (lid == 0 && phase != 0)
        ctl[0] = phase;
    if (phase == 1 && merge) {
        /* finished, and the partitions' lists are few keys (the host's
         * choice): their K best (above the final bound) into qb after the
         * state, at ulong ko2, where index_merge's last group puts them, so
         * that the query needs no merge launch.  Loads IXD_UF keys a
         * work-item at a time */
        ix_list_empty(S, meta, lid);
        const ulong floor = (ulong)bound << 32, tot = (ulong)P * K;
        ulong kth = 0;
        for (ulong base = 0; base < tot; base += (ulong)WG * IXD_UF) {
            ulong v[IXD_UF];
#pragma unroll
            for (uint u = 0; u < IXD_UF; u++) {
                const ulong x = base + u * WG + lid;
                v[u] = x < tot ? lists[x] : 0;
            }
            /* the batch's keys above the floor and the K-th appended at
             * once (few are: only scores at or above the bound); where they
             * do not fit the room, that append undone and the keys offered a
             * round at a time */
            barrier(CLK_LOCAL_MEM_FENCE);
            const uint n0 = meta[1];
            barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
            for (uint u = 0; u < IXD_UF; u++)
                if (v[u] > floor && v[u] > kth) {
                    const uint q = atomic_inc(&meta[1]);
                    if (q < IXD_ROOM(SN - K))
                        S[K + q] = v[u];
                }
            barrier(CLK_LOCAL_MEM_FENCE);
            if (meta[1] > IXD_ROOM(SN - K)) {
                for (uint x = K + n0 + lid; x < SN; x += WG)
                    S[x] = 0;
                barrier(CLK_LOCAL_MEM_FENCE);
                if (lid == 0)
                    meta[1] = n0;
                for (uint u = 0; u < IXD_UF; u++)
                    kth = ix_offer(S, meta, K, lid, kth, v[u], floor);
            }
        }
        kth = ix_flush(S, meta, K, lid, kth, 1);
        __global ulong *out = (__global ulong *)qb + ko2;
        for (uint x = lid; x < K; x += WG)
            out[x] = S[x];
    }
}

/* index_full: group q reads its share of ntodo blocks (ntodo_arg, or where
 * that is 0xFFFFFFFF the blocks a switch left: ctl[1] in phase 2, else none):
 * the x-th block of the switch's map (ix_todo_part), or x itself where
 * direct; it writes its K best to
 * lists[(obase + q) * K ..], going on from that list where resume.  gate
 * (not 0): the fallback of index_filter, which had room for gate candidates:
 * nothing to do unless more came (ctl[3] > gate) */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
index_full(__global const float *data, __global const uint *ids, __global const uint *todo,
           __global const uint *qb, uint ntodo_arg, uint direct, uint m, uint d, uint B, uint K,
           __global ulong *lists, uint obase, uint resume, uint gate)
{
    __global const uint *attr = qb;
    __global const float *w = (__global const float *)(qb + IXQ_W);
    __global const uint *ctl = qb + IXQ_CTL;
    if (gate && ctl[3] <= gate)
        return;
    const ulong bfloor = (ulong)ctl[2] << 32; /* final: the scans are done */
    const uint ntodo = ntodo_arg != 0xFFFFFFFFu ? ntodo_arg : ctl[0] == 2 ? ctl[1] : 0;
    __local ulong S[SN];
    __local uint meta[2];
    const uint q = get_group_id(0), lid = get_local_id(0), ng = get_num_groups(0);
    const uint per = ntodo / ng + (ntodo % ng != 0);
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
    uint wi = !direct && lo < hi ? ix_todo_part(todo, lo) : 0u;
    for (uint x = lo; x < hi; x++)
        kth = ix_block(data, ids, direct ? x : ix_todo_block(todo, &wi, x), d, B, attr, w, m, K,
                       S, meta, kth, bfloor, lid, 0);
    for (uint x = lid; x < K; x += WG)
        lists[(ulong)(obase + q) * K + x] = S[x];
}

/* index_filter: the full evaluation at the speed of a read.  The blocks of
 * index_full's list (ntodo_arg and direct as there) are cut into tiles of WG
 * TPI slots; a work-item scores TPI slots of a tile at once (WG apart, so
 * that each load is coalesced along a block's slots; the attributes' offsets
 * and weights in local memory, the TPI loads of an attribute issued before
 * their use), reads the tuple number only of a score at or above the bound
 * ctl[2] (keys above bound << 32: the rule of the lists), and the group
 * appends those keys to cand with one atomic a tile (ctl[3] counts them; at
 * most cap are written: more is an overflow, served by index_full's gated
 * launch; else index_merge's fromcap launch takes their K best).  Exact:
 * below the bound k tuples of one partition already lie (index_scan). */
#ifndef TPI
#define TPI 8
#endif
#ifndef IUA
#define IUA 2 /* attributes a work-item of index_filter loads at once */
#endif
#if IUA < 1 || IUA > 8
#error "IUA must be 1 .. 8"
#endif

/* index_filter's tile: the slots whose attributes start at p[t] (attribute a
 * at p[t][a B], the tuple number at ids[slot[t]]; bit t of live: a slot to
 * read) scored, and those at or above the bound appended to cand.  The loops
 * over t unrolled, so that p, slot, acc and key stay in registers */
inline void ix_filter_tile(__global const float **p, const uint *slot, uint live,
                           __global const uint *ids, __local const uint *la,
                           __local const float *lw, uint m, uint bound, __global ulong *cand,
                           uint cap, __global uint *count, __local uint *lcnt,
                           __local uint *lbase, uint lid)
{
    float acc[TPI];
#pragma unroll
    for (uint t = 0; t < TPI; t++)
        acc[t] = 0.0f;
    /* IUA attributes' loads issued together (IUA TPI in flight), then their
     * fma in the attributes' order */
    uint j = 0;
    for (; j + IUA <= m; j += IUA) {
        float x[IUA][TPI];
#pragma unroll
        for (uint u = 0; u < IUA; u++) {
            const uint a = la[j + u];
#pragma unroll
            for (uint t = 0; t < TPI; t++)
                x[u][t] = p[t][a];
        }
#pragma unroll
        for (uint u = 0; u < IUA; u++) {
            const float wj = lw[j + u];
#pragma unroll
            for (uint t = 0; t < TPI; t++)
                acc[t] = fma(wj, x[u][t], acc[t]);
        }
    }
    for (; j < m; j++) {
        const uint a = la[j];
        const float wj = lw[j];
#pragma unroll
        for (uint t = 0; t < TPI; t++)
            acc[t] = fma(wj, p[t][a], acc[t]);
    }
    ulong key[TPI];
    uint mine = 0;
#pragma unroll
    for (uint t = 0; t < TPI; t++) {
        key[t] = 0;
        if (((live >> t) & 1) && order_key(as_uint(acc[t]), 0u) >= bound) {
            const uint id = ids[slot[t]];
            if (id != IX_PAD) {
                key[t] = ix_key(acc[t], id);
                mine++;
            }
        }
    }
    const uint at = mine ? atomic_add(lcnt, mine) : 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
        const uint c = *lcnt;
        *lbase = c ? atomic_add(count, c) : 0;
        *lcnt = 0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    uint o = *lbase + at;
#pragma unroll
    for (uint t = 0; t < TPI; t++)
        if (key[t]) {
            if (o < cap)
                cand[o] = key[t];
            o++;
        }
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
index_filter(__global const float *data, __global const uint *ids, __global const uint *todo,
             __global uint *qb, uint ntodo_arg, uint direct, uint m, uint d, uint B,
             __global ulong *cand, uint cap)
{
    __local uint la[IXQ_W];
    __local float lw[IXQ_W];
    __local uint lcnt, lbase;
    __global uint *ctl = qb + IXQ_CTL;
    const uint lid = get_local_id(0);
    const uint ntodo = ntodo_arg != 0xFFFFFFFFu ? ntodo_arg : ctl[0] == 2 ? ctl[1] : 0;
    const uint bound = ctl[2];
    if (ntodo == 0) /* no switch: nothing (the whole group alike) */
        return;
    for (uint j = lid; j < m; j += WG) {
        la[j] = qb[j] * B;
        lw[j] = as_float(qb[IXQ_W + j]);
    }
    if (lid == 0)
        lcnt = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    /* group q reads the tiles of slots lo .. hi of the ntodo B listed (the
     * host keeps that below 2^32); a work-item's slot base + t WG + lid */
    const ulong E = (ulong)ntodo * B, tile = WG * TPI, ntiles = (E + tile - 1) / tile;
    const ulong per = (ntiles + get_num_groups(0) - 1) / get_num_groups(0) * tile;
    const ulong lo = min((ulong)get_group_id(0) * per, E), hi = min(lo + per, E);
    __global const float *p[TPI];
    uint slot[TPI];
    if (B % WG == 0) {
        /* each row of WG slots in one block: its block x and first slot s0
         * the same for the whole group (stepped without a division), the
         * loads at consecutive addresses */
        uint x = (uint)(lo / B), s0 = (uint)(lo - (ulong)x * B);
        uint wi = !direct && lo < hi ? ix_todo_part(todo, x) : 0u;
        for (ulong base = lo; base < hi; base += tile) {
            uint live = 0;
#pragma unroll
            for (uint t = 0; t < TPI; t++) {
                uint g = 0;
                if (base + t * WG < hi) {
                    g = direct ? x : ix_todo_block(todo, &wi, x);
                    live |= (uint)(base + t * WG + lid < hi) << t;
                }
                p[t] = data + (ulong)g * d * B + s0 + lid;
                slot[t] = g * B + s0 + lid;
                s0 += WG;
                if (s0 == B) {
                    s0 = 0;
                    x++;
                }
            }
            ix_filter_tile(p, slot, live, ids, la, lw, m, bound, cand, cap, &ctl[3], &lcnt,
                           &lbase, lid);
        }
    } else {
        /* a work-item's (x, s) stepped by WG, with no division where B >=
         * WG */
        uint x = (uint)((lo + lid) / B), s = (uint)(lo + lid - (ulong)x * B);
        uint wi = !direct && lo + lid < hi ? ix_todo_part(todo, x) : 0u;
        for (ulong base = lo; base < hi; base += tile) {
            uint live = 0;
#pragma unroll
            for (uint t = 0; t < TPI; t++) {
                uint g = 0;
                if (base + t * WG + lid < hi) {
                    g = direct ? x : ix_todo_block(todo, &wi, x);
                    live |= 1u << t;
                }
                p[t] = data + (ulong)g * d * B + (live >> t & 1 ? s : 0);
                slot[t] = g * B + s;
                s += WG;
                if (B >= WG) {
                    if (s >= B) {
                        s -= B;
                        x++;
                    }
                } else {
                    x += s / B;
                    s %= B;
                }
            }
            ix_filter_tile(p, slot, live, ids, la, lw, m, bound, cand, cap, &ctl[3], &lcnt,
                           &lbase, lid);
        }
    }
}

/* index_merge: group q, the K best keys of cand[first + q per .. + per) (at
 * most ncand; 0: empty; but for fromcap, lists of K keys sorted best first,
 * per a multiple of K) above the bound's floor, to out[obase + q K ..]: many
 * groups merge a few lists each, then one group their lists (into qb, after
 * the state: the host reads both at once).  fromcap (not 0): the candidates
 * of index_filter, ctl[3] of them from 0, shared evenly by the groups;
 * nothing to do where they overflowed (more than fromcap: index_full's gated
 * launch wrote the lists).  raise: the group's K-th score raises the bound
 * (atomic_max of its order key: K scanned tuples score at least that much),
 * for index_filter after it (raise bit 0); bit 1: nothing to do where
 * index_direct's last group merged the candidates itself (ctl[0] 3) */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
index_merge(__global const ulong *cand, ulong first, ulong ncand, ulong per, uint K,
            __global uint *qb, __global ulong *out, ulong obase, uint fromcap, uint raise)
{
    __local ulong S[SN];
    __local uint meta[2];
    const uint lid = get_local_id(0), q = get_group_id(0);
    if ((raise & 2u) && qb[IXQ_CTL] == 3u)
        return;
    const ulong floor = (ulong)qb[IXQ_CTL + 2] << 32;
    if (fromcap) {
        const uint c = qb[IXQ_CTL + 3], ng = get_num_groups(0);
        if (c > fromcap)
            return;
        first = 0;
        ncand = c;
        per = (c + ng - 1) / ng;
    }
    const ulong lo = min(first + q * per, ncand), hi = min(lo + per, ncand);
    ix_list_empty(S, meta, lid);
    ulong kth = 0;
    if (!fromcap && K >= 32 && K <= WG) {
        /* lists of K keys, each sorted (their keys at or below the floor
         * emptied: a tail), merged one at a time (some 50 us down to 20 for
         * 16 lists of 256 keys on the H200, where a sort of 4096 slots took
         * them at once) */
        for (ulong base = lo; base < hi; base += K) {
            ulong key = lid < K ? cand[base + lid] : 0;
            key = key > floor ? key : 0;
            if (lid < K)
                S[K + lid] = key;
            if (key != 0)
                atomic_inc(&meta[1]);
            barrier(CLK_LOCAL_MEM_FENCE);
            kth = ix_merge_sorted(S, meta, K, lid);
        }
    } else {
        for (ulong base = lo; base < hi; base += WG) {
            ulong x = base + lid;
            kth = ix_offer(S, meta, K, lid, kth, x < hi ? cand[x] : 0, floor);
        }
        kth = ix_flush(S, meta, K, lid, kth, 0);
    }
    if ((raise & 1u) && lid == 0 && kth != 0)
        atomic_max(&qb[IXQ_CTL + 2], (uint)(kth >> 32));
    for (uint x = lid; x < K; x += WG)
        out[obase + (ulong)q * K + x] = S[x];
}

/* index_direct: a query whose k tuples the host sampled before any round
 * (lib/index.c, ix_foresee: their slots at qb[sko ..]), a work-group a
 * partition: the bound, the least of their scores (k distinct tuples score
 * at least that much, so it is at most the k-th best score), then its
 * blocks 0 .. r - 1, where block j > 0 is read unless index_scan's stop
 * rule (ix_stops) rules it out by the threshold score of block j - 1 (the
 * scores never rise along a partition, so
 * r is one more than the thresholds before the first that stops it), found
 * a chunk of WG thresholds at a time; every tuple of those blocks scoring
 * at or above the bound appended to cand (ctl[3] counts them, at most cap
 * written: more is an overflow, which the host sees in its read and then
 * answers the query by the rounds); the partition's state: r blocks read,
 * stopped where r < its blocks.  Exact: a tuple of a block not read scores
 * at most that threshold score, strictly below the bound, so below the k-th
 * best; the last group to finish merges the candidates where they are
 * few (fuse), else index_merge's fromcap launch takes their K best.  A
 * work-item scores IXD_U slots at once, each attribute's loads issued
 * together */
#ifndef IXD_U
#define IXD_U 4
#endif
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
index_direct(__global const float *data, __global const uint *ids, __global const float *thr,
             __global const uint *pstart, __global uint *qb, uint m, uint d, uint B,
             __global ulong *cand, uint cap, uint K, uint sko, uint P, uint fuse)
{
    __local uint la[IXQ_W];
    __local float lw[IXQ_W];
    __local uint nread, lbound, tick[2];
    __local ulong S[SN];
    __global uint *ctl = qb + IXQ_CTL;
    const uint i = get_group_id(0), lid = get_local_id(0);
    const uint g0 = pstart[i], nb = pstart[i + 1] - g0;
    for (uint j = lid; j < m; j += WG) {
        la[j] = qb[j];
        lw[j] = as_float(qb[IXQ_W + j]);
    }
    if (lid == 0) {
        nread = nb;
        lbound = 0xFFFFFFFFu;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    /* the bound: the least order key of the scores of the K tuples the host
     * sampled (slots qb[sko ..], where the K best keys go later), by the
     * same fma as every score; group 0 leaves it in ctl[2] for
     * index_merge's floor */
    for (uint x = lid; x < K; x += WG) {
        const uint slot = qb[sko + x], g = slot / B;
        const float sc = ix_score_local(data + (ulong)g * d * B + (slot - g * B), B, la, lw, m);
        atomic_min(&lbound, order_key(as_uint(sc), 0u));
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint bound = lbound;
    if (i == 0 && lid == 0)
        ctl[2] = bound;
    /* the first block j whose preceding threshold stops the reading (a
     * counted loop, no exit in its middle: POCL 5.0, as ix_block) */
    for (uint c = 1; c < nb; c += WG) {
        barrier(CLK_LOCAL_MEM_FENCE);
        const int open = nread == nb;
        barrier(CLK_LOCAL_MEM_FENCE);
        const uint j = c + lid;
        if (open && j < nb) {
            const float ts = ix_score_local(thr + (ulong)(g0 + j - 1) * d, 1, la, lw, m);
            if (ix_stops(ts, bound))
                atomic_min(&nread, j);
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint r = nread, E = r * B;
    const ulong s0 = (ulong)g0 * B;
    for (uint base = 0; base < E; base += IXD_U * WG) {
        float acc[IXD_U];
        ulong off[IXD_U];
#pragma unroll
        for (uint u = 0; u < IXD_U; u++) {
            const uint s = min(base + u * WG + lid, E - 1), b = s / B;
            off[u] = ((ulong)(g0 + b) * d) * B + (s - b * B);
            acc[u] = 0.0f;
        }
        for (uint a = 0; a < m; a++) {
            const ulong ao = (ulong)la[a] * B;
            const float wa = lw[a];
            float x[IXD_U];
#pragma unroll
            for (uint u = 0; u < IXD_U; u++)
                x[u] = data[off[u] + ao];
#pragma unroll
            for (uint u = 0; u < IXD_U; u++)
                acc[u] = fma(wa, x[u], acc[u]);
        }
#pragma unroll
        for (uint u = 0; u < IXD_U; u++) {
            const uint s = base + u * WG + lid;
            if (s < E && order_key(as_uint(acc[u]), 0u) >= bound) {
                const uint id = ids[s0 + s];
                if (id != IX_PAD) {
                    const uint o = atomic_inc(&ctl[3]);
                    if (o < cap)
                        cand[o] = ix_key(acc[u], id);
                }
            }
        }
    }
    if (lid == 0) {
        __global uint *state = qb + IXQ_STATE + IX_ST * i;
        state[0] = r;
        state[1] = 0;
        state[2] = r < nb;
        for (uint x = 3; x < IX_ST; x++)
            state[x] = 0;
    }
    /* fuse: the last group to finish (a ticket in ctl[1]) merges the
     * candidates into the K best keys at qb's ulong fuse (where the host
     * reads them) and sets ctl[0] to 3, where they are at most cap and SN
     * (one sort of them); else index_merge's launches (which then do
     * nothing) take them.  The candidates reach the device before
     * the ticket (the idiom of rows_tile.cl's sample filter) */
    if (fuse != 0) {
        mem_fence(CLK_GLOBAL_MEM_FENCE);
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
        if (lid == 0) {
            const uint last = atomic_inc(&ctl[1]) == P - 1u;
            tick[0] = last;
            tick[1] = last ? atomic_add(&ctl[3], 0u) : 0u;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        const uint c = tick[1];
        if (tick[0] && c <= cap && c <= (uint)SN) {
            /* one sort of the candidates (a power of two of slots, the
             * empty ones 0); where ix_offer's rounds merged them here, POCL
             * took some 28 s more to build the program */
            mem_fence(CLK_GLOBAL_MEM_FENCE);
            const uint n2 = ix_sort_slots(c);
            for (uint x = lid; x < n2; x += WG)
                S[x] = x < c ? ((volatile __global ulong *)cand)[x] : 0;
            ix_sort(S, lid, n2);
            __global ulong *out = (__global ulong *)qb + fuse;
            for (uint x = lid; x < K; x += WG)
                out[x] = x < n2 ? S[x] : 0;
            if (lid == 0)
                ctl[0] = 3u;
        }
    }
}

/* index_ids: the query engine's answer over the layout (lib/indexdev.c,
 * CLTOPK_INDEX=full=query): its n best, scores[i] and slots[i] (a slot of
 * the layout: cl/query.cl's row number over the blocked columns); slots[i]
 * becomes, in place, ix_key(score, the slot's tuple number): a padding
 * slot's low word is 0 (~IX_PAD), which no tuple's is; a work-item each */
__kernel void index_ids(__global const uint *ids, __global const float *scores,
                        __global long *slots, uint n)
{
    const uint i = (uint)get_global_id(0);
    if (i < n)
        slots[i] = (long)ix_key(scores[i], ids[slots[i]]);
}
