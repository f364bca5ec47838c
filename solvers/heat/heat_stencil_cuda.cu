// The heat solver's grid kernels on the GPU: a z-marching 7-point kernel for the common case, a
// generic kernel for the others, ghost filling and interior loads.
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

// Constant k, 2nd order, 3D, one thread per cell: every load independent, so the memory system
// always has plenty of requests in flight; neighbours are served by L1/L2.
template <int BY, int BZ>
__global__ void __launch_bounds__(32 * BY *BZ) apply_7pt_cell(const hs_heat_launch L, double *__restrict__ out,
                                                               const double *__restrict__ T)
{
    int64_t i = L.lo[0] + blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    int64_t j = L.lo[1] + blockIdx.y * (int64_t)blockDim.y + threadIdx.y;
    int64_t k = L.lo[2] + blockIdx.z * (int64_t)blockDim.z + threadIdx.z;
    if (i >= L.hi[0] || j >= L.hi[1] || k >= L.hi[2]) return;
    const int64_t sy = L.stride[1], sz = L.stride[2];
    int64_t idx = L.origin + k * sz + j * sy + i;
    double c = __ldg(T + idx);
    double lap = (__ldg(T + idx - 1) - 2.0 * c + __ldg(T + idx + 1)) * L.inv_dx2[0] +
                 (__ldg(T + idx - sy) - 2.0 * c + __ldg(T + idx + sy)) * L.inv_dx2[1] +
                 (__ldg(T + idx - sz) - 2.0 * c + __ldg(T + idx + sz)) * L.inv_dx2[2];
    double q = L.q ? L.q[idx] : L.q_const;
    out[idx] = L.a * c + L.b * (L.alpha * lap) + L.c * q;
}

// Constant k, 2nd order, 3D: each thread marches along z through a chunk, keeping the planes below,
// at and above in registers (each value read from memory once per chunk; x and y neighbours from
// the caches) and loading the plane two ahead one iteration early, so that each thread keeps two
// independent loads in flight.
__global__ void apply_7pt_march2(const hs_heat_launch L, int64_t zchunk, const double *__restrict__ T,
                                 double *__restrict__ out)
{
    int64_t i = L.lo[0] + blockIdx.x * (int64_t)kBX + threadIdx.x;
    int64_t j = L.lo[1] + blockIdx.y * (int64_t)kBY + threadIdx.y;
    if (i >= L.hi[0] || j >= L.hi[1]) return;
    int64_t k0 = L.lo[2] + blockIdx.z * zchunk, k1 = min(k0 + zchunk, L.hi[2]);
    if (k0 >= k1) return;
    const int64_t sy = L.stride[1], sz = L.stride[2];
    const double cx = L.inv_dx2[0], cy = L.inv_dx2[1], cz = L.inv_dx2[2];
    int64_t idx = L.origin + k0 * sz + j * sy + i;
    double below = __ldg(T + idx - sz), here = __ldg(T + idx), above = __ldg(T + idx + sz);
    for (int64_t k = k0; k < k1; k++, idx += sz) {
        // the ghost plane above the box exists, the one beyond it may not: stop prefetching there
        double next = k + 1 < k1 ? __ldg(T + idx + 2 * sz) : 0.0;
        double w = __ldg(T + idx - 1), e = __ldg(T + idx + 1), s = __ldg(T + idx - sy), n = __ldg(T + idx + sy);
        double lap = (w - 2.0 * here + e) * cx + (s - 2.0 * here + n) * cy + (below - 2.0 * here + above) * cz;
        double q = L.q ? L.q[idx] : L.q_const;
        out[idx] = L.a * here + L.b * (L.alpha * lap) + L.c * q;
        below = here;
        here = above;
        above = next;
    }
}

__global__ void ghosts_kernel(const hs_heat_ghosts G, double *T)
{
    int d = G.dim, e1 = (d + 1) % 3, e2 = (d + 2) % 3;
    int64_t n1 = G.local[e1] + 2 * G.hw[e1], n2 = G.local[e2] + 2 * G.hw[e2];
    int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (t >= n1 * n2) return;
    int64_t a = t % n1, b = t / n1;
    int64_t base = G.origin + (a - G.hw[e1]) * G.stride[e1] + (b - G.hw[e2]) * G.stride[e2];
    for (int i = 0; i < G.hw[d]; i++) {
        int64_t in = G.side ? G.local[d] - 1 - i : i, gh = G.side ? G.local[d] + i : -1 - i;
        T[base + gh * G.stride[d]] = hs_heat_ghost_value(G.kind, T[base + in * G.stride[d]], i, G.value, G.dx);
    }
}

__global__ void load_kernel(int64_t sy, int64_t sz, int64_t origin, int64_t nx, int64_t ny, int64_t nz,
                            const double *__restrict__ src, double *__restrict__ T)
{
    int64_t n = nx * ny * nz, stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < n; t += stride) {
        int64_t i = t % nx, r = t / nx, j = r % ny, k = r / ny;
        T[origin + k * sz + j * sy + i] = src[t];
    }
}

} // namespace

