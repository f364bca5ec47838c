/* Benchmark of the navier_stokes CFD model: time per step, cell updates per second, the share of the
 * pressure solve, and the bandwidth fraction of the momentum update, on a 2D and a 3D cavity and a 2D
 * channel (inflow and outflow: a pressure dimension with a Neumann and a Dirichlet end).
 * HS_BENCH_NS_2D / HS_BENCH_NS_3D / HS_BENCH_NS_CHANNEL set the sides (default 4096, 256 and 4096 on
 * a GPU, 512, 64 and 512 on a CPU; 0 leaves a case out). */
#include <stdio.h>
#include <stdlib.h>

#include "bench/bench_util.h"
#include "io/params.h"
#include "kernels/memory.h"
#include "solvers/cfd/cfd.h"
#include "solvers/cfd/ns.h"

int hs_driver_declare(void);

typedef struct {
    void *state;
    double bytes;
} job;

static int run_stage(void *arg)
{
    job *j = arg;
    return hs_ns_bench_advection(j->state, &j->bytes);
}

static void bench_case(hs_ctx *ctx, int ndim, int n, int channel)
{
    if (n <= 0) return;
    char nbuf[64], size[64];
    snprintf(nbuf, sizeof nbuf, "cfd.n=%d", n);
    const char *cavity[] = {"run.solver=cfd", ndim == 2 ? "cfd.ndim=2" : "cfd.ndim=3", nbuf, "cfd.t_end=1e6",
                            ndim == 2 ? "navier_stokes.wall_velocity_yhi=1 0" : "navier_stokes.wall_velocity_yhi=1 0 0",
                            "output.format=none", "navier_stokes.re=1000"};
    const char *chan[] = {"run.solver=cfd", "cfd.ndim=2", nbuf, "cfd.t_end=1e6", "navier_stokes.bc_xlo=inflow",
                          "navier_stokes.bc_xhi=outflow", "navier_stokes.inflow_speed=1", "output.format=none",
                          "navier_stokes.re=1000"};
    hs_params *p = NULL;
    if (channel) bench_check(hs_params_load(NULL, 9, (char *const *)chan, &p), "parameters");
    else bench_check(hs_params_load(NULL, 7, (char *const *)cavity, &p), "parameters");
    job j = {NULL, 0};
    double t_create = hs_wtime();
    bench_check(hs_cfd_navier_stokes.create(ctx, p, &j.state), "navier_stokes create");
    t_create = hs_wtime() - t_create;
    hs_ns_pressure_info pinfo;
    bench_check(hs_ns_pressure(j.state, &pinfo), "pressure info");
    double cells = 1;
    for (int d = 0; d < ndim; d++) cells *= n;
    snprintf(size, sizeof size, ndim == 2 ? (channel ? "%d^2 chan" : "%d^2") : "%d^3", n);
    int steps = ctx->device == HS_DEVICE_CUDA ? 20 : 3;
    double t = 0, tp = 0;
    bench_check(hs_ns_bench_steps(j.state, 2, &t, &tp), "warm-up");
    bench_check(hs_ns_bench_steps(j.state, steps, &t, &tp), "steps");
    double per = t / steps;
    bench_row("ns step (2 stages + 2 projections)", size, "fp64", per, 0, 0, NULL, 0);
    double ts = bench_time(run_stage, &j, 2, 10);
    bench_row("ns momentum stage (advection+diffusion)", size, "fp64", ts, j.bytes, 0, NULL, 0);
    if (ctx->rank == 0) {
        printf("  %s: %.4g s per step, %.3g cell updates/s, pressure solves %.1f%% of the step (%.4g s each), momentum stage %.1f%% of copy bandwidth\n",
               size, per, cells / per, 100 * tp / t, tp / (2.0 * steps), 100 * j.bytes / ts / bench_copy_bandwidth());
        printf("  %s: pressure solve %s; model created in %.3g s\n", size, pinfo.summary, t_create);
        fflush(stdout);
    }
    hs_cfd_navier_stokes.destroy(j.state);
    hs_params_free(p);
}

int main(int argc, char **argv)
{
    hs_ctx *ctx = bench_init(&argc, &argv);
    bench_check(hs_driver_declare(), "declare");
    bench_check(hs_cfd_solver.declare(), "declare");
    int gpu = ctx->device == HS_DEVICE_CUDA;
    const char *e2 = getenv("HS_BENCH_NS_2D"), *e3 = getenv("HS_BENCH_NS_3D"), *ec = getenv("HS_BENCH_NS_CHANNEL");
    bench_copy_bandwidth();
    bench_case(ctx, 2, e2 ? atoi(e2) : gpu ? 4096 : 512, 0);
    bench_case(ctx, 3, e3 ? atoi(e3) : gpu ? 256 : 64, 0);
    bench_case(ctx, 2, ec ? atoi(ec) : gpu ? 4096 : 512, 1);
    bench_finish();
    return 0;
}
