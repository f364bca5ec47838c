/* The seismic solver's elastic model: the velocity-stress staggered grid (Virieux 1986, Levander 1988)
 * in 2D P-SV and 3D, 2nd or 4th order in space, CPML on every face, stress imaging at a free surface;
 * point force, moment tensor and explosive sources. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/error.h"
#include "kernels/memory.h"
#include "solvers/seismic/seismic_state.h"

/* ---------------------------------------------------------------- material on the staggered grid */

static void lame_at(const hs_seis *s, const int64_t g[3], double *rho, double *lam, double *mu)
{
    double vp, vs;
    hs_seis_model_at(s, g[0], g[1], g[2], &vp, &vs, rho);
    *mu = *rho * vs * vs;
    *lam = *rho * vp * vp - 2 * *mu;
}

/* dt / rho at the v_d point (half a point along d): the mean of the two points' buoyancy. */
static double bv_at(const hs_seis *s, const int64_t g[3], void *user)
{
    int d = *(int *)user;
    int64_t q[3] = {g[0], g[1], g[2]};
    double r0, r1, l, m;
    lame_at(s, q, &r0, &l, &m);
    q[d]++;
    lame_at(s, q, &r1, &l, &m);
    return s->dt * 0.5 * (1 / r0 + 1 / r1);
}

static double l2m_at(const hs_seis *s, const int64_t g[3], void *user)
{
    (void)user;
    double r, l, m;
    lame_at(s, g, &r, &l, &m);
    return s->dt * (l + 2 * m);
}

static double lam_at(const hs_seis *s, const int64_t g[3], void *user)
{
    (void)user;
    double r, l, m;
    lame_at(s, g, &r, &l, &m);
    return s->dt * l;
}

/* dt mu at the shear point of dimensions (d, e) (half a point along both): the harmonic mean of the
 * four points around it (0 when any is 0). */
static double mu_at(const hs_seis *s, const int64_t g[3], void *user)
{
    const int *de = user;
    double inv = 0;
    for (int a = 0; a < 2; a++)
        for (int b = 0; b < 2; b++) {
            int64_t q[3] = {g[0], g[1], g[2]};
            q[de[0]] += a, q[de[1]] += b;
            double r, l, m;
            lame_at(s, q, &r, &l, &m);
            if (!(m > 0)) return 0;
            inv += 1 / m;
        }
    return s->dt * 4 / inv;
}

static const char *const g_vnames3[3] = {"vx", "vy", "vz"}, *const g_vnames2[2] = {"vx", "vz"};
static const char *const g_vlong3[3] = {"particle velocity along x", "particle velocity along y", "particle velocity along z (down)"},
                         *const g_vlong2[2] = {"particle velocity along x", "particle velocity along z (down)"};

