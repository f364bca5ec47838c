/* The Navier-Stokes model's kernels, CPU twin: OpenMP over planes and rows of the box, the pointwise operators of ns_point.h. */
#include "kernels/dispatch.h"
#include "kernels/error.h"
#include "solvers/cfd/ns_point.h"

static int is_cell_op(int op) { return op >= HS_NS_DIVERGENCE && op != HS_NS_CORRECT && op != HS_NS_FACE_BC; }

int hs_ns_launch_cpu(const hs_ns_launch *L)
{
    if (L->op == HS_NS_MOMENTUM_ALL) {
        for (int c = 0; c < L->ndim; c++) {
            hs_ns_launch one;
            hs_ns_part_launch(L, c, &one);
            HS_CHECK(hs_ns_launch_cpu(&one));
        }
        return HS_OK;
    }
    const int64_t nx = L->hi[0] - L->lo[0], ny = L->hi[1] - L->lo[1], nz = L->hi[2] - L->lo[2];
    if (nx <= 0 || ny <= 0 || nz <= 0) return HS_OK;
    const int cell = is_cell_op(L->op);
#pragma omp parallel for collapse(2) schedule(static) if (nx * ny * nz >= HS_CPU_SERIAL_BELOW)
    for (int64_t k = L->lo[2]; k < L->hi[2]; k++)
        for (int64_t j = L->lo[1]; j < L->hi[1]; j++)
            for (int64_t i = L->lo[0]; i < L->hi[0]; i++) {
                if (cell) hs_ns_cell_op(L, L->op, L->comp, i, j, k);
                else hs_ns_point_op(L, L->op, L->comp, i, j, k);
            }
    return HS_OK;
}
