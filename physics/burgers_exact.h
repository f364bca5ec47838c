/* Exact solution of the viscous Burgers equation u_t + u u_x = nu u_xx on [-1, 1] with
 * u(0, x) = -sin(pi x), by the Cole-Hopf transform evaluated with Gauss-Hermite quadrature. */
#ifndef HS_BURGERS_EXACT_H
#define HS_BURGERS_EXACT_H

#include <math.h>

/* Gauss-Hermite rule for the weight exp(-s^2): n nodes s[] (ascending) and the logarithms of
 * their weights (log, so that rules of several hundred nodes neither overflow nor underflow).
 * Nodes by Sturm-sequence bisection on the Jacobi matrix, polished by Newton steps on the
 * normalised Hermite functions.  Returns 0, or 2 for n < 1 or n > HS_BURGERS_EXACT_MAX_NODES (2000). */
int hs_gauss_hermite(int n, double *s, double *logw);

/* From this viscosity up (a = 1 / (2 pi nu) <= 2) u comes from the Fourier series of the heat
 * solution, HS_BURGERS_EXACT_TERMS terms (I_k(2) / I_0(2) < 1e-40 beyond): the Gaussian spans many
 * periods of f there and the rule aliased (u(0.65, x) = 0.997 at nu = 500, where u ~ e^-3200). */
#define HS_BURGERS_EXACT_NU_SERIES (1.0 / (4.0 * M_PI))
#define HS_BURGERS_EXACT_TERMS 40

typedef struct hs_burgers_exact {
    double nu;
    int n;          /* quadrature nodes */
    double *s, *logw;
    int nk;         /* nu >= HS_BURGERS_EXACT_NU_SERIES: Fourier terms used instead of the rule */
    double ratio[HS_BURGERS_EXACT_TERMS + 2]; /* I_k(a) / I_0(a), a = 1 / (2 pi nu), k <= nk */
} hs_burgers_exact;

/* Default number of nodes: enough for 1e-12 relative accuracy of u for nu >= 0.01/pi, t <= 1. */
#define HS_BURGERS_EXACT_NODES 400
/* nu x nodes the rule needs (see hs_burgers_exact_nodes) */
#define HS_BURGERS_EXACT_REACH 0.25
/* The most nodes hs_gauss_hermite makes, and the smallest viscosity they serve (t <= 1): 1.25e-4. */
#define HS_BURGERS_EXACT_MAX_NODES 2000
#define HS_BURGERS_EXACT_NU_MIN (HS_BURGERS_EXACT_REACH / HS_BURGERS_EXACT_MAX_NODES)

/* The nodes a viscosity needs: the default, or more for nu below 0.25 / 400 = 6.25e-4 (0.25 / nu;
 * above HS_BURGERS_EXACT_MAX_NODES when nu < HS_BURGERS_EXACT_NU_MIN). */
int hs_burgers_exact_nodes(double nu);

/* Set up the rule (nodes <= 0 picks hs_burgers_exact_nodes(nu)).  Returns 0, 2 for nu <= 0, bad
 * nodes or nu below HS_BURGERS_EXACT_NU_MIN with nodes <= 0, 1 when out of memory.  Not collective. */
int hs_burgers_exact_create(double nu, int nodes, hs_burgers_exact **ex);
void hs_burgers_exact_destroy(hs_burgers_exact *ex);

/* u(t, x) and du/dx (t, x), for t >= 0 (t = 0 gives the initial condition exactly). */
double hs_burgers_exact_u(const hs_burgers_exact *ex, double t, double x);
double hs_burgers_exact_ux(const hs_burgers_exact *ex, double t, double x);

/* The reference grid of the literature: x_i = -1 + 2 i / (nx - 1), t_j = 0.99 j / (nt - 1) for
 * nx = 256, nt = 100 (any sizes accepted); u[j * nx + i] = u(t_j, x_i).  x, t may be NULL. */
int hs_burgers_exact_grid(const hs_burgers_exact *ex, int nx, int nt, double t_max, double *x, double *t, double *u);

#endif
