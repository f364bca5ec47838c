/* Benchmark of the multigrid-preconditioned CG pressure solve: iterations and time per solve at 4096^2 and 256^3 (GPU) beside the transform solver on the same problem, and its share of a navier_stokes step.
 * HS_BENCH_MG_2D / HS_BENCH_MG_3D set the sides of the solves (default 4096 and 256 on a GPU, 1024 and 128 on a CPU);
 * HS_BENCH_NS_2D / HS_BENCH_NS_3D those of the navier_stokes steps (default 4096 and 256 on a GPU, 512 and 64 on a CPU). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_util.h"
#include "io/params.h"
#include "kernels/fft/poisson.h"
#include "kernels/memory.h"
#include "kernels/mg/mg.h"
#include "solvers/cfd/cfd.h"
#include "solvers/cfd/ns.h"

int hs_driver_declare(void);

static hs_ctx *ctx;

typedef struct {
    hs_mg *mg;
    hs_poisson *ps;
    double *f, *p;
    hs_mg_stats st;
} job;

static int run_mg(void *a)
{
    job *j = a;
    return hs_mg_solve(j->mg, j->f, j->p, 0, NULL, &j->st);
}

static int run_fft(void *a)
{
    job *j = a;
    return hs_poisson_solve(j->ps, j->f, j->p, NULL);
}

/* A right-hand side with every scale in it: a seeded hash per global cell in [-1, 1). */
static int fill_rhs(const hs_decomp *d, double *dev)
{
    size_t n = (size_t)(d->local[0] * d->local[1] * d->local[2]);
    double *h = malloc((n ? n : 1) * sizeof *h);
    if (!h) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
    size_t q = 0;
    for (int64_t k = 0; k < d->local[2]; k++)
        for (int64_t j = 0; j < d->local[1]; j++)
            for (int64_t i = 0; i < d->local[0]; i++) {
                uint64_t g = (uint64_t)(((d->offset[2] + k) * d->global[1] + d->offset[1] + j) * d->global[0] + d->offset[0] + i);
                uint64_t z = (g + 1) * 0x9E3779B97F4A7C15ull;
                z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
                z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
                h[q++] = (double)((z ^ (z >> 31)) >> 11) * 0x1.0p-52 - 1.0;
            }
    int rc = hs_mem_copy(ctx, dev, h, n * sizeof(double), HS_COPY_H2D);
    free(h);
    return rc;
}

static void size_text(char *buf, size_t len, int ndim, const int64_t *n)
{
    if (ndim == 2) snprintf(buf, len, "%lldx%lld np%d", (long long)n[0], (long long)n[1], ctx->size);
    else snprintf(buf, len, "%lldx%lldx%lld np%d", (long long)n[0], (long long)n[1], (long long)n[2], ctx->size);
}

/* One multigrid solve to 1e-10 and, where the transforms apply (fft_too), the transform solve of
 * the same f on the same decomposition (split along the last dimension). */
