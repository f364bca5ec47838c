/* The lbm CFD model: lattice Boltzmann D2Q9/D3Q19, BGK/TRT, fused AA-pattern stream-collide, walls, lid, inlet/outlet, obstacles with forces. */
#include "solvers/cfd/lbm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/comm/comm.h"
#include "kernels/dispatch.h"
#include "kernels/error.h"
#include "kernels/grid/grid.h"
#include "kernels/half.h"
#include "kernels/memory.h"
#include "kernels/reduce/reduce.h"
#include "solvers/cfd/cfd.h"
#include "solvers/cfd/lbm_geom.h"
#include "solvers/cfd/lbm_impl.h"
#include "solvers/cfd/lbm_point.h"

#define LBM_STORAGE_CHOICES "fp64|fp32|fp16"
#define LBM_COLLISION_CHOICES "bgk|trt"
/* Ghost layers of the populations (the redundant even step covers two) and of the flags (their
 * neighbours' kinds one further). */
#define LBM_HALO 2
#define LBM_FHALO 3
/* f16 storage: populations' deviations times 2^10 (away from binary16's subnormals). */
#define LBM_F16_SCALE 1024.0

static const hs_param_decl g_lbm_params[] = {
    {"lbm", "collision", HS_PARAM_ENUM, "trt", 0, 0, LBM_COLLISION_CHOICES,
     "bgk: single relaxation time tau; trt: two relaxation times, the second from trt_magic"},
    {"lbm", "trt_magic", HS_PARAM_REAL, "0.1875", 1e-6, 100, NULL,
     "TRT magic parameter (tau+ - 1/2)(tau- - 1/2); 3/16 puts half-way bounce-back walls exactly half-way"},
    {"lbm", "storage", HS_PARAM_ENUM, "fp32", 0, 0, LBM_STORAGE_CHOICES,
     "storage of the populations (arithmetic: fp64 for fp64, fp32 otherwise)"},
    {"lbm", "nu", HS_PARAM_REAL, "0.01", 1e-300, HS_NO_MAX, NULL, "kinematic viscosity (m2 s-1)"},
    {"lbm", "density", HS_PARAM_REAL, "1", 1e-300, HS_NO_MAX, NULL, "fluid density (kg m-3): pressure and forces"},
    {"lbm", "u_ref", HS_PARAM_REAL, "1", 1e-300, HS_NO_MAX, NULL,
     "reference speed (m s-1): the lid's speed, the inlet's peak speed, the expected peak of a forced flow"},
    {"lbm", "u_lattice", HS_PARAM_REAL, "0.1", 1e-6, 1, NULL,
     "u_ref in lattice units (dx/dt): sets dt = u_lattice dx / u_ref when tau is 0; its Mach number is u_lattice sqrt(3)"},
    {"lbm", "ramp_time", HS_PARAM_REAL, "0", 0, HS_NO_MAX, NULL,
     "time (s) over which the inlet's and the lid's speeds rise from 0 as sin^2(pi t / (2 ramp_time)); 0: impulsive start. "
     "A start slower than the channel's acoustic period keeps its pressure waves, which the outlet reflects, small"},
    {"lbm", "tau", HS_PARAM_REAL, "0", HS_NO_MIN, HS_NO_MAX, NULL,
     "relaxation time (> 0.5); 0: from u_lattice, tau = 1/2 + 3 nu dt / dx^2; given: dt = (tau - 1/2) dx^2 / (3 nu)"},
    {"lbm", "boundary", HS_PARAM_STRING, "walls", 0, 0, NULL,
     "walls (every face a resting wall), or the kinds of the faces x- x+ y- y+ (z- z+): periodic, wall, lid (moving wall, u_ref along the first tangential axis), "
     "inlet (velocity u_ref inward), outlet (pressure, density 1)"},
    {"lbm", "inlet_profile", HS_PARAM_ENUM, "parabolic", 0, 0, "uniform|parabolic",
     "inlet velocity across the face: uniform, or a parabola (peak u_ref) across each tangential dimension with walls"},
    {"lbm", "force", HS_PARAM_REAL_LIST, "0", HS_NO_MIN, HS_NO_MAX, "1|2|3", "body acceleration (m s-2) per dimension (one value: along x)"},
    {"lbm", "obstacle", HS_PARAM_ENUM, "none", 0, 0, "none|cylinder|sphere|file",
     "solid obstacle: a cylinder (a disc in 2D; along z in 3D), a sphere (3D), or the mask_file"},
    {"lbm", "obstacle_center", HS_PARAM_REAL_LIST, "0.5 0.5 0.5", HS_NO_MIN, HS_NO_MAX, "2|3", "centre of the cylinder or sphere (m)"},
    {"lbm", "obstacle_radius", HS_PARAM_REAL, "0.1", 1e-300, HS_NO_MAX, NULL, "radius of the cylinder or sphere (m)"},
    {"lbm", "interpolation", HS_PARAM_ENUM, "bouzidi", 0, 0, "halfway|bouzidi",
     "curved obstacle walls: half-way bounce-back, or Bouzidi's interpolated bounce-back with the exact wall distance"},
    {"lbm", "mask_file", HS_PARAM_STRING, "none", 0, 0, NULL,
     "obstacle = file: NetCDF/HDF5 variable mask_variable (slowest dimension first) or raw bytes (mask_format = u8, x fastest); nonzero = solid"},
    {"lbm", "mask_format", HS_PARAM_ENUM, "auto", 0, 0, "auto|u8", "auto: NetCDF or HDF5; u8: one byte per cell, x fastest"},
    {"lbm", "mask_variable", HS_PARAM_STRING, "mask", 0, 0, NULL, "the mask's variable in a NetCDF/HDF5 mask_file"},
    {"lbm", "cd_velocity", HS_PARAM_REAL, "0", 0, HS_NO_MAX, NULL,
     "reference speed of the force coefficients (0: the inlet's mean speed, else u_ref)"},
    {"lbm", "cd_length", HS_PARAM_REAL, "0", 0, HS_NO_MAX, NULL,
     "reference length of the coefficients, area cd_length^2 in 3D (0: the obstacle's diameter; sphere: area pi r^2)"},
};

typedef struct lbm {
    hs_ctx *ctx;
    hs_lbm_geom g;              /* configuration, units, geometry (lbm_geom.h) */
    hs_decomp *d;
    hs_field *f[HS_LBM_QMAX];   /* the populations, halo LBM_HALO, corners exchanged */
    hs_field *scratch;          /* f64 cells without halo (gathers) */
    uint8_t *flag;              /* device, LBM_FHALO ghost layers */
    int64_t fpitch[3];          /* flag allocation per dimension */
    int exch[3][2];             /* faces that exchange (a neighbour rank or a periodic image) */
    int images_only;            /* every exchanging face is a periodic image on this rank (no MPI) */
    hs_box inner;               /* the interior at least LBM_HALO from exchanging faces (overlap) */
    /* links */
    int64_t nlinks, nowned;     /* links of the ring-1 box; the first nowned start in the interior */
    int64_t *link_cell;
    int32_t *link_dir;
    double *link_q, *link_force;
    double *host_force;
    /* moments */
    double *mom;                /* device: rho, u, v, w, contiguous over the local box */
    double *host;
    double time;
    int64_t step;
    int64_t checked_step;        /* the last step whose state health_check looked at */
    int mach_warned;
    /* output */
    double *coords[3], *edges[3];
    int var_u[3], var_p, var_solid, ser_cd, ser_cl, ser_mach;
    int solid_written;
} lbm;

