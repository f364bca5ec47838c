/* The spectral CFD model against exact solutions and laws: the Taylor-Green vortex, the advection term of an analytic multi-mode
 * field, forced Kolmogorov flow, fourth order in time, the energy budget dE/dt = -2 nu Z - 2 mu E, inviscid conservation, the random field's energy and spectrum. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/params.h"
#include "kernels/fft/fft.h"
#include "kernels/memory.h"
#include "physics/ns_exact.h"
#include "solvers/cfd/cfd.h"
#include "solvers/cfd/spectral.h"
#include "test_util.h"

int hs_driver_declare(void);

static const hs_solver_ops *model(void) { return &hs_cfd_spectral; }

/* The model built from overrides (plus the model's name and output.format = none). */
static void *make_case(const char *const *overrides, int count, hs_params **pp)
{
    char *ov[40];
    if (count > 37) fail_msg("too many overrides");
    for (int i = 0; i < count; i++) ov[i] = (char *)overrides[i];
    ov[count] = "run.solver=cfd";
    ov[count + 1] = "output.format=none";
    ov[count + 2] = "cfd.model=spectral";
    hs_params *p = NULL;
    TEST_OK(hs_params_load(NULL, count + 3, ov, &p));
    void *state = NULL;
    TEST_OK(model()->create(test_ctx(), p, &state));
    *pp = p;
    return state;
}

/* Advance to t (the model lands on it exactly). */
static void run_to(void *state, double t)
{
    int64_t taken;
    double now, t_end, work;
    int64_t step;
    model()->progress(state, &now, &step, &t_end, &work);
    while (now < t) {
        TEST_OK(model()->advance(state, t, 1000000, &taken));
        model()->progress(state, &now, &step, &t_end, &work);
    }
}

static void finish_case(void *state, hs_params *p)
{
    model()->destroy(state);
    hs_params_free(p);
}

/* Largest |g - exact| over a gathered field on rank 0, shared with every rank. */
static double shared(double v)
{
    double r[1] = {test_ctx()->rank == 0 ? v : 0};
    TEST_OK(hs_allreduce_sum(test_ctx()->comm, r, 1));
    return r[0];
}

/* ---------------------------------------------------------------- Taylor-Green */

/* The decaying vortex is an exact solution of the discrete equations too (one Fourier mode, a
 * vanishing advection term, an exactly integrated decay): u, v and the vorticity match the exact
 * solution to round-off at 64^2 after ~40 adaptive steps. */
static void test_taylor_green(void **st)
{
    (void)st;
    const int n = 64;
    const double nu = 0.05, t = 1.0;
    const char *ov[] = {"cfd.n=64", "cfd.length=6.283185307179586", "cfd.t_end=1", "spectral.nu=0.05"};
    hs_params *p;
    void *s = make_case(ov, 4, &p);
    run_to(s, t);
    double *g = malloc((size_t)n * n * sizeof *g), err[3] = {0, 0, 0};
    const int which[3] = {HS_SP_U, HS_SP_V, HS_SP_VORT};
    for (int f = 0; f < 3; f++) {
        TEST_OK(hs_spectral_field(s, which[f], g));
        if (test_ctx()->rank != 0) continue;
        double dx = 2 * M_PI / n;
        for (int j = 0; j < n; j++)
            for (int i = 0; i < n; i++) {
                double x = (i + 0.5) * dx, y = (j + 0.5) * dx, vel[3], ex;
                hs_taylor_green(x, y, t, nu, vel, NULL);
                ex = f < 2 ? vel[f] : 2 * sin(x) * sin(y) * exp(-2 * nu * t); /* w = dv/dx - du/dy */
                err[f] = fmax(err[f], fabs(g[(size_t)j * n + i] - ex));
            }
    }
    double ke, ens, div, cfl;
    TEST_OK(hs_spectral_diagnostics(s, &ke, &ens, &div, &cfl));
    /* KE = integral (u^2 + v^2)/2 = pi^2 F^2, enstrophy = integral w^2/2 = 2 pi^2 F^2, F = exp(-2 nu t) */
    double F2 = exp(-4 * nu * t), eke = fabs(ke - M_PI * M_PI * F2) / (M_PI * M_PI * F2), eens = fabs(ens - 2 * M_PI * M_PI * F2) / (2 * M_PI * M_PI * F2);
    if (test_ctx()->rank == 0) {
        printf("Taylor-Green 64^2, nu = %g, t = %g: max error u %.3e, v %.3e, vorticity %.3e; relative error KE %.3e, enstrophy %.3e; "
               "max |div u| %.3e, CFL %.3f\n", nu, t, err[0], err[1], err[2], eke, eens, div, cfl);
        fflush(stdout);
    }
    for (int f = 0; f < 3; f++) TEST_LE(shared(err[f]), 1e-10);
    TEST_LE(eke, 1e-12);
    TEST_LE(eens, 1e-12);
    TEST_LE(div, 1e-12);
    free(g);
    finish_case(s, p);
}

