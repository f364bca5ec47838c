/* The seismic solver (acoustic and elastic finite differences with CPML, receivers, SEG-Y, adjoint gradient and FWI) and its hooks for tests and benchmarks. */
#ifndef HS_SEISMIC_H
#define HS_SEISMIC_H

#include <stdint.h>

#include "solvers/solver.h"

extern const hs_solver_ops hs_seismic_solver;

/* The seismograms recorded so far, on every rank (collective): *nsamples samples of *ncols columns
 * (component c of receiver r is column c * nrec + r), time-major, in a malloc'd array the caller
 * frees; *dt_sample the sample interval (s). */
int hs_seismic_traces(void *state, int64_t *nsamples, int64_t *nrec, int *ncomp, double *dt_sample, double **data);

/* The time step and its stability limit (s), and the steps of the whole run. */
void hs_seismic_time_step(void *state, double *dt, double *dt_limit, int64_t *nsteps);

/* Benchmark: one time step (the exchange, the updates, the sources, the samples). */
int hs_seismic_bench_step(void *state);
/* Benchmark: the bytes a step must move at least (every field read once, updated ones written once), the points. */
void hs_seismic_bench_traffic(void *state, double *bytes, double *points);

/* Test hook: whether the acoustic step takes the CPML's terms by columns (AC_MARCH) rather than
 * the two slab passes. */
int hs_seismic_cpml_columns(void *state);

/* Test hook: the step kernel's spatial operator applied to f (sampled on every point, ghosts
 * included) against the exact Laplacian of f = sin(2.1 x + 0.3) cos(1.7 y - 0.2) (times a function
 * of z that f may add): the largest error over the owned points.  Overwrites the state's fields.
 * Collective. */
int hs_seismic_test_laplacian(void *state, double (*f)(const double *x), double *err_max);

/* Adjoint hooks (a state created in seismic.mode = gradient or fwi).  The misfit J = 1/2 sum over
 * samples and receivers of (p - p_obs)^2 and its gradient dJ/dvp on the global grid (x fastest; 0 in
 * the CPML layers and their reach, whose vp is held fixed), for the model vp_global (NULL: the
 * current one).  Collective. */
int hs_seismic_misfit_gradient(void *state, const double *vp_global, double *J, double *grad_global);
/* The linear map F from the source's values per step (nsteps of them, replacing the wavelet) to the
 * seismograms (nsamples x nrec, time-major), and its exact transpose F^T (the adjoint simulation
 * driven by the data at the receivers, sampled at the source).  Collective; every rank gets the
 * result. */
int hs_seismic_forward_op(void *state, const double *src, double *data);
int hs_seismic_adjoint_op(void *state, const double *data, double *src);
/* fwi: the misfit at the start and at the last evaluation, and the model of the last evaluation
 * (global, owned by the state). */
void hs_seismic_fwi_result(void *state, double *J0, double *J, const double **vp_global);
/* Forward steps and adjoint steps taken since the last call, and the checkpoint slots (0 where every
 * step's wavefield is kept instead). */
void hs_seismic_adjoint_counts(void *state, int64_t *advances, int64_t *reversed, int *slots);

#endif
