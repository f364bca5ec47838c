/* The spectral CFD model's pieces beyond its ops table: sampling and setting the state for tests, timing steps for the benchmark. */
#ifndef HS_SPECTRAL_H
#define HS_SPECTRAL_H

#include "solvers/solver.h"
#include "solvers/cfd/spectral_impl.h"

/* The field `which` (HS_SP_U, HS_SP_V, HS_SP_VORT, HS_SP_PSI, HS_SP_DIV) of the current state at the
 * cell centres, gathered on rank 0 into global_host (nx*ny values, x fastest; ignored elsewhere).
 * `state` is the model's (tests create the model directly).  Collective. */
int hs_spectral_field(void *state, int which, double *global_host);

/* Replace the vorticity by a field given at the cell centres (global_host: nx*ny values, x fastest,
 * the same on every rank), truncated by the 2/3 rule and with its mean removed.  Collective. */
int hs_spectral_set_vorticity(void *state, const double *global_host);

/* dw/dt of the current state (advection, viscosity, drag, forcing: the right-hand side the time
 * stepper integrates), at the cell centres, gathered on rank 0 as hs_spectral_field.  Collective. */
int hs_spectral_tendency(void *state, double *global_host);

/* The diagnostics the output series hold: kinetic energy and enstrophy (integrals over the domain,
 * by Parseval), the largest |div u| over the grid, the CFL number of the current dt.  Collective. */
int hs_spectral_diagnostics(void *state, double *ke, double *ens, double *divmax, double *cfl);

/* Run nsteps steps of the current dt (the adaptive dt of the current state, or cfd.dt) and time
 * them; then time the distributed FFTs that one step makes (4 stages x 2 backward + 2 forward)
 * alone on the same buffers, nsteps times.  Seconds in total, the device synchronised around each
 * timing.  Collective. */
int hs_spectral_bench(void *state, int nsteps, double *step_seconds, double *fft_seconds);

#endif
