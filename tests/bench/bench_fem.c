/* Finite elements, 3D P1 and P2 Poisson on Kuhn boxes: assembly rate, SpMV bandwidth fraction, AMG-PCG against Jacobi-PCG to 1e-8. */
#include <stdio.h>
#include <stdlib.h>

#include "bench/bench_util.h"
#include "kernels/blas/blas.h"
#include "kernels/memory.h"
#include "kernels/sparse/amg.h"
#include "kernels/sparse/pcg.h"
#include "solvers/fem/fem_system.h"

typedef struct {
    hs_fem_system *s;
    double *val, *rhs;
} asm_job;

static int run_assembly(void *arg)
{
    asm_job *j = arg;
    return hs_fem_assemble(j->s, 1.0, 0.0, 1.0, 1, j->val, j->rhs);
}

typedef struct {
    hs_csr *A;
    double *x, *y;
} spmv_job;

static int run_spmv(void *arg)
{
    spmv_job *j = arg;
    return hs_csr_spmv(j->A, 1.0, j->x, 0.0, j->y);
}

/* Solve to 1e-8 from zero; seconds and iterations. */
static void pcg(hs_fem_matrix *M, const double *b, double *x, const hs_precond *P, double *seconds, int *iters)
{
    hs_ctx *ctx = M->op.ctx;
    hs_pcg_workspace ws = {0};
    hs_pcg_opts o = hs_pcg_default_opts();
    o.rtol = 1e-8;
    o.max_iter = 100000;
    o.custom = P;
    o.work = &ws;
    hs_pcg_result r;
    /* one untimed solve allocates the workspace and warms the kernels */
    bench_check(hs_mem_zero(ctx, x, (size_t)M->op.n_local * sizeof(double)), "x");
    bench_check(hs_pcg_solve(&M->op, b, x, &o, &r), "pcg");
    bench_check(hs_mem_zero(ctx, x, (size_t)M->op.n_local * sizeof(double)), "x");
    bench_check(hs_ctx_sync(ctx), "sync");
    double t0 = hs_wtime();
    bench_check(hs_pcg_solve(&M->op, b, x, &o, &r), "pcg");
    bench_check(hs_ctx_sync(ctx), "sync");
    *seconds = hs_wtime() - t0;
    *iters = r.iterations;
    if (!r.converged) bench_check(HS_FAIL(HS_ERR_RUNTIME, "PCG did not converge in %d iterations", r.iterations), "pcg");
    hs_pcg_result_free(&r);
    hs_pcg_workspace_free(&ws);
}

