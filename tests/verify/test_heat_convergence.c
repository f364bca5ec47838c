/* Observed order of accuracy of the heat solver against exact solutions (2nd/4th order in space,
 * Crank-Nicolson 2nd order in time).  HS_TEST_VALIDATE=1 runs finer grids and prints the tables. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/params.h"
#include "solvers/heat/heat.h"
#include "test_util.h"

int hs_driver_declare(void);

static int validate_mode(void) { return getenv("HS_TEST_VALIDATE") && atoi(getenv("HS_TEST_VALIDATE")); }

/* Run the heat solver to its end time with the given overrides; return the relative L2 error. */
static double run_case(const char *const *overrides, int count)
{
    hs_params *p = NULL;
    TEST_OK(hs_params_load(NULL, count, (char *const *)overrides, &p));
    void *state = NULL;
    TEST_OK(hs_heat_solver.create(test_ctx(), p, &state));
    double t, t_end, work;
    int64_t step, taken;
    hs_heat_solver.progress(state, &t, &step, &t_end, &work);
    while (t < t_end) {
        TEST_OK(hs_heat_solver.advance(state, t_end, 1000000, &taken));
        hs_heat_solver.progress(state, &t, &step, &t_end, &work);
    }
    double e = 0, m = 0;
    TEST_OK(hs_heat_exact_error(state, &e, &m));
    hs_heat_solver.destroy(state);
    hs_params_free(p);
    return e;
}

/* Errors on successively refined grids (factor 2) -> the observed orders; asserts the last ones. */
static void check_order(const char *title, double *err, const char *const *label, int levels, double want)
{
    if (test_ctx()->rank == 0) {
        printf("%s\n  %-28s %14s %8s\n", title, "case", "rel. L2 error", "order");
        for (int i = 0; i < levels; i++) {
            if (i == 0) printf("  %-28s %14.6e %8s\n", label[i], err[i], "-");
            else printf("  %-28s %14.6e %8.3f\n", label[i], err[i], log2(err[i - 1] / err[i]));
        }
    }
    for (int i = 1; i < levels; i++) {
        double order = log2(err[i - 1] / err[i]);
        if (fabs(order - want) > 0.15) fail_msg("%s: observed order %.3f between %s and %s, expected %.1f +- 0.15", title,
                                                 order, label[i - 1], label[i], want);
    }
}

#define MAXLEV 6

static void test_second_order_explicit_sine(void **state)
{
    (void)state;
    int levels = validate_mode() ? 5 : 3;
    double err[MAXLEV];
    char lab[MAXLEV][64], nbuf[MAXLEV][32];
    const char *labels[MAXLEV];
    for (int l = 0; l < levels; l++) {
        int n = 16 << l;
        snprintf(nbuf[l], sizeof nbuf[l], "heat.n=%d", n);
        const char *ov[] = {"run.solver=heat", "heat.ndim=2", nbuf[l], "heat.t_end=0.02", "heat.cfl=0.5",
                            "heat.initial=sine", "heat.mode=1 2", "heat.T0=0", "heat.length=1 1"};
        err[l] = run_case(ov, 9);
        snprintf(lab[l], sizeof lab[l], "2D Dirichlet, %d^2 cells", n);
        labels[l] = lab[l];
    }
    check_order("2nd-order stencil, forward Euler (dt ~ dx^2), decaying sine mode", err, labels, levels, 2.0);
}

static void test_fourth_order_crank_nicolson(void **state)
{
    (void)state;
    int levels = validate_mode() ? 4 : 3;
    double err[MAXLEV];
    char lab[MAXLEV][64], nbuf[MAXLEV][32], dtbuf[MAXLEV][32];
    const char *labels[MAXLEV];
    for (int l = 0; l < levels; l++) {
        int n = 16 << l;
        double dx = 1.0 / n;
        snprintf(nbuf[l], sizeof nbuf[l], "heat.n=%d", n);
        /* dt ~ dx^2 makes CN's O(dt^2) error O(dx^4), like the stencil's */
        snprintf(dtbuf[l], sizeof dtbuf[l], "heat.dt=%.17g", 0.5 * dx * dx);
        const char *ov[] = {"run.solver=heat", "heat.ndim=1", nbuf[l], dtbuf[l], "heat.t_end=0.02",
                            "heat.scheme=crank_nicolson", "heat.order=4", "heat.initial=sine", "heat.mode=1",
                            "heat.bc_xlo=periodic", "heat.bc_xhi=periodic", "heat.pcg_rtol=1e-14"};
        err[l] = run_case(ov, 12);
        snprintf(lab[l], sizeof lab[l], "1D periodic, %d cells", n);
        labels[l] = lab[l];
    }
    check_order("4th-order stencil, Crank-Nicolson (dt ~ dx^2), periodic mode", err, labels, levels, 4.0);
}

