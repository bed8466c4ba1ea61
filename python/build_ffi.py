"""cffi builder of cltopk._cltopk (API mode: a C extension compiled against cltopk.h).

The declarations below are a copy of the prototypes of include/cltopk.h that the
package uses.  In API mode cffi compiles a C wrapper that calls the real
functions through the real header, so a declaration that disagrees with the
header is a compile error or warning, never a wrong call at run time.  cffi
releases the GIL around every call.

Where the library and header come from is decided by setup.py (cltopk_paths()).
"""
import os

from cffi import FFI

CDEF = r"""
typedef struct _cl_context *cl_context;
typedef struct _cl_device_id *cl_device_id;
typedef struct _cl_command_queue *cl_command_queue;
typedef struct _cl_mem *cl_mem;
typedef struct _cl_event *cl_event;
typedef int... cl_uint;

typedef struct cltopk_context cltopk_context;
typedef enum { CLTOPK_FLOAT32 = 0, CLTOPK_FLOAT64 = 1, CLTOPK_INT32 = 2, CLTOPK_UINT32 = 3,
               CLTOPK_INT64 = 4, CLTOPK_UINT64 = 5 } cltopk_dtype;
typedef enum { CLTOPK_ALGO_AUTO = 0, ... } cltopk_algo;
typedef enum { CLTOPK_L2SQ = 0, CLTOPK_INNER_PRODUCT = 1 } cltopk_metric;
typedef enum { CLTOPK_CODEC_FOR = 0, CLTOPK_CODEC_DFOR = 1, CLTOPK_CODEC_RFOR = 2 } cltopk_codec;
typedef enum { CLTOPK_PARTITION_RANDOM = 0, CLTOPK_PARTITION_ANGLE = 1 } cltopk_partitioning;

#define CLTOPK_LARGEST ...
#define CLTOPK_SMALLEST ...
#define CLTOPK_PLAN_SELECT ...
#define CLTOPK_VERSION_NUMBER ...
#define CLTOPK_HAVE_OPENCL ...

typedef struct {
    unsigned platform, device;
    char platform_name[128];
    char device_name[128];
    char device_version[128];
    char driver_version[64];
    int is_gpu, is_cpu;
    uint64_t global_mem_bytes, max_alloc_bytes, local_mem_bytes;
    size_t max_work_group_size;
    unsigned compute_units;
    int has_fp64;
} cltopk_device_info;

typedef struct {
    const char *name;
    cltopk_dtype type;
    const void *data;
} cltopk_column;

typedef struct cltopk_index cltopk_index;
typedef struct {
    cltopk_partitioning partitioning;
    size_t partitions;
    size_t block;
    uint64_t seed;
} cltopk_index_options;
typedef struct {
    uint64_t tuples_evaluated;
    uint64_t blocks_read;
    uint64_t tuples;
    size_t partitions;
    size_t partitions_stopped;
    int stopped_early;
    int full_evaluation;
    int on_device;
} cltopk_index_stats;
typedef struct {
    size_t n, d;
    size_t partitions;
    size_t block;
    size_t blocks;
    cltopk_partitioning partitioning;
    uint64_t seed;
    int on_device;
    uint64_t bytes;
} cltopk_index_info;

const char *cltopk_version_string(void);
unsigned cltopk_version_number(void);
int cltopk_open(cltopk_context **ctx, const char *device);
int cltopk_open_cl(cltopk_context **ctx, cl_context context, cl_device_id device,
                   cl_command_queue queue);
void cltopk_close(cltopk_context *ctx);
const char *cltopk_device_name(const cltopk_context *ctx);
const char *cltopk_last_error(const cltopk_context *ctx);
const char *cltopk_strerror(int status);

int cltopk_topk(cltopk_context *ctx, cltopk_dtype type, const void *keys, size_t n,
                size_t k, unsigned flags, cltopk_algo algo, void *out_keys, int64_t *out_index);
int cltopk_select(cltopk_context *ctx, cltopk_dtype type, const void *keys, size_t n,
                  size_t rank, unsigned flags, cltopk_algo algo, void *out_key,
                  int64_t *out_index);
int cltopk_topk_buffer(cltopk_context *ctx, cltopk_dtype type, cl_mem keys, size_t offset,
                       size_t n, size_t k, unsigned flags, cltopk_algo algo, cl_mem out_keys,
                       cl_mem out_index, cl_uint num_wait, const cl_event *wait, cl_event *done);
int cltopk_select_buffer(cltopk_context *ctx, cltopk_dtype type, cl_mem keys, size_t offset,
                         size_t n, size_t rank, unsigned flags, cltopk_algo algo,
                         cl_mem out_key, cl_mem out_index, cl_uint num_wait,
                         const cl_event *wait, cl_event *done);

int cltopk_topk_rows(cltopk_context *ctx, cltopk_dtype type, const void *keys, size_t rows,
                     size_t cols, size_t ld, size_t k, unsigned flags, cltopk_algo algo,
                     void *out_keys, int64_t *out_index);
int cltopk_topk_segments(cltopk_context *ctx, cltopk_dtype type, const void *keys,
                         size_t nseg, const int64_t *offsets, size_t k, unsigned flags,
                         cltopk_algo algo, void *out_keys, int64_t *out_index);
int cltopk_knn(cltopk_context *ctx, cltopk_metric metric, const float *queries, size_t nq,
               const float *points, size_t np, size_t d, size_t k, float *out_dist,
               int64_t *out_index);

int cltopk_query_topk(cltopk_context *ctx, const cltopk_column *cols, size_t ncols, size_t n,
                      const char *order_by, const char *where, size_t k, unsigned flags,
                      cltopk_dtype score_type, void *out_scores, int64_t *out_index,
                      size_t *out_count);

int cltopk_index_build(cltopk_context *ctx, const float *const *attrs, size_t d, size_t n,
                       const cltopk_index_options *opt, cltopk_index **out);
int cltopk_index_topk(cltopk_index *idx, const unsigned *attr, const float *w, size_t m,
                      size_t k, float *out_scores, int64_t *out_index,
                      cltopk_index_stats *stats);
int cltopk_index_full_topk(cltopk_index *idx, const unsigned *attr, const float *w, size_t m,
                           size_t k, float *out_scores, int64_t *out_index,
                           cltopk_index_stats *stats);
int cltopk_index_info_get(const cltopk_index *idx, cltopk_index_info *info);
void cltopk_index_free(cltopk_index *idx);
int cltopk_index_save(cltopk_index *idx, const char *path);
int cltopk_index_load(cltopk_context *ctx, const char *path, cltopk_index **out);

int cltopk_plan(cltopk_context *ctx, cltopk_dtype type, size_t n, size_t k, unsigned flags,
                cltopk_algo *chosen);
int cltopk_explain(cltopk_context *ctx, cltopk_dtype type, size_t n, size_t k, unsigned flags,
                   int device_data, char *buf, size_t len);
int cltopk_explain_rows(cltopk_context *ctx, cltopk_dtype type, size_t rows, size_t cols,
                        const int64_t *offsets, size_t k, unsigned flags, int device_data,
                        char *buf, size_t len);
int cltopk_explain_knn(cltopk_context *ctx, cltopk_metric metric, size_t nq, size_t np,
                       size_t d, size_t k, int device_data, char *buf, size_t len);

const char *cltopk_algo_name(cltopk_algo algo);
int cltopk_algo_parse(const char *name, cltopk_algo *algo);
size_t cltopk_device_count(void);
int cltopk_device_get(size_t i, cltopk_device_info *info);
int cltopk_get_cl(const cltopk_context *ctx, cl_context *context, cl_device_id *device,
                  cl_command_queue *queue);

size_t cltopk_pack_bound(cltopk_codec codec, size_t n);
size_t cltopk_pack_starts_bound(cltopk_codec codec, size_t n);
int cltopk_pack(cltopk_codec codec, const int32_t *values, size_t n, uint32_t *data,
                size_t data_cap, size_t *data_words, uint32_t *block_starts, size_t starts_cap,
                size_t *nstarts);
int cltopk_unpack(cltopk_context *ctx, cltopk_codec codec, const uint32_t *data,
                  size_t data_words, const uint32_t *block_starts, size_t nstarts,
                  int32_t *out, size_t out_cap, size_t *n_out);
int cltopk_topk_packed(cltopk_context *ctx, cltopk_codec codec, const uint32_t *data,
                       size_t data_words, const uint32_t *block_starts, size_t nstarts,
                       size_t k, unsigned flags, cltopk_algo algo, int32_t *out_keys,
                       int64_t *out_index);
int cltopk_codec_parse(const char *name, cltopk_codec *codec);

int cltopk_set_threads(int n);
int cltopk_benchmark(cltopk_context *ctx, cltopk_dtype type, const void *keys, size_t n,
                     size_t k, unsigned flags, cltopk_algo algo, int reps, double *median_s,
                     double *floor_s);
const char *cltopk_cpu_isa(void);
"""


def make_ffi(include_dirs=(), library_dirs=(), libraries=("cltopk",), rpath=(),
             extra_compile_args=(), extra_link_args=()):
    """The FFI object that builds cltopk._cltopk."""
    ffi = FFI()
    ffi.cdef(CDEF)
    ffi.set_source(
        "cltopk._cltopk",
        "#include <cltopk.h>\n",
        include_dirs=list(include_dirs),
        library_dirs=list(library_dirs),
        libraries=list(libraries),
        runtime_library_dirs=list(rpath),
        extra_compile_args=list(extra_compile_args),
        extra_link_args=list(extra_link_args),
    )
    return ffi


def ffibuilder():
    """Entry point of setup.py's cffi_modules (paths from the environment that
    setup.py prepared)."""
    def split(var):
        value = os.environ.get(var, "")
        return [p for p in value.split(os.pathsep) if p]

    return make_ffi(split("_CLTOPK_INCLUDE_DIRS"), split("_CLTOPK_LIBRARY_DIRS"),
                    rpath=split("_CLTOPK_RPATH"))
