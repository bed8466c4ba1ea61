/* querydev.c - cltopk_query_topk on the OpenCL device (cl/query.cl): the
 * programs copied to small buffers, a tile launch over the rows (the filter
 * and the score evaluated as the columns are read; a group's best k
 * candidates written), then merge launches of tile-sized groups of candidates
 * until one group writes the outputs.
 *
 * Configuration: work-groups of 256 work-items on GPUs, 64 elsewhere (capped
 * by the device), 16 rows a work-item: a tile of 4096 rows (1024).  k up to
 * 1024 and at most half a tile; rows fewer than 2^31 - 1 (their numbers are
 * the merge's tie-break); float64 scores or columns need fp64; float32
 * division and sqrt must round correctly (the build option
 * -cl-fp32-correctly-rounded-divide-sqrt where the device offers it, else
 * computed in float64 and rounded once); the arithmetic of each width used
 * must keep subnormals, round to nearest and know inf and NaN
 * (cltopk_fp_exact).
 *
 * Specialisation: the tile kernel is built for the query.  The programs that
 * lib/expr.c compiled (numbers: never the caller's text) become -D options,
 * one set a step (the operation, the stack slot it writes, its operand: a
 * column, a comparison, or a constant as the hex of its exact bits) plus the
 * used columns' types, and cl/query.cl unrolls them into straight-line code
 * on named registers with typed loads (qdev_spec_opts).  Each distinct query
 * (programs and column types) is one more program to build, kept by the
 * program caches (lib/program.c) like any other.  Programs longer than
 * QDEV_SPEC_MAX operations, and CLTOPK_QUERY=spec=0, take the interpreter of
 * cl/query.cl, which one program serves for every query.  The merge
 * launches never are specialised: they evaluate the score at k rows only.
 *
 * A threshold in device memory (CLTOPK_QUERY=thr=1; off by default) lets the tiles
 * skip rows that k rows already beat (see query_tile); a tile with few
 * candidates sorts them in local memory without the radix passes. */
#include "internal.h"
#include "tune.h"

#if HAVE_OPENCL

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define QDEV_RT 16
#define QDEV_KMAX 1024
#define QDEV_SPEC_MAX 64 /* cl/query_steps.h: the steps it unrolls */

/* CLTOPK_QUERY (parsed strictly, lib/tune.h): spec=0 the interpreter for
 * every query, 1 the specialised kernel (programs it unrolls), 2 (auto, the
 * default) the specialised kernel from QDEV_SPEC_ROWS rows, where a tile
 * kernel saves more than a program build costs; thr=1 the threshold;
 * path=tile|sf|auto the tile query or the sample-filter query (auto, the
 * default: sf on GPUs from QDEV_SF_ROWS rows: on the H200 at 2^28 rows,
 * with its read by persistent groups of few registers, the sf path took Q1
 * in 0.94-1.01 ms against the tile's 1.02-1.72, Q2 0.77-0.84 against 1.79
 * and Q3 0.86-0.98 against 2.16); and for the sample-filter
 * query s=N its sample size, cap=N its survivor buffer (pairs),
 * force=few|all (T above all but the best possible row: too few survivors;
 * T below every row: every passing row survives), check=served|fallback
 * (after the call, wait and fail with CLTOPK_ERR_INTERNAL unless that path
 * ran: tests) */
#define QDEV_SPEC_ROWS ((size_t)1 << 22)
#define QDEV_SF_ROWS ((size_t)1 << 22)
#define QDEV_SF_LSEG 1024 /* qsf_filter's local segment (pairs) */
#define QDEV_SF_WORDS 8   /* the state's words before the sample groups' counts (cl/query.cl) */
enum { QP_SPEC, QP_THR, QP_PATH, QP_S, QP_CAP, QP_FORCE, QP_CHECK, QP_QRB, QP_FGROUPS, QP_LAZY,
       QP_LAZYDIV, QP_SRT, QP_N };
