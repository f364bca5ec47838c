/* The seismic solver's adjoint (acoustic, constant density): the gradient of the L2 seismogram misfit
 * with respect to vp by the exact transpose of the discrete forward steps (CPML included), with
 * binomial checkpointing (Griewank 1992; Griewank & Walther 2000, "revolve") so that memory does not
 * grow with the number of steps, or, where memory holds one field per step, the forward wavefield of
 * every step kept (nothing recomputed); and a full-waveform inversion of a few L-BFGS iterations. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/comm/comm.h"
#include "kernels/error.h"
#include "kernels/memory.h"
#include "kernels/nn/lbfgs.h"
#include "solvers/seismic/seismic.h"
#include "solvers/seismic/seismic_state.h"
#include "solvers/solver.h"

typedef struct hs_seis_adjoint {
    double *obs;            /* observed seismograms, nsamples x nrec (host, every rank) */
    double *res;            /* the residual d - obs (device), nsamples x nrec */
    double J;               /* 1/2 sum (d - obs)^2 */
    hs_field *U, *V;        /* adjoint of p^{n+1}, and minus the adjoint of p^n (the leapfrog pair) */
    hs_field *psi[3], *zeta[3], *G;
    hs_seis_points rinj;    /* the receivers' stencils as an injection set */
    /* checkpointing: a slot holds the wavefield pair as two field storages (so that its last
     * restore can swap them in instead of copying), and the CPML memory variables packed: PSI_d and
     * ZETA_d only on d's slabs, the only points where they are not 0 */
    int nslots, npack;
    void **slot_pq;         /* device: 2 per slot, P and Q (hs_field_storage_bytes each) */
    void **slot_pack;       /* device: the packed slabs */
    int64_t *slot_step;     /* the step a slot holds, -1 when free */
    /* history (seismic.snapshots = 0 where memory holds it): p^n of every step n = 0..N, a field
     * storage each.  The transposed steps read only p^{n+1}, p^n and p^{n-1} of the forward state
     * (never its CPML memory), so one field a step is all the reverse sweep needs: it recomputes
     * nothing and restores nothing. */
    void **hist;
    int64_t nhist;
    struct { int role; hs_box box; size_t offset; } pack[12];
    size_t pack_elems;
    int64_t cur;            /* the step of the working state, -1 when unknown (kStateGone: given away) */
    void *pn;               /* device, a field storage: p^{n+1} for adjoint step n's gradient (checkpointing only) */
    int64_t advances, reversed;
    /* the model and the gradient w.r.t. vp (owned points, x fastest) */
    double *grad_local;
    void *g_stage;          /* pinned host (on a GPU): G's owned points as stored, for a fast copy down */
    double *vp_start;       /* fwi: the starting model (global) */
    double *vp_global;      /* the current model (global) */
    int64_t nglobal;
    double J0;              /* fwi: the start's misfit (misfit_unit: the optimiser's unit) */
    int started;            /* fwi: the start was evaluated (or restored) */
    double *history;        /* fwi: the misfit at each evaluation */
    double *x_eval;         /* fwi: the optimiser's variable at the last evaluation (global, host); */
    int x_eval_ok;          /* 0 when none finished (or the last was interrupted) */
    int nhistory;
    /* fwi: the optimiser (resumable: its state goes into checkpoints), its variable x (device,
     * global: vp = vp_start + fwi_vp_step x, held within [vmin, vmax]), the iterations done */
    hs_lbfgs *opt;
    double *x_dev;
    double fwi_step, fwi_vmin, fwi_vmax;
    int iter, cb_rc;
    /* fwi: the last accepted iterate (the lowest misfit so far) and its results, which the output,
     * the checkpoints and the end report: x, vp (global, host), misfit, dJ/dvp (owned points) */
    double *acc_x, *acc_vp, acc_J, *acc_grad;
    int acc_ok;
    /* a stop asked for inside a sweep (hs_driver_interrupted): its answer (the signal, -1 for
     * run.walltime) and where the sweep was; `poll` 0: not asked (the end's own evaluation) */
    int poll, stop_why;
    char stop_where[160];
    /* test hooks */
    hs_seis_points ssrc;    /* the source's stencil grouped as one (for its adjoint) */
    double *sbar_dev;       /* F^T: the source's adjoint per step (device) */
    int var_grad, var_vp, var_vp0, var_misfit;
} hs_seis_adjoint;

/* fwi: the optimiser's unit of misfit, the start's (1 where the start fits the data exactly) */
static double misfit_unit(const hs_seis_adjoint *a) { return a->J0 > 0 ? a->J0 : 1; }

/* ---------------------------------------------------------------- input rules */

/* a->cur after the working p^n went to a->pn: no working state, every use restores first */
#define kStateGone INT64_MAX

/* The bytes of one checkpoint slot: the wavefield pair and the packed CPML slabs. */
static double slot_bytes(const hs_seis *s)
{
    return 2.0 * (double)hs_field_storage_bytes(s->lay) + (double)s->adj->pack_elems * (double)hs_dtype_size(s->dtype);
}

/* The memory the forward states may take: 80% of the free device memory (a GPU serves one rank),
 * a quarter of the host's on the CPU (ranks may share a node). */
static double state_memory(const hs_seis *s)
{
    if (s->ctx->device == HS_DEVICE_CPU) return 0.25 * hs_mem_host_available();
    return 0.8 * hs_mem_available(s->ctx);
}

/* The smallest v of any rank: every rank must run the same schedule (its steps exchange halos),
 * and free memory and the CPML slabs differ between ranks. */
static double fewest(const hs_seis *s, double v)
{
    if (s->ctx->size > 1 && hs_allreduce_min(s->ctx->comm, &v, 1) != HS_OK) return 0;
    return v;
}

/* Whether to keep every step's p (seismic.snapshots = 0 and nsteps + 1 fields fit on every rank). */
static int history_fits(const hs_seis *s)
{
    if (s->cfg.snapshots != 0) return 0;
    const double need = (double)(s->nsteps + 1) * (double)hs_field_storage_bytes(s->lay);
    return fewest(s, state_memory(s) >= need ? 1 : 0) > 0;
}

/* The number of checkpoint slots: seismic.snapshots, or as many as state_memory holds; at most
 * the steps.  More slots, fewer forward steps recomputed. */
static int slot_count(const hs_seis *s)
{
    int64_t n = s->cfg.snapshots;
    if (n == 0) {
        n = (int64_t)(state_memory(s) / slot_bytes(s));
        if (n > 1000) n = 1000;
        n = (int64_t)fewest(s, (double)n);
    }
    if (n > s->nsteps) n = s->nsteps;
    return (int)(n < 1 ? 1 : n);
}