int hs_seis_elastic_build(hs_seis *s)
{
    const hs_seis_config *c = &s->cfg;
    const int nd = c->ndim;
    for (int d = 0; d < nd; d++) HS_CHECK(hs_seis_new_field(s, HS_SEIS_F_V + d));
    for (int d = 0; d < nd; d++)
        for (int e = d; e < nd; e++) HS_CHECK(hs_seis_new_field(s, HS_SEIS_F_S + hs_seis_sym(d, e)));
    for (int d = 0; d < nd; d++) HS_CHECK(hs_seis_new_field(s, HS_SEIS_F_BV + d));
    HS_CHECK(hs_seis_new_field(s, HS_SEIS_F_L2M));
    HS_CHECK(hs_seis_new_field(s, HS_SEIS_F_LAM));
    for (int d = 0; d < nd; d++)
        for (int e = d + 1; e < nd; e++) HS_CHECK(hs_seis_new_field(s, HS_SEIS_F_MU + hs_seis_sym(d, e) - 3));
    if (c->pml > 0)
        for (int d = 0; d < nd; d++)
            for (int e = 0; e < nd; e++) {
                HS_CHECK(hs_seis_new_field(s, HS_SEIS_F_MV + 3 * d + e));
                HS_CHECK(hs_seis_new_field(s, HS_SEIS_F_MS + 3 * d + e));
            }
    double *vals = malloc(s->lay->count * sizeof(double));
    if (!vals) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    int rc = HS_OK;
    for (int d = 0; rc == HS_OK && d < nd; d++) {
        hs_seis_fill_alloc(s, vals, bv_at, &d);
        rc = hs_seis_upload_alloc(s, s->f[HS_SEIS_F_BV + d], vals);
    }
    if (rc == HS_OK) {
        hs_seis_fill_alloc(s, vals, l2m_at, NULL);
        rc = hs_seis_upload_alloc(s, s->f[HS_SEIS_F_L2M], vals);
    }
    if (rc == HS_OK) {
        hs_seis_fill_alloc(s, vals, lam_at, NULL);
        rc = hs_seis_upload_alloc(s, s->f[HS_SEIS_F_LAM], vals);
    }
    for (int d = 0; rc == HS_OK && d < nd; d++)
        for (int e = d + 1; rc == HS_OK && e < nd; e++) {
            int de[2] = {d, e};
            hs_seis_fill_alloc(s, vals, mu_at, de);
            rc = hs_seis_upload_alloc(s, s->f[HS_SEIS_F_MU + hs_seis_sym(d, e) - 3], vals);
        }
    free(vals);
    HS_CHECK(rc);
    hs_seis_boxes(s, s->hw, hs_seis_pml_margin(s));
    /* velocities, each at its own staggered point */
    for (int d = 0; d < nd; d++) {
        hs_seis_component *cp = &s->comp[d];
        memset(cp, 0, sizeof *cp);
        cp->name = nd == 2 ? g_vnames2[d] : g_vnames3[d];
        cp->long_name = nd == 2 ? g_vlong2[d] : g_vlong3[d];
        cp->units = "m s-1";
        cp->role = HS_SEIS_F_V + d;
        cp->shift[d] = 0.5;
    }
    s->ncomp = nd;
    /* velocity samples are the means of the two half steps around the sample's time (see step);
     * without steps, the quiet start's zeros are the one sample */
    s->nsamples = s->nsteps > 0 ? (s->nsteps - 1) / c->record_every + 1 : 1;
    return HS_OK;
}

/* ---------------------------------------------------------------- sources */

/* A source component: field role, staggering, the value's weight, the image factor at a free surface. */
static int add_source(hs_seis *s, int role, const double shift[3], double weight, double image, double surface, double scale)
{
    const hs_seis_config *c = &s->cfg;
    if (weight == 0) return HS_OK;
    int64_t gidx[4096][3];
    double w[4096], dv = 1;
    for (int d = 0; d < c->ndim; d++) dv *= c->h[d];
    int n = hs_seis_stencil(c, c->source, shift, image, surface, gidx, w);
    for (int q = 0; q < n; q++) w[q] *= weight / dv;
    int64_t first[2] = {0, n};
    if (s->nsrc >= HS_SEIS_MAX_SRC) return HS_FAIL(HS_ERR_RUNTIME, "seismic: too many source components");
    HS_CHECK(hs_seis_points_build(s, 1, first, gidx, w, 0, 0, &s->src[s->nsrc]));
    s->src_role[s->nsrc] = role;
    s->src_scale[s->nsrc] = scale;
    s->nsrc++;
    return HS_OK;
}

int hs_seis_elastic_sources(hs_seis *s)
{
    const hs_seis_config *c = &s->cfg;
    const int nd = c->ndim, z = nd - 1;
    double amp = c->wavelet.amplitude;
    if (c->source_type == HS_SEIS_SRC_FORCE) {
        /* rho dv/dt = div s + F s(t) dir delta: v_d += (dt / rho) F_d s(t_n) delta.  With a free
         * surface the points on it (the components along it) are the equations of half a cell (their
         * stress imaging is a zero flux through the surface), so the force they take counts twice */
        for (int d = 0; d < nd; d++) {
            double shift[3] = {0, 0, 0};
            shift[d] = 0.5;
            HS_CHECK(add_source(s, HS_SEIS_F_V + d, shift, c->force[d], 1, 2, 1));
        }
        return HS_OK;
    }
    /* a moment tensor M (explosive: the identity) injected as a stress glut:
     * ds/dt = C : grad v - M s(t) delta, with s the moment rate, at t_{n+1/2} */
    double M[6] = {1, 1, 1, 0, 0, 0};
    if (c->source_type == HS_SEIS_SRC_MOMENT) memcpy(M, c->moment, sizeof M);
    for (int d = 0; d < nd; d++)
        for (int e = d; e < nd; e++) {
            /* the tensor's component of (d, e): the 2D x-z plane is the 3D tensor's x and z */
            int t3d = nd == 2 ? (d == 0 ? 0 : 2) : d, t3e = nd == 2 ? (e == 0 ? 0 : 2) : e;
            double shift[3] = {0, 0, 0};
            if (d != e) shift[d] = shift[e] = 0.5;
            int odd = (d == z) || (e == z); /* imaged oddly at a free surface */
            /* on the surface: s_zz is held at zero, the others are half-cell points (twice, as a force) */
            HS_CHECK(add_source(s, HS_SEIS_F_S + hs_seis_sym(d, e), shift, M[hs_seis_sym(t3d, t3e)], odd ? -1 : 1,
                                d == z && e == z ? 0 : 2, -s->dt));
        }
    (void)amp;
    return HS_OK;
}

