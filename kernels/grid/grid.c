/* Structured grids: the Cartesian decomposition, cell- and face-centred field allocation, interior copies and gather/scatter. */
#include "kernels/grid/grid.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/grid/grid_impl.h"
#include "kernels/memory.h"
#include "kernels/dispatch.h"

#define GATHER_TAG 4100

/* ------------------------------------------------------------------ decomposition */

/* "10 x 10" or "3 x auto" into buf. */
static const char *fmt_dims64(char *buf, size_t len, const int64_t *v, int n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%lld", i ? " x " : "", (long long)v[i]);
    return buf;
}

static const char *fmt_procs(char *buf, size_t len, const int *v, int n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && used < len; i++) {
        if (v[i]) used += (size_t)snprintf(buf + used, len - used, "%s%d", i ? " x " : "", v[i]);
        else used += (size_t)snprintf(buf + used, len - used, "%sauto", i ? " x " : "");
    }
    return buf;
}

/* First dimension in which the split leaves some rank fewer than min_cells cells, or -1.  A rank
 * that owns a whole non-periodic dimension never exchanges there, so any width will do. */
static int thin_dim(int ndim, const int64_t *global, const int *periodic, const int *dims, int min_cells)
{
    for (int d = 0; d < ndim; d++)
        if ((dims[d] > 1 || periodic[d]) && global[d] / dims[d] < min_cells) return d;
    return -1;
}

static const char *ranks_word(int n) { return n == 1 ? "rank" : "ranks"; }

/* Cells a rank exchanges per step, roughly: what we minimise when choosing a split ourselves. */
static double surface(int ndim, const int64_t *global, const int *dims)
{
    double s = 0;
    for (int d = 0; d < ndim; d++) {
        if (dims[d] == 1) continue;
        double face = 1;
        for (int e = 0; e < ndim; e++)
            if (e != d) face *= (double)((global[e] + dims[e] - 1) / dims[e]);
        s += face;
    }
    return s;
}

/* The valid split of `size` ranks (respecting nonzero entries of fixed) with the smallest surface;
 * returns 0 when none leaves every rank min_cells cells. */
static int best_split(int ndim, const int64_t *global, const int *periodic, const int *fixed, int size, int min_cells,
                      int *out)
{
    int found = 0;
    double best = 0;
    int dims[3] = {1, 1, 1};
    for (int a = 1; a <= size; a++) {
        if (size % a || (ndim == 1 && a != size)) continue;
        for (int b = 1; b <= size / a; b++) {
            if ((size / a) % b || (ndim == 2 && a * b != size) || (ndim == 1 && b != 1)) continue;
            int c = size / a / b;
            if (ndim < 3 && c != 1) continue;
            dims[0] = a, dims[1] = b, dims[2] = c;
            int ok = thin_dim(ndim, global, periodic, dims, min_cells) < 0;
            for (int d = 0; d < ndim; d++)
                if (fixed && fixed[d] && fixed[d] != dims[d]) ok = 0;
            double s = surface(ndim, global, dims);
            if (ok && (!found || s < best)) {
                found = 1, best = s;
                memcpy(out, dims, 3 * sizeof(int));
            }
        }
    }
    return found;
}

/* "; 2 x 2 would work" (or advice when nothing would) for error messages. */
static void suggestion(int ndim, const int64_t *global, const int *periodic, int size, int min_cells, char *buf,
                       size_t len)
{
    int dims[3];
    char t[64];
    if (best_split(ndim, global, periodic, NULL, size, min_cells, dims))
        snprintf(buf, len, "; %s would work", fmt_procs(t, sizeof t, dims, ndim));
    else if (size == 1) /* fewer ranks is no advice on one */
        snprintf(buf, len, "; a periodic dimension needs at least %d cell(s): use a larger grid", min_cells);
    else
        snprintf(buf, len, "; no split over %d %s leaves every rank %d cell(s) per exchanging dimension: use fewer "
                 "ranks or a larger grid", size, ranks_word(size), min_cells);
}

