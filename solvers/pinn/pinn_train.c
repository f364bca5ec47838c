/* PINN training core: points, data-parallel loss and gradient, Adam then L-BFGS, error and history. */
#include "solvers/pinn/pinn_train.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/nn/lbfgs.h"
#include "kernels/memory.h"
#include "kernels/nn/optim.h"
#include "kernels/reduce/reduce.h"
#include "physics/burgers_exact.h"
#include "physics/pde1d.h"
#include "solvers/pinn/pinn_loss.h"
#include "solvers/pinn/pinn_points.h"

struct hs_pinn {
    hs_ctx *ctx;
    hs_pinn_config cfg;
    const hs_pde1d_info *info;
    hs_mlp *mlp;
    hs_mlp_batch *bf, *bu, *be; /* collocation (jets), data (values), evaluation grid (values) */
    /* points of this rank: host (t, x pairs) and device (compute precision) */
    double *hf, *hu, *hu_target;
    size_t nf, nu, nf_cap, ne, e_off; /* local counts; this rank's slice of the evaluation grid */
    int64_t nf_global, nu_global;
    void *df, *du, *de;
    double *d_target, *sq;     /* device fp64 */
    hs_comm *gcomm;            /* gradient all-reduce on the device buffer (kernels/comm/comm.h) */
    /* optimisers */
    hs_adam *adam;
    hs_lbfgs *lbfgs;
    double *x_lbfgs;           /* device iterate of L-BFGS */
    int64_t iter, total;
    int lbfgs_started, finished;
    const char *status;
    double last_f, last_res, last_data;
    /* reference grid */
    double *gx, *gt, *exact, *pred;
    /* history */
    hs_pinn_record *hist;
    int nhist, cap_hist;
    double wall0, wall_before;
};

static const double ST = 2.0; /* the network sees t' = 2 t - 1 in [-1, 1], so u_t = 2 u_t' */

void hs_pinn_config_default(hs_pinn_config *c)
{
    memset(c, 0, sizeof *c);
    c->pde = HS_PDE_BURGERS, c->coef = 0.01 / M_PI;
    c->depth = 8;
    for (int l = 0; l < c->depth; l++) c->width[l] = 20;
    c->act = HS_ACT_TANH, c->dtype = HS_F64;
    c->n_colloc = 10000, c->n_data = 100, c->colloc_include_data = 1;
    c->adam_iters = 0, c->lr = 1e-3, c->lr_decay = 0.1, c->lr_decay_steps = 1000, c->schedule = HS_LR_CONSTANT;
    c->beta1 = 0.9, c->beta2 = 0.999, c->eps = 1e-8;
    c->lbfgs_iters = 50000, c->lbfgs_history = 50, c->lbfgs_max_evals = 0, c->lbfgs_ftol = 2.220446049250313e-16;
    c->lbfgs_gtol = 0;
    c->w_data = 1, c->w_residual = 1;
    c->resample_candidates = 100000, c->resample_add = 100;
    c->seed = 1234;
    c->eval_nx = 256, c->eval_nt = 100, c->eval_tmax = 0.99;
    c->history_every = 100;
}

hs_mlp *hs_pinn_network(hs_pinn *p) { return p->mlp; }
int64_t hs_pinn_iteration(const hs_pinn *p) { return p->iter; }
int hs_pinn_finished(const hs_pinn *p) { return p->finished; }
int64_t hs_pinn_total_iterations(const hs_pinn *p) { return p->total; }
const char *hs_pinn_status(const hs_pinn *p) { return p->status; }
void hs_pinn_last_loss(const hs_pinn *p, double *res, double *data) { *res = p->last_res, *data = p->last_data; }

void hs_pinn_grid(const hs_pinn *p, const double **x, const double **t, const double **exact)
{
    if (x) *x = p->gx;
    if (t) *t = p->gt;
    if (exact) *exact = p->exact;
}

const hs_pinn_record *hs_pinn_history(const hs_pinn *p, int *count)
{
    *count = p->nhist;
    return p->hist;
}

/* ------------------------------------------------------------------ points */

static void slice(int64_t n, int rank, int size, size_t *off, size_t *cnt)
{
    int64_t a = n * rank / size, b = n * (rank + 1) / size;
    *off = (size_t)a, *cnt = (size_t)(b - a);
}

