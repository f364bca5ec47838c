/* Resumable L-BFGS: the optimiser of kernels/nn/optim.h as an object that runs a given number of
 * iterations per call and whose whole state (gradient, correction pairs, counters) can be saved
 * and loaded, so that a training run split into chunks, checkpointed and restarted follows exactly
 * the same iterates as one uninterrupted hs_lbfgs_minimize.  Vectors are device fp64, as there. */
#ifndef HS_LBFGS_H
#define HS_LBFGS_H

#include "kernels/nn/optim.h"

typedef struct hs_lbfgs hs_lbfgs;

/* Options as for hs_lbfgs_minimize (defaults for zero fields; max_iter and max_evals count over
 * the object's whole life).  Allocates (2 history + 4) device vectors of n.  Not collective. */
int hs_lbfgs_create(hs_ctx *ctx, size_t n, hs_objective f, void *data, const hs_lbfgs_opts *opts, hs_lbfgs **L);
void hs_lbfgs_destroy(hs_lbfgs *L);
/* What hs_lbfgs_create(ctx, n, ..., opts, ...) allocates, added to *device and *host in bytes as the
 * allocators take them (kernels/memory.h's footprints), for estimates before it exists.  Not
 * collective. */
void hs_lbfgs_footprint(const hs_ctx *ctx, size_t n, const hs_lbfgs_opts *opts, double *device, double *host);

/* Up to `iterations` more iterations from x (device, updated in place; pass the same vector, with
 * the values the previous call left, on every call).  The first call evaluates f at x.  `result`
 * holds totals; result->reason says why this call returned.  Returns at once once a terminal
 * condition (gtol, ftol, limits, failed line search) was met.  An objective that returns
 * HS_ERR_SIGNAL (interrupted: a signal, a wall-time limit) abandons the iteration in progress: the
 * state goes back to where that iteration started (x, the pairs and the counters as they were, so
 * that hs_lbfgs_save saves that boundary) and the call returns HS_ERR_SIGNAL; the next call repeats
 * the iteration, to the same iterates as a run never interrupted.  Interrupted in the first
 * evaluation, the object stays unstarted. */
int hs_lbfgs_run(hs_lbfgs *L, double *x, int iterations, int (*callback)(void *data, int iteration, double f),
                 hs_lbfgs_result *result);
/* 1 once a terminal condition was met. */
int hs_lbfgs_finished(const hs_lbfgs *L);

/* The state as host doubles (x is the caller's and is not included): size, save, load. */
size_t hs_lbfgs_state_count(const hs_lbfgs *L);
/* The same for an optimiser of n variables with options opts, before it exists. */
size_t hs_lbfgs_state_count_for(size_t n, const hs_lbfgs_opts *opts);
int hs_lbfgs_save(hs_lbfgs *L, double *host);
int hs_lbfgs_load(hs_lbfgs *L, const double *host);

#endif
