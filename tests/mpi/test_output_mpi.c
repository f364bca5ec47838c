/* Parallel output: put_block from uneven decompositions gives the same file as rank 0 writing the whole array. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "io/output.h"
#include "kernels/comm/comm.h"
#include "test_util.h"

typedef struct {
    int ndim;
    int64_t n[3];
    int split;            /* the dimension cut into uneven slabs */
    int64_t off[3], cnt[3];
    double *coords[3];
    hs_output_desc desc;
} layout_t;

/* Rank r of p gets a slab of weight r + 1 (so blocks differ, and some may be empty). */
static void layout_init(layout_t *l, hs_output_format fmt, const char *path, int ndim, const int64_t *n, int split)
{
    static const char *names[3] = {"x", "y", "z"};
    hs_ctx *ctx = test_ctx();
    memset(l, 0, sizeof *l);
    l->ndim = ndim;
    l->split = split;
    int64_t wsum = (int64_t)ctx->size * (ctx->size + 1) / 2, before = (int64_t)ctx->rank * (ctx->rank + 1) / 2;
    for (int d = 0; d < ndim; d++) {
        l->n[d] = n[d];
        l->off[d] = 0;
        l->cnt[d] = n[d];
        l->coords[d] = malloc((size_t)n[d] * sizeof(double));
        for (int64_t i = 0; i < n[d]; i++) l->coords[d][i] = 10.0 * d + 0.1 * (double)i;
        l->desc.dim_names[d] = names[d];
        l->desc.n[d] = n[d];
        l->desc.coords[d] = l->coords[d];
        l->desc.coord_units[d] = "m";
    }
    int64_t lo = n[split] * before / wsum, hi = n[split] * (before + ctx->rank + 1) / wsum;
    l->off[split] = lo;
    l->cnt[split] = hi - lo;
    l->desc.path = path;
    l->desc.format = fmt;
    l->desc.title = "mpi output test";
    l->desc.history = "test_output_mpi";
    l->desc.ndim = ndim;
    l->desc.time_units = "seconds since 1970-01-01";
}

static void layout_free(layout_t *l)
{
    for (int d = 0; d < l->ndim; d++) free(l->coords[d]);
}

static size_t total(const layout_t *l)
{
    size_t s = 1;
    for (int d = 0; d < l->ndim; d++) s *= (size_t)l->n[d];
    return s;
}

static size_t local_size(const layout_t *l)
{
    size_t s = 1;
    for (int d = 0; d < l->ndim; d++) s *= (size_t)l->cnt[d];
    return s;
}

/* The global field of a record (same on every rank) and this rank's block cut out of it. */
static void global_field(const layout_t *l, int rec, double *g) { test_fill_f64(g, total(l), 500 + rec, -1, 1); }

static void cut_block(const layout_t *l, const double *g, double *b)
{
    int64_t n0 = l->n[0], n1 = l->ndim > 1 ? l->n[1] : 1;
    int64_t c0 = l->cnt[0], c1 = l->ndim > 1 ? l->cnt[1] : 1, c2 = l->ndim > 2 ? l->cnt[2] : 1;
    int64_t o0 = l->off[0], o1 = l->ndim > 1 ? l->off[1] : 0, o2 = l->ndim > 2 ? l->off[2] : 0;
    size_t k = 0;
    for (int64_t z = 0; z < c2; z++)
        for (int64_t y = 0; y < c1; y++)
            for (int64_t x = 0; x < c0; x++) b[k++] = g[((z + o2) * n1 + (y + o1)) * n0 + (x + o0)];
}

