// CUDA kernels of the fast Poisson solver: transpositions fused with the transforms' pre/post steps, those steps alone, the divide and the tridiagonal sweeps.
#include "kernels/cuda_util.h"
#include "kernels/fft/poisson_impl.h"
#include "kernels/fft/poisson_point.h"

#include <stdint.h>

#include "poisson_hook_lto_ir.h" // hs_poisson_hook_lto_ir: poisson_hook_lto.cu as LTO-IR (Makefile, in $(BUILD)/gen)

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

// ------------------------------------------------------------------ transpositions and copies

// A 32 x 32 tile of one batch entry and one source line goes through shared memory so that both
// the reads (along the source's columns) and the writes (along the destination's rows) are
// coalesced; the +1 column avoids bank conflicts.  The Makhoul order splits a warp's 32 rows into
// two runs of 16 (the even rows forward, the odd ones backward), still whole 128-byte segments.
// A spectral source is read one complex value per thread; the tiles of columns j and n - j read
// the same values, and lie in one row of the grid (the same blockIdx.y and z), which runs at
// about the same time, so that the second read comes from L2.
__global__ void transpose_kernel(const __grid_constant__ hs_poisson_tpose t, const double *__restrict__ src,
                                 double *__restrict__ dst)
{
    __shared__ double tile[32][33];
    const int64_t n = t.n, nq = t.cols / n, tiles_r = (t.rows + 31) / 32, tiles_c = (n + 31) / 32;
    for (int64_t bq = blockIdx.z; bq < t.batch * nq; bq += gridDim.z) {
        const int64_t b = bq / nq, q = bq - b * nq;
        double *d = dst + b * t.dbs + q * n * t.dcs;
        for (int64_t ty = blockIdx.y; ty < tiles_r; ty += gridDim.y)
            for (int64_t tx = blockIdx.x; tx < tiles_c; tx += gridDim.x) {
                const int64_t r0 = ty * 32, c0 = tx * 32;
                const int64_t c = c0 + threadIdx.x;
                for (int i = threadIdx.y; i < 32; i += blockDim.y) {
                    int64_t r = r0 + i;
                    if (r < t.rows && c < n) tile[i][threadIdx.x] = hs_poisson_tpose_get(&t, src + b * t.sbs + r * t.srs, q, c);
                }
                __syncthreads();
                const int64_t r = r0 + threadIdx.x;
                if (r < t.rows) {
                    const int64_t pos = hs_poisson_tpose_pos(&t, r);
                    const double sg = hs_poisson_tpose_sign(&t, r);
                    for (int i = threadIdx.y; i < 32; i += blockDim.y)
                        if (c0 + i < n) d[(c0 + i) * t.dcs + pos] = sg * tile[threadIdx.x][i];
                }
                __syncthreads(); // the tile is reused by the next iteration
            }
    }
}

