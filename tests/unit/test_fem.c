/* Finite elements: quadrature exactness, patch tests (P1 linear, P2 quadratic to round-off), exact 1-D solutions with regions, Neumann and Robin, manufactured-solution rates. */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/memory.h"
#include "kernels/sparse/amg.h"
#include "kernels/sparse/pcg.h"
#include "solvers/fem/fem_system.h"

#ifndef HS_SOURCE_DIR
#define HS_SOURCE_DIR "."
#endif

/* Solve the assembled system of s with Jacobi PCG to rtol; the nodal solution on every rank. */
static double *solve(hs_fem_system *s, double rtol, int *iters)
{
    hs_ctx *ctx = test_ctx();
    double *val, *rhs, *x;
    TEST_OK(hs_mem_alloc(ctx, (size_t)(s->nnz ? s->nnz : 1) * sizeof(double), (void **)&val));
    TEST_OK(hs_mem_alloc(ctx, (size_t)(s->n_local ? s->n_local : 1) * sizeof(double), (void **)&rhs));
    TEST_OK(hs_mem_alloc(ctx, (size_t)(s->n_local ? s->n_local : 1) * sizeof(double), (void **)&x));
    TEST_OK(hs_fem_assemble(s, 1.0, 0.0, 1.0, 1, val, rhs));
    hs_fem_matrix M;
    TEST_OK(hs_fem_matrix_create(s, val, &M));
    TEST_OK(hs_fem_initial_guess(s, 0.0, x));
    hs_pcg_opts o = hs_pcg_default_opts();
    o.rtol = rtol;
    hs_pcg_result r;
    TEST_OK(hs_pcg_solve(&M.op, rhs, x, &o, &r));
    assert_true(r.converged);
    if (iters) *iters = r.iterations;
    double *u = malloc((size_t)s->nnodes * s->ncomp * sizeof(double));
    TEST_OK(hs_fem_gather(s, x, u));
    hs_fem_matrix_destroy(&M);
    hs_mem_free(ctx, val), hs_mem_free(ctx, rhs), hs_mem_free(ctx, x);
    return u;
}

/* Dirichlet on every boundary group of a mesh, with the value set later by a function. */
static int all_walls(const hs_fem_mesh *m, hs_fem_bc *bcs)
{
    int n = 0;
    for (int i = 0; i < m->ngroups; i++)
        if (m->groups[i].dim == m->dim - 1) bcs[n++] = (hs_fem_bc){m->groups[i].tag, HS_FEM_DIRICHLET, 0, {0, 0, 0}, 0};
    return n;
}

/* ------------------------------------------------------------------ quadrature */

static double monomial_exact(int dim, const int *p)
{
    /* int over the reference simplex of lam1^a lam2^b lam3^c = a! b! c! dim! / (a + b + c + dim)! times its measure */
    double f = 1;
    int s = 0;
    for (int i = 0; i < dim; i++) {
        for (int k = 2; k <= p[i]; k++) f *= k;
        s += p[i];
    }
    double num = f, den = 1;
    for (int k = 2; k <= s + dim; k++) den *= k;
    double dimf = 1;
    for (int k = 2; k <= dim; k++) dimf *= k;
    return num * dimf / den; /* relative to the measure */
}

static void test_quadrature(void **state)
{
    (void)state;
    for (int dim = 1; dim <= 3; dim++)
        for (int deg = 2; deg <= 5; deg += 3)
            for (int a = 0; a <= deg; a++)
                for (int b = 0; a + b <= deg; b++)
                    for (int c = 0; a + b + c <= deg; c++) {
                        int p[3] = {a, dim > 1 ? b : 0, dim > 2 ? c : 0};
                        if ((dim < 2 && b) || (dim < 3 && c)) continue;
                        double sum = 0, lam[4], w;
                        int n = hs_fem_rule(dim, deg, 0, lam, &w);
                        for (int q = 0; q < n; q++) {
                            hs_fem_rule(dim, deg, q, lam, &w);
                            double v = w;
                            for (int i = 0; i < dim; i++) v *= pow(lam[i + 1], p[i]);
                            sum += v;
                        }
                        double ex = monomial_exact(dim, p);
                        if (fabs(sum - ex) > 1e-13)
                            fail_msg("dim %d degree %d monomial (%d %d %d): %.16g vs %.16g", dim, deg, a, b, c, sum, ex);
                    }
}

