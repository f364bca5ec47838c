/* The surrogate's data: gridded time series read from NetCDF/HDF5 files, checked, normalised and cut into windows. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/grid_input.h"
#include "io/output.h"
#include "kernels/comm/comm.h"
#include "kernels/half.h"
#include "ml_surrogate/surrogate.h"

struct hs_surr_data {
    hs_ctx *ctx;
    int nfiles, nvars, k_in, k_out, stride, min_frames;
    char **files;
    char vars[HS_SURR_MAX_VARS][HS_SURR_NAME_MAX];  /* as given: NAME or NAME@LEVEL */
    char src[HS_SURR_MAX_VARS][HS_SURR_NAME_MAX];   /* NAME: the variable in the files */
    int has_level[HS_SURR_MAX_VARS];
    double level[HS_SURR_MAX_VARS];
    int64_t nlev[HS_SURR_MAX_VARS], ilev[HS_SURR_MAX_VARS];  /* the file being read: levels, and the one taken */
    int ndims[HS_SURR_MAX_VARS];                              /* the file being read: 3 (time, y, x) or 4 (time, level, y, x) */
    char level_units[HS_SURR_MAX_VARS][HS_SURR_NAME_MAX];     /* of the level coordinate ("1": none) */
    int64_t *nframes, *frame0, total;  /* frames of each file, global index of its first, all */
    double **times;                    /* time coordinate of each file */
    char (*time_units)[256];           /* and its units (files may count from different origins) */
    hs_surr_grid grid;
    double *gx, *gy;
    float **frames;                    /* each file: nframes x V x ny x nx, physical units (normalised as batches are filled) */
    hs_node_shared **held;             /* each file's frames, held once per node (the node's ranks share them) */
    double mean[HS_SURR_MAX_VARS], sd[HS_SURR_MAX_VARS];
    double *clim;                      /* V x ny x nx */
    int64_t bound[2];                  /* the splits' first global frames (validation, test) */
    int64_t nwin[3];
    int *win_file[3];
    int64_t *win_first[3];
};

/* ------------------------------------------------------------------ accessors */

int64_t hs_surr_data_windows(const hs_surr_data *d, int split) { return d->nwin[split]; }

void hs_surr_data_window(const hs_surr_data *d, int split, int64_t w, int *file, int64_t *first)
{
    *file = d->win_file[split][w];
    *first = d->win_first[split][w];
}

const hs_surr_grid *hs_surr_data_grid(const hs_surr_data *d) { return &d->grid; }
double hs_surr_data_time(const hs_surr_data *d, int file, int64_t frame) { return d->times[file][frame]; }
const char *hs_surr_data_time_units(const hs_surr_data *d, int file) { return d->time_units[file]; }
int64_t hs_surr_data_frames(const hs_surr_data *d, int file) { return d->nframes[file]; }
const double *hs_surr_data_mean(const hs_surr_data *d) { return d->mean; }
const double *hs_surr_data_std(const hs_surr_data *d) { return d->sd; }
const double *hs_surr_data_climatology(const hs_surr_data *d) { return d->clim; }

const float *hs_surr_data_frame(const hs_surr_data *d, int file, int64_t frame)
{
    size_t fs = (size_t)d->nvars * d->grid.ny * d->grid.nx;
    return d->frames && d->frames[file] ? d->frames[file] + (size_t)frame * fs : NULL;
}

void hs_surr_data_close(hs_surr_data *d)
{
    if (!d) return;
    for (int f = 0; f < d->nfiles; f++) {
        if (d->files) free(d->files[f]);
        if (d->times) free(d->times[f]);
        if (d->held) hs_node_shared_free(d->held[f]);
    }
    free(d->files), free(d->times), free(d->time_units), free(d->frames), free(d->held), free(d->nframes), free(d->frame0);
    free(d->gx), free(d->gy), free(d->clim);
    for (int s = 0; s < 3; s++) free(d->win_file[s]), free(d->win_first[s]);
    free(d);
}

/* ------------------------------------------------------------------ reading */

