/* codec.h - bit-packed columns (GPU-FOR, GPU-DFOR, GPU-RFOR): what cpu/bitpack.c
 * and lib/codec.c share.  docs/FORMAT.md describes the layouts. */
#ifndef CLTOPK_CODEC_H
#define CLTOPK_CODEC_H

#include "internal.h"

/* header word 0 and 1 of each codec */
#define CODEC_FOR_BLOCK 128u   /* values per block (FOR, DFOR)            */
#define CODEC_MINIBLOCKS 4u    /* miniblocks per block                    */
#define CODEC_TILE 512u        /* DFOR delta tile and RFOR tile, in values */
#define CODEC_RFOR_STREAMS 2u  /* RFOR header word 1: values and lengths   */

/* A column that cltopk_codec_validate accepted. */
typedef struct {
    cltopk_codec codec;
    uint32_t count;
    size_t nblocks;          /* blocks (FOR, DFOR) or tiles (RFOR) to decode:
                              * ceil(count/128) or ceil(count/512); padding
                              * blocks of the last tile (FOR, DFOR) follow */
    const uint32_t *data;
    size_t data_words;       /* == block_starts[nblocks]: the decoded blocks' end */
    const uint32_t *starts;  /* nblocks + 1 entries used */
} cltopk_packed_column;

/* Check everything docs/FORMAT.md requires.  CLTOPK_OK and *col filled, or
 * CLTOPK_ERR_CORRUPT with what is wrong in err.  Reads only data[0..data_words)
 * and starts[0..nstarts). */
CLTOPK_INTERNAL int cltopk_codec_validate(cltopk_codec codec, const uint32_t *data,
                                          size_t data_words, const uint32_t *starts,
                                          size_t nstarts, cltopk_packed_column *col, char *err,
                                          size_t errlen);
/* Decode a validated column into out[0..count) on OpenMP threads. */
CLTOPK_INTERNAL void cltopk_codec_decode_cpu(const cltopk_packed_column *col, uint32_t *out);
/* Worst-case data words / exact starts of cltopk_pack (0: too large). */
CLTOPK_INTERNAL size_t cltopk_codec_bound(cltopk_codec codec, size_t n);
CLTOPK_INTERNAL size_t cltopk_codec_starts(cltopk_codec codec, size_t n);
/* Encode n < 2^32 values (starts_cap checked by the caller).  CLTOPK_OK;
 * CLTOPK_ERR_NO_MEMORY; CLTOPK_ERR_INVALID_ARGUMENT when the column needs more
 * than data_cap words (*need receives how many; nothing written to data). */
CLTOPK_INTERNAL int cltopk_codec_encode(cltopk_codec codec, const uint32_t *v, size_t n,
                                        uint32_t *data, size_t data_cap, size_t *data_words,
                                        uint32_t *starts, size_t *nstarts, size_t *need);

#endif
