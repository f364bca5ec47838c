/* The table of 1D + time PDEs known to the PINN: names, coefficients, initial and wall values. */
#include "physics/pde1d.h"

#include <string.h>

static double minus_sin(double x) { return -sin(M_PI * x); }
static double x2_cos(double x) { return x * x * cos(M_PI * x); }
static double heat_exact(double c, double t, double x) { return -sin(M_PI * x) * exp(-c * M_PI * M_PI * t); }

static const hs_pde1d_info g_pdes[HS_PDE_COUNT] = {
    {"burgers", "u_t + u u_x = nu u_xx", 0.01 / M_PI, minus_sin, 0.0, 0.0, NULL},
    {"heat", "u_t = kappa u_xx", 0.1, minus_sin, 0.0, 0.0, heat_exact},
    {"allen_cahn", "u_t = c u_xx - 5 u^3 + 5 u", 1e-4, x2_cos, -1.0, -1.0, NULL},
};

const hs_pde1d_info *hs_pde1d_get(int kind) { return kind >= 0 && kind < HS_PDE_COUNT ? &g_pdes[kind] : NULL; }

const hs_pde1d_info *hs_pde1d_find(const char *name, int *kind)
{
    for (int k = 0; k < HS_PDE_COUNT; k++)
        if (name && !strcmp(name, g_pdes[k].name)) {
            if (kind) *kind = k;
            return &g_pdes[k];
        }
    return NULL;
}
