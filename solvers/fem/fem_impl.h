/* Backend entry points of the finite-element assembly (solvers/fem/fem_cpu.c, solvers/fem/fem_cuda.cu). */
#ifndef HS_FEM_IMPL_H
#define HS_FEM_IMPL_H

#include <stdint.h>

#include "solvers/fem/fem_point.h"

#ifdef __cplusplus
extern "C" {
#endif

struct hs_cuda_ctx;

/* Element matrices and vectors of every cell, then of every facet (hs_fem_cell, hs_fem_facet);
 * the pointers of *a are device arrays. */
int hs_fem_elements_cpu(const hs_fem_kargs *a);
int hs_fem_elements_cuda(struct hs_cuda_ctx *cu, const hs_fem_kargs *a);
/* out[k] = sum_{j in ptr[k]..ptr[k+1]} buf[idx[j]] for k < n (the scatter map, read as a gather). */
int hs_fem_gather_cpu(int64_t n, const int64_t *ptr, const int64_t *idx, const double *buf, double *out);
int hs_fem_gather_cuda(struct hs_cuda_ctx *cu, int64_t n, const int64_t *ptr, const int64_t *idx, const double *buf,
                       double *out);
/* Dirichlet rows: b[row[i]] = val[diag[i]] * g[i] for i < n. */
int hs_fem_dirichlet_cpu(int64_t n, const int64_t *row, const int64_t *diag, const double *val, const double *g, double *b);
int hs_fem_dirichlet_cuda(struct hs_cuda_ctx *cu, int64_t n, const int64_t *row, const int64_t *diag, const double *val,
                          const double *g, double *b);

#ifdef __cplusplus
}
#endif
#endif