/* The shape of variable v of a file: (time, y, x), or (time, 1, y, x). */
/* A coordinate variable's values (index values 0, 1, ... when the file has none of that name). */
static int read_coord(hs_reader *r, const char *file, const char *name, int64_t n, double *out, char *units,
                      size_t ulen)
{
    for (int64_t i = 0; i < n; i++) out[i] = (double)i;
    if (units) snprintf(units, ulen, "1");
    if (!hs_reader_has_var(r, name)) return HS_OK;
    int64_t shape[8];
    int rank;
    HS_CHECK(hs_reader_var_shape(r, name, shape, &rank));
    if (rank != 1 || shape[0] != n) return HS_OK; /* not a coordinate variable of this dimension */
    HS_CHECK(hs_reader_read(r, name, out));
    for (int64_t i = 0; i < n; i++)
        if (!isfinite(out[i])) return hs_input_error(file, 0, NULL, "coordinate '%s' has a non-finite value at %lld", name, (long long)i);
    if (units) {
        int found;
        HS_CHECK(hs_reader_attr_text(r, name, "units", units, ulen, &found));
        if (!found) snprintf(units, ulen, "1");
    }
    return HS_OK;
}

void hs_surr_var_out_name(const char *name, int has_level, double level, char *out, size_t len)
{
    if (has_level) snprintf(out, len, "%s%.10g", name, level);
    else snprintf(out, len, "%s", name);
}

int hs_surr_var_spec(const char *spec, char name[HS_SURR_NAME_MAX], int *has_level, double *level)
{
    const char *at = strrchr(spec, '@');
    *has_level = at != NULL, *level = 0;
    size_t n = at ? (size_t)(at - spec) : strlen(spec);
    if (n == 0 || n >= HS_SURR_NAME_MAX) return HS_FAIL(HS_ERR_INPUT, "'%s' names no variable", spec);
    memcpy(name, spec, n), name[n] = 0;
    if (!at) return HS_OK;
    char *end;
    *level = strtod(at + 1, &end);
    if (end == at + 1 || *end || !isfinite(*level)) return HS_FAIL(HS_ERR_INPUT, "'%s': the level '%s' is not a number", spec, at + 1);
    return HS_OK;
}

/* Shape of variable v of the file as (time, y, x): a (time, level, y, x) variable with one level, or
 * with NAME@LEVEL the level whose coordinate value (its index where the file has no coordinate
 * variable) is LEVEL; dims gets the three dimension names; d->nlev[v], d->ilev[v] the levels and
 * the one taken. */
static int var_shape(hs_surr_data *d, hs_reader *r, const char *file, int v, int64_t *nt, int64_t *ny, int64_t *nx,
                     char dims[8][HS_READER_NAME_MAX])
{
    const char *name = d->src[v];
    if (!hs_reader_has_var(r, name)) return hs_input_error(file, 0, NULL, "no variable '%s' (surrogate.variables)", name);
    int64_t shape[8];
    int rank;
    HS_CHECK(hs_reader_var_shape(r, name, shape, &rank));
    HS_CHECK(hs_reader_var_dims(r, name, dims, &rank));
    d->nlev[v] = 1, d->ilev[v] = 0, d->ndims[v] = rank;
    if (rank == 4) { /* (time, level, y, x): one level of it */
        const int64_t nl = shape[1];
        if (d->has_level[v]) {
            double *lv = malloc((size_t)nl * sizeof *lv);
            char units[HS_SURR_NAME_MAX];
            if (!lv) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
            int rc = read_coord(r, file, dims[1], nl, lv, units, sizeof units);
            snprintf(d->level_units[v], sizeof d->level_units[v], "%s", units);
            int64_t found = -1;
            for (int64_t i = 0; rc == HS_OK && i < nl && found < 0; i++)
                /* to single precision: a float coordinate's 0.85 is 0.8500000238 */
                if (fabs(lv[i] - d->level[v]) <= 1e-6 * fmax(1.0, fabs(d->level[v]))) found = i;
            if (rc == HS_OK && found < 0) {
                char list[160] = "";
                size_t len = 0;
                for (int64_t i = 0; i < nl && len + 24 < sizeof list; i++)
                    len += (size_t)snprintf(list + len, sizeof list - len, "%s%.10g", i ? " " : "", lv[i]);
                if (len + 24 >= sizeof list) snprintf(list + len, sizeof list - len, " ...");
                rc = hs_input_error(file, 0, NULL, "variable '%s' has no level %.10g along '%s' (it has %s)", name, d->level[v],
                                    dims[1], list);
            }
            free(lv);
            HS_CHECK(rc);
            d->ilev[v] = found;
        } else if (nl != 1) {
            return hs_input_error(file, 0, NULL, "variable '%s' has %lld levels along '%s': name one in surrogate.variables, as "
                                  "%s@LEVEL (a value of '%s')", name, (long long)nl, dims[1], name, dims[1]);
        }
        d->nlev[v] = nl;
        shape[1] = shape[2], shape[2] = shape[3];
        memcpy(dims[1], dims[2], HS_READER_NAME_MAX), memcpy(dims[2], dims[3], HS_READER_NAME_MAX);
        rank = 3;
    } else if (d->has_level[v]) {
        return hs_input_error(file, 0, NULL, "variable '%s' has no level dimension (%d dimensions), so '%s' names a level it "
                              "lacks", name, rank, d->vars[v]);
    }
    if (rank != 3)
        return hs_input_error(file, 0, NULL, "variable '%s' has %d dimensions; the surrogate reads (time, y, x) fields "
                              "(or (time, level, y, x), one level)", name, rank);
    *nt = shape[0], *ny = shape[1], *nx = shape[2];
    return HS_OK;
}


