/* Output writer and reader: NetCDF/HDF5 round trips (bitwise), CF attributes, XDMF, PATH.partial policy, resume. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "io/output.h"
#include "kernels/config.h"
#include "test_util.h"
#if HS_HAVE_NETCDF
#include <netcdf.h>
#endif
#if HS_HAVE_HDF5
#include <hdf5.h>

#include "io/output_impl.h" /* hs_h5_read_text, hs_h5_attr_text: their failure messages */
#endif

static char *with_suffix(const char *path, const char *suffix)
{
    static char buf[600];
    snprintf(buf, sizeof buf, "%s%s", path, suffix);
    return buf;
}

/* ------------------------------------------------------------------ a small grid and its data */

typedef struct {
    int ndim;
    int64_t n[3];
    double *coords[3];
    hs_output_desc desc;
} grid_t;

static void grid_init(grid_t *g, hs_output_format fmt, const char *path, int ndim, int64_t nx, int64_t ny, int64_t nz)
{
    static const char *names[3] = {"x", "y", "z"};
    static const char *units[3] = {"m", "m", "m"};
    memset(g, 0, sizeof *g);
    g->ndim = ndim;
    int64_t n[3] = {nx, ny, nz};
    for (int d = 0; d < ndim; d++) {
        g->n[d] = n[d];
        g->coords[d] = malloc((size_t)n[d] * sizeof(double));
        for (int64_t i = 0; i < n[d]; i++) g->coords[d][i] = 0.5 * (double)i + d;
        g->desc.dim_names[d] = names[d];
        g->desc.n[d] = n[d];
        g->desc.coords[d] = g->coords[d];
        g->desc.coord_units[d] = units[d];
    }
    g->desc.path = path;
    g->desc.format = fmt;
    g->desc.title = "hpcsim output test";
    g->desc.history = "test_output --unit";
    g->desc.params_ini = "[run]\nsolver = test\n";
    g->desc.ndim = ndim;
    g->desc.time_units = "seconds since 2000-01-01 00:00:00";
}

static void grid_free(grid_t *g)
{
    for (int d = 0; d < g->ndim; d++) free(g->coords[d]);
}

static size_t plane(const grid_t *g)
{
    size_t n = 1;
    for (int d = 0; d < g->ndim; d++) n *= (size_t)g->n[d];
    return n;
}

/* The cell edges the writer derives from the coordinates: midway between them, the end cells as
 * wide as their neighbours (a single cell is 1 wide). */
static void expected_edges(const grid_t *g, int d, double *e)
{
    const double *c = g->coords[d];
    int64_t n = g->n[d];
    if (n == 1) {
        e[0] = c[0] - 0.5, e[1] = c[0] + 0.5;
        return;
    }
    for (int64_t i = 1; i < n; i++) e[i] = 0.5 * (c[i - 1] + c[i]);
    e[0] = c[0] - (e[1] - c[0]);
    e[n] = c[n - 1] + (c[n - 1] - e[n - 1]);
}

/* Every cell's bounds [edge i, edge i + 1], as x_bnds holds them. */
TEST_MAYBE_UNUSED static void expected_bounds(const grid_t *g, int d, double *b)
{
    double *e = malloc((size_t)(g->n[d] + 1) * sizeof *e);
    expected_edges(g, d, e);
    for (int64_t i = 0; i < g->n[d]; i++) b[2 * i] = e[i], b[2 * i + 1] = e[i + 1];
    free(e);
}

static void field_T(const grid_t *g, int rec, double *x) { test_fill_f64(x, plane(g), 1000 + rec, -300, 300); }
static void field_q(const grid_t *g, int rec, float *x) { test_fill_f32(x, plane(g), 2000 + rec, 0, 1); }
static void field_mask(const grid_t *g, double *x) { test_fill_f64(x, plane(g), 77, 0, 1); }
static double rec_time(int rec) { return 0.25 * rec * rec + rec; }

typedef struct { int T, q, mask; } vars_t;

static void define(hs_writer *w, vars_t *v)
{
    TEST_OK(hs_writer_def_var(w, "T", "K", "temperature", "air_temperature", HS_F64, 1, &v->T));
    TEST_OK(hs_writer_def_var(w, "q", "1", "tracer", NULL, HS_F32, 1, &v->q));
    TEST_OK(hs_writer_def_var(w, "mask", "1", "land mask", NULL, HS_F64, 0, &v->mask));
}

static void write_record(hs_writer *w, const grid_t *g, const vars_t *v, int rec)
{
    size_t n = plane(g);
    double *T = malloc(n * sizeof *T);
    float *q = malloc(n * sizeof *q);
    field_T(g, rec, T);
    field_q(g, rec, q);
    TEST_OK(hs_writer_begin_step(w, rec_time(rec)));
    TEST_OK(hs_writer_put(w, v->T, T));
    TEST_OK(hs_writer_put(w, v->q, q));
    free(T);
    free(q);
}

static void write_file(const grid_t *g, int nrec)
{
    hs_writer *w;
    vars_t v;
    TEST_OK(hs_writer_open(test_ctx(), &g->desc, &w));
    define(w, &v);
    TEST_OK(hs_writer_attr_text(w, "institution", "hpcsim tests"));
    TEST_OK(hs_writer_attr_real(w, "answer", 42.0));
    double *mask = malloc(plane(g) * sizeof *mask);
    field_mask(g, mask);
    TEST_OK(hs_writer_put(w, v.mask, mask));
    free(mask);
    for (int r = 0; r < nrec; r++) write_record(w, g, &v, r);
    TEST_OK(hs_writer_close(w));
}

/* Read back through hs_reader: shapes, every record, whole variables, coordinates, bitwise. */
static void check_shape(hs_reader *r, const char *name, const grid_t *g, int64_t nrec)
{
    int64_t shape[8];
    int rank;
    TEST_OK(hs_reader_var_shape(r, name, shape, &rank));
    int k = 0;
    if (nrec >= 0) {
        assert_int_equal(rank, g->ndim + 1);
        assert_int_equal(shape[k++], nrec);
    } else {
        assert_int_equal(rank, g->ndim);
    }
    for (int d = g->ndim - 1; d >= 0; d--) assert_int_equal(shape[k++], g->n[d]);
}

