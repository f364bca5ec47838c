/* RNG buffer fills: argument checks and dispatch to the CPU or CUDA backend. */
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
    return HS_DISPATCH(ctx, hs_rng_fill_cpu(seed, stream, counter0, n, buf, uniform),
                       hs_rng_fill_cuda(ctx->cuda, seed, stream, counter0, n, buf, uniform));
}

int hs_rng_fill_u64(hs_ctx *ctx, uint64_t seed, uint64_t stream, uint64_t counter0, size_t n, uint64_t *buf)
{
    return fill(ctx, seed, stream, counter0, n, buf, 0, "hs_rng_fill_u64");
}

int hs_rng_fill_uniform(hs_ctx *ctx, uint64_t seed, uint64_t stream, uint64_t counter0, size_t n, double *buf)
{
    return fill(ctx, seed, stream, counter0, n, buf, 1, "hs_rng_fill_uniform");
}
