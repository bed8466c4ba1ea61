/* index.c - the early-stopping top-k index (issue 15, seed 002): the API.
 *
 * Build (on the host, OpenMP): partitions (a seeded permutation cut into equal
 * parts, or angle-space partitions cut into equal-count slabs one angle after
 * the other), each ordered by its tuples' largest attribute (descending, ties
 * by tuple number) into blocks with their threshold tuples (the layout of
 * lib/internal.h, cltopk_ix_layout); then, on an OpenCL context, copied to the
 * device (lib/indexdev.c) and the host copy freed, unless the device cannot
 * hold it.  Queries: validated here, then run by cl/index.cl
 * (lib/indexdev.c) or by cpu/indexcpu.c.  Save and load: docs/FORMAT.md,
 * "Index files"; a loaded file is checked in full before anything is kept. */
#include "internal.h"
#include "tune.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#define IX_MAX_D 64
#define IX_MAX_M 64
#define IX_MAX_BLOCK ((size_t)1 << 20)
#define IX_MAX_N ((size_t)0xFFFFFFFEu)
#define IX_VERSION 1u
#define IX_HEADER 64

struct cltopk_index {
    cltopk_context *ctx;
    cltopk_ix_layout L;
    cltopk_partitioning part;
    uint64_t seed;
    uint32_t *pstart;
    uint64_t *psize;
    /* host arrays, NULL where the device holds the index */
    float *data;
    uint32_t *ids;
    float *thr;
    int on_device;
    /* on the device: what the host keeps to foresee a query's reading
     * (ix_foresee): the thresholds of up to 64 partitions spread over the
     * index (partition x's of blocks 0 .. fnb[x] - 2 from fthr + foff[x] d,
     * d floats each) and a sample of tuples, the first ones of each
     * partition (ns of them, d floats each) */
    float *fthr, *samp;
    size_t fnp, fnb[64], foff[64];
    size_t ns;
    float *fsc;     /* ix_foresee's scores of the sample (under the context's lock) */
    uint16_t *fbin; /* ... and their bins (ix_foresee, k above IX_FORESEE_TOPK) */
    uint32_t *sslot; /* the sample's slots in the layout (block B + slot) */
    uint32_t *fpick; /* the slots of the k tuples ix_foresee picks */
#if HAVE_OPENCL
    cltopk_ix_dev dev;
#endif
};

/* CLTOPK_INDEX (tune.h): probe, the rounds' size: 1/probe of the longest
 * partition's blocks (at least enough blocks for k tuples and one more);
 * switch (cltopk_ix_decide): 0 never switch to full evaluation, 1 by the
 * rounds' progress, 2 always after the first round (testing); ratio: the
 * cost of a full-evaluation block over an index block, for that rule; grow,
 * fan, sync and first: the device's rounds and merge (below) */
enum {
    IXP_PROBE,
    IXP_SWITCH,
    IXP_RATIO,
    IXP_RESIDENT,
    IXP_STAGE,
    IXP_PIECE,
    IXP_GROW,
    IXP_FAN,
    IXP_SYNC,
    IXP_FIRST,
    IXP_FULL,
    IXP_CANDS,
    IXP_PRE,
    IXP_DIRECT,
    IXP_FUSE,
    IXP_PIN,
    IXP_SPRE,
    IXP_N
};
static const char *const ix_full_words[] = {"old", "filter", "fallback", "query", NULL};
static const cltopk_param ix_params[] = {
    /* GPUs: a first round of 1/32, then rounds twice as long (grow), so that
     * the switch is decided after a small share of the blocks and all the
     * rounds (6 at most) are enqueued without waiting */
    [IXP_PROBE] = {.name = "probe", .gpu = 32, .cpu = 16, .min = 1, .max = 1 << 20,
                   .integer = 1},
    [IXP_SWITCH] = {.name = "switch", .gpu = 1, .cpu = 1, .min = 0, .max = 2, .integer = 1},
    /* the cost of a block of full evaluation over one of the index: on 2
     * cores about the same (0.8 keeps a margin); on GPUs, with the full
     * evaluation's filter, 0.2 (the H200, 2^26 x 8, angle partitions:
     * anti-correlated m = 4 switched and took 0.38 / 1.07 ms at k = 4 / 256
     * against 0.66 / 1.56 ms read on with 0.5; independent cells alike) */
    [IXP_RATIO] = {.name = "ratio", .gpu = 0.2, .cpu = 0.8, .min = 0.01, .max = 100},
    /* 1: an index goes to the device where it fits; 0: it stays in host
     * memory and queries copy its blocks to the device as they read them */
    [IXP_RESIDENT] = {.name = "resident", .gpu = 1, .cpu = 1, .min = 0, .max = 1, .integer = 1},
    /* blocks a copy of such an index: each of the two device buffers the
     * copies alternate between (0: an eighth of one allocation, at most 256
     * MiB) */
    [IXP_STAGE] = {.name = "stage", .gpu = 0, .cpu = 0, .min = 0, .max = 1u << 30, .integer = 1},
    /* blocks a piece of such a copy, gathered into one of the two pinned
     * buffers while the other's piece moves (0: 32 MiB, or the pinned
     * buffers' size where larger; small values: tests) */
    [IXP_PIECE] = {.name = "piece", .gpu = 0, .cpu = 0, .min = 0, .max = 1u << 30, .integer = 1},
    /* on OpenCL devices: round r reads probe * grow^r blocks (1: equal
     * rounds, as the "cpu" context always reads them) */
    [IXP_GROW] = {.name = "grow", .gpu = 2, .cpu = 1, .min = 1, .max = 16, .integer = 1},
    /* on OpenCL devices: the lists a work-group of the merge's first level
     * takes (one group then merges theirs; lists <= fan: one level) */
    [IXP_FAN] = {.name = "fan", .gpu = 16, .cpu = 16, .min = 1, .max = 1 << 20, .integer = 1},
    /* on OpenCL devices: read the phase back after every sync rounds and
     * stop enqueuing once the reading ended (0: never; every round enqueued
     * at once, those after the end doing nothing) */
    [IXP_SYNC] = {.name = "sync", .gpu = 0, .cpu = 0, .min = 0, .max = 1 << 20, .integer = 1},
    /* on OpenCL devices, with sync=0: 1 reads the phase back after the first
     * round, and where the reading ended (finished or switched) enqueues
     * none of the launches that would then do nothing (a launch costs the
     * host some 5 us on the H200, a 4-byte read about 10 us: the correlated
     * query that ends in its first round made 16 launches); where the
     * partitions' lists are few keys, index_decide merges them when every
     * partition finished, and that read brings the answer (lib/indexdev.c);
     * 0: never */
    [IXP_FIRST] = {.name = "first", .gpu = 1, .cpu = 1, .min = 0, .max = 1, .integer = 1},
    /* on OpenCL devices, the full evaluation (cltopk_index_full_topk, and the
     * blocks a switch left): query (the default: the query engine of
     * cl/query.cl reading the resident layout in place, for a plain full
     * evaluation and a query that switched after its first round; filter
     * where its answer does not stand or it cannot run: lib/indexdev.c,
     * ixd_by_query), filter (index_filter: one read keeping the tuples at or
     * above the bound, with index_full as its fallback), old (index_full
     * alone: one work-group a share of the blocks, sorting) or fallback
     * (tests: the filter's candidates always overflow) */
    [IXP_FULL] = {.name = "full", .gpu = 3, .cpu = 3, .min = 0, .max = 3, .integer = 1,
                  .words = ix_full_words},
    /* on OpenCL devices, the room for index_filter's candidates (0: chosen,
     * n / 16 within 2^16 .. 2^24; a small one forces the fallback: tests) */
    [IXP_CANDS] = {.name = "cands", .gpu = 0, .cpu = 0, .min = 0, .max = 1u << 30,
                   .integer = 1},
    /* on OpenCL devices, an index on the device with full=query and
     * switch=1: a query that ix_foresee says will read more than this share
     * of the blocks goes to the full evaluation before any round (0: never;
     * the first round and its switch rule then decide).  0.1: on the H200
     * (2^26 x 8) the index read 10.8% of correlated data (foreseen 14.7%)
     * at m = 2, k = 256 in 0.53 ms against the full evaluation's 0.32, and
     * 4.7% of anti-correlated data (foreseen 20.5%) at m = 2, k = 4 in 0.29
     * against 0.26; the queries it won foresaw at most 2.4% (correlated and
     * independent k = 4) and 24% (correlated m = 8, k = 256: 1.1x); 0.02
     * also sent independent m = 2, k = 4 (1.6x) to the full evaluation */
    [IXP_PRE] = {.name = "pre", .gpu = 0.1, .cpu = 0.1, .min = 0, .max = 1},
    /* on OpenCL devices, a query the foresee (pre above 0) does not send to
     * the full evaluation: 1 reads it in one launch from the bound the
     * foresee found (the least exact score of k tuples of its sample), all
     * the blocks that bound does not rule out, where the rounds' way reads
     * until the partitions' own k-th scores stop it (0: the rounds) */
    [IXP_DIRECT] = {.name = "direct", .gpu = 1, .cpu = 1, .min = 0, .max = 1, .integer = 1},
    /* on OpenCL devices, that launch: 1 its last work-group takes the k
     * best of the candidates where they are few (at most its local slots,
     * 512 up to k = 256 on GPUs: one sort), in place of two merge launches
     * (which then do nothing); 0: the launches always */
    [IXP_FUSE] = {.name = "fuse", .gpu = 1, .cpu = 1, .min = 0, .max = 1, .integer = 1},
    /* on OpenCL devices, the query's small host array (its state, sampled
     * tuples and answer) and its copies: 1 the array in pinned memory (a
     * mapped buffer of CL_MEM_ALLOC_HOST_PTR) and, on an in-order queue, the
     * copies ordered by the queue alone (no event each); 0 the array from
     * malloc and each copy waiting for an event of the last call (the way
     * before: for measuring and tests) */
    [IXP_PIN] = {.name = "pin", .gpu = 1, .cpu = 1, .min = 0, .max = 1, .integer = 1},
    /* on OpenCL devices, an index kept in host memory (its blocks streamed
     * to the device) with switch=1: pre's rule, for this share.  There a
     * full evaluation moves every block over the bus (53 ms at 2^26 x 8 on
     * the H200) and a round trip of the rounds costs little beside it, so
     * only a query foreseen to read most of the blocks goes to it at once:
     * anti-correlated random partitions at m = 2, k = 256 read its rounds
     * and switched in 67 ms against 54, where anti-correlated m = 2, k = 4
     * (foreseen 20% on the device, read 4.7%) stopped early in 6 ms */
    [IXP_SPRE] = {.name = "spre", .gpu = 0.5, .cpu = 0.5, .min = 0, .max = 1},
};

