// CUDA backend of the multigrid family: one thread per cell of the level, the pointwise operations of mg_point.h, a kernel per operation.
#include "kernels/cuda_util.h"
#include "kernels/mg/mg_point.h"

namespace {

// OP is the launch's operation as a constant: each kernel holds only its own path, which keeps the
// stencil kernels' registers (and so the occupancy) those of the stencil, not of the largest path.
template <int OP>
__global__ void __launch_bounds__(256) mg_kernel(const hs_mg_launch L)
{
    const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    const int64_t j = blockIdx.y * (int64_t)blockDim.y + threadIdx.y;
    if (i >= L.n[0] || j >= L.n[1]) return;
    for (int64_t k = blockIdx.z; k < L.n[2]; k += gridDim.z) hs_mg_cell(&L, OP, i, j, k);
}

template <int OP>
int launch(struct hs_cuda_ctx *cu, const hs_mg_launch *L, dim3 grid, dim3 block)
{
    mg_kernel<OP><<<grid, block, 0, cu->stream>>>(*L);
    HS_CUDA_LAUNCH_CHECK("mg_kernel");
    return HS_OK;
}

} // namespace

extern "C" int hs_mg_launch_cuda(struct hs_cuda_ctx *cu, const hs_mg_launch *L)
{
    const int64_t nx = L->n[0], ny = L->n[1], nz = L->n[2];
    if (nx <= 0 || ny <= 0 || nz <= 0) return HS_OK;
    // rows of 32 cells along x (coalesced), 8 rows per block; short x rows on coarse levels take
    // more rows per block instead, so that a block still has 256 threads of work
    const int bx = nx >= 32 ? 32 : nx >= 16 ? 16 : nx >= 8 ? 8 : 4, by = 256 / bx;
    dim3 block((unsigned)bx, (unsigned)by, 1);
    dim3 grid((unsigned)((nx + bx - 1) / bx), (unsigned)((ny + by - 1) / by), (unsigned)(nz < 65535 ? nz : 65535));
    switch (L->op) {
    case HS_MG_CHEB: return launch<HS_MG_CHEB>(cu, L, grid, block);
    case HS_MG_RESIDUAL: return launch<HS_MG_RESIDUAL>(cu, L, grid, block);
    case HS_MG_RESIDUAL_C: return launch<HS_MG_RESIDUAL_C>(cu, L, grid, block);
    case HS_MG_APPLY: return launch<HS_MG_APPLY>(cu, L, grid, block);
    case HS_MG_RESTRICT: return launch<HS_MG_RESTRICT>(cu, L, grid, block);
    case HS_MG_PROLONG: return launch<HS_MG_PROLONG>(cu, L, grid, block);
    case HS_MG_STORE: return launch<HS_MG_STORE>(cu, L, grid, block);
    case HS_MG_ADD: return launch<HS_MG_ADD>(cu, L, grid, block);
    case HS_MG_SHIFT_C: return launch<HS_MG_SHIFT_C>(cu, L, grid, block);
    default: return HS_FAIL(HS_ERR_RUNTIME, "multigrid: unknown operation %d", L->op);
    }
}
