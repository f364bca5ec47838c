/* The shallow_water CFD model: rotating shallow water on an Arakawa C-grid, Arakawa-Lamb (1981) energy- and enstrophy-conserving, RK4. */
#include "solvers/cfd/sw.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/comm/comm.h"
#include "kernels/dispatch.h"
#include "kernels/error.h"
#include "kernels/grid/grid.h"
#include "kernels/memory.h"
#include "kernels/rng/rng.h"
#include "solvers/cfd/cfd.h"
#include "solvers/cfd/sw_impl.h"

/* shallow_water.case */
enum { SW_JET = 0, SW_LAKE = 1, SW_WAVE = 2, SW_VORTEX = 3 };
#define SW_CASE_CHOICES "jet|lake_at_rest|wave|vortex"
/* shallow_water.y_boundary */
enum { SW_Y_PERIODIC = 0, SW_Y_WALLS = 1 };
#define SW_Y_CHOICES "periodic|walls"
/* shallow_water.topography */
enum { SW_TOPO_FLAT = 0, SW_TOPO_BUMP = 1, SW_TOPO_RANDOM = 2 };
#define SW_TOPO_CHOICES "flat|bump|random"

/* Classic RK4 is stable for |lambda dt| up to 2 sqrt(2) on the imaginary axis (waves) and 2.785 on
 * the negative real axis (friction); the step estimate uses the smaller, rounded down. */
#define SW_RK4_LIMIT 2.78
/* RNG uses (kernels/rng/rng.h streams): the jet's perturbation and the random bottom. */
#define SW_RNG_JET 0x5357u
#define SW_RNG_TOPO 0x5354u

static const hs_param_decl g_sw_params[] = {
    {"shallow_water", "case", HS_PARAM_ENUM, "jet", 0, 0, SW_CASE_CHOICES,
     "jet: unstable Bickley jet(s) in geostrophic balance plus a small perturbation; lake_at_rest: flat surface over the bottom; "
     "wave: small inertia-gravity wave (discrete eigenmode); vortex: Gaussian vortex in gradient-wind balance"},
    {"shallow_water", "y_boundary", HS_PARAM_ENUM, "periodic", 0, 0, SW_Y_CHOICES,
     "periodic (doubly periodic f-plane) or walls (channel with free-slip walls at y = 0 and y = Ly; x stays periodic)"},
    {"shallow_water", "g", HS_PARAM_REAL, "1", 1e-12, HS_NO_MAX, NULL, "gravity"},
    {"shallow_water", "depth", HS_PARAM_REAL, "1", 1e-12, HS_NO_MAX, NULL, "mean layer depth H (gravity-wave speed sqrt(g H))"},
    {"shallow_water", "f0", HS_PARAM_REAL, "1", HS_NO_MIN, HS_NO_MAX, NULL, "Coriolis parameter at the channel's centre line y = Ly/2"},
    {"shallow_water", "beta", HS_PARAM_REAL, "0", HS_NO_MIN, HS_NO_MAX, NULL,
     "df/dy of a beta-plane f = f0 + beta (y - Ly/2); needs y_boundary = walls"},
    {"shallow_water", "nu", HS_PARAM_REAL, "0", 0, HS_NO_MAX, NULL, "viscosity: + nu lap(u) in the momentum equations"},
    {"shallow_water", "nu4", HS_PARAM_REAL, "0", 0, HS_NO_MAX, NULL, "hyperviscosity: - nu4 lap(lap(u)) in the momentum equations"},
    {"shallow_water", "topography", HS_PARAM_ENUM, "flat", 0, 0, SW_TOPO_CHOICES,
     "bottom height b: flat (0), bump (Gaussian at the centre), random (smooth random field from seed)"},
    {"shallow_water", "topo_height", HS_PARAM_REAL, "0.2", 0, HS_NO_MAX, NULL,
     "bump: its height; random: the largest |b| can be (below depth)"},
    {"shallow_water", "topo_width", HS_PARAM_REAL, "0.1", 1e-12, HS_NO_MAX, NULL, "bump: Gaussian radius (length units)"},
    {"shallow_water", "topo_modes", HS_PARAM_INT, "3", 1, 64, NULL, "random: wave numbers 1..topo_modes in x and y"},
    {"shallow_water", "jet_speed", HS_PARAM_REAL, "0.3", HS_NO_MIN, HS_NO_MAX, NULL, "jet: peak velocity U of u = U sech^2((y - y0)/L)"},
    {"shallow_water", "jet_width", HS_PARAM_REAL, "0.05", 1e-12, HS_NO_MAX, NULL,
     "jet: L (length units); periodic: two opposite jets at Ly/4 and 3Ly/4, walls: one at Ly/2"},
    {"shallow_water", "perturbation", HS_PARAM_REAL, "1e-3", 0, 1, NULL, "jet: largest depth perturbation, relative to depth"},
    {"shallow_water", "perturbation_modes", HS_PARAM_INT, "8", 1, 1024, NULL, "jet: perturbation wave numbers 1..this in x, random amplitudes and phases"},
    {"shallow_water", "seed", HS_PARAM_INT, "1", 0, 9.0e15, NULL, "seed of the counter-based RNG (jet perturbation, random bottom)"},
    {"shallow_water", "wave_mode", HS_PARAM_INT_LIST, "1 0", -1e6, 1e6, "2", "wave: wave numbers (m n) of k = 2 pi m / Lx, l = 2 pi n / Ly"},
    {"shallow_water", "wave_amplitude", HS_PARAM_REAL, "1e-3", 1e-300, 0.5, NULL, "wave: depth amplitude relative to depth"},
    {"shallow_water", "vortex_radius", HS_PARAM_REAL, "0.08", 1e-12, HS_NO_MAX, NULL,
     "vortex: Gaussian radius R of the depth anomaly (at most a tenth of the shorter side)"},
    {"shallow_water", "vortex_amplitude", HS_PARAM_REAL, "-0.05", -0.9, HS_NO_MAX, NULL,
     "vortex: depth anomaly at the centre relative to depth (< 0: cyclone, > 0: anticyclone when f0 > 0)"},
    {"shallow_water", "dt_every", HS_PARAM_INT, "10", 1, 1e9, NULL, "adaptive step: steps between recomputations of dt from max h, |u|, |v|"},
};

typedef struct sw_config {
    hs_cfd_config g;
    int scase, walls, topo;
    double grav, depth, f0, beta, nu, nu4;
    double topo_height, topo_width;
    int64_t topo_modes;
    double jet_speed, jet_width, pert;
    int64_t pert_modes;
    uint64_t seed;
    int64_t wave_mode[2];
    double wave_amp;
    double vortex_radius, vortex_amp;
    int64_t dt_every;
    /* bounds of the initial state, for the stability estimate and the positivity check */
    double h_max, h_min, u_max, v_max, f_max;
    const char *rotation_keys[3]; /* f0 and beta, the one of the larger |f| first */
    double jet_eta_mean;          /* the jet's balanced surface averaged over the grid's rows: taken off, so that H is the mean depth */
} sw_config;

typedef struct sw {
    hs_ctx *ctx;
    sw_config c;
    hs_decomp *d;
    hs_field *y[3], *a[3], *b2[3], *acc[3]; /* h, u, v: the state, two stage inputs, the RK4 accumulator */
    hs_field *bottom;                       /* b, cells, halo 2 */
    hs_field *scratch;                      /* a cell field without halo (reductions of contiguous arrays) */
    double *cells;                          /* contiguous cell array (diagnostics) on the device */
    hs_bc bc[3][3][2];                      /* per variable (h and b, u, v), per face */
    int overlap;                            /* exchange overlapped with interior work (several ranks) */
    hs_box inner, shell[6];
    int nshell;
    hs_clock clk; /* the simulated time */
    double dt, t_end;
    int64_t step;
    double mass0, energy0, enstrophy0;
    /* output */
    double *coords[2], *edges[2], *host;
    int var_h, var_u, var_v, var_vort, var_b, ser_mass, ser_energy, ser_ens, ser_cfl;
    int b_written;
} sw;

