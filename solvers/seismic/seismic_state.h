/* The seismic solver's state and the pieces its files share: point sets, receivers, boxes, kernel launches. */
#ifndef HS_SEISMIC_STATE_H
#define HS_SEISMIC_STATE_H

#include <stdint.h>

#include "io/checkpoint.h"
#include "io/output.h"
#include "io/params.h"
#include "kernels/grid/grid.h"
#include "solvers/seismic/seismic_impl.h"
#include "solvers/seismic/seismic_setup.h"

/* Points of the grid with weights, in groups (see hs_seis_launch): the receivers' interpolation
 * stencils (a group per receiver component this rank has points of) or a source's (a group per
 * element).  Device arrays, and the host copies needed to map groups back. */
typedef struct hs_seis_points {
    int64_t npts, ngrp;
    int64_t *gptr, *pidx, *prec; /* device */
    double *pwt;                 /* device */
    int64_t *group_of;           /* host: SAMPLE: the global output column of each group */
} hs_seis_points;

/* The receivers of the run (every rank holds the whole list). */
typedef struct hs_seis_receivers {
    int64_t n;
    char **names;
    double *x[3];        /* coordinates per dimension (m); x[ndim..2] NULL */
} hs_seis_receivers;

/* One component recorded at the receivers: its field role and where its points sit relative to
 * the grid points (1/2 along the dimensions where it is staggered). */
typedef struct hs_seis_component {
    const char *name, *units, *long_name, *standard_name;
    int role;
    double shift[3];
} hs_seis_component;

#define HS_SEIS_MAX_COMP 3
#define HS_SEIS_MAX_SRC 6

typedef struct hs_seis {
    hs_ctx *ctx;                /* the run's, or the shot group's (group_ctx) */
    hs_ctx *group_ctx;          /* owned: this rank's shot group (shot_groups > 1), else NULL */
    int group;                  /* the shot group of this rank */
    hs_seis_config cfg;
    hs_decomp *d;
    int hw;                        /* ghost layers of every field (one layout for all) */
    int radius;                    /* order / 2 */
    hs_dtype dtype;
    hs_field *f[HS_SEIS_NF];       /* fields by role */
    hs_field *lay;                 /* the layout every field shares (one of f) */
    void *prof[3][4];              /* CPML a, b at points, a, b at half points (device, the fields' type) */
    double coef2[5], coef1[4], coefs[4]; /* the scheme's difference coefficients (unscaled) */
    /* time */
    double dt, dt_limit, time;
    int64_t step, nsteps;       /* within the current shot */
    int shot;                   /* the current shot (0 .. cfg.shots - 1) */
    double *observed;           /* gradient/FWI: the observed seismograms the check read, kept for the adjoint state (host) */
    /* boxes: the core (no CPML within reach) split for the overlapped exchange, and the CPML slabs */
    hs_box core_inner[1], core_shell[6], pml_box[6];
    int ncore_inner, ncore_shell, npml_box;
    hs_box core;                   /* the core as one box (empty along some dimension when there is none) */
    int exchange;                  /* the wavefield exchanges halos (more than one rank) */
    int psi_exchange[3];           /* PSI_d must be exchanged (a rank boundary cuts the d layer) */
    /* the constant-density acoustic step's CPML by AC_MARCH (where no PSI_d is exchanged): per
     * dimension the columns
     * through its layers (the points within pml + margin of them: the CPML slabs are their union) */
    int march;
    hs_box march_box[3][2];
    int nmarch[3];
    double pml_d0[3];              /* CPML damping scale per dimension */
    /* material */
    double vmin, vmax;             /* smallest (S, or P where no S) and largest speeds */
    double vmax_allowed;           /* the largest speed the time step allows: vmax, 1.5 vmax in an inversion */
    int vmin_is_fluid;             /* elastic: vmin is the P speed of a point with vs = 0 */
    double *vp_host;               /* local vp of the points this rank owns (x fastest) */
    /* sources and receivers */
    hs_seis_points src[HS_SEIS_MAX_SRC]; /* injection point sets per source component */
    int nsrc;
    int src_role[HS_SEIS_MAX_SRC];
    double src_scale[HS_SEIS_MAX_SRC];   /* per component: value = scale * s(t) */
    hs_seis_receivers rec;
    hs_seis_component comp[HS_SEIS_MAX_COMP];
    int ncomp;
    hs_seis_points rpts[HS_SEIS_MAX_COMP]; /* sampling point sets per component */
    int64_t nsamples;              /* samples per trace: nsteps / record_every + 1 */
    int64_t nrec_cols;             /* columns of the local trace buffer (sum of the components' groups) */
    double *trace;                 /* device: nsamples x nrec_cols */
    int64_t samples_taken;
    double *vs_host;               /* local vs (elastic) */
    double *file_vp, *file_vs, *file_rho; /* a file model, whole grid (until the fields are built) */
    double speed2_max;             /* the CFL limit's speed^2: vmax^2, or more where the density varies */
    double ppw;                    /* points per minimum wavelength */
    /* output */
    double *coords[3], *edges[3];
    int64_t out_n[3];
    /* elastic snapshots: v_d lives half a spacing beyond the points along d, on a grid of its own
     * (the main one with dimension d_half in place of d): its coordinates and edges along d */
    double *hcoords[3], *hedges[3];
    hs_grid_desc vgrid[3];
    double *host;                  /* staging, local interior */
    double *out_host;              /* staging of the decimated block */
    int var[8], var_vp, var_vs;
    int nvars, static_written;
    char *params_ini, *history;    /* for the seismogram file */
    const char *time_units;
    int seis_format;               /* output.format */
    const double *src_series;      /* test hook: the source's values per step instead of the wavelet */
    /* adjoint modes (seismic_adjoint.c) */
    struct hs_seis_adjoint *adj;
    int adjoint_done;
} hs_seis;

