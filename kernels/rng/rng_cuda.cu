// RNG buffer fills on the GPU: one Philox block per element, the same inline code as the host.
#include "kernels/cuda_util.h"
#include "kernels/rng/rng.h"
#include "kernels/rng/rng_impl.h"

static __global__ void k_fill(uint64_t seed, uint64_t stream, uint64_t counter0, size_t n, void *buf, int uniform)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        if (uniform) ((double *)buf)[i] = hs_rng_u01(seed, stream, counter0 + i);
        else ((uint64_t *)buf)[i] = hs_rng_u64(seed, stream, counter0 + i);
    }
}

extern "C" int hs_rng_fill_cuda(struct hs_cuda_ctx *cu, uint64_t seed, uint64_t stream, uint64_t counter0, size_t n,
                                void *buf, int uniform)
{
    const int threads = 256;
    k_fill<<<hs_cuda_blocks(cu, n, threads), threads, 0, cu->stream>>>(seed, stream, counter0, n, buf, uniform);
    HS_CUDA_LAUNCH_CHECK("k_fill");
    return HS_OK;
}
