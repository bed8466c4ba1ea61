/* isa_scalar.c - the portable instance of the per-ISA kernels (isa_body.h):
 * compiled with the library's flags only, present on every build. */
#include "config.h"

#define ISA_SUFFIX scalar
#define ISA_NAME "scalar"
#include "isa_body.h"
