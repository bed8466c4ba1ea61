/* bitpack.c - the CPU side of the bit-packed columns (docs/FORMAT.md): the
 * encoder, the strict validator and the decoder with one unpacker per width.
 *
 * GPU-FOR   [128, 4, count, first] then blocks [ref][w0|w1<<8|w2<<16|w3<<24][mb0..mb3],
 *           miniblock j = 32 values minus ref, LSB-first, exactly wj words.
 * GPU-DFOR  the same over tile-local deltas; each tile of 4 blocks is preceded
 *           by one word holding its first value.
 * GPU-RFOR  [512, 2, count, first] then per tile of 512 values
 *           [nruns | vw<<16 | lw<<24][vref][lref][values: ceil(nruns*vw/32) words]
 *           [lengths: ceil(nruns*lw/32) words].
 * All arithmetic is modulo 2^32 (int32 and uint32 columns alike). */
#include "codec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline uint32_t bits_needed(uint32_t v)
{
    return v ? 32u - (uint32_t)__builtin_clz(v) : 0u;
}

static inline uint32_t mask_of(uint32_t b)
{
    return (uint32_t)((1ull << b) - 1ull);
}

/* value i (width b) of an LSB-first bit string; reads only the words that hold it */
static inline uint32_t get_bits(const uint32_t *in, size_t i, uint32_t b)
{
    if (b == 0)
        return 0;
    size_t bit = i * b, w = bit >> 5;
    unsigned sh = (unsigned)(bit & 31);
    uint32_t x = in[w] >> sh;
    if (sh + b > 32)
        x |= in[w + 1] << (32 - sh);
    return x & mask_of(b);
}

/* append n values minus ref, width b, LSB-first; returns words written */
static size_t put_bits(const uint32_t *v, size_t n, uint32_t ref, uint32_t b, uint32_t *out)
{
    uint64_t acc = 0;
    unsigned nb = 0;
    size_t w = 0;
    if (b == 0)
        return 0;
    for (size_t i = 0; i < n; i++) {
        acc |= (uint64_t)((v[i] - ref) & mask_of(b)) << nb;
        nb += b;
        while (nb >= 32) {
            out[w++] = (uint32_t)acc;
            acc >>= 32;
            nb -= 32;
        }
    }
    if (nb)
        out[w++] = (uint32_t)acc;
    return w;
}

/* the reference of a set: the signed or the unsigned minimum, whichever leaves
 * the narrower range (the decoder is agnostic: it adds modulo 2^32) */
static uint32_t choose_ref(const uint32_t *v, size_t n)
{
    uint32_t umin = UINT32_MAX, umax = 0;
    int32_t smin = INT32_MAX, smax = INT32_MIN;
    for (size_t i = 0; i < n; i++) {
        uint32_t x = v[i];
        int32_t y = (int32_t)x;
        umin = x < umin ? x : umin;
        umax = x > umax ? x : umax;
        smin = y < smin ? y : smin;
        smax = y > smax ? y : smax;
    }
    uint32_t ur = umax - umin, sr = (uint32_t)smax - (uint32_t)smin;
    return sr < ur ? (uint32_t)smin : umin;
}

static uint32_t width_of(const uint32_t *v, size_t n, uint32_t ref)
{
    uint32_t m = 0;
    for (size_t i = 0; i < n; i++)
        m |= v[i] - ref;
    return bits_needed(m);
}

/* ------------------------------------------------------------ the bounds */

size_t cltopk_codec_starts(cltopk_codec codec, size_t n)
{
    if (n > UINT32_MAX)
        return 0;
    switch (codec) {
    case CLTOPK_CODEC_FOR:
    case CLTOPK_CODEC_DFOR: return (n + 127) / 128 + 1;
    case CLTOPK_CODEC_RFOR: return (n + 511) / 512 + 1;
    default: return 0;
    }
}