static void bench_case(hs_ctx *ctx, int order, int64_t n)
{
    int64_t nn[3] = {n, n, n};
    double L[3] = {1, 1, 1};
    hs_fem_mesh *m;
    double t0 = hs_wtime();
    bench_check(hs_fem_mesh_box(3, nn, L, &m), "mesh");
    double t_mesh = hs_wtime() - t0;
    hs_fem_region reg = {1, {1.0, 0, 1.0}};
    hs_fem_bc bcs[6];
    for (int i = 0; i < 6; i++) bcs[i] = (hs_fem_bc){11 + i, HS_FEM_DIRICHLET, 0, {0, 0, 0}, 0};
    hs_fem_problem prob = {HS_FEM_SCALAR, order, 1, &reg, 6, bcs};
    hs_fem_system *s;
    bench_check(hs_fem_system_create(ctx, m, &prob, NULL, &s), "system");
    double t_setup = hs_wtime() - t0;
    char size[96];
    snprintf(size, sizeof size, "P%d %lld^3x6 %.1fM", order, (long long)n, s->n_global * 1e-6);
    if (ctx->rank == 0)
        printf("# 3D P%d Poisson, Kuhn box %lld^3 x 6 = %lld tetrahedra, %lld unknowns, %lld matrix entries; host setup "
               "%.2f s (mesh %.2f s; numbering, pattern, scatter map, upload %.2f s)\n",
               order, (long long)n, (long long)m->ncells, (long long)s->n_global, (long long)s->nnz, t_setup, t_mesh, t_setup - t_mesh);
    asm_job aj = {s, NULL, NULL};
    bench_check(hs_mem_alloc(ctx, (size_t)s->nnz * sizeof(double), (void **)&aj.val), "val");
    bench_check(hs_mem_alloc(ctx, (size_t)s->n_local * sizeof(double), (void **)&aj.rhs), "rhs");
    /* assembly: element kernel (Ke, Fe written), matrix and vector gathers through the map, Dirichlet rows */
    double t_asm = bench_time(run_assembly, &aj, 1, 5);
    double L2 = (double)s->L * s->L, bytes = (double)s->nac * (8.0 * (L2 + s->L) + 4.0 * s->nl + 4.0 + 24.0 * (order == 1 ? 4 : 4)) +
                                             (double)s->map_ptr[s->nnz] * 16.0 + 16.0 * s->nnz + (double)s->vmap_ptr[s->n_local] * 16.0 +
                                             16.0 * s->n_local;
    char name[64];
    snprintf(name, sizeof name, "fem_assembly_p%d", order);
    bench_row(name, size, "f64", t_asm, bytes, 0, NULL, 0);
    if (ctx->rank == 0)
        printf("# assembly %.4f s: %.3g elements/s (%.3g unknowns/s)\n", t_asm, (double)s->nac / t_asm, (double)s->n_local / t_asm);
    hs_fem_matrix M;
    bench_check(hs_fem_matrix_create(s, aj.val, &M), "matrix");
    spmv_job sj = {M.csr, NULL, NULL};
    bench_check(hs_mem_alloc(ctx, (size_t)s->n_local * sizeof(double), (void **)&sj.x), "x");
    bench_check(hs_mem_alloc(ctx, (size_t)s->n_local * sizeof(double), (void **)&sj.y), "y");
    bench_check(hs_fill(ctx, HS_F64, (size_t)s->n_local, 1.0, sj.x), "x");
    double t_spmv = bench_time(run_spmv, &sj, 3, 20);
    snprintf(name, sizeof name, "fem_spmv_p%d_%s", order, hs_csr_spmv_kernel_name(M.csr));
    bench_row(name, size, "f64", t_spmv, hs_csr_spmv_bytes(M.csr), 2.0 * s->nnz, NULL, 0);
    /* AMG-PCG against Jacobi-PCG on the same system */
    t0 = hs_wtime();
    hs_precond amg, jac;
    hs_amg_opts ao = hs_amg_default_opts();
    bench_check(hs_precond_amg(M.csr, &ao, &amg), "AMG setup");
    double t_amg_setup = hs_wtime() - t0;
    bench_check(hs_precond_create(&M.op, HS_PRECOND_JACOBI, &jac), "Jacobi");
    char desc[512];
    hs_amg_describe(&amg, desc, sizeof desc);
    double ta, tj;
    int ia, ij;
    pcg(&M, aj.rhs, sj.x, &amg, &ta, &ia);
    pcg(&M, aj.rhs, sj.x, &jac, &tj, &ij);
    if (ctx->rank == 0) {
        printf("# %s\n", desc);
        printf("# AMG-PCG to 1e-8: %d iterations, %.4f s (%.4f s per iteration; setup %.2f s on the host); Jacobi-PCG: %d iterations, "
               "%.4f s; ratio %.2fx\n",
               ia, ta, ta / ia, t_amg_setup, ij, tj, tj / ta);
    }
    snprintf(name, sizeof name, "fem_amg_pcg_p%d_%dit", order, ia);
    char peer[64];
    snprintf(peer, sizeof peer, "jacobi-pcg-%dit", ij);
    bench_row(name, size, "f64", ta, 0, 0, peer, tj);
    snprintf(name, sizeof name, "fem_amg_setup_p%d", order);
    bench_row(name, size, "f64", t_amg_setup, 0, 0, NULL, 0);
    hs_precond_destroy(&amg);
    hs_precond_destroy(&jac);
    hs_fem_matrix_destroy(&M);
    hs_mem_free(ctx, sj.x), hs_mem_free(ctx, sj.y), hs_mem_free(ctx, aj.val), hs_mem_free(ctx, aj.rhs);
    hs_fem_system_destroy(s);
    hs_fem_mesh_free(m);
}

int main(int argc, char **argv)
{
    hs_ctx *ctx = bench_init(&argc, &argv);
    /* HS_BENCH_FEM_N: cells per side of the P1 box (P2 takes half, the same unknowns); 216 on a GPU:
     * 217^3 = 10.2 M unknowns */
    const char *env = getenv("HS_BENCH_FEM_N");
    int64_t n = env ? atoll(env) : HS_ON_GPU(ctx) ? 216 : 40;
    bench_copy_bandwidth();
    if (ctx->rank == 0) {
        bench_case(ctx, 1, n);
        bench_case(ctx, 2, n / 2);
    }
    bench_finish();
    return 0;
}
