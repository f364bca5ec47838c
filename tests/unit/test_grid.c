/* Structured grids on one rank: layout, interior copies, periodic self-exchange, corners, reductions, errors. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/grid.h"
#include "kernels/memory.h"
#include "test_util.h"

#include "grid_test_util.h"

/* The whole allocation, halos included, as doubles. */
static double *download_all(hs_field *f)
{
    size_t es = hs_field_esize(f);
    void *raw = malloc(f->count * es);
    double *out = malloc(f->count * sizeof *out);
    TEST_OK(hs_mem_copy(f->d->ctx, raw, f->data, f->count * es, HS_COPY_D2H));
    for (size_t i = 0; i < f->count; i++)
        out[i] = f->dtype == HS_F64 ? ((double *)raw)[i] : (double)((float *)raw)[i];
    free(raw);
    return out;
}

/* Number of cells that differ from `expected` (exact comparison); the first one is printed. */
static long check_field(hs_field *f, int corners, const char *what)
{
    double *all = download_all(f);
    long bad = 0;
    const int *h = f->hw;
    const int64_t *l = f->d->local;
    for (int64_t k = -h[2]; k < l[2] + h[2]; k++)
        for (int64_t j = -h[1]; j < l[1] + h[1]; j++)
            for (int64_t i = -h[0]; i < l[0] + h[0]; i++) {
                double want = expected(f, corners, i, j, k), got = all[hs_field_index(f, i, j, k)];
                if (got != want && bad++ == 0)
                    print_error("%s: rank %d cell (%lld,%lld,%lld) holds %g, expected %g\n", what, f->d->ctx->rank,
                                (long long)i, (long long)j, (long long)k, got, want);
            }
    free(all);
    return bad;
}

static hs_decomp *make_decomp(int ndim, const int64_t *g, const int *per, int min_cells)
{
    hs_decomp *d = NULL;
    TEST_OK(hs_decomp_create(test_ctx(), ndim, g, per, NULL, min_cells, &d));
    return d;
}

static void test_index_layout(void **state)
{
    (void)state;
    int64_t g[3] = {9, 6, 5};
    hs_decomp *d = make_decomp(3, g, NULL, 1);
    hs_field *f = NULL;
    TEST_OK(hs_field_create(d, HS_F64, 2, &f));
    assert_int_equal(f->alloc[0], 13);
    assert_int_equal(f->alloc[1], 10);
    assert_int_equal(f->alloc[2], 9);
    /* 13 cells in a row: padding it to 16 would cost more than an eighth, so rows stay dense */
    assert_int_equal(f->pitch, 13);
    assert_int_equal(f->count, 13 * 10 * 9);
    assert_int_equal(hs_field_index(f, -2, -2, -2), 0);
    assert_int_equal(hs_field_index(f, 0, 0, 0), 2 + 13 * 2 + 13 * 10 * 2);
    assert_int_equal(hs_field_index(f, 1, 0, 0) - hs_field_index(f, 0, 0, 0), 1);
    assert_int_equal(hs_field_index(f, 0, 1, 0) - hs_field_index(f, 0, 0, 0), 13);
    assert_int_equal(hs_field_index(f, 0, 0, 1) - hs_field_index(f, 0, 0, 0), 130);
    assert_int_equal(hs_field_index(f, 10, 7, 6), f->count - 1);
    hs_field_destroy(f);
    hs_decomp_destroy(d);

    /* 130 + 2 cells in a row: padded to 144 elements, interior x = 0 on a 128-byte boundary */
    int64_t gp[3] = {130, 3, 2};
    d = make_decomp(3, gp, NULL, 1);
    TEST_OK(hs_field_create(d, HS_F64, 1, &f));
    assert_int_equal(f->alloc[0], 132);
    assert_int_equal(f->pitch, 144);
    assert_int_equal(f->count, 144 * 5 * 4);
    assert_int_equal(hs_field_stride_y(f), 144);
    assert_int_equal(hs_field_stride_z(f), 144 * 5);
    for (int k = 0; k < 2; k++)
        for (int j = 0; j < 3; j++)
            assert_int_equal(((uintptr_t)f->data + 8 * hs_field_index(f, 0, j, k)) % 128, 0);
    hs_field_destroy(f);
    hs_decomp_destroy(d);

    /* unused dimensions have no halo */
    int64_t g2[2] = {7, 3};
    d = make_decomp(2, g2, NULL, 1);
    TEST_OK(hs_field_create(d, HS_F32, 3, &f));
    assert_int_equal(f->hw[2], 0);
    assert_int_equal(f->alloc[2], 1);
    assert_int_equal(f->count, 13 * 9);
    assert_int_equal(hs_field_index(f, -3, -3, 0), 0);
    hs_field_destroy(f);
    hs_decomp_destroy(d);
}