static void check_data(const char *path, const grid_t *g, const int *recs, int nrec, const double *times)
{
    hs_reader *r;
    size_t n = plane(g);
    double *got = malloc(n * (size_t)(nrec + 1) * sizeof *got), *want = malloc(n * sizeof *want);
    float *qf = malloc(n * sizeof *qf);
    TEST_OK(hs_reader_open(path, &r));
    check_shape(r, "T", g, nrec);
    check_shape(r, "q", g, nrec);
    check_shape(r, "mask", g, -1);
    for (int i = 0; i < nrec; i++) {
        field_T(g, recs[i], want);
        TEST_OK(hs_reader_read_record(r, "T", i, got));
        assert_memory_equal(got, want, n * sizeof *got);
        field_q(g, recs[i], qf);
        for (size_t j = 0; j < n; j++) want[j] = qf[j];
        TEST_OK(hs_reader_read_record(r, "q", i, got));
        assert_memory_equal(got, want, n * sizeof *got);
    }
    TEST_OK(hs_reader_read(r, "T", got)); /* whole variable: record i at offset i * n */
    for (int i = 0; i < nrec; i++) {
        field_T(g, recs[i], want);
        assert_memory_equal(got + (size_t)i * n, want, n * sizeof *got);
    }
    /* a block of the last record: every spatial dimension without its first and last value */
    if (nrec > 0) {
        int64_t start[4] = {nrec - 1}, count[4] = {1}, ext[3] = {1, 1, 1}, lo[3] = {0, 0, 0};
        for (int d = 0; d < g->ndim; d++) { /* file order: the slowest dimension first */
            const int64_t nd = g->n[g->ndim - 1 - d];
            start[1 + d] = nd > 2, count[1 + d] = nd > 2 ? nd - 2 : nd;
            ext[g->ndim - 1 - d] = count[1 + d], lo[g->ndim - 1 - d] = start[1 + d];
        }
        TEST_OK(hs_reader_read_slab(r, "T", start, count, got));
        field_T(g, recs[nrec - 1], want);
        const int64_t nx = g->n[0], ny = g->ndim > 1 ? g->n[1] : 1;
        size_t o = 0;
        for (int64_t k = 0; k < ext[2]; k++)
            for (int64_t j = 0; j < ext[1]; j++)
                for (int64_t i = 0; i < ext[0]; i++, o++)
                    assert_true(got[o] == want[((k + lo[2]) * ny + (j + lo[1])) * nx + (i + lo[0])]);
        count[1] = g->n[g->ndim - 1] + 1; /* one past the end: an input error naming the variable */
        assert_int_equal(hs_reader_read_slab(r, "T", start, count, got), HS_ERR_INPUT);
        hs_error_clear();
    }
    TEST_OK(hs_reader_read(r, "time", got));
    assert_memory_equal(got, times, (size_t)nrec * sizeof *got);
    field_mask(g, want);
    TEST_OK(hs_reader_read(r, "mask", got));
    assert_memory_equal(got, want, n * sizeof *got);
    TEST_OK(hs_reader_read(r, "x", got));
    assert_memory_equal(got, g->coords[0], (size_t)g->n[0] * sizeof *got);
    assert_int_equal(hs_reader_read(r, "nonexistent", got), HS_ERR_INPUT);
    hs_error_clear();
    assert_int_equal(hs_reader_read_record(r, "T", nrec, got), HS_ERR_INPUT);
    hs_error_clear();
    hs_reader_close(r);
    free(got);
    free(want);
    free(qf);
}

static void check_plain(const char *path, const grid_t *g, int nrec)
{
    int recs[16];
    double times[16];
    for (int i = 0; i < nrec; i++) {
        recs[i] = i;
        times[i] = rec_time(i);
    }
    check_data(path, g, recs, nrec, times);
}

/* ------------------------------------------------------------------ attributes via the libraries */

#if HS_HAVE_NETCDF
static void nc_expect(int ncid, const char *var, const char *att, const char *want, int prefix)
{
    int v = NC_GLOBAL;
    size_t len;
    char buf[4096];
    if (var) assert_int_equal(nc_inq_varid(ncid, var, &v), NC_NOERR);
    assert_int_equal(nc_inq_attlen(ncid, v, att, &len), NC_NOERR);
    assert_true(len < sizeof buf);
    assert_int_equal(nc_get_att_text(ncid, v, att, buf), NC_NOERR);
    buf[len] = 0;
    if (prefix)
        assert_true(strncmp(buf, want, strlen(want)) == 0);
    else
        assert_string_equal(buf, want);
}

static void nc_check_attrs(const char *path, int ndim)
{
    int ncid, nd, unlim, dimids[4], v;
    char name[NC_MAX_NAME + 1];
    assert_int_equal(nc_open(path, NC_NOWRITE, &ncid), NC_NOERR);
    nc_expect(ncid, NULL, "Conventions", HS_CF_CONVENTIONS, 0);
    nc_expect(ncid, NULL, "title", "hpcsim output test", 0);
    nc_expect(ncid, NULL, "source", "hpcsim " HS_VERSION " (git ", 1);
    nc_expect(ncid, NULL, "hpcsim_parameters", "[run]\nsolver = test\n", 0);
    nc_expect(ncid, NULL, "institution", "hpcsim tests", 0);
    nc_expect(ncid, "x", "units", "m", 0);
    nc_expect(ncid, "x", "axis", "X", 0);
    nc_expect(ncid, "y", "axis", "Y", 0);
    if (ndim == 3) nc_expect(ncid, "z", "axis", "Z", 0);
    nc_expect(ncid, "time", "units", "seconds since 2000-01-01 00:00:00", 0);
    nc_expect(ncid, "time", "calendar", "standard", 0);
    nc_expect(ncid, "time", "axis", "T", 0);
    nc_expect(ncid, "time", "standard_name", "time", 0);
    nc_expect(ncid, "T", "units", "K", 0);
    nc_expect(ncid, "T", "standard_name", "air_temperature", 0);
    nc_expect(ncid, "q", "long_name", "tracer", 0);
    /* dimension order: time first (unlimited), x last (fastest) */
    assert_int_equal(nc_inq_varid(ncid, "T", &v), NC_NOERR);
    assert_int_equal(nc_inq_var(ncid, v, NULL, NULL, &nd, dimids, NULL), NC_NOERR);
    assert_int_equal(nd, ndim + 1);
    assert_int_equal(nc_inq_unlimdim(ncid, &unlim), NC_NOERR);
    assert_int_equal(dimids[0], unlim);
    assert_int_equal(nc_inq_dimname(ncid, dimids[nd - 1], name), NC_NOERR);
    assert_string_equal(name, "x");
    double answer;
    assert_int_equal(nc_get_att_double(ncid, NC_GLOBAL, "answer", &answer), NC_NOERR);
    assert_true(answer == 42.0);
    int fmt;
    assert_int_equal(nc_inq_format(ncid, &fmt), NC_NOERR);
    assert_int_equal(fmt, NC_FORMAT_NETCDF4);
    nc_close(ncid);
}

