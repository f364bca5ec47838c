/* The seismic solver's geometry: receivers, interpolation stencils and point sets, CPML profiles, the step's boxes. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/params.h"
#include "kernels/error.h"
#include "kernels/memory.h"
#include "solvers/seismic/seismic_state.h"

/* ---------------------------------------------------------------- receivers */

static const char *dim_label(const hs_seis_config *c, int d)
{
    static const char *const n3[3] = {"x", "y", "z"}, *const n2[2] = {"x", "z"};
    return c->ndim == 2 ? n2[d] : n3[d];
}

static int add_receiver(hs_seis_receivers *r, int64_t cap, const char *name, const double *x, int ndim)
{
    if (r->n >= cap) return HS_FAIL(HS_ERR_RUNTIME, "seismic: receiver table overflow");
    char buf[32];
    if (!name) {
        snprintf(buf, sizeof buf, "R%05lld", (long long)(r->n + 1));
        name = buf;
    }
    r->names[r->n] = strdup(name);
    if (!r->names[r->n]) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    for (int d = 0; d < ndim; d++) r->x[d][r->n] = x[d];
    r->n++;
    return HS_OK;
}

static int alloc_receivers(hs_seis_receivers *r, int64_t cap, int ndim)
{
    r->n = 0;
    r->names = calloc((size_t)(cap ? cap : 1), sizeof *r->names);
    for (int d = 0; d < ndim; d++) r->x[d] = calloc((size_t)(cap ? cap : 1), sizeof(double));
    if (!r->names || !r->x[0] || !r->x[ndim - 1]) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    return HS_OK;
}

/* Count the receiver lines of a file (an upper bound of the receivers): ended by LF, or by a CR
 * that no LF follows (classic Mac files, as parameter files read them). */
static int64_t count_lines(FILE *f)
{
    int64_t n = 0;
    int ch, last = '\n';
    while ((ch = fgetc(f)) != EOF) {
        if (ch == '\n' || (last == '\r' && ch != '\n')) n++;
        last = ch;
    }
    if (last != '\n') n++;
    rewind(f);
    return n;
}

/* Receiver q's name and file line, for finding names used twice. */
typedef struct {
    const char *name;
    int64_t line;
} named_line;

static int cmp_named_line(const void *a, const void *b)
{
    const named_line *x = a, *y = b;
    int k = strcmp(x->name, y->name);
    return k ? k : (x->line > y->line) - (x->line < y->line);
}

/* Two receivers of the file with one name (given, or R and the number of an unnamed one): the
 * seismogram files could not tell them apart. */
static int check_names(const hs_params *p, const hs_seis_config *c, const hs_seis_receivers *r, const int64_t *line)
{
    named_line *v = malloc((size_t)(r->n ? r->n : 1) * sizeof *v);
    if (!v) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    for (int64_t q = 0; q < r->n; q++) v[q].name = r->names[q], v[q].line = line[q];
    qsort(v, (size_t)r->n, sizeof *v, cmp_named_line);
    int rc = HS_OK;
    for (int64_t q = 1; q < r->n && rc == HS_OK; q++)
        if (!strcmp(v[q].name, v[q - 1].name))
            rc = hs_params_error(p, "seismic.receiver_file", "%s:%lld: receiver name '%s' is used twice (line %lld%s)", c->rec_file,
                                 (long long)v[q].line, v[q].name, (long long)v[q - 1].line,
                                 v[q].name[0] == 'R' ? "; a receiver without a name is called R and its number, R00001 for the first" : "");
    free(v);
    return rc;
}