/* set -> get returns the data bit for bit and leaves the (zeroed) halos alone. */
static void roundtrip(int ndim, const int64_t *g, hs_dtype t, int halo)
{
    hs_decomp *d = make_decomp(ndim, g, NULL, 1);
    hs_field *f = NULL;
    TEST_OK(hs_field_create(d, t, halo, &f));
    size_t n = local_count(d), es = hs_field_esize(f);
    double *v = malloc(n * sizeof *v);
    test_fill_f64(v, n, 17 + (uint64_t)n, -1, 1);
    void *in = to_type(t, v, n), *out = malloc(n * es + 8);
    TEST_OK(hs_field_set_interior(f, in));
    TEST_OK(hs_field_get_interior(f, out));
    assert_memory_equal(in, out, n * es);
    double *all = download_all(f);
    size_t zeros = 0;
    for (size_t i = 0; i < f->count; i++) zeros += all[i] == 0.0;
    assert_int_equal(zeros, f->count - n); /* random data in (-1, 1) has no exact zeros */
    free(all);
    free(v), free(in), free(out);
    hs_field_destroy(f);
    hs_decomp_destroy(d);
}

static void test_interior_roundtrip(void **state)
{
    (void)state;
    const int64_t g1[1] = {1000003}, g1b[1] = {1}, g2[2] = {31, 7}, g3[3] = {31, 5, 4}, g3b[3] = {1, 1, 1};
    for (int t = 0; t < 2; t++) {
        hs_dtype dt = t ? HS_F32 : HS_F64;
        roundtrip(1, g1, dt, 4);
        roundtrip(1, g1b, dt, 1);
        roundtrip(2, g2, dt, 0);
        roundtrip(2, g2, dt, 3);
        roundtrip(3, g3, dt, 2);
        roundtrip(3, g3b, dt, 1);
    }
}

/* Every periodicity pattern of every dimension count, widths 1..4, both types, corners off and on. */
static void test_self_exchange(void **state)
{
    (void)state;
    const int64_t sizes[3][3] = {{37, 1, 1}, {13, 7, 1}, {9, 6, 5}};
    for (int ndim = 1; ndim <= 3; ndim++)
        for (int pmask = 0; pmask < (1 << ndim); pmask++)
            for (int h = 1; h <= 4; h++)
                for (int t = 0; t < 2; t++)
                    for (int corners = 0; corners < 2; corners++) {
                        int per[3] = {pmask & 1, (pmask >> 1) & 1, (pmask >> 2) & 1};
                        hs_decomp *d = make_decomp(ndim, sizes[ndim - 1], per, h);
                        hs_field *f = NULL;
                        TEST_OK(hs_field_create(d, t ? HS_F32 : HS_F64, h, &f));
                        TEST_OK(hs_field_set_corners(f, corners));
                        fill_global_fn(f);
                        TEST_OK(hs_halo_exchange(f));
                        char what[96];
                        snprintf(what, sizeof what, "%dD periodic mask %d halo %d %s corners %d", ndim, pmask, h,
                                 t ? "f32" : "f64", corners);
                        assert_int_equal(check_field(f, corners, what), 0);
                        /* a second exchange over filled halos changes nothing */
                        TEST_OK(hs_halo_exchange(f));
                        assert_int_equal(check_field(f, corners, what), 0);
                        hs_field_destroy(f);
                        hs_decomp_destroy(d);
                    }
}

/* A one-cell periodic grid: every halo cell is that cell. */
static void test_single_cell_periodic(void **state)
{
    (void)state;
    const int64_t g[3] = {1, 1, 1};
    const int per[3] = {1, 1, 1};
    hs_decomp *d = make_decomp(3, g, per, 1);
    hs_field *f = NULL;
    TEST_OK(hs_field_create(d, HS_F64, 1, &f));
    TEST_OK(hs_field_set_corners(f, 1));
    fill_global_fn(f);
    TEST_OK(hs_halo_exchange(f));
    assert_int_equal(check_field(f, 1, "1x1x1 periodic"), 0);
    hs_field_destroy(f);
    hs_decomp_destroy(d);
}

