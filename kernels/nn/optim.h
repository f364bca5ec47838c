/* Optimisers shared by the PINN, the variational quantum algorithms and the surrogate: Adam and
 * L-BFGS with a strong-Wolfe line search.  Parameter and gradient vectors live in the context's
 * device memory (fp64); scalars are on the host.  Not collective by themselves: an objective that
 * all-reduces its loss and gradient makes every rank take identical steps. */
#ifndef HS_OPTIM_H
#define HS_OPTIM_H

#include <stdint.h>

#include "kernels/context.h"

/* f(x) and its gradient: x and grad are n device values; *f on the host.  Returns an hs status. */
typedef int (*hs_objective)(void *data, const double *x, double *f, double *grad);

/* ---- Adam (Kingma & Ba 2015) with bias correction, and AdamW (Loshchilov & Hutter 2019). */
typedef struct hs_adam hs_adam;
int hs_adam_create(hs_ctx *ctx, size_t n, double beta1, double beta2, double eps, hs_adam **opt);
/* One update x -= lr * mhat / (sqrt(vhat) + eps) from the gradient `grad`. */
int hs_adam_step(hs_adam *opt, double lr, double *x, const double *grad);
/* AdamW: the gradient is g = gscale * grad (gscale folds gradient clipping and the undoing of a
 * loss scale into the same pass), the weights decay first, decoupled from the moments:
 *   x -= lr * wd * x;  x -= lr * mhat / (sqrt(vhat) + eps).
 * With wd = 0 and gscale = 1 it is hs_adam_step, bit for bit. */
int hs_adamw_step(hs_adam *opt, double lr, double wd, double gscale, double *x, const double *grad);
/* Steps taken so far; the moment vectors (device) for checkpoints. */
int64_t hs_adam_steps(const hs_adam *opt);
int hs_adam_state(hs_adam *opt, double **m, double **v, int64_t **step);
void hs_adam_destroy(hs_adam *opt);

/* ---- Learning-rate schedules, shared by the PINN and the surrogate. */
typedef enum { HS_LR_CONSTANT = 0, HS_LR_EXPONENTIAL = 1, HS_LR_COSINE = 2 } hs_lr_schedule;
#define HS_LR_SCHEDULE_CHOICES "constant|exponential|cosine" /* in hs_lr_schedule order */
typedef struct hs_lr_plan {
    hs_lr_schedule kind;
    double lr;            /* the peak rate */
    double decay;         /* exponential: factor per decay_steps; cosine: the final fraction of lr */
    int64_t decay_steps;  /* exponential */
    int64_t total_steps;  /* cosine: the steps over which it decays (from step 0) */
    int64_t warmup_steps; /* linear warm-up: step k < warmup runs at lr(k) (k + 1) / warmup_steps */
} hs_lr_plan;
/* The rate of step k (0-based): constant lr; exponential lr decay^(k / decay_steps); cosine
 * lr (decay + (1 - decay) (1 + cos(pi min(k / total_steps, 1))) / 2); times the warm-up factor. */
double hs_lr_at(const hs_lr_plan *p, int64_t k);

/* ---- L-BFGS (Nocedal & Wright, Alg. 7.4/7.5) with a strong-Wolfe line search (Alg. 3.5/3.6). */
typedef struct hs_lbfgs_opts {
    int history;        /* correction pairs kept (default 10 when 0) */
    int max_iter;       /* iterations (default 1000 when 0) */
    int max_evals;      /* objective evaluations (default 1.25 * max_iter when 0) */
    double gtol;        /* stop when ||g||_inf <= gtol */
    double ftol;        /* stop when the relative decrease of f is below ftol */
    double c1, c2;      /* Wolfe constants (defaults 1e-4, 0.9) */
    int device_vectors; /* 1: keep the vectors on the device even when n is small enough for the
                         * host (the path of large n, for its tests); 0: by size */
} hs_lbfgs_opts;

typedef struct hs_lbfgs_result {
    int iterations, evaluations;
    double f;           /* final objective */
    double gnorm;       /* final ||g||_inf */
    int converged;      /* 1: gtol or ftol met; 0: iteration/evaluation limit */
    const char *reason; /* why it stopped */
} hs_lbfgs_result;

/* Minimise from x (updated in place).  `callback`, if not NULL, is called after every iteration
 * with the iteration number and f; returning non-zero stops the run (e.g. a signal). */
int hs_lbfgs_minimize(hs_ctx *ctx, size_t n, double *x, hs_objective f, void *data, const hs_lbfgs_opts *opts,
                      int (*callback)(void *data, int iteration, double f), hs_lbfgs_result *result);

#endif
