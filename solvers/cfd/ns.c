/* The navier_stokes CFD model: incompressible flow on a MAC grid, SSP-RK2 with a projection per stage, a transform or multigrid pressure solve. */
#include "solvers/cfd/ns.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/blas/blas.h"
#include "kernels/dispatch.h"
#include "kernels/error.h"
#include "kernels/fft/poisson.h"
#include "kernels/grid/grid.h"
#include "kernels/memory.h"
#include "kernels/mg/mg.h"
#include "kernels/rng/rng.h"
#include "physics/ns_exact.h"
#include "solvers/cfd/cfd.h"
#include "solvers/cfd/ns_impl.h"

/* Velocity boundary kinds, in the order of NS_BC_CHOICES. */
enum { NS_PERIODIC = 0, NS_WALL = 1, NS_INFLOW = 2, NS_OUTFLOW = 3 };
#define NS_BC_CHOICES "periodic|wall|inflow|outflow"
static const char *const g_ns_bc_names[] = {"periodic", "wall", "inflow", "outflow"};
/* Temperature boundary kinds. */
enum { NS_T_NEUMANN = 0, NS_T_DIRICHLET = 1 };
#define NS_T_BC_CHOICES "adiabatic|fixed"
/* navier_stokes.initial */
enum { NS_INIT_REST = 0, NS_INIT_TAYLOR_GREEN = 1, NS_INIT_POISEUILLE = 2 };
#define NS_INIT_CHOICES "rest|taylor_green|poiseuille"
/* navier_stokes.pressure_solver */
enum { NS_P_AUTO = 0, NS_P_FFT = 1, NS_P_MG = 2 };
#define NS_P_CHOICES "auto|fft|mg"

static const char *const g_face[3][2] = {{"xlo", "xhi"}, {"ylo", "yhi"}, {"zlo", "zhi"}};

static const hs_param_decl g_ns_params[] = {
    {"navier_stokes", "re", HS_PARAM_REAL, "100", 1e-6, 1e12, NULL, "Reynolds number U L / nu (unit length and velocity: nu = 1/re)"},
    {"navier_stokes", "advection", HS_PARAM_ENUM, "tvd", 0, 0, HS_NS_ADVECTION_CHOICES,
     "tvd: upwind-biased with the van Leer limiter (bounded at any Re); central: second-order, energy-conserving"},
    {"navier_stokes", "initial", HS_PARAM_ENUM, "rest", 0, 0, NS_INIT_CHOICES,
     "initial velocity: rest, the Taylor-Green vortex (periodic [0, 2 pi)^2), or the Poiseuille profile of the inflow"},
    {"navier_stokes", "bc_xlo", HS_PARAM_ENUM, "wall", 0, 0, NS_BC_CHOICES, "velocity boundary at x = 0"},
    {"navier_stokes", "bc_xhi", HS_PARAM_ENUM, "wall", 0, 0, NS_BC_CHOICES, "velocity boundary at x = length"},
    {"navier_stokes", "bc_ylo", HS_PARAM_ENUM, "wall", 0, 0, NS_BC_CHOICES, "velocity boundary at y = 0"},
    {"navier_stokes", "bc_yhi", HS_PARAM_ENUM, "wall", 0, 0, NS_BC_CHOICES, "velocity boundary at y = length"},
    {"navier_stokes", "bc_zlo", HS_PARAM_ENUM, "wall", 0, 0, NS_BC_CHOICES, "velocity boundary at z = 0"},
    {"navier_stokes", "bc_zhi", HS_PARAM_ENUM, "wall", 0, 0, NS_BC_CHOICES, "velocity boundary at z = length"},
    {"navier_stokes", "wall_velocity_xlo", HS_PARAM_REAL_LIST, "0", HS_NO_MIN, HS_NO_MAX, "1|2|3",
     "a wall's own velocity (u v w; tangential: a moving lid); one value: 0 for all"},
    {"navier_stokes", "wall_velocity_xhi", HS_PARAM_REAL_LIST, "0", HS_NO_MIN, HS_NO_MAX, "1|2|3", "as wall_velocity_xlo, at x = length"},
    {"navier_stokes", "wall_velocity_ylo", HS_PARAM_REAL_LIST, "0", HS_NO_MIN, HS_NO_MAX, "1|2|3", "as wall_velocity_xlo, at y = 0"},
    {"navier_stokes", "wall_velocity_yhi", HS_PARAM_REAL_LIST, "0", HS_NO_MIN, HS_NO_MAX, "1|2|3",
     "as wall_velocity_xlo, at y = length (the lid of the cavity: 1 0)"},
    {"navier_stokes", "wall_velocity_zlo", HS_PARAM_REAL_LIST, "0", HS_NO_MIN, HS_NO_MAX, "1|2|3", "as wall_velocity_xlo, at z = 0"},
    {"navier_stokes", "wall_velocity_zhi", HS_PARAM_REAL_LIST, "0", HS_NO_MIN, HS_NO_MAX, "1|2|3", "as wall_velocity_xlo, at z = length"},
    {"navier_stokes", "inflow_speed", HS_PARAM_REAL, "1", 1e-12, HS_NO_MAX, NULL, "mean normal velocity into the domain through inflow faces"},
    {"navier_stokes", "inflow_profile", HS_PARAM_ENUM, "parabolic", 0, 0, HS_NS_PROFILE_CHOICES,
     "inflow shape across the face: uniform, or parabolic (Poiseuille, zero at the walls)"},
    {"navier_stokes", "force", HS_PARAM_REAL_LIST, "0", HS_NO_MIN, HS_NO_MAX, "1|2|3", "body force per unit mass (fx fy fz)"},
    {"navier_stokes", "temperature", HS_PARAM_BOOL, "false", 0, 0, NULL,
     "transport temperature with Boussinesq buoyancy along +y; thermal units: length L, time L^2/kappa (nu = pr, kappa = 1)"},
    {"navier_stokes", "ra", HS_PARAM_REAL, "1e5", 0, 1e14, NULL, "temperature: Rayleigh number (buoyancy ra * pr * T along +y)"},
    {"navier_stokes", "pr", HS_PARAM_REAL, "0.71", 1e-6, 1e6, NULL, "temperature: Prandtl number"},
    {"navier_stokes", "T_bc_xlo", HS_PARAM_ENUM, "adiabatic", 0, 0, NS_T_BC_CHOICES, "temperature boundary at x = 0 (periodic faces follow bc_*)"},
    {"navier_stokes", "T_bc_xhi", HS_PARAM_ENUM, "adiabatic", 0, 0, NS_T_BC_CHOICES, "temperature boundary at x = length"},
    {"navier_stokes", "T_bc_ylo", HS_PARAM_ENUM, "adiabatic", 0, 0, NS_T_BC_CHOICES, "temperature boundary at y = 0"},
    {"navier_stokes", "T_bc_yhi", HS_PARAM_ENUM, "adiabatic", 0, 0, NS_T_BC_CHOICES, "temperature boundary at y = length"},
    {"navier_stokes", "T_bc_zlo", HS_PARAM_ENUM, "adiabatic", 0, 0, NS_T_BC_CHOICES, "temperature boundary at z = 0"},
    {"navier_stokes", "T_bc_zhi", HS_PARAM_ENUM, "adiabatic", 0, 0, NS_T_BC_CHOICES, "temperature boundary at z = length"},
    {"navier_stokes", "T_xlo", HS_PARAM_REAL, "0", HS_NO_MIN, HS_NO_MAX, NULL, "fixed wall temperature at x = 0 (also the inflow temperature)"},
    {"navier_stokes", "T_xhi", HS_PARAM_REAL, "0", HS_NO_MIN, HS_NO_MAX, NULL, "fixed wall temperature at x = length"},
    {"navier_stokes", "T_ylo", HS_PARAM_REAL, "0", HS_NO_MIN, HS_NO_MAX, NULL, "fixed wall temperature at y = 0"},
    {"navier_stokes", "T_yhi", HS_PARAM_REAL, "0", HS_NO_MIN, HS_NO_MAX, NULL, "fixed wall temperature at y = length"},
    {"navier_stokes", "T_zlo", HS_PARAM_REAL, "0", HS_NO_MIN, HS_NO_MAX, NULL, "fixed wall temperature at z = 0"},
    {"navier_stokes", "T_zhi", HS_PARAM_REAL, "0", HS_NO_MIN, HS_NO_MAX, NULL, "fixed wall temperature at z = length"},
    {"navier_stokes", "T_perturbation", HS_PARAM_REAL, "0", 0, 1e6, NULL,
     "temperature: amplitude of a random start perturbation, uniform in [-a, a] per cell (run.seed; the same on any rank count)"},
    {"navier_stokes", "steady_tol", HS_PARAM_REAL, "0", 0, HS_NO_MAX, NULL,
     "stop early at a steady state: when |d(kinetic energy)/dt| / kinetic energy falls below this (0: run to t_end)"},
    {"navier_stokes", "write_faces", HS_PARAM_BOOL, "false", 0, 0, NULL,
     "also write the raw MAC face velocities u_face, v_face, w_face on their staggered grids (x_face ...)"},
    {"navier_stokes", "dt_every", HS_PARAM_INT, "10", 1, 1e9, NULL, "adaptive step: steps between recomputations of dt from max |u|"},
    {"navier_stokes", "pressure_solver", HS_PARAM_ENUM, "auto", 0, 0, NS_P_CHOICES,
     "fft: direct transform solve (outflows facing walls or inflows in one dimension at most, ranks split along the last "
     "dimension); mg: multigrid-preconditioned CG (any boundaries, any split); auto: fft where it applies, else mg"},
    {"navier_stokes", "pressure_rtol", HS_PARAM_REAL, "1e-8", 1e-15, 1e-2, NULL,
     "mg: relative residual |f - L p| / |f| at which each pressure solve stops (1e-8: max |div u| ~ 1e-10 in the tests)"},
};

typedef struct ns_config {
    hs_cfd_config g;
    double nu, kappa, re, ra, pr;
    int advection, initial;
    int bc[3][2];
    double wall_vel[3][2][3];
    double inflow_speed;
    int inflow_profile;
    double force[3];
    int temperature;
    int T_bc[3][2];
    double T_wall[3][2];
    double steady_tol;
    double T_perturbation;      /* amplitude of the random start perturbation of T */
    uint64_t seed;              /* run.seed */
    int64_t dt_every;
    int write_faces; /* output: the staggered face velocities too */
    double u_ref; /* velocity scale of the stability estimate */
    char u_key[64]; /* the key whose value sets u_ref (named when the step it allows is too small) */
    double accel;   /* the largest acceleration the forces can give the fluid: |force| + ra pr (T span) */
    double u_bc;  /* the largest velocity the boundaries impose (walls, inflow): there from the first step */
    int pressure_solver; /* NS_P_FFT or NS_P_MG once validated (NS_P_AUTO resolved) */
    int fft_bcs;         /* the boundaries suit the transform solver */
    double pressure_rtol;
} ns_config;

