/* Backend entry points of the RNG buffer fills (kernels/rng/rng_cpu.c and kernels/rng/rng_cuda.cu). */
#ifndef HS_RNG_IMPL_H
#define HS_RNG_IMPL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct hs_cuda_ctx;

/* uniform = 0: 64-bit integers into buf (uint64_t); 1: doubles in [0, 1). n >= 1. */
int hs_rng_fill_cpu(uint64_t seed, uint64_t stream, uint64_t counter0, size_t n, void *buf, int uniform);
int hs_rng_fill_cuda(struct hs_cuda_ctx *cu, uint64_t seed, uint64_t stream, uint64_t counter0, size_t n, void *buf,
                     int uniform);

#ifdef __cplusplus
}
#endif
#endif
