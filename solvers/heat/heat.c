/* The heat solver: rho c dT/dt = div(k grad T) + Q on a uniform grid, explicit or implicit in time. */
#include "solvers/heat/heat.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/blas/blas.h"
#include "kernels/grid/grid.h"
#include "kernels/memory.h"
#include "kernels/sparse/pcg.h"
#include "physics/heat_exact.h"
#include "solvers/heat/heat_setup.h"
#include "solvers/heat/heat_stencil.h"

typedef struct heat {
    hs_ctx *ctx;
    hs_heat_config cfg;
    hs_decomp *d;
    hs_field *T, *Tn, *K, *Q, *W; /* temperature (two buffers), conductivity, source, solve work */
    hs_heat_op op;
    hs_bc bc[3][2];               /* the walls of T, from the configuration */
    double dt, dt_limit, dt_step_now;
    hs_clock clk; /* the simulated time (s) */
    int64_t step;
    hs_box interior, shell[6];
    int nshell;
    /* implicit solves */
    double theta;
    double *b, *x, *g, *diag; /* contiguous interior vectors on the device */
    int x_is_T;               /* x already holds T's interior (the last solve's answer) */
    hs_precond precond;
    int have_precond;
    hs_pcg_workspace work; /* CG vectors kept across steps */
    hs_linop linop;
    int64_t pcg_iterations;
    double precond_dt;
    /* output */
    double *coords[3];
    double *edges[3]; /* cell edges i * dx, the output's bounds */
    double *host;
    double *k_host;      /* local conductivity (NULL when constant) */
    double kmax;         /* largest conductivity over all ranks */
    int var_T;
} heat;

static int declare(void) { return hs_heat_declare(); }

/* ---------------------------------------------------------------- time stepping */

static int explicit_step(heat *h, double dt)
{
    /* wall ghosts depend only on the cells next to the wall, so they can be set before the
     * exchange; star stencils never read the corner ghosts that would need the fresh halos */
    HS_CHECK(hs_field_fill_ghosts(h->T, h->bc, h->cfg.dx, 0));
    if (h->nshell == 0) {
        HS_CHECK(hs_heat_apply(h->T, &h->op, 1.0, dt, dt, &h->interior, h->Tn->data, 0));
    } else {
        HS_CHECK(hs_halo_exchange_begin(h->T));
        /* the inside needs no halo: update it while the messages travel */
        HS_CHECK(hs_heat_apply(h->T, &h->op, 1.0, dt, dt, &h->interior, h->Tn->data, 0));
        HS_CHECK(hs_halo_exchange_end(h->T));
        for (int i = 0; i < h->nshell; i++) HS_CHECK(hs_heat_apply(h->T, &h->op, 1.0, dt, dt, &h->shell[i], h->Tn->data, 0));
    }
    hs_field *t = h->T;
    h->T = h->Tn;
    h->Tn = t;
    return HS_OK;
}

/* y = x - theta dt L0(x): the implicit operator with homogeneous boundary values (SPD). */
static int implicit_apply(void *data, const double *x, double *y)
{
    heat *h = data;
    hs_heat_op lin = h->op;
    lin.q = NULL;
    lin.q_const = 0;
    HS_CHECK(hs_field_load_interior(h->W, x));
    HS_CHECK(hs_halo_exchange(h->W));
    HS_CHECK(hs_field_fill_ghosts(h->W, h->bc, h->cfg.dx, 1));
    hs_box all = hs_field_interior_box(h->W);
    return hs_heat_apply(h->W, &lin, 1.0, -h->theta * h->dt_step_now, 0.0, &all, y, 1);
}

static int implicit_diagonal(void *data, double *d)
{
    heat *h = data;
    return hs_mem_copy(h->ctx, d, h->diag, (size_t)h->linop.n_local * sizeof(double), HS_COPY_D2D);
}

/* Jacobi diagonal of x - theta dt L0(x) with the cell's own conductivity: exact for constant k
 * away from walls, and a fine preconditioner otherwise. */
