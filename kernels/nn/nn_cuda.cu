// Dense-network family, CUDA backend: input jets, fused activation jets (forward and backward), bias, casts.
#include "kernels/cuda_util.h"
#include "kernels/error.h"
#include "kernels/nn/nn_act.h"
#include "kernels/nn/nn_impl.h"

namespace {

constexpr int kThreads = 256;

template <typename T>
__global__ void input_jet_kernel(int in, size_t n, hs_nn_jet_layout j, const T *__restrict__ x, T *__restrict__ h0)
{
    size_t M = (size_t)in * n, stride = (size_t)gridDim.x * blockDim.x;
    int C = 1 + j.nfirst + j.nsecond;
    for (size_t idx = (size_t)blockIdx.x * blockDim.x + threadIdx.x; idx < M; idx += stride) {
        int r = (int)(idx % (size_t)in);
        h0[idx] = x[idx];
        for (int k = 0; k < j.nfirst; k++) h0[(1 + k) * M + idx] = (T)(r == j.first[k]);
        for (int k = 1 + j.nfirst; k < C; k++) h0[k * M + idx] = T(0);
    }
}

// One thread per (row, point): the value and every derivative channel of that element, so the
// activation and its derivatives are evaluated once for all channels.
template <typename T>
__global__ void act_forward_kernel(int act, int rows, size_t n, hs_nn_jet_layout j, const T *__restrict__ b,
                                   T *__restrict__ z, T *__restrict__ h)
{
    size_t M = (size_t)rows * n, stride = (size_t)gridDim.x * blockDim.x;
    int nf = j.nfirst, ns = j.nsecond;
    for (size_t idx = (size_t)blockIdx.x * blockDim.x + threadIdx.x; idx < M; idx += stride) {
        double s[4];
        T z0 = z[idx] + b[idx % (size_t)rows];
        z[idx] = z0;
        hs_nn_act_eval(act, (double)z0, s);
        h[idx] = (T)s[0];
        for (int k = 0; k < nf; k++) h[(1 + k) * M + idx] = (T)(s[1] * (double)z[(1 + k) * M + idx]);
        for (int k = 0; k < ns; k++) {
            double zf = z[(1 + j.sidx[k]) * M + idx], zs = z[(1 + nf + k) * M + idx];
            h[(1 + nf + k) * M + idx] = (T)(s[2] * zf * zf + s[1] * zs);
        }
    }
}

template <typename T>
__global__ void act_backward_kernel(int act, int rows, size_t n, hs_nn_jet_layout j, const T *__restrict__ z,
                                    const T *__restrict__ h, T *__restrict__ dh)
{
    size_t M = (size_t)rows * n, stride = (size_t)gridDim.x * blockDim.x;
    int nf = j.nfirst, ns = j.nsecond;
    for (size_t idx = (size_t)blockIdx.x * blockDim.x + threadIdx.x; idx < M; idx += stride) {
        double s[4], zf[4] = {0, 0, 0, 0}, dzf[4] = {0, 0, 0, 0};
        hs_nn_act_eval_y(act, (double)z[idx], (double)h[idx], s);
        double dz0 = (double)dh[idx] * s[1];
        for (int k = 0; k < nf; k++) {
            zf[k] = z[(1 + k) * M + idx];
            double d = dh[(1 + k) * M + idx];
            dz0 += d * s[2] * zf[k];
            dzf[k] = d * s[1];
        }
        for (int k = 0; k < ns; k++) {
            size_t o = (1 + nf + k) * M + idx;
            double d = dh[o], zs = z[o], a = zf[j.sidx[k]];
            dz0 += d * (s[3] * a * a + s[2] * zs);
            dzf[j.sidx[k]] += d * 2.0 * s[2] * a;
            dh[o] = (T)(d * s[1]);
        }
        dh[idx] = (T)dz0;
        for (int k = 0; k < nf; k++) dh[(1 + k) * M + idx] = (T)dzf[k];
    }
}

template <typename T>
__global__ void bias_kernel(int rows, size_t n, const T *__restrict__ b, T *__restrict__ out)
{
    size_t M = (size_t)rows * n, stride = (size_t)gridDim.x * blockDim.x;
    for (size_t idx = (size_t)blockIdx.x * blockDim.x + threadIdx.x; idx < M; idx += stride)
        out[idx] += b[idx % (size_t)rows];
}

template <typename S, typename D>
__global__ void cast_kernel(size_t n, const S *__restrict__ src, D *__restrict__ dst)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) dst[i] = (D)src[i];
}

