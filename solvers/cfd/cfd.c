/* The `cfd` solver: one [run] solver = cfd, four models (navier_stokes, spectral, shallow_water, lbm) chosen by cfd.model. */
#include "solvers/cfd/cfd.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/error.h"

static const hs_param_decl g_cfd_params[] = {
    {"cfd", "model", HS_PARAM_ENUM, "navier_stokes", 0, 0, HS_CFD_MODEL_CHOICES,
     "navier_stokes: projection on a MAC grid; spectral: 2D periodic vorticity; shallow_water: rotating, C-grid; lbm: lattice Boltzmann"},
    {"cfd", "ndim", HS_PARAM_INT, "2", 2, 3, NULL, "spatial dimensions (spectral and shallow_water: 2)"},
    {"cfd", "n", HS_PARAM_INT_LIST, "64", 1, 1e6, "1|2|3", "cells per dimension (one value: the same in all)"},
    {"cfd", "length", HS_PARAM_REAL_LIST, "1", 1e-300, HS_NO_MAX, "1|2|3", "domain length per dimension (non-dimensional)"},
    {"cfd", "procs", HS_PARAM_INT_LIST, "0", 0, 1e6, "1|2|3", "MPI ranks per dimension (0: automatic)"},
    {"cfd", "t_end", HS_PARAM_REAL, "1", 0, HS_NO_MAX, NULL, "end time (non-dimensional)"},
    {"cfd", "dt", HS_PARAM_REAL, "0", 0, HS_NO_MAX, NULL, "time step; 0: adaptive, cfl times the stable step"},
    {"cfd", "cfl", HS_PARAM_REAL, "0.5", 1e-6, 2, NULL, "CFL number of the adaptive step (the model states its limit)"},
    {"cfd", "diag_every", HS_PARAM_INT, "0", 0, 1e12, NULL, "steps between diagnostic lines on the log (0: none)"},
};

extern const hs_solver_ops hs_cfd_navier_stokes;
extern const hs_solver_ops hs_cfd_spectral;
extern const hs_solver_ops hs_cfd_shallow_water;
extern const hs_solver_ops hs_cfd_lbm;
static const hs_solver_ops *model_table(int i)
{
    const hs_solver_ops *t[] = {&hs_cfd_navier_stokes, &hs_cfd_spectral, &hs_cfd_shallow_water, &hs_cfd_lbm};
    return t[i];
}
#define NMODELS 4
/* The models' sections, in the order of cfd.model (the solver's `sections`). */
static const char *const g_model_sections[NMODELS + 1] = {"navier_stokes", "spectral", "shallow_water", "lbm", NULL};

int hs_cfd_config_read(const hs_params *p, hs_cfd_config *c)
{
    memset(c, 0, sizeof *c);
    c->model = hs_params_enum(p, "cfd.model");
    /* the sections of the other models would be ignored: a [navier_stokes] re = 5 beside
     * model = spectral ran at spectral.nu's default without a word */
    for (int m = 0; m < NMODELS; m++) {
        char key[160];
        if (m != c->model && hs_params_section_set_against(p, g_model_sections[m], "cfd.model", key, sizeof key))
            return hs_params_error(p, key, "[%s] is for cfd.model = %s; this run is cfd.model = %s, which would ignore it",
                                   g_model_sections[m], g_model_sections[m], g_model_sections[c->model]);
    }
    c->ndim = (int)hs_params_int(p, "cfd.ndim");
    HS_CHECK(hs_params_dim_ints(p, "cfd.n", "cfd.ndim", c->ndim, c->n, 1));
    HS_CHECK(hs_params_dim_reals(p, "cfd.length", "cfd.ndim", c->ndim, c->length, 1.0));
    int64_t procs[3];
    HS_CHECK(hs_params_dim_ints(p, "cfd.procs", "cfd.ndim", c->ndim, procs, 1));
    for (int d = 0; d < 3; d++) {
        c->procs[d] = (int)procs[d];
        c->dx[d] = c->length[d] / (double)c->n[d];
        if (d < c->ndim && !(c->dx[d] > 0 && isfinite(1.0 / (c->dx[d] * c->dx[d]))))
            return hs_params_error(p, "cfd.length", "cell size %g in dimension %d is too small for doubles", c->dx[d], d);
        /* the other end: 1/dx^2 below the normal doubles takes the diffusion's digits (length = 1e300
         * ran with the viscous term underflowed to 0) */
        if (d < c->ndim && !(1.0 / (c->dx[d] * c->dx[d]) >= DBL_MIN))
            return hs_params_error(p, "cfd.length", "cell size %g in dimension %d is too large for doubles (1/dx^2 underflows)",
                                   c->dx[d], d);
    }
    c->t_end = hs_params_real(p, "cfd.t_end");
    c->dt_user = hs_params_real(p, "cfd.dt");
    c->cfl = hs_params_real(p, "cfd.cfl");
    /* a fixed step leaves the CFL number nothing to scale (cfd.cfl = 0.3 beside cfd.dt ran at the
     * given step without a word); the lbm model refuses both keys with its own reason */
    if (c->model != HS_CFD_LBM && c->dt_user > 0) HS_CHECK(hs_params_unused(p, "cfd.cfl", "cfd.dt"));
    c->diag_every = hs_params_int(p, "cfd.diag_every");
    return HS_OK;
}

