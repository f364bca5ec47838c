/* RNG buffer fills: argument checks, the OpenMP twin, and dispatch to the CUDA one. */
#include "kernels/rng/rng.h"

#include "kernels/context.h"
#include "kernels/error.h"
#include "kernels/rng/rng_impl.h"
#include "kernels/dispatch.h"

static int fill(hs_ctx *ctx, uint64_t seed, uint64_t stream, uint64_t counter0, size_t n, void *buf, int uniform,
                const char *fn)
{
    if (!ctx) return hs_input_error(fn, 0, NULL, "context is NULL");
    if (n == 0) return HS_OK;
    if (!buf) return hs_input_error(fn, 0, NULL, "buffer is NULL with n = %zu", n);
#if HS_HAVE_CUDA
    if (HS_ON_GPU(ctx)) return hs_rng_fill_cuda(ctx->cuda, seed, stream, counter0, n, buf, uniform);
#endif
    if (uniform) {
        double *d = buf;
#pragma omp parallel for schedule(static)
        for (size_t i = 0; i < n; i++) d[i] = hs_rng_u01(seed, stream, counter0 + i);
    } else {
        uint64_t *u = buf;
#pragma omp parallel for schedule(static)
        for (size_t i = 0; i < n; i++) u[i] = hs_rng_u64(seed, stream, counter0 + i);
    }
    return HS_OK;
}

int hs_rng_fill_u64(hs_ctx *ctx, uint64_t seed, uint64_t stream, uint64_t counter0, size_t n, uint64_t *buf)
{
    return fill(ctx, seed, stream, counter0, n, buf, 0, "hs_rng_fill_u64");
}

int hs_rng_fill_uniform(hs_ctx *ctx, uint64_t seed, uint64_t stream, uint64_t counter0, size_t n, double *buf)
{
    return fill(ctx, seed, stream, counter0, n, buf, 1, "hs_rng_fill_uniform");
}
