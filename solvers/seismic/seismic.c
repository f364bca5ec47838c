/* The seismic solver: acoustic (2nd order in time, 2/4/8th order in space, constant or variable density)
 * and elastic (velocity-stress staggered grid) wave propagation with CPML, free surface, sources,
 * receivers, snapshots, seismograms (CF station data and SEG-Y), checkpoints; the adjoint modes
 * live in seismic_adjoint.c, the elastic steps in seismic_elastic.c. */
#include "solvers/seismic/seismic.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/segy.h"
#include "kernels/error.h"
#include "kernels/memory.h"
#include "solvers/seismic/seismic_state.h"

/* ---------------------------------------------------------------- difference coefficients */

/* Centred second derivative (c[0] the centre, c[m] the pair at +-m), centred first derivative
 * (c[m-1] of f(+m) - f(-m)) and staggered first derivative (c[m-1] of f(i+m) - f(i-m+1)) of
 * order 2, 4 and 8 (Fornberg 1988). */
static void coefficients(int radius, double c2[5], double c1[4], double cs[4])
{
    static const double d2[3][5] = {{-2, 1, 0, 0, 0},
                                    {-5.0 / 2, 4.0 / 3, -1.0 / 12, 0, 0},
                                    {-205.0 / 72, 8.0 / 5, -1.0 / 5, 8.0 / 315, -1.0 / 560}};
    static const double d1[3][4] = {{0.5, 0, 0, 0}, {2.0 / 3, -1.0 / 12, 0, 0}, {4.0 / 5, -1.0 / 5, 4.0 / 105, -1.0 / 280}};
    static const double ds[3][4] = {{1, 0, 0, 0},
                                    {9.0 / 8, -1.0 / 24, 0, 0},
                                    {1225.0 / 1024, -245.0 / 3072, 49.0 / 5120, -5.0 / 7168}};
    int k = radius == 1 ? 0 : radius == 2 ? 1 : 2;
    memcpy(c2, d2[k], sizeof d2[k]);
    memcpy(c1, d1[k], sizeof d1[k]);
    memcpy(cs, ds[k], sizeof ds[k]);
}

/* The largest eigenvalue (times h^2) of minus the scheme's 1D second-derivative operator: at the
 * Nyquist wave number, |c0| + 2 sum |c_m| (centred) or (2 sum |cs_m|)^2 (staggered product). */
static double nyquist_symbol(const hs_seis *s, int staggered)
{
    double v = 0;
    if (staggered) {
        for (int m = 0; m < s->radius; m++) v += fabs(s->coefs[m]);
        return 4 * v * v;
    }
    v = fabs(s->coef2[0]);
    for (int m = 1; m <= s->radius; m++) v += 2 * fabs(s->coef2[m]);
    return v;
}

/* The scheme's numerical phase velocity over the true one at kh (1D). */
static double phase_ratio(const hs_seis *s, int staggered, double kh)
{
    double sym = 0;
    if (staggered) {
        for (int m = 1; m <= s->radius; m++) sym += 2 * s->coefs[m - 1] * sin((m - 0.5) * kh);
        sym *= sym;
    } else {
        sym = -s->coef2[0];
        for (int m = 1; m <= s->radius; m++) sym -= 2 * s->coef2[m] * cos(m * kh);
    }
    return sqrt(sym) / kh;
}

/* The fewest points per wavelength at which the scheme's phase velocity is within 0.5%. */
static double ppw_needed(const hs_seis *s, int staggered)
{
    double lo = 2, hi = 200; /* error falls monotonically with ppw */
    for (int it = 0; it < 60; it++) {
        double mid = 0.5 * (lo + hi);
        if (fabs(phase_ratio(s, staggered, 2 * M_PI / mid) - 1) > 0.005) lo = mid;
        else hi = mid;
    }
    return hi;
}

/* ---------------------------------------------------------------- the medium */

/* The model at global point (i, j, k), clamped to the grid: from the file arrays when read, else
 * from the configuration. */
void hs_seis_model_at(const hs_seis *s, int64_t i, int64_t j, int64_t k, double *vp, double *vs, double *rho)
{
    const hs_seis_config *c = &s->cfg;
    int64_t g[3] = {i, j, k};
    for (int d = 0; d < 3; d++) g[d] = g[d] < 0 ? 0 : g[d] > c->n[d] - 1 ? c->n[d] - 1 : g[d];
    if (s->file_vp) {
        size_t idx = (size_t)((g[2] * c->n[1] + g[1]) * c->n[0] + g[0]);
        *vp = s->file_vp[idx];
        *vs = s->file_vs ? s->file_vs[idx] : 0;
        *rho = s->file_rho[idx];
        return;
    }
    double x[3] = {g[0] * c->h[0], g[1] * c->h[1], g[2] * c->h[2]};
    hs_seis_medium_at(c, x, vp, vs, rho);
}

/* Read the model file (every rank the whole grid), when the medium is a file. */
static int read_model_file(hs_seis *s, const hs_params *p)
{
    const hs_seis_config *c = &s->cfg;
    if (c->medium != HS_SEIS_MEDIUM_FILE) return HS_OK;
    size_t n = (size_t)(c->n[0] * c->n[1] * c->n[2]);
    /* the whole grid's copies come before the run's estimate (check_memory, which counts them too):
     * a grid too large for them is the same input error, not a failed allocation (exit 1) */
    const int copies = c->model == HS_SEIS_ELASTIC ? 3 : 2;
    HS_CHECK(hs_driver_check_memory(s->ctx, p, "seismic.n", "the model file read onto the grid", "use a smaller grid", 0,
                                    copies * hs_host_footprint((double)n * sizeof(double))));
    s->file_vp = malloc(n * sizeof(double));
    s->file_rho = malloc(n * sizeof(double));
    if (c->model == HS_SEIS_ELASTIC) s->file_vs = malloc(n * sizeof(double));
    if (!s->file_vp || !s->file_rho || (c->model == HS_SEIS_ELASTIC && !s->file_vs))
        return HS_FAIL(HS_ERR_RUNTIME, "out of memory reading the model file");
    int rc = hs_seis_read_model(p, c, s->file_vp, s->file_vs, s->file_rho);
    int bad = rc != HS_OK; /* every rank reads the same file and reaches the same verdict */
    HS_CHECK(hs_allreduce_int_max(s->ctx->comm, &bad, 1));
    return rc;
}

/* Why the medium at grid point g is no medium (NULL when it is one): vp not positive, or in an
 * elastic model a bulk modulus rho (vp^2 - 4/3 vs^2) that is not positive (Poisson's ratio below
 * -1: vs = 3000 over vp = 2000 ran without complaint). */
static const char *bad_medium(const hs_seis_config *c, double vp, double vs)
{
    if (!(vp > 0) || !isfinite(vp)) return "vp";
    if (c->model == HS_SEIS_ELASTIC && !(vp * vp > 4.0 / 3.0 * vs * vs)) return "vs";
    return NULL;
}

/* The error for the bad point g (bad_medium said why), naming the key that set it. */
static int bad_medium_error(hs_seis *s, const hs_params *p, const int64_t *g)
{
    const hs_seis_config *c = &s->cfg;
    double vp, vs, rho;
    hs_seis_model_at(s, g[0], g[1], g[2], &vp, &vs, &rho);
    /* a disc that lowers vp there is what made the point bad (an elastic one was blamed on vs) */
    const double x[3] = {hs_seis_coord(c, 0, (double)g[0]), hs_seis_coord(c, 1, (double)g[1]), hs_seis_coord(c, 2, (double)g[2])};
    const int lowered = hs_seis_anomaly_dvp(c, x) < 0;
    if (!strcmp(bad_medium(c, vp, vs), "vp"))
        return hs_params_error(p, c->anomaly ? "seismic.anomaly_dvp" : "seismic.vp", "vp = %g at grid point (%lld, %lld, %lld) is not positive",
                               vp, (long long)g[0], (long long)g[1], (long long)g[2]);
    return hs_params_error(p, lowered                               ? "seismic.anomaly_dvp"
                              : c->medium == HS_SEIS_MEDIUM_CONSTANT  ? "seismic.vs"
                              : c->medium == HS_SEIS_MEDIUM_LAYERED ? "seismic.layer_vs"
                              : c->file_format == HS_SEIS_FILE_AUTO ? "seismic.model_file"
                                                                    : "seismic.vs_file",
                           "vs = %g against vp = %g at grid point (%lld, %lld, %lld): vp must exceed vs sqrt(4/3) = %g "
                           "(bulk modulus rho (vp^2 - 4/3 vs^2) > 0)",
                           vs, vp, (long long)g[0], (long long)g[1], (long long)g[2], vs * sqrt(4.0 / 3.0));
}

static int staggered_scheme(const hs_seis_config *c);

/* The stability bound of a staggered scheme in a medium whose density varies (variable-density
 * acoustic, elastic): an effective speed^2 that takes vmax^2's place in the CFL limit.
 *
 * The scheme couples the modulus M = rho vp^2 at the points and the buoyancy b at the half
 * points between them (the mean of the two points' 1/rho); p_tt = M D^T b D p along each axis.
 * That operator is similar to the symmetric M^1/2 D^T b D M^1/2, whose largest eigenvalue is at
 * most its largest absolute row sum (Gershgorin):
 *     G(i) = sqrt(M_i) sum_f |D_fi| b_f sum_k |D_fk| sqrt(M_k),
 * summed over the axes.  In a uniform medium G = vp^2 (2 sum |c_m|)^2 / h^2, the Nyquist bound the
 * CFL limit uses; where a light layer meets a stiff one the half point's buoyancy, raised by the
 * light side, multiplies the stiff side's modulus and the true limit falls (an elastic model with
 * 30 times the density above the interface blew up at cfl 0.7, 100 times at 0.5: this bound says
 * 0.58 and 0.36 of the uniform limit).  M stands for lambda + 2 mu in an elastic model, the modulus
 * of the P wave that sets the limit.  Each axis's largest row sum is taken over the points this rank
 * owns, line by line (the model is read at any global index, clamped at the edges); their sum bounds
 * the largest sum of a point's. */