int hs_surr_same_coords(const double *a, const double *b, int64_t n)
{
    double scale = 0;
    for (int64_t i = 0; i < n; i++) scale = fmax(scale, fabs(a[i]));
    for (int64_t i = 0; i < n; i++)
        if (fabs(a[i] - b[i]) > 1e-9 * scale + 1e-300) return 0;
    return 1;
}

int hs_surr_dims_swapped(const char *ya, const char *xa, char yaxis_a, char xaxis_a, const char *yb, const char *xb, char yaxis_b,
                         char xaxis_b)
{
    if (strcmp(ya, xa) != 0 && !strcmp(ya, xb) && !strcmp(xa, yb)) return 1;
    return (yaxis_a && yaxis_a == xaxis_b) || (xaxis_a && xaxis_a == yaxis_b);
}

/* The horizontal axis ('X' or 'Y') a dimension stands for, by its coordinate's CF `axis` or its
 * name (the shared rule of io/grid_input.h), 0 when it says neither: a file naming (y, x) and one
 * whose coordinates carry the axes stored the other way round were not compared. */
static char spatial_axis(hs_reader *r, const char *dim)
{
    char a = hs_grid_input_dim_axis(r, dim);
    return a == 'x' ? 'X' : a == 'y' ? 'Y' : 0;
}

/* A variable's `units` attribute, blanks around it dropped ("1" when it has none or it is blank):
 * every file's must be the first's, and a model's the data's. */
static int var_units(hs_reader *r, const char *name, char *out, size_t len)
{
    char buf[HS_SURR_NAME_MAX * 4];
    int found = 0;
    HS_CHECK(hs_reader_attr_text(r, name, "units", buf, sizeof buf, &found));
    const char *a = buf;
    size_t n = found ? strlen(buf) : 0;
    while (n > 0 && (*a == ' ' || *a == '\t')) a++, n--;
    while (n > 0 && (a[n - 1] == ' ' || a[n - 1] == '\t')) n--;
    if (n == 0) a = "1", n = 1;
    snprintf(out, len, "%.*s", (int)n, a);
    return HS_OK;
}

/* A dimension whose coordinate variable is a CF time: units "... since ...", axis T or standard_name time. */
static int is_time_dim(hs_reader *r, const char *dim)
{
    if (!hs_reader_has_var(r, dim)) return 0;
    char buf[256];
    int found = 0;
    if (hs_reader_attr_text(r, dim, "units", buf, sizeof buf, &found) == HS_OK && found && strstr(buf, " since ")) return 1;
    if (hs_reader_attr_text(r, dim, "axis", buf, sizeof buf, &found) == HS_OK && found && !strcmp(buf, "T")) return 1;
    if (hs_reader_attr_text(r, dim, "standard_name", buf, sizeof buf, &found) == HS_OK && found && !strcmp(buf, "time")) return 1;
    hs_error_clear();
    return 0;
}

/* Dimensions, coordinates and times of file f; the first file sets the grid, the others must match it. */

/* The network steps from frame to frame by one fixed interval: a file's frames must be equally
 * spaced (a gap, two runs' outputs joined, or output intervals changed by a restart taught it a
 * mixture of steps without a word), and every file's spacing the first file's, in seconds when both
 * have CF time units, else in the same units.  Times are compared to 1e-3 of the step plus the
 * rounding of float32 times. */
