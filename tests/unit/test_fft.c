/* Unit tests of the local FFT plans: every kind and precision against a naive O(N^2) DFT. */
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/fft/fft.h"
#include "kernels/memory.h"

#define TOL64 1e-12
#define TOL32 1e-5

static double tol_of(hs_dtype p) { return p == HS_F64 ? TOL64 : TOL32; }
static size_t real_size(hs_dtype p) { return p == HS_F64 ? sizeof(double) : sizeof(float); }

static int64_t prod(int rank, const int64_t *n)
{
    int64_t N = 1;
    for (int k = 0; k < rank; k++) N *= n[k];
    return N;
}

/* y = sum_j x[j] exp(sign 2 pi i sum_d j_d k_d / n_d), per transform, in long double with the
 * phase reduced exactly (integer j_d k_d mod n_d) so the reference is good to ~1e-17. */
static void naive_dft(int rank, const int64_t *n, int64_t batch, int sign, const double *x, double *y)
{
    int64_t N = prod(rank, n);
    for (int64_t b = 0; b < batch; b++) {
        const double *xb = x + 2 * b * N;
        double *yb = y + 2 * b * N;
        for (int64_t k = 0; k < N; k++) {
            long double re = 0, im = 0;
            for (int64_t j = 0; j < N; j++) {
                long double turns = 0;
                int64_t jr = j, kr = k;
                for (int d = rank - 1; d >= 0; d--) {
                    turns += (long double)((jr % n[d]) * (kr % n[d]) % n[d]) / n[d];
                    jr /= n[d];
                    kr /= n[d];
                }
                long double a = sign * 2 * 3.14159265358979323846264338327950288L * (turns - floorl(turns));
                long double c = cosl(a), s = sinl(a);
                re += xb[2 * j] * c - xb[2 * j + 1] * s;
                im += xb[2 * j] * s + xb[2 * j + 1] * c;
            }
            yb[2 * k] = (double)re;
            yb[2 * k + 1] = (double)im;
        }
    }
}

/* The n_last/2+1 half of full complex spectra (R2C layout). */
static void half_of(int rank, const int64_t *n, int64_t batch, const double *full, double *half)
{
    int64_t nl = n[rank - 1], h = nl / 2 + 1, lead = prod(rank, n) / nl * batch;
    for (int64_t l = 0; l < lead; l++)
        for (int64_t k = 0; k < h; k++) {
            half[2 * (l * h + k)] = full[2 * (l * nl + k)];
            half[2 * (l * h + k) + 1] = full[2 * (l * nl + k) + 1];
        }
}

/* Host values in the plan's precision from doubles (and back), rounding to float for f32. */
static void *to_prec(hs_dtype p, const double *x, size_t count)
{
    void *v = malloc(count * real_size(p) + 16);
    for (size_t i = 0; i < count; i++) {
        if (p == HS_F64) ((double *)v)[i] = x[i];
        else ((float *)v)[i] = (float)x[i];
    }
    return v;
}
static void from_prec(hs_dtype p, const void *v, double *x, size_t count)
{
    for (size_t i = 0; i < count; i++) x[i] = p == HS_F64 ? ((const double *)v)[i] : ((const float *)v)[i];
}
static void round_to_prec(hs_dtype p, double *x, size_t count)
{
    if (p == HS_F32)
        for (size_t i = 0; i < count; i++) x[i] = (float)x[i];
}

/* Run one plan on the test device: host doubles in (count_in scalars), host doubles out. */
static void run_plan(hs_fft_plan *plan, hs_dtype p, int dir, const double *x, size_t count_in, double *y,
                     size_t count_out, int inplace)
{
    hs_ctx *ctx = test_ctx();
    size_t bi = count_in * real_size(p), bo = count_out * real_size(p);
    size_t bmax = bi > bo ? bi : bo;
    void *hin = to_prec(p, x, count_in), *hout = malloc(bo + 16);
    void *din = NULL, *dout = NULL;
    TEST_OK(hs_mem_alloc(ctx, bmax + 16, &din));
    if (!inplace) TEST_OK(hs_mem_alloc(ctx, bo + 16, &dout));
    else dout = din;
    TEST_OK(hs_mem_copy(ctx, din, hin, bi, HS_COPY_H2D));
    TEST_OK(hs_fft_execute(plan, dir, din, dout));
    TEST_OK(hs_mem_copy(ctx, hout, dout, bo, HS_COPY_D2H));
    from_prec(p, hout, y, count_out);
    hs_mem_free(ctx, din);
    if (!inplace) hs_mem_free(ctx, dout);
    free(hin);
    free(hout);
}

