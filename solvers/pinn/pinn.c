/* The pinn solver: physics-informed training of a 1D + time PDE (viscous Burgers by default) driven
 * as a run whose "time" is the training iteration; outputs the field and error on the reference
 * grid and the loss/error history, both on a record axis `iteration` (not a CF time axis). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernels/comm/comm.h"
#include "kernels/memory.h"
#include "physics/pde1d.h"
#include "solvers/pinn/pinn.h"

/* pinn.precision's choices and the dtype of each, in order */
#define PRECISION_CHOICES "f64|f32"
static const hs_dtype g_precision[] = {HS_F64, HS_F32};

static const hs_param_decl g_pinn_params[] = {
    {"pinn", "pde", HS_PARAM_ENUM, "burgers", 0, 0, HS_PDE1D_CHOICES, "equation: burgers (u_t + u u_x = nu u_xx), heat (u_t = nu u_xx), allen_cahn (u_t = nu u_xx - 5u^3 + 5u)"},
    /* nu at most 1e4: on this unit domain the reference grid's first step (t = 0.01) already sees
     * e^(-nu pi^2 / 100) < e^(-987) of the initial profile, and from about 1e154 the squared
     * residual overflows (1e300 passed check and failed the run at iteration 0, exit 1) */
    {"pinn", "nu", HS_PARAM_REAL, "0.003183098861837907", 1e-300, 1e4, NULL, "the PDE's coefficient: viscosity (burgers, default 0.01/pi), diffusivity (heat, default 0.1), u_xx coefficient (allen_cahn, default 1e-4); must be > 0"},
    {"pinn", "depth", HS_PARAM_INT, "8", 1, HS_PINN_MAX_LAYERS, NULL, "hidden layers"},
    {"pinn", "width", HS_PARAM_INT, "20", 1, HS_PINN_MAX_WIDTH, NULL, "units of every hidden layer"},
    {"pinn", "widths", HS_PARAM_INT_LIST, "0", 0, HS_PINN_MAX_WIDTH, NULL, "units of each hidden layer (overrides depth x width; 0: not used)"},
    {"pinn", "activation", HS_PARAM_ENUM, "tanh", 0, 0, "tanh|sin|sigmoid", "hidden-layer activation (smooth: the residual needs second derivatives)"},
    {"pinn", "precision", HS_PARAM_ENUM, "f64", 0, 0, PRECISION_CHOICES, "network arithmetic (the optimisers always work in fp64)"},
    {"pinn", "n_collocation", HS_PARAM_INT, "10000", 1, 1e9, NULL, "Latin-hypercube collocation points where the residual is enforced"},
    {"pinn", "n_boundary", HS_PARAM_INT, "100", 1, HS_NO_MAX, NULL, "initial/boundary points drawn from the reference grid's edges (at least 1: without them the residual alone has many solutions)"},
    {"pinn", "collocation_include_data", HS_PARAM_BOOL, "true", 0, 0, NULL, "also enforce the residual at the initial/boundary points (as the paper)"},
    {"pinn", "adam_iterations", HS_PARAM_INT, "0", 0, 1e9, NULL, "Adam iterations before L-BFGS"},
    {"pinn", "lr", HS_PARAM_REAL, "1e-3", 1e-300, 10, NULL, "Adam learning rate"},
    {"pinn", "lr_schedule", HS_PARAM_ENUM, "constant", 0, 0, HS_LR_SCHEDULE_CHOICES, "learning-rate schedule over the Adam iterations"},
    {"pinn", "lr_decay", HS_PARAM_REAL, "0.1", 1e-300, 1, NULL, "exponential: factor per lr_decay_steps; cosine: final fraction of lr"},
    {"pinn", "lr_decay_steps", HS_PARAM_INT, "1000", 1, HS_NO_MAX, NULL, "exponential schedule: iterations per lr_decay factor"},
    {"pinn", "adam_beta1", HS_PARAM_REAL, "0.9", 0, 0.999999, NULL, "Adam first-moment decay"},
    {"pinn", "adam_beta2", HS_PARAM_REAL, "0.999", 0, 0.999999999, NULL, "Adam second-moment decay"},
    {"pinn", "adam_eps", HS_PARAM_REAL, "1e-8", 1e-300, 1, NULL, "Adam epsilon"},
    {"pinn", "lbfgs_iterations", HS_PARAM_INT, "50000", 0, 2e9, NULL, "L-BFGS iterations at most (after Adam)"},
    {"pinn", "lbfgs_history", HS_PARAM_INT, "50", 1, 1000, NULL, "L-BFGS correction pairs"},
    {"pinn", "lbfgs_max_evals", HS_PARAM_INT, "0", 0, 2e9, NULL, "L-BFGS loss evaluations at most (0: 1.25 x iterations)"},
    {"pinn", "lbfgs_ftol", HS_PARAM_REAL, "2.220446049250313e-16", 0, 1, NULL, "stop L-BFGS when (f_k - f_k+1) / max(|f_k|, |f_k+1|, 1) <= ftol"},
    {"pinn", "lbfgs_gtol", HS_PARAM_REAL, "0", 0, HS_NO_MAX, NULL, "stop L-BFGS when the gradient's max-norm is <= gtol"},
    /* the weights matter relative to each other; above ~1e150 Adam's squared gradient overflowed and
     * the network was never updated (1e300: "line search found no decrease" after 2 iterations, exit 0) */
    {"pinn", "w_data", HS_PARAM_REAL, "1", 0, 1e100, NULL, "weight of the initial/boundary misfit in the loss"},
    {"pinn", "w_residual", HS_PARAM_REAL, "1", 0, 1e100, NULL, "weight of the PDE residual in the loss"},
    {"pinn", "resample_every", HS_PARAM_INT, "0", 0, HS_NO_MAX, NULL, "adaptive refinement: every N Adam iterations add the worst-residual points (0: off)"},
    {"pinn", "resample_candidates", HS_PARAM_INT, "100000", 1, 1e8, NULL, "adaptive refinement: Latin-hypercube candidates evaluated"},
    {"pinn", "resample_add", HS_PARAM_INT, "100", 1, 1e7, NULL, "adaptive refinement: points added each time"},
    {"pinn", "eval_nx", HS_PARAM_INT, "256", 2, 1e6, NULL, "reference grid: points in x (endpoints included)"},
    {"pinn", "eval_nt", HS_PARAM_INT, "100", 1, 1e6, NULL, "reference grid: points in t"},
    {"pinn", "eval_t_max", HS_PARAM_REAL, "0.99", 0, 1, NULL, "reference grid: last time"},
    {"pinn", "history_every", HS_PARAM_INT, "100", 0, HS_NO_MAX, NULL, "record loss and error every N iterations (0: at phase ends)"},
    {"pinn", "history_path", HS_PARAM_STRING, "pinn_history", 0, 0, NULL, "loss/error history file without extension (none: not written)"},
    {"pinn", "target_error", HS_PARAM_REAL, "1e-3", 0, HS_NO_MAX, NULL, "relative L2 error whose first reaching (wall time, iteration) is reported"},
};