static const cltopk_param_table ix_table = {"CLTOPK_INDEX", ix_params, IXP_N, NULL};

/* the parameters for ctx (k 0 at build time): 0, or UNSUPPORTED (why set) */
static int ix_params_get(cltopk_context *ctx, const char *fn, size_t k, cltopk_params *p)
{
    char why[256];
    cltopk_tune_for f = {0, "", 4, 1, k};
#if HAVE_OPENCL
    if (ctx->is_cl) {
        f.gpu = (ctx->caps.type & CL_DEVICE_TYPE_GPU) != 0;
        f.device_name = ctx->caps.device_name;
    }
#endif
    if (cltopk_params_get(NULL, &ix_table, &f, p, why, sizeof why) != 0)
        return cltopk_fail(ctx, CLTOPK_ERR_UNSUPPORTED, "%s: %s", fn, why);
    return CLTOPK_OK;
}

/* ----------------------------------------------------------------- build */

static uint64_t ix_mix(uint64_t *x)
{
    return cltopk_mix64(*x += 0x9E3779B97F4A7C15ull);
}

typedef struct {
    double key;
    uint32_t id;
} ix_kv;

static int ix_kv_less(const ix_kv *a, const ix_kv *b)
{
    return a->key < b->key || (a->key == b->key && a->id < b->id);
}

/* v[lo .. hi) rearranged so that v[nth] is the element of that rank, those
 * before it smaller (keys with distinct ids: no two equal) */
static void ix_select(ix_kv *v, size_t lo, size_t hi, size_t nth)
{
    while (hi - lo > 2) {
        size_t mid = lo + (hi - lo) / 2;
        ix_kv a = v[lo], b = v[mid], c = v[hi - 1], p;
        if (ix_kv_less(&a, &b))
            p = ix_kv_less(&b, &c) ? b : ix_kv_less(&a, &c) ? c : a;
        else
            p = ix_kv_less(&a, &c) ? a : ix_kv_less(&b, &c) ? c : b;
        size_t i = lo, j = hi - 1;
        for (;;) {
            while (ix_kv_less(&v[i], &p))
                i++;
            while (ix_kv_less(&p, &v[j]))
                j--;
            if (i >= j)
                break;
            ix_kv t = v[i];
            v[i] = v[j];
            v[j] = t;
            i++;
            j--;
        }
        /* [lo, j] <= p <= [j + 1, hi); both sides non-empty (p is neither the
         * least nor the largest of three distinct elements) */
        if (nth <= j)
            hi = j + 1;
        else
            lo = j + 1;
    }
    if (hi - lo == 2 && ix_kv_less(&v[lo + 1], &v[lo])) {
        ix_kv t = v[lo];
        v[lo] = v[lo + 1];
        v[lo + 1] = t;
    }
}

/* cut v[lo .. hi) into `parts` runs of equal count (by key), bounds into
 * cuts[0 .. parts] */
static void ix_cut(ix_kv *v, size_t lo, size_t hi, size_t parts, size_t *cuts)
{
    cuts[0] = lo;
    cuts[parts] = hi;
    if (parts == 1)
        return;
    size_t half = parts / 2, at = lo + (size_t)((double)(hi - lo) * half / parts);
    if (at > lo && at < hi)
        ix_select(v, lo, hi, at);
    ix_cut(v, lo, at, half, cuts);
    ix_cut(v, at, hi, parts - half, cuts + half);
}

/* the splits of each of the d - 1 angles: as even as possible, product at
 * most P */
static size_t ix_angle_splits(size_t d, size_t P, size_t *s)
{
    size_t prod = 1;
    for (size_t j = 0; j + 1 < d; j++)
        s[j] = 1;
    for (int grew = 1; grew;) {
        grew = 0;
        for (size_t j = 0; j + 1 < d; j++)
            if (prod / s[j] * (s[j] + 1) <= P) {
                prod = prod / s[j] * (s[j] + 1);
                s[j]++;
                grew = 1;
            }
    }
    return prod;
}

/* order: the tuple numbers by partition; bounds[0 .. P] (P = *np) the
 * partitions' ranges of it */
