/* The fem solver's ops table and the hooks its tests and benchmark read. */
#ifndef HS_FEM_H
#define HS_FEM_H

#include <stdint.h>

#include "solvers/solver.h"

extern const hs_solver_ops hs_fem_solver;

/* The mean vertical displacement (uy) of the nodes at the largest x: a beam's tip deflection (m).
 * Collective. */
int hs_fem_tip_deflection(void *state, double *uy);
/* CG solves and iterations so far. */
void hs_fem_stats(void *state, int64_t *solves, int64_t *iterations);
/* The nodal solution of every node on every rank (nnodes * ncomp, global node order; owned by the
 * state, valid until the next call) and the node count.  Collective. */
int hs_fem_solution(void *state, const double **u, int64_t *nnodes, int *ncomp);

#endif
