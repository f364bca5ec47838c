/* Analytic solutions of seismic wave propagation in homogeneous media, for tests and validation. */
#include "physics/seismic_exact.h"

#include <math.h>

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