/* ---------------------------------------------------------------- the step */

static int exchange_begin(hs_seis *s, int first, int count)
{
    for (int r = first; r < first + count; r++)
        if (s->f[r]) HS_CHECK(hs_halo_exchange_begin(s->f[r]));
    return HS_OK;
}

static int exchange_end(hs_seis *s, int first, int count)
{
    for (int r = first; r < first + count; r++)
        if (s->f[r]) HS_CHECK(hs_halo_exchange_end(s->f[r]));
    return HS_OK;
}

/* One update (velocities or stresses) over the core (the inner part while the halos travel) and the
 * CPML slabs. */
static int update(hs_seis *s, hs_seis_op op, int xfirst, int xcount)
{
    hs_seis_launch L;
    hs_seis_launch_init(s, op, NULL, &L);
    if (s->exchange) HS_CHECK(exchange_begin(s, xfirst, xcount));
    HS_CHECK(hs_seis_run_boxes(s, &L, op, s->core_inner, s->ncore_inner));
    if (s->exchange) HS_CHECK(exchange_end(s, xfirst, xcount));
    HS_CHECK(hs_seis_run_boxes(s, &L, op, s->core_shell, s->ncore_shell));
    L.pml = s->cfg.pml > 0;
    return hs_seis_run_boxes(s, &L, op, s->pml_box, s->npml_box);
}

int hs_seis_elastic_image(hs_seis *s)
{
    const hs_seis_config *c = &s->cfg;
    int z = c->ndim - 1;
    if (!c->free_surface || s->lay->offset[z] != 0) return HS_OK;
    hs_box top = hs_field_interior_box(s->lay);
    top.hi[z] = 1;
    hs_seis_launch L;
    hs_seis_launch_init(s, HS_SEIS_EL_IMAGE, &top, &L);
    return hs_seis_launch_run(s, &L);
}

static int inject_sources(hs_seis *s, int velocities, double t)
{
    double v = hs_wavelet_value(&s->cfg.wavelet, t);
    for (int i = 0; i < s->nsrc; i++) {
        int role = s->src_role[i], is_v = role >= HS_SEIS_F_V && role < HS_SEIS_F_V + 3;
        if (is_v != velocities) continue;
        hs_field *mult = is_v ? s->f[HS_SEIS_F_BV + role - HS_SEIS_F_V] : NULL;
        HS_CHECK(hs_seis_inject(s, &s->src[i], s->f[role], mult, s->src_scale[i] * v, NULL));
    }
    return HS_OK;
}

/* The velocities at the stresses' time t_n = n dt, as the seismograms sample them: the mean of
 * v^{n-1/2} (the state's) and v^{n+1/2} (the next step's velocity half, computed on the side: the
 * velocities and the CPML memory that half step writes are saved and put back, so the run goes on
 * bitwise as if nothing had happened), each component at its own staggered points; out[d] holds the
 * owned points of component d, x fastest.  For the snapshots, which the state alone labelled half a
 * step early.  Collective. */