// The back direction: per tile, the coefficients j and n - j (j = k0..k0+31) of 32 rows are read
// along the rows (coalesced as above) into two tiles, and the spectra's entries k0..k0+31 (or the
// real values) are written along the columns.
__global__ void transpose_back_kernel(const __grid_constant__ hs_poisson_tpose t, const double *__restrict__ from,
                                      double *__restrict__ to)
{
    __shared__ double ta[32][33], tb[32][33];
    const int spectra = t.kind != HS_POISSON_COLS_REAL, dct = t.kind == HS_POISSON_COLS_DCT;
    const int64_t n = t.n, h = n / 2 + 1, w = spectra ? h : n, nq = t.cols / n;
    const int64_t tiles_r = (t.rows + 31) / 32, tiles_k = (w + 31) / 32;
    for (int64_t bq = blockIdx.z; bq < t.batch * nq; bq += gridDim.z) {
        const int64_t b = bq / nq, q = bq - b * nq;
        const double *f = from + b * t.dbs + q * n * t.dcs;
        for (int64_t ty = blockIdx.y; ty < tiles_r; ty += gridDim.y)
            for (int64_t tx = blockIdx.x; tx < tiles_k; tx += gridDim.x) {
                const int64_t r0 = ty * 32, k0 = tx * 32;
                const int64_t r = r0 + threadIdx.x;
                if (r < t.rows) {
                    const double *x = f + hs_poisson_tpose_pos(&t, r);
                    const double sg = hs_poisson_tpose_sign(&t, r);
                    for (int i = threadIdx.y; i < 32; i += blockDim.y) {
                        int64_t k = k0 + i;
                        if (k >= w) break;
                        ta[threadIdx.x][i] = sg * x[k * t.dcs];
                        if (spectra) tb[threadIdx.x][i] = k > 0 ? sg * x[(n - k) * t.dcs] : 0.0;
                    }
                }
                __syncthreads();
                const int64_t k = k0 + threadIdx.x;
                if (k < w)
                    for (int i = threadIdx.y; i < 32; i += blockDim.y) {
                        if (r0 + i >= t.rows) break;
                        double *row = to + b * t.sbs + (r0 + i) * t.srs;
                        if (!spectra) row[q * n + k] = ta[i][threadIdx.x];
                        else hs_poisson_spec_at(n, k, dct, t.tw, ta[i][threadIdx.x], tb[i][threadIdx.x], row + 2 * q * h);
                    }
                __syncthreads(); // the tiles are reused by the next iteration
            }
    }
}

static unsigned cap(int64_t v, int64_t most) { return (unsigned)(v < 1 ? 1 : v < most ? v : most); }

// Tiles of (rows, cols) per batch entry: about 16 blocks per SM in all; the grid-stride loops take the rest.
static dim3 tile_grid(const struct hs_cuda_ctx *cu, int64_t batch, int64_t rows, int64_t cols)
{
    int64_t tr = (rows + 31) / 32, tc = (cols + 31) / 32, want = (int64_t)cu->sm_count * 16;
    unsigned gx = cap(tc, 65535), gy = cap(tr, want / gx > 0 ? want / gx : 1);
    unsigned gz = cap(batch, want / ((int64_t)gx * gy) > 0 ? want / ((int64_t)gx * gy) : 1);
    if (gz > 65535) gz = 65535;
    if (gy > 65535) gy = 65535;
    return dim3(gx, gy, gz);
}

extern "C" int hs_poisson_transpose_cuda(struct hs_cuda_ctx *cu, const hs_poisson_tpose *t, const double *src,
                                         double *dst)
{
    if (t->batch <= 0 || t->rows <= 0 || t->cols <= 0) return HS_OK;
    dim3 grid = tile_grid(cu, t->batch * (t->cols / t->n), t->rows, t->n);
    transpose_kernel<<<grid, dim3(32, 8), 0, cu->stream>>>(*t, src, dst);
    HS_CUDA_LAUNCH_CHECK("transpose_kernel");
    return HS_OK;
}

extern "C" int hs_poisson_transpose_back_cuda(struct hs_cuda_ctx *cu, const hs_poisson_tpose *t, const double *from,
                                              double *to)
{
    if (t->batch <= 0 || t->rows <= 0 || t->cols <= 0) return HS_OK;
    int64_t w = t->kind != HS_POISSON_COLS_REAL ? t->n / 2 + 1 : t->n;
    dim3 grid = tile_grid(cu, t->batch * (t->cols / t->n), t->rows, w);
    transpose_back_kernel<<<grid, dim3(32, 8), 0, cu->stream>>>(*t, from, to);
    HS_CUDA_LAUNCH_CHECK("transpose_back_kernel");
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

// ------------------------------------------------------------------ transform steps that no transposition does

struct line_post_op {
    int64_t n, h;
    int dct;
    const double *tw, *spec;
    double *dst;
    // one thread per written coefficient: coalesced writes, each complex value read by two threads
    __device__ void operator()(int64_t l, int64_t c) const { dst[l * n + c] = hs_poisson_coef_at(n, c, dct, tw, spec + 2 * l * h); }
};
struct line_pre_op {
    int64_t n, h;
    int dct;
    const double *tw, *src;
    double *spec;
    __device__ void operator()(int64_t l, int64_t k) const
    {
        const double *x = src + l * n;
        hs_poisson_spec_at(n, k, dct, tw, x[k], k > 0 ? x[n - k] : 0.0, spec + 2 * l * h);
    }
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
        dst[l * n + i] = hs_poisson_sign(alternate, i) * src[l * n + hs_poisson_reorder_position(n, i)];
    }
};