/* Read the observed seismograms (and check they belong to this geometry) into *obs. */
static int read_observed_file(hs_seis *s, const hs_params *p, const char *path, double **obs)
{
    const hs_seis_config *c = &s->cfg;
    const char *key = "seismic.observed";
    FILE *probe = fopen(path, "rb");
    if (!probe) return hs_params_error(p, key, "cannot open observed seismograms '%s'", path);
    fclose(probe);
    hs_reader *r = NULL;
    if (hs_reader_open(path, &r) != HS_OK) {
        hs_error_clear();
        return hs_params_error(p, key, "'%s' is not a NetCDF or HDF5 file this build can read", path);
    }
    int64_t shape[8];
    int rank = 0, rc = HS_OK;
    if (hs_reader_var_shape(r, "p", shape, &rank) != HS_OK) {
        hs_error_clear();
        rc = hs_params_error(p, key, "no pressure seismograms 'p' in '%s' (a forward run's seismogram file)", path);
    } else if (rank != 2 || shape[0] != s->nsamples || shape[1] != s->rec.n) {
        rc = hs_params_error(p, key, "'%s' holds p of shape %lld x %lld; this run records %lld samples x %lld receivers", path,
                             (long long)shape[0], (long long)(rank > 1 ? shape[1] : 1), (long long)s->nsamples,
                             (long long)s->rec.n);
    }
    size_t n = (size_t)(s->nsamples * s->rec.n);
    double *o = rc == HS_OK ? malloc((n + 1) * sizeof *o) : NULL, *t = NULL, *x = NULL;
    if (rc == HS_OK && !o) rc = HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    if (rc == HS_OK) rc = hs_reader_read(r, "p", o);
    /* finite, and small enough that the misfit's squares stay finite */
    for (size_t i = 0; rc == HS_OK && i < n; i++)
        if (!isfinite(o[i]) || fabs(o[i]) > 1e100)
            rc = hs_params_error(p, key, "'%s' holds p = %g at sample %lld, receiver %lld: the observed seismograms must be finite "
                                 "(and at most 1e100)", path, o[i], (long long)(i / (size_t)s->rec.n), (long long)(i % (size_t)s->rec.n + 1));
    /* the same sampling and the same receivers */
    if (rc == HS_OK && s->nsamples > 1) {
        t = malloc((size_t)s->nsamples * sizeof *t);
        if (!t || hs_reader_read(r, "time", t) != HS_OK) {
            hs_error_clear();
            rc = hs_params_error(p, key, "'%s' has no time axis", path);
        } else {
            /* the file's time is in its own unit (a forward run with output.time_units = minutes since
             * ... writes minutes: its samples were compared as seconds and the file refused, "sampled
             * every 1.67e-05 s"); no units attribute: seconds */
            char units[256];
            int found = 0;
            if (hs_reader_attr_text(r, "time", "units", units, sizeof units, &found) != HS_OK) hs_error_clear(), found = 0;
            const double unit = found ? hs_time_unit_seconds(units) : 1;
            double want = s->dt * (double)c->record_every, got = (t[1] - t[0]) * unit;
            if (!(unit > 0))
                rc = hs_params_error(p, key, "'%s' has a time axis in '%s', not a CF time unit ('seconds since DATE', minutes, "
                                     "hours, days)", path, units);
            else if (fabs(got - want) > 1e-9 * want)
                rc = hs_params_error(p, key, "'%s' is sampled every %g s; this run samples every %g s", path, got, want);
        }
    }
    for (int d = 0; rc == HS_OK && d < c->ndim; d++) {
        const char *names[3] = {"receiver_x", c->ndim == 3 ? "receiver_y" : "receiver_z", "receiver_z"};
        x = realloc(x, (size_t)(s->rec.n + 1) * sizeof *x);
        if (!x || hs_reader_read(r, names[d], x) != HS_OK) {
            hs_error_clear();
            rc = hs_params_error(p, key, "'%s' has no %s", path, names[d]);
            break;
        }
        for (int64_t q = 0; q < s->rec.n; q++)
            if (fabs(x[q] - s->rec.x[d][q]) > 1e-6 * (1 + fabs(x[q]))) {
                rc = hs_params_error(p, key, "receiver %lld of '%s' is at %s = %g m, this run's at %g m", (long long)(q + 1),
                                     path, names[d] + 9, x[q], s->rec.x[d][q]);
                break;
            }
    }
    free(t), free(x);
    hs_reader_close(r);
    if (rc != HS_OK) {
        free(o);
        return rc;
    }
    *obs = o;
    return HS_OK;
}

/* The observed seismograms of every shot, shot after shot: seismic.observed itself for one shot, and
 * for several the forward run's files of the same stem, OBSERVED with _shotK (K from 1) before its
 * extension (obs.nc: obs_shot1.nc, obs_shot2.nc, ...). */
static int read_observed(hs_seis *s, const hs_params *p, double **obs)
{
    const hs_seis_config *c = &s->cfg;
    if (c->shots == 1) return read_observed_file(s, p, c->observed, obs);
    const size_t n = (size_t)(s->nsamples * s->rec.n);
    double *all = malloc(((size_t)c->shots * n + 1) * sizeof *all);
    if (!all) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    const char *slash = strrchr(c->observed, '/'), *dot = strrchr(c->observed, '.');
    size_t stem = dot && (!slash || dot > slash) ? (size_t)(dot - c->observed) : strlen(c->observed);
    for (int k = 0; k < c->shots; k++) {
        char base[8192], path[8300];
        hs_seis_shot_stem(c, c->observed, stem, k, base, sizeof base);
        snprintf(path, sizeof path, "%s%s", base, c->observed + stem);
        double *one = NULL;
        int rc = read_observed_file(s, p, path, &one);
        if (rc != HS_OK) {
            free(all);
            return rc;
        }
        memcpy(all + (size_t)k * n, one, n * sizeof *all);
        free(one);
    }
    *obs = all;
    return HS_OK;
}

int hs_seis_adjoint_check(hs_seis *s, const hs_params *p)
{
    /* kept for hs_seis_adjoint_create (create validates first): the files are read once a run */
    int rc = read_observed(s, p, &s->observed);
    int bad = rc != HS_OK;
    HS_CHECK(hs_allreduce_int_max(s->ctx->comm, &bad, 1));
    return rc;
}

/* ---------------------------------------------------------------- state */

static int new_field(hs_seis *s, hs_field **f)
{
    HS_CHECK(hs_field_create(s->d, s->dtype, s->hw, f));
    return HS_OK;
}

/* vp from the global array (clamped to the grid) at every point of the allocation. */
static double w_from_global(const hs_seis *s, const int64_t g[3], void *user)
{
    const double *vp = user;
    int64_t q[3];
    for (int d = 0; d < 3; d++) q[d] = g[d] < 0 ? 0 : g[d] > s->cfg.n[d] - 1 ? s->cfg.n[d] - 1 : g[d];
    double v = vp[(q[2] * s->cfg.n[1] + q[1]) * s->cfg.n[0] + q[0]];
    return v * v * s->dt * s->dt;
}

/* Set the model: w = vp^2 dt^2 from a global vp, and the owned vp. */
static int set_model(hs_seis *s, const double *vp_global)
{
    double *vals = malloc(s->lay->count * sizeof(double));
    if (!vals) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    hs_seis_fill_alloc(s, vals, w_from_global, (void *)vp_global);
    int rc = hs_seis_upload_alloc(s, s->f[HS_SEIS_F_W], vals);
    free(vals);
    const hs_decomp *d = s->d;
    for (int64_t k = 0; k < d->local[2]; k++)
        for (int64_t j = 0; j < d->local[1]; j++)
            for (int64_t i = 0; i < d->local[0]; i++)
                s->vp_host[(k * d->local[1] + j) * d->local[0] + i] =
                    vp_global[((k + d->offset[2]) * s->cfg.n[1] + (j + d->offset[1])) * s->cfg.n[0] + (i + d->offset[0])];
    return rc;
}

/* The current model as a global array on every rank. */
static int gather_vp(hs_seis *s, double *global)
{
    const hs_decomp *d = s->d;
    memset(global, 0, (size_t)s->adj->nglobal * sizeof *global);
    for (int64_t k = 0; k < d->local[2]; k++)
        for (int64_t j = 0; j < d->local[1]; j++)
            for (int64_t i = 0; i < d->local[0]; i++)
                global[((k + d->offset[2]) * s->cfg.n[1] + (j + d->offset[1])) * s->cfg.n[0] + (i + d->offset[0])] =
                    s->vp_host[(k * d->local[1] + j) * d->local[0] + i];
    return hs_allreduce_sum(s->ctx->comm, global, (int)s->adj->nglobal);
}

static int fwi_create(hs_seis *s, const hs_params *p);