static int build_diagonal(heat *h, const double *k_host)
{
    const hs_heat_config *c = &h->cfg;
    const hs_decomp *d = h->d;
    size_t n = (size_t)h->linop.n_local;
    double *diag = malloc(n * sizeof *diag);
    if (!diag) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    double weight = c->order == 2 ? 2.0 : 30.0 / 12.0, rhoc = c->rho * c->cp;
    for (int64_t kk = 0; kk < d->local[2]; kk++)
        for (int64_t j = 0; j < d->local[1]; j++)
            for (int64_t i = 0; i < d->local[0]; i++) {
                size_t idx = (size_t)((kk * d->local[1] + j) * d->local[0] + i);
                int64_t ijk[3] = {i, j, kk};
                double s = 0;
                for (int dim = 0; dim < c->ndim; dim++) {
                    double w = weight;
                    int64_t g = ijk[dim] + d->offset[dim];
                    /* mirrored walls: Dirichlet ghosts add, Neumann ghosts cancel one neighbour */
                    if (c->order == 2 && g == 0 && c->bc[dim][0] != HS_BC_PERIODIC) w += c->bc[dim][0] == HS_BC_DIRICHLET ? 1 : -1;
                    if (c->order == 2 && g == c->n[dim] - 1 && c->bc[dim][1] != HS_BC_PERIODIC)
                        w += c->bc[dim][1] == HS_BC_DIRICHLET ? 1 : -1;
                    s += w / (c->dx[dim] * c->dx[dim]);
                }
                double kc = k_host ? k_host[idx] : c->k;
                diag[idx] = 1.0 + h->theta * h->dt_step_now * kc / rhoc * s;
            }
    int rc = hs_mem_copy(h->ctx, h->diag, diag, n * sizeof *diag, HS_COPY_H2D);
    free(diag);
    return rc;
}

static int implicit_step(heat *h, double dt)
{
    hs_box all = hs_field_interior_box(h->T);
    size_t n = (size_t)h->linop.n_local;
    h->dt_step_now = dt;
    if (!h->have_precond || dt != h->precond_dt) {
        if (h->have_precond) hs_precond_destroy(&h->precond);
        HS_CHECK(build_diagonal(h, h->k_host));
        HS_CHECK(hs_precond_create(&h->linop, HS_PRECOND_JACOBI, &h->precond));
        h->have_precond = 1;
        h->precond_dt = dt;
    }
    /* b = T + (1 - theta) dt L(T) + dt q + theta dt g, with g the walls' contribution at n+1 */
    HS_CHECK(hs_halo_exchange(h->T));
    HS_CHECK(hs_field_fill_ghosts(h->T, h->bc, h->cfg.dx, 0));
    HS_CHECK(hs_heat_apply(h->T, &h->op, 1.0, (1.0 - h->theta) * dt, dt, &all, h->b, 1));
    if (h->g) HS_CHECK(hs_axpy(h->ctx, HS_F64, n, h->theta * dt, h->g, h->b));
    /* start from T^n: the previous solve left it in x, otherwise copy it out of the field */
    if (!h->x_is_T) HS_CHECK(hs_heat_apply(h->T, &h->op, 1.0, 0.0, 0.0, &all, h->x, 1));
    hs_pcg_opts o = hs_pcg_default_opts();
    o.rtol = h->cfg.pcg_rtol;
    o.max_iter = h->cfg.pcg_max_iter;
    o.custom = &h->precond;
    o.work = &h->work;
    hs_pcg_result res;
    HS_CHECK(hs_pcg_solve(&h->linop, h->b, h->x, &o, &res));
    h->pcg_iterations += res.iterations;
    int converged = res.converged;
    double resid = res.final_residual;
    hs_pcg_result_free(&res);
    if (!converged)
        return HS_FAIL(HS_ERR_RUNTIME, "heat: CG did not reach heat.pcg_rtol = %g in %d iterations at step %lld (residual %g)",
                       h->cfg.pcg_rtol, h->cfg.pcg_max_iter, (long long)h->step, resid);
    HS_CHECK(hs_field_load_interior(h->T, h->x));
    h->x_is_T = 1;
    return HS_OK;
}

