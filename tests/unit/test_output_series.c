/* Scalar time series (dims time only, beside a grid or alone) and CF timeSeries station files, both formats. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/output.h"
#include "kernels/error.h"
#include "test_util.h"

static int formats(hs_output_format *f, const char **ext)
{
    int n = 0;
#if HS_HAVE_NETCDF
    f[n] = HS_FORMAT_NETCDF;
    ext[n++] = "nc";
#endif
#if HS_HAVE_HDF5
    f[n] = HS_FORMAT_HDF5;
    ext[n++] = "h5";
#endif
    return n;
}

/* The file's directory: HS_TEST_KEEP_OUTPUT (the CLI checks read the files) or the test's tmp dir. */
static const char *out_path(const char *name)
{
    static char buf[4][512];
    static int k;
    const char *dir = getenv("HS_TEST_KEEP_OUTPUT");
    if (!dir || !*dir) return test_tmp_path(name);
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}

static double energy(int r) { return 1.5 + 0.25 * r; }
static double mass(int r) { return 10.0 - 0.125 * r * r; }
static double rec_time(int r) { return 0.5 * r; }

static void read_all(const char *path, const char *name, int64_t want_len, double *out)
{
    hs_reader *r;
    int64_t shape[8];
    int rank;
    TEST_OK(hs_reader_open(path, &r));
    TEST_OK(hs_reader_var_shape(r, name, shape, &rank));
    assert_int_equal(rank, 1);
    assert_int_equal(shape[0], want_len);
    TEST_OK(hs_reader_read(r, name, out));
    hs_reader_close(r);
}

/* A 2-D grid with a field T and two series energy, mass over the same time axis. */
static void write_grid_with_series(hs_output_format fmt, const char *path, int nrec)
{
    double x[4] = {0.5, 1.5, 2.5, 3.5}, y[3] = {0.5, 1.5, 2.5};
    hs_output_desc d = {0};
    d.path = path;
    d.format = fmt;
    d.title = "grid and series";
    d.history = "test_output_series";
    d.ndim = 2;
    d.dim_names[0] = "x";
    d.dim_names[1] = "y";
    d.n[0] = 4;
    d.n[1] = 3;
    d.coords[0] = x;
    d.coords[1] = y;
    d.coord_units[0] = d.coord_units[1] = "m";
    d.time_units = "seconds since 2000-01-01 00:00:00";
    hs_writer *w;
    int T, e, m;
    TEST_OK(hs_writer_open(test_ctx(), &d, &w));
    TEST_OK(hs_writer_def_var(w, "T", "K", "temperature", "air_temperature", HS_F64, 1, &T));
    TEST_OK(hs_writer_def_series(w, "energy", "J", "total energy", NULL, &e));
    TEST_OK(hs_writer_def_series(w, "mass", "kg", "total mass", NULL, &m));
    double f[12];
    for (int r = 0; r < nrec; r++) {
        for (int i = 0; i < 12; i++) f[i] = 300 + r + 0.01 * i;
        TEST_OK(hs_writer_begin_step(w, rec_time(r)));
        TEST_OK(hs_writer_put(w, T, f));
        TEST_OK(hs_writer_put_scalar(w, e, energy(r)));
        TEST_OK(hs_writer_put_scalar(w, m, mass(r)));
    }
    /* a series is not a grid variable, nor a grid variable a series */
    int64_t off[3] = {0}, cnt[3] = {4, 3, 1};
    assert_int_equal(hs_writer_put_block(w, e, off, cnt, f), HS_ERR_RUNTIME);
    hs_error_clear();
    assert_int_equal(hs_writer_put_scalar(w, T, 1.0), HS_ERR_RUNTIME);
    hs_error_clear();
    TEST_OK(hs_writer_close(w));
}

static void check_series(const char *path, int nrec)
{
    double got[16];
    read_all(path, "energy", nrec, got);
    for (int r = 0; r < nrec; r++) assert_true(got[r] == energy(r));
    read_all(path, "mass", nrec, got);
    for (int r = 0; r < nrec; r++) assert_true(got[r] == mass(r));
    read_all(path, "time", nrec, got);
    for (int r = 0; r < nrec; r++) assert_true(got[r] == rec_time(r));
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *s = calloc((size_t)n + 1, 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) s[0] = 0;
    fclose(f);
    return s;
}

static void test_series_beside_grid(void **state)
{
    (void)state;
    hs_output_format f[2];
    const char *ext[2];
    for (int i = 0, nf = formats(f, ext); i < nf; i++) {
        char name[64];
        snprintf(name, sizeof name, "grid_series.%s", ext[i]);
        const char *p = out_path(name);
        write_grid_with_series(f[i], p, 3);
        check_series(p, 3);
        hs_reader *r;
        int64_t shape[8];
        int rank;
        TEST_OK(hs_reader_open(p, &r));
        TEST_OK(hs_reader_var_shape(r, "T", shape, &rank));
        assert_int_equal(rank, 3);
        assert_int_equal(shape[0], 3);
        assert_int_equal(shape[1], 3);
        assert_int_equal(shape[2], 4);
        hs_reader_close(r);
        if (f[i] == HS_FORMAT_HDF5) { /* the XDMF companion shows the grid, not the series */
            char xmf[600];
            snprintf(xmf, sizeof xmf, "%.*s.xmf", (int)(strlen(p) - 3), p);
            char *s = slurp(xmf);
            assert_non_null(s);
            assert_non_null(strstr(s, "Name=\"T\""));
            assert_null(strstr(s, "energy"));
            free(s);
        }
    }
}

