/* Finite elements on 1, 2 and 4 ranks: the partitioned system (RCB and, where built in, METIS) gives the answer of the same system kept whole on rank 0, for P1/P2 Poisson in 2-D and 3-D and P1/P2 elasticity. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fem_test_util.h"
#include "solvers/fem/fem_partition.h"

/* max |a - b| / max |b| over n values */
static double rel_diff(const double *a, const double *b, int64_t n)
{
    double e = 0, m = 0;
    for (int64_t i = 0; i < n; i++) e = fmax(e, fabs(a[i] - b[i])), m = fmax(m, fabs(b[i]));
    return m > 0 ? e / m : e;
}

/* Solve prob on m whole (rank 0 holds every row) and partitioned by `method`; compare the nodal
 * solutions and A v for a vector given by global node ids. */
static void compare(hs_fem_mesh *m, const hs_fem_problem *prob, int method, const char *what)
{
    hs_ctx *ctx = test_ctx();
    int *part = malloc((size_t)m->ncells * sizeof(int)), used;
    TEST_OK(hs_fem_partition(m, ctx->size, method, part, &used));
    hs_fem_system *whole, *split;
    TEST_OK(hs_fem_system_create(ctx, m, prob, NULL, &whole));
    TEST_OK(hs_fem_system_create(ctx, m, prob, part, &split));
    int64_t n = whole->nnodes * whole->ncomp;
    double *u0 = fem_test_solve(whole, NULL, 1, 1e-12, NULL);
    double *u1 = fem_test_solve(split, NULL, 1, 1e-12, NULL);
    double d = rel_diff(u1, u0, n);
    /* the operators: y = A v with v(node, c) = sin(node + c) */
    double e = 0;
    hs_fem_system *sy[2] = {whole, split};
    double *y[2];
    for (int k = 0; k < 2; k++) {
        hs_fem_system *s = sy[k];
        double *val, *dv, *dy, *h = malloc((size_t)(s->n_local + 1) * sizeof(double));
        TEST_OK(hs_mem_alloc(ctx, (size_t)(s->nnz + 1) * sizeof(double), (void **)&val));
        TEST_OK(hs_mem_alloc(ctx, (size_t)(s->n_local + 1) * sizeof(double), (void **)&dv));
        TEST_OK(hs_mem_alloc(ctx, (size_t)(s->n_local + 1) * sizeof(double), (void **)&dy));
        TEST_OK(hs_fem_assemble(s, 1.0, 0.0, 1.0, 1, val, NULL));
        hs_fem_matrix M;
        TEST_OK(hs_fem_matrix_create(s, val, &M));
        for (int64_t r = 0; r < s->n_local; r++) h[r] = sin((double)(s->owned[r / s->ncomp] + r % s->ncomp));
        TEST_OK(hs_mem_copy(ctx, dv, h, (size_t)s->n_local * sizeof(double), HS_COPY_H2D));
        TEST_OK(M.op.apply(M.op.data, dv, dy));
        y[k] = malloc((size_t)n * sizeof(double));
        TEST_OK(hs_fem_gather(s, dy, y[k]));
        hs_fem_matrix_destroy(&M);
        hs_mem_free(ctx, val), hs_mem_free(ctx, dv), hs_mem_free(ctx, dy);
        free(h);
    }
    e = rel_diff(y[1], y[0], n);
    if (ctx->rank == 0)
        printf("  %-34s %d rank%s, %s: %lld unknowns, rank 0 owns %lld; A v differs by %.2e, the solution by %.2e\n", what, ctx->size,
               ctx->size > 1 ? "s" : " ", used == HS_FEM_PART_METIS ? "METIS" : "RCB  ", (long long)whole->n_global,
               (long long)split->n_local, e, d);
    if (!(e <= 1e-13)) fail_msg("%s: A v differs by %.3e between the partitions", what, e);
    if (!(d <= 1e-9)) fail_msg("%s: solutions differ by %.3e between the partitions", what, d);
    int ok = 1;
    /* every rank holds the same gathered answer */
    double sum[2] = {0, 0};
    for (int64_t i = 0; i < n; i++) sum[0] += u1[i];
    sum[1] = -sum[0];
    TEST_OK(hs_allreduce_max(ctx->comm, sum, 2));
    ok = sum[0] == -sum[1];
    assert_true(ok);
    free(u0), free(u1), free(y[0]), free(y[1]), free(part);
    hs_fem_system_destroy(whole);
    hs_fem_system_destroy(split);
}

