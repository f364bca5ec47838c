/* The heat solver's parameters: declaration, validation, and pointwise set-up of k, Q and T(0). */
#include "solvers/heat/heat_setup.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/grid_input.h"
#include "io/output.h"
#include "kernels/error.h"

/* In the order of hs_bc_kind (kernels/grid/grid.h), so that hs_params_enum gives the kind. */
#define BC_CHOICES "periodic|dirichlet|neumann"

static const hs_param_decl g_heat_params[] = {
    {"heat", "ndim", HS_PARAM_INT, "2", 1, 3, NULL, "spatial dimensions"},
    {"heat", "n", HS_PARAM_INT_LIST, "64", 1, 1e6, "1|2|3", "cells per dimension (one value: the same in all)"},
    {"heat", "length", HS_PARAM_REAL_LIST, "1", 1e-300, HS_NO_MAX, "1|2|3", "domain length per dimension (m)"},
    {"heat", "procs", HS_PARAM_INT_LIST, "0", 0, 1e6, "1|2|3", "MPI ranks per dimension (0: automatic)"},
    {"heat", "t_end", HS_PARAM_REAL, "0.01", 0, HS_NO_MAX, NULL, "end time (s)"},
    {"heat", "dt", HS_PARAM_REAL, "0", 0, HS_NO_MAX, NULL, "time step (s); 0: the largest stable one times cfl (explicit) or t_end/100 (implicit)"},
    {"heat", "cfl", HS_PARAM_REAL, "0.9", 1e-6, 1, NULL, "fraction of the explicit stability limit used when dt = 0"},
    {"heat", "scheme", HS_PARAM_ENUM, "explicit", 0, 0, HS_HEAT_SCHEME_CHOICES, "time integration"},
    {"heat", "order", HS_PARAM_INT, "2", 2, 4, NULL, "order of the spatial stencil (2 or 4)"},
    {"heat", "rho", HS_PARAM_REAL, "1", 1e-300, HS_NO_MAX, NULL, "density (kg/m^3)"},
    {"heat", "cp", HS_PARAM_REAL, "1", 1e-300, HS_NO_MAX, NULL, "specific heat capacity (J/(kg K))"},
    {"heat", "conductivity", HS_PARAM_ENUM, "constant", 0, 0, HS_HEAT_K_CHOICES, "how k is given"},
    {"heat", "k", HS_PARAM_REAL, "1", 1e-300, HS_NO_MAX, NULL, "thermal conductivity (W/(m K)) when constant"},
    {"heat", "layer_bounds", HS_PARAM_REAL_LIST, "0.5", HS_NO_MIN, HS_NO_MAX, NULL, "layered k: increasing interface positions along the last dimension (m)"},
    {"heat", "layer_k", HS_PARAM_REAL_LIST, "1 1", 1e-300, HS_NO_MAX, NULL, "layered k: conductivity of each layer, one more than layer_bounds"},
    {"heat", "k_file", HS_PARAM_STRING, "none", 0, 0, NULL, "conductivity file (NetCDF or HDF5) when conductivity = file"},
    {"heat", "k_variable", HS_PARAM_STRING, "k", 0, 0, NULL, "variable holding k in k_file, shaped like the grid (z, y, x)"},
    {"heat", "initial", HS_PARAM_ENUM, "sine", 0, 0, HS_HEAT_INIT_CHOICES, "initial temperature"},
    {"heat", "T0", HS_PARAM_REAL, "0", HS_NO_MIN, HS_NO_MAX, NULL, "background temperature (K)"},
    {"heat", "amplitude", HS_PARAM_REAL, "1", HS_NO_MIN, HS_NO_MAX, NULL, "amplitude of the sine mode or Gaussian (K)"},
    {"heat", "mode", HS_PARAM_INT_LIST, "1", 0, 1e6, "1|2|3", "sine: mode number per dimension"},
    {"heat", "sigma", HS_PARAM_REAL, "0.05", 1e-300, HS_NO_MAX, NULL, "gaussian: initial width (m)"},
    {"heat", "center", HS_PARAM_REAL_LIST, "0.5", HS_NO_MIN, HS_NO_MAX, "1|2|3", "gaussian: centre (m)"},
    {"heat", "bc_xlo", HS_PARAM_ENUM, "dirichlet", 0, 0, BC_CHOICES, "boundary at x = 0"},
    {"heat", "bc_xhi", HS_PARAM_ENUM, "dirichlet", 0, 0, BC_CHOICES, "boundary at x = length"},
    {"heat", "bc_ylo", HS_PARAM_ENUM, "dirichlet", 0, 0, BC_CHOICES, "boundary at y = 0"},
    {"heat", "bc_yhi", HS_PARAM_ENUM, "dirichlet", 0, 0, BC_CHOICES, "boundary at y = length"},
    {"heat", "bc_zlo", HS_PARAM_ENUM, "dirichlet", 0, 0, BC_CHOICES, "boundary at z = 0"},
    {"heat", "bc_zhi", HS_PARAM_ENUM, "dirichlet", 0, 0, BC_CHOICES, "boundary at z = length"},
    {"heat", "value_xlo", HS_PARAM_REAL, "0", HS_NO_MIN, HS_NO_MAX, NULL, "Dirichlet: wall temperature (K); Neumann: outward dT/dn (K/m)"},
    {"heat", "value_xhi", HS_PARAM_REAL, "0", HS_NO_MIN, HS_NO_MAX, NULL, "as value_xlo, at x = length"},
    {"heat", "value_ylo", HS_PARAM_REAL, "0", HS_NO_MIN, HS_NO_MAX, NULL, "as value_xlo, at y = 0"},
    {"heat", "value_yhi", HS_PARAM_REAL, "0", HS_NO_MIN, HS_NO_MAX, NULL, "as value_xlo, at y = length"},
    {"heat", "value_zlo", HS_PARAM_REAL, "0", HS_NO_MIN, HS_NO_MAX, NULL, "as value_xlo, at z = 0"},
    {"heat", "value_zhi", HS_PARAM_REAL, "0", HS_NO_MIN, HS_NO_MAX, NULL, "as value_xlo, at z = length"},
    {"heat", "source", HS_PARAM_ENUM, "none", 0, 0, HS_HEAT_SOURCE_CHOICES, "heat source Q"},
    {"heat", "Q", HS_PARAM_REAL, "0", HS_NO_MIN, HS_NO_MAX, NULL, "source strength (W/m^3; peak value for gaussian)"},
    {"heat", "source_center", HS_PARAM_REAL_LIST, "0.5", HS_NO_MIN, HS_NO_MAX, "1|2|3", "gaussian source centre (m)"},
    {"heat", "source_sigma", HS_PARAM_REAL, "0.05", 1e-300, HS_NO_MAX, NULL, "gaussian source width (m)"},
    {"heat", "pcg_rtol", HS_PARAM_REAL, "1e-12", 1e-300, 0.1, NULL, "implicit schemes: relative residual of each CG solve"},
    {"heat", "pcg_max_iter", HS_PARAM_INT, "10000", 1, 1e9, NULL, "implicit schemes: CG iterations at most per step"},
    {"heat", "gpu_kernel", HS_PARAM_ENUM, "auto", 0, 0, HS_HEAT_KERNEL_CHOICES, "GPU 7-point kernel for constant k (auto: vec2 where rows allow, else zc; cell: the simple baseline)"},
};

