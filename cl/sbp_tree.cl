/* sbp_tree.cl - split-bucket partition (SBP) top-k with a sampled search tree
 * (Yang et al., J. Supercomputing 2024; research note seed-003 sections 1, 3, 7).
 *
 * Every element is an (order key, 32-bit index) pair (common.cl): a pair comes
 * first when its key is larger, or keys are equal and its index smaller.  Pairs
 * are distinct, so "the best k pairs" is one well-defined set: ties are exact.
 *
 * One launch is one SBP level.  The input is cut into equal tiles of
 * TILE = WG * PER pairs, one work-group a tile, held in registers (item j of
 * work-item l at tile position j * WG + l: coalesced).  The group narrows its
 * tile to at most `c` pairs that hold the tile's best k, by rounds of a search
 * tree over a sample of the surviving candidates:
 *   sample   candidates chosen by a hash of their index (about NS, at most 2 NS;
 *            all of them once few remain), sorted best first by rank counting
 *   splitters SPLIT (3, 7, 15, 31) sample pairs: at equal sample quantiles, or,
 *            with the control-flow optimisation (cf), bracketing the sample rank
 *            where the need-th candidate is expected, so that the target class
 *            is small and everything above it is taken at once
 *   classes  2 SPLIT + 1, best first: (above s0), (== s0), (s0, s1), (== s1), ...,
 *            (below the last); a branch-free descent of the implicit tree plus one
 *            equality test.  Per-class counts by local atomics; the last class is
 *            never counted (its size is what is left): with cf most pairs take
 *            one comparison and no atomic.
 *   target   the class where the running count reaches `need`: classes before it
 *            are accepted, it stays the candidate set, the rest is dropped.
 * Equality classes and the no-progress guard (research note 3.4): while keys are
 * compared ("key mode"), duplicates of a splitter land in its equality class; if
 * the target is an equality class (all keys equal), or a round did not shrink
 * the candidates, later rounds compare whole pairs ("pair mode"), where every
 * splitter is a distinct candidate in a class of its own, so each round drops at
 * least one candidate: the loop always ends, also on all-equal inputs.
 * The loop stops when accepted + candidates <= c (after it, they are exactly k
 * pairs when c == k).  The group writes them at its fixed offset group * c,
 * padded with the sentinel (key 0, index SENTINEL_IDX), with no global atomics;
 * padding entries of the next level's input are never candidates.
 *
 * The last launch (one group, final_k = k) resolves its tile to exactly k pairs,
 * sorts them (bitonic, in local memory) and writes the answer: keys gathered from the
 * original input by index (bit copies), int64 positions + index_base.
 *
 * -D options (defaults below): KEY_BITS, KEY_KIND (common.cl); WG work-items a
 * group; PER pairs a work-item; SPLIT splitters (2^h - 1); NS sample size;
 * CMAX the largest c; STAGE the final group's staging, a power of two >= CMAX.
 * k, c, cf, the direction and
 * sizes are run-time arguments. */
#ifndef CLTOPK_COMMON_CL
#include "common.cl"
#endif

#ifndef WG
#define WG 256
#endif
#ifndef PER
#define PER 16
#endif
#ifndef SPLIT
#define SPLIT 3
#endif
#ifndef NS
#define NS 128
#endif
#ifndef CMAX
#define CMAX (WG * PER / 2)
#endif

#ifndef STAGE /* the final group's staging: a power of two >= CMAX */
#define STAGE CMAX
#endif

#define TILE (WG * PER)
#define NSMAX (2 * NS)
#define NCLS (2 * SPLIT + 1)
#define LAST (NCLS - 1)

#if (SPLIT & (SPLIT + 1)) || SPLIT < 1 || SPLIT > 63
#error "SPLIT must be 2^h - 1, at most 63"
#endif
#if CMAX >= TILE || NS < 2
#error "CMAX must be below TILE, NS at least 2"
#endif

#define WANT_KEYS 1u
#define WANT_INDEX 2u

/* misc[] slots */
#define M_CNT 0
#define M_NS 1
#define M_OUT 2

