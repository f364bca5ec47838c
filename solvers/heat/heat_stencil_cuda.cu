// The heat solver's operator on the GPU: z-coarsened 7-point kernels for the common case, a
// generic kernel for the others.
#include "kernels/cuda_util.h"

#include <stdlib.h>
#include <string.h>
#include "solvers/heat/heat_point.h"

namespace {

constexpr int kBX = 32, kBY = 8; // a warp along x: coalesced rows

// Generic: one thread per cell of the box.
__global__ void apply_generic(const hs_heat_launch L, const double *__restrict__ T, double *__restrict__ out)
{
    int64_t i = L.lo[0] + blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    int64_t j = L.lo[1] + blockIdx.y * (int64_t)blockDim.y + threadIdx.y;
    if (i >= L.hi[0] || j >= L.hi[1]) return;
    for (int64_t k = L.lo[2] + blockIdx.z; k < L.hi[2]; k += gridDim.z) {
        int64_t idx = L.origin + k * L.stride[2] + j * L.stride[1] + i;
        int64_t o = L.out_contiguous ? (k * L.local[1] + j) * L.local[0] + i : idx;
        out[o] = hs_heat_combine(&L, T, idx);
    }
}

// a T + b alpha lap(T) + c q for one cell from its value and its six neighbours, in the order of
// hs_heat_operator (x, then y, then z).
__device__ __forceinline__ double update_7pt(const hs_heat_launch &L, double c, double w, double e, double s,
                                             double n, double d, double u, double q)
{
    double lap = (w - 2.0 * c + e) * L.inv_dx2[0] + (s - 2.0 * c + n) * L.inv_dx2[1] + (d - 2.0 * c + u) * L.inv_dx2[2];
    return L.a * c + L.b * (L.alpha * lap) + L.c * q;
}

// Constant k, 2nd order, 3D, one thread per cell: every load independent, neighbours served by
// L1/L2.  The simplest form; kept as the benchmark's baseline (heat.gpu_kernel = cell).
__global__ void __launch_bounds__(256) apply_7pt_cell(const hs_heat_launch L, const double *__restrict__ T,
                                                      double *__restrict__ out)
{
    int64_t i = L.lo[0] + blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    int64_t j = L.lo[1] + blockIdx.y * (int64_t)blockDim.y + threadIdx.y;
    int64_t k = L.lo[2] + blockIdx.z * (int64_t)blockDim.z + threadIdx.z;
    if (i >= L.hi[0] || j >= L.hi[1] || k >= L.hi[2]) return;
    const int64_t sy = L.stride[1], sz = L.stride[2];
    int64_t idx = L.origin + k * sz + j * sy + i;
    out[idx] = update_7pt(L, __ldg(T + idx), __ldg(T + idx - 1), __ldg(T + idx + 1), __ldg(T + idx - sy),
                          __ldg(T + idx + sy), __ldg(T + idx - sz), __ldg(T + idx + sz), L.q ? L.q[idx] : L.q_const);
}

// Constant k, 2nd order, 3D: each thread updates kZc consecutive cells along z.  Its column of
// kZc + 2 values is loaded once and kept in registers (a third of the z-neighbour traffic of one
// thread per cell), and all of the thread's loads are independent and issued before the first is
// used, so many bytes are in flight per thread.  Small blocks (32 x 4) measured best on the H200.
constexpr int kZc = 4, kZcRows = 4;

// HAS_Q: a source field (a template parameter: without one the kernel needs fewer registers, and
// more blocks fit on an SM).
template <bool HAS_Q>
__global__ void __launch_bounds__(32 * kZcRows) apply_7pt_zc(const hs_heat_launch L, const double *__restrict__ T,
                                                              double *__restrict__ out)
{
    const int64_t i = L.lo[0] + blockIdx.x * 32 + threadIdx.x, j = L.lo[1] + blockIdx.y * kZcRows + threadIdx.y;
    const int64_t k0 = L.lo[2] + (int64_t)blockIdx.z * kZc;
    if (i >= L.hi[0] || j >= L.hi[1]) return;
    const int64_t sy = L.stride[1], sz = L.stride[2], idx = L.origin + k0 * sz + j * sy + i;
    const int nz = (int)min((int64_t)kZc, L.hi[2] - k0);
    double col[kZc + 2], w[kZc], e[kZc], s[kZc], n[kZc], q[kZc];
#pragma unroll
    for (int z = 0; z < kZc + 2; z++) col[z] = z <= nz + 1 ? __ldg(T + idx + (z - 1) * sz) : 0.0;
#pragma unroll
    for (int z = 0; z < kZc; z++) {
        if (z < nz) {
            const int64_t p = idx + z * sz;
            w[z] = __ldg(T + p - 1), e[z] = __ldg(T + p + 1), s[z] = __ldg(T + p - sy), n[z] = __ldg(T + p + sy);
            q[z] = HAS_Q ? __ldg(L.q + p) : L.q_const;
        }
    }
#pragma unroll
    for (int z = 0; z < kZc; z++)
        if (z < nz) out[idx + z * sz] = update_7pt(L, col[z + 1], w[z], e[z], s[z], n[z], col[z], col[z + 2], q[z]);
}

// As apply_7pt_zc, with two x cells per thread read and written as 16-byte vectors (a warp covers
// 64 cells of a row): half the load instructions.  The x neighbours come from the adjacent lanes by
// shuffles; lanes 0 and 31 and the box's last pair load their outer one.  Needs every row of the box to
// start 16-byte aligned and an even number of cells in x (checked by the caller).
template <bool HAS_Q>
__global__ void __launch_bounds__(32 * kZcRows) apply_7pt_zc_vec2(const hs_heat_launch L, const double *__restrict__ T,
                                                                   double *__restrict__ out)
{
    const int lane = threadIdx.x;
    const int64_t i = L.lo[0] + 2 * (blockIdx.x * 32 + (int64_t)lane), j = L.lo[1] + blockIdx.y * kZcRows + threadIdx.y;
    const int64_t k0 = L.lo[2] + (int64_t)blockIdx.z * kZc;
    if (j >= L.hi[1]) return; // whole warps: the shuffles below need every lane of a live warp
    const bool live = i < L.hi[0];
    const int64_t ii = live ? i : L.hi[0] - 2; // a lane past the row mirrors the last pair
    const bool last = ii + 2 == L.hi[0];
    const int64_t sy = L.stride[1], sz = L.stride[2], idx = L.origin + k0 * sz + j * sy + ii;
    const int nz = (int)min((int64_t)kZc, L.hi[2] - k0);
    double2 col[kZc + 2], s[kZc], n[kZc], q[kZc];
    double w[kZc], e[kZc];
#pragma unroll
    for (int z = 0; z < kZc + 2; z++)
        col[z] = z <= nz + 1 ? __ldg(reinterpret_cast<const double2 *>(T + idx + (z - 1) * sz)) : make_double2(0, 0);
#pragma unroll
    for (int z = 0; z < kZc; z++) {
        if (z < nz) {
            const int64_t p = idx + z * sz;
            w[z] = lane == 0 ? __ldg(T + p - 1) : 0.0;
            e[z] = last || lane == 31 ? __ldg(T + p + 2) : 0.0;
            s[z] = __ldg(reinterpret_cast<const double2 *>(T + p - sy));
            n[z] = __ldg(reinterpret_cast<const double2 *>(T + p + sy));
            q[z] = HAS_Q ? __ldg(reinterpret_cast<const double2 *>(L.q + p)) : make_double2(L.q_const, L.q_const);
        }
    }
#pragma unroll
    for (int z = 0; z < kZc; z++) {
        const double2 c = col[z + 1];
        const double left = __shfl_up_sync(0xffffffffu, c.y, 1), right = __shfl_down_sync(0xffffffffu, c.x, 1);
        if (live && z < nz) {
            double2 r;
            r.x = update_7pt(L, c.x, lane ? left : w[z], c.y, s[z].x, n[z].x, col[z].x, col[z + 2].x, q[z].x);
            r.y = update_7pt(L, c.y, c.x, last || lane == 31 ? e[z] : right, s[z].y, n[z].y, col[z].y, col[z + 2].y,
                             q[z].y);
            *reinterpret_cast<double2 *>(out + idx + z * sz) = r;
        }
    }
}

} // namespace

