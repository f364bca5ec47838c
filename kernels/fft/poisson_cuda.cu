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
// One thread per written element (coalesced writes, gathered reads), as the CPU twin.
struct order_op {
    int64_t n1, n0, r1; // r1: the destination's rows a plane
    int o1, o0, x1, x0, to_ordered;
    const double *src;
    double *dst;
    __device__ void operator()(int64_t row, int64_t i) const
    {
        const int64_t m0 = hs_poisson_ext_len(x0, n0);
        double s1 = 1.0, s0;
        if (o1 == 0 && x1 == 0) { // the lines of one dimension (the line transforms): no row to place, no division
            if (to_ordered) {
                const int64_t si = hs_poisson_order_gather(o0, x0, n0, i, &s0);
                dst[row * m0 + i] = s1 * s0 * src[row * n0 + si];
            } else {
                const int64_t pi = hs_poisson_order_back(o0, x0, n0, i, &s0);
                dst[row * n0 + i] = s1 * s0 * src[row * m0 + pi];
            }
            return;
        }
        const int64_t p = row / r1, j = row - p * r1;
        if (to_ordered) {
            const int64_t sj = hs_poisson_order_gather(o1, x1, n1, j, &s1), si = hs_poisson_order_gather(o0, x0, n0, i, &s0);
            dst[row * m0 + i] = s1 * s0 * src[(p * n1 + sj) * n0 + si];
        } else {
            const int64_t m1 = hs_poisson_ext_len(x1, n1);
            const int64_t pj = hs_poisson_order_back(o1, x1, n1, j, &s1), pi = hs_poisson_order_back(o0, x0, n0, i, &s0);
            dst[row * n0 + i] = s1 * s0 * src[(p * m1 + pj) * m0 + pi];
        }
    }
};

extern "C" int hs_poisson_order_cuda(struct hs_cuda_ctx *cu, int64_t planes, int64_t n1, int64_t n0, int o1, int o0,
                                     int x1, int x0, int to_ordered, const double *src, double *dst)
{
    if (n1 <= 0) return HS_OK;
    const int64_t r1 = to_ordered ? hs_poisson_ext_len(x1, n1) : n1, r0 = to_ordered ? hs_poisson_ext_len(x0, n0) : n0;
    return launch_each(cu, planes * r1, r0, order_op{n1, n0, r1, o1, o0, x1, x0, to_ordered, src, dst});
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
    return launch_each(cu, n1 / 2 + 1, hs_poisson_plane_cols(n0, dct), plane_divide_op{n1, n0, dct, tw1, tw0, scale, ev1, ev0, spec});
}

// DCT4's pack and unpack: one thread per written value (coalesced writes), as the CPU twins.
struct dct4_pack_op {
    int64_t n1, n0;
    int o1, side;
    const double *tw4, *f;
    double *spec;
    __device__ void operator()(int64_t jp, int64_t j) const
    {
        double v[2];
        hs_poisson_dct4_pack_at(n1, n0, o1, side, tw4, f, jp, j, v);
        reinterpret_cast<double2 *>(spec)[jp * (n0 / 2) + j] = make_double2(v[0], v[1]);
    }
};
struct dct4_unpack_op {
    int64_t n1, n0;
    int o1, side;
    const double *tw4, *spec;
    double *p;
    __device__ void operator()(int64_t y, int64_t i) const { p[y * n0 + i] = hs_poisson_dct4_unpack_at(n1, n0, o1, side, tw4, spec, y, i); }
};

extern "C" int hs_poisson_dct4_pack_cuda(struct hs_cuda_ctx *cu, int64_t n1, int64_t n0, int o1, int side, const double *tw4,
                                         const double *f, double *spec)
{
    return launch_each(cu, n1, n0 / 2, dct4_pack_op{n1, n0, o1, side, tw4, f, spec});
}
extern "C" int hs_poisson_dct4_unpack_cuda(struct hs_cuda_ctx *cu, int64_t n1, int64_t n0, int o1, int side,
                                           const double *tw4, const double *spec, double *p)
{
    return launch_each(cu, n1, n0, dct4_unpack_op{n1, n0, o1, side, tw4, spec, p});
}

// ------------------------------------------------------------------ the fused column solve

