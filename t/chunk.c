/* chunk.c - host input split into several device chunks (CLTOPK_MAX_CHUNK).
 *
 * With the chunk capped at a few elements to a few thousand, the per-chunk
 * answers are merged on the host; the result must still be the oracle's, bit
 * for bit, including k above the chunk size, ties across chunk boundaries
 * (all-equal data: the first k positions), and a last chunk shorter than k.
 * The cap is read when the call is made; each setting gets a fresh context
 * opened after setenv anyway. */
#include "testlib.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static rng_t rng;

/* the bitonic workspace of a float32 call in *bytes; a failure is a status
 * with its detail, never a figure */
static int workspace(cltopk_context *ctx, size_t n, size_t k, size_t *bytes)
{
    *bytes = 0;
    int st = cltopk_workspace_size(ctx, CLTOPK_FLOAT32, n, k, 0, CLTOPK_ALGO_BITONIC, bytes);
    if (st != CLTOPK_OK)
        diag_after("cltopk_workspace_size(n = %zu, k = %zu, bitonic): %s: %s", n, k,
                   cltopk_strerror(st), cltopk_last_error(ctx));
    return st;
}

/* the workspace of a named algorithm on host data of type ty under
 * CLTOPK_STREAM=mode and CLTOPK_MAX_CHUNK=cap (NULL: none); the status */
static int ws_mode(cltopk_context *ctx, cltopk_algo algo, cltopk_dtype ty, size_t n, size_t k,
                   const char *mode, const char *cap, size_t *bytes)
{
    setenv("CLTOPK_STREAM", mode, 1);
    if (cap)
        setenv("CLTOPK_MAX_CHUNK", cap, 1);
    else
        unsetenv("CLTOPK_MAX_CHUNK");
    *bytes = 0;
    int st = cltopk_workspace_size(ctx, ty, n, k, 0, algo, bytes);
    unsetenv("CLTOPK_STREAM");
    unsetenv("CLTOPK_MAX_CHUNK");
    return st;
}

/* Streaming's second device input: where host data streams (CLTOPK_STREAM=1)
 * in pieces of `piece` elements, the workspace is the chunk loop's over
 * chunks of that size (CLTOPK_STREAM=0, CLTOPK_MAX_CHUNK=piece: one input of a
 * piece, each reduction over a piece) plus the second input, piece elements;
 * where n fits in one piece nothing streams and the two agree.  cap: the
 * CLTOPK_MAX_CHUNK of the streamed call (NULL: none, pieces of 32 MiB). */
static void stream_workspace(cltopk_context *ctx, cltopk_algo algo, cltopk_dtype ty, size_t n,
                             size_t k, const char *cap, size_t piece)
{
    char pc[32];
    snprintf(pc, sizeof pc, "%zu", piece);
    size_t kb = ty == CLTOPK_FLOAT64 || ty == CLTOPK_INT64 || ty == CLTOPK_UINT64 ? 8 : 4;
    size_t s1, s0;
    int st1 = ws_mode(ctx, algo, ty, n, k, "1", cap, &s1);
    int st0 = ws_mode(ctx, algo, ty, n, k, "0", pc, &s0);
    if (st1 != CLTOPK_OK || st0 != CLTOPK_OK) {
        /* an algorithm that declines the call declines it either way */
        ok(st1 == st0, "%s n = %zu k = %zu: the workspace declined alike streamed or not "
           "(%s, %s)", cltopk_algo_name(algo), n, k, cltopk_strerror(st1), cltopk_strerror(st0));
        return;
    }
    size_t want = s0 + (n > piece ? piece * kb : 0);
    ok(s1 == want, "%s %s n = %zu k = %zu, pieces of %zu: streamed workspace %zu bytes = "
       "the chunk loop's %zu%s", cltopk_algo_name(algo), kb == 8 ? "f64" : "f32", n, k, piece,
       s1, s0, n > piece ? " + the second piece" : " (one piece: no streaming)");
}