static double variable_medium_speed2(const hs_seis *s)
{
    const hs_seis_config *c = &s->cfg;
    const hs_decomp *d = s->d;
    const int r = s->radius, pad = 2 * r;
    double num = 0, den = 0;
    for (int e = 0; e < c->ndim; e++) {
        int a1 = (e + 1) % 3, a2 = (e + 2) % 3;
        const int64_t L = d->local[e], lines = d->local[a1] * d->local[a2];
        double gmax = 0;
#pragma omp parallel reduction(max : gmax)
        {
            const size_t len = (size_t)(L + 2 * pad);
            double *sm = malloc(len * sizeof(double)), *bq = malloc(len * sizeof(double));
            double *face = malloc(len * sizeof(double));
            if (sm && bq && face) {
#pragma omp for schedule(static)
                for (int64_t line = 0; line < lines; line++) {
                    int64_t g[3];
                    g[a1] = d->offset[a1] + line % d->local[a1];
                    g[a2] = d->offset[a2] + line / d->local[a1];
                    for (int64_t t = 0; t < (int64_t)len; t++) {
                        double vp, vs, rho;
                        g[e] = d->offset[e] + t - pad;
                        hs_seis_model_at(s, g[0], g[1], g[2], &vp, &vs, &rho);
                        sm[t] = sqrt(rho) * vp, bq[t] = 1 / rho;
                    }
                    /* face[t]: b at the half point between t and t + 1 times its sum over the points */
                    for (int64_t t = pad - r - 1; t < L + pad + r; t++) {
                        double sum = 0;
                        for (int m = 0; m < r; m++) sum += fabs(s->coefs[m]) * (sm[t - m] + sm[t + 1 + m]);
                        face[t] = 0.5 * (bq[t] + bq[t + 1]) * sum;
                    }
                    for (int64_t t = pad; t < L + pad; t++) {
                        double sum = 0;
                        for (int m = 0; m < r; m++) sum += fabs(s->coefs[m]) * (face[t + m] + face[t - m - 1]);
                        gmax = fmax(gmax, sm[t] * sum);
                    }
                }
            } else {
                gmax = INFINITY; /* no buffer: the bound cannot be had; refuse no step silently */
            }
            free(sm), free(bq), free(face);
        }
        num += gmax / (c->h[e] * c->h[e]);
        den += nyquist_symbol(s, 1) / (c->h[e] * c->h[e]);
    }
    return num / den;
}

/* Speeds and the stability bound over the points this rank owns, reduced over the ranks.  A bad
 * point is agreed on by all ranks (the first in the global grid's order) before any of them
 * returns: a rank alone with it used to return while the others waited in the reduction (and the
 * message, printed by rank 0 only, was never seen). */
static int model_extents(hs_seis *s, const hs_params *p)
{
    const hs_seis_config *c = &s->cfg;
    const hs_decomp *d = s->d;
    double vmin = DBL_MAX, vmax = 0;
    double vmin_fluid = DBL_MAX; /* elastic: the P speed of the points with vs = 0 */
    double first_bad = DBL_MAX;  /* global linear index of this rank's first bad point */
    double rho_lo = DBL_MAX, rho_hi = 0;
    for (int64_t k = 0; k < d->local[2]; k++)
        for (int64_t j = 0; j < d->local[1]; j++)
            for (int64_t i = 0; i < d->local[0]; i++) {
                int64_t g[3] = {i + d->offset[0], j + d->offset[1], k + d->offset[2]};
                double vp, vs, rho;
                hs_seis_model_at(s, g[0], g[1], g[2], &vp, &vs, &rho);
                if (bad_medium(c, vp, vs)) {
                    first_bad = fmin(first_bad, (double)(g[0] + c->n[0] * (g[1] + c->n[1] * g[2])));
                    continue;
                }
                /* the slowest wave: S in a solid, P where vs = 0 (a fluid region of an elastic model) */
                if (c->model == HS_SEIS_ELASTIC && vs > 0) vmin = fmin(vmin, vs);
                else if (c->model == HS_SEIS_ELASTIC) vmin_fluid = fmin(vmin_fluid, vp);
                else vmin = fmin(vmin, vp);
                vmax = fmax(vmax, vp);
                rho_lo = fmin(rho_lo, rho), rho_hi = fmax(rho_hi, rho);
            }
    double mm[6] = {-vmin, vmax, -first_bad, -vmin_fluid, -rho_lo, rho_hi};
    HS_CHECK(hs_allreduce_max(s->ctx->comm, mm, 6));
    if (-mm[2] < DBL_MAX) {
        const int64_t at = (int64_t)(-mm[2]), g[3] = {at % c->n[0], at / c->n[0] % c->n[1], at / c->n[0] / c->n[1]};
        return bad_medium_error(s, p, g);
    }
    s->vmin = fmin(-mm[0], -mm[3]);
    s->vmin_is_fluid = -mm[3] < -mm[0];
    s->vmax = mm[1];
    /* an inversion may raise vp: its time step and its bound on vp allow half again the start's
     * largest.  The CPML is built for the start's (s->vmax): the layers keep their vp through the
     * inversion, and with the same damping a model's modelled data are a forward run's (built for
     * 1.5 vmax, the true model's misfit against that run's seismograms was 6e-7, not 0) */
    s->vmax_allowed = c->mode == HS_SEIS_FWI ? 1.5 * s->vmax : s->vmax;
    /* a uniform density cannot raise the bound above vmax^2 (the row sums are then means of speeds) */
    s->speed2_max = s->vmax_allowed * s->vmax_allowed;
    if (staggered_scheme(c) && mm[5] > -mm[4]) {
        double v2[1] = {variable_medium_speed2(s)};
        HS_CHECK(hs_allreduce_max(s->ctx->comm, v2, 1));
        s->speed2_max = fmax(s->speed2_max, v2[0]);
    }
    return HS_OK;
}

/* ---------------------------------------------------------------- input rules */

static int staggered_scheme(const hs_seis_config *c)
{
    return c->model == HS_SEIS_ELASTIC || c->density == HS_SEIS_DENSITY_VARIABLE;
}

static int setup_time_step(hs_seis *s, const hs_params *p)
{
    const hs_seis_config *c = &s->cfg;
    int stag = staggered_scheme(c);
    double lam = nyquist_symbol(s, stag), sum = 0;
    for (int d = 0; d < c->ndim; d++) sum += lam / (c->h[d] * c->h[d]);
    s->dt_limit = 2.0 / sqrt(s->speed2_max * sum);
    if (c->dt_user > s->dt_limit)
        return hs_params_error(p, "seismic.dt", "%g s is unstable: the CFL limit of this grid, model and order-%d scheme is %.6g s "
                                                "(use dt = 0 for cfl times the limit)",
                               c->dt_user, c->order, s->dt_limit);
    s->dt = c->dt_user > 0 ? c->dt_user : c->cfl * s->dt_limit;
    if (c->dt_user == 0) {
        /* SEG-Y stores the sample interval in whole microseconds: round the step down so that a
         * sample interval is one (always, so that the outputs asked for do not change the run) */
        double us = floor(s->dt * (double)c->record_every * 1e6);
        if (us >= 1) s->dt = us * 1e-6 / (double)c->record_every;
    }
    /* a step count past 2^53 neither fits the clock's doubles nor ends (t_end = 1e17 overflowed the
     * count to a negative one: 0 steps, no seismograms, exit 0) */
    const double steps = ceil(c->t_end / s->dt * (1 - 1e-12));
    if (!(steps < 9007199254740992.0) || hs_step_below_time_resolution(s->dt, c->t_end)) {
        /* a time step the CFL limit made that short comes of a speed no medium has (vp = 1e300 was
         * blamed on t_end = 0.3 s): name the model's key, unless the end time is beyond any
         * record (a million seconds) or dt was given */
        if (c->dt_user == 0 && c->t_end <= 1e6) {
            const char *vkey = c->medium == HS_SEIS_MEDIUM_CONSTANT ? (c->anomaly ? "seismic.anomaly_dvp" : "seismic.vp")
                               : c->medium == HS_SEIS_MEDIUM_LAYERED ? "seismic.layer_vp"
                                                                     : "seismic.model_file";
            if (c->medium == HS_SEIS_MEDIUM_CONSTANT && c->anomaly && !hs_params_is_set(p, "seismic.anomaly_dvp")) vkey = "seismic.vp";
            return hs_params_error(p, vkey, "the model's fastest wave (%.3g m/s) allows a step of %.3g s on this grid: %.3g steps to "
                                            "t_end = %g s, more than a run can count or end",
                                   s->vmax, s->dt, steps, c->t_end);
        }
        return hs_params_error(p, "seismic.t_end", "%g s takes %.3g steps of %.6g s: more than a run can count or end", c->t_end, steps,
                               s->dt);
    }
    s->nsteps = (int64_t)steps;
    s->nsamples = s->nsteps / c->record_every + 1;
    if (c->segy && strcmp(c->seismograms, "none") != 0) {
        /* the key the user can act on: record_every when it was given, else dt (or, automatic, t_end) */
        const double interval = s->dt * (double)c->record_every;
        const char *ikey = hs_params_is_set(p, "seismic.record_every") ? "seismic.record_every" : "seismic.dt";
        if (interval * 1e6 > 65535.5)
            return hs_params_error(p, ikey, "the sample interval dt x record_every = %g s is above SEG-Y's 65535 microseconds "
                                            "(lower it, or seismic.segy = false)", interval);
        if (hs_segy_interval_us(interval) < 0)
            return hs_params_error(p, ikey, "the sample interval dt x record_every = %g s is not a whole number of "
                                            "microseconds in 1..65535, which SEG-Y needs (choose dt, or seismic.segy = false)",
                                   interval);
        if (s->nsamples > 65535) {
            const char *nkey = hs_params_is_set(p, "seismic.record_every") ? "seismic.record_every" : "seismic.t_end";
            return hs_params_error(p, nkey, "%lld samples per trace; SEG-Y holds at most 65535 (raise record_every, shorten t_end, "
                                            "or seismic.segy = false)",
                                   (long long)s->nsamples);
        }
    }
    return HS_OK;
}

static int check_wavelength(hs_seis *s, const hs_params *p)
{
    const hs_seis_config *c = &s->cfg;
    double hmax = 0;
    for (int d = 0; d < c->ndim; d++) hmax = fmax(hmax, c->h[d]);
    double fmax = hs_wavelet_fmax(&c->wavelet), ppw = s->vmin / (fmax * hmax), need = ppw_needed(s, staggered_scheme(c));
    s->ppw = ppw;
    const char *wave = c->model == HS_SEIS_ELASTIC && !s->vmin_is_fluid ? "S" : s->vmin_is_fluid ? "P (where vs = 0)" : "P";
    if (ppw < 2)
        return hs_params_error(p, "seismic.f0",
                               "%.3g points per minimum wavelength (%s speed %g m/s, highest frequency %.4g Hz, spacing %g m): "
                               "the grid cannot carry the wavelet (at least 2, and %.3g for the order-%d scheme)",
                               ppw, wave, s->vmin, fmax, hmax, need, c->order);
    if (ppw < need && s->ctx->rank == 0)
        fprintf(stderr,
                "hpcsim: warning: seismic: %.3g points per minimum wavelength (%s speed %g m/s, highest frequency %.4g Hz, "
                "spacing %g m); the order-%d scheme needs %.3g for 0.5%% phase accuracy\n",
                ppw, wave, s->vmin, fmax, hmax, c->order, need);
    return HS_OK;
}

/* The position of shot k: source_position + k shot_step. */
void hs_seis_shot_position(const hs_seis_config *c, int k, double x[3])
{
    for (int d = 0; d < 3; d++) x[d] = d < c->ndim ? c->source0[d] + (double)k * c->shot_step[d] : 0.0;
}

