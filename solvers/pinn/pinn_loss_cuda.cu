// PINN losses, CUDA backend: residual and data misfit with their adjoint seeds, one thread per point.
#include "kernels/cuda_util.h"
#include "kernels/error.h"
#include "physics/pde1d.h"
#include "solvers/pinn/pinn_loss_impl.h"

namespace {

constexpr int kThreads = 256;

template <typename T>
__global__ void residual_kernel(int kind, double coef, double st, double sx, size_t n, double scale, const T *__restrict__ out,
                                T *__restrict__ dout, double *__restrict__ sq)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        double dr[4];
        double r = hs_pde1d_residual(kind, coef, out[i], st * out[n + i], sx * out[2 * n + i], sx * sx * out[3 * n + i], dr);
        sq[i] = r * r;
        dr[1] *= st, dr[2] *= sx, dr[3] *= sx * sx; // chain rule of the input scaling
        for (int c = 0; c < 4; c++) dout[c * n + i] = (T)(2.0 * scale * r * dr[c]);
    }
}

template <typename T>
__global__ void data_kernel(size_t n, double scale, const T *__restrict__ out, const double *__restrict__ target,
                            T *__restrict__ dout, double *__restrict__ sq)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        double e = (double)out[i] - target[i];
        sq[i] = e * e;
        dout[i] = (T)(2.0 * scale * e);
    }
}

} // namespace

extern "C" int hs_pinn_residual_loss_cuda(hs_cuda_ctx *cu, hs_dtype dt, int kind, double coef, double st, double sx, size_t n,
                                          double scale, const void *out, void *dout, double *sq)
{
    int blocks = hs_cuda_blocks(cu, n, kThreads);
    if (dt == HS_F64)
        residual_kernel<double><<<blocks, kThreads, 0, cu->stream>>>(kind, coef, st, sx, n, scale, (const double *)out,
                                                                     (double *)dout, sq);
    else
        residual_kernel<float><<<blocks, kThreads, 0, cu->stream>>>(kind, coef, st, sx, n, scale, (const float *)out,
                                                                    (float *)dout, sq);
    HS_CUDA_LAUNCH_CHECK("residual_kernel");
    return HS_OK;
}

extern "C" int hs_pinn_data_loss_cuda(hs_cuda_ctx *cu, hs_dtype dt, size_t n, double scale, const void *out,
                                      const double *target, void *dout, double *sq)
{
    int blocks = hs_cuda_blocks(cu, n, kThreads);
    if (dt == HS_F64)
        data_kernel<double><<<blocks, kThreads, 0, cu->stream>>>(n, scale, (const double *)out, target,
                                                                 (double *)dout, sq);
    else
        data_kernel<float><<<blocks, kThreads, 0, cu->stream>>>(n, scale, (const float *)out, target, (float *)dout,
                                                                sq);
    HS_CUDA_LAUNCH_CHECK("data_kernel");
    return HS_OK;
}