static int declare(void) {
    static const char *const inputs[] = {"lbm.mask_file", NULL}; /* no output may replace them */
    HS_CHECK(hs_params_declare_inputs(inputs));
    return hs_params_declare(g_lbm_params, (int)(sizeof g_lbm_params / sizeof g_lbm_params[0]));
}

/* ---------------------------------------------------------------- configuration */

static int read_config(const hs_params *p, hs_lbm_geom *g)
{
    memset(g, 0, sizeof *g);
    HS_CHECK(hs_cfd_config_read(p, &g->c));
    const hs_cfd_config *c = &g->c;
    if (c->model != HS_CFD_LBM) return HS_FAIL(HS_ERR_RUNTIME, "lbm model called for another model");
    g->ndim = c->ndim;
    g->q = c->ndim == 3 ? 19 : 9;
    for (int d = 1; d < c->ndim; d++)
        if (fabs(c->dx[d] - c->dx[0]) > 1e-9 * c->dx[0])
            return hs_params_error(p, "cfd.length", "the lattice needs square cells: length / n is %g along x but %g along %c", c->dx[0], c->dx[d],
                                   "xyz"[d]);
    if (hs_params_is_set(p, "cfd.dt") || hs_params_is_set(p, "cfd.cfl"))
        return hs_params_error(p, hs_params_is_set(p, "cfd.dt") ? "cfd.dt" : "cfd.cfl",
                               "the lbm model's time step follows from the lattice: set lbm.u_lattice or lbm.tau instead");
    g->dx = c->dx[0];
    g->collision_trt = hs_params_enum(p, "lbm.collision") == 1;
    g->magic = hs_params_real(p, "lbm.trt_magic");
    g->store = hs_params_enum(p, "lbm.storage");
    g->nu = hs_params_real(p, "lbm.nu");
    g->density = hs_params_real(p, "lbm.density");
    g->u_ref = hs_params_real(p, "lbm.u_ref");
    g->u_lat = hs_params_real(p, "lbm.u_lattice");
    g->tau = hs_params_real(p, "lbm.tau");
    g->ramp_time = hs_params_real(p, "lbm.ramp_time");
    g->parabolic = hs_params_enum(p, "lbm.inlet_profile") == 1;
    g->obstacle = hs_params_enum(p, "lbm.obstacle");
    g->radius = hs_params_real(p, "lbm.obstacle_radius");
    g->bouzidi = hs_params_enum(p, "lbm.interpolation") == 1;
    g->cd_velocity = hs_params_real(p, "lbm.cd_velocity");
    g->cd_length = hs_params_real(p, "lbm.cd_length");
    double acc[3] = {0, 0, 0}, ctr[3] = {0.5, 0.5, 0.5};
    int na = hs_params_real_list(p, "lbm.force", acc, 3);
    if (na > c->ndim) return hs_params_error(p, "lbm.force", "%d values for %d dimensions", na, c->ndim);
    int nc = hs_params_real_list(p, "lbm.obstacle_center", ctr, 3);
    /* as lbm.force: a z coordinate in 2D would be dropped without a word */
    if (nc > c->ndim && hs_params_set_against(p, "lbm.obstacle_center", "cfd.ndim"))
        return hs_params_error(p, "lbm.obstacle_center", "%d coordinates for %d dimensions", nc, c->ndim);
    if (g->obstacle != HS_LBM_OBS_NONE && g->obstacle != HS_LBM_OBS_FILE && nc < c->ndim)
        return hs_params_error(p, "lbm.obstacle_center", "needs %d coordinates", c->ndim);
    for (int d = 0; d < 3; d++) g->accel[d] = acc[d], g->center[d] = ctr[d];
    if (g->obstacle == HS_LBM_OBS_SPHERE && c->ndim != 3)
        return hs_params_error(p, "lbm.obstacle", "a sphere needs cfd.ndim = 3 (in 2D use a cylinder)");
    /* keys the configuration does not use, where the user surely meant them to act: a mask_file
     * beside a cylinder (or no obstacle) was ignored without a word, and trt_magic under bgk */
    static const char *const obstacle_names[] = {"none", "cylinder", "sphere", "file"};
    const char *mask_keys[] = {"lbm.mask_file", "lbm.mask_format", "lbm.mask_variable"};
    for (int k = 0; k < 3 && g->obstacle != HS_LBM_OBS_FILE; k++)
        if (hs_params_set_against(p, mask_keys[k], "lbm.obstacle") && (k > 0 || strcmp(hs_params_string(p, mask_keys[k]), "none") != 0))
            return hs_params_error(p, mask_keys[k], "is used only with lbm.obstacle = file (this run has obstacle = %s)",
                                   obstacle_names[g->obstacle]);
    if (!g->collision_trt && hs_params_set_against(p, "lbm.trt_magic", "lbm.collision"))
        return hs_params_error(p, "lbm.trt_magic", "is used only with lbm.collision = trt (this run has bgk)");
    /* the shape and the coefficients' references of an obstacle that is not there (a radius with
     * obstacle = none, or beside a mask file, which draws its own shape, ran without a word) */
    static const char *const shape_keys[] = {"lbm.obstacle_center", "lbm.obstacle_radius"};
    static const char *const body_keys[] = {"lbm.interpolation", "lbm.cd_velocity", "lbm.cd_length"};
    for (int k = 0; k < 2 && (g->obstacle == HS_LBM_OBS_NONE || g->obstacle == HS_LBM_OBS_FILE); k++)
        if (hs_params_set_against(p, shape_keys[k], "lbm.obstacle"))
            return hs_params_error(p, shape_keys[k], "is used only with lbm.obstacle = cylinder or sphere (this run has obstacle = %s)",
                                   obstacle_names[g->obstacle]);
    for (int k = 0; k < 3 && g->obstacle == HS_LBM_OBS_NONE; k++)
        if (hs_params_set_against(p, body_keys[k], "lbm.obstacle"))
            return hs_params_error(p, body_keys[k], "is used only with an obstacle (this run has lbm.obstacle = none)");
    /* a mask file's links are half-way: Bouzidi's wall distances are the cylinder's and the sphere's */
    if (g->obstacle == HS_LBM_OBS_FILE && g->bouzidi && hs_params_set_against(p, "lbm.interpolation", "lbm.obstacle"))
        return hs_params_error(p, "lbm.interpolation", "bouzidi needs the exact wall of a cylinder or sphere; a mask file's links "
                                                       "are half-way (set interpolation = halfway)");

    /* faces: their kinds, separated by blanks or commas as in the other list keys */
    const char *b = hs_params_string(p, "lbm.boundary");
    static const char *const kinds[] = {"periodic", "wall", "lid", "inlet", "outlet"};
    static const char *const sep = " \t,";
    int nf = 0;
    if (hs_params_list_has_empty(b))
        return hs_params_error(p, "lbm.boundary", "has an empty face kind (a comma with nothing before or after it)");
    if (!strcmp(b, "walls")) {
        for (int d = 0; d < c->ndim; d++) g->face[d][0] = g->face[d][1] = HS_LBM_FACE_WALL;
        nf = 2 * c->ndim;
        b = "";
    }
    for (const char *q = b + strspn(b, sep); *q; q += strspn(q, sep)) {
        const size_t n = strcspn(q, sep);
        int k = -1;
        for (int i = 0; i < 5; i++)
            if (strlen(kinds[i]) == n && !strncmp(q, kinds[i], n)) k = i;
        if (k < 0)
            return hs_params_error(p, "lbm.boundary", "'%.*s' is not a face kind (periodic, wall, lid, inlet, outlet)", (int)n, q);
        if (nf < 6) g->face[nf / 2][nf % 2] = k;
        nf++;
        q += n;
    }
    if (nf != 2 * c->ndim)
        return hs_params_error(p, "lbm.boundary", "%d face kinds for %d dimensions: give %d (x- x+ y- y+%s)", nf, c->ndim, 2 * c->ndim,
                               c->ndim == 3 ? " z- z+" : "");
    g->inlet_dim = -1;
    for (int d = 0; d < c->ndim; d++) {
        int per0 = g->face[d][0] == HS_LBM_FACE_PERIODIC, per1 = g->face[d][1] == HS_LBM_FACE_PERIODIC;
        if (per0 != per1)
            return hs_params_error(p, "lbm.boundary", "the %c faces are periodic on one side only: both or neither", "xyz"[d]);
        g->periodic[d] = per0;
        for (int s = 0; s < 2; s++)
            if (g->face[d][s] == HS_LBM_FACE_INLET) {
                if (g->inlet_dim >= 0) return hs_params_error(p, "lbm.boundary", "one inlet face at most");
                g->inlet_dim = d, g->inlet_sign = s ? -1 : 1;
            }
    }
    int outlets = 0;
    for (int d = 0; d < c->ndim; d++) outlets += (g->face[d][0] == HS_LBM_FACE_OUTLET) + (g->face[d][1] == HS_LBM_FACE_OUTLET);
    if (g->inlet_dim >= 0 && outlets == 0)
        return hs_params_error(p, "lbm.boundary", "an inlet needs an outlet somewhere (else the inflow piles up: the density grows "
                                                  "without bound)");
    /* keys of an inlet or a lid that the faces do not have (an inlet_profile, or a ramp_time, over
     * resting walls ran without a word) */
    int lid = 0;
    for (int d = 0; d < c->ndim; d++) lid |= g->face[d][0] == HS_LBM_FACE_LID || g->face[d][1] == HS_LBM_FACE_LID;
    if (g->inlet_dim < 0 && hs_params_set_against(p, "lbm.inlet_profile", "lbm.boundary"))
        return hs_params_error(p, "lbm.inlet_profile", "is used only with an inlet face (lbm.boundary = %s has none)",
                               hs_params_string(p, "lbm.boundary"));
    if (g->inlet_dim < 0 && !lid && hs_params_set_against(p, "lbm.ramp_time", "lbm.boundary"))
        return hs_params_error(p, "lbm.ramp_time", "ramps the inlet's and the lid's speeds, and lbm.boundary = %s has neither",
                               hs_params_string(p, "lbm.boundary"));
    return HS_OK;
}

