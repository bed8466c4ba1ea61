/* codec.c - bit-packed columns (docs/FORMAT.md): round trips, hand-built
 * streams, thousands of corruptions, GPU = CPU = reference, top-k of packed data.
 *
 * The reference is this file's own reading of docs/FORMAT.md: a bit-by-bit
 * writer (hand-built streams) and a bit-by-bit, bounds-checked validating
 * decoder (ref_decode), independent of cpu/bitpack.c and cl/bitpack.h.  Every
 * library decode is compared with it bit for bit; every corruption must get
 * CLTOPK_ERR_CORRUPT exactly when the reference rejects the stream, with the
 * output untouched, or else the reference's values.  Buffers are allocated to
 * their exact size so that ASan (--enable-sanitizers) catches any read past
 * them.  The OpenCL part runs on the test device (CLTOPK_TEST_DEVICE) and is
 * skipped where there is none. */
#include "testlib.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static rng_t rng;
static cltopk_context *cpu, *cl;
static const char *cname[3] = {"FOR", "DFOR", "RFOR"};

/* ---------------------------------------------------- reference (FORMAT.md) */

static int getbit(const uint32_t *d, size_t words, size_t wbase, uint64_t p, int *bad)
{
    size_t w = wbase + (size_t)(p / 32);
    if (w >= words) {
        *bad = 1;
        return 0;
    }
    return (d[w] >> (p % 32)) & 1;
}

static uint32_t getval(const uint32_t *d, size_t words, size_t wbase, uint64_t i, unsigned b,
                       int *bad)
{
    uint32_t x = 0;
    for (unsigned k = 0; k < b; k++)
        x |= (uint32_t)getbit(d, words, wbase, i * b + k, bad) << k;
    return x;
}

/* Validate and decode per FORMAT.md; 1 and out[0..count) (out may be NULL), or
 * 0 when the stream is not valid.  Never reads outside the arrays. */
static int ref_decode(int codec, const uint32_t *d, size_t words, const uint32_t *st,
                      size_t nst, uint32_t *out, size_t *count_out)
{
    if (words < 4)
        return 0;
    int rf = codec == 2;
    if (d[0] != (rf ? 512u : 128u) || d[1] != (rf ? 2u : 4u))
        return 0;
    uint64_t count = d[2];
    uint64_t unit = rf ? 512 : 128, nb = (count + unit - 1) / unit;
    /* FOR, DFOR: up to 4 blocks in the last tile of 512 values (padding) */
    uint64_t nmax = rf ? nb : (count + 511) / 512 * 4;
    if (nst < nb + 1 || nst > nmax + 1)
        return 0;
    uint64_t nall = nst - 1;
    if (st[nall] != words)
        return 0;
    uint64_t pos = 4;
    uint32_t *vals = malloc((nall ? nall : 1) * 512 * sizeof *vals);
    if (!vals)
        bail("out of memory");
    int bad = 0;
    for (uint64_t b = 0; b < nall && !bad; b++) {
        if (codec == 1 && b % 4 == 0)
            pos++;
        if (st[b] != pos) {
            bad = 1;
            break;
        }
        if (!rf) {
            if (pos + 2 > words) {
                bad = 1;
                break;
            }
            uint32_t ref = d[pos], ww = d[pos + 1];
            uint64_t p = pos + 2;
            for (int j = 0; j < 4 && !bad; j++) {
                unsigned w = (ww >> (8 * j)) & 255;
                if (w > 32) {
                    bad = 1;
                    break;
                }
                for (int i = 0; i < 32; i++)
                    vals[b * 128 + j * 32 + i] = ref + getval(d, words, p, i, w, &bad);
                p += w;
            }
            /* widths 0: 2 words, or 6 with one unused word 0 per miniblock
             * (the authors' encoders), as the next block's start says */
            uint64_t next = st[b + 1];
            if (codec == 1 && (b + 1) % 4 == 0 && b + 1 < nall)
                next--;
            if (ww == 0 && next == pos + 6 && pos + 6 <= words && !d[pos + 2] && !d[pos + 3] &&
                !d[pos + 4] && !d[pos + 5])
                p = pos + 6;
            if (p > words)
                bad = 1;
            pos = p;
        } else {
            if (pos + 3 > words) {
                bad = 1;
                break;
            }
            uint32_t h = d[pos], nr = h & 0xFFFF, vw = (h >> 16) & 255, lw = h >> 24;
            uint64_t L = b + 1 < nb ? 512 : count - b * 512;
            if (nr == 0 || nr > L || vw > 32 || lw > 32) {
                bad = 1;
                break;
            }
            uint64_t vp = pos + 3, lp = vp + ((uint64_t)nr * vw + 31) / 32;
            uint64_t end = lp + ((uint64_t)nr * lw + 31) / 32, at = 0;
            if (end > words) {
                bad = 1;
                break;
            }
            for (uint32_t r = 0; r < nr && !bad; r++) {
                uint32_t v = d[pos + 1] + getval(d, words, vp, r, vw, &bad);
                uint64_t len = (uint64_t)d[pos + 2] + getval(d, words, lp, r, lw, &bad);
                if (len == 0 || at + len > L) {
                    bad = 1;
                    break;
                }
                for (uint64_t i = 0; i < len; i++)
                    vals[b * 512 + at++] = v;
            }
            if (at != L)
                bad = 1;
            pos = end;
        }
    }
    if (!bad && pos != words)
        bad = 1;
    if (!bad && codec == 1) {
        /* prefix sums inside each tile, the tile's first value in front */
        for (uint64_t t = 0; t * 4 < nb; t++) {
            uint32_t acc = d[st[4 * t] - 1];
            vals[t * 512] = acc;
            for (uint64_t i = 1; i < 512 && t * 512 + i < nb * 128; i++) {
                acc += vals[t * 512 + i];
                vals[t * 512 + i] = acc;
            }
        }
    }
    if (!bad && count && vals[0] != d[3])
        bad = 1;
    if (!bad && out)
        memcpy(out, vals, count * 4);
    if (!bad && count_out)
        *count_out = count;
    free(vals);
    return !bad;
}

/* ------------------------------------------------------------------ data */

static const char *const kinds[] = {"mixed-widths", "width", "equal", "minmax", "zero-ones",
                                    "sorted", "reverse", "alternating", "random", "runs",
                                    NULL};

static void make(const char *kind, size_t n, unsigned width, uint32_t *v)
{
    uint32_t base = (uint32_t)rng_next(&rng);
    for (size_t i = 0; i < n; i++) {
        uint32_t r = (uint32_t)rng_next(&rng);
        if (!strcmp(kind, "mixed-widths")) {
            /* each miniblock of 32 its own width 0..32, around one base a block */
            if (i % 128 == 0)
                base = (uint32_t)rng_next(&rng);
            unsigned w = (unsigned)((i / 32) * 7 + width) % 33;
            v[i] = base + (w == 32 ? r : r & ((1u << w) - 1));
        } else if (!strcmp(kind, "width")) {
            uint32_t m = width == 32 ? UINT32_MAX : (1u << width) - 1;
            v[i] = base + (i % 32 == 5 ? m : r & m);
        } else if (!strcmp(kind, "equal")) {
            v[i] = base;
        } else if (!strcmp(kind, "minmax")) {
            v[i] = r & 1 ? (uint32_t)INT_MIN : (uint32_t)INT_MAX;
        } else if (!strcmp(kind, "zero-ones")) {
            v[i] = r & 1 ? 0u : 0xFFFFFFFFu;
        } else if (!strcmp(kind, "sorted")) {
            v[i] = (uint32_t)INT_MIN + (uint32_t)(i * 3 + (r & 1));
        } else if (!strcmp(kind, "reverse")) {
            v[i] = (uint32_t)INT_MAX - (uint32_t)(i * 5);
        } else if (!strcmp(kind, "alternating")) {
            v[i] = i & 1 ? (uint32_t)INT_MIN + (r & 3) : (uint32_t)INT_MAX - (r & 3);
        } else if (!strcmp(kind, "random")) {
            v[i] = r;
        } else { /* runs of random length 1..300, random values */
            if (i == 0 || r % 100 == 0)
                base = (uint32_t)rng_next(&rng) >> (r % 32);
            v[i] = base;
        }
    }
}

