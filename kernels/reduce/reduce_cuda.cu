// Reductions, CUDA backend: 16-byte loads over a fixed grid, warp shuffles, a fixed final pass; CUB peer.
#include "kernels/cuda_util.h"
#include "kernels/reduce/reduce_impl.h"

#include <math.h>
#include <stdint.h>

#include <cub/device/device_reduce.cuh>

namespace {

constexpr int kThreads = 256;
constexpr int kBlocksPerSm = 8; // full occupancy: 2048 threads per SM, 4 loads of 16 bytes each in flight

// ---------------------------------------------------------------- value reductions

template <int OP> __device__ __forceinline__ double rinit()
{
    if constexpr (OP == HS_ROP_MIN) return INFINITY;
    else if constexpr (OP == HS_ROP_MAX || OP == HS_ROP_AMAX) return -INFINITY;
    else return 0.0;
}

template <int OP> __device__ __forceinline__ double rmap(double v, double s)
{
    if constexpr (OP == HS_ROP_ASUM || OP == HS_ROP_AMAX) return fabs(v);
    else if constexpr (OP == HS_ROP_SSQ) { double t = v * s; return t * t; }
    else return v;
}

// NaN-propagating min/max: once a NaN is in, it stays, whatever the order.
template <int OP> __device__ __forceinline__ double rcomb(double a, double b)
{
    if constexpr (OP == HS_ROP_MIN) return (b < a || b != b) ? b : a;
    else if constexpr (OP == HS_ROP_MAX || OP == HS_ROP_AMAX) return (b > a || b != b) ? b : a;
    else return a + b;
}

// The 16-byte vector of each element type.
template <typename T> struct vec;
template <> struct vec<double> { using type = double2; static constexpr int width = 2; };
template <> struct vec<float> { using type = float4; static constexpr int width = 4; };

// Elements of vector k of x: one 16-byte load when aligned, else scalar loads of the same elements.
template <typename T>
__device__ __forceinline__ void load_vec(const T *__restrict__ x, size_t k, bool aligned, T e[vec<T>::width])
{
    constexpr int W = vec<T>::width;
    if (aligned) {
        typename vec<T>::type v = reinterpret_cast<const typename vec<T>::type *>(x)[k];
        const T *p = reinterpret_cast<const T *>(&v);
#pragma unroll
        for (int j = 0; j < W; j++) e[j] = p[j];
    } else {
#pragma unroll
        for (int j = 0; j < W; j++) e[j] = x[k * W + j];
    }
}

// Vector k of x, folded into acc in element order; unaligned data takes scalar loads but the same
// arithmetic, so the result does not depend on the buffer's alignment.
template <typename T, int OP>
__device__ __forceinline__ double fold_vec(const T *__restrict__ x, size_t k, bool aligned, double acc, double s)
{
    constexpr int W = vec<T>::width;
    T e[W];
    load_vec<T>(x, k, aligned, e);
    double part = rmap<OP>((double)e[0], s);
#pragma unroll
    for (int j = 1; j < W; j++) part = rcomb<OP>(part, rmap<OP>((double)e[j], s));
    return rcomb<OP>(acc, part);
}

template <int OP> __device__ __forceinline__ double warp_reduce(double v)
{
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) v = rcomb<OP>(v, __shfl_down_sync(0xffffffffu, v, off));
    return v;
}

// Block-wide combination in a fixed order; the result is valid in thread 0.
template <int OP> __device__ double block_reduce(double v)
{
    __shared__ double part[32];
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    v = warp_reduce<OP>(v);
    if (lane == 0) part[warp] = v;
    __syncthreads();
    v = threadIdx.x < (blockDim.x >> 5) ? part[threadIdx.x] : rinit<OP>();
    if (warp == 0) v = warp_reduce<OP>(v);
    return v;
}

// Pass 1: each block folds its grid-stride share into one partial.  Four accumulators, each owning a
// fixed quarter of the iterations, keep four 16-byte loads in flight per thread.
template <typename T, int OP>
__global__ void __launch_bounds__(kThreads) reduce_partial_kernel(const T *__restrict__ x, size_t n, double s,
                                                                  double *__restrict__ partial)
{
    constexpr int W = vec<T>::width;
    const bool aligned = (reinterpret_cast<uintptr_t>(x) & 15) == 0;
    size_t nv = n / W, stride = (size_t)gridDim.x * blockDim.x;
    size_t tid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    double a0 = rinit<OP>(), a1 = a0, a2 = a0, a3 = a0;
    size_t k = tid;
    for (; k + 3 * stride < nv; k += 4 * stride) {
        a0 = fold_vec<T, OP>(x, k, aligned, a0, s);
        a1 = fold_vec<T, OP>(x, k + stride, aligned, a1, s);
        a2 = fold_vec<T, OP>(x, k + 2 * stride, aligned, a2, s);
        a3 = fold_vec<T, OP>(x, k + 3 * stride, aligned, a3, s);
    }
    for (; k < nv; k += stride) a0 = fold_vec<T, OP>(x, k, aligned, a0, s);
    size_t tail = nv * W + tid;
    if (tail < n) a1 = rcomb<OP>(a1, rmap<OP>((double)x[tail], s));
    double v = block_reduce<OP>(rcomb<OP>(rcomb<OP>(a0, a1), rcomb<OP>(a2, a3)));
    if (threadIdx.x == 0) partial[blockIdx.x] = v;
}

