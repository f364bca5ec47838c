/* Geometric multigrid for the cell-centred Poisson operator on the structured grids of kernels/grid:
 * a symmetric V-cycle preconditioner for the conjugate gradients of kernels/sparse/pcg.h, and the
 * solve L p = f with it; any boundary mix, any decomposition, on both backends. */
#ifndef HS_MG_H
#define HS_MG_H

#include "kernels/grid/grid.h"
#include "kernels/sparse/pcg.h"

/*
 * The operator is the one of kernels/fft/poisson.h: L p = sum_d (p[i-1] - 2 p[i] + p[i+1]) / dx[d]^2
 * on the cells of a decomposition (1..3 dimensions), with homogeneous boundaries per face given as
 * kinds of kernels/grid (HS_BC_PERIODIC on both faces of a dimension that the decomposition wraps,
 * HS_BC_NEUMANN: ghost = cell, HS_BC_DIRICHLET: ghost = -cell, the face halfway between), in any mix
 * (Dirichlet on several dimensions, different kinds at the two ends of several dimensions: what the
 * transforms cannot do), and split over the ranks in any way (hs_decomp_create, or
 * hs_decomp_create_split).  CG runs on the SPD (or, without a Dirichlet face, semi-definite) A = -L.
 *
 * The hierarchy.  Level 0 is the caller's grid.  A level is coarsened by halving the dimensions whose
 * spacing is below twice the smallest (all of them on a uniform grid; the finer ones first on
 * stretched cells), as long as their cell counts are even; a coarse cell is the union of two fine
 * cells per halved dimension and belongs to the rank owning its first child, so the coarse boxes
 * stay aligned with the fine ones (hs_decomp_create_split) and the transfers need only halo
 * exchanges.  When a rank would be left without coarse cells (or a level of at most
 * HS_MG_GATHER_MAX cells cannot be halved any further while it is split), the level is gathered
 * onto every rank (one all-gather per cycle of a small grid) and coarsening goes on there, the same
 * on each rank; the sizes of the levels therefore do not depend on the decomposition, and neither
 * does the V-cycle (each cell is computed by the same operations on any rank count).  Coarsening
 * stops at opts.coarse_cells cells or when no dimension can be halved (odd counts); the coarsest
 * level is solved exactly by a dense inverse (built once on the host, applied as a GEMV on the
 * device) when it has at most HS_MG_DENSE_MAX cells, else approximately by a Chebyshev polynomial of
 * Jacobi steps of the degree that reduces the error about 100-fold (at most 200; sizes with few
 * factors of two, such as 129, coarsen little and are slow: prefer n = m 2^k with small m).
 *
 * The cycle.  Pre- and post-smoothing by opts.degree steps of Chebyshev-accelerated Jacobi on the
 * interval [2 / opts.smooth_ratio, 2] of D^-1 A (2 bounds its spectrum: Gershgorin), restriction by
 * full weighting (1/8, 3/8, 3/8, 1/8 per halved dimension: cell averaging with linear weights, the
 * transpose of the prolongation up to the factor 2 per halved dimension), prolongation by
 * cell-centred linear interpolation (3/4, 1/4), coarse operators rediscretised (2 dx).  Smoother,
 * transfers and coarse solve are linear and symmetric, so the cycle is a symmetric positive
 * definite preconditioner (CG's theory holds); the same smoothing before and after keeps it so.
 * Walls are handled inside the stencil and the transfers (the mirrored cell times +-1, the ghost
 * rule of kernels/grid), so the cycle fills no ghosts; ranks exchange one-cell halos (residuals two,
 * and both transfers' inputs with corners).  Without a Dirichlet face, the cycle's input and output
 * have their means removed (the constants are A's null space).
 *
 * Measured (tests/unit/test_mg.c): CG with this preconditioner reaches a relative residual of 1e-10
 * from zero in 8-9 iterations on 2D grids of 32^2 to 256^2 and 10 on 3D grids of 16^3 to 64^3, for
 * every kind of face; the same on any split of the ranks (tests/mpi/test_mg_mpi.c).
 */

typedef struct hs_mg hs_mg;

