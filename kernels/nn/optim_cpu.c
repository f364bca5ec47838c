/* Optimiser family, OpenMP backend: the fused Adam update. */
#include "kernels/error.h"
#include "kernels/nn/optim_impl.h"

int hs_adam_update_cpu(size_t n, double lr, double beta1, double beta2, double eps, double bc1, double bc2, double wd,
                       double gscale, double *x, const double *g, double *m, double *v)
{
#pragma omp parallel for schedule(static) if (n > 65536)
    for (size_t i = 0; i < n; i++) {
        hs_adam_point(i, lr, beta1, beta2, eps, bc1, bc2, wd, gscale, x, g, m, v);
    }
    return HS_OK;
}
