// Optimiser family, CUDA backend: the fused Adam update (one pass over x, g, m, v).
#include "kernels/cuda_util.h"
#include "kernels/error.h"
#include "kernels/nn/optim_impl.h"

namespace {

constexpr int kThreads = 256;

__global__ void adam_kernel(size_t n, double lr, double beta1, double beta2, double eps, double bc1, double bc2,
                            double wd, double gscale, double *__restrict__ x, const double *__restrict__ g, double *__restrict__ m,
                            double *__restrict__ v)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        hs_adam_point(i, lr, beta1, beta2, eps, bc1, bc2, wd, gscale, x, g, m, v);
    }
}

} // namespace

extern "C" int hs_adam_update_cuda(struct hs_cuda_ctx *cu, size_t n, double lr, double beta1, double beta2,
                                   double eps, double bc1, double bc2, double wd, double gscale, double *x,
                                   const double *g, double *m, double *v)
{
    if (n == 0) return HS_OK;
    adam_kernel<<<hs_cuda_blocks(cu, n, kThreads), kThreads, 0, cu->stream>>>(n, lr, beta1, beta2, eps, bc1, bc2, wd,
                                                                               gscale, x, g, m, v);
    HS_CUDA_LAUNCH_CHECK("adam_kernel");
    return HS_OK;
}