size_t cltopk_codec_bound(cltopk_codec codec, size_t n)
{
    if (n > UINT32_MAX)
        return 0;
    size_t nb = (n + 127) / 128, nt = (n + 511) / 512;
    switch (codec) {
    case CLTOPK_CODEC_FOR: return 4 + nb * 130;
    case CLTOPK_CODEC_DFOR: return 4 + nb * 130 + nt;
    /* 512 runs of 32 bits; lengths then all 1 (width 0); fewer runs have
     * lengths whose range is below 512 (width <= 9) */
    case CLTOPK_CODEC_RFOR: return 4 + nt * (3 + 512 + 144);
    default: return 0;
    }
}

/* -------------------------------------------------------------- encoder */

typedef struct {
    uint32_t ref, widths, words;  /* FOR/DFOR block; RFOR: ref = value ref */
    uint32_t lref, hdr;           /* RFOR only */
} blockmeta;

/* 128 values of block b (FOR), the last value repeated past n */
static void for_values(const uint32_t *v, size_t n, size_t b, uint32_t *x)
{
    size_t base = b * 128;
    for (size_t i = 0; i < 128; i++)
        x[i] = base + i < n ? v[base + i] : v[n - 1];
}

/* deltas of tile t (DFOR): d[0] = 0, d[i] = t[i] - t[i-1]; past n: 0 */
static void dfor_deltas(const uint32_t *v, size_t n, size_t t, uint32_t *d)
{
    size_t base = t * 512;
    d[0] = 0;
    for (size_t i = 1; i < 512; i++)
        d[i] = base + i < n ? v[base + i] - v[base + i - 1] : 0;
}

static void block_meta(const uint32_t *x, blockmeta *m)
{
    m->ref = choose_ref(x, 128);
    m->widths = 0;
    m->words = 2;
    for (unsigned j = 0; j < 4; j++) {
        uint32_t w = width_of(x + 32 * j, 32, m->ref);
        m->widths |= w << (8 * j);
        m->words += w;
    }
}

static void block_write(const uint32_t *x, const blockmeta *m, uint32_t *out)
{
    out[0] = m->ref;
    out[1] = m->widths;
    size_t o = 2;
    for (unsigned j = 0; j < 4; j++)
        o += put_bits(x + 32 * j, 32, m->ref, (m->widths >> (8 * j)) & 255, out + o);
}

/* runs of tile t (RFOR); returns their number */
static uint32_t rfor_runs(const uint32_t *v, size_t n, size_t t, uint32_t *val, uint32_t *len)
{
    size_t base = t * 512, L = n - base < 512 ? n - base : 512;
    uint32_t r = 0;
    for (size_t i = 0; i < L; i++) {
        if (i && v[base + i] == val[r - 1]) {
            len[r - 1]++;
        } else {
            val[r] = v[base + i];
            len[r] = 1;
            r++;
        }
    }
    return r;
}

static void rfor_meta(const uint32_t *val, const uint32_t *len, uint32_t nr, blockmeta *m)
{
    m->ref = choose_ref(val, nr);
    uint32_t lmin = UINT32_MAX;
    for (uint32_t i = 0; i < nr; i++)
        lmin = len[i] < lmin ? len[i] : lmin;
    m->lref = lmin;
    uint32_t vw = width_of(val, nr, m->ref), lw = width_of(len, nr, lmin);
    m->hdr = nr | vw << 16 | lw << 24;
    m->words = 3 + (uint32_t)(((uint64_t)nr * vw + 31) / 32 + ((uint64_t)nr * lw + 31) / 32);
}