typedef struct ns {
    hs_ctx *ctx;
    ns_config c;
    hs_decomp *d;
    hs_field *q[3], *q1[3]; /* velocity at the step start / after stage 1 */
    hs_field *T, *T1;
    hs_field *phi;          /* pressure (the last projection's potential), cell-centred, halo 1 */
    hs_field *scratch;      /* a cell field of diagnostics (no halo) */
    double *f;              /* Poisson right-hand side, contiguous cells */
    double *phi_c;          /* Poisson solution, contiguous cells */
    int ordered;            /* f and phi_c of a projection in the transform solver's order (hs_poisson_ordered) */
    int order[2];           /* that order along x and y (hs_ns_launch.order) */
    int dct4_side;          /* with order[0] = HS_POISSON_ROWS_DCT4: hs_poisson_dct4_layout */
    const double *dct4_tw;
    hs_poisson *poisson;    /* the transform solver, or NULL */
    hs_mg *mg;              /* the multigrid, or NULL */
    int64_t p_solves, p_iterations; /* multigrid: solves and CG iterations so far (this run) */
    int p_last, p_most;     /* iterations of the last solve, most of any */
    hs_bc vbc[3][3][2];     /* per component, per face: the ghost rules of the grid family */
    hs_bc Tbc[3][2], pbc[3][2];
    struct face_hook {
        struct ns *s;
        int set_value;
    } hook_in, hook_out;
    hs_clock clk; /* the simulated time */
    double dt, t_end;
    int64_t step;
    double outflow_speed;
    double ke_prev, t_ke_prev; /* steady-state watch */
    int steady;
    double last_div, last_cfl;
    /* output */
    double *coords[3], *edges[3];
    double *host;
    int var_u[3], var_p, var_T, var_vort, ser_ke, ser_ens, ser_div, ser_cfl, ser_nu, ser_piter;
    hs_grid_desc face_grids[3]; /* write_faces: the face grids of the output file, their variables */
    int var_face[3];
    double *face_host;
    size_t face_host_size;
    /* timing (the benchmark) */
    int timing;
    double t_pressure, t_total;
    hs_timer timer;
} ns;

static int declare(void) { return hs_params_declare(g_ns_params, (int)(sizeof g_ns_params / sizeof g_ns_params[0])); }

/* ---------------------------------------------------------------- configuration */

/* The uniform start temperature: the mean of the fixed walls' values (0 with none); the walls' own
 * values act through the boundary conditions from the first step. */
static double start_temperature(const ns_config *c)
{
    double t0 = 0;
    int nfix = 0;
    for (int d = 0; d < c->g.ndim; d++)
        for (int side = 0; side < 2; side++)
            if (c->T_bc[d][side] == NS_T_DIRICHLET) t0 += c->T_wall[d][side], nfix++;
    return nfix ? t0 / nfix : 0.0;
}

static int read_config(const hs_params *p, ns_config *c)
{
    memset(c, 0, sizeof *c);
    HS_CHECK(hs_cfd_config_read(p, &c->g));
    const int nd = c->g.ndim;
    c->re = hs_params_real(p, "navier_stokes.re");
    c->advection = hs_params_enum(p, "navier_stokes.advection");
    c->initial = hs_params_enum(p, "navier_stokes.initial");
    c->temperature = hs_params_bool(p, "navier_stokes.temperature");
    c->ra = hs_params_real(p, "navier_stokes.ra");
    c->pr = hs_params_real(p, "navier_stokes.pr");
    c->inflow_speed = hs_params_real(p, "navier_stokes.inflow_speed");
    c->inflow_profile = hs_params_enum(p, "navier_stokes.inflow_profile");
    c->steady_tol = hs_params_real(p, "navier_stokes.steady_tol");
    c->T_perturbation = hs_params_real(p, "navier_stokes.T_perturbation");
    c->seed = (uint64_t)hs_params_int(p, "run.seed");
    c->dt_every = hs_params_int(p, "navier_stokes.dt_every");
    /* the adaptive step's cadence: a fixed cfd.dt takes none (dt_every = 5 beside it ran without a word) */
    if (c->g.dt_user > 0) HS_CHECK(hs_params_unused(p, "navier_stokes.dt_every", "cfd.dt"));
    c->write_faces = hs_params_bool(p, "navier_stokes.write_faces");
    c->pressure_solver = hs_params_enum(p, "navier_stokes.pressure_solver");
    c->pressure_rtol = hs_params_real(p, "navier_stokes.pressure_rtol");
    HS_CHECK(hs_params_dim_reals(p, "navier_stokes.force", "cfd.ndim", nd, c->force, 0.0));
    if (c->temperature) {
        if (hs_params_set_against(p, "navier_stokes.re", "navier_stokes.temperature"))
            return hs_params_error(p, "navier_stokes.re", "is not used with temperature = true: the thermal units set nu = pr and kappa = 1");
        c->nu = c->pr;
        c->kappa = 1.0;
    } else {
        /* the thermal keys would be ignored without temperature: say so, as re is with it */
        static const char *const thermal[] = {"ra", "pr", "T_bc_xlo", "T_bc_xhi", "T_bc_ylo", "T_bc_yhi", "T_bc_zlo", "T_bc_zhi",
                                              "T_xlo", "T_xhi", "T_ylo", "T_yhi", "T_zlo", "T_zhi", "T_perturbation"};
        for (size_t k = 0; k < sizeof thermal / sizeof thermal[0]; k++) {
            char key[64];
            snprintf(key, sizeof key, "navier_stokes.%s", thermal[k]);
            if (hs_params_set_against(p, key, "navier_stokes.temperature"))
                return hs_params_error(p, key, "is used only with navier_stokes.temperature = true");
        }
        c->nu = 1.0 / c->re;
    }
    char key[64];
    int ninflow = 0, noutflow = 0, nmixed = 0;
    for (int d = 0; d < 3; d++)
        for (int s = 0; s < 2; s++) {
            snprintf(key, sizeof key, "navier_stokes.bc_%s", g_face[d][s]);
            c->bc[d][s] = d < nd ? hs_params_enum(p, key) : NS_PERIODIC;
            snprintf(key, sizeof key, "navier_stokes.wall_velocity_%s", g_face[d][s]);
            HS_CHECK(hs_params_dim_reals(p, key, "cfd.ndim", nd, c->wall_vel[d][s], 0.0));
            if (d >= nd) { /* the z faces of a 2D run do not exist: their keys would be ignored */
                static const char *const kinds[] = {"bc", "wall_velocity", "T_bc", "T"};
                for (int k = 0; k < 4; k++) {
                    snprintf(key, sizeof key, "navier_stokes.%s_%s", kinds[k], g_face[d][s]);
                    if (hs_params_set_against(p, key, "cfd.ndim"))
                        return hs_params_error(p, key, "face %s does not exist with cfd.ndim = %d", g_face[d][s], nd);
                }
                continue;
            }
            char bc_key[64];
            snprintf(bc_key, sizeof bc_key, "navier_stokes.bc_%s", g_face[d][s]);
            if (c->bc[d][s] != NS_WALL && hs_params_set_against(p, key, bc_key))
                return hs_params_error(p, key, "is set, but face %s is %s, not a wall", g_face[d][s],
                                       c->bc[d][s] == NS_PERIODIC ? "periodic" : c->bc[d][s] == NS_INFLOW ? "an inflow" : "an outflow");
            if (c->bc[d][s] == NS_WALL && c->wall_vel[d][s][d] != 0)
                return hs_params_error(p, key, "a wall's velocity must be tangential (component %d is the wall's normal, %g here)", d,
                                       c->wall_vel[d][s][d]);
            snprintf(key, sizeof key, "navier_stokes.T_bc_%s", g_face[d][s]);
            c->T_bc[d][s] = hs_params_enum(p, key);
            snprintf(key, sizeof key, "navier_stokes.T_%s", g_face[d][s]);
            c->T_wall[d][s] = hs_params_real(p, key);
            /* an inflow face brings its fluid in at T_<face> (default 0): its temperature is held
             * whatever T_bc says, so an adiabatic one there is a contradiction (it was ignored, and
             * the inflow brought in T = 0 unasked) */
            if (c->bc[d][s] == NS_INFLOW && c->T_bc[d][s] != NS_T_DIRICHLET) {
                char bkey[64];
                snprintf(bkey, sizeof bkey, "navier_stokes.T_bc_%s", g_face[d][s]);
                if (hs_params_set_against(p, bkey, bc_key))
                    return hs_params_error(p, bkey, "is adiabatic, but face %s is an inflow: its fluid comes in at navier_stokes.T_%s "
                                                    "(default 0); set T_bc_%s = fixed, or leave it out, and give T_%s",
                                           g_face[d][s], g_face[d][s], g_face[d][s], g_face[d][s]);
            }
            char tbc_key[64];
            snprintf(tbc_key, sizeof tbc_key, "navier_stokes.T_bc_%s", g_face[d][s]);
            if (c->T_bc[d][s] != NS_T_DIRICHLET && c->bc[d][s] != NS_INFLOW && hs_params_set_against(p, key, tbc_key))
                return hs_params_error(p, key, "is set, but navier_stokes.T_bc_%s is not fixed (the face's temperature is not held)",
                                       g_face[d][s]);
            if (c->bc[d][s] == NS_PERIODIC && c->T_bc[d][s] == NS_T_DIRICHLET) { /* periodic faces follow bc_*: fixed means nothing */
                snprintf(key, sizeof key, "navier_stokes.T_bc_%s", g_face[d][s]);
                return hs_params_error(p, key, "is fixed, but face %s is periodic (the temperature is periodic there too)", g_face[d][s]);
            }
            ninflow += c->bc[d][s] == NS_INFLOW;
            noutflow += c->bc[d][s] == NS_OUTFLOW;
        }
    for (int d = 0; d < nd; d++) {
        if ((c->bc[d][0] == NS_PERIODIC) != (c->bc[d][1] == NS_PERIODIC)) {
            /* name the face the user wrote (bc_xlo = periodic alone named bc_xhi, a default) */
            int per = c->bc[d][0] == NS_PERIODIC ? 0 : 1;
            snprintf(key, sizeof key, "navier_stokes.bc_%s", g_face[d][per]);
            if (!hs_params_is_set(p, key)) snprintf(key, sizeof key, "navier_stokes.bc_%s", g_face[d][1 - per]);
            return hs_params_error(p, key, "a periodic dimension must be periodic on both faces (bc_%s is %s)", g_face[d][1 - per],
                                   g_ns_bc_names[c->bc[d][1 - per]]);
        }
        /* the pressure is Dirichlet at an outflow, Neumann at walls and inflows: a dimension with
         * one of each is the transform solver's tridiagonal dimension, and it has only one */
        int out_lo = c->bc[d][0] == NS_OUTFLOW, out_hi = c->bc[d][1] == NS_OUTFLOW;
        if (c->bc[d][0] != NS_PERIODIC && out_lo != out_hi) nmixed++;
    }
    c->fft_bcs = nmixed <= 1;
    if (c->pressure_solver == NS_P_FFT && hs_params_set_against(p, "navier_stokes.pressure_rtol", "navier_stokes.pressure_solver"))
        return hs_params_error(p, "navier_stokes.pressure_rtol", "is set, but pressure_solver = fft solves directly (the "
                                                                 "tolerance is the multigrid's)");
    if (c->pressure_solver == NS_P_FFT && !c->fft_bcs)
        return hs_params_error(p, "navier_stokes.pressure_solver", "fft (the transform solver) takes an outflow facing a wall or "
                                                                   "an inflow in one dimension only, and %d dimensions have one: use "
                                                                   "mg or auto", nmixed);
    if (ninflow == 0)
        for (int k = 0; k < 2; k++) {
            const char *key_in = k ? "navier_stokes.inflow_profile" : "navier_stokes.inflow_speed";
            if (hs_params_is_set(p, key_in)) return hs_params_error(p, key_in, "is set, but no face is an inflow (bc_* = inflow)");
        }
    if (ninflow > 0 && noutflow == 0) {
        for (int d = 0; d < nd; d++)
            for (int s = 0; s < 2; s++)
                if (c->bc[d][s] == NS_INFLOW) {
                    snprintf(key, sizeof key, "navier_stokes.bc_%s", g_face[d][s]);
                    return hs_params_error(p, key, "an inflow needs an outflow somewhere (the fluid is incompressible)");
                }
    }
    if (c->initial == NS_INIT_TAYLOR_GREEN && (c->bc[0][0] != NS_PERIODIC || c->bc[1][0] != NS_PERIODIC))
        return hs_params_error(p, "navier_stokes.initial", "taylor_green needs periodic x and y (bc_x* = bc_y* = periodic)");
    /* sin x cos y is periodic on a 2 pi box only (on [0, 1) it was cut off and projected into
     * something else without a word) */
    for (int d = 0; d < 2 && c->initial == NS_INIT_TAYLOR_GREEN; d++)
        if (fabs(c->g.length[d] - 2 * M_PI) > 1e-9 * 2 * M_PI)
            return hs_params_error(p, "cfd.length", "taylor_green (u = sin x cos y) needs a 2 pi box along x and y "
                                                    "(cfd.length = 6.283185307179586), not %.10g along %c",
                                   c->g.length[d], "xy"[d]);
    if (c->initial == NS_INIT_POISEUILLE && ninflow == 0)
        return hs_params_error(p, "navier_stokes.initial", "poiseuille is the inflow's profile continued inside: it needs an inflow face");
    /* the velocity scale of the stability estimate, and the key that sets it (u_key: named when the
     * step this scale allows is too small for the run ever to end) */
    double u = 0;
    snprintf(c->u_key, sizeof c->u_key, "cfd.t_end");
    for (int d = 0; d < nd; d++)
        for (int s = 0; s < 2; s++)
            for (int e = 0; e < nd; e++)
                if (fabs(c->wall_vel[d][s][e]) > u) {
                    u = fabs(c->wall_vel[d][s][e]);
                    snprintf(c->u_key, sizeof c->u_key, "navier_stokes.wall_velocity_%s", g_face[d][s]);
                }
    if (ninflow) {
        double peak = c->inflow_speed * (c->inflow_profile == HS_NS_PROFILE_PARABOLIC ? (nd == 2 ? 1.5 : 2.25) : 1.0);
        if (!(peak <= u)) u = peak, snprintf(c->u_key, sizeof c->u_key, "navier_stokes.inflow_speed");
    }
    c->u_bc = u;
    if (c->initial == NS_INIT_TAYLOR_GREEN && u < 1.0) u = 1.0, snprintf(c->u_key, sizeof c->u_key, "navier_stokes.initial");
    if (c->temperature) {
        /* the span of the temperatures the run holds (fixed walls, and inflows, which bring their
         * fluid in at T_<face> whatever T_bc says: an inflow at 0 into a layer started at a lone
         * fixed wall's 1 was counted as no difference at all) and of the start's */
        double tlo = start_temperature(c), thi = tlo, tbig = -1;
        const char *dT_face = g_face[0][0]; /* the held temperature of largest magnitude */
        for (int d = 0; d < nd; d++)
            for (int s = 0; s < 2; s++)
                if (c->T_bc[d][s] == NS_T_DIRICHLET || c->bc[d][s] == NS_INFLOW) {
                    tlo = fmin(tlo, c->T_wall[d][s]), thi = fmax(thi, c->T_wall[d][s]);
                    if (fabs(c->T_wall[d][s]) > tbig) tbig = fabs(c->T_wall[d][s]), dT_face = g_face[d][s];
                }
        const double dT = thi - tlo;
        c->accel = c->ra * c->pr * dT;
        /* the largest velocity of buoyant convection in thermal units grows like sqrt(Ra Pr) */
        double ub = 0.3 * sqrt(c->ra * c->pr * dT);
        if (!(ub <= u)) {
            u = ub;
            /* the factor out of the ordinary: a temperature difference beyond Ra Pr is the wall's */
            if (dT > c->ra * c->pr) snprintf(c->u_key, sizeof c->u_key, "navier_stokes.T_%s", dT_face);
            else snprintf(c->u_key, sizeof c->u_key, "navier_stokes.ra");
        }
    }
    for (int d = 0; d < nd; d++) {
        double uf = sqrt(fabs(c->force[d]) * c->g.length[d]);
        if (!(uf <= u)) u = uf, snprintf(c->u_key, sizeof c->u_key, "navier_stokes.force");
        c->accel += fabs(c->force[d]);
    }
    c->u_ref = u;
    return HS_OK;
}

