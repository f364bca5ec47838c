// Device helpers for warp scans and block-wide sums (warp shuffles + shared memory), shared by the .cu kernels.
#ifndef HS_CUDA_BLOCK_REDUCE_CUH
#define HS_CUDA_BLOCK_REDUCE_CUH

// Inclusive prefix over the warp's lanes (Kogge-Stone): lane i ends with v_0 + ... + v_i, each step
// adding the lower lanes' partial on the left, so float results are fixed by the lane order.
template <typename T> __device__ __forceinline__ T hs_warp_inclusive_scan(T v)
{
    const int lane = threadIdx.x & 31;
#pragma unroll
    for (int off = 1; off < 32; off <<= 1) {
        const T y = __shfl_up_sync(0xffffffffu, v, off);
        if (lane >= off) v = y + v;
    }
    return v;
}

__device__ __forceinline__ double hs_warp_sum(double v)
{
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
    return v;
}

// Sum over the block (blockDim.x a multiple of 32, at most 1024); the result is valid in thread 0.
// The combination order is fixed, so the result is bitwise reproducible.
__device__ __forceinline__ double hs_block_sum(double v)
{
    __shared__ double warp_part[32];
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    v = hs_warp_sum(v);
    if (lane == 0) warp_part[warp] = v;
    __syncthreads();
    int nwarps = blockDim.x >> 5;
    v = threadIdx.x < nwarps ? warp_part[threadIdx.x] : 0.0;
    if (warp == 0) v = hs_warp_sum(v);
    __syncthreads(); // warp_part may be reused by a following call
    return v;
}

#endif
