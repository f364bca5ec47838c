// CUDA kernels of the fast Poisson solver: transposes, transform pre/post steps, the divide and the tridiagonal sweeps.
#include "kernels/cuda_util.h"
#include "kernels/fft/poisson_impl.h"
#include "kernels/fft/poisson_point.h"

#include <stdint.h>

#define THREADS 256

// Work over a [rows][cols] index space, one thread per element, grid-stride.  The index type I is
// 32-bit whenever the space fits, because 64-bit division costs tens of instructions per element
// and these kernels are otherwise pure memory traffic.
template <typename I, typename F>
__global__ void for_each_kernel(I total, I cols, F f)
{
    for (I v = blockIdx.x * (I)blockDim.x + threadIdx.x; v < total; v += (I)gridDim.x * blockDim.x) {
        I r = v / cols;
        f((int64_t)r, (int64_t)(v - r * cols));
    }
}

template <typename F>
static int launch_each(struct hs_cuda_ctx *cu, int64_t rows, int64_t cols, F f)
{
    if (rows <= 0 || cols <= 0) return HS_OK;
    int64_t total = rows * cols;
    int blocks = hs_cuda_blocks(cu, (size_t)total, THREADS);
    if (total <= (int64_t)UINT32_MAX - (int64_t)blocks * THREADS)
        for_each_kernel<uint32_t, F><<<blocks, THREADS, 0, cu->stream>>>((uint32_t)total, (uint32_t)cols, f);
    else
        for_each_kernel<int64_t, F><<<blocks, THREADS, 0, cu->stream>>>(total, cols, f);
    HS_CUDA_LAUNCH_CHECK("for_each_kernel");
    return HS_OK;
}

// ------------------------------------------------------------------ transpose and copies

// dst[b*dbs + c*dcs + r] = src[b*sbs + r*srs + c]: a 32 x 32 tile goes through shared memory so that
// both the reads (along c) and the writes (along r) are coalesced; the +1 column avoids bank conflicts.
__global__ void transpose_kernel(int64_t batch, int64_t rows, int64_t cols, const double *__restrict__ src, int64_t sbs,
                                 int64_t srs, double *__restrict__ dst, int64_t dbs, int64_t dcs)
{
    __shared__ double tile[32][33];
    int64_t tiles_r = (rows + 31) / 32, tiles_c = (cols + 31) / 32;
    for (int64_t b = blockIdx.z; b < batch; b += gridDim.z)
        for (int64_t ty = blockIdx.y; ty < tiles_r; ty += gridDim.y)
            for (int64_t tx = blockIdx.x; tx < tiles_c; tx += gridDim.x) {
                int64_t r0 = ty * 32, c0 = tx * 32;
                const double *s = src + b * sbs;
                double *d = dst + b * dbs;
                for (int i = threadIdx.y; i < 32; i += blockDim.y) {
                    int64_t r = r0 + i, c = c0 + threadIdx.x;
                    if (r < rows && c < cols) tile[i][threadIdx.x] = s[r * srs + c];
                }
                __syncthreads();
                for (int i = threadIdx.y; i < 32; i += blockDim.y) {
                    int64_t c = c0 + i, r = r0 + threadIdx.x;
                    if (r < rows && c < cols) d[c * dcs + r] = tile[threadIdx.x][i];
                }
                __syncthreads(); // the tile is reused by the next iteration
            }
}

static unsigned cap(int64_t v, int64_t most) { return (unsigned)(v < 1 ? 1 : v < most ? v : most); }