/* ---------------------------------------------------------------- ops */

static int advance(void *state, double until, int64_t max_steps, int64_t *taken)
{
    heat *h = state;
    *taken = 0;
    if (until > h->cfg.t_end) until = h->cfg.t_end;
    while (*taken < max_steps && h->clk.time < until) {
        double dt = hs_step_toward(h->clk.time, h->dt, until); /* 0: arrived (a rounding sliver short) */
        if (dt == 0) {
            hs_clock_set(&h->clk, until);
            break;
        }
        if (h->cfg.scheme == HS_HEAT_EXPLICIT) HS_CHECK(explicit_step(h, dt));
        else HS_CHECK(implicit_step(h, dt));
        hs_clock_step(&h->clk, dt, h->dt, until);
        h->step++;
        (*taken)++;
    }
    return HS_OK;
}

static void progress(void *state, double *time, int64_t *step, double *t_end, double *work)
{
    heat *h = state;
    *time = h->clk.time;
    *step = h->step;
    *t_end = h->cfg.t_end;
    *work = (double)h->cfg.n[0] * (double)h->cfg.n[1] * (double)h->cfg.n[2];
}

/* Fill a field's interior from a pointwise function of the cell centre, through the host. */
static int fill_interior(heat *h, hs_field *f, double (*fn)(const hs_heat_config *, const double *), const double *values)
{
    const hs_decomp *d = h->d;
    for (int64_t k = 0; k < d->local[2]; k++)
        for (int64_t j = 0; j < d->local[1]; j++)
            for (int64_t i = 0; i < d->local[0]; i++) {
                double x[3] = {hs_heat_coord(&h->cfg, 0, i + d->offset[0]), hs_heat_coord(&h->cfg, 1, j + d->offset[1]),
                               hs_heat_coord(&h->cfg, 2, k + d->offset[2])};
                size_t idx = (size_t)((k * d->local[1] + j) * d->local[0] + i);
                h->host[idx] = values ? values[idx] : fn(&h->cfg, x);
            }
    return hs_field_set_interior(f, h->host);
}

/* The stability limit of forward Euler: dt alpha lambda_max <= 2, with lambda_max = sum_d c / dx_d^2,
 * c = 4 for the 2nd-order and 16/3 for the 4th-order stencil. */
static double explicit_limit(const hs_heat_config *c, double kmax)
{
    double lam = 0, coef = c->order == 2 ? 4.0 : 16.0 / 3.0;
    for (int d = 0; d < c->ndim; d++) lam += coef / (c->dx[d] * c->dx[d]);
    return 2.0 / (kmax / (c->rho * c->cp) * lam);
}

static int setup_conductivity(heat *h, const hs_params *p, double *kmax)
{
    const hs_heat_config *c = &h->cfg;
    *kmax = c->k;
    if (c->cond_kind == HS_HEAT_K_CONSTANT) return HS_OK;
    size_t n = (size_t)h->linop.n_local;
    if (!h->k_host) h->k_host = malloc((n ? n : 1) * sizeof(double));
    if (!h->k_host) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    HS_CHECK(hs_field_create(h->d, HS_F64, h->cfg.order / 2, &h->K));
    HS_CHECK(fill_interior(h, h->K, hs_heat_k_at, c->cond_kind == HS_HEAT_K_FILE ? h->k_host : NULL));
    if (c->cond_kind == HS_HEAT_K_LAYERED)
        for (size_t i = 0; i < n; i++) h->k_host[i] = h->host[i];
    *kmax = h->kmax;
    /* ghosts of k: neighbours' values, and the cell's own value mirrored at walls (no flux change) */
    HS_CHECK(hs_halo_exchange(h->K));
    hs_bc mirror[3][2];
    memset(mirror, 0, sizeof mirror);
    for (int d = 0; d < 3; d++)
        for (int s = 0; s < 2; s++) mirror[d][s].kind = c->bc[d][s] == HS_BC_PERIODIC ? HS_BC_PERIODIC : HS_BC_NEUMANN;
    HS_CHECK(hs_field_fill_ghosts(h->K, mirror, c->dx, 1));
    h->op.k = h->K->data;
    h->op.inv_rhoc = 1.0 / (c->rho * c->cp);
    return HS_OK;
}