static int declare(void) { return hs_params_declare(g_pinn_params, (int)(sizeof g_pinn_params / sizeof *g_pinn_params)); }

typedef struct pinn_state {
    hs_ctx *ctx;
    const hs_params *params;
    hs_pinn *p;
    hs_pinn_config cfg;
    double *u, *err;
    int var_u, var_err, var_exact, exact_written;
    double wall0;
    char rule[96]; /* stop_rule's words */
} pinn_state;

/* ------------------------------------------------------------------ parameters */

static int read_architecture(const hs_params *p, hs_pinn_config *c)
{
    int64_t widths[HS_PINN_MAX_LAYERS + 1];
    int nw = hs_params_int_list(p, "pinn.widths", widths, HS_PINN_MAX_LAYERS + 1);
    int64_t depth = hs_params_int(p, "pinn.depth"), width = hs_params_int(p, "pinn.width");
    int use_list = !(nw == 1 && widths[0] == 0);
    if (use_list) {
        if (nw > HS_PINN_MAX_LAYERS)
            return hs_params_error(p, "pinn.widths", "at most %d hidden layers (got %d widths)", HS_PINN_MAX_LAYERS, nw);
        if (hs_params_is_set(p, "pinn.depth") && nw != depth)
            return hs_params_error(p, "pinn.widths", "inconsistent architecture: %d hidden-layer widths given but pinn.depth = %lld", nw, (long long)depth);
        if (hs_params_is_set(p, "pinn.width"))
            return hs_params_error(p, "pinn.widths", "inconsistent architecture: give either pinn.widths or pinn.width, not both");
        depth = nw;
    }
    c->depth = (int)depth;
    for (int l = 0; l < c->depth; l++) {
        int64_t w = use_list ? widths[l] : width;
        if (w < 1) /* a 0 in a list of widths (the declaration allows 0 for "not used") */
            return hs_params_error(p, "pinn.widths", "hidden layer %d has %lld units (1..%d)", l + 1, (long long)w, HS_PINN_MAX_WIDTH);
        c->width[l] = (int)w;
    }
    c->act = (hs_activation)hs_params_enum(p, "pinn.activation"); /* a prefix of HS_ACTIVATION_CHOICES */
    c->dtype = g_precision[hs_params_enum(p, "pinn.precision")];
    return HS_OK;
}

