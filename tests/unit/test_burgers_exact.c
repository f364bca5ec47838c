/* Cole-Hopf Burgers solution: Gauss-Hermite moments, the initial condition, agreement with an
 * independent adaptive quadrature, the known steepest slope at x = 0, and the reference grid. */
#include <math.h>
#include <stdlib.h>

#include "physics/burgers_exact.h"
#include "test_util.h"

static const double NU = 0.01 / M_PI;

static void test_gauss_hermite(void **s)
{
    (void)s;
    const int ns[] = {1, 2, 5, 20, 101, 400};
    for (int q = 0; q < 6; q++) {
        int n = ns[q];
        double *x = malloc(n * 8), *lw = malloc(n * 8);
        assert_int_equal(hs_gauss_hermite(n, x, lw), 0);
        long double m0 = 0, m2 = 0, m4 = 0;
        for (int i = 0; i < n; i++) {
            long double w = expl(lw[i]);
            m0 += w, m2 += w * x[i] * x[i], m4 += w * powl(x[i], 4);
            if (i) assert_true(x[i] > x[i - 1]);
        }
        double sp = sqrt(M_PI);
        TEST_LE(fabs((double)m0 / sp - 1), 1e-13);
        if (n >= 2) TEST_LE(fabs((double)m2 / (sp / 2) - 1), 1e-13);
        if (n >= 3) TEST_LE(fabs((double)m4 / (3 * sp / 4) - 1), 1e-13);
        if (n == 2) TEST_LE(fabs(x[1] - sqrt(0.5)), 1e-15);
        free(x), free(lw);
    }
    double x[1], lw[1];
    assert_int_equal(hs_gauss_hermite(0, x, lw), 2);
}

/* ---- independent reference: adaptive Simpson in eta, integrand scaled by its maximum */

typedef struct { double t, x, shift; int which; } integrand;

static double phi(const integrand *I, double eta)
{
    return -eta * eta / (4 * NU * I->t) - cos(M_PI * (I->x - eta)) / (2 * M_PI * NU);
}

static double g(const integrand *I, double eta)
{
    double w = exp(phi(I, eta) - I->shift);
    return I->which ? sin(M_PI * (I->x - eta)) * w : w;
}

static double simpson(const integrand *I, double a, double b, double fa, double fm, double fb, double whole,
                      double tol, int depth)
{
    double m = 0.5 * (a + b), lm = 0.5 * (a + m), rm = 0.5 * (m + b);
    double flm = g(I, lm), frm = g(I, rm);
    double left = (m - a) / 6 * (fa + 4 * flm + fm), right = (b - m) / 6 * (fm + 4 * frm + fb);
    double diff = left + right - whole;
    if (depth <= 0 || fabs(diff) <= 15 * tol) return left + right + diff / 15;
    return simpson(I, a, m, fa, flm, fm, left, tol / 2, depth - 1) + simpson(I, m, b, fm, frm, fb, right, tol / 2, depth - 1);
}

static double reference_u(double t, double x)
{
    /* beyond L the Gaussian factor is below e^-200, enough to outweigh the e^{+-50} of f */
    double L = sqrt(4 * NU * t * 200.0);
    integrand I = {t, x, -INFINITY, 0};
    for (int i = 0; i <= 20000; i++) I.shift = fmax(I.shift, phi(&I, -L + 2 * L * i / 20000));
    double r[2];
    for (int w = 0; w < 2; w++) {
        I.which = w;
        /* split into panels so that a narrow peak cannot fall between the first samples */
        r[w] = 0;
        int panels = 64;
        for (int p = 0; p < panels; p++) {
            double a = -L + 2 * L * p / panels, b = a + 2 * L / panels, fa = g(&I, a), fb = g(&I, b), fm = g(&I, 0.5 * (a + b));
            r[w] += simpson(&I, a, b, fa, fm, fb, (b - a) / 6 * (fa + 4 * fm + fb), 1e-15, 40);
        }
    }
    return -r[1] / r[0];
}

static void test_against_adaptive(void **s)
{
    (void)s;
    hs_burgers_exact *ex;
    assert_int_equal(hs_burgers_exact_create(NU, 0, &ex), 0);
    const double ts[] = {0.01, 0.1, 1 / M_PI, 0.5, 0.75, 0.99};
    const double xs[] = {-0.95, -0.5, -0.1, -0.01, -0.002, 0.0, 0.003, 0.02, 0.3, 0.8};
    double worst = 0;
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 10; j++) {
            double a = hs_burgers_exact_u(ex, ts[i], xs[j]), b = reference_u(ts[i], xs[j]);
            worst = fmax(worst, fabs(a - b));
        }
    print_message("max |u_GH - u_adaptive| over 60 points = %.2e\n", worst);
    TEST_LE(worst, 1e-11);
    hs_burgers_exact_destroy(ex);
}