// Pass 2: one block combines the partials in a fixed order.
template <int OP> __global__ void __launch_bounds__(kThreads) reduce_final_kernel(const double *partial, int np, double *out)
{
    double a = rinit<OP>();
    for (int i = threadIdx.x; i < np; i += blockDim.x) a = rcomb<OP>(a, partial[i]);
    a = block_reduce<OP>(a);
    if (threadIdx.x == 0) *out = a;
}

// Fixed per device and n: the grid decides the summation order.
int grid_for(const hs_cuda_ctx *cu, size_t n, int width)
{
    size_t want = (n / width + kThreads - 1) / kThreads;
    size_t cap = (size_t)cu->sm_count * kBlocksPerSm;
    if (want > cap) want = cap;
    return want < 1 ? 1 : (int)want;
}

// Copies one small device result to the host (through pinned scratch) and waits.
int fetch(hs_cuda_ctx *cu, const void *dev, size_t bytes, void *host)
{
    void *pinned = NULL;
    HS_CHECK(hs_cuda_fetch(cu, dev, bytes, &pinned));
    for (size_t i = 0; i < bytes; i++) ((char *)host)[i] = ((const char *)pinned)[i];
    return HS_OK;
}

template <typename T, int OP> int reduce_launch(hs_cuda_ctx *cu, size_t n, const T *x, double s, double *result)
{
    int grid = grid_for(cu, n, vec<T>::width);
    double *buf = NULL;
    HS_CHECK(hs_cuda_scratch(cu, (size_t)(grid + 1) * sizeof(double), (void **)&buf));
    reduce_partial_kernel<T, OP><<<grid, kThreads, 0, cu->stream>>>(x, n, s, buf + 1);
    HS_CUDA_LAUNCH_CHECK("reduce_partial_kernel");
    reduce_final_kernel<OP><<<1, kThreads, 0, cu->stream>>>(buf + 1, grid, buf);
    HS_CUDA_LAUNCH_CHECK("reduce_final_kernel");
    return fetch(cu, buf, sizeof(double), result);
}

template <typename T> int reduce_type(hs_cuda_ctx *cu, hs_rop op, size_t n, const T *x, double s, double *r)
{
    switch (op) {
    case HS_ROP_SUM: return reduce_launch<T, HS_ROP_SUM>(cu, n, x, s, r);
    case HS_ROP_MIN: return reduce_launch<T, HS_ROP_MIN>(cu, n, x, s, r);
    case HS_ROP_MAX: return reduce_launch<T, HS_ROP_MAX>(cu, n, x, s, r);
    case HS_ROP_ASUM: return reduce_launch<T, HS_ROP_ASUM>(cu, n, x, s, r);
    case HS_ROP_SSQ: return reduce_launch<T, HS_ROP_SSQ>(cu, n, x, s, r);
    case HS_ROP_AMAX: return reduce_launch<T, HS_ROP_AMAX>(cu, n, x, s, r);
    }
    return HS_FAIL(HS_ERR_RUNTIME, "reduce: unknown operation %d", (int)op);
}

// ---------------------------------------------------------------- argmax / argmin

struct vi {
    double v;
    unsigned long long i;
};

// The better of two candidates under "first NaN, else extreme value, ties to the lower index".
template <bool MAX> __device__ __forceinline__ vi better(vi a, vi b)
{
    bool an = a.v != a.v, bn = b.v != b.v;
    if (an || bn) return (an && bn) ? (a.i < b.i ? a : b) : (an ? a : b);
    if (MAX ? b.v > a.v : b.v < a.v) return b;
    if (MAX ? a.v > b.v : a.v < b.v) return a;
    return a.i < b.i ? a : b;
}

// The better of the warp's values (lane 0 holds the result).
template <bool MAX> __device__ __forceinline__ vi warp_better(vi a)
{
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        vi o;
        o.v = __shfl_down_sync(0xffffffffu, a.v, off);
        o.i = __shfl_down_sync(0xffffffffu, a.i, off);
        a = better<MAX>(a, o);
    }
    return a;
}

template <bool MAX> __device__ vi block_better(vi a)
{
    __shared__ vi part[32];
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    a = warp_better<MAX>(a);
    if (lane == 0) part[warp] = a;
    __syncthreads();
    if (warp == 0) {
        a = lane < (int)(blockDim.x >> 5) ? part[lane] : vi{MAX ? -INFINITY : INFINITY, ~0ull};
        a = warp_better<MAX>(a);
    }
    return a;
}