static void check_c2c(int rank, const int64_t *n, int64_t batch, hs_dtype p, int inplace, uint64_t seed)
{
    int64_t N = prod(rank, n);
    size_t cnt = (size_t)(2 * N * batch);
    double *x = malloc(cnt * sizeof *x), *y = malloc(cnt * sizeof *y), *ref = malloc(cnt * sizeof *ref);
    test_fill_f64(x, cnt, seed, -1, 1);
    round_to_prec(p, x, cnt);
    hs_fft_plan *plan;
    TEST_OK(hs_fft_plan_create(test_ctx(), rank, n, batch, HS_FFT_C2C, p, &plan));
    for (int dir = -1; dir <= 1; dir += 2) {
        naive_dft(rank, n, batch, dir, x, ref);
        run_plan(plan, p, dir, x, cnt, y, cnt, inplace);
        double err = test_rel_err_f64(y, ref, cnt);
        if (!(err <= tol_of(p)))
            fail_msg("C2C rank %d n0 %lld batch %lld %s dir %d inplace %d: rel err %.3e > %.1e", rank,
                     (long long)n[0], (long long)batch, hs_dtype_name(p), dir, inplace, err, tol_of(p));
    }
    hs_fft_plan_destroy(plan);
    free(x), free(y), free(ref);
}

/* R2C against the naive DFT of the real input and against our own C2C of the same input. */
static void check_r2c(int rank, const int64_t *n, int64_t batch, hs_dtype p, uint64_t seed)
{
    int64_t N = prod(rank, n), H = N / n[rank - 1] * (n[rank - 1] / 2 + 1);
    size_t nr = (size_t)(N * batch), nc = 2 * nr, nh = (size_t)(2 * H * batch);
    double *xr = malloc(nr * sizeof *xr), *xc = calloc(nc, sizeof *xc), *full = malloc(nc * sizeof *full);
    double *ref = malloc(nh * sizeof *ref), *y = malloc(nh * sizeof *y), *yc = malloc(nc * sizeof *yc);
    test_fill_f64(xr, nr, seed, -1, 1);
    round_to_prec(p, xr, nr);
    for (size_t i = 0; i < nr; i++) xc[2 * i] = xr[i];
    naive_dft(rank, n, batch, HS_FFT_FORWARD, xc, full);
    half_of(rank, n, batch, full, ref);
    hs_fft_plan *plan, *cplan;
    TEST_OK(hs_fft_plan_create(test_ctx(), rank, n, batch, HS_FFT_R2C, p, &plan));
    run_plan(plan, p, HS_FFT_FORWARD, xr, nr, y, nh, 0);
    double err = test_rel_err_f64(y, ref, nh);
    if (!(err <= tol_of(p)))
        fail_msg("R2C rank %d n0 %lld %s: rel err %.3e", rank, (long long)n[0], hs_dtype_name(p), err);
    TEST_OK(hs_fft_plan_create(test_ctx(), rank, n, batch, HS_FFT_C2C, p, &cplan));
    run_plan(cplan, p, HS_FFT_FORWARD, xc, nc, yc, nc, 0);
    half_of(rank, n, batch, yc, ref);
    TEST_LE(test_rel_err_f64(y, ref, nh), tol_of(p));
    hs_fft_plan_destroy(plan);
    hs_fft_plan_destroy(cplan);
    free(xr), free(xc), free(full), free(ref), free(y), free(yc);
}

