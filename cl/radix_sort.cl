/* radix_sort.cl - the device's stable LSD radix sort of (key, 32-bit position)
 * pairs into THE ORDER (larger order key first, then smaller position).
 *
 * The sort key of a pair is the composite  C = ~order_key(key) : position,
 * where the position takes the low PB bits (PB = 0 when the pairs arrive in
 * position order: a stable sort by the key alone keeps them so).  Ascending C
 * is THE ORDER.  The keys travel as their raw bits; every kernel derives the
 * digit from order_key (common.cl), so that the last pass can write the
 * input's bits, and a key that is already an order key (KEY_KIND 0, smallest
 * 0) sorts as itself.
 *
 * One pass sorts by the digit of bits [s, s + w) of C, w <= DIGIT, in three
 * launches (reduce, scan, scatter; no work-group ever waits for another, so
 * the pass is correct however the groups are scheduled):
 *   ds_hist     group g counts the digits of its tiles, hist[d * G + g] (HS
 *               groups a scatter group, each a share of its tiles)
 *   ds_scan     group d turns row d of hist into exclusive prefixes over the
 *               groups, and totals[d] = the row's sum; the skew word
 *               totals[RADIX] (cleared by ds_hist) is set where a digit holds
 *               at least thr pairs (thr 0: never)
 *   ds_scatter  group g walks its tiles in order: each tile of TILE = WG * IPT
 *               pairs (work-item t holds the IPT consecutive pairs t * IPT ..)
 *               is sorted by the digit in local memory, stably, by counting
 *               rounds of LB bits (counters per bin and work-item, a raking
 *               scan), then written bin by bin: the pairs of one digit are
 *               consecutive in local memory and go to consecutive addresses,
 *               totals' prefix + hist + what the group's earlier tiles wrote.
 *               Two builds may serve one pass (the host's sk): each is
 *               launched with `only` 1 or 2 and returns at once where the
 *               skew word says the pass is the other's.
 * The last pass may write the output instead of pairs: the keys' bits and the
 * positions as long (+ base), only the first k.
 *
 * -D options (defaults below): KEY_BITS, KEY_KIND (common.cl), WG (work-items a
 * group, a power of two, 32 at least), IPT (pairs a work-item a tile, a
 * multiple of the vector width VEC: 4 for 32-bit keys, 2 for 64-bit), DIGIT
 * (bits a pass, 1..8), LB (bits a local ranking round, 1..4), HC (copies of
 * ds_hist's local histogram, against same-bin contention), and the choices of
 * how ds_scatter loads and ranks (TL, RREG, LDIG, XS, PF, WR, WR_PTX, WSC, WC,
 * OS below). */
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
#ifndef LB
#define LB 4
#endif
#ifndef HC
#define HC 1
#endif
#ifndef HU
#define HU 1 /* vectors a work-item of ds_hist loads before it counts them */
#endif
#ifndef HS
#define HS 1 /* ds_hist groups a scatter group: each counts an equal share of its tiles */
#endif
#ifndef RREG
#define RREG 0 /* 1: a work-item counts its pairs' bins in registers, 0: in local memory */
#endif
#ifndef LDIG
#define LDIG 1 /* 1: the sorted tile keeps each pair's digit (TILE bytes), 0: recomputed */
#endif
#ifndef TL
#define TL 0 /* 1: a tile is loaded striped (coalesced) through local memory, 0: blocked */
#endif
#ifndef XS
#define XS 0 /* the work-group scan: 0 in place (two barriers a step), 1 two buffers (one) */
#endif
#ifndef PART
#define PART 0 /* 1: the digit is 0 for a pair at or above the element (part_k[0],
                  part_i[0]) in THE ORDER, 1 below it (DIGIT 1): one pass is a
                  stable partition, and only the pairs of digit 0 are written */
#endif
#ifndef WR
#define WR 0 /* 1: ds_scatter ranks a tile by warps of 32 work-items (each warp its own
                counters of the digits, no work-group scan per round), see below */
#endif
#ifndef WC
#define WC 0 /* (WR) 1: the pairs that would start a sector (8 pairs) of the output
                that this tile leaves unfinished are held in local memory until a
                later tile of the group completes it, so that every sector is
                written whole, by one tile (but a group's first and last) */
#endif
#ifndef OS
#define OS 0 /* (WR) 1: one sweep a pass: ds_onesweep, tiles taken in order by a
                counter, each tile's offsets by a look-back over the tiles
                before it; the digits' counts of every pass from one read
                (ds_hist_all) */
#endif
#ifndef WR_PTX
#define WR_PTX 0 /* (WR) 1: the warps' votes by NVIDIA's inline PTX; 0: the same
                    algorithm through local memory and barriers (any device) */
#endif
#ifndef WSC
#define WSC 0 /* (WR_PTX) 1: the tile's scan by warp shuffles, one barrier (on the
                 H200 the build the host's sk gives the skewed passes) */
#endif
#ifndef PF
#define PF 0 /* 1: (blocked loads) the next tile's pairs are loaded into registers while
                this one is ranked, so that a group's reads overlap its work */
#endif

#if DIGIT < 1 || DIGIT > 8
#error "DIGIT must be 1 .. 8"
#endif
#if LB < 1 || LB > 4
#error "LB must be 1 .. 4"
#endif

#define RADIX (1u << DIGIT)
#define TILE (WG * IPT)
#define LR (1u << LB)                    /* bins of one ranking round */
#define ROUNDS ((DIGIT + LB - 1) / LB)
#define CN (LR * WG)                     /* ranking counters: bin-major, work-item minor */
#define PADI(i) ((i) + ((i) >> 5))       /* pair slots: a pad word every 32 (the
                                            blocked reads t * IPT + q hit distinct banks) */
#define PADC(f) ((f) + ((f) >> 4))       /* counters: a pad every 16 (the raking reads) */
#define VEC (16 / (KEY_BITS / 8))        /* keys a 16-byte load */
#define PAD_POS 0xFFFFFFFFu              /* the position of a padding slot */
/* the loops over a work-item's pairs are unrolled, so that its arrays stay in
 * registers */