/* CF cell bounds: x:bounds = "x_bnds", x_bnds(x, bnds) holding the cell edges. */
static void nc_check_bounds(const char *path, const grid_t *g)
{
    static const char *bn[3] = {"x_bnds", "y_bnds", "z_bnds"};
    int ncid, v, nd, dimids[4];
    char name[NC_MAX_NAME + 1];
    assert_int_equal(nc_open(path, NC_NOWRITE, &ncid), NC_NOERR);
    for (int d = 0; d < g->ndim; d++) {
        nc_expect(ncid, g->desc.dim_names[d], "bounds", bn[d], 0);
        assert_int_equal(nc_inq_varid(ncid, bn[d], &v), NC_NOERR);
        assert_int_equal(nc_inq_var(ncid, v, NULL, NULL, &nd, dimids, NULL), NC_NOERR);
        assert_int_equal(nd, 2);
        assert_int_equal(nc_inq_dimname(ncid, dimids[0], name), NC_NOERR);
        assert_string_equal(name, g->desc.dim_names[d]);
        assert_int_equal(nc_inq_dimname(ncid, dimids[1], name), NC_NOERR);
        assert_string_equal(name, "bnds");
        size_t n = (size_t)g->n[d] * 2;
        double *got = malloc(n * sizeof *got), *want = malloc(n * sizeof *want);
        assert_int_equal(nc_get_var_double(ncid, v, got), NC_NOERR);
        expected_bounds(g, d, want);
        assert_memory_equal(got, want, n * sizeof *got);
        free(got);
        free(want);
    }
    nc_close(ncid);
}

static void test_netcdf_3d(void **state)
{
    grid_t g;
    const char *p = test_tmp_path("n3.nc");
    grid_init(&g, HS_FORMAT_NETCDF, p, 3, 7, 5, 3);
    g.desc.deflate_level = 4;
    write_file(&g, 4);
    check_plain(p, &g, 4);
    nc_check_attrs(p, 3);
    nc_check_bounds(p, &g);
    grid_free(&g);
}

static void test_netcdf_2d(void **state)
{
    grid_t g;
    const char *p = test_tmp_path("n2.nc");
    grid_init(&g, HS_FORMAT_NETCDF, p, 2, 31, 1, 1);
    write_file(&g, 3);
    check_plain(p, &g, 3);
    nc_check_attrs(p, 2);
    nc_check_bounds(p, &g);
    grid_free(&g);
}
#else
static void test_netcdf_missing(void **state)
{
    grid_t g;
    const char *p = test_tmp_path("missing.nc");
    hs_writer *w = NULL;
    grid_init(&g, HS_FORMAT_NETCDF, p, 2, 4, 3, 1);
    hs_error_clear();
    assert_int_equal(hs_writer_open(test_ctx(), &g.desc, &w), HS_ERR_INPUT);
    assert_non_null(strstr(hs_error_message(), "NetCDF output requested but this build has no NetCDF (format = hdf5 works)"));
    hs_error_clear();
    assert_null(w);
    assert_false(test_file_exists(p));
    assert_false(test_file_exists(with_suffix(p, ".partial")));
    grid_free(&g);
}
#endif

