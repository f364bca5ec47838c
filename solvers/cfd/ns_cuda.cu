// The Navier-Stokes model's kernels on the GPU: one thread per point of the box, or tiles in shared memory for the momentum update, through the pointwise operators of ns_point.h.
#include <cstdlib>
#include <cstring>

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
// space.  (Evaluating each face flux once in the one-component kernels, the high face from the next
// lane by a shuffle, from the next row through shared memory, carried along z, measured no faster on
// the H200: 4096^2 15.4% and 18.4% of copy against 20.9%.  In the fused tiled kernel below it is
// faster in 2D: ns_momentum_2d_once.)
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

// The momentum update of every component in one kernel (HS_NS_MOMENTUM_ALL), the velocity read
// once into shared memory: one kernel a component, one thread a point, read the velocity
// nd + 1 times over and sat at 35-41% of DRAM bandwidth, waiting on its stencil's loads (ncu,
// 2026-12-04).  A block of 32 x 8 threads takes a tile of points; its loads of every component,
// halo of the stencil's reach included, are all issued before the first is stored to shared
// memory; then each thread updates each component at its points (those inside that component's
// box) through the same pointwise operator as the CPU (ns_point.h's hs_ns_momentum_advance on a
// view of the tiles).  2D: a tile of 32 x 16 points, two rows a thread (HS_NS_ROWS=1 or 4 for
// comparisons).  3D: a column of 32 x 8
// points marches through a chunk of planes; each component's planes k - 2 .. k + 2 sit in a ring of
// five shared planes, and plane k + 3 is read into registers while plane k is computed.
constexpr int kTX = 32, kTY = 8, kReach = 2, kHX = kTX + 2 * kReach;
constexpr unsigned kFull = 0xffffffffu;
constexpr int kHY3 = kTY + 2 * kReach, kN3 = kHX * kHY3, kRing = 2 * kReach + 1;
constexpr size_t kShared3 = sizeof(double) * 3 * kRing * kN3;

__device__ __forceinline__ bool inside(const hs_ns_lay &l, int d, int g) { return g >= (int)l.first[d] && g < (int)l.end[d]; }

// The update of component c at (i, j, k) from the view V, if the point is in c's box; with flo / fhi
// the fluxes through its low / high faces along each dimension (hs_ns_face_flux, evaluated once a
// face by the caller), else evaluated here.
__device__ __forceinline__ void update_point(const hs_ns_launch &L, int c, const ns32::hs_ns_view *V, int i, int j, int k,
                                             const double *flo = nullptr, const double *fhi = nullptr)
{
    const hs_ns_part &p = L.part[c];
    if (i < (int)p.lo[0] || i >= (int)p.hi[0] || j < (int)p.lo[1] || j >= (int)p.hi[1] || k < (int)p.lo[2] || k >= (int)p.hi[2])
        return;
    const int ic = c == 0 ? i : c == 1 ? j : k;
    const int side = ns32::hs_ns_outflow_side(p.outflow_lo, p.outflow_hi, ic, (int)p.lo[c], (int)p.hi[c] - 1);
    const int P = ns32::hs_ns_at(&L.lay[c], i, j, k);
    const double base = p.q0 ? L.a * p.q0[P] : 0.0;
    p.out[P] = base + L.b * (flo ? ns32::hs_ns_momentum_advance_from(&L, c, side, V, i, j, k, flo, fhi)
                                 : ns32::hs_ns_momentum_advance(&L, c, side, V, i, j, k));
}

// ROWS: rows of points a thread (the tile is 32 x 8 ROWS points).
template <int ROWS>
struct tile2 {
    static constexpr int kTH2 = kTY * ROWS, kN2 = kHX * (kTH2 + 2 * kReach), PER = (kN2 + kTX * kTY - 1) / (kTX * kTY);
};