/* ---------------------------------------------------------------- seismic.c */

/* Every input rule (`check`), and the part of the state they need.  Collective. */
int hs_seis_validate(hs_seis *s, const hs_params *p);
/* The model at global point (i, j, k), clamped to the grid. */
void hs_seis_model_at(const hs_seis *s, int64_t i, int64_t j, int64_t k, double *vp, double *vs, double *rho);
/* What the run allocates at its peak on this rank, in bytes as the allocators take them: on the
 * device (fields with their halo plans, profiles, point sets, traces, the adjoint's forward states)
 * and on the host (the model file and the coefficients' staging while the state is built; vp, vs
 * and the staging arrays; the observed seismograms, the global models and the optimiser of the
 * adjoint modes; a record's gather, a checkpoint's and the end's seismograms), from the
 * configuration and the decomposition, before any of it exists (seismic_memory.c).  The adjoint
 * modes with seismic.snapshots = 0 size their store of forward states from the memory left when
 * they start, and are counted at its least (one slot).  Not collective. */
void hs_seis_memory(const hs_seis *s, const hs_params *p, double *device, double *host);
/* The forward state's fields alone: a lower bound of hs_seis_memory that needs no pass over the
 * model (checked first, so that a grid far too large is refused at once, not after the model's
 * extents have visited every point). */
void hs_seis_memory_fields(const hs_seis *s, double *device, double *host);
/* A zeroed field of the shared layout in role `role`. */
int hs_seis_new_field(hs_seis *s, int role);
/* Values at every point of the allocation (ghosts included) from fn(global index), and their upload. */
void hs_seis_fill_alloc(const hs_seis *s, double *vals, double (*fn)(const hs_seis *, const int64_t g[3], void *), void *user);
int hs_seis_upload_alloc(hs_seis *s, hs_field *f, const double *vals);
/* One acoustic step (no samples). */
int hs_seis_acoustic_step(hs_seis *s);
/* One forward step (with its samples); the samples of every component at sample index `sample`. */
int hs_seis_forward_step(hs_seis *s);
int hs_seis_record(hs_seis *s, int64_t sample);
/* The same, mixed into what the trace holds: trace = keep trace + scale samples. */
int hs_seis_record_mix(hs_seis *s, int64_t sample, double keep, double scale);
/* The acoustic free surface on field f (its odd image). */
int hs_seis_mirror(hs_seis *s, hs_field *f);
/* The owned points of f as doubles in s->host; a local array written decimated by the snapshot stride. */
int hs_seis_get_local(hs_seis *s, hs_field *f);
int hs_seis_put_decimated(hs_seis *s, hs_writer *w, int var, const double *local);
/* The seismogram files (station data and SEG-Y).  Collective. */
int hs_seis_write_seismograms(hs_seis *s);
/* The roles of the fields that carry the state from step to step. */
int hs_seis_state_roles(const hs_seis *s, int *roles);

