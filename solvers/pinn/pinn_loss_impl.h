/* Backend entry points of the PINN losses (pinn_loss_cpu.c, pinn_loss_cuda.cu). */
#ifndef HS_PINN_LOSS_IMPL_H
#define HS_PINN_LOSS_IMPL_H

#include <stddef.h>

#include "kernels/types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct hs_cuda_ctx;

int hs_pinn_residual_loss_cpu(hs_dtype dt, int kind, double coef, double st, double sx, size_t n, double scale, const void *out, void *dout,
                              double *sq);
int hs_pinn_data_loss_cpu(hs_dtype dt, size_t n, double scale, const void *out, const double *target, void *dout,
                          double *sq);
int hs_pinn_residual_loss_cuda(struct hs_cuda_ctx *cu, hs_dtype dt, int kind, double coef, double st, double sx, size_t n, double scale,
                               const void *out, void *dout, double *sq);
int hs_pinn_data_loss_cuda(struct hs_cuda_ctx *cu, hs_dtype dt, size_t n, double scale, const void *out,
                           const double *target, void *dout, double *sq);

#ifdef __cplusplus
}
#endif
#endif