static int read_points(const hs_params *p, hs_pinn_config *c)
{
    c->n_colloc = hs_params_int(p, "pinn.n_collocation");
    c->n_data = hs_params_int(p, "pinn.n_boundary");
    c->colloc_include_data = hs_params_bool(p, "pinn.collocation_include_data");
    c->eval_nx = (int)hs_params_int(p, "pinn.eval_nx");
    c->eval_nt = (int)hs_params_int(p, "pinn.eval_nt");
    c->eval_tmax = hs_params_real(p, "pinn.eval_t_max");
    /* the grid's times run from 0 to eval_t_max: at 0 every time was 0, a coordinate that is not
     * monotonic (cfchecks refused the file) */
    if (c->eval_nt > 1 && !(c->eval_tmax > 0))
        return hs_params_error(p, "pinn.eval_t_max", "is 0: the %d times of the reference grid (pinn.eval_nt) would all be 0", c->eval_nt);
    int64_t pool = c->eval_nx + 2 * (int64_t)c->eval_nt;
    if (c->n_data > pool)
        return hs_params_error(p, "pinn.n_boundary", "%lld initial/boundary points requested but the reference grid's edges hold %lld "
                               "(eval_nx + 2 eval_nt)", (long long)c->n_data, (long long)pool);
    c->resample_every = hs_params_int(p, "pinn.resample_every");
    c->resample_candidates = hs_params_int(p, "pinn.resample_candidates");
    c->resample_add = hs_params_int(p, "pinn.resample_add");
    if (c->resample_every > 0 && c->resample_add > c->resample_candidates)
        return hs_params_error(p, "pinn.resample_add", "cannot add %lld points out of %lld candidates", (long long)c->resample_add,
                               (long long)c->resample_candidates);
    return HS_OK;
}

