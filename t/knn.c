/* knn.c - cltopk_knn and cltopk_knn_buffer against an oracle of the definition.
 *
 * The oracle computes every distance of a query with the definition of
 * cltopk.h written out here (fmaf in dimension order from 0.0f; a NaN as
 * 0x7FC00000) and ranks them with oracle_order (a plain stable sort: smallest
 * first for L2, largest first for the inner product, NaN above +inf, ties by
 * smaller point index).  Run on the "cpu" context and on the OpenCL test
 * device (host and cl_mem forms), so that both are checked bit for bit
 * against the same answer.  Cases: random points of several dimensions (not
 * multiples of 4), k = 1, 10 and np, duplicate points (ties by index), all
 * points equal, NaN and inf coordinates, queries equal to points; bad
 * arguments (negative status, a detail, outputs untouched).  On the OpenCL
 * device also the distance tiles of cl/knn.cl on each of their paths
 * (tiles(), forced with CLTOPK_KNN).  t/knn_scalar.t is the same with the
 * scalar CPU kernels (CLTOPK_CPU_ISA=scalar). */
#include "testlib.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static rng_t rng;
#define POISON 0xA5

static float dist_def(const float *q, const float *p, size_t d, int ip)
{
    float acc = 0.0f;
    for (size_t j = 0; j < d; j++)
        acc = ip ? fmaf(q[j], p[j], acc) : fmaf(q[j] - p[j], q[j] - p[j], acc);
    if (acc != acc) {
        uint32_t n = 0x7FC00000u;
        memcpy(&acc, &n, 4);
    }
    return acc;
}

static float uniform(void)
{
    return (float)((double)rng_below(&rng, 1u << 24) / (1u << 23) - 1.0);
}

/* one call (host or cl_mem) with poisoned outputs of `want`, against the oracle */
static void check(cltopk_context *ctx, const char *dev, int buffer, const char *what, int ip,
                  const float *qs, size_t nq, const float *ps, size_t np, size_t d, size_t k,
                  int want)
{
    size_t count = nq * k;
    float *ed = bmalloc(count * 4 + 4), *od = bmalloc((count + GUARD) * 4);
    int64_t *ei = bmalloc(count * 8 + 8), *oi = bmalloc((count + GUARD) * 8);
    float *row = bmalloc(np * 4 + 4);
    for (size_t q = 0; q < nq; q++) {
        for (size_t j = 0; j < np; j++)
            row[j] = dist_def(qs + q * d, ps + j * d, d, ip);
        int64_t *perm = oracle_order(CLTOPK_FLOAT32, row, np, !ip);
        for (size_t i = 0; i < k; i++) {
            ei[q * k + i] = perm[i];
            ed[q * k + i] = row[perm[i]];
        }
        free(perm);
    }
    memset(od, POISON, (count + GUARD) * 4);
    memset(oi, POISON, (count + GUARD) * 8);
    float *odp = want & WANT_KEYS ? od : NULL;
    int64_t *oip = want & WANT_INDEX ? oi : NULL;
    cltopk_metric m = ip ? CLTOPK_INNER_PRODUCT : CLTOPK_L2SQ;
    int st;
#if CLTOPK_HAVE_OPENCL
    if (buffer) {
        cl_context c;
        cl_device_id dv;
        cl_command_queue cq;
        cltopk_get_cl(ctx, &c, &dv, &cq);
        size_t qo = 3, po = 7;
        float *qb = bmalloc((nq * d + qo) * 4), *pb = bmalloc((np * d + po) * 4);
        memset(qb, 0x7F, qo * 4);
        memset(pb, 0x7F, po * 4);
        memcpy(qb + qo, qs, nq * d * 4);
        memcpy(pb + po, ps, np * d * 4);
        cl_int err;
        cl_mem mq = clCreateBuffer(c, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                                   (nq * d + qo) * 4, qb, &err);
        cl_mem mp = clCreateBuffer(c, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                                   (np * d + po) * 4, pb, &err);
        cl_mem md = clCreateBuffer(c, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                                   (count + GUARD) * 4, od, &err);
        cl_mem mi = clCreateBuffer(c, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                                   (count + GUARD) * 8, oi, &err);
        free(qb);
        free(pb);
        if (!mq || !mp || !md || !mi)
            bail("clCreateBuffer: %d", (int)err);
        cl_event done = NULL;
        st = cltopk_knn_buffer(ctx, m, mq, qo, nq, mp, po, np, d, k, odp ? md : NULL,
                               oip ? mi : NULL, 0, NULL, &done);
        if (st == CLTOPK_OK) {
            if (odp)
                clEnqueueReadBuffer(cq, md, CL_TRUE, 0, (count + GUARD) * 4, od, 1, &done, NULL);
            if (oip)
                clEnqueueReadBuffer(cq, mi, CL_TRUE, 0, (count + GUARD) * 8, oi, 1, &done, NULL);
            clReleaseEvent(done);
        }
        clReleaseMemObject(mq);
        clReleaseMemObject(mp);
        clReleaseMemObject(md);
        clReleaseMemObject(mi);
    } else
#endif
        st = cltopk_knn(ctx, m, qs, nq, ps, np, d, k, odp, oip);
    (void)buffer;
    char msg[200] = "";
    int good = st == CLTOPK_OK;
    for (size_t i = 0; good && i < count; i++) {
        if (oip && oi[i] != ei[i])
            snprintf(msg, sizeof msg, "index %zu: %lld, expected %lld", i, (long long)oi[i],
                     (long long)ei[i]), good = 0;
        else if (odp && memcmp(&od[i], &ed[i], 4))
            snprintf(msg, sizeof msg, "distance %zu: %a, expected %a", i, od[i], ed[i]), good = 0;
    }
    for (size_t g = 0; good && g < GUARD * 4; g++)
        if (((unsigned char *)(od + count))[g] != POISON ||
            ((unsigned char *)(oi + count))[g] != POISON)
            snprintf(msg, sizeof msg, "a guard was written"), good = 0;
    if (!ok(good, "%s%s knn %s %s: nq %zu np %zu d %zu k %zu want %d", dev,
            buffer ? " buffer" : "", ip ? "ip" : "l2", what, nq, np, d, k, want))
        diag("status %d (%s): %s", st, cltopk_last_error(ctx), msg);
    free(ed);
    free(od);
    free(ei);
    free(oi);
    free(row);
}