/* state of a pair */
#define ST_OUT 0
#define ST_CAND 1
#define ST_ACC 2

inline uint mix32(uint x)
{
    x ^= x >> 16;
    x *= 0x7FEB352Du;
    x ^= x >> 15;
    x *= 0x846CA68Bu;
    x ^= x >> 16;
    return x;
}

/* (key, i) ranks at or above splitter (sk, si): pair mode compares pairs, key
 * mode keys */
inline int at_or_above(okey_t key, uint i, okey_t sk, uint si, uint pair)
{
    return pair ? !pair_better(sk, si, key, i) : key >= sk;
}

inline uint classify(okey_t key, uint i, __local const okey_t *spk, __local const uint *spi,
                     uint pair)
{
    /* the worst class in one comparison: most pairs with cf */
    if (!at_or_above(key, i, spk[SPLIT - 1], spi[SPLIT - 1], pair))
        return LAST;
    /* the first splitter at or below (key, i): descent of the implicit tree */
    uint lo = 0;
    for (uint step = (SPLIT + 1) >> 1; step; step >>= 1)
        if (!at_or_above(key, i, spk[lo + step - 1], spi[lo + step - 1], pair))
            lo += step;
    int eq = pair ? i == spi[lo] : key == spk[lo];
    return 2 * lo + (eq ? 1u : 0u);
}

