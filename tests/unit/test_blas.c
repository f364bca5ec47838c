/* BLAS family against naive host loops: element-wise ops, dots, fused CG updates, GEMM. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/blas/blas.h"
#include "kernels/memory.h"
#include "test_util.h"

static const size_t sizes[] = {0, 1, 31, 1000, 1000003};

static void test_elementwise_f64(void **state)
{
    (void)state;
    hs_ctx *ctx = test_ctx();
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        size_t n = sizes[s], bytes = n * sizeof(double);
        double *x = malloc(bytes + 8), *y = malloc(bytes + 8), *ref = malloc(bytes + 8), *got = malloc(bytes + 8);
        test_fill_f64(x, n, 1 + s, -1, 1);
        test_fill_f64(y, n, 100 + s, -1, 1);
        double *dx = test_upload(x, bytes), *dy = test_upload(y, bytes);
        /* y = 0.5 x - 2 y, then y *= 3, then y += 0.25 x, then y = y .* x */
        TEST_OK(hs_axpby(ctx, HS_F64, n, 0.5, dx, -2.0, dy));
        TEST_OK(hs_scal(ctx, HS_F64, n, 3.0, dy));
        TEST_OK(hs_axpy(ctx, HS_F64, n, 0.25, dx, dy));
        TEST_OK(hs_pointwise_mult(ctx, HS_F64, n, dy, dx, dy));
        for (size_t i = 0; i < n; i++) ref[i] = ((0.5 * x[i] - 2.0 * y[i]) * 3.0 + 0.25 * x[i]) * x[i];
        test_download(got, dy, bytes);
        TEST_LE(test_rel_err_f64(got, ref, n), 1e-15);
        TEST_OK(hs_fill(ctx, HS_F64, n, 7.5, dy));
        TEST_OK(hs_copy(ctx, HS_F64, n, dy, dx));
        test_download(got, dx, bytes);
        for (size_t i = 0; i < n; i++) assert_true(got[i] == 7.5);
        hs_mem_free(ctx, dx);
        hs_mem_free(ctx, dy);
        free(x), free(y), free(ref), free(got);
    }
}

static void test_elementwise_f32(void **state)
{
    (void)state;
    hs_ctx *ctx = test_ctx();
    size_t n = 100003, bytes = n * sizeof(float);
    float *x = malloc(bytes), *y = malloc(bytes), *ref = malloc(bytes), *got = malloc(bytes);
    test_fill_f32(x, n, 5, -1, 1);
    test_fill_f32(y, n, 6, -1, 1);
    float *dx = test_upload(x, bytes), *dy = test_upload(y, bytes);
    TEST_OK(hs_axpby(ctx, HS_F32, n, 0.5, dx, -2.0, dy));
    for (size_t i = 0; i < n; i++) ref[i] = 0.5f * x[i] - 2.0f * y[i];
    test_download(got, dy, bytes);
    TEST_LE(test_rel_err_f32(got, ref, n), 1e-6);
    hs_mem_free(ctx, dx);
    hs_mem_free(ctx, dy);
    free(x), free(y), free(ref), free(got);
}

static long double dot_ref(const double *x, const double *y, size_t n)
{
    long double s = 0;
    for (size_t i = 0; i < n; i++) s += (long double)x[i] * y[i];
    return s;
}

static void test_dot_nrm2(void **state)
{
    (void)state;
    hs_ctx *ctx = test_ctx();
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        size_t n = sizes[s], bytes = n * sizeof(double);
        double *x = malloc(bytes + 8), *y = malloc(bytes + 8);
        test_fill_f64(x, n, 7 + s, -1, 1);
        test_fill_f64(y, n, 70 + s, 0, 1);
        double *dx = test_upload(x, bytes), *dy = test_upload(y, bytes);
        double d = -1, d2 = -2, nr = -1;
        TEST_OK(hs_dot(ctx, HS_F64, n, dx, dy, &d));
        TEST_OK(hs_dot(ctx, HS_F64, n, dx, dy, &d2));
        TEST_OK(hs_nrm2(ctx, HS_F64, n, dy, &nr));
        long double ref = dot_ref(x, y, n), refn = sqrtl(dot_ref(y, y, n));
        /* error bound of a blocked/pairwise sum: a few ulps times log(n) of sum |x y| */
        long double mag = 0;
        for (size_t i = 0; i < n; i++) mag += fabsl((long double)x[i] * y[i]);
        TEST_LE(fabs((double)(d - ref)), 1e-15 * (double)mag + 1e-300);
        TEST_LE(fabs((double)(nr - refn)), 1e-15 * (double)refn + 1e-300);
        assert_memory_equal(&d, &d2, sizeof d); /* bitwise reproducible */
        hs_mem_free(ctx, dx);
        hs_mem_free(ctx, dy);
        free(x), free(y);
    }
}

