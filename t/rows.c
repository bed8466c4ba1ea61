/* rows.c - cltopk_topk_rows and cltopk_topk_segments (and their cl_mem forms)
 * against the oracle, row by row.
 *
 * The oracle of a row is oracle_topk (a plain stable sort with THE ORDER spelled
 * out) over that row alone; a segment shorter than k is padded with index -1
 * and a key of zero bytes.  Every output is poisoned before a call, and a
 * guard past its end must stay intact.  On the "cpu" context AUTO and cpu-heap
 * run; on the OpenCL test device (CLTOPK_TEST_DEVICE) also bits and the cl_mem
 * forms, so that the CPU and the device are each checked against the same
 * oracle bit for bit.  Covered: every type and direction, keys only / index
 * only / both, ld > cols, rows = 0 and 1, cols = 1, k = cols, empty and short
 * segments, adversarial data (all equal, sorted, ties, NaN / -0 / inf), and
 * bad arguments (negative status, a detail, nothing written). */
#include "testlib.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static rng_t rng;
#define POISON 0xA5

/* expected outputs of `rows` rows (row r: keys + starts[r], lens[r] elements) */
static void expect_rows(cltopk_dtype type, const void *keys, size_t rows, const size_t *starts,
                        const size_t *lens, size_t k, int smallest, char *ek, int64_t *ei)
{
    size_t w = tsize(type);
    memset(ek, 0, rows * k * w);
    for (size_t r = 0; r < rows; r++) {
        size_t m = lens[r] < k ? lens[r] : k;
        const char *row = (const char *)keys + starts[r] * w;
        oracle_topk(type, row, lens[r], m, smallest, NULL, ek + r * k * w, ei + r * k);
        for (size_t i = m; i < k; i++)
            ei[r * k + i] = -1;
    }
}

/* outputs (keys ok, positions oi; either NULL) against the expected, the
 * guards intact */
static int same(size_t count, size_t w, const char *ek, const int64_t *ei, const char *ok,
                const int64_t *oi, char *msg, size_t len)
{
    for (size_t i = 0; i < count; i++) {
        if (oi && oi[i] != ei[i]) {
            snprintf(msg, len, "index %zu: %lld, expected %lld", i, (long long)oi[i],
                     (long long)ei[i]);
            return 0;
        }
        if (ok && memcmp(ok + i * w, ek + i * w, w)) {
            snprintf(msg, len, "key %zu differs (index %lld)", i, (long long)ei[i]);
            return 0;
        }
    }
    for (size_t g = 0; g < GUARD * w; g++)
        if (ok && (unsigned char)ok[count * w + g] != POISON) {
            snprintf(msg, len, "the keys' guard was written");
            return 0;
        }
    for (size_t g = 0; g < GUARD; g++)
        if (oi) {
            int64_t p;
            memset(&p, POISON, 8);
            if (oi[count + g] != p) {
                snprintf(msg, len, "the positions' guard was written");
                return 0;
            }
        }
    return 1;
}

/* one call of either form on host data: dense (offsets NULL) or segments */
static int call_host(cltopk_context *ctx, cltopk_algo algo, cltopk_dtype type, const void *keys,
                     size_t rows, size_t cols, size_t ld, const int64_t *offsets, size_t k,
                     int smallest, void *ok, int64_t *oi)
{
    unsigned fl = smallest ? CLTOPK_SMALLEST : CLTOPK_LARGEST;
    if (offsets)
        return cltopk_topk_segments(ctx, type, keys, rows, offsets, k, fl, algo, ok, oi);
    return cltopk_topk_rows(ctx, type, keys, rows, cols, ld, k, fl, algo, ok, oi);
}

#if CLTOPK_HAVE_OPENCL
/* the same through the cl_mem forms: the keys at element `off` of a buffer */
/* call_buffer's input flags added to CL_MEM_READ_WRITE (tests of a buffer
 * the host may not read), and whether a failing call left the device outputs
 * as they were (1), changed them (0), or (-1) the last call succeeded */
static cl_mem_flags in_flags_extra;
static int out_untouched = -1;

static int call_buffer(cltopk_context *ctx, cltopk_algo algo, cltopk_dtype type,
                       const void *keys, size_t extent, size_t rows, size_t cols, size_t ld,
                       const int64_t *offsets, size_t k, int smallest, void *ok, int64_t *oi)
{
    cl_context c;
    cl_device_id d;
    cl_command_queue q;
    if (cltopk_get_cl(ctx, &c, &d, &q) != CLTOPK_OK)
        bail("cltopk_get_cl");
    size_t w = tsize(type), off = 5, count = rows * k;
    char *init = bmalloc((extent + off) * w + 1);
    memset(init, 0x7F, (extent + off) * w); /* around the slice: large keys */
    memcpy(init + off * w, keys, extent * w);
    cl_int err;
    cl_mem in = clCreateBuffer(c, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR | in_flags_extra,
                               (extent + off) * w, init, &err);
    cl_mem mk = clCreateBuffer(c, CL_MEM_READ_WRITE | (ok ? CL_MEM_COPY_HOST_PTR : 0),
                               (count + GUARD) * w, ok, &err);
    cl_mem mi = clCreateBuffer(c, CL_MEM_READ_WRITE | (oi ? CL_MEM_COPY_HOST_PTR : 0),
                               (count + GUARD) * 8, oi, &err);
    free(init);
    if (!in || !mk || !mi)
        bail("clCreateBuffer: %d", (int)err);
    unsigned fl = smallest ? CLTOPK_SMALLEST : CLTOPK_LARGEST;
    cl_event done = NULL;
    int st = offsets ? cltopk_topk_segments_buffer(ctx, type, in, off, rows, offsets, k, fl, algo,
                                                   ok ? mk : NULL, oi ? mi : NULL, 0, NULL,
                                                   &done)
                     : cltopk_topk_rows_buffer(ctx, type, in, off, rows, cols, ld, k, fl, algo,
                                               ok ? mk : NULL, oi ? mi : NULL, 0, NULL, &done);
    if (st == CLTOPK_OK) {
        if (!done)
            bail("no done event");
        if (ok)
            clEnqueueReadBuffer(q, mk, CL_TRUE, 0, (count + GUARD) * w, ok, 1, &done, NULL);
        if (oi)
            clEnqueueReadBuffer(q, mi, CL_TRUE, 0, (count + GUARD) * 8, oi, 1, &done, NULL);
        clReleaseEvent(done);
        out_untouched = -1;
    } else {
        /* the device outputs as the call found them (their initial bytes
         * are ok and oi's) */
        out_untouched = 1;
        for (int b = 0; b < 2; b++) {
            void *h = b ? (void *)oi : ok;
            size_t bytes = (count + GUARD) * (b ? 8 : w);
            char *back = h ? bmalloc(bytes) : NULL;
            if (h && (clEnqueueReadBuffer(q, b ? mi : mk, CL_TRUE, 0, bytes, back, 0, NULL,
                                          NULL) != CL_SUCCESS ||
                      memcmp(back, h, bytes) != 0))
                out_untouched = 0;
            free(back);
        }
    }
    clReleaseMemObject(in);
    clReleaseMemObject(mk);
    clReleaseMemObject(mi);
    return st;
}
#endif

/* run one case (dense when offsets is NULL) with the outputs of `want`, poisoned,
 * and compare with the oracle; buffer: through the cl_mem form */
static void check_case(cltopk_context *ctx, const char *dev, cltopk_algo algo, int buffer,
                       cltopk_dtype type, const char *dist, const void *keys, size_t extent,
                       size_t rows, size_t cols, size_t ld, const int64_t *offsets, size_t k,
                       int smallest, int want)
{
    size_t w = tsize(type), count = rows * k;
    size_t *starts = bmalloc((rows + 1) * sizeof *starts), *lens = bmalloc((rows + 1) * sizeof *lens);
    for (size_t r = 0; r < rows; r++) {
        starts[r] = offsets ? (size_t)offsets[r] : r * ld;
        lens[r] = offsets ? (size_t)(offsets[r + 1] - offsets[r]) : cols;
    }
    char *ek = bmalloc(count * w + 1);
    int64_t *ei = bmalloc(count * 8 + 8);
    expect_rows(type, keys, rows, starts, lens, k, smallest, ek, ei);
    char *ok_ = bmalloc((count + GUARD) * w);
    int64_t *oi = bmalloc((count + GUARD) * 8);
    memset(ok_, POISON, (count + GUARD) * w);
    memset(oi, POISON, (count + GUARD) * 8);
    char *okp = want & WANT_KEYS ? ok_ : NULL;
    int64_t *oip = want & WANT_INDEX ? oi : NULL;
    int st;
#if CLTOPK_HAVE_OPENCL
    if (buffer)
        st = call_buffer(ctx, algo, type, keys, extent, rows, cols, ld, offsets, k, smallest,
                         okp, oip);
    else
#endif
        st = call_host(ctx, algo, type, keys, rows, cols, ld, offsets, k, smallest, okp, oip);
    (void)buffer;
    char msg[256] = "";
    int good = st == CLTOPK_OK && same(count, w, ek, ei, okp, oip, msg, sizeof msg);
    if (!ok(good, "%s %s%s %s %s %s: %s %zu x %zu (ld %zu) k %zu want %d", dev,
            cltopk_algo_name(algo), buffer ? " buffer" : "", tname(type),
            smallest ? "smallest" : "largest", dist, offsets ? "segments" : "rows", rows,
            offsets ? (size_t)0 : cols, ld, k, want))
        diag("status %d (%s): %s", st, cltopk_last_error(ctx), msg);
    free(starts);
    free(lens);
    free(ek);
    free(ei);
    free(ok_);
    free(oi);
}

/* the distributions of the cases, by turn: adversarial ones included */
static const char *const mix[] = {"uniform", "special", "equal", "increasing", "narrow",
                                  "nan", "decreasing", "few"};

/* every type and direction: dense rows (ld > cols), a segment set with empty
 * and short segments, small shapes */
/* segments in make check on an OpenCL device: check_type's types only;
 * each type is four segment kernels of seconds each to build on POCL (some
 * 35 s for the other three on 2 cores), whose type-dependent code is the
 * order key of the row kernels, tested on every type.  Every type on the cpu
 * device and in make check-full */
static int seg_type(const char *dev, cltopk_dtype type)
{
    return strncmp(dev, "cl", 2) != 0 || check_runs_type(type);
}

static void cases(cltopk_context *ctx, const char *dev, cltopk_algo algo, int buffer)
{
    static const int64_t segs[] = {0, 0, 1, 6, 23, 23, 323, 325, 389, 1389, 1389};
    const size_t nseg = sizeof segs / sizeof segs[0] - 1;
    int turn = 0;
    for (int ti = 0; ti < 6; ti++) {
        cltopk_dtype type = all_types[ti];
        for (int sm = 0; sm <= 1; sm++) {
            size_t w = tsize(type);
            char *keys = bmalloc(4000 * w);
            const char *dist = mix[turn++ % (sizeof mix / sizeof mix[0])];
            int want = 1 + turn % 3;
            /* 7 rows of 100 with ld 103, k = 10 */
            gen_data(type, dist, 7 * 103, sm, &rng, keys);
            check_case(ctx, dev, algo, buffer, type, dist, keys, 6 * 103 + 100, 7, 100, 103,
                       NULL, 10, sm, want);
            /* segments (empty, 1, 5, 17, 300, 2, 64, 1000), k = 20 */
            gen_data(type, dist, (size_t)segs[nseg], sm, &rng, keys);
            if (seg_type(dev, type))
                check_case(ctx, dev, algo, buffer, type, dist, keys, (size_t)segs[nseg], nseg,
                           0, 0, segs, 20, sm, WANT_BOTH);
            /* one row, cols = 1; k = cols = 33 for 3 rows */
            check_case(ctx, dev, algo, buffer, type, dist, keys, 1, 1, 1, 1, NULL, 1, sm, want);
            check_case(ctx, dev, algo, buffer, type, dist, keys, 3 * 33, 3, 33, 33, NULL, 33, sm,
                       WANT_BOTH);
            free(keys);
        }
    }
    /* k = cols = 1000 (the largest kept set of the device kernel's lists) and
     * a longer row than one round, float32 and uint64 */
    for (int i = 0; i < 2; i++) {
        cltopk_dtype type = i ? CLTOPK_UINT64 : CLTOPK_FLOAT32;
        char *keys = bmalloc(3 * 1000 * 8);
        gen_data(type, "uniform", 3000, i, &rng, keys);
        check_case(ctx, dev, algo, buffer, type, "uniform", keys, 3000, 3, 1000, 1000, NULL, 1000,
                   i, WANT_BOTH);
        check_case(ctx, dev, algo, buffer, type, "uniform", keys, 3000, 2, 1400, 1500, NULL, 50,
                   !i, WANT_BOTH);
        free(keys);
    }
}

/* random shapes: rows of random length, ld and k, random segments (many
 * merges of the device kernel's buffer on sorted input), every type; with
 * two (the kernels' other configurations), in make check float32 and int64
 * only (both key widths: each type of a configuration is a program of
 * seconds to build on POCL), every type in make check-full */
