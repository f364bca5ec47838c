/* Benchmark of the fast Poisson solver: one solve at 4096^2 and 256^3 (GPU) against the plain R2C + C2R FFT of the same grid. */
#include <stdint.h>
#include <stdio.h>

#include "bench/bench_util.h"
#include "kernels/blas/blas.h"
#include "kernels/fft/fft.h"
#include "kernels/fft/poisson.h"
#include "kernels/memory.h"

static hs_ctx *ctx;

typedef struct {
    hs_poisson *ps;
    hs_fft_plan *r2c, *c2r;
    double *f, *p;
    void *spec;
} job;

static int run_solve(void *a)
{
    job *j = a;
    return hs_poisson_solve(j->ps, j->f, j->p, NULL);
}

/* The peer: a forward R2C and a backward C2R of the whole grid (what a periodic spectral solve needs
 * at least); the solver does one real transform per dimension each way plus its pre/post passes. */
static int run_fft_pair(void *a)
{
    job *j = a;
    HS_CHECK(hs_fft_execute(j->r2c, HS_FFT_FORWARD, j->f, j->spec));
    return hs_fft_execute(j->c2r, HS_FFT_BACKWARD, j->spec, j->p);
}

static void bench_case(const char *name, int ndim, const int64_t *n, const hs_poisson_bc bc[3][2], int warm, int reps)
{
    int per[3] = {0, 0, 0}, procs[3] = {1, 1, 1};
    for (int d = 0; d < ndim; d++) per[d] = bc[d][0] == HS_POISSON_PERIODIC;
    procs[ndim - 1] = ctx->size;
    hs_decomp *d = NULL;
    bench_check(hs_decomp_create(ctx, ndim, n, per, procs, 1, &d), "decomposition");
    const double dx[3] = {1.0 / (double)n[0], 1.0 / (double)n[1], ndim > 2 ? 1.0 / (double)n[2] : 1.0};
    job j = {0};
    bench_check(hs_poisson_create(d, bc, dx, &j.ps), "Poisson plan");
    size_t local = (size_t)(d->local[0] * d->local[1] * d->local[2]);
    bench_check(hs_mem_alloc(ctx, local * sizeof(double), (void **)&j.f), "f");
    bench_check(hs_mem_alloc(ctx, local * sizeof(double), (void **)&j.p), "p");
    bench_check(hs_fill(ctx, HS_F64, local, 0.5, j.f), "fill");
    double tf = 0, tp = 0;
    if (ctx->size == 1) {
        bench_check(hs_fft_plan_create(ctx, ndim, n, 1, HS_FFT_R2C, HS_F64, &j.r2c), "R2C plan");
        bench_check(hs_fft_plan_create(ctx, ndim, n, 1, HS_FFT_C2R, HS_F64, &j.c2r), "C2R plan");
        bench_check(hs_mem_alloc(ctx, (size_t)hs_fft_out_elems(j.r2c) * 2 * sizeof(double), &j.spec), "spectrum");
        bench_time_pair(run_solve, &j, run_fft_pair, &j, warm, reps, &tp, &tf);
    } else {
        tp = bench_time(run_solve, &j, warm, reps);
    }
    char size[64];
    if (ndim == 2) snprintf(size, sizeof size, "%lldx%lld np%d", (long long)n[0], (long long)n[1], ctx->size);
    else snprintf(size, sizeof size, "%lldx%lldx%lld np%d", (long long)n[0], (long long)n[1], (long long)n[2], ctx->size);
    /* bytes: f read once and p written once, the least any solver moves; the fraction of the
     * copy bandwidth then says how many such passes the solve costs */
    bench_row(name, size, "f64", tp, 16.0 * (double)local, 0, ctx->size == 1 ? "R2C+C2R FFT" : NULL, tf);
    hs_poisson_destroy(j.ps);
    hs_fft_plan_destroy(j.r2c);
    hs_fft_plan_destroy(j.c2r);
    hs_mem_free(ctx, j.f);
    hs_mem_free(ctx, j.p);
    hs_mem_free(ctx, j.spec);
    hs_decomp_destroy(d);
}

int main(int argc, char **argv)
{
    ctx = bench_init(&argc, &argv);
    int gpu = ctx->device == HS_DEVICE_CUDA;
    int warm = gpu ? 3 : 1, reps = gpu ? 20 : 3;
    const hs_poisson_bc P = HS_POISSON_PERIODIC, N = HS_POISSON_NEUMANN, D = HS_POISSON_DIRICHLET;
    /* the pressure solves of the CFD models: a closed cavity, a channel with inflow (Neumann) and
     * outflow (Dirichlet) along x, and a doubly periodic box */
    const hs_poisson_bc cavity[3][2] = {{N, N}, {N, N}, {N, N}};
    const hs_poisson_bc channel[3][2] = {{N, D}, {N, N}, {N, N}};
    const hs_poisson_bc periodic[3][2] = {{P, P}, {P, P}, {P, P}};
    const hs_poisson_bc channel3[3][2] = {{N, D}, {N, N}, {P, P}};
    int64_t n2[2] = {gpu ? 4096 : 1024, gpu ? 4096 : 1024}, n3[3] = {gpu ? 256 : 96, gpu ? 256 : 96, gpu ? 256 : 96};
    bench_case("poisson NN-NN (cavity)", 2, n2, cavity, warm, reps);
    bench_case("poisson ND-NN (channel)", 2, n2, channel, warm, reps);
    bench_case("poisson PP-PP", 2, n2, periodic, warm, reps);
    bench_case("poisson NN-NN-NN", 3, n3, cavity, warm, reps);
    bench_case("poisson ND-NN-PP", 3, n3, channel3, warm, reps);
    bench_case("poisson PP-PP-PP", 3, n3, periodic, warm, reps);
    bench_finish();
    return 0;
}