static void bench_solve(const char *name, int ndim, const int64_t *n, const hs_bc_kind bc[3][2], int fft_too, int warm,
                        int reps)
{
    int per[3] = {0, 0, 0}, procs[3] = {1, 1, 1};
    for (int d = 0; d < ndim; d++) per[d] = bc[d][0] == HS_BC_PERIODIC;
    procs[ndim - 1] = ctx->size;
    hs_decomp *d = NULL;
    bench_check(hs_decomp_create(ctx, ndim, n, per, procs, 2, &d), "decomposition");
    const double dx[3] = {1.0 / (double)n[0], 1.0 / (double)n[1], ndim > 2 ? 1.0 / (double)n[2] : 1.0};
    job j;
    memset(&j, 0, sizeof j);
    double t0 = hs_wtime();
    bench_check(hs_mg_create(d, bc, dx, NULL, &j.mg), "multigrid plan");
    double setup = hs_wtime() - t0;
    size_t local = (size_t)(d->local[0] * d->local[1] * d->local[2]);
    bench_check(hs_mem_alloc(ctx, local * sizeof(double), (void **)&j.f), "f");
    bench_check(hs_mem_alloc(ctx, local * sizeof(double), (void **)&j.p), "p");
    bench_check(fill_rhs(d, j.f), "f");
    double tm = 0, tf = 0;
    if (fft_too) {
        hs_poisson_bc pb[3][2];
        for (int e = 0; e < 3; e++)
            for (int s = 0; s < 2; s++)
                pb[e][s] = bc[e][s] == HS_BC_PERIODIC ? HS_POISSON_PERIODIC : bc[e][s] == HS_BC_NEUMANN ? HS_POISSON_NEUMANN
                                                                                                       : HS_POISSON_DIRICHLET;
        bench_check(hs_poisson_create(d, pb, dx, &j.ps), "Poisson plan");
        bench_time_pair(run_mg, &j, run_fft, &j, warm, reps, &tm, &tf);
    } else {
        tm = bench_time(run_mg, &j, warm, reps);
    }
    char size[64], kernel[96];
    size_text(size, sizeof size, ndim, n);
    snprintf(kernel, sizeof kernel, "mg-pcg %s %dit", name, j.st.iterations);
    /* bytes: f read once and p written once, as in bench_poisson: the fraction of the copy
     * bandwidth then says how many such passes a solve costs */
    bench_row(kernel, size, "f64", tm, 16.0 * (double)local, 0, fft_too ? "transforms" : NULL, tf);
    if (ctx->rank == 0) {
        printf("  %s %s: %d iterations to a relative residual of %.2e, %.4g s per solve (%.3g ms per iteration), setup %.3g s",
               name, size, j.st.iterations, j.st.residual, tm, 1e3 * tm / (j.st.iterations ? j.st.iterations : 1), setup);
        if (fft_too) printf("; transform solver %.4g s (%.1fx faster)", tf, tm / tf);
        printf("\n    %s\n", hs_mg_summary(j.mg));
        fflush(stdout);
    }
    hs_mg_destroy(j.mg);
    hs_poisson_destroy(j.ps);
    hs_mem_free(ctx, j.f);
    hs_mem_free(ctx, j.p);
    hs_decomp_destroy(d);
}

/* A navier_stokes step (2 stages, 2 projections) with the given pressure solver: time and the
 * pressure solves' share. */
static void bench_ns(int ndim, int n, const char *solver, const char *bcs)
{
    char nbuf[64], sbuf[64], size[64];
    snprintf(nbuf, sizeof nbuf, "cfd.n=%d", n);
    snprintf(sbuf, sizeof sbuf, "navier_stokes.pressure_solver=%s", solver);
    const char *ov[16] = {"run.solver=cfd", ndim == 2 ? "cfd.ndim=2" : "cfd.ndim=3", nbuf, "cfd.t_end=1e6",
                          "output.format=none", "navier_stokes.re=1000", sbuf};
    int count = 7;
    if (!strcmp(bcs, "cavity")) {
        ov[count++] = ndim == 2 ? "navier_stokes.wall_velocity_yhi=1 0" : "navier_stokes.wall_velocity_yhi=1 0 0";
    } else { /* inflow at x = 0, outflows at x = 1 and y = 1: only the multigrid */
        ov[count++] = "navier_stokes.bc_xlo=inflow";
        ov[count++] = "navier_stokes.bc_xhi=outflow";
        ov[count++] = "navier_stokes.bc_yhi=outflow";
    }
    hs_params *p = NULL;
    bench_check(hs_params_load(NULL, count, (char *const *)ov, &p), "parameters");
    void *state = NULL;
    bench_check(hs_cfd_navier_stokes.create(ctx, p, &state), "navier_stokes create");
    int steps = ctx->device == HS_DEVICE_CUDA ? 10 : 2;
    double t = 0, tp = 0;
    bench_check(hs_ns_bench_steps(state, 1, &t, &tp), "warm-up");
    hs_ns_pressure_info before, after;
    bench_check(hs_ns_pressure(state, &before), "pressure info");
    bench_check(hs_ns_bench_steps(state, steps, &t, &tp), "steps");
    bench_check(hs_ns_pressure(state, &after), "pressure info");
    snprintf(size, sizeof size, ndim == 2 ? "%d^2 np%d" : "%d^3 np%d", n, ctx->size);
    char kernel[96];
    snprintf(kernel, sizeof kernel, "ns step %s, %s", bcs, solver);
    bench_row(kernel, size, "f64", t / steps, 0, 0, NULL, 0);
    if (ctx->rank == 0) {
        printf("  ns %s %s with %s: %.4g s per step, pressure solves %.1f%% of the step (%.4g s each", bcs, size, solver,
               t / steps, 100 * tp / t, tp / (2.0 * steps));
        if (after.multigrid && after.solves > before.solves)
            printf(", %.1f iterations on average", (double)(after.iterations - before.iterations) / (double)(after.solves - before.solves));
        printf(")\n");
        fflush(stdout);
    }
    hs_cfd_navier_stokes.destroy(state);
    hs_params_free(p);
}

