/* The shallow-water model's kernels, CPU twin: OpenMP over the rows of the box, the pointwise operators of sw_point.h. */
#include "kernels/error.h"
#include "solvers/cfd/sw_point.h"

int hs_sw_launch_cpu(const hs_sw_launch *L)
{
    if (L->hi[0] <= L->lo[0] || L->hi[1] <= L->lo[1]) return HS_OK;
    const int stage = L->op == HS_SW_STAGE;
#pragma omp parallel for schedule(static)
    for (int64_t j = L->lo[1]; j < L->hi[1]; j++)
        for (int64_t i = L->lo[0]; i < L->hi[0]; i++) {
            if (stage) hs_sw_stage_point(L, i, j);
            else hs_sw_cell_op(L, i, j);
        }
    return HS_OK;
}
