/* Backend entry points of the BLAS family (kernels/blas/blas_cpu.c, kernels/blas/blas_cuda.cu). */
#ifndef HS_BLAS_IMPL_H
#define HS_BLAS_IMPL_H

#include <stddef.h>

#include "kernels/types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct hs_cuda_ctx;

/* op codes of the element-wise family, shared by both backends */
typedef enum { HS_BLAS_AXPBY, HS_BLAS_SCAL, HS_BLAS_COPY, HS_BLAS_FILL, HS_BLAS_MULT } hs_blas_op;

int hs_blas_elementwise_cpu(hs_blas_op op, hs_dtype t, size_t n, double a, const void *x, double b, void *y,
                            const void *w);
int hs_blas_dot_cpu(hs_dtype t, size_t n, const void *x, const void *y, double *result);
/* sums[0] = r.z (r.r without dinv), sums[1] = r.r */
int hs_blas_cg_update_cpu(size_t n, double alpha, const double *p, const double *q, const double *dinv, double *x,
                     double *r, double *z, double sums[2]);
int hs_blas_gemm_cpu(hs_dtype t, int ta, int tb, int m, int n, int k, double alpha, const void *A, int lda,
                const void *B, int ldb, double beta, void *C, int ldc);

int hs_blas_elementwise_cuda(struct hs_cuda_ctx *cu, hs_blas_op op, hs_dtype t, size_t n, double a, const void *x,
                             double b, void *y, const void *w);
int hs_blas_dot_cuda(struct hs_cuda_ctx *cu, hs_dtype t, size_t n, const void *x, const void *y, double *result);
int hs_blas_cg_update_cuda(struct hs_cuda_ctx *cu, size_t n, double alpha, const double *p, const double *q,
                      const double *dinv, double *x, double *r, double *z, double sums[2]);
int hs_blas_gemm_cuda(struct hs_cuda_ctx *cu, hs_dtype t, int ta, int tb, int m, int n, int k, double alpha,
                 const void *A, int lda, const void *B, int ldb, double beta, void *C, int ldc);
int hs_blas_dot_cublas_cuda(struct hs_cuda_ctx *cu, hs_dtype t, size_t n, const void *x, const void *y, double *result);
int hs_blas_nrm2_cublas_cuda(struct hs_cuda_ctx *cu, hs_dtype t, size_t n, const void *x, double *result);

#ifdef __cplusplus
}
#endif
#endif