/* a packed column in exactly sized buffers */
typedef struct {
    int codec;
    uint32_t *data, *st;
    size_t words, nst;
} column;

static int pack(int codec, const uint32_t *v, size_t n, column *c)
{
    size_t bound = cltopk_pack_bound((cltopk_codec)codec, n);
    size_t sb = cltopk_pack_starts_bound((cltopk_codec)codec, n);
    uint32_t *d = bmalloc(bound * 4), *s = bmalloc(sb * 4);
    int st = cltopk_pack((cltopk_codec)codec, (const int32_t *)v, n, d, bound, &c->words, s, sb,
                         &c->nst);
    if (st != CLTOPK_OK) {
        diag("cltopk_pack: %s", cltopk_last_error(NULL));
        free(d);
        free(s);
        return st;
    }
    c->codec = codec;
    c->data = bmalloc(c->words * 4);
    c->st = bmalloc(c->nst * 4);
    memcpy(c->data, d, c->words * 4);
    memcpy(c->st, s, c->nst * 4);
    free(d);
    free(s);
    return CLTOPK_OK;
}

static void column_free(column *c)
{
    free(c->data);
    free(c->st);
}

#define POISON 0x5A5A5A5Au
#define GUARDS 4

/* unpack on ctx into a poisoned buffer; 1 if it agrees with the reference:
 * the same values, or CORRUPT with the buffer untouched when ref says invalid */
static int check_unpack(cltopk_context *ctx, const column *c, char *msg, size_t len)
{
    size_t rcount = 0;
    uint32_t cnt = c->words >= 4 ? c->data[2] : 0;
    uint32_t *expect = bmalloc(((size_t)cnt + 1) * 4);
    int valid = ref_decode(c->codec, c->data, c->words, c->st, c->nst, expect, &rcount);
    if (cnt > (1u << 20))
        cnt = 1u << 20; /* a corrupted count: no valid column of these arrays is longer */
    size_t cap = (size_t)cnt + GUARDS;
    uint32_t *out = bmalloc(cap * 4);
    for (size_t i = 0; i < cap; i++)
        out[i] = POISON ^ (uint32_t)i;
    size_t n_out = 12345;
    int st = cltopk_unpack(ctx, (cltopk_codec)c->codec, c->data, c->words, c->st, c->nst,
                           (int32_t *)out, cap, &n_out);
    int good = 1;
    if (valid) {
        if (st != CLTOPK_OK) {
            snprintf(msg, len, "valid stream rejected: %d %s", st, cltopk_last_error(ctx));
            good = 0;
        } else if (n_out != rcount) {
            snprintf(msg, len, "count %zu, expected %zu", n_out, rcount);
            good = 0;
        } else {
            for (size_t i = 0; i < cap && good; i++) {
                uint32_t w = i < rcount ? expect[i] : POISON ^ (uint32_t)i;
                if (out[i] != w) {
                    snprintf(msg, len, "out[%zu] = 0x%08x, expected 0x%08x%s", i, out[i], w,
                             i >= rcount ? " (guard)" : "");
                    good = 0;
                }
            }
        }
    } else {
        if (st != CLTOPK_ERR_CORRUPT) {
            snprintf(msg, len, "invalid stream: status %d, expected CLTOPK_ERR_CORRUPT", st);
            good = 0;
        } else if (!cltopk_last_error(ctx)[0]) {
            snprintf(msg, len, "CORRUPT without a detail text");
            good = 0;
        } else if (n_out != 12345) {
            snprintf(msg, len, "n_out written on failure");
            good = 0;
        }
        for (size_t i = 0; i < cap && good; i++)
            if (out[i] != (POISON ^ (uint32_t)i)) {
                snprintf(msg, len, "out[%zu] written on failure", i);
                good = 0;
            }
    }
    free(expect);
    free(out);
    return good;
}

/* --------------------------------------------------------------- round trips */

static const size_t sizes[] = {0, 1, 127, 128, 129, 511, 512, 513, 2049, 5000};
#define NSIZES (sizeof sizes / sizeof sizes[0])

static void round_trips(void)
{
    char msg[512];
    for (int codec = 0; codec < 3; codec++)
        for (int k = 0; kinds[k]; k++) {
            unsigned wmax = !strcmp(kinds[k], "width") || !strcmp(kinds[k], "mixed-widths") ? 32
                                                                                             : 0;
            int good = 1;
            size_t cases = 0;
            for (unsigned w = 0; w <= wmax && good; w++)
                for (size_t z = 0; z < NSIZES && good; z++) {
                    size_t n = sizes[z];
                    uint32_t *v = bmalloc((n + 1) * 4);
                    make(kinds[k], n, w, v);
                    column c;
                    if (pack(codec, v, n, &c) != CLTOPK_OK) {
                        good = 0;
                        snprintf(msg, sizeof msg, "pack failed, n = %zu", n);
                        free(v);
                        break;
                    }
                    cases++;
                    size_t rc = 0;
                    uint32_t *r = bmalloc((n + 1) * 4);
                    if (!ref_decode(codec, c.data, c.words, c.st, c.nst, r, &rc) || rc != n ||
                        memcmp(r, v, n * 4)) {
                        good = 0;
                        snprintf(msg, sizeof msg, "the reference reads another column, n = %zu "
                                 "width %u", n, w);
                    } else if (c.words > cltopk_pack_bound((cltopk_codec)codec, n) ||
                               c.nst != cltopk_pack_starts_bound((cltopk_codec)codec, n)) {
                        good = 0;
                        snprintf(msg, sizeof msg, "bounds exceeded, n = %zu", n);
                    } else if (!check_unpack(cpu, &c, msg, sizeof msg)) {
                        good = 0;
                    } else if (cl && !check_unpack(cl, &c, msg, sizeof msg)) {
                        good = 0;
                        strncat(msg, " (OpenCL)", sizeof msg - strlen(msg) - 1);
                    }
                    if (!good)
                        diag_after("%s %s n = %zu width %u: %s", cname[codec], kinds[k], n, w,
                                   msg);
                    free(r);
                    free(v);
                    column_free(&c);
                }
            ok(good, "%s round trip, %s data (%zu columns, CPU%s)", cname[codec], kinds[k], cases,
               cl ? " and OpenCL" : "");
        }
}

