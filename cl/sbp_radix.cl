/* sbp_radix.cl - split-bucket partition (SBP) top-k with MSD radix buckets
 * (Yang et al., J. Supercomputing 2024; research note seed-003, sections 1-2).
 *
 * The input is cut into equal tiles of T = WG * IPT elements; one work-group
 * takes one tile, held in registers, and writes exactly C (key, position)
 * pairs at the fixed offset group * C: a superset of the tile's best K (k of
 * the call), padded with the sentinel.  No global atomics, no grid
 * synchronisation; the host enqueues the levels back to back (each shrinks the
 * data by T / C) until one tile remains, whose group runs with C = K and
 * resolves the answer exactly.
 *
 * Every element is the composite key u : ~i (order key, 32-bit position), so
 * keys are unique but for the sentinel (0 : 0) and the tie cut is exact: among
 * equal order keys the smaller positions win.  Inside a tile, per pass:
 *   - early exit when accepted + candidates <= C: emit them all;
 *   - common-prefix skip: OR and AND of the candidates' composite keys; the
 *     highest bit where they differ places the digit window (DIGIT bits) right
 *     below it, so a digit never fails to split; all equal (sentinels only):
 *     emit as many as still needed;
 *   - local histogram of the window's digit with local atomics, a suffix scan,
 *     the bin b holding the need-th best candidate: digits above b are
 *     accepted (written out at once), below b dropped, b stays.
 *
 * -D options (defaults below): KEY_BITS, KEY_KIND (common.cl), WG (a power of
 * two), IPT (elements a work-item), DIGIT (bits a pass, 8 or 11), REDUCE_TREE
 * (1: the OR/AND reduction as a tree in local memory; 0: local atomics). */
#ifndef CLTOPK_COMMON_CL
#include "common.cl"
#endif

#ifndef WG
#define WG 256
#endif
#ifndef IPT
#define IPT 8
#endif
#ifndef DIGIT
#define DIGIT 8
#endif
#ifndef REDUCE_TREE
#define REDUCE_TREE 1
#endif

#define T (WG * IPT)
#define RADIX (1u << DIGIT)
#define MASK (RADIX - 1u)
/* bins a scanning work-item sums: 32 scanners (fewer scan steps), or fewer
 * when the group is smaller */
#define SCAN_MAX (WG < 32 ? WG : 32)
#define BPW ((RADIX + SCAN_MAX - 1) / SCAN_MAX)
#define SCANNERS (RADIX / BPW)
#define SENT_IDX 0xFFFFFFFFu

/* DIGIT bits of the composite key hi : lo starting at bit s */
inline uint digit_at(okey_t hi, uint lo, uint s)
{
    if (s >= 32u)
        return (uint)(hi >> (s - 32u)) & MASK;
    uint v = lo >> s;
    if (s + DIGIT > 32u)
        v |= (uint)(hi << (32u - s));
    return v & MASK;
}