#define UNROLL _Pragma("unroll")

#if IPT % VEC != 0
#error "IPT must be a multiple of VEC"
#endif

/* digit of bits [s, s + w) of C = ~order_key(key) : pos (pos the low pb bits) */
inline uint ds_digit(okey_t key, uint pos, uint smallest, uint pb, uint s, uint w)
{
    okey_t dk = ~order_key(key, smallest);
    uint v;
    if (s >= pb) {
        v = (uint)(dk >> (s - pb));
    } else {
        v = pos >> s;
        if (s + w > pb)
            v |= (uint)(dk << (pb - s));
    }
    return v & ((1u << w) - 1u);
}

/* the digit of a pair in the kernels below (PART: part_u, part_p the
 * partition's element, as order key and position) */
#if PART
#if DIGIT != 1
#error "PART needs DIGIT 1"
#endif
#define DS_DIGIT(K, P)                                                                 \
    ((order_key((K), smallest) > part_u ||                                             \
      (order_key((K), smallest) == part_u && (P) <= part_p))                           \
         ? 0u                                                                          \
         : 1u)
#define PART_LOAD                                                                      \
    okey_t part_u = order_key(part_k[0], smallest);                                    \
    uint part_p = (uint)part_i[0];
#else
#define DS_DIGIT(K, P) ds_digit((K), (P), smallest, pb, s, w)
#define PART_LOAD                                                                      \
    (void)part_k;                                                                      \
    (void)part_i;
#endif

/* exclusive prefix of v over the work-group; *total the sum (part: 2 WG
 * words) */
inline uint wg_exscan(uint v, __local uint *part, uint *total)
{
    uint t = get_local_id(0);
#if XS
    /* read one buffer, write the other: one barrier a step */
    __local uint *src = part, *dst = part + WG;
    src[t] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint o = 1; o < WG; o <<= 1) {
        dst[t] = t >= o ? src[t] + src[t - o] : src[t];
        barrier(CLK_LOCAL_MEM_FENCE);
        __local uint *x = src;
        src = dst;
        dst = x;
    }
#else
    __local uint *src = part;
    src[t] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint o = 1; o < WG; o <<= 1) {
        uint x = t >= o ? src[t - o] : 0u;
        barrier(CLK_LOCAL_MEM_FENCE);
        src[t] += x;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
#endif
    *total = src[WG - 1];
    uint r = src[t] - v;
    barrier(CLK_LOCAL_MEM_FENCE);
    return r;
}

/* VEC keys from element i (a 16-byte load when vec, i.e. aligned, and the
 * whole vector is below hi); those at hi and above read as 0 */
inline void ds_load_keys(__global const okey_t *keys, ulong i, ulong hi, int vec, okey_t *k)
{
    if (vec && i + VEC <= hi) {
#if KEY_BITS == 32
        uint4 kv = *(__global const uint4 *)(keys + i);
        k[0] = kv.s0, k[1] = kv.s1, k[2] = kv.s2, k[3] = kv.s3;
#else
        ulong2 kv = *(__global const ulong2 *)(keys + i);
        k[0] = kv.s0, k[1] = kv.s1;
#endif
    } else {
        for (uint j = 0; j < VEC; j++)
            k[j] = i + j < hi ? keys[i + j] : (okey_t)0;
    }
}

/* the VEC positions from element i (implicit: i itself); PAD_POS at hi and
 * above */
inline void ds_load_pos(__global const uint *pos, uint implicit, ulong i, ulong hi, uint *p)
{
    if (implicit) {
        for (uint j = 0; j < VEC; j++)
            p[j] = i + j < hi ? (uint)i + j : PAD_POS;
    } else if (i + VEC <= hi) {
#if KEY_BITS == 32
        uint4 pv = *(__global const uint4 *)(pos + i);
        p[0] = pv.s0, p[1] = pv.s1, p[2] = pv.s2, p[3] = pv.s3;
#else
        uint2 pv = *(__global const uint2 *)(pos + i);
        p[0] = pv.s0, p[1] = pv.s1;
#endif
    } else {
        for (uint j = 0; j < VEC; j++)
            p[j] = i + j < hi ? pos[i + j] : PAD_POS;
    }
}