static int setup_source(heat *h)
{
    const hs_heat_config *c = &h->cfg;
    double rhoc = c->rho * c->cp;
    if (c->source == HS_HEAT_SOURCE_CONSTANT) h->op.q_const = c->Q / rhoc;
    if (c->source != HS_HEAT_SOURCE_GAUSSIAN) return HS_OK;
    HS_CHECK(hs_field_create(h->d, HS_F64, h->cfg.order / 2, &h->Q));
    HS_CHECK(fill_interior(h, h->Q, hs_heat_source_at, NULL));
    HS_CHECK(hs_scal(h->ctx, HS_F64, h->Q->count, 1.0 / rhoc, h->Q->data));
    h->op.q = h->Q->data;
    return HS_OK;
}

/* g = L(0) with the walls' values: the affine part of the operator, constant in time. */
static int setup_implicit(heat *h)
{
    size_t n = (size_t)h->linop.n_local, bytes = n * sizeof(double);
    h->theta = h->cfg.scheme == HS_HEAT_CRANK_NICOLSON ? 0.5 : 1.0;
    HS_CHECK(hs_field_create(h->d, HS_F64, h->cfg.order / 2, &h->W));
    HS_CHECK(hs_mem_alloc(h->ctx, bytes, (void **)&h->b));
    HS_CHECK(hs_mem_alloc(h->ctx, bytes, (void **)&h->x));
    HS_CHECK(hs_mem_alloc(h->ctx, bytes, (void **)&h->diag));
    HS_CHECK(hs_mem_alloc(h->ctx, bytes, (void **)&h->g));
    h->linop = (hs_linop){h->ctx, h->ctx->comm, (int64_t)n, h, implicit_apply, implicit_diagonal};
    HS_CHECK(hs_field_fill(h->W, 0.0));
    HS_CHECK(hs_field_fill_ghosts(h->W, h->bc, h->cfg.dx, 0));
    hs_heat_op lin = h->op;
    lin.q = NULL;
    lin.q_const = 0;
    hs_box all = hs_field_interior_box(h->W);
    return hs_heat_apply(h->W, &lin, 0.0, 1.0, 0.0, &all, h->g, 1);
}

static int setup_time_step(heat *h, const hs_params *p)
{
    const hs_heat_config *c = &h->cfg;
    h->dt_limit = explicit_limit(c, h->kmax);
    if (c->scheme == HS_HEAT_EXPLICIT) {
        if (c->dt_user > h->dt_limit)
            return hs_params_error(p, "heat.dt", "%g s is unstable for the explicit scheme: the limit of this grid and "
                                                 "conductivity is %.6g s (use dt = 0 for an automatic step, or an implicit scheme)",
                                   c->dt_user, h->dt_limit);
        h->dt = c->dt_user > 0 ? c->dt_user : c->cfl * h->dt_limit;
        /* an automatic step below the resolution of the time at t_end never gets there (k = 1e300
         * stepped 1e-303 s at a time) */
        if (c->dt_user == 0 && hs_step_below_time_resolution(h->dt, c->t_end))
            return hs_params_error(p, c->cond_kind == HS_HEAT_K_CONSTANT ? "heat.k" : c->cond_kind == HS_HEAT_K_LAYERED ? "heat.layer_k" : "heat.k_file",
                                   "the explicit step is %g s, below the resolution of the time near heat.t_end = %g s: the run could never end "
                                   "(an implicit scheme takes larger steps)", h->dt, c->t_end);
    } else {
        h->dt = c->dt_user > 0 ? c->dt_user : c->t_end / 100;
    }
    if (!(h->dt > 0)) h->dt = 1.0; /* t_end = 0: nothing to step */
    return HS_OK;
}

