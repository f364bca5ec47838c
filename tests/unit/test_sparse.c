/* CSR family against naive host loops: SpMV (every kernel), diagonal, row maps, structure checks, Laplacians. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/memory.h"
#include "kernels/sparse/sparse.h"
#include "test_util.h"

/* A host CSR matrix with int32 indices. */
typedef struct {
    int64_t nrows, ncols, nnz;
    int32_t *rowptr, *colind;
    double *val;
} host_csr;

static void host_free(host_csr *h)
{
    free(h->rowptr), free(h->colind), free(h->val);
    memset(h, 0, sizeof *h);
}

/* Random structure: every 5th row empty, up to max_row entries elsewhere, columns random (repeats
 * allowed, unsorted), values in [-1, 1). */
static host_csr random_csr(int64_t nrows, int64_t ncols, int max_row, uint64_t seed)
{
    host_csr h = {nrows, ncols, 0, NULL, NULL, NULL};
    hs_rng s;
    hs_rng_seed(&s, seed, 0);
    h.rowptr = malloc(sizeof *h.rowptr * (size_t)(nrows + 1));
    h.rowptr[0] = 0;
    for (int64_t i = 0; i < nrows; i++) {
        int len = (i % 5 == 3 || ncols == 0) ? 0 : (int)(hs_rng_next(&s) % (uint64_t)(max_row + 1));
        h.rowptr[i + 1] = h.rowptr[i] + len;
    }
    h.nnz = h.rowptr[nrows];
    h.colind = malloc(sizeof *h.colind * (size_t)(h.nnz + 1));
    h.val = malloc(sizeof *h.val * (size_t)(h.nnz + 1));
    for (int64_t k = 0; k < h.nnz; k++) h.colind[k] = (int32_t)(hs_rng_next(&s) % (uint64_t)ncols);
    test_fill_f64(h.val, (size_t)h.nnz, seed + 1, -1, 1);
    return h;
}

static void spmv_ref(const host_csr *h, double alpha, const double *x, double beta, const double *y0, double *y)
{
    for (int64_t i = 0; i < h->nrows; i++) {
        long double s = 0;
        for (int32_t k = h->rowptr[i]; k < h->rowptr[i + 1]; k++) s += (long double)h->val[k] * x[h->colind[k]];
        y[i] = (double)(alpha * s + (beta == 0 ? 0.0L : (long double)beta * y0[i]));
    }
}

static const struct {
    hs_spmv_kernel kernel;
    int width;
} kernels[] = {{HS_SPMV_AUTO, 0},  {HS_SPMV_CUSPARSE_ALG1, 0}, {HS_SPMV_CUSPARSE_ALG2, 0},
               {HS_SPMV_NATIVE, 0}, {HS_SPMV_NATIVE, 1},        {HS_SPMV_NATIVE, 4},
               {HS_SPMV_NATIVE, 32}};
static const double coeffs[][2] = {{1, 0}, {2.5, -0.5}, {0, 1.5}, {-1, 1}, {0, 0}};

/* y = alpha A x + beta y with every kernel and coefficient pair against the host loop. */
static void check_spmv(const host_csr *h, uint64_t seed)
{
    hs_ctx *ctx = test_ctx();
    hs_csr *A = NULL;
    TEST_OK(hs_csr_create(ctx, h->nrows, h->ncols, h->nnz, h->rowptr, h->colind, h->val, &A));
    size_t xb = (size_t)h->ncols * 8, yb = (size_t)h->nrows * 8;
    double *x = malloc(xb + 8), *y0 = malloc(yb + 8), *ref = malloc(yb + 8), *got = malloc(yb + 8);
    test_fill_f64(x, (size_t)h->ncols, seed, -1, 1);
    test_fill_f64(y0, (size_t)h->nrows, seed + 7, -1, 1);
    double *dx = test_upload(x, xb), *dy = test_upload(y0, yb);
    for (size_t kk = 0; kk < sizeof kernels / sizeof *kernels; kk++) {
        TEST_OK(hs_csr_set_spmv_kernel(A, kernels[kk].kernel, kernels[kk].width));
        for (size_t c = 0; c < sizeof coeffs / sizeof *coeffs; c++) {
            double alpha = coeffs[c][0], beta = coeffs[c][1];
            if (beta == 0) /* y must not be read: NaN would leak into the result */
                for (int64_t i = 0; i < h->nrows; i++) got[i] = NAN;
            else
                memcpy(got, y0, yb);
            if (yb) TEST_OK(hs_mem_copy(ctx, dy, got, yb, HS_COPY_H2D));
            TEST_OK(hs_csr_spmv(A, alpha, dx, beta, dy));
            test_download(got, dy, yb);
            spmv_ref(h, alpha, x, beta, y0, ref);
            double err = test_rel_err_f64(got, ref, (size_t)h->nrows);
            if (!(err <= 1e-13))
                fail_msg("%lld x %lld, kernel %s, alpha %g beta %g: error %.3e", (long long)h->nrows,
                         (long long)h->ncols, hs_csr_spmv_kernel_name(A), alpha, beta, err);
        }
    }
    hs_mem_free(ctx, dx);
    hs_mem_free(ctx, dy);
    hs_csr_destroy(A);
    free(x), free(y0), free(ref), free(got);
}

