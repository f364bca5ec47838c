/* Optimiser family, OpenMP backend: the fused Adam update. */
#include <math.h>

#include "kernels/error.h"
#include "kernels/optim_impl.h"

int hs_adam_update_cpu(size_t n, double lr, double beta1, double beta2, double eps, double bc1, double bc2,
                       double *x, const double *g, double *m, double *v)
{
#pragma omp parallel for schedule(static) if (n > 65536)
    for (size_t i = 0; i < n; i++) {
        double gi = g[i];
        double mi = beta1 * m[i] + (1.0 - beta1) * gi;
        double vi = beta2 * v[i] + (1.0 - beta2) * gi * gi;
        m[i] = mi;
        v[i] = vi;
        x[i] -= lr * (mi / bc1) / (sqrt(vi / bc2) + eps);
    }
    return HS_OK;
}
