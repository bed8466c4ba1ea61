/* t/mpi.c - libcltopk_mpi against the oracle, run under mpiexec by t/mpi.sh.
 *
 * Every rank draws the same whole array from the same seed (rank 0's, sent to
 * all), keeps its own slice as local_keys, and knows the answer: the oracle's
 * stable sort of the whole array (t/oracle.c, written without the library).
 * Each test's verdict is the AND over the ranks (an MPI_Allreduce); only rank 0
 * prints TAP (the others write to /dev/null).  Outputs are poisoned before each
 * call: on success they must hold exactly the oracle's answer with the guard
 * elements after it intact (and, on ranks that do not receive, stay intact);
 * on failure every rank must return the same status and write nothing.
 * The "cpu" context runs the local step (OMP_NUM_THREADS=1 from t/mpi.sh). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cltopk_mpi.h"
#include "oracle.h"
#include "tap.h"
#include "testlib.h"

static int me, np;
static cltopk_context *ctx;

/* 1 when the condition holds on every rank */
static int everywhere(int good)
{
    int all = 0;
    MPI_Allreduce(&good, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all;
}

/* a failure's first message, from the lowest failing rank, as a diag */
static void report(int good, const char *msg)
{
    char buf[256] = "";
    int who = good ? np : me, first;
    MPI_Allreduce(&who, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (first == np)
        return;
    if (me == first && first != 0)
        MPI_Send(msg, 256, MPI_CHAR, 0, 7, MPI_COMM_WORLD);
    if (me == 0) {
        if (first == 0)
            snprintf(buf, sizeof buf, "%s", msg);
        else
            MPI_Recv(buf, 256, MPI_CHAR, first, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        diag("rank %d: %s", first, buf);
    }
}

/* The layouts of n elements over np ranks (sizes[np]). */
enum { EVEN, EMPTY_ENDS, RANDOM, ONE_RANK, LAYOUTS };
static const char *const layout_name[] = {"even", "first and last ranks empty",
                                          "random sizes, some empty", "all on the last rank"};
static void layout(int how, size_t n, rng_t *r, size_t *sizes)
{
    memset(sizes, 0, (size_t)np * sizeof *sizes);
    int lo = 0, hi = np; /* ranks [lo, hi) share the data */
    if (how == EMPTY_ENDS && np > 2) {
        lo = 1;
        hi = np - 1;
    } else if (how == ONE_RANK) {
        lo = np - 1;
    }
    if (how == RANDOM) {
        size_t left = n;
        for (int i = 0; i < np - 1; i++) {
            sizes[i] = rng_below(r, 3) == 0 ? 0 : rng_below(r, left + 1);
            left -= sizes[i];
        }
        sizes[np - 1] = left;
        return;
    }
    for (int i = lo; i < hi; i++)
        sizes[i] = n / (size_t)(hi - lo) + ((size_t)(i - lo) < n % (size_t)(hi - lo));
}

typedef struct {
    cltopk_dtype type;
    int smallest;
    const void *all; /* the whole array */
    size_t n;
    const int64_t *perm; /* the oracle's order */
    const void *local;
    size_t local_n;
    const char *what;
} fixture;

/* cltopk_mpi_topk (root >= 0) or _all (root < 0) of k, checked on every rank */
static void mpi_check_topk(const fixture *f, size_t k, int root, cltopk_algo algo)
{
    size_t sz = tsize(f->type), cap = k + GUARD;
    void *pk = bmalloc(cap * sz), *ok_ = bmalloc(cap * sz);
    int64_t *pi = bmalloc(cap * sizeof *pi), *oi = bmalloc(cap * sizeof *oi);
    make_poison(f->type, f->all, f->perm, k, cap, pk, pi);
    memcpy(ok_, pk, cap * sz);
    memcpy(oi, pi, cap * sizeof *oi);
    int st = root >= 0 ? cltopk_mpi_topk(ctx, MPI_COMM_WORLD, f->type, f->local, f->local_n, k,
                                         f->smallest, algo, root, ok_, oi)
                       : cltopk_mpi_topk_all(ctx, MPI_COMM_WORLD, f->type, f->local, f->local_n,
                                             k, f->smallest, algo, ok_, oi);
    char msg[256] = "";
    int good;
    if (st != CLTOPK_OK) {
        snprintf(msg, sizeof msg, "status %d (%s)", st, cltopk_last_error(ctx));
        good = 0;
    } else if (root < 0 || me == root) {
        good = compare_outputs(f->type, f->all, f->n, f->perm, k, cap, ok_, oi, pk, pi, msg,
                               sizeof msg);
    } else {
        good = !memcmp(ok_, pk, cap * sz) && !memcmp(oi, pi, cap * sizeof *oi);
        if (!good)
            snprintf(msg, sizeof msg, "a rank other than root wrote its outputs");
    }
    good = everywhere(good);
    ok(good, "%s: %s k=%zu %s", f->what, root < 0 ? "topk_all" : "topk", k,
       root < 0 ? "" : (root == 0 ? "root 0" : "root > 0"));
    report(good, msg);
    free(pk);
    free(ok_);
    free(pi);
    free(oi);
}

static void mpi_check_select(const fixture *f, uint64_t rank)
{
    size_t sz = tsize(f->type), cap = 1 + GUARD;
    void *pk = bmalloc(cap * sz), *ok_ = bmalloc(cap * sz);
    int64_t *pi = bmalloc(cap * sizeof *pi), *oi = bmalloc(cap * sizeof *oi);
    make_poison(f->type, f->all, f->perm + rank, 1, cap, pk, pi);
    memcpy(ok_, pk, cap * sz);
    memcpy(oi, pi, cap * sizeof *oi);
    int st = cltopk_mpi_select(ctx, MPI_COMM_WORLD, f->type, f->local, f->local_n, rank,
                               f->smallest, ok_, oi);
    char msg[256] = "";
    int good = st == CLTOPK_OK;
    if (!good)
        snprintf(msg, sizeof msg, "status %d", st);
    else
        good = compare_outputs(f->type, f->all, f->n, f->perm + rank, 1, cap, ok_, oi, pk, pi,
                               msg, sizeof msg);
    good = everywhere(good);
    ok(good, "%s: select rank %llu", f->what, (unsigned long long)rank);
    report(good, msg);
    free(pk);
    free(ok_);
    free(pi);
    free(oi);
}

/* A call that must fail with `expect` on every rank and write nothing:
 * op 0 topk (root), 1 topk_all, 2 select. */
static void check_error(const char *what, int expect, int op, cltopk_context *c,
                        cltopk_dtype type, const void *local, size_t local_n, size_t k,
                        unsigned flags, cltopk_algo algo, int root, int no_outputs)
{
    size_t cap = (k < 64 ? k : 64) + GUARD;
    unsigned char pk[(64 + GUARD) * 8], ok_[(64 + GUARD) * 8];
    int64_t pi[64 + GUARD], oi[64 + GUARD];
    for (size_t i = 0; i < sizeof pk; i++)
        pk[i] = (unsigned char)(0xA5 ^ i);
    for (size_t i = 0; i < 64 + GUARD; i++)
        pi[i] = -1 - (int64_t)i;
    memcpy(ok_, pk, sizeof pk);
    memcpy(oi, pi, sizeof pi);
    void *okp = no_outputs ? NULL : ok_;
    int64_t *oip = no_outputs ? NULL : oi;
    int st;
    if (op == 0)
        st = cltopk_mpi_topk(c, MPI_COMM_WORLD, type, local, local_n, k, flags, algo, root, okp,
                             oip);
    else if (op == 1)
        st = cltopk_mpi_topk_all(c, MPI_COMM_WORLD, type, local, local_n, k, flags, algo, okp,
                                 oip);
    else
        st = cltopk_mpi_select(c, MPI_COMM_WORLD, type, local, local_n, k, flags, okp, oip);
    char msg[256] = "";
    int good = st == expect;
    if (!good)
        snprintf(msg, sizeof msg, "status %d, wanted %d", st, expect);
    else if (memcmp(ok_, pk, cap * 8) || memcmp(oi, pi, cap * sizeof *oi)) {
        snprintf(msg, sizeof msg, "outputs written by a failed call");
        good = 0;
    }
    good = everywhere(good);
    ok(good, "every rank: %s -> %s", what, cltopk_strerror(expect));
    report(good, msg);
}

static void errors(rng_t *r)
{
    size_t sizes[64], n = 40, off = 0;
    float all[40];
    gen_data(CLTOPK_FLOAT32, "uniform", n, 0, r, all);
    layout(EVEN, n, r, sizes);
    for (int i = 0; i < me; i++)
        off += sizes[i];
    const float *mine = all + off;
    size_t ln = sizes[me];
    int last = np - 1;
    const cltopk_dtype f32 = CLTOPK_FLOAT32;
    const cltopk_algo au = CLTOPK_ALGO_AUTO;

    check_error("k > total n (topk)", CLTOPK_ERR_K_RANGE, 0, ctx, f32, mine, ln, n + 1, 0, au, 0,
                0);
    check_error("k > total n (topk_all)", CLTOPK_ERR_K_RANGE, 1, ctx, f32, mine, ln, n + 1, 0,
                au, 0, 0);
    check_error("rank >= total n (select)", CLTOPK_ERR_RANK_RANGE, 2, ctx, f32, mine, ln, n, 0,
                au, 0, 0);
    check_error("NULL keys with local_n > 0 on the last rank only", CLTOPK_ERR_INVALID_ARGUMENT,
                0, ctx, f32, me == last ? NULL : mine, ln ? ln : 1, 3, 0, au, 0, 0);
    check_error("NULL keys on the last rank only (select)", CLTOPK_ERR_INVALID_ARGUMENT, 2, ctx,
                f32, me == last ? NULL : mine, ln ? ln : 1, 3, 0, au, 0, 0);
    check_error("NULL context on rank 0 only", CLTOPK_ERR_INVALID_ARGUMENT, 1,
                me == 0 ? NULL : ctx, f32, mine, ln, 3, 0, au, 0, 0);
    check_error("bad type on the last rank only", CLTOPK_ERR_BAD_TYPE, 0, ctx,
                me == last ? (cltopk_dtype)42 : f32, mine, ln, 3, 0, au, 0, 0);
    check_error("bad flags", CLTOPK_ERR_BAD_FLAGS, 0, ctx, f32, mine, ln, 3, 6, au, 0, 0);
    check_error("bad flags (select)", CLTOPK_ERR_BAD_FLAGS, 2, ctx, f32, mine, ln, 3, 6, au, 0,
                0);
    check_error("bad algo", CLTOPK_ERR_BAD_ALGO, 1, ctx, f32, mine, ln, 3, 0, (cltopk_algo)99, 0,
                0);
    check_error("root out of range", CLTOPK_ERR_INVALID_ARGUMENT, 0, ctx, f32, mine, ln, 3, 0, au,
                np, 0);
    if (np > 1) {
        check_error("k differs on the last rank", CLTOPK_ERR_INVALID_ARGUMENT, 1, ctx, f32, mine,
                    ln, me == last ? 4 : 3, 0, au, 0, 0);
        check_error("root differs on the last rank", CLTOPK_ERR_INVALID_ARGUMENT, 0, ctx, f32,
                    mine, ln, 3, 0, au, me == last ? last : 0, 0);
    } else {
        skip_block(2, "arguments that differ between ranks: one rank");
    }
    check_error("no outputs on the root", CLTOPK_ERR_INVALID_ARGUMENT, 0, ctx, f32, mine, ln, 3, 0,
                au, last, 1);
    check_error("no outputs (select)", CLTOPK_ERR_INVALID_ARGUMENT, 2, ctx, f32, mine, ln, 3, 0,
                au, 0, 1);
    /* a failure in the local step, on the ranks that hold data only: the cpu
     * context has no bitonic device kernel; rank 0 holds nothing and would
     * succeed alone */
    size_t one[64];
    layout(ONE_RANK, n, r, one);
    size_t o2 = 0;
    for (int i = 0; i < me; i++)
        o2 += one[i];
    check_error("local step fails on the last rank only", CLTOPK_ERR_UNSUPPORTED, 1, ctx, f32,
                all + o2, one[me], 3, 0, CLTOPK_ALGO_BITONIC, 0, 0);
    /* k = 0 succeeds and writes nothing (check_error's "nothing written") */
    check_error("k = 0", CLTOPK_OK, 0, ctx, f32, mine, ln, 0, 0, au, 0, 0);
}

/* -0.0, +0.0, NaNs of both signs and payloads and equal keys, split so that
 * equal keys sit on different ranks */
static void special_floats(void)
{
    const uint32_t f32[] = {0x80000000u, 0x3F800000u, 0x7FC00001u, 0x00000000u, 0xFFC00002u,
                            0x3F800000u, 0x80000000u, 0x7F800000u, 0xFF800000u, 0x7FC00001u,
                            0x00000000u, 0xBF800000u};
    const uint64_t f64[] = {0x8000000000000000ull, 0x3FF0000000000000ull, 0x7FF8000000000001ull,
                            0x0000000000000000ull, 0xFFF8000000000002ull, 0x3FF0000000000000ull,
                            0x8000000000000000ull, 0x7FF0000000000000ull, 0xFFF0000000000000ull,
                            0x7FF8000000000001ull, 0x0000000000000000ull, 0xBFF0000000000000ull};
    size_t n = 12, sizes[64], off = 0;
    layout(EVEN, n, NULL, sizes);
    for (int i = 0; i < me; i++)
        off += sizes[i];
    for (int t = 0; t < 2; t++) {
        cltopk_dtype type = t ? CLTOPK_FLOAT64 : CLTOPK_FLOAT32;
        const void *all = t ? (const void *)f64 : (const void *)f32;
        for (int smallest = 0; smallest < 2; smallest++) {
            int64_t *perm = oracle_order(type, all, n, smallest);
            char what[96];
            snprintf(what, sizeof what, "%s %s -0/NaN/ties across ranks", tname(type),
                     smallest ? "smallest" : "largest");
            fixture f = {type, smallest, all, n, perm,
                         (const char *)all + off * tsize(type), sizes[me], what};
            mpi_check_topk(&f, n, np - 1, CLTOPK_ALGO_AUTO);
            mpi_check_topk(&f, 5, -1, CLTOPK_ALGO_CPU_RADIX);
            for (uint64_t rk = 0; rk < n; rk++)
                mpi_check_select(&f, rk);
            free(perm);
        }
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (me != 0 && !freopen("/dev/null", "w", stdout))
        return 1;
    if (np > 64)
        bail("at most 64 ranks");
    plan_lazy();
    uint64_t seed = me == 0 ? test_seed() : 0;
    MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    diag("%d ranks", np);
    int st = cltopk_open(&ctx, "cpu");
    if (!everywhere(st == CLTOPK_OK))
        bail("cltopk_open(cpu) failed on some rank");
    rng_t r;
    rng_init(&r, seed);

    errors(&r);
    special_floats();

    /* every type and direction, over every layout, with ties (narrow), special
     * values (NaNs, infinities, zeros) and plain data */
    const char *const dl[] = {"narrow", "special", "uniform", "few"};
    int iter = 0;
    for (int ti = 0; ti < 6; ti++) {
        for (int smallest = 0; smallest < 2; smallest++) {
            for (int di = 0; di < 4; di++, iter++) {
                cltopk_dtype type = all_types[ti];
                size_t n = 200 + rng_below(&r, 800), sizes[64], off = 0;
                void *all = bmalloc(n * tsize(type));
                gen_data(type, dl[di], n, smallest, &r, all);
                int how = iter % LAYOUTS;
                layout(how, n, &r, sizes);
                size_t maxlocal = 0;
                for (int i = 0; i < np; i++) {
                    if (i < me)
                        off += sizes[i];
                    maxlocal = sizes[i] > maxlocal ? sizes[i] : maxlocal;
                }
                int64_t *perm = oracle_order(type, all, n, smallest);
                char what[128];
                snprintf(what, sizeof what, "%s %s %s, %s", tname(type),
                         smallest ? "smallest" : "largest", dl[di], layout_name[how]);
                fixture f = {type, smallest, all, n, perm,
                             (const char *)all + off * tsize(type), sizes[me], what};
                size_t kbig = maxlocal < n ? maxlocal + 1 : n; /* more than any rank holds */
                mpi_check_topk(&f, 1, 0, CLTOPK_ALGO_AUTO);
                mpi_check_topk(&f, 1 + rng_below(&r, 64), iter % np, CLTOPK_ALGO_AUTO);
                mpi_check_topk(&f, kbig, np - 1, CLTOPK_ALGO_CPU_HEAP);
                mpi_check_topk(&f, n, -1, CLTOPK_ALGO_AUTO);
                mpi_check_topk(&f, 1 + rng_below(&r, n), -1, CLTOPK_ALGO_CPU_RADIX);
                mpi_check_select(&f, 0);
                mpi_check_select(&f, n / 2);
                mpi_check_select(&f, n - 1);
                mpi_check_select(&f, rng_below(&r, n));
                free(perm);
                free(all);
            }
        }
    }
    cltopk_close(ctx);
    int rc = tap_done();
    MPI_Finalize();
    return rc;
}