/* Upload (t, x) pairs as network inputs (t' = 2 t - 1, x) in the compute precision. */
static int upload_inputs(hs_pinn *p, const double *tx, size_t n, void *dev)
{
    double *in = malloc((2 * n + 1) * sizeof *in);
    if (!in) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
    for (size_t i = 0; i < n; i++) in[2 * i] = ST * tx[2 * i] - 1.0, in[2 * i + 1] = tx[2 * i + 1];
    int rc = hs_nn_from_host(p->ctx, p->cfg.dtype, 2 * n, in, dev);
    free(in);
    return rc;
}

int hs_pinn_has_reference(const hs_pinn_config *c)
{
    /* below HS_BURGERS_EXACT_NU_MIN no Gauss-Hermite rule we can build reaches the integrands'
     * weight: Burgers then has no reference, as Allen-Cahn (a wrong one gave errors off by 0.25) */
    if (c->pde == HS_PDE_BURGERS) return c->coef >= HS_BURGERS_EXACT_NU_MIN;
    const hs_pde1d_info *info = hs_pde1d_get(c->pde);
    return info && info->exact != NULL;
}

static int setup_grid(hs_pinn *p)
{
    const hs_pinn_config *c = &p->cfg;
    size_t ng = (size_t)c->eval_nx * c->eval_nt;
    p->gx = malloc(c->eval_nx * sizeof(double)), p->gt = malloc(c->eval_nt * sizeof(double));
    p->pred = malloc(ng * sizeof(double));
    if (!p->gx || !p->gt || !p->pred) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
    for (int i = 0; i < c->eval_nx; i++) p->gx[i] = -1.0 + 2.0 * i / (c->eval_nx - 1);
    for (int j = 0; j < c->eval_nt; j++) p->gt[j] = c->eval_nt > 1 ? c->eval_tmax * j / (c->eval_nt - 1) : 0.0;
    int burgers = c->pde == HS_PDE_BURGERS;
    if (hs_pinn_has_reference(c)) {
        p->exact = malloc(ng * sizeof(double));
        if (!p->exact) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
        if (burgers) {
            hs_burgers_exact *ex;
            if (hs_burgers_exact_create(c->coef, 0, &ex)) return HS_FAIL(HS_ERR_RUNTIME, "Burgers exact solution set-up failed");
            hs_burgers_exact_grid(ex, c->eval_nx, c->eval_nt, c->eval_tmax, NULL, NULL, p->exact);
            hs_burgers_exact_destroy(ex);
        } else {
            for (int j = 0; j < c->eval_nt; j++)
                for (int i = 0; i < c->eval_nx; i++) p->exact[(size_t)j * c->eval_nx + i] = p->info->exact(c->coef, p->gt[j], p->gx[i]);
        }
    }
    /* this rank's slice of the grid, as network inputs */
    slice((int64_t)ng, p->ctx->rank, p->ctx->size, &p->e_off, &p->ne);
    double *tx = malloc((2 * p->ne + 1) * sizeof *tx);
    if (!tx) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
    for (size_t k = 0; k < p->ne; k++) {
        size_t g = p->e_off + k;
        tx[2 * k] = p->gt[g / c->eval_nx], tx[2 * k + 1] = p->gx[g % c->eval_nx];
    }
    size_t es = hs_dtype_size(c->dtype);
    int rc = hs_mem_alloc(p->ctx, (2 * p->ne + 1) * es, &p->de);
    if (rc == HS_OK) rc = upload_inputs(p, tx, p->ne, p->de);
    free(tx);
    HS_CHECK(rc);
    return hs_mlp_batch_create(p->mlp, NULL, p->ne, &p->be);
}