/* The largest stable step of SSP-RK2 with these velocities and diffusivities (an estimate: the
 * advective CFL number plus the diffusive number at most 1). */
/* The average Nusselt number is that of a cavity heated across x: both x faces walls of fixed,
 * different temperatures (elsewhere the series is not written: an inflow at x = 0 bringing its fluid
 * in at T_xlo, with a fixed temperature on the outflow at x = L, reported the inflow's conduction as
 * "the Nusselt number at x = 0") */
static int has_nusselt(const ns_config *c)
{
    return c->temperature && c->bc[0][0] == NS_WALL && c->bc[0][1] == NS_WALL && c->T_bc[0][0] == NS_T_DIRICHLET &&
           c->T_bc[0][1] == NS_T_DIRICHLET && c->T_wall[0][0] != c->T_wall[0][1];
}

static double stable_dt(const ns_config *c, const double umax[3])
{
    double s = 0, dmax = fmax(c->nu, c->kappa);
    for (int d = 0; d < c->g.ndim; d++) s += umax[d] / c->g.dx[d] + 2.0 * dmax / (c->g.dx[d] * c->g.dx[d]);
    return s > 0 ? 1.0 / s : HS_NO_MAX;
}

/* The input rules that need the grid and the ranks; warnings about resolution. */
static int validate(ns *s, const hs_params *p)
{
    HS_CHECK(read_config(p, &s->c));
    ns_config *c = &s->c;
    const int nd = c->g.ndim;
    if (c->g.model != HS_CFD_NAVIER_STOKES) return HS_FAIL(HS_ERR_RUNTIME, "navier_stokes model called for another model");
    /* the transform solver needs whole lines except along the last dimension; the multigrid takes
     * any split (automatic: MPI's balanced one) */
    int split_other = 0, procs[3] = {1, 1, 1};
    for (int d = 0; d < nd - 1; d++) split_other |= c->g.procs[d] > 1;
    if (c->pressure_solver == NS_P_AUTO) {
        c->pressure_solver = c->fft_bcs && !split_other ? NS_P_FFT : NS_P_MG;
        if (c->pressure_solver == NS_P_FFT && hs_params_is_set(p, "navier_stokes.pressure_rtol"))
            return hs_params_error(p, "navier_stokes.pressure_rtol", "is set, but pressure_solver = auto takes the transform solver "
                                                                     "here, which solves directly (the tolerance is the multigrid's: "
                                                                     "pressure_solver = mg)");
    }
    if (c->pressure_solver == NS_P_FFT && split_other)
        return hs_params_error(p, "cfd.procs", "navier_stokes with the transform pressure solver splits only the last dimension "
                                               "over the ranks (its transforms need whole lines): use cfd.procs = %s, or "
                                               "navier_stokes.pressure_solver = mg",
                               nd == 2 ? "1 0" : "1 1 0");
    if (c->pressure_solver == NS_P_FFT) procs[nd - 1] = c->g.procs[nd - 1] > 0 ? c->g.procs[nd - 1] : s->ctx->size;
    else
        for (int d = 0; d < nd; d++) procs[d] = c->g.procs[d];
    int periodic[3] = {0, 0, 0};
    for (int d = 0; d < nd; d++) periodic[d] = c->bc[d][0] == NS_PERIODIC;
    for (int d = 0; d < nd; d++)
        if (c->g.n[d] < 4) return hs_params_error(p, "cfd.n", "navier_stokes needs at least 4 cells per dimension, %lld given", (long long)c->g.n[d]);
    int rc = hs_decomp_create(s->ctx, nd, c->g.n, periodic, procs, 2, &s->d);
    if (rc == HS_ERR_INPUT) {
        return hs_params_error_rekey(p, hs_params_is_set(p, "cfd.procs") ? "cfd.procs" : "cfd.n");
    }
    HS_CHECK(rc);
    /* memory: 8 velocity-sized fields with halo 2, 2 temperature fields, pressure, scratch, the
     * Poisson arrays and the solver's work (about 3 more for the transforms; for the multigrid
     * about 7 with halos over all levels, and CG's 5 vectors) */
    double cells = 1, with_ghosts = 1;
    for (int d = 0; d < nd; d++) {
        cells *= (double)s->d->local[d];
        with_ghosts *= (double)(s->d->local[d] + 5);
    }
    double fields = 2.0 * nd + (c->temperature ? 2 : 0) + 2 + (c->pressure_solver == NS_P_MG ? 7 : 0);
    double device = 8.0 * (fields * with_ghosts + (c->pressure_solver == NS_P_MG ? 7.0 : 6.0) * cells);
    double host = 8.0 * cells * 2;
    if (s->ctx->rank == 0 && hs_params_enum(p, "output.format") != HS_OUTPUT_NONE) {
        double global = 1;
        for (int d = 0; d < nd; d++) global *= (double)c->g.n[d];
        host += 16.0 * global;
    }
    HS_CHECK(hs_driver_check_memory(s->ctx, p, "cfd.n", "the grid", "use more ranks or a smaller grid", device, host));
    /* the time step: cfl multiplies the step at which SSP-RK2 is just stable for the diffusion (and
     * for advection at cfl 1), so above 1 grid-scale modes grow (a cavity at cfl 1.1 ran to the end
     * with a +-0.4 checkerboard beside its walls) */
    if (c->g.dt_user == 0 && c->g.cfl > 1.0)
        return hs_params_error(p, "cfd.cfl", "%g is above navier_stokes's stable limit 1 (the adaptive step is cfl times the "
                                             "largest stable step of its SSP-RK2 scheme)", c->g.cfl);
    double umax[3] = {c->u_ref, c->u_ref, c->u_ref};
    double limit = stable_dt(c, umax);
    if (c->g.dt_user > limit)
        return hs_params_error(p, "cfd.dt", "%g is unstable here: with velocities up to %g and nu = %g the stable step is about %.4g "
                                            "(use cfd.dt = 0 for an adaptive step)",
                               c->g.dt_user, c->u_ref, c->nu, limit);
    /* an adaptive step below the resolution of the time at t_end never gets there: a lid at 1e20
     * stepped 3e-22 at a time (the driver stopped it at run time, exit 1, after the output file was
     * begun), an inflow of 1e300 or a force of 1e300 overflowed to a file of NaN.  The step is the
     * one the flow takes once it moves at its velocity scale; the key named is the term that makes
     * it so small (the velocity's, or the diffusion's: nu = 1/re, or pr and kappa = 1) */
    if (c->g.dt_user == 0 && c->g.t_end > 0 && (!(c->g.cfl * limit > 0) || hs_step_below_time_resolution(c->g.cfl * limit, c->g.t_end))) {
        double adv = 0, diff = 0, dxmin = HS_NO_MAX;
        for (int d = 0; d < nd; d++) {
            adv += c->u_ref / c->g.dx[d];
            diff += 2.0 * fmax(c->nu, c->kappa) / (c->g.dx[d] * c->g.dx[d]);
            dxmin = fmin(dxmin, c->g.dx[d]);
        }
        const char *key = c->u_key;
        if (!(adv >= diff)) key = !c->temperature ? "navier_stokes.re" : c->pr >= 1 ? "navier_stokes.pr" : "cfd.n";
        return hs_params_error(p, key, "the adaptive step is about %.3g (velocities up to about %g, nu = %g, on cells of %g), below the "
                                       "resolution of the time near cfd.t_end = %g: the run could never end",
                               c->g.cfl * limit, c->u_ref, c->nu, dxmin, c->g.t_end);
    }
    if (s->ctx->rank == 0) {
        /* boundary layers of thickness ~ L / sqrt(Re) want a few cells across them, that is along the
         * axes that end at a wall (a channel's coarse periodic x was taken for its wall-normal y) */
        double re = c->temperature ? sqrt(c->ra) : c->re * fmax(c->u_ref, 1e-300);
        double Lmin = HS_NO_MAX, dxmax = 0, dxwall = 0;
        for (int d = 0; d < nd; d++) {
            Lmin = fmin(Lmin, c->g.length[d]), dxmax = fmax(dxmax, c->g.dx[d]);
            if (c->bc[d][0] == NS_WALL || c->bc[d][1] == NS_WALL) dxwall = fmax(dxwall, c->g.dx[d]);
        }
        double delta = Lmin / sqrt(fmax(re, 1.0));
        if (dxwall > 0 && delta / dxwall < 3)
            fprintf(stderr,
                    "hpcsim: warning: navier_stokes: boundary layers of thickness ~ %s = %.3g get %.2g cells; resolving "
                    "them needs about %.0f cells per unit length (%g now)\n",
                    c->temperature ? "L/Ra^(1/4)" : "L/sqrt(Re)", delta, delta / dxwall, 3.0 / delta, 1.0 / dxwall);
        if (c->advection == HS_NS_ADV_CENTRAL && c->u_ref * dxmax / c->nu > 2)
            fprintf(stderr, "hpcsim: warning: navier_stokes: cell Reynolds number %.3g > 2 with central advection: expect "
                            "wiggles (advection = tvd stays bounded)\n", c->u_ref * dxmax / c->nu);
    }
    return HS_OK;
}

