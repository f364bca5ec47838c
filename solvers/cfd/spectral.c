/* The spectral CFD model: 2D doubly periodic vorticity-streamfunction, pseudo-spectral with the 2/3 rule and integrating-factor RK4, on the distributed FFT. */
#include "solvers/cfd/spectral.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/dispatch.h"
#include "kernels/error.h"
#include "kernels/fft/dfft.h"
#include "kernels/grid/grid.h"
#include "kernels/memory.h"
#include "kernels/reduce/reduce.h"
#include "solvers/cfd/cfd.h"
#include "solvers/cfd/spectral_point.h"

/* spectral.initial */
enum { SP_INIT_TAYLOR_GREEN = 0, SP_INIT_TURBULENCE = 1, SP_INIT_SHEAR = 2 };
#define SP_INIT_CHOICES "taylor_green|turbulence|shear_layer"

/* The largest stable CFL number dt (max|u|/dx + max|v|/dy): RK4 is stable on the imaginary axis up
 * to |lambda dt| = 2 sqrt 2, and the fastest advected mode kept by the 2/3 rule has |k| = 2 pi /
 * (3 dx) per dimension, so dt (max|u| 2 pi/(3 dx) + max|v| 2 pi/(3 dy)) <= 2 sqrt 2.  Viscosity and
 * drag set no limit (the integrating factor integrates them exactly). */
#define SP_CFL_LIMIT (3.0 * 1.4142135623730951 / 3.14159265358979323846)

/* Stream of the random initial field's phases (kernels/rng/rng.h): one use, the same on every rank. */
#define SP_RNG_USE 0x5350u

static const hs_param_decl g_sp_params[] = {
    {"spectral", "nu", HS_PARAM_REAL, "1e-3", 0, HS_NO_MAX, NULL, "kinematic viscosity (0: inviscid, Euler)"},
    {"spectral", "drag", HS_PARAM_REAL, "0", 0, HS_NO_MAX, NULL, "linear drag: dw/dt gains -drag w (large-scale friction)"},
    {"spectral", "initial", HS_PARAM_ENUM, "taylor_green", 0, 0, SP_INIT_CHOICES,
     "initial vorticity: the Taylor-Green vortex (exact decaying solution), random isotropic turbulence, or a double shear layer"},
    {"spectral", "amplitude", HS_PARAM_REAL, "1", 1e-300, HS_NO_MAX, NULL, "taylor_green, shear_layer: velocity amplitude U"},
    {"spectral", "tg_mode", HS_PARAM_INT, "1", 1, 1e9, NULL,
     "taylor_green: wavenumber in modes per box: u = U sin(a x) cos(b y), a = 2 pi m / Lx, b = 2 pi m / Ly"},
    {"spectral", "k0", HS_PARAM_REAL, "10", 1e-3, HS_NO_MAX, NULL,
     "turbulence: peak of the energy spectrum E(k) ~ k^4 exp(-2 (k/k0)^2), in modes per box length along x (random phases from run.seed)"},
    {"spectral", "energy", HS_PARAM_REAL, "0.5", 1e-300, HS_NO_MAX, NULL, "turbulence: mean kinetic energy per unit area, <|u|^2>/2"},
    {"spectral", "shear_width", HS_PARAM_REAL, "0.20943951023931953", 1e-6, 3.14159, NULL,
     "shear_layer: thickness rho of the tanh layers at y = L/4 and 3L/4, in the box scaled to 2 pi (pi/15: the thin layers of Minion & Brown)"},
    {"spectral", "shear_perturbation", HS_PARAM_REAL, "0.05", 0, HS_NO_MAX, NULL, "shear_layer: amplitude delta of the perturbation v = U delta sin(2 pi x / Lx)"},
    {"spectral", "force", HS_PARAM_REAL, "0", HS_NO_MIN, HS_NO_MAX, NULL,
     "amplitude F of a body force F sin(2 pi m y / Ly) along x (Kolmogorov forcing; 0: none)"},
    {"spectral", "force_mode", HS_PARAM_INT, "4", 1, 1e9, NULL, "the forcing's wavenumber m in modes per box"},
};

typedef struct sp_config {
    hs_cfd_config g;
    double nu, drag, amplitude, k0, energy, width, delta, force;
    int initial;
    int64_t tg_mode, force_mode, seed;
    double u_ref[2]; /* velocity scale per component of the stability estimate */
} sp_config;

typedef struct sp {
    hs_ctx *ctx;
    sp_config c;
    hs_decomp *d;            /* the physical grid split in rows of y, as the FFT splits it */
    hs_field *scratch;       /* physical, no halo: gathers */
    hs_dfft_plan *fft;
    int64_t nx, ny, planes, kx0, rows, row0;
    size_t nspec, nphys;     /* local complex modes, local grid points */
    double *w0, *acc, *sa, *sb; /* spectral (complex): vorticity, RK accumulator, u^ / FFT(uv), v^ / FFT(v^2-u^2) */
    double *pu, *pv, *pw;    /* physical: u / uv, v / v^2-u^2, scratch */
    double *diag;            /* 2 nspec reals: Parseval terms */
    int vel_valid, phys_valid; /* sa, sb hold u^, v^ of w0; pu, pv hold u, v */
    hs_clock clk; /* the simulated time */
    double dt, t_end;
    int64_t step;
    double *coords[2], *edges[2], *host;
    int var_u, var_v, var_vort, var_psi, ser_ke, ser_ens, ser_div, ser_cfl;
} sp;

static int declare(void) { return hs_params_declare(g_sp_params, (int)(sizeof g_sp_params / sizeof g_sp_params[0])); }

/* ---------------------------------------------------------------- configuration */