enum { QPATH_AUTO = 0, QPATH_TILE, QPATH_SF };
enum { QCHECK_NONE = 0, QCHECK_SERVED, QCHECK_FALLBACK };
static const char *const qdev_path_words[] = {"auto", "tile", "sf", NULL};
static const char *const qdev_force_words[] = {"none", "few", "all", NULL};
static const char *const qdev_check_words[] = {"none", "served", "fallback", NULL};
static const char *const qdev_lazy_words[] = {"0", "1", "auto", NULL};
static const cltopk_param qdev_params[] = {
    [QP_SPEC] = {.name = "spec", .gpu = 2, .cpu = 0, .min = 0, .max = 2, .integer = 1},
    /* off by default: on the H200 (2^28 rows, k = 50) it gained nothing on
     * Q1 and Q3 (2.05 / 2.79 ms without, 2.11 / 2.78 with) and cost Q2 (1.46
     * ms without, 2.56 with) */
    [QP_THR] = {.name = "thr", .gpu = 0, .cpu = 0, .min = 0, .max = 1, .integer = 1},
    [QP_PATH] = {.name = "path", .min = 0, .max = 2, .integer = 1, .words = qdev_path_words},
    [QP_S] = {.name = "s", .min = 64, .max = 1 << 20, .integer = 1},
    [QP_CAP] = {.name = "cap", .min = 1, .max = 4294967294.0, .integer = 1},
    [QP_FORCE] = {.name = "force", .min = 0, .max = 2, .integer = 1, .words = qdev_force_words},
    [QP_CHECK] = {.name = "check", .min = 0, .max = 2, .integer = 1, .words = qdev_check_words},
    /* rows a work-item's batch in the specialised kernels (0: as many as
     * about 16 32-bit words of column values hold, at most 16) */
    [QP_QRB] = {.name = "qrb", .min = 0, .max = 16, .integer = 1},
    /* the sample-filter query's one read: work-groups a compute unit (the
     * H200, 2^28 rows: Q1 at 0.5 0.95 / 0.95 / 0.92 ms with 8 / 16 / 32, Q3
     * 0.85 / 0.80 / 0.79; 4 took 2x longer) */
    [QP_FGROUPS] = {.name = "fgroups", .gpu = 32, .cpu = 2, .min = 1, .max = 64, .integer = 1},
    /* the sample-filter query's one read (specialised kernels): 0 every
     * column of a row loaded at once, 1 the score's columns only where the
     * filter holds, auto that where fewer than 1 / lazydiv of the samples
     * pass (decided on the device).  The H200 (2^28 rows, Q1, k = 50; ms
     * lazy / not): selectivity 0 0.70-0.73 / 0.82, 0.01 0.77-0.80 / 0.89,
     * 0.05 0.91 / 0.875, 0.1 0.94 / 0.87: the crossover between 1% and 5% */
    [QP_LAZY] = {.name = "lazy", .gpu = 2, .cpu = 2, .min = 0, .max = 2, .integer = 1,
                 .words = qdev_lazy_words},
    [QP_LAZYDIV] = {.name = "lazydiv", .gpu = 32, .cpu = 32, .min = 1, .max = 1 << 20,
                    .integer = 1},
    /* the sample's rows a work-item (qsf_sample; rounded up to a multiple of
     * the batch in specialised kernels): the sample takes s / (wg srt)
     * groups.  The H200 (2^28 rows, k = 50), two runs of srt=4 against 16:
     * Q2 0.659-0.663 ms against 0.676-0.700, Q3 0.716-0.770 against
     * 0.739-0.742, Q1 0.686-0.845 against 0.737-0.859 in the second run (the
     * first within the spread either way): 4 on GPUs (128 sample groups of
     * 1024 rows at 2^28 instead of 32 of 4096) */
    [QP_SRT] = {.name = "srt", .gpu = 4, .cpu = QDEV_RT, .min = 1, .max = QDEV_RT,
                .integer = 1},
};
static const cltopk_param_table qdev_table = {"CLTOPK_QUERY", qdev_params, QP_N, NULL};

typedef struct {
    unsigned wg, mcap;
    int crdiv; /* the device rounds float32 division and sqrt correctly by option */
    int div64; /* else: float64 */
    int spec;  /* the tile kernel specialised to the programs */
    int spec_auto; /* spec chosen by the table's size (CLTOPK_QUERY spec=2) */
    int thr;   /* the threshold */
    int bad;   /* CLTOPK_QUERY is malformed (why): the device query refuses */
    int qrb;   /* rows a batch (specialised kernels; 0: chosen from the columns) */
    unsigned fgroups; /* the one read's work-groups */
    /* the sample-filter query */
    int sf, sf_forced; /* taken; named by path=sf */
    char sf_why[96];   /* why not, where it could have been */
    unsigned s, rank, force, check, lazy, lazydiv;
    unsigned srt;   /* the sample's rows a work-item */
    size_t sgroups; /* the sample's work-groups */
    size_t cap;
} qdev_cfg;

/* rows a batch of the specialised kernels: about 16 32-bit words of column
 * values (and two more a row for a filter's temporaries) in registers.  On
 * the H200 (2^28 rows, k = 50; bench/RESULTS.md) the sample-filter query's
 * read took Q1 (4 words, a filter) 0.96 ms at 4 rows and 1.81 at 16 (64
 * words, the old rule), Q2 (2 words) 0.77 at 8 and 0.89 at 16, Q3 (2 words,
 * a filter) 0.86 at 4 and 0.97 at 8: fewer registers, more groups resident */
static int qdev_rb(const cltopk_query_job *job, const qdev_cfg *c)
{
    int words = job->q->has_where ? 2 : 0, rb = 16;
    for (int r = 0; r < job->q->nrefs; r++)
        words += cltopk_dtype_size((cltopk_dtype)job->types[r]) / 4;
    while (rb > 1 && rb * words > 16)
        rb >>= 1;
    return c->qrb ? c->qrb : rb;
}

/* the sample-filter query's sample (s rows, at most half the rows) and rank
 * (the rank-th best passing sample is T): with l = k s / n, rank = ceil(l +
 * 5 sqrt(l) + 5), so that fewer than k rows at or above T needs rank samples
 * among the best k - 1 rows (a Poisson(l) tail beyond 5 sigma); its
 * survivors, about rank n / s, get a buffer of (rank + 6 sqrt(rank) + 16) n /
 * s pairs.  s halves while rank exceeds 128 or the groups' candidates (rank a
 * group of stl samples, *sgroups groups) exceed a tile (tl): 0 when s falls
 * below 64 */
static int qdev_sf_sample(size_t n, size_t k, size_t tl, size_t stl, unsigned s0, unsigned *s,
                          unsigned *rank, size_t *sgroups)
{
    size_t sm = s0 < n / 2 ? s0 : n / 2;
    while (sm >= 64) {
        double l = (double)k * (double)sm / (double)n;
        double r = ceil(l + 5.0 * sqrt(l) + 5.0);
        size_t groups = (sm + stl - 1) / stl; /* the sample's groups, stl samples each */
        if (r <= 128 && r <= (double)(tl / 2) && (double)groups * r <= (double)tl) {
            *s = (unsigned)sm;
            *rank = (unsigned)r;
            *sgroups = groups;
            return 1;
        }
        sm /= 2;
    }
    return 0;
}