static int setup_points(hs_pinn *p)
{
    const hs_pinn_config *c = &p->cfg;
    int rank = p->ctx->rank, size = p->ctx->size;
    double *data = NULL, *data_u = NULL, *colloc = NULL;
    HS_CHECK(hs_pinn_data_points(p->info, c->n_data, c->eval_nx, c->eval_nt, c->eval_tmax, c->seed, &data, &data_u));
    int64_t extra = c->colloc_include_data ? c->n_data : 0;
    HS_CHECK(hs_pinn_lhs(c->n_colloc, c->seed + 1, &colloc, extra));
    if (extra) memcpy(colloc + 2 * c->n_colloc, data, 2 * extra * sizeof(double));
    p->nf_global = c->n_colloc + extra, p->nu_global = c->n_data;
    size_t off;
    slice(p->nu_global, rank, size, &off, &p->nu);
    p->hu = malloc((2 * p->nu + 1) * sizeof(double)), p->hu_target = malloc((p->nu + 1) * sizeof(double));
    memcpy(p->hu, data + 2 * off, 2 * p->nu * sizeof(double));
    memcpy(p->hu_target, data_u + off, p->nu * sizeof(double));
    slice(p->nf_global, rank, size, &off, &p->nf);
    /* room for the points adaptive refinement may add: this rank's share of every addition */
    int64_t rounds = c->resample_every > 0 ? c->adam_iters / c->resample_every : 0;
    p->nf_cap = p->nf + (size_t)(rounds * ((c->resample_add + size - 1) / size));
    p->hf = malloc((2 * p->nf_cap + 1) * sizeof(double));
    memcpy(p->hf, colloc + 2 * off, 2 * p->nf * sizeof(double));
    free(data), free(data_u), free(colloc);
    size_t es = hs_dtype_size(c->dtype);
    HS_CHECK(hs_mem_alloc(p->ctx, (2 * p->nf_cap + 1) * es, &p->df));
    HS_CHECK(hs_mem_alloc(p->ctx, (2 * p->nu + 1) * es, &p->du));
    HS_CHECK(hs_mem_alloc(p->ctx, (p->nu + 1) * sizeof(double), (void **)&p->d_target));
    size_t nsq = p->nf_cap > p->nu ? p->nf_cap : p->nu;
    HS_CHECK(hs_mem_alloc(p->ctx, (nsq + 1) * sizeof(double), (void **)&p->sq));
    HS_CHECK(upload_inputs(p, p->hf, p->nf, p->df));
    HS_CHECK(upload_inputs(p, p->hu, p->nu, p->du));
    if (p->nu) HS_CHECK(hs_mem_copy(p->ctx, p->d_target, p->hu_target, p->nu * sizeof(double), HS_COPY_H2D));
    hs_jet jet = {2, {0, 1}, 1, {1}}; /* u, u_t', u_x, u_xx */
    HS_CHECK(hs_mlp_batch_create(p->mlp, &jet, p->nf_cap, &p->bf));
    return hs_mlp_batch_create(p->mlp, NULL, p->nu, &p->bu);
}

/* One hs_mlp_batch's device bytes (kernels/nn/nn.c batch_alloc): per column, each layer's input
 * h[l] and pre-activation z[l], the output and its adjoint, two work buffers of the widest layer. */
static double batch_bytes(const int *w, int nlayers, double es, double channels, double cap)
{
    double per = 2.0 * w[nlayers], maxw = 0;
    for (int l = 0; l < nlayers; l++) {
        per += w[l] + (l < nlayers - 1 ? w[l + 1] : 0);
        if (w[l] > maxw) maxw = w[l];
    }
    if (w[nlayers] > maxw) maxw = w[nlayers];
    per += 2 * maxw;
    return es * channels * cap * per + es * cap;
}

void hs_pinn_memory(const hs_pinn_config *c, int nranks, double *device, double *host)
{
    int w[HS_PINN_MAX_LAYERS + 2], nl = c->depth + 1;
    w[0] = 2;
    for (int l = 0; l < c->depth; l++) w[l + 1] = c->width[l];
    w[nl] = 1;
    double nparams = 0;
    for (int l = 0; l < nl; l++) nparams += (double)w[l] * w[l + 1] + w[l + 1];
    double es = (double)hs_dtype_size(c->dtype), R = nranks > 0 ? nranks : 1;
    double extra = c->colloc_include_data ? (double)c->n_data : 0;
    double rounds = c->resample_every > 0 ? (double)(c->adam_iters / c->resample_every) : 0;
    double nf_global = (double)c->n_colloc + extra;
    double nf_cap = ceil(nf_global / R) + rounds * ceil((double)c->resample_add / R);
    double nu = ceil((double)c->n_data / R), ng = (double)c->eval_nx * c->eval_nt, ne = ceil(ng / R);
    double dev = batch_bytes(w, nl, es, 4, nf_cap) /* u, u_t, u_x, u_xx */ + batch_bytes(w, nl, es, 1, nu) +
                 batch_bytes(w, nl, es, 1, ne);
    dev += es * 2 * (nf_cap + nu + ne) + 8.0 * nu + 8.0 * (nf_cap > nu ? nf_cap : nu);
    if (c->resample_every > 0) dev += es * 2 * nf_cap; /* the candidates' inputs */
    /* parameters, gradient (and their fp32 copies), Adam's moments, L-BFGS's history and vectors */
    dev += nparams * (8.0 * (2 + 2 + 1) + (c->dtype == HS_F32 ? 8 : 0));
    if (c->lbfgs_iters > 0) dev += nparams * 8.0 * (2.0 * c->lbfgs_history + 6);
    /* host: every rank draws the whole collocation set (points and a permutation) and the reference
     * grid's edges, keeps its share, and holds the grid's prediction, exact solution and error */
    double hst = 8.0 * (2 * nf_global + 1) + 8.0 * (double)c->n_colloc + 8.0 * 3 * (c->eval_nx + 2.0 * c->eval_nt);
    hst += 8.0 * 2 * nf_cap + 8.0 * 3 * nu + 8.0 * 4 * ng + 8.0 * 2 * ne;
    if (c->resample_every > 0) hst += 8.0 * 4 * (double)c->resample_candidates;
    *device = dev;
    *host = hst;
}