// hs_poisson_column_solve_cuda: a block holds SLOTS = 4096 complex values of the spectrum in
// shared memory, cols = 4096 / n1 whole columns (one column of 4096 at the largest), and 256
// threads transform them there: Stockham passes of radix 16 (a thread's 16 values in registers,
// their DFT unrolled as 4 x 4 with literal twiddles, the pass's twiddles w^r as powers of one table
// value), one pass of radix 2, 4 or 8 first when log2 n1 is not a multiple of 4, then the pairs'
// divide, then the same passes backward.  Each column is read from and written to global memory
// once.  Shared indices are padded by one slot every 16 so that the first pass's stride-16 writes
// fall in different banks.  Latency-bound at two blocks (16 warps) an SM: ncu (H100, 4096^2, with
// the largest shared-memory carveout, since dropped) measured 0.45 ms, a warp issuing every 16
// cycles, its waits on shared memory, the barriers and the column loads about equally; the whole
// 4096^2 solve then took 0.60 ms, and 0.52 ms with the default carveout (more L1 for the tables),
// against 0.68 ms with cuFFT's column transforms and the divide's pass.
namespace colsolve {
constexpr int SLOTS = 4096, THREADS_ = 256, RADIX = 16;

__device__ __forceinline__ int pad(int i) { return i + (i >> 4); }

// cos and sin of 2 pi e / 16 as literals, so that each twiddle of the in-register DFTs is a
// compile-time constant (and the trivial ones, 1 and +-i, cost no multiply).
__host__ __device__ constexpr double cos16(int e)
{
    switch (e & 15) {
    case 0: return 1.0;
    case 1: case 15: return 0.92387953251128674;
    case 2: case 14: return 0.70710678118654757;
    case 3: case 13: return 0.38268343236508978;
    case 4: case 12: return 0.0;
    case 5: case 11: return -0.38268343236508978;
    case 6: case 10: return -0.70710678118654757;
    default: return e & 1 ? -0.92387953251128674 : -1.0; /* 7, 9; 8 */
    }
}
__host__ __device__ constexpr double sin16(int e) { return cos16(e - 4); }

__device__ __forceinline__ double2 cadd(double2 a, double2 b) { return make_double2(a.x + b.x, a.y + b.y); }
__device__ __forceinline__ double2 csub(double2 a, double2 b) { return make_double2(a.x - b.x, a.y - b.y); }

// v exp(S 2 pi i E / 16), S = -1 forward, +1 backward.
template <int E, int S> __device__ __forceinline__ double2 twiddle16(double2 v)
{
    constexpr int e = ((E % 16) + 16) % 16;
    if constexpr (e == 0) return v;
    else if constexpr (e == 8) return make_double2(-v.x, -v.y);
    else if constexpr (e == 4 || e == 12) { /* times S i (e = 4) or -S i (e = 12) */
        constexpr int s = e == 4 ? S : -S;
        return s > 0 ? make_double2(-v.y, v.x) : make_double2(v.y, -v.x);
    } else {
        constexpr double c = cos16(e), sn = S * sin16(e);
        return make_double2(v.x * c - v.y * sn, v.x * sn + v.y * c);
    }
}

// In-place DFT of 4 values a[0], a[ST], a[2 ST], a[3 ST] (no multiplies).
template <int S, int ST> __device__ __forceinline__ void dft4(double2 *a)
{
    const double2 t0 = cadd(a[0], a[2 * ST]), t1 = csub(a[0], a[2 * ST]);
    const double2 t2 = cadd(a[ST], a[3 * ST]), t3 = twiddle16<4, S>(csub(a[ST], a[3 * ST]));
    a[0] = cadd(t0, t2), a[2 * ST] = csub(t0, t2);
    a[ST] = cadd(t1, t3), a[3 * ST] = csub(t1, t3);
}

// In-register DFT of R points (R = 2, 4, 8, 16), S = -1 forward, +1 backward, natural order in
// and out.  16 = 4 x 4: DFTs of 4 over the four interleaved quarters, the twiddles w^(n2 k1), DFTs
// of 4 across, and the transposition of the 4 x 4 result; 8 = 2 x 4 the same way.
template <int R, int S> __device__ __forceinline__ void dft(double2 *x)
{
    if constexpr (R == 2) {
        const double2 u = x[0], v = x[1];
        x[0] = cadd(u, v), x[1] = csub(u, v);
    } else if constexpr (R == 4) {
        dft4<S, 1>(x);
    } else if constexpr (R == 8) { /* n = 2 n1 + n2: DFT4 over n1 for n2 = 0, 1; w8^(n2 k1); DFT2 over n2 */
        dft4<S, 2>(x), dft4<S, 2>(x + 1);
        x[3] = twiddle16<2, S>(x[3]), x[5] = twiddle16<4, S>(x[5]), x[7] = twiddle16<6, S>(x[7]);
        double2 y[8];
#pragma unroll
        for (int k1 = 0; k1 < 4; k1++) { /* X[k1 + 4 k2] from x[2 k1 + n2] */
            y[k1] = cadd(x[2 * k1], x[2 * k1 + 1]);
            y[k1 + 4] = csub(x[2 * k1], x[2 * k1 + 1]);
        }
#pragma unroll
        for (int i = 0; i < 8; i++) x[i] = y[i];
    } else { /* n = 4 n1 + n2: after the first DFTs x[4 k1 + n2] holds Y[n2][k1] */
#pragma unroll
        for (int n2 = 0; n2 < 4; n2++) dft4<S, 4>(x + n2);
        x[5] = twiddle16<1, S>(x[5]), x[6] = twiddle16<2, S>(x[6]), x[7] = twiddle16<3, S>(x[7]);
        x[9] = twiddle16<2, S>(x[9]), x[10] = twiddle16<4, S>(x[10]), x[11] = twiddle16<6, S>(x[11]);
        x[13] = twiddle16<3, S>(x[13]), x[14] = twiddle16<6, S>(x[14]), x[15] = twiddle16<9, S>(x[15]);
        /* DFT4 over n2 within each row k1: x[4 k1 + n2] -> Z[k1][k2], then X[k1 + 4 k2] = Z[k1][k2] */
#pragma unroll
        for (int k1 = 0; k1 < 4; k1++) dft4<S, 1>(x + 4 * k1);
        double2 y[16];
#pragma unroll
        for (int k1 = 0; k1 < 4; k1++)
#pragma unroll
            for (int k2 = 0; k2 < 4; k2++) y[k1 + 4 * k2] = x[4 * k1 + k2];
#pragma unroll
        for (int i = 0; i < 16; i++) x[i] = y[i];
    }
}

// One Stockham pass of radix R over every column of the block (NS: the length of the
// sub-transforms done so far).  Thread `lane` of a column's N1/16 threads takes the butterflies
// j = lane + it N1/16, it < 16/R: reads x_r = s[j + r N1/R], twiddles x_r by w^(r k) (k = j mod NS,
// w = exp(S 2 pi i / (NS R))), the R-point DFT, writes x_r to s[(j - k) R + k + r NS].  Every
// read of the pass precedes every write (a barrier between).
template <int N1, int NS, int R, int S>
__device__ __forceinline__ void pass(double2 *col, const double2 *__restrict__ tw, int lane, bool active)
{
    constexpr int IT = RADIX / R, M = N1 / R, NTH = N1 / RADIX, STEP = N1 / (NS * R);
    // w^1 of each butterfly (exp(S 2 pi i k STEP / n1): the table holds exp(-2 pi i t / n1), itself
    // forward and its conjugate backward), loaded first so that its latency passes with the barrier's
    double2 w1[IT];
#pragma unroll
    for (int it = 0; it < IT; it++) {
        const double2 t = NS > 1 && active ? __ldg(&tw[((lane + it * NTH) & (NS - 1)) * STEP]) : make_double2(1.0, 0.0);
        w1[it] = make_double2(t.x, S < 0 ? t.y : -t.y);
    }
    double2 x[IT][R]; // (every element set on every path, so that the array stays in registers)
#pragma unroll
    for (int it = 0; it < IT; it++) {
        const int j = lane + it * NTH;
#pragma unroll
        for (int r = 0; r < R; r++) x[it][r] = active ? col[pad(j + r * M)] : make_double2(0.0, 0.0);
    }
    __syncthreads();
    if (active) {
#pragma unroll
        for (int it = 0; it < IT; it++) {
            const int j = lane + it * NTH, k = j & (NS - 1);
            if constexpr (NS > 1) {
                // w^r as powers of w^1: loading each w^r from the table touched up to 32 cache
                // lines a warp per load and held the pass on L1
                const double2 u = w1[it];
                double2 w = u;
#pragma unroll
                for (int r = 1; r < R; r++) {
                    const double2 v = x[it][r];
                    x[it][r] = make_double2(v.x * w.x - v.y * w.y, v.x * w.y + v.y * w.x);
                    if (r + 1 < R) w = make_double2(w.x * u.x - w.y * u.y, w.x * u.y + w.y * u.x);
                }
            }
            dft<R, S>(x[it]);
            const int base = (j - k) * R + k;
#pragma unroll
            for (int r = 0; r < R; r++) col[pad(base + r * NS)] = x[it][r];
        }
    }
    __syncthreads();
}

// The radix-16 passes from sub-length NS on (none once NS = N1).
template <int N1, int NS, int S>
__device__ __forceinline__ void passes16(double2 *col, const double2 *__restrict__ tw, int lane, bool active)
{
    if constexpr (NS < N1) {
        pass<N1, NS, RADIX, S>(col, tw, lane, active);
        passes16<N1, NS * RADIX, S>(col, tw, lane, active);
    }
}

// The whole transform of every column of the block: the short pass first, then the radix-16 ones.
template <int LOG2N, int S>
__device__ __forceinline__ void transform(double2 *col, const double2 *__restrict__ tw, int lane, bool active)
{
    constexpr int N1 = 1 << LOG2N, SHORT = 1 << (LOG2N & 3);
    if constexpr (SHORT > 1) {
        pass<N1, 1, SHORT, S>(col, tw, lane, active);
        passes16<N1, SHORT, S>(col, tw, lane, active);
    } else {
        passes16<N1, 1, S>(col, tw, lane, active);
    }
}

struct args {
    int n0, h0, dct;
    const double2 *col_tw;
    const double *tw1, *tw0, *ev1, *ev0;
    double scale;
    double2 *spec;
};

// Two blocks an SM (128 registers, no spills): at three (80 registers, small spills, and the
// largest shared-memory carveout) the 4096 columns measured slower on an H100 (0.73 against 0.60 ms
// a 4096^2 solve in bench_cfd_ns, both with that carveout).
template <int LOG2N>
__global__ void __launch_bounds__(THREADS_, 2) column_solve_kernel(const __grid_constant__ args a)
{
    extern __shared__ double2 smem[];
    constexpr int n1 = 1 << LOG2N, cols = SLOTS / n1, nth = n1 / RADIX;
    const int c0 = blockIdx.x * cols;
    const int t = threadIdx.x, my_col = t / nth, lane = t - my_col * nth;
    const int stride = pad(n1); // a column's slots, padded
    // load: consecutive threads take consecutive columns of a row (the block's columns are adjacent)
    // every load of the block issued before the first store to shared memory (a rolled loop
    // waited for each load in turn)
    constexpr int PER = SLOTS / THREADS_;
    double2 v[PER];
#pragma unroll
    for (int it = 0; it < PER; it++) {
        const int e = t + it * THREADS_, c = e % cols, k1 = e / cols;
        v[it] = c0 + c < a.h0 ? a.spec[(size_t)k1 * a.h0 + c0 + c] : make_double2(0.0, 0.0);
    }
#pragma unroll
    for (int it = 0; it < PER; it++) {
        const int e = t + it * THREADS_, c = e % cols, k1 = e / cols;
        smem[c * stride + pad(k1)] = v[it];
    }
    __syncthreads();
    double2 *col = smem + my_col * stride;
    const bool active = my_col < cols && c0 + my_col < a.h0;
    transform<LOG2N, -1>(col, a.col_tw, lane, active);
    // the divide: one thread a pair of rows (k1, n1 - k1) of one column, in chunks of three pairs
    // whose table values (twiddles, eigenvalues) are all loaded before the first is used
    constexpr int PAIRS = cols * (n1 / 2 + 1), DIV_IT = (PAIRS + THREADS_ - 1) / THREADS_, CH = 3;
#pragma unroll 1
    for (int g = 0; g < DIV_IT; g += CH) {
        hs_poisson_pair_tables tv[CH];
#pragma unroll
        for (int q = 0; q < CH; q++) {
            const int e = t + (g + q) * THREADS_, c = e % cols, k1 = e / cols, k2 = c0 + c;
            const bool ok = g + q < DIV_IT && e < PAIRS && k2 < a.h0;
            hs_poisson_plane_tables(n1, a.n0, ok ? k1 : 0, ok ? k2 : 0, a.dct, a.tw1, a.tw0, a.ev1, a.ev0, &tv[q]);
        }
#pragma unroll
        for (int q = 0; q < CH; q++) {
            const int e = t + (g + q) * THREADS_, c = e % cols, k1 = e / cols, k2 = c0 + c;
            if (g + q >= DIV_IT || e >= PAIRS || k2 >= a.h0) continue;
            double2 *v = smem + c * stride;
            const int m1 = k1 == 0 ? 0 : n1 - k1;
            const double A[2] = {v[pad(k1)].x, v[pad(k1)].y}, B[2] = {v[pad(m1)].x, v[pad(m1)].y};
            double ao[2], bo[2];
            hs_poisson_plane_pair(a.dct, k1, k2, a.scale, &tv[q], A, B, ao, bo);
            v[pad(k1)] = make_double2(ao[0], ao[1]);
            if (m1 != k1) v[pad(m1)] = make_double2(bo[0], bo[1]);
        }
    }
    __syncthreads();
    transform<LOG2N, 1>(col, a.col_tw, lane, active);
#pragma unroll
    for (int it = 0; it < PER; it++) {
        const int e = t + it * THREADS_, c = e % cols, k1 = e / cols;
        if (c0 + c < a.h0) a.spec[(size_t)k1 * a.h0 + c0 + c] = smem[c * stride + pad(k1)];
    }
}
} // namespace colsolve