extern "C" int hs_poisson_transpose_cuda(struct hs_cuda_ctx *cu, int64_t batch, int64_t rows, int64_t cols,
                                         const double *src, int64_t sbs, int64_t srs, double *dst, int64_t dbs,
                                         int64_t dcs)
{
    if (batch <= 0 || rows <= 0 || cols <= 0) return HS_OK;
    int64_t tr = (rows + 31) / 32, tc = (cols + 31) / 32;
    // about 16 blocks per SM in all; the grid-stride loops take the rest
    int64_t want = (int64_t)cu->sm_count * 16;
    unsigned gx = cap(tc, 65535), gy = cap(tr, want / gx > 0 ? want / gx : 1);
    unsigned gz = cap(batch, want / ((int64_t)gx * gy) > 0 ? want / ((int64_t)gx * gy) : 1);
    if (gz > 65535) gz = 65535;
    if (gy > 65535) gy = 65535;
    transpose_kernel<<<dim3(gx, gy, gz), dim3(32, 8), 0, cu->stream>>>(batch, rows, cols, src, sbs, srs, dst, dbs, dcs);
    HS_CUDA_LAUNCH_CHECK("transpose_kernel");
    return HS_OK;
}

extern "C" int hs_poisson_copy_runs_cuda(struct hs_cuda_ctx *cu, int64_t rows, int64_t run, const double *src,
                                         int64_t srs, double *dst, int64_t drs)
{
    if (rows <= 0 || run <= 0) return HS_OK;
    // the copy engine's strided copy is the best tool for runs of whole rows
    HS_CUDA_CHECK(cudaMemcpy2DAsync(dst, (size_t)drs * sizeof(double), src, (size_t)srs * sizeof(double),
                                    (size_t)run * sizeof(double), (size_t)rows, cudaMemcpyDeviceToDevice, cu->stream));
    return HS_OK;
}

// ------------------------------------------------------------------ transform pre / post steps

struct hc_pack_op {
    int64_t n, h;
    const double *spec;
    double *dst;
    __device__ void operator()(int64_t l, int64_t k) const { hs_poisson_hc_pack_at(n, k, spec + 2 * l * h, dst + l * n); }
};
struct hc_unpack_op {
    int64_t n, h;
    const double *src;
    double *spec;
    __device__ void operator()(int64_t l, int64_t k) const { hs_poisson_hc_unpack_at(n, k, src + l * n, spec + 2 * l * h); }
};
struct reorder_op {
    int64_t n;
    int alternate;
    const double *src;
    double *dst;
    __device__ void operator()(int64_t l, int64_t j) const
    {
        int64_t i = hs_poisson_reorder_source(n, j);
        dst[l * n + j] = hs_poisson_sign(alternate, i) * src[l * n + i];
    }
};
struct unreorder_op {
    int64_t n;
    int alternate;
    const double *src;
    double *dst;
    // one thread per written element, so the writes are coalesced and the reads gather
    __device__ void operator()(int64_t l, int64_t i) const
    {
        int64_t j = (i & 1) ? n - 1 - i / 2 : i / 2;
        dst[l * n + i] = hs_poisson_sign(alternate, i) * src[l * n + j];
    }
};
struct dct_post_op {
    int64_t n, h;
    const double *tw, *spec;
    double *dst;
    __device__ void operator()(int64_t l, int64_t k) const { hs_poisson_dct_post_at(n, k, tw, spec + 2 * l * h, dst + l * n); }
};
struct dct_pre_op {
    int64_t n, h;
    const double *tw, *src;
    double *spec;
    __device__ void operator()(int64_t l, int64_t k) const { hs_poisson_dct_pre_at(n, k, tw, src + l * n, spec + 2 * l * h); }
};