/* ---------------------------------------------------------------- seismic_elastic.c */

int hs_seis_elastic_build(hs_seis *s);
int hs_seis_elastic_sources(hs_seis *s);
int hs_seis_elastic_step(hs_seis *s);
/* The free surface's stress images (after a restore). */
int hs_seis_elastic_image(hs_seis *s);

/* ---------------------------------------------------------------- seismic_adjoint.c */

/* Their input rules (the observed file), their state, their work, output and teardown. */
/* The source of shot k (0-based) in place of the current one (s->shot, s->cfg.source, the source points). */
int hs_seis_move_source(hs_seis *s, int k);
void hs_seis_shot_position(const hs_seis_config *c, int k, double x[3]);
/* A file name of shot k (0-based): the first `stem` characters of name, with _shotK (K = k + 1)
 * when the run has several shots (the forward run's seismograms NAME_shotK, the observed files read
 * back with the same rule). */
void hs_seis_shot_stem(const hs_seis_config *c, const char *name, size_t stem, int k, char *out, size_t len);
int hs_seis_adjoint_check(hs_seis *s, const hs_params *p);
int hs_seis_adjoint_create(hs_seis *s, const hs_params *p);
int hs_seis_adjoint_run(hs_seis *s);
/* Elastic: the velocities at the time of the state's stresses (see seismic_elastic.c). */
int hs_seis_elastic_velocities_now(hs_seis *s, double *const *out);
/* The inversion (mode = fwi) on the driver's time axis, one L-BFGS iteration a step: up to max_steps
 * iterations short of `until`; a stop asked for inside an iteration (hs_driver_interrupted) goes
 * back to its start and returns (the driver then checkpoints and exits 3).  Whether the optimiser
 * has stopped by a rule of its own; the iterations done; the state at an iteration boundary in a
 * checkpoint, and back. */
int hs_seis_fwi_advance(hs_seis *s, double until, int64_t max_steps, int64_t *taken);
int hs_seis_fwi_finished(const hs_seis *s);
int hs_seis_fwi_iterations(const hs_seis *s);
int hs_seis_fwi_checkpoint(hs_seis *s, hs_checkpoint *k);
int hs_seis_fwi_restore(hs_seis *s, hs_checkpoint *k);
int hs_seis_adjoint_define_vars(hs_seis *s, hs_writer *w);
int hs_seis_adjoint_write(hs_seis *s, hs_writer *w);
int hs_seis_adjoint_finish(hs_seis *s);
void hs_seis_adjoint_destroy(hs_seis *s);

/* ---------------------------------------------------------------- seismic_geom.c */

/* The receivers of the configuration (line, grid or file): input errors name the key (a receiver
 * outside the model among them).  Not collective. */
int hs_seis_receivers_make(const hs_params *p, const hs_seis_config *c, hs_seis_receivers *r);
void hs_seis_receivers_free(hs_seis_receivers *r);

/* The 8-point Lagrange interpolation weights along one dimension at grid coordinate g (in units
 * of the spacing): points first..first+7 with weights w[0..7]; exact (a single weight 1) when g is
 * a whole number. */
void hs_seis_lagrange8(double g, int64_t *first, double w[8]);