#if HS_HAVE_HDF5
static void h5_expect(hid_t f, const char *obj, const char *att, const char *want, int prefix)
{
    hid_t a = H5Aopen_by_name(f, obj, att, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(a >= 0);
    hid_t ft = H5Aget_type(a);
    size_t sz = H5Tget_size(ft);
    char *buf = calloc(sz + 1, 1);
    assert_true(H5Aread(a, ft, buf) >= 0);
    if (prefix)
        assert_true(strncmp(buf, want, strlen(want)) == 0);
    else
        assert_string_equal(buf, want);
    free(buf);
    H5Tclose(ft);
    H5Aclose(a);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = calloc((size_t)n + 1, 1);
    assert_int_equal(fread(s, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    return s;
}

static int count_of(const char *s, const char *needle)
{
    int k = 0;
    for (const char *p = strstr(s, needle); p; p = strstr(p + 1, needle)) k++;
    return k;
}

/* A whole dataset of the HDF5 file as doubles (n values). */
static void h5_read(hid_t f, const char *name, double *out, size_t n)
{
    hid_t ds = H5Dopen2(f, name, H5P_DEFAULT);
    assert_true(ds >= 0);
    hid_t sp = H5Dget_space(ds);
    assert_int_equal((size_t)H5Sget_simple_extent_npoints(sp), n);
    assert_true(H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, out) >= 0);
    H5Sclose(sp);
    H5Dclose(ds);
}

/* /xdmf: the cell edges of every dimension and, per record, a view equal to that record. */
static void h5_check_xdmf_group(hid_t f, const grid_t *g, int nrec)
{
    size_t n = plane(g), cap = n;
    /* got also holds a dimension's edges (n + 1) and bounds (2 n), more than a plane of one cell */
    for (int d = 0; d < g->ndim; d++)
        if (2 * (size_t)g->n[d] + 2 > cap) cap = 2 * (size_t)g->n[d] + 2;
    double *got = malloc(cap * sizeof *got), *want = malloc(n * sizeof *want);
    for (int d = 0; d < g->ndim; d++) {
        char name[64], bname[64];
        double e[64], b[128];
        snprintf(name, sizeof name, "xdmf/%s", g->desc.dim_names[d]);
        h5_read(f, name, got, (size_t)g->n[d] + 1);
        expected_edges(g, d, e);
        assert_memory_equal(got, e, ((size_t)g->n[d] + 1) * sizeof *got);
        snprintf(bname, sizeof bname, "%s_bnds", g->desc.dim_names[d]);
        h5_read(f, bname, got, 2 * (size_t)g->n[d]);
        expected_bounds(g, d, b);
        assert_memory_equal(got, b, 2 * (size_t)g->n[d] * sizeof *got);
        char bref[64];
        snprintf(bref, sizeof bref, "%s", bname);
        h5_expect(f, g->desc.dim_names[d], "bounds", bref, 0);
    }
    for (int r = 0; r < nrec; r++) {
        char name[64];
        snprintf(name, sizeof name, "xdmf/T/%d", r);
        h5_read(f, name, got, n);
        field_T(g, r, want);
        assert_memory_equal(got, want, n * sizeof *got);
    }
    char name[64];
    snprintf(name, sizeof name, "xdmf/T/%d", nrec); /* no stale view past the last record */
    H5E_BEGIN_TRY { assert_true(H5Lexists(f, name, H5P_DEFAULT) <= 0); } H5E_END_TRY;
    free(got);
    free(want);
}

/* The .xmf: one 3DRectMesh per record with nodes = cells + 1 in every direction (a missing
 * dimension is one cell), cell-centred attributes, references FILE:/path without a directory. */
static void xmf_check(const char *xmf, const char *base, const grid_t *g, int nrec)
{
    char *s = slurp(xmf);
    char ref[256], dims[160];
    long long n[3];
    for (int d = 0; d < 3; d++) n[d] = d < g->ndim ? (long long)g->n[d] : 1;
    assert_non_null(strstr(s, "<Xdmf Version=\"3.0\">"));
    assert_non_null(strstr(s, "CollectionType=\"Temporal\""));
    snprintf(dims, sizeof dims, "TopologyType=\"3DRectMesh\" Dimensions=\"%lld %lld %lld\"", n[2] + 1, n[1] + 1, n[0] + 1);
    assert_int_equal(count_of(s, dims), nrec);
    assert_int_equal(count_of(s, "GeometryType=\"VXVYVZ\""), nrec);
    assert_int_equal(count_of(s, "Center=\"Cell\""), 3 * nrec);
    assert_int_equal(count_of(s, "Center=\"Node\""), 0);
    snprintf(dims, sizeof dims, "<DataItem Dimensions=\"%lld %lld %lld\"", n[2], n[1], n[0]);
    assert_int_equal(count_of(s, dims), 3 * nrec); /* T, q, mask as cells */
    for (int d = 0; d < g->ndim; d++) {
        snprintf(ref, sizeof ref, "Dimensions=\"%lld\" NumberType=\"Float\" Precision=\"8\" Format=\"HDF\">%s:/xdmf/%s</DataItem>",
                 n[d] + 1, base, g->desc.dim_names[d]);
        assert_int_equal(count_of(s, ref), nrec);
    }
    for (int r = 0; r < nrec; r++) {
        snprintf(ref, sizeof ref, "Precision=\"8\" Format=\"HDF\">%s:/xdmf/T/%d</DataItem>", base, r);
        assert_int_equal(count_of(s, ref), 1);
        snprintf(ref, sizeof ref, "Precision=\"4\" Format=\"HDF\">%s:/xdmf/q/%d</DataItem>", base, r);
        assert_int_equal(count_of(s, ref), 1);
    }
    snprintf(ref, sizeof ref, "%s:/mask</DataItem>", base);
    assert_int_equal(count_of(s, ref), nrec);
    assert_int_equal(count_of(s, "<Time Value="), nrec);
    assert_int_equal(count_of(s, "HyperSlab"), 0); /* ParaView's XDMF 3 reader cannot show them */
    snprintf(ref, sizeof ref, ">%s:/", base);
    assert_int_equal(count_of(s, "Format=\"HDF\">"), count_of(s, ref));
    free(s);
}

static void h5_check(const char *path, const char *xmf, const char *base, const grid_t *g, int nrec)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    assert_true(f >= 0);
    h5_expect(f, "/", "Conventions", HS_CF_CONVENTIONS, 0);
    h5_expect(f, "/", "source", "hpcsim " HS_VERSION " (git ", 1);
    h5_expect(f, "/", "institution", "hpcsim tests", 0);
    h5_expect(f, "x", "units", "m", 0);
    h5_expect(f, "x", "axis", "X", 0);
    if (g->ndim > 1) h5_expect(f, "y", "axis", "Y", 0);
    h5_expect(f, "time", "calendar", "standard", 0);
    h5_expect(f, "T", "units", "K", 0);
    h5_expect(f, "T", "dimensions", g->ndim == 3 ? "time z y x" : g->ndim == 2 ? "time y x" : "time x", 0);
    h5_check_xdmf_group(f, g, nrec);
    H5Fclose(f);
    xmf_check(xmf, base, g, nrec);
}

/* After a resume: /xdmf/T/k views the k-th kept record, and no view is left past the last. */
static void h5_check_views(const char *path, const grid_t *g, const int *recs, int nrec)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    assert_true(f >= 0);
    size_t n = plane(g);
    double *got = malloc(n * sizeof *got), *want = malloc(n * sizeof *want);
    char name[64];
    for (int k = 0; k < nrec; k++) {
        snprintf(name, sizeof name, "xdmf/T/%d", k);
        h5_read(f, name, got, n);
        field_T(g, recs[k], want);
        assert_memory_equal(got, want, n * sizeof *got);
    }
    snprintf(name, sizeof name, "xdmf/T/%d", nrec);
    H5E_BEGIN_TRY { assert_true(H5Lexists(f, name, H5P_DEFAULT) <= 0); } H5E_END_TRY;
    H5Fclose(f);
    free(got);
    free(want);
    char *xmf = malloc(strlen(path) + 2); /* ".h5" becomes ".xmf": one character longer */
    strcpy(xmf, path);
    strcpy(strrchr(xmf, '.'), ".xmf");
    char *s = slurp(xmf);
    assert_int_equal(count_of(s, "<Time Value="), nrec);
    free(s);
    free(xmf);
}

static void test_hdf5_3d(void **state)
{
    grid_t g;
    const char *p = test_tmp_path("h3.h5");
    grid_init(&g, HS_FORMAT_HDF5, p, 3, 6, 4, 5);
    g.desc.deflate_level = 1;
    write_file(&g, 4);
    check_plain(p, &g, 4);
    h5_check(p, test_tmp_path("h3.xmf"), "h3.h5", &g, 4);
    assert_false(test_file_exists(test_tmp_path("h3.xmf.partial")));
    grid_free(&g);
}

static void test_hdf5_2d(void **state)
{
    grid_t g;
    const char *p = test_tmp_path("h2.h5");
    grid_init(&g, HS_FORMAT_HDF5, p, 2, 9, 2, 1);
    write_file(&g, 3);
    check_plain(p, &g, 3);
    h5_check(p, test_tmp_path("h2.xmf"), "h2.h5", &g, 3);
    grid_free(&g);
}