static void cases(cltopk_context *ctx, const char *dev, int buffer)
{
    enum { NP = 300, NQ = 5, DMAX = 33 };
    float *ps = bmalloc(NP * DMAX * 4), *qs = bmalloc(NQ * DMAX * 4);
    static const size_t dims[] = {1, 3, 7, 33};
    int turn = 0;
    for (size_t di = 0; di < sizeof dims / sizeof dims[0]; di++) {
        size_t d = dims[di];
        for (size_t i = 0; i < NP * d; i++)
            ps[i] = uniform();
        for (size_t i = 0; i < NQ * d; i++)
            qs[i] = uniform();
        for (int ip = 0; ip <= 1; ip++) {
            check(ctx, dev, buffer, "uniform", ip, qs, NQ, ps, NP, d, 1, 1 + turn++ % 3);
            check(ctx, dev, buffer, "uniform", ip, qs, NQ, ps, NP, d, 10, 1 + turn++ % 3);
        }
    }
    size_t d = 5;
    for (size_t i = 0; i < NP * d; i++)
        ps[i] = uniform();
    for (size_t i = 0; i < NQ * d; i++)
        qs[i] = uniform();
    check(ctx, dev, buffer, "uniform k = np", 0, qs, NQ, ps, NP, d, NP, WANT_BOTH);
    /* duplicates: point j and j + NP / 2 equal; a query equal to point 3 */
    memcpy(ps + NP / 2 * d, ps, NP / 2 * d * 4);
    memcpy(qs, ps + 3 * d, d * 4);
    check(ctx, dev, buffer, "duplicates", 0, qs, NQ, ps, NP, d, 10, WANT_BOTH);
    check(ctx, dev, buffer, "duplicates", 1, qs, NQ, ps, NP, d, 10, WANT_BOTH);
    /* all points equal */
    for (size_t j = 1; j < NP; j++)
        memcpy(ps + j * d, ps, d * 4);
    check(ctx, dev, buffer, "all equal", 0, qs, NQ, ps, NP, d, 20, WANT_BOTH);
    check(ctx, dev, buffer, "all equal", 1, qs, NQ, ps, NP, d, 20, WANT_BOTH);
    /* NaN and inf coordinates in points and a query */
    for (size_t i = 0; i < NP * d; i++)
        ps[i] = uniform();
    for (size_t j = 0; j < NP; j += 7)
        ps[j * d + j % d] = (j / 7) % 3 == 0 ? NAN : (j / 7) % 3 == 1 ? INFINITY : -INFINITY;
    qs[2 * d + 1] = INFINITY;
    qs[4 * d] = -NAN;
    check(ctx, dev, buffer, "nan/inf", 0, qs, NQ, ps, NP, d, 60, WANT_BOTH);
    check(ctx, dev, buffer, "nan/inf", 1, qs, NQ, ps, NP, d, 60, WANT_BOTH);
    free(ps);
    free(qs);
    /* more points than one block of the CPU kernel (1024), with duplicates
     * across blocks, and an odd number of queries */
    enum { NPB = 5000, NQB = 3, DB = 3 };
    ps = bmalloc(NPB * DB * 4);
    qs = bmalloc(NQB * DB * 4);
    for (size_t i = 0; i < NPB * DB; i++)
        ps[i] = (float)rng_below(&rng, 8);
    for (size_t i = 0; i < NQB * DB; i++)
        qs[i] = (float)rng_below(&rng, 8);
    check(ctx, dev, buffer, "blocks, ties", 0, qs, NQB, ps, NPB, DB, 50, WANT_BOTH);
    check(ctx, dev, buffer, "blocks, ties", 1, qs, NQB, ps, NPB, DB, 50, WANT_BOTH);
    free(ps);
    free(qs);
    /* several blocks with NaN and inf coordinates, more queries than the CPU
     * kernel's group of 8 (a part group), a query of NaN distances only: a
     * query's k-th best so far (the test that lets a block pass) may be NaN
     * (inner product: NaN first), inf, or a tie across blocks */
    enum { NPN = 4500, NQN = 11, DN = 6 };
    ps = bmalloc(NPN * DN * 4);
    qs = bmalloc(NQN * DN * 4);
    for (size_t i = 0; i < NPN * DN; i++)
        ps[i] = (float)rng_below(&rng, 4) - 1.5f;
    for (size_t j = 0; j < NPN; j += 3)
        ps[j * DN + j % DN] = (j / 3) % 5 == 0 ? NAN : (j / 3) % 5 == 1 ? INFINITY : ps[j * DN];
    for (size_t i = 0; i < NQN * DN; i++)
        qs[i] = (float)rng_below(&rng, 4) - 1.5f;
    qs[5 * DN + 2] = NAN;
    qs[7 * DN] = -INFINITY;
    for (int ip = 0; ip <= 1; ip++) {
        check(ctx, dev, buffer, "blocks, nan/inf", ip, qs, NQN, ps, NPN, DN, 7, WANT_BOTH);
        check(ctx, dev, buffer, "blocks, nan/inf", ip, qs, NQN, ps, NPN, DN, 400, WANT_BOTH);
    }
    free(ps);
    free(qs);
}

