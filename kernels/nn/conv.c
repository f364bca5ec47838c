/* Convolution family: argument checks and dispatch to the CPU (im2col + GEMM) or CUDA (cuDNN) backend. */
#include "kernels/nn/conv.h"

#include <stdlib.h>

#include "kernels/dispatch.h"
#include "kernels/error.h"
#include "kernels/nn/conv_impl.h"

static int is_real(hs_dtype t) { return t == HS_F64 || t == HS_F32 || t == HS_BF16 || t == HS_F16; }

hs_dtype hs_conv_acc_type(hs_dtype t) { return t == HS_F64 ? HS_F64 : HS_F32; }

int hs_conv_create(hs_ctx *ctx, hs_dtype t, int cin, int cout, int kh, int kw, int h, int w, hs_conv **out)
{
    *out = NULL;
    if (!is_real(t)) return HS_FAIL(HS_ERR_RUNTIME, "hs_conv_create: element type %s not supported", hs_dtype_name(t));
    if (cin < 1 || cout < 1 || h < 1 || w < 1 || kh < 1 || kw < 1 || kh % 2 == 0 || kw % 2 == 0)
        return HS_FAIL(HS_ERR_RUNTIME, "hs_conv_create: bad sizes cin %d cout %d kernel %dx%d image %dx%d (odd kernels)",
                       cin, cout, kh, kw, h, w);
    hs_conv *c = calloc(1, sizeof *c);
    if (!c) return HS_FAIL(HS_ERR_RUNTIME, "hs_conv_create: out of host memory");
    c->ctx = ctx, c->deterministic = ctx->deterministic, c->t = t, c->cin = cin, c->cout = cout, c->kh = kh, c->kw = kw, c->h = h, c->w = w;
    int rc = HS_DISPATCH(ctx, hs_conv_create_cpu(c), hs_conv_create_cuda(ctx->cuda, c));
    if (rc != HS_OK) {
        hs_conv_destroy(c);
        return hs_error_trace(rc, __FILE__, __LINE__, "hs_conv_create");
    }
    *out = c;
    return HS_OK;
}

void hs_conv_destroy(hs_conv *c)
{
    if (!c) return;
    HS_DISPATCH(c->ctx, hs_conv_destroy_cpu(c), hs_conv_destroy_cuda(c->ctx->cuda, c));
    free(c);
}

size_t hs_conv_weights(const hs_conv *c) { return (size_t)c->cout * c->cin * c->kh * c->kw; }

static int check_n(const hs_conv *c, int n, double beta, const char *what)
{
    if (n < 0) return HS_FAIL(HS_ERR_RUNTIME, "%s: %d images", what, n);
    if (beta != 0.0 && beta != 1.0) return HS_FAIL(HS_ERR_RUNTIME, "%s: beta must be 0 or 1 (got %g)", what, beta);
    return HS_OK;
}

int hs_conv_forward(hs_conv *c, int n, const void *x, const void *w, double beta, void *y)
{
    HS_CHECK(check_n(c, n, beta, "hs_conv_forward"));
    if (n == 0) return HS_OK;
    return HS_DISPATCH(c->ctx, hs_conv_forward_cpu(c, n, x, w, beta, y),
                       hs_conv_forward_cuda(c->ctx->cuda, c, n, x, w, beta, y));
}

int hs_conv_backward_data(hs_conv *c, int n, const void *dy, const void *w, double beta, void *dx)
{
    HS_CHECK(check_n(c, n, beta, "hs_conv_backward_data"));
    if (n == 0) return HS_OK;
    return HS_DISPATCH(c->ctx, hs_conv_backward_data_cpu(c, n, dy, w, beta, dx),
                       hs_conv_backward_data_cuda(c->ctx->cuda, c, n, dy, w, beta, dx));
}

