/* Extra grids (MAC faces, a coarser grid) and unstructured meshes in output files: read back bitwise, SGRID/UGRID attributes, XDMF and VTU companions, resume, bad input, compare --all. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/compare.h"
#include "io/output.h"
#include "kernels/config.h"
#include "test_util.h"
#if HS_HAVE_NETCDF
#include <netcdf.h>
#endif
#if HS_HAVE_HDF5
#include <hdf5.h>

/* A dataset of an HDF5 file read with the HDF5 library itself (a path inside a group). */
static void h5_eq(const char *path, const char *name, const double *want, size_t n)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    assert_true(f >= 0);
    hid_t ds = H5Dopen2(f, name, H5P_DEFAULT);
    if (ds < 0) fail_msg("%s: no dataset %s", path, name);
    hid_t sp = H5Dget_space(ds);
    assert_int_equal(H5Sget_simple_extent_npoints(sp), (hssize_t)n);
    double *got = malloc(n * sizeof *got);
    assert_true(H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, got) >= 0);
    for (size_t i = 0; i < n; i++)
        if (got[i] != want[i]) fail_msg("%s[%zu] = %.17g, expected %.17g", name, i, got[i], want[i]);
    free(got);
    H5Sclose(sp);
    H5Dclose(ds);
    H5Fclose(f);
}
#endif

/* ------------------------------------------------------------------ the staggered 2-D grid
 * 5 x 4 cells: x cells 0.5 wide on [0, 2.5] (from their centres), y cells with given edges
 * {0, 0.1, 0.3, 0.6, 1}, y periodic for the faces.  Grids: u_faces (x faces: 6 x 4), v_faces
 * (y faces, periodic: 5 x 4), coarse (own 2 x 2 dimensions xc, yc). */
#define NX 5
#define NY 4
static const double XC[NX] = {0.25, 0.75, 1.25, 1.75, 2.25};
static const double YE[NY + 1] = {0, 0.1, 0.3, 0.6, 1.0};
static double YC[NY];
/* what the writer must derive, worked out by hand: */
static const double XF[NX + 1] = {0, 0.5, 1, 1.5, 2, 2.5};                    /* x faces: the cell edges */
static const double XF_BNDS[2 * (NX + 1)] = {0, 0.25, 0.25, 0.75, 0.75, 1.25, 1.25, 1.75, 1.75, 2.25, 2.25, 2.5};
static const double YF[NY] = {0, 0.1, 0.3, 0.6};                              /* periodic: the last face left out */
static const double YF_BNDS[2 * NY] = {/* half cells on either side; face 0's reaches across the periodic boundary */
                                       0 - 0.5 * (1.0 - 0.6), 0.5 * (0 + 0.1), 0.5 * (0 + 0.1), 0.5 * (0.1 + 0.3),
                                       0.5 * (0.1 + 0.3), 0.5 * (0.3 + 0.6), 0.5 * (0.3 + 0.6), 0.5 * (0.6 + 1.0)};
static const double XCO[2] = {0.625, 1.875}, YCO[2] = {0.25, 0.75};
static const double XCO_BNDS[4] = {0, 1.25, 1.25, 2.5};

#define NU ((NX + 1) * NY)
#define NV (NX * NY)
#define NP (NX * NY)
#define NC 4

static hs_grid_desc grids[3];

static void stag_desc(hs_output_desc *d, hs_output_format fmt, const char *path)
{
    static const char *names[2] = {"x", "y"};
    for (int j = 0; j < NY; j++) YC[j] = 0.5 * (YE[j] + YE[j + 1]);
    memset(d, 0, sizeof *d);
    memset(grids, 0, sizeof grids);
    d->path = path;
    d->format = fmt;
    d->title = "staggered grid test";
    d->history = "test_output_grids";
    d->ndim = 2;
    d->n[0] = NX, d->n[1] = NY;
    d->dim_names[0] = names[0], d->dim_names[1] = names[1];
    d->coords[0] = XC, d->coords[1] = YC;
    d->edges[1] = YE;
    d->coord_units[0] = d->coord_units[1] = "m";
    d->time_units = "seconds since 2000-01-01 00:00:00";
    grids[0] = (hs_grid_desc){.name = "u_faces", .stagger = {HS_STAGGER_FACE, HS_STAGGER_CELL}, .dim_names = {"x_face"}};
    grids[1] = (hs_grid_desc){.name = "v_faces", .stagger = {HS_STAGGER_CELL, HS_STAGGER_FACE}, .dim_names = {NULL, "y_face"},
                              .periodic = {0, 1}};
    grids[2] = (hs_grid_desc){.name = "coarse", .stagger = {HS_STAGGER_OWN, HS_STAGGER_OWN}, .dim_names = {"xc", "yc"},
                              .n = {2, 2}, .coords = {XCO, YCO}, .coord_long_names = {"coarse x", "coarse y"}};
    d->ngrids = 3;
    d->grids = grids;
}

static void field(uint64_t seed, double *f, size_t n) { test_fill_f64(f, n, 5000 + seed, -1, 1); }

typedef struct { int p, u, v, pc; } ids_t;