int hs_pinn_create(hs_ctx *ctx, const hs_pinn_config *cfg, hs_pinn **out)
{
    *out = NULL;
    hs_pinn *p = calloc(1, sizeof *p);
    if (!p) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
    *out = p;
    p->ctx = ctx, p->cfg = *cfg;
    p->info = hs_pde1d_get(cfg->pde);
    if (!p->info) return HS_FAIL(HS_ERR_RUNTIME, "unknown PDE %d", cfg->pde);
    int w[HS_PINN_MAX_LAYERS + 2];
    w[0] = 2;
    for (int l = 0; l < cfg->depth; l++) w[l + 1] = cfg->width[l];
    w[cfg->depth + 1] = 1;
    HS_CHECK(hs_mlp_create(ctx, cfg->dtype, cfg->depth + 1, w, cfg->act, &p->mlp));
    HS_CHECK(hs_mlp_init_xavier(p->mlp, cfg->seed));
    HS_CHECK(setup_points(p));
    HS_CHECK(setup_grid(p));
    size_t np = p->mlp->nparams;
    HS_CHECK(hs_comm_create(ctx, &p->gcomm));
    HS_CHECK(hs_adam_create(ctx, np, cfg->beta1, cfg->beta2, cfg->eps, &p->adam));
    hs_lbfgs_opts o = {cfg->lbfgs_history, (int)cfg->lbfgs_iters, (int)cfg->lbfgs_max_evals, cfg->lbfgs_gtol,
                       cfg->lbfgs_ftol, 1e-4, 0.9, 0};
    if (cfg->lbfgs_iters > 0) HS_CHECK(hs_lbfgs_create(ctx, np, hs_pinn_objective, p, &o, &p->lbfgs));
    HS_CHECK(hs_mem_alloc(ctx, np * sizeof(double), (void **)&p->x_lbfgs));
    p->total = cfg->adam_iters + cfg->lbfgs_iters;
    p->status = cfg->adam_iters > 0 ? "adam" : "l-bfgs";
    p->wall0 = hs_wtime();
    return HS_OK;
}

void hs_pinn_destroy(hs_pinn *p)
{
    if (!p) return;
    hs_ctx *ctx = p->ctx;
    hs_mlp_batch_destroy(p->bf), hs_mlp_batch_destroy(p->bu), hs_mlp_batch_destroy(p->be);
    hs_mem_free(ctx, p->df), hs_mem_free(ctx, p->du), hs_mem_free(ctx, p->de);
    hs_mem_free(ctx, p->d_target), hs_mem_free(ctx, p->sq), hs_mem_free(ctx, p->x_lbfgs);
    hs_adam_destroy(p->adam);
    hs_lbfgs_destroy(p->lbfgs);
    hs_mlp_destroy(p->mlp);
    hs_comm_destroy(p->gcomm);
    free(p->hf), free(p->hu), free(p->hu_target);
    free(p->gx), free(p->gt), free(p->exact), free(p->pred), free(p->hist);
    free(p);
}

/* ------------------------------------------------------------------ loss */

