/* Finite elements against exact answers: manufactured-solution rates (P1: L2 2, H1 1; P2: 3, 2) in 2-D and 3-D, AMG-CG iterations under refinement against Jacobi-CG, backward Euler / Crank-Nicolson orders of the heat problem, the cantilever against Timoshenko beam theory.  HS_TEST_VALIDATE=1: finer meshes, three refinements, the refined beam. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fem_test_util.h"
#include "io/params.h"
#include "solvers/fem/fem.h"

static int validate_mode(void) { return getenv("HS_TEST_VALIDATE") && atoi(getenv("HS_TEST_VALIDATE")); }
static int root(void) { return test_ctx()->rank == 0; }

/* ------------------------------------------------------------------ manufactured solutions */

typedef struct {
    int dim;
} mms;

/* u = sin(pi x) cos(pi y) (e^z in 3-D): Dirichlet values that vary along every wall */
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
        int nb = fem_test_walls(m, bcs);
        hs_fem_problem prob = {HS_FEM_SCALAR, order, 1, &reg, nb, bcs};
        hs_fem_system *s;
        TEST_OK(hs_fem_system_create(test_ctx(), m, &prob, NULL, &s));
        TEST_OK(hs_fem_system_set_dirichlet(s, mms_value, &c));
        double *b = calloc((size_t)(s->n_local ? s->n_local : 1), sizeof(double));
        TEST_OK(hs_fem_load_function(s, mms_source, &c, b));
        double *u = fem_test_solve(s, b, 1, 1e-12, NULL);
        TEST_OK(hs_fem_error_norms(s, u, mms_exact, &c, &l2[l], &h1[l]));
        dofs[l] = s->n_global;
        free(u), free(b);
        hs_fem_system_destroy(s);
        hs_fem_mesh_free(m);
    }
}

static void check_rates(int dim, int order, int64_t n0, int levels)
{
    double l2[8], h1[8];
    int64_t dofs[8];
    mms_errors(dim, order, n0, levels, l2, h1, dofs);
    if (root()) {
        printf("  %dD P%d   cells/side   unknowns        L2 error   rate     H1 error   rate\n", dim, order);
        for (int l = 0; l < levels; l++) {
            char a[16] = "    -", b[16] = "    -";
            if (l) snprintf(a, sizeof a, "%5.3f", log2(l2[l - 1] / l2[l])), snprintf(b, sizeof b, "%5.3f", log2(h1[l - 1] / h1[l]));
            printf("           %10lld %10lld   %.4e  %s   %.4e  %s\n", (long long)(n0 << l), (long long)dofs[l], l2[l], a, h1[l], b);
        }
    }
    double r2 = log2(l2[levels - 2] / l2[levels - 1]), r1 = log2(h1[levels - 2] / h1[levels - 1]);
    if (fabs(r2 - (order + 1)) > 0.15 || fabs(r1 - order) > 0.15)
        fail_msg("%dD P%d: rates L2 %.3f (expected %d) H1 %.3f (expected %d), each within 0.15", dim, order, r2, order + 1, r1, order);
}

static void test_mms_2d(void **state)
{
    (void)state;
    int v = validate_mode();
    check_rates(2, 1, 8, v ? 5 : 3);
    check_rates(2, 2, 4, v ? 5 : 3);
}

static void test_mms_3d(void **state)
{
    (void)state;
    int v = validate_mode();
    check_rates(3, 1, 4, v ? 5 : 3);
    check_rates(3, 2, 2, v ? 5 : 3);
}

/* ------------------------------------------------------------------ AMG under refinement */

/* CG iterations to 1e-8 on -lap u = 1 in the unit cube (Dirichlet walls), n cells per side, P1. */
static int box_iterations(int64_t n0, int amg, double *seconds, int64_t *dofs)
{
    int64_t n[3] = {n0, n0, n0};
    double Lb[3] = {1, 1, 1};
    hs_fem_mesh *m;
    TEST_OK(hs_fem_mesh_box(3, n, Lb, &m));
    hs_fem_region reg = {1, {1.0, 0, 1.0}};
    hs_fem_bc bcs[6];
    int nb = fem_test_walls(m, bcs);
    hs_fem_problem prob = {HS_FEM_SCALAR, 1, 1, &reg, nb, bcs};
    hs_fem_system *s;
    TEST_OK(hs_fem_system_create(test_ctx(), m, &prob, NULL, &s));
    int it;
    double t0 = hs_wtime();
    double *u = fem_test_solve(s, NULL, amg, 1e-8, &it);
    *seconds = hs_wtime() - t0;
    *dofs = s->n_global;
    free(u);
    hs_fem_system_destroy(s);
    hs_fem_mesh_free(m);
    return it;
}