static int qdev_config(cltopk_context *ctx, const cltopk_query_job *job, qdev_cfg *c, char *why,
                       size_t whylen)
{
    if (!ctx->is_cl) {
        snprintf(why, whylen, "a CPU context");
        return 0;
    }
    if (!ctx->caps.int64) {
        snprintf(why, whylen, "%s lacks 64-bit integers", ctx->name);
        return 0;
    }
    int gpu = (ctx->caps.type & CL_DEVICE_TYPE_GPU) != 0;
    unsigned wg = gpu ? 256 : 64;
    size_t maxwg = cltopk_pow2_le(ctx->caps.max_wg ? ctx->caps.max_wg : 1);
    while (wg > maxwg)
        wg >>= 1;
    if (wg < 16) {
        snprintf(why, whylen, "work-groups of %zu work-items are too small", maxwg);
        return 0;
    }
    size_t tl = (size_t)wg * QDEV_RT;
    if (job->k > QDEV_KMAX || 2 * job->k > tl) {
        snprintf(why, whylen, "the device query takes k up to %zu here (k = %zu)",
                 tl / 2 < QDEV_KMAX ? tl / 2 : (size_t)QDEV_KMAX, job->k);
        return 0;
    }
    if (job->n > 0x7FFFFFFEu) {
        snprintf(why, whylen, "the device query takes fewer than 2^31 - 1 rows (n = %zu)",
                 job->n);
        return 0;
    }
    int need64 = job->q->score64;
    for (int r = 0; r < job->q->nrefs; r++)
        need64 |= job->types[r] == CLTOPK_FLOAT64;
    c->crdiv = (ctx->caps.fp32_config & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT) != 0;
    c->div64 = !job->q->score64 && !c->crdiv;
    if ((need64 || c->div64) && !ctx->caps.fp64) {
        snprintf(why, whylen, "%s lacks fp64, which %s needs", ctx->name,
                 need64 ? "float64 scores or columns" : "correctly rounded float32 division");
        return 0;
    }
    if (!cltopk_fp_exact(ctx, need64 || c->div64, why, whylen))
        return 0;
    /* two sizes of the gathered pairs, so that few programs serve every k */
    unsigned mcap = job->k <= 128 ? 256 : 2048;
    size_t local = (size_t)mcap * ((job->q->score64 ? 8 : 4) + 4) + 1200;
    size_t flocal = (size_t)QDEV_SF_LSEG * ((job->q->score64 ? 8 : 4) + 4) + 64;
    local = local > flocal ? local : flocal; /* qsf_filter's segment */
    if (local > ctx->caps.local_mem) {
        snprintf(why, whylen, "k = %zu needs %zu bytes of local memory", job->k, local);
        return 0;
    }
    c->wg = wg;
    c->mcap = mcap;
    cltopk_params p;
    cltopk_tune_for f = {gpu, ctx->caps.device_name, job->q->score64 ? 8u : 4u, 1, job->k};
    c->bad = cltopk_params_get(NULL, &qdev_table, &f, &p, why, whylen) != 0;
    c->spec_auto = p.v[QP_SPEC] == 2 || (p.v[QP_SPEC] == 0 && !((p.env >> QP_SPEC) & 1u));
    c->spec = !c->bad && p.v[QP_SPEC] != 0 && (p.v[QP_SPEC] == 1 || job->n >= QDEV_SPEC_ROWS) &&
              job->q->order.nops <= QDEV_SPEC_MAX &&
              (!job->q->has_where || job->q->where.nops <= QDEV_SPEC_MAX);
    c->thr = !c->bad && p.v[QP_THR] != 0;
    c->qrb = (int)p.v[QP_QRB];
    if (c->qrb & (c->qrb - 1))
        c->bad = 1, snprintf(why, whylen, "CLTOPK_QUERY qrb=%d: not a power of two", c->qrb);
    c->fgroups = (unsigned)p.v[QP_FGROUPS] *
                 (ctx->caps.compute_units ? ctx->caps.compute_units : 1);
    /* the sample-filter query: GPUs from QDEV_SF_ROWS rows, or named */
    int path = (int)p.v[QP_PATH];
    c->sf = 0;
    c->srt = 0;
    c->sf_forced = path == QPATH_SF;
    c->force = (unsigned)p.v[QP_FORCE];
    c->check = (unsigned)p.v[QP_CHECK];
    /* the one read's lazy loads: specialised kernels only (the interpreter
     * loads a row's columns as it evaluates) */
    c->lazy = c->spec ? (unsigned)p.v[QP_LAZY] : 0u;
    c->lazydiv = (unsigned)p.v[QP_LAZYDIV];
    snprintf(c->sf_why, sizeof c->sf_why, "%s",
             path == QPATH_TILE                          ? "CLTOPK_QUERY=path=tile"
             : !gpu && path == QPATH_AUTO                ? "not a GPU"
                                                         : "fewer than 2^22 rows");
    unsigned s0 = p.v[QP_S] > 0 ? (unsigned)p.v[QP_S]
                  : gpu ? (unsigned)(job->n / 2048 > 65536 ? (job->n / 2048 < 262144
                                                                  ? job->n / 2048 : 262144)
                                                           : 65536)
                        : 4096;
    if (!c->bad &&
        (path == QPATH_SF || (path == QPATH_AUTO && gpu && job->n >= QDEV_SF_ROWS))) {
        c->srt = (unsigned)p.v[QP_SRT];
        if (c->spec) { /* whole batches */
            unsigned rb = (unsigned)qdev_rb(job, c);
            c->srt = (c->srt + rb - 1) / rb * rb;
        }
        if (!qdev_sf_sample(job->n, job->k, tl, (size_t)wg * c->srt, s0, &c->s, &c->rank,
                            &c->sgroups)) {
            snprintf(c->sf_why, sizeof c->sf_why, "too few rows for a sample (n = %zu, k = %zu)",
                     job->n, job->k);
        } else {
            double bound = ((double)c->rank + 6.0 * sqrt((double)c->rank) + 16.0) *
                           (double)job->n / (double)c->s;
            c->cap = p.v[QP_CAP] > 0 ? (size_t)p.v[QP_CAP]
                     : bound < (double)job->n ? (size_t)ceil(bound) : job->n;
            c->sf = 1;
        }
    }
    return 1;
}