/* fill n floats: uniform, or small integers (many equal distances) */
static void fill(float *x, size_t n, int ints)
{
    for (size_t i = 0; i < n; i++)
        x[i] = ints ? (float)rng_below(&rng, 4) : uniform();
}

/* one shape, fresh data, both metrics */
static void shape(cltopk_context *ctx, const char *dev, int buffer, const char *what, size_t nq,
                  size_t np, size_t d, size_t k, int ints)
{
    float *ps = bmalloc(np * d * 4 + 4), *qs = bmalloc(nq * d * 4 + 4);
    fill(ps, np * d, ints);
    fill(qs, nq * d, ints);
    for (int ip = 0; ip <= 1; ip++)
        check(ctx, dev, buffer, what, ip, qs, nq, ps, np, d, k, ip ? WANT_BOTH : 1 + (int)(k % 3));
    free(ps);
    free(qs);
}

/* The device's distance tiles (cl/knn.cl) on every path: direct (np at most
 * the sample), sample + threshold + lists, lists that overflow (a query
 * recomputed over every point), several batches of queries, other tile
 * shapes, and the old kernel (tile=0); shapes that are not multiples of the
 * tile or the chunk, np below the sample, k = 1 and k = np, ties, all-equal
 * points, NaN and inf coordinates.  CLTOPK_KNN's defaults on a CPU device:
 * tiles of 16 queries x 32 points, a sample of 1024. */
