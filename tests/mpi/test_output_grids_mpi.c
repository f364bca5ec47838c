/* Staggered grids and meshes written by several ranks, collectively and through rank 0, with a resume: every variable equals the exact fields at any rank count. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "io/compare.h"
#include "io/output.h"
#include "kernels/comm/comm.h"
#include "test_util.h"

/* ------------------------------------------------------------------ the MAC grid
 * 6 x 5 x 4 cells cut into uneven z slabs (rank r has weight r + 1: at 4 ranks rank 0 owns none).
 * u on the x faces (7 x 5 x 4), v on the periodic y faces (6 x 5 x 4), w on the z faces (6 x 5 x 5:
 * a rank owns the low face of each of its cells, the last rank the top face too), p in the cells,
 * and a coarse 3 x 2 x 2 grid of its own written from rank 0. */
#define NX 6
#define NY 5
#define NZ 4

typedef struct {
    int64_t lo, hi; /* this rank's cells along z */
} slab_t;

static slab_t slab(void)
{
    hs_ctx *ctx = test_ctx();
    int64_t wsum = (int64_t)ctx->size * (ctx->size + 1) / 2, before = (int64_t)ctx->rank * (ctx->rank + 1) / 2;
    slab_t s = {NZ * before / wsum, NZ * (before + ctx->rank + 1) / wsum};
    return s;
}

static const char *out_path(const char *mode, const char *name)
{
    static char buf[2][512];
    static int k;
    const char *dir = getenv("HS_KEEP_OUTPUT");
    char rel[128];
    snprintf(rel, sizeof rel, "%s_%s", mode, name);
    if (!dir || !*dir) return test_tmp_path(rel);
    k ^= 1;
    /* kept for tests/cli/test_output_grids.sh: DIR/MODE/NAME */
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, mode);
    if (test_ctx()->rank == 0) mkdir(buf[k], 0755);
    MPI_Barrier(test_ctx()->comm);
    snprintf(buf[k], sizeof buf[k], "%s/%s/%s", dir, mode, name);
    return buf[k];
}

static hs_grid_desc grids[4];
static double xc[NX], yc[NY], zc[NZ], coarse_x[3] = {1, 3, 5};

static void mac_desc(hs_output_desc *d, hs_output_format fmt, const char *path, int parallel)
{
    static const char *names[3] = {"x", "y", "z"};
    int root = test_ctx()->rank == 0;
    for (int i = 0; i < NX; i++) xc[i] = 0.5 + i;
    for (int i = 0; i < NY; i++) yc[i] = 0.25 * (i + 0.5);
    for (int i = 0; i < NZ; i++) zc[i] = 0.1 * (i + 0.5);
    memset(d, 0, sizeof *d);
    d->path = path;
    d->format = fmt;
    d->title = "staggered output at any rank count";
    d->history = "test_output_grids_mpi";
    d->params_ini = "[run]\nsolver = none\n";
    d->ndim = 3;
    for (int k = 0; k < 3; k++) d->dim_names[k] = names[k], d->coord_units[k] = "m";
    d->n[0] = NX, d->n[1] = NY, d->n[2] = NZ;
    d->coords[0] = root ? xc : NULL, d->coords[1] = root ? yc : NULL, d->coords[2] = root ? zc : NULL;
    d->time_units = "seconds since 2000-01-01 00:00:00";
    d->parallel = parallel;
    memset(grids, 0, sizeof grids);
    grids[0] = (hs_grid_desc){.name = "u_faces", .stagger = {HS_STAGGER_FACE, 0, 0}, .dim_names = {"x_face"}};
    grids[1] = (hs_grid_desc){.name = "v_faces", .stagger = {0, HS_STAGGER_FACE, 0}, .dim_names = {NULL, "y_face"},
                              .periodic = {0, 1, 0}};
    grids[2] = (hs_grid_desc){.name = "w_faces", .stagger = {0, 0, HS_STAGGER_FACE}, .dim_names = {NULL, NULL, "z_face"}};
    grids[3] = (hs_grid_desc){.name = "coarse", .stagger = {HS_STAGGER_OWN, HS_STAGGER_OWN, HS_STAGGER_OWN},
                              .dim_names = {"xc", "yc", "zc"}, .n = {3, 2, 2}, .coords = {root ? coarse_x : NULL}};
    d->ngrids = 4;
    d->grids = grids;
}

