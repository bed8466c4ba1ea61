/* algo_sample_filter.c - host side of the sample-filter top-k (cl/sample_filter.cl).
 *
 * Top-k in about one read of the input, for k up to a limit set by the device's
 * local memory (the final sort: 4096 pairs, 2048 for 64-bit keys on 48 KB).
 * Five launches, enqueued back to back with no read-back:
 *   sf_gather  s = min(65536, n / 2) samples (GPUs: n / (512 U) units of U
 *              elements, unit= below, up to 262144 for large n; 4096 on CPU
 *              devices), one in
 *              each of s equal strata at a hashed offset (one work-item each);
 *              each group keeps its best min(r, group size), sorted
 *   sf_sample  (one group) the r-th best sample on the composite order (order
 *              key, then smaller position) as the threshold T, with l = k s / u
 *              (u = n, or the units of unit= below)
 *              and r = ceil(l + 5 sqrt(l) + 3): fewer than k elements at or
 *              above T needs r samples among the best k - 1 elements, a
 *              Poisson(l) tail beyond 5 sigma, at most about 4e-7 for any l
 *              (the exact fallback below serves it).  k = 256 of 2^29 on
 *              GPUs: l = 1/8, r = 5; + 5 gave r = 7, twice the survivors
 *              (20 K) and a final selection of 46 us instead of 33 on the
 *              H200.  (s is halved while r would
 *              exceed the sort; below 64 samples, or r >= s, sf_init instead
 *              puts T below everything.)
 *   sf_filter  (compute units x 32 groups on GPUs) the one read: elements at or
 *              above T go to their group's local segment, then to the survivor
 *              buffer (about r n / s pairs; it holds (r + 6 sqrt(r) + 16) n / s)
 *   sf_reduce  (k < group size) each group of survivors cut to its best k, so
 *              that the final selection reads about k / group size of them
 *   sf_final   (group 0) the exact top-k of the survivors, or, decided on the
 *              device, of the input itself when the survivors cannot serve
 *              (fewer than k: the whole input; more than the buffer: the input
 *              at or above T).  That fallback runs on all of its groups (2 a
 *              compute unit, as many as the survivor buffer holds k pairs
 *              of): each selects the best k of a slice of the input, the last
 *              to finish the best k of theirs.  Exact, some times slower than
 *              the filter (each group reads its slice a few times), and as rare
 *              as the bounds above say unless forced.
 * k = 1 is a reduction instead: sf_best_part (each group's best pair) and
 * sf_best_final.  The seed of the sample and of the tile-to-group permutation
 * changes with every call; the answer never depends on it.  All positions are
 * 32-bit inside a call: a cl_mem call takes n < 2^32 - 1.
 *
 * CLTOPK_SAMPLE_FILTER="name=value,..." sets parameters and forces the
 * exceptional paths (testing, tuning).  It is parsed strictly: an unknown name
 * or a value out of range makes the algorithm refuse every call (supports()
 * says which).  Names:
 *   seed=N     a fixed seed (decimal or 0x hex, any 64-bit value)
 *   s=N        the sample size, 64..2^20 (default 65536, on GPUs n / (512 U)
 *              where that is more, up to 262144, U the unit below; CPUs 4096); a call
 *              takes at most n / 2, and below 64 keeps everything (T below
 *              every element)
 *   bs=N       the band's sample size (selections, and k above the final
 *              sort), 64..2^20 (default 65536, CPUs 4096; GPUs from n =
 *              2^26: 262144 with bm=16, SF_BAND_LARGE_*); a call takes at
 *              most n / 2; below 64 samples the radix select of the input
 *              runs alone
 *   bm=M       how the band's bounds (two samples' ranks) are selected: 0
 *              by one group over every sample (the default but on GPUs
 *              from n = 2^26: its time follows bs); M, a power of two 2..wg:
 *              through the bracket: every M-th sample of each gather group's
 *              sorted run (bs / M pairs) gives two samples that provably hold
 *              both bounds between them (see plan_bracket), a pass of many
 *              groups keeps the samples between those (about bs / M + (M -
 *              1) bs / wg plus the band's samples), and one group selects
 *              the bounds among those: the same bounds, so the same band and
 *              answer, from far fewer pairs read by one group (bs / M plus
 *              the bracket: 34 K instead of 262 K at bs = 262144, M = 16,
 *              wg = 256)
 *   part=K     a top-k above the final sort with k >= K selects the k-th
 *              element by the band, then the device sort keeps the pairs at or
 *              above it (one stable partition pass) and sorts those k alone
 *              (default 0: K = n / 16; a K above n: never; below K the band's
 *              winners are radix-selected and sorted with their positions'
 *              bits)
 *   small=N    a selection whose band buffer holds at most N pairs (default
 *              32768) is finished by one group (sf_band_final) instead of
 *              the radix select; 0: always the radix select (one group takes
 *              about 1.5 ns an element a pass, the radix select about 200 us
 *              of launches on the H200)
 *   range=R    the sparse band filter: 1 an element's key tested against the
 *              band by one unsigned range compare (u - L <= U - L), its
 *              position only where the key is one of the bounds' (CPU
 *              default); 0 the composite (key, ~position) compared as one
 *              64-bit word (32-bit keys; the GPU default: range=1
 *              measured no faster on the H200) or the lower bound's branch first (64-bit)
 *   seltop=S   1: a selection of rank r < the final sort's capacity runs as
 *              the top r + 1 (k = 1: the reduction), whose final step
 *              writes the last winner alone (GPU default: the top-k's read
 *              costs 1.04-1.5x the floor at k <= 4096 on the H200, the band's
 *              1.55-1.7x); 0: the band (CPU default: on POCL the band took
 *              17-22 ms at ranks 0 and 1023 of 2^24, the top-k 42-56 ms)
 *   ofs=O      1 (default): a selection's band filter stores a member's key as
 *              (u - L) << z (L the lower bound's key, z the leading zeros of
 *              U - L), which keeps the members' order and puts the band's
 *              spread in the top bits, where the radix select's first digits
 *              split it (a narrow band's keys share their top bits: each
 *              such digit cost a pass that hardly narrowed); 0: the key
 *   dense=D    the band filter: 0 a local atomic a member, 1 members counted
 *              a tile and written to the segment together, full segments
 *              flushed; auto (default): 0, with 8192 groups (unless groups=
 *              is set) where the band's buffer exceeds half of the default
 *              groups' segments
 *   unit=U     (top-k) a sample is the best element of a unit of U
 *              consecutive elements (a power of two 1..16; the units start at
 *              multiples of U in the buffer, those at the input's ends
 *              shorter), one in each of s equal strata of the units; GPUs
 *              default to a 32-byte sector (U = 32 / key bytes: one random
 *              read brings it whole), CPUs to 1.  The bounds above hold with
 *              units for elements: l = k s / u (u = ceil(n / U) units), and at
 *              most U elements a unit at or above T; on independent keys the
 *              survivors are about U times fewer for the same s
 *   rank=N     the sample rank r of T, 1..the largest k (default above)
 *   cap=N      survivor buffer capacity in pairs, 1..2^32 - 2 (default the bound
 *              above): a small cap forces the "too many survivors" path
 *   lseg=N     pairs of a group's local segment, 1..8192 and within local
 *              memory (default 2048 for 32-bit keys, 1024 for 64-bit; 256 on
 *              CPUs): a small segment forces spills into the shared buffer
 *   force=F    few: T above every pair but the best possible one (forces the
 *              "too few survivors" path when k >= 2); all: T below everything
 *              (every element survives); none (default)
 *   wg=N       work-items of a filter group, a power of two 16..1024 (GPU 256,
 *              CPU 64)
 *   unr=N      16-byte vectors a work-item loads a round, 1..16 (default 4;
 *              GPUs 8 for k = 1, 6 for the top-k of k > 1)
 *   fwg=N      work-items of the one-group kernels, a power of two 16..1024
 *              (GPU 1024, CPU 64; at most the sort's capacity)
 *   groups=N   filter groups, 1..65536 (default compute units x 32, CPU x 2)
 *   fbg=N      sf_final's groups, 1..65536 (default 2 a compute unit; at most
 *              the survivor buffer's pairs / k): where the survivors cannot
 *              serve, each takes a slice of the input (1: one group reads it
 *              all)
 *   sort=N     the final sort's capacity, which is the largest k: a power of
 *              two 64..the default (the largest that local memory holds, at
 *              most 4096)
 *   digit=D    bits of a digit of the one-group selections, 8 (4 histogram
 *              copies) or 11 (one; the default where local memory holds it)
 *   reduce=0   no sf_reduce (default 1: for k below the group size, each group
 *              of survivors is cut to its best k before the final selection)
 *   profile=1  after the call, wait for it and print each launch's device time
 *              (OpenCL profiling events) and the survivor count to stderr
 *   check=P    after the call, wait for it and check that path P ran, else
 *              fail with CLTOPK_ERR_INTERNAL: normal (survivors served),
 *              few (too few: fallback over the input), overflow (too many:
 *              fallback over the input at or above T), spill (survivors
 *              spilled past a full segment), bracket (a selection's band
 *              served, its bounds selected through the bracket, bm=, which
 *              held both and fitted its buffer), sample (a top-k: right after
 *              sf_sample, the host reads the kept samples and the threshold
 *              and checks that it is their r-th best)
 * (k = 1 is the reduction, which has no sample, paths or segments: rank, cap,
 * lseg, force, s, sort, digit, reduce and check do not apply to it.)
 *
 * Scratch: the survivor buffer (cap pairs), the samples (s pairs; the group
 * results for k = 1) and SF_ST_WORDS words of state, in the context's
 * candidate slots; the band's bracket keeps its subsample after the samples
 * and the bracket in the band's buffer, which the filter fills after it. */
#include "internal.h"

#if HAVE_OPENCL

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the one-group selection's digits: 11 bits and one histogram where local
 * memory holds it beside the sort, else 8 bits and 4 copies (4 KB) */
