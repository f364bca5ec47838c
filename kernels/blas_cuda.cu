// BLAS family, CUDA backend: element-wise kernels, deterministic two-stage dots, fused CG update, cuBLAS GEMM.
#include "kernels/blas_impl.h"
#include "kernels/cuda_block_reduce.cuh"
#include "kernels/cuda_util.h"

namespace {

constexpr int kThreads = 256;

template <typename T>
__global__ void elementwise_kernel(hs_blas_op op, size_t n, T a, const T *__restrict__ x, T b, T *__restrict__ y,
                                   const T *__restrict__ w)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        switch (op) {
        case HS_BLAS_AXPBY: y[i] = b == T(1) ? y[i] + a * x[i] : a * x[i] + b * y[i]; break;
        case HS_BLAS_SCAL: y[i] *= a; break;
        case HS_BLAS_COPY: y[i] = x[i]; break;
        case HS_BLAS_FILL: y[i] = a; break;
        case HS_BLAS_MULT: y[i] = x[i] * w[i]; break;
        }
    }
}

// Stage 1 of a dot: each block writes one partial; the grid size is fixed per device, so the
// combination order, and with it the result, is the same on every run.
template <typename T>
__global__ void dot_partial_kernel(size_t n, const T *__restrict__ x, const T *__restrict__ y, double *partial)
{
    // Four independent loads in flight per thread keep enough bytes moving to saturate HBM.
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    size_t stride = (size_t)gridDim.x * blockDim.x;
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    for (; i + 3 * stride < n; i += 4 * stride) {
        s0 += (double)x[i] * (double)y[i];
        s1 += (double)x[i + stride] * (double)y[i + stride];
        s2 += (double)x[i + 2 * stride] * (double)y[i + 2 * stride];
        s3 += (double)x[i + 3 * stride] * (double)y[i + 3 * stride];
    }
    for (; i < n; i += stride) s0 += (double)x[i] * (double)y[i];
    double s = hs_block_sum((s0 + s1) + (s2 + s3));
    if (threadIdx.x == 0) partial[blockIdx.x] = s;
}

__global__ void final_sum_kernel(int count, const double *partial, double *out)
{
    double s = 0;
    for (int i = threadIdx.x; i < count; i += blockDim.x) s += partial[i];
    s = hs_block_sum(s);
    if (threadIdx.x == 0) *out = s;
}

__global__ void cg_update_kernel(size_t n, double alpha, const double *__restrict__ p, const double *__restrict__ q,
                                 const double *__restrict__ dinv, double *__restrict__ x, double *__restrict__ r,
                                 double *__restrict__ z, double *partial)
{
    double s = 0;
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        x[i] += alpha * p[i];
        double ri = r[i] - alpha * q[i];
        r[i] = ri;
        if (dinv) {
            double zi = dinv[i] * ri;
            z[i] = zi;
            s += ri * zi;
        } else {
            s += ri * ri;
        }
    }
    s = hs_block_sum(s);
    if (threadIdx.x == 0) partial[blockIdx.x] = s;
}

int reduce_blocks(const hs_cuda_ctx *cu) { return cu->sm_count * 4; }

// Sum the partials on the device and bring the scalar back through pinned memory.
int finish_sum(hs_cuda_ctx *cu, double *partial, int blocks, double *result)
{
    double *host = nullptr;
    HS_CHECK(hs_cuda_host_scratch(cu, sizeof(double), (void **)&host));
    final_sum_kernel<<<1, 1024, 0, cu->stream>>>(blocks, partial, partial + blocks);
    HS_CUDA_LAUNCH_CHECK(final_sum_kernel);
    HS_CUDA_CHECK(cudaMemcpyAsync(host, partial + blocks, sizeof(double), cudaMemcpyDeviceToHost, cu->stream));
    HS_CUDA_CHECK(cudaStreamSynchronize(cu->stream));
    *result = *host;
    return HS_OK;
}

} // namespace