static int check_source(const hs_seis *s, const hs_params *p)
{
    const hs_seis_config *c = &s->cfg;
    static const char *const n2[2] = {"x", "z"}, *const n3[3] = {"x", "y", "z"};
    for (int k = 0; k < c->shots; k++) {
        double pos[3];
        hs_seis_shot_position(c, k, pos);
        const char *key = k == 0 ? "seismic.source_position" : "seismic.shot_step";
        char who[48];
        if (c->shots > 1) snprintf(who, sizeof who, "shot %d's source", k + 1);
        else snprintf(who, sizeof who, "the source");
        for (int d = 0; d < c->ndim; d++) {
            const char *nm = c->ndim == 2 ? n2[d] : n3[d];
            double ext = (double)(c->n[d] - 1) * c->h[d], x = pos[d], tol = 1e-9 * ext;
            if (!(x >= -tol && x <= ext + tol))
                return hs_params_error(p, key, "%s %s = %g m lies outside the model [0, %g] m", who, nm, x, ext);
            /* p = 0 on an acoustic free surface: a pressure source there radiates nothing (the traces
             * were all zero, exit 0), as a zero force or moment would */
            if (d == c->ndim - 1 && c->free_surface && c->model == HS_SEIS_ACOUSTIC && fabs(x) <= tol)
                return hs_params_error(p, key, "%s %s = %g m lies on the free surface, where the acoustic model holds p = 0: "
                                               "it would radiate nothing (put it below the surface)",
                                       who, nm, x);
            double lo = (d == c->ndim - 1 && c->free_surface) ? 0 : c->pml * c->h[d], hi = ext - c->pml * c->h[d];
            if (c->pml > 0 && (x < lo - tol || x > hi + tol))
                return hs_params_error(p, key,
                                       "%s %s = %g m lies in the CPML layer (the %d points, %g m, next to each face "
                                       "absorb): put it in [%g, %g] m",
                                       who, nm, x, c->pml, c->pml * c->h[d], lo, hi);
        }
    }
    return HS_OK;
}

/* Receivers inside the absorbing layer record damped waves (a receiver 65 m into a 120 m layer
 * recorded 0.62 of the true peak): allowed, for surveys that reach the edge, but said once with the
 * count and the first one; so is a wavelet that starts after the end. */
static void warn_receivers_and_source(const hs_seis *s)
{
    const hs_seis_config *c = &s->cfg;
    if (s->ctx->rank != 0) return;
    /* hydrophones on an acoustic free surface record p = 0 there: zero traces, said with the count */
    if (c->free_surface && c->model == HS_SEIS_ACOUSTIC) {
        const int z = c->ndim - 1;
        const double tol = 1e-9 * (double)(c->n[z] - 1) * c->h[z];
        int64_t on = 0, first = -1;
        for (int64_t q = 0; q < s->rec.n; q++)
            if (fabs(s->rec.x[z][q]) <= tol) on++, first = first < 0 ? q : first;
        if (on)
            fprintf(stderr, "hpcsim: warning: seismic: %lld of %lld receivers lie on the free surface (z = 0), the first %s: the "
                            "acoustic model holds p = 0 there, so their traces are zero\n",
                    (long long)on, (long long)s->rec.n, s->rec.names[first]);
    }
    if (c->pml <= 0) return;
    int64_t inside = 0, first = -1;
    for (int64_t q = 0; q < s->rec.n; q++) {
        int in = 0;
        for (int d = 0; d < c->ndim && !in; d++) {
            const double ext = (double)(c->n[d] - 1) * c->h[d], x = s->rec.x[d][q], tol = 1e-9 * ext;
            const double lo = (d == c->ndim - 1 && c->free_surface) ? 0 : c->pml * c->h[d], hi = ext - c->pml * c->h[d];
            in = x < lo - tol || x > hi + tol;
        }
        if (in && first < 0) first = q;
        inside += in;
    }
    if (inside)
        fprintf(stderr, "hpcsim: warning: seismic: %lld of %lld receivers lie in the CPML layer (the %d points next to each absorbing "
                        "face), the first %s: they record damped waves\n",
                (long long)inside, (long long)s->rec.n, c->pml, s->rec.names[first]);
    /* a wavelet that starts after the end radiates nothing the run records (a smoke test may mean it) */
    if (c->t_end > 0 && c->wavelet.delay - 1.0 / c->wavelet.f0 >= c->t_end)
        fprintf(stderr, "hpcsim: warning: seismic: the source wavelet (delay %g s, f0 %g Hz) starts after t_end = %g s: the traces "
                        "will be zero\n",
                c->wavelet.delay, c->wavelet.f0, c->t_end);
}

/* Device and host memory the run needs at its peak (hs_seis_memory, item by item), against what is
 * available; every rank learns the worst. */
static int check_memory(hs_seis *s, const hs_params *p)
{
    double device, host;
    hs_seis_memory(s, p, &device, &host);
    return hs_driver_check_memory(s->ctx, p, "seismic.n", "the run", "use more ranks or a smaller grid", device, host);
}

/* The seismogram file's extension for output.format `fmt`: NetCDF where asked or, for auto and none
 * (snapshots off), where the build has it; HDF5 otherwise. */
static const char *seismogram_ext(int fmt)
{
    if (fmt == HS_OUTPUT_AUTO || fmt == HS_OUTPUT_NONE) fmt = HS_HAVE_NETCDF ? HS_OUTPUT_NETCDF : HS_OUTPUT_HDF5;
    return fmt == HS_OUTPUT_NETCDF ? ".nc" : ".h5";
}

void hs_seis_shot_stem(const hs_seis_config *c, const char *name, size_t stem, int k, char *out, size_t len)
{
    if (c->shots > 1) snprintf(out, len, "%.*s_shot%d", (int)stem, name, k + 1);
    else snprintf(out, len, "%.*s", (int)stem, name);
}

/* The seismogram files' name without extension for shot k (from 0). */
static void seismogram_base(const hs_seis_config *c, int k, char *base, size_t len)
{
    hs_seis_shot_stem(c, c->seismograms, strlen(c->seismograms), k, base, len);
}

static int check_outputs(const hs_seis *s, const hs_params *p)
{
    const hs_seis_config *c = &s->cfg;
    if (!strcmp(c->seismograms, "none")) return HS_OK;
    /* every shot's file: one that is a directory (or the parameter file) would stop the run after
     * the shots before it had been written */
    for (int k = 0; k < c->shots; k++) {
        char base[8192], path[8300];
        seismogram_base(c, k, base, sizeof base);
        snprintf(path, sizeof path, "%s%s", base, seismogram_ext(hs_params_enum(p, "output.format")));
        /* output.overwrite = false keeps every existing file a run would write (the seismograms were
         * replaced), the SEG-Y ones too */
        const int keep = !hs_params_bool(p, "output.overwrite") && !strcmp(hs_params_string(p, "run.restart"), "none");
        HS_CHECK(hs_driver_check_output_file(p, "seismic.seismograms", path, "seismogram file", 1));
        if (keep && access(path, F_OK) == 0)
            return hs_params_error(p, "seismic.seismograms", "%s exists and output.overwrite = false", path);
        /* the SEG-Y files write_segy names, BASE.sgy (pressure), else BASE_vx.sgy ([_vy], _vz), are
         * outputs like the station file: an input file of that name (a receiver file rec.sgy under
         * seismograms = rec) was replaced, and a folder there failed the run after its last step */
        static const char *const sfx2[2] = {"_vx", "_vz"}, *const sfx3[3] = {"_vx", "_vy", "_vz"};
        const int elastic = c->model == HS_SEIS_ELASTIC, nsfx = elastic ? c->ndim : 1;
        for (int comp = 0; c->segy && comp < nsfx; comp++) {
            snprintf(path, sizeof path, "%s%s.sgy", base, !elastic ? "" : c->ndim == 2 ? sfx2[comp] : sfx3[comp]);
            HS_CHECK(hs_driver_check_output_file(p, "seismic.seismograms", path, "SEG-Y file", 1));
            if (keep && access(path, F_OK) == 0)
                return hs_params_error(p, "seismic.seismograms", "%s exists and output.overwrite = false", path);
        }
    }
    const char *out = hs_params_string(p, "output.path");
    if (!strcmp(out, c->seismograms) && hs_params_enum(p, "output.format") != HS_OUTPUT_NONE)
        return hs_params_error(p, "seismic.seismograms", "'%s' is also output.path: the snapshots and the seismograms need "
                                                         "files of their own",
                               c->seismograms);
    return HS_OK;
}

/* Shot groups: the rank count and the shots split evenly, no gridded output (the groups' wavefields
 * belong to different shots); this rank's group becomes the state's context. */
static int split_shot_groups(hs_seis *s, const hs_params *p)
{
    const hs_seis_config *c = &s->cfg;
    const int G = c->shot_groups, size = s->ctx->size;
    if (G == 1) return HS_OK;
    if (size % G)
        return hs_params_error(p, "seismic.shot_groups", "%d groups for %d rank%s: the rank count must be a multiple of the "
                               "group count", G, size, size == 1 ? "" : "s");
    if (c->shots % G)
        return hs_params_error(p, "seismic.shot_groups", "%d groups for %d shot%s: seismic.shot_count must be a multiple of the "
                               "group count (every group runs as many shots)", G, c->shots, c->shots == 1 ? "" : "s");
    if (c->mode != HS_SEIS_FORWARD)
        return hs_params_error(p, "seismic.shot_groups", "%d groups: shot groups are for seismic.mode = forward (the gradient and "
                               "fwi modes run their shots one after another on every rank)", G);
    if (hs_params_enum(p, "output.format") != HS_OUTPUT_NONE)
        return hs_params_error(p, "seismic.shot_groups", "%d groups write seismograms only: wavefield snapshots need one group "
                               "(set output.format = none)", G);
    s->group = s->ctx->rank / (size / G);
    HS_CHECK(hs_ctx_create_group(s->ctx, s->group, &s->group_ctx));
    s->ctx = s->group_ctx;
    return HS_OK;
}

