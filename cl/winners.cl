/* winners.cl - the device sort of the winners of a selection: (order key,
 * 32-bit position) pairs into THE ORDER (larger key first, then smaller
 * position), by a bitonic sort of the pairs padded to a power of two (blocks
 * of BLK in local memory, longer strides one step a launch in global memory),
 * then the input's bits and positions written out.
 *
 * -D options (defaults below): KEY_BITS, KEY_KIND (common.cl), WG (work-items a
 * group of bs_local, a power of two), BLK (pairs a group sorts in local memory,
 * a power of two, 2 * WG at least). */
#ifndef CLTOPK_COMMON_CL
#include "common.cl"
#endif

#ifndef WG
#define WG 256
#endif
#ifndef BLK
#define BLK 1024
#endif

/* pad [k, len) with the sentinel, which comes after every real pair */
__kernel void bs_pad(__global okey_t *rk, __global uint *ri, uint k, uint len)
{
    uint i = get_global_id(0) + k;
    if (i < len) {
        rk[i] = 0;
        ri[i] = SENTINEL_IDX;
    }
}

/* compare-exchange positions a < b (absolute a = ga): the better first when
 * (ga & kk) == 0, else the worse first */
inline void bs_cx(okey_t *ua, uint *ia, okey_t *ub, uint *ib, uint ga, uint kk)
{
    int desc = (ga & kk) == 0u;
    int swap = desc ? pair_better(*ub, *ib, *ua, *ia) : pair_better(*ua, *ia, *ub, *ib);
    if (swap) {
        okey_t tu = *ua;
        uint ti = *ia;
        *ua = *ub;
        *ia = *ib;
        *ub = tu;
        *ib = ti;
    }
}

/* each group sorts blocks of blk = min(BLK, len) pairs: all stages kk <= blk when
 * kk == 0, else the steps j < blk of stage kk */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void bs_local(__global okey_t *rk, __global uint *ri, uint len, uint kk)
{
    __local okey_t su[BLK];
    __local uint si[BLK];
    uint lid = get_local_id(0);
    uint blk = len < (uint)BLK ? len : (uint)BLK;
    uint g0 = get_group_id(0) * blk;
    for (uint i = lid; i < blk; i += WG) {
        su[i] = rk[g0 + i];
        si[i] = ri[g0 + i];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    uint k0 = kk ? kk : 2u, k1 = kk ? kk : blk;
    for (uint s = k0; s <= k1; s <<= 1) {
        for (uint j = (kk ? blk : s) >> 1; j > 0u; j >>= 1) {
            for (uint p = lid; p < blk / 2u; p += WG) {
                uint a = (p << 1) - (p & (j - 1u)), b2 = a + j;
                okey_t ua = su[a], ub = su[b2];
                uint ia = si[a], ib = si[b2];
                bs_cx(&ua, &ia, &ub, &ib, g0 + a, s);
                su[a] = ua;
                si[a] = ia;
                su[b2] = ub;
                si[b2] = ib;
            }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
    }
    for (uint i = lid; i < blk; i += WG) {
        rk[g0 + i] = su[i];
        ri[g0 + i] = si[i];
    }
}

/* one step (stage kk, stride j >= BLK) in global memory */
__kernel void bs_global(__global okey_t *rk, __global uint *ri, uint len, uint kk, uint j)
{
    uint p = get_global_id(0);
    if (p >= len / 2u)
        return;
    uint a = (p << 1) - (p & (j - 1u)), b2 = a + j;
    okey_t ua = rk[a], ub = rk[b2];
    uint ia = ri[a], ib = ri[b2];
    bs_cx(&ua, &ia, &ub, &ib, a, kk);
    rk[a] = ua;
    ri[a] = ia;
    rk[b2] = ub;
    ri[b2] = ib;
}

/* the sorted winners as the input's bits and positions */
__kernel void rs_write(__global const uint *ri, uint k, uint want, __global const okey_t *in,
                       ulong off, __global okey_t *out_keys, __global long *out_index,
                       ulong base)
{
    uint j = get_global_id(0);
    if (j >= k)
        return;
    uint idx = ri[j];
    if (want & 1u)
        out_keys[j] = in[off + idx];
    if (want & 2u)
        out_index[j] = (long)(base + idx);
}
