/* Sort family: argument checks and dispatch to the CPU or CUDA backend. */
#include "kernels/reduce/sort.h"

#include "kernels/reduce/sort_impl.h"
#include "kernels/dispatch.h"

#include <stdlib.h>
#include <string.h>

static int check_args(hs_ctx *ctx, hs_dtype key, int with_values, hs_dtype value, size_t n, const void *keys,
                      const void *values, const char *fn)
{
    if (!ctx) return hs_input_error(fn, 0, NULL, "context is NULL");
    if (key != HS_U32 && key != HS_U64 && key != HS_I32 && key != HS_I64 && key != HS_F32 && key != HS_F64)
        return hs_input_error(fn, 0, "key", "key dtype must be u32, u64, i32, i64, f32 or f64, not %s",
                              hs_dtype_name(key));
    if (n > 0 && !keys) return hs_input_error(fn, 0, "keys", "keys is NULL with n = %zu", n);
    if (!with_values) return HS_OK;
    size_t vb = hs_dtype_size(value);
    if (vb != 4 && vb != 8)
        return hs_input_error(fn, 0, "value", "value dtype must be 4 or 8 bytes wide, not %s", hs_dtype_name(value));
    if (n > 0 && !values) return hs_input_error(fn, 0, "values", "values is NULL with n = %zu", n);
    return HS_OK;
}

static int sort_any(hs_ctx *ctx, hs_dtype key, size_t vb, size_t n, void *keys, void *values)
{
    if (n < 2) return HS_OK;
    int kind = hs_sort_key_kind(key);
    size_t kb = hs_dtype_size(key);
    return HS_DISPATCH(ctx, hs_sort_apply_cpu(kind, kb, vb, n, keys, values),
                       hs_sort_apply_cuda(ctx->cuda, kind, kb, vb, n, keys, values));
}

static int sort_ref(hs_ctx *ctx, hs_dtype key, size_t vb, size_t n, void *keys, void *values)
{
    if (n < 2 && HS_ON_GPU(ctx)) return HS_OK;
    return HS_DISPATCH(ctx, HS_FAIL(HS_ERR_RUNTIME, "hs_sort_*_ref: the reference kernels exist on the CUDA backend only"),
                       hs_sort_apply_ref_cuda(ctx->cuda, hs_sort_key_kind(key), hs_dtype_size(key), vb, n, keys, values));
}

int hs_sort_keys_ref(hs_ctx *ctx, hs_dtype key, size_t n, void *keys)
{
    HS_CHECK(check_args(ctx, key, 0, HS_U32, n, keys, NULL, "hs_sort_keys_ref"));
    return sort_ref(ctx, key, 0, n, keys, NULL);
}

int hs_sort_pairs_ref(hs_ctx *ctx, hs_dtype key, hs_dtype value, size_t n, void *keys, void *values)
{
    HS_CHECK(check_args(ctx, key, 1, value, n, keys, values, "hs_sort_pairs_ref"));
    return sort_ref(ctx, key, hs_dtype_size(value), n, keys, values);
}

int hs_sort_keys(hs_ctx *ctx, hs_dtype key, size_t n, void *keys)
{
    HS_CHECK(check_args(ctx, key, 0, HS_U32, n, keys, NULL, "hs_sort_keys"));
    return sort_any(ctx, key, 0, n, keys, NULL);
}

int hs_sort_pairs(hs_ctx *ctx, hs_dtype key, hs_dtype value, size_t n, void *keys, void *values)
{
    HS_CHECK(check_args(ctx, key, 1, value, n, keys, values, "hs_sort_pairs"));
    return sort_any(ctx, key, hs_dtype_size(value), n, keys, values);
}

static int sort_cub(hs_ctx *ctx, hs_dtype key, size_t vb, size_t n, void *keys, void *values)
{
    if (n < 2 && HS_ON_GPU(ctx)) return HS_OK;
    return HS_DISPATCH(ctx, HS_FAIL(HS_ERR_RUNTIME, "hs_sort_*_cub: CUB is only available on the CUDA backend"),
                       hs_sort_apply_cub_cuda(ctx->cuda, key, vb, n, keys, values));
}

int hs_sort_keys_cub(hs_ctx *ctx, hs_dtype key, size_t n, void *keys)
{
    HS_CHECK(check_args(ctx, key, 0, HS_U32, n, keys, NULL, "hs_sort_keys_cub"));
    return sort_cub(ctx, key, 0, n, keys, NULL);
}

int hs_sort_pairs_cub(hs_ctx *ctx, hs_dtype key, hs_dtype value, size_t n, void *keys, void *values)
{
    HS_CHECK(check_args(ctx, key, 1, value, n, keys, values, "hs_sort_pairs_cub"));
    return sort_cub(ctx, key, hs_dtype_size(value), n, keys, values);
}
