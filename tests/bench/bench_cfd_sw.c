/* Benchmark of the shallow_water CFD model: time per RK4 step with its halo exchanges, cell updates per second, and
 * the bandwidth fraction of the step's four stage kernels against a device copy measured in the same run.
 * HS_BENCH_SW_N sets the side of the square grid (default 4096 on a GPU, 512 on a CPU). */
#include <stdio.h>
#include <stdlib.h>

#include "bench/bench_util.h"
#include "io/params.h"
#include "solvers/cfd/cfd.h"
#include "solvers/cfd/sw.h"

int hs_driver_declare(void);

typedef struct {
    void *state;
    double bytes;
} job;

static int run_stages(void *arg)
{
    job *j = arg;
    return hs_sw_bench_stages(j->state, &j->bytes);
}

static void bench_case(hs_ctx *ctx, int n)
{
    char nbuf[64], size[64];
    snprintf(nbuf, sizeof nbuf, "cfd.n=%d", n);
    /* the jet of inputs/sw_jet.ini on a square, with a random bottom and hyperviscosity: every term */
    const char *ov[] = {"run.solver=cfd", "cfd.model=shallow_water", nbuf, "cfd.t_end=1e6", "output.format=none", "shallow_water.f0=5",
                        "shallow_water.jet_width=0.04", "shallow_water.topography=random", "shallow_water.nu4=1e-12"};
    hs_params *p = NULL;
    bench_check(hs_params_load(NULL, 9, (char *const *)ov, &p), "parameters");
    job j = {NULL, 0};
    bench_check(hs_cfd_shallow_water.create(ctx, p, &j.state), "shallow_water create");
    const double cells = (double)n * n;
    snprintf(size, sizeof size, "%d^2", n);
    int steps = ctx->device == HS_DEVICE_CUDA ? 20 : 3;
    double t = 0;
    bench_check(hs_sw_bench_steps(j.state, 2, &t), "warm-up");
    bench_check(hs_sw_bench_steps(j.state, steps, &t), "steps");
    double per = t / steps;
    double ts = bench_time(run_stages, &j, 2, 10);
    bench_row("sw step (4 RK4 stages + halo exchanges)", size, "fp64", per, j.bytes, 0, NULL, 0);
    bench_row("sw RK4 stage kernels (one step's four)", size, "fp64", ts, j.bytes, 0, NULL, 0);
    if (ctx->rank == 0) {
        double bw = bench_copy_bandwidth();
        printf("  %s: %.4g s per step, %.3g cell updates/s; the stage kernels move %.3g GB per step (55 doubles a cell) in %.4g s: "
               "%.1f%% of copy bandwidth (%.1f%% for the whole step)\n",
               size, per, cells / per, j.bytes / 1e9, ts, 100 * j.bytes / ts / bw, 100 * j.bytes / per / bw);
        fflush(stdout);
    }
    hs_cfd_shallow_water.destroy(j.state);
    hs_params_free(p);
}

int main(int argc, char **argv)
{
    hs_ctx *ctx = bench_init(&argc, &argv);
    bench_check(hs_driver_declare(), "declare");
    bench_check(hs_cfd_solver.declare(), "declare");
    int gpu = ctx->device == HS_DEVICE_CUDA;
    const char *e = getenv("HS_BENCH_SW_N");
    bench_copy_bandwidth();
    bench_case(ctx, e ? atoi(e) : gpu ? 4096 : 512);
    bench_finish();
    return 0;
}