static int ix_partition(const float *const *attrs, size_t d, size_t n, cltopk_partitioning how,
                        size_t want, uint64_t seed, uint32_t *order, size_t **bounds_out,
                        size_t *np)
{
    size_t s[IX_MAX_D], P = how == CLTOPK_PARTITION_ANGLE ? ix_angle_splits(d, want, s) : want;
    size_t *bounds = malloc((P + 1) * sizeof *bounds);
    if (!bounds)
        return CLTOPK_ERR_NO_MEMORY;
    if (how == CLTOPK_PARTITION_RANDOM) {
        for (size_t i = 0; i < n; i++)
            order[i] = (uint32_t)i;
        uint64_t x = seed;
        for (size_t i = n - 1; i > 0; i--) {
            size_t j = (size_t)(((unsigned __int128)ix_mix(&x) * (i + 1)) >> 64);
            uint32_t t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        for (size_t i = 0; i <= P; i++)
            bounds[i] = (size_t)((double)n * i / P);
        *bounds_out = bounds;
        *np = P;
        return CLTOPK_OK;
    }
    /* the reference point beyond the best corner: each attribute's maximum
     * plus a tenth of its range */
    double ref[IX_MAX_D];
    for (size_t a = 0; a < d; a++) {
        float lo = attrs[a][0], hi = attrs[a][0];
        for (size_t t = 1; t < n; t++) {
            lo = attrs[a][t] < lo ? attrs[a][t] : lo;
            hi = attrs[a][t] > hi ? attrs[a][t] : hi;
        }
        ref[a] = (double)hi + 0.1 * ((double)hi - (double)lo);
    }
    ix_kv *v = malloc(n * sizeof *v);
    size_t *cuts = malloc((P + 1) * sizeof *cuts), *next = malloc((P + 1) * sizeof *next);
    if (!v || !cuts || !next) {
        free(v);
        free(cuts);
        free(next);
        free(bounds);
        return CLTOPK_ERR_NO_MEMORY;
    }
    for (size_t i = 0; i < n; i++)
        v[i].id = (uint32_t)i;
    size_t groups = 1;
    bounds[0] = 0;
    bounds[1] = n;
    for (size_t j = 0; j + 1 < d; j++) {
        if (s[j] == 1)
            continue;
        /* phi_j = atan2(sqrt(sum over l > j of r_l^2), r_j), r = ref - a */
#pragma omp parallel for schedule(static)
        for (size_t i = 0; i < n; i++) {
            const size_t t = v[i].id;
            double tail = 0;
            for (size_t l = j + 1; l < d; l++) {
                double r = ref[l] - attrs[l][t];
                tail += r * r;
            }
            v[i].key = atan2(sqrt(tail), ref[j] - attrs[j][t]);
        }
        size_t ng = 0;
#pragma omp parallel for schedule(dynamic, 1)
        for (size_t g = 0; g < groups; g++)
            ix_cut(v, bounds[g], bounds[g + 1], s[j], cuts + g * s[j]);
        for (size_t g = 0; g < groups; g++)
            for (size_t x = 0; x < s[j]; x++)
                next[ng++] = cuts[g * s[j] + x];
        next[ng] = n;
        groups = ng;
        memcpy(bounds, next, (groups + 1) * sizeof *bounds);
    }
    for (size_t i = 0; i < n; i++)
        order[i] = v[i].id;
    free(v);
    free(cuts);
    free(next);
    *bounds_out = bounds;
    *np = groups;
    return CLTOPK_OK;
}

/* malloc of count elements (at least one) */
static void *ix_alloc(size_t count, size_t size)
{
    return malloc((count ? count : 1) * size);
}

typedef struct {
    float key;
    uint32_t id;
} ix_fk;

/* largest attribute first, then smaller tuple number */
static int ix_fk_cmp(const void *pa, const void *pb)
{
    const ix_fk *a = pa, *b = pb;
    if (a->key != b->key)
        return a->key > b->key ? -1 : 1;
    return a->id < b->id ? -1 : a->id > b->id;
}

/* the layout arrays of idx from the order and bounds */
static int ix_fill(cltopk_index *idx, const float *const *attrs, uint32_t *order,
                   const size_t *bounds)
{
    cltopk_ix_layout *L = &idx->L;
    const size_t d = L->d, B = L->B, P = L->P;
    idx->pstart = malloc((P + 1) * sizeof *idx->pstart);
    idx->psize = malloc(P * sizeof *idx->psize);
    if (!idx->pstart || !idx->psize)
        return CLTOPK_ERR_NO_MEMORY;
    size_t nb = 0;
    for (size_t i = 0; i < P; i++) {
        idx->pstart[i] = (uint32_t)nb;
        idx->psize[i] = bounds[i + 1] - bounds[i];
        nb += (bounds[i + 1] - bounds[i] + B - 1) / B;
        if (nb > 0xFFFFFFFFu)
            return CLTOPK_ERR_INVALID_ARGUMENT;
    }
    idx->pstart[P] = (uint32_t)nb;
    L->nblocks = nb;
    idx->data = ix_alloc(nb * d * B, sizeof *idx->data);
    idx->ids = ix_alloc(nb * B, sizeof *idx->ids);
    idx->thr = ix_alloc(nb * d, sizeof *idx->thr);
    if (!idx->data || !idx->ids || !idx->thr)
        return CLTOPK_ERR_NO_MEMORY;
    int st = CLTOPK_OK;
#pragma omp parallel for schedule(dynamic, 1)
    for (size_t i = 0; i < P; i++) {
        const size_t cnt = bounds[i + 1] - bounds[i];
        ix_fk *fk = malloc((cnt ? cnt : 1) * sizeof *fk);
        if (!fk) {
#pragma omp atomic write
            st = CLTOPK_ERR_NO_MEMORY;
            continue;
        }
        for (size_t x = 0; x < cnt; x++) {
            const uint32_t t = order[bounds[i] + x];
            float mx = attrs[0][t];
            for (size_t a = 1; a < d; a++)
                mx = attrs[a][t] > mx ? attrs[a][t] : mx;
            fk[x].key = mx;
            fk[x].id = t;
        }
        qsort(fk, cnt, sizeof *fk, ix_fk_cmp);
        const size_t g0 = idx->pstart[i], g1 = idx->pstart[i + 1];
        for (size_t g = g0; g < g1; g++)
            for (size_t sl = 0; sl < B; sl++) {
                const size_t x = (g - g0) * B + sl;
                idx->ids[g * B + sl] = x < cnt ? fk[x].id : IX_PAD;
                for (size_t a = 0; a < d; a++)
                    idx->data[(g * d + a) * B + sl] = x < cnt ? attrs[a][fk[x].id] : 0.0f;
            }
        free(fk);
        /* thresholds: the suffix maxima of the later blocks */
        float run[IX_MAX_D];
        for (size_t a = 0; a < d; a++)
            run[a] = -INFINITY;
        for (size_t g = g1; g-- > g0;) {
            for (size_t a = 0; a < d; a++) {
                idx->thr[g * d + a] = run[a];
                const float *col = idx->data + (g * d + a) * B;
                for (size_t sl = 0; sl < B && idx->ids[g * B + sl] != IX_PAD; sl++)
                    run[a] = col[sl] > run[a] ? col[sl] : run[a];
            }
        }
    }
    return st;
}

static void ix_layout_set(cltopk_index *idx)
{
    idx->L.pstart = idx->pstart;
    idx->L.psize = idx->psize;
    idx->L.data = idx->data;
    idx->L.ids = idx->ids;
    idx->L.thr = idx->thr;
}

static void ix_host_free(cltopk_index *idx)
{
    free(idx->data);
    free(idx->ids);
    free(idx->thr);
    idx->data = NULL;
    idx->ids = NULL;
    idx->thr = NULL;
    ix_layout_set(idx);
}

static void ix_destroy(cltopk_index *idx)
{
    if (!idx)
        return;
#if HAVE_OPENCL
    cltopk_index_dev_release(&idx->dev);
#endif
    ix_host_free(idx);
    free(idx->pstart);
    free(idx->psize);
    free(idx->fthr);
    free(idx->samp);
    free(idx->fsc);
    free(idx->fbin);
    free(idx->sslot);
    free(idx->fpick);
    free(idx);
}

#if HAVE_OPENCL /* the foresee serves the device's queries only */
/* the sample ix_foresee scores: the first tuples of each partition (those
 * with the largest attributes: a query's best are among them on
 * correlated data), IX_SAMPLE in all where the partitions hold them;
 * distinct tuples, so that the k-th best of their scores is at most the
 * k-th best of all */
#define IX_SAMPLE 2048
#define IX_FORESEE_TOPK 64  /* k up to this: the k-th by a sorted list */
#define IX_FORESEE_BINS 2048 /* above: a histogram of the scores' values */
#define IX_FORESEE_PARTS 64 /* partitions whose reading it counts (fnb's size) */
static int ix_sample(cltopk_index *idx)
{
    const cltopk_ix_layout *L = &idx->L;
    const size_t d = L->d, B = L->B, P = L->P;
    size_t each = P ? (IX_SAMPLE + P - 1) / P : 0;
    each = each > B ? B : each;
    size_t ns = 0;
    for (size_t i = 0; i < P; i++)
        ns += L->psize[i] < each ? (size_t)L->psize[i] : each;
    idx->samp = malloc((ns ? ns : 1) * d * sizeof *idx->samp);
    idx->fsc = malloc((ns ? ns : 1) * sizeof *idx->fsc);
    idx->fbin = malloc((ns ? ns : 1) * sizeof *idx->fbin);
    idx->sslot = malloc((ns ? ns : 1) * sizeof *idx->sslot);
    idx->fpick = malloc((ns ? ns : 1) * sizeof *idx->fpick);
    if (!idx->samp || !idx->fsc || !idx->fbin || !idx->sslot || !idx->fpick)
        return CLTOPK_ERR_NO_MEMORY;
    /* column-major: attribute a of sample t at samp[a * ns + t] */
    for (size_t i = 0, t = 0; i < P; i++) {
        const size_t g = L->pstart[i];
        const size_t c = L->psize[i] < each ? (size_t)L->psize[i] : each;
        for (size_t sl = 0; sl < c; sl++, t++) {
            for (size_t a = 0; a < d; a++)
                idx->samp[a * ns + t] = L->data[(g * d + a) * B + sl];
            idx->sslot[t] = (uint32_t)(g * B + sl); /* the device's slots fit 32 bits */
        }
    }
    idx->ns = ns;
    /* the thresholds of IX_FORESEE_PARTS partitions spread over the index,
     * side by side (a few hundred KiB where all of them are 8 MiB at 2^26 x
     * 8: the foresee's searches stay in the caches) */
    const size_t step = P > IX_FORESEE_PARTS ? P / IX_FORESEE_PARTS : 1;
    size_t tot = 0, first[IX_FORESEE_PARTS];
    idx->fnp = 0;
    for (size_t i = 0; i < P && idx->fnp < IX_FORESEE_PARTS; i += step) {
        const size_t nb = L->pstart[i + 1] - L->pstart[i];
        if (!nb)
            continue;
        first[idx->fnp] = L->pstart[i];
        idx->fnb[idx->fnp] = nb;
        idx->foff[idx->fnp] = tot;
        tot += nb - 1;
        idx->fnp++;
    }
    idx->fthr = malloc((tot ? tot : 1) * d * sizeof *idx->fthr);
    if (!idx->fthr)
        return CLTOPK_ERR_NO_MEMORY;
    for (size_t x = 0; x < idx->fnp; x++)
        memcpy(idx->fthr + idx->foff[x] * d, L->thr + first[x] * d,
               (idx->fnb[x] - 1) * d * sizeof *idx->fthr);
    return CLTOPK_OK;
}

/* ix_foresee's score: the weighted sum in plain float arithmetic, not the
 * fma rule (an estimate: fmaf is a library call of some 3 ns on a host
 * without FMA instructions, which made the foresee of m = 8 cost 90 us) */
static float ix_rough_score(const float *tuple, const unsigned *attr, const float *w, size_t m)
{
    float acc = 0.0f;
    for (size_t j = 0; j < m; j++)
        acc += w[j] * tuple[attr[j]];
    return acc;
}
#endif

/* put the built (or loaded) index where it lives: the device of an OpenCL
 * context where it fits and the device scores as the CPU (the host copy then
 * freed), else the host */
static int ix_place(cltopk_context *ctx, cltopk_index *idx, const char *fn)
{
    ix_layout_set(idx);
    cltopk_params p;
    int st0 = ix_params_get(ctx, fn, 0, &p);
    if (st0 != CLTOPK_OK)
        return st0;
#if HAVE_OPENCL
    char why[256];
    if (ctx->is_cl && p.v[IXP_RESIDENT] != 0 && cltopk_fp_exact(ctx, 0, why, sizeof why)) {
        int st = cltopk_index_dev_upload(ctx, &idx->L, &idx->dev);
        if (st == CLTOPK_OK && ix_sample(idx) != CLTOPK_OK) {
            cltopk_index_dev_release(&idx->dev);
            return cltopk_fail(ctx, CLTOPK_ERR_NO_MEMORY, "%s: out of host memory", fn);
        }
        if (st == CLTOPK_OK) {
            idx->on_device = 1;
            ix_host_free(idx);
            return CLTOPK_OK;
        }
        if (st != CLTOPK_ERR_DEVICE_MEMORY)
            return st;
        ctx->err[0] = 0; /* it stays in host memory: not an error */
    }
    /* in host memory, its queries streamed to the device: the foresee's
     * sample too (spre) */
    if (ctx->is_cl && ix_sample(idx) != CLTOPK_OK)
        return cltopk_fail(ctx, CLTOPK_ERR_NO_MEMORY, "%s: out of host memory", fn);
#endif
    return CLTOPK_OK;
}

/* the end of a build or load: place the index (st OK) and hand it out, or
 * free it; the context's lock is given back */
static int ix_finish(cltopk_context *ctx, const char *fn, cltopk_index *idx, int st,
                     cltopk_index **out)
{
    if (st == CLTOPK_OK)
        st = ix_place(ctx, idx, fn);
    if (st == CLTOPK_OK)
        *out = idx;
    else
        ix_destroy(idx);
    pthread_mutex_unlock(&ctx->lock);
    return st;
}

int cltopk_index_build(cltopk_context *ctx, const float *const *attrs, size_t d, size_t n,
                       const cltopk_index_options *opt, cltopk_index **out)
{
    const char *fn = "cltopk_index_build";
    if (out)
        *out = NULL;
    if (!ctx)
        return cltopk_fail(NULL, CLTOPK_ERR_INVALID_ARGUMENT, "%s: ctx is NULL", fn);
    cltopk_enter(ctx);
    int st = CLTOPK_OK;
    cltopk_index_options o = {CLTOPK_PARTITION_RANDOM, 0, 0, 0};
    if (opt)
        o = *opt;
    if (!out || !attrs)
        st = cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn,
                         !out ? "out" : "attrs");
    else if (d < 1 || d > IX_MAX_D)
        st = cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT, "%s: d = %zu (1 to %d attributes)",
                         fn, d, IX_MAX_D);
    else if (n < 1 || n > IX_MAX_N)
        st = cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT,
                         "%s: n = %zu (1 to 2^32 - 2 tuples)", fn, n);
    else if (o.partitioning != CLTOPK_PARTITION_RANDOM &&
             o.partitioning != CLTOPK_PARTITION_ANGLE)
        st = cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT, "%s: unknown partitioning %d", fn,
                         (int)o.partitioning);
    else if (o.block > IX_MAX_BLOCK)
        st = cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT,
                         "%s: block = %zu (1 to 2^20 tuples, or 0: chosen)", fn, o.block);
    for (size_t a = 0; st == CLTOPK_OK && a < d; a++)
        if (!attrs[a])
            st = cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT, "%s: attrs[%zu] is NULL", fn, a);
    for (size_t a = 0; st == CLTOPK_OK && a < d; a++) {
        size_t bad = SIZE_MAX;
#pragma omp parallel for reduction(min : bad) schedule(static)
        for (size_t t = 0; t < n; t++)
            if (!isfinite(attrs[a][t]) && t < bad)
                bad = t;
        if (bad != SIZE_MAX)
            st = cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT,
                             "%s: attribute %zu of tuple %zu is %s (attributes must be finite)",
                             fn, a, bad, isnan(attrs[a][bad]) ? "NaN" : "infinite");
    }
    if (st != CLTOPK_OK) {
        pthread_mutex_unlock(&ctx->lock);
        return st;
    }
    /* partitions: as asked (at most n), else on an OpenCL GPU one a 2^16
     * tuples and two a compute unit at least (a work-group reads a
     * partition), elsewhere one a 2^18 (the shared bound stops partitions
     * sooner when there are fewer: on the CPU, 2^24 tuples x 8 read 4.9% with
     * 64 angle partitions and 82% with 256 at k = 256, m = 8); 16 to 2048,
     * with 64 tuples each at least */
    size_t P = o.partitions;
    if (!P) {
        int gpu = 0;
#if HAVE_OPENCL
        gpu = ctx->is_cl && (ctx->caps.type & CL_DEVICE_TYPE_GPU);
        P = gpu ? n >> 16 : n >> 18;
        if (gpu && P < 2 * (size_t)ctx->caps.compute_units)
            P = 2 * (size_t)ctx->caps.compute_units;
#else
        P = n >> 18;
#endif
        (void)gpu;
        P = P < 16 ? 16 : P > 2048 ? 2048 : P;
        while (P > 1 && P * 64 > n)
            P /= 2;
    }
    P = P > n ? n : P;
    cltopk_index *idx = calloc(1, sizeof *idx);
    uint32_t *order = malloc(n * sizeof *order);
    size_t *bounds = NULL;
    if (!idx || !order)
        st = CLTOPK_ERR_NO_MEMORY;
    if (st == CLTOPK_OK)
        st = ix_partition(attrs, d, n, o.partitioning, P, o.seed, order, &bounds, &P);
    if (st == CLTOPK_OK) {
        size_t B = o.block;
        if (!B) {
            const size_t per = (n + P - 1) / P;
            for (B = 256; B > 16 && B * 4 > per; B /= 2)
                ;
        }
        idx->ctx = ctx;
        idx->part = o.partitioning;
        idx->seed = o.seed;
        idx->L.n = n;
        idx->L.d = d;
        idx->L.B = B;
        idx->L.P = P;
        st = ix_fill(idx, attrs, order, bounds);
    }
    free(order);
    free(bounds);
    if (st == CLTOPK_ERR_NO_MEMORY)
        st = cltopk_fail(ctx, st, "%s: out of host memory for an index of %zu x %zu", fn, n, d);
    else if (st != CLTOPK_OK)
        st = cltopk_fail(ctx, st, "%s: more than 2^32 - 1 blocks (block = %zu)", fn, o.block);
    return ix_finish(ctx, fn, idx, st, out);
}