static int64_t env_or(const char *name, int64_t fallback)
{
    const char *e = getenv(name);
    return e && *e ? atoll(e) : fallback;
}

int main(int argc, char **argv)
{
    ctx = bench_init(&argc, &argv);
    bench_check(hs_driver_declare(), "declare");
    bench_check(hs_cfd_solver.declare(), "declare");
    int gpu = ctx->device == HS_DEVICE_CUDA;
    int warm = gpu ? 2 : 1, reps = gpu ? 10 : 3;
    const hs_bc_kind P = HS_BC_PERIODIC, N = HS_BC_NEUMANN, D = HS_BC_DIRICHLET;
    const hs_bc_kind cavity[3][2] = {{N, N}, {N, N}, {N, N}};
    const hs_bc_kind channel[3][2] = {{N, D}, {N, N}, {N, N}};
    const hs_bc_kind periodic[3][2] = {{P, P}, {P, P}, {P, P}};
    const hs_bc_kind two_outflows[3][2] = {{N, D}, {N, D}, {N, N}};
    int64_t s2 = env_or("HS_BENCH_MG_2D", gpu ? 4096 : 1024), s3 = env_or("HS_BENCH_MG_3D", gpu ? 256 : 128);
    const int64_t n2[3] = {s2, s2, 1}, n3[3] = {s3, s3, s3};
    bench_copy_bandwidth();
    bench_solve("NN-NN (cavity)", 2, n2, cavity, 1, warm, reps);
    bench_solve("ND-NN (channel)", 2, n2, channel, 1, warm, reps);
    bench_solve("PP-PP", 2, n2, periodic, 1, warm, reps);
    bench_solve("ND-ND (2 outflows)", 2, n2, two_outflows, 0, warm, reps);
    bench_solve("NN-NN-NN", 3, n3, cavity, 1, warm, reps);
    bench_solve("ND-NN-NN", 3, n3, channel, 1, warm, reps);
    bench_solve("ND-ND-NN (2 outflows)", 3, n3, two_outflows, 0, warm, reps);
    int ns2 = (int)env_or("HS_BENCH_NS_2D", gpu ? 4096 : 512), ns3 = (int)env_or("HS_BENCH_NS_3D", gpu ? 256 : 64);
    bench_ns(2, ns2, "fft", "cavity");
    bench_ns(2, ns2, "mg", "cavity");
    bench_ns(2, ns2, "mg", "outflows");
    bench_ns(3, ns3, "fft", "cavity");
    bench_ns(3, ns3, "mg", "cavity");
    bench_ns(3, ns3, "mg", "outflows");
    bench_finish();
    return 0;
}