static int read_training(const hs_params *p, hs_pinn_config *c)
{
    c->adam_iters = hs_params_int(p, "pinn.adam_iterations");
    c->lr = hs_params_real(p, "pinn.lr");
    c->schedule = (hs_lr_schedule)hs_params_enum(p, "pinn.lr_schedule");
    c->lr_decay = hs_params_real(p, "pinn.lr_decay");
    c->lr_decay_steps = hs_params_int(p, "pinn.lr_decay_steps");
    c->beta1 = hs_params_real(p, "pinn.adam_beta1");
    c->beta2 = hs_params_real(p, "pinn.adam_beta2");
    c->eps = hs_params_real(p, "pinn.adam_eps");
    c->lbfgs_iters = hs_params_int(p, "pinn.lbfgs_iterations");
    c->lbfgs_history = (int)hs_params_int(p, "pinn.lbfgs_history");
    c->lbfgs_max_evals = hs_params_int(p, "pinn.lbfgs_max_evals");
    c->lbfgs_ftol = hs_params_real(p, "pinn.lbfgs_ftol");
    c->lbfgs_gtol = hs_params_real(p, "pinn.lbfgs_gtol");
    c->w_data = hs_params_real(p, "pinn.w_data");
    c->w_residual = hs_params_real(p, "pinn.w_residual");
    c->history_every = hs_params_int(p, "pinn.history_every");
    c->seed = (uint64_t)hs_params_int(p, "run.seed");
    if (c->adam_iters + c->lbfgs_iters <= 0)
        return hs_params_error(p, "pinn.lbfgs_iterations", "no training: adam_iterations + lbfgs_iterations must be positive");
    if (c->w_data + c->w_residual <= 0) return hs_params_error(p, "pinn.w_residual", "both loss weights are zero");
    return HS_OK;
}

/* Keys the configuration would ignore are bad input (hs_params_set_against: a user who sets a
 * schedule's constant means it to act; a file's leftover under a schedule switched on the command
 * line does not): refinement that never happens, a schedule's constants under another schedule,
 * an error target with no reference. */
static int check_ignored(const hs_params *p, const hs_pinn_config *c)
{
    static const char *const rar[] = {"pinn.resample_candidates", "pinn.resample_add"};
    for (int k = 0; k < 2; k++)
        if (c->resample_every == 0 && hs_params_set_against(p, rar[k], "pinn.resample_every"))
            return hs_params_error(p, rar[k], "is set, but pinn.resample_every = 0 (adaptive refinement off) would ignore it");
    /* refinement runs between Adam iterations, at iterations resample_every, 2 resample_every, ... < adam_iterations */
    if (c->resample_every > 0 && c->resample_every >= c->adam_iters)
        return hs_params_error(p, "pinn.resample_every", "refines every %lld Adam iterations, but there are %lld (pinn.adam_iterations): it "
                               "would never refine", (long long)c->resample_every, (long long)c->adam_iters);
    if (c->schedule == HS_LR_CONSTANT && hs_params_set_against(p, "pinn.lr_decay", "pinn.lr_schedule"))
        return hs_params_error(p, "pinn.lr_decay", "is set, but pinn.lr_schedule = constant would ignore it");
    if (c->schedule != HS_LR_EXPONENTIAL && hs_params_set_against(p, "pinn.lr_decay_steps", "pinn.lr_schedule"))
        return hs_params_error(p, "pinn.lr_decay_steps", "is set, but only pinn.lr_schedule = exponential uses it (this run: %s)",
                               hs_params_string(p, "pinn.lr_schedule"));
    if (!hs_pinn_has_reference(c) && hs_params_set_against(p, "pinn.target_error", "pinn.pde"))
        return hs_params_error(p, "pinn.target_error", "is set, but %s with coefficient %g has no reference solution to measure the error against",
                               hs_pde1d_get(c->pde)->name, c->coef);
    return HS_OK;
}

int hs_pinn_config_read(const hs_params *p, hs_pinn_config *c)
{
    hs_pinn_config_default(c);
    int kind = hs_params_enum(p, "pinn.pde"); /* HS_PDE1D_CHOICES is in hs_pde1d_kind's order */
    const hs_pde1d_info *info = hs_pde1d_get(kind);
    c->pde = kind;
    /* pinn.nu's range keeps it positive and finite */
    c->coef = hs_params_is_set(p, "pinn.nu") ? hs_params_real(p, "pinn.nu") : info->default_coef;
    HS_CHECK(hs_params_resolve_default(p, "pinn.nu", c->coef));
    HS_CHECK(read_architecture(p, c));
    HS_CHECK(read_points(p, c));
    HS_CHECK(read_training(p, c));
    return check_ignored(p, c);
}

