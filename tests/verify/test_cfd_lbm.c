/* The lbm CFD model against exact solutions and published results: plane Poiseuille flow (BGK order 2, TRT exact, D2Q9 and D3Q19,
 * fp32/fp16 storage), and (HS_TEST_VALIDATE=1) the lid-driven cavity at Re 100 against Ghia et al. (1982) and the Schaefer-Turek
 * 2D-1 cylinder at Re 20 (drag and lift coefficients; HS_LBM_ST_D cells per diameter, default 20). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/params.h"
#include "solvers/cfd/cfd.h"
#include "solvers/cfd/lbm.h"
#include "test_util.h"
#include "ghia_ref.h"

int hs_driver_declare(void);

static int validate_mode(void) { return getenv("HS_TEST_VALIDATE") && atoi(getenv("HS_TEST_VALIDATE")); }

static const hs_solver_ops *model(void) { return &hs_cfd_lbm; }

/* The model built from overrides (plus the solver, the model and output.format = none) and run to its end time. */
static void *run_case(const char *const *overrides, int count)
{
    char *ov[40];
    if (count > 36) fail_msg("too many overrides");
    for (int i = 0; i < count; i++) ov[i] = (char *)overrides[i];
    ov[count] = "run.solver=cfd";
    ov[count + 1] = "output.format=none";
    ov[count + 2] = "cfd.model=lbm";
    hs_params *p = NULL;
    TEST_OK(hs_params_load(NULL, count + 3, ov, &p));
    void *state = NULL;
    TEST_OK(model()->create(test_ctx(), p, &state));
    double t, t_end, work;
    int64_t step, taken;
    model()->progress(state, &t, &step, &t_end, &work);
    while (t < t_end) {
        TEST_OK(model()->advance(state, t_end, 1000000, &taken));
        model()->progress(state, &t, &step, &t_end, &work);
    }
    hs_params_free(p);
    return state;
}

/* ---------------------------------------------------------------- Poiseuille */

/* Plane Poiseuille flow between walls at y = 0 and y = 1, driven by a body acceleration g along x
 * (periodic in x, and z in 3D): u(y) = g y (1 - y) / (2 nu), peak 1 with g = 8 nu.  N cells across,
 * tau fixed (diffusive scaling), run to the steady state (30 e-folding times of the slowest mode).
 * Returns the largest error relative to the peak. */
static double poiseuille(int ndim, int N, const char *collision, const char *storage, double tau)
{
    char nb[64], lb[96], tb[48], sb[48], cb[48], fb[48];
    if (ndim == 2) {
        snprintf(nb, sizeof nb, "cfd.n=4 %d", N);
        snprintf(lb, sizeof lb, "cfd.length=%.17g 1", 4.0 / N);
    } else {
        snprintf(nb, sizeof nb, "cfd.n=4 %d 4", N);
        snprintf(lb, sizeof lb, "cfd.length=%.17g 1 %.17g", 4.0 / N, 4.0 / N);
    }
    snprintf(tb, sizeof tb, "lbm.tau=%.17g", tau);
    snprintf(sb, sizeof sb, "lbm.storage=%s", storage);
    snprintf(cb, sizeof cb, "lbm.collision=%s", collision);
    snprintf(fb, sizeof fb, "lbm.force=8");
    const char *ov[] = {ndim == 2 ? "cfd.ndim=2" : "cfd.ndim=3",
                        nb,
                        lb,
                        tb,
                        sb,
                        cb,
                        fb,
                        "lbm.nu=1",
                        "lbm.u_ref=1",
                        ndim == 2 ? "lbm.boundary=periodic periodic wall wall" : "lbm.boundary=periodic periodic wall wall periodic periodic",
                        "cfd.t_end=3.1"};
    void *s = run_case(ov, 11);
    const int64_t cells = 4 * (int64_t)N * (ndim == 3 ? 4 : 1);
    double *u = malloc((size_t)cells * sizeof *u), err = 0;
    TEST_OK(hs_lbm_gather(s, HS_LBM_GATHER_U, u));
    if (test_ctx()->rank == 0)
        for (int64_t c = 0; c < cells; c++) {
            int64_t j = (c / 4) % N;
            double y = (j + 0.5) / N, exact = 4.0 * y * (1 - y);
            err = fmax(err, fabs(u[c] - exact));
        }
    free(u);
    model()->destroy(s);
    return err;
}