static int decomp_args(int ndim, const int64_t *global, const int *procs, int min_cells)
{
    if (ndim < 1 || ndim > 3) return hs_input_error("decomposition", 0, NULL, "ndim = %d, must be 1, 2 or 3", ndim);
    if (min_cells < 1) return hs_input_error("decomposition", 0, NULL, "min_cells = %d, must be >= 1", min_cells);
    for (int d = 0; d < ndim; d++) {
        if (global[d] < 1)
            return hs_input_error("decomposition", 0, NULL, "grid size %lld in dimension %d, must be >= 1",
                                  (long long)global[d], d);
        if (procs && procs[d] < 0)
            return hs_input_error("decomposition", 0, NULL, "procs = %d in dimension %d, must be >= 0 (0 = choose)",
                                  procs[d], d);
    }
    return HS_OK;
}

/* Choose dims[3] for `size` ranks: the fixed entries of procs, MPI_Dims_create for the rest. */
static int choose_dims(int ndim, const int64_t *global, const int *periodic, const int *procs, int size, int min_cells,
                       int *dims)
{
    char g[96], p[64], sug[200];
    int fixed = 1, any_free = 0;
    for (int d = 0; d < 3; d++) dims[d] = d < ndim && procs ? procs[d] : (d < ndim ? 0 : 1);
    for (int d = 0; d < ndim; d++) {
        if (dims[d]) fixed *= dims[d];
        else any_free = 1;
    }
    fmt_dims64(g, sizeof g, global, ndim);
    fmt_procs(p, sizeof p, dims, ndim);
    if (!any_free && fixed != size) {
        suggestion(ndim, global, periodic, size, min_cells, sug, sizeof sug);
        char eq[64];
        fmt_procs(eq, sizeof eq, dims, ndim);
        return hs_input_error("decomposition", 0, NULL, "grid %s cannot be split %s over %d %s: %s = %d != %d%s", g,
                              p, size, ranks_word(size), eq, fixed, size, sug);
    }
    if (any_free && size % fixed) {
        suggestion(ndim, global, periodic, size, min_cells, sug, sizeof sug);
        return hs_input_error("decomposition", 0, NULL, "grid %s cannot be split %s over %d %s: %d does not divide %d%s",
                              g, p, size, ranks_word(size), fixed, size, sug);
    }
    if (any_free) {
        int want[3];
        memcpy(want, dims, sizeof want);
        HS_MPI_CHECK(MPI_Dims_create(size, ndim, dims));
        /* MPI_Dims_create ignores the grid's shape: fall back to our own choice if it leaves ranks too thin */
        if (thin_dim(ndim, global, periodic, dims, min_cells) >= 0)
            best_split(ndim, global, periodic, want, size, min_cells, dims);
    }
    int bad = thin_dim(ndim, global, periodic, dims, min_cells);
    if (bad >= 0) {
        suggestion(ndim, global, periodic, size, min_cells, sug, sizeof sug);
        fmt_procs(p, sizeof p, dims, ndim);
        return hs_input_error("decomposition", 0, NULL,
                              "grid %s cannot be split %s over %d %s: %lld cells over %d %s in dimension %d "
                              "leave %lld on some rank, fewer than the %d needed%s",
                              g, p, size, ranks_word(size), (long long)global[bad], dims[bad], ranks_word(dims[bad]),
                              bad, (long long)(global[bad] / dims[bad]), min_cells, sug);
    }
    return HS_OK;
}

/* The cells of coordinate c along a dimension of n cells split over p ranks. */
static void split_1d(int64_t n, int p, int c, int64_t *offset, int64_t *local)
{
    int64_t base = n / p, extra = n % p;
    *local = base + (c < extra);
    *offset = c * base + (c < extra ? c : extra);
}

/* The cells of coordinate c along dimension e of d: its given boxes, or the even split. */
static void decomp_split(const hs_decomp *d, int e, int c, int64_t *offset, int64_t *local)
{
    if (d->starts[e]) {
        *offset = d->starts[e][c];
        *local = d->starts[e][c + 1] - d->starts[e][c];
    } else {
        split_1d(d->global[e], d->procs[e], c, offset, local);
    }
}

