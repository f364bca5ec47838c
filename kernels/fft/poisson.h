/* Fast direct Poisson solver on a uniform cell-centred grid: real FFT / DCT / DST along every
 * dimension with matching ends, a tridiagonal solve along at most one dimension with mixed ends;
 * O(N log N), on both backends, over ranks that split the last used dimension. */
#ifndef HS_POISSON_H
#define HS_POISSON_H

#include "kernels/grid/grid.h"

/* The boundary of one face of the domain, homogeneous (the caller folds boundary values into the
 * right-hand side).  Cell-centred unknowns, the face halfway between the last cell and its ghost:
 *   NEUMANN:   dp/dn = 0 on the face   (ghost = last cell)
 *   DIRICHLET: p = 0 on the face       (ghost = - last cell)
 *   PERIODIC:  both faces of the dimension (the decomposition must be periodic there). */
typedef enum { HS_POISSON_PERIODIC = 0, HS_POISSON_NEUMANN = 1, HS_POISSON_DIRICHLET = 2 } hs_poisson_bc;

typedef struct hs_poisson hs_poisson;

/* Plan the solve of  L p = f  with L the second-order (5-point in 2D, 7-point in 3D) Laplacian
 *   L p = sum_d (p[i-1] - 2 p[i] + p[i+1]) / dx[d]^2
 * with the ghosts of `bc`, on the cells of decomposition `d` (1..3 dimensions).  A dimension whose
 * two faces are both PERIODIC, both NEUMANN or both DIRICHLET is diagonalised by a transform (real
 * FFT, DCT-II, DST-II through kernels/fft/fft.h); at most one dimension may have different ends
 * (NEUMANN on one side, DIRICHLET on the other), and it is solved by a tridiagonal (Thomas) sweep per
 * line in the other dimensions' spectral space.  More than one such dimension is an input error.
 * The decomposition may split only its last used dimension (d->procs[k] == 1 for the others; an
 * input error otherwise, saying what would work): a global transpose (hs_comm_alltoall on device
 * buffers) brings whole lines of that dimension to each rank.  Work buffers of about three local
 * arrays are held on the device.  Collective over the decomposition. */
int hs_poisson_create(hs_decomp *d, const hs_poisson_bc bc[3][2], const double dx[3], hs_poisson **ps);

/* Solve L p = f: f and p are contiguous arrays of this rank's cells (x fastest, d->local) in the
 * context's device memory; p == f is allowed.  When L is singular (no DIRICHLET face: the constant
 * is in its null space) the mean of f is removed first (a compatible f has none; *f_mean, when not
 * NULL, receives the mean removed, so that a caller can report the compatibility defect) and p is
 * returned with zero mean.  Accurate to round-off: the residual |L p - f| / |f| is about 1e-14 in
 * double precision for any size.  On CUDA the work is queued on the context's stream.  Collective. */
int hs_poisson_solve(hs_poisson *ps, const double *f, double *p, double *f_mean);

/* Lp = L p with the same boundaries (for residual checks): contiguous local arrays as above.
 * Collective (exchanges halos). */
int hs_poisson_apply(hs_poisson *ps, const double *p, double *Lp);

/* The eigenvalue of L for the mode with spectral indices (k0, k1, k2) in the transformed
 * dimensions (mixed dimension: ignored), in 1/length^2 (<= 0).  For tests.  Not collective. */
double hs_poisson_eigenvalue(const hs_poisson *ps, const int64_t k[3]);

/* Release (NULL is ignored).  Collective. */
void hs_poisson_destroy(hs_poisson *ps);

#endif
