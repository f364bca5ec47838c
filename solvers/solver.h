/* The solver interface: a table of functions registered by name, driven by solvers/driver.c. */
#ifndef HS_SOLVER_H
#define HS_SOLVER_H

#include "io/params.h"
#include "kernels/context.h"

typedef struct hs_writer hs_writer;         /* io/ output writer (NetCDF/HDF5) */
typedef struct hs_checkpoint hs_checkpoint; /* io/ checkpoint file */

typedef struct hs_solver_ops {
    const char *name;      /* value of [run] solver */
    const char *summary;   /* one line for `hpcsim --help` */
    /* Declare the solver's own parameter section(s). */
    int (*declare)(void);
    /* Validate parameters (input errors via hs_params_error) and build the state. */
    int (*create)(hs_ctx *ctx, const hs_params *p, void **state);
    /* Advance to simulated time `until` (or run to completion for non-time-dependent solvers). */
    int (*advance)(void *state, double until);
    int (*write)(void *state, hs_writer *w);
    int (*checkpoint)(void *state, hs_checkpoint *c);
    int (*restore)(void *state, hs_checkpoint *c);
    void (*destroy)(void *state);
} hs_solver_ops;

/* The solver registered under `name`, or NULL. */
const hs_solver_ops *hs_solver_find(const char *name);
/* All registered solvers, NULL-terminated. */
const hs_solver_ops *const *hs_solver_list(void);
/* Declare the [run] section and every solver's section (once per process). */
int hs_solver_declare_all(void);

/* Run the parameter set end to end: context, solver create/advance/write/destroy.  Collective. */
int hs_driver_run(hs_ctx *ctx, const hs_params *p);

#endif
