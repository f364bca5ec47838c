/* The shallow_water CFD model against independent references: an inertia-gravity wave at the frequency of the
 * discrete C-grid + RK4 dispersion relation, a lake at rest that stays at rest, mass conserved to round-off, and
 * energy and potential enstrophy conserved up to the time error (which falls at RK4's order). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/params.h"
#include "kernels/comm/comm.h"
#include "solvers/cfd/cfd.h"
#include "solvers/cfd/sw.h"
#include "test_util.h"

int hs_driver_declare(void);

/* The bound on |relative energy change| over inputs/sw_jet.ini (measured: see README). */
#define SW_JET_ENERGY_BOUND 1e-10

static const hs_solver_ops *model(void) { return &hs_cfd_shallow_water; }

/* The long cases run with HS_TEST_VALIDATE=1 (make validate; HS_VALIDATE=1 as the navier_stokes test reads it). */
static int validate_mode(void)
{
    const char *a = getenv("HS_TEST_VALIDATE"), *b = getenv("HS_VALIDATE");
    return (a && atoi(a)) || (b && atoi(b));
}

/* The model built from overrides (plus the solver, the model and output.format = none). */
static void *make(const char *const *overrides, int count, hs_params **pp)
{
    char *ov[40];
    if (count > 37) fail_msg("too many overrides");
    for (int i = 0; i < count; i++) ov[i] = (char *)overrides[i];
    ov[count] = "run.solver=cfd";
    ov[count + 1] = "cfd.model=shallow_water";
    ov[count + 2] = "output.format=none";
    hs_params *p = NULL;
    TEST_OK(hs_params_load(NULL, count + 3, ov, &p));
    void *state = NULL;
    TEST_OK(model()->create(test_ctx(), p, &state));
    *pp = p;
    return state;
}

static void run_to_end(void *state)
{
    double t, t_end, work;
    int64_t step, taken;
    model()->progress(state, &t, &step, &t_end, &work);
    while (t < t_end) {
        TEST_OK(model()->advance(state, t_end, 1000000, &taken));
        model()->progress(state, &t, &step, &t_end, &work);
    }
}

static void finish(void *state, hs_params *p)
{
    model()->destroy(state);
    hs_params_free(p);
}

/* ---------------------------------------------------------------- the inertia-gravity wave */

/* The discrete dispersion relation, derived independently of the model.  Linearised about rest on
 * an f-plane, the Arakawa-Lamb terms reduce to f times the four-point average of the other velocity
 * component (q = f/H uniform, the epsilon and phi terms vanish), so for a mode exp(i(kx + ly - wt))
 * on the C-grid
 *     -i w u = f ct v - i g K h,   -i w v = -f ct u - i g L h,   -i w h = -i H (K u + L v),
 *     K = 2 sin(k dx/2)/dx,  L = 2 sin(l dy/2)/dy,  ct = cos(k dx/2) cos(l dy/2),
 * whose non-zero frequencies are w_s^2 = f^2 ct^2 + g H (K^2 + L^2).  Classic RK4 advances a mode of
 * d/dt = -i w_s by G(z) = 1 - i z - z^2/2 + i z^3/6 + z^4/24, z = w_s dt, so the scheme's wave turns
 * at w_d = -arg G / dt (and |G| < 1 damps it slightly). */
static double discrete_omega(double f, double g, double H, double k, double l, double dx, double dy, double dt, double *w_semi)
{
    double K = 2 * sin(0.5 * k * dx) / dx, L = 2 * sin(0.5 * l * dy) / dy, ct = cos(0.5 * k * dx) * cos(0.5 * l * dy);
    double ws = sqrt(f * f * ct * ct + g * H * (K * K + L * L)), z = ws * dt;
    *w_semi = ws;
    return atan2(z - z * z * z / 6, 1 - z * z / 2 + z * z * z * z / 24) / dt;
}

/* Frequency (per unit time) of samples x[0..n) dt apart by linear prediction: a damped sinusoid obeys
 * x[m+1] = c1 x[m] - c2 x[m-1] with c2 = r^2, c1 = 2 r cos(w dt); c1 and c2 by least squares. */
