/* OpenMP backend of the finite-element assembly: element kernels, map gathers, Dirichlet rows. */
#include "solvers/fem/fem_impl.h"

#include "kernels/error.h"

int hs_fem_elements_cpu(const hs_fem_kargs *a)
{
#pragma omp parallel for schedule(static)
    for (int64_t e = 0; e < a->ncells; e++) hs_fem_cell(a, e);
#pragma omp parallel for schedule(static)
    for (int64_t f = 0; f < a->nfacets; f++) hs_fem_facet(a, f);
    return HS_OK;
}

int hs_fem_gather_cpu(int64_t n, const int64_t *ptr, const int64_t *idx, const double *buf, double *out)
{
#pragma omp parallel for schedule(static)
    for (int64_t k = 0; k < n; k++) hs_fem_gather_one(k, ptr, idx, buf, out);
    return HS_OK;
}

int hs_fem_dirichlet_cpu(int64_t n, const int64_t *row, const int64_t *diag, const double *val, const double *g, double *b)
{
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++) b[row[i]] = val[diag[i]] * g[i];
    return HS_OK;
}
