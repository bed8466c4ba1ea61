/* devsort.c - the device sort of (key, 32-bit position) pairs into THE ORDER
 * (cl/radix_sort.cl): a stable LSD radix sort, three launches a pass (digit
 * histograms per work-group, their scan, a stable scatter that sorts each
 * tile in local memory first; four with sk, below: the scatter's two builds).
 * Shared by the sort algorithm (algo_sort.c)
 * and the winner sort of radix select (algo_radix.c).
 *
 * The sort key is  ~order_key(key) : position  with the position in the low
 * pos_bits bits: pairs that are already in position order (pos_bits 0, e.g.
 * the input itself) need the passes of the key alone, KEY_BITS / DIGIT; pairs
 * in any other order need the position's bits too (radix select's winners,
 * which its filters append in no order).
 *
 * Parameters (compile-time -D options, see the .cl file): WG 256 (or the
 * device's largest group below it), IPT the largest multiple of the vector
 * width up to 16 (GPU) or 8 (CPU) whose tile fits in local memory (12 for
 * 32-bit keys and 10 for 64-bit ones in 48 KB), DIGIT 8, LB 4, HC 1, and the
 * ways of ranking a tile: counts in local memory (RREG 0), digits kept beside
 * the pairs (LDIG 1), blocked loads straight from global memory (TL 0), the
 * in-place scan (XS 0); and the number of work-groups, GPC a compute unit
 * (GPU 4, CPU 2), each walking an equal run of tiles; HS histogram groups a
 * scatter group (GPU 4, CPU 1), each counting an equal share of its tiles, HU
 * vectors loaded before they are counted (GPU 2, CPU 1): on the H200 the
 * histograms took 0.82-0.85 ms a pass of 2^29 f32 with hs=4,hu=2 against
 * 0.94-1.00 with hs=1,hu=1 (0.83-0.88 at hs=4 or 8 alone), the sort 28.44 ms
 * against 28.93 in the same run; the scan's rows four times longer cost 5 us
 * a pass.
 * CLTOPK_SORT="wg=64,ipt=4,digit=6,lb=3,hc=2,gpc=8,reg=1,ld=0,tl=1,xs=1" sets
 * any of them (tests, tuning); an invalid value is an UNSUPPORTED error.
 *
 * On an H200 (NVIDIA OpenCL 580.159), 2^29 uniform float32 with positions,
 * k = n: 36.4 ms with the defaults (torch.sort: 23.4 ms); hist + scan 3.8 ms
 * of it, the scatters the rest (with their writes made coalesced, at wrong
 * addresses, 31.1 ms: the local ranking dominates).  The other choices were
 * no faster: reg=1 36.6, ld=0 37.1 (IPT 16), xs=1 38.4, tl=1 50.8, ipt=8
 * 46.1, gpc=2/8/16 within 1 ms, digit=7 40.5 ms.  The next tile loaded while
 * one is ranked (PF 1, the GPU default): 34.4-34.7 ms.  The scatter uses 128
 * registers (2 groups of 256 a compute unit); -cl-nv-maxrregcount=64 to 96
 * left that count and the time unchanged, wg=128 with 8 groups a compute unit
 * took 43-45 ms, and ranking by warps (match.any through inline PTX) took
 * 42.7 ms, its histograms 4.2 ms a pass instead of 0.95 (bench/RESULTS.md).
 *
 * Ranked by warps (WR 1, the GPU default): each warp of 32 work-items ranks
 * its own pairs against its own counters of the digits, the lanes of one
 * digit found by DIGIT votes (inline PTX on NVIDIA's platform, PTX 1; local
 * memory and barriers elsewhere, or with ptx=0), and one scan of the digits a
 * tile replaces the work-group scan of every round of LB bits: 32.1 ms at
 * ipt 12, 28.6-28.9 ms at ipt 16 (16-bit counters make it fit; torch.sort
 * 23.5-23.6), 164 registers.  WC 1 holds the pairs that begin a sector of the
 * output a tile leaves unfinished until a later tile completes it, so that
 * sectors are written whole: 31.2 ms at its largest tile (ipt 8), where
 * without it the same tile took 37.4 ms.  LDIG 0 recomputes the digits from
 * the pairs (29.6 ms at ipt 16: keeping them is faster).  One sweep a
 * pass (OS 1, os=1, the default below 2^30 pairs with the PTX votes): the
 * digit counts of every pass from one read (ds_hist_all), then a launch a
 * pass whose groups take tiles in order and find each tile's offsets by a
 * look-back over the tiles before it.  Looking back before the ranking it
 * took 44.6-47.2 ms (10.6-12.8 ms a pass: with one group a compute unit at
 * 164-184 registers the wait for the tiles before is the compute unit's);
 * looking back after it, by the build with the shuffle scan (wsc, 128
 * registers, two groups a compute unit; the default with os on PTX), 23.6
 * ms, 5.3-5.4 ms a pass (bench/RESULTS.md).
 *
 * The skewed passes (sk): the tile's scan by warp shuffles (WSC 1, wsc=1)
 * leaves ds_scatter 128 registers instead of 164 on the H200, two groups a
 * compute unit instead of one.  That made the pass of uniform float32's top
 * digit (a few digits hold nearly every pair) 2.0 ms faster (3.9 against
 * 5.95 ms) and every pass of random digits 0.6-0.8 ms slower (their
 * scattered writes: with the writes coalesced to wrong places the two took
 * the same time), so each build runs where it is faster: ds_scan sets the
 * pass's skew word where a digit holds at least m / sk pairs (GPU default sk
 * = 16), and both scatters are launched, each returning at once where the
 * pass is not its kind. */