#define SF_HIST_MIN (256 * 4 * 4)
#define SF_HIST_WIDE (2048 * 4)
#define SF_ST_WORDS 15  /* cl: ST_WORDS */
#define SF_ST_TOTAL 0
#define SF_ST_ABOVE 1
#define SF_ST_TLO 2 /* cl: ST_TLO, ST_THI, ST_TNI: the threshold */
#define SF_ST_THI 3
#define SF_ST_TNI 4
#define SF_ST_PATH 5
#define SF_ST_SPILL 6
#define SF_ST_BCNT 13 /* cl: ST_BCNT, the bracket's samples */
#define SF_ST_BBAD 14 /* cl: ST_BBAD, 1: the bracket missed a bound (never) */
#define SF_BS_MAX (1 << 20) /* the band's sample: bs= up to this */
#define SF_SMAX_TOPK (1 << 20) /* a top-k's sample: s= up to this */
#define SF_S_LARGE 262144 /* GPUs: the sample of a large n (n / (512 U), at most this) */
#define SF_BAND_GROUPS 8192 /* groups of a wide band's filter */
#define SF_PART_DIV 16      /* the partition's default: a top-k of k >= n / this */
/* GPUs, a selection's band over n >= SF_BAND_LARGE_N: a sample of
 * SF_BAND_LARGE_BS whose bounds are found through the bracket with stride
 * SF_BAND_LARGE_BM (below that n: bs = 65536 and the one-step selection);
 * SF_BAND_LARGE_ON 0 turns it off.  Measured on the H200, the median of 2^29
 * float32 (wall, medians of 7): the one-step selection at bs = 65536 took
 * 2.22-2.33x the read floor (about 11 M band members: band 118 us, filter
 * 770-811 us, radix select some 210 us); bm = 16, bs = 262144 took
 * 1.92-1.97x (about 5.2 M members: subsample 31 us, bracket 7, band 39,
 * filter 683-693, radix select some 170); bm = 8 was within noise of 16 and
 * bs = 131072 a little slower (2.00-2.04x, 7.3 M members). */
#define SF_BAND_LARGE_ON 1
#define SF_BAND_LARGE_N ((size_t)1 << 26)
#define SF_BAND_LARGE_BS 262144
#define SF_BAND_LARGE_BM 16

enum { SF_FORCE_NONE = 0, SF_FORCE_ALL = 1, SF_FORCE_FEW = 2 };
enum { SF_CHECK_NONE = 0, SF_CHECK_NORMAL, SF_CHECK_FEW, SF_CHECK_OVERFLOW, SF_CHECK_SPILL,
       SF_CHECK_BRACKET, SF_CHECK_SAMPLE };

typedef struct {
    /* compile time */
    unsigned wg, unr, lseg, fwg, sortcap, db, hc;
    /* run time */
    unsigned s, rank, force, check, groups, profile, noreduce, bs;
    unsigned bm; /* the band's bracket stride (0: the one-step selection) */
    unsigned unit; /* elements of a top-k sample's unit (1: a sample is an element) */
    unsigned fbg; /* sf_final's groups where the survivors cannot serve (0: 2 a compute unit) */
    int dense; /* the band filter's way: 0 sparse, 1 dense, -1 by the expected band */
    int range; /* the sparse band filter tests keys by one unsigned range compare */
    int seltop; /* a selection at a rank below sortcap: the last of the top rank + 1 */
    int ofs;    /* the band's members keyed by (u - L) << z */
    size_t skip; /* (per call) sf_final writes the winners from this one on */
    int sampled; /* (per call) check=sample: the threshold was checked */
    size_t bcap; /* (per call) the bracket's buffer (0: no bracket), for check=bracket */
    size_t small; /* a selection's band buffer up to this: one group picks the rank */
    size_t part;  /* a top-k above the final sort with k >= part (0: n / 16) selects the
                     k-th, then partitions the input by it and sorts the k winners */
    size_t cap;
    uint64_t seed;
    int seed_set, rank_set, cap_set, groups_set, wg_set, s_set, unr_set, gpu, bs_set, bm_set;
} sf_cfg;

/* the largest sort (pairs) that the one-group kernels' local memory holds */
static unsigned max_sortcap(const cltopk_context *ctx, int bytes)
{
    uint64_t lm = ctx->caps.local_mem, need_fixed = SF_HIST_MIN + 256;
    unsigned sc = 4096;
    while (sc >= 64 && (uint64_t)sc * (uint64_t)(bytes + 4) + need_fixed > lm)
        sc >>= 1;
    return sc;
}

/* CLTOPK_SAMPLE_FILTER (parsed strictly, lib/tune.h; see the top of the file).
 * A default of 0 is derived from the device and the key width. */
static const char *const sf_force_words[] = {"none", "all", "few", NULL};
static const char *const sf_check_words[] = {"none",  "normal",  "few",    "overflow",
                                             "spill", "bracket", "sample", NULL};
static const char *const sf_dense_words[] = {"0", "1", "auto", NULL};
enum { SP_SEED, SP_S, SP_RANK, SP_CAP, SP_LSEG, SP_FORCE, SP_WG, SP_UNR, SP_FWG, SP_GROUPS,
       SP_SORT, SP_DIGIT, SP_REDUCE, SP_PROFILE, SP_CHECK, SP_BS, SP_DENSE, SP_SMALL, SP_PART,
       SP_RANGE, SP_SELTOP, SP_OFS, SP_FBG, SP_BM, SP_UNIT, SP_N };
static const cltopk_param sf_params[] = {
    [SP_SEED] = {.name = "seed", .min = 0, .max = 18446744073709551615.0, .integer = 1},
    [SP_S] = {.name = "s", .gpu = 65536, .cpu = 4096, .min = 64, .max = SF_SMAX_TOPK,
              .integer = 1},
    [SP_RANK] = {.name = "rank", .min = 1, .max = 65536, .integer = 1},
    [SP_CAP] = {.name = "cap", .min = 1, .max = 4294967294.0, .integer = 1},
    [SP_LSEG] = {.name = "lseg", .min = 1, .max = 8192, .integer = 1},
    [SP_FORCE] = {.name = "force", .min = 0, .max = 2, .integer = 1, .words = sf_force_words},
    [SP_WG] = {.name = "wg", .gpu = 256, .cpu = 64, .min = 16, .max = 1024, .integer = 1},
    [SP_UNR] = {.name = "unr", .gpu = 4, .cpu = 4, .min = 1, .max = 16, .integer = 1},
    [SP_FWG] = {.name = "fwg", .gpu = 1024, .cpu = 64, .min = 16, .max = 1024, .integer = 1},
    [SP_GROUPS] = {.name = "groups", .min = 1, .max = 65536, .integer = 1},
    [SP_SORT] = {.name = "sort", .min = 64, .max = 4096, .integer = 1},
    [SP_DIGIT] = {.name = "digit", .min = 8, .max = 11, .integer = 1},
    [SP_REDUCE] = {.name = "reduce", .gpu = 1, .cpu = 1, .min = 0, .max = 1, .integer = 1},
    [SP_PROFILE] = {.name = "profile", .min = 0, .max = 1, .integer = 1},
    [SP_CHECK] = {.name = "check", .min = 0, .max = 6, .integer = 1, .words = sf_check_words},
    [SP_BS] = {.name = "bs", .gpu = 65536, .cpu = 4096, .min = 64, .max = SF_BS_MAX,
               .integer = 1},
    [SP_DENSE] = {.name = "dense", .gpu = 2, .cpu = 2, .min = 0, .max = 2, .integer = 1,
                  .words = sf_dense_words},
    [SP_SMALL] = {.name = "small", .gpu = 32768, .cpu = 32768, .min = 0, .max = 4294967294.0,
                  .integer = 1},
    [SP_PART] = {.name = "part", .min = 0, .max = 4294967294.0, .integer = 1},
    /* 0 on GPUs: on the H200 range=1 left the median where it was (1.133 ms
     * against 1.114, the filter is not issue-bound there) and slowed rank n - 1
     * of bucket-killer input (0.99-1.02 ms against 0.82-0.87) */
    [SP_RANGE] = {.name = "range", .gpu = 0, .cpu = 1, .min = 0, .max = 1, .integer = 1},
    [SP_SELTOP] = {.name = "seltop", .gpu = 1, .cpu = 0, .min = 0, .max = 1, .integer = 1},
    [SP_OFS] = {.name = "ofs", .gpu = 1, .cpu = 1, .min = 0, .max = 1, .integer = 1},
    [SP_FBG] = {.name = "fbg", .min = 1, .max = 65536, .integer = 1},
    [SP_BM] = {.name = "bm", .min = 0, .max = 1024, .integer = 1},
    [SP_UNIT] = {.name = "unit", .gpu = 0, .cpu = 1, .min = 1, .max = 16, .integer = 1},
};
static const cltopk_param_table sf_table = {"CLTOPK_SAMPLE_FILTER", sf_params, SP_N, NULL};

/* defaults for the device and key width, then CLTOPK_SAMPLE_FILTER; -1 with the
 * reason in why */
