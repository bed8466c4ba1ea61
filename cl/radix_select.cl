/* radix_select.cl - global multi-pass radix select (top-k for any k, and the
 * element at any rank) with its state kept on the device.
 *
 * Every element is the pair (order key u, 32-bit position i); the pair is read
 * as one composite key  u : ~i  (KEY_BITS + 32 bits), which is unique and whose
 * descending order is THE ORDER (larger key first, then smaller position).  The
 * k-th largest composite key therefore splits the input into exactly k winners,
 * with no tie case.  MSD passes of 8-bit digits over the composite key:
 *
 *   rs_hist    histogram of the current candidates' digit (global atomics, one
 *              per bin and work-group); in pass 0 (the whole input) the first
 *              PRE key digits at once, so that passes whose digit does not
 *              reduce need no further read of the input (S_PRE: every pass
 *              so far skipped, so the candidates are still pass 0's)
 *   rs_choose  one work-group: the bin b holding the need-th largest candidate;
 *              decides the pass's mode (below) and keeps the state
 *   rs_filter  M_FILTER: digit > b goes straight to the result (top-k), digit
 *              == b is written to the other candidate buffer (only the target
 *              bucket is written); M_SKIP: the digit did not reduce, nothing is
 *              written and the candidates stay where they are; M_NARROW: the
 *              target bucket still holds more than 1/NARROW of the candidates,
 *              which are still the input: nothing is written, the digit joins
 *              a prefix that the next passes match against the input (and the
 *              next rs_hist emits this pass's higher buckets), so a large
 *              bucket costs one read instead of a copy; M_EMIT_GE / M_ALL: the
 *              last needed winners go to the result, the search ends
 *
 * All passes are enqueued back to back; kernels of a finished search return at
 * once.  Then (top-k) the k winners are sorted and written by the shared
 * winners' sort (cl/winners.cl), or (selection) the one remaining candidate is
 * written (rs_select_out).
 *
 * -D options (defaults below): KEY_BITS, KEY_KIND (common.cl), WG (work-items a
 * group, a power of two), IPT (elements a work-item per round of rs_filter and
 * rs_hist), PRE (key digits histogrammed in pass 0, 1..KEY_BITS/8), HC (copies
 * of rs_hist's local histogram, against same-bin contention), NARROW (see
 * M_NARROW; 0 turns it off). */
#ifndef CLTOPK_COMMON_CL
#include "common.cl"
#endif

#ifndef WG
#define WG 256
#endif
#ifndef IPT
#define IPT 4
#endif
#ifndef PRE
#define PRE 2
#endif
#ifndef FIRST
#define FIRST 8
#endif
#ifndef HC
#define HC 1
#endif
#ifndef NARROW
#define NARROW 8
#endif
#ifndef LASTG
#define LASTG 0 /* 1: the last work-group to finish rs_hist chooses the bin (no rs_choose) */
#endif
#ifndef ACT
#define ACT 1 /* (LASTG) 1: only the groups with elements to read take part in a
               * histogram launch (S_ACT); 0: every group */
#endif

/* digit 0 has FIRST bits (8..12), every later digit 8, the last what is left
 * of the KEY_BITS + 32 composite bits */
#define TB (KEY_BITS + 32)
#define RADIX (1u << FIRST) /* bins of the widest digit */
#define DIGITS (1 + (TB - FIRST + 7) / 8)

#if FIRST < 8 || FIRST > 12
#error "FIRST must be 8 .. 12"
#endif
#if PRE < 1 || PRE > 2
#error "PRE must be 1 or 2"
#endif
/* pass-0 local histograms: digit 0, then digit 1 when PRE == 2 */
#define PRE_BINS ((1 << FIRST) + (PRE - 1) * 256)

/* composite bits decided before pass p, the width and bins of its digit */
inline uint cons_of(uint p)
{
    uint c = p == 0u ? 0u : (uint)FIRST + 8u * (p - 1u);
    return c < (uint)TB ? c : (uint)TB;
}
inline uint wid_of(uint p)
{
    if (p == 0u)
        return FIRST;
    uint left = (uint)TB - cons_of(p);
    return left < 8u ? left : 8u;
}