int hs_seis_elastic_velocities_now(hs_seis *s, double *const *out)
{
    const hs_seis_config *c = &s->cfg;
    const int nd = c->ndim;
    const size_t nloc = (size_t)(s->d->local[0] * s->d->local[1] * s->d->local[2]), es = hs_dtype_size(s->dtype);
    for (int d = 0; d < nd; d++) {
        HS_CHECK(hs_seis_get_local(s, s->f[HS_SEIS_F_V + d]));
        memcpy(out[d], s->host, nloc * sizeof(double));
    }
    /* what the velocity half step writes: the velocities (whole storages) and, in the CPML slabs, the
     * memory of the stresses' derivatives */
    void *vsave[3] = {NULL, NULL, NULL}, *msave = NULL;
    size_t melems = 0;
    for (int r = 0; r < 9; r++)
        if (s->f[HS_SEIS_F_MV + r])
            for (int b = 0; b < s->npml_box; b++) melems += (size_t)hs_box_points(&s->pml_box[b]);
    int rc = HS_OK;
    for (int d = 0; rc == HS_OK && d < nd; d++) {
        rc = hs_mem_alloc(s->ctx, hs_field_storage_bytes(s->lay), &vsave[d]);
        if (rc == HS_OK) rc = hs_field_storage_copy(s->f[HS_SEIS_F_V + d], vsave[d], 1);
    }
    if (rc == HS_OK && melems) rc = hs_mem_alloc(s->ctx, melems * es, &msave);
    size_t at = 0;
    for (int r = 0; rc == HS_OK && r < 9; r++)
        for (int b = 0; rc == HS_OK && s->f[HS_SEIS_F_MV + r] && b < s->npml_box; b++) {
            rc = hs_field_store_box(s->f[HS_SEIS_F_MV + r], &s->pml_box[b], (char *)msave + at * es);
            at += (size_t)hs_box_points(&s->pml_box[b]);
        }
    const int saved = rc == HS_OK;
    if (rc == HS_OK) rc = update(s, HS_SEIS_EL_VEL, HS_SEIS_F_S, 6);
    if (rc == HS_OK) rc = inject_sources(s, 1, (double)s->step * s->dt);
    for (int d = 0; rc == HS_OK && d < nd; d++) {
        rc = hs_seis_get_local(s, s->f[HS_SEIS_F_V + d]);
        for (size_t i = 0; rc == HS_OK && i < nloc; i++) out[d][i] = 0.5 * (out[d][i] + s->host[i]);
    }
    /* back to the state: the velocities and the memory as they were */
    at = 0;
    for (int d = 0; saved && d < nd; d++) {
        int r2 = hs_field_storage_copy(s->f[HS_SEIS_F_V + d], vsave[d], 0);
        if (rc == HS_OK) rc = r2;
    }
    for (int r = 0; saved && r < 9; r++)
        for (int b = 0; s->f[HS_SEIS_F_MV + r] && b < s->npml_box; b++) {
            int r2 = hs_field_load_box(s->f[HS_SEIS_F_MV + r], &s->pml_box[b], (char *)msave + at * es);
            if (rc == HS_OK) rc = r2;
            at += (size_t)hs_box_points(&s->pml_box[b]);
        }
    for (int d = 0; d < nd; d++) hs_mem_free(s->ctx, vsave[d]);
    hs_mem_free(s->ctx, msave);
    return rc;
}

/* v^{n+1/2} from v^{n-1/2} and s^n, then s^{n+1} from s^n and v^{n+1/2}.  A sample due at t_n is the
 * mean of v^{n-1/2} and v^{n+1/2} (second-order accurate at t_n, the time of the stresses and of the
 * acoustic model's samples). */
int hs_seis_elastic_step(hs_seis *s)
{
    const hs_seis_config *c = &s->cfg;
    const int64_t n = s->step, re = c->record_every;
    const int sample = n % re == 0 && n / re < s->nsamples;
    if (sample) HS_CHECK(hs_seis_record_mix(s, n / re, 0, 0.5));
    HS_CHECK(update(s, HS_SEIS_EL_VEL, HS_SEIS_F_S, 6));
    HS_CHECK(inject_sources(s, 1, (double)n * s->dt));
    HS_CHECK(update(s, HS_SEIS_EL_STRESS, HS_SEIS_F_V, 3));
    HS_CHECK(inject_sources(s, 0, ((double)n + 0.5) * s->dt));
    HS_CHECK(hs_seis_elastic_image(s));
    if (sample) HS_CHECK(hs_seis_record_mix(s, n / re, 1, 0.5));
    return HS_OK;
}
