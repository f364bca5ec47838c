/* Residuals of 1D + time PDEs for physics-informed training, written once for the CPU and the GPU.
 * Each PDE is  r(u, u_t, u_x, u_xx) = 0  on x in [-1, 1], t in [0, 1] with an initial profile and
 * Dirichlet walls.  Adding one: a case in hs_pde1d_residual (r and its partial derivatives) and a
 * row in the table of physics/pde1d.c (name, coefficient, u(0, x), wall values). */
#ifndef HS_PDE1D_H
#define HS_PDE1D_H

#include <math.h>

#include "kernels/hd.h"

typedef enum { HS_PDE_BURGERS = 0, HS_PDE_HEAT = 1, HS_PDE_ALLEN_CAHN = 2, HS_PDE_COUNT } hs_pde1d_kind;

/* r and dr[] = dr/d(u, u_t, u_x, u_xx) at one point; c is the PDE's coefficient (viscosity,
 * diffusivity). */
HS_HD double hs_pde1d_residual(int kind, double c, double u, double ut, double ux, double uxx, double dr[4])
{
    switch (kind) {
    case HS_PDE_BURGERS: /* u_t + u u_x - nu u_xx */
        dr[0] = ux, dr[1] = 1.0, dr[2] = u, dr[3] = -c;
        return ut + u * ux - c * uxx;
    case HS_PDE_HEAT: /* u_t - kappa u_xx */
        dr[0] = 0.0, dr[1] = 1.0, dr[2] = 0.0, dr[3] = -c;
        return ut - c * uxx;
    default: /* Allen-Cahn: u_t - c u_xx + 5 u^3 - 5 u */
        dr[0] = 15.0 * u * u - 5.0, dr[1] = 1.0, dr[2] = 0.0, dr[3] = -c;
        return ut - c * uxx + 5.0 * u * u * u - 5.0 * u;
    }
}

/* Host-side description of each PDE. */
typedef struct hs_pde1d_info {
    const char *name;        /* value of [pinn] pde */
    const char *equation;    /* for file titles */
    double default_coef;     /* used when the coefficient is not given */
    double (*initial)(double x);
    double wall_lo, wall_hi; /* u(t, -1), u(t, 1) */
    /* exact solution when known (NULL otherwise): u(t, x) for coefficient c */
    double (*exact)(double c, double t, double x);
} hs_pde1d_info;

/* The table entry of a kind, or by name (NULL when unknown). */
const hs_pde1d_info *hs_pde1d_get(int kind);
const hs_pde1d_info *hs_pde1d_find(const char *name, int *kind);
#define HS_PDE1D_CHOICES "burgers|heat|allen_cahn"

#endif
