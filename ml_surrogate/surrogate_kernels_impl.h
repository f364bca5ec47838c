/* Backend entry points of the surrogate's pointwise kernels (surrogate_kernels_cpu.c, surrogate_kernels_cuda.cu). */
#ifndef HS_SURROGATE_KERNELS_IMPL_H
#define HS_SURROGATE_KERNELS_IMPL_H

#include <stddef.h>

#include "kernels/types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct hs_cuda_ctx;

int hs_surr_mse_cpu(hs_dtype t, size_t n, const void *pred, const void *target, double scale, void *dpred, double *sq);
int hs_surr_add_frame_cpu(hs_dtype t, int frames, size_t elems, const void *src, void *y);
int hs_surr_mse_cuda(struct hs_cuda_ctx *cu, hs_dtype t, size_t n, const void *pred, const void *target, double scale,
                     void *dpred, double *sq);
int hs_surr_add_frame_cuda(struct hs_cuda_ctx *cu, hs_dtype t, int frames, size_t elems, const void *src, void *y);

#ifdef __cplusplus
}
#endif
#endif
