/* The navier_stokes CFD model's pieces beyond its ops table: sampling the state for tests and timing steps for the benchmark. */
#ifndef HS_NS_H
#define HS_NS_H

#include "solvers/solver.h"

/* The velocity component comp (0..ndim-1) interpolated to the cell centres, gathered on rank 0 into
 * global_host (n[0]*n[1]*n[2] values, x fastest; ignored elsewhere).  `state` is the model's (the
 * cfd solver forwards; tests create the model directly).  Collective. */
int hs_ns_centre_velocity(void *state, int comp, double *global_host);
/* The same at its own faces (the staggered field as stored: n + 1 points along comp unless that
 * dimension is periodic).  Collective. */
int hs_ns_face_velocity(void *state, int comp, double *global_host);
/* The average Nusselt number at the x = 0 wall (temperature on).  Collective. */
int hs_ns_nusselt(void *state, double *nusselt);
/* Run nsteps steps of the current dt, timing them and the pressure solves inside (seconds, the
 * device synchronised around each solve).  Collective. */
int hs_ns_bench_steps(void *state, int nsteps, double *seconds, double *pressure_seconds);

/* The pressure solver in use and, for the multigrid, its CG iterations in this run (the residual
 * check at the end not counted).  Not collective. */
typedef struct hs_ns_pressure_info {
    int multigrid;             /* 0: the transform solver */
    int64_t solves, iterations;
    int last, most;            /* iterations of the last solve, most of any */
    const char *summary;       /* the solver (the multigrid's hierarchy), valid while the state lives */
} hs_ns_pressure_info;
int hs_ns_pressure(void *state, hs_ns_pressure_info *info);

/* One explicit stage of the momentum equations (advection, diffusion, forces: every component,
 * no ghosts, no projection), for the bandwidth figure of the benchmark; *bytes is the least the
 * update must move (each component read once per component written, plus the writes).  Not
 * collective. */
int hs_ns_bench_advection(void *state, double *bytes);

#endif
