/* Reductions (sum, min, max, argmax/argmin, norms) against long-double host loops, plus reproducibility. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "kernels/memory.h"
#include "kernels/reduce/reduce.h"
#include "test_util.h"

static const size_t g_sizes[] = {1, 2, 31, 1000, 1000003, (1u << 20) + 7};
#define NSIZES (sizeof g_sizes / sizeof g_sizes[0])

/* Host data of type t as doubles (x64) and in its own type (raw). */
static void *make_data(hs_dtype t, size_t n, uint64_t seed, double lo, double hi, double *x64)
{
    void *raw = malloc(n * hs_dtype_size(t) + 1);
    if (t == HS_F64) {
        test_fill_f64(raw, n, seed, lo, hi);
        memcpy(x64, raw, n * sizeof(double));
    } else {
        test_fill_f32(raw, n, seed, (float)lo, (float)hi);
        for (size_t i = 0; i < n; i++) x64[i] = ((float *)raw)[i];
    }
    return raw;
}

static double run_reduce(hs_dtype t, hs_reduce_op op, size_t n, const void *d)
{
    double r = 0;
    TEST_OK(hs_reduce(test_ctx(), t, op, n, d, &r));
    return r;
}

static void check_sum_minmax(hs_dtype t, double tol)
{
    for (size_t s = 0; s < NSIZES; s++) {
        size_t n = g_sizes[s];
        double *x = malloc(n * sizeof *x);
        void *raw = make_data(t, n, 11 + s, 0.5, 1.5, x);
        void *d = test_upload(raw, n * hs_dtype_size(t));
        long double ref = 0;
        double mn = INFINITY, mx = -INFINITY;
        for (size_t i = 0; i < n; i++) {
            ref += x[i];
            mn = x[i] < mn ? x[i] : mn;
            mx = x[i] > mx ? x[i] : mx;
        }
        double sum = run_reduce(t, HS_REDUCE_SUM, n, d);
        TEST_LE(fabsl((long double)sum - ref) / fabsl(ref), tol);
        assert_true(run_reduce(t, HS_REDUCE_MIN, n, d) == mn);
        assert_true(run_reduce(t, HS_REDUCE_MAX, n, d) == mx);
        hs_mem_free(test_ctx(), d);
        free(raw);
        free(x);
    }
}

/* f64: pairwise/tree sums of 1e6 values in [0.5,1.5) are good to a few ulps. */
static void test_sum_minmax_f64(void **state) { (void)state; check_sum_minmax(HS_F64, 1e-14); }
/* f32 data summed in double: the only error is the double accumulation. */
static void test_sum_minmax_f32(void **state) { (void)state; check_sum_minmax(HS_F32, 1e-12); }

static void test_empty(void **state)
{
    (void)state;
    double r = -1;
    size_t idx = 7;
    TEST_OK(hs_reduce(test_ctx(), HS_F64, HS_REDUCE_SUM, 0, NULL, &r));
    assert_true(r == 0.0);
    TEST_OK(hs_reduce(test_ctx(), HS_F32, HS_REDUCE_MIN, 0, NULL, &r));
    assert_true(isinf(r) && r > 0);
    TEST_OK(hs_reduce(test_ctx(), HS_F64, HS_REDUCE_MAX, 0, NULL, &r));
    assert_true(isinf(r) && r < 0);
    TEST_OK(hs_argmax(test_ctx(), HS_F64, 0, NULL, &idx, &r));
    assert_true(idx == 0 && isinf(r) && r < 0);
    TEST_OK(hs_norm(test_ctx(), HS_F64, 2, 0, NULL, &r));
    assert_true(r == 0.0);
    assert_int_equal(hs_reduce(test_ctx(), HS_I32, HS_REDUCE_SUM, 3, NULL, &r), HS_ERR_INPUT);
    hs_error_clear();
}

/* Exact arg-extrema: ties resolve to the first index, NaN wins with its first index. */
static void check_arg(hs_dtype t)
{
    for (size_t s = 0; s < NSIZES; s++) {
        size_t n = g_sizes[s];
        double *x = malloc(n * sizeof *x);
        void *raw = make_data(t, n, 100 + s, -1.0, 1.0, x);
        size_t es = hs_dtype_size(t);
        /* plant duplicated extremes: the later copy must lose */
        size_t a = n / 3, b = n - 1;
        if (t == HS_F64) { ((double *)raw)[a] = ((double *)raw)[b] = 5.0; }
        else { ((float *)raw)[a] = ((float *)raw)[b] = 5.0f; }
        if (n > 2) {
            size_t c = n / 2;
            if (t == HS_F64) ((double *)raw)[c] = ((double *)raw)[n - 2] = -5.0;
            else ((float *)raw)[c] = ((float *)raw)[n - 2] = -5.0f;
        }
        size_t imax = 0, imin = 0;
        double vmax = 0, vmin = 0;
        void *d = test_upload(raw, n * es);
        TEST_OK(hs_argmax(test_ctx(), t, n, d, &imax, &vmax));
        TEST_OK(hs_argmin(test_ctx(), t, n, d, &imin, &vmin));
        assert_int_equal(imax, a);
        assert_true(vmax == 5.0);
        if (n > 2) {
            assert_int_equal(imin, n / 2);
            assert_true(vmin == -5.0);
        }
        /* NaNs: the first one wins both, and min/max/sum/inf-norm become NaN */
        if (n > 30) {
            size_t p = n / 5, q = n / 4;
            if (t == HS_F64) ((double *)raw)[q] = ((double *)raw)[p] = NAN;
            else ((float *)raw)[q] = ((float *)raw)[p] = NAN;
            TEST_OK(hs_mem_copy(test_ctx(), d, raw, n * es, HS_COPY_H2D));
            TEST_OK(hs_argmax(test_ctx(), t, n, d, &imax, &vmax));
            TEST_OK(hs_argmin(test_ctx(), t, n, d, &imin, &vmin));
            assert_int_equal(imax, p);
            assert_int_equal(imin, p);
            assert_true(isnan(vmax) && isnan(vmin));
            assert_true(isnan(run_reduce(t, HS_REDUCE_MAX, n, d)));
            assert_true(isnan(run_reduce(t, HS_REDUCE_MIN, n, d)));
            assert_true(isnan(run_reduce(t, HS_REDUCE_SUM, n, d)));
            double r = 0;
            TEST_OK(hs_norm(test_ctx(), t, 0, n, d, &r));
            assert_true(isnan(r));
        }
        hs_mem_free(test_ctx(), d);
        free(raw);
        free(x);
    }
}
static void test_arg_f64(void **state) { (void)state; check_arg(HS_F64); }
static void test_arg_f32(void **state) { (void)state; check_arg(HS_F32); }