/* size in bits/value of some columns, the property each codec exists for */
static void sizes_check(void)
{
    size_t n = 1 << 16;
    uint32_t *v = bmalloc(n * 4);
    column c;
    for (size_t i = 0; i < n; i++)
        v[i] = (uint32_t)(i / 1000) * 7919u;   /* runs of 1000 */
    pack(2, v, n, &c);
    ok(c.words + c.nst < n / 32, "RFOR packs runs of 1000 below 1 bit/value (%zu words)",
       c.words + c.nst);
    column_free(&c);
    for (size_t i = 0; i < n; i++)
        v[i] = (uint32_t)i;                     /* sorted 0..n-1 */
    pack(1, v, n, &c);
    ok((c.words + c.nst) * 32 <= n * 1.0625 + 160,
       "DFOR packs 0..n-1 in 1.0625 bits/value (%zu words)",
       c.words + c.nst);
    column_free(&c);
    for (size_t i = 0; i < n; i++)
        v[i] = 1000 + (uint32_t)(rng_next(&rng) & 255);
    pack(0, v, n, &c);
    ok(c.words + c.nst <= n / 128 * 35 + 5, "FOR packs 8-bit data in 8.75 bits/value (%zu words)",
       c.words + c.nst);
    column_free(&c);
    free(v);
}

/* -------------------------------------------------------- hand-built streams */

static void putval(uint32_t *d, size_t wbase, size_t i, unsigned b, uint32_t x)
{
    for (unsigned k = 0; k < b; k++) {
        size_t p = i * b + k;
        if ((x >> k) & 1)
            d[wbase + p / 32] |= 1u << (p % 32);
    }
}

/* FOR / DFOR blocks with a reference below the minimum and widths wider than
 * needed (random, up to 32), as no encoder of ours would choose; or (uniform)
 * as the authors' released encoders write them: the reference the block
 * minimum, all four widths the block's largest (1..31), the column padded to a
 * multiple of 512 values and the padded count in the header */
static int hand_for(int dfor, size_t n, int uniform, char *msg, size_t len)
{
    size_t nb = (n + 127) / 128;
    uint32_t *v = bmalloc((nb * 128 + 1) * 4), *d = bcalloc(4 + nb * 131 + 1, 4);
    uint32_t *s = bmalloc((nb + 1) * 4);
    uint32_t *x = bmalloc((nb * 128 + 1) * 4);  /* stored (pre-FOR) values */
    for (size_t i = 0; i < nb * 128; i++)
        x[i] = (uint32_t)rng_next(&rng) >> (uniform ? 1 + i / 128 % 31
                                            : rng_next(&rng) % 33 == 32 ? 0 : 8 + i % 20);
    if (dfor) {
        for (size_t t = 0; t * 512 < nb * 128; t++)
            x[t * 512] = 0;                       /* d[0] of a tile */
    }
    size_t pos = 4;
    for (size_t b = 0; b < nb; b++) {
        if (dfor && b % 4 == 0) {
            d[pos] = (uint32_t)rng_next(&rng);    /* the tile's first value */
            pos++;
        }
        s[b] = (uint32_t)pos;
        uint32_t mn = UINT32_MAX;
        for (int i = 0; i < 128; i++)
            mn = x[b * 128 + i] < mn ? x[b * 128 + i] : mn;
        uint32_t ref = uniform ? mn : mn - (uint32_t)(rng_next(&rng) % 5);
        unsigned umax = 1;
        for (int i = 0; uniform && i < 128; i++) {
            uint32_t m = x[b * 128 + i] - ref;
            unsigned need = m ? 32 - (unsigned)__builtin_clz(m) : 0;
            umax = need > umax ? need : umax;
        }
        d[pos] = ref;
        uint32_t ww = 0;
        size_t p = pos + 2;
        for (int j = 0; j < 4; j++) {
            uint32_t m = 0;
            for (int i = 0; i < 32; i++)
                m |= x[b * 128 + j * 32 + i] - ref;
            unsigned need = m ? 32 - (unsigned)__builtin_clz(m) : 0;
            unsigned w = uniform ? umax : need + (unsigned)(rng_next(&rng) % (33 - need));
            ww |= w << (8 * j);
            for (int i = 0; i < 32; i++)
                putval(d, p, (size_t)i, w, x[b * 128 + j * 32 + i] - ref);
            p += w;
        }
        d[pos + 1] = ww;
        pos = p;
    }
    s[nb] = (uint32_t)pos;
    /* the values these blocks mean */
    for (size_t i = 0; i < nb * 128; i++)
        v[i] = x[i];
    if (dfor)
        for (size_t t = 0; t * 512 < nb * 128; t++) {
            uint32_t acc = d[s[4 * t] - 1];
            v[t * 512] = acc;
            for (size_t i = 1; i < 512 && t * 512 + i < nb * 128; i++)
                v[t * 512 + i] = acc += x[t * 512 + i];
        }
    d[0] = 128, d[1] = 4, d[2] = (uint32_t)n, d[3] = n ? v[0] : 0;
    column c = {dfor, d, s, pos, nb + 1};
    int good = 1;
    uint32_t *e = bmalloc((n + 1) * 4);
    size_t rc;
    if (!ref_decode(dfor, d, pos, s, nb + 1, e, &rc) || memcmp(e, v, n * 4)) {
        snprintf(msg, len, "the reference misreads a hand-built stream (a test bug)");
        good = 0;
    }
    if (good && !check_unpack(cpu, &c, msg, len))
        good = 0;
    if (good && cl && !check_unpack(cl, &c, msg, len))
        good = 0;
    free(e);
    free(v);
    free(x);
    free(d);
    free(s);
    return good;
}

/* RFOR tiles with references below the minima and wide widths */
static int hand_rfor(size_t n, char *msg, size_t len)
{
    size_t nt = (n + 511) / 512;
    uint32_t *d = bcalloc(4 + nt * (3 + 512 * 2) + 1, 4), *s = bmalloc((nt + 1) * 4);
    uint32_t *v = bmalloc((n + 1) * 4);
    size_t pos = 4;
    for (size_t t = 0; t < nt; t++) {
        size_t L = n - t * 512 < 512 ? n - t * 512 : 512, at = 0;
        uint32_t val[512], ln[512], nr = 0;
        while (at < L) {
            size_t l = 1 + rng_below(&rng, 1 + rng_below(&rng, 64));
            if (l > L - at)
                l = L - at;
            val[nr] = (uint32_t)rng_next(&rng) >> rng_below(&rng, 32);
            ln[nr++] = (uint32_t)l;
            for (size_t i = 0; i < l; i++)
                v[t * 512 + at++] = val[nr - 1];
        }
        uint32_t vmin = UINT32_MAX, lmin = UINT32_MAX, vm = 0, lm = 0;
        for (uint32_t r = 0; r < nr; r++) {
            vmin = val[r] < vmin ? val[r] : vmin;
            lmin = ln[r] < lmin ? ln[r] : lmin;
        }
        uint32_t vref = vmin - (uint32_t)rng_below(&rng, 3);
        uint32_t lref = lmin - (uint32_t)rng_below(&rng, lmin);
        for (uint32_t r = 0; r < nr; r++) {
            vm |= val[r] - vref;
            lm |= ln[r] - lref;
        }
        unsigned vn = vm ? 32 - (unsigned)__builtin_clz(vm) : 0;
        unsigned ln_ = lm ? 32 - (unsigned)__builtin_clz(lm) : 0;
        unsigned vw = vn + (unsigned)rng_below(&rng, 33 - vn);
        unsigned lw = ln_ + (unsigned)rng_below(&rng, 33 - ln_);
        s[t] = (uint32_t)pos;
        d[pos] = nr | vw << 16 | lw << 24;
        d[pos + 1] = vref;
        d[pos + 2] = lref;
        size_t vp = pos + 3, lp = vp + ((size_t)nr * vw + 31) / 32;
        for (uint32_t r = 0; r < nr; r++) {
            putval(d, vp, r, vw, val[r] - vref);
            putval(d, lp, r, lw, ln[r] - lref);
        }
        pos = lp + ((size_t)nr * lw + 31) / 32;
    }
    s[nt] = (uint32_t)pos;
    d[0] = 512, d[1] = 2, d[2] = (uint32_t)n, d[3] = n ? v[0] : 0;
    column c = {2, d, s, pos, nt + 1};
    int good = 1;
    uint32_t *e = bmalloc((n + 1) * 4);
    size_t rc;
    if (!ref_decode(2, d, pos, s, nt + 1, e, &rc) || memcmp(e, v, n * 4)) {
        snprintf(msg, len, "the reference misreads a hand-built stream (a test bug)");
        good = 0;
    }
    if (good && !check_unpack(cpu, &c, msg, len))
        good = 0;
    if (good && cl && !check_unpack(cl, &c, msg, len))
        good = 0;
    free(e);
    free(v);
    free(d);
    free(s);
    return good;
}

