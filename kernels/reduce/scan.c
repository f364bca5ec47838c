/* Scan family: argument checks and dispatch to the CPU or CUDA backend. */
#include "kernels/reduce/scan.h"

#include "kernels/reduce/scan_impl.h"
#include "kernels/dispatch.h"

#include <stdlib.h>
#include <string.h>

static int check_args(hs_ctx *ctx, hs_dtype t, size_t n, const void *in, const void *out, const char *fn)
{
    if (!ctx) return hs_input_error(fn, 0, NULL, "context is NULL");
    if (t != HS_F64 && t != HS_F32 && t != HS_I32 && t != HS_I64 && t != HS_U32 && t != HS_U64)
        return hs_input_error(fn, 0, "dtype", "scan dtype must be f64, f32, i32, i64, u32 or u64, not %s",
                              hs_dtype_name(t));
    if (n > 0 && (!in || !out)) return hs_input_error(fn, 0, NULL, "in or out is NULL with n = %zu", n);
    size_t bytes = n * hs_dtype_size(t);
    const char *a = in, *b = out;
    if (n > 0 && a != b && a < b + bytes && b < a + bytes)
        return hs_input_error(fn, 0, NULL, "in and out overlap partially (only in == out is allowed)");
    return HS_OK;
}

int hs_scan(hs_ctx *ctx, hs_dtype t, int exclusive, size_t n, const void *in, void *out)
{
    HS_CHECK(check_args(ctx, t, n, in, out, "hs_scan"));
    if (n == 0) return HS_OK;
    return HS_DISPATCH(ctx, hs_scan_apply_cpu(t, exclusive != 0, n, in, out),
                       hs_scan_apply_cuda(ctx->cuda, t, exclusive != 0, ctx->deterministic, n, in, out));
}

int hs_scan_ref(hs_ctx *ctx, hs_dtype t, int exclusive, size_t n, const void *in, void *out)
{
    HS_CHECK(check_args(ctx, t, n, in, out, "hs_scan_ref"));
    if (n == 0 && HS_ON_GPU(ctx)) return HS_OK;
    return HS_DISPATCH(ctx, HS_FAIL(HS_ERR_RUNTIME, "hs_scan_ref: the reference kernel exists on the CUDA backend only"),
                       hs_scan_apply_ref_cuda(ctx->cuda, t, exclusive != 0, n, in, out));
}

int hs_scan_cub(hs_ctx *ctx, hs_dtype t, int exclusive, size_t n, const void *in, void *out)
{
    HS_CHECK(check_args(ctx, t, n, in, out, "hs_scan_cub"));
    if (n == 0 && HS_ON_GPU(ctx)) return HS_OK;
    return HS_DISPATCH(ctx, HS_FAIL(HS_ERR_RUNTIME, "hs_scan_cub: CUB is only available on the CUDA backend"),
                       hs_scan_apply_cub_cuda(ctx->cuda, t, exclusive != 0, n, in, out));
}