int hs_seis_validate(hs_seis *s, const hs_params *p)
{
    HS_CHECK(hs_seis_config_read(p, &s->cfg));
    HS_CHECK(split_shot_groups(s, p));
    hs_seis_config *c = &s->cfg;
    s->radius = c->order / 2;
    coefficients(s->radius, s->coef2, s->coef1, s->coefs);
    s->dtype = c->precision == HS_SEIS_F32 ? HS_F32 : HS_F64;
    /* every field shares one layout; its halo is the widest reach of the steps */
    s->hw = staggered_scheme(c) && c->model == HS_SEIS_ACOUSTIC ? 2 * s->radius - 1 : s->radius;
    if (s->hw < 1) s->hw = 1;
    int rc = hs_decomp_create(s->ctx, c->ndim, c->n, NULL, c->procs, s->hw, &s->d);
    if (rc == HS_ERR_INPUT) return hs_params_error_rekey(p, hs_params_is_set(p, "seismic.procs") ? "seismic.procs" : "seismic.n");
    HS_CHECK(rc);
    /* a grid far beyond memory is refused before model_extents visits its points (1e12 of them took
     * hours, the memory check after it); below 1e8 points that pass takes under a second, and the
     * whole run's figure comes after it.  The global count, which every rank agrees on: the check
     * is collective */
    if ((double)c->n[0] * (double)c->n[1] * (double)c->n[2] > 1e8) {
        double device, host;
        hs_seis_memory_fields(s, &device, &host);
        HS_CHECK(hs_driver_check_memory(s->ctx, p, "seismic.n", "the run (its wavefields alone)", "use more ranks or a smaller grid",
                                        device, host));
    }
    HS_CHECK(hs_seis_receivers_make(p, c, &s->rec));
    HS_CHECK(check_source(s, p));
    warn_receivers_and_source(s);
    HS_CHECK(read_model_file(s, p));
    HS_CHECK(model_extents(s, p));
    HS_CHECK(setup_time_step(s, p));
    HS_CHECK(check_wavelength(s, p));
    HS_CHECK(check_outputs(s, p));
    if (c->mode != HS_SEIS_FORWARD) HS_CHECK(hs_seis_adjoint_check(s, p));
    return check_memory(s, p);
}

/* ---------------------------------------------------------------- building the state */

int hs_seis_new_field(hs_seis *s, int role)
{
    HS_CHECK(hs_field_create(s->d, s->dtype, s->hw, &s->f[role]));
    if (!s->lay) s->lay = s->f[role];
    return HS_OK;
}

/* Upload host values of every point of the allocation (ghosts included, x fastest over the
 * allocation with its row padding) into a field. */
int hs_seis_upload_alloc(hs_seis *s, hs_field *f, const double *vals)
{
    size_t n = f->count, es = hs_dtype_size(s->dtype);
    void *buf = malloc(n * es);
    if (!buf) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    for (size_t i = 0; i < n; i++) {
        if (s->dtype == HS_F32) ((float *)buf)[i] = (float)vals[i];
        else ((double *)buf)[i] = vals[i];
    }
    int rc = hs_mem_copy(s->ctx, f->data, buf, n * es, HS_COPY_H2D);
    free(buf);
    return rc;
}

/* Evaluate fn at every point of the allocation (global indices, unclamped) into vals. */
void hs_seis_fill_alloc(const hs_seis *s, double *vals, double (*fn)(const hs_seis *, const int64_t g[3], void *), void *user)
{
    const hs_field *f = s->lay;
    for (size_t i = 0; i < f->count; i++) vals[i] = 0;
    for (int64_t k = -f->hw[2]; k < f->local[2] + f->hw[2]; k++)
        for (int64_t j = -f->hw[1]; j < f->local[1] + f->hw[1]; j++)
            for (int64_t i = -f->hw[0]; i < f->local[0] + f->hw[0]; i++) {
                int64_t g[3] = {i + f->offset[0], j + f->offset[1], k + f->offset[2]};
                vals[hs_field_index(f, i, j, k)] = fn(s, g, user);
            }
}

static double w_at(const hs_seis *s, const int64_t g[3], void *user)
{
    (void)user;
    double vp, vs, rho;
    hs_seis_model_at(s, g[0], g[1], g[2], &vp, &vs, &rho);
    double w = vp * vp * s->dt * s->dt;
    return s->cfg.density == HS_SEIS_DENSITY_VARIABLE ? rho * w : w;
}

/* Buoyancy at the half point g + 1/2 along dimension *(int *)user: the mean of the two points' 1/rho. */
static double b_half_at(const hs_seis *s, const int64_t g[3], void *user)
{
    int d = *(int *)user;
    double vp, vs, r0, r1;
    int64_t q[3] = {g[0], g[1], g[2]};
    hs_seis_model_at(s, q[0], q[1], q[2], &vp, &vs, &r0);
    q[d]++;
    hs_seis_model_at(s, q[0], q[1], q[2], &vp, &vs, &r1);
    return 0.5 * (1 / r0 + 1 / r1);
}

static int build_acoustic(hs_seis *s)
{
    const hs_seis_config *c = &s->cfg;
    HS_CHECK(hs_seis_new_field(s, HS_SEIS_F_P));
    HS_CHECK(hs_seis_new_field(s, HS_SEIS_F_Q));
    HS_CHECK(hs_seis_new_field(s, HS_SEIS_F_W));
    if (c->pml > 0)
        for (int d = 0; d < c->ndim; d++) {
            HS_CHECK(hs_seis_new_field(s, HS_SEIS_F_PSI + d));
            HS_CHECK(hs_seis_new_field(s, HS_SEIS_F_ZETA + d));
        }
    double *vals = malloc(s->lay->count * sizeof(double));
    if (!vals) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    hs_seis_fill_alloc(s, vals, w_at, NULL);
    int rc = hs_seis_upload_alloc(s, s->f[HS_SEIS_F_W], vals);
    if (c->density == HS_SEIS_DENSITY_VARIABLE)
        for (int d = 0; rc == HS_OK && d < c->ndim; d++) {
            rc = hs_seis_new_field(s, HS_SEIS_F_B + d);
            if (rc != HS_OK) break;
            hs_seis_fill_alloc(s, vals, b_half_at, &d);
            rc = hs_seis_upload_alloc(s, s->f[HS_SEIS_F_B + d], vals);
        }
    free(vals);
    HS_CHECK(rc);
    /* the CPML memory reaches R + 1 points (half points one more on the high side) */
    hs_seis_boxes(s, s->hw, hs_seis_pml_margin(s));
    if (s->march) HS_CHECK(hs_seis_new_field(s, HS_SEIS_F_C));
    s->comp[0] = (hs_seis_component){"p", "Pa", "pressure", NULL, HS_SEIS_F_P, {0, 0, 0}};
    s->ncomp = 1;
    return HS_OK;
}

/* The source point sets: the acoustic explosive source injects into Q times W (after the update). */
static int build_sources_acoustic(hs_seis *s)
{
    const hs_seis_config *c = &s->cfg;
    int64_t gidx[4096][3];
    double w[4096], shift[3] = {0, 0, 0};
    int n = hs_seis_stencil(c, c->source, shift, -1, 0, gidx, w);
    double dv = 1;
    for (int d = 0; d < c->ndim; d++) dv *= c->h[d];
    for (int q = 0; q < n; q++) {
        w[q] /= dv;
        if (c->density == HS_SEIS_DENSITY_VARIABLE) { /* p_tt = rho c^2 (div(grad p / rho) + s delta / rho) */
            double vp, vs, rho;
            hs_seis_model_at(s, gidx[q][0], gidx[q][1], gidx[q][2], &vp, &vs, &rho);
            w[q] /= rho;
        }
    }
    int64_t first[2] = {0, n};
    HS_CHECK(hs_seis_points_build(s, 1, first, gidx, w, 0, 0, &s->src[0]));
    s->nsrc = 1;
    s->src_role[0] = HS_SEIS_F_Q;
    s->src_scale[0] = 1;
    return HS_OK;
}

static int build_receivers(hs_seis *s)
{
    const hs_seis_config *c = &s->cfg;
    int64_t nrec = s->rec.n, cap = nrec * hs_seis_stencil_max(c);
    int64_t(*gidx)[3] = malloc((size_t)cap * sizeof *gidx), *first = malloc((size_t)(nrec + 1) * sizeof *first);
    double *w = malloc((size_t)cap * sizeof *w);
    if (!gidx || !first || !w) {
        free(gidx), free(first), free(w);
        return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    }
    int rc = HS_OK;
    s->nrec_cols = 0;
    for (int comp = 0; comp < s->ncomp && rc == HS_OK; comp++) {
        const hs_seis_component *cp = &s->comp[comp];
        /* pressure vanishes on the free surface and is odd about it; velocities are even */
        double image = cp->role == HS_SEIS_F_P ? -1 : 1, surface = cp->role == HS_SEIS_F_P ? 0 : 1;
        first[0] = 0;
        for (int64_t r = 0; r < nrec; r++) {
            double x[3] = {0, 0, 0};
            for (int d = 0; d < c->ndim; d++) x[d] = s->rec.x[d][r];
            first[r + 1] = first[r] + hs_seis_stencil(c, x, cp->shift, image, surface, gidx + first[r], w + first[r]);
        }
        rc = hs_seis_points_build(s, nrec, first, gidx, w, 1, comp * nrec, &s->rpts[comp]);
        s->nrec_cols += s->rpts[comp].ngrp;
    }
    free(gidx), free(first), free(w);
    HS_CHECK(rc);
    size_t bytes = (size_t)(s->nsamples * s->nrec_cols) * sizeof(double);
    if (bytes) {
        HS_CHECK(hs_mem_alloc(s->ctx, bytes, (void **)&s->trace));
        HS_CHECK(hs_mem_zero(s->ctx, s->trace, bytes));
    }
    return HS_OK;
}

/* Sample every component into the trace buffer at sample index `sample` (trace = keep trace + scale
 * samples). */
int hs_seis_record_mix(hs_seis *s, int64_t sample, double keep, double scale)
{
    if (sample >= s->nsamples) return HS_OK;
    int64_t col = 0;
    for (int comp = 0; comp < s->ncomp; comp++) {
        HS_CHECK(hs_seis_sample(s, &s->rpts[comp], s->f[s->comp[comp].role], s->trace + sample * s->nrec_cols + col, keep, scale));
        col += s->rpts[comp].ngrp;
    }
    s->samples_taken = sample + 1;
    return HS_OK;
}

int hs_seis_record(hs_seis *s, int64_t sample) { return hs_seis_record_mix(s, sample, 0, 1); }

/* The vp of the points this rank owns (x fastest), for the snapshots and the adjoint. */
static int build_vp_host(hs_seis *s)
{
    const hs_decomp *d = s->d;
    size_t n = (size_t)(d->local[0] * d->local[1] * d->local[2]);
    s->vp_host = malloc((n ? n : 1) * sizeof(double));
    s->vs_host = s->cfg.model == HS_SEIS_ELASTIC ? malloc((n ? n : 1) * sizeof(double)) : NULL;
    if (!s->vp_host || (s->cfg.model == HS_SEIS_ELASTIC && !s->vs_host)) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    for (int64_t k = 0; k < d->local[2]; k++)
        for (int64_t j = 0; j < d->local[1]; j++)
            for (int64_t i = 0; i < d->local[0]; i++) {
                double vp, vs, rho;
                hs_seis_model_at(s, i + d->offset[0], j + d->offset[1], k + d->offset[2], &vp, &vs, &rho);
                size_t q = (size_t)((k * d->local[1] + j) * d->local[0] + i);
                s->vp_host[q] = vp;
                if (s->vs_host) s->vs_host[q] = vs;
            }
    return HS_OK;
}

static void destroy(void *state);

static int check(hs_ctx *ctx, const hs_params *p)
{
    hs_seis *s = calloc(1, sizeof *s);
    if (!s) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    s->ctx = ctx;
    int rc = hs_seis_validate(s, p);
    destroy(s);
    return rc;
}