static void define(hs_writer *w, ids_t *id)
{
    TEST_OK(hs_writer_def_var(w, "p", "Pa", "pressure", NULL, HS_F64, 1, &id->p));
    TEST_OK(hs_writer_def_grid_var(w, "u_faces", "u", "m s-1", "x velocity on the x faces", NULL, HS_F64, 1, &id->u));
    TEST_OK(hs_writer_def_grid_var(w, "v_faces", "v", "m s-1", "y velocity on the y faces", NULL, HS_F32, 1, &id->v));
    TEST_OK(hs_writer_def_grid_var(w, "coarse", "pc", "Pa", "coarse pressure", NULL, HS_F64, 0, &id->pc));
}

static void record(hs_writer *w, const ids_t *id, int r)
{
    double f[NU];
    float g[NV];
    TEST_OK(hs_writer_begin_step(w, r));
    field(10 * r, f, NP);
    TEST_OK(hs_writer_put(w, id->p, f));
    field(10 * r + 1, f, NU);
    /* u as a block of the face grid's own shape */
    int64_t off[3] = {0, 0, 0}, cnt[3] = {NX + 1, NY, 1};
    TEST_OK(hs_writer_put_block(w, id->u, off, cnt, f));
    field(10 * r + 2, f, NV);
    for (int i = 0; i < NV; i++) g[i] = (float)f[i];
    TEST_OK(hs_writer_put(w, id->v, g));
}

/* Records at t = 0, 1, 2, then (resume) with t > 1 dropped, t = 5: the file holds 0, 1, 5. */
TEST_MAYBE_UNUSED static void write_stag(hs_output_format fmt, const char *path, int resume)
{
    hs_output_desc d;
    stag_desc(&d, fmt, path);
    hs_writer *w;
    ids_t id, id2;
    TEST_OK(hs_writer_open(test_ctx(), &d, &w));
    define(w, &id);
    double c[NC];
    field(99, c, NC);
    TEST_OK(hs_writer_put(w, id.pc, c));
    for (int r = 0; r < (resume ? 3 : 2); r++) record(w, &id, r);
    if (resume) {
        TEST_OK(hs_writer_suspend(w));
        TEST_OK(hs_writer_resume(test_ctx(), &d, 1.0, &w));
        assert_int_equal(hs_writer_records(w), 2);
        define(w, &id2);
        assert_memory_equal(&id, &id2, sizeof id);
    }
    record(w, &id, 5);
    TEST_OK(hs_writer_close(w));
}

static void read_eq(hs_reader *r, const char *name, int64_t rec, const double *want, size_t n)
{
    double *got = malloc(n * sizeof *got);
    int64_t shape[8];
    int rank;
    TEST_OK(hs_reader_var_shape(r, name, shape, &rank));
    int64_t total = 1;
    for (int i = rec >= 0 ? 1 : 0; i < rank; i++) total *= shape[i];
    if (total != (int64_t)n) fail_msg("%s holds %lld values per record, %zu expected", name, (long long)total, n);
    if (rec >= 0) TEST_OK(hs_reader_read_record(r, name, rec, got));
    else TEST_OK(hs_reader_read(r, name, got));
    for (size_t i = 0; i < n; i++)
        if (got[i] != want[i]) fail_msg("%s[%zu] = %.17g, expected %.17g", name, i, got[i], want[i]);
    free(got);
}

TEST_MAYBE_UNUSED static void check_stag(const char *path)
{
    hs_reader *r;
    TEST_OK(hs_reader_open(path, &r));
    int64_t shape[8];
    int rank;
    TEST_OK(hs_reader_var_shape(r, "u", shape, &rank));
    assert_int_equal(rank, 3);
    assert_true(shape[0] == 3 && shape[1] == NY && shape[2] == NX + 1);
    TEST_OK(hs_reader_var_shape(r, "v", shape, &rank));
    assert_true(rank == 3 && shape[1] == NY && shape[2] == NX);
    static const int recs[3] = {0, 1, 5};
    double f[NU];
    for (int k = 0; k < 3; k++) {
        field(10 * recs[k], f, NP);
        read_eq(r, "p", k, f, NP);
        field(10 * recs[k] + 1, f, NU);
        read_eq(r, "u", k, f, NU);
        field(10 * recs[k] + 2, f, NV);
        for (int i = 0; i < NV; i++) f[i] = (float)f[i];
        read_eq(r, "v", k, f, NV);
    }
    field(99, f, NC);
    read_eq(r, "pc", -1, f, NC);
    read_eq(r, "x_face", -1, XF, NX + 1);
    read_eq(r, "x_face_bnds", -1, XF_BNDS, 2 * (NX + 1));
    read_eq(r, "y_face", -1, YF, NY);
    read_eq(r, "y_face_bnds", -1, YF_BNDS, 2 * NY);
    read_eq(r, "xc", -1, XCO, 2);
    read_eq(r, "xc_bnds", -1, XCO_BNDS, 4);
    read_eq(r, "yc", -1, YCO, 2);
    hs_reader_close(r);
}

#if HS_HAVE_NETCDF
static void nc_text(int ncid, const char *var, const char *att, const char *want)
{
    int v = NC_GLOBAL;
    if (var) assert_int_equal(nc_inq_varid(ncid, var, &v), NC_NOERR);
    char buf[1024] = "";
    size_t len = 0;
    if (nc_inq_attlen(ncid, v, att, &len) != NC_NOERR || len >= sizeof buf) fail_msg("%s:%s missing", var ? var : "", att);
    assert_int_equal(nc_get_att_text(ncid, v, att, buf), NC_NOERR);
    buf[len] = 0;
    if (strcmp(buf, want)) fail_msg("%s:%s = \"%s\", expected \"%s\"", var ? var : "", att, buf, want);
}