static void test_spmv_random(void **state)
{
    (void)state;
    /* {2000, 3000, 20}: about 8 entries per row, so that the stream kernel's 32-row groups fall on
     * both sides of its 256-product buffer; {257, 4000, 150}: every group over it */
    static const int64_t shapes[][3] = {{0, 5, 3},        {1, 1, 1},        {31, 17, 6},      {17, 31, 9},
                                        {1000, 1003, 12}, {2000, 3000, 20}, {257, 4000, 150}, {40, 0, 0}};
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
        host_csr h = random_csr(shapes[s][0], shapes[s][1], (int)shapes[s][2], 100 + s);
        check_spmv(&h, 200 + s);
        host_free(&h);
    }
}

/* A 1D Laplacian of odd size against the stencil written out. */
static void test_spmv_large(void **state)
{
    (void)state;
    hs_ctx *ctx = test_ctx();
    int64_t n[3] = {1000003, 1, 1};
    hs_csr *A = NULL;
    TEST_OK(hs_csr_laplacian(ctx, 1, n, &A));
    assert_int_equal(A->nnz, 3 * n[0] - 2);
    size_t bytes = (size_t)n[0] * 8;
    double *x = malloc(bytes), *ref = malloc(bytes), *got = malloc(bytes);
    test_fill_f64(x, (size_t)n[0], 11, -1, 1);
    for (int64_t i = 0; i < n[0]; i++) ref[i] = 2 * x[i] - (i > 0 ? x[i - 1] : 0) - (i < n[0] - 1 ? x[i + 1] : 0);
    double *dx = test_upload(x, bytes), *dy = test_upload(x, bytes);
    for (size_t kk = 0; kk < sizeof kernels / sizeof *kernels; kk++) {
        TEST_OK(hs_csr_set_spmv_kernel(A, kernels[kk].kernel, kernels[kk].width));
        TEST_OK(hs_csr_spmv(A, 1.0, dx, 0.0, dy));
        test_download(got, dy, bytes);
        TEST_LE(test_rel_err_f64(got, ref, (size_t)n[0]), 1e-13);
    }
    hs_mem_free(ctx, dx);
    hs_mem_free(ctx, dy);
    hs_csr_destroy(A);
    free(x), free(ref), free(got);
}

static void test_diagonal(void **state)
{
    (void)state;
    hs_ctx *ctx = test_ctx();
    static const int64_t shapes[][2] = {{1, 1}, {50, 30}, {30, 50}, {1001, 1001}};
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
        host_csr h = random_csr(shapes[s][0], shapes[s][1], 8, 300 + s);
        /* put some diagonal entries in, twice in places, so that repeats are summed */
        for (int64_t i = 0; i < h.nrows; i++)
            for (int32_t k = h.rowptr[i]; k < h.rowptr[i + 1]; k++)
                if ((k + i) % 3 == 0 && i < h.ncols) h.colind[k] = (int32_t)i;
        size_t nr = (size_t)shapes[s][0];
        double *ref = calloc(nr, 8), *got = malloc(nr * 8);
        for (int64_t i = 0; i < h.nrows; i++)
            for (int32_t k = h.rowptr[i]; k < h.rowptr[i + 1]; k++)
                if (h.colind[k] == i) ref[i] += h.val[k];
        hs_csr *A = NULL;
        TEST_OK(hs_csr_create(ctx, h.nrows, h.ncols, h.nnz, h.rowptr, h.colind, h.val, &A));
        double *dd = test_upload(NULL, (size_t)h.nrows * 8);
        TEST_OK(hs_csr_diagonal(A, dd));
        test_download(got, dd, (size_t)h.nrows * 8);
        TEST_LE(test_rel_err_f64(got, ref, (size_t)h.nrows), 1e-15);
        hs_mem_free(ctx, dd);
        hs_csr_destroy(A);
        host_free(&h);
        free(ref), free(got);
    }
}

