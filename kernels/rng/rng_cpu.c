/* OpenMP twin of the RNG buffer fills: each element is its own counter, so any thread count gives the same bits. */
#include "kernels/error.h"
#include "kernels/rng/rng.h"
#include "kernels/rng/rng_impl.h"

int hs_rng_fill_cpu(uint64_t seed, uint64_t stream, uint64_t counter0, size_t n, void *buf, int uniform)
{
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