int hs_seis_adjoint_create(hs_seis *s, const hs_params *p)
{
    const hs_seis_config *c = &s->cfg;
    hs_seis_adjoint *a = calloc(1, sizeof *a);
    if (!a) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    s->adj = a;
    a->nglobal = c->n[0] * c->n[1] * c->n[2];
    a->obs = s->observed; /* the check's copy, now the adjoint state's */
    s->observed = NULL;
    HS_CHECK(new_field(s, &a->U));
    HS_CHECK(new_field(s, &a->V));
    HS_CHECK(new_field(s, &a->G));
    if (c->pml > 0)
        for (int d = 0; d < c->ndim; d++) {
            HS_CHECK(new_field(s, &a->psi[d]));
            HS_CHECK(new_field(s, &a->zeta[d]));
        }
    size_t nres = (size_t)(s->nsamples * s->rec.n);
    HS_CHECK(hs_mem_alloc(s->ctx, (nres + 1) * sizeof(double), (void **)&a->res));
    /* the receivers' stencils, grouped by element for the adjoint sources */
    int64_t nrec = s->rec.n, cap = nrec * hs_seis_stencil_max(c);
    int64_t(*gidx)[3] = malloc((size_t)cap * sizeof *gidx), *first = malloc((size_t)(nrec + 1) * sizeof *first);
    double *w = malloc((size_t)cap * sizeof *w), shift[3] = {0, 0, 0};
    int rc = gidx && first && w ? HS_OK : HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    if (rc == HS_OK) {
        first[0] = 0;
        for (int64_t r = 0; r < nrec; r++) {
            double x[3] = {0, 0, 0};
            for (int d = 0; d < c->ndim; d++) x[d] = s->rec.x[d][r];
            first[r + 1] = first[r] + hs_seis_stencil(c, x, shift, -1, 0, gidx + first[r], w + first[r]);
        }
        rc = hs_seis_points_build(s, nrec, first, gidx, w, 0, 0, &a->rinj);
    }
    if (rc == HS_OK) { /* the source's stencil as one group (the adjoint of its injection) */
        double dv = 1;
        for (int d = 0; d < c->ndim; d++) dv *= c->h[d];
        int ns = hs_seis_stencil(c, c->source, shift, -1, 0, gidx, w);
        for (int q = 0; q < ns; q++) w[q] /= dv;
        int64_t f1[2] = {0, ns};
        rc = hs_seis_points_build(s, 1, f1, gidx, w, 1, 0, &a->ssrc);
    }
    free(gidx), free(first), free(w);
    HS_CHECK(rc);
    /* checkpoint slots: PSI_d and ZETA_d are 0 outside d's slabs (the local box less the core
     * along d; the whole box where there is no core) */
    const hs_box all = hs_field_interior_box(s->lay);
    for (int d = 0; c->pml > 0 && d < c->ndim; d++) {
        hs_box slab[2] = {all, all};
        int nslab = 1;
        if (hs_box_points(&s->core) > 0) {
            slab[0].hi[d] = s->core.lo[d];
            slab[1].lo[d] = s->core.hi[d];
            nslab = 2;
        }
        for (int side = 0; side < nslab; side++) {
            const int64_t elems = hs_box_points(&slab[side]);
            if (elems == 0) continue;
            for (int role = HS_SEIS_F_PSI + d; role <= HS_SEIS_F_ZETA + d; role += HS_SEIS_F_ZETA - HS_SEIS_F_PSI) {
                a->pack[a->npack].role = role;
                a->pack[a->npack].box = slab[side];
                a->pack[a->npack].offset = a->pack_elems;
                a->pack_elems += (size_t)elems;
                a->npack++;
            }
        }
    }
    if (history_fits(s)) {
        a->nhist = s->nsteps + 1;
        a->hist = calloc((size_t)a->nhist, sizeof *a->hist);
        if (!a->hist) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
        for (int64_t n = 0; n < a->nhist; n++) HS_CHECK(hs_mem_alloc(s->ctx, hs_field_storage_bytes(s->lay), &a->hist[n]));
    } else {
        a->nslots = slot_count(s);
        HS_CHECK(hs_mem_alloc(s->ctx, hs_field_storage_bytes(s->lay), &a->pn)); /* the kept p's serve as p^{n+1} otherwise */
    }
    /* one more entry each: with every step kept there are no slots, and calloc(0) may return NULL */
    a->slot_pq = calloc((size_t)a->nslots * 2 + 1, sizeof *a->slot_pq);
    a->slot_pack = calloc((size_t)a->nslots + 1, sizeof *a->slot_pack);
    a->slot_step = malloc(((size_t)a->nslots + 1) * sizeof *a->slot_step);
    if (!a->slot_pq || !a->slot_pack || !a->slot_step) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    for (int i = 0; i < a->nslots; i++) {
        for (int r = 0; r < 2; r++) HS_CHECK(hs_mem_alloc(s->ctx, hs_field_storage_bytes(s->lay), &a->slot_pq[2 * i + r]));
        if (a->pack_elems) HS_CHECK(hs_mem_alloc(s->ctx, a->pack_elems * hs_dtype_size(s->dtype), &a->slot_pack[i]));
        a->slot_step[i] = -1;
    }
    const double bytes = slot_bytes(s);
    size_t nloc = (size_t)(s->d->local[0] * s->d->local[1] * s->d->local[2]);
    a->grad_local = calloc(nloc + 1, sizeof(double));
    HS_CHECK(hs_host_alloc_pinned(s->ctx, (nloc + 1) * hs_dtype_size(s->dtype), &a->g_stage));
    a->vp_global = malloc((size_t)a->nglobal * sizeof(double));
    a->vp_start = malloc((size_t)a->nglobal * sizeof(double));
    if (!a->grad_local || !a->vp_global || !a->vp_start) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    HS_CHECK(gather_vp(s, a->vp_start));
    memcpy(a->vp_global, a->vp_start, (size_t)a->nglobal * sizeof(double));
    if (s->ctx->rank == 0 && a->hist)
        printf("seismic: adjoint keeping the wavefield of every step (%lld fields of %.3g MB)\n", (long long)a->nhist,
               (double)hs_field_storage_bytes(s->lay) / 1e6);
    else if (s->ctx->rank == 0)
        printf("seismic: adjoint with %d checkpoint slots of %.3g MB for %lld steps\n", a->nslots, (double)bytes / 1e6,
               (long long)s->nsteps);
    a->poll = 1;
    return c->mode == HS_SEIS_FWI ? fwi_create(s, p) : HS_OK;
}

void hs_seis_adjoint_destroy(hs_seis *s)
{
    hs_seis_adjoint *a = s->adj;
    if (!a) return;
    hs_field_destroy(a->U);
    hs_field_destroy(a->V);
    hs_field_destroy(a->G);
    hs_mem_free(s->ctx, a->pn);
    for (int d = 0; d < 3; d++) hs_field_destroy(a->psi[d]), hs_field_destroy(a->zeta[d]);
    hs_seis_points_free(s, &a->rinj);
    for (int i = 0; a->slot_pq && i < a->nslots; i++) {
        hs_mem_free(s->ctx, a->slot_pq[2 * i]), hs_mem_free(s->ctx, a->slot_pq[2 * i + 1]);
        if (a->slot_pack) hs_mem_free(s->ctx, a->slot_pack[i]);
    }
    for (int64_t n = 0; a->hist && n < a->nhist; n++) hs_mem_free(s->ctx, a->hist[n]);
    free(a->hist);
    hs_mem_free(s->ctx, a->res);
    hs_mem_free(s->ctx, a->sbar_dev);
    hs_host_free_pinned(s->ctx, a->g_stage);
    free(a->slot_pq), free(a->slot_pack), free(a->slot_step), free(a->obs), free(a->grad_local), free(a->vp_global), free(a->vp_start);
    hs_seis_points_free(s, &a->ssrc);
    free(a->history), free(a->x_eval);
    hs_lbfgs_destroy(a->opt);
    hs_mem_free(s->ctx, a->x_dev);
    free(a->acc_x), free(a->acc_vp), free(a->acc_grad);
    free(a);
    s->adj = NULL;
}

/* ---------------------------------------------------------------- checkpoints of the forward state */

/* The working state to slot i, or slot i to the working state.  Restoring with `take` (the slot's
 * last use: its state is reversed next and never needed again) swaps the wavefield pair's storage
 * in instead of copying it; the slot keeps the working fields' old storage as its free buffers. */
static int state_copy(hs_seis *s, int i, int to_slot, int take)
{
    hs_seis_adjoint *a = s->adj;
    const size_t es = hs_dtype_size(s->dtype);
    const int roles[2] = {HS_SEIS_F_P, HS_SEIS_F_Q};
    for (int r = 0; r < 2; r++) {
        if (take && !to_slot) hs_field_storage_swap(s->f[roles[r]], &a->slot_pq[2 * i + r]);
        else HS_CHECK(hs_field_storage_copy(s->f[roles[r]], a->slot_pq[2 * i + r], to_slot));
    }
    for (int q = 0; q < a->npack; q++) {
        hs_field *f = s->f[a->pack[q].role];
        void *packed = (char *)a->slot_pack[i] + a->pack[q].offset * es;
        if (to_slot) HS_CHECK(hs_field_store_box(f, &a->pack[q].box, packed));
        else HS_CHECK(hs_field_load_box(f, &a->pack[q].box, packed));
    }
    return HS_OK;
}

static int find_slot(const hs_seis_adjoint *a, int64_t step)
{
    for (int i = 0; i < a->nslots; i++)
        if (a->slot_step[i] == step) return i;
    return -1;
}

static int store_state(hs_seis *s, int64_t step)
{
    hs_seis_adjoint *a = s->adj;
    int i = find_slot(a, -1);
    if (i < 0) return HS_FAIL(HS_ERR_RUNTIME, "seismic adjoint: no free checkpoint slot (schedule error)");
    HS_CHECK(state_copy(s, i, 1, 0));
    a->slot_step[i] = step;
    return HS_OK;
}