/* Write 3 records of T (f64), q (f32) and a static field, by blocks or by rank 0 alone. */
static void write_file(const layout_t *l, int by_blocks)
{
    hs_ctx *ctx = test_ctx();
    hs_writer *w;
    int T, q, m;
    size_t n = total(l), nl = local_size(l);
    double *g = malloc(n * sizeof *g), *b = malloc((nl ? nl : 1) * sizeof *b);
    float *gf = malloc(n * sizeof *gf), *bf = malloc((nl ? nl : 1) * sizeof *bf);
    TEST_OK(hs_writer_open(ctx, &l->desc, &w));
    TEST_OK(hs_writer_def_var(w, "T", "K", "temperature", NULL, HS_F64, 1, &T));
    TEST_OK(hs_writer_def_var(w, "q", "1", "tracer", NULL, HS_F32, 1, &q));
    TEST_OK(hs_writer_def_var(w, "m", "1", "static field", NULL, HS_F64, 0, &m));
    global_field(l, 99, g);
    cut_block(l, g, b);
    TEST_OK(by_blocks ? hs_writer_put_block(w, m, l->off, l->cnt, b) : hs_writer_put(w, m, ctx->rank == 0 ? g : NULL));
    for (int r = 0; r < 3; r++) {
        TEST_OK(hs_writer_begin_step(w, 0.5 * r));
        global_field(l, r, g);
        cut_block(l, g, b);
        TEST_OK(by_blocks ? hs_writer_put_block(w, T, l->off, l->cnt, b) : hs_writer_put(w, T, ctx->rank == 0 ? g : NULL));
        for (size_t i = 0; i < n; i++) gf[i] = (float)g[i];
        for (size_t i = 0; i < nl; i++) bf[i] = (float)b[i];
        TEST_OK(by_blocks ? hs_writer_put_block(w, q, l->off, l->cnt, bf) : hs_writer_put(w, q, ctx->rank == 0 ? gf : NULL));
    }
    TEST_OK(hs_writer_close(w));
    free(g);
    free(b);
    free(gf);
    free(bf);
}

/* Rank 0: both files hold the same values, and those are the global fields. */
static void compare_files(const layout_t *l, const char *a, const char *b)
{
    if (test_ctx()->rank != 0) return;
    static const char *vars[] = {"T", "q", "m", "time", "x"};
    size_t n = total(l) * 3;
    double *va = malloc(n * sizeof *va), *vb = malloc(n * sizeof *vb), *g = malloc(total(l) * sizeof *g);
    hs_reader *ra, *rb;
    TEST_OK(hs_reader_open(a, &ra));
    TEST_OK(hs_reader_open(b, &rb));
    for (int i = 0; i < 5; i++) {
        int64_t sa[8], sb[8];
        int ka, kb;
        TEST_OK(hs_reader_var_shape(ra, vars[i], sa, &ka));
        TEST_OK(hs_reader_var_shape(rb, vars[i], sb, &kb));
        assert_int_equal(ka, kb);
        assert_memory_equal(sa, sb, (size_t)ka * sizeof *sa);
        size_t cnt = 1;
        for (int k = 0; k < ka; k++) cnt *= (size_t)sa[k];
        TEST_OK(hs_reader_read(ra, vars[i], va));
        TEST_OK(hs_reader_read(rb, vars[i], vb));
        assert_memory_equal(va, vb, cnt * sizeof *va);
    }
    for (int r = 0; r < 3; r++) {
        global_field(l, r, g);
        TEST_OK(hs_reader_read_record(ra, "T", r, va));
        assert_memory_equal(va, g, total(l) * sizeof *g);
    }
    hs_reader_close(ra);
    hs_reader_close(rb);
    free(va);
    free(vb);
    free(g);
}

static void run_case(int ndim, int64_t nx, int64_t ny, int64_t nz, int split)
{
    int64_t n[3] = {nx, ny, nz};
    hs_output_format fmts[2];
    const char *ext[2];
    int nf = 0;
#if HS_HAVE_NETCDF
    fmts[nf] = HS_FORMAT_NETCDF;
    ext[nf++] = "nc";
#endif
#if HS_HAVE_HDF5
    fmts[nf] = HS_FORMAT_HDF5;
    ext[nf++] = "h5";
#endif
    for (int f = 0; f < nf; f++) {
        char na[64], nb[64];
        snprintf(na, sizeof na, "blocks_%d_%d.%s", ndim, split, ext[f]);
        snprintf(nb, sizeof nb, "whole_%d_%d.%s", ndim, split, ext[f]);
        layout_t la, lb;
        layout_init(&la, fmts[f], test_tmp_path(na), ndim, n, split);
        layout_init(&lb, fmts[f], test_tmp_path(nb), ndim, n, split);
        write_file(&la, 1);
        write_file(&lb, 0);
        compare_files(&la, la.desc.path, lb.desc.path);
        layout_free(&la);
        layout_free(&lb);
    }
}

static void test_3d_split_z(void **state) { run_case(3, 6, 5, 7, 2); }
static void test_3d_split_y(void **state) { run_case(3, 4, 9, 3, 1); }
static void test_2d_split_y(void **state) { run_case(2, 9, 8, 1, 1); }
static void test_1d_split_x(void **state) { run_case(1, 13, 1, 1, 0); }

