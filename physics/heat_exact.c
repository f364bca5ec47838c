/* Exact solutions of the heat equation (decaying Fourier modes, a spreading Gaussian). */
#include "physics/heat_exact.h"

#include <math.h>

static double wavenumber(const hs_heat_mode *m, int d)
{
    return (m->periodic[d] ? 2.0 : 1.0) * M_PI * m->mode[d] / m->length[d];
}

double hs_heat_mode_rate(const hs_heat_mode *m)
{
    double k2 = 0;
    for (int d = 0; d < m->ndim; d++) k2 += wavenumber(m, d) * wavenumber(m, d);
    return m->alpha * k2;
}

double hs_heat_mode_value(const hs_heat_mode *m, const double x[3], double t)
{
    double v = m->amplitude * exp(-hs_heat_mode_rate(m) * t);
    for (int d = 0; d < m->ndim; d++) v *= m->periodic[d] ? cos(wavenumber(m, d) * x[d]) : sin(wavenumber(m, d) * x[d]);
    return m->t0 + v;
}

double hs_heat_gaussian_value(const hs_heat_gaussian *g, const double x[3], double t)
{
    double s2 = g->sigma * g->sigma + 2.0 * g->alpha * t, r2 = 0;
    for (int d = 0; d < g->ndim; d++) r2 += (x[d] - g->center[d]) * (x[d] - g->center[d]);
    return g->t0 + g->amplitude * pow(g->sigma * g->sigma / s2, 0.5 * g->ndim) * exp(-r2 / (2 * s2));
}