static void tiles(cltopk_context *ctx, const char *dev, int buffer)
{
    static const struct {
        const char *env, *what;
        size_t nq, np, d, k;
        int ints;
    } sh[] = {
        {NULL, "tiles direct", 5, 700, 5, 7, 0},
        {NULL, "tiles direct k = np", 4, 129, 3, 129, 0},
        {NULL, "tiles direct k = 1", 17, 1000, 33, 1, 0},
        {NULL, "tiles lists", 37, 2000, 33, 10, 0},
        {NULL, "tiles lists d = 1", 9, 2500, 1, 5, 0},
        {NULL, "tiles lists ties", 21, 4099, 3, 64, 1},
        {NULL, "tiles lists k = 1", 70, 3001, 17, 1, 0},
        {"sample=64,per_k=1", "small sample", 19, 777, 9, 12, 0},
        {"sample=64,per_k=1", "small sample k = np", 3, 200, 4, 200, 0},
        {"sample=40,per_k=1,cap=360", "some lists overflow", 23, 900, 6, 16, 0},
        {"sample=16,per_k=1,cap=1", "every list overflows", 11, 500, 7, 9, 1},
        {"sample=100,per_k=1,batch=7", "batches of 7 queries", 30, 1000, 5, 8, 0},
        {"batch=3", "direct in batches of 3", 10, 300, 6, 4, 0},
        {"tq=8,tp=8,dc=4,sample=256", "tile 8 x 8, chunk 4", 13, 1100, 33, 10, 0},
        {"tq=32,tp=16,mq=8,mp=8,dc=64", "tile 32 x 16 of 8 x 8", 40, 2100, 70, 20, 0},
        {"tile=0", "tile=0 (rows_knn)", 6, 1500, 7, 10, 0},
    };
    for (size_t i = 0; i < sizeof sh / sizeof sh[0]; i++) {
        if (sh[i].env)
            setenv("CLTOPK_KNN", sh[i].env, 1);
        shape(ctx, dev, buffer, sh[i].what, sh[i].nq, sh[i].np, sh[i].d, sh[i].k, sh[i].ints);
        unsetenv("CLTOPK_KNN");
    }
    /* all points equal: every key ties with the threshold, every list
     * overflows (direct where the sample holds them all) */
    enum { NP = 3000, NQ = 7, D = 6 };
    float *ps = bmalloc(NP * D * 4), *qs = bmalloc(NQ * D * 4);
    fill(ps, D, 0);
    for (size_t j = 1; j < NP; j++)
        memcpy(ps + j * D, ps, D * 4);
    fill(qs, NQ * D, 0);
    for (int ip = 0; ip <= 1; ip++) {
        check(ctx, dev, buffer, "tiles all equal", ip, qs, NQ, ps, NP, D, 20, WANT_BOTH);
        setenv("CLTOPK_KNN", "sample=4096", 1);
        check(ctx, dev, buffer, "tiles all equal direct", ip, qs, NQ, ps, NP, D, 20, WANT_BOTH);
        unsetenv("CLTOPK_KNN");
    }
    /* NaN and inf coordinates on the lists' path: a query of NaN distances
     * (its threshold the NaN key: every point passes), one with inf ones */
    fill(ps, NP * D, 0);
    for (size_t j = 0; j < NP; j += 5)
        ps[j * D + j % D] = (j / 5) % 3 == 0 ? NAN : (j / 5) % 3 == 1 ? INFINITY : -INFINITY;
    qs[2 * D + 1] = INFINITY;
    qs[4 * D] = -NAN;
    for (int ip = 0; ip <= 1; ip++) {
        check(ctx, dev, buffer, "tiles nan/inf", ip, qs, NQ, ps, NP, D, 15, WANT_BOTH);
        setenv("CLTOPK_KNN", "sample=64,per_k=1,cap=700", 1);
        check(ctx, dev, buffer, "tiles nan/inf, small lists", ip, qs, NQ, ps, NP, D, 15,
              WANT_BOTH);
        unsetenv("CLTOPK_KNN");
    }
    free(ps);
    free(qs);
}

/* what explain says of the tiles, and a bad CLTOPK_KNN */
static void tiles_explain(cltopk_context *ctx, const char *dev)
{
    char buf[2048];
    int st = cltopk_explain_knn(ctx, CLTOPK_L2SQ, 100, 100000, 32, 10, 1, buf, sizeof buf);
    ok(st == CLTOPK_OK && strstr(buf, "distance tiles") && strstr(buf, "a sample of") &&
           strstr(buf, "-> bits"), "%s: explain_knn names the tiles and the sample", dev);
    st = cltopk_explain_knn(ctx, CLTOPK_L2SQ, 100, 500, 32, 10, 0, buf, sizeof buf);
    ok(st == CLTOPK_OK && strstr(buf, "matrix of every distance"),
       "%s: explain_knn: np below the sample is direct", dev);
    setenv("CLTOPK_KNN", "tile=0", 1);
    st = cltopk_explain_knn(ctx, CLTOPK_L2SQ, 100, 100000, 32, 10, 0, buf, sizeof buf);
    ok(st == CLTOPK_OK && strstr(buf, "computed in place") && !strstr(buf, "tiles"),
       "%s: explain_knn with CLTOPK_KNN=tile=0 names the old kernel", dev);
    setenv("CLTOPK_KNN", "mq=6", 1);
    st = cltopk_explain_knn(ctx, CLTOPK_L2SQ, 100, 100000, 32, 10, 0, buf, sizeof buf);
    ok(st == CLTOPK_OK && strstr(buf, "CLTOPK_KNN") && strstr(buf, "-> cpu-heap"),
       "%s: a bad CLTOPK_KNN: the device kernel refuses, AUTO takes the CPU", dev);
    unsetenv("CLTOPK_KNN");
}

/* a call that must fail with `expect`, a detail, nothing written */
static void refuse(cltopk_context *ctx, const char *dev, int expect, const char *what,
                   cltopk_metric m, const float *qs, size_t nq, const float *ps, size_t np,
                   size_t d, size_t k, int outs)
{
    float od[64];
    int64_t oi[64];
    memset(od, POISON, sizeof od);
    memset(oi, POISON, sizeof oi);
    int st = cltopk_knn(ctx, m, qs, nq, ps, np, d, k, outs & 1 ? od : NULL, outs & 2 ? oi : NULL);
    int untouched = 1;
    for (size_t i = 0; i < sizeof od; i++)
        untouched &= ((unsigned char *)od)[i] == POISON && ((unsigned char *)oi)[i] == POISON;
    const char *det = cltopk_last_error(ctx);
    if (!ok(st == expect && det[0] && untouched, "%s: knn %s -> %s", dev, what,
            cltopk_strerror(expect)))
        diag("status %d, detail \"%s\", outputs %s", st, det, untouched ? "untouched" : "written");
}