/* Refuse a grid that cannot fit before allocating any of it: the fields on the device, the host
 * staging buffers, and on rank 0 the whole-field gather of the output (and of a k file).  Every
 * rank learns the worst rank's verdict, so all of them stop together.  Collective. */
static int check_memory(heat *h, const hs_params *p)
{
    const hs_heat_config *c = &h->cfg;
    int halo = c->order / 2;
    double with_ghosts = 1, interior = 1, global = 1;
    for (int d = 0; d < c->ndim; d++) {
        with_ghosts *= (double)(h->d->local[d] + 2 * halo);
        interior *= (double)h->d->local[d];
        global *= (double)c->n[d];
    }
    int fields = 2 + (c->cond_kind != HS_HEAT_K_CONSTANT) + (c->source == HS_HEAT_SOURCE_GAUSSIAN);
    double vectors = 0;
    if (c->scheme != HS_HEAT_EXPLICIT) {
        fields += 1;   /* W */
        vectors = 8;   /* b, x, diag, g and the CG's four work vectors */
    }
    double device = 8.0 * (fields * with_ghosts + vectors * interior);
    double host = 8.0 * interior * (1 + (c->cond_kind != HS_HEAT_K_CONSTANT));
    if (c->cond_kind == HS_HEAT_K_FILE) host += 8.0 * global;
    if (h->ctx->rank == 0 && hs_params_enum(p, "output.format") != HS_OUTPUT_NONE) host += 16.0 * global;
    const char *key = hs_params_is_set(p, "heat.n") ? "heat.n" : "heat.ndim";
    return hs_driver_check_memory(h->ctx, p, key, "the grid", "use more ranks or a smaller grid", device, host);
}

/* Every input rule of the solver, without allocating the fields: the configuration, the split
 * over the ranks, the memory the run needs, the conductivity (read and checked when it comes
 * from a file) and the time step.  `hpcsim check` runs exactly this; `run` runs it first.
 * Collective. */
static int validate(heat *h, const hs_params *p)
{
    HS_CHECK(hs_heat_config_read(p, &h->cfg));
    hs_heat_config *c = &h->cfg;
    int periodic[3];
    for (int d = 0; d < 3; d++) periodic[d] = c->bc[d][0] == HS_BC_PERIODIC;
    int rc = hs_decomp_create(h->ctx, c->ndim, c->n, periodic, c->procs, c->order / 2, &h->d);
    if (rc == HS_ERR_INPUT) {
        /* say it in terms of the user's keys and file lines */
        return hs_params_error_rekey(p, hs_params_is_set(p, "heat.procs") ? "heat.procs" : "heat.n");
    }
    HS_CHECK(rc);
    HS_CHECK(check_memory(h, p));
    h->linop.n_local = h->d->local[0] * h->d->local[1] * h->d->local[2];
    h->kmax = c->k;
    if (c->cond_kind == HS_HEAT_K_LAYERED) { /* the layers that hold cells, as the field will */
        double m = 0;
        const hs_decomp *d = h->d;
        for (int64_t k = 0; k < d->local[2]; k++)
            for (int64_t j = 0; j < d->local[1]; j++)
                for (int64_t i = 0; i < d->local[0]; i++) {
                    double x[3] = {hs_heat_coord(c, 0, i + d->offset[0]), hs_heat_coord(c, 1, j + d->offset[1]),
                                   hs_heat_coord(c, 2, k + d->offset[2])};
                    m = fmax(m, hs_heat_k_at(c, x));
                }
        HS_CHECK(hs_allreduce_max(h->ctx->comm, &m, 1));
        h->kmax = m;
    }
    if (c->cond_kind == HS_HEAT_K_FILE) {
        size_t n = (size_t)h->linop.n_local;
        h->k_host = malloc((n ? n : 1) * sizeof(double));
        if (!h->k_host) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
        rc = hs_heat_read_k(p, c, h->d->offset, h->d->local, h->k_host);
        /* a bad value on one rank's part is an input error for all of them */
        int bad = rc != HS_OK;
        HS_CHECK(hs_allreduce_int_max(h->ctx->comm, &bad, 1));
        if (bad) return rc != HS_OK ? rc : hs_params_error(p, "heat.k_file", "'%s' holds values that are not positive", c->k_file);
        double m = 0;
        for (size_t i = 0; i < n; i++) m = fmax(m, h->k_host[i]);
        HS_CHECK(hs_allreduce_max(h->ctx->comm, &m, 1));
        h->kmax = m;
        if (!isfinite(h->kmax / (c->rho * c->cp)))
            return hs_params_error(p, "heat.k_file", "k / (rho cp) = %g / %g leaves the range of doubles", h->kmax,
                                   c->rho * c->cp);
    }
    return setup_time_step(h, p);
}