#include "internal.h"

#if HAVE_OPENCL

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    unsigned wg, ipt, digit, lb, hc, gpc, rreg, ldig, xs, tl, pf, wr, ptx, wc, hu, os, hs, wsc, sk;
} ds_cfg;

/* local memory of ds_scatter, in bytes (the .cl file's arrays) */
static size_t ds_lmem(const ds_cfg *c, int key_bits)
{
    size_t tile = (size_t)c->wg * c->ipt, padi = tile + tile / 32;
    size_t cn = ((size_t)1 << c->lb) * c->wg, padc = cn + cn / 16;
    size_t radix = (size_t)1 << c->digit;
    if (c->wr) /* the tile, its digits, the warps' counters, the scan, the offsets, the
                  held pairs */
        return tile * ((size_t)key_bits / 8 + 4 + (c->ldig ? 1 : 0)) +
               (c->wg / 32) * radix * (tile > 65535 ? 4 : 2) + (1 + c->xs) * c->wg * 4 +
               (c->ptx ? 0 : c->wg * 4) + 2 * radix * 4 +
               (c->wc ? radix * 8 * ((size_t)key_bits / 8 + 4) + 3 * radix * 4 : 0) +
               (c->os ? 2 * radix * 4 + 8 : 0);
    return padi * (size_t)(key_bits / 8) + padi * 4 + (c->ldig ? tile : 0) + padc * 2 +
           2 * c->wg * 4 + (3 * radix + 1) * 4;
}

/* one sweep (os=1): the status words hold counts below 2^30; passes of the
 * widest composite (64-bit key, 32 position bits) at one bit a digit */
#define DS_OS_MAX ((size_t)1 << 30)
#define DS_OS_PMAX 96