static void test_series_alone(void **state)
{
    (void)state;
    hs_output_format f[2];
    const char *ext[2];
    for (int i = 0, nf = formats(f, ext); i < nf; i++) {
        char name[64];
        snprintf(name, sizeof name, "series.%s", ext[i]);
        const char *p = out_path(name);
        hs_output_desc d = {0};
        d.path = p;
        d.format = f[i];
        d.title = "diagnostics";
        d.history = "test_output_series";
        d.time_units = "seconds since 2000-01-01 00:00:00";
        hs_writer *w;
        int e, m;
        TEST_OK(hs_writer_open(test_ctx(), &d, &w));
        TEST_OK(hs_writer_def_series(w, "energy", "J", "total energy", NULL, &e));
        TEST_OK(hs_writer_def_series(w, "mass", "kg", "total mass", NULL, &m));
        for (int r = 0; r < 5; r++) {
            TEST_OK(hs_writer_begin_step(w, rec_time(r)));
            TEST_OK(hs_writer_put_scalar(w, e, energy(r)));
            TEST_OK(hs_writer_put_scalar(w, m, mass(r)));
        }
        TEST_OK(hs_writer_close(w));
        check_series(p, 5);
    }
}

/* A series survives suspend and resume: later records dropped, ids kept. */
static void test_series_resume(void **state)
{
    (void)state;
    hs_output_format f[2];
    const char *ext[2];
    for (int i = 0, nf = formats(f, ext); i < nf; i++) {
        char name[64];
        snprintf(name, sizeof name, "resume_series.%s", ext[i]);
        const char *p = test_tmp_path(name);
        write_grid_with_series(f[i], p, 4);
        double x[4] = {0.5, 1.5, 2.5, 3.5}, y[3] = {0.5, 1.5, 2.5};
        hs_output_desc d = {0};
        d.path = p;
        d.format = f[i];
        d.ndim = 2;
        d.dim_names[0] = "x";
        d.dim_names[1] = "y";
        d.n[0] = 4;
        d.n[1] = 3;
        d.coords[0] = x;
        d.coords[1] = y;
        d.coord_units[0] = d.coord_units[1] = "m";
        d.time_units = "seconds since 2000-01-01 00:00:00";
        hs_writer *w;
        int T, e, m;
        TEST_OK(hs_writer_resume(test_ctx(), &d, rec_time(1), &w));
        assert_int_equal(hs_writer_records(w), 2);
        TEST_OK(hs_writer_def_var(w, "T", "K", "temperature", "air_temperature", HS_F64, 1, &T));
        TEST_OK(hs_writer_def_series(w, "energy", "J", "total energy", NULL, &e));
        TEST_OK(hs_writer_def_series(w, "mass", "kg", "total mass", NULL, &m));
        assert_int_equal(e, 1);
        assert_int_equal(m, 2);
        double fld[12] = {0};
        TEST_OK(hs_writer_begin_step(w, rec_time(2)));
        TEST_OK(hs_writer_put(w, T, fld));
        TEST_OK(hs_writer_put_scalar(w, e, energy(2)));
        TEST_OK(hs_writer_put_scalar(w, m, mass(2)));
        TEST_OK(hs_writer_close(w));
        check_series(p, 3);
    }
}

/* ------------------------------------------------------------------ stations */

static const char *st_names[3] = {"R1", "R2", "south_gauge"};
static const double st_x[3] = {10, 20, 30}, st_y[3] = {1, 2, 3}, st_z[3] = {-5, -6, -7};
static double st_value(int r, int s) { return 100.0 * r + s + 0.5; }