int hs_heat_declare(void) {
    static const char *const inputs[] = {"heat.k_file", NULL}; /* no output may replace them */
    HS_CHECK(hs_params_declare_inputs(inputs));
    return hs_params_declare(g_heat_params, (int)(sizeof g_heat_params / sizeof g_heat_params[0]));
}

static int read_boundaries(const hs_params *p, hs_heat_config *c)
{
    static const char *names[3][2] = {{"xlo", "xhi"}, {"ylo", "yhi"}, {"zlo", "zhi"}};
    for (int d = 0; d < 3; d++)
        for (int s = 0; s < 2; s++) {
            char key[32];
            snprintf(key, sizeof key, "heat.bc_%s", names[d][s]);
            c->bc[d][s] = (hs_bc_kind)hs_params_enum(p, key);
            snprintf(key, sizeof key, "heat.value_%s", names[d][s]);
            c->bc_value[d][s] = hs_params_real(p, key);
        }
    for (int d = 0; d < c->ndim; d++)
        if ((c->bc[d][0] == HS_BC_PERIODIC) != (c->bc[d][1] == HS_BC_PERIODIC)) {
            char key[32];
            snprintf(key, sizeof key, "heat.bc_%s", names[d][c->bc[d][0] == HS_BC_PERIODIC ? 1 : 0]);
            return hs_params_error(p, key, "a periodic dimension must be periodic on both faces");
        }
    return HS_OK;
}

