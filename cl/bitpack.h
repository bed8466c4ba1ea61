/* bitpack.h - decoding GPU-FOR, GPU-DFOR and GPU-RFOR columns while loading a
 * tile (docs/FORMAT.md; Shanbhag's thesis, chapter 5, Algorithms 6 and 7).
 *
 * The library prepends this header to every program it builds, so any kernel
 * can replace a plain load of a tile by one of these (all work-items of the
 * group must call it: it has barriers):
 *   LoadBitPack(data, starts, tile, nblocks, s, items)
 *       GPU-FOR: items[i] = value get_local_id(0) of block tile*BP_D + i
 *   LoadDBitPack(data, starts, tile, nblocks, s, x, items)
 *       GPU-DFOR (BP_D must be 4: the format's delta tile is 512 values)
 *   LoadRBitPack(data, starts, tile, s, items)
 *       GPU-RFOR: items[i] = value i*128 + get_local_id(0) of tile `tile` (4 items)
 * The output is striped as Crystal's BlockLoad: items[i] is tile element
 * i * BP_NT + get_local_id(0).  Work-groups are BP_NT = 128 work-items.
 * Local buffers (declared by the kernel): s of BP_FOR_LOCAL (or BP_RFOR_LOCAL)
 * words, x of BP_SCAN_LOCAL words.  Items past the column's end hold padding.
 * The column must have been validated (lib/codec.c does it on the host): the
 * loaders trust the widths and offsets, read global memory only inside
 * [starts[first block], starts[last block + 1]) and need no slack word there
 * (the two-word window's slack lives in local memory).
 *
 * Shifts: OpenCL masks shift counts, so (1u << 32) - 1 is 0; the masks are
 * 64-bit ((1UL << w) - 1 is right for every width 0..32). */
#ifndef CLTOPK_BITPACK_H
#define CLTOPK_BITPACK_H

#ifndef BP_D
#define BP_D 4              /* blocks of 128 values per work-group (FOR) */
#endif
#define BP_NT 128
/* starts (D+1), widths (4D), offsets (4D), words (130 D + DFOR's two first-value
 * words + 2 slack) */
#define BP_FOR_LOCAL (BP_D + 1 + 8 * BP_D + 130 * BP_D + 4)
#define BP_PAD(i) ((i) + ((i) >> 5))
#define BP_SCAN_LOCAL (BP_PAD(BP_NT * BP_D) + BP_NT)
/* words (3 + 512 + 512 + 2 slack), run values (512), scan area (4 items) */
#define BP_RFOR_WORDS (3 + 512 + 512 + 2)
#define BP_RFOR_LOCAL (BP_RFOR_WORDS + 512 + BP_PAD(BP_NT * 4) + BP_NT)

/* the w-bit value at bit sh of s[wi], s[wi + 1] (the 64-bit window) */
inline uint bp_window(__local const uint *s, uint wi, uint sh, uint w)
{
    ulong win = (ulong)s[wi] | ((ulong)s[wi + 1] << 32);
    return (uint)((win >> sh) & ((1UL << w) - 1UL));
}

/* inclusive work-group scan of NI values per work-item in blocked order (v[j]
 * is element tid*NI + j); t: BP_NT words of local memory */
#define BP_SCAN_BLOCKED(t, v, NI)                                                   \
    do {                                                                            \
        uint tid_ = get_local_id(0), acc_ = 0;                                      \
        for (uint j_ = 0; j_ < (NI); j_++) {                                        \
            acc_ += (v)[j_];                                                        \
            (v)[j_] = acc_;                                                         \
        }                                                                           \
        (t)[tid_] = acc_;                                                           \
        barrier(CLK_LOCAL_MEM_FENCE);                                               \
        for (uint o_ = 1; o_ < BP_NT; o_ <<= 1) {                                   \
            uint y_ = tid_ >= o_ ? (t)[tid_ - o_] : 0u;                             \
            barrier(CLK_LOCAL_MEM_FENCE);                                           \
            (t)[tid_] += y_;                                                        \
            barrier(CLK_LOCAL_MEM_FENCE);                                           \
        }                                                                           \
        uint ex_ = (t)[tid_] - acc_;                                                \
        for (uint j_ = 0; j_ < (NI); j_++)                                          \
            (v)[j_] += ex_;                                                         \
        barrier(CLK_LOCAL_MEM_FENCE);                                               \
    } while (0)

/* Algorithms 6 and 7 over blocks tile*BP_D ..; dfor: the words start one
 * earlier, at the tile's first-value word, which is returned */