template <typename T, bool MAX>
__device__ __forceinline__ vi fold_arg(const T *__restrict__ x, size_t k, bool aligned, vi acc)
{
    constexpr int W = vec<T>::width;
    T e[W];
    load_vec<T>(x, k, aligned, e);
#pragma unroll
    for (int j = 0; j < W; j++) acc = better<MAX>(acc, vi{(double)e[j], (unsigned long long)(k * W + j)});
    return acc;
}

template <typename T, bool MAX>
__global__ void __launch_bounds__(kThreads) argext_partial_kernel(const T *__restrict__ x, size_t n, vi *__restrict__ partial)
{
    constexpr int W = vec<T>::width;
    const bool aligned = (reinterpret_cast<uintptr_t>(x) & 15) == 0;
    size_t nv = n / W, stride = (size_t)gridDim.x * blockDim.x;
    size_t tid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const vi none = {MAX ? -INFINITY : INFINITY, ~0ull};
    vi a0 = none, a1 = none;
    size_t k = tid;
    for (; k + stride < nv; k += 2 * stride) {
        a0 = fold_arg<T, MAX>(x, k, aligned, a0);
        a1 = fold_arg<T, MAX>(x, k + stride, aligned, a1);
    }
    for (; k < nv; k += stride) a0 = fold_arg<T, MAX>(x, k, aligned, a0);
    size_t tail = nv * W + tid;
    if (tail < n) a1 = better<MAX>(a1, vi{(double)x[tail], (unsigned long long)tail});
    vi r = block_better<MAX>(better<MAX>(a0, a1));
    if (threadIdx.x == 0) partial[blockIdx.x] = r;
}

template <bool MAX> __global__ void __launch_bounds__(kThreads) argext_final_kernel(const vi *partial, int np, vi *out)
{
    vi a = {MAX ? -INFINITY : INFINITY, ~0ull};
    for (int i = threadIdx.x; i < np; i += blockDim.x) a = better<MAX>(a, partial[i]);
    a = block_better<MAX>(a);
    if (threadIdx.x == 0) *out = a;
}

template <typename T, bool MAX> int argext_launch(hs_cuda_ctx *cu, size_t n, const T *x, size_t *index, double *value)
{
    int grid = grid_for(cu, n, vec<T>::width);
    vi *buf = NULL;
    HS_CHECK(hs_cuda_scratch(cu, (size_t)(grid + 1) * sizeof(vi), (void **)&buf));
    argext_partial_kernel<T, MAX><<<grid, kThreads, 0, cu->stream>>>(x, n, buf + 1);
    HS_CUDA_LAUNCH_CHECK("argext_partial_kernel");
    argext_final_kernel<MAX><<<1, kThreads, 0, cu->stream>>>(buf + 1, grid, buf);
    HS_CUDA_LAUNCH_CHECK("argext_final_kernel");
    vi r;
    HS_CHECK(fetch(cu, buf, sizeof r, &r));
    *index = (size_t)r.i;
    *value = r.v;
    return HS_OK;
}

struct sum_to_double {
    __host__ __device__ double operator()(double a, double b) const { return a + b; }
};

} // namespace

extern "C" int hs_reduce_apply_cuda(hs_cuda_ctx *cu, hs_dtype t, hs_rop op, size_t n, const void *x, double scale,
                              double *result)
{
    if (t == HS_F64) return reduce_type<double>(cu, op, n, (const double *)x, scale, result);
    return reduce_type<float>(cu, op, n, (const float *)x, scale, result);
}

extern "C" int hs_reduce_argext_cuda(hs_cuda_ctx *cu, hs_dtype t, int want_max, size_t n, const void *x, size_t *index,
                              double *value)
{
    if (t == HS_F64)
        return want_max ? argext_launch<double, true>(cu, n, (const double *)x, index, value)
                        : argext_launch<double, false>(cu, n, (const double *)x, index, value);
    return want_max ? argext_launch<float, true>(cu, n, (const float *)x, index, value)
                    : argext_launch<float, false>(cu, n, (const float *)x, index, value);
}


extern "C" int hs_reduce_sum_cub_cuda(hs_cuda_ctx *cu, hs_dtype t, size_t n, const void *x, double *result)
{
    size_t tmp = 0;
    if (t == HS_F64)
        HS_CUDA_CHECK(cub::DeviceReduce::Sum(NULL, tmp, (const double *)x, (double *)NULL, n, cu->stream));
    else
        HS_CUDA_CHECK(cub::DeviceReduce::Reduce(NULL, tmp, (const float *)x, (double *)NULL, n, sum_to_double(), 0.0,
                                                cu->stream));
    char *buf = NULL;
    HS_CHECK(hs_cuda_scratch(cu, tmp + 256, (void **)&buf));
    double *out = (double *)buf;
    if (t == HS_F64)
        HS_CUDA_CHECK(cub::DeviceReduce::Sum(buf + 256, tmp, (const double *)x, out, n, cu->stream));
    else
        HS_CUDA_CHECK(cub::DeviceReduce::Reduce(buf + 256, tmp, (const float *)x, out, n, sum_to_double(), 0.0,
                                                cu->stream));
    return fetch(cu, out, sizeof(double), result);
}