static void destroy(void *state);

static int check(hs_ctx *ctx, const hs_params *p)
{
    heat *h = calloc(1, sizeof *h);
    if (!h) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    h->ctx = ctx;
    int rc = validate(h, p);
    destroy(h);
    return rc;
}

static int create(hs_ctx *ctx, const hs_params *p, void **state)
{
    heat *h = calloc(1, sizeof *h);
    if (!h) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    *state = h;
    h->ctx = ctx;
    HS_CHECK(validate(h, p));
    hs_heat_config *c = &h->cfg;
    int halo = c->order / 2;
    HS_CHECK(hs_field_create(h->d, HS_F64, halo, &h->T));
    HS_CHECK(hs_field_create(h->d, HS_F64, halo, &h->Tn));
    size_t n = (size_t)h->linop.n_local;
    h->host = malloc((n ? n : 1) * sizeof(double));
    if (!h->host) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    h->op.ndim = c->ndim;
    h->op.order = c->order;
    h->op.gpu_kernel = c->gpu_kernel;
    for (int d = 0; d < 3; d++) {
        h->op.dx[d] = c->dx[d];
        h->op.inv_dx2[d] = d < c->ndim ? 1.0 / (c->dx[d] * c->dx[d]) : 0.0;
    }
    h->op.alpha = c->k / (c->rho * c->cp);
    for (int d = 0; d < 3; d++)
        for (int s = 0; s < 2; s++) h->bc[d][s] = (hs_bc){c->bc[d][s], c->bc_value[d][s], NULL, NULL};
    double kmax = 0;
    HS_CHECK(setup_conductivity(h, p, &kmax));
    HS_CHECK(setup_source(h));
    HS_CHECK(fill_interior(h, h->T, hs_heat_initial_at, NULL));
    if (c->scheme != HS_HEAT_EXPLICIT) HS_CHECK(setup_implicit(h));
    h->nshell = hs_field_split_boxes(h->T, halo, &h->interior, h->shell);
    return HS_OK;
}

/* ---------------------------------------------------------------- output and checkpoints */

