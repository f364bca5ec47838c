// CUDA pack/unpack of the distributed FFT's global transpose: strided copies of complex runs.
#include "kernels/cuda_util.h"
#include "kernels/error.h"
#include "kernels/fft/fft_impl.h"
#include "kernels/types.h"

// Runs of one or a few elements (2D transposes): one thread per complex element.
template <typename T2>
__global__ void copy_short_runs_kernel(int64_t rows, int64_t cols, int64_t run, const T2 *__restrict__ src,
                                       int64_t src_rs, int64_t src_cs, T2 *__restrict__ dst, int64_t dst_rs,
                                       int64_t dst_cs)
{
    int64_t total = rows * cols * run;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total; i += (int64_t)gridDim.x * blockDim.x) {
        int64_t k = i % run, rc = i / run;
        int64_t c = rc % cols, r = rc / cols;
        dst[r * dst_rs + c * dst_cs + k] = src[r * src_rs + c * src_cs + k];
    }
}

// Long runs (3D slabs): grid rows y walk the runs, threads x walk inside a run, so both sides are
// coalesced and the index arithmetic (64-bit division) is paid once per run, not per element.
template <typename T2>
__global__ void copy_long_runs_kernel(int64_t rows, int64_t cols, int64_t run, const T2 *__restrict__ src,
                                      int64_t src_rs, int64_t src_cs, T2 *__restrict__ dst, int64_t dst_rs,
                                      int64_t dst_cs)
{
    for (int64_t rc = blockIdx.y; rc < rows * cols; rc += gridDim.y) {
        int64_t r = rc / cols, c = rc - r * cols;
        const T2 *s = src + r * src_rs + c * src_cs;
        T2 *d = dst + r * dst_rs + c * dst_cs;
        for (int64_t k = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; k < run; k += (int64_t)gridDim.x * blockDim.x)
            d[k] = s[k];
    }
}

// Single elements moved from unit column stride (src) to unit row stride (dst): the 2D slab
// transpose.  A 32 x 32 tile goes through shared memory so that reads and writes are both
// coalesced; the +1 column keeps the transposed reads free of bank conflicts.
template <typename T2>
__global__ void transpose_kernel(int64_t rows, int64_t cols, const T2 *__restrict__ src, int64_t src_rs,
                                 T2 *__restrict__ dst, int64_t dst_cs)
{
    __shared__ T2 tile[32][33];
    int64_t tiles_r = (rows + 31) / 32, tiles_c = (cols + 31) / 32;
    for (int64_t ty = blockIdx.y; ty < tiles_r; ty += gridDim.y)
        for (int64_t tx = blockIdx.x; tx < tiles_c; tx += gridDim.x) {
            int64_t r0 = ty * 32, c0 = tx * 32;
            for (int i = threadIdx.y; i < 32; i += blockDim.y) {
                int64_t r = r0 + i, c = c0 + threadIdx.x;
                if (r < rows && c < cols) tile[i][threadIdx.x] = src[r * src_rs + c];
            }
            __syncthreads();
            for (int i = threadIdx.y; i < 32; i += blockDim.y) {
                int64_t c = c0 + i, r = r0 + threadIdx.x;
                if (r < rows && c < cols) dst[c * dst_cs + r] = tile[threadIdx.x][i];
            }
            __syncthreads(); // the tile is reused by the next iteration
        }
}

template <typename T2>
static int launch_copy(struct hs_cuda_ctx *cu, int64_t rows, int64_t cols, int64_t run, const void *src, int64_t src_rs,
                       int64_t src_cs, void *dst, int64_t dst_rs, int64_t dst_cs)
{
    const T2 *s = (const T2 *)src;
    T2 *d = (T2 *)dst;
    if (run == 1 && src_cs == 1 && dst_rs == 1 && rows >= 32 && cols >= 32) {
        int64_t tr = (rows + 31) / 32, tc = (cols + 31) / 32;
        dim3 grid((unsigned)(tc < 65535 ? tc : 65535), (unsigned)(tr < 65535 ? tr : 65535));
        transpose_kernel<<<grid, dim3(32, 8), 0, cu->stream>>>(rows, cols, s, src_rs, d, dst_cs);
        HS_CUDA_LAUNCH_CHECK("transpose_kernel");
        return HS_OK;
    }
    if (run == 1 && src_rs == 1 && dst_cs == 1 && rows >= 32 && cols >= 32) // the same, seen with rows and columns swapped
        return launch_copy<T2>(cu, cols, rows, 1, src, src_cs, 1, dst, 1, dst_rs);
    if (run < 64) {
        int blocks = hs_cuda_blocks(cu, (size_t)(rows * cols * run), 256);
        copy_short_runs_kernel<<<blocks, 256, 0, cu->stream>>>(rows, cols, run, s, src_rs, src_cs, d, dst_rs, dst_cs);
        HS_CUDA_LAUNCH_CHECK("copy_short_runs_kernel");
        return HS_OK;
    }
    int64_t bx = (run + 127) / 128, by = rows * cols;
    dim3 grid((unsigned)(bx < 64 ? bx : 64), (unsigned)(by < 65535 ? by : 65535));
    copy_long_runs_kernel<<<grid, 128, 0, cu->stream>>>(rows, cols, run, s, src_rs, src_cs, d, dst_rs, dst_cs);
    HS_CUDA_LAUNCH_CHECK("copy_long_runs_kernel");
    return HS_OK;
}

extern "C" int hs_dfft_copy_runs_cuda(struct hs_cuda_ctx *cu, hs_dtype precision, int64_t rows, int64_t cols,
                                      int64_t run, const void *src, int64_t src_rs, int64_t src_cs, void *dst,
                                      int64_t dst_rs, int64_t dst_cs)
{
    if (rows <= 0 || cols <= 0 || run <= 0) return HS_OK;
    if (precision == HS_F64) return launch_copy<double2>(cu, rows, cols, run, src, src_rs, src_cs, dst, dst_rs, dst_cs);
    return launch_copy<float2>(cu, rows, cols, run, src, src_rs, src_cs, dst, dst_rs, dst_cs);
}