static void test_hdf5_1d(void **state)
{
    grid_t g;
    const char *p = test_tmp_path("h1.h5");
    grid_init(&g, HS_FORMAT_HDF5, p, 1, 1, 1, 1);
    write_file(&g, 2);
    check_plain(p, &g, 2);
    h5_check(p, test_tmp_path("h1.xmf"), "h1.h5", &g, 2);
    grid_free(&g);
}
#endif

/* ------------------------------------------------------------------ record axes and bounds, per format */

static int formats(hs_output_format *f, const char **ext);

/* A record axis that counts iterations: named `iteration`, units "1", no calendar, axis or
 * standard_name (CF reserves those for time), and the variables' first dimension. */
static void test_iteration_axis(void **state)
{
    hs_output_format f[2];
    const char *ext[2];
    for (int i = 0, nf = formats(f, ext); i < nf; i++) {
        char name[64];
        snprintf(name, sizeof name, "iter.%s", ext[i]);
        const char *p = test_tmp_path(name);
        grid_t g;
        grid_init(&g, f[i], p, 2, 5, 4, 1);
        g.desc.record_name = "iteration";
        g.desc.record_long_name = "training iteration";
        g.desc.time_units = "1";
        write_file(&g, 3);
        hs_reader *r;
        double it[3];
        TEST_OK(hs_reader_open(p, &r));
        TEST_OK(hs_reader_read(r, "iteration", it));
        for (int k = 0; k < 3; k++) assert_true(it[k] == rec_time(k));
        int64_t shape[8];
        int rank;
        TEST_OK(hs_reader_var_shape(r, "T", shape, &rank));
        assert_int_equal(rank, 3);
        assert_int_equal(shape[0], 3);
        assert_int_equal(hs_reader_read(r, "time", it), HS_ERR_INPUT);
        hs_error_clear();
        hs_reader_close(r);
#if HS_HAVE_NETCDF
        if (f[i] == HS_FORMAT_NETCDF) {
            int ncid, v, dimid;
            char dn[NC_MAX_NAME + 1];
            assert_int_equal(nc_open(p, NC_NOWRITE, &ncid), NC_NOERR);
            nc_expect(ncid, "iteration", "units", "1", 0);
            nc_expect(ncid, "iteration", "long_name", "training iteration", 0);
            assert_int_equal(nc_inq_varid(ncid, "iteration", &v), NC_NOERR);
            assert_int_equal(nc_inq_attid(ncid, v, "calendar", &dimid), NC_ENOTATT);
            assert_int_equal(nc_inq_attid(ncid, v, "axis", &dimid), NC_ENOTATT);
            assert_int_equal(nc_inq_attid(ncid, v, "standard_name", &dimid), NC_ENOTATT);
            assert_int_equal(nc_inq_unlimdim(ncid, &dimid), NC_NOERR);
            assert_int_equal(nc_inq_dimname(ncid, dimid, dn), NC_NOERR);
            assert_string_equal(dn, "iteration");
            nc_close(ncid);
        }
#endif
#if HS_HAVE_HDF5
        if (f[i] == HS_FORMAT_HDF5) {
            hid_t h = H5Fopen(p, H5F_ACC_RDONLY, H5P_DEFAULT);
            assert_true(h >= 0);
            h5_expect(h, "iteration", "units", "1", 0);
            h5_expect(h, "T", "dimensions", "iteration y x", 0);
            assert_true(H5Aexists_by_name(h, "iteration", "calendar", H5P_DEFAULT) == 0);
            assert_true(H5Aexists_by_name(h, "iteration", "axis", H5P_DEFAULT) == 0);
            H5Fclose(h);
        }
#endif
        /* the suspended file resumes on the same axis */
        hs_writer *w;
        vars_t v;
        TEST_OK(hs_writer_resume(test_ctx(), &g.desc, rec_time(1), &w));
        define(w, &v);
        write_record(w, &g, &v, 5);
        TEST_OK(hs_writer_close(w));
        double want[3] = {rec_time(0), rec_time(1), rec_time(5)};
        TEST_OK(hs_reader_open(p, &r));
        TEST_OK(hs_reader_read(r, "iteration", it));
        assert_memory_equal(it, want, sizeof it);
        hs_reader_close(r);
        grid_free(&g);
    }
}

/* Cell edges given by the solver are the bounds, exactly (not midpoints of the coordinates). */
static void test_given_edges(void **state)
{
    hs_output_format f[2];
    const char *ext[2];
    for (int i = 0, nf = formats(f, ext); i < nf; i++) {
        char name[64];
        snprintf(name, sizeof name, "edges.%s", ext[i]);
        const char *p = test_tmp_path(name);
        grid_t g;
        grid_init(&g, f[i], p, 2, 6, 3, 1);
        double ex[7], ey[4];
        for (int k = 0; k < 7; k++) ex[k] = 0.1 * k * k; /* not uniform */
        for (int k = 0; k < 4; k++) ey[k] = -1.0 + k / 3.0;
        for (int k = 0; k < 6; k++) g.coords[0][k] = 0.5 * (ex[k] + ex[k + 1]) + 1e-3; /* not the midpoints */
        g.desc.edges[0] = ex, g.desc.edges[1] = ey;
        write_file(&g, 1);
        hs_reader *r;
        double got[14];
        TEST_OK(hs_reader_open(p, &r));
        TEST_OK(hs_reader_read(r, "x_bnds", got));
        for (int k = 0; k < 6; k++) {
            assert_true(got[2 * k] == ex[k]);
            assert_true(got[2 * k + 1] == ex[k + 1]);
        }
        TEST_OK(hs_reader_read(r, "y_bnds", got));
        for (int k = 0; k < 3; k++) assert_true(got[2 * k] == ey[k] && got[2 * k + 1] == ey[k + 1]);
        hs_reader_close(r);
        grid_free(&g);
    }
}

/* ------------------------------------------------------------------ life cycle, per format */

static int formats(hs_output_format *f, const char **ext)
{
    int k = 0;
#if HS_HAVE_NETCDF
    f[k] = HS_FORMAT_NETCDF;
    ext[k++] = "nc";
#endif
#if HS_HAVE_HDF5
    f[k] = HS_FORMAT_HDF5;
    ext[k++] = "h5";
#endif
    return k;
}