/* CLTOPK_SORT (parsed strictly, lib/tune.h); ipt 0: the largest that fits */
enum {
    DP_WG, DP_IPT, DP_DIGIT, DP_LB, DP_HC, DP_GPC, DP_REG, DP_LD, DP_XS, DP_TL, DP_PF, DP_WR,
    DP_PTX, DP_WC, DP_HU, DP_OS, DP_HS, DP_WSC, DP_SK, DP_N
};
static const cltopk_param ds_params[] = {
    [DP_WG] = {.name = "wg", .gpu = 256, .cpu = 256, .min = 32, .max = 1024, .integer = 1},
    [DP_IPT] = {.name = "ipt", .gpu = 16, .cpu = 8, .min = 1, .max = 64, .integer = 1},
    [DP_DIGIT] = {.name = "digit", .gpu = 8, .cpu = 8, .min = 1, .max = 8, .integer = 1},
    [DP_LB] = {.name = "lb", .gpu = 4, .cpu = 4, .min = 1, .max = 4, .integer = 1},
    [DP_HC] = {.name = "hc", .gpu = 1, .cpu = 1, .min = 1, .max = 16, .integer = 1},
    [DP_GPC] = {.name = "gpc", .gpu = 4, .cpu = 2, .min = 1, .max = 1024, .integer = 1},
    [DP_REG] = {.name = "reg", .min = 0, .max = 1, .integer = 1},
    [DP_LD] = {.name = "ld", .gpu = 1, .cpu = 1, .min = 0, .max = 1, .integer = 1},
    [DP_XS] = {.name = "xs", .min = 0, .max = 1, .integer = 1},
    [DP_TL] = {.name = "tl", .min = 0, .max = 1, .integer = 1},
    [DP_PF] = {.name = "pf", .gpu = 1, .min = 0, .max = 1, .integer = 1},
    [DP_WR] = {.name = "wr", .gpu = 1, .min = 0, .max = 1, .integer = 1},
    [DP_PTX] = {.name = "ptx", .gpu = 1, .cpu = 1, .min = 0, .max = 1, .integer = 1},
    [DP_WC] = {.name = "wc", .min = 0, .max = 1, .integer = 1},
    [DP_HU] = {.name = "hu", .gpu = 2, .cpu = 1, .min = 1, .max = 8, .integer = 1},
    [DP_OS] = {.name = "os", .gpu = 1, .min = 0, .max = 1, .integer = 1},
    [DP_HS] = {.name = "hs", .gpu = 4, .cpu = 1, .min = 1, .max = 16, .integer = 1},
    [DP_WSC] = {.name = "wsc", .min = 0, .max = 1, .integer = 1},
    [DP_SK] = {.name = "sk", .gpu = 16, .min = 0, .max = 65536, .integer = 1},
};
static const cltopk_param_table ds_table = {"CLTOPK_SORT", ds_params, DP_N, NULL};

/* the configuration for keys of key_bits on ctx's device: 0, or -1 with the
 * reason in why */
static int ds_configure(const cltopk_context *ctx, int key_bits, int part, size_t m, ds_cfg *c,
                        char *why, size_t whylen)
{
    int gpu = (ctx->caps.type & CL_DEVICE_TYPE_GPU) != 0;
    unsigned vec = key_bits == 32 ? 4 : 2;
    cltopk_params p;
    cltopk_tune_for f = {gpu, ctx->caps.device_name, (unsigned)key_bits / 8, -1, 0};
    if (cltopk_params_get(NULL, &ds_table, &f, &p, why, whylen) != 0)
        return -1;
    int ipt_set = (p.set >> DP_IPT) & 1u;
    c->wg = (unsigned)p.v[DP_WG];
    if (!((p.set >> DP_WG) & 1u))
        while (c->wg > ctx->caps.max_wg && c->wg > 32)
            c->wg >>= 1;
    c->ipt = (unsigned)p.v[DP_IPT];
    c->digit = (unsigned)p.v[DP_DIGIT];
    c->lb = (unsigned)p.v[DP_LB];
    c->hc = (unsigned)p.v[DP_HC];
    c->gpc = (unsigned)p.v[DP_GPC];
    c->rreg = (unsigned)p.v[DP_REG];
    c->ldig = (unsigned)p.v[DP_LD];
    c->xs = (unsigned)p.v[DP_XS];
    c->tl = (unsigned)p.v[DP_TL];
    c->pf = (unsigned)p.v[DP_PF];
    c->wr = (unsigned)p.v[DP_WR];
    /* the partition (part) is ranked by warps only where asked: its one-bit
     * pass was not measured on a GPU, the counting rounds' was (22.9 ms at k =
     * n / 2) */
    if (part && !((p.set >> DP_WR) & 1u))
        c->wr = 0;
    c->wc = c->wr && p.v[DP_WC];
    c->hu = (unsigned)p.v[DP_HU];
    c->hs = (unsigned)p.v[DP_HS];
    /* the warps' votes by inline PTX on NVIDIA's platform, through local
     * memory elsewhere (or with ptx=0) */
    c->ptx = c->wr && p.v[DP_PTX] && ctx->caps.ptx;
    /* one sweep: ranked by warps, not the partition, fewer than 2^30 pairs;
     * by default only with the PTX votes (measured there alone: without the
     * shuffle scan's second group a compute unit it was slower than a
     * histogram and a scatter a pass) */
    int os_set = (p.set >> DP_OS) & 1u;
    c->os = c->wr && p.v[DP_OS] && (os_set || c->ptx) && !part && m < DS_OS_MAX;
    c->wsc = (unsigned)p.v[DP_WSC];
    /* one sweep by PTX: the scan by shuffles unless set (128 registers, two
     * groups a compute unit, which hide each other's look-back) */
    if (c->os && c->ptx && !((p.set >> DP_WSC) & 1u))
        c->wsc = 1;
    c->sk = c->os || c->wsc || part ? 0u : (unsigned)p.v[DP_SK];
    if (!cltopk_is_pow2(c->wg) || c->wg < 32 || c->wg > ctx->caps.max_wg || c->ipt < vec ||
        c->ipt > 64 || c->ipt % vec || c->digit < 1 || c->digit > 8 || c->lb < 1 || c->lb > 4 ||
        c->hc < 1 || c->hc > 16 || c->gpc < 1 || c->gpc > 1024) {
        snprintf(why, whylen,
                 "device sort: bad configuration wg=%u ipt=%u digit=%u lb=%u hc=%u gpc=%u (wg a "
                 "power of two 32..%zu, ipt a multiple of %u up to 64, digit 1..8, lb 1..4, hc "
                 "1..16, gpc 1..1024)",
                 c->wg, c->ipt, c->digit, c->lb, c->hc, c->gpc, ctx->caps.max_wg, vec);
        return -1;
    }
    /* the largest tile that fits (1 KB left for the compiler's own) */
    while (!ipt_set && c->ipt > vec && ds_lmem(c, key_bits) + 1024 > ctx->caps.local_mem)
        c->ipt -= vec;
    if (ds_lmem(c, key_bits) + 1024 > ctx->caps.local_mem) {
        snprintf(why, whylen,
                 "device sort: a tile of %u x %u pairs needs %zu bytes of local memory, %s has "
                 "%llu", c->wg, c->ipt, ds_lmem(c, key_bits), ctx->name,
                 (unsigned long long)ctx->caps.local_mem);
        return -1;
    }
    return 0;
}