/* The fewest and the most cells a rank owns along dimension e. */
static void decomp_extremes(const hs_decomp *d, int e, int64_t *fewest, int64_t *most)
{
    *fewest = INT64_MAX, *most = 0;
    for (int c = 0; c < d->procs[e]; c++) {
        int64_t off, loc;
        decomp_split(d, e, c, &off, &loc);
        if (loc < *fewest) *fewest = loc;
        if (loc > *most) *most = loc;
    }
}

void hs_decomp_starts(const hs_decomp *d, int e, int64_t *starts)
{
    for (int c = 0; c < d->procs[e]; c++) {
        int64_t loc;
        decomp_split(d, e, c, &starts[c], &loc);
    }
    starts[d->procs[e]] = d->global[e];
}

/* The decomposition of a process grid dims whose boxes are d->starts (set by the caller) or even. */
static int decomp_build(hs_ctx *ctx, int ndim, const int64_t *global, const int *periodic, const int *dims,
                        hs_decomp *d)
{
    d->ctx = ctx;
    d->ndim = ndim;
    for (int e = 0; e < 3; e++) {
        d->global[e] = e < ndim ? global[e] : 1;
        d->procs[e] = dims[e];
        d->periodic[e] = e < ndim && periodic ? periodic[e] != 0 : 0;
        d->neighbor[e][0] = d->neighbor[e][1] = MPI_PROC_NULL;
    }
    HS_MPI_CHECK(MPI_Cart_create(ctx->comm, ndim, d->procs, d->periodic, 0, &d->cart));
#if !HS_HAVE_MPI
    hs_mpiuni_set_periodic(ndim, d->periodic);
#endif
    HS_MPI_CHECK(MPI_Cart_coords(d->cart, ctx->rank, ndim, d->coords));
    for (int e = 0; e < ndim; e++)
        HS_MPI_CHECK(MPI_Cart_shift(d->cart, e, 1, &d->neighbor[e][0], &d->neighbor[e][1]));
    for (int e = 0; e < 3; e++) decomp_split(d, e, d->coords[e], &d->offset[e], &d->local[e]);
    return HS_OK;
}

int hs_decomp_create(hs_ctx *ctx, int ndim, const int64_t *global, const int *periodic, const int *procs,
                     int min_cells, hs_decomp **out)
{
    *out = NULL;
    HS_CHECK(decomp_args(ndim, global, procs, min_cells));
    int dims[3], per[3] = {0, 0, 0};
    for (int e = 0; e < ndim; e++) per[e] = periodic ? periodic[e] != 0 : 0;
    HS_CHECK(choose_dims(ndim, global, per, procs, ctx->size, min_cells, dims));
    hs_decomp *d = calloc(1, sizeof *d);
    if (!d) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory for a decomposition");
    d->cart = MPI_COMM_NULL;
    int rc = decomp_build(ctx, ndim, global, periodic, dims, d);
    if (rc != HS_OK) {
        hs_decomp_destroy(d);
        return rc;
    }
    *out = d;
    return HS_OK;
}

static int split_args(int ndim, const int64_t *global, const int *procs, int size, const int64_t *const starts[3])
{
    HS_CHECK(decomp_args(ndim, global, procs, 1));
    if (!procs) return hs_input_error("decomposition", 0, NULL, "procs is NULL: a given split needs its process grid");
    int64_t total = 1;
    for (int e = 0; e < ndim; e++) {
        if (procs[e] < 1)
            return hs_input_error("decomposition", 0, NULL, "procs = %d in dimension %d, must be >= 1 with a given split",
                                  procs[e], e);
        total *= procs[e];
        if (!starts || !starts[e]) continue;
        const int64_t *s = starts[e];
        if (s[0] != 0 || s[procs[e]] != global[e])
            return hs_input_error("decomposition", 0, NULL, "the split of dimension %d runs from %lld to %lld, not from 0 "
                                  "to %lld", e, (long long)s[0], (long long)s[procs[e]], (long long)global[e]);
        for (int c = 0; c < procs[e]; c++)
            if (s[c + 1] <= s[c])
                return hs_input_error("decomposition", 0, NULL, "the split of dimension %d leaves coordinate %d without "
                                      "cells ([%lld, %lld))", e, c, (long long)s[c], (long long)s[c + 1]);
    }
    if (total != size)
        return hs_input_error("decomposition", 0, NULL, "the process grid has %lld ranks, the context %d",
                              (long long)total, size);
    return HS_OK;
}

