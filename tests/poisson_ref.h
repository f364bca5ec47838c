/* Host references for the Poisson solver tests: a naive Laplacian with ghost rules and a dense LU solve, independent of kernels/fft. */
#ifndef HS_TEST_POISSON_REF_H
#define HS_TEST_POISSON_REF_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "kernels/fft/poisson.h"

/* The neighbour value of cell i (0..n-1) at offset dir (-1 or +1) along a line of n values
 * `stride` apart, with the ghost rules of poisson.h at the two faces. */
static double ref_neighbour(const double *p, int64_t i, int dir, int64_t n, int64_t stride, const hs_poisson_bc bc[2])
{
    int64_t j = i + dir;
    if (j >= 0 && j < n) return p[(j - i) * stride];
    hs_poisson_bc b = bc[dir > 0];
    if (b == HS_POISSON_PERIODIC) return p[(dir > 0 ? -(n - 1) : n - 1) * stride];
    return b == HS_POISSON_NEUMANN ? p[0] : -p[0];
}

/* out = L p on the whole grid (x fastest), unused dimensions of size 1. */
static void ref_laplacian(int ndim, const int64_t n[3], const hs_poisson_bc bc[3][2], const double dx[3],
                          const double *p, double *out)
{
    const int64_t stride[3] = {1, n[0], n[0] * n[1]};
    for (int64_t k = 0; k < n[2]; k++)
        for (int64_t j = 0; j < n[1]; j++)
            for (int64_t i = 0; i < n[0]; i++) {
                int64_t c = i + stride[1] * j + stride[2] * k, at[3] = {i, j, k};
                double s = 0.0;
                for (int d = 0; d < ndim; d++) {
                    double lo = ref_neighbour(p + c, at[d], -1, n[d], stride[d], bc[d]);
                    double hi = ref_neighbour(p + c, at[d], +1, n[d], stride[d], bc[d]);
                    s += (lo - 2.0 * p[c] + hi) / (dx[d] * dx[d]);
                }
                out[c] = s;
            }
}

/* 1 when L is singular: no Dirichlet face. */
static int ref_singular(int ndim, const hs_poisson_bc bc[3][2])
{
    for (int d = 0; d < ndim; d++)
        if (bc[d][0] == HS_POISSON_DIRICHLET || bc[d][1] == HS_POISSON_DIRICHLET) return 0;
    return 1;
}

static double ref_mean(const double *x, int64_t N)
{
    long double s = 0;
    for (int64_t i = 0; i < N; i++) s += x[i];
    return (double)(s / N);
}

/* p = L^-1 f by a dense LU with partial pivoting (N = prod n, up to a few hundred).  Singular L:
 * the solution of zero mean of L p = f - mean(f), from the regular (L - c 1 1^T) p = f - mean(f)
 * (1^T L = 0, so 1^T p = 0 follows).  Returns 0, or -1 when out of memory. */
static int ref_dense_solve(int ndim, const int64_t n[3], const hs_poisson_bc bc[3][2], const double dx[3],
                           const double *f, double *p)
{
    int64_t N = n[0] * n[1] * n[2];
    double *A = malloc((size_t)(N * N) * sizeof(double)), *e = calloc((size_t)N, sizeof(double));
    double *col = malloc((size_t)N * sizeof(double)), *b = malloc((size_t)N * sizeof(double));
    if (!A || !e || !col || !b) {
        free(A), free(e), free(col), free(b);
        return -1;
    }
    int sing = ref_singular(ndim, bc);
    double c = 1.0 / (dx[0] * dx[0]), mean = sing ? ref_mean(f, N) : 0.0;
    for (int64_t j = 0; j < N; j++) { /* column j = L e_j */
        e[j] = 1.0;
        ref_laplacian(ndim, n, bc, dx, e, col);
        e[j] = 0.0;
        for (int64_t i = 0; i < N; i++) A[i * N + j] = col[i] - (sing ? c : 0.0);
    }
    for (int64_t i = 0; i < N; i++) b[i] = f[i] - mean;
    for (int64_t k = 0; k < N; k++) {
        int64_t piv = k;
        for (int64_t i = k + 1; i < N; i++)
            if (fabs(A[i * N + k]) > fabs(A[piv * N + k])) piv = i;
        if (piv != k) {
            for (int64_t j = 0; j < N; j++) {
                double t = A[k * N + j];
                A[k * N + j] = A[piv * N + j], A[piv * N + j] = t;
            }
            double t = b[k];
            b[k] = b[piv], b[piv] = t;
        }
        for (int64_t i = k + 1; i < N; i++) {
            double m = A[i * N + k] / A[k * N + k];
            if (m == 0.0) continue;
            for (int64_t j = k; j < N; j++) A[i * N + j] -= m * A[k * N + j];
            b[i] -= m * b[k];
        }
    }
    for (int64_t i = N - 1; i >= 0; i--) {
        double s = b[i];
        for (int64_t j = i + 1; j < N; j++) s -= A[i * N + j] * p[j];
        p[i] = s / A[i * N + i];
    }
    free(A), free(e), free(col), free(b);
    return 0;
}

#endif
