/* Training points of the PINN: Latin-hypercube sampling, initial/boundary draws, worst-k selection. */
#include "solvers/pinn/pinn_points.h"

#include <stdlib.h>

#include "kernels/error.h"
#include "kernels/rng/rng.h"

/* Fisher-Yates shuffle of 0..n-1. */
static void permutation(int64_t *p, int64_t n, hs_rng *s)
{
    for (int64_t i = 0; i < n; i++) p[i] = i;
    for (int64_t i = n - 1; i > 0; i--) {
        int64_t j = (int64_t)hs_rng_below(s, (uint64_t)(i + 1)), t = p[i];
        p[i] = p[j], p[j] = t;
    }
}

int hs_pinn_lhs(int64_t n, uint64_t seed, double **pts, int64_t extra)
{
    *pts = malloc((size_t)(2 * (n + extra) + 1) * sizeof(double));
    int64_t *perm = malloc((size_t)(n + 1) * sizeof *perm);
    if (!*pts || !perm) {
        free(perm);
        return HS_FAIL(HS_ERR_RUNTIME, "out of host memory for %lld points", (long long)n);
    }
    hs_rng s;
    hs_rng_seed(&s, seed, HS_PINN_RNG_LHS);
    /* each dimension: one point in each of n strata, strata matched across dimensions at random */
    for (int d = 0; d < 2; d++) {
        permutation(perm, n, &s);
        double lo = d == 0 ? 0.0 : -1.0, len = d == 0 ? 1.0 : 2.0;
        for (int64_t i = 0; i < n; i++) (*pts)[2 * i + d] = lo + len * (perm[i] + hs_rng_uniform(&s)) / (double)n;
    }
    free(perm);
    return HS_OK;
}

int hs_pinn_data_points(const hs_pde1d_info *pde, int64_t n, int nx, int nt, double t_max, uint64_t seed, double **pts,
                        double **u)
{
    int64_t pool = nx + 2 * (int64_t)nt;
    if (n > pool)
        return hs_input_error("pinn", 0, "n_boundary", "%lld initial/boundary points requested but the reference grid's "
                              "edges hold %lld (%d at t = 0 and %d on each wall)", (long long)n, (long long)pool, nx, nt);
    double *P = malloc((size_t)(2 * pool) * sizeof *P), *U = malloc((size_t)pool * sizeof *U);
    int64_t *perm = malloc((size_t)pool * sizeof *perm);
    *pts = malloc((size_t)(2 * n + 1) * sizeof **pts), *u = malloc((size_t)(n + 1) * sizeof **u);
    if (!P || !U || !perm || !*pts || !*u) {
        free(P), free(U), free(perm);
        return HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
    }
    for (int i = 0; i < nx; i++) {
        double x = -1.0 + 2.0 * i / (nx - 1);
        P[2 * i] = 0.0, P[2 * i + 1] = x, U[i] = pde->initial(x);
    }
    for (int j = 0; j < nt; j++) {
        double t = nt > 1 ? t_max * j / (nt - 1) : 0.0;
        int64_t a = nx + j, b = nx + nt + j;
        P[2 * a] = t, P[2 * a + 1] = -1.0, U[a] = pde->wall_lo;
        P[2 * b] = t, P[2 * b + 1] = 1.0, U[b] = pde->wall_hi;
    }
    hs_rng s;
    hs_rng_seed(&s, seed, HS_PINN_RNG_DATA);
    permutation(perm, pool, &s);
    for (int64_t k = 0; k < n; k++) {
        int64_t i = perm[k];
        (*pts)[2 * k] = P[2 * i], (*pts)[2 * k + 1] = P[2 * i + 1], (*u)[k] = U[i];
    }
    free(P), free(U), free(perm);
    return HS_OK;
}

static const double *g_sort_values;

static int by_value_desc(const void *a, const void *b)
{
    int64_t i = *(const int64_t *)a, j = *(const int64_t *)b;
    double vi = g_sort_values[i], vj = g_sort_values[j];
    if (vi != vj) return vi > vj ? -1 : 1;
    return (i > j) - (i < j);
}

int hs_pinn_top_k(const double *v, int64_t n, int64_t k, int64_t **idx)
{
    int64_t *all = malloc((size_t)(n + 1) * sizeof *all);
    if (!all) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
    for (int64_t i = 0; i < n; i++) all[i] = i;
    g_sort_values = v;
    qsort(all, (size_t)n, sizeof *all, by_value_desc);
    if (k > n) k = n;
    *idx = all; /* the first k entries */
    return HS_OK;
}