static int declare(void) { return hs_params_declare(g_sw_params, (int)(sizeof g_sw_params / sizeof g_sw_params[0])); }

/* ---------------------------------------------------------------- initial state (host, pointwise) */

static double lncosh(double s)
{
    double a = fabs(s);
    return a + log1p(exp(-2.0 * a)) - log(2.0);
}

static double sech2(double s)
{
    double c = cosh(s);
    return isfinite(c) ? 1.0 / (c * c) : 0.0;
}

/* The jet's zonal velocity and its geostrophic surface elevation at height y: g deta/dy = -f u.
 * Walls: one jet at Ly/2, f = f0 + beta (y - Ly/2); periodic: an eastward jet at Ly/4 and a westward
 * one at 3 Ly/4 (zero mean, so the balanced surface is periodic), summed over periodic images. */
static void jet_profile(const sw_config *c, double y, double *u, double *eta)
{
    const double U = c->jet_speed, L = c->jet_width, Ly = c->g.length[1];
    if (c->walls) {
        double s = (y - 0.5 * Ly) / L;
        *u = U * sech2(s);
        *eta = -(U * L / c->grav) * (c->f0 * tanh(s) + c->beta * L * (s * tanh(s) - lncosh(s)));
        return;
    }
    double su = 0, se = 0;
    for (int k = -3; k <= 3; k++) {
        double s1 = (y - 0.25 * Ly - k * Ly) / L, s2 = (y - 0.75 * Ly - k * Ly) / L;
        su += sech2(s1) - sech2(s2);
        se += tanh(s1) - tanh(s2);
    }
    *u = U * su;
    *eta = -(c->f0 * U * L / c->grav) * se;
}

/* The jet's envelope for the perturbation: where the jets are. */
static double jet_envelope(const sw_config *c, double y)
{
    const double L = c->jet_width, Ly = c->g.length[1];
    if (c->walls) return sech2((y - 0.5 * Ly) / L);
    double e = 0;
    for (int k = -1; k <= 1; k++) e += sech2((y - 0.25 * Ly - k * Ly) / L) + sech2((y - 0.75 * Ly - k * Ly) / L);
    return e;
}

/* Random amplitudes and phases of mode m (counter 2m, 2m + 1 of the use's stream): the same numbers
 * on every rank and device. */
static void rng_mode(const sw_config *c, uint32_t use, uint64_t m, double *amp, double *phase)
{
    uint64_t stream = hs_rng_stream(use, 0);
    *amp = hs_rng_u01(c->seed, stream, 2 * m);
    *phase = 2.0 * M_PI * hs_rng_u01(c->seed, stream, 2 * m + 1);
}

/* The perturbation's shape in x, in [-1, 1]. */
static double jet_noise(const sw_config *c, double x)
{
    double s = 0, norm = 0;
    for (int64_t m = 1; m <= c->pert_modes; m++) {
        double a, ph;
        rng_mode(c, SW_RNG_JET, (uint64_t)m, &a, &ph);
        s += a * cos(2.0 * M_PI * (double)m * x / c->g.length[0] + ph);
        norm += a;
    }
    return norm > 0 ? s / norm : 0.0;
}

/* Bottom height at (x, y). */
static double bottom_at(const sw_config *c, double x, double y)
{
    const double Lx = c->g.length[0], Ly = c->g.length[1];
    if (c->topo == SW_TOPO_BUMP) {
        double dx = x - 0.5 * Lx, dy = y - 0.5 * Ly, w = c->topo_width;
        return c->topo_height * exp(-(dx * dx + dy * dy) / (2.0 * w * w));
    }
    if (c->topo == SW_TOPO_RANDOM) {
        /* modes (m, n), |m|, |n| <= M, weights 1/(m^2 + n^2): a smooth field, normalised by the sum of
         * the weights so that |b| <= topo_height */
        const int64_t M = c->topo_modes;
        double s = 0, norm = 0;
        uint64_t id = 0;
        for (int64_t n = -M; n <= M; n++)
            for (int64_t m = 0; m <= M; m++) {
                if (m == 0 && n <= 0) continue; /* (m, n) and (-m, -n) are the same cosine */
                double a, ph, w = 1.0 / (double)(m * m + n * n);
                rng_mode(c, SW_RNG_TOPO, id++, &a, &ph);
                s += w * a * cos(2.0 * M_PI * ((double)m * x / Lx + (double)n * y / Ly) + ph);
                norm += w * a;
            }
        return norm > 0 ? c->topo_height * s / norm : 0.0;
    }
    return 0.0;
}

/* The wave's eigenmode of the linearised semi-discrete equations: wave numbers k, l, the C-grid's
 * K = 2 sin(k dx/2)/dx, L = 2 sin(l dy/2)/dy, ct = cos(k dx/2) cos(l dy/2) (the four-point average
 * of the Coriolis term) and omega^2 = f0^2 ct^2 + g H (K^2 + L^2); a is the depth amplitude. */
typedef struct wave_t {
    double k, l, K, L, ct, omega, a;
} wave_t;

static wave_t wave_of(const sw_config *c)
{
    wave_t w;
    w.k = 2.0 * M_PI * (double)c->wave_mode[0] / c->g.length[0];
    w.l = 2.0 * M_PI * (double)c->wave_mode[1] / c->g.length[1];
    w.K = 2.0 * sin(0.5 * w.k * c->g.dx[0]) / c->g.dx[0];
    w.L = 2.0 * sin(0.5 * w.l * c->g.dx[1]) / c->g.dx[1];
    w.ct = cos(0.5 * w.k * c->g.dx[0]) * cos(0.5 * w.l * c->g.dx[1]);
    w.omega = sqrt(c->f0 * c->f0 * w.ct * w.ct + c->grav * c->depth * (w.K * w.K + w.L * w.L));
    w.a = c->wave_amp * c->depth;
    return w;
}

/* Depth anomaly, u and v of the wave at a point (each variable at its own position). */
static double wave_h(const wave_t *w, double x, double y) { return w->a * cos(w->k * x + w->l * y); }
static double wave_u(const sw_config *c, const wave_t *w, double x, double y)
{
    double th = w->k * x + w->l * y, kk = w->K * w->K + w->L * w->L;
    return w->a / (c->depth * kk) * (w->K * w->omega * cos(th) - c->f0 * w->ct * w->L * sin(th));
}
static double wave_v(const sw_config *c, const wave_t *w, double x, double y)
{
    double th = w->k * x + w->l * y, kk = w->K * w->K + w->L * w->L;
    return w->a / (c->depth * kk) * (w->L * w->omega * cos(th) + c->f0 * w->ct * w->K * sin(th));
}

/* The vortex: depth anomaly A H exp(-r^2 / 2R^2) at the domain's centre, azimuthal velocity V in
 * gradient-wind balance V^2/r + f V = g deta/dr (the branch that tends to geostrophy). */
static double wrap(double d, double L) { return d - L * floor(d / L + 0.5); }
static void vortex_at(const sw_config *c, double x, double y, double *eta, double *u, double *v)
{
    const double R = c->vortex_radius, A = c->vortex_amp * c->depth;
    double dx = wrap(x - 0.5 * c->g.length[0], c->g.length[0]);
    double dy = c->walls ? y - 0.5 * c->g.length[1] : wrap(y - 0.5 * c->g.length[1], c->g.length[1]);
    double r2 = dx * dx + dy * dy, r = sqrt(r2), e = exp(-r2 / (2.0 * R * R));
    *eta = A * e;
    double detadr = -A * r / (R * R) * e;
    double f = c->f0 + c->beta * dy, disc = 0.25 * f * f * r2 + c->grav * r * detadr;
    double V = r > 0 ? -0.5 * f * r + (f < 0 ? -1.0 : 1.0) * sqrt(fmax(disc, 0.0)) : 0.0;
    *u = r > 0 ? -V * dy / r : 0.0;
    *v = r > 0 ? V * dx / r : 0.0;
}

