/* Smoothed-aggregation algebraic multigrid as a preconditioner for hs_pcg_solve: setup on the host, V-cycle on the device. */
#ifndef HS_AMG_H
#define HS_AMG_H

#include <stddef.h>

#include "kernels/sparse/pcg.h"

/* Setup (host, OpenMP): strength of connection |a_ij| >= theta sqrt(|a_ii a_jj|) between nodes
 * (blocks of block_size unknowns, Frobenius norms of the blocks; the threshold of a level doubled
 * while its aggregates average more than 30 nodes), greedy aggregation (Vanek's three phases; nodes with no strong neighbour, such as Dirichlet rows, are left to the smoother),
 * tentative prolongation from the near-null space by a QR per aggregate, prolongation smoothing
 * P = (I - 4/3 / rho(D^-1 A) D^-1 A) P_tent, Galerkin coarse operators R A P with R = P^T, down to
 * at most coarse_size unknowns, where a dense inverse is applied by SpMV (when coarsening stalls
 * far above that, the coarsest level is smoothed instead).
 * Cycle (device, through hs_csr_spmv and the BLAS family, no kernels of its own): a V-cycle with
 * Chebyshev smoothing of the Jacobi-preconditioned operator on [rho / cheb_ratio, 1.1 rho] (rho from
 * 20 Lanczos steps with a 5 % margin, capped by Gershgorin), the same polynomial before and after the coarse correction, so that the cycle
 * is a symmetric positive definite preconditioner for CG. */
typedef struct hs_amg_opts {
    double theta;           /* strength threshold (default 0.02) */
    int block_size;         /* unknowns per node, interleaved (1; dim for elasticity) */
    int nnull;              /* near-null-space vectors (0: one constant per component) */
    const double *nullspace;/* host, nnull columns of n entries (vector k at k * n); NULL: constants */
    int degree;             /* Chebyshev degree (default 3) */
    double cheb_ratio;      /* lower end of the smoothed interval: rho / cheb_ratio (default 30) */
    int max_levels;         /* default 25 */
    int coarse_size;        /* at most this many unknowns on the coarsest level (default 300) */
} hs_amg_opts;

hs_amg_opts hs_amg_default_opts(void);

/* The preconditioner z = V-cycle(A) r for a square hs_csr on one rank (or a rank's diagonal block:
 * block Jacobi over the ranks, each block by its own multigrid).  A must outlive P.  Not collective:
 * apply works on the rank's own vectors.  Errors: a non-square matrix, a non-positive diagonal
 * entry (not SPD), an entry that is not finite. */
int hs_precond_amg(hs_csr *A, const hs_amg_opts *opts, hs_precond *P);

/* The hierarchy: levels, unknowns and entries per level, operator complexity (sum of entries over
 * the levels / entries of A), setup seconds.  Returns the characters written (as snprintf). */
int hs_amg_describe(const hs_precond *P, char *buf, size_t len);

/* One V-cycle z = M^-1 r on the preconditioner's vectors (device arrays), as P->apply. */
int hs_amg_apply(void *data, const double *r, double *z);

#endif
