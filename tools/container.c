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

int packed_parse(const unsigned char *buf, size_t len, packed_file *pf, char *why, size_t whylen)
{
    memset(pf, 0, sizeof *pf);
    if (len < PACKED_HEADER || memcmp(buf, PACKED_MAGIC, 8)) {
        snprintf(why, whylen, "not a packed column (no %s header)", PACKED_MAGIC);
        return -1;
    }
    uint32_t version = rd32(buf + 8), codec = rd32(buf + 12);
    uint64_t count = rd64(buf + 16), words = rd64(buf + 24), nst = rd64(buf + 32);
    if (version != PACKED_VERSION) {
        snprintf(why, whylen, "container version %u; this cltopk reads version %u", version,
                 PACKED_VERSION);
        return -1;
    }
    if (codec > CLTOPK_CODEC_RFOR) {
        snprintf(why, whylen, "unknown codec %u", codec);
        return -1;
    }
    size_t body = len - PACKED_HEADER;
    if (words > body / 4 || nst > body / 4 || (words + nst) * 4 != body) {
        snprintf(why, whylen, "the header announces %llu + %llu words, the file holds %zu bytes "
                 "after the header (truncated or damaged)", (unsigned long long)words,
                 (unsigned long long)nst, body);
        return -1;
    }
    if (words < 4 || rd32(buf + PACKED_HEADER + 8) != count) {
        snprintf(why, whylen, "the container's count (%llu) and the column's header disagree",
                 (unsigned long long)count);
        return -1;
    }
    pf->data = malloc(words ? words * 4 : 1);
    pf->starts = malloc(nst ? nst * 4 : 1);
    if (!pf->data || !pf->starts) {
        packed_free(pf);
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < words; i++)
        pf->data[i] = rd32(buf + PACKED_HEADER + 4 * i);
    for (size_t i = 0; i < nst; i++)
        pf->starts[i] = rd32(buf + PACKED_HEADER + 4 * (words + i));
    pf->codec = (cltopk_codec)codec;
    pf->count = count;
    pf->data_words = (size_t)words;
    pf->nstarts = (size_t)nst;
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