int cltopk_codec_encode(cltopk_codec codec, const uint32_t *v, size_t n, uint32_t *data,
                        size_t data_cap, size_t *data_words, uint32_t *starts, size_t *nstarts,
                        size_t *need)
{
    size_t nb = codec == CLTOPK_CODEC_RFOR ? (n + 511) / 512 : (n + 127) / 128;
    blockmeta *m = malloc((nb ? nb : 1) * sizeof *m);
    if (!m)
        return CLTOPK_ERR_NO_MEMORY;
    long long nbl = (long long)nb;
    int oom = 0;
    if (codec == CLTOPK_CODEC_FOR) {
#pragma omp parallel for schedule(static)
        for (long long b = 0; b < nbl; b++) {
            uint32_t x[128];
            for_values(v, n, (size_t)b, x);
            block_meta(x, &m[b]);
        }
    } else if (codec == CLTOPK_CODEC_DFOR) {
        long long nt = (nbl + 3) / 4;
#pragma omp parallel for schedule(static)
        for (long long t = 0; t < nt; t++) {
            uint32_t d[512];
            dfor_deltas(v, n, (size_t)t, d);
            for (long long j = 0; j < 4 && 4 * t + j < nbl; j++)
                block_meta(d + 128 * j, &m[4 * t + j]);
        }
    } else {
#pragma omp parallel for schedule(static)
        for (long long t = 0; t < nbl; t++) {
            uint32_t val[512], len[512];
            uint32_t nr = rfor_runs(v, n, (size_t)t, val, len);
            rfor_meta(val, len, nr, &m[t]);
        }
    }
    /* offsets: header, then (DFOR) one first-value word before each tile */
    size_t pos = 4;
    for (size_t b = 0; b < nb; b++) {
        if (codec == CLTOPK_CODEC_DFOR && b % 4 == 0)
            pos++;
        starts[b] = (uint32_t)pos;
        pos += m[b].words;
    }
    if (pos > data_cap || pos > UINT32_MAX) {
        *need = pos;
        free(m);
        return CLTOPK_ERR_INVALID_ARGUMENT;
    }
    starts[nb] = (uint32_t)pos;
    data[0] = codec == CLTOPK_CODEC_RFOR ? CODEC_TILE : CODEC_FOR_BLOCK;
    data[1] = codec == CLTOPK_CODEC_RFOR ? CODEC_RFOR_STREAMS : CODEC_MINIBLOCKS;
    data[2] = (uint32_t)n;
    data[3] = n ? v[0] : 0;
    if (codec == CLTOPK_CODEC_FOR) {
#pragma omp parallel for schedule(static)
        for (long long b = 0; b < nbl; b++) {
            uint32_t x[128];
            for_values(v, n, (size_t)b, x);
            block_write(x, &m[b], data + starts[b]);
        }
    } else if (codec == CLTOPK_CODEC_DFOR) {
        long long nt = (nbl + 3) / 4;
#pragma omp parallel for schedule(static)
        for (long long t = 0; t < nt; t++) {
            uint32_t d[512];
            dfor_deltas(v, n, (size_t)t, d);
            data[starts[4 * t] - 1] = v[t * 512];
            for (long long j = 0; j < 4 && 4 * t + j < nbl; j++)
                block_write(d + 128 * j, &m[4 * t + j], data + starts[4 * t + j]);
        }
    } else {
#pragma omp parallel for schedule(static)
        for (long long t = 0; t < nbl; t++) {
            uint32_t val[512], len[512];
            uint32_t nr = rfor_runs(v, n, (size_t)t, val, len);
            uint32_t *o = data + starts[t];
            o[0] = m[t].hdr;
            o[1] = m[t].ref;
            o[2] = m[t].lref;
            size_t w = 3 + put_bits(val, nr, m[t].ref, (m[t].hdr >> 16) & 255, o + 3);
            put_bits(len, nr, m[t].lref, m[t].hdr >> 24, o + w);
        }
    }
    (void)oom;
    *data_words = pos;
    *nstarts = nb + 1;
    free(m);
    return CLTOPK_OK;
}

/* ------------------------------------------------------------ validator */

#define BAD(...) (snprintf(err, errlen, __VA_ARGS__), CLTOPK_ERR_CORRUPT)

/* check one RFOR tile's runs: every length in 1..L, their sum L; 0 or the run
 * at fault + 1 (*what tells the defect) */
static size_t rfor_check_tile(const uint32_t *o, uint32_t L, int *what)
{
    uint32_t nr = o[0] & 0x3FF, vw = (o[0] >> 16) & 255, lw = o[0] >> 24;
    const uint32_t *lp = o + 3 + ((uint64_t)nr * vw + 31) / 32;
    uint64_t sum = 0;
    for (uint32_t r = 0; r < nr; r++) {
        uint64_t len = (uint64_t)o[2] + get_bits(lp, r, lw);
        if (len == 0 || len > L) {
            *what = 1;
            return (size_t)r + 1;
        }
        sum += len;
        if (sum > L) {
            *what = 2;
            return (size_t)r + 1;
        }
    }
    if (sum != L) {
        *what = 3;
        return nr ? nr : 1;
    }
    return 0;
}