static void hand_built(void)
{
    char msg[512];
    for (int codec = 0; codec < 3; codec++) {
        int good = 1;
        for (int rep = 0; rep < 40 && good; rep++) {
            size_t n = rep < (int)NSIZES ? sizes[rep] : 1 + rng_below(&rng, 3000);
            good = codec == 2 ? hand_rfor(n, msg, sizeof msg)
                              : hand_for(codec, n, 0, msg, sizeof msg);
            if (!good)
                diag_after("n = %zu: %s", n, msg);
        }
        ok(good, "%s: 40 hand-built streams (references below the minimum, widths wider than "
           "needed) decode as written", cname[codec]);
    }
    for (int codec = 0; codec < 2; codec++) {
        int good = 1;
        for (int rep = 0; rep < 10 && good; rep++) {
            size_t n = 512 * (1 + rng_below(&rng, 8));
            good = hand_for(codec, n, 1, msg, sizeof msg);
            if (!good)
                diag_after("n = %zu: %s", n, msg);
        }
        ok(good, "%s: 10 streams laid out as the authors' released encoder writes them "
           "(uniform widths 1..31, padded count) decode", cname[codec]);
    }
}

/* ------------------------------------------- the authors' padded streams */

/* A column laid out as the authors' released encoders write it: the values
 * padded to a multiple of 512 by repeating the last one, all of it packed; per
 * block the reference is the minimum (unsigned for FOR, signed over the tile's
 * deltas for DFOR) and all four widths the block's largest; a miniblock of
 * width 0 still takes one word (0); DFOR tiles of 512 values with the tile's
 * first value in front.  Header word 2 is n, the true count (docs/FORMAT.md),
 * or with padded_count the padded count, as the released code writes it.
 * Exactly sized arrays (ASan sees overreads).  n > 0. */
static void authors_pack(int dfor, const uint32_t *v, size_t n, int padded_count, column *c)
{
    size_t np = (n + 511) / 512 * 512, nb = np / 128;
    uint32_t *y = bmalloc(np * 4), *x = bmalloc(np * 4);
    uint32_t *d = bcalloc(4 + nb * 130 + nb / 4, 4), *s = bmalloc((nb + 1) * 4);
    for (size_t i = 0; i < np; i++)
        y[i] = x[i] = i < n ? v[i] : v[n - 1];
    if (dfor)
        for (size_t i = 0; i < np; i++)
            x[i] = i % 512 ? y[i] - y[i - 1] : 0;
    size_t pos = 4;
    for (size_t b = 0; b < nb; b++) {
        if (dfor && b % 4 == 0)
            d[pos++] = y[b * 128];
        s[b] = (uint32_t)pos;
        const uint32_t *xb = x + b * 128;
        uint32_t ref = xb[0];
        for (int i = 1; i < 128; i++)
            if (dfor ? (int32_t)xb[i] < (int32_t)ref : xb[i] < ref)
                ref = xb[i];
        unsigned w = 0;
        for (int i = 0; i < 128; i++) {
            uint32_t m = xb[i] - ref;
            unsigned need = m ? 32 - (unsigned)__builtin_clz(m) : 0;
            w = need > w ? need : w;
        }
        d[pos] = ref;
        d[pos + 1] = w * 0x01010101u;
        size_t p = pos + 2;
        for (int j = 0; j < 4; j++) {
            for (int i = 0; i < 32; i++)
                putval(d, p, (size_t)i, w, xb[j * 32 + i] - ref);
            p += w ? w : 1;
        }
        pos = p;
    }
    s[nb] = (uint32_t)pos;
    d[0] = 128, d[1] = 4, d[2] = (uint32_t)(padded_count ? np : n), d[3] = v[0];
    c->codec = dfor;
    c->words = pos;
    c->nst = nb + 1;
    c->data = bmalloc(pos * 4);
    c->st = bmalloc((nb + 1) * 4);
    memcpy(c->data, d, pos * 4);
    memcpy(c->st, s, (nb + 1) * 4);
    free(y);
    free(x);
    free(d);
    free(s);
}

/* n values of one of 4 kinds, ranges below 2^31 (the released encoders
 * misencode width 32) */
static void authors_values(int kind, size_t n, uint32_t *v)
{
    uint32_t base = (uint32_t)rng_next(&rng);
    for (size_t i = 0; i < n; i++) {
        uint32_t r = (uint32_t)rng_next(&rng);
        switch (kind) {
        case 0: v[i] = base + (r & 0xFFFFF); break;                   /* 20-bit spread */
        case 1: v[i] = base + (uint32_t)(i * 3) + (r & 1); break;     /* sorted */
        case 2: v[i] = base; break;                                   /* constant: width 0 */
        default: v[i] = i % 200 < 100 ? base : base - 77; break;      /* long runs */
        }
    }
}

static const char *const authors_kinds[] = {"20-bit", "sorted", "constant", "runs"};

/* cltopk_unpack on ctx gives exactly v[0..n), guards intact; 1 or 0 and msg */
static int unpack_equals(cltopk_context *ctx, const column *c, const uint32_t *v, size_t n,
                         char *msg, size_t len)
{
    uint32_t *out = bmalloc((n + GUARDS) * 4);
    for (size_t i = 0; i < n + GUARDS; i++)
        out[i] = POISON ^ (uint32_t)i;
    size_t n_out = 0;
    int st = cltopk_unpack(ctx, (cltopk_codec)c->codec, c->data, c->words, c->st, c->nst,
                           (int32_t *)out, n + GUARDS, &n_out);
    int good = st == CLTOPK_OK && n_out == n;
    if (!good)
        snprintf(msg, len, "status %d, count %zu: %s", st, n_out, cltopk_last_error(ctx));
    for (size_t i = 0; i < n + GUARDS && good; i++) {
        uint32_t w = i < n ? v[i] : POISON ^ (uint32_t)i;
        if (out[i] != w) {
            snprintf(msg, len, "out[%zu] = 0x%08x, expected 0x%08x%s", i, out[i], w,
                     i >= n ? " (guard)" : "");
            good = 0;
        }
    }
    free(out);
    return good;
}