/* The interpolation stencil of position x (m) on the grid of a field whose points sit at
 * (i + shift) h: up to 8^ndim (global index, weight) pairs, the weights of points outside the grid
 * dropped and, with a free surface, the weights of points above it folded onto their images below
 * with factor `image` (-1: odd, as pressure; +1: even); the point on the surface itself gets
 * `surface` times its weight.  Returns the count.  Not collective. */
int hs_seis_stencil(const hs_seis_config *c, const double x[3], const double shift[3], double image, double surface,
                    int64_t gidx[][3], double *w);
/* The most points hs_seis_stencil gives: 8 along each dimension. */
static inline int64_t hs_seis_stencil_max(const hs_seis_config *c) { return c->ndim == 3 ? 512 : 64; }

/* Build a point set on this rank from a list of stencils: receiver r's stencil is entries
 * [first[r], first[r+1]) of gidx/w; only points this rank owns are kept.  sample = 1: grouped by
 * receiver (group_of[g] = r + column0); sample = 0: grouped by element, prec = r.  Device arrays
 * on s->ctx.  Not collective. */
int hs_seis_points_build(hs_seis *s, int64_t nrec, const int64_t *first, int64_t (*gidx)[3], const double *w, int sample,
                         int64_t column0, hs_seis_points *pts);
void hs_seis_points_free(hs_seis *s, hs_seis_points *pts);

/* CPML profiles (Komatitsch & Martin 2007, kappa = 1): d(x) = d0 (x / L)^2, alpha(x) = pi f0 (1 - x / L)
 * with x the depth into the layer, d0 = -3 vmax ln(R) / (2 L); b = exp(-(d + alpha) dt), a = d (b - 1) /
 * (d + alpha); 0 outside the layer.  Fills s->prof for every used dimension (points and half
 * points), on the local allocation.  Not collective. */
int hs_seis_profiles(hs_seis *s);

/* The boxes of the step: the core (points farther than margin from any CPML layer) split into the
 * part away from the exchanged faces (inner) and the shell, and the CPML slabs.  halo_reach: the
 * stencil's reach for the split; margin: the CPML memory's reach.  Not collective. */
void hs_seis_boxes(hs_seis *s, int halo_reach, int margin);
/* The CPML memory's reach, the margin of hs_seis_boxes: the stencil's radius and one. */
static inline int hs_seis_pml_margin(const hs_seis *s) { return s->radius + 1; }
/* The core of this rank's box (local point indices, from the decomposition: it needs no field) and
 * the CPML slabs around it, their count returned; what hs_seis_boxes takes, and the memory estimate
 * before the fields exist.  Not collective. */
int hs_seis_slabs(const hs_seis *s, int margin, hs_box *core, hs_box slabs[6]);

/* ---------------------------------------------------------------- seismic_kernel.c */

/* A launch record with the layout, coefficients and profiles of s filled in, for op over box
 * (NULL: an empty box). */
void hs_seis_launch_init(const hs_seis *s, hs_seis_op op, const hs_box *box, hs_seis_launch *L);
/* Run it on s's backend (on the context's stream). */
int hs_seis_launch_run(const hs_seis *s, const hs_seis_launch *L);
/* op over each of n boxes, fields as in `proto` (its op and box are replaced). */
int hs_seis_run_boxes(const hs_seis *s, hs_seis_launch *proto, hs_seis_op op, const hs_box *boxes, int n);
/* Inject value * (weights) into target (multiplied pointwise by mult, NULL: none); or sample src
 * into trace (ngrp values): trace = keep * trace + scale * samples. */
int hs_seis_inject(const hs_seis *s, const hs_seis_points *pts, hs_field *target, hs_field *mult, double value,
                   const double *vals);
int hs_seis_sample(const hs_seis *s, const hs_seis_points *pts, hs_field *src, double *trace, double keep, double scale);
/* trace[g] = sum_{k in g} wt_k x[idx_k] y[idx_k] (device trace of ngrp values). */
int hs_seis_sample_product(const hs_seis *s, const hs_seis_points *pts, hs_field *x, hs_field *y, double *trace);

#endif