static void one_cap(size_t cap, const size_t *lim_by_type)
{
    char val[32];
    snprintf(val, sizeof val, "%zu", cap);
    setenv("CLTOPK_MAX_CHUNK", val, 1);
    cltopk_context *ctx = NULL;
    char dev[256];
    test_cl_device(dev, sizeof dev);
    if (cltopk_open(&ctx, dev) != CLTOPK_OK)
        bail("cannot open %s again: %s", dev, cltopk_last_error(NULL));

    /* many chunks, but few enough launches for small caps */
    size_t nbig = cap * 40 < 50000 ? cap * 40 : 50000;
    if (nbig < 700)
        nbig = 700;
    size_t ns[] = {cap > 1 ? cap - 1 : 1, cap, cap + 1, 3 * cap, 3 * cap + 7, nbig};
    static const char *const ds[] = {"uniform", "equal", "narrow", "worst", "increasing",
                                     "decreasing", "nan", "few"};
    for (size_t zi = 0; zi < sizeof ns / sizeof ns[0]; zi++) {
        size_t n = ns[zi];
        for (int t = 0; t < 6; t++) {
            cltopk_dtype ty = all_types[t];
            /* make check: check_type's types (every type and k is a kernel
             * build of its own per algorithm: the host loop and its merge
             * see 4- and 8-byte keys, floats and integers); check-full: all
             * six */
            if (!check_runs_type(ty))
                continue;
            int s = (int)((zi + (size_t)t) % 2);
            const char *dist = ds[(zi * 6 + (size_t)t) % (sizeof ds / sizeof ds[0])];
            size_t lim = lim_by_type[t];
            size_t ks[] = {1, 2, 100, cap > 1 ? cap - 1 : 1, cap, cap + 1, 2 * cap + 3, lim, n};
            void *keys = bmalloc(n * tsize(ty));
            gen_data(ty, dist, n, s, &rng, keys);
            int64_t *perm = oracle_order(ty, keys, n, s);
            char msg[1024];
            int good = 1;
            size_t calls = 0;
            for (size_t i = 0; i < sizeof ks / sizeof ks[0] && good; i++) {
                size_t k = ks[i];
                if (k > n)
                    continue;
                int expect = k > lim ? CLTOPK_ERR_UNSUPPORTED : CLTOPK_OK;
                int want = (int)(i % 3) + 1;
                calls++;
                if (!check_topk(ctx, CLTOPK_ALGO_BITONIC, ty, keys, n, k, s, perm, want, expect,
                                msg, sizeof msg)) {
                    good = 0;
                    diag_after("k = %zu: %s", k, msg);
                }
            }
            /* the other device algorithms share the chunked host loop: each must
             * agree wherever it takes the call (workspace_size fails as the call
             * would where it does not) */
            static const cltopk_algo others[] = {CLTOPK_ALGO_SBP_RADIX, CLTOPK_ALGO_SBP_TREE,
                                                 CLTOPK_ALGO_RADIX_SELECT};
            size_t oks[] = {1, cap + 1, n < 77 ? n : 77};
            for (size_t a = 0; a < 3 && good; a++)
                for (size_t i = 0; i < 3 && good; i++) {
                    size_t bytes = 0, k2 = oks[i];
                    int expect = cltopk_workspace_size(ctx, ty, n, k2, s ? CLTOPK_SMALLEST : 0,
                                                       others[a], &bytes);
                    calls++;
                    if (!check_topk(ctx, others[a], ty, keys, n, k2, s, perm, WANT_BOTH, expect,
                                    msg, sizeof msg)) {
                        good = 0;
                        diag_after("%s, k = %zu: %s", cltopk_algo_name(others[a]), k2, msg);
                    }
                }
            /* AUTO must agree whatever it picks */
            size_t k = n < 77 ? n : 77;
            calls++;
            if (good && !check_topk(ctx, CLTOPK_ALGO_AUTO, ty, keys, n, k, s, perm, WANT_BOTH,
                                    CLTOPK_OK, msg, sizeof msg)) {
                good = 0;
                diag_after("auto, k = %zu: %s", k, msg);
            }
            ok(good, "chunk %zu: bitonic, sbp, radix %s %s %s n=%zu (%zu calls)", cap, tname(ty),
               s ? "smallest" : "largest", dist, n, calls);
            free(perm);
            free(keys);
        }
    }
    /* ties across every chunk boundary: all equal, the answer is positions 0..k-1 */
    {
        size_t n = 5 * cap + 3 < 3000 ? 3000 : 5 * cap + 3;
        if (n > 60000)
            n = 60000;
        int32_t *keys = bmalloc(n * 4);
        for (size_t i = 0; i < n; i++)
            keys[i] = -5;
        size_t k = lim_by_type[2] < n ? lim_by_type[2] : n;
        int64_t *idx = bmalloc(k * 8);
        int32_t *ok_ = bmalloc(k * 4);
        for (size_t i = 0; i < k; i++)
            idx[i] = -1, ok_[i] = 0;
        int st = cltopk_topk(ctx, CLTOPK_INT32, keys, n, k, CLTOPK_SMALLEST, CLTOPK_ALGO_BITONIC,
                             ok_, idx);
        int good = st == CLTOPK_OK;
        for (size_t i = 0; i < k && good; i++)
            if (idx[i] != (int64_t)i || ok_[i] != -5) {
                diag_after("position %zu: index %lld", i, (long long)idx[i]);
                good = 0;
            }
        ok(good, "chunk %zu: all-equal int32, k = %zu of n = %zu gives positions 0..k-1", cap, k,
           n);
        free(keys);
        free(idx);
        free(ok_);
    }
    cltopk_close(ctx);
}

