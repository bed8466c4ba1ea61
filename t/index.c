/* index.c - TAP test of the early-stopping index (cltopk_index_*, issue 15).
 *
 * The reference is this file's own full evaluation: every tuple's score by
 * fmaf in the query's order from 0.0f, then a plain sort by (score in THE
 * ORDER of floats, largest first, -0 equal to +0, NaN above +inf; smaller
 * tuple number first), the scores written as the library writes them (+0.0
 * for a zero, 0x7FC00000 for a NaN).  Against it, bit for bit: the index
 * query and the full evaluation, on the "cpu" context and on the OpenCL
 * device (POCL here; skipped cleanly without one), for the three skyline
 * distributions, both partitionings, several block sizes and partition
 * counts, m = 0 .. d, k = 1, small, the device kernel's limit, n; with the
 * probe's decision forced both ways (CLTOPK_INDEX=switch=0 and 2); on the
 * device, the rounds' growth and the merge's levels forced (grow, probe, fan),
 * the full evaluation's ways (full=old, the filter's fallback forced, its
 * candidates' room tiny: resident and streamed), an index in host memory
 * streamed in pieces and in chunk counts odd, even and one, and an index's
 * kept query buffers grown and reused (k up and down).
 * Adversarial data: equal scores at the threshold with smaller tuple numbers
 * in later blocks (a stop on >= drops them), values and weights whose
 * scores tie or nearly tie only under one rounding rule, and every score
 * negative beside padding slots (whose attributes, 0, score above them).
 * The device's foresee forced, off and under switch=0; its one launch from
 * the host's bound (pre=1: every query it does not send to the full
 * evaluation) over the sweeps and the adversarial data, with its candidates
 * overflowing (the rounds then) and without; the rounds' modes with it off
 * (direct=0).  Bad arguments
 * write nothing; save and load round-trip; damaged files are
 * CLTOPK_ERR_CORRUPT, those with a right checksum (written here as
 * docs/FORMAT.md says) too where their structure is wrong. */
#include "gen.h"
#include "tap.h"
#include "testlib.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

static rng_t rng;

/* ------------------------------------------------------------ reference */

typedef struct {
    uint32_t key; /* the score's order (larger first) */
    uint32_t bits;
    int64_t id;
} ref_entry;

static uint32_t ref_order(float s)
{
    uint32_t b;
    memcpy(&b, &s, 4);
    if (isnan(s))
        return 0xFFFFFFFFu;
    if (s == 0)
        return 0x80000000u;
    return (b & 0x80000000u) ? ~b : b | 0x80000000u;
}

static int ref_cmp(const void *pa, const void *pb)
{
    const ref_entry *a = pa, *b = pb;
    if (a->key != b->key)
        return a->key > b->key ? -1 : 1;
    return a->id < b->id ? -1 : a->id > b->id;
}

/* the best k of columns cols (attribute j of tuple t at cols[j * n + t]) */
static void reference(const float *cols, size_t n, const unsigned *attr, const float *w,
                      size_t m, size_t k, uint32_t *out_bits, int64_t *out_id)
{
    ref_entry *e = malloc(n * sizeof *e);
    for (size_t t = 0; t < n; t++) {
        float acc = 0.0f;
        for (size_t j = 0; j < m; j++)
            acc = fmaf(w[j], cols[attr[j] * n + t], acc);
        e[t].key = ref_order(acc);
        memcpy(&e[t].bits, &acc, 4);
        if (isnan(acc))
            e[t].bits = 0x7FC00000u;
        else if (acc == 0)
            e[t].bits = 0;
        e[t].id = (int64_t)t;
    }
    qsort(e, n, sizeof *e, ref_cmp);
    for (size_t r = 0; r < k; r++) {
        out_bits[r] = e[r].bits;
        out_id[r] = e[r].id;
    }
    free(e);
}

/* ------------------------------------------------------------ checking */

#define POISON_ID ((int64_t)-777)

/* run the query (full: the full evaluation) and compare with the reference;
 * 1 if equal, else 0 with the first difference in msg */
static int check_query(cltopk_index *idx, int full, const float *cols, size_t n,
                       const unsigned *attr, const float *w, size_t m, size_t k,
                       cltopk_index_stats *st, char *msg, size_t len)
{
    uint32_t *eb = malloc((k + 1) * 4), *gb = malloc((k + 1) * 4);
    int64_t *ei = malloc((k + 1) * 8), *gi = malloc((k + 1) * 8);
    reference(cols, n, attr, w, m, k, eb, ei);
    for (size_t r = 0; r <= k; r++) {
        gb[r] = 0xDEADBEEFu;
        gi[r] = POISON_ID;
    }
    int s = full ? cltopk_index_full_topk(idx, attr, w, m, k, (float *)gb, gi, st)
                 : cltopk_index_topk(idx, attr, w, m, k, (float *)gb, gi, st);
    int good = s == CLTOPK_OK;
    if (!good)
        snprintf(msg, len, "status %d (%s)", s, cltopk_strerror(s));
    for (size_t r = 0; good && r < k; r++)
        if (gb[r] != eb[r] || gi[r] != ei[r]) {
            snprintf(msg, len, "rank %zu: tuple %lld score 0x%08x, expected tuple %lld score "
                     "0x%08x", r, (long long)gi[r], gb[r], (long long)ei[r], eb[r]);
            good = 0;
        }
    if (good && (gb[k] != 0xDEADBEEFu || gi[k] != POISON_ID)) {
        snprintf(msg, len, "wrote past k");
        good = 0;
    }
    free(eb);
    free(gb);
    free(ei);
    free(gi);
    return good;
}

static cltopk_index *build(cltopk_context *ctx, const float *cols, size_t n, size_t d,
                           cltopk_partitioning part, size_t P, size_t B, uint64_t seed)
{
    const float *a[64];
    for (size_t j = 0; j < d; j++)
        a[j] = cols + j * n;
    cltopk_index_options o = {part, P, B, seed};
    cltopk_index *idx = NULL;
    int s = cltopk_index_build(ctx, a, d, n, &o, &idx);
    if (s != CLTOPK_OK)
        diag("build: %s: %s", cltopk_strerror(s), cltopk_last_error(ctx));
    return idx;
}

/* a random query of m attributes (distinct while they last) and weights
 * (zeros one time in six, else U[0, 2)) */
static void random_query(size_t d, size_t m, unsigned *attr, float *w)
{
    unsigned perm[64];
    for (size_t j = 0; j < d; j++)
        perm[j] = (unsigned)j;
    for (size_t j = d; j-- > 1;) {
        size_t x = rng_below(&rng, j + 1);
        unsigned t = perm[j];
        perm[j] = perm[x];
        perm[x] = t;
    }
    for (size_t j = 0; j < m; j++) {
        attr[j] = perm[j % d];
        w[j] = rng_below(&rng, 6) == 0 ? 0.0f : (float)(rng_next(&rng) >> 40) * 0x1.0p-23f;
    }
}

/* every m and the given k on one index: answers and the full evaluation */
/* make check: the knob sweeps (sweep_thin set) ask every other (m, k) of
 * their grid, each m and each k still asked (make check-full: all of it; the
 * knob sweeps were a third of the test's time, POCL running its unoptimised
 * kernels) */
static int sweep_thin;