/* ---------------------------------------------------------------- the right-hand side */

/* A band-limited streamfunction psi = sum A sin(a x + b y + phi) on a 2 pi x 4 pi box: its velocity,
 * vorticity and the exact advection term, written out by hand. */
#define NMODES 4
static const struct {
    double A;
    int p, q; /* modes per box along x and y */
    double phi;
} g_modes[NMODES] = {{0.7, 1, 2, 0.3}, {-0.4, 3, -1, 1.1}, {0.25, 2, 5, -0.7}, {0.5, 0, 3, 2.0}};

static void exact_fields(double x, double y, double Lx, double Ly, double *u, double *v, double *w, double *wx, double *wy, double *lapw)
{
    *u = *v = *w = *wx = *wy = *lapw = 0;
    for (int m = 0; m < NMODES; m++) {
        double a = 2 * M_PI * g_modes[m].p / Lx, b = 2 * M_PI * g_modes[m].q / Ly, k2 = a * a + b * b, A = g_modes[m].A;
        double th = a * x + b * y + g_modes[m].phi, s = sin(th), c = cos(th);
        *u += A * b * c;       /* psi_y */
        *v += -A * a * c;      /* -psi_x */
        *w += A * k2 * s;      /* -lap psi */
        *wx += A * k2 * a * c;
        *wy += A * k2 * b * c;
        *lapw += -A * k2 * k2 * s;
    }
}

/* dw/dt = -u.grad w + nu lap w - mu w - F K cos(K y) at the grid points, against the model's
 * pseudo-spectral evaluation (Basdevant's two products, the 2/3 rule, the forcing's phase at the cell
 * centres): the modes are few enough that the products are not truncated, so the two agree to
 * round-off. */