extern "C" int hs_poisson_hc_pack_cuda(struct hs_cuda_ctx *cu, int64_t lines, int64_t n, const double *spec, double *dst)
{
    return launch_each(cu, lines, n / 2 + 1, hc_pack_op{n, n / 2 + 1, spec, dst});
}
extern "C" int hs_poisson_hc_unpack_cuda(struct hs_cuda_ctx *cu, int64_t lines, int64_t n, const double *src, double *spec)
{
    return launch_each(cu, lines, n / 2 + 1, hc_unpack_op{n, n / 2 + 1, src, spec});
}
extern "C" int hs_poisson_dct_reorder_cuda(struct hs_cuda_ctx *cu, int64_t lines, int64_t n, int alternate,
                                           const double *src, double *dst)
{
    return launch_each(cu, lines, n, reorder_op{n, alternate, src, dst});
}
extern "C" int hs_poisson_dct_unreorder_cuda(struct hs_cuda_ctx *cu, int64_t lines, int64_t n, int alternate,
                                             const double *src, double *dst)
{
    return launch_each(cu, lines, n, unreorder_op{n, alternate, src, dst});
}
extern "C" int hs_poisson_dct_post_cuda(struct hs_cuda_ctx *cu, int64_t lines, int64_t n, const double *tw,
                                        const double *spec, double *dst)
{
    return launch_each(cu, lines, n / 2 + 1, dct_post_op{n, n / 2 + 1, tw, spec, dst});
}
extern "C" int hs_poisson_dct_pre_cuda(struct hs_cuda_ctx *cu, int64_t lines, int64_t n, const double *tw,
                                       const double *src, double *spec)
{
    return launch_each(cu, lines, n / 2 + 1, dct_pre_op{n, n / 2 + 1, tw, src, spec});
}

// ------------------------------------------------------------------ spectral solves

struct spectral_divide_op {
    int64_t n, h;
    int dct;
    const double *tw;
    double scale;
    const double *row_ev, *ev;
    double *spec;
    __device__ void operator()(int64_t r, int64_t k) const
    {
        hs_poisson_spectral_divide_at(n, k, dct, tw, scale, row_ev[r], ev, spec + 2 * r * h);
    }
};

extern "C" int hs_poisson_spectral_divide_cuda(struct hs_cuda_ctx *cu, int64_t rows, int64_t n, int dct,
                                               const double *tw, double scale, const double *row_ev, const double *ev,
                                               double *spec)
{
    return launch_each(cu, rows, n / 2 + 1, spectral_divide_op{n, n / 2 + 1, dct, tw, scale, row_ev, ev, spec});
}

// One thread per line; neighbouring threads take neighbouring lines (i), so the sweeps are
// coalesced whenever inner > 1.
struct tridiag_op {
    int64_t n, inner;
    const double *sigma;
    double h2, rs;
    int g_lo, g_hi;
    const double *src;
    double *dst, *work;
    __device__ void operator()(int64_t o, int64_t i) const
    {
        int64_t base = o * n * inner + i;
        hs_poisson_tridiag_line(n, inner, sigma[o * inner + i] * h2 - 2.0, rs, g_lo, g_hi, src + base, dst + base,
                                work + base);
    }
};

extern "C" int hs_poisson_tridiag_cuda(struct hs_cuda_ctx *cu, int64_t outer, int64_t n, int64_t inner,
                                       const double *sigma, double h2, double scale, int g_lo, int g_hi,
                                       const double *src, double *dst, double *work)
{
    if (n <= 0) return HS_OK;
    return launch_each(cu, outer, inner, tridiag_op{n, inner, sigma, h2, h2 * scale, g_lo, g_hi, src, dst, work});
}

// ------------------------------------------------------------------ the operator

struct laplacian_op {
    int ndim;
    int64_t n0, n1, sy, sz;
    const double *u;
    double idx2[3];
    double *out;
    __device__ void operator()(int64_t row, int64_t i) const
    {
        int64_t k = row / n1, j = row - k * n1;
        const int64_t stride[3] = {1, sy, sz};
        out[row * n0 + i] = hs_poisson_laplacian_at(ndim, u, k * sz + j * sy + i, stride, idx2);
    }
};

extern "C" int hs_poisson_laplacian_cuda(struct hs_cuda_ctx *cu, int ndim, const int64_t n[3], const double *u,
                                         int64_t sy, int64_t sz, const double idx2[3], double *out)
{
    laplacian_op op{ndim, n[0], n[1], sy, sz, u, {idx2[0], idx2[1], idx2[2]}, out};
    return launch_each(cu, n[1] * n[2], n[0], op);
}