/* A key that belongs to another initial condition (or to forcing) set anyway: an input error
 * (hs_params_set_against: not a file's leftover under `cause` switched on the command line). */
static int unused_key(const hs_params *p, const char *key, int used, const char *cause, const char *why)
{
    if (!used && hs_params_set_against(p, key, cause)) return hs_params_error(p, key, "is set, but %s", why);
    return HS_OK;
}

static int read_config(const hs_params *p, sp_config *c)
{
    memset(c, 0, sizeof *c);
    HS_CHECK(hs_cfd_config_read(p, &c->g));
    c->nu = hs_params_real(p, "spectral.nu");
    c->drag = hs_params_real(p, "spectral.drag");
    c->initial = hs_params_enum(p, "spectral.initial");
    c->amplitude = hs_params_real(p, "spectral.amplitude");
    c->tg_mode = hs_params_int(p, "spectral.tg_mode");
    c->k0 = hs_params_real(p, "spectral.k0");
    c->energy = hs_params_real(p, "spectral.energy");
    c->seed = hs_params_int(p, "run.seed"); /* the random phases: the same field on any rank count and device */
    c->width = hs_params_real(p, "spectral.shear_width");
    c->delta = hs_params_real(p, "spectral.shear_perturbation");
    c->force = hs_params_real(p, "spectral.force");
    c->force_mode = hs_params_int(p, "spectral.force_mode");
    const char *init = hs_params_string(p, "spectral.initial");
    char why[96];
    snprintf(why, sizeof why, "spectral.initial is %s", init);
    HS_CHECK(unused_key(p, "spectral.amplitude", c->initial != SP_INIT_TURBULENCE, "spectral.initial", why));
    HS_CHECK(unused_key(p, "spectral.tg_mode", c->initial == SP_INIT_TAYLOR_GREEN, "spectral.initial", why));
    HS_CHECK(unused_key(p, "spectral.k0", c->initial == SP_INIT_TURBULENCE, "spectral.initial", why));
    HS_CHECK(unused_key(p, "spectral.energy", c->initial == SP_INIT_TURBULENCE, "spectral.initial", why));
    HS_CHECK(unused_key(p, "spectral.shear_width", c->initial == SP_INIT_SHEAR, "spectral.initial", why));
    HS_CHECK(unused_key(p, "spectral.shear_perturbation", c->initial == SP_INIT_SHEAR, "spectral.initial", why));
    HS_CHECK(unused_key(p, "spectral.force_mode", c->force != 0, "spectral.force", "spectral.force is 0 (no forcing)"));
    return HS_OK;
}

/* The velocity scale of the initial condition (and of the forced flow) per component. */
static void velocity_scale(sp_config *c)
{
    const double Lx = c->g.length[0], Ly = c->g.length[1];
    if (c->initial == SP_INIT_TAYLOR_GREEN) {
        c->u_ref[0] = c->amplitude;
        c->u_ref[1] = c->amplitude * Ly / Lx; /* U a / b */
    } else if (c->initial == SP_INIT_SHEAR) {
        c->u_ref[0] = c->amplitude;
        c->u_ref[1] = c->amplitude * c->delta;
    } else {
        /* each component has rms sqrt(energy); over a grid of 10^5..10^7 points a random field's
         * largest value is about 4 to 5 rms */
        c->u_ref[0] = c->u_ref[1] = 4.5 * sqrt(c->energy);
    }
    if (c->force != 0) {
        /* the laminar forced flow F / (nu K^2 + drag), bounded by the free-fall speed sqrt(F Ly) */
        double K = 2 * M_PI * (double)c->force_mode / Ly, lam = c->nu * K * K + c->drag, f = fabs(c->force);
        double u = sqrt(f * Ly);
        if (lam > 0) u = fmin(u, f / lam);
        c->u_ref[0] = fmax(c->u_ref[0], u);
    }
}

/* The largest stable step for velocities up to umax (per component). */
static double stable_dt(const sp_config *c, const double umax[2])
{
    double s = umax[0] / c->g.dx[0] + umax[1] / c->g.dx[1];
    return s > 0 ? SP_CFL_LIMIT / s : HS_NO_MAX;
}

/* A mode number m kept by the 2/3 rule along a dimension of n points. */
static int kept_mode(double m, int64_t n) { return 3.0 * m < (double)n; }