static int declare(void) { return hs_seis_declare(); }

/* The history line of the seismogram file: how to repeat the run. */
static char *history_of(const hs_params *p)
{
    char *over = hs_params_overrides_text(p, NULL);
    const char *file = hs_params_file(p);
    size_t n = strlen(file) + (over ? strlen(over) : 0) + 32;
    char *h = malloc(n);
    if (h) snprintf(h, n, "hpcsim run %s%s%s", file, over && *over ? " " : "", over ? over : "");
    free(over);
    return h;
}

static int build_sources(hs_seis *s)
{
    return s->cfg.model == HS_SEIS_ACOUSTIC ? build_sources_acoustic(s) : hs_seis_elastic_sources(s);
}

int hs_seis_move_source(hs_seis *s, int k)
{
    if (k == s->shot && s->nsrc > 0) return HS_OK;
    for (int i = 0; i < s->nsrc; i++) hs_seis_points_free(s, &s->src[i]);
    s->nsrc = 0;
    s->shot = k;
    hs_seis_shot_position(&s->cfg, k, s->cfg.source);
    return build_sources(s);
}

/* Sample 0, the quiet start (the traces are zero).  The acoustic model samples its pressure; the
 * elastic velocities live at half steps and each sample is mixed from the two around it, so at
 * t = 0, the medium at rest, sample 0 is the zeros already there (it was left unsampled: a run with
 * t_end = 0 wrote no seismograms and left a previous run's under its names). */
static int record_start(hs_seis *s)
{
    if (s->cfg.model == HS_SEIS_ACOUSTIC) return hs_seis_record(s, 0);
    s->samples_taken = 1;
    return HS_OK;
}

/* The quiet start of shot k: the source moved to its position, every field that carries the state,
 * the traces and the clock back to zero. */
static int start_shot(hs_seis *s, int k)
{
    HS_CHECK(hs_seis_move_source(s, k));
    int roles[HS_SEIS_NF], n = hs_seis_state_roles(s, roles);
    for (int i = 0; i < n; i++) HS_CHECK(hs_field_fill(s->f[roles[i]], 0.0));
    int64_t nt = s->nsamples * s->nrec_cols;
    if (nt) HS_CHECK(hs_mem_zero(s->ctx, s->trace, (size_t)nt * sizeof(double)));
    s->step = 0, s->time = 0, s->samples_taken = 0;
    return record_start(s);
}

static int create(hs_ctx *ctx, const hs_params *p, void **state)
{
    hs_seis *s = calloc(1, sizeof *s);
    if (!s) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    *state = s;
    s->ctx = ctx;
    HS_CHECK(hs_seis_validate(s, p));
    const hs_seis_config *c = &s->cfg;
    s->params_ini = hs_params_to_ini(p);
    s->history = history_of(p);
    s->time_units = hs_params_string(p, "output.time_units");
    s->seis_format = hs_params_enum(p, "output.format");
    if (c->model == HS_SEIS_ACOUSTIC) HS_CHECK(build_acoustic(s));
    else HS_CHECK(hs_seis_elastic_build(s));
    HS_CHECK(hs_seis_profiles(s));
    HS_CHECK(hs_seis_move_source(s, s->group)); /* the group's first shot (0 without groups) */
    HS_CHECK(build_receivers(s));
    HS_CHECK(build_vp_host(s));
    size_t n = (size_t)(s->d->local[0] * s->d->local[1] * s->d->local[2]);
    s->host = malloc((n ? n : 1) * sizeof(double));
    s->out_host = malloc((n ? n : 1) * sizeof(double));
    if (!s->host || !s->out_host) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    free(s->file_vp), free(s->file_vs), free(s->file_rho);
    s->file_vp = s->file_vs = s->file_rho = NULL;
    if (c->mode != HS_SEIS_FORWARD) return hs_seis_adjoint_create(s, p);
    return record_start(s);
}

/* ---------------------------------------------------------------- time stepping (acoustic) */

static int exchange_psi(hs_seis *s)
{
    for (int d = 0; d < s->cfg.ndim; d++)
        if (s->psi_exchange[d]) HS_CHECK(hs_halo_exchange(s->f[HS_SEIS_F_PSI + d]));
    return HS_OK;
}

/* One step of the forward acoustic wave equation: Q <- p^{n+1}, then P and Q swap. */
int hs_seis_acoustic_step(hs_seis *s)
{
    const hs_seis_config *c = &s->cfg;
    int var = c->density == HS_SEIS_DENSITY_VARIABLE;
    hs_seis_launch L;
    hs_seis_launch_init(s, HS_SEIS_AC_STEP, NULL, &L);
    hs_seis_op step = var ? HS_SEIS_AV_STEP : HS_SEIS_AC_STEP;
    if (s->exchange) HS_CHECK(hs_halo_exchange_begin(s->f[HS_SEIS_F_P]));
    if (s->march) {
        /* each dimension's CPML terms along its columns into C: the columns stay clear of the rank
         * boundaries (no PSI is exchanged), so they run while the halo messages travel */
        L.f[HS_SEIS_F_C] = s->f[HS_SEIS_F_C]->data;
        for (int d = 0; d < c->ndim; d++) {
            L.dim = d;
            HS_CHECK(hs_seis_run_boxes(s, &L, HS_SEIS_AC_MARCH, s->march_box[d], s->nmarch[d]));
        }
        L.f[HS_SEIS_F_C] = NULL;
    }
    /* the inside of the core needs no halo: update it while the messages travel */
    HS_CHECK(hs_seis_run_boxes(s, &L, step, s->core_inner, s->ncore_inner));
    if (s->exchange) HS_CHECK(hs_halo_exchange_end(s->f[HS_SEIS_F_P]));
    HS_CHECK(hs_seis_run_boxes(s, &L, step, s->core_shell, s->ncore_shell));
    if (s->march) { /* the layers' step with C: the CPML slabs are exactly the points the ranges hold */
        L.f[HS_SEIS_F_C] = s->f[HS_SEIS_F_C]->data;
        HS_CHECK(hs_seis_run_boxes(s, &L, step, s->pml_box, s->npml_box));
    } else if (c->pml > 0) {
        HS_CHECK(hs_seis_run_boxes(s, &L, var ? HS_SEIS_AV_PSI : HS_SEIS_AC_PSI, s->pml_box, s->npml_box));
        HS_CHECK(exchange_psi(s));
        HS_CHECK(hs_seis_run_boxes(s, &L, var ? HS_SEIS_AV_PML : HS_SEIS_AC_PML, s->pml_box, s->npml_box));
    }
    /* the source term w s(t_n) delta of step n */
    double t = (double)s->step * s->dt;
    double sv = s->src_series ? (s->step < s->nsteps ? s->src_series[s->step] : 0) : hs_wavelet_value(&c->wavelet, t);
    HS_CHECK(hs_seis_inject(s, &s->src[0], s->f[HS_SEIS_F_Q], s->f[HS_SEIS_F_W], sv, NULL));
    if (c->free_surface) HS_CHECK(hs_seis_mirror(s, s->f[HS_SEIS_F_Q]));
    hs_field *tmp = s->f[HS_SEIS_F_P];
    s->f[HS_SEIS_F_P] = s->f[HS_SEIS_F_Q];
    s->f[HS_SEIS_F_Q] = tmp;
    return HS_OK;
}

int hs_seis_mirror(hs_seis *s, hs_field *f)
{
    const hs_seis_config *c = &s->cfg;
    int z = c->ndim - 1;
    if (f->offset[z] != 0) return HS_OK; /* only the ranks on the surface */
    hs_box top = hs_field_interior_box(f);
    top.hi[z] = 1;
    hs_seis_launch L;
    hs_seis_launch_init(s, HS_SEIS_MIRROR, &top, &L);
    L.f[HS_SEIS_F_X] = f->data;
    return hs_seis_launch_run(s, &L);
}

/* One forward step of the configured model, and its samples. */
int hs_seis_forward_step(hs_seis *s)
{
    int acoustic = s->cfg.model == HS_SEIS_ACOUSTIC;
    if (acoustic) HS_CHECK(hs_seis_acoustic_step(s));
    else HS_CHECK(hs_seis_elastic_step(s));
    s->step++;
    s->time = (double)s->step * s->dt;
    if (acoustic && s->step % s->cfg.record_every == 0) HS_CHECK(hs_seis_record(s, s->step / s->cfg.record_every));
    return HS_OK;
}

static int finish_shot(hs_seis *s);

/* The time of step n of the run's one time axis (the shots of a group one after another) and of the
 * seismograms: n dt, the product rounded once.  The shot's time plus whole shots' (s dt + j N dt)
 * put step 16 of a second shot of 200 steps of 0.002 s at 0.43200000000000005, not 216 dt = 0.432;
 * sample k as (k dt) record_every put sample 9 of every 5 steps at 0.09000000000000001. */
static double axis_time(const hs_seis *s, int64_t n) { return (double)n * s->dt; }

static int advance(void *state, double until, int64_t max_steps, int64_t *taken)
{
    hs_seis *s = state;
    *taken = 0;
    /* the inversion's iterations are its steps (checkpoints and signals at their boundaries) */
    if (s->cfg.mode == HS_SEIS_FWI) return hs_seis_fwi_advance(s, until, max_steps, taken);
    if (s->cfg.mode == HS_SEIS_GRADIENT) {
        /* the gradient does all its work in one call (the driver sees no time axis) */
        HS_CHECK(hs_seis_adjoint_run(s));
        *taken = 1;
        return HS_OK;
    }
    /* a leapfrog step cannot shrink: step while the time is short of `until`, passing it by less than dt.
     * Several shots run one after another on one time axis: the j-th shot of this rank's group (shot
     * j G + g) covers [j T, (j + 1) T), T a shot's length (t_end rounded up to whole steps). */
    const int G = s->cfg.shot_groups, per_group = s->cfg.shots / G;
    while (*taken < max_steps) {
        const int j = s->shot / G;
        if (s->step == s->nsteps && j + 1 < per_group) {
            if (axis_time(s, (j + 1) * s->nsteps) >= until * (1 - 1e-12)) break; /* the next shot starts after `until` */
            HS_CHECK(finish_shot(s));
            HS_CHECK(start_shot(s, s->shot + G));
        }
        if (!(s->step < s->nsteps && axis_time(s, s->step + (int64_t)(s->shot / G) * s->nsteps) < until * (1 - 1e-12))) break;
        HS_CHECK(hs_seis_forward_step(s));
        (*taken)++;
    }
    return HS_OK;
}