static void bad_args(cltopk_context *ctx, const char *dev)
{
    static float p[64], q[16];
    refuse(ctx, dev, CLTOPK_ERR_INVALID_ARGUMENT, "d = 0", CLTOPK_L2SQ, q, 2, p, 8, 0, 2, 3);
    refuse(ctx, dev, CLTOPK_ERR_INVALID_ARGUMENT, "nq = 0", CLTOPK_L2SQ, q, 0, p, 8, 4, 2, 3);
    refuse(ctx, dev, CLTOPK_ERR_K_RANGE, "k > np", CLTOPK_L2SQ, q, 2, p, 8, 4, 9, 3);
    refuse(ctx, dev, CLTOPK_ERR_INVALID_ARGUMENT, "unknown metric", (cltopk_metric)2, q, 2, p, 8,
           4, 2, 3);
    refuse(ctx, dev, CLTOPK_ERR_INVALID_ARGUMENT, "queries NULL", CLTOPK_L2SQ, NULL, 2, p, 8, 4,
           2, 3);
    refuse(ctx, dev, CLTOPK_ERR_INVALID_ARGUMENT, "points NULL", CLTOPK_L2SQ, q, 2, NULL, 8, 4,
           2, 3);
    refuse(ctx, dev, CLTOPK_ERR_INVALID_ARGUMENT, "both outputs NULL", CLTOPK_L2SQ, q, 2, p, 8,
           4, 2, 0);
    int st = cltopk_knn(ctx, CLTOPK_L2SQ, q, 2, p, 8, 4, 2, q + 1, NULL);
    ok(st == CLTOPK_ERR_INVALID_ARGUMENT && q[1] == 0.0f,
       "%s: knn output overlapping the queries -> INVALID_ARGUMENT", dev);
    st = cltopk_knn(ctx, CLTOPK_L2SQ, q, 2, p, 8, 4, 2, p + 1, NULL);
    ok(st == CLTOPK_ERR_INVALID_ARGUMENT && p[1] == 0.0f,
       "%s: knn output overlapping the points -> INVALID_ARGUMENT", dev);
    st = cltopk_knn(ctx, CLTOPK_L2SQ, q, 2, p, 8, 4, 0, NULL, NULL);
    ok(st == CLTOPK_OK, "%s: knn k = 0 is OK", dev);
    char buf[1024];
    st = cltopk_explain_knn(ctx, CLTOPK_INNER_PRODUCT, 10, 1000, 7, 5, 0, buf, sizeof buf);
    ok(st == CLTOPK_OK && strstr(buf, "\n-> ") && strstr(buf, "inner product"),
       "%s: explain_knn gives the choice", dev);
    st = cltopk_explain_knn(ctx, CLTOPK_L2SQ, 10, 1000, 0, 5, 0, buf, sizeof buf);
    ok(st == CLTOPK_ERR_INVALID_ARGUMENT, "%s: explain_knn d = 0 -> INVALID_ARGUMENT", dev);
}

#if CLTOPK_HAVE_OPENCL
/* what stands for a buffer in a refused cltopk_knn_buffer call: its own, NULL,
 * its own one byte short, or another argument's */
enum { M_OWN, M_NULL, M_SHORT, M_QUERIES, M_POINTS, M_INDEX };
enum { C_CL, C_NULL, C_CPU };
/* the arguments of a call (A_N: none) and what they are unless a case says */
enum { A_CTX, A_METRIC, A_QO, A_NQ, A_PO, A_NP, A_D, A_K, A_Q, A_P, A_OD, A_OI, A_WAIT, A_N };
#define QO 1 /* the offsets the buffers are made for */
#define PO 3
static const size_t knn_base[A_N] = {C_CL, CLTOPK_L2SQ, QO, 2, PO, 8, 4, 2,
                                     M_OWN, M_OWN, M_OWN, M_OWN, 0};

/* cltopk_knn_buffer's refusals: the status, a detail, nothing written to the
 * outputs or the inputs, *done as it was; the base arguments succeed, and
 * k = 0 writes nothing and gives an event */