void cltopk_index_free(cltopk_index *idx)
{
    if (!idx)
        return;
    cltopk_context *ctx = idx->ctx;
    pthread_mutex_lock(&ctx->lock);
    ix_destroy(idx);
    pthread_mutex_unlock(&ctx->lock);
}

int cltopk_index_info_get(const cltopk_index *idx, cltopk_index_info *info)
{
    if (!idx)
        return cltopk_fail(NULL, CLTOPK_ERR_INVALID_ARGUMENT, "cltopk_index_info_get: idx is NULL");
    if (!info) {
        cltopk_enter(idx->ctx);
        int st = cltopk_fail(idx->ctx, CLTOPK_ERR_INVALID_ARGUMENT,
                             "cltopk_index_info_get: info is NULL");
        pthread_mutex_unlock(&idx->ctx->lock);
        return st;
    }
    const cltopk_ix_layout *L = &idx->L;
    memset(info, 0, sizeof *info);
    info->n = L->n;
    info->d = L->d;
    info->partitions = L->P;
    info->block = L->B;
    info->blocks = L->nblocks;
    info->partitioning = idx->part;
    info->seed = idx->seed;
    info->on_device = idx->on_device;
    info->bytes = (uint64_t)L->nblocks * L->B * (L->d + 1) * 4 + (uint64_t)L->nblocks * L->d * 4 +
                  (uint64_t)(L->P + 1) * 4;
    return CLTOPK_OK;
}