static int read_conductivity(const hs_params *p, hs_heat_config *c)
{
    c->cond_kind = hs_params_enum(p, "heat.conductivity");
    c->k = hs_params_real(p, "heat.k");
    c->k_file = hs_params_input_path(p, "heat.k_file");
    c->k_var = hs_params_string(p, "heat.k_variable");
    if (c->cond_kind == HS_HEAT_K_LAYERED) {
        c->nbounds = hs_params_real_list(p, "heat.layer_bounds", c->layer_bounds, HS_HEAT_MAX_LAYERS);
        int nk = hs_params_real_list(p, "heat.layer_k", c->layer_k, HS_HEAT_MAX_LAYERS + 1);
        if (c->nbounds > HS_HEAT_MAX_LAYERS) return hs_params_error(p, "heat.layer_bounds", "at most %d interfaces", HS_HEAT_MAX_LAYERS);
        if (nk != c->nbounds + 1)
            return hs_params_error(p, "heat.layer_k", "has %d values; expected one per layer, %d (layer_bounds has %d)", nk,
                                   c->nbounds + 1, c->nbounds);
        for (int i = 1; i < c->nbounds; i++)
            if (c->layer_bounds[i] <= c->layer_bounds[i - 1]) return hs_params_error(p, "heat.layer_bounds", "must increase");
    }
    if (c->cond_kind == HS_HEAT_K_FILE && !strcmp(c->k_file, "none"))
        return hs_params_error(p, "heat.k_file", "conductivity = file needs a file");
    return HS_OK;
}

/* A product or quotient of valid inputs can still leave the range of doubles (k = 1e300 with
 * rho = 1e-300): each derived quantity the scheme uses must be finite and, where it divides,
 * non-zero, or the run would compute NaN from the first step. */
static int check_diffusivity(const hs_params *p, const hs_heat_config *c, const char *key, double kmin, double kmax)
{
    double rhoc = c->rho * c->cp, amax = kmax / rhoc, amin = kmin / rhoc;
    if (!isfinite(amax) || !(amin >= DBL_MIN))
        return hs_params_error(p, key, "diffusivity k / (rho cp) = %g / %g leaves the range of doubles", kmin < DBL_MIN * rhoc ? kmin : kmax, rhoc);
    for (int d = 0; d < c->ndim; d++)
        if (!isfinite(amax / (c->dx[d] * c->dx[d]) * 16))
            return hs_params_error(p, key, "diffusivity %g / (rho cp) over cells of %g leaves the range of doubles (k / (rho cp dx^2))", kmax,
                                   c->dx[d]);
    return HS_OK;
}

