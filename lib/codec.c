/* codec.c - the bit-packed column API: pack, unpack (CPU or device),
 * top-k of a packed column, and the decode benchmark.  The CPU codec is in
 * cpu/bitpack.c, the device decoders in cl/unpack.cl (cl/bitpack.h). */
#include "codec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *codec_names[3] = {"for", "dfor", "rfor"};

const char *cltopk_codec_name(cltopk_codec codec)
{
    return (unsigned)codec < 3 ? codec_names[codec] : NULL;
}

int cltopk_codec_parse(const char *name, cltopk_codec *codec)
{
    if (!name || !codec)
        return CLTOPK_ERR_INVALID_ARGUMENT;
    for (unsigned i = 0; i < 3; i++)
        if (!strcmp(name, codec_names[i])) {
            *codec = (cltopk_codec)i;
            return CLTOPK_OK;
        }
    return CLTOPK_ERR_INVALID_ARGUMENT;
}

size_t cltopk_pack_bound(cltopk_codec codec, size_t n)
{
    return cltopk_codec_bound(codec, n);
}

size_t cltopk_pack_starts_bound(cltopk_codec codec, size_t n)
{
    return cltopk_codec_starts(codec, n);
}

int cltopk_pack(cltopk_codec codec, const int32_t *values, size_t n, uint32_t *data,
                size_t data_cap, size_t *data_words, uint32_t *block_starts, size_t starts_cap,
                size_t *nstarts)
{
    if ((unsigned)codec > CLTOPK_CODEC_RFOR)
        return cltopk_fail(NULL, CLTOPK_ERR_INVALID_ARGUMENT,
                           "cltopk_pack: unknown codec %d (use a cltopk_codec)", (int)codec);
    if (n > UINT32_MAX)
        return cltopk_fail(NULL, CLTOPK_ERR_INVALID_ARGUMENT,
                           "cltopk_pack: n = %zu; a packed column holds fewer than 2^32 values "
                           "(pack it in parts)", n);
    if ((n && !values) || !data || !data_words || !block_starts || !nstarts)
        return cltopk_fail(NULL, CLTOPK_ERR_INVALID_ARGUMENT,
                           "cltopk_pack: values (when n > 0), data, data_words, block_starts "
                           "and nstarts must not be NULL");
    size_t ns = cltopk_codec_starts(codec, n);
    if (starts_cap < ns)
        return cltopk_fail(NULL, CLTOPK_ERR_INVALID_ARGUMENT,
                           "cltopk_pack: block_starts holds %zu entries, %zu values need %zu "
                           "(cltopk_pack_starts_bound)", starts_cap, n, ns);
    if (data_cap < 4)
        return cltopk_fail(NULL, CLTOPK_ERR_INVALID_ARGUMENT,
                           "cltopk_pack: data holds %zu words, the header alone takes 4",
                           data_cap);
    /* the offsets go to a private array first: nothing is written on failure */
    uint32_t *st = malloc(ns * sizeof *st);
    if (!st)
        return cltopk_fail(NULL, CLTOPK_ERR_NO_MEMORY, "cltopk_pack: out of memory");
    size_t need = 0, dw = 0, nst = 0;
    int s = cltopk_codec_encode(codec, (const uint32_t *)values, n, data, data_cap, &dw, st, &nst,
                                &need);
    if (s == CLTOPK_OK) {
        memcpy(block_starts, st, nst * sizeof *st);
        *data_words = dw;
        *nstarts = nst;
    } else if (s == CLTOPK_ERR_INVALID_ARGUMENT) {
        cltopk_fail(NULL, s, "cltopk_pack: the column takes %zu words, data holds %zu "
                    "(cltopk_pack_bound gives a capacity that always suffices)", need, data_cap);
    } else {
        cltopk_fail(NULL, s, "cltopk_pack: out of memory");
    }
    free(st);
    return s;
}

/* ---------------------------------------------------------------- device */

#if HAVE_OPENCL
/* blocks of 128 that one FOR work-group decodes (DFOR and RFOR: fixed by the format) */
#define DEV_D 4