/* The input rules that need the grid and the ranks. */
static int validate(sp *s, const hs_params *p)
{
    HS_CHECK(read_config(p, &s->c));
    sp_config *c = &s->c;
    if (c->g.model != HS_CFD_SPECTRAL) return HS_FAIL(HS_ERR_RUNTIME, "spectral model called for another model");
    if (c->g.ndim != 2) return hs_params_error(p, "cfd.ndim", "the spectral model is 2D: cfd.ndim = 2");
    const int64_t nx = c->g.n[0], ny = c->g.n[1];
    for (int d = 0; d < 2; d++)
        if (c->g.n[d] < 4) return hs_params_error(p, "cfd.n", "the spectral model needs at least 4 points per dimension, %lld given", (long long)c->g.n[d]);
    if (c->g.procs[0] > 1)
        return hs_params_error(p, "cfd.procs", "the spectral model splits only y over the ranks (the slab FFT keeps whole rows): use cfd.procs = 1 0");
    int procs[3] = {1, c->g.procs[1] > 0 ? c->g.procs[1] : s->ctx->size, 1}, periodic[3] = {1, 1, 0};
    /* said here, since the decomposition's advice splits x as well ("4 x 2 would work" for 8 x 5
     * points on 8 ranks, "4 x 1" for cfd.procs = 1 2 on 4 ranks), which this model refuses */
    if (procs[1] != s->ctx->size)
        return hs_params_error(p, "cfd.procs", "1 %d asks for %d ranks in y, the run has %d: the spectral model splits y over every rank (use cfd.procs = 1 0 or 1 %d)",
                               procs[1], procs[1], s->ctx->size, s->ctx->size);
    if (ny < procs[1])
        return hs_params_error(p, hs_params_is_set(p, "cfd.procs") ? "cfd.procs" : "cfd.n",
                               "%lld points in y cannot be split over %d ranks: the spectral model splits only y (at least one row per rank); "
                               "use at most %lld ranks or more points in y",
                               (long long)ny, procs[1], (long long)ny);
    int rc = hs_decomp_create(s->ctx, 2, c->g.n, periodic, procs, 1, &s->d);
    if (rc == HS_ERR_INPUT) return hs_params_error_rekey(p, hs_params_is_set(p, "cfd.procs") ? "cfd.procs" : "cfd.n");
    HS_CHECK(rc);
    /* the FFT's transpose counts go to MPI as int */
    double exchange = (double)(ny / procs[1] + 1) * (double)(nx / 2 + 1);
    if (exchange > INT_MAX)
        return hs_params_error(p, "cfd.n", "%lld x %lld points on %d ranks exceed the distributed FFT's 2^31 values per rank; use more ranks",
                               (long long)nx, (long long)ny, procs[1]);
    /* the initial condition and the forcing must live on kept modes */
    if (c->initial == SP_INIT_TAYLOR_GREEN && !(kept_mode((double)c->tg_mode, nx) && kept_mode((double)c->tg_mode, ny)))
        return hs_params_error(p, "spectral.tg_mode", "mode %lld is dropped by the 2/3 rule on %lld x %lld points (it needs more than %lld per dimension)",
                               (long long)c->tg_mode, (long long)nx, (long long)ny, (long long)(3 * c->tg_mode));
    if (c->initial == SP_INIT_TURBULENCE && !kept_mode(c->k0, nx))
        return hs_params_error(p, "spectral.k0", "the spectrum's peak k0 = %g lies beyond the largest kept mode (%lld on %lld points, the 2/3 rule)",
                               c->k0, (long long)((nx - 1) / 3), (long long)nx);
    if (c->force != 0 && !kept_mode((double)c->force_mode, ny))
        return hs_params_error(p, "spectral.force_mode", "mode %lld is dropped by the 2/3 rule on %lld points along y", (long long)c->force_mode, (long long)ny);
    /* memory: 4 complex spectral arrays and the Parseval terms, 3 physical arrays and the gather
     * field, the FFT's work buffers (about 4 complex arrays) */
    double spec = 2.0 * (double)(nx / 2 + 1) * (double)s->d->local[1], phys = (double)nx * (double)s->d->local[1];
    double device = 8.0 * (spec * 9 + phys * 4), host = 8.0 * phys;
    if (s->ctx->rank == 0 && hs_params_enum(p, "output.format") != HS_OUTPUT_NONE) host += 16.0 * (double)nx * (double)ny;
    HS_CHECK(hs_driver_check_memory(s->ctx, p, "cfd.n", "the grid", "use more ranks or a smaller grid", device, host));
    /* the time step */
    velocity_scale(c);
    if (c->g.dt_user == 0 && c->g.cfl > SP_CFL_LIMIT)
        return hs_params_error(p, "cfd.cfl", "%g is above the spectral model's stable limit %.4f (RK4 at the largest mode the 2/3 rule keeps)",
                               c->g.cfl, SP_CFL_LIMIT);
    double limit = stable_dt(c, c->u_ref);
    if (c->g.dt_user > limit)
        return hs_params_error(p, "cfd.dt", "%g is unstable here: with velocities up to about %g (x) and %g (y) the stable step is about %.4g "
                                            "(CFL %.2f; use cfd.dt = 0 for an adaptive step)",
                               c->g.dt_user, c->u_ref[0], c->u_ref[1], limit, SP_CFL_LIMIT);
    /* an adaptive step below the resolution of the time at t_end never gets there (amplitude =
     * 1e200 stepped 1e-202 at a time: the time stalls and the run went on until killed); the step
     * is the one choose_dt takes for the initial velocity scale, the key named the one that makes
     * the velocity (or the force's bound on the step) so large */
    if (c->g.dt_user == 0) {
        double dt_flow = c->g.cfl * limit / SP_CFL_LIMIT, dt0 = dt_flow;
        if (c->force != 0) dt0 = fmin(dt0, sqrt(c->g.cfl * c->g.dx[0] / fabs(c->force)));
        if (!(dt0 > 0) || hs_step_below_time_resolution(dt0, c->g.t_end)) {
            const double ui = c->initial == SP_INIT_TURBULENCE ? 4.5 * sqrt(c->energy) : c->amplitude;
            const char *key = c->initial == SP_INIT_TURBULENCE ? "spectral.energy" : "spectral.amplitude";
            if (c->force != 0 && (dt0 < dt_flow || c->u_ref[0] > ui)) key = "spectral.force";
            /* or the end time, where the user set it and left the velocity's key at its default
             * (t_end = 1e300 was blamed on the default amplitude); the command line's first */
            key = hs_params_first_set(p, (const char *const[]){key, "cfd.t_end", NULL}, key);
            return hs_params_error(p, key, "the adaptive step is about %.3g (velocities up to about %g on cells of %g), below the resolution of "
                                           "the time near cfd.t_end = %g: the run could never end",
                                   dt0, fmax(c->u_ref[0], c->u_ref[1]), fmin(c->g.dx[0], c->g.dx[1]), c->g.t_end);
        }
    }
    return HS_OK;
}

/* ---------------------------------------------------------------- kernels and transforms */