/* state words */
#define S_NEED 0 /* winners still to find among the candidates */
#define S_CAND 1 /* candidates (after this pass's filter) */
#define S_CUR 2  /* where the candidates are: 0 input, 1 buffer A, 2 buffer B */
#define S_FSRC 3 /* where this pass's filter reads */
#define S_FCNT 4 /* how many it reads */
#define S_DIG 5  /* the target digit b */
#define S_MODE 6
#define S_EMIT 7 /* winners written to the result */
#define S_NEXT 8 /* candidates written by this pass's filter */
#define S_PRE 9  /* pass-0 histograms still valid (every pass so far skipped) */
#define S_TOPK 10
#define S_DONE 11
#define S_NP 12  /* digits of the prefix the input is matched against */
#define S_PLO 13 /* the prefix: the top 8 * S_NP bits of the order key */
#define S_PHI 14
#define S_NARROWED 15 /* a pass narrowed the input: match against the prefix */
/* (LASTG) the elements the histogram launch of pass p reads at most, in word
 * S_ACT + (p & 1), written by the choice of pass p - 1 (rs_init: pass 0):
 * only the work-groups that have elements to read take part, so that a pass
 * over a few candidates is one group's work.  By pass parity, so that a group
 * that starts after its own launch's choice still reads its launch's word. */
#define S_ACT 16
#define S_WORDS 18

#define M_FILTER 0u
#define M_SKIP 1u
#define M_EMIT_GE 2u
#define M_ALL 3u
#define M_DONE 4u
#define M_NARROW 5u

#define SENT_IDX 0xFFFFFFFFu

/* digit `pass` (0 = most significant) of the composite key u : ~i */
inline uint digit_of(okey_t u, uint idx, uint pass)
{
    uint w = wid_of(pass), s = (uint)TB - cons_of(pass) - w;
    uint mask = (1u << w) - 1u;
    if (s >= 32u)
        return (uint)(u >> (s - 32u)) & mask;
    uint v = (~idx) >> s;
    if (s + w > 32u)
        v |= (uint)(u << (32u - s));
    return v & mask;
}

inline void load_cand(uint src, uint i, __global const okey_t *in, ulong off, uint smallest,
                      __global const okey_t *ak, __global const uint *ai,
                      __global const okey_t *bk, __global const uint *bi, okey_t *u, uint *idx)
{
    if (src == 0u) {
        *u = order_key(in[off + i], smallest);
        *idx = i;
    } else if (src == 1u) {
        *u = ak[i];
        *idx = ai[i];
    } else {
        *u = bk[i];
        *idx = bi[i];
    }
}

inline okey_t get_pfx(__global const uint *state)
{
#if KEY_BITS == 64
    return ((okey_t)state[S_PHI] << 32) | (okey_t)state[S_PLO];
#else
    return state[S_PLO];
#endif
}

/* an input element against the prefix P of np digits: 1 it matches (a
 * candidate), 2 it is above at the prefix's last digit (a winner of that
 * pass, emitted by the next rs_hist), 0 neither */
inline uint pfx_class(okey_t u, uint np, okey_t P)
{
    if (np == 0u)
        return 1u;
    okey_t top = u >> ((uint)KEY_BITS - cons_of(np));
    if (top == P)
        return 1u;
    uint w = wid_of(np - 1u);
    return (top > P && (top >> w) == (P >> w)) ? 2u : 0u;
}

/* The state for a search of the composite rank k (1-based) among the n input
 * elements; with use_from, among the candidates a caller left in buffer A when
 * they hold that rank: from[0] of them (exact; at most from_cap fit), from[1]
 * elements of the input before all of them.  What was decided goes to
 * from[5]: 1 the candidates, 2 the rank is not among them, 3 they overflowed
 * (both: the input, exactly). */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void rs_init(__global uint *state, __global uint *hist, uint n, uint k, uint topk,
             __global uint *from, uint use_from, uint from_cap)
{
    uint lid = get_local_id(0);
    for (uint b = lid; b <= DIGITS * RADIX; b += WG) /* (and the groups' ticket) */
        hist[b] = 0u;
    if (lid == 0u) {
        for (uint w = 0; w < (uint)S_WORDS; w++)
            state[w] = 0u;
        state[S_ACT] = 0xFFFFFFFFu; /* pass 0: every group */
        state[S_NEED] = k;
        state[S_CAND] = n;
        state[S_FCNT] = n;
        state[S_PRE] = 1u;
        state[S_TOPK] = topk;
        if (use_from) {
            uint m = from[0], above = from[1], path;
            if (m > from_cap)
                path = 3u;
            else if (k - 1u < above || k - 1u - above >= m)
                path = 2u;
            else
                path = 1u;
            if (path == 1u) {
                state[S_NEED] = k - above;
                state[S_CAND] = m;
                state[S_FCNT] = m;
                state[S_CUR] = 1u;
            }
            from[5] = path;
        }
    }
}

