/* knn.cl - exact kNN by tiles of distances (cltopk_knn on an OpenCL device).
 *
 * The distance of a (query, point) pair is the one of cltopk.h: acc = 0.0f,
 * then acc = fma(q[j] - p[j], q[j] - p[j], acc) (inner product: fma(q[j],
 * p[j], acc)) for j = 0 .. d-1 in order, by one work-item.  A work-group
 * takes a tile of TQ queries x TP points; the coordinates travel through
 * local memory DC at a time (coalesced rows of the tile's queries and
 * points, stored transposed), and each work-item accumulates a micro-tile of
 * MQ queries x MP points in registers, in dimension order.  A chunk past d is
 * padded with zeros: fma(0, 0, acc) or fma(0 - 0, 0 - 0, acc) adds +0, which
 * leaves acc as it is except that -0 becomes +0, which THE ORDER does not
 * tell apart; the distances written out are computed again from the inputs
 * (knn_dist), so their bits are the definition's.
 *
 * A call runs, for a batch of queries:
 *   knn_tile_keys    the order keys (common.cl, 32-bit float, larger first)
 *                    of npt points (point s * pstride for s < npt) against
 *                    every query, into a dense matrix, query-major
 *   knn_thresh       a work-group a query over its row of that matrix
 *                    (rows.cl's selection): either the answer (direct: the
 *                    matrix held every point), or the k-th best key of the
 *                    sample, the query's threshold: at least k points reach
 *                    it, so the true k best all do
 *   knn_tile_filter  the tiles over every point again; a pair whose key is at
 *                    or above its query's threshold is appended to the
 *                    query's list of candidates (CAPQ of them; a local count
 *                    a query, then one global atomic a group and query
 *                    reserves room); the count goes on past CAPQ, so that an
 *                    overflow is seen
 *   knn_select       a work-group a query whose candidates fit: the k best of
 *                    them, ties by smaller point index, written out
 *   knn_fallback     a work-group a query whose candidates overflowed: the
 *                    k best of every point, distances computed in place (as
 *                    rows_knn), written out; the others return at once
 *
 * -D options (defaults below and in rows.cl, so that the file compiles on its
 * own): METRIC, WG, R, KTOP, CAP (rows.cl's selection, MODE 2); TQ, TP
 * (queries and points of a tile), MQ, MP (a work-item's micro-tile: multiples
 * of 4 dividing TQ and TP), DC (coordinates a chunk). */
#ifndef CLTOPK_COMMON_CL
#include "common.cl"
#endif

#ifndef MODE
#define MODE 2
#endif
#if MODE != 2
#error "knn.cl uses rows.cl's kNN mode (MODE 2)"
#endif
#include "rows.cl"

#ifndef TQ
#define TQ 16
#endif
#ifndef TP
#define TP 32
#endif
#ifndef MQ
#define MQ 4
#endif
#ifndef MP
#define MP 4
#endif
#ifndef DC
#define DC 16
#endif

#if TQ % MQ || TP % MP || MQ % 4 || MP % 4
#error "MQ and MP must be multiples of 4 dividing TQ and TP"
#endif

#define TWG ((TQ / MQ) * (TP / MP)) /* work-items of a tile */
#define QS (TQ + 4)                 /* floats between staged coordinates of queries */
#define PS (TP + 4)                 /* ... and of points (padding: fewer bank conflicts) */

/* The micro-tile of this work-item: acc[i * MP + l] the distance of query
 * qt + tq * MQ + i (tq = lid / (TP / MP)) of the batch (nqb queries from
 * element q_off) and sample point pt + tp * MP + l (tp = lid % (TP / MP)),
 * which is point (pt + tp * MP + l) * pstride (npt of them) from element
 * p_off.  Every work-item of the group calls it. */
