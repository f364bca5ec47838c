/* CPU (OpenMP) backend of the multigrid family: one loop over the level's cells running the pointwise operation of mg_point.h. */
#include "kernels/error.h"
#include "kernels/mg/mg_point.h"

/* Below this many cells a launch runs on one thread: coarse levels are smaller than a fork costs. */
#define PAR_MIN 16384

int hs_mg_launch_cpu(const hs_mg_launch *L)
{
    const int64_t n0 = L->n[0], n1 = L->n[1], n2 = L->n[2];
    if (n0 <= 0 || n1 <= 0 || n2 <= 0) return HS_OK;
#pragma omp parallel for collapse(2) schedule(static) if (n0 * n1 * n2 > PAR_MIN)
    for (int64_t k = 0; k < n2; k++)
        for (int64_t j = 0; j < n1; j++)
            for (int64_t i = 0; i < n0; i++) hs_mg_cell(L, i, j, k);
    return HS_OK;
}