/* cltopk_topk_packed on ctx with algo, largest and smallest, both outputs,
 * equals the oracle over v[0..n) */
static int topk_equals(cltopk_context *ctx, cltopk_algo algo, const column *c, const uint32_t *v,
                       size_t n, char *msg, size_t len)
{
    int good = 1;
    for (int smallest = 0; smallest < 2 && good; smallest++) {
        int64_t *perm = oracle_order(CLTOPK_INT32, v, n, smallest);
        size_t k = n < 40 ? n : 40;
        int32_t *ok_ = bmalloc((k + GUARD) * 4), *pk = bmalloc((k + GUARD) * 4);
        int64_t *oi = bmalloc((k + GUARD) * 8), *pi = bmalloc((k + GUARD) * 8);
        make_poison(CLTOPK_INT32, v, perm, k, k + GUARD, ok_, oi);
        make_poison(CLTOPK_INT32, v, perm, k, k + GUARD, pk, pi);
        int st = cltopk_topk_packed(ctx, (cltopk_codec)c->codec, c->data, c->words, c->st,
                                    c->nst, k, smallest ? CLTOPK_SMALLEST : 0, algo, ok_, oi);
        if (st != CLTOPK_OK) {
            snprintf(msg, len, "top-k status %d: %s", st, cltopk_last_error(ctx));
            good = 0;
        } else if (!compare_outputs(CLTOPK_INT32, v, n, perm, k, k + GUARD, ok_, oi, pk, pi, msg,
                                    len)) {
            good = 0;
        }
        free(ok_);
        free(pk);
        free(oi);
        free(pi);
        free(perm);
    }
    return good;
}

/* check_unpack says CORRUPT on the CPU and on OpenCL, and so does the reference */
static int refused(const column *c, char *msg, size_t len)
{
    if (ref_decode(c->codec, c->data, c->words, c->st, c->nst, NULL, NULL)) {
        snprintf(msg, len, "the reference accepts it (a test bug)");
        return 0;
    }
    if (!check_unpack(cpu, c, msg, len))
        return 0;
    if (cl && !check_unpack(cl, c, msg, len)) {
        strncat(msg, " (OpenCL)", len - strlen(msg) - 1);
        return 0;
    }
    return 1;
}

/* append nw words w[] to c's data and nnew blocks starting at the old end +
 * rel[j]; the last entry of block_starts becomes the new end */
static void append(column *c, const uint32_t *w, size_t nw, const size_t *rel, size_t nnew)
{
    uint32_t *d = bmalloc((c->words + nw) * 4), *s = bmalloc((c->nst + nnew) * 4);
    memcpy(d, c->data, c->words * 4);
    memcpy(d + c->words, w, nw * 4);
    memcpy(s, c->st, c->nst * 4);
    for (size_t j = 0; j < nnew; j++)
        s[c->nst - 1 + j] = (uint32_t)(c->words + rel[j]);
    free(c->data);
    free(c->st);
    c->data = d;
    c->st = s;
    c->words += nw;
    c->nst += nnew;
    c->st[c->nst - 1] = (uint32_t)c->words;
}

static void column_copy(const column *a, column *c)
{
    *c = *a;
    c->data = bmalloc(a->words * 4);
    c->st = bmalloc(a->nst * 4);
    memcpy(c->data, a->data, a->words * 4);
    memcpy(c->st, a->st, a->nst * 4);
}

static void authors_streams(void)
{
    static const size_t ns[] = {1, 127, 128, 129, 511, 512, 513, 1000};
    char msg[512];
    for (int codec = 0; codec < 2; codec++) {
        int good = 1, topk_good = 1;
        size_t cases = 0;
        for (size_t z = 0; z < sizeof ns / sizeof ns[0]; z++)
            for (int kind = 0; kind < 4; kind++) {
                size_t n = ns[z], np = (n + 511) / 512 * 512;
                uint32_t *v = bmalloc(np * 4);
                authors_values(kind, n, v);
                for (size_t i = n; i < np; i++)
                    v[i] = v[n - 1];
                column c;
                authors_pack(codec, v, n, 0, &c);
                cases++;
                int g = 1;
                if (!ref_decode(codec, c.data, c.words, c.st, c.nst, NULL, NULL)) {
                    snprintf(msg, sizeof msg, "the reference refuses it (a test bug)");
                    g = 0;
                }
                if (g && !unpack_equals(cpu, &c, v, n, msg, sizeof msg))
                    g = 0;
                if (g && cl && !unpack_equals(cl, &c, v, n, msg, sizeof msg)) {
                    strncat(msg, " (OpenCL)", sizeof msg - strlen(msg) - 1);
                    g = 0;
                }
                if (!g) {
                    good = 0;
                    diag_after("%s %s n = %zu (%zu blocks): %s", cname[codec],
                               authors_kinds[kind], n, c.nst - 1, msg);
                }
                /* top-k of the column: CPU, OpenCL with AUTO, and for FOR the
                 * bitonic reducer decoding on load */
                g = topk_equals(cpu, CLTOPK_ALGO_AUTO, &c, v, n, msg, sizeof msg);
                if (g && cl)
                    g = topk_equals(cl, CLTOPK_ALGO_AUTO, &c, v, n, msg, sizeof msg);
                if (g && cl && codec == 0)
                    g = topk_equals(cl, CLTOPK_ALGO_BITONIC, &c, v, n, msg, sizeof msg);
                if (!g) {
                    topk_good = 0;
                    diag_after("%s %s n = %zu top-k: %s", cname[codec], authors_kinds[kind], n,
                               msg);
                }
                column_free(&c);
                /* the released header (padded count): the padding decodes too */
                authors_pack(codec, v, n, 1, &c);
                if (!unpack_equals(cpu, &c, v, np, msg, sizeof msg) ||
                    (cl && !unpack_equals(cl, &c, v, np, msg, sizeof msg))) {
                    good = 0;
                    diag_after("%s %s n = %zu, padded count: %s", cname[codec],
                               authors_kinds[kind], n, msg);
                }
                column_free(&c);
                free(v);
            }
        ok(good, "%s: %zu streams as the authors' encoder writes them (last tile padded to 4 "
           "blocks, width-0 miniblocks taking a word; true or padded count) decode to the "
           "original values on the CPU%s", cname[codec], cases, cl ? " and OpenCL" : "");
        ok(topk_good, "%s: cltopk_topk_packed of those streams equals the oracle (CPU%s)",
           cname[codec], cl ? ", OpenCL AUTO and bitonic" : "");
    }

    /* the padding is validated as any block, and never more than the last tile */
    for (int codec = 0; codec < 2; codec++) {
        int good = 1, cases = 0;
        for (size_t z = 0; z < sizeof ns / sizeof ns[0] && good; z++) {
            size_t n = ns[z], nb = (n + 127) / 128;
            uint32_t *v = bmalloc(n * 4);
            authors_values(0, n, v);
            column a;
            authors_pack(codec, v, n, 0, &a);
            size_t nall = a.nst - 1;
            for (int what = 0; what < 7 && good; what++) {
                column c;
                column_copy(&a, &c);
                size_t b = nall - 1;                    /* the last block */
                int applies = 1;
                switch (what) {
                case 0: /* a width of 33 in a padding block */
                    applies = nall > nb;
                    if (applies)
                        c.data[c.st[b] + 1] = (c.data[c.st[b] + 1] & ~0xFF00u) | 33u << 8;
                    break;
                case 1: /* a padding block's start off by one */
                    applies = nall > nb;
                    if (applies)
                        c.st[b]++;
                    break;
                case 2: { /* a padding block that claims widths 5 with its 4 words */
                    applies = nall > nb;
                    if (applies)
                        c.data[c.st[b] + 1] = 0x05050505u;
                    break;
                }
                case 3: /* a padding block's unused word not 0 */
                    applies = nall > nb && c.data[c.st[b] + 1] == 0;
                    if (applies)
                        c.data[c.st[b] + 3] = 1;
                    break;
                case 4: { /* a padding block past the end of data */
                    applies = nall > nb;
                    if (applies) {
                        c.words--;
                        c.st[nall]--;
                    }
                    break;
                }
                case 5: { /* a fifth block in the last tile (or a block past it) */
                    static const uint32_t blk[2] = {0, 0};
                    static const size_t rel[1] = {0};
                    append(&c, blk, 2, rel, 1);
                    break;
                }
                default: { /* a whole second tile of padding (first word + 4 blocks) */
                    uint32_t blk[9] = {v[n - 1], 0, 0, 0, 0, 0, 0, 0, 0};
                    size_t first = codec == 1, rel[4] = {first, first + 2, first + 4, first + 6};
                    append(&c, blk + !first, first + 8, rel, 4);
                    break;
                }
                }
                if (applies) {
                    cases++;
                    if (!refused(&c, msg, sizeof msg)) {
                        good = 0;
                        diag_after("%s n = %zu, defect %d: %s", cname[codec], n, what, msg);
                    }
                }
                column_free(&c);
            }
            /* the exact form without padding still decodes (our encoder's) */
            column c;
            column_copy(&a, &c);
            c.nst = nb + 1;
            c.words = c.st[nb];
            c.st[nb] = (uint32_t)c.words;
            if (!unpack_equals(cpu, &c, v, n, msg, sizeof msg) ||
                (cl && !unpack_equals(cl, &c, v, n, msg, sizeof msg))) {
                good = 0;
                diag_after("%s n = %zu without padding: %s", cname[codec], n, msg);
            }
            column_free(&c);
            column_free(&a);
            free(v);
        }
        ok(good, "%s: %d defects in the padding (bad width, bad start, size, unused word not "
           "0, past the end, a fifth block, a second tile) are CORRUPT on the CPU%s",
           cname[codec], cases, cl ? " and OpenCL" : "");
    }
    /* the detail text of too much padding */
    uint32_t v[1] = {42};
    column c;
    authors_pack(1, v, 1, 0, &c);
    size_t n_out = 0;
    int st = cltopk_unpack(cpu, CLTOPK_CODEC_DFOR, c.data, c.words, c.st, c.nst, NULL, 0, &n_out);
    ok(st == CLTOPK_OK && n_out == 1 && c.nst == 5,
       "DFOR: 1 value padded to a tile (5 block_starts entries) is accepted");
    static const uint32_t blk[2] = {0, 0};
    static const size_t rel[1] = {0};
    append(&c, blk, 2, rel, 1);
    st = cltopk_unpack(cpu, CLTOPK_CODEC_DFOR, c.data, c.words, c.st, c.nst, NULL, 0, &n_out);
    ok(st == CLTOPK_ERR_CORRUPT && strstr(cltopk_last_error(cpu), "padding"),
       "DFOR: 6 entries for 1 value are CORRUPT: %s", cltopk_last_error(cpu));
    column_free(&c);
}