/* Free the slot that holds X^step, if one does. */
static void release(hs_seis_adjoint *a, int64_t step)
{
    int i = find_slot(a, step);
    if (i >= 0) a->slot_step[i] = -1;
}

/* The working state becomes X^step (step 0: quiet).  `last`: X^step is reversed next and never
 * needed again, so its slot is taken (and freed) rather than copied. */
static int restore(hs_seis *s, int64_t step, int last)
{
    hs_seis_adjoint *a = s->adj;
    if (a->cur == step) return HS_OK;
    if (step == 0) {
        HS_CHECK(hs_field_fill(s->f[HS_SEIS_F_P], 0.0));
        HS_CHECK(hs_field_fill(s->f[HS_SEIS_F_Q], 0.0));
        for (int d = 0; s->cfg.pml > 0 && d < s->cfg.ndim; d++) {
            HS_CHECK(hs_field_fill(s->f[HS_SEIS_F_PSI + d], 0.0));
            HS_CHECK(hs_field_fill(s->f[HS_SEIS_F_ZETA + d], 0.0));
        }
    } else {
        int i = find_slot(a, step);
        if (i < 0) return HS_FAIL(HS_ERR_RUNTIME, "seismic adjoint: state %lld is not stored (schedule error)", (long long)step);
        HS_CHECK(state_copy(s, i, 0, last));
        if (last) a->slot_step[i] = -1;
    }
    a->cur = step;
    return HS_OK;
}

/* Must the sweep stop here (a signal, run.walltime: hs_driver_interrupted, collective, at every
 * step of every sweep)?  Then HS_ERR_SIGNAL, without a message, and where it was for the one the
 * caller gives. */
static int poll_stop(hs_seis *s, const char *sweep, int64_t n)
{
    hs_seis_adjoint *a = s->adj;
    if (!a->poll) return HS_OK;
    const int why = hs_driver_interrupted(s->ctx);
    if (!why) return HS_OK;
    a->stop_why = why;
    char shot[48] = "";
    if (s->cfg.shots > 1) snprintf(shot, sizeof shot, " of shot %d of %d", s->shot + 1, s->cfg.shots);
    snprintf(a->stop_where, sizeof a->stop_where, "in the %s%s at step %lld of %lld", sweep, shot, (long long)n, (long long)s->nsteps);
    return HS_ERR_SIGNAL;
}

/* Forward steps without samples from the working state to X^to. */
static int advance_to(hs_seis *s, int64_t to)
{
    hs_seis_adjoint *a = s->adj;
    for (int64_t n = a->cur; n < to; n++) {
        HS_CHECK(poll_stop(s, "reverse sweep (recomputing the forward states)", n));
        s->step = n;
        HS_CHECK(hs_seis_acoustic_step(s));
        a->advances++;
    }
    a->cur = to;
    return HS_OK;
}

/* ---------------------------------------------------------------- the transposed step */

/* The forward p's a transposed step's gradient term reads (field data pointers). */
typedef struct {
    void *next, *now, *prev; /* p^{n+1}, p^n, p^{n-1} */
} forward_ps;

/* The data of a field storage (hs_field_storage_bytes) laid out as the working fields. */
static void *storage_data(const hs_seis *s, void *storage)
{
    return (char *)storage + ((char *)s->f[HS_SEIS_F_P]->data - (char *)s->f[HS_SEIS_F_P]->base);
}

/* g: the forward p's for the gradient term; NULL: the transposed step alone (no gradient). */
static void adjoint_launch(hs_seis *s, hs_seis_op op, hs_seis_launch *L, const forward_ps *g)
{
    hs_seis_adjoint *a = s->adj;
    hs_seis_launch_init(s, op, NULL, L);
    L->f[HS_SEIS_F_P] = a->U->data;
    L->f[HS_SEIS_F_Q] = a->V->data;
    L->f[HS_SEIS_F_G] = g ? a->G->data : NULL;
    L->f[HS_SEIS_F_PN] = g ? g->next : NULL;
    L->f[HS_SEIS_F_PF] = g ? g->now : NULL;
    L->f[HS_SEIS_F_PP] = g ? g->prev : NULL;
    for (int d = 0; d < 3; d++) {
        L->f[HS_SEIS_F_PSI + d] = a->psi[d] ? a->psi[d]->data : NULL;
        L->f[HS_SEIS_F_ZETA + d] = a->zeta[d] ? a->zeta[d]->data : NULL;
    }
}

/* The working p^n becomes a->pn, the next adjoint step's p^{n+1} (swapped, not copied); the working
 * state is gone until the next restore. */
static void give_p_to_pn(hs_seis *s)
{
    hs_field_storage_swap(s->f[HS_SEIS_F_P], &s->adj->pn);
    s->adj->cur = kStateGone;
}

/* The adjoint of forward step n (X^n -> X^{n+1}): U, the adjoint of p^{n+1}, becomes the adjoint
 * of p^n.  With the gradient (g), G += U w (L p^n + s^n delta) on the core's points (the CPML's are
 * held fixed), which collect_gradient divides by w: w (L p^n + s^n delta) is the forward step's own
 * increment p^{n+1} - 2 p^n + p^{n-1} there (source and free surface included), so that the step
 * evaluates one stencil, not two. */
static int adjoint_step(hs_seis *s, int64_t n, const forward_ps *g)
{
    const hs_seis_config *c = &s->cfg;
    hs_seis_adjoint *a = s->adj;
    HS_CHECK(poll_stop(s, "reverse sweep", n));
    if (a->sbar_dev) HS_CHECK(hs_seis_sample_product(s, &a->ssrc, a->U, s->f[HS_SEIS_F_W], a->sbar_dev + n));
    hs_seis_launch L;
    adjoint_launch(s, HS_SEIS_ADJ_STEP, &L, g);
    if (s->exchange) HS_CHECK(hs_halo_exchange_begin(a->U));
    HS_CHECK(hs_seis_run_boxes(s, &L, HS_SEIS_ADJ_STEP, s->core_inner, s->ncore_inner));
    if (s->exchange) HS_CHECK(hs_halo_exchange_end(a->U));
    HS_CHECK(hs_seis_run_boxes(s, &L, HS_SEIS_ADJ_STEP, s->core_shell, s->ncore_shell));
    if (c->pml > 0) {
        for (int d = 0; d < c->ndim; d++)
            if (s->psi_exchange[d]) HS_CHECK(hs_halo_exchange(a->zeta[d]));
        HS_CHECK(hs_seis_run_boxes(s, &L, HS_SEIS_ADJ_PSI, s->pml_box, s->npml_box));
        for (int d = 0; d < c->ndim; d++)
            if (s->psi_exchange[d]) HS_CHECK(hs_halo_exchange(a->psi[d]));
        HS_CHECK(hs_seis_run_boxes(s, &L, HS_SEIS_ADJ_PML, s->pml_box, s->npml_box));
        HS_CHECK(hs_seis_run_boxes(s, &L, HS_SEIS_ADJ_MEM, s->pml_box, s->npml_box));
    }
    hs_field *t = a->U;
    a->U = a->V;
    a->V = t;
    /* the observation of p^n: U += C^T r_k */
    if (n % c->record_every == 0 && n / c->record_every < s->nsamples)
        HS_CHECK(hs_seis_inject(s, &a->rinj, a->U, NULL, 1.0, a->res + (n / c->record_every) * s->rec.n));
    a->reversed++;
    return HS_OK;
}

/* Adjoint step n with the gradient from the working state X^n and p^{n+1} in a->pn; afterwards the
 * working p^n becomes a->pn for step n - 1 (swapped, not copied), and the working state is gone. */
static int adjoint_step_from_state(hs_seis *s, int64_t n)
{
    hs_seis_adjoint *a = s->adj;
    if (a->cur != n)
        return HS_FAIL(HS_ERR_RUNTIME, "seismic adjoint: step %lld reversed from state %lld (schedule error)", (long long)n, (long long)a->cur);
    const forward_ps g = {storage_data(s, a->pn), s->f[HS_SEIS_F_P]->data, s->f[HS_SEIS_F_Q]->data};
    HS_CHECK(adjoint_step(s, n, &g));
    give_p_to_pn(s);
    return HS_OK;
}

