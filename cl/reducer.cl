/* reducer.cl - bitonic top-k at full speed: the SortReducer and BitonicReducer of
 * Shanbhag, Pirk and Madden (SIGMOD'18, section 4.3), specialised at build time.
 *
 * A work-group owns a tile of E = B * WG items; work-item t loads B consecutive
 * items straight into registers ("sort before writing") and:
 *   sort_reducer:    sorts them in registers into runs of min(B, K); when K < B
 *                    merges and rebuilds in registers until it holds one run of K;
 *   bitonic_reducer: loads bitonic runs of K written by an earlier launch and
 *                    rebuilds them (in registers when K <= B).
 * The group then works in local memory: the rest of the local sort, then merge
 * (keep the better of run 2j and run 2j+1 item by item) and rebuild (re-sort the
 * bitonic runs), until OUT items remain.  Steps are *combined*: a work-item loads
 * up to MAXM items of one chunk and runs up to log2(MAXM) steps in registers
 * before storing them.  The last merge is fused with the coalesced write of the
 * group's OUT items (bitonic runs; the next launch starts with a rebuild).  With
 * final_k != 0 (one group) the group goes on to K items, sorts them and writes
 * the answer in output order.
 *
 * Items are order keys (common.cl), with a 32-bit index beside them when INDEX:
 * ties are then exact (larger key first, then smaller index).  Keys-only is used
 * where equal keys have equal bits (integers), so ties cannot be told apart.
 *
 * -D options (defaults below so the file compiles alone):
 *   KEY_BITS, KEY_KIND  (common.cl)
 *   K      run length: k rounded up to a power of two, 1 .. E/2
 *   B      items per work-item: 4, 8 or 16
 *   WG     work-items per group (a power of two, >= 32 unless the device is small)
 *   OUT    items a group writes (a power of two, K <= OUT <= E/2)
 *   INDEX  1: carry the index; 0: keys only
 *   MAXM   largest combined step (2, 4, 8, 16); 2 means one step per pass
 *   SWZ    1: XOR-swizzled local layout (bank-conflict free); 0: plain
 *   FLAT   1: the local phases as one flat loop of barrier-separated ops
 *          (flat_phases), for POCL 4 and 5; 0: nested loops (lphase, finish)
 * POCL 3.1 is sensitive to the shape of loops over a group's items: the stores
 * of "for (x = t; x < n; x += WG)" ran for work-items past n in the output
 * loops (written out of bounds), while the equivalent uniform loop "for (x0 =
 * 0; x0 < n; x0 += WG) { x = x0 + t; if (x < n) ... }" gave wrong sorts in the
 * combined steps.  Each site uses the form POCL runs correctly (the NVIDIA
 * compiler treats both alike); the oracle tests on POCL guard this.
 * The index arithmetic of every local access is mirrored in cl/schedule.h, whose
 * bank-conflict simulator (t/banks.c) proves each configuration conflict-free. */
#ifndef CLTOPK_COMMON_CL
#include "common.cl"
#endif
#ifndef CLTOPK_SCHEDULE_H
#include "schedule.h"
#endif
#if defined(PACKED_FOR) && !defined(CLTOPK_BITPACK_H) /* bit-packed source */
#include "bitpack.h"
#endif

#ifndef K
#define K 32
#endif
#ifndef B
#define B 16
#endif
#ifndef WG
#define WG 64
#endif
/* items a work-item holds when the group enters local memory */
#define HOLD (K < B ? K : B)
#ifndef OUT
#define OUT_A (B * WG / 16 < HOLD * WG / 2 ? B * WG / 16 : HOLD * WG / 2)
#define OUT (OUT_A > K ? OUT_A : K)
#endif
#ifndef INDEX
#define INDEX 1
#endif
#ifndef MAXM
#define MAXM 16
#endif
#ifndef SWZ
#define SWZ 1
#endif
#ifndef FLAT
#define FLAT 0
#endif