/* The initial value of variable var (0 h, 1 u, 2 v) at global point (gi, gj) of its own grid. */
static double initial_at(const sw_config *c, const wave_t *w, int var, int64_t gi, int64_t gj)
{
    const double dx = c->g.dx[0], dy = c->g.dx[1];
    double x = ((double)gi + (var == 1 ? 0.0 : 0.5)) * dx, y = ((double)gj + (var == 2 ? 0.0 : 0.5)) * dy;
    if (var == 2 && c->walls && (gj == 0 || gj == c->g.n[1])) return 0.0; /* the walls */
    double eta = 0, u = 0, v = 0;
    switch (c->scase) {
    case SW_JET:
        jet_profile(c, y, &u, &eta);
        eta -= c->jet_eta_mean;
        if (var == 0) eta += c->pert * c->depth * jet_noise(c, x) * jet_envelope(c, y);
        break;
    case SW_WAVE:
        eta = wave_h(w, x, y);
        u = wave_u(c, w, x, y);
        v = wave_v(c, w, x, y);
        break;
    case SW_VORTEX: vortex_at(c, x, y, &eta, &u, &v); break;
    default: break;
    }
    if (var == 0) return c->depth + eta - bottom_at(c, x, y);
    return var == 1 ? u : v;
}

/* ---------------------------------------------------------------- configuration */

/* Each case's amplitude: the key its depth and speeds scale with. */
static const char *const amplitude_key[4] = {"shallow_water.jet_speed", "shallow_water.topo_height", "shallow_water.wave_amplitude",
                                             "shallow_water.vortex_amplitude"};

