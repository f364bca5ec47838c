// The spectral CFD model's kernels on the GPU: one thread per mode (or grid point), the pointwise operations of spectral_point.h.
#include "kernels/cuda_util.h"
#include "solvers/cfd/spectral_point.h"

namespace {

// Threads x walk ky inside a kx plane (contiguous), grid rows y walk the planes: no 64-bit division.
template <bool STAGE>
__global__ void __launch_bounds__(256) spectral_kernel(const hs_spectral_launch L)
{
    const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i >= L.ny) return;
    for (int64_t p = blockIdx.y; p < L.planes; p += gridDim.y) {
        if (STAGE) hs_spectral_stage(&L, p, i);
        else hs_spectral_point(&L, p, i);
    }
}

__global__ void __launch_bounds__(256) products_kernel(const hs_spectral_launch L)
{
    for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < L.count; e += (int64_t)gridDim.x * blockDim.x)
        hs_spectral_products(&L, e);
}

} // namespace

extern "C" int hs_spectral_launch_cuda(struct hs_cuda_ctx *cu, const hs_spectral_launch *L)
{
    if (L->op == HS_SP_PRODUCTS) {
        if (L->count <= 0) return HS_OK;
        products_kernel<<<hs_cuda_blocks(cu, (size_t)L->count, 256), 256, 0, cu->stream>>>(*L);
        HS_CUDA_LAUNCH_CHECK("products_kernel");
        return HS_OK;
    }
    if (L->planes <= 0 || L->ny <= 0) return HS_OK;
    dim3 grid((unsigned)((L->ny + 255) / 256), (unsigned)(L->planes < 65535 ? L->planes : 65535));
    if (L->op == HS_SP_STAGE) {
        spectral_kernel<true><<<grid, 256, 0, cu->stream>>>(*L);
        HS_CUDA_LAUNCH_CHECK("spectral_kernel<stage>");
    } else {
        spectral_kernel<false><<<grid, 256, 0, cu->stream>>>(*L);
        HS_CUDA_LAUNCH_CHECK("spectral_kernel");
    }
    return HS_OK;
}
