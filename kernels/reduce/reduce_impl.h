/* Backend entry points of the reduction family (kernels/reduce/reduce_cpu.c and kernels/reduce/reduce_cuda.cu). */
#ifndef HS_REDUCE_IMPL_H
#define HS_REDUCE_IMPL_H

#include <stddef.h>

#include "kernels/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The reductions the backends provide; SSQ is sum (scale * x_i)^2, AMAX is max |x_i|. */
typedef enum { HS_ROP_SUM, HS_ROP_MIN, HS_ROP_MAX, HS_ROP_ASUM, HS_ROP_SSQ, HS_ROP_AMAX } hs_rop;

/* n >= 1 in every backend call; x is F64 or F32. */
int hs_reduce_apply_cpu(hs_dtype t, hs_rop op, size_t n, const void *x, double scale, double *result);
/* want_max = 1: argmax, 0: argmin (first index; NaN wins, see reduce.h). */
int hs_reduce_argext_cpu(hs_dtype t, int want_max, size_t n, const void *x, size_t *index, double *value);

struct hs_cuda_ctx;
int hs_reduce_apply_cuda(struct hs_cuda_ctx *cu, hs_dtype t, hs_rop op, size_t n, const void *x, double scale,
                   double *result);
int hs_reduce_argext_cuda(struct hs_cuda_ctx *cu, hs_dtype t, int want_max, size_t n, const void *x, size_t *index,
                   double *value);
int hs_reduce_sum_cub_cuda(struct hs_cuda_ctx *cu, hs_dtype t, size_t n, const void *x, double *result);

#ifdef __cplusplus
}
#endif
#endif