#define E (B * WG)
#if (K & (K - 1)) || (B & (B - 1)) || (WG & (WG - 1)) || (OUT & (OUT - 1))
#error "K, B, WG and OUT must be powers of two"
#endif
#if K > E / 2 || OUT < K || OUT > HOLD * WG / 2 || B > 16 || MAXM > 16 || MAXM < 2
#error "need K <= OUT <= HOLD*WG/2, K <= E/2, B <= 16, 2 <= MAXM <= 16"
#endif

#define phys(i) sched_phys((i), SWZ)

/* ------------------------------------------------------------------ items */

/* Comparisons and exchanges are branch-free (bitwise & and |, selects): a
 * data-dependent branch per compare-exchange diverges inside a warp, and the
 * NVIDIA compiler keeps short-circuit && and || as branches. */
#if INDEX
#define BETTER(ak, ai, bk, bi) (((ak) > (bk)) | (((ak) == (bk)) & ((ai) < (bi))))
#define IDX_DECL(name, n) uint name[n]
#define IDX(stmt) stmt
#else
#define BETTER(ak, ai, bk, bi) ((ak) > (bk))
#define IDX_DECL(name, n) uint name[1]
#define IDX(stmt)
#endif

/* put the worse of (a, b) first when asc, the better first otherwise (equal
 * items may trade places: they are the same bits, or sentinels) */
#define CAS(xk, xi, a, b, asc)                                          \
    do {                                                                \
        okey_t ka_ = xk[a], kb_ = xk[b];                                \
        IDX(uint ia_ = xi[a]; uint ib_ = xi[b];)                        \
        int sw_ = BETTER(ka_, ia_, kb_, ib_) ^ !(asc);                  \
        xk[a] = sw_ ? kb_ : ka_;                                        \
        xk[b] = sw_ ? ka_ : kb_;                                        \
        IDX(xi[a] = sw_ ? ib_ : ia_; xi[b] = sw_ ? ia_ : ib_;)          \
    } while (0)

/* The group's local arrays, passed down as parameters.  64-bit keys live in two
 * 32-bit arrays (hi, lo) so that every array has 4-byte words and one bank
 * analysis (t/banks.c) covers every key width.  The kernels take them as
 * arguments l0, l1, l2 of E words each, sized by the host from the
 * configuration (l1 unused for 32-bit keys and l2 without the index: 4 bytes). */
#if KEY_BITS == 64
#define KPARAM __local uint *lkh, __local uint *lkl
#define KPASS lkh, lkl
#define KBIND __local uint *lkh = l0, *lkl = l1
#define KGET(p) upsample(lkh[p], lkl[p])
#define KPUT(p, v)                      \
    do {                                \
        okey_t v_ = (v);                \
        lkh[p] = (uint)(v_ >> 32);      \
        lkl[p] = (uint)v_;              \
    } while (0)
#else
#define KPARAM __local uint *lk
#define KPASS lk
#define KBIND __local uint *lk = l0
#define KGET(p) lk[p]
#define KPUT(p, v) (lk[p] = (v))
#endif
#if INDEX
#define LPARAM KPARAM, __local uint *li
#define LPASS KPASS, li
#define LBIND KBIND; __local uint *li = l2
#else
#define LPARAM KPARAM
#define LPASS KPASS
#define LBIND KBIND
#endif

#define LLOAD(xk, xi, j, pos)                     \
    do {                                          \
        uint p_ = phys(pos);                      \
        xk[j] = KGET(p_);                         \
        IDX(xi[j] = li[p_];)                      \
    } while (0)
#define LSTORE(xk, xi, j, pos)                    \
    do {                                          \
        uint p_ = phys(pos);                      \
        KPUT(p_, xk[j]);                          \
        IDX(li[p_] = xi[j];)                      \
    } while (0)

/* ---------------------------------------------- register networks (x[0..n)) */

/* steps with strides h = hi .. 1 over x[0..n) held at positions pos0 + j; the
 * direction of a pair is ascending when its position has the dir bit clear */
