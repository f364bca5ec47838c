/* Analytic solutions of seismic wave propagation in homogeneous media (acoustic Green's functions convolved with a wavelet), for tests and validation. */
#ifndef HS_SEISMIC_EXACT_H
#define HS_SEISMIC_EXACT_H

#include "physics/seismic_wavelet.h"

/* Pressure at distance r > 0 (m) and time t (s) of p_tt = c^2 (lap p + s(t) delta(x)) in an unbounded
 * homogeneous medium of speed c (m/s), quiet before t = 0, i.e. the Green's function of
 * (1/c^2) d_tt - lap convolved with the wavelet s:
 *   3D: G = delta(t - r/c) / (4 pi r)                    p = s(t - r/c) / (4 pi r)
 *   2D: G = H(t - r/c) / (2 pi sqrt(t^2 - r^2/c^2))      p = (1/2pi) int_0^inf s(t - (r/c) cosh u) du
 * The 2D convolution is computed with the substitution tau = (r/c) cosh u, which removes the
 * inverse-square-root singularity at the wave front, by composite Gauss-Legendre quadrature over
 * the part of u where the wavelet is not negligible (relative accuracy about 1e-10). */
double hs_acoustic_green_3d(const hs_wavelet *w, double c, double r, double t);
double hs_acoustic_green_2d(const hs_wavelet *w, double c, double r, double t);

/* Particle velocity v (m/s, 3 components) at x (m, relative to the source) and time t of an
 * unbounded homogeneous isotropic elastic medium (P speed alpha, S speed beta, density rho) under
 * a point force s(t) dir (N; rho dv/dt = div sigma + s(t) dir delta(x)): the time derivative of
 * Aki & Richards (2002) eq. 4.23 in closed form,
 *   v_i = 1/(4 pi rho) [ (3 g_i g_j - d_ij) / r^3 N(t) + g_i g_j / (alpha^2 r) s'(t - r/alpha)
 *                        - (g_i g_j - d_ij) / (beta^2 r) s'(t - r/beta) ] dir_j,
 *   N(t) = int_{r/alpha}^{r/beta} tau s'(t - tau) dtau
 *        = (r/alpha) s(t - r/alpha) + S(t - r/alpha) - (r/beta) s(t - r/beta) - S(t - r/beta),
 * g = x / r, S the integral of s (hs_wavelet_integral).  `which` selects the terms: 1 the P far
 * field, 2 the S far field, 4 the near field (7: all). */
void hs_elastic_force_velocity_3d(const hs_wavelet *w, double alpha, double beta, double rho, const double dir[3],
                                  const double x[3], double t, int which, double v[3]);

/* The same in 2D plane strain (a line force along y of s(t) N/m, fields independent of y): v in the
 * x-z plane (v[0] = vx, v[1] = vz) at (x[0], x[1]) = (x, z) relative to the line, for a force in that
 * plane (dir[0], dir[1]): the 3D solution integrated along the line, y = r sinh u, by composite
 * Gauss-Legendre quadrature over the part where the wavelet is not negligible (about 1e-9 relative). */
void hs_elastic_force_velocity_2d(const hs_wavelet *w, double alpha, double beta, double rho, const double dir[2],
                                  const double x[2], double t, double v[2]);

/* Lamb's problem in 2D: a vertical line force F s(t) (N/m, pointing down, +z) at x = 0 on the free
 * surface z = 0 of a homogeneous half-space (P speed alpha, S speed beta, density rho).  The vertical
 * surface displacement u_z(x, t) (m, +z down) at the n times t[], by the discrete wavenumber method
 * (Bouchon & Aki 1977): the exact transform-domain solution
 *   u_z(k, s) = F s^(s) s^2 nu_a / (mu beta^2 R),  nu_c = sqrt(k^2 + s^2 / c^2),
 *   R = (2 k^2 + s^2 / beta^2)^2 - 4 k^2 nu_a nu_b   (the Rayleigh function),
 * with s^ the wavelet's closed-form Laplace transform, inverted along s = eps + i w (eps damps the
 * Rayleigh pole off the integration path and the time aliases; the result is multiplied back by
 * exp(eps t)) by trapezoidal sums in k and w.  The sums' spacing is fine enough for the aliases
 * (sources 2 pi / dk apart, a period 2 pi / dw) to stay below 1e-3 of the signal; the k sum is
 * tapered by exp(-(k / kc)^2), kc ten times the Rayleigh wave number at 3 f0 and at least 100 / x
 * (a smoothing far below the wavelengths). */
void hs_lamb_line_displacement(const hs_wavelet *w, double alpha, double beta, double rho, double F, double x, const double *t,
                               int n, double *uz);

#endif
