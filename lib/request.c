/* request.c - the one describer of a request: every entry point (topk, select,
 * their cl_mem forms, topk_packed, plan, explain, workspace, benchmark)
 * validates its shared arguments and fills a cltopk_request here. */
#include "internal.h"

#include <stdint.h>
#include <string.h>

static const int kind_of[6] = {KIND_FLOAT, KIND_FLOAT, KIND_SIGNED, KIND_UNSIGNED, KIND_SIGNED,
                               KIND_UNSIGNED};

int cltopk_describe(cltopk_context *ctx, const char *fn, cltopk_dtype type, size_t n, size_t k,
                    unsigned flags, unsigned allowed, cltopk_algo algo, cltopk_request *rq)
{
    memset(rq, 0, sizeof *rq);
    rq->tune = &rq->tune_store;
    size_t bytes = cltopk_dtype_size(type);
    if (!bytes)
        return cltopk_fail(ctx, CLTOPK_ERR_BAD_TYPE, "%s: unknown type %d (use a cltopk_dtype)",
                           fn, (int)type);
    if (flags & ~allowed)
        return cltopk_fail(ctx, CLTOPK_ERR_BAD_FLAGS,
                           "%s: unknown flag bits 0x%x (CLTOPK_SMALLEST is the only flag of "
                           "this call%s)",
                           fn, flags & ~allowed,
                           allowed & ~CLTOPK_SMALLEST ? " besides this call's own flags" : "");
    if (!cltopk_algo_valid(algo))
        return cltopk_fail(ctx, CLTOPK_ERR_BAD_ALGO,
                           "%s: unknown algorithm %d (cltopk_algo_name lists the valid ones)", fn,
                           (int)algo);
    if (n > SIZE_MAX / 16)
        return cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT, "%s: n = %zu is too large", fn, n);
    rq->type = type;
    rq->bytes = (int)bytes;
    rq->kind = kind_of[type];
    rq->n = n;
    rq->k = k;
    rq->smallest = (flags & CLTOPK_SMALLEST) != 0;
    rq->want_keys = rq->want_index = 1;
    return CLTOPK_OK;
}

/* [a, a + al) and [b, b + bl) share a byte */
static int overlap(const void *a, size_t al, const void *b, size_t bl)
{
    uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
    return a && b && al && bl && x < y + bl && y < x + al;
}

int cltopk_describe_host(cltopk_context *ctx, const char *fn, cltopk_request *rq,
                         const void *keys, void *out_keys, int64_t *out_index, size_t count)
{
    (void)count;
    if (!keys || (!out_keys && !out_index))
        return cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT, "%s: %s", fn,
                           !keys ? "keys is NULL" : "both outputs are NULL");
    rq->keys = keys;
    rq->out_keys = out_keys;
    rq->out_index = out_index;
    rq->want_keys = out_keys != NULL;
    rq->want_index = out_index != NULL;
    return CLTOPK_OK;
}

#if HAVE_OPENCL
/* the buffer m is (or is a sub-buffer of) *root, at byte *at of it */
static int mem_root(cltopk_context *ctx, const char *fn, const char *what, cl_mem m, size_t need,
                    cl_mem *root, size_t *at)
{
    size_t size = 0;
    cl_int err = clGetMemObjectInfo(m, CL_MEM_SIZE, sizeof size, &size, NULL);
    if (err != CL_SUCCESS)
        return cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT, "%s: %s is not a valid cl_mem (%s)",
                           fn, what, cltopk_clerror_name(err));
    if (size < need)
        return cltopk_fail(ctx, CLTOPK_ERR_BUFFER_SIZE,
                           "%s: %s holds %zu bytes, the call needs %zu", fn, what, size, need);
    cl_mem parent = NULL;
    size_t off = 0;
    if (clGetMemObjectInfo(m, CL_MEM_ASSOCIATED_MEMOBJECT, sizeof parent, &parent, NULL) !=
            CL_SUCCESS ||
        clGetMemObjectInfo(m, CL_MEM_OFFSET, sizeof off, &off, NULL) != CL_SUCCESS)
        parent = NULL, off = 0;
    *root = parent ? parent : m;
    *at = parent ? off : 0;
    return CLTOPK_OK;
}

#define SAME(ra, la, na, rb, lb, nb) ((ra) == (rb) && (la) < (lb) + (nb) && (lb) < (la) + (na))

/* the root buffers of rq's cl_mem outputs (NULL where there is none) and the
 * byte ranges of their count elements there */
static int output_ranges(cltopk_context *ctx, const char *fn, const cltopk_request *rq,
                         size_t count, cl_mem root[2], size_t at[2], size_t len[2])
{
    static const char *const what[2] = {"out_keys", "out_index"};
    const cl_mem m[2] = {rq->dout_keys, rq->dout_index};
    len[0] = count * (size_t)rq->bytes;
    len[1] = count * 8;
    for (int i = 0; i < 2; i++) {
        root[i] = NULL;
        at[i] = 0;
        int st = m[i] ? mem_root(ctx, fn, what[i], m[i], 0, &root[i], &at[i]) : CLTOPK_OK;
        if (st != CLTOPK_OK)
            return st;
    }
    return CLTOPK_OK;
}