/* ------------------------------------------------------------------ solver ops */

/* The history file's path (pinn.history_path plus the format's extension: NetCDF where asked or,
 * for auto and none, where the build has it); 0 when there is none. */
static int history_file(const hs_params *params, char *path, size_t len, int *netcdf)
{
    const char *base = hs_params_string(params, "pinn.history_path");
    if (!strcmp(base, "none")) return 0;
    int fmt = hs_params_enum(params, "output.format");
    *netcdf = fmt == HS_OUTPUT_NETCDF || ((fmt == HS_OUTPUT_AUTO || fmt == HS_OUTPUT_NONE) && HS_HAVE_NETCDF);
    snprintf(path, len, "%s%s", base, *netcdf ? ".nc" : ".h5");
    return 1;
}

/* The history file's folder must exist before hours of training, not only when it is written. */
static int check_history_path(const hs_params *params)
{
    char path[8192], out[8192];
    int netcdf;
    if (!history_file(params, path, sizeof path, &netcdf)) return HS_OK;
    int fmt = hs_params_enum(params, "output.format");
    HS_CHECK(hs_driver_check_output_file(params, "pinn.history_path", path, "history file", 0));
    /* the output and the history are written at the end, one over the other (same.nc held the
     * history alone, exit 0) */
    snprintf(out, sizeof out, "%s%s", hs_params_string(params, "output.path"), netcdf ? ".nc" : ".h5");
    if (fmt != HS_OUTPUT_NONE && hs_same_target(path, out))
        return hs_params_error(params, "pinn.history_path", "history file %s is also the output file (output.path)", path);
    if (!hs_params_bool(params, "output.overwrite") && access(path, F_OK) == 0 && strcmp(hs_params_string(params, "run.restart"), "none") == 0)
        return hs_params_error(params, "pinn.history_path", "%s exists and output.overwrite = false", path);
    return HS_OK;
}

/* Refuse a configuration that cannot fit before drawing any point (n_collocation = 1e9 passed
 * check and the run was killed by the OOM killer): the busiest rank's estimate (hs_pinn_memory)
 * against the free device and available host memory, the worst rank's verdict on every rank.
 * The key named is the larger of the two sizes that drive it, the points or the reference grid. */
static int check_memory(hs_ctx *ctx, const hs_params *p, const hs_pinn_config *c)
{
    double device, host;
    hs_pinn_memory(c, ctx->size, &device, &host);
    double grid = (double)c->eval_nx * c->eval_nt, points = (double)c->n_colloc + (double)c->n_data;
    return hs_driver_check_memory(ctx, p, grid > points ? "pinn.eval_nx" : "pinn.n_collocation", "the training",
                                  "use more ranks, fewer points or a smaller network", device, host);
}

/* The input rules (`hpcsim check`): the whole configuration, the memory it needs and the history
 * file's folder; create applies the same rules. */
static int check(hs_ctx *ctx, const hs_params *params)
{
    hs_pinn_config c;
    HS_CHECK(hs_pinn_config_read(params, &c));
    HS_CHECK(check_memory(ctx, params, &c));
    return check_history_path(params);
}

static int create(hs_ctx *ctx, const hs_params *params, void **state)
{
    pinn_state *s = calloc(1, sizeof *s);
    if (!s) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    *state = s;
    s->ctx = ctx, s->params = params;
    HS_CHECK(hs_pinn_config_read(params, &s->cfg));
    HS_CHECK(check_memory(ctx, params, &s->cfg));
    HS_CHECK(check_history_path(params));
    size_t ng = (size_t)s->cfg.eval_nx * s->cfg.eval_nt;
    s->u = malloc(ng * sizeof(double)), s->err = malloc(ng * sizeof(double));
    if (!s->u || !s->err) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    HS_CHECK(hs_pinn_create(ctx, &s->cfg, &s->p));
    s->wall0 = hs_wtime();
    return HS_OK;
}