/* Units and the stability rules. */
static int derive_units(const hs_params *p, hs_lbm_geom *g, int rank)
{
    const int by_tau = hs_params_is_set(p, "lbm.tau") || g->tau != 0; /* tau fixes dt, else u_lattice and u_ref do */
    if (by_tau) {
        if (hs_params_is_set(p, "lbm.u_lattice"))
            return hs_params_error(p, "lbm.u_lattice", "is set, but lbm.tau fixes the time step (and with it u_ref dt/dx): give one of the two");
        if (!(g->tau > 0.5))
            return hs_params_error(p, "lbm.tau", "tau = %g is unstable: the relaxation time must exceed 1/2 (viscosity (tau - 1/2)/3 > 0)", g->tau);
        double nu_lat = (g->tau - 0.5) / 3.0;
        g->dt = nu_lat * g->dx * g->dx / g->nu;
        g->u_lat = g->u_ref * g->dt / g->dx;
    } else {
        g->dt = g->u_lat * g->dx / g->u_ref;
        g->tau = 0.5 + 3.0 * g->nu * g->dt / (g->dx * g->dx);
        if (!(g->tau > 0.5 + 1e-9))
            return hs_params_error(p, hs_params_is_set(p, "lbm.nu") ? "lbm.nu" : "lbm.u_lattice",
                                   "the relaxation time 1/2 + 3 nu dt/dx^2 = %.12g is not above 1/2: the viscosity is too small "
                                                       "for this grid and u_lattice; set lbm.tau (> 0.5) or use fewer cells",
                                   g->tau);
    }
    /* a lattice step longer than the run: it ended before its first step, with exit 1 ("made no
     * progress") or, landing within round-off, at t_end without a step (u_ref = 1e-9: dt = 4e6 s
     * for t_end = 6) */
    if (g->c.t_end > 0 && g->dt > g->c.t_end)
        return hs_params_error(p, by_tau ? "lbm.tau" : "lbm.u_ref",
                               "the lattice time step %s = %.6g s is longer than cfd.t_end = %.6g s: the run cannot take a "
                               "step; %s", by_tau ? "(tau - 1/2) dx^2 / (3 nu)" : "u_lattice dx / u_ref", g->dt, g->c.t_end,
                               by_tau ? "lower tau" : "raise u_ref or lower u_lattice");
    double mach = g->u_lat * sqrt(3.0);
    if (mach > 1.0)
        return hs_params_error(p, by_tau ? "lbm.tau" : "lbm.u_lattice",
                               "the lattice Mach number u_ref dt/dx sqrt(3) = %.3g is supersonic: lower u_lattice or tau", mach);
    if (mach > 0.3 && rank == 0)
        fprintf(stderr, "hpcsim: warning: lbm: lattice Mach number %.3g (u_ref dt/dx sqrt(3)) is above 0.3: compressibility errors grow as its square\n",
                mach);
    if (rank == 0) {
        /* boundary layers of thickness ~ L / sqrt(Re) want a few cells across them (navier_stokes
         * warns alike); unresolved, a run at tau near 1/2 finished with max |u| 2.7 times the lid's
         * speed without a word */
        double Lmin = HS_NO_MAX;
        for (int d = 0; d < g->ndim; d++) Lmin = fmin(Lmin, g->c.length[d]);
        const double re = g->u_ref * Lmin / g->nu, delta = Lmin / sqrt(fmax(re, 1.0));
        if (delta / g->dx < 3)
            fprintf(stderr, "hpcsim: warning: lbm: Reynolds number %.3g (u_ref L / nu, L = %g): boundary layers of thickness ~ "
                            "L/sqrt(Re) = %.3g get %.2g cells; resolving them needs about %.0f cells per unit length (%g now)\n",
                    re, Lmin, delta, delta / g->dx, 3.0 / delta, 1.0 / g->dx);
        /* a step so short that the run cannot end in any reasonable time (tau = 0.5 + 1e-11 wanted
         * 1.5e11 steps, without a word) */
        const double steps = g->c.t_end / g->dt;
        if (steps > 1e9)
            fprintf(stderr, "hpcsim: warning: lbm: %.3g steps of dt = %.3g s to cfd.t_end = %g s (tau = %.12g: raise %s)\n",
                    steps, g->dt, g->c.t_end, g->tau, by_tau ? "lbm.tau" : "lbm.u_lattice");
    }
    double om = 1.0 / g->tau;
    g->om_p = om;
    g->om_m = g->collision_trt ? 1.0 / (0.5 + g->magic / (g->tau - 0.5)) : om;
    for (int d = 0; d < 3; d++) g->force_lat[d] = g->accel[d] * g->dt * g->dt / g->dx;
    return HS_OK;
}

static void destroy(void *state);