/* Counts of the digits of share h = g % HS of tiles [c * tpg, (c + 1) * tpg)
 * of the m pairs, c = g / HS (the scatter's group c: HS of these a group, so
 * that more groups read at once): hist[d * G + g], G = HS * the scatter's
 * groups.  keys start at element koff; implicit: positions are the indices
 * (pos unused). */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void ds_hist(__global const okey_t *keys, ulong koff, __global const uint *pos, uint implicit,
             uint m, uint smallest, uint pb, uint s, uint w, uint tpg, __global uint *hist,
             __global const okey_t *part_k, __global const long *part_i,
             __global uint *totals)
{
    PART_LOAD
    __local uint lh[RADIX * HC];
    uint t = get_local_id(0), g = get_group_id(0), G = get_num_groups(0);
    if (g == 0u && t == 0u)
        totals[RADIX] = 0u; /* the pass's skew word, set by ds_scan */
    for (uint b = t; b < RADIX * HC; b += WG)
        lh[b] = 0u;
    barrier(CLK_LOCAL_MEM_FENCE);
    const ulong sub = ((ulong)tpg + HS - 1u) / HS, c0 = (ulong)(g / HS) * tpg;
    const ulong t0 = c0 + (g % HS) * sub, t1 = t0 + sub < c0 + tpg ? t0 + sub : c0 + tpg;
    ulong lo = t0 * TILE, hi = t1 > t0 ? t1 * TILE : lo;
    if (hi > m)
        hi = m;
    /* only what the digit needs: the position (s < pb), the key (s + w > pb) */
    uint need_key = s + w > pb, need_pos = s < pb && !implicit;
    __global const okey_t *kp = keys + koff;
    int vec = (koff % VEC) == 0;
    uint hc = t % HC;
    /* HU vectors a work-item a round, all loaded before any is counted */
    for (ulong i0 = lo + (ulong)t * VEC; i0 < hi; i0 += (ulong)WG * VEC * HU) {
        okey_t k[HU][VEC];
        uint p[HU][VEC];
        UNROLL
        for (uint u = 0; u < HU; u++) {
            ulong i = i0 + (ulong)u * WG * VEC;
            if (need_key && i < hi)
                ds_load_keys(kp, i, hi, vec, k[u]);
            else
                for (uint j = 0; j < VEC; j++)
                    k[u][j] = 0;
            ds_load_pos(pos, !need_pos, i, hi, p[u]);
        }
        UNROLL
        for (uint u = 0; u < HU; u++) {
            ulong i = i0 + (ulong)u * WG * VEC;
            for (uint j = 0; j < VEC; j++)
                if (i + j < hi)
                    atomic_inc(&lh[DS_DIGIT(k[u][j], p[u][j]) * HC + hc]);
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint b = t; b < RADIX; b += WG) {
        uint c = 0u;
        for (uint h = 0; h < HC; h++)
            c += lh[b * HC + h];
        hist[b * G + g] = c;
    }
}

/* group d: row d of hist (G counts) -> exclusive prefixes; totals[d] its sum;
 * totals[RADIX] (the skew word, 0 before) 1 where thr > 0 and the sum is at
 * least thr */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void ds_scan(__global uint *hist, uint G, __global uint *totals, uint thr)
{
    __local uint part[2 * WG];
    uint t = get_local_id(0), d = get_group_id(0);
    __global uint *row = hist + (ulong)d * G;
    uint per = (G + WG - 1) / WG, lo = t * per, hi = lo + per < G ? lo + per : G;
    uint sum = 0u, total;
    for (uint i = lo; i < hi; i++)
        sum += row[i];
    uint ex = wg_exscan(sum, part, &total);
    for (uint i = lo; i < hi; i++) {
        uint c = row[i];
        row[i] = ex;
        ex += c;
    }
    if (t == 0u) {
        totals[d] = total;
        if (thr && total >= thr)
            totals[RADIX] = 1u;
    }
}

/* where group g's pairs of digit d begin, lgoff[d]: the pairs of smaller
 * digits, then those of earlier groups */
inline void ds_group_start(__global const uint *hist, __global const uint *totals,
                           __local uint *part, __local uint *lgoff)
{
    uint t = get_local_id(0), g = get_group_id(0), G = get_num_groups(0) * HS;
    uint per = (RADIX + WG - 1) / WG, lo = t * per, hi = lo + per < RADIX ? lo + per : RADIX;
    uint sum = 0u, total;
    for (uint d = lo; d < hi; d++)
        sum += totals[d];
    uint ex = wg_exscan(sum, part, &total);
    for (uint d = lo; d < hi; d++) {
        lgoff[d] = ex + hist[(ulong)d * G + (ulong)g * HS];
        ex += totals[d];
    }
}

/* the pair (kk, pp) of digit d to its place at: pairs to dk / dp (final 0;
 * PART: only digit 0), or the first k of the order to dk (want & 1) and, as
 * long + base, dl (want & 2) */
inline void ds_put(okey_t kk, uint pp, uint d, uint at, uint final, __global okey_t *dk,
                   __global uint *dp, __global long *dl, ulong base, uint k, uint want)
{
    if (!final) {
        if (!PART || d == 0u) {
            dk[at] = kk;
            dp[at] = pp;
        }
    } else if (at < k) {
        if (want & 1u)
            dk[at] = kk;
        if (want & 2u)
            dl[at] = (long)(base + pp);
    }
}

#if WR
/* ---- ds_scatter ranked by warps (WR 1).  A tile of TILE pairs is striped
 * over the NW warps of 32 work-items: warp w holds the pairs w * 32 * IPT +
 * q * 32 + lane, q = 0 .. IPT - 1 (each load a warp's 32 consecutive pairs).
 * A warp ranks its pairs q by q, lanes in order, against its own counters of
 * the digits (wh[w * RADIX + d]): the lanes of the same digit (the "peers",
 * found by DIGIT votes) take consecutive ranks after what the warp's earlier
 * pairs of that digit took, and the lowest of them adds their number.  So the
 * ranks follow the pairs' order, and the tile's order (digit, warp, rank) is
 * stable.  One work-group scan a tile (the digits' starts) instead of one a
 * round of LB bits: seven barriers a tile. */
#define NW (WG / 32)
#if TILE > 65535
#define WH_T uint /* a warp's count of a digit, then its start in the tile */
#else
#define WH_T ushort
#endif
#if WG % 32 != 0
#error "WR needs WG a multiple of 32"
#endif
#if WR_PTX
inline uint wr_ballot(uint p)
{
    uint r;
    asm volatile("{\n\t.reg .pred q;\n\tsetp.ne.u32 q, %1, 0;\n\t"
                 "vote.sync.ballot.b32 %0, q, 0xffffffff;\n\t}"
                 : "=r"(r)
                 : "r"(p));
    return r;
}
/* the warp's lanes whose digit is d (sd unused) */
inline uint wr_peers(uint d, __local uint *sd)
{
    (void)sd;
    uint m = 0xFFFFFFFFu;
    UNROLL
    for (uint b = 0; b < DIGIT; b++) {
        uint bit = (d >> b) & 1u, v = wr_ballot(bit);
        m &= bit ? v : ~v;
    }
    return m;
}
#define WR_SYNC() asm volatile("bar.warp.sync -1;" ::: "memory")
#if WSC
/* v of the lane o below this one (this lane's own v where there is none) */
inline uint wr_shfl_up(uint v, uint o)
{
    uint r;
    asm volatile("shfl.sync.up.b32 %0, %1, %2, 0, 0xffffffff;" : "=r"(r) : "r"(v), "r"(o));
    return r;
}
/* wg_exscan by shuffles: each warp's inclusive scan, then the warps' totals
 * through part (NW words) behind one barrier; part is written again only by
 * the next tile's scan, after the tile's other barriers */
inline uint wr_exscan(uint v, __local uint *part, uint *total)
{
    uint t = get_local_id(0), lane = t & 31u, wp = t >> 5, x = v;
    UNROLL
    for (uint o = 1; o < 32u; o <<= 1) {
        uint y = wr_shfl_up(x, o);
        x += lane >= o ? y : 0u;
    }
    if (lane == 31u)
        part[wp] = x;
    barrier(CLK_LOCAL_MEM_FENCE);
    uint before = 0u, all = 0u;
    for (uint i = 0; i < WG / 32u; i++) {
        uint c = part[i];
        before += i < wp ? c : 0u;
        all += c;
    }
    *total = all;
    return before + x - v;
}
#define WR_EXSCAN wr_exscan
#endif
#else
/* the same through local memory: every lane's digit in sd, then compared */
inline uint wr_peers(uint d, __local uint *sd)
{
    uint t = get_local_id(0), w0 = t & ~31u, m = 0u;
    sd[t] = d;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint l = 0; l < 32u; l++)
        m |= (sd[w0 + l] == d ? 1u : 0u) << l;
    barrier(CLK_LOCAL_MEM_FENCE);
    return m;
}
#define WR_SYNC() barrier(CLK_LOCAL_MEM_FENCE)
#endif
#ifndef WR_EXSCAN
#define WR_EXSCAN wg_exscan
#endif

