// The Navier-Stokes model's kernels on the GPU: one thread per point of the box, the pointwise operators of ns_point.h.
#include "kernels/cuda_util.h"
#include "solvers/cfd/ns_point.h"

namespace {

// At most 64 registers (4 blocks of 256 per SM, no spills): the kernel is latency-bound (ncu on the
// H200 at 80 registers: 33% occupancy, 24-34% of DRAM bandwidth, 50-56% of the SM's issue rate).
// COMP is L.comp as a constant: with it and the unrolled dimension loops of ns_point.h every index
// into the launch record is known at compile time and the record stays in parameter space.
// Evaluating each momentum face flux once instead of twice (the high face from the next lane by a
// shuffle, from the next row through shared memory, carried along z) measured no faster on the H200
// (4096^2: 15.4% and 18.4% of copy against 20.9%; 256^3: 18.2% and 20.9% against 20.5%): the fp64
// limiter work is not what holds it.
template <bool CELL, int COMP>
__global__ void __launch_bounds__(256, 4) ns_kernel(const hs_ns_launch L)
{
    const int64_t i = L.lo[0] + blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    const int64_t j = L.lo[1] + blockIdx.y * (int64_t)blockDim.y + threadIdx.y;
    if (i >= L.hi[0] || j >= L.hi[1]) return;
    for (int64_t k = L.lo[2] + blockIdx.z; k < L.hi[2]; k += gridDim.z) {
        if (CELL) hs_ns_cell_op(&L, COMP, i, j, k);
        else hs_ns_point_op(&L, COMP, i, j, k);
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
    switch ((cell ? 3 : 0) + L->comp) {
    case 0: ns_kernel<false, 0><<<grid, block, 0, cu->stream>>>(*L); break;
    case 1: ns_kernel<false, 1><<<grid, block, 0, cu->stream>>>(*L); break;
    case 2: ns_kernel<false, 2><<<grid, block, 0, cu->stream>>>(*L); break;
    case 3: ns_kernel<true, 0><<<grid, block, 0, cu->stream>>>(*L); break;
    case 4: ns_kernel<true, 1><<<grid, block, 0, cu->stream>>>(*L); break;
    case 5: ns_kernel<true, 2><<<grid, block, 0, cu->stream>>>(*L); break;
    default: return HS_FAIL(HS_ERR_RUNTIME, "navier_stokes kernel: component %d out of range", L->comp);
    }
    HS_CUDA_CHECK(cudaGetLastError());
    return HS_OK;
}
