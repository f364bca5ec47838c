/* The collective output path is the one taken where the parallel libraries are built in: no whole field on rank 0, collective writes done, errors alike. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/output.h"
#include "io/output_impl.h"
#include "kernels/comm/comm.h"
#include "test_util.h"

#define NX 8
#define NY 6

/* Rank r of p owns rows [NY r / p, NY (r + 1) / p) (empty ones at more ranks than rows). */
static void rows(int64_t off[3], int64_t cnt[3])
{
    hs_ctx *ctx = test_ctx();
    int64_t lo = (int64_t)NY * ctx->rank / ctx->size, hi = (int64_t)NY * (ctx->rank + 1) / ctx->size;
    off[0] = 0, cnt[0] = NX, off[1] = lo, cnt[1] = hi - lo, off[2] = 0, cnt[2] = 1;
}

static void desc2d(hs_output_desc *d, hs_output_format fmt, const char *path, int parallel, int deflate)
{
    memset(d, 0, sizeof *d);
    d->path = path;
    d->format = fmt;
    d->title = "collective";
    d->history = "test_output_collective";
    d->ndim = 2;
    d->dim_names[0] = "x", d->dim_names[1] = "y";
    d->n[0] = NX, d->n[1] = NY;
    d->time_units = "seconds since 2000-01-01 00:00:00";
    d->deflate_level = deflate;
    d->parallel = parallel;
}

static int built_parallel(hs_output_format fmt) { return fmt == HS_FORMAT_HDF5 ? HS_HAVE_HDF5_PARALLEL : HS_HAVE_NETCDF_PARALLEL; }

static int formats(hs_output_format *f, const char **ext)
{
    int n = 0;
#if HS_HAVE_NETCDF
    f[n] = HS_FORMAT_NETCDF, ext[n++] = "nc";
#endif
#if HS_HAVE_HDF5
    f[n] = HS_FORMAT_HDF5, ext[n++] = "h5";
#endif
    return n;
}

/* Every rank agrees that `cond` holds (an assertion that cannot pass on one rank and fail on another). */
static int all_ranks(int cond)
{
    int mine = cond != 0, all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, test_ctx()->comm);
    return all;
}

/* Three records by blocks: the collective file counts three collective writes (HDF5: the ones its
 * library reports as collective) and no rank assembled the grid; the gathered file did on rank 0. */
static void check_path(hs_output_format fmt, const char *ext, int parallel, int deflate)
{
    hs_ctx *ctx = test_ctx();
    char name[64];
    snprintf(name, sizeof name, "path_%d_%d.%s", parallel, deflate, ext);
    hs_output_desc d;
    desc2d(&d, fmt, test_tmp_path(name), parallel, deflate);
    hs_writer *w;
    int T;
    int64_t off[3], cnt[3];
    rows(off, cnt);
    double b[NX * NY];
    TEST_OK(hs_writer_open(ctx, &d, &w));
    TEST_OK(hs_writer_def_var(w, "T", "K", "t", NULL, HS_F64, 1, &T));
    for (int r = 0; r < 3; r++) {
        for (int i = 0; i < NX * NY; i++) b[i] = 1000.0 * r + i + NX * off[1];
        TEST_OK(hs_writer_begin_step(w, r));
        TEST_OK(hs_writer_put_block(w, T, off, cnt, b));
    }
    int coll = parallel == HS_OUTPUT_PARALLEL_AUTO && built_parallel(fmt);
    assert_true(all_ranks(hs_writer_parallel(w) == coll));
    if (coll) {
        assert_true(all_ranks(w->ncollective == 3));
        assert_true(all_ranks(w->gather == NULL && w->gather_size == 0)); /* no whole field anywhere */
    } else {
        assert_true(all_ranks(w->ncollective == 0));
        if (ctx->size > 1) assert_true(all_ranks(ctx->rank != 0 || w->gather_size == NX * NY * sizeof(double)));
    }
    TEST_OK(hs_writer_close(w));
    if (ctx->rank == 0) { /* and the values arrived */
        hs_reader *r;
        double got[NX * NY];
        TEST_OK(hs_reader_open(d.path, &r));
        TEST_OK(hs_reader_read_record(r, "T", 2, got));
        for (int i = 0; i < NX * NY; i++) assert_true(got[i] == 2000.0 + i);
        hs_reader_close(r);
    }
}