static hs_spectral_launch launch_base(const sp *s, int op)
{
    hs_spectral_launch L;
    memset(&L, 0, sizeof L);
    const sp_config *c = &s->c;
    L.op = op;
    L.planes = s->planes;
    L.count = (int64_t)s->nspec;
    L.nx = s->nx;
    L.ny = s->ny;
    L.kx0 = s->kx0;
    L.kxs = 2 * M_PI / c->g.length[0];
    L.kys = 2 * M_PI / c->g.length[1];
    L.inv_n = 1.0 / ((double)s->nx * (double)s->ny);
    L.nu = c->nu;
    L.drag = c->drag;
    if (c->force != 0) {
        /* the body force F sin(K y) along x stirs the vorticity with -F K cos(K y); sampled at the
         * cell centres y_j = (j + 1/2) dy, its unnormalised transform at ky = m is
         * -F K (N/2) exp(i pi m / ny) */
        double K = L.kys * (double)c->force_mode, ph = M_PI * (double)c->force_mode / (double)s->ny;
        double amp = -c->force * K * 0.5 * (double)s->nx * (double)s->ny;
        L.force_mode = c->force_mode;
        L.force_re = amp * cos(ph);
        L.force_im = amp * sin(ph);
    }
    L.w0 = s->w0;
    L.acc = s->acc;
    L.a = s->sa;
    L.b = s->sb;
    return L;
}

static int launch(const sp *s, const hs_spectral_launch *L)
{
    return HS_DISPATCH(s->ctx, hs_spectral_launch_cpu(L), hs_spectral_launch_cuda(s->ctx->cuda, L));
}

static int backward(sp *s, const double *spec, double *phys) { return hs_dfft_execute(s->fft, HS_FFT_BACKWARD, spec, phys); }
static int forward(sp *s, const double *phys, double *spec) { return hs_dfft_execute(s->fft, HS_FFT_FORWARD, phys, spec); }

/* pu, pv = u, v of the vorticity w0 (sa, sb = their transforms). */
static int physical_velocity(sp *s)
{
    if (!s->vel_valid) {
        hs_spectral_launch L = launch_base(s, HS_SP_VELOCITY);
        HS_CHECK(launch(s, &L));
        s->vel_valid = 1;
        s->phys_valid = 0;
    }
    if (!s->phys_valid) {
        HS_CHECK(backward(s, s->sa, s->pu));
        HS_CHECK(backward(s, s->sb, s->pv));
        s->phys_valid = 1;
    }
    return HS_OK;
}

/* sa, sb = FFT(u v), FFT(v^2 - u^2) of the velocity in pu, pv (which the products overwrite). */
static int nonlinear(sp *s)
{
    hs_spectral_launch L = launch_base(s, HS_SP_PRODUCTS);
    L.count = (int64_t)s->nphys;
    L.a = s->pu;
    L.b = s->pv;
    HS_CHECK(launch(s, &L));
    HS_CHECK(forward(s, s->pu, s->sa));
    return forward(s, s->pv, s->sb);
}

/* The rest of a step of length h once pu, pv hold the velocity of w0: four stages of IF-RK4, each
 * two products, two forward and (after the first) two backward transforms. */
static int step_rest(sp *s, double h)
{
    for (int stage = 1; stage <= 4; stage++) {
        if (stage > 1) {
            HS_CHECK(backward(s, s->sa, s->pu));
            HS_CHECK(backward(s, s->sb, s->pv));
        }
        HS_CHECK(nonlinear(s));
        hs_spectral_launch L = launch_base(s, HS_SP_STAGE);
        L.stage = stage;
        L.h = h;
        HS_CHECK(launch(s, &L));
    }
    s->vel_valid = 1; /* stage 4 left u^, v^ of the new w0 in sa, sb */
    s->phys_valid = 0;
    return HS_OK;
}

/* Largest |u| and |v| over the ranks (pu, pv valid). */
static int velocity_max(sp *s, double umax[2])
{
    HS_CHECK(hs_norm(s->ctx, HS_F64, 0, s->nphys, s->pu, &umax[0]));
    HS_CHECK(hs_norm(s->ctx, HS_F64, 0, s->nphys, s->pv, &umax[1]));
    return hs_allreduce_max(s->ctx->comm, umax, 2);
}

/* The step: cfd.dt, or cfl over the advective rate of the current velocity (pu, pv valid). */
static int choose_dt(sp *s)
{
    if (s->c.g.dt_user > 0) {
        s->dt = s->c.g.dt_user;
        return HS_OK;
    }
    double umax[2];
    HS_CHECK(velocity_max(s, umax));
    for (int d = 0; d < 2; d++) umax[d] = fmax(umax[d], 1e-3 * fmax(s->c.u_ref[0], s->c.u_ref[1]));
    s->dt = s->c.g.cfl / (umax[0] / s->c.g.dx[0] + umax[1] / s->c.g.dx[1]);
    /* a forced flow starting near rest: the velocity the force adds within the step, F dt, must keep
     * to the CFL number too (F dt^2 / dx <= cfl; a Kolmogorov run from 1e-3 of its amplitude took
     * one step to t_end at CFL 220) */
    if (s->c.force != 0) s->dt = fmin(s->dt, sqrt(s->c.g.cfl * s->c.g.dx[0] / fabs(s->c.force)));
    if (!(s->dt > 0) || !isfinite(s->dt))
        return HS_FAIL(HS_ERR_RUNTIME, "spectral: the velocity is not finite at step %lld, t = %.9g", (long long)s->step, s->clk.time);
    return HS_OK;
}