extern "C" int hs_heat_apply_cuda(hs_cuda_ctx *cu, const hs_heat_launch *L, const double *T, double *out)
{
    int64_t nx = L->hi[0] - L->lo[0], ny = L->hi[1] - L->lo[1], nz = L->hi[2] - L->lo[2];
    if (nx <= 0 || ny <= 0 || nz <= 0) return HS_OK;
    dim3 block(kBX, kBY);
    unsigned gx = (unsigned)((nx + kBX - 1) / kBX), gy = (unsigned)((ny + kBY - 1) / kBY);
    bool fast = !L->k && L->order == 2 && L->stride[2] != 0 && L->stride[1] != 0 && !L->out_contiguous;
    /* HS_HEAT_KERNEL picks among the 7-point variants (for the benchmark): march, march2, cell */
    /* two variants of the 7-point kernel (HS_HEAT_KERNEL=cell|march, for the benchmark); cell is
     * the faster on the H200 (bench_heat) */
    const char *v = getenv("HS_HEAT_KERNEL");
    bool march = v && !strcmp(v, "march");
    /* block shapes of the one-thread-per-cell kernel: taller blocks keep more y and z neighbours in
     * the block's own L1 lines */
    int shape = !v ? 0 : !strcmp(v, "cell8x2") ? 1 : !strcmp(v, "cell4x4") ? 2 : !strcmp(v, "cell8x4") ? 3 : 0;
    if (fast && !march) {
        static const int by[4] = {4, 8, 4, 8}, bz[4] = {2, 2, 4, 4};
        dim3 b3(32, by[shape], bz[shape]);
        dim3 g3((unsigned)((nx + 31) / 32), (unsigned)((ny + by[shape] - 1) / by[shape]),
                (unsigned)((nz + bz[shape] - 1) / bz[shape]));
        switch (shape) {
        case 1: apply_7pt_cell<8, 2><<<g3, b3, 0, cu->stream>>>(*L, out, T); break;
        case 2: apply_7pt_cell<4, 4><<<g3, b3, 0, cu->stream>>>(*L, out, T); break;
        case 3: apply_7pt_cell<8, 4><<<g3, b3, 0, cu->stream>>>(*L, out, T); break;
        default: apply_7pt_cell<4, 2><<<g3, b3, 0, cu->stream>>>(*L, out, T); break;
        }
        HS_CUDA_LAUNCH_CHECK(apply_7pt_cell);
    } else if (fast) {
        // enough z-chunks to give every SM several blocks, long enough chunks to amortise the start
        int64_t want = (int64_t)cu->sm_count * 8 / ((int64_t)gx * gy) + 1;
        int64_t zchunk = (nz + want - 1) / want;
        if (zchunk < 8) zchunk = nz < 8 ? nz : 8;
        unsigned gz = (unsigned)((nz + zchunk - 1) / zchunk);
        apply_7pt_march2<<<dim3(gx, gy, gz), block, 0, cu->stream>>>(*L, zchunk, T, out);
        HS_CUDA_LAUNCH_CHECK(apply_7pt_march2);
    } else {
        unsigned gz = (unsigned)(nz < 65535 ? nz : 65535);
        apply_generic<<<dim3(gx, gy, gz), block, 0, cu->stream>>>(*L, T, out);
        HS_CUDA_LAUNCH_CHECK(apply_generic);
    }
    return HS_OK;
}

extern "C" int hs_heat_ghosts_cuda(hs_cuda_ctx *cu, const hs_heat_ghosts *G, double *T)
{
    int d = G->dim, e1 = (d + 1) % 3, e2 = (d + 2) % 3;
    int64_t n = (G->local[e1] + 2 * G->hw[e1]) * (G->local[e2] + 2 * G->hw[e2]);
    if (n <= 0 || G->hw[d] == 0) return HS_OK;
    ghosts_kernel<<<(unsigned)((n + 255) / 256), 256, 0, cu->stream>>>(*G, T);
    HS_CUDA_LAUNCH_CHECK(ghosts_kernel);
    return HS_OK;
}

extern "C" int hs_heat_load_cuda(hs_cuda_ctx *cu, const int64_t stride[3], int64_t origin, const int64_t local[3],
                                 const double *src, double *T)
{
    int64_t n = local[0] * local[1] * local[2];
    if (n <= 0) return HS_OK;
    load_kernel<<<hs_cuda_blocks(cu, (size_t)n, 256), 256, 0, cu->stream>>>(stride[1], stride[2], origin, local[0],
                                                                             local[1], local[2], src, T);
    HS_CUDA_LAUNCH_CHECK(load_kernel);
    return HS_OK;
}