/* Adjoint steps N-1 .. 0 with the gradient from the kept p's (history). */
static int reverse_history(hs_seis *s)
{
    hs_seis_adjoint *a = s->adj;
    for (int64_t n = s->nsteps - 1; n >= 0; n--) {
        const forward_ps g = {storage_data(s, a->hist[n + 1]), storage_data(s, a->hist[n]),
                              storage_data(s, a->hist[n > 0 ? n - 1 : 0])}; /* p^{-1} = p^0 = 0 */
        HS_CHECK(adjoint_step(s, n, &g));
    }
    return HS_OK;
}

/* ---------------------------------------------------------------- binomial checkpointing */

/* beta(s, r) = (s + r)! / (s! r!): the most steps s slots reverse with each step advanced at most r times. */
static double beta(int s, int r)
{
    double b = 1;
    for (int i = 1; i <= r; i++) b = b * (s + i) / i;
    return b;
}

/* Where to put the next checkpoint in [a, b) with s free slots: the right part is the largest that
 * s - 1 slots reverse with the repetitions the whole range needs (Griewank's binomial split). */
static int64_t split(int64_t a, int64_t b, int s)
{
    int64_t t = b - a;
    int r = 0;
    while (beta(s, r) < (double)t) r++;
    double right = fmin((double)(t - 1), beta(s - 1, r));
    if (right < 1) right = 1;
    return b - (int64_t)right;
}

/* Reverse forward steps b-1 .. a; X^a is restorable; s slots are free. */
static int reverse(hs_seis *s, int64_t a, int64_t b, int nfree)
{
    hs_seis_adjoint *ad = s->adj;
    if (b - a == 1) {
        HS_CHECK(restore(s, a, 1));
        return adjoint_step_from_state(s, a);
    }
    if (nfree == 0) {
        for (int64_t n = b - 1; n >= a; n--) {
            if (ad->cur > n || ad->cur < a) HS_CHECK(restore(s, a, n == a));
            HS_CHECK(advance_to(s, n));
            HS_CHECK(adjoint_step_from_state(s, n));
        }
        return HS_OK;
    }
    int64_t m = split(a, b, nfree);
    if (find_slot(ad, m) < 0) {
        if (ad->cur > m || ad->cur < a) HS_CHECK(restore(s, a, 0));
        HS_CHECK(advance_to(s, m));
        HS_CHECK(store_state(s, m));
    }
    HS_CHECK(reverse(s, m, b, nfree - 1));
    release(ad, m); /* if its last restore did not take it */
    return reverse(s, a, m, nfree);
}

/* ---------------------------------------------------------------- misfit and gradient */

/* The adjoint wavefield and its CPML memory at rest (each shot); the gradient is zeroed apart. */
static int zero_adjoint(hs_seis *s)
{
    hs_seis_adjoint *a = s->adj;
    HS_CHECK(hs_field_fill(a->U, 0.0));
    HS_CHECK(hs_field_fill(a->V, 0.0));
    for (int d = 0; d < 3; d++) {
        if (a->psi[d]) HS_CHECK(hs_field_fill(a->psi[d], 0.0));
        if (a->zeta[d]) HS_CHECK(hs_field_fill(a->zeta[d], 0.0));
    }
    return HS_OK;
}

/* A forward run from rest recording every sample; with `store`, keeping every p (history) or
 * storing the first descent of the schedule. */
static int forward_sweep(hs_seis *s, int store)
{
    hs_seis_adjoint *a = s->adj;
    for (int i = 0; i < a->nslots; i++) a->slot_step[i] = -1;
    int64_t mark[1024];
    int nmark = 0;
    if (store && !a->hist) {
        int64_t lo = 0, hi = s->nsteps;
        int nf = a->nslots;
        while (hi - lo > 1 && nf > 0 && nmark < 1024) {
            lo = split(lo, hi, nf--);
            mark[nmark++] = lo;
        }
    }
    a->cur = -1;
    HS_CHECK(restore(s, 0, 0));
    s->step = 0;
    s->time = 0;
    HS_CHECK(hs_mem_zero(s->ctx, s->trace, (size_t)(s->nsamples * s->nrec_cols) * sizeof(double)));
    HS_CHECK(hs_seis_record(s, 0));
    const int keep = store && a->hist;
    if (keep) HS_CHECK(hs_field_storage_copy(s->f[HS_SEIS_F_P], a->hist[0], 1));
    int next = 0;
    for (int64_t n = 0; n < s->nsteps; n++) {
        HS_CHECK(poll_stop(s, "forward sweep", n));
        if (next < nmark && mark[next] == n) {
            HS_CHECK(store_state(s, n));
            next++;
        }
        HS_CHECK(hs_seis_forward_step(s));
        if (keep) HS_CHECK(hs_field_storage_copy(s->f[HS_SEIS_F_P], a->hist[n + 1], 1)); /* p^{n+1} */
        a->advances++;
    }
    a->cur = s->nsteps;
    return HS_OK;
}

/* The residual of the recorded traces against the observed ones (or the given data), uploaded;
 * J = 1/2 sum r^2. */
static int residual(hs_seis *s)
{
    hs_seis_adjoint *a = s->adj;
    int64_t ns, nrec;
    int ncomp;
    double dts, *d = NULL;
    HS_CHECK(hs_seismic_traces(s, &ns, &nrec, &ncomp, &dts, &d));
    double J = 0;
    const double *obs = a->obs + (size_t)s->shot * (size_t)(ns * nrec); /* the current shot's */
    for (int64_t i = 0; i < ns * nrec; i++) {
        d[i] -= obs[i];
        J += 0.5 * d[i] * d[i];
    }
    int rc = hs_mem_copy(s->ctx, a->res, d, (size_t)(ns * nrec) * sizeof(double), HS_COPY_H2D);
    free(d);
    a->J = J;
    return rc;
}

/* dJ/dvp on the owned points: dJ/dw 2 vp dt^2 (w = vp^2 dt^2), where G holds w dJ/dw.  The interior
 * comes as stored, into pinned memory, and is converted in the same parallel loop (256^3 fp32 on the
 * H200: 0.06 s with the loop parallel but the copy into pageable memory, most of a forward run
 * without CPML; more before, with a serial widening and division). */
static int collect_gradient(hs_seis *s)
{
    hs_seis_adjoint *a = s->adj;
    HS_CHECK(hs_field_get_interior(a->G, a->g_stage));
    const int64_t n = s->d->local[0] * s->d->local[1] * s->d->local[2];
    double *grad = a->grad_local;
    const double *vp = s->vp_host;
    if (s->dtype == HS_F64) {
        const double *g = a->g_stage;
#pragma omp parallel for schedule(static)
        for (int64_t i = 0; i < n; i++) grad[i] = g[i] * 2 / vp[i];
    } else {
        const float *g = a->g_stage;
#pragma omp parallel for schedule(static)
        for (int64_t i = 0; i < n; i++) grad[i] = (double)g[i] * 2 / vp[i];
    }
    return HS_OK;
}

/* With HS_TIMELINE: the device's work so far finished, then the event (where a gradient's time goes). */
static void stage_done(hs_seis *s, const char *event)
{
    if (!hs_timeline_on()) return;
    hs_ctx_sync(s->ctx);
    hs_timeline(event);
}

/* J and dJ/dvp for the current model: the forward sweep, the residual, the reverse sweep. */
static int gradient(hs_seis *s)
{
    hs_seis_adjoint *a = s->adj;
    const int64_t N = s->nsteps, re = s->cfg.record_every;
    double J = 0;
    HS_CHECK(hs_field_fill(a->G, 0.0));
    /* several shots: J and the gradient are sums over the shots, run one after another */
    for (int k = 0; k < s->cfg.shots; k++) {
        HS_CHECK(hs_seis_move_source(s, k));
        stage_done(s, "seismic adjoint: shot start");
        HS_CHECK(forward_sweep(s, 1));
        stage_done(s, "seismic adjoint: forward sweep");
        HS_CHECK(residual(s));
        J += a->J;
        HS_CHECK(zero_adjoint(s));
        if (N % re == 0 && N / re < s->nsamples) HS_CHECK(hs_seis_inject(s, &a->rinj, a->U, NULL, 1.0, a->res + (N / re) * s->rec.n));
        if (a->hist) {
            HS_CHECK(reverse_history(s));
        } else {
            give_p_to_pn(s); /* the last forward state's p^N is adjoint step N - 1's p^{n+1} */
            if (N > 0) HS_CHECK(reverse(s, 0, N, a->nslots));
        }
        stage_done(s, "seismic adjoint: reverse sweep");
    }
    a->J = J;
    HS_CHECK(collect_gradient(s));
    hs_timeline("seismic adjoint: gradient collected");
    s->step = N;
    s->time = (double)N * s->dt;
    return HS_OK;
}

