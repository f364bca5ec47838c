/* The finite-element assembly kernels and the AMG V-cycle on CUDA against their CPU twins; skipped (77) without a GPU. */
#include "fem_test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "solvers/fem/fem_impl.h"

#if HS_HAVE_CUDA

/* max |g - c| / max |c| */
static double rel(const double *g, const double *c, int64_t n)
{
    double e = 0, m = 0;
    for (int64_t i = 0; i < n; i++) e = fmax(e, fabs(g[i] - c[i])), m = fmax(m, fabs(c[i]));
    return m > 0 ? e / m : e;
}

/* A system of each kind on both backends: element buffers, matrix values and right sides. */
static void assemble_both(hs_fem_mesh *m, const hs_fem_problem *prob, const char *what)
{
    hs_ctx *ctx = test_ctx();
    double *K[2], *F[2], *V[2], *B[2];
    int64_t nk = 0, nf = 0, nnz = 0, n = 0;
    for (int b = 0; b < 2; b++) {
        TEST_OK(hs_ctx_set_device(ctx, b ? "cuda" : "cpu", 1));
        hs_fem_system *s;
        TEST_OK(hs_fem_system_create(ctx, m, prob, NULL, &s));
        double *val, *rhs;
        TEST_OK(hs_mem_alloc(ctx, (size_t)s->nnz * sizeof(double), (void **)&val));
        TEST_OK(hs_mem_alloc(ctx, (size_t)s->n_local * sizeof(double), (void **)&rhs));
        TEST_OK(hs_fem_assemble(s, 0.7, 1.3, 1.0, 1, val, rhs));
        nk = s->kbuf_len, nf = s->fbuf_len, nnz = s->nnz, n = s->n_local;
        K[b] = test_download_new(s->Kbuf, (size_t)nk * sizeof(double));
        F[b] = test_download_new(s->Fbuf, (size_t)nf * sizeof(double));
        V[b] = test_download_new(val, (size_t)nnz * sizeof(double));
        B[b] = test_download_new(rhs, (size_t)n * sizeof(double));
        hs_mem_free(ctx, val), hs_mem_free(ctx, rhs);
        hs_fem_system_destroy(s);
    }
    /* the same operations in the same order; the GPU contracts a*b + c into fma */
    double ek = rel(K[1], K[0], nk), ef = rel(F[1], F[0], nf), ev = rel(V[1], V[0], nnz), eb = rel(B[1], B[0], n);
    printf("  %-28s elements %.2e, loads %.2e, matrix %.2e, right side %.2e\n", what, ek, ef, ev, eb);
    if (!(ek < 1e-13 && ef < 1e-13 && ev < 1e-13 && eb < 1e-13)) fail_msg("%s: CUDA assembly differs from the CPU's", what);
    for (int b = 0; b < 2; b++) free(K[b]), free(F[b]), free(V[b]), free(B[b]);
}

static void test_assembly(void **state)
{
    (void)state;
    for (int dim = 2; dim <= 3; dim++)
        for (int order = 1; order <= 2; order++)
            for (int phys = 0; phys <= 1; phys++) {
                int64_t n[3] = {7, 5, 4};
                double Lb[3] = {1.4, 1, 0.9};
                hs_fem_mesh *m;
                TEST_OK(hs_fem_mesh_box(dim, n, Lb, &m));
                hs_fem_region reg = {1, {phys ? 2.0 : 1.5, phys ? 1.0 : 2.5, 0.8, -0.3, 0.2}};
                hs_fem_bc bcs[3] = {{11, HS_FEM_DIRICHLET, 0, {0.5, 0.1, -0.2}, 0}, {12, HS_FEM_NEUMANN, 0, {0.7, -1, 0.4}, 0},
                                    {13, phys ? HS_FEM_NEUMANN : HS_FEM_ROBIN, 0, {2.0, 0.3, 0}, 5.0}};
                hs_fem_problem prob = {phys ? HS_FEM_ELASTIC : HS_FEM_SCALAR, order, 1, &reg, 3, bcs};
                char what[64];
                snprintf(what, sizeof what, "%s %dD P%d", phys ? "elasticity" : "scalar", dim, order);
                assemble_both(m, &prob, what);
                hs_fem_mesh_free(m);
            }
    TEST_OK(hs_ctx_set_device(test_ctx(), "cuda", 1));
}