static void test_crank_nicolson_time_order(void **state)
{
    (void)state;
    int levels = validate_mode() ? 5 : 3;
    double err[MAXLEV];
    char lab[MAXLEV][64], dtbuf[MAXLEV][32];
    const char *labels[MAXLEV];
    for (int l = 0; l < levels; l++) {
        /* a fine 4th-order grid leaves the time error alone */
        double dt = 0.05 / (4 << l);
        snprintf(dtbuf[l], sizeof dtbuf[l], "heat.dt=%.17g", dt);
        const char *ov[] = {"run.solver=heat", "heat.ndim=1", "heat.n=512", dtbuf[l], "heat.t_end=0.05",
                            "heat.scheme=crank_nicolson", "heat.order=4", "heat.initial=sine", "heat.mode=1",
                            "heat.bc_xlo=periodic", "heat.bc_xhi=periodic", "heat.pcg_rtol=1e-14"};
        err[l] = run_case(ov, 12);
        snprintf(lab[l], sizeof lab[l], "dt = %.4g s", dt);
        labels[l] = lab[l];
    }
    check_order("Crank-Nicolson in time, 512 cells, 4th-order stencil", err, labels, levels, 2.0);
}

static void test_spreading_gaussian(void **state)
{
    (void)state;
    int levels = validate_mode() ? 4 : 3;
    double err[MAXLEV];
    char lab[MAXLEV][64], nbuf[MAXLEV][32];
    const char *labels[MAXLEV];
    for (int l = 0; l < levels; l++) {
        int n = 32 << l;
        snprintf(nbuf[l], sizeof nbuf[l], "heat.n=%d", n);
        const char *ov[] = {"run.solver=heat", "heat.ndim=2", nbuf[l], "heat.t_end=0.004", "heat.cfl=0.5",
                            "heat.initial=gaussian", "heat.sigma=0.06", "heat.center=0.5 0.5",
                            "heat.bc_xlo=periodic", "heat.bc_xhi=periodic", "heat.bc_ylo=periodic", "heat.bc_yhi=periodic"};
        err[l] = run_case(ov, 12);
        snprintf(lab[l], sizeof lab[l], "2D periodic, %d^2 cells", n);
        labels[l] = lab[l];
    }
    check_order("2nd-order stencil, forward Euler, spreading Gaussian", err, labels, levels, 2.0);
}

static void test_backward_euler_first_order(void **state)
{
    (void)state;
    double err[3];
    char lab[3][64], dtbuf[3][32];
    const char *labels[3];
    for (int l = 0; l < 3; l++) {
        double dt = 0.05 / (8 << l);
        snprintf(dtbuf[l], sizeof dtbuf[l], "heat.dt=%.17g", dt);
        const char *ov[] = {"run.solver=heat", "heat.ndim=1", "heat.n=256", dtbuf[l], "heat.t_end=0.05",
                            "heat.scheme=backward_euler", "heat.order=4", "heat.initial=sine",
                            "heat.bc_xlo=periodic", "heat.bc_xhi=periodic", "heat.pcg_rtol=1e-14"};
        err[l] = run_case(ov, 11);
        snprintf(lab[l], sizeof lab[l], "dt = %.4g s", dt);
        labels[l] = lab[l];
    }
    check_order("backward Euler in time (first order)", err, labels, 3, 1.0);
}

int main(void)
{
    if (hs_driver_declare() != HS_OK || hs_heat_solver.declare() != HS_OK) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_second_order_explicit_sine), cmocka_unit_test(test_fourth_order_crank_nicolson),
        cmocka_unit_test(test_crank_nicolson_time_order), cmocka_unit_test(test_spreading_gaussian),
        cmocka_unit_test(test_backward_euler_first_order),
    };
    return test_run_group("heat convergence", tests, sizeof tests / sizeof tests[0]);
}