/* Each malformed input is an input error whose message names the problem, and no matrix is made. */
static void expect_input_error(int64_t nrows, int64_t ncols, int64_t nnz, const int32_t *rp, const int32_t *ci,
                               const double *v, const char *words)
{
    hs_csr *A = (hs_csr *)&A;
    int rc = hs_csr_create(test_ctx(), nrows, ncols, nnz, rp, ci, v, &A);
    if (rc != HS_ERR_INPUT || !strstr(hs_error_message(), words))
        fail_msg("expected an input error mentioning '%s', got %d: %s", words, rc, hs_error_message());
    assert_null(A);
    hs_error_clear();
}

static void test_structure_errors(void **state)
{
    (void)state;
    int32_t rp_ok[] = {0, 2, 3}, ci_ok[] = {0, 1, 2};
    double v[] = {1, 2, 3};
    int32_t rp_start[] = {1, 2, 3}, rp_down[] = {0, 3, 2}, rp_end[] = {0, 1, 2};
    int32_t ci_big[] = {0, 3, 1}, ci_neg[] = {0, -1, 1};
    expect_input_error(2, 3, 3, rp_start, ci_ok, v, "rowptr[0] = 1");
    expect_input_error(2, 3, 3, rp_down, ci_ok, v, "must not decrease");
    expect_input_error(2, 3, 3, rp_end, ci_ok, v, "must equal nnz");
    expect_input_error(2, 3, 3, rp_ok, ci_big, v, "colind[1] = 3");
    expect_input_error(2, 3, 3, rp_ok, ci_neg, v, "colind[1] = -1");
    expect_input_error(2, 2, 3, rp_ok, ci_ok, v, "outside the columns");
    expect_input_error(-1, 3, 3, rp_ok, ci_ok, v, "negative size");
    expect_input_error(2, 3, 3, NULL, ci_ok, v, "rowptr");
    expect_input_error(2, 3, 3, rp_ok, NULL, v, "colind");
    expect_input_error((int64_t)1 << 32, 3, 3, rp_ok, ci_ok, v, "32-bit");
    /* and the valid one goes through, but a 2 x 3 matrix is no operator */
    hs_csr *A = NULL;
    TEST_OK(hs_csr_create(test_ctx(), 2, 3, 3, rp_ok, ci_ok, v, &A));
    hs_linop op = hs_csr_linop(A);
    double *dx = test_upload(v, 3 * 8), *dy = test_upload(NULL, 3 * 8);
    assert_int_equal(op.apply(op.data, dx, dy), HS_ERR_INPUT);
    assert_non_null(strstr(hs_error_message(), "square"));
    hs_error_clear();
    hs_mem_free(test_ctx(), dx);
    hs_mem_free(test_ctx(), dy);
    hs_csr_destroy(A);
}

/* Dense reference of the Laplacian from the grid definition. */
static double lap_entry(int ndim, const int64_t n[3], int64_t r, int64_t c)
{
    int64_t a[3], b[3], dist = 0;
    for (int d = 0; d < 3; d++) {
        int64_t nd = d < ndim ? n[d] : 1;
        a[d] = r % nd, b[d] = c % nd;
        r /= nd, c /= nd;
        dist += llabs(a[d] - b[d]);
    }
    return dist == 0 ? 2.0 * ndim : dist == 1 ? -1.0 : 0.0;
}

static void test_laplacian_rows(void **state)
{
    (void)state;
    static const int64_t grids[][4] = {{1, 7, 1, 1}, {2, 4, 3, 1}, {3, 3, 4, 5}};
    for (size_t g = 0; g < sizeof grids / sizeof *grids; g++) {
        int ndim = (int)grids[g][0];
        const int64_t *n = &grids[g][1];
        int64_t N = n[0] * n[1] * n[2], *rp, *ci, nnz;
        double *v;
        TEST_OK(hs_laplacian_rows(ndim, n, 0, N, &rp, &ci, &v, &nnz));
        double *dense = calloc((size_t)(N * N), 8);
        for (int64_t i = 0; i < N; i++)
            for (int64_t k = rp[i]; k < rp[i + 1]; k++) {
                if (k > rp[i]) assert_true(ci[k] > ci[k - 1]); /* sorted, no repeats */
                dense[i * N + ci[k]] += v[k];
            }
        for (int64_t i = 0; i < N; i++)
            for (int64_t j = 0; j < N; j++)
                if (dense[i * N + j] != lap_entry(ndim, n, i, j))
                    fail_msg("ndim %d: A(%lld,%lld) = %g, expected %g", ndim, (long long)i, (long long)j,
                             dense[i * N + j], lap_entry(ndim, n, i, j));
        /* a block of rows is the same slice of the whole */
        int64_t *rp2, *ci2, nnz2, start = N / 3, cnt = N / 2;
        double *v2;
        TEST_OK(hs_laplacian_rows(ndim, n, start, cnt, &rp2, &ci2, &v2, &nnz2));
        assert_int_equal(nnz2, rp[start + cnt] - rp[start]);
        for (int64_t k = 0; k < nnz2; k++) {
            assert_int_equal(ci2[k], ci[rp[start] + k]);
            assert_true(v2[k] == v[rp[start] + k]);
        }
        free(rp), free(ci), free(v), free(rp2), free(ci2), free(v2), free(dense);
    }
    int64_t n[3] = {4, 4, 4}, *rp, *ci, nnz;
    double *v;
    assert_int_equal(hs_laplacian_rows(4, n, 0, 1, &rp, &ci, &v, &nnz), HS_ERR_INPUT);
    hs_error_clear();
    assert_int_equal(hs_laplacian_rows(3, n, 60, 5, &rp, &ci, &v, &nnz), HS_ERR_INPUT);
    hs_error_clear();
}

