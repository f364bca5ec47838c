/* HDF5 backend of the writer: datasets [time, z, y, x] with CF-style attributes, plus the XDMF companion. */
#include "io/output_impl.h"
#include "io/written.h"

#if HS_HAVE_HDF5
#if HS_HAVE_HDF5_PARALLEL && !defined(H5_HAVE_PARALLEL)
#error "HDF5_PARALLEL=1 but this hdf5.h is the serial flavour"
#endif
#include <errno.h>
#include <math.h>
#include <stdarg.h>
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
    /* the file driver's I/O errors read "file write failed: time = <ctime() and its newline>,
     * filename = ..., errno = 28, error message = 'No space left on device', buf = 0x..., ...":
     * keep the operation and the system's words */
    const char *msg = strstr(why, "error message = '"), *colon = strchr(why, ':');
    const char *end = msg ? strchr(msg + 17, '\'') : NULL;
    if (msg && end && colon && colon < msg) {
        snprintf(buf, len, "%.*s: %.*s", (int)(colon - why), why, (int)(end - msg - 17), msg + 17);
        return;
    }
    for (char *c = why; *c; c++)
        if (*c == '\n' || *c == '\r') *c = ' ';
    snprintf(buf, len, "%s", why);
}

int hs_h5_fail(const char *call, const char *path, const char *file, int line)
{
    char why[256], space[HS_IO_FS_NOTE_MAX];
    hs_h5_reason(why, sizeof why);
    hs_io_fs_note(path, space, sizeof space);
    return hs_error_raise(HS_ERR_RUNTIME, file, line, "HDF5 call %s failed on %s%s%s%s", call, path ? path : "?",
                          *why ? ": " : "", why, space);
}