static void test_tendency_exact(void **st)
{
    (void)st;
    const int nx = 48, ny = 64;
    const double Lx = 2 * M_PI, Ly = 4 * M_PI, nu = 0.01, mu = 0.1, F = 0.3;
    const int kf = 2;
    const char *ov[] = {"cfd.n=48 64", "cfd.length=6.283185307179586 12.566370614359172", "spectral.nu=0.01", "spectral.drag=0.1",
                        "spectral.force=0.3", "spectral.force_mode=2"};
    hs_params *p;
    void *s = make_case(ov, 6, &p);
    double *w = malloc((size_t)nx * ny * sizeof *w), *ex = malloc((size_t)nx * ny * sizeof *ex), *g = malloc((size_t)nx * ny * sizeof *g);
    double K = 2 * M_PI * kf / Ly, scale = 0;
    for (int j = 0; j < ny; j++)
        for (int i = 0; i < nx; i++) {
            double x = (i + 0.5) * Lx / nx, y = (j + 0.5) * Ly / ny, u, v, om, wx, wy, lap;
            exact_fields(x, y, Lx, Ly, &u, &v, &om, &wx, &wy, &lap);
            w[(size_t)j * nx + i] = om;
            ex[(size_t)j * nx + i] = -(u * wx + v * wy) + nu * lap - mu * om - F * K * cos(K * y);
            scale = fmax(scale, fabs(u * wx + v * wy));
        }
    TEST_OK(hs_spectral_set_vorticity(s, w));
    TEST_OK(hs_spectral_tendency(s, g));
    double e = 0;
    if (test_ctx()->rank == 0)
        for (size_t k = 0; k < (size_t)nx * ny; k++) e = fmax(e, fabs(g[k] - ex[k]));
    e = shared(e) / scale;
    /* the velocity the model derives from that vorticity */
    double eu = 0, ev = 0;
    TEST_OK(hs_spectral_field(s, HS_SP_U, g));
    for (int f = 0; f < 2; f++) {
        if (f == 1) TEST_OK(hs_spectral_field(s, HS_SP_V, g));
        if (test_ctx()->rank == 0)
            for (int j = 0; j < ny; j++)
                for (int i = 0; i < nx; i++) {
                    double x = (i + 0.5) * Lx / nx, y = (j + 0.5) * Ly / ny, u, v, om, wx, wy, lap;
                    exact_fields(x, y, Lx, Ly, &u, &v, &om, &wx, &wy, &lap);
                    double d = fabs(g[(size_t)j * nx + i] - (f ? v : u));
                    if (f) ev = fmax(ev, d);
                    else eu = fmax(eu, d);
                }
    }
    if (test_ctx()->rank == 0) {
        printf("advection of a 4-mode field on 48 x 64 (2pi x 4pi), with viscosity, drag and forcing: max |dw/dt - exact| = %.3e of "
               "max |u.grad w| = %.3f; velocity from the vorticity: max error u %.3e, v %.3e\n", e, scale, eu, ev);
        fflush(stdout);
    }
    TEST_LE(e, 1e-13);
    TEST_LE(shared(eu), 1e-13);
    TEST_LE(shared(ev), 1e-13);
    free(w), free(ex), free(g);
    finish_case(s, p);
}

/* Kolmogorov flow from rest: the forced shear u = F/(nu K^2) (1 - exp(-nu K^2 t)) sin(K y) carries no
 * advection, so the model must follow it; the error left is IF-RK4's quadrature of the constant
 * forcing (fourth order in dt). */
static void test_kolmogorov(void **st)
{
    (void)st;
    const int n = 32;
    const double nu = 0.05, F = 0.2, t = 2.0, K = 4.0;
    const char *ov[] = {"cfd.n=32", "cfd.length=6.283185307179586", "spectral.nu=0.05", "spectral.force=0.2", "spectral.force_mode=4",
                        "cfd.dt=0.01", "cfd.t_end=2"};
    hs_params *p;
    void *s = make_case(ov, 7, &p);
    double *g = calloc((size_t)n * n, sizeof *g);
    TEST_OK(hs_spectral_set_vorticity(s, g));
    run_to(s, t);
    TEST_OK(hs_spectral_field(s, HS_SP_U, g));
    double e = 0, umax = F / (nu * K * K) * (1 - exp(-nu * K * K * t));
    if (test_ctx()->rank == 0)
        for (int j = 0; j < n; j++)
            for (int i = 0; i < n; i++) e = fmax(e, fabs(g[(size_t)j * n + i] - umax * sin(K * (j + 0.5) * 2 * M_PI / n)));
    e = shared(e) / umax;
    if (test_ctx()->rank == 0) {
        printf("Kolmogorov flow from rest, t = %g, dt = 0.01: max |u - exact| / max u = %.3e\n", t, e);
        fflush(stdout);
    }
    TEST_LE(e, 1e-9);
    free(g);
    finish_case(s, p);
}

/* ---------------------------------------------------------------- time accuracy and budgets */