/* ---------------------------------------------------------------- kernels */

static hs_ns_lay lay_of(const hs_field *f, int ndim)
{
    hs_ns_lay l;
    l.origin = (int64_t)hs_field_index(f, 0, 0, 0);
    l.sy = ndim > 1 ? hs_field_stride_y(f) : 0;
    l.sz = ndim > 2 ? hs_field_stride_z(f) : 0;
    for (int d = 0; d < 3; d++) l.first[d] = -f->hw[d], l.end[d] = f->local[d] + f->hw[d];
    return l;
}

/* A launch record with the grid's numbers and the layouts of the given velocity and temperature. */
static hs_ns_launch launch_base(const ns *s, hs_field *const q[3], hs_field *T)
{
    hs_ns_launch L;
    memset(&L, 0, sizeof L);
    const ns_config *c = &s->c;
    L.ndim = c->g.ndim;
    L.advection = c->advection;
    for (int d = 0; d < L.ndim; d++) {
        L.lay[d] = lay_of(q[d], L.ndim);
        L.q[d] = q[d]->data;
        L.idx[d] = 1.0 / c->g.dx[d];
        L.idx2[d] = L.idx[d] * L.idx[d];
    }
    for (int d = 0; d < 3; d++) {
        L.local[d] = s->d->local[d];
        L.offset[d] = s->d->offset[d];
        L.dx[d] = c->g.dx[d];
        L.length[d] = c->g.length[d];
        L.walled[d] = d < c->g.ndim && c->bc[d][0] == NS_WALL && c->bc[d][1] == NS_WALL;
        L.force[d] = c->force[d];
    }
    L.lay[4] = lay_of(s->phi, L.ndim);
    if (T) {
        L.lay[3] = lay_of(T, L.ndim);
        L.T = T->data;
        L.buoy[1] = c->ra * c->pr;
    }
    L.nu = c->nu;
    L.kappa = c->kappa;
    /* the fields of a launch: the velocity, T, phi, and outputs of their layouts or of the local
     * cells (q0 and out are of the written field's layout); 2^31 less a margin for the halo reach */
    double most = (double)s->phi->count, cells = (double)L.local[0] * (double)L.local[1] * (double)L.local[2];
    for (int d = 0; d < L.ndim; d++) most = fmax(most, (double)q[d]->count);
    if (T) most = fmax(most, (double)T->count);
    L.index32 = fmax(most, cells) < 2147483647.0 - 1e6;
    return L;
}

static int launch(const ns *s, const hs_ns_launch *L)
{
    return HS_DISPATCH(s->ctx, hs_ns_launch_cpu(L), hs_ns_launch_cuda(s->ctx->cuda, L));
}

static void cell_box(const ns *s, hs_ns_launch *L)
{
    for (int d = 0; d < 3; d++) L->lo[d] = 0, L->hi[d] = s->d->local[d];
}

/* A cell-centred diagnostic of the velocity q (ghosts valid) into the contiguous array out. */
static int cell_op(ns *s, hs_field *const q[3], hs_field *T, int op, int comp, double *out)
{
    hs_ns_launch L = launch_base(s, q, T);
    L.op = op;
    L.comp = comp;
    L.out = out;
    cell_box(s, &L);
    if (op == HS_NS_WALL_FLUX) L.a = s->c.T_wall[0][0];
    return launch(s, &L);
}

/* The launch reads and writes the cell arrays in the transform solver's order (s->ordered). */
static void set_order(const ns *s, hs_ns_launch *L)
{
    L->order[0] = s->order[0], L->order[1] = s->order[1];
    L->dct4_side = s->dct4_side, L->dct4_tw = s->dct4_tw;
}

/* out = scale * div q over the cells (q's ghosts valid), in the transform solver's order where
 * `ordered` (s->order), else in natural order. */
static int divergence(ns *s, hs_field *const q[3], double scale, int ordered, double *out)
{
    hs_ns_launch L = launch_base(s, q, NULL);
    L.op = HS_NS_DIVERGENCE;
    L.scale = scale;
    if (ordered) set_order(s, &L);
    L.out = out;
    cell_box(s, &L);
    return launch(s, &L);
}

/* A reduction over the ranks of a contiguous cell array (through the scratch field, whose
 * reductions count each cell once and combine the ranks in order).  Collective. */
static int reduce_cells(ns *s, const double *cells, hs_field_op op, double *result)
{
    HS_CHECK(hs_field_load_interior(s->scratch, cells));
    return hs_field_reduce(s->scratch, op, result);
}

/* The custom boundary of the grid family for the normal velocity at inflows (profile set) and
 * outflows (value kept): the boundary points and the ghosts mirrored about them. */
static int face_hook(hs_field *f, int dim, int side, const hs_bc *bc, int homogeneous, void *user)
{
    (void)bc;
    const struct face_hook *h = user;
    const ns *s = h->s;
    hs_ns_launch L;
    memset(&L, 0, sizeof L);
    L.op = HS_NS_FACE_BC;
    L.ndim = s->c.g.ndim;
    L.comp = dim;
    L.lay[dim] = lay_of(f, L.ndim);
    L.out = f->data;
    L.side = side;
    L.hw = f->hw[dim];
    L.face_index = side ? f->local[dim] - 1 : 0;
    L.set_value = h->set_value;
    L.profile = s->c.inflow_profile;
    L.inflow_speed = homogeneous ? 0.0 : (side ? -s->c.inflow_speed : s->c.inflow_speed);
    for (int d = 0; d < 3; d++) {
        L.offset[d] = f->offset[d];
        L.dx[d] = s->c.g.dx[d];
        L.length[d] = s->c.g.length[d];
        L.walled[d] = d < s->c.g.ndim && s->c.bc[d][0] == NS_WALL && s->c.bc[d][1] == NS_WALL;
        /* the whole allocation across, the one boundary point along dim */
        L.lo[d] = d == dim ? 0 : -f->hw[d];
        L.hi[d] = d == dim ? 1 : f->local[d] + f->hw[d];
    }
    return launch(s, &L);
}

/* Halos and boundary ghosts of a velocity field set. */
static int velocity_ghosts(ns *s, hs_field *const q[3])
{
    HS_CHECK(hs_halo_exchange_group_begin(q, s->c.g.ndim));
    HS_CHECK(hs_halo_exchange_group_end(q, s->c.g.ndim));
    for (int c = 0; c < s->c.g.ndim; c++) HS_CHECK(hs_field_fill_ghosts(q[c], s->vbc[c], s->c.g.dx, 0));
    return HS_OK;
}

static int scalar_ghosts(ns *s, hs_field *T)
{
    HS_CHECK(hs_halo_exchange(T));
    return hs_field_fill_ghosts(T, s->Tbc, s->c.g.dx, 0);
}

