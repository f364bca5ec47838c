/* Benchmark of the spectral CFD model: time per step of decaying 2D turbulence against the distributed FFTs that step makes, timed in the same run.
 * HS_BENCH_SPECTRAL_N sets the side (default 4096 on a GPU, 1024 on a CPU). */
#include <stdio.h>
#include <stdlib.h>

#include "bench/bench_util.h"
#include "io/params.h"
#include "solvers/cfd/cfd.h"
#include "solvers/cfd/spectral.h"

int hs_driver_declare(void);

int main(int argc, char **argv)
{
    hs_ctx *ctx = bench_init(&argc, &argv);
    bench_check(hs_driver_declare(), "declare");
    bench_check(hs_cfd_solver.declare(), "declare");
    int gpu = HS_ON_GPU(ctx);
    const char *env = getenv("HS_BENCH_SPECTRAL_N");
    int n = env ? atoi(env) : gpu ? 4096 : 1024;
    char nbuf[64], size[64], k0[64];
    snprintf(nbuf, sizeof nbuf, "cfd.n=%d", n);
    snprintf(k0, sizeof k0, "spectral.k0=%d", n / 32 > 4 ? n / 32 : 4);
    snprintf(size, sizeof size, "%d^2", n);
    const char *ov[] = {"run.solver=cfd", "cfd.model=spectral", nbuf, "cfd.t_end=1e6", "cfd.length=6.283185307179586",
                        "spectral.initial=turbulence", k0, "spectral.nu=1e-5", "output.format=none"};
    hs_params *p = NULL;
    bench_check(hs_params_load(NULL, (int)(sizeof ov / sizeof ov[0]), (char *const *)ov, &p), "parameters");
    void *state = NULL;
    bench_check(hs_cfd_spectral.create(ctx, p, &state), "spectral create");
    double bw = bench_copy_bandwidth();
    int steps = gpu ? 20 : 3;
    double ts = 0, tf = 0;
    bench_check(hs_spectral_bench(state, 2, &ts, &tf), "warm-up");
    bench_check(hs_spectral_bench(state, steps, &ts, &tf), "steps");
    double step = ts / steps, ffts = tf / steps;
    /* the least the pointwise work of a step moves: per stage the products (u, v read, two products
     * written: 4 reals a point) and the stage update (u^, v^ written everywhere; on the 4/9 of the
     * half spectrum the 2/3 rule keeps, FFT(uv), FFT(v^2-u^2) and w0 read and acc read and written,
     * w0 written at stage 4: 2 + 4/9 * 4.75 complex values a mode, the half spectrum about half the
     * points), plus the two max reductions of the adaptive dt (u, v read) */
    double cells = (double)n * n, bytes = 4 * (32.0 * cells + 16.0 * (cells / 2) * (2 + 4.0 / 9 * 4.75)) + 16.0 * cells;
    bench_row("spectral step (IF-RK4, 16 dist. FFTs)", size, "fp64", step, 0, 0, "its FFTs alone", ffts);
    bench_row("spectral FFTs of one step (16)", size, "fp64", ffts, 0, 0, NULL, 0);
    bench_row("spectral step minus its FFTs", size, "fp64", step - ffts, bytes, 0, NULL, 0);
    if (ctx->rank == 0) {
        printf("  %s: %.4g s per step, %.3g cell updates/s; the step's 16 FFTs take %.4g s: step / FFTs = %.3f (goal <= 1.5); "
               "the rest (pointwise kernels, dt) %.4g s, %.0f%% of copy bandwidth\n",
               size, step, cells / step, ffts, step / ffts, step - ffts, 100 * bytes / (step - ffts) / bw);
        fflush(stdout);
    }
    hs_cfd_spectral.destroy(state);
    hs_params_free(p);
    bench_finish();
    return 0;
}