static int advance(void *state, double until, int64_t max_steps, int64_t *taken)
{
    pinn_state *s = state;
    int64_t it = hs_pinn_iteration(s->p), n = max_steps;
    if (until > it && (int64_t)ceil(until) - it < n) n = (int64_t)ceil(until) - it;
    if (n < 1) n = 1;
    int done;
    return hs_pinn_train(s->p, n, taken, &done);
}

static void progress(void *state, double *time, int64_t *step, double *t_end, double *work)
{
    pinn_state *s = state;
    *step = hs_pinn_iteration(s->p);
    /* a converged L-BFGS ends the run early: the end moves to the iteration reached, so that the
     * driver stops there and the last record is labelled with it (it said t_end: 60 for 35) */
    *time = (double)*step;
    *t_end = hs_pinn_finished(s->p) ? *time : (double)hs_pinn_total_iterations(s->p);
    *work = (double)(s->cfg.n_colloc + s->cfg.n_data);
}

static int describe_output(void *state, hs_output_desc *d)
{
    pinn_state *s = state;
    const double *x, *t;
    hs_pinn_grid(s->p, &x, &t, NULL);
    d->title = "hpcsim physics-informed neural network: prediction and error on the reference grid";
    d->ndim = 2;
    d->dim_names[0] = "x", d->dim_names[1] = "t";
    d->n[0] = s->cfg.eval_nx, d->n[1] = s->cfg.eval_nt;
    d->coords[0] = x, d->coords[1] = t;
    d->coord_units[0] = "1", d->coord_units[1] = "1";
    d->coord_long_names[0] = "position x (dimensionless)";
    d->coord_long_names[1] = "PDE time t (dimensionless)";
    /* t is the plane's second axis, axis "Y" as the writers number them: CF's "T" needs units of a
     * reference time ("s since ..."), which a dimensionless PDE time has not (cfchecks: error 4.4,
     * "Invalid units and/or reference time"), and check_output.py wants X, Y or Z off the record axis */
    d->record_name = "iteration";
    d->record_long_name = "training iteration";
    d->time_units = "1";
    return HS_OK;
}

static int define_vars(void *state, hs_writer *w)
{
    pinn_state *s = state;
    const double *exact;
    hs_pinn_grid(s->p, NULL, NULL, &exact);
    HS_CHECK(hs_writer_def_var(w, "u_pred", "1", "network prediction u(t, x)", NULL, HS_F64, 1, &s->var_u));
    s->var_err = s->var_exact = -1;
    if (exact) {
        HS_CHECK(hs_writer_def_var(w, "abs_error", "1", "pointwise |u_pred - u_exact|", NULL, HS_F64, 1, &s->var_err));
        HS_CHECK(hs_writer_def_var(w, "u_exact", "1", "exact solution u(t, x)", NULL, HS_F64, 0, &s->var_exact));
    }
    char text[256];
    snprintf(text, sizeof text, "%s, coefficient %.17g", hs_pde1d_get(s->cfg.pde)->equation, s->cfg.coef);
    HS_CHECK(hs_writer_attr_text(w, "pde", text));
    s->exact_written = 0;
    return HS_OK;
}

static int write_state(void *state, hs_writer *w)
{
    pinn_state *s = state;
    const double *exact;
    double rel;
    hs_pinn_grid(s->p, NULL, NULL, &exact);
    HS_CHECK(hs_pinn_predict(s->p, s->u, &rel));
    int root = s->ctx->rank == 0;
    HS_CHECK(hs_writer_put(w, s->var_u, root ? s->u : NULL));
    if (exact) {
        size_t ng = (size_t)s->cfg.eval_nx * s->cfg.eval_nt;
        for (size_t i = 0; i < ng; i++) s->err[i] = fabs(s->u[i] - exact[i]);
        HS_CHECK(hs_writer_put(w, s->var_err, root ? s->err : NULL));
        if (!s->exact_written) HS_CHECK(hs_writer_put(w, s->var_exact, root ? exact : NULL));
        s->exact_written = 1;
    }
    return HS_OK;
}