int hs_decomp_create_split(hs_ctx *ctx, int ndim, const int64_t *global, const int *periodic, const int *procs,
                           const int64_t *const starts[3], hs_decomp **out)
{
    *out = NULL;
    HS_CHECK(split_args(ndim, global, procs, ctx->size, starts));
    hs_decomp *d = calloc(1, sizeof *d);
    if (!d) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory for a decomposition");
    d->cart = MPI_COMM_NULL;
    int dims[3] = {1, 1, 1}, rc = HS_OK;
    for (int e = 0; e < ndim && rc == HS_OK; e++) {
        dims[e] = procs[e];
        if (!starts || !starts[e]) continue;
        d->starts[e] = malloc((size_t)(procs[e] + 1) * sizeof(int64_t));
        if (!d->starts[e]) rc = HS_FAIL(HS_ERR_RUNTIME, "out of host memory for a decomposition");
        else memcpy(d->starts[e], starts[e], (size_t)(procs[e] + 1) * sizeof(int64_t));
    }
    if (rc == HS_OK) rc = decomp_build(ctx, ndim, global, periodic, dims, d);
    if (rc != HS_OK) {
        hs_decomp_destroy(d);
        return rc;
    }
    *out = d;
    return HS_OK;
}

void hs_decomp_destroy(hs_decomp *d)
{
    if (!d) return;
    if (d->cart != MPI_COMM_NULL) MPI_Comm_free(&d->cart);
    for (int e = 0; e < 3; e++) free(d->starts[e]);
    free(d);
}

int hs_decomp_rank_box(const hs_decomp *d, int rank, int64_t offset[3], int64_t local[3])
{
    if (rank < 0 || rank >= d->ctx->size)
        return hs_input_error("decomposition", 0, NULL, "rank %d is not in 0..%d", rank, d->ctx->size - 1);
    int c[3] = {0, 0, 0};
    HS_MPI_CHECK(MPI_Cart_coords(d->cart, rank, d->ndim, c));
    for (int e = 0; e < 3; e++) decomp_split(d, e, c[e], &offset[e], &local[e]);
    return HS_OK;
}

/* ------------------------------------------------------------------ fields */

static int field_args(const hs_decomp *d, hs_dtype t, int halo, int face_dim)
{
    if (!d) return hs_input_error("field", 0, NULL, "no decomposition given");
    if (face_dim < -1 || face_dim >= d->ndim)
        return hs_input_error("field", 0, NULL, "face dimension %d, must be -1 (cell-centred) or 0..%d", face_dim,
                              d->ndim - 1);
    if (t != HS_F64 && t != HS_F32 && t != HS_F16)
        return hs_input_error("field", 0, NULL, "type %s is not supported (f64, f32, or f16 storage)", hs_dtype_name(t));
    if (halo < 0 || halo > HS_FIELD_MAX_HALO)
        return hs_input_error("field", 0, NULL, "halo = %d, must be in 0..%d", halo, HS_FIELD_MAX_HALO);
    for (int e = 0; e < d->ndim; e++) {
        int exchanges = d->procs[e] > 1 || d->periodic[e];
        int64_t thinnest, thickest;
        decomp_extremes(d, e, &thinnest, &thickest);
        if (exchanges && thinnest < halo && d->procs[e] == 1)
            return hs_input_error("field", 0, NULL,
                                  "a halo of %d cells is wider than the %lld cells of periodic dimension %d: it needs at "
                                  "least %d cells there", halo, (long long)thinnest, e, halo);
        if (exchanges && thinnest < halo)
            return hs_input_error("field", 0, NULL,
                                  "a halo of %d cells is wider than the %lld cells some rank owns in dimension %d "
                                  "(%lld cells over %d ranks): use fewer ranks there or a narrower stencil",
                                  halo, (long long)thinnest, e, (long long)d->global[e], d->procs[e]);
    }
    return HS_OK;
}