static int validate(lbm *s, const hs_params *p)
{
    HS_CHECK(read_config(p, &s->g));
    hs_lbm_geom *g = &s->g;
    HS_CHECK(derive_units(p, g, s->ctx->rank));
    int procs[3] = {g->c.procs[0], g->c.procs[1], g->c.procs[2]};
    int rc = hs_decomp_create(s->ctx, g->ndim, g->c.n, g->periodic, procs, LBM_HALO, &s->d);
    if (rc == HS_ERR_INPUT) return hs_params_error_rekey(p, hs_params_is_set(p, "cfd.procs") ? "cfd.procs" : "cfd.n");
    HS_CHECK(rc);
    HS_CHECK(hs_lbm_geom_setup(p, g)); /* obstacle, mask file */
    /* memory: Q population fields with halo, flags, the moments and a scratch field */
    const hs_decomp *d = s->d;
    double cells = 1, with_ghosts = 1;
    for (int e = 0; e < g->ndim; e++) cells *= (double)d->local[e], with_ghosts *= (double)(d->local[e] + 2 * LBM_FHALO);
    static const double esize[3] = {8, 4, 2};
    double device = g->q * esize[g->store] * with_ghosts * 1.15 + with_ghosts + 5 * 8 * cells;
    double host = 8.0 * cells * 2;
    if (g->obstacle == HS_LBM_OBS_FILE) host += (double)g->c.n[0] * g->c.n[1] * g->c.n[2];
    if (s->ctx->rank == 0 && hs_params_enum(p, "output.format") != HS_OUTPUT_NONE) host += 16.0 * (double)g->c.n[0] * g->c.n[1] * g->c.n[2];
    HS_CHECK(hs_driver_check_memory(s->ctx, p, "cfd.n", "the grid", "use more ranks or a smaller grid", device, host));
    return HS_OK;
}

static int check(hs_ctx *ctx, const hs_params *p)
{
    lbm *s = calloc(1, sizeof *s);
    if (!s) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    s->ctx = ctx;
    int rc = validate(s, p);
    destroy(s);
    return rc;
}

/* ---------------------------------------------------------------- kernels */

static hs_lbm_launch launch_base(const lbm *s)
{
    hs_lbm_launch L;
    memset(&L, 0, sizeof L);
    const hs_lbm_geom *g = &s->g;
    L.q = g->q;
    L.store = g->store;
    for (int q = 0; q < g->q; q++) L.f[q] = s->f[q]->data;
    const hs_field *f = s->f[0];
    L.origin = (int64_t)hs_field_index(f, 0, 0, 0);
    L.sy = hs_field_stride_y(f);
    L.sz = hs_field_stride_z(f);
    L.flag = s->flag;
    L.fsy = s->fpitch[0];
    L.fsz = s->fpitch[0] * s->fpitch[1];
    L.forigin = (g->ndim == 3 ? LBM_FHALO * L.fsz : 0) + LBM_FHALO * L.fsy + LBM_FHALO;
    for (int q = 0; q < g->q; q++) {
        int c0 = hs_lbm_c(g->q, 0, q), c1 = hs_lbm_c(g->q, 1, q), c2 = hs_lbm_c(g->q, 2, q);
        L.off[q] = c0 + c1 * L.sy + c2 * L.sz;
        L.foff[q] = c0 + c1 * L.fsy + c2 * L.fsz;
    }
    for (int d = 0; d < 3; d++) {
        L.lo[d] = 0, L.hi[d] = s->d->local[d];
        L.local[d] = s->d->local[d];
        L.offset[d] = s->d->offset[d];
        L.global[d] = s->d->global[d];
        L.force[d] = g->force_lat[d];
        L.inlet_parabolic[d] = g->parabolic && d < g->ndim && !g->periodic[d];
    }
    /* the start-up ramp of the boundary speeds, at the time the step starts from */
    double ramp = 1.0, t = (double)s->step * g->dt;
    if (g->ramp_time > 0 && t < g->ramp_time) {
        double sn = sin(0.5 * M_PI * t / g->ramp_time);
        ramp = sn * sn;
    }
    for (int d = 0; d < 3; d++) L.wall_u[d] = g->wall_u_lat[d] * ramp;
    L.om_p = g->om_p, L.om_m = g->om_m;
    L.inlet_dim = g->inlet_dim < 0 ? 0 : g->inlet_dim;
    L.inlet_sign = g->inlet_sign;
    L.u_in = g->u_lat * ramp;
    L.scale = LBM_F16_SCALE, L.inv_scale = 1.0 / LBM_F16_SCALE;
    L.kf.om_p = (float)L.om_p, L.kf.om_m = (float)L.om_m, L.kf.scale = (float)L.scale, L.kf.inv_scale = (float)L.inv_scale;
    for (int d = 0; d < 3; d++) L.kf.force[d] = (float)L.force[d], L.kf.half_force[d] = (float)(0.5 * L.force[d]);
    L.link_cell = s->link_cell, L.link_dir = s->link_dir, L.link_q = s->link_q, L.link_force = s->link_force;
    L.rho = s->mom;
    for (int a = 0; a < 3; a++) L.u[a] = s->mom ? s->mom + (size_t)(a + 1) * (size_t)(L.local[0] * L.local[1] * L.local[2]) : NULL;
    return L;
}

static int launch(const lbm *s, const hs_lbm_launch *L)
{
    return HS_DISPATCH(s->ctx, hs_lbm_launch_cpu(L), hs_lbm_launch_cuda(s->ctx->cuda, L));
}

/* The box of a step of parity odd: the interior, widened by the rings the next operations need
 * where a face exchanges (even: 2, odd: 1). */
static void step_box(const lbm *s, int odd, int64_t lo[3], int64_t hi[3])
{
    const int r = odd ? 1 : 2;
    for (int d = 0; d < 3; d++) {
        lo[d] = s->exch[d][0] ? -r : 0;
        hi[d] = s->d->local[d] + (s->exch[d][1] ? r : 0);
    }
}

static int any_exchange(const lbm *s)
{
    for (int d = 0; d < 3; d++)
        if (s->exch[d][0] || s->exch[d][1]) return 1;
    return 0;
}

/* Slabs of box `outer` outside box `in` (in inside outer): z, then y, then x faces.  Returns the count. */
static int shell_of(const int64_t olo[3], const int64_t ohi[3], const hs_box *in, hs_box out[6])
{
    int n = 0;
    hs_box rest = {{olo[0], olo[1], olo[2]}, {ohi[0], ohi[1], ohi[2]}};
    for (int d = 2; d >= 0; d--) {
        if (in->lo[d] > rest.lo[d]) {
            out[n] = rest;
            out[n++].hi[d] = in->lo[d];
        }
        if (in->hi[d] < rest.hi[d]) {
            out[n] = rest;
            out[n++].lo[d] = in->hi[d];
        }
        rest.lo[d] = in->lo[d], rest.hi[d] = in->hi[d];
    }
    return n;
}

static int run_box(const lbm *s, hs_lbm_launch L, const int64_t lo[3], const int64_t hi[3])
{
    for (int d = 0; d < 3; d++) L.lo[d] = lo[d], L.hi[d] = hi[d];
    return launch(s, &L);
}

static int links_pass(lbm *s, int odd)
{
    hs_lbm_launch L = launch_base(s);
    L.op = HS_LBM_LINKS;
    L.odd = odd;
    L.nlinks = odd ? s->nowned : s->nlinks;
    return L.nlinks > 0 ? launch(s, &L) : HS_OK;
}

/* One step: even steps (local) after the halo exchange of every population, overlapped with the
 * interior's update; odd steps over the interior and the first ghost ring; then the links. */