/* The tile's pairs key[q], ps[q] (q = 0 .. IPT - 1) ranked among their warp's
 * pairs of their digit, q by q, lanes in order: rk[q] = rank << 8 | digit.
 * mine: the warp's counters of the digits (zero before; their counts after);
 * below: the lanes below this one; sd: wr_peers' local memory. */
#define WR_RANK(key, ps, rk)                                                           \
    UNROLL                                                                             \
    for (uint q = 0; q < IPT; q++) {                                                   \
        uint d_ = (ps)[q] == PAD_POS ? RADIX - 1u : DS_DIGIT((key)[q], (ps)[q]);       \
        uint peers_ = wr_peers(d_, sd);                                                \
        uint before_ = popcount(peers_ & below);                                       \
        uint r0_ = mine[d_];                                                           \
        WR_SYNC();                                                                     \
        if (before_ == 0u)                                                             \
            mine[d_] = r0_ + popcount(peers_);                                         \
        WR_SYNC();                                                                     \
        (rk)[q] = (r0_ + before_) << 8 | d_;                                           \
    }

/* the ranked pairs to their places in the sorted tile (lk, lp, and ld where
 * LDIG): the warp's start of the digit (mine, after the scan) + the rank */
#if LDIG
#define WR_PLACE_DIGIT(at, d) ld[at] = (uchar)(d)
#else
#define WR_PLACE_DIGIT(at, d) (void)0
#endif
#define WR_PLACE(key, ps, rk)                                                          \
    UNROLL                                                                             \
    for (uint q = 0; q < IPT; q++) {                                                   \
        uint d_ = (rk)[q] & 0xFFu, at_ = mine[d_] + ((rk)[q] >> 8);                    \
        lk[at_] = (key)[q];                                                            \
        lp[at_] = (ps)[q];                                                             \
        WR_PLACE_DIGIT(at_, d_);                                                       \
    }

/* where this work-item's digits lo .. hi - 1 begin in the sorted tile: the
 * exclusive scan over the digits of their counts over the warps (wh) */
inline uint wr_tile_start(__local WH_T *wh, __local uint *part, uint lo, uint hi)
{
    uint sum = 0u, total;
    for (uint d = lo; d < hi; d++)
        for (uint v = 0; v < NW; v++)
            sum += wh[v * RADIX + d];
    return WR_EXSCAN(sum, part, &total);
}

/* digit d's counts of the warps (wh) turned into their starts from at; the
 * digit's end */
inline uint wr_warp_starts(__local WH_T *wh, uint d, uint at)
{
    for (uint v = 0; v < NW; v++) {
        uint c = wh[v * RADIX + d];
        wh[v * RADIX + d] = at;
        at += c;
    }
    return at;
}

/* the IPT pairs of work-item (w, lane) of the tile at t0, striped; those at m
 * and above are padding (key 0, PAD_POS) */