static void test_partial_then_rename(void **state)
{
    hs_output_format f[2];
    const char *ext[2];
    for (int i = 0, nf = formats(f, ext); i < nf; i++) {
        char name[64];
        snprintf(name, sizeof name, "life.%s", ext[i]);
        const char *p = test_tmp_path(name);
        grid_t g;
        hs_writer *w;
        vars_t v;
        grid_init(&g, f[i], p, 2, 5, 4, 1);
        FILE *old = fopen(p, "w"); /* an old file survives until the new one is complete */
        fputs("old", old);
        fclose(old);
        TEST_OK(hs_writer_open(test_ctx(), &g.desc, &w));
        define(w, &v);
        write_record(w, &g, &v, 0);
        assert_true(test_file_exists(with_suffix(p, ".partial")));
        struct stat st;
        assert_int_equal(stat(p, &st), 0);
        assert_int_equal(st.st_size, 3);
        TEST_OK(hs_writer_close(w));
        assert_false(test_file_exists(with_suffix(p, ".partial")));
        assert_true(test_file_exists(p));
        hs_reader *r;
        TEST_OK(hs_reader_open(p, &r));
        hs_reader_close(r);
        grid_free(&g);
    }
}

static void test_discard_and_suspend(void **state)
{
    hs_output_format f[2];
    const char *ext[2];
    for (int i = 0, nf = formats(f, ext); i < nf; i++) {
        char name[64];
        snprintf(name, sizeof name, "gone.%s", ext[i]);
        const char *p = test_tmp_path(name);
        grid_t g;
        hs_writer *w;
        vars_t v;
        grid_init(&g, f[i], p, 3, 3, 3, 3);
        TEST_OK(hs_writer_open(test_ctx(), &g.desc, &w));
        define(w, &v);
        write_record(w, &g, &v, 0);
        hs_writer_discard(w);
        assert_false(test_file_exists(p));
        assert_false(test_file_exists(with_suffix(p, ".partial")));
        TEST_OK(hs_writer_open(test_ctx(), &g.desc, &w));
        define(w, &v);
        write_record(w, &g, &v, 0);
        TEST_OK(hs_writer_suspend(w));
        assert_false(test_file_exists(p));
        assert_true(test_file_exists(with_suffix(p, ".partial")));
        grid_free(&g);
    }
}

static void test_resume_drops_later_records(void **state)
{
    hs_output_format f[2];
    const char *ext[2];
    for (int i = 0, nf = formats(f, ext); i < nf; i++) {
        char name[64];
        snprintf(name, sizeof name, "resume.%s", ext[i]);
        const char *p = test_tmp_path(name);
        grid_t g;
        hs_writer *w;
        vars_t v, v2;
        grid_init(&g, f[i], p, 3, 4, 3, 2);
        TEST_OK(hs_writer_open(test_ctx(), &g.desc, &w));
        define(w, &v);
        double *mask = malloc(plane(&g) * sizeof *mask);
        field_mask(&g, mask);
        TEST_OK(hs_writer_put(w, v.mask, mask));
        free(mask);
        for (int r = 0; r < 4; r++) write_record(w, &g, &v, r); /* times 0, 1.25, 3, 5.25 */
        TEST_OK(hs_writer_suspend(w));

        TEST_OK(hs_writer_resume(test_ctx(), &g.desc, 2.0, &w));
        assert_int_equal(hs_writer_var_id(w, "T"), v.T);
        assert_int_equal(hs_writer_var_id(w, "nope"), -1);
        define(w, &v2);
        assert_memory_equal(&v2, &v, sizeof v);
        assert_int_equal(v2.T, hs_writer_var_id(w, "T"));
        assert_int_equal(v2.q, hs_writer_var_id(w, "q"));
        assert_int_equal(v2.mask, hs_writer_var_id(w, "mask"));
        int bad;
        assert_int_equal(hs_writer_def_var(w, "T", "K", "t", NULL, HS_F32, 1, &bad), HS_ERR_INPUT);
        hs_error_clear();
        write_record(w, &g, &v2, 7);
        TEST_OK(hs_writer_close(w));
        assert_false(test_file_exists(with_suffix(p, ".partial")));
        int recs[3] = {0, 1, 7};
        double times[3] = {rec_time(0), rec_time(1), rec_time(7)};
        check_data(p, &g, recs, 3, times);
#if HS_HAVE_NETCDF
        if (f[i] == HS_FORMAT_NETCDF) nc_check_bounds(p, &g);
#endif
#if HS_HAVE_HDF5
        if (f[i] == HS_FORMAT_HDF5) h5_check_views(p, &g, recs, 3);
#endif
        grid_free(&g);
    }
}

/* A restart with another grid is refused, and the suspended file survives for a corrected one. */
static void test_resume_other_grid(void **state)
{
    hs_output_format f[2];
    const char *ext[2];
    for (int i = 0, nf = formats(f, ext); i < nf; i++) {
        char name[64];
        snprintf(name, sizeof name, "regrid.%s", ext[i]);
        const char *p = test_tmp_path(name);
        grid_t g, g2;
        hs_writer *w;
        vars_t v;
        grid_init(&g, f[i], p, 2, 4, 3, 1);
        grid_init(&g2, f[i], p, 2, 4, 5, 1);
        TEST_OK(hs_writer_open(test_ctx(), &g.desc, &w));
        define(w, &v);
        double mask[12];
        field_mask(&g, mask);
        TEST_OK(hs_writer_put(w, v.mask, mask));
        for (int r = 0; r < 2; r++) write_record(w, &g, &v, r);
        TEST_OK(hs_writer_suspend(w));
        hs_error_clear();
        assert_int_equal(hs_writer_resume(test_ctx(), &g2.desc, 10.0, &w), HS_ERR_INPUT);
        assert_non_null(strstr(hs_error_message(), "3 points along y, the run's 5"));
        hs_error_clear();
        assert_true(test_file_exists(with_suffix(p, ".partial")));
        TEST_OK(hs_writer_resume(test_ctx(), &g.desc, 10.0, &w));
        vars_t v2;
        define(w, &v2); /* a restarted solver defines its variables again; the ids are the first run's */
        assert_memory_equal(&v2, &v, sizeof v);
        write_record(w, &g, &v2, 2);
        TEST_OK(hs_writer_close(w));
        check_plain(p, &g, 3);
        grid_free(&g);
        grid_free(&g2);
    }
}