static int check_derived(const hs_params *p, const hs_heat_config *c)
{
    double rhoc = c->rho * c->cp;
    if (!isfinite(rhoc) || !(rhoc >= DBL_MIN))
        return hs_params_error(p, "heat.cp", "rho * cp = %g * %g leaves the range of doubles", c->rho, c->cp);
    double kmax = c->k, kmin = c->k;
    if (c->cond_kind == HS_HEAT_K_LAYERED)
        for (int i = 0; i <= c->nbounds; i++) {
            kmax = fmax(i ? kmax : c->layer_k[0], c->layer_k[i]);
            kmin = fmin(i ? kmin : c->layer_k[0], c->layer_k[i]);
        }
    const char *kkey = c->cond_kind == HS_HEAT_K_LAYERED ? "heat.layer_k" : "heat.k";
    if (c->cond_kind != HS_HEAT_K_FILE) {
        double amax = kmax / rhoc, amin = kmin / rhoc;
        if (!isfinite(amax) || !(amin >= DBL_MIN))
            return hs_params_error(p, kkey, "diffusivity k / (rho cp) = %g / %g leaves the range of doubles", kmax, rhoc);
    }
    for (int d = 0; d < c->ndim; d++) {
        double inv = 1.0 / (c->dx[d] * c->dx[d]);
        if (!(c->dx[d] >= DBL_MIN) || !isfinite(inv) || (c->cond_kind != HS_HEAT_K_FILE && !isfinite(inv * kmax / rhoc * 16)))
            return hs_params_error(p, "heat.length", "cell size %g in dimension %d is too small for doubles (1/dx^2 = %g)",
                                   c->dx[d], d, inv);
    }
    if (c->source != HS_HEAT_SOURCE_NONE && !isfinite(c->Q / rhoc))
        return hs_params_error(p, "heat.Q", "Q / (rho cp) = %g / %g leaves the range of doubles", c->Q, rhoc);
    /* 2 sigma^2 must be a normal double: past 1e154 it overflowed, and the Gaussian's exact solution
     * sigma^2 / (sigma^2 + 2 alpha t) was inf / inf, a NaN initial field (found with sigma = 1e300) */
    if (c->initial == HS_HEAT_INIT_GAUSSIAN && !(2 * c->sigma * c->sigma >= DBL_MIN))
        return hs_params_error(p, "heat.sigma", "%g is too small: sigma^2 underflows", c->sigma);
    if (c->initial == HS_HEAT_INIT_GAUSSIAN && !(2 * c->sigma * c->sigma <= DBL_MAX))
        return hs_params_error(p, "heat.sigma", "%g is too large: sigma^2 overflows", c->sigma);
    if (c->source == HS_HEAT_SOURCE_GAUSSIAN && !(2 * c->source_sigma * c->source_sigma >= DBL_MIN))
        return hs_params_error(p, "heat.source_sigma", "%g is too small: sigma^2 underflows", c->source_sigma);
    if (c->source == HS_HEAT_SOURCE_GAUSSIAN && !(2 * c->source_sigma * c->source_sigma <= DBL_MAX))
        return hs_params_error(p, "heat.source_sigma", "%g is too large: sigma^2 overflows", c->source_sigma);
    if (!isfinite(fabs(c->T0) + fabs(c->amplitude)))
        return hs_params_error(p, "heat.amplitude", "T0 + amplitude = %g + %g leaves the range of doubles", c->T0, c->amplitude);
    return HS_OK;
}

/* Keys this configuration would ignore though the user set them: `layer_k` with a constant k, a
 * Gaussian's width with a sine start, a z wall in 2D, a periodic face's value all ran without a
 * word (the CFD models refuse theirs the same way); the file's leftovers under a setting switched
 * on the command line pass (hs_params_unused). */
static int refuse_unused_keys(const hs_params *p, const hs_heat_config *c)
{
    const struct {
        const char *key, *cause;
        int used;
    } keys[] = {
        {"heat.k", "heat.conductivity", c->cond_kind == HS_HEAT_K_CONSTANT},
        {"heat.layer_bounds", "heat.conductivity", c->cond_kind == HS_HEAT_K_LAYERED},
        {"heat.layer_k", "heat.conductivity", c->cond_kind == HS_HEAT_K_LAYERED},
        {"heat.k_file", "heat.conductivity", c->cond_kind == HS_HEAT_K_FILE},
        {"heat.k_variable", "heat.conductivity", c->cond_kind == HS_HEAT_K_FILE},
        {"heat.amplitude", "heat.initial", c->initial != HS_HEAT_INIT_CONSTANT},
        {"heat.mode", "heat.initial", c->initial == HS_HEAT_INIT_SINE},
        {"heat.sigma", "heat.initial", c->initial == HS_HEAT_INIT_GAUSSIAN},
        {"heat.center", "heat.initial", c->initial == HS_HEAT_INIT_GAUSSIAN},
        {"heat.Q", "heat.source", c->source != HS_HEAT_SOURCE_NONE},
        {"heat.source_center", "heat.source", c->source == HS_HEAT_SOURCE_GAUSSIAN},
        {"heat.source_sigma", "heat.source", c->source == HS_HEAT_SOURCE_GAUSSIAN},
    };
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
        if (!keys[k].used) HS_CHECK(hs_params_unused(p, keys[k].key, keys[k].cause));
    static const char *names[3][2] = {{"xlo", "xhi"}, {"ylo", "yhi"}, {"zlo", "zhi"}};
    for (int d = 0; d < 3; d++)
        for (int s = 0; s < 2; s++) {
            char bc[32], value[32];
            snprintf(bc, sizeof bc, "heat.bc_%s", names[d][s]);
            snprintf(value, sizeof value, "heat.value_%s", names[d][s]);
            if (d >= c->ndim) {
                HS_CHECK(hs_params_unused(p, bc, "heat.ndim"));
                HS_CHECK(hs_params_unused(p, value, "heat.ndim"));
            } else if (c->bc[d][s] == HS_BC_PERIODIC) {
                HS_CHECK(hs_params_unused(p, value, bc));
            }
        }
    /* a layer interface outside the domain along the last dimension ran as a single layer */
    for (int i = 0; c->cond_kind == HS_HEAT_K_LAYERED && i < c->nbounds; i++)
        if (!(c->layer_bounds[i] > 0 && c->layer_bounds[i] < c->length[c->ndim - 1]))
            return hs_params_error(p, "heat.layer_bounds", "interface %g m lies outside the domain, (0, %g) m along %c", c->layer_bounds[i],
                                   c->length[c->ndim - 1], "xyz"[c->ndim - 1]);
    return HS_OK;
}