template <int LOG2N> static int launch_columns_at(struct hs_cuda_ctx *cu, unsigned blocks, size_t shmem, const colsolve::args &a)
{
    // the block's shared memory (fixed by LOG2N) is over the 48 KB a launch gets without asking:
    // allowed once a device, not at every solve
    static bool ready[HS_MAX_DEVICES];
    HS_CHECK_DEVICE_MEMO(cu);
    if (!ready[cu->device]) {
        HS_CUDA_CHECK(cudaFuncSetAttribute(colsolve::column_solve_kernel<LOG2N>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shmem));
        ready[cu->device] = true;
    }
    colsolve::column_solve_kernel<LOG2N><<<blocks, colsolve::THREADS_, shmem, cu->stream>>>(a);
    HS_CUDA_LAUNCH_CHECK("column_solve_kernel");
    return HS_OK;
}

static int launch_columns(struct hs_cuda_ctx *cu, int log2n, unsigned blocks, size_t shmem, const colsolve::args &a)
{
    switch (log2n) {
    case 4: return launch_columns_at<4>(cu, blocks, shmem, a);
    case 5: return launch_columns_at<5>(cu, blocks, shmem, a);
    case 6: return launch_columns_at<6>(cu, blocks, shmem, a);
    case 7: return launch_columns_at<7>(cu, blocks, shmem, a);
    case 8: return launch_columns_at<8>(cu, blocks, shmem, a);
    case 9: return launch_columns_at<9>(cu, blocks, shmem, a);
    case 10: return launch_columns_at<10>(cu, blocks, shmem, a);
    case 11: return launch_columns_at<11>(cu, blocks, shmem, a);
    default: return launch_columns_at<12>(cu, blocks, shmem, a);
    }
}