int cltopk_codec_validate(cltopk_codec codec, const uint32_t *data, size_t data_words,
                          const uint32_t *starts, size_t nstarts, cltopk_packed_column *col, char *err,
                          size_t errlen)
{
    int rfor = codec == CLTOPK_CODEC_RFOR, dfor = codec == CLTOPK_CODEC_DFOR;
    const char *name = rfor ? "GPU-RFOR" : dfor ? "GPU-DFOR" : "GPU-FOR";
    uint32_t h0 = rfor ? CODEC_TILE : CODEC_FOR_BLOCK;
    uint32_t h1 = rfor ? CODEC_RFOR_STREAMS : CODEC_MINIBLOCKS;
    if (data_words < 4)
        return BAD("%s column: data holds %zu words, the header alone takes 4", name,
                   data_words);
    if (data[0] != h0 || data[1] != h1)
        return BAD("%s column: header words 0 and 1 are %u and %u, not %u and %u (wrong "
                   "codec, or not a packed column)", name, data[0], data[1], h0, h1);
    uint32_t count = data[2];
    size_t nb = rfor ? ((size_t)count + 511) / 512 : ((size_t)count + 127) / 128;
    /* FOR and DFOR: the last 512-value tile may be padded to 4 blocks, as the
     * authors' encoders write it; the padding blocks are checked as any other
     * block but never decoded */
    size_t nmax = rfor ? nb : ((size_t)count + 511) / 512 * 4;
    if (nstarts < nb + 1 || nstarts > nmax + 1) {
        if (nmax == nb)
            return BAD("%s column: the header says %u values, which take %zu blocks and %zu "
                       "block_starts entries; %zu were given", name, count, nb, nb + 1,
                       nstarts);
        return BAD("%s column: the header says %u values, which take %zu blocks (%zu with the "
                   "padding of the last 512-value tile) and %zu to %zu block_starts entries; "
                   "%zu were given", name, count, nb, nmax, nb + 1, nmax + 1, nstarts);
    }
    size_t nall = nstarts - 1;  /* blocks, padding included */
    if (starts[nall] != data_words)
        return BAD("%s column: block_starts[%zu] (the end) is %u, but data holds %zu words",
                   name, nall, starts[nall], data_words);
    /* each block begins where the one before it ends (plus the first-value word
     * of a DFOR tile): the starts are checked against the widths as we go */
    size_t expect = 4;
    for (size_t b = 0; b < nall; b++) {
        if (dfor && b % 4 == 0)
            expect++;
        size_t s = starts[b];
        if (s != expect)
            return BAD("%s column: block_starts[%zu] is %zu, but block %zu %s at word %zu",
                       name, b, s, b, b ? "must begin where the one before it ends," :
                       "must begin after the header,", expect);
        size_t hw = rfor ? 3 : 2, size;
        if (s + hw > data_words)
            return BAD("%s column: block %zu at word %zu needs %zu header words, past the end "
                       "of data (%zu words)", name, b, s, hw, data_words);
        uint32_t w = data[s + 1];
        if (rfor) {
            uint32_t h = data[s], nr = h & 0x3FF, vw = (h >> 16) & 255, lw = h >> 24;
            uint32_t L = b + 1 < nb ? 512u : count - (uint32_t)(b * 512);
            if (h & 0xFC00u)
                return BAD("%s column: tile %zu: reserved bits 10..15 of its first word "
                           "(0x%08x) are set", name, b, h);
            if (nr == 0 || nr > L)
                return BAD("%s column: tile %zu holds %u runs; a tile of %u values has 1 to "
                           "%u", name, b, nr, L, L);
            if (vw > 32 || lw > 32)
                return BAD("%s column: tile %zu: value width %u / length width %u; widths "
                           "are 0..32", name, b, vw, lw);
            size = 3 + ((uint64_t)nr * vw + 31) / 32 + ((uint64_t)nr * lw + 31) / 32;
        } else {
            size = 2;
            for (unsigned j = 0; j < 4; j++) {
                uint32_t wj = (w >> (8 * j)) & 255;
                if (wj > 32)
                    return BAD("%s column: block %zu miniblock %u has width %u; widths are "
                               "0..32", name, b, j, wj);
                size += wj;
            }
            /* a block of widths 0 as the authors' encoders write it: one unused
             * word (0) per miniblock; the next start tells which form it is */
            size_t next = (size_t)starts[b + 1] - (dfor && (b + 1) % 4 == 0 && b + 1 < nall);
            if (w == 0 && next == s + 6 && s + 6 <= data_words) {
                for (unsigned j = 0; j < 4; j++)
                    if (data[s + 2 + j] != 0)
                        return BAD("%s column: block %zu has widths 0 and 4 unused words, but "
                                   "word %zu of them is 0x%08x, not 0", name, b, s + 2 + j,
                                   data[s + 2 + j]);
                size = 6;
            }
        }
        if (s + size > data_words)
            return BAD("%s column: block %zu at word %zu takes %zu words by its widths, past "
                       "the end of data (%zu words)", name, b, s, size, data_words);
        expect = s + size;
    }
    if (expect != data_words)
        return BAD("%s column: the blocks end at word %zu, but block_starts and data say %zu",
                   name, expect, data_words);
    if (rfor && nb) {
        /* the run lengths of every tile: 1..L each, summing to L */
        size_t bad_tile = SIZE_MAX;
        long long nbl = (long long)nb;
#pragma omp parallel for schedule(static) reduction(min : bad_tile)
        for (long long t = 0; t < nbl; t++) {
            uint32_t L = t + 1 < nbl ? 512u : count - (uint32_t)(t * 512);
            int what;
            if (rfor_check_tile(data + starts[t], L, &what))
                bad_tile = (size_t)t < bad_tile ? (size_t)t : bad_tile;
        }
        if (bad_tile != SIZE_MAX) {
            uint32_t L = bad_tile + 1 < nb ? 512u : count - (uint32_t)(bad_tile * 512);
            int what = 0;
            size_t r = rfor_check_tile(data + starts[bad_tile], L, &what) - 1;
            return BAD("%s column: tile %zu: %s (run %zu; the tile holds %u values)", name,
                       bad_tile,
                       what == 1 ? "a run length is 0 or longer than the tile"
                       : what == 2 ? "the run lengths add up past the tile's end"
                                   : "the run lengths add up to less than the tile",
                       r, L);
        }
    }
    /* header word 3: the first value */
    if (count) {
        const uint32_t *o = data + starts[0];
        uint32_t first;
        if (dfor)
            first = o[-1];
        else if (rfor)
            first = o[1] + get_bits(o + 3, 0, (o[0] >> 16) & 255);
        else
            first = o[0] + get_bits(o + 2, 0, o[1] & 255);
        if (first != data[3])
            return BAD("%s column: header word 3 (the first value) is %u, but the first "
                       "block decodes to %u", name, data[3], first);
    }
    col->codec = codec;
    col->count = count;
    col->nblocks = nb;
    col->data = data;
    col->data_words = starts[nb];  /* the decoded blocks end there (padding follows) */
    col->starts = starts;
    return CLTOPK_OK;
}

