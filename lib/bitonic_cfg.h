/* bitonic_cfg.h - the parameters of the bitonic reducer (cl/reducer.cl) for one
 * call, chosen from the device limits, a per-device table and overrides.
 * Header-only so the bank-conflict simulator (t/banks.c) checks exactly the
 * configurations the library runs. */
#ifndef CLTOPK_BITONIC_CFG_H
#define CLTOPK_BITONIC_CFG_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune.h"

typedef struct {
    unsigned K;        /* k rounded up to a power of two */
    unsigned key_bytes;/* 4 or 8 */
    unsigned index;    /* carry the 32-bit index */
    unsigned B, WG;    /* items per work-item, work-items per group */
    unsigned OUT;      /* items a group writes */
    unsigned MAXM;     /* largest combined step */
    unsigned SWZ;      /* XOR-swizzled local layout */
    unsigned basic;    /* the foundation kernel (cl/bitonic.cl) instead */
} bitonic_cfg;

static inline unsigned bcfg_E(const bitonic_cfg *c)
{
    return c->B * c->WG;
}

static inline unsigned bcfg_hold(const bitonic_cfg *c)
{
    return c->K < c->B ? c->K : c->B;
}

static inline size_t bcfg_local_bytes(const bitonic_cfg *c)
{
    return (size_t)bcfg_E(c) * (c->key_bytes + (c->index ? 4u : 0u));
}

/* the default OUT: a 16-fold reduction, within what the register phase leaves */
static inline unsigned bcfg_default_out(const bitonic_cfg *c)
{
    unsigned a = bcfg_E(c) / 16, h = bcfg_hold(c) * c->WG / 2;
    unsigned o = a < h ? a : h;
    return o > c->K ? o : c->K;
}

static inline int bcfg_pow2(unsigned x)
{
    return x && !(x & (x - 1));
}

/* 0 if c is a valid configuration for local memory `budget` and work-groups of
 * at most max_wg; else -1 with the reason in why */
static inline int bcfg_check(const bitonic_cfg *c, size_t budget, size_t max_wg, char *why,
                             size_t whylen)
{
    const char *bad = NULL;
    if (!bcfg_pow2(c->K) || !bcfg_pow2(c->B) || !bcfg_pow2(c->WG) || !bcfg_pow2(c->OUT) ||
        !bcfg_pow2(c->MAXM))
        bad = "K, B, WG, OUT and MAXM must be powers of two";
    else if (c->B < 4 || c->B > 16 || c->MAXM < 2 || c->MAXM > 16)
        bad = "B must be 4, 8 or 16 and MAXM 2 to 16";
    else if (c->WG > max_wg)
        bad = "WG exceeds the device's work-group size";
    else if (2u * c->K > bcfg_E(c))
        bad = "a group must hold two runs of K (B * WG >= 2K)";
    else if (c->OUT < c->K || c->OUT > bcfg_hold(c) * c->WG / 2)
        bad = "OUT must be within K .. min(K, B) * WG / 2";
    else if (bcfg_local_bytes(c) > budget)
        bad = "the tile does not fit local memory";
    if (bad && why)
        snprintf(why, whylen, "%s (K=%u B=%u WG=%u OUT=%u MAXM=%u, %zu bytes of %zu)", bad, c->K,
                 c->B, c->WG, c->OUT, c->MAXM, bcfg_local_bytes(c), budget);
    return bad ? -1 : 0;
}

/* Defaults: WG = 128 for K <= 256, else 256 (measured best on the H200 for
 * every K, keys alone and with the index: bench/RESULTS.md), B = max_b (16 on
 * GPUs) where the tile fits, else more work-items with fewer items each;
 * MAXM = max_b. */
static inline int bcfg_default(bitonic_cfg *c, unsigned K, unsigned key_bytes, unsigned index,
                               size_t budget, size_t max_wg, unsigned max_b)
{
    static const unsigned wgs[] = {0, 512, 1024};
    memset(c, 0, sizeof *c);
    c->K = K;
    c->key_bytes = key_bytes;
    c->index = index;
    c->MAXM = max_b;
    c->SWZ = 1;
    for (int w = 0; w < 3; w++) {
        unsigned wg = wgs[w] ? wgs[w] : (K <= 256 ? 128 : 256);
        for (unsigned b = max_b; b >= 4; b /= 2) {
            c->B = b;
            c->WG = wg;
            c->OUT = bcfg_default_out(c);
            if (bcfg_check(c, budget, max_wg, NULL, 0) == 0)
                return 0;
        }
    }
    return -1;
}

/* CLTOPK_BITONIC (parsed strictly, lib/tune.h): B items a work-item, WG
 * work-items a group, OUT items a group writes, MAXM the largest combined
 * step, SWZ the XOR-swizzled layout, basic the foundation kernel.  0 (the
 * defaults of B, WG, OUT, MAXM): derived by bcfg_default(). */
enum { BP_B, BP_WG, BP_OUT, BP_MAXM, BP_SWZ, BP_BASIC, BP_N };
static const cltopk_param bcfg_params[] = {
    [BP_B] = {"B", 0, 0, 4, 16, 1, NULL},
    [BP_WG] = {"WG", 0, 0, 1, 1024, 1, NULL},
    [BP_OUT] = {"OUT", 0, 0, 1, 1u << 20, 1, NULL},
    [BP_MAXM] = {"MAXM", 0, 0, 2, 16, 1, NULL},
    [BP_SWZ] = {"SWZ", 1, 1, 0, 1, 1, NULL},
    [BP_BASIC] = {"basic", 0, 0, 0, 1, 1, NULL},
};

/* Tuned rows (device name substring, key bytes, index, K range) measured by
 * `cltopk tune`; t/banks.c proves them conflict-free too.  Anything not
 * listed takes bcfg_default(). */
static const cltopk_tuned_row bcfg_rows[] = {
    /* cltopk tune, 2^26 f32 with the index (bench/RESULTS.md) */
    {"NVIDIA H200", 4, 1, 1, 4, "B=8,WG=128,OUT=64,MAXM=16"},
    {NULL, 0, 0, 0, 0, NULL},
};

static const cltopk_param_table bcfg_table = {"CLTOPK_BITONIC", bcfg_params, BP_N, bcfg_rows};

/* the values a tuned row or the variable set (p->set) over the default
 * configuration c; OUT follows B and WG unless the variable gives it, or, with
 * no variable, the tuned row */
static inline void bcfg_apply(bitonic_cfg *c, const cltopk_params *p)
{
    unsigned *slot[BP_N] = {&c->B, &c->WG, &c->OUT, &c->MAXM, &c->SWZ, &c->basic};
    for (int i = 0; i < BP_N; i++)
        if (p->set & (1u << i))
            *slot[i] = (unsigned)p->v[i];
    unsigned out_from = p->env ? p->env : p->set;
    if (!(out_from & (1u << BP_OUT)))
        c->OUT = bcfg_default_out(c);
}

#endif