static void sweep(cltopk_index *idx, const char *what, const float *cols, size_t n, size_t d,
                  const size_t *ks, size_t nk)
{
    char msg[256];
    int bad = 0;
    size_t runs = 0;
    unsigned attr[64];
    float w[64];
    for (size_t m = 0; m <= d && !bad; m++)
        for (size_t x = 0; x < nk && !bad; x++) {
            if (sweep_thin && !test_full() && (m + x) % 2)
                continue;
            size_t k = ks[x] > n ? n : ks[x];
            random_query(d, m, attr, w);
            cltopk_index_stats st;
            if (!check_query(idx, 0, cols, n, attr, w, m, k, &st, msg, sizeof msg) ||
                !check_query(idx, 1, cols, n, attr, w, m, k, &st, msg, sizeof msg)) {
                diag("%s: m = %zu, k = %zu: %s", what, m, k, msg);
                bad = 1;
            }
            runs++;
        }
    ok(!bad, "%s: %zu queries equal the reference (index and full evaluation)", what, runs);
}

/* ---------------------------------------------------------- adversarial */

/* Equal scores at the threshold: tuples A = (1, 0) (largest attribute 1:
 * the first blocks) and B = (0.5, 0.5) (later blocks), all scoring 1 under w
 * = (1, 1); B has the smaller tuple numbers.  After A's blocks the threshold
 * score is 1 = the k-th: stopping on >= would return A's tuples. */
static float *ties_at_threshold(size_t n)
{
    float *c = malloc(2 * n * sizeof *c);
    for (size_t t = 0; t < n; t++) {
        int b = t < n / 2;
        c[t] = b ? 0.5f : 1.0f;
        c[n + t] = b ? 0.5f : 0.0f;
    }
    return c;
}

/* Values from a small set chosen so that sums with these weights round
 * differently with and without fma and tie often: a threshold score computed
 * by another rule than the tuples' would be one ulp off somewhere. */
static float *near_ties(size_t n, size_t d)
{
    static const float vals[] = {0.1f, 0.2f, 0.3f, 0.7f, 1.0f / 3.0f, 0.6f, 0.9f, 1e-8f};
    float *c = malloc(d * n * sizeof *c);
    for (size_t i = 0; i < d * n; i++)
        c[i] = vals[rng_below(&rng, 8)];
    return c;
}

/* A tie that only the fma rule makes: weights (1, w1), tuple T = (t0, t1)
 * scoring S = fmaf(w1, t1, t0), tuple A = (S, 0) scoring S too but ordered
 * first (its largest attribute is larger); T has the smaller number, so T is
 * the top 1.  Values are drawn until the same sum without fma (or in the
 * other order) rounds below S: a threshold computed that way would stop
 * after A's block and return A. */
static void fma_tie(cltopk_context *ctx, const char *cname)
{
    int found = 0, good = 1;
    char msg[256];
    for (int tries = 0; tries < 100000 && found < 12 && good; tries++) {
        float t0 = 0.5f + (float)(rng_next(&rng) >> 40) * 0x1.0p-25f;
        float t1 = 0.5f + (float)(rng_next(&rng) >> 40) * 0x1.0p-25f;
        float w1 = 0.5f + (float)(rng_next(&rng) >> 40) * 0x1.0p-25f;
        volatile float prod = w1 * t1;
        float plain = t0 + prod, S = fmaf(w1, t1, t0);
        if (!(plain < S) || !(S > t0 && S > t1))
            continue;
        found++;
        float cols[4] = {t0, S, t1, 0.0f}; /* tuple 0 = T, tuple 1 = A */
        cltopk_index *idx = build(ctx, cols, 2, 2, CLTOPK_PARTITION_RANDOM, 1, 1, 0);
        unsigned attr[2] = {0, 1};
        float w[2] = {1.0f, w1};
        good = idx && check_query(idx, 0, cols, 2, attr, w, 2, 1, NULL, msg, sizeof msg);
        if (!good)
            diag("t0 %a t1 %a w1 %a: %s", (double)t0, (double)t1, (double)w1, msg);
        cltopk_index_free(idx);
    }
    ok(good && found == 12, "%s: %d ties that only fma rounding makes (a threshold without fma "
       "would stop one block early)", cname, found);
}

/* Every score negative, and partitions whose last block is padded: 7
 * partitions of 31 tuples in blocks of 32, one padding slot each, whose
 * attributes are 0, so that a full evaluation that scored the padding (the
 * device's by the query engine over the layout) would rank those 7 first
 * (at k = 9 and 100 the k-th and the next are tuples of distinct scores)
 * and must see them and take another way.  Also the switch forced and the
 * first round's way; index and full. */
static void negative_scores(cltopk_context *ctx, const char *cname)
{
    const size_t n = 217, d = 3;
    float *c = malloc(d * n * sizeof *c);
    for (size_t i = 0; i < d * n; i++)
        c[i] = -1.0f - (float)(rng_next(&rng) >> 40) * 0x1.0p-24f;
    static const char *const modes[] = {"", "switch=2", "pre=0", "full=filter,switch=2",
                                        "pre=1"};
    char msg[256] = "no index";
    int good = 1;
    for (int part = 0; good && part < 2; part++) {
        cltopk_index *idx = build(ctx, c, n, d, (cltopk_partitioning)part, 7, 32, 11);
        good = idx != NULL;
        for (size_t mo = 0; good && mo < 5; mo++) {
            setenv("CLTOPK_INDEX", modes[mo], 1);
            size_t ks[] = {1, 9, 100, 217};
            for (size_t x = 0; good && x < 4; x++) {
                unsigned attr[3];
                float w[3];
                random_query(d, 1 + x % 3, attr, w);
                good = check_query(idx, 0, c, n, attr, w, 1 + x % 3, ks[x], NULL, msg,
                                   sizeof msg) &&
                       check_query(idx, 1, c, n, attr, w, 1 + x % 3, ks[x], NULL, msg,
                                   sizeof msg);
            }
            if (!good)
                diag("CLTOPK_INDEX=%s: %s", modes[mo], msg);
        }
        unsetenv("CLTOPK_INDEX");
        cltopk_index_free(idx);
    }
    ok(good, "%s: every score negative, the last blocks padded (index and full evaluation, "
       "each way)", cname);
    free(c);
}

/* Ties across the k-th score, for the full evaluation by the query engine
 * (lib/indexdev.c, ixd_by_query: it breaks ties by slot, not by tuple
 * number, and takes k + 1 + k / 4 slots): 14 distinct best scores, then a
 * group of g tuples of one score at random places, the rest below.  At k =
 * 16, g = 5 ends within the engine's 21 slots (its answer stands once its
 * keys are sorted by tuple number); g = 40 does not (the filter's way).
 * Random partitions, so that slot order is not tuple order. */
static void ties_at_kth(cltopk_context *ctx, const char *cname)
{
    const size_t n = 6000, groups[2] = {5, 40};
    float *c = malloc(2 * n * sizeof *c);
    unsigned attr[1] = {0};
    float w[1] = {1.0f};
    char msg[256] = "no index";
    for (int gi = 0; gi < 2; gi++) {
        for (size_t t = 0; t < n; t++) {
            c[t] = (float)(rng_next(&rng) >> 40) * 0x1.0p-24f; /* [0, 1) */
            c[n + t] = 0.0f;
        }
        for (size_t j = 0; j < 14; j++)
            c[rng_below(&rng, n)] = 100.0f + (float)j; /* may land twice: fewer */
        for (size_t j = 0; j < groups[gi]; j++)
            c[rng_below(&rng, n)] = 50.0f;
        cltopk_index *idx = build(ctx, c, n, 2, CLTOPK_PARTITION_RANDOM, 8, 64, 3 + gi);
        int good = idx != NULL;
        for (size_t k = 12; good && k <= 20; k += 4)
            good = check_query(idx, 1, c, n, attr, w, 1, k, NULL, msg, sizeof msg) &&
                   check_query(idx, 0, c, n, attr, w, 1, k, NULL, msg, sizeof msg);
        ok(good, "%s: a tie of %zu tuples across the k-th score (k = 12, 16, 20), random "
           "partitions: exact%s%s", cname, groups[gi], good ? "" : ": ", good ? "" : msg);
        cltopk_index_free(idx);
    }
    free(c);
}