static void test_initial_condition(void **s)
{
    (void)s;
    hs_burgers_exact *ex;
    assert_int_equal(hs_burgers_exact_create(NU, 0, &ex), 0);
    double worst = 0, worst_small = 0;
    for (int i = 0; i < 256; i++) {
        double x = -1 + 2.0 * i / 255;
        worst = fmax(worst, fabs(hs_burgers_exact_u(ex, 0.0, x) + sin(M_PI * x)));
        /* after a short time the solution has moved by O(t): u_t = -u u_x + nu u_xx at t = 0 */
        double t = 1e-6, u0 = -sin(M_PI * x), ut = -u0 * (-M_PI * cos(M_PI * x)) + NU * M_PI * M_PI * sin(M_PI * x);
        worst_small = fmax(worst_small, fabs(hs_burgers_exact_u(ex, t, x) - (u0 + t * ut)));
    }
    assert_true(worst == 0.0);
    TEST_LE(worst_small, 1e-10);
    hs_burgers_exact_destroy(ex);
}

/* Basdevant et al. (1986): the steepest slope at x = 0 is |u_x| = 152.00516, reached at t = 1.6037/pi. */
static void test_max_slope(void **s)
{
    (void)s;
    hs_burgers_exact *ex;
    assert_int_equal(hs_burgers_exact_create(NU, 0, &ex), 0);
    double a = 0.45, b = 0.57, gr = (sqrt(5.0) - 1) / 2;
    for (int it = 0; it < 80; it++) {
        double c = b - gr * (b - a), d = a + gr * (b - a);
        if (hs_burgers_exact_ux(ex, c, 0.0) < hs_burgers_exact_ux(ex, d, 0.0)) b = d;
        else a = c;
    }
    double tmax = 0.5 * (a + b), slope = -hs_burgers_exact_ux(ex, tmax, 0.0);
    double fd = -(hs_burgers_exact_u(ex, tmax, 1e-6) - hs_burgers_exact_u(ex, tmax, -1e-6)) / 2e-6;
    print_message("max |u_x(t, 0)| = %.6f at t = %.6f = %.5f/pi (finite difference %.6f)\n", slope, tmax, tmax * M_PI, fd);
    TEST_LE(fabs(slope - 152.00516), 1e-4);
    TEST_LE(fabs(tmax * M_PI - 1.6037), 1e-3);
    TEST_LE(fabs(fd - slope) / slope, 1e-7);
    hs_burgers_exact_destroy(ex);
}

/* The 256 x 100 grid: finite, bounded, odd in x, zero at the walls, the front at x = 0 steep but
 * resolved (a monotone descent through the origin at t = 0.99), and stable under more nodes. */
static void test_grid(void **s)
{
    (void)s;
    hs_burgers_exact *ex, *ex2;
    assert_int_equal(hs_burgers_exact_create(NU, 0, &ex), 0);
    assert_int_equal(hs_burgers_exact_create(NU, 800, &ex2), 0);
    int nx = 256, nt = 100;
    double *x = malloc(nx * 8), *t = malloc(nt * 8), *u = malloc((size_t)nx * nt * 8);
    assert_int_equal(hs_burgers_exact_grid(ex, nx, nt, 0.99, x, t, u), 0);
    assert_true(x[0] == -1.0 && x[nx - 1] == 1.0 && t[0] == 0.0 && fabs(t[nt - 1] - 0.99) < 1e-15);
    double odd = 0, wall = 0, conv = 0;
    for (int j = 0; j < nt; j++) {
        for (int i = 0; i < nx; i++) {
            double v = u[j * nx + i];
            assert_true(isfinite(v) && fabs(v) <= 1.0 + 1e-12);
            odd = fmax(odd, fabs(v + u[j * nx + nx - 1 - i]));
        }
        wall = fmax(wall, fmax(fabs(u[j * nx]), fabs(u[j * nx + nx - 1])));
        if (j % 11 == 0)
            for (int i = 0; i < nx; i += 5) conv = fmax(conv, fabs(u[j * nx + i] - hs_burgers_exact_u(ex2, t[j], x[i])));
    }
    TEST_LE(odd, 1e-12);
    TEST_LE(wall, 1e-12);
    TEST_LE(conv, 1e-12);
    /* at t = 0.99 the two grid points next to x = 0 (x = -+1/255) sit inside the front */
    double *last = u + (size_t)(nt - 1) * nx;
    print_message("u(0.99, x=%.5f) = %.10f\n", x[127], last[127]);
    assert_true(last[127] > 0.3 && last[127] < 0.33 && fabs(last[127] + last[128]) < 1e-12);
    /* on [-1, 0] the profile rises to one maximum just left of the front, then falls to 0 */
    int imax = 0;
    for (int i = 0; i < nx / 2; i++)
        if (last[i] > last[imax]) imax = i;
    for (int i = 0; i < imax; i++) assert_true(last[i + 1] >= last[i]);
    for (int i = imax; i + 1 < nx / 2; i++) assert_true(last[i + 1] <= last[i]);
    print_message("t = 0.99: max u = %.6f at x = %.5f\n", last[imax], x[imax]);
    free(x), free(t), free(u);
    hs_burgers_exact_destroy(ex), hs_burgers_exact_destroy(ex2);
    assert_int_equal(hs_burgers_exact_create(0.0, 0, &ex), 2);
}