static void test_collective_taken(void **state)
{
    hs_output_format f[2];
    const char *ext[2];
    for (int i = 0, n = formats(f, ext); i < n; i++) {
        check_path(f[i], ext[i], HS_OUTPUT_PARALLEL_AUTO, 0);
        check_path(f[i], ext[i], HS_OUTPUT_PARALLEL_AUTO, 4); /* chunked + deflate: collective only */
        check_path(f[i], ext[i], HS_OUTPUT_PARALLEL_OFF, 0);
    }
}

/* Rank 0's choice decides for all (ranks that disagreed would wait in different calls). */
static void test_rank0_decides(void **state)
{
    hs_ctx *ctx = test_ctx();
    hs_output_format f[2];
    const char *ext[2];
    for (int i = 0, n = formats(f, ext); i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "decide.%s", ext[i]);
        hs_output_desc d;
        desc2d(&d, f[i], test_tmp_path(name), ctx->rank == 0 ? HS_OUTPUT_PARALLEL_AUTO : HS_OUTPUT_PARALLEL_OFF, 0);
        hs_writer *w;
        TEST_OK(hs_writer_open(ctx, &d, &w));
        assert_true(all_ranks(hs_writer_parallel(w) == built_parallel(f[i])));
        TEST_OK(hs_writer_close(w));
    }
}

/* A NaN in the last rank's block: the collective file reports the same point, on rank 0, as the
 * gathered one, every rank learns it, and the record is in the file. */
static void nonfinite_message(hs_output_format fmt, const char *path, int parallel, char *msg, size_t len)
{
    hs_ctx *ctx = test_ctx();
    hs_output_desc d;
    desc2d(&d, fmt, path, parallel, 0);
    hs_writer *w;
    int T;
    int64_t off[3], cnt[3];
    rows(off, cnt);
    double b[NX * NY];
    for (int i = 0; i < NX * NY; i++) b[i] = i;
    /* two bad points: the first one in the grid's order is named */
    if (ctx->rank == ctx->size - 1 && cnt[1] > 0) b[NX * (cnt[1] - 1) + 3] = NAN, b[NX * (cnt[1] - 1) + 5] = INFINITY;
    TEST_OK(hs_writer_open(ctx, &d, &w));
    TEST_OK(hs_writer_def_var(w, "T", "K", "t", NULL, HS_F64, 1, &T));
    TEST_OK(hs_writer_begin_step(w, 0.25));
    assert_int_equal(hs_writer_put_block(w, T, off, cnt, b), HS_ERR_RUNTIME);
    snprintf(msg, len, "%s", hs_error_message());
    hs_error_clear();
    assert_true(all_ranks(hs_writer_nonfinite(w) == 1));
    TEST_OK(hs_writer_close(w));
    if (ctx->rank == 0) {
        hs_reader *r;
        double got[NX * NY];
        TEST_OK(hs_reader_open(path, &r));
        TEST_OK(hs_reader_read_record(r, "T", 0, got));
        assert_true(isnan(got[NX * (NY - 1) + 3]) && isinf(got[NX * (NY - 1) + 5]) && got[0] == 0);
        hs_reader_close(r);
    }
}

static void test_nonfinite_alike(void **state)
{
    hs_ctx *ctx = test_ctx();
    hs_output_format f[2];
    const char *ext[2];
    for (int i = 0, n = formats(f, ext); i < n; i++) {
        char name[32], coll[2048], gath[2048];
        snprintf(name, sizeof name, "nan.%s", ext[i]);
        const char *path = test_tmp_path(name);
        char p[512];
        snprintf(p, sizeof p, "%s", path);
        nonfinite_message(f[i], p, HS_OUTPUT_PARALLEL_AUTO, coll, sizeof coll);
        nonfinite_message(f[i], p, HS_OUTPUT_PARALLEL_OFF, gath, sizeof gath);
        /* the message's first line (the trace below it names source lines, which differ) */
        char *e1 = strchr(coll, '\n'), *e2 = strchr(gath, '\n');
        if (e1) *e1 = 0;
        if (e2) *e2 = 0;
        if (ctx->rank == 0) {
            assert_non_null(strstr(coll, "T is nan at x = 3, y = 5 (index from 0) in record 0, t = 0.25"));
            assert_string_equal(coll, gath);
        } else {
            assert_non_null(strstr(coll, "failed on rank 0"));
        }
    }
}