/* begin/end split with other device work in between; misuse is reported. */
static void test_begin_end(void **state)
{
    (void)state;
    const int64_t g[2] = {33, 17};
    const int per[2] = {1, 1};
    hs_decomp *d = make_decomp(2, g, per, 2);
    hs_field *f = NULL, *other = NULL;
    TEST_OK(hs_field_create(d, HS_F64, 2, &f));
    TEST_OK(hs_field_create(d, HS_F64, 2, &other));
    fill_global_fn(f);
    TEST_OK(hs_halo_exchange_begin(f));
    assert_int_equal(hs_halo_exchange_begin(f), HS_ERR_INPUT);
    assert_int_equal(hs_field_set_corners(f, 1), HS_ERR_INPUT);
    hs_error_clear();
    TEST_OK(hs_field_fill(other, 3.0));
    TEST_OK(hs_halo_exchange_end(f));
    assert_int_equal(hs_halo_exchange_end(f), HS_ERR_INPUT);
    hs_error_clear();
    assert_int_equal(check_field(f, 0, "begin/end"), 0);
    double s = 0;
    TEST_OK(hs_field_sum(other, &s));
    assert_true(s == 3.0 * 33 * 17);
    hs_field_destroy(f);
    hs_field_destroy(other);
    hs_decomp_destroy(d);
}

/* Reductions over the interior only (halos hold huge values) against long-double host loops. */
static void reductions(hs_dtype t, int ndim, const int64_t *g, int halo)
{
    hs_decomp *d = make_decomp(ndim, g, NULL, 1);
    hs_field *f = NULL;
    TEST_OK(hs_field_create(d, t, halo, &f));
    size_t n = local_count(d);
    double *v = malloc(n * sizeof *v);
    test_fill_f64(v, n, 99 + n, -1, 2);
    void *h = to_type(t, v, n);
    for (size_t i = 0; i < n; i++)
        if (t == HS_F32) v[i] = ((float *)h)[i];
    TEST_OK(hs_field_fill(f, 1e30));
    TEST_OK(hs_field_set_interior(f, h));
    long double sum = 0, sq = 0;
    double mn = INFINITY, mx = -INFINITY, ma = 0;
    for (size_t i = 0; i < n; i++) {
        sum += v[i], sq += (long double)v[i] * v[i];
        mn = fmin(mn, v[i]), mx = fmax(mx, v[i]), ma = fmax(ma, fabs(v[i]));
    }
    double r[5];
    TEST_OK(hs_field_sum(f, &r[0]));
    TEST_OK(hs_field_min(f, &r[1]));
    TEST_OK(hs_field_max(f, &r[2]));
    TEST_OK(hs_field_norm2(f, &r[3]));
    TEST_OK(hs_field_maxabs(f, &r[4]));
    TEST_LE(fabs(r[0] - (double)sum) / fabsl(sum), 1e-14);
    TEST_LE(fabs(r[3] - sqrt((double)sq)) / sqrt((double)sq), 1e-14);
    assert_true(r[1] == mn);
    assert_true(r[2] == mx);
    assert_true(r[4] == ma);
    /* bitwise the same when repeated */
    double again;
    TEST_OK(hs_field_sum(f, &again));
    assert_memory_equal(&again, &r[0], sizeof again);
    free(v), free(h);
    hs_field_destroy(f);
    hs_decomp_destroy(d);
}

static void test_reductions(void **state)
{
    (void)state;
    const int64_t g1[1] = {1000003}, g2[2] = {31, 1000}, g3[3] = {40, 33, 17}, g0[3] = {1, 1, 1};
    for (int t = 0; t < 2; t++) {
        hs_dtype dt = t ? HS_F32 : HS_F64;
        reductions(dt, 1, g1, 4);
        reductions(dt, 2, g2, 1);
        reductions(dt, 3, g3, 3);
        reductions(dt, 3, g3, 0);
        reductions(dt, 3, g0, 2);
    }
}

/* NaN in the interior propagates through min, max and the sum (as in kernels/reduce.h). */
static void test_reduction_nan(void **state)
{
    (void)state;
    const int64_t g[2] = {20, 10};
    hs_decomp *d = make_decomp(2, g, NULL, 1);
    hs_field *f = NULL;
    TEST_OK(hs_field_create(d, HS_F64, 1, &f));
    double v[200];
    for (int i = 0; i < 200; i++) v[i] = i;
    v[77] = NAN;
    TEST_OK(hs_field_set_interior(f, v));
    double r;
    TEST_OK(hs_field_min(f, &r));
    assert_true(isnan(r));
    TEST_OK(hs_field_max(f, &r));
    assert_true(isnan(r));
    TEST_OK(hs_field_sum(f, &r));
    assert_true(isnan(r));
    hs_field_destroy(f);
    hs_decomp_destroy(d);
}