/* One SBP level.  first: src_k holds raw elements at src_off.. (m of them), the
 * positions are the indices; else src_k/src_i hold m pairs (sentinels padding).
 * Out: group g's pairs at cu/ci[g * c ..], c of them; or, final_k != 0 (one
 * group), the answer. */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void sbp_tree(__global const okey_t *src_k, __global const uint *src_i, ulong src_off, uint m,
              uint first, uint smallest, uint k, uint c, uint cf,
              __global okey_t *cu, __global uint *ci, uint final_k, uint want,
              __global const okey_t *orig, ulong orig_off, __global okey_t *out_keys,
              __global long *out_index, ulong index_base, uint gtree,
              __global const okey_t *gspl_k, __global const uint *gspl_i)
{
    __local okey_t smp_k[NSMAX], srt_k[NSMAX], spl_k[SPLIT];
    __local uint smp_i[NSMAX], srt_i[NSMAX], spl_i[SPLIT];
    __local uint hist[NCLS], misc[4];
    __local okey_t stage_k[STAGE];
    __local uint stage_i[STAGE];

    uint lid = get_local_id(0);
    size_t g = get_group_id(0);
    size_t base = g * (size_t)TILE;

    okey_t key[PER];
    uint idx[PER];
    uchar st[PER], cls[PER];
    uint mine = 0;
#pragma unroll
    for (uint j = 0; j < PER; j++) {
        size_t pos = base + (size_t)j * WG + lid;
        key[j] = 0;
        idx[j] = SENTINEL_IDX;
        if (pos < m) {
            if (first) {
                key[j] = order_key(src_k[src_off + pos], smallest);
                idx[j] = (uint)pos;
            } else {
                key[j] = src_k[pos];
                idx[j] = src_i[pos];
            }
        }
        st[j] = idx[j] != SENTINEL_IDX ? ST_CAND : ST_OUT;
        cls[j] = 0;
        mine += st[j];
    }
    if (lid == 0)
        misc[M_CNT] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (mine)
        atomic_add(&misc[M_CNT], mine);
    barrier(CLK_LOCAL_MEM_FENCE);
    uint ncand = misc[M_CNT];
    uint lim = final_k ? final_k : c;
    uint acc = 0, need = k, pair = 0, round = 0;

    while (acc + ncand > lim) {
        /* task optimisation: in round 0 the splitters of the whole level, from
         * sbp_tree_splitters (they need not be candidates of this tile); no
         * sample (the barriers stay outside any branch) */
        uint glob = gtree && round == 0;
        /* ---- sample the candidates */
        uint thr = glob ? 0u : ncand <= NS ? 0xFFFFFFFFu : (uint)(((ulong)NS << 32) / ncand);
        uint ns;
        barrier(CLK_LOCAL_MEM_FENCE); /* everyone has read misc and hist */
        for (;;) {
            if (lid == 0)
                misc[M_NS] = 0;
            for (uint i = lid; i < NCLS; i += WG)
                hist[i] = 0;
            barrier(CLK_LOCAL_MEM_FENCE);
            uint salt = round * 0x9E3779B9u;
#pragma unroll
            for (uint j = 0; j < PER; j++) {
                if (!glob && st[j] == ST_CAND && mix32(idx[j] ^ salt) <= thr) {
                    uint s = atomic_inc(&misc[M_NS]);
                    if (s < NSMAX) {
                        smp_k[s] = key[j];
                        smp_i[s] = idx[j];
                    }
                }
            }
            barrier(CLK_LOCAL_MEM_FENCE);
            ns = min(misc[M_NS], (uint)NSMAX);
            if (ns || glob)
                break;
            thr = 0xFFFFFFFFu; /* no candidate drawn: take them all (misc[M_NS] is 0) */
        }
        /* ---- sort the sample best first (pairs are distinct: ranks are too) */
        for (uint s = lid; s < ns; s += WG) {
            okey_t a = smp_k[s];
            uint ai = smp_i[s], r = 0;
            for (uint t = 0; t < ns; t++)
                r += pair_better(smp_k[t], smp_i[t], a, ai) ? 1u : 0u;
            srt_k[r] = a;
            srt_i[r] = ai;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        /* ---- the splitters: sample positions, non-decreasing in i */
        for (uint i = lid; i < SPLIT; i += WG) {
            if (glob) {
                spl_k[i] = gspl_k[i];
                spl_i[i] = gspl_i[i];
                continue;
            }
            int p;
            if (cf) {
                /* expected sample rank of the need-th candidate, bracketed by
                 * the splitters with a spread of about 2 sqrt(t + 1) */
                int t = (int)(((ulong)need * ns + ncand - 1) / ncand) - 1;
                int d = 1 + (int)(2.0f * sqrt((float)(t + 1)) / (float)((SPLIT + 1) / 2));
                p = t + ((int)i - (int)(SPLIT / 2)) * d;
            } else {
                p = (int)(((i + 1) * ns) / (SPLIT + 1));
            }
            p = clamp(p, 0, (int)ns - 1);
            spl_k[i] = srt_k[p];
            spl_i[i] = srt_i[p];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        /* ---- classify and count */
#pragma unroll
        for (uint j = 0; j < PER; j++) {
            if (st[j] == ST_CAND) {
                uint cc = classify(key[j], idx[j], spl_k, spl_i, pair);
                cls[j] = (uchar)cc;
                if (cc != LAST)
                    atomic_inc(&hist[cc]);
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        /* ---- the target class (every work-item finds the same) */
        uint cum = 0, tg = LAST;
        for (uint i = 0; i < LAST; i++) {
            uint h = hist[i];
            if (cum + h >= need) {
                tg = i;
                break;
            }
            cum += h;
        }
        uint ng = tg == LAST ? ncand - cum : hist[tg];
#pragma unroll
        for (uint j = 0; j < PER; j++)
            if (st[j] == ST_CAND)
                st[j] = cls[j] < tg ? ST_ACC : (cls[j] == tg ? ST_CAND : ST_OUT);
        acc += cum;
        need -= cum;
        /* equality class (all keys equal) or no progress with splitters drawn
         * from the candidates: compare pairs */
        if ((tg & 1u) || (ng == ncand && !glob))
            pair = 1;
        ncand = ng;
        round++;
    }

    /* ---- write the survivors: accepted + candidates, at most lim */
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0)
        misc[M_OUT] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    size_t ob = g * (size_t)c;
#pragma unroll
    for (uint j = 0; j < PER; j++) {
        if (st[j] != ST_OUT) {
            uint s = atomic_inc(&misc[M_OUT]);
            if (final_k) {
                stage_k[s] = key[j];
                stage_i[s] = idx[j];
            } else {
                cu[ob + s] = key[j];
                ci[ob + s] = idx[j];
            }
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    uint cnt = misc[M_OUT];
    if (!final_k) {
        for (uint s = cnt + lid; s < c; s += WG) {
            cu[ob + s] = 0;
            ci[ob + s] = SENTINEL_IDX;
        }
    }
    /* final: exactly final_k pairs; sort them best first (bitonic, over the
     * next power of two, padded with sentinels that sort last) and write.
     * Other levels pass through with P = 1 (no early return: the barriers of
     * the sort stay outside any branch) */
    uint P = 1;
    while (final_k && P < cnt)
        P <<= 1;
    for (uint s = cnt + lid; s < P; s += WG) {
        stage_k[s] = 0;
        stage_i[s] = SENTINEL_IDX;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint size = 2; size <= P; size <<= 1) {
        for (uint stride = size >> 1; stride > 0; stride >>= 1) {
            for (uint t = lid; t < P / 2; t += WG) {
                uint i = 2 * t - (t & (stride - 1)), j = i + stride;
                okey_t a = stage_k[i], b = stage_k[j];
                uint ai = stage_i[i], bi = stage_i[j];
                int sw = (i & size) == 0 ? pair_better(b, bi, a, ai) : pair_better(a, ai, b, bi);
                if (sw) {
                    stage_k[i] = b;
                    stage_k[j] = a;
                    stage_i[i] = bi;
                    stage_i[j] = ai;
                }
            }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
    }
    for (uint r = lid; final_k && r < final_k; r += WG) {
        uint ai = stage_i[r];
        if (want & WANT_KEYS)
            out_keys[r] = orig[orig_off + ai];
        if (want & WANT_INDEX)
            out_index[r] = (long)(index_base + ai);
    }
}

/* Task optimisation (the paper's Algorithm 6): one group draws 2 NS elements
 * spread over the raw input of the first level, sorts them and writes SPLIT
 * splitters bracketing the sample rank where a full tile's (k + c) / 2-th best
 * element is expected, so that most tiles keep between k and c pairs in their
 * first round without sampling.  A tile it does not fit (sorted input: the tile
 * spans a narrow range) just samples its own in the next round. */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void sbp_tree_splitters(__global const okey_t *src_k, ulong src_off, uint m, uint smallest,
                        uint k, uint c, __global okey_t *gspl_k, __global uint *gspl_i)
{
    __local okey_t smp_k[NSMAX];
    __local uint smp_i[NSMAX];
    uint lid = get_local_id(0);
    uint ns = min((uint)NSMAX, m);
    for (uint s = lid; s < ns; s += WG) {
        /* one element in each of ns equal strides, at a hashed place in it */
        ulong lo = (ulong)s * m / ns, hi = (ulong)(s + 1) * m / ns;
        uint pos = (uint)(lo + mix32(s * 0x9E3779B9u + 17u) % (uint)(hi - lo));
        smp_k[s] = order_key(src_k[src_off + pos], smallest);
        smp_i[s] = pos;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    /* rank of each sample; the splitters are those at the chosen ranks */
    uint want_t = (uint)min((ulong)ns - 1,
                            ((ulong)(k + c) / 2 * ns + TILE - 1) / TILE);
    int t = (int)want_t - 1;
    if (t < 0)
        t = 0;
    int d = 1 + (int)(2.0f * sqrt((float)(t + 1)) / (float)((SPLIT + 1) / 2));
    for (uint s = lid; s < ns; s += WG) {
        okey_t a = smp_k[s];
        uint ai = smp_i[s], r = 0;
        for (uint u = 0; u < ns; u++)
            r += pair_better(smp_k[u], smp_i[u], a, ai) ? 1u : 0u;
        for (uint i = 0; i < SPLIT; i++) {
            int p = clamp(t + ((int)i - (int)(SPLIT / 2)) * d, 0, (int)ns - 1);
            if ((uint)p == r) {
                gspl_k[i] = a;
                gspl_i[i] = ai;
            }
        }
    }
}
