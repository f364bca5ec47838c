// The Navier-Stokes model's kernels on the GPU: one thread per point of the box (the momentum update
// marching along z with each face's flux evaluated once), the pointwise operators of ns_point.h.
#include "kernels/cuda_util.h"
#include "solvers/cfd/ns_point.h"

namespace {

// At most 64 registers (4 blocks of 256 per SM, no spills): the kernel is latency-bound (ncu on the
// H200 at 80 registers: 33% occupancy, 24-34% of DRAM bandwidth, 50-56% of the SM's issue rate).
// COMP is L.comp as a constant: with it and the unrolled dimension loops of ns_point.h every index
// into the launch record is known at compile time and the record stays in parameter space.
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

// The momentum update of component COMP in NDIM dimensions.  Evaluated point by point, every face's
// flux (a van Leer limiter with an fp64 division) is computed twice, once for each of its points:
// fp64 work that kept the kernel at 26% of copy bandwidth on the H200.  Here each point computes
// the fluxes through its low faces; the high face along x comes from the next lane (a shuffle), along
// y from the next row of the block (shared memory), along z from the point itself one plane up as
// the block marches along z; only the points at a tile's high edges compute a second face.
constexpr int MOM_BX = 32, MOM_BY = 8, MOM_KZ = 8; // block of 32 x 8 points, marching MOM_KZ planes

template <int COMP, int NDIM>
__global__ void __launch_bounds__(MOM_BX * MOM_BY, 3) ns_momentum_kernel(const hs_ns_launch L)
{
    __shared__ double fy[2][MOM_BY][MOM_BX];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int64_t i = L.lo[0] + blockIdx.x * (int64_t)MOM_BX + tx;
    const int64_t j = L.lo[1] + blockIdx.y * (int64_t)MOM_BY + ty;
    const bool in = i < L.hi[0] && j < L.hi[1];
    const int64_t kb = L.lo[2] + blockIdx.z * (int64_t)MOM_KZ, ke = min(kb + MOM_KZ, L.hi[2]);
    double fz = 0.0; // the flux through the low z-face of the current point (the last plane's high face)
    if (NDIM == 3 && in && kb < ke) fz = hs_ns_momentum_flux(&L, COMP, 2, i, j, kb);
    int buf = 0;
    for (int64_t k = kb; k < ke; k++, buf ^= 1) {
        double flo[3] = {0.0, 0.0, 0.0}, fhi[3] = {0.0, 0.0, 0.0};
        if (in) {
            flo[0] = hs_ns_momentum_flux(&L, COMP, 0, i, j, k);
            flo[1] = hs_ns_momentum_flux(&L, COMP, 1, i, j, k);
            if (NDIM == 3) {
                flo[2] = fz;
                fhi[2] = fz = hs_ns_momentum_flux(&L, COMP, 2, i, j, k + 1);
            }
        }
        const double east = __shfl_down_sync(0xffffffffu, flo[0], 1);
        fy[buf][ty][tx] = flo[1];
        __syncthreads();
        if (!in) continue;
        fhi[0] = tx + 1 < MOM_BX && i + 1 < L.hi[0] ? east : hs_ns_momentum_flux(&L, COMP, 0, i + 1, j, k);
        fhi[1] = ty + 1 < MOM_BY && j + 1 < L.hi[1] ? fy[buf][ty + 1][tx] : hs_ns_momentum_flux(&L, COMP, 1, i, j + 1, k);
        const double R = hs_ns_outflow_point(&L, COMP, i, j, k) ? hs_ns_outflow_rhs(&L, COMP, i, j, k)
                                                                : hs_ns_momentum_rhs_of(&L, COMP, i, j, k, flo, fhi);
        hs_ns_momentum_store(&L, COMP, i, j, k, R);
    }
}

} // namespace

extern "C" int hs_ns_launch_cuda(struct hs_cuda_ctx *cu, const hs_ns_launch *L)
{
    const int64_t nx = L->hi[0] - L->lo[0], ny = L->hi[1] - L->lo[1], nz = L->hi[2] - L->lo[2];
    if (nx <= 0 || ny <= 0 || nz <= 0) return HS_OK;
    const bool cell = L->op >= HS_NS_DIVERGENCE && L->op != HS_NS_CORRECT && L->op != HS_NS_FACE_BC;
    if (L->op == HS_NS_MOMENTUM) {
        if ((nz + MOM_KZ - 1) / MOM_KZ > 65535) return HS_FAIL(HS_ERR_RUNTIME, "navier_stokes: %lld planes exceed one launch", (long long)nz);
        dim3 grid((unsigned)((nx + MOM_BX - 1) / MOM_BX), (unsigned)((ny + MOM_BY - 1) / MOM_BY), (unsigned)((nz + MOM_KZ - 1) / MOM_KZ));
        dim3 block(MOM_BX, MOM_BY, 1);
        switch (L->comp + 3 * (L->ndim == 3)) {
        case 0: ns_momentum_kernel<0, 2><<<grid, block, 0, cu->stream>>>(*L); break;
        case 1: ns_momentum_kernel<1, 2><<<grid, block, 0, cu->stream>>>(*L); break;
        case 3: ns_momentum_kernel<0, 3><<<grid, block, 0, cu->stream>>>(*L); break;
        case 4: ns_momentum_kernel<1, 3><<<grid, block, 0, cu->stream>>>(*L); break;
        case 5: ns_momentum_kernel<2, 3><<<grid, block, 0, cu->stream>>>(*L); break;
        default: return HS_FAIL(HS_ERR_RUNTIME, "navier_stokes momentum kernel: component %d in %d dimensions", L->comp, L->ndim);
        }
        HS_CUDA_CHECK(cudaGetLastError());
        return HS_OK;
    }
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