static void test_errors(void **state)
{
    hs_output_format f[2];
    const char *ext[2];
    for (int i = 0, nf = formats(f, ext); i < nf; i++) {
        char name[64];
        snprintf(name, sizeof name, "err.%s", ext[i]);
        grid_t g;
        hs_writer *w;
        vars_t v;
        int id;
        grid_init(&g, f[i], "/nonexistent-dir/out/x.file", 2, 3, 2, 1);
        hs_error_clear();
        assert_int_equal(hs_writer_open(test_ctx(), &g.desc, &w), HS_ERR_RUNTIME);
        assert_non_null(strstr(hs_error_message(), f[i] == HS_FORMAT_NETCDF ? "NetCDF call nc_create" : "HDF5 call H5Fcreate"));
        assert_non_null(strstr(hs_error_message(), "/nonexistent-dir/out/x.file.partial"));
        hs_error_clear();
        grid_free(&g);

        grid_init(&g, f[i], test_tmp_path(name), 2, 3, 2, 1);
        TEST_OK(hs_writer_open(test_ctx(), &g.desc, &w));
        define(w, &v);
        double x[6] = {0};
        assert_int_equal(hs_writer_put(w, v.T, x), HS_ERR_RUNTIME); /* before any begin_step */
        hs_error_clear();
        assert_int_equal(hs_writer_def_var(w, "k", "1", "k", NULL, HS_I32, 1, &id), HS_ERR_INPUT);
        assert_int_equal(hs_writer_def_var(w, "x", "1", "clash", NULL, HS_F64, 1, &id), HS_ERR_INPUT);
        assert_int_equal(hs_writer_put(w, 99, x), HS_ERR_RUNTIME);
        hs_error_clear();
        TEST_OK(hs_writer_close(w));
        grid_free(&g);

        g.desc.ndim = 4;
        assert_int_equal(hs_writer_open(test_ctx(), &g.desc, &w), HS_ERR_INPUT);
        hs_error_clear();
    }
}

static void test_static_only(void **state)
{
    hs_output_format f[2];
    const char *ext[2];
    for (int i = 0, nf = formats(f, ext); i < nf; i++) {
        char name[64];
        snprintf(name, sizeof name, "static.%s", ext[i]);
        const char *p = test_tmp_path(name);
        grid_t g;
        hs_writer *w;
        int id;
        grid_init(&g, f[i], p, 3, 2, 3, 4);
        g.desc.time_units = NULL;
        TEST_OK(hs_writer_open(test_ctx(), &g.desc, &w));
        assert_int_equal(hs_writer_def_var(w, "T", "K", "t", NULL, HS_F64, 1, &id), HS_ERR_INPUT);
        assert_int_equal(hs_writer_begin_step(w, 0.0), HS_ERR_INPUT);
        hs_error_clear();
        TEST_OK(hs_writer_def_var(w, "mask", "1", "land mask", NULL, HS_F64, 0, &id));
        double m[24], got[24];
        field_mask(&g, m);
        TEST_OK(hs_writer_put(w, id, m));
        TEST_OK(hs_writer_close(w));
        hs_reader *r;
        TEST_OK(hs_reader_open(p, &r));
        check_shape(r, "mask", &g, -1);
        TEST_OK(hs_reader_read(r, "mask", got));
        assert_memory_equal(got, m, sizeof m);
        hs_reader_close(r);
        grid_free(&g);
    }
}

static void test_reader_bad_files(void **state)
{
    hs_reader *r = NULL;
    assert_int_equal(hs_reader_open(test_tmp_path("does-not-exist.nc"), &r), HS_ERR_INPUT);
    const char *p = test_tmp_path("garbage.nc");
    FILE *f = fopen(p, "w");
    fputs("this is not a NetCDF file\n", f);
    fclose(f);
    assert_int_equal(hs_reader_open(p, &r), HS_ERR_INPUT);
    assert_non_null(strstr(hs_error_message(), "garbage.nc"));
    hs_error_clear();
    assert_null(r);
}

/* An HDF5 failure names the call that failed and its object, in the macro's one format: a status
 * kept in a variable named the variable ("HDF5 call e failed on x.h5").  An invalid object id
 * makes the first call, H5Aexists, fail. */
static void test_h5_fail_names_call(void **state)
{
    (void)state;
#if HS_HAVE_HDF5
    hs_h5_quiet();
    char *text = NULL;
    hs_error_clear();
    assert_int_equal(hs_h5_read_text((hid_t)-1, "units", &text, "some.h5"), HS_ERR_RUNTIME);
    if (!strstr(hs_error_message(), "HDF5 call H5Aexists (attribute units) failed on some.h5"))
        fail_msg("reading an attribute: '%s'", hs_error_message());
    assert_null(text);
    hs_error_clear();
    assert_int_equal(hs_h5_attr_text((hid_t)-1, "long_name", "x", "other.h5"), HS_ERR_RUNTIME);
    if (!strstr(hs_error_message(), "HDF5 call H5Aexists (attribute long_name) failed on other.h5"))
        fail_msg("writing an attribute: '%s'", hs_error_message());
    hs_error_clear();
#else
    skip();
#endif
}

/* HS_TEST_KEEP_OUTPUT=DIR leaves sample files for the command-line checks (tests/cli/test_output_tools.sh). */
/* The time units a run may write: dates CF readers decode, in the spellings they accept.  Each
 * refusal of a date or time out of range carries a reason; a malformed form carries none. */