/* ---------------------------------------------------------------- decoder */

/* 32 values of width b: b words in, one unpacker per width (b a constant) */
static inline __attribute__((always_inline)) void unpack32_w(const uint32_t *in, uint32_t ref,
                                                             uint32_t *out, const unsigned b)
{
    if (b == 0) {
        for (unsigned i = 0; i < 32; i++)
            out[i] = ref;
        return;
    }
#pragma GCC unroll 32
    for (unsigned i = 0; i < 32; i++) {
        const unsigned bit = i * b, w = bit >> 5, sh = bit & 31;
        uint32_t x = in[w] >> sh;
        if (sh + b > 32)
            x |= in[w + 1] << ((32 - sh) & 31);
        out[i] = ref + (x & mask_of(b));
    }
}

#define UNPACK_CASE(B) case B: unpack32_w(in, ref, out, B); break;
static void unpack32(const uint32_t *in, uint32_t ref, uint32_t *out, unsigned b)
{
    switch (b) {
    UNPACK_CASE(0) UNPACK_CASE(1) UNPACK_CASE(2) UNPACK_CASE(3) UNPACK_CASE(4)
    UNPACK_CASE(5) UNPACK_CASE(6) UNPACK_CASE(7) UNPACK_CASE(8) UNPACK_CASE(9)
    UNPACK_CASE(10) UNPACK_CASE(11) UNPACK_CASE(12) UNPACK_CASE(13) UNPACK_CASE(14)
    UNPACK_CASE(15) UNPACK_CASE(16) UNPACK_CASE(17) UNPACK_CASE(18) UNPACK_CASE(19)
    UNPACK_CASE(20) UNPACK_CASE(21) UNPACK_CASE(22) UNPACK_CASE(23) UNPACK_CASE(24)
    UNPACK_CASE(25) UNPACK_CASE(26) UNPACK_CASE(27) UNPACK_CASE(28) UNPACK_CASE(29)
    UNPACK_CASE(30) UNPACK_CASE(31) UNPACK_CASE(32)
    default: break; /* the validator admits 0..32 only */
    }
}