static int sf_configure(const cltopk_context *ctx, const cltopk_request *rq, sf_cfg *c, char *why,
                     size_t whylen)
{
    int bytes = rq->bytes;
    memset(c, 0, sizeof *c);
    int gpu = (ctx->caps.type & CL_DEVICE_TYPE_GPU) != 0;
    unsigned scmax = max_sortcap(ctx, bytes);
    if (scmax < 64) {
        snprintf(why, whylen,
                 "sample-filter needs %d bytes of local memory for its final sort; %s has %llu",
                 64 * (bytes + 4) + SF_HIST_MIN + 256, ctx->name,
                 (unsigned long long)ctx->caps.local_mem);
        return -1;
    }
    cltopk_params p;
    cltopk_tune_for f = {gpu, ctx->caps.device_name, (unsigned)bytes, -1, rq->k};
    if (cltopk_params_get(rq->tune, &sf_table, &f, &p, why, whylen) != 0)
        return -1;
#define SET(i) ((p.set >> (i)) & 1u)
    c->wg = (unsigned)p.v[SP_WG];
    c->unr = (unsigned)p.v[SP_UNR];
    c->fwg = (unsigned)p.v[SP_FWG];
    if (!SET(SP_FWG))
        while (c->fwg > ctx->caps.max_wg && c->fwg > 16)
            c->fwg >>= 1;
    if (!SET(SP_WG))
        while (c->wg > ctx->caps.max_wg && c->wg > 16)
            c->wg >>= 1;
    c->lseg = SET(SP_LSEG) ? (unsigned)p.v[SP_LSEG] : gpu ? (bytes == 4 ? 2048u : 1024u) : 256u;
    c->sortcap = SET(SP_SORT) ? (unsigned)p.v[SP_SORT] : scmax;
    c->s = (unsigned)p.v[SP_S]; /* a CPU device reads the sample slowly */
    c->bs = (unsigned)p.v[SP_BS];
    c->bs_set = SET(SP_BS);
    c->bm = (unsigned)p.v[SP_BM];
    c->bm_set = SET(SP_BM);
    /* GPUs: a 32-byte sector a unit (one random read fetches that much) */
    c->unit = SET(SP_UNIT) || !gpu ? (unsigned)p.v[SP_UNIT] : 32u / (unsigned)bytes;
    c->small = (size_t)p.v[SP_SMALL];
    c->part = (size_t)p.v[SP_PART];
    c->dense = p.v[SP_DENSE] == 2 ? -1 : (int)p.v[SP_DENSE];
    c->range = (int)p.v[SP_RANGE];
    c->seltop = (int)p.v[SP_SELTOP];
    c->ofs = (int)p.v[SP_OFS];
    c->fbg = SET(SP_FBG) ? (unsigned)p.v[SP_FBG] : 0u;
    c->force = (unsigned)p.v[SP_FORCE];
    c->check = (unsigned)p.v[SP_CHECK];
    c->profile = (unsigned)p.v[SP_PROFILE];
    c->noreduce = p.v[SP_REDUCE] == 0;
    c->db = SET(SP_DIGIT) ? (unsigned)p.v[SP_DIGIT] : 0;
    c->seed = (uint64_t)p.v[SP_SEED];
    c->seed_set = SET(SP_SEED);
    c->rank = (unsigned)p.v[SP_RANK];
    c->rank_set = SET(SP_RANK);
    c->cap = (size_t)p.v[SP_CAP];
    c->cap_set = SET(SP_CAP);
    c->groups = (unsigned)p.v[SP_GROUPS];
    c->groups_set = SET(SP_GROUPS);
    c->wg_set = SET(SP_WG) || SET(SP_FWG);
    c->s_set = SET(SP_S);
    c->unr_set = SET(SP_UNR);
    c->gpu = gpu;
#undef SET
    /* what the device decides */
    const char *bad = NULL;
    if (c->db && c->db != 8 && c->db != 11)
        bad = "digit must be 8 or 11";
    else if (!cltopk_is_pow2(c->wg) || c->wg > ctx->caps.max_wg || !cltopk_is_pow2(c->fwg) ||
             c->fwg > ctx->caps.max_wg)
        bad = "wg and fwg must be powers of two up to the device's work-group size";
    else if ((uint64_t)c->lseg * (uint64_t)(bytes + 4) + 64 > ctx->caps.local_mem)
        bad = "lseg must fit the device's local memory";
    else if (!cltopk_is_pow2(c->sortcap) || c->sortcap > scmax)
        bad = "sort must be a power of two that the device's local memory holds";
    else if (c->bm && (!cltopk_is_pow2(c->bm) || c->bm < 2 || c->bm > c->wg))
        bad = "bm must be 0 or a power of two 2..wg";
    else if (!cltopk_is_pow2(c->unit))
        bad = "unit must be a power of two 1..16";
    if (bad) {
        snprintf(why, whylen,
                 "CLTOPK_SAMPLE_FILTER: %s (%s: work-groups up to %zu, %llu bytes of local "
                 "memory, a sort of at most %u pairs)",
                 bad, ctx->name, ctx->caps.max_wg, (unsigned long long)ctx->caps.local_mem,
                 scmax);
        return -1;
    }
    if (c->fwg > c->sortcap)
        c->fwg = c->sortcap; /* the bin scan uses the sort's arrays */
    int wide = (uint64_t)c->sortcap * (uint64_t)(bytes + 4) + SF_HIST_WIDE + 256 <=
               ctx->caps.local_mem;
    if (c->db == 11 && !wide) {
        snprintf(why, whylen,
                 "CLTOPK_SAMPLE_FILTER: digit=11 needs %d more bytes of local memory beside a "
                 "sort of %u pairs on %s (set sort= lower)",
                 SF_HIST_WIDE, c->sortcap, ctx->name);
        return -1;
    }
    if (!c->db)
        c->db = wide ? 11 : 8;
    c->hc = c->db == 11 ? 1 : 4;
    if (c->rank_set && c->rank > c->sortcap) {
        snprintf(why, whylen, "CLTOPK_SAMPLE_FILTER: rank=%u is above the final sort's %u",
                 c->rank, c->sortcap);
        return -1;
    }
    return 0;
}

/* the parameters of one call over n elements, k > 1 */
typedef struct {
    unsigned s, r, unit;
    size_t cap;
    uint64_t seed;
} sf_call;


static void plan_call(const sf_cfg *c, size_t n, size_t k, uint64_t seed, sf_call *p)
{
    p->seed = seed;
    size_t s = c->s;
    /* GPUs: a larger sample of a large input leaves 4x fewer survivors for
     * the one-group selection (n = 2^29 on the H200: k = 4096 took 0.77
     * instead of 0.82 ms, bench/RESULTS.md); with units of U elements, one
     * unit in 512 U of the input (n = 2^29 f32: 131072 units of 8; keys
     * only, k = 32 / 256 / 4096: 0.586 / 0.588 / 0.672 ms, against 0.595 /
     * 0.609 / 0.723 with 262144 units and 0.589 / 0.605 / 0.693 with 262144
     * single elements) */
    size_t sw = c->unit > 1 ? n / (512 * (size_t)c->unit) : n / 2048;
    if (c->gpu && !c->s_set && sw > s)
        s = sw < SF_S_LARGE ? sw : SF_S_LARGE;
    /* the sampled units: u = ceil(n / unit) of them at least (one more where
     * the input does not start at a unit's boundary; the smaller count only
     * raises l, so r, below) */
    size_t unit = c->unit > 1 && n / c->unit >= 128 ? c->unit : 1, u = (n + unit - 1) / unit;
    if (s > u / 2)
        s = u / 2;
    unsigned r = 0;
    /* the sample's selection sorts at most sortcap pairs: r <= sortcap, which
     * a smaller sample always reaches (s <= u / 4 gives l <= sortcap / 4) */
    for (; s >= 64; s /= 2) {
        double l = (double)k * (double)s / (double)u;
        r = c->rank_set ? c->rank : (unsigned)ceil(l + 5.0 * sqrt(l) + 3.0);
        if (r <= c->sortcap)
            break;
    }
    if (s < 64 || r >= s)
        r = 0;
    if (c->force == SF_FORCE_ALL)
        r = 0;
    p->s = (unsigned)s;
    p->r = r;
    p->unit = (unsigned)unit;
    size_t cap = n;
    if (r) {
        /* at most lam u / s units hold an element at or above T, each at most
         * `unit` of them */
        double lam = r + 6.0 * sqrt((double)r) + 16.0;
        double b = ceil(lam * (double)(u + 1) / (double)s) * (double)unit;
        if (b < (double)n)
            cap = (size_t)b;
        if (cap < 2 * k)
            cap = 2 * k < n ? 2 * k : n;
    }
    if (c->cap_set)
        cap = c->cap < n ? c->cap : n;
    p->cap = cap;
}

/* a top-k of k above the final sort takes the partition (part=, default n / 16:
 * on the H200 at 2^29 f32 the partition took 6.2 ms at k = 2^24 against 4.2 ms
 * by the band's winners, and 22.9 ms at k = 2^28 against 67 ms) */
static int part_applies(const sf_cfg *c, size_t n, size_t k)
{
    return k >= (c->part ? c->part : n / SF_PART_DIV);
}

static int sf_supports(cltopk_context *ctx, const cltopk_request *rq, char *why, size_t whylen)
{
    sf_cfg c;
    if (sf_configure(ctx, rq, &c, why, whylen) != 0)
        return 0;
    if (rq->select)
        return cltopk_rselect_supports(ctx, rq, why, whylen);
    if (rq->k > c.sortcap) {
        /* the band's top-k: the device sort of the winners must run here (of
         * the whole input, for the partition) */
        int part = part_applies(&c, rq->n, rq->k);
        size_t ds = rq->k > CLTOPK_WINNERS_BITONIC_MAX || part
                        ? cltopk_devsort_scratch(ctx, rq->bytes * 8, part ? rq->n : rq->k, why,
                                                 whylen)
                        : 1;
        if (!ds)
            return 0;
        return cltopk_rselect_supports(ctx, rq, why, whylen);
    }
    return 1;
}

enum { K_INIT, K_GATHER, K_SAMPLE, K_FILTER, K_REDUCE, K_FINAL, K_BPART, K_BFINAL, K_BSAMPLE,
       K_BANDFIN, K_BRACKET, K_N };
static const char *const knames[K_N] = {"sf_init",       "sf_gather",      "sf_sample",
                                        "sf_filter",     "sf_reduce",      "sf_final",
                                        "sf_best_part",  "sf_best_final",  "sf_band_sample",
                                        "sf_band_final", "sf_band_bracket"};
/* the kernels of a call: k = 1, a sampled threshold, or none; a selection's
 * band, sampled or not */
enum { USE_BEST, USE_SAMPLE, USE_INIT, USE_BAND, USE_BAND_INIT };

/* whether kernel i serves a call of kind `use` */
static int kernel_needed(int use, int i)
{
    switch (use) {
    case USE_BEST:
        return i == K_BPART || i == K_BFINAL;
    case USE_SAMPLE:
        return i == K_GATHER || i == K_SAMPLE || i == K_FILTER || i == K_REDUCE || i == K_FINAL;
    case USE_INIT:
        return i == K_INIT || i == K_FILTER || i == K_REDUCE || i == K_FINAL;
    case USE_BAND:
        return i == K_GATHER || i == K_BSAMPLE || i == K_FILTER || i == K_BANDFIN ||
               i == K_BRACKET;
    default:
        return i == K_INIT || i == K_FILTER || i == K_BANDFIN;
    }
}

/* the kernels this call needs (k = 1: the reduction), with group sizes the
 * device runs (defaults halved where a kernel cannot run them) */