static void poiseuille_order(int ndim)
{
    const int levels = 3, N0 = 8;
    double err[3];
    for (int l = 0; l < levels; l++) err[l] = poiseuille(ndim, N0 << l, "bgk", "fp64", 0.9);
    if (test_ctx()->rank == 0) {
        printf("Poiseuille, D%dQ%d BGK tau 0.9, fp64, half-way bounce-back walls:\n", ndim, ndim == 2 ? 9 : 19);
        for (int l = 0; l < levels; l++)
            printf("  N = %3d  max error %.4e of the peak\n", N0 << l, err[l]);
        for (int l = 1; l < levels; l++) {
            double order = log2(err[l - 1] / err[l]);
            printf("  order %d -> %d: %.3f\n", N0 << (l - 1), N0 << l, order);
            /* BGK's half-way wall sits at a tau-dependent distance: exactly parabolic, off by
             * O(dx^2) everywhere, so the order is 2 to round-off of the steady state */
            TEST_LE(fabs(order - 2.0), 0.05);
        }
        TEST_LE(err[0], 0.1);
        fflush(stdout);
    }
}

static void test_poiseuille_d2q9_bgk_order(void **st)
{
    (void)st;
    poiseuille_order(2);
}

static void test_poiseuille_d3q19_bgk_order(void **st)
{
    (void)st;
    poiseuille_order(3);
}

/* TRT with the magic parameter 3/16 places half-way walls exactly: the parabola is exact on any
 * grid (to the steady state's round-off), for D2Q9 and D3Q19. */
static void test_poiseuille_trt_exact(void **st)
{
    (void)st;
    double e2 = poiseuille(2, 8, "trt", "fp64", 0.9), e3 = poiseuille(3, 8, "trt", "fp64", 1.3);
    if (test_ctx()->rank == 0) {
        printf("Poiseuille, TRT magic 3/16, 8 cells across: max error %.2e (D2Q9, tau 0.9), %.2e (D3Q19, tau 1.3)\n", e2, e3);
        TEST_LE(e2, 1e-10);
        TEST_LE(e3, 1e-10);
    }
}

/* Storage precision: fp32 and fp16 (fp32 arithmetic) on the TRT case (exact in fp64), against the
 * exact profile.  What is left is the storage's rounding: the shear stress lives in the
 * non-equilibrium part of the populations, about tau c.grad(u) ~ tau u/N of the stored deviation
 * 3 w c.u ~ u, so a relative rounding eps of the stored numbers costs about eps 3 N / tau of the
 * stress, and as much of the steady velocity.  Tolerance: twice that for fp16 (eps = 2^-11, the
 * storage dominates); eight times for fp32 (eps = 2^-24), whose arithmetic rounds as finely as its
 * storage, a few times per population and step. */
static void test_poiseuille_storage(void **st)
{
    (void)st;
    const int N = 16;
    const double tau = 0.9, bound32 = 8 * ldexp(1, -24) * 3 * N / tau, bound16 = 2 * ldexp(1, -11) * 3 * N / tau;
    double e32 = poiseuille(2, N, "trt", "fp32", tau), e16 = poiseuille(2, N, "trt", "fp16", tau);
    double e3 = poiseuille(3, N, "trt", "fp16", tau);
    if (test_ctx()->rank == 0) {
        printf("Poiseuille, TRT, %d cells across, tau %.1f: max error %.2e (fp32 storage, bound %.1e), %.2e (fp16 storage, bound %.1e), "
               "%.2e (D3Q19 fp16)\n",
               N, tau, e32, bound32, e16, bound16, e3);
        TEST_LE(e32, bound32);
        TEST_LE(e16, bound16);
        TEST_LE(e3, bound16);
    }
}

/* A channel 4 x 1 with a parabolic velocity inlet (peak 1, ramped over 2 s) and a pressure outlet,
 * nu = 0.1 (Re 10), 16 cells across, to t = 20 (twenty diffusion times of the pressure transients
 * over the height): plane Poiseuille flow u = 4 y (1 - y) everywhere, with the pressure falling by
 * 8 nu rho U / H^2 = 0.8 per unit length.  Checked mid-channel against both: the inlet's and the
 * outlet's treatments (and their corners) carry the flow through without distorting it.  What is
 * left is the weakly compressible method's O(Ma^2): the velocity bounce-back imposes the momentum
 * rho0 u_in, and the inlet's density exceeds rho0 by the pressure drop's 3 dp / (dx/dt)^2 = 0.38%
 * (lattice velocity 0.02), which lowers u = j / rho by as much (measured: the profile's shape within
 * 6e-5, its flux 0.38% low).  Tolerances: 0.5% of the peak for the profile, 1% for the gradient. */