static void write_stations(hs_output_format fmt, const char *path, int nrec)
{
    hs_output_desc d = {0};
    d.path = path;
    d.format = fmt;
    d.title = "receivers";
    d.history = "test_output_series";
    d.time_units = "seconds since 2000-01-01 00:00:00";
    hs_station_desc sd = {.dim_name = "station", .n = 3, .names = st_names, .x = st_x, .y = st_y, .z = st_z};
    hs_writer *w;
    int v, p;
    TEST_OK(hs_writer_open(test_ctx(), &d, &w));
    /* station variables need the stations first */
    assert_int_equal(hs_writer_def_station_var(w, "vz", "m s-1", "vertical velocity", NULL, HS_F64, &v), HS_ERR_INPUT);
    hs_error_clear();
    TEST_OK(hs_writer_def_stations(w, &sd));
    assert_int_equal(hs_writer_def_stations(w, &sd), HS_ERR_INPUT);
    hs_error_clear();
    TEST_OK(hs_writer_def_station_var(w, "vz", "m s-1", "vertical velocity", NULL, HS_F64, &v));
    TEST_OK(hs_writer_def_station_var(w, "p", "Pa", "pressure", NULL, HS_F32, &p));
    int s1;
    assert_int_equal(hs_writer_def_series(w, "energy", "J", NULL, NULL, &s1), HS_ERR_INPUT);
    hs_error_clear();
    for (int r = 0; r < nrec; r++) {
        TEST_OK(hs_writer_begin_step(w, rec_time(r)));
        int64_t idx[3] = {2, 0, 1};
        double val[3];
        float pv[3];
        for (int k = 0; k < 3; k++) val[k] = st_value(r, (int)idx[k]), pv[k] = (float)(2 * st_value(r, (int)idx[k]));
        TEST_OK(hs_writer_put_stations(w, v, 3, idx, val));
        TEST_OK(hs_writer_put_stations(w, p, 3, idx, pv));
    }
    int64_t dup[3] = {0, 0, 1};
    double val[3] = {0};
    assert_int_equal(hs_writer_put_stations(w, v, 3, dup, val), HS_ERR_RUNTIME);
    hs_error_clear();
    assert_int_equal(hs_writer_put_stations(w, v, 2, dup + 1, val), HS_ERR_RUNTIME); /* station 2 missing */
    hs_error_clear();
    TEST_OK(hs_writer_close(w));
}

static void test_stations(void **state)
{
    (void)state;
    hs_output_format f[2];
    const char *ext[2];
    for (int i = 0, nf = formats(f, ext); i < nf; i++) {
        char name[64];
        snprintf(name, sizeof name, "stations.%s", ext[i]);
        const char *p = out_path(name);
        write_stations(f[i], p, 4);
        hs_reader *r;
        int64_t shape[8];
        int rank;
        double got[64];
        TEST_OK(hs_reader_open(p, &r));
        TEST_OK(hs_reader_var_shape(r, "vz", shape, &rank));
        assert_int_equal(rank, 2);
        assert_int_equal(shape[0], 4);
        assert_int_equal(shape[1], 3);
        TEST_OK(hs_reader_read(r, "vz", got));
        for (int t = 0; t < 4; t++)
            for (int s = 0; s < 3; s++) assert_true(got[t * 3 + s] == st_value(t, s));
        TEST_OK(hs_reader_read(r, "p", got));
        for (int t = 0; t < 4; t++)
            for (int s = 0; s < 3; s++) assert_true(got[t * 3 + s] == (double)(float)(2 * st_value(t, s)));
        TEST_OK(hs_reader_read(r, "station_x", got));
        assert_memory_equal(got, st_x, sizeof st_x);
        TEST_OK(hs_reader_read(r, "station_z", got));
        assert_memory_equal(got, st_z, sizeof st_z);
        hs_reader_close(r);
        /* a station file is not resumable (yet): an input error, the file left alone */
        if (!getenv("HS_TEST_KEEP_OUTPUT")) {
            hs_output_desc d = {0};
            d.path = p;
            d.format = f[i];
            d.time_units = "seconds since 2000-01-01 00:00:00";
            hs_writer *w = NULL;
            assert_int_equal(hs_writer_resume(test_ctx(), &d, 1.0, &w), HS_ERR_INPUT);
            hs_error_clear();
        }
    }
}

static void test_station_errors(void **state)
{
    (void)state;
    hs_output_format f[2];
    const char *ext[2];
    for (int i = 0, nf = formats(f, ext); i < nf; i++) {
        char name[64];
        snprintf(name, sizeof name, "bad_stations.%s", ext[i]);
        double x[2] = {0, 1};
        hs_output_desc d = {0};
        d.path = test_tmp_path(name);
        d.format = f[i];
        d.ndim = 1;
        d.dim_names[0] = "x";
        d.n[0] = 2;
        d.coords[0] = x;
        d.time_units = "seconds since 2000-01-01 00:00:00";
        const char *dup[2] = {"a", "a"};
        hs_station_desc sd = {.n = 2, .names = dup, .x = x};
        hs_writer *w;
        TEST_OK(hs_writer_open(test_ctx(), &d, &w));
        assert_int_equal(hs_writer_def_stations(w, &sd), HS_ERR_INPUT); /* beside a grid */
        hs_error_clear();
        hs_writer_discard(w);
        d.ndim = 0;
        TEST_OK(hs_writer_open(test_ctx(), &d, &w));
        assert_int_equal(hs_writer_def_stations(w, &sd), HS_ERR_INPUT); /* two named "a" */
        hs_error_clear();
        hs_writer_discard(w);
    }
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_series_beside_grid),
    cmocka_unit_test(test_series_alone),
    cmocka_unit_test(test_series_resume),
    cmocka_unit_test(test_stations),
    cmocka_unit_test(test_station_errors),
};

TEST_MAIN("output_series", tests)