static int read_receiver_file(const hs_params *p, const hs_seis_config *c, hs_seis_receivers *r)
{
    HS_CHECK(hs_params_check_input_file(p, "seismic.receiver_file", c->rec_file, "receiver file"));
    FILE *f = fopen(c->rec_file, "r");
    if (!f) return hs_params_error(p, "seismic.receiver_file", "cannot open receiver file %s: %s", c->rec_file, strerror(errno));
    int64_t cap = count_lines(f);
    int rc = alloc_receivers(r, cap, c->ndim);
    int64_t *at_line = malloc((size_t)(cap ? cap : 1) * sizeof *at_line);
    if (rc == HS_OK && !at_line) rc = HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    char *buf = NULL;
    size_t len = 0;
    ssize_t got;
    int64_t lineno = 0;
    /* whole lines whatever their length (a long comment is one line); a CR that no LF follows ends a
     * line too, as in parameter files (a bare-CR file was one line: its first comment hid every
     * receiver, "lists no receivers", or its receivers were one line of too many fields) */
    while (rc == HS_OK && (got = getline(&buf, &len, f)) >= 0) {
        size_t at;
        const int bad = hs_text_binary_byte(buf, (size_t)got, &at);
        if (bad >= 0) {
            size_t start; /* its line counted as the loop below counts them (a bare CR ends one) */
            rc = hs_params_error(p, "seismic.receiver_file", "%s:%lld: binary data (byte 0x%02x): not a text receiver file",
                                 c->rec_file, (long long)(lineno + 1 + hs_text_bare_cr_part(buf, at, &start)), bad);
            break;
        }
      for (size_t start = 0, n; rc == HS_OK && start < (size_t)got; start += n + 1) {
        n = hs_text_bare_cr_line(buf + start, (size_t)got - start);
        char *line = buf + start;
        lineno++;
        char *hash = strchr(line, '#');
        if (hash) *hash = '\0';
        char *tok[8];
        int nt = 0;
        for (char *t = strtok(line, " \t\r\n,"); t && nt < 8; t = strtok(NULL, " \t\r\n,")) tok[nt++] = t;
        if (nt == 0) continue;
        int named = nt == c->ndim + 1;
        if (nt != c->ndim && !named) {
            rc = hs_params_error(p, "seismic.receiver_file", "%s:%lld: expected '[name] %s' (%d coordinates), got %d%s fields",
                                 c->rec_file, (long long)lineno, c->ndim == 2 ? "x z" : "x y z", c->ndim, nt, nt == 8 ? " or more" : "");
            break;
        }
        /* a name is not a number: "300 0 250" in a 2D run is a 3D survey's x y z, not receiver 300
         * at (0, 250) (read so, without a word, inside the absorbing layer) */
        double probe;
        if (named && !hs_parse_real(tok[0], &probe)) {
            rc = hs_params_error(p, "seismic.receiver_file", "%s:%lld: %d numbers where a %dD run reads '[name] %s' (a 3D survey's "
                                 "x y z?); a receiver's name must not be a number (e.g. R%s)",
                                 c->rec_file, (long long)lineno, nt, c->ndim, c->ndim == 2 ? "x z" : "x y z", tok[0]);
            break;
        }
        double x[3];
        for (int d = 0; d < c->ndim; d++) {
            const char *why = hs_parse_real(tok[named + d], &x[d]);
            if (why) {
                rc = hs_params_error(p, "seismic.receiver_file", "%s:%lld: coordinate '%s' %s", c->rec_file, (long long)lineno,
                                     tok[named + d], why);
                break;
            }
        }
        if (rc == HS_OK) {
            at_line[r->n] = lineno;
            rc = add_receiver(r, cap, named ? tok[0] : NULL, x, c->ndim);
        }
      }
    }
    free(buf);
    fclose(f);
    if (rc == HS_OK && r->n == 0) rc = hs_params_error(p, "seismic.receiver_file", "'%s' lists no receivers", c->rec_file);
    if (rc == HS_OK && r->n > 65535)
        rc = hs_params_error(p, "seismic.receiver_file", "'%s' lists %lld receivers; at most 65535", c->rec_file, (long long)r->n);
    if (rc == HS_OK) rc = check_names(p, c, r, at_line);
    free(at_line);
    return rc;
}