/* Brute-force Cole-Hopf at viscosity nu: the trapezoid rule over |eta| <= 3 (the integrands'
 * weight lies within |eta| < 1.2 sqrt(t) at any nu), each exponent shifted by the largest. */
static double trapezoid_u(double nu, double t, double x)
{
    const int m = 200000;
    double h = 6.0 / m, emax = -INFINITY, num = 0, den = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int k = 0; k <= m; k++) {
            double eta = -3.0 + h * k, y = M_PI * (x - eta);
            double e = -eta * eta / (4 * nu * t) - cos(y) / (2 * M_PI * nu);
            if (pass == 0) emax = fmax(emax, e);
            else num += sin(y) * exp(e - emax), den += exp(e - emax);
        }
    return -num / den;
}

/* Small viscosities: the default rule grows with 1 / nu (400 nodes stopped reaching the weight:
 * u(0.99, -0.02) was 0.98 instead of 0.73 at nu = 1e-4, 3e-4 off at 2e-4), and below
 * HS_BURGERS_EXACT_NU_MIN the set-up refuses rather than return a wrong solution. */
static void test_small_viscosity(void **s)
{
    (void)s;
    const double nus[] = {2e-4, 1.3e-4}, xs[] = {-0.6, -0.0196, 0.05, 0.3}, ts[] = {0.2, 0.99};
    for (int q = 0; q < 2; q++) {
        hs_burgers_exact *ex;
        assert_int_equal(hs_burgers_exact_create(nus[q], 0, &ex), 0);
        double worst = 0;
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 4; j++) worst = fmax(worst, fabs(hs_burgers_exact_u(ex, ts[i], xs[j]) - trapezoid_u(nus[q], ts[i], xs[j])));
        print_message("nu = %g, %d nodes: max |u - trapezoid| = %.2e\n", nus[q], ex->n, worst);
        TEST_LE(worst, 1e-10);
        hs_burgers_exact_destroy(ex);
    }
    hs_burgers_exact *ex;
    assert_int_equal(hs_burgers_exact_create(0.9 * HS_BURGERS_EXACT_NU_MIN, 0, &ex), 2);
    assert_int_equal(hs_burgers_exact_nodes(NU), HS_BURGERS_EXACT_NODES);
}

/* Large viscosities: the Gaussian of the heat kernel then spans many periods of f, and 400
 * Gauss-Hermite nodes aliased (u(0.65, x) came out 0.997 at nu = 500 and 0.9996 at nu = 100, where u
 * decays as e^(-nu pi^2 t)).  Against the trapezoid rule over the Gaussian's whole width. */
static double wide_trapezoid_u(double nu, double t, double x)
{
    const int m = 400000;
    const double L = fmax(3.0, 12.0 * sqrt(4 * nu * t)), h = 2 * L / m;
    double emax = -INFINITY, num = 0, den = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int k = 0; k <= m; k++) {
            double eta = -L + h * k, y = M_PI * (x - eta);
            double e = -eta * eta / (4 * nu * t) - cos(y) / (2 * M_PI * nu);
            if (pass == 0) emax = fmax(emax, e);
            else num += sin(y) * exp(e - emax), den += exp(e - emax);
        }
    return -num / den;
}

static void test_large_viscosity(void **s)
{
    (void)s;
    const double nus[] = {0.05, 0.2, 3, 100, 500, 1e4}, xs[] = {-0.6, 0.05, 0.3}, ts[] = {0.01, 0.3, 0.65, 0.99};
    for (int q = 0; q < 6; q++) {
        hs_burgers_exact *ex;
        assert_int_equal(hs_burgers_exact_create(nus[q], 0, &ex), 0);
        double worst = 0, worst_ux = 0;
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 3; j++) {
                worst = fmax(worst, fabs(hs_burgers_exact_u(ex, ts[i], xs[j]) - wide_trapezoid_u(nus[q], ts[i], xs[j])));
                const double dx = 1e-5, fd = (hs_burgers_exact_u(ex, ts[i], xs[j] + dx) - hs_burgers_exact_u(ex, ts[i], xs[j] - dx)) / (2 * dx);
                worst_ux = fmax(worst_ux, fabs(hs_burgers_exact_ux(ex, ts[i], xs[j]) - fd));
            }
        print_message("nu = %g: max |u - trapezoid| = %.2e, max |u_x - central difference| = %.2e\n", nus[q], worst, worst_ux);
        TEST_LE(worst, 1e-12);
        TEST_LE(worst_ux, 1e-6);
        hs_burgers_exact_destroy(ex);
    }
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_gauss_hermite), cmocka_unit_test(test_initial_condition),
    cmocka_unit_test(test_against_adaptive), cmocka_unit_test(test_max_slope), cmocka_unit_test(test_grid),
    cmocka_unit_test(test_small_viscosity), cmocka_unit_test(test_large_viscosity),
};

TEST_MAIN("burgers_exact", tests)