/* Kinetic energy and enstrophy (integrals of |u|^2/2 and w^2/2) by Parseval over the kept modes. */
static int energies(sp *s, double *ke, double *ens)
{
    hs_spectral_launch L = launch_base(s, HS_SP_DIAG);
    L.out = s->diag;
    HS_CHECK(launch(s, &L));
    double v[2];
    HS_CHECK(hs_reduce(s->ctx, HS_F64, HS_REDUCE_SUM, s->nspec, s->diag, &v[0]));
    HS_CHECK(hs_reduce(s->ctx, HS_F64, HS_REDUCE_SUM, s->nspec, s->diag + s->nspec, &v[1]));
    HS_CHECK(hs_allreduce_sum(s->ctx->comm, v, 2));
    /* integral of f^2 = area / N^2 sum |F^|^2 for the unnormalised transform F^ */
    double N = (double)s->nx * (double)s->ny, f = s->c.g.length[0] * s->c.g.length[1] / (2.0 * N * N);
    *ke = f * v[0];
    *ens = f * v[1];
    return HS_OK;
}

/* pw = the field `which` of w0 on the grid (acc is the spectral scratch). */
static int field_to_grid(sp *s, int which)
{
    hs_spectral_launch L = launch_base(s, HS_SP_FIELD);
    L.which = which;
    L.out = s->acc;
    HS_CHECK(launch(s, &L));
    return backward(s, s->acc, s->pw);
}

static int diagnostics(sp *s, double *ke, double *ens, double *divmax, double *cfl)
{
    HS_CHECK(energies(s, ke, ens));
    HS_CHECK(field_to_grid(s, HS_SP_DIV));
    HS_CHECK(hs_norm(s->ctx, HS_F64, 0, s->nphys, s->pw, divmax));
    HS_CHECK(hs_allreduce_max(s->ctx->comm, divmax, 1));
    HS_CHECK(physical_velocity(s));
    double umax[2];
    HS_CHECK(velocity_max(s, umax));
    *cfl = s->dt * (umax[0] / s->c.g.dx[0] + umax[1] / s->c.g.dx[1]);
    return HS_OK;
}

static int advance(void *state, double until, int64_t max_steps, int64_t *taken)
{
    sp *s = state;
    *taken = 0;
    if (until > s->t_end) until = s->t_end;
    while (*taken < max_steps && s->clk.time < until) {
        HS_CHECK(physical_velocity(s));
        HS_CHECK(choose_dt(s));
        double h = hs_step_toward(s->clk.time, s->dt, until);
        if (h <= 0) {
            hs_clock_set(&s->clk, until);
            break;
        }
        HS_CHECK(step_rest(s, h));
        hs_clock_step(&s->clk, h, s->dt, until);
        s->step++;
        (*taken)++;
        if (s->c.g.diag_every > 0 && s->step % s->c.g.diag_every == 0) {
            double ke, ens;
            HS_CHECK(energies(s, &ke, &ens));
            if (s->ctx->rank == 0)
                printf("spectral: step %lld t = %.6g dt = %.4g kinetic energy %.10g enstrophy %.10g\n", (long long)s->step, s->clk.time, s->dt, ke, ens);
        }
    }
    return HS_OK;
}

static void progress(void *state, double *time, int64_t *step_out, double *t_end, double *work)
{
    sp *s = state;
    *time = s->clk.time;
    *step_out = s->step;
    *t_end = s->t_end;
    *work = (double)s->nx * (double)s->ny;
}

/* ---------------------------------------------------------------- initial conditions */

static double cell_coord(const sp_config *c, int d, int64_t i) { return ((double)i + 0.5) * c->g.dx[d]; }

/* The initial vorticity at (x, y) of an analytic initial condition. */
static double initial_vorticity(const sp_config *c, double x, double y)
{
    const double Lx = c->g.length[0], Ly = c->g.length[1], U = c->amplitude;
    if (c->initial == SP_INIT_TAYLOR_GREEN) {
        /* u = U sin(a x) cos(b y), v = -U (a/b) cos(a x) sin(b y): w = U (a^2 + b^2)/b sin(a x) sin(b y) */
        double a = 2 * M_PI * (double)c->tg_mode / Lx, b = 2 * M_PI * (double)c->tg_mode / Ly;
        return U * (a * a + b * b) / b * sin(a * x) * sin(b * y);
    }
    /* double shear layer on the box scaled to [0, 2 pi)^2 (X, Y): u = U tanh((Y - pi/2)/rho) below
     * Y = pi, U tanh((3 pi/2 - Y)/rho) above; v = U delta sin X.  w = dv/dx - du/dy. */
    double X = 2 * M_PI * x / Lx, Y = 2 * M_PI * y / Ly, rho = c->width;
    double z = Y <= M_PI ? (Y - 0.5 * M_PI) / rho : (1.5 * M_PI - Y) / rho, ch = cosh(z);
    double dudY = (Y <= M_PI ? 1.0 : -1.0) * U / (rho * ch * ch);
    return U * c->delta * cos(X) * 2 * M_PI / Lx - dudY * 2 * M_PI / Ly;
}

/* w0 = the 2/3-truncated, mean-free transform of the vorticity in pw. */
static int load_vorticity(sp *s)
{
    HS_CHECK(forward(s, s->pw, s->w0));
    hs_spectral_launch L = launch_base(s, HS_SP_MASK);
    HS_CHECK(launch(s, &L));
    s->vel_valid = s->phys_valid = 0;
    return HS_OK;
}

/* The random field: phases drawn per mode, amplitudes from the spectrum, scaled to the energy
 * asked for.  The scale is a sum over every kept mode made alike on every rank (the same bits on
 * any rank count). */
