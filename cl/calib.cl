/* calib.cl - the planner's local-memory rate: increments of a local histogram
 * (the inner operation of the radix and SBP kernels), counted per second.
 * Each work-item makes `iters` increments at pseudo-random bins of its group's
 * 256-bin histogram; one word a work-item is written so nothing is dropped. */
#ifndef CLTOPK_COMMON_CL
#include "common.cl"
#endif

#ifndef WG
#define WG 256
#endif

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void local_rate(uint iters, __global uint *out)
{
    __local uint h[256];
    uint lid = get_local_id(0);
    for (uint b = lid; b < 256u; b += WG)
        h[b] = 0u;
    barrier(CLK_LOCAL_MEM_FENCE);
    uint x = (uint)get_global_id(0) * 2654435761u + 12345u;
    for (uint i = 0; i < iters; i++) {
        x = x * 1664525u + 1013904223u;
        atomic_inc(&h[x >> 24]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = h[lid & 255u];
}