static void poisson_cases(int method)
{
    for (int dim = 2; dim <= 3; dim++)
        for (int order = 1; order <= 2; order++) {
            int64_t n[3] = {dim == 2 ? 12 : 6, dim == 2 ? 10 : 5, 4};
            double Lb[3] = {1.2, 1, 0.8};
            hs_fem_mesh *m;
            TEST_OK(hs_fem_mesh_box(dim, n, Lb, &m));
            /* two regions, Dirichlet, Neumann and Robin walls */
            for (int64_t c = 0; c < m->ncells; c++) m->region[c] = m->x[3 * m->cell[c * (dim + 1)] + 1] < 0.5 ? 1 : 2;
            hs_fem_region reg[2] = {{1, {1.0, 0, 1.0}}, {2, {3.0, 0, -0.5}}};
            hs_fem_bc bcs[3] = {{11, HS_FEM_DIRICHLET, 0, {1.0, 0, 0}, 0}, {12, HS_FEM_NEUMANN, 0, {0.7, 0, 0}, 0},
                                {13, HS_FEM_ROBIN, 0, {2.0, 0, 0}, 5.0}};
            hs_fem_problem prob = {HS_FEM_SCALAR, order, 2, reg, 3, bcs};
            char what[64];
            snprintf(what, sizeof what, "poisson %dD P%d box", dim, order);
            compare(m, &prob, method, what);
            hs_fem_mesh_free(m);
        }
    /* an unstructured Gmsh mesh */
    hs_fem_mesh *m;
    TEST_OK(hs_fem_mesh_read("inputs/meshes/cube.msh", &m));
    hs_fem_region reg = {10, {1.0, 0, 1.0}};
    hs_fem_bc bcs[6];
    int nb = fem_test_walls(m, bcs);
    hs_fem_problem prob = {HS_FEM_SCALAR, 2, 1, &reg, nb, bcs};
    compare(m, &prob, method, "poisson P2 cube.msh (Gmsh)");
    hs_fem_mesh_free(m);
}

static void elastic_cases(int method)
{
    for (int dim = 2; dim <= 3; dim++) {
        int64_t n[3] = {dim == 2 ? 16 : 8, 4, 3};
        double Lb[3] = {4, 1, 1};
        hs_fem_mesh *m;
        TEST_OK(hs_fem_mesh_box(dim, n, Lb, &m));
        double E = 1000, nu = 0.3, lam = E * nu / ((1 + nu) * (1 - 2 * nu)), mu = E / (2 * (1 + nu));
        hs_fem_region reg = {1, {lam, mu, 0, -1.0, 0}};
        hs_fem_bc bcs[2] = {{11, HS_FEM_DIRICHLET, 0, {0, 0, 0}, 0}, {12, HS_FEM_NEUMANN, 0, {0.5, -2.0, 0.3}, 0}};
        hs_fem_problem prob = {HS_FEM_ELASTIC, dim == 2 ? 2 : 1, 1, &reg, 2, bcs};
        char what[64];
        snprintf(what, sizeof what, "elasticity %dD P%d box", dim, prob.order);
        compare(m, &prob, method, what);
        hs_fem_mesh_free(m);
    }
}

static void test_rcb(void **state)
{
    (void)state;
    poisson_cases(HS_FEM_PART_RCB);
    elastic_cases(HS_FEM_PART_RCB);
}

static void test_metis(void **state)
{
    (void)state;
    if (!HS_HAVE_METIS) {
        if (test_ctx()->rank == 0) printf("  (built without METIS: its partitions are not tried)\n");
        return;
    }
    poisson_cases(HS_FEM_PART_METIS);
    elastic_cases(HS_FEM_PART_METIS);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_rcb),
    cmocka_unit_test(test_metis),
};

TEST_MAIN("fem_mpi", tests)
