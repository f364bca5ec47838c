/* SpMV of a 3D 7-point Laplacian (our kernel vs cuSPARSE vs the copy bandwidth) and a PCG iteration vs its traffic. */
#include <stdio.h>
#include <stdlib.h>

#include "bench/bench_util.h"
#include "kernels/blas/blas.h"
#include "kernels/sparse/dcsr.h"
#include "kernels/memory.h"
#include "kernels/sparse/pcg.h"

typedef struct {
    hs_csr *A;
    hs_dcsr *D;
    double *x, *y, beta;
} spmv_job;

static int run_spmv(void *arg)
{
    spmv_job *j = arg;
    return hs_csr_spmv(j->A, 1.0, j->x, j->beta, j->y);
}

static int run_dcsr(void *arg)
{
    spmv_job *j = arg;
    return hs_dcsr_spmv(j->D, 1.0, j->x, 0.0, j->y);
}

typedef struct {
    hs_linop op;
    double *b, *x;
    hs_pcg_opts o;
} pcg_job;

static int run_pcg(void *arg)
{
    pcg_job *j = arg;
    hs_pcg_result res;
    HS_CHECK(hs_mem_zero(j->op.ctx, j->x, (size_t)j->op.n_local * sizeof(double)));
    HS_CHECK(hs_pcg_solve(&j->op, j->b, j->x, &j->o, &res));
    hs_pcg_result_free(&res);
    return res.iterations == j->o.max_iter ? HS_OK : HS_FAIL(HS_ERR_RUNTIME, "PCG stopped after %d iterations", res.iterations);
}

/* Every SpMV kernel on the same matrix; our kernel's rows carry cuSPARSE's best time as the peer. */
static void bench_spmv(hs_ctx *ctx, spmv_job *j, const char *size)
{
    static const struct {
        hs_spmv_kernel k;
        int width;
    } kinds[] = {{HS_SPMV_CUSPARSE_ALG1, 0}, {HS_SPMV_CUSPARSE_ALG2, 0}, {HS_SPMV_NATIVE, 0},
                 {HS_SPMV_NATIVE, 1},        {HS_SPMV_NATIVE, 2},        {HS_SPMV_NATIVE, 4},
                 {HS_SPMV_NATIVE, 8},        {HS_SPMV_NATIVE, 16}};
    int nk = HS_ON_GPU(ctx) ? (int)(sizeof kinds / sizeof *kinds) : 1;
    double bytes = hs_csr_spmv_bytes(j->A), best_peer = 0;
    char name[64];
    j->beta = 0.0;
    for (int i = 0; i < nk; i++) {
        bench_check(hs_csr_set_spmv_kernel(j->A, HS_ON_GPU(ctx) ? kinds[i].k : HS_SPMV_AUTO, kinds[i].width),
                    "kernel");
        double t = bench_time(run_spmv, j, 3, 20);
        int peer = HS_ON_GPU(ctx) && kinds[i].k != HS_SPMV_NATIVE;
        if (peer && (best_peer == 0 || t < best_peer)) best_peer = t;
        snprintf(name, sizeof name, "spmv_%s", hs_csr_spmv_kernel_name(j->A));
        int ours = HS_ON_GPU(ctx) && !peer;
        bench_row(name, size, "f64", t, bytes, 2.0 * j->A->nnz, ours ? "cusparse-best" : NULL, ours ? best_peer : 0);
    }
    bench_check(hs_csr_set_spmv_kernel(j->A, HS_SPMV_AUTO, 0), "kernel");
    j->beta = 1.0; /* y read as well as written */
    double t = bench_time(run_spmv, j, 3, 20);
    snprintf(name, sizeof name, "spmv_beta1_%s", hs_csr_spmv_kernel_name(j->A));
    bench_row(name, size, "f64", t, bytes + 8.0 * j->A->nrows, 2.0 * j->A->nnz, NULL, 0);
}

/* Bytes of one PCG iteration as pcg.c performs it: SpMV (beta 0), p.q (16n), the fused update
 * (x, r read+written, p, q read: 48n; with Jacobi also dinv read, z written, and r.r: +24n), and
 * p = z + beta p (24n). */
static double pcg_bytes(const hs_csr *A, hs_precond_kind pc)
{
    double n = (double)A->nrows;
    return hs_csr_spmv_bytes(A) + 16 * n + 48 * n + (pc == HS_PRECOND_JACOBI ? 24 * n : 0) + 24 * n;
}

/* Time per iteration from the difference of two iteration counts, so that setup (initial residual,
 * Jacobi setup, allocations) cancels out. */
