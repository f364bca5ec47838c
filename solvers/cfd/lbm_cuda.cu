// The lattice Boltzmann model's kernels on the GPU: one thread per cell (x fastest, coalesced SoA), the AA pattern in place, the pointwise operators of lbm_point.h.
#include <type_traits>

#include "kernels/cuda_util.h"
#include "kernels/half_cuda.cuh"
#define HS_LBM_H2F(b) hs::f16_to_f32_hw(b)
#define HS_LBM_F2H(v) hs::f32_to_f16_hw(v)
#include "solvers/cfd/lbm_point.h"

namespace {

constexpr int BX = 128;

// The populations and the update of a cell through the index type's functions (I32: the 32-bit ones).
template <int S>
using real_of = typename std::conditional<S == HS_LBM_F64, double, float>::type;

template <int Q, int S, int ODD, bool I32, typename T>
__device__ __forceinline__ void load_at(const hs_lbm_launch &L, T e, real_of<S> *f)
{
    if (I32) {
        if (S == HS_LBM_F64) hs_lbm_load_di(&L, (int32_t)e, Q, S, ODD, (double *)f);
        else hs_lbm_load_fi(&L, (int32_t)e, Q, S, ODD, (float *)f);
    } else {
        if (S == HS_LBM_F64) hs_lbm_load_d(&L, e, Q, S, ODD, (double *)f);
        else hs_lbm_load_f(&L, e, Q, S, ODD, (float *)f);
    }
}

template <int Q, int S, int ODD, bool I32, typename T>
__device__ __forceinline__ void update_at(const hs_lbm_launch &L, T i, T j, T k, T e, T fe, int near, real_of<S> *f)
{
    if (I32) {
        if (S == HS_LBM_F64) hs_lbm_cell_loaded_di(&L, (int32_t)i, (int32_t)j, (int32_t)k, (int32_t)e, (int32_t)fe, near, Q, S, ODD, (double *)f);
        else hs_lbm_cell_loaded_fi(&L, (int32_t)i, (int32_t)j, (int32_t)k, (int32_t)e, (int32_t)fe, near, Q, S, ODD, (float *)f);
    } else {
        if (S == HS_LBM_F64) hs_lbm_cell_loaded_d(&L, i, j, k, e, fe, near, Q, S, ODD, (double *)f);
        else hs_lbm_cell_loaded_f(&L, i, j, k, e, fe, near, Q, S, ODD, (float *)f);
    }
}

// One thread per cell of the box; blockIdx.y and .z walk the rows and planes.  The populations are
// 19 separate arrays (structure of arrays), so a warp's 32 consecutive cells read and write 32
// consecutive elements of each array: whole cache lines, each population moved once per step.
// The populations a bulk cell needs are loaded together with its flag, not after it: waiting for the
// flag first put two memory latencies in a row into every cell's update, and with them the cell rate
// stayed the same whether a population took 4 bytes or 2.  A boundary cell's update replaces what
// came from non-fluid neighbours; non-fluid cells load and drop.
// Register caps (blocks per SM in __launch_bounds__): uncapped, the step kernels take 130-170
// registers (the boundary path), too few warps to keep the memory busy; at 8 blocks (64 registers)
// the odd step spills nothing, and the even step, capped at 6 blocks, takes 64 as well since its
// loads are issued with the flag.  H200, D3Q19 512^3, 2026-12-03: fp32 23,124 MLUP/s, fp16 storage
// 31,240 with these caps; 8/8 the same, 10/10 22,709 / 32,005, 12/12 19,844 / 29,471.  fp64 would
// spill hundreds of bytes under these caps and goes without.  Arrays under 2^31 elements (every
// fp32 box that fits an H200) are indexed in 32 bits.
template <int Q, int S, int ODD, bool I32>
__global__ void __launch_bounds__(BX, S == HS_LBM_F64 ? 1 : ODD ? 8 : 6) step_kernel(const hs_lbm_launch L)
{
    typedef typename std::conditional<I32, int32_t, int64_t>::type T;
    const T i = (T)L.lo[0] + (T)blockIdx.x * BX + (T)threadIdx.x;
    if (i >= (T)L.hi[0]) return;
    const T j = (T)L.lo[1] + (T)blockIdx.y, k = (T)L.lo[2] + (T)blockIdx.z;
    const T fe = (T)L.forigin + i + j * (T)L.fsy + k * (T)L.fsz, e = (T)L.origin + i + j * (T)L.sy + k * (T)L.sz;
    const int fl = L.flag[fe];
    real_of<S> f[HS_LBM_QMAX];
    load_at<Q, S, ODD, I32>(L, e, f);
    const bool fluid = (fl & HS_LBM_KIND) == HS_LBM_FLUID;
    // A warp with no cell next to a boundary takes the bulk path, compiled without neighbour flags
    // or boundary branches: the general path is several times larger, and warps that mix the two
    // (the row ends of every box) would otherwise keep it in the instruction cache for all
    if (__all_sync(__activemask(), !(fl & HS_LBM_NEAR))) {
        if (fluid) update_at<Q, S, ODD, I32>(L, i, j, k, e, fe, 0, f);
        return;
    }
    if (fluid) update_at<Q, S, ODD, I32>(L, i, j, k, e, fe, fl & HS_LBM_NEAR, f);
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

// Every population and flag element a step of box L can touch (its cells and their neighbours, the
// ghost ring included) has an index below 2^31.
bool fits_int32(const hs_lbm_launch *L)
{
    const int64_t lim = INT32_MAX;
    int64_t maxoff = 0, maxfoff = 0;
    for (int q = 0; q < L->q; q++) {
        maxoff = L->off[q] > maxoff ? L->off[q] : -L->off[q] > maxoff ? -L->off[q] : maxoff;
        maxfoff = L->foff[q] > maxfoff ? L->foff[q] : -L->foff[q] > maxfoff ? -L->foff[q] : maxfoff;
    }
    const int64_t e_hi = L->origin + L->hi[0] + L->hi[1] * L->sy + L->hi[2] * L->sz + maxoff;
    const int64_t e_lo = L->origin + L->lo[0] + L->lo[1] * L->sy + L->lo[2] * L->sz - maxoff;
    const int64_t f_hi = L->forigin + L->hi[0] + L->hi[1] * L->fsy + L->hi[2] * L->fsz + maxfoff;
    const int64_t f_lo = L->forigin + L->lo[0] + L->lo[1] * L->fsy + L->lo[2] * L->fsz - maxfoff;
    return e_hi < lim && f_hi < lim && e_lo >= 0 && f_lo >= 0 && L->sy < lim && L->sz < lim && L->fsy < lim && L->fsz < lim;
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
    else if (fits_int32(L)) {
        if (L->odd) step_kernel<Q, S, 1, true><<<grid, BX, 0, cu->stream>>>(*L);
        else step_kernel<Q, S, 0, true><<<grid, BX, 0, cu->stream>>>(*L);
    } else if (L->odd) step_kernel<Q, S, 1, false><<<grid, BX, 0, cu->stream>>>(*L);
    else step_kernel<Q, S, 0, false><<<grid, BX, 0, cu->stream>>>(*L);
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
