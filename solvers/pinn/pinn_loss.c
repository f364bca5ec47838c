/* PINN losses: dispatch to the CPU or CUDA backend. */
#include "solvers/pinn/pinn_loss.h"

#include "solvers/pinn/pinn_loss_impl.h"
#include "kernels/dispatch.h"

int hs_pinn_residual_loss(hs_ctx *ctx, hs_dtype dt, int kind, double coef, double st, double sx, size_t n, double scale, const void *out,
                          void *dout, double *sq)
{
    if (n == 0) return HS_OK;
    return HS_DISPATCH(ctx, hs_pinn_residual_loss_cpu(dt, kind, coef, st, sx, n, scale, out, dout, sq),
                       hs_pinn_residual_loss_cuda(ctx->cuda, dt, kind, coef, st, sx, n, scale, out, dout, sq));
}

int hs_pinn_data_loss(hs_ctx *ctx, hs_dtype dt, size_t n, double scale, const void *out, const double *target,
                      void *dout, double *sq)
{
    if (n == 0) return HS_OK;
    return HS_DISPATCH(ctx, hs_pinn_data_loss_cpu(dt, n, scale, out, target, dout, sq),
                       hs_pinn_data_loss_cuda(ctx->cuda, dt, n, scale, out, target, dout, sq));
}