static int check_time_spacing(const hs_surr_data *d, int f, int64_t nt, const char *dim)
{
    const double *t = d->times[f];
    if (nt < 2) return HS_OK;
    double big = fmax(fabs(t[0]), fabs(t[nt - 1]));
    const double step = t[1] - t[0], tol = 1e-3 * step + 2 * 6e-8 * big;
    for (int64_t k = 2; k < nt; k++)
        if (fabs(t[k] - t[k - 1] - step) > tol)
            return hs_input_error(d->files[f], 0, NULL, "the frames are not equally spaced: '%s' steps by %.9g %s from time step %lld "
                                  "to %lld and by %.9g from %lld to %lld (the network learns one fixed interval: a gap or "
                                  "joined runs?)", dim, step, d->time_units[f], 0LL, 1LL, t[k] - t[k - 1],
                                  (long long)(k - 1), (long long)k);
    if (f == 0 || d->nframes[0] < 2) return HS_OK;
    const double step0 = d->times[0][1] - d->times[0][0];
    double s0 = hs_time_unit_seconds(d->time_units[0]), s1 = hs_time_unit_seconds(d->time_units[f]);
    double a = step, b = step0;
    if (s0 > 0 && s1 > 0) a *= s1, b *= s0;
    else if (strcmp(d->time_units[0], d->time_units[f]) != 0) /* it passed unchecked: "1" among "seconds since" files */
        return hs_input_error(d->files[f], 0, NULL, "its time axis '%s' is in '%s' and %s's in '%s': the frame intervals cannot be "
                              "compared (the network learns one); give the files time axes of the same kind (CF 'UNIT since DATE')",
                              dim, d->time_units[f], d->files[0], d->time_units[0]);
    if (fabs(a - b) > 1e-3 * fabs(b) + 2 * 6e-8 * big * (s1 > 0 ? s1 : 1))
        return hs_input_error(d->files[f], 0, NULL, "frames %.9g %s apart, %s's %.9g %s apart: every file must have the "
                              "first's interval (the network learns one)", step, d->time_units[f], d->files[0], step0,
                              d->time_units[0]);
    return HS_OK;
}