/* Most levels, most cells of the dense coarse solve, most cells of a level gathered onto every rank. */
#define HS_MG_MAX_LEVELS 40
#define HS_MG_DENSE_MAX 1024
#define HS_MG_GATHER_MAX 65536

typedef struct hs_mg_opts {
    int degree;            /* Chebyshev steps of each pre- and post-smoothing, >= 1 (default 2) */
    double smooth_ratio;   /* the smoother damps D^-1 A on [2 / smooth_ratio, 2], > 1 (default 4) */
    int64_t coarse_cells;  /* coarsen until a level has at most this many cells, >= 1 (default 256) */
    double rtol;           /* hs_mg_solve: stop at ||f - L p||_2 <= rtol ||f||_2 (default 1e-10) */
    int max_iter;          /* hs_mg_solve: CG iterations at most (default 500) */
} hs_mg_opts;

/* The defaults above. */
hs_mg_opts hs_mg_default_opts(void);

typedef struct hs_mg_stats {
    int iterations;        /* CG iterations of the last solve (V-cycles) */
    int converged;         /* whether it met rtol within max_iter */
    double residual;       /* its final ||f - L p|| / ||f|| (CG's recursive residual; 0 when f = 0) */
} hs_mg_stats;

/* Plan the multigrid of L on decomposition d (which must outlive the plan) with boundary kinds
 * bc[dim][side] (HS_BC_PERIODIC / NEUMANN / DIRICHLET; entries of unused dimensions ignored) and
 * cell sizes dx (> 0).  opts NULL: the defaults.  A periodic kind where d does not wrap (or the
 * converse), periodic on one face only, a custom kind, dx <= 0 or options out of range are input
 * errors.  Holds on the device, per level, about six arrays of the level's cells (two solution
 * fields, residual, right-hand side, Chebyshev direction, work): about 7 fine arrays in all, plus
 * the dense inverse (at most 8 HS_MG_DENSE_MAX^2 bytes).  Collective over d's ranks. */
int hs_mg_create(hs_decomp *d, const hs_bc_kind bc[3][2], const double dx[3], const hs_mg_opts *opts, hs_mg **mg);

/* Solve L p = f by CG preconditioned with one V-cycle per iteration: f and p are contiguous arrays
 * of this rank's cells (x fastest, d->local) in the context's device memory (p == f is not
 * allowed).  CG starts from p as given when guess = 1 (a time loop's last pressure: fewer
 * iterations, and the result depends only on f and that guess), from 0 when guess = 0.  When L is
 * singular (no Dirichlet face) the mean of f is removed first (*f_mean, when not NULL, receives it;
 * 0 otherwise) and p is returned with zero mean.  *stats (may be NULL) receives the iterations and
 * the final relative residual ||f - L p|| / ||f||.  Not converging within opts.max_iter is not an
 * error here: stats->converged says so.  Collective. */
int hs_mg_solve(hs_mg *mg, const double *f, double *p, int guess, double *f_mean, hs_mg_stats *stats);

/* Lp = L p with the same boundaries (for residual checks): contiguous local arrays as above.
 * Collective (exchanges halos). */
int hs_mg_apply(hs_mg *mg, const double *p, double *Lp);

/* The operator A = -L on contiguous local vectors, for hs_pcg_solve (comm: the decomposition's).
 * Valid while mg lives. */
hs_linop hs_mg_linop(hs_mg *mg);

/* The V-cycle as a preconditioner z = M r ~ A^-1 r for hs_pcg_opts.custom, owned by mg (do not
 * destroy it; valid while mg lives).  Its apply is collective. */
const hs_precond *hs_mg_precond(hs_mg *mg);

/* One line describing the hierarchy, e.g. "8 levels 512x512 .. 8x8 (gathered at 16x16), dense
 * coarse solve of 64 cells, Chebyshev degree 2".  Valid while mg lives.  Not collective. */
const char *hs_mg_summary(const hs_mg *mg);

/* Number of levels; the global cells of level l (0 = finest) in n[3].  Not collective. */
int hs_mg_levels(const hs_mg *mg);
void hs_mg_level_size(const hs_mg *mg, int l, int64_t n[3]);

/* Release (NULL is ignored).  Collective. */
void hs_mg_destroy(hs_mg *mg);

#endif