int cltopk_query_dev_can(cltopk_context *ctx, const cltopk_query_job *job, char *why,
                         size_t whylen)
{
    qdev_cfg c;
    return qdev_config(ctx, job, &c, why, whylen);
}

/* append to the options o (len bytes, *at used): 0, or -1 when they do not
 * fit */
static int qdev_put(char *o, size_t len, size_t *at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(o + *at, len - *at, fmt, ap);
    va_end(ap);
    if (w < 0 || (size_t)w >= len - *at)
        return -1;
    *at += (size_t)w;
    return 0;
}

/* the options of one program pr under prefix P (QO_ or QW_; see cl/query.cl):
 * its length, then per step the operation, the slot it writes (the stack
 * depth before it less what it pops) and its operand (a column, a comparison,
 * or the index of a constant, which the kernel reads from its buffer: a
 * query that differs only in its constants reuses the program); the columns it reads added to *cols (bit r: column r) */
static int qdev_spec_prog(char *o, size_t len, size_t *at, const char *P, const expr_prog *pr,
                          unsigned *cols)
{
    int st = qdev_put(o, len, at, " -D %sN=%d", P, pr->nops), sp = 0;
    for (int i = 0; i < pr->nops && !st; i++) {
        const unsigned op = pr->ops[i] & 255u, a = pr->ops[i] >> 8;
        int pop;
        switch (op) {
        case XOP_COLF: case XOP_COLI: case XOP_CONF: case XOP_CONI: pop = 0; break;
        case XOP_NEG: case XOP_ABS: case XOP_SQRT: case XOP_LOG: case XOP_EXP: case XOP_FLOOR:
        case XOP_CEIL: case XOP_NOT: pop = 1; break;
        case XOP_SEL: case XOP_FMA: pop = 3; break;
        default: pop = 2; break; /* the binary operations and comparisons */
        }
        const int slot = sp - pop;
        st = qdev_put(o, len, at, " -D %sOP%d=%u -D %sS%d=%d", P, i, op, P, i, slot);
        if (!st && (op == XOP_COLF || op == XOP_COLI || op == XOP_CMPF || op == XOP_CMPI))
            st = qdev_put(o, len, at, " -D %sA%d=%u", P, i, a);
        if (!st && (op == XOP_CONF || op == XOP_CONI)) /* the index of its constant */
            st = qdev_put(o, len, at, " -D %sA%d=%u", P, i, a);
        if (op == XOP_COLF || op == XOP_COLI)
            *cols |= 1u << a;
        sp = slot + 1;
    }
    return st;
}

/* the options of a build (pb: tile.h's PB, 16 for the kernels that read rows
 * (QROWS 1), 31 for those that read candidates; spec: specialised to the
 * job's programs; kernels: cl/query.cl's QKERNELS, the kernels it holds) into o: 0, or -1 when they do not fit */
static int qdev_opts(cltopk_context *ctx, const cltopk_query_job *job, const qdev_cfg *c,
                     int pb, int spec, int kernels, char *o, size_t len)
{
    size_t at = 0;
    int st = qdev_put(o, len, &at,
                      "-D KEY_BITS=%d -D KEY_KIND=2 -D WG=%u -D RT=%d -D MCAP=%u -D PB=%d "
                      "-D QKERNELS=%d -D QROWS=%d -D F64=%d -D DIV64=%d -D QTHR=%d -D QSF_LSEG=%d "
                      "-D QSF_SRT=%u%s",
                      job->q->score64 ? 64 : 32, c->wg, QDEV_RT, c->mcap, pb, kernels, pb == 16,
                      ctx->caps.fp64 ? 1 : 0, c->div64, c->thr, QDEV_SF_LSEG,
                      c->srt ? c->srt : QDEV_RT,
                      c->crdiv ? " -cl-fp32-correctly-rounded-divide-sqrt" : "");
    if (!st && job->blk)
        st = qdev_put(o, len, &at, " -D QBB=%zu -D QBS=%zu", job->blk, job->blk_stride);
    if (st || !spec)
        return st;
    const expr_query *q = job->q;
    unsigned ocols = 0, wcols = 0;
    st = qdev_put(o, len, &at, " -D QSPEC=1");
    /* POCL 6 (Debian 13) aborts the process in LLVM ("Instruction Combining
     * did not reach a fixpoint") on some specialised programs; built
     * without optimisation they compile (CPU devices take the interpreter
     * unless CLTOPK_QUERY=spec=1 asks for this kernel) */
    if (!st && strstr(ctx->caps.platform_name, "Portable Computing Language"))
        st = qdev_put(o, len, &at, " -cl-opt-disable");
    for (int r = 0; r < EXPR_MAX_REFS && !st; r++) /* unused columns: any type */
        st = qdev_put(o, len, &at, " -D QCT%d=%d", r, r < q->nrefs ? job->types[r] : 0);
    if (!st)
        st = qdev_spec_prog(o, len, &at, "QO_", &q->order, &ocols);
    if (!st && q->has_where)
        st = qdev_spec_prog(o, len, &at, "QW_", &q->where, &wcols);
    else if (!st)
        st = qdev_put(o, len, &at, " -D QW_N=0");
    int rb = qdev_rb(job, c);
    if (!st)
        st = qdev_put(o, len, &at, " -D QO_COLS=%uu -D QW_COLS=%uu -D QRB=%d", ocols, wcols, rb);
    return st;
}

