/* The list of self-check cases the kernel families provide, and the BLAS family's own case. */
#include <math.h>
#include <stdlib.h>

#include "kernels/blas/blas.h"
#include "kernels/memory.h"
#include "solvers/selftest/selftest.h"

/* dot and axpy on the backend against a long-double host loop. */
static int hs_selftest_blas(hs_ctx *ctx, int64_t n, hs_selftest_result *r)
{
    size_t bytes = (size_t)n * sizeof(double);
    double *x = malloc(bytes), *y = malloc(bytes), *dx = NULL, *dy = NULL, dot = 0;
    if (!x || !y) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    long double ref = 0, mag = 0;
    for (int64_t i = 0; i < n; i++) {
        x[i] = sin(0.37 * (double)i);
        y[i] = cos(0.11 * (double)i);
        ref += (long double)x[i] * (2.0 * y[i] + 0.5 * x[i]);
        mag += fabsl((long double)x[i] * (2.0 * y[i] + 0.5 * x[i]));
    }
    HS_CHECK(hs_mem_alloc(ctx, bytes, (void **)&dx));
    HS_CHECK(hs_mem_alloc(ctx, bytes, (void **)&dy));
    HS_CHECK(hs_mem_copy(ctx, dx, x, bytes, HS_COPY_H2D));
    HS_CHECK(hs_mem_copy(ctx, dy, y, bytes, HS_COPY_H2D));
    HS_CHECK(hs_axpby(ctx, HS_F64, (size_t)n, 0.5, dx, 2.0, dy)); /* y = 0.5 x + 2 y */
    HS_CHECK(hs_dot(ctx, HS_F64, (size_t)n, dx, dy, &dot));
    r->error = mag > 0 ? fabs((double)(dot - ref)) / (double)mag : 0;
    hs_mem_free(ctx, dx);
    hs_mem_free(ctx, dy);
    free(x);
    free(y);
    return HS_OK;
}

int hs_selftest_reduce(hs_ctx *ctx, int64_t n, hs_selftest_result *r);
int hs_selftest_sparse(hs_ctx *ctx, int64_t n, hs_selftest_result *r);
int hs_selftest_pcg(hs_ctx *ctx, int64_t n, hs_selftest_result *r);
int hs_selftest_fft(hs_ctx *ctx, int64_t n, hs_selftest_result *r);
int hs_selftest_grid(hs_ctx *ctx, int64_t n, hs_selftest_result *r);
int hs_selftest_nn(hs_ctx *ctx, int64_t n, hs_selftest_result *r);
int hs_selftest_quantum(hs_ctx *ctx, int64_t n, hs_selftest_result *r);
int hs_selftest_io(hs_ctx *ctx, int64_t n, hs_selftest_result *r);

static const hs_selftest_case g_extra[] = {
    {"blas: axpby + dot", hs_selftest_blas},
    {"reduce/scan/sort", hs_selftest_reduce},
    {"sparse: CSR SpMV", hs_selftest_sparse},
    {"sparse: Jacobi PCG", hs_selftest_pcg},
    {"fft: 3D C2C + R2C round trip", hs_selftest_fft},
    {"grid: halo exchange + reductions", hs_selftest_grid},
    {"nn: dense network derivatives", hs_selftest_nn},
    {"quantum: state-vector gates", hs_selftest_quantum},
    {"io: output + checkpoint round trip", hs_selftest_io},
    {NULL, NULL},
};

int hs_selftest_extra_count(void) { return (int)(sizeof g_extra / sizeof g_extra[0]) - 1; }
const hs_selftest_case *hs_selftest_extra(int i) { return &g_extra[i]; }