/* ---------------------------------------------------------------- full-waveform inversion */

/* The model of the optimiser's variable x (global, host): vp_start + fwi_vp_step x, held within
 * [vmin, vmax] (a trial far outside the model's range is held at its edge; the time step allows 1.5
 * vmax). */
static void fwi_model(const hs_seis_adjoint *a, const double *x, double *vp)
{
    for (int64_t i = 0; i < a->nglobal; i++) vp[i] = fmin(a->fwi_vmax, fmax(a->fwi_vmin, a->vp_start[i] + a->fwi_step * x[i]));
}

/* The model of x, its misfit, gradient and seismograms; x is kept as the last evaluation's.
 * HS_ERR_SIGNAL: stopped part-way (poll_stop), nothing kept. */
static int fwi_evaluate(hs_seis *s, const double *x)
{
    hs_seis_adjoint *a = s->adj;
    const size_t n = (size_t)a->nglobal;
    if (!a->x_eval && !(a->x_eval = malloc(n * sizeof *a->x_eval))) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    a->x_eval_ok = 0;
    memcpy(a->x_eval, x, n * sizeof *x);
    fwi_model(a, x, a->vp_global);
    HS_CHECK(set_model(s, a->vp_global));
    HS_CHECK(gradient(s));
    a->x_eval_ok = 1;
    return HS_OK;
}

/* The iterate x_dev was accepted: it is the last evaluation (the optimiser's rule), whose results
 * become the accepted ones (checked: otherwise they are evaluated again when needed). */
static int fwi_accept(hs_seis *s)
{
    hs_seis_adjoint *a = s->adj;
    const size_t n = (size_t)a->nglobal, nloc = (size_t)(s->d->local[0] * s->d->local[1] * s->d->local[2]);
    HS_CHECK(hs_mem_copy(s->ctx, a->acc_x, a->x_dev, n * sizeof(double), HS_COPY_D2H));
    fwi_model(a, a->acc_x, a->acc_vp);
    a->acc_ok = a->x_eval_ok && !memcmp(a->acc_x, a->x_eval, n * sizeof(double));
    if (a->acc_ok) {
        a->acc_J = a->J;
        memcpy(a->acc_grad, a->grad_local, nloc * sizeof(double));
    }
    return HS_OK;
}

/* The accepted iterate's results, evaluating it again where the last evaluation was another point
 * (a restart, a trial the line search rejected), without polling for a stop: it is the result. */
static int fwi_ensure(hs_seis *s, int results_only)
{
    hs_seis_adjoint *a = s->adj;
    const size_t n = (size_t)a->nglobal;
    if (a->acc_ok && (results_only || (a->x_eval_ok && !memcmp(a->acc_x, a->x_eval, n * sizeof(double))))) return HS_OK;
    const int poll = a->poll;
    a->poll = 0;
    int rc = fwi_evaluate(s, a->acc_x);
    a->poll = poll;
    HS_CHECK(rc);
    return fwi_accept(s);
}

static int fwi_objective(void *data, const double *x_dev, double *f, double *grad_dev)
{
    hs_seis *s = data;
    hs_seis_adjoint *a = s->adj;
    size_t n = (size_t)a->nglobal;
    double *x = malloc(n * sizeof *x), *g = calloc(n, sizeof *g);
    if (!x || !g) {
        free(x), free(g);
        return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    }
    int rc = hs_mem_copy(s->ctx, x, x_dev, n * sizeof *x, HS_COPY_D2H);
    if (rc == HS_OK) rc = fwi_evaluate(s, x);
    if (rc == HS_OK && !a->started) { /* the starting model: the misfit's unit */
        a->started = 1, a->J0 = a->J;
        if (s->ctx->rank == 0) printf("seismic: fwi start: misfit %.6e\n", a->J);
    }
    if (rc == HS_OK) {
        /* the gradient is muted near the source (within the stencil's reach), where the source term
         * makes it spike and the first steps of the optimiser would go there alone */
        const hs_decomp *d = s->d;
        const hs_seis_config *c = &s->cfg;
        const double mute = s->radius + 1.5;
        for (int64_t k = 0; k < d->local[2]; k++)
            for (int64_t j = 0; j < d->local[1]; j++)
                for (int64_t i = 0; i < d->local[0]; i++)
                    g[((k + d->offset[2]) * c->n[1] + j + d->offset[1]) * c->n[0] + i + d->offset[0]] =
                        a->grad_local[(k * d->local[1] + j) * d->local[0] + i] * a->fwi_step / misfit_unit(a);
        for (int sh = 0; sh < c->shots; sh++) { /* this rank's points within `mute` points of each shot's source */
            double src[3];
            int64_t lo[3], hi[3];
            hs_seis_shot_position(c, sh, src);
            for (int e = 0; e < 3; e++) {
                lo[e] = d->offset[e], hi[e] = d->offset[e] + d->local[e] - 1;
                if (e < c->ndim) {
                    lo[e] = (int64_t)fmax((double)lo[e], ceil(src[e] / c->h[e] - mute));
                    hi[e] = (int64_t)fmin((double)hi[e], floor(src[e] / c->h[e] + mute));
                }
            }
            for (int64_t gk = lo[2]; gk <= hi[2]; gk++)
                for (int64_t gj = lo[1]; gj <= hi[1]; gj++)
                    for (int64_t gi = lo[0]; gi <= hi[0]; gi++) {
                        const int64_t at[3] = {gi, gj, gk};
                        double g2 = 0;
                        for (int e = 0; e < c->ndim; e++) {
                            double q = (double)at[e] - src[e] / c->h[e];
                            g2 += q * q;
                        }
                        if (g2 <= mute * mute) g[(gk * c->n[1] + gj) * c->n[0] + gi] = 0;
                    }
        }
        rc = hs_allreduce_sum(s->ctx->comm, g, (int)n);
    }
    if (rc == HS_OK) rc = hs_mem_copy(s->ctx, grad_dev, g, n * sizeof *g, HS_COPY_H2D);
    *f = a->J / misfit_unit(a);
    if (rc == HS_OK) {
        double *h = realloc(a->history, (size_t)(a->nhistory + 1) * sizeof *h);
        if (h) a->history = h, a->history[a->nhistory++] = a->J;
    }
    free(x), free(g);
    return rc == HS_ERR_SIGNAL ? HS_ERR_SIGNAL : rc; /* a stop part-way: the optimiser goes back to the iteration's start */
}

/* After each accepted iteration: its results become the accepted ones, and a line of figures. */
static int fwi_report(void *data, int iteration, double f)
{
    hs_seis *s = data;
    hs_seis_adjoint *a = s->adj;
    a->iter = iteration;
    a->cb_rc = fwi_accept(s);
    if (s->ctx->rank == 0) printf("seismic: fwi iteration %d: misfit %.6e (%.4f of the start)\n", iteration, f * misfit_unit(a), f);
    fflush(stdout);
    return a->cb_rc != HS_OK; /* a failure stops the optimiser; advance returns it */
}

/* "by signal 15" or "as run.walltime runs out" for a stop's answer. */
static void stop_words(int why, char *out, size_t len)
{
    if (why > 0) snprintf(out, len, "by signal %d", why);
    else snprintf(out, len, "as run.walltime runs out");
}

/* The optimiser, its variable at 0 (the starting model) and, for a fresh run, the starting model's
 * misfit and gradient (the optimiser's first evaluation, the inversion's iteration 0; a restart
 * loads its state instead).  A stop during that evaluation ends the run: nothing is written. */