static int read_layout(hs_surr_data *d, int f, hs_reader *r)
{
    const char *file = d->files[f];
    char dims[8][HS_READER_NAME_MAX];
    int64_t nt = 0, ny = 0, nx = 0;
    for (int v = 0; v < d->nvars; v++) {
        int64_t t = 0, y = 0, x = 0;
        char vd[8][HS_READER_NAME_MAX];
        HS_CHECK(var_shape(d, r, file, v, &t, &y, &x, vd));
        for (int i = 1; i < 3; i++)
            if (is_time_dim(r, vd[i]))
                return hs_input_error(file, 0, NULL, "variable '%s' is (%s, %s, %s): its time dimension '%s' is not the first; "
                                      "the surrogate reads (time, y, x) fields", d->vars[v], vd[0], vd[1], vd[2], vd[i]);
        if (v > 0)
            for (int i = 0; i < 3; i++)
                if (strcmp(vd[i], dims[i]) != 0)
                    return hs_input_error(file, 0, NULL, "variable '%s' is on (%s, %s, %s), '%s' on (%s, %s, %s): the variables "
                                          "must share one grid and time axis", d->vars[v], vd[0], vd[1], vd[2], d->vars[0],
                                          dims[0], dims[1], dims[2]);
        if (v == 0) {
            nt = t, ny = y, nx = x;
            memcpy(dims, vd, sizeof dims);
        } else if (t != nt || y != ny || x != nx) {
            return hs_input_error(file, 0, NULL, "variable '%s' is %lld x %lld x %lld (time, y, x), '%s' %lld x %lld x %lld: "
                                  "the variables must share one grid and time axis",
                                  d->vars[v], (long long)t, (long long)y, (long long)x, d->vars[0], (long long)nt,
                                  (long long)ny, (long long)nx);
        }
    }
    if (d->min_frames > 0 && nt < d->min_frames)
        return hs_input_error(file, 0, NULL, "%lld time steps, fewer than a forecast starts from (surrogate.input_frames = %d)",
                              (long long)nt, d->min_frames);
    int64_t need = (int64_t)d->k_in + d->k_out;
    if (d->min_frames <= 0 && nt < need)
        return hs_input_error(file, 0, NULL, "%lld time steps, fewer than one window needs (surrogate.input_frames + "
                              "surrogate.output_frames = %lld)", (long long)nt, (long long)need);
    hs_surr_grid *g = &d->grid;
    double *cy = malloc((size_t)ny * sizeof *cy), *cx = malloc((size_t)nx * sizeof *cx);
    d->times[f] = malloc((size_t)nt * sizeof(double));
    if (!cy || !cx || !d->times[f]) {
        free(cy), free(cx);
        return HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
    }
    char yu[HS_SURR_NAME_MAX], xu[HS_SURR_NAME_MAX], tu[256];
    int rc = read_coord(r, file, dims[1], ny, cy, yu, sizeof yu);
    if (rc == HS_OK) rc = read_coord(r, file, dims[2], nx, cx, xu, sizeof xu);
    /* a plain HDF5 file (h5py without dimension scales) has unnamed dimensions and its times in a
     * dataset `time` beside them: read it (the frames were counted 0, 1, 2 ..., so duplicated or
     * uneven times trained without a word) */
    const char *tname = hs_reader_has_var(r, dims[0]) || !hs_reader_has_var(r, "time") ? dims[0] : "time";
    if (rc == HS_OK) rc = read_coord(r, file, tname, nt, d->times[f], tu, sizeof tu);
    if (rc == HS_OK) snprintf(d->time_units[f], sizeof d->time_units[f], "%s", tu);
    if (rc == HS_OK && f == 0) {
        g->ny = (int)ny, g->nx = (int)nx;
        d->gy = cy, d->gx = cx, cy = cx = NULL;
        g->y = d->gy, g->x = d->gx;
        snprintf(g->ydim, sizeof g->ydim, "%s", dims[1]), snprintf(g->xdim, sizeof g->xdim, "%s", dims[2]);
        g->yaxis = spatial_axis(r, dims[1]), g->xaxis = spatial_axis(r, dims[2]);
        snprintf(g->yunits, sizeof g->yunits, "%s", yu), snprintf(g->xunits, sizeof g->xunits, "%s", xu);
        snprintf(g->time_units, sizeof g->time_units, "%s", tu);
        int has_cal = 0;
        if (rc == HS_OK && hs_reader_has_var(r, dims[0]))
            rc = hs_reader_attr_text(r, dims[0], "calendar", g->calendar, sizeof g->calendar, &has_cal);
        for (int v = 0; v < d->nvars && rc == HS_OK; v++) {
            int found;
            rc = var_units(r, d->src[v], g->var_units[v], sizeof g->var_units[v]);
            if (rc == HS_OK) rc = hs_reader_attr_text(r, d->src[v], "long_name", g->var_long[v], sizeof g->var_long[v], &found);
            /* one level of a variable: NAME followed by the level (z@500 -> z500), and the level in the long name */
            hs_surr_var_out_name(d->src[v], d->has_level[v], d->level[v], g->var_name[v], sizeof g->var_name[v]);
            if (d->has_level[v]) {
                char base[256];
                snprintf(base, sizeof base, "%s", g->var_long[v][0] ? g->var_long[v] : d->src[v]);
                const char *lu = strcmp(d->level_units[v], "1") ? d->level_units[v] : "";
                snprintf(g->var_long[v], sizeof g->var_long[v], "%.180s at level %.10g%s%.40s", base, d->level[v], *lu ? " " : "", lu);
            }
        }
    } else if (rc == HS_OK) {
        /* a (time, x, y) file among (time, y, x) ones (xarray's transpose keeps the names): on a
         * square grid with equal coordinates it matched, and was trained on transposed */
        if (hs_surr_dims_swapped(dims[1], dims[2], spatial_axis(r, dims[1]), spatial_axis(r, dims[2]), g->ydim, g->xdim, g->yaxis,
                                 g->xaxis))
            rc = hs_input_error(file, 0, NULL, "variable '%s' is (%s, %s, %s), but in %s on (%s, %s, %s): the spatial dimensions "
                                "are swapped (transposed fields); write them in the first file's order", d->vars[0], dims[0],
                                dims[1], dims[2], d->files[0], dims[0], g->ydim, g->xdim);
        else if (ny != g->ny || nx != g->nx)
            rc = hs_input_error(file, 0, NULL, "grid of %lld x %lld points (y, x), but %s has %d x %d: every file must be "
                                "on one grid", (long long)ny, (long long)nx, d->files[0], g->ny, g->nx);
        else if (!hs_surr_same_coords(d->gy, cy, ny) || !hs_surr_same_coords(d->gx, cx, nx))
            rc = hs_input_error(file, 0, NULL, "coordinates %s, %s differ from those of %s: every file must be on one grid",
                                dims[1], dims[2], d->files[0]);
        /* the same units: a file of h in cm among files in m was trained on (and normalised with) a
         * mixture of both without a word */
        for (int v = 0; v < d->nvars && rc == HS_OK; v++) {
            char u[HS_SURR_NAME_MAX];
            rc = var_units(r, d->src[v], u, sizeof u);
            if (rc == HS_OK && strcmp(u, g->var_units[v]) != 0)
                rc = hs_input_error(file, 0, NULL, "variable '%s' is in '%s', but in %s in '%s': every file must give a variable in "
                                    "the same units", d->src[v], u, d->files[0], g->var_units[v]);
        }
    }
    free(cy), free(cx);
    HS_CHECK(rc);
    for (int64_t t = 1; t < nt; t++)
        if (!(d->times[f][t] > d->times[f][t - 1]))
            return hs_input_error(file, 0, NULL, "the time coordinate '%s' does not increase at step %lld", tname, (long long)t);
    HS_CHECK(check_time_spacing(d, f, nt, tname));
    d->nframes[f] = nt;
    return HS_OK;
}

