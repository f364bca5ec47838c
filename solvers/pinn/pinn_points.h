/* Training points of the PINN: Latin-hypercube collocation, initial/boundary data, worst-k selection. */
#ifndef HS_PINN_POINTS_H
#define HS_PINN_POINTS_H

#include <stdint.h>

#include "physics/pde1d.h"

/* Streams of the kernel RNG (kernels/rng/rng.h) that the point draws use, under the caller's seed. */
enum { HS_PINN_RNG_LHS = 1, HS_PINN_RNG_DATA = 2 };

/* n Latin-hypercube points in t in [0, 1], x in [-1, 1] as (t, x) pairs, seeded; *pts is malloc'd
 * with room for `extra` more pairs after them.  Returns an hs status. */
int hs_pinn_lhs(int64_t n, uint64_t seed, double **pts, int64_t extra);

/* n points drawn without replacement from the edges of the reference grid (as Raissi et al.): the
 * nx points of t = 0 with u = u0(x), and the nt times of each wall with the wall value.  Input
 * error when n exceeds nx + 2 nt. */
int hs_pinn_data_points(const hs_pde1d_info *pde, int64_t n, int nx, int nt, double t_max, uint64_t seed, double **pts,
                        double **u);

/* Indices of the k largest values (ties: lower index first), malloc'd. */
int hs_pinn_top_k(const double *v, int64_t n, int64_t k, int64_t **idx);

#endif