static int step(lbm *s)
{
    const int odd = (int)(s->step & 1);
    hs_lbm_launch L = launch_base(s);
    L.op = HS_LBM_STEP;
    L.odd = odd;
    int64_t lo[3], hi[3];
    step_box(s, odd, lo, hi);
    if (odd || !any_exchange(s)) {
        HS_CHECK(run_box(s, L, lo, hi));
    } else if (s->images_only) {
        /* the images are a few device copies: one box after them, not an interior behind them and six
         * slabs (the x slabs, four cells wide, had a block of 128 threads a row) */
        HS_CHECK(hs_halo_exchange_group_begin(s->f, s->g.q));
        HS_CHECK(hs_halo_exchange_group_end(s->f, s->g.q));
        HS_CHECK(run_box(s, L, lo, hi));
    } else {
        HS_CHECK(hs_halo_exchange_group_begin(s->f, s->g.q));
        HS_CHECK(run_box(s, L, s->inner.lo, s->inner.hi));
        HS_CHECK(hs_halo_exchange_group_end(s->f, s->g.q));
        hs_box sh[6];
        int n = shell_of(lo, hi, &s->inner, sh);
        for (int b = 0; b < n; b++) HS_CHECK(run_box(s, L, sh[b].lo, sh[b].hi));
    }
    HS_CHECK(links_pass(s, odd));
    s->step++;
    s->time = (double)s->step * s->g.dt;
    return HS_OK;
}

/* rho and u of every local cell into s->mom (as the next step sees them). */
static int moments(lbm *s)
{
    hs_lbm_launch L = launch_base(s);
    L.op = HS_LBM_MOMENTS;
    L.odd = (int)(s->step & 1);
    return launch(s, &L);
}

/* ---------------------------------------------------------------- time loop */

/* The step at which the time reaches `until`: the lattice's step cannot shorten to land on an output
 * time, so the model steps past it (the driver writes the record then); a time within 1e-6 dt of a
 * step counts as that step (round-off of until / dt). */
static int64_t steps_to(const lbm *s, double until)
{
    double n = ceil(until / s->g.dt - 1e-6);
    return n > 9e18 ? INT64_MAX : n < 0 ? 0 : (int64_t)n;
}

static int local_field(lbm *s, int what, double *umax);
static int forces(lbm *s, double F[3], double *cd, double *cl);

/* The state's extents over every rank: {max |u| (m/s), max density, -min density, not finite}. */
static int state_extents(lbm *s, double ext[4])
{
    HS_CHECK(moments(s));
    size_t cells = (size_t)(s->d->local[0] * s->d->local[1] * s->d->local[2]);
    /* reduced where the moments are, no copy of a field (health_check runs in the time loop); min
     * and max drop a NaN (a state gone to NaN showed max |u| 0 and density 1 and finished): the sums
     * keep it.  max |u| is the largest component, as local_field measures it */
    double rmin = 1, rmax = 1, rsum = 0, umax = 0;
    /* before the first step: the rest state the t = 0 record stands for (local_field), not the
     * moments the first step will see (a body force's half step: a run of t_end = 0 closed with
     * max |u| = F dt / 2 beside a record at rest) */
    for (int slot = 0; cells && s->step > 0 && slot <= s->g.ndim; slot++) {
        const double *m = s->mom + (size_t)(slot ? HS_LBM_GATHER_U + slot - 1 : 0) * cells;
        double lo, hi, sum;
        HS_CHECK(hs_reduce(s->ctx, HS_F64, HS_REDUCE_MIN, cells, m, &lo));
        HS_CHECK(hs_reduce(s->ctx, HS_F64, HS_REDUCE_MAX, cells, m, &hi));
        HS_CHECK(hs_reduce(s->ctx, HS_F64, HS_REDUCE_SUM, cells, m, &sum));
        rsum += sum;
        if (slot == 0) rmin = lo, rmax = hi;
        else umax = fmax(umax, fmax(fabs(lo), fabs(hi)) * s->g.dx / s->g.dt);
    }
    ext[0] = umax, ext[1] = rmax, ext[2] = -rmin, ext[3] = !isfinite(umax) || !isfinite(rsum);
    HS_CHECK(hs_allreduce_max(s->ctx->comm, ext, 4));
    if (ext[3] > 0 || !isfinite(ext[0] + ext[1] + ext[2]))
        return HS_FAIL(HS_ERR_RUNTIME, "lbm: the state is not finite at step %lld, t = %.9g (tau %.4g, lattice Mach %.3g)", (long long)s->step,
                       s->time, s->g.tau, s->g.u_lat * sqrt(3.0));
    return HS_OK;
}

/* Every LBM_HEALTH_STEPS steps and at the end of the run: a state that is no longer a fluid's
 * (density not positive: a run at force 1e6 finished with density -4e15 .. 3e15, exit 0; NaN found
 * only at the last step) ends the run, exit 1; a flow faster than the lattice allows (the actual
 * lattice Mach number above 0.3, where the set-up's u_ref said 0.09) is warned of once, with the
 * figure. */
#define LBM_HEALTH_STEPS 200
static int health_check(lbm *s, double ext[4])
{
    HS_CHECK(state_extents(s, ext));
    s->checked_step = s->step;
    const double mach = ext[0] * s->g.dt / s->g.dx * sqrt(3.0);
    if (-ext[2] <= 0)
        return HS_FAIL(HS_ERR_RUNTIME, "lbm: the state is no longer a fluid's at step %lld, t = %.9g: density %.3g .. %.3g, max |u| %.3g m/s "
                       "(lattice Mach %.3g; tau %.4g): unstable (lower the forcing or u_lattice, raise the resolution or nu)",
                       (long long)s->step, s->time, -ext[2], ext[1], ext[0], mach, s->g.tau);
    if (mach > 0.3 && !s->mach_warned) {
        s->mach_warned = 1;
        if (s->ctx->rank == 0)
            fprintf(stderr, "hpcsim: warning: lbm: the flow reached max |u| %.4g m/s at step %lld, lattice Mach %.3g (above 0.3: "
                            "compressibility errors grow; lower lbm.u_lattice or the forcing)\n",
                    ext[0], (long long)s->step, mach);
    }
    return HS_OK;
}

static int advance(void *state, double until, int64_t max_steps, int64_t *taken)
{
    lbm *s = state;
    *taken = 0;
    if (until > s->g.c.t_end) until = s->g.c.t_end;
    int64_t last = steps_to(s, until);
    /* an output time past this step's by less than the 1e-6 dt that steps_to takes for round-off
     * (output.every_time far below dt): the next step passes it; 0 steps ended the run, "made no
     * progress", exit 1 */
    if (last <= s->step && until > s->time) last = s->step + 1;
    while (*taken < max_steps && s->step < last) {
        HS_CHECK(step(s));
        (*taken)++;
        double ext[4];
        if (s->step - s->checked_step >= LBM_HEALTH_STEPS) HS_CHECK(health_check(s, ext));
        if (s->g.c.diag_every > 0 && s->step % s->g.c.diag_every == 0) {
            double F[3], cd, cl;
            HS_CHECK(forces(s, F, &cd, &cl));
            if (s->ctx->rank == 0) {
                if (s->g.obstacle != HS_LBM_OBS_NONE) printf("lbm: step %lld t = %.6g Cd %.6f Cl %.6f\n", (long long)s->step, s->time, cd, cl);
                else printf("lbm: step %lld t = %.6g\n", (long long)s->step, s->time);
                fflush(stdout);
            }
        }
    }
    return HS_OK;
}

static void progress(void *state, double *time, int64_t *step_out, double *t_end, double *work)
{
    lbm *s = state;
    *time = s->time;
    /* the last step lands on t_end up to round-off: report t_end itself then */
    if (s->step >= steps_to(s, s->g.c.t_end) && *time < s->g.c.t_end) *time = s->g.c.t_end;
    *step_out = s->step;
    *t_end = s->g.c.t_end;
    *work = (double)s->g.c.n[0] * (double)s->g.c.n[1] * (double)s->g.c.n[2];
}