/* groups and tiles a group for m pairs */
static void ds_grid(const cltopk_context *ctx, const ds_cfg *c, size_t m, size_t *groups,
                    size_t *tpg)
{
    size_t tile = (size_t)c->wg * c->ipt, ntiles = (m + tile - 1) / tile;
    size_t gmax = (size_t)(ctx->caps.compute_units ? ctx->caps.compute_units : 1) * c->gpc;
    if (ntiles == 0)
        ntiles = 1;
    size_t g = ntiles < gmax ? ntiles : gmax;
    *tpg = (ntiles + g - 1) / g;
    *groups = (ntiles + *tpg - 1) / *tpg;
}

size_t cltopk_devsort_scratch(cltopk_context *ctx, int key_bits, size_t m, char *why,
                              size_t whylen)
{
    ds_cfg c;
    if (ds_configure(ctx, key_bits, 0, m, &c, why, whylen) != 0)
        return 0;
    size_t groups, tpg, radix = (size_t)1 << c.digit, tile = (size_t)c.wg * c.ipt;
    ds_grid(ctx, &c, m, &groups, &tpg);
    size_t aux = radix * (groups * c.hs + 1) * 4 + 4; /* hist, totals, the skew word */
    if (c.os) { /* two status words a tile and digit; the counts and counters (a
                   partition, which takes no sweep, needs the other's) */
        size_t sw = 2 * ((m + tile - 1) / tile) * radix * 4, cw = (radix + 1) * DS_OS_PMAX * 4;
        if (sw + cw > aux)
            aux = sw + cw;
    }
    return 2 * m * ((size_t)key_bits / 8 + 4) + aux;
}

int cltopk_devsort_input(cltopk_context *ctx, const cltopk_request *rq, cl_mem in, size_t off,
                         size_t n, size_t k, cl_mem out_keys, cl_mem out_index, cl_uint want,
                         uint64_t base, cl_mem part_key, cl_mem part_index, cl_uint num_wait,
                         const cl_event *wait)
{
    cltopk_devsort_job j;
    memset(&j, 0, sizeof j);
    j.key_bits = rq->bytes * 8;
    j.kind = rq->kind;
    j.smallest = rq->smallest;
    j.m = n;
    j.keys = in;
    j.key_off = off;
    j.final = 1;
    j.k = k;
    j.want = want;
    j.out_keys = (want & 1u) ? out_keys : NULL;
    j.out_index = (want & 2u) ? out_index : NULL;
    j.base = base;
    j.part_key = part_key;
    j.part_index = part_index;
    return cltopk_devsort(ctx, &j, num_wait, wait);
}