/* Sum of the residual and data terms of this rank's points; gradient accumulated in the network. */
static int local_loss(hs_pinn *p, double *sum_res, double *sum_data)
{
    hs_ctx *ctx = p->ctx;
    const hs_pinn_config *c = &p->cfg;
    hs_mlp *m = p->mlp;
    *sum_res = *sum_data = 0;
    HS_CHECK(hs_mlp_zero_grad(m));
    if (p->nf) {
        HS_CHECK(hs_mlp_forward(p->bf, p->nf, p->df));
        HS_CHECK(hs_pinn_residual_loss(ctx, c->dtype, c->pde, c->coef, ST, 1.0, p->nf, c->w_residual / p->nf_global,
                                       p->bf->out, p->bf->dout, p->sq));
        HS_CHECK(hs_mlp_backward(p->bf));
        HS_CHECK(hs_reduce(ctx, HS_F64, HS_REDUCE_SUM, p->nf, p->sq, sum_res));
    }
    if (p->nu) {
        HS_CHECK(hs_mlp_forward(p->bu, p->nu, p->du));
        HS_CHECK(hs_pinn_data_loss(ctx, c->dtype, p->nu, c->w_data / p->nu_global, p->bu->out, p->d_target, p->bu->dout,
                                   p->sq));
        HS_CHECK(hs_mlp_backward(p->bu));
        HS_CHECK(hs_reduce(ctx, HS_F64, HS_REDUCE_SUM, p->nu, p->sq, sum_data));
    }
    return hs_mlp_finish_grad(m);
}

int hs_pinn_objective(void *data, const double *x, double *f, double *grad)
{
    hs_pinn *p = data;
    hs_mlp *m = p->mlp;
    size_t np = m->nparams, bytes = np * sizeof(double);
    if (x != m->params) HS_CHECK(hs_mem_copy(p->ctx, m->params, x, bytes, HS_COPY_D2D));
    double sums[2];
    HS_CHECK(local_loss(p, &sums[0], &sums[1]));
    if (p->ctx->size > 1) {
        HS_CHECK(hs_comm_allreduce(p->gcomm, HS_F64, HS_COMM_SUM, m->grad, np));
        HS_CHECK(hs_allreduce_sum(p->ctx->comm, sums, 2));
    }
    p->last_res = p->nf_global ? sums[0] / p->nf_global : 0.0;
    p->last_data = p->nu_global ? sums[1] / p->nu_global : 0.0;
    *f = p->cfg.w_residual * p->last_res + p->cfg.w_data * p->last_data;
    p->last_f = *f;
    if (grad && grad != m->grad) HS_CHECK(hs_mem_copy(p->ctx, grad, m->grad, bytes, HS_COPY_D2D));
    return HS_OK;
}

/* ------------------------------------------------------------------ prediction and history */

int hs_pinn_predict(hs_pinn *p, double *u, double *rel_l2)
{
    const hs_pinn_config *c = &p->cfg;
    size_t ng = (size_t)c->eval_nx * c->eval_nt;
    memset(u, 0, ng * sizeof *u);
    if (p->ne) {
        HS_CHECK(hs_mlp_forward(p->be, p->ne, p->de));
        HS_CHECK(hs_nn_to_host(p->ctx, c->dtype, p->ne, p->be->out, u + p->e_off));
    }
    if (p->ctx->size > 1) HS_CHECK(hs_allreduce_sum(p->ctx->comm, u, (int)ng));
    *rel_l2 = NAN;
    if (p->exact) {
        double e = 0, r = 0;
        for (size_t i = 0; i < ng; i++) e += (u[i] - p->exact[i]) * (u[i] - p->exact[i]), r += p->exact[i] * p->exact[i];
        *rel_l2 = sqrt(e / r);
    }
    return HS_OK;
}

static double learning_rate(const hs_pinn_config *c, int64_t k)
{
    hs_lr_plan plan = {c->schedule, c->lr, c->lr_decay, c->lr_decay_steps, c->adam_iters, 0};
    return hs_lr_at(&plan, k);
}