// The block's tile of both components, points (i0 - kReach .. i0 + kTX + kReach) x (j0 - kReach ..
// j0 + kTY ROWS + kReach), every load issued before the first store; zero outside the arrays.
template <int ROWS>
__device__ __forceinline__ void load_tile2(const hs_ns_launch &L, int i0, int j0, int tid, double (*tile)[tile2<ROWS>::kN2])
{
    constexpr int kN2 = tile2<ROWS>::kN2, PER = tile2<ROWS>::PER;
    double r[2][PER];
#pragma unroll
    for (int f = 0; f < 2; f++)
#pragma unroll
        for (int n = 0; n < PER; n++) {
            const int e = tid + n * kTX * kTY, gi = i0 - kReach + e % kHX, gj = j0 - kReach + e / kHX;
            const hs_ns_lay &l = L.lay[f];
            r[f][n] = e < kN2 && inside(l, 0, gi) && inside(l, 1, gj) ? L.q[f][(int)l.origin + gi + gj * (int)l.sy] : 0.0;
        }
#pragma unroll
    for (int f = 0; f < 2; f++)
#pragma unroll
        for (int n = 0; n < PER; n++)
            if (tid + n * kTX * kTY < kN2) tile[f][tid + n * kTX * kTY] = r[f][n];
    __syncthreads();
}

// The view of both components' tiles at the tile point (kReach + tx, kReach + ty).
template <int ROWS>
__device__ __forceinline__ void view2(double (*tile)[tile2<ROWS>::kN2], int tx, int ty, ns32::hs_ns_view *V)
{
#pragma unroll
    for (int f = 0; f < 2; f++) {
#pragma unroll
        for (int m = 0; m < kRing; m++) V->plane[f][m] = &tile[f][(ty + kReach) * kHX + tx + kReach];
        V->sy[f] = kHX;
    }
}

template <int ROWS>
__global__ void __launch_bounds__(kTX *kTY, 4) ns_momentum_2d(const __grid_constant__ hs_ns_launch L)
{
    constexpr int kTH2 = tile2<ROWS>::kTH2;
    __shared__ double tile[2][tile2<ROWS>::kN2];
    __builtin_assume(L.ndim == 2);
    const int tid = threadIdx.y * kTX + threadIdx.x;
    const int i0 = (int)L.lo[0] + (int)blockIdx.x * kTX, j0 = (int)L.lo[1] + (int)blockIdx.y * kTH2;
    load_tile2<ROWS>(L, i0, j0, tid, tile);
    const int i = i0 + (int)threadIdx.x;
#pragma unroll 1
    for (int row = 0; row < ROWS; row++) {
        const int ty = (int)threadIdx.y + row * kTY, j = j0 + ty;
        ns32::hs_ns_view V;
        view2<ROWS>(tile, (int)threadIdx.x, ty, &V);
        update_point(L, 0, &V, i, j, 0);
        update_point(L, 1, &V, i, j, 0);
    }
}

// Each face flux evaluated once (the default; HS_NS_FLUX=twice for the kernel above): the fluxes are most of the kernel's
// instructions (ncu, H100, 4096^2, the kernel above: 572 instructions a point, 162 of them fp64, the
// issue slots 75% busy, DRAM at 40%), and every face is shared by the two points on either side.
// Lane 0 of a warp holds the column below the warp's first point and only hands its high x face to
// lane 1 (a warp updates kTX - 1 points of a row); a thread takes ROWS consecutive rows and carries
// the high y face of one row to the next as its low one.
constexpr int kOX = kTX - 1;

