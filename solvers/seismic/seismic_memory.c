/* The seismic solver's memory estimate: what a run allocates on the device and the host, item by item as the code allocates it, before any of it exists. */
#include <math.h>
#include <string.h>

#include "kernels/config.h"
#include "kernels/memory.h"
#include "kernels/nn/lbfgs.h"
#include "solvers/seismic/seismic_state.h"
#include "solvers/solver.h"

/* Bytes by lifetime, in the order create allocates and frees them:
 *   HELD    the forward state built from the configuration (fields, profiles, point sets, traces,
 *           the receiver table), kept to the end;
 *   BUILD   the staging of that build (coefficients, profiles, stencil lists), freed as it goes;
 *   FILE    the model file (whole grid on every rank), freed once create has built from it;
 *   LATE    what create allocates after the build and keeps (vp, vs, the staging arrays);
 *   ADJ     the adjoint modes' state, after the model file is freed, and ADJ_BUILD its staging;
 *   WRITER  what the output writer keeps once it has written a record (its gather);
 *   and what one event of the run holds while it lasts, one event at a time: a record, a
 *   checkpoint, the seismograms at the end, an evaluation of the inversion.
 * The peak is the largest of four moments: the build, the end of create (the file still there),
 * the adjoint's build, the largest event of the run. */
enum { HELD, BUILD, FILE_, LATE, ADJ, ADJ_BUILD, WRITER, RECORD, CHECKPOINT, END, EVALUATION, NLIFE };

typedef struct {
    const hs_seis *s;
    double dev[NLIFE], host[NLIFE];
} tally;

/* The peak of one memory over the four moments. */
static double peak(const double *b)
{
    const double build = b[HELD] + b[BUILD] + b[FILE_], created = b[HELD] + b[FILE_] + b[LATE];
    const double adj = b[HELD] + b[LATE] + b[ADJ] + b[ADJ_BUILD];
    const double run = b[HELD] + b[LATE] + b[ADJ] + b[WRITER] + fmax(fmax(b[RECORD], b[CHECKPOINT]), fmax(b[END], b[EVALUATION]));
    return fmax(fmax(build, created), fmax(adj, run));
}

/* hs_mem_alloc, malloc and hs_host_alloc_pinned of `bytes`, `count` times. */
static void dev(tally *t, int when, double count, double bytes) { t->dev[when] += count * hs_mem_footprint(t->s->ctx, bytes); }
static void host(tally *t, int when, double count, double bytes) { t->host[when] += count * hs_host_footprint(bytes); }
static void pinned(tally *t, int when, double count, double bytes) { t->host[when] += count * hs_pinned_footprint(t->s->ctx, bytes); }

/* `count` fields of the shared layout (hs_seis_new_field), their halo plans included. */
static void fields(tally *t, int when, double count)
{
    const hs_seis *s = t->s;
    double d = 0, h = 0;
    hs_field_footprint(s->d, s->dtype, s->hw, -1, &d, &h);
    t->dev[when] += count * d, t->host[when] += count * h;
}

/* The fields the forward state creates (build_acoustic, hs_seis_elastic_build). */
static int forward_fields(const hs_seis *s)
{
    const hs_seis_config *c = &s->cfg;
    const int nd = c->ndim, pml = c->pml > 0;
    if (c->model == HS_SEIS_ACOUSTIC) {
        const int variable = c->density == HS_SEIS_DENSITY_VARIABLE;
        /* P, Q, W; the buoyancies; PSI and ZETA; C for the CPML columns (AC_MARCH), which
         * hs_seis_boxes may still turn off: counted wherever it can be on */
        return 3 + (variable ? nd : 0) + (pml ? 2 * nd : 0) + (pml && !variable);
    }
    const int ns = nd == 2 ? 3 : 6; /* stress components */
    /* V, S, BV, L2M, LAM, MU (the shear pairs); MV and MS, nd x nd each, in the CPML */
    return nd + ns + nd + 2 + (ns - nd) + (pml ? 2 * nd * nd : 0);
}

static double stencil_max(const hs_seis_config *c) { return (double)hs_seis_stencil_max(c); }

/* hs_seis_points_build over `total` stencil points of which at most `mine` are this rank's: the
 * list and the group arrays while it builds, the four device arrays and group_of after. */
static void point_set(tally *t, int kept, int staged, double total, double mine)
{
    host(t, staged, 1, total * 24);              /* list: index, receiver, weight */
    host(t, staged, 4, (mine + 1) * 8);          /* gptr, pidx, prec, pw */
    host(t, kept, 1, (mine + 1) * 8);            /* group_of */
    dev(t, kept, 4, (mine + 1) * 8);             /* gptr, pidx, prec, pwt */
}