#define REG_STEPS(xk, xi, n, hi, dir, pos0)                                 \
    do {                                                                    \
        _Pragma("unroll") for (uint h_ = (hi); h_ > 0; h_ >>= 1)            \
            _Pragma("unroll") for (uint j_ = 0; j_ < (n); j_++)             \
                if (!(j_ & h_))                                             \
                    CAS(xk, xi, j_, j_ + h_, (((pos0) + j_) & (dir)) == 0); \
    } while (0)

/* merge runs of K held in registers: x[0..n) -> x[0..n/2) */
#define REG_MERGE(xk, xi, n)                                                \
    do {                                                                    \
        _Pragma("unroll") for (uint p_ = 0; p_ < (n) / 2; p_++) {           \
            uint i_ = sched_merge_src(p_, K);                              \
            int tb_ = BETTER(xk[i_ + K], xi[i_ + K], xk[i_], xi[i_]);       \
            xk[p_] = tb_ ? xk[i_ + K] : xk[i_];                             \
            IDX(xi[p_] = tb_ ? xi[i_ + K] : xi[i_];)                        \
        }                                                                   \
    } while (0)

/* --------------------------------------------------- local-memory operations */

/* Chunk g of a combined op of M items at stride lo, direction blocks of dir:
 * load, run the op's steps in registers, store (no barrier). */
#define LSTEP_CHUNK(M, g, lo, dir)                                            \
    do {                                                                      \
        uint base = sched_chunk_base((g), (lo), (M));                         \
        okey_t xk[M];                                                         \
        IDX_DECL(xi, M);                                                      \
        _Pragma("unroll") for (uint j = 0; j < (M); j++)                      \
            LLOAD(xk, xi, j, base + j * (lo));                                \
        int asc = (base & (dir)) == 0;                                        \
        _Pragma("unroll") for (uint h = (M) / 2; h > 0; h >>= 1)              \
            _Pragma("unroll") for (uint j = 0; j < (M); j++)                  \
                if (!(j & h))                                                 \
                    CAS(xk, xi, j, j + h, asc);                               \
        _Pragma("unroll") for (uint j = 0; j < (M); j++)                      \
            LSTORE(xk, xi, j, base + j * (lo));                               \
    } while (0)

/* One combined op: chunks of M items at stride lo = hi*2/M, steps hi .. lo,
 * direction blocks of dir; every chunk is independent, so no barrier is needed
 * between a work-item's chunks. */
#define DEF_LSTEP(M)                                                          \
    inline void lstep##M(LPARAM, uint n, uint hi, uint dir, uint t)          \
    {                                                                         \
        uint lo = hi * 2 / (M);                                               \
        for (uint g = t; g < n / (M); g += WG)                                \
            LSTEP_CHUNK(M, g, lo, dir);                                       \
        barrier(CLK_LOCAL_MEM_FENCE);                                         \
    }
DEF_LSTEP(2)
DEF_LSTEP(4)
DEF_LSTEP(8)
DEF_LSTEP(16)

/* steps with strides hi .. 1 in combined ops of at most MAXM items; the
 * remainder first (e.g. 32: {32, 16} then {8, 4, 2, 1}) */
inline void lphase(LPARAM, uint n, uint hi, uint dir, uint t)
{
    uint steps = 0;
    for (uint s = hi; s > 0; s >>= 1)
        steps++;
    uint per = MAXM == 16 ? 4 : MAXM == 8 ? 3 : MAXM == 4 ? 2 : 1;
    uint first = sched_first_steps(hi, per);
    while (steps > 0) {
        uint m = steps < first ? steps : first;
        if (m == 4)
            lstep16(LPASS, n, hi, dir, t);
        else if (m == 3)
            lstep8(LPASS, n, hi, dir, t);
        else if (m == 2)
            lstep4(LPASS, n, hi, dir, t);
        else
            lstep2(LPASS, n, hi, dir, t);
        hi >>= m;
        steps -= m;
        first = per;
    }
}

/* n items of runs of K (sorted, alternating) -> n/2 items of bitonic runs.
 * The loops have a constant trip count and unroll, so the staged items live in
 * registers across the barrier (POCL 3.1 lost a dynamically indexed private
 * array across it: merges had no effect). */
