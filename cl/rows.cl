/* rows.cl - many top-k at once: one work-group per row (a dense row, a segment,
 * or the distances of one kNN query to every point), after seed 004's "bits"
 * kernel (docs: ../shared/research/seed-002-004-earlystop-knn.md, part B).
 *
 * Every element is the pair (order key u, 32-bit position i in its row), with
 * THE ORDER of common.cl: larger u first, then smaller i.  A group keeps, in
 * local memory, its best KTOP pairs so far (sorted, best first) and a buffer
 * of CAP candidates.  Its work-items stream the row, R elements each a round
 * (coalesced), and append to the buffer (a local atomic) only the elements
 * that beat the current k-th best pair; after a round that may have left
 * fewer than WG * R free slots, the buffer is sorted (bitonic, best first),
 * merged into the best KTOP (element-wise better of best[i] and buffer[KTOP-1-i]
 * gives a bitonic sequence holding the best KTOP of the union) and that is
 * re-sorted by a bitonic merge.  The threshold rises quickly on most inputs,
 * so most rounds only compare.  The k first pairs are then written: keys as
 * the input's bits (read at their positions, so -0 and NaN payloads stay),
 * positions as int64; positions past a short segment (the sentinel) are -1
 * with a key of zero bytes.
 *
 * Kernels (MODE picks one):
 *   MODE 0  rows_dense     row r = in[in_off + r * ld ..][0 .. cols); long rows
 *                          also in PARTS parts a row (rows_dense_part, one group
 *                          a part, writes each part's best k pairs) merged by
 *                          rows_dense_merge (a group a row over the candidates,
 *                          which carry their positions)
 *   MODE 1  rows_segments  segment s = in[in_off + offs[s] .. in_off + offs[s+1]);
 *                          segments of at most SHORT elements go to
 *                          rows_segments_short, a work-item each
 *   MODE 2  rows_knn       query q against np points of dimension d: the
 *                          distance (METRIC 0: squared L2, 1: inner product) is
 *                          computed in place, acc = fma(a, b, acc) from acc =
 *                          0.0f in dimension order, so that every device gives
 *                          the same bits; no distance matrix is stored.  The
 *                          winners' distances are computed again for the output
 *                          (a NaN written as the quiet NaN 0x7FC00000).
 *
 * -D options (defaults below, so that the file compiles on its own): KEY_BITS,
 * KEY_KIND (common.cl; MODE 2 uses 32 and 2), MODE, METRIC, WG (work-items of
 * a group, a power of two), R (elements a work-item takes a round), KTOP (a
 * power of two >= k), CAP (the buffer: a power of two >= KTOP and >= WG * R),
 * SHORT (MODE 1: the longest segment a work-item sorts alone, at most 256). */
#ifndef CLTOPK_COMMON_CL
#include "common.cl"
#endif

#ifndef MODE
#define MODE 0
#endif
#ifndef METRIC
#define METRIC 0
#endif
#ifndef WG
#define WG 128
#endif
#ifndef R
#define R 2
#endif
#ifndef KTOP
#define KTOP 32
#endif
#ifndef CAP
#define CAP 256
#endif

#if CAP < KTOP || CAP < WG * R
#error "CAP must be at least KTOP and WG * R"
#endif

#define BETTER(au, ai, bu, bi) (((au) > (bu)) | (((au) == (bu)) & ((ai) < (bi))))

/* Merge the buffer's cnt candidates into the best KTOP (tu, ti); the buffer is
 * empty after it.  Every work-item of the group calls it. */