static double prony_omega(const double *x, int n, double dt)
{
    double a11 = 0, a12 = 0, a22 = 0, b1 = 0, b2 = 0;
    for (int m = 1; m + 1 < n; m++) {
        a11 += x[m] * x[m], a12 += -x[m] * x[m - 1], a22 += x[m - 1] * x[m - 1];
        b1 += x[m] * x[m + 1], b2 += -x[m - 1] * x[m + 1];
    }
    double det = a11 * a22 - a12 * a12, c1 = (b1 * a22 - a12 * b2) / det, c2 = (a11 * b2 - a12 * b1) / det;
    return acos(c1 / (2 * sqrt(c2))) / dt;
}

/* Frequency from the zero crossings (linearly interpolated): half a period between neighbours. */
static double crossing_omega(const double *x, int n, double dt, int *count)
{
    double first = -1, last = -1;
    *count = 0;
    for (int m = 0; m + 1 < n; m++)
        if ((x[m] < 0) != (x[m + 1] < 0)) {
            double t = (m + x[m] / (x[m] - x[m + 1])) * dt;
            if (first < 0) first = t;
            last = t;
            (*count)++;
        }
    return *count > 1 ? M_PI * (*count - 1) / (last - first) : 0;
}

static void test_wave_dispersion(void **st)
{
    (void)st;
    /* 24 x 20 cells on the unit square (dx != dy), mode (2, 1), f = 8: the C-grid's frequency is 1.8%
     * below the continuous one, so the 0.5% test tells the two apart */
    const int nx = 24, ny = 20, m = 2, mm = 1, steps = 400;
    const double f = 8, g = 1, H = 1, dx = 1.0 / nx, dy = 1.0 / ny, k = 2 * M_PI * m, l = 2 * M_PI * mm;
    double ws;
    /* the step: 0.7 of the stable one (z = w_s dt about 0.4: RK4's phase error is 1e-4 of w) */
    double dt = 0.7 * 2.78 / (2 * sqrt(g * H * (1 / (dx * dx) + 1 / (dy * dy))) + f);
    double wd = discrete_omega(f, g, H, k, l, dx, dy, dt, &ws);
    double wc = sqrt(f * f + g * H * (k * k + l * l));
    char sdt[64], send[64];
    snprintf(sdt, sizeof sdt, "cfd.dt=%.17g", dt);
    snprintf(send, sizeof send, "cfd.t_end=%.17g", dt * (steps + 0.5));
    const char *ov[] = {"cfd.n=24 20", "cfd.length=1 1", "shallow_water.case=wave", "shallow_water.wave_mode=2 1", "shallow_water.f0=8",
                        "shallow_water.wave_amplitude=1e-5", sdt, send};
    hs_params *p;
    void *s = make(ov, 8, &p);
    double *x = malloc((steps + 1) * sizeof *x);
    for (int n = 0; n <= steps; n++) {
        double h;
        TEST_OK(hs_sw_probe(s, 3, 5, &h));
        x[n] = h - H;
        int64_t taken;
        if (n < steps) TEST_OK(model()->advance(s, 1e300, 1, &taken));
    }
    assert_true(fabs(hs_sw_dt(s) - dt) <= 1e-15 * dt);
    int crossings;
    double wp = prony_omega(x, steps + 1, dt), wz = crossing_omega(x, steps + 1, dt, &crossings);
    if (test_ctx()->rank == 0) {
        printf("inertia-gravity wave, mode (%d, %d), %dx%d cells, f = %g, dt = %.4g (w_s dt = %.3f), %d steps, %d zero crossings:\n", m, mm, nx, ny, f,
               dt, ws * dt, steps, crossings);
        printf("  predicted: C-grid + RK4 %.8f, C-grid semi-discrete %.8f, continuous %.8f\n", wd, ws, wc);
        printf("  measured:  linear prediction %.8f (%.2e), zero crossings %.8f (%.2e); continuous is %.2e away\n", wp, wp / wd - 1, wz,
               wz / wd - 1, wc / wd - 1);
        fflush(stdout);
    }
    TEST_LE(fabs(wp / wd - 1), 0.005);
    TEST_LE(fabs(wz / wd - 1), 0.005);
    assert_true(fabs(wc / wd - 1) > 0.01); /* the test tells the discrete relation from the continuous one */
    free(x);
    finish(s, p);
}

/* ---------------------------------------------------------------- the lake at rest */

static double max_abs_host(const double *x, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++) m = fmax(m, fabs(x[i]));
    return m;
}