/* ----------------------------------------------------------------- query */

#if HAVE_OPENCL /* the foresee serves the device's queries only */
/* How a query of an index on the device should go before any round: 1 to
 * the full evaluation where by this estimate it would read more than a
 * share pre of the blocks; else, with direct (CLTOPK_INDEX=direct), 2 and
 * in *picked the layout's slots of k sampled tuples (those best by the
 * rough scores, or for k above IX_FORESEE_TOPK within a bin of them),
 * whose least exact score, found by the device, bounds the
 * query: one launch reads the blocks that bound does not rule out
 * (lib/indexdev.c, index_direct; any k distinct tuples give a true bound,
 * the best give a close one); else 0: the rounds.  The estimate comes from
 * what the host keeps (some microseconds, no device work).  A partition's
 * reading goes on to block j while the threshold score of block j - 1 (the
 * bound of blocks j ..) is at least
 * the query's bound, which never exceeds the true k-th best score; so every
 * exact stop reads at least the blocks whose preceding threshold scores at
 * least that k-th.  The sample's k-th best score s is at most the true k-th
 * (the sample's tuples are distinct tuples), so counting the blocks with a
 * threshold score at least s errs toward reading more: a rough estimate,
 * good where the sample holds the query's best (correlated data), and
 * large where the data will not let the query stop (anti-correlated).  The
 * count: a binary search a partition (the scores never rise along one, the
 * weights being >= 0) on up to 64 partitions spread over the index.
 * Correctness never depends on it: either way the answer is the full
 * evaluation's.  0 where k is above the sample, a score is not finite, or
 * m = 0. */
static int ix_foresee(cltopk_index *idx, const unsigned *attr, const float *w, size_t m,
                      size_t k, double pre, int direct, const uint32_t **picked)
{
    const cltopk_ix_layout *L = &idx->L;
    const size_t d = L->d, ns = idx->ns;
    *picked = NULL;
    if (pre <= 0 || !idx->samp || !idx->fthr || m == 0 || k == 0 || k > ns)
        return 0;
    const int prof = idx->ctx->prof; /* CLTOPK_PROFILE=1: the steps' times */
    const double t0 = prof ? cltopk_now() : 0;
    /* the sample's scores, a column at a time, in plain float arithmetic,
     * into the index's buffer, with their least and greatest and whether
     * one is not finite (restrict and omp simd: vectorised; gcc's -O2 left
     * these loops scalar, some 5 us at m = 8 on a warm core) */
    float *restrict sc = idx->fsc;
    for (size_t t = 0; t < ns; t++)
        sc[t] = 0.0f;
    for (size_t j = 0; j < m; j++) {
        const float wj = w[j];
        const float *restrict col = idx->samp + (size_t)attr[j] * ns;
#pragma omp simd
        for (size_t t = 0; t < ns; t++)
            sc[t] += wj * col[t];
    }
    float slo = sc[0], shi = sc[0];
    int bad = 0;
#pragma omp simd reduction(min : slo) reduction(max : shi) reduction(| : bad)
    for (size_t t = 0; t < ns; t++) {
        const float v = sc[t];
        slo = v < slo ? v : slo;
        shi = v > shi ? v : shi;
        bad |= !(fabsf(v) <= FLT_MAX); /* NaN too */
    }
    if (bad)
        return 0;
    /* their k-th best s, and k sampled tuples whose least score is s: for
     * small k a sorted list that few scores enter (some 3 us with the caches
     * cold), its tuples; else a histogram of IX_FORESEE_BINS bins evenly over
     * [slo, shi] (in double: the range may pass FLT_MAX), the tuples of the
     * bins above the one where the k-th falls (fewer than k) and the first
     * of that bin's, s the least of their scores: at most the sample's k-th
     * (k distinct tuples) and less by at most a bin's width.  (The
     * quickselect of the scores' order keys it replaces took 10-20 us on a
     * warm core, 17-21 cold: branches on random data; the histogram 2-4) */
    float s;
    size_t topt[IX_FORESEE_TOPK];
    uint32_t *pk = idx->fpick;
    if (k <= IX_FORESEE_TOPK) {
        float top[IX_FORESEE_TOPK];
        size_t have = 0;
        for (size_t t = 0; t < ns; t++) {
            const float v = sc[t];
            if (have == k && !(v > top[k - 1]))
                continue;
            size_t at = have < k ? have++ : k - 1;
            while (at > 0 && top[at - 1] < v) {
                top[at] = top[at - 1];
                topt[at] = topt[at - 1];
                at--;
            }
            top[at] = v;
            topt[at] = t;
        }
        s = top[k - 1];
    } else {
        uint32_t hist[IX_FORESEE_BINS];
        memset(hist, 0, sizeof hist);
        /* bins 0 .. IX_FORESEE_BINS - 1: (v - slo) scale is at most
         * IX_FORESEE_BINS - 0.5 (rounded, still below IX_FORESEE_BINS) */
        const double scale =
            shi > slo ? (IX_FORESEE_BINS - 0.5) / ((double)shi - (double)slo) : 0.0;
        uint16_t *restrict bin = idx->fbin;
#pragma omp simd
        for (size_t t = 0; t < ns; t++)
            bin[t] = (uint16_t)(((double)sc[t] - (double)slo) * scale);
        for (size_t t = 0; t < ns; t++)
            hist[bin[t]]++;
        size_t bsel = IX_FORESEE_BINS, cum = 0;
        while (cum < k) /* k <= ns: it ends */
            cum += hist[--bsel];
        const size_t above = cum - hist[bsel];
        size_t na = 0, ne = 0;
        s = shi;
        for (size_t t = 0; t < ns; t++) {
            const size_t b = bin[t];
            if (b > bsel)
                pk[na++] = idx->sslot[t];
            else if (b == bsel && ne < k - above)
                pk[above + ne++] = idx->sslot[t];
            else
                continue;
            s = sc[t] < s ? sc[t] : s;
        }
    }
    /* the blocks each of up to IX_FORESEE_PARTS partitions spread over the
     * index reads: the first j in 1 .. nb - 1 whose bound (block j - 1's
     * threshold score) is below s, else nb (blocks 0 .. j - 1 read), by
     * binary searches run side by side, a step of each in turn, so that
     * their loads from the thresholds (cold: a cache miss each) overlap */
    const double t1 = prof ? cltopk_now() : 0;
    size_t lo[IX_FORESEE_PARTS], hi[IX_FORESEE_PARTS];
    const size_t np = idx->fnp;
    double all = 0;
    for (size_t x = 0; x < np; x++) {
        lo[x] = 1;
        hi[x] = idx->fnb[x];
        all += (double)idx->fnb[x];
    }
    for (int busy = 1; busy;) {
        busy = 0;
        for (size_t x = 0; x < np; x++) {
            if (lo[x] >= hi[x])
                continue;
            const size_t mid = lo[x] + (hi[x] - lo[x]) / 2;
            const float t = ix_rough_score(idx->fthr + (idx->foff[x] + mid - 1) * d, attr, w, m);
            if (t < s)
                hi[x] = mid;
            else
                lo[x] = mid + 1;
            busy |= lo[x] < hi[x];
        }
    }
    double need = 0, most = 0;
    for (size_t x = 0; x < np; x++) {
        need += (double)lo[x];
        most = (double)lo[x] > most ? (double)lo[x] : most;
    }
    const int full = all > 0 && need > pre * all;
    if (prof)
        fprintf(stderr, "profile: index foresee: the sample's k-th score %.9g, %.4f of the "
                "blocks, at most %.0f of a partition (pre %.3g): %s; the sample's scores "
                "and k-th %.1f us, the searches %.1f us\n", (double)s,
                all > 0 ? need / all : 0.0, most, pre,
                full ? "full evaluation" : direct ? "one launch" : "rounds", (t1 - t0) * 1e6,
                (cltopk_now() - t1) * 1e6);
    if (full || !direct)
        return full;
    /* the k tuples: those of the sorted list (the histogram's are in pk) */
    if (k <= IX_FORESEE_TOPK)
        for (size_t r = 0; r < k; r++)
            pk[r] = idx->sslot[topt[r]];
    *picked = pk;
    return 2;
}
#endif