// One thread per written element (coalesced writes, gathered reads), as the CPU twin.
struct order_op {
    int64_t n1, n0;
    int o1, o0, to_ordered;
    const double *src;
    double *dst;
    __device__ void operator()(int64_t row, int64_t i) const
    {
        const int64_t p = row / n1, j = row - p * n1, base = p * n1 * n0;
        const int a1 = o1 == 2, a0 = o0 == 2;
        if (to_ordered) {
            const int64_t sj = hs_poisson_order_source(o1, n1, j), si = hs_poisson_order_source(o0, n0, i);
            dst[base + j * n0 + i] = hs_poisson_sign(a1, sj) * hs_poisson_sign(a0, si) * src[base + sj * n0 + si];
        } else {
            const int64_t pj = hs_poisson_order_position(o1, n1, j), pi = hs_poisson_order_position(o0, n0, i);
            dst[base + j * n0 + i] = hs_poisson_sign(a1, j) * hs_poisson_sign(a0, i) * src[base + pj * n0 + pi];
        }
    }
};

extern "C" int hs_poisson_order_cuda(struct hs_cuda_ctx *cu, int64_t planes, int64_t n1, int64_t n0, int o1, int o0,
                                     int to_ordered, const double *src, double *dst)
{
    if (n1 <= 0) return HS_OK;
    return launch_each(cu, planes * n1, n0, order_op{n1, n0, o1, o0, to_ordered, src, dst});
}

extern "C" int hs_poisson_line_post_cuda(struct hs_cuda_ctx *cu, int64_t lines, int64_t n, int dct, const double *tw,
                                         const double *spec, double *dst)
{
    return launch_each(cu, lines, n, line_post_op{n, n / 2 + 1, dct, tw, spec, dst});
}
extern "C" int hs_poisson_line_pre_cuda(struct hs_cuda_ctx *cu, int64_t lines, int64_t n, int dct, const double *tw,
                                        const double *src, double *spec)
{
    return launch_each(cu, lines, n / 2 + 1, line_pre_op{n, n / 2 + 1, dct, tw, src, spec});
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

// One thread per pair of rows (k1, n1 - k1) at column k2: consecutive threads take consecutive
// columns, so each of the two rows is read and written coalesced.
struct plane_divide_op {
    int64_t n1, n0;
    int dct;
    const double *tw1, *tw0;
    double scale;
    const double *ev1, *ev0;
    double *spec;
    __device__ void operator()(int64_t k1, int64_t k2) const
    {
        hs_poisson_plane_divide_pair(n1, n0, k1, k2, dct, tw1, tw0, scale, ev1, ev0, spec);
    }
};

extern "C" int hs_poisson_plane_divide_cuda(struct hs_cuda_ctx *cu, int64_t n1, int64_t n0, int dct, const double *tw1,
                                            const double *tw0, double scale, const double *ev1, const double *ev0,
                                            double *spec)
{
    return launch_each(cu, n1 / 2 + 1, n0 / 2 + 1, plane_divide_op{n1, n0, dct, tw1, tw0, scale, ev1, ev0, spec});
}

extern "C" int hs_poisson_divide_hook_cuda(const char **symbol, const void **lto_ir, size_t *size)
{
    *symbol = "hs_poisson_divide_hook";
    *lto_ir = hs_poisson_hook_lto_ir;
    *size = sizeof hs_poisson_hook_lto_ir;
    return HS_OK;
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