static int read_config(const hs_params *p, sw_config *c)
{
    memset(c, 0, sizeof *c);
    HS_CHECK(hs_cfd_config_read(p, &c->g));
    if (c->g.ndim != 2) return hs_params_error(p, "cfd.ndim", "shallow_water is two-dimensional: use cfd.ndim = 2");
    c->scase = hs_params_enum(p, "shallow_water.case");
    c->walls = hs_params_enum(p, "shallow_water.y_boundary") == SW_Y_WALLS;
    c->topo = hs_params_enum(p, "shallow_water.topography");
    c->grav = hs_params_real(p, "shallow_water.g");
    c->depth = hs_params_real(p, "shallow_water.depth");
    c->f0 = hs_params_real(p, "shallow_water.f0");
    c->beta = hs_params_real(p, "shallow_water.beta");
    c->nu = hs_params_real(p, "shallow_water.nu");
    c->nu4 = hs_params_real(p, "shallow_water.nu4");
    c->topo_height = hs_params_real(p, "shallow_water.topo_height");
    c->topo_width = hs_params_real(p, "shallow_water.topo_width");
    c->topo_modes = hs_params_int(p, "shallow_water.topo_modes");
    c->jet_speed = hs_params_real(p, "shallow_water.jet_speed");
    c->jet_width = hs_params_real(p, "shallow_water.jet_width");
    c->pert = hs_params_real(p, "shallow_water.perturbation");
    c->pert_modes = hs_params_int(p, "shallow_water.perturbation_modes");
    c->seed = (uint64_t)hs_params_int(p, "shallow_water.seed");
    int64_t wm[2] = {0, 0};
    if (hs_params_int_list(p, "shallow_water.wave_mode", wm, 2) != 2)
        return hs_params_error(p, "shallow_water.wave_mode", "needs two wave numbers (m n)");
    c->wave_mode[0] = wm[0], c->wave_mode[1] = wm[1];
    c->wave_amp = hs_params_real(p, "shallow_water.wave_amplitude");
    c->vortex_radius = hs_params_real(p, "shallow_water.vortex_radius");
    c->vortex_amp = hs_params_real(p, "shallow_water.vortex_amplitude");
    c->dt_every = hs_params_int(p, "shallow_water.dt_every");
    const double Lx = c->g.length[0], Ly = c->g.length[1];

    /* keys a run would ignore are bad input: another case's keys, another bottom's */
    static const char *const case_name[4] = {"jet", "lake_at_rest", "wave", "vortex"};
    static const struct {
        const char *key;
        int scase;
    } case_keys[] = {{"shallow_water.jet_speed", SW_JET},         {"shallow_water.jet_width", SW_JET},
                     {"shallow_water.perturbation", SW_JET},      {"shallow_water.perturbation_modes", SW_JET},
                     {"shallow_water.wave_mode", SW_WAVE},        {"shallow_water.wave_amplitude", SW_WAVE},
                     {"shallow_water.vortex_radius", SW_VORTEX},  {"shallow_water.vortex_amplitude", SW_VORTEX}};
    for (size_t k = 0; k < sizeof case_keys / sizeof case_keys[0]; k++)
        if (c->scase != case_keys[k].scase && hs_params_set_against(p, case_keys[k].key, "shallow_water.case"))
            return hs_params_error(p, case_keys[k].key, "is set, but case = %s (the key belongs to case = %s)", case_name[c->scase],
                                   case_name[case_keys[k].scase]);
    static const char *const topo_name[3] = {"flat", "bump", "random"};
    const int topo_ok[3] = {c->topo != SW_TOPO_FLAT, c->topo == SW_TOPO_BUMP, c->topo == SW_TOPO_RANDOM};
    static const char *const topo_key[3] = {"shallow_water.topo_height", "shallow_water.topo_width", "shallow_water.topo_modes"};
    static const char *const topo_for[3] = {"bump or random", "bump", "random"};
    for (int k = 0; k < 3; k++)
        if (!topo_ok[k] && hs_params_set_against(p, topo_key[k], "shallow_water.topography"))
            return hs_params_error(p, topo_key[k], "is set, but topography = %s (the key is for topography = %s)", topo_name[c->topo],
                                   topo_for[k]);
    /* the seed draws the jet's perturbation and the random bottom; with neither it would be
     * ignored (an ensemble over shallow_water.seed of a vortex, or of jets without perturbation,
     * made identical members without a word) */
    if (!((c->scase == SW_JET && c->pert > 0) || c->topo == SW_TOPO_RANDOM) &&
        hs_params_set_against(p, "shallow_water.seed", c->scase == SW_JET ? "shallow_water.perturbation" : "shallow_water.case") &&
        hs_params_set_against(p, "shallow_water.seed", "shallow_water.topography"))
        return hs_params_error(p, "shallow_water.seed", "is set, but nothing here is random: the seed draws the jet's perturbation (case = jet, "
                                                        "perturbation > 0) and the random bottom (topography = random)");
    /* dt_every spaces the adaptive step's recomputations; a fixed cfd.dt has none */
    if (c->g.dt_user > 0 && hs_params_set_against(p, "shallow_water.dt_every", "cfd.dt"))
        return hs_params_error(p, "shallow_water.dt_every", "is set, but cfd.dt = %g is a fixed step (dt_every is for the adaptive step, cfd.dt = 0)",
                               c->g.dt_user);
    /* the perturbation's waves: at most one per two cells in x; the default (8) shrinks to that on
     * coarse grids, a value given beyond it is an error */
    if (c->scase == SW_JET && 2 * c->pert_modes > c->g.n[0]) {
        if (hs_params_is_set(p, "shallow_water.perturbation_modes"))
            return hs_params_error(p, "shallow_water.perturbation_modes", "%lld waves across %lld cells in x: at most %lld (two cells per wave)",
                                   (long long)c->pert_modes, (long long)c->g.n[0], (long long)(c->g.n[0] / 2));
        c->pert_modes = c->g.n[0] / 2;
        /* the value the run uses is what check prints and the files keep (they said 8) */
        HS_CHECK(hs_params_resolve_default(p, "shallow_water.perturbation_modes", (double)c->pert_modes));
    }

    /* the random bottom's waves likewise (topo_modes = 64 on 16 cells drew an aliased, rough bottom
     * where a smooth one is promised); the default (3) shrinks on grids below 6 cells */
    const int64_t nmin = c->g.n[0] < c->g.n[1] ? c->g.n[0] : c->g.n[1];
    if (c->topo == SW_TOPO_RANDOM && 2 * c->topo_modes > nmin) {
        if (hs_params_is_set(p, "shallow_water.topo_modes"))
            return hs_params_error(p, "shallow_water.topo_modes", "%lld waves across %lld cells in %s: at most %lld (two cells per wave)",
                                   (long long)c->topo_modes, (long long)nmin, nmin == c->g.n[0] ? "x" : "y", (long long)(nmin / 2));
        c->topo_modes = nmin / 2;
        HS_CHECK(hs_params_resolve_default(p, "shallow_water.topo_modes", (double)c->topo_modes));
    }
    if (c->beta != 0 && !c->walls)
        return hs_params_error(p, "shallow_water.beta", "a beta-plane needs walls in y: f = f0 + beta (y - Ly/2) would jump by "
                                                        "beta Ly = %g at the periodic seam; use y_boundary = walls (a channel with free-slip walls)",
                               c->beta * Ly);
    c->f_max = fabs(c->f0) + 0.5 * fabs(c->beta) * Ly;
    const int beta_first = 0.5 * fabs(c->beta) * Ly > fabs(c->f0);
    c->rotation_keys[0] = beta_first ? "shallow_water.beta" : "shallow_water.f0";
    c->rotation_keys[1] = beta_first ? "shallow_water.f0" : "shallow_water.beta";
    c->rotation_keys[2] = NULL;
    /* the largest |b| and the lowest b */
    double b_hi = c->topo == SW_TOPO_FLAT ? 0 : c->topo_height, b_lo = c->topo == SW_TOPO_RANDOM ? -c->topo_height : 0;
    if (c->topo != SW_TOPO_FLAT && c->topo_height >= c->depth)
        return hs_params_error(p, "shallow_water.topo_height", "%g reaches the surface of a layer %g deep: the depth h = H - b must stay positive",
                               c->topo_height, c->depth);
    double eta_hi = 0, eta_lo = 0, eta_jet = 0;
    c->u_max = c->v_max = 0;
    switch (c->scase) {
    case SW_JET: {
        double L = c->jet_width, U = fabs(c->jet_speed);
        /* the balanced surface's mean over the rows (cell centres) is taken off: the periodic pair's
         * surface was 2 f0 U L / g lower between the jets and 0 outside, so the mean depth was
         * 0.94 for depth = 1 (mass 1.88 on a 2 x 1 box), and the beta-plane channel's sat ln 2 beta U
         * L^2 / g low; H is the mean depth now, as its key says.  |eta| is then at most f0 U L / g
         * (periodic) */
        double mean = 0;
        for (int64_t j = 0; j < c->g.n[1]; j++) {
            double uj, ej;
            jet_profile(c, ((double)j + 0.5) * c->g.dx[1], &uj, &ej);
            mean += ej;
        }
        c->jet_eta_mean = mean / (double)c->g.n[1];
        double e = c->walls ? U * L / c->grav * (fabs(c->f0) + fabs(c->beta) * L * log(2.0)) : fabs(c->f0) * U * L / c->grav;
        eta_hi = e + c->pert * c->depth, eta_lo = -eta_hi;
        eta_jet = e;
        c->u_max = U;
        if (L > (c->walls ? 0.25 : 0.125) * Ly)
            return hs_params_error(p, "shallow_water.jet_width", "%g is too wide for Ly = %g: at most %s (the jet%s must decay before the %s)", L, Ly,
                                   c->walls ? "Ly/4" : "Ly/8", c->walls ? "" : "s", c->walls ? "walls" : "other jet");
        break;
    }
    case SW_LAKE:
        if (c->topo == SW_TOPO_FLAT)
            return hs_params_error(p, "shallow_water.case", "lake_at_rest is a flat surface over an uneven bottom: set topography = bump or random");
        break;
    case SW_WAVE: {
        if (c->walls)
            return hs_params_error(p, "shallow_water.case", "wave is a plane inertia-gravity wave of the doubly periodic f-plane: "
                                                            "it needs y_boundary = periodic (its v does not vanish at walls)");
        if (c->wave_mode[0] == 0 && c->wave_mode[1] == 0)
            return hs_params_error(p, "shallow_water.wave_mode", "(0 0) is no wave: give a wave number in x or y");
        for (int d = 0; d < 2; d++)
            if (2 * llabs((long long)c->wave_mode[d]) >= c->g.n[d])
                return hs_params_error(p, "shallow_water.wave_mode", "%lld waves across %lld cells in %s: at most %lld (two cells per wave)",
                                       (long long)c->wave_mode[d], (long long)c->g.n[d], d ? "y" : "x", (long long)((c->g.n[d] - 1) / 2));
        wave_t w = wave_of(c);
        double kk = w.K * w.K + w.L * w.L;
        eta_hi = w.a, eta_lo = -w.a;
        c->u_max = w.a / (c->depth * kk) * (fabs(w.K) * w.omega + fabs(c->f0 * w.ct * w.L));
        c->v_max = w.a / (c->depth * kk) * (fabs(w.L) * w.omega + fabs(c->f0 * w.ct * w.K));
        break;
    }
    case SW_VORTEX: {
        double R = c->vortex_radius, A = c->vortex_amp * c->depth;
        if (R > 0.1 * fmin(Lx, Ly))
            return hs_params_error(p, "shallow_water.vortex_radius", "%g is more than a tenth of the shorter side (%g): the Gaussian would not "
                                                                     "decay (to e^-12.5) before the domain's edge", R, fmin(Lx, Ly));
        /* gradient-wind balance exists where f^2/4 >= g A / R^2 (the discriminant at the centre) */
        double fmin2 = c->walls && c->beta != 0 ? fmax(0, fabs(c->f0) - 3.0 * fabs(c->beta) * R) : fabs(c->f0);
        if (A > 0 && c->grav * A / (R * R) > 0.25 * fmin2 * fmin2)
            return hs_params_error(p, "shallow_water.vortex_amplitude", "an anticyclone of %g has no gradient-wind balance: the largest is "
                                                                        "f^2 R^2 / (4 g H) = %.4g with f = %.4g%s (or make it a cyclone, < 0)",
                                   c->vortex_amp, 0.25 * fmin2 * fmin2 * R * R / (c->grav * c->depth), fmin2,
                                   fmin2 != fabs(c->f0) ? ", the smallest |f0 + beta y| within 3 radii of the centre" : " = |f0|");
        eta_hi = fmax(A, 0), eta_lo = fmin(A, 0);
        /* the largest speed, sampled along a radius on the f-plane of f0 (a tenth more for beta) */
        sw_config cc = *c;
        cc.beta = 0;
        for (int k = 1; k <= 400; k++) {
            double e, u, v;
            vortex_at(&cc, 0.5 * Lx + 4.0 * R * k / 400.0, 0.5 * Ly, &e, &u, &v);
            c->u_max = fmax(c->u_max, 1.1 * fabs(v));
        }
        c->v_max = c->u_max;
        break;
    }
    default: break;
    }
    c->h_max = c->depth + eta_hi - b_lo;
    c->h_min = c->depth + eta_lo - b_hi;
    /* a jet's surface falls by its geostrophic slope and by the perturbation: name the larger (a
     * perturbation = 1 was blamed on the default jet_speed) */
    const char *dry_key = c->scase == SW_JET && c->pert * c->depth >= eta_jet ? "shallow_water.perturbation" : amplitude_key[c->scase];
    /* the jet's slope f U L / g against the depth: the key of those the command line, else the file,
     * set (f0 = 1e300 was blamed on the default jet_speed, and then, given on the command line, on
     * the file's jet_speed) */
    if (c->scase == SW_JET && !strcmp(dry_key, amplitude_key[SW_JET]))
        dry_key = hs_params_first_set(p, (const char *const[]){"shallow_water.jet_speed", c->rotation_keys[0], c->rotation_keys[1], "shallow_water.g",
                                                     "shallow_water.jet_width", "shallow_water.depth", NULL},
                            "shallow_water.jet_speed");
    if (c->h_min <= 0)
        return hs_params_error(p, c->depth + eta_lo > 0 ? "shallow_water.topo_height" : dry_key,
                               "the layer may run dry: its depth can fall to %.3g (depth %g, surface down to %.3g, bottom up to %g)", c->h_min,
                               c->depth, eta_lo, b_hi);
    return HS_OK;
}