static void nc_no_att(int ncid, const char *var, const char *att)
{
    int v;
    assert_int_equal(nc_inq_varid(ncid, var, &v), NC_NOERR);
    if (nc_inq_att(ncid, v, att, NULL, NULL) == NC_NOERR) fail_msg("%s:%s should not be there", var, att);
}
#endif

static void test_staggered_netcdf(void **state)
{
#if HS_HAVE_NETCDF
    char path[512];
    snprintf(path, sizeof path, "%s", test_tmp_path("stag.nc"));
    write_stag(HS_FORMAT_NETCDF, path, 1);
    check_stag(path);
    int ncid;
    assert_int_equal(nc_open(path, NC_NOWRITE, &ncid), NC_NOERR);
    nc_text(ncid, NULL, "Conventions", "CF-1.8 SGRID-0.3");
    nc_text(ncid, "x_face", "axis", "X");
    nc_text(ncid, "x_face", "bounds", "x_face_bnds");
    nc_text(ncid, "x_face", "units", "m");
    nc_text(ncid, "yc", "long_name", "coarse y");
    double shift = 0;
    int v;
    assert_int_equal(nc_inq_varid(ncid, "y_face", &v), NC_NOERR);
    assert_int_equal(nc_get_att_double(ncid, v, "c_grid_axis_shift", &shift), NC_NOERR);
    assert_true(shift == -0.5);
    nc_no_att(ncid, "xc", "c_grid_axis_shift");
    /* SGRID: u sits on the x faces (edge1: x at the nodes), v on the y faces, p in the cells */
    nc_text(ncid, "grid", "cf_role", "grid_topology");
    nc_text(ncid, "grid", "node_dimensions", "x_face y_face");
    nc_text(ncid, "grid", "face_dimensions", "x: x_face (padding: none) y: y_face (padding: high)");
    nc_text(ncid, "grid", "edge1_dimensions", "x_face y: y_face (padding: high)");
    nc_text(ncid, "grid", "edge2_dimensions", "x: x_face (padding: none) y_face");
    nc_text(ncid, "grid", "face_coordinates", "x y");
    nc_text(ncid, "u", "location", "edge1");
    nc_text(ncid, "v", "location", "edge2");
    nc_text(ncid, "p", "location", "face");
    nc_text(ncid, "u", "grid", "grid");
    nc_no_att(ncid, "pc", "location");
    int td;
    assert_int_equal(nc_inq_varid(ncid, "grid", &v), NC_NOERR);
    assert_int_equal(nc_get_att_int(ncid, v, "topology_dimension", &td), NC_NOERR);
    assert_int_equal(td, 2);
    /* u's dimensions */
    int dims[4];
    char dn[NC_MAX_NAME + 1];
    assert_int_equal(nc_inq_varid(ncid, "u", &v), NC_NOERR);
    assert_int_equal(nc_inq_vardimid(ncid, v, dims), NC_NOERR);
    nc_inq_dimname(ncid, dims[1], dn);
    assert_string_equal(dn, "y");
    nc_inq_dimname(ncid, dims[2], dn);
    assert_string_equal(dn, "x_face");
    nc_close(ncid);
    /* the resumed file equals one written straight through */
    char straight[512];
    snprintf(straight, sizeof straight, "%s", test_tmp_path("stag_straight.nc"));
    write_stag(HS_FORMAT_NETCDF, straight, 0);
    int ndiffer = -1;
    FILE *out = fopen("/dev/null", "w");
    TEST_OK(hs_compare_all(path, straight, 0, 0, out, &ndiffer));
    fclose(out);
    assert_int_equal(ndiffer, 0);
#else
    skip();
#endif
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) fail_msg("cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    size_t got = fread(s, 1, (size_t)n, f);
    s[got] = 0;
    fclose(f);
    return s;
}

static void has_text(const char *doc, const char *what, const char *where)
{
    if (!strstr(doc, what)) fail_msg("%s lacks: %s", where, what);
}

static void test_staggered_hdf5(void **state)
{
#if HS_HAVE_HDF5
    char path[512], xmf[512], straight[512];
    snprintf(path, sizeof path, "%s", test_tmp_path("stag.h5"));
    snprintf(xmf, sizeof xmf, "%s", test_tmp_path("stag.xmf"));
    write_stag(HS_FORMAT_HDF5, path, 1);
    check_stag(path);
    char *x = slurp(xmf);
    /* the main grid as before, then one temporal collection per extra grid with its node counts */
    has_text(x, "<Grid Name=\"TimeSeries\" GridType=\"Collection\" CollectionType=\"Temporal\">", xmf);
    has_text(x, "<Grid Name=\"u_faces\" GridType=\"Collection\" CollectionType=\"Temporal\">", xmf);
    has_text(x, "<Grid Name=\"u_faces_step_2\" GridType=\"Uniform\">", xmf);
    has_text(x, "<Topology TopologyType=\"3DRectMesh\" Dimensions=\"2 5 6\"/>", xmf); /* cells and v_faces */
    has_text(x, "<Topology TopologyType=\"3DRectMesh\" Dimensions=\"2 5 7\"/>", xmf); /* u_faces */
    has_text(x, "<Topology TopologyType=\"3DRectMesh\" Dimensions=\"2 3 3\"/>", xmf); /* coarse */
    has_text(x, "stag.h5:/xdmf/x_face</DataItem>", xmf);
    has_text(x, "stag.h5:/xdmf/u/2</DataItem>", xmf);
    has_text(x, "<Attribute Name=\"pc\" AttributeType=\"Scalar\" Center=\"Cell\">", xmf);
    free(x);
    /* the XDMF nodes of the x faces: the edges of their half cells */
    static const double nodes[NX + 2] = {0, 0.25, 0.75, 1.25, 1.75, 2.25, 2.5};
    h5_eq(path, "xdmf/x_face", nodes, NX + 2);
    snprintf(straight, sizeof straight, "%s", test_tmp_path("stag_straight.h5"));
    write_stag(HS_FORMAT_HDF5, straight, 0);
    int ndiffer = -1;
    FILE *out = fopen("/dev/null", "w");
    TEST_OK(hs_compare_all(path, straight, 0, 0, out, &ndiffer));
    fclose(out);
    assert_int_equal(ndiffer, 0);
#else
    skip();
#endif
}

