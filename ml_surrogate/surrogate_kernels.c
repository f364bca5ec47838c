/* The surrogate's pointwise kernels: dispatch to the CPU or CUDA backend. */
#include "ml_surrogate/surrogate_kernels.h"

#include "kernels/dispatch.h"
#include "ml_surrogate/surrogate_kernels_impl.h"

int hs_surr_mse(hs_ctx *ctx, hs_dtype t, size_t n, const void *pred, const void *target, double scale, void *dpred,
                double *sq)
{
    if (n == 0) return HS_OK;
    return HS_DISPATCH(ctx, hs_surr_mse_cpu(t, n, pred, target, scale, dpred, sq),
                       hs_surr_mse_cuda(ctx->cuda, t, n, pred, target, scale, dpred, sq));
}

int hs_surr_add_frame(hs_ctx *ctx, hs_dtype t, int frames, size_t elems, const void *src, void *y)
{
    if (frames <= 0 || elems == 0) return HS_OK;
    return HS_DISPATCH(ctx, hs_surr_add_frame_cpu(t, frames, elems, src, y),
                       hs_surr_add_frame_cuda(ctx->cuda, t, frames, elems, src, y));
}
