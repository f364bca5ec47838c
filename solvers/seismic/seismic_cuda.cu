// The seismic solver's kernels on the GPU: a tiled 2.5D kernel for the 3D constant-density acoustic
// step and its adjoint, one thread per point (column) for every other update, one per group for the point sets; the
// pointwise updates of seismic_point.h.
#include "kernels/cuda_util.h"

#define SEIS_T double
#define SEIS_FN(name) name##_f64
#include "solvers/seismic/seismic_point.h"
#undef SEIS_T
#undef SEIS_FN
#define SEIS_T float
#define SEIS_FN(name) name##_f32
#include "solvers/seismic/seismic_point.h"
#undef SEIS_T
#undef SEIS_FN

namespace {

// ------------------------------------------------------------------ generic: a thread per (i, j)
//
// BOX kernels: a block per plane (z strided by the grid).  CHUNK kernels: a block marches its columns
// through a chunk of consecutive planes (zchunk), so that the z neighbours a point reads were read by
// the same block a few planes earlier.  H200, 512^3 fp32: the acoustic step's CPML passes (memory
// variables and the layer update) took 1.23 ms a step as BOX kernels and 1.01 ms as CHUNK kernels;
// the elastic kernels stay BOX kernels: in the chunk loop ptxas gave the stress update 166
// registers instead of 59 (with or without unrolling) and it ran at half the speed.

#define BOX_KERNEL(NAME)                                                                           \
    template <int R>                                                                               \
    __global__ void __launch_bounds__(256) k_##NAME(const __grid_constant__ hs_seis_launch L)      \
    {                                                                                              \
        const int64_t i = L.lo[0] + blockIdx.x * (int64_t)blockDim.x + threadIdx.x;                \
        const int64_t j = L.lo[1] + blockIdx.y * (int64_t)blockDim.y + threadIdx.y;                \
        if (i >= L.hi[0] || j >= L.hi[1]) return;                                                  \
        for (int64_t k = L.lo[2] + blockIdx.z; k < L.hi[2]; k += gridDim.z) NAME(&L, i, j, k, R);  \
    }

#define CHUNK_KERNEL(NAME)                                                                         \
    template <int R>                                                                               \
    __global__ void __launch_bounds__(256) k_##NAME(const __grid_constant__ hs_seis_launch L, int zchunk) \
    {                                                                                              \
        const int64_t i = L.lo[0] + blockIdx.x * (int64_t)blockDim.x + threadIdx.x;                \
        const int64_t j = L.lo[1] + blockIdx.y * (int64_t)blockDim.y + threadIdx.y;                \
        if (i >= L.hi[0] || j >= L.hi[1]) return;                                                  \
        const int64_t k0 = L.lo[2] + (int64_t)blockIdx.z * zchunk, k1 = min(k0 + (int64_t)zchunk, L.hi[2]); \
        for (int64_t k = k0; k < k1; k++) NAME(&L, i, j, k, R);                                    \
    }

#define BOX_KERNELS(T)                                                                             \
    BOX_KERNEL(seis_ac_step_##T)                                                                   \
    CHUNK_KERNEL(seis_ac_psi_##T)                                                                  \
    CHUNK_KERNEL(seis_ac_pml_##T)                                                                  \
    BOX_KERNEL(seis_av_step_##T)                                                                   \
    BOX_KERNEL(seis_av_psi_##T)                                                                    \
    BOX_KERNEL(seis_av_pml_##T)                                                                    \
    BOX_KERNEL(seis_adj_step_##T)                                                                  \
    CHUNK_KERNEL(seis_adj_psi_##T)                                                                 \
    CHUNK_KERNEL(seis_adj_pml_##T)                                                                 \
    CHUNK_KERNEL(seis_adj_mem_##T)                                                                 \
    BOX_KERNEL(seis_mirror_##T)                                                                    \
    BOX_KERNEL(seis_el_vel_##T)                                                                    \
    BOX_KERNEL(seis_el_stress_##T)                                                                 \
    BOX_KERNEL(seis_el_image_##T)                                                                  \
    __global__ void __launch_bounds__(128) k_seis_inject_##T(const __grid_constant__ hs_seis_launch L) \
    {                                                                                              \
        const int64_t g = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;                          \
        if (g < L.ngrp) seis_inject_##T(&L, g);                                                    \
    }                                                                                              \
    __global__ void __launch_bounds__(128) k_seis_sample_##T(const __grid_constant__ hs_seis_launch L) \
    {                                                                                              \
        const int64_t g = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;                          \
        if (g < L.ngrp) seis_sample_##T(&L, g);                                                    \
    }

BOX_KERNELS(f64)
BOX_KERNELS(f32)

// ------------------------------------------------------------------ the tiled 3D acoustic steps
//
// A block owns a BX x BY tile of columns and marches along z through a chunk of planes.  Each
// thread keeps its column's 2R + 1 values around the current plane in registers (every value is
// loaded from memory once per chunk); the current plane's tile with an R-wide x/y halo is staged
// in shared memory for the x and y neighbours.  The pointwise fields are read and written once per
// point.  Three modes share the march, with the arithmetic of seismic_point.h's pointwise updates:
//   kForward   Q = 2 P - Q + W lap(P)                     (AC_STEP; stencil field P)
//   kAdjoint   Q = 2 U - Q + lap(W U)                     (ADJ_STEP without G; stencil field W U)
//   kGradient  the same, and G += U (PN - 2 PF + PP)      (ADJ_STEP with G; stencil field W U)
enum { kForward, kAdjoint, kGradient };

template <typename T> __device__ __forceinline__ T lap_pairs(const hs_seis_launch *L, T c, const T pair[3][4], int R)
{
    if constexpr (sizeof(T) == 8) return seis_lap_pairs_f64(L, c, pair, R);
    else return seis_lap_pairs_f32(L, c, pair, R);
}

// The Laplacian at a thread's point from its staged plane (the x and y neighbours) and its column's
// register queue (the z neighbours), with the pointwise update's pairing and order.
template <typename T, int R, int W>
__device__ __forceinline__ T tile_lap(const hs_seis_launch *L, const T (*tile)[W], const T *zq, int tx, int ty)
{
    T pair[3][4];
#pragma unroll
    for (int m = 1; m <= R; m++) {
        pair[0][m - 1] = tile[ty + R][tx + R + m] + tile[ty + R][tx + R - m];
        pair[1][m - 1] = tile[ty + R + m][tx + R] + tile[ty + R - m][tx + R];
        pair[2][m - 1] = zq[R + m] + zq[R - m];
    }
    return lap_pairs<T>(L, zq[R], pair, R);
}

template <typename T, int R, int BX, int BY, int MODE>
__global__ void __launch_bounds__(BX *BY) ac_step_tiled(const __grid_constant__ hs_seis_launch L, int zchunk)
{
    constexpr bool ADJ = MODE != kForward, GRAD = MODE == kGradient;
    __shared__ T tile[BY + 2 * R][BX + 2 * R];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int64_t bx0 = L.lo[0] + (int64_t)blockIdx.x * BX, by0 = L.lo[1] + (int64_t)blockIdx.y * BY;
    const int64_t i = bx0 + tx, j = by0 + ty;
    const int64_t k0 = L.lo[2] + (int64_t)blockIdx.z * zchunk;
    const int64_t k1 = min(k0 + (int64_t)zchunk, L.hi[2]);
    const int64_t sy = L.st[1], sz = L.st[2];
    const T *__restrict__ P = static_cast<const T *>(L.f[HS_SEIS_F_P]); // U in the adjoint modes
    T *__restrict__ Q = static_cast<T *>(L.f[HS_SEIS_F_Q]);
    const T *__restrict__ W = static_cast<const T *>(L.f[HS_SEIS_F_W]);
    T *__restrict__ G = static_cast<T *>(L.f[HS_SEIS_F_G]);
    const T *__restrict__ PF = static_cast<const T *>(L.f[HS_SEIS_F_PF]);
    const T *__restrict__ PN = static_cast<const T *>(L.f[HS_SEIS_F_PN]);
    const T *__restrict__ PP = static_cast<const T *>(L.f[HS_SEIS_F_PP]);
    // the stencil's value at an element: P forward, W U in the adjoint
    auto sv = [&](int64_t e) -> T { if constexpr (ADJ) return W[e] * P[e]; else return P[e]; };
    // a thread computes its point when inside the box; it stages its column when an active thread
    // may read it (within R past the box), which stays inside the allocation (halo >= R)
    const bool active = i < L.hi[0] && j < L.hi[1];
    const bool stage = i < L.hi[0] + R && j < L.hi[1] + R;
    const int64_t col = L.origin + j * sy + i;
    T zq[2 * R + 1], zu[ADJ ? R + 1 : 1];
#pragma unroll
    for (int m = 0; m < 2 * R; m++) {
        const int64_t e = col + (k0 - R + m) * sz;
        zq[m + 1] = stage ? sv(e) : T(0);
        if constexpr (ADJ)
            if (m + 1 >= R) zu[m + 1 - R] = stage ? P[e] : T(0);
    }
    // the loads of the next plane (the stencil fields ahead by R, the pointwise ones of the point)
    // are issued one plane early, so that their latency overlaps this plane's barriers and
    // arithmetic instead of following them
    T s_next = T(0), u_next = T(0), q_next = T(0), w_next = T(0), g_next = T(0), d2_next = T(0);
    // the tile's x and y halo values of a plane, loaded one plane early as well: loaded in the plane's
    // own iteration they put a memory latency before every first barrier, where the whole block waits
    const bool xhalo = tx < R && j < L.hi[1] + R, yhalo = ty < R && i < L.hi[0];
    const bool right = bx0 + BX + tx < L.hi[0] + R, top = by0 + BY + ty < L.hi[1] + R;
    T hx0 = T(0), hx1 = T(0), hy0 = T(0), hy1 = T(0);
    auto halo_load = [&](int64_t k) {
        const int64_t plane = L.origin + k * sz;
        if (xhalo) {
            hx0 = sv(plane + j * sy + bx0 - R + tx);
            if (right) hx1 = sv(plane + j * sy + bx0 + BX + tx);
        }
        if (yhalo) {
            hy0 = sv(plane + (by0 - R + ty) * sy + i);
            if (top) hy1 = sv(plane + (by0 + BY + ty) * sy + i);
        }
    };
    // the gradient's second time difference of the forward field at the point (seismic_point.h's
    // seis_second_difference)
    auto d2 = [&](int64_t e) -> T { return PN[e] - 2 * PF[e] + PP[e]; };
    if (k0 < k1) {
        const int64_t e = col + (k0 + R) * sz;
        if (stage) {
            if constexpr (ADJ) u_next = P[e], s_next = W[e] * u_next;
            else s_next = P[e];
        }
        if (active) {
            q_next = Q[col + k0 * sz];
            if constexpr (!ADJ) w_next = W[col + k0 * sz];
            if constexpr (GRAD) g_next = G[col + k0 * sz], d2_next = d2(col + k0 * sz);
        }
        halo_load(k0);
    }
    for (int64_t k = k0; k < k1; k++) {
#pragma unroll
        for (int m = 0; m < 2 * R; m++) zq[m] = zq[m + 1];
        zq[2 * R] = s_next;
        if constexpr (ADJ) {
#pragma unroll
            for (int m = 0; m < R; m++) zu[m] = zu[m + 1];
            zu[R] = u_next;
        }
        const T q_here = q_next, w_here = w_next, g_here = g_next, d2_here = d2_next;
        const int64_t plane = L.origin + k * sz;
        tile[ty + R][tx + R] = zq[R];
        if (xhalo) {
            tile[ty + R][tx] = hx0;
            if (right) tile[ty + R][tx + BX + R] = hx1;
        }
        if (yhalo) {
            tile[ty][tx + R] = hy0;
            if (top) tile[ty + BY + R][tx + R] = hy1;
        }
        if (k + 1 < k1) {
            const int64_t e = col + (k + 1 + R) * sz;
            if (stage) {
                if constexpr (ADJ) u_next = P[e], s_next = W[e] * u_next;
                else s_next = P[e];
            }
            if (active) {
                q_next = Q[col + (k + 1) * sz];
                if constexpr (!ADJ) w_next = W[col + (k + 1) * sz];
                if constexpr (GRAD) g_next = G[col + (k + 1) * sz], d2_next = d2(col + (k + 1) * sz);
            }
            halo_load(k + 1);
        }
        __syncthreads();
        if (active) {
            const int64_t idx = plane + j * sy + i;
            const T lap = tile_lap<T, R>(&L, tile, zq, tx, ty);
            if constexpr (ADJ) {
                Q[idx] = 2 * zu[0] - q_here + lap; // zu[0]: the point's U (the queue is R planes long)
            } else {
                if constexpr (sizeof(T) == 8) Q[idx] = seis_leapfrog_f64(zq[R], q_here, w_here, lap);
                else Q[idx] = seis_leapfrog_f32(zq[R], q_here, w_here, lap);
            }
            if constexpr (GRAD) G[idx] = g_here + zu[0] * d2_here;
        }
        __syncthreads();
    }
}

constexpr int kTX = 32, kTY = 16;

template <typename T, int R>
int launch_tiled(hs_cuda_ctx *cu, const hs_seis_launch *L)
{
    const int64_t nx = L->hi[0] - L->lo[0], ny = L->hi[1] - L->lo[1], nz = L->hi[2] - L->lo[2];
    const int64_t tiles = ((nx + kTX - 1) / kTX) * ((ny + kTY - 1) / kTY);
    // long chunks amortise the 2R planes each chunk loads twice; enough chunks keep every SM busy
    int zchunk = 64;
    while (zchunk > 8 && tiles * ((nz + zchunk - 1) / zchunk) < 8 * (int64_t)cu->sm_count) zchunk /= 2;
    dim3 grid((unsigned)((nx + kTX - 1) / kTX), (unsigned)((ny + kTY - 1) / kTY), (unsigned)((nz + zchunk - 1) / zchunk));
    const dim3 block(kTX, kTY);
    if (L->op == HS_SEIS_AC_STEP) ac_step_tiled<T, R, kTX, kTY, kForward><<<grid, block, 0, cu->stream>>>(*L, zchunk);
    else if (L->f[HS_SEIS_F_G]) ac_step_tiled<T, R, kTX, kTY, kGradient><<<grid, block, 0, cu->stream>>>(*L, zchunk);
    else ac_step_tiled<T, R, kTX, kTY, kAdjoint><<<grid, block, 0, cu->stream>>>(*L, zchunk);
    HS_CUDA_LAUNCH_CHECK(ac_step_tiled);
    return HS_OK;
}

template <typename T>
int launch_tiled_r(hs_cuda_ctx *cu, const hs_seis_launch *L)
{
    switch (L->radius) {
    case 1: return launch_tiled<T, 1>(cu, L);
    case 2: return launch_tiled<T, 2>(cu, L);
    default: return launch_tiled<T, 4>(cu, L);
    }
}

#define LAUNCH_BOX(NAME)                                                                           \
    do {                                                                                           \
        switch (L->radius) {                                                                       \
        case 1: k_##NAME<1><<<grid, block, 0, cu->stream>>>(*L); break;                            \
        case 2: k_##NAME<2><<<grid, block, 0, cu->stream>>>(*L); break;                            \
        default: k_##NAME<4><<<grid, block, 0, cu->stream>>>(*L); break;                           \
        }                                                                                          \
    } while (0)

#define LAUNCH_CHUNK(NAME)                                                                         \
    do {                                                                                           \
        switch (L->radius) {                                                                       \
        case 1: k_##NAME<1><<<cgrid, block, 0, cu->stream>>>(*L, zchunk); break;                   \
        case 2: k_##NAME<2><<<cgrid, block, 0, cu->stream>>>(*L, zchunk); break;                   \
        default: k_##NAME<4><<<cgrid, block, 0, cu->stream>>>(*L, zchunk); break;                  \
        }                                                                                          \
    } while (0)

#define DISPATCH_BOX(T)                                                                            \
    switch (L->op) {                                                                               \
    case HS_SEIS_AC_STEP: LAUNCH_BOX(seis_ac_step_##T); break;                                     \
    case HS_SEIS_AC_PSI: LAUNCH_CHUNK(seis_ac_psi_##T); break;                                     \
    case HS_SEIS_AC_PML: LAUNCH_CHUNK(seis_ac_pml_##T); break;                                     \
    case HS_SEIS_AV_STEP: LAUNCH_BOX(seis_av_step_##T); break;                                     \
    case HS_SEIS_AV_PSI: LAUNCH_BOX(seis_av_psi_##T); break;                                       \
    case HS_SEIS_AV_PML: LAUNCH_BOX(seis_av_pml_##T); break;                                       \
    case HS_SEIS_ADJ_STEP: LAUNCH_BOX(seis_adj_step_##T); break;                                   \
    case HS_SEIS_ADJ_PSI: LAUNCH_CHUNK(seis_adj_psi_##T); break;                                   \
    case HS_SEIS_ADJ_PML: LAUNCH_CHUNK(seis_adj_pml_##T); break;                                   \
    case HS_SEIS_ADJ_MEM: LAUNCH_CHUNK(seis_adj_mem_##T); break;                                   \
    case HS_SEIS_MIRROR: LAUNCH_BOX(seis_mirror_##T); break;                                       \
    case HS_SEIS_EL_VEL: LAUNCH_BOX(seis_el_vel_##T); break;                                       \
    case HS_SEIS_EL_STRESS: LAUNCH_BOX(seis_el_stress_##T); break;                                 \
    case HS_SEIS_EL_IMAGE: LAUNCH_BOX(seis_el_image_##T); break;                                   \
    default: return HS_FAIL(HS_ERR_RUNTIME, "seismic kernel: operation %d not implemented", L->op); \
    }

} // namespace

extern "C" int hs_seis_launch_cuda(struct hs_cuda_ctx *cu, const hs_seis_launch *L)
{
    if (L->op == HS_SEIS_INJECT || L->op == HS_SEIS_SAMPLE) {
        if (L->ngrp <= 0) return HS_OK;
        const unsigned blocks = (unsigned)((L->ngrp + 127) / 128);
        if (L->op == HS_SEIS_INJECT) {
            if (L->f32) k_seis_inject_f32<<<blocks, 128, 0, cu->stream>>>(*L);
            else k_seis_inject_f64<<<blocks, 128, 0, cu->stream>>>(*L);
        } else {
            if (L->f32) k_seis_sample_f32<<<blocks, 128, 0, cu->stream>>>(*L);
            else k_seis_sample_f64<<<blocks, 128, 0, cu->stream>>>(*L);
        }
        HS_CUDA_LAUNCH_CHECK(k_seis_points);
        return HS_OK;
    }
    const int64_t nx = L->hi[0] - L->lo[0], ny = L->hi[1] - L->lo[1], nz = L->hi[2] - L->lo[2];
    if (nx <= 0 || ny <= 0 || nz <= 0) return HS_OK;
    if ((L->op == HS_SEIS_AC_STEP || L->op == HS_SEIS_ADJ_STEP) && L->ndim == 3 && (ny + kTY - 1) / kTY <= 65535)
        return L->f32 ? launch_tiled_r<float>(cu, L) : launch_tiled_r<double>(cu, L);
    // BOX kernels a plane per block; CHUNK kernels chunks of up to 16 planes, shorter while there
    // would be fewer than 16 blocks per SM
    const dim3 block(32, 8, 1);
    const dim3 grid((unsigned)((nx + 31) / 32), (unsigned)((ny + 7) / 8), (unsigned)(nz < 65535 ? nz : 65535));
    const int64_t columns = ((nx + 31) / 32) * ((ny + 7) / 8);
    int64_t zchunk = 16;
    while (zchunk > 1 && columns * ((nz + zchunk - 1) / zchunk) < 16 * (int64_t)cu->sm_count) zchunk /= 2;
    while ((nz + zchunk - 1) / zchunk > 65535) zchunk *= 2;
    const dim3 cgrid(grid.x, grid.y, (unsigned)((nz + zchunk - 1) / zchunk));
    if (L->f32) {
        DISPATCH_BOX(f32)
    } else {
        DISPATCH_BOX(f64)
    }
    HS_CUDA_LAUNCH_CHECK(seismic_box_kernel);
    return HS_OK;
}
