/* container.h - the packed-column file of `cltopk pack` (docs/FORMAT.md, "The
 * file container"): parse and build, on the public API only. */
#ifndef CLTOPK_TOOLS_CONTAINER_H
#define CLTOPK_TOOLS_CONTAINER_H

#include <stddef.h>
#include <stdint.h>

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

/* Parse a container of len bytes.  0 and *pf filled (free with packed_free), or
 * -1 with what is wrong in why.  The column itself is not validated here
 * (cltopk_unpack does it). */
int packed_parse(const unsigned char *buf, size_t len, packed_file *pf, char *why, size_t whylen);
/* Serialise into a malloc'd buffer of *len bytes (NULL when out of memory). */
unsigned char *packed_build(const packed_file *pf, size_t *len);
void packed_free(packed_file *pf);

#endif