int hs_seis_receivers_make(const hs_params *p, const hs_seis_config *c, hs_seis_receivers *r)
{
    memset(r, 0, sizeof *r);
    const char *key = "seismic.receiver_start";
    if (c->receivers == HS_SEIS_REC_FILE) {
        HS_CHECK(read_receiver_file(p, c, r));
        key = "seismic.receiver_file";
    } else if (c->receivers == HS_SEIS_REC_LINE) {
        int64_t n = c->rec_count[0];
        HS_CHECK(alloc_receivers(r, n, c->ndim));
        for (int64_t i = 0; i < n; i++) {
            double x[3], f = n > 1 ? (double)i / (double)(n - 1) : 0;
            for (int d = 0; d < c->ndim; d++) x[d] = c->rec_start[d] + f * (c->rec_end[d] - c->rec_start[d]);
            HS_CHECK(add_receiver(r, n, NULL, x, c->ndim));
        }
    } else {
        int64_t n = c->rec_count[0] * c->rec_count[1] * c->rec_count[2];
        HS_CHECK(alloc_receivers(r, n, c->ndim));
        for (int64_t k = 0; k < c->rec_count[2]; k++)
            for (int64_t j = 0; j < c->rec_count[1]; j++)
                for (int64_t i = 0; i < c->rec_count[0]; i++) {
                    int64_t ijk[3] = {i, j, k};
                    double x[3];
                    for (int d = 0; d < c->ndim; d++) x[d] = c->rec_start[d] + (double)ijk[d] * c->rec_step[d];
                    HS_CHECK(add_receiver(r, n, NULL, x, c->ndim));
                }
    }
    /* every receiver inside the model */
    for (int64_t q = 0; q < r->n; q++)
        for (int d = 0; d < c->ndim; d++) {
            double ext = (double)(c->n[d] - 1) * c->h[d], x = r->x[d][q], tol = 1e-9 * ext;
            if (!(x >= -tol && x <= ext + tol)) {
                const char *k2 = key;
                /* the model is a box: a line leaves it only if one of its ends does, so blame the end that is out
                 * (the first receiver found outside may be any one past the boundary) */
                if (c->receivers == HS_SEIS_REC_LINE && r->n > 1 && c->rec_start[d] >= -tol && c->rec_start[d] <= ext + tol)
                    k2 = "seismic.receiver_end";
                if (c->receivers == HS_SEIS_REC_GRID && q > 0) k2 = "seismic.receiver_step";
                char pos[96] = "";
                for (int e = 0; e < c->ndim; e++)
                    snprintf(pos + strlen(pos), sizeof pos - strlen(pos), "%s%g", e ? ", " : "", r->x[e][q]);
                return hs_params_error(p, k2, "receiver %lld (%s) at (%s) m lies outside the model: %s must be in [0, %g] m",
                                       (long long)(q + 1), r->names[q], pos, dim_label(c, d), ext);
            }
        }
    return HS_OK;
}

void hs_seis_receivers_free(hs_seis_receivers *r)
{
    for (int64_t i = 0; r->names && i < r->n; i++) free(r->names[i]);
    free(r->names);
    for (int d = 0; d < 3; d++) free(r->x[d]);
    memset(r, 0, sizeof *r);
}

/* ---------------------------------------------------------------- interpolation */

void hs_seis_lagrange8(double g, int64_t *first, double w[8])
{
    double fl = floor(g);
    int64_t i0 = (int64_t)fl;
    for (int j = 0; j < 8; j++) w[j] = 0;
    if (g == fl) { /* on a point: exactly that point */
        *first = i0 - 3;
        w[3] = 1;
        return;
    }
    *first = i0 - 3;
    for (int j = 0; j < 8; j++) {
        double xj = (double)(i0 - 3 + j), v = 1;
        for (int m = 0; m < 8; m++)
            if (m != j) v *= (g - (double)(i0 - 3 + m)) / (xj - (double)(i0 - 3 + m));
        w[j] = v;
    }
}

int hs_seis_stencil(const hs_seis_config *c, const double x[3], const double shift[3], double image, double surface,
                    int64_t gidx[][3], double *w)
{
    int64_t idx1[3][16];
    double w1[3][16];
    int n1[3] = {1, 1, 1};
    idx1[1][0] = idx1[2][0] = 0;
    w1[1][0] = w1[2][0] = 1;
    for (int d = 0; d < c->ndim; d++) {
        int64_t first;
        double lw[8];
        hs_seis_lagrange8(x[d] / c->h[d] - shift[d], &first, lw);
        int m = 0;
        int top = d == c->ndim - 1 && c->free_surface;
        for (int j = 0; j < 8; j++) {
            if (lw[j] == 0) continue;
            int64_t i = first + j;
            double wt = lw[j];
            if (top && shift[d] == 0 && i == 0) wt *= surface;
            if (top && i < 0) { /* the image below the surface: i -> -i (points), -1 - i (half points) */
                i = shift[d] == 0 ? -i : -1 - i;
                wt *= image;
            }
            if (i < 0 || i > c->n[d] - 1) continue;
            int q = 0;
            while (q < m && idx1[d][q] != i) q++;
            if (q == m) idx1[d][m] = i, w1[d][m] = 0, m++;
            w1[d][q] += wt;
        }
        n1[d] = m;
    }
    int n = 0;
    for (int k = 0; k < n1[2]; k++)
        for (int j = 0; j < n1[1]; j++)
            for (int i = 0; i < n1[0]; i++) {
                double wt = w1[0][i] * w1[1][j] * w1[2][k];
                if (wt == 0) continue;
                gidx[n][0] = idx1[0][i], gidx[n][1] = idx1[1][j], gidx[n][2] = idx1[2][k];
                w[n++] = wt;
            }
    return n;
}