template <int ROWS>
__global__ void __launch_bounds__(kTX *kTY, 4) ns_momentum_2d_once(const __grid_constant__ hs_ns_launch L)
{
    constexpr int kTH2 = tile2<ROWS>::kTH2;
    __shared__ double tile[2][tile2<ROWS>::kN2];
    __builtin_assume(L.ndim == 2);
    const int tid = threadIdx.y * kTX + threadIdx.x, lane = (int)threadIdx.x;
    const int i0 = (int)L.lo[0] + (int)blockIdx.x * kOX - 1, j0 = (int)L.lo[1] + (int)blockIdx.y * kTH2;
    load_tile2<ROWS>(L, i0, j0, tid, tile);
    const int i = i0 + lane, ty0 = (int)threadIdx.y * ROWS;
    ns32::hs_ns_view V;
    view2<ROWS>(tile, lane, ty0, &V);
    double ylo[2];
#pragma unroll
    for (int c = 0; c < 2; c++) ylo[c] = ns32::hs_ns_face_flux(&L, c, 1, &V, -1);
#pragma unroll 1
    for (int row = 0; row < ROWS; row++) {
        const int ty = ty0 + row, j = j0 + ty;
        view2<ROWS>(tile, lane, ty, &V);
#pragma unroll
        for (int c = 0; c < 2; c++) {
            const double fx = ns32::hs_ns_face_flux(&L, c, 0, &V, 0), fy = ns32::hs_ns_face_flux(&L, c, 1, &V, 0);
            const double flo[3] = {__shfl_up_sync(kFull, fx, 1), ylo[c], 0.0}, fhi[3] = {fx, fy, 0.0};
            if (lane > 0) update_point(L, c, &V, i, j, 0, flo, fhi);
            ylo[c] = fy;
        }
    }
}

// Plane kk of every component (the 32 x 8 points of the block and the stencil's reach) into r.
__device__ __forceinline__ void load_plane3(const hs_ns_launch &L, int i0, int j0, int kk, int tid, double (&r)[3][2])
{
#pragma unroll
    for (int f = 0; f < 3; f++)
#pragma unroll
        for (int n = 0; n < 2; n++) {
            const int e = tid + n * kTX * kTY, gi = i0 - kReach + e % kHX, gj = j0 - kReach + e / kHX;
            const hs_ns_lay &l = L.lay[f];
            r[f][n] = e < kN3 && inside(l, 0, gi) && inside(l, 1, gj) && inside(l, 2, kk)
                          ? L.q[f][(int)l.origin + gi + gj * (int)l.sy + kk * (int)l.sz]
                          : 0.0;
        }
}

__device__ __forceinline__ void store_plane3(double *ring, int slot, int tid, const double (&r)[3][2])
{
#pragma unroll
    for (int f = 0; f < 3; f++)
#pragma unroll
        for (int n = 0; n < 2; n++)
            if (tid + n * kTX * kTY < kN3) ring[(f * kRing + slot) * kN3 + tid + n * kTX * kTY] = r[f][n];
}

// Planes k0 - kReach .. k0 + kReach of every component into the ring (slot kk - k0 + kReach).
__device__ __forceinline__ void load_ring3(const hs_ns_launch &L, int i0, int j0, int k0, int tid, double *ring, double (&r)[3][2])
{
#pragma unroll 1
    for (int kk = k0 - kReach; kk <= k0 + kReach; kk++) {
        load_plane3(L, i0, j0, kk, tid, r);
        store_plane3(ring, kk - k0 + kReach, tid, r);
    }
    __syncthreads();
}

// The view of the ring's planes k - 2 .. k + 2 (plane k - 2 in slot `oldest`) at tile offset `at`.
__device__ __forceinline__ void view3(double *ring, int oldest, int at, ns32::hs_ns_view *V)
{
#pragma unroll
    for (int f = 0; f < 3; f++) {
#pragma unroll
        for (int m = 0; m < kRing; m++) {
            const int slot = oldest + m < kRing ? oldest + m : oldest + m - kRing;
            V->plane[f][m] = ring + (f * kRing + slot) * kN3 + at;
        }
        V->sy[f] = kHX;
    }
}