static void check_norms(hs_dtype t, double tol)
{
    for (size_t s = 0; s < NSIZES; s++) {
        size_t n = g_sizes[s];
        double *x = malloc(n * sizeof *x);
        void *raw = make_data(t, n, 300 + s, -2.0, 1.0, x);
        void *d = test_upload(raw, n * hs_dtype_size(t));
        long double l1 = 0, l2 = 0;
        double li = 0;
        for (size_t i = 0; i < n; i++) {
            l1 += fabs(x[i]);
            l2 += (long double)x[i] * x[i];
            li = fabs(x[i]) > li ? fabs(x[i]) : li;
        }
        double r1, r2, ri;
        TEST_OK(hs_norm(test_ctx(), t, 1, n, d, &r1));
        TEST_OK(hs_norm(test_ctx(), t, 2, n, d, &r2));
        TEST_OK(hs_norm(test_ctx(), t, 0, n, d, &ri));
        TEST_LE(fabsl(r1 - l1) / l1, tol);
        TEST_LE(fabsl(r2 - sqrtl(l2)) / sqrtl(l2), tol);
        assert_true(ri == li);
        hs_mem_free(test_ctx(), d);
        free(raw);
        free(x);
    }
}
static void test_norms_f64(void **state) { (void)state; check_norms(HS_F64, 1e-14); }
static void test_norms_f32(void **state) { (void)state; check_norms(HS_F32, 1e-12); }

/* Values whose squares over- and underflow in double still give the right 2-norm. */
static void test_norm2_scaling(void **state)
{
    (void)state;
    const double scales[] = {1e200, 1e-200};
    size_t n = 1000;
    for (int k = 0; k < 2; k++) {
        double *x = malloc(n * sizeof *x);
        test_fill_f64(x, n, 77, 1.0, 2.0);
        long double l2 = 0;
        for (size_t i = 0; i < n; i++) {
            l2 += (long double)x[i] * x[i];
            x[i] *= scales[k];
        }
        void *d = test_upload(x, n * sizeof *x);
        double r = 0;
        TEST_OK(hs_norm(test_ctx(), HS_F64, 2, n, d, &r));
        TEST_LE(fabsl(r / scales[k] - sqrtl(l2)) / sqrtl(l2), 1e-14);
        hs_mem_free(test_ctx(), d);
        free(x);
    }
}

/* Bitwise reproducible run to run, and on the CPU whatever the OpenMP thread count. */
static void test_determinism(void **state)
{
    (void)state;
    size_t n = (1u << 20) + 7;
    double *x = malloc(n * sizeof *x);
    test_fill_f64(x, n, 5, -1.0, 1.0);
    void *d = test_upload(x, n * sizeof *x);
    double r0 = run_reduce(HS_F64, HS_REDUCE_SUM, n, d), r1 = run_reduce(HS_F64, HS_REDUCE_SUM, n, d);
    assert_memory_equal(&r0, &r1, sizeof r0);
#ifdef _OPENMP
    if (!test_on_gpu()) {
        int saved = omp_get_max_threads();
        for (int nt = 1; nt <= 3; nt++) {
            omp_set_num_threads(nt);
            double r = run_reduce(HS_F64, HS_REDUCE_SUM, n, d), r2 = 0;
            TEST_OK(hs_norm(test_ctx(), HS_F64, 2, n, d, &r2));
            double ref2 = 0;
            omp_set_num_threads(1);
            TEST_OK(hs_norm(test_ctx(), HS_F64, 2, n, d, &ref2));
            assert_memory_equal(&r, &r0, sizeof r);
            assert_memory_equal(&r2, &ref2, sizeof r2);
        }
        omp_set_num_threads(saved);
    }
#endif
    hs_mem_free(test_ctx(), d);
    free(x);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_sum_minmax_f64), cmocka_unit_test(test_sum_minmax_f32), cmocka_unit_test(test_empty),
    cmocka_unit_test(test_arg_f64),        cmocka_unit_test(test_arg_f32),        cmocka_unit_test(test_norms_f64),
    cmocka_unit_test(test_norms_f32),      cmocka_unit_test(test_norm2_scaling),  cmocka_unit_test(test_determinism),
};
TEST_MAIN("reduce", tests)
