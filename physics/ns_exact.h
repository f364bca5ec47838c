/* Exact solutions of the incompressible Navier-Stokes equations used to verify the CFD solver. */
#ifndef HS_NS_EXACT_H
#define HS_NS_EXACT_H

/* The decaying Taylor-Green vortex on the periodic square [0, 2 pi)^2 (any z: w = 0),
 * kinematic viscosity nu:  u = sin x cos y F,  v = -cos x sin y F,  p = (cos 2x + cos 2y) F^2 / 4,
 * F = exp(-2 nu t).  vel[3] receives u, v, w. */
void hs_taylor_green(double x, double y, double t, double nu, double vel[3], double *p);

/* Plane Poiseuille flow between walls y = 0 and y = H driven by a body force f along x:
 * u(y) = f y (H - y) / (2 nu). */
double hs_poiseuille_force(double y, double H, double f, double nu);

/* The same profile given by its mean velocity U over the channel: u(y) = 6 U s (1 - s), s = y/H. */
double hs_poiseuille_mean(double y, double H, double U);

#endif
