/* The heat solver's public pieces beyond its ops table: accuracy against exact solutions. */
#ifndef HS_HEAT_H
#define HS_HEAT_H

#include "solvers/solver.h"

extern const hs_solver_ops hs_heat_solver;

/* Relative L2 error and max-norm error of the current field against the exact solution of the
 * configured initial state (initial = sine or gaussian, constant k, no source); HS_ERR_INPUT
 * when the configuration has no exact solution.  Collective. */
int hs_heat_exact_error(void *state, double *rel_l2, double *max_abs);

/* One sweep of the explicit update over the whole local box, without exchange or walls: the
 * stencil kernel alone, for the benchmark.  Not collective. */
int hs_heat_bench_sweep(void *state);
/* Switch the GPU's 7-point variant of a built state (HS_HEAT_KERNEL_*; heat.gpu_kernel at create)
 * for the benchmark, which times each on the same state. */
void hs_heat_bench_set_kernel(void *state, int kernel);

/* The explicit time step in use (s) and the stability limit of the configured stencil (s). */
void hs_heat_time_step(void *state, double *dt, double *dt_limit);

#endif