/* C2R of the exact half spectrum of x gives N x. */
static void check_c2r(int rank, const int64_t *n, int64_t batch, hs_dtype p, uint64_t seed)
{
    int64_t N = prod(rank, n), H = N / n[rank - 1] * (n[rank - 1] / 2 + 1);
    size_t nr = (size_t)(N * batch), nc = 2 * nr, nh = (size_t)(2 * H * batch);
    double *xr = malloc(nr * sizeof *xr), *xc = calloc(nc, sizeof *xc), *full = malloc(nc * sizeof *full);
    double *half = malloc(nh * sizeof *half), *y = malloc(nr * sizeof *y), *ref = malloc(nr * sizeof *ref);
    test_fill_f64(xr, nr, seed, -1, 1);
    for (size_t i = 0; i < nr; i++) xc[2 * i] = xr[i];
    naive_dft(rank, n, batch, HS_FFT_FORWARD, xc, full);
    half_of(rank, n, batch, full, half);
    round_to_prec(p, half, nh);
    /* the reference from the rounded spectrum: the naive C2R is the real part of the backward DFT
     * of the Hermitian extension, which for an exact spectrum is N x */
    for (size_t i = 0; i < nr; i++) ref[i] = (double)N * xr[i];
    hs_fft_plan *plan;
    TEST_OK(hs_fft_plan_create(test_ctx(), rank, n, batch, HS_FFT_C2R, p, &plan));
    run_plan(plan, p, HS_FFT_BACKWARD, half, nh, y, nr, 0);
    double err = test_rel_err_f64(y, ref, nr);
    if (!(err <= tol_of(p)))
        fail_msg("C2R rank %d n0 %lld %s: rel err %.3e", rank, (long long)n[0], hs_dtype_name(p), err);
    hs_fft_plan_destroy(plan);
    free(xr), free(xc), free(full), free(half), free(y), free(ref);
}

static const int64_t sizes_1d[] = {1, 2, 3, 5, 8, 12, 17, 64};
static const int64_t shape_2d[] = {6, 10}, shape_3d[] = {4, 6, 8};
static const hs_dtype precs[] = {HS_F64, HS_F32};

static void test_c2c_vs_naive(void **state)
{
    (void)state;
    for (int pi = 0; pi < 2; pi++) {
        for (size_t i = 0; i < sizeof sizes_1d / sizeof sizes_1d[0]; i++) {
            check_c2c(1, &sizes_1d[i], 3, precs[pi], 0, 100 + i);
            check_c2c(1, &sizes_1d[i], 3, precs[pi], 1, 200 + i);
        }
        check_c2c(2, shape_2d, 3, precs[pi], 0, 300);
        check_c2c(2, shape_2d, 1, precs[pi], 1, 301);
        check_c2c(3, shape_3d, 3, precs[pi], 0, 302);
        check_c2c(3, shape_3d, 3, precs[pi], 1, 303);
    }
}

static void test_r2c_vs_naive(void **state)
{
    (void)state;
    static const int64_t odd_2d[] = {5, 7}, unit_3d[] = {3, 1, 1};
    for (int pi = 0; pi < 2; pi++) {
        for (size_t i = 0; i < sizeof sizes_1d / sizeof sizes_1d[0]; i++) check_r2c(1, &sizes_1d[i], 3, precs[pi], 400 + i);
        check_r2c(2, shape_2d, 3, precs[pi], 500);
        check_r2c(2, odd_2d, 3, precs[pi], 501);
        check_r2c(3, shape_3d, 3, precs[pi], 502);
        check_r2c(3, unit_3d, 2, precs[pi], 503);
    }
}

static void test_c2r_vs_naive(void **state)
{
    (void)state;
    static const int64_t odd_2d[] = {5, 7}, unit_3d[] = {3, 1, 1};
    for (int pi = 0; pi < 2; pi++) {
        for (size_t i = 0; i < sizeof sizes_1d / sizeof sizes_1d[0]; i++) check_c2r(1, &sizes_1d[i], 3, precs[pi], 600 + i);
        check_c2r(2, shape_2d, 3, precs[pi], 700);
        check_c2r(2, odd_2d, 3, precs[pi], 701);
        check_c2r(3, shape_3d, 3, precs[pi], 702);
        check_c2r(3, unit_3d, 2, precs[pi], 703);
    }
}