/* The history's variables and records into the open writer w (write_history). */
static int put_history(pinn_state *s, hs_writer *w)
{
    static const char *names[7] = {"loss", "loss_residual", "loss_data", "rel_l2_error", "learning_rate", "wall_time", "phase"};
    static const char *units[7] = {"1", "1", "1", "1", "1", "s", "1"};
    static const char *longs[7] = {"weighted training loss", "mean squared PDE residual", "mean squared initial/boundary misfit",
                                   "relative L2 error on the reference grid", "Adam learning rate (0 during L-BFGS)",
                                   "wall-clock seconds since the start of training", "optimiser: 0 Adam, 1 L-BFGS"};
    /* without a reference solution (Allen-Cahn, Burgers below HS_BURGERS_EXACT_NU_MIN) the error is
     * NaN, which the writer refuses: the history has no rel_l2_error then, as the field file has no
     * abs_error (every such run ended in exit 1 after training, the history lost) */
    const double *exact;
    hs_pinn_grid(s->p, NULL, NULL, &exact);
    int ids[7];
    for (int k = 0; k < 7; k++) {
        ids[k] = -1;
        if (k == 3 && !exact) continue;
        HS_CHECK(hs_writer_def_var(w, names[k], units[k], longs[k], NULL, HS_F64, 1, &ids[k]));
    }
    int count;
    const hs_pinn_record *h = hs_pinn_history(s->p, &count);
    for (int i = 0; i < count; i++) {
        double v[7] = {h[i].loss, h[i].loss_residual, h[i].loss_data, h[i].rel_l2, h[i].lr, h[i].wall, h[i].phase};
        HS_CHECK(hs_writer_begin_step(w, (double)h[i].iteration));
        for (int k = 0; k < 7; k++)
            if (ids[k] >= 0) HS_CHECK(hs_writer_put(w, ids[k], s->ctx->rank == 0 ? &v[k] : NULL));
    }
    return HS_OK;
}

/* The history as a series over the record axis `iteration` (training iterations). */
static int write_history(pinn_state *s)
{
    char path[8192];
    int netcdf;
    if (!history_file(s->params, path, sizeof path, &netcdf)) return HS_OK;
    char *ini = hs_params_to_ini(s->params);
    hs_output_desc d;
    memset(&d, 0, sizeof d);
    d.path = path, d.format = netcdf ? HS_FORMAT_NETCDF : HS_FORMAT_HDF5;
    d.title = "hpcsim physics-informed neural network: training history";
    d.history = "hpcsim run", d.params_ini = ini, d.ndim = 0;
    d.record_name = "iteration", d.record_long_name = "training iteration", d.time_units = "1";
    d.parallel = hs_params_enum(s->params, "output.parallel"); /* hs_output_parallel */
    hs_writer *w = NULL;
    int rc = hs_writer_open(s->ctx, &d, &w);
    free(ini);
    HS_CHECK(rc);
    rc = put_history(s, w);
    if (rc == HS_OK) return hs_writer_close(w);
    /* not left open: HDF5 closed it itself at MPI_Finalize and crashed (a full disk, exit 139) */
    hs_writer_discard(w);
    return rc;
}

