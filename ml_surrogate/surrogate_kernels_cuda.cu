// The surrogate's pointwise kernels, CUDA backend: squared error with its gradient, residual frame add.
#include <cstdint>

#include "kernels/cuda_util.h"
#include "kernels/error.h"
#include "kernels/half_cuda.cuh"
#include "ml_surrogate/surrogate_kernels_impl.h"

namespace {

constexpr int kThreads = 256;

using hs::bf16s;
using hs::f16s;
using hs::tr;

template <typename T>
__global__ void mse_kernel(size_t n, const T *__restrict__ p, const T *__restrict__ q, double scale, T *__restrict__ dp,
                           double *__restrict__ sq)
{
    typedef typename tr<T>::R R;
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        R e = (R)(tr<T>::ld(p[i]) - tr<T>::ld(q[i]));
        sq[i] = (double)e * (double)e;
        dp[i] = tr<T>::st((R)(scale * (double)e));
    }
}

// y[f][i] += src[i]: a grid row per frame (no 64-bit modulo per element), frames strided past 65,535.
template <typename T>
__global__ void add_frame_kernel(int frames, size_t elems, const T *__restrict__ src, T *__restrict__ y)
{
    typedef typename tr<T>::R R;
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (int f = blockIdx.y; f < frames; f += gridDim.y) {
        T *yf = y + (size_t)f * elems;
        for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < elems; i += stride)
            yf[i] = tr<T>::st((R)(tr<T>::ld(yf[i]) + tr<T>::ld(src[i])));
    }
}

template <typename F> int by_type(hs_dtype t, F fn)
{
    switch (t) {
    case HS_F64: return fn(double());
    case HS_F32: return fn(float());
    case HS_BF16: return fn(bf16s());
    default: return fn(f16s());
    }
}

} // namespace

extern "C" int hs_surr_mse_cuda(struct hs_cuda_ctx *cu, hs_dtype t, size_t n, const void *pred, const void *target,
                                double scale, void *dpred, double *sq)
{
    return by_type(t, [&](auto tag) -> int {
        typedef decltype(tag) T;
        mse_kernel<T><<<hs_cuda_blocks(cu, n, kThreads), kThreads, 0, cu->stream>>>(n, (const T *)pred, (const T *)target,
                                                                                     scale, (T *)dpred, sq);
        HS_CUDA_LAUNCH_CHECK("mse_kernel");
        return HS_OK;
    });
}

extern "C" int hs_surr_add_frame_cuda(struct hs_cuda_ctx *cu, hs_dtype t, int frames, size_t elems, const void *src,
                                      void *y)
{
    const dim3 grid((unsigned)hs_cuda_blocks(cu, elems, kThreads), (unsigned)(frames < 65535 ? frames : 65535));
    return by_type(t, [&](auto tag) -> int {
        typedef decltype(tag) T;
        add_frame_kernel<T><<<grid, kThreads, 0, cu->stream>>>(frames, elems, (const T *)src, (T *)y);
        HS_CUDA_LAUNCH_CHECK("add_frame_kernel");
        return HS_OK;
    });
}
