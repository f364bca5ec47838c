/* The heat solver's operator, CPU twin (OpenMP over z-y rows, vectorised along x). */
#include "kernels/error.h"
#include "solvers/heat/heat_point.h"

int hs_heat_apply_cpu(const hs_heat_launch *L, const double *T, double *out)
{
    int64_t nx = L->hi[0] - L->lo[0], ny = L->hi[1] - L->lo[1], nz = L->hi[2] - L->lo[2];
    if (nx <= 0 || ny <= 0 || nz <= 0) return HS_OK;
#pragma omp parallel for collapse(2) schedule(static)
    for (int64_t k = L->lo[2]; k < L->hi[2]; k++)
        for (int64_t j = L->lo[1]; j < L->hi[1]; j++) {
            int64_t row = L->origin + k * L->stride[2] + j * L->stride[1];
            int64_t orow = L->out_contiguous ? (k * L->local[1] + j) * L->local[0] : row;
#pragma omp simd
            for (int64_t i = L->lo[0]; i < L->hi[0]; i++) out[orow + i] = hs_heat_combine(L, T, row + i);
        }
    return HS_OK;
}
