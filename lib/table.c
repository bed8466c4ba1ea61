/* table.c - the one list of algorithms.  Names, the valid range of
 * cltopk_algo, the planner, explain, the benchmark and packed top-k all iterate
 * this array; adding an algorithm adds one line here (and its enum value).
 *
 * Device algorithms are compiled only with OpenCL; without it their records
 * are stand-ins that name them and say why they cannot run. */
#include "internal.h"

#include <string.h>

#if !HAVE_OPENCL
#define NO_CL(ID, NAME)                                                                         \
    {.id = ID, .name = NAME, .on_device = 1,                                                    \
     .missing = NAME " needs OpenCL, and this cltopk was built without it"}
static const cltopk_algorithm cl_bitonic = NO_CL(CLTOPK_ALGO_BITONIC, "bitonic");
static const cltopk_algorithm cl_sbp_radix = NO_CL(CLTOPK_ALGO_SBP_RADIX, "sbp-radix");
static const cltopk_algorithm cl_sbp_tree = NO_CL(CLTOPK_ALGO_SBP_TREE, "sbp-tree");
static const cltopk_algorithm cl_radix_select = NO_CL(CLTOPK_ALGO_RADIX_SELECT, "radix-select");
static const cltopk_algorithm cl_sample_filter = NO_CL(CLTOPK_ALGO_SAMPLE_FILTER, "sample-filter");
static const cltopk_algorithm cl_sort = NO_CL(CLTOPK_ALGO_SORT, "sort");
static const cltopk_algorithm cl_bits = NO_CL(CLTOPK_ALGO_BITS, "bits");
#define cltopk_algo_bitonic cl_bitonic
#define cltopk_algo_sbp_radix cl_sbp_radix
#define cltopk_algo_sbp_tree cl_sbp_tree
#define cltopk_algo_radix_select cl_radix_select
#define cltopk_algo_sample_filter cl_sample_filter
#define cltopk_algo_sort cl_sort
#define cltopk_algo_bits cl_bits
#endif


/* in enum order (cltopk_algorithm_get relies on it; t/records.c checks) */
const cltopk_algorithm *const cltopk_algorithms[] = {
    &cltopk_algo_bitonic,      &cltopk_algo_sbp_radix,   &cltopk_algo_sbp_tree,
    &cltopk_algo_radix_select, &cltopk_algo_sort,                 &cltopk_algo_cpu_heap,
    &cltopk_algo_cpu_bitonic,  &cltopk_algo_cpu_radix,   &cltopk_algo_sample_filter,
    &cltopk_algo_bits,
};
const size_t cltopk_algorithm_count = sizeof cltopk_algorithms / sizeof cltopk_algorithms[0];

const cltopk_algorithm *cltopk_algorithm_get(cltopk_algo id)
{
    for (size_t i = 0; i < cltopk_algorithm_count; i++)
        if (cltopk_algorithms[i]->id == id)
            return cltopk_algorithms[i];
    return NULL;
}

int cltopk_algo_valid(cltopk_algo id)
{
    return id == CLTOPK_ALGO_AUTO || cltopk_algorithm_get(id) != NULL;
}

const char *cltopk_algo_name(cltopk_algo algo)
{
    if (algo == CLTOPK_ALGO_AUTO)
        return "auto";
    const cltopk_algorithm *a = cltopk_algorithm_get(algo);
    return a ? a->name : NULL;
}

/* names compare with '_' for '-' */
static int algo_name_eq(const char *name, const char *given)
{
    while (*name && (*name == *given || (*name == '-' && *given == '_')))
        name++, given++;
    return !*name && !*given;
}

int cltopk_algo_parse(const char *name, cltopk_algo *algo)
{
    if (!name || !algo)
        return CLTOPK_ERR_INVALID_ARGUMENT;
    if (algo_name_eq("auto", name)) {
        *algo = CLTOPK_ALGO_AUTO;
        return CLTOPK_OK;
    }
    for (size_t i = 0; i < cltopk_algorithm_count; i++)
        if (algo_name_eq(cltopk_algorithms[i]->name, name)) {
            *algo = cltopk_algorithms[i]->id;
            return CLTOPK_OK;
        }
    return CLTOPK_ERR_BAD_ALGO;
}