static void test_time_units_writable(void **state)
{
    (void)state;
    static const char *good[] = {"seconds since 2000-01-01 00:00:00", "seconds since 1970-01-01T00:00:00Z",
                                 "hours since 1800-1-1 00:00:0.0", "days since 2000-01-01 00:00:00 UTC",
                                 "minutes since 2000-02-29", "days since 0001-01-01 12:30", "s since 2000-12-31 23:59:59",
                                 "days since 2000-01-01 00:00:00 +05:30", "days since 2000-01-01 00:00 -0800 ",
                                 "days since 2004-02-29", "days since 1600-02-29", "days since 1500-02-29" /* Julian */,
                                 "days since 1582-10-04 23:59:59", "days since 1582-10-15", "days since 2000-04-30",
                                 "days since 2000-01-01 00:00 +23:59"};
    static const char *malformed[] = {"banana", "hours since 1e300", "hours since 2000", "hours since 2000-01-01 tomorrow",
                                      "hours since 2000-01-01 00:00:00.", "hours since 2000-01-001",
                                      "days since 2000-01-01 00:00 +05:", "days since 2000-01-01 00:00 +123",
                                      "days since 2000-01-01 00:00 +5"};
    /* out of range, with a word the reason must hold */
    static const struct {
        const char *units, *reason;
    } range[] = {{"seconds since 2000-13-01", "month 13 is not 1..12"},
                 {"seconds since 2000-00-10", "month 0 is not 1..12"},
                 {"seconds since 2000-01-32", "day 32 is not 1..31 in January 2000"},
                 {"seconds since 2000-01-00", "day 0 is not 1..31 in January 2000"},
                 {"minutes since 2000-02-30", "day 30 is not 1..29 in February 2000"},
                 {"days since 2001-02-29", "day 29 is not 1..28 in February 2001"},
                 {"days since 1900-02-29", "day 29 is not 1..28 in February 1900"},
                 {"days since 2000-04-31", "day 31 is not 1..30 in April 2000"},
                 {"days since 1582-10-10", "1582-10-10 is not in CF's standard calendar"},
                 {"days since 0000-01-01", "year 0 is not"},
                 {"days since 2000-01-01 24:00:00", "hour 24 is not 0..23"},
                 {"days since 2000-01-01 00:60", "minute 60 is not 0..59"},
                 {"days since 2000-01-01 00:00:61", "second 61 is not 0..59"},
                 {"s since 2000-12-31 23:59:60", "no leap seconds"},
                 {"days since 2000-01-01 00:00 +25", "offset of 25 hours"},
                 {"days since 2000-01-01 00:00 +0560", "minute 60"}};
    char why[256];
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        if (!hs_time_units_writable(good[i], why, sizeof why)) fail_msg("refused: '%s' (%s)", good[i], why);
    for (size_t i = 0; i < sizeof malformed / sizeof malformed[0]; i++) {
        strcpy(why, "unset");
        if (hs_time_units_writable(malformed[i], why, sizeof why)) fail_msg("accepted: '%s'", malformed[i]);
        if (*why) fail_msg("'%s' is malformed, but refused as out of range: %s", malformed[i], why);
    }
    for (size_t i = 0; i < sizeof range / sizeof range[0]; i++) {
        if (hs_time_units_writable(range[i].units, why, sizeof why)) fail_msg("accepted: '%s'", range[i].units);
        if (!strstr(why, range[i].reason)) fail_msg("'%s': reason '%s' lacks '%s'", range[i].units, why, range[i].reason);
    }
    assert_int_equal(hs_time_units_writable("days since 2001-02-29", NULL, 0), 0); /* no room for a reason: fine */
}

/* Days of year y that the check accepts (each day number 1..31 of each month tried). */
static int accepted_days(int y)
{
    int n = 0;
    char u[64];
    for (int m = 1; m <= 12; m++)
        for (int d = 1; d <= 31; d++) {
            snprintf(u, sizeof u, "days since %04d-%02d-%02d", y, m, d);
            n += hs_time_units_writable(u, NULL, 0);
        }
    return n;
}

/* The calendar against independent references: from 1583 on, the dates that glibc's proleptic
 * Gregorian timegm keeps as given (2001-02-29 it moves to March 1); and the published lengths of the
 * standard calendar: 1461 days in four Julian years, 355 in 1582 (ten days dropped in October),
 * 146097 in a Gregorian cycle of 400 years. */
static void test_time_units_calendar(void **state)
{
    (void)state;
    char u[64];
    int differ = 0;
    for (int y = 1583; y <= 2400 && differ < 5; y++)
        for (int m = 1; m <= 12; m++)
            for (int d = 1; d <= 31; d++) {
                struct tm t = {.tm_year = y - 1900, .tm_mon = m - 1, .tm_mday = d, .tm_hour = 12};
                (void)timegm(&t);
                const int exists = t.tm_year == y - 1900 && t.tm_mon == m - 1 && t.tm_mday == d;
                snprintf(u, sizeof u, "days since %04d-%02d-%02d 12:00", y, m, d);
                if (hs_time_units_writable(u, NULL, 0) != exists) {
                    print_error("'%s': accepted %d, timegm says the date exists %d\n", u, !exists, exists);
                    differ++;
                }
            }
    assert_int_equal(differ, 0);
    for (int y = 1; y <= 1577; y += 4) assert_int_equal(accepted_days(y) + accepted_days(y + 1) + accepted_days(y + 2) + accepted_days(y + 3), 1461);
    assert_int_equal(accepted_days(1582), 355);
    int cycle = 0;
    for (int y = 1600; y < 2000; y++) cycle += accepted_days(y);
    assert_int_equal(cycle, 146097);
}

static void test_keep_output(void **state)
{
    const char *dir = getenv("HS_TEST_KEEP_OUTPUT");
    if (!dir || !*dir) skip();
    hs_output_format f[2];
    const char *ext[2];
    for (int i = 0, nf = formats(f, ext); i < nf; i++) {
        char p[512];
        snprintf(p, sizeof p, "%s/sample.%s", dir, ext[i]);
        grid_t g;
        grid_init(&g, f[i], p, 3, 8, 6, 4);
        g.desc.coord_long_names[0] = "x distance";
        g.desc.deflate_level = 2;
        write_file(&g, 3);
        grid_free(&g);
    }
}

static const struct CMUnitTest tests[] = {
#if HS_HAVE_NETCDF
    cmocka_unit_test(test_netcdf_3d),
    cmocka_unit_test(test_netcdf_2d),
#else
    cmocka_unit_test(test_netcdf_missing),
#endif
#if HS_HAVE_HDF5
    cmocka_unit_test(test_hdf5_3d),
    cmocka_unit_test(test_hdf5_2d),
    cmocka_unit_test(test_hdf5_1d),
#endif
    cmocka_unit_test(test_iteration_axis),
    cmocka_unit_test(test_given_edges),
    cmocka_unit_test(test_partial_then_rename),
    cmocka_unit_test(test_discard_and_suspend),
    cmocka_unit_test(test_resume_drops_later_records),
    cmocka_unit_test(test_resume_other_grid),
    cmocka_unit_test(test_errors),
    cmocka_unit_test(test_static_only),
    cmocka_unit_test(test_reader_bad_files),
    cmocka_unit_test(test_time_units_writable),
    cmocka_unit_test(test_time_units_calendar),
    cmocka_unit_test(test_h5_fail_names_call),
    cmocka_unit_test_teardown(test_keep_output, test_tmp_cleanup),
};

TEST_MAIN("output", tests)