inline void wr_load(__global const okey_t *kp, __global const uint *pos, uint implicit, uint m,
                    ulong t0, uint w, uint lane, okey_t *key, uint *ps)
{
    ulong i0 = t0 + (ulong)w * 32u * IPT + lane;
    UNROLL
    for (uint q = 0; q < IPT; q++) {
        ulong i = i0 + q * 32u;
        int in = i < (ulong)m;
        key[q] = in ? kp[i] : (okey_t)0;
        ps[q] = !in ? PAD_POS : implicit ? (uint)i : pos[i];
    }
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void ds_scatter(__global const okey_t *keys, ulong koff, __global const uint *pos, uint implicit,
                uint m, uint smallest, uint pb, uint s, uint w, uint tpg,
                __global const uint *hist, __global const uint *totals, uint final,
                __global okey_t *dk, __global uint *dp, __global long *dl, ulong base, uint k,
                uint want, __global const okey_t *part_k, __global const long *part_i,
                uint only)
{
    /* only 1: nothing to do in a skewed pass, 2: nothing in another (the
     * skew word, ds_scan); 0: every pass */
    if (only && (totals[RADIX] != 0u) != (only == 2u))
        return;
    PART_LOAD
    __local okey_t lk[TILE];
    __local uint lp[TILE];
#if LDIG
    __local uchar ld[TILE];
#define WR_DIGIT_AT(p) ((uint)ld[p])
#else
#define WR_DIGIT_AT(p) (lp[p] == PAD_POS ? RADIX - 1u : DS_DIGIT(lk[p], lp[p]))
#endif
    __local WH_T wh[NW * RADIX];
    __local uint part[(1 + XS) * WG];
    __local uint lgoff[RADIX], lbase[RADIX];
#if WC
    /* ck / cp: the held pairs, digit d's at d * 8 + (address & 7); gstart the
     * group's first address of each digit, oend where the digit ended before
     * this tile, cut the address from which its pairs are held */
    __local okey_t ck[RADIX * 8];
    __local uint cp[RADIX * 8];
    __local uint gstart[RADIX], oend[RADIX], cut[RADIX];
#endif
#if WR_PTX
    __local uint *sd = part; /* unused */
#else
    __local uint sd[WG];
#endif
    uint t = get_local_id(0), g = get_group_id(0), lane = t & 31u, wp = t >> 5;
    uint below = (1u << lane) - 1u;
    ds_group_start(hist, totals, part, lgoff);
#if WC
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint d = t; d < RADIX; d += WG)
        gstart[d] = lgoff[d];
#endif
    __global const okey_t *kp = keys + koff;
    ulong ntiles = ((ulong)m + TILE - 1) / TILE;
    ulong tile0 = (ulong)g * tpg, tile1 = tile0 + tpg < ntiles ? tile0 + tpg : ntiles;
    __local WH_T *mine = wh + wp * RADIX;
#if PF
    okey_t nkey[IPT];
    uint nps[IPT];
    if (tile0 < tile1)
        wr_load(kp, pos, implicit, m, tile0 * TILE, wp, lane, nkey, nps);
#endif
    for (ulong tile = tile0; tile < tile1; tile++) {
        ulong t0 = tile * TILE;
        uint len = (ulong)m - t0 < TILE ? (uint)((ulong)m - t0) : TILE;
        okey_t key[IPT];
        uint ps[IPT], rk[IPT];
#if PF
        UNROLL
        for (uint q = 0; q < IPT; q++) {
            key[q] = nkey[q];
            ps[q] = nps[q];
        }
        if (tile + 1u < tile1)
            wr_load(kp, pos, implicit, m, t0 + TILE, wp, lane, nkey, nps);
#else
        wr_load(kp, pos, implicit, m, t0, wp, lane, key, ps);
#endif
        for (uint i = t; i < NW * RADIX; i += WG)
            wh[i] = 0u;
        barrier(CLK_LOCAL_MEM_FENCE);
        /* each pair's rank among its warp's pairs of its digit; rk = rank << 8 | digit */
        WR_RANK(key, ps, rk);
        barrier(CLK_LOCAL_MEM_FENCE);
        /* the digits' starts in the tile (a scan over the digits), each warp's
         * start within its digit, and where the digit's pairs go */
        {
            uint per = (RADIX + WG - 1) / WG, lo = t * per, hi = lo + per < RADIX ? lo + per : RADIX;
            uint ex = wr_tile_start(wh, part, lo, hi);
            for (uint d = lo; d < hi; d++) {
                uint at = wr_warp_starts(wh, d, ex);
                lbase[d] = lgoff[d] - ex;
#if WC
                oend[d] = lgoff[d];
                cut[d] = tile + 1u < tile1 ? (lgoff[d] + at - ex) & ~7u : lgoff[d] + at - ex;
#endif
                lgoff[d] += at - ex;
                ex = at;
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        WR_PLACE(key, ps, rk);
        barrier(CLK_LOCAL_MEM_FENCE);
#if WC
        /* the held pairs whose sector this tile completes */
        for (uint i = t; i < RADIX * 8u; i += WG) {
            uint d = i >> 3, at = (oend[d] & ~7u) + (i & 7u);
            if (at < oend[d] && at >= gstart[d] && at < cut[d])
                ds_put(ck[i], cp[i], d, at, final, dk, dp, dl, base, k, want);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint p = t; p < len; p += WG) {
            uint d = WR_DIGIT_AT(p), at = lbase[d] + p;
            if (at >= cut[d]) {
                ck[d * 8u + (at & 7u)] = lk[p];
                cp[d * 8u + (at & 7u)] = lp[p];
            } else {
                ds_put(lk[p], lp[p], d, at, final, dk, dp, dl, base, k, want);
            }
        }
#else
        for (uint p = t; p < len; p += WG) {
            uint d = WR_DIGIT_AT(p);
            ds_put(lk[p], lp[p], d, lbase[d] + p, final, dk, dp, dl, base, k, want);
        }
#endif
        /* (the next tile's counters are cleared at once: nothing below reads
         * them; lk and lbase change only after its ranking's barrier) */
    }
}

#if OS
/* ---- one sweep a pass (OS 1).  A tile's status word for digit d, written
 * by a volatile store: OS_AGG | the tile's count of d, then OS_INC |
 * the count of d in this tile and every tile before it; 0 while neither. */
#define OS_AGG 0x40000000u
#define OS_INC 0x80000000u
#define OS_VAL 0x3FFFFFFFu
#ifndef OS_LB
#define OS_LB 4 /* status words a look-back reads at a time (a -D option for tuning; on the
                 H200 2 / 4 / 8 / 32: 5.7 / 5.3 / 5.4 / 7.7 ms a pass) */
#endif

/* a[0 .. an) and b[0 .. bn) = 0 */
__kernel void ds_zero(__global uint *a, ulong an, __global uint *b, ulong bn)
{
    ulong gid = get_global_id(0), gsz = get_global_size(0);
    for (ulong i = gid; i < an; i += gsz)
        a[i] = 0u;
    for (ulong i = gid; i < bn; i += gsz)
        b[i] = 0u;
}

/* aux[p * RADIX + d] += the pairs of digit d in pass p (bits [p DIGIT,
 * min((p + 1) DIGIT, T)) of C), for every pass of the sort, from one read of
 * the pairs in their first order (aux zero before).  lh: hc copies of the
 * passes' counts (passes * RADIX * hc words, a local argument), work-item t
 * counting into copy t % hc, so that the lanes of a warp that meet on one
 * digit (a skewed pass: half of uniform float32's top digits are one) meet
 * on different words. */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void ds_hist_all(__global const okey_t *keys, ulong koff, __global const uint *pos, uint implicit,
                 uint m, uint smallest, uint pb, uint T, uint passes, __global uint *aux,
                 __local uint *lh, uint hc)
{
    uint t = get_local_id(0), c = t % hc, nb = passes * RADIX;
    ulong gid = get_global_id(0), gsz = get_global_size(0);
    for (uint b = t; b < nb * hc; b += WG)
        lh[b] = 0u;
    barrier(CLK_LOCAL_MEM_FENCE);
    __global const okey_t *kp = keys + koff;
    int vec = (koff % VEC) == 0;
    for (ulong i = gid * VEC; i < m; i += gsz * VEC) {
        okey_t kk[VEC];
        ds_load_keys(kp, i, m, vec, kk);
        if (pb == 0u) {
            /* the key's digits alone (the sort of the input): the passes
             * known here, the order key computed once */
            UNROLL
            for (uint j = 0; j < VEC; j++) {
                okey_t dk = ~order_key(kk[j], smallest);
                if (i + j < m) {
                    UNROLL
                    for (uint p = 0; p < (KEY_BITS + DIGIT - 1) / DIGIT; p++) {
                        uint s = p * DIGIT, w = KEY_BITS - s < DIGIT ? KEY_BITS - s : DIGIT;
                        uint d = (uint)(dk >> s) & ((1u << w) - 1u);
                        atomic_inc(&lh[(p * RADIX + d) * hc + c]);
                    }
                }
            }
        } else {
            /* the positions' bits among the digits */
            uint pp[VEC];
            ds_load_pos(pos, implicit, i, m, pp);
            UNROLL
            for (uint j = 0; j < VEC; j++)
                if (i + j < m)
                    for (uint p = 0; p < passes; p++) {
                        uint s = p * DIGIT, w = T - s < DIGIT ? T - s : DIGIT;
                        uint d = ds_digit(kk[j], pp[j], smallest, pb, s, w);
                        atomic_inc(&lh[(p * RADIX + d) * hc + c]);
                    }
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint b = t; b < nb; b += WG) {
        uint sum = 0u;
        for (uint h = 0; h < hc; h++)
            sum += lh[b * hc + h];
        if (sum)
            atomic_add(&aux[b], sum);
    }
}

/* Pass s, w in one sweep: a group takes tiles in order from its counter (the
 * next one while it ranks this one, whose pairs it loads meanwhile); a tile
 * publishes its digits' counts in its status words, ranks as ds_scatter's,
 * finds the pairs of each digit in the tiles before it by looking back over
 * their words (adding counts, stopping at an inclusive one), publishes its own
 * inclusive counts, and writes its pairs from the digit's first place in the
 * pass (the scan of aux[pass * RADIX ..]) on.  Every tile's predecessors were
 * taken by running groups, so the look-back ends.  aux after the passes'
 * counts: their tile counters; status: two arrays of zn words (a word a tile
 * and digit), pass p's the (p & 1)-th; it zeroes the other's words of each
 * tile it takes, for the next pass. */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void ds_onesweep(__global const okey_t *keys, ulong koff, __global const uint *pos, uint implicit,
                 uint m, uint smallest, uint pb, uint s, uint w, uint pass, uint passes,
                 __global uint *aux, __global uint *status, ulong zn, uint final,
                 __global okey_t *dk, __global uint *dp, __global long *dl, ulong base, uint k,
                 uint want)
{
    __global const okey_t *part_k = 0;
    __global const long *part_i = 0;
    PART_LOAD
    __local okey_t lk[TILE];
    __local uint lp[TILE];
#if LDIG
    __local uchar ld[TILE];
#endif
    __local WH_T wh[NW * RADIX];
    __local uint part[(1 + XS) * WG];
    __local uint lbase[RADIX], ldst[RADIX], lcnt[RADIX], lbef[RADIX];
    __local uint ltile[2];
#if WR_PTX
    __local uint *sd = part; /* unused */
#else
    __local uint sd[WG];
#endif
    uint t = get_local_id(0), lane = t & 31u, wp = t >> 5;
    uint below = (1u << lane) - 1u;
    __global const okey_t *kp = keys + koff;
    uint ntiles = (uint)(((ulong)m + TILE - 1) / TILE);
    __local WH_T *mine = wh + wp * RADIX;
    __global uint *ctr = aux + passes * RADIX + pass;
    __global uint *st = status + (pass & 1u) * zn, *zs = status + ((pass + 1u) & 1u) * zn;
    /* where each digit's pairs begin in the pass */
    {
        uint per = (RADIX + WG - 1) / WG, lo = t * per, hi = lo + per < RADIX ? lo + per : RADIX;
        uint sum = 0u, total;
        for (uint d = lo; d < hi; d++)
            sum += aux[pass * RADIX + d];
        uint ex = wg_exscan(sum, part, &total);
        for (uint d = lo; d < hi; d++) {
            ldst[d] = ex;
            ex += aux[pass * RADIX + d];
        }
    }
    if (t == 0u)
        ltile[0] = atomic_inc(ctr);
    barrier(CLK_LOCAL_MEM_FENCE);
    uint cur = ltile[0];
    okey_t nkey[IPT];
    uint nps[IPT];
    if (cur < ntiles)
        wr_load(kp, pos, implicit, m, (ulong)cur * TILE, wp, lane, nkey, nps);
    while (cur < ntiles) {
        ulong t0 = (ulong)cur * TILE;
        uint len = (ulong)m - t0 < TILE ? (uint)((ulong)m - t0) : TILE;
        okey_t key[IPT];
        uint ps[IPT], rk[IPT];
        UNROLL
        for (uint q = 0; q < IPT; q++) {
            key[q] = nkey[q];
            ps[q] = nps[q];
        }
        if (t == 0u)
            ltile[1] = atomic_inc(ctr);
        for (uint i = t; i < NW * RADIX; i += WG)
            wh[i] = 0u;
        for (uint d = t; d < RADIX; d += WG) {
            zs[(ulong)cur * RADIX + d] = 0u;
            lcnt[d] = 0u;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        uint nxt = ltile[1];
        if (nxt < ntiles)
            wr_load(kp, pos, implicit, m, (ulong)nxt * TILE, wp, lane, nkey, nps);
        /* the tile's counts of the digits, published before it ranks, so that
         * the tiles after it seldom wait for its look-back */
        UNROLL
        for (uint q = 0; q < IPT; q++)
            atomic_inc(&lcnt[ps[q] == PAD_POS ? RADIX - 1u : DS_DIGIT(key[q], ps[q])]);
        barrier(CLK_LOCAL_MEM_FENCE);
        /* publish them, rank the tile, then find each digit's pairs in the
         * tiles before this one (reading OS_LB of their words at a time,
         * nearest first), and publish the inclusive counts at once.  Looking
         * back after the ranking gives the tiles before this one that long
         * to publish theirs: most look-backs then end at the first word (on
         * the H200, 5.3-5.4 ms a pass against 10.6-11.1 looking back first) */
        /* (one aligned word: a volatile store is seen whole, and goes past
         * the compute unit's cache) */
        for (uint d = t; d < RADIX; d += WG)
            *(volatile __global uint *)(st + (ulong)cur * RADIX + d) =
                (cur == 0u ? OS_INC : OS_AGG) | lcnt[d];
        WR_RANK(key, ps, rk);
        for (uint d = t; d < RADIX; d += WG) {
            volatile __global uint *sw = st + (ulong)cur * RADIX + d;
            uint before_d = 0u, j = cur;
            while (j > 0u) {
                uint n = j < OS_LB ? j : OS_LB, v[OS_LB], i, done = 0u;
                UNROLL
                for (i = 0; i < OS_LB; i++)
                    v[i] = i < n ? *(volatile __global uint *)(st + (ulong)(j - 1u - i) * RADIX + d)
                                 : OS_INC;
                for (i = 0; i < n; i++) {
                    if (!(v[i] & (OS_AGG | OS_INC)))
                        break; /* not published yet: read again from it */
                    before_d += v[i] & OS_VAL;
                    if (v[i] & OS_INC) {
                        done = 1u;
                        break;
                    }
                }
                if (done)
                    break;
                j -= i;
            }
            if (cur != 0u)
                *sw = OS_INC | (before_d + lcnt[d]);
            lbef[d] = before_d;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        {
            uint per = (RADIX + WG - 1) / WG, lo = t * per, hi = lo + per < RADIX ? lo + per : RADIX;
            uint ex = wr_tile_start(wh, part, lo, hi);
            for (uint d = lo; d < hi; d++) {
                uint at = wr_warp_starts(wh, d, ex);
                lbase[d] = ldst[d] + lbef[d] - ex;
                ex = at;
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        WR_PLACE(key, ps, rk);
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint p = t; p < len; p += WG) {
            uint d = WR_DIGIT_AT(p);
            ds_put(lk[p], lp[p], d, lbase[d] + p, final, dk, dp, dl, base, k, want);
        }
        cur = nxt;
        /* (ltile[1] is written again only after this tile's barriers) */
    }
}
#endif /* OS */
#else
/* Pass s, w: the pairs of group g's tiles to their places.  final 0: pairs to
 * dk / dp; final 1: the first k of the order, keys (want & 1) to dk,
 * positions + base as long (want & 2) to dl. */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void ds_scatter(__global const okey_t *keys, ulong koff, __global const uint *pos, uint implicit,
                uint m, uint smallest, uint pb, uint s, uint w, uint tpg,
                __global const uint *hist, __global const uint *totals, uint final,
                __global okey_t *dk, __global uint *dp, __global long *dl, ulong base, uint k,
                uint want, __global const okey_t *part_k, __global const long *part_i,
                uint only)
{
    /* only 1: nothing to do in a skewed pass, 2: nothing in another (the
     * skew word, ds_scan); 0: every pass */
    if (only && (totals[RADIX] != 0u) != (only == 2u))
        return;
    PART_LOAD
    __local okey_t lk[PADI(TILE)];
    __local uint lp[PADI(TILE)];
    __local ushort cnt[PADC(CN)];
#if LDIG
    __local uchar ld[TILE];
#define DIGIT_AT(p) ((uint)ld[p])
#else
#define DIGIT_AT(p) DS_DIGIT(lk[PADI(p)], lp[PADI(p)])
#endif
    __local uint part[2 * WG];
    __local uint lstart[RADIX + 1];
    __local uint lgoff[RADIX], lbase[RADIX];
    uint t = get_local_id(0), g = get_group_id(0);
    ds_group_start(hist, totals, part, lgoff);
    __global const okey_t *kp = keys + koff;
    int vec = (koff % VEC) == 0;
    ulong ntiles = ((ulong)m + TILE - 1) / TILE;
#if PF && !TL
    /* the next tile's pairs (those past m read as padding) */
    okey_t nkey[IPT];
    uint nps[IPT];
    UNROLL
    for (uint v = 0; v < IPT; v += VEC) {
        ulong i = (ulong)g * tpg * TILE + t * IPT + v;
        ds_load_keys(kp, i, (ulong)m, vec, nkey + v);
        ds_load_pos(pos, implicit, i, (ulong)m, nps + v);
    }
#endif
    for (ulong tile = (ulong)g * tpg; tile < ntiles && tile < (ulong)(g + 1) * tpg; tile++) {
        ulong t0 = tile * TILE;
        uint len = (ulong)m - t0 < TILE ? (uint)((ulong)m - t0) : TILE;
        okey_t key[IPT];
        uint ps[IPT], dg[IPT];
#if TL
        /* striped loads into local memory, then each work-item's IPT pairs */
        UNROLL
        for (uint v = 0; v < IPT; v += VEC) {
            uint e = v * WG + t * VEC;
            okey_t kv[VEC];
            uint pv[VEC];
            ds_load_keys(kp, t0 + e, (ulong)m, vec, kv);
            ds_load_pos(pos, implicit, t0 + e, (ulong)m, pv);
            for (uint j = 0; j < VEC; j++) {
                lk[PADI(e + j)] = kv[j];
                lp[PADI(e + j)] = pv[j];
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        UNROLL
        for (uint q = 0; q < IPT; q++) {
            key[q] = lk[PADI(t * IPT + q)];
            ps[q] = lp[PADI(t * IPT + q)];
        }
        /* (the pairs move again only after the counters' barrier) */
#elif PF
        UNROLL
        for (uint q = 0; q < IPT; q++) {
            key[q] = nkey[q];
            ps[q] = nps[q];
        }
        if (tile + 1u < ntiles && tile + 1u < (ulong)(g + 1) * tpg) {
            UNROLL
            for (uint v = 0; v < IPT; v += VEC) {
                ulong i = t0 + TILE + t * IPT + v;
                ds_load_keys(kp, i, (ulong)m, vec, nkey + v);
                ds_load_pos(pos, implicit, i, (ulong)m, nps + v);
            }
        }
#else
        UNROLL
        for (uint v = 0; v < IPT; v += VEC) {
            ds_load_keys(kp, t0 + t * IPT + v, (ulong)m, vec, key + v);
            ds_load_pos(pos, implicit, t0 + t * IPT + v, (ulong)m, ps + v);
        }
#endif
        /* padding slots take the last digit: they sort after every pair */
        UNROLL
        for (uint q = 0; q < IPT; q++)
            dg[q] = ps[q] == PAD_POS ? RADIX - 1u : DS_DIGIT(key[q], ps[q]);
        /* stable local sort by the digit: LB bits a round, least significant first */
        UNROLL
        for (uint r = 0; r < ROUNDS; r++) {
            uint sh = r * LB;
#if RREG
            /* the work-item's count of each bin, 8 bits each in 4 words, and
             * each pair's rank among the work-item's pairs of its bin */
            uint c0 = 0u, c1 = 0u, c2 = 0u, c3 = 0u;
            uchar rk[IPT];
            UNROLL
            for (uint q = 0; q < IPT; q++) {
                uint b = (dg[q] >> sh) & (LR - 1u), ws = b >> 2, bs = (b & 3u) * 8u;
                uint cur = ws == 0u ? c0 : ws == 1u ? c1 : ws == 2u ? c2 : c3;
                rk[q] = (uchar)(cur >> bs);
                uint inc = 1u << bs;
                c0 += ws == 0u ? inc : 0u;
                c1 += ws == 1u ? inc : 0u;
                c2 += ws == 2u ? inc : 0u;
                c3 += ws == 3u ? inc : 0u;
            }
            UNROLL
            for (uint b = 0; b < LR; b++) {
                uint word = b < 4u ? c0 : b < 8u ? c1 : b < 12u ? c2 : c3;
                cnt[PADC(b * WG + t)] = (ushort)((word >> ((b & 3u) * 8u)) & 0xFFu);
            }
#else
            /* the work-item's count of each bin, in its own column */
            UNROLL
            for (uint b = 0; b < LR; b++)
                cnt[PADC(b * WG + t)] = 0;
            UNROLL
            for (uint q = 0; q < IPT; q++)
                cnt[PADC(((dg[q] >> sh) & (LR - 1u)) * WG + t)]++;
#endif
            barrier(CLK_LOCAL_MEM_FENCE);
            /* exclusive scan of the counters in (bin, work-item) order: each
             * work-item rakes LR consecutive ones */
            uint sum = 0u, total;
            UNROLL
            for (uint j = 0; j < LR; j++)
                sum += cnt[PADC(t * LR + j)];
            uint ex = wg_exscan(sum, part, &total);
            UNROLL
            for (uint j = 0; j < LR; j++) {
                uint c = cnt[PADC(t * LR + j)];
                cnt[PADC(t * LR + j)] = (ushort)ex;
                ex += c;
            }
            barrier(CLK_LOCAL_MEM_FENCE);
            UNROLL
            for (uint q = 0; q < IPT; q++) {
                uint f = PADC(((dg[q] >> sh) & (LR - 1u)) * WG + t);
#if RREG
                uint at = cnt[f] + rk[q];
#else
                uint at = cnt[f];
                cnt[f] = (ushort)(at + 1u);
#endif
                lk[PADI(at)] = key[q];
                lp[PADI(at)] = ps[q];
#if LDIG
                ld[at] = (uchar)dg[q];
#endif
            }
            barrier(CLK_LOCAL_MEM_FENCE);
            if (r + 1u < ROUNDS) {
                UNROLL
                for (uint q = 0; q < IPT; q++) {
                    uint at = t * IPT + q;
                    key[q] = lk[PADI(at)];
                    ps[q] = lp[PADI(at)];
#if LDIG
                    dg[q] = ld[at];
#else
                    dg[q] = ps[q] == PAD_POS ? RADIX - 1u
                                             : DS_DIGIT(key[q], ps[q]);
#endif
                }
                /* (the next round writes its counters, then waits, before any
                 * pair moves again) */
            }
        }
        /* where each digit begins in the sorted tile (the padding is last) */
        for (uint p = t; p < len; p += WG) {
            uint d = DIGIT_AT(p);
            uint from = p ? DIGIT_AT(p - 1u) + 1u : 0u;
            for (uint e = from; e <= d; e++)
                lstart[e] = p;
            if (p == len - 1u)
                for (uint e = d + 1u; e <= RADIX; e++)
                    lstart[e] = len;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        /* the pair at p of digit d goes to lbase[d] + p; the next tile's
         * pairs of digit d after this one's */
        for (uint d = t; d < RADIX; d += WG) {
            uint s0 = lstart[d];
            lbase[d] = lgoff[d] - s0;
            lgoff[d] += lstart[d + 1u] - s0;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint p = t; p < len; p += WG) {
            uint d = DIGIT_AT(p);
            ds_put(lk[PADI(p)], lp[PADI(p)], d, lbase[d] + p, final, dk, dp, dl, base, k, want);
        }
        /* (the next tile moves pairs, and writes lstart and lbase, only after
         * barriers; but its striped loads go straight to local memory) */
#if TL
        barrier(CLK_LOCAL_MEM_FENCE);
#endif
    }
}
#endif /* WR */