int hs_pinn_record_now(hs_pinn *p)
{
    if (p->nhist == p->cap_hist) {
        int cap = p->cap_hist ? 2 * p->cap_hist : 256;
        hs_pinn_record *h = realloc(p->hist, cap * sizeof *h);
        if (!h) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
        p->hist = h, p->cap_hist = cap;
    }
    int lbfgs = p->iter > p->cfg.adam_iters || (p->iter == p->cfg.adam_iters && p->lbfgs_started);
    /* Adam's last evaluation was at the iterate before its step: the loss is evaluated again so that
     * a record's loss and error describe the same network (the loss lagged one iteration: records 0
     * and 1 had the same loss, and an Adam-only run's summary gave the loss before its last step).
     * L-BFGS's last evaluation is its accepted iterate. */
    if (!lbfgs && p->iter > 0) {
        double f;
        HS_CHECK(hs_pinn_objective(p, p->mlp->params, &f, NULL));
    }
    hs_pinn_record *r = &p->hist[p->nhist++];
    double err;
    HS_CHECK(hs_pinn_predict(p, p->pred, &err));
    *r = (hs_pinn_record){p->iter, p->last_f, p->last_res, p->last_data, err,
                          lbfgs ? 0.0 : learning_rate(&p->cfg, p->iter), p->wall_before + hs_wtime() - p->wall0, lbfgs};
    return HS_OK;
}

static int maybe_record(hs_pinn *p)
{
    int64_t every = p->cfg.history_every;
    if (every > 0 && p->iter % every == 0) return hs_pinn_record_now(p);
    return HS_OK;
}

/* ------------------------------------------------------------------ adaptive refinement */

/* Residual-based adaptive refinement (Lu et al., DeepXDE's RAR): evaluate |r| at fresh Latin-
 * hypercube candidates and add the resample_add worst to the collocation set.  Every rank
 * evaluates its share; the worst are chosen from the gathered values, so that the global point
 * set does not depend on the rank count. */
static int resample(hs_pinn *p, int64_t round)
{
    const hs_pinn_config *c = &p->cfg;
    int64_t nc = c->resample_candidates;
    double *cand = NULL, *r2 = calloc((size_t)nc + 1, sizeof *r2);
    if (!r2) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
    HS_CHECK(hs_pinn_lhs(nc, c->seed + 1000 + (uint64_t)round, &cand, 0));
    size_t off, cnt;
    slice(nc, p->ctx->rank, p->ctx->size, &off, &cnt);
    /* evaluate in pieces through the collocation batch's spare capacity */
    size_t chunk = p->nf_cap, es = hs_dtype_size(c->dtype);
    void *din = NULL;
    int rc = hs_mem_alloc(p->ctx, (2 * chunk + 1) * es, &din);
    for (size_t k = 0; rc == HS_OK && k < cnt; k += chunk) {
        size_t m = cnt - k < chunk ? cnt - k : chunk;
        rc = upload_inputs(p, cand + 2 * (off + k), m, din);
        if (rc == HS_OK) rc = hs_mlp_forward(p->bf, m, din);
        if (rc == HS_OK)
            rc = hs_pinn_residual_loss(p->ctx, c->dtype, c->pde, c->coef, ST, 1.0, m, 1.0, p->bf->out, p->bf->dout, p->sq);
        if (rc == HS_OK) rc = hs_mem_copy(p->ctx, r2 + off + k, p->sq, m * sizeof(double), HS_COPY_D2H);
    }
    hs_mem_free(p->ctx, din);
    if (rc == HS_OK && p->ctx->size > 1) rc = hs_allreduce_sum(p->ctx->comm, r2, (int)nc);
    int64_t *top = NULL;
    if (rc == HS_OK) rc = hs_pinn_top_k(r2, nc, c->resample_add, &top);
    if (rc == HS_OK) {
        /* every rank appends its share of the chosen points */
        size_t aoff, acnt;
        slice(c->resample_add, p->ctx->rank, p->ctx->size, &aoff, &acnt);
        for (size_t k = 0; k < acnt && p->nf < p->nf_cap; k++) {
            int64_t i = top[aoff + k];
            p->hf[2 * p->nf] = cand[2 * i], p->hf[2 * p->nf + 1] = cand[2 * i + 1];
            p->nf++;
        }
        p->nf_global += c->resample_add;
        rc = upload_inputs(p, p->hf, p->nf, p->df);
    }
    free(top), free(cand), free(r2);
    return rc;
}

/* ------------------------------------------------------------------ training */