static void random_shapes_of(cltopk_context *ctx, const char *dev, cltopk_algo algo, int count,
                             int two)
{
    for (int c = 0; c < count; c++) {
        cltopk_dtype type = two && !test_full() ? (rng_below(&rng, 2) ? CLTOPK_INT64
                                                                      : CLTOPK_FLOAT32)
                                                : all_types[rng_below(&rng, 6)];
        int sm = (int)rng_below(&rng, 2);
        const char *dist = mix[rng_below(&rng, sizeof mix / sizeof mix[0])];
        size_t w = tsize(type), rows = 1 + rng_below(&rng, 12);
        size_t cols = 1 + rng_below(&rng, 2500), ld = cols + rng_below(&rng, 4);
        size_t kmax = cols < 250 ? cols : 250, k = 1 + rng_below(&rng, kmax);
        size_t extent = (rows - 1) * ld + cols;
        char *keys = bmalloc(extent * w);
        gen_data(type, dist, extent, sm, &rng, keys);
        check_case(ctx, dev, algo, 0, type, dist, keys, extent, rows, cols, ld, NULL, k, sm,
                   WANT_BOTH);
        free(keys);
        /* segments: lengths 0 .. 3000, some empty */
        if (!seg_type(dev, type))
            continue;
        size_t nseg = 1 + rng_below(&rng, 12);
        int64_t *offs = bmalloc((nseg + 1) * sizeof *offs);
        offs[0] = (int64_t)rng_below(&rng, 3);
        for (size_t s = 0; s < nseg; s++)
            offs[s + 1] = offs[s] + (rng_below(&rng, 4) ? (int64_t)rng_below(&rng, 3000) : 0);
        extent = (size_t)offs[nseg];
        keys = bmalloc(extent * w + 1);
        gen_data(type, dist, extent, sm, &rng, keys);
        check_case(ctx, dev, algo, 0, type, dist, keys, extent, nseg, 0, 0, offs, k, sm,
                   WANT_BOTH);
        free(keys);
        free(offs);
    }
}

/* the CPU's large k (from 256 a row goes through the buffer of 2k candidates,
 * not the heap): rows long enough for the sample's floor (65536 and more) and
 * shorter, k = cols, ties at the k-th (equal, few), sorted input, segments
 * shorter than k and empty, every type over the cases */
static void large_k_cpu(cltopk_context *ctx, const char *dev, cltopk_algo algo)
{
    static const char *const ldists[] = {"uniform", "equal", "increasing", "few", "decreasing",
                                        "special"};
    for (int c = 0; c < 6; c++) {
        cltopk_dtype type = all_types[c];
        const char *dist = ldists[c];
        int sm = c & 1;
        size_t w = tsize(type), rows = 3, cols = 70001, ld = 70003;
        size_t extent = (rows - 1) * ld + cols;
        char *keys = bmalloc(extent * w);
        gen_data(type, dist, extent, sm, &rng, keys);
        size_t ks[] = {256, 255 + 2 * (size_t)c, 5000};
        for (size_t i = 0; i < 3; i++)
            check_case(ctx, dev, algo, 0, type, dist, keys, extent, rows, cols, ld, NULL, ks[i],
                       sm, i == 1 ? WANT_KEYS : WANT_BOTH);
        /* k = cols, shorter rows (no floor) */
        check_case(ctx, dev, algo, 0, type, dist, keys, 4 * 700, 4, 700, 700, NULL, 700, !sm,
                   WANT_BOTH);
        check_case(ctx, dev, algo, 0, type, dist, keys, 5 * 3000, 5, 2999, 3000, NULL, 300, sm,
                   WANT_BOTH);
        /* segments: empty, shorter than k, longer, one long enough for the floor */
        int64_t offs[] = {0, 0, 100, 400, 4400, 4400, 74400, 75000};
        check_case(ctx, dev, algo, 0, type, dist, keys, 75000, 7, 0, 0, offs, 512, !sm,
                   WANT_BOTH);
        free(keys);
    }
}

/* The rescan of a row whose sample's floor was too high: 1 at exactly the
 * elements that the sample reads (their positions computed as
 * cltopk_cpu_sample_floor in cpu/heap.c computes them, for n = 70001), 0
 * elsewhere, so that the floor keeps only the sample (1,088 elements) and k
 * = 2000 needs the zeros too.  (Should the sampling change, this stays a
 * test of ties at large k, no longer of the rescan.) */
static void rescan_cpu(cltopk_context *ctx, const char *dev)
{
    enum { RUN = 8 };
    size_t n = 70001, runs = n / 512, stride = n / runs;
    int32_t *keys = bmalloc(2 * n * sizeof *keys);
    memset(keys, 0, 2 * n * sizeof *keys);
    uint64_t h = 0x243F6A8885A308D3ull;
    for (size_t b = 0; b < runs; b++) {
        h ^= h >> 29;
        h *= 0xBF58476D1CE4E5B9ull;
        h ^= h >> 32;
        size_t start = b * stride + (size_t)(h % (stride - RUN + 1));
        for (size_t j = 0; j < RUN; j++)
            keys[start + j] = keys[n + start + j] = 1;
    }
    check_case(ctx, dev, CLTOPK_ALGO_CPU_HEAP, 0, CLTOPK_INT32, "sampled ones", keys, 2 * n, 2, n,
               n, NULL, 2000, 0, WANT_BOTH);
    free(keys);
}

static void random_shapes(cltopk_context *ctx, const char *dev, cltopk_algo algo, int count)
{
    random_shapes_of(ctx, dev, algo, count, 0);
}

/* host data through the device kernel in batches: CLTOPK_MAX_CHUNK makes a
 * device chunk 1000 elements, so that rows, segments and kNN queries go in
 * several batches; a row longer than a chunk is refused by bits and runs on
 * the CPU under AUTO */
static void batches(cltopk_context *ctx, const char *dev)
{
    setenv("CLTOPK_MAX_CHUNK", "1000", 1);
    for (int i = 0; i < 2; i++) {
        cltopk_dtype type = i ? CLTOPK_INT64 : CLTOPK_FLOAT32;
        size_t w = tsize(type);
        char *keys = bmalloc(30 * 103 * w);
        gen_data(type, "narrow", 30 * 103, i, &rng, keys);
        check_case(ctx, dev, CLTOPK_ALGO_BITS, 0, type, "narrow (batches)", keys, 29 * 103 + 100,
                   30, 100, 103, NULL, 10, i, WANT_BOTH);
        int64_t offs[41];
        offs[0] = 0;
        for (int s_ = 0; s_ < 40; s_++)
            offs[s_ + 1] = offs[s_] + (int64_t)rng_below(&rng, 70);
        check_case(ctx, dev, CLTOPK_ALGO_BITS, 0, type, "narrow (batches)", keys,
                   (size_t)offs[40], 40, 0, 0, offs, 12, !i, WANT_BOTH);
        free(keys);
    }
    float *big = bmalloc(3 * 1500 * 4);
    gen_data(CLTOPK_FLOAT32, "uniform", 3 * 1500, 0, &rng, big);
    char ok_[8 * 4];
    int64_t oi[8];
    int st = cltopk_topk_rows(ctx, CLTOPK_FLOAT32, big, 3, 1500, 1500, 2, 0, CLTOPK_ALGO_BITS,
                              ok_, oi);
    ok(st == CLTOPK_ERR_UNSUPPORTED && strstr(cltopk_last_error(ctx), "chunk"),
       "%s: bits refuses a host row longer than a device chunk (%s)", dev,
       cltopk_last_error(ctx));
    check_case(ctx, dev, CLTOPK_ALGO_AUTO, 0, CLTOPK_FLOAT32, "uniform (row > chunk)", big, 4500,
               3, 1500, 1500, NULL, 7, 0, WANT_BOTH);
    free(big);
    unsetenv("CLTOPK_MAX_CHUNK");
}

/* a call that must fail with `expect`, a detail, and nothing written */
static void refuse(cltopk_context *ctx, const char *dev, int expect, const char *what,
                   int (*call)(cltopk_context *, void *, int64_t *))
{
    char ok_[64 * 8];
    int64_t oi[64];
    memset(ok_, POISON, sizeof ok_);
    memset(oi, POISON, sizeof oi);
    int st = call(ctx, ok_, oi);
    int untouched = 1;
    for (size_t i = 0; i < sizeof ok_; i++)
        untouched &= (unsigned char)ok_[i] == POISON;
    for (size_t i = 0; i < sizeof oi; i++)
        untouched &= ((unsigned char *)oi)[i] == POISON;
    const char *d = cltopk_last_error(ctx);
    if (!ok(st == expect && st < 0 && d && d[0] && untouched, "%s: %s -> %s", dev, what,
            cltopk_strerror(expect)))
        diag("status %d, detail \"%s\", outputs %s", st, d ? d : "(null)",
             untouched ? "untouched" : "written");
}

static float data16[4 * 16];
static const int64_t decreasing[] = {0, 5, 3, 8};
static const int64_t negative[] = {-1, 2, 4};
static const int64_t good_offs[] = {0, 2, 4};
/* the end of the keys beyond what any array holds (only that is seen on host data) */
static const int64_t huge_offs[] = {0, 2, INT64_MAX};

static int c_ld(cltopk_context *c, void *k, int64_t *i)
{
    return cltopk_topk_rows(c, CLTOPK_FLOAT32, data16, 2, 8, 7, 2, 0, CLTOPK_ALGO_AUTO, k, i);
}
static int c_kcols(cltopk_context *c, void *k, int64_t *i)
{
    return cltopk_topk_rows(c, CLTOPK_FLOAT32, data16, 2, 8, 8, 9, 0, CLTOPK_ALGO_AUTO, k, i);
}
static int c_type(cltopk_context *c, void *k, int64_t *i)
{
    return cltopk_topk_rows(c, (cltopk_dtype)6, data16, 2, 8, 8, 2, 0, CLTOPK_ALGO_AUTO, k, i);
}
static int c_flags(cltopk_context *c, void *k, int64_t *i)
{
    return cltopk_topk_rows(c, CLTOPK_FLOAT32, data16, 2, 8, 8, 2, 4u, CLTOPK_ALGO_AUTO, k, i);
}
static int c_algo(cltopk_context *c, void *k, int64_t *i)
{
    return cltopk_topk_rows(c, CLTOPK_FLOAT32, data16, 2, 8, 8, 2, 0, (cltopk_algo)99, k, i);
}
static int c_unsup(cltopk_context *c, void *k, int64_t *i)
{
    return cltopk_topk_rows(c, CLTOPK_FLOAT32, data16, 2, 8, 8, 2, 0, CLTOPK_ALGO_BITONIC, k, i);
}
static int c_nullkeys(cltopk_context *c, void *k, int64_t *i)
{
    return cltopk_topk_rows(c, CLTOPK_FLOAT32, NULL, 2, 8, 8, 2, 0, CLTOPK_ALGO_AUTO, k, i);
}
static int c_nullouts(cltopk_context *c, void *k, int64_t *i)
{
    (void)k, (void)i;
    return cltopk_topk_rows(c, CLTOPK_FLOAT32, data16, 2, 8, 8, 2, 0, CLTOPK_ALGO_AUTO, NULL,
                            NULL);
}
static int c_overlap(cltopk_context *c, void *k, int64_t *i)
{
    (void)k;
    return cltopk_topk_rows(c, CLTOPK_FLOAT32, data16, 2, 8, 8, 2, 0, CLTOPK_ALGO_CPU_HEAP,
                            data16 + 3, i);
}
static int c_decreasing(cltopk_context *c, void *k, int64_t *i)
{
    return cltopk_topk_segments(c, CLTOPK_FLOAT32, data16, 3, decreasing, 2, 0,
                                CLTOPK_ALGO_AUTO, k, i);
}
static int c_negative(cltopk_context *c, void *k, int64_t *i)
{
    return cltopk_topk_segments(c, CLTOPK_FLOAT32, data16, 2, negative, 2, 0, CLTOPK_ALGO_AUTO,
                                k, i);
}
static int c_nulloffs(cltopk_context *c, void *k, int64_t *i)
{
    return cltopk_topk_segments(c, CLTOPK_FLOAT32, data16, 2, NULL, 2, 0, CLTOPK_ALGO_AUTO, k,
                                i);
}
static int c_huge(cltopk_context *c, void *k, int64_t *i)
{
    return cltopk_topk_segments(c, CLTOPK_FLOAT32, data16, 2, huge_offs, 2, 0, CLTOPK_ALGO_AUTO,
                                k, i);
}
static int c_segalgo(cltopk_context *c, void *k, int64_t *i)
{
    return cltopk_topk_segments(c, CLTOPK_FLOAT32, data16, 2, good_offs, 2, 0,
                                CLTOPK_ALGO_SORT, k, i);
}
static int c_bits(cltopk_context *c, void *k, int64_t *i)
{
    return cltopk_topk_rows(c, CLTOPK_FLOAT32, data16, 2, 8, 8, 2, 0, CLTOPK_ALGO_BITS, k, i);
}
static int c_bitsk(cltopk_context *c, void *k, int64_t *i)
{
    static float big[5000];
    return cltopk_topk_rows(c, CLTOPK_FLOAT32, big, 1, 5000, 5000, 4096, 0, CLTOPK_ALGO_BITS, k,
                            i);
}