/* --------------------------------------------------------------- corruption */

/* uniform below bound, 0 for bound 0 */
static size_t below(size_t bound)
{
    return bound ? (size_t)rng_below(&rng, bound) : 0;
}

static void corrupt_one(column *c)
{
    unsigned what = (unsigned)rng_below(&rng, 8);
    switch (what) {
    case 0: case 1: /* bit flips in data */
        for (unsigned f = 0; f <= what; f++) {
            size_t w = below(c->words);
            c->data[w] ^= 1u << rng_below(&rng, 32);
        }
        break;
    case 2: /* truncate data (the arrays shrink for real) */
        c->words = below(c->words);
        break;
    case 3: /* truncate or drop starts */
        c->nst = below(c->nst);
        break;
    case 4: { /* a bad start */
        if (!c->nst)
            break;
        size_t i = below(c->nst);
        c->st[i] = rng_below(&rng, 3) == 0 ? (uint32_t)rng_next(&rng)
                                           : c->st[i] + (uint32_t)rng_below(&rng, 5) - 2;
        break;
    }
    case 5: { /* a bad width byte, or a bad RFOR header word */
        size_t b = rng_below(&rng, c->nst > 1 ? c->nst - 1 : 1);
        if (c->nst > 1 && c->st[b] + 1 < c->words) {
            size_t at = c->st[b] + (c->codec == 2 ? 0 : 1);
            unsigned byte = (unsigned)rng_below(&rng, 4);
            uint32_t val = (uint32_t)rng_below(&rng, 3) ? 33 + (uint32_t)rng_below(&rng, 223)
                                                        : (uint32_t)rng_below(&rng, 33);
            c->data[at] = (c->data[at] & ~(255u << (8 * byte))) | val << (8 * byte);
        }
        break;
    }
    case 6: /* the header */
        c->data[below(c->words < 4 ? c->words : 4)] ^=
            1u << rng_below(&rng, 32);
        break;
    default: /* a random word anywhere */
        c->data[below(c->words)] = (uint32_t)rng_next(&rng);
        break;
    }
    /* reallocate to the exact (maybe smaller) size, so that ASan sees overreads */
    uint32_t *d = bmalloc((c->words ? c->words : 1) * 4), *s = bmalloc((c->nst ? c->nst : 1) * 4);
    memcpy(d, c->data, c->words * 4);
    memcpy(s, c->st, c->nst * 4);
    free(c->data);
    free(c->st);
    c->data = d;
    c->st = s;
}

static void corruptions(cltopk_context *ctx, const char *where, int count)
{
    char msg[512];
    for (int codec = 0; codec < 3; codec++) {
        int good = 1, rejected = 0, accepted = 0;
        for (int i = 0; i < count && good; i++) {
            size_t n = rng_below(&rng, 3) == 0 ? sizes[rng_below(&rng, NSIZES)]
                                                : 1 + rng_below(&rng, 1500);
            const char *kind = kinds[rng_below(&rng, 10)];
            uint32_t *v = bmalloc((n + 1) * 4);
            make(kind, n, (unsigned)rng_below(&rng, 33), v);
            column c;
            /* a quarter of the FOR and DFOR columns as the authors' encoder
             * writes them (padding blocks, width-0 miniblocks of one word) */
            if (codec < 2 && n && rng_below(&rng, 4) == 0)
                authors_pack(codec, v, n, 0, &c);
            else if (pack(codec, v, n, &c) != CLTOPK_OK)
                bail("pack failed");
            for (unsigned m = 0, nm = 1 + (unsigned)rng_below(&rng, 3); m < nm && c.words; m++)
                corrupt_one(&c);
            if (!check_unpack(ctx, &c, msg, sizeof msg)) {
                good = 0;
                diag_after("case %d (%s n = %zu): %s", i, kind, n, msg);
            }
            if (ref_decode(codec, c.data, c.words, c.st, c.nst, NULL, NULL))
                accepted++;
            else
                rejected++;
            column_free(&c);
            free(v);
        }
        ok(good, "%s: %d corrupted streams on %s: CORRUPT (output untouched) exactly when "
           "invalid, else the reference's values (%d invalid, %d still valid)", cname[codec],
           count, where, rejected, accepted);
    }
}