static int get_kernels(cltopk_context *ctx, const cltopk_request *rq, sf_cfg *c, int use,
                       cl_kernel *kk)
{
    int user_wg = c->wg_set;
    for (;;) {
        char opts[256];
        snprintf(opts, sizeof opts,
                 "-D KEY_BITS=%d -D KEY_KIND=%d -D WG=%u -D UNR=%u -D LSEG=%u -D FWG=%u "
                 "-D SORTCAP=%u -D DB=%u -D HC=%u -D BAND=%d -D RANGE=%d -D OFS=%d",
                 rq->bytes * 8, rq->kind, c->wg, c->unr, c->lseg, c->fwg, c->sortcap, c->db,
                 c->hc, use == USE_BAND || use == USE_BAND_INIT, c->range, c->ofs);
        memset(kk, 0, K_N * sizeof *kk);
        int st = CLTOPK_OK, shrink_wg = 0, shrink_fwg = 0;
        const char *limiter = NULL; /* the first kernel below its size, and its limit */
        size_t limit = 0;
        for (int i = 0; i < K_N && st == CLTOPK_OK; i++) {
            if (!kernel_needed(use, i))
                continue;
            st = cltopk_kernel_get(ctx, "sample_filter.cl", opts, knames[i], &kk[i]);
            if (st != CLTOPK_OK)
                break;
            size_t kwg = 0;
            clGetKernelWorkGroupInfo(kk[i], ctx->dev, CL_KERNEL_WORK_GROUP_SIZE, sizeof kwg, &kwg,
                                     NULL);
            if (i == K_INIT)
                continue;
            int one = i == K_SAMPLE || i == K_FINAL || i == K_BFINAL || i == K_BSAMPLE ||
                      i == K_BANDFIN;
            if (kwg && kwg < (one ? c->fwg : c->wg)) {
                if (one)
                    shrink_fwg = 1;
                else
                    shrink_wg = 1;
                if (!limiter)
                    limiter = knames[i], limit = kwg;
            }
        }
        if (st == CLTOPK_OK && !shrink_wg && !shrink_fwg)
            return CLTOPK_OK;
        for (int i = 0; i < K_N; i++)
            if (kk[i])
                clReleaseKernel(kk[i]);
        memset(kk, 0, K_N * sizeof *kk);
        if (st != CLTOPK_OK)
            return st;
        if (user_wg || (shrink_wg && c->wg <= 16) || (shrink_fwg && c->fwg <= 16))
            return cltopk_fail(ctx, CLTOPK_ERR_UNSUPPORTED,
                               "sample-filter: the kernels built with %s cannot run their "
                               "work-groups on %s (%s runs at most %zu work-items a group "
                               "there; set CLTOPK_SAMPLE_FILTER=wg=...,fwg=...)",
                               opts, ctx->name, limiter ? limiter : "a kernel", limit);
        if (shrink_wg)
            c->wg >>= 1;
        if (shrink_fwg)
            c->fwg >>= 1;
    }
}

