/* The solvers' step clock (hs_clock, solvers/solver.h) in checkpoints. */
#include "solvers/solver.h"

#include "kernels/error.h"

/* base, dt and n of the current run of equal steps; the time itself stays in the solver's arrays */
#define CLOCK_ARRAY "clock_base"

int hs_clock_checkpoint(hs_checkpoint *k, const hs_clock *c)
{
    const double v[3] = {c->base, c->dt, (double)c->n};
    return hs_checkpoint_write(k, CLOCK_ARRAY, HS_F64, 3, v);
}

int hs_clock_restore(hs_checkpoint *k, hs_clock *c, double time)
{
    int found = 0;
    hs_clock_set(c, time);
    HS_CHECK(hs_checkpoint_has(k, CLOCK_ARRAY, &found));
    if (!found) return HS_OK;
    double v[3];
    HS_CHECK(hs_checkpoint_read(k, CLOCK_ARRAY, HS_F64, 3, v));
    c->base = v[0], c->dt = v[1], c->n = (int64_t)v[2];
    return HS_OK;
}