/* copy a validated column to the device (scratch) */
static int dev_upload(cltopk_context *ctx, const cltopk_packed_column *c, cl_mem *dd, cl_mem *ds)
{
    int st = cltopk_scratch(ctx, SCR_PK_DATA, c->data_words * 4, dd);
    if (st == CLTOPK_OK)
        st = cltopk_scratch(ctx, SCR_PK_STARTS, (c->nblocks + 1) * 4, ds);
    if (st == CLTOPK_OK)
        st = cltopk_write_own(ctx, *dd, c->data, c->data_words * 4, "clEnqueueWriteBuffer");
    if (st == CLTOPK_OK)
        st = cltopk_write_own(ctx, *ds, c->starts, (c->nblocks + 1) * 4, "clEnqueueWriteBuffer");
    return st;
}

/* enqueue the decoder of column c (on the device as dd, ds) into out */
static int dev_decode(cltopk_context *ctx, const cltopk_packed_column *c, cl_mem dd, cl_mem ds,
                      cl_mem out)
{
    static const char *kname[3] = {"unpack_for", "unpack_dfor", "unpack_rfor"};
    if (c->count == 0)
        return CLTOPK_OK;
    char opts[64];
    snprintf(opts, sizeof opts, "-D BP_D=%d", DEV_D);
    cl_kernel k;
    int st = cltopk_kernel_get(ctx, "unpack.cl", opts, kname[c->codec], &k);
    if (st != CLTOPK_OK)
        return st;
    cl_uint nb = (cl_uint)c->nblocks, count = c->count;
    size_t groups = c->codec == CLTOPK_CODEC_RFOR ? c->nblocks : (c->nblocks + DEV_D - 1) / DEV_D;
    st = cltopk_set_args(ctx, k, 5, sizeof(cl_mem), &dd, sizeof(cl_mem), &ds, sizeof nb, &nb,
                         sizeof count, &count, sizeof(cl_mem), &out);
    if (st == CLTOPK_OK)
        st = cltopk_launch(ctx, k, groups * 128, 128, 0, NULL);
    clReleaseKernel(k);
    return st;
}

/* Enqueue top-k of column c (on the device as dd, ds) with device algorithm a
 * into rq's device outputs: fused with decoding (the SortReducer loads through
 * LoadBitPack, the column never materialised) where the algorithm's
 * configuration allows it, else decode into dv and reduce that.  *fused tells
 * which ran.  CLTOPK_PACKED_FUSED=0 never fuses; =require fails with
 * CLTOPK_ERR_UNSUPPORTED instead of decoding first (testing). */
static int dev_topk(cltopk_context *ctx, const cltopk_packed_column *c, const cltopk_algorithm *a,
                    cltopk_request *rq, cl_mem dd, cl_mem ds, cl_mem dv, int *fused)
{
    const char *mode = cltopk_env("CLTOPK_PACKED_FUSED");
    int st;
    *fused = 0;
    /* only a record that says so decodes on load; every other device algorithm
     * reads decoded values */
    if (c->codec == CLTOPK_CODEC_FOR && a->decodes_packed &&
        !(mode && !strcmp(mode, "0"))) {
        rq->dkeys = dd;
        rq->doffset = 0;
        rq->pk_starts = ds;
        rq->pk_nblocks = (cl_uint)c->nblocks;
        st = a->run_buffer(ctx, rq);
        rq->pk_starts = NULL;
        if (st == CLTOPK_OK) {
            *fused = 1;
            return st;
        }
        if (st != CLTOPK_ERR_UNSUPPORTED || (mode && !strcmp(mode, "require")))
            return st;
        ctx->err[0] = 0;
    } else if (mode && !strcmp(mode, "require")) {
        return cltopk_fail(ctx, CLTOPK_ERR_UNSUPPORTED,
                           "CLTOPK_PACKED_FUSED=require: only GPU-FOR columns are fused, and "
                           "only by an algorithm that decodes on load (%s was chosen)",
                           a->name);
    }
    rq->dkeys = dv;
    rq->doffset = 0;
    st = dev_decode(ctx, c, dd, ds, dv);
    if (st == CLTOPK_OK)
        st = a->run_buffer(ctx, rq);
    return st;
}
#endif

