// The seismic solver's kernels on the GPU: tiled 2.5D kernels for the 3D constant-density acoustic
// step and its adjoint and for the 3D elastic updates outside the CPML, one thread per point
// (column) for every other update, one per group for the point sets; the pointwise updates of
// seismic_point.h.
#include <cstdlib>
#include <cstring>

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
// the same with 32-bit index arithmetic (hs_seis_launch.index32): names ending in i
#define SEIS_I int32_t
#define SEIS_T double
#define SEIS_FN(name) name##_f64i
#define SEIS_COEF k_f64
#include "solvers/seismic/seismic_point.h"
#undef SEIS_T
#undef SEIS_FN
#undef SEIS_COEF
#define SEIS_T float
#define SEIS_FN(name) name##_f32i
#define SEIS_COEF k_f32
#include "solvers/seismic/seismic_point.h"
#undef SEIS_T
#undef SEIS_FN
#undef SEIS_COEF
#undef SEIS_I

namespace {

// ------------------------------------------------------------------ generic: a thread per (i, j)
//
// BOX kernels: a block per plane (z strided by the grid).  CHUNK kernels: a block marches its columns
// through a chunk of consecutive planes (zchunk), so that the z neighbours a point reads were read by
// the same block a few planes earlier.  H200, 512^3 fp32: the acoustic step's CPML passes (memory
// variables and the layer update) took 1.23 ms a step as BOX kernels and 1.01 ms as CHUNK kernels;
// the elastic kernels (now the CPML layers, the free surface's planes and 2D; the 3D core has
// el_tiled) stay BOX kernels: in the chunk loop ptxas gave the stress update 166
// registers instead of 59 (with or without unrolling) and it ran at half the speed.  The stress
// update is held to 64 registers (4 blocks an SM): without local arrays ptxas gave it 128 and the
// elastic step (no CPML) went from 10.0 to 17.7 ms (H200, 2026-12-04); at 64 it spills nothing.
// Since the pointwise elastic updates issue every load before their first store (session 18),
// the velocity update is held to 64 as well (145 uncapped at order 4) and both take 128 in fp64
// (2 blocks an SM: at 64 they spilled 140-232 bytes); no spills in either type.

// I: the index type, int64_t (the pointwise update NAME) or int32_t (NAME##i, where the launch's
// fields lie below 2^31 elements).
#define BOX_KERNEL(NAME) BOX_KERNEL_MIN(NAME, 1)
#define BOX_KERNEL_MIN(NAME, MINB)                                                                 \
    template <int R, typename I>                                                                   \
    __global__ void __launch_bounds__(256, MINB) k_##NAME(const __grid_constant__ hs_seis_launch L) \
    {                                                                                              \
        const I i = (I)L.lo[0] + (I)(blockIdx.x * blockDim.x + threadIdx.x);                       \
        const I j = (I)L.lo[1] + (I)(blockIdx.y * blockDim.y + threadIdx.y);                       \
        if (i >= (I)L.hi[0] || j >= (I)L.hi[1]) return;                                            \
        for (I k = (I)L.lo[2] + (I)blockIdx.z; k < (I)L.hi[2]; k += (I)gridDim.z) {                \
            if constexpr (sizeof(I) == 4) NAME##i(&L, i, j, k, R);                                 \
            else NAME(&L, i, j, k, R);                                                             \
        }                                                                                          \
    }

#define CHUNK_KERNEL(NAME)                                                                         \
    template <int R, typename I>                                                                   \
    __global__ void __launch_bounds__(256) k_##NAME(const __grid_constant__ hs_seis_launch L, int zchunk) \
    {                                                                                              \
        const I i = (I)L.lo[0] + (I)(blockIdx.x * blockDim.x + threadIdx.x);                       \
        const I j = (I)L.lo[1] + (I)(blockIdx.y * blockDim.y + threadIdx.y);                       \
        if (i >= (I)L.hi[0] || j >= (I)L.hi[1]) return;                                            \
        const I k0 = (I)L.lo[2] + (I)blockIdx.z * (I)zchunk, k1 = min(k0 + (I)zchunk, (I)L.hi[2]); \
        for (I k = k0; k < k1; k++) {                                                              \
            if constexpr (sizeof(I) == 4) NAME##i(&L, i, j, k, R);                                 \
            else NAME(&L, i, j, k, R);                                                             \
        }                                                                                          \
    }

#define BOX_KERNELS(T, ELMINB)                                                                     \
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
    BOX_KERNEL_MIN(seis_el_vel_##T, ELMINB)                                                        \
    BOX_KERNEL_MIN(seis_el_stress_##T, ELMINB)                                                     \
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

BOX_KERNELS(f64, 2)
BOX_KERNELS(f32, 4)

// AC_MARCH along y and z (D): a thread per column along D, the threads of a block across the other
// two dimensions, x first, so that a warp's loads of a plane are consecutive; D a constant, so that
// every index into the launch record is known at compile time.
template <typename T, int R, typename I, int D>
__global__ void __launch_bounds__(256) k_seis_ac_march(const __grid_constant__ hs_seis_launch L)
{
    constexpr int D1 = D == 0 ? 1 : 0, D2 = D == 2 ? 1 : 2;
    const I a = (I)L.lo[D1] + (I)(blockIdx.x * blockDim.x + threadIdx.x);
    const I b = (I)L.lo[D2] + (I)(blockIdx.y * blockDim.y + threadIdx.y);
    if (a >= (I)L.hi[D1] || b >= (I)L.hi[D2]) return;
    if constexpr (sizeof(T) == 8) {
        if constexpr (sizeof(I) == 4) seis_ac_march_f64i(&L, D, a, b, R);
        else seis_ac_march_f64(&L, D, a, b, R);
    } else {
        if constexpr (sizeof(I) == 4) seis_ac_march_f32i(&L, D, a, b, R);
        else seis_ac_march_f32(&L, D, a, b, R);
    }
}

// AC_MARCH along x: a column along x is a row, and a thread marching along a row reads one element
// of a cache line per step while its warp's 32 rows take 32 lines (H200, 512^3: 1.4 ms a face against
// 0.085 ms for the y and z faces).  Here a warp takes a row, its 32 lanes along it, and walks [lo, hi)
// in chunks of 32 points; each chunk stages P over [c0 - 2R, c0 + 32 + 2R) and the new PSI_x over
// [c0 - R, c0 + 32 + R) in shared memory (the warp's own rows: warp barriers only), every load of
// the chunk issued at its start.  PSI_x of the chunk's own points is written; below the chunk it was
// written by the chunk before (read back); above it is computed from the old values and not written
// (the next chunk computes the same values and writes them).  The arithmetic of seis_ac_march.
template <typename T, int R, typename I>
__global__ void __launch_bounds__(256) k_seis_ac_rows(const __grid_constant__ hs_seis_launch L)
{
    constexpr int CH = 32, NP = CH + 4 * R, NS = CH + 2 * R;
    static_assert(NP <= 2 * CH && NS <= 2 * CH, "two loads a lane cover a chunk's halo");
    __shared__ T sp[8][NP], ss[8][NS];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const I ny = (I)(L.hi[1] - L.lo[1]), rows = ny * (I)(L.hi[2] - L.lo[2]);
    const I row = (I)blockIdx.x * 8 + ty;
    if (row >= rows) return; // a whole warp
    const I j = (I)L.lo[1] + row % ny, k = (I)L.lo[2] + row / ny;
    const I base = (I)L.origin + j * (I)L.st[1] + k * (I)L.st[2];
    const I g0 = (I)L.lo[0], g1 = (I)L.hi[0], nl = (I)L.local[0], hw = (I)L.hw;
    const T *__restrict__ P = static_cast<const T *>(L.f[HS_SEIS_F_P]);
    T *__restrict__ psi = static_cast<T *>(L.f[HS_SEIS_F_PSI]);
    T *__restrict__ zeta = static_cast<T *>(L.f[HS_SEIS_F_ZETA]);
    T *__restrict__ C = static_cast<T *>(L.f[HS_SEIS_F_C]); // x is the first dimension: C written, not added
    const T *pa = static_cast<const T *>(L.pa[0]), *pb = static_cast<const T *>(L.pb[0]);
    const auto *K = [&] { if constexpr (sizeof(T) == 8) return &L.k_f64; else return &L.k_f32; }();
    const T *c1 = K->c1[0], *c2 = K->c2[0];
    for (I c0 = g0; c0 < g1; c0 += CH) {
        // every load of the chunk: P, the PSI_x it reads (old, or the chunk before's new), ZETA_x
        T old[2] = {T(0), T(0)};
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int t = tx + h * CH;
            if (t < NP) {
                const I pos = c0 - 2 * R + t;
                sp[ty][t] = pos >= -R && pos < nl + R ? P[base + pos] : T(0);
            }
            const I pos = c0 - R + t; // PSI_x is read up to g1 - 1 + R (within the ghosts)
            if (t < NS && pos < g1 + R && (pos < 0 || pos >= nl || pa[pos + hw] != 0)) old[h] = psi[base + pos];
        }
        const I g = c0 + tx;
        const bool mine = g < g1;
        const T a = mine ? pa[g + hw] : T(0), zold = mine && a != 0 ? zeta[base + g] : T(0);
        __syncwarp();
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int t = tx + h * CH;
            const I pos = c0 - R + t;
            if (t >= NS || pos >= g1 + R) continue;
            T v = 0;
            if (pos < 0 || pos >= nl || (pos < c0 && pos >= g0)) v = old[h];
            else if (pa[pos + hw] != 0) {
                if constexpr (sizeof(T) == 8) v = seis_pml_psi_f64(pa[pos + hw], pb[pos + hw], old[h], &sp[ty][t + R], c1, R);
                else v = seis_pml_psi_f32(pa[pos + hw], pb[pos + hw], old[h], &sp[ty][t + R], c1, R);
            }
            ss[ty][t] = v;
        }
        __syncwarp();
        if (mine) {
            // the chunk's own new PSI_x, written once every lane has read the old values above it
            if (a != 0) psi[base + g] = ss[ty][tx + R];
            const int near = pa[g + hw - R] != 0 || pa[g + hw + R] != 0;
            T term, znew;
            if constexpr (sizeof(T) == 8) term = seis_pml_term_f64(a, pb[g + hw], near, zold, &znew, &sp[ty][tx + 2 * R], &ss[ty][tx + R], c1, c2, R);
            else term = seis_pml_term_f32(a, pb[g + hw], near, zold, &znew, &sp[ty][tx + 2 * R], &ss[ty][tx + R], c1, c2, R);
            if (a != 0) zeta[base + g] = znew;
            C[base + g] = term;
        }
        __syncwarp();
    }
}

template <typename T, int R, typename I>
int launch_march_d(hs_cuda_ctx *cu, const hs_seis_launch *L)
{
    if (L->dim == 0) {
        const int64_t rows = (L->hi[1] - L->lo[1]) * (L->hi[2] - L->lo[2]);
        if (rows <= 0 || L->hi[0] <= L->lo[0]) return HS_OK;
        k_seis_ac_rows<T, R, I><<<(unsigned)((rows + 7) / 8), dim3(32, 8), 0, cu->stream>>>(*L);
        HS_CUDA_LAUNCH_CHECK(k_seis_ac_rows);
        return HS_OK;
    }
    const int d = L->dim, d1 = d == 0 ? 1 : 0, d2 = d == 2 ? 1 : 2;
    const int64_t na = L->hi[d1] - L->lo[d1], nb = L->hi[d2] - L->lo[d2];
    if (na <= 0 || nb <= 0 || L->hi[d] <= L->lo[d]) return HS_OK;
    if ((nb + 7) / 8 > 65535) return HS_FAIL(HS_ERR_RUNTIME, "seismic: %lld columns across exceed one launch", (long long)nb);
    const dim3 block(32, 8), grid((unsigned)((na + 31) / 32), (unsigned)((nb + 7) / 8));
    if (d == 1) k_seis_ac_march<T, R, I, 1><<<grid, block, 0, cu->stream>>>(*L);
    else k_seis_ac_march<T, R, I, 2><<<grid, block, 0, cu->stream>>>(*L); // x: k_seis_ac_rows above
    HS_CUDA_LAUNCH_CHECK(k_seis_ac_march);
    return HS_OK;
}

template <typename T>
int launch_march(hs_cuda_ctx *cu, const hs_seis_launch *L)
{
    switch (L->radius) {
    case 1: return L->index32 ? launch_march_d<T, 1, int32_t>(cu, L) : launch_march_d<T, 1, int64_t>(cu, L);
    case 2: return L->index32 ? launch_march_d<T, 2, int32_t>(cu, L) : launch_march_d<T, 2, int64_t>(cu, L);
    default: return L->index32 ? launch_march_d<T, 4, int32_t>(cu, L) : launch_march_d<T, 4, int64_t>(cu, L);
    }
}

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
//   kMarched   kForward with AC_MARCH's sums C in the place of the marched dimensions' second
//              differences (AC_STEP with C: the CPML layers; a kernel of its own, so that kForward's
//              registers and instructions for the core stay as they were)
enum { kForward, kAdjoint, kGradient, kMarched };

template <typename T> __device__ __forceinline__ T lap_pairs(const hs_seis_launch *L, T c, const T pair[3][4], int R)
{
    if constexpr (sizeof(T) == 8) return seis_lap_pairs_f64(L, c, pair, R);
    else return seis_lap_pairs_f32(L, c, pair, R);
}

// The pairs f(+m) + f(-m) at a thread's point from its staged plane (the x and y neighbours) and
// its column's register queue (the z neighbours), paired as the pointwise updates pair them.
template <typename T, int R, int W>
__device__ __forceinline__ void tile_pairs(const T (*tile)[W], const T *zq, int tx, int ty, T (&pair)[3][4])
{
#pragma unroll
    for (int m = 1; m <= R; m++) {
        pair[0][m - 1] = tile[ty + R][tx + R + m] + tile[ty + R][tx + R - m];
        pair[1][m - 1] = tile[ty + R + m][tx + R] + tile[ty + R - m][tx + R];
        pair[2][m - 1] = zq[R + m] + zq[R - m];
    }
}

// The Laplacian at a thread's point, with the pointwise update's order.
template <typename T, int R, int W>
__device__ __forceinline__ T tile_lap(const hs_seis_launch *L, const T (*tile)[W], const T *zq, int tx, int ty)
{
    T pair[3][4];
    tile_pairs<T, R>(tile, zq, tx, ty, pair);
    return lap_pairs<T>(L, zq[R], pair, R);
}

// seis_ac_step's operator where AC_MARCH's sums C hold the marched dimensions' terms (seis_march_sum;
// each second difference in seis_d2's order).
template <typename T, int R, int W>
__device__ __forceinline__ T tile_march_sum(const hs_seis_launch *L, const T (*tile)[W], const T *zq, int tx, int ty, T c,
                                            bool mx, bool my, bool mz)
{
    const auto *K = [&] { if constexpr (sizeof(T) == 8) return &L->k_f64; else return &L->k_f32; }();
    T pair[3][4], lapd[3];
    tile_pairs<T, R>(tile, zq, tx, ty, pair);
#pragma unroll
    for (int d = 0; d < 3; d++) {
        lapd[d] = K->c2[d][0] * zq[R];
#pragma unroll
        for (int m = 1; m <= R; m++) lapd[d] += K->c2[d][m] * pair[d][m - 1];
    }
    const int m[3] = {mx, my, mz};
    if constexpr (sizeof(T) == 8) return seis_march_sum_f64(L, m, c, lapd);
    else return seis_march_sum_f32(L, m, c, lapd);
}

// NY rows per thread (rows ty + r TY of the tile, r < NY): the barriers, the tile's halo loads and
// the index arithmetic of a plane are shared by NY points.  Element offsets are of type I: 32-bit
// where every element the launch touches lies below 2^31 (the 64-bit arithmetic of every load was
// most of the instructions of the plane loop), else 64-bit.
template <typename T, typename I, int R, int BX, int TY, int NY, int MODE>
__global__ void __launch_bounds__(BX *TY, MODE == kForward || MODE == kMarched ? 0 : 4) ac_step_tiled(const __grid_constant__ hs_seis_launch L, int zchunk)
{
    constexpr bool ADJ = MODE == kAdjoint || MODE == kGradient, GRAD = MODE == kGradient, MC = MODE == kMarched;
    constexpr int BY = TY * NY;
    static_assert(TY >= R, "the y halo is loaded by the first R thread rows");
    __shared__ T tile[BY + 2 * R][BX + 2 * R];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int64_t bx0 = L.lo[0] + (int64_t)blockIdx.x * BX, by0 = L.lo[1] + (int64_t)blockIdx.y * BY;
    const int64_t i = bx0 + tx, j = by0 + ty;
    const int64_t k0 = L.lo[2] + (int64_t)blockIdx.z * zchunk;
    const int64_t k1 = min(k0 + (int64_t)zchunk, L.hi[2]);
    const I sy = (I)L.st[1], sz = (I)L.st[2], rowstep = (I)TY * sy;
    const T *__restrict__ P = static_cast<const T *>(L.f[HS_SEIS_F_P]); // U in the adjoint modes
    T *__restrict__ Q = static_cast<T *>(L.f[HS_SEIS_F_Q]);
    const T *__restrict__ W = static_cast<const T *>(L.f[HS_SEIS_F_W]);
    T *__restrict__ G = static_cast<T *>(L.f[HS_SEIS_F_G]);
    const T *__restrict__ PF = static_cast<const T *>(L.f[HS_SEIS_F_PF]);
    const T *__restrict__ PN = static_cast<const T *>(L.f[HS_SEIS_F_PN]);
    const T *__restrict__ PP = static_cast<const T *>(L.f[HS_SEIS_F_PP]);
    // forward: AC_MARCH's CPML terms C, added where a march range holds the point (nullptr: none)
    const T *__restrict__ C = static_cast<const T *>(L.f[HS_SEIS_F_C]);
    auto in_march = [&](int d, int64_t x) { return seis_in_march_f64(&L, d, x) != 0; }; // seismic_point.h's (index type int64_t)
    // the stencil's value at an element: P forward, W U in the adjoint
    auto sv = [&](I e) -> T { if constexpr (ADJ) return W[e] * P[e]; else return P[e]; };
    // the gradient's second time difference of the forward field (seismic_point.h's seis_second_difference)
    auto d2 = [&](I e) -> T { return PN[e] - 2 * PF[e] + PP[e]; };
    // a row computes its point when inside the box; it stages its column when an active thread may
    // read it (within R past the box), which stays inside the allocation (halo >= R)
    bool active[NY], stage[NY], xrow[NY];
#pragma unroll
    for (int r = 0; r < NY; r++) {
        active[r] = i < L.hi[0] && j + r * TY < L.hi[1];
        stage[r] = i < L.hi[0] + R && j + r * TY < L.hi[1] + R;
        xrow[r] = tx < R && j + r * TY < L.hi[1] + R;
    }
    const bool yhalo = ty < R && i < L.hi[0];
    const bool right = bx0 + BX + tx < L.hi[0] + R, top = by0 + BY + ty < L.hi[1] + R;
    // e: this thread's element (row 0) in plane k; row r's is e + r rowstep
    I e = (I)(L.origin + j * L.st[1] + i + k0 * L.st[2]);
    T zq[NY][2 * R + 1], zu[NY][ADJ ? R + 1 : 1];
#pragma unroll
    for (int r = 0; r < NY; r++)
#pragma unroll
        for (int m = 0; m < 2 * R; m++) {
            const I em = e + (I)(m - R) * sz + r * rowstep;
            zq[r][m + 1] = stage[r] ? sv(em) : T(0);
            if constexpr (ADJ)
                if (m + 1 >= R) zu[r][m + 1 - R] = stage[r] ? P[em] : T(0);
        }
    // the loads of the next plane (the stencil fields ahead by R, the pointwise ones of the point,
    // the tile's x and y halo) are issued one plane early, so that their latency overlaps this
    // plane's barriers and arithmetic instead of following them
    // (a value whose condition is false is never loaded and stays 0: the conditions hold for the
    // whole march)
    T s_next[NY], u_next[NY], q_next[NY], w_next[NY], g_next[NY], d2_next[NY], hx0[NY], hx1[NY], c_next[NY];
    bool cxy[NY]; // a march range along x or y holds the row's point (then along z for any plane)
#pragma unroll
    for (int r = 0; r < NY; r++) {
        s_next[r] = u_next[r] = q_next[r] = w_next[r] = g_next[r] = d2_next[r] = hx0[r] = hx1[r] = c_next[r] = T(0);
        cxy[r] = MC && (in_march(0, i) || in_march(1, j + r * TY));
    }
    T hy0 = T(0), hy1 = T(0);
    auto next_load = [&](I en, int64_t kn) { // en: row 0's element in the next plane kn
        const bool cz = MC && in_march(2, kn);
#pragma unroll
        for (int r = 0; r < NY; r++) {
            const I er = en + r * rowstep, ea = er + (I)R * sz;
            if (stage[r]) {
                if constexpr (ADJ) u_next[r] = P[ea], s_next[r] = W[ea] * u_next[r];
                else s_next[r] = P[ea];
            }
            if (active[r]) {
                q_next[r] = Q[er];
                if constexpr (!ADJ) w_next[r] = W[er];
                if constexpr (MC)
                    if (cxy[r] || cz) c_next[r] = C[er];
                if constexpr (GRAD) g_next[r] = G[er], d2_next[r] = d2(er);
            }
            if (xrow[r]) {
                hx0[r] = sv(er - R);
                if (right) hx1[r] = sv(er + BX);
            }
        }
        if (yhalo) {
            hy0 = sv(en - (I)R * sy);
            if (top) hy1 = sv(en + (I)BY * sy);
        }
    };
    if (k0 < k1) next_load(e, k0);
    for (int64_t k = k0; k < k1; k++, e += sz) {
        T q_here[NY], w_here[NY], g_here[NY], d2_here[NY], c_here[NY];
#pragma unroll
        for (int r = 0; r < NY; r++) {
#pragma unroll
            for (int m = 0; m < 2 * R; m++) zq[r][m] = zq[r][m + 1];
            zq[r][2 * R] = s_next[r];
            if constexpr (ADJ) {
#pragma unroll
                for (int m = 0; m < R; m++) zu[r][m] = zu[r][m + 1];
                zu[r][R] = u_next[r];
            }
            q_here[r] = q_next[r], w_here[r] = w_next[r], g_here[r] = g_next[r], d2_here[r] = d2_next[r], c_here[r] = c_next[r];
            tile[ty + r * TY + R][tx + R] = zq[r][R];
            if (xrow[r]) {
                tile[ty + r * TY + R][tx] = hx0[r];
                if (right) tile[ty + r * TY + R][tx + BX + R] = hx1[r];
            }
        }
        if (yhalo) {
            tile[ty][tx + R] = hy0;
            if (top) tile[ty + BY + R][tx + R] = hy1;
        }
        if (k + 1 < k1) next_load(e + sz, k + 1);
        __syncthreads();
#pragma unroll
        for (int r = 0; r < NY; r++) {
            if (!active[r]) continue;
            const I idx = e + r * rowstep;
            T lap;
            if (MC && (cxy[r] || in_march(2, k)))
                lap = tile_march_sum<T, R>(&L, tile, zq[r], tx, ty + r * TY, c_here[r], in_march(0, i), in_march(1, j + r * TY), in_march(2, k));
            else
                lap = tile_lap<T, R>(&L, tile, zq[r], tx, ty + r * TY);
            if constexpr (ADJ) {
                Q[idx] = 2 * zu[r][0] - q_here[r] + lap; // zu[r][0]: the point's U (the queue is R planes long)
            } else {
                if constexpr (sizeof(T) == 8) Q[idx] = seis_leapfrog_f64(zq[r][R], q_here[r], w_here[r], lap);
                else Q[idx] = seis_leapfrog_f32(zq[r][R], q_here[r], w_here[r], lap);
            }
            if constexpr (GRAD) G[idx] = g_here[r] + zu[r][0] * d2_here[r];
        }
        __syncthreads();
    }
}

// The tile: 32 x 16 points, 32 x 8 threads of two rows each.  H200, 512^3 fp32 8th order without
// CPML: 0.69 ms a step (73% of copy) against 1.16 ms with one row a thread, 64-bit offsets and the
// coefficients converted from double at each use (the three changes measured together, 2026-12-04).
constexpr int kTX = 32, kTY = 8, kNY = 2, kBY = kTY * kNY;

template <typename T, typename I, int R>
void launch_tiled_i(hs_cuda_ctx *cu, const hs_seis_launch *L, dim3 grid, int zchunk)
{
    const dim3 block(kTX, kTY);
    if (L->op == HS_SEIS_AC_STEP && L->f[HS_SEIS_F_C]) ac_step_tiled<T, I, R, kTX, kTY, kNY, kMarched><<<grid, block, 0, cu->stream>>>(*L, zchunk);
    else if (L->op == HS_SEIS_AC_STEP) ac_step_tiled<T, I, R, kTX, kTY, kNY, kForward><<<grid, block, 0, cu->stream>>>(*L, zchunk);
    else if (L->f[HS_SEIS_F_G]) ac_step_tiled<T, I, R, kTX, kTY, kNY, kGradient><<<grid, block, 0, cu->stream>>>(*L, zchunk);
    else ac_step_tiled<T, I, R, kTX, kTY, kNY, kAdjoint><<<grid, block, 0, cu->stream>>>(*L, zchunk);
}

template <typename T, int R>
int launch_tiled(hs_cuda_ctx *cu, const hs_seis_launch *L)
{
    const int64_t nx = L->hi[0] - L->lo[0], ny = L->hi[1] - L->lo[1], nz = L->hi[2] - L->lo[2];
    const int64_t tiles = ((nx + kTX - 1) / kTX) * ((ny + kBY - 1) / kBY);
    // long chunks amortise the 2R planes each chunk loads twice; enough chunks keep every SM busy
    int zchunk = 64;
    while (zchunk > 8 && tiles * ((nz + zchunk - 1) / zchunk) < 8 * (int64_t)cu->sm_count) zchunk /= 2;
    dim3 grid((unsigned)((nx + kTX - 1) / kTX), (unsigned)((ny + kBY - 1) / kBY), (unsigned)((nz + zchunk - 1) / zchunk));
    // the largest element any thread of the launch may touch (the last tile's halo, R planes past
    // the box), with margin: the 32-bit offsets need it below 2^31
    const int64_t last = L->origin + (L->hi[2] + R + 1) * L->st[2] + (L->lo[1] + (int64_t)grid.y * kBY + R) * L->st[1] +
                         L->lo[0] + (int64_t)grid.x * kTX + R;
    if (last < INT32_MAX) launch_tiled_i<T, int32_t, R>(cu, L, grid, zchunk);
    else launch_tiled_i<T, int64_t, R>(cu, L, grid, zchunk);
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

// ------------------------------------------------------------------ the tiled 3D elastic updates
//
// The velocity and stress updates outside the CPML's reach, with the acoustic kernel's march: a
// block owns a BX x BY tile of columns and walks a chunk of planes; every field a stencil reads
// ("staged": the stresses for the velocities, the velocities for the stresses) is loaded once per
// chunk, its current plane kept in shared memory with the x and y halos the differences need, and
// the planes the z differences need in a register queue per column.  The pointwise fields (the
// material, the updated components) are read and written once per point.  The arithmetic is
// seismic_point.h's seis_el_vel and seis_el_stress without the CPML and free-surface branches: the
// planes of a free surface's stress imaging (global z index 0 and 1) take the pointwise kernel.
// The CPML layers stay with the pointwise kernels: this kernel with their memory variables
// (seis_stretch inline) measured 330-390 us a velocity slab and 410-475 a stress slab against
// 240-300 and 340-430 pointwise (H200, 512^3 fp32, pml 20, 2026-12-04).
enum { kElVel, kElStress };

// What an update's staged field f needs: x and y halos in the tile, and the planes k + qlo .. k +
// qhi in its queue.  Stress: v_d (DM along d, DP along the others).  Velocity: s_f in hs_seis_sym's
// order (s_dd: DP along d; s_de: DM along d and e).
template <int MODE, int R> struct ElStaged {
    static constexpr int n = MODE == kElStress ? 3 : 6;
    __host__ __device__ static constexpr int role(int f) { return MODE == kElStress ? HS_SEIS_F_V + f : HS_SEIS_F_S + f; }
    __host__ __device__ static constexpr bool along(int f, int d)
    {
        return MODE == kElStress ? true : f < 3 ? f == d : (f == 3 ? d != 2 : f == 4 ? d != 1 : d != 0);
    }
    __host__ __device__ static constexpr bool xh(int f) { return along(f, 0); }
    __host__ __device__ static constexpr bool yh(int f) { return along(f, 1); }
    __host__ __device__ static constexpr bool tiled(int f) { return xh(f) || yh(f); }
    // DM along z reaches k - R .. k + R - 1, DP k - R + 1 .. k + R
    __host__ __device__ static constexpr bool dm_z(int f) { return MODE == kElStress ? f == 2 : f >= 4; }
    __host__ __device__ static constexpr int qlo(int f) { return !along(f, 2) ? 0 : dm_z(f) ? -R : -R + 1; }
    __host__ __device__ static constexpr int qhi(int f) { return !along(f, 2) ? 0 : dm_z(f) ? R - 1 : R; }
};

__host__ __device__ constexpr int el_sym(int d, int e) { return d == e ? d : 2 + d + e; } // hs_seis_sym

// The pointwise fields of an update, in the order el_tiled keeps them: stress s_0..5 (hs_seis_sym's
// order), L2M, LAM, MU_01, MU_02, MU_12; velocity v_0..2, BV_0..2.
template <int MODE> __host__ __device__ constexpr int el_pointwise_role(int p)
{
    return MODE == kElStress ? (p < 6 ? HS_SEIS_F_S + p : p == 6 ? HS_SEIS_F_L2M : p == 7 ? HS_SEIS_F_LAM : HS_SEIS_F_MU + p - 8)
                             : (p < 3 ? HS_SEIS_F_V + p : HS_SEIS_F_BV + p - 3);
}


// G: rows whose pointwise loads go out together; MINB: blocks an SM (the register budget).
template <typename T, typename I, int R, int BX, int TY, int NY, int MODE, int G, int MINB>
__global__ void __launch_bounds__(BX *TY, MINB) el_tiled(const __grid_constant__ hs_seis_launch L, int zchunk)
{
    using F = ElStaged<MODE, R>;
    constexpr int NF = F::n, BY = TY * NY, Q = 2 * R + 1;
    static_assert(TY >= R, "the y halo is loaded by the first R thread rows");
    __shared__ T tile[NF][BY + 2 * R][BX + 2 * R];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int64_t bx0 = L.lo[0] + (int64_t)blockIdx.x * BX, by0 = L.lo[1] + (int64_t)blockIdx.y * BY;
    const int64_t i = bx0 + tx, j = by0 + ty;
    const int64_t k0 = L.lo[2] + (int64_t)blockIdx.z * zchunk;
    const int64_t k1 = min(k0 + (int64_t)zchunk, L.hi[2]);
    const I sy = (I)L.st[1], sz = (I)L.st[2], rowstep = (I)TY * sy;
    const auto *K = [&] { if constexpr (sizeof(T) == 8) return &L.k_f64; else return &L.k_f32; }();
    const T *src[NF];
#pragma unroll
    for (int f = 0; f < NF; f++) src[f] = static_cast<const T *>(L.f[F::role(f)]);
    bool active[NY], stage[NY], xrow[NY];
#pragma unroll
    for (int r = 0; r < NY; r++) {
        active[r] = i < L.hi[0] && j + r * TY < L.hi[1];
        stage[r] = i < L.hi[0] + R && j + r * TY < L.hi[1] + R;
        xrow[r] = tx < R && j + r * TY < L.hi[1] + R;
    }
    const bool yhalo = ty < R && i < L.hi[0];
    const bool right = bx0 + BX + tx < L.hi[0] + R, top = by0 + BY + ty < L.hi[1] + R;
    I e = (I)(L.origin + j * L.st[1] + i + k0 * L.st[2]);
    // zq[r][f][R + m]: field f at plane k + m of row r's column (the entries qlo .. qhi are used)
    T zq[NY][NF][Q];
#pragma unroll
    for (int r = 0; r < NY; r++)
#pragma unroll
        for (int f = 0; f < NF; f++)
#pragma unroll
            for (int m = 0; m < Q; m++) {
                zq[r][f][m] = T(0);
                // before the first plane the queue holds k0 - 1 + qlo .. k0 - 1 + qhi; the shift drops qlo
                if (m - R > F::qlo(f) && m - R <= F::qhi(f) && stage[r]) zq[r][f][m] = src[f][e + (I)(m - R - 1) * sz + r * rowstep];
            }
    // the next plane's loads issued one plane early, as in the acoustic kernel
    T nxt[NY][NF], hx0[NY][NF], hx1[NY][NF], hy0[NF], hy1[NF];
#pragma unroll
    for (int f = 0; f < NF; f++) {
        hy0[f] = hy1[f] = T(0);
#pragma unroll
        for (int r = 0; r < NY; r++) nxt[r][f] = hx0[r][f] = hx1[r][f] = T(0);
    }
    auto next_load = [&](I en) {
#pragma unroll
        for (int f = 0; f < NF; f++) {
#pragma unroll
            for (int r = 0; r < NY; r++) {
                const I er = en + r * rowstep;
                if (stage[r]) nxt[r][f] = src[f][er + (I)F::qhi(f) * sz];
                if (F::xh(f) && xrow[r]) {
                    hx0[r][f] = src[f][er - R];
                    if (right) hx1[r][f] = src[f][er + BX];
                }
            }
            if (F::yh(f) && yhalo) {
                hy0[f] = src[f][en - (I)R * sy];
                if (top) hy1[f] = src[f][en + (I)BY * sy];
            }
        }
    };
    if (k0 < k1) next_load(e);
    for (int64_t k = k0; k < k1; k++, e += sz) {
#pragma unroll
        for (int r = 0; r < NY; r++)
#pragma unroll
            for (int f = 0; f < NF; f++) {
#pragma unroll
                for (int m = F::qlo(f); m < F::qhi(f); m++) zq[r][f][R + m] = zq[r][f][R + m + 1];
                zq[r][f][R + F::qhi(f)] = nxt[r][f];
                if (F::tiled(f)) tile[f][ty + r * TY + R][tx + R] = zq[r][f][R];
                if (F::xh(f) && xrow[r]) {
                    tile[f][ty + r * TY + R][tx] = hx0[r][f];
                    if (right) tile[f][ty + r * TY + R][tx + BX + R] = hx1[r][f];
                }
            }
        if (yhalo)
#pragma unroll
            for (int f = 0; f < NF; f++)
                if (F::yh(f)) {
                    tile[f][ty][tx + R] = hy0[f];
                    if (top) tile[f][ty + BY + R][tx + R] = hy1[f];
                }
        if (k + 1 < k1) next_load(e + sz);
        __syncthreads();
        // Every load of a group of rows goes out before any of its stores: the compiler cannot move
        // a load of one field past a store to another (they might alias), and the first version,
        // which read each field where the pointwise update does, waited for memory once per field
        // (the core's stress update 5.5 ms at 512^3, 32% of the DRAM's bandwidth).
        constexpr int NP = MODE == kElStress ? 11 : 6;
#pragma unroll
        for (int r0 = 0; r0 < NY; r0 += G) {
            T pv[G][NP];
#pragma unroll
            for (int g = 0; g < G; g++)
                if (active[r0 + g])
#pragma unroll
                    for (int p = 0; p < NP; p++) pv[g][p] = static_cast<const T *>(L.f[el_pointwise_role<MODE>(p)])[e + (r0 + g) * rowstep];
#pragma unroll
            for (int g = 0; g < G; g++) {
                const int r = r0 + g;
                if (!active[r]) continue;
                const I idx = e + r * rowstep;
                const int yy = ty + r * TY + R;
                // field f at offset m along d from the point
                auto at = [&](int f, int d, int m) -> T { return d == 0 ? tile[f][yy][tx + R + m] : d == 1 ? tile[f][yy + m][tx + R] : zq[r][f][R + m]; };
                auto dp = [&](int f, int d) { // seis_dp
                    T v = 0;
#pragma unroll
                    for (int m = 1; m <= R; m++) v += K->cs[d][m - 1] * (at(f, d, m) - at(f, d, -(m - 1)));
                    return v;
                };
                auto dm = [&](int f, int d) { // seis_dm
                    T v = 0;
#pragma unroll
                    for (int m = 1; m <= R; m++) v += K->cs[d][m - 1] * (at(f, d, m - 1) - at(f, d, -m));
                    return v;
                };
                if constexpr (MODE == kElVel) { // pv: v_0..2, BV_0..2
#pragma unroll
                    for (int d = 0; d < 3; d++) {
                        T sum = 0;
#pragma unroll
                        for (int c = 0; c < 3; c++) sum += c == d ? dp(el_sym(d, c), c) : dm(el_sym(d, c), c);
                        static_cast<T *>(L.f[HS_SEIS_F_V + d])[idx] = pv[g][d] + pv[g][3 + d] * sum;
                    }
                } else { // pv: s_0..5, L2M, LAM, MU_01, MU_02, MU_12
                    T gd[3], div = 0;
#pragma unroll
                    for (int d = 0; d < 3; d++) {
                        gd[d] = dm(d, d);
                        div += gd[d];
                    }
                    const T l2m = pv[g][6], lam = pv[g][7];
#pragma unroll
                    for (int d = 0; d < 3; d++) static_cast<T *>(L.f[HS_SEIS_F_S + d])[idx] = pv[g][d] + (l2m * gd[d] + lam * (div - gd[d]));
#pragma unroll
                    for (int d = 0; d < 3; d++)
#pragma unroll
                        for (int c = d + 1; c < 3; c++) {
                            const T a = dp(d, c), b = dp(c, d);
                            const int q = el_sym(d, c);
                            static_cast<T *>(L.f[HS_SEIS_F_S + q])[idx] = pv[g][q] + pv[g][8 + q - 3] * (a + b);
                        }
                }
            }
        }
        __syncthreads();
    }
}

// 32 x 8 threads, NY = 2 rows each in fp32 (32 x 16 points a block, the acoustic kernel's shape),
// one in fp64 (two rows' queues and loads spilled 112-232 bytes at 128 registers).  fp32 order 4
// loads both rows' pointwise fields together, at 2 blocks an SM (126-128 registers): H200, 512^3
// fp32, elastic step with CPML 10.19 ms, against 10.64 a row at a time at 3 blocks an SM (80
// registers, 8-36 bytes spilled) and 10.89 a row at a time at 2 blocks (2026-12-04).  Order 2 and
// fp64 take a row at a time (fp32 order 2: 72-80 registers, none spilled, 3 blocks an SM).
template <typename T> constexpr int el_ny() { return sizeof(T) == 4 ? kNY : 1; }

template <typename T, typename I, int R, int MODE>
void launch_el_tiled_i(hs_cuda_ctx *cu, const hs_seis_launch *L, dim3 grid, int zchunk)
{
    constexpr int NY = el_ny<T>(), G = sizeof(T) == 4 && R == 2 ? NY : 1, MINB = sizeof(T) == 4 && G == 1 ? 3 : 2;
    el_tiled<T, I, R, kTX, kTY, NY, MODE, G, MINB><<<grid, dim3(kTX, kTY), 0, cu->stream>>>(*L, zchunk);
}

template <typename T, int R>
int launch_el_tiled(hs_cuda_ctx *cu, const hs_seis_launch *L)
{
    const int64_t nx = L->hi[0] - L->lo[0], ny = L->hi[1] - L->lo[1], nz = L->hi[2] - L->lo[2];
    constexpr int BY = kTY * el_ny<T>();
    const int64_t tiles = ((nx + kTX - 1) / kTX) * ((ny + BY - 1) / BY);
    int zchunk = 64;
    while (zchunk > 8 && tiles * ((nz + zchunk - 1) / zchunk) < 8 * (int64_t)cu->sm_count) zchunk /= 2;
    dim3 grid((unsigned)((nx + kTX - 1) / kTX), (unsigned)((ny + BY - 1) / BY), (unsigned)((nz + zchunk - 1) / zchunk));
    const int64_t last = L->origin + (L->hi[2] + R + 1) * L->st[2] + (L->lo[1] + (int64_t)grid.y * BY + R) * L->st[1] +
                         L->lo[0] + (int64_t)grid.x * kTX + R;
    const bool small = last < INT32_MAX;
    if (L->op == HS_SEIS_EL_STRESS) {
        if (small) launch_el_tiled_i<T, int32_t, R, kElStress>(cu, L, grid, zchunk);
        else launch_el_tiled_i<T, int64_t, R, kElStress>(cu, L, grid, zchunk);
    } else {
        if (small) launch_el_tiled_i<T, int32_t, R, kElVel>(cu, L, grid, zchunk);
        else launch_el_tiled_i<T, int64_t, R, kElVel>(cu, L, grid, zchunk);
    }
    HS_CUDA_LAUNCH_CHECK(el_tiled);
    return HS_OK;
}

#define LAUNCH_BOX(NAME) LAUNCH_BOX_AT(NAME, I)
#define LAUNCH_BOX_AT(NAME, IDX)                                                                   \
    do {                                                                                           \
        switch (L->radius) {                                                                       \
        case 1: k_##NAME<1, IDX><<<grid, block, 0, cu->stream>>>(*L); break;                       \
        case 2: k_##NAME<2, IDX><<<grid, block, 0, cu->stream>>>(*L); break;                       \
        default: k_##NAME<4, IDX><<<grid, block, 0, cu->stream>>>(*L); break;                      \
        }                                                                                          \
    } while (0)

// The elastic model's orders are 2 and 4 (the input refuses 8): no radius-4 instantiations.
#define LAUNCH_BOX_ELASTIC(NAME)                                                                   \
    do {                                                                                           \
        if (L->radius == 1) k_##NAME<1, int64_t><<<grid, block, 0, cu->stream>>>(*L);              \
        else k_##NAME<2, int64_t><<<grid, block, 0, cu->stream>>>(*L);                             \
    } while (0)

#define LAUNCH_CHUNK(NAME)                                                                         \
    do {                                                                                           \
        switch (L->radius) {                                                                       \
        case 1: k_##NAME<1, I><<<cgrid, block, 0, cu->stream>>>(*L, zchunk); break;                \
        case 2: k_##NAME<2, I><<<cgrid, block, 0, cu->stream>>>(*L, zchunk); break;                \
        default: k_##NAME<4, I><<<cgrid, block, 0, cu->stream>>>(*L, zchunk); break;               \
        }                                                                                          \
    } while (0)

// The elastic kernels take 64-bit offsets whatever the launch allows: with 32-bit ones the elastic
// step measured 14.66 ms (10.53 without CPML) against 14.1-14.5 (10.1-10.3) (H200, 512^3 fp32,
// 2026-12-04), while the acoustic step went from 1.77-1.80 ms to 1.64 (the CPML passes: ac_pml
// 79 -> 48 registers).
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
    case HS_SEIS_EL_VEL: LAUNCH_BOX_ELASTIC(seis_el_vel_##T); break;                               \
    case HS_SEIS_EL_STRESS: LAUNCH_BOX_ELASTIC(seis_el_stress_##T); break;                         \
    case HS_SEIS_EL_IMAGE: LAUNCH_BOX_ELASTIC(seis_el_image_##T); break;                           \
    default: return HS_FAIL(HS_ERR_RUNTIME, "seismic kernel: operation %d not implemented", L->op); \
    }

// The box and chunk kernels of one index type I.
template <typename I>
int launch_boxes(hs_cuda_ctx *cu, const hs_seis_launch *L, dim3 grid, dim3 cgrid, dim3 block, int zchunk)
{
    if (L->f32) {
        DISPATCH_BOX(f32)
    } else {
        DISPATCH_BOX(f64)
    }
    return HS_OK;
}

// Every update the tiled kernels do not take: BOX kernels a plane per block; CHUNK kernels chunks of
// up to 16 planes, shorter while there would be fewer than 16 blocks per SM
int launch_pointwise(hs_cuda_ctx *cu, const hs_seis_launch *L)
{
    const int64_t nx = L->hi[0] - L->lo[0], ny = L->hi[1] - L->lo[1], nz = L->hi[2] - L->lo[2];
    if (nx <= 0 || ny <= 0 || nz <= 0) return HS_OK;
    const dim3 block(32, 8, 1);
    const dim3 grid((unsigned)((nx + 31) / 32), (unsigned)((ny + 7) / 8), (unsigned)(nz < 65535 ? nz : 65535));
    const int64_t columns = ((nx + 31) / 32) * ((ny + 7) / 8);
    int64_t zchunk = 16;
    while (zchunk > 1 && columns * ((nz + zchunk - 1) / zchunk) < 16 * (int64_t)cu->sm_count) zchunk /= 2;
    while ((nz + zchunk - 1) / zchunk > 65535) zchunk *= 2;
    const dim3 cgrid(grid.x, grid.y, (unsigned)((nz + zchunk - 1) / zchunk));
    if (L->index32) HS_CHECK(launch_boxes<int32_t>(cu, L, grid, cgrid, block, (int)zchunk));
    else HS_CHECK(launch_boxes<int64_t>(cu, L, grid, cgrid, block, (int)zchunk));
    HS_CUDA_LAUNCH_CHECK(seismic_box_kernel);
    return HS_OK;
}

// HS_SEIS_EL_TILED=0: the elastic core takes the pointwise kernels too (comparisons)
bool elastic_tiled()
{
    static const int on = [] { const char *v = getenv("HS_SEIS_EL_TILED"); return !(v && !strcmp(v, "0")); }();
    return on;
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
    if (L->op == HS_SEIS_AC_MARCH) return L->f32 ? launch_march<float>(cu, L) : launch_march<double>(cu, L);
    const int64_t nx = L->hi[0] - L->lo[0], ny = L->hi[1] - L->lo[1], nz = L->hi[2] - L->lo[2];
    if (nx <= 0 || ny <= 0 || nz <= 0) return HS_OK;
    if ((L->op == HS_SEIS_AC_STEP || L->op == HS_SEIS_ADJ_STEP) && L->ndim == 3 && (ny + kBY - 1) / kBY <= 65535)
        return L->f32 ? launch_tiled_r<float>(cu, L) : launch_tiled_r<double>(cu, L);
    if ((L->op == HS_SEIS_EL_VEL || L->op == HS_SEIS_EL_STRESS) && L->ndim == 3 && !L->pml && (L->radius == 1 || L->radius == 2) &&
        (ny + kTY - 1) / kTY <= 65535 && elastic_tiled()) {
        hs_seis_launch rest = *L;
        // a free surface's stress imaging: its planes (global z index 0 and 1) take the pointwise kernel
        const int64_t below = 2 - L->offset[2];
        if (L->op == HS_SEIS_EL_STRESS && L->free_top && L->lo[2] < below) {
            hs_seis_launch surface = *L;
            surface.hi[2] = L->hi[2] < below ? L->hi[2] : below;
            HS_CHECK(launch_pointwise(cu, &surface));
            rest.lo[2] = surface.hi[2];
        }
        if (rest.lo[2] >= rest.hi[2]) return HS_OK;
        if (L->radius == 1) return L->f32 ? launch_el_tiled<float, 1>(cu, &rest) : launch_el_tiled<double, 1>(cu, &rest);
        return L->f32 ? launch_el_tiled<float, 2>(cu, &rest) : launch_el_tiled<double, 2>(cu, &rest);
    }
    return launch_pointwise(cu, L);
}