extern "C" int hs_heat_apply_cuda(hs_cuda_ctx *cu, const hs_heat_launch *L, const double *T, double *out)
{
    int64_t nx = L->hi[0] - L->lo[0], ny = L->hi[1] - L->lo[1], nz = L->hi[2] - L->lo[2];
    if (nx <= 0 || ny <= 0 || nz <= 0) return HS_OK;
    bool fast = !L->k && L->order == 2 && L->stride[2] != 0 && L->stride[1] != 0 && !L->out_contiguous &&
                (ny + kZcRows - 1) / kZcRows <= 65535 && (nz + kZc - 1) / kZc <= 65535; // grid limits
    if (!fast) {
        dim3 block(kBX, kBY);
        unsigned gx = (unsigned)((nx + kBX - 1) / kBX), gy = (unsigned)((ny + kBY - 1) / kBY);
        unsigned gz = (unsigned)(nz < 65535 ? nz : 65535);
        apply_generic<<<dim3(gx, gy, gz), block, 0, cu->stream>>>(*L, T, out);
        HS_CUDA_LAUNCH_CHECK(apply_generic);
        return HS_OK;
    }
    // 16-byte vectors when every row of the box starts on a 16-byte boundary (the field's aligned
    // rows and an even box start) and holds whole pairs
    const int64_t first = L->origin + L->lo[0];
    const uintptr_t addr = reinterpret_cast<uintptr_t>(T + first) | reinterpret_cast<uintptr_t>(out + first) |
                           (L->q ? reinterpret_cast<uintptr_t>(L->q + first) : 0);
    const bool vec = (addr & 15) == 0 && nx % 2 == 0 && L->stride[1] % 2 == 0 && L->stride[2] % 2 == 0;
    /* heat.gpu_kernel = cell|zc forces a variant (tests, the benchmark); auto and vec2 take vec2
     * where it applies */
    const unsigned gy = (unsigned)((ny + kZcRows - 1) / kZcRows), gz = (unsigned)((nz + kZc - 1) / kZc);
    if (L->kernel == HS_HEAT_KERNEL_CELL) {
        dim3 b3(32, 4, 2), g3((unsigned)((nx + 31) / 32), (unsigned)((ny + 3) / 4), (unsigned)((nz + 1) / 2));
        apply_7pt_cell<<<g3, b3, 0, cu->stream>>>(*L, T, out);
        HS_CUDA_LAUNCH_CHECK(apply_7pt_cell);
    } else if (vec && L->kernel != HS_HEAT_KERNEL_ZC) {
        dim3 grid((unsigned)((nx / 2 + 31) / 32), gy, gz), block(32, kZcRows);
        if (L->q) apply_7pt_zc_vec2<true><<<grid, block, 0, cu->stream>>>(*L, T, out);
        else apply_7pt_zc_vec2<false><<<grid, block, 0, cu->stream>>>(*L, T, out);
        HS_CUDA_LAUNCH_CHECK(apply_7pt_zc_vec2);
    } else {
        dim3 grid((unsigned)((nx + 31) / 32), gy, gz), block(32, kZcRows);
        if (L->q) apply_7pt_zc<true><<<grid, block, 0, cu->stream>>>(*L, T, out);
        else apply_7pt_zc<false><<<grid, block, 0, cu->stream>>>(*L, T, out);
        HS_CUDA_LAUNCH_CHECK(apply_7pt_zc);
    }
    return HS_OK;
}