static void test_dot_thread_independent(void **state)
{
    (void)state;
    hs_ctx *ctx = test_ctx();
    if (ctx->device != HS_DEVICE_CPU) skip();
#if HS_HAVE_OPENMP
    size_t n = 1000003, bytes = n * sizeof(double);
    double *x = malloc(bytes);
    test_fill_f64(x, n, 9, -1, 1);
    double a = 0, b = 0;
    extern void omp_set_num_threads(int);
    extern int omp_get_max_threads(void);
    int saved = omp_get_max_threads();
    omp_set_num_threads(1);
    TEST_OK(hs_dot(ctx, HS_F64, n, x, x, &a));
    omp_set_num_threads(3);
    TEST_OK(hs_dot(ctx, HS_F64, n, x, x, &b));
    omp_set_num_threads(saved);
    assert_memory_equal(&a, &b, sizeof a);
    free(x);
#endif
}

static void test_pcg_update(void **state)
{
    (void)state;
    hs_ctx *ctx = test_ctx();
    size_t n = 300007, bytes = n * sizeof(double);
    double *h[6];
    for (int i = 0; i < 6; i++) {
        h[i] = malloc(bytes);
        test_fill_f64(h[i], n, 20 + i, 0.5, 1.5);
    }
    /* p q dinv x r z */
    double *d[6];
    for (int i = 0; i < 6; i++) d[i] = test_upload(h[i], bytes);
    double alpha = 0.375, rz = 0, rr = 0;
    double rr_fused = 0;
    TEST_OK(hs_pcg_update(ctx, n, alpha, d[0], d[1], d[2], d[3], d[4], d[5], &rz, &rr_fused));
    long double ref_rz = 0, ref_rr_fused = 0;
    double *xr = malloc(bytes), *rr_ = malloc(bytes), *zr = malloc(bytes), *got = malloc(bytes);
    for (size_t i = 0; i < n; i++) {
        xr[i] = h[3][i] + alpha * h[0][i];
        rr_[i] = h[4][i] - alpha * h[1][i];
        zr[i] = h[2][i] * rr_[i];
        ref_rz += (long double)rr_[i] * zr[i];
        ref_rr_fused += (long double)rr_[i] * rr_[i];
    }
    test_download(got, d[3], bytes);
    TEST_LE(test_rel_err_f64(got, xr, n), 1e-15);
    test_download(got, d[4], bytes);
    TEST_LE(test_rel_err_f64(got, rr_, n), 1e-15);
    test_download(got, d[5], bytes);
    TEST_LE(test_rel_err_f64(got, zr, n), 1e-15);
    TEST_LE(fabs((double)((rz - ref_rz) / ref_rz)), 1e-13);
    TEST_LE(fabs((double)((rr_fused - ref_rr_fused) / ref_rr_fused)), 1e-13);
    /* unpreconditioned: r -= alpha q once more, rr = r.r */
    TEST_OK(hs_cg_update(ctx, n, alpha, d[0], d[1], d[3], d[4], &rr));
    long double ref_rr = 0;
    for (size_t i = 0; i < n; i++) {
        double r2 = rr_[i] - alpha * h[1][i];
        ref_rr += (long double)r2 * r2;
    }
    TEST_LE(fabs((double)((rr - ref_rr) / ref_rr)), 1e-13);
    for (int i = 0; i < 6; i++) {
        hs_mem_free(ctx, d[i]);
        free(h[i]);
    }
    free(xr), free(rr_), free(zr), free(got);
}