int hs_conv_backward_filter(hs_conv *c, int n, const void *x, const void *dy, double beta, void *dw)
{
    HS_CHECK(check_n(c, n, beta, "hs_conv_backward_filter"));
    if (n == 0 && beta == 1.0) return HS_OK;
    return HS_DISPATCH(c->ctx, hs_conv_backward_filter_cpu(c, n, x, dy, beta, dw),
                       hs_conv_backward_filter_cuda(c->ctx->cuda, c, n, x, dy, beta, dw));
}

static int check_ew(hs_dtype t, int n, int ch, int hw, const char *what)
{
    if (!is_real(t)) return HS_FAIL(HS_ERR_RUNTIME, "%s: element type %s not supported", what, hs_dtype_name(t));
    if (n < 0 || ch < 1 || hw < 1) return HS_FAIL(HS_ERR_RUNTIME, "%s: bad sizes n %d ch %d hw %d", what, n, ch, hw);
    return HS_OK;
}

int hs_conv_bias_add(hs_ctx *ctx, hs_dtype t, int n, int ch, int hw, const void *b, void *y)
{
    HS_CHECK(check_ew(t, n, ch, hw, "hs_conv_bias_add"));
    if (n == 0) return HS_OK;
    return HS_DISPATCH(ctx, hs_conv_bias_add_cpu(t, n, ch, hw, b, y), hs_conv_bias_add_cuda(ctx->cuda, t, n, ch, hw, b, y));
}

int hs_conv_bias_grad(hs_ctx *ctx, hs_dtype t, int n, int ch, int hw, const void *dy, double beta, void *db)
{
    HS_CHECK(check_ew(t, n, ch, hw, "hs_conv_bias_grad"));
    return HS_DISPATCH(ctx, hs_conv_bias_grad_cpu(t, n, ch, hw, dy, beta, db),
                       hs_conv_bias_grad_cuda(ctx->cuda, t, n, ch, hw, dy, beta, db));
}

int hs_conv_cast(hs_ctx *ctx, hs_dtype st, hs_dtype dt, size_t n, const void *src, int accumulate, void *dst)
{
    if (!is_real(st) || !is_real(dt))
        return HS_FAIL(HS_ERR_RUNTIME, "hs_conv_cast: %s -> %s not supported", hs_dtype_name(st), hs_dtype_name(dt));
    if (n == 0) return HS_OK;
    return HS_DISPATCH(ctx, hs_conv_cast_cpu(st, dt, n, src, accumulate, dst),
                       hs_conv_cast_cuda(ctx->cuda, st, dt, n, src, accumulate, dst));
}

int hs_conv_lstm_forward(hs_ctx *ctx, hs_dtype t, int n, int ch, int hw, void *z, const void *zadd, const void *b,
                         const void *c_prev, void *c, void *h)
{
    HS_CHECK(check_ew(t, n, ch, hw, "hs_conv_lstm_forward"));
    if (n == 0) return HS_OK;
    return HS_DISPATCH(ctx, hs_conv_lstm_forward_cpu(t, n, ch, hw, z, zadd, b, c_prev, c, h),
                       hs_conv_lstm_forward_cuda(ctx->cuda, t, n, ch, hw, z, zadd, b, c_prev, c, h));
}

int hs_conv_lstm_backward(hs_ctx *ctx, hs_dtype t, int n, int ch, int hw, void *gates, const void *c_prev,
                          const void *c, const void *dh, void *dc)
{
    HS_CHECK(check_ew(t, n, ch, hw, "hs_conv_lstm_backward"));
    if (n == 0) return HS_OK;
    return HS_DISPATCH(ctx, hs_conv_lstm_backward_cpu(t, n, ch, hw, gates, c_prev, c, dh, dc),
                       hs_conv_lstm_backward_cuda(ctx->cuda, t, n, ch, hw, gates, c_prev, c, dh, dc));
}

const char *hs_conv_engine(const hs_ctx *ctx)
{
    return HS_DISPATCH(ctx, HS_HAVE_OPENBLAS ? "im2col+openblas" : "im2col+gemm", hs_conv_engine_cuda());
}
