/* PINN benchmark on the published Burgers setup (8 x 20 tanh, 10,000 + 100 points): time per Adam
 * iteration and per L-BFGS iteration, fp64 and fp32; on the GPU also the time to reach a relative
 * L2 error of 1e-3 (Adam then L-BFGS, as inputs/pinn_burgers.ini).  PyTorch's times for the same
 * network (scripts/pinn_pytorch.py) can be passed in HS_PEER_PYTORCH_ADAM_S / _LBFGS_S / _TTS_S
 * (seconds) to print the ratios in the same table. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench/bench_util.h"
#include "kernels/memory.h"
#include "solvers/pinn/pinn_train.h"

static double env_seconds(const char *name)
{
    const char *v = getenv(name);
    return v ? atof(v) : 0.0;
}

/* GEMM flops of one loss-and-gradient evaluation: forward over every jet channel, then the two
 * GEMMs per layer of the backward pass (weights and inputs), for collocation and data points. */
static double flops_per_eval(const hs_pinn_config *c)
{
    double f = 0, nf = (double)(c->n_colloc + (c->colloc_include_data ? c->n_data : 0)), nu = (double)c->n_data;
    int w[HS_PINN_MAX_LAYERS + 2];
    w[0] = 2;
    for (int l = 0; l < c->depth; l++) w[l + 1] = c->width[l];
    w[c->depth + 1] = 1;
    for (int l = 0; l <= c->depth; l++) f += 2.0 * w[l] * w[l + 1] * (4 * nf + nu);
    return 3.0 * f;
}

static hs_pinn *make(hs_ctx *ctx, hs_dtype dt, int64_t adam, int64_t lbfgs)
{
    hs_pinn_config c;
    hs_pinn_config_default(&c);
    c.dtype = dt, c.adam_iters = adam, c.lbfgs_iters = lbfgs, c.history_every = 0;
    c.lbfgs_max_evals = 4 * lbfgs;
    hs_pinn *p;
    bench_check(hs_pinn_create(ctx, &c, &p), "hs_pinn_create");
    return p;
}

static double time_iterations(hs_ctx *ctx, hs_pinn *p, int64_t n)
{
    int64_t taken;
    int done;
    bench_check(hs_ctx_sync(ctx), "sync");
    double t0 = hs_wtime();
    bench_check(hs_pinn_train(p, n, &taken, &done), "hs_pinn_train");
    bench_check(hs_ctx_sync(ctx), "sync");
    return (hs_wtime() - t0) / (double)(taken > 0 ? taken : 1);
}

static void per_iteration(hs_ctx *ctx, hs_dtype dt)
{
    hs_pinn_config c;
    hs_pinn_config_default(&c);
    const char *prec = dt == HS_F64 ? "f64" : "f32";
    int gpu = HS_ON_GPU(ctx);
    int64_t n = gpu ? 500 : 20;
    /* Adam: warm up (the first call also records the untrained network), then time */
    hs_pinn *p = make(ctx, dt, 2 * n + 10, 0);
    time_iterations(ctx, p, 10);
    double adam = time_iterations(ctx, p, n);
    hs_pinn_destroy(p);
    bench_row("pinn adam iteration", "8x20 tanh, 10100+100 pts", prec, adam, 0, flops_per_eval(&c),
              dt == HS_F64 && env_seconds("HS_PEER_PYTORCH_ADAM_S") > 0 ? "pytorch" : NULL,
              dt == HS_F64 ? env_seconds("HS_PEER_PYTORCH_ADAM_S") : 0);
    /* L-BFGS after a short Adam warm start, so that the line search sees a typical landscape */
    p = make(ctx, dt, 50, 2 * n + 10);
    time_iterations(ctx, p, 60);
    double lb = time_iterations(ctx, p, n);
    hs_pinn_destroy(p);
    bench_row("pinn l-bfgs iteration", "8x20 tanh, 10100+100 pts", prec, lb, 0, 0,
              dt == HS_F64 && env_seconds("HS_PEER_PYTORCH_LBFGS_S") > 0 ? "pytorch" : NULL,
              dt == HS_F64 ? env_seconds("HS_PEER_PYTORCH_LBFGS_S") : 0);
}

/* Wall time until the relative L2 error on the 256 x 100 grid first drops to 1e-3 (checked every
 * 100 iterations, the check included in the time), with the schedule of inputs/pinn_burgers.ini. */
static void time_to_solution(hs_ctx *ctx)
{
    hs_pinn_config c;
    hs_pinn_config_default(&c);
    c.adam_iters = 2000, c.lr = 1e-3, c.lbfgs_iters = 50000, c.lbfgs_max_evals = 200000;
    c.history_every = 100;
    hs_pinn *p;
    bench_check(hs_pinn_create(ctx, &c, &p), "hs_pinn_create");
    double t0 = hs_wtime(), err = 1, elapsed = 0;
    int done = 0;
    while (!done && err > 1e-3) {
        int64_t taken;
        bench_check(hs_pinn_train(p, 100, &taken, &done), "hs_pinn_train");
        int count;
        const hs_pinn_record *h = hs_pinn_history(p, &count);
        err = h[count - 1].rel_l2;
        elapsed = hs_wtime() - t0;
    }
    printf("pinn time to solution: relative L2 error %.3e after %lld iterations, %.2f s (%s)\n", err,
           (long long)hs_pinn_iteration(p), elapsed, err <= 1e-3 ? "reached 1e-3" : "1e-3 NOT reached");
    bench_row("pinn time to 1e-3", "8x20 tanh, 10100+100 pts", "f64", err <= 1e-3 ? elapsed : NAN, 0, 0,
              env_seconds("HS_PEER_PYTORCH_TTS_S") > 0 ? "pytorch" : NULL, env_seconds("HS_PEER_PYTORCH_TTS_S"));
    hs_pinn_destroy(p);
}

int main(int argc, char **argv)
{
    hs_ctx *ctx = bench_init(&argc, &argv);
    per_iteration(ctx, HS_F64);
    per_iteration(ctx, HS_F32);
    /* training to 1e-3 takes minutes: on by default on a GPU, HS_BENCH_PINN_FULL=0/1 decides */
    const char *full = getenv("HS_BENCH_PINN_FULL");
    if (full ? atoi(full) : HS_ON_GPU(ctx)) time_to_solution(ctx);
    bench_finish();
    return 0;
}
