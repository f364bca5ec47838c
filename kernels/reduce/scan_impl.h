/* Backend entry points of the scan family (kernels/reduce/scan_cpu.c and kernels/reduce/scan_cuda.cu). */
#ifndef HS_SCAN_IMPL_H
#define HS_SCAN_IMPL_H

#include <stddef.h>

#include "kernels/types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct hs_cuda_ctx;

/* n >= 1; t is one of the six supported dtypes; in may equal out. */
int hs_scan_apply_cpu(hs_dtype t, int exclusive, size_t n, const void *in, void *out);
/* deterministic: ctx->deterministic. */
int hs_scan_apply_cuda(struct hs_cuda_ctx *cu, hs_dtype t, int exclusive, int deterministic, size_t n, const void *in,
                       void *out);
/* The superseded kernel, kept as the test reference hs_scan_ref (always reproducible). */
int hs_scan_apply_ref_cuda(struct hs_cuda_ctx *cu, hs_dtype t, int exclusive, size_t n, const void *in, void *out);
int hs_scan_apply_cub_cuda(struct hs_cuda_ctx *cu, hs_dtype t, int exclusive, size_t n, const void *in, void *out);

#ifdef __cplusplus
}
#endif
#endif