/* Fourth order in time on a nonlinear viscous flow: self-convergence against a 4x smaller step. */
static void test_time_order(void **st)
{
    (void)st;
    const int n = 32;
    const double dts[4] = {0.04, 0.02, 0.01, 0.0025};
    double *g[4];
    for (int l = 0; l < 4; l++) {
        char db[48];
        snprintf(db, sizeof db, "cfd.dt=%.17g", dts[l]);
        const char *ov[] = {"cfd.n=32", "cfd.length=6.283185307179586", "spectral.initial=turbulence", "spectral.k0=3", "spectral.nu=0.01",
                            "cfd.t_end=0.8", db};
        hs_params *p;
        void *s = make_case(ov, 7, &p);
        run_to(s, 0.8);
        g[l] = malloc((size_t)n * n * sizeof(double));
        TEST_OK(hs_spectral_field(s, HS_SP_VORT, g[l]));
        finish_case(s, p);
    }
    double err[3];
    for (int l = 0; l < 3; l++) err[l] = shared(test_ctx()->rank == 0 ? test_rel_err_f64(g[l], g[3], (size_t)n * n) : 0);
    if (test_ctx()->rank == 0) {
        printf("IF-RK4 on decaying turbulence (32^2, k0 = 3, nu = 0.01, t = 0.8) against dt = 0.0025:\n");
        for (int l = 0; l < 3; l++) printf("  dt = %-6g relative error %.3e  order %s%.3f\n", dts[l], err[l], l ? "" : "-", l ? log2(err[l - 1] / err[l]) : 0.0);
        fflush(stdout);
    }
    for (int l = 1; l < 3; l++) {
        double order = log2(err[l - 1] / err[l]);
        if (fabs(order - 4.0) > 0.3) fail_msg("observed order %.3f between dt = %g and %g, expected 4 +- 0.3", order, dts[l - 1], dts[l]);
    }
    for (int l = 0; l < 4; l++) free(g[l]);
}

/* The energy budget of the truncated equations, dE/dt = -2 nu Z - 2 mu E (advection moves energy
 * between modes and conserves it), checked between two times tau apart with the trapezoid rule. */
static void test_energy_budget(void **st)
{
    (void)st;
    const double nu = 2e-3, mu = 0.05, tau = 0.02;
    const char *ov[] = {"cfd.n=64", "cfd.length=6.283185307179586", "spectral.initial=turbulence", "spectral.k0=6", "spectral.nu=2e-3",
                        "spectral.drag=0.05", "cfd.t_end=1", "cfd.dt=0.002"};
    hs_params *p;
    void *s = make_case(ov, 8, &p);
    run_to(s, 0.5);
    double e1, z1, e2, z2, div, cfl;
    TEST_OK(hs_spectral_diagnostics(s, &e1, &z1, &div, &cfl));
    run_to(s, 0.5 + tau);
    TEST_OK(hs_spectral_diagnostics(s, &e2, &z2, &div, &cfl));
    double rate = (e2 - e1) / tau, law = -2 * nu * 0.5 * (z1 + z2) - 2 * mu * 0.5 * (e1 + e2), rel = fabs(rate - law) / fabs(law);
    if (test_ctx()->rank == 0) {
        printf("energy budget (64^2 turbulence, nu = %g, drag = %g): dE/dt = %.8f, -2 nu Z - 2 mu E = %.8f, relative difference %.2e\n", nu, mu,
               rate, law, rel);
        fflush(stdout);
    }
    TEST_LE(rel, 1e-4);
    finish_case(s, p);
}

/* Without viscosity the truncated (Galerkin) equations conserve energy and enstrophy exactly; IF-RK4
 * then loses a little of both each step (RK4 is dissipative at O(dt^5) on oscillatory modes), so the
 * drift is bounded by the time error and falls with dt.  Stated: at CFL 0.5 (211 steps to t = 2 on
 * 64^2, k0 = 6, about 3 eddy turnovers) the relative drift stays below 2e-6 in energy and 2e-5 in
 * enstrophy (measured 6.9e-7 and 6.0e-6), and halving the step divides it by about 30. */