double cltopk_devsort_time(const struct cltopk_consts_s *c, size_t m, int key_bytes)
{
    double R = (double)m * key_bytes / c->bw, passes = key_bytes;
    /* GPU: 2^29 f32 with positions on the H200 by one sweep a pass 22.3 ms,
     * uniform int32 22.2, float64 56-61 (by a histogram and a scatter a pass
     * 26.1-26.6, 28.5 and 70.9; 34.6 ms before the warps' ranking) */
    return passes * (c->gpu ? 11.0 : 6.0) * R * (key_bytes + 4.0) / key_bytes / 2 +
           (c->gpu ? 2 + passes : 3 * passes) * c->launch;
}

/* DS_SKEWED: ds_scatter built with WSC=1, for the passes where one digit
 * holds at least m / sk pairs (sk > 0) */
enum { DS_HIST, DS_SCAN, DS_SCATTER, DS_SKEWED, DS_N };
static const char *const ds_names[DS_N] = {"ds_hist", "ds_scan", "ds_scatter", "ds_scatter"};
/* one sweep a pass: the same three slots */
static const char *const os_names[DS_N] = {"ds_hist_all", "ds_zero", "ds_onesweep", NULL};

/* the kernels, the work-group halved while a kernel cannot run it */
static int ds_kernels(cltopk_context *ctx, const cltopk_devsort_job *j, int part, ds_cfg *c,
                      cl_kernel *k)
{
    char why[512];
    if (ds_configure(ctx, j->key_bits, part, j->m, c, why, sizeof why) != 0)
        return cltopk_fail(ctx, CLTOPK_ERR_UNSUPPORTED, "%s", why);
    if (part)
        c->digit = c->lb = 1; /* the partition: one bit */
    for (;;) {
        char opts[2][320];
        for (int v = 0; v < 2; v++)
            snprintf(opts[v], sizeof opts[v],
                     "-D KEY_BITS=%d -D KEY_KIND=%d -D WG=%u -D IPT=%u -D DIGIT=%u -D LB=%u "
                     "-D HC=%u -D RREG=%u -D LDIG=%u -D XS=%u -D TL=%u -D PF=%u -D PART=%d "
                     "-D WR=%u -D WR_PTX=%u -D WC=%u -D HU=%u -D OS=%u -D HS=%u -D WSC=%u",
                     j->key_bits, j->kind, c->wg, c->ipt, c->digit, c->lb, c->hc, c->rreg,
                     c->ldig, c->xs, c->tl, c->pf, part, c->wr, c->ptx, c->wc, c->hu, c->os,
                     c->hs, v ? 1u : c->wsc);
        memset(k, 0, DS_N * sizeof *k);
        int st = CLTOPK_OK, again = 0;
        size_t least = 0;
        for (int i = 0; i < DS_N && st == CLTOPK_OK; i++) {
            if (i == DS_SKEWED && !c->sk)
                break;
            st = cltopk_kernel_get(ctx, "radix_sort.cl", opts[i == DS_SKEWED],
                                   (c->os ? os_names : ds_names)[i], &k[i]);
            size_t kwg = 0;
            if (st == CLTOPK_OK &&
                clGetKernelWorkGroupInfo(k[i], ctx->dev, CL_KERNEL_WORK_GROUP_SIZE, sizeof kwg,
                                         &kwg, NULL) == CL_SUCCESS &&
                kwg && kwg < c->wg) {
                if (i == DS_SKEWED) { /* (the second build is an option: without it) */
                    clReleaseKernel(k[i]);
                    k[i] = NULL;
                    c->sk = 0;
                    break;
                }
                again = 1;
                least = kwg;
            }
        }
        if (st == CLTOPK_OK && !again)
            return CLTOPK_OK;
        for (int i = 0; i < DS_N; i++)
            if (k[i])
                clReleaseKernel(k[i]);
        if (st != CLTOPK_OK)
            return st;
        if (c->wg <= 32)
            return cltopk_fail(ctx, CLTOPK_ERR_UNSUPPORTED,
                               "device sort: the kernels built with %s run at most %zu "
                               "work-items a group on %s",
                               opts[0], least, ctx->name);
        c->wg >>= 1; /* the tile halves too: it still fits */
    }
}

/* where a pass writes: the pairs to tk / tp (between, 1: a pass before the
 * last, or the partition's), or the job's outputs; spare (any buffer) for
 * the arguments a pass does not write */