#define MR ((E / 2 + WG - 1) / WG)
/* the merge's two halves: the kept items of outputs p < n/2 into registers
 * yk/yi, then from the registers to positions p */
#define MERGE_READ(n, yk, yi)                                                 \
    _Pragma("unroll") for (uint r = 0; r < MR; r++) {                         \
        uint p = t + r * WG;                                                  \
        if (p < (n) / 2) {                                                    \
            uint i = sched_merge_src(p, K);                                   \
            okey_t ak = KGET(phys(i)), bk = KGET(phys(i + K));                \
            IDX(uint ai = li[phys(i)]; uint bi = li[phys(i + K)];)            \
            int takeb = BETTER(bk, bi, ak, ai);                               \
            yk[r] = takeb ? bk : ak;                                          \
            IDX(yi[r] = takeb ? bi : ai;)                                     \
        }                                                                     \
    }
#define MERGE_WRITE(n, yk, yi)                                                \
    _Pragma("unroll") for (uint r = 0; r < MR; r++) {                         \
        uint p = t + r * WG;                                                  \
        if (p < (n) / 2) {                                                    \
            KPUT(phys(p), yk[r]);                                             \
            IDX(li[phys(p)] = yi[r];)                                         \
        }                                                                     \
    }
inline void lmerge(LPARAM, uint n, uint t)
{
    okey_t yk[MR];
    IDX_DECL(yi, MR);
    MERGE_READ(n, yk, yi);
    barrier(CLK_LOCAL_MEM_FENCE);
    MERGE_WRITE(n, yk, yi);
    barrier(CLK_LOCAL_MEM_FENCE);
}

#if FLAT
/* The local phases as one loop of ops with a barrier after each and none
 * anywhere else, for POCL 4 and 5's work-group compilers.  POCL 5.0 ("loops" and
 * "loopvec") aborted the process (Kernel.cc createParallelRegionBefore:
 * region_entry_barrier != NULL, pocl issues 1435 and 2281) on the nested form
 * above for K > 4 (barriers in branches, in loops inside loops, after chunk
 * loops whose trip counts vary by work-item), and on a flat loop that picked
 * the op with a branch around the guarded work.  So here: one loop level, the
 * barrier unconditional, every op's work run each time over an item count that
 * is 0 unless that op is the current one, every loop between barriers of
 * constant trip count, the state updated by uniform arithmetic.  The same ops
 * as lphase and the merge loop of finish, in the same order, on the same
 * addresses (t/banks.c's proof holds): sort phases len = len .. K/2 (steps len
 * .. 1, direction blocks of 2 len), then while n > stop a merge (read, write)
 * and a rebuild (steps K/2 .. 1).  POCL 6.0 runs it at half the speed of the
 * nested form (every op's guards each time), so only POCL 4 and 5 take it;
 * POCL 5.0's "cbs" method compiled the nested form too. */
#define FLAT_PER (MAXM == 16 ? 4 : MAXM == 8 ? 3 : MAXM == 4 ? 2 : 1)
/* chunks of M items a work-item may own */
#define FLAT_CH(M) ((E / (M) + WG - 1) / WG)
/* a combined op of M items over the first `items` items (0: nothing) */
#define FLAT_STEP(M, items)                                                   \
    do {                                                                      \
        uint c_ = (items) / (M);                                              \
        _Pragma("unroll") for (uint r = 0; r < FLAT_CH(M); r++) {             \
            uint g = t + r * WG;                                              \
            if (g < c_)                                                       \
                LSTEP_CHUNK(M, g, hi * 2 / (M), dir);                         \
        }                                                                     \
    } while (0)

/* steps in a phase with strides hi .. 1 */
inline uint flat_steps(uint hi)
{
    uint steps = 0;
    for (uint s = hi; s > 0; s >>= 1)
        steps++;
    return steps;
}