/* lock held; validate, decode on the context's device or CPU into out */
static int unpack_locked(cltopk_context *ctx, const char *fn, cltopk_codec codec,
                         const uint32_t *data, size_t data_words, const uint32_t *block_starts,
                         size_t nstarts, cltopk_packed_column *col)
{
    if ((unsigned)codec > CLTOPK_CODEC_RFOR)
        return cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT, "%s: unknown codec %d", fn,
                           (int)codec);
    if (!data || !block_starts)
        return cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT,
                           "%s: data and block_starts must not be NULL", fn);
    char why[512];
    int st = cltopk_codec_validate(codec, data, data_words, block_starts, nstarts, col, why,
                                   sizeof why);
    if (st != CLTOPK_OK)
        return cltopk_fail(ctx, st, "%s: corrupt input: %s", fn, why);
    return CLTOPK_OK;
}

int cltopk_unpack(cltopk_context *ctx, cltopk_codec codec, const uint32_t *data,
                  size_t data_words, const uint32_t *block_starts, size_t nstarts, int32_t *out,
                  size_t out_cap, size_t *n_out)
{
    if (!ctx)
        return cltopk_fail(NULL, CLTOPK_ERR_INVALID_ARGUMENT, "cltopk_unpack: ctx is NULL");
    pthread_mutex_lock(&ctx->lock);
    ctx->err[0] = 0;
    cltopk_packed_column col;
    int st = unpack_locked(ctx, "cltopk_unpack", codec, data, data_words, block_starts, nstarts,
                           &col);
    if (st != CLTOPK_OK || !out)
        goto done;
    if (out_cap < col.count) {
        st = cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT,
                         "cltopk_unpack: the column holds %u values, out only %zu", col.count,
                         out_cap);
        goto done;
    }
#if HAVE_OPENCL
    if (ctx->is_cl && col.count) {
        cl_mem dd, ds, dv;
        st = dev_upload(ctx, &col, &dd, &ds);
        if (st == CLTOPK_OK)
            st = cltopk_scratch(ctx, SCR_PK_VALUES, (size_t)col.count * 4, &dv);
        if (st == CLTOPK_OK)
            st = dev_decode(ctx, &col, dd, ds, dv);
        if (st == CLTOPK_OK) {
            cl_event *own;
            cl_uint nown = cltopk_after_own(ctx, &own);
            cl_int err = clEnqueueReadBuffer(ctx->queue, dv, CL_TRUE, 0, (size_t)col.count * 4,
                                             out, nown, own, NULL);
            if (err != CL_SUCCESS)
                st = cltopk_clfail(ctx, err, "clEnqueueReadBuffer (decoded values)");
        }
        goto done;
    }
#endif
    cltopk_codec_decode_cpu(&col, (uint32_t *)out);
done:
    if (st == CLTOPK_OK && n_out)
        *n_out = col.count;
    pthread_mutex_unlock(&ctx->lock);
    return st;
}

int cltopk_topk_packed(cltopk_context *ctx, cltopk_codec codec, const uint32_t *data,
                       size_t data_words, const uint32_t *block_starts, size_t nstarts,
                       size_t k, unsigned flags, cltopk_algo algo, int32_t *out_keys,
                       int64_t *out_index)
{
    const char *fn = "cltopk_topk_packed";
    if (!ctx)
        return cltopk_fail(NULL, CLTOPK_ERR_INVALID_ARGUMENT, "%s: ctx is NULL", fn);
    pthread_mutex_lock(&ctx->lock);
    ctx->err[0] = 0;
    cltopk_packed_column col;
    uint32_t *host = NULL;
    cltopk_request rq;
    int st = cltopk_describe(ctx, fn, CLTOPK_INT32, 0, k, flags, CLTOPK_SMALLEST, algo, &rq);
    if (st != CLTOPK_OK)
        goto done;
    st = unpack_locked(ctx, fn, codec, data, data_words, block_starts, nstarts, &col);
    if (st != CLTOPK_OK)
        goto done;
    if (k > col.count) {
        st = cltopk_fail(ctx, CLTOPK_ERR_K_RANGE, "%s: k = %zu is larger than the column's %u "
                         "values", fn, k, col.count);
        goto done;
    }
    if (k == 0)
        goto done;
    if (!out_keys && !out_index) {
        st = cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT,
                         "%s: out_keys and out_index are both NULL", fn);
        goto done;
    }
    if ((out_keys && ((const void *)out_keys < (const void *)(data + data_words) &&
                      (const void *)data < (const void *)(out_keys + k))) ||
        (out_index && ((const void *)out_index < (const void *)(data + data_words) &&
                       (const void *)data < (const void *)(out_index + k)))) {
        st = cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT,
                         "%s: an output overlaps the packed data; give separate arrays", fn);
        goto done;
    }
    rq.n = col.count;
    rq.want_keys = out_keys != NULL;
    rq.want_index = out_index != NULL;
    rq.out_keys = out_keys;
    rq.out_index = out_index;
    const cltopk_algorithm *a;