int blocks(hs_cuda_ctx *cu, size_t n) { return hs_cuda_blocks(cu, n, kThreads); }

} // namespace

extern "C" int hs_nn_input_jet_cuda(hs_cuda_ctx *cu, hs_dtype t, int in, size_t n, const hs_nn_jet_layout *j,
                                    const void *x, void *h0)
{
    size_t M = (size_t)in * n;
    if (M == 0) return HS_OK;
    if (t == HS_F64)
        input_jet_kernel<double><<<blocks(cu, M), kThreads, 0, cu->stream>>>(in, n, *j, (const double *)x, (double *)h0);
    else
        input_jet_kernel<float><<<blocks(cu, M), kThreads, 0, cu->stream>>>(in, n, *j, (const float *)x, (float *)h0);
    HS_CUDA_LAUNCH_CHECK("input_jet_kernel");
    return HS_OK;
}

extern "C" int hs_nn_act_forward_cuda(hs_cuda_ctx *cu, hs_dtype t, int act, int rows, size_t n,
                                      const hs_nn_jet_layout *j, const void *b, void *z, void *h)
{
    size_t M = (size_t)rows * n;
    if (M == 0) return HS_OK;
    if (t == HS_F64)
        act_forward_kernel<double><<<blocks(cu, M), kThreads, 0, cu->stream>>>(act, rows, n, *j, (const double *)b,
                                                                                (double *)z, (double *)h);
    else
        act_forward_kernel<float><<<blocks(cu, M), kThreads, 0, cu->stream>>>(act, rows, n, *j, (const float *)b,
                                                                               (float *)z, (float *)h);
    HS_CUDA_LAUNCH_CHECK("act_forward_kernel");
    return HS_OK;
}

extern "C" int hs_nn_act_backward_cuda(hs_cuda_ctx *cu, hs_dtype t, int act, int rows, size_t n,
                                       const hs_nn_jet_layout *j, const void *z, const void *h, void *dh)
{
    size_t M = (size_t)rows * n;
    if (M == 0) return HS_OK;
    if (t == HS_F64)
        act_backward_kernel<double><<<blocks(cu, M), kThreads, 0, cu->stream>>>(act, rows, n, *j, (const double *)z,
                                                                                 (const double *)h, (double *)dh);
    else
        act_backward_kernel<float><<<blocks(cu, M), kThreads, 0, cu->stream>>>(act, rows, n, *j, (const float *)z,
                                                                                (const float *)h, (float *)dh);
    HS_CUDA_LAUNCH_CHECK("act_backward_kernel");
    return HS_OK;
}

extern "C" int hs_nn_bias_cuda(hs_cuda_ctx *cu, hs_dtype t, int rows, size_t n, const void *b, void *out)
{
    size_t M = (size_t)rows * n;
    if (M == 0) return HS_OK;
    if (t == HS_F64)
        bias_kernel<double><<<blocks(cu, M), kThreads, 0, cu->stream>>>(rows, n, (const double *)b, (double *)out);
    else
        bias_kernel<float><<<blocks(cu, M), kThreads, 0, cu->stream>>>(rows, n, (const float *)b, (float *)out);
    HS_CUDA_LAUNCH_CHECK("bias_kernel");
    return HS_OK;
}

extern "C" int hs_nn_cast_cuda(hs_cuda_ctx *cu, hs_dtype st, hs_dtype dt, size_t n, const void *src, void *dst)
{
    if (n == 0) return HS_OK;
    if (st == HS_F64 && dt == HS_F32)
        cast_kernel<double, float><<<blocks(cu, n), kThreads, 0, cu->stream>>>(n, (const double *)src, (float *)dst);
    else if (st == HS_F32 && dt == HS_F64)
        cast_kernel<float, double><<<blocks(cu, n), kThreads, 0, cu->stream>>>(n, (const float *)src, (double *)dst);
    else {
        HS_CUDA_CHECK(cudaMemcpyAsync(dst, src, n * hs_dtype_size(st), cudaMemcpyDeviceToDevice, cu->stream));
        return HS_OK;
    }
    HS_CUDA_LAUNCH_CHECK("cast_kernel");
    return HS_OK;
}