/* cltopk_explain_rows: a text with AUTO's choice; refusals as the calls */
static void explain(cltopk_context *ctx, const char *dev, int is_cl)
{
    char buf[1024];
    static const int64_t offs[] = {0, 3, 3, 100};
    int st = cltopk_explain_rows(ctx, CLTOPK_FLOAT32, 4, 1000, NULL, 10, 0, 0, buf, sizeof buf);
    ok(st == CLTOPK_OK && strstr(buf, "\n-> ") && strstr(buf, "bits") && strstr(buf, "cpu-heap"),
       "%s: explain_rows names both ways and the choice", dev);
    if (st != CLTOPK_OK || !strstr(buf, "\n-> "))
        diag("%d %s: %s", st, cltopk_last_error(ctx), buf);
    st = cltopk_explain_rows(ctx, CLTOPK_INT64, 3, 0, offs, 50, CLTOPK_SMALLEST, is_cl, buf,
                             sizeof buf);
    ok(st == CLTOPK_OK && strstr(buf, "segments") &&
           (!is_cl || strstr(buf, "a work-item each")),
       "%s: explain_rows of segments%s", dev, is_cl ? " on device data" : "");
    if (is_cl) {
        /* dense rows on the device: the register tile, and the kernel that
         * streams a row where CLTOPK_BITS turns the tile off */
        setenv("CLTOPK_BITS", "warp=0", 1);
        st = cltopk_explain_rows(ctx, CLTOPK_FLOAT32, 4, 1000, NULL, 10, 0, 1, buf, sizeof buf);
        ok(st == CLTOPK_OK && strstr(buf, "register tile"),
           "%s: explain_rows of dense rows (warp=0) names the register tile", dev);
        setenv("CLTOPK_BITS", "warp=0,tile=0", 1);
        st = cltopk_explain_rows(ctx, CLTOPK_FLOAT32, 4, 1000, NULL, 10, 0, 1, buf, sizeof buf);
        ok(st == CLTOPK_OK && !strstr(buf, "register tile") && strstr(buf, "a buffer of"),
           "%s: explain_rows with CLTOPK_BITS=tile=0 names the streaming kernel", dev);
        unsetenv("CLTOPK_BITS");
    }
    st = cltopk_explain_rows(ctx, CLTOPK_FLOAT32, 4, 10, NULL, 11, 0, 0, buf, sizeof buf);
    ok(st == CLTOPK_ERR_K_RANGE, "%s: explain_rows k > cols -> K_RANGE", dev);
    st = cltopk_explain_rows(ctx, CLTOPK_FLOAT32, 4, 10, NULL, 1, 0, 0, NULL, 10);
    ok(st == CLTOPK_ERR_INVALID_ARGUMENT, "%s: explain_rows buf NULL -> INVALID_ARGUMENT", dev);
    if (!is_cl) {
        st = cltopk_explain_rows(ctx, CLTOPK_FLOAT32, 4, 10, NULL, 1, 0, 1, buf, sizeof buf);
        ok(st == CLTOPK_ERR_NO_OPENCL, "%s: explain_rows of device data -> NO_OPENCL", dev);
    }
    st = cltopk_explain_rows(ctx, CLTOPK_FLOAT32, 4, 1000, NULL, 10, 0, 0, buf, 20);
    ok(st == CLTOPK_OK && strlen(buf) == 19, "%s: explain_rows truncates to len", dev);
}