/* The points of a field along dimension e for a rank at coordinate c there: its cells, and on the
 * last rank of a non-periodic face dimension the global high face too. */
static void field_extent(const hs_decomp *d, int face_dim, int e, int c, int64_t *offset, int64_t *local)
{
    decomp_split(d, e, c, offset, local);
    if (e == face_dim && !d->periodic[e] && c == d->procs[e] - 1) (*local)++;
}

int hs_field_rank_box(const hs_field *f, int rank, int64_t offset[3], int64_t local[3])
{
    const hs_decomp *d = f->d;
    if (rank < 0 || rank >= d->ctx->size)
        return hs_input_error("field", 0, NULL, "rank %d is not in 0..%d", rank, d->ctx->size - 1);
    int c[3] = {0, 0, 0};
    HS_MPI_CHECK(MPI_Cart_coords(d->cart, rank, d->ndim, c));
    for (int e = 0; e < 3; e++) field_extent(d, f->face_dim, e, c[e], &offset[e], &local[e]);
    return HS_OK;
}

int hs_field_create(hs_decomp *d, hs_dtype t, int halo, hs_field **out)
{
    return hs_field_create_staggered(d, t, halo, -1, out);
}

/* The layout of a field on this rank (everything but its memory): extents, pitch, count; returns
 * the alignment lead in elements.  hs_field_create and hs_field_footprint share it, so that the
 * estimate is the allocation. */
static int64_t field_layout(hs_decomp *d, hs_dtype t, int halo, int face_dim, hs_field *f)
{
    memset(f, 0, sizeof *f);
    f->d = d;
    f->dtype = t;
    f->halo = halo;
    f->face_dim = face_dim;
    for (int e = 0; e < 3; e++) {
        f->hw[e] = e < d->ndim ? halo : 0;
        f->global[e] = d->global[e] + (e == face_dim && !d->periodic[e]);
        field_extent(d, face_dim, e, d->coords[e], &f->offset[e], &f->local[e]);
        f->alloc[e] = f->local[e] + 2 * f->hw[e];
    }
    /* 128-byte rows: the allocation is at least that aligned, so a lead of (line - hw) elements
     * puts interior x = 0 on a line boundary and a pitch of whole lines keeps it there */
    const int64_t line = 128 / (int64_t)hs_field_esize(f);
    int64_t pitch = (f->alloc[0] + line - 1) / line * line, lead = (line - f->hw[0] % line) % line;
    if (8 * pitch > 9 * f->alloc[0]) pitch = f->alloc[0], lead = 0;
    f->pitch = pitch;
    f->count = (size_t)pitch * (size_t)f->alloc[1] * (size_t)f->alloc[2];
    return lead;
}

int hs_field_create_staggered(hs_decomp *d, hs_dtype t, int halo, int face_dim, hs_field **out)
{
    *out = NULL;
    HS_CHECK(field_args(d, t, halo, face_dim));
    hs_field *f = calloc(1, sizeof *f);
    if (!f) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory for a field");
    const int64_t lead = field_layout(d, t, halo, face_dim, f);
    size_t bytes = ((size_t)lead + f->count) * hs_field_esize(f);
    int rc = hs_mem_alloc(d->ctx, bytes, &f->base);
    if (rc == HS_OK) rc = hs_mem_zero(d->ctx, f->base, bytes);
    if (rc == HS_OK) f->data = (char *)f->base + (size_t)lead * hs_field_esize(f);
    if (rc == HS_OK) rc = hs_halo_setup(f);
    if (rc != HS_OK) {
        hs_field_destroy(f);
        return hs_error_trace(rc, __FILE__, __LINE__, "hs_field_create");
    }
    *out = f;
    return HS_OK;
}