/* Grid shapes (x, y, z) by variable: p, u, v, w. */
static const int64_t shapes[4][3] = {{NX, NY, NZ}, {NX + 1, NY, NZ}, {NX, NY, NZ}, {NX, NY, NZ + 1}};
static const char *const var_names[4] = {"p", "u", "v", "w"};
static const char *const var_grids[4] = {NULL, "u_faces", "v_faces", "w_faces"};

static size_t total(int k) { return (size_t)(shapes[k][0] * shapes[k][1] * shapes[k][2]); }
static void field(int k, int r, double *f) { test_fill_f64(f, total(k), 8000 + 100 * (uint64_t)r + (uint64_t)k, -5, 5); }

/* This rank's z block of variable k: its cells, and on the last rank the top z face. */
static void block(int k, int64_t off[3], int64_t cnt[3])
{
    slab_t s = slab();
    int last = test_ctx()->rank == test_ctx()->size - 1;
    off[0] = 0, off[1] = 0, off[2] = s.lo;
    cnt[0] = shapes[k][0], cnt[1] = shapes[k][1], cnt[2] = s.hi - s.lo + (k == 3 && last ? 1 : 0);
}

static void mac_record(hs_writer *w, const int *id, int r, double t)
{
    TEST_OK(hs_writer_begin_step(w, t));
    for (int k = 0; k < 4; k++) {
        double *f = malloc(total(k) * sizeof *f);
        field(k, r, f);
        int64_t off[3], cnt[3];
        block(k, off, cnt);
        size_t plane = (size_t)(shapes[k][0] * shapes[k][1]);
        TEST_OK(hs_writer_put_block(w, id[k], off, cnt, f + (size_t)off[2] * plane));
        free(f);
    }
}

static void mac_define(hs_writer *w, int *id)
{
    for (int k = 0; k < 4; k++)
        TEST_OK(hs_writer_def_grid_var(w, var_grids[k], var_names[k], k ? "m s-1" : "Pa", var_names[k], NULL, HS_F64, 1, &id[k]));
    TEST_OK(hs_writer_def_grid_var(w, "coarse", "pc", "Pa", "coarse pressure", NULL, HS_F64, 0, &id[4]));
}

/* Records 0, 1, 2; suspend; resume at t = 0.5 (keeps 0, 1); record 7 at t = 2. */
static void write_mac(hs_output_format fmt, const char *path, int parallel)
{
    hs_ctx *ctx = test_ctx();
    hs_output_desc d;
    mac_desc(&d, fmt, path, parallel);
    hs_writer *w;
    int id[5], id2[5];
    TEST_OK(hs_writer_open(ctx, &d, &w));
    mac_define(w, id);
    double c[12];
    test_fill_f64(c, 12, 8999, 0, 1);
    TEST_OK(hs_writer_put(w, id[4], ctx->rank == 0 ? c : NULL));
    for (int r = 0; r < 3; r++) mac_record(w, id, r, 0.5 * r);
    TEST_OK(hs_writer_suspend(w));
    TEST_OK(hs_writer_resume(ctx, &d, 0.5, &w));
    assert_int_equal(hs_writer_records(w), 2);
    mac_define(w, id2);
    assert_memory_equal(id, id2, sizeof id);
    mac_record(w, id, 7, 2.0);
    TEST_OK(hs_writer_close(w));
}

static void check_mac(const char *path)
{
    if (test_ctx()->rank != 0) return;
    hs_reader *r;
    TEST_OK(hs_reader_open(path, &r));
    static const int recs[3] = {0, 1, 7};
    for (int k = 0; k < 4; k++) {
        double *want = malloc(total(k) * sizeof *want), *got = malloc(total(k) * sizeof *got);
        int64_t shape[8];
        int rank;
        TEST_OK(hs_reader_var_shape(r, var_names[k], shape, &rank));
        assert_true(rank == 4 && shape[0] == 3 && shape[1] == shapes[k][2] && shape[2] == shapes[k][1] && shape[3] == shapes[k][0]);
        for (int j = 0; j < 3; j++) {
            field(k, recs[j], want);
            TEST_OK(hs_reader_read_record(r, var_names[k], j, got));
            if (memcmp(got, want, total(k) * sizeof *got)) fail_msg("%s: %s record %d differs from the exact field", path, var_names[k], j);
        }
        free(want);
        free(got);
    }
    double c[12], got[12];
    test_fill_f64(c, 12, 8999, 0, 1);
    TEST_OK(hs_reader_read(r, "pc", got));
    assert_memory_equal(c, got, sizeof c);
    hs_reader_close(r);
}