/* combined ops of a phase with strides hi .. 1 */
inline uint flat_ops(uint hi)
{
    return (flat_steps(hi) + FLAT_PER - 1) / FLAT_PER;
}

inline void flat_phases(LPARAM, uint n, uint len, uint stop, uint t)
{
    uint nops = 0;
    for (uint l = len; l < K; l <<= 1)
        nops += flat_ops(l);
    for (uint c = n; c > stop; c >>= 1)
        nops += 2 + flat_ops(K / 2);
    /* the op: 0 the merge's read, 1 its write, 2 m steps from stride hi */
    uint sorting = len < K;
    uint kind = sorting ? 2 : 0;
    uint hi = len, dir = len << 1, left = flat_steps(len);
    uint m = sched_first_steps(hi, FLAT_PER);
    okey_t yk[MR];
    IDX_DECL(yi, MR);
    for (uint op = 0; op < nops; op++) {
        /* every kind's work, each over its item count, which is 0 unless its
         * kind runs: no branch on the kind around the guarded loops (POCL 5.0
         * aborted on "if (kind == 0) ... else if ..." here) */
        MERGE_READ(kind == 0 ? n : 0, yk, yi);
        MERGE_WRITE(kind == 1 ? n : 0, yk, yi);
        FLAT_STEP(2, kind == 2 && m == 1 ? n : 0);
#if MAXM >= 4
        FLAT_STEP(4, kind == 2 && m == 2 ? n : 0);
#endif
#if MAXM >= 8
        FLAT_STEP(8, kind == 2 && m == 3 ? n : 0);
#endif
#if MAXM >= 16
        FLAT_STEP(16, kind == 2 && m == 4 ? n : 0);
#endif
        barrier(CLK_LOCAL_MEM_FENCE);
        /* the next op: uniform arithmetic, no barrier */
        if (kind == 0) {
            kind = 1;
        } else if (kind == 1) {
            n >>= 1;
            kind = K > 1 ? 2 : 0; /* K = 1: no rebuild */
            hi = K / 2, dir = K, left = flat_steps(K / 2);
            m = sched_first_steps(K / 2, FLAT_PER);
        } else {
            hi >>= m;
            left -= m;
            m = FLAT_PER;
            if (left == 0) {
                if (sorting && (len << 1) < K) {
                    len <<= 1;
                    hi = len, dir = len << 1, left = flat_steps(len);
                    m = sched_first_steps(len, FLAT_PER);
                } else {
                    sorting = 0;
                    kind = 0;
                }
            }
        }
    }
}
#endif

/* ------------------------------------------------------------------ output */

/* the group's n sorted-run items -> its OUT items, or the final answer */
inline void finish(LPARAM, uint n, uint t, size_t g, __global okey_t *ck, __global uint *ci,
                   uint final_k, uint smallest, uint want, __global const okey_t *orig,
                   ulong orig_off, __global okey_t *out_keys, __global long *out_index,
                   ulong index_base)
{
    /* One reduction loop for both ends, and no barrier inside the branches
     * below: POCL 5.0's parallel-region formation aborted (an assertion in
     * Kernel.cc) on a branch whose arms held these barrier loops. */
#if FLAT
    (void)n; /* the kernel ran the reduction in flat_phases */
#else
    uint stop = final_k ? K : 2 * OUT;
    while (n > stop) {
        lmerge(LPASS, n, t);
        n /= 2;
        lphase(LPASS, n, K / 2, K, t);
    }
#endif
    if (!final_k) {
        /* the last merge, fused with the coalesced write: bitonic runs of K */
        size_t base = g * (size_t)OUT;
        for (uint p0 = 0; p0 < OUT; p0 += WG) {
            uint p = p0 + t;
            if (p < OUT) {
                uint i = sched_merge_src(p, K);
                okey_t ak = KGET(phys(i)), bk = KGET(phys(i + K));
#if INDEX
                uint ai = li[phys(i)], bi = li[phys(i + K)];
#endif
                int takeb = BETTER(bk, bi, ak, ai);
                ck[base + p] = takeb ? bk : ak;
                IDX(ci[base + p] = takeb ? bi : ai;)
            }
        }
    } else {
        /* K items sorted ascending (the worse first): output position j is K-1-j.
         * FLAT: a constant trip count (final_k <= K), no loop whose trip count
         * varies after the last barrier, a shape POCL's region formation
         * rejects (pocl issue 2281) */
        for (uint j0 = 0; j0 < (FLAT ? K : final_k); j0 += WG) {
            uint j = j0 + t;
            if (j < final_k) {
                uint p = phys(K - 1 - j);
                okey_t u = KGET(p);
#if INDEX
                uint idx = li[p];
#ifdef PACKED_FOR /* bit-packed source: the keys come back from their order keys */
                if (want & 1u)
                    out_keys[j] = okey_bits(u, smallest);
#else
                if (want & 1u)
                    out_keys[j] = orig[orig_off + idx];
#endif
                if (want & 2u)
                    out_index[j] = (long)(index_base + idx);
                (void)u;
#else
                if (want & 1u)
                    out_keys[j] = okey_bits(u, smallest);
#endif
            }
        }
    }
}

