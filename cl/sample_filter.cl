/* sample_filter.cl - top-k in about one read: a sampled threshold on the
 * composite order, one filtering read, and an exact top-k of the survivors.
 *
 * Every element is the pair (order key u, 32-bit position i), read as the
 * composite key  u : ~i  (KEY_BITS + 32 bits; larger comes first).  Composite
 * keys are all distinct, so the number of elements at or above a threshold
 * taken from a sample depends only on n, the sample and the rank of the
 * threshold in it, never on the data: ties, sorted and all-equal input give
 * the same counts as uniform input, and ties at the threshold are cut by
 * position exactly.
 *
 *   sf_gather   s samples, one in each of s equal strata of the input at a
 *               hashed offset (the seed changes per call); each group keeps
 *               its best min(r, WG).  (Top-k, unit > 1: the strata are of
 *               units of `unit` elements, and a sample is the best element of
 *               a unit: one random read of a 32-byte sector brings 8 elements
 *               of 4 bytes as cheaply as one.)
 *   sf_sample   one group: the r-th best sample as the threshold T; clears
 *               the state (sf_init instead when there is no sample: T below
 *               everything, or, for tests, above everything)
 *   sf_filter   the one read: uint4 (ulong2) loads, one comparison an element;
 *               a survivor (at or above T) is appended to the group's segment
 *               in local memory by a local atomic; a full segment spills to
 *               the survivor buffer (one global atomic a spilled survivor); at
 *               the end each group reserves its place in the survivor buffer
 *               with one global atomic and copies its segment there.  Tiles
 *               go to groups through an affine permutation chosen per call, so
 *               that no input layout can aim every survivor at one segment.
 *               The count of survivors is exact even past the buffer.
 *   sf_reduce   (when k < WG) each group's best k of WG survivors
 *   sf_final    one group: if survivors >= k and they all fit, the exact top-k
 *               of the survivors; else (too few, or too many for the buffer)
 *               the same selection over the input itself (everything when too
 *               few, everything at or above T when too many): exact in every
 *               case, decided on the device.
 *   sf_best_part, sf_best_final   k = 1: the best pair of each group, then of
 *               the groups (argmax / argmin with ties to the smaller position).
 *
 * The one-group selection (wg_topr): a pass for the candidates' common prefix
 * (AND / OR), then DB-bit digit passes of the composite key below it (local
 * histograms with HC copies; each work-item adds runs of equal digits at once;
 * UF loads a work-item in flight; another prefix pass after a digit that left
 * most candidates in one bin) until the candidates at or above the chosen
 * bound are at most `target`; those are gathered into local memory and sorted
 * (bitonic), best first.
 *
 * A selection (any rank) uses the same passes on a band (BAND=1):
 *   sf_gather      as above, every sample kept
 *   sf_band_sample two groups: the samples at two ranks around the wanted
 *                  rank's place in the sample, the band's bounds; or, with the
 *                  bracket (the host's bm > 0), the same bounds in three steps
 *                  that read far fewer samples in one group: the subsample
 *                  (every bm-th pair of each group's sorted run, written by
 *                  sf_gather) gives two pairs P_lo < P_hi that provably hold
 *                  both ranks between them, sf_band_bracket (many groups)
 *                  keeps the samples in (P_lo, P_hi] and counts those above,
 *                  and sf_band_sample selects the two ranks, less that count,
 *                  among the kept
 *   sf_filter      BAND: keeps the elements between the bounds (in the
 *                  composite order, both included) and counts those above
 *                  the upper bound; then radix_select.cl searches the kept
 *                  ones for the rank less that count, or, when they do not
 *                  hold it or overflowed, the input (decided on the device)
 *   sf_band_final  (a small band) one group instead of radix_select.cl: the
 *                  rank among the band, or among the input where it missed
 *
 * -D options (defaults below, so that the file compiles on its own): KEY_BITS,
 * KEY_KIND (common.cl); WG (work-items of a filter or gather group), UNR
 * (vectors a work-item loads a round), LSEG (pairs of a group's local segment), FWG
 * (work-items of the one-group kernels), SORTCAP (pairs the final sort holds:
 * the largest k, a power of two, at least FWG), DB (bits of a digit of the
 * one-group selection, 8 or 11), HC (copies of its histogram), BAND (1: the
 * selection's filter, above), RANGE and OFS (the band filter's test and its
 * members' keys, at sf_filter), CHUNKED (1: a
 * work-item of the one-group selection takes a contiguous run of candidates
 * instead of every FWG-th; measured slower on the H200, kept for tuning). */
#ifndef CLTOPK_COMMON_CL
#include "common.cl"
#endif

#ifndef WG
#define WG 256
#endif
#ifndef UNR
#define UNR 4
#endif
#ifndef LSEG
#define LSEG 1024
#endif
#ifndef FWG
#define FWG 256
#endif
#ifndef SORTCAP
#define SORTCAP 2048
#endif
#ifndef HC
#define HC 4
#endif
#ifndef RANGE
#define RANGE 0 /* BAND, sparse: the key's band test by one unsigned range compare */
#endif
#ifndef BAND
#define BAND 0
#endif
#ifndef OFS
#define OFS 1 /* BAND: a member's key stored as (u - L) << z (below) */
#endif

#if KEY_BITS == 64
typedef ulong2 vec_t;
#define VEC 2
#define LANES(X) X(s0, 0) X(s1, 1)
#else
typedef uint4 vec_t;
#define VEC 4
#define LANES(X) X(s0, 0) X(s1, 1) X(s2, 2) X(s3, 3)
#endif

#ifndef DB
#define DB 8 /* bits of a digit of the one-group selection */
#endif
#define TB (KEY_BITS + 32) /* bits of the composite key */
#define NB (1 << DB)

/* state words (ST_TOTAL, ST_ABOVE and ST_PATH are also radix_select.cl's
 * rs_init hand-off: from[0], from[1], from[5]) */
#define ST_TOTAL 0 /* survivors (exact, also past the buffer) */
#define ST_ABOVE 1 /* BAND: elements above the band's upper bound */
#define ST_TLO 2   /* the threshold (BAND: the lower bound): order key, low word */
#define ST_THI 3   /*   high word (64-bit keys) */
#define ST_TNI 4   /*   ~position */
#define ST_PATH 5  /* what sf_final (or rs_init) did: 1 survivors, 2 too few, 3 too many */
#define ST_SPILL 6 /* survivors that found their group's segment full */
#define ST_ULO 8   /* BAND: the upper bound, as the threshold */
#define ST_UHI 9
#define ST_UNI 10
#define ST_FBT 11  /* sf_final's fallback: the groups' tickets */
#define ST_BABOVE 12 /* BAND, the bracket (sf_band_bracket): samples above P_hi */
#define ST_BCNT 13   /*   samples in the bracket (P_lo, P_hi] */
#define ST_BBAD 14   /*   1: the bracket missed a bound (never; check=bracket) */
#define ST_WORDS 15

/* sf_sample's force argument */
#define F_NONE 0u
#define F_ALL 1u /* threshold below everything */
#define F_FEW 2u /* threshold above everything but the best possible pair */

#define SENT_I 0xFFFFFFFFu

/* composite (u, ni) >= (h, l), <= (h, l); u widened to ulong */
inline int c_ge(ulong u, uint ni, ulong h, uint l)
{
    return (u > h) | ((u == h) & (ni >= l));
}
inline int c_le(ulong u, uint ni, ulong h, uint l)
{
    return (u < h) | ((u == h) & (ni <= l));
}