static int fwi_create(hs_seis *s, const hs_params *p)
{
    hs_seis_adjoint *a = s->adj;
    const size_t n = (size_t)a->nglobal, nloc = (size_t)(s->d->local[0] * s->d->local[1] * s->d->local[2]);
    a->fwi_step = s->cfg.fwi_vp_step, a->fwi_vmin = 0.5 * s->vmin, a->fwi_vmax = s->vmax_allowed;
    a->acc_x = calloc(n + 1, sizeof(double)), a->acc_vp = malloc((n + 1) * sizeof(double));
    a->acc_grad = calloc(nloc + 1, sizeof(double));
    if (!a->acc_x || !a->acc_vp || !a->acc_grad) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    HS_CHECK(hs_mem_alloc(s->ctx, (n + 1) * sizeof(double), (void **)&a->x_dev));
    HS_CHECK(hs_mem_zero(s->ctx, a->x_dev, (n + 1) * sizeof(double)));
    hs_lbfgs_opts o;
    memset(&o, 0, sizeof o);
    o.max_iter = s->cfg.fwi_iterations;
    o.max_evals = 4 * s->cfg.fwi_iterations + 4;
    HS_CHECK(hs_lbfgs_create(s->ctx, n, fwi_objective, s, &o, &a->opt));
    if (strcmp(hs_params_string(p, "run.restart"), "none") != 0) return HS_OK;
    hs_lbfgs_result res;
    int rc = hs_lbfgs_run(a->opt, a->x_dev, 0, NULL, &res);
    if (rc == HS_ERR_SIGNAL) {
        char why[64];
        hs_error_clear();
        stop_words(a->stop_why, why, sizeof why);
        return HS_FAIL(HS_ERR_RUNTIME, "seismic: mode = fwi stopped %s while computing the starting model's misfit and gradient (%s), "
                       "before the first iteration: nothing was written and there is no checkpoint (run it again)", why, a->stop_where);
    }
    HS_CHECK(rc);
    return fwi_accept(s);
}

int hs_seis_fwi_advance(hs_seis *s, double until, int64_t max_steps, int64_t *taken)
{
    hs_seis_adjoint *a = s->adj;
    const int before = a->iter;
    int64_t n = max_steps, left = (int64_t)ceil(until * (1 - 1e-12)) - a->iter;
    if (left < n) n = left;
    if (n < 1) n = 1;
    if (n > s->cfg.fwi_iterations) n = s->cfg.fwi_iterations;
    hs_lbfgs_result res;
    a->cb_rc = HS_OK;
    int rc = hs_lbfgs_run(a->opt, a->x_dev, (int)n, fwi_report, &res);
    *taken = a->iter - before;
    if (rc == HS_ERR_SIGNAL) {
        /* the optimiser went back to the start of the iteration, the last accepted iterate: the
         * driver writes that state's checkpoint and stops the run (hs_driver_interrupted said so) */
        char why[64];
        hs_error_clear();
        stop_words(a->stop_why, why, sizeof why);
        if (s->ctx->rank == 0)
            fprintf(stderr, "seismic: fwi iteration %d stopped %s %s; the checkpoint holds the model after iteration %d, and a "
                            "restart runs iteration %d again\n", a->iter + 1, why, a->stop_where, a->iter, a->iter + 1);
        return HS_OK;
    }
    HS_CHECK(rc);
    return a->cb_rc;
}

int hs_seis_fwi_finished(const hs_seis *s) { return s->adj && s->adj->opt && hs_lbfgs_finished(s->adj->opt); }

int hs_seis_fwi_iterations(const hs_seis *s) { return s->adj ? s->adj->iter : 0; }

/* The inversion's state at an iteration boundary: the iteration, the misfit's unit and the accepted
 * misfit, x and the optimiser's state (every rank holds them alike: rank 0's are kept), and the
 * accepted dJ/dvp (each rank its points).  Collective. */
int hs_seis_fwi_checkpoint(hs_seis *s, hs_checkpoint *k)
{
    hs_seis_adjoint *a = s->adj;
    if (!a->acc_ok) HS_CHECK(fwi_ensure(s, 1));
    const int root = s->ctx->rank == 0;
    const size_t n = (size_t)a->nglobal, nopt = hs_lbfgs_state_count(a->opt);
    const int64_t nloc = s->d->local[0] * s->d->local[1] * s->d->local[2];
    double clock[3] = {(double)a->iter, a->J0, a->acc_J};
    double *st = malloc((nopt + 1) * sizeof *st);
    if (!st) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    int rc = hs_lbfgs_save(a->opt, st);
    if (rc == HS_OK) rc = hs_checkpoint_write(k, "fwi_clock", HS_F64, root ? 3 : 0, clock);
    if (rc == HS_OK) rc = hs_checkpoint_write(k, "fwi_x", HS_F64, root ? (int64_t)n : 0, a->acc_x);
    if (rc == HS_OK) rc = hs_checkpoint_write(k, "fwi_optimiser", HS_F64, root ? (int64_t)nopt : 0, st);
    if (rc == HS_OK) rc = hs_checkpoint_write(k, "fwi_gradient", HS_F64, nloc, a->acc_grad);
    free(st);
    return rc;
}

int hs_seis_fwi_restore(hs_seis *s, hs_checkpoint *k)
{
    hs_seis_adjoint *a = s->adj;
    const int root = s->ctx->rank == 0;
    const size_t n = (size_t)a->nglobal, nopt = hs_lbfgs_state_count(a->opt);
    const int64_t nloc = s->d->local[0] * s->d->local[1] * s->d->local[2];
    double clock[3] = {0, 0, 0};
    double *st = malloc((nopt + 1) * sizeof *st);
    if (!st) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    int rc = hs_checkpoint_read(k, "fwi_clock", HS_F64, root ? 3 : 0, clock);
    if (rc == HS_OK) rc = hs_checkpoint_read(k, "fwi_x", HS_F64, root ? (int64_t)n : 0, a->acc_x);
    if (rc == HS_OK) rc = hs_checkpoint_read(k, "fwi_optimiser", HS_F64, root ? (int64_t)nopt : 0, st);
    if (rc == HS_OK) rc = hs_checkpoint_read(k, "fwi_gradient", HS_F64, nloc, a->acc_grad);
    if (rc == HS_OK) rc = hs_host_bcast(s->ctx->comm, HS_F64, clock, 3, 0);
    if (rc == HS_OK) rc = hs_host_bcast(s->ctx->comm, HS_F64, a->acc_x, n, 0);
    if (rc == HS_OK) rc = hs_host_bcast(s->ctx->comm, HS_F64, st, nopt, 0);
    if (rc == HS_OK) rc = hs_lbfgs_load(a->opt, st);
    free(st);
    HS_CHECK(rc);
    HS_CHECK(hs_mem_copy(s->ctx, a->x_dev, a->acc_x, n * sizeof(double), HS_COPY_H2D));
    a->iter = (int)clock[0], a->J0 = clock[1], a->acc_J = clock[2];
    a->started = 1;
    fwi_model(a, a->acc_x, a->acc_vp);
    a->acc_ok = 1;
    a->x_eval_ok = 0; /* the device holds no evaluation: the end evaluates x again for its seismograms */
    return HS_OK;
}

/* ---------------------------------------------------------------- the ops of the adjoint modes */

int hs_seis_adjoint_run(hs_seis *s)
{
    double t0 = hs_wtime();
    int rc = gradient(s);
    if (rc == HS_ERR_SIGNAL) {
        /* the forward wavefields of the whole sweep are what the gradient needs: no state part-way
         * could continue it, so the run ends with nothing written (the driver discards the output) */
        char why[64];
        hs_error_clear();
        stop_words(s->adj->stop_why, why, sizeof why);
        return HS_FAIL(HS_ERR_RUNTIME, "seismic: mode = gradient stopped %s %s: a gradient cannot stop part-way and continue, so "
                       "nothing was written and there is no checkpoint (run it again)", why, s->adj->stop_where);
    }
    HS_CHECK(rc);
    s->adjoint_done = 1;
    if (s->ctx->rank == 0) {
        char kept[64];
        if (s->adj->hist) snprintf(kept, sizeof kept, "every step's wavefield kept");
        else snprintf(kept, sizeof kept, "%d checkpoint slots", s->adj->nslots);
        printf("seismic: misfit %.9e; gradient by %lld forward and %lld adjoint steps (%lld per run), %s, %.3g s\n", s->adj->J,
               (long long)s->adj->advances, (long long)s->adj->reversed, (long long)s->nsteps, kept, hs_wtime() - t0);
    }
    return HS_OK;
}

int hs_seis_adjoint_define_vars(hs_seis *s, hs_writer *w)
{
    hs_seis_adjoint *a = s->adj;
    const int fwi = s->cfg.mode == HS_SEIS_FWI;
    HS_CHECK(hs_writer_def_var(w, "vp", "m s-1", fwi ? "P-wave speed of the latest iterate (the lowest misfit so far)" : "P-wave speed",
                               NULL, HS_F32, 0, &a->var_vp));
    if (fwi) {
        HS_CHECK(hs_writer_def_var(w, "vp_initial", "m s-1", "P-wave speed before the inversion", NULL, HS_F32, 0, &a->var_vp0));
        HS_CHECK(hs_writer_def_series(w, "misfit", "Pa2", "seismogram misfit 1/2 sum (p - p_obs)^2 of the iterate", NULL, &a->var_misfit));
    }
    return hs_writer_def_var(w, "gradient", "Pa2 s m-1",
                             fwi ? "gradient of the seismogram misfit 1/2 sum (p - p_obs)^2 with respect to vp at the latest iterate"
                                 : "gradient of the seismogram misfit 1/2 sum (p - p_obs)^2 with respect to vp",
                             NULL, HS_F32, 0, &a->var_grad);
}

