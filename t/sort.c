/* sort.c - the device sort (lib/devsort.c) against the oracle, bit for bit, on
 * the OpenCL test device: CLTOPK_ALGO_SORT (the whole input in THE ORDER, then
 * its first k) on every type, both directions, stable ties, NaN and -0 where
 * THE ORDER puts them; n = 1, n not a power of two, n at and across tile
 * boundaries (the default tile and small tiles from CLTOPK_SORT, with several
 * tiles a work-group and digits of other widths); host data (also in several
 * chunks) and cl_mem data at aligned and unaligned offsets; keys only,
 * positions only, both, each poisoned first.  And radix select's top-k at
 * large k (k = n / 2), whose winners the same sort orders. */
#include "testlib.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static rng_t rng;

static const char *const sdists[] = {"uniform", "equal", "few", "narrow", "special", "nan",
                                     "denorm", "increasing", "decreasing", "bucket", "worst",
                                     "worstall", "bits", NULL};
#define NDISTS (sizeof sdists / sizeof *sdists - 1)

/* one data set: the whole order (k = n) and a few smaller k */
static void one_set(cltopk_context *ctx, cltopk_algo algo, cltopk_dtype t, int smallest,
                    const char *dist, size_t n, const size_t *extra_k, size_t nextra)
{
    void *keys = bmalloc(n * tsize(t));
    gen_data(t, dist, n, smallest, &rng, keys);
    int64_t *perm = oracle_order(t, keys, n, smallest);
    size_t ks[8], nk = 0;
    ks[nk++] = n;
    ks[nk++] = 1;
    ks[nk++] = 1 + (size_t)rng_below(&rng, n);
    for (size_t i = 0; i < nextra && nk < 8; i++)
        if (extra_k[i] >= 1 && extra_k[i] <= n)
            ks[nk++] = extra_k[i];
    char msg[1024] = "";
    int good = 1;
    for (size_t i = 0; i < nk && good; i++) {
        int want = i == 0 ? WANT_BOTH : (int)((i + n) % 3) + 1;
        if (!check_topk(ctx, algo, t, keys, n, ks[i], smallest, perm, want, CLTOPK_OK, msg,
                        sizeof msg)) {
            good = 0;
            diag_after("k = %zu want %d: %s", ks[i], want, msg);
        }
    }
    ok(good, "%s %s %s %s n=%zu (%zu k)", cltopk_algo_name(algo), tname(t),
       smallest ? "smallest" : "largest", dist, n, nk);
    free(perm);
    free(keys);
}

#if CLTOPK_HAVE_OPENCL
/* cl_mem data at an offset: the first k in cl_mem outputs (either may be left
 * out), the done event; outputs poisoned */
static void buffers(cltopk_context *ctx, cltopk_dtype t, int smallest, const char *dist,
                    size_t n, size_t off, size_t k, int want)
{
    cl_context c;
    cl_command_queue q;
    if (cltopk_get_cl(ctx, &c, NULL, &q) != CLTOPK_OK)
        bail("cltopk_get_cl failed on an OpenCL context");
    size_t w = tsize(t);
    char *keys = bmalloc((n + off) * w);
    gen_data(t, dist, n + off, smallest, &rng, keys);
    int64_t *perm = oracle_order(t, keys + off * w, n, smallest);
    char *pk = bmalloc((k + GUARD) * w);
    int64_t *pi = bmalloc((k + GUARD) * 8);
    make_poison(t, keys + off * w, perm, k, k + GUARD, pk, pi);
    cl_int err;
    cl_mem din = clCreateBuffer(c, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, (n + off) * w, keys,
                                &err);
    cl_mem dk = clCreateBuffer(c, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, (k + GUARD) * w, pk,
                               &err);
    cl_mem di = clCreateBuffer(c, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, (k + GUARD) * 8, pi,
                               &err);
    if (!din || !dk || !di)
        bail("clCreateBuffer failed: %d", (int)err);
    cl_event done = NULL;
    int st = cltopk_topk_buffer(ctx, t, din, off, n, k, smallest ? CLTOPK_SMALLEST : 0,
                                CLTOPK_ALGO_SORT, (want & WANT_KEYS) ? dk : NULL,
                                (want & WANT_INDEX) ? di : NULL, 0, NULL, &done);
    char *ok_ = bmalloc((k + GUARD) * w);
    int64_t *oi = bmalloc((k + GUARD) * 8);
    int good = st == CLTOPK_OK && done;
    if (good) {
        good = clWaitForEvents(1, &done) == CL_SUCCESS &&
               clEnqueueReadBuffer(q, dk, CL_TRUE, 0, (k + GUARD) * w, ok_, 0, NULL, NULL) ==
                   CL_SUCCESS &&
               clEnqueueReadBuffer(q, di, CL_TRUE, 0, (k + GUARD) * 8, oi, 0, NULL, NULL) ==
                   CL_SUCCESS;
        clReleaseEvent(done);
    }
    char msg[1024] = "";
    if (good) {
        /* an output not asked for stays as poisoned, guards included */
        int ck = compare_outputs(t, keys + off * w, n, perm, (want & WANT_KEYS) ? k : 0,
                                 k + GUARD, ok_, NULL, pk, NULL, msg, sizeof msg);
        int ci = ck && compare_outputs(t, keys + off * w, n, perm, (want & WANT_INDEX) ? k : 0,
                                       k + GUARD, NULL, oi, NULL, pi, msg, sizeof msg);
        good = ck && ci;
    }
    if (!ok(good, "sort buffer: %s %s %s n=%zu offset=%zu k=%zu want %d (status %d)", tname(t),
            smallest ? "smallest" : "largest", dist, n, off, k, want, st))
        diag("%s %s", msg, st != CLTOPK_OK ? cltopk_last_error(ctx) : "");
    clReleaseMemObject(din);
    clReleaseMemObject(dk);
    clReleaseMemObject(di);
    free(keys), free(perm), free(ok_), free(oi), free(pk), free(pi);
}
#endif

