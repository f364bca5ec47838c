/* HDF5 backend of the writer: datasets [time, z, y, x] with CF-style attributes, plus the XDMF companion. */
#include "io/output_impl.h"

#if HS_HAVE_HDF5
#if HS_HAVE_HDF5_PARALLEL && !defined(H5_HAVE_PARALLEL)
#error "HDF5_PARALLEL=1 but this hdf5.h is the serial flavour"
#endif
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ library helpers (shared) */

void hs_h5_quiet(void)
{
    static int done;
    if (!done) H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    done = 1;
}

static herr_t innermost(unsigned n, const H5E_error2_t *e, void *data)
{
    if (n == 0 && e->desc) snprintf((char *)data, 256, "%s", e->desc);
    return 0;
}

void hs_h5_reason(char *buf, size_t len)
{
    char why[256] = "";
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, innermost, why);
    H5Eclear2(H5E_DEFAULT);
    snprintf(buf, len, "%s", why);
}

int hs_h5_fail(const char *call, const char *path, const char *file, int line)
{
    char why[256];
    hs_h5_reason(why, sizeof why);
    return hs_error_raise(HS_ERR_RUNTIME, file, line, "HDF5 call %s failed on %s%s%s", call, path ? path : "?",
                          *why ? ": " : "", why);
}

int hs_h5_is_hdf5(const char *path)
{
    hs_h5_quiet();
#if H5_VERSION_GE(1, 12, 0)
    htri_t is = H5Fis_accessible(path, H5P_DEFAULT); /* H5Fis_hdf5 is deprecated from 1.12 */
#else
    htri_t is = H5Fis_hdf5(path);
#endif
    H5Eclear2(H5E_DEFAULT);
    return is > 0;
}

int hs_h5_fapl(hid_t *fapl, const char *path)
{
    hs_h5_quiet();
    HS_H5_ID(*fapl, H5Pcreate(H5P_FILE_ACCESS), path);
    /* the 1.8 format keeps large attributes (the parameter text) out of the 64 KiB object header */
    HS_H5_CHECK(H5Pset_libver_bounds(*fapl, H5F_LIBVER_V18, H5F_LIBVER_LATEST), path);
    return HS_OK;
}

static int drop_attr(hid_t obj, const char *name, const char *path)
{
    htri_t e = H5Aexists(obj, name);
    HS_H5_CHECK(e, path);
    if (e > 0) HS_H5_CHECK(H5Adelete(obj, name), path);
    return HS_OK;
}

static int write_attr(hid_t obj, const char *name, hid_t ftype, hid_t mtype, const void *value, const char *path)
{
    hid_t sp, a;
    HS_CHECK(drop_attr(obj, name, path));
    HS_H5_ID(sp, H5Screate(H5S_SCALAR), path);
    HS_H5_ID(a, H5Acreate2(obj, name, ftype, sp, H5P_DEFAULT, H5P_DEFAULT), path);
    herr_t rc = H5Awrite(a, mtype, value);
    H5Aclose(a);
    H5Sclose(sp);
    HS_H5_CHECK(rc, path);
    return HS_OK;
}

int hs_h5_attr_text(hid_t obj, const char *name, const char *value, const char *path)
{
    hid_t t;
    HS_H5_ID(t, H5Tcopy(H5T_C_S1), path);
    HS_H5_CHECK(H5Tset_size(t, strlen(value) + 1), path);
    HS_H5_CHECK(H5Tset_strpad(t, H5T_STR_NULLTERM), path);
    int rc = write_attr(obj, name, t, t, value, path);
    H5Tclose(t);
    return rc;
}

int hs_h5_attr_double(hid_t obj, const char *name, double value, const char *path)
{
    return write_attr(obj, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &value, path);
}

int hs_h5_attr_int64(hid_t obj, const char *name, int64_t value, const char *path)
{
    return write_attr(obj, name, H5T_STD_I64LE, H5T_NATIVE_INT64, &value, path);
}

static int read_text_attr(hid_t a, char **out, const char *path)
{
    hid_t ft, mt;
    HS_H5_ID(ft, H5Aget_type(a), path);
    htri_t vl = H5Tis_variable_str(ft);
    size_t sz = H5Tget_size(ft);
    H5Tclose(ft);
    HS_H5_CHECK(vl, path);
    HS_H5_ID(mt, H5Tcopy(H5T_C_S1), path);
    int rc = HS_OK;
    if (vl) {
        char *s = NULL;
        if (H5Tset_size(mt, H5T_VARIABLE) < 0 || H5Aread(a, mt, &s) < 0) rc = hs_h5_fail("H5Aread", path, __FILE__, __LINE__);
        *out = rc == HS_OK ? strdup(s ? s : "") : NULL;
        if (s) H5free_memory(s);
    } else {
        *out = calloc(sz + 2, 1);
        if (*out && (H5Tset_size(mt, sz + 1) < 0 || H5Aread(a, mt, *out) < 0)) rc = hs_h5_fail("H5Aread", path, __FILE__, __LINE__);
    }
    H5Tclose(mt);
    if (rc == HS_OK && !*out) rc = HS_FAIL(HS_ERR_RUNTIME, "out of host memory reading an attribute");
    return rc;
}

int hs_h5_read_text(hid_t obj, const char *name, char **out, const char *path)
{
    *out = NULL;
    htri_t e = H5Aexists(obj, name);
    HS_H5_CHECK(e, path);
    if (e == 0) return HS_OK;
    hid_t a;
    HS_H5_ID(a, H5Aopen(obj, name, H5P_DEFAULT), path);
    int rc = read_text_attr(a, out, path);
    H5Aclose(a);
    return rc;
}

/* ------------------------------------------------------------------ the writer backend */

typedef struct {
    hid_t file;
    hid_t time_ds;
    hid_t ds[HS_WRITER_MAX_VARS];
    hid_t dxpl;     /* raw data transfers: H5P_DEFAULT, or collective MPI-IO in a collective file */
} h5_state;

static h5_state *st(hs_writer *w) { return (h5_state *)w->bs; }

static int new_state(hs_writer *w)
{
    h5_state *s = calloc(1, sizeof *s);
    if (!s) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory for an HDF5 writer");
    s->file = s->time_ds = -1;
    for (int i = 0; i < HS_WRITER_MAX_VARS; i++) s->ds[i] = -1;
    s->dxpl = H5P_DEFAULT;
    w->bs = s;
    return HS_OK;
}

/* In a collective file, a rank other than 0 takes part in writes of rank 0's data with nothing. */
static int takes_none(const hs_writer *w) { return w->par && w->ctx->rank != 0; }

/* File access for the writer: our format bounds, and in a collective file MPI-IO over the
 * context's communicator with collective raw-data transfers (needed for chunked, filtered
 * datasets, which parallel HDF5 writes only collectively). */
