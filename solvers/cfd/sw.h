/* The shallow_water CFD model's pieces beyond its ops table: sampling the state for tests and timing steps for the benchmark. */
#ifndef HS_SW_H
#define HS_SW_H

#include "solvers/solver.h"

/* What hs_sw_gather samples. */
enum {
    HS_SW_GATHER_H = 0,      /* layer depth at the cell centres */
    HS_SW_GATHER_U_FACE,     /* u on its x-faces (n[0] * n[1] points) */
    HS_SW_GATHER_V_FACE,     /* v on its y-faces (n[0] * (n[1] + 1) points with walls, n[0] * n[1] periodic) */
    HS_SW_GATHER_U,          /* u at the cell centres */
    HS_SW_GATHER_V,          /* v at the cell centres */
    HS_SW_GATHER_VORTICITY,  /* relative vorticity at the cell centres */
    HS_SW_GATHER_B           /* bottom height at the cell centres */
};

/* A field of the current state gathered on rank 0 into global_host (x fastest; ignored elsewhere).
 * `state` is the model's (the cfd solver forwards; tests create the model directly).  Collective. */
int hs_sw_gather(void *state, int what, double *global_host);
/* The conserved quantities of the current state, every rank alike: mass sum(h) dx dy, energy
 * sum(h K + g h (h/2 + b)) dx dy and potential enstrophy sum(h_q q^2 / 2) dx dy.  Collective. */
int hs_sw_totals(void *state, double *mass, double *energy, double *enstrophy);
/* The layer depth of global cell (i, j), every rank alike.  Collective. */
int hs_sw_probe(void *state, int64_t i, int64_t j, double *h);
/* The current time step. */
double hs_sw_dt(void *state);

/* Run nsteps steps of the current dt and time them (seconds, the device synchronised).  Collective. */
int hs_sw_bench_steps(void *state, int nsteps, double *seconds);
/* The four RK4 stage kernels of one step over the whole local box, without halo exchanges (the
 * benchmark's bandwidth figure); *bytes is the least they must move: every array each stage reads
 * or writes, once.  Changes the state.  Not collective. */
int hs_sw_bench_stages(void *state, double *bytes);

#endif
