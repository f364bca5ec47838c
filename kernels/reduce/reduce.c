/* Reduction family: argument checks, the 2-norm's rescaling, and dispatch to the CPU or CUDA backend. */
#include "kernels/reduce/reduce.h"

#include <float.h>
#include <math.h>

#include "kernels/reduce/reduce_impl.h"
#include "kernels/dispatch.h"

static int check_args(hs_ctx *ctx, hs_dtype t, size_t n, const void *x, const void *out, const char *fn)
{
    if (!ctx) return hs_input_error(fn, 0, NULL, "context is NULL");
    if (t != HS_F64 && t != HS_F32)
        return hs_input_error(fn, 0, "dtype", "dtype must be f64 or f32, not %s", hs_dtype_name(t));
    if (!out) return hs_input_error(fn, 0, NULL, "result pointer is NULL");
    if (n > 0 && !x) return hs_input_error(fn, 0, "x", "x is NULL with n = %zu", n);
    return HS_OK;
}

static int backend_reduce(hs_ctx *ctx, hs_dtype t, hs_rop op, size_t n, const void *x, double scale, double *r)
{
    return HS_DISPATCH(ctx, hs_reduce_apply_cpu(t, op, n, x, scale, r), hs_reduce_apply_cuda(ctx->cuda, t, op, n, x, scale, r));
}

int hs_reduce(hs_ctx *ctx, hs_dtype t, hs_reduce_op op, size_t n, const void *x, double *result)
{
    HS_CHECK(check_args(ctx, t, n, x, result, "hs_reduce"));
    static const hs_rop map[] = {HS_ROP_SUM, HS_ROP_MIN, HS_ROP_MAX};
    static const double empty[] = {0.0, INFINITY, -INFINITY};
    if ((unsigned)op > HS_REDUCE_MAX) return hs_input_error("hs_reduce", 0, "op", "unknown reduction %d", (int)op);
    if (n == 0) {
        *result = empty[op];
        return HS_OK;
    }
    return backend_reduce(ctx, t, map[op], n, x, 1.0, result);
}

static int argext(hs_ctx *ctx, hs_dtype t, int want_max, size_t n, const void *x, size_t *index, double *value,
                  const char *fn)
{
    HS_CHECK(check_args(ctx, t, n, x, value, fn));
    if (!index) return hs_input_error(fn, 0, NULL, "index pointer is NULL");
    *index = 0;
    *value = want_max ? -INFINITY : INFINITY;
    if (n == 0) return HS_OK;
    return HS_DISPATCH(ctx, hs_reduce_argext_cpu(t, want_max, n, x, index, value),
                       hs_reduce_argext_cuda(ctx->cuda, t, want_max, n, x, index, value));
}

int hs_argmax(hs_ctx *ctx, hs_dtype t, size_t n, const void *x, size_t *index, double *value)
{ return argext(ctx, t, 1, n, x, index, value, "hs_argmax"); }
int hs_argmin(hs_ctx *ctx, hs_dtype t, size_t n, const void *x, size_t *index, double *value)
{ return argext(ctx, t, 0, n, x, index, value, "hs_argmin"); }

/* sqrt(sum x^2) in double overflows only for f64 data beyond ~1e154 and loses everything below
 * ~1e-154; then a second pass scaled by 1/max|x| gives the right answer. */
static int norm2(hs_ctx *ctx, hs_dtype t, size_t n, const void *x, double *result)
{
    double ss = 0;
    HS_CHECK(backend_reduce(ctx, t, HS_ROP_SSQ, n, x, 1.0, &ss));
    if (isnan(ss) || (ss >= 0x1p-960 && ss <= 0x1p960)) {
        *result = sqrt(ss);
        return HS_OK;
    }
    double amax = 0;
    HS_CHECK(backend_reduce(ctx, t, HS_ROP_AMAX, n, x, 1.0, &amax));
    if (amax == 0 || isinf(amax) || isnan(amax)) {
        *result = amax;
        return HS_OK;
    }
    HS_CHECK(backend_reduce(ctx, t, HS_ROP_SSQ, n, x, 1.0 / amax, &ss));
    *result = amax * sqrt(ss);
    return HS_OK;
}

int hs_norm(hs_ctx *ctx, hs_dtype t, int which, size_t n, const void *x, double *result)
{
    HS_CHECK(check_args(ctx, t, n, x, result, "hs_norm"));
    if (which != 0 && which != 1 && which != 2)
        return hs_input_error("hs_norm", 0, "which", "norm must be 1, 2 or 0 (infinity), not %d", which);
    *result = 0.0;
    if (n == 0) return HS_OK;
    if (which == 2) return norm2(ctx, t, n, x, result);
    return backend_reduce(ctx, t, which == 1 ? HS_ROP_ASUM : HS_ROP_AMAX, n, x, 1.0, result);
}

int hs_reduce_sum_cub(hs_ctx *ctx, hs_dtype t, size_t n, const void *x, double *result)
{
    HS_CHECK(check_args(ctx, t, n, x, result, "hs_reduce_sum_cub"));
    *result = 0.0;
    if (n == 0 && HS_ON_GPU(ctx)) return HS_OK;
    return HS_DISPATCH(ctx, HS_FAIL(HS_ERR_RUNTIME, "hs_reduce_sum_cub: CUB is only available on the CUDA backend"),
                       hs_reduce_sum_cub_cuda(ctx->cuda, t, n, x, result));
}
