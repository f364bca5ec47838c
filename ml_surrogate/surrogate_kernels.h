/* The surrogate's pointwise kernels on either backend: the squared-error loss with its gradient, and
 * the residual connection (the last input frame added to every forecast frame). */
#ifndef HS_SURROGATE_KERNELS_H
#define HS_SURROGATE_KERNELS_H

#include "kernels/context.h"

/* Over n elements of type t (HS_F64, HS_F32, HS_BF16, HS_F16): e = pred - target (in the compute
 * type), sq[i] = e^2 (fp64) and dpred[i] = scale e (type t).  Local to the rank. */
int hs_surr_mse(hs_ctx *ctx, hs_dtype t, size_t n, const void *pred, const void *target, double scale, void *dpred,
                double *sq);
/* y[f elems + i] += src[i] for f < frames, i < elems (type t). */
int hs_surr_add_frame(hs_ctx *ctx, hs_dtype t, int frames, size_t elems, const void *src, void *y);

#endif