static int random_vorticity(sp *s)
{
    const sp_config *c = &s->c;
    hs_spectral_launch L = launch_base(s, HS_SP_RANDOM);
    /* the smallest wavenumber on the grid, (1, 0) or (0, 1), sets the shape's exponent offset */
    const double kmin = fmin(1.0, L.kys / L.kxs), rmin = kmin / c->k0;
    L.shape_shift = rmin * rmin;
    double sum = 0;
    for (int64_t kx = 0; kept_mode((double)kx, s->nx); kx++)
        for (int64_t ky = -(s->ny - 1) / 3; kept_mode((double)(ky < 0 ? -ky : ky), s->ny); ky++) {
            double fx = (double)kx * L.kxs, fy = (double)ky * L.kys, k2 = fx * fx + fy * fy;
            if (k2 == 0) continue;
            double g = hs_spectral_shape(sqrt(k2) / L.kxs, c->k0, L.shape_shift);
            sum += (kx == 0 ? 1.0 : 2.0) * g * g / k2;
        }
    /* mean |u|^2 / 2 = sum over the whole plane of |c_k|^2 / (2 k^2) with c_k = C g(k) e^(i theta) */
    double C = sum > 0 ? sqrt(2 * c->energy / sum) : 0;
    L.scale = C * (double)s->nx * (double)s->ny;
    L.k0 = c->k0;
    L.seed = (uint64_t)c->seed;
    L.stream = hs_rng_stream(SP_RNG_USE, 0);
    HS_CHECK(launch(s, &L));
    s->vel_valid = s->phys_valid = 0;
    return HS_OK;
}

static int initial_state(sp *s)
{
    const sp_config *c = &s->c;
    if (c->initial == SP_INIT_TURBULENCE) return random_vorticity(s);
    double *h = s->host;
    for (int64_t j = 0; j < s->rows; j++)
        for (int64_t i = 0; i < s->nx; i++) h[j * s->nx + i] = initial_vorticity(c, cell_coord(c, 0, i), cell_coord(c, 1, s->row0 + j));
    HS_CHECK(hs_mem_copy(s->ctx, s->pw, h, s->nphys * sizeof(double), HS_COPY_H2D));
    return load_vorticity(s);
}

/* ---------------------------------------------------------------- set-up */

static void destroy(void *state);

static int check(hs_ctx *ctx, const hs_params *p)
{
    sp *s = calloc(1, sizeof *s);
    if (!s) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    s->ctx = ctx;
    int rc = validate(s, p);
    destroy(s);
    return rc;
}

static int alloc_dev(sp *s, size_t doubles, double **p) { return hs_mem_alloc(s->ctx, (doubles ? doubles : 1) * sizeof(double), (void **)p); }

static int create(hs_ctx *ctx, const hs_params *p, void **state)
{
    sp *s = calloc(1, sizeof *s);
    if (!s) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    *state = s;
    s->ctx = ctx;
    HS_CHECK(validate(s, p));
    s->t_end = s->c.g.t_end;
    s->nx = s->c.g.n[0];
    s->ny = s->c.g.n[1];
    /* the FFT's first dimension is y (rows), its second x (contiguous): physical rows of y split
     * over the ranks, spectral planes of kx */
    const int64_t n[2] = {s->ny, s->nx};
    HS_CHECK(hs_dfft_plan_create(ctx, ctx->comm, 2, n, HS_FFT_R2C, HS_F64, &s->fft));
    size_t in_elems, out_elems;
    HS_CHECK(hs_dfft_local_layout(s->fft, &s->row0, &s->rows, &s->kx0, &s->planes, &in_elems, &out_elems));
    if (s->row0 != s->d->offset[1] || s->rows != s->d->local[1])
        return HS_FAIL(HS_ERR_RUNTIME, "spectral: the FFT's rows %lld+%lld differ from the grid's %lld+%lld", (long long)s->row0,
                       (long long)s->rows, (long long)s->d->offset[1], (long long)s->d->local[1]);
    s->nphys = in_elems;
    s->nspec = out_elems;
    HS_CHECK(hs_field_create(s->d, HS_F64, 0, &s->scratch));
    HS_CHECK(alloc_dev(s, 2 * s->nspec, &s->w0));
    HS_CHECK(alloc_dev(s, 2 * s->nspec, &s->acc));
    HS_CHECK(alloc_dev(s, 2 * s->nspec, &s->sa));
    HS_CHECK(alloc_dev(s, 2 * s->nspec, &s->sb));
    HS_CHECK(alloc_dev(s, 2 * s->nspec, &s->diag));
    HS_CHECK(alloc_dev(s, s->nphys, &s->pu));
    HS_CHECK(alloc_dev(s, s->nphys, &s->pv));
    HS_CHECK(alloc_dev(s, s->nphys, &s->pw));
    s->host = malloc((s->nphys > 2 * s->nspec ? s->nphys : 2 * s->nspec) * sizeof(double) + 8);
    if (!s->host) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    HS_CHECK(initial_state(s));
    /* the first step's dt already, so that the first record's cfl is the one the run starts with (it
     * said 0; shallow_water does the same); every step chooses its dt again */
    HS_CHECK(physical_velocity(s));
    return choose_dt(s);
}

/* ---------------------------------------------------------------- output, checkpoints */

