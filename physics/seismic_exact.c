/* Analytic solutions of seismic wave propagation in homogeneous media, for tests and validation. */
#include "physics/seismic_exact.h"

#include <complex.h>
#include <math.h>
#include <stdlib.h>

/* 16-point Gauss-Legendre nodes and weights on [-1, 1], by Newton's iteration on P_16. */
enum { GL_N = 16 };
static double g_x[GL_N], g_w[GL_N];
static int g_ready;

static void gauss_legendre(void)
{
    if (g_ready) return;
    for (int i = 0; i < GL_N; i++) {
        double x = cos(M_PI * (i + 0.75) / (GL_N + 0.5)), dp = 1;
        for (int it = 0; it < 100; it++) {
            double p0 = 1, p1 = x;
            for (int k = 2; k <= GL_N; k++) {
                double pk = ((2 * k - 1) * x * p1 - (k - 1) * p0) / k;
                p0 = p1, p1 = pk;
            }
            dp = GL_N * (x * p1 - p0) / (x * x - 1);
            double dx = p1 / dp;
            x -= dx;
            if (fabs(dx) < 1e-16) break;
        }
        g_x[i] = x;
        g_w[i] = 2 / ((1 - x * x) * dp * dp);
    }
    g_ready = 1;
}

/* The wavelet is below 1e-16 of its peak farther than this from its centre. */
static double support(const hs_wavelet *w) { return 2.2 / w->f0; }

double hs_acoustic_green_3d(const hs_wavelet *w, double c, double r, double t)
{
    return hs_wavelet_value(w, t - r / c) / (4 * M_PI * r);
}

double hs_acoustic_green_2d(const hs_wavelet *w, double c, double r, double t)
{
    gauss_legendre();
    double W = support(w), tr = r / c;
    /* s(t - tr cosh u) is non-negligible for t - tr cosh u in [max(0, delay - W), delay + W] */
    double hi_arg = (t - fmax(0.0, w->delay - W)) / tr, lo_arg = (t - (w->delay + W)) / tr;
    if (hi_arg <= 1) return 0;
    double u0 = lo_arg > 1 ? acosh(lo_arg) : 0, u1 = acosh(hi_arg);
    const int panels = 64;
    double h = (u1 - u0) / panels, sum = 0;
    for (int k = 0; k < panels; k++) {
        double a = u0 + k * h;
        for (int i = 0; i < GL_N; i++) {
            double u = a + 0.5 * h * (g_x[i] + 1);
            sum += g_w[i] * hs_wavelet_value(w, t - tr * cosh(u));
        }
    }
    return sum * 0.5 * h / (2 * M_PI);
}

void hs_elastic_force_velocity_3d(const hs_wavelet *w, double alpha, double beta, double rho, const double dir[3],
                                  const double x[3], double t, int which, double v[3])
{
    double r = sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]), g[3] = {x[0] / r, x[1] / r, x[2] / r};
    double ta = t - r / alpha, tb = t - r / beta;
    double near = (which & 4) ? (r / alpha) * hs_wavelet_value(w, ta) + hs_wavelet_integral(w, ta) - (r / beta) * hs_wavelet_value(w, tb) -
                                    hs_wavelet_integral(w, tb)
                              : 0;
    double fp = (which & 1) ? hs_wavelet_derivative(w, ta) / (alpha * alpha * r) : 0;
    double fs = (which & 2) ? hs_wavelet_derivative(w, tb) / (beta * beta * r) : 0;
    double gd = g[0] * dir[0] + g[1] * dir[1] + g[2] * dir[2], c = 1 / (4 * M_PI * rho);
    for (int i = 0; i < 3; i++)
        v[i] = c * ((3 * g[i] * gd - dir[i]) / (r * r * r) * near + g[i] * gd * fp - (g[i] * gd - dir[i]) * fs);
}