#if HAVE_OPENCL
    if (ctx->is_cl) {
        /* device data: AUTO takes the device algorithm when it supports the call */
        rq.on_device = 1;
        st = cltopk_choose(ctx, &rq, algo, &a);
        if (st != CLTOPK_OK)
            goto done;
        if (a->on_device) {
            cl_mem dd, ds, dv, dk = NULL, di = NULL;
            if ((st = dev_upload(ctx, &col, &dd, &ds)) != CLTOPK_OK ||
                (st = cltopk_scratch(ctx, SCR_PK_VALUES, (size_t)col.count * 4, &dv)) !=
                    CLTOPK_OK ||
                (out_keys && (st = cltopk_scratch(ctx, SCR_OUT_KEYS, k * 4, &dk)) != CLTOPK_OK) ||
                (out_index &&
                 (st = cltopk_scratch(ctx, SCR_OUT_INDEX, k * 8, &di)) != CLTOPK_OK))
                goto done;
            rq.dout_keys = dk;
            rq.dout_index = di;
            int fused;
            st = dev_topk(ctx, &col, a, &rq, dd, ds, dv, &fused);
            if (st != CLTOPK_OK)
                goto done;
            /* read both into private memory first: nothing written on failure */
            int32_t *tk = malloc(k * 4);
            int64_t *ti = malloc(k * 8);
            cl_int err = CL_SUCCESS;
            cl_event *own;
            cl_uint nown = cltopk_after_own(ctx, &own);
            if (!tk || !ti) {
                free(tk);
                free(ti);
                st = cltopk_fail(ctx, CLTOPK_ERR_NO_MEMORY, "%s: out of memory", fn);
                goto done;
            }
            if (dk)
                err = clEnqueueReadBuffer(ctx->queue, dk, CL_TRUE, 0, k * 4, tk, nown, own, NULL);
            if (err == CL_SUCCESS && di)
                err = clEnqueueReadBuffer(ctx->queue, di, CL_TRUE, 0, k * 8, ti, nown, own, NULL);
            if (err != CL_SUCCESS) {
                st = cltopk_clfail(ctx, err, "clEnqueueReadBuffer (top-k results)");
            } else {
                if (out_keys)
                    memcpy(out_keys, tk, k * 4);
                if (out_index)
                    memcpy(out_index, ti, k * 8);
            }
            free(tk);
            free(ti);
            goto done;
        }
        rq.on_device = 0;
    }
#endif
    st = cltopk_choose(ctx, &rq, algo, &a);
    if (st != CLTOPK_OK)
        goto done;
    host = malloc((size_t)col.count * 4);
    if (!host) {
        st = cltopk_fail(ctx, CLTOPK_ERR_NO_MEMORY, "%s: out of host memory for %u values", fn,
                         col.count);
        goto done;
    }
    cltopk_codec_decode_cpu(&col, host);
    rq.keys = host;
    if (algo == CLTOPK_ALGO_AUTO && a->run_planned)
        st = a->run_planned(&rq, host, rq.n, k, out_keys, out_index) == CLTOPK_OK
                 ? CLTOPK_OK
                 : cltopk_fail(ctx, CLTOPK_ERR_NO_MEMORY, "%s: out of host memory", fn);
    else
        st = a->run_host(ctx, &rq);
done:
    free(host);
    pthread_mutex_unlock(&ctx->lock);
    return st;
}

/* ------------------------------------------------------------- benchmark */

static void host_copy(const void *src, void *dst, size_t bytes)
{
    long long chunks = 64;
    size_t per = (bytes / (size_t)chunks + 63) & ~(size_t)63;
#pragma omp parallel for schedule(static)
    for (long long i = 0; i < chunks; i++) {
        size_t a = (size_t)i * per;
        if (a < bytes)
            memcpy((char *)dst + a, (const char *)src + a, bytes - a < per ? bytes - a : per);
    }
}