static void qdev_explain_rows(cltopk_context *ctx, const cltopk_query_job *job, char *buf,
                              size_t len)
{
    qdev_cfg c;
    char why[256];
    if (!qdev_config(ctx, job, &c, why, sizeof why)) {
        snprintf(buf, len, "cannot run it: %s", why);
        return;
    }
    if (c.bad) {
        snprintf(buf, len, "refuses it: %s", why);
        return;
    }
    const expr_query *q = job->q;
    const char *thr = c.thr ? ", a threshold that k rows beat" : "";
    const int gpu_dev = (ctx->caps.type & CL_DEVICE_TYPE_GPU) != 0;
    if (!c.spec) {
        snprintf(buf, len, "the interpreter of cl/query.cl (%s): one program for every query, "
                 "a register tile a work-group%s, merges of tiles",
                 q->order.nops > QDEV_SPEC_MAX || (q->has_where && q->where.nops > QDEV_SPEC_MAX)
                     ? "a program longer than the specialised kernel unrolls"
                 : c.spec_auto ? (gpu_dev ? "fewer than 2^22 rows, where the specialised kernel "
                                            "saves less than its build costs; "
                                            "CLTOPK_QUERY=spec=1 forces it"
                                          : "a CPU device, where the specialised kernel saves "
                                            "less than its build costs; CLTOPK_QUERY=spec=1 "
                                            "forces it")
                               : "CLTOPK_QUERY=spec=0", thr);
        return;
    }
    enum { OPTS = 12288 };
    char *opts = malloc(OPTS);
    int built = opts && !qdev_opts(ctx, job, &c, 16, 1, c.sf, opts, OPTS) &&
                cltopk_program_cached(ctx, "query.cl", opts);
    free(opts);
    snprintf(buf, len, "cl/query.cl specialised to this query (-D options from its programs: "
             "%d + %d steps on named registers, typed loads, each column read once a row), a "
             "register tile a work-group%s, merges of tiles; %s",
             q->order.nops, q->has_where ? q->where.nops : 0, thr,
             built ? "already built in this context"
                   : "a distinct query is one more program build on its first call (some "
                     "0.1 to 0.5 s on GPU drivers, seconds on POCL; then the program caches, "
                     "memory and disk); CLTOPK_QUERY=spec=0 takes the interpreter instead");
}

void cltopk_query_dev_explain(cltopk_context *ctx, const cltopk_query_job *job, char *buf,
                              size_t len)
{
    qdev_cfg c;
    char why[256];
    qdev_explain_rows(ctx, job, buf, len);
    if (!qdev_config(ctx, job, &c, why, sizeof why) || c.bad)
        return;
    size_t at = strlen(buf);
    if (c.sf) {
        char lazy[160] = "";
        if (job->q->has_where && c.lazy == 2)
            snprintf(lazy, sizeof lazy, "; it reads the score's columns only for the rows "
                     "passing the filter where fewer than 1/%u of the sample passes (decided "
                     "on the device)", c.lazydiv);
        else if (c.lazy == 1)
            snprintf(lazy, sizeof lazy, "; it reads the score's columns only for the rows "
                     "passing the filter (CLTOPK_QUERY lazy=1)");
        snprintf(buf + at, len - at, "; as the sample-filter query (CLTOPK_QUERY path=sf%s): a "
                 "threshold from %u sampled rows (rank %u, %u a work-item), one read keeping "
                 "the rows at or above it (a buffer of %zu), their top k, the tile query its "
                 "exact fallback decided on the device%s",
                 c.sf_forced ? "" : ", auto on GPUs from 2^22 rows", c.s, c.rank, c.srt, c.cap,
                 lazy);
    } else
        snprintf(buf + at, len - at, "; the tile query (not the sample-filter query: %s)",
                 c.sf_why);
}

/* what a call's launches share: the columns, their offsets and types, the
 * programs and their constants (the first 14 arguments of the row kernels) */
typedef struct {
    cl_mem cols[8], offs, ops, con, wcon;
    cl_mem count, thr; /* the tile query's rows passing and threshold, zero */
    cl_uint nord, nwhere;
} qdev_common;

/* arguments 0 .. 13 of a row kernel, then nargs more (size, pointer pairs)
 * from 14 */
static int qdev_args(cltopk_context *ctx, cl_kernel kern, const qdev_common *cm, int nargs, ...)
{
    int st = cltopk_set_args(ctx, kern, 14, sizeof(cl_mem), &cm->cols[0], sizeof(cl_mem),
                             &cm->cols[1], sizeof(cl_mem), &cm->cols[2], sizeof(cl_mem),
                             &cm->cols[3], sizeof(cl_mem), &cm->cols[4], sizeof(cl_mem),
                             &cm->cols[5], sizeof(cl_mem), &cm->cols[6], sizeof(cl_mem),
                             &cm->cols[7], sizeof(cl_mem), &cm->offs, sizeof(cl_mem), &cm->ops,
                             sizeof cm->nord, &cm->nord, sizeof cm->nwhere, &cm->nwhere,
                             sizeof(cl_mem), &cm->con, sizeof(cl_mem), &cm->wcon);
    va_list ap;
    va_start(ap, nargs);
    for (int i = 0; i < nargs && st == CLTOPK_OK; i++) {
        size_t size = va_arg(ap, size_t);
        const void *val = va_arg(ap, const void *);
        cl_int err = clSetKernelArg(kern, (cl_uint)(14 + i), size, val);
        if (err != CL_SUCCESS) {
            char what[64];
            snprintf(what, sizeof what, "clSetKernelArg(%d) of a query kernel", 14 + i);
            st = cltopk_clfail(ctx, err, what);
        }
    }
    va_end(ap);
    return st;
}

/* the programs, their constants, the columns' offsets and types and two
 * zero words (the tile query's count and threshold) into cm: written to one
 * scratch slot by one blocking write that follows the context's work, each
 * part a sub-buffer at the device's base address alignment (released by
 * qdev_common_free).  On NVIDIA's driver six buffers made with
 * CL_MEM_COPY_HOST_PTR each cost a copy at their first use: gaps of 10-50 us
 * between a call's launches on the H200. */