static int adam_iteration(hs_pinn *p)
{
    const hs_pinn_config *c = &p->cfg;
    if (c->resample_every > 0 && p->iter > 0 && p->iter % c->resample_every == 0)
        HS_CHECK(resample(p, p->iter / c->resample_every));
    double f;
    HS_CHECK(hs_pinn_objective(p, p->mlp->params, &f, p->mlp->grad));
    /* at iteration 0 no step has been taken: the learning rate is not the cause */
    if (!isfinite(f) && p->iter == 0) return HS_FAIL(HS_ERR_RUNTIME, "pinn: the untrained network's loss is %g (pinn.w_residual, pinn.w_data too large?)", f);
    if (!isfinite(f)) return HS_FAIL(HS_ERR_RUNTIME, "pinn: the loss became %g at Adam iteration %lld (lower pinn.lr)", f, (long long)p->iter);
    HS_CHECK(hs_adam_step(p->adam, learning_rate(c, p->iter), p->mlp->params, p->mlp->grad));
    p->iter++;
    return maybe_record(p);
}

static int lbfgs_callback(void *data, int iteration, double f)
{
    hs_pinn *p = data;
    (void)iteration, (void)f;
    p->iter++;
    if (p->cfg.history_every > 0 && p->iter % p->cfg.history_every == 0) {
        /* the last evaluation was the accepted point, so the network holds the iterate */
        if (hs_pinn_record_now(p) != HS_OK) return 1;
    }
    return 0;
}

static int lbfgs_chunk(hs_pinn *p, int64_t n)
{
    hs_mlp *m = p->mlp;
    size_t bytes = m->nparams * sizeof(double);
    if (!p->lbfgs_started) {
        HS_CHECK(hs_mem_copy(p->ctx, p->x_lbfgs, m->params, bytes, HS_COPY_D2D));
        p->lbfgs_started = 1;
    }
    hs_lbfgs_result r;
    int64_t before = p->iter;
    HS_CHECK(hs_lbfgs_run(p->lbfgs, p->x_lbfgs, (int)n, lbfgs_callback, &r));
    HS_CHECK(hs_mem_copy(p->ctx, m->params, p->x_lbfgs, bytes, HS_COPY_D2D));
    if (p->iter == before && !hs_lbfgs_finished(p->lbfgs)) return HS_FAIL(HS_ERR_RUNTIME, "pinn: L-BFGS made no progress");
    p->status = r.reason;
    p->last_f = r.f;
    if (hs_lbfgs_finished(p->lbfgs)) {
        p->finished = 1;
        if (p->cfg.history_every <= 0 || p->iter % p->cfg.history_every != 0) HS_CHECK(hs_pinn_record_now(p));
    }
    return HS_OK;
}

int hs_pinn_train(hs_pinn *p, int64_t iterations, int64_t *taken, int *done)
{
    int64_t start = p->iter;
    const hs_pinn_config *c = &p->cfg;
    if (p->iter == 0 && p->nhist == 0) { /* the untrained network, for the history's first row */
        double f;
        HS_CHECK(hs_pinn_objective(p, p->mlp->params, &f, NULL));
        HS_CHECK(hs_pinn_record_now(p));
    }
    while (!p->finished && p->iter - start < iterations && p->iter < p->total) {
        if (p->iter < c->adam_iters) {
            HS_CHECK(adam_iteration(p));
            if (p->iter == c->adam_iters) {
                p->status = "l-bfgs";
                if (c->history_every <= 0 || p->iter % c->history_every != 0) HS_CHECK(hs_pinn_record_now(p));
            }
        } else {
            HS_CHECK(lbfgs_chunk(p, iterations - (p->iter - start)));
        }
    }
    if (p->iter >= p->total && !p->finished) {
        p->finished = 1;
        if (c->lbfgs_iters == 0) p->status = "adam finished";
        if (c->history_every <= 0 || p->iter % c->history_every != 0) HS_CHECK(hs_pinn_record_now(p));
    }
    *taken = p->iter - start;
    *done = p->finished;
    return HS_OK;
}

/* ------------------------------------------------------------------ checkpoint state */

enum { CLOCK_LEN = 8 };
static const char *const g_piece_names[HS_PINN_STATE_PIECES] = {"pinn_clock", "pinn_params", "pinn_adam", "pinn_lbfgs",
                                                                "pinn_history", "pinn_colloc"};

int hs_pinn_state_count(hs_pinn *p, int piece, const char **name, int64_t *count)
{
    size_t np = p->mlp->nparams;
    *name = g_piece_names[piece];
    switch (piece) {
    case 0: *count = CLOCK_LEN; break;
    case 1: *count = (int64_t)(2 * np); break;
    case 2: *count = (int64_t)(2 * np); break;
    case 3: *count = p->lbfgs ? (int64_t)hs_lbfgs_state_count(p->lbfgs) : 0; break;
    case 4: *count = (int64_t)p->nhist * 9; break;
    default: *count = (int64_t)(2 * p->nf); break;
    }
    return HS_OK;
}