/* ---------------------------------------------------------------- set-up */

static int create(hs_ctx *ctx, const hs_params *p, void **state)
{
    lbm *s = calloc(1, sizeof *s);
    if (!s) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    *state = s;
    s->ctx = ctx;
    HS_CHECK(validate(s, p));
    hs_lbm_geom *g = &s->g;
    static const hs_dtype types[3] = {HS_F64, HS_F32, HS_F16};
    for (int q = 0; q < g->q; q++) {
        HS_CHECK(hs_field_create(s->d, types[g->store], LBM_HALO, &s->f[q]));
        HS_CHECK(hs_field_set_corners(s->f[q], 1));
    }
    HS_CHECK(hs_field_create(s->d, HS_F64, 0, &s->scratch));
    for (int d = 0; d < 3; d++) {
        s->exch[d][0] = d < g->ndim && s->d->neighbor[d][0] != MPI_PROC_NULL;
        s->exch[d][1] = d < g->ndim && s->d->neighbor[d][1] != MPI_PROC_NULL;
        s->fpitch[d] = s->d->local[d] + (d < g->ndim ? 2 * LBM_FHALO : 0);
        s->inner.lo[d] = s->exch[d][0] ? LBM_HALO : 0;
        s->inner.hi[d] = s->d->local[d] - (s->exch[d][1] ? LBM_HALO : 0);
        if (s->inner.hi[d] < s->inner.lo[d]) s->inner.hi[d] = s->inner.lo[d];
    }
    s->images_only = 1;
    for (int d = 0; d < 3; d++)
        for (int e = 0; e < 2; e++)
            if (s->exch[d][e] && s->d->neighbor[d][e] != ctx->rank) s->images_only = 0;
    /* flags, links (host, from the geometry), then to the device */
    size_t nflag = (size_t)(s->fpitch[0] * s->fpitch[1] * s->fpitch[2]);
    uint8_t *hflag = malloc(nflag);
    if (!hflag) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    hs_lbm_geom_flags(g, s->d->offset, s->d->local, LBM_FHALO, hflag);
    int64_t lo1[3], hi1[3];
    for (int d = 0; d < 3; d++) lo1[d] = s->exch[d][0] ? -1 : 0, hi1[d] = s->d->local[d] + (s->exch[d][1] ? 1 : 0);
    hs_lbm_link_list ll;
    int rc = hs_lbm_geom_links(g, s->d->offset, s->d->local, lo1, hi1, &ll);
    if (rc == HS_OK) rc = hs_mem_alloc(ctx, nflag, (void **)&s->flag);
    if (rc == HS_OK) rc = hs_mem_copy(ctx, s->flag, hflag, nflag, HS_COPY_H2D);
    free(hflag);
    if (rc == HS_OK && ll.n > 0) {
        s->nlinks = ll.n, s->nowned = ll.nowned;
        const size_t n = (size_t)ll.n;
        /* the element index of each link's cell in the populations' layout */
        for (size_t l = 0; l < n; l++) ll.cell[l] = (int64_t)hs_field_index(s->f[0], ll.ijk[3 * l], ll.ijk[3 * l + 1], ll.ijk[3 * l + 2]);
        rc = hs_mem_alloc(ctx, n * sizeof(int64_t), (void **)&s->link_cell);
        if (rc == HS_OK) rc = hs_mem_alloc(ctx, n * sizeof(int32_t), (void **)&s->link_dir);
        if (rc == HS_OK) rc = hs_mem_alloc(ctx, n * sizeof(double), (void **)&s->link_q);
        if (rc == HS_OK) rc = hs_mem_alloc(ctx, 3 * n * sizeof(double), (void **)&s->link_force);
        if (rc == HS_OK) rc = hs_mem_zero(ctx, s->link_force, 3 * n * sizeof(double));
        if (rc == HS_OK) rc = hs_mem_copy(ctx, s->link_cell, ll.cell, n * sizeof(int64_t), HS_COPY_H2D);
        if (rc == HS_OK) rc = hs_mem_copy(ctx, s->link_dir, ll.dir, n * sizeof(int32_t), HS_COPY_H2D);
        if (rc == HS_OK) rc = hs_mem_copy(ctx, s->link_q, ll.q, n * sizeof(double), HS_COPY_H2D);
        s->host_force = malloc(3 * n * sizeof(double));
        if (rc == HS_OK && !s->host_force) rc = HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    }
    hs_lbm_link_list_free(&ll);
    HS_CHECK(rc);
    size_t cells = (size_t)(s->d->local[0] * s->d->local[1] * s->d->local[2]);
    const size_t nmom = cells > 0 ? 4 * cells : 1;
    HS_CHECK(hs_mem_alloc(ctx, nmom * sizeof(double), (void **)&s->mom));
    HS_CHECK(hs_mem_zero(ctx, s->mom, nmom * sizeof(double)));
    s->host = malloc((cells ? cells : 1) * sizeof(double));
    if (!s->host) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    /* the fields start zero: every population at its weight, rest at density 1 */
    return HS_OK;
}

/* ---------------------------------------------------------------- forces */

/* Drag is the force along the flow (the inlet's direction, else the body force's; a flow towards -x
 * had drag -21, one along y its cross-stream force as drag), lift the force along the first axis
 * across it (y for a flow along x, x otherwise). */
static void force_axes(const hs_lbm_geom *g, int *drag_axis, int *lift_axis, double *sign)
{
    *drag_axis = hs_lbm_flow_axis(g);
    *lift_axis = *drag_axis == 0 ? 1 : 0;
    *sign = g->inlet_dim >= 0 ? (double)g->inlet_sign : g->accel[*drag_axis] < 0 ? -1.0 : 1.0;
}

static int forces(lbm *s, double F[3], double *cd, double *cl)
{
    double acc[3] = {0, 0, 0};
    if (s->nowned > 0) {
        HS_CHECK(hs_mem_copy(s->ctx, s->host_force, s->link_force, 3 * (size_t)s->nowned * sizeof(double), HS_COPY_D2H));
        for (int64_t l = 0; l < s->nowned; l++)
            for (int a = 0; a < 3; a++) acc[a] += s->host_force[3 * l + a];
    }
    HS_CHECK(hs_allreduce_sum(s->ctx->comm, acc, 3));
    for (int a = 0; a < 3; a++) F[a] = acc[a];
    /* coefficients in lattice units: 2 F / (U^2 D) in 2D, 2 F / (U^2 A) in 3D */
    const hs_lbm_geom *g = &s->g;
    double U = g->cd_u_lat, ref = g->cd_ref_lat;
    double den = 0.5 * U * U * ref;
    int drag_axis, lift_axis;
    double sign;
    force_axes(g, &drag_axis, &lift_axis, &sign);
    if (cd) *cd = den > 0 ? sign * F[drag_axis] / den : 0;
    if (cl) *cl = den > 0 ? F[lift_axis] / den : 0;
    return HS_OK;
}

/* ---------------------------------------------------------------- output, checkpoints */