static void bad_args(cltopk_context *ctx, const char *dev, int is_cl)
{
    static const struct {
        int expect;
        const char *what;
        int (*call)(cltopk_context *, void *, int64_t *);
    } bad[] = {
        {CLTOPK_ERR_INVALID_ARGUMENT, "rows: ld < cols", c_ld},
        {CLTOPK_ERR_K_RANGE, "rows: k > cols", c_kcols},
        {CLTOPK_ERR_BAD_TYPE, "rows: unknown type", c_type},
        {CLTOPK_ERR_BAD_FLAGS, "rows: unknown flag", c_flags},
        {CLTOPK_ERR_BAD_ALGO, "rows: unknown algorithm", c_algo},
        {CLTOPK_ERR_UNSUPPORTED, "rows: bitonic", c_unsup},
        {CLTOPK_ERR_INVALID_ARGUMENT, "rows: keys NULL", c_nullkeys},
        {CLTOPK_ERR_INVALID_ARGUMENT, "rows: both outputs NULL", c_nullouts},
        {CLTOPK_ERR_INVALID_ARGUMENT, "rows: output overlaps the input", c_overlap},
        {CLTOPK_ERR_INVALID_ARGUMENT, "segments: decreasing offsets", c_decreasing},
        {CLTOPK_ERR_INVALID_ARGUMENT, "segments: negative offset", c_negative},
        {CLTOPK_ERR_INVALID_ARGUMENT, "segments: offsets NULL", c_nulloffs},
        {CLTOPK_ERR_INVALID_ARGUMENT, "segments: offsets[nseg] INT64_MAX", c_huge},
        {CLTOPK_ERR_UNSUPPORTED, "segments: sort", c_segalgo},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        refuse(ctx, dev, bad[i].expect, bad[i].what, bad[i].call);
    if (!is_cl)
        refuse(ctx, dev, CLTOPK_ERR_UNSUPPORTED, "rows: bits on the cpu context", c_bits);
    else
        refuse(ctx, dev, CLTOPK_ERR_UNSUPPORTED, "rows: bits with k = 4096", c_bitsk);
    /* nothing to do: OK, nothing written */
    char ok_[16];
    int64_t oi[2];
    memset(ok_, POISON, sizeof ok_);
    memset(oi, POISON, sizeof oi);
    int st = cltopk_topk_rows(ctx, CLTOPK_FLOAT32, NULL, 0, 8, 8, 2, 0, CLTOPK_ALGO_AUTO, ok_, oi);
    int st2 = cltopk_topk_rows(ctx, CLTOPK_FLOAT32, data16, 2, 8, 8, 0, 0, CLTOPK_ALGO_AUTO, ok_,
                               oi);
    int st3 = cltopk_topk_segments(ctx, CLTOPK_FLOAT32, NULL, 0, NULL, 2, 0, CLTOPK_ALGO_AUTO,
                                   ok_, oi);
    ok(st == CLTOPK_OK && st2 == CLTOPK_OK && st3 == CLTOPK_OK && (unsigned char)ok_[0] == POISON &&
           ((unsigned char *)oi)[0] == POISON,
       "%s: rows = 0, k = 0, nseg = 0: OK, nothing written", dev);
    /* all segments empty, keys NULL: padding only */
    static const int64_t empty[] = {0, 0, 0};
    st = cltopk_topk_segments(ctx, CLTOPK_FLOAT32, NULL, 2, empty, 1, 0, CLTOPK_ALGO_AUTO, ok_,
                              oi);
    ok(st == CLTOPK_OK && oi[0] == -1 && oi[1] == -1 && !memcmp(ok_, "\0\0\0\0\0\0\0\0", 8),
       "%s: empty segments with keys NULL are padded", dev);
}

#if CLTOPK_HAVE_OPENCL
/* 4 rows of 16 distinct floats, k = 2, out_index only, behind a user event:
 * nothing completes before the event, and each row's two largest after it,
 * larger first */
static void gated(cltopk_context *ctx, const char *dev, cltopk_algo algo)
{
    cl_context c;
    cl_device_id d;
    cl_command_queue q;
    if (cltopk_get_cl(ctx, &c, &d, &q) != CLTOPK_OK)
        bail("cltopk_get_cl");
    cl_int err;
    float vals[64];
    for (int i = 0; i < 64; i++)
        vals[i] = (float)((i * 37) % 64);
    cl_mem in = clCreateBuffer(c, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof vals, vals,
                               &err);
    cl_mem out = clCreateBuffer(c, CL_MEM_READ_WRITE, 8 * sizeof(int64_t), NULL, &err);
    cl_event gate = clCreateUserEvent(c, &err), done = NULL;
    if (!in || !out || !gate)
        bail("gated: OpenCL objects: %d", (int)err);
    int st = cltopk_topk_rows_buffer(ctx, CLTOPK_FLOAT32, in, 0, 4, 16, 16, 2, 0, algo, NULL,
                                     out, 1, &gate, &done);
    cl_int es = CL_COMPLETE;
    if (done)
        clGetEventInfo(done, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof es, &es, NULL);
    ok(st == CLTOPK_OK && done && es != CL_COMPLETE, "%s: rows_buffer (%s) waits for the wait list",
       dev, cltopk_algo_name(algo));
    clSetUserEventStatus(gate, CL_COMPLETE);
    int64_t idx[8] = {0};
    if (done) {
        clEnqueueReadBuffer(q, out, CL_TRUE, 0, sizeof idx, idx, 1, &done, NULL);
        clReleaseEvent(done);
    }
    int good = st == CLTOPK_OK;
    for (int r = 0; r < 4 && good; r++) {
        int64_t a = -1, b = -1;
        for (int j = 0; j < 16; j++) {
            if (a < 0 || vals[r * 16 + j] > vals[r * 16 + a])
                b = a, a = j;
            else if (b < 0 || vals[r * 16 + j] > vals[r * 16 + b])
                b = j;
        }
        good = idx[r * 2] == a && idx[r * 2 + 1] == b;
    }
    ok(good, "%s: rows_buffer (%s) after the gate: the right answers", dev,
       cltopk_algo_name(algo));
    clReleaseEvent(gate);
    clReleaseMemObject(in);
    clReleaseMemObject(out);
}

static void bad_buffers(cltopk_context *ctx, const char *dev)
{
    cl_context c;
    cl_device_id d;
    cl_command_queue q;
    cltopk_get_cl(ctx, &c, &d, &q);
    cl_int err;
    cl_mem in = clCreateBuffer(c, CL_MEM_READ_WRITE, 64 * 4, NULL, &err);
    cl_mem out = clCreateBuffer(c, CL_MEM_READ_WRITE, 64 * 8, NULL, &err);
    /* refusals of 4 rows of 16 (ld 16) or nseg segments of keys of 64 floats,
     * k = 2: the status, a detail, out_index and the keys unwritten, *done as
     * it was */
    static const int64_t far[] = {0, 10, 70}, eight[] = {0, 2, 8};
    static const struct {
        const char *what;
        int seg;
        const int64_t *offs;
        size_t nseg, offset;
        int short_out, algo;
        int expect, or_else; /* or_else: another status that says it too (0: none) */
    } bad[] = {
        {"rows_buffer: out_index a byte short", 0, NULL, 0, 0, 1, CLTOPK_ALGO_AUTO,
         CLTOPK_ERR_BUFFER_SIZE, 0},
        {"rows_buffer: offset 1, the last row past the keys", 0, NULL, 0, 1, 0, CLTOPK_ALGO_AUTO,
         CLTOPK_ERR_BUFFER_SIZE, 0},
        {"rows_buffer: cpu-heap", 0, NULL, 0, 0, 0, CLTOPK_ALGO_CPU_HEAP, CLTOPK_ERR_UNSUPPORTED,
         0},
        {"segments_buffer: offsets past the keys", 1, far, 2, 0, 0, CLTOPK_ALGO_AUTO,
         CLTOPK_ERR_BUFFER_SIZE, 0},
        {"segments_buffer: offset 57, the last segment past the keys", 1, eight, 2, 57, 0,
         CLTOPK_ALGO_AUTO, CLTOPK_ERR_BUFFER_SIZE, 0},
        {"segments_buffer: offset SIZE_MAX / 2", 1, eight, 2, SIZE_MAX / 2, 0, CLTOPK_ALGO_AUTO,
         CLTOPK_ERR_INVALID_ARGUMENT, CLTOPK_ERR_BUFFER_SIZE},
        {"segments_buffer: offsets[nseg] INT64_MAX", 1, huge_offs, 2, 0, 0, CLTOPK_ALGO_AUTO,
         CLTOPK_ERR_INVALID_ARGUMENT, 0},
        {"segments_buffer: decreasing offsets", 1, decreasing, 3, 0, 0, CLTOPK_ALGO_AUTO,
         CLTOPK_ERR_INVALID_ARGUMENT, 0},
        {"segments_buffer: negative offset", 1, negative, 2, 0, 0, CLTOPK_ALGO_AUTO,
         CLTOPK_ERR_INVALID_ARGUMENT, 0},
        {"segments_buffer: offsets NULL", 1, NULL, 2, 0, 0, CLTOPK_ALGO_AUTO,
         CLTOPK_ERR_INVALID_ARGUMENT, 0},
        {"segments_buffer: cpu-heap", 1, eight, 2, 0, 0, CLTOPK_ALGO_CPU_HEAP,
         CLTOPK_ERR_UNSUPPORTED, 0},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cl_mem keys = poisoned_mem(ctx, 64 * 4);
        cl_mem oi = poisoned_mem(ctx, bad[i].short_out ? 4 * 2 * 8 - 1 : 64 * 8);
        cl_event done = EVENT_SENTINEL;
        int st = bad[i].seg ? cltopk_topk_segments_buffer(ctx, CLTOPK_FLOAT32, keys,
                                                          bad[i].offset, bad[i].nseg,
                                                          bad[i].offs, 2, 0,
                                                          (cltopk_algo)bad[i].algo, NULL, oi, 0,
                                                          NULL, &done)
                            : cltopk_topk_rows_buffer(ctx, CLTOPK_FLOAT32, keys, bad[i].offset,
                                                      4, 16, 16, 2, 0, (cltopk_algo)bad[i].algo,
                                                      NULL, oi, 0, NULL, &done);
        int expect = bad[i].or_else && st == bad[i].or_else ? st : bad[i].expect;
        const cl_mem mine[] = {keys, oi};
        char msg[512];
        if (!ok(check_refused(ctx, ctx,
                              bad[i].seg ? "cltopk_topk_segments_buffer"
                                         : "cltopk_topk_rows_buffer",
                              st, expect, done, mine, 2, msg, sizeof msg),
                "%s: %s -> %s, nothing written", dev, bad[i].what, cltopk_strerror(expect)))
            diag("%s", msg);
        clReleaseMemObject(keys);
        clReleaseMemObject(oi);
    }
    cl_event done = NULL;
    int st = cltopk_topk_rows_buffer(ctx, CLTOPK_FLOAT32, in, 0, 0, 16, 16, 2, 0, CLTOPK_ALGO_AUTO,
                                 NULL, out, 0, NULL, &done);
    ok(st == CLTOPK_OK && done, "%s: rows_buffer: rows = 0 gives an event", dev);
    if (done) {
        clWaitForEvents(1, &done);
        clReleaseEvent(done);
    }
    gated(ctx, dev, CLTOPK_ALGO_BITS);
    clReleaseMemObject(in);
    clReleaseMemObject(out);
}
#endif

/* rows of different content in one call: row r of `rows` (ld apart) drawn
 * from dists[] in turn from `from` */
static void mixed_rows(cltopk_dtype type, size_t rows, size_t cols, size_t ld, int sm, int from,
                       char *keys)
{
    size_t w = tsize(type);
    char *row = bmalloc(cols * w);
    memset(keys, 0x7F, ((rows - 1) * ld + cols) * w);
    for (size_t r = 0; r < rows; r++) {
        const char *dist = dists[(from + r) % 13];
        gen_data(type, dist, cols, sm, &rng, row);
        memcpy(keys + r * ld * w, row, cols * w);
    }
    free(row);
}

/* CLTOPK_BITS=env with check=served on 4 uniform rows of 20000 (each row
 * served by its candidates; k from k1 to k1 + n1 - 1, the smallest where sm,
 * the cl_mem form where sm), then env alone on mixed rows (either way; k from
 * k2 to k2 + n2 - 1, the other direction and form; gen_data's distributions
 * from `from`) */
static void sf_served_mixed(cltopk_context *cl, const char *dev, const char *env,
                            cltopk_dtype type, int sm, size_t k1, size_t n1, int from,
                            size_t k2, size_t n2)
{
    size_t rows = 4, cols = 20000;
    char *keys = bmalloc(rows * cols * tsize(type)), env2[100], where[300];
    snprintf(env2, sizeof env2, "%s,check=served", env);
    setenv("CLTOPK_BITS", env2, 1);
    snprintf(where, sizeof where, "%s %s", dev, env2);
    gen_data(type, "uniform", rows * cols, sm, &rng, keys);
    size_t k = k1 + rng_below(&rng, n1);
    check_case(cl, where, CLTOPK_ALGO_BITS, sm, type, "uniform", keys, rows * cols, rows, cols,
               cols, NULL, k, sm, WANT_BOTH);
    setenv("CLTOPK_BITS", env, 1);
    snprintf(where, sizeof where, "%s %s", dev, env);
    mixed_rows(type, rows, cols, cols, !sm, from, keys);
    k = k2 + rng_below(&rng, n2);
    check_case(cl, where, CLTOPK_ALGO_BITS, !sm, type, "mixed", keys, rows * cols, rows, cols,
               cols, NULL, k, !sm, WANT_BOTH);
    free(keys);
}

/* the sample filter of long dense rows (CLTOPK_BITS path=sf), forced: every
 * type and direction, rows of mixed content (every distribution of
 * gen_data) with ld > cols (unaligned rows: the filter's element loop) and
 * ld = cols, k from 1 to cols, several groups a row, the host and cl_mem
 * forms; then each exceptional way forced and checked (check=served|
 * fallback): too few candidates (force=few), too many (force=all with a small
 * buffer, past the local segment), everything a candidate and served
 * (force=all); a buffer about the expected count (some rows served, some
 * not, in one call) */
#if CLTOPK_HAVE_OPENCL
/* rows and segments of cl_mem data a row at a time on the device (k past the
 * device kernel's largest, or a named single-array algorithm): each row by
 * the single-array algorithm, its answer copied to its place, short and
 * empty segments padded; AUTO with CLTOPK_BITS each=on, explain's choice
 * with each=on and each=off */
static void each_cases(cltopk_context *cl, const char *dev)
{
    static const cltopk_algo algos[] = {CLTOPK_ALGO_SAMPLE_FILTER, CLTOPK_ALGO_RADIX_SELECT,
                                        CLTOPK_ALGO_SORT, CLTOPK_ALGO_BITONIC};
    static const size_t ks[] = {2500, 2049, 3000, 1000};
    /* segments of 0, 7, 3000, 3, 6000, 0 and 2990 elements */
    static const int64_t segs[] = {0, 0, 7, 3007, 3010, 9010, 9010, 12000};
    const size_t nseg = sizeof segs / sizeof *segs - 1;
    char where[64];
    for (size_t i = 0; i < sizeof algos / sizeof *algos; i++) {
        cltopk_dtype type = i & 1 ? CLTOPK_INT64 : CLTOPK_FLOAT32;
        const char *dist = mix[(i * 3) % (sizeof mix / sizeof *mix)];
        /* (3 * 3003 + 3000 elements for the rows, the first 12000 for the
         * segments) */
        char *keys = bmalloc(12009 * 8);
        snprintf(where, sizeof where, "%s each", dev);
        gen_data(type, dist, 12009, (int)(i & 1), &rng, keys);
        check_case(cl, where, algos[i], 1, type, dist, keys, 3 * 3003 + 3000, 4, 3000, 3003,
                   NULL, ks[i], (int)(i & 1), 1 + (int)(i % 3));
        check_case(cl, where, algos[i], 1, type, dist, keys, 12000, nseg, 0, 0, segs, ks[i],
                   (int)((i + 1) & 1), WANT_BOTH);
        free(keys);
    }
    /* AUTO past the device kernel's largest k (2048): a row at a time where
     * each=on says so, the CPU on a host copy where each=off (the input
     * mapped, or read with stage=read) */
    char *keys = bmalloc(3 * 5000 * 8);
    gen_data(CLTOPK_UINT64, "few", 3 * 5000, 0, &rng, keys);
    static const char *const modes[] = {"each=on", "each=off", "each=off,stage=read"};
    for (int m = 0; m < 3; m++) {
        setenv("CLTOPK_BITS", modes[m], 1);
        snprintf(where, sizeof where, "%s %s", dev, modes[m]);
        check_case(cl, where, CLTOPK_ALGO_AUTO, 1, CLTOPK_UINT64, "few", keys, 3 * 5000, 3, 4990,
                   5000, NULL, 2600, 0, WANT_BOTH);
        check_case(cl, where, CLTOPK_ALGO_AUTO, 1, CLTOPK_UINT64, "few", keys, 12000, nseg, 0, 0,
                   segs, 2100, 1, WANT_BOTH);
        char buf[2048];
        int st = cltopk_explain_rows(cl, CLTOPK_UINT64, 3, 4990, NULL, 2600, 0, 1, buf,
                                     sizeof buf);
        const char *arrow = strstr(buf, "\n-> ");
        int each = arrow && strstr(arrow, "a row at a time on the device");
        ok(st == CLTOPK_OK && strstr(buf, "each row ") && each == (m == 0),
           "%s: explain_rows of device rows at k = 2600 chooses %s", where,
           m == 0 ? "a row at a time" : "the CPU on a host copy");
        if (st != CLTOPK_OK || each != (m == 0))
            diag("%d %s: %s", st, cltopk_last_error(cl), buf);
    }
    /* an input the host may not read (CL_MEM_HOST_NO_ACCESS): AUTO takes a
     * row at a time on any device, not the host copy, which each=off asks
     * for and is refused, naming the flag, with nothing written */
    in_flags_extra = CL_MEM_HOST_NO_ACCESS;
    setenv("CLTOPK_BITS", "each=auto", 1);
    snprintf(where, sizeof where, "%s no host access", dev);
    check_case(cl, where, CLTOPK_ALGO_AUTO, 1, CLTOPK_UINT64, "few", keys, 3 * 5000, 3, 4990,
               5000, NULL, 2600, 1, WANT_BOTH);
    setenv("CLTOPK_BITS", "each=off", 1);
    {
        size_t count = 3 * 2600;
        char *ok_ = bmalloc((count + GUARD) * 8);
        int64_t *oi = bmalloc((count + GUARD) * 8);
        memset(ok_, POISON, (count + GUARD) * 8);
        memset(oi, POISON, (count + GUARD) * 8);
        int st = call_buffer(cl, CLTOPK_ALGO_AUTO, CLTOPK_UINT64, keys, 3 * 5000, 3, 4990, 5000,
                             NULL, 2600, 0, ok_, oi);
        ok(st == CLTOPK_ERR_UNSUPPORTED &&
               strstr(cltopk_last_error(cl), "CL_MEM_HOST_NO_ACCESS") != NULL &&
               out_untouched == 1,
           "%s each=off: the host copy of an input the host may not read is refused, "
           "naming the flag, nothing written", where);
        if (st != CLTOPK_ERR_UNSUPPORTED || out_untouched != 1)
            diag("status %d (%s), outputs untouched %d", st, cltopk_last_error(cl),
                 out_untouched);
        free(ok_);
        free(oi);
    }
    in_flags_extra = 0;
    unsetenv("CLTOPK_BITS");
    free(keys);
    /* a user event gates the rows a row at a time: nothing completes before it */
    snprintf(where, sizeof where, "%s each", dev);
    gated(cl, where, CLTOPK_ALGO_SAMPLE_FILTER);
}
#endif

/* one float32's bits for the keys the composite does not determine: 3 in 16
 * zeros of either sign, 2 NaNs of random payloads and signs, 1 +inf (either
 * sign where neg_inf), the rest in [1, 2) */
static uint32_t special_f32(int neg_inf)
{
    uint32_t c = rng_below(&rng, 16), sign = (uint32_t)rng_below(&rng, 2) << 31;
    return c < 3    ? sign                                                        /* +-0 */
           : c < 5  ? sign | 0x7F800001u | (uint32_t)rng_below(&rng, 1u << 22)  /* NaN */
           : c == 5 ? 0x7F800000u | (neg_inf ? sign : 0u)                        /* inf */
                    : 0x3F800000u | (uint32_t)rng_below(&rng, 1u << 20);         /* [1, 2) */
}

/* the 32-bit key types the warp kernels take, by turn */
static const cltopk_dtype types32[3] = {CLTOPK_FLOAT32, CLTOPK_INT32, CLTOPK_UINT32};

/* the warp kernel (cl/rows_warp.cl, CLTOPK_BITS warp=1; the GPU default):
 * 32-bit keys, a row a group of 32 holding it in registers.  Its programs'
 * widths (1, 2, 4, 32, 64 and 128 columns a work-item; rows of exactly 32
 * and 4096 columns fill them: WFULL), k from 1 to 32 and,
 * with wkmax=128, to 128 (each work-item's 2 to 4 best), every distribution;
 * rows built so that one work-item holds the best values (its threshold then
 * admits more candidates than it ranks: the exact bisection), the same forced
 * on every row by a small wcap; ld > cols, host data and cl_mem. */
static void warp_cases(cltopk_context *cl, const char *dev)
{
    static const size_t wcols[] = {1, 32, 31, 33, 100, 1000, 1025, 4096};
    /* env, k past 32 (wkmax=128), which columns in make check (0: none, 1:
     * 1000 only, 2: all but 100, 1025 and 4096) */
    static const struct {
        const char *env;
        int bigk, check;
    } wenv[] = {{"warp=1,wcols=4096", 0, 2},
                {"warp=1,wcols=4096,wcap=32", 0, 1},
                {"warp=1,wcols=4096,wkmax=128", 1, 0},
                /* every load clamped (on GPUs otherwise only the rows whose
                 * window passes the buffer's end; CPU devices always clamp) */
                {"warp=1,wcols=4096,wwin=0", 0, 1},
                /* several warps a row: 1000 columns by 4 warps of 8 columns
                 * a work-item, 4096 by 8 of 16; k to 128 on 2 warps (each
                 * warp's kw = 64: its 4 best a work-item); the bisection */
                {"warp=1,wcols=4096,wrmax=8", 0, 1},
                {"warp=1,wcols=4096,wn=2,wkmax=128", 1, 0},
                {"warp=1,wcols=4096,wrmax=8,wcap=32", 0, 0}};
    char where[96];
    int turn = 0;
    for (size_t e = 0; e < sizeof wenv / sizeof wenv[0]; e++) {
        setenv("CLTOPK_BITS", wenv[e].env, 1);
        snprintf(where, sizeof where, "%s %s", dev, wenv[e].env);
        for (size_t ci = 0; ci < sizeof wcols / sizeof wcols[0]; ci++) {
            size_t cols = wcols[ci], rows = cols > 1000 ? 3 : 5, ld = cols + (ci % 3);
            if (wenv[e].bigk && cols < 100)
                continue;
            /* make check: fewer programs (each a build of seconds on POCL;
             * the widest, 128 columns a work-item, under check-full) */
            if (!test_full() && (wenv[e].check == 2 ? cols == 100 || cols == 1025 || cols == 4096
                                                    : !wenv[e].check || cols != 1000u))
                continue;
            cltopk_dtype type = types32[(ci + e) % 3];
            int sm = (int)((ci + e) & 1);
            const char *dist = mix[turn++ % (sizeof mix / sizeof mix[0])];
            size_t w = tsize(type), extent = (rows - 1) * ld + cols;
            char *keys = bmalloc(extent * w);
            gen_data(type, dist, extent, sm, &rng, keys);
            size_t kmax = wenv[e].bigk ? 128 : 32, k1 = cols < kmax ? cols : kmax;
            size_t k2 = 1 + rng_below(&rng, (uint32_t)k1);
            if (wenv[e].bigk)
                k2 = 33 + rng_below(&rng, (uint32_t)(k1 - 32));
            check_case(cl, where, CLTOPK_ALGO_BITS, 0, type, dist, keys, extent, rows, cols, ld,
                       NULL, k1, sm, WANT_BOTH);
            check_case(cl, where, CLTOPK_ALGO_BITS, (int)(ci & 1), type, dist, keys, extent,
                       rows, cols, ld, NULL, k2, !sm, ci % 3 ? WANT_BOTH : WANT_KEYS);
            if (e == 0)
                check_case(cl, where, CLTOPK_ALGO_BITS, 1, type, dist, keys, extent, rows, cols,
                           ld, NULL, 1, sm, WANT_INDEX);
            free(keys);
        }
    }
    /* the GPU's shapes: 4096 columns by 4 warps of 32 columns a work-item,
     * 1024 by one warp, 1000 (not full); full rows loaded by 16-byte vectors
     * (wvec, the default: rows of exactly 32 wn wr columns whose starts are
     * multiples of 4 elements; an ld of cols + 1 takes one element a load),
     * with the bisection (wcap=32), and wvec=0; the candidates appended by
     * an atomic a slot (wappend=1; the default on 4 warps a row) and a
     * work-item (wappend=2; the default on 1 or 2), with the bisection */
    static const size_t vcols[] = {1024, 4096, 1000};
    /* env, which columns in make check (ALL, NONE or an index of vcols) */
    enum { ALL = -1, NONE = -2 };
    static const struct {
        const char *env;
        int check;
    } venv[] = {{"wvec=1", ALL},    {"wvec=1,wcap=32", 1},    {"wvec=0", NONE},
                {"wappend=1", 0}, {"wappend=2,wcap=32", 1}};
    for (size_t e = 0; e < sizeof venv / sizeof venv[0]; e++)
        for (size_t ci = 0; ci < sizeof vcols / sizeof vcols[0]; ci++) {
            if (!test_full() && venv[e].check != ALL && venv[e].check != (int)ci)
                continue;
            char env[64], vwhere[192];
            size_t cols = vcols[ci], rows = 4;
            snprintf(env, sizeof env, "warp=1,wcols=4096,wrmax=32,%s", venv[e].env);
            setenv("CLTOPK_BITS", env, 1);
            snprintf(vwhere, sizeof vwhere, "%s %s", dev, env);
            for (int v = 0; v < 2; v++) {
                size_t ld = cols + (v ? 1 : 4 * (ci & 1)), extent = (rows - 1) * ld + cols;
                cltopk_dtype type = types32[(ci + e + (size_t)v) % 3];
                const char *dist = mix[turn++ % (sizeof mix / sizeof mix[0])];
                int sm = (int)((ci + e + (size_t)v) & 1);
                char *keys = bmalloc(extent * tsize(type));
                gen_data(type, dist, extent, sm, &rng, keys);
                check_case(cl, vwhere, CLTOPK_ALGO_BITS, v, type, dist, keys, extent, rows,
                           cols, ld, NULL, 32, sm, WANT_BOTH);
                check_case(cl, vwhere, CLTOPK_ALGO_BITS, !v, type, dist, keys, extent, rows,
                           cols, ld, NULL, 1 + rng_below(&rng, 32), !sm,
                           v ? WANT_KEYS : WANT_INDEX);
                free(keys);
            }
        }
    /* rows of one value, and of two (v = 2, 3: the smallest, the best of
     * that direction, in three quarters of the columns): the first append
     * by 32-bit keys (WREL, one and two warps a row) takes every element of
     * T's key, more than the buffer (512), and appends again by composites */
    setenv("CLTOPK_BITS", "warp=1,wcols=4096,wrmax=32", 1);
    for (int v = 0; v < 4; v++) {
        size_t rows = 3, cols = v & 1 ? 2048 : 1024;
        float *f = bmalloc(rows * cols * sizeof *f);
        for (size_t i = 0; i < rows * cols; i++)
            f[i] = v < 2 || (i * 7919) % 4 ? -3.5f : 8.25f;
        snprintf(where, sizeof where, "%s warp=1,wrmax=32 (%s, %zu columns)", dev,
                 v < 2 ? "one value" : "two values", cols);
        check_case(cl, where, CLTOPK_ALGO_BITS, v & 1, CLTOPK_FLOAT32, "equal", f, rows * cols,
                   rows, cols, cols, NULL, 32, v >> 1, WANT_BOTH);
        free(f);
    }
    /* one work-item's columns (j % 32 == 0) the best of the row, in random
     * order: the other work-items' best are low, so the threshold admits
     * most of the row; and the same with every key equal there */
    for (int v = test_full() ? 0 : 2; v < 5; v++) {
        /* v = 3, 4: 1000 columns by 4 warps (wrmax=8), the best in work-item
         * 0's columns; or in the first warp's, whose threshold then admits
         * them all, more than a small wcap (128): the bisection */
        const char *env = v < 3    ? "warp=1,wcols=4096"
                          : v == 3 ? "warp=1,wcols=4096,wrmax=8"
                                   : "warp=1,wcols=4096,wrmax=8,wcap=32";
        setenv("CLTOPK_BITS", env, 1);
        size_t rows = 3, cols = v >= 2 ? 1000 : 4096, lane = v >= 3 ? 128 : 32;
        size_t best = v == 4 ? 32 : 1;
        float *f = bmalloc(rows * cols * sizeof *f);
        for (size_t i = 0; i < rows * cols; i++) {
            size_t j = i % cols;
            float x = (float)(rng_below(&rng, 1u << 20)) / (float)(1u << 20);
            f[i] = j % lane < best ? (v == 1 ? 7.0f : 2.0f + x) : x;
        }
        snprintf(where, sizeof where, "%s %s (one %s's columns best)", dev, env,
                 v == 4 ? "warp" : "work-item");
        check_case(cl, where, CLTOPK_ALGO_BITS, v & 1, CLTOPK_FLOAT32, "lane", f, rows * cols,
                   rows, cols, cols, NULL, 32, 0, WANT_BOTH);
        check_case(cl, where, CLTOPK_ALGO_BITS, 0, CLTOPK_FLOAT32, "lane", f, rows * cols, rows,
                   cols, cols, NULL, 7, 1, WANT_BOTH);
        free(f);
    }
    /* the output keys taken from their composites (WINV): +0 and -0, NaNs of
     * random payloads and signs, +inf among values in [1, 2); the largest are
     * NaNs, the smallest zeros of both signs (keys that the composite does
     * not determine: read from the input): each key's bits exactly */
    setenv("CLTOPK_BITS", "warp=1,wcols=4096", 1);
    for (int v = 0; v < 4; v++) {
        size_t rows = 3, cols = v < 2 ? 1000 : 4096;
        uint32_t *f = bmalloc(rows * cols * sizeof *f);
        for (size_t i = 0; i < rows * cols; i++)
            f[i] = special_f32(0);
        snprintf(where, sizeof where, "%s warp=1 (zeros, NaN payloads, infinities)", dev);
        check_case(cl, where, CLTOPK_ALGO_BITS, v & 1, CLTOPK_FLOAT32, "signed zeros and NaNs", f,
                   rows * cols, rows, cols, cols, NULL, 32, v >> 1, WANT_KEYS);
        check_case(cl, where, CLTOPK_ALGO_BITS, 0, CLTOPK_FLOAT32, "signed zeros and NaNs", f,
                   rows * cols, rows, cols, cols, NULL, 9, !(v >> 1), WANT_BOTH);
        free(f);
    }
    /* the kernel's earlier ways, kept for measuring: the candidates
     * counted, summed and written at prefixes (wappend=3: WONE=0), the
     * best by 64-bit composites (-D WB32=0, after the build options the
     * process has: make check's quick builds), and (v = 2, 3) the
     * candidates appended first by 32-bit keys or by composites where the
     * other is the default (-D WREL=0 with wappend=2, -D WREL=1 with
     * wappend=1, 4096 columns by 4 warps); a small wcap sends rows to the
     * bisection (check-full also v = 0) */
    char *saved = env_push("CLTOPK_BUILD_OPTIONS", NULL), opts[256];
    for (int v = test_full() ? 0 : 1; v < 4; v++) {
        size_t rows = 3, cols = v < 2 ? 1000 : 4096;
        static const char *const dopt[4] = {"WB32=0", "WB32=0", "WREL=0", "WREL=1"};
        snprintf(opts, sizeof opts, "%s -D %s", saved ? saved : "", dopt[v]);
        setenv("CLTOPK_BUILD_OPTIONS", opts, 1);
        static const char *const bits[4] = {"warp=1,wcols=4096,wappend=3",
                                            "warp=1,wcols=4096,wappend=3,wcap=32",
                                            "warp=1,wcols=4096,wrmax=32,wappend=2",
                                            "warp=1,wcols=4096,wrmax=32,wappend=1,wcap=32"};
        setenv("CLTOPK_BITS", bits[v], 1);
        float *f = bmalloc(rows * cols * sizeof *f);
        gen_data(CLTOPK_FLOAT32, "uniform", rows * cols, 0, &rng, f);
        if (v & 1) /* work-item 0's columns the best (32 a warp at 1000 columns, 128 four
                      warps at 4096): the candidates overflow wcap */
            for (size_t i = 0; i < rows * cols; i++)
                if ((i % cols) % (cols == 1000 ? 32 : 128) == 0)
                    f[i] = 2.0f + (float)(i % 977);
        snprintf(where, sizeof where, "%s %s, -D %s", dev, bits[v] + 7, dopt[v]);
        check_case(cl, where, CLTOPK_ALGO_BITS, v & 1, CLTOPK_FLOAT32, "uniform", f, rows * cols,
                   rows, cols, cols, NULL, 32, v >> 1, WANT_BOTH);
        free(f);
    }
    env_pop("CLTOPK_BUILD_OPTIONS", saved);
    char buf[1024];
    setenv("CLTOPK_BITS", "warp=1,wcols=4096", 1);
    int st = cltopk_explain_rows(cl, CLTOPK_FLOAT32, 4, 1000, NULL, 10, 0, 1, buf, sizeof buf);
    ok(st == CLTOPK_OK && strstr(buf, "a warp a row") && strstr(buf, "32 columns each"),
       "%s: explain_rows with CLTOPK_BITS=warp=1 names the warp kernel", dev);
    if (st != CLTOPK_OK || !strstr(buf, "a warp a row"))
        diag("%s", buf);
    setenv("CLTOPK_BITS", "warp=1,wcols=4096,wrmax=32", 1);
    st = cltopk_explain_rows(cl, CLTOPK_FLOAT32, 4, 4096, NULL, 32, 0, 1, buf, sizeof buf);
    ok(st == CLTOPK_OK && strstr(buf, "4 warps a row") && strstr(buf, "128 work-items") &&
           strstr(buf, "32 columns each"),
       "%s: explain_rows with CLTOPK_BITS=warp=1,wcols=4096,wrmax=32 names 4 warps a row at "
       "4096 columns", dev);
    if (st != CLTOPK_OK || !strstr(buf, "4 warps a row"))
        diag("%s", buf);
    setenv("CLTOPK_BITS", "warp=1", 1);
    st = cltopk_explain_rows(cl, CLTOPK_FLOAT64, 4, 1000, NULL, 10, 0, 1, buf, sizeof buf);
    ok(st == CLTOPK_OK && !strstr(buf, "a warp a row"),
       "%s: explain_rows: float64 rows do not take the warp kernel", dev);
    st = cltopk_explain_rows(cl, CLTOPK_FLOAT32, 4, 1000, NULL, 33, 0, 1, buf, sizeof buf);
    ok(st == CLTOPK_OK && !strstr(buf, "a warp a row"),
       "%s: explain_rows: k = 33 is past the warp kernel's default wkmax", dev);
    unsetenv("CLTOPK_BITS");
}

/* the warp kernel by proxies of the keys (CLTOPK_BITS wlean=1): rows of 100
 * (slots past the end), 1000 (not full), 1024 (one warp, vectors) and 4096
 * columns (4 warps), at k = 1, up to 16 and (4 warps) 32; every type and
 * distribution; float rows whose k-th is a zero with zeros of both signs
 * around it (-0 and +0 have different proxies and one key), whose best are
 * NaNs of positive sign and random payloads (one key above +inf, many
 * proxies), holding one NaN whose sign bit is set (its proxy at the wrong
 * end: the exact steps), and of one value (the candidates overflow: the
 * exact steps), in both directions, host data and cl_mem */
static void lean_cases(cltopk_context *cl, const char *dev)
{
    static const size_t lcols[] = {100, 1000, 1024, 4096};
    static const char *const what[] = {"", "zeros at the k-th", "positive NaNs best",
                                       "a negative NaN", "one value"};
    setenv("CLTOPK_BITS", "warp=1,wcols=4096,wrmax=32,wlean=1", 1);
    char where[160];
    int turn = 0;
    for (size_t ci = 0; ci < sizeof lcols / sizeof lcols[0]; ci++)
        for (int v = 0; v < 5; v++) {
            /* make check: 1000 columns (not full, as 100) under check-full */
            if (!test_full() && ci == 1)
                continue;
            size_t cols = lcols[ci], rows = 3, ld = cols + (ci == 1 ? 3 : 0);
            size_t extent = (rows - 1) * ld + cols;
            cltopk_dtype type = v ? CLTOPK_FLOAT32 : types32[ci % 3];
            const char *dist = v ? what[v] : mix[turn++ % (sizeof mix / sizeof mix[0])];
            int sm = (int)((ci + (size_t)v) & 1);
            uint32_t *x = bmalloc(extent * 4);
            if (v == 0)
                gen_data(type, dist, extent, sm, &rng, x);
            for (size_t i = 0; v && i < extent; i++) {
                uint32_t c = rng_below(&rng, 8), sign = (uint32_t)rng_below(&rng, 2) << 31;
                /* a value of the worse half of the direction, or (v = 1) a
                 * zero, (v = 2) a NaN of positive sign, of the better */
                uint32_t worse = (sm ? 0x40000000u : 0xC0000000u) | rng_below(&rng, 1u << 22);
                x[i] = v == 4   ? 0x3FC00000u
                       : c > 1 ? worse
                       : v == 2 ? 0x7F800001u | (uint32_t)rng_below(&rng, 1u << 22)
                                : sign;
            }
            if (v == 3) /* one negative NaN a row, the rest zeros and the worse half */
                for (size_t r = 0; r < rows; r++)
                    x[r * ld + rng_below(&rng, (uint32_t)cols)] = 0xFFC00000u | r;
            snprintf(where, sizeof where, "%s wlean=1 (%zu columns%s%s)", dev, cols,
                     v ? ", " : "", what[v]);
            size_t kmax = cols > 1024 ? 32 : 16;
            check_case(cl, where, CLTOPK_ALGO_BITS, v & 1, type, dist, x, extent, rows, cols, ld,
                       NULL, kmax, sm, WANT_BOTH);
            check_case(cl, where, CLTOPK_ALGO_BITS, !(v & 1), type, dist, x, extent, rows, cols,
                       ld, NULL, 1 + rng_below(&rng, (uint32_t)kmax), !sm,
                       ci & 1 ? WANT_KEYS : WANT_BOTH);
            if (v == 0)
                check_case(cl, where, CLTOPK_ALGO_BITS, 0, type, dist, x, extent, rows, cols, ld,
                           NULL, 1, sm, WANT_INDEX);
            free(x);
        }
    char buf[2048];
    int st = cltopk_explain_rows(cl, CLTOPK_FLOAT32, 4, 4096, NULL, 32, 0, 1, buf, sizeof buf);
    if (!ok(st == CLTOPK_OK && strstr(buf, "4 warps a row") && strstr(buf, "proxies"),
            "%s: explain_rows with wlean=1 names the proxies at 4096 columns", dev))
        diag("status %d: %s", st, buf);
    st = cltopk_explain_rows(cl, CLTOPK_FLOAT32, 4, 1024, NULL, 32, 0, 1, buf, sizeof buf);
    if (!ok(st == CLTOPK_OK && strstr(buf, "a warp a row") && !strstr(buf, "proxies"),
            "%s: explain_rows with wlean=1: one warp a row at k = 32 (2 best a work-item) "
            "without them", dev))
        diag("status %d: %s", st, buf);
    unsetenv("CLTOPK_BITS");
}

/* the warp kernel's threshold taken again over the whole group (WREGROUP,
 * more than one warp a row): rows in order, whose warps' thresholds lie far
 * apart (some 400 candidates at 4096 columns, k = 32), and rows of few
 * values (ties past the buffer: the threshold again, then the exact steps);
 * by proxies and by composites (k up to 128: 2 and 4 best a work-item).
 * make check: float32, and by composites 4096 columns at k <= 64 (each
 * type, width and k above 64 is a POCL build of seconds: these cases took
 * 25 s of make check with them); check-full: the three 32-bit types, both
 * widths, k up to 128 */
static void regroup_cases(cltopk_context *cl, const char *dev)
{
    static const char *const bits[] = {"warp=1,wcols=4096,wrmax=32,wlean=1",
                                       "warp=1,wcols=4096,wrmax=32,wlean=0,wkmax=128"};
    static const char *const ord[] = {"increasing", "decreasing", "few"};
    static const size_t gcols[] = {2048, 4096};
    char where[160];
    for (int b = 0; b < 2; b++) {
        setenv("CLTOPK_BITS", bits[b], 1);
        for (size_t ci = b && !test_full() ? 1 : 0; ci < 2; ci++)
            for (int o = 0; o < 3; o++) {
                size_t cols = gcols[ci], rows = 3, ld = cols, extent = rows * ld;
                cltopk_dtype type =
                    test_full() ? types32[(ci + (size_t)o + (size_t)b) % 3] : CLTOPK_FLOAT32;
                int sm = (int)((ci + (size_t)o) & 1);
                uint32_t *x = bmalloc(extent * 4);
                gen_data(type, ord[o], extent, sm, &rng, x);
                snprintf(where, sizeof where, "%s %s (%zu columns, rows in order)", dev,
                         bits[b] + 7, cols);
                size_t k = b ? (o == 0 ? (test_full() ? 128 : 64) : o == 1 ? 48 : 32) : (ci ? 32 : 8);
                check_case(cl, where, CLTOPK_ALGO_BITS, o == 1, type, ord[o], x, extent, rows,
                           cols, ld, NULL, k, sm, WANT_BOTH);
                check_case(cl, where, CLTOPK_ALGO_BITS, o != 1, type, ord[o], x, extent, rows,
                           cols, ld, NULL, 1 + rng_below(&rng, (uint32_t)k), !sm, WANT_BOTH);
                free(x);
            }
    }
    unsetenv("CLTOPK_BITS");
}

/* whether cltopk_explain_rows names the streaming warp kernel for rows x
 * cols at k (taken: 1 where it should) */
static void ws_explained(cltopk_context *cl, const char *dev, cltopk_dtype type, size_t rows,
                         size_t cols, size_t k, int taken, const char *what)
{
    char buf[1024];
    int st = cltopk_explain_rows(cl, type, rows, cols, NULL, k, 0, 1, buf, sizeof buf);
    int named = st == CLTOPK_OK && strstr(buf, "a warp a row streaming it once") != NULL;
    if (!ok(st == CLTOPK_OK && named == taken, "%s: explain_rows, the streaming warp kernel: %s",
            dev, what))
        diag("status %d: %s", st, buf);
}

/* the streaming warp kernel (cl/rows_ws.cl, CLTOPK_BITS ws=1): a row a
 * warp read once in chunks of 128 columns; on NVIDIA's GPUs by shuffles and
 * votes, elsewhere (and with wsp=0) the same exchanges through local memory.
 * Rows shorter than a chunk, one past it, of whole chunks (WSFULL) and of
 * whole vectors (WSV, starts and ld multiples of 4) or not; k = 1, k = cols
 * and k = 32; chunks in flight 1, 3 and the default; every distribution, rows
 * in ascending order (the last chunk streamed first: WSL), descending, of one
 * value; host data and cl_mem. */
static void ws_cases(cltopk_context *cl, const char *dev)
{
    static const size_t cols_[] = {1, 3, 4, 31, 33, 128, 129, 1000, 1024, 4096};
    static const char *const wsenv[] = {"ws=1", "ws=1,wsu=1", "ws=1,wsu=3,wsp=0"};
    char where[96];
    int turn = 0;
    for (size_t e = 0; e < sizeof wsenv / sizeof wsenv[0]; e++) {
        setenv("CLTOPK_BITS", wsenv[e], 1);
        snprintf(where, sizeof where, "%s %s", dev, wsenv[e]);
        for (size_t ci = 0; ci < sizeof cols_ / sizeof cols_[0]; ci++) {
            size_t cols = cols_[ci];
            /* make check: every width with the defaults, two with the others */
            if (!test_full() && e > 0 && cols != 129 && cols != 1024)
                continue;
            for (int v = 0; v < 2; v++) {
                size_t rows = cols > 1000 ? 3 : 5, ld = cols + (v ? 4 * (ci & 1) : 1);
                cltopk_dtype type = types32[(ci + e + (size_t)v) % 3];
                int sm = (int)((ci + e + (size_t)v) & 1);
                const char *dist = mix[turn++ % (sizeof mix / sizeof mix[0])];
                size_t extent = (rows - 1) * ld + cols;
                char *keys = bmalloc(extent * tsize(type));
                gen_data(type, dist, extent, sm, &rng, keys);
                size_t k1 = cols < 32 ? cols : 32, k2 = 1 + rng_below(&rng, (uint32_t)k1);
                check_case(cl, where, CLTOPK_ALGO_BITS, v, type, dist, keys, extent, rows, cols,
                           ld, NULL, v ? k2 : k1, sm, WANT_BOTH);
                check_case(cl, where, CLTOPK_ALGO_BITS, !v, type, dist, keys, extent, rows,
                           cols, ld, NULL, v ? 1 : k2, !sm, v ? WANT_KEYS : WANT_INDEX);
                free(keys);
            }
        }
    }
    /* ascending and descending rows (the best last, streamed first: WSL; the
     * best first), one value, and floats' zeros, NaNs and
     * infinities (keys the composite does not determine, read again) */
    setenv("CLTOPK_BITS", "ws=1", 1);
    for (int v = 0; v < 4; v++) {
        size_t rows = 3, cols = v & 1 ? 4096 : 1000;
        uint32_t *f = bmalloc(rows * cols * sizeof *f);
        for (size_t i = 0; i < rows * cols; i++) {
            size_t j = i % cols;
            float x = v == 0 ? (float)j : v == 1 ? -(float)j : 1.5f;
            memcpy(&f[i], &x, 4);
            if (v == 3)
                f[i] = special_f32(1);
        }
        static const char *const what[4] = {"ascending", "descending", "one value",
                                            "zeros, NaNs, infinities"};
        snprintf(where, sizeof where, "%s ws=1 (%s)", dev, what[v]);
        check_case(cl, where, CLTOPK_ALGO_BITS, v & 1, CLTOPK_FLOAT32, what[v], f, rows * cols,
                   rows, cols, cols, NULL, 32, 0, WANT_BOTH);
        check_case(cl, where, CLTOPK_ALGO_BITS, 0, CLTOPK_FLOAT32, what[v], f, rows * cols,
                   rows, cols, cols, NULL, 7, 1, v == 3 ? WANT_KEYS : WANT_BOTH);
        free(f);
    }
    /* the default (ws=2): NVIDIA's platform only, rows the warp kernel does
     * not take (more than 4096 columns here) below 65536, at least wsrows
     * rows a compute unit (0 here: any) */
    char vendor[256] = "";
#if CLTOPK_HAVE_OPENCL
    cl_device_id did = NULL;
    if (cltopk_get_cl(cl, NULL, &did, NULL) == CLTOPK_OK)
        clGetDeviceInfo(did, CL_DEVICE_VENDOR, sizeof vendor, vendor, NULL);
#endif
    int nv = strstr(vendor, "NVIDIA") != NULL;
    setenv("CLTOPK_BITS", "wsrows=0", 1);
    {
        size_t rows = 3, cols = 4100;
        float *f = bmalloc(rows * cols * sizeof *f);
        gen_data(CLTOPK_FLOAT32, "uniform", rows * cols, 0, &rng, f);
        snprintf(where, sizeof where, "%s wsrows=0 (4100 columns)", dev);
        check_case(cl, where, CLTOPK_ALGO_BITS, 0, CLTOPK_FLOAT32, "uniform", f, rows * cols,
                   rows, cols, cols, NULL, 32, 0, WANT_BOTH);
        free(f);
    }
    ws_explained(cl, dev, CLTOPK_FLOAT32, 3, 4100, 32, nv,
                 nv ? "the default takes it for 4100 columns (NVIDIA)"
                    : "the default takes it on NVIDIA's platform only");
    ws_explained(cl, dev, CLTOPK_FLOAT32, 3, 4096, 32, 0,
                 "the default leaves 4096 columns to the warp kernel");
    ws_explained(cl, dev, CLTOPK_FLOAT32, 3, 65536, 32, 0,
                 "the default leaves 65536 columns to the sample filter");
    unsetenv("CLTOPK_BITS");
    ws_explained(cl, dev, CLTOPK_FLOAT32, 3, 8192, 32, 0,
                 "the default leaves 3 rows (fewer than 8 a compute unit) to the tile");
    setenv("CLTOPK_BITS", "ws=1", 1);
    ws_explained(cl, dev, CLTOPK_FLOAT32, 4, 1000, 10, 1, "CLTOPK_BITS=ws=1 takes it");
    ws_explained(cl, dev, CLTOPK_FLOAT32, 4, 1000, 33, 0, "k = 33 is past its list");
    ws_explained(cl, dev, CLTOPK_INT64, 4, 1000, 10, 0, "int64 rows do not take it");
    unsetenv("CLTOPK_BITS");
}

static void sf_cases(cltopk_context *cl, const char *dev)
{
    char where[160];
    /* wg x rt = 1024 on a CPU device: k up to 512 */
    const char *base = "path=sf,wg=256,rt=4";
    /* every type in make check-full; float32 in make check (uint64 and
     * int64 take the sample filter below too: k from 1 to cols, fuse=0) */
    for (int ti = 0; ti < (test_full() ? 6 : 1); ti++) {
        cltopk_dtype type = all_types[ti];
        size_t w = tsize(type);
        /* both directions in make check-full; one a type in make check */
        for (int sm = test_full() ? 0 : ti & 1; sm <= (test_full() ? 1 : ti & 1); sm++) {
            size_t rows = 5, cols = 4099 + (size_t)ti, ld = cols + 1 + (size_t)sm;
            char *keys = bmalloc(rows * (ld + 4) * w);
            snprintf(where, sizeof where, "%s %s,sfpart=1000", dev, base);
            char env[128];
            snprintf(env, sizeof env, "%s,sfpart=1000", base);
            setenv("CLTOPK_BITS", env, 1);
            mixed_rows(type, rows, cols, ld, sm, ti * 2 + sm, keys);
            size_t k = 1 + rng_below(&rng, 300);
            check_case(cl, where, CLTOPK_ALGO_BITS, 0, type, "mixed", keys,
                       (rows - 1) * ld + cols, rows, cols, ld, NULL, k, sm, WANT_BOTH);
            check_case(cl, where, CLTOPK_ALGO_BITS, 1, type, "mixed", keys,
                       (rows - 1) * ld + cols, rows, cols, ld, NULL, ti == 0 ? 1 : 512, !sm,
                       1 + (ti + sm) % 3);
            /* aligned rows (the vector loads), one group a row */
            snprintf(env, sizeof env, "%s,sfpart=8192", base);
            setenv("CLTOPK_BITS", env, 1);
            snprintf(where, sizeof where, "%s %s,sfpart=8192", dev, base);
            mixed_rows(type, rows, 4096, 4096, sm, ti + 5, keys);
            check_case(cl, where, CLTOPK_ALGO_BITS, sm, type, "mixed", keys, rows * 4096, rows,
                       4096, 4096, NULL, 64, sm, WANT_BOTH);
            /* the exceptional ways, checked */
            static const char *const forced[][2] = {
                {"force=few,check=fallback", "too few"},
                {"force=all,cap=100,sfpart=8192,check=fallback", "too many, past the segment"},
                {"force=all,cap=1024,check=served", "all candidates"},
                /* k = 10 of 3001 from 256 samples: rank 11, about 129 expected
                 * (measured 96-200 a row: rows of one call go either way) */
                {"s=256,cap=128", "a buffer of the expected count: some rows served"},
            };
            for (size_t f = 0; f < sizeof forced / sizeof forced[0]; f++) {
                size_t fcols = f == 2 ? 1000 : 3001;
                snprintf(env, sizeof env, "%s,%s", base, forced[f][0]);
                setenv("CLTOPK_BITS", env, 1);
                snprintf(where, sizeof where, "%s %s (%s)", dev, env, forced[f][1]);
                mixed_rows(type, 5, fcols, fcols + 3, sm, (int)f + ti, keys);
                size_t fk = f == 3 ? 10 : 2 + rng_below(&rng, 60);
                check_case(cl, where, CLTOPK_ALGO_BITS, (int)(f & 1), type, "mixed", keys,
                           4 * (fcols + 3) + fcols, 5, fcols, fcols + 3, NULL, fk, sm,
                           WANT_BOTH);
            }
            free(keys);
        }
    }
    /* k from 1 to cols = 1000, every distribution, wg x rt = 2048 (two types:
     * each is a program to build); make check: k to 512 = cols by the
     * tile's program above (wg x rt = 1024; the wider tile's programs, some
     * 18 s of POCL builds, in make check-full) */
    const char *wide = test_full() ? "path=sf,wg=512,rt=4,sfpart=300"
                                   : "path=sf,wg=256,rt=4,sfpart=300";
    setenv("CLTOPK_BITS", wide, 1);
    static const size_t ks[] = {1, 2, 31, 200, 500, 999, 1000};
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++) {
        /* (uint64's program in make check-full only: some 10 s of POCL
         * build in make check) */
        cltopk_dtype type = i % 2 && test_full() ? CLTOPK_UINT64 : CLTOPK_FLOAT32;
        size_t cols = test_full() ? 1000 : 512, kk = ks[i] < cols ? ks[i] : cols - (i & 1);
        char *keys = bmalloc(3 * 1000 * tsize(type));
        int sm = (int)(i & 1);
        mixed_rows(type, 3, cols, cols, sm, (int)i * 3, keys);
        snprintf(where, sizeof where, "%s %s", dev, wide);
        check_case(cl, where, CLTOPK_ALGO_BITS, (int)(i % 3 == 2), type, "mixed", keys,
                   3 * cols, 3, cols, cols, NULL, kk, sm, WANT_BOTH);
        free(keys);
    }
    /* a sample served: long rows, uniform and increasing (check=served),
     * several groups, each row finished by its last filtering group
     * (fuse=1); the increasing rows (their candidates some 700 of the 1024
     * room) at k from 129 to 256, where NVIDIA's finish sorts by shuffles */
    setenv("CLTOPK_BITS", "path=sf,wg=256,rt=4,fuse=1,check=served", 1);
    for (int i = 0; i < 2; i++) {
        cltopk_dtype type = i ? CLTOPK_FLOAT64 : CLTOPK_FLOAT32;
        char *keys = bmalloc(4 * 20000 * 8);
        gen_data(type, i ? "increasing" : "uniform", 4 * 20000, i, &rng, keys);
        check_case(cl, dev, CLTOPK_ALGO_BITS, i, type, i ? "increasing" : "uniform", keys,
                   4 * 20000, 4, 20000, 20000, NULL, i ? 129 + rng_below(&rng, 128) : 100, i,
                   WANT_BOTH);
        free(keys);
    }
    /* the rows finished by a launch of their own (fuse=0), each way */
    static const char *const apart[] = {"path=sf,wg=256,rt=4,fuse=0,sfpart=700",
                                        "path=sf,wg=256,rt=4,fuse=0,force=few,check=fallback",
                                        "path=sf,wg=256,rt=4,fuse=0,force=all,cap=100,"
                                        "check=fallback",
                                        "path=sf,wg=256,rt=4,fuse=0,force=all,cap=1024,"
                                        "check=served"};
    for (size_t e = 0; e < sizeof apart / sizeof apart[0]; e++) {
        /* (int64's program in make check-full only) */
        cltopk_dtype type = e & 1 && test_full() ? CLTOPK_INT64 : CLTOPK_FLOAT32;
        size_t cols = e == 3 ? 1000 : 5003;
        char *keys = bmalloc(3 * (cols + 2) * 8);
        setenv("CLTOPK_BITS", apart[e], 1);
        snprintf(where, sizeof where, "%s %s", dev, apart[e]);
        mixed_rows(type, 3, cols, cols + 2, (int)(e & 1), (int)e * 4, keys);
        check_case(cl, where, CLTOPK_ALGO_BITS, (int)(e >> 1), type, "mixed", keys,
                   2 * (cols + 2) + cols, 3, cols, cols + 2, NULL, 2 + rng_below(&rng, 200),
                   (int)(e & 1), WANT_BOTH);
        free(keys);
    }
    /* the finish's radix passes from the first byte where its candidates'
     * keys differ (fpre=1, the GPU default; 0 elsewhere), by radix passes
     * alone (fmax=0): uniform rows served by their candidates, whose keys
     * above the row's threshold share their leading bytes (float32: sign,
     * exponent and the mantissa's first bits), then mixed rows either way;
     * float64's 64-bit words in make check-full */
    for (int e = 0; e < (test_full() ? 2 : 1); e++)
        sf_served_mixed(cl, dev, "path=sf,wg=256,rt=4,fuse=0,fmax=0,fpre=1",
                        e ? CLTOPK_FLOAT64 : CLTOPK_FLOAT32, e, 100, 157, 30 + e, 1, 256);
    /* the sample in runs of 8 neighbours, the finish by a tile of its own
     * (64 x 16 slots, radix passes only), the filter's whole rounds (parts
     * of 8192 elements: two whole rounds of 256 x 4 vectors on a CPU device,
     * 4 x 8 on a GPU, then the last part's rest): uniform rows served,
     * mixed rows either way; then the filter's every load tested (sfull=0),
     * two vectors a round (sfunr=2); then the finish's sort of 2 wg slots by
     * shuffles, emulated through local memory (shfl=2; the GPU default on
     * NVIDIA, shfl=1, runs in make check there), at k from 129 to 256 so
     * that it sorts 512 slots.
     * In make check-full only: programs of their own, each a long
     * build on POCL (on GPUs make check reaches srun=8, sfull=1 and the
     * finish without the maxima through the defaults: the long rows below) */
    for (int e = 0; e < (test_full() ? 3 : 0); e++) {
        const char *env = e == 2 ? "path=sf,wg=256,rt=4,fuse=0,shfl=2"
                          : e ? "path=sf,wg=256,rt=4,fuse=0,sfpart=8192,sfull=0,sfunr=2"
                              : "path=sf,wg=256,rt=4,fuse=0,sfpart=8192,sfull=1,srun=8,fwg=64,"
                                "frt=16,fmax=0";
        sf_served_mixed(cl, dev, env, CLTOPK_FLOAT32, e & 1, e == 2 ? 129 : 100,
                        e == 2 ? 128 : 100, 7 + e, e == 2 ? 129 : 1, e == 2 ? 128 : 250);
    }
    /* AUTO at a large k of long rows: on GPUs the sample filter with a tile
     * of twice the work-items where the candidates' bound exceeds the
     * default's (elsewhere another way); exact either way */
    unsetenv("CLTOPK_BITS");
    {
        size_t rows = 3, cols = 262144;
        char ex[1024];
        int xs = cltopk_explain_rows(cl, CLTOPK_FLOAT32, rows, cols, NULL, 1024, 0, 1, ex,
                                     sizeof ex);
        const char *sf = strstr(ex, "the sample filter");
        ok(xs == CLTOPK_OK && (!sf || strstr(sf, "tile of 512 x")),
           "%s: AUTO at k = 1024 of rows of 262144: the sample filter only with a tile of 512 "
           "work-items (%s)", dev, sf ? "taken" : "not taken here");
        if (xs != CLTOPK_OK || (sf && !strstr(sf, "tile of 512 x")))
            diag("%s", ex);
        if (sf) {
            char *keys = bmalloc(rows * cols * 4);
            mixed_rows(CLTOPK_FLOAT32, rows, cols, cols, 0, 11, keys);
            check_case(cl, dev, CLTOPK_ALGO_AUTO, 1, CLTOPK_FLOAT32, "mixed", keys,
                       rows * cols, rows, cols, cols, NULL, 1024, 0, WANT_BOTH);
            free(keys);
        } else { /* (another way, which other cases test: some 45 s on POCL) */
            skip("%s: AUTO at k = 1024 of 3 rows of 262144: the sample filter is not taken "
                 "here", dev);
        }
    }
    /* explain names it; a bad word is refused */
    setenv("CLTOPK_BITS", "path=sf,wg=256,rt=4", 1);
    char buf[1024];
    int est = cltopk_explain_rows(cl, CLTOPK_FLOAT32, 8, 20000, NULL, 100, 0, 1, buf, sizeof buf);
    ok(est == CLTOPK_OK && strstr(buf, "sample filter"),
       "%s: explain_rows with CLTOPK_BITS=path=sf names the sample filter", dev);
    if (est != CLTOPK_OK || !strstr(buf, "sample filter"))
        diag("%s", buf);
    setenv("CLTOPK_BITS", "path=nosf,check=served", 1);
    {
        char ok_[4 * 4];
        int64_t oi[4];
        int st = cltopk_topk_rows(cl, CLTOPK_FLOAT32, data16, 2, 8, 8, 2, 0, CLTOPK_ALGO_BITS,
                                  ok_, oi);
        ok(st == CLTOPK_ERR_INTERNAL, "%s: check=served fails where the sample filter did not "
           "run (%s)", dev, cltopk_last_error(cl));
    }
    unsetenv("CLTOPK_BITS");
}