/* The largest stable RK4 step for depths up to hmax and speeds up to umax, vmax: the gravity waves'
 * top frequency 2 sqrt(g hmax) sqrt(1/dx^2 + 1/dy^2), advection, rotation and friction added. */
static double stable_dt(const sw_config *c, double hmax, double umax, double vmax)
{
    const double ix = 1.0 / c->g.dx[0], iy = 1.0 / c->g.dx[1], k2 = ix * ix + iy * iy;
    double w = 2.0 * sqrt(c->grav * fmax(hmax, 0.0) * k2) + umax * ix + vmax * iy + c->f_max + 4.0 * c->nu * k2 + 16.0 * c->nu4 * k2 * k2;
    return w > 0 ? SW_RK4_LIMIT / w : HS_NO_MAX;
}

static int validate(sw *s, const hs_params *p)
{
    HS_CHECK(read_config(p, &s->c));
    const sw_config *c = &s->c;
    if (c->g.model != HS_CFD_SHALLOW_WATER) return HS_FAIL(HS_ERR_RUNTIME, "shallow_water model called for another model");
    int procs[3] = {c->g.procs[0], c->g.procs[1], 1};
    int periodic[3] = {1, !c->walls, 0};
    int rc = hs_decomp_create(s->ctx, 2, c->g.n, periodic, procs, 2, &s->d);
    if (rc == HS_ERR_INPUT) return hs_params_error_rekey(p, hs_params_is_set(p, "cfd.procs") ? "cfd.procs" : "cfd.n");
    HS_CHECK(rc);
    /* memory: 13 fields with halo 2 (state, two stage inputs, accumulator, bottom), scratch, a cell array */
    double cells = (double)s->d->local[0] * (double)s->d->local[1];
    double with_ghosts = (double)(s->d->local[0] + 5) * (double)(s->d->local[1] + 5);
    double device = 8.0 * (13.0 * with_ghosts + 2.0 * cells);
    double host = 8.0 * cells * 2;
    if (s->ctx->rank == 0 && hs_params_enum(p, "output.format") != HS_OUTPUT_NONE) host += 16.0 * (double)c->g.n[0] * (double)c->g.n[1];
    HS_CHECK(hs_driver_check_memory(s->ctx, p, "cfd.n", "the grid", "use more ranks or a smaller grid", device, host));
    /* the adaptive step is cfl times a bound of RK4's stable step (2.78 of its 2 sqrt 2 on the
     * imaginary axis): cfl = 1.5 passed check and the run blew up at step 20 */
    if (c->g.dt_user == 0 && c->g.cfl > 1)
        return hs_params_error(p, "cfd.cfl", "%g is above the shallow-water model's stable limit 1 (RK4: the adaptive step is cfl times "
                                             "the stable step of the fastest gravity wave, flow, f and viscosity)",
                               c->g.cfl);
    double limit = stable_dt(c, c->h_max, c->u_max, c->v_max);
    if (c->g.dt_user > limit)
        return hs_params_error(p, "cfd.dt", "%g is unstable here: gravity waves of speed sqrt(g h) = %.4g (h up to %.4g), flow up to %.3g and "
                                            "|f| up to %.3g give a stable RK4 step of about %.4g (use cfd.dt = 0 for an adaptive step)",
                               c->g.dt_user, sqrt(c->grav * c->h_max), c->h_max, fmax(c->u_max, c->v_max), c->f_max, limit);
    /* an adaptive step below the resolution of the time at t_end never gets there (nu4 = 1e300
     * stepped 6e-308 at a time; on finer grids its term overflows and the step is 0): name the term
     * that makes it so small */
    if (c->g.dt_user == 0 && c->g.t_end > 0 && (!(c->g.cfl * limit > 0) || hs_step_below_time_resolution(c->g.cfl * limit, c->g.t_end))) {
        /* the largest term of the step's bound, by the keys the run set; a bound of defaults only
         * leaves the end time (g = 1e300 was blamed on cfd.t_end) */
        const double ix = 1.0 / c->g.dx[0], iy = 1.0 / c->g.dx[1], k2 = ix * ix + iy * iy;
        const double term[5] = {2.0 * sqrt(c->grav * fmax(c->h_max, 0.0) * k2), c->u_max * ix + c->v_max * iy, c->f_max, 4.0 * c->nu * k2,
                                16.0 * c->nu4 * k2 * k2};
        /* the end time among them: t_end = 1e300 on the command line is what to change there */
        const char *const keys[5][4] = {{"shallow_water.g", "shallow_water.depth", "cfd.t_end", NULL},
                                        {amplitude_key[c->scase], "cfd.t_end", NULL},
                                        {c->rotation_keys[0], c->rotation_keys[1], "cfd.t_end", NULL},
                                        {"shallow_water.nu", "cfd.t_end", NULL},
                                        {"shallow_water.nu4", "cfd.t_end", NULL}};
        int big = 0;
        for (int k = 1; k < 5; k++)
            if (!(term[k] <= term[big])) big = k;
        const char *key = hs_params_first_set(p, keys[big], "cfd.t_end");
        return hs_params_error(p, key, "the stable step is %.3g, below the resolution of the time near cfd.t_end = %g: the run could never end",
                               c->g.cfl * limit, c->g.t_end);
    }
    if (s->ctx->rank == 0 && c->scase == SW_JET && c->jet_width < 4.0 * c->g.dx[1])
        fprintf(stderr, "hpcsim: warning: shallow_water: the jet is %.2g cells wide (jet_width / dy); resolving its instability needs about 8\n",
                c->jet_width / c->g.dx[1]);
    return HS_OK;
}

/* ---------------------------------------------------------------- kernels */

static hs_sw_lay lay_of(const hs_field *f)
{
    hs_sw_lay l;
    l.origin = (int64_t)hs_field_index(f, 0, 0, 0);
    l.sy = hs_field_stride_y(f);
    return l;
}

/* A launch record with the grid's numbers, reading the fields `in` (h, u, v). */
static hs_sw_launch launch_base(const sw *s, hs_field *const in[3])
{
    hs_sw_launch L;
    memset(&L, 0, sizeof L);
    const sw_config *c = &s->c;
    L.lh = lay_of(in[0]);
    L.lu = lay_of(in[1]);
    L.lv = lay_of(in[2]);
    L.h = in[0]->data, L.u = in[1]->data, L.v = in[2]->data;
    L.b = s->bottom->data;
    for (int d = 0; d < 2; d++) {
        L.lo[d] = 0, L.hi[d] = s->d->local[d];
        L.local[d] = s->d->local[d];
        L.offset[d] = s->d->offset[d];
    }
    L.ny = c->g.n[1];
    L.walls = c->walls;
    L.idx = 1.0 / c->g.dx[0], L.idy = 1.0 / c->g.dx[1];
    L.rx = c->g.dx[1] / c->g.dx[0], L.ry = c->g.dx[0] / c->g.dx[1];
    L.dy = c->g.dx[1];
    L.g = c->grav;
    L.f0 = c->f0, L.beta = c->beta, L.yc = 0.5 * c->g.length[1];
    L.nu = c->nu, L.nu4 = c->nu4;
    return L;
}