static int describe_output(void *state, hs_output_desc *desc)
{
    heat *h = state;
    static const char *names[3] = {"x", "y", "z"};
    static const char *long_names[3] = {"x coordinate of cell centre", "y coordinate of cell centre", "z coordinate of cell centre"};
    desc->title = "hpcsim heat equation";
    desc->ndim = h->cfg.ndim;
    for (int d = 0; d < h->cfg.ndim; d++) {
        if (!h->coords[d]) {
            h->coords[d] = malloc((size_t)h->cfg.n[d] * sizeof(double));
            if (!h->coords[d]) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
            for (int64_t i = 0; i < h->cfg.n[d]; i++) h->coords[d][i] = hs_heat_coord(&h->cfg, d, i);
        }
        if (!h->edges[d]) {
            h->edges[d] = malloc((size_t)(h->cfg.n[d] + 1) * sizeof(double));
            if (!h->edges[d]) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
            for (int64_t i = 0; i <= h->cfg.n[d]; i++) h->edges[d][i] = (double)i * h->cfg.dx[d];
        }
        desc->edges[d] = h->edges[d];
        desc->dim_names[d] = names[d];
        desc->n[d] = h->cfg.n[d];
        desc->coords[d] = h->coords[d];
        desc->coord_units[d] = "m";
        desc->coord_long_names[d] = long_names[d];
    }
    return HS_OK;
}

static int define_vars(void *state, hs_writer *w)
{
    heat *h = state;
    return hs_writer_def_var(w, "T", "K", "temperature", NULL, HS_F64, 1, &h->var_T);
}

static int write_state(void *state, hs_writer *w)
{
    heat *h = state;
    HS_CHECK(hs_field_get_interior(h->T, h->host));
    return hs_writer_put_block(w, h->var_T, h->d->offset, h->d->local, h->host);
}

static int checkpoint(void *state, hs_checkpoint *c)
{
    heat *h = state;
    double clock[2] = {h->clk.time, (double)h->step};
    HS_CHECK(hs_field_get_interior(h->T, h->host));
    HS_CHECK(hs_checkpoint_write_state(c, "T", HS_F64, h->linop.n_local, h->host));
    HS_CHECK(hs_clock_checkpoint(c, &h->clk));
    return hs_checkpoint_write(c, "clock", HS_F64, 2, clock);
}

static int restore(void *state, hs_checkpoint *c)
{
    heat *h = state;
    double clock[2];
    HS_CHECK(hs_checkpoint_read_state(c, "T", HS_F64, h->linop.n_local, h->host));
    HS_CHECK(hs_checkpoint_read(c, "clock", HS_F64, 2, clock));
    HS_CHECK(hs_clock_restore(c, &h->clk, clock[0]));
    h->step = (int64_t)clock[1];
    h->x_is_T = 0;
    return hs_field_set_interior(h->T, h->host);
}

int hs_heat_bench_sweep(void *state)
{
    heat *h = state;
    hs_box all = hs_field_interior_box(h->T);
    return hs_heat_apply(h->T, &h->op, 1.0, h->dt, h->dt, &all, h->Tn->data, 0);
}

void hs_heat_bench_set_kernel(void *state, int kernel) { ((heat *)state)->op.gpu_kernel = kernel; }

int hs_heat_exact_error(void *state, double *rel_l2, double *max_abs)
{
    heat *h = state;
    const hs_decomp *d = h->d;
    double x0[3] = {0, 0, 0}, v;
    if (!hs_heat_exact_at(&h->cfg, x0, 0, &v))
        return hs_input_error("heat", 0, NULL, "this configuration has no exact solution (sine or gaussian start, constant k, no source)");
    HS_CHECK(hs_field_get_interior(h->T, h->host));
    double sums[2] = {0, 0}, mx = 0;
    for (int64_t k = 0; k < d->local[2]; k++)
        for (int64_t j = 0; j < d->local[1]; j++)
            for (int64_t i = 0; i < d->local[0]; i++) {
                double x[3] = {hs_heat_coord(&h->cfg, 0, i + d->offset[0]), hs_heat_coord(&h->cfg, 1, j + d->offset[1]),
                               hs_heat_coord(&h->cfg, 2, k + d->offset[2])};
                hs_heat_exact_at(&h->cfg, x, h->clk.time, &v);
                double e = h->host[(k * d->local[1] + j) * d->local[0] + i] - v;
                sums[0] += e * e;
                sums[1] += (v - h->cfg.T0) * (v - h->cfg.T0);
                mx = fabs(e) > mx ? fabs(e) : mx;
            }
    HS_CHECK(hs_allreduce_sum(h->ctx->comm, sums, 2));
    HS_CHECK(hs_allreduce_max(h->ctx->comm, &mx, 1));
    /* relative to the deviation from the background, which is what decays */
    *rel_l2 = sums[1] > 0 ? sqrt(sums[0] / sums[1]) : sqrt(sums[0]);
    *max_abs = mx;
    return HS_OK;
}