static void ds_pass_outputs(const cltopk_devsort_job *j, int between, cl_mem tk, cl_mem tp,
                            cl_mem spare, cl_mem *dk, cl_mem *dp, cl_mem *dl)
{
    if (between) {
        *dk = tk, *dp = tp, *dl = spare;
    } else if (!j->final) {
        *dk = j->out_keys, *dp = j->out_pos, *dl = spare;
    } else {
        *dk = j->out_keys ? j->out_keys : spare;
        *dl = j->out_index ? j->out_index : spare;
        *dp = spare;
    }
}

/* the passes of one sweep each (os=1): the counts of every pass's digits
 * (ds_zero, ds_hist_all), then one ds_onesweep a pass; buffers as
 * cltopk_devsort's */
static int ds_onesweep(cltopk_context *ctx, const cltopk_devsort_job *j, const ds_cfg *c,
                       cl_kernel *kk, unsigned passes, unsigned T, size_t zn, cl_mem status,
                       cl_mem aux, cl_mem *tk, cl_mem *tp, cl_uint num_wait, const cl_event *wait)
{
    size_t m = j->m, tile = (size_t)c->wg * c->ipt, ntiles = (m + tile - 1) / tile;
    size_t cu = ctx->caps.compute_units ? ctx->caps.compute_units : 1;
    size_t hg = cu * 8, sg = cu * c->gpc;
    if (sg > ntiles)
        sg = ntiles;
    cl_ulong an = (cl_ulong)((((size_t)1 << c->digit) + 1) * passes), zn64 = zn;
    cl_uint m32 = (cl_uint)m, sm = (cl_uint)j->smallest, pb = j->pos_bits, T32 = T;
    cl_uint np = passes, k32 = (cl_uint)j->k, want = j->want, implicit0 = !j->pos;
    cl_ulong base = j->base, koff0 = j->key_off;
    cl_mem sp0 = j->pos ? j->pos : j->keys;
    int st = cltopk_set_args(ctx, kk[DS_SCAN], 4, sizeof(cl_mem), &aux, sizeof an, &an,
                             sizeof(cl_mem), &status, sizeof zn64, &zn64);
    if (st == CLTOPK_OK)
        st = cltopk_launch(ctx, kk[DS_SCAN], hg * c->wg, c->wg, num_wait, wait);
    /* ds_hist_all's copies of the counts: up to 8, in what local memory holds */
    size_t lw = (size_t)passes << c->digit;
    cl_uint hc = 8;
    while (hc > 1 && lw * hc * 4 + 1024 > ctx->caps.local_mem)
        hc >>= 1;
    if (st == CLTOPK_OK)
        st = cltopk_set_args(ctx, kk[DS_HIST], 12, sizeof(cl_mem), &j->keys, sizeof koff0,
                             &koff0, sizeof(cl_mem), &sp0, sizeof implicit0, &implicit0,
                             sizeof m32, &m32, sizeof sm, &sm, sizeof pb, &pb, sizeof T32, &T32,
                             sizeof np, &np, sizeof(cl_mem), &aux, lw * hc * 4, NULL,
                             sizeof hc, &hc);
    if (st == CLTOPK_OK)
        st = cltopk_launch(ctx, kk[DS_HIST], hg * c->wg, c->wg, 0, NULL);
    for (unsigned p = 0; p < passes && st == CLTOPK_OK; p++) {
        cl_uint s = p * c->digit, w = T - s < c->digit ? T - s : c->digit, p32 = p;
        cl_uint implicit = p == 0 && !j->pos;
        cl_uint fin = p + 1 == passes && j->final;
        cl_mem sk = p == 0 ? j->keys : tk[(p - 1) & 1];
        cl_mem sp = p == 0 ? sp0 : tp[(p - 1) & 1];
        cl_ulong koff = p == 0 ? j->key_off : 0;
        cl_mem dk, dp, dl;
        ds_pass_outputs(j, p + 1 < passes, tk[p & 1], tp[p & 1], status, &dk, &dp, &dl);
        st = cltopk_set_args(ctx, kk[DS_SCATTER], 21, sizeof(cl_mem), &sk, sizeof koff, &koff,
                             sizeof(cl_mem), &sp, sizeof implicit, &implicit, sizeof m32, &m32,
                             sizeof sm, &sm, sizeof pb, &pb, sizeof s, &s, sizeof w, &w,
                             sizeof p32, &p32, sizeof np, &np, sizeof(cl_mem), &aux,
                             sizeof(cl_mem), &status, sizeof zn64, &zn64, sizeof fin, &fin,
                             sizeof(cl_mem), &dk, sizeof(cl_mem), &dp, sizeof(cl_mem), &dl,
                             sizeof base, &base, sizeof k32, &k32, sizeof want, &want);
        if (st == CLTOPK_OK)
            st = cltopk_launch(ctx, kk[DS_SCATTER], sg * c->wg, c->wg, 0, NULL);
    }
    return st;
}