enum { QC_OPS, QC_CON, QC_WCON, QC_OFFS, QC_COUNT, QC_THR, QC_N };
static int qdev_common_make(cltopk_context *ctx, const cltopk_query_job *job, qdev_common *cm)
{
    const expr_query *q = job->q;
    memset(cm, 0, sizeof *cm);
    cm->nord = (cl_uint)q->order.nops;
    cm->nwhere = q->has_where ? (cl_uint)q->where.nops : 0;
    cl_ulong offs[16] = {0}; /* byte offsets, then types */
    for (int r = 0; r < q->nrefs; r++) {
        offs[r] = job->doffs[r] * cltopk_dtype_size((cltopk_dtype)job->types[r]);
        offs[8 + r] = (cl_ulong)job->types[r];
    }
    const size_t size[QC_N] = {(size_t)(cm->nord + cm->nwhere) * 4,
                               (size_t)q->order.nconsts * 8,
                               (size_t)(q->has_where ? q->where.nconsts : 0) * 8, sizeof offs, 4,
                               4};
    size_t align = ctx->caps.base_align, at[QC_N], total = 0; /* (>= 8) */
    for (int i = 0; i < QC_N; i++) {
        at[i] = total;
        total += ((size[i] ? size[i] : 8) + align - 1) / align * align;
    }
    unsigned char *h = calloc(1, total);
    if (!h)
        return cltopk_fail(ctx, CLTOPK_ERR_NO_MEMORY, "the device query: out of host memory");
    memcpy(h + at[QC_OPS], q->order.ops, (size_t)cm->nord * 4);
    if (cm->nwhere)
        memcpy(h + at[QC_OPS] + (size_t)cm->nord * 4, q->where.ops, (size_t)cm->nwhere * 4);
    memcpy(h + at[QC_CON], q->order.consts, size[QC_CON]);
    if (size[QC_WCON])
        memcpy(h + at[QC_WCON], q->where.consts, size[QC_WCON]);
    memcpy(h + at[QC_OFFS], offs, sizeof offs);
    cl_mem whole;
    int st = cltopk_scratch(ctx, SCR_QDEV, total, &whole);
    if (st == CLTOPK_OK)
        st = cltopk_write_own(ctx, whole, h, total, "writing the query's programs to the device");
    free(h);
    cl_mem *part[QC_N] = {&cm->ops, &cm->con, &cm->wcon, &cm->offs, &cm->count, &cm->thr};
    for (int i = 0; i < QC_N && st == CLTOPK_OK; i++) {
        cl_buffer_region r = {at[i], size[i] ? size[i] : 8};
        cl_int err;
        *part[i] = clCreateSubBuffer(whole, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &r,
                                     &err);
        if (!*part[i])
            st = cltopk_clfail(ctx, err, "clCreateSubBuffer (the query's programs)");
    }
    for (int r = 0; r < 8; r++)
        cm->cols[r] = r < q->nrefs ? job->dcols[r] : cm->ops; /* unused: any buffer */
    return st;
}

/* sub-buffers released now are freed once the launches are done with them */
static void qdev_common_free(qdev_common *cm)
{
    cl_mem mine[] = {cm->ops, cm->con, cm->wcon, cm->offs, cm->count, cm->thr};
    for (size_t i = 0; i < sizeof mine / sizeof mine[0]; i++)
        if (mine[i])
            clReleaseMemObject(mine[i]);
}

/* the two programs of a call: the tile program (specialised where c says)
 * and the merge program (the interpreter, rows as positions); kernels named
 * tnames from the first, mnames from the second; kernels: which the
 * programs hold (cl/query.cl's QKERNELS) */
static int qdev_kernels(cltopk_context *ctx, const cltopk_query_job *job, const qdev_cfg *c,
                        int kernels, const char *const *tnames, cl_kernel *tk, int nt,
                        const char *const *mnames, cl_kernel *mk, int nm)
{
    enum { OPTS = 12288 };
    char *opts = malloc(OPTS), mopts[512];
    if (!opts)
        return cltopk_fail(ctx, CLTOPK_ERR_NO_MEMORY, "the device query: out of host memory");
    int st = CLTOPK_OK;
    if (qdev_opts(ctx, job, c, 16, c->spec, kernels, opts, OPTS) ||
        qdev_opts(ctx, job, c, 31, 0, kernels, mopts, sizeof mopts))
        st = cltopk_fail(ctx, CLTOPK_ERR_INTERNAL, "the device query: build options too long");
    for (int i = 0; i < nt && st == CLTOPK_OK; i++)
        st = cltopk_kernel_get(ctx, "query.cl", opts, tnames[i], &tk[i]);
    for (int i = 0; i < nm && st == CLTOPK_OK; i++)
        st = cltopk_kernel_get(ctx, "query.cl", mopts, mnames[i], &mk[i]);
    free(opts);
    return st;
}

/* a query's merge levels: groups groups' candidates (k each) in cu[cur] /
 * ci[cur], parts groups' a group, until one group writes the outputs; the
 * rows passing the filter in count[0]; launches gated by gmode (cl/query.cl:
 * GATE_ARGS) on the state st */
typedef struct {
    cl_kernel km;
    const qdev_common *cm;
    cl_uint k, parts, want;
    cl_mem os, oi, oc, st;
    size_t wg;
} qdev_merge_run;

