/* Exact solutions and initial states of the heat equation, used by the heat solver and its tests. */
#ifndef HS_HEAT_EXACT_H
#define HS_HEAT_EXACT_H

/* A decaying Fourier mode  T = T0 + A * prod_d f_d(pi m_d x_d / L_d) * exp(-alpha k^2 t),
 * k^2 = sum_d (pi m_d / L_d)^2, with f = sin for Dirichlet(T0) walls (m_d = 1, 2, ...) or
 * f = cos(2 ...) for periodic dimensions (wave number 2 pi m_d / L_d).  alpha = k / (rho c). */
typedef struct hs_heat_mode {
    int ndim;
    double length[3];
    int mode[3];
    int periodic[3];
    double t0, amplitude, alpha;
} hs_heat_mode;
double hs_heat_mode_value(const hs_heat_mode *m, const double x[3], double t);
/* Decay rate alpha k^2 of the continuous mode. */
double hs_heat_mode_rate(const hs_heat_mode *m);

/* A Gaussian spreading in free space:  T = T0 + A (s0^2/(s0^2 + 2 alpha t))^(d/2)
 * exp(-|x - c|^2 / (2 (s0^2 + 2 alpha t))).  On a periodic box it is exact up to the images,
 * which are negligible when the box is many widths wide. */
typedef struct hs_heat_gaussian {
    int ndim;
    double center[3], sigma, t0, amplitude, alpha;
} hs_heat_gaussian;
double hs_heat_gaussian_value(const hs_heat_gaussian *g, const double x[3], double t);

#endif