static int ix_query(cltopk_index *idx, const char *fn, int full, const unsigned *attr,
                    const float *w, size_t m, size_t k, float *out_scores, int64_t *out_index,
                    cltopk_index_stats *stats)
{
    if (!idx)
        return cltopk_fail(NULL, CLTOPK_ERR_INVALID_ARGUMENT, "%s: idx is NULL", fn);
    cltopk_context *ctx = idx->ctx;
    cltopk_enter(ctx);
    const cltopk_ix_layout *L = &idx->L;
    int st = CLTOPK_OK;
    if (m > IX_MAX_M)
        st = cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT, "%s: m = %zu (at most %d)", fn, m,
                         IX_MAX_M);
    else if (m && (!attr || !w))
        st = cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT, "%s: %s is NULL with m = %zu", fn,
                         !attr ? "attr" : "w", m);
    else if (k && !out_scores && !out_index)
        st = cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT,
                         "%s: out_scores and out_index are both NULL", fn);
    for (size_t j = 0; st == CLTOPK_OK && j < m; j++) {
        if (attr[j] >= L->d)
            st = cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT,
                             "%s: attr[%zu] = %u, but the index has %zu attributes", fn, j,
                             attr[j], L->d);
        else if (!isfinite(w[j]) || w[j] < 0)
            st = cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT,
                             "%s: w[%zu] = %g (weights must be finite and >= 0)", fn, j,
                             (double)w[j]);
    }
    if (st == CLTOPK_OK && k > L->n)
        st = cltopk_fail(ctx, CLTOPK_ERR_K_RANGE, "%s: k = %zu is larger than n = %zu", fn, k,
                         L->n);
    if (st != CLTOPK_OK || k == 0) {
        pthread_mutex_unlock(&ctx->lock);
        return st;
    }
    cltopk_params p;
    if ((st = ix_params_get(ctx, fn, k, &p)) != CLTOPK_OK) {
        pthread_mutex_unlock(&ctx->lock);
        return st;
    }
    /* -0.0 weights as +0.0: the same products up to the sign of a zero, which
     * the sum from +0.0 absorbs (a zero plus +0.0 is +0.0 or the sum itself) */
    float wv[IX_MAX_M];
    for (size_t j = 0; j < m; j++)
        wv[j] = w[j] == 0 ? 0.0f : w[j];
    size_t maxnb = 0;
    for (size_t i = 0; i < L->P; i++)
        if (idx->pstart[i + 1] - idx->pstart[i] > maxnb)
            maxnb = idx->pstart[i + 1] - idx->pstart[i];
    size_t probe = (maxnb + (size_t)p.v[IXP_PROBE] - 1) / (size_t)p.v[IXP_PROBE];
    if (probe < (k + L->B - 1) / L->B + 1)
        probe = (k + L->B - 1) / L->B + 1;
    cltopk_index_stats local;
    cltopk_ix_query q = {.attr = attr,
                         .w = wv,
                         .m = m,
                         .k = k,
                         .full = full,
                         .probe = probe,
                         .grow = (unsigned)p.v[IXP_GROW],
                         .fan = (size_t)p.v[IXP_FAN],
                         .sync = (size_t)p.v[IXP_SYNC],
                         .first = (int)p.v[IXP_FIRST],
                         .sw = (int)p.v[IXP_SWITCH],
                         .ratio = p.v[IXP_RATIO],
                         .stage = (size_t)p.v[IXP_STAGE],
                         .piece = (size_t)p.v[IXP_PIECE],
                         .filter = (int)p.v[IXP_FULL],
                         .cands = (size_t)p.v[IXP_CANDS],
                         .fuse = (int)p.v[IXP_FUSE],
                         .pin = (int)p.v[IXP_PIN],
                         .st = &local};
    /* the outputs of a failing run stay untouched: results go to a copy */
    float *ts = malloc(k * sizeof *ts);
    int64_t *ti = malloc(k * sizeof *ti);
    if (!ts || !ti) {
        free(ts);
        free(ti);
        st = cltopk_fail(ctx, CLTOPK_ERR_NO_MEMORY, "%s: out of host memory (k = %zu)", fn, k);
        pthread_mutex_unlock(&ctx->lock);
        return st;
    }
    q.out_scores = ts;
    q.out_index = ti;
#if HAVE_OPENCL
    /* on the device where its kernels take k and it scores as the CPU */
    char why[256] = "";
    int dev = ctx->is_cl && cltopk_fp_exact(ctx, 0, why, sizeof why);
    if (dev && k > cltopk_index_dev_kmax(ctx)) {
        dev = 0;
        snprintf(why, sizeof why, "k = %zu is above the device kernel's %zu", k,
                 cltopk_index_dev_kmax(ctx));
    }
    if (dev) {
        /* resident, or streamed from host memory; a query foreseen to read
         * most blocks evaluated in full at once (CLTOPK_INDEX=pre) */
        const double t0 = ctx->prof ? cltopk_now() : 0;
        /* (streamed, the index in host memory: its own share, no one launch) */
        const int res = idx->on_device;
        if (!full && q.sw == 1 && (!res || q.filter == 3))
            q.full = ix_foresee(idx, attr, wv, m, k, p.v[res ? IXP_PRE : IXP_SPRE],
                                res && p.v[IXP_DIRECT] != 0, &q.bslots) == 1;
        const double t1 = ctx->prof ? cltopk_now() : 0;
        st = cltopk_index_dev_query(ctx, L, &idx->dev, &q);
        if (ctx->prof) /* CLTOPK_PROFILE=1: the host's time */
            fprintf(stderr, "profile: index host: foresee %.1f us, the device's query %.1f us\n",
                    (t1 - t0) * 1e6, (cltopk_now() - t1) * 1e6);
    } else if (idx->on_device) {
        /* a host copy for this call */
        const size_t nb = L->nblocks, d = L->d, B = L->B;
        float *data = malloc(nb * d * B * sizeof *data), *thr = malloc(nb * d * sizeof *thr);
        uint32_t *ids = malloc(nb * B * sizeof *ids);
        if (!data || !thr || !ids)
            st = cltopk_fail(ctx, CLTOPK_ERR_NO_MEMORY,
                             "%s: out of host memory for a host copy of the index (%s)", fn,
                             why);
        else
            st = cltopk_index_dev_read(ctx, L, &idx->dev, data, ids, thr);
        if (st == CLTOPK_OK) {
            cltopk_ix_layout H = *L;
            H.data = data;
            H.ids = ids;
            H.thr = thr;
            st = cltopk_cpu_index_query(&H, &q);
        }
        free(data);
        free(thr);
        free(ids);
    } else
#endif
        st = cltopk_cpu_index_query(L, &q);
    if (st == CLTOPK_OK) {
        if (out_scores)
            memcpy(out_scores, ts, k * sizeof *ts);
        if (out_index)
            memcpy(out_index, ti, k * sizeof *ti);
        if (stats)
            *stats = local;
    } else if (st == CLTOPK_ERR_NO_MEMORY && !ctx->err[0]) {
        st = cltopk_fail(ctx, st, "%s: out of host memory", fn);
    } else if (st == CLTOPK_ERR_INTERNAL && !ctx->err[0]) {
        st = cltopk_fail(ctx, st, "%s: fewer than k results", fn);
    }
    free(ts);
    free(ti);
    pthread_mutex_unlock(&ctx->lock);
    return st;
}

