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
 * FFT, DCT-II, DST-II, each a batched R2C / C2R of kernels/fft/fft.h with a pre and a post pass);
 * at most one dimension may have different ends (NEUMANN on one side, DIRICHLET on the other), and
 * it is solved by a tridiagonal (Thomas) sweep per line in the other dimensions' spectral space.
 * More than one such dimension is an input error, as are periodic on one face only, periodic
 * boundaries where the decomposition is not periodic (or the converse), and dx <= 0.
 * A 2D problem on one rank whose two dimensions are both cosine/sine transforms or both periodic
 * runs as the plane solve: the R2C of the rows, the column transforms with the divide between them,
 * the C2R of the rows (the line solve's per-dimension transforms and transpositions otherwise;
 * HS_POISSON_PLANE=0 in the environment keeps the line solve there, for comparisons).  A mixed
 * dimension beside a cosine/sine one runs as the plane solve too: x of even length by the DCT-IV
 * (its modes are the mixed line's), otherwise as the cosine transform of the mixed line's
 * antisymmetric extension past its Dirichlet face (twice the length, twice the work buffers).
 * The decomposition may split only its last used dimension (d->procs[k] == 1 for the others; an
 * input error otherwise, saying what would work): a global transpose (hs_comm_alltoall on device
 * buffers: NCCL or pinned host staging) brings whole lines of that dimension to each rank.  Work
 * buffers of about three local arrays are held on the device (two real, one complex half-spectrum
 * or receive buffer; a rank holding more transposed rows than cells holds that much; the plane
 * solve one real and the complex one, twice as large along an extended dimension, and the DCT-IV
 * the complex one only), plus a field with one ghost layer for hs_poisson_apply.  Collective over
 * the decomposition. */
int hs_poisson_create(hs_decomp *d, const hs_poisson_bc bc[3][2], const double dx[3], hs_poisson **ps);

/* Solve L p = f: f and p are contiguous arrays of this rank's cells (x fastest, d->local) in the
 * context's device memory; p == f is allowed.  When L is singular (no DIRICHLET face: the constant
 * is in its null space) the mean of f is removed first (a compatible f has none; *f_mean, when not
 * NULL, receives the mean removed, so that a caller can report the compatibility defect) and p is
 * returned with zero mean.  Accurate to round-off: the residual is at the rounding of p itself,
 * |L p - f| ~ 1e-16 |L| |p| with |L| = 4 sum_d 1/dx[d]^2, which for a random f is |L p - f| / |f|
 * ~ 1e-14 (measured up to 7e-14 on 2D and 3D grids up to 384 x 256 and 48 x 40 x 33, any
 * boundaries); it is larger where p is much larger than f dx^2, i.e. where smooth modes dominate f
 * on long lines (4e-12 for a random f on one line of 4096 Neumann-Dirichlet cells), as for any
 * solver that stores p in double.  Each rank's share
 * does not depend on the rank count beyond round-off (tests/mpi: 1e-12).  On CUDA the work is
 * queued on the context's stream.  Collective. */
int hs_poisson_solve(hs_poisson *ps, const double *f, double *p, double *f_mean);

/* Whether the solve begins by putting lines of some dimensions in Makhoul's order and ends by
 * putting them back, and in which: order[k] is 0 (natural), 1 (Makhoul's order: element i of a
 * line of n goes to place hs_poisson_reorder_position(n, i), kernels/fft/poisson_point.h) or 2 (the
 * same times hs_poisson_sign(1, i), -1 at odd i, for the sine transform); order[0] = 3
 * (HS_POISSON_ROWS_DCT4) for the plane solve of a mixed x by the DCT-IV: each row (in y's order
 * order[1]) packed into n0/2 complex values, hs_poisson_dct4_pack_at and its inverse
 * hs_poisson_dct4_unpack_at with the side and table of hs_poisson_dct4_layout.  The line solve orders x
 * where x has a cosine or sine transform (2D and 3D); the plane solve (2D on one rank, every
 * dimension a cosine or sine transform) orders x and y.  A caller whose own passes produce f and
 * consume p (a divergence before, a copy into a field after) can read and write that order itself
 * and call hs_poisson_solve_ordered, saving two of the solve's passes over the data.  Returns 0
 * (order all 0) where the solve orders nothing.  Not collective. */
int hs_poisson_ordered(const hs_poisson *ps, int order[3]);

/* For the DCT-IV layout (order[0] = 3 above): 1 with the Dirichlet side (HS_POISSON_EXT_HIGH or
 * _LOW) and the device table the pack and unpack read; else 0.  Not collective. */
int hs_poisson_dct4_layout(const hs_poisson *ps, int *side, const double **tw4);

/* hs_poisson_solve with f given and p returned in the order above (hs_poisson_ordered must hold);
 * the rest as hs_poisson_solve.  Collective. */
int hs_poisson_solve_ordered(hs_poisson *ps, const double *f, double *p, double *f_mean);

/* Contiguous local arrays from natural order to the solver's (to_ordered) or back; src != dst.
 * Not collective. */
int hs_poisson_order(hs_poisson *ps, int to_ordered, const double *src, double *dst);

/* Lp = L p with the same boundaries (for residual checks): contiguous local arrays as above.
 * Collective (exchanges halos). */
int hs_poisson_apply(hs_poisson *ps, const double *p, double *Lp);

/* The eigenvalue of L for the mode with numbers (k0, k1, k2) in the transformed dimensions, in
 * 1/length^2 (<= 0): the sum over them of -(4/dx^2) sin^2(pi k / n) for PERIODIC (the modes
 * exp(2 pi i k j / n), k = 0..n-1) and -(4/dx^2) sin^2(pi k / (2n)) for NEUMANN (cos(pi k (j+1/2) / n),
 * k = 0..n-1) and DIRICHLET (sin(pi k (j+1/2) / n), k = 1..n).  The mixed dimension and unused
 * dimensions are ignored.  For tests.  Not collective. */
double hs_poisson_eigenvalue(const hs_poisson *ps, const int64_t k[3]);

/* 1 when the spectral divide runs inside the last dimension's inverse FFT, as cuFFT's load callback
 * (one pass over the data fewer per solve), else 0.  Only on the GPU and where HS_POISSON_HOOK=1 in
 * the environment asks for it (cuFFT's callback kernels measured slower than the pass they save;
 * kernels/fft/poisson.c), and where cuFFT links the callback (a JIT link of about a second at
 * creation).  The results agree with the separate divide to round-off (the same arithmetic per
 * coefficient).  Not collective. */
int hs_poisson_divide_hooked(const hs_poisson *ps);

/* Release (NULL is ignored).  Collective. */
void hs_poisson_destroy(hs_poisson *ps);

#endif