__global__ void __launch_bounds__(kTX *kTY, 4) ns_momentum_3d(const __grid_constant__ hs_ns_launch L, int zchunk)
{
    extern __shared__ double ring[];  // [component][slot][kN3]: plane kk in slot (kk - k0 + kReach) % kRing
    __builtin_assume(L.ndim == 3);
    const int tid = threadIdx.y * kTX + threadIdx.x;
    const int i0 = (int)L.lo[0] + (int)blockIdx.x * kTX, j0 = (int)L.lo[1] + (int)blockIdx.y * kTY;
    const int k0 = (int)L.lo[2] + (int)blockIdx.z * zchunk, k1 = min(k0 + zchunk, (int)L.hi[2]);
    double r[3][2];
    load_ring3(L, i0, j0, k0, tid, ring, r);
    const int i = i0 + (int)threadIdx.x, j = j0 + (int)threadIdx.y, at = (threadIdx.y + kReach) * kHX + threadIdx.x + kReach;
    int oldest = 0;  // the slot of plane k - 2
#pragma unroll 1
    for (int k = k0; k < k1; k++) {
        const bool more = k + 1 < k1;
        if (more) load_plane3(L, i0, j0, k + kReach + 1, tid, r);
        ns32::hs_ns_view V;
        view3(ring, oldest, at, &V);
        update_point(L, 0, &V, i, j, k);
        update_point(L, 1, &V, i, j, k);
        update_point(L, 2, &V, i, j, k);
        if (!more) break;
        __syncthreads();
        store_plane3(ring, oldest, tid, r);
        oldest = oldest + 1 < kRing ? oldest + 1 : 0;
        __syncthreads();
    }
}

// ns_momentum_3d with each x face evaluated once (lane 0 as in ns_momentum_2d_once) and each z face
// once (a column carries its high z face to the next plane); the y faces are evaluated by both
// points (handing them between the block's rows would take another barrier a plane).
// Three blocks an SM (79 registers, no spills): at four (64 registers, 36 bytes spilled) it measured
// 15.6% of copy at 256^3 against the two-face kernel's 18.6%; at three 20.2% against 18.6% (H200).
__global__ void __launch_bounds__(kTX *kTY, 3) ns_momentum_3d_once(const __grid_constant__ hs_ns_launch L, int zchunk)
{
    extern __shared__ double ring[];  // [component][slot][kN3]: plane kk in slot (kk - k0 + kReach) % kRing
    __builtin_assume(L.ndim == 3);
    const int tid = threadIdx.y * kTX + threadIdx.x, lane = (int)threadIdx.x;
    const int i0 = (int)L.lo[0] + (int)blockIdx.x * kOX - 1, j0 = (int)L.lo[1] + (int)blockIdx.y * kTY;
    const int k0 = (int)L.lo[2] + (int)blockIdx.z * zchunk, k1 = min(k0 + zchunk, (int)L.hi[2]);
    double r[3][2];
    load_ring3(L, i0, j0, k0, tid, ring, r);
    const int i = i0 + lane, j = j0 + (int)threadIdx.y, at = (threadIdx.y + kReach) * kHX + threadIdx.x + kReach;
    int oldest = 0;  // the slot of plane k - 2
    double zlo[3];
#pragma unroll 1
    for (int k = k0; k < k1; k++) {
        const bool more = k + 1 < k1;
        if (more) load_plane3(L, i0, j0, k + kReach + 1, tid, r);
        ns32::hs_ns_view V;
        view3(ring, oldest, at, &V);
#pragma unroll
        for (int c = 0; c < 3; c++) {
            if (k == k0) zlo[c] = ns32::hs_ns_face_flux(&L, c, 2, &V, -1);
            const double fx = ns32::hs_ns_face_flux(&L, c, 0, &V, 0), fz = ns32::hs_ns_face_flux(&L, c, 2, &V, 0);
            const double flo[3] = {__shfl_up_sync(kFull, fx, 1), ns32::hs_ns_face_flux(&L, c, 1, &V, -1), zlo[c]};
            const double fhi[3] = {fx, ns32::hs_ns_face_flux(&L, c, 1, &V, 0), fz};
            if (lane > 0) update_point(L, c, &V, i, j, k, flo, fhi);
            zlo[c] = fz;
        }
        if (!more) break;
        __syncthreads();
        store_plane3(ring, oldest, tid, r);
        oldest = oldest + 1 < kRing ? oldest + 1 : 0;
        __syncthreads();
    }
}