int cltopk_benchmark_unpack(cltopk_context *ctx, cltopk_codec codec, const uint32_t *data,
                            size_t data_words, const uint32_t *block_starts, size_t nstarts,
                            int reps, double *median_s, double *copy_bw)
{
    const char *fn = "cltopk_benchmark_unpack";
    if (!ctx)
        return cltopk_fail(NULL, CLTOPK_ERR_INVALID_ARGUMENT, "%s: ctx is NULL", fn);
    if (reps > 64)
        reps = 64;
    pthread_mutex_lock(&ctx->lock);
    ctx->err[0] = 0;
    cltopk_packed_column col;
    double t[64], tc[64];
    uint32_t *a = NULL, *b = NULL;
    int st = !median_s || reps < 1
                 ? cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT,
                               "%s: median_s is needed, reps >= 1", fn)
                 : unpack_locked(ctx, fn, codec, data, data_words, block_starts, nstarts, &col);
    if (st != CLTOPK_OK)
        goto done;
    if (col.count == 0) {
        st = cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT, "%s: the column is empty", fn);
        goto done;
    }
    size_t bytes = (size_t)col.count * 4;
#if HAVE_OPENCL
    if (ctx->is_cl) {
        cl_mem dd, ds, dv, dc;
        cl_kernel ck = NULL;
        if ((st = dev_upload(ctx, &col, &dd, &ds)) != CLTOPK_OK ||
            (st = cltopk_scratch(ctx, SCR_PK_VALUES, bytes + 16, &dv)) != CLTOPK_OK ||
            (st = cltopk_scratch(ctx, SCR_BENCH, bytes + 16, &dc)) != CLTOPK_OK ||
            (st = cltopk_finish_own(ctx)) != CLTOPK_OK)
            goto done;
        for (int r = -1; r < reps && st == CLTOPK_OK; r++) {
            double t0 = cltopk_now();
            st = dev_decode(ctx, &col, dd, ds, dv);
            if (st == CLTOPK_OK)
                st = cltopk_finish_own(ctx);
            if (r >= 0)
                t[r] = cltopk_now() - t0;
        }
        /* the copy floor: a grid-strided uint4 copy of the same number of bytes */
        if (st == CLTOPK_OK && copy_bw &&
            (st = cltopk_kernel_get(ctx, "unpack.cl", "-D BP_D=4", "copy4", &ck)) == CLTOPK_OK) {
            cl_ulong n4 = (bytes + 15) / 16;
            size_t global = (size_t)ctx->caps.compute_units * 2048;
            global = global < 256 ? 256 : global / 256 * 256;
            st = cltopk_set_args(ctx, ck, 3, sizeof(cl_mem), &dv, sizeof(cl_mem), &dc, sizeof n4,
                                 &n4);
            for (int r = -1; r < reps && st == CLTOPK_OK; r++) {
                double t0 = cltopk_now();
                st = cltopk_launch(ctx, ck, global, 256, 0, NULL);
                if (st == CLTOPK_OK)
                    st = cltopk_finish_own(ctx);
                if (r >= 0)
                    tc[r] = cltopk_now() - t0;
            }
            clReleaseKernel(ck);
            if (st == CLTOPK_OK)
                *copy_bw = 2.0 * (double)(n4 * 16) / cltopk_median(tc, reps);
        }
        if (st == CLTOPK_OK)
            *median_s = cltopk_median(t, reps);
        goto done;
    }
#endif
    a = malloc(bytes);
    b = copy_bw ? malloc(bytes) : NULL;
    if (!a || (copy_bw && !b)) {
        st = cltopk_fail(ctx, CLTOPK_ERR_NO_MEMORY, "%s: out of memory", fn);
        goto done;
    }
    for (int r = -1; r < reps; r++) {
        double t0 = cltopk_now();
        cltopk_codec_decode_cpu(&col, a);
        if (r >= 0)
            t[r] = cltopk_now() - t0;
    }
    *median_s = cltopk_median(t, reps);
    if (copy_bw) {
        for (int r = -1; r < reps; r++) {
            double t0 = cltopk_now();
            host_copy(a, b, bytes);
            if (r >= 0)
                tc[r] = cltopk_now() - t0;
        }
        *copy_bw = 2.0 * (double)bytes / cltopk_median(tc, reps);
    }
done:
    free(a);
    free(b);
    pthread_mutex_unlock(&ctx->lock);
    return st;
}

