/* The collective and the gathered output path write the same file: every variable, at any rank count, equal to the exact fields. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "io/compare.h"
#include "io/output.h"
#include "kernels/comm/comm.h"
#include "test_util.h"

/* A 3-D grid cut into uneven z slabs (rank r has weight r + 1: at 4 ranks rank 0's slab is empty),
 * x and y in metres (so the file has a cell_area), z with explicit cell edges. */
#define NX 6
#define NY 5
#define NZ 7
#define NPLANE (NX * NY * NZ)

typedef struct {
    int64_t off[3], cnt[3];
    double x[NX], y[NY], z[NZ], ze[NZ + 1];
} grid_t;

static void grid_init(grid_t *g)
{
    hs_ctx *ctx = test_ctx();
    int64_t wsum = (int64_t)ctx->size * (ctx->size + 1) / 2, before = (int64_t)ctx->rank * (ctx->rank + 1) / 2;
    int64_t lo = NZ * before / wsum, hi = NZ * (before + ctx->rank + 1) / wsum;
    int64_t off[3] = {0, 0, lo}, cnt[3] = {NX, NY, hi - lo};
    memcpy(g->off, off, sizeof off);
    memcpy(g->cnt, cnt, sizeof cnt);
    for (int i = 0; i < NX; i++) g->x[i] = 0.25 * i;
    for (int i = 0; i < NY; i++) g->y[i] = -1.0 + 0.5 * i;
    for (int i = 0; i <= NZ; i++) g->ze[i] = (double)(i * i) / NZ;
    for (int i = 0; i < NZ; i++) g->z[i] = 0.5 * (g->ze[i] + g->ze[i + 1]);
}

/* The exact field of a record: seeded values (the same at every rank count). */
static void field(int seed, double *f) { test_fill_f64(f, NPLANE, 900 + (uint64_t)seed, -10, 10); }

static size_t local_size(const grid_t *g) { return (size_t)(g->cnt[0] * g->cnt[1] * g->cnt[2]); }

static void cut(const grid_t *g, const double *f, double *b)
{
    size_t k = 0;
    for (int64_t z = g->off[2]; z < g->off[2] + g->cnt[2]; z++)
        for (int64_t y = 0; y < NY; y++)
            for (int64_t x = 0; x < NX; x++) b[k++] = f[(z * NY + y) * NX + x];
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
    /* kept for tests/cli/test_output_parallel.sh: DIR/MODE/NAME, the same file name in both folders */
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, mode);
    if (test_ctx()->rank == 0) mkdir(buf[k], 0755);
    MPI_Barrier(test_ctx()->comm);
    snprintf(buf[k], sizeof buf[k], "%s/%s/%s", dir, mode, name);
    return buf[k];
}

static void desc_init(hs_output_desc *d, const grid_t *g, hs_output_format fmt, const char *path, int parallel, int deflate)
{
    static const char *names[3] = {"x", "y", "z"};
    int root = test_ctx()->rank == 0;
    memset(d, 0, sizeof *d);
    d->path = path;
    d->format = fmt;
    d->title = "output path test";
    d->history = "test_output_paths";
    d->params_ini = "[run]\nsolver = none\n";
    d->ndim = 3;
    for (int k = 0; k < 3; k++) {
        d->dim_names[k] = names[k];
        d->coord_units[k] = "m";
    }
    d->n[0] = NX, d->n[1] = NY, d->n[2] = NZ;
    /* coordinates and edges on rank 0 only: the documented minimum */
    d->coords[0] = root ? g->x : NULL;
    d->coords[1] = root ? g->y : NULL;
    d->coords[2] = root ? g->z : NULL;
    d->edges[2] = root ? g->ze : NULL;
    d->time_units = "seconds since 2000-01-01 00:00:00";
    d->deflate_level = deflate;
    d->parallel = parallel;
}

typedef struct { int T, q, m, mask, energy; } ids_t;

static void define(hs_writer *w, ids_t *v)
{
    TEST_OK(hs_writer_def_var(w, "T", "K", "temperature", "air_temperature", HS_F64, 1, &v->T));
    TEST_OK(hs_writer_def_var(w, "q", "1", "tracer", NULL, HS_F32, 1, &v->q));
    TEST_OK(hs_writer_def_var(w, "m", "1", "static field by blocks", NULL, HS_F64, 0, &v->m));
    TEST_OK(hs_writer_def_var(w, "mask", "1", "static field from rank 0", NULL, HS_F64, 0, &v->mask));
    TEST_OK(hs_writer_def_series(w, "energy", "J", "total energy", NULL, &v->energy));
}

/* Record r: T and q by blocks, the energy series from rank 0. */
static void record(hs_writer *w, const grid_t *g, const ids_t *v, int r, double t)
{
    double *f = malloc(NPLANE * sizeof *f), *b = malloc((local_size(g) + 1) * sizeof *b);
    float *bf = malloc((local_size(g) + 1) * sizeof *bf);
    TEST_OK(hs_writer_begin_step(w, t));
    field(r, f);
    cut(g, f, b);
    for (size_t i = 0; i < local_size(g); i++) bf[i] = (float)b[i];
    TEST_OK(hs_writer_put_block(w, v->T, g->off, g->cnt, b));
    TEST_OK(hs_writer_put_block(w, v->q, g->off, g->cnt, bf));
    TEST_OK(hs_writer_put_scalar(w, v->energy, 100.0 + r));
    free(f);
    free(b);
    free(bf);
}