/* The stencils of nrec receivers as build_receivers (and the adjoint's injection set) list them. */
static void stencil_lists(tally *t, int staged, double nrec)
{
    const double cap = nrec * stencil_max(&t->s->cfg);
    host(t, staged, 1, cap * 24);                /* global indices */
    host(t, staged, 1, cap * 8);                 /* weights */
    host(t, staged, 1, (nrec + 1) * 8);          /* first */
}

static double local_points(const hs_seis *s) { return (double)s->d->local[0] * (double)s->d->local[1] * (double)s->d->local[2]; }
static double global_points(const hs_seis_config *c) { return (double)c->n[0] * (double)c->n[1] * (double)c->n[2]; }

/* The points of the snapshots' grid (decimated by the stride). */
static double output_points(const hs_seis_config *c)
{
    double n = 1;
    for (int d = 0; d < c->ndim; d++) n *= (double)((c->n[d] - 1) / c->snapshot_stride + 1);
    return n;
}

/* The most snapshot points a rank other than rank 0 writes (the writer's receive buffer on rank 0). */
static double largest_other_block(const hs_seis *s)
{
    const hs_seis_config *c = &s->cfg;
    const int64_t st = c->snapshot_stride;
    double most = 0;
    for (int r = 1; r < s->ctx->size; r++) {
        int64_t off[3], loc[3];
        if (hs_decomp_rank_box(s->d, r, off, loc) != HS_OK) return output_points(c);
        double n = 1;
        for (int e = 0; e < c->ndim; e++) n *= (double)((off[e] + loc[e] + st - 1) / st - (off[e] + st - 1) / st); /* as hs_seis_put_decimated */
        most = fmax(most, n);
    }
    return most;
}

/* Points of the CPML slabs on this rank (what the elastic snapshots save of each memory variable),
 * and of the slabs along each dimension d (the adjoint's packed PSI_d and ZETA_d). */
static double slab_points(const hs_seis *s, double along[3])
{
    hs_box core, slabs[6];
    const int n = hs_seis_slabs(s, hs_seis_pml_margin(s), &core, slabs);
    double total = 0;
    for (int b = 0; b < n; b++) total += (double)hs_box_points(&slabs[b]);
    const double all = local_points(s);
    for (int d = 0; d < 3; d++) {
        if (hs_box_points(&core) == 0 || d >= s->cfg.ndim) {
            along[d] = d < s->cfg.ndim ? all : 0;
            continue;
        }
        double inside = all / (double)s->d->local[d] * (double)(core.hi[d] - core.lo[d]);
        along[d] = all - inside;
    }
    return total;
}

/* The forward state (create): fields, profiles, sources, receivers and traces, host arrays. */
static void forward_state(tally *t)
{
    const hs_seis *s = t->s;
    const hs_seis_config *c = &s->cfg;
    const double es = (double)hs_dtype_size(s->dtype), nloc = local_points(s), nrec = (double)s->rec.n;
    const double count = (double)hs_field_layout_bytes(s->d, s->dtype, s->hw, -1) / es; /* lay->count, and the lead */
    const double ncomp = c->model == HS_SEIS_ELASTIC ? c->ndim : 1, S = stencil_max(c);
    fields(t, HELD, forward_fields(s));
    /* the coefficients staged on the host (hs_seis_fill_alloc, hs_seis_upload_alloc) */
    host(t, BUILD, 1, count * 8);
    host(t, BUILD, 1, count * es);
    /* the model file, whole grid on every rank (vp, rho and vs), until create has built from it */
    if (c->medium == HS_SEIS_MEDIUM_FILE) host(t, FILE_, c->model == HS_SEIS_ELASTIC ? 3 : 2, global_points(c) * 8);
    /* CPML profiles: a and b at points and half points per dimension, staged through the host */
    for (int d = 0; d < c->ndim; d++) {
        const double n = (double)(s->d->local[d] + 2 * s->hw);
        dev(t, HELD, 4, n * es);
        host(t, BUILD, 1, n * 4 * 8);
        host(t, BUILD, 1, n * es);
    }
    /* sources: one point set per component (a moment tensor has up to 6) */
    const double nsrc = c->model == HS_SEIS_ACOUSTIC ? 1 : c->source_type == HS_SEIS_SRC_FORCE ? c->ndim : (c->ndim == 2 ? 3 : 6);
    for (int i = 0; i < nsrc; i++) point_set(t, HELD, BUILD, S, S);
    /* receivers: the stencil lists, a sampling set per component, and the trace buffer */
    stencil_lists(t, BUILD, nrec);
    for (int i = 0; i < ncomp; i++) point_set(t, HELD, BUILD, nrec * S, nrec * S);
    dev(t, HELD, 1, (double)s->nsamples * ncomp * nrec * 8);
    /* the receiver table (made before this estimate, counted as part of the run) */
    host(t, HELD, 1, nrec * 8);
    host(t, HELD, c->ndim, nrec * 8);
    for (int64_t r = 0; r < s->rec.n; r++) host(t, HELD, 1, (double)strlen(s->rec.names[r]) + 1);
    /* vp and vs of the owned points (snapshots, adjoint), and the two staging arrays */
    host(t, LATE, c->model == HS_SEIS_ELASTIC ? 4 : 3, (nloc > 0 ? nloc : 1) * 8);
}

