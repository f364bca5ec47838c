/* The driver: owns the run policy (create, advance, write, destroy) around a solver's ops. */
#include "solvers/solver.h"

int hs_driver_run(hs_ctx *ctx, const hs_params *p)
{
    const hs_solver_ops *ops = hs_solver_find(hs_params_string(p, "run.solver"));
    void *state = NULL;
    HS_CHECK(ops->create(ctx, p, &state));
    int rc = ops->advance(state, 0.0);
    ops->destroy(state);
    return rc;
}
