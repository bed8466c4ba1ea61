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

/* the byte ranges of rq's cl_mem outputs (count elements) and input share no
 * byte of one root buffer */
static int outputs_apart_cl(cltopk_context *ctx, const char *fn, const cltopk_request *rq,
                            size_t count)
{
    size_t kb = (size_t)rq->bytes;
    cl_mem r_in, r_ok = NULL, r_oi = NULL;
    size_t a_in, a_ok = 0, a_oi = 0;
    int st = mem_root(ctx, fn, "keys", rq->dkeys, 0, &r_in, &a_in);
    if (st == CLTOPK_OK && rq->dout_keys)
        st = mem_root(ctx, fn, "out_keys", rq->dout_keys, 0, &r_ok, &a_ok);
    if (st == CLTOPK_OK && rq->dout_index)
        st = mem_root(ctx, fn, "out_index", rq->dout_index, 0, &r_oi, &a_oi);
    if (st != CLTOPK_OK)
        return st;
    size_t in_lo = a_in + rq->doffset * kb, in_len = rq->n * kb;
#define SAME(ra, la, na, rb, lb, nb) ((ra) == (rb) && (la) < (lb) + (nb) && (lb) < (la) + (na))
    if ((rq->dout_keys && SAME(r_ok, a_ok, count * kb, r_in, in_lo, in_len)) ||
        (rq->dout_index && SAME(r_oi, a_oi, count * 8, r_in, in_lo, in_len)) ||
        (rq->dout_keys && rq->dout_index && SAME(r_ok, a_ok, count * kb, r_oi, a_oi, count * 8)))
        return cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT,
                           "%s: an output buffer range overlaps the input range or the other "
                           "output; give separate buffers or ranges", fn);
#undef SAME
    return CLTOPK_OK;
}

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

