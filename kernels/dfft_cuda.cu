// CUDA pack/unpack of the distributed FFT's global transpose: strided copies of complex runs.
#include "kernels/cuda_util.h"
#include "kernels/error.h"
#include "kernels/fft_impl.h"
#include "kernels/types.h"

// One thread per complex element; consecutive threads walk a run, so long runs (3D slabs) are
// coalesced on both sides.  Runs of one element (2D) are a plain strided transpose.
template <typename T2>
__global__ void copy_runs_kernel(int64_t rows, int64_t cols, int64_t run, const T2 *__restrict__ src, int64_t src_rs,
                                 int64_t src_cs, T2 *__restrict__ dst, int64_t dst_rs, int64_t dst_cs)
{
    int64_t total = rows * cols * run;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total; i += (int64_t)gridDim.x * blockDim.x) {
        int64_t k = i % run, rc = i / run;
        int64_t c = rc % cols, r = rc / cols;
        dst[r * dst_rs + c * dst_cs + k] = src[r * src_rs + c * src_cs + k];
    }
}

extern "C" int hs_dfft_cuda_copy_runs(struct hs_cuda_ctx *cu, hs_dtype precision, int64_t rows, int64_t cols,
                                      int64_t run, const void *src, int64_t src_rs, int64_t src_cs, void *dst,
                                      int64_t dst_rs, int64_t dst_cs)
{
    size_t total = (size_t)(rows * cols * run);
    if (total == 0) return HS_OK;
    int blocks = hs_cuda_blocks(cu, total, 256);
    if (precision == HS_F64)
        copy_runs_kernel<<<blocks, 256, 0, cu->stream>>>(rows, cols, run, (const double2 *)src, src_rs, src_cs,
                                                         (double2 *)dst, dst_rs, dst_cs);
    else
        copy_runs_kernel<<<blocks, 256, 0, cu->stream>>>(rows, cols, run, (const float2 *)src, src_rs, src_cs,
                                                         (float2 *)dst, dst_rs, dst_cs);
    HS_CUDA_LAUNCH_CHECK("copy_runs_kernel");
    return HS_OK;
}
