/* The CFD solver's shared pieces: the [cfd] section every model reads, and the model tables behind it. */
#ifndef HS_CFD_H
#define HS_CFD_H

#include "solvers/solver.h"

extern const hs_solver_ops hs_cfd_solver;

/* cfd.model, in the order of its choices (hs_params_enum). */
enum { HS_CFD_NAVIER_STOKES = 0, HS_CFD_SPECTRAL = 1, HS_CFD_SHALLOW_WATER = 2, HS_CFD_LBM = 3 };
#define HS_CFD_MODEL_CHOICES "navier_stokes|spectral|shallow_water|lbm"

/* The keys of [cfd] that every model shares: the grid, its split over the ranks, and time. */
typedef struct hs_cfd_config {
    int model;            /* HS_CFD_* */
    int ndim;             /* 2 or 3 (the spectral and shallow-water models are 2D) */
    int64_t n[3];         /* cells per dimension (1 in unused dimensions) */
    double length[3];     /* domain length per dimension (1 in unused dimensions) */
    double dx[3];         /* length / n */
    int procs[3];         /* MPI ranks per dimension (0: automatic; 1 in unused dimensions) */
    double t_end;         /* end time (non-dimensional) */
    double dt_user;       /* cfd.dt: 0 = adaptive from cfl */
    double cfl;           /* target CFL number of an adaptive step */
    int64_t diag_every;   /* steps between diagnostics on the log (0: only with output) */
} hs_cfd_config;

/* Read and check [cfd] (ranges, list lengths, cells per rank).  Input errors name the key.  Not
 * collective. */
int hs_cfd_config_read(const hs_params *p, hs_cfd_config *c);

/* Each model is a full solver table (solvers/solver.h) whose name is its cfd.model value; the
 * `cfd` solver forwards every call to the model that cfd.model names.  A model declares its own
 * section ([navier_stokes], [spectral], [shallow_water], [lbm]) in `declare`. */
extern const hs_solver_ops hs_cfd_navier_stokes;
extern const hs_solver_ops hs_cfd_spectral;
extern const hs_solver_ops hs_cfd_shallow_water;
extern const hs_solver_ops hs_cfd_lbm;

/* What the `cfl` series of the models with a time step holds: the CFL number of the step size dt at
 * the recorded state.  The last step before a record may be shortened to land on an output time (or
 * t_end); its smaller CFL number says nothing of how near the run steps to its stability limit, and
 * records after such steps (every one with output.every_time) would show a fraction that depends
 * only on where the output times fall.  Each model's long_name ends with this. */
#define HS_CFD_CFL_STEP_NOTE "(a step shortened to land on an output time counts at full length)"

#endif
