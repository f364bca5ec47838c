/* Cole-Hopf solution of viscous Burgers with u0 = -sin(pi x), by Gauss-Hermite quadrature in log space.
 *
 * With theta = exp(-1/(2 nu) int u) the equation becomes the heat equation, and
 *   u(t, x) = - int sin(pi (x - eta)) f(x - eta) G(eta) d eta / int f(x - eta) G(eta) d eta,
 *   f(y) = exp(-cos(pi y) / (2 pi nu)),  G(eta) = exp(-eta^2 / (4 nu t)).
 * Substituting eta = sqrt(4 nu t) s turns G into the Gauss-Hermite weight.  f spans e^{+-1/(2 pi nu)}
 * (e^{+-50} here), so every term is carried as a logarithm and shifted by the largest one before
 * exponentiation: the quotient is unchanged and nothing overflows or loses digits to scaling. */
#include "physics/burgers_exact.h"

#include <math.h>
#include <stdlib.h>

/* Number of eigenvalues below lam of the Hermite Jacobi matrix (zero diagonal, off-diagonal
 * sqrt(k/2)), by the Sturm sequence of its leading minors. */
static int sturm_count(int n, double lam)
{
    int count = 0;
    double q = -lam;
    for (int i = 0;;) {
        if (q < 0) count++;
        if (++i == n) break;
        if (q == 0) q = 1e-300;
        q = -lam - (0.5 * i) / q;
    }
    return count;
}

/* Normalised Hermite functions psi_{n-1}, psi_n at x as mantissas with a common log scale:
 * psi_k(x) = p_k * exp(logscale - x^2 / 2).  The recurrence grows like e^{x^2/2}, hence the scale. */
static void hermite_pair(int n, double x, double *pn1, double *pn, double *logscale)
{
    double pm = 0, p = pow(M_PI, -0.25), ls = 0;
    for (int k = 0; k < n; k++) {
        double next = sqrt(2.0 / (k + 1)) * x * p - sqrt((double)k / (k + 1)) * pm;
        pm = p, p = next;
        if (fabs(p) > 1e150) p *= 1e-150, pm *= 1e-150, ls += 150 * M_LN10;
    }
    *pn1 = pm, *pn = p, *logscale = ls;
}

int hs_gauss_hermite(int n, double *s, double *logw)
{
    if (n < 1 || n > HS_BURGERS_EXACT_MAX_NODES) return 2;
    double bound = sqrt(2.0 * n + 1.0) + 1.0;
    for (int k = 0; k < n; k++) {
        double lo = -bound, hi = bound;
        for (int it = 0; it < 200 && hi - lo > 1e-15 * fmax(1.0, fabs(lo)); it++) {
            double mid = 0.5 * (lo + hi);
            if (sturm_count(n, mid) > k) hi = mid;
            else lo = mid;
        }
        double x = 0.5 * (lo + hi), p1, p, ls;
        for (int it = 0; it < 3; it++) { /* Newton on psi_n: psi_n' = sqrt(2n) psi_{n-1} at a root */
            hermite_pair(n, x, &p1, &p, &ls);
            if (p1 == 0) break;
            double dx = p / (sqrt(2.0 * n) * p1);
            if (!(fabs(dx) < 1e-6)) break;
            x -= dx;
        }
        hermite_pair(n, x, &p1, &p, &ls);
        s[k] = x;
        /* w = 1 / (n h_{n-1}(x)^2) for orthonormal polynomials h; h = psi e^{x^2/2} */
        logw[k] = -x * x - log((double)n) - 2.0 * (log(fabs(p1)) + ls - 0.5 * x * x);
    }
    /* the rule is symmetric: enforce it exactly */
    for (int k = 0; k < n / 2; k++) {
        double a = 0.5 * (s[n - 1 - k] - s[k]), w = 0.5 * (logw[k] + logw[n - 1 - k]);
        s[k] = -a, s[n - 1 - k] = a, logw[k] = logw[n - 1 - k] = w;
    }
    if (n % 2) s[n / 2] = 0.0;
    return 0;
}

/* The weight of the integrands sits where eta^2 / (4 nu t) and cos(pi y) / (2 pi nu) balance, out to
 * |eta| ~ 1.1 sqrt(t) whatever nu, while the rule's outermost node is near sqrt(2 n), i.e. at
 * |eta| ~ sqrt(8 nu t n): a fixed 400 nodes stop reaching it as nu falls (measured against a
 * brute-force trapezoid over |eta| <= 3: 1e-15 at nu = 5e-4, 3e-4 at 2e-4, 0.25 at 1e-4, where
 * u(0.99, -0.02) came out 0.98 instead of 0.73).  nu n >= 0.25 keeps every case at round-off. */
int hs_burgers_exact_nodes(double nu)
{
    double n = ceil(HS_BURGERS_EXACT_REACH / nu);
    if (!(n > HS_BURGERS_EXACT_NODES)) return HS_BURGERS_EXACT_NODES;
    return n > HS_BURGERS_EXACT_MAX_NODES ? HS_BURGERS_EXACT_MAX_NODES + 1 : (int)n;
}