/* backward(forward(x)) / N == x, and Parseval sum |X|^2 = N sum |x|^2, including a large prime. */
static void check_round_trip(int rank, const int64_t *n, int64_t batch, hs_dtype p, double tol, uint64_t seed)
{
    hs_ctx *ctx = test_ctx();
    int64_t N = prod(rank, n);
    size_t cnt = (size_t)(2 * N * batch), bytes = cnt * real_size(p);
    double *x = malloc(cnt * sizeof *x), *X = malloc(cnt * sizeof *X), *y = malloc(cnt * sizeof *y);
    test_fill_f64(x, cnt, seed, -1, 1);
    round_to_prec(p, x, cnt);
    void *h = to_prec(p, x, cnt), *d1, *d2;
    TEST_OK(hs_mem_alloc(ctx, bytes, &d1));
    TEST_OK(hs_mem_alloc(ctx, bytes, &d2));
    TEST_OK(hs_mem_copy(ctx, d1, h, bytes, HS_COPY_H2D));
    hs_fft_plan *plan;
    TEST_OK(hs_fft_plan_create(ctx, rank, n, batch, HS_FFT_C2C, p, &plan));
    TEST_OK(hs_fft_execute(plan, HS_FFT_FORWARD, d1, d2));
    TEST_OK(hs_mem_copy(ctx, h, d2, bytes, HS_COPY_D2H));
    from_prec(p, h, X, cnt);
    TEST_OK(hs_fft_execute(plan, HS_FFT_BACKWARD, d2, d2));
    TEST_OK(hs_fft_normalize(plan, d2));
    TEST_OK(hs_mem_copy(ctx, h, d2, bytes, HS_COPY_D2H));
    from_prec(p, h, y, cnt);
    TEST_LE(test_rel_err_f64(y, x, cnt), tol);
    long double ex = 0, eX = 0;
    for (size_t i = 0; i < cnt; i++) ex += (long double)x[i] * x[i], eX += (long double)X[i] * X[i];
    TEST_LE(fabs((double)(eX / ((long double)N * ex)) - 1.0), tol);
    hs_fft_plan_destroy(plan);
    hs_mem_free(ctx, d1);
    hs_mem_free(ctx, d2);
    free(x), free(X), free(y), free(h);
}

static void test_round_trip_and_parseval(void **state)
{
    (void)state;
    static const int64_t n31 = 31, big_prime = 1000003, n2d[] = {6, 10}, n3d[] = {4, 6, 8};
    for (int pi = 0; pi < 2; pi++) {
        check_round_trip(1, &n31, 3, precs[pi], tol_of(precs[pi]), 800);
        check_round_trip(2, n2d, 3, precs[pi], tol_of(precs[pi]), 801);
        check_round_trip(3, n3d, 2, precs[pi], tol_of(precs[pi]), 802);
    }
    /* a large prime length goes through Bluestein / Rader (a chirp convolution of about 2^21
     * points), whose error is several times a direct FFT's, so the bounds are looser */
    check_round_trip(1, &big_prime, 1, HS_F64, 1e-11, 803);
    check_round_trip(1, &big_prime, 1, HS_F32, 1e-4, 804);
}

/* Real round trip: C2R(R2C(x)) / N == x. */
static void test_real_round_trip(void **state)
{
    (void)state;
    hs_ctx *ctx = test_ctx();
    static const int64_t n3d[] = {4, 6, 9};
    for (int pi = 0; pi < 2; pi++) {
        hs_dtype p = precs[pi];
        size_t nr = 3 * 4 * 6 * 9, nh = 2 * 3 * 4 * 6 * 5;
        double *x = malloc(nr * sizeof *x), *y = malloc(nr * sizeof *y);
        test_fill_f64(x, nr, 900 + pi, -1, 1);
        round_to_prec(p, x, nr);
        void *h = to_prec(p, x, nr), *dr, *dc;
        TEST_OK(hs_mem_alloc(ctx, nr * real_size(p), &dr));
        TEST_OK(hs_mem_alloc(ctx, nh * real_size(p), &dc));
        TEST_OK(hs_mem_copy(ctx, dr, h, nr * real_size(p), HS_COPY_H2D));
        hs_fft_plan *f, *b;
        TEST_OK(hs_fft_plan_create(ctx, 3, n3d, 3, HS_FFT_R2C, p, &f));
        TEST_OK(hs_fft_plan_create(ctx, 3, n3d, 3, HS_FFT_C2R, p, &b));
        assert_int_equal(hs_fft_in_elems(f), (int64_t)nr);
        assert_int_equal(hs_fft_out_elems(f), (int64_t)nh / 2);
        TEST_OK(hs_fft_execute(f, HS_FFT_FORWARD, dr, dc));
        TEST_OK(hs_mem_zero(ctx, dr, nr * real_size(p)));
        TEST_OK(hs_fft_execute(b, HS_FFT_BACKWARD, dc, dr));
        TEST_OK(hs_fft_normalize(b, dr));
        TEST_OK(hs_mem_copy(ctx, h, dr, nr * real_size(p), HS_COPY_D2H));
        from_prec(p, h, y, nr);
        TEST_LE(test_rel_err_f64(y, x, nr), tol_of(p));
        hs_fft_plan_destroy(f);
        hs_fft_plan_destroy(b);
        hs_mem_free(ctx, dr);
        hs_mem_free(ctx, dc);
        free(x), free(y), free(h);
    }
}

