/* Station files from every rank's receivers and series written collectively: the same file at any rank count. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/compare.h"
#include "io/output.h"
#include "kernels/comm/comm.h"
#include "kernels/error.h"
#include "test_util.h"

#define NST 7
#define NREC 3

static double value(int r, int s) { return 1000.0 * r + 3.25 * s; }

static const char *path_for(const char *name)
{
    static char buf[2][512];
    static int k;
    const char *dir = getenv("HS_TEST_KEEP_OUTPUT");
    if (!dir || !*dir) return test_tmp_path(name);
    k ^= 1;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}

/* Station s belongs to rank (s * 3 + 1) % size (uneven, some ranks may own none); with
 * root_only, rank 0 gives them all (the gather-free reference). */
static void write_stations(hs_output_format fmt, const char *path, int root_only)
{
    hs_ctx *ctx = test_ctx();
    static const char *names[NST] = {"A", "B", "C", "D", "E", "F", "G"};
    double x[NST], y[NST];
    for (int s = 0; s < NST; s++) x[s] = 100.0 * s, y[s] = -2.0 * s;
    hs_output_desc d = {0};
    d.path = path;
    d.format = fmt;
    d.title = "receivers";
    d.history = "test_output_series_mpi";
    d.time_units = "seconds since 2000-01-01 00:00:00";
    hs_station_desc sd = {.dim_name = "receiver", .n = NST, .names = names, .x = x, .y = y};
    hs_writer *w;
    int v;
    TEST_OK(hs_writer_open(ctx, &d, &w));
    TEST_OK(hs_writer_def_stations(w, &sd));
    TEST_OK(hs_writer_def_station_var(w, "vx", "m s-1", "x velocity", NULL, HS_F64, &v));
    for (int r = 0; r < NREC; r++) {
        TEST_OK(hs_writer_begin_step(w, 0.1 * r));
        int64_t idx[NST];
        double val[NST];
        int n = 0;
        for (int s = NST - 1; s >= 0; s--)
            if (root_only ? ctx->rank == 0 : (s * 3 + 1) % ctx->size == ctx->rank) {
                idx[n] = s;
                val[n++] = value(r, s);
            }
        TEST_OK(hs_writer_put_stations(w, v, n, idx, val));
    }
    TEST_OK(hs_writer_close(w));
}

static void check_file(const char *path)
{
    if (test_ctx()->rank != 0) return;
    hs_reader *r;
    double got[NST * NREC];
    TEST_OK(hs_reader_open(path, &r));
    TEST_OK(hs_reader_read(r, "vx", got));
    for (int t = 0; t < NREC; t++)
        for (int s = 0; s < NST; s++) assert_true(got[t * NST + s] == value(t, s));
    TEST_OK(hs_reader_read(r, "receiver_x", got));
    for (int s = 0; s < NST; s++) assert_true(got[s] == 100.0 * s);
    hs_reader_close(r);
}

static void test_stations_from_every_rank(void **state)
{
    (void)state;
    hs_output_format f[2];
    const char *ext[2];
    int nf = 0;
#if HS_HAVE_NETCDF
    f[nf] = HS_FORMAT_NETCDF;
    ext[nf++] = "nc";
#endif
#if HS_HAVE_HDF5
    f[nf] = HS_FORMAT_HDF5;
    ext[nf++] = "h5";
#endif
    for (int i = 0; i < nf; i++) {
        char a[64], b[64];
        snprintf(a, sizeof a, "receivers_np.%s", ext[i]);
        snprintf(b, sizeof b, "receivers_root.%s", ext[i]);
        const char *pa = path_for(a);
        char keep[512];
        snprintf(keep, sizeof keep, "%s", pa);
        write_stations(f[i], keep, 0);
        const char *pb = path_for(b);
        write_stations(f[i], pb, 1);
        check_file(keep);
        if (test_ctx()->rank == 0) {
            hs_compare_result res;
            const char *vars[] = {"vx", "receiver_x", "receiver_y", "time"};
            for (int k = 0; k < 4; k++) {
                TEST_OK(hs_compare_files(keep, pb, vars[k], 0, &res));
                assert_int_equal(res.differing, 0);
            }
        }
    }
}

/* A station given by two ranks (or by none) fails on every rank, and the writer stays usable. */
static void test_station_ownership_errors(void **state)
{
    (void)state;
    hs_ctx *ctx = test_ctx();
#if HS_HAVE_NETCDF
    hs_output_format fmt = HS_FORMAT_NETCDF;
#elif HS_HAVE_HDF5
    hs_output_format fmt = HS_FORMAT_HDF5;
#else
    hs_output_format fmt = 0;
    skip();
#endif
    static const char *names[2] = {"a", "b"};
    double x[2] = {0, 1};
    hs_output_desc d = {0};
    d.path = test_tmp_path("bad_receivers.nc");
    d.format = fmt;
    d.time_units = "seconds since 2000-01-01 00:00:00";
    hs_station_desc sd = {.n = 2, .names = names, .x = x};
    hs_writer *w;
    int v;
    TEST_OK(hs_writer_open(ctx, &d, &w));
    TEST_OK(hs_writer_def_stations(w, &sd));
    TEST_OK(hs_writer_def_station_var(w, "u", "1", NULL, NULL, HS_F64, &v));
    TEST_OK(hs_writer_begin_step(w, 0));
    int64_t idx[2] = {0, 1};
    double val[2] = {1, 2};
    /* every rank gives both: duplicates as soon as there are two ranks */
    int rc = hs_writer_put_stations(w, v, 2, idx, val);
    assert_int_equal(rc, ctx->size > 1 ? HS_ERR_RUNTIME : HS_OK);
    hs_error_clear();
    TEST_OK(hs_writer_put_stations(w, v, ctx->rank == 0 ? 2 : 0, idx, val));
    TEST_OK(hs_writer_close(w));
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_stations_from_every_rank),
    cmocka_unit_test(test_station_ownership_errors),
};

TEST_MAIN("output_series_mpi", tests)