static int launch(const sw *s, const hs_sw_launch *L)
{
    return HS_DISPATCH(s->ctx, hs_sw_launch_cpu(L), hs_sw_launch_cuda(s->ctx->cuda, L));
}

/* Boundary ghosts of one variable at the walls (the decomposition's periodic faces are the halo
 * exchange's). */
static int wall_ghosts(sw *s, hs_field *f, int var)
{
    return s->c.walls ? hs_field_fill_ghosts(f, s->bc[var], s->c.g.dx, 0) : HS_OK;
}

/* Halos and wall ghosts of a set (h, u, v). */
static int ghosts(sw *s, hs_field *const set[3])
{
    HS_CHECK(hs_halo_exchange_group_begin(set, 3));
    HS_CHECK(hs_halo_exchange_group_end(set, 3));
    for (int v = 0; v < 3; v++) HS_CHECK(wall_ghosts(s, set[v], v));
    return HS_OK;
}

/* The launch record of RK4 stage k (0..3) of a step of dt: inputs y, a, b2, a; outputs a, b2, a, y.
 * *in is the stage's input set. */
static hs_sw_launch stage_launch(sw *s, int k, double dt, hs_field ***in)
{
    *in = k == 0 ? s->y : k == 2 ? s->b2 : s->a;
    hs_field **out = k == 0 || k == 2 ? s->a : k == 1 ? s->b2 : s->y;
    hs_sw_launch L = launch_base(s, *in);
    L.op = HS_SW_STAGE;
    L.stage = k;
    L.dt = dt;
    L.h0 = s->y[0]->data, L.u0 = s->y[1]->data, L.v0 = s->y[2]->data;
    L.ah = s->acc[0]->data, L.au = s->acc[1]->data, L.av = s->acc[2]->data;
    L.oh = out[0]->data, L.ou = out[1]->data, L.ov = out[2]->data;
    return L;
}

/* RK4 stage k of a step of dt, with its input's halo exchange (behind the interior's work when
 * there are several ranks). */
static int stage(sw *s, int k, double dt)
{
    hs_field **in;
    hs_sw_launch L = stage_launch(s, k, dt, &in);
    if (!s->overlap) {
        HS_CHECK(ghosts(s, in));
        return launch(s, &L);
    }
    /* the wall ghosts first (the interior box reaches the walls), the exchange behind the interior */
    for (int v = 0; v < 3; v++) HS_CHECK(wall_ghosts(s, in[v], v));
    HS_CHECK(hs_halo_exchange_group_begin(in, 3));
    hs_sw_launch Li = L;
    for (int d = 0; d < 2; d++) Li.lo[d] = s->inner.lo[d], Li.hi[d] = s->inner.hi[d];
    HS_CHECK(launch(s, &Li));
    HS_CHECK(hs_halo_exchange_group_end(in, 3));
    for (int v = 0; v < 3; v++) HS_CHECK(wall_ghosts(s, in[v], v));
    for (int b = 0; b < s->nshell; b++) {
        hs_sw_launch Ls = L;
        for (int d = 0; d < 2; d++) Ls.lo[d] = s->shell[b].lo[d], Ls.hi[d] = s->shell[b].hi[d];
        HS_CHECK(launch(s, &Ls));
    }
    return HS_OK;
}

static int step(sw *s, double dt)
{
    for (int k = 0; k < 4; k++) HS_CHECK(stage(s, k, dt));
    return HS_OK;
}

/* The stable step of the current state, every rank alike. */
static int current_stable_dt(sw *s, double *dt)
{
    double hmax, umax, vmax;
    HS_CHECK(hs_field_max(s->y[0], &hmax));
    HS_CHECK(hs_field_maxabs(s->y[1], &umax));
    HS_CHECK(hs_field_maxabs(s->y[2], &vmax));
    if (!isfinite(hmax + umax + vmax))
        return HS_FAIL(HS_ERR_RUNTIME, "shallow_water: the state is not finite at step %lld, t = %.9g (was the step stable? "
                                       "the cfl series shows it)", (long long)s->step, s->clk.time);
    *dt = stable_dt(&s->c, hmax, umax, vmax);
    return HS_OK;
}

static int choose_dt(sw *s)
{
    if (s->c.g.dt_user > 0) {
        s->dt = s->c.g.dt_user;
        return HS_OK;
    }
    double st = 0;
    HS_CHECK(current_stable_dt(s, &st));
    s->dt = s->c.g.cfl * st;
    return HS_OK;
}

/* A reduction over the ranks of the contiguous cell array (through the scratch field: each cell
 * once, the ranks combined in order). */
static int reduce_cells(sw *s, hs_field_op op, double *result)
{
    HS_CHECK(hs_field_load_interior(s->scratch, s->cells));
    return hs_field_reduce(s->scratch, op, result);
}

/* A cell-centred diagnostic of the state into s->cells (ghosts valid). */
static int cell_op(sw *s, int op)
{
    hs_sw_launch L = launch_base(s, s->y);
    L.op = op;
    L.out = s->cells;
    return launch(s, &L);
}

static int totals(sw *s, double *mass, double *energy, double *enstrophy)
{
    const double area = s->c.g.dx[0] * s->c.g.dx[1];
    HS_CHECK(ghosts(s, s->y));
    HS_CHECK(hs_field_sum(s->y[0], mass));
    HS_CHECK(cell_op(s, HS_SW_ENERGY));
    HS_CHECK(reduce_cells(s, HS_FIELD_SUM, energy));
    HS_CHECK(cell_op(s, HS_SW_ENSTROPHY));
    HS_CHECK(reduce_cells(s, HS_FIELD_SUM, enstrophy));
    *mass *= area, *energy *= area, *enstrophy *= area;
    return HS_OK;
}

static int advance(void *state, double until, int64_t max_steps, int64_t *taken)
{
    sw *s = state;
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
        if (s->c.g.diag_every > 0 && s->step % s->c.g.diag_every == 0) {
            double m, e, z;
            HS_CHECK(totals(s, &m, &e, &z));
            if (s->ctx->rank == 0)
                printf("shallow_water: step %lld t = %.6g dt = %.4g mass %+.3e energy %+.3e enstrophy %+.3e (relative change)\n",
                       (long long)s->step, s->clk.time, s->dt, (m - s->mass0) / s->mass0, (e - s->energy0) / s->energy0,
                       s->enstrophy0 != 0 ? (z - s->enstrophy0) / s->enstrophy0 : z);
        }
    }
    return HS_OK;
}

static void progress(void *state, double *time, int64_t *step_out, double *t_end, double *work)
{
    sw *s = state;
    *time = s->clk.time;
    *step_out = s->step;
    *t_end = s->t_end;
    *work = (double)s->c.g.n[0] * (double)s->c.g.n[1];
}

/* ---------------------------------------------------------------- set-up */

static int set_initial(sw *s, hs_field *f, int var)
{
    const wave_t w = wave_of(&s->c);
    size_t n = (size_t)(f->local[0] * f->local[1]);
    double *h = malloc((n ? n : 1) * sizeof *h);
    if (!h) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    for (int64_t j = 0; j < f->local[1]; j++)
        for (int64_t i = 0; i < f->local[0]; i++) {
            int64_t gi = i + f->offset[0], gj = j + f->offset[1];
            h[j * f->local[0] + i] = var == 3 ? bottom_at(&s->c, (gi + 0.5) * s->c.g.dx[0], (gj + 0.5) * s->c.g.dx[1])
                                              : initial_at(&s->c, &w, var, gi, gj);
        }
    int rc = hs_field_set_interior(f, h);
    free(h);
    return rc;
}

