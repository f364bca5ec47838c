/* The pinn solver (registered as "pinn") and its parameter reading, shared with tests and benchmark. */
#ifndef HS_PINN_H
#define HS_PINN_H

#include "solvers/pinn/pinn_train.h"
#include "solvers/solver.h"

extern const hs_solver_ops hs_pinn_solver;

/* Fill a training configuration from the [pinn] section (and run.seed); input errors through
 * hs_params_error (exit status 2). */
int hs_pinn_config_read(const hs_params *p, hs_pinn_config *c);

#endif