/* the digit of w bits at bit s (from the bottom) of the composite (h, l) */
inline uint c_digit(ulong h, uint l, uint s, uint w)
{
    uint m = (1u << w) - 1u;
    if (s >= 32u)
        return (uint)(h >> (s - 32u)) & m;
    uint v = l >> s;
    if (s + w > 32u)
        v |= (uint)(h << (32u - s));
    return v & m;
}

/* set (ones) or clear the bits [0, z) of (h, l) */
inline void c_fill_low(ulong *h, uint *l, uint z, int ones)
{
    if (z >= 32u) {
        uint zz = z - 32u;
        ulong m = zz >= 64u ? ~0UL : ((1UL << zz) - 1UL);
        *l = ones ? 0xFFFFFFFFu : 0u;
        *h = ones ? (*h | m) : (*h & ~m);
    } else {
        uint m = z == 0u ? 0u : (0xFFFFFFFFu >> (32u - z));
        *l = ones ? (*l | m) : (*l & ~m);
    }
}

/* (h, l) with bits [s, s + w) replaced by v */
inline void c_set_digit(ulong *h, uint *l, uint v, uint s, uint w)
{
    uint m = (1u << w) - 1u;
    if (s >= 32u) {
        *h = (*h & ~((ulong)m << (s - 32u))) | ((ulong)v << (s - 32u));
    } else {
        *l = (*l & ~(m << s)) | (v << s);
        if (s + w > 32u) {
            uint sh = 32u - s;
            *h = (*h & ~((ulong)m >> sh)) | ((ulong)v >> sh);
        }
    }
}

inline uint pow2_at_least(uint x)
{
    uint p = 1u;
    while (p < x)
        p <<= 1;
    return p;
}

inline uint sf_hash(ulong seed, uint j)
{
    ulong z = seed + (ulong)(j + 1u) * 0x9E3779B97F4A7C15UL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9UL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBUL;
    return (uint)((z ^ (z >> 31)) >> 32);
}

/* candidates j: mode 0 the pair arrays cu/ci; mode 1 input element jb + j when
 * its composite is at or above (fh, fl).  Each work-item takes a contiguous run of
 * chunk_ = ceil(cnt / FWG) (so that equal digits of neighbours, e.g. the
 * positions of all-equal input, add up in the work-item's run instead of
 * contending for one bin across the group), UF loads in flight. */
#define UF 8
#ifndef CHUNKED
#define CHUNKED 0
#endif
#if CHUNKED
#define CL_FIRST_ lid * chunk_
#define CL_END_ min(cnt, b0_ + chunk_)
#define CL_STEP_ UF
#define CL_Q_ 1u
#else
#define CL_FIRST_ lid
#define CL_END_ cnt
#define CL_STEP_ FWG * UF
#define CL_Q_ FWG
#endif
#define CAND_LOOP(BODY)                                                              \
    for (uint b0_ = CL_FIRST_, e_ = CL_END_; b0_ < e_; b0_ += CL_STEP_) {              \
        okey_t cu_[UF];                                                              \
        uint ci_[UF];                                                                \
        if (mode == 0u) {                                                            \
            for (uint q_ = 0; q_ < UF; q_++) {                                       \
                uint j_ = b0_ + q_ * CL_Q_;                                          \
                if (j_ < e_) {                                                       \
                    cu_[q_] = cu[j_];                                                \
                    ci_[q_] = ci[j_];                                                \
                }                                                                    \
            }                                                                        \
        } else {                                                                     \
            for (uint q_ = 0; q_ < UF; q_++) {                                       \
                uint j_ = b0_ + q_ * CL_Q_;                                          \
                if (j_ < e_) {                                                       \
                    cu_[q_] = order_key(in[off + jb + j_], smallest);                \
                    ci_[q_] = jb + j_;                                               \
                }                                                                    \
            }                                                                        \
        }                                                                            \
        for (uint q_ = 0; q_ < UF; q_++) {                                           \
            uint j_ = b0_ + q_ * CL_Q_;                                              \
            if (j_ < e_ && (mode == 0u || c_ge((ulong)cu_[q_], ~ci_[q_], fh, fl))) { \
                okey_t u = cu_[q_];                                                  \
                uint idx = ci_[q_];                                                  \
                BODY                                                                 \
            }                                                                        \
        }                                                                            \
    }

/* local scalars of wg_topr */
#define SH_LL 0   /* lower bound: low word (~position part) */
#define SH_UL 1   /* upper bound */
#define SH_NEED 2 /* winners still to find among the candidates in [L, U] */
#define SH_A 3    /* candidates above U (all winners) */
#define SH_C 4    /* candidates in [L, U] */
#define SH_CONS 5 /* composite bits fixed by the bounds */
#define SH_GCNT 6 /* gathered */
#define SH_AH0 7  /* AND / OR of the candidates (h as two words, then l) */
#define SH_AH1 8
#define SH_AL 9
#define SH_OH0 10
#define SH_OH1 11
#define SH_OL 12
#define SH_B 13   /* the chosen bin */
#define SH_ABOVE 14 /* candidates in bins above it */
#define SH_PFX 15   /* a prefix pass comes next */
#define SH_WORDS 16
/* shl[0] lower bound h, shl[1] upper bound h */

/* The whole group: the best `rank` candidates (rank <= SORTCAP, FWG <=
 * SORTCAP).  On return su/si[0 .. rank) hold them best first (and more,
 * sorted, after them).  band (any rank up to cnt): only the candidates
 * between the final bounds, at most target, are gathered and sorted; the
 * rank-th best is then su/si[sh[SH_NEED] - 1]. */