int hs_heat_config_read(const hs_params *p, hs_heat_config *c)
{
    memset(c, 0, sizeof *c);
    c->ndim = (int)hs_params_int(p, "heat.ndim");
    HS_CHECK(hs_params_dim_ints(p, "heat.n", "heat.ndim", c->ndim, c->n, 1));
    HS_CHECK(hs_params_dim_reals(p, "heat.length", "heat.ndim", c->ndim, c->length, 1.0));
    int64_t procs[3], mode[3];
    HS_CHECK(hs_params_dim_ints(p, "heat.procs", "heat.ndim", c->ndim, procs, 1));
    HS_CHECK(hs_params_dim_ints(p, "heat.mode", "heat.ndim", c->ndim, mode, 1));
    for (int d = 0; d < 3; d++) {
        c->procs[d] = d < c->ndim ? (int)procs[d] : 1;
        c->mode[d] = (int)mode[d];
        c->dx[d] = c->length[d] / (double)c->n[d];
    }
    HS_CHECK(hs_params_dim_reals(p, "heat.center", "heat.ndim", c->ndim, c->center, 0.0));
    HS_CHECK(hs_params_dim_reals(p, "heat.source_center", "heat.ndim", c->ndim, c->source_center, 0.0));
    c->t_end = hs_params_real(p, "heat.t_end");
    c->dt_user = hs_params_real(p, "heat.dt");
    c->cfl = hs_params_real(p, "heat.cfl");
    c->scheme = hs_params_enum(p, "heat.scheme");
    c->order = (int)hs_params_int(p, "heat.order");
    if (c->order != 2 && c->order != 4) return hs_params_error(p, "heat.order", "must be 2 or 4, got %d", c->order);
    c->rho = hs_params_real(p, "heat.rho");
    c->cp = hs_params_real(p, "heat.cp");
    HS_CHECK(read_conductivity(p, c));
    c->initial = hs_params_enum(p, "heat.initial");
    c->T0 = hs_params_real(p, "heat.T0");
    c->amplitude = hs_params_real(p, "heat.amplitude");
    c->sigma = hs_params_real(p, "heat.sigma");
    HS_CHECK(read_boundaries(p, c));
    c->source = hs_params_enum(p, "heat.source");
    HS_CHECK(refuse_unused_keys(p, c));
    c->Q = hs_params_real(p, "heat.Q");
    c->source_sigma = hs_params_real(p, "heat.source_sigma");
    c->pcg_rtol = hs_params_real(p, "heat.pcg_rtol");
    c->pcg_max_iter = (int)hs_params_int(p, "heat.pcg_max_iter");
    c->gpu_kernel = hs_params_enum(p, "heat.gpu_kernel");
    if (c->order == 4 && c->cond_kind != HS_HEAT_K_CONSTANT)
        return hs_params_error(p, "heat.order", "the 4th-order stencil needs a constant conductivity (heat.conductivity = constant)");
    if (c->order == 4 && c->scheme != HS_HEAT_EXPLICIT)
        for (int d = 0; d < c->ndim; d++)
            if (c->bc[d][0] != HS_BC_PERIODIC)
                return hs_params_error(p, "heat.order", "implicit schemes with the 4th-order stencil need periodic boundaries "
                                                        "(its mirrored walls make the operator unsymmetric for CG)");
    for (int d = 0; d < c->ndim; d++)
        if (c->n[d] < c->order / 2)
            return hs_params_error(p, "heat.n", "%lld cells are too few for the order-%d stencil", (long long)c->n[d], c->order);
    /* a sine mode the grid cannot carry aliases to a longer wave, and the error against the exact
     * mode is meaningless (mode 100 on 8 cells reported a relative L2 of 4e85) */
    if (c->initial == HS_HEAT_INIT_SINE)
        for (int d = 0; d < c->ndim; d++) {
            const int periodic = c->bc[d][0] == HS_BC_PERIODIC;
            const int64_t most = periodic ? c->n[d] / 2 : c->n[d];
            if (c->mode[d] > most)
                return hs_params_error(p, "heat.mode", "mode %d along dimension %d is more than %lld cells carry (at most %lld, %s): it "
                                                       "would alias to a longer wave",
                                       c->mode[d], d, (long long)c->n[d], (long long)most,
                                       periodic ? "n/2 on a periodic axis" : "n between walls");
        }
    return check_derived(p, c);
}