/* ---------------------------------------------------------------- point sets */

typedef struct {
    int64_t idx, rec;
    double w;
} pt;

static int cmp_pt(const void *a, const void *b)
{
    const pt *x = a, *y = b;
    if (x->idx != y->idx) return x->idx < y->idx ? -1 : 1;
    return x->rec < y->rec ? -1 : x->rec > y->rec;
}

static int upload(hs_ctx *ctx, const void *h, size_t bytes, void **d)
{
    *d = NULL;
    if (bytes == 0) return HS_OK;
    HS_CHECK(hs_mem_alloc(ctx, bytes, d));
    return hs_mem_copy(ctx, *d, h, bytes, HS_COPY_H2D);
}

int hs_seis_points_build(hs_seis *s, int64_t nrec, const int64_t *first, int64_t (*gidx)[3], const double *w, int sample,
                         int64_t column0, hs_seis_points *pts)
{
    memset(pts, 0, sizeof *pts);
    const hs_field *f = s->lay;
    int64_t total = first[nrec];
    pt *list = malloc((size_t)(total ? total : 1) * sizeof *list);
    if (!list) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    int64_t n = 0;
    for (int64_t r = 0; r < nrec; r++)
        for (int64_t q = first[r]; q < first[r + 1]; q++) {
            int mine = 1;
            int64_t l[3];
            for (int d = 0; d < 3; d++) {
                l[d] = gidx[q][d] - f->offset[d];
                mine &= l[d] >= 0 && l[d] < f->local[d];
            }
            if (!mine) continue;
            list[n++] = (pt){(int64_t)hs_field_index(f, l[0], l[1], l[2]), r, w[q]};
        }
    if (!sample) qsort(list, (size_t)n, sizeof *list, cmp_pt);
    int64_t *gptr = malloc((size_t)(n + 1) * sizeof *gptr), *pidx = malloc((size_t)(n ? n : 1) * sizeof *pidx),
            *prec = malloc((size_t)(n ? n : 1) * sizeof *prec), *grp = malloc((size_t)(n ? n : 1) * sizeof *grp);
    double *pw = malloc((size_t)(n ? n : 1) * sizeof *pw);
    if (!gptr || !pidx || !prec || !pw || !grp) {
        free(list), free(gptr), free(pidx), free(prec), free(pw), free(grp);
        return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    }
    int64_t ng = 0;
    for (int64_t q = 0; q < n; q++) {
        int fresh = q == 0 || (sample ? list[q].rec != list[q - 1].rec : list[q].idx != list[q - 1].idx);
        if (fresh) {
            gptr[ng] = q;
            grp[ng] = sample ? list[q].rec + column0 : -1;
            ng++;
        }
        pidx[q] = list[q].idx, prec[q] = list[q].rec, pw[q] = list[q].w;
    }
    gptr[ng] = n;
    pts->npts = n, pts->ngrp = ng;
    int rc = upload(s->ctx, gptr, (size_t)(ng + 1) * sizeof *gptr, (void **)&pts->gptr);
    if (rc == HS_OK) rc = upload(s->ctx, pidx, (size_t)n * sizeof *pidx, (void **)&pts->pidx);
    if (rc == HS_OK) rc = upload(s->ctx, prec, (size_t)n * sizeof *prec, (void **)&pts->prec);
    if (rc == HS_OK) rc = upload(s->ctx, pw, (size_t)n * sizeof *pw, (void **)&pts->pwt);
    pts->group_of = grp;
    free(list), free(gptr), free(pidx), free(prec), free(pw);
    return rc;
}

void hs_seis_points_free(hs_seis *s, hs_seis_points *pts)
{
    if (s->ctx) {
        hs_mem_free(s->ctx, pts->gptr);
        hs_mem_free(s->ctx, pts->pidx);
        hs_mem_free(s->ctx, pts->prec);
        hs_mem_free(s->ctx, pts->pwt);
    }
    free(pts->group_of);
    memset(pts, 0, sizeof *pts);
}

/* ---------------------------------------------------------------- CPML profiles */

/* Does dimension d have a CPML layer on side `side` (0 low, 1 high)? */
static int has_layer(const hs_seis_config *c, int d, int side)
{
    if (c->pml == 0) return 0;
    return !(side == 0 && d == c->ndim - 1 && c->free_surface);
}

