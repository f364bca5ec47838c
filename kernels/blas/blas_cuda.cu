// BLAS family, CUDA backend: element-wise kernels, deterministic two-stage dots, fused CG update, cuBLAS GEMM.
#include "kernels/blas/blas_impl.h"
#include "kernels/cuda_block_reduce.cuh"
#include "kernels/cuda_util.h"

#include <stdint.h>

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

// Products of one vector element pair, summed in double.
__device__ __forceinline__ double vdot(double a, double b) { return a * b; }
__device__ __forceinline__ double vdot(float a, float b) { return (double)a * (double)b; }
__device__ __forceinline__ double vdot(double2 a, double2 b) { return a.x * b.x + a.y * b.y; }
__device__ __forceinline__ double vdot(float4 a, float4 b)
{
    return ((double)a.x * b.x + (double)a.y * b.y) + ((double)a.z * b.z + (double)a.w * b.w);
}

// Stage 1 of a dot: each block writes one partial.  V is a 16-byte vector of W elements when the
// data is aligned, so that each thread keeps 64 bytes per input in flight (4 unrolled loads),
// which a latency-bound single stream (nrm2) needs to reach the copy bandwidth.  The grid size is
// fixed per device, so the combination order, and with it the result, is the same on every run.
template <typename T, typename V, int W>
__global__ void dot_partial_kernel(size_t n, const T *__restrict__ x, const T *__restrict__ y, double *partial)
{
    const V *xv = reinterpret_cast<const V *>(x), *yv = reinterpret_cast<const V *>(y);
    size_t nv = n / W, stride = (size_t)gridDim.x * blockDim.x;
    size_t tid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    size_t i = tid;
    for (; i + 3 * stride < nv; i += 4 * stride) {
        V a0 = xv[i], a1 = xv[i + stride], a2 = xv[i + 2 * stride], a3 = xv[i + 3 * stride];
        V b0 = yv[i], b1 = yv[i + stride], b2 = yv[i + 2 * stride], b3 = yv[i + 3 * stride];
        s0 += vdot(a0, b0);
        s1 += vdot(a1, b1);
        s2 += vdot(a2, b2);
        s3 += vdot(a3, b3);
    }
    for (; i < nv; i += stride) s0 += vdot(xv[i], yv[i]);
    size_t tail = nv * W + tid; // the last n % W elements
    if (tail < n) s1 += vdot(x[tail], y[tail]);
    double s = hs_block_sum((s0 + s1) + (s2 + s3));
    if (threadIdx.x == 0) partial[blockIdx.x] = s;
}

// Sums `vectors` consecutive arrays of `count` partials: out[v] = sum of partial[v * count ...].
__global__ void final_sum_kernel(int count, const double *partial, double *out)
{
    const double *p = partial + (size_t)blockIdx.x * count;
    double s = 0;
    for (int i = threadIdx.x; i < count; i += blockDim.x) s += p[i];
    s = hs_block_sum(s);
    if (threadIdx.x == 0) out[blockIdx.x] = s;
}

// partial[b] = block b's r.z (r.r without dinv), partial[blocks + b] = its r.r.
__global__ void cg_update_kernel(size_t n, double alpha, const double *__restrict__ p, const double *__restrict__ q,
                                 const double *__restrict__ dinv, double *__restrict__ x, double *__restrict__ r,
                                 double *__restrict__ z, double *partial)
{
    double s = 0, s2 = 0;
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        x[i] += alpha * p[i];
        double ri = r[i] - alpha * q[i];
        r[i] = ri;
        s2 += ri * ri;
        if (dinv) {
            double zi = dinv[i] * ri;
            z[i] = zi;
            s += ri * zi;
        }
    }
    if (!dinv) s = s2;
    s = hs_block_sum(s);
    s2 = hs_block_sum(s2);
    if (threadIdx.x == 0) {
        partial[blockIdx.x] = s;
        partial[gridDim.x + blockIdx.x] = s2;
    }
}