/* 3-D: the SGRID locations of the face grids and an edge grid. */
static void test_staggered_3d(void **state)
{
#if HS_HAVE_NETCDF
    char path[512];
    snprintf(path, sizeof path, "%s", test_tmp_path("stag3.nc"));
    static const char *names[3] = {"x", "y", "z"};
    hs_output_desc d;
    memset(&d, 0, sizeof d);
    d.path = path;
    d.format = HS_FORMAT_NETCDF;
    d.ndim = 3;
    for (int k = 0; k < 3; k++) d.dim_names[k] = names[k], d.n[k] = 3 - k + 1;
    hs_grid_desc g[4] = {
        {.name = "fx", .stagger = {HS_STAGGER_FACE, 0, 0}, .dim_names = {"xf"}},
        {.name = "fy", .stagger = {0, HS_STAGGER_FACE, 0}, .dim_names = {NULL, "yf"}},
        {.name = "fz", .stagger = {0, 0, HS_STAGGER_FACE}, .dim_names = {NULL, NULL, "zf"}, .periodic = {0, 0, 1}},
        {.name = "exy", .stagger = {HS_STAGGER_FACE, HS_STAGGER_FACE, 0}, .dim_names = {"xf", "yf"}},
    };
    d.ngrids = 4;
    d.grids = g;
    hs_writer *w;
    int ids[5];
    TEST_OK(hs_writer_open(test_ctx(), &d, &w));
    TEST_OK(hs_writer_def_var(w, "T", "K", "t", NULL, HS_F64, 0, &ids[0]));
    TEST_OK(hs_writer_def_grid_var(w, "fx", "u", "1", "u", NULL, HS_F64, 0, &ids[1]));
    TEST_OK(hs_writer_def_grid_var(w, "fy", "v", "1", "v", NULL, HS_F64, 0, &ids[2]));
    TEST_OK(hs_writer_def_grid_var(w, "fz", "w", "1", "w", NULL, HS_F64, 0, &ids[3]));
    TEST_OK(hs_writer_def_grid_var(w, "exy", "omega", "1", "vorticity", NULL, HS_F64, 0, &ids[4]));
    double buf[64] = {0};
    for (int i = 0; i < 5; i++) TEST_OK(hs_writer_put(w, ids[i], buf));
    TEST_OK(hs_writer_close(w));
    int ncid;
    assert_int_equal(nc_open(path, NC_NOWRITE, &ncid), NC_NOERR);
    nc_text(ncid, "grid", "node_dimensions", "xf yf zf");
    nc_text(ncid, "grid", "volume_dimensions", "x: xf (padding: none) y: yf (padding: none) z: zf (padding: high)");
    nc_text(ncid, "grid", "face1_dimensions", "xf y: yf (padding: none) z: zf (padding: high)");
    nc_text(ncid, "grid", "edge3_dimensions", "xf yf z: zf (padding: high)");
    nc_text(ncid, "grid", "edge1_coordinates", "x yf zf");
    nc_text(ncid, "T", "location", "volume");
    nc_text(ncid, "u", "location", "face1");
    nc_text(ncid, "v", "location", "face2");
    nc_text(ncid, "w", "location", "face3");
    nc_text(ncid, "omega", "location", "edge3");
    size_t len;
    int dim;
    assert_int_equal(nc_inq_dimid(ncid, "zf", &dim), NC_NOERR);
    nc_inq_dimlen(ncid, dim, &len);
    assert_int_equal(len, 2); /* periodic: n faces */
    assert_int_equal(nc_inq_dimid(ncid, "xf", &dim), NC_NOERR);
    nc_inq_dimlen(ncid, dim, &len);
    assert_int_equal(len, 5);
    nc_close(ncid);
#else
    skip();
#endif
}

/* ------------------------------------------------------------------ meshes
 * 2-D: the unit square's 3 x 3 nodes, 8 triangles (each square cut along its rising diagonal),
 * region 1 left of x = 0.5, 2 right.  3-D: the unit cube's 8 corners, 6 tetrahedra around the
 * diagonal 0-7 (Kuhn), regions 1..6.  The nodes and cells are given in reverse order to the writer. */
#define N2 9
#define C2 8
#define N3 8
#define C3 6