int hs_burgers_exact_create(double nu, int nodes, hs_burgers_exact **out)
{
    *out = NULL;
    if (!(nu > 0)) return 2;
    if (nodes <= 0) nodes = hs_burgers_exact_nodes(nu);
    hs_burgers_exact *ex = calloc(1, sizeof *ex);
    if (!ex) return 1;
    ex->nu = nu, ex->n = nodes;
    ex->s = malloc(nodes * sizeof *ex->s), ex->logw = malloc(nodes * sizeof *ex->logw);
    int rc = (ex->s && ex->logw) ? hs_gauss_hermite(nodes, ex->s, ex->logw) : 1;
    if (rc) {
        hs_burgers_exact_destroy(ex);
        return rc;
    }
    if (nu >= HS_BURGERS_EXACT_NU_SERIES) {
        /* Miller's backward recurrence I_{k-1} = I_{k+1} + (2 k / a) I_k from far beyond the last
         * term, normalised by I_0: the ratios without a Bessel library, and nothing overflows */
        const double a = 1.0 / (2.0 * M_PI * nu);
        enum { top = 2 * HS_BURGERS_EXACT_TERMS + 20 };
        double r[top + 2];
        r[top + 1] = 0, r[top] = 1e-300;
        for (int k = top; k >= 1; k--) {
            r[k - 1] = r[k + 1] + 2.0 * k / a * r[k];
            if (r[k - 1] > 1e250) /* rescale: only the ratios matter */
                for (int q = k - 1; q <= top + 1; q++) r[q] *= 1e-250;
        }
        for (int k = 0; k <= HS_BURGERS_EXACT_TERMS; k++) ex->ratio[k] = r[k] / r[0];
        ex->nk = HS_BURGERS_EXACT_TERMS;
    }
    *out = ex;
    return 0;
}

/* theta / I_0(a) and its first two x-derivatives from the series of the heat solution,
 *   theta = I_0(a) + 2 sum_k (-1)^k I_k(a) exp(-nu k^2 pi^2 t) cos(k pi x),  a = 1 / (2 pi nu),
 * (exp(-a cos(pi y)) expanded in cosines, each damped by the heat kernel), so u = -2 nu theta_x / theta. */
static void series(const hs_burgers_exact *ex, double t, double x, double *th, double *thx, double *thxx)
{
    double s0 = 1, s1 = 0, s2 = 0;
    for (int k = 1; k <= ex->nk; k++) {
        double kp = k * M_PI, c = (k % 2 ? -2.0 : 2.0) * ex->ratio[k] * exp(-ex->nu * kp * kp * t);
        s0 += c * cos(kp * x), s1 -= c * kp * sin(kp * x), s2 -= c * kp * kp * cos(kp * x);
    }
    *th = s0, *thx = s1, *thxx = s2;
}

void hs_burgers_exact_destroy(hs_burgers_exact *ex)
{
    if (!ex) return;
    free(ex->s), free(ex->logw);
    free(ex);
}

/* The quadrature sums D = sum e^E, N = sum sin(pi y) e^E and N' = sum (pi cos + sin^2/(2 nu)) e^E,
 * all scaled by the same e^{-Emax}. */
static void sums(const hs_burgers_exact *ex, double t, double x, double *D, double *N, double *Np)
{
    double c = sqrt(4.0 * ex->nu * t), k = 1.0 / (2.0 * M_PI * ex->nu), emax = -INFINITY;
    for (int i = 0; i < ex->n; i++) {
        double e = ex->logw[i] - k * cos(M_PI * (x - c * ex->s[i]));
        if (e > emax) emax = e;
    }
    double d = 0, nn = 0, np = 0;
    for (int i = 0; i < ex->n; i++) {
        double y = M_PI * (x - c * ex->s[i]), sn = sin(y);
        double w = exp(ex->logw[i] - k * cos(y) - emax);
        d += w, nn += sn * w, np += (M_PI * cos(y) + sn * sn / (2.0 * ex->nu)) * w;
    }
    *D = d, *N = nn, *Np = np;
}

double hs_burgers_exact_u(const hs_burgers_exact *ex, double t, double x)
{
    if (t <= 0) return -sin(M_PI * x);
    if (ex->nk) {
        double th, thx, thxx;
        series(ex, t, x, &th, &thx, &thxx);
        return -2.0 * ex->nu * thx / th;
    }
    double D, N, Np;
    sums(ex, t, x, &D, &N, &Np);
    return -N / D;
}

double hs_burgers_exact_ux(const hs_burgers_exact *ex, double t, double x)
{
    if (t <= 0) return -M_PI * cos(M_PI * x);
    if (ex->nk) {
        double th, thx, thxx;
        series(ex, t, x, &th, &thx, &thxx);
        double u = -2.0 * ex->nu * thx / th;
        return -2.0 * ex->nu * thxx / th + u * u / (2.0 * ex->nu);
    }
    double D, N, Np;
    sums(ex, t, x, &D, &N, &Np);
    double u = -N / D;
    return -Np / D + u * u / (2.0 * ex->nu);
}

int hs_burgers_exact_grid(const hs_burgers_exact *ex, int nx, int nt, double t_max, double *x, double *t, double *u)
{
    if (nx < 2 || nt < 1) return 2;
    for (int j = 0; j < nt; j++) {
        double tj = nt > 1 ? t_max * j / (nt - 1) : 0.0;
        if (t) t[j] = tj;
        for (int i = 0; i < nx; i++) {
            double xi = -1.0 + 2.0 * i / (nx - 1);
            if (x && j == 0) x[i] = xi;
            if (u) u[(size_t)j * nx + i] = hs_burgers_exact_u(ex, tj, xi);
        }
    }
    return 0;
}