/* One work-group: the bin b of digit `pass` that holds the need-th largest
 * candidate, the pass's mode, the state (lh: RADIX words, sf: 2 words of local
 * memory; fresh: the histogram was counted by the same launch, read it by
 * atomics) */
inline void choose_bin(uint pass, __global uint *state, __global uint *hist, __local uint *lh,
                       __local uint *sf, int fresh)
{
    uint lid = get_local_id(0);
    if (lid == 0u)
        sf[0] = state[S_DONE];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (sf[0]) {
        if (lid == 0u) {
            state[S_MODE] = M_DONE;
            state[S_ACT + ((pass + 1u) & 1u)] = 0u;
        }
        return;
    }
    uint nbins = 1u << wid_of(pass);
    /* (atomic reads: the counts of the other groups of the same launch) */
    for (uint b = lid; b < nbins; b += WG)
        lh[b] = fresh ? atomic_add(&hist[pass * RADIX + b], 0u) : hist[pass * RADIX + b];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0u) {
        uint need = state[S_NEED], cand = state[S_CAND], cur = state[S_CUR];
        uint topk = state[S_TOPK];
        uint mode, b = 0u;
        if (topk && need == cand) {
            mode = M_ALL;
        } else {
            uint above = 0u;
            b = nbins - 1u;
            while (b > 0u && above + lh[b] < need) {
                above += lh[b];
                b--;
            }
            uint cb = lh[b];
            uint np = state[S_NP], narrowed = state[S_NARROWED];
            /* the input may stay the input (prefix matching) up to the
             * last key digit */
            uint keep_in = cur == 0u && cons_of(pass + 1u) < (uint)KEY_BITS;
            need -= above;
            if (topk && cb == need)
                mode = M_EMIT_GE;
            else if (cb == cand && (cur != 0u || !narrowed || keep_in))
                mode = M_SKIP;
            else if (NARROW > 0 && keep_in && (ulong)cb * (ulong)NARROW > (ulong)cand)
                mode = M_NARROW;
            else
                mode = M_FILTER;
            state[S_NEED] = need;
            if (mode == M_FILTER || mode == M_NARROW)
                state[S_CAND] = cb;
            if (cur == 0u && (mode == M_NARROW || mode == M_SKIP)) {
                /* the prefix of the input's candidates gains digit b (past the
                 * key digits only while never narrowed: then unused) */
                if (mode == M_NARROW)
                    state[S_NARROWED] = 1u;
                okey_t P = (get_pfx(state) << wid_of(pass)) | (okey_t)b;
                state[S_PLO] = (uint)P;
#if KEY_BITS == 64
                state[S_PHI] = (uint)(P >> 32);
#endif
                state[S_NP] = np + 1u;
            }
        }
        state[S_FSRC] = cur;
        if (cur != 0u)
            state[S_FCNT] = cand; /* the input: stays n */
        if (mode == M_FILTER)
            state[S_CUR] = cur == 1u ? 2u : 1u;
        if (mode == M_ALL || mode == M_EMIT_GE)
            state[S_DONE] = 1u;
        if (mode != M_SKIP)
            state[S_PRE] = 0u;
        state[S_DIG] = b;
        state[S_MODE] = mode;
        state[S_NEXT] = 0u;
        /* the next histogram reads the candidates (S_CAND), the input
         * (S_FCNT = n) or, fused with this pass's filter, what it filters
         * (S_FCNT): at most the larger */
        uint fc = state[S_FCNT], nc = state[S_CAND];
        state[S_ACT + ((pass + 1u) & 1u)] = fc > nc ? fc : nc;
        /* the next pass counts afresh unless pass 0 already counted its digit */
        sf[1] = !(state[S_PRE] && pass + 1u < (uint)PRE);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (sf[1] && pass + 1u < (uint)DIGITS)
        for (uint b = lid; b < RADIX; b += WG)
            hist[(pass + 1u) * RADIX + b] = 0u;
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void rs_choose(uint pass, __global uint *state, __global uint *hist)
{
    __local uint lh[RADIX];
    __local uint sf[2];
    choose_bin(pass, state, hist, lh, sf, 0);
}

/* (LASTG) whether this work-group takes part in the histogram launch of pass
 * `pass`: the groups that have elements of the S_ACT bound to read, at least
 * one (it chooses the bin); the others return at once and take no ticket */
inline uint act_groups(uint pass, __global const uint *state)
{
#if !ACT
    return get_num_groups(0);
#else
    uint c = state[S_ACT + (pass & 1u)];
    uint per = (uint)(WG * IPT), g = get_num_groups(0);
    uint a = c / per + (c % per != 0u);
    return a < 1u ? 1u : a > g ? g : a;
#endif
}

/* the local bins of the histogram of pass `pass`: pass 0 digit 0 at 0 and
 * digit 1 at 2^FIRST; else digit `pass` */
inline uint bins_of(uint pass)
{
    return pass == 0u ? (uint)PRE_BINS : (1u << wid_of(pass));
}

/* whether the histogram of pass `pass` has nothing to count: the search is
 * over, or pass 0 already counted this digit */
inline uint hist_skip(uint pass, __global const uint *state)
{
    return state[S_DONE] || (pass > 0u && pass < (uint)PRE && state[S_PRE]);
}

/* lh's bins of pass `pass` (HC copies each) zeroed */
inline void hist_zero(uint pass, __local uint *lh)
{
    for (uint b = get_local_id(0); b < bins_of(pass) * HC; b += WG)
        lh[b] = 0u;
    barrier(CLK_LOCAL_MEM_FENCE);
}

/* rs_hist's counting: the histogram of digit `pass` of the current candidates
 * (pass 0: digits 0..PRE-1) into lh (HC copies a bin, zeroed by the caller:
 * hist_zero); on a narrowed input
 * also the emission of the last narrowing pass's higher buckets (l_emit,
 * g_emit: two words of local memory) */
inline void hist_count(uint pass, __global const okey_t *in, ulong off, uint smallest,
                       __global const okey_t *ak, __global const uint *ai,
                       __global const okey_t *bk, __global const uint *bi,
                       __global uint *state, __global okey_t *res_k, __global uint *res_i,
                       __local uint *lh, __local uint *lw)
{
    uint lid = get_local_id(0);
    uint cur = state[S_CUR], cnt = state[S_CAND];
    uint np = (cur == 0u && state[S_NARROWED]) ? state[S_NP] : 0u;
    okey_t P = get_pfx(state);
    uint emit = np > 0u && state[S_TOPK];
    if (cur == 0u)
        cnt = state[S_FCNT]; /* the input's length (n) */
    if (hist_skip(pass, state))
        cnt = 0u; /* nothing to count; (LASTG) the last group still chooses */
    uint nd = pass == 0u ? (uint)PRE : 1u;
    uint hc = lid % (uint)HC;
    uint step = get_num_groups(0) * WG * IPT;
    for (uint base = get_group_id(0) * WG * IPT; base < cnt; base += step) {
        okey_t eu[IPT];
        uint ei[IPT], pos[IPT], em[IPT];
        if (emit && lid == 0u)
            lw[0] = 0u;
        if (emit)
            barrier(CLK_LOCAL_MEM_FENCE);
        okey_t lu[IPT];
        uint li[IPT];
        /* all loads of the round first (memory parallelism), then the counting */
        for (uint j = 0; j < IPT; j++) {
            uint i = base + j * WG + lid;
            if (i < cnt)
                load_cand(cur, i, in, off, smallest, ak, ai, bk, bi, &lu[j], &li[j]);
        }
        for (uint j = 0; j < IPT; j++) {
            uint i = base + j * WG + lid;
            em[j] = 0u;
            if (i < cnt) {
                okey_t u = lu[j];
                uint idx = li[j];
                uint cls = pfx_class(u, np, P);
                if (cls == 1u) {
                    for (uint d = 0; d < nd; d++)
                        atomic_inc(&lh[((d ? (1u << FIRST) : 0u) + digit_of(u, idx, pass + d)) *
                                           HC + hc]);
                } else if (cls == 2u && emit) {
                    em[j] = 1u;
                    eu[j] = u;
                    ei[j] = idx;
                    pos[j] = atomic_inc(&lw[0]);
                }
            }
        }
        if (emit) {
            barrier(CLK_LOCAL_MEM_FENCE);
            if (lid == 0u)
                lw[1] = lw[0] ? atomic_add(&state[S_EMIT], lw[0]) : 0u;
            barrier(CLK_LOCAL_MEM_FENCE);
            for (uint j = 0; j < IPT; j++)
                if (em[j]) {
                    res_k[lw[1] + pos[j]] = eu[j];
                    res_i[lw[1] + pos[j]] = ei[j];
                }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
    }
}

/* the group's counts of digit `pass` (lh, HC copies a bin; pass 0: PRE digits)
 * added to the global histogram; with LASTG the group that finishes last
 * chooses the pass's bin (rs_choose's work; sf: 3 words of local memory) */
inline void hist_publish(uint pass, __global uint *state, __global uint *hist, __local uint *lh,
                         __local uint *sf)
{
    uint lid = get_local_id(0);
    uint nb = bins_of(pass);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint b = lid; b < nb; b += WG) {
        uint t = 0u;
        for (uint c = 0; c < (uint)HC; c++)
            t += lh[b * HC + c];
        /* pass 0's digit 1 goes to pass 1's bins */
        uint gb = b < (1u << FIRST) || pass ? pass * RADIX + b : RADIX + (b - (1u << FIRST));
        if (t)
            atomic_add(&hist[gb], t);
    }
#if LASTG
    /* the group's counts reach the device before its ticket; the group that
     * takes the last ticket chooses the bin and resets the ticket for the
     * next pass */
    mem_fence(CLK_GLOBAL_MEM_FENCE);
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    if (lid == 0u)
        sf[2] = atomic_inc(&hist[DIGITS * RADIX]) == act_groups(pass, state) - 1u;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (sf[2]) {
        mem_fence(CLK_GLOBAL_MEM_FENCE);
        choose_bin(pass, state, hist, lh, sf, 1);
        if (lid == 0u)
            hist[DIGITS * RADIX] = 0u;
    }
#endif
}

/* histogram of digit `pass` of the current candidates (pass 0: digits
 * 0..PRE-1); on a narrowed input also the emission of the last narrowing
 * pass's higher buckets */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void rs_hist(uint pass, __global const okey_t *in, ulong off, uint smallest,
             __global const okey_t *ak, __global const uint *ai, __global const okey_t *bk,
             __global const uint *bi, __global uint *state, __global uint *hist,
             __global okey_t *res_k, __global uint *res_i)
{
    __local uint lh[PRE_BINS * HC];
    __local uint lw[2];
#if !LASTG
    /* (hist_publish reads its sf only with LASTG: no local of its own, see
     * rs_filter) */
#define sf lw
    if (hist_skip(pass, state))
        return;
#else
    __local uint sf[3];
    if (get_group_id(0) >= act_groups(pass, state))
        return;
#endif
    hist_zero(pass, lh);
    hist_count(pass, in, off, smallest, ak, ai, bk, bi, state, res_k, res_i, lh, lw);
    hist_publish(pass, state, hist, lh, sf);
#undef sf
}

/* rs_filter's work for digit `pass` (mode: the pass's, not M_SKIP, M_DONE or
 * M_NARROW); with `count`, the digit pass + 1 of every candidate it keeps is
 * counted into lh (HC copies a bin, zeroed by the caller: hist_zero); lw: 4
 * words of local memory */
inline void filter_run(uint pass, uint mode, __global const okey_t *in, ulong off, uint smallest,
                       __global okey_t *ak, __global uint *ai, __global okey_t *bk,
                       __global uint *bi, __global uint *state, __global okey_t *res_k,
                       __global uint *res_i, uint count, __local uint *lh, __local uint *lw)
{
    uint lid = get_local_id(0);
    uint src = state[S_FSRC], cnt = state[S_FCNT], b = state[S_DIG];
    uint np = (src == 0u && state[S_NARROWED]) ? state[S_NP] : 0u;
    okey_t P = get_pfx(state);
    uint topk = state[S_TOPK], dst = state[S_CUR];
    uint hc = lid % (uint)HC;
    __global okey_t *dk = dst == 1u ? ak : bk;
    __global uint *di = dst == 1u ? ai : bi;
    uint step = get_num_groups(0) * WG * IPT;
    for (uint base = get_group_id(0) * WG * IPT; base < cnt; base += step) {
        if (lid == 0u)
            lw[0] = lw[1] = 0u;
        barrier(CLK_LOCAL_MEM_FENCE);
        okey_t u[IPT];
        uint idx[IPT], pos[IPT], act[IPT]; /* act: 0 none, 1 emit, 2 keep */
        /* all loads of the round first (memory parallelism), then the decisions */
        for (uint j = 0; j < IPT; j++) {
            uint i = base + j * WG + lid;
            if (i < cnt)
                load_cand(src, i, in, off, smallest, ak, ai, bk, bi, &u[j], &idx[j]);
        }
        for (uint j = 0; j < IPT; j++) {
            uint i = base + j * WG + lid;
            act[j] = 0u;
            if (i < cnt) {
                uint d = digit_of(u[j], idx[j], pass);
                if (pfx_class(u[j], np, P) != 1u)
                    ; /* not a candidate of a narrowed input */
                else if (mode == M_ALL || (mode == M_EMIT_GE && d >= b) ||
                    (mode == M_FILTER && topk && d > b))
                    act[j] = 1u;
                else if (mode == M_FILTER && d == b)
                    act[j] = 2u;
                if (act[j] == 1u) {
                    pos[j] = atomic_inc(&lw[0]);
                } else if (act[j] == 2u) {
                    pos[j] = atomic_inc(&lw[1]);
                    if (count)
                        atomic_inc(&lh[digit_of(u[j], idx[j], pass + 1u) * HC + hc]);
                }
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid == 0u) {
            lw[2] = lw[0] ? atomic_add(&state[S_EMIT], lw[0]) : 0u;
            lw[3] = lw[1] ? atomic_add(&state[S_NEXT], lw[1]) : 0u;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint j = 0; j < IPT; j++) {
            if (act[j] == 1u) {
                res_k[lw[2] + pos[j]] = u[j];
                res_i[lw[2] + pos[j]] = idx[j];
            } else if (act[j] == 2u) {
                dk[lw[3] + pos[j]] = u[j];
                di[lw[3] + pos[j]] = idx[j];
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void rs_filter(uint pass, __global const okey_t *in, ulong off, uint smallest,
               __global okey_t *ak, __global uint *ai, __global okey_t *bk, __global uint *bi,
               __global uint *state, __global okey_t *res_k, __global uint *res_i)
{
    /* (lw also stands for the histogram that a filter without counting
     * never touches: a local whose every use folds away makes POCL 5 and 6
     * abort, "isGVarUsedByFunction(&Var, F) == true") */
    __local uint lw[4];
    uint mode = state[S_MODE];
    if (mode == M_SKIP || mode == M_DONE || mode == M_NARROW)
        return;
    filter_run(pass, mode, in, off, smallest, ak, ai, bk, bi, state, res_k, res_i, 0u, lw, lw);
}

#if LASTG
/* rs_filter of digit pass - 1 and rs_hist of digit `pass` (1 .. DIGITS - 1) in
 * one launch: where pass - 1 filtered, the candidates it keeps are counted as
 * they are written (no second read of them); where it skipped or narrowed, the
 * current candidates are counted as rs_hist counts them.  The last group to
 * finish chooses the bin of digit `pass`. */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void rs_pass(uint pass, __global const okey_t *in, ulong off, uint smallest,
             __global okey_t *ak, __global uint *ai, __global okey_t *bk, __global uint *bi,
             __global uint *state, __global uint *hist, __global okey_t *res_k,
             __global uint *res_i)
{
    __local uint lh[PRE_BINS * HC];
    __local uint lw[4], sf[3];
    if (get_group_id(0) >= act_groups(pass, state))
        return;
    uint mode = state[S_MODE]; /* pass - 1's */
    hist_zero(pass, lh);
    if (mode == M_FILTER || mode == M_EMIT_GE || mode == M_ALL)
        filter_run(pass - 1u, mode, in, off, smallest, ak, ai, bk, bi, state, res_k, res_i,
                   mode == M_FILTER, lh, lw);
    else
        hist_count(pass, in, off, smallest, ak, ai, bk, bi, state, res_k, res_i, lh, lw);
    hist_publish(pass, state, hist, lh, sf);
}
#endif

/* selection: the one candidate left is the answer */
__kernel void rs_select_out(__global const uint *state, __global const okey_t *in, ulong off,
                            __global const uint *ai, __global const uint *bi, uint want,
                            __global okey_t *out_keys, __global long *out_index, ulong base)
{
    if (get_global_id(0) != 0)
        return;
    uint cur = state[S_CUR];
    uint idx = cur == 0u ? 0u : cur == 1u ? ai[0] : bi[0];
    if (want & 1u)
        out_keys[0] = in[off + idx];
    if (want & 2u)
        out_index[0] = (long)(base + idx);
}