static void progress(void *state, double *time, int64_t *step, double *t_end, double *work)
{
    hs_seis *s = state;
    const hs_seis_config *c = &s->cfg;
    if (c->mode == HS_SEIS_FWI) { /* the time axis counts iterations; an optimiser that stops early ends it there */
        *step = hs_seis_fwi_iterations(s);
        *time = (double)*step;
        *t_end = hs_seis_fwi_finished(s) ? *time : (double)c->fwi_iterations;
        *work = 0;
        return;
    }
    if (c->mode != HS_SEIS_FORWARD) {
        *time = s->adjoint_done ? 1 : 0, *step = s->adjoint_done, *t_end = 0, *work = 0;
        return;
    }
    const int G = c->shot_groups;
    *step = s->step + (int64_t)(s->shot / G) * s->nsteps;
    *time = axis_time(s, *step);
    *t_end = axis_time(s, (int64_t)(c->shots / G) * s->nsteps);
    *work = (double)c->n[0] * (double)c->n[1] * (double)c->n[2];
}

/* ---------------------------------------------------------------- snapshots (the gridded output) */

static int describe_output(void *state, hs_output_desc *desc)
{
    hs_seis *s = state;
    const hs_seis_config *c = &s->cfg;
    static const char *n2[2] = {"x", "z"}, *n3[3] = {"x", "y", "z"};
    static const char *l2[2] = {"x (horizontal)", "z (depth, positive down)"},
                      *l3[3] = {"x (horizontal)", "y (horizontal)", "z (depth, positive down)"};
    int64_t st = c->snapshot_stride;
    desc->title = c->mode == HS_SEIS_FORWARD  ? "hpcsim seismic wavefield snapshots"
                  : c->mode == HS_SEIS_FWI    ? "hpcsim seismic full-waveform inversion"
                                              : "hpcsim seismic adjoint gradient";
    desc->ndim = c->ndim;
    for (int d = 0; d < c->ndim; d++) {
        s->out_n[d] = (c->n[d] - 1) / st + 1;
        if (!s->coords[d]) {
            s->coords[d] = malloc((size_t)s->out_n[d] * sizeof(double));
            s->edges[d] = malloc((size_t)(s->out_n[d] + 1) * sizeof(double));
            if (!s->coords[d] || !s->edges[d]) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
            double dx = (double)st * c->h[d];
            for (int64_t i = 0; i < s->out_n[d]; i++) s->coords[d][i] = (double)i * dx;
            for (int64_t i = 0; i <= s->out_n[d]; i++) s->edges[d][i] = ((double)i - 0.5) * dx;
        }
        desc->dim_names[d] = c->ndim == 2 ? n2[d] : n3[d];
        desc->coord_long_names[d] = c->ndim == 2 ? l2[d] : l3[d];
        desc->n[d] = s->out_n[d];
        desc->coords[d] = s->coords[d];
        desc->edges[d] = s->edges[d];
        desc->coord_units[d] = "m";
    }
    desc->coord_positive[c->ndim - 1] = "down"; /* z is depth */
    if (c->model == HS_SEIS_ELASTIC && c->mode == HS_SEIS_FORWARD) {
        /* v_d at x_d + h/2: a grid of its own per velocity, the main one with x_d's half points (the
         * snapshots labelled every velocity at the points, half a spacing off) */
        static const char *h2[2] = {"x_half", "z_half"}, *h3[3] = {"x_half", "y_half", "z_half"};
        static const char *g2[2] = {"vx_points", "vz_points"}, *g3[3] = {"vx_points", "vy_points", "vz_points"};
        static const char *hl2[2] = {"x of the vx points: half a spacing beyond x", "z of the vz points: half a spacing below z (depth)"},
                          *hl3[3] = {"x of the vx points: half a spacing beyond x", "y of the vy points: half a spacing beyond y",
                                     "z of the vz points: half a spacing below z (depth)"};
        for (int d = 0; d < c->ndim; d++) {
            const double dx = (double)st * c->h[d];
            if (!s->hcoords[d]) {
                s->hcoords[d] = malloc((size_t)s->out_n[d] * sizeof(double));
                s->hedges[d] = malloc((size_t)(s->out_n[d] + 1) * sizeof(double));
                if (!s->hcoords[d] || !s->hedges[d]) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
                for (int64_t i = 0; i < s->out_n[d]; i++) s->hcoords[d][i] = (double)i * dx + 0.5 * c->h[d];
                for (int64_t i = 0; i <= s->out_n[d]; i++) s->hedges[d][i] = ((double)i - 0.5) * dx + 0.5 * c->h[d];
            }
            hs_grid_desc *g = &s->vgrid[d];
            memset(g, 0, sizeof *g);
            g->name = c->ndim == 2 ? g2[d] : g3[d];
            g->stagger[d] = HS_STAGGER_OWN;
            g->dim_names[d] = c->ndim == 2 ? h2[d] : h3[d];
            g->n[d] = s->out_n[d];
            g->coords[d] = s->hcoords[d];
            g->edges[d] = s->hedges[d];
            g->coord_units[d] = "m";
            g->coord_long_names[d] = c->ndim == 2 ? hl2[d] : hl3[d];
            g->coord_positive[d] = d == c->ndim - 1 ? "down" : NULL;
            /* COMODO (xgcm): the right faces of the points' cells; decimated, the half points are not
             * the decimated cells' faces, and no shift is said */
            g->axis_shift[d] = st == 1 ? 0.5 : 0;
        }
        desc->ngrids = c->ndim;
        desc->grids = s->vgrid;
    }
    if (c->mode == HS_SEIS_FWI) { /* records at iterations: a counter, not a time */
        desc->record_name = "iteration";
        desc->record_long_name = "L-BFGS iteration of the inversion";
        desc->time_units = "1";
    }
    return HS_OK;
}

static int define_vars(void *state, hs_writer *w)
{
    hs_seis *s = state;
    s->nvars = 0;
    if (s->cfg.mode != HS_SEIS_FORWARD) return hs_seis_adjoint_define_vars(s, w);
    for (int comp = 0; comp < s->ncomp; comp++) /* the elastic velocities each on its own grid (describe_output) */
        HS_CHECK(hs_writer_def_grid_var(w, s->cfg.model == HS_SEIS_ELASTIC ? s->vgrid[comp].name : NULL, s->comp[comp].name,
                                        s->comp[comp].units, s->comp[comp].long_name, s->comp[comp].standard_name, HS_F32, 1,
                                        &s->var[s->nvars++]));
    HS_CHECK(hs_writer_def_var(w, "vp", "m s-1", "P-wave speed", NULL, HS_F32, 0, &s->var_vp));
    if (s->cfg.model == HS_SEIS_ELASTIC) HS_CHECK(hs_writer_def_var(w, "vs", "m s-1", "S-wave speed", NULL, HS_F32, 0, &s->var_vs));
    return HS_OK;
}

/* Write local values (x fastest over the owned points) decimated by the snapshot stride. */
int hs_seis_put_decimated(hs_seis *s, hs_writer *w, int var, const double *local)
{
    const hs_decomp *d = s->d;
    int64_t st = s->cfg.snapshot_stride, off[3] = {0, 0, 0}, cnt[3] = {1, 1, 1}, first[3] = {0, 0, 0};
    for (int e = 0; e < 3; e++) {
        int64_t lo = d->offset[e], hi = d->offset[e] + d->local[e]; /* global points [lo, hi) */
        int64_t a = (lo + st - 1) / st, b = (hi + st - 1) / st;  /* output indices [a, b) */
        if (e >= s->cfg.ndim) a = 0, b = 1, st = st;
        off[e] = a;
        cnt[e] = b > a ? b - a : 0;
        first[e] = e < s->cfg.ndim ? a * st - lo : 0;
    }
    size_t m = 0;
    for (int64_t k = 0; k < cnt[2]; k++)
        for (int64_t j = 0; j < cnt[1]; j++)
            for (int64_t i = 0; i < cnt[0]; i++) {
                int64_t li = first[0] + i * st, lj = first[1] + j * (s->cfg.ndim > 1 ? st : 1),
                        lk = first[2] + k * (s->cfg.ndim > 2 ? st : 1);
                s->out_host[m++] = local[(lk * d->local[1] + lj) * d->local[0] + li];
            }
    float *f = (float *)s->out_host; /* in place: each float is written at or before its double's position */
    for (size_t q = 0; q < m; q++) f[q] = (float)s->out_host[q];
    return hs_writer_put_block(w, var, off, cnt, f);
}

/* The owned points of a field as doubles in s->host. */
int hs_seis_get_local(hs_seis *s, hs_field *f)
{
    size_t n = (size_t)(s->d->local[0] * s->d->local[1] * s->d->local[2]);
    if (s->dtype == HS_F64) return hs_field_get_interior(f, s->host);
    HS_CHECK(hs_field_get_interior(f, s->host)); /* floats into the front half */
    float *fl = (float *)s->host;
    for (size_t i = n; i-- > 0;) s->host[i] = fl[i];
    return HS_OK;
}

static int write_state(void *state, hs_writer *w)
{
    hs_seis *s = state;
    if (s->cfg.mode != HS_SEIS_FORWARD) return hs_seis_adjoint_write(s, w);
    if (s->cfg.model == HS_SEIS_ELASTIC) {
        /* the velocities at the record's time (the state's are half a step early), at their points */
        const size_t nloc = (size_t)(s->d->local[0] * s->d->local[1] * s->d->local[2]);
        double *v[3] = {NULL, NULL, NULL};
        int rc = HS_OK;
        for (int comp = 0; comp < s->ncomp; comp++)
            if (!(v[comp] = malloc((nloc + 1) * sizeof(double)))) rc = HS_FAIL(HS_ERR_RUNTIME, "out of memory");
        if (rc == HS_OK) rc = hs_seis_elastic_velocities_now(s, v);
        for (int comp = 0; rc == HS_OK && comp < s->ncomp; comp++) rc = hs_seis_put_decimated(s, w, s->var[comp], v[comp]);
        for (int comp = 0; comp < s->ncomp; comp++) free(v[comp]);
        HS_CHECK(rc);
    }
    for (int comp = 0; s->cfg.model == HS_SEIS_ACOUSTIC && comp < s->ncomp; comp++) {
        HS_CHECK(hs_seis_get_local(s, s->f[s->comp[comp].role]));
        HS_CHECK(hs_seis_put_decimated(s, w, s->var[comp], s->host));
    }
    if (!s->static_written) {
        HS_CHECK(hs_seis_put_decimated(s, w, s->var_vp, s->vp_host));
        if (s->vs_host) HS_CHECK(hs_seis_put_decimated(s, w, s->var_vs, s->vs_host));
        s->static_written = 1;
    }
    return HS_OK;
}

/* ---------------------------------------------------------------- seismograms */

