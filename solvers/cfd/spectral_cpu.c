/* The spectral CFD model's kernels, CPU twin: OpenMP over the modes (or grid points), the pointwise operations of spectral_point.h. */
#include "kernels/dispatch.h"
#include "kernels/error.h"
#include "solvers/cfd/spectral_point.h"

int hs_spectral_launch_cpu(const hs_spectral_launch *L)
{
    if (L->op == HS_SP_PRODUCTS) {
        const int64_t n = L->count;
#pragma omp parallel for schedule(static) if (n >= HS_CPU_SERIAL_BELOW)
        for (int64_t e = 0; e < n; e++) hs_spectral_products(L, e);
        return HS_OK;
    }
    const int64_t planes = L->planes, ny = L->ny;
    if (planes <= 0 || ny <= 0) return HS_OK;
    if (L->op == HS_SP_STAGE) {
#pragma omp parallel for collapse(2) schedule(static) if (planes * ny >= HS_CPU_SERIAL_BELOW)
        for (int64_t p = 0; p < planes; p++)
            for (int64_t i = 0; i < ny; i++) hs_spectral_stage(L, p, i);
        return HS_OK;
    }
#pragma omp parallel for collapse(2) schedule(static) if (planes * ny >= HS_CPU_SERIAL_BELOW)
    for (int64_t p = 0; p < planes; p++)
        for (int64_t i = 0; i < ny; i++) hs_spectral_point(L, p, i);
    return HS_OK;
}
