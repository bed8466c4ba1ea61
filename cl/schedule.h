/* schedule.h - the index arithmetic of the bitonic reducer's local-memory
 * accesses, shared by the kernel (cl/reducer.cl) and the host-side
 * bank-conflict simulator (t/banks.c), so both compute the same addresses.
 * Valid OpenCL C and C. */
#ifndef CLTOPK_SCHEDULE_H
#define CLTOPK_SCHEDULE_H

#ifdef __OPENCL_VERSION__
#define SCHED_FN inline
#else
#include <stdint.h>
typedef uint32_t uint;
#define SCHED_FN static inline
#endif

/* XOR swizzle: logical word i -> physical word, inside its row of 32 words.
 * The row's low 4 bits pick a GF(2)-linear 5-bit mask with columns 31, 17, 18
 * and 20.  Column 31 flips every bit between a row and the next, which spreads
 * a merge of runs shorter than 32 over both rows; the masks of 16 consecutive
 * rows differ in their low 4 bits, which spreads a work-item's 16 consecutive
 * items.  These columns came from an exhaustive search with t/banks.c's replay
 * (the research note's 29, 22, 28, 24 leave 2-way conflicts at k = 2). */
#ifndef SCHED_C0
#define SCHED_C0 31u
#define SCHED_C1 17u
#define SCHED_C2 18u
#define SCHED_C3 20u
#endif
SCHED_FN uint sched_phys(uint i, uint swz)
{
    uint r = i >> 5;
    uint m = ((r & 1u) ? SCHED_C0 : 0u) ^ ((r & 2u) ? SCHED_C1 : 0u) ^
             ((r & 4u) ? SCHED_C2 : 0u) ^ ((r & 8u) ? SCHED_C3 : 0u);
    return swz ? (i ^ m) : i;
}

/* first position of chunk g of a combined step of `items` items at stride lo
 * (parameter names avoid the kernel's -D macros K, B, M) */
SCHED_FN uint sched_chunk_base(uint g, uint lo, uint items)
{
    uint low = g & (lo - 1u);
    return (g - low) * items + low;
}

/* the first of the two items a merge of runs of `run` keeps one of, for output
 * p; the second is run positions later */
SCHED_FN uint sched_merge_src(uint p, uint run)
{
    return 2u * p - (p & (run - 1u));
}

/* steps in the first combined op of a phase with strides hi .. 1, when each op
 * runs at most `per` steps: the remainder goes first */
SCHED_FN uint sched_first_steps(uint hi, uint per)
{
    uint steps = 0;
    for (uint s = hi; s > 0; s >>= 1)
        steps++;
    uint first = steps % per;
    return first ? first : per;
}

#endif