static int describe_output(void *state, hs_output_desc *desc)
{
    sp *s = state;
    static const char *names[2] = {"x", "y"};
    static const char *long_names[2] = {"x coordinate of cell centre", "y coordinate of cell centre"};
    const sp_config *c = &s->c;
    desc->title = "hpcsim 2D pseudo-spectral vorticity-streamfunction (doubly periodic)";
    /* lengths and velocities in the inputs' own units (coordinates "1"): so is the time, whatever
     * the CF units attribute the tools need says */
    desc->record_long_name = "time in the units of the inputs' length / velocity (the units attribute is for CF tools)";
    desc->ndim = 2;
    for (int d = 0; d < 2; d++) {
        if (!s->coords[d]) {
            s->coords[d] = malloc((size_t)c->g.n[d] * sizeof(double));
            s->edges[d] = malloc((size_t)(c->g.n[d] + 1) * sizeof(double));
            if (!s->coords[d] || !s->edges[d]) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
            for (int64_t i = 0; i < c->g.n[d]; i++) s->coords[d][i] = cell_coord(c, d, i);
            for (int64_t i = 0; i <= c->g.n[d]; i++) s->edges[d][i] = (double)i * c->g.dx[d];
        }
        desc->dim_names[d] = names[d];
        desc->n[d] = c->g.n[d];
        desc->coords[d] = s->coords[d];
        desc->edges[d] = s->edges[d];
        desc->coord_units[d] = "1";
        desc->coord_long_names[d] = long_names[d];
    }
    return HS_OK;
}

static int define_vars(void *state, hs_writer *w)
{
    sp *s = state;
    HS_CHECK(hs_writer_def_var(w, "u", "1", "x velocity at the cell centre", NULL, HS_F64, 1, &s->var_u));
    HS_CHECK(hs_writer_def_var(w, "v", "1", "y velocity at the cell centre", NULL, HS_F64, 1, &s->var_v));
    HS_CHECK(hs_writer_def_var(w, "vorticity", "1", "vorticity dv/dx - du/dy", NULL, HS_F64, 1, &s->var_vort));
    HS_CHECK(hs_writer_def_var(w, "psi", "1", "streamfunction (u = dpsi/dy, v = -dpsi/dx, zero mean)", NULL, HS_F64, 1, &s->var_psi));
    HS_CHECK(hs_writer_def_series(w, "kinetic_energy", "1", "kinetic energy, integral of |u|^2/2", NULL, &s->ser_ke));
    HS_CHECK(hs_writer_def_series(w, "enstrophy", "1", "enstrophy, integral of |curl u|^2/2", NULL, &s->ser_ens));
    HS_CHECK(hs_writer_def_series(w, "divergence_max", "1", "largest |div u| over the grid (spectral derivatives)", NULL, &s->ser_div));
    HS_CHECK(hs_writer_def_series(w, "cfl", "1", "CFL number dt (max|u|/dx + max|v|/dy) of the current step size dt " HS_CFD_CFL_STEP_NOTE, NULL, &s->ser_cfl));
    return HS_OK;
}

/* Write this rank's rows of a physical device array. */
static int put_rows(sp *s, hs_writer *w, int var, const double *dev)
{
    HS_CHECK(hs_mem_copy(s->ctx, s->host, dev, s->nphys * sizeof(double), HS_COPY_D2H));
    int64_t off[3] = {0, s->row0, 0}, cnt[3] = {s->nx, s->rows, 1};
    return hs_writer_put_block(w, var, off, cnt, s->host);
}

static int write_state(void *state, hs_writer *w)
{
    sp *s = state;
    HS_CHECK(physical_velocity(s));
    HS_CHECK(put_rows(s, w, s->var_u, s->pu));
    HS_CHECK(put_rows(s, w, s->var_v, s->pv));
    HS_CHECK(field_to_grid(s, HS_SP_VORT));
    HS_CHECK(put_rows(s, w, s->var_vort, s->pw));
    HS_CHECK(field_to_grid(s, HS_SP_PSI));
    HS_CHECK(put_rows(s, w, s->var_psi, s->pw));
    double ke, ens, divmax, cfl;
    HS_CHECK(diagnostics(s, &ke, &ens, &divmax, &cfl));
    HS_CHECK(hs_writer_put_scalar(w, s->ser_ke, ke));
    HS_CHECK(hs_writer_put_scalar(w, s->ser_ens, ens));
    HS_CHECK(hs_writer_put_scalar(w, s->ser_div, divmax));
    return hs_writer_put_scalar(w, s->ser_cfl, cfl);
}

static int checkpoint(void *state, hs_checkpoint *k)
{
    sp *s = state;
    HS_CHECK(hs_mem_copy(s->ctx, s->host, s->w0, 2 * s->nspec * sizeof(double), HS_COPY_D2H));
    HS_CHECK(hs_checkpoint_write_state(k, "vorticity_spectrum", HS_F64, (int64_t)(2 * s->nspec), s->host));
    HS_CHECK(hs_clock_checkpoint(k, &s->clk));
    double clock[3] = {s->clk.time, (double)s->step, s->dt};
    return hs_checkpoint_write(k, "clock", HS_F64, 3, clock);
}

static int restore(void *state, hs_checkpoint *k)
{
    sp *s = state;
    HS_CHECK(hs_checkpoint_read_state(k, "vorticity_spectrum", HS_F64, (int64_t)(2 * s->nspec), s->host));
    HS_CHECK(hs_mem_copy(s->ctx, s->w0, s->host, 2 * s->nspec * sizeof(double), HS_COPY_H2D));
    double clock[3];
    HS_CHECK(hs_checkpoint_read(k, "clock", HS_F64, 3, clock));
    HS_CHECK(hs_clock_restore(k, &s->clk, clock[0]));
    s->step = (int64_t)clock[1];
    s->dt = clock[2];
    s->vel_valid = s->phys_valid = 0;
    return HS_OK;
}