static void adversarial(cltopk_context *ctx, const char *cname)
{
    fma_tie(ctx, cname);
    ties_at_kth(ctx, cname);
    char msg[256], what[160];
    const size_t n = 4096;
    float *c = ties_at_threshold(n);
    unsigned attr[2] = {0, 1};
    float w[2] = {1.0f, 1.0f};
    /* every score 1: the bound equals every tuple's score, ties by number
     * all the way; the full evaluation's ways (device knobs, which the cpu
     * context parses and ignores) */
    static const char *const tmodes[] = {"", "switch=2", "switch=2,full=fallback",
                                         "switch=2,full=filter,cands=5", "switch=2,full=old",
                                         "pre=1", "pre=1,cands=5", "pre=1,fuse=0"};
    for (int part = 0; part < 2; part++) {
        cltopk_index *idx = build(ctx, c, n, 2, (cltopk_partitioning)part, 4, 64, 3);
        size_t ks[] = {1, 10, 100, 1000};
        int good = idx != NULL;
        for (size_t mo = 0; good && mo < 8; mo++) {
            setenv("CLTOPK_INDEX", tmodes[mo], 1);
            for (size_t x = 0; good && x < 4; x++)
                good = check_query(idx, 0, c, n, attr, w, 2, ks[x], NULL, msg, sizeof msg) &&
                       check_query(idx, 1, c, n, attr, w, 2, ks[x], NULL, msg, sizeof msg);
            if (!good && idx)
                diag("CLTOPK_INDEX=%s: %s", tmodes[mo], msg);
        }
        unsetenv("CLTOPK_INDEX");
        ok(good, "%s, %s: equal scores at the threshold with smaller tuple numbers later "
           "(index and full evaluation, the device's full evaluation forced each way, the "
           "one launch from the host's bound with and without an overflow)",
           cname, part ? "angle" : "random");
        cltopk_index_free(idx);
    }
    free(c);
    negative_scores(ctx, cname);
    const size_t d = 4, n2 = 3000;
    c = near_ties(n2, d);
    static const float wset[] = {0.1f, 0.3f, 1.0f / 3.0f, 0.7f, 3.0f, 1.0f};
    for (int part = 0; part < 2; part++) {
        cltopk_index *idx = build(ctx, c, n2, d, (cltopk_partitioning)part, 8, 32, 5);
        int good = idx != NULL;
        size_t q = 0;
        for (; good && q < 60; q++) {
            unsigned at[8];
            float ww[8];
            size_t m = 1 + rng_below(&rng, 6);
            for (size_t j = 0; j < m; j++) {
                at[j] = (unsigned)rng_below(&rng, d);
                ww[j] = wset[rng_below(&rng, 6)];
            }
            size_t k = 1 + rng_below(&rng, 200);
            /* queries with the switch forced (the filter's bound then
             * equals some tuples' scores), the full evaluation too, and the
             * one launch from the host's bound (pre=1) */
            static const char *const nmodes[] = {"", "switch=2", "switch=2,full=filter,cands=40",
                                                 "pre=1"};
            setenv("CLTOPK_INDEX", nmodes[q % 4], 1);
            good = check_query(idx, 0, c, n2, at, ww, m, k, NULL, msg, sizeof msg) &&
                   check_query(idx, 1, c, n2, at, ww, m, k, NULL, msg, sizeof msg);
        }
        unsetenv("CLTOPK_INDEX");
        if (!good && idx)
            diag("query %zu: %s", q, msg);
        snprintf(what, sizeof what, "%s, %s: near ties under fma rounding (%zu queries, index "
                 "and full evaluation)", cname,
                 part ? "angle" : "random", q);
        ok(good, "%s", what);
        cltopk_index_free(idx);
    }
    free(c);
}

/* ------------------------------------------------------------ arguments */

static void bad_arguments(cltopk_context *ctx, const float *cols, size_t n, size_t d)
{
    cltopk_index *idx = build(ctx, cols, n, d, CLTOPK_PARTITION_RANDOM, 4, 32, 1);
    if (!idx) {
        ok(0, "an index for the argument checks");
        return;
    }
    const size_t k = 5;
    float sc[5];
    int64_t id[5];
    cltopk_index_stats st;
    unsigned attr[3] = {0, 1, 2}, badattr[2] = {0, (unsigned)d};
    float w[3] = {1, 1, 1}, neg[2] = {1, -0.5f}, nanw[2] = {NAN, 1}, infw[2] = {1, INFINITY};
    struct {
        const char *what;
        cltopk_index *idx;
        const unsigned *attr;
        const float *w;
        size_t m, k;
        int outs;
        int expect;
    } cases[] = {
        {"idx NULL", NULL, attr, w, 2, k, 3, CLTOPK_ERR_INVALID_ARGUMENT},
        {"attr NULL with m = 2", idx, NULL, w, 2, k, 3, CLTOPK_ERR_INVALID_ARGUMENT},
        {"w NULL with m = 2", idx, attr, NULL, 2, k, 3, CLTOPK_ERR_INVALID_ARGUMENT},
        {"an attribute id out of range", idx, badattr, w, 2, k, 3, CLTOPK_ERR_INVALID_ARGUMENT},
        {"a negative weight", idx, attr, neg, 2, k, 3, CLTOPK_ERR_INVALID_ARGUMENT},
        {"a NaN weight", idx, attr, nanw, 2, k, 3, CLTOPK_ERR_INVALID_ARGUMENT},
        {"an infinite weight", idx, attr, infw, 2, k, 3, CLTOPK_ERR_INVALID_ARGUMENT},
        {"m = 65", idx, attr, w, 65, k, 3, CLTOPK_ERR_INVALID_ARGUMENT},
        {"both outputs NULL", idx, attr, w, 2, k, 0, CLTOPK_ERR_INVALID_ARGUMENT},
        {"k > n", idx, attr, w, 2, n + 1, 3, CLTOPK_ERR_K_RANGE},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        for (int full = 0; full < 2; full++) {
            for (size_t r = 0; r < k; r++) {
                sc[r] = -12345.0f;
                id[r] = POISON_ID;
            }
            memset(&st, 0xA5, sizeof st);
            cltopk_index_stats st0 = st;
            /* k > n needs room for n + 1 outputs: the call must not write */
            size_t kk = cases[c].k;
            float *os = kk > k ? malloc(kk * 4) : sc;
            int64_t *oi = kk > k ? malloc(kk * 8) : id;
            for (size_t r = 0; kk > k && r < kk; r++) {
                os[r] = -12345.0f;
                oi[r] = POISON_ID;
            }
            int s = (full ? cltopk_index_full_topk : cltopk_index_topk)(
                cases[c].idx, cases[c].attr, cases[c].w, cases[c].m, kk,
                (cases[c].outs & 1) ? os : NULL, (cases[c].outs & 2) ? oi : NULL, &st);
            int untouched = !memcmp(&st, &st0, sizeof st);
            for (size_t r = 0; r < kk; r++)
                untouched &= os[r] == -12345.0f && oi[r] == POISON_ID;
            const char *detail = cltopk_last_error(cases[c].idx ? ctx : NULL);
            ok(s == cases[c].expect && untouched && detail && *detail,
               "%s: %s gives %s, writes nothing (%s)", full ? "full" : "index", cases[c].what,
               cltopk_strerror(cases[c].expect), detail);
            if (os != sc) {
                free(os);
                free(oi);
            }
        }
    }
    /* k = 0 succeeds and writes nothing */
    sc[0] = -12345.0f;
    ok(cltopk_index_topk(idx, attr, w, 3, 0, sc, id, NULL) == CLTOPK_OK && sc[0] == -12345.0f,
       "k = 0 succeeds and writes nothing");
    cltopk_index_free(idx);

    /* build: NaN and infinite attributes, bad sizes */
    float *c2 = malloc(2 * 100 * sizeof *c2);
    for (int i = 0; i < 200; i++)
        c2[i] = (float)i;
    const float *a2[2] = {c2, c2 + 100};
    const float bads[] = {NAN, INFINITY, -INFINITY};
    for (int b = 0; b < 3; b++) {
        c2[100 + 37] = bads[b];
        cltopk_index *out = (cltopk_index *)&rng;
        int s = cltopk_index_build(ctx, a2, 2, 100, NULL, &out);
        ok(s == CLTOPK_ERR_INVALID_ARGUMENT && out == NULL &&
               strstr(cltopk_last_error(ctx), "tuple 37"),
           "build: an attribute %g is INVALID_ARGUMENT, naming the tuple (%s)", (double)bads[b],
           cltopk_last_error(ctx));
    }
    c2[137] = 1;
    cltopk_index *out = NULL;
    cltopk_index_options o = {CLTOPK_PARTITION_ANGLE, 0, (size_t)1 << 21, 0};
    ok(cltopk_index_build(ctx, a2, 2, 100, &o, &out) == CLTOPK_ERR_INVALID_ARGUMENT && !out,
       "build: block 2^21 is INVALID_ARGUMENT");
    o.block = 0;
    o.partitioning = (cltopk_partitioning)7;
    ok(cltopk_index_build(ctx, a2, 2, 100, &o, &out) == CLTOPK_ERR_INVALID_ARGUMENT && !out,
       "build: an unknown partitioning is INVALID_ARGUMENT");
    ok(cltopk_index_build(ctx, a2, 0, 100, NULL, &out) == CLTOPK_ERR_INVALID_ARGUMENT &&
           cltopk_index_build(ctx, a2, 2, 0, NULL, &out) == CLTOPK_ERR_INVALID_ARGUMENT &&
           cltopk_index_build(ctx, NULL, 2, 100, NULL, &out) == CLTOPK_ERR_INVALID_ARGUMENT &&
           cltopk_index_build(ctx, a2, 2, 100, NULL, NULL) == CLTOPK_ERR_INVALID_ARGUMENT,
       "build: d = 0, n = 0, attrs NULL, out NULL are INVALID_ARGUMENT");
    free(c2);
}