int reduce_blocks(const hs_cuda_ctx *cu) { return cu->sm_count * 4; }

// Sum `vectors` arrays of partials on the device and bring the scalars back through pinned memory.
int finish_sums(hs_cuda_ctx *cu, double *partial, int blocks, int vectors, double *result)
{
    double *host = nullptr, *out = partial + (size_t)vectors * blocks;
    final_sum_kernel<<<vectors, 1024, 0, cu->stream>>>(blocks, partial, out);
    HS_CUDA_LAUNCH_CHECK(final_sum_kernel);
    HS_CHECK(hs_cuda_fetch(cu, out, vectors * sizeof(double), (void **)&host));
    for (int v = 0; v < vectors; v++) result[v] = host[v];
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
    const bool aligned = hs_aligned16(x, y);
    cudaStream_t st = cu->stream;
    if (t == HS_F64 && aligned)
        dot_partial_kernel<double, double2, 2><<<blocks, kThreads, 0, st>>>(n, (const double *)x, (const double *)y, partial);
    else if (t == HS_F64)
        dot_partial_kernel<double, double, 1><<<blocks, kThreads, 0, st>>>(n, (const double *)x, (const double *)y, partial);
    else if (aligned)
        dot_partial_kernel<float, float4, 4><<<blocks, kThreads, 0, st>>>(n, (const float *)x, (const float *)y, partial);
    else
        dot_partial_kernel<float, float, 1><<<blocks, kThreads, 0, st>>>(n, (const float *)x, (const float *)y, partial);
    HS_CUDA_LAUNCH_CHECK(dot_partial_kernel);
    return finish_sums(cu, partial, blocks, 1, result);
}

extern "C" int hs_blas_cg_update_cuda(hs_cuda_ctx *cu, size_t n, double alpha, const double *p, const double *q,
                                 const double *dinv, double *x, double *r, double *z, double sums[2])
{
    int blocks = reduce_blocks(cu);
    double *partial = nullptr;
    HS_CHECK(hs_cuda_scratch(cu, (2 * blocks + 2) * sizeof(double), (void **)&partial));
    cg_update_kernel<<<blocks, kThreads, 0, cu->stream>>>(n, alpha, p, q, dinv, x, r, z, partial);
    HS_CUDA_LAUNCH_CHECK(cg_update_kernel);
    return finish_sums(cu, partial, blocks, 2, sums);
}

extern "C" int hs_blas_gemm_cuda(hs_cuda_ctx *cu, hs_dtype t, int ta, int tb, int m, int n, int k, double alpha,
                            const void *A, int lda, const void *B, int ldb, double beta, void *C, int ldc)
{
    HS_CHECK(hs_cuda_cublas_ready(cu));
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

extern "C" int hs_blas_dot_cublas_cuda(hs_cuda_ctx *cu, hs_dtype t, size_t n, const void *x, const void *y, double *result)
{
    HS_CHECK(hs_cuda_cublas_ready(cu));
    if (t == HS_F64) {
        HS_CUBLAS_CHECK(cublasDdot_64(cu->cublas, (int64_t)n, (const double *)x, 1, (const double *)y, 1, result));
    } else {
        float r = 0;
        HS_CUBLAS_CHECK(cublasSdot_64(cu->cublas, (int64_t)n, (const float *)x, 1, (const float *)y, 1, &r));
        *result = r;
    }
    return HS_OK;
}

extern "C" int hs_blas_nrm2_cublas_cuda(hs_cuda_ctx *cu, hs_dtype t, size_t n, const void *x, double *result)
{
    HS_CHECK(hs_cuda_cublas_ready(cu));
    if (t == HS_F64) {
        HS_CUBLAS_CHECK(cublasDnrm2_64(cu->cublas, (int64_t)n, (const double *)x, 1, result));
    } else {
        float r = 0;
        HS_CUBLAS_CHECK(cublasSnrm2_64(cu->cublas, (int64_t)n, (const float *)x, 1, &r));
        *result = r;
    }
    return HS_OK;
}