/* a kernel that does not build: 100 rows of 10000 float32 of host data, or
 * (arg: a nonzero int) segments of them (the rows' kernels get the rows
 * written first), by BITS */
static int rows_call(cltopk_context *ctx, const void *keys, void *out_keys, int64_t *out_index,
                     void *arg)
{
    if (*(const int *)arg) {
        int64_t offs[5] = {0, 100, 100, 70000, 1000000};
        return cltopk_topk_segments(ctx, CLTOPK_FLOAT32, keys, 4, offs, 8, 0, CLTOPK_ALGO_BITS,
                                    out_keys, out_index);
    }
    return cltopk_topk_rows(ctx, CLTOPK_FLOAT32, keys, 100, 10000, 10000, 8, 0, CLTOPK_ALGO_BITS,
                            out_keys, out_index);
}

int main(void)
{
    watchdog(600);
    plan_lazy();
    /* a failed build ends the call's write of the caller's rows (it was left
     * in flight: `cltopk topk --rows` crashed in POCL's thread); first, before
     * this process touches OpenCL (the calls run in a child) */
    for (int seg = 0; seg < 2; seg++) {
        char fwhy[512] = "";
        size_t nout = seg ? 4 * 8 : 100 * 8;
        int r = failed_build_call(1000000 * 4, rows_call, &seg, nout * 4, nout, fwhy,
                                  sizeof fwhy);
        if (r < 0)
            skip("a failed build: %s", fwhy);
        else if (!ok(r, "%s of host data, the kernel failing to build: CLTOPK_ERR_BUILD naming "
                        "it, nothing written, the transfer over at the return",
                     seg ? "segments" : "rows"))
            diag("%s", fwhy);
    }
    test_quick_builds(); /* POCL builds dominate: see testlib.h */
    rng_init(&rng, test_seed());
    for (int i = 0; i < 64; i++)
        data16[i] = (float)(i % 16) - 4.0f;
    cltopk_context *cpu;
    if (cltopk_open(&cpu, "cpu") != CLTOPK_OK)
        bail("cltopk_open(cpu): %s", cltopk_last_error(NULL));
    cases(cpu, "cpu", CLTOPK_ALGO_AUTO, 0);
    cases(cpu, "cpu", CLTOPK_ALGO_CPU_HEAP, 0);
    random_shapes(cpu, "cpu", CLTOPK_ALGO_CPU_HEAP, 20);
    large_k_cpu(cpu, "cpu large k", CLTOPK_ALGO_CPU_HEAP);
    large_k_cpu(cpu, "cpu large k", CLTOPK_ALGO_AUTO);
    rescan_cpu(cpu, "cpu large k");
    bad_args(cpu, "cpu", 0);
    explain(cpu, "cpu", 0);
    cltopk_close(cpu);

    cltopk_context *cl = NULL;
    char why[512];
    if (!open_test_cl(&cl, why, sizeof why)) {
        skip("OpenCL parts: %s", why);
        return tap_done();
    }
    const char *dev = "cl";
    cases(cl, dev, CLTOPK_ALGO_BITS, 0);
    cases(cl, dev, CLTOPK_ALGO_AUTO, 0);
    random_shapes(cl, dev, CLTOPK_ALGO_BITS, test_full() ? 20 : 5);
    batches(cl, dev);
    /* segments that a work-item sorts alone (at most 32 elements) only, and
     * around the boundary (32, 33) */
    for (int i = 0; i < 2; i++) {
        cltopk_dtype type = i ? CLTOPK_FLOAT64 : CLTOPK_UINT32;
        int64_t offs[52];
        offs[0] = 0;
        for (int s_ = 0; s_ < 51; s_++)
            offs[s_ + 1] = offs[s_] + (s_ < 33 ? s_ : 31 + s_ % 4);
        char *keys = bmalloc((size_t)offs[51] * tsize(type));
        gen_data(type, i ? "special" : "narrow", (size_t)offs[51], i, &rng, keys);
        check_case(cl, dev, CLTOPK_ALGO_BITS, 0, type, "short segments", keys, (size_t)offs[33],
                   33, 0, 0, offs, 40, i, WANT_BOTH);
        check_case(cl, dev, CLTOPK_ALGO_BITS, 1, type, "segments of 31 to 34", keys,
                   (size_t)offs[51], 51, 0, 0, offs, 5, !i, i ? WANT_KEYS : WANT_INDEX);
        free(keys);
    }
    /* long rows over several work-groups (CLTOPK_BITS parts), and the
     * variable's refusals */
    setenv("CLTOPK_BITS", "warp=0,parts=5", 1);
    random_shapes_of(cl, "cl parts=5", CLTOPK_ALGO_BITS, test_full() ? 12 : 3, 1);
    setenv("CLTOPK_BITS", "parts=3,wg=32,r=4", 1); /* other programs: two types only */
    for (int i = 0; i < 2; i++) {
        cltopk_dtype type = i ? CLTOPK_INT64 : CLTOPK_FLOAT32;
        size_t w = tsize(type);
        char *keys = bmalloc(6 * 2000 * w);
        gen_data(type, i ? "narrow" : "increasing", 6 * 2000, i, &rng, keys);
        check_case(cl, "cl parts=3,wg=32,r=4", CLTOPK_ALGO_BITS, 0, type, "increasing", keys,
                   5 * 2000 + 1999, 6, 1999, 2000, NULL, 40, i, WANT_BOTH);
        check_case(cl, "cl parts=3,wg=32,r=4", CLTOPK_ALGO_BITS, 1, type, "increasing", keys,
                   5 * 2000 + 1999, 6, 1999, 2000, NULL, 33, !i, WANT_BOTH);
        static const int64_t segs[] = {0, 0, 3, 900, 950, 4000};
        check_case(cl, "cl parts=3,wg=32,r=4", CLTOPK_ALGO_BITS, 0, type, "increasing", keys,
                   4000, 5, 0, 0, segs, 40, i, WANT_BOTH);
        free(keys);
    }
    /* the register tile at its edges, every type: 255 and 256 columns, a full tile and one past it (parts and a merge), one
     * element a work-item (rt=1; make check-full), all-equal rows (every key
     * and position pass), k = 1 and k = cols; then the streaming kernel
     * (tile=0) */
    static const char *const tile_env[] = {"warp=0,wg=64", "warp=0,wg=32,rt=1",
                                           "warp=0,wg=16,rt=16,parts=2",
                                           "warp=0,wg=64,tmload=1",
                                           "warp=0,wg=16,rt=16,parts=2,tmload=1"};
    for (size_t e = 0; e < (test_full() ? sizeof tile_env / sizeof tile_env[0] : 1); e++) {
        setenv("CLTOPK_BITS", tile_env[e], 1);
        char where[64];
        snprintf(where, sizeof where, "cl %s", tile_env[e]);
        static const size_t tcols[] = {255, 256, 1024, 1025};
        for (int ti = 0; ti < 6; ti++) {
            cltopk_dtype type = all_types[ti];
            size_t cols = tcols[(size_t)ti % 4], rows = 3;
            char *keys = bmalloc(rows * cols * tsize(type));
            const char *dist = ti % 2 ? "equal" : "few";
            int sm = ti % 3 == 0;
            gen_data(type, dist, rows * cols, sm, &rng, keys);
            check_case(cl, where, CLTOPK_ALGO_BITS, 0, type, dist, keys, rows * cols, rows,
                       cols, cols, NULL, 1 + rng_below(&rng, 40), sm, WANT_BOTH);
            check_case(cl, where, CLTOPK_ALGO_BITS, 0, type, dist, keys, rows * cols, rows,
                       cols, cols, NULL, cols < 1000 ? cols : 1000, !sm, WANT_BOTH);
            free(keys);
        }
    }
    unsetenv("CLTOPK_BITS");
    /* long segments split into tiles and merged a segment at a time: lengths
     * around the tile (wg x rt: 256 on a CPU device), several tiles, one past
     * what the merge holds (the streaming kernel then), every type */
    {
        static const int64_t lens[] = {0, 257, 3, 512, 513, 1000, 5000, 100, 7000, 40, 2049};
        const size_t nseg = sizeof lens / sizeof lens[0];
        int64_t offs[sizeof lens / sizeof lens[0] + 1];
        offs[0] = 0;
        for (size_t i = 0; i < nseg; i++)
            offs[i + 1] = offs[i] + lens[i];
        for (int ti = 0; ti < 6; ti++) {
            /* make check: float32 and int64 (each type a program of seconds
             * on POCL); check-full: all six */
            if (!test_full() && ti != 0 && ti != 4)
                continue;
            cltopk_dtype type = all_types[ti];
            char *keys = bmalloc((size_t)offs[nseg] * tsize(type));
            const char *dist = ti % 3 == 0 ? "equal" : ti % 3 == 1 ? "uniform" : "increasing";
            gen_data(type, dist, (size_t)offs[nseg], ti & 1, &rng, keys);
            check_case(cl, "cl split", CLTOPK_ALGO_BITS, 0, type, dist, keys, (size_t)offs[nseg],
                       nseg, 0, 0, offs, ti < 3 ? 10 : 33, ti & 1, WANT_BOTH);
            check_case(cl, "cl split", CLTOPK_ALGO_BITS, 1, type, dist, keys, (size_t)offs[nseg],
                       nseg, 0, 0, offs, 1, !(ti & 1), ti % 2 ? WANT_KEYS : WANT_INDEX);
            free(keys);
        }
        char buf[1024];
        int est = cltopk_explain_rows(cl, CLTOPK_FLOAT32, nseg, 0, offs, 10, 0, 1, buf, sizeof buf);
        ok(est == CLTOPK_OK && strstr(buf, "tiles merged a segment at a time") &&
               !strstr(buf, " in 0 tiles"),
           "cl: explain_rows names the split of long segments (some split)");
        if (est != CLTOPK_OK || !strstr(buf, "tiles merged"))
            diag("%s", buf);
    }
    setenv("CLTOPK_BITS", "warp=0,tile=0", 1);
    if (test_full())
        cases(cl, "cl tile=0", CLTOPK_ALGO_BITS, 0);
    random_shapes_of(cl, "cl tile=0", CLTOPK_ALGO_BITS, test_full() ? 12 : 3, 1);
    /* the tile by radix passes only, and the tile for every k it takes */
    setenv("CLTOPK_BITS", "warp=0,maxima=0", 1);
    random_shapes_of(cl, "cl maxima=0", CLTOPK_ALGO_BITS, test_full() ? 12 : 2, 1);
    setenv("CLTOPK_BITS", "warp=0,tkmax=4096", 1);
    random_shapes_of(cl, "cl tkmax=4096", CLTOPK_ALGO_BITS, test_full() ? 12 : 3, 1);
    /* the tile's loads unconditional and its keys masked (rows, parts,
     * segments empty and long), and each behind its test (the defaults of
     * CPU devices and GPUs, each way on whichever device this is) */
    setenv("CLTOPK_BITS", "warp=0,tmload=0", 1);
    random_shapes_of(cl, "cl tmload=0", CLTOPK_ALGO_BITS, test_full() ? 12 : 2, 1);
    setenv("CLTOPK_BITS", "warp=0,tmload=1", 1);
    random_shapes_of(cl, "cl tmload=1", CLTOPK_ALGO_BITS, test_full() ? 12 : 2, 1);
    setenv("CLTOPK_BITS", "warp=0,tmload=1,parts=3", 1);
    random_shapes_of(cl, "cl tmload=1,parts=3", CLTOPK_ALGO_BITS, test_full() ? 6 : 1, 1);
    sf_cases(cl, dev);
    warp_cases(cl, dev);
    lean_cases(cl, dev);
    regroup_cases(cl, dev);
    ws_cases(cl, dev);
    static const char *const bad_env[] = {"wg=100", "r=3", "parts=-1", "speed=9", "wg=2048",
                                          "rt=3", "tile=2", "maxima=2", "tkmax=0",
                                          "path=fast", "force=some", "check=1.5", "fuse=2",
                                          "warp=2", "wcols=4097", "wkmax=0", "wkmax=129",
                                          "wcap=5000", "wn=3", "wn=16", "wrmax=0",
                                          "wrmax=129", "srun=3", "srun=128", "sfull=2",
                                          "fwg=100", "fwg=8", "frt=3", "frt=64", "fmax=3", "sfunr=3",
                                          "sfunr=32", "each=maybe", "shfl=3", "ws=3",
                                          "wsu=0", "wsu=17", "wsg=9", "wskmax=33", "wsrows=-1",
                                          "wlean=2"};
    for (size_t i = 0; i < sizeof bad_env / sizeof bad_env[0]; i++) {
        setenv("CLTOPK_BITS", bad_env[i], 1);
        char ok_[4 * 4];
        int64_t oi[4];
        int st = cltopk_topk_rows(cl, CLTOPK_FLOAT32, data16, 2, 8, 8, 2, 0, CLTOPK_ALGO_BITS,
                                  ok_, oi);
        ok(st == CLTOPK_ERR_UNSUPPORTED && strstr(cltopk_last_error(cl), "CLTOPK_BITS"),
           "%s: CLTOPK_BITS=%s is refused (%s)", dev, bad_env[i], cltopk_last_error(cl));
    }
    unsetenv("CLTOPK_BITS");
    bad_args(cl, dev, 1);
    explain(cl, dev, 1);
#if CLTOPK_HAVE_OPENCL
    cases(cl, dev, CLTOPK_ALGO_BITS, 1);
    cases(cl, dev, CLTOPK_ALGO_AUTO, 1);
    each_cases(cl, dev);
    bad_buffers(cl, dev);
#endif
    cltopk_close(cl);
    return tap_done();
}