/* ----------------------------------------------------------------- kernels */

/* What both kernels start with: local arrays bound, this work-item's place,
 * its B items in registers. */
#define TILE_PROLOGUE                                                                    \
    LBIND;                                                                               \
    uint t = get_local_id(0);                                                            \
    size_t g = get_group_id(0);                                                          \
    size_t pos0 = g * (size_t)E + (size_t)t * B;                                         \
    okey_t xk[B];                                                                        \
    IDX_DECL(xi, B)

/* K < B: runs of K in registers merged and rebuilt down to one run of K */
#define REG_REDUCE(xk, xi)                                                               \
    _Pragma("unroll") for (uint c = B; c > K; c >>= 1) {                                 \
        REG_MERGE(xk, xi, c);                                                            \
        REG_STEPS(xk, xi, c / 2, K / 2, K, t * (c / 2));                                 \
    }

/* the registers' `hold` items to the local tile, then a barrier */
#define STAGE_TILE(xk, xi, hold)                                                         \
    _Pragma("unroll") for (uint j = 0; j < HOLD; j++)                                    \
        LSTORE(xk, xi, j, t * (hold) + j);                                               \
    barrier(CLK_LOCAL_MEM_FENCE)

/* Level 0: raw elements in[off .. off+n) -> OUT items per group. */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void sort_reducer(__global const okey_t *in, ulong off, uint n, uint smallest,
                  __global okey_t *ck, __global uint *ci, uint final_k, uint want,
                  __global okey_t *out_keys, __global long *out_index, ulong index_base,
                  __local uint *l0, __local uint *l1, __local uint *l2
#ifdef PACKED_FOR
                  , __global const uint *pk_starts, uint pk_nblocks
#endif
                  )
{
    TILE_PROLOGUE;
#ifdef PACKED_FOR
    /* ---- bit-packed source (lib/codec.c): `in` holds the data words of a
     * GPU-FOR column and pk_starts its block_starts.  The group's E values are
     * E / 512 packed tiles, decoded on load by LoadBitPack (cl/bitpack.h) in
     * its striped order; the index travels with each key, so which work-item
     * holds which value does not change the answer.  Keys come back through
     * okey_bits (finish), never from `in`. */
#if WG != BP_NT || (B % BP_D) || KEY_BITS != 32 || !INDEX
#error "PACKED_FOR needs WG == 128, B a multiple of BP_D, 32-bit keys and INDEX"
#endif
    __local uint pk_s[BP_FOR_LOCAL];
    (void)pos0;
    (void)off;
    for (uint r = 0; r < B / BP_D; r++) {
        uint tile = (uint)g * (B / BP_D) + r, it[BP_D];
        for (uint i = 0; i < BP_D; i++)
            it[i] = 0;
        if (tile * BP_D < pk_nblocks) /* the same for the whole group */
            LoadBitPack(in, pk_starts, tile, pk_nblocks, pk_s, it);
        for (uint i = 0; i < BP_D; i++) {
            size_t pos = ((size_t)tile * BP_D + i) * BP_NT + t;
            int real = pos < n;
            xk[r * BP_D + i] = real ? order_key(it[i], smallest) : (okey_t)0;
            xi[r * BP_D + i] = real ? (uint)pos : SENTINEL_IDX;
        }
    }
#else
    /* Raw elements are unordered, so item j of work-item t may be any element
     * of the tile: take element j * WG + t, so that each load of a warp is one
     * coalesced transaction, and issue all B loads before any use of them. */
    (void)pos0;
    size_t tile0 = g * (size_t)E + t;
    okey_t raw[B];
    if (g * (size_t)E + E <= n) {
        _Pragma("unroll") for (uint j = 0; j < B; j++)
            raw[j] = in[off + tile0 + (size_t)j * WG];
        _Pragma("unroll") for (uint j = 0; j < B; j++) {
            xk[j] = order_key(raw[j], smallest);
            IDX(xi[j] = (uint)(tile0 + (size_t)j * WG);)
        }
    } else {
        _Pragma("unroll") for (uint j = 0; j < B; j++) {
            size_t p = tile0 + (size_t)j * WG;
            int real = p < n;
            raw[j] = real ? in[off + p] : (okey_t)0;
            xk[j] = real ? order_key(raw[j], smallest) : (okey_t)0;
            IDX(xi[j] = real ? (uint)p : SENTINEL_IDX;)
        }
    }
#endif /* PACKED_FOR */
    /* local sort in registers: runs of min(B, K); positions t*B + j */
    uint tb = t * B;
    _Pragma("unroll") for (uint len = 1; len < HOLD; len <<= 1)
        REG_STEPS(xk, xi, B, len, len << 1, tb);
    /* K < B: merge and rebuild in registers down to one run of K */
    uint hold = B;
#if K < B
    REG_REDUCE(xk, xi);
    hold = K;
#endif
    STAGE_TILE(xk, xi, hold);
#if FLAT
    flat_phases(LPASS, hold * WG, hold, final_k ? K : 2 * OUT, t);
#else
    /* K > B: the rest of the local sort, phases len = B .. K/2 */
    for (uint len = hold; len < K; len <<= 1)
        lphase(LPASS, E, len, len << 1, t);
#endif
    finish(LPASS, hold * WG, t, g, ck, ci, final_k, smallest, want, in, off, out_keys, out_index,
           index_base);
}