size_t hs_field_layout_bytes(hs_decomp *d, hs_dtype t, int halo, int face_dim)
{
    hs_field f;
    const int64_t lead = field_layout(d, t, halo, face_dim, &f);
    return ((size_t)lead + f.count) * hs_field_esize(&f);
}

void hs_field_footprint(hs_decomp *d, hs_dtype t, int halo, int face_dim, double *device, double *host)
{
    hs_field f;
    const int64_t lead = field_layout(d, t, halo, face_dim, &f);
    const double es = (double)hs_field_esize(&f);
    *device += hs_mem_footprint(d->ctx, ((double)lead + (double)f.count) * es);
    *host += hs_host_footprint((double)sizeof f) + hs_host_footprint((double)hs_halo_plan_bytes());
    /* the halo plan: per exchanging face a pair of pinned buffers (the staging themselves on the
     * CPU backend) and on a GPU a pair of device buffers */
    for (int e = 0; e < 3; e++)
        for (int side = 0; side < 2; side++) {
            const double bytes = (double)hs_halo_face_elems(&f, e, side) * es;
            if (bytes == 0) continue;
            *host += 2 * hs_pinned_footprint(d->ctx, bytes);
            if (HS_ON_GPU(d->ctx)) *device += 2 * hs_mem_footprint(d->ctx, bytes);
        }
}

void hs_field_destroy(hs_field *f)
{
    if (!f) return;
    hs_halo_teardown(f);
    hs_mem_free(f->d->ctx, f->base);
    free(f);
}

/* Device address of local interior cell (0, 0, 0). */
static void *interior_origin(const hs_field *f)
{
    return (char *)f->data + hs_field_index(f, 0, 0, 0) * hs_field_esize(f);
}

int hs_field_set_interior(hs_field *f, const void *host)
{
    const int64_t *l = f->local;
    hs_ctx *ctx = f->d->ctx;
    hs_grid_copy b = {l[0], l[1], l[2], l[0], l[0] * l[1], hs_field_stride_y(f), hs_field_stride_z(f)};
    return HS_DISPATCH(ctx, hs_grid_copy_box_cpu(hs_field_esize(f), host, interior_origin(f), &b),
                       hs_grid_box_from_host_cuda(ctx->cuda, hs_field_esize(f), host, interior_origin(f), l[0], l[1],
                                                  l[2], hs_field_stride_y(f), hs_field_stride_z(f)));
}

int hs_field_get_interior(hs_field *f, void *host)
{
    const int64_t *l = f->local;
    hs_ctx *ctx = f->d->ctx;
    hs_grid_copy b = {l[0], l[1], l[2], hs_field_stride_y(f), hs_field_stride_z(f), l[0], l[0] * l[1]};
    return HS_DISPATCH(ctx, hs_grid_copy_box_cpu(hs_field_esize(f), interior_origin(f), host, &b),
                       hs_grid_box_to_host_cuda(ctx->cuda, hs_field_esize(f), interior_origin(f), l[0], l[1], l[2],
                                                hs_field_stride_y(f), hs_field_stride_z(f), host));
}

int hs_field_load_box(hs_field *f, const hs_box *box, const void *contiguous)
{
    if (hs_box_points(box) == 0) return HS_OK;
    const int64_t n[3] = {box->hi[0] - box->lo[0], box->hi[1] - box->lo[1], box->hi[2] - box->lo[2]};
    hs_ctx *ctx = f->d->ctx;
    void *origin = (char *)f->data + hs_field_index(f, box->lo[0], box->lo[1], box->lo[2]) * hs_field_esize(f);
    hs_grid_copy b = {n[0], n[1], n[2], n[0], n[0] * n[1], hs_field_stride_y(f), hs_field_stride_z(f)};
    return HS_DISPATCH(ctx, hs_grid_copy_box_cpu(hs_field_esize(f), contiguous, origin, &b),
                       hs_grid_copy_box_cuda(ctx->cuda, NULL, hs_field_esize(f), contiguous, origin, &b));
}