int cltopk_benchmark_topk_packed(cltopk_context *ctx, cltopk_codec codec, const uint32_t *data,
                                 size_t data_words, const uint32_t *block_starts, size_t nstarts,
                                 size_t k, unsigned flags, cltopk_algo algo, int reps,
                                 double *packed_s, int *fused_out, double *plain_s)
{
    const char *fn = "cltopk_benchmark_topk_packed";
    if (!ctx)
        return cltopk_fail(NULL, CLTOPK_ERR_INVALID_ARGUMENT, "%s: ctx is NULL", fn);
    if (reps > 64)
        reps = 64;
    pthread_mutex_lock(&ctx->lock);
    ctx->err[0] = 0;
    cltopk_packed_column col;
    cltopk_request rq;
    int st = cltopk_describe(ctx, fn, CLTOPK_INT32, 0, k, flags, CLTOPK_SMALLEST, algo, &rq);
    if (st == CLTOPK_OK && (!packed_s || reps < 1))
        st = cltopk_fail(ctx, CLTOPK_ERR_INVALID_ARGUMENT, "%s: packed_s is needed, reps >= 1",
                         fn);
    if (st == CLTOPK_OK)
        st = unpack_locked(ctx, fn, codec, data, data_words, block_starts, nstarts, &col);
    if (st != CLTOPK_OK)
        goto done;
    if (k == 0 || k > col.count) {
        st = cltopk_fail(ctx, CLTOPK_ERR_K_RANGE, "%s: need 0 < k <= %u", fn, col.count);
        goto done;
    }
#if HAVE_OPENCL
    if (ctx->is_cl) {
        rq.n = col.count;
        rq.on_device = 1;
        const cltopk_algorithm *a;
        if ((st = cltopk_choose(ctx, &rq, algo, &a)) != CLTOPK_OK)
            goto done;
        if (!a->on_device) {
            st = cltopk_fail(ctx, CLTOPK_ERR_UNSUPPORTED, "%s: %s is not a device algorithm",
                             fn, a->name);
            goto done;
        }
        cl_mem dd, ds, dv, dk, di;
        double t[64], tp[64];
        if ((st = dev_upload(ctx, &col, &dd, &ds)) != CLTOPK_OK ||
            (st = cltopk_scratch(ctx, SCR_PK_VALUES, (size_t)col.count * 4, &dv)) != CLTOPK_OK ||
            (st = cltopk_scratch(ctx, SCR_OUT_KEYS, k * 4, &dk)) != CLTOPK_OK ||
            (st = cltopk_scratch(ctx, SCR_OUT_INDEX, k * 8, &di)) != CLTOPK_OK ||
            (st = cltopk_finish_own(ctx)) != CLTOPK_OK)
            goto done;
        rq.dout_keys = dk;
        rq.dout_index = di;
        int fused = 0;
        for (int r = -1; r < reps && st == CLTOPK_OK; r++) {
            double t0 = cltopk_now();
            st = dev_topk(ctx, &col, a, &rq, dd, ds, dv, &fused);
            if (st == CLTOPK_OK)
                st = cltopk_finish_own(ctx);
            if (r >= 0)
                t[r] = cltopk_now() - t0;
        }
        /* the same top-k over the decoded values, now plain int32 on the device */
        if (st == CLTOPK_OK && fused)
            st = dev_decode(ctx, &col, dd, ds, dv);
        rq.dkeys = dv;
        for (int r = -1; plain_s && r < reps && st == CLTOPK_OK; r++) {
            double t0 = cltopk_now();
            st = a->run_buffer(ctx, &rq);
            if (st == CLTOPK_OK)
                st = cltopk_finish_own(ctx);
            if (r >= 0)
                tp[r] = cltopk_now() - t0;
        }
        if (st == CLTOPK_OK) {
            *packed_s = cltopk_median(t, reps);
            if (fused_out)
                *fused_out = fused;
            if (plain_s)
                *plain_s = cltopk_median(tp, reps);
        }
        goto done;
    }
#endif
    (void)algo;
    st = cltopk_fail(ctx, CLTOPK_ERR_UNSUPPORTED,
                     "%s: needs an OpenCL context (device-resident data)", fn);
done:
    pthread_mutex_unlock(&ctx->lock);
    return st;
}