extern "C" int hs_poisson_column_solve_cuda(struct hs_cuda_ctx *cu, int64_t n1, int64_t n0, int dct, const double *col_tw,
                                            const double *tw1, const double *tw0, double scale, const double *ev1,
                                            const double *ev0, double *spec)
{
    using namespace colsolve;
    if (!hs_poisson_column_fits(n1))
        return HS_FAIL(HS_ERR_RUNTIME, "hs_poisson_column_solve_cuda: column length %lld is not a power of two in 16..4096",
                       (long long)n1);
    const int64_t h0 = hs_poisson_plane_cols(n0, dct);
    if (h0 > INT32_MAX / 2 || n1 * h0 > INT32_MAX) return HS_FAIL(HS_ERR_RUNTIME, "hs_poisson_column_solve_cuda: plane too large");
    args a;
    a.n0 = (int)n0, a.h0 = (int)h0, a.dct = dct;
    const int cols = SLOTS / (int)n1;
    int log2n = 0;
    while ((1 << log2n) < n1) log2n++;
    a.col_tw = (const double2 *)col_tw, a.tw1 = tw1, a.tw0 = tw0, a.ev1 = ev1, a.ev0 = ev0, a.scale = scale;
    a.spec = (double2 *)spec;
    const size_t shmem = (size_t)cols * (size_t)(n1 + n1 / 16) * sizeof(double2); // padded columns
    const unsigned blocks = (unsigned)((h0 + cols - 1) / cols);
    return launch_columns(cu, log2n, blocks, shmem, a);
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