// HS_NS_MOMENTUM_ALL: the fused kernel where the launch allows it (32-bit offsets; HS_NS_TILED=0
// keeps one kernel a component, for comparisons), else one launch a component.
int launch_momentum_all(hs_cuda_ctx *cu, const hs_ns_launch *L)
{
    static const int on = [] { const char *v = getenv("HS_NS_TILED"); return !(v && !strcmp(v, "0")); }();
    // each face flux once (ns_momentum_2d_once with four rows a thread, ns_momentum_3d_once), unless
    // HS_NS_FLUX=twice (ns_momentum_2d with two rows, ns_momentum_3d) for comparisons.  H200:
    // momentum stage 41.7% of copy against 30.0% at 4096^2, 20.2% against 18.6% at 256^3.
    static const int once = [] { const char *v = getenv("HS_NS_FLUX"); return !(v && !strcmp(v, "twice")); }();
    const int64_t nx = L->hi[0] - L->lo[0], ny = L->hi[1] - L->lo[1], nz = L->hi[2] - L->lo[2];
    if (on && L->index32 && L->ndim == 2) {
        // rows a thread: 4 (flux once) or 2 (twice) unless HS_NS_ROWS says 1, 2 or 4 (comparisons on the device)
        static const int rows = [] {
            const char *v = getenv("HS_NS_ROWS");
            return v && (!strcmp(v, "1") || !strcmp(v, "2") || !strcmp(v, "4")) ? atoi(v) : once ? 4 : 2;
        }();
        const int th = kTY * rows;
        dim3 grid((unsigned)((nx + kTX - 1) / kTX), (unsigned)((ny + th - 1) / th), 1), block(kTX, kTY, 1);
        if (once) {
            grid.x = (unsigned)((nx + kOX - 1) / kOX);
            if (rows == 1) ns_momentum_2d_once<1><<<grid, block, 0, cu->stream>>>(*L);
            else if (rows == 4) ns_momentum_2d_once<4><<<grid, block, 0, cu->stream>>>(*L);
            else ns_momentum_2d_once<2><<<grid, block, 0, cu->stream>>>(*L);
            return HS_OK;
        }
        if (rows == 1) ns_momentum_2d<1><<<grid, block, 0, cu->stream>>>(*L);
        else if (rows == 4) ns_momentum_2d<4><<<grid, block, 0, cu->stream>>>(*L);
        else ns_momentum_2d<2><<<grid, block, 0, cu->stream>>>(*L);
        return HS_OK;
    }
    if (on && L->index32 && L->ndim == 3) {
        static bool sized[HS_MAX_DEVICES]; // the attribute holds for the device it was set on
        HS_CHECK_DEVICE_MEMO(cu);
        if (!sized[cu->device]) {
            HS_CUDA_CHECK(cudaFuncSetAttribute(ns_momentum_3d, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)kShared3));
            HS_CUDA_CHECK(cudaFuncSetAttribute(ns_momentum_3d_once, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)kShared3));
            sized[cu->device] = true;
        }
        const int64_t wx = once ? kOX : kTX, tiles = ((nx + wx - 1) / wx) * ((ny + kTY - 1) / kTY);
        int zchunk = 64;
        while (zchunk > 8 && tiles * ((nz + zchunk - 1) / zchunk) < 8 * (int64_t)cu->sm_count) zchunk /= 2;
        dim3 grid((unsigned)((nx + wx - 1) / wx), (unsigned)((ny + kTY - 1) / kTY), (unsigned)((nz + zchunk - 1) / zchunk));
        if (once) ns_momentum_3d_once<<<grid, dim3(kTX, kTY, 1), kShared3, cu->stream>>>(*L, zchunk);
        else ns_momentum_3d<<<grid, dim3(kTX, kTY, 1), kShared3, cu->stream>>>(*L, zchunk);
        return HS_OK;
    }
    for (int c = 0; c < L->ndim; c++) {
        hs_ns_launch one;
        ns64::hs_ns_part_launch(L, c, &one);
        HS_CHECK(hs_ns_launch_cuda(cu, &one));
    }
    return HS_OK;
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
    case HS_NS_MOMENTUM_ALL: rc = launch_momentum_all(cu, L); break;
    default: return HS_FAIL(HS_ERR_RUNTIME, "navier_stokes kernel: unknown operation %d", L->op);
    }
    HS_CHECK(rc);
    HS_CUDA_CHECK(cudaGetLastError());
    return HS_OK;
}
