/* Backend entry points of the optimiser family (kernels/nn/optim_cpu.c, kernels/nn/optim_cuda.cu). */
#ifndef HS_OPTIM_IMPL_H
#define HS_OPTIM_IMPL_H

#include <stddef.h>
#include <math.h>

#include "kernels/hd.h"

#ifdef __cplusplus
extern "C" {
#endif

struct hs_cuda_ctx;

/* One fused Adam(W) update; bc1 = 1 - beta1^t and bc2 = 1 - beta2^t are the bias corrections, wd
 * the decoupled weight decay and gscale the gradient's factor. */
int hs_adam_update_cpu(size_t n, double lr, double beta1, double beta2, double eps, double bc1, double bc2, double wd,
                       double gscale, double *x, const double *g, double *m, double *v);
int hs_adam_update_cuda(struct hs_cuda_ctx *cu, size_t n, double lr, double beta1, double beta2, double eps,
                        double bc1, double bc2, double wd, double gscale, double *x, const double *g, double *m,
                        double *v);

#ifdef __cplusplus
}
#endif

/* The Adam(W) update of element i, shared by both backends (wd = 0, gscale = 1: plain Adam, with
 * the same operations as before AdamW existed, so earlier results are kept bit for bit). */
HS_HD void hs_adam_point(size_t i, double lr, double beta1, double beta2, double eps, double bc1, double bc2, double wd,
                         double gscale, double *x, const double *g, double *m, double *v)
{
    double gi = gscale == 1.0 ? g[i] : gscale * g[i];
    double mi = beta1 * m[i] + (1.0 - beta1) * gi;
    double vi = beta2 * v[i] + (1.0 - beta2) * gi * gi;
    m[i] = mi;
    v[i] = vi;
    double xi = x[i];
    if (wd != 0.0) xi -= lr * wd * xi;
    x[i] = xi - lr * (mi / bc1) / (sqrt(vi / bc2) + eps);
}

#endif
