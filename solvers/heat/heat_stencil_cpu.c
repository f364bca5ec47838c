/* The heat solver's grid kernels, CPU twin (OpenMP over z-y rows, vectorised along x). */
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

int hs_heat_ghosts_cpu(const hs_heat_ghosts *G, double *T)
{
    /* the face is the plane dim = 0 (side 0) or local-1 (side 1); ghosts extend hw layers out,
     * over the full extent of the other dimensions, their ghosts included */
    int d = G->dim, e1 = (d + 1) % 3, e2 = (d + 2) % 3;
    int64_t n1 = G->local[e1] + 2 * G->hw[e1], n2 = G->local[e2] + 2 * G->hw[e2];
#pragma omp parallel for collapse(2) schedule(static)
    for (int64_t b = 0; b < n2; b++)
        for (int64_t a = 0; a < n1; a++) {
            int64_t base = G->origin + (a - G->hw[e1]) * G->stride[e1] + (b - G->hw[e2]) * G->stride[e2];
            for (int i = 0; i < G->hw[d]; i++) {
                int64_t in = G->side ? G->local[d] - 1 - i : i, gh = G->side ? G->local[d] + i : -1 - i;
                T[base + gh * G->stride[d]] = hs_heat_ghost_value(G->kind, T[base + in * G->stride[d]], i, G->value, G->dx);
            }
        }
    return HS_OK;
}

int hs_heat_load_cpu(const int64_t stride[3], int64_t origin, const int64_t local[3], const double *src, double *T)
{
#pragma omp parallel for collapse(2) schedule(static)
    for (int64_t k = 0; k < local[2]; k++)
        for (int64_t j = 0; j < local[1]; j++) {
            const double *s = src + (k * local[1] + j) * local[0];
            double *t = T + origin + k * stride[2] + j * stride[1];
            for (int64_t i = 0; i < local[0]; i++) t[i] = s[i];
        }
    return HS_OK;
}