/* ------------------------------------------------------------------ patch tests */

typedef struct {
    int dim, order;
} patch_case;

static void patch_exact(const double *x, void *user, double *out)
{
    const patch_case *pc = user;
    if (pc->order == 1) out[0] = 1 + 2 * x[0] - 3 * x[1] + (pc->dim == 3 ? 0.5 * x[2] : 0.0);
    else if (pc->dim == 2) out[0] = x[0] * x[0] + x[0] * x[1] - 2 * x[1] * x[1] + x[1];
    else out[0] = x[0] * x[0] + x[1] * x[1] - 2 * x[2] * x[2] + x[0] * x[1] - x[1] * x[2] + x[2];
}

static void patch_run(const char *file, int order)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", HS_SOURCE_DIR, file);
    hs_fem_mesh *m;
    TEST_OK(hs_fem_mesh_read(path, &m));
    hs_fem_bc bcs[16];
    int nb = all_walls(m, bcs);
    patch_case pc = {m->dim, order};
    /* -lap u: P2 2-D: -(2 - 4) = 2; 3-D: -(2 + 2 - 4) = 0 */
    double f = order == 2 && m->dim == 2 ? 2.0 : 0.0;
    hs_fem_region reg = {m->groups[0].dim == m->dim ? m->groups[0].tag : 10, {1.0, 0.0, f}};
    for (int i = 0; i < m->ngroups; i++)
        if (m->groups[i].dim == m->dim) reg.tag = m->groups[i].tag;
    hs_fem_problem prob = {HS_FEM_SCALAR, order, 1, &reg, nb, bcs};
    hs_fem_system *s;
    TEST_OK(hs_fem_system_create(test_ctx(), m, &prob, NULL, &s));
    TEST_OK(hs_fem_system_set_dirichlet(s, patch_exact, &pc));
    double *u = solve(s, 1e-14, NULL), err = 0, x[3], v;
    for (int64_t n = 0; n < s->nnodes; n++) {
        hs_fem_node_x(s, n, x);
        patch_exact(x, &pc, &v);
        err = fmax(err, fabs(u[n] - v));
    }
    if (!(err < 1e-11)) fail_msg("%s P%d: max nodal error %.3e", file, order, err);
    printf("patch %s P%d: %lld DOFs, max nodal error %.2e\n", file, order, (long long)s->n_global, err);
    free(u);
    hs_fem_system_destroy(s);
    hs_fem_mesh_free(m);
}

static void test_patch(void **state)
{
    (void)state;
    const char *files[] = {"tests/data/fem/tri_22a.msh", "tests/data/fem/tet_41b.msh", "inputs/meshes/square.msh",
                           "inputs/meshes/cube.msh"};
    for (int i = 0; i < 4; i++)
        for (int order = 1; order <= 2; order++) patch_run(files[i], order);
}

/* ------------------------------------------------------------------ 1-D solutions across two regions */