/* an output range shares a byte with [a, a + n) of the root buffer r */
static int on_outputs(cl_mem r, size_t a, size_t n, cl_mem const root[2], const size_t at[2],
                      const size_t len[2])
{
    return (root[0] && SAME(root[0], at[0], len[0], r, a, n)) ||
           (root[1] && SAME(root[1], at[1], len[1], r, a, n));
}

/* the byte ranges of rq's cl_mem outputs (count elements) and input share no
 * byte of one root buffer */
static int outputs_apart_cl(cltopk_context *ctx, const char *fn, const cltopk_request *rq,
                            size_t count)
{
    size_t kb = (size_t)rq->bytes, a_in, at[2], len[2];
    cl_mem r_in, root[2];
    int st = mem_root(ctx, fn, "keys", rq->dkeys, 0, &r_in, &a_in);
    if (st == CLTOPK_OK)
        st = output_ranges(ctx, fn, rq, count, root, at, len);
    if (st != CLTOPK_OK)
        return st;
    if (on_outputs(r_in, a_in + rq->doffset * kb, rq->n * kb, root, at, len) ||
        (root[0] && root[1] && SAME(root[0], at[0], len[0], root[1], at[1], len[1])))
        return cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT,
                           "%s: an output buffer range overlaps the input range or the other "
                           "output; give separate buffers or ranges", fn);
    return CLTOPK_OK;
}

int cltopk_outputs_apart_from(cltopk_context *ctx, const char *fn, const cltopk_request *rq,
                              size_t count, const char *what, cl_mem m, size_t off, size_t bytes)
{
    size_t a, at[2], len[2];
    cl_mem r, root[2];
    int st = mem_root(ctx, fn, what, m, 0, &r, &a);
    if (st == CLTOPK_OK)
        st = output_ranges(ctx, fn, rq, count, root, at, len);
    if (st != CLTOPK_OK)
        return st;
    if (on_outputs(r, a + off, bytes, root, at, len))
        return cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT,
                           "%s: an output buffer range overlaps the range of %s; give separate "
                           "buffers or ranges", fn, what);
    return CLTOPK_OK;
}
#undef SAME

int cltopk_describe_buffer(cltopk_context *ctx, const char *fn, cltopk_request *rq, cl_mem keys,
                           size_t offset, cl_mem out_keys, cl_mem out_index, size_t count,
                           cl_uint num_wait, const cl_event *wait)
{
    if (!keys || (!out_keys && !out_index))
        return cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT, "%s: %s", fn,
                           !keys ? "keys is NULL" : "both outputs are NULL");
    if (offset > SIZE_MAX / 16 - rq->n)
        return cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT, "%s: offset %zu is too large", fn,
                           offset);
    size_t kb = (size_t)rq->bytes, at;
    cl_mem root;
    int st = mem_root(ctx, fn, "keys", keys, (offset + rq->n) * kb, &root, &at);
    if (st == CLTOPK_OK && out_keys)
        st = mem_root(ctx, fn, "out_keys", out_keys, count * kb, &root, &at);
    if (st == CLTOPK_OK && out_index)
        st = mem_root(ctx, fn, "out_index", out_index, count * 8, &root, &at);
    if (st == CLTOPK_OK)
        st = cltopk_mem_access(ctx, fn, "keys", keys, 0);
    if (st == CLTOPK_OK)
        st = cltopk_mem_access(ctx, fn, "out_keys", out_keys, 1);
    if (st == CLTOPK_OK)
        st = cltopk_mem_access(ctx, fn, "out_index", out_index, 1);
    if (st != CLTOPK_OK)
        return st;
    rq->on_device = 1;
    rq->dkeys = keys;
    rq->doffset = offset;
    rq->dout_keys = out_keys;
    rq->dout_index = out_index;
    rq->want_keys = out_keys != NULL;
    rq->want_index = out_index != NULL;
    rq->num_wait = num_wait;
    rq->wait = wait;
    return CLTOPK_OK;
}
#endif

int cltopk_outputs_apart(cltopk_context *ctx, const char *fn, const cltopk_request *rq,
                         size_t count)
{
    size_t kb = (size_t)rq->bytes, inb = rq->n * kb;
#if HAVE_OPENCL
    if (rq->on_device)
        return outputs_apart_cl(ctx, fn, rq, count);
#endif
    if (overlap(rq->out_keys, count * kb, rq->keys, inb) ||
        overlap(rq->out_index, count * 8, rq->keys, inb) ||
        overlap(rq->out_keys, count * kb, rq->out_index, count * 8))
        return cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT,
                           "%s: an output overlaps the input or the other output; give "
                           "separate arrays", fn);
    return CLTOPK_OK;
}