static void test_inviscid_conservation(void **st)
{
    (void)st;
    double drift[2][2];
    for (int l = 0; l < 2; l++) {
        const char *ov[] = {"cfd.n=64", "cfd.length=6.283185307179586", "spectral.initial=turbulence", "spectral.k0=6", "spectral.nu=0",
                            "cfd.t_end=2", l == 0 ? "cfd.cfl=0.5" : "cfd.cfl=0.25"};
        hs_params *p;
        void *s = make_case(ov, 7, &p);
        double e0, z0, e1, z1, div, cfl;
        TEST_OK(hs_spectral_diagnostics(s, &e0, &z0, &div, &cfl));
        run_to(s, 2.0);
        TEST_OK(hs_spectral_diagnostics(s, &e1, &z1, &div, &cfl));
        drift[l][0] = fabs(e1 - e0) / e0;
        drift[l][1] = fabs(z1 - z0) / z0;
        double t, t_end, work;
        int64_t steps;
        model()->progress(s, &t, &steps, &t_end, &work);
        if (test_ctx()->rank == 0) {
            printf("inviscid 64^2 turbulence to t = 2, CFL %.2f (%lld steps): relative drift of energy %.3e, of enstrophy %.3e\n", l ? 0.25 : 0.5,
                   (long long)steps, drift[l][0], drift[l][1]);
            fflush(stdout);
        }
        finish_case(s, p);
    }
    TEST_LE(drift[0][0], 2e-6);
    TEST_LE(drift[0][1], 2e-5);
    /* halving the step shrinks the drift (by 2^4 to 2^5: the time error dominates it) */
    TEST_LE(drift[1][0], 0.25 * drift[0][0]);
    TEST_LE(drift[1][1], 0.25 * drift[0][1]);
}

/* ---------------------------------------------------------------- the random field */

/* The turbulent start: its energy on the grid (a plain sum of u^2 + v^2, not Parseval) is the one
 * asked for, and its energy-weighted mean wavenumber, measured with a local 2D FFT of u and v, is
 * that of the spectrum k^4 exp(-2 (k/k0)^2): Gamma(3) / Gamma(5/2) k0 / sqrt(2) = 1.0638 k0. */
static void test_random_field(void **st)
{
    (void)st;
    const int n = 96;
    const double k0 = 8, energy = 0.3;
    const char *ov[] = {"cfd.n=96", "cfd.length=6.283185307179586", "spectral.initial=turbulence", "spectral.k0=8", "spectral.energy=0.3"};
    hs_params *p;
    void *s = make_case(ov, 5, &p);
    size_t N = (size_t)n * n;
    double *u = malloc(N * sizeof *u), *v = malloc(N * sizeof *v);
    TEST_OK(hs_spectral_field(s, HS_SP_U, u));
    TEST_OK(hs_spectral_field(s, HS_SP_V, v));
    double e = 0, kmean = 0, div, cfl, ke, ens;
    TEST_OK(hs_spectral_diagnostics(s, &ke, &ens, &div, &cfl));
    if (test_ctx()->rank == 0) {
        for (size_t k = 0; k < N; k++) e += 0.5 * (u[k] * u[k] + v[k] * v[k]);
        e /= (double)N;
        /* |u^|^2 + |v^|^2 per mode from complex 2D transforms on the test's own context, alone */
        hs_ctx self = *test_ctx();
        self.comm = MPI_COMM_SELF, self.rank = 0, self.size = 1, self.owns_mpi = 0;
        hs_fft_plan *plan;
        const int64_t dims[2] = {n, n};
        TEST_OK(hs_fft_plan_create(&self, 2, dims, 1, HS_FFT_C2C, HS_F64, &plan));
        double *hc = calloc(2 * N, sizeof *hc), *spec[2];
        for (int f = 0; f < 2; f++) {
            for (size_t k = 0; k < N; k++) hc[2 * k] = (f ? v : u)[k], hc[2 * k + 1] = 0;
            double *d = test_upload(hc, 2 * N * sizeof(double));
            TEST_OK(hs_fft_execute(plan, HS_FFT_FORWARD, d, d));
            spec[f] = test_download_new(d, 2 * N * sizeof(double));
            hs_mem_free(test_ctx(), d);
        }
        double num = 0, den = 0;
        for (int j = 0; j < n; j++)
            for (int i = 0; i < n; i++) {
                size_t k = (size_t)j * n + i;
                double kx = i <= n / 2 ? i : i - n, ky = j <= n / 2 ? j : j - n, a = 0;
                for (int f = 0; f < 2; f++) a += spec[f][2 * k] * spec[f][2 * k] + spec[f][2 * k + 1] * spec[f][2 * k + 1];
                num += sqrt(kx * kx + ky * ky) * a;
                den += a;
            }
        kmean = num / den;
        hs_fft_plan_destroy(plan);
        free(hc), free(spec[0]), free(spec[1]);
        printf("random field 96^2, k0 = %g, energy %g: grid mean |u|^2/2 = %.15f (Parseval integral / area %.15f); mean wavenumber %.4f, "
               "spectrum's %.4f\n", k0, energy, e, ke / (4 * M_PI * M_PI), kmean, 1.0638460 * k0);
        fflush(stdout);
    }
    TEST_LE(fabs(shared(e) - energy) / energy, 1e-13);
    TEST_LE(fabs(ke / (4 * M_PI * M_PI) - energy) / energy, 1e-13);
    TEST_LE(fabs(shared(kmean) - 1.0638460 * k0) / k0, 0.03);
    free(u), free(v);
    finish_case(s, p);
}