/* The faces of component c that the momentum equation updates: all but walls and inflows. */
static void momentum_box(const ns *s, int c, hs_ns_part *part)
{
    const hs_field *f = s->q[c];
    for (int d = 0; d < 3; d++) part->lo[d] = 0, part->hi[d] = f->local[d];
    const int periodic = s->c.bc[c][0] == NS_PERIODIC;
    if (periodic) return;
    if (f->offset[c] == 0) {
        if (s->c.bc[c][0] == NS_OUTFLOW) part->outflow_lo = 1;
        else part->lo[c] = 1;
    }
    if (f->offset[c] + f->local[c] == f->global[c]) {
        if (s->c.bc[c][1] == NS_OUTFLOW) part->outflow_hi = 1;
        else part->hi[c] = f->local[c] - 1;
    }
}

/* out = a q0 + b (q + dt R(q)) for the velocity and temperature (q, T with valid ghosts). */
static int stage(ns *s, hs_field *const q[3], hs_field *T, hs_field *const q0[3], hs_field *T0, hs_field *const out[3],
                 hs_field *Tout, double a, double b, double dt)
{
    /* every component in one launch: the GPU reads the velocity once for all of them */
    hs_ns_launch L = launch_base(s, q, T);
    L.op = HS_NS_MOMENTUM_ALL;
    L.a = a, L.b = b, L.dt = dt;
    L.outflow_speed = s->outflow_speed;
    for (int c = 0; c < s->c.g.ndim; c++) {
        hs_ns_part *part = &L.part[c];
        part->q0 = a != 0 ? q0[c]->data : NULL;
        part->out = out[c]->data;
        momentum_box(s, c, part);
        for (int d = 0; d < 3; d++) {
            L.lo[d] = c == 0 ? part->lo[d] : (part->lo[d] < L.lo[d] ? part->lo[d] : L.lo[d]);
            L.hi[d] = c == 0 ? part->hi[d] : (part->hi[d] > L.hi[d] ? part->hi[d] : L.hi[d]);
        }
    }
    HS_CHECK(launch(s, &L));
    if (T) {
        hs_ns_launch L = launch_base(s, q, T);
        L.op = HS_NS_SCALAR;
        L.q0 = a != 0 ? T0->data : NULL;
        L.out = Tout->data;
        L.a = a, L.b = b, L.dt = dt;
        cell_box(s, &L);
        HS_CHECK(launch(s, &L));
    }
    return HS_OK;
}

/* The transform solver as the closing line and the benchmark name it. */
static const char *transform_summary(const ns *s)
{
    return hs_poisson_divide_hooked(s->poisson) ? "direct (transforms; the divide inside cuFFT's inverse transform)"
                                                : "direct (transforms)";
}

/* phi = L^-1 f (contiguous cells) by the transform solver or the multigrid, which must converge.
 * The multigrid's CG starts from the last projection's potential (the field phi, which checkpoints
 * keep, so a restart starts the same): the pressure changes little from stage to stage.  ordered:
 * f and phi in the transform solver's order (s->order).  No mean of f is asked for: the solvers
 * remove a singular problem's mean either way, and the transform solver would spend a pass over f
 * and a wait for the device to report it. */
static int pressure_solve(ns *s, const double *f, double *phi, int ordered)
{
    if (s->poisson && ordered) return hs_poisson_solve_ordered(s->poisson, f, phi, NULL);
    if (s->poisson) return hs_poisson_solve(s->poisson, f, phi, NULL);
    hs_mg_stats st;
    HS_CHECK(hs_field_store_interior(s->phi, phi));
    HS_CHECK(hs_mg_solve(s->mg, f, phi, 1, NULL, &st));
    if (!st.converged)
        return HS_FAIL(HS_ERR_RUNTIME, "navier_stokes: the multigrid pressure solve reached only a relative residual of %.3e "
                                       "(navier_stokes.pressure_rtol = %g) in %d iterations at step %lld, t = %.9g",
                       st.residual, s->c.pressure_rtol, st.iterations, (long long)s->step, s->clk.time);
    s->p_solves++;
    s->p_iterations += st.iterations;
    s->p_last = st.iterations;
    if (st.iterations > s->p_most) s->p_most = st.iterations;
    return HS_OK;
}

/* Make q divergence-free: L phi = div q / h, q -= h grad phi (h = the stage's time weight).  With
 * the transform solver's order (s->ordered), the divergence writes f in it and phi comes into its
 * field from it, so that the solve skips its first and last passes (its reorder and unreorder). */
static int project(ns *s, hs_field *const q[3], double h)
{
    HS_CHECK(velocity_ghosts(s, q));
    HS_CHECK(divergence(s, q, 1.0 / h, s->ordered, s->f));
    double t0 = 0;
    if (s->timing) {
        HS_CHECK(hs_ctx_sync(s->ctx));
        HS_CHECK(hs_timer_start(&s->timer));
    }
    HS_CHECK(pressure_solve(s, s->f, s->phi_c, s->ordered));
    if (s->timing) {
        HS_CHECK(hs_timer_stop(&s->timer, &t0));
        s->t_pressure += t0;
    }
    if (s->ordered) {
        hs_ns_launch L = launch_base(s, q, NULL);
        L.op = HS_NS_PHI_IN;
        set_order(s, &L);
        L.phi = s->phi_c;
        L.out = s->phi->data;
        cell_box(s, &L);
        HS_CHECK(launch(s, &L));
    } else {
        HS_CHECK(hs_field_load_interior(s->phi, s->phi_c));
    }
    HS_CHECK(hs_halo_exchange(s->phi));
    HS_CHECK(hs_field_fill_ghosts(s->phi, s->pbc, s->c.g.dx, 1));
    for (int c = 0; c < s->c.g.ndim; c++) {
        hs_ns_launch L = launch_base(s, q, NULL);
        L.op = HS_NS_CORRECT;
        L.comp = c;
        L.phi = s->phi->data;
        L.out = q[c]->data;
        L.scale = h;
        for (int d = 0; d < 3; d++) L.lo[d] = 0, L.hi[d] = q[c]->local[d];
        HS_CHECK(launch(s, &L));
    }
    return HS_OK;
}

/* One SSP-RK2 (Heun) step with a projection after each stage. */
static int step(ns *s, double dt)
{
    hs_field *T = s->c.temperature ? s->T : NULL, *T1 = s->c.temperature ? s->T1 : NULL;
    HS_CHECK(velocity_ghosts(s, s->q));
    if (T) HS_CHECK(scalar_ghosts(s, T));
    HS_CHECK(stage(s, s->q, T, NULL, NULL, s->q1, T1, 0.0, 1.0, dt));
    HS_CHECK(project(s, s->q1, dt));
    HS_CHECK(velocity_ghosts(s, s->q1));
    if (T) HS_CHECK(scalar_ghosts(s, T1));
    /* in place into q: each point reads only its own start-of-step value */
    HS_CHECK(stage(s, s->q1, T1, s->q, T, s->q, T, 0.5, 0.5, dt));
    return project(s, s->q, 0.5 * dt);
}

/* Largest |u_d| over the ranks, per component. */
static int velocity_max(ns *s, double umax[3])
{
    umax[0] = umax[1] = umax[2] = 0;
    for (int c = 0; c < s->c.g.ndim; c++) HS_CHECK(hs_field_maxabs(s->q[c], &umax[c]));
    return HS_OK;
}

static int choose_dt(ns *s)
{
    if (s->c.g.dt_user > 0) {
        s->dt = s->c.g.dt_user;
        return HS_OK;
    }
    double umax[3];
    HS_CHECK(velocity_max(s, umax));
    /* the boundaries' velocities enter the advective fluxes from the first step, while the field may
     * start at rest (a cavity at Re 10^4 on 32^2 took a first step at CFL 34 and blew up when only
     * the field's velocity was counted) */
    for (int d = 0; d < 3; d++) umax[d] = fmax(umax[d], fmax(s->c.u_bc, 1e-3 * s->c.u_ref));
    s->dt = s->c.g.cfl * stable_dt(&s->c, umax);
    if (s->c.accel > 0) {
        /* a force or buoyancy accelerates the fluid by up to accel while the step is kept for
         * dt_every steps: the step counts the velocity that adds by the end of them, dt (R + A dt)
         * = cfl with R the rate of the velocity now and A = accel dt_every sum 1/dx (a layer at Ra
         * 1e5 started from rest against an inflow at another temperature took ten steps at the
         * step of the fluid at rest and blew up at the tenth; the spectral model bounds its forced
         * step alike) */
        const ns_config *c = &s->c;
        double R = 0, ix = 0;
        for (int d = 0; d < c->g.ndim; d++) {
            R += umax[d] / c->g.dx[d] + 2.0 * fmax(c->nu, c->kappa) / (c->g.dx[d] * c->g.dx[d]);
            ix += 1.0 / c->g.dx[d];
        }
        double A = c->accel * (double)c->dt_every * ix;
        s->dt = 2.0 * c->g.cfl / (R + sqrt(R * R + 4.0 * c->g.cfl * A));
    }
    if (!(s->dt > 0) || !isfinite(s->dt))
        return HS_FAIL(HS_ERR_RUNTIME, "navier_stokes: the velocity is not finite at step %lld, t = %.9g", (long long)s->step, s->clk.time);
    return HS_OK;
}

static int kinetic_energy(ns *s, double *ke)
{
    HS_CHECK(velocity_ghosts(s, s->q));
    HS_CHECK(cell_op(s, s->q, NULL, HS_NS_ENERGY, 0, s->phi_c));
    HS_CHECK(reduce_cells(s, s->phi_c, HS_FIELD_SUM, ke));
    double vol = 1;
    for (int d = 0; d < s->c.g.ndim; d++) vol *= s->c.g.dx[d];
    *ke *= vol;
    return HS_OK;
}

static int advance(void *state, double until, int64_t max_steps, int64_t *taken)
{
    ns *s = state;
    *taken = 0;
    if (until > s->t_end) until = s->t_end;
    while (*taken < max_steps && s->clk.time < until) {
        if (s->c.g.dt_user > 0 || s->step % s->c.dt_every == 0 || s->dt <= 0) HS_CHECK(choose_dt(s));
        double dt = hs_step_toward(s->clk.time, s->dt, until);
        if (dt <= 0) {
            hs_clock_set(&s->clk, until);
            break;
        }
        HS_CHECK(step(s, dt));
        hs_clock_step(&s->clk, dt, s->dt, until);
        s->step++;
        (*taken)++;
        if (s->c.steady_tol > 0 && s->step % 100 == 0) {
            double ke;
            HS_CHECK(kinetic_energy(s, &ke));
            if (s->t_ke_prev > 0 && ke > 0) {
                double rate = fabs(ke - s->ke_prev) / (s->clk.time - s->t_ke_prev) / ke;
                if (rate < s->c.steady_tol) {
                    s->steady = 1;
                    s->t_end = s->clk.time;
                    break;
                }
            }
            s->ke_prev = ke;
            s->t_ke_prev = s->clk.time;
        }
        if (s->c.g.diag_every > 0 && s->step % s->c.g.diag_every == 0) {
            double ke;
            HS_CHECK(kinetic_energy(s, &ke));
            if (s->ctx->rank == 0) {
                printf("navier_stokes: step %lld t = %.6g dt = %.4g kinetic energy %.10g", (long long)s->step, s->clk.time, s->dt, ke);
                if (s->mg) printf(", pressure solve %d iterations", s->p_last);
                printf("\n");
            }
        }
    }
    return HS_OK;
}