/* Uniform refinements of the 3-D P1 Kuhn box (the Kuhn box of 2n cells per side is Freudenthal's
 * refinement of the one of n): AMG-CG iterations to 1e-8 grow by less than 1.5x in all, while
 * Jacobi-CG's about double per refinement.  Quick: two refinements (8 to 32 cells per side);
 * validate: three (8 to 64, 274625 unknowns). */
static void test_amg_refinement(void **state)
{
    (void)state;
    int levels = validate_mode() ? 4 : 3;
    int64_t n0 = 8;
    int it_amg[4], it_jac[4];
    if (root()) printf("  3D P1 Poisson, CG to 1e-8   cells/side   unknowns   AMG-CG iterations (s)   Jacobi-CG iterations (s)\n");
    for (int l = 0; l < levels; l++) {
        double ta, tj;
        int64_t dofs;
        it_amg[l] = box_iterations(n0 << l, 1, &ta, &dofs);
        it_jac[l] = box_iterations(n0 << l, 0, &tj, &dofs);
        if (root())
            printf("                              %10lld %10lld   %6d (%8.3f)       %6d (%8.3f)\n", (long long)(n0 << l), (long long)dofs,
                   it_amg[l], ta, it_jac[l], tj);
    }
    double growth = (double)it_amg[levels - 1] / it_amg[0];
    double jac = pow((double)it_jac[levels - 1] / it_jac[0], 1.0 / (levels - 1));
    if (root()) printf("  AMG-CG grows %.2fx over %d refinements; Jacobi-CG %.2fx per refinement\n", growth, levels - 1, jac);
    if (!(growth < 1.5))
        fail_msg("AMG-CG iterations grew %.2fx over %d refinements (%d -> %d)", growth, levels - 1, it_amg[0], it_amg[levels - 1]);
    assert_true(jac > 1.6);
}

/* ------------------------------------------------------------------ the solver end to end */

/* Run the fem solver with overrides to its end; the state stays for inspection (destroy it). */
static void *run_solver(const char *const *ov, int count, hs_params **pp)
{
    TEST_OK(hs_params_load(NULL, count, (char *const *)ov, pp));
    void *state = NULL;
    TEST_OK(hs_fem_solver.create(test_ctx(), *pp, &state));
    double t, t_end, work;
    int64_t step, taken;
    hs_fem_solver.progress(state, &t, &step, &t_end, &work);
    while (t < t_end) {
        TEST_OK(hs_fem_solver.advance(state, t_end, 1000000, &taken));
        hs_fem_solver.progress(state, &t, &step, &t_end, &work);
    }
    return state;
}

/* The cantilever of inputs/fem_cantilever.ini against Timoshenko's tip deflection, within 2 %. */
static void test_cantilever(void **state)
{
    (void)state;
    const char *ov[] = {"run.solver=fem", "fem.mesh=inputs/meshes/beam.msh", "fem.problem=elasticity", "fem.order=2",
                        "fem.young=200e9", "fem.poisson_ratio=0.3", "fem.dirichlet=clamped", "fem.neumann=tip",
                        "fem.neumann_value=0 -1e6 0", validate_mode() ? "fem.refine=1" : "fem.refine=0"};
    hs_params *p;
    void *st = run_solver(ov, 10, &p);
    double uy;
    TEST_OK(hs_fem_tip_deflection(st, &uy));
    const double E = 200e9, nu = 0.3, L = 10, H = 1, W = 1, P = 1e6, I = W * H * H * H / 12, G = E / (2 * (1 + nu));
    double eb = P * L * L * L / (3 * E * I), kappa = 10 * (1 + nu) / (12 + 11 * nu), tim = eb + P * L / (kappa * G * W * H);
    double err = (-uy - tim) / tim;
    if (root())
        printf("  cantilever (%s): tip deflection %.6e m; Euler-Bernoulli %.6e, Timoshenko %.6e; %+.2f %% from Timoshenko\n",
               validate_mode() ? "refined once" : "the shipped mesh", -uy, eb, tim, 100 * err);
    if (!(fabs(err) < 0.02)) fail_msg("tip deflection %.6e is %.2f %% from Timoshenko's %.6e", -uy, 100 * err, tim);
    hs_fem_solver.destroy(st);
    hs_params_free(p);
}

/* T = exp(-2 pi^2 t) sin(pi x) sin(pi y) on the unit square, T = 0 on the walls (k = rho c = 1): the
 * L2 error at t = 0.1 falls like dt for backward Euler and like dt^2 for Crank-Nicolson (P2 on a
 * 16 x 16 box: the spatial error stays below the temporal one). */
typedef struct {
    double t;
} heat_exact_t;

static void heat_exact(const double *x, void *user, double *val, double *grad)
{
    double a = exp(-2 * M_PI * M_PI * ((heat_exact_t *)user)->t);
    val[0] = a * sin(M_PI * x[0]) * sin(M_PI * x[1]);
    grad[0] = a * M_PI * cos(M_PI * x[0]) * sin(M_PI * x[1]);
    grad[1] = a * M_PI * sin(M_PI * x[0]) * cos(M_PI * x[1]);
    grad[2] = 0;
}

