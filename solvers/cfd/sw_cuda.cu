// The shallow-water model's kernels on the GPU: one thread per cell of the box, the pointwise operators of sw_point.h.
#include "kernels/cuda_util.h"
#include "solvers/cfd/sw_point.h"

namespace {

template <bool STAGE>
__global__ void __launch_bounds__(256) sw_kernel(const hs_sw_launch L)
{
    const int64_t i = L.lo[0] + blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    const int64_t j = L.lo[1] + blockIdx.y * (int64_t)blockDim.y + threadIdx.y;
    if (i >= L.hi[0] || j >= L.hi[1]) return;
    if (STAGE) hs_sw_stage_point(&L, i, j);
    else hs_sw_cell_op(&L, i, j);
}

} // namespace

extern "C" int hs_sw_launch_cuda(struct hs_cuda_ctx *cu, const hs_sw_launch *L)
{
    const int64_t nx = L->hi[0] - L->lo[0], ny = L->hi[1] - L->lo[1];
    if (nx <= 0 || ny <= 0) return HS_OK;
    if (ny > 65535LL * 8) return HS_FAIL(HS_ERR_RUNTIME, "shallow_water: %lld rows exceed one launch", (long long)ny);
    dim3 block(32, 8, 1);
    dim3 grid((unsigned)((nx + 31) / 32), (unsigned)((ny + 7) / 8), 1);
    if (L->op == HS_SW_STAGE) sw_kernel<true><<<grid, block, 0, cu->stream>>>(*L);
    else sw_kernel<false><<<grid, block, 0, cu->stream>>>(*L);
    HS_CUDA_CHECK(cudaGetLastError());
    return HS_OK;
}