/* Every record of every variable of file f, checked for NaN and Inf on every rank (so that every rank
 * reports the same input error); kept as float when `keep`, once per node: the node's first rank
 * stores them where its other ranks read them. */
static int read_values(hs_surr_data *d, int f, hs_reader *r, int keep)
{
    const char *file = d->files[f];
    size_t hw = (size_t)d->grid.ny * d->grid.nx, fs = (size_t)d->nvars * hw;
    double *buf = malloc(hw * sizeof *buf);
    if (!buf) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
    int rc = HS_OK, writer = 0; /* writer: this rank stores what it reads (the node's first rank) */
    if (keep) {
        rc = hs_node_shared_alloc(d->ctx->node_comm, (size_t)d->nframes[f] * fs * sizeof(float), &d->held[f],
                                  (void **)&d->frames[f], &writer);
        if (rc != HS_OK) {
            free(buf);
            return rc;
        }
    }
    const int store = keep && writer;
    for (int v = 0; v < d->nvars && rc == HS_OK; v++) {
        /* CF packing (scale_factor, add_offset, _Unsigned) and missing values (_FillValue, missing_value) */
        hs_reader_packing pk;
        rc = hs_reader_packing_of(r, d->src[v], &pk);
        for (int64_t t = 0; t < d->nframes[f] && rc == HS_OK; t++) {
            /* (time, y, x), or the level taken of (time, level, y, x) */
            const int lev = d->ndims[v] == 4;
            const int64_t start[4] = {t, d->ilev[v], 0, 0}, count[4] = {1, 1, d->grid.ny, d->grid.nx};
            rc = hs_reader_read_slab(r, d->src[v], lev ? start : (const int64_t[3]){t, 0, 0}, count + 1 - lev, buf);
            for (size_t p = 0; rc == HS_OK && p < hw; p++) {
                if (hs_reader_is_missing(&pk, buf[p])) {
                    rc = hs_input_error(file, 0, NULL, "variable '%s' has a missing value at time step %lld, point (y %zu, x %zu): "
                                        "the surrogate needs complete fields", d->vars[v], (long long)t, p / d->grid.nx, p % d->grid.nx);
                    break;
                }
                buf[p] = hs_reader_unpack(&pk, buf[p]);
                if (!isfinite(buf[p]) || fabs(buf[p]) > 3e38) {
                    rc = hs_input_error(file, 0, NULL, "variable '%s' is %g at time step %lld, point (y %zu, x %zu): the "
                                        "data must be finite (and within single precision's range)", d->vars[v], buf[p], (long long)t, p / d->grid.nx, p % d->grid.nx);
                    break;
                }
                if (store) d->frames[f][(size_t)t * fs + (size_t)v * hw + p] = (float)buf[p];
            }
        }
    }
    free(buf);
    if (rc == HS_OK && keep) rc = hs_node_shared_publish(d->held[f]);
    return rc;
}

/* ------------------------------------------------------------------ statistics */

/* Per variable (count, mean, M2) of the training frames this rank owns, merged over the ranks in
 * rank order (Chan, Golub & LeVeque's pairwise update), and the per-point sums for the climatology. */
static void merge(double *n, double *mean, double *m2, double nb, double meanb, double m2b)
{
    if (nb == 0) return;
    double na = *n, delta = meanb - *mean, nn = na + nb;
    *mean += delta * nb / nn;
    *m2 += m2b + delta * delta * na * nb / nn;
    *n = nn;
}