/* Level >= 1: m items of bitonic runs of K -> OUT items per group. */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void bitonic_reducer(__global const okey_t *ck_in, __global const uint *ci_in, uint m,
                     uint smallest, __global okey_t *ck, __global uint *ci, uint final_k,
                     uint want, __global const okey_t *orig, ulong orig_off,
                     __global okey_t *out_keys, __global long *out_index, ulong index_base,
                  __local uint *l0, __local uint *l1, __local uint *l2)
{
    TILE_PROLOGUE;
    _Pragma("unroll") for (uint j = 0; j < B; j++) {
        int real = pos0 + j < m;
        xk[j] = real ? ck_in[pos0 + j] : (okey_t)0;
        IDX(xi[j] = real ? ci_in[pos0 + j] : SENTINEL_IDX;)
    }
    uint hold = B;
#if K <= B
    /* whole bitonic runs in registers: rebuild, then reduce to one run */
    REG_STEPS(xk, xi, B, K / 2, K, t * B);
    REG_REDUCE(xk, xi);
    hold = K;
#endif
    STAGE_TILE(xk, xi, hold);
#if FLAT
    flat_phases(LPASS, hold * WG, K > B ? K / 2 : K, final_k ? K : 2 * OUT, t);
#elif K > B
    lphase(LPASS, E, K / 2, K, t); /* the rebuild the last launch left to us */
#endif
    finish(LPASS, hold * WG, t, g, ck, ci, final_k, smallest, want, orig, orig_off, out_keys,
           out_index, index_base);
}