static uint64_t gcd64(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* profile=1: the events of a call's launches */
#define SF_PROF_MAX 8
typedef struct {
    cl_event ev[SF_PROF_MAX];
    const char *name[SF_PROF_MAX];
    int n;
} sf_prof;

static void prof_add(cltopk_context *ctx, sf_prof *pr, const char *name)
{
    if (pr && pr->n < SF_PROF_MAX && ctx->last) {
        clRetainEvent(ctx->last);
        pr->ev[pr->n] = ctx->last;
        pr->name[pr->n++] = name;
    }
}

static void prof_print(cltopk_context *ctx, const sf_cfg *c, sf_prof *pr, size_t n, size_t k,
                       cl_mem state)
{
    cl_uint w[SF_ST_WORDS] = {0};
    cl_event *own;
    cl_uint nown = cltopk_after_own(ctx, &own);
    if (state)
        clEnqueueReadBuffer(ctx->queue, state, CL_TRUE, 0, sizeof w, w, nown, own, NULL);
    else if (pr->n)
        clWaitForEvents(1, &pr->ev[pr->n - 1]);
    char label[64];
    snprintf(label, sizeof label, "sample-filter n=%zu k=%zu wg=%u fwg=%u", n, k, c->wg, c->fwg);
    cltopk_events_print(label, pr->ev, pr->name, pr->n);
    if (state)
        fprintf(stderr, "; survivors %u, spilled %u, path %u", w[SF_ST_TOTAL], w[SF_ST_SPILL],
                w[SF_ST_PATH]);
    if (state && c->bcap)
        fprintf(stderr, "; bracket %u of %zu%s", w[SF_ST_BCNT], c->bcap,
                w[SF_ST_BBAD] ? " (missed a bound)" : "");
    fprintf(stderr, "\n");
    pr->n = 0;
}

/* after a call with check=P: wait, read the state, compare */
static int check_path(cltopk_context *ctx, const sf_cfg *c, cl_mem state)
{
    cl_uint w[SF_ST_WORDS];
    cl_event *own;
    cl_uint nown = cltopk_after_own(ctx, &own);
    cl_int err = clEnqueueReadBuffer(ctx->queue, state, CL_TRUE, 0, sizeof w, w, nown, own, NULL);
    if (err != CL_SUCCESS)
        return cltopk_clfail(ctx, err, "reading the sample-filter state (check=)");
    unsigned path = w[SF_ST_PATH], spill = w[SF_ST_SPILL], bcnt = w[SF_ST_BCNT];
    /* bracket: the band served, its bounds selected through a bracket that
     * held samples, fitted its buffer and held both bounds */
    int good = c->check == SF_CHECK_SAMPLE   ? c->sampled
               : c->check == SF_CHECK_SPILL   ? spill > 0
               : c->check == SF_CHECK_BRACKET ? path == SF_CHECK_NORMAL && c->bcap &&
                                                    bcnt > 0 && bcnt <= c->bcap &&
                                                    !w[SF_ST_BBAD]
                                              : path == c->check;
    if (!good)
        return cltopk_fail(ctx, CLTOPK_ERR_INTERNAL,
                           "sample-filter check=%s failed: path %u (1 normal, 2 few, 3 "
                           "overflow), %u survivors, %u spilled, bracket %u of %zu%s",
                           c->check == SF_CHECK_NORMAL     ? "normal"
                           : c->check == SF_CHECK_FEW      ? "few"
                           : c->check == SF_CHECK_OVERFLOW ? "overflow"
                           : c->check == SF_CHECK_BRACKET  ? "bracket"
                           : c->check == SF_CHECK_SAMPLE   ? "sample (no sample taken?)"
                                                           : "spill",
                           path, w[SF_ST_TOTAL], spill, bcnt, c->bcap,
                           w[SF_ST_BBAD] ? " (missed a bound)" : "");
    return CLTOPK_OK;
}

/* check=sample: right after sf_sample, the threshold against the host's r-th
 * best of the kept samples (composite order: larger order key, then smaller
 * position), an independent check of the one-group selection */
static int check_sample(cltopk_context *ctx, size_t kb, cl_mem sk, cl_mem ski, size_t kept,
                        unsigned r, cl_mem state)
{
    cl_uint w[SF_ST_WORDS];
    size_t m = kept ? kept : 1;
    uint64_t *u = malloc(m * sizeof *u);
    cl_uint *ix = malloc(m * sizeof *ix);
    unsigned char *raw = malloc(m * kb);
    int st = CLTOPK_OK;
    if (!u || !ix || !raw) {
        st = cltopk_fail(ctx, CLTOPK_ERR_NO_MEMORY, "check=sample: out of host memory");
        goto out;
    }
    cl_event *own;
    cl_uint nown = cltopk_after_own(ctx, &own);
    cl_int err = clEnqueueReadBuffer(ctx->queue, state, CL_TRUE, 0, sizeof w, w, nown, own, NULL);
    if (err == CL_SUCCESS && kept)
        err = clEnqueueReadBuffer(ctx->queue, sk, CL_TRUE, 0, kept * kb, raw, 0, NULL, NULL);
    if (err == CL_SUCCESS && kept)
        err = clEnqueueReadBuffer(ctx->queue, ski, CL_TRUE, 0, kept * 4, ix, 0, NULL, NULL);
    if (err != CL_SUCCESS) {
        st = cltopk_clfail(ctx, err, "reading the samples (check=sample)");
        goto out;
    }
    for (size_t j = 0; j < kept; j++) {
        uint32_t lo, hi = 0;
        memcpy(&lo, raw + j * kb, 4);
        if (kb == 8)
            memcpy(&hi, raw + j * kb + 4, 4);
        u[j] = (uint64_t)hi << 32 | lo;
    }
    /* the r-th best by r rounds of a scan (r and kept are small here) */
    uint64_t bu = 0;
    cl_uint bi = 0;
    int have = 0;
    for (unsigned q = 0; q < r && q < kept; q++) {
        size_t best = kept;
        for (size_t j = 0; j < kept; j++) {
            int after = !have || u[j] < bu || (u[j] == bu && ix[j] > bi);
            if (after && (best == kept || u[j] > u[best] || (u[j] == u[best] && ix[j] < ix[best])))
                best = j;
        }
        if (best == kept)
            break;
        bu = u[best], bi = ix[best], have = 1;
    }
    uint64_t tu = w[SF_ST_TLO] | (kb == 8 ? (uint64_t)w[SF_ST_THI] << 32 : 0);
    cl_uint ti = ~w[SF_ST_TNI];
    if (!have || tu != bu || ti != bi)
        st = cltopk_fail(ctx, CLTOPK_ERR_INTERNAL,
                         "sample-filter check=sample failed: threshold (%llu, %u) against the "
                         "host's rank %u of %zu kept samples (%llu, %u)",
                         (unsigned long long)tu, ti, r, kept, (unsigned long long)bu, bi);
out:
    free(u);
    free(ix);
    free(raw);
    return st;
}

/* how the filtering read covers keys[off .. off+n): an unaligned head, nvec
 * 16-byte vectors in ntiles tiles taken by `groups` groups through the tile
 * permutation t -> (pa t + pb) mod ntiles (pa prime to ntiles, from seed) */
typedef struct {
    size_t head, nvec, ntiles, groups;
    cl_ulong pa, pb;
} sf_tiles;

static void tiles_of(const cltopk_context *ctx, const cltopk_request *rq, const sf_cfg *c,
                     size_t off, size_t n, uint64_t seed, sf_tiles *t)
{
    int gpu = (ctx->caps.type & CL_DEVICE_TYPE_GPU) != 0;
    size_t kb = (size_t)rq->bytes, vec = 16 / kb;
    t->head = (vec - off % vec) % vec;
    if (t->head > n)
        t->head = n;
    t->nvec = (n - t->head) / vec;
    size_t per = (size_t)c->wg * c->unr;
    t->ntiles = (t->nvec + per - 1) / per;
    t->groups = c->groups_set ? c->groups
                              : (size_t)(ctx->caps.compute_units ? ctx->caps.compute_units : 1) *
                                    (gpu ? 32 : 2);
    if (t->groups > t->ntiles)
        t->groups = t->ntiles;
    if (t->groups == 0)
        t->groups = 1;
    uint64_t z = cltopk_mix64(seed ^ 0xD1B54A32D192ED03ull);
    t->pa = 1;
    t->pb = 0;
    if (t->ntiles > 1) {
        t->pb = z % t->ntiles;
        for (int tries = 0; tries < 64; tries++) {
            z = cltopk_mix64(z + 0x9E3779B97F4A7C15ull);
            uint64_t a = 1 + z % (t->ntiles - 1);
            if (gcd64(a, t->ntiles) == 1) {
                t->pa = a;
                break;
            }
        }
    }
}

/* the filtering read (the kernel of the call's program: BAND or not; dense: a
 * band expected to fill more than half of the groups' segments) */
static int launch_filter(cltopk_context *ctx, cl_kernel kf, const sf_cfg *c, const sf_tiles *t,
                         cl_mem in, size_t off, size_t n, int smallest, size_t cap, int dense,
                         cl_mem state, cl_mem su, cl_mem si)
{
    cl_uint n32 = (cl_uint)n, sm = (cl_uint)smallest, head32 = (cl_uint)t->head;
    cl_uint nvec32 = (cl_uint)t->nvec, nt32 = (cl_uint)t->ntiles, cap32 = (cl_uint)cap;
    cl_uint dense32 = dense != 0;
    cl_ulong off64 = off;
    int st = cltopk_set_args(ctx, kf, 14, sizeof(cl_mem), &in, sizeof off64, &off64, sizeof n32,
                             &n32, sizeof sm, &sm, sizeof head32, &head32, sizeof nvec32,
                             &nvec32, sizeof nt32, &nt32, sizeof t->pa, &t->pa, sizeof t->pb,
                             &t->pb, sizeof cap32, &cap32, sizeof dense32, &dense32,
                             sizeof(cl_mem), &state, sizeof(cl_mem), &su, sizeof(cl_mem), &si);
    if (st == CLTOPK_OK)
        st = cltopk_launch(ctx, kf, t->groups * c->wg, c->wg, 0, NULL);
    return st;
}

/* sf_gather: s samples of keys[off .. off+n) from seed, each group of c->wg
 * keeping its best `keep` (sorted) at group * keep of sk / ski; bm > 0 (with
 * keep = c->wg): also every bm-th of each group's sorted run at sub + group *
 * (c->wg / bm), the band's subsample */
static int launch_gather(cltopk_context *ctx, cl_kernel kg, const sf_cfg *c, cl_mem in,
                         size_t off, size_t n, int smallest, unsigned s, unsigned unit,
                         uint64_t seed, unsigned keep, unsigned bm, size_t sub, cl_mem sk,
                         cl_mem ski, cl_uint num_wait, const cl_event *wait)
{
    cl_uint n32 = (cl_uint)n, sm = (cl_uint)smallest, s32 = s, gr = keep, bm32 = bm;
    cl_uint sub32 = (cl_uint)sub, unit32 = unit;
    cl_ulong off64 = off, seed64 = seed;
    size_t global = ((size_t)s + c->wg - 1) / c->wg * c->wg;
    int st = cltopk_set_args(ctx, kg, 12, sizeof(cl_mem), &in, sizeof off64, &off64, sizeof n32,
                             &n32, sizeof sm, &sm, sizeof s32, &s32, sizeof seed64, &seed64,
                             sizeof gr, &gr, sizeof bm32, &bm32, sizeof sub32, &sub32,
                             sizeof(cl_mem), &sk, sizeof(cl_mem), &ski, sizeof unit32, &unit32);
    if (st == CLTOPK_OK)
        st = cltopk_launch(ctx, kg, global, c->wg, num_wait, wait);
    return st;
}

/* sf_init: the state with no sample (force: F_ALL 1, F_FEW 2) */
static int launch_init(cltopk_context *ctx, cl_kernel ki, cl_uint force, cl_mem state,
                       cl_uint num_wait, const cl_event *wait)
{
    int st = cltopk_set_args(ctx, ki, 2, sizeof force, &force, sizeof(cl_mem), &state);
    if (st == CLTOPK_OK)
        st = cltopk_launch(ctx, ki, 32, 32, num_wait, wait);
    return st;
}

static int sf_band_device(cltopk_context *ctx, const cltopk_request *rq, const sf_cfg *cfg,
                          cl_mem in, size_t off, size_t n, size_t rank, int topk,
                          cl_mem out_keys, cl_mem out_index, cl_uint want, uint64_t index_base,
                          cl_uint num_wait, const cl_event *wait);

/* sf_final's groups: where the survivors cannot serve (decided on the device),
 * each selects the best k of a slice of the input into the buffer that held
 * them (`room` pairs) and the last to finish merges those; so at most room /
 * k of them, and one alone for a buffer under 2 k.  Where the survivors serve,
 * group 0 works alone and the others return after two empty selections. */
static size_t final_groups(const cltopk_context *ctx, const sf_cfg *c, size_t k, size_t room)
{
    size_t g = c->fbg ? c->fbg : 2 * (size_t)(ctx->caps.compute_units ? ctx->caps.compute_units : 1);
    if (k && g > room / k)
        g = room / k;
    return g ? g : 1;
}

/* Top-k of keys[off .. off+n) of device buffer `in` into out_keys / out_index
 * (want bits: 1 keys, 2 positions offset by index_base), after `wait`; k above
 * the final sort's capacity by the band (sf_band_device). */
static int sf_device(cltopk_context *ctx, const cltopk_request *rq, const sf_cfg *cfg,
                      cl_mem in, size_t off, size_t n, size_t k, cl_mem out_keys,
                      cl_mem out_index, cl_uint want, uint64_t index_base, cl_uint num_wait,
                      const cl_event *wait)
{
    sf_cfg c = *cfg;
    if (k > c.sortcap)
        return sf_band_device(ctx, rq, cfg, in, off, n, k - 1, 1, out_keys, out_index, want,
                              index_base, num_wait, wait);
    int best = k == 1;
    if (best && c.gpu && !c.unr_set)
        c.unr = 8; /* the H200's reduction: 0.98x the floor with 8, 1.06x with 4 */
    else if (c.gpu && !c.unr_set)
        c.unr = 6; /* the H200's filter, keys only, 2^29 f32 (x floor, 6 against 4,
                    * three runs): k = 32 1.19-1.21 / 1.22-1.27, k = 256 1.24-1.29 /
                    * 1.26-1.30; 8 was slower than 4 (1.26 / 1.31) */
    sf_call p;
    plan_call(&c, n, k, 0, &p);
    int use = best ? USE_BEST : (p.r && c.force == SF_FORCE_NONE) ? USE_SAMPLE : USE_INIT;
    cl_kernel kk[K_N];
    int st = get_kernels(ctx, rq, &c, use, kk);
    if (st != CLTOPK_OK)
        return st;
    size_t kb = (size_t)rq->bytes;
    uint64_t seed = c.seed_set ? c.seed : cltopk_fresh_seed(ctx);
    sf_tiles t;
    tiles_of(ctx, rq, &c, off, n, seed, &t);
    size_t groups = t.groups;
    cl_uint n32 = (cl_uint)n, sm = (cl_uint)rq->smallest, head32 = (cl_uint)t.head;
    cl_uint nvec32 = (cl_uint)t.nvec, nt32 = (cl_uint)t.ntiles, k32 = (cl_uint)k;
    cl_uint skip32 = (cl_uint)c.skip; /* (k = 1: 0) */
    cl_ulong off64 = off, base64 = index_base;
    sf_prof prof_data, *pr = c.profile ? &prof_data : NULL;
    /* profiling needs an event a launch (cltopk_launch then makes one) */
    int each = ctx->event_each;
    ctx->event_each = pr != NULL;
    if (pr)
        pr->n = 0;
    if (best) {
        cl_mem pu, pi;
        if ((st = cltopk_scratch(ctx, SCR_CAND_U1, groups * kb, &pu)) != CLTOPK_OK ||
            (st = cltopk_scratch(ctx, SCR_CAND_I1, groups * 4, &pi)) != CLTOPK_OK)
            goto out;
        cl_uint g32 = (cl_uint)groups;
        st = cltopk_set_args(ctx, kk[K_BPART], 11, sizeof(cl_mem), &in, sizeof off64, &off64,
                             sizeof n32, &n32, sizeof sm, &sm, sizeof head32, &head32,
                             sizeof nvec32, &nvec32, sizeof nt32, &nt32, sizeof t.pa, &t.pa,
                             sizeof t.pb, &t.pb, sizeof(cl_mem), &pu, sizeof(cl_mem), &pi);
        if (st == CLTOPK_OK)
            st = cltopk_launch(ctx, kk[K_BPART], groups * c.wg, c.wg, num_wait, wait);
        prof_add(ctx, pr, "best_part");
        if (st == CLTOPK_OK)
            st = cltopk_set_args(ctx, kk[K_BFINAL], 9, sizeof g32, &g32, sizeof(cl_mem), &pu,
                                 sizeof(cl_mem), &pi, sizeof(cl_mem), &in, sizeof off64, &off64,
                                 sizeof want, &want, sizeof(cl_mem), &out_keys, sizeof(cl_mem),
                                 &out_index, sizeof base64, &base64);
        if (st == CLTOPK_OK)
            st = cltopk_launch(ctx, kk[K_BFINAL], c.fwg, c.fwg, 0, NULL);
        prof_add(ctx, pr, "best_final");
        if (st == CLTOPK_OK && pr)
            prof_print(ctx, &c, pr, n, k, NULL);
        goto out;
    }
    {
        p.seed = seed;
        cl_mem su, si, sk, ski, state;
        size_t s_alloc = ((size_t)p.s + c.wg - 1) / c.wg * c.wg;
        /* sf_reduce: each group of wg survivors cut to its best rr (k < wg),
         * into the sample buffers (free again after sf_sample) */
        cl_uint rr = (!c.noreduce && k < c.wg) ? (cl_uint)k : 0;
        size_t rgroups = (p.cap + c.wg - 1) / c.wg;
        if (rr && rgroups * rr > s_alloc)
            s_alloc = rgroups * rr;
        if (!s_alloc)
            s_alloc = 1;
        if ((st = cltopk_scratch(ctx, SCR_CAND_U0, p.cap * kb, &su)) != CLTOPK_OK ||
            (st = cltopk_scratch(ctx, SCR_CAND_I0, p.cap * 4, &si)) != CLTOPK_OK ||
            (st = cltopk_scratch(ctx, SCR_CAND_U1, s_alloc * kb, &sk)) != CLTOPK_OK ||
            (st = cltopk_scratch(ctx, SCR_CAND_I1, s_alloc * 4, &ski)) != CLTOPK_OK ||
            (st = cltopk_scratch(ctx, SCR_RS_STATE, SF_ST_WORDS * 4, &state)) != CLTOPK_OK)
            goto out;
        cl_uint r32 = p.r, cap32 = (cl_uint)p.cap;
        cl_uint force = c.force == SF_FORCE_FEW ? 2u : c.force == SF_FORCE_ALL ? 1u : 0u;
        if (use == USE_SAMPLE) {
            /* each gather group keeps its best gr samples: sf_sample reads those */
            size_t sg = ((size_t)p.s + c.wg - 1) / c.wg;
            cl_uint gr = p.r < c.wg ? p.r : c.wg, kept = (cl_uint)(sg * gr);
            st = launch_gather(ctx, kk[K_GATHER], &c, in, off, n, rq->smallest, p.s, p.unit,
                               p.seed, gr, 0, 0, sk, ski, num_wait, wait);
            prof_add(ctx, pr, "gather");
            if (st == CLTOPK_OK)
                st = cltopk_set_args(ctx, kk[K_SAMPLE], 9, sizeof(cl_mem), &in, sizeof off64,
                                     &off64, sizeof n32, &n32, sizeof sm, &sm, sizeof kept, &kept,
                                     sizeof r32, &r32, sizeof(cl_mem), &sk, sizeof(cl_mem), &ski,
                                     sizeof(cl_mem), &state);
            if (st == CLTOPK_OK)
                st = cltopk_launch(ctx, kk[K_SAMPLE], c.fwg, c.fwg, 0, NULL);
            prof_add(ctx, pr, "sample");
            if (st == CLTOPK_OK && c.check == SF_CHECK_SAMPLE)
                st = check_sample(ctx, kb, sk, ski, kept, p.r, state),
                c.sampled = st == CLTOPK_OK;
        } else {
            st = launch_init(ctx, kk[K_INIT], force, state, num_wait, wait);
            prof_add(ctx, pr, "init");
        }
        if (st == CLTOPK_OK)
            st = launch_filter(ctx, kk[K_FILTER], &c, &t, in, off, n, rq->smallest, p.cap, 0,
                               state, su, si);
        prof_add(ctx, pr, "filter");
        if (st == CLTOPK_OK && rr) {
            st = cltopk_set_args(ctx, kk[K_REDUCE], 8, sizeof(cl_mem), &su, sizeof(cl_mem), &si,
                                 sizeof(cl_mem), &state, sizeof k32, &k32, sizeof cap32, &cap32,
                                 sizeof rr, &rr, sizeof(cl_mem), &sk, sizeof(cl_mem), &ski);
            if (st == CLTOPK_OK)
                st = cltopk_launch(ctx, kk[K_REDUCE], rgroups * c.wg, c.wg, 0, NULL);
            prof_add(ctx, pr, "reduce");
        }
        if (st == CLTOPK_OK)
            st = cltopk_set_args(ctx, kk[K_FINAL], 15, sizeof(cl_mem), &in, sizeof off64, &off64,
                                 sizeof n32, &n32, sizeof sm, &sm, sizeof k32, &k32,
                                 sizeof cap32, &cap32, sizeof rr, &rr, sizeof(cl_mem),
                                 rr ? &sk : &su, sizeof(cl_mem), rr ? &ski : &si,
                                 sizeof(cl_mem), &state, sizeof want, &want, sizeof(cl_mem),
                                 &out_keys, sizeof(cl_mem), &out_index, sizeof base64, &base64,
                                 sizeof skip32, &skip32);
        if (st == CLTOPK_OK)
            st = cltopk_launch(ctx, kk[K_FINAL], final_groups(ctx, &c, k, rr ? s_alloc : p.cap) *
                                                     c.fwg,
                               c.fwg, 0, NULL);
        prof_add(ctx, pr, "final");
        if (st == CLTOPK_OK && pr)
            prof_print(ctx, &c, pr, n, k, state);
        if (st == CLTOPK_OK && c.check != SF_CHECK_NONE)
            st = check_path(ctx, &c, state);
    }
out:
    ctx->event_each = each;
    for (int i = 0; i < K_N; i++)
        if (kk[i])
            clReleaseKernel(kk[i]);
    return st;
}

/* a band over n elements for the element at position `rank` (a selection),
 * or for the best rank + 1 (topk: no upper bound): the samples of ranks up and
 * lo (0-based, best first; has_* 0: no such bound) */
typedef struct {
    unsigned s, up, lo, has_up, has_lo;
    unsigned bm; /* the bracket's stride (0: the bounds by one selection over the sample) */
    size_t cap;
} sf_band;

/* The wanted element has about l = (rank + 1/2) s / n samples before it,
 * give or take sd = sqrt(l (1 - l / s)) (fewer with strata); the band runs
 * from the sample 5 sd + 5 ranks before that to the one as far after it, so
 * that missing it is a tail beyond 5 sigma.  It holds about (lo - up) n / s
 * elements; the buffer takes a margin as sf_filter's survivors do. */
static void plan_band(const sf_cfg *c, size_t n, size_t rank, int topk, sf_band *b)
{
    memset(b, 0, sizeof *b);
    size_t bs = c->bs;
    int large = SF_BAND_LARGE_ON && c->gpu && n >= SF_BAND_LARGE_N;
    if (large && !c->bs_set)
        bs = SF_BAND_LARGE_BS;
    b->bm = c->bm_set ? c->bm : large ? SF_BAND_LARGE_BM : 0;
    size_t s = bs < n / 2 ? bs : n / 2;
    b->s = (unsigned)s;
    b->cap = n;
    if (s >= 64 && c->force == SF_FORCE_NONE) {
        double l = ((double)rank + 0.5) * (double)s / (double)n;
        double sd = sqrt(l * (1.0 - l / (double)s)), d = 5.0 * sd + 5.0;
        double up = floor(l - d), lo = ceil(l + d);
        b->has_up = up >= 0 && !topk;
        b->has_lo = lo < (double)s;
        b->up = b->has_up ? (unsigned)up : 0;
        b->lo = b->has_lo ? (unsigned)lo : 0;
        double span = (b->has_lo ? lo : (double)s) - (b->has_up ? up : -1.0);
        double cap = ceil((span + 6.0 * sqrt(span) + 16.0) * (double)n / (double)s);
        if (cap < (double)n)
            b->cap = (size_t)cap;
    } else if (c->force == SF_FORCE_NONE) {
        b->s = 0; /* too few to sample: the radix select of the input */
    }
    if (c->cap_set)
        b->cap = c->cap < n ? c->cap : n;
}

/* The bracket of a band's sample (bm = m > 0): the sample buffer is G =
 * s_alloc / wg runs of wg pairs, each sorted best first (the last padded with
 * the sentinel, worse than every sample), and the subsample the pairs at
 * positions 0, m, 2m, ... of each run (s_alloc / m of them, m a power of two
 * dividing wg).  A subsample pair x with R subsample pairs strictly better
 * has N(x) samples strictly better with m R - (m - 1) G <= N(x) <= m R: a run
 * with c >= 1 of its subsample pairs better than x has its pairs 0 ..
 * (c - 1) m better and those from c m on not (sorted), so between (c - 1) m
 * + 1 and c m of them; one with c = 0 none.  So the subsample pair P_hi of
 * rank R_hi = floor(up / m) has N(P_hi) <= up (the sample of rank up is P_hi
 * or worse; it is never the padding, as fewer than ceil(s / m) <= the real
 * subsample pairs precede it), and the one P_lo of rank R_lo = ceil((lo + 1 +
 * (m - 1) G) / m) has N(P_lo) >= lo + 1 (the sample of rank lo is strictly
 * better; none, and the bracket reaches the bottom, where R_lo is past the
 * subsample).  The samples in (P_lo, P_hi] then hold both bounds, N(P_lo) -
 * N(P_hi) <= m R_lo - (m R_hi - (m - 1) G) of them (s - that without P_lo),
 * and the bounds are their ranks up and lo less N(P_hi), the samples above
 * P_hi, counted with them. */
typedef struct {
    unsigned m, r_hi, r_lo, has_lo; /* the stride, P_hi's and P_lo's subsample ranks */
    size_t sub;                     /* the subsample's pairs */
    size_t cap;                     /* the bracket's buffer: at most this many */
} sf_bracket;

static void plan_bracket(const sf_band *b, size_t s_alloc, unsigned wg, unsigned m,
                         sf_bracket *k)
{
    size_t G = s_alloc / wg, s = b->s;
    k->m = m;
    k->sub = s_alloc / m;
    k->r_hi = b->has_up ? b->up / m : 0u;
    size_t r_lo = ((size_t)b->lo + 1 + (size_t)(m - 1) * G + m - 1) / m;
    k->has_lo = b->has_lo && r_lo < k->sub;
    k->r_lo = k->has_lo ? (unsigned)r_lo : 0u;
    /* N(P_hi) at least, N(P_lo) at most */
    size_t hi = (size_t)m * k->r_hi, slack = (size_t)(m - 1) * G;
    size_t nhi = hi > slack ? hi - slack : 0;
    size_t nlo = k->has_lo && (size_t)m * r_lo < s ? (size_t)m * r_lo : s;
    k->cap = nlo - nhi + 1;
    if (k->cap > s_alloc)
        k->cap = s_alloc;
}

/* The element at position `rank` (THE ORDER) of keys[off .. off+n) of `in`,
 * or (topk) the best rank + 1 in order: the band of the input between two
 * samples around it (top-k: everything at or above the lower one), kept by one
 * filtering read that also counts the elements above it; then the device radix
 * select (lib/rselect.c) of the band for the rank less that count, or of the
 * input when the band does not hold it or overflowed its buffer, as rs_init
 * decides on the device; a top-k's winners are then sorted (lib/winners.c).
 * Outputs as sf_device. */
static int sf_band_device(cltopk_context *ctx, const cltopk_request *rq, const sf_cfg *cfg,
                          cl_mem in, size_t off, size_t n, size_t rank, int topk,
                          cl_mem out_keys, cl_mem out_index, cl_uint want, uint64_t index_base,
                          cl_uint num_wait, const cl_event *wait)
{
    sf_cfg c = *cfg;
    if (topk && part_applies(&c, n, rank + 1) && n < 0xFFFFFFFFu) {
        /* the element at `rank` (a selection into two small buffers), then
         * the device sort keeps the pairs at or above it, stably, and sorts
         * those rank + 1 alone by their keys */
        cl_mem ek, ei;
        int st;
        if ((st = cltopk_scratch(ctx, SCR_SF_PART_K, 8, &ek)) != CLTOPK_OK ||
            (st = cltopk_scratch(ctx, SCR_SF_PART_I, 8, &ei)) != CLTOPK_OK ||
            (st = sf_band_device(ctx, rq, cfg, in, off, n, rank, 0, ek, ei, 3, 0, num_wait,
                                 wait)) != CLTOPK_OK)
            return st;
        return cltopk_devsort_input(ctx, rq, in, off, n, rank + 1, out_keys, out_index, want,
                                    index_base, ek, ei, 0, NULL);
    }
    if (!topk && c.seltop && rank < c.sortcap && c.force == SF_FORCE_NONE && !c.cap_set &&
        c.check == SF_CHECK_NONE) {
        /* the last of the top rank + 1, written alone (the band's test knobs
         * force, cap and check keep the band) */
        c.skip = rank;
        return sf_device(ctx, rq, &c, in, off, n, rank + 1, out_keys, out_index, want,
                         index_base, num_wait, wait);
    }
    sf_band b;
    plan_band(&c, n, rank, topk, &b);
    cltopk_rselect_job job = {.in = in, .off = off, .n = n, .k = rank + 1, .topk = topk,
                              .out_keys = out_keys, .out_index = out_index, .want = want,
                              .index_base = index_base};
    if (b.s == 0)
        return cltopk_rselect(ctx, rq, &job, num_wait, wait);
    /* a top-k's band reaches up to the largest key: its members keep their
     * keys (on the H200 the offsets made k = 8192 .. 2^20 2% slower, and the
     * median 1.5-2% faster) */
    if (topk)
        c.ofs = 0;
    int use = c.force == SF_FORCE_NONE ? USE_BAND : USE_BAND_INIT;
    cl_kernel kk[K_N];
    int st = get_kernels(ctx, rq, &c, use, kk);
    if (st != CLTOPK_OK)
        return st;
    size_t kb = (size_t)rq->bytes;
    uint64_t seed = c.seed_set ? c.seed : cltopk_fresh_seed(ctx);
    sf_tiles t;
    tiles_of(ctx, rq, &c, off, n, seed, &t);
    /* a band past half of the groups' segments: by default more groups, so
     * that each group's members fit its segment (measured on the H200 at the
     * median of 2^29: 8192 groups 2.5x the floor, the dense filter 4.3x) */
    int dense = c.dense;
    if (dense < 0) {
        dense = 0;
        if (b.cap > t.groups * c.lseg / 2 && !c.groups_set) {
            sf_cfg more = c;
            more.groups_set = 1;
            /* twice the groups whose segments the buffer fills, at least
             * SF_BAND_GROUPS (the H200 measured 8192 and 16384 groups alike
             * at the median; too few spill an atomic a member) */
            size_t g = 2 * b.cap / c.lseg;
            more.groups = (unsigned)(g < SF_BAND_GROUPS ? SF_BAND_GROUPS : g > 65536 ? 65536 : g);
            tiles_of(ctx, rq, &more, off, n, seed, &t);
        }
    }
    sf_prof prof_data, *pr = c.profile ? &prof_data : NULL;
    int each = ctx->event_each;
    ctx->event_each = pr != NULL;
    if (pr)
        pr->n = 0;
    cl_mem ak, ai, sk, ski, state;
    size_t s_alloc = ((size_t)b.s + c.wg - 1) / c.wg * c.wg;
    /* the bracket (a stride dividing the gather's groups, which get_kernels
     * may have narrowed) */
    sf_bracket br = {0};
    if (use == USE_BAND && b.bm) {
        unsigned m = b.bm;
        while (m > c.wg)
            m >>= 1;
        plan_bracket(&b, s_alloc, c.wg, m, &br);
        c.bcap = br.cap;
    }
    /* the band goes straight into the radix select's first candidate buffer
     * (and before it the bracket); the subsample after the samples */
    size_t sk_pairs = s_alloc + br.sub;
    if ((st = cltopk_rselect_cands(ctx, rq, n, &ak, &ai)) != CLTOPK_OK ||
        (br.m && (st = cltopk_scratch(ctx, SCR_CAND_U0, br.cap * kb, &ak)) != CLTOPK_OK) ||
        (br.m && (st = cltopk_scratch(ctx, SCR_CAND_I0, br.cap * 4, &ai)) != CLTOPK_OK) ||
        (st = cltopk_scratch(ctx, SCR_CAND_U1, (sk_pairs ? sk_pairs : 1) * kb, &sk)) !=
            CLTOPK_OK ||
        (st = cltopk_scratch(ctx, SCR_CAND_I1, (sk_pairs ? sk_pairs : 1) * 4, &ski)) !=
            CLTOPK_OK ||
        (st = cltopk_scratch(ctx, SCR_SF_STATE, SF_ST_WORDS * 4, &state)) != CLTOPK_OK)
        goto out;
    if (use == USE_BAND) {
        cl_uint kept = (cl_uint)s_alloc, up = b.up, hu = b.has_up, lo = b.lo, hl = b.has_lo;
        cl_uint mode = 0, base = 0;
        /* every sample kept (a group keeps all of its wg) */
        st = launch_gather(ctx, kk[K_GATHER], &c, in, off, n, rq->smallest, b.s, 1, seed, c.wg,
                           br.m, s_alloc, sk, ski, num_wait, wait);
        prof_add(ctx, pr, "gather");
        if (br.m) {
            /* P_hi and P_lo over the subsample, then the bracket between them */
            cl_uint sub = (cl_uint)br.sub, rh = br.r_hi, rl = br.r_lo, hb = br.has_lo;
            cl_uint m1 = 1, sbase = (cl_uint)s_alloc, bcap = (cl_uint)br.cap;
            if (st == CLTOPK_OK)
                st = cltopk_set_args(ctx, kk[K_BSAMPLE], 10, sizeof sub, &sub, sizeof rh, &rh,
                                     sizeof hu, &hu, sizeof rl, &rl, sizeof hb, &hb, sizeof m1,
                                     &m1, sizeof sbase, &sbase, sizeof(cl_mem), &sk,
                                     sizeof(cl_mem), &ski, sizeof(cl_mem), &state);
            if (st == CLTOPK_OK)
                st = cltopk_launch(ctx, kk[K_BSAMPLE], 2 * (size_t)c.fwg, c.fwg, 0, NULL);
            prof_add(ctx, pr, "subsample");
            if (st == CLTOPK_OK)
                st = cltopk_set_args(ctx, kk[K_BRACKET], 7, sizeof kept, &kept, sizeof bcap,
                                     &bcap, sizeof(cl_mem), &sk, sizeof(cl_mem), &ski,
                                     sizeof(cl_mem), &state, sizeof(cl_mem), &ak,
                                     sizeof(cl_mem), &ai);
            if (st == CLTOPK_OK)
                st = cltopk_launch(ctx, kk[K_BRACKET], s_alloc, c.wg, 0, NULL);
            prof_add(ctx, pr, "bracket");
            /* the bounds among the bracket's samples */
            kept = bcap;
            mode = 2;
        }
        cl_mem bk = br.m ? ak : sk, bki = br.m ? ai : ski;
        if (st == CLTOPK_OK)
            st = cltopk_set_args(ctx, kk[K_BSAMPLE], 10, sizeof kept, &kept, sizeof up, &up,
                                 sizeof hu, &hu, sizeof lo, &lo, sizeof hl, &hl, sizeof mode,
                                 &mode, sizeof base, &base, sizeof(cl_mem), &bk, sizeof(cl_mem),
                                 &bki, sizeof(cl_mem), &state);
        if (st == CLTOPK_OK)
            st = cltopk_launch(ctx, kk[K_BSAMPLE], 2 * (size_t)c.fwg, c.fwg, 0, NULL);
        prof_add(ctx, pr, "band");
    } else {
        st = launch_init(ctx, kk[K_INIT], c.force == SF_FORCE_FEW ? 2u : 1u, state, num_wait,
                         wait);
        prof_add(ctx, pr, "init");
    }
    if (st == CLTOPK_OK)
        st = launch_filter(ctx, kk[K_FILTER], &c, &t, in, off, n, rq->smallest, b.cap, dense,
                           state, ak, ai);
    prof_add(ctx, pr, "filter");
    job.from = state;
    job.from_cap = b.cap;
    if (st == CLTOPK_OK && !topk && b.cap <= c.small) {
        /* a small band: one group picks the rank (no radix passes) */
        cl_uint n32 = (cl_uint)n, sm = (cl_uint)rq->smallest, r32 = (cl_uint)rank;
        cl_uint cap32 = (cl_uint)b.cap;
        cl_ulong off64 = off, base64 = index_base;
        st = cltopk_set_args(ctx, kk[K_BANDFIN], 13, sizeof(cl_mem), &in, sizeof off64, &off64,
                             sizeof n32, &n32, sizeof sm, &sm, sizeof r32, &r32, sizeof cap32,
                             &cap32, sizeof(cl_mem), &ak, sizeof(cl_mem), &ai, sizeof(cl_mem),
                             &state, sizeof want, &want, sizeof(cl_mem), &out_keys,
                             sizeof(cl_mem), &out_index, sizeof base64, &base64);
        if (st == CLTOPK_OK)
            st = cltopk_launch(ctx, kk[K_BANDFIN], c.fwg, c.fwg, 0, NULL);
        prof_add(ctx, pr, "final");
    } else if (st == CLTOPK_OK) {
        st = cltopk_rselect(ctx, rq, &job, 0, NULL);
        prof_add(ctx, pr, "radix");
    }
    if (st == CLTOPK_OK && pr)
        prof_print(ctx, &c, pr, n, rank + 1, state);
    if (st == CLTOPK_OK && c.check != SF_CHECK_NONE)
        st = check_path(ctx, &c, state);
out:
    ctx->event_each = each;
    for (int i = 0; i < K_N; i++)
        if (kk[i])
            clReleaseKernel(kk[i]);
    return st;
}

/* one chunk of host data: the element at k - 1 (cltopk_chunked_select) */
static int sf_select_chunk(cltopk_context *ctx, const cltopk_request *rq, void *arg, cl_mem in,
                           size_t off, size_t n, size_t k, cl_mem out_keys, cl_mem out_index,
                           cl_uint want, uint64_t index_base, cl_uint num_wait,
                           const cl_event *wait)
{
    return sf_band_device(ctx, rq, arg, in, off, n, k - 1, 0, out_keys, out_index, want,
                          index_base, num_wait, wait);
}

/* several chunks: each chunk's best rank + 1, by the radix select (any k) */
static int sf_select_topk_chunk(cltopk_context *ctx, const cltopk_request *rq, void *arg,
                                cl_mem in, size_t off, size_t n, size_t k, cl_mem out_keys,
                                cl_mem out_index, cl_uint want, uint64_t index_base,
                                cl_uint num_wait, const cl_event *wait)
{
    (void)arg;
    cltopk_rselect_job job = {.in = in, .off = off, .n = n, .k = k, .topk = 1,
                              .out_keys = out_keys, .out_index = out_index, .want = want,
                              .index_base = index_base};
    return cltopk_rselect(ctx, rq, &job, num_wait, wait);
}

static int sf_select_host(cltopk_context *ctx, const cltopk_request *rq, size_t rank,
                          void *out_key, int64_t *out_index)
{
    sf_cfg c;
    char why[512];
    if (sf_configure(ctx, rq, &c, why, sizeof why) != 0)
        return cltopk_fail(ctx, CLTOPK_ERR_UNSUPPORTED, "%s", why);
    return cltopk_chunked_select(ctx, rq, sf_select_topk_chunk, sf_select_chunk, &c, rank,
                                 out_key, out_index);
}

static int sf_select_buffer(cltopk_context *ctx, const cltopk_request *rq, size_t rank)
{
    sf_cfg c;
    char why[512];
    if (sf_configure(ctx, rq, &c, why, sizeof why) != 0)
        return cltopk_fail(ctx, CLTOPK_ERR_UNSUPPORTED, "%s", why);
    cl_mem ok = rq->dout_keys ? rq->dout_keys : rq->dout_index;
    cl_mem oi = rq->dout_index ? rq->dout_index : rq->dout_keys;
    cl_uint want = (rq->want_keys ? 1u : 0u) | (rq->want_index ? 2u : 0u);
    return sf_band_device(ctx, rq, &c, rq->dkeys, rq->doffset, rq->n, rank, 0, ok, oi, want, 0,
                          rq->num_wait, rq->wait);
}

static int sf_run_buffer(cltopk_context *ctx, const cltopk_request *rq)
{
    sf_cfg c;
    char why[512];
    if (sf_configure(ctx, rq, &c, why, sizeof why) != 0)
        return cltopk_fail(ctx, CLTOPK_ERR_UNSUPPORTED, "%s", why);
    /* the kernels take buffers for both outputs; one not asked for is never written */
    cl_mem ok = rq->dout_keys ? rq->dout_keys : rq->dout_index;
    cl_mem oi = rq->dout_index ? rq->dout_index : rq->dout_keys;
    cl_uint want = (rq->want_keys ? 1u : 0u) | (rq->want_index ? 2u : 0u);
    return sf_device(ctx, rq, &c, rq->dkeys, rq->doffset, rq->n, rq->k, ok, oi, want, 0,
                     rq->num_wait, rq->wait);
}

/* one chunk of host data (cltopk_chunked_topk) */
static int sf_chunk(cltopk_context *ctx, const cltopk_request *rq, void *arg, cl_mem in,
                     size_t off, size_t n, size_t k, cl_mem out_keys, cl_mem out_index,
                     cl_uint want, uint64_t index_base, cl_uint num_wait, const cl_event *wait)
{
    return sf_device(ctx, rq, arg, in, off, n, k, out_keys, out_index, want, index_base,
                      num_wait, wait);
}

static int sf_run_host(cltopk_context *ctx, const cltopk_request *rq)
{
    sf_cfg c;
    char why[512];
    if (sf_configure(ctx, rq, &c, why, sizeof why) != 0)
        return cltopk_fail(ctx, CLTOPK_ERR_UNSUPPORTED, "%s", why);
    /* positions always travel with the keys (they order ties), so float keys
     * need no second run */
    return cltopk_chunked_topk(ctx, rq, sf_chunk, &c, 1, NULL);
}

static size_t sf_workspace(cltopk_context *ctx, const cltopk_request *rq)
{
    sf_cfg c;
    char why[512];
    if (sf_configure(ctx, rq, &c, why, sizeof why) != 0)
        return 0;
    size_t n = rq->n, kb = (size_t)rq->bytes, host = 0;
    if (!rq->on_device) /* one chunk or streamed piece at a time */
        n = cltopk_host_input(ctx, rq, &host);
    if (rq->k > c.sortcap) { /* the band: the radix select's buffers (with the
                                inputs of host data), and the state */
        size_t ws = cltopk_rselect_workspace(ctx, rq) + SF_ST_WORDS * 4;
        if (part_applies(&c, n, rq->k)) /* and the device sort of the whole input */
            ws += cltopk_devsort_scratch(ctx, rq->bytes * 8, n, why, sizeof why) + 16;
        return ws;
    }
    sf_call p;
    plan_call(&c, n, rq->k, 0, &p);
    size_t groups = (size_t)(ctx->caps.compute_units ? ctx->caps.compute_units : 1) * 8;
    if (c.groups_set)
        groups = c.groups;
    size_t srnd = ((size_t)p.s + c.wg - 1) / c.wg * c.wg;
    size_t side = srnd > groups ? srnd : groups;
    if (!c.noreduce && rq->k < c.wg) {
        size_t red = (p.cap + c.wg - 1) / c.wg * rq->k;
        side = red > side ? red : side;
    }
    size_t bytes = (rq->k > 1 ? p.cap : 0) * (kb + 4) + side * (kb + 4) + SF_ST_WORDS * 4;
    bytes += host; /* 0 for device data */
    return bytes;
}

/* GPUs, from the H200 (bench/RESULTS.md): the filtering read at about 1.08
 * reads, the sample and the one-group selections about 0.1 ms, the final sort
 * growing with k (0.03 ms at k = 32, 0.13 ms at 4096); k = 1 a reduction at
 * about 1.04 reads.  Other devices: the filter's compare costs about one read
 * more, the selections a local operation an element of the survivors. */
static double band_time(const cltopk_request *rq, const cltopk_consts *c);

static double sf_predict(const cltopk_context *ctx, const cltopk_request *rq,
                         const cltopk_consts *c)
{
    if (!c)
        return -1;
    double R = (double)rq->n * rq->bytes / c->bw, k = (double)rq->k;
    if (rq->k > max_sortcap(ctx, rq->bytes) && rq->k >= rq->n / SF_PART_DIV) {
        /* the partition: the k-th selected by the band, one pass over the
         * input (9 reads of its keys on the H200), the sort of the k winners */
        cltopk_request sel = *rq;
        sel.select = 1;
        return band_time(&sel, c) + 9 * R + cltopk_devsort_time(c, rq->k, rq->bytes);
    }
    if (rq->k > max_sortcap(ctx, rq->bytes)) /* the band (sf_band_device) */
        return band_time(rq, c) + cltopk_winners_time(c, rq->k, rq->bytes);
    if (rq->k == 1)
        return R * (c->gpu ? 1.04 : 1.5) + 2 * c->launch;
    if (c->gpu)
        return R * 1.08 + 5 * c->launch + 1.0e-4 + k * 3e-8;
    return R * 2 + (double)rq->n * 0.1 / c->lrate + 5 * c->launch + k * 64 / c->lrate;
}

/* the band (a selection, or a top-k above the final sort): the filtering
 * read, the band (about 10 sqrt(l) samples' worth of the input, l the wanted
 * rank's place in the sample, plus the k winners of a top-k) written once and
 * read by the radix select's first passes, the sample's selections and about
 * 30 launches; a CPU device as in sf_predict.  Too small to sample: the radix
 * select of the input (lib/rselect.c: about 3 reads on GPUs). */
static double band_time(const cltopk_request *rq, const cltopk_consts *c)
{
    double n = (double)rq->n, R = n * rq->bytes / c->bw, s = c->gpu ? 65536 : 4096;
    if (s > n / 2)
        s = floor(n / 2);
    if (s < 64)
        return R * 3 + 30 * c->launch;
    double l = ((double)rq->k - 0.5) * s / n, sd = sqrt(l * (1 - l / s));
    double m = (10 * sd + 12) / s * n + (rq->select ? 0 : (double)rq->k);
    double band = m * (rq->bytes + 4) / c->bw;
    if (c->gpu)
        return R * 1.15 + 4 * band + 30 * c->launch + 1.5e-4;
    return R * 2 + n * 0.1 / c->lrate + 4 * band + 30 * c->launch;
}

static double sf_select_predict(const cltopk_context *ctx, const cltopk_request *rq,
                                const cltopk_consts *c)
{
    if (!c)
        return -1;
    sf_cfg cfg;
    char why[512];
    if (sf_configure(ctx, rq, &cfg, why, sizeof why) == 0 && cfg.seltop &&
        rq->k <= cfg.sortcap) { /* (rq->k: the rank + 1) as the top rank + 1 */
        cltopk_request t = *rq;
        t.select = 0;
        return sf_predict(ctx, &t, c);
    }
    return band_time(rq, c);
}

const cltopk_algorithm cltopk_algo_sample_filter = {
    .id = CLTOPK_ALGO_SAMPLE_FILTER,
    .name = "sample-filter",
    .on_device = 1,
    .needs_int64 = 1,
    .max_buffer_n = 0xFFFFFFFE,
    .supports = sf_supports,
    .predict = sf_predict,
    .run_host = sf_run_host,
    .run_buffer = sf_run_buffer,
    .workspace = sf_workspace,
    .select_host = sf_select_host,
    .select_buffer = sf_select_buffer,
    .select_predict = sf_select_predict,
};

#endif