/* a kernel that does not build: bitonic on 2^20 float32 of host data (the
 * chunk loop writes them to the device before it builds its kernel) */
static int bitonic_call(cltopk_context *ctx, const void *keys, void *out_keys,
                        int64_t *out_index, void *arg)
{
    (void)arg;
    return cltopk_topk(ctx, CLTOPK_FLOAT32, keys, (size_t)1 << 20, 8, 0, CLTOPK_ALGO_BITONIC,
                       out_keys, out_index);
}

/* CLTOPK_BUILD_FILES: CLTOPK_BUILD_OPTIONS (an option no compiler takes)
 * applies to the files it names only (bitonic's kernels are reducer.cl's);
 * empty, as unset, to every file */
static void build_files(cltopk_context *ctx)
{
    static const struct {
        const char *files;
        int fails;
    } cases[] = {{"query.cl", 0},           {"query.cl,reducer.cl", 1}, {"reducer.cl", 1},
                 {"reducer.clx,query.cl", 0}, {"reducer", 0},            {"", 1}};
    float keys[1000], okeys[8];
    int64_t oi[8];
    for (int i = 0; i < 1000; i++)
        keys[i] = (float)((i * 7919) % 1000);
    char *o1 = env_push("CLTOPK_BUILD_OPTIONS", "-cl-no-such-option");
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char *o2 = env_push("CLTOPK_BUILD_FILES", cases[c].files);
        int st = cltopk_topk(ctx, CLTOPK_FLOAT32, keys, 1000, 8, 0, CLTOPK_ALGO_BITONIC, okeys,
                             oi);
        env_pop("CLTOPK_BUILD_FILES", o2);
        int good = cases[c].fails ? st == CLTOPK_ERR_BUILD
                                  : st == CLTOPK_OK && okeys[0] == 999.0f && okeys[7] == 992.0f;
        ok(good, "CLTOPK_BUILD_FILES=\"%s\": a bitonic call %s (status %d)", cases[c].files,
           cases[c].fails ? "fails to build (CLTOPK_BUILD_OPTIONS applies)"
                          : "builds (CLTOPK_BUILD_OPTIONS does not apply)",
           st);
    }
    env_pop("CLTOPK_BUILD_OPTIONS", o1);
}