static void lake_case(const char *title, const char *const *extra, int nextra, int nx, int ny)
{
    const char *ov[16] = {"shallow_water.case=lake_at_rest", "cfd.t_end=2", "cfd.cfl=0.9"};
    char nb[64];
    snprintf(nb, sizeof nb, "cfd.n=%d %d", nx, ny);
    ov[3] = nb;
    for (int i = 0; i < nextra; i++) ov[4 + i] = extra[i];
    hs_params *p;
    void *s = make(ov, 4 + nextra, &p);
    run_to_end(s);
    double t, t_end, work;
    int64_t steps;
    model()->progress(s, &t, &steps, &t_end, &work);
    const double g = hs_params_real(p, "shallow_water.g"), H = hs_params_real(p, "shallow_water.depth"), c = sqrt(g * H);
    const int walls = hs_params_enum(p, "shallow_water.y_boundary") == 1;
    size_t n = (size_t)nx * (size_t)(ny + 1);
    double *a = calloc(n, sizeof *a), *b = calloc(n, sizeof *b);
    double umax = 0, vmax = 0, emax = 0;
    TEST_OK(hs_sw_gather(s, HS_SW_GATHER_U_FACE, a));
    umax = max_abs_host(a, (size_t)nx * ny);
    TEST_OK(hs_sw_gather(s, HS_SW_GATHER_V_FACE, a));
    vmax = max_abs_host(a, (size_t)nx * (ny + walls));
    TEST_OK(hs_sw_gather(s, HS_SW_GATHER_H, a));
    TEST_OK(hs_sw_gather(s, HS_SW_GATHER_B, b));
    double bmax = max_abs_host(b, (size_t)nx * ny);
    for (size_t i = 0; i < (size_t)nx * ny; i++) emax = fmax(emax, fabs(a[i] + b[i] - H));
    double r[3] = {umax / c, vmax / c, emax / H};
    TEST_OK(hs_allreduce_max(test_ctx()->comm, r, 3)); /* rank 0's values */
    if (test_ctx()->rank == 0) {
        printf("lake at rest, %s: %lld steps, bottom up to %.2f H: max |u|/sqrt(gH) %.2e, max |v|/sqrt(gH) %.2e, max |h + b - H|/H %.2e\n",
               title, (long long)steps, bmax / H, r[0], r[1], r[2]);
        fflush(stdout);
    }
    assert_true(bmax > 0.1 * H);
    TEST_LE(r[0], 1e-14);
    TEST_LE(r[1], 1e-14);
    TEST_LE(r[2], 1e-14);
    free(a), free(b);
    finish(s, p);
}

static void test_lake_at_rest(void **st)
{
    (void)st;
    const char *per[] = {"shallow_water.topography=random", "shallow_water.topo_height=0.6", "shallow_water.f0=3", "cfd.length=1 0.8",
                         "shallow_water.nu4=1e-7"};
    lake_case("periodic, random bottom, hyperviscosity", per, 5, 32, 24);
    const char *chan[] = {"shallow_water.topography=bump", "shallow_water.topo_height=0.7", "shallow_water.topo_width=0.15",
                          "shallow_water.y_boundary=walls", "shallow_water.beta=20", "shallow_water.nu=1e-3"};
    lake_case("beta channel, bump, viscosity", chan, 6, 30, 26);
}

/* ---------------------------------------------------------------- conservation */

/* Relative changes of mass, energy and potential enstrophy over a periodic jet run of fixed dt. */
static void jet_drift(const char *dt, double drift[3], int64_t *steps)
{
    const char *ov[] = {"cfd.n=48 48", "cfd.length=1 1", "shallow_water.case=jet", "shallow_water.f0=6", "shallow_water.jet_width=0.08",
                        "shallow_water.perturbation=0.02", "shallow_water.topography=random", "shallow_water.topo_height=0.1", "cfd.t_end=1", dt};
    hs_params *p;
    void *s = make(ov, 10, &p);
    double t0[3], t1[3];
    TEST_OK(hs_sw_totals(s, &t0[0], &t0[1], &t0[2]));
    run_to_end(s);
    TEST_OK(hs_sw_totals(s, &t1[0], &t1[1], &t1[2]));
    for (int i = 0; i < 3; i++) drift[i] = (t1[i] - t0[i]) / t0[i];
    double t, t_end, work;
    model()->progress(s, &t, steps, &t_end, &work);
    finish(s, p);
}