static int compute_stats(hs_surr_data *d)
{
    hs_ctx *ctx = d->ctx;
    int V = d->nvars;
    size_t hw = (size_t)d->grid.ny * d->grid.nx, fs = (size_t)V * hw;
    int64_t ntrain = d->bound[0], lo = ntrain * ctx->rank / ctx->size, hi = ntrain * (ctx->rank + 1) / ctx->size;
    double part[3 * HS_SURR_MAX_VARS] = {0};
    double *sums = calloc(fs + 1, sizeof *sums);
    if (!sums) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
    for (int f = 0; f < d->nfiles; f++)
        for (int64_t t = 0; t < d->nframes[f]; t++) {
            int64_t g = d->frame0[f] + t;
            if (g < lo || g >= hi) continue;
            const float *fr = d->frames[f] + (size_t)t * fs;
            for (int v = 0; v < V; v++) {
                const float *x = fr + (size_t)v * hw;
                double s = 0, q = 0;
                for (size_t p = 0; p < hw; p++) s += x[p], sums[(size_t)v * hw + p] += x[p];
                double mu = s / (double)hw;
                for (size_t p = 0; p < hw; p++) q += (x[p] - mu) * (x[p] - mu);
                merge(&part[3 * v], &part[3 * v + 1], &part[3 * v + 2], (double)hw, mu, q);
            }
        }
    double *all = malloc((size_t)ctx->size * 3 * V * sizeof *all);
    int rc = all ? HS_OK : HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
    double mine[3 * HS_SURR_MAX_VARS];
    memcpy(mine, part, sizeof mine);
    if (rc == HS_OK) rc = hs_host_allgather(ctx->comm, HS_F64, mine, all, (size_t)3 * V);
    if (rc == HS_OK && ctx->size > 1) rc = hs_host_allreduce(ctx->comm, HS_F64, HS_COMM_SUM, sums, fs);
    if (rc == HS_OK) {
        for (int v = 0; v < V; v++) {
            double n = 0, mean = 0, m2 = 0;
            for (int r = 0; r < ctx->size; r++) {
                const double *q = all + (size_t)r * 3 * V + 3 * v;
                merge(&n, &mean, &m2, q[0], q[1], q[2]);
            }
            d->mean[v] = mean;
            d->sd[v] = n > 0 ? sqrt(m2 / n) : 0.0;
            if (!(d->sd[v] > 0)) d->sd[v] = 1.0; /* a constant variable: centred only */
        }
        for (size_t i = 0; i < fs; i++) d->clim[i] = ntrain > 0 ? sums[i] / (double)ntrain : 0.0;
    }
    free(all), free(sums);
    return rc;
}

/* The frames stay in physical units and are normalised where a batch is filled, so that replacing
 * the statistics (a model's) rounds nothing twice: a forecast depends on the input frames and the
 * model only, not on what else its file holds. */
int hs_surr_data_set_stats(hs_surr_data *d, const double *mean, const double *sd, const double *clim)
{
    memcpy(d->mean, mean, (size_t)d->nvars * sizeof *mean);
    memcpy(d->sd, sd, (size_t)d->nvars * sizeof *sd);
    memcpy(d->clim, clim, (size_t)d->nvars * d->grid.ny * d->grid.nx * sizeof *clim);
    return HS_OK;
}

/* ------------------------------------------------------------------ windows */

static int make_windows(hs_surr_data *d, const double split[3])
{
    d->bound[0] = llround(split[0] * (double)d->total);
    d->bound[1] = llround((split[0] + split[1]) * (double)d->total);
    if (d->bound[1] > d->total) d->bound[1] = d->total;
    int64_t len = (int64_t)d->k_in + d->k_out;
    for (int pass = 0; pass < 2; pass++) {
        int64_t count[3] = {0, 0, 0};
        for (int f = 0; f < d->nfiles; f++)
            for (int64_t s = 0; s + len <= d->nframes[f]; s += d->stride) {
                int64_t g0 = d->frame0[f] + s, g1 = g0 + len - 1;
                int split_of = g1 < d->bound[0] ? 0 : (g0 >= d->bound[0] && g1 < d->bound[1]) ? 1 : g0 >= d->bound[1] ? 2 : -1;
                if (split_of < 0) continue;
                if (pass == 1) {
                    d->win_file[split_of][count[split_of]] = f;
                    d->win_first[split_of][count[split_of]] = s;
                }
                count[split_of]++;
            }
        for (int k = 0; k < 3; k++) {
            d->nwin[k] = count[k];
            if (pass == 0) {
                d->win_file[k] = malloc((size_t)(count[k] + 1) * sizeof(int));
                d->win_first[k] = malloc((size_t)(count[k] + 1) * sizeof(int64_t));
                if (!d->win_file[k] || !d->win_first[k]) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
            }
        }
    }
    return HS_OK;
}

