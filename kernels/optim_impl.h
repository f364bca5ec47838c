/* Backend entry points of the optimiser family (kernels/optim_cpu.c, kernels/optim_cuda.cu). */
#ifndef HS_OPTIM_IMPL_H
#define HS_OPTIM_IMPL_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct hs_cuda_ctx;

/* One fused Adam update; bc1 = 1 - beta1^t and bc2 = 1 - beta2^t are the bias corrections. */
int hs_adam_update_cpu(size_t n, double lr, double beta1, double beta2, double eps, double bc1, double bc2,
                       double *x, const double *g, double *m, double *v);
int hs_adam_update_cuda(struct hs_cuda_ctx *cu, size_t n, double lr, double beta1, double beta2, double eps,
                        double bc1, double bc2, double *x, const double *g, double *m, double *v);

#ifdef __cplusplus
}
#endif
#endif