static int same_layout(const hs_field *a, const hs_field *b)
{
    return a->pitch == b->pitch && a->count == b->count && hs_field_index(a, 0, 0, 0) == hs_field_index(b, 0, 0, 0);
}

static void destroy(void *state);

static int check(hs_ctx *ctx, const hs_params *p)
{
    sw *s = calloc(1, sizeof *s);
    if (!s) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    s->ctx = ctx;
    int rc = validate(s, p);
    destroy(s);
    return rc;
}

static int create(hs_ctx *ctx, const hs_params *p, void **state)
{
    sw *s = calloc(1, sizeof *s);
    if (!s) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    *state = s;
    s->ctx = ctx;
    HS_CHECK(validate(s, p));
    const sw_config *c = &s->c;
    s->t_end = c->g.t_end;
    for (int v = 0; v < 3; v++) {
        hs_field **sets[4] = {&s->y[v], &s->a[v], &s->b2[v], &s->acc[v]};
        for (int k = 0; k < 4; k++) {
            HS_CHECK(hs_field_create_staggered(s->d, HS_F64, 2, v - 1, sets[k]));
            HS_CHECK(hs_field_set_corners(*sets[k], 1));
            if (!same_layout(*sets[k], s->y[v])) return HS_FAIL(HS_ERR_RUNTIME, "shallow_water: stage fields of unequal layouts");
        }
    }
    HS_CHECK(hs_field_create(s->d, HS_F64, 2, &s->bottom));
    HS_CHECK(hs_field_set_corners(s->bottom, 1));
    if (!same_layout(s->bottom, s->y[0])) return HS_FAIL(HS_ERR_RUNTIME, "shallow_water: bottom and depth of unequal layouts");
    HS_CHECK(hs_field_create(s->d, HS_F64, 0, &s->scratch));
    size_t cells = (size_t)(s->d->local[0] * s->d->local[1]);
    HS_CHECK(hs_mem_alloc(ctx, (cells ? cells : 1) * sizeof(double), (void **)&s->cells));
    s->host = malloc((cells ? cells : 1) * sizeof(double));
    if (!s->host) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    /* walls: h, b and u mirror evenly (free slip), v is zero on the wall and odd about it */
    for (int v = 0; v < 3; v++)
        for (int d = 0; d < 3; d++)
            for (int side = 0; side < 2; side++) {
                hs_bc b = {HS_BC_PERIODIC, 0, NULL, NULL};
                if (d == 1 && c->walls) b.kind = v == 2 ? HS_BC_DIRICHLET : HS_BC_NEUMANN;
                s->bc[v][d][side] = b;
            }
    for (int v = 0; v < 3; v++) HS_CHECK(set_initial(s, s->y[v], v));
    HS_CHECK(set_initial(s, s->bottom, 3));
    HS_CHECK(hs_halo_exchange(s->bottom));
    HS_CHECK(wall_ghosts(s, s->bottom, 0));
    s->overlap = ctx->size > 1;
    s->nshell = hs_field_split_boxes(s->y[0], 2, &s->inner, s->shell);
    HS_CHECK(totals(s, &s->mass0, &s->energy0, &s->enstrophy0));
    /* the first step's dt already, so that the first record's cfl is the one the run starts with */
    return choose_dt(s);
}

/* ---------------------------------------------------------------- output, checkpoints */