/* ------------------------------------------------------------------ meshes
 * 2-D: a 6 x 4 square grid of nodes 0.5 apart cut into 48 triangles; 3-D: 2 x 2 x 2 cubes of 27
 * nodes, 6 tetrahedra each (48).  Node i belongs to rank (7 i) mod p, cell c to rank (5 c) mod p,
 * each rank lists its own backwards; region 1 left of the middle, 2 right. */
#define MX 6
#define MY 4
#define C 2

typedef struct {
    int dim;
    int64_t nn, nc;
    double *x, *y, *z;
    int64_t *conn;
    int32_t *region;
} mesh_t;

static void mesh_make(mesh_t *m, int dim)
{
    memset(m, 0, sizeof *m);
    m->dim = dim;
    if (dim == 2) {
        m->nn = (MX + 1) * (MY + 1), m->nc = 2 * MX * MY;
    } else {
        m->nn = (C + 1) * (C + 1) * (C + 1), m->nc = 6 * C * C * C;
    }
    m->x = calloc((size_t)m->nn, sizeof(double)), m->y = calloc((size_t)m->nn, sizeof(double));
    m->z = calloc((size_t)m->nn, sizeof(double));
    m->conn = malloc((size_t)(m->nc * (dim + 1)) * sizeof(int64_t));
    m->region = malloc((size_t)m->nc * sizeof(int32_t));
    int64_t c = 0;
    if (dim == 2) {
        for (int j = 0; j <= MY; j++)
            for (int i = 0; i <= MX; i++) m->x[j * (MX + 1) + i] = 0.5 * i, m->y[j * (MX + 1) + i] = 0.5 * j;
        for (int j = 0; j < MY; j++)
            for (int i = 0; i < MX; i++) {
                int64_t a = j * (MX + 1) + i, b = a + 1, d = a + MX + 1, e = d + 1;
                int64_t t[6] = {a, b, e, a, e, d};
                memcpy(&m->conn[3 * c], t, sizeof t);
                m->region[c] = m->region[c + 1] = i < MX / 2 ? 1 : 2;
                c += 2;
            }
        return;
    }
#define NODE(i, j, k) ((int64_t)(((k) * (C + 1) + (j)) * (C + 1) + (i)))
    for (int k = 0; k <= C; k++)
        for (int j = 0; j <= C; j++)
            for (int i = 0; i <= C; i++) m->x[NODE(i, j, k)] = i, m->y[NODE(i, j, k)] = j, m->z[NODE(i, j, k)] = k;
    static const int kuhn[6][4] = {{0, 1, 3, 7}, {0, 3, 2, 7}, {0, 2, 6, 7}, {0, 6, 4, 7}, {0, 4, 5, 7}, {0, 5, 1, 7}};
    for (int k = 0; k < C; k++)
        for (int j = 0; j < C; j++)
            for (int i = 0; i < C; i++)
                for (int t = 0; t < 6; t++, c++) {
                    for (int v = 0; v < 4; v++) {
                        int corner = kuhn[t][v];
                        m->conn[4 * c + v] = NODE(i + (corner & 1), j + (corner >> 1 & 1), k + (corner >> 2 & 1));
                    }
                    m->region[c] = i < C / 2 ? 1 : 2;
                }
#undef NODE
}

static void mesh_free(mesh_t *m)
{
    free(m->x), free(m->y), free(m->z), free(m->conn), free(m->region);
}

/* This rank's part: the indices it owns, backwards. */
static int64_t owned(int64_t n, int mult, int64_t *idx)
{
    hs_ctx *ctx = test_ctx();
    int64_t k = 0;
    for (int64_t i = n - 1; i >= 0; i--)
        if ((i * mult) % ctx->size == ctx->rank) idx[k++] = i;
    return k;
}

typedef struct {
    int64_t nn, nc, *nidx, *cidx, *conn;
    double *x, *y, *z;
    int32_t *region;
} part_t;