int hs_seismic_traces(void *state, int64_t *nsamples, int64_t *nrec, int *ncomp, double *dt_sample, double **data)
{
    hs_seis *s = state;
    int64_t ns = s->samples_taken, cols = s->rec.n * s->ncomp;
    *nsamples = ns, *nrec = s->rec.n, *ncomp = s->ncomp, *dt_sample = s->dt * (double)s->cfg.record_every;
    double *all = calloc((size_t)(ns * cols + 1), sizeof(double)), *loc = malloc((size_t)(ns * s->nrec_cols + 1) * sizeof(double));
    if (!all || !loc) {
        free(all), free(loc);
        return HS_FAIL(HS_ERR_RUNTIME, "out of memory gathering the seismograms");
    }
    int rc = ns * s->nrec_cols > 0 ? hs_mem_copy(s->ctx, loc, s->trace, (size_t)(ns * s->nrec_cols) * sizeof(double), HS_COPY_D2H) : HS_OK;
    if (rc == HS_OK) {
        int64_t col = 0;
        for (int comp = 0; comp < s->ncomp; comp++) {
            const hs_seis_points *pt = &s->rpts[comp];
            for (int64_t g = 0; g < pt->ngrp; g++)
                for (int64_t t = 0; t < ns; t++) all[t * cols + pt->group_of[g]] += loc[t * s->nrec_cols + col + g];
            col += pt->ngrp;
        }
        /* a receiver's stencil may straddle ranks: its value is the sum of their parts */
        if (s->ctx->size > 1) rc = hs_allreduce_sum(s->ctx->comm, all, (int)(ns * cols));
    }
    free(loc);
    if (rc != HS_OK) {
        free(all);
        return rc;
    }
    *data = all;
    return HS_OK;
}

static int write_station_file(hs_seis *s, const double *all, int64_t ns)
{
    const hs_seis_config *c = &s->cfg;
    char path[8300], base[8192];
    seismogram_base(&s->cfg, s->shot, base, sizeof base);
    snprintf(path, sizeof path, "%s%s", base, seismogram_ext(s->seis_format));
    hs_output_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.path = path;
    desc.format = !strcmp(seismogram_ext(s->seis_format), ".nc") ? HS_FORMAT_NETCDF : HS_FORMAT_HDF5;
    desc.title = "hpcsim seismograms";
    desc.history = s->history;
    desc.params_ini = s->params_ini;
    desc.ndim = 0;
    desc.time_units = s->time_units;
    desc.parallel = HS_OUTPUT_PARALLEL_OFF;
    hs_writer *w = NULL;
    HS_CHECK(hs_writer_open(s->ctx, &desc, &w));
    int64_t nrec = s->rec.n, cols = nrec * s->ncomp;
    /* a 2D model is the x-z plane at y = 0 */
    double *y0 = c->ndim == 2 ? calloc((size_t)nrec, sizeof(double)) : NULL;
    hs_station_desc sd = {.dim_name = "receiver", .n = nrec, .names = (const char *const *)s->rec.names, .x = s->rec.x[0],
                          .y = c->ndim == 3 ? s->rec.x[1] : y0, .z = s->rec.x[c->ndim - 1], .units = "m"};
    int rc = c->ndim == 2 && !y0 ? HS_FAIL(HS_ERR_RUNTIME, "out of memory") : hs_writer_def_stations(w, &sd), var[HS_SEIS_MAX_COMP];
    free(y0);
    for (int comp = 0; rc == HS_OK && comp < s->ncomp; comp++)
        rc = hs_writer_def_station_var(w, s->comp[comp].name, s->comp[comp].units, s->comp[comp].long_name,
                                       s->comp[comp].standard_name, HS_F64, &var[comp]);
    if (rc == HS_OK) rc = hs_writer_attr_real(w, "source_x", c->source[0]);
    if (rc == HS_OK && c->ndim == 3) rc = hs_writer_attr_real(w, "source_y", c->source[1]);
    if (rc == HS_OK) rc = hs_writer_attr_real(w, "source_z", c->source[c->ndim - 1]);
    if (rc == HS_OK) rc = hs_writer_attr_real(w, "sample_interval", s->dt * (double)c->record_every);
    if (rc == HS_OK && c->shots > 1) rc = hs_writer_attr_real(w, "shot", (double)(s->shot + 1));
    int64_t *idx = malloc((size_t)(nrec + 1) * sizeof *idx);
    double *row = malloc((size_t)(nrec + 1) * sizeof *row);
    if (!idx || !row) rc = HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    int64_t mine = s->ctx->rank == 0 ? nrec : 0; /* rank 0 holds the reduced traces and gives them all */
    for (int64_t r = 0; rc == HS_OK && r < nrec; r++) idx[r] = r;
    for (int64_t t = 0; rc == HS_OK && t < ns; t++) {
        rc = hs_writer_begin_step(w, axis_time(s, t * c->record_every) / hs_time_unit_seconds(s->time_units));
        for (int comp = 0; rc == HS_OK && comp < s->ncomp; comp++) {
            for (int64_t r = 0; r < nrec; r++) row[r] = all[t * cols + comp * nrec + r];
            rc = hs_writer_put_stations(w, var[comp], mine, idx, row);
        }
    }
    free(idx), free(row);
    if (rc != HS_OK) {
        hs_writer_discard(w);
        return rc;
    }
    return hs_writer_close(w);
}

static int write_segy(hs_seis *s, const double *all, int64_t ns)
{
    const hs_seis_config *c = &s->cfg;
    if (s->ctx->rank != 0) return HS_OK;
    int64_t nrec = s->rec.n, cols = nrec * s->ncomp;
    double *one = malloc((size_t)(ns * nrec + 1) * sizeof *one);
    if (!one) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    int rc = HS_OK;
    char base[8192];
    seismogram_base(&s->cfg, s->shot, base, sizeof base);
    for (int comp = 0; rc == HS_OK && comp < s->ncomp; comp++) {
        char path[8300], line[96];
        if (s->ncomp == 1) snprintf(path, sizeof path, "%s.sgy", base);
        else snprintf(path, sizeof path, "%s_%s.sgy", base, s->comp[comp].name);
        snprintf(line, sizeof line, "COMPONENT %s (%s, %s)", s->comp[comp].name, s->comp[comp].long_name, s->comp[comp].units);
        const char *text[] = {line, c->model == HS_SEIS_ACOUSTIC ? "ACOUSTIC MODEL" : "ELASTIC MODEL", NULL};
        for (int64_t t = 0; t < ns; t++)
            for (int64_t r = 0; r < nrec; r++) one[t * nrec + r] = all[t * cols + comp * nrec + r];
        hs_segy_desc sd = {.path = path, .ntraces = nrec, .nsamples = ns, .dt = s->dt * (double)c->record_every, .shot = s->shot + 1,
                           .rx = s->rec.x[0], .ry = c->ndim == 3 ? s->rec.x[1] : NULL, .rz = s->rec.x[c->ndim - 1], .text = text};
        sd.source[0] = c->source[0];
        sd.source[1] = c->ndim == 3 ? c->source[1] : 0;
        sd.source[2] = c->source[c->ndim - 1];
        rc = hs_segy_write(&sd, one);
    }
    free(one);
    return rc;
}

int hs_seis_write_seismograms(hs_seis *s)
{
    const hs_seis_config *c = &s->cfg;
    if (!strcmp(c->seismograms, "none")) return HS_OK;
    int64_t ns, nrec;
    int ncomp;
    double dts, *all = NULL;
    if (s->samples_taken == 0) return HS_OK; /* nothing recorded (t_end = 0) */
    HS_CHECK(hs_seismic_traces(s, &ns, &nrec, &ncomp, &dts, &all));
    int rc = write_station_file(s, all, ns);
    int ok = rc == HS_OK;
    HS_CHECK(hs_allreduce_int_max(s->ctx->comm, &ok, 1));
    if (rc == HS_OK && c->segy) rc = write_segy(s, all, ns);
    int bad = rc != HS_OK; /* SEG-Y is rank 0's: the others learn its fate */
    HS_CHECK(hs_allreduce_int_max(s->ctx->comm, &bad, 1));
    free(all);
    if (bad && rc == HS_OK) return HS_FAIL(HS_ERR_RUNTIME, "seismic: writing the SEG-Y file failed on rank 0");
    return rc;
}

/* The end of a shot: the wavefield checked, a line of figures, the seismograms written. */
static int finish_shot(hs_seis *s)
{
    const hs_seis_config *c = &s->cfg;
    /* a run that blew up would otherwise end with exit 0 */
    int bad = 0;
    for (int comp = 0; comp < s->ncomp && !bad; comp++) {
        HS_CHECK(hs_seis_get_local(s, s->f[s->comp[comp].role]));
        for (int64_t i = 0; i < s->d->local[0] * s->d->local[1] * s->d->local[2] && !bad; i++) bad = !isfinite(s->host[i]);
    }
    HS_CHECK(hs_allreduce_int_max(s->ctx->comm, &bad, 1));
    if (bad) return HS_FAIL(HS_ERR_RUNTIME, "seismic: the wavefield is not finite at step %lld, t = %.9g", (long long)s->step, s->time);
    if (s->ctx->rank == 0) {
        char shot[96] = "";
        if (c->shots > 1 && c->ndim == 3)
            snprintf(shot, sizeof shot, "shot %d of %d at (%g, %g, %g) m: ", s->shot + 1, c->shots, c->source[0], c->source[1],
                     c->source[2]);
        else if (c->shots > 1)
            snprintf(shot, sizeof shot, "shot %d of %d at (%g, %g) m: ", s->shot + 1, c->shots, c->source[0], c->source[1]);
        printf("seismic: %s%s %dD, order %d, %lld steps of %.6g s (limit %.6g s) to t = %.6g s, %lld receivers, "
               "%.3g points per minimum wavelength\n",
               shot, c->model == HS_SEIS_ACOUSTIC ? "acoustic" : "elastic", c->ndim, c->order, (long long)s->step, s->dt, s->dt_limit,
               s->time, (long long)s->rec.n, s->ppw);
    }
    return hs_seis_write_seismograms(s);
}

static int finish(void *state)
{
    hs_seis *s = state;
    if (s->cfg.mode != HS_SEIS_FORWARD) return hs_seis_adjoint_finish(s);
    return finish_shot(s);
}

/* ---------------------------------------------------------------- checkpoints */

/* The fields that carry the state from one step to the next. */
int hs_seis_state_roles(const hs_seis *s, int *roles)
{
    int n = 0;
    for (int r = 0; r < HS_SEIS_NF; r++) {
        int carry = r == HS_SEIS_F_P || r == HS_SEIS_F_Q || (r >= HS_SEIS_F_PSI && r < HS_SEIS_F_PSI + 6) ||
                    (r >= HS_SEIS_F_V && r < HS_SEIS_F_V + 9) || (r >= HS_SEIS_F_MV && r < HS_SEIS_F_MV + 18);
        if (carry && s->f[r]) roles[n++] = r;
    }
    return n;
}

