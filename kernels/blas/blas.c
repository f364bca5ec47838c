/* BLAS family: argument checks and dispatch to the CPU or CUDA backend. */
#include "kernels/blas/blas.h"

#include <math.h>

#include "kernels/blas/blas_impl.h"
#include "kernels/dispatch.h"

static int check_real(hs_dtype t, const char *fn)
{
    if (t != HS_F64 && t != HS_F32) return HS_FAIL(HS_ERR_RUNTIME, "%s: dtype %s not supported (f64 or f32)", fn, hs_dtype_name(t));
    return HS_OK;
}

static int elementwise(hs_ctx *ctx, hs_blas_op op, hs_dtype t, size_t n, double a, const void *x, double b, void *y,
                       const void *w)
{
    HS_CHECK(check_real(t, "blas"));
    if (n == 0) return HS_OK;
    return HS_DISPATCH(ctx, hs_blas_elementwise_cpu(op, t, n, a, x, b, y, w),
                       hs_blas_elementwise_cuda(ctx->cuda, op, t, n, a, x, b, y, w));
}

int hs_axpy(hs_ctx *ctx, hs_dtype t, size_t n, double alpha, const void *x, void *y)
{ return elementwise(ctx, HS_BLAS_AXPBY, t, n, alpha, x, 1.0, y, NULL); }
int hs_axpby(hs_ctx *ctx, hs_dtype t, size_t n, double alpha, const void *x, double beta, void *y)
{ return elementwise(ctx, HS_BLAS_AXPBY, t, n, alpha, x, beta, y, NULL); }
int hs_scal(hs_ctx *ctx, hs_dtype t, size_t n, double alpha, void *x)
{ return elementwise(ctx, HS_BLAS_SCAL, t, n, alpha, NULL, 0.0, x, NULL); }
int hs_copy(hs_ctx *ctx, hs_dtype t, size_t n, const void *x, void *y)
{ return elementwise(ctx, HS_BLAS_COPY, t, n, 1.0, x, 0.0, y, NULL); }
int hs_fill(hs_ctx *ctx, hs_dtype t, size_t n, double value, void *x)
{ return elementwise(ctx, HS_BLAS_FILL, t, n, value, NULL, 0.0, x, NULL); }
int hs_pointwise_mult(hs_ctx *ctx, hs_dtype t, size_t n, const void *x, const void *y, void *z)
{ return elementwise(ctx, HS_BLAS_MULT, t, n, 1.0, x, 0.0, z, y); }

int hs_dot(hs_ctx *ctx, hs_dtype t, size_t n, const void *x, const void *y, double *result)
{
    HS_CHECK(check_real(t, "hs_dot"));
    *result = 0.0;
    if (n == 0) return HS_OK;
    return HS_DISPATCH(ctx, hs_blas_dot_cpu(t, n, x, y, result), hs_blas_dot_cuda(ctx->cuda, t, n, x, y, result));
}

int hs_nrm2(hs_ctx *ctx, hs_dtype t, size_t n, const void *x, double *result)
{
    /* x.x in double is safe from overflow for any float data and for doubles below 1e154 */
    double s = 0;
    HS_CHECK(hs_dot(ctx, t, n, x, x, &s));
    *result = sqrt(s);
    return HS_OK;
}

int hs_cg_update(hs_ctx *ctx, size_t n, double alpha, const double *p, const double *q, double *x, double *r,
                 double *rr)
{
    double sums[2] = {0.0, 0.0};
    if (n > 0)
        HS_CHECK(HS_DISPATCH(ctx, hs_blas_cg_update_cpu(n, alpha, p, q, NULL, x, r, NULL, sums),
                             hs_blas_cg_update_cuda(ctx->cuda, n, alpha, p, q, NULL, x, r, NULL, sums)));
    *rr = sums[0];
    return HS_OK;
}

int hs_pcg_update(hs_ctx *ctx, size_t n, double alpha, const double *p, const double *q, const double *dinv,
                  double *x, double *r, double *z, double *rz, double *rr)
{
    double sums[2] = {0.0, 0.0};
    if (n > 0)
        HS_CHECK(HS_DISPATCH(ctx, hs_blas_cg_update_cpu(n, alpha, p, q, dinv, x, r, z, sums),
                             hs_blas_cg_update_cuda(ctx->cuda, n, alpha, p, q, dinv, x, r, z, sums)));
    *rz = sums[0];
    if (rr) *rr = sums[1];
    return HS_OK;
}

int hs_gemm(hs_ctx *ctx, hs_dtype t, int transa, int transb, int m, int n, int k, double alpha, const void *A,
            int lda, const void *B, int ldb, double beta, void *C, int ldc)
{
    HS_CHECK(check_real(t, "hs_gemm"));
    if (m < 0 || n < 0 || k < 0 || ldc < (m > 1 ? m : 1) || lda < ((transa ? k : m) > 1 ? (transa ? k : m) : 1) ||
        ldb < ((transb ? n : k) > 1 ? (transb ? n : k) : 1))
        return HS_FAIL(HS_ERR_RUNTIME, "hs_gemm: inconsistent sizes m=%d n=%d k=%d lda=%d ldb=%d ldc=%d", m, n, k,
                       lda, ldb, ldc);
    if (m == 0 || n == 0) return HS_OK;
    return HS_DISPATCH(ctx, hs_blas_gemm_cpu(t, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc),
                       hs_blas_gemm_cuda(ctx->cuda, t, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc));
}

int hs_dot_cublas(hs_ctx *ctx, hs_dtype t, size_t n, const void *x, const void *y, double *result)
{
    return HS_DISPATCH(ctx, HS_FAIL(HS_ERR_RUNTIME, "hs_dot_cublas needs the CUDA backend"),
                       hs_blas_dot_cublas_cuda(ctx->cuda, t, n, x, y, result));
}

int hs_nrm2_cublas(hs_ctx *ctx, hs_dtype t, size_t n, const void *x, double *result)
{
    return HS_DISPATCH(ctx, HS_FAIL(HS_ERR_RUNTIME, "hs_nrm2_cublas needs the CUDA backend"),
                       hs_blas_nrm2_cublas_cuda(ctx->cuda, t, n, x, result));
}