/* A block outside the grid is a runtime error on every rank, and nothing hangs. */
static void test_bad_block(void **state)
{
#if HS_HAVE_HDF5
    hs_ctx *ctx = test_ctx();
    int64_t n[3] = {4, 6, 1};
    layout_t l;
    layout_init(&l, HS_FORMAT_HDF5, test_tmp_path("bad.h5"), 2, n, 1);
    hs_writer *w;
    int T;
    TEST_OK(hs_writer_open(ctx, &l.desc, &w));
    TEST_OK(hs_writer_def_var(w, "T", "K", "t", NULL, HS_F64, 1, &T));
    TEST_OK(hs_writer_begin_step(w, 0));
    double *b = calloc(local_size(&l) + 1, sizeof *b);
    if (ctx->rank == ctx->size - 1) l.off[1] += 1; /* the last block sticks out */
    assert_int_equal(hs_writer_put_block(w, T, l.off, l.cnt, b), HS_ERR_RUNTIME);
    hs_error_clear();
    free(b);
    hs_writer_discard(w);
    MPI_Barrier(ctx->comm);
    layout_free(&l);
#else
    skip();
#endif
}

/* Suspend and resume under MPI: every rank learns the variable ids; later records are dropped. */
static void test_resume_blocks(void **state)
{
    hs_ctx *ctx = test_ctx();
    int64_t n[3] = {5, 4, 6};
    hs_output_format fmts[2];
    const char *ext[2];
    int nf = 0;
#if HS_HAVE_NETCDF
    fmts[nf] = HS_FORMAT_NETCDF;
    ext[nf++] = "nc";
#endif
#if HS_HAVE_HDF5
    fmts[nf] = HS_FORMAT_HDF5;
    ext[nf++] = "h5";
#endif
    for (int f = 0; f < nf; f++) {
        char name[64];
        snprintf(name, sizeof name, "resume.%s", ext[f]);
        layout_t l;
        layout_init(&l, fmts[f], test_tmp_path(name), 3, n, 2);
        size_t nt = total(&l), nl = local_size(&l);
        double *g = malloc(nt * sizeof *g), *b = malloc((nl ? nl : 1) * sizeof *b);
        hs_writer *w;
        int T, T2;
        TEST_OK(hs_writer_open(ctx, &l.desc, &w));
        TEST_OK(hs_writer_def_var(w, "T", "K", "t", NULL, HS_F64, 1, &T));
        for (int r = 0; r < 3; r++) {
            TEST_OK(hs_writer_begin_step(w, r));
            global_field(&l, r, g);
            cut_block(&l, g, b);
            TEST_OK(hs_writer_put_block(w, T, l.off, l.cnt, b));
        }
        TEST_OK(hs_writer_suspend(w));
        TEST_OK(hs_writer_resume(ctx, &l.desc, 1.0, &w));
        TEST_OK(hs_writer_def_var(w, "T", "K", "t", NULL, HS_F64, 1, &T2));
        assert_int_equal(T2, T);
        TEST_OK(hs_writer_begin_step(w, 1.5));
        global_field(&l, 5, g);
        cut_block(&l, g, b);
        TEST_OK(hs_writer_put_block(w, T, l.off, l.cnt, b));
        TEST_OK(hs_writer_close(w));
        if (ctx->rank == 0) {
            hs_reader *r;
            double t[3], *got = malloc(nt * sizeof *got);
            int64_t shape[8];
            int rank;
            TEST_OK(hs_reader_open(l.desc.path, &r));
            TEST_OK(hs_reader_var_shape(r, "time", shape, &rank));
            assert_int_equal(shape[0], 3);
            TEST_OK(hs_reader_read(r, "time", t));
            assert_true(t[0] == 0 && t[1] == 1 && t[2] == 1.5);
            TEST_OK(hs_reader_read_record(r, "T", 2, got));
            assert_memory_equal(got, g, nt * sizeof *g);
            global_field(&l, 1, g);
            TEST_OK(hs_reader_read_record(r, "T", 1, got));
            assert_memory_equal(got, g, nt * sizeof *g);
            hs_reader_close(r);
            free(got);
        }
        free(g);
        free(b);
        layout_free(&l);
    }
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_3d_split_z),
    cmocka_unit_test(test_3d_split_y),
    cmocka_unit_test(test_2d_split_y),
    cmocka_unit_test(test_1d_split_x),
    cmocka_unit_test(test_bad_block),
    cmocka_unit_test_teardown(test_resume_blocks, test_tmp_cleanup),
};

TEST_MAIN("output_mpi", tests)
