/* bandwidth.cl - one streaming read of a buffer: the floor of any top-k.
 * Each work-item folds a grid-strided range of uint4 into a max and writes one
 * word, so the loads cannot be dropped and the writes are negligible. */
#ifndef CLTOPK_COMMON_CL
#include "common.cl"
#endif

__kernel void read_max(__global const uint4 *in, ulong n4, __global uint *out)
{
    size_t gid = get_global_id(0), gs = get_global_size(0);
    uint4 acc = (uint4)(0);
    for (size_t i = gid; i < n4; i += gs)
        acc = max(acc, in[i]);
    out[gid] = max(max(acc.x, acc.y), max(acc.z, acc.w));
}
