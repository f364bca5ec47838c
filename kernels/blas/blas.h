/* BLAS-1 (axpy, scal, dot, nrm2, ...), fused update helpers and GEMM on either backend.
 * Vectors live in the context's device memory; dtype is HS_F64 or HS_F32.  Nothing here is
 * collective: dot and nrm2 are local to the rank (all-reduce them for distributed vectors). */
#ifndef HS_BLAS_H
#define HS_BLAS_H

#include "kernels/context.h"

/* y = alpha x + y */
int hs_axpy(hs_ctx *ctx, hs_dtype t, size_t n, double alpha, const void *x, void *y);
/* y = alpha x + beta y */
int hs_axpby(hs_ctx *ctx, hs_dtype t, size_t n, double alpha, const void *x, double beta, void *y);
/* x = alpha x */
int hs_scal(hs_ctx *ctx, hs_dtype t, size_t n, double alpha, void *x);
/* y = x */
int hs_copy(hs_ctx *ctx, hs_dtype t, size_t n, const void *x, void *y);
/* x[i] = value */
int hs_fill(hs_ctx *ctx, hs_dtype t, size_t n, double value, void *x);
/* z = x .* y (element-wise product; z may alias x or y) */
int hs_pointwise_mult(hs_ctx *ctx, hs_dtype t, size_t n, const void *x, const void *y, void *z);
/* result = x . y, accumulated in double; bitwise reproducible run to run for a given n. */
int hs_dot(hs_ctx *ctx, hs_dtype t, size_t n, const void *x, const void *y, double *result);
/* result = ||x||_2, accumulated in double. */
int hs_nrm2(hs_ctx *ctx, hs_dtype t, size_t n, const void *x, double *result);

/* Conjugate-gradient update, fused into one pass (fp64):
 *   x += alpha p;  r -= alpha q;  *rr = r . r   (local to the rank) */
int hs_cg_update(hs_ctx *ctx, size_t n, double alpha, const double *p, const double *q, double *x, double *r,
                 double *rr);
/* Preconditioned variant: additionally z = dinv .* r, *rz = r . z and, when rr is not NULL,
 * *rr = r . r (for the stopping test), all in the same pass (Jacobi PCG). */
int hs_pcg_update(hs_ctx *ctx, size_t n, double alpha, const double *p, const double *q, const double *dinv,
                  double *x, double *r, double *z, double *rz, double *rr);

/* C = alpha op(A) op(B) + beta C, column-major as in BLAS; op is transposition when trans != 0.
 * cuBLAS on CUDA, OpenBLAS (or a blocked OpenMP loop without it) on CPU. */
int hs_gemm(hs_ctx *ctx, hs_dtype t, int transa, int transb, int m, int n, int k, double alpha, const void *A,
            int lda, const void *B, int ldb, double beta, void *C, int ldc);

/* Peer-library versions for the benchmark's ratios (CUDA only; HS_ERR_RUNTIME elsewhere):
 * cuBLAS ddot / dnrm2 on the same data. */
int hs_dot_cublas(hs_ctx *ctx, hs_dtype t, size_t n, const void *x, const void *y, double *result);
int hs_nrm2_cublas(hs_ctx *ctx, hs_dtype t, size_t n, const void *x, double *result);

#endif