int main(void)
{
    plan_lazy();
    watchdog(900);
    rng_init(&rng, test_seed() ^ 0xC4C4);
    unsetenv("CLTOPK_MAX_CHUNK");
    /* a failed build ends the call's write of the caller's keys (it was left
     * in flight: `cltopk topk` crashed in POCL's thread); first, before this
     * process touches OpenCL (the call runs in a child) */
    {
        char fwhy[512] = "";
        int r = failed_build_call(((size_t)1 << 20) * 4, bitonic_call, NULL, 8 * 4, 8, fwhy,
                                  sizeof fwhy);
        if (r < 0)
            skip("a failed build: %s", fwhy);
        else if (!ok(r, "bitonic on host data, its kernel failing to build: CLTOPK_ERR_BUILD "
                        "naming it, nothing written, the keys' transfer over at the return"))
            diag("%s", fwhy);
    }
    char why[512];
    cltopk_context *ctx;
    if (!open_test_cl(&ctx, why, sizeof why)) {
        if (tap_count() == 0)
            skip_all("%s", why);
        return tap_done();
    }
    size_t lim[6];
    for (int t = 0; t < 6; t++)
        lim[t] = bitonic_limit(ctx, all_types[t]);
    build_files(ctx);

    /* the cap is honoured: a host call's workspace shrinks with it; bad values
     * are ignored.  k within what bitonic takes here; a call it declines fails
     * these checks with the library's reason (not a bogus size that the
     * comparisons below would pass) */
    size_t n = 1000000, k = lim[0] < 16 ? lim[0] : 16;
    if (k == 0)
        k = 16;
    size_t def = 0, capped = 0;
    int st = workspace(ctx, n, k, &def);
    ok(st == CLTOPK_OK && def > 0, "bitonic workspace without a cap, k = %zu: %zu bytes", k, def);
    setenv("CLTOPK_MAX_CHUNK", "1000", 1);
    st = workspace(ctx, n, k, &capped);
    ok(st == CLTOPK_OK && capped < def,
       "CLTOPK_MAX_CHUNK=1000 shrinks the workspace (%zu < %zu bytes)", capped, def);
    const char *bad[] = {"0", "abc", "-5", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv("CLTOPK_MAX_CHUNK", bad[i], 1);
        size_t b = 0;
        st = workspace(ctx, n, k, &b);
        ok(st == CLTOPK_OK && b == def, "CLTOPK_MAX_CHUNK=\"%s\" is ignored (%zu bytes)", bad[i],
           b);
    }
    unsetenv("CLTOPK_MAX_CHUNK");

    /* the workspace counts streaming's second device input where streaming
     * applies: pieces of a cap (n streams, and n within one piece does not),
     * and, uncapped, float32 pieces of 32 MiB (2^23 elements) with n = 2^24
     * inside one chunk (the GPU case: the chunk loop would take all n at once) */
    static const cltopk_algo dev_algos[] = {CLTOPK_ALGO_BITONIC, CLTOPK_ALGO_SBP_RADIX,
                                            CLTOPK_ALGO_SBP_TREE, CLTOPK_ALGO_RADIX_SELECT,
                                            CLTOPK_ALGO_SORT, CLTOPK_ALGO_SAMPLE_FILTER};
    for (size_t a = 0; a < sizeof dev_algos / sizeof dev_algos[0]; a++) {
        stream_workspace(ctx, dev_algos[a], CLTOPK_FLOAT32, 100000, 16, "4096", 4096);
        stream_workspace(ctx, dev_algos[a], CLTOPK_FLOAT64, 100000, 300, "4096", 4096);
        stream_workspace(ctx, dev_algos[a], CLTOPK_FLOAT32, 3000, 16, "4096", 4096);
        /* where the device's memory allows two pieces (explain says so) */
        char buf[8192];
        setenv("CLTOPK_STREAM", "1", 1);
        int two = cltopk_explain(ctx, CLTOPK_FLOAT32, (size_t)1 << 24, 16, 0, 0, buf,
                                 sizeof buf) == CLTOPK_OK &&
                  strstr(buf, "streamed in 2 pieces of 8388608 elements");
        unsetenv("CLTOPK_STREAM");
        if (two)
            stream_workspace(ctx, dev_algos[a], CLTOPK_FLOAT32, (size_t)1 << 24, 16, NULL,
                             (size_t)1 << 23);
        else
            skip("%s: 2^24 float32 does not stream in two pieces on this device",
                 cltopk_algo_name(dev_algos[a]));
    }
    cltopk_close(ctx);

    static const size_t caps[] = {1, 3, 1000, 4097, 8192};
    for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++)
        one_cap(caps[i], lim);
    unsetenv("CLTOPK_MAX_CHUNK");
    return tap_done();
}