/* The owned points of a global array into s->host. */
static void local_of_global(hs_seis *s, const double *global)
{
    const hs_decomp *d = s->d;
    for (int64_t k = 0; k < d->local[2]; k++)
        for (int64_t j = 0; j < d->local[1]; j++)
            for (int64_t i = 0; i < d->local[0]; i++)
                s->host[(k * d->local[1] + j) * d->local[0] + i] =
                    global[((k + d->offset[2]) * s->cfg.n[1] + (j + d->offset[1])) * s->cfg.n[0] + (i + d->offset[0])];
}

int hs_seis_adjoint_write(hs_seis *s, hs_writer *w)
{
    hs_seis_adjoint *a = s->adj;
    if (s->cfg.mode == HS_SEIS_FWI) {
        /* every record: the accepted iterate (vp and gradient rewritten: the file's are the latest
         * record's) and its misfit as the series; the starting model once */
        HS_CHECK(fwi_ensure(s, 1));
        local_of_global(s, a->acc_vp);
        HS_CHECK(hs_seis_put_decimated(s, w, a->var_vp, s->host));
        HS_CHECK(hs_seis_put_decimated(s, w, a->var_grad, a->acc_grad));
        HS_CHECK(hs_writer_put_scalar(w, a->var_misfit, a->acc_J));
        if (!s->static_written) {
            local_of_global(s, a->vp_start);
            HS_CHECK(hs_seis_put_decimated(s, w, a->var_vp0, s->host));
            s->static_written = 1;
        }
        return HS_OK;
    }
    if (!s->adjoint_done || s->static_written) return HS_OK; /* the fields exist once the run is done */
    HS_CHECK(hs_seis_put_decimated(s, w, a->var_vp, s->vp_host));
    HS_CHECK(hs_seis_put_decimated(s, w, a->var_grad, a->grad_local));
    s->static_written = 1;
    return HS_OK;
}

int hs_seis_adjoint_finish(hs_seis *s)
{
    hs_seis_adjoint *a = s->adj;
    if (s->cfg.mode == HS_SEIS_FWI) {
        /* the seismograms of the accepted iterate: the last evaluation may have been a trial the line
         * search rejected (it found no decrease), or none at all (a restart at the end) */
        const int again = !(a->acc_ok && a->x_eval_ok && !memcmp(a->acc_x, a->x_eval, (size_t)a->nglobal * sizeof(double)));
        HS_CHECK(fwi_ensure(s, 0));
        hs_lbfgs_result res;
        HS_CHECK(hs_lbfgs_run(a->opt, a->x_dev, 0, NULL, &res)); /* the totals, nothing run */
        if (s->ctx->rank == 0)
            printf("seismic: fwi: %d iterations, %d evaluations, misfit %.6e -> %.6e (%.4f), %s%s\n", res.iterations, res.evaluations,
                   a->J0, a->acc_J, a->acc_J / misfit_unit(a), res.reason ? res.reason : "",
                   again ? "; the seismograms are the last accepted iterate's (evaluated again)" : "");
    }
    if (s->ctx->rank == 0) printf("seismic: final misfit %.9e\n", s->cfg.mode == HS_SEIS_FWI ? a->acc_J : a->J);
    return hs_seis_write_seismograms(s);
}

/* ---------------------------------------------------------------- hooks for tests and benchmarks */

int hs_seismic_misfit_gradient(void *state, const double *vp_global, double *J, double *grad_global)
{
    hs_seis *s = state;
    hs_seis_adjoint *a = s->adj;
    if (!a) return HS_FAIL(HS_ERR_RUNTIME, "hs_seismic_misfit_gradient: the state is not in gradient or fwi mode");
    if (vp_global) {
        memcpy(a->vp_global, vp_global, (size_t)a->nglobal * sizeof(double));
        HS_CHECK(set_model(s, a->vp_global));
    }
    HS_CHECK(gradient(s));
    *J = a->J;
    if (grad_global) {
        const hs_decomp *d = s->d;
        memset(grad_global, 0, (size_t)a->nglobal * sizeof(double));
        for (int64_t k = 0; k < d->local[2]; k++)
            for (int64_t j = 0; j < d->local[1]; j++)
                for (int64_t i = 0; i < d->local[0]; i++)
                    grad_global[((k + d->offset[2]) * s->cfg.n[1] + (j + d->offset[1])) * s->cfg.n[0] + (i + d->offset[0])] =
                        a->grad_local[(k * d->local[1] + j) * d->local[0] + i];
        HS_CHECK(hs_allreduce_sum(s->ctx->comm, grad_global, (int)a->nglobal));
    }
    return HS_OK;
}

int hs_seismic_forward_op(void *state, const double *src, double *data)
{
    hs_seis *s = state;
    if (!s->adj) return HS_FAIL(HS_ERR_RUNTIME, "hs_seismic_forward_op: the state is not in gradient or fwi mode");
    s->src_series = src;
    int rc = forward_sweep(s, 0);
    s->src_series = NULL;
    HS_CHECK(rc);
    int64_t ns, nrec;
    int ncomp;
    double dts, *d = NULL;
    HS_CHECK(hs_seismic_traces(s, &ns, &nrec, &ncomp, &dts, &d));
    memcpy(data, d, (size_t)(ns * nrec) * sizeof(double));
    free(d);
    return HS_OK;
}

int hs_seismic_adjoint_op(void *state, const double *data, double *src)
{
    hs_seis *s = state;
    hs_seis_adjoint *a = s->adj;
    if (!a) return HS_FAIL(HS_ERR_RUNTIME, "hs_seismic_adjoint_op: the state is not in gradient or fwi mode");
    const int64_t N = s->nsteps, re = s->cfg.record_every;
    HS_CHECK(hs_mem_copy(s->ctx, a->res, data, (size_t)(s->nsamples * s->rec.n) * sizeof(double), HS_COPY_H2D));
    HS_CHECK(hs_mem_alloc(s->ctx, (size_t)(N + 1) * sizeof(double), (void **)&a->sbar_dev));
    HS_CHECK(hs_mem_zero(s->ctx, a->sbar_dev, (size_t)(N + 1) * sizeof(double)));
    HS_CHECK(zero_adjoint(s));
    int rc = HS_OK;
    if (N % re == 0 && N / re < s->nsamples) rc = hs_seis_inject(s, &a->rinj, a->U, NULL, 1.0, a->res + (N / re) * s->rec.n);
    /* the adjoint operator does not depend on the forward state: no checkpoints, no gradient */
    for (int64_t n = N - 1; rc == HS_OK && n >= 0; n--) rc = adjoint_step(s, n, NULL);
    if (rc == HS_OK) rc = hs_mem_copy(s->ctx, src, a->sbar_dev, (size_t)N * sizeof(double), HS_COPY_D2H);
    hs_mem_free(s->ctx, a->sbar_dev);
    a->sbar_dev = NULL;
    HS_CHECK(rc);
    /* a source point may be on several ranks' boxes: each has its part */
    return s->ctx->size > 1 ? hs_allreduce_sum(s->ctx->comm, src, (int)N) : HS_OK;
}

void hs_seismic_adjoint_counts(void *state, int64_t *advances, int64_t *reversed, int *slots)
{
    hs_seis *s = state;
    *advances = s->adj ? s->adj->advances : 0;
    *reversed = s->adj ? s->adj->reversed : 0;
    *slots = s->adj ? s->adj->nslots : 0;
    if (s->adj) s->adj->advances = s->adj->reversed = 0;
}

void hs_seismic_fwi_result(void *state, double *J0, double *J, const double **vp_global)
{
    hs_seis *s = state;
    const int acc = s->adj && s->adj->acc_ok; /* fwi: the accepted iterate's */
    *J0 = s->adj ? s->adj->J0 : 0;
    *J = acc ? s->adj->acc_J : s->adj ? s->adj->J : 0;
    *vp_global = acc ? s->adj->acc_vp : s->adj ? s->adj->vp_global : NULL;
}