void hs_elastic_force_velocity_2d(const hs_wavelet *w, double alpha, double beta, double rho, const double dir[2],
                                  const double x[2], double t, double v[2])
{
    gauss_legendre();
    double r = hypot(x[0], x[1]), W = support(w);
    v[0] = v[1] = 0;
    /* every term vanishes once t - R/beta is past the wavelet (its integral is 0 there too), and
     * before t - R/alpha reaches it */
    double Rmax = alpha * (t - w->delay + W), Rmin = beta * (t - w->delay - W);
    if (Rmax <= r) return;
    double u0 = Rmin > r ? acosh(Rmin / r) : 0, u1 = acosh(Rmax / r);
    const int panels = 96;
    double h = (u1 - u0) / panels, d3[3] = {dir[0], 0, dir[1]};
    for (int k = 0; k < panels; k++)
        for (int i = 0; i < GL_N; i++) {
            double u = u0 + h * (k + 0.5 * (g_x[i] + 1)), R = r * cosh(u), y = r * sinh(u);
            double p3[3] = {x[0], y, x[1]}, v3[3];
            hs_elastic_force_velocity_3d(w, alpha, beta, rho, d3, p3, t, 7, v3);
            /* dy = R du; the line's two halves alike */
            v[0] += 2 * g_w[i] * 0.5 * h * R * v3[0];
            v[1] += 2 * g_w[i] * 0.5 * h * R * v3[2];
        }
}

/* The wavelet's Laplace transform int s(t) e^(-p t) dt (over all t: the part before 0 is below
 * 1e-8 of the peak for the default delay): from int exp(-a tau^2 - p tau) dtau = sqrt(pi/a) e^(p^2/4a),
 * the Ricker being -1/(2a) and the Gaussian derivative A sqrt(2ae)/(2a) times the second and
 * first derivatives of exp(-a tau^2). */
static double complex wavelet_laplace(const hs_wavelet *w, double complex p)
{
    double pf = M_PI * w->f0, a = w->kind == HS_WAVELET_RICKER ? pf * pf : 2 * pf * pf;
    double complex g = sqrt(M_PI / a) * cexp(p * p / (4 * a) - p * w->delay);
    if (w->kind == HS_WAVELET_RICKER) return -w->amplitude / (2 * a) * p * p * g;
    return w->amplitude * sqrt(2 * a * M_E) / (2 * a) * p * g;
}

void hs_lamb_line_displacement(const hs_wavelet *w, double alpha, double beta, double rho, double F, double x, const double *t,
                               int n, double *uz)
{
    double tmax = 0;
    for (int i = 0; i < n; i++) tmax = fmax(tmax, t[i]);
    /* the time period: 4x the window; eps damps its aliases to 1e-3 */
    double Tw = 4 * (tmax + 1), eps = log(1e3) / Tw, dw = 2 * M_PI / Tw;
    double wmax = 2 * M_PI * 6 * w->f0; /* the wavelet's spectrum is below 1e-12 of its peak there */
    double cr = 0.8 * beta;              /* below the Rayleigh speed: sets the pole's width eps / cR */
    /* the taper keeps every wave number the wavelet excites (10x the Rayleigh wave's at 3 f0) */
    double dk = eps / cr / 8, kc = fmax(100 / fabs(x), 10 * 2 * M_PI * 3 * w->f0 / cr), kmax = 4 * kc;
    double mu = rho * beta * beta;
    int nw = (int)(wmax / dw) + 1, nk = (int)(kmax / dk) + 1;
    double complex *U = calloc((size_t)nw, sizeof *U);
    for (int iw = 0; iw < nw; iw++) {
        double complex s = eps + I * (iw * dw), sum = 0;
        double complex sa = s / alpha, sb = s / beta, sa2 = sa * sa, sb2 = sb * sb;
        for (int ik = 0; ik < nk; ik++) {
            double k = ik * dk, k2 = k * k;
            double complex na = csqrt(k2 + sa2), nb = csqrt(k2 + sb2), g = 2 * k2 + sb2;
            double complex R = g * g - 4 * k2 * na * nb;
            double wt = (ik == 0 ? 0.5 : 1) * exp(-(k / kc) * (k / kc));
            sum += wt * cos(k * x) * na / R;
        }
        U[iw] = (iw == 0 ? 0.5 : 1) * sum * dk * F * wavelet_laplace(w, s) * s * s / (mu * beta * beta);
    }
    for (int i = 0; i < n; i++) {
        double complex acc = 0;
        for (int iw = 0; iw < nw; iw++) acc += U[iw] * cexp(I * (iw * dw) * t[i]);
        /* both signs of k and of w: 2 x 2; 1 / (2 pi)^2 */
        uz[i] = exp(eps * t[i]) / (M_PI * M_PI) * creal(acc) * dw;
    }
    free(U);
}