/* Discarding a collective file removes PATH.partial and leaves no file behind; every rank returns. */
static void test_discard(void **state)
{
    hs_ctx *ctx = test_ctx();
    hs_output_format f[2];
    const char *ext[2];
    for (int i = 0, n = formats(f, ext); i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "gone.%s", ext[i]);
        hs_output_desc d;
        desc2d(&d, f[i], test_tmp_path(name), HS_OUTPUT_PARALLEL_AUTO, 0);
        char partial[600];
        snprintf(partial, sizeof partial, "%s.partial", d.path);
        hs_writer *w;
        int T;
        TEST_OK(hs_writer_open(ctx, &d, &w));
        TEST_OK(hs_writer_def_var(w, "T", "K", "t", NULL, HS_F64, 0, &T));
        assert_true(all_ranks(test_file_exists(partial)));
        hs_writer_discard(w);
        MPI_Barrier(ctx->comm);
        assert_true(all_ranks(!test_file_exists(partial) && !test_file_exists(d.path)));
    }
}

/* A file name too long for the MPI library's MPI-IO (Open MPI 4) is written through rank 0, and
 * written right (the other tests' short names are collective). */
static void test_long_name(void **state)
{
    hs_ctx *ctx = test_ctx();
    hs_output_format f[2];
    const char *ext[2];
    for (int i = 0, n = formats(f, ext); i < n; i++) {
        char name[240];
        memset(name, 'n', 220);
        snprintf(name + 220, sizeof name - 220, ".%s", ext[i]);
        char path[1024];
        snprintf(path, sizeof path, "%s", test_tmp_path(name));
        int too_long = strlen(path) + strlen(".partial") > HS_MPIIO_NAME_MAX;
        assert_int_equal(hs_io_mpiio_name_too_long("short.partial"), 0);
        hs_output_desc d;
        desc2d(&d, f[i], path, HS_OUTPUT_PARALLEL_AUTO, 0);
        hs_writer *w;
        int T;
        int64_t off[3], cnt[3];
        rows(off, cnt);
        double b[NX * NY];
        for (int k = 0; k < NX * NY; k++) b[k] = k + NX * off[1];
        TEST_OK(hs_writer_open(ctx, &d, &w));
#if defined(OPEN_MPI) && OMPI_MAJOR_VERSION < 5
        assert_true(too_long);
        assert_true(all_ranks(hs_writer_parallel(w) == 0));
#else
        assert_true(all_ranks(hs_writer_parallel(w) == built_parallel(f[i])));
        (void)too_long;
#endif
        TEST_OK(hs_writer_def_var(w, "T", "K", "t", NULL, HS_F64, 0, &T));
        TEST_OK(hs_writer_put_block(w, T, off, cnt, b));
        TEST_OK(hs_writer_close(w));
        if (ctx->rank == 0) {
            hs_reader *r;
            double got[NX * NY];
            TEST_OK(hs_reader_open(path, &r));
            TEST_OK(hs_reader_read(r, "T", got));
            for (int k = 0; k < NX * NY; k++) assert_true(got[k] == k);
            hs_reader_close(r);
        }
    }
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_long_name),
    cmocka_unit_test(test_collective_taken),
    cmocka_unit_test(test_rank0_decides),
    cmocka_unit_test(test_nonfinite_alike),
    cmocka_unit_test_teardown(test_discard, test_tmp_cleanup),
};

int main(void)
{
    if (!HS_HAVE_HDF5_PARALLEL && !HS_HAVE_NETCDF_PARALLEL) {
        hs_ctx *ctx = test_ctx();
        if (ctx->rank == 0) printf("SKIP this build has neither parallel HDF5 nor parallel NetCDF (features hdf5_parallel, netcdf_parallel)\n");
        test_ctx_finish();
        return 77;
    }
    return test_run_group("output_collective", tests, sizeof tests / sizeof tests[0]);
}