int cltopk_index_topk(cltopk_index *idx, const unsigned *attr, const float *w, size_t m,
                      size_t k, float *out_scores, int64_t *out_index, cltopk_index_stats *stats)
{
    return ix_query(idx, "cltopk_index_topk", 0, attr, w, m, k, out_scores, out_index, stats);
}

int cltopk_index_full_topk(cltopk_index *idx, const unsigned *attr, const float *w, size_t m,
                           size_t k, float *out_scores, int64_t *out_index,
                           cltopk_index_stats *stats)
{
    return ix_query(idx, "cltopk_index_full_topk", 1, attr, w, m, k, out_scores, out_index,
                    stats);
}

/* ------------------------------------------------------------ save, load */

/* the files' checksum: a 64-bit hash of the bytes, 8 at a time (a partial
 * word kept between calls), the length and a final mix */
typedef struct {
    uint64_t h, len, carry;
    unsigned nc;
} ix_sum;

static void ix_sum_word(ix_sum *s, uint64_t w)
{
    uint64_t x = s->h ^ (w * 0x9E3779B97F4A7C15ull);
    s->h = ((x << 29) | (x >> 35)) * 0xBF58476D1CE4E5B9ull;
}

static void ix_sum_add(ix_sum *s, const void *p, size_t len)
{
    const unsigned char *b = p;
    s->len += len;
    while (len && s->nc) {
        s->carry |= (uint64_t)*b++ << (8 * s->nc);
        len--;
        if (++s->nc == 8) {
            ix_sum_word(s, s->carry);
            s->carry = 0;
            s->nc = 0;
        }
    }
    for (; len >= 8; len -= 8, b += 8) {
        uint64_t w;
        memcpy(&w, b, 8);
        ix_sum_word(s, w);
    }
    for (; len; len--) {
        s->carry |= (uint64_t)*b++ << (8 * s->nc);
        s->nc++;
    }
}

static uint64_t ix_sum_end(ix_sum *s)
{
    if (s->nc)
        ix_sum_word(s, s->carry);
    uint64_t x = s->h ^ s->len;
    return ix_mix(&x);
}

static int ix_little_endian(void)
{
    const uint16_t one = 1;
    unsigned char c;
    memcpy(&c, &one, 1);
    return c == 1;
}

/* the header's 64 bytes */
static void ix_header(const cltopk_index *idx, unsigned char *h)
{
    const cltopk_ix_layout *L = &idx->L;
    uint32_t ver = IX_VERSION, part = (uint32_t)idx->part;
    uint64_t v[6] = {L->n, L->d, L->B, L->P, L->nblocks, idx->seed};
    memset(h, 0, IX_HEADER);
    memcpy(h, "CLTOPKIX", 8);
    memcpy(h + 8, &ver, 4);
    memcpy(h + 12, &part, 4);
    memcpy(h + 16, v, sizeof v);
}

int cltopk_index_save(cltopk_index *idx, const char *path)
{
    const char *fn = "cltopk_index_save";
    if (!idx)
        return cltopk_fail(NULL, CLTOPK_ERR_INVALID_ARGUMENT, "%s: idx is NULL", fn);
    cltopk_context *ctx = idx->ctx;
    cltopk_enter(ctx);
    int st = CLTOPK_OK;
    const cltopk_ix_layout *L = &idx->L;
    const size_t nb = L->nblocks, d = L->d, B = L->B;
    float *data = idx->data, *thr = idx->thr;
    uint32_t *ids = idx->ids;
    char *tmp = NULL;
    FILE *f = NULL;
    if (!path)
        st = cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT, "%s: path is NULL", fn);
    else if (!ix_little_endian())
        st = cltopk_fail(ctx, CLTOPK_ERR_UNSUPPORTED, "%s: index files are little-endian; "
                         "this host is not", fn);
#if HAVE_OPENCL
    if (st == CLTOPK_OK && idx->on_device) {
        data = malloc(nb * d * B * sizeof *data);
        thr = malloc(nb * d * sizeof *thr);
        ids = malloc(nb * B * sizeof *ids);
        if (!data || !thr || !ids)
            st = cltopk_fail(ctx, CLTOPK_ERR_NO_MEMORY, "%s: out of host memory", fn);
        else
            st = cltopk_index_dev_read(ctx, L, &idx->dev, data, ids, thr);
    }
#endif
    if (st == CLTOPK_OK) {
        size_t len = strlen(path) + 16;
        tmp = malloc(len);
        if (!tmp)
            st = cltopk_fail(ctx, CLTOPK_ERR_NO_MEMORY, "%s: out of host memory", fn);
        else {
            snprintf(tmp, len, "%s.XXXXXX", path);
            int fd = mkstemp(tmp);
            if (fd < 0 || !(f = fdopen(fd, "wb"))) {
                st = cltopk_fail(ctx, CLTOPK_ERR_UNSUPPORTED, "%s: cannot create %s: %s", fn,
                                 tmp, strerror(errno));
                if (fd >= 0) {
                    close(fd);
                    unlink(tmp);
                }
                free(tmp);
                tmp = NULL;
            }
        }
    }
    if (st == CLTOPK_OK) {
        unsigned char h[IX_HEADER];
        ix_header(idx, h);
        const void *part[6] = {h, idx->pstart, idx->psize, thr, ids, data};
        const size_t lens[6] = {IX_HEADER, (L->P + 1) * 4, L->P * 8, nb * d * 4, nb * B * 4,
                                nb * d * B * 4};
        ix_sum s = {0, 0, 0, 0};
        int bad = 0;
        for (int i = 0; i < 6 && !bad; i++) {
            ix_sum_add(&s, part[i], lens[i]);
            bad = fwrite(part[i], 1, lens[i], f) != lens[i];
        }
        uint64_t sum = ix_sum_end(&s);
        bad = bad || fwrite(&sum, 1, 8, f) != 8;
        bad = fflush(f) != 0 || bad;
        bad = fsync(fileno(f)) != 0 || bad;
        bad = fclose(f) != 0 || bad;
        if (!bad && rename(tmp, path) != 0)
            bad = 1;
        if (bad) {
            st = cltopk_fail(ctx, CLTOPK_ERR_UNSUPPORTED, "%s: cannot write %s: %s", fn, path,
                             strerror(errno));
            unlink(tmp);
        }
        free(tmp);
    }
    if (data != idx->data)
        free(data);
    if (thr != idx->thr)
        free(thr);
    if (ids != idx->ids)
        free(ids);
    pthread_mutex_unlock(&ctx->lock);
    return st;
}

/* read len bytes of f into p, adding them to the checksum: 0, else -1 */
static int ix_read(FILE *f, void *p, size_t len, ix_sum *s)
{
    if (fread(p, 1, len, f) != len)
        return -1;
    ix_sum_add(s, p, len);
    return 0;
}