double hs_heat_k_at(const hs_heat_config *c, const double x[3])
{
    if (c->cond_kind != HS_HEAT_K_LAYERED) return c->k;
    double z = x[c->ndim - 1];
    int m = 0;
    while (m < c->nbounds && z >= c->layer_bounds[m]) m++;
    return c->layer_k[m];
}

double hs_heat_source_at(const hs_heat_config *c, const double x[3])
{
    if (c->source == HS_HEAT_SOURCE_NONE) return 0.0;
    if (c->source == HS_HEAT_SOURCE_CONSTANT) return c->Q;
    double r2 = 0;
    for (int d = 0; d < c->ndim; d++) r2 += (x[d] - c->source_center[d]) * (x[d] - c->source_center[d]);
    return c->Q * exp(-r2 / (2 * c->source_sigma * c->source_sigma));
}

static hs_heat_mode mode_of(const hs_heat_config *c)
{
    hs_heat_mode m;
    memset(&m, 0, sizeof m);
    m.ndim = c->ndim;
    for (int d = 0; d < 3; d++) {
        m.length[d] = c->length[d];
        m.mode[d] = c->mode[d];
        m.periodic[d] = c->bc[d][0] == HS_BC_PERIODIC;
    }
    m.t0 = c->T0;
    m.amplitude = c->amplitude;
    m.alpha = c->k / (c->rho * c->cp);
    return m;
}

static hs_heat_gaussian gaussian_of(const hs_heat_config *c)
{
    hs_heat_gaussian g;
    memset(&g, 0, sizeof g);
    g.ndim = c->ndim;
    for (int d = 0; d < 3; d++) g.center[d] = c->center[d];
    g.sigma = c->sigma;
    g.t0 = c->T0;
    g.amplitude = c->amplitude;
    g.alpha = c->k / (c->rho * c->cp);
    return g;
}

double hs_heat_initial_at(const hs_heat_config *c, const double x[3])
{
    if (c->initial == HS_HEAT_INIT_SINE) {
        hs_heat_mode m = mode_of(c);
        return hs_heat_mode_value(&m, x, 0.0);
    }
    if (c->initial == HS_HEAT_INIT_GAUSSIAN) {
        hs_heat_gaussian g = gaussian_of(c);
        return hs_heat_gaussian_value(&g, x, 0.0);
    }
    return c->T0;
}

int hs_heat_exact_at(const hs_heat_config *c, const double x[3], double t, double *value)
{
    if (c->cond_kind != HS_HEAT_K_CONSTANT || c->source != HS_HEAT_SOURCE_NONE) return 0;
    if (c->initial == HS_HEAT_INIT_SINE) {
        /* the sine mode solves the walls it vanishes on: Dirichlet at T0 */
        for (int d = 0; d < c->ndim; d++)
            for (int s = 0; s < 2; s++)
                if (c->bc[d][s] == HS_BC_NEUMANN || (c->bc[d][s] == HS_BC_DIRICHLET && c->bc_value[d][s] != c->T0)) return 0;
        hs_heat_mode m = mode_of(c);
        *value = hs_heat_mode_value(&m, x, t);
        return 1;
    }
    if (c->initial == HS_HEAT_INIT_GAUSSIAN) {
        for (int d = 0; d < c->ndim; d++)
            if (c->bc[d][0] != HS_BC_PERIODIC) return 0;
        hs_heat_gaussian g = gaussian_of(c);
        *value = hs_heat_gaussian_value(&g, x, t);
        return 1;
    }
    return 0;
}