static int qdev_merges(cltopk_context *ctx, const qdev_merge_run *m, size_t groups, cl_mem *cu,
                       cl_mem *ci, int cur, cl_mem count, cl_uint gmode)
{
    int st = CLTOPK_OK;
    for (;;) {
        size_t next = (groups + m->parts - 1) / m->parts;
        cl_ulong ncand = (cl_ulong)groups * m->k;
        cl_uint fin = next == 1;
        st = qdev_args(ctx, m->km, m->cm, 15, sizeof m->k, &m->k, sizeof m->parts, &m->parts,
                       sizeof ncand, &ncand, sizeof(cl_mem), &cu[cur], sizeof(cl_mem), &ci[cur],
                       sizeof(cl_mem), &cu[!cur], sizeof(cl_mem), &ci[!cur], sizeof fin, &fin,
                       sizeof(cl_mem), &count, sizeof(cl_mem), &m->os, sizeof(cl_mem), &m->oi,
                       sizeof(cl_mem), &m->oc, sizeof m->want, &m->want, sizeof(cl_mem), &m->st,
                       sizeof gmode, &gmode);
        if (st == CLTOPK_OK)
            st = cltopk_launch(ctx, m->km, next * m->wg, m->wg, 0, NULL);
        if (fin || st != CLTOPK_OK)
            return st;
        groups = next;
        cur = !cur;
    }
}

/* CLTOPK_QUERY=check=served|fallback: wait for the call and read which path
 * the sample-filter query took */
static int qdev_check(cltopk_context *ctx, const qdev_cfg *c, cl_mem state)
{
    cl_uint w[8] = {0};
    cl_event *own;
    cl_uint nown = cltopk_after_own(ctx, &own);
    cl_int err = clEnqueueReadBuffer(ctx->queue, state, CL_TRUE, 0, sizeof w, w, nown, own, NULL);
    if (err != CL_SUCCESS)
        return cltopk_clfail(ctx, err, "CLTOPK_QUERY check: reading the query's state");
    unsigned want = c->check == QCHECK_SERVED ? 1u : 2u;
    if (w[6] != want)
        return cltopk_fail(ctx, CLTOPK_ERR_INTERNAL,
                           "CLTOPK_QUERY check=%s: the sample-filter query %s (%u survivors, "
                           "%u rows passing, buffer %zu, sample %u, rank %u)",
                           want == 1 ? "served" : "fallback",
                           w[6] == 1 ? "was served by its survivors" : "fell back", w[1], w[0],
                           c->cap, c->s, c->rank);
    return CLTOPK_OK;
}

