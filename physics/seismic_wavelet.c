/* Seismic source wavelets: Ricker and Gaussian derivative, their derivative, integral and band limit. */
#include "physics/seismic_wavelet.h"

#include <math.h>

static double rate(const hs_wavelet *w)
{
    double pf = M_PI * w->f0;
    return w->kind == HS_WAVELET_RICKER ? pf * pf : 2 * pf * pf;
}

/* Far from the centre e^(-a tau^2) underflows to 0 while a tau^2 overflows: the polynomial factor
 * was inf and the product NaN (seismic.delay = 1e300 filled the field with NaN).  The wavelet is 0
 * there, as every finite product with e = 0 already was. */
double hs_wavelet_value(const hs_wavelet *w, double t)
{
    if (t < 0) return 0;
    double a = rate(w), tau = t - w->delay, e = exp(-a * tau * tau);
    if (e == 0) return 0;
    if (w->kind == HS_WAVELET_RICKER) return w->amplitude * (1 - 2 * a * tau * tau) * e;
    return -w->amplitude * sqrt(2 * a * M_E) * tau * e;
}

double hs_wavelet_derivative(const hs_wavelet *w, double t)
{
    if (t < 0) return 0;
    double a = rate(w), tau = t - w->delay, e = exp(-a * tau * tau);
    if (e == 0) return 0; /* as in hs_wavelet_value */
    if (w->kind == HS_WAVELET_RICKER) return w->amplitude * 2 * a * tau * (2 * a * tau * tau - 3) * e;
    return -w->amplitude * sqrt(2 * a * M_E) * (1 - 2 * a * tau * tau) * e;
}

/* An antiderivative of s (switched on or not). */
static double antiderivative(const hs_wavelet *w, double t)
{
    double a = rate(w), tau = t - w->delay, e = exp(-a * tau * tau);
    /* d/dtau [tau e^(-a tau^2)] = (1 - 2 a tau^2) e^(-a tau^2); d/dtau e^(-a tau^2) = -2 a tau e^(-a tau^2) */
    if (w->kind == HS_WAVELET_RICKER) return w->amplitude * tau * e;
    return w->amplitude * sqrt(2 * a * M_E) / (2 * a) * e;
}

double hs_wavelet_integral(const hs_wavelet *w, double t)
{
    return t < 0 ? 0 : antiderivative(w, t) - antiderivative(w, 0);
}

/* Amplitude spectrum relative to its peak at x = f / f0 (>= 1):
 *   Ricker x^2 exp(1 - x^2); Gaussian derivative x exp((1 - x^2) / 2). */
static double spectrum(int kind, double x)
{
    return kind == HS_WAVELET_RICKER ? x * x * exp(1 - x * x) : x * exp(0.5 * (1 - x * x));
}

double hs_wavelet_fmax(const hs_wavelet *w)
{
    double lo = 1, hi = 10;
    for (int it = 0; it < 100; it++) { /* the spectrum falls monotonically above its peak */
        double mid = 0.5 * (lo + hi);
        if (spectrum(w->kind, mid) > 0.01) lo = mid;
        else hi = mid;
    }
    return hi * w->f0;
}

double hs_wavelet_default_delay(double f0) { return 1.5 / f0; }
