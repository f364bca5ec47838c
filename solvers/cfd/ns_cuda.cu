// The Navier-Stokes model's kernels on the GPU: one thread per point of the box, the pointwise operators of ns_point.h.
#include "kernels/cuda_util.h"
#include "solvers/cfd/ns_point.h"

namespace {

template <bool CELL>
__global__ void __launch_bounds__(256) ns_kernel(const hs_ns_launch L)
{
    const int64_t i = L.lo[0] + blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    const int64_t j = L.lo[1] + blockIdx.y * (int64_t)blockDim.y + threadIdx.y;
    if (i >= L.hi[0] || j >= L.hi[1]) return;
    for (int64_t k = L.lo[2] + blockIdx.z; k < L.hi[2]; k += gridDim.z) {
        if (CELL) hs_ns_cell_op(&L, i, j, k);
        else hs_ns_point_op(&L, i, j, k);
    }
}

} // namespace

extern "C" int hs_ns_launch_cuda(struct hs_cuda_ctx *cu, const hs_ns_launch *L)
{
    const int64_t nx = L->hi[0] - L->lo[0], ny = L->hi[1] - L->lo[1], nz = L->hi[2] - L->lo[2];
    if (nx <= 0 || ny <= 0 || nz <= 0) return HS_OK;
    const bool cell = L->op >= HS_NS_DIVERGENCE && L->op != HS_NS_CORRECT && L->op != HS_NS_FACE_BC;
    dim3 block(32, 8, 1);
    dim3 grid((unsigned)((nx + 31) / 32), (unsigned)((ny + 7) / 8), (unsigned)(nz < 65535 ? nz : 65535));
    if (cell) ns_kernel<true><<<grid, block, 0, cu->stream>>>(*L);
    else ns_kernel<false><<<grid, block, 0, cu->stream>>>(*L);
    HS_CUDA_CHECK(cudaGetLastError());
    return HS_OK;
}