static int finish(void *state)
{
    pinn_state *s = state;
    double rel;
    HS_CHECK(hs_pinn_predict(s->p, s->u, &rel));
    HS_CHECK(write_history(s));
    int count;
    const hs_pinn_record *h = hs_pinn_history(s->p, &count);
    double target = hs_params_real(s->params, "pinn.target_error"), t_hit = -1;
    int64_t it_hit = -1;
    for (int i = 0; i < count; i++)
        if (h[i].rel_l2 <= target) {
            t_hit = h[i].wall, it_hit = h[i].iteration;
            break;
        }
    double wall = count ? h[count - 1].wall : hs_wtime() - s->wall0;
    if (s->ctx->rank == 0) {
        const double *exact;
        hs_pinn_grid(s->p, NULL, NULL, &exact);
        char err[64] = "";
        if (exact) snprintf(err, sizeof err, ", relative L2 error %.3e", rel); /* none to print without a reference */
        printf("pinn: %s on %s, %d rank%s: %lld iterations (%s), loss %.3e%s, training wall time %.2f s\n",
               hs_pde1d_get(s->cfg.pde)->name, hs_device_name(s->ctx->device), s->ctx->size, s->ctx->size == 1 ? "" : "s",
               (long long)hs_pinn_iteration(s->p), hs_pinn_status(s->p), count ? h[count - 1].loss : NAN, err, wall);
        if (!exact) printf("pinn: no reference solution for this PDE and coefficient: no error measured\n");
        else if (it_hit >= 0) printf("pinn: error <= %g first recorded at iteration %lld, %.2f s\n", target, (long long)it_hit, t_hit);
        else printf("pinn: error <= %g not reached\n", target);
        fflush(stdout);
    }
    return HS_OK;
}

static int checkpoint(void *state, hs_checkpoint *c)
{
    pinn_state *s = state;
    for (int k = 0; k < HS_PINN_STATE_PIECES; k++) {
        const char *name;
        int64_t count;
        HS_CHECK(hs_pinn_state_count(s->p, k, &name, &count));
        double *v = malloc((size_t)(count + 1) * sizeof *v);
        if (!v) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
        int rc = hs_pinn_state_get(s->p, k, v);
        if (rc == HS_OK) rc = hs_checkpoint_write(c, name, HS_F64, count, v);
        free(v);
        HS_CHECK(rc);
    }
    return HS_OK;
}

static int restore(void *state, hs_checkpoint *c)
{
    pinn_state *s = state;
    for (int k = 0; k < HS_PINN_STATE_PIECES; k++) { /* the clock first: it sizes the later pieces */
        const char *name;
        int64_t count;
        HS_CHECK(hs_pinn_state_count(s->p, k, &name, &count));
        double *v = malloc((size_t)(count + 1) * sizeof *v);
        if (!v) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
        int rc = hs_checkpoint_read(c, name, HS_F64, count, v);
        if (rc == HS_OK) rc = hs_pinn_state_set(s->p, k, v);
        free(v);
        HS_CHECK(rc);
    }
    return HS_OK;
}

static void destroy(void *state)
{
    pinn_state *s = state;
    if (!s) return;
    hs_pinn_destroy(s->p);
    free(s->u), free(s->err);
    free(s);
}

/* A training that ended before its iteration budget: the optimiser's stopping test */
static const char *stop_rule(void *state)
{
    pinn_state *s = state;
    if (!hs_pinn_finished(s->p)) return NULL;
    snprintf(s->rule, sizeof s->rule, "L-BFGS: %s", hs_pinn_status(s->p));
    return s->rule;
}

/* The iteration budget and the reporting may change at a restart; the network, data and loss not. */
static const char *const g_restart_may_change[] = {
    "pinn.lbfgs_iterations", "pinn.lbfgs_max_evals", "pinn.history_every", "pinn.history_path", "pinn.target_error", NULL,
};

const hs_solver_ops hs_pinn_solver = {
    .name = "pinn",
    .summary = "physics-informed neural network for 1D + time PDEs (Burgers; Adam + L-BFGS, data-parallel over ranks)",
    .declare = declare,
    .check = check,
    .create = create,
    .advance = advance,
    .progress = progress,
    .describe_output = describe_output,
    .define_vars = define_vars,
    .write = write_state,
    .finish = finish,
    .checkpoint = checkpoint,
    .restore = restore,
    .destroy = destroy,
    .restart_may_change = g_restart_may_change,
    .work_unit = "point evaluations",
    .stop_rule = stop_rule,
};