static void test_regions_neumann_robin(void **state)
{
    (void)state;
    const double k1 = 2.0, k2 = 0.5, q = 3.0, h = 4.0, Tinf = 7.0;
    for (int dim = 2; dim <= 3; dim++)
        for (int kind = HS_FEM_NEUMANN; kind <= HS_FEM_ROBIN; kind++) {
            hs_fem_mesh *m;
            int64_t n[3] = {6, 3, 2};
            double Lb[3] = {1, 0.5, 0.4};
            TEST_OK(hs_fem_mesh_box(dim, n, Lb, &m));
            for (int64_t c = 0; c < m->ncells; c++) {
                double cx = 0;
                for (int k = 0; k <= dim; k++) cx += m->x[3 * m->cell[c * (dim + 1) + k]] / (dim + 1);
                m->region[c] = cx > 0.5 ? 2 : 1;
            }
            hs_fem_region reg[2] = {{1, {k1, 0, 0}}, {2, {k2, 0, 0}}};
            hs_fem_bc bcs[2] = {{11, HS_FEM_DIRICHLET, 0, {0, 0, 0}, 0}, {12, kind, 0, {kind == HS_FEM_NEUMANN ? q : Tinf, 0, 0}, h}};
            double F = kind == HS_FEM_NEUMANN ? q : h * Tinf / (1 + h * (0.5 / k1 + 0.5 / k2));
            for (int order = 1; order <= 2; order++) {
                hs_fem_problem prob = {HS_FEM_SCALAR, order, 2, reg, 2, bcs};
                hs_fem_system *s;
                TEST_OK(hs_fem_system_create(test_ctx(), m, &prob, NULL, &s));
                double *u = solve(s, 1e-14, NULL), err = 0, x[3];
                for (int64_t i = 0; i < s->nnodes; i++) {
                    hs_fem_node_x(s, i, x);
                    double ex = x[0] <= 0.5 ? F * x[0] / k1 : F * (0.5 / k1 + (x[0] - 0.5) / k2);
                    err = fmax(err, fabs(u[i] - ex));
                }
                if (!(err < 1e-11)) fail_msg("dim %d %s P%d: max error %.3e", dim, kind == HS_FEM_NEUMANN ? "Neumann" : "Robin", order, err);
                free(u);
                hs_fem_system_destroy(s);
            }
            hs_fem_mesh_free(m);
        }
}

/* ------------------------------------------------------------------ manufactured solutions */

typedef struct {
    int dim;
} mms;

static void mms_exact(const double *x, void *user, double *val, double *grad)
{
    const mms *c = user;
    double sx = sin(M_PI * x[0]), cx = cos(M_PI * x[0]), cy = cos(M_PI * x[1]), sy = sin(M_PI * x[1]);
    double ez = c->dim == 3 ? exp(x[2]) : 1.0;
    val[0] = sx * cy * ez;
    grad[0] = M_PI * cx * cy * ez;
    grad[1] = -M_PI * sx * sy * ez;
    grad[2] = c->dim == 3 ? val[0] : 0.0;
}

static void mms_value(const double *x, void *user, double *out)
{
    double g[3];
    mms_exact(x, user, out, g);
}

static void mms_source(const double *x, void *user, double *out)
{
    const mms *c = user;
    double v, g[3];
    mms_exact(x, user, &v, g);
    out[0] = (2 * M_PI * M_PI - (c->dim == 3 ? 1.0 : 0.0)) * v;
}

