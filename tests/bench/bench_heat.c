/* Benchmark of the heat solver's explicit 3D 7-point update (fp64): cell updates per second and the
 * fraction of the copy bandwidth, per rank; under mpirun it is the weak-scaling run (same cells per
 * rank).  HS_BENCH_HEAT_N sets the cells per rank and side (default 512 on a GPU, 128 on a CPU). */
#include <stdio.h>
#include <stdlib.h>

#include "bench/bench_util.h"
#include "io/params.h"
#include "solvers/heat/heat.h"
#include "solvers/heat/heat_stencil_impl.h"

int hs_driver_declare(void);

typedef struct {
    void *state;
    int64_t steps;
} job;

/* several sweeps per timed call, so that the launch gap between calls is not counted as kernel time */
enum { SWEEPS_PER_CALL = 10 };

static int run_sweep(void *arg)
{
    job *j = arg;
    int rc = 0;
    for (int s = 0; s < SWEEPS_PER_CALL && rc == 0; s++) rc = hs_heat_bench_sweep(j->state);
    return rc;
}

static int run_steps(void *arg)
{
    job *j = arg;
    int64_t taken = 0;
    return hs_heat_solver.advance(j->state, 1e300, j->steps, &taken);
}

int main(int argc, char **argv)
{
    hs_ctx *ctx = bench_init(&argc, &argv);
    bench_check(hs_driver_declare(), "declare");
    bench_check(hs_heat_solver.declare(), "declare");
    int gpu = HS_ON_GPU(ctx);
    const char *env = getenv("HS_BENCH_HEAT_N");
    int n = env ? atoi(env) : gpu ? 512 : 128;
    /* weak scaling: the global grid grows along z with the rank count, n^3 cells per rank */
    char nbuf[64], pbuf[64], tbuf[64];
    snprintf(nbuf, sizeof nbuf, "heat.n=%d %d %d", n, n, n * ctx->size);
    snprintf(pbuf, sizeof pbuf, "heat.procs=1 1 %d", ctx->size);
    snprintf(tbuf, sizeof tbuf, "heat.length=1 1 %d", ctx->size);
    const char *ov[] = {"run.solver=heat", "heat.ndim=3", nbuf, pbuf, tbuf, "heat.t_end=1e300", "heat.initial=sine"};
    hs_params *p = NULL;
    bench_check(hs_params_load(NULL, 7, (char *const *)ov, &p), "parameters");
    job j = {NULL, gpu ? 20 : 5};
    bench_check(hs_heat_solver.create(ctx, p, &j.state), "heat create");
    bench_copy_bandwidth();
    double cells = (double)n * n * n, t = 0;
    char size[64], name[64];
    snprintf(size, sizeof size, "%d^3/rank x %d", n, ctx->size);
    /* the GPU's 7-point variants (heat_stencil_cuda.cu); the default is the last row's */
    const char *variants[] = {"cell", "zc", "vec2"};
    const int kernels[] = {HS_HEAT_KERNEL_CELL, HS_HEAT_KERNEL_ZC, HS_HEAT_KERNEL_VEC2};
    for (int v = gpu ? 0 : 2; v < 3; v++) {
        if (gpu) hs_heat_bench_set_kernel(j.state, kernels[v]);
        /* each sweep reads T and writes T once per cell (neighbours come from the caches) */
        t = bench_time(run_sweep, &j, 1, 5) / SWEEPS_PER_CALL;
        snprintf(name, sizeof name, "heat 7-pt kernel %s", gpu ? variants[v] : "cpu");
        bench_row(name, size, "f64", t, 16.0 * cells, 0, NULL, 0);
    }
    hs_heat_bench_set_kernel(j.state, HS_HEAT_KERNEL_AUTO);
    /* a whole time step: exchange (overlapped), walls, inside and shell */
    t = bench_time(run_steps, &j, 1, 5) / (double)j.steps;
    bench_row("heat explicit step", size, "f64", t, 16.0 * cells, 0, NULL, 0);
    if (ctx->rank == 0) printf("# heat: %.3e cell updates/s per rank, %.3e in total on %d rank(s)\n", cells / t,
                               cells * ctx->size / t, ctx->size);
    hs_heat_solver.destroy(j.state);
    hs_params_free(p);
    bench_finish();
    return 0;
}
