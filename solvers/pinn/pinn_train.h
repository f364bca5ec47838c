/* The physics-informed network's training core (used by the pinn solver, its tests and benchmark):
 * points, the loss and its gradient (data-parallel over MPI ranks), Adam then L-BFGS, the error on
 * the reference grid, the history, and the state for checkpoints. */
#ifndef HS_PINN_TRAIN_H
#define HS_PINN_TRAIN_H

#include <stdint.h>

#include "kernels/context.h"
#include "kernels/nn/nn.h"
#include "kernels/nn/optim.h"

#define HS_PINN_MAX_LAYERS 64
#define HS_PINN_MAX_WIDTH 100000 /* units of one hidden layer at most */

/* pinn.lr_schedule takes HS_LR_SCHEDULE_CHOICES (kernels/nn/optim.h), in hs_lr_schedule order. */

typedef struct hs_pinn_config {
    int pde;                 /* hs_pde1d_kind */
    double coef;             /* viscosity / diffusivity */
    int depth;               /* hidden layers */
    int width[HS_PINN_MAX_LAYERS]; /* units of each hidden layer */
    hs_activation act;
    hs_dtype dtype;
    int64_t n_colloc;        /* Latin-hypercube collocation points */
    int64_t n_data;          /* initial/boundary points drawn from the reference grid's edges */
    int colloc_include_data; /* also enforce the residual at the data points (as Raissi et al.) */
    int64_t adam_iters;
    double lr, lr_decay;     /* exponential: lr * lr_decay^(k / lr_decay_steps); cosine: to lr * lr_decay */
    int64_t lr_decay_steps;
    hs_lr_schedule schedule;
    double beta1, beta2, eps;
    int64_t lbfgs_iters;
    int lbfgs_history;
    int64_t lbfgs_max_evals; /* 0: 1.25 lbfgs_iters */
    double lbfgs_ftol, lbfgs_gtol;
    double w_data, w_residual;
    int64_t resample_every;  /* residual-based adaptive refinement during Adam (0: off) */
    int64_t resample_candidates, resample_add;
    uint64_t seed;
    int eval_nx, eval_nt;
    double eval_tmax;
    int64_t history_every;   /* record loss and error every N iterations (0: phase ends only) */
} hs_pinn_config;

/* The published setup (Raissi et al. 2019): Burgers, nu = 0.01/pi, 8 x 20 tanh, 100 + 10000 points,
 * L-BFGS; the reference grid 256 x 100. */
void hs_pinn_config_default(hs_pinn_config *c);

typedef struct hs_pinn_record {
    int64_t iteration;
    double loss, loss_residual, loss_data, rel_l2, lr, wall;
    int phase; /* 0 Adam, 1 L-BFGS */
} hs_pinn_record;

typedef struct hs_pinn hs_pinn;

/* 1 when the configuration's PDE has a reference solution on the grid (heat; Burgers for
 * nu >= HS_BURGERS_EXACT_NU_MIN), so that the error is measured; 0 otherwise (Allen-Cahn). */
int hs_pinn_has_reference(const hs_pinn_config *cfg);

/* Bytes the busiest of `nranks` ranks allocates for this configuration: on the device (network
 * batches with their derivative channels, inputs, optimisers) and on the host (the global point
 * sets each rank draws, the reference grid's prediction and error).  hs_pinn_create allocates
 * this much, within a few percent; `check` compares it with what is free. */
void hs_pinn_memory(const hs_pinn_config *cfg, int nranks, double *device, double *host);

/* Build network, points and optimisers on ctx's device; every rank takes its share of the points.
 * Runtime errors only (validate user input before).  Collective over ctx->comm. */
int hs_pinn_create(hs_ctx *ctx, const hs_pinn_config *cfg, hs_pinn **p);
void hs_pinn_destroy(hs_pinn *p);

/* The network (its params vector is what is trained). */
hs_mlp *hs_pinn_network(hs_pinn *p);

/* Loss and its gradient at x (device fp64, nparams; may be the network's params): f is the
 * weighted sum of the mean squared residual and data misfit over all ranks.  Collective. */
int hs_pinn_objective(void *p, const double *x, double *f, double *grad);
/* The parts of the last objective evaluation. */
void hs_pinn_last_loss(const hs_pinn *p, double *residual, double *data);

/* Run up to `iterations` more training iterations (Adam, then L-BFGS); *done is set when training
 * has finished (all iterations, or L-BFGS converged).  Collective. */
int hs_pinn_train(hs_pinn *p, int64_t iterations, int64_t *taken, int *done);
int64_t hs_pinn_iteration(const hs_pinn *p);
int hs_pinn_finished(const hs_pinn *p); /* 1 when training has ended (all iterations, or L-BFGS stopped) */
int64_t hs_pinn_total_iterations(const hs_pinn *p);
const char *hs_pinn_status(const hs_pinn *p); /* why L-BFGS stopped, or the phase */

/* Prediction on the reference grid (host, eval_nt x eval_nx, x fastest; every rank gets it) and the
 * relative L2 error against the exact solution (NaN when the PDE has none).  Collective. */
int hs_pinn_predict(hs_pinn *p, double *u, double *rel_l2);
/* The reference grid and exact values (host, owned by p; exact NULL when unknown). */
void hs_pinn_grid(const hs_pinn *p, const double **x, const double **t, const double **exact);

/* History records (owned by p) and the wall time when the error first reached `threshold`
 * (negative if never); record one now. */
const hs_pinn_record *hs_pinn_history(const hs_pinn *p, int *count);
int hs_pinn_record_now(hs_pinn *p);

/* Checkpoint state: every piece as (name, count) of fp64 host values per rank. */
int hs_pinn_state_count(hs_pinn *p, int piece, const char **name, int64_t *count);
int hs_pinn_state_get(hs_pinn *p, int piece, double *values);
int hs_pinn_state_set(hs_pinn *p, int piece, const double *values);
#define HS_PINN_STATE_PIECES 6

#endif
