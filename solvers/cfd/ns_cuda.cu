// The Navier-Stokes model's kernels on the GPU: one thread per point of the box, the pointwise operators of ns_point.h.
#include "kernels/cuda_util.h"
#include "kernels/fft/poisson_point.h"
#include "kernels/hd.h"
#include "solvers/cfd/ns_impl.h"

// The pointwise operators twice: with 64-bit index arithmetic, and with 32-bit where the launch
// allows it (hs_ns_launch.index32); ns_point.h's own includes are already in at file scope.
namespace ns64 {
#include "solvers/cfd/ns_point.h"
}
#undef HS_NS_POINT_H
#define HS_NS_INDEX int32_t
namespace ns32 {
#include "solvers/cfd/ns_point.h"
}
#undef HS_NS_INDEX

namespace {

// Registers for the momentum and scalar updates capped (see ns_kernel): the
// kernel is latency-bound (ncu on the H200 at 80 registers: 33% occupancy, 24-34% of DRAM bandwidth,
// 50-56% of the SM's issue rate).  OP and COMP are L.op and L.comp as constants: each operation is a
// kernel of its own, so that the light ones (divergence, the projection's correction, boundary
// faces, diagnostics) are not held to the registers and occupancy of the momentum update (when they
// shared one kernel, ncu on two of them in a 4096^2 run: 56-60 registers, 40-43% occupancy, 37-43%
// of DRAM bandwidth for a few loads a point); and with the unrolled dimension loops of ns_point.h
// every index into the launch record is known at compile time, so the record stays in parameter
// space.  Evaluating each momentum face flux once instead of twice (the high face from the next
// lane by a shuffle, from the next row through shared memory, carried along z) measured no faster
// on the H200 (4096^2: 15.4% and 18.4% of copy against 20.9%; 256^3: 18.2% and 20.9% against
// 20.5%): the fp64 limiter work is not what holds it.
constexpr bool heavy(int op) { return op == HS_NS_MOMENTUM || op == HS_NS_SCALAR; }
constexpr bool cell_op(int op) { return op >= HS_NS_DIVERGENCE && op != HS_NS_CORRECT && op != HS_NS_FACE_BC; }

// I: the index type (hs_ns_launch.index32); NDIM: 2 or 3 when the launch's ndim is known to be that
// (the dimension loops then unroll to it: the 2D momentum kernel's SASS 1349 -> 981 lines), 0 any.
// The momentum and scalar updates are held to 48 registers (5 blocks an SM; no spills in 2D, 8-16
// bytes in 3D): H200, the momentum stage at 39.1% of copy against 33.3% at 64 registers (4096^2)
// and 35.3% against 30.8% (256^3) (2026-12-04).
template <typename I, int OP, int COMP, int NDIM>
__global__ void __launch_bounds__(256, heavy(OP) ? 5 : 1) ns_kernel(const hs_ns_launch L)
{
    if (NDIM) __builtin_assume(L.ndim == NDIM);
    const I i = (I)L.lo[0] + (I)(blockIdx.x * blockDim.x + threadIdx.x);
    const I j = (I)L.lo[1] + (I)(blockIdx.y * blockDim.y + threadIdx.y);
    if (i >= (I)L.hi[0] || j >= (I)L.hi[1]) return;
    for (I k = (I)L.lo[2] + (I)blockIdx.z; k < (I)L.hi[2]; k += (I)gridDim.z) {
        if constexpr (sizeof(I) == 4) {
            if (cell_op(OP)) ns32::hs_ns_cell_op(&L, OP, COMP, i, j, k);
            else ns32::hs_ns_point_op(&L, OP, COMP, i, j, k);
        } else {
            if (cell_op(OP)) ns64::hs_ns_cell_op(&L, OP, COMP, i, j, k);
            else ns64::hs_ns_point_op(&L, OP, COMP, i, j, k);
        }
    }
}

template <int OP, int COMP>
void launch_one(cudaStream_t st, const hs_ns_launch *L, dim3 grid, dim3 block)
{
    if (L->index32 && L->ndim == 2) ns_kernel<int32_t, OP, COMP, 2><<<grid, block, 0, st>>>(*L);
    else if (L->index32) ns_kernel<int32_t, OP, COMP, 3><<<grid, block, 0, st>>>(*L);
    else ns_kernel<int64_t, OP, COMP, 0><<<grid, block, 0, st>>>(*L);
}

// An operation that works on one component (comp 0..2).
template <int OP>
int launch_comp(cudaStream_t st, const hs_ns_launch *L, dim3 grid, dim3 block)
{
    switch (L->comp) {
    case 0: launch_one<OP, 0>(st, L, grid, block); return HS_OK;
    case 1: launch_one<OP, 1>(st, L, grid, block); return HS_OK;
    case 2: launch_one<OP, 2>(st, L, grid, block); return HS_OK;
    default: return HS_FAIL(HS_ERR_RUNTIME, "navier_stokes kernel: component %d out of range", L->comp);
    }
}

} // namespace

extern "C" int hs_ns_launch_cuda(struct hs_cuda_ctx *cu, const hs_ns_launch *L)
{
    const int64_t nx = L->hi[0] - L->lo[0], ny = L->hi[1] - L->lo[1], nz = L->hi[2] - L->lo[2];
    if (nx <= 0 || ny <= 0 || nz <= 0) return HS_OK;
    dim3 block(32, 8, 1);
    dim3 grid((unsigned)((nx + 31) / 32), (unsigned)((ny + 7) / 8), (unsigned)(nz < 65535 ? nz : 65535));
    cudaStream_t st = cu->stream;
    int rc = HS_OK;
    switch (L->op) {
    case HS_NS_MOMENTUM: rc = launch_comp<HS_NS_MOMENTUM>(st, L, grid, block); break;
    case HS_NS_CORRECT: rc = launch_comp<HS_NS_CORRECT>(st, L, grid, block); break;
    case HS_NS_FACE_BC: rc = launch_comp<HS_NS_FACE_BC>(st, L, grid, block); break;
    case HS_NS_CENTRE: rc = launch_comp<HS_NS_CENTRE>(st, L, grid, block); break;
    // the operations that do not depend on the component
    case HS_NS_SCALAR: launch_one<HS_NS_SCALAR, 0>(st, L, grid, block); break;
    case HS_NS_DIVERGENCE: launch_one<HS_NS_DIVERGENCE, 0>(st, L, grid, block); break;
    case HS_NS_VORTICITY: launch_one<HS_NS_VORTICITY, 0>(st, L, grid, block); break;
    case HS_NS_ENERGY: launch_one<HS_NS_ENERGY, 0>(st, L, grid, block); break;
    case HS_NS_ENSTROPHY: launch_one<HS_NS_ENSTROPHY, 0>(st, L, grid, block); break;
    case HS_NS_WALL_FLUX: launch_one<HS_NS_WALL_FLUX, 0>(st, L, grid, block); break;
    case HS_NS_PHI_IN: launch_one<HS_NS_PHI_IN, 0>(st, L, grid, block); break;
    default: return HS_FAIL(HS_ERR_RUNTIME, "navier_stokes kernel: unknown operation %d", L->op);
    }
    HS_CHECK(rc);
    HS_CUDA_CHECK(cudaGetLastError());
    return HS_OK;
}