/* the checks of a loaded index beyond its checksum: CLTOPK_OK or CORRUPT */
static int ix_verify(cltopk_context *ctx, const char *fn, const char *path, cltopk_index *idx)
{
    const cltopk_ix_layout *L = &idx->L;
    const size_t n = L->n, d = L->d, B = L->B, P = L->P;
    uint64_t total = 0;
    if (idx->pstart[0] != 0)
        return cltopk_fail(ctx, CLTOPK_ERR_CORRUPT, "%s: %s: the first partition starts at "
                           "block %u, not 0", fn, path, idx->pstart[0]);
    for (size_t i = 0; i < P; i++) {
        if (idx->pstart[i + 1] < idx->pstart[i])
            return cltopk_fail(ctx, CLTOPK_ERR_CORRUPT, "%s: %s: partition %zu ends before it "
                               "starts", fn, path, i);
        const uint64_t nbi = idx->pstart[i + 1] - idx->pstart[i], sz = idx->psize[i];
        if (sz > nbi * B || (nbi && sz <= (nbi - 1) * B))
            return cltopk_fail(ctx, CLTOPK_ERR_CORRUPT, "%s: %s: partition %zu has %llu tuples "
                               "in %llu blocks of %zu", fn, path, i, (unsigned long long)sz,
                               (unsigned long long)nbi, B);
        total += sz;
    }
    if (idx->pstart[P] != L->nblocks || total != n)
        return cltopk_fail(ctx, CLTOPK_ERR_CORRUPT, "%s: %s: the partitions hold %llu tuples in "
                           "%u blocks; the header says %zu in %zu", fn, path,
                           (unsigned long long)total, idx->pstart[P], n, L->nblocks);
    uint8_t *seen = calloc(n, 1);
    if (!seen)
        return cltopk_fail(ctx, CLTOPK_ERR_NO_MEMORY, "%s: out of host memory", fn);
    int st = CLTOPK_OK;
    float run[IX_MAX_D];
    for (size_t i = 0; i < P && st == CLTOPK_OK; i++) {
        const size_t g0 = idx->pstart[i], g1 = idx->pstart[i + 1];
        for (size_t a = 0; a < d; a++)
            run[a] = -INFINITY;
        for (size_t g = g1; g-- > g0 && st == CLTOPK_OK;) {
            for (size_t sl = 0; sl < B && st == CLTOPK_OK; sl++) {
                const size_t x = (g - g0) * B + sl;
                const uint32_t id = idx->ids[g * B + sl];
                if (x < idx->psize[i] ? (id >= n || seen[id]) : id != IX_PAD)
                    st = cltopk_fail(ctx, CLTOPK_ERR_CORRUPT, "%s: %s: block %zu slot %zu holds "
                                     "tuple number %u (%s)", fn, path, g, sl, id,
                                     x >= idx->psize[i] ? "padding expected"
                                     : id >= n ? "out of range" : "a repeat");
                else if (x < idx->psize[i])
                    seen[id] = 1;
                for (size_t a = 0; a < d && st == CLTOPK_OK; a++) {
                    float v = idx->data[(g * d + a) * B + sl];
                    if (!isfinite(v) || (x >= idx->psize[i] && v != 0.0f))
                        st = cltopk_fail(ctx, CLTOPK_ERR_CORRUPT, "%s: %s: block %zu slot %zu "
                                         "attribute %zu is %g", fn, path, g, sl, a, (double)v);
                }
            }
            for (size_t a = 0; a < d && st == CLTOPK_OK; a++) {
                float t = idx->thr[g * d + a];
                if (memcmp(&t, &run[a], 4) != 0)
                    st = cltopk_fail(ctx, CLTOPK_ERR_CORRUPT, "%s: %s: the threshold of block "
                                     "%zu, attribute %zu, is %g; the later blocks' maximum is "
                                     "%g", fn, path, g, a, (double)t, (double)run[a]);
                const float *col = idx->data + (g * d + a) * B;
                for (size_t sl = 0; sl < B && idx->ids[g * B + sl] != IX_PAD; sl++)
                    run[a] = col[sl] > run[a] ? col[sl] : run[a];
            }
        }
    }
    free(seen);
    return st;
}

int cltopk_index_load(cltopk_context *ctx, const char *path, cltopk_index **out)
{
    const char *fn = "cltopk_index_load";
    if (out)
        *out = NULL;
    if (!ctx)
        return cltopk_fail(NULL, CLTOPK_ERR_INVALID_ARGUMENT, "%s: ctx is NULL", fn);
    cltopk_enter(ctx);
    int st = CLTOPK_OK;
    FILE *f = NULL;
    cltopk_index *idx = NULL;
    if (!path || !out)
        st = cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn,
                         !path ? "path" : "out");
    else if (!ix_little_endian())
        st = cltopk_fail(ctx, CLTOPK_ERR_UNSUPPORTED, "%s: index files are little-endian; "
                         "this host is not", fn);
    else if (!(f = fopen(path, "rb")))
        st = cltopk_fail(ctx, CLTOPK_ERR_UNSUPPORTED, "%s: cannot open %s: %s", fn, path,
                         strerror(errno));
    struct stat sb;
    if (st == CLTOPK_OK && fstat(fileno(f), &sb) != 0)
        st = cltopk_fail(ctx, CLTOPK_ERR_UNSUPPORTED, "%s: cannot read %s: %s", fn, path,
                         strerror(errno));
    unsigned char h[IX_HEADER];
    ix_sum s = {0, 0, 0, 0};
    if (st == CLTOPK_OK && ix_read(f, h, IX_HEADER, &s) != 0)
        st = cltopk_fail(ctx, CLTOPK_ERR_CORRUPT, "%s: %s: shorter than the %d-byte header", fn,
                         path, IX_HEADER);
    uint32_t ver = 0, part = 0;
    uint64_t v[6] = {0};
    if (st == CLTOPK_OK) {
        memcpy(&ver, h + 8, 4);
        memcpy(&part, h + 12, 4);
        memcpy(v, h + 16, sizeof v);
        uint64_t zero = 0;
        for (int i = 16 + (int)sizeof v; i < IX_HEADER; i++)
            zero |= h[i];
        if (memcmp(h, "CLTOPKIX", 8) != 0)
            st = cltopk_fail(ctx, CLTOPK_ERR_CORRUPT, "%s: %s is not a cltopk index (magic)",
                             fn, path);
        else if (ver != IX_VERSION)
            st = cltopk_fail(ctx, CLTOPK_ERR_CORRUPT, "%s: %s: index format version %u (this "
                             "library reads version %u)", fn, path, ver, IX_VERSION);
        else if (part > 1 || zero || v[0] < 1 || v[0] > IX_MAX_N || v[1] < 1 ||
                 v[1] > IX_MAX_D || v[2] < 1 || v[2] > IX_MAX_BLOCK || v[3] < 1 ||
                 v[3] > v[0] || v[4] > 0xFFFFFFFFull || v[4] * v[2] > v[0] + v[3] * v[2])
            st = cltopk_fail(ctx, CLTOPK_ERR_CORRUPT, "%s: %s: the header's sizes are out of "
                             "range (n %llu, d %llu, block %llu, partitions %llu, blocks %llu)",
                             fn, path, (unsigned long long)v[0], (unsigned long long)v[1],
                             (unsigned long long)v[2], (unsigned long long)v[3],
                             (unsigned long long)v[4]);
    }
    uint64_t want = 0;
    if (st == CLTOPK_OK) {
        want = IX_HEADER + (v[3] + 1) * 4 + v[3] * 8 + v[4] * v[1] * 4 + v[4] * v[2] * 4 +
               v[4] * v[1] * v[2] * 4 + 8;
        if ((uint64_t)sb.st_size != want)
            st = cltopk_fail(ctx, CLTOPK_ERR_CORRUPT, "%s: %s has %llu bytes; its header says "
                             "%llu (truncated or extended)", fn, path,
                             (unsigned long long)sb.st_size, (unsigned long long)want);
    }
    if (st == CLTOPK_OK && !(idx = calloc(1, sizeof *idx)))
        st = cltopk_fail(ctx, CLTOPK_ERR_NO_MEMORY, "%s: out of host memory", fn);
    if (st == CLTOPK_OK) {
        idx->ctx = ctx;
        idx->part = (cltopk_partitioning)part;
        idx->seed = v[5];
        idx->L.n = v[0];
        idx->L.d = v[1];
        idx->L.B = v[2];
        idx->L.P = v[3];
        idx->L.nblocks = v[4];
        const size_t nb = v[4], d = v[1], B = v[2], P = v[3];
        idx->pstart = malloc((P + 1) * 4);
        idx->psize = malloc(P * 8);
        idx->thr = ix_alloc(nb * d, 4);
        idx->ids = ix_alloc(nb * B, 4);
        idx->data = ix_alloc(nb * d * B, 4);
        if (!idx->pstart || !idx->psize || !idx->thr || !idx->ids || !idx->data)
            st = cltopk_fail(ctx, CLTOPK_ERR_NO_MEMORY, "%s: out of host memory", fn);
        uint64_t sum = 0;
        if (st == CLTOPK_OK &&
            (ix_read(f, idx->pstart, (P + 1) * 4, &s) || ix_read(f, idx->psize, P * 8, &s) ||
             ix_read(f, idx->thr, nb * d * 4, &s) || ix_read(f, idx->ids, nb * B * 4, &s) ||
             ix_read(f, idx->data, nb * d * B * 4, &s) || fread(&sum, 1, 8, f) != 8))
            st = cltopk_fail(ctx, CLTOPK_ERR_CORRUPT, "%s: %s: a read failed or ended early",
                             fn, path);
        if (st == CLTOPK_OK && sum != ix_sum_end(&s))
            st = cltopk_fail(ctx, CLTOPK_ERR_CORRUPT, "%s: %s: the checksum does not match "
                             "(the file is damaged)", fn, path);
    }
    if (f)
        fclose(f);
    if (st == CLTOPK_OK) {
        ix_layout_set(idx);
        st = ix_verify(ctx, fn, path, idx);
    }
    return ix_finish(ctx, fn, idx, st, out);
}
