/* isa.h - the CPU kernels that exist once per instruction set (scalar, AVX2,
 * AVX-512), and the choice among them.
 *
 * cpu/isa_body.h holds the kernels once; cpu/isa_scalar.c, cpu/isa_avx2.c and
 * cpu/isa_avx512.c compile it with their own flags (Makefile.am builds the two
 * SIMD files into convenience libraries with -mavx2 resp. -mavx512f -mavx512bw
 * ...).  The library picks one table at the first call: the best the processor
 * supports (__builtin_cpu_supports), or the one CLTOPK_CPU_ISA names (scalar,
 * avx2, avx512; a name the processor lacks falls back to the best it has). */
#ifndef CLTOPK_CPU_ISA_H
#define CLTOPK_CPU_ISA_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Loads of element i of a key array that may be misaligned (the API takes void
 * pointers); they compile to plain loads. */
static inline uint32_t cpu_ld32(const void *a, size_t i)
{
    uint32_t x;
    memcpy(&x, (const char *)a + i * 4, 4);
    return x;
}

static inline uint64_t cpu_ld64(const void *a, size_t i)
{
    uint64_t x;
    memcpy(&x, (const char *)a + i * 8, 8);
    return x;
}

enum { CPU_ISA_SCALAR = 0, CPU_ISA_AVX2 = 1, CPU_ISA_AVX512 = 2, CPU_ISA_COUNT };

typedef struct {
    const char *name;
    /* The first j in [i, hi) whose order key (order.h; kind, smallest) is
     * strictly above thr, or hi when there is none.  x is the whole array. */
    size_t (*skip32)(const uint32_t *x, size_t i, size_t hi, int kind, int smallest,
                     uint32_t thr);
    size_t (*skip64)(const uint64_t *x, size_t i, size_t hi, int kind, int smallest,
                     uint64_t thr);
    /* Composite keys of 32-bit elements x[0..n): (order key << 32) | ~(base + j)
     * in the low half, so that a larger composite comes first in THE ORDER. */
    void (*composite32)(const uint32_t *x, size_t n, int kind, int smallest, uint32_t base,
                        uint64_t *out);
    /* The CPU bitonic top-k's reduction of a vector of composites: a[0..len)
     * (len a power of two, a multiple of 16 * kk, kk a power of two >= 16)
     * becomes len / 16 items that hold the best kk of every 16 * kk as runs of
     * kk sorted descending (`sorted_in`: a already consists of such runs).
     * Writes out[0..len/16); a is scratch. */
    void (*bitonic16)(uint64_t *a, size_t len, size_t kk, int sorted_in, uint64_t *out);
} cpu_isa_ops;

extern const cpu_isa_ops cltopk_isa_scalar __attribute__((visibility("hidden")));
#if CLTOPK_HAVE_AVX2
extern const cpu_isa_ops cltopk_isa_avx2 __attribute__((visibility("hidden")));
#endif
#if CLTOPK_HAVE_AVX512
extern const cpu_isa_ops cltopk_isa_avx512 __attribute__((visibility("hidden")));
#endif

/* The table in use (chosen once; thread-safe). */
const cpu_isa_ops *cltopk_cpu_ops(void) __attribute__((visibility("hidden")));
/* The table of one ISA if compiled in and supported by this processor, else NULL. */
const cpu_isa_ops *cltopk_cpu_ops_of(int isa) __attribute__((visibility("hidden")));
/* Threads a CPU algorithm may use (cltopk_set_threads, else OpenMP's default). */
int cltopk_cpu_threads(void) __attribute__((visibility("hidden")));

#endif
