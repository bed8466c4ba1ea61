/* unpack.cl - decode a packed column to global memory (docs/FORMAT.md), one
 * work-group of 128 per BP_D blocks (FOR) or per 512-value tile (DFOR, RFOR);
 * and a plain copy, the floor of any decode (cltopk_benchmark_unpack).
 * -D BP_D (default 4; DFOR needs 4).  Arguments: the validated column's two
 * arrays, its number of blocks (tiles for RFOR) and values, the output. */
#ifndef CLTOPK_BITPACK_H
#include "bitpack.h"
#endif

__kernel __attribute__((reqd_work_group_size(BP_NT, 1, 1)))
void unpack_for(__global const uint *data, __global const uint *starts, uint nblocks, uint count,
                __global uint *out)
{
    __local uint s[BP_FOR_LOCAL];
    uint items[BP_D];
    uint tile = get_group_id(0);
    LoadBitPack(data, starts, tile, nblocks, s, items);
    ulong base = (ulong)tile * (BP_D * BP_NT) + get_local_id(0);
    for (uint i = 0; i < BP_D; i++)
        if (base + i * BP_NT < count)
            out[base + i * BP_NT] = items[i];
}

#if BP_D == 4
__kernel __attribute__((reqd_work_group_size(BP_NT, 1, 1)))
void unpack_dfor(__global const uint *data, __global const uint *starts, uint nblocks,
                 uint count, __global uint *out)
{
    __local uint s[BP_FOR_LOCAL];
    __local uint x[BP_SCAN_LOCAL];
    uint items[BP_D];
    uint tile = get_group_id(0);
    LoadDBitPack(data, starts, tile, nblocks, s, x, items);
    ulong base = (ulong)tile * (BP_D * BP_NT) + get_local_id(0);
    for (uint i = 0; i < BP_D; i++)
        if (base + i * BP_NT < count)
            out[base + i * BP_NT] = items[i];
}
#endif

__kernel __attribute__((reqd_work_group_size(BP_NT, 1, 1)))
void unpack_rfor(__global const uint *data, __global const uint *starts, uint ntiles, uint count,
                 __global uint *out)
{
    __local uint s[BP_RFOR_LOCAL];
    uint items[4];
    uint tile = get_group_id(0);
    (void)ntiles;
    LoadRBitPack(data, starts, tile, s, items);
    ulong base = (ulong)tile * 512 + get_local_id(0);
    for (uint i = 0; i < 4; i++)
        if (base + i * BP_NT < count)
            out[base + i * BP_NT] = items[i];
}

/* grid-strided copy of n4 uint4 */
__kernel void copy4(__global const uint4 *in, __global uint4 *out, ulong n4)
{
    size_t gid = get_global_id(0), gs = get_global_size(0);
    for (size_t i = gid; i < n4; i += gs)
        out[i] = in[i];
}