static void bad_buffers(cltopk_context *cl, const char *dev)
{
    static const struct {
        const char *what;
        int a1;
        size_t v1;
        int a2; /* a second argument changed (A_N: none) */
        size_t v2;
        int expect, or_else; /* or_else: another status that says it too (0: none) */
    } bad[] = {
        {"the base arguments", A_N, 0, A_N, 0, CLTOPK_OK, 0},
        {"k = 0 (nothing to do)", A_K, 0, A_N, 0, CLTOPK_OK, 0},
        {"d = 0", A_D, 0, A_N, 0, CLTOPK_ERR_INVALID_ARGUMENT, 0},
        {"nq = 0", A_NQ, 0, A_N, 0, CLTOPK_ERR_INVALID_ARGUMENT, 0},
        {"k > np", A_K, 9, A_N, 0, CLTOPK_ERR_K_RANGE, 0},
        {"unknown metric", A_METRIC, 2, A_N, 0, CLTOPK_ERR_INVALID_ARGUMENT, 0},
        {"queries NULL", A_Q, M_NULL, A_N, 0, CLTOPK_ERR_INVALID_ARGUMENT, 0},
        {"points NULL", A_P, M_NULL, A_N, 0, CLTOPK_ERR_INVALID_ARGUMENT, 0},
        {"both outputs NULL", A_OD, M_NULL, A_OI, M_NULL, CLTOPK_ERR_INVALID_ARGUMENT, 0},
        {"queries a byte short (inner product)", A_Q, M_SHORT, A_METRIC, CLTOPK_INNER_PRODUCT,
         CLTOPK_ERR_BUFFER_SIZE, 0},
        {"points a byte short", A_P, M_SHORT, A_N, 0, CLTOPK_ERR_BUFFER_SIZE, 0},
        {"out_dist a byte short", A_OD, M_SHORT, A_N, 0, CLTOPK_ERR_BUFFER_SIZE, 0},
        {"out_index a byte short, out_dist NULL", A_OI, M_SHORT, A_OD, M_NULL,
         CLTOPK_ERR_BUFFER_SIZE, 0},
        {"q_offset one past the queries", A_QO, QO + 1, A_N, 0, CLTOPK_ERR_BUFFER_SIZE, 0},
        {"p_offset one past the points", A_PO, PO + 1, A_N, 0, CLTOPK_ERR_BUFFER_SIZE, 0},
        {"q_offset SIZE_MAX / 2", A_QO, SIZE_MAX / 2, A_N, 0, CLTOPK_ERR_BUFFER_SIZE,
         CLTOPK_ERR_INVALID_ARGUMENT},
        {"p_offset SIZE_MAX / 2", A_PO, SIZE_MAX / 2, A_N, 0, CLTOPK_ERR_BUFFER_SIZE,
         CLTOPK_ERR_INVALID_ARGUMENT},
        {"num_wait 1 with wait NULL", A_WAIT, 1, A_N, 0, CLTOPK_ERR_INVALID_ARGUMENT, 0},
        {"num_wait 0 with a wait list", A_WAIT, 2, A_N, 0, CLTOPK_ERR_INVALID_ARGUMENT, 0},
        {"ctx NULL", A_CTX, C_NULL, A_N, 0, CLTOPK_ERR_INVALID_ARGUMENT, 0},
        {"on the cpu context", A_CTX, C_CPU, A_N, 0, CLTOPK_ERR_NO_OPENCL, 0},
        {"out_dist over the queries", A_OD, M_QUERIES, A_N, 0, CLTOPK_ERR_INVALID_ARGUMENT, 0},
        {"out_index over the queries", A_OI, M_QUERIES, A_N, 0, CLTOPK_ERR_INVALID_ARGUMENT, 0},
        {"out_dist over the points", A_OD, M_POINTS, A_N, 0, CLTOPK_ERR_INVALID_ARGUMENT, 0},
        {"out_index over the points", A_OI, M_POINTS, A_N, 0, CLTOPK_ERR_INVALID_ARGUMENT, 0},
        {"out_dist over out_index", A_OD, M_INDEX, A_N, 0, CLTOPK_ERR_INVALID_ARGUMENT, 0},
    };
    cltopk_context *cpu = NULL;
    if (cltopk_open(&cpu, "cpu") != CLTOPK_OK)
        bail("cltopk_open(cpu): %s", cltopk_last_error(NULL));
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        size_t v[A_N + 1];
        memcpy(v, knn_base, sizeof knn_base);
        v[bad[i].a1] = bad[i].v1;
        v[bad[i].a2] = bad[i].v2;
        size_t nq = v[A_NQ], np = v[A_NP], d = v[A_D], k = v[A_K];
        /* the buffers: for offsets QO and PO, each (M_SHORT) a byte short */
        size_t bytes[4] = {(QO + nq * d) * 4, (PO + np * d) * 4, nq * k * 4, nq * k * 8};
        cl_mem own[4], use[4];
        for (int b = 0; b < 4; b++)
            own[b] = poisoned_mem(cl, bytes[b] - (v[A_Q + b] == M_SHORT && bytes[b] > 1));
        for (int b = 0; b < 4; b++)
            use[b] = v[A_Q + b] == M_NULL      ? NULL
                     : v[A_Q + b] == M_QUERIES ? own[0]
                     : v[A_Q + b] == M_POINTS  ? own[1]
                     : v[A_Q + b] == M_INDEX   ? own[3]
                                               : own[b];
        cltopk_context *ctx = v[A_CTX] == C_NULL ? NULL : v[A_CTX] == C_CPU ? cpu : cl;
        cl_event none = NULL, done = EVENT_SENTINEL;
        int st = cltopk_knn_buffer(ctx, (cltopk_metric)v[A_METRIC], use[0], v[A_QO], nq, use[1],
                                   v[A_PO], np, d, k, use[2], use[3], v[A_WAIT] == 1 ? 1 : 0,
                                   v[A_WAIT] == 2 ? &none : NULL, &done);
        char msg[512] = "";
        int expect = bad[i].or_else && st == bad[i].or_else ? st : bad[i].expect;
        int good;
        if (expect != CLTOPK_OK) {
            good = check_refused(cl, ctx, "cltopk_knn_buffer", st, expect, done, own, 4, msg,
                                 sizeof msg);
        } else if (st != CLTOPK_OK || done == EVENT_SENTINEL || !done ||
                   clWaitForEvents(1, &done) != CL_SUCCESS) {
            snprintf(msg, sizeof msg, "status %d (%s), done %s", st, cltopk_last_error(ctx),
                     done == EVENT_SENTINEL ? "not written" : done ? "not complete" : "NULL");
            good = 0;
        } else if (k == 0) {
            /* an event after the wait list, and nothing written */
            good = mems_poisoned(cl, own, 4, msg, sizeof msg);
        } else {
            /* the base call: its indices are written, each below np */
            cl_command_queue q;
            cltopk_get_cl(cl, NULL, NULL, &q);
            int64_t idx[4];
            clEnqueueReadBuffer(q, own[3], CL_TRUE, 0, sizeof idx, idx, 0, NULL, NULL);
            good = 1;
            for (int j = 0; j < 4; j++)
                good &= idx[j] >= 0 && idx[j] < (int64_t)np;
            if (!good)
                snprintf(msg, sizeof msg, "indices %lld %lld %lld %lld", (long long)idx[0],
                         (long long)idx[1], (long long)idx[2], (long long)idx[3]);
        }
        if (expect == CLTOPK_OK && done != EVENT_SENTINEL && done)
            clReleaseEvent(done);
        if (!ok(good, "%s: knn_buffer %s -> %s", dev, bad[i].what, cltopk_strerror(expect)))
            diag("%s", msg);
        for (int b = 0; b < 4; b++)
            clReleaseMemObject(own[b]);
    }
    cltopk_close(cpu);
}
#endif

