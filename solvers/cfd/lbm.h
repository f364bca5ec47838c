/* The lbm CFD model's pieces beyond its ops table: sampling the state for tests, forces, units, and timing steps for the benchmark. */
#ifndef HS_LBM_H
#define HS_LBM_H

#include "solvers/solver.h"

/* What hs_lbm_gather samples (cell centres, x fastest; solid cells: rho 1, u 0). */
enum {
    HS_LBM_GATHER_RHO = 0, /* lattice density (1 at rest) */
    HS_LBM_GATHER_U,       /* velocity components, physical units */
    HS_LBM_GATHER_V,
    HS_LBM_GATHER_W,
    HS_LBM_GATHER_P,       /* gauge pressure, physical units: density (rho - 1) cs^2 (dx/dt)^2 */
    HS_LBM_GATHER_SOLID    /* 1 in solid cells (obstacles), 0 in fluid */
};

/* A field of the current state gathered on rank 0 into global_host (ignored elsewhere).
 * `state` is the model's (the cfd solver forwards; tests create the model directly).  Collective. */
int hs_lbm_gather(void *state, int what, double *global_host);
/* Population q (0..Q-1) as stored (f - w, unscaled), gathered on rank 0 in the current (AA) slot
 * layout: equal on any rank count when the runs agree bitwise.  Collective. */
int hs_lbm_gather_population(void *state, int q, double *global_host);
/* The force on the obstacles from the last step's momentum exchange, lattice units, every rank
 * alike; cd, cl (NULL allowed): drag and lift coefficients (x and y components) against the
 * reference velocity and length (area in 3D).  Collective. */
int hs_lbm_forces(void *state, double force[3], double *cd, double *cl);
/* Units: cell size, time step (physical), lattice velocity of u_ref, relaxation time; number of
 * directions Q.  Not collective. */
void hs_lbm_units(void *state, double *dx, double *dt, double *u_lattice, double *tau, int *q);

/* Run nsteps whole steps (exchanges, links) and time them (seconds, device synchronised).  Collective. */
int hs_lbm_bench_steps(void *state, int nsteps, double *seconds);
/* nsteps (even) fused stream-collide kernels over the local box alone, no exchange or links, timed;
 * *bytes_per_cell: what each cell must move per step, 2 Q sizeof(storage) + 1 (its flag).
 * Changes the state.  Not collective. */
int hs_lbm_bench_kernel(void *state, int nsteps, double *seconds, double *bytes_per_cell);

#endif