/* Records, checkpoints and the seismograms while the run goes. */
static void forward_run(tally *t, const hs_params *p)
{
    const hs_seis *s = t->s;
    const hs_seis_config *c = &s->cfg;
    const double es = (double)hs_dtype_size(s->dtype), nloc = local_points(s), nrec = (double)s->rec.n;
    const double ncomp = c->model == HS_SEIS_ELASTIC ? c->ndim : 1, traces = (double)s->nsamples * ncomp * nrec;
    if (hs_params_enum(p, "output.format") != HS_OUTPUT_NONE) {
        /* the coordinates and edges of the grid and of the half grids */
        for (int d = 0; d < c->ndim; d++) host(t, WRITER, 4, (double)((c->n[d] - 1) / c->snapshot_stride + 2) * 8);
        /* the writer gathers a record on rank 0 (io/output.c: the whole grid, and a buffer for the
         * largest other rank's block), in float32 (hs_seis_put_decimated converts) */
        if (s->ctx->rank == 0) {
            host(t, WRITER, 1, output_points(c) * 4);
            host(t, WRITER, 1, largest_other_block(s) * 4);
            /* and the library's cache of the variables with a record a step (the wavefield's
             * components) and of those written once or rewritten (vp, vs, the gradient, the
             * inversion's models) */
            const int fmt = hs_params_enum(p, "output.format"), netcdf = fmt == HS_OUTPUT_NETCDF || (fmt == HS_OUTPUT_AUTO && HS_HAVE_NETCDF);
            /* (a collective file, where the build writes NetCDF in parallel, passes no chunk through
             * the cache) */
            const int gathered = !HS_HAVE_NETCDF_PARALLEL || hs_params_enum(p, "output.parallel") == HS_OUTPUT_PARALLEL_OFF;
            if (netcdf && gathered) {
                const double plane = output_points(c) * 4, records = (double)s->nsteps * c->shots + 1;
                const int forward = c->mode == HS_SEIS_FORWARD, timed = forward ? (int)ncomp : 0;
                const int once = forward ? (c->model == HS_SEIS_ELASTIC ? 2 : 1) : c->mode == HS_SEIS_FWI ? 3 : 2;
                t->host[WRITER] += timed * hs_output_netcdf_cache_bytes(plane, records) + once * hs_output_netcdf_cache_bytes(plane, 1);
                host(t, RECORD, 1, plane); /* and a copy of the record while it writes it (measured) */
            }
            /* HDF5 written through rank 0 (serial HDF5, or output.parallel = off) also holds a copy
             * of the record while it writes it: measured one plane beyond the gather (800^2 with
             * snapshots every step: 5.2 MB over output.format = none, 2.6 MB counted before) */
            const int hdf5 = fmt == HS_OUTPUT_HDF5 || (fmt == HS_OUTPUT_AUTO && !HS_HAVE_NETCDF);
            const int h5_gathered = !HS_HAVE_HDF5_PARALLEL || hs_params_enum(p, "output.parallel") == HS_OUTPUT_PARALLEL_OFF;
            if (hdf5 && h5_gathered) host(t, RECORD, 1, output_points(c) * 4);
        }
        if (c->mode == HS_SEIS_FORWARD && c->model == HS_SEIS_ELASTIC) {
            /* hs_seis_elastic_velocities_now: the velocities saved on the side (whole storages) and
             * the CPML memory of the nd x nd derivatives on the slabs; the nd written arrays */
            double along[3];
            const double slab = c->pml > 0 ? slab_points(s, along) : 0;
            dev(t, RECORD, c->ndim, (double)hs_field_layout_bytes(s->d, s->dtype, s->hw, -1));
            if (slab > 0) dev(t, RECORD, 1, c->ndim * c->ndim * slab * es);
            host(t, RECORD, c->ndim, (nloc + 1) * 8);
        }
    }
    /* a checkpoint copies the traces to the host */
    if (c->mode == HS_SEIS_FORWARD) host(t, CHECKPOINT, 1, (traces + 1) * 8);
    /* the seismograms at the end: all of them and this rank's (hs_seismic_traces), then the SEG-Y
     * component and its samples, the station file's y, index and row, and the writer's gather of a
     * row on rank 0 (io/output.c: indices and values) */
    if (strcmp(c->seismograms, "none") != 0) {
        host(t, END, 2, (traces + 1) * 8);
        host(t, END, 1, ((double)s->nsamples * nrec + 1) * 8);
        host(t, END, 1, (double)s->nsamples * 4);
        host(t, END, 5, (nrec + 1) * 8);
    }
}