static void test_decomp_errors(void **state)
{
    (void)state;
    hs_ctx *ctx = test_ctx();
    hs_decomp *d = NULL;
    const int64_t g[2] = {10, 10};
    const int bad[2] = {3, 1};
    char want[64];
    snprintf(want, sizeof want, "grid 10 x 10 cannot be split 3 x 1 over %d", ctx->size);
    expect_input_error(hs_decomp_create(ctx, 2, g, NULL, bad, 1, &d), want);
    snprintf(want, sizeof want, "3 x 1 = 3 != %d", ctx->size);
    expect_input_error(hs_decomp_create(ctx, 2, g, NULL, bad, 1, &d), want);
    assert_null(d);
    /* too thin for the halo: a periodic dimension of 2 cells with min_cells 3 */
    const int64_t thin[2] = {2, 10};
    const int per[2] = {1, 0};
    expect_input_error(hs_decomp_create(ctx, 2, thin, per, NULL, 3, &d), "fewer than the 3 needed");
    /* a non-periodic dimension owned whole by one rank may be thinner than the halo */
    if (ctx->size == 1) {
        TEST_OK(hs_decomp_create(ctx, 2, thin, NULL, NULL, 3, &d));
        hs_field *f = NULL;
        TEST_OK(hs_field_create(d, HS_F64, 3, &f));
        TEST_OK(hs_halo_exchange(f));
        hs_field_destroy(f);
        hs_decomp_destroy(d);
        d = NULL;
    }
    expect_input_error(hs_decomp_create(ctx, 4, g, NULL, NULL, 1, &d), "ndim = 4");
    const int64_t zero[2] = {0, 5};
    expect_input_error(hs_decomp_create(ctx, 2, zero, NULL, NULL, 1, &d), "grid size 0");
    /* a field wider than a periodic dimension */
    const int64_t small[1] = {3};
    const int per1[1] = {1};
    if (ctx->size <= 3) {
        TEST_OK(hs_decomp_create(ctx, 1, small, per1, NULL, 1, &d));
        hs_field *f = NULL;
        expect_input_error(hs_field_create(d, HS_F64, 4, &f), "wider than");
        expect_input_error(hs_field_create(d, HS_I32, 1, &f), "not supported");
        expect_input_error(hs_field_create(d, HS_F64, HS_FIELD_MAX_HALO + 1, &f), "halo =");
        assert_null(f);
        hs_decomp_destroy(d);
    }
}

static void test_gather_scatter(void **state)
{
    (void)state;
    const int64_t g[3] = {11, 7, 5};
    hs_decomp *d = make_decomp(3, g, NULL, 1);
    for (int t = 0; t < 2; t++) {
        hs_field *f = NULL;
        TEST_OK(hs_field_create(d, t ? HS_F32 : HS_F64, 2, &f));
        size_t n = 11 * 7 * 5, es = hs_field_esize(f);
        double *v = malloc(n * sizeof *v);
        test_fill_f64(v, n, 5, -3, 3);
        void *in = to_type(f->dtype, v, n), *out = malloc(n * es);
        TEST_OK(hs_field_scatter(f, 0, in));
        TEST_OK(hs_field_gather(f, 0, out));
        assert_memory_equal(in, out, n * es);
        fill_global_fn(f);
        TEST_OK(hs_field_gather(f, 0, out));
        for (size_t i = 0; i < n; i++) {
            double got = t ? ((float *)out)[i] : ((double *)out)[i];
            assert_true(got == 1.0 + (double)i);
        }
        expect_input_error(hs_field_gather(f, 0, NULL), "no host array");
        free(v), free(in), free(out);
        hs_field_destroy(f);
    }
    hs_decomp_destroy(d);
}

static void test_bench_hooks(void **state)
{
    (void)state;
    const int64_t g[3] = {8, 8, 8};
    const int per[3] = {1, 1, 1};
    hs_decomp *d = make_decomp(3, g, per, 1);
    hs_field *f = NULL;
    TEST_OK(hs_field_create(d, HS_F64, 1, &f));
    double bytes = 0;
    TEST_OK(hs_halo_bench_pack(f, -1, 0, &bytes));
    assert_true(bytes == 2.0 * 6 * 64 * 8); /* six faces of 8x8, read + write */
    TEST_OK(hs_halo_bench_pack(f, 0, 0, &bytes));
    assert_true(bytes == 2.0 * 2 * 64 * 8);
    if (!test_on_gpu()) {
        assert_int_equal(hs_halo_bench_pack(f, -1, 1, &bytes), HS_ERR_RUNTIME);
        hs_error_clear();
    }
    assert_true(hs_halo_message_bytes(f) == 0.0); /* all self copies on one rank */
    hs_field_destroy(f);
    hs_decomp_destroy(d);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_index_layout),
    cmocka_unit_test(test_interior_roundtrip),
    cmocka_unit_test(test_self_exchange),
    cmocka_unit_test(test_single_cell_periodic),
    cmocka_unit_test(test_begin_end),
    cmocka_unit_test(test_reductions),
    cmocka_unit_test(test_reduction_nan),
    cmocka_unit_test(test_decomp_errors),
    cmocka_unit_test(test_gather_scatter),
    cmocka_unit_test(test_bench_hooks),
};

TEST_MAIN("grid", tests)