int hs_heat_read_k(const hs_params *p, const hs_heat_config *c, const int64_t offset[3], const int64_t local[3],
                   double *k_local)
{
    hs_reader *r = NULL;
    FILE *probe = fopen(c->k_file, "rb");
    if (!probe) return hs_params_error(p, "heat.k_file", "cannot open conductivity file '%s'", c->k_file);
    fclose(probe);
    if (hs_reader_open(c->k_file, &r) != HS_OK) {
        hs_error_clear();
        return hs_params_error(p, "heat.k_file", "'%s' is not a NetCDF or HDF5 file this build can read", c->k_file);
    }
    int64_t shape[8];
    int rank = 0, rc;
    if (hs_reader_var_shape(r, c->k_var, shape, &rank) != HS_OK) {
        hs_reader_close(r);
        hs_error_clear();
        return hs_params_error(p, "heat.k_variable", "no variable '%s' in '%s'", c->k_var, c->k_file);
    }
    int ok = rank == c->ndim;
    for (int d = 0; ok && d < c->ndim; d++) ok = shape[c->ndim - 1 - d] == c->n[d];
    if (!ok) {
        char got[128] = "", want[128] = "";
        for (int d = 0; d < rank; d++) snprintf(got + strlen(got), sizeof got - strlen(got), "%s%lld", d ? " x " : "", (long long)shape[d]);
        for (int d = c->ndim - 1; d >= 0; d--)
            snprintf(want + strlen(want), sizeof want - strlen(want), "%s%lld", d < c->ndim - 1 ? " x " : "", (long long)c->n[d]);
        hs_reader_close(r);
        return hs_params_error(p, "heat.k_file", "variable '%s' in '%s' has shape %s; the grid needs %s (slowest first)",
                               c->k_var, c->k_file, got, want);
    }
    /* the shape alone let a square k stored (x, y) run transposed, and a file of another grid
     * with the same cell counts run on this one, exit 0 */
    static const char *const axes[3] = {"x", "xy", "xyz"};
    rc = hs_grid_input_check_axes(p, r, c->k_file, "conductivity", c->k_var, c->ndim, axes[c->ndim - 1], c->n, c->dx,
                                  "heat.k_file", "heat.k_file");
    if (rc != HS_OK) {
        hs_reader_close(r);
        return rc;
    }
    size_t total = (size_t)c->n[0] * c->n[1] * c->n[2];
    double *all = malloc(total * sizeof *all);
    if (!all) {
        hs_reader_close(r);
        return HS_FAIL(HS_ERR_RUNTIME, "out of memory reading %s", c->k_file);
    }
    rc = hs_reader_read_cf(r, c->k_var, all);
    hs_reader_close(r);
    /* the file's extremes meet the same range checks as a constant or layered k (every rank read the
     * whole file, so all agree): k = 1e308 in one cell passed and the run went to -inf, exit 1 */
    double kmin = HUGE_VAL, kmax = 0;
    for (size_t i = 0; rc == HS_OK && i < total; i++)
        if (all[i] > 0 && isfinite(all[i])) kmin = fmin(kmin, all[i]), kmax = fmax(kmax, all[i]);
    if (rc == HS_OK && kmax > 0) rc = check_diffusivity(p, c, "heat.k_file", kmin, kmax);
    if (rc != HS_OK) {
        free(all);
        return rc;
    }
    for (int64_t k = 0; k < local[2]; k++)
        for (int64_t j = 0; j < local[1]; j++)
            for (int64_t i = 0; i < local[0]; i++) {
                double v = all[((k + offset[2]) * c->n[1] + (j + offset[1])) * c->n[0] + (i + offset[0])];
                if (!(v > 0) || !isfinite(v)) {
                    free(all);
                    return hs_params_error(p, "heat.k_file", "'%s': conductivity %g at cell (%lld, %lld, %lld) is not positive",
                                           c->k_file, v, (long long)(i + offset[0]), (long long)(j + offset[1]),
                                           (long long)(k + offset[2]));
                }
                k_local[(k * local[1] + j) * local[0] + i] = v;
            }
    free(all);
    return HS_OK;
}