static void mesh_part(const mesh_t *m, part_t *p, hs_mesh_desc *md)
{
    int nv = m->dim + 1;
    p->nidx = malloc((size_t)m->nn * sizeof(int64_t)), p->cidx = malloc((size_t)m->nc * sizeof(int64_t));
    p->nn = owned(m->nn, 7, p->nidx), p->nc = owned(m->nc, 5, p->cidx);
    p->x = malloc((size_t)(p->nn + 1) * sizeof(double)), p->y = malloc((size_t)(p->nn + 1) * sizeof(double));
    p->z = malloc((size_t)(p->nn + 1) * sizeof(double));
    p->conn = malloc((size_t)(p->nc * nv + 1) * sizeof(int64_t));
    p->region = malloc((size_t)(p->nc + 1) * sizeof(int32_t));
    for (int64_t i = 0; i < p->nn; i++) p->x[i] = m->x[p->nidx[i]], p->y[i] = m->y[p->nidx[i]], p->z[i] = m->z[p->nidx[i]];
    for (int64_t c = 0; c < p->nc; c++) {
        memcpy(&p->conn[nv * c], &m->conn[nv * p->cidx[c]], (size_t)nv * sizeof(int64_t));
        p->region[c] = m->region[p->cidx[c]];
    }
    memset(md, 0, sizeof *md);
    md->name = "fem";
    md->dim = m->dim;
    md->nnodes = p->nn, md->node_index = p->nidx, md->x = p->x, md->y = p->y, md->z = m->dim == 3 ? p->z : NULL;
    md->ncells = p->nc, md->cell_index = p->cidx, md->cell_nodes = p->conn, md->region = p->region;
    md->vtu = 1;
}

static void part_free(part_t *p)
{
    free(p->nidx), free(p->cidx), free(p->conn), free(p->x), free(p->y), free(p->z), free(p->region);
}

static void node_field(int r, double *f, int64_t n) { test_fill_f64(f, (size_t)n, 9000 + (uint64_t)r, 0, 100); }

static void mesh_record(hs_writer *w, const mesh_t *m, const part_t *p, int T, int q, int r, double t)
{
    double *f = malloc((size_t)(m->nn + m->nc) * sizeof *f), *mine = malloc((size_t)(m->nn + 1) * sizeof *mine);
    float *g = malloc((size_t)(m->nc + 1) * sizeof *g);
    TEST_OK(hs_writer_begin_step(w, t));
    node_field(r, f, m->nn);
    for (int64_t i = 0; i < p->nn; i++) mine[i] = f[p->nidx[i]];
    TEST_OK(hs_writer_put_mesh(w, T, p->nn, p->nidx, mine));
    node_field(500 + r, f, m->nc);
    for (int64_t c = 0; c < p->nc; c++) g[c] = (float)f[p->cidx[c]];
    TEST_OK(hs_writer_put_mesh(w, q, p->nc, p->cidx, g));
    free(f), free(mine), free(g);
}

static void write_mesh(const mesh_t *m, hs_output_format fmt, const char *path, int parallel)
{
    hs_ctx *ctx = test_ctx();
    part_t p;
    hs_mesh_desc md;
    mesh_part(m, &p, &md);
    hs_output_desc d;
    memset(&d, 0, sizeof d);
    d.path = path;
    d.format = fmt;
    d.title = "mesh output at any rank count";
    d.history = "test_output_grids_mpi";
    d.time_units = "seconds since 2000-01-01 00:00:00";
    d.parallel = parallel;
    d.mesh = &md;
    hs_writer *w;
    int T, q, h, E;
    TEST_OK(hs_writer_open(ctx, &d, &w));
    TEST_OK(hs_writer_def_mesh_var(w, "T", "K", "temperature", NULL, HS_MESH_NODE, HS_F64, 1, &T));
    TEST_OK(hs_writer_def_mesh_var(w, "q", "W m-3", "heat source", NULL, HS_MESH_CELL, HS_F32, 1, &q));
    TEST_OK(hs_writer_def_mesh_var(w, "h", "m", "height", NULL, HS_MESH_NODE, HS_F64, 0, &h));
    TEST_OK(hs_writer_def_series(w, "energy", "J", "total energy", NULL, &E));
    double *f = malloc((size_t)m->nn * sizeof *f);
    node_field(999, f, m->nn);
    TEST_OK(hs_writer_put(w, h, ctx->rank == 0 ? f : NULL));
    free(f);
    for (int r = 0; r < 3; r++) {
        mesh_record(w, m, &p, T, q, r, 0.5 * r);
        TEST_OK(hs_writer_put_scalar(w, E, 10.0 + r));
    }
    TEST_OK(hs_writer_suspend(w));
    TEST_OK(hs_writer_resume(ctx, &d, 0.5, &w));
    assert_int_equal(hs_writer_records(w), 2);
    int T2, q2, h2, E2;
    TEST_OK(hs_writer_def_mesh_var(w, "T", "K", "temperature", NULL, HS_MESH_NODE, HS_F64, 1, &T2));
    TEST_OK(hs_writer_def_mesh_var(w, "q", "W m-3", "heat source", NULL, HS_MESH_CELL, HS_F32, 1, &q2));
    TEST_OK(hs_writer_def_mesh_var(w, "h", "m", "height", NULL, HS_MESH_NODE, HS_F64, 0, &h2));
    TEST_OK(hs_writer_def_series(w, "energy", "J", "total energy", NULL, &E2));
    assert_true(T2 == T && q2 == q && h2 == h && E2 == E);
    mesh_record(w, m, &p, T, q, 7, 2.0);
    TEST_OK(hs_writer_put_scalar(w, E, 17.0));
    TEST_OK(hs_writer_close(w));
    part_free(&p);
}