/* -------------------------------------------------------------- API edges */

static void api_edges(void)
{
    uint32_t v[300], d[2000], s[10];
    size_t dw = 77, ns = 77;
    for (int i = 0; i < 300; i++)
        v[i] = (uint32_t)rng_next(&rng);
    for (size_t i = 0; i < 2000; i++)
        d[i] = POISON;
    int st = cltopk_pack(CLTOPK_CODEC_FOR, (int32_t *)v, 300, d, 20, &dw, s, 10, &ns);
    int untouched = dw == 77 && ns == 77;
    for (size_t i = 4; i < 2000; i++)
        untouched &= d[i] == POISON;
    ok(st == CLTOPK_ERR_INVALID_ARGUMENT && untouched && cltopk_last_error(NULL)[0],
       "cltopk_pack: data_cap too small: INVALID_ARGUMENT, the column not written");
    st = cltopk_pack(CLTOPK_CODEC_FOR, (int32_t *)v, 300, d, 2000, &dw, s, 3, &ns);
    ok(st == CLTOPK_ERR_INVALID_ARGUMENT, "cltopk_pack: starts_cap too small");
    st = cltopk_pack((cltopk_codec)3, (int32_t *)v, 300, d, 2000, &dw, s, 10, &ns);
    ok(st == CLTOPK_ERR_INVALID_ARGUMENT && cltopk_pack_bound((cltopk_codec)3, 5) == 0,
       "unknown codec refused");
    ok(cltopk_pack_bound(CLTOPK_CODEC_FOR, (size_t)UINT32_MAX + 1) == 0,
       "no bound for 2^32 values");
    st = cltopk_pack(CLTOPK_CODEC_DFOR, (int32_t *)v, 300, d, 2000, &dw, s, 10, &ns);
    int32_t out[300];
    size_t n_out = 0;
    for (int i = 0; i < 300; i++)
        out[i] = 7;
    int st2 = cltopk_unpack(cpu, CLTOPK_CODEC_DFOR, d, dw, s, ns, out, 299, &n_out);
    int same = 1;
    for (int i = 0; i < 300; i++)
        same &= out[i] == 7;
    ok(st == CLTOPK_OK && st2 == CLTOPK_ERR_INVALID_ARGUMENT && same && n_out == 0,
       "cltopk_unpack: out_cap below the count: INVALID_ARGUMENT, nothing written");
    st2 = cltopk_unpack(cpu, CLTOPK_CODEC_DFOR, d, dw, s, ns, NULL, 0, &n_out);
    ok(st2 == CLTOPK_OK && n_out == 300, "cltopk_unpack with out NULL: the count only");
    st2 = cltopk_unpack(cpu, CLTOPK_CODEC_FOR, d, dw, s, ns, out, 300, &n_out);
    ok(st2 == CLTOPK_ERR_CORRUPT || st2 == CLTOPK_OK, "a DFOR column read as FOR: %s",
       cltopk_last_error(cpu));
    const char *names[] = {"for", "dfor", "rfor"};
    int names_ok = 1;
    for (int i = 0; i < 3; i++) {
        cltopk_codec cc;
        names_ok &= cltopk_codec_parse(names[i], &cc) == CLTOPK_OK && cc == (cltopk_codec)i &&
                    !strcmp(cltopk_codec_name(cc), names[i]);
    }
    ok(names_ok && !cltopk_codec_name((cltopk_codec)3), "codec names");
}

/* -------------------------------------------------------- top-k of a column */

static void topk_packed(cltopk_context *ctx, const char *where)
{
    char msg[512];
    for (int codec = 0; codec < 3; codec++) {
        int good = 1;
        size_t calls = 0;
        for (int rep = 0; rep < 12 && good; rep++) {
            size_t n = rep < 4 ? (size_t[]){1, 129, 513, 5000}[rep] : 1 + rng_below(&rng, 70000);
            const char *kind = kinds[rng_below(&rng, 10)];
            uint32_t *v = bmalloc(n * 4);
            make(kind, n, (unsigned)rng_below(&rng, 33), v);
            column c;
            pack(codec, v, n, &c);
            for (int smallest = 0; smallest < 2 && good; smallest++) {
                int64_t *perm = oracle_order(CLTOPK_INT32, v, n, smallest);
                size_t ks[] = {1, 2, 32, 33, 100, n};
                for (int ki = 0; ki < 6 && good; ki++) {
                    size_t k = ks[ki] > n ? n : ks[ki];
                    int32_t *ok_ = bmalloc((k + GUARD) * 4);
                    int64_t *oi = bmalloc((k + GUARD) * 8);
                    make_poison(CLTOPK_INT32, v, perm, k, k + GUARD, ok_, oi);
                    int want = 1 + (int)((rep + ki) % 3);
                    int st = cltopk_topk_packed(ctx, (cltopk_codec)codec, c.data, c.words, c.st,
                                                c.nst, k, smallest ? CLTOPK_SMALLEST : 0,
                                                CLTOPK_ALGO_AUTO, want & 1 ? ok_ : NULL,
                                                want & 2 ? oi : NULL);
                    calls++;
                    int32_t *pkk = bmalloc((k + GUARD) * 4);
                    int64_t *pii = bmalloc((k + GUARD) * 8);
                    make_poison(CLTOPK_INT32, v, perm, k, k + GUARD, pkk, pii);
                    if (st != CLTOPK_OK) {
                        good = 0;
                        snprintf(msg, sizeof msg, "status %d: %s", st, cltopk_last_error(ctx));
                    } else if (!compare_outputs(CLTOPK_INT32, v, n, perm, k, k + GUARD,
                                                want & 1 ? ok_ : NULL, want & 2 ? oi : NULL, pkk,
                                                pii, msg, sizeof msg)) {
                        good = 0;
                    }
                    if (!good)
                        diag_after("%s n = %zu k = %zu %s: %s", kind, n, k,
                                   smallest ? "smallest" : "largest", msg);
                    free(pkk);
                    free(pii);
                    free(ok_);
                    free(oi);
                }
                free(perm);
            }
            column_free(&c);
            free(v);
        }
        ok(good, "%s: cltopk_topk_packed on %s equals the oracle (%zu calls)", cname[codec],
           where, calls);
    }
    /* a corrupt column: CORRUPT and nothing written */
    uint32_t v[1000];
    for (int i = 0; i < 1000; i++)
        v[i] = (uint32_t)rng_next(&rng);
    column c;
    pack(0, v, 1000, &c);
    c.st[3]++;
    int32_t ok_[8];
    int64_t oi[8];
    for (int i = 0; i < 8; i++)
        ok_[i] = 99, oi[i] = 99;
    int st = cltopk_topk_packed(ctx, CLTOPK_CODEC_FOR, c.data, c.words, c.st, c.nst, 8, 0,
                                CLTOPK_ALGO_AUTO, ok_, oi);
    int untouched = 1;
    for (int i = 0; i < 8; i++)
        untouched &= ok_[i] == 99 && oi[i] == 99;
    ok(st == CLTOPK_ERR_CORRUPT && untouched, "cltopk_topk_packed on %s: a bad start is "
       "CORRUPT, nothing written (%s)", where, cltopk_last_error(ctx));
    c.st[3]--;
    st = cltopk_topk_packed(ctx, CLTOPK_CODEC_FOR, c.data, c.words, c.st, c.nst, 1001, 0,
                            CLTOPK_ALGO_AUTO, ok_, oi);
    ok(st == CLTOPK_ERR_K_RANGE, "cltopk_topk_packed on %s: k > count is K_RANGE", where);
    column_free(&c);
}