static int describe_output(void *state, hs_output_desc *desc)
{
    lbm *s = state;
    static const char *names[3] = {"x", "y", "z"};
    static const char *long_names[3] = {"x coordinate of cell centre", "y coordinate of cell centre", "z coordinate of cell centre"};
    const hs_lbm_geom *g = &s->g;
    desc->title = g->q == 19 ? "hpcsim lattice Boltzmann D3Q19 (AA pattern)" : "hpcsim lattice Boltzmann D2Q9 (AA pattern)";
    desc->ndim = g->ndim;
    for (int d = 0; d < g->ndim; d++) {
        if (!s->coords[d]) {
            s->coords[d] = malloc((size_t)g->c.n[d] * sizeof(double));
            s->edges[d] = malloc((size_t)(g->c.n[d] + 1) * sizeof(double));
            if (!s->coords[d] || !s->edges[d]) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
            for (int64_t i = 0; i < g->c.n[d]; i++) s->coords[d][i] = ((double)i + 0.5) * g->dx;
            for (int64_t i = 0; i <= g->c.n[d]; i++) s->edges[d][i] = (double)i * g->dx;
        }
        desc->dim_names[d] = names[d];
        desc->n[d] = g->c.n[d];
        desc->coords[d] = s->coords[d];
        desc->edges[d] = s->edges[d];
        desc->coord_units[d] = "m";
        desc->coord_long_names[d] = long_names[d];
    }
    return HS_OK;
}

static int define_vars(void *state, hs_writer *w)
{
    lbm *s = state;
    static const char *const un[3] = {"u", "v", "w"};
    static const char *const ul[3] = {"x velocity", "y velocity", "z velocity"};
    for (int a = 0; a < s->g.ndim; a++) HS_CHECK(hs_writer_def_var(w, un[a], "m s-1", ul[a], NULL, HS_F64, 1, &s->var_u[a]));
    HS_CHECK(hs_writer_def_var(w, "p", "Pa", "gauge pressure, density (rho - 1) cs^2 (dx/dt)^2", NULL, HS_F64, 1, &s->var_p));
    s->var_solid = -1;
    s->ser_cd = s->ser_cl = -1;
    if (s->g.obstacle != HS_LBM_OBS_NONE) {
        HS_CHECK(hs_writer_def_var(w, "solid", "1", "1 in obstacle cells, 0 in fluid", NULL, HS_F64, 0, &s->var_solid));
        int drag_axis, lift_axis;
        double sign;
        force_axes(&s->g, &drag_axis, &lift_axis, &sign);
        char drag_name[128], lift_name[128];
        snprintf(drag_name, sizeof drag_name, "drag coefficient of the obstacle (momentum exchange, the force along %c%c, the flow's direction)",
                 sign < 0 ? '-' : '+', "xyz"[drag_axis]);
        snprintf(lift_name, sizeof lift_name, "lift coefficient of the obstacle (momentum exchange, the force along +%c)", "xyz"[lift_axis]);
        HS_CHECK(hs_writer_def_series(w, "drag_coefficient", "1", drag_name, NULL, &s->ser_cd));
        HS_CHECK(hs_writer_def_series(w, "lift_coefficient", "1", lift_name, NULL, &s->ser_cl));
    }
    HS_CHECK(hs_writer_def_series(w, "mach_max", "1", "largest lattice Mach number |u| dt/dx sqrt(3) of the fluid", NULL, &s->ser_mach));
    s->solid_written = 0;
    return HS_OK;
}

/* Field `what` (HS_LBM_GATHER_*) of the local box into s->host (contiguous); the moments must be current. */
static int local_field(lbm *s, int what, double *umax)
{
    size_t cells = (size_t)(s->d->local[0] * s->d->local[1] * s->d->local[2]);
    const hs_lbm_geom *g = &s->g;
    const double vel = g->dx / g->dt;
    if (what == HS_LBM_GATHER_SOLID) {
        hs_lbm_geom_solid(g, s->d->offset, s->d->local, s->host);
        return HS_OK;
    }
    if (s->step == 0) {
        /* The run starts from rest (the rest equilibrium): the moments as the first step sees them
         * would already carry the lid's momentum and half the body force (u = U/3 on a lid's row),
         * which is that step's doing, not the initial state the t = 0 record stands for. */
        for (size_t i = 0; i < cells; i++) s->host[i] = what == HS_LBM_GATHER_RHO ? 1.0 : 0.0;
        return HS_OK;
    }
    int slot = what == HS_LBM_GATHER_P ? 0 : what;
    HS_CHECK(hs_mem_copy(s->ctx, s->host, s->mom + (size_t)slot * cells, cells * sizeof(double), HS_COPY_D2H));
    if (what == HS_LBM_GATHER_P)
        for (size_t i = 0; i < cells; i++) s->host[i] = g->density * (s->host[i] - 1.0) / 3.0 * vel * vel;
    else if (what != HS_LBM_GATHER_RHO)
        for (size_t i = 0; i < cells; i++) s->host[i] *= vel;
    if (umax)
        for (size_t i = 0; i < cells; i++) *umax = fmax(*umax, fabs(s->host[i]));
    return HS_OK;
}

static int write_state(void *state, hs_writer *w)
{
    lbm *s = state;
    const int64_t cnt[3] = {s->d->local[0], s->d->local[1], s->d->local[2]};
    HS_CHECK(moments(s));
    double speed2 = 0;
    size_t cells = (size_t)(cnt[0] * cnt[1] * cnt[2]);
    double *acc = calloc(cells ? cells : 1, sizeof(double));
    if (!acc) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    int rc = HS_OK;
    for (int a = 0; a < s->g.ndim && rc == HS_OK; a++) {
        rc = local_field(s, HS_LBM_GATHER_U + a, NULL);
        if (rc == HS_OK) rc = hs_writer_put_block(w, s->var_u[a], s->d->offset, cnt, s->host);
        for (size_t i = 0; rc == HS_OK && i < cells; i++) acc[i] += s->host[i] * s->host[i];
    }
    for (size_t i = 0; i < cells; i++) speed2 = fmax(speed2, acc[i]);
    free(acc);
    HS_CHECK(rc);
    HS_CHECK(local_field(s, HS_LBM_GATHER_P, NULL));
    HS_CHECK(hs_writer_put_block(w, s->var_p, s->d->offset, cnt, s->host));
    if (s->var_solid >= 0 && !s->solid_written) {
        HS_CHECK(local_field(s, HS_LBM_GATHER_SOLID, NULL));
        HS_CHECK(hs_writer_put_block(w, s->var_solid, s->d->offset, cnt, s->host));
        s->solid_written = 1;
    }
    if (s->ser_cd >= 0) {
        double F[3], cd, cl;
        HS_CHECK(forces(s, F, &cd, &cl));
        HS_CHECK(hs_writer_put_scalar(w, s->ser_cd, cd));
        HS_CHECK(hs_writer_put_scalar(w, s->ser_cl, cl));
    }
    double m[1] = {sqrt(speed2) * s->g.dt / s->g.dx * sqrt(3.0)};
    HS_CHECK(hs_allreduce_max(s->ctx->comm, m, 1));
    return hs_writer_put_scalar(w, s->ser_mach, m[0]);
}

/* Population q's interior as doubles (the stored values, f16 unscaled) into / out of buf. */
static int population_to_host(lbm *s, int q, double *buf)
{
    hs_field *f = s->f[q];
    size_t n = (size_t)(f->local[0] * f->local[1] * f->local[2]);
    if (s->g.store == HS_LBM_F64) return hs_field_get_interior(f, buf);
    void *raw = malloc((n ? n : 1) * hs_field_esize(f));
    if (!raw) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    int rc = hs_field_get_interior(f, raw);
    for (size_t i = 0; rc == HS_OK && i < n; i++)
        buf[i] = s->g.store == HS_LBM_F32 ? (double)((float *)raw)[i] : (double)hs_f16_to_f32(((uint16_t *)raw)[i]) / LBM_F16_SCALE;
    free(raw);
    return rc;
}

