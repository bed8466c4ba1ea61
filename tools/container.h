/* container.h - the packed-column file of `cltopk pack` (docs/FORMAT.md, "The
 * file container"): parse and build, on the public API only. */
#ifndef CLTOPK_TOOLS_CONTAINER_H
#define CLTOPK_TOOLS_CONTAINER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cltopk.h"

#define PACKED_MAGIC "CLTKPACK"
#define PACKED_VERSION 1u
#define PACKED_HEADER 40u

typedef struct {
    cltopk_codec codec;
    uint64_t count;
    uint32_t *data;     /* malloc'd copies, host byte order */
    size_t data_words;
    uint32_t *starts;
    size_t nstarts;
} packed_file;

/* The fixed header, checked by packed_check_header. */
typedef struct {
    uint32_t version, codec;
    uint64_t count, data_words, nstarts;
} packed_header;

/* Check the header in h[0..have) before anything else is read or allocated:
 * the magic first (8 bytes suffice to refuse a file that is no container),
 * then the version, the codec, count < 2^32, nstarts = the number of blocks of
 * count + 1, data_words between 4 and what count blocks can take, and, when
 * file_len >= 0 (the size of a regular file), file_len = 40 + 4 * (data_words
 * + nstarts).  0 with *h filled, or -1 with what is wrong in why. */
int packed_check_header(const unsigned char *h, size_t have, long long file_len,
                        packed_header *ph, char *why, size_t whylen);

/* Parse a container of len bytes.  0 and *pf filled (free with packed_free), or
 * -1 with what is wrong in why.  The column itself is not validated here
 * (cltopk_unpack does it). */
int packed_parse(const unsigned char *buf, size_t len, packed_file *pf, char *why, size_t whylen);

/* Read a container from f: file_len is its size for a regular file read from
 * its start, or -1 for a stream.  The header is read and checked first (the
 * magic after 8 bytes); then exactly the words it announces are read, into
 * buffers that grow with what arrives on a stream (never sized from the
 * header alone), and a stream must end there.  Returns 0 with *pf filled,
 * PACKED_BAD with why (not a container, or a corrupt one), PACKED_IO (errno
 * says; why too) or PACKED_NOMEM. */
#define PACKED_BAD (-1)
#define PACKED_IO (-2)
#define PACKED_NOMEM (-3)
int packed_read(FILE *f, long long file_len, packed_file *pf, char *why, size_t whylen);
/* Serialise into a malloc'd buffer of *len bytes (NULL when out of memory). */
unsigned char *packed_build(const packed_file *pf, size_t *len);
void packed_free(packed_file *pf);

#endif