static void test_channel_inlet_outlet(void **st)
{
    (void)st;
    const int N = 16, L = 4;
    char nb[32];
    snprintf(nb, sizeof nb, "cfd.n=%d %d", L * N, N);
    const char *ov[] = {"cfd.ndim=2", nb, "cfd.length=4 1", "lbm.nu=0.1", "lbm.u_ref=1", "lbm.u_lattice=0.02", "lbm.collision=trt",
                        "lbm.storage=fp64", "lbm.boundary=inlet outlet wall wall", "lbm.inlet_profile=parabolic", "lbm.ramp_time=2",
                        "cfd.t_end=20"};
    void *s = run_case(ov, 12);
    const size_t cells = (size_t)L * N * N;
    double *u = malloc(cells * sizeof *u), *p = malloc(cells * sizeof *p);
    TEST_OK(hs_lbm_gather(s, HS_LBM_GATHER_U, u));
    TEST_OK(hs_lbm_gather(s, HS_LBM_GATHER_P, p));
    if (test_ctx()->rank == 0) {
        const int nx = L * N, mid = nx / 2, a = nx / 4, b = 3 * nx / 4;
        double err = 0, pa = 0, pb = 0;
        for (int j = 0; j < N; j++) {
            double y = (j + 0.5) / N;
            err = fmax(err, fabs(0.5 * (u[(size_t)j * nx + mid - 1] + u[(size_t)j * nx + mid]) - 4 * y * (1 - y)));
            pa += p[(size_t)j * nx + a] / N, pb += p[(size_t)j * nx + b] / N;
        }
        double grad = (pb - pa) / ((double)(b - a) / N), want = -8 * 0.1 * 1.0 * 1.0;
        printf("channel with inlet and outlet, %d cells across, TRT: mid-channel profile within %.2e of the peak; dp/dx %.5f (exact %.5f, %+.2f%%)\n", N,
               err, grad, want, 100 * (grad / want - 1));
        fflush(stdout);
        TEST_LE(err, 5e-3);
        TEST_LE(fabs(grad / want - 1), 1e-2);
    }
    free(u);
    free(p);
    model()->destroy(s);
}

/* ---------------------------------------------------------------- cavity (validate) */

/* The centre line of an even grid: the mean of the two middle rows. */
static void test_cavity_re100_validate(void **st)
{
    (void)st;
    if (!validate_mode()) skip();
    const int n = 128;
    char nb[32];
    snprintf(nb, sizeof nb, "cfd.n=%d", n);
    /* unit side, lid speed 1, nu = 1/100: Re 100 */
    const char *ov[] = {"cfd.ndim=2", nb, "cfd.length=1", "lbm.nu=0.01", "lbm.u_ref=1", "lbm.u_lattice=0.1", "lbm.collision=trt",
                        "lbm.storage=fp64", "lbm.boundary=wall wall wall lid", "cfd.t_end=40"};
    void *s = run_case(ov, 10);
    double *u = malloc((size_t)n * n * sizeof *u), *v = malloc((size_t)n * n * sizeof *v);
    TEST_OK(hs_lbm_gather(s, HS_LBM_GATHER_U, u));
    TEST_OK(hs_lbm_gather(s, HS_LBM_GATHER_V, v));
    if (test_ctx()->rank == 0) {
        double pos[40], val[40], line[1024], worst_u = 0, worst_v = 0, at_u = 0, at_v = 0;
        int m = ghia_read('u', 0, pos, val, NULL), a = n / 2 - 1, b = n / 2;
        if (m != 17) fail_msg("Ghia table I has %d rows, expected 17", m);
        for (int j = 0; j < n; j++) line[j] = 0.5 * (u[(size_t)j * n + a] + u[(size_t)j * n + b]);
        for (int i = 0; i < m; i++) {
            double d = fabs(ghia_profile_at(line, n, 0.0, 1.0, pos[i]) - val[i]);
            if (d > worst_u) worst_u = d, at_u = pos[i];
        }
        m = ghia_read('v', 0, pos, val, NULL);
        if (m != 17) fail_msg("Ghia table II has %d rows, expected 17", m);
        for (int i = 0; i < n; i++) line[i] = 0.5 * (v[(size_t)a * n + i] + v[(size_t)b * n + i]);
        for (int i = 0; i < m; i++) {
            double d = fabs(ghia_profile_at(line, n, 0.0, 0.0, pos[i]) - val[i]);
            if (d > worst_v) worst_v = d, at_v = pos[i];
        }
        printf("lbm cavity Re 100, %d^2 cells, D2Q9 TRT fp64, t = 40: max |u - Ghia| %.4f at y = %.4f, max |v - Ghia| %.4f at x = %.4f "
               "(tolerance 0.01 of the lid speed)\n",
               n, worst_u, at_u, worst_v, at_v);
        fflush(stdout);
        TEST_LE(worst_u, 0.01);
        TEST_LE(worst_v, 0.01);
    }
    free(u);
    free(v);
    model()->destroy(s);
}