/* Compressed rows update only the mapped entries of y. */
static void test_rowmap(void **state)
{
    (void)state;
    hs_ctx *ctx = test_ctx();
    host_csr h = random_csr(37, 23, 7, 500);
    int64_t nout = 120;
    int32_t *map = malloc(sizeof *map * 37);
    for (int i = 0; i < 37; i++) map[i] = 3 * i + (i % 2);
    double *x = malloc(23 * 8), *y0 = malloc(nout * 8), *ref = malloc(nout * 8), *got = malloc(nout * 8), row[37];
    test_fill_f64(x, 23, 501, -1, 1);
    test_fill_f64(y0, (size_t)nout, 502, -1, 1);
    spmv_ref(&h, 1.0, x, 0.0, NULL, row);
    memcpy(ref, y0, nout * 8);
    for (int i = 0; i < 37; i++) ref[map[i]] = -2.0 * row[i] + 1.0 * y0[map[i]];
    hs_csr *A = NULL;
    TEST_OK(hs_csr_create(ctx, h.nrows, h.ncols, h.nnz, h.rowptr, h.colind, h.val, &A));
    TEST_OK(hs_csr_set_rowmap(A, nout, map));
    double *dx = test_upload(x, 23 * 8), *dy = test_upload(y0, nout * 8);
    TEST_OK(hs_csr_spmv(A, -2.0, dx, 1.0, dy));
    test_download(got, dy, nout * 8);
    TEST_LE(test_rel_err_f64(got, ref, (size_t)nout), 1e-13);
    map[5] = map[4]; /* not increasing */
    assert_int_equal(hs_csr_set_rowmap(A, nout, map), HS_ERR_INPUT);
    hs_error_clear();
    hs_mem_free(ctx, dx);
    hs_mem_free(ctx, dy);
    hs_csr_destroy(A);
    host_free(&h);
    free(map), free(x), free(y0), free(ref), free(got);
}

static void test_diag_inverse(void **state)
{
    (void)state;
    hs_ctx *ctx = test_ctx();
    int64_t n = 1031, bad = 0, first = 0;
    double *d = malloc(n * 8), *got = malloc(n * 8);
    test_fill_f64(d, (size_t)n, 600, 0.5, 4);
    double *dd = test_upload(d, n * 8), *di = test_upload(NULL, n * 8);
    TEST_OK(hs_diag_inverse(ctx, n, dd, di, &bad, &first));
    assert_int_equal(bad, 0);
    assert_int_equal(first, -1);
    test_download(got, di, n * 8);
    for (int64_t i = 0; i < n; i++) assert_true(fabs(got[i] * d[i] - 1) <= 1e-15);
    d[700] = 0, d[90] = -1, d[1030] = NAN;
    TEST_OK(hs_mem_copy(ctx, dd, d, n * 8, HS_COPY_H2D));
    TEST_OK(hs_diag_inverse(ctx, n, dd, di, &bad, &first));
    assert_int_equal(bad, 3);
    assert_int_equal(first, 90);
    hs_mem_free(ctx, dd);
    hs_mem_free(ctx, di);
    free(d), free(got);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_spmv_random),   cmocka_unit_test(test_spmv_large),
    cmocka_unit_test(test_diagonal),      cmocka_unit_test(test_structure_errors),
    cmocka_unit_test(test_laplacian_rows), cmocka_unit_test(test_rowmap),
    cmocka_unit_test(test_diag_inverse),
};
TEST_MAIN("sparse", tests)