int hs_h5_failf(const char *path, const char *file, int line, const char *fmt, ...)
{
    char call[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(call, sizeof call, fmt, ap);
    va_end(ap);
    return hs_h5_fail(call, path, file, line);
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

int hs_h5_is_dim_only(hid_t ds)
{
    int yes = 0;
    if (H5Aexists(ds, "CLASS") > 0 && H5Aexists(ds, "NAME") > 0) {
        hid_t a = H5Aopen(ds, "NAME", H5P_DEFAULT), t = a >= 0 ? H5Aget_type(a) : -1;
        size_t len = sizeof HS_H5_DIM_ONLY - 1, size = t >= 0 ? H5Tget_size(t) : 0;
        if (t >= 0 && H5Tget_class(t) == H5T_STRING && H5Tis_variable_str(t) == 0 && size >= len) {
            char *s = calloc(size + 1, 1);
            if (s && H5Aread(a, t, s) >= 0) yes = !strncmp(s, HS_H5_DIM_ONLY, len);
            free(s);
        }
        if (t >= 0) H5Tclose(t);
        if (a >= 0) H5Aclose(a);
    }
    H5Eclear2(H5E_DEFAULT);
    return yes;
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
    HS_H5_CHECK_AS(e, path, "H5Aexists (attribute %s)", name);
    if (e > 0) HS_H5_CHECK_AS(H5Adelete(obj, name), path, "H5Adelete (attribute %s)", name);
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
    HS_H5_CHECK_AS(rc, path, "H5Awrite (attribute %s)", name);
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

/* Attribute a (named `name`, for messages) as text. */
static int read_text_attr(hid_t a, const char *name, char **out, const char *path)
{
    hid_t ft, mt;
    HS_H5_ID(ft, H5Aget_type(a), path);
    htri_t vl = H5Tis_variable_str(ft);
    size_t sz = H5Tget_size(ft);
    H5T_cset_t cset = H5Tget_cset(ft);
    H5Tclose(ft);
    HS_H5_CHECK_AS(vl, path, "H5Tis_variable_str (attribute %s)", name);
    HS_H5_ID(mt, H5Tcopy(H5T_C_S1), path);
    /* the memory string in the file's character set: HDF5 converts no string between ASCII and
     * UTF-8, and h5py writes its str attributes as UTF-8 (their `units` failed to read, exit 1) */
    int rc = cset >= 0 && H5Tset_cset(mt, cset) < 0 ? hs_h5_failf(path, __FILE__, __LINE__, "H5Tset_cset (attribute %s)", name) : HS_OK;
    if (rc != HS_OK) {
        *out = NULL;
    } else if (vl) {
        char *s = NULL;
        if (H5Tset_size(mt, H5T_VARIABLE) < 0 || H5Aread(a, mt, &s) < 0) rc = hs_h5_failf(path, __FILE__, __LINE__, "H5Aread (attribute %s)", name);
        *out = rc == HS_OK ? strdup(s ? s : "") : NULL;
        if (s) H5free_memory(s);
    } else {
        *out = calloc(sz + 2, 1);
        if (*out && (H5Tset_size(mt, sz + 1) < 0 || H5Aread(a, mt, *out) < 0))
            rc = hs_h5_failf(path, __FILE__, __LINE__, "H5Aread (attribute %s)", name);
    }
    H5Tclose(mt);
    if (rc == HS_OK && !*out) rc = HS_FAIL(HS_ERR_RUNTIME, "out of host memory reading an attribute");
    return rc;
}

int hs_h5_read_text(hid_t obj, const char *name, char **out, const char *path)
{
    *out = NULL;
    htri_t e = H5Aexists(obj, name);
    HS_H5_CHECK_AS(e, path, "H5Aexists (attribute %s)", name);
    if (e == 0) return HS_OK;
    hid_t a;
    HS_H5_ID(a, H5Aopen(obj, name, H5P_DEFAULT), path);
    int rc = read_text_attr(a, name, out, path);
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
    /* attributes listed in the order written (units, long_name, ...), as in the NetCDF output */
    if (H5Pset_attr_creation_order(dcpl, H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED) < 0) {
        H5Pclose(dcpl);
        return hs_h5_fail("H5Pset_attr_creation_order", w->partial, __FILE__, __LINE__);
    }
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

/* ------------------------------------------------------------------ netCDF-4 dimensions
 *
 * Every dimension of the file is an HDF5 dimension scale, stored as netCDF-4 stores it, so that
 * netCDF-4 readers (h5netcdf and xarray's engine="h5netcdf", the NetCDF library) see the file's
 * dimensions and coordinates as in the NetCDF output rather than phony_dim_N: a coordinate variable
 * (x, y, z, time, an extra grid's x_face ...) is the scale of its own dimension; a dimension
 * without one (bnds, the mesh's and the stations' dimensions) is an empty dataset of its name and
 * length whose scale NAME says "This is a netCDF dimension but not a netCDF variable."; and each
 * dataset's dimensions, named in file order by its `dimensions` attribute, are attached to their
 * scales.  H5DS calls are metadata calls: in a collective file every rank makes them alike. */

/* Make dataset ds the scale of dimension `name` (a coordinate variable), unless it is one already. */
static int make_scale(hs_writer *w, hid_t ds, const char *name)
{
    htri_t is = H5DSis_scale(ds);
    HS_H5_CHECK_AS(is, w->partial, "H5DSis_scale (dataset %s)", name);
    if (is == 0) HS_H5_CHECK_AS(H5DSset_scale(ds, name), w->partial, "H5DSset_scale (dataset %s)", name);
    return HS_OK;
}

/* The dimension `name` of length n that has no coordinate variable, in group loc, as netCDF-4 stores
 * one (a 32-bit float dataset that is never written, its scale NAME the mark and the length); left
 * open in *out.  Its fill value 0 is written where the space is allocated: parallel HDF5 allocates
 * it at creation, and without a fill it held whatever the file's bytes were (h5dump showed them). */
static int dim_only(hs_writer *w, hid_t loc, const char *name, hsize_t n, hid_t *out)
{
    const char *p = w->partial;
    static const float zero = 0;
    hid_t sp, ds, dcpl;
    HS_H5_ID(dcpl, H5Pcreate(H5P_DATASET_CREATE), p);
    if (H5Pset_fill_value(dcpl, H5T_NATIVE_FLOAT, &zero) < 0 || H5Pset_fill_time(dcpl, H5D_FILL_TIME_ALLOC) < 0 ||
        H5Pset_attr_creation_order(dcpl, H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED) < 0) {
        H5Pclose(dcpl);
        return hs_h5_fail("H5Pset_fill_value (dimension)", p, __FILE__, __LINE__);
    }
    sp = H5Screate_simple(1, &n, NULL);
    ds = sp >= 0 ? H5Dcreate2(loc, name, H5T_IEEE_F32BE, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT) : -1;
    if (sp >= 0) H5Sclose(sp);
    H5Pclose(dcpl);
    if (ds < 0) return hs_h5_fail("H5Dcreate2 (dimension)", p, __FILE__, __LINE__);
    char mark[sizeof HS_H5_DIM_ONLY + 24];
    snprintf(mark, sizeof mark, "%s%10lld", HS_H5_DIM_ONLY, (long long)n);
    if (H5DSset_scale(ds, mark) < 0) {
        H5Dclose(ds);
        return hs_h5_fail("H5DSset_scale", p, __FILE__, __LINE__);
    }
    *out = ds;
    return HS_OK;
}

/* Attach dataset ds's dimensions, named in file order by `dims` ("time y x"), to their scales: a
 * coordinate variable (made a scale here if it is not one: a file of an older hpcsim, resumed), or
 * a dimension-only scale, made on first use with ds's extent along that axis.  Attached ones stay. */
static int attach_dims(hs_writer *w, hid_t ds, const char *dims)
{
    const char *p = w->partial;
    hsize_t ext[H5S_MAX_RANK];
    int rank = 0, i = 0, rc = HS_OK;
    HS_CHECK(get_dims(ds, &rank, ext, NULL, p));
    char list[8 * HS_IO_NAME_MAX], *save = NULL;
    snprintf(list, sizeof list, "%s", dims);
    for (char *nm = strtok_r(list, " ", &save); rc == HS_OK && nm; nm = strtok_r(NULL, " ", &save), i++) {
        if (i >= rank) return HS_FAIL(HS_ERR_RUNTIME, "%s: dimensions \"%s\" of a dataset of rank %d", p, dims, rank);
        htri_t e = H5Lexists(st(w)->file, nm, H5P_DEFAULT);
        HS_H5_CHECK_AS(e, p, "H5Lexists (dimension %s)", nm);
        hid_t sc = -1;
        if (e > 0) {
            HS_H5_ID(sc, H5Dopen2(st(w)->file, nm, H5P_DEFAULT), p);
            rc = make_scale(w, sc, nm);
        } else {
            rc = dim_only(w, st(w)->file, nm, ext[i], &sc);
        }
        htri_t on = rc == HS_OK ? H5DSis_attached(ds, sc, (unsigned)i) : 1;
        if (on < 0) rc = hs_h5_fail("H5DSis_attached", p, __FILE__, __LINE__);
        else if (on == 0 && H5DSattach_scale(ds, sc, (unsigned)i) < 0) rc = hs_h5_fail("H5DSattach_scale", p, __FILE__, __LINE__);
        if (sc >= 0) H5Dclose(sc);
    }
    HS_CHECK(rc);
    if (i != rank) return HS_FAIL(HS_ERR_RUNTIME, "%s: dimensions \"%s\" of a dataset of rank %d", p, dims, rank);
    return HS_OK;
}

/* The `dimensions` attribute of dataset ds (file order, as ncdump shows them) and its scales. */
static int set_dims(hs_writer *w, hid_t ds, const char *dims)
{
    HS_CHECK(hs_h5_attr_text(ds, "dimensions", dims, w->partial));
    return attach_dims(w, ds, dims);
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
    HS_CHECK(make_scale(w, t, w->rec_name));
    if (!w->rec_is_time) return HS_OK; /* a counter (training iterations): no calendar, not a T axis */
    HS_CHECK(hs_h5_attr_text(t, "calendar", desc->calendar && *desc->calendar ? desc->calendar : "standard", p));
    HS_CHECK(hs_h5_attr_text(t, "axis", "T", p));
    return HS_OK;
}

/* The cell bounds of dimension d, [n, 2] (as x_bnds(x, bnds) in the NetCDF file). */
static int def_bounds(hs_writer *w, int d, const char *name)
{
    int64_t len[2] = {w->n[d], 2};
    hid_t ds = -1;
    HS_CHECK(make_dataset(w, name, H5T_IEEE_F64LE, 2, len, 0, 0, &ds));
    double *b = hs_writer_bounds(w, d);
    int rc = b ? HS_OK : HS_FAIL(HS_ERR_RUNTIME, "out of host memory for cell bounds");
    if (rc == HS_OK) rc = write_whole(w, ds, H5T_NATIVE_DOUBLE, b, "H5Dwrite (bounds)");
    free(b);
    char dims[HS_IO_NAME_MAX + 8];
    snprintf(dims, sizeof dims, "%s bnds", w->dim_names[d]);
    /* no units: as in the NetCDF file, the bounds take their coordinate's (CF 7.1) */
    if (rc == HS_OK) rc = set_dims(w, ds, dims);
    H5Dclose(ds);
    return rc;
}

static int def_coord(hs_writer *w, const hs_output_desc *desc, int d)
{
    const char *p = w->partial, *nm = w->dim_names[d];
    char axis[2] = {desc->coord_positive[d] ? 'Z' : "XYZ"[d], 0}, lname[HS_IO_NAME_MAX + 16];
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
    if (rc == HS_OK && desc->coord_positive[d]) rc = hs_h5_attr_text(ds, "positive", desc->coord_positive[d], p);
    char bn[HS_IO_NAME_MAX + 8];
    hs_writer_bounds_name(w, d, bn, sizeof bn);
    if (rc == HS_OK) rc = hs_h5_attr_text(ds, "bounds", bn, p);
    if (rc == HS_OK) rc = make_scale(w, ds, nm);
    H5Dclose(ds);
    HS_CHECK(rc);
    return def_bounds(w, d, bn);
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
    if (rc == HS_OK) rc = set_dims(w, ds, dims);
    H5Dclose(ds);
    return rc;
}

static int def_globals(hs_writer *w, const hs_output_desc *desc)
{
    hid_t f = st(w)->file;
    const char *p = w->partial;
    HS_CHECK(hs_h5_attr_text(f, "Conventions", hs_writer_conventions(w), p));
    HS_CHECK(hs_h5_attr_text(f, "title", desc->title ? desc->title : "hpcsim output", p));
    HS_CHECK(hs_h5_attr_text(f, "source", HS_SOURCE_ATTR, p));
    HS_CHECK(hs_h5_attr_text(f, "history", w->history, p));
    if (desc->params_ini) HS_CHECK(hs_h5_attr_text(f, "hpcsim_parameters", desc->params_ini, p));
    if (desc->run_id) HS_CHECK(hs_h5_attr_text(f, "hpcsim_run_id", desc->run_id, p));
    return HS_OK;
}

/* ------------------------------------------------------------------ extra grids and the mesh */

static int attr_int32(hid_t obj, const char *name, int value, const char *path)
{
    return write_attr(obj, name, H5T_STD_I32LE, H5T_NATIVE_INT, &value, path);
}

/* Does dataset `name` exist (a resumed file), and then with extent len (x ncol)?  A different
 * extent is an input error: the run's grid or mesh is not the file's. */
static int check_extent(hs_writer *w, const char *name, int64_t len, int64_t ncol, int *exists)
{
    const char *p = w->partial;
    htri_t e = H5Lexists(st(w)->file, name, H5P_DEFAULT);
    HS_H5_CHECK_AS(e, p, "H5Lexists (dataset %s)", name);
    *exists = e > 0;
    if (!*exists || len < 0) return HS_OK;
    hid_t ds;
    hsize_t dims[H5S_MAX_RANK];
    int rank = 0;
    HS_H5_ID(ds, H5Dopen2(st(w)->file, name, H5P_DEFAULT), p);
    int rc = get_dims(ds, &rank, dims, NULL, p);
    H5Dclose(ds);
    HS_CHECK(rc);
    if (rank != (ncol ? 2 : 1) || dims[0] != (hsize_t)len || (ncol && dims[1] != (hsize_t)ncol))
        return hs_input_error(p, 0, name, "the file's %s has %llu points, the run's %lld", name, (unsigned long long)dims[0],
                              (long long)len);
    return HS_OK;
}

/* A dataset of rank 1 or 2 (len, ncol; ncol 0: rank 1) from rank 0's data, with its attributes
 * given as name, value pairs (NULL-terminated) and `dimensions`; left open in *out when out is not NULL. */
static int small_dataset(hs_writer *w, const char *name, hid_t ftype, hid_t mtype, int64_t len, int64_t ncol,
                         const void *data, const char *dims, const char *const *attrs)
{
    const char *p = w->partial;
    int64_t l[2] = {len, ncol};
    hid_t ds = -1;
    int exists;
    HS_CHECK(check_extent(w, name, len, ncol, &exists));
    if (exists) HS_H5_ID(ds, H5Dopen2(st(w)->file, name, H5P_DEFAULT), p); /* a resumed file: written again */
    else HS_CHECK(make_dataset(w, name, ftype, len < 0 ? 0 : (ncol ? 2 : 1), l, 0, 0, &ds));
    int rc = write_whole(w, ds, mtype, data, "H5Dwrite (grid data)");
    for (int i = 0; rc == HS_OK && attrs && attrs[i]; i += 2) rc = hs_h5_attr_text(ds, attrs[i], attrs[i + 1], p);
    if (rc == HS_OK && dims) rc = set_dims(w, ds, dims);
    H5Dclose(ds);
    return rc;
}

/* The extra grids' dimensions (coordinates, bounds, COMODO shift on faces) and the SGRID topology;
 * in a resumed file only what is missing (a grid the first run did not have). */
static int def_extra(hs_writer *w)
{
    const char *p = w->partial;
    for (int k = 0; k < w->nxdims; k++) {
        const hs_writer_dim *x = &w->xdims[k];
        int e;
        HS_CHECK(check_extent(w, x->name, x->n, 0, &e));
        if (e) continue;
        char axis[2] = {x->positive[0] ? 'Z' : "XYZ"[x->axis], 0}, bn[HS_IO_NAME_MAX + 8], dims[HS_IO_NAME_MAX + 8];
        snprintf(bn, sizeof bn, "%s_bnds", x->name);
        /* in the NetCDF writer's order (readers list them in the order written): the shift, then bounds */
        const char *attrs[] = {"units", x->units, "long_name", x->long_name, "axis", axis,
                               x->positive[0] ? "positive" : NULL, x->positive, NULL};
        HS_CHECK(small_dataset(w, x->name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, x->n, 0, x->coords, NULL, attrs));
        hid_t ds;
        HS_H5_ID(ds, H5Dopen2(st(w)->file, x->name, H5P_DEFAULT), p);
        /* COMODO: -0.5 the cell's low face */
        int rc = x->shift != 0 ? hs_h5_attr_double(ds, "c_grid_axis_shift", x->shift, p) : HS_OK;
        if (rc == HS_OK) rc = hs_h5_attr_text(ds, "bounds", bn, p);
        if (rc == HS_OK) rc = make_scale(w, ds, x->name);
        H5Dclose(ds);
        HS_CHECK(rc);
        double *b = takes_none(w) ? NULL : hs_writer_xdim_bounds(w, k);
        if (!b && !takes_none(w)) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory for cell bounds");
        snprintf(dims, sizeof dims, "%s bnds", x->name);
        rc = small_dataset(w, bn, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, x->n, 2, b, dims, NULL);
        free(b);
        HS_CHECK(rc);
    }
    if (!w->sgrid) return HS_OK;
    static const int zero = 0;
    const char *attrs[] = {"cf_role", "grid_topology", "long_name", "staggered grid topology (SGRID)", NULL};
    HS_CHECK(small_dataset(w, "grid", H5T_STD_I32LE, H5T_NATIVE_INT, -1, 0, &zero, NULL, attrs));
    hid_t ds;
    HS_H5_ID(ds, H5Dopen2(st(w)->file, "grid", H5P_DEFAULT), p);
    int rc = attr_int32(ds, "topology_dimension", w->ndim, p);
    const char *an;
    char value[8 * HS_IO_NAME_MAX];
    for (int i = 0; rc == HS_OK && hs_writer_sgrid_attr(w, i, &an, value, sizeof value); i++) rc = hs_h5_attr_text(ds, an, value, p);
    H5Dclose(ds);
    return rc;
}

/* UGRID names and datasets as in the NetCDF file (the mesh is written again after a resume). */
static int def_mesh(hs_writer *w)
{
    const char *p = w->partial, *cells = hs_writer_mesh_cells(w);
    const hs_writer_mesh *m = &w->mesh;
    int root = !takes_none(w), rc = HS_OK;
    char nm[HS_IO_NAME_MAX + 24], ndim[HS_IO_NAME_MAX + 24], cdim[HS_IO_NAME_MAX + 24], kdim[HS_IO_NAME_MAX + 24];
    char conn[HS_IO_NAME_MAX + 24], types[HS_IO_NAME_MAX + 24], lname[HS_IO_NAME_MAX + 64], role[64], dims[3 * HS_IO_NAME_MAX];
    char coords[3 * (HS_IO_NAME_MAX + 24)] = "";
    hs_writer_mesh_name(w, "node_dim", ndim, sizeof ndim);
    hs_writer_mesh_name(w, "cell_dim", cdim, sizeof cdim);
    hs_writer_mesh_name(w, "corner_dim", kdim, sizeof kdim);
    double *c = root ? malloc((size_t)m->nnodes * sizeof *c) : NULL;
    if (root && !c) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory writing the mesh");
    for (int k = 0; rc == HS_OK && k < m->ncoord; k++) {
        const char *ax = (const char *[]){"x", "y", "z"}[k];
        for (int64_t i = 0; root && i < m->nnodes; i++) c[i] = m->xyz[3 * i + k];
        hs_writer_mesh_name(w, ax, nm, sizeof nm);
        snprintf(lname, sizeof lname, "%s coordinate of the mesh nodes", ax);
        const char *attrs[] = {"units", m->units, "long_name", lname, NULL};
        rc = small_dataset(w, nm, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, m->nnodes, 0, c, ndim, attrs);
        size_t u = strlen(coords);
        snprintf(coords + u, sizeof coords - u, "%s%s", u ? " " : "", nm);
    }
    free(c);
    HS_CHECK(rc);
    hs_writer_mesh_name(w, "conn", conn, sizeof conn);
    snprintf(role, sizeof role, "%s_node_connectivity", cells);
    snprintf(lname, sizeof lname, "the corner nodes of every %s", m->dim == 3 ? "tetrahedron" : "triangle");
    snprintf(dims, sizeof dims, "%s %s", cdim, kdim);
    const char *cattrs[] = {"cf_role", role, "long_name", lname, NULL};
    HS_CHECK(small_dataset(w, conn, H5T_STD_I32LE, H5T_NATIVE_INT32, m->ncells, m->dim + 1, root ? m->conn : NULL, dims, cattrs));
    hid_t ds;
    HS_H5_ID(ds, H5Dopen2(st(w)->file, conn, H5P_DEFAULT), p);
    rc = attr_int32(ds, "start_index", 0, p);
    H5Dclose(ds);
    HS_CHECK(rc);
    if (m->dim == 3) {
        signed char *t = root ? calloc((size_t)m->ncells, 1) : NULL;
        if (root && !t) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory writing the mesh");
        hs_writer_mesh_name(w, "types", types, sizeof types);
        const char *tattrs[] = {"cf_role", "volume_shape_type", "long_name", "the shape of every volume", "flag_meanings",
                                "tetrahedron", NULL};
        rc = small_dataset(w, types, H5T_STD_I8LE, H5T_NATIVE_SCHAR, m->ncells, 0, t, cdim, tattrs);
        free(t);
        HS_CHECK(rc);
        signed char flag = 0;
        HS_H5_ID(ds, H5Dopen2(st(w)->file, types, H5P_DEFAULT), p);
        rc = write_attr(ds, "flag_values", H5T_STD_I8LE, H5T_NATIVE_SCHAR, &flag, p);
        H5Dclose(ds);
        HS_CHECK(rc);
    }
    hs_writer_mesh_name(w, "region", nm, sizeof nm);
    const char *rattrs[] = {"units", "1", "long_name", "region id of the cell", "mesh", m->name, "location", cells, NULL};
    HS_CHECK(small_dataset(w, nm, H5T_STD_I32LE, H5T_NATIVE_INT32, m->ncells, 0, root ? m->region : NULL, cdim, rattrs));
    static const int zero = 0;
    snprintf(lname, sizeof lname, "topology of the %s mesh", m->dim == 3 ? "tetrahedral" : "triangular");
    snprintf(role, sizeof role, "%s_node_connectivity", cells);
    char dimattr[32];
    snprintf(dimattr, sizeof dimattr, "%s_dimension", cells);
    /* in the NetCDF writer's order (readers list them in the order written): the integer
     * topology_dimension after long_name */
    const char *mattrs[] = {"cf_role", "mesh_topology", "long_name", lname, NULL};
    const char *mrest[] = {"node_coordinates", coords, role, conn, dimattr, cdim,
                           m->dim == 3 ? "volume_shape_type" : NULL, types, NULL};
    HS_CHECK(small_dataset(w, m->name, H5T_STD_I32LE, H5T_NATIVE_INT, -1, 0, &zero, NULL, mattrs));
    HS_H5_ID(ds, H5Dopen2(st(w)->file, m->name, H5P_DEFAULT), p);
    rc = attr_int32(ds, "topology_dimension", m->dim, p);
    for (int i = 0; rc == HS_OK && mrest[i]; i += 2) rc = hs_h5_attr_text(ds, mrest[i], mrest[i + 1], p);
    H5Dclose(ds);
    return rc;
}

/* SGRID or UGRID attributes of a data variable (as in the NetCDF file). */
static int topology_atts(hs_writer *w, const hs_writer_var *v, hid_t ds)
{
    const char *p = w->partial;
    if (v->grid >= 0 && w->sgrid && w->grids[v->grid].location) {
        HS_CHECK(hs_h5_attr_text(ds, "grid", "grid", p));
        HS_CHECK(hs_h5_attr_text(ds, "location", w->grids[v->grid].location, p));
    }
    if (v->grid != HS_GRID_MESH_NODE && v->grid != HS_GRID_MESH_CELL) return HS_OK;
    HS_CHECK(hs_h5_attr_text(ds, "mesh", w->mesh.name, p));
    HS_CHECK(hs_h5_attr_text(ds, "location", v->grid == HS_GRID_MESH_NODE ? "node" : hs_writer_mesh_cells(w), p));
    if (v->grid == HS_GRID_MESH_CELL) return HS_OK;
    char c[3 * (HS_IO_NAME_MAX + 24)] = "", nm[HS_IO_NAME_MAX + 24];
    for (int k = 0; k < w->mesh.ncoord; k++) {
        hs_writer_mesh_name(w, (const char *[]){"x", "y", "z"}[k], nm, sizeof nm);
        size_t u = strlen(c);
        snprintf(c + u, sizeof c - u, "%s%s", u ? " " : "", nm);
    }
    return hs_h5_attr_text(ds, "coordinates", c, p);
}

static int h5_create(hs_writer *w, const hs_output_desc *desc)
{
    hid_t fapl;
    HS_CHECK(new_state(w));
    HS_CHECK(writer_fapl(w, &fapl));
    /* creation order is tracked so that a resumed writer numbers the variables as the first run did,
     * and for the root group's attributes so that readers list them in the order written (h5py,
     * h5netcdf and xarray listed them by name), as netCDF-4 files do */
    hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
    if (fcpl < 0 || H5Pset_link_creation_order(fcpl, H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED) < 0 ||
        H5Pset_attr_creation_order(fcpl, H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED) < 0) {
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
    HS_CHECK(def_extra(w));
    if (w->has_mesh) HS_CHECK(def_mesh(w));
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
    if (v->grid == HS_GRID_MESH_NODE || v->grid == HS_GRID_MESH_CELL) {
        char nm[HS_IO_NAME_MAX + 24];
        hs_writer_mesh_name(w, v->grid == HS_GRID_MESH_NODE ? "node_dim" : "cell_dim", nm, sizeof nm);
        size_t used = strlen(buf);
        snprintf(buf + used, len - used, "%s%s", used ? " " : "", nm);
    }
    for (int d = w->ndim - 1; v->grid >= 0 && d >= 0; d--) {
        size_t used = strlen(buf);
        snprintf(buf + used, len - used, "%s%s", used ? " " : "", w->grids[v->grid].dim_name[d]);
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
    HS_CHECK(set_dims(w, ds, dims));
    if (w->has_area && v->grid == 0) HS_CHECK(hs_h5_attr_text(ds, "cell_measures", "area: " HS_CELL_AREA, p));
    if (v->grid == HS_GRID_STATIONS) {
        char c[5 * HS_IO_NAME_MAX];
        hs_writer_station_coords(w, c, sizeof c);
        HS_CHECK(hs_h5_attr_text(ds, "coordinates", c, p));
    }
    return topology_atts(w, v, ds);
}

/* A 1-D dataset [station] of `type` with values, long_name, units (NULL: none) and dimensions. */
static int station_dataset(hs_writer *w, const char *name, hid_t ftype, hid_t mtype, const void *data,
                           const char *long_name, const char *units)
{
    const char *p = w->partial;
    hid_t ds;
    HS_CHECK(make_dataset(w, name, ftype, 1, &w->nstations, 0, 0, &ds));
    int rc = write_whole(w, ds, mtype, data, "H5Dwrite (stations)");
    /* in the NetCDF writer's order: readers list them in the order written */
    if (rc == HS_OK && units) rc = hs_h5_attr_text(ds, "units", units, p);
    if (rc == HS_OK) rc = hs_h5_attr_text(ds, "long_name", long_name, p);
    if (rc == HS_OK && !units) rc = hs_h5_attr_text(ds, "cf_role", "timeseries_id", p);
    if (rc == HS_OK) rc = set_dims(w, ds, w->st_dim);
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
    /* the file is closed whatever failed (one left open was closed by HDF5 itself at MPI_Finalize).
     * A close whose flush fails (a full disk) leaves HDF5 1.10 a file it cannot close again: its
     * own close at MPI_Finalize crashed (exit 139), so the process then ends by MPI_Abort (exit 1) */
    close_objects(s);
    herr_t closed = s->file >= 0 ? H5Fclose(s->file) : 0;
    if (closed < 0) hs_error_abort_at_exit(); /* see below */
    free(s);
    w->bs = NULL;
    HS_CHECK(rc);
    HS_H5_CHECK_AS(closed, w->partial, "H5Fclose");
    return HS_OK;
}

static void h5_discard(hs_writer *w)
{
    h5_state *s = st(w);
    if (!s) return;
    close_objects(s);
    if (s->file >= 0 && H5Fclose(s->file) < 0) hs_error_abort_at_exit(); /* as h5_close */
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
    /* on an extra grid or the mesh: known by the names in its `dimensions` attribute */
    char *dl = NULL;
    HS_CHECK(hs_h5_read_text(ds, "dimensions", &dl, p));
    const char *names[8];
    int nn = 0, grows = rank >= 1 && maxd[0] == H5S_UNLIMITED;
    for (char *t = dl ? strtok(dl, " ") : NULL; t && nn < 8; t = strtok(NULL, " ")) names[nn++] = t;
    int first = grows && nn > 0 && !strcmp(names[0], w->rec_name);
    int g = nn - first == rank - grows ? hs_writer_match_dims(w, nn - first, names + first) : -100;
    free(dl);
    if (g != -100) {
        int64_t want[3];
        v->grid = g;
        v->time_dependent = grows;
        for (int i = 0, r = hs_writer_var_space(w, v, want); i < r; i++)
            if (dims[grows + i] != (hsize_t)want[i])
                return hs_input_error(p, 0, name, "the file's variable has %llu points along dimension %d, the run's %lld",
                                      (unsigned long long)dims[grows + i], i, (long long)want[i]);
        return HS_OK;
    }
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
        HS_H5_CHECK_AS(len, p, "H5Lget_name_by_idx (link %llu of /)", (unsigned long long)i);
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
    HS_H5_CHECK_AS(has, p, "H5Lexists (dataset %s)", w->rec_name);
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

/* A resumed file: the coordinates are scales and every dataset with a `dimensions` attribute is
 * attached to its scales.  Nothing changes in a file of this version; one of an older hpcsim, which
 * wrote no scales, is brought up to date (its datasets taken by name first: scales may be added). */
static int scale_file(hs_writer *w)
{
    const char *p = w->partial;
    hid_t f = st(w)->file;
    for (int d = -1; d < w->ndim + w->nxdims; d++) {
        const char *nm = d < 0 ? (w->has_time ? w->rec_name : NULL) : d < w->ndim ? w->dim_names[d] : w->xdims[d - w->ndim].name;
        htri_t e = nm ? H5Lexists(f, nm, H5P_DEFAULT) : 0;
        HS_H5_CHECK_AS(e, p, "H5Lexists (dataset %s)", nm);
        if (e == 0) continue;
        hid_t ds;
        HS_H5_ID(ds, H5Dopen2(f, nm, H5P_DEFAULT), p);
        int rc = make_scale(w, ds, nm);
        H5Dclose(ds);
        HS_CHECK(rc);
    }
    H5G_info_t gi;
    HS_H5_CHECK(H5Gget_info(f, &gi), p);
    char(*names)[HS_IO_NAME_MAX] = calloc(gi.nlinks ? gi.nlinks : 1, sizeof *names);
    if (!names) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
    int rc = HS_OK;
    hsize_t n = 0;
    for (hsize_t i = 0; rc == HS_OK && i < gi.nlinks; i++) {
        ssize_t len = H5Lget_name_by_idx(f, ".", H5_INDEX_NAME, H5_ITER_INC, i, names[n], HS_IO_NAME_MAX, H5P_DEFAULT);
        if (len < 0) rc = hs_h5_fail("H5Lget_name_by_idx", p, __FILE__, __LINE__);
        else if ((size_t)len < HS_IO_NAME_MAX) n++;
    }
    for (hsize_t i = 0; rc == HS_OK && i < n; i++) {
        hid_t obj = H5Oopen(f, names[i], H5P_DEFAULT);
        if (obj < 0) {
            rc = hs_h5_fail("H5Oopen", p, __FILE__, __LINE__);
            break;
        }
        char *dims = NULL;
        if (H5Iget_type(obj) == H5I_DATASET) rc = hs_h5_read_text(obj, "dimensions", &dims, p); /* not the group xdmf */
        if (rc == HS_OK && dims) rc = attach_dims(w, obj, dims);
        free(dims);
        H5Oclose(obj);
    }
    free(names);
    return rc;
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
    HS_H5_CHECK_AS(dsg, w->partial, "H5Aexists (attribute featureType)");
    if (dsg > 0) return hs_input_error(w->partial, 0, NULL, "a station (featureType) file cannot be resumed; start a new one");
    HS_CHECK(keep_times(w, time, &nkeep));
    HS_CHECK(scan_datasets(w));
    for (int i = 0; i < w->nvars; i++)
        if (w->vars[i].time_dependent) HS_CHECK(shrink(w, st(w)->ds[i], nkeep));
    HS_CHECK(scale_file(w));
    /* grids the first run did not declare are added; the mesh is written again (the same sizes) */
    HS_CHECK(def_extra(w));
    if (w->has_mesh) HS_CHECK(def_mesh(w));
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
    HS_H5_CHECK_AS(closed, w->partial, "H5Fclose");
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
    HS_H5_CHECK_AS(has, p, "H5Lexists (dataset %s)", w->rec_name);
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

/* /xdmf/NAME: a dimension's n + 1 cell edges (the nodes of the XDMF geometry), on a netCDF-4
 * dimension of its own, NAME_edges (without one, netCDF-4 readers took /xdmf/x for a variable on
 * the root's x and xarray.open_datatree failed on the sizes), or the mesh's node coordinates
 * interleaved [n, 3] (ncol 3), on dimensions named as the root's node one (nmesh_node: xarray
 * aligns them) and NAME_xyz (without scales, netCDF-4 readers showed phony_dim_N). */
static int xdmf_nodes(hs_writer *w, hid_t g, const char *name, int64_t n, int ncol, const double *values)
{
    const char *p = w->partial;
    hsize_t dims[2] = {(hsize_t)n + (ncol ? 0 : 1), (hsize_t)ncol};
    hid_t sp, ds;
    HS_H5_ID(sp, H5Screate_simple(ncol ? 2 : 1, dims, NULL), p);
    ds = H5Dcreate2(g, name, H5T_IEEE_F64LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Sclose(sp);
    if (ds < 0) return hs_h5_fail("H5Dcreate2 (xdmf nodes)", p, __FILE__, __LINE__);
    int rc = write_whole(w, ds, H5T_NATIVE_DOUBLE, values, "H5Dwrite (xdmf nodes)");
    for (int k = 0; rc == HS_OK && k < (ncol ? 2 : 1); k++) {
        char dn[HS_IO_NAME_MAX + 32]; /* name (up to HS_IO_NAME_MAX + 23 for the mesh) and a suffix */
        hid_t sc = -1;
        if (!ncol) snprintf(dn, sizeof dn, "%s_edges", name);
        else if (k == 0) hs_writer_mesh_name(w, "node_dim", dn, sizeof dn);
        else snprintf(dn, sizeof dn, "%s_xyz", name);
        rc = dim_only(w, g, dn, dims[k], &sc);
        if (rc == HS_OK && H5DSattach_scale(ds, sc, (unsigned)k) < 0)
            rc = hs_h5_failf(p, __FILE__, __LINE__, "H5DSattach_scale (/xdmf/%s axis %d)", name, k);
        if (sc >= 0) H5Dclose(sc);
    }
    H5Dclose(ds);
    return rc;
}

/* Variables drawn in the XDMF companion: those of the rectilinear grids and of the mesh. */
static int xdmf_drawn(const hs_writer *w, const hs_writer_var *v)
{
    if (v->grid == HS_GRID_MESH_NODE || v->grid == HS_GRID_MESH_CELL) return 1;
    return v->grid >= 0 && w->ndim > 0;
}

#if HS_H5_VDS
/* The dimensions of the views of variable `src` (rank `rank`, extents dims) in their group vg: one
 * dimension-only scale per axis after the record one, named as the variable's own (its `dimensions`
 * attribute: "time y x" gives y and x) with its length, left open in sc[0 .. *nsc).  Without them
 * netCDF-4 readers showed each view on phony_dim_N (ncdump, xarray.open_datatree); named so, xarray
 * aligns them with the root's coordinates.  The scales live in vg, not at the root: /xdmf is
 * deleted and rebuilt at every close, and the root's scales would keep listing deleted views.  A
 * variable without a `dimensions` attribute (not one of ours) gets none. */
static int view_scales(hs_writer *w, hid_t src, hid_t vg, int rank, const hsize_t *dims, hid_t *sc, int *nsc)
{
    const char *p = w->partial;
    char *dl = NULL, *save = NULL;
    *nsc = 0;
    HS_CHECK(hs_h5_read_text(src, "dimensions", &dl, p));
    char *names[H5S_MAX_RANK];
    int n = 0;
    for (char *t = dl ? strtok_r(dl, " ", &save) : NULL; t && n < H5S_MAX_RANK; t = strtok_r(NULL, " ", &save)) names[n++] = t;
    int rc = HS_OK;
    if (n == rank)
        for (int k = 1; rc == HS_OK && k < rank; k++) {
            rc = dim_only(w, vg, names[k], dims[k], &sc[k - 1]);
            if (rc == HS_OK) (*nsc)++;
        }
    free(dl);
    return rc;
}

/* The two attributes of HDF5's dimension-scale specification, as H5DSattach_scale leaves them
 * (object references of the old kind, which HDF5 1.10 to 1.14 write): a dataset's DIMENSION_LIST,
 * one reference per axis to its scale, and a scale's REFERENCE_LIST, the datasets and axes attached
 * to it.  Written in one go for all the views of a variable: H5DSattach_scale rewrites the scale's
 * whole REFERENCE_LIST at each call, and 16000 records took 25 s more at close (5.6 s before). */
static int write_list_attr(hid_t obj, const char *attr, hid_t type, hsize_t n, const void *buf, const char *p, const char *where)
{
    hid_t sp = H5Screate_simple(1, &n, NULL), a = sp >= 0 ? H5Acreate2(obj, attr, type, sp, H5P_DEFAULT, H5P_DEFAULT) : -1;
    herr_t rc = a >= 0 ? H5Awrite(a, type, buf) : -1;
    if (a >= 0) H5Aclose(a);
    if (sp >= 0) H5Sclose(sp);
    HS_H5_CHECK_AS(rc, p, "H5Awrite (attribute %s of %s)", attr, where);
    return HS_OK;
}

/* A view's DIMENSION_LIST: axis k on the scale of reference scale[k]. */
static int dimension_list(hid_t ds, int n, hobj_ref_t *scale, const char *p, const char *where)
{
    hvl_t list[H5S_MAX_RANK];
    for (int k = 0; k < n; k++) list[k].len = 1, list[k].p = &scale[k];
    hid_t type = H5Tvlen_create(H5T_STD_REF_OBJ);
    if (type < 0) return hs_h5_fail("H5Tvlen_create (DIMENSION_LIST)", p, __FILE__, __LINE__);
    int rc = write_list_attr(ds, "DIMENSION_LIST", type, (hsize_t)n, list, p, where);
    H5Tclose(type);
    return rc;
}

/* A scale's REFERENCE_LIST: axis `axis` of each of the n datasets of references refs. */
static int reference_list(hid_t sc, int64_t n, const hobj_ref_t *refs, unsigned axis, const char *p, const char *where)
{
    typedef struct { /* H5DS's own record: the reference, then the axis as a native int */
        hobj_ref_t ref;
        unsigned int dim_idx;
    } entry;
    entry *e = malloc((size_t)(n ? n : 1) * sizeof *e);
    hid_t type = H5Tcreate(H5T_COMPOUND, sizeof(entry));
    int rc = HS_OK;
    if (!e) rc = HS_FAIL(HS_ERR_RUNTIME, "out of host memory for the REFERENCE_LIST of %s in %s", where, p);
    else if (type < 0 || H5Tinsert(type, "dataset", HOFFSET(entry, ref), H5T_STD_REF_OBJ) < 0 ||
             H5Tinsert(type, "dimension", HOFFSET(entry, dim_idx), H5T_NATIVE_INT) < 0)
        rc = hs_h5_failf(p, __FILE__, __LINE__, "H5Tinsert (REFERENCE_LIST of %s)", where);
    for (int64_t i = 0; rc == HS_OK && i < n; i++) e[i].ref = refs[i], e[i].dim_idx = axis;
    if (rc == HS_OK) rc = write_list_attr(sc, "REFERENCE_LIST", type, (hsize_t)n, e, p, where);
    if (type >= 0) H5Tclose(type);
    free(e);
    return rc;
}

/* /xdmf/NAME/r for every record: virtual datasets mapping the spatial slab NAME[r], on the
 * dimensions of view_scales. */
static int xdmf_views(hs_writer *w, hid_t g, int i)
{
    const char *p = w->partial, *name = w->vars[i].name;
    hid_t src = st(w)->ds[i], vg, ftype, fsp, vsp, dcpl, sc[H5S_MAX_RANK];
    hsize_t dims[H5S_MAX_RANK], start[4] = {0}, count[4];
    int rank = 0, nsc = 0;
    HS_CHECK(get_dims(src, &rank, dims, NULL, p));
    if (rank < 1 || rank > 4 || dims[0] < (hsize_t)w->nrec)
        return HS_FAIL(HS_ERR_RUNTIME, "%s: %s holds %llu records, %lld expected", p, name,
                       (unsigned long long)dims[0], (long long)w->nrec);
    for (int k = 0; k < rank; k++) count[k] = dims[k];
    count[0] = 1;
    char path[HS_IO_NAME_MAX + 2], where[HS_IO_NAME_MAX + 64];
    snprintf(path, sizeof path, "/%s", name);
    HS_H5_ID(vg, H5Gcreate2(g, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), p);
    int rc = view_scales(w, src, vg, rank, dims, sc, &nsc);
    hobj_ref_t scale[H5S_MAX_RANK], *views = malloc((size_t)(w->nrec ? w->nrec : 1) * sizeof *views);
    if (rc == HS_OK && !views) rc = HS_FAIL(HS_ERR_RUNTIME, "out of host memory for the views of %s in %s", name, p);
    for (int k = 0; rc == HS_OK && k < nsc; k++)
        if (H5Rcreate(&scale[k], sc[k], ".", H5R_OBJECT, -1) < 0)
            rc = hs_h5_failf(p, __FILE__, __LINE__, "H5Rcreate (a dimension of /xdmf/%s)", name);
    ftype = H5Dget_type(src);
    fsp = H5Screate_simple(rank, dims, NULL);
    vsp = H5Screate_simple(rank - 1, dims + 1, NULL);
    if (rc == HS_OK && (ftype < 0 || fsp < 0 || vsp < 0)) rc = hs_h5_fail("H5Screate_simple (xdmf views)", p, __FILE__, __LINE__);
    for (int64_t r = 0; rc == HS_OK && r < w->nrec; r++) {
        char rn[32];
        snprintf(rn, sizeof rn, "%lld", (long long)r);
        snprintf(where, sizeof where, "/xdmf/%s/%s", name, rn);
        start[0] = (hsize_t)r;
        dcpl = H5Pcreate(H5P_DATASET_CREATE);
        hid_t ds = -1;
        if (dcpl >= 0 && H5Sselect_hyperslab(fsp, H5S_SELECT_SET, start, NULL, count, NULL) >= 0 &&
            H5Pset_virtual(dcpl, vsp, ".", path, fsp) >= 0)
            ds = H5Dcreate2(vg, rn, ftype, vsp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
        if (ds < 0) rc = hs_h5_failf(p, __FILE__, __LINE__, "H5Dcreate2 (virtual dataset %s)", where);
        else if (nsc && H5Rcreate(&views[r], ds, ".", H5R_OBJECT, -1) < 0) rc = hs_h5_failf(p, __FILE__, __LINE__, "H5Rcreate (%s)", where);
        else if (nsc) rc = dimension_list(ds, nsc, scale, p, where);
        if (ds >= 0) H5Dclose(ds);
        if (dcpl >= 0) H5Pclose(dcpl);
    }
    for (int k = 0; rc == HS_OK && w->nrec > 0 && k < nsc; k++) {
        snprintf(where, sizeof where, "the dimensions of /xdmf/%s", name);
        rc = reference_list(sc[k], w->nrec, views, (unsigned)k, p, where);
    }
    free(views);
    for (int k = 0; k < nsc; k++) H5Dclose(sc[k]);
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
    if (w->ndim == 0 && !w->has_mesh) return HS_OK;
    htri_t e = H5Lexists(f, "xdmf", H5P_DEFAULT);
    HS_H5_CHECK_AS(e, p, "H5Lexists (group /xdmf)");
    if (e > 0) HS_H5_CHECK_AS(H5Ldelete(f, "xdmf", H5P_DEFAULT), p, "H5Ldelete (group /xdmf)");
    HS_H5_ID(g, H5Gcreate2(f, "xdmf", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), p);
    int rc = hs_h5_attr_text(g, "comment",
                             "for the XDMF companion (.xmf): cell edges as the grid's nodes, and each record of "
                             "a time-dependent variable as a virtual dataset (a view, no copy) of its slab",
                             p);
    for (int d = 0; rc == HS_OK && d < w->ndim; d++) rc = xdmf_nodes(w, g, w->dim_names[d], w->n[d], 0, w->edges[d]);
    for (int k = 0; rc == HS_OK && k < w->nxdims; k++)
        rc = xdmf_nodes(w, g, w->xdims[k].name, w->xdims[k].n, 0, w->xdims[k].edges);
    if (rc == HS_OK && w->has_mesh) {
        char nm[HS_IO_NAME_MAX + 24];
        hs_writer_mesh_name(w, "xdmf_nodes", nm, sizeof nm);
        rc = xdmf_nodes(w, g, nm, w->mesh.nnodes, 3, takes_none(w) ? NULL : w->mesh.xyz);
    }
#if HS_H5_VDS
    for (int i = 0; rc == HS_OK && i < w->nvars; i++)
        if (w->vars[i].time_dependent && xdmf_drawn(w, &w->vars[i])) rc = xdmf_views(w, g, i);
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
static void xdmf_item_typed(FILE *f, const char *dims, const char *type, int precision, const char *file, const char *ds)
{
    fprintf(f, "<DataItem Dimensions=\"%s\" NumberType=\"%s\" Precision=\"%d\" Format=\"HDF\">", dims, type, precision);
    xml_text(f, file);
    fputs(":/", f);
    xml_text(f, ds);
    fputs("</DataItem>\n", f);
}

static void xdmf_item(FILE *f, const char *dims, int f32, const char *file, const char *ds)
{
    xdmf_item_typed(f, dims, "Float", f32 ? 4 : 8, file, ds);
}

/* Cell counts (cells = 1) or node counts (cells = 0) of grid g along z, y, x, slowest first. */
static void xdmf_dims(const hs_writer *w, int g, int cells, char *buf, size_t len)
{
    buf[0] = 0;
    for (int d = 2; d >= 0; d--) {
        size_t u = strlen(buf);
        long long n = d < w->ndim ? (long long)w->grids[g].n[d] : 1;
        snprintf(buf + u, len - u, "%s%lld", u ? " " : "", n + (cells ? 0 : 1));
    }
}

static void xdmf_geometry(FILE *f, const hs_writer *w, int g, const char *file)
{
    const hs_writer_grid *G = &w->grids[g];
    fputs("        <Geometry GeometryType=\"VXVYVZ\">\n", f);
    for (int d = 0; d < 3; d++) {
        fputs("          ", f);
        if (d < w->ndim) {
            char n[32], path[HS_IO_NAME_MAX + 8];
            snprintf(n, sizeof n, "%lld", (long long)G->n[d] + 1);
            snprintf(path, sizeof path, "xdmf/%s", G->dim_name[d]);
            xdmf_item(f, n, 0, file, path);
        } else {
            /* a missing dimension: two nodes, equal in z (a flat layer); in y a strip a tenth as wide as x */
            double h = d == 1 ? 0.1 * fabs(G->edges[0][G->n[0]] - G->edges[0][0]) : 0.0;
            fprintf(f, "<DataItem Dimensions=\"2\" NumberType=\"Float\" Precision=\"8\" Format=\"XML\">0 %.17g</DataItem>\n",
                    h > 0 ? h : (d == 1 ? 1.0 : 0.0));
        }
    }
    fputs("        </Geometry>\n", f);
}

/* Values per record of a drawn variable: its grid's cells, or the mesh's nodes or cells. */
static void xdmf_attribute(FILE *f, const hs_writer *w, const hs_writer_var *v, int64_t record, const char *file,
                           const char *cells)
{
    int f32 = v->dtype == HS_F32, node = v->grid == HS_GRID_MESH_NODE;
    fputs("        <Attribute Name=\"", f);
    xml_text(f, v->name);
    fprintf(f, "\" AttributeType=\"Scalar\" Center=\"%s\">\n          ", node ? "Node" : "Cell");
    if (!v->time_dependent) {
        xdmf_item(f, cells, f32, file, v->name);
    } else if (HS_H5_VDS) {
        char path[HS_IO_NAME_MAX + 32];
        snprintf(path, sizeof path, "xdmf/%s/%lld", v->name, (long long)record);
        xdmf_item(f, cells, f32, file, path);
    } else {
        int64_t len[3];
        int rank = hs_writer_var_space(w, v, len) + 1;
        fprintf(f, "<DataItem ItemType=\"HyperSlab\" Dimensions=\"%s\" NumberType=\"Float\" Precision=\"%d\">\n", cells,
                f32 ? 4 : 8);
        fprintf(f, "            <DataItem Dimensions=\"3 %d\" NumberType=\"UInt\" Format=\"XML\">%lld", rank, (long long)record);
        for (int i = 1; i < rank; i++) fputs(" 0", f);
        for (int i = 0; i < rank; i++) fputs(" 1", f);
        fputs(" 1", f);
        for (int i = 0; i < rank - 1; i++) fprintf(f, " %lld", (long long)len[i]);
        fputs("</DataItem>\n", f);
        char full[128];
        snprintf(full, sizeof full, "%lld", (long long)w->nrec);
        for (int i = 0; i < rank - 1; i++) {
            size_t u = strlen(full);
            snprintf(full + u, sizeof full - u, " %lld", (long long)len[i]);
        }
        fputs("            ", f);
        xdmf_item(f, full, f32, file, v->name);
        fputs("          </DataItem>\n", f);
    }
    fputs("        </Attribute>\n", f);
}

/* One uniform grid of rectilinear grid g: record >= 0 is a time step, -1 the static fields only.
 * The main grid's steps are step_N, an extra grid's NAME_step_N. */
static void xdmf_grid(FILE *f, const hs_writer *w, int g, int64_t record, const char *file)
{
    char nodes[96], cells[96];
    xdmf_dims(w, g, 0, nodes, sizeof nodes);
    xdmf_dims(w, g, 1, cells, sizeof cells);
    fputs("      <Grid Name=\"", f);
    if (g > 0) {
        xml_text(f, w->grids[g].name);
        fputc('_', f);
    }
    fprintf(f, "step_%lld\" GridType=\"Uniform\">\n", (long long)(record < 0 ? 0 : record));
    if (record >= 0) fprintf(f, "        <Time Value=\"%.17g\"/>\n", w->times[record]);
    fprintf(f, "        <Topology TopologyType=\"3DRectMesh\" Dimensions=\"%s\"/>\n", nodes);
    xdmf_geometry(f, w, g, file);
    for (int i = 0; i < w->nvars; i++)
        if (w->vars[i].grid == g && (record >= 0 || !w->vars[i].time_dependent)) xdmf_attribute(f, w, &w->vars[i], record, file, cells);
    fputs("      </Grid>\n", f);
}

/* One uniform grid of the mesh: Triangle or Tetrahedron topology on the connectivity dataset. */
static void xdmf_mesh_grid(FILE *f, const hs_writer *w, int64_t record, const char *file)
{
    const hs_writer_mesh *m = &w->mesh;
    char nm[HS_IO_NAME_MAX + 32], dims[64], nodes[32], cells[32];
    int nv = m->dim + 1;
    snprintf(nodes, sizeof nodes, "%lld", (long long)m->nnodes);
    snprintf(cells, sizeof cells, "%lld", (long long)m->ncells);
    fprintf(f, "      <Grid Name=\"step_%lld\" GridType=\"Uniform\">\n", (long long)(record < 0 ? 0 : record));
    if (record >= 0) fprintf(f, "        <Time Value=\"%.17g\"/>\n", w->times[record]);
    fprintf(f, "        <Topology TopologyType=\"%s\" NumberOfElements=\"%lld\" NodesPerElement=\"%d\">\n          ",
            m->dim == 3 ? "Tetrahedron" : "Triangle", (long long)m->ncells, nv);
    snprintf(dims, sizeof dims, "%lld %d", (long long)m->ncells, nv);
    hs_writer_mesh_name(w, "conn", nm, sizeof nm);
    xdmf_item_typed(f, dims, "Int", 4, file, nm);
    fputs("        </Topology>\n        <Geometry GeometryType=\"XYZ\">\n          ", f);
    snprintf(dims, sizeof dims, "%lld 3", (long long)m->nnodes);
    char path[HS_IO_NAME_MAX + 40];
    hs_writer_mesh_name(w, "xdmf_nodes", nm, sizeof nm);
    snprintf(path, sizeof path, "xdmf/%s", nm);
    xdmf_item(f, dims, 0, file, path);
    fputs("        </Geometry>\n        <Attribute Name=\"region\" AttributeType=\"Scalar\" Center=\"Cell\">\n          ", f);
    hs_writer_mesh_name(w, "region", nm, sizeof nm);
    xdmf_item_typed(f, cells, "Int", 4, file, nm);
    fputs("        </Attribute>\n", f);
    for (int i = 0; i < w->nvars; i++) {
        const hs_writer_var *v = &w->vars[i];
        if ((v->grid == HS_GRID_MESH_NODE || v->grid == HS_GRID_MESH_CELL) && (record >= 0 || !v->time_dependent))
            xdmf_attribute(f, w, v, record, file, v->grid == HS_GRID_MESH_NODE ? nodes : cells);
    }
    fputs("      </Grid>\n", f);
}

/* Grid g's uniform grids: a temporal collection named `name`, or one static grid. */
static void xdmf_collection(FILE *f, const hs_writer *w, int g, const char *name, const char *file)
{
    if (w->has_time && w->nrec > 0) {
        fputs("    <Grid Name=\"", f);
        xml_text(f, name);
        fputs("\" GridType=\"Collection\" CollectionType=\"Temporal\">\n", f);
        for (int64_t r = 0; r < w->nrec; r++) {
            if (g < 0) xdmf_mesh_grid(f, w, r, file);
            else xdmf_grid(f, w, g, r, file);
        }
        fputs("    </Grid>\n", f);
    } else if (g < 0) {
        xdmf_mesh_grid(f, w, -1, file);
    } else {
        xdmf_grid(f, w, g, -1, file);
    }
}

static int xdmf_write(const hs_writer *w, FILE *f)
{
    const char *file = base_name(w->path);
    fputs("<?xml version=\"1.0\" ?>\n<!DOCTYPE Xdmf SYSTEM \"Xdmf.dtd\" []>\n", f);
    fputs("<!-- hpcsim: companion of ", f);
    xml_text(f, file);
    if (w->has_mesh) {
        fputs(" (references are relative to this file) for ParaView's XDMF readers (XDMF 3 and legacy)\n"
              "     and VisIt.  One uniform grid per record: the UGRID mesh's triangles or tetrahedra\n"
              "     (the connectivity dataset, 0-based) on its nodes (/xdmf/MESH_nodes, x y z interleaved),\n"
              "     with the cell regions and node- and cell-centred fields; record r of a time-dependent\n"
              "     field is /xdmf/NAME/r, a virtual dataset viewing NAME[r]. -->\n", f);
    } else {
        fputs(" (references are relative to this file) for ParaView's XDMF readers (XDMF 3 and legacy)\n"
              "     and VisIt.  One uniform grid per record: a 3DRectMesh whose nodes are the cell edges\n"
              "     (/xdmf/x ...; a 2-D grid is one layer of cells), with cell-centred fields; record r of a\n"
              "     time-dependent field is /xdmf/NAME/r, a virtual dataset viewing NAME[r]. -->\n", f);
        if (w->ngrids > 1)
            fputs("<!-- Each extra grid (staggered faces, other sizes) is a collection of its own, named after it;\n"
                  "     a face dimension's nodes are the edges of the half cells around the faces. -->\n", f);
    }
    fputs("<Xdmf Version=\"3.0\">\n  <Domain>\n", f);
    if (w->has_mesh) {
        xdmf_collection(f, w, -1, "TimeSeries", file);
    } else {
        xdmf_collection(f, w, 0, "TimeSeries", file);
        for (int g = 1; g < w->ngrids; g++) xdmf_collection(f, w, g, w->grids[g].name, file);
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
    if (w->ndim == 0 && !w->has_mesh) return HS_OK; /* a time series has no grid to show */
    char *xmf = xmf_name(w->path);
    if (!xmf) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory for the XDMF file name");
    hs_io_whole file;
    int rc = hs_io_whole_open(&file, "XDMF", xmf, "w");
    if (rc == HS_OK) rc = hs_io_whole_commit(&file, !xdmf_write(w, file.f));
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