/* ---------------------------------------------------------------- Schaefer-Turek 2D-1 (validate) */

/* Channel 2.2 x 0.41, cylinder of diameter 0.1 at (0.2, 0.2), parabolic inlet of peak 0.3 (mean
 * 0.2), nu = 1e-3: Re = 20.  Reference (Schaefer & Turek 1996, the benchmark's bounds; the
 * converged values of John & Matthies 2001): Cd = 5.5795, Cl = 0.0106.  The inlet speed rises over
 * 6 s; the velocity inlet (a closed end for sound) and the pressure outlet (an open end) still hold
 * a weak quarter-wave acoustic mode of period 4 Lx / c (c = dx / (dt sqrt(3)), 2.03 s here) that
 * decays only by viscosity, so the coefficients are averaged over its last period up to t = 16. */
static void test_cylinder_re20_validate(void **st)
{
    (void)st;
    if (!validate_mode()) skip();
    const char *cells = getenv("HS_LBM_ST_D"); /* cells per diameter, default 20 (HS_LBM_ST_D=40: 8 times the work) */
    int D = cells ? atoi(cells) : 20;
    char nb[64], lb[96];
    snprintf(nb, sizeof nb, "cfd.n=%d %d", 22 * D, (int)lround(4.1 * D));
    snprintf(lb, sizeof lb, "cfd.length=2.2 %.17g", 0.1 / D * lround(4.1 * D));
    const double t_end = 16;
    const char *ov[] = {"cfd.ndim=2", nb, lb, "lbm.nu=1e-3", "lbm.u_ref=0.3", "lbm.u_lattice=0.04", "lbm.collision=trt",
                        "lbm.storage=fp64", "lbm.boundary=inlet outlet wall wall", "lbm.obstacle=cylinder", "lbm.obstacle_center=0.2 0.2",
                        "lbm.obstacle_radius=0.05", "lbm.interpolation=bouzidi", "lbm.ramp_time=6", "cfd.t_end=16"};
    char *args[20];
    for (int i = 0; i < 15; i++) args[i] = (char *)ov[i];
    args[15] = "run.solver=cfd", args[16] = "output.format=none", args[17] = "cfd.model=lbm";
    hs_params *p = NULL;
    TEST_OK(hs_params_load(NULL, 18, args, &p));
    void *s = NULL;
    TEST_OK(model()->create(test_ctx(), p, &s));
    double dx, dt, t, te, work;
    hs_lbm_units(s, &dx, &dt, NULL, NULL, NULL);
    const double period = 4 * 2.2 / (dx / dt / sqrt(3.0));
    int64_t step, taken;
    TEST_OK(model()->advance(s, t_end - period, INT64_MAX, &taken));
    double F[3], cd, cl, sum_cd = 0, sum_cl = 0, last_cd = 0;
    int n = 0;
    model()->progress(s, &t, &step, &te, &work);
    while (t < t_end) {
        TEST_OK(model()->advance(s, t_end, 1, &taken));
        if (!taken) break;
        TEST_OK(hs_lbm_forces(s, F, &cd, &cl));
        sum_cd += cd, sum_cl += cl, last_cd = cd, n++;
        model()->progress(s, &t, &step, &te, &work);
    }
    cd = sum_cd / n, cl = sum_cl / n;
    if (test_ctx()->rank == 0) {
        printf("lbm Schaefer-Turek 2D-1, %d cells per diameter, D2Q9 TRT fp64, Bouzidi: mean over t = %.2f..%.0f (%d steps): Cd %.5f (reference "
               "5.5795, %+.2f%%), Cl %.5f (reference 0.0106, %+.1f%%); last step Cd %.5f\n",
               D, t_end - period, t_end, n, cd, 100 * (cd / 5.5795 - 1), cl, 100 * (cl / 0.0106 - 1), last_cd);
        fflush(stdout);
        TEST_LE(fabs(cd / 5.5795 - 1), 0.01);
        TEST_LE(fabs(cl / 0.0106 - 1), 0.10);
    }
    model()->destroy(s);
    hs_params_free(p);
}

int main(void)
{
    if (hs_driver_declare() != HS_OK || hs_cfd_solver.declare() != HS_OK) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_poiseuille_d2q9_bgk_order), cmocka_unit_test(test_poiseuille_d3q19_bgk_order),
        cmocka_unit_test(test_poiseuille_trt_exact),      cmocka_unit_test(test_poiseuille_storage),
        cmocka_unit_test(test_channel_inlet_outlet),
        cmocka_unit_test(test_cavity_re100_validate),     cmocka_unit_test(test_cylinder_re20_validate),
    };
    return test_run_group("lbm", tests, sizeof tests / sizeof tests[0]);
}