static int writer_fapl(hs_writer *w, hid_t *fapl)
{
    HS_CHECK(hs_h5_fapl(fapl, w->partial));
    if (!w->par) return HS_OK;
#if HS_HAVE_HDF5_PARALLEL
    const char *p = w->partial;
    int rc = H5Pset_fapl_mpio(*fapl, w->ctx->comm, MPI_INFO_NULL) < 0 ? hs_h5_fail("H5Pset_fapl_mpio", p, __FILE__, __LINE__) : HS_OK;
    if (rc == HS_OK && (st(w)->dxpl = H5Pcreate(H5P_DATASET_XFER)) < 0) rc = hs_h5_fail("H5Pcreate (transfer)", p, __FILE__, __LINE__);
    if (rc == HS_OK && H5Pset_dxpl_mpio(st(w)->dxpl, H5FD_MPIO_COLLECTIVE) < 0) rc = hs_h5_fail("H5Pset_dxpl_mpio", p, __FILE__, __LINE__);
    if (rc != HS_OK) H5Pclose(*fapl);
    return rc;
#else
    H5Pclose(*fapl);
    return HS_FAIL(HS_ERR_RUNTIME, "%s: a collective file in a build without parallel HDF5", w->partial);
#endif
}

/* Write a whole dataset from rank 0's `data` (the other ranks of a collective file take part with
 * nothing); `what` names the dataset in an error. */