inline void tile_acc(__global const float *queries, ulong q_off, uint nqb, uint qt,
                     __global const float *points, ulong p_off, ulong npt, ulong pstride,
                     ulong pt, uint d, __local float *qs, __local float *ps, float *acc)
{
    const uint lid = get_local_id(0);
    const uint tq = lid / (TP / MP), tp = lid % (TP / MP);
#pragma unroll
    for (uint i = 0; i < MQ * MP; i++)
        acc[i] = 0.0f;
    for (uint j0 = 0; j0 < d; j0 += DC) {
        barrier(CLK_LOCAL_MEM_FENCE); /* the last chunk's readers are done */
        for (uint e = lid; e < TQ * DC; e += TWG) {
            uint r = e / DC, j = e % DC;
            float v = 0.0f;
            if (qt + r < nqb && j0 + j < d)
                v = queries[q_off + (ulong)(qt + r) * d + j0 + j];
            qs[j * QS + r] = v;
        }
        for (uint e = lid; e < TP * DC; e += TWG) {
            uint r = e / DC, j = e % DC;
            float v = 0.0f;
            if (pt + r < npt && j0 + j < d)
                v = points[p_off + (pt + r) * pstride * d + j0 + j];
            ps[j * PS + r] = v;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
        for (uint j = 0; j < DC; j++) {
            float a[MQ], b[MP];
#pragma unroll
            for (uint u = 0; u < MQ / 4; u++)
                vstore4(vload4(0, qs + j * QS + tq * MQ + 4 * u), 0, a + 4 * u);
#pragma unroll
            for (uint u = 0; u < MP / 4; u++)
                vstore4(vload4(0, ps + j * PS + tp * MP + 4 * u), 0, b + 4 * u);
#pragma unroll
            for (uint i = 0; i < MQ; i++)
#pragma unroll
                for (uint l = 0; l < MP; l++) {
#if METRIC == 0
                    float t = a[i] - b[l];
                    acc[i * MP + l] = fma(t, t, acc[i * MP + l]);
#else
                    acc[i * MP + l] = fma(a[i], b[l], acc[i * MP + l]);
#endif
                }
        }
    }
}

/* the tile of group g: query tiles vary fastest, so that the groups running
 * together share their points' tile (read once from memory) */
#define TILE_START                                                                            \
    __local float4 qs4[DC * QS / 4];                                                          \
    __local float4 ps4[DC * PS / 4];                                                          \
    const uint lid = get_local_id(0);                                                         \
    const uint tq = lid / (TP / MP), tp = lid % (TP / MP);                                    \
    const uint nqt = (nqb + TQ - 1) / TQ;                                                     \
    const ulong g = get_group_id(0);                                                          \
    const uint qt = (uint)(g % nqt) * TQ;                                                     \
    const ulong pt = (g / nqt) * TP;                                                          \
    float acc[MQ * MP]

/* the order keys of the batch's queries against npt sample points, into
 * keys[q * npt + s] */
__kernel __attribute__((reqd_work_group_size(TWG, 1, 1))) void
knn_tile_keys(__global const float *queries, ulong q_off, uint nqb,
              __global const float *points, ulong p_off, ulong npt, ulong pstride, uint d,
              uint smallest, __global uint *keys)
{
    TILE_START;
    tile_acc(queries, q_off, nqb, qt, points, p_off, npt, pstride, pt, d, (__local float *)qs4,
             (__local float *)ps4, acc);
#pragma unroll
    for (uint i = 0; i < MQ; i++) {
        uint q = qt + tq * MQ + i;
#pragma unroll
        for (uint l = 0; l < MP; l++) {
            ulong s = pt + tp * MP + l;
            if (q < nqb && s < npt)
                keys[q * npt + s] = order_key(as_uint(acc[i * MP + l]), smallest);
        }
    }
}

/* the pairs at or above their query's threshold thr[q], appended to the
 * query's candidates cand_u / cand_i at q * capq, counted in counts[q] */
__kernel __attribute__((reqd_work_group_size(TWG, 1, 1))) void
knn_tile_filter(__global const float *queries, ulong q_off, uint nqb,
                __global const float *points, ulong p_off, ulong np, uint d, uint smallest,
                __global const uint *thr, __global uint *counts, uint capq,
                __global uint *cand_u, __global uint *cand_i)
{
    TILE_START;
    __local uint lcnt[TQ], lbase[TQ];
    for (uint i = lid; i < TQ; i += TWG)
        lcnt[i] = 0; /* ordered before the atomics by tile_acc's barriers */
    tile_acc(queries, q_off, nqb, qt, points, p_off, np, 1, pt, d, (__local float *)qs4,
             (__local float *)ps4, acc);
    uint slot[MQ * MP];
#pragma unroll
    for (uint i = 0; i < MQ; i++) {
        uint q = qt + tq * MQ + i;
        uint th = q < nqb ? thr[q] : 0u;
#pragma unroll
        for (uint l = 0; l < MP; l++) {
            ulong p = pt + tp * MP + l;
            uint u = order_key(as_uint(acc[i * MP + l]), smallest);
            int pass = q < nqb && p < np && u >= th;
            slot[i * MP + l] = pass ? atomic_inc(&lcnt[tq * MQ + i]) : 0xFFFFFFFFu;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint i = lid; i < TQ; i += TWG)
        if (lcnt[i])
            lbase[i] = atomic_add(&counts[qt + i], lcnt[i]);
    barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
    for (uint i = 0; i < MQ; i++) {
        uint q = qt + tq * MQ + i;
#pragma unroll
        for (uint l = 0; l < MP; l++) {
            uint sl = slot[i * MP + l];
            if (sl != 0xFFFFFFFFu) {
                uint at = lbase[tq * MQ + i] + sl;
                if (at < capq) {
                    ulong o = (ulong)q * capq + at;
                    cand_u[o] = order_key(as_uint(acc[i * MP + l]), smallest);
                    cand_i[o] = (uint)(pt + tp * MP + l);
                }
            }
        }
    }
}

/* write query row's k first (ti: point indices): distances computed again
 * from the inputs (a NaN as 0x7FC00000), at output row orow + row */
#define KNN_WRITE                                                                             \
    for (uint i = lid; i < k; i += WG) {                                                      \
        uint idx = ti[i];                                                                     \
        ulong o = (orow + row) * (ulong)k + i;                                                \
        if (want & 1u) {                                                                      \
            float v = knn_dist(q, pts + (ulong)idx * d, d);                                   \
            out_dist[o] = isnan(v) ? as_float(0x7FC00000u) : v;                               \
        }                                                                                     \
        if (want & 2u)                                                                        \
            out_index[o] = (long)idx;                                                         \
    }

#define KNN_ROW                                                                               \
    const ulong row = get_group_id(0);                                                        \
    __global const float *q = queries + q_off + row * d;                                      \
    __global const float *pts = points + p_off

/* query row of the batch over its npt sample keys: direct (the sample is
 * every point): its answer; else its threshold thr[row] (and counts[row] =
 * 0 for knn_tile_filter) */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
knn_thresh(__global const uint *keys, ulong npt, uint k, uint direct, __global uint *thr,
           __global uint *counts, __global const float *queries, ulong q_off,
           __global const float *points, ulong p_off, uint d, __global float *out_dist,
           __global long *out_index, uint want, ulong orow)
{
    LOCALS;
    KNN_ROW;
    const ulong len = npt, k0 = row * npt;
#define KNN_LOAD_KEYS(j) keys[k0 + (j)]
    ROW_SELECT(KNN_LOAD_KEYS, POS_PLAIN)
    if (direct) {
        KNN_WRITE
    } else if (lid == 0) {
        thr[row] = tu[k - 1];
        counts[row] = 0;
    }
}

/* query row's candidates, where they fit: its answer */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
knn_select(__global const uint *counts, uint capq, __global const uint *cand_u,
           __global const uint *cand_i, uint k, __global const float *queries, ulong q_off,
           __global const float *points, ulong p_off, uint d, __global float *out_dist,
           __global long *out_index, uint want, ulong orow)
{
    LOCALS;
    KNN_ROW;
    /* an overflowed list is knn_fallback's: no early return (the group's
     * barriers must all be reached: POCL), an empty selection instead */
    const uint c = counts[row];
    const ulong len = c > capq ? 0 : c, c0 = row * (ulong)capq;
#define KNN_LOAD_CAND(j) cand_u[c0 + (j)]
#define KNN_POS_CAND(j) cand_i[c0 + (j)]
    ROW_SELECT(KNN_LOAD_CAND, KNN_POS_CAND)
    if (c <= capq) {
        KNN_WRITE
    }
}

/* query row whose candidates overflowed: its answer over every point */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
knn_fallback(__global const uint *counts, uint capq, __global const float *queries,
             ulong q_off, __global const float *points, ulong p_off, ulong np, uint d, uint k,
             uint smallest, __global float *out_dist, __global long *out_index, uint want,
             ulong orow)
{
    LOCALS;
    KNN_ROW;
    const int mine = counts[row] > capq; /* else knn_select's: an empty selection */
    const ulong len = mine ? np : 0;
#define KNN_LOAD_DIST(j) order_key(as_uint(knn_dist(q, pts + (j) * d, d)), smallest)
    ROW_SELECT(KNN_LOAD_DIST, POS_PLAIN)
    if (mine) {
        KNN_WRITE
    }
}