/* Three records, a sync, a suspend and a resume that drops the third, one more record (r = 7). */
static void write_file(hs_output_format fmt, const char *path, int parallel, int deflate)
{
    hs_ctx *ctx = test_ctx();
    grid_t g;
    grid_init(&g);
    hs_output_desc d;
    desc_init(&d, &g, fmt, path, parallel, deflate);
    hs_writer *w;
    ids_t v;
    TEST_OK(hs_writer_open(ctx, &d, &w));
    assert_int_equal(hs_writer_parallel(w), parallel == HS_OUTPUT_PARALLEL_AUTO &&
                                                (fmt == HS_FORMAT_HDF5 ? HS_HAVE_HDF5_PARALLEL : HS_HAVE_NETCDF_PARALLEL));
    define(w, &v);
    TEST_OK(hs_writer_attr_text(w, "institution", "hpcsim tests"));
    TEST_OK(hs_writer_attr_real(w, "answer", 42.0));
    double *f = malloc(NPLANE * sizeof *f), *b = malloc((local_size(&g) + 1) * sizeof *b);
    field(50, f);
    cut(&g, f, b);
    TEST_OK(hs_writer_put_block(w, v.m, g.off, g.cnt, b));
    field(51, f);
    TEST_OK(hs_writer_put(w, v.mask, ctx->rank == 0 ? f : NULL));
    for (int r = 0; r < 3; r++) {
        record(w, &g, &v, r, 0.5 * r);
        if (r == 1) TEST_OK(hs_writer_sync(w));
    }
    TEST_OK(hs_writer_suspend(w));
    TEST_OK(hs_writer_resume(ctx, &d, 0.5, &w));
    assert_int_equal(hs_writer_records(w), 2);
    ids_t v2;
    define(w, &v2);
    assert_memory_equal(&v, &v2, sizeof v);
    record(w, &g, &v, 7, 2.0);
    TEST_OK(hs_writer_close(w));
    free(f);
    free(b);
}

/* Rank 0: the file holds the exact fields and times. */
static void check_exact(const char *path)
{
    if (test_ctx()->rank != 0) return;
    hs_reader *r;
    double *got = malloc(NPLANE * sizeof *got), *want = malloc(NPLANE * sizeof *want), t[3], e[3];
    TEST_OK(hs_reader_open(path, &r));
    static const int recs[3] = {0, 1, 7};
    for (int k = 0; k < 3; k++) {
        field(recs[k], want);
        TEST_OK(hs_reader_read_record(r, "T", k, got));
        assert_memory_equal(got, want, NPLANE * sizeof *got);
        TEST_OK(hs_reader_read_record(r, "q", k, got));
        for (int i = 0; i < NPLANE; i++) assert_true(got[i] == (double)(float)want[i]);
    }
    field(50, want);
    TEST_OK(hs_reader_read(r, "m", got));
    assert_memory_equal(got, want, NPLANE * sizeof *got);
    field(51, want);
    TEST_OK(hs_reader_read(r, "mask", got));
    assert_memory_equal(got, want, NPLANE * sizeof *got);
    TEST_OK(hs_reader_read(r, "time", t));
    TEST_OK(hs_reader_read(r, "energy", e));
    assert_true(t[0] == 0 && t[1] == 0.5 && t[2] == 2.0);
    assert_true(e[0] == 100 && e[1] == 101 && e[2] == 107);
    grid_t g;
    grid_init(&g);
    TEST_OK(hs_reader_read(r, "z", got));
    assert_memory_equal(got, g.z, sizeof g.z);
    hs_reader_close(r);
    free(got);
    free(want);
}

TEST_MAYBE_UNUSED static void run_format(hs_output_format fmt, const char *ext, int deflate)
{
    char name[64];
    snprintf(name, sizeof name, "grid%s.%s", deflate ? "_deflate" : "", ext);
    char a[512], b[512];
    snprintf(a, sizeof a, "%s", out_path("auto", name));
    snprintf(b, sizeof b, "%s", out_path("off", name));
    write_file(fmt, a, HS_OUTPUT_PARALLEL_AUTO, deflate);
    write_file(fmt, b, HS_OUTPUT_PARALLEL_OFF, deflate);
    check_exact(a);
    check_exact(b);
    if (test_ctx()->rank == 0) {
        static const char *vars[] = {"T", "q", "m", "mask", "energy", "time", "x", "y", "z", "x_bnds", "z_bnds", "cell_area"};
        for (size_t k = 0; k < sizeof vars / sizeof vars[0]; k++) {
            hs_compare_result res;
            TEST_OK(hs_compare_files(a, b, vars[k], 0, &res));
            if (res.differing != 0) fail_msg("%s: %s differs between the two paths", name, vars[k]);
        }
    }
}

static void test_netcdf(void **state)
{
#if HS_HAVE_NETCDF
    run_format(HS_FORMAT_NETCDF, "nc", 0);
    run_format(HS_FORMAT_NETCDF, "nc", 3);
#else
    skip();
#endif
}

static void test_hdf5(void **state)
{
#if HS_HAVE_HDF5
    run_format(HS_FORMAT_HDF5, "h5", 0);
    run_format(HS_FORMAT_HDF5, "h5", 3);
#else
    skip();
#endif
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_netcdf),
    cmocka_unit_test_teardown(test_hdf5, test_tmp_cleanup),
};

TEST_MAIN("output_paths", tests)