int hs_field_store_box(hs_field *f, const hs_box *box, void *contiguous)
{
    if (hs_box_points(box) == 0) return HS_OK;
    const int64_t n[3] = {box->hi[0] - box->lo[0], box->hi[1] - box->lo[1], box->hi[2] - box->lo[2]};
    hs_ctx *ctx = f->d->ctx;
    const void *origin = (const char *)f->data + hs_field_index(f, box->lo[0], box->lo[1], box->lo[2]) * hs_field_esize(f);
    hs_grid_copy b = {n[0], n[1], n[2], hs_field_stride_y(f), hs_field_stride_z(f), n[0], n[0] * n[1]};
    return HS_DISPATCH(ctx, hs_grid_copy_box_cpu(hs_field_esize(f), origin, contiguous, &b),
                       hs_grid_copy_box_cuda(ctx->cuda, NULL, hs_field_esize(f), origin, contiguous, &b));
}

size_t hs_field_storage_bytes(const hs_field *f)
{
    return (size_t)((const char *)f->data - (const char *)f->base) + f->count * hs_field_esize(f);
}

int hs_field_storage_copy(hs_field *f, void *storage, int to_storage)
{
    const size_t bytes = hs_field_storage_bytes(f);
    return hs_mem_copy(f->d->ctx, to_storage ? storage : f->base, to_storage ? f->base : storage, bytes, HS_COPY_D2D);
}

void hs_field_storage_swap(hs_field *f, void **storage)
{
    const size_t lead = (size_t)((char *)f->data - (char *)f->base);
    void *t = f->base;
    f->base = *storage;
    f->data = (char *)f->base + lead;
    *storage = t;
}

int hs_field_load_interior(hs_field *f, const void *contiguous)
{
    const hs_box all = hs_field_interior_box(f);
    return hs_field_load_box(f, &all, contiguous);
}

int hs_field_store_interior(hs_field *f, void *contiguous)
{
    const hs_box all = hs_field_interior_box(f);
    return hs_field_store_box(f, &all, contiguous);
}

int hs_field_fill(hs_field *f, double value)
{
    hs_ctx *ctx = f->d->ctx;
    if (f->dtype == HS_F16) return HS_FAIL(HS_ERR_RUNTIME, "hs_field_fill: f16 fields are storage only");
    return HS_DISPATCH(ctx, hs_grid_fill_cpu(f->dtype, f->data, f->count, value),
                       hs_grid_fill_cuda(ctx->cuda, f->dtype, f->data, f->count, value));
}

/* ------------------------------------------------------------------ gather / scatter */

/* Copy a rank's block (x fastest, size local) to/from its place in the global array. */
static void place_block(const hs_field *f, const int64_t *off, const int64_t *loc, void *global, void *block,
                        int to_global)
{
    size_t es = hs_field_esize(f);
    const int64_t *g = f->global;
    for (int64_t k = 0; k < loc[2]; k++)
        for (int64_t j = 0; j < loc[1]; j++) {
            char *gp = (char *)global + ((size_t)((off[2] + k) * g[1] + off[1] + j) * g[0] + off[0]) * es;
            char *bp = (char *)block + ((size_t)(k * loc[1] + j) * loc[0]) * es;
            if (to_global) memcpy(gp, bp, loc[0] * es);
            else memcpy(bp, gp, loc[0] * es);
        }
}

/* Largest block any rank owns, in elements (a bound: the largest split, plus a face). */
static size_t max_block(const hs_field *f)
{
    const hs_decomp *d = f->d;
    size_t n = 1;
    for (int e = 0; e < 3; e++) {
        int64_t fewest, most;
        decomp_extremes(d, e, &fewest, &most);
        n *= (size_t)(most + (e == f->face_dim));
    }
    return n;
}

static MPI_Datatype mpi_type(hs_dtype t) { return t == HS_F64 ? MPI_DOUBLE : t == HS_F16 ? MPI_UINT16_T : MPI_FLOAT; }