inline uint bp_load_blocks(__global const uint *data, __global const uint *starts, uint tile,
                           uint nblocks, uint dfor, __local uint *s, uint *items)
{
    uint tid = get_local_id(0);
    __local uint *s_starts = s, *s_w = s + BP_D + 1, *s_off = s_w + 4 * BP_D;
    __local uint *s_data = s_off + 4 * BP_D;
    uint b0 = tile * BP_D, nb = min((uint)BP_D, nblocks - b0);
    if (tid <= nb)
        s_starts[tid] = starts[b0 + tid];
    barrier(CLK_LOCAL_MEM_FENCE);
    uint base = s_starts[0] - dfor, words = s_starts[nb] - base;
    /* coalesced copy of the tile's words, then two zero slack words */
    for (uint i = tid; i < words + 2; i += BP_NT)
        s_data[i] = i < words ? data[base + i] : 0u;
    barrier(CLK_LOCAL_MEM_FENCE);
    /* Algorithm 7: the miniblock offsets by a byte-wise prefix sum of the widths */
    if (tid < 4 * nb) {
        uint bw = s_data[s_starts[tid >> 2] - base + 1];
        uint offs = (bw << 8) + (bw << 16) + (bw << 24), sh = (tid & 3) * 8;
        s_w[tid] = (bw >> sh) & 255;
        s_off[tid] = (offs >> sh) & 255;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    /* Algorithm 6: value tid of each block through the 64-bit window */
    uint mb = tid >> 5, lane = tid & 31;
#pragma unroll
    for (uint i = 0; i < BP_D; i++) {
        uint v = 0;
        if (i < nb) {
            uint blk = s_starts[i] - base, w = s_w[4 * i + mb], bit = w * lane;
            v = s_data[blk] + bp_window(s_data, blk + 2 + s_off[4 * i + mb] + (bit >> 5),
                                        bit & 31, w);
        }
        items[i] = v;
    }
    uint first = s_data[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    return first;
}

inline void LoadBitPack(__global const uint *data, __global const uint *starts, uint tile,
                        uint nblocks, __local uint *s, uint *items)
{
    bp_load_blocks(data, starts, tile, nblocks, 0u, s, items);
}

/* striped items -> inclusive scan over the tile, striped again; x: BP_SCAN_LOCAL */
inline void bp_scan_striped(__local uint *x, uint *items)
{
    uint tid = get_local_id(0), v[BP_D];
    for (uint i = 0; i < BP_D; i++)
        x[BP_PAD(i * BP_NT + tid)] = items[i];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint j = 0; j < BP_D; j++)
        v[j] = x[BP_PAD(tid * BP_D + j)];
    BP_SCAN_BLOCKED(x + BP_PAD(BP_NT * BP_D), v, BP_D);
    for (uint j = 0; j < BP_D; j++)
        x[BP_PAD(tid * BP_D + j)] = v[j];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint i = 0; i < BP_D; i++)
        items[i] = x[BP_PAD(i * BP_NT + tid)];
    barrier(CLK_LOCAL_MEM_FENCE);
}

#if BP_D == 4
/* GPU-DFOR: unpack the deltas, put the tile's first value in front, scan */
inline void LoadDBitPack(__global const uint *data, __global const uint *starts, uint tile,
                         uint nblocks, __local uint *s, __local uint *x, uint *items)
{
    uint first = bp_load_blocks(data, starts, tile, nblocks, 1u, s, items);
    if (get_local_id(0) == 0)
        items[0] = first;
    bp_scan_striped(x, items);
}
#endif

/* GPU-RFOR: unpack the runs (value, length), scan the lengths into run ends,
 * mark each run's start, scan the marks into a run index per position */
inline void LoadRBitPack(__global const uint *data, __global const uint *starts, uint tile,
                         __local uint *s, uint *items)
{
    uint tid = get_local_id(0);
    __local uint *s_data = s, *s_val = s + BP_RFOR_WORDS, *s_x = s_val + 512;
    __local uint *s_t = s_x + BP_PAD(BP_NT * 4);
    uint base = starts[tile], words = starts[tile + 1] - base;
    for (uint i = tid; i < words + 2; i += BP_NT)
        s_data[i] = i < words ? data[base + i] : 0u;
    for (uint i = 0; i < 4; i++)
        s_x[BP_PAD(i * BP_NT + tid)] = 0u;
    barrier(CLK_LOCAL_MEM_FENCE);
    uint h = s_data[0], nr = h & 0x3FFu, vw = (h >> 16) & 255u, lw = h >> 24;
    uint vref = s_data[1], lref = s_data[2], loff = 3 + (nr * vw + 31) / 32;
    uint e[4];
    for (uint j = 0; j < 4; j++) {
        uint r = tid * 4 + j, len = 0;
        if (r < nr) {
            uint lb = r * lw, vb = r * vw;
            len = lref + bp_window(s_data, loff + (lb >> 5), lb & 31, lw);
            s_val[r] = vref + bp_window(s_data, 3 + (vb >> 5), vb & 31, vw);
        }
        e[j] = len;
    }
    BP_SCAN_BLOCKED(s_t, e, 4);
    /* run r + 1 starts where run r ends (ends are distinct: lengths >= 1) */
    for (uint j = 0; j < 4; j++)
        if (tid * 4 + j + 1 < nr)
            s_x[BP_PAD(e[j])] = 1u;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint j = 0; j < 4; j++)
        e[j] = s_x[BP_PAD(tid * 4 + j)];
    BP_SCAN_BLOCKED(s_t, e, 4);
    for (uint j = 0; j < 4; j++)
        s_x[BP_PAD(tid * 4 + j)] = e[j];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint i = 0; i < 4; i++)
        items[i] = s_val[s_x[BP_PAD(i * BP_NT + tid)]];
    barrier(CLK_LOCAL_MEM_FENCE);
}

#endif