inline void wg_topr(uint mode, uint cnt, uint jb, uint rank, uint target, uint band,
                    __global const okey_t *cu, __global const uint *ci,
                    __global const okey_t *in, ulong off, uint smallest, ulong fh, uint fl,
                    __local uint *hist, __local okey_t *su, __local uint *si, __local uint *sh,
                    __local ulong *shl)
{
    uint lid = get_local_id(0);
    uint chunk_ = (cnt + FWG - 1u) / FWG;
    if (lid == 0u) {
        shl[0] = 0UL;
        sh[SH_LL] = 0u;
        shl[1] = ~0UL;
        sh[SH_UL] = 0xFFFFFFFFu;
        sh[SH_CONS] = 0u;
        sh[SH_NEED] = rank;
        sh[SH_A] = 0u;
        sh[SH_C] = cnt;
        sh[SH_PFX] = 1u;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    /* digit passes while too many are at or above the lower bound; a prefix
     * pass (the common prefix of the candidates in [L, U], their count) first,
     * and after a digit that left more than half of them in its bin (all-equal
     * keys, or a few outliers above one value): the bounds then skip every bit
     * the candidates share */
    for (;;) {
        if (sh[SH_PFX]) {
            ulong Lh = shl[0], Uh = shl[1];
            uint Ll = sh[SH_LL], Ul = sh[SH_UL];
            barrier(CLK_LOCAL_MEM_FENCE);
            if (lid == 0u) {
                sh[SH_AH0] = sh[SH_AH1] = sh[SH_AL] = 0xFFFFFFFFu;
                sh[SH_OH0] = sh[SH_OH1] = sh[SH_OL] = 0u;
                sh[SH_C] = 0u;
            }
            barrier(CLK_LOCAL_MEM_FENCE);
            ulong ah = ~0UL, oh = 0UL;
            uint al = 0xFFFFFFFFu, ol = 0u, c = 0u;
            CAND_LOOP({
                uint ni = ~idx;
                if (c_ge((ulong)u, ni, Lh, Ll) && c_le((ulong)u, ni, Uh, Ul)) {
                    ah &= (ulong)u;
                    oh |= (ulong)u;
                    al &= ni;
                    ol |= ni;
                    c++;
                }
            })
            if (c) {
                atomic_and(&sh[SH_AH0], (uint)ah);
                atomic_and(&sh[SH_AH1], (uint)(ah >> 32));
                atomic_and(&sh[SH_AL], al);
                atomic_or(&sh[SH_OH0], (uint)oh);
                atomic_or(&sh[SH_OH1], (uint)(oh >> 32));
                atomic_or(&sh[SH_OL], ol);
                atomic_add(&sh[SH_C], c);
            }
            barrier(CLK_LOCAL_MEM_FENCE);
            if (lid == 0u && sh[SH_C]) {
                ah = ((ulong)sh[SH_AH1] << 32) | sh[SH_AH0];
                oh = ((ulong)sh[SH_OH1] << 32) | sh[SH_OH0];
                al = sh[SH_AL];
                ol = sh[SH_OL];
                ulong dh = ah ^ oh;
                uint dl = al ^ ol, cp;
                if (dh)
                    cp = (uint)clz(dh) - (64u - (uint)KEY_BITS);
                else if (dl)
                    cp = (uint)KEY_BITS + (uint)clz(dl);
                else
                    cp = TB;
                /* L = prefix : zeros, U = prefix : ones */
                c_fill_low(&ah, &al, TB - cp, 0);
                c_fill_low(&oh, &ol, TB - cp, 1);
                shl[0] = ah;
                sh[SH_LL] = al;
                shl[1] = oh;
                sh[SH_UL] = ol;
                sh[SH_CONS] = cp;
            }
            if (lid == 0u)
                sh[SH_PFX] = 0u;
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        uint A = sh[SH_A], C = sh[SH_C], cons = sh[SH_CONS], need = sh[SH_NEED];
        if ((band ? C : A + C) <= target || cons >= TB)
            break;
        ulong Lh = shl[0], Uh = shl[1];
        uint Ll = sh[SH_LL], Ul = sh[SH_UL];
        uint w = TB - cons < DB ? TB - cons : DB, s = TB - cons - w, nb = 1u << w;
        for (uint b = lid; b < NB * HC; b += FWG)
            hist[b] = 0u;
        barrier(CLK_LOCAL_MEM_FENCE);
        {
            uint hc = lid % HC, prev = 0u, run = 0u;
            CAND_LOOP({
                uint ni = ~idx;
                if (c_ge((ulong)u, ni, Lh, Ll) && c_le((ulong)u, ni, Uh, Ul)) {
                    uint d = c_digit((ulong)u, ni, s, w);
                    if (run && d == prev) {
                        run++;
                    } else {
                        if (run)
                            atomic_add(&hist[prev * HC + hc], run);
                        prev = d;
                        run = 1u;
                    }
                }
            })
            if (run)
                atomic_add(&hist[prev * HC + hc], run);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        /* the bin of the need-th candidate from the top: each work-item sums a
         * run of bins (the first the top ones), a scan over the work-items
         * (in si, free until the gather), then the one whose run holds it */
        uint per = (nb + FWG - 1u) / FWG, top = lid * per;
        uint sum = 0u;
        for (uint i = 0; i < per; i++) {
            uint t = top + i;
            if (t < nb)
                for (uint c = 0; c < HC; c++)
                    sum += hist[(nb - 1u - t) * HC + c];
        }
        si[lid] = sum;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint o = 1u; o < FWG; o <<= 1) {
            uint v = lid >= o ? si[lid - o] : 0u;
            barrier(CLK_LOCAL_MEM_FENCE);
            si[lid] += v;
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        uint above = si[lid] - sum;
        if (above < need && above + sum >= need) {
            for (uint i = 0; i < per; i++) {
                uint b = nb - 1u - (top + i), hb = 0u;
                for (uint c = 0; c < HC; c++)
                    hb += hist[b * HC + c];
                if (above + hb >= need) {
                    sh[SH_B] = b;
                    sh[SH_ABOVE] = above;
                    sh[SH_C] = hb;
                    break;
                }
                above += hb;
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid == 0u) {
            uint b = sh[SH_B];
            above = sh[SH_ABOVE];
            sh[SH_A] = A + above;
            sh[SH_NEED] = need - above;
            c_set_digit(&Lh, &Ll, b, s, w);
            c_set_digit(&Uh, &Ul, b, s, w);
            shl[0] = Lh;
            sh[SH_LL] = Ll;
            shl[1] = Uh;
            sh[SH_UL] = Ul;
            sh[SH_CONS] = cons + w;
            sh[SH_PFX] = sh[SH_C] * 2u > C;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    /* gather everything at or above the lower bound (band: and at or below
     * the upper) */
    ulong Lh = shl[0], Uh = shl[1];
    uint Ll = sh[SH_LL], Ul = sh[SH_UL];
    if (band)
        rank = 1u;
    if (lid == 0u)
        sh[SH_GCNT] = 0u;
    barrier(CLK_LOCAL_MEM_FENCE);
    CAND_LOOP({
        if (c_ge((ulong)u, ~idx, Lh, Ll) && (!band || c_le((ulong)u, ~idx, Uh, Ul))) {
            uint p = atomic_inc(&sh[SH_GCNT]);
            if (p < SORTCAP) {
                su[p] = u;
                si[p] = idx;
            }
        }
    })
    barrier(CLK_LOCAL_MEM_FENCE);
    uint g = sh[SH_GCNT];
    if (g > SORTCAP)
        g = SORTCAP; /* never: the bound holds at most target <= SORTCAP */
    uint P = pow2_at_least(g > rank ? g : rank);
    if (P > SORTCAP)
        P = SORTCAP; /* never: the host keeps rank <= SORTCAP */
    for (uint j = g + lid; j < P; j += FWG) {
        su[j] = (okey_t)0;
        si[j] = SENT_I;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    /* bitonic sort of P pairs, best first */
    for (uint size = 2u; size <= P; size <<= 1) {
        for (uint stride = size >> 1; stride > 0u; stride >>= 1) {
            for (uint t = lid; t < P / 2u; t += FWG) {
                uint a = 2u * t - (t & (stride - 1u)), b = a + stride;
                okey_t ua = su[a], ub = su[b];
                uint ia = si[a], ib = si[b];
                int desc = (a & size) == 0u;
                int sw = desc ? pair_better(ub, ib, ua, ia) : pair_better(ua, ia, ub, ib);
                if (sw) {
                    su[a] = ub;
                    si[a] = ib;
                    su[b] = ua;
                    si[b] = ia;
                }
            }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
    }
}

/* the pair at word w of the state (ST_TLO: the threshold, ST_ULO: the upper
 * bound) */
inline void load_bound(__global const uint *st, uint w, ulong *th, uint *tl)
{
#if KEY_BITS == 64
    *th = ((ulong)st[w + 1u] << 32) | (ulong)st[w];
#else
    *th = (ulong)st[w];
#endif
    *tl = st[w + 2u];
}
#define load_threshold(ST, TH, TL) load_bound((ST), ST_TLO, (TH), (TL))

/* P0 without a sample: the state, and a threshold below everything (force
 * F_ALL or a tiny input) or above every pair but the best possible one (F_FEW,
 * testing).  (A kernel of its own: POCL miscompiles a kernel that returns
 * before its barriers.) */
__kernel void sf_init(uint force, __global uint *st)
{
    uint lid = get_global_id(0);
    if (lid < ST_WORDS) {
        uint v = 0u;
        if (force == F_FEW && lid >= ST_TLO && lid <= ST_TNI)
            v = 0xFFFFFFFFu;
        if (lid >= ST_ULO && lid <= ST_UNI)
            v = 0xFFFFFFFFu; /* BAND: no upper bound */
#if KEY_BITS == 32
        if (lid == ST_THI)
            v = 0u;
#endif
        st[lid] = v;
    }
}

/* the group's WG pairs (one a work-item) sorted best first into gu / gi */
inline void group_sort(okey_t u, uint idx, __local okey_t *gu, __local uint *gi)
{
    uint lid = get_local_id(0);
    gu[lid] = u;
    gi[lid] = idx;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint size = 2u; size <= WG; size <<= 1) {
        for (uint stride = size >> 1; stride > 0u; stride >>= 1) {
            if (lid < WG / 2u) {
                uint a = 2u * lid - (lid & (stride - 1u)), b = a + stride;
                okey_t ua = gu[a], ub = gu[b];
                uint ia = gi[a], ib = gi[b];
                int desc = (a & size) == 0u;
                int sw = desc ? pair_better(ub, ib, ua, ia) : pair_better(ua, ia, ub, ib);
                if (sw) {
                    gu[a] = ub;
                    gi[a] = ib;
                    gu[b] = ua;
                    gi[b] = ia;
                }
            }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
    }
}

/* P0a: the s samples, one a work-item: sample j at a hashed offset inside
 * stratum j = [j n / s, (j + 1) n / s) (many groups: the random reads of one
 * group alone are slow).  Each group keeps only its best rr = min(r, WG)
 * samples, sorted (bitonic in local memory), at group * rr: the r-th best of
 * all samples is the r-th best of those, and sf_sample reads s / WG * rr
 * pairs instead of s.  A group short of samples pads with the sentinel,
 * which is worse than every pair. */
/* a unit's best so far (*u, *pos) <- (w, i), i after *pos, where it is the
 * first (*pos SENT_I) or a larger order key (an equal key keeps the smaller
 * position); by selects, not branches: nothing chosen by a branch lives
 * across group_sort's barriers (for POCL 5 and 6) */
inline void sf_unit_best(okey_t w, uint i, okey_t *u, uint *pos)
{
    int b = *pos == SENT_I || w > *u;
    *u = b ? w : *u;
    *pos = b ? i : *pos;
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void sf_gather(__global const okey_t *in, ulong off, uint n, uint smallest, uint s,
               ulong seed, uint rr, uint bm, uint sub, __global okey_t *sk,
               __global uint *si_g, uint unit)
{
    __local okey_t gu[WG];
    __local uint gi[WG];
    uint j = get_global_id(0), lid = get_local_id(0);
    okey_t u = (okey_t)0;
    uint pos = SENT_I;
    if (j < s && unit <= 1u) {
        ulong lo = (ulong)j * n / s, hi = (ulong)(j + 1u) * n / s;
        pos = (uint)lo + mul_hi(sf_hash(seed, j), (uint)(hi - lo));
        u = order_key(in[off + pos], smallest);
    } else if (j < s) {
        /* (top-k) the sample is the best element of a unit: `unit` (a power
         * of two) consecutive elements from a multiple of unit in the buffer
         * (the first and last units of the input may be shorter); unit
         * number U lies in stratum j of the s equal strata of the units */
        uint h = (uint)(off & (ulong)(unit - 1u));
        ulong nu = ((ulong)n + h + unit - 1u) / unit;
        ulong lo = (ulong)j * nu / s, hi = (ulong)(j + 1u) * nu / s;
        ulong U = lo + mul_hi(sf_hash(seed, j), (uint)(hi - lo));
        long a = (long)(U * unit) - (long)h; /* its first element, from the input's start */
        if (a >= 0 && a + (long)unit <= (long)n && unit % VEC == 0u) {
            /* a whole unit: 16-byte loads, aligned (off + a is a multiple of unit) */
            for (uint v = 0; v < unit; v += VEC) {
                vec_t x = *(__global const vec_t *)(in + off + (ulong)a + v);
#define SF_UNIT_LANE(S, L) sf_unit_best(order_key(x.S, smallest), (uint)a + v + (L), &u, &pos);
                LANES(SF_UNIT_LANE)
#undef SF_UNIT_LANE
            }
        } else {
            for (uint e = 0; e < unit; e++) {
                long i = a + (long)e;
                if (i >= 0 && i < (long)n)
                    sf_unit_best(order_key(in[off + (ulong)i], smallest), (uint)i, &u, &pos);
            }
        }
    }
    group_sort(u, pos, gu, gi);
    if (lid < rr) {
        sk[get_group_id(0) * rr + lid] = gu[lid];
        si_g[get_group_id(0) * rr + lid] = gi[lid];
    }
    /* the band's subsample (bm > 0, a power of two dividing WG, with rr =
     * WG): every bm-th pair of the group's sorted run, at sub + group * (WG /
     * bm), so that a run's subsample is sorted too */
    if (bm && (lid & (bm - 1u)) == 0u) {
        uint q = sub + get_group_id(0) * (WG / bm) + lid / bm;
        sk[q] = gu[lid];
        si_g[q] = gi[lid];
    }
}

#if !BAND /* (sf_reduce: only in the top-k calls' programs) */
/* P1b: each group's best rr = min(k, WG) survivors of its WG, sorted, at
 * group * rr (the top k of the survivors is among them), so that sf_final
 * reads ceil(m / WG) * rr pairs instead of m.  Only when the survivors will
 * serve (k <= m <= cap); groups past m write nothing. */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void sf_reduce(__global const okey_t *cu, __global const uint *ci, __global const uint *st,
               uint k, uint cap, uint rr, __global okey_t *ru, __global uint *ri)
{
    __local okey_t gu[WG];
    __local uint gi[WG];
    uint lid = get_local_id(0), g = get_group_id(0);
    uint m = st[ST_TOTAL];
    uint j = g * WG + lid;
    int serve = m >= k && m <= cap && g * WG < m;
    okey_t u = (okey_t)0;
    uint idx = SENT_I;
    if (serve && j < m) {
        u = cu[j];
        idx = ci[j];
    }
    group_sort(u, idx, gu, gi);
    if (serve && lid < rr) {
        ru[g * rr + lid] = gu[lid];
        ri[g * rr + lid] = gi[lid];
    }
}
#endif /* !BAND */

#if !BAND /* (sf_sample: only in the top-k calls' programs) */
/* P0b: the state and the threshold, the r-th best (1 <= r <= SORTCAP) of the
 * s samples */
__kernel __attribute__((reqd_work_group_size(FWG, 1, 1)))
void sf_sample(__global const okey_t *in, ulong off, uint n, uint smallest, uint s, uint r,
               __global const okey_t *sk, __global const uint *si_g, __global uint *st)
{
    __local uint hist[NB * HC];
    __local okey_t su[SORTCAP];
    __local uint si[SORTCAP];
    __local uint sh[SH_WORDS];
    __local ulong shl[2];
    uint lid = get_local_id(0);
    (void)n;
    uint target = pow2_at_least(r) * 2u;
    target = target < 256u ? 256u : target;
    target = target > SORTCAP ? SORTCAP : target;
    wg_topr(0u, s, 0u, r, target, 0u, sk, si_g, in, off, smallest, 0UL, 0u, hist, su, si, sh, shl);
    if (lid < ST_WORDS) {
        okey_t tu = su[r - 1u];
        uint v = 0u;
        if (lid == ST_TLO)
            v = (uint)tu;
#if KEY_BITS == 64
        if (lid == ST_THI)
            v = (uint)(tu >> 32);
#endif
        if (lid == ST_TNI)
            v = ~si[r - 1u];
        st[lid] = v;
    }
}
#endif /* !BAND */

#if BAND /* (sf_band_sample: only in the band calls' programs) */
/* BAND, P0b: the bounds of a selection's band, the samples of ranks r_up and
 * r_lo (0-based, best first) among the first `kept` pairs of sk / si_g from
 * `base` on: group 0 the upper bound (has_up 0: none, above everything),
 * group 1 the lower (has_lo 0: none, below everything); group 0 also clears
 * the counts.  Two groups of FWG.
 *
 * The bracket (host: bm > 0) runs it twice around sf_band_bracket:
 *   mode 1  over the subsample (every bm-th sample of each sorted run): the
 *           pairs P_hi and P_lo of the ranks the host derived, written where
 *           the bounds go (sf_band_bracket reads them there); group 0 also
 *           clears the bracket's counts
 *   mode 2  over the bracket (P_lo, P_hi]: its count (at most `kept`, the
 *           buffer) and the samples above it from the state, the ranks r_up
 *           and r_lo less those, so that the bounds are the samples of ranks
 *           r_up and r_lo exactly as mode 0 finds them over every sample.  A
 *           state that contradicts the bracket's bounds (never: the host
 *           sizes the buffer by them) drops both bounds, which leaves the
 *           band the whole input: slower, still exact (and sets ST_BBAD).
 *   mode 0  the one step over every sample (and clears the bracket's counts,
 *           which check=bracket reads) */
__kernel __attribute__((reqd_work_group_size(FWG, 1, 1)))
void sf_band_sample(uint kept, uint r_up, uint has_up, uint r_lo, uint has_lo, uint mode,
                    uint base, __global const okey_t *sk, __global const uint *si_g,
                    __global uint *st)
{
    __local uint hist[NB * HC];
    __local okey_t su[SORTCAP];
    __local uint si[SORTCAP];
    __local uint sh[SH_WORDS];
    __local ulong shl[2];
    uint lid = get_local_id(0), lower = get_group_id(0) == 1u;
    uint has = lower ? has_lo : has_up, r = lower ? r_lo : r_up, bad = 0u;
    if (mode == 2u) {
        uint cnt = st[ST_BCNT], above = st[ST_BABOVE];
        bad = cnt > kept || (has_up && (r_up < above || r_up - above >= cnt)) ||
              (has_lo && (r_lo < above || r_lo - above >= cnt));
        kept = cnt < kept ? cnt : kept;
        has = bad ? 0u : has;
        r = has ? r - above : 0u;
    }
    /* (always: barriers stay out of branches) */
    wg_topr(0u, kept, 0u, has ? r + 1u : 1u, SORTCAP, 1u, sk + base, si_g + base, sk, 0UL, 0u,
            0UL, 0u, hist, su, si, sh, shl);
    if (lid == 0u) {
        uint w = lower ? ST_TLO : ST_ULO;
        okey_t tu = lower ? (okey_t)0 : ~(okey_t)0;
        uint ni = lower ? 0u : 0xFFFFFFFFu;
        if (has) {
            uint j = sh[SH_NEED] - 1u;
            tu = su[j];
            ni = ~si[j];
        }
        st[w] = (uint)tu;
#if KEY_BITS == 64
        st[w + 1u] = (uint)(tu >> 32);
#else
        st[w + 1u] = 0u;
#endif
        st[w + 2u] = ni;
        if (!lower) {
            st[ST_TOTAL] = 0u;
            st[ST_ABOVE] = 0u;
            st[ST_PATH] = 0u;
            st[ST_SPILL] = 0u;
            if (mode != 2u) {
                st[ST_BABOVE] = 0u;
                st[ST_BCNT] = 0u;
            }
            st[ST_BBAD] = bad;
        }
    }
}

/* BAND, the bracket (between sf_band_sample's modes 1 and 2): over the cnt
 * samples of sk / si_g, a work-item each, the count of those strictly above
 * P_hi (the upper bound's words) into ST_BABOVE, and those in (P_lo, P_hi]
 * (P_lo the lower bound's words; the sentinel's (0, 0) where there is none,
 * which keeps every sample but the padding) appended to bu / bi, at most
 * cap (ST_BCNT counts them all): each group compacts its members in local
 * memory and reserves its place with one global atomic. */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void sf_band_bracket(uint cnt, uint cap, __global const okey_t *sk, __global const uint *si_g,
                     __global uint *st, __global okey_t *bu, __global uint *bi)
{
    __local okey_t lu[WG];
    __local uint li[WG];
    __local uint lcnt, labove, lbase;
    uint lid = get_local_id(0), j = get_global_id(0);
    ulong hh, lh;
    uint hl, ll;
    load_bound(st, ST_ULO, &hh, &hl);
    load_bound(st, ST_TLO, &lh, &ll);
    if (lid == 0u) {
        lcnt = 0u;
        labove = 0u;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (j < cnt) {
        okey_t u = sk[j];
        uint idx = si_g[j];
        if (!c_le((ulong)u, ~idx, hh, hl)) {
            atomic_inc(&labove);
        } else if (!c_le((ulong)u, ~idx, lh, ll)) {
            uint p = atomic_inc(&lcnt);
            lu[p] = u;
            li[p] = idx;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0u) {
        if (labove)
            atomic_add(&st[ST_BABOVE], labove);
        lbase = lcnt ? atomic_add(&st[ST_BCNT], lcnt) : 0u;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    uint m = lcnt, q = lbase + lid;
    if (lid < m && q < cap) {
        bu[q] = lu[lid];
        bi[q] = li[lid];
    }
}
#endif /* BAND */

/* the tile that a group's t-th turn reads (t = group, group + groups, ...):
 * (pa t + pb) mod ntiles, pa prime to ntiles.  (On the H200 the tiles in
 * order, t itself, read at 1.17x the floor against 1.15x, and a permutation
 * within each round of `groups` consecutive tiles at 1.26x: bench/RESULTS.md) */
inline uint sf_tile(uint t, uint ntiles, ulong pa, ulong pb)
{
    return ntiles ? (uint)((pa * (ulong)t + pb) % (ulong)ntiles) : 0u;
}

/* the step from a group's tile to its next: (pa groups) mod ntiles, so that
 * a loop takes one 64-bit remainder, not one a tile (some 70 instructions on
 * NVIDIA's GPUs beside a tile's 300; measured no faster, bench/RESULTS.md,
 * but no slower) */
inline uint sf_tile_step(uint groups, uint ntiles, ulong pa)
{
    return ntiles ? (uint)((pa * (ulong)groups) % (ulong)ntiles) : 0u;
}
/* one statement: for t = group, group + groups, ... below ntiles, tile the
 * t-th turn's: the last tile plus the step, less ntiles where it passes
 * (both below ntiles, itself below 2^31: a tile is at least WG UNR vectors
 * of a 32-bit count).  The first tile and the step are computed before the
 * loop, where ntiles may be 0: sf_tile and sf_tile_step divide by it only
 * when it is not. */
#define SF_TILE_LOOP(t, tile, ntiles, pa, pb, groups)                              \
    for (uint t = get_group_id(0), tile = sf_tile(t, ntiles, pa, pb),              \
              tile##_step = sf_tile_step(groups, ntiles, pa);                      \
         t < ntiles; t += groups,                                                  \
              tile = tile + tile##_step >= ntiles ? tile + tile##_step - ntiles    \
                                                  : tile + tile##_step)

/* P1: the filtering read.  Vector v of the aligned body is element
 * head + v * VEC; elements before head and after the body are read one by
 * one by the last group.  Tile t (WG * UNR vectors) is the (pa * t + pb) %
 * ntiles-th; group g takes t = g, g + groups, ... */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void sf_filter(__global const okey_t *in, ulong off, uint n, uint smallest, uint head,
               uint nvec, uint ntiles, ulong pa, ulong pb, uint cap, uint dense,
               __global uint *st, __global okey_t *cu, __global uint *ci)
{
    __local okey_t lu[LSEG];
    __local uint li[LSEG];
    __local uint lcnt, lbase;
    uint lid = get_local_id(0);
    ulong th;
    uint tl;
    load_threshold(st, &th, &tl);
    okey_t tu = (okey_t)th;
#if BAND
    /* a dense band (dense: more members than half the groups' segments hold;
     * or whole tiles of sorted input): each tile's members are counted first
     * and go to the segment together; a full segment goes to the shared
     * buffer with one global atomic, a tile larger than the segment straight
     * there; the tile counter is double-buffered by tile parity, so that a
     * tile needs one barrier.  A sparse band keeps sf_filter's way (a local
     * atomic a member, a global one a member past a full segment). */
    __local uint labove, ltile[2], ltbase;
    ulong uh;
    uint ul, above = 0u, par = 0u;
    load_bound(st, ST_ULO, &uh, &ul);
    okey_t uu = (okey_t)uh;
#if OFS
    /* a member is stored with the key (u - tu) << z, z the leading zeros of
     * uu - tu within KEY_BITS: the same order among the members (every one
     * has tu <= u <= uu), and the band's spread in the top bits, so that the
     * radix select's first digit splits it (a narrow band's keys share their
     * top bits, whose digits would each cost a pass that hardly narrows).
     * Only the order of the candidates is read after this: every output is
     * the input's bits at a position. */
    okey_t dz_ = uu - tu;
    uint zs = dz_ ? (uint)clz(dz_) : 0u;
#define MKEY(U) (((U) - tu) << zs)
#else
#define MKEY(U) (U)
#endif
#if RANGE
    okey_t du = uu - tu; /* the band's keys: u - tu <= du (tu <= uu) */
#elif KEY_BITS == 32
    /* the bounds as composite words (the sparse loop below) */
    ulong cl64 = ((ulong)tu << 32) | (ulong)tl, cu64 = ((ulong)uu << 32) | (ulong)ul;
#endif
    if (lid == 0u) {
        labove = 0u;
        ltile[0] = 0u;
    }
#endif
    if (lid == 0u)
        lcnt = 0u;
    barrier(CLK_LOCAL_MEM_FENCE);

#define KEEP(U, I)                                                                 \
    do {                                                                           \
        uint p_ = atomic_inc(&lcnt);                                               \
        if (p_ < LSEG) {                                                           \
            lu[p_] = MKEY(U);                                                      \
            li[p_] = (I);                                                          \
        } else {                                                                   \
            uint q_ = atomic_inc(&st[ST_TOTAL]);                                   \
            atomic_inc(&st[ST_SPILL]);                                             \
            if (q_ < cap) {                                                        \
                cu[q_] = MKEY(U);                                                  \
                ci[q_] = (I);                                                      \
            }                                                                      \
        }                                                                          \
    } while (0)
/* an element at or above the threshold: BAND keeps it when it is at or below
 * the upper bound too, and counts it above the band otherwise */
#if BAND
#define TAKE(U, I)                                                                 \
    do {                                                                           \
        if ((U) < uu || ((U) == uu && ~(I) <= ul))                                 \
            KEEP((U), (I));                                                        \
        else                                                                       \
            above++;                                                               \
    } while (0)
#else
#define TAKE(U, I) KEEP((U), (I))
#define MKEY(U) (U)
    (void)dense;
#endif

    __global const vec_t *vp = (__global const vec_t *)(in + off + head);
    uint groups = get_num_groups(0);
#if BAND
/* 1: (U, I) is in the band; 2: above it; 0: below */
#define BAND_CLASS(U, I)                                                           \
    (((U) > tu || ((U) == tu && ~(I) >= tl))                                       \
         ? (((U) < uu || ((U) == uu && ~(I) <= ul)) ? 1u : 2u)                     \
         : 0u)
    if (dense) {
        /* fill: the segment's pairs (the same in every work-item) */
        uint fill = 0u;
        SF_TILE_LOOP(t, tile, ntiles, pa, pb, groups) {
            uint v0 = tile * (uint)(WG * UNR) + lid;
            vec_t x[UNR];
#pragma unroll
            for (uint q = 0; q < UNR; q++) {
                uint v = v0 + q * WG;
                if (v < nvec)
                    x[q] = vp[v];
            }
            uint c = 0u;
#pragma unroll
            for (uint q = 0; q < UNR; q++) {
                uint v = v0 + q * WG;
                if (v < nvec) {
                    uint base = head + v * VEC;
#define LANE(F, E)                                                                 \
                    {                                                              \
                        okey_t u_ = order_key(x[q].F, smallest);                   \
                        uint k_ = BAND_CLASS(u_, base + E);                        \
                        c += k_ == 1u;                                             \
                        above += k_ == 2u;                                         \
                    }
                    LANES(LANE)
#undef LANE
                }
            }
            uint w = c ? atomic_add(&ltile[par], c) : 0u;
            barrier(CLK_LOCAL_MEM_FENCE);
            uint T = ltile[par];
            if (lid == 0u)
                ltile[par ^ 1u] = 0u;
            if (T && fill + T > (uint)LSEG) {
                /* the segment to the shared buffer first */
                if (lid == 0u) {
                    ltbase = atomic_add(&st[ST_TOTAL], fill);
                    atomic_add(&st[ST_SPILL], fill);
                }
                barrier(CLK_LOCAL_MEM_FENCE);
                for (uint j = lid; j < fill; j += WG)
                    if (ltbase + j < cap) {
                        cu[ltbase + j] = lu[j];
                        ci[ltbase + j] = li[j];
                    }
                barrier(CLK_LOCAL_MEM_FENCE);
                fill = 0u;
            }
            int direct = T > (uint)LSEG; /* a tile larger than the segment */
            if (direct) {
                if (lid == 0u) {
                    ltbase = atomic_add(&st[ST_TOTAL], T);
                    atomic_add(&st[ST_SPILL], T);
                }
                barrier(CLK_LOCAL_MEM_FENCE);
            }
            if (c) {
                w += direct ? ltbase : fill;
#pragma unroll
                for (uint q = 0; q < UNR; q++) {
                    uint v = v0 + q * WG;
                    if (v < nvec) {
                        uint base = head + v * VEC;
#define LANE(F, E)                                                                 \
                        {                                                          \
                            okey_t u_ = order_key(x[q].F, smallest);               \
                            uint i_ = base + E;                                    \
                            if (BAND_CLASS(u_, i_) == 1u) {                        \
                                if (!direct) {                                     \
                                    lu[w] = MKEY(u_);                              \
                                    li[w] = i_;                                    \
                                } else if (w < cap) {                              \
                                    cu[w] = MKEY(u_);                              \
                                    ci[w] = i_;                                    \
                                }                                                  \
                                w++;                                               \
                            }                                                      \
                        }
                        LANES(LANE)
#undef LANE
                    }
                }
            }
            if (!direct)
                fill += T;
            par ^= 1u;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid == 0u)
            lcnt = fill;
        barrier(CLK_LOCAL_MEM_FENCE);
    } else
#undef BAND_CLASS
#endif
    SF_TILE_LOOP(t, tile, ntiles, pa, pb, groups) {
        uint v0 = tile * (uint)(WG * UNR) + lid;
        vec_t x[UNR];
#pragma unroll
        for (uint q = 0; q < UNR; q++) {
            uint v = v0 + q * WG;
            if (v < nvec)
                x[q] = vp[v];
        }
#pragma unroll
        for (uint q = 0; q < UNR; q++) {
            uint v = v0 + q * WG;
            if (v < nvec) {
                uint base = head + v * VEC;
#if BAND && RANGE
                /* the key against the band by one unsigned compare (taken by
                 * the band's members only, about 2% at the median), the
                 * position only where the key is one of the bounds'; above
                 * the band: a larger key than the upper bound's, or its key
                 * with a smaller position */
#define LANE(F, E)                                                                 \
                {                                                                  \
                    okey_t u_ = order_key(x[q].F, smallest);                       \
                    above += u_ > uu;                                              \
                    if (u_ - tu <= du) {                                           \
                        uint i_ = base + E;                                        \
                        if ((u_ != tu || ~i_ >= tl) && (u_ != uu || ~i_ <= ul))    \
                            KEEP(u_, i_);                                          \
                        else if (u_ == uu && ~i_ > ul)                             \
                            above++;                                               \
                    }                                                              \
                }
#elif BAND && KEY_BITS == 32
                /* the composite (key, ~position) as one 64-bit word: in the
                 * band and above it by three compares, no branch but the
                 * member's (at the median half the elements pass the
                 * threshold, and the branches cost more than the read) */
#define LANE(F, E)                                                                 \
                {                                                                  \
                    okey_t u_ = order_key(x[q].F, smallest);                       \
                    uint i_ = base + E;                                            \
                    ulong c_ = ((ulong)u_ << 32) | (ulong)~i_;                     \
                    above += c_ > cu64;                                            \
                    if (c_ >= cl64 && c_ <= cu64)                                  \
                        KEEP(u_, i_);                                              \
                }
#else
#define LANE(F, E)                                                                 \
                {                                                                  \
                    okey_t u_ = order_key(x[q].F, smallest);                       \
                    if (u_ >= tu) {                                                \
                        uint i_ = base + E;                                        \
                        if (u_ > tu || ~i_ >= tl)                                  \
                            TAKE(u_, i_);                                          \
                    }                                                              \
                }
#endif
                LANES(LANE)
#undef LANE
            }
        }
    }
    if (get_group_id(0) == groups - 1u) {
        uint tail0 = head + nvec * VEC;
        for (uint j = lid; j < head + (n - tail0); j += WG) {
            uint i = j < head ? j : tail0 + (j - head);
            okey_t u = order_key(in[off + i], smallest);
            if (c_ge((ulong)u, ~i, th, tl))
                TAKE(u, i);
        }
    }
#undef KEEP
#undef TAKE
#undef MKEY
#if BAND
    if (above)
        atomic_add(&labove, above);
#endif
    barrier(CLK_LOCAL_MEM_FENCE);
#if BAND
    if (lid == 0u && labove)
        atomic_add(&st[ST_ABOVE], labove);
#endif
    uint c = lcnt < LSEG ? lcnt : LSEG;
    if (lid == 0u)
        lbase = c ? atomic_add(&st[ST_TOTAL], c) : 0u;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint j = lid; j < c; j += WG) {
        uint q = lbase + j;
        if (q < cap) {
            cu[q] = lu[j];
            ci[q] = li[j];
        }
    }
}

/* the group's output: the input's bits (want & 1) and positions + base
 * (want & 2) of the winners si[skip .. k) at 0 .. k - 1 - skip */
inline void sf_write(uint k, uint skip, __local const uint *si, __global const okey_t *in,
                     ulong off, uint want, __global okey_t *out_keys, __global long *out_index,
                     ulong base)
{
    for (uint j = skip + get_local_id(0); j < k; j += FWG) {
        uint idx = si[j];
        if (want & 1u)
            out_keys[j - skip] = in[off + idx];
        if (want & 2u)
            out_index[j - skip] = (long)(base + idx);
    }
}

#if !BAND /* (sf_final: only in the top-k calls' programs) */
/* P2: the exact top-k (survivors, or the input when they cannot serve) and
 * the output: the input's bits (want & 1) and positions + base (want & 2) of
 * the winners skip .. k - 1, at 0 .. k - 1 - skip (a selection of rank
 * k - 1 writes the last alone).  Launched as G groups: with the survivors
 * (path 1) group 0 alone selects; when they cannot serve (path 2: fewer than
 * k, the whole input; path 3: more than the buffer, the input at or above T)
 * and G > 1, group g selects the best k of its slice [g n / G, (g + 1) n / G)
 * into cu / ci at g k (the survivors are of no use then; the host keeps G k
 * within the buffer), and the group that takes the last ticket selects the
 * best k of those G k.  Every group runs the same two rounds of one wg_topr
 * (a group with nothing to do selects 0 of 0; one copy of its code, which POCL
 * then compiles once), so that no barrier is in a branch or after a return. */
__kernel __attribute__((reqd_work_group_size(FWG, 1, 1)))
void sf_final(__global const okey_t *in, ulong off, uint n, uint smallest, uint k, uint cap,
              uint rr, __global okey_t *cu, __global uint *ci, __global uint *st,
              uint want, __global okey_t *out_keys, __global long *out_index, ulong base,
              uint skip)
{
    __local uint hist[NB * HC];
    __local okey_t su[SORTCAP];
    __local uint si[SORTCAP];
    __local uint sh[SH_WORDS];
    __local ulong shl[2];
    __local uint last;
    uint lid = get_local_id(0), g = get_group_id(0), G = get_num_groups(0);
    uint m = st[ST_TOTAL];
    ulong th;
    uint tl;
    load_threshold(st, &th, &tl);
    uint mode, cnt, path;
    if (m >= k && m <= cap) {
        mode = 0u, path = 1u; /* the survivors (sf_reduce's best of each group) */
        cnt = rr ? (m + WG - 1u) / WG * rr : m;
    } else if (m >= k) {
        mode = 1u, cnt = n, path = 3u; /* too many for the buffer: the input >= T */
    } else {
        mode = 1u, cnt = n, path = 2u; /* too few: the whole input */
        th = 0UL;
        tl = 0u;
    }
    if (lid == 0u && g == 0u)
        st[ST_PATH] = path;
    uint target = pow2_at_least(k) * 2u;
    target = target < 256u ? 256u : target;
    target = target > SORTCAP ? SORTCAP : target;
    uint split = mode == 1u && G > 1u;
    /* round 0: the survivors (group 0) or a slice (split); round 1: the last
     * group's merge */
    for (uint ph = 0u; ph < 2u; ph++) {
        /* (the bound th, tl filters mode 1's input alone: round 1 is mode 0) */
        uint md = ph ? 0u : mode, jb = 0u, c1 = 0u, r1 = 0u;
        if (ph) {
            c1 = last ? G * k : 0u;
            r1 = last ? k : 0u;
        } else if (split) {
            jb = (uint)((ulong)n * g / G);
            c1 = (uint)((ulong)n * (g + 1u) / G) - jb;
            r1 = k;
        } else if (g == 0u) {
            c1 = cnt;
            r1 = k;
        }
        wg_topr(md, c1, jb, r1, target, 0u, cu, ci, in, off, smallest, th, tl, hist, su, si, sh,
                shl);
        if (ph ? last : g == 0u && !split)
            sf_write(k, skip, si, in, off, want, out_keys, out_index, base);
        if (!ph && split) /* the slice's best k (sentinels where it has fewer) */
            for (uint j = lid; j < k; j += FWG) {
                cu[g * k + j] = su[j];
                ci[g * k + j] = si[j];
            }
        mem_fence(CLK_GLOBAL_MEM_FENCE);
        barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
        if (lid == 0u && !ph)
            last = split && atomic_inc(&st[ST_FBT]) == G - 1u;
        barrier(CLK_LOCAL_MEM_FENCE);
        mem_fence(CLK_GLOBAL_MEM_FENCE);
    }
}
#endif /* !BAND */

#if BAND /* (sf_band_final: only in the band calls' programs) */
/* BAND, P2 of a selection whose band is small: the one group picks the rank
 * (0-based) among the band's members, or, when the band did not hold it or
 * overflowed the buffer, among the whole input (exact, slow, rare); the
 * outputs as sf_final */
__kernel __attribute__((reqd_work_group_size(FWG, 1, 1)))
void sf_band_final(__global const okey_t *in, ulong off, uint n, uint smallest, uint rank,
                   uint cap, __global const okey_t *cu, __global const uint *ci,
                   __global uint *st, uint want, __global okey_t *out_keys,
                   __global long *out_index, ulong base)
{
    __local uint hist[NB * HC];
    __local okey_t su[SORTCAP];
    __local uint si[SORTCAP];
    __local uint sh[SH_WORDS];
    __local ulong shl[2];
    uint lid = get_local_id(0);
    uint m = st[ST_TOTAL], above = st[ST_ABOVE];
    uint mode = 1u, cnt = n, need = rank + 1u, path;
    if (m > cap) {
        path = 3u;
    } else if (rank < above || rank - above >= m) {
        path = 2u;
    } else {
        path = 1u;
        mode = 0u;
        cnt = m;
        need = rank - above + 1u;
    }
    if (lid == 0u)
        st[ST_PATH] = path;
    wg_topr(mode, cnt, 0u, need, SORTCAP, 1u, cu, ci, in, off, smallest, 0UL, 0u, hist, su, si, sh,
            shl);
    if (lid == 0u) {
        uint idx = si[sh[SH_NEED] - 1u];
        if (want & 1u)
            out_keys[0] = in[off + idx];
        if (want & 2u)
            out_index[0] = (long)(base + idx);
    }
}
#endif /* BAND */

#if !BAND /* (sf_best_part: only in the top-k calls' programs) */
/* k = 1: each group's best pair (its tiles as sf_filter's, sf_tile: ties go
 * to the smaller position) */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void sf_best_part(__global const okey_t *in, ulong off, uint n, uint smallest, uint head,
                  uint nvec, uint ntiles, ulong pa, ulong pb, __global okey_t *pu,
                  __global uint *pi)
{
    __local okey_t ru[WG];
    __local uint ri[WG];
    uint lid = get_local_id(0), groups = get_num_groups(0);
    okey_t bu = (okey_t)0;
    uint bi = SENT_I;
    if (get_group_id(0) == groups - 1u) {
        for (uint i = lid; i < head; i += WG) {
            okey_t u = order_key(in[off + i], smallest);
            if (pair_better(u, i, bu, bi)) {
                bu = u;
                bi = i;
            }
        }
    }
    __global const vec_t *vp = (__global const vec_t *)(in + off + head);
    SF_TILE_LOOP(t, tile, ntiles, pa, pb, groups) {
        uint v0 = tile * (uint)(WG * UNR) + lid;
        vec_t x[UNR];
#pragma unroll
        for (uint q = 0; q < UNR; q++) {
            uint v = v0 + q * WG;
            if (v < nvec)
                x[q] = vp[v];
        }
#pragma unroll
        for (uint q = 0; q < UNR; q++) {
            uint v = v0 + q * WG;
            if (v < nvec) {
                uint base = head + v * VEC;
#define LANE(F, E)                                                                 \
                {                                                                  \
                    okey_t u_ = order_key(x[q].F, smallest);                       \
                    uint i_ = base + E;                                            \
                    if (pair_better(u_, i_, bu, bi)) {                             \
                        bu = u_;                                                   \
                        bi = i_;                                                   \
                    }                                                              \
                }
                LANES(LANE)
#undef LANE
            }
        }
    }
    if (get_group_id(0) == groups - 1u) {
        for (uint i = head + nvec * VEC + lid; i < n; i += WG) {
            okey_t u = order_key(in[off + i], smallest);
            if (pair_better(u, i, bu, bi)) {
                bu = u;
                bi = i;
            }
        }
    }
    ru[lid] = bu;
    ri[lid] = bi;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint h = WG / 2u; h > 0u; h >>= 1) {
        if (lid < h && pair_better(ru[lid + h], ri[lid + h], ru[lid], ri[lid])) {
            ru[lid] = ru[lid + h];
            ri[lid] = ri[lid + h];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0u) {
        pu[get_group_id(0)] = ru[0];
        pi[get_group_id(0)] = ri[0];
    }
}
#endif /* !BAND */

#if !BAND /* (sf_best_final: only in the top-k calls' programs) */
__kernel __attribute__((reqd_work_group_size(FWG, 1, 1)))
void sf_best_final(uint groups, __global const okey_t *pu, __global const uint *pi,
                   __global const okey_t *in, ulong off, uint want, __global okey_t *out_keys,
                   __global long *out_index, ulong base)
{
    __local okey_t ru[FWG];
    __local uint ri[FWG];
    uint lid = get_local_id(0);
    okey_t bu = (okey_t)0;
    uint bi = SENT_I;
    for (uint g = lid; g < groups; g += FWG)
        if (pair_better(pu[g], pi[g], bu, bi)) {
            bu = pu[g];
            bi = pi[g];
        }
    ru[lid] = bu;
    ri[lid] = bi;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint h = FWG / 2u; h > 0u; h >>= 1) {
        if (lid < h && pair_better(ru[lid + h], ri[lid + h], ru[lid], ri[lid])) {
            ru[lid] = ru[lid + h];
            ri[lid] = ri[lid + h];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0u) {
        if (want & 1u)
            out_keys[0] = in[off + ri[0]];
        if (want & 2u)
            out_index[0] = (long)(base + ri[0]);
    }
}
#endif /* !BAND */
