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

#endif