typedef struct {
    int dim;
    int64_t nn, nc;
    double x[N2], y[N2], z[N2];
    int64_t conn[4 * C3 + 4 * C2];
    int32_t region[C2];
} mesh_t;

static void mesh2(mesh_t *m)
{
    memset(m, 0, sizeof *m);
    m->dim = 2, m->nn = N2, m->nc = C2;
    for (int j = 0; j < 3; j++)
        for (int i = 0; i < 3; i++) m->x[3 * j + i] = 0.5 * i, m->y[3 * j + i] = 0.5 * j;
    int c = 0;
    for (int j = 0; j < 2; j++)
        for (int i = 0; i < 2; i++) {
            int a = 3 * j + i, b = a + 1, d = a + 3, e = a + 4;
            int64_t t[6] = {a, b, e, a, e, d};
            memcpy(&m->conn[3 * c], t, sizeof t);
            m->region[c] = m->region[c + 1] = i + 1;
            c += 2;
        }
}

TEST_MAYBE_UNUSED static void mesh3(mesh_t *m)
{
    memset(m, 0, sizeof *m);
    m->dim = 3, m->nn = N3, m->nc = C3;
    for (int k = 0; k < 8; k++) m->x[k] = k & 1, m->y[k] = k >> 1 & 1, m->z[k] = k >> 2 & 1;
    static const int64_t tets[C3][4] = {{0, 1, 3, 7}, {0, 3, 2, 7}, {0, 2, 6, 7}, {0, 6, 4, 7}, {0, 4, 5, 7}, {0, 5, 1, 7}};
    memcpy(m->conn, tets, sizeof tets);
    for (int c = 0; c < C3; c++) m->region[c] = c + 1;
}

/* The writer's view: every array in reverse order, with the global indices. */
typedef struct {
    int64_t nidx[N2], cidx[C2];
    double x[N2], y[N2], z[N2];
    int64_t conn[4 * C2];
    int32_t region[C2];
} reversed_t;

static void mesh_desc(hs_mesh_desc *md, const mesh_t *m, reversed_t *rv, int vtu)
{
    int nv = m->dim + 1;
    for (int64_t i = 0; i < m->nn; i++) {
        int64_t k = m->nn - 1 - i;
        rv->nidx[i] = k, rv->x[i] = m->x[k], rv->y[i] = m->y[k], rv->z[i] = m->z[k];
    }
    for (int64_t c = 0; c < m->nc; c++) {
        int64_t k = m->nc - 1 - c;
        rv->cidx[c] = k;
        rv->region[c] = m->region[k];
        memcpy(&rv->conn[nv * c], &m->conn[nv * k], (size_t)nv * sizeof(int64_t));
    }
    memset(md, 0, sizeof *md);
    md->dim = m->dim;
    md->nnodes = m->nn;
    md->node_index = rv->nidx;
    md->x = rv->x, md->y = rv->y, md->z = m->dim == 3 ? rv->z : NULL;
    md->ncells = m->nc;
    md->cell_index = rv->cidx;
    md->cell_nodes = rv->conn;
    md->region = rv->region;
    md->vtu = vtu;
}

static void node_field(int r, double *f, int64_t n) { test_fill_f64(f, (size_t)n, 7000 + (uint64_t)r, 250, 350); }

/* Two records of T (nodes) and q (cells, f32) by index, a static h (nodes) in global order. */
static void write_mesh(const mesh_t *m, hs_output_format fmt, const char *path)
{
    hs_mesh_desc md;
    reversed_t rv;
    mesh_desc(&md, m, &rv, 1);
    hs_output_desc d;
    memset(&d, 0, sizeof d);
    d.path = path;
    d.format = fmt;
    d.title = "mesh test";
    d.time_units = "seconds since 2000-01-01 00:00:00";
    d.mesh = &md;
    hs_writer *w;
    int T, q, h;
    TEST_OK(hs_writer_open(test_ctx(), &d, &w));
    TEST_OK(hs_writer_def_mesh_var(w, "T", "K", "temperature", NULL, HS_MESH_NODE, HS_F64, 1, &T));
    TEST_OK(hs_writer_def_mesh_var(w, "q", "W m-3", "heat source", NULL, HS_MESH_CELL, HS_F32, 1, &q));
    TEST_OK(hs_writer_def_mesh_var(w, "h", "m", "height", NULL, HS_MESH_NODE, HS_F64, 0, &h));
    double f[N2], fr[N2];
    float g[C2];
    node_field(100, f, m->nn);
    TEST_OK(hs_writer_put(w, h, f));
    for (int r = 0; r < 2; r++) {
        TEST_OK(hs_writer_begin_step(w, 0.5 * r));
        node_field(r, f, m->nn);
        for (int64_t i = 0; i < m->nn; i++) fr[i] = f[rv.nidx[i]];
        TEST_OK(hs_writer_put_mesh(w, T, m->nn, rv.nidx, fr));
        node_field(50 + r, f, m->nc);
        for (int64_t c = 0; c < m->nc; c++) g[c] = (float)f[rv.cidx[c]];
        TEST_OK(hs_writer_put_mesh(w, q, m->nc, rv.cidx, g));
    }
    TEST_OK(hs_writer_close(w));
}