int cltopk_query_dev(cltopk_context *ctx, const cltopk_query_job *job, cl_uint num_wait,
                     const cl_event *wait)
{
    qdev_cfg c;
    char why[256];
    if (!qdev_config(ctx, job, &c, why, sizeof why) || c.bad)
        return cltopk_fail(ctx, CLTOPK_ERR_UNSUPPORTED, "the device query: %s", why);
    const expr_query *q = job->q;
    static const char *const tnames[] = {"query_tile", "qsf_sample", "qsf_filter",
                                         "qsf_filter_lazy"};
    static const char *const mnames[] = {"query_merge", "qsf_thresh", "qsf_reduce"};
    cl_kernel tk[4] = {NULL}, mk[3] = {NULL};
    int nk = c.sf ? 3 : 1;
    int st = qdev_kernels(ctx, job, &c, c.sf, tnames, tk, nk + (c.sf && c.spec), mnames, mk, nk);
    qdev_common cm;
    if (st == CLTOPK_OK)
        st = qdev_common_make(ctx, job, &cm);
    else
        memset(&cm, 0, sizeof cm);
    cl_mem mcount = cm.count, mthr = cm.thr, state = NULL;
    size_t tl = (size_t)c.wg * QDEV_RT, groups = (job->n + tl - 1) / tl;
    size_t kb = q->score64 ? 8 : 4;
    cl_uint parts = (cl_uint)(tl / job->k);
    /* candidates: [0] the tiles' (and the survivors), [1] the next level's
     * (and the samples', and the survivors cut by qsf_reduce) */
    size_t n0 = groups * job->k, n1 = (groups + parts - 1) / parts * job->k;
    size_t sgroups = 0, rgroups = 0;
    if (c.sf) {
        sgroups = c.sgroups;
        rgroups = (c.cap + tl - 1) / tl;
        n0 = n0 > c.cap ? n0 : c.cap;
        n1 = n1 > sgroups * c.rank ? n1 : sgroups * c.rank;
        n1 = n1 > rgroups * job->k ? n1 : rgroups * job->k;
        n0 = n0 > (rgroups + parts - 1) / parts * job->k ? n0
                                                         : (rgroups + parts - 1) / parts * job->k;
    }
    cl_mem cu[2] = {NULL, NULL}, ci[2] = {NULL, NULL};
    if (st == CLTOPK_OK &&
        (st = cltopk_scratch(ctx, SCR_CAND_U0, n0 * kb, &cu[0])) == CLTOPK_OK &&
        (st = cltopk_scratch(ctx, SCR_CAND_I0, n0 * 4, &ci[0])) == CLTOPK_OK &&
        (st = cltopk_scratch(ctx, SCR_CAND_U1, n1 * kb, &cu[1])) == CLTOPK_OK)
        st = cltopk_scratch(ctx, SCR_CAND_I1, n1 * 4, &ci[1]);
    if (st == CLTOPK_OK)
        st = cltopk_scratch(ctx, SCR_QSF_STATE, (QDEV_SF_WORDS + sgroups) * 4, &state);
    cl_ulong n = job->n;
    cl_uint k = (cl_uint)job->k, sm = (cl_uint)job->smallest;
    qdev_merge_run mr = {
        .km = mk[0], .cm = &cm, .k = k, .parts = parts,
        .want = (job->dout_scores ? 1u : 0u) | (job->dout_index ? 2u : 0u) |
                (job->dout_count ? 4u : 0u),
        .os = job->dout_scores ? job->dout_scores : mcount,
        .oi = job->dout_index ? job->dout_index : mcount,
        .oc = job->dout_count ? job->dout_count : mcount,
        .st = state, .wg = c.wg};
    int first = 1; /* the first launch waits for the caller's list */
    cl_uint gtile = 0;
    if (st == CLTOPK_OK && c.sf) {
        /* the sample, the threshold, the one read, the survivors cut to k a
         * group, their merges: then the tile query, gated on the decision */
        cl_uint s = c.s, rank = c.rank, force = c.force, ncand = (cl_uint)(sgroups * rank);
        cl_uint cap = (cl_uint)c.cap;
        cl_ulong seed = 0x5DEECE66DULL ^ ((cl_ulong)job->n * 0x9E3779B97F4A7C15ULL) ^ job->k;
        cl_uint lazy = c.lazy, lazydiv = c.lazydiv;
        st = qdev_args(ctx, tk[1], &cm, 8, sizeof n, &n, sizeof sm, &sm, sizeof s, &s,
                       sizeof rank, &rank, sizeof seed, &seed, sizeof(cl_mem), &cu[1],
                       sizeof(cl_mem), &ci[1], sizeof(cl_mem), &state);
        if (st == CLTOPK_OK)
            st = cltopk_launch(ctx, tk[1], sgroups * c.wg, c.wg, num_wait, wait);
        first = 0;
        if (st == CLTOPK_OK &&
            (st = cltopk_set_args(ctx, mk[1], 9, sizeof rank, &rank, sizeof ncand, &ncand,
                                  sizeof force, &force, sizeof lazy, &lazy, sizeof s, &s,
                                  sizeof lazydiv, &lazydiv, sizeof(cl_mem), &cu[1],
                                  sizeof(cl_mem), &ci[1], sizeof(cl_mem), &state)) == CLTOPK_OK)
            st = cltopk_launch(ctx, mk[1], c.wg, c.wg, 0, NULL);
        /* qsf_filter, then qsf_filter_lazy: the one qsf_thresh did not
         * choose returns at once */
        for (int f = 2; f < 4 && tk[f] && st == CLTOPK_OK; f++)
            if ((st = qdev_args(ctx, tk[f], &cm, 6, sizeof n, &n, sizeof sm, &sm, sizeof cap,
                                &cap, sizeof(cl_mem), &cu[0], sizeof(cl_mem), &ci[0],
                                sizeof(cl_mem), &state)) == CLTOPK_OK)
                st = cltopk_launch(ctx, tk[f], (groups < c.fgroups ? groups : c.fgroups) * c.wg,
                                   c.wg, 0, NULL);
        if (st == CLTOPK_OK &&
            (st = cltopk_set_args(ctx, mk[2], 7, sizeof k, &k, sizeof cap, &cap, sizeof(cl_mem),
                                  &cu[0], sizeof(cl_mem), &ci[0], sizeof(cl_mem), &cu[1],
                                  sizeof(cl_mem), &ci[1], sizeof(cl_mem), &state)) == CLTOPK_OK)
            st = cltopk_launch(ctx, mk[2], rgroups * c.wg, c.wg, 0, NULL);
        if (st == CLTOPK_OK)
            st = qdev_merges(ctx, &mr, rgroups, cu, ci, 1, state, 1);
        gtile = 2;
    }
    if (st == CLTOPK_OK &&
        (st = qdev_args(ctx, tk[0], &cm, 9, sizeof n, &n, sizeof k, &k, sizeof sm, &sm,
                        sizeof(cl_mem), &cu[0], sizeof(cl_mem), &ci[0], sizeof(cl_mem), &mcount,
                        sizeof(cl_mem), &mthr, sizeof(cl_mem), &state, sizeof gtile,
                        &gtile)) == CLTOPK_OK)
        st = cltopk_launch(ctx, tk[0],
                           (gtile && groups > c.fgroups ? c.fgroups : groups) * c.wg, c.wg,
                           first ? num_wait : 0, first ? wait : NULL);
    if (st == CLTOPK_OK)
        st = qdev_merges(ctx, &mr, groups, cu, ci, 0, mcount, gtile);
    if (st == CLTOPK_OK && c.sf && c.check != QCHECK_NONE)
        st = qdev_check(ctx, &c, state);
    qdev_common_free(&cm);
    for (int i = 0; i < 4; i++)
        if (tk[i])
            clReleaseKernel(tk[i]);
    for (int i = 0; i < 3; i++)
        if (mk[i])
            clReleaseKernel(mk[i]);
    return st;
}

int cltopk_query_dev_scores(cltopk_context *ctx, const cltopk_query_job *job, cl_mem scores)
{
    qdev_cfg c;
    char why[256];
    if (!qdev_config(ctx, job, &c, why, sizeof why) || c.bad)
        return cltopk_fail(ctx, CLTOPK_ERR_UNSUPPORTED, "the device query: %s", why);
    static const char *const names[] = {"query_score"};
    cl_kernel ks = NULL;
    int st = qdev_kernels(ctx, job, &c, 2, names, &ks, 1, NULL, NULL, 0);
    qdev_common cm;
    if (st == CLTOPK_OK)
        st = qdev_common_make(ctx, job, &cm);
    else
        memset(&cm, 0, sizeof cm);
    size_t tl = (size_t)c.wg * QDEV_RT, groups = (job->n + tl - 1) / tl;
    cl_ulong n = job->n;
    cl_uint sm = (cl_uint)job->smallest;
    if (st == CLTOPK_OK &&
        (st = qdev_args(ctx, ks, &cm, 3, sizeof n, &n, sizeof sm, &sm, sizeof(cl_mem),
                        &scores)) == CLTOPK_OK)
        st = cltopk_launch(ctx, ks, groups * c.wg, c.wg, 0, NULL);
    qdev_common_free(&cm);
    if (ks)
        clReleaseKernel(ks);
    return st;
}

#endif