static double heat_error(double theta, int nsteps)
{
    hs_ctx *ctx = test_ctx();
    int64_t n[3] = {16, 16, 1};
    double Lb[3] = {1, 1, 1}, t_end = 0.1, dt = t_end / nsteps;
    hs_fem_mesh *m;
    TEST_OK(hs_fem_mesh_box(2, n, Lb, &m));
    hs_fem_region reg = {1, {1.0, 1.0, 0}};
    hs_fem_bc bcs[4];
    int nb = fem_test_walls(m, bcs);
    hs_fem_problem prob = {HS_FEM_SCALAR, 2, 1, &reg, nb, bcs};
    hs_fem_system *s;
    TEST_OK(hs_fem_system_create(ctx, m, &prob, NULL, &s));
    size_t bv = (size_t)(s->n_local ? s->n_local : 1) * sizeof(double), bm = (size_t)(s->nnz ? s->nnz : 1) * sizeof(double);
    double *va, *vb, *rhs, *x;
    TEST_OK(hs_mem_alloc(ctx, bm, (void **)&va));
    TEST_OK(hs_mem_alloc(ctx, bm, (void **)&vb));
    TEST_OK(hs_mem_alloc(ctx, bv, (void **)&rhs));
    TEST_OK(hs_mem_alloc(ctx, bv, (void **)&x));
    TEST_OK(hs_fem_assemble(s, theta * dt, 1.0, 0.0, 0, va, NULL));
    TEST_OK(hs_fem_assemble(s, -(1 - theta) * dt, 1.0, 0.0, 0, vb, NULL));
    hs_fem_matrix A, B;
    TEST_OK(hs_fem_matrix_create(s, va, &A));
    TEST_OK(hs_fem_matrix_create(s, vb, &B));
    /* the interpolant of the start */
    heat_exact_t ex = {0};
    double *h = malloc(bv), xx[3], v, g[3];
    for (int64_t o = 0; o < s->nowned; o++) {
        hs_fem_node_x(s, s->owned[o], xx);
        heat_exact(xx, &ex, &v, g);
        h[o] = v;
    }
    TEST_OK(hs_mem_copy(ctx, x, h, bv, HS_COPY_H2D));
    hs_pcg_opts o = hs_pcg_default_opts();
    o.rtol = 1e-13;
    for (int k = 0; k < nsteps; k++) {
        TEST_OK(B.op.apply(B.op.data, x, rhs));
        TEST_OK(hs_fem_set_dirichlet_rows(s, va, rhs));
        hs_pcg_result r;
        TEST_OK(hs_pcg_solve(&A.op, rhs, x, &o, &r));
        assert_true(r.converged);
    }
    double *u = malloc((size_t)s->nnodes * sizeof(double)), l2, h1;
    TEST_OK(hs_fem_gather(s, x, u));
    ex.t = t_end;
    TEST_OK(hs_fem_error_norms(s, u, heat_exact, &ex, &l2, &h1));
    free(u), free(h);
    hs_fem_matrix_destroy(&A), hs_fem_matrix_destroy(&B);
    hs_mem_free(ctx, va), hs_mem_free(ctx, vb), hs_mem_free(ctx, rhs), hs_mem_free(ctx, x);
    hs_fem_system_destroy(s);
    hs_fem_mesh_free(m);
    return l2;
}

static void test_heat_orders(void **state)
{
    (void)state;
    const char *names[2] = {"backward Euler", "Crank-Nicolson"};
    for (int cn = 0; cn < 2; cn++) {
        double e[3];
        int steps[3] = {5, 10, 20};
        for (int l = 0; l < 3; l++) e[l] = heat_error(cn ? 0.5 : 1.0, steps[l]);
        double r1 = log2(e[0] / e[1]), r2 = log2(e[1] / e[2]);
        if (root())
            printf("  heat, %s: L2 errors at t = 0.1 with 5, 10, 20 steps: %.4e %.4e %.4e; orders %.3f %.3f\n", names[cn], e[0], e[1],
                   e[2], r1, r2);
        if (fabs(r2 - (cn ? 2.0 : 1.0)) > 0.15) fail_msg("%s: observed order %.3f, expected %d", names[cn], r2, cn ? 2 : 1);
    }
}

static int setup(void **state)
{
    (void)state;
    return hs_solver_declare_all() == HS_OK ? 0 : -1;
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_mms_2d),
    cmocka_unit_test(test_mms_3d),
    cmocka_unit_test(test_amg_refinement),
    cmocka_unit_test(test_cantilever),
    cmocka_unit_test(test_heat_orders),
};

int main(void)
{
    if (setup(NULL)) return 1;
    return test_run_group("fem_convergence", tests, sizeof tests / sizeof tests[0]);
}
