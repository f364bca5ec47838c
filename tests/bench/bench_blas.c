/* Benchmark of the BLAS family: dot, nrm2, axpy, fused CG update, GEMM, against cuBLAS and the limits. */
#include <stdio.h>

#include "bench/bench_util.h"
#include "kernels/blas/blas.h"
#include "kernels/memory.h"

static hs_ctx *ctx;
static size_t n;
static double *x, *y, *z, *w, *p, *q, result;

static int run_dot(void *a) { (void)a; return hs_dot(ctx, HS_F64, n, x, y, &result); }
static int run_dot_cublas(void *a) { (void)a; return hs_dot_cublas(ctx, HS_F64, n, x, y, &result); }
static int run_nrm2(void *a) { (void)a; return hs_nrm2(ctx, HS_F64, n, x, &result); }
static int run_nrm2_cublas(void *a) { (void)a; return hs_nrm2_cublas(ctx, HS_F64, n, x, &result); }
static int run_axpy(void *a) { (void)a; return hs_axpy(ctx, HS_F64, n, 1e-9, x, y); }
static int run_pcg_update(void *a) { (void)a; return hs_pcg_update(ctx, n, 1e-9, p, q, w, x, y, z, &result, NULL); }

int main(int argc, char **argv)
{
    ctx = bench_init(&argc, &argv);
    int gpu = HS_ON_GPU(ctx);
    n = gpu ? (size_t)1 << 28 : (size_t)1 << 24;
    size_t bytes = n * sizeof(double);
    bench_check(hs_mem_alloc(ctx, bytes, (void **)&x), "alloc");
    bench_check(hs_mem_alloc(ctx, bytes, (void **)&y), "alloc");
    bench_check(hs_mem_alloc(ctx, bytes, (void **)&z), "alloc");
    bench_check(hs_mem_alloc(ctx, bytes, (void **)&w), "alloc");
    bench_check(hs_mem_alloc(ctx, bytes, (void **)&p), "alloc");
    bench_check(hs_mem_alloc(ctx, bytes, (void **)&q), "alloc");
    bench_check(hs_fill(ctx, HS_F64, n, 0.0625, p), "fill");
    bench_check(hs_fill(ctx, HS_F64, n, 0.03125, q), "fill");
    bench_check(hs_fill(ctx, HS_F64, n, 0.5, x), "fill");
    bench_check(hs_fill(ctx, HS_F64, n, 0.25, y), "fill");
    bench_check(hs_fill(ctx, HS_F64, n, 0.125, z), "fill");
    bench_check(hs_fill(ctx, HS_F64, n, 1.0, w), "fill");
    bench_copy_bandwidth();
    char size[32];
    snprintf(size, sizeof size, "2^%d", gpu ? 28 : 24);

    double t = bench_time(run_dot, NULL, 3, 20), tp = gpu ? bench_time(run_dot_cublas, NULL, 3, 20) : 0;
    bench_row("dot", size, "f64", t, 2.0 * bytes, 0, gpu ? "cublasDdot" : NULL, tp);
    t = bench_time(run_nrm2, NULL, 3, 20);
    tp = gpu ? bench_time(run_nrm2_cublas, NULL, 3, 20) : 0;
    bench_row("nrm2", size, "f64", t, 1.0 * bytes, 0, gpu ? "cublasDnrm2" : NULL, tp);
    t = bench_time(run_axpy, NULL, 3, 20);
    bench_row("axpy", size, "f64", t, 3.0 * bytes, 0, NULL, 0);
    /* x += a p; r -= a q; z = dinv r; r.z : reads x p r q dinv, writes x r z */
    t = bench_time(run_pcg_update, NULL, 3, 20);
    bench_row("pcg_update (fused)", size, "f64", t, 8.0 * bytes, 0, NULL, 0);
    hs_mem_free(ctx, x);
    hs_mem_free(ctx, y);
    hs_mem_free(ctx, z);
    hs_mem_free(ctx, w);
    hs_mem_free(ctx, p);
    hs_mem_free(ctx, q);
    bench_gemm_rate(0);
    bench_gemm_rate(1);
    bench_finish();
    return 0;
}
