/* container.c - the packed-column file (see container.h). */
#include "container.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t rd32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t rd64(const unsigned char *p)
{
    return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

static void wr32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)v, p[1] = (unsigned char)(v >> 8), p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
}

static void wr64(unsigned char *p, uint64_t v)
{
    wr32(p, (uint32_t)v);
    wr32(p + 4, (uint32_t)(v >> 32));
}

/* values per block_starts entry: blocks of 128 (FOR, DFOR), tiles of 512 (RFOR) */
static uint64_t block_values(uint32_t codec)
{
    return codec == CLTOPK_CODEC_RFOR ? 512 : 128;
}

/* the most data words a block can take: FOR 2 + 4 * 32 (+ a tile's first value
 * for DFOR); RFOR 3 + 512 values and 512 lengths of 32 bits */
static uint64_t block_max_words(uint32_t codec)
{
    return codec == CLTOPK_CODEC_RFOR ? 3 + 1024 : 131;
}

int packed_check_header(const unsigned char *h, size_t have, long long file_len,
                        packed_header *ph, char *why, size_t whylen)
{
    if (have < 8 || memcmp(h, PACKED_MAGIC, 8)) {
        snprintf(why, whylen, "not a packed column (no %s header)", PACKED_MAGIC);
        return -1;
    }
    if (have < PACKED_HEADER) {
        snprintf(why, whylen, "corrupt packed column: truncated in its %u-byte header (%zu "
                 "bytes)", PACKED_HEADER, have);
        return -1;
    }
    ph->version = rd32(h + 8);
    ph->codec = rd32(h + 12);
    ph->count = rd64(h + 16);
    ph->data_words = rd64(h + 24);
    ph->nstarts = rd64(h + 32);
    if (ph->version != PACKED_VERSION) {
        snprintf(why, whylen, "container version %u; this cltopk reads version %u", ph->version,
                 PACKED_VERSION);
        return -1;
    }
    if (ph->codec > CLTOPK_CODEC_RFOR) {
        snprintf(why, whylen, "corrupt packed column: unknown codec %u", ph->codec);
        return -1;
    }
    if (ph->count > UINT32_MAX) {
        snprintf(why, whylen, "corrupt packed column: a count of %llu values (a column holds "
                 "fewer than 2^32)", (unsigned long long)ph->count);
        return -1;
    }
    uint64_t per = block_values(ph->codec), nblocks = (ph->count + per - 1) / per;
    if (ph->nstarts != nblocks + 1) {
        snprintf(why, whylen, "corrupt packed column: %llu values take %llu block starts, the "
                 "header announces %llu", (unsigned long long)ph->count,
                 (unsigned long long)(nblocks + 1), (unsigned long long)ph->nstarts);
        return -1;
    }
    uint64_t most = 4 + nblocks * block_max_words(ph->codec);
    if (ph->data_words < 4 || ph->data_words > most) {
        snprintf(why, whylen, "corrupt packed column: %llu data words for %llu values (%s "
                 "takes 4 to %llu)", (unsigned long long)ph->data_words,
                 (unsigned long long)ph->count, ph->data_words < 4 ? "its header" : "a column",
                 (unsigned long long)most);
        return -1;
    }
    /* data_words and nstarts are below 2^38 here: no overflow */
    unsigned long long size = PACKED_HEADER + 4 * (ph->data_words + ph->nstarts);
    if (file_len >= 0 && (unsigned long long)file_len != size) {
        snprintf(why, whylen, "corrupt packed column: the header announces %llu + %llu words "
                 "(%llu bytes with the header), the file holds %lld bytes (truncated or "
                 "damaged)", (unsigned long long)ph->data_words,
                 (unsigned long long)ph->nstarts, size, file_len);
        return -1;
    }
    return 0;
}

/* the container's count against the column's own header (data word 2) */
static int check_count(const packed_header *ph, uint32_t word2, char *why, size_t whylen)
{
    if (word2 != ph->count) {
        snprintf(why, whylen, "corrupt packed column: the container's count (%llu) and the "
                 "column's header (%u) disagree", (unsigned long long)ph->count, word2);
        return -1;
    }
    return 0;
}

int packed_parse(const unsigned char *buf, size_t len, packed_file *pf, char *why, size_t whylen)
{
    packed_header ph;
    memset(pf, 0, sizeof *pf);
    if (packed_check_header(buf, len, (long long)len, &ph, why, whylen))
        return -1;
    size_t words = (size_t)ph.data_words, nst = (size_t)ph.nstarts;
    if (check_count(&ph, rd32(buf + PACKED_HEADER + 8), why, whylen))
        return -1;
    pf->data = malloc(words * 4);
    pf->starts = malloc(nst * 4);
    if (!pf->data || !pf->starts) {
        packed_free(pf);
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < words; i++)
        pf->data[i] = rd32(buf + PACKED_HEADER + 4 * i);
    for (size_t i = 0; i < nst; i++)
        pf->starts[i] = rd32(buf + PACKED_HEADER + 4 * (words + i));
    pf->codec = (cltopk_codec)ph.codec;
    pf->count = ph.count;
    pf->data_words = words;
    pf->nstarts = nst;
    return 0;
}

