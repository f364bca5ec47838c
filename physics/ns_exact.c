/* Exact solutions of the incompressible Navier-Stokes equations: Taylor-Green vortex, plane Poiseuille flow. */
#include "physics/ns_exact.h"

#include <math.h>

void hs_taylor_green(double x, double y, double t, double nu, double vel[3], double *p)
{
    double F = exp(-2.0 * nu * t);
    vel[0] = sin(x) * cos(y) * F;
    vel[1] = -cos(x) * sin(y) * F;
    vel[2] = 0.0;
    if (p) *p = 0.25 * (cos(2.0 * x) + cos(2.0 * y)) * F * F;
}

double hs_poiseuille_force(double y, double H, double f, double nu) { return f * y * (H - y) / (2.0 * nu); }

double hs_poiseuille_mean(double y, double H, double U)
{
    double s = y / H;
    return 6.0 * U * s * (1.0 - s);
}