/* ---------------------------------------------------------------- forwarding to the model */

typedef struct cfd {
    const hs_solver_ops *m;
    void *s;
} cfd;

static int declare(void)
{
    HS_CHECK(hs_params_declare(g_cfd_params, (int)(sizeof g_cfd_params / sizeof g_cfd_params[0])));
    for (int i = 0; i < NMODELS; i++)
        if (model_table(i)->declare) HS_CHECK(model_table(i)->declare());
    return HS_OK;
}

static const hs_solver_ops *model_of(const hs_params *p) { return model_table(hs_params_enum(p, "cfd.model")); }

static int check(hs_ctx *ctx, const hs_params *p)
{
    const hs_solver_ops *m = model_of(p);
    return m->check ? m->check(ctx, p) : HS_OK;
}

static int create(hs_ctx *ctx, const hs_params *p, void **state)
{
    cfd *c = calloc(1, sizeof *c);
    if (!c) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    *state = c;
    c->m = model_of(p);
    return c->m->create(ctx, p, &c->s);
}

static int advance(void *state, double until, int64_t max_steps, int64_t *taken)
{
    cfd *c = state;
    return c->m->advance(c->s, until, max_steps, taken);
}

static void progress(void *state, double *time, int64_t *step, double *t_end, double *work)
{
    cfd *c = state;
    c->m->progress(c->s, time, step, t_end, work);
}

static int describe_output(void *state, hs_output_desc *desc)
{
    cfd *c = state;
    return c->m->describe_output(c->s, desc);
}

static int define_vars(void *state, hs_writer *w)
{
    cfd *c = state;
    return c->m->define_vars(c->s, w);
}

static int write_state(void *state, hs_writer *w)
{
    cfd *c = state;
    return c->m->write(c->s, w);
}

static int finish(void *state)
{
    cfd *c = state;
    return c->m->finish ? c->m->finish(c->s) : HS_OK;
}

static int checkpoint(void *state, hs_checkpoint *k)
{
    cfd *c = state;
    return c->m->checkpoint(c->s, k);
}

static int restore(void *state, hs_checkpoint *k)
{
    cfd *c = state;
    return c->m->restore(c->s, k);
}

static const char *stop_rule(void *state)
{
    cfd *c = state;
    return c->m->stop_rule ? c->m->stop_rule(c->s) : NULL;
}

static void destroy(void *state)
{
    cfd *c = state;
    if (!c) return;
    if (c->m && c->s) c->m->destroy(c->s);
    free(c);
}

/* The end time and the log cadence may move at a restart, and the models' keys that only say when
 * to stop; every other key shapes the state. */
static const char *const g_restart_may_change[] = {"cfd.t_end", "cfd.diag_every", "navier_stokes.steady_tol", NULL};

const hs_solver_ops hs_cfd_solver = {
    .name = "cfd",
    .summary = "incompressible Navier-Stokes (MAC projection), 2D pseudo-spectral, rotating shallow water, lattice Boltzmann",
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
    .sections = g_model_sections,
    .work_unit = "cell updates",
    .stop_rule = stop_rule,
};