/* Read n little-endian words into *out (malloc'd, host order).  With known
 * (a regular file of the right size) the buffer is allocated at once; on a
 * stream it grows with the words that arrive, so that a header announcing more
 * than is sent costs no more memory than was sent.  0, PACKED_BAD (the input
 * ended early), PACKED_IO or PACKED_NOMEM; *got: the words read. */
static int read_words(FILE *f, uint64_t n, int known, uint32_t **out, uint64_t *got)
{
    *out = NULL;
    *got = 0;
    if (n > SIZE_MAX / 4)
        return PACKED_NOMEM;
    size_t cap = known ? (size_t)n : (n < 65536 ? (size_t)n : 65536), have = 0;
    uint32_t *w = malloc(cap ? cap * 4 : 4);
    if (!w)
        return PACKED_NOMEM;
    while (have < n) {
        if (have == cap) {
            size_t ncap = cap <= (size_t)n / 2 ? cap * 2 : (size_t)n;
            uint32_t *nw = realloc(w, ncap * 4);
            if (!nw) {
                free(w);
                return PACKED_NOMEM;
            }
            w = nw;
            cap = ncap;
        }
        size_t want = cap - have, r = fread(w + have, 4, want, f);
        have += r;
        if (r < want) { /* the end of the input, or an error */
            int st = ferror(f) ? PACKED_IO : PACKED_BAD;
            free(w);
            *got = have;
            return st;
        }
    }
    for (size_t i = 0; i < have; i++)
        w[i] = rd32((const unsigned char *)&w[i]);
    *out = w;
    *got = have;
    return 0;
}

int packed_read(FILE *f, long long file_len, packed_file *pf, char *why, size_t whylen)
{
    unsigned char h[PACKED_HEADER];
    packed_header ph;
    memset(pf, 0, sizeof *pf);
    /* the magic first: a file of zeros (or no end) is refused after 8 bytes */
    size_t have = fread(h, 1, 8, f);
    if (have == 8 && !memcmp(h, PACKED_MAGIC, 8))
        have += fread(h + 8, 1, PACKED_HEADER - 8, f);
    if (ferror(f)) {
        snprintf(why, whylen, "read error");
        return PACKED_IO;
    }
    if (packed_check_header(h, have, file_len, &ph, why, whylen))
        return PACKED_BAD;
    uint64_t got;
    int st = read_words(f, ph.data_words, file_len >= 0, &pf->data, &got);
    if (st == 0)
        st = read_words(f, ph.nstarts, file_len >= 0, &pf->starts, &got);
    if (st == PACKED_BAD) {
        packed_free(pf);
        snprintf(why, whylen, "corrupt packed column: truncated: the header announces %llu + "
                 "%llu words, the input ends before them", (unsigned long long)ph.data_words,
                 (unsigned long long)ph.nstarts);
        return PACKED_BAD;
    }
    if (st) {
        packed_free(pf);
        snprintf(why, whylen, st == PACKED_IO ? "read error" : "out of memory");
        return st;
    }
    /* a stream must end where the header says (a regular file's size was checked) */
    if (file_len < 0) {
        int c = fgetc(f);
        if (c != EOF || ferror(f)) {
            packed_free(pf);
            if (c == EOF) {
                snprintf(why, whylen, "read error");
                return PACKED_IO;
            }
            snprintf(why, whylen, "corrupt packed column: the input goes on after the %llu + "
                     "%llu words the header announces", (unsigned long long)ph.data_words,
                     (unsigned long long)ph.nstarts);
            return PACKED_BAD;
        }
    }
    if (check_count(&ph, pf->data[2], why, whylen)) {
        packed_free(pf);
        return PACKED_BAD;
    }
    pf->codec = (cltopk_codec)ph.codec;
    pf->count = ph.count;
    pf->data_words = (size_t)ph.data_words;
    pf->nstarts = (size_t)ph.nstarts;
    return 0;
}

unsigned char *packed_build(const packed_file *pf, size_t *len)
{
    size_t n = PACKED_HEADER + 4 * (pf->data_words + pf->nstarts);
    unsigned char *b = malloc(n);
    if (!b)
        return NULL;
    memcpy(b, PACKED_MAGIC, 8);
    wr32(b + 8, PACKED_VERSION);
    wr32(b + 12, (uint32_t)pf->codec);
    wr64(b + 16, pf->count);
    wr64(b + 24, pf->data_words);
    wr64(b + 32, pf->nstarts);
    for (size_t i = 0; i < pf->data_words; i++)
        wr32(b + PACKED_HEADER + 4 * i, pf->data[i]);
    for (size_t i = 0; i < pf->nstarts; i++)
        wr32(b + PACKED_HEADER + 4 * (pf->data_words + i), pf->starts[i]);
    *len = n;
    return b;
}

void packed_free(packed_file *pf)
{
    free(pf->data);
    free(pf->starts);
    pf->data = pf->starts = NULL;
}