void hs_heat_time_step(void *state, double *dt, double *dt_limit)
{
    heat *h = state;
    *dt = h->dt;
    *dt_limit = h->dt_limit;
}

static int finish(void *state)
{
    heat *h = state;
    double e = 0, m = 0, x0[3] = {0, 0, 0}, v;
    if (h->ctx->rank == 0)
        /* the nominal step, or the time itself where one shortened step covered it all (it said "1
         * steps of 3.5e+297 s to t = 0.001 s") */
        printf("heat: %lld steps of %.6g s to t = %.9g s (%s)", (long long)h->step, h->dt > h->clk.time && h->clk.time > 0 ? h->clk.time : h->dt,
               h->clk.time,
               h->cfg.scheme == HS_HEAT_EXPLICIT ? "explicit" : h->cfg.scheme == HS_HEAT_CRANK_NICOLSON ? "Crank-Nicolson" : "backward Euler");
    if (h->ctx->rank == 0 && h->cfg.scheme != HS_HEAT_EXPLICIT)
        printf(", %lld CG iterations", (long long)h->pcg_iterations);
    if (h->ctx->rank == 0) printf("\n");
    /* a run without output would otherwise end with exit 0 on a state that blew up */
    HS_CHECK(hs_field_get_interior(h->T, h->host));
    int bad = 0;
    for (int64_t i = 0; i < h->linop.n_local && !bad; i++) bad = !isfinite(h->host[i]);
    HS_CHECK(hs_allreduce_int_max(h->ctx->comm, &bad, 1));
    if (bad) return HS_FAIL(HS_ERR_RUNTIME, "heat: T is not finite at step %lld, t = %.9g", (long long)h->step, h->clk.time);
    if (hs_heat_exact_at(&h->cfg, x0, 0, &v)) {
        HS_CHECK(hs_heat_exact_error(h, &e, &m));
        if (h->ctx->rank == 0) printf("heat: error against the exact solution: relative L2 %.6e, max %.6e K\n", e, m);
    }
    return HS_OK;
}

static void destroy(void *state)
{
    heat *h = state;
    if (!h) return;
    if (h->have_precond) hs_precond_destroy(&h->precond);
    hs_pcg_workspace_free(&h->work);
    hs_field_destroy(h->T);
    hs_field_destroy(h->Tn);
    hs_field_destroy(h->K);
    hs_field_destroy(h->Q);
    hs_field_destroy(h->W);
    if (h->ctx) {
        hs_mem_free(h->ctx, h->b);
        hs_mem_free(h->ctx, h->x);
        hs_mem_free(h->ctx, h->g);
        hs_mem_free(h->ctx, h->diag);
    }
    if (h->d) hs_decomp_destroy(h->d);
    for (int d = 0; d < 3; d++) free(h->coords[d]), free(h->edges[d]);
    free(h->host);
    free(h->k_host);
    free(h);
}

/* At a restart the end time may move (continue a run further) and the CG iteration cap may change (a
 * run stopped on it goes on with a higher one); everything else shapes the state. */
static const char *const g_restart_may_change[] = {"heat.t_end", "heat.gpu_kernel", "heat.pcg_max_iter", NULL};

const hs_solver_ops hs_heat_solver = {
    .name = "heat",
    .summary = "heat equation rho c dT/dt = div(k grad T) + Q, finite differences, explicit or implicit",
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
    .work_unit = "cell updates",
};