/* Largest |u - u_exact| of the Taylor-Green vortex (pu valid), over the ranks. */
static int taylor_green_error(sp *s, double *err)
{
    const sp_config *c = &s->c;
    HS_CHECK(hs_mem_copy(s->ctx, s->host, s->pu, s->nphys * sizeof(double), HS_COPY_D2H));
    double a = 2 * M_PI * (double)c->tg_mode / c->g.length[0], b = 2 * M_PI * (double)c->tg_mode / c->g.length[1];
    double F = c->amplitude * exp(-(c->nu * (a * a + b * b) + c->drag) * s->clk.time), e = 0;
    for (int64_t j = 0; j < s->rows; j++)
        for (int64_t i = 0; i < s->nx; i++) {
            double x = cell_coord(c, 0, i), y = cell_coord(c, 1, s->row0 + j);
            e = fmax(e, fabs(s->host[j * s->nx + i] - F * sin(a * x) * cos(b * y)));
        }
    *err = e;
    return hs_allreduce_max(s->ctx->comm, err, 1);
}

static int finish(void *state)
{
    sp *s = state;
    double ke, ens, divmax, cfl, tg = 0;
    HS_CHECK(diagnostics(s, &ke, &ens, &divmax, &cfl));
    if (!isfinite(ke) || !isfinite(ens))
        return HS_FAIL(HS_ERR_RUNTIME, "spectral: the vorticity is not finite at step %lld, t = %.9g", (long long)s->step, s->clk.time);
    int exact = s->c.initial == SP_INIT_TAYLOR_GREEN && s->c.force == 0;
    if (exact) HS_CHECK(taylor_green_error(s, &tg));
    if (s->ctx->rank == 0) {
        printf("spectral: %lld steps to t = %.9g; kinetic energy %.10g, enstrophy %.10g, max |div u| %.3e, CFL %.3f\n", (long long)s->step,
               s->clk.time, ke, ens, divmax, cfl);
        if (exact) printf("spectral: Taylor-Green: max |u - u_exact| = %.3e\n", tg);
    }
    return HS_OK;
}

static void destroy(void *state)
{
    sp *s = state;
    if (!s) return;
    hs_dfft_plan_destroy(s->fft);
    hs_field_destroy(s->scratch);
    if (s->ctx) {
        double *bufs[] = {s->w0, s->acc, s->sa, s->sb, s->diag, s->pu, s->pv, s->pw};
        for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) hs_mem_free(s->ctx, bufs[i]);
    }
    if (s->d) hs_decomp_destroy(s->d);
    for (int d = 0; d < 2; d++) free(s->coords[d]), free(s->edges[d]);
    free(s->host);
    free(s);
}

/* ---------------------------------------------------------------- for tests and the benchmark */

/* Gather the physical device array dev on rank 0. */
static int gather(sp *s, const double *dev, double *global_host)
{
    HS_CHECK(hs_field_load_interior(s->scratch, dev));
    return hs_field_gather(s->scratch, 0, global_host);
}

int hs_spectral_field(void *state, int which, double *global_host)
{
    sp *s = state;
    if (which < HS_SP_U || which > HS_SP_DIV) return HS_FAIL(HS_ERR_INPUT, "spectral field %d out of range", which);
    HS_CHECK(field_to_grid(s, which));
    return gather(s, s->pw, global_host);
}

int hs_spectral_set_vorticity(void *state, const double *global_host)
{
    sp *s = state;
    HS_CHECK(hs_mem_copy(s->ctx, s->pw, global_host + s->row0 * s->nx, s->nphys * sizeof(double), HS_COPY_H2D));
    return load_vorticity(s);
}

int hs_spectral_tendency(void *state, double *global_host)
{
    sp *s = state;
    HS_CHECK(physical_velocity(s));
    HS_CHECK(nonlinear(s));
    s->vel_valid = s->phys_valid = 0;
    hs_spectral_launch L = launch_base(s, HS_SP_TENDENCY);
    L.out = s->acc;
    HS_CHECK(launch(s, &L));
    HS_CHECK(backward(s, s->acc, s->pw));
    return gather(s, s->pw, global_host);
}

int hs_spectral_diagnostics(void *state, double *ke, double *ens, double *divmax, double *cfl)
{
    return diagnostics(state, ke, ens, divmax, cfl);
}

int hs_spectral_bench(void *state, int nsteps, double *step_seconds, double *fft_seconds)
{
    sp *s = state;
    hs_timer t;
    HS_CHECK(hs_timer_init(s->ctx, &t));
    HS_CHECK(hs_ctx_sync(s->ctx));
    int rc = hs_timer_start(&t);
    for (int i = 0; i < nsteps && rc == HS_OK; i++) {
        rc = physical_velocity(s);
        if (rc == HS_OK) rc = choose_dt(s);
        if (rc == HS_OK) rc = step_rest(s, s->dt);
    }
    if (rc == HS_OK) rc = hs_timer_stop(&t, step_seconds);
    /* the same transforms alone: sa, sb stay as they are (no growth from repeated unnormalised
     * round trips), the forward results land in the scratch arrays */
    if (rc == HS_OK) rc = hs_ctx_sync(s->ctx);
    if (rc == HS_OK) rc = hs_timer_start(&t);
    for (int i = 0; i < 4 * nsteps && rc == HS_OK; i++) {
        rc = backward(s, s->sa, s->pu);
        if (rc == HS_OK) rc = backward(s, s->sb, s->pv);
        if (rc == HS_OK) rc = forward(s, s->pu, s->acc);
        if (rc == HS_OK) rc = forward(s, s->pv, s->diag);
    }
    if (rc == HS_OK) rc = hs_timer_stop(&t, fft_seconds);
    hs_timer_free(&t);
    s->phys_valid = 0;
    return rc;
}

const hs_solver_ops hs_cfd_spectral = {
    .name = "spectral",
    .summary = "2D doubly periodic pseudo-spectral vorticity-streamfunction",
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
    .restart_may_change = NULL,
    .work_unit = "cell updates",
};