static void check_mesh_data(const mesh_t *m, const char *path)
{
    hs_reader *r;
    int nv = m->dim + 1;
    const char *cells = m->dim == 3 ? "volume" : "face";
    char name[64];
    double want[4 * C2], f[N2];
    TEST_OK(hs_reader_open(path, &r));
    read_eq(r, "mesh_node_x", -1, m->x, (size_t)m->nn);
    read_eq(r, "mesh_node_y", -1, m->y, (size_t)m->nn);
    if (m->dim == 3) read_eq(r, "mesh_node_z", -1, m->z, (size_t)m->nn);
    for (int64_t i = 0; i < m->nc * nv; i++) want[i] = (double)m->conn[i];
    snprintf(name, sizeof name, "mesh_%s_nodes", cells);
    read_eq(r, name, -1, want, (size_t)(m->nc * nv));
    for (int64_t c = 0; c < m->nc; c++) want[c] = m->region[c];
    read_eq(r, "mesh_region", -1, want, (size_t)m->nc);
    for (int rec = 0; rec < 2; rec++) {
        node_field(rec, f, m->nn);
        read_eq(r, "T", rec, f, (size_t)m->nn);
        node_field(50 + rec, f, m->nc);
        for (int64_t c = 0; c < m->nc; c++) f[c] = (float)f[c];
        read_eq(r, "q", rec, f, (size_t)m->nc);
    }
    hs_reader_close(r);
}

/* A VTU file's appended block for DataArray `name` (its bytes, malloc'd). */
static void *vtu_array(const char *doc, size_t doclen, const char *name, uint64_t *bytes)
{
    char key[96];
    snprintf(key, sizeof key, "Name=\"%s\"", name);
    const char *a = strstr(doc, key);
    if (!a) fail_msg("VTU array %s missing", name);
    const char *o = strstr(a, "offset=\"");
    unsigned long long off = strtoull(o + 8, NULL, 10);
    const char *app = strstr(doc, "<AppendedData encoding=\"raw\">");
    if (!app) fail_msg("no raw AppendedData");
    const char *us = strchr(app, '_');
    size_t at = (size_t)(us + 1 - doc) + (size_t)off;
    if (at + 8 > doclen) fail_msg("VTU offset of %s outside the file", name);
    memcpy(bytes, doc + at, 8);
    void *p = malloc(*bytes + 1);
    memcpy(p, doc + at + 8, *bytes);
    return p;
}

static void check_vtu(const mesh_t *m, const char *dir_stem)
{
    char path[600];
    snprintf(path, sizeof path, "%s.pvd", dir_stem);
    char *pvd = slurp(path);
    has_text(pvd, "<DataSet timestep=\"0\" group=\"\" part=\"0\" file=\"", path);
    has_text(pvd, "<DataSet timestep=\"0.5\" group=\"\" part=\"0\" file=\"", path);
    has_text(pvd, "_000001.vtu\"/>", path);
    free(pvd);
    snprintf(path, sizeof path, "%s_000001.vtu", dir_stem);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    size_t n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    char *doc = malloc(n + 1);
    assert_int_equal(fread(doc, 1, n, f), n);
    doc[n] = 0;
    fclose(f);
    int nv = m->dim + 1;
    uint64_t bytes;
    double want[N2];
    node_field(1, want, m->nn);
    double *T = vtu_array(doc, n, "T", &bytes);
    assert_int_equal(bytes, (uint64_t)m->nn * 8);
    assert_memory_equal(T, want, bytes);
    node_field(100, want, m->nn);
    double *h = vtu_array(doc, n, "h", &bytes);
    assert_memory_equal(h, want, bytes);
    node_field(51, want, m->nc);
    float *q = vtu_array(doc, n, "q", &bytes);
    assert_int_equal(bytes, (uint64_t)m->nc * 4);
    for (int64_t c = 0; c < m->nc; c++) assert_true(q[c] == (float)want[c]);
    int64_t *conn = vtu_array(doc, n, "connectivity", &bytes);
    assert_int_equal(bytes, (uint64_t)(m->nc * nv) * 8);
    assert_memory_equal(conn, m->conn, bytes);
    int32_t *reg = vtu_array(doc, n, "region", &bytes);
    assert_memory_equal(reg, m->region, (size_t)m->nc * 4);
    double *pts = vtu_array(doc, n, "Points", &bytes);
    for (int64_t i = 0; i < m->nn; i++) assert_true(pts[3 * i] == m->x[i] && pts[3 * i + 1] == m->y[i] && pts[3 * i + 2] == m->z[i]);
    unsigned char *types = vtu_array(doc, n, "types", &bytes);
    for (int64_t c = 0; c < m->nc; c++) assert_int_equal(types[c], m->dim == 3 ? 10 : 5);
    free(T), free(h), free(q), free(conn), free(reg), free(pts), free(types), free(doc);
}