int hs_pinn_state_get(hs_pinn *p, int piece, double *v)
{
    hs_ctx *ctx = p->ctx;
    size_t np = p->mlp->nparams, bytes = np * sizeof(double);
    double *m, *vv;
    int64_t *step;
    switch (piece) {
    case 0: {
        HS_CHECK(hs_adam_state(p->adam, &m, &vv, &step));
        double clock[CLOCK_LEN] = {(double)p->iter, (double)*step, p->lbfgs_started, p->finished, (double)p->nhist,
                                   (double)p->nf, (double)p->nf_global, p->wall_before + hs_wtime() - p->wall0};
        memcpy(v, clock, sizeof clock);
        return HS_OK;
    }
    case 1:
        HS_CHECK(hs_mem_copy(ctx, v, p->mlp->params, bytes, HS_COPY_D2H));
        return hs_mem_copy(ctx, v + np, p->x_lbfgs, bytes, HS_COPY_D2H);
    case 2:
        HS_CHECK(hs_adam_state(p->adam, &m, &vv, &step));
        HS_CHECK(hs_mem_copy(ctx, v, m, bytes, HS_COPY_D2H));
        return hs_mem_copy(ctx, v + np, vv, bytes, HS_COPY_D2H);
    case 3: return p->lbfgs ? hs_lbfgs_save(p->lbfgs, v) : HS_OK;
    case 4:
        for (int i = 0; i < p->nhist; i++) {
            const hs_pinn_record *r = &p->hist[i];
            double row[9] = {(double)r->iteration, r->loss, r->loss_residual, r->loss_data, r->rel_l2, r->lr, r->wall, r->phase, 0};
            memcpy(v + 9 * i, row, sizeof row);
        }
        return HS_OK;
    default: memcpy(v, p->hf, 2 * p->nf * sizeof(double)); return HS_OK;
    }
}

int hs_pinn_state_set(hs_pinn *p, int piece, const double *v)
{
    hs_ctx *ctx = p->ctx;
    size_t np = p->mlp->nparams, bytes = np * sizeof(double);
    double *m, *vv;
    int64_t *step;
    switch (piece) {
    case 0:
        HS_CHECK(hs_adam_state(p->adam, &m, &vv, &step));
        if (v[5] > (double)p->nf_cap) return HS_FAIL(HS_ERR_RUNTIME, "pinn: the checkpoint has more collocation points than this set-up");
        p->iter = (int64_t)v[0], *step = (int64_t)v[1], p->lbfgs_started = (int)v[2], p->finished = (int)v[3];
        p->nhist = 0;
        p->nf = (size_t)v[5], p->nf_global = (int64_t)v[6], p->wall_before = v[7], p->wall0 = hs_wtime();
        if ((int)v[4] > p->cap_hist) {
            hs_pinn_record *h = realloc(p->hist, (size_t)v[4] * sizeof *h);
            if (!h) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
            p->hist = h, p->cap_hist = (int)v[4];
        }
        p->nhist = (int)v[4];
        p->status = p->iter < p->cfg.adam_iters ? "adam" : "l-bfgs";
        return HS_OK;
    case 1:
        HS_CHECK(hs_mem_copy(ctx, p->mlp->params, v, bytes, HS_COPY_H2D));
        return hs_mem_copy(ctx, p->x_lbfgs, v + np, bytes, HS_COPY_H2D);
    case 2:
        HS_CHECK(hs_adam_state(p->adam, &m, &vv, &step));
        HS_CHECK(hs_mem_copy(ctx, m, v, bytes, HS_COPY_H2D));
        return hs_mem_copy(ctx, vv, v + np, bytes, HS_COPY_H2D);
    case 3: return p->lbfgs ? hs_lbfgs_load(p->lbfgs, v) : HS_OK;
    case 4:
        for (int i = 0; i < p->nhist; i++) {
            const double *row = v + 9 * i;
            p->hist[i] = (hs_pinn_record){(int64_t)row[0], row[1], row[2], row[3], row[4], row[5], row[6], (int)row[7]};
        }
        return HS_OK;
    default:
        memcpy(p->hf, v, 2 * p->nf * sizeof(double));
        return upload_inputs(p, p->hf, p->nf, p->df);
    }
}