/* The AMG hierarchy built from the same matrix on either backend (the host setup is shared), one
 * V-cycle applied to the same vector, and whole AMG-CG solves. */
static void test_amg_cycle(void **state)
{
    (void)state;
    hs_ctx *ctx = test_ctx();
    int64_t n[3] = {16, 16, 16};
    double Lb[3] = {1, 1, 1};
    hs_fem_mesh *m;
    TEST_OK(hs_fem_mesh_box(3, n, Lb, &m));
    hs_fem_region reg = {1, {1.0, 0, 1.0}};
    hs_fem_bc bcs[6];
    int nb = fem_test_walls(m, bcs);
    hs_fem_problem prob = {HS_FEM_SCALAR, 1, 1, &reg, nb, bcs};
    double *z[2], *u[2];
    int64_t len = 0;
    int it[2];
    for (int b = 0; b < 2; b++) {
        TEST_OK(hs_ctx_set_device(ctx, b ? "cuda" : "cpu", 1));
        hs_fem_system *s;
        TEST_OK(hs_fem_system_create(ctx, m, &prob, NULL, &s));
        double *val, *r, *dz;
        TEST_OK(hs_mem_alloc(ctx, (size_t)s->nnz * sizeof(double), (void **)&val));
        TEST_OK(hs_fem_assemble(s, 1.0, 0.0, 1.0, 1, val, NULL));
        hs_fem_matrix M;
        TEST_OK(hs_fem_matrix_create(s, val, &M));
        hs_amg_opts o = hs_amg_default_opts();
        o.coarse_size = 30;
        hs_precond P;
        TEST_OK(hs_precond_amg(hs_fem_matrix_local(&M), &o, &P));
        len = s->n_local;
        double *h = malloc((size_t)len * sizeof(double));
        test_fill_f64(h, (size_t)len, 7, -1, 1);
        r = test_upload(h, (size_t)len * sizeof(double));
        dz = test_upload(NULL, (size_t)len * sizeof(double));
        TEST_OK(P.apply(P.data, r, dz));
        z[b] = test_download_new(dz, (size_t)len * sizeof(double));
        hs_precond_destroy(&P);
        hs_fem_matrix_destroy(&M);
        hs_mem_free(ctx, val), hs_mem_free(ctx, r), hs_mem_free(ctx, dz);
        free(h);
        u[b] = fem_test_solve(s, NULL, 1, 1e-10, &it[b]);
        hs_fem_system_destroy(s);
    }
    /* a V-cycle chains SpMVs and vector updates whose fma contractions differ in the last bits */
    double ez = rel(z[1], z[0], len), eu = rel(u[1], u[0], len);
    printf("  AMG V-cycle: CUDA vs CPU %.2e; AMG-CG to 1e-10: %d and %d iterations, solutions differ by %.2e\n", ez, it[1], it[0], eu);
    if (!(ez < 1e-12)) fail_msg("V-cycle differs by %.3e", ez);
    if (!(eu < 1e-9)) fail_msg("AMG-CG solutions differ by %.3e", eu);
    assert_true(abs(it[1] - it[0]) <= 1);
    free(z[0]), free(z[1]), free(u[0]), free(u[1]);
    hs_fem_mesh_free(m);
    TEST_OK(hs_ctx_set_device(ctx, "cuda", 1));
}

static int setup_cuda(void **state)
{
    (void)state;
    return hs_ctx_set_device(test_ctx(), "cuda", 1) == HS_OK ? 0 : -1;
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup(test_assembly, setup_cuda),
    cmocka_unit_test_setup(test_amg_cycle, setup_cuda),
};
#endif

int main(void)
{
#if HS_HAVE_CUDA
    if (hs_cuda_device_count() > 0) return test_run_group("fem_twin", tests, sizeof tests / sizeof tests[0]);
    printf("SKIP: no GPU here: the CUDA finite-element assembly and AMG cycle are not compared with their CPU twins\n");
#else
    printf("SKIP: built without CUDA: the finite-element assembly has no CUDA twin to compare\n");
#endif
    return 77;
}