TEST_MAYBE_UNUSED static void run_mesh(const mesh_t *m, hs_output_format fmt, const char *ext)
{
    char name[64], path[512], stem[512];
    snprintf(name, sizeof name, "mesh%d.%s", m->dim, ext);
    snprintf(path, sizeof path, "%s", test_tmp_path(name));
    snprintf(stem, sizeof stem, "%.*s", (int)(strlen(path) - strlen(ext) - 1), path);
    write_mesh(m, fmt, path);
    check_mesh_data(m, path);
    check_vtu(m, stem);
#if HS_HAVE_NETCDF
    if (fmt == HS_FORMAT_NETCDF) {
        int ncid;
        const char *cells = m->dim == 3 ? "volume" : "face";
        char a[64], b[64];
        assert_int_equal(nc_open(path, NC_NOWRITE, &ncid), NC_NOERR);
        nc_text(ncid, NULL, "Conventions", "CF-1.8 UGRID-1.0");
        nc_text(ncid, "mesh", "cf_role", "mesh_topology");
        nc_text(ncid, "mesh", "node_coordinates", m->dim == 3 ? "mesh_node_x mesh_node_y mesh_node_z" : "mesh_node_x mesh_node_y");
        snprintf(a, sizeof a, "%s_node_connectivity", cells);
        snprintf(b, sizeof b, "mesh_%s_nodes", cells);
        nc_text(ncid, "mesh", a, b);
        nc_text(ncid, b, "cf_role", a);
        int v, si = -1;
        assert_int_equal(nc_inq_varid(ncid, b, &v), NC_NOERR);
        assert_int_equal(nc_get_att_int(ncid, v, "start_index", &si), NC_NOERR);
        assert_int_equal(si, 0);
        if (m->dim == 3) {
            nc_text(ncid, "mesh", "volume_shape_type", "mesh_volume_types");
            nc_text(ncid, "mesh_volume_types", "flag_meanings", "tetrahedron");
        }
        nc_text(ncid, "T", "mesh", "mesh");
        nc_text(ncid, "T", "location", "node");
        nc_text(ncid, "q", "location", cells);
        nc_text(ncid, "mesh_region", "location", cells);
        nc_close(ncid);
    }
#endif
#if HS_HAVE_HDF5
    if (fmt == HS_FORMAT_HDF5) {
        char xmf[600];
        snprintf(xmf, sizeof xmf, "%s.xmf", stem);
        char *x = slurp(xmf), want[160];
        snprintf(want, sizeof want, "<Topology TopologyType=\"%s\" NumberOfElements=\"%lld\" NodesPerElement=\"%d\">",
                 m->dim == 3 ? "Tetrahedron" : "Triangle", (long long)m->nc, m->dim + 1);
        has_text(x, want, xmf);
        has_text(x, "<Geometry GeometryType=\"XYZ\">", xmf);
        has_text(x, "<Attribute Name=\"T\" AttributeType=\"Scalar\" Center=\"Node\">", xmf);
        has_text(x, "<Attribute Name=\"q\" AttributeType=\"Scalar\" Center=\"Cell\">", xmf);
        has_text(x, "<Attribute Name=\"region\" AttributeType=\"Scalar\" Center=\"Cell\">", xmf);
        free(x);
        /* the interleaved XDMF nodes */
        double xyz[3 * N2];
        for (int64_t i = 0; i < m->nn; i++) xyz[3 * i] = m->x[i], xyz[3 * i + 1] = m->y[i], xyz[3 * i + 2] = m->z[i];
        h5_eq(path, "xdmf/mesh_nodes", xyz, (size_t)(3 * m->nn));
    }
#endif
}

static void test_mesh_netcdf(void **state)
{
#if HS_HAVE_NETCDF
    mesh_t m;
    mesh2(&m);
    run_mesh(&m, HS_FORMAT_NETCDF, "nc");
    mesh3(&m);
    run_mesh(&m, HS_FORMAT_NETCDF, "nc");
#else
    skip();
#endif
}

static void test_mesh_hdf5(void **state)
{
#if HS_HAVE_HDF5
    mesh_t m;
    mesh2(&m);
    run_mesh(&m, HS_FORMAT_HDF5, "h5");
    mesh3(&m);
    run_mesh(&m, HS_FORMAT_HDF5, "h5");
#else
    skip();
#endif
}

/* ------------------------------------------------------------------ bad input */

static hs_output_format any_format(void) { return HS_HAVE_NETCDF ? HS_FORMAT_NETCDF : HS_FORMAT_HDF5; }

static void expect_open(const hs_output_desc *d, int code, const char *words)
{
    hs_writer *w = NULL;
    int rc = hs_writer_open(test_ctx(), d, &w);
    if (rc != code) fail_msg("hs_writer_open returned %d, expected %d (%s)", rc, code, hs_error_message());
    if (words && !strstr(hs_error_message(), words)) fail_msg("message \"%s\" lacks \"%s\"", hs_error_message(), words);
    hs_error_clear();
    assert_null(w);
}