static void progress(void *state, double *time, int64_t *step_out, double *t_end, double *work)
{
    ns *s = state;
    *time = s->clk.time;
    *step_out = s->step;
    *t_end = s->t_end;
    *work = (double)s->c.g.n[0] * (double)s->c.g.n[1] * (double)s->c.g.n[2];
}

/* ---------------------------------------------------------------- set-up */

static double face_coord(const ns_config *c, int d, int64_t i) { return (double)i * c->g.dx[d]; }
static double cell_coord(const ns_config *c, int d, int64_t i) { return ((double)i + 0.5) * c->g.dx[d]; }

/* The initial velocity at the owned points of component comp, through the host. */
static int initial_velocity(ns *s, int comp)
{
    const ns_config *c = &s->c;
    hs_field *f = s->q[comp];
    size_t n = (size_t)(f->local[0] * f->local[1] * f->local[2]);
    double *h = calloc(n ? n : 1, sizeof *h);
    if (!h) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    int inflow_dim = -1;
    for (int d = 0; d < c->g.ndim; d++)
        if (c->bc[d][0] == NS_INFLOW || c->bc[d][1] == NS_INFLOW) inflow_dim = d;
    for (int64_t k = 0; k < f->local[2]; k++)
        for (int64_t j = 0; j < f->local[1]; j++)
            for (int64_t i = 0; i < f->local[0]; i++) {
                int64_t g[3] = {i + f->offset[0], j + f->offset[1], k + f->offset[2]};
                double x[3];
                for (int d = 0; d < 3; d++) x[d] = d == comp ? face_coord(c, d, g[d]) : cell_coord(c, d, g[d]);
                double v = 0;
                if (c->initial == NS_INIT_TAYLOR_GREEN) {
                    double vel[3];
                    hs_taylor_green(x[0], x[1], 0.0, c->nu, vel, NULL);
                    v = vel[comp];
                } else if (c->initial == NS_INIT_POISEUILLE && comp == inflow_dim) {
                    double shape = 1;
                    if (c->inflow_profile == HS_NS_PROFILE_PARABOLIC)
                        for (int d = 0; d < c->g.ndim; d++)
                            if (d != comp && c->bc[d][0] == NS_WALL && c->bc[d][1] == NS_WALL)
                                /* as the inflow face's hs_ns_profile: the sampled parabola's mean
                                 * 1 + 1/(2 n^2) divided out (the start differed from the face by that,
                                 * and the first projection bent the profile to mend the flux) */
                                shape *= hs_poiseuille_mean(x[d], c->g.length[d], 1.0) /
                                         (1.0 + 0.5 / ((double)c->g.n[d] * (double)c->g.n[d]));
                    v = c->inflow_speed * shape * (c->bc[comp][0] == NS_INFLOW ? 1 : -1);
                }
                h[(k * f->local[1] + j) * f->local[0] + i] = v;
            }
    int rc = hs_field_set_interior(f, h);
    free(h);
    return rc;
}

/* The start temperature: uniform t0, plus c->T_perturbation times a uniform number in [-1, 1] drawn
 * by the cell's global index (the same field on any rank count and device).  A Rayleigh-Benard
 * layer started uniform stays symmetric, so conductive however unstable: the noise seeds it. */
#define NS_RNG_USE 0x4e53u
static int initial_temperature(ns *s, double t0)
{
    const ns_config *c = &s->c;
    if (c->T_perturbation == 0) return hs_field_fill(s->T, t0);
    hs_field *f = s->T;
    size_t n = (size_t)(f->local[0] * f->local[1] * f->local[2]);
    double *h = malloc((n ? n : 1) * sizeof *h);
    if (!h) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    const uint64_t stream = hs_rng_stream(NS_RNG_USE, 0);
    for (int64_t k = 0; k < f->local[2]; k++)
        for (int64_t j = 0; j < f->local[1]; j++)
            for (int64_t i = 0; i < f->local[0]; i++) {
                uint64_t cell = (uint64_t)(i + f->offset[0]) +
                                (uint64_t)c->g.n[0] * ((uint64_t)(j + f->offset[1]) + (uint64_t)c->g.n[1] * (uint64_t)(k + f->offset[2]));
                h[(k * f->local[1] + j) * f->local[0] + i] = t0 + c->T_perturbation * (2 * hs_rng_u01(c->seed, stream, cell) - 1);
            }
    int rc = hs_field_set_interior(f, h);
    free(h);
    return rc;
}

/* The area of a face of the domain normal to dimension d. */
static double face_area(const ns_config *c, int d)
{
    double a = 1;
    for (int e = 0; e < c->g.ndim; e++)
        if (e != d) a *= c->g.length[e];
    return a;
}

static int setup_boundaries(ns *s)
{
    const ns_config *c = &s->c;
    s->hook_in = (struct face_hook){s, 1};
    s->hook_out = (struct face_hook){s, 0};
    hs_poisson_bc pb[3][2];
    double inflow_area = 0;
    for (int d = 0; d < 3; d++)
        for (int side = 0; side < 2; side++) {
            int kind = c->bc[d][side];
            pb[d][side] = kind == NS_PERIODIC ? HS_POISSON_PERIODIC : kind == NS_OUTFLOW ? HS_POISSON_DIRICHLET : HS_POISSON_NEUMANN;
            s->pbc[d][side] = (hs_bc){kind == NS_PERIODIC ? HS_BC_PERIODIC : kind == NS_OUTFLOW ? HS_BC_DIRICHLET : HS_BC_NEUMANN, 0, NULL, NULL};
            int tkind = kind == NS_PERIODIC ? HS_BC_PERIODIC : c->T_bc[d][side] == NS_T_DIRICHLET || kind == NS_INFLOW ? HS_BC_DIRICHLET : HS_BC_NEUMANN;
            s->Tbc[d][side] = (hs_bc){tkind, tkind == HS_BC_DIRICHLET ? c->T_wall[d][side] : 0, NULL, NULL};
            for (int comp = 0; comp < 3; comp++) {
                hs_bc *b = &s->vbc[comp][d][side];
                *b = (hs_bc){HS_BC_PERIODIC, 0, NULL, NULL};
                if (kind == NS_PERIODIC) continue;
                if (kind == NS_WALL) *b = (hs_bc){HS_BC_DIRICHLET, c->wall_vel[d][side][comp], NULL, NULL};
                else if (kind == NS_INFLOW) *b = comp == d ? (hs_bc){HS_BC_CUSTOM, 0, face_hook, &s->hook_in} : (hs_bc){HS_BC_DIRICHLET, 0, NULL, NULL};
                else *b = comp == d ? (hs_bc){HS_BC_CUSTOM, 0, face_hook, &s->hook_out} : (hs_bc){HS_BC_NEUMANN, 0, NULL, NULL};
            }
            if (d < c->g.ndim && kind == NS_INFLOW) inflow_area += face_area(c, d);
        }
    /* outflows carry what comes in at the same mean speed per unit area */
    double outflow_area = 0;
    for (int d = 0; d < c->g.ndim; d++)
        for (int side = 0; side < 2; side++)
            if (c->bc[d][side] == NS_OUTFLOW) outflow_area += face_area(c, d);
    /* (an outflow without inflow, in a flow driven by a force, convects at the velocity scale) */
    s->outflow_speed = outflow_area <= 0 ? 0 : inflow_area > 0 ? c->inflow_speed * inflow_area / outflow_area : fmax(c->u_ref, 1e-12);
    if (c->pressure_solver == NS_P_FFT) {
        HS_CHECK(hs_poisson_create(s->d, pb, c->g.dx, &s->poisson));
        int order[3];
        s->ordered = hs_poisson_ordered(s->poisson, order);
        s->order[0] = order[0], s->order[1] = order[1];
        hs_poisson_dct4_layout(s->poisson, &s->dct4_side, &s->dct4_tw);
        return HS_OK;
    }
    hs_bc_kind kinds[3][2];
    for (int d = 0; d < 3; d++)
        for (int side = 0; side < 2; side++) kinds[d][side] = s->pbc[d][side].kind;
    hs_mg_opts o = hs_mg_default_opts();
    o.rtol = c->pressure_rtol;
    return hs_mg_create(s->d, kinds, c->g.dx, &o, &s->mg);
}

static void destroy(void *state);

static int check(hs_ctx *ctx, const hs_params *p)
{
    ns *s = calloc(1, sizeof *s);
    if (!s) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    s->ctx = ctx;
    int rc = validate(s, p);
    destroy(s);
    return rc;
}

static int create(hs_ctx *ctx, const hs_params *p, void **state)
{
    ns *s = calloc(1, sizeof *s);
    if (!s) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    *state = s;
    s->ctx = ctx;
    HS_CHECK(validate(s, p));
    const ns_config *c = &s->c;
    const int nd = c->g.ndim;
    s->t_end = c->g.t_end;
    for (int comp = 0; comp < nd; comp++) {
        HS_CHECK(hs_field_create_staggered(s->d, HS_F64, 2, comp, &s->q[comp]));
        HS_CHECK(hs_field_create_staggered(s->d, HS_F64, 2, comp, &s->q1[comp]));
        HS_CHECK(hs_field_set_corners(s->q[comp], 1));
        HS_CHECK(hs_field_set_corners(s->q1[comp], 1));
    }
    if (c->temperature) {
        HS_CHECK(hs_field_create(s->d, HS_F64, 2, &s->T));
        HS_CHECK(hs_field_create(s->d, HS_F64, 2, &s->T1));
    }
    HS_CHECK(hs_field_create(s->d, HS_F64, 1, &s->phi));
    HS_CHECK(hs_field_create(s->d, HS_F64, 0, &s->scratch));
    size_t cells = (size_t)(s->d->local[0] * s->d->local[1] * s->d->local[2]);
    HS_CHECK(hs_mem_alloc(ctx, (cells ? cells : 1) * sizeof(double), (void **)&s->f));
    HS_CHECK(hs_mem_alloc(ctx, (cells ? cells : 1) * sizeof(double), (void **)&s->phi_c));
    s->host = malloc((cells ? cells : 1) * sizeof(double));
    if (!s->host) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    HS_CHECK(setup_boundaries(s));
    for (int comp = 0; comp < nd; comp++) HS_CHECK(initial_velocity(s, comp));
    if (c->temperature) {
        /* a uniform start at the mean of the fixed temperatures (0 with none): the walls' own values
         * act through the boundary conditions from the first step */
        HS_CHECK(initial_temperature(s, start_temperature(c)));
    }
    /* a divergence-free start (Taylor-Green already is; the inflow profile needs its walls) */
    HS_CHECK(project(s, s->q, 1.0));
    /* The pressure at t = 0 (the t = 0 record wrote p = 0): the potential of a first stage's
     * projection, L p = div of the momentum's other terms, as each step finds it; the stage's
     * velocity is scratch. */
    HS_CHECK(choose_dt(s));
    HS_CHECK(velocity_ghosts(s, s->q));
    if (c->temperature) HS_CHECK(scalar_ghosts(s, s->T));
    HS_CHECK(stage(s, s->q, c->temperature ? s->T : NULL, NULL, NULL, s->q1, c->temperature ? s->T1 : NULL, 0.0, 1.0, s->dt));
    HS_CHECK(project(s, s->q1, s->dt));
    HS_CHECK(hs_timer_init(ctx, &s->timer));
    return HS_OK;
}

