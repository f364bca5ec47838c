// The lattice Boltzmann model's kernels on the GPU: one thread per cell (x fastest, coalesced SoA), the AA pattern in place, the pointwise operators of lbm_point.h.
#include "kernels/cuda_util.h"
#include "kernels/half_cuda.cuh"
#define HS_LBM_H2F(b) hs::f16_to_f32_hw(b)
#define HS_LBM_F2H(v) hs::f32_to_f16_hw(v)
#include "solvers/cfd/lbm_point.h"

namespace {

constexpr int BX = 128;

// One thread per cell of the box; blockIdx.y and .z walk the rows and planes.  The populations are
// 19 separate arrays (structure of arrays), so a warp's 32 consecutive cells read and write 32
// consecutive elements of each array: whole cache lines, each population moved once per step.
template <int Q, int S, int ODD>
__global__ void __launch_bounds__(BX) step_kernel(const hs_lbm_launch L)
{
    const int64_t i = L.lo[0] + (int64_t)blockIdx.x * BX + threadIdx.x;
    if (i >= L.hi[0]) return;
    const int64_t j = L.lo[1] + blockIdx.y, k = L.lo[2] + blockIdx.z;
    if (S == HS_LBM_F64) hs_lbm_cell_d(&L, i, j, k, Q, S, ODD);
    else hs_lbm_cell_f(&L, i, j, k, Q, S, ODD);
}

template <int Q, int S>
__global__ void __launch_bounds__(BX) moments_kernel(const hs_lbm_launch L)
{
    const int64_t i = L.lo[0] + (int64_t)blockIdx.x * BX + threadIdx.x;
    if (i >= L.hi[0]) return;
    const int64_t j = L.lo[1] + blockIdx.y, k = L.lo[2] + blockIdx.z;
    if (S == HS_LBM_F64) hs_lbm_moments_cell_d(&L, i, j, k, Q, S);
    else hs_lbm_moments_cell_f(&L, i, j, k, Q, S);
}

template <int Q, int S>
__global__ void __launch_bounds__(256) links_kernel(const hs_lbm_launch L)
{
    const int64_t l = (int64_t)blockIdx.x * 256 + threadIdx.x;
    if (l >= L.nlinks) return;
    if (S == HS_LBM_F64) hs_lbm_link_d(&L, l, Q, S);
    else hs_lbm_link_f(&L, l, Q, S);
}

template <int Q, int S>
int launch_qs(struct hs_cuda_ctx *cu, const hs_lbm_launch *L)
{
    if (L->op == HS_LBM_LINKS) {
        if (L->nlinks <= 0) return HS_OK;
        links_kernel<Q, S><<<(unsigned)((L->nlinks + 255) / 256), 256, 0, cu->stream>>>(*L);
        HS_CUDA_CHECK(cudaGetLastError());
        return HS_OK;
    }
    const int64_t nx = L->hi[0] - L->lo[0], ny = L->hi[1] - L->lo[1], nz = L->hi[2] - L->lo[2];
    if (nx <= 0 || ny <= 0 || nz <= 0) return HS_OK;
    if (ny > 65535 || nz > 65535) return HS_FAIL(HS_ERR_RUNTIME, "lbm: a box of %lld x %lld rows exceeds one launch", (long long)ny, (long long)nz);
    dim3 grid((unsigned)((nx + BX - 1) / BX), (unsigned)ny, (unsigned)nz);
    if (L->op == HS_LBM_MOMENTS) moments_kernel<Q, S><<<grid, BX, 0, cu->stream>>>(*L);
    else if (L->odd) step_kernel<Q, S, 1><<<grid, BX, 0, cu->stream>>>(*L);
    else step_kernel<Q, S, 0><<<grid, BX, 0, cu->stream>>>(*L);
    HS_CUDA_CHECK(cudaGetLastError());
    return HS_OK;
}

template <int Q>
int launch_q(struct hs_cuda_ctx *cu, const hs_lbm_launch *L)
{
    if (L->store == HS_LBM_F64) return launch_qs<Q, HS_LBM_F64>(cu, L);
    if (L->store == HS_LBM_F32) return launch_qs<Q, HS_LBM_F32>(cu, L);
    return launch_qs<Q, HS_LBM_F16>(cu, L);
}

} // namespace

extern "C" int hs_lbm_launch_cuda(struct hs_cuda_ctx *cu, const hs_lbm_launch *L)
{
    return L->q == 19 ? launch_q<19>(cu, L) : launch_q<9>(cu, L);
}