static void gemm_case(hs_dtype t, int ta, int tb, int m, int n, int k)
{
    hs_ctx *ctx = test_ctx();
    int lda = (ta ? k : m) + 1, ldb = (tb ? n : k) + 2, ldc = m + 3;
    size_t na = (size_t)lda * (ta ? m : k), nb = (size_t)ldb * (tb ? k : n), nc = (size_t)ldc * n;
    double *A = malloc(na * 8), *B = malloc(nb * 8), *C = malloc(nc * 8), *ref = malloc(nc * 8);
    test_fill_f64(A, na, 31, -1, 1);
    test_fill_f64(B, nb, 32, -1, 1);
    test_fill_f64(C, nc, 33, -1, 1);
    double alpha = 1.5, beta = -0.5;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) {
            long double s = 0;
            for (int l = 0; l < k; l++)
                s += (long double)(ta ? A[l + (size_t)i * lda] : A[i + (size_t)l * lda]) *
                     (tb ? B[j + (size_t)l * ldb] : B[l + (size_t)j * ldb]);
            ref[i + (size_t)j * ldc] = (double)(alpha * s + beta * C[i + (size_t)j * ldc]);
        }
    for (int j = 0; j < n; j++) /* rows beyond m in C are padding and must stay untouched */
        for (int i = m; i < ldc; i++) ref[i + (size_t)j * ldc] = C[i + (size_t)j * ldc];
    size_t es = hs_dtype_size(t);
    void *hA = A, *hB = B, *hC = C;
    float *fA = NULL, *fB = NULL, *fC = NULL;
    if (t == HS_F32) {
        fA = malloc(na * 4), fB = malloc(nb * 4), fC = malloc(nc * 4);
        for (size_t i = 0; i < na; i++) fA[i] = (float)A[i];
        for (size_t i = 0; i < nb; i++) fB[i] = (float)B[i];
        for (size_t i = 0; i < nc; i++) fC[i] = (float)C[i];
        hA = fA, hB = fB, hC = fC;
    }
    void *dA = test_upload(hA, na * es), *dB = test_upload(hB, nb * es), *dC = test_upload(hC, nc * es);
    TEST_OK(hs_gemm(ctx, t, ta, tb, m, n, k, alpha, dA, lda, dB, ldb, beta, dC, ldc));
    double *got = malloc(nc * 8);
    if (t == HS_F32) {
        test_download(fC, dC, nc * 4);
        for (size_t i = 0; i < nc; i++) got[i] = fC[i];
    } else {
        test_download(got, dC, nc * 8);
    }
    TEST_LE(test_rel_err_f64(got, ref, nc), t == HS_F64 ? 1e-14 : 2e-6);
    hs_mem_free(ctx, dA), hs_mem_free(ctx, dB), hs_mem_free(ctx, dC);
    free(A), free(B), free(C), free(ref), free(got), free(fA), free(fB), free(fC);
}

static void test_gemm(void **state)
{
    (void)state;
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++) {
            gemm_case(HS_F64, ta, tb, 37, 23, 51);
            gemm_case(HS_F32, ta, tb, 64, 17, 33);
        }
    gemm_case(HS_F64, 0, 0, 1, 1, 1);
}

static void test_gemm_bad_sizes(void **state)
{
    (void)state;
    double a[4] = {0}, b[4] = {0}, c[4] = {0};
    int rc = hs_gemm(test_ctx(), HS_F64, 0, 0, 2, 2, 2, 1.0, a, 1, b, 2, 0.0, c, 2);
    assert_int_equal(rc, HS_ERR_RUNTIME);
    assert_non_null(strstr(hs_error_message(), "inconsistent sizes"));
    hs_error_clear();
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_elementwise_f64), cmocka_unit_test(test_elementwise_f32),
    cmocka_unit_test(test_dot_nrm2),        cmocka_unit_test(test_dot_thread_independent),
    cmocka_unit_test(test_pcg_update),      cmocka_unit_test(test_gemm),
    cmocka_unit_test(test_gemm_bad_sizes),
};
TEST_MAIN("blas", tests)