int main(void)
{
    plan_lazy();
    watchdog(900);
    test_quick_builds(); /* POCL builds dominate: see testlib.h */
    rng_init(&rng, test_seed() ^ 0x50F7);
    unsetenv("CLTOPK_SORT");
    cltopk_context *ctx;
    char why[512];
    {
        /* the "cpu" context has no device sort */
        cltopk_context *cpu;
        float x[3] = {1, 2, 3}, o[3];
        if (!ok(cltopk_open(&cpu, "cpu") == CLTOPK_OK, "open the cpu device"))
            bail("%s", cltopk_last_error(NULL));
        is_int(CLTOPK_ERR_UNSUPPORTED,
               cltopk_topk(cpu, CLTOPK_FLOAT32, x, 3, 3, 0, CLTOPK_ALGO_SORT, o, NULL),
               "cpu: sort is refused (UNSUPPORTED)");
        cltopk_close(cpu);
    }
    if (!open_test_cl(&ctx, why, sizeof why)) {
        diag("no OpenCL parts: %s", why);
        return tap_done();
    }
    /* every type, both directions, the distributions in turn (ties, NaNs of
     * every payload, both zeros, denormals, the sentinel's key) */
    size_t di = 0;
    for (size_t ti = 0; ti < 6; ti++)
        for (int s = 0; s < 2; s++)
            for (int j = 0; j < 2; j++, di++)
                one_set(ctx, CLTOPK_ALGO_SORT, all_types[ti], s, sdists[di % NDISTS],
                        1000 + (size_t)rng_below(&rng, 9000), NULL, 0);
    /* NaN, -0 and ties on the float types, both ways */
    static const char *const fd[] = {"nan", "special", "denorm", "equal", "worstall"};
    for (size_t i = 0; i < sizeof fd / sizeof *fd; i++)
        for (int s = 0; s < 2; s++) {
            one_set(ctx, CLTOPK_ALGO_SORT, CLTOPK_FLOAT32, s, fd[i], 2500, NULL, 0);
            one_set(ctx, CLTOPK_ALGO_SORT, CLTOPK_FLOAT64, s, fd[i], 1700, NULL, 0);
        }
    /* sizes: one element, below a tile, at and across the default tile (at most
     * 256 x 16 pairs), primes, many tiles a group */
    static const size_t ns[] = {1, 2, 3, 5, 127, 1023, 1024, 1025, 2047, 2048, 2049, 3071, 3072,
                                3073, 4095, 4096, 4097, 8193, 7919, 65537, 300007};
    for (size_t i = 0; i < sizeof ns / sizeof *ns; i++)
        one_set(ctx, CLTOPK_ALGO_SORT, all_types[i % 6], (int)(i & 1), sdists[i % NDISTS], ns[i],
                NULL, 0);
    /* small tiles (32 x 4 pairs), several a group; digits of 5 bits ranked 3
     * at a time (passes whose digit straddles words), of 8 bits ranked 2 at a
     * time, histogram copies; the other ways of ranking (counts in registers,
     * digits recomputed, the two-buffer scan) */
    static const char *const conf[] = {"wg=32,ipt=4,gpc=1,tl=1,wr=0",
                                       "wg=64,ipt=8,digit=5,lb=3,gpc=2,reg=1,ld=0,xs=1,wr=0",
                                       "wg=32,ipt=4,digit=8,lb=2,hc=3,gpc=3,reg=1,wr=0",
                                       /* the next tile loaded while one is ranked */
                                       "wg=64,ipt=8,gpc=2,pf=1,wr=0", "wg=32,ipt=4,digit=6,gpc=1,pf=1,wr=0",
                                       "wg=64,ipt=8,gpc=2,pf=0",
                                       /* ranked by warps (votes through local memory
                                          here, PTX on NVIDIA) */
                                       "wg=64,ipt=8,gpc=2,wr=1", "wg=32,ipt=4,digit=6,gpc=1,wr=1,pf=1",
                                       "wg=128,ipt=4,digit=5,gpc=3,wr=1,pf=0",
                                       "wg=64,ipt=8,gpc=2,wr=1,ptx=0",
                                       /* sectors written whole */
                                       "wg=64,ipt=8,gpc=2,wr=1,wc=1",
                                       "wg=32,ipt=4,digit=6,gpc=1,wr=1,wc=1,pf=1",
                                       "wg=128,ipt=4,digit=3,gpc=3,wr=1,wc=1,pf=0",
                                       /* digits recomputed from the pairs */
                                       "wg=64,ipt=8,gpc=2,wr=1,ld=0,xs=1",
                                       "wg=32,ipt=8,digit=7,gpc=3,wr=1,wc=1,ld=0",
                                       /* histograms loading 3 vectors before counting */
                                       "wg=32,ipt=4,gpc=3,hu=3", "wg=64,ipt=8,digit=5,gpc=2,hu=4,wr=1",
                                       /* several histogram groups a scatter group
                                          (shares of unequal size, some empty) */
                                       "wg=32,ipt=4,gpc=3,hs=3", "wg=64,ipt=8,gpc=2,hs=5,wr=1",
                                       /* one sweep a pass: tiles in order, offsets by
                                          a look-back */
                                       "wg=64,ipt=8,gpc=2,wr=1,os=1",
                                       "wg=32,ipt=4,digit=6,gpc=3,wr=1,os=1,ld=0",
                                       "wg=128,ipt=4,digit=3,gpc=1,wr=1,os=1",
                                       /* skewed passes by the second build (sk=1:
                                          where one digit holds every pair; 256:
                                          nearly every pass), without warps too */
                                       "wg=64,ipt=8,gpc=2,wr=1,sk=1",
                                       "wg=32,ipt=4,digit=6,gpc=3,wr=1,sk=256,pf=1",
                                       "wg=64,ipt=8,digit=5,gpc=2,wr=0,sk=8"};
    for (size_t c = 0; c < sizeof conf / sizeof *conf; c++) {
        setenv("CLTOPK_SORT", conf[c], 1);
        diag("CLTOPK_SORT=%s", conf[c]);
        static const size_t sn[] = {1, 127, 128, 129, 1000, 4099};
        /* the ways the device sort gained with the warps' ranking (from
         * wr=1 on; each type a program to build): two sizes, two types in
         * make check from the fourth set on (every size in the first three),
         * every size and type in make check-full */
        static const size_t quick[] = {3, 5};
        int every = c < 3 || test_full();
        for (size_t j = 0; j < (every ? sizeof sn / sizeof *sn : 2); j++) {
            size_t i = every ? j : quick[j];
            one_set(ctx, CLTOPK_ALGO_SORT, all_types[(i + c) % 6], (int)((i + c) & 1),
                    sdists[(i + 3 * c) % NDISTS], sn[i], NULL, 0);
        }
        size_t big[] = {6000};
        one_set(ctx, CLTOPK_ALGO_RADIX_SELECT, CLTOPK_FLOAT32, (int)(c & 1), "few", 12000, big,
                1);
    }
    /* one sweep over many tiles (the look-back across groups that run at
     * once): make check 196 and 118 tiles of 256 pairs (the int64 pass: 8
     * passes), make check-full 782 and 586 (their unoptimised kernels on POCL
     * took 21 s of make check, the int64 sort alone 11 s) */
    setenv("CLTOPK_SORT", "wg=64,ipt=4,gpc=4,wr=1,os=1", 1);
    diag("CLTOPK_SORT=wg=64,ipt=4,gpc=4,wr=1,os=1");
    const int fl = test_full();
    one_set(ctx, CLTOPK_ALGO_SORT, CLTOPK_FLOAT32, 0, "uniform", fl ? 200003 : 50003, NULL, 0);
    one_set(ctx, CLTOPK_ALGO_SORT, CLTOPK_INT64, 1, "few", fl ? 150001 : 30001, NULL, 0);
    {
        size_t big[] = {fl ? 70001 : 20001};
        one_set(ctx, CLTOPK_ALGO_RADIX_SELECT, CLTOPK_UINT32, 1, "uniform", fl ? 140000 : 40000,
                big, 1);
    }
    /* histogram groups in shares of many tiles (98 tiles a scatter group, 33 a share) */
    setenv("CLTOPK_SORT", "wg=64,ipt=4,gpc=4,wr=1,hs=3", 1);
    diag("CLTOPK_SORT=wg=64,ipt=4,gpc=4,wr=1,hs=3");
    one_set(ctx, CLTOPK_ALGO_SORT, CLTOPK_FLOAT32, 1, "uniform", 200003, NULL, 0);
    /* a configuration the library must refuse */
    setenv("CLTOPK_SORT", "wg=33", 1);
    {
        float x[3] = {1, 2, 3}, o[3];
        is_int(CLTOPK_ERR_UNSUPPORTED,
               cltopk_topk(ctx, CLTOPK_FLOAT32, x, 3, 3, 0, CLTOPK_ALGO_SORT, o, NULL),
               "CLTOPK_SORT=wg=33 is refused (UNSUPPORTED)");
        /* radix select sorts its winners with it above k = 4096, not below */
        size_t n = 10000;
        uint32_t *v = bmalloc(n * 4), *vo = bmalloc(n * 4);
        for (size_t i = 0; i < n; i++)
            v[i] = (uint32_t)rng_next(&rng);
        is_int(CLTOPK_ERR_UNSUPPORTED,
               cltopk_topk(ctx, CLTOPK_UINT32, v, n, 4097, 0, CLTOPK_ALGO_RADIX_SELECT, vo, NULL),
               "radix select at k = 4097 uses the device sort (refused with it)");
        is_int(CLTOPK_OK,
               cltopk_topk(ctx, CLTOPK_UINT32, v, n, 4096, 0, CLTOPK_ALGO_RADIX_SELECT, vo, NULL),
               "radix select at k = 4096 does not (bitonic)");
        free(v), free(vo);
    }
    unsetenv("CLTOPK_SORT");
    /* host data in several device chunks, merged on the host */
    setenv("CLTOPK_MAX_CHUNK", "1000", 1);
    {
        size_t ks[] = {999, 1000, 1001, 2500};
        one_set(ctx, CLTOPK_ALGO_SORT, CLTOPK_INT32, 0, "few", 3500, ks, 4);
        one_set(ctx, CLTOPK_ALGO_SORT, CLTOPK_FLOAT32, 1, "nan", 2999, ks, 4);
    }
    unsetenv("CLTOPK_MAX_CHUNK");
    /* cl_mem data: aligned and unaligned offsets, k < n, either output alone */
#if CLTOPK_HAVE_OPENCL
    buffers(ctx, CLTOPK_FLOAT32, 0, "nan", 50000, 0, 50000, WANT_BOTH);
    buffers(ctx, CLTOPK_FLOAT32, 1, "special", 20001, 3, 777, WANT_KEYS);
    buffers(ctx, CLTOPK_INT64, 1, "few", 20011, 5, 20011, WANT_INDEX);
    buffers(ctx, CLTOPK_UINT32, 0, "equal", 4097, 4, 100, WANT_BOTH);
    buffers(ctx, CLTOPK_FLOAT64, 0, "denorm", 3001, 1, 3001, WANT_BOTH);
    buffers(ctx, CLTOPK_INT32, 1, "uniform", 1, 0, 1, WANT_BOTH);
#endif
    /* radix select's top-k at large k: the winners (in no order) sorted by the
     * device sort with their positions as low digits */
    for (size_t ti = 0; ti < 6; ti++) {
        size_t n = 20000 + (size_t)rng_below(&rng, 30000), half[] = {n / 2, 4097, n - 1};
        one_set(ctx, CLTOPK_ALGO_RADIX_SELECT, all_types[ti], (int)(ti & 1),
                sdists[(ti * 5) % NDISTS], n, half, 3);
    }
    one_set(ctx, CLTOPK_ALGO_RADIX_SELECT, CLTOPK_FLOAT32, 0, "uniform", 300007,
            (size_t[]){150003}, 1);
    cltopk_close(ctx);
    return tap_done();
}