/* A transform along the middle axis of a 3 x 7 x 5 array: the strided plan vs the naive DFT. */
static void test_strided_axis(void **state)
{
    (void)state;
    const int64_t A = 3, B = 7, C = 5;
    size_t cnt = (size_t)(2 * A * B * C);
    for (int pi = 0; pi < 2; pi++) {
        hs_dtype p = precs[pi];
        double *x = malloc(cnt * sizeof *x), *y = malloc(cnt * sizeof *y), *ref = malloc(cnt * sizeof *ref);
        double *line = malloc(2 * B * sizeof *line), *out = malloc(2 * B * sizeof *out);
        test_fill_f64(x, cnt, 1000 + pi, -1, 1);
        round_to_prec(p, x, cnt);
        for (int64_t a = 0; a < A; a++)
            for (int64_t c = 0; c < C; c++) {
                for (int64_t b = 0; b < B; b++) memcpy(line + 2 * b, x + 2 * ((a * B + b) * C + c), 2 * sizeof(double));
                naive_dft(1, &B, 1, HS_FFT_FORWARD, line, out);
                for (int64_t b = 0; b < B; b++) memcpy(ref + 2 * ((a * B + b) * C + c), out + 2 * b, 2 * sizeof(double));
            }
        hs_fft_plan *plan;
        TEST_OK(hs_fft_plan_create_strided(test_ctx(), B, C, C, 1, A, B * C, p, &plan));
        run_plan(plan, p, HS_FFT_FORWARD, x, cnt, y, cnt, 0);
        TEST_LE(test_rel_err_f64(y, ref, cnt), tol_of(p));
        run_plan(plan, p, HS_FFT_FORWARD, x, cnt, y, cnt, 1);
        TEST_LE(test_rel_err_f64(y, ref, cnt), tol_of(p));
        hs_fft_plan_destroy(plan);
        free(x), free(y), free(ref), free(line), free(out);
    }
}

static void test_bad_arguments(void **state)
{
    (void)state;
    hs_ctx *ctx = test_ctx();
    hs_fft_plan *plan = NULL;
    int64_t zero = 0, eight = 8, four[] = {2, 2, 2, 2};
    assert_int_equal(hs_fft_plan_create(ctx, 1, &zero, 1, HS_FFT_C2C, HS_F64, &plan), HS_ERR_INPUT);
    assert_int_equal(hs_fft_plan_create(ctx, 4, four, 1, HS_FFT_C2C, HS_F64, &plan), HS_ERR_INPUT);
    assert_int_equal(hs_fft_plan_create(ctx, 1, &eight, -1, HS_FFT_C2C, HS_F64, &plan), HS_ERR_INPUT);
    assert_int_equal(hs_fft_plan_create(ctx, 1, &eight, 1, HS_FFT_C2C, HS_I32, &plan), HS_ERR_INPUT);
    hs_error_clear();
    /* an empty batch is a valid plan whose execute does nothing */
    TEST_OK(hs_fft_plan_create(ctx, 1, &eight, 0, HS_FFT_C2C, HS_F64, &plan));
    TEST_OK(hs_fft_execute(plan, HS_FFT_FORWARD, NULL, NULL));
    hs_fft_plan_destroy(plan);
    void *d;
    TEST_OK(hs_mem_alloc(ctx, 64 * sizeof(double), &d));
    TEST_OK(hs_fft_plan_create(ctx, 1, &eight, 1, HS_FFT_R2C, HS_F64, &plan));
    assert_int_equal(hs_fft_execute(plan, HS_FFT_FORWARD, d, d), HS_ERR_INPUT);
    assert_int_equal(hs_fft_execute(plan, HS_FFT_BACKWARD, d, (char *)d + 256), HS_ERR_INPUT);
    assert_int_equal(hs_fft_execute(plan, 0, d, (char *)d + 256), HS_ERR_INPUT);
    hs_error_clear();
    hs_fft_plan_destroy(plan);
    hs_mem_free(ctx, d);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_c2c_vs_naive),
    cmocka_unit_test(test_r2c_vs_naive),
    cmocka_unit_test(test_c2r_vs_naive),
    cmocka_unit_test(test_round_trip_and_parseval),
    cmocka_unit_test(test_real_round_trip),
    cmocka_unit_test(test_strided_axis),
    cmocka_unit_test(test_bad_arguments),
};

TEST_MAIN("fft", tests)