static int describe_output(void *state, hs_output_desc *desc)
{
    sw *s = state;
    static const char *names[2] = {"x", "y"};
    static const char *long_names[2] = {"x coordinate of cell centre", "y coordinate of cell centre"};
    const sw_config *c = &s->c;
    desc->title = "hpcsim rotating shallow water (C-grid, Arakawa-Lamb 1981, RK4)";
    /* lengths, g and f in the inputs' own units (coordinates "1"): so is the time, whatever the CF
     * units attribute the tools need says */
    desc->record_long_name = "time in the units of the inputs (1/f0, L/sqrt(g H)); the units attribute is for CF tools";
    desc->ndim = 2;
    for (int d = 0; d < 2; d++) {
        if (!s->coords[d]) {
            s->coords[d] = malloc((size_t)c->g.n[d] * sizeof(double));
            s->edges[d] = malloc((size_t)(c->g.n[d] + 1) * sizeof(double));
            if (!s->coords[d] || !s->edges[d]) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
            for (int64_t i = 0; i < c->g.n[d]; i++) s->coords[d][i] = ((double)i + 0.5) * c->g.dx[d];
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
    sw *s = state;
    HS_CHECK(hs_writer_def_var(w, "h", "1", "layer depth", NULL, HS_F64, 1, &s->var_h));
    HS_CHECK(hs_writer_def_var(w, "u", "1", "x velocity at the cell centre", NULL, HS_F64, 1, &s->var_u));
    HS_CHECK(hs_writer_def_var(w, "v", "1", "y velocity at the cell centre", NULL, HS_F64, 1, &s->var_v));
    HS_CHECK(hs_writer_def_var(w, "vorticity", "1", "relative vorticity dv/dx - du/dy at the cell centre", NULL, HS_F64, 1, &s->var_vort));
    s->var_b = -1;
    if (s->c.topo != SW_TOPO_FLAT) HS_CHECK(hs_writer_def_var(w, "b", "1", "bottom height (surface h + b)", NULL, HS_F64, 0, &s->var_b));
    HS_CHECK(hs_writer_def_series(w, "mass", "1", "total mass, integral of h", NULL, &s->ser_mass));
    HS_CHECK(hs_writer_def_series(w, "energy", "1", "total energy, integral of h |u|^2/2 + g h (h/2 + b)", NULL, &s->ser_energy));
    HS_CHECK(hs_writer_def_series(w, "potential_enstrophy", "1", "potential enstrophy, integral of h q^2/2, q = (f + vorticity)/h", NULL,
                                  &s->ser_ens));
    HS_CHECK(hs_writer_def_series(w, "cfl", "1", "dt over the stable RK4 step of the current state (gravity waves, flow, f; stable below 1), dt the current step size " HS_CFD_CFL_STEP_NOTE,
                                  NULL, &s->ser_cfl));
    s->b_written = 0;
    return HS_OK;
}

static int put_cells(sw *s, hs_writer *w, int var)
{
    size_t cells = (size_t)(s->d->local[0] * s->d->local[1]);
    HS_CHECK(hs_mem_copy(s->ctx, s->host, s->cells, cells * sizeof(double), HS_COPY_D2H));
    return hs_writer_put_block(w, var, s->d->offset, s->d->local, s->host);
}

static int write_state(void *state, hs_writer *w)
{
    sw *s = state;
    double mass, energy, ens, st = 0;
    HS_CHECK(totals(s, &mass, &energy, &ens)); /* (fills the ghosts the centred values read) */
    HS_CHECK(hs_field_get_interior(s->y[0], s->host));
    HS_CHECK(hs_writer_put_block(w, s->var_h, s->d->offset, s->d->local, s->host));
    HS_CHECK(cell_op(s, HS_SW_CENTRE_U));
    HS_CHECK(put_cells(s, w, s->var_u));
    HS_CHECK(cell_op(s, HS_SW_CENTRE_V));
    HS_CHECK(put_cells(s, w, s->var_v));
    HS_CHECK(cell_op(s, HS_SW_VORTICITY));
    HS_CHECK(put_cells(s, w, s->var_vort));
    if (s->var_b >= 0 && !s->b_written) {
        HS_CHECK(hs_field_get_interior(s->bottom, s->host));
        HS_CHECK(hs_writer_put_block(w, s->var_b, s->d->offset, s->d->local, s->host));
        s->b_written = 1;
    }
    HS_CHECK(current_stable_dt(s, &st));
    HS_CHECK(hs_writer_put_scalar(w, s->ser_mass, mass));
    HS_CHECK(hs_writer_put_scalar(w, s->ser_energy, energy));
    HS_CHECK(hs_writer_put_scalar(w, s->ser_ens, ens));
    return hs_writer_put_scalar(w, s->ser_cfl, s->dt > 0 ? s->dt / st : 0.0);
}

static int save_field(hs_checkpoint *k, const char *name, hs_field *f)
{
    size_t n = (size_t)(f->local[0] * f->local[1]);
    double *h = malloc((n ? n : 1) * sizeof *h);
    if (!h) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    int rc = hs_field_get_interior(f, h);
    if (rc == HS_OK) rc = hs_checkpoint_write_state(k, name, HS_F64, (int64_t)n, h);
    free(h);
    return rc;
}

static int load_field(hs_checkpoint *k, const char *name, hs_field *f)
{
    size_t n = (size_t)(f->local[0] * f->local[1]);
    double *h = malloc((n ? n : 1) * sizeof *h);
    if (!h) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    int rc = hs_checkpoint_read_state(k, name, HS_F64, (int64_t)n, h);
    if (rc == HS_OK) rc = hs_field_set_interior(f, h);
    free(h);
    return rc;
}

static const char *const g_var_names[3] = {"h", "u", "v"};

static int checkpoint(void *state, hs_checkpoint *k)
{
    sw *s = state;
    for (int v = 0; v < 3; v++) HS_CHECK(save_field(k, g_var_names[v], s->y[v]));
    HS_CHECK(hs_clock_checkpoint(k, &s->clk));
    double clock[6] = {s->clk.time, (double)s->step, s->dt, s->mass0, s->energy0, s->enstrophy0};
    return hs_checkpoint_write(k, "clock", HS_F64, 6, clock);
}

static int restore(void *state, hs_checkpoint *k)
{
    sw *s = state;
    for (int v = 0; v < 3; v++) HS_CHECK(load_field(k, g_var_names[v], s->y[v]));
    double clock[6];
    HS_CHECK(hs_checkpoint_read(k, "clock", HS_F64, 6, clock));
    HS_CHECK(hs_clock_restore(k, &s->clk, clock[0]));
    s->step = (int64_t)clock[1];
    s->dt = clock[2];
    s->mass0 = clock[3], s->energy0 = clock[4], s->enstrophy0 = clock[5];
    return HS_OK;
}

static int finish(void *state)
{
    sw *s = state;
    double m, e, z, st = 0;
    HS_CHECK(totals(s, &m, &e, &z));
    if (!isfinite(m + e + z))
        return HS_FAIL(HS_ERR_RUNTIME, "shallow_water: the state is not finite at step %lld, t = %.9g", (long long)s->step, s->clk.time);
    HS_CHECK(current_stable_dt(s, &st));
    double umax, vmax;
    HS_CHECK(hs_field_maxabs(s->y[1], &umax));
    HS_CHECK(hs_field_maxabs(s->y[2], &vmax));
    if (s->ctx->rank == 0) {
        printf("shallow_water: %lld steps to t = %.9g, CFL %.3f; max |u| %.4g, max |v| %.4g\n", (long long)s->step, s->clk.time,
               s->dt > 0 ? s->dt / st : 0.0, umax, vmax);
        printf("shallow_water: relative change since t = 0: mass %.3e, energy %.3e, potential enstrophy %.3e\n", (m - s->mass0) / s->mass0,
               (e - s->energy0) / s->energy0, s->enstrophy0 != 0 ? (z - s->enstrophy0) / s->enstrophy0 : z);
    }
    return HS_OK;
}

static void destroy(void *state)
{
    sw *s = state;
    if (!s) return;
    for (int v = 0; v < 3; v++) {
        hs_field_destroy(s->y[v]);
        hs_field_destroy(s->a[v]);
        hs_field_destroy(s->b2[v]);
        hs_field_destroy(s->acc[v]);
    }
    for (int d = 0; d < 2; d++) {
        free(s->coords[d]);
        free(s->edges[d]);
    }
    hs_field_destroy(s->bottom);
    hs_field_destroy(s->scratch);
    if (s->ctx) hs_mem_free(s->ctx, s->cells);
    if (s->d) hs_decomp_destroy(s->d);
    free(s->host);
    free(s);
}

/* ---------------------------------------------------------------- for tests and the benchmark */

int hs_sw_gather(void *state, int what, double *global_host)
{
    sw *s = state;
    switch (what) {
    case HS_SW_GATHER_H: return hs_field_gather(s->y[0], 0, global_host);
    case HS_SW_GATHER_U_FACE: return hs_field_gather(s->y[1], 0, global_host);
    case HS_SW_GATHER_V_FACE: return hs_field_gather(s->y[2], 0, global_host);
    case HS_SW_GATHER_B: return hs_field_gather(s->bottom, 0, global_host);
    case HS_SW_GATHER_U:
    case HS_SW_GATHER_V:
    case HS_SW_GATHER_VORTICITY:
        HS_CHECK(ghosts(s, s->y));
        HS_CHECK(cell_op(s, what == HS_SW_GATHER_U ? HS_SW_CENTRE_U : what == HS_SW_GATHER_V ? HS_SW_CENTRE_V : HS_SW_VORTICITY));
        HS_CHECK(hs_field_load_interior(s->scratch, s->cells));
        return hs_field_gather(s->scratch, 0, global_host);
    default: return HS_FAIL(HS_ERR_INPUT, "hs_sw_gather: unknown field %d", what);
    }
}

int hs_sw_totals(void *state, double *mass, double *energy, double *enstrophy) { return totals(state, mass, energy, enstrophy); }

int hs_sw_probe(void *state, int64_t i, int64_t j, double *h)
{
    sw *s = state;
    const hs_decomp *d = s->d;
    double v[1] = {0};
    int64_t li = i - d->offset[0], lj = j - d->offset[1];
    if (li >= 0 && li < d->local[0] && lj >= 0 && lj < d->local[1]) {
        const double *p = (const double *)s->y[0]->data + hs_field_index(s->y[0], li, lj, 0);
        HS_CHECK(hs_mem_copy(s->ctx, v, p, sizeof(double), HS_COPY_D2H));
    }
    HS_CHECK(hs_allreduce_sum(s->ctx->comm, v, 1));
    *h = v[0];
    return HS_OK;
}

double hs_sw_dt(void *state) { return ((sw *)state)->dt; }

int hs_sw_bench_steps(void *state, int nsteps, double *seconds)
{
    sw *s = state;
    hs_timer t;
    HS_CHECK(hs_timer_init(s->ctx, &t));
    if (s->dt <= 0) HS_CHECK(choose_dt(s));
    HS_CHECK(hs_ctx_sync(s->ctx));
    HS_CHECK(hs_timer_start(&t));
    for (int i = 0; i < nsteps; i++) HS_CHECK(step(s, s->dt));
    int rc = hs_timer_stop(&t, seconds);
    hs_timer_free(&t);
    return rc;
}

int hs_sw_bench_stages(void *state, double *bytes)
{
    sw *s = state;
    const double cells = (double)s->d->local[0] * (double)s->d->local[1];
    /* the arrays each stage must read or write once: stage 0 reads y (3) and writes acc and a (6);
     * stages 1 and 2 read their input, y and acc and write acc and their output (15 each); stage 3
     * reads a, y and acc and writes y (12); every stage reads b */
    *bytes = 8.0 * cells * (9 + 15 + 15 + 12 + 4);
    if (s->dt <= 0) HS_CHECK(choose_dt(s));
    for (int k = 0; k < 4; k++) {
        hs_field **in;
        hs_sw_launch L = stage_launch(s, k, s->dt, &in);
        HS_CHECK(launch(s, &L));
    }
    return HS_OK;
}

const hs_solver_ops hs_cfd_shallow_water = {
    .name = "shallow_water",
    .summary = "rotating shallow water on an Arakawa C-grid",
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