static int population_from_host(lbm *s, int q, const double *buf)
{
    hs_field *f = s->f[q];
    size_t n = (size_t)(f->local[0] * f->local[1] * f->local[2]);
    if (s->g.store == HS_LBM_F64) return hs_field_set_interior(f, buf);
    void *raw = malloc((n ? n : 1) * hs_field_esize(f));
    if (!raw) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    for (size_t i = 0; i < n; i++) {
        if (s->g.store == HS_LBM_F32) ((float *)raw)[i] = (float)buf[i];
        else ((uint16_t *)raw)[i] = hs_f32_to_f16((float)(buf[i] * LBM_F16_SCALE));
    }
    int rc = hs_field_set_interior(f, raw);
    free(raw);
    return rc;
}

static int checkpoint(void *state, hs_checkpoint *k)
{
    lbm *s = state;
    size_t n = (size_t)(s->d->local[0] * s->d->local[1] * s->d->local[2]);
    int rc = HS_OK;
    char name[16];
    for (int q = 0; q < s->g.q && rc == HS_OK; q++) {
        rc = population_to_host(s, q, s->host);
        snprintf(name, sizeof name, "f%02d", q);
        if (rc == HS_OK) rc = hs_checkpoint_write_state(k, name, HS_F64, (int64_t)n, s->host);
    }
    HS_CHECK(rc);
    double clock[2] = {s->time, (double)s->step};
    return hs_checkpoint_write(k, "clock", HS_F64, 2, clock);
}

static int restore(void *state, hs_checkpoint *k)
{
    lbm *s = state;
    size_t n = (size_t)(s->d->local[0] * s->d->local[1] * s->d->local[2]);
    char name[16];
    for (int q = 0; q < s->g.q; q++) {
        snprintf(name, sizeof name, "f%02d", q);
        HS_CHECK(hs_checkpoint_read_state(k, name, HS_F64, (int64_t)n, s->host));
        HS_CHECK(population_from_host(s, q, s->host));
    }
    double clock[2];
    HS_CHECK(hs_checkpoint_read(k, "clock", HS_F64, 2, clock));
    s->time = clock[0];
    s->step = (int64_t)clock[1];
    /* after an even step the ghost rings held the neighbours' post-step values (computed there
     * redundantly): the exchange brings exactly those */
    if ((s->step & 1) && any_exchange(s)) {
        HS_CHECK(hs_halo_exchange_group_begin(s->f, s->g.q));
        HS_CHECK(hs_halo_exchange_group_end(s->f, s->g.q));
    }
    return HS_OK;
}

static int finish(void *state)
{
    lbm *s = state;
    double ext[4];
    HS_CHECK(health_check(s, ext));
    double F[3], cd = 0, cl = 0;
    HS_CHECK(forces(s, F, &cd, &cl));
    if (s->ctx->rank == 0) {
        printf("lbm: D%dQ%d %s, %s storage: %lld steps of dt = %.4g to t = %.9g; tau %.4f, lattice Mach %.3g; max |u| %.4g m/s, density %.6f..%.6f\n",
               s->g.ndim, s->g.q, s->g.collision_trt ? "TRT" : "BGK", s->g.store == 0 ? "fp64" : s->g.store == 1 ? "fp32" : "fp16",
               (long long)s->step, s->g.dt, s->time, s->g.tau, s->g.u_lat * sqrt(3.0), ext[0], -ext[2], ext[1]);
        if (s->g.obstacle != HS_LBM_OBS_NONE) printf("lbm: obstacle drag coefficient %.6f, lift coefficient %.6f\n", cd, cl);
    }
    return HS_OK;
}

static void destroy(void *state)
{
    lbm *s = state;
    if (!s) return;
    for (int q = 0; q < HS_LBM_QMAX; q++) hs_field_destroy(s->f[q]);
    hs_field_destroy(s->scratch);
    for (int d = 0; d < 3; d++) {
        free(s->coords[d]);
        free(s->edges[d]);
    }
    if (s->ctx) {
        hs_mem_free(s->ctx, s->flag);
        hs_mem_free(s->ctx, s->link_cell);
        hs_mem_free(s->ctx, s->link_dir);
        hs_mem_free(s->ctx, s->link_q);
        hs_mem_free(s->ctx, s->link_force);
        hs_mem_free(s->ctx, s->mom);
    }
    hs_lbm_geom_free(&s->g);
    free(s->host_force);
    free(s->host);
    if (s->d) hs_decomp_destroy(s->d);
    free(s);
}

/* ---------------------------------------------------------------- for tests and the benchmark */

int hs_lbm_gather(void *state, int what, double *global_host)
{
    lbm *s = state;
    if (what < HS_LBM_GATHER_RHO || what > HS_LBM_GATHER_SOLID) return HS_FAIL(HS_ERR_INPUT, "hs_lbm_gather: unknown field %d", what);
    if (what != HS_LBM_GATHER_SOLID) HS_CHECK(moments(s));
    HS_CHECK(local_field(s, what, NULL));
    HS_CHECK(hs_field_set_interior(s->scratch, s->host));
    return hs_field_gather(s->scratch, 0, global_host);
}

int hs_lbm_gather_population(void *state, int q, double *global_host)
{
    lbm *s = state;
    if (q < 0 || q >= s->g.q) return HS_FAIL(HS_ERR_INPUT, "hs_lbm_gather_population: no direction %d", q);
    HS_CHECK(population_to_host(s, q, s->host));
    HS_CHECK(hs_field_set_interior(s->scratch, s->host));
    return hs_field_gather(s->scratch, 0, global_host);
}

int hs_lbm_forces(void *state, double force[3], double *cd, double *cl)
{
    double c1, c2;
    HS_CHECK(forces(state, force, &c1, &c2));
    if (cd) *cd = c1;
    if (cl) *cl = c2;
    return HS_OK;
}

void hs_lbm_units(void *state, double *dx, double *dt, double *u_lattice, double *tau, int *q)
{
    const lbm *s = state;
    if (dx) *dx = s->g.dx;
    if (dt) *dt = s->g.dt;
    if (u_lattice) *u_lattice = s->g.u_lat;
    if (tau) *tau = s->g.tau;
    if (q) *q = s->g.q;
}

int hs_lbm_bench_steps(void *state, int nsteps, double *seconds)
{
    lbm *s = state;
    hs_timer t;
    HS_CHECK(hs_timer_init(s->ctx, &t));
    HS_CHECK(hs_ctx_sync(s->ctx));
    HS_CHECK(hs_timer_start(&t));
    for (int i = 0; i < nsteps; i++) HS_CHECK(step(s));
    int rc = hs_timer_stop(&t, seconds);
    hs_timer_free(&t);
    return rc;
}

int hs_lbm_bench_kernel(void *state, int nsteps, double *seconds, double *bytes_per_cell)
{
    lbm *s = state;
    static const double esize[3] = {8, 4, 2};
    *bytes_per_cell = 2.0 * s->g.q * esize[s->g.store] + 1.0;
    hs_timer t;
    HS_CHECK(hs_timer_init(s->ctx, &t));
    HS_CHECK(hs_ctx_sync(s->ctx));
    HS_CHECK(hs_timer_start(&t));
    hs_lbm_launch L = launch_base(s);
    L.op = HS_LBM_STEP;
    int rc = HS_OK;
    for (int i = 0; i < nsteps && rc == HS_OK; i++) {
        L.odd = (int)((s->step + i) & 1);
        rc = launch(s, &L);
    }
    if (rc == HS_OK) rc = hs_timer_stop(&t, seconds);
    hs_timer_free(&t);
    return rc;
}

const hs_solver_ops hs_cfd_lbm = {
    .name = "lbm",
    .summary = "lattice Boltzmann D2Q9/D3Q19 (BGK/TRT, AA pattern, fp64/fp32/fp16 storage)",
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