/* top-k fused with decoding (the SortReducer loading through LoadBitPack):
 * GPU-FOR columns with the reducer at WG = 128, CLTOPK_PACKED_FUSED=require so
 * that a fallback to decode-then-reduce would fail the test */
static void topk_fused(cltopk_context *ctx)
{
    char msg[512];
    static const char *const cfgs[] = {"B=4,WG=128", "B=16,WG=128"};
    setenv("CLTOPK_PACKED_FUSED", "require", 1);
    for (int cfg = 0; cfg < 2; cfg++) {
        setenv("CLTOPK_BITONIC", cfgs[cfg], 1);
        int good = 1;
        size_t calls = 0;
        for (int rep = 0; rep < (cfg ? 3 : 8) && good; rep++) {
            size_t n = rep < 4 ? (size_t[]){1, 511, 2049, 70001}[rep]
                               : 1 + rng_below(&rng, 200000);
            const char *kind = kinds[rng_below(&rng, 10)];
            uint32_t *v = bmalloc(n * 4);
            make(kind, n, (unsigned)rng_below(&rng, 33), v);
            column c;
            pack(0, v, n, &c);
            for (int smallest = 0; smallest < 2 && good; smallest++) {
                int64_t *perm = oracle_order(CLTOPK_INT32, v, n, smallest);
                size_t ks[] = {32, 1, 100};
                for (int ki = 0; ki < (cfg ? 1 : 3) && good; ki++) {
                    size_t k = ks[ki] > n ? n : ks[ki];
                    int32_t *ok_ = bmalloc((k + GUARD) * 4), *pk = bmalloc((k + GUARD) * 4);
                    int64_t *oi = bmalloc((k + GUARD) * 8), *pi = bmalloc((k + GUARD) * 8);
                    make_poison(CLTOPK_INT32, v, perm, k, k + GUARD, ok_, oi);
                    make_poison(CLTOPK_INT32, v, perm, k, k + GUARD, pk, pi);
                    int want = 1 + (int)((rep + ki + smallest) % 3);
                    int st = cltopk_topk_packed(ctx, CLTOPK_CODEC_FOR, c.data, c.words, c.st,
                                                c.nst, k, smallest ? CLTOPK_SMALLEST : 0,
                                                CLTOPK_ALGO_BITONIC, want & 1 ? ok_ : NULL,
                                                want & 2 ? oi : NULL);
                    calls++;
                    if (st != CLTOPK_OK) {
                        good = 0;
                        snprintf(msg, sizeof msg, "status %d: %s", st, cltopk_last_error(ctx));
                    } else if (!compare_outputs(CLTOPK_INT32, v, n, perm, k, k + GUARD,
                                                want & 1 ? ok_ : NULL, want & 2 ? oi : NULL,
                                                pk, pi, msg, sizeof msg)) {
                        good = 0;
                    }
                    if (!good)
                        diag_after("%s n = %zu k = %zu %s: %s", kind, n, k,
                                   smallest ? "smallest" : "largest", msg);
                    free(ok_);
                    free(pk);
                    free(oi);
                    free(pi);
                }
                free(perm);
            }
            column_free(&c);
            free(v);
        }
        ok(good, "FOR: top-k fused with decoding (SortReducer + LoadBitPack, %s) equals the "
           "oracle (%zu calls)", cfgs[cfg], calls);
    }
    unsetenv("CLTOPK_BITONIC");
    unsetenv("CLTOPK_PACKED_FUSED");
}

/* the two benchmark entry points: their contract (statuses, outputs set), not
 * their speed */
static void benchmarks(cltopk_context *ctx, const char *where, int is_cl)
{
    uint32_t v[3000];
    for (int i = 0; i < 3000; i++)
        v[i] = (uint32_t)rng_below(&rng, 1u << 12);
    column c;
    pack(0, v, 3000, &c);
    double med = -1, bw = -1;
    int st = cltopk_benchmark_unpack(ctx, CLTOPK_CODEC_FOR, c.data, c.words, c.st, c.nst, 2,
                                     &med, &bw);
    ok(st == CLTOPK_OK && med > 0 && bw > 0, "%s: benchmark_unpack times a valid column "
       "(status %d, median %g s, copy %g B/s)", where, st, med, bw);
    c.st[3]++;
    med = -1;
    st = cltopk_benchmark_unpack(ctx, CLTOPK_CODEC_FOR, c.data, c.words, c.st, c.nst, 2, &med,
                                 NULL);
    c.st[3]--;
    ok(st == CLTOPK_ERR_CORRUPT && med == -1 &&
           cltopk_benchmark_unpack(ctx, CLTOPK_CODEC_FOR, c.data, c.words, c.st, c.nst, 2, NULL,
                                   NULL) == CLTOPK_ERR_INVALID_ARGUMENT,
       "%s: benchmark_unpack: a bad start is CORRUPT (nothing set), median NULL is "
       "INVALID_ARGUMENT", where);
    double tp = -1, tu = -1;
    int fused = -1;
    st = cltopk_benchmark_topk_packed(ctx, CLTOPK_CODEC_FOR, c.data, c.words, c.st, c.nst, 32, 0,
                                      is_cl ? CLTOPK_ALGO_BITONIC : CLTOPK_ALGO_AUTO, 2, &tp,
                                      &fused, &tu);
    if (is_cl)
        ok(st == CLTOPK_OK && tp > 0 && tu > 0 && (fused == 0 || fused == 1),
           "%s: benchmark_topk_packed times packed and plain top-k (status %d, %g s, %g s, "
           "fused %d)", where, st, tp, tu, fused);
    else
        ok(st == CLTOPK_ERR_UNSUPPORTED && tp == -1,
           "%s: benchmark_topk_packed needs a device algorithm: UNSUPPORTED (status %d)", where,
           st);
    column_free(&c);
}

int main(void)
{
    watchdog(900);
    plan_lazy();
    rng_init(&rng, test_seed());
    if (cltopk_open(&cpu, "cpu") != CLTOPK_OK)
        bail("cannot open the cpu context: %s", cltopk_last_error(NULL));
    char why[256];
    if (!open_test_cl(&cl, why, sizeof why))
        diag("no OpenCL part: %s", why);
    api_edges();
    sizes_check();
    round_trips();
    hand_built();
    authors_streams();
    const char *env = getenv("CLTOPK_TEST_CORRUPTIONS");
    int ncorrupt = env ? atoi(env) : 3000;
    corruptions(cpu, "the CPU", ncorrupt);
    topk_packed(cpu, "the CPU");
    benchmarks(cpu, "the CPU", 0);
    if (cl) {
        corruptions(cl, "OpenCL", ncorrupt / 10);
        topk_packed(cl, "OpenCL");
        topk_fused(cl);
        benchmarks(cl, "OpenCL", 1);
    } else {
        skip_block(13, "no OpenCL device (%s)", why);
    }
    cltopk_close(cpu);
    cltopk_close(cl);
    return tap_done();
}