/* ------------------------------------------------------------------ opening */

static int open_files(hs_surr_data *d, int keep)
{
    int64_t total = 0;
    for (int f = 0; f < d->nfiles; f++) {
        hs_reader *r = NULL;
        HS_CHECK(hs_reader_open(d->files[f], &r));
        int rc = read_layout(d, f, r);
        if (rc == HS_OK) rc = read_values(d, f, r, keep);
        hs_reader_close(r);
        HS_CHECK(rc);
        d->frame0[f] = total;
        total += d->nframes[f];
    }
    d->total = total;
    return HS_OK;
}

int hs_surr_data_open(hs_ctx *ctx, const hs_surr_data_config *cfg, int keep, hs_surr_data **out)
{
    *out = NULL;
    hs_surr_data *d = calloc(1, sizeof *d);
    if (!d) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
    *out = d;
    d->ctx = ctx, d->nfiles = cfg->nfiles, d->nvars = cfg->nvars, d->k_in = cfg->k_in, d->k_out = cfg->k_out;
    d->stride = cfg->stride > 0 ? cfg->stride : 1;
    d->min_frames = cfg->min_frames;
    memcpy(d->vars, cfg->vars, sizeof d->vars);
    for (int v = 0; v < d->nvars; v++) HS_CHECK(hs_surr_var_spec(d->vars[v], d->src[v], &d->has_level[v], &d->level[v]));
    d->files = calloc((size_t)d->nfiles + 1, sizeof *d->files);
    d->times = calloc((size_t)d->nfiles + 1, sizeof *d->times);
    d->time_units = calloc((size_t)d->nfiles + 1, sizeof *d->time_units);
    d->frames = calloc((size_t)d->nfiles + 1, sizeof *d->frames);
    d->held = calloc((size_t)d->nfiles + 1, sizeof *d->held);
    d->nframes = calloc((size_t)d->nfiles + 1, sizeof *d->nframes);
    d->frame0 = calloc((size_t)d->nfiles + 1, sizeof *d->frame0);
    if (!d->files || !d->times || !d->time_units || !d->frames || !d->held || !d->nframes || !d->frame0)
        return HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
    for (int f = 0; f < d->nfiles; f++)
        if (!(d->files[f] = strdup(cfg->files[f]))) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
    HS_CHECK(open_files(d, keep));
    d->clim = calloc((size_t)d->nvars * d->grid.ny * d->grid.nx + 1, sizeof *d->clim);
    if (!d->clim) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
    HS_CHECK(make_windows(d, cfg->split));
    for (int v = 0; v < d->nvars; v++) d->mean[v] = 0, d->sd[v] = 1;
    if (keep) HS_CHECK(compute_stats(d));
    return HS_OK;
}

/* ------------------------------------------------------------------ batches */

int hs_surr_data_fill(const hs_surr_data *d, hs_dtype t, int n, const int *files, const int64_t *firsts, int frames,
                      void *out)
{
    if (!d->frames) return HS_FAIL(HS_ERR_RUNTIME, "surrogate data: frames not kept");
    const size_t hw = (size_t)d->grid.ny * d->grid.nx, fs = (size_t)d->nvars * hw;
    /* normalised to float first in every compute type (the training's inputs are float-exact) */
#pragma omp parallel for collapse(3) schedule(static) if ((size_t)n * frames * fs > 65536)
    for (int j = 0; j < frames; j++)
        for (int b = 0; b < n; b++)
            for (int v = 0; v < d->nvars; v++) {
                const float *src = d->frames[files[b]] + (size_t)(firsts[b] + j) * fs + (size_t)v * hw;
                const double mean = d->mean[v], sd = d->sd[v];
                const size_t o = ((size_t)j * n + b) * fs + (size_t)v * hw;
                for (size_t i = 0; i < hw; i++) {
                    const float x = (float)(((double)src[i] - mean) / sd);
                    switch (t) {
                    case HS_F64: ((double *)out)[o + i] = x; break;
                    case HS_F32: ((float *)out)[o + i] = x; break;
                    case HS_BF16: ((uint16_t *)out)[o + i] = hs_f32_to_bf16(x); break;
                    default: ((uint16_t *)out)[o + i] = hs_f32_to_f16(x); break;
                    }
                }
            }
    return HS_OK;
}