int cltopk_devsort(cltopk_context *ctx, const cltopk_devsort_job *j, cl_uint num_wait,
                   const cl_event *wait)
{
    if (j->m == 0 || (j->final && j->k == 0))
        return CLTOPK_OK;
    if (j->m >= 0xFFFFFFFFu || (j->key_bits != 32 && j->key_bits != 64) || j->pos_bits > 32 ||
        j->k > j->m || (!j->final && j->k != j->m))
        return cltopk_fail(ctx, CLTOPK_ERR_INTERNAL,
                           "device sort: bad job (m = %zu, key bits %d, position bits %u, k = "
                           "%zu)", j->m, j->key_bits, j->pos_bits, j->k);
    int part = j->part_key != NULL;
    if (part && (!j->final || j->pos || j->pos_bits || !j->part_index))
        return cltopk_fail(ctx, CLTOPK_ERR_INTERNAL,
                           "device sort: a partition needs final, the pairs in position order "
                           "and the element's position");
    ds_cfg c;
    cl_kernel kk[DS_N];
    int st = ds_kernels(ctx, j, part, &c, kk);
    if (st != CLTOPK_OK)
        return st;
    size_t kb = (size_t)j->key_bits / 8, m = j->m, groups, tpg;
    ds_grid(ctx, &c, m, &groups, &tpg);
    unsigned T = part ? 1u : j->pos_bits + (unsigned)j->key_bits;
    unsigned passes = (T + c.digit - 1) / c.digit;
    size_t radix = (size_t)1 << c.digit;
    cl_mem hist, totals, tk[2] = {j->tmp_keys[0], j->tmp_keys[1]},
                        tp[2] = {j->tmp_pos[0], j->tmp_pos[1]};
    size_t tile = (size_t)c.wg * c.ipt, zn = (m + tile - 1) / tile * radix;
    if (c.os) { /* hist: the two passes' status words; totals: the counts, the counters */
        if ((st = cltopk_scratch(ctx, SCR_DS_HIST, 2 * zn * 4, &hist)) != CLTOPK_OK ||
            (st = cltopk_scratch(ctx, SCR_DS_TOTALS, (radix + 1) * passes * 4, &totals)) !=
                CLTOPK_OK)
            goto out;
    } else if ((st = cltopk_scratch(ctx, SCR_DS_HIST, radix * groups * c.hs * 4, &hist)) !=
                   CLTOPK_OK ||
               (st = cltopk_scratch(ctx, SCR_DS_TOTALS, (radix + 1) * 4, &totals)) != CLTOPK_OK)
        goto out;
    if (!tk[0] && ((st = cltopk_scratch(ctx, SCR_DS_K0, m * kb, &tk[0])) != CLTOPK_OK ||
                   (st = cltopk_scratch(ctx, SCR_DS_P0, m * 4, &tp[0])) != CLTOPK_OK ||
                   (st = cltopk_scratch(ctx, SCR_DS_K1, m * kb, &tk[1])) != CLTOPK_OK ||
                   (st = cltopk_scratch(ctx, SCR_DS_P1, m * 4, &tp[1])) != CLTOPK_OK))
        goto out;
    cl_uint m32 = (cl_uint)m, sm = (cl_uint)j->smallest, pb = j->pos_bits, tpg32 = (cl_uint)tpg;
    cl_uint G = (cl_uint)(groups * c.hs), k32 = (cl_uint)j->k, want = j->want;
    cl_ulong base = j->base;
    /* a pass whose most frequent digit holds at least thr pairs is skewed */
    cl_uint thr = c.sk ? (cl_uint)(m / c.sk > 0 ? m / c.sk : 1) : 0u;
    cl_mem pk = part ? j->part_key : hist, pi = part ? j->part_index : hist;
    if (c.os) {
        st = ds_onesweep(ctx, j, &c, kk, passes, T, zn, hist, totals, tk, tp, num_wait, wait);
        goto sorted;
    }
    for (unsigned p = 0; p < passes && st == CLTOPK_OK; p++) {
        cl_uint s = p * c.digit, w = T - s < c.digit ? T - s : c.digit;
        cl_uint implicit = p == 0 && !j->pos;
        cl_uint fin = p + 1 == passes && j->final && !part;
        cl_mem sk = p == 0 ? j->keys : tk[(p - 1) & 1];
        cl_mem sp = p == 0 ? (j->pos ? j->pos : j->keys) : tp[(p - 1) & 1];
        cl_ulong koff = p == 0 ? j->key_off : 0;
        cl_mem dk, dp, dl;
        ds_pass_outputs(j, p + 1 < passes || part, tk[p & 1], tp[p & 1], hist, &dk, &dp, &dl);
        st = cltopk_set_args(ctx, kk[DS_HIST], 14, sizeof(cl_mem), &sk, sizeof koff, &koff,
                             sizeof(cl_mem), &sp, sizeof implicit, &implicit, sizeof m32, &m32,
                             sizeof sm, &sm, sizeof pb, &pb, sizeof s, &s, sizeof w, &w,
                             sizeof tpg32, &tpg32, sizeof(cl_mem), &hist, sizeof(cl_mem), &pk,
                             sizeof(cl_mem), &pi, sizeof(cl_mem), &totals);
        if (st == CLTOPK_OK)
            st = cltopk_launch(ctx, kk[DS_HIST], groups * c.hs * c.wg, c.wg, p ? 0 : num_wait,
                               p ? NULL : wait);
        if (st == CLTOPK_OK)
            st = cltopk_set_args(ctx, kk[DS_SCAN], 4, sizeof(cl_mem), &hist, sizeof G, &G,
                                 sizeof(cl_mem), &totals, sizeof thr, &thr);
        if (st == CLTOPK_OK)
            st = cltopk_launch(ctx, kk[DS_SCAN], radix * c.wg, c.wg, 0, NULL);
        /* ds_scatter, or (sk) both builds, each running only where the
         * pass is (DS_SKEWED, only = 2) or is not (only = 1) skewed */
        for (int v = DS_SCATTER; v <= DS_SKEWED && st == CLTOPK_OK; v++) {
            cl_uint only = c.sk ? (cl_uint)(v - DS_SCATTER + 1) : 0u;
            if (v == DS_SKEWED && !c.sk)
                break;
            st = cltopk_set_args(ctx, kk[v], 22, sizeof(cl_mem), &sk, sizeof koff, &koff,
                                 sizeof(cl_mem), &sp, sizeof implicit, &implicit, sizeof m32,
                                 &m32, sizeof sm, &sm, sizeof pb, &pb, sizeof s, &s, sizeof w,
                                 &w, sizeof tpg32, &tpg32, sizeof(cl_mem), &hist,
                                 sizeof(cl_mem), &totals, sizeof fin, &fin, sizeof(cl_mem), &dk,
                                 sizeof(cl_mem), &dp, sizeof(cl_mem), &dl, sizeof base, &base,
                                 sizeof k32, &k32, sizeof want, &want, sizeof(cl_mem), &pk,
                                 sizeof(cl_mem), &pi, sizeof only, &only);
            if (st == CLTOPK_OK)
                st = cltopk_launch(ctx, kk[v], groups * c.wg, c.wg, 0, NULL);
        }
    }
sorted:
    if (st == CLTOPK_OK && part) {
        /* the k winners, in position order in tk[0] / tp[0]: sorted by the key
         * alone, the passes alternating through tk[1] and tk[0] */
        cltopk_devsort_job s2 = *j;
        s2.part_key = s2.part_index = NULL;
        s2.m = j->k;
        s2.keys = tk[0], s2.key_off = 0, s2.pos = tp[0];
        s2.tmp_keys[0] = tk[1], s2.tmp_keys[1] = tk[0];
        s2.tmp_pos[0] = tp[1], s2.tmp_pos[1] = tp[0];
        st = cltopk_devsort(ctx, &s2, 0, NULL);
    }
out:
    for (int i = 0; i < DS_N; i++)
        if (kk[i])
            clReleaseKernel(kk[i]);
    return st;
}

#endif