static void decode_block(const uint32_t *blk, uint32_t *out)
{
    uint32_t ref = blk[0], w = blk[1];
    const uint32_t *in = blk + 2;
    for (unsigned j = 0; j < 4; j++) {
        unsigned b = (w >> (8 * j)) & 255;
        unpack32(in, ref, out + 32 * j, b);
        in += b;
    }
}

void cltopk_codec_decode_cpu(const cltopk_packed_column *c, uint32_t *out)
{
    size_t n = c->count, nb = c->nblocks;
    long long nbl = (long long)nb;
    if (c->codec == CLTOPK_CODEC_FOR) {
#pragma omp parallel for schedule(static)
        for (long long b = 0; b < nbl; b++) {
            size_t base = (size_t)b * 128;
            if (base + 128 <= n) {
                decode_block(c->data + c->starts[b], out + base);
            } else {
                uint32_t tmp[128];
                decode_block(c->data + c->starts[b], tmp);
                memcpy(out + base, tmp, (n - base) * 4);
            }
        }
    } else if (c->codec == CLTOPK_CODEC_DFOR) {
        long long nt = (nbl + 3) / 4;
#pragma omp parallel for schedule(static)
        for (long long t = 0; t < nt; t++) {
            uint32_t tmp[512];
            size_t base = (size_t)t * 512, L = n - base < 512 ? n - base : 512;
            long long nbt = nbl - 4 * t < 4 ? nbl - 4 * t : 4;
            for (long long j = 0; j < nbt; j++)
                decode_block(c->data + c->starts[4 * t + j], tmp + 128 * j);
            uint32_t acc = c->data[c->starts[4 * t] - 1];
            out[base] = acc;
            for (size_t i = 1; i < L; i++) {
                acc += tmp[i];
                out[base + i] = acc;
            }
        }
    } else {
#pragma omp parallel for schedule(static)
        for (long long t = 0; t < nbl; t++) {
            const uint32_t *o = c->data + c->starts[t];
            uint32_t nr = o[0] & 0x3FF, vw = (o[0] >> 16) & 255, lw = o[0] >> 24;
            const uint32_t *vp = o + 3, *lp = vp + ((uint64_t)nr * vw + 31) / 32;
            uint32_t *dst = out + (size_t)t * 512;
            for (uint32_t r = 0; r < nr; r++) {
                uint32_t val = o[1] + get_bits(vp, r, vw);
                uint32_t len = o[2] + get_bits(lp, r, lw);
                for (uint32_t i = 0; i < len; i++)
                    *dst++ = val;
            }
        }
    }
}
