/* isa.c - the choice of the per-ISA kernel table (isa.h), once per process, and
 * the thread count of the CPU algorithms (cltopk_set_threads). */
#include "internal.h"
#include "isa.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

static int isa_supported(int isa)
{
    switch (isa) {
    case CPU_ISA_SCALAR: return 1;
#if CLTOPK_HAVE_AVX2 && (defined(__x86_64__) || defined(__i386__))
    case CPU_ISA_AVX2: return __builtin_cpu_supports("avx2");
#endif
#if CLTOPK_HAVE_AVX512 && (defined(__x86_64__) || defined(__i386__))
    case CPU_ISA_AVX512:
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
               __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
#endif
    default: return 0;
    }
}

const cpu_isa_ops *cltopk_cpu_ops_of(int isa)
{
    if (!isa_supported(isa))
        return NULL;
    switch (isa) {
#if CLTOPK_HAVE_AVX2
    case CPU_ISA_AVX2: return &cltopk_isa_avx2;
#endif
#if CLTOPK_HAVE_AVX512
    case CPU_ISA_AVX512: return &cltopk_isa_avx512;
#endif
    default: return &cltopk_isa_scalar;
    }
}

static _Atomic(const cpu_isa_ops *) chosen;

const cpu_isa_ops *cltopk_cpu_ops(void)
{
    const cpu_isa_ops *o = atomic_load_explicit(&chosen, memory_order_acquire);
    if (o)
        return o;
    int best = CPU_ISA_SCALAR;
    for (int i = CPU_ISA_COUNT - 1; i > CPU_ISA_SCALAR; i--)
        if (isa_supported(i)) {
            best = i;
            break;
        }
    /* CLTOPK_CPU_ISA=scalar|avx2|avx512 asks for one (if this processor has it) */
    const char *want = cltopk_env("CLTOPK_CPU_ISA");
    if (want && *want) {
        static const char *const names[CPU_ISA_COUNT] = {"scalar", "avx2", "avx512"};
        for (int i = 0; i < CPU_ISA_COUNT; i++)
            if (!strcmp(want, names[i]) && isa_supported(i))
                best = i;
    }
    o = cltopk_cpu_ops_of(best);
    atomic_store_explicit(&chosen, o, memory_order_release);
    return o;
}

const char *cltopk_cpu_isa(void)
{
    return cltopk_cpu_ops()->name;
}

static atomic_int threads_wanted;

int cltopk_set_threads(int n)
{
    if (n < 0)
        return cltopk_fail(NULL, CLTOPK_ERR_INVALID_ARGUMENT,
                           "cltopk_set_threads: n = %d is negative (0 = OpenMP's default)", n);
    atomic_store(&threads_wanted, n);
    return CLTOPK_OK;
}

int cltopk_cpu_threads(void)
{
    int n = atomic_load(&threads_wanted);
    if (n > 0)
        return n;
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}