static void test_bad_grids(void **state)
{
    if (!HS_HAVE_NETCDF && !HS_HAVE_HDF5) skip();
    hs_output_desc d;
    char path[512];
    snprintf(path, sizeof path, "%s", test_tmp_path("bad.out"));
    stag_desc(&d, any_format(), path);
    grids[0].name = "u faces";
    expect_open(&d, HS_ERR_INPUT, "bad grid name");
    stag_desc(&d, any_format(), path);
    grids[0].dim_names[0] = "x"; /* the main grid's name */
    expect_open(&d, HS_ERR_INPUT, "is taken by the file");
    stag_desc(&d, any_format(), path);
    grids[2].dim_names[0] = "x_face"; /* the u faces' dimension again, as another kind */
    expect_open(&d, HS_ERR_INPUT, "declared again");
    stag_desc(&d, any_format(), path);
    grids[1].name = "u_faces";
    expect_open(&d, HS_ERR_INPUT, "two grids have this name");
    stag_desc(&d, any_format(), path);
    grids[2].stagger[0] = grids[2].stagger[1] = HS_STAGGER_CELL;
    expect_open(&d, HS_ERR_INPUT, "needs a FACE or OWN axis");
    stag_desc(&d, any_format(), path);
    d.ngrids = 9;
    expect_open(&d, HS_ERR_INPUT, "extra grids");
    /* a mesh beside a grid */
    mesh_t m;
    hs_mesh_desc md;
    reversed_t rv;
    mesh2(&m);
    mesh_desc(&md, &m, &rv, 0);
    stag_desc(&d, any_format(), path);
    d.ngrids = 0;
    d.mesh = &md;
    expect_open(&d, HS_ERR_INPUT, "a file of its own");
    /* a cell naming a node that does not exist, a node given twice */
    d.ndim = 0;
    rv.conn[4] = 9;
    expect_open(&d, HS_ERR_RUNTIME, "names node 9");
    mesh_desc(&md, &m, &rv, 0);
    rv.nidx[3] = rv.nidx[4];
    expect_open(&d, HS_ERR_RUNTIME, "given twice");
    mesh_desc(&md, &m, &rv, 0);
    md.dim = 4;
    expect_open(&d, HS_ERR_INPUT, "2 (triangles) or 3");
    /* variables on grids that are not there */
    stag_desc(&d, any_format(), path);
    hs_writer *w;
    int id;
    TEST_OK(hs_writer_open(test_ctx(), &d, &w));
    assert_int_equal(hs_writer_def_grid_var(w, "w_faces", "w", "1", "w", NULL, HS_F64, 1, &id), HS_ERR_INPUT);
    hs_error_clear();
    assert_int_equal(hs_writer_def_mesh_var(w, "T", "K", "t", NULL, HS_MESH_NODE, HS_F64, 1, &id), HS_ERR_INPUT);
    hs_error_clear();
    assert_int_equal(hs_writer_def_var(w, "x_face", "1", "clash", NULL, HS_F64, 0, &id), HS_ERR_INPUT);
    hs_error_clear();
    TEST_OK(hs_writer_def_grid_var(w, "u_faces", "u", "1", "u", NULL, HS_F64, 0, &id));
    /* a block that does not fit the face grid (it has NX + 1 points along x) */
    double buf[NU] = {0};
    int64_t off[3] = {0, 0, 0}, cnt[3] = {NX, NY, 1};
    assert_int_equal(hs_writer_put_block(w, id, off, cnt, buf), HS_ERR_RUNTIME);
    hs_error_clear();
    hs_writer_discard(w);
}

/* compare --all: equal files agree; a changed value and a missing variable are differences. */
static void test_compare_all(void **state)
{
    if (!HS_HAVE_NETCDF && !HS_HAVE_HDF5) skip();
    const char *ext = HS_HAVE_NETCDF ? "nc" : "h5";
    char a[512], b[512], c[512], name[32];
    snprintf(name, sizeof name, "ca.%s", ext);
    snprintf(a, sizeof a, "%s", test_tmp_path(name));
    snprintf(name, sizeof name, "cb.%s", ext);
    snprintf(b, sizeof b, "%s", test_tmp_path(name));
    snprintf(name, sizeof name, "cc.%s", ext);
    snprintf(c, sizeof c, "%s", test_tmp_path(name));
    for (int k = 0; k < 3; k++) {
        hs_output_desc d;
        stag_desc(&d, any_format(), k == 0 ? a : k == 1 ? b : c);
        d.ngrids = 0;
        hs_writer *w;
        int T, S;
        double f[NP];
        TEST_OK(hs_writer_open(test_ctx(), &d, &w));
        TEST_OK(hs_writer_def_var(w, "T", "K", "t", NULL, HS_F64, 1, &T));
        if (k != 2) TEST_OK(hs_writer_def_var(w, "S", "1", "s", NULL, HS_F64, 0, &S));
        field(1, f, NP);
        if (k != 2) TEST_OK(hs_writer_put(w, S, f));
        for (int r = 0; r < 2; r++) {
            TEST_OK(hs_writer_begin_step(w, r));
            field(2 + r, f, NP);
            if (k == 1 && r == 0) f[7] += 1e-9; /* only the first record differs */
            TEST_OK(hs_writer_put(w, T, f));
        }
        TEST_OK(hs_writer_close(w));
    }
    FILE *out = fopen("/dev/null", "w");
    int nd = -1;
    TEST_OK(hs_compare_all(a, a, 0, 0, out, &nd));
    assert_int_equal(nd, 0);
    TEST_OK(hs_compare_all(a, b, 0, 0, out, &nd));
    assert_int_equal(nd, 1);
    TEST_OK(hs_compare_all(a, b, 1, 0, out, &nd)); /* the last records agree */
    assert_int_equal(nd, 0);
    TEST_OK(hs_compare_all(a, b, 0, 1e-6, out, &nd));
    assert_int_equal(nd, 0);
    TEST_OK(hs_compare_all(a, c, 0, 0, out, &nd)); /* S in a only */
    assert_int_equal(nd, 1);
    fclose(out);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_staggered_netcdf),
    cmocka_unit_test(test_staggered_hdf5),
    cmocka_unit_test(test_staggered_3d),
    cmocka_unit_test(test_mesh_netcdf),
    cmocka_unit_test(test_mesh_hdf5),
    cmocka_unit_test(test_bad_grids),
    cmocka_unit_test_teardown(test_compare_all, test_tmp_cleanup),
};

TEST_MAIN("output_grids", tests)