static void check_mesh(const mesh_t *m, const char *path)
{
    if (test_ctx()->rank != 0) return;
    int nv = m->dim + 1;
    hs_reader *r;
    double *got = malloc((size_t)(m->nc * nv + m->nn) * sizeof *got), *want = malloc((size_t)(m->nc * nv + m->nn) * sizeof *want);
    TEST_OK(hs_reader_open(path, &r));
    TEST_OK(hs_reader_read(r, "fem_node_x", got));
    assert_memory_equal(got, m->x, (size_t)m->nn * sizeof *got);
    TEST_OK(hs_reader_read(r, m->dim == 3 ? "fem_volume_nodes" : "fem_face_nodes", got));
    for (int64_t i = 0; i < m->nc * nv; i++) assert_true(got[i] == (double)m->conn[i]);
    TEST_OK(hs_reader_read(r, "fem_region", got));
    for (int64_t c = 0; c < m->nc; c++) assert_true(got[c] == m->region[c]);
    static const int recs[3] = {0, 1, 7};
    for (int j = 0; j < 3; j++) {
        node_field(recs[j], want, m->nn);
        TEST_OK(hs_reader_read_record(r, "T", j, got));
        assert_memory_equal(got, want, (size_t)m->nn * sizeof *got);
        node_field(500 + recs[j], want, m->nc);
        TEST_OK(hs_reader_read_record(r, "q", j, got));
        for (int64_t c = 0; c < m->nc; c++) assert_true(got[c] == (double)(float)want[c]);
    }
    TEST_OK(hs_reader_read(r, "energy", got));
    assert_true(got[0] == 10 && got[1] == 11 && got[2] == 17);
    hs_reader_close(r);
    free(got), free(want);
}

/* ------------------------------------------------------------------ both paths, both formats */

static void same_files(const char *a, const char *b)
{
    if (test_ctx()->rank != 0) return;
    FILE *out = fopen("/dev/null", "w");
    int nd = -1;
    TEST_OK(hs_compare_all(a, b, 0, 0, out, &nd));
    fclose(out);
    if (nd != 0) fail_msg("%s and %s differ in %d variables", a, b, nd);
}

TEST_MAYBE_UNUSED static void run_format(hs_output_format fmt, const char *ext)
{
    char a[512], b[512], name[64];
    snprintf(name, sizeof name, "mac.%s", ext);
    snprintf(a, sizeof a, "%s", out_path("auto", name));
    snprintf(b, sizeof b, "%s", out_path("off", name));
    write_mac(fmt, a, HS_OUTPUT_PARALLEL_AUTO);
    write_mac(fmt, b, HS_OUTPUT_PARALLEL_OFF);
    check_mac(a);
    check_mac(b);
    same_files(a, b);
    for (int dim = 2; dim <= 3; dim++) {
        mesh_t m;
        mesh_make(&m, dim);
        snprintf(name, sizeof name, "tri%d.%s", dim, ext);
        snprintf(a, sizeof a, "%s", out_path("auto", name));
        snprintf(b, sizeof b, "%s", out_path("off", name));
        write_mesh(&m, fmt, a, HS_OUTPUT_PARALLEL_AUTO);
        write_mesh(&m, fmt, b, HS_OUTPUT_PARALLEL_OFF);
        check_mesh(&m, a);
        check_mesh(&m, b);
        same_files(a, b);
        mesh_free(&m);
    }
}

static void test_netcdf(void **state)
{
#if HS_HAVE_NETCDF
    run_format(HS_FORMAT_NETCDF, "nc");
#else
    skip();
#endif
}

static void test_hdf5(void **state)
{
#if HS_HAVE_HDF5
    run_format(HS_FORMAT_HDF5, "h5");
#else
    skip();
#endif
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_netcdf),
    cmocka_unit_test_teardown(test_hdf5, test_tmp_cleanup),
};

TEST_MAIN("output_grids_mpi", tests)