/* Every rank learns whether root can go on, so that a bad root argument fails everywhere. */
static int root_check(hs_field *f, int root, const void *global_host)
{
    hs_ctx *ctx = f->d->ctx;
    if (root < 0 || root >= ctx->size)
        return hs_input_error("field", 0, NULL, "root rank %d is not in 0..%d", root, ctx->size - 1);
    int ok = ctx->rank != root || global_host != NULL;
    HS_MPI_CHECK(MPI_Bcast(&ok, 1, MPI_INT, root, f->d->cart));
    if (!ok) return hs_input_error("field", 0, NULL, "gather/scatter: no host array on the root rank %d", root);
    if (max_block(f) > INT_MAX)
        return HS_FAIL(HS_ERR_RUNTIME, "a rank's block of %zu elements is too large for one MPI message",
                       max_block(f));
    return HS_OK;
}

static int gather_root(hs_field *f, int root, void *global_host, void *block)
{
    int64_t off[3], loc[3];
    for (int r = 0; r < f->d->ctx->size; r++) {
        HS_CHECK(hs_field_rank_box(f, r, off, loc));
        if (r == root) HS_CHECK(hs_field_get_interior(f, block));
        else
            HS_MPI_CHECK(MPI_Recv(block, (int)(loc[0] * loc[1] * loc[2]), mpi_type(f->dtype), r, GATHER_TAG,
                                  f->d->cart, MPI_STATUS_IGNORE));
        place_block(f, off, loc, global_host, block, 1);
    }
    return HS_OK;
}

static int scatter_root(hs_field *f, int root, const void *global_host, void *block)
{
    int64_t off[3], loc[3];
    for (int r = 0; r < f->d->ctx->size; r++) {
        if (r == root) continue;
        HS_CHECK(hs_field_rank_box(f, r, off, loc));
        place_block(f, off, loc, (void *)global_host, block, 0);
        HS_MPI_CHECK(MPI_Send(block, (int)(loc[0] * loc[1] * loc[2]), mpi_type(f->dtype), r, GATHER_TAG, f->d->cart));
    }
    HS_CHECK(hs_field_rank_box(f, root, off, loc));
    place_block(f, off, loc, (void *)global_host, block, 0);
    return hs_field_set_interior(f, block);
}

int hs_field_gather(hs_field *f, int root, void *global_host)
{
    HS_CHECK(root_check(f, root, global_host));
    const int64_t *l = f->local;
    int n = (int)(l[0] * l[1] * l[2]);
    void *block = malloc(max_block(f) * hs_field_esize(f));
    if (!block) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory for a gather buffer");
    int rc = HS_OK;
    if (f->d->ctx->rank == root) rc = gather_root(f, root, global_host, block);
    else {
        rc = hs_field_get_interior(f, block);
        if (rc == HS_OK && MPI_Send(block, n, mpi_type(f->dtype), root, GATHER_TAG, f->d->cart) != MPI_SUCCESS)
            rc = HS_FAIL(HS_ERR_RUNTIME, "MPI_Send of a gather block to rank %d failed", root);
    }
    free(block);
    if (rc != HS_OK) return hs_error_trace(rc, __FILE__, __LINE__, "hs_field_gather");
    return HS_OK;
}

int hs_field_scatter(hs_field *f, int root, const void *global_host)
{
    HS_CHECK(root_check(f, root, global_host));
    const int64_t *l = f->local;
    int n = (int)(l[0] * l[1] * l[2]);
    void *block = malloc(max_block(f) * hs_field_esize(f));
    if (!block) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory for a scatter buffer");
    int rc = HS_OK;
    if (f->d->ctx->rank == root) rc = scatter_root(f, root, global_host, block);
    else if (MPI_Recv(block, n, mpi_type(f->dtype), root, GATHER_TAG, f->d->cart, MPI_STATUS_IGNORE) != MPI_SUCCESS)
        rc = HS_FAIL(HS_ERR_RUNTIME, "MPI_Recv of a scatter block from rank %d failed", root);
    else rc = hs_field_set_interior(f, block);
    free(block);
    if (rc != HS_OK) return hs_error_trace(rc, __FILE__, __LINE__, "hs_field_scatter");
    return HS_OK;
}