/* Errors on the box refined `levels` times from n0 cells per side. */
static void mms_errors(int dim, int order, int64_t n0, int levels, double *l2, double *h1, int64_t *dofs)
{
    mms c = {dim};
    for (int l = 0; l < levels; l++) {
        int64_t n[3] = {n0 << l, n0 << l, n0 << l};
        double Lb[3] = {1, 1, 1};
        hs_fem_mesh *m;
        TEST_OK(hs_fem_mesh_box(dim, n, Lb, &m));
        hs_fem_region reg = {1, {1.0, 0, 0}};
        hs_fem_bc bcs[6];
        int nb = all_walls(m, bcs);
        hs_fem_problem prob = {HS_FEM_SCALAR, order, 1, &reg, nb, bcs};
        hs_fem_system *s;
        TEST_OK(hs_fem_system_create(test_ctx(), m, &prob, NULL, &s));
        TEST_OK(hs_fem_system_set_dirichlet(s, mms_value, &c));
        /* rhs = lifted assembly + int f phi from the host */
        hs_ctx *ctx = test_ctx();
        double *val, *rhs, *x;
        TEST_OK(hs_mem_alloc(ctx, (size_t)s->nnz * sizeof(double), (void **)&val));
        TEST_OK(hs_mem_alloc(ctx, (size_t)s->n_local * sizeof(double), (void **)&rhs));
        TEST_OK(hs_mem_alloc(ctx, (size_t)s->n_local * sizeof(double), (void **)&x));
        TEST_OK(hs_fem_assemble(s, 1.0, 0.0, 1.0, 1, val, rhs));
        double *b = malloc((size_t)s->n_local * sizeof(double));
        test_download(b, rhs, (size_t)s->n_local * sizeof(double));
        TEST_OK(hs_fem_load_function(s, mms_source, &c, b));
        TEST_OK(hs_mem_copy(ctx, rhs, b, (size_t)s->n_local * sizeof(double), HS_COPY_H2D));
        hs_fem_matrix M;
        TEST_OK(hs_fem_matrix_create(s, val, &M));
        TEST_OK(hs_fem_initial_guess(s, 0.0, x));
        hs_pcg_opts o = hs_pcg_default_opts();
        o.rtol = 1e-12;
        hs_pcg_result r;
        TEST_OK(hs_pcg_solve(&M.op, rhs, x, &o, &r));
        assert_true(r.converged);
        double *u = malloc((size_t)s->nnodes * sizeof(double));
        TEST_OK(hs_fem_gather(s, x, u));
        TEST_OK(hs_fem_error_norms(s, u, mms_exact, &c, &l2[l], &h1[l]));
        dofs[l] = s->n_global;
        free(u), free(b);
        hs_fem_matrix_destroy(&M);
        hs_mem_free(ctx, val), hs_mem_free(ctx, rhs), hs_mem_free(ctx, x);
        hs_fem_system_destroy(s);
        hs_fem_mesh_free(m);
    }
}

static void check_rates(int dim, int order, int64_t n0, int levels)
{
    double l2[8], h1[8];
    int64_t dofs[8];
    mms_errors(dim, order, n0, levels, l2, h1, dofs);
    for (int l = 0; l < levels; l++)
        printf("  %dD P%d n = %3lld  DOFs %8lld  L2 %.4e  H1 %.4e  rates %s%.3f %.3f\n", dim, order, (long long)(n0 << l),
               (long long)dofs[l], l2[l], h1[l], l ? "" : "(none) ", l ? log2(l2[l - 1] / l2[l]) : 0.0, l ? log2(h1[l - 1] / h1[l]) : 0.0);
    double r2 = log2(l2[levels - 2] / l2[levels - 1]), r1 = log2(h1[levels - 2] / h1[levels - 1]);
    if (fabs(r2 - (order + 1)) > 0.15 || fabs(r1 - order) > 0.15)
        fail_msg("%dD P%d: rates L2 %.3f (expected %d) H1 %.3f (expected %d)", dim, order, r2, order + 1, r1, order);
}

static void test_mms_2d(void **state)
{
    (void)state;
    check_rates(2, 1, 8, 3);
    check_rates(2, 2, 4, 3);
}

static void test_mms_3d(void **state)
{
    (void)state;
    check_rates(3, 1, 4, 3);
    check_rates(3, 2, 2, 3);
}


/* ------------------------------------------------------------------ AMG under refinement */