extern "C" int hs_blas_elementwise_cuda(hs_cuda_ctx *cu, hs_blas_op op, hs_dtype t, size_t n, double a,
                                        const void *x, double b, void *y, const void *w)
{
    int blocks = hs_cuda_blocks(cu, n, kThreads);
    if (t == HS_F64)
        elementwise_kernel<double><<<blocks, kThreads, 0, cu->stream>>>(op, n, a, (const double *)x, b, (double *)y,
                                                                        (const double *)w);
    else
        elementwise_kernel<float><<<blocks, kThreads, 0, cu->stream>>>(op, n, (float)a, (const float *)x, (float)b,
                                                                       (float *)y, (const float *)w);
    HS_CUDA_LAUNCH_CHECK(elementwise_kernel);
    return HS_OK;
}

extern "C" int hs_blas_dot_cuda(hs_cuda_ctx *cu, hs_dtype t, size_t n, const void *x, const void *y, double *result)
{
    int blocks = reduce_blocks(cu);
    double *partial = nullptr;
    HS_CHECK(hs_cuda_scratch(cu, (blocks + 1) * sizeof(double), (void **)&partial));
    if (t == HS_F64)
        dot_partial_kernel<double><<<blocks, kThreads, 0, cu->stream>>>(n, (const double *)x, (const double *)y, partial);
    else
        dot_partial_kernel<float><<<blocks, kThreads, 0, cu->stream>>>(n, (const float *)x, (const float *)y, partial);
    HS_CUDA_LAUNCH_CHECK(dot_partial_kernel);
    return finish_sum(cu, partial, blocks, result);
}

extern "C" int hs_cg_update_cuda(hs_cuda_ctx *cu, size_t n, double alpha, const double *p, const double *q,
                                 const double *dinv, double *x, double *r, double *z, double *rz)
{
    int blocks = reduce_blocks(cu);
    double *partial = nullptr;
    HS_CHECK(hs_cuda_scratch(cu, (blocks + 1) * sizeof(double), (void **)&partial));
    cg_update_kernel<<<blocks, kThreads, 0, cu->stream>>>(n, alpha, p, q, dinv, x, r, z, partial);
    HS_CUDA_LAUNCH_CHECK(cg_update_kernel);
    return finish_sum(cu, partial, blocks, rz);
}

extern "C" int hs_gemm_cuda(hs_cuda_ctx *cu, hs_dtype t, int ta, int tb, int m, int n, int k, double alpha,
                            const void *A, int lda, const void *B, int ldb, double beta, void *C, int ldc)
{
    cublasOperation_t opa = ta ? CUBLAS_OP_T : CUBLAS_OP_N, opb = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    if (t == HS_F64) {
        HS_CUBLAS_CHECK(cublasDgemm(cu->cublas, opa, opb, m, n, k, &alpha, (const double *)A, lda, (const double *)B,
                                    ldb, &beta, (double *)C, ldc));
    } else {
        float fa = (float)alpha, fb = (float)beta;
        HS_CUBLAS_CHECK(cublasSgemm(cu->cublas, opa, opb, m, n, k, &fa, (const float *)A, lda, (const float *)B, ldb,
                                    &fb, (float *)C, ldc));
    }
    return HS_OK;
}

extern "C" int hs_dot_cublas_cuda(hs_cuda_ctx *cu, hs_dtype t, size_t n, const void *x, const void *y, double *result)
{
    if (t == HS_F64) {
        HS_CUBLAS_CHECK(cublasDdot_64(cu->cublas, (int64_t)n, (const double *)x, 1, (const double *)y, 1, result));
    } else {
        float r = 0;
        HS_CUBLAS_CHECK(cublasSdot_64(cu->cublas, (int64_t)n, (const float *)x, 1, (const float *)y, 1, &r));
        *result = r;
    }
    return HS_OK;
}

extern "C" int hs_nrm2_cublas_cuda(hs_cuda_ctx *cu, hs_dtype t, size_t n, const void *x, double *result)
{
    if (t == HS_F64) {
        HS_CUBLAS_CHECK(cublasDnrm2_64(cu->cublas, (int64_t)n, (const double *)x, 1, result));
    } else {
        float r = 0;
        HS_CUBLAS_CHECK(cublasSnrm2_64(cu->cublas, (int64_t)n, (const float *)x, 1, &r));
        *result = r;
    }
    return HS_OK;
}