/* ---------------------------------------------------------------- output, checkpoints */

static int describe_output(void *state, hs_output_desc *desc)
{
    ns *s = state;
    static const char *names[3] = {"x", "y", "z"};
    static const char *long_names[3] = {"x coordinate of cell centre", "y coordinate of cell centre", "z coordinate of cell centre"};
    const ns_config *c = &s->c;
    desc->title = "hpcsim incompressible Navier-Stokes (MAC grid, projection)";
    /* the model is dimensionless: the record axis keeps CF time units for the tools (CDO, xarray)
     * and says in its long_name what one unit is */
    desc->record_long_name = c->temperature ? "time in units of L^2/kappa (dimensionless; the units attribute is for CF tools)"
                                            : "time in units of L/U (dimensionless; the units attribute is for CF tools)";
    desc->ndim = c->g.ndim;
    for (int d = 0; d < c->g.ndim; d++) {
        if (!s->coords[d]) {
            s->coords[d] = malloc((size_t)c->g.n[d] * sizeof(double));
            s->edges[d] = malloc((size_t)(c->g.n[d] + 1) * sizeof(double));
            if (!s->coords[d] || !s->edges[d]) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
            for (int64_t i = 0; i < c->g.n[d]; i++) s->coords[d][i] = cell_coord(c, d, i);
            for (int64_t i = 0; i <= c->g.n[d]; i++) s->edges[d][i] = face_coord(c, d, i);
        }
        desc->dim_names[d] = names[d];
        desc->n[d] = c->g.n[d];
        desc->coords[d] = s->coords[d];
        desc->edges[d] = s->edges[d];
        desc->coord_units[d] = "1";
        desc->coord_long_names[d] = long_names[d];
    }
    if (c->write_faces) { /* each velocity component on its own faces, as the solver stores it */
        static const char *grid_names[3] = {"u_faces", "v_faces", "w_faces"}, *face_names[3] = {"x_face", "y_face", "z_face"};
        static const char *face_long[3] = {"x coordinate of the x faces", "y coordinate of the y faces", "z coordinate of the z faces"};
        memset(s->face_grids, 0, sizeof s->face_grids);
        for (int d = 0; d < c->g.ndim; d++) {
            hs_grid_desc *g = &s->face_grids[d];
            g->name = grid_names[d];
            g->stagger[d] = HS_STAGGER_FACE;
            g->dim_names[d] = face_names[d];
            g->periodic[d] = c->bc[d][0] == NS_PERIODIC;
            g->coord_long_names[d] = face_long[d];
        }
        desc->ngrids = c->g.ndim;
        desc->grids = s->face_grids;
    }
    return HS_OK;
}

static int define_vars(void *state, hs_writer *w)
{
    ns *s = state;
    static const char *vn[3] = {"u", "v", "w"};
    static const char *vl[3] = {"x velocity at the cell centre", "y velocity at the cell centre", "z velocity at the cell centre"};
    for (int c = 0; c < s->c.g.ndim; c++) HS_CHECK(hs_writer_def_var(w, vn[c], "1", vl[c], NULL, HS_F64, 1, &s->var_u[c]));
    HS_CHECK(hs_writer_def_var(w, "p", "1", "kinematic pressure (the last projection's potential)", NULL, HS_F64, 1, &s->var_p));
    if (s->c.temperature) HS_CHECK(hs_writer_def_var(w, "T", "1", "temperature", NULL, HS_F64, 1, &s->var_T));
    HS_CHECK(hs_writer_def_var(w, "vorticity", "1", s->c.g.ndim == 2 ? "vorticity dv/dx - du/dy" : "vorticity magnitude |curl u|",
                               NULL, HS_F64, 1, &s->var_vort));
    HS_CHECK(hs_writer_def_series(w, "kinetic_energy", "1", "kinetic energy, integral of |u|^2/2", NULL, &s->ser_ke));
    HS_CHECK(hs_writer_def_series(w, "enstrophy", "1", "enstrophy, integral of |curl u|^2/2", NULL, &s->ser_ens));
    HS_CHECK(hs_writer_def_series(w, "divergence_max", "1", "largest |div u| over the cells after the projection", NULL, &s->ser_div));
    HS_CHECK(hs_writer_def_series(w, "cfl", "1", "CFL number dt sum_d max|u_d|/dx_d of the current step size dt " HS_CFD_CFL_STEP_NOTE, NULL, &s->ser_cfl));
    if (has_nusselt(&s->c))
        HS_CHECK(hs_writer_def_series(w, "nusselt", "1", "average Nusselt number at the x = 0 wall (-dT/dx L_x / |T_xlo - T_xhi|)",
                                      NULL, &s->ser_nu));
    static const char *fn[3] = {"u_face", "v_face", "w_face"};
    static const char *fl[3] = {"x velocity on the x faces (MAC grid)", "y velocity on the y faces (MAC grid)",
                                "z velocity on the z faces (MAC grid)"};
    for (int c = 0; s->c.write_faces && c < s->c.g.ndim; c++)
        HS_CHECK(hs_writer_def_grid_var(w, s->face_grids[c].name, fn[c], "1", fl[c], NULL, HS_F64, 1, &s->var_face[c]));
    if (s->mg)
        HS_CHECK(hs_writer_def_series(w, "pressure_iterations", "1", "CG iterations of the last multigrid pressure solve", NULL,
                                      &s->ser_piter));
    return HS_OK;
}

/* write_faces: the faces this rank owns of velocity component c, on their own grid. */
static int put_faces(ns *s, hs_writer *w, int c)
{
    hs_field *f = s->q[c];
    size_t n = (size_t)(f->local[0] * f->local[1] * f->local[2]);
    if (n > s->face_host_size) {
        double *h = realloc(s->face_host, n * sizeof *h);
        if (!h) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
        s->face_host = h;
        s->face_host_size = n;
    }
    HS_CHECK(hs_field_get_interior(f, s->face_host));
    return hs_writer_put_block(w, s->var_face[c], f->offset, f->local, s->face_host);
}

/* The scalar diagnostics of the current state. */
static int diagnostics(ns *s, double *ke, double *ens, double *divmax, double *cfl, double *nusselt)
{
    const ns_config *c = &s->c;
    double vol = 1;
    for (int d = 0; d < c->g.ndim; d++) vol *= c->g.dx[d];
    HS_CHECK(kinetic_energy(s, ke));
    HS_CHECK(cell_op(s, s->q, NULL, HS_NS_ENSTROPHY, 0, s->phi_c));
    HS_CHECK(reduce_cells(s, s->phi_c, HS_FIELD_SUM, ens));
    *ens *= vol;
    HS_CHECK(divergence(s, s->q, 1.0, 0, s->phi_c));
    HS_CHECK(reduce_cells(s, s->phi_c, HS_FIELD_MAXABS, divmax));
    double umax[3];
    HS_CHECK(velocity_max(s, umax));
    *cfl = 0;
    for (int d = 0; d < c->g.ndim; d++) *cfl += s->dt * umax[d] / c->g.dx[d];
    *nusselt = 0;
    if (has_nusselt(c)) {
        HS_CHECK(scalar_ghosts(s, s->T));
        HS_CHECK(cell_op(s, s->q, s->T, HS_NS_WALL_FLUX, 0, s->phi_c));
        HS_CHECK(reduce_cells(s, s->phi_c, HS_FIELD_SUM, nusselt));
        double across = 1;
        for (int d = 1; d < c->g.ndim; d++) across *= (double)c->g.n[d];
        /* -dT/dx at x = 0 averaged over the wall, in units of the conduction flux dT / L_x (de Vahl
         * Davis's Nu; positive with the hot wall at x = 0 or at x = L_x alike) */
        *nusselt *= c->g.length[0] / (across * fabs(c->T_wall[0][0] - c->T_wall[0][1]));
        if (c->T_wall[0][0] < c->T_wall[0][1]) *nusselt = -*nusselt;
    }
    return HS_OK;
}

static int put_cells(ns *s, hs_writer *w, int var, const double *dev)
{
    size_t cells = (size_t)(s->d->local[0] * s->d->local[1] * s->d->local[2]);
    HS_CHECK(hs_mem_copy(s->ctx, s->host, dev, cells * sizeof(double), HS_COPY_D2H));
    return hs_writer_put_block(w, var, s->d->offset, s->d->local, s->host);
}

static int write_state(void *state, hs_writer *w)
{
    ns *s = state;
    HS_CHECK(velocity_ghosts(s, s->q));
    for (int c = 0; c < s->c.g.ndim; c++) {
        HS_CHECK(cell_op(s, s->q, NULL, HS_NS_CENTRE, c, s->phi_c));
        HS_CHECK(put_cells(s, w, s->var_u[c], s->phi_c));
    }
    HS_CHECK(cell_op(s, s->q, NULL, HS_NS_VORTICITY, 0, s->phi_c));
    HS_CHECK(put_cells(s, w, s->var_vort, s->phi_c));
    HS_CHECK(hs_field_get_interior(s->phi, s->host));
    HS_CHECK(hs_writer_put_block(w, s->var_p, s->d->offset, s->d->local, s->host));
    if (s->c.temperature) {
        HS_CHECK(hs_field_get_interior(s->T, s->host));
        HS_CHECK(hs_writer_put_block(w, s->var_T, s->d->offset, s->d->local, s->host));
    }
    for (int c = 0; s->c.write_faces && c < s->c.g.ndim; c++) HS_CHECK(put_faces(s, w, c));
    double ke, ens, divmax, cfl, nu;
    HS_CHECK(diagnostics(s, &ke, &ens, &divmax, &cfl, &nu));
    HS_CHECK(hs_writer_put_scalar(w, s->ser_ke, ke));
    HS_CHECK(hs_writer_put_scalar(w, s->ser_ens, ens));
    HS_CHECK(hs_writer_put_scalar(w, s->ser_div, divmax));
    HS_CHECK(hs_writer_put_scalar(w, s->ser_cfl, cfl));
    if (has_nusselt(&s->c)) HS_CHECK(hs_writer_put_scalar(w, s->ser_nu, nu));
    if (s->mg) HS_CHECK(hs_writer_put_scalar(w, s->ser_piter, (double)s->p_last));
    return HS_OK;
}