#if CLTOPK_HAVE_OPENCL
/* k past the device kernel's (2048: the CPU on a host copy) where the host
 * may not read the queries' or the points' buffer (CL_MEM_HOST_NO_ACCESS):
 * refused, naming the flag, the outputs unchanged; readable, exact */
static void noread(cltopk_context *cl, const char *dev)
{
    enum { NQ = 2, NP = 2200, D = 3, K = 2100 };
    cl_context c;
    cl_device_id dv;
    cl_command_queue cq;
    cltopk_get_cl(cl, &c, &dv, &cq);
    float *qs = bmalloc(NQ * D * 4), *ps = bmalloc(NP * D * 4);
    for (size_t i = 0; i < NQ * D; i++)
        qs[i] = uniform();
    for (size_t i = 0; i < NP * D; i++)
        ps[i] = uniform();
    check(cl, dev, 1, "past the kernel's k (the host copy)", 0, qs, NQ, ps, NP, D, K, WANT_BOTH);
    for (int which = 0; which < 2; which++) {
        size_t count = (size_t)NQ * K;
        float *od = bmalloc(count * 4);
        int64_t *oi = bmalloc(count * 8);
        memset(od, POISON, count * 4);
        memset(oi, POISON, count * 8);
        cl_int err;
        cl_mem_flags fq = which == 0 ? CL_MEM_HOST_NO_ACCESS : 0,
                     fp = which ? CL_MEM_HOST_NO_ACCESS : 0;
        cl_mem mq = clCreateBuffer(c, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR | fq, NQ * D * 4, qs,
                                   &err);
        cl_mem mp = clCreateBuffer(c, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR | fp, NP * D * 4, ps,
                                   &err);
        cl_mem md =
            clCreateBuffer(c, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, count * 4, od, &err);
        cl_mem mi =
            clCreateBuffer(c, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, count * 8, oi, &err);
        if (!mq || !mp || !md || !mi)
            bail("clCreateBuffer: %d", (int)err);
        int st = cltopk_knn_buffer(cl, CLTOPK_L2SQ, mq, 0, NQ, mp, 0, NP, D, K, md, mi, 0, NULL,
                                   NULL);
        float *bd = bmalloc(count * 4);
        int64_t *bi = bmalloc(count * 8);
        clEnqueueReadBuffer(cq, md, CL_TRUE, 0, count * 4, bd, 0, NULL, NULL);
        clEnqueueReadBuffer(cq, mi, CL_TRUE, 0, count * 8, bi, 0, NULL, NULL);
        const char *msg = cltopk_last_error(cl);
        ok(st == CLTOPK_ERR_UNSUPPORTED && strstr(msg, "CL_MEM_HOST_NO_ACCESS") &&
               strstr(msg, which ? "input" : "queries") && !memcmp(bd, od, count * 4) &&
               !memcmp(bi, oi, count * 8),
           "%s: knn_buffer past the kernel's k with the %s unreadable by the host: refused, "
           "naming the flag, nothing written", dev, which ? "points" : "queries");
        if (st != CLTOPK_ERR_UNSUPPORTED)
            diag("status %d: %s", st, msg);
        free(bd);
        free(bi);
        free(od);
        free(oi);
        clReleaseMemObject(mq);
        clReleaseMemObject(mp);
        clReleaseMemObject(md);
        clReleaseMemObject(mi);
    }
    /* queries the kernels may not read (CL_MEM_WRITE_ONLY): refused */
    {
        cl_int err;
        cl_mem mq = clCreateBuffer(c, CL_MEM_WRITE_ONLY | CL_MEM_COPY_HOST_PTR, NQ * D * 4, qs,
                                   &err);
        cl_mem mp = clCreateBuffer(c, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, NP * D * 4, ps,
                                   &err);
        cl_mem md = clCreateBuffer(c, CL_MEM_READ_WRITE, NQ * 5 * 4, NULL, &err);
        if (!mq || !mp || !md)
            bail("clCreateBuffer: %d", (int)err);
        int st = cltopk_knn_buffer(cl, CLTOPK_L2SQ, mq, 0, NQ, mp, 0, NP, D, 5, md, NULL, 0, NULL,
                                   NULL);
        ok(st == CLTOPK_ERR_INVALID_ARGUMENT &&
               strstr(cltopk_last_error(cl), "CL_MEM_WRITE_ONLY") != NULL,
           "%s: knn_buffer with queries made CL_MEM_WRITE_ONLY refused, naming the flag", dev);
        clReleaseMemObject(mq);
        clReleaseMemObject(mp);
        clReleaseMemObject(md);
    }
    free(qs);
    free(ps);
}
#endif