/* Depth into the layers of dimension d of global position g (in grid units), 0 outside them,
 * at most the thickness. */
static double layer_depth(const hs_seis_config *c, int d, double g)
{
    double L = c->pml, x = 0;
    if (has_layer(c, d, 0) && g < L) x = L - g;
    if (has_layer(c, d, 1) && g > (double)(c->n[d] - 1) - L) x = g - ((double)(c->n[d] - 1) - L);
    return x > L ? L : x;
}

int hs_seis_profiles(hs_seis *s)
{
    const hs_seis_config *c = &s->cfg;
    const hs_field *f = s->lay;
    size_t es = hs_dtype_size(s->dtype);
    for (int d = 0; d < c->ndim; d++) {
        int64_t n = f->local[d] + 2 * s->hw;
        double *h = malloc((size_t)n * 4 * sizeof(double));
        void *buf = malloc((size_t)n * es);
        if (!h || !buf) {
            free(h), free(buf);
            return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
        }
        double L = c->pml * c->h[d], d0 = L > 0 ? -3.0 * s->vmax * log(c->pml_reflection) / (2.0 * L) : 0,
               amax = M_PI * c->wavelet.f0;
        s->pml_d0[d] = d0;
        for (int64_t li = 0; li < n; li++) {
            double g = (double)(li - s->hw + f->offset[d]);
            for (int half = 0; half < 2; half++) {
                double x = layer_depth(c, d, g + 0.5 * half) / (c->pml > 0 ? c->pml : 1);
                double a = 0, b = 0;
                if (x > 0) {
                    double dd = d0 * x * x, al = amax * (1 - x);
                    b = exp(-(dd + al) * s->dt);
                    a = dd + al > 0 ? dd * (b - 1) / (dd + al) : 0;
                }
                h[(2 * half) * n + li] = a;
                h[(2 * half + 1) * n + li] = b;
            }
        }
        for (int q = 0; q < 4; q++) {
            for (int64_t li = 0; li < n; li++) {
                if (s->dtype == HS_F32) ((float *)buf)[li] = (float)h[q * n + li];
                else ((double *)buf)[li] = h[q * n + li];
            }
            int rc = hs_mem_alloc(s->ctx, (size_t)n * es, &s->prof[d][q]);
            if (rc == HS_OK) rc = hs_mem_copy(s->ctx, s->prof[d][q], buf, (size_t)n * es, HS_COPY_H2D);
            if (rc != HS_OK) {
                free(h), free(buf);
                return rc;
            }
        }
        free(h), free(buf);
    }
    return HS_OK;
}

/* ---------------------------------------------------------------- boxes */

static hs_box intersect(const hs_box *a, const hs_box *b)
{
    hs_box r;
    for (int d = 0; d < 3; d++) {
        r.lo[d] = a->lo[d] > b->lo[d] ? a->lo[d] : b->lo[d];
        r.hi[d] = a->hi[d] < b->hi[d] ? a->hi[d] : b->hi[d];
        if (r.hi[d] < r.lo[d]) r.hi[d] = r.lo[d];
    }
    return r;
}

int hs_seis_slabs(const hs_seis *s, int margin, hs_box *core_out, hs_box slabs[6])
{
    const hs_seis_config *c = &s->cfg;
    hs_box all = {{0, 0, 0}, {s->d->local[0], s->d->local[1], s->d->local[2]}}, core = all;
    for (int d = 0; d < c->ndim; d++) {
        int64_t lo = has_layer(c, d, 0) ? c->pml + margin : 0, hi = c->n[d] - (has_layer(c, d, 1) ? c->pml + margin : 0);
        core.lo[d] = lo - s->d->offset[d];
        core.hi[d] = hi - s->d->offset[d];
    }
    core = intersect(&core, &all);
    *core_out = core;
    /* the local box less the core, z faces first */
    int n = 0;
    if (hs_box_points(&core) == 0) {
        slabs[n++] = all;
    } else {
        hs_box rest = all;
        for (int d = c->ndim - 1; d >= 0; d--) {
            hs_box lo = rest, hi = rest;
            lo.hi[d] = core.lo[d];
            hi.lo[d] = core.hi[d];
            if (hs_box_points(&lo)) slabs[n++] = lo;
            if (hs_box_points(&hi)) slabs[n++] = hi;
            rest.lo[d] = core.lo[d], rest.hi[d] = core.hi[d];
        }
    }
    return n;
}

