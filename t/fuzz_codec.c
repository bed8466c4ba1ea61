/* fuzz_codec.c - libFuzzer target for the packed-column container and
 * cltopk_unpack / cltopk_topk_packed (built with ./configure --enable-fuzzer
 * CC=clang; run bounded by t/fuzz.sh).
 *
 * Each input is read two ways:
 *   1. as a container file (tools/container.c, docs/FORMAT.md);
 *   2. raw: byte 0 picks the codec, bytes 1..2 how many of the following
 *      little-endian words are block_starts (the rest is data), so that the
 *      fuzzer reaches the column validator without a consistent container.
 * The arrays are copied to buffers of their exact size (ASan sees any read past
 * them).  A column the library accepts must decode to values that re-pack and
 * decode to the same values, and top-k of it must succeed; anything else than
 * CLTOPK_OK or CLTOPK_ERR_CORRUPT (or INVALID_ARGUMENT for a count too large to
 * allocate here) aborts. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cltopk.h"
#include "container.h"

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);

#define MAX_VALUES (1u << 20)

static cltopk_context *ctx;

static void check(int cond, const char *what)
{
    if (!cond) {
        fprintf(stderr, "fuzz_codec: %s (%s)\n", what, cltopk_last_error(ctx));
        abort();
    }
}

static void column(cltopk_codec codec, const uint32_t *data, size_t words, const uint32_t *st,
                   size_t nst)
{
    size_t count = 0;
    int s = cltopk_unpack(ctx, codec, data, words, st, nst, NULL, 0, &count);
    check(s == CLTOPK_OK || s == CLTOPK_ERR_CORRUPT, "unexpected status validating");
    if (s != CLTOPK_OK || count > MAX_VALUES)
        return;
    int32_t *out = malloc(count ? count * 4 : 1);
    size_t got = 0;
    check(out != NULL, "out of memory");
    s = cltopk_unpack(ctx, codec, data, words, st, nst, out, count, &got);
    check(s == CLTOPK_OK && got == count, "a validated column failed to decode");
    /* the values re-pack and decode to themselves */
    size_t cap = cltopk_pack_bound(codec, count), scap = cltopk_pack_starts_bound(codec, count);
    uint32_t *d2 = malloc(cap * 4), *s2 = malloc(scap * 4);
    int32_t *back = malloc(count ? count * 4 : 1);
    size_t w2, n2, c2;
    check(d2 && s2 && back, "out of memory");
    check(cltopk_pack(codec, out, count, d2, cap, &w2, s2, scap, &n2) == CLTOPK_OK, "re-pack");
    check(cltopk_unpack(ctx, codec, d2, w2, s2, n2, back, count, &c2) == CLTOPK_OK && c2 == count &&
              !memcmp(back, out, count * 4),
          "re-packed values decode differently");
    if (count) {
        int32_t k5[5];
        int64_t i5[5];
        size_t k = count < 5 ? count : 5;
        check(cltopk_topk_packed(ctx, codec, data, words, st, nst, k, CLTOPK_SMALLEST,
                                 CLTOPK_ALGO_CPU_HEAP, k5, i5) == CLTOPK_OK,
              "top-k of a valid column");
        for (size_t i = 0; i < k; i++)
            check(i5[i] >= 0 && (size_t)i5[i] < count && out[i5[i]] == k5[i],
                  "top-k disagrees with the decoded values");
    }
    free(d2);
    free(s2);
    free(back);
    free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
    if (!ctx && cltopk_open(&ctx, "cpu") != CLTOPK_OK)
        abort();
    packed_file pf;
    char why[300];
    if (packed_parse(d, n, &pf, why, sizeof why) == 0) {
        column(pf.codec, pf.data, pf.data_words, pf.starts, pf.nstarts);
        packed_free(&pf);
    }
    if (n >= 3) {
        cltopk_codec codec = (cltopk_codec)(d[0] % 3);
        size_t words = (n - 3) / 4, nst = ((size_t)d[1] | (size_t)d[2] << 8);
        if (nst > words)
            nst = words;
        uint32_t *data = malloc((words - nst) * 4 + 1), *st = malloc(nst * 4 + 1);
        if (!data || !st)
            abort();
        for (size_t i = 0; i < words; i++) {
            uint32_t w;
            memcpy(&w, d + 3 + 4 * i, 4);
            if (i < words - nst)
                data[i] = w;
            else
                st[i - (words - nst)] = w;
        }
        column(codec, data, words - nst, st, nst);
        free(data);
        free(st);
    }
    return 0;
}