inline void merge_buffer(__local okey_t *tu, __local uint *ti, __local okey_t *bu,
                         __local uint *bi, uint cnt)
{
    const uint lid = get_local_id(0);
    /* the smallest power of two that holds the candidates (at least 2) */
    uint m = 2;
    while (m < cnt)
        m <<= 1;
    if (m < KTOP)
        m = KTOP;
    for (uint i = cnt + lid; i < m; i += WG) {
        bu[i] = 0;
        bi[i] = SENTINEL_IDX;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    /* bitonic sort of bu[0 .. m), best first */
    for (uint size = 2; size <= m; size <<= 1) {
        for (uint j = size >> 1; j > 0; j >>= 1) {
            for (uint c = lid; c < m / 2; c += WG) {
                uint lo = lower_of(c, j), hi = lo + j;
                okey_t ul = bu[lo], uh = bu[hi];
                uint il = bi[lo], ih = bi[hi];
                int hb = BETTER(uh, ih, ul, il);
                int best_first = (lo & size) == 0;
                if (hb == best_first) {
                    bu[lo] = uh;
                    bi[lo] = ih;
                    bu[hi] = ul;
                    bi[hi] = il;
                }
            }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
    }
    /* the best KTOP of both: best[i] against buffer[KTOP - 1 - i] (bitonic) */
    for (uint i = lid; i < KTOP; i += WG) {
        okey_t ub = bu[KTOP - 1u - i];
        uint ib = bi[KTOP - 1u - i];
        if (BETTER(ub, ib, tu[i], ti[i])) {
            tu[i] = ub;
            ti[i] = ib;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint j = KTOP >> 1; j > 0; j >>= 1) {
        for (uint c = lid; c < KTOP / 2; c += WG) {
            uint lo = lower_of(c, j), hi = lo + j;
            okey_t ul = tu[lo], uh = tu[hi];
            uint il = ti[lo], ih = ti[hi];
            if (BETTER(uh, ih, ul, il)) {
                tu[lo] = uh;
                ti[lo] = ih;
                tu[hi] = ul;
                ti[hi] = il;
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

#if MODE == 2
/* the distance of the fma definition (cltopk.h, cltopk_knn) */
inline float knn_dist(__global const float *q, __global const float *p, uint d)
{
    float acc = 0.0f;
    for (uint j = 0; j < d; j++) {
#if METRIC == 0
        float t = q[j] - p[j];
        acc = fma(t, t, acc);
#else
        acc = fma(q[j], p[j], acc);
#endif
    }
    return acc;
}
#endif

/* The body shared by the kernels: LOAD(j) gives the order key of the row's
 * element j and POS(j) its position; `len` elements.  Leaves the best KTOP in
 * tu / ti. */
#define ROW_SELECT(LOAD, POS)                                                                 \
    const uint lid = get_local_id(0);                                                         \
    for (uint i = lid; i < KTOP; i += WG) {                                                   \
        tu[i] = 0;                                                                            \
        ti[i] = SENTINEL_IDX;                                                                 \
    }                                                                                         \
    if (lid == 0)                                                                             \
        cnt = 0;                                                                              \
    barrier(CLK_LOCAL_MEM_FENCE);                                                             \
    okey_t thu = 0;                                                                           \
    uint thi = SENTINEL_IDX;                                                                  \
    for (ulong base = 0; base < len; base += (ulong)(WG * R)) {                               \
        for (uint r = 0; r < R; r++) {                                                        \
            ulong j = base + (ulong)(r * WG + lid);                                           \
            if (j < len) {                                                                    \
                okey_t u = LOAD(j);                                                           \
                uint pos = POS(j);                                                            \
                if (BETTER(u, pos, thu, thi)) {                                               \
                    uint p = atomic_inc(&cnt);                                                \
                    bu[p] = u;                                                                \
                    bi[p] = pos;                                                              \
                }                                                                             \
            }                                                                                 \
        }                                                                                     \
        barrier(CLK_LOCAL_MEM_FENCE);                                                         \
        uint c = cnt;                                                                         \
        int last = base + (ulong)(WG * R) >= len;                                             \
        barrier(CLK_LOCAL_MEM_FENCE);                                                         \
        if ((c > CAP - WG * R || last) && c > 0) {                                            \
            merge_buffer(tu, ti, bu, bi, c);                                                  \
            if (lid == 0)                                                                     \
                cnt = 0;                                                                      \
            barrier(CLK_LOCAL_MEM_FENCE);                                                     \
            thu = tu[k - 1];                                                                  \
            thi = ti[k - 1];                                                                  \
        }                                                                                     \
    }

/* positions are the element numbers of the row (all but the merge of parts) */
#define POS_PLAIN(j) ((uint)(j))

#define LOCALS                                                                                \
    __local okey_t tu[KTOP];                                                                  \
    __local uint ti[KTOP];                                                                    \
    __local okey_t bu[CAP];                                                                   \
    __local uint bi[CAP];                                                                     \
    __local uint cnt

/* write the k first pairs of row `row` whose element j is in[start + j] */
#define WRITE_KEYS_INDEX(start)                                                               \
    for (uint i = lid; i < k; i += WG) {                                                      \
        uint idx = ti[i];                                                                     \
        ulong o = row * (ulong)k + i;                                                         \
        if (want & 1u)                                                                        \
            out_keys[o] = idx == SENTINEL_IDX ? (key_t)0 : in[(start) + idx];                 \
        if (want & 2u)                                                                        \
            out_index[o] = idx == SENTINEL_IDX ? (long)-1 : (long)(idx + ibase);              \
    }

#if MODE == 0
/* rows x cols at in[in_off], ld elements between row starts; positions + ibase */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
rows_dense(__global const key_t *in, ulong in_off, ulong ld, ulong cols, uint k,
           uint smallest, __global key_t *out_keys, __global long *out_index, uint want,
           ulong ibase)
{
    LOCALS;
    const ulong row = get_group_id(0);
    const ulong start = in_off + row * ld, len = cols;
#define LOAD_DENSE(j) order_key(in[start + (j)], smallest)
    ROW_SELECT(LOAD_DENSE, POS_PLAIN)
    WRITE_KEYS_INDEX(start)
}

/* Long rows over several work-groups: group g takes part g % parts of row
 * g / parts (plen elements of it) and writes its best k pairs (order key,
 * position in the row; the sentinel where the part is shorter) to cand_u /
 * cand_i at g * k ... */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
rows_dense_part(__global const key_t *in, ulong in_off, ulong ld, ulong cols, uint k,
                uint smallest, uint parts, ulong plen, __global okey_t *cand_u,
                __global uint *cand_i)
{
    LOCALS;
    const ulong g = get_group_id(0), row = g / parts, part = g % parts;
    const ulong first = part * plen;
    const ulong start = in_off + row * ld + first;
    const ulong len = first >= cols ? 0 : (cols - first < plen ? cols - first : plen);
#define POS_PART(j) ((uint)(first + (j)))
    ROW_SELECT(LOAD_DENSE, POS_PART)
    for (uint i = lid; i < k; i += WG) {
        cand_u[g * k + i] = tu[i];
        cand_i[g * k + i] = ti[i];
    }
}

/* ... then a group a row merges its parts * k candidates and writes the
 * row's k first as rows_dense does */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
rows_dense_merge(__global const key_t *in, ulong in_off, ulong ld, uint k, uint parts,
                 __global const okey_t *cand_u, __global const uint *cand_i,
                 __global key_t *out_keys, __global long *out_index, uint want, ulong ibase)
{
    LOCALS;
    const ulong row = get_group_id(0);
    const ulong start = in_off + row * ld, len = (ulong)parts * k, c0 = row * len;
#define LOAD_CAND(j) cand_u[c0 + (j)]
#define POS_CAND(j) cand_i[c0 + (j)]
    ROW_SELECT(LOAD_CAND, POS_CAND)
    WRITE_KEYS_INDEX(start)
}
#endif

#if MODE == 1
#ifndef SHORT
#define SHORT 32
#endif
/* segment s = in[in_off + offs[s] .. in_off + offs[s + 1]) (in_off may be
 * negative: host batches pass offsets relative to their first segment); with
 * ids (use_ids 1) group g takes segment ids[g] (the long ones, when the short
 * ones go to rows_segments_short) */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
rows_segments(__global const key_t *in, long in_off, __global const long *offs,
              __global const uint *ids, uint use_ids, uint k, uint smallest,
              __global key_t *out_keys, __global long *out_index, uint want, ulong ibase)
{
    LOCALS;
    const ulong row = use_ids ? (ulong)ids[get_group_id(0)] : get_group_id(0);
    const ulong start = (ulong)(in_off + offs[row]);
    const ulong len = (ulong)(offs[row + 1] - offs[row]);
#define LOAD_SEG(j) order_key(in[start + (j)], smallest)
    ROW_SELECT(LOAD_SEG, POS_PLAIN)
    WRITE_KEYS_INDEX(start)
}

/* Segments of at most SHORT elements, a work-item each: work-item g of the
 * launch takes segment g (those longer than SHORT belong to other kernels and
 * are skipped), sorts it into THE ORDER in private memory by insertion (equal
 * keys stay in position order), and the group then writes its segments' k
 * outputs together, a segment at a time, so that the writes are coalesced.
 * Launched with groups of SHORT_WG work-items. */
#ifndef SHORT_WG
#define SHORT_WG 64
#endif
__kernel __attribute__((reqd_work_group_size(SHORT_WG, 1, 1))) void
rows_segments_short(__global const key_t *in, long in_off, __global const long *offs,
                    ulong nseg, uint k, uint smallest, __global key_t *out_keys,
                    __global long *out_index, uint want, ulong ibase)
{
    __local uchar lix[SHORT_WG][SHORT];
    __local uint llen[SHORT_WG];
    const uint lid = get_local_id(0);
    const ulong g0 = (ulong)get_group_id(0) * SHORT_WG, row = g0 + lid;
    uint len = SHORT + 1u;
    if (row < nseg) {
        const ulong start = (ulong)(in_off + offs[row]);
        len = (uint)(offs[row + 1] - offs[row]);
        if (len <= SHORT) {
            okey_t u[SHORT];
            uchar ix[SHORT];
            for (uint j = 0; j < len; j++) {
                okey_t x = order_key(in[start + j], smallest);
                uint p = j;
                while (p > 0 && x > u[p - 1]) { /* a later equal key stays behind */
                    u[p] = u[p - 1];
                    ix[p] = ix[p - 1];
                    p--;
                }
                u[p] = x;
                ix[p] = (uchar)j;
            }
            for (uint j = 0; j < len; j++)
                lix[lid][j] = ix[j];
        }
    }
    llen[lid] = len;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint w = 0; w < SHORT_WG && g0 + w < nseg; w++) {
        const uint lw = llen[w];
        if (lw > SHORT)
            continue;
        const ulong r = g0 + w;
        const ulong start = (ulong)(in_off + offs[r]);
        for (uint i = lid; i < k; i += SHORT_WG) {
            const ulong o = r * (ulong)k + i;
            if (want & 1u)
                out_keys[o] = i < lw ? in[start + lix[w][i]] : (key_t)0;
            if (want & 2u)
                out_index[o] = i < lw ? (long)(lix[w][i] + ibase) : (long)-1;
        }
    }
}
#endif

#if MODE == 2
/* query row = get_group_id(0) of queries (nq x d at q_off) against np points
 * (np x d at p_off); smallest 1 for L2 (nearest), 0 for inner product */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
rows_knn(__global const float *queries, ulong q_off, __global const float *points, ulong p_off,
         ulong np, uint d, uint k, uint smallest, __global float *out_dist,
         __global long *out_index, uint want)
{
    LOCALS;
    const ulong row = get_group_id(0);
    const ulong len = np;
    __global const float *q = queries + q_off + row * d;
    __global const float *pts = points + p_off;
#define LOAD_KNN(j) order_key(as_uint(knn_dist(q, pts + (j) * d, d)), smallest)
    ROW_SELECT(LOAD_KNN, POS_PLAIN)
    for (uint i = lid; i < k; i += WG) {
        uint idx = ti[i];
        ulong o = row * (ulong)k + i;
        if (want & 1u) {
            float v = knn_dist(q, pts + (ulong)idx * d, d);
            out_dist[o] = isnan(v) ? as_float(0x7FC00000u) : v;
        }
        if (want & 2u)
            out_index[o] = (long)idx;
    }
}
#endif