/* src: 0 raw input (order keys made here, positions = offsets), 1 pairs.
 * len: elements of the source; K: winners a tile needs; C (>= K): pairs a tile
 * writes at group * C of out_k / out_i. */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void sbp_level(uint src, __global const okey_t *in, ulong off, uint smallest,
               __global const okey_t *ck, __global const uint *ci, uint len, uint K, uint C,
               __global okey_t *out_k, __global uint *out_i)
{
    __local uint hist[RADIX];
    __local uint part[SCANNERS];
    __local uint s_pos, s_cnt, s_b, s_cb, s_ticket;
    __local uint r_or[3], r_and[3];
#if REDUCE_TREE
    __local uint red[KEY_BITS == 64 ? 6 : 4][WG];
#endif
    uint lid = get_local_id(0), g = get_group_id(0);
    uint base = g * (uint)T;
    okey_t u[IPT];
    uint ix[IPT];
    uchar fl[IPT]; /* 1 candidate, 0 not */
    for (uint j = 0; j < IPT; j++) {
        uint i = base + j * WG + lid;
        if (i < len) {
            if (src == 0u) {
                u[j] = order_key(in[off + i], smallest);
                ix[j] = i;
            } else {
                u[j] = ck[i];
                ix[j] = ci[i];
            }
        } else {
            u[j] = 0;
            ix[j] = SENT_IDX;
        }
        fl[j] = 1;
    }
    __global okey_t *ok = out_k + (size_t)g * C;
    __global uint *oi = out_i + (size_t)g * C;
    if (lid == 0u) {
        s_pos = 0u;
        s_cnt = T;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (;;) {
        /* every work-item reads s_pos and s_cnt, then a barrier, before any
         * moves s_pos (the early exit and the all-equal case increment it):
         * the exit decision and need are the group's.  Read in the interval
         * of those increments, a work-item could stay in the loop alone; and
         * without a barrier at the head of this loop, POCL (3.1, IPT=1) made
         * the first exit test on stale local values and wrote the whole tile
         * from group * C on, far past the group's C pairs. */
        uint pos = s_pos, cnt = s_cnt;
        barrier(CLK_LOCAL_MEM_FENCE);
        /* early exit: every candidate fits */
        if (pos + cnt <= C) {
            for (uint j = 0; j < IPT; j++)
                if (fl[j]) {
                    uint p = atomic_inc(&s_pos);
                    ok[p] = u[j];
                    oi[p] = ix[j];
                }
            break;
        }
        /* where the candidates differ: OR and AND of lo, hi0, hi1 */
        {
            uint o0 = 0u, o1 = 0u, o2 = 0u, a0 = ~0u, a1 = ~0u, a2 = ~0u;
            for (uint j = 0; j < IPT; j++)
                if (fl[j]) {
                    uint lo = ~ix[j], h0 = (uint)u[j];
#if KEY_BITS == 64
                    uint h1 = (uint)(u[j] >> 32);
#else
                    uint h1 = 0u;
#endif
                    o0 |= lo, a0 &= lo, o1 |= h0, a1 &= h0, o2 |= h1, a2 &= h1;
                }
#if REDUCE_TREE
            /* a tree in local memory: log2(WG) steps, no contended atomics */
            red[0][lid] = o0, red[1][lid] = a0, red[2][lid] = o1, red[3][lid] = a1;
#if KEY_BITS == 64
            red[4][lid] = o2, red[5][lid] = a2;
#endif
            barrier(CLK_LOCAL_MEM_FENCE);
            for (uint st = WG / 2u; st > 0u; st >>= 1) {
                if (lid < st) {
                    red[0][lid] |= red[0][lid + st];
                    red[1][lid] &= red[1][lid + st];
                    red[2][lid] |= red[2][lid + st];
                    red[3][lid] &= red[3][lid + st];
#if KEY_BITS == 64
                    red[4][lid] |= red[4][lid + st];
                    red[5][lid] &= red[5][lid + st];
#endif
                }
                barrier(CLK_LOCAL_MEM_FENCE);
            }
            if (lid == 0u) {
                r_or[0] = red[0][0], r_and[0] = red[1][0];
                r_or[1] = red[2][0], r_and[1] = red[3][0];
#if KEY_BITS == 64
                r_or[2] = red[4][0], r_and[2] = red[5][0];
#endif
            }
#else
            if (lid < 3u) {
                r_or[lid] = 0u;
                r_and[lid] = 0xFFFFFFFFu;
            }
            barrier(CLK_LOCAL_MEM_FENCE);
            atomic_or(&r_or[0], o0);
            atomic_and(&r_and[0], a0);
            atomic_or(&r_or[1], o1);
            atomic_and(&r_and[1], a1);
#if KEY_BITS == 64
            atomic_or(&r_or[2], o2);
            atomic_and(&r_and[2], a2);
#endif
#endif
            (void)o2, (void)a2;
        }
        for (uint b = lid; b < RADIX; b += WG)
            hist[b] = 0u;
        if (lid == 0u)
            s_ticket = 0u;
        barrier(CLK_LOCAL_MEM_FENCE);
        uint dlo = r_or[0] ^ r_and[0];
#if KEY_BITS == 64
        okey_t dhi = ((okey_t)(r_or[2] ^ r_and[2]) << 32) | (okey_t)(r_or[1] ^ r_and[1]);
#else
        okey_t dhi = r_or[1] ^ r_and[1];
#endif
        uint need = K - pos; /* pos < K here: else the early exit took it */
        if (dhi == 0 && dlo == 0u) {
            /* every candidate the same composite key (sentinels): take need */
            for (uint j = 0; j < IPT; j++)
                if (fl[j]) {
                    uint t = atomic_inc(&s_ticket);
                    if (t < need) {
                        uint p = atomic_inc(&s_pos);
                        ok[p] = u[j];
                        oi[p] = ix[j];
                    }
                }
            break;
        }
        uint h = dhi != 0 ? 32u + (uint)(KEY_BITS - 1) - (uint)clz(dhi) : 31u - clz(dlo);
        uint s = h + 1u >= (uint)DIGIT ? h + 1u - (uint)DIGIT : 0u;
        for (uint j = 0; j < IPT; j++)
            if (fl[j])
                atomic_inc(&hist[digit_at(u[j], ~ix[j], s)]);
        barrier(CLK_LOCAL_MEM_FENCE);
        /* suffix sums: scanner w owns bins [w*BPW, (w+1)*BPW) */
        if (lid < SCANNERS) {
            uint t = 0u;
            for (uint q = 0; q < BPW; q++)
                t += hist[lid * BPW + q];
            part[lid] = t;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint st = 1u; st < SCANNERS; st <<= 1) {
            uint v = 0u;
            if (lid < SCANNERS && lid + st < SCANNERS)
                v = part[lid + st];
            barrier(CLK_LOCAL_MEM_FENCE);
            if (lid < SCANNERS)
                part[lid] += v;
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        if (lid < SCANNERS) {
            /* part[lid] = candidates in bins >= lid*BPW */
            uint above = lid + 1u < SCANNERS ? part[lid + 1u] : 0u;
            if (above < need && part[lid] >= need) {
                for (int q = BPW - 1; q >= 0; q--) {
                    uint c = hist[lid * BPW + (uint)q];
                    if (above + c >= need) {
                        s_b = lid * BPW + (uint)q;
                        s_cb = c;
                        break;
                    }
                    above += c;
                }
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        uint b = s_b;
        for (uint j = 0; j < IPT; j++)
            if (fl[j]) {
                uint d = digit_at(u[j], ~ix[j], s);
                if (d > b) {
                    uint p = atomic_inc(&s_pos);
                    ok[p] = u[j];
                    oi[p] = ix[j];
                    fl[j] = 0;
                } else if (d < b) {
                    fl[j] = 0;
                }
            }
        if (lid == 0u)
            s_cnt = s_cb;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    /* pad to C with the sentinel */
    for (uint p = s_pos + lid; p < C; p += WG) {
        ok[p] = 0;
        oi[p] = SENT_IDX;
    }
}
