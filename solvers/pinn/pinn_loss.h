/* The PINN's pointwise losses on either backend: the PDE residual from the network's jets and the
 * misfit at initial/boundary points, each writing the loss's derivative for the backward pass. */
#ifndef HS_PINN_LOSS_H
#define HS_PINN_LOSS_H

#include "kernels/context.h"

/* out: the jet outputs of n collocation points, channels u, u_t, u_x, u_xx in blocks of n
 * (compute precision dt), derivatives with respect to the network inputs t' = t / st, x' = x / sx
 * (so u_t = st u_t', u_xx = sx^2 u_x'x').  Writes dout (same layout) = scale * d(r^2)/d(channel) and sq[i] = r_i^2
 * (fp64).  Local to the rank. */
int hs_pinn_residual_loss(hs_ctx *ctx, hs_dtype dt, int kind, double coef, double st, double sx, size_t n, double scale, const void *out,
                          void *dout, double *sq);
/* out: u at n data points; target (fp64).  dout = scale * 2 (u - target), sq[i] = (u - target)^2. */
int hs_pinn_data_loss(hs_ctx *ctx, hs_dtype dt, size_t n, double scale, const void *out, const double *target,
                      void *dout, double *sq);

#endif