void hs_seis_boxes(hs_seis *s, int halo_reach, int margin)
{
    const hs_seis_config *c = &s->cfg;
    hs_field *f = s->lay;
    hs_box all = hs_field_interior_box(f), core;
    s->npml_box = hs_seis_slabs(s, margin, &core, s->pml_box);
    s->core = core;
    /* the core split for the overlapped exchange */
    hs_box inner, shell[6];
    int nshell = hs_field_split_boxes(f, halo_reach, &inner, shell);
    s->exchange = nshell > 0;
    s->ncore_inner = s->ncore_shell = 0;
    hs_box ci = intersect(&core, &inner);
    if (hs_box_points(&ci)) s->core_inner[s->ncore_inner++] = ci;
    for (int i = 0; i < nshell; i++) {
        hs_box b = intersect(&core, &shell[i]);
        if (hs_box_points(&b)) s->core_shell[s->ncore_shell++] = b;
    }
    /* PSI_d is read across a rank boundary along d only when such a boundary lies within the reach
     * of d's layers; every rank decides alike from the decomposition */
    for (int d = 0; d < 3; d++) {
        s->psi_exchange[d] = 0;
        if (d >= c->ndim || s->d->procs[d] < 2 || c->pml == 0) continue;
        int64_t reach = c->pml + margin + s->hw;
        for (int r = 0; r < s->ctx->size; r++) {
            int64_t off[3], loc[3];
            hs_decomp_rank_box(s->d, r, off, loc);
            if (off[d] == 0) continue;
            if ((has_layer(c, d, 0) && off[d] < reach) || (has_layer(c, d, 1) && off[d] > c->n[d] - reach)) s->psi_exchange[d] = 1;
        }
    }
    /* AC_MARCH's columns: along d, the points within margin of d's layers (the two ranges one where
     * they come within 2 margin of each other, so that no column's queues reach a layer point of
     * another range), on this rank.  The columns run while the halo messages travel and read P up to
     * 2R past their ends, so no rank boundary along d may lie within 2 margin of a range (a split
     * through two merged ranges did: the columns beside it read the ghosts of two steps before);
     * every rank decides alike from the decomposition. */
    const char *ev = getenv("HS_SEIS_MARCH"); /* 0: the slab passes AC_PSI, AC_PML (comparisons) */
    s->march = c->model == HS_SEIS_ACOUSTIC && c->density != HS_SEIS_DENSITY_VARIABLE && c->pml > 0 &&
               !(ev && ev[0] == '0' && ev[1] == 0);
    for (int d = 0; d < c->ndim; d++)
        if (s->psi_exchange[d]) s->march = 0;
    int64_t range[3][2][2] = {{{0}}}; /* global [lo, hi) per dimension and side */
    for (int d = 0; d < c->ndim; d++) {
        const int64_t n = c->n[d], w = c->pml + margin;
        int64_t(*r)[2] = range[d];
        r[0][0] = 0, r[0][1] = has_layer(c, d, 0) ? w : 0;
        r[1][0] = has_layer(c, d, 1) ? n - w : n, r[1][1] = n;
        if (r[0][1] > 0 && r[1][0] < n && r[1][0] <= r[0][1] + 2 * margin) r[0][1] = n, r[1][0] = n;
        for (int rk = 0; rk < s->ctx->size && s->march; rk++) {
            int64_t off[3], loc[3];
            hs_decomp_rank_box(s->d, rk, off, loc);
            for (int side = 0; side < 2 && off[d] > 0; side++)
                if (r[side][1] > r[side][0] && off[d] > r[side][0] - 2 * margin && off[d] < r[side][1] + 2 * margin) s->march = 0;
        }
    }
    for (int d = 0; d < 3; d++) {
        s->nmarch[d] = 0;
        if (d >= c->ndim || !s->march) continue;
        const int64_t off = f->offset[d];
        for (int side = 0; side < 2; side++) {
            hs_box b = all;
            b.lo[d] = (range[d][side][0] > off ? range[d][side][0] : off) - off;
            b.hi[d] = (range[d][side][1] < off + f->local[d] ? range[d][side][1] : off + f->local[d]) - off;
            if (b.hi[d] > b.lo[d]) s->march_box[d][s->nmarch[d]++] = b;
        }
    }
    /* any rank's decision about exchanging is every rank's: the exchange is collective */
}