static int save_field(hs_checkpoint *k, const char *name, hs_field *f)
{
    size_t n = (size_t)(f->local[0] * f->local[1] * f->local[2]);
    double *h = malloc((n ? n : 1) * sizeof *h);
    if (!h) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    int rc = hs_field_get_interior(f, h);
    if (rc == HS_OK) rc = hs_checkpoint_write_state(k, name, HS_F64, (int64_t)n, h);
    free(h);
    return rc;
}

static int load_field(hs_checkpoint *k, const char *name, hs_field *f)
{
    size_t n = (size_t)(f->local[0] * f->local[1] * f->local[2]);
    double *h = malloc((n ? n : 1) * sizeof *h);
    if (!h) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    int rc = hs_checkpoint_read_state(k, name, HS_F64, (int64_t)n, h);
    if (rc == HS_OK) rc = hs_field_set_interior(f, h);
    free(h);
    return rc;
}

static int checkpoint(void *state, hs_checkpoint *k)
{
    ns *s = state;
    static const char *names[3] = {"u", "v", "w"};
    for (int c = 0; c < s->c.g.ndim; c++) HS_CHECK(save_field(k, names[c], s->q[c]));
    if (s->c.temperature) HS_CHECK(save_field(k, "T", s->T));
    HS_CHECK(save_field(k, "p", s->phi));
    HS_CHECK(hs_clock_checkpoint(k, &s->clk));
    double clock[5] = {s->clk.time, (double)s->step, s->dt, s->ke_prev, s->t_ke_prev};
    return hs_checkpoint_write(k, "clock", HS_F64, 5, clock);
}

static int restore(void *state, hs_checkpoint *k)
{
    ns *s = state;
    static const char *names[3] = {"u", "v", "w"};
    for (int c = 0; c < s->c.g.ndim; c++) HS_CHECK(load_field(k, names[c], s->q[c]));
    if (s->c.temperature) HS_CHECK(load_field(k, "T", s->T));
    HS_CHECK(load_field(k, "p", s->phi));
    double clock[5];
    HS_CHECK(hs_checkpoint_read(k, "clock", HS_F64, 5, clock));
    HS_CHECK(hs_clock_restore(k, &s->clk, clock[0]));
    s->step = (int64_t)clock[1];
    s->dt = clock[2];
    s->ke_prev = clock[3];
    s->t_ke_prev = clock[4];
    return HS_OK;
}

static int finish(void *state)
{
    ns *s = state;
    double ke, ens, divmax, cfl, nu;
    HS_CHECK(diagnostics(s, &ke, &ens, &divmax, &cfl, &nu));
    if (!isfinite(ke))
        return HS_FAIL(HS_ERR_RUNTIME, "navier_stokes: the velocity is not finite at step %lld, t = %.9g", (long long)s->step, s->clk.time);
    /* the pressure solve's residual on the last right-hand side (solved again: phi_c is scratch);
     * that solve is not counted in the iteration figures */
    double rel = 0;
    {
        size_t cells = (size_t)(s->d->local[0] * s->d->local[1] * s->d->local[2]);
        double *lp = NULL, *fn = NULL, nf = 0, nr = 0;
        int64_t solves = s->p_solves, iterations = s->p_iterations;
        int last = s->p_last, most = s->p_most;
        HS_CHECK(hs_mem_alloc(s->ctx, (cells ? cells : 1) * sizeof(double), (void **)&lp));
        /* the right-hand side in natural order (the projections keep it in the solver's x order) */
        int rc = s->ordered ? hs_mem_alloc(s->ctx, (cells ? cells : 1) * sizeof(double), (void **)&fn) : HS_OK;
        if (rc == HS_OK && s->ordered) rc = hs_poisson_order(s->poisson, 0, s->f, fn);
        const double *f = s->ordered ? fn : s->f;
        if (rc == HS_OK) rc = pressure_solve(s, f, s->phi_c, 0);
        s->p_solves = solves, s->p_iterations = iterations, s->p_last = last, s->p_most = most;
        if (rc == HS_OK) rc = s->poisson ? hs_poisson_apply(s->poisson, s->phi_c, lp) : hs_mg_apply(s->mg, s->phi_c, lp);
        if (rc == HS_OK) rc = hs_nrm2(s->ctx, HS_F64, cells, f, &nf);
        if (rc == HS_OK) rc = hs_axpy(s->ctx, HS_F64, cells, -1.0, f, lp);
        if (rc == HS_OK) rc = hs_nrm2(s->ctx, HS_F64, cells, lp, &nr);
        hs_mem_free(s->ctx, lp);
        hs_mem_free(s->ctx, fn);
        HS_CHECK(rc);
        /* the ranks' norms summed as squares scaled by the largest: a right-hand side of 1e301
         * (cfd.t_end = 1e-300, one step of 1e-300) squared to inf and printed a residual of nan */
        double scale = fmax(nf, nr);
        HS_CHECK(hs_allreduce_max(s->ctx->comm, &scale, 1));
        double sums[2] = {0, 0};
        if (scale > 0 && isfinite(scale)) sums[0] = (nf / scale) * (nf / scale), sums[1] = (nr / scale) * (nr / scale);
        HS_CHECK(hs_allreduce_sum(s->ctx->comm, sums, 2));
        rel = !isfinite(scale) ? NAN : sums[0] > 0 ? sqrt(sums[1] / sums[0]) : 0; /* NAN: a norm overflowed */
    }
    if (s->ctx->rank == 0) {
        printf("navier_stokes: %lld steps to t = %.9g%s; kinetic energy %.10g, enstrophy %.10g, max |div u| %.3e, CFL %.3f\n",
               (long long)s->step, s->clk.time, s->steady ? " (steady state reached)" : "", ke, ens, divmax, cfl);
        if (s->poisson && isnan(rel))
            printf("navier_stokes: pressure solve: %s; its residual was not measured: the last right-hand side's norm "
                   "overflows doubles\n", transform_summary(s));
        else if (s->poisson)
            printf("navier_stokes: pressure solve: %s, relative residual %.2e of the last right-hand side\n",
                   transform_summary(s), rel);
        else
            printf("navier_stokes: pressure solve: multigrid CG (%s), %lld solves, %.1f iterations on average, at most %d, "
                   "relative residual %.2e of the last right-hand side\n",
                   hs_mg_summary(s->mg), (long long)s->p_solves, s->p_solves ? (double)s->p_iterations / (double)s->p_solves : 0.0,
                   s->p_most, rel);
        if (has_nusselt(&s->c)) printf("navier_stokes: average Nusselt number at x = 0: %.6f\n", nu);
    }
    return HS_OK;
}

static void destroy(void *state)
{
    ns *s = state;
    if (!s) return;
    for (int c = 0; c < 3; c++) {
        hs_field_destroy(s->q[c]);
        hs_field_destroy(s->q1[c]);
        free(s->coords[c]);
        free(s->edges[c]);
    }
    hs_field_destroy(s->T);
    hs_field_destroy(s->T1);
    hs_field_destroy(s->phi);
    hs_field_destroy(s->scratch);
    hs_poisson_destroy(s->poisson);
    hs_mg_destroy(s->mg);
    if (s->ctx) {
        hs_mem_free(s->ctx, s->f);
        hs_mem_free(s->ctx, s->phi_c);
        if (s->timer.ctx) hs_timer_free(&s->timer);
    }
    if (s->d) hs_decomp_destroy(s->d);
    free(s->host);
    free(s->face_host);
    free(s);
}

/* ---------------------------------------------------------------- for tests and the benchmark */

int hs_ns_centre_velocity(void *state, int comp, double *global_host)
{
    ns *s = state;
    if (comp < 0 || comp >= s->c.g.ndim) return HS_FAIL(HS_ERR_INPUT, "component %d out of range", comp);
    HS_CHECK(velocity_ghosts(s, s->q));
    HS_CHECK(cell_op(s, s->q, NULL, HS_NS_CENTRE, comp, s->phi_c));
    HS_CHECK(hs_field_load_interior(s->scratch, s->phi_c));
    return hs_field_gather(s->scratch, 0, global_host);
}

int hs_ns_face_velocity(void *state, int comp, double *global_host)
{
    ns *s = state;
    if (comp < 0 || comp >= s->c.g.ndim) return HS_FAIL(HS_ERR_INPUT, "component %d out of range", comp);
    return hs_field_gather(s->q[comp], 0, global_host);
}

int hs_ns_nusselt(void *state, double *nusselt)
{
    ns *s = state;
    double ke, ens, divmax, cfl;
    return diagnostics(s, &ke, &ens, &divmax, &cfl, nusselt);
}

int hs_ns_bench_steps(void *state, int nsteps, double *seconds, double *pressure_seconds)
{
    ns *s = state;
    hs_timer t;
    HS_CHECK(hs_timer_init(s->ctx, &t));
    s->timing = 1;
    s->t_pressure = 0;
    if (s->dt <= 0) HS_CHECK(choose_dt(s));
    HS_CHECK(hs_ctx_sync(s->ctx));
    HS_CHECK(hs_timer_start(&t));
    for (int i = 0; i < nsteps; i++) HS_CHECK(step(s, s->dt));
    int rc = hs_timer_stop(&t, seconds);
    hs_timer_free(&t);
    s->timing = 0;
    *pressure_seconds = s->t_pressure;
    return rc;
}

int hs_ns_pressure(void *state, hs_ns_pressure_info *info)
{
    ns *s = state;
    memset(info, 0, sizeof *info);
    info->multigrid = s->mg != NULL;
    info->solves = s->p_solves;
    info->iterations = s->p_iterations;
    info->last = s->p_last;
    info->most = s->p_most;
    info->summary = s->mg ? hs_mg_summary(s->mg) : transform_summary(s);
    return HS_OK;
}

int hs_ns_bench_advection(void *state, double *bytes)
{
    ns *s = state;
    const int nd = s->c.g.ndim;
    double cells = (double)s->d->local[0] * (double)s->d->local[1] * (double)s->d->local[2];
    /* the fused update (HS_NS_MOMENTUM_ALL) reads every velocity component once and writes each
     * (the count was nd (nd + 1) arrays while each component had a kernel of its own, reading them all) */
    *bytes = 8.0 * cells * 2 * nd;
    if (s->dt <= 0) HS_CHECK(choose_dt(s));
    return stage(s, s->q, NULL, NULL, NULL, s->q1, NULL, 0.0, 1.0, s->dt);
}

static const char *const g_restart_may_change[] = {"navier_stokes.steady_tol", NULL};

static const char *stop_rule(void *state)
{
    const ns *s = state;
    return s->steady ? "steady state: |d(kinetic energy)/dt| / kinetic energy below navier_stokes.steady_tol" : NULL;
}

const hs_solver_ops hs_cfd_navier_stokes = {
    .name = "navier_stokes",
    .summary = "incompressible Navier-Stokes on a MAC grid",
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
    .stop_rule = stop_rule,
};