/* A spectral peak far below the lowest mode (k0 = 0.01 modes per box) is a field of the largest
 * scale: all its energy on |k| = 1 of the 2 pi box, so enstrophy / energy = k^2 = 1, and the energy
 * asked for (exp(-(k/k0)^2) underflowed on every mode: a field of zero energy, exit 0). */
static void test_random_field_low_peak(void **st)
{
    (void)st;
    const int n = 24;
    const double energy = 0.3;
    const char *ov[] = {"cfd.n=24", "cfd.length=6.283185307179586", "spectral.initial=turbulence", "spectral.k0=0.01", "spectral.energy=0.3"};
    hs_params *p;
    void *s = make_case(ov, 5, &p);
    size_t N = (size_t)n * n;
    double *u = malloc(N * sizeof *u), *v = malloc(N * sizeof *v);
    TEST_OK(hs_spectral_field(s, HS_SP_U, u));
    TEST_OK(hs_spectral_field(s, HS_SP_V, v));
    double e = 0, div, cfl, ke, ens;
    TEST_OK(hs_spectral_diagnostics(s, &ke, &ens, &div, &cfl));
    if (test_ctx()->rank == 0) {
        for (size_t k = 0; k < N; k++) e += 0.5 * (u[k] * u[k] + v[k] * v[k]);
        e /= (double)N;
        printf("random field 24^2, k0 = 0.01, energy %g: grid mean |u|^2/2 = %.15f; enstrophy / energy = %.15f (|k| = 1: 1)\n", energy, e,
               ke > 0 ? ens / ke : 0.0);
        fflush(stdout);
    }
    TEST_LE(fabs(shared(e) - energy) / energy, 1e-13);
    TEST_LE(fabs(ens / ke - 1.0), 1e-13);
    free(u), free(v);
    finish_case(s, p);
}

int main(void)
{
    if (hs_driver_declare() != HS_OK || hs_cfd_solver.declare() != HS_OK) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_taylor_green),   cmocka_unit_test(test_tendency_exact),        cmocka_unit_test(test_kolmogorov),
        cmocka_unit_test(test_time_order),     cmocka_unit_test(test_energy_budget),         cmocka_unit_test(test_inviscid_conservation),
        cmocka_unit_test(test_random_field),   cmocka_unit_test(test_random_field_low_peak),
    };
    return test_run_group("spectral", tests, sizeof tests / sizeof tests[0]);
}