/* The adjoint modes' state (hs_seis_adjoint_create, fwi_create) and work. */
static void adjoint(tally *t)
{
    const hs_seis *s = t->s;
    const hs_seis_config *c = &s->cfg;
    const double es = (double)hs_dtype_size(s->dtype), nloc = local_points(s), nrec = (double)s->rec.n, S = stencil_max(c);
    const double n = global_points(c), storage = (double)hs_field_layout_bytes(s->d, s->dtype, s->hw, -1);
    const double count = storage / es;
    /* U, V, G and the adjoint CPML memory; the residual; the receivers as sources, the source's set */
    fields(t, ADJ, 3 + (c->pml > 0 ? 2 * c->ndim : 0));
    dev(t, ADJ, 1, ((double)s->nsamples * nrec + 1) * 8);
    stencil_lists(t, ADJ_BUILD, nrec);
    point_set(t, ADJ, ADJ_BUILD, nrec * S, nrec * S);
    point_set(t, ADJ, ADJ_BUILD, S, S);
    /* the forward states: seismic.snapshots slots (at most one a step) of the wavefield pair and the
     * packed CPML slabs, and p^{n+1}.  snapshots = 0 sizes the store from the memory left (80% of
     * the GPU's, a quarter of the host's; every step's p where that holds them): one slot, its least */
    double along[3] = {0, 0, 0};
    if (c->pml > 0) slab_points(s, along);
    double pack = 0;
    for (int d = 0; d < c->ndim; d++) pack += 2 * along[d];
    double slots = c->snapshots > 0 ? fmin((double)c->snapshots, (double)s->nsteps) : 1;
    if (slots < 1) slots = 1;
    dev(t, ADJ, 2 * slots + 1, storage);
    if (pack > 0) dev(t, ADJ, slots, pack * es);
    host(t, ADJ, 3, (2 * slots + 1) * 8);
    /* the observed seismograms (read by check, every shot), the gradient, its staging, the model */
    host(t, HELD, 1, ((double)c->shots * (double)s->nsamples * nrec + 1) * 8);
    host(t, ADJ, 1, (nloc + 1) * 8);
    pinned(t, ADJ, 1, (nloc + 1) * es);
    host(t, ADJ, 2, n * 8);
    if (c->mode != HS_SEIS_FWI) return;
    /* the inversion: the accepted x, vp and gradient, the last evaluation's x, x on the device, the
     * optimiser; each evaluation stages x and g (global) and the new model's coefficients; a
     * checkpoint saves the optimiser's state */
    host(t, ADJ, 2, (n + 1) * 8);
    host(t, ADJ, 1, (nloc + 1) * 8);
    host(t, ADJ, 1, n * 8);
    host(t, ADJ, 1, (4.0 * c->fwi_iterations + 5) * 8);
    dev(t, ADJ, 1, (n + 1) * 8);
    hs_lbfgs_opts o;
    memset(&o, 0, sizeof o);
    o.max_iter = c->fwi_iterations;
    o.max_evals = 4 * c->fwi_iterations + 4;
    hs_lbfgs_footprint(s->ctx, (size_t)n, &o, &t->dev[ADJ], &t->host[ADJ]);
    host(t, EVALUATION, 2, n * 8);
    host(t, EVALUATION, 1, count * 8);
    host(t, EVALUATION, 1, count * es);
    host(t, CHECKPOINT, 1, ((double)hs_lbfgs_state_count_for((size_t)n, &o) + 1) * 8);
}

void hs_seis_memory(const hs_seis *s, const hs_params *p, double *device, double *host_bytes)
{
    tally t = {.s = s};
    forward_state(&t);
    forward_run(&t, p);
    if (s->cfg.mode != HS_SEIS_FORWARD) adjoint(&t);
    *device = peak(t.dev);
    *host_bytes = peak(t.host);
}

void hs_seis_memory_fields(const hs_seis *s, double *device, double *host_bytes)
{
    tally t = {.s = s};
    fields(&t, HELD, forward_fields(s));
    *device = t.dev[HELD];
    *host_bytes = t.host[HELD];
}