static int write_whole(hs_writer *w, hid_t ds, hid_t mtype, const void *data, const char *what)
{
    const char *p = w->partial;
    if (!w->par) {
        if (H5Dwrite(ds, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0) return hs_h5_fail(what, p, __FILE__, __LINE__);
        return HS_OK;
    }
    static const double none = 0; /* a buffer for a rank that writes nothing */
    hid_t fsp = H5Dget_space(ds), msp = fsp >= 0 ? H5Scopy(fsp) : -1;
    int rc = msp >= 0 ? HS_OK : hs_h5_fail("H5Dget_space", p, __FILE__, __LINE__);
    if (rc == HS_OK && takes_none(w) && (H5Sselect_none(fsp) < 0 || H5Sselect_none(msp) < 0))
        rc = hs_h5_fail("H5Sselect_none", p, __FILE__, __LINE__);
    if (rc == HS_OK && H5Dwrite(ds, mtype, msp, fsp, st(w)->dxpl, takes_none(w) ? (const void *)&none : data) < 0)
        rc = hs_h5_fail(what, p, __FILE__, __LINE__);
    if (msp >= 0) H5Sclose(msp);
    if (fsp >= 0) H5Sclose(fsp);
    return rc;
}

/* Rank and extent of a dataset (arrays of H5S_MAX_RANK); maxd may be NULL. */
static int get_dims(hid_t ds, int *rank, hsize_t *dims, hsize_t *maxd, const char *path)
{
    hid_t sp;
    HS_H5_ID(sp, H5Dget_space(ds), path);
    *rank = H5Sget_simple_extent_ndims(sp);
    int rc = *rank >= 0 && H5Sget_simple_extent_dims(sp, dims, maxd) >= 0;
    H5Sclose(sp);
    if (!rc) return hs_h5_fail("H5Sget_simple_extent_dims", path, __FILE__, __LINE__);
    return HS_OK;
}

/* A dataset of `rank` dims (file order); the first is extendible when `grows`. */
static int make_dataset(hs_writer *w, const char *name, hid_t ftype, int rank, const int64_t *len, int grows,
                        int deflate, hid_t *ds)
{
    hsize_t dims[4], maxd[4], chunk[4];
    size_t ch[4];
    hid_t sp, dcpl;
    for (int i = 0; i < rank; i++) dims[i] = maxd[i] = (hsize_t)len[i];
    if (grows) { dims[0] = 0; maxd[0] = H5S_UNLIMITED; }
    HS_H5_ID(dcpl, H5Pcreate(H5P_DATASET_CREATE), w->partial);
    if (rank > 0 && (grows || deflate > 0)) {
        int64_t clen[4];
        for (int i = 0; i < rank; i++) clen[i] = grows && i == 0 ? 1 : len[i];
        hs_io_chunk_dims(clen, rank, grows, H5Tget_size(ftype), ch);
        if (grows && rank == 1) ch[0] = 1024; /* the time coordinate: many records per chunk */
        for (int i = 0; i < rank; i++) chunk[i] = ch[i];
        HS_H5_CHECK(H5Pset_chunk(dcpl, rank, chunk), w->partial);
        if (deflate > 0) {
            HS_H5_CHECK(H5Pset_shuffle(dcpl), w->partial);
            HS_H5_CHECK(H5Pset_deflate(dcpl, (unsigned)deflate), w->partial);
        }
    }
    HS_H5_ID(sp, rank > 0 ? H5Screate_simple(rank, dims, maxd) : H5Screate(H5S_SCALAR), w->partial);
    *ds = H5Dcreate2(st(w)->file, name, ftype, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    H5Sclose(sp);
    H5Pclose(dcpl);
    if (*ds < 0) return hs_h5_fail("H5Dcreate2", w->partial, __FILE__, __LINE__);
    return HS_OK;
}

static int def_time(hs_writer *w, const hs_output_desc *desc)
{
    const char *p = w->partial;
    int64_t one = 1;
    HS_CHECK(make_dataset(w, w->rec_name, H5T_IEEE_F64LE, 1, &one, 1, 0, &st(w)->time_ds));
    hid_t t = st(w)->time_ds;
    if (w->rec_is_time) HS_CHECK(hs_h5_attr_text(t, "standard_name", "time", p));
    HS_CHECK(hs_h5_attr_text(t, "long_name", desc->record_long_name ? desc->record_long_name : w->rec_name, p));
    HS_CHECK(hs_h5_attr_text(t, "units", desc->time_units, p));
    if (!w->rec_is_time) return HS_OK; /* a counter (training iterations): no calendar, not a T axis */
    HS_CHECK(hs_h5_attr_text(t, "calendar", "standard", p));
    HS_CHECK(hs_h5_attr_text(t, "axis", "T", p));
    return HS_OK;
}

/* The cell bounds of dimension d, [n, 2] (as x_bnds(x, bnds) in the NetCDF file). */
static int def_bounds(hs_writer *w, const hs_output_desc *desc, int d, const char *name)
{
    const char *p = w->partial;
    int64_t len[2] = {w->n[d], 2};
    hid_t ds = -1;
    HS_CHECK(make_dataset(w, name, H5T_IEEE_F64LE, 2, len, 0, 0, &ds));
    double *b = hs_writer_bounds(w, d);
    int rc = b ? HS_OK : HS_FAIL(HS_ERR_RUNTIME, "out of host memory for cell bounds");
    if (rc == HS_OK) rc = write_whole(w, ds, H5T_NATIVE_DOUBLE, b, "H5Dwrite (bounds)");
    free(b);
    char dims[HS_IO_NAME_MAX + 8];
    snprintf(dims, sizeof dims, "%s bnds", w->dim_names[d]);
    if (rc == HS_OK) rc = hs_h5_attr_text(ds, "units", desc->coord_units[d] ? desc->coord_units[d] : "1", p);
    if (rc == HS_OK) rc = hs_h5_attr_text(ds, "dimensions", dims, p);
    H5Dclose(ds);
    return rc;
}

static int def_coord(hs_writer *w, const hs_output_desc *desc, int d)
{
    const char *p = w->partial, *nm = w->dim_names[d];
    char axis[2] = {"XYZ"[d], 0}, lname[HS_IO_NAME_MAX + 16];
    snprintf(lname, sizeof lname, "%s coordinate", nm);
    hid_t ds;
    HS_CHECK(make_dataset(w, nm, H5T_IEEE_F64LE, 1, &w->n[d], 0, 0, &ds));
    double *idx = NULL;
    const double *c = desc->coords[d];
    if (!c) { /* no coordinates given: grid indices */
        idx = malloc((size_t)w->n[d] * sizeof *idx);
        for (int64_t i = 0; idx && i < w->n[d]; i++) idx[i] = (double)i;
        c = idx;
    }
    int rc = c ? HS_OK : HS_FAIL(HS_ERR_RUNTIME, "out of host memory for coordinates");
    if (rc == HS_OK) rc = write_whole(w, ds, H5T_NATIVE_DOUBLE, c, "H5Dwrite (coordinates)");
    free(idx);
    if (rc == HS_OK) rc = hs_h5_attr_text(ds, "units", desc->coord_units[d] ? desc->coord_units[d] : "1", p);
    if (rc == HS_OK)
        rc = hs_h5_attr_text(ds, "long_name", desc->coord_long_names[d] ? desc->coord_long_names[d] : lname, p);
    if (rc == HS_OK) rc = hs_h5_attr_text(ds, "axis", axis, p);
    char bn[HS_IO_NAME_MAX + 8];
    hs_writer_bounds_name(w, d, bn, sizeof bn);
    if (rc == HS_OK) rc = hs_h5_attr_text(ds, "bounds", bn, p);
    H5Dclose(ds);
    HS_CHECK(rc);
    return def_bounds(w, desc, d, bn);
}

/* cell_area [y, x] in m2, which the data variables name in cell_measures (as in the NetCDF file). */
static int def_area(hs_writer *w)
{
    const char *p = w->partial;
    int64_t len[2] = {w->n[1], w->n[0]};
    hid_t ds = -1;
    HS_CHECK(make_dataset(w, HS_CELL_AREA, H5T_IEEE_F64LE, 2, len, 0, 0, &ds));
    double *a = hs_writer_cell_area(w);
    int rc = a ? HS_OK : HS_FAIL(HS_ERR_RUNTIME, "out of host memory for cell areas");
    if (rc == HS_OK) rc = write_whole(w, ds, H5T_NATIVE_DOUBLE, a, "H5Dwrite (cell_area)");
    free(a);
    char dims[2 * HS_IO_NAME_MAX + 2];
    snprintf(dims, sizeof dims, "%s %s", w->dim_names[1], w->dim_names[0]);
    if (rc == HS_OK) rc = hs_h5_attr_text(ds, "units", "m2", p);
    if (rc == HS_OK) rc = hs_h5_attr_text(ds, "standard_name", "cell_area", p);
    if (rc == HS_OK) rc = hs_h5_attr_text(ds, "long_name", "area of the cell in the x-y plane", p);
    if (rc == HS_OK) rc = hs_h5_attr_text(ds, "dimensions", dims, p);
    H5Dclose(ds);
    return rc;
}

static int def_globals(hs_writer *w, const hs_output_desc *desc)
{
    hid_t f = st(w)->file;
    const char *p = w->partial;
    HS_CHECK(hs_h5_attr_text(f, "Conventions", HS_CF_CONVENTIONS, p));
    HS_CHECK(hs_h5_attr_text(f, "title", desc->title ? desc->title : "hpcsim output", p));
    HS_CHECK(hs_h5_attr_text(f, "source", HS_SOURCE_ATTR, p));
    HS_CHECK(hs_h5_attr_text(f, "history", w->history, p));
    if (desc->params_ini) HS_CHECK(hs_h5_attr_text(f, "hpcsim_parameters", desc->params_ini, p));
    return HS_OK;
}

static int h5_create(hs_writer *w, const hs_output_desc *desc)
{
    hid_t fapl;
    HS_CHECK(new_state(w));
    HS_CHECK(writer_fapl(w, &fapl));
    /* creation order is tracked so that a resumed writer numbers the variables as the first run did */
    hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
    if (fcpl < 0 || H5Pset_link_creation_order(fcpl, H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED) < 0) {
        if (fcpl >= 0) H5Pclose(fcpl);
        H5Pclose(fapl);
        return hs_h5_fail("H5Pset_link_creation_order", w->partial, __FILE__, __LINE__);
    }
    st(w)->file = H5Fcreate(w->partial, H5F_ACC_TRUNC, fcpl, fapl);
    H5Pclose(fcpl);
    H5Pclose(fapl);
    if (st(w)->file < 0) return hs_h5_fail("H5Fcreate", w->partial, __FILE__, __LINE__);
    if (w->has_time) HS_CHECK(def_time(w, desc));
    for (int d = 0; d < w->ndim; d++) HS_CHECK(def_coord(w, desc, d));
    if (w->has_area) HS_CHECK(def_area(w));
    HS_CHECK(def_globals(w, desc));
    return HS_OK;
}

/* "time z y x" for the `dimensions` attribute (file order, as ncdump would show it). */
static void dim_list(const hs_writer *w, const hs_writer_var *v, char *buf, size_t len)
{
    buf[0] = 0;
    if (v->time_dependent) snprintf(buf, len, "%s", w->rec_name);
    if (v->grid == HS_GRID_STATIONS) {
        size_t used = strlen(buf);
        snprintf(buf + used, len - used, "%s%s", used ? " " : "", w->st_dim);
    }
    for (int d = w->ndim - 1; v->grid == 0 && d >= 0; d--) {
        size_t used = strlen(buf);
        snprintf(buf + used, len - used, "%s%s", used ? " " : "", w->dim_names[d]);
    }
}

static int h5_def(hs_writer *w, hs_writer_var *v, const char *units, const char *long_name, const char *standard_name)
{
    const char *p = w->partial;
    int64_t len[4];
    int rank = 0, slot = w->nvars;
    if (v->time_dependent) len[rank++] = 1;
    rank += hs_writer_var_space(w, v, len + rank);
    hid_t ftype = v->dtype == HS_F32 ? H5T_IEEE_F32LE : H5T_IEEE_F64LE;
    HS_CHECK(make_dataset(w, v->name, ftype, rank, len, v->time_dependent, w->deflate, &st(w)->ds[slot]));
    v->id = slot;
    hid_t ds = st(w)->ds[slot];
    char dims[4 * HS_IO_NAME_MAX + 8];
    dim_list(w, v, dims, sizeof dims);
    HS_CHECK(hs_h5_attr_text(ds, "units", units ? units : "1", p));
    HS_CHECK(hs_h5_attr_text(ds, "long_name", long_name ? long_name : v->name, p));
    if (standard_name) HS_CHECK(hs_h5_attr_text(ds, "standard_name", standard_name, p));
    HS_CHECK(hs_h5_attr_text(ds, "dimensions", dims, p));
    if (w->has_area && v->grid == 0) HS_CHECK(hs_h5_attr_text(ds, "cell_measures", "area: " HS_CELL_AREA, p));
    if (v->grid == HS_GRID_STATIONS) {
        char c[5 * HS_IO_NAME_MAX];
        hs_writer_station_coords(w, c, sizeof c);
        HS_CHECK(hs_h5_attr_text(ds, "coordinates", c, p));
    }
    return HS_OK;
}

/* A 1-D dataset [station] of `type` with values, long_name, units (NULL: none) and dimensions. */
static int station_dataset(hs_writer *w, const char *name, hid_t ftype, hid_t mtype, const void *data,
                           const char *long_name, const char *units)
{
    const char *p = w->partial;
    hid_t ds;
    HS_CHECK(make_dataset(w, name, ftype, 1, &w->nstations, 0, 0, &ds));
    int rc = write_whole(w, ds, mtype, data, "H5Dwrite (stations)");
    if (rc == HS_OK) rc = hs_h5_attr_text(ds, "long_name", long_name, p);
    if (rc == HS_OK && units) rc = hs_h5_attr_text(ds, "units", units, p);
    if (rc == HS_OK && !units) rc = hs_h5_attr_text(ds, "cf_role", "timeseries_id", p);
    if (rc == HS_OK) rc = hs_h5_attr_text(ds, "dimensions", w->st_dim, p);
    H5Dclose(ds);
    return rc;
}

static int h5_def_stations(hs_writer *w, const hs_station_desc *sd)
{
    const char *p = w->partial;
    size_t slen = 1;
    for (int64_t i = 0; i < sd->n; i++)
        if (strlen(sd->names[i]) + 1 > slen) slen = strlen(sd->names[i]) + 1;
    char *names = calloc((size_t)sd->n, slen);
    hid_t t = names ? H5Tcopy(H5T_C_S1) : -1;
    if (t < 0) {
        free(names);
        return HS_FAIL(HS_ERR_RUNTIME, "out of host memory for station names");
    }
    for (int64_t i = 0; i < sd->n; i++) memcpy(names + (size_t)i * slen, sd->names[i], strlen(sd->names[i]));
    char nm[HS_IO_NAME_MAX + 8], lname[HS_IO_NAME_MAX + 32];
    hs_writer_station_name(w, "name", nm, sizeof nm);
    snprintf(lname, sizeof lname, "%s name", w->st_dim);
    int rc = H5Tset_size(t, slen) < 0 || H5Tset_strpad(t, H5T_STR_NULLTERM) < 0 ? hs_h5_fail("H5Tset_size", p, __FILE__, __LINE__)
                                                                                 : HS_OK;
    if (rc == HS_OK) rc = station_dataset(w, nm, t, t, names, lname, NULL);
    H5Tclose(t);
    free(names);
    const double *cv[3] = {sd->x, sd->y, sd->z};
    for (int c = 0; rc == HS_OK && c < w->st_ncoord; c++) {
        const char *ax = (const char *[]){"x", "y", "z"}[c];
        hs_writer_station_name(w, ax, nm, sizeof nm);
        snprintf(lname, sizeof lname, "%s coordinate of the %s", ax, w->st_dim);
        rc = station_dataset(w, nm, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, cv[c], lname, sd->units ? sd->units : "m");
    }
    if (rc == HS_OK) rc = hs_h5_attr_text(st(w)->file, "featureType", "timeSeries", p);
    return rc;
}

/* Grow a time-dependent dataset to hold `record` and select that record in its file space. */
static int select_record(hs_writer *w, hid_t ds, int64_t record, hid_t *fsp, hid_t *msp)
{
    const char *p = w->partial;
    hsize_t dims[H5S_MAX_RANK], start[4] = {0}, count[4];
    int rank = 0;
    HS_CHECK(get_dims(ds, &rank, dims, NULL, p));
    if (rank < 1 || rank > 4) return HS_FAIL(HS_ERR_RUNTIME, "%s: unexpected dataset rank %d", p, rank);
    if (dims[0] < (hsize_t)record + 1) {
        dims[0] = (hsize_t)record + 1;
        HS_H5_CHECK(H5Dset_extent(ds, dims), p);
    }
    for (int i = 0; i < rank; i++) count[i] = dims[i];
    start[0] = (hsize_t)record;
    count[0] = 1;
    HS_H5_ID(*fsp, H5Dget_space(ds), p);
    HS_H5_CHECK(H5Sselect_hyperslab(*fsp, H5S_SELECT_SET, start, NULL, count, NULL), p);
    HS_H5_ID(*msp, H5Screate_simple(rank, count, NULL), p);
    if (takes_none(w)) { /* rank 0 writes the record of a collective file */
        HS_H5_CHECK(H5Sselect_none(*fsp), p);
        HS_H5_CHECK(H5Sselect_none(*msp), p);
    }
    return HS_OK;
}

static int write_record(hs_writer *w, hid_t ds, hid_t mtype, int64_t record, const void *data)
{
    static const double none = 0; /* a buffer for a rank that writes nothing */
    hid_t fsp = -1, msp = -1;
    int rc = select_record(w, ds, record, &fsp, &msp);
    if (rc == HS_OK && H5Dwrite(ds, mtype, msp, fsp, st(w)->dxpl, takes_none(w) ? (const void *)&none : data) < 0)
        rc = hs_h5_fail("H5Dwrite", w->partial, __FILE__, __LINE__);
    if (fsp >= 0) H5Sclose(fsp);
    if (msp >= 0) H5Sclose(msp);
    return rc;
}

static int h5_time(hs_writer *w, int64_t record, double t)
{
    return write_record(w, st(w)->time_ds, H5T_NATIVE_DOUBLE, record, &t);
}

static int h5_put(hs_writer *w, const hs_writer_var *v, const void *data)
{
    hid_t ds = st(w)->ds[v->id], mtype = v->dtype == HS_F32 ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE;
    if (v->time_dependent) return write_record(w, ds, mtype, w->nrec - 1, data);
    return write_whole(w, ds, mtype, data, "H5Dwrite");
}

#if HS_HAVE_HDF5_PARALLEL
/* A collective file: this rank's block as a hyperslab of the record (none when empty). */
static int h5_put_block(hs_writer *w, const hs_writer_var *v, const int64_t off[3], const int64_t cnt[3], const void *data)
{
    static const double none = 0;
    const char *p = w->partial;
    hid_t ds = st(w)->ds[v->id], mtype = v->dtype == HS_F32 ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE, fsp = -1, msp = -1;
    hsize_t dims[H5S_MAX_RANK], start[4] = {0}, count[4] = {0};
    int rank = 0, k = 0, empty = 0;
    HS_CHECK(get_dims(ds, &rank, dims, NULL, p));
    if (rank != w->ndim + v->time_dependent) return HS_FAIL(HS_ERR_RUNTIME, "%s: %s has rank %d", p, v->name, rank);
    if (v->time_dependent) {
        int64_t record = w->nrec - 1;
        if (dims[0] < (hsize_t)record + 1) { /* every rank grows it alike: H5Dset_extent is collective */
            dims[0] = (hsize_t)record + 1;
            HS_H5_CHECK(H5Dset_extent(ds, dims), p);
        }
        start[k] = (hsize_t)record;
        count[k++] = 1;
    }
    for (int d = w->ndim - 1; d >= 0; d--, k++) {
        start[k] = (hsize_t)off[d];
        count[k] = (hsize_t)cnt[d];
        empty |= cnt[d] == 0;
    }
    int rc = HS_OK;
    if ((fsp = H5Dget_space(ds)) < 0 || (msp = H5Screate_simple(rank, count, NULL)) < 0)
        rc = hs_h5_fail("H5Dget_space", p, __FILE__, __LINE__);
    else if (empty ? H5Sselect_none(fsp) < 0 || H5Sselect_none(msp) < 0
                   : H5Sselect_hyperslab(fsp, H5S_SELECT_SET, start, NULL, count, NULL) < 0)
        rc = hs_h5_fail("H5Sselect_hyperslab (block)", p, __FILE__, __LINE__);
    else if (H5Dwrite(ds, mtype, msp, fsp, st(w)->dxpl, empty || !data ? (const void *)&none : data) < 0)
        rc = hs_h5_fail("H5Dwrite (block)", p, __FILE__, __LINE__);
    if (msp >= 0) H5Sclose(msp);
    if (fsp >= 0) H5Sclose(fsp);
    HS_CHECK(rc);
    /* the library may quietly fall back to independent I/O; count only what it did collectively */
    H5D_mpio_actual_io_mode_t mode = H5D_MPIO_NO_COLLECTIVE;
    HS_H5_CHECK(H5Pget_mpio_actual_io_mode(st(w)->dxpl, &mode), p);
    if (mode != H5D_MPIO_NO_COLLECTIVE) w->ncollective++;
    return HS_OK;
}
#endif

static int h5_attr_text(hs_writer *w, const char *name, const char *value)
{
    return hs_h5_attr_text(st(w)->file, name, value, w->partial);
}

static int h5_attr_real(hs_writer *w, const char *name, double value)
{
    return hs_h5_attr_double(st(w)->file, name, value, w->partial);
}

static void close_objects(h5_state *s)
{
    for (int i = 0; i < HS_WRITER_MAX_VARS; i++)
        if (s->ds[i] >= 0) H5Dclose(s->ds[i]);
    if (s->time_ds >= 0) H5Dclose(s->time_ds);
    if (s->dxpl != H5P_DEFAULT) H5Pclose(s->dxpl);
    s->dxpl = H5P_DEFAULT;
}

static int h5_sync(hs_writer *w)
{
    HS_H5_CHECK(H5Fflush(st(w)->file, H5F_SCOPE_GLOBAL), w->partial);
    return HS_OK;
}

static int xdmf_group(hs_writer *w);

static int h5_close(hs_writer *w)
{
    h5_state *s = st(w);
    if (!s) return HS_OK;
    int rc = s->file >= 0 ? xdmf_group(w) : HS_OK;
    if (rc != HS_OK) return rc; /* the caller discards */
    close_objects(s);
    herr_t closed = s->file >= 0 ? H5Fclose(s->file) : 0;
    free(s);
    w->bs = NULL;
    HS_H5_CHECK(closed, w->partial);
    return HS_OK;
}

static void h5_discard(hs_writer *w)
{
    h5_state *s = st(w);
    if (!s) return;
    close_objects(s);
    if (s->file >= 0) H5Fclose(s->file);
    H5Eclear2(H5E_DEFAULT);
    free(s);
    w->bs = NULL;
}

/* ------------------------------------------------------------------ resume: shrink in place */

/* Take a dataset of the old run into the variable table. */
static int adopt_dataset(hs_writer *w, const char *name)
{
    const char *p = w->partial;
    if (w->nvars >= HS_WRITER_MAX_VARS) return HS_FAIL(HS_ERR_RUNTIME, "%s: too many variables", p);
    hid_t ds, t;
    HS_H5_ID(ds, H5Dopen2(st(w)->file, name, H5P_DEFAULT), p);
    hs_writer_var *v = &w->vars[w->nvars];
    memset(v, 0, sizeof *v);
    snprintf(v->name, sizeof v->name, "%s", name);
    st(w)->ds[w->nvars] = ds;
    v->id = w->nvars++;
    HS_H5_ID(t, H5Dget_type(ds), p);
    size_t size = H5Tget_size(t);
    H5T_class_t cls = H5Tget_class(t);
    H5Tclose(t);
    if (cls != H5T_FLOAT) return HS_FAIL(HS_ERR_RUNTIME, "%s: dataset %s is not floating point", p, name);
    v->dtype = size == 4 ? HS_F32 : HS_F64;
    hsize_t dims[H5S_MAX_RANK], maxd[H5S_MAX_RANK];
    int rank = 0;
    HS_CHECK(get_dims(ds, &rank, dims, maxd, p));
    v->time_dependent = rank >= 1 && maxd[0] == H5S_UNLIMITED && (rank == w->ndim + 1 || rank == 1);
    v->grid = w->ndim > 0 && v->time_dependent && rank == 1 ? HS_GRID_SERIES : 0;
    if (v->grid == HS_GRID_SERIES) return HS_OK;
    if (rank != w->ndim + v->time_dependent)
        return hs_input_error(p, 0, name, "the file's variable has %d dimensions, the run's grid %d", rank, w->ndim);
    for (int d = 0; d < w->ndim; d++)
        if (dims[rank - 1 - d] != (hsize_t)w->n[d])
            return hs_input_error(p, 0, name, "the file's grid has %llu points along %s, the run's %lld",
                                  (unsigned long long)dims[rank - 1 - d], w->dim_names[d], (long long)w->n[d]);
    return HS_OK;
}

/* Every dataset of the root group that is not a coordinate becomes a variable.  (Index loops
 * rather than H5Literate / H5Oget_info, whose signatures differ between HDF5 1.10 and 1.12+.) */
static int scan_datasets(hs_writer *w)
{
    const char *p = w->partial;
    H5G_info_t gi;
    HS_H5_CHECK(H5Gget_info(st(w)->file, &gi), p);
    /* our files track creation order (definition order); other files are taken by name */
    H5_index_t order = H5_INDEX_CRT_ORDER;
    char probe[HS_IO_NAME_MAX];
    if (gi.nlinks > 0 && H5Lget_name_by_idx(st(w)->file, ".", order, H5_ITER_INC, 0, probe, sizeof probe, H5P_DEFAULT) < 0) {
        H5Eclear2(H5E_DEFAULT);
        order = H5_INDEX_NAME;
    }
    for (hsize_t i = 0; i < gi.nlinks; i++) {
        char name[HS_IO_NAME_MAX];
        ssize_t len = H5Lget_name_by_idx(st(w)->file, ".", order, H5_ITER_INC, i, name, sizeof name, H5P_DEFAULT);
        HS_H5_CHECK(len, p);
        if ((size_t)len >= sizeof name || hs_writer_is_own_name(w, name)) continue;
        hid_t obj;
        HS_H5_ID(obj, H5Oopen(st(w)->file, name, H5P_DEFAULT), p);
        int is_ds = H5Iget_type(obj) == H5I_DATASET;
        H5Oclose(obj);
        if (is_ds) HS_CHECK(adopt_dataset(w, name));
    }
    return HS_OK;
}

static int shrink(hs_writer *w, hid_t ds, hsize_t nkeep)
{
    hsize_t dims[H5S_MAX_RANK];
    int rank = 0;
    HS_CHECK(get_dims(ds, &rank, dims, NULL, w->partial));
    if (rank < 1) return HS_FAIL(HS_ERR_RUNTIME, "%s: a time-dependent dataset without dimensions", w->partial);
    dims[0] = nkeep;
    HS_H5_CHECK(H5Dset_extent(ds, dims), w->partial);
    return HS_OK;
}

static int keep_times(hs_writer *w, double time, hsize_t *nkeep)
{
    const char *p = w->partial;
    *nkeep = 0;
    htri_t has = w->has_time ? H5Lexists(st(w)->file, w->rec_name, H5P_DEFAULT) : 0;
    HS_H5_CHECK(has, p);
    if (!has) return HS_OK;
    HS_H5_ID(st(w)->time_ds, H5Dopen2(st(w)->file, w->rec_name, H5P_DEFAULT), p);
    hsize_t dims[H5S_MAX_RANK];
    int rank = 0;
    HS_CHECK(get_dims(st(w)->time_ds, &rank, dims, NULL, p));
    if (rank != 1) return hs_input_error(p, 0, w->rec_name, "the record coordinate has %d dimensions, not 1", rank);
    hsize_t nt = dims[0];
    double *t = malloc((nt ? nt : 1) * sizeof *t);
    if (!t) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
    int rc = HS_OK;
    if (nt && H5Dread(st(w)->time_ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, t) < 0)
        rc = hs_h5_fail("H5Dread (time)", p, __FILE__, __LINE__);
    while (rc == HS_OK && *nkeep < nt && t[*nkeep] <= time) rc = hs_writer_push_time(w, t[(*nkeep)++]);
    free(t);
    HS_CHECK(rc);
    return shrink(w, st(w)->time_ds, *nkeep);
}

static int append_history(hs_writer *w)
{
    char *h;
    HS_CHECK(hs_h5_read_text(st(w)->file, "history", &h, w->partial));
    if (!h) return hs_h5_attr_text(st(w)->file, "history", w->history, w->partial);
    size_t len = strlen(h) + strlen(w->history) + 2;
    char *both = malloc(len);
    if (both) snprintf(both, len, "%s\n%s", h, w->history);
    free(h);
    if (!both) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
    int rc = hs_h5_attr_text(st(w)->file, "history", both, w->partial);
    free(both);
    return rc;
}

/* Reopen, drop the records after `time`, adopt the variables: rank 0 alone in any file. */
static int reopen_serial(hs_writer *w, const hs_output_desc *desc, double time)
{
    hid_t fapl;
    HS_CHECK(new_state(w));
    HS_CHECK(writer_fapl(w, &fapl));
    st(w)->file = H5Fopen(w->partial, H5F_ACC_RDWR, fapl);
    H5Pclose(fapl);
    if (st(w)->file < 0) return hs_h5_fail("H5Fopen", w->partial, __FILE__, __LINE__);
    hsize_t nkeep;
    htri_t dsg = H5Aexists(st(w)->file, "featureType");
    HS_H5_CHECK(dsg, w->partial);
    if (dsg > 0) return hs_input_error(w->partial, 0, NULL, "a station (featureType) file cannot be resumed; start a new one");
    HS_CHECK(keep_times(w, time, &nkeep));
    HS_CHECK(scan_datasets(w));
    for (int i = 0; i < w->nvars; i++)
        if (w->vars[i].time_dependent) HS_CHECK(shrink(w, st(w)->ds[i], nkeep));
    return append_history(w);
}

#if HS_HAVE_HDF5_PARALLEL
/* Close the file as it stands (no /xdmf rebuilt), reporting errors. */
static int close_plain(hs_writer *w)
{
    h5_state *s = st(w);
    close_objects(s);
    herr_t closed = H5Fclose(s->file);
    free(s);
    w->bs = NULL;
    HS_H5_CHECK(closed, w->partial);
    return HS_OK;
}

/* A collective file: rank 0 drops the later records alone, through the serial driver, then
 * every rank opens the file collectively and the datasets by name.  (Parallel HDF5 1.10.8
 * mishandles shrinking a chunked dataset collectively: the cut chunk of the time coordinate came
 * back at close over the next record's time, and a flush after the shrink could leave the ranks
 * in different barriers.) */
static int reopen_collective(hs_writer *w, const hs_output_desc *desc, double time)
{
    hs_ctx *ctx = w->ctx;
    int rc = HS_OK;
    if (ctx->rank == 0) {
        w->par = 0;
        rc = reopen_serial(w, desc, time);
        if (rc == HS_OK) rc = close_plain(w);
        else h5_discard(w);
        w->par = 1;
    }
    int code = rc;
    HS_MPI_CHECK(MPI_Bcast(&code, 1, MPI_INT, 0, ctx->comm));
    if (code != HS_OK) return ctx->rank == 0 || code == HS_ERR_INPUT ? code : HS_FAIL(code, "resuming %s failed on rank 0", w->path);
    /* rank 0's variables and record times */
    int64_t meta[2] = {w->nvars, w->nrec};
    HS_MPI_CHECK(MPI_Bcast(meta, 2, MPI_INT64_T, 0, ctx->comm));
    HS_MPI_CHECK(MPI_Bcast(w->vars, (int)sizeof w->vars, MPI_BYTE, 0, ctx->comm));
    w->nvars = (int)meta[0];
    if (ctx->rank != 0) {
        w->nrec = 0;
        for (int64_t r = 0; r < meta[1]; r++) HS_CHECK(hs_writer_push_time(w, 0));
    }
    if (meta[1] > 0) HS_MPI_CHECK(MPI_Bcast(w->times, (int)meta[1], MPI_DOUBLE, 0, ctx->comm));
    const char *p = w->partial;
    hid_t fapl;
    HS_CHECK(new_state(w));
    HS_CHECK(writer_fapl(w, &fapl));
    st(w)->file = H5Fopen(p, H5F_ACC_RDWR, fapl);
    H5Pclose(fapl);
    if (st(w)->file < 0) return hs_h5_fail("H5Fopen", p, __FILE__, __LINE__);
    htri_t has = w->has_time ? H5Lexists(st(w)->file, w->rec_name, H5P_DEFAULT) : 0;
    HS_H5_CHECK(has, p);
    if (has) HS_H5_ID(st(w)->time_ds, H5Dopen2(st(w)->file, w->rec_name, H5P_DEFAULT), p);
    for (int i = 0; i < w->nvars; i++) HS_H5_ID(st(w)->ds[i], H5Dopen2(st(w)->file, w->vars[i].name, H5P_DEFAULT), p);
    return HS_OK;
}
#endif

static int h5_reopen(hs_writer *w, const hs_output_desc *desc, double time)
{
#if HS_HAVE_HDF5_PARALLEL
    if (w->par) return reopen_collective(w, desc, time);
#endif
    return reopen_serial(w, desc, time);
}

/* ------------------------------------------------------------------ the XDMF companion */

/* Layout (documented in the .xmf itself): a temporal collection with one uniform grid per record,
 * each a 3DRectMesh whose node dimensions are the cell counts + 1 (the cell edges, /xdmf/x ...;
 * a 2-D grid is one layer of cells between two equal z nodes, a 1-D grid also one cell wide in
 * y, so that both of ParaView's XDMF readers draw a surface), and one cell-centred scalar
 * attribute per variable.  A time-dependent variable's record r is the virtual dataset
 * /xdmf/NAME/r, a view of NAME[r] (ParaView 5.11's XDMF 3 reader drops HyperSlab attributes:
 * it asks for their type before reading them); without virtual datasets (HDF5 < 1.10) it is a
 * HyperSlab DataItem, which only the legacy reader shows. */

#if H5_VERSION_GE(1, 10, 0)
#define HS_H5_VDS 1
#else
#define HS_H5_VDS 0
#endif

/* /xdmf/d: dimension d's n + 1 cell edges, the nodes of the XDMF geometry. */
static int xdmf_nodes(hs_writer *w, hid_t g, int d)
{
    const char *p = w->partial;
    hsize_t n = (hsize_t)w->n[d] + 1;
    hid_t sp, ds;
    HS_H5_ID(sp, H5Screate_simple(1, &n, NULL), p);
    ds = H5Dcreate2(g, w->dim_names[d], H5T_IEEE_F64LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Sclose(sp);
    if (ds < 0) return hs_h5_fail("H5Dcreate2 (xdmf nodes)", p, __FILE__, __LINE__);
    int rc = write_whole(w, ds, H5T_NATIVE_DOUBLE, w->edges[d], "H5Dwrite (xdmf nodes)");
    H5Dclose(ds);
    return rc;
}

#if HS_H5_VDS
/* /xdmf/NAME/r for every record: virtual datasets mapping the spatial slab NAME[r]. */
static int xdmf_views(hs_writer *w, hid_t g, int i)
{
    const char *p = w->partial, *name = w->vars[i].name;
    hid_t src = st(w)->ds[i], vg, ftype, fsp, vsp, dcpl;
    hsize_t dims[H5S_MAX_RANK], start[4] = {0}, count[4];
    int rank = 0;
    HS_CHECK(get_dims(src, &rank, dims, NULL, p));
    if (rank < 1 || rank > 4 || dims[0] < (hsize_t)w->nrec)
        return HS_FAIL(HS_ERR_RUNTIME, "%s: %s holds %llu records, %lld expected", p, name,
                       (unsigned long long)dims[0], (long long)w->nrec);
    for (int k = 0; k < rank; k++) count[k] = dims[k];
    count[0] = 1;
    char path[HS_IO_NAME_MAX + 2];
    snprintf(path, sizeof path, "/%s", name);
    HS_H5_ID(vg, H5Gcreate2(g, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), p);
    int rc = HS_OK;
    ftype = H5Dget_type(src);
    fsp = H5Screate_simple(rank, dims, NULL);
    vsp = H5Screate_simple(rank - 1, dims + 1, NULL);
    if (ftype < 0 || fsp < 0 || vsp < 0) rc = hs_h5_fail("H5Screate_simple (xdmf views)", p, __FILE__, __LINE__);
    for (int64_t r = 0; rc == HS_OK && r < w->nrec; r++) {
        char rn[32];
        snprintf(rn, sizeof rn, "%lld", (long long)r);
        start[0] = (hsize_t)r;
        dcpl = H5Pcreate(H5P_DATASET_CREATE);
        hid_t ds = -1;
        if (dcpl >= 0 && H5Sselect_hyperslab(fsp, H5S_SELECT_SET, start, NULL, count, NULL) >= 0 &&
            H5Pset_virtual(dcpl, vsp, ".", path, fsp) >= 0)
            ds = H5Dcreate2(vg, rn, ftype, vsp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
        if (ds < 0) rc = hs_h5_fail("H5Dcreate2 (virtual dataset)", p, __FILE__, __LINE__);
        else H5Dclose(ds);
        if (dcpl >= 0) H5Pclose(dcpl);
    }
    if (vsp >= 0) H5Sclose(vsp);
    if (fsp >= 0) H5Sclose(fsp);
    if (ftype >= 0) H5Tclose(ftype);
    H5Gclose(vg);
    return rc;
}
#endif

/* Rank 0, before closing: (re)build /xdmf for the records the file holds now. */
static int xdmf_group(hs_writer *w)
{
    const char *p = w->partial;
    hid_t f = st(w)->file, g;
    if (w->ndim == 0) return HS_OK;
    htri_t e = H5Lexists(f, "xdmf", H5P_DEFAULT);
    HS_H5_CHECK(e, p);
    if (e > 0) HS_H5_CHECK(H5Ldelete(f, "xdmf", H5P_DEFAULT), p);
    HS_H5_ID(g, H5Gcreate2(f, "xdmf", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), p);
    int rc = hs_h5_attr_text(g, "comment",
                             "for the XDMF companion (.xmf): cell edges as the grid's nodes, and each record of "
                             "a time-dependent variable as a virtual dataset (a view, no copy) of its slab",
                             p);
    for (int d = 0; rc == HS_OK && d < w->ndim; d++) rc = xdmf_nodes(w, g, d);
#if HS_H5_VDS
    for (int i = 0; rc == HS_OK && i < w->nvars; i++)
        if (w->vars[i].time_dependent && w->vars[i].grid == 0) rc = xdmf_views(w, g, i);
#endif
    H5Gclose(g);
    return rc;
}

static void xml_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
    }
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* "FILE:/path" of an HDF DataItem. */
static void xdmf_item(FILE *f, const char *dims, int f32, const char *file, const char *ds)
{
    fprintf(f, "<DataItem Dimensions=\"%s\" NumberType=\"Float\" Precision=\"%d\" Format=\"HDF\">", dims, f32 ? 4 : 8);
    xml_text(f, file);
    fputs(":/", f);
    xml_text(f, ds);
    fputs("</DataItem>\n", f);
}

/* Cell counts (cells = 1) or node counts (cells = 0) along z, y, x, slowest first. */
static void xdmf_dims(const hs_writer *w, int cells, char *buf, size_t len)
{
    buf[0] = 0;
    for (int d = 2; d >= 0; d--) {
        size_t u = strlen(buf);
        long long n = d < w->ndim ? (long long)w->n[d] : 1;
        snprintf(buf + u, len - u, "%s%lld", u ? " " : "", n + (cells ? 0 : 1));
    }
}

static void xdmf_geometry(FILE *f, const hs_writer *w, const char *file)
{
    fputs("        <Geometry GeometryType=\"VXVYVZ\">\n", f);
    for (int d = 0; d < 3; d++) {
        fputs("          ", f);
        if (d < w->ndim) {
            char n[32], path[HS_IO_NAME_MAX + 8];
            snprintf(n, sizeof n, "%lld", (long long)w->n[d] + 1);
            snprintf(path, sizeof path, "xdmf/%s", w->dim_names[d]);
            xdmf_item(f, n, 0, file, path);
        } else {
            /* a missing dimension: two nodes, equal in z (a flat layer); in y a strip a tenth as wide as x */
            double h = d == 1 ? 0.1 * fabs(w->edges[0][w->n[0]] - w->edges[0][0]) : 0.0;
            fprintf(f, "<DataItem Dimensions=\"2\" NumberType=\"Float\" Precision=\"8\" Format=\"XML\">0 %.17g</DataItem>\n",
                    h > 0 ? h : (d == 1 ? 1.0 : 0.0));
        }
    }
    fputs("        </Geometry>\n", f);
}

static void xdmf_attribute(FILE *f, const hs_writer *w, const hs_writer_var *v, int64_t record, const char *file,
                           const char *cells)
{
    int f32 = v->dtype == HS_F32;
    fputs("        <Attribute Name=\"", f);
    xml_text(f, v->name);
    fputs("\" AttributeType=\"Scalar\" Center=\"Cell\">\n          ", f);
    if (!v->time_dependent) {
        xdmf_item(f, cells, f32, file, v->name);
    } else if (HS_H5_VDS) {
        char path[HS_IO_NAME_MAX + 32];
        snprintf(path, sizeof path, "xdmf/%s/%lld", v->name, (long long)record);
        xdmf_item(f, cells, f32, file, path);
    } else {
        int rank = w->ndim + 1;
        fprintf(f, "<DataItem ItemType=\"HyperSlab\" Dimensions=\"%s\" NumberType=\"Float\" Precision=\"%d\">\n", cells,
                f32 ? 4 : 8);
        fprintf(f, "            <DataItem Dimensions=\"3 %d\" NumberType=\"UInt\" Format=\"XML\">%lld", rank, (long long)record);
        for (int i = 1; i < rank; i++) fputs(" 0", f);
        for (int i = 0; i < rank; i++) fputs(" 1", f);
        fputs(" 1", f);
        for (int d = w->ndim - 1; d >= 0; d--) fprintf(f, " %lld", (long long)w->n[d]);
        fputs("</DataItem>\n", f);
        char full[128];
        snprintf(full, sizeof full, "%lld", (long long)w->nrec);
        for (int d = w->ndim - 1; d >= 0; d--) {
            size_t u = strlen(full);
            snprintf(full + u, sizeof full - u, " %lld", (long long)w->n[d]);
        }
        fputs("            ", f);
        xdmf_item(f, full, f32, file, v->name);
        fputs("          </DataItem>\n", f);
    }
    fputs("        </Attribute>\n", f);
}

/* One uniform grid: record >= 0 is a time step, -1 the static fields only. */
static void xdmf_grid(FILE *f, const hs_writer *w, int64_t record, const char *file)
{
    char nodes[96], cells[96];
    xdmf_dims(w, 0, nodes, sizeof nodes);
    xdmf_dims(w, 1, cells, sizeof cells);
    fprintf(f, "      <Grid Name=\"step_%lld\" GridType=\"Uniform\">\n", (long long)(record < 0 ? 0 : record));
    if (record >= 0) fprintf(f, "        <Time Value=\"%.17g\"/>\n", w->times[record]);
    fprintf(f, "        <Topology TopologyType=\"3DRectMesh\" Dimensions=\"%s\"/>\n", nodes);
    xdmf_geometry(f, w, file);
    for (int i = 0; i < w->nvars; i++)
        if (w->vars[i].grid == 0 && (record >= 0 || !w->vars[i].time_dependent)) xdmf_attribute(f, w, &w->vars[i], record, file, cells);
    fputs("      </Grid>\n", f);
}

static int xdmf_write(const hs_writer *w, FILE *f)
{
    const char *file = base_name(w->path);
    fputs("<?xml version=\"1.0\" ?>\n<!DOCTYPE Xdmf SYSTEM \"Xdmf.dtd\" []>\n", f);
    fputs("<!-- hpcsim: companion of ", f);
    xml_text(f, file);
    fputs(" (references are relative to this file) for ParaView's XDMF readers (XDMF 3 and legacy)\n"
          "     and VisIt.  One uniform grid per record: a 3DRectMesh whose nodes are the cell edges\n"
          "     (/xdmf/x ...; a 2-D grid is one layer of cells), with cell-centred fields; record r of a\n"
          "     time-dependent field is /xdmf/NAME/r, a virtual dataset viewing NAME[r]. -->\n", f);
    fputs("<Xdmf Version=\"3.0\">\n  <Domain>\n", f);
    if (w->has_time && w->nrec > 0) {
        fputs("    <Grid Name=\"TimeSeries\" GridType=\"Collection\" CollectionType=\"Temporal\">\n", f);
        for (int64_t r = 0; r < w->nrec; r++) xdmf_grid(f, w, r, file);
        fputs("    </Grid>\n", f);
    } else {
        xdmf_grid(f, w, -1, file);
    }
    fputs("  </Domain>\n</Xdmf>\n", f);
    return ferror(f) ? -1 : 0;
}

/* PATH with its .h5/.hdf5/.hdf extension replaced by .xmf (appended otherwise). */
static char *xmf_name(const char *path)
{
    size_t len = strlen(path);
    char *s = malloc(len + 8);
    if (!s) return NULL;
    strcpy(s, path);
    char *dot = strrchr(s, '.');
    if (dot && strchr(dot, '/') == NULL &&
        (strcmp(dot, ".h5") == 0 || strcmp(dot, ".hdf5") == 0 || strcmp(dot, ".hdf") == 0))
        *dot = 0;
    strcat(s, ".xmf");
    return s;
}

static int h5_finish(hs_writer *w)
{
    if (w->ndim == 0) return HS_OK; /* a time series has no grid to show */
    char *xmf = xmf_name(w->path);
    size_t len = xmf ? strlen(xmf) + 8 : 0;
    char *tmp = xmf ? malloc(len) : NULL;
    if (!tmp) {
        free(xmf);
        return HS_FAIL(HS_ERR_RUNTIME, "out of host memory for the XDMF file name");
    }
    snprintf(tmp, len, "%s.tmp", xmf);
    int rc = HS_OK;
    FILE *f = fopen(tmp, "w");
    if (!f) {
        rc = HS_FAIL(HS_ERR_RUNTIME, "cannot create %s: %s", tmp, strerror(errno));
    } else {
        int bad = xdmf_write(w, f);
        if (fclose(f) != 0 || bad) rc = HS_FAIL(HS_ERR_RUNTIME, "writing %s failed: %s", tmp, strerror(errno));
        if (rc == HS_OK && rename(tmp, xmf) != 0)
            rc = HS_FAIL(HS_ERR_RUNTIME, "renaming %s to %s failed: %s", tmp, xmf, strerror(errno));
        if (rc != HS_OK) remove(tmp);
    }
    free(tmp);
    free(xmf);
    return rc;
}

const hs_writer_backend hs_writer_hdf5 = {
    .name = "hdf5",
    .create = h5_create,
    .reopen = h5_reopen,
    .def_var = h5_def,
    .put_time = h5_time,
    .put = h5_put,
    .attr_text = h5_attr_text,
    .def_stations = h5_def_stations,
    .attr_real = h5_attr_real,
    .sync = h5_sync,
    .close = h5_close,
    .finish = h5_finish,
    .discard = h5_discard,
    .parallel = HS_HAVE_HDF5_PARALLEL,
#if HS_HAVE_HDF5_PARALLEL
    .put_block = h5_put_block,
#endif
};

#endif