static void test_conservation(void **st)
{
    (void)st;
    /* the stable step of this jet is about 0.0061: dt 0.005 and 0.0025 */
    double d1[3], d2[3];
    int64_t n1, n2;
    jet_drift("cfd.dt=0.005", d1, &n1);
    jet_drift("cfd.dt=0.0025", d2, &n2);
    double oe = log2(d1[1] / d2[1]), oz = log2(d1[2] / d2[2]);
    if (test_ctx()->rank == 0) {
        printf("periodic jet over random bottom, 48^2, t = 1, relative change of mass / energy / potential enstrophy:\n");
        printf("  dt 0.005 (%lld steps): %+.2e / %+.3e / %+.3e\n", (long long)n1, d1[0], d1[1], d1[2]);
        printf("  dt 0.0025 (%lld steps): %+.2e / %+.3e / %+.3e   order of the energy and enstrophy drifts: %.2f, %.2f\n", (long long)n2,
               d2[0], d2[1], d2[2], oe, oz);
        fflush(stdout);
    }
    /* mass: the flux form telescopes; only the rounding of each cell's update is left */
    TEST_LE(fabs(d1[0]), 1e-14);
    TEST_LE(fabs(d2[0]), 1e-14);
    /* energy and potential enstrophy: conserved by the spatial scheme, so what drifts is RK4's error,
     * which falls at least as dt^4 */
    TEST_LE(fabs(d1[1]), 1e-7);
    TEST_LE(fabs(d1[2]), 1e-9);
    assert_true(oe > 3.7);
}

/* The acceptance run: inputs/sw_jet.ini itself (512 x 256, ~7200 steps to t = 12: seconds on a GPU,
 * a quarter of an hour on two cores).  The jets must have rolled up (|v| of the order of U), mass
 * must hold to round-off and the energy drift stay within the bound stated in README. */
static void test_jet_input_validate(void **st)
{
    (void)st;
    if (!validate_mode()) skip();
    char *ov[] = {"output.format=none"};
    hs_params *p = NULL;
    TEST_OK(hs_params_load("inputs/sw_jet.ini", 1, ov, &p));
    void *s = NULL;
    TEST_OK(model()->create(test_ctx(), p, &s));
    double t0[3], t1[3];
    TEST_OK(hs_sw_totals(s, &t0[0], &t0[1], &t0[2]));
    run_to_end(s);
    TEST_OK(hs_sw_totals(s, &t1[0], &t1[1], &t1[2]));
    int64_t n[2] = {0, 0};
    assert_int_equal(hs_params_int_list(p, "cfd.n", n, 2), 2);
    const int64_t nx = n[0], ny = n[1];
    double *v = calloc((size_t)(nx * ny), sizeof *v), vmax[1];
    TEST_OK(hs_sw_gather(s, HS_SW_GATHER_V, v));
    vmax[0] = test_ctx()->rank == 0 ? max_abs_host(v, (size_t)(nx * ny)) : 0;
    TEST_OK(hs_allreduce_max(test_ctx()->comm, vmax, 1));
    double d[3];
    for (int i = 0; i < 3; i++) d[i] = (t1[i] - t0[i]) / t0[i];
    double t, t_end, work;
    int64_t steps;
    model()->progress(s, &t, &steps, &t_end, &work);
    if (test_ctx()->rank == 0) {
        printf("inputs/sw_jet.ini: %lld steps to t = %g; max |v| %.3f (U = 0.3); relative change of mass %.2e, energy %.3e, potential "
               "enstrophy %.3e\n", (long long)steps, t, vmax[0], d[0], d[1], d[2]);
        fflush(stdout);
    }
    assert_true(vmax[0] > 0.05);
    TEST_LE(fabs(d[0]), 1e-13);
    TEST_LE(fabs(d[1]), SW_JET_ENERGY_BOUND);
    free(v);
    finish(s, p);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_wave_dispersion),
    cmocka_unit_test(test_lake_at_rest),
    cmocka_unit_test(test_conservation),
    cmocka_unit_test(test_jet_input_validate),
};

int main(void)
{
    if (hs_driver_declare() != HS_OK || hs_cfd_solver.declare() != HS_OK) return 1;
    return test_run_group("shallow_water", tests, sizeof tests / sizeof tests[0]);
}