int main(void)
{
    watchdog(600);
    test_quick_builds(); /* POCL builds dominate: see testlib.h */
#ifdef TEST_ISA
    /* the CPU kernels of one instruction set (t/knn_scalar.t: the scalar
     * distance loop; t/knn_avx2.t: the AVX2 + FMA kernel; t/knn.t itself runs
     * the AVX-512 kernel where the processor has it) */
    setenv("CLTOPK_CPU_ISA", TEST_ISA, 1);
    diag("CPU kernels: %s", cltopk_cpu_isa());
#endif
    rng_init(&rng, test_seed());
    plan_lazy();
    cltopk_context *cpu;
    if (cltopk_open(&cpu, "cpu") != CLTOPK_OK)
        bail("cltopk_open(cpu): %s", cltopk_last_error(NULL));
    cases(cpu, "cpu", 0);
    bad_args(cpu, "cpu");
    cltopk_close(cpu);
    cltopk_context *cl = NULL;
    char why[512];
    if (!open_test_cl(&cl, why, sizeof why)) {
        skip("OpenCL parts: %s", why);
        return tap_done();
    }
    cases(cl, "cl", 0);
    bad_args(cl, "cl");
    tiles(cl, "cl", 0);
    tiles_explain(cl, "cl");
    {
        /* host data in batches of queries: a device chunk of 1000 elements
         * holds the 100 x 7 points and 142 of the 300 queries */
        enum { P = 100, Q = 300, D = 7 };
        float *ps = bmalloc(P * D * 4), *qs = bmalloc(Q * D * 4);
        for (size_t i = 0; i < P * D; i++)
            ps[i] = uniform();
        for (size_t i = 0; i < Q * D; i++)
            qs[i] = uniform();
        setenv("CLTOPK_MAX_CHUNK", "1000", 1);
        check(cl, "cl", 0, "batches of queries", 0, qs, Q, ps, P, D, 5, WANT_BOTH);
        setenv("CLTOPK_MAX_CHUNK", "500", 1); /* the points do not fit: the CPU */
        check(cl, "cl", 0, "points > a chunk (CPU)", 1, qs, Q, ps, P, D, 5, WANT_BOTH);
        unsetenv("CLTOPK_MAX_CHUNK");
        free(ps);
        free(qs);
    }
#if CLTOPK_HAVE_OPENCL
    cases(cl, "cl", 1);
    tiles(cl, "cl", 1);
    bad_buffers(cl, "cl");
    noread(cl, "cl");
#endif
    cltopk_close(cl);
    return tap_done();
}