static void bench_pcg(hs_ctx *ctx, hs_csr *A, const char *size, hs_precond_kind pc)
{
    pcg_job j = {hs_csr_linop(A), NULL, NULL, hs_pcg_default_opts()};
    size_t bytes = (size_t)A->nrows * sizeof(double);
    /* work vectors and preconditioner made once, as a time loop would */
    hs_pcg_workspace ws = {0};
    hs_precond M;
    bench_check(hs_precond_create(&j.op, pc, &M), "preconditioner");
    j.o.work = &ws;
    j.o.custom = &M;
    bench_check(hs_mem_alloc(ctx, bytes, (void **)&j.b), "b");
    bench_check(hs_mem_alloc(ctx, bytes, (void **)&j.x), "x");
    bench_check(hs_fill(ctx, HS_F64, (size_t)A->nrows, 1.0, j.b), "b");
    j.o.rtol = 0, j.o.atol = 0, j.o.precond = pc;
    const int k1 = 10, k2 = 60;
    j.o.max_iter = k1;
    double t1 = bench_time(run_pcg, &j, 1, 5);
    j.o.max_iter = k2;
    double t2 = bench_time(run_pcg, &j, 1, 5);
    double t = (t2 - t1) / (k2 - k1), traffic = pcg_bytes(A, pc), ideal = traffic / bench_copy_bandwidth();
    const char *name = pc == HS_PRECOND_JACOBI ? "pcg_iteration_jacobi" : "cg_iteration";
    if (ctx->rank == 0)
        printf("# %s: %.4f ms measured, %.1f MB of traffic = %.4f ms at copy bandwidth; ratio %.2f (goal <= 1.30)\n",
               name, t * 1e3, traffic * 1e-6, ideal * 1e3, t / ideal);
    bench_row(name, size, "f64", t, traffic, 0, NULL, 0);
    hs_pcg_workspace_free(&ws);
    hs_precond_destroy(&M);
    hs_mem_free(ctx, j.b);
    hs_mem_free(ctx, j.x);
}

/* The same Laplacian distributed over the ranks (one rank: no ghosts, the overhead of the wrapper). */
static void bench_dcsr(hs_ctx *ctx, const int64_t n[3], const char *size)
{
    int64_t N = n[0] * n[1] * n[2], start = N * ctx->rank / ctx->size, count = N * (ctx->rank + 1) / ctx->size - start;
    int64_t *rp, *ci, nnz;
    double *v;
    bench_check(hs_laplacian_rows(3, n, start, count, &rp, &ci, &v, &nnz), "rows");
    spmv_job j = {NULL, NULL, NULL, NULL, 0};
    bench_check(hs_dcsr_create(ctx, ctx->comm, start, count, N, rp, ci, v, &j.D), "dcsr");
    free(rp), free(ci), free(v);
    bench_check(hs_mem_alloc(ctx, (size_t)count * 8, (void **)&j.x), "x");
    bench_check(hs_mem_alloc(ctx, (size_t)count * 8, (void **)&j.y), "y");
    bench_check(hs_fill(ctx, HS_F64, (size_t)count, 1.0, j.x), "x");
    double t = bench_time(run_dcsr, &j, 3, 20);
    hs_dcsr_info info;
    hs_dcsr_get_info(j.D, &info);
    /* all ranks' bytes over rank 0's time: the aggregate rate */
    double sums[2] = {4.0 * (count + 1) + 12.0 * nnz + 16.0 * count + 8.0 * info.nghost, (double)nnz};
    bench_check(hs_allreduce_sum(ctx->comm, sums, 2), "sum");
    char name[64];
    snprintf(name, sizeof name, "dcsr_spmv_%dranks", ctx->size);
    bench_row(name, size, "f64", t, sums[0], 2.0 * sums[1], NULL, 0);
    hs_mem_free(ctx, j.x);
    hs_mem_free(ctx, j.y);
    hs_dcsr_destroy(j.D);
}

int main(int argc, char **argv)
{
    hs_ctx *ctx = bench_init(&argc, &argv);
    /* 245^3: just over 100 M nonzeros on the GPU; a size a CPU gets through in seconds otherwise */
    int64_t m = argc > 1 ? atoll(argv[1]) : HS_ON_GPU(ctx) ? 245 : 96;
    int64_t n[3] = {m, m, m};
    char size[64];
    snprintf(size, sizeof size, "%lld^3", (long long)m);
    bench_copy_bandwidth();
    if (ctx->rank == 0) {
        spmv_job j = {NULL, NULL, NULL, NULL, 0};
        bench_check(hs_csr_laplacian(ctx, 3, n, &j.A), "Laplacian");
        printf("# 3D 7-point Laplacian %s: %lld rows, %lld nonzeros, %.1f MB per SpMV (beta = 0)\n", size,
               (long long)j.A->nrows, (long long)j.A->nnz, hs_csr_spmv_bytes(j.A) * 1e-6);
        bench_check(hs_mem_alloc(ctx, (size_t)j.A->nrows * 8, (void **)&j.x), "x");
        bench_check(hs_mem_alloc(ctx, (size_t)j.A->nrows * 8, (void **)&j.y), "y");
        bench_check(hs_fill(ctx, HS_F64, (size_t)j.A->nrows, 1.0, j.x), "x");
        bench_check(hs_fill(ctx, HS_F64, (size_t)j.A->nrows, 0.0, j.y), "y");
        bench_spmv(ctx, &j, size);
        hs_mem_free(ctx, j.x);
        hs_mem_free(ctx, j.y);
        bench_pcg(ctx, j.A, size, HS_PRECOND_NONE);
        bench_pcg(ctx, j.A, size, HS_PRECOND_JACOBI);
        hs_csr_destroy(j.A);
    }
    bench_dcsr(ctx, n, size);
    bench_finish();
    return 0;
}