/* ------------------------------------------------------------ save, load */

static long file_size(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    fseek(f, 0, SEEK_END);
    long s = ftell(f);
    fclose(f);
    return s;
}

/* copy src to dst, with byte `at` xor-ed by x (at < 0: none) and cut to len
 * bytes (len < 0: whole) */
static void damaged_copy(const char *src, const char *dst, long at, unsigned x, long len)
{
    long size = file_size(src);
    unsigned char *b = malloc((size_t)size);
    FILE *f = fopen(src, "rb");
    size_t got = fread(b, 1, (size_t)size, f);
    fclose(f);
    if (at >= 0 && at < size)
        b[at] ^= (unsigned char)x;
    f = fopen(dst, "wb");
    fwrite(b, 1, len >= 0 ? (size_t)len : got, f);
    fclose(f);
    free(b);
}

/* docs/FORMAT.md's checksum of an index file's first len bytes */
static uint64_t file_sum(const unsigned char *b, size_t len)
{
    uint64_t h = 0, x;
    for (size_t at = 0; at < len; at += 8) {
        uint64_t w = 0;
        for (size_t j = 0; j < 8 && at + j < len; j++)
            w |= (uint64_t)b[at + j] << (8 * j);
        x = h ^ (w * 0x9E3779B97F4A7C15ull);
        h = ((x << 29) | (x >> 35)) * 0xBF58476D1CE4E5B9ull;
    }
    x = (h ^ (uint64_t)len) + 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* an index file in memory and where its parts start (docs/FORMAT.md) */
typedef struct {
    unsigned char *b;
    size_t size, n, d, B, P, G, pstart, psize, thr, ids, data;
} ix_file;

/* the little-endian word of len (4 or 8) bytes at byte at */
static uint64_t ixf_word(const ix_file *f, size_t at, size_t len)
{
    uint64_t v = 0;
    for (size_t j = 0; j < len; j++)
        v |= (uint64_t)f->b[at + j] << (8 * j);
    return v;
}

/* write f to path with its checksum made right again */
static void ixf_write(const ix_file *f, const char *path)
{
    uint64_t sum = file_sum(f->b, f->size - 8);
    FILE *o = fopen(path, "wb");
    if (!o)
        return; /* then the load fails, and so does the test */
    fwrite(f->b, 1, f->size - 8, o);
    fwrite(&sum, 1, 8, o);
    fclose(o);
}

/* Files whose checksum is right but whose structure is not: each is
 * CLTOPK_ERR_CORRUPT with a detail naming the defect and *out NULL (the
 * checks after the checksum in cltopk_index_load) */
static void structural_damage(cltopk_context *ctx, const char *cname, const char *path,
                              const char *bad)
{
    ix_file f = {0};
    long size = file_size(path);
    FILE *in = fopen(path, "rb");
    f.b = size > 72 ? malloc((size_t)size) : NULL;
    f.size = f.b && in && fread(f.b, 1, (size_t)size, in) == (size_t)size ? (size_t)size : 0;
    if (in)
        fclose(in);
    if (f.size) {
        f.n = ixf_word(&f, 16, 8), f.d = ixf_word(&f, 24, 8), f.B = ixf_word(&f, 32, 8);
        f.P = ixf_word(&f, 40, 8), f.G = ixf_word(&f, 48, 8);
        f.pstart = 64, f.psize = f.pstart + 4 * (f.P + 1), f.thr = f.psize + 8 * f.P;
        f.ids = f.thr + 4 * f.G * f.d, f.data = f.ids + 4 * f.G * f.B;
    }
    /* the test's checksum is the library's, and a rewritten copy loads */
    int good = f.size && f.data + 4 * f.G * f.d * f.B + 8 == f.size &&
               file_sum(f.b, f.size - 8) == ixf_word(&f, f.size - 8, 8);
    cltopk_index *o = NULL;
    if (good) {
        ixf_write(&f, bad);
        good = cltopk_index_load(ctx, bad, &o) == CLTOPK_OK && o;
        cltopk_index_free(o);
    }
    ok(good, "%s: the test's checksum is docs/FORMAT.md's (a rewritten copy loads)", cname);
    if (!good) {
        free(f.b);
        return;
    }
    /* a partition of two blocks or more, after one of at least one block */
    size_t p2 = f.P, pw = f.P;
    for (size_t i = 0; i < f.P; i++) {
        uint64_t g0 = ixf_word(&f, f.pstart + 4 * i, 4);
        uint64_t g1 = ixf_word(&f, f.pstart + 4 * (i + 1), 4);
        if (g1 >= g0 + 2 && p2 == f.P)
            p2 = i;
        if (i > 0 && g0 > 0 && pw == f.P)
            pw = i;
    }
    if (p2 == f.P || pw == f.P || f.B < 2) {
        ok(0, "%s: the saved index has a partition of two blocks, a second partition and "
           "blocks of two tuples or more", cname);
        free(f.b);
        return;
    }
    const size_t g0 = ixf_word(&f, f.pstart + 4 * p2, 4), d = f.d, B = f.B;
    /* block g0 is full (its partition's last block comes after it); slot 0 of
     * every block holds a tuple */
    const size_t a = d - 1;
    float t;
    memcpy(&t, f.b + f.thr + 4 * (g0 * d + a), 4);
    const uint32_t id0 = (uint32_t)ixf_word(&f, f.ids + 4 * (g0 * B), 4);
    char want[6][160];
    snprintf(want[0], sizeof want[0], "the threshold of block %zu, attribute %zu, is %g", g0, a,
             (double)(t - 1.0f));
    snprintf(want[1], sizeof want[1], "block %zu slot 1 holds tuple number %u (a repeat)", g0,
             id0);
    snprintf(want[2], sizeof want[2], "block %zu slot 0 attribute %zu is nan", g0 + 1, a);
    snprintf(want[3], sizeof want[3], "the threshold of block %zu, attribute %zu, is %g; the "
             "later blocks' maximum is %g", g0, a, (double)t, (double)(t + 1.0f));
    snprintf(want[4], sizeof want[4], "the first partition starts at block 1, not 0");
    snprintf(want[5], sizeof want[5], "partition %zu ends before it starts", pw);
    const char *what[6] = {"a lowered threshold", "a repeated tuple number", "a NaN attribute",
                           "an attribute above the threshold that covers it",
                           "a first partition that does not start at block 0",
                           "a partition that ends before it starts"};
    /* the 4 bytes each defect writes, and where */
    const float lower = t - 1.0f, nan = NAN, above = t + 1.0f;
    const uint32_t one = 1, before = (uint32_t)ixf_word(&f, f.pstart + 4 * pw, 4) - 1;
    const size_t attr_at = f.data + 4 * (((g0 + 1) * d + a) * B);
    const struct {
        size_t at;
        const void *v;
    } put[6] = {
        {f.thr + 4 * (g0 * d + a), &lower},      /* below the later blocks' maximum */
        {f.ids + 4 * (g0 * B + 1), &id0},        /* block g0's slot 0's tuple again */
        {attr_at, &nan},
        {attr_at, &above},                       /* block g0's threshold covers it */
        {f.pstart, &one},
        {f.pstart + 4 * (pw + 1), &before},      /* partition pw ends before its start */
    };
    unsigned char *orig = malloc(f.size);
    memcpy(orig, f.b, f.size);
    for (int c = 0; c < 6; c++) {
        memcpy(f.b, orig, f.size);
        memcpy(f.b + put[c].at, put[c].v, 4);
        ixf_write(&f, bad);
        o = (cltopk_index *)&rng;
        int s = cltopk_index_load(ctx, bad, &o);
        const char *e = cltopk_last_error(ctx);
        ok(s == CLTOPK_ERR_CORRUPT && o == NULL && strstr(e, want[c]) && strstr(e, bad),
           "%s: a file with %s (its checksum right) is CORRUPT, saying so (%s)", cname, what[c],
           e);
        if (s == CLTOPK_OK)
            cltopk_index_free(o);
    }
    free(orig);
    free(f.b);
    unlink(bad);
}

static void save_load(cltopk_context *ctx, const char *cname, const float *cols, size_t n,
                      size_t d)
{
    char path[512], bad[560], msg[256];
    snprintf(path, sizeof path, "%s/index-%ld-%s.cix", test_tmpdir(), (long)getpid(), cname);
    snprintf(bad, sizeof bad, "%s.bad", path);
    cltopk_index *idx = build(ctx, cols, n, d, CLTOPK_PARTITION_ANGLE, 16, 64, 9);
    int s = idx ? cltopk_index_save(idx, path) : -1;
    ok(s == CLTOPK_OK, "%s: save (%s)", cname, s ? cltopk_last_error(ctx) : "ok");
    cltopk_index *back = NULL;
    s = cltopk_index_load(ctx, path, &back);
    ok(s == CLTOPK_OK && back, "%s: load (%s)", cname, s ? cltopk_last_error(ctx) : "ok");
    if (back) {
        cltopk_index_info a, b;
        cltopk_index_info_get(idx, &a);
        cltopk_index_info_get(back, &b);
        ok(a.n == b.n && a.d == b.d && a.partitions == b.partitions && a.block == b.block &&
               a.blocks == b.blocks && a.partitioning == b.partitioning && a.seed == b.seed,
           "%s: the loaded index has the saved one's shape", cname);
        unsigned attr[64];
        float w[64];
        int good = 1;
        for (int q = 0; q < 5 && good; q++) {
            random_query(d, d, attr, w);
            good = check_query(back, 0, cols, n, attr, w, d, 7 + 20 * q, NULL, msg, sizeof msg);
        }
        if (!good)
            diag("%s", msg);
        ok(good, "%s: the loaded index answers as the reference", cname);
    }
    long size = file_size(path);
    struct {
        const char *what;
        long at;
        unsigned x;
        long len;
    } dmg[] = {
        {"a damaged magic", 0, 0x20, -1},
        {"a damaged version", 8, 0x02, -1},
        {"a damaged n in the header", 16, 0x01, -1},
        {"a damaged byte of the partition table", 64, 0x01, -1},
        {"a damaged byte in the middle", size / 2, 0x10, -1},
        {"a damaged last attribute byte", size - 9, 0x80, -1},
        {"a damaged checksum", size - 1, 0x01, -1},
        {"40 bytes (truncated)", -1, 0, 40},
        {"one byte cut off", -1, 0, size - 1},
        {"no bytes", -1, 0, 0},
    };
    for (size_t i = 0; i < sizeof dmg / sizeof dmg[0]; i++) {
        damaged_copy(path, bad, dmg[i].at, dmg[i].x, dmg[i].len);
        cltopk_index *o = (cltopk_index *)&rng;
        s = cltopk_index_load(ctx, bad, &o);
        ok(s == CLTOPK_ERR_CORRUPT && o == NULL && *cltopk_last_error(ctx),
           "%s: a file with %s is CORRUPT (%s)", cname, dmg[i].what, cltopk_last_error(ctx));
    }
    /* one byte more than the header says */
    FILE *f = fopen(bad, "wb");
    fclose(f);
    damaged_copy(path, bad, -1, 0, -1);
    f = fopen(bad, "ab");
    fputc(0, f);
    fclose(f);
    cltopk_index *o = NULL;
    ok(cltopk_index_load(ctx, bad, &o) == CLTOPK_ERR_CORRUPT && !o,
       "%s: a file longer than its header says is CORRUPT", cname);
    ok(cltopk_index_load(ctx, "/nonexistent/dir/x.cix", &o) == CLTOPK_ERR_UNSUPPORTED && !o,
       "%s: a missing file is UNSUPPORTED, not CORRUPT", cname);
    structural_damage(ctx, cname, path, bad);
    unlink(bad);
    unlink(path);
    cltopk_index_free(back);
    cltopk_index_free(idx);
}

/* ------------------------------------------------------------ the runs */

/* for each CLTOPK_INDEX setting of modes and each distribution (data of seed
 * + its number), an index of P partitions (random and angle in turn, the
 * turn moving on with the mode, so that two modes give each distribution
 * both) and a sweep; streamed: the index must stay in host memory and the
 * device run its queries */
static void knob_sweeps(cltopk_context *ctx, const char *cname, float *cols, size_t n, size_t d,
                        const char *const *modes, int nmodes, const char *label, uint64_t seed,
                        size_t P, int streamed)
{
    for (int mi = 0; mi < nmodes; mi++) {
        setenv("CLTOPK_INDEX", modes[mi], 1);
        for (int di = 0; gen_tuple_dists[di]; di++) {
            gen_tuples(gen_tuple_dists[di], n, d, seed + (uint64_t)di, cols);
            char what[200];
            snprintf(what, sizeof what, "%s, %s, %s (CLTOPK_INDEX=%s)", cname,
                     gen_tuple_dists[di], label, modes[mi]);
            cltopk_index *idx = build(ctx, cols, n, d, (cltopk_partitioning)((di + mi) & 1), P,
                                      16, 1);
            cltopk_index_info info;
            if (!idx || (streamed && (cltopk_index_info_get(idx, &info) != CLTOPK_OK ||
                                      info.on_device))) {
                ok(0, "%s: build%s", what, streamed ? " in host memory" : "");
                cltopk_index_free(idx);
                continue;
            }
            size_t ks[] = {1, 20, 300};
            sweep_thin = 1;
            sweep(idx, what, cols, n, d, ks, 3);
            sweep_thin = 0;
            if (streamed) {
                unsigned attr[2] = {0, 1};
                float w[2] = {1, 2};
                cltopk_index_stats st;
                int64_t ids[5];
                int s = cltopk_index_topk(idx, attr, w, 2, 5, NULL, ids, &st);
                ok(s == CLTOPK_OK && st.on_device, "%s: the device ran it", what);
            }
            cltopk_index_free(idx);
        }
    }
    unsetenv("CLTOPK_INDEX");
}


/* An index in host memory whose full evaluation (cltopk_index_full_topk
 * with full=old: every block, no round) goes through the two device staging
 * buffers in a known number of chunks: 3 (not a multiple of the buffers;
 * pieces of 5 blocks, which divide no chunk), 2, and 1 (one buffer; a
 * staging larger than the index too); with full=fallback the filter's
 * chunks and then index_full's again (3 + 3, the second pass starting on
 * the other buffer, or 1 + 1 on one buffer).  Each against the reference,
 * index and full. */
static void streamed_chunks(cltopk_context *ctx, const char *cname, const float *cols, size_t n,
                            size_t d)
{
    setenv("CLTOPK_INDEX", "resident=0", 1);
    cltopk_index *idx = build(ctx, cols, n, d, CLTOPK_PARTITION_RANDOM, 1, 16, 3);
    unsetenv("CLTOPK_INDEX");
    cltopk_index_info info;
    if (!idx || cltopk_index_info_get(idx, &info) != CLTOPK_OK || info.on_device ||
        info.blocks < 6) {
        ok(0, "%s: an index of one partition in host memory (at least 6 blocks)", cname);
        cltopk_index_free(idx);
        return;
    }
    const size_t G = info.blocks, third = (G + 2) / 3, half = (G + 1) / 2;
    struct {
        size_t stage, piece, chunks;
        const char *full;
    } cases[] = {{third, 5, 3, "old"}, {half, 0, 2, "old"},      {G, 0, 1, "old"},
                 {G + 9, 4, 1, "old"}, {third, 2, 3, "fallback"}, {G, 7, 1, "fallback"}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char mode[128], what[256];
        snprintf(mode, sizeof mode, "resident=0,stage=%zu,piece=%zu,full=%s", cases[c].stage,
                 cases[c].piece, cases[c].full);
        /* the chunk count the case claims, from the staging's size */
        const size_t cap = cases[c].stage < G ? cases[c].stage : G;
        snprintf(what, sizeof what, "%s, streamed, %zu blocks in %zu chunk%s of %zu "
                 "(CLTOPK_INDEX=%s)", cname, G, cases[c].chunks, cases[c].chunks > 1 ? "s" : "",
                 cap, mode);
        if ((G + cap - 1) / cap != cases[c].chunks) {
            ok(0, "%s: the chunk count", what);
            continue;
        }
        setenv("CLTOPK_INDEX", mode, 1);
        size_t ks[] = {1, 20, 300};
        sweep(idx, what, cols, n, d, ks, 3);
    }
    unsetenv("CLTOPK_INDEX");
    cltopk_index_free(idx);
}

static void distributions(cltopk_context *ctx, const char *cname, size_t kdev)
{
    const int full = test_full();
    const size_t n = full ? 20000 : 3000, d = full ? 6 : 4;
    float *cols = malloc(n * d * sizeof *cols);
    for (int di = 0; gen_tuple_dists[di]; di++) {
        gen_tuples(gen_tuple_dists[di], n, d, 17 + (uint64_t)di, cols);
        struct {
            size_t P, B;
        } shapes[] = {{0, 0}, {7, 33}, {16, 64}, {1, 1000}, {64, 1}};
        const size_t nshapes = full ? 5 : 3;
        for (int part = 0; part < 2; part++)
            for (size_t sh = 0; sh < nshapes; sh++) {
                char what[200];
                snprintf(what, sizeof what, "%s, %s, %s, P %zu, B %zu", cname,
                         gen_tuple_dists[di], part ? "angle" : "random", shapes[sh].P,
                         shapes[sh].B);
                cltopk_index *idx = build(ctx, cols, n, d, (cltopk_partitioning)part,
                                          shapes[sh].P, shapes[sh].B, 100 + sh);
                if (!idx) {
                    ok(0, "%s: build", what);
                    continue;
                }
                size_t ks[] = {1, 4, 37, 256, kdev ? kdev : 300, n};
                size_t nk = sh == 0 ? 6 : 3;
                sweep(idx, what, cols, n, d, ks, nk);
                cltopk_index_free(idx);
            }
    }
    /* the probe's decision both ways, on the three distributions */
    for (int sw = 0; sw <= 2; sw += 2) {
        setenv("CLTOPK_INDEX", sw ? "switch=2" : "switch=0", 1);
        for (int di = 0; gen_tuple_dists[di]; di++) {
            gen_tuples(gen_tuple_dists[di], n, d, 27 + (uint64_t)di, cols);
            char what[200];
            snprintf(what, sizeof what, "%s, %s, CLTOPK_INDEX=switch=%d", cname,
                     gen_tuple_dists[di], sw);
            cltopk_index *idx = build(ctx, cols, n, d, CLTOPK_PARTITION_ANGLE, 16, 32, 1);
            size_t ks[] = {3, 50};
            if (idx)
                sweep(idx, what, cols, n, d, ks, 2);
            else
                ok(0, "%s: build", what);
            unsigned attr[8] = {0, 1, 2, 3};
            float w[8] = {1, 1, 1, 1};
            cltopk_index_stats st;
            int s = idx ? cltopk_index_topk(idx, attr, w, d < 4 ? d : 4, 10, NULL,
                                            (int64_t[10]){0}, &st)
                        : -1;
            ok(s == CLTOPK_OK && st.full_evaluation == (sw == 2 && st.partitions_stopped <
                                                                       st.partitions),
               "%s: stats say whether it switched (%d)", what, s == CLTOPK_OK ? st.full_evaluation
                                                                              : -1);
            cltopk_index_free(idx);
        }
    }
    {
        cltopk_index *idx = build(ctx, cols, n, d, CLTOPK_PARTITION_RANDOM, 4, 64, 1);
        setenv("CLTOPK_INDEX", "switch=7", 1);
        unsigned attr[1] = {0};
        float w[1] = {1}, sc[2] = {-1, -1};
        int s = idx ? cltopk_index_topk(idx, attr, w, 1, 2, sc, NULL, NULL) : -1;
        ok(s == CLTOPK_ERR_UNSUPPORTED && sc[0] == -1 && strstr(cltopk_last_error(ctx), "CLTOPK_INDEX"),
           "%s: a malformed CLTOPK_INDEX is UNSUPPORTED, naming it", cname);
        cltopk_index_free(idx);
        const float *a[1] = {cols};
        cltopk_index *out = (cltopk_index *)&rng;
        s = cltopk_index_build(ctx, a, 1, n, NULL, &out);
        ok(s == CLTOPK_ERR_UNSUPPORTED && out == NULL,
           "%s: a build under a malformed CLTOPK_INDEX is UNSUPPORTED", cname);
    }
    unsetenv("CLTOPK_INDEX");
    if (kdev) {
        /* an index kept in host memory, its blocks copied to the device as
         * queries read them: staging of 5 blocks (rounds cut short, chunks of
         * the full evaluation), both decisions and the default */
        const char *modes[] = {"resident=0,stage=5,switch=0", "resident=0,stage=5,switch=2",
                               "resident=0,stage=7", "resident=0",
                               "resident=0,stage=7,piece=3,switch=2"};
        knob_sweeps(ctx, cname, cols, n, d, modes, 5, "streamed", 37, 12, 1);
        streamed_chunks(ctx, cname, cols, n, d);
        /* the device's rounds and merge forced: rounds growing by 2 and 3
         * (GPUs' default is 2), a one-round probe, merge groups of 1, 2 and
         * 3 lists (two levels) and of more lists than there are (one level),
         * the phase read back every round or two (sync), or never (first=0:
         * every round and the full evaluation's launches enqueued), with
         * either decision; then an index's kept buffers grown and reused: k up and
         * down on one index */
        const char *dmodes[] = {"grow=2,direct=0",
                                "grow=3,probe=64,fan=1,direct=0",
                                "grow=2,switch=2,fan=2,sync=1",
                                "probe=1,fan=3,direct=0",
                                "grow=2,switch=0,fan=100000,sync=2",
                                "probe=64,sync=1,direct=0",
                                "first=0,direct=0",
                                "first=0,switch=2,fan=2"};
        knob_sweeps(ctx, cname, cols, n, d, dmodes, 8, "device rounds", 47, 24, 0);
        /* the one launch from the host's bound (the foresee's sample) for
         * every query it does not send to the full evaluation (pre=1): its
         * last group merging few candidates (the default), the merge
         * launches by groups of 2 lists where they are more, with room for 2
         * candidates (an overflow: the rounds then), and the merge launches
         * always (fuse=0), its host array from malloc (pin=0) */
        const char *xmodes[] = {"pre=1", "pre=1,fan=2", "pre=1,cands=2", "pre=1,fuse=0,pin=0"};
        knob_sweeps(ctx, cname, cols, n, d, xmodes, 4, "one launch", 91, 24, 0);
        /* the merge's last levels: 128 partitions, lists merged two at a time
         * (64 lists of k = 300 keys are more than one group takes: levels of
         * 32 and 16 lists, written after the first lists and back at their
         * start), the reading finished in its rounds or switched */
        const char *lmodes[] = {"fan=2,direct=0", "fan=2,switch=2"};
        knob_sweeps(ctx, cname, cols, n, d, lmodes, 2, "merge levels", 53, 128, 0);
        /* the full evaluation's ways (after a switch and in
         * cltopk_index_full_topk): index_full alone (full=old), index_filter
         * with its fallback forced (full=fallback) or with room for 2 or 3
         * candidates (an overflow or not, as the data falls; with fan=3 the
         * bound from groups of 3 partitions), resident and streamed; the
         * filter itself (full=filter), after a switch and plain; the default
         * (the query engine over the layout, full=query) runs in every sweep
         * above */
        const char *fmodes[] = {"full=old", "full=fallback,switch=2",
                                "full=filter,cands=2,switch=2,fan=3", "full=fallback",
                                "full=filter,switch=2", "full=filter"};
        knob_sweeps(ctx, cname, cols, n, d, fmodes, 6, "full evaluation", 67, 12, 0);
        const char *smodes[] = {"resident=0,stage=5,full=old,switch=2",
                                "resident=0,stage=6,full=fallback",
                                "resident=0,stage=5,cands=3,switch=2",
                                "resident=0,stage=4,full=fallback,switch=2"};
        knob_sweeps(ctx, cname, cols, n, d, smodes, 4, "streamed full evaluation", 77, 9, 1);
        gen_tuples("independent", n, d, 57, cols);
        cltopk_index *idx = build(ctx, cols, n, d, CLTOPK_PARTITION_ANGLE, 0, 0, 1);
        size_t kseq[] = {3, kdev, 1, 200, kdev / 2 ? kdev / 2 : 1, 7};
        for (int rs = 0; rs < 2; rs++) {
            setenv("CLTOPK_INDEX", rs ? "resident=0,stage=9" : "grow=2", 1);
            cltopk_index *jdx = rs ? build(ctx, cols, n, d, CLTOPK_PARTITION_RANDOM, 9, 32, 2)
                                   : idx;
            char msg[256] = "no index";
            int good = jdx != NULL;
            for (size_t x = 0; good && x < sizeof kseq / sizeof kseq[0]; x++) {
                unsigned attr[64];
                float w[64];
                random_query(d, 1 + x % d, attr, w);
                cltopk_index_stats st;
                good = check_query(jdx, (int)(x & 1), cols, n, attr, w, 1 + x % d, kseq[x], &st,
                                   msg, sizeof msg) &&
                       check_query(jdx, !(x & 1), cols, n, attr, w, 1 + x % d, kseq[x], &st,
                                   msg, sizeof msg);
            }
            ok(good, "%s: %s index, k = 3, %zu, 1, 200, %zu, 7 in turn (kept buffers grown "
               "and reused): exact (%s)", cname, rs ? "a streamed" : "one", kdev,
               kdev / 2 ? kdev / 2 : 1, good ? "all" : msg);
            if (rs)
                cltopk_index_free(jdx);
        }
        cltopk_index_free(idx);
        unsetenv("CLTOPK_INDEX");
    }
    free(cols);
}

/* idx (NULL: fails) at k = 20 and 64, m = 1 .. 4 of attr / w: every answer
 * the reference's (msg says the first that is not) */
static int queries_k20_k64(cltopk_index *idx, const float *cols, size_t n, const unsigned *attr,
                           const float *w, char *msg, size_t msglen)
{
    cltopk_index_stats st;
    int good = idx != NULL;
    msg[0] = 0;
    for (size_t k = 20; good && k <= 64; k += 44)
        for (size_t m = 1; good && m <= 4; m++)
            good = check_query(idx, 0, cols, n, attr, w, m, k, &st, msg, msglen);
    return good;
}

/* correlated data stops early and says so; anti-correlated switches */
static void behaviour(cltopk_context *ctx, const char *cname)
{
    const size_t n = 1 << 16, d = 4;
    float *cols = malloc(n * d * sizeof *cols);
    gen_tuples("correlated", n, d, 5, cols);
    cltopk_index *idx = build(ctx, cols, n, d, CLTOPK_PARTITION_ANGLE, 16, 64, 1);
    unsigned attr[4] = {0, 1, 2, 3};
    float w[4] = {1, 1, 1, 1};
    char msg[256];
    cltopk_index_stats st = {0};
    int good = idx && check_query(idx, 0, cols, n, attr, w, 4, 16, &st, msg, sizeof msg);
    ok(good && st.stopped_early && !st.full_evaluation && st.tuples_evaluated < n / 8 &&
           st.partitions_stopped > 0 && st.tuples == n,
       "%s: correlated data, 16 angle partitions, blocks of 64, k = 16: exact and stops early (%llu of %zu "
       "tuples, %llu blocks, %zu of %zu partitions stopped)", cname,
       (unsigned long long)st.tuples_evaluated, n, (unsigned long long)st.blocks_read,
       st.partitions_stopped, st.partitions);
    /* the foresee (an index on an OpenCL device): with a tiny share (pre)
     * it sends this query to the full evaluation before any round; off
     * (pre=0) or with switch=0 it does not; the "cpu" context never
     * foresees.  Exact each way. */
    static const char *const fmodes[] = {"pre=0.000001", "pre=0", "pre=0.000001,switch=0",
                                         "pre=1", "pre=1,direct=0"};
    cltopk_index_info info;
    const int dev = idx && cltopk_index_info_get(idx, &info) == CLTOPK_OK && info.on_device;
    for (int f = 0; f < 5; f++) {
        setenv("CLTOPK_INDEX", fmodes[f], 1);
        memset(&st, 0, sizeof st);
        good = idx && check_query(idx, 0, cols, n, attr, w, 4, 16, &st, msg, sizeof msg);
        const int whole = f == 0 && dev;
        ok(good && st.full_evaluation == whole && st.stopped_early == !whole,
           "%s: CLTOPK_INDEX=%s: exact, %s (%llu of %zu tuples)", cname, fmodes[f],
           whole ? "evaluated in full at once" : "stops early",
           (unsigned long long)st.tuples_evaluated, n);
    }
    unsetenv("CLTOPK_INDEX");
    /* the same data, the index kept in host memory (resident=0, its
     * blocks streamed to an OpenCL device): the foresee with spre, a tiny
     * share sending the query to the (streamed) full evaluation at once,
     * none (spre=0) and the default (0.5) letting it stop early */
    setenv("CLTOPK_INDEX", "resident=0", 1);
    cltopk_index *host = build(ctx, cols, n, d, CLTOPK_PARTITION_ANGLE, 16, 64, 1);
    /* its queries run on the device where the first index lives there */
    const int hdev = dev && host && cltopk_index_info_get(host, &info) == CLTOPK_OK &&
                     !info.on_device;
    static const char *const smodes[] = {"resident=0,spre=0.000001", "resident=0,spre=0",
                                         "resident=0"};
    for (int f = 0; f < 3; f++) {
        setenv("CLTOPK_INDEX", smodes[f], 1);
        memset(&st, 0, sizeof st);
        good = host && check_query(host, 0, cols, n, attr, w, 4, 16, &st, msg, sizeof msg);
        const int whole = f == 0 && hdev;
        ok(good && st.full_evaluation == whole && st.stopped_early == !whole &&
               st.on_device == hdev,
           "%s: in host memory, CLTOPK_INDEX=%s: exact, %s (%llu of %zu tuples)", cname,
           smodes[f], whole ? "evaluated in full at once" : "stops early",
           (unsigned long long)st.tuples_evaluated, n);
    }
    unsetenv("CLTOPK_INDEX");
    cltopk_index_free(host);
    /* the same data in 128 partitions, queries that end in their first
     * round (half of each partition), lists merged two at a time: on a device the partitions' 64
     * lists of k = 20 and 64 keys take levels of groups before the last
     * group */
    cltopk_index *many = build(ctx, cols, n, d, CLTOPK_PARTITION_ANGLE, 128, 16, 1);
    setenv("CLTOPK_INDEX", "fan=2,probe=2", 1);
    good = queries_k20_k64(many, cols, n, attr, w, msg, sizeof msg);
    unsetenv("CLTOPK_INDEX");
    ok(good, "%s: correlated data, 128 angle partitions, lists merged two at a time (fan=2,probe=2): "
       "k = 20 and 64, m = 1 .. 4 exact%s%s", cname, good ? "" : ": ", msg);
    /* the same queries, ended in their first round, where index_decide's
     * merge has room for 2 candidates a batch (a build option): every batch
     * with more undoes its append and offers its keys a round at a time
     * (check-full: one more build of cl/index.cl, some 17 s on POCL; make
     * check's queries overflow the default room in some batches) */
    if (test_full()) {
        setenv("CLTOPK_INDEX", "probe=2", 1);
        char *bo = env_push("CLTOPK_BUILD_OPTIONS", "-DIXD_ROOM(R)=2");
        good = queries_k20_k64(many, cols, n, attr, w, msg, sizeof msg);
        env_pop("CLTOPK_BUILD_OPTIONS", bo);
        unsetenv("CLTOPK_INDEX");
        ok(good, "%s: the same, the decision's merge with room for 2 candidates a batch "
           "(CLTOPK_BUILD_OPTIONS=-DIXD_ROOM(R)=2): exact%s%s", cname, good ? "" : ": ", msg);
    }
    cltopk_index_free(many);
    /* m = 0: every score 0, thresholds that never fall: the rule switches */
    st.full_evaluation = 0;
    good = idx && check_query(idx, 0, cols, n, attr, w, 0, 16, &st, msg, sizeof msg);
    ok(good && st.full_evaluation && st.tuples_evaluated == n,
       "%s: m = 0 (no threshold ever falls) switches to full evaluation: tuples 0 .. 15 (%s)",
       cname, good ? "exact" : msg);
    cltopk_index_free(idx);
    free(cols);
}

int main(void)
{
    watchdog(900);
    rng_init(&rng, test_seed());
    plan_lazy();
    test_quick_builds(); /* POCL builds dominate: see testlib.h */
    cltopk_context *cpu = NULL, *cl = NULL;
    if (cltopk_open(&cpu, "cpu") != CLTOPK_OK)
        bail("cannot open the cpu context");
    char why[256];
    if (!open_test_cl(&cl, why, sizeof why))
        diag("no OpenCL device, its tests are skipped: %s", why);
    cltopk_context *ctxs[2] = {cpu, cl};
    const char *names[2] = {"cpu", "opencl"};
    for (int c = 0; c < 2; c++) {
        if (!ctxs[c]) {
            skip_block(1, "no OpenCL device: %s", why);
            continue;
        }
        cltopk_index_info info;
        const float col[4] = {1, 2, 3, 4};
        const float *a1[1] = {col};
        cltopk_index *tiny = NULL;
        int s = cltopk_index_build(ctxs[c], a1, 1, 4, NULL, &tiny);
        ok(s == CLTOPK_OK && cltopk_index_info_get(tiny, &info) == CLTOPK_OK &&
               info.on_device == (c == 1),
           "%s: a tiny index lives %s", names[c], c ? "on the device" : "in host memory");
        cltopk_index_free(tiny);
        /* the device kernel's largest k, found from k = 2048 down by the stats */
        size_t kdev = 0;
        if (c == 1) {
            const size_t n = 5000;
            float *cols = malloc(n * sizeof *cols);
            for (size_t t = 0; t < n; t++)
                cols[t] = (float)(t % 97);
            const float *a[1] = {cols};
            cltopk_index *idx = NULL;
            cltopk_index_build(cl, a, 1, n, NULL, &idx);
            unsigned at[1] = {0};
            float w[1] = {1};
            int64_t *ids = malloc(n * 8);
            for (size_t k = 2048; k >= 1 && !kdev; k /= 2) {
                cltopk_index_stats st;
                if (idx && cltopk_index_topk(idx, at, w, 1, k, NULL, ids, &st) == CLTOPK_OK &&
                    st.on_device)
                    kdev = k;
            }
            diag("the device kernel takes k up to %zu", kdev);
            cltopk_index_free(idx);
            free(ids);
            free(cols);
        }
        distributions(ctxs[c], names[c], kdev);
        adversarial(ctxs[c], names[c]);
        float *cols = malloc(2000 * 3 * sizeof *cols);
        gen_tuples("independent", 2000, 3, 77, cols);
        bad_arguments(ctxs[c], cols, 2000, 3);
        save_load(ctxs[c], names[c], cols, 2000, 3);
        free(cols);
        behaviour(ctxs[c], names[c]);
    }
    cltopk_close(cl);
    cltopk_close(cpu);
    return tap_done();
}