/* CG iterations to 1e-8 on -lap u = 1 in the unit box (Dirichlet walls), n cells per side, P`order`. */
static int box_iterations(int dim, int order, int64_t n0, int amg, double *seconds, int64_t *dofs)
{
    hs_ctx *ctx = test_ctx();
    int64_t n[3] = {n0, n0, n0};
    double Lb[3] = {1, 1, 1};
    hs_fem_mesh *m;
    TEST_OK(hs_fem_mesh_box(dim, n, Lb, &m));
    hs_fem_region reg = {1, {1.0, 0, 1.0}};
    hs_fem_bc bcs[6];
    int nb = all_walls(m, bcs);
    hs_fem_problem prob = {HS_FEM_SCALAR, order, 1, &reg, nb, bcs};
    hs_fem_system *s;
    TEST_OK(hs_fem_system_create(ctx, m, &prob, NULL, &s));
    double *val, *rhs, *x;
    TEST_OK(hs_mem_alloc(ctx, (size_t)s->nnz * sizeof(double), (void **)&val));
    TEST_OK(hs_mem_alloc(ctx, (size_t)s->n_local * sizeof(double), (void **)&rhs));
    TEST_OK(hs_mem_alloc(ctx, (size_t)s->n_local * sizeof(double), (void **)&x));
    TEST_OK(hs_fem_assemble(s, 1.0, 0.0, 1.0, 1, val, rhs));
    hs_fem_matrix M;
    TEST_OK(hs_fem_matrix_create(s, val, &M));
    TEST_OK(hs_fem_initial_guess(s, 0.0, x));
    double t0 = hs_wtime();
    hs_precond P;
    hs_pcg_opts o = hs_pcg_default_opts();
    if (amg) {
        hs_amg_opts ao = hs_amg_default_opts();
        ao.coarse_size = 20; /* the coarsest mesh is not solved directly */
        TEST_OK(hs_precond_amg(hs_fem_matrix_local(&M), &ao, &P));
        char buf[256];
        hs_amg_describe(&P, buf, sizeof buf);
        printf("    %s\n", buf);
        o.custom = &P;
    }
    hs_pcg_result r;
    TEST_OK(hs_pcg_solve(&M.op, rhs, x, &o, &r));
    *seconds = hs_wtime() - t0;
    assert_true(r.converged);
    *dofs = s->n_global;
    if (amg) hs_precond_destroy(&P);
    hs_fem_matrix_destroy(&M);
    hs_mem_free(ctx, val), hs_mem_free(ctx, rhs), hs_mem_free(ctx, x);
    hs_fem_system_destroy(s);
    hs_fem_mesh_free(m);
    return r.iterations;
}

/* Uniform refinements of the 3-D P1 Kuhn box (each Kuhn box of 2n cells is Freudenthal's
 * refinement of the one of n): AMG-CG iterations to 1e-8 grow by less than 1.5x in all, while
 * Jacobi-CG's about double per refinement.  Quick: two refinements (8 to 32 cells per side);
 * HS_TEST_VALIDATE: three (8 to 64, 274625 unknowns). */
static void test_amg_refinement(void **state)
{
    (void)state;
    int levels = getenv("HS_TEST_VALIDATE") ? 4 : 3;
    int64_t n0 = 8;
    int it_amg[4], it_jac[4];
    for (int l = 0; l < levels; l++) {
        double ta, tj;
        int64_t dofs;
        it_amg[l] = box_iterations(3, 1, n0 << l, 1, &ta, &dofs);
        it_jac[l] = box_iterations(3, 1, n0 << l, 0, &tj, &dofs);
        printf("  3D P1 n = %3lld  DOFs %8lld  AMG-CG %3d iterations (%.3f s)  Jacobi-CG %4d iterations (%.3f s)\n",
               (long long)(n0 << l), (long long)dofs, it_amg[l], ta, it_jac[l], tj);
    }
    double growth = (double)it_amg[levels - 1] / it_amg[0];
    double jac = pow((double)it_jac[levels - 1] / it_jac[0], 1.0 / (levels - 1));
    printf("  AMG-CG growth over %d refinements %.2fx; Jacobi-CG %.2fx per refinement\n", levels - 1, growth, jac);
    if (!(growth < 1.5))
        fail_msg("AMG-CG iterations grew %.2fx over %d refinements (%d -> %d)", growth, levels - 1, it_amg[0], it_amg[levels - 1]);
    assert_true(jac > 1.6);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_quadrature),
    cmocka_unit_test(test_patch),
    cmocka_unit_test(test_regions_neumann_robin),
    cmocka_unit_test(test_mms_2d),
    cmocka_unit_test(test_mms_3d),
    cmocka_unit_test(test_amg_refinement),
};

TEST_MAIN("fem", tests)