static int checkpoint(void *state, hs_checkpoint *k)
{
    hs_seis *s = state;
    if (s->cfg.mode == HS_SEIS_FWI) return hs_seis_fwi_checkpoint(s, k);
    if (s->cfg.mode != HS_SEIS_FORWARD) return HS_FAIL(HS_ERR_RUNTIME, "seismic: mode = gradient does not checkpoint");
    int roles[HS_SEIS_NF], n = hs_seis_state_roles(s, roles);
    int64_t count = s->d->local[0] * s->d->local[1] * s->d->local[2];
    for (int i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "field%02d", roles[i]);
        HS_CHECK(hs_field_get_interior(s->f[roles[i]], s->host));
        HS_CHECK(hs_checkpoint_write_state(k, name, s->dtype, count, s->host));
    }
    int64_t nt = s->nsamples * s->nrec_cols;
    double *tr = malloc((size_t)(nt + 1) * sizeof *tr);
    if (!tr) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    int rc = nt ? hs_mem_copy(s->ctx, tr, s->trace, (size_t)nt * sizeof *tr, HS_COPY_D2H) : HS_OK;
    if (rc == HS_OK) rc = hs_checkpoint_write(k, "traces", HS_F64, nt, tr);
    free(tr);
    HS_CHECK(rc);
    double clock[3] = {s->time, (double)s->step, (double)s->samples_taken};
    HS_CHECK(hs_checkpoint_write(k, "clock", HS_F64, 3, clock));
    double shot = (double)s->shot;
    return s->cfg.shots > 1 ? hs_checkpoint_write(k, "shot", HS_F64, 1, &shot) : HS_OK;
}

static int restore(void *state, hs_checkpoint *k)
{
    hs_seis *s = state;
    if (s->cfg.mode == HS_SEIS_FWI) return hs_seis_fwi_restore(s, k);
    if (s->cfg.mode != HS_SEIS_FORWARD) return HS_FAIL(HS_ERR_INPUT, "seismic: mode = gradient does not restart from checkpoints");
    if (s->cfg.shots > 1) { /* the shot first: moving the source clears the state read below */
        double shot;
        HS_CHECK(hs_checkpoint_read(k, "shot", HS_F64, 1, &shot));
        if (!(shot >= 0 && shot < s->cfg.shots) || (int)shot % s->cfg.shot_groups != s->group)
            return HS_FAIL(HS_ERR_INPUT, "checkpoint: shot %g of %d is not one of this rank's group", shot + 1, s->cfg.shots);
        if ((int)shot != s->shot) HS_CHECK(start_shot(s, (int)shot));
    }
    int roles[HS_SEIS_NF], n = hs_seis_state_roles(s, roles);
    int64_t count = s->d->local[0] * s->d->local[1] * s->d->local[2];
    for (int i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "field%02d", roles[i]);
        HS_CHECK(hs_checkpoint_read_state(k, name, s->dtype, count, s->host));
        HS_CHECK(hs_field_set_interior(s->f[roles[i]], s->host));
    }
    int64_t nt = s->nsamples * s->nrec_cols;
    double *tr = malloc((size_t)(nt + 1) * sizeof *tr);
    if (!tr) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    int rc = hs_checkpoint_read(k, "traces", HS_F64, nt, tr);
    if (rc == HS_OK && nt) rc = hs_mem_copy(s->ctx, s->trace, tr, (size_t)nt * sizeof *tr, HS_COPY_H2D);
    free(tr);
    HS_CHECK(rc);
    double clock[3];
    HS_CHECK(hs_checkpoint_read(k, "clock", HS_F64, 3, clock));
    s->time = clock[0];
    s->step = (int64_t)clock[1];
    s->samples_taken = (int64_t)clock[2];
    /* ghosts that are not exchanged but imaged: the free surface's */
    if (s->cfg.free_surface) {
        if (s->cfg.model == HS_SEIS_ACOUSTIC) HS_CHECK(hs_seis_mirror(s, s->f[HS_SEIS_F_P]));
        else HS_CHECK(hs_seis_elastic_image(s));
    }
    return HS_OK;
}

/* ---------------------------------------------------------------- benchmarks and tests */

void hs_seismic_time_step(void *state, double *dt, double *dt_limit, int64_t *nsteps)
{
    hs_seis *s = state;
    *dt = s->dt, *dt_limit = s->dt_limit, *nsteps = s->nsteps;
}

int hs_seismic_bench_step(void *state)
{
    hs_seis *s = state;
    return s->cfg.model == HS_SEIS_ACOUSTIC ? hs_seis_acoustic_step(s) : hs_seis_elastic_step(s);
}

void hs_seismic_bench_traffic(void *state, double *bytes, double *points)
{
    hs_seis *s = state;
    const hs_seis_config *c = &s->cfg;
    double pts = (double)(s->d->local[0] * s->d->local[1] * s->d->local[2]), es = (double)hs_dtype_size(s->dtype);
    /* acoustic: read p, p_prev, w; write p_next.  elastic: velocities read+written, stresses read
     * twice (by the velocity update and by their own) and written, material read once */
    double words;
    if (c->model == HS_SEIS_ACOUSTIC) words = c->density == HS_SEIS_DENSITY_VARIABLE ? 4 + c->ndim : 4;
    else { /* velocities: v read and written, stresses and buoyancy read; stresses: s read and written,
            * v, lambda, lambda + 2 mu and the shear moduli read */
        int nv = c->ndim, ns = c->ndim == 2 ? 3 : 6;
        words = (3 * nv + ns) + (2 * ns + nv + 2 + (ns - nv));
    }
    *bytes = words * es * pts;
    *points = pts;
}

int hs_seismic_cpml_columns(void *state) { return ((hs_seis *)state)->march; }

typedef struct {
    double (*f)(const double *x);
    double scale;
} test_fn;

static double test_fn_at(const hs_seis *s, const int64_t g[3], void *user)
{
    const test_fn *t = user;
    double x[3] = {0, 0, 0};
    for (int d = 0; d < s->cfg.ndim; d++) x[d] = (double)g[d] * s->cfg.h[d];
    return t->scale * t->f(x);
}

/* Test hook: the constant-density (or variable-density, rho = 1) operator applied to f = sin(2.1 x
 * + 0.3) cos(1.7 y - 0.2) [...] sampled on every point of the allocation, against its exact
 * Laplacian -(2.1^2 + 1.7^2) f: the largest error over the owned points.  Uses the step kernel with
 * p^{n-1} = 0 and w = 1 (out = 2 f + L f).  For the test of the stencils' order only. */
int hs_seismic_test_laplacian(void *state, double (*f)(const double *x), double *err_max)
{
    hs_seis *s = state;
    const hs_seis_config *c = &s->cfg;
    double *vals = malloc(s->lay->count * sizeof(double));
    if (!vals) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    test_fn one = {f, 1};
    hs_seis_fill_alloc(s, vals, test_fn_at, &one);
    int rc = hs_seis_upload_alloc(s, s->f[HS_SEIS_F_P], vals);
    for (size_t i = 0; i < s->lay->count; i++) vals[i] = 1;
    if (rc == HS_OK) rc = hs_seis_upload_alloc(s, s->f[HS_SEIS_F_W], vals);
    for (int d = 0; rc == HS_OK && d < c->ndim; d++)
        if (s->f[HS_SEIS_F_B + d]) rc = hs_seis_upload_alloc(s, s->f[HS_SEIS_F_B + d], vals);
    free(vals);
    HS_CHECK(rc);
    HS_CHECK(hs_field_fill(s->f[HS_SEIS_F_Q], 0.0));
    hs_box all = hs_field_interior_box(s->lay);
    hs_seis_launch L;
    hs_seis_launch_init(s, c->density == HS_SEIS_DENSITY_VARIABLE ? HS_SEIS_AV_STEP : HS_SEIS_AC_STEP, &all, &L);
    HS_CHECK(hs_seis_launch_run(s, &L));
    HS_CHECK(hs_seis_get_local(s, s->f[HS_SEIS_F_Q]));
    const hs_decomp *d = s->d;
    double e = 0, k2 = 2.1 * 2.1 + 1.7 * 1.7;
    for (int64_t k = 0; k < d->local[2]; k++)
        for (int64_t j = 0; j < d->local[1]; j++)
            for (int64_t i = 0; i < d->local[0]; i++) {
                double x[3] = {(double)(i + d->offset[0]) * c->h[0], (double)(j + d->offset[1]) * c->h[1],
                               (double)(k + d->offset[2]) * c->h[2]};
                double v = f(x), got = s->host[(k * d->local[1] + j) * d->local[0] + i] - 2 * v;
                e = fmax(e, fabs(got + k2 * v));
            }
    HS_CHECK(hs_allreduce_max(s->ctx->comm, &e, 1));
    *err_max = e;
    return HS_OK;
}

/* ---------------------------------------------------------------- teardown */

static void destroy(void *state)
{
    hs_seis *s = state;
    if (!s) return;
    hs_seis_adjoint_destroy(s);
    for (int r = 0; r < HS_SEIS_NF; r++) hs_field_destroy(s->f[r]);
    for (int d = 0; d < 3; d++)
        for (int q = 0; q < 4; q++)
            if (s->ctx) hs_mem_free(s->ctx, s->prof[d][q]);
    for (int i = 0; i < HS_SEIS_MAX_SRC; i++) hs_seis_points_free(s, &s->src[i]);
    for (int i = 0; i < HS_SEIS_MAX_COMP; i++) hs_seis_points_free(s, &s->rpts[i]);
    if (s->ctx) hs_mem_free(s->ctx, s->trace);
    hs_seis_receivers_free(&s->rec);
    if (s->d) hs_decomp_destroy(s->d);
    for (int d = 0; d < 3; d++) free(s->coords[d]), free(s->edges[d]), free(s->hcoords[d]), free(s->hedges[d]);
    free(s->host), free(s->out_host), free(s->vp_host), free(s->vs_host);
    free(s->file_vp), free(s->file_vs), free(s->file_rho);
    free(s->observed);
    free(s->params_ini), free(s->history);
    hs_ctx_destroy_group(s->group_ctx);
    free(s);
}

/* The end time and the cadence of the samples may not move (the trace buffer is sized by them);
 * nothing of [seismic] may change at a restart. */
static const char *const g_restart_may_change[] = {NULL};

/* Several shots run on one time axis, each for t_end rounded up to whole steps, and the step follows
 * from the model (read later): a checkpoint in the last shot can lie past shot_count x t_end while
 * steps remain, so a run of several shots is never refused as finished (a restart from its end
 * rewrites the last shot's seismograms). */
static double run_end(const hs_params *p)
{
    if (hs_params_enum(p, "seismic.mode") == HS_SEIS_FWI) return (double)hs_params_int(p, "seismic.fwi_iterations");
    const int64_t shots = hs_params_int(p, "seismic.shot_count") / hs_params_int(p, "seismic.shot_groups");
    return shots > 1 ? HUGE_VAL : hs_params_real(p, "seismic.t_end");
}

/* The inversion's file holds the latest iterate: a stop writes it (the model so far). */
static int record_on_stop(void *state) { return ((hs_seis *)state)->cfg.mode == HS_SEIS_FWI; }

const hs_solver_ops hs_seismic_solver = {
    .name = "seismic",
    .summary = "seismic waves: acoustic and elastic finite differences, CPML, receivers, SEG-Y, adjoint gradient and FWI",
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
    .work_unit = "point updates",
    .run_end = run_end,
    .record_on_stop = record_on_stop,
};
