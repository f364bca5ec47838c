/* MPI tests of the distributed slab FFT: equal to the local FFT of the whole array on every rank count. */
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/fft/dfft.h"
#include "kernels/memory.h"

static size_t real_size(hs_dtype p) { return p == HS_F64 ? sizeof(double) : sizeof(float); }
static double tol_of(hs_dtype p) { return p == HS_F64 ? 1e-12 : 1e-5; }

/* Scalar i of a host array in the plan's precision, as double. */
static double get(hs_dtype p, const void *a, size_t i)
{
    return p == HS_F64 ? ((const double *)a)[i] : ((const float *)a)[i];
}

/* The global input, identical on every rank (seeded), in the plan's precision. */
static void *global_input(hs_dtype p, size_t scalars, uint64_t seed)
{
    void *x = malloc(scalars * real_size(p) + 16);
    if (p == HS_F64) test_fill_f64(x, scalars, seed, -1, 1);
    else test_fill_f32(x, scalars, seed, -1, 1);
    return x;
}

/* Device copy of host bytes, in an allocation of at least `alloc` bytes. */
static void *to_dev(const void *h, size_t bytes, size_t alloc)
{
    hs_ctx *ctx = test_ctx();
    void *d = NULL;
    TEST_OK(hs_mem_alloc(ctx, alloc > bytes ? alloc : bytes, &d));
    if (bytes) TEST_OK(hs_mem_copy(ctx, d, h, bytes, HS_COPY_H2D));
    return d;
}

/* The whole spectrum from the local FFT of the whole array (this rank's reference). */
static void *reference_spectrum(int rank, const int64_t *n, hs_fft_kind kind, hs_dtype p, const void *x,
                                size_t in_scalars, size_t spec_scalars)
{
    void *din = to_dev(x, in_scalars * real_size(p), 0), *dout = to_dev(NULL, 0, spec_scalars * real_size(p));
    hs_fft_plan *plan;
    TEST_OK(hs_fft_plan_create(test_ctx(), rank, n, 1, kind, p, &plan));
    TEST_OK(hs_fft_execute(plan, HS_FFT_FORWARD, din, dout));
    void *ref = malloc(spec_scalars * real_size(p) + 16);
    test_download(ref, dout, spec_scalars * real_size(p));
    hs_fft_plan_destroy(plan);
    hs_mem_free(test_ctx(), din);
    hs_mem_free(test_ctx(), dout);
    return ref;
}

/* Relative 2-norm error over all ranks of a (local) against b (local). */
static double global_rel_err(hs_dtype p, const void *a, const void *b, size_t scalars)
{
    double s[2] = {0, 0};
    for (size_t i = 0; i < scalars; i++) {
        double d = get(p, a, i) - get(p, b, i);
        s[0] += d * d;
        s[1] += get(p, b, i) * get(p, b, i);
    }
    TEST_OK(hs_allreduce_sum(test_ctx()->comm, s, 2));
    return s[1] > 0 ? sqrt(s[0] / s[1]) : sqrt(s[0]);
}

static void check_case(int rank, const int64_t *n, hs_fft_kind kind, hs_dtype p, int inplace, uint64_t seed)
{
    hs_ctx *ctx = test_ctx();
    int real = kind == HS_FFT_R2C;
    size_t rs = real_size(p), cs = 2 * rs, isc = real ? 1 : 2; /* scalars per input element */
    int64_t N = n[0] * n[1] * (rank == 3 ? n[2] : 1), plane = N / n[0];
    hs_dfft_plan *plan;
    TEST_OK(hs_dfft_plan_create(ctx, ctx->comm, rank, n, kind, p, &plan));
    int64_t shape[3], is, ic, os, oc;
    size_t in_elems, out_elems;
    hs_dfft_spectral_shape(plan, shape);
    TEST_OK(hs_dfft_local_layout(plan, &is, &ic, &os, &oc, &in_elems, &out_elems));
    assert_int_equal(in_elems, (size_t)(ic * plane));
    assert_int_equal(out_elems, (size_t)(oc * shape[0] * shape[2]));
    int64_t n0 = shape[0], m1 = shape[1], t = shape[2];

    void *x = global_input(p, (size_t)N * isc, seed);
    void *ref = reference_spectrum(rank, n, kind, p, x, (size_t)N * isc, (size_t)(n0 * m1 * t) * 2);
    /* this rank's slice of the reference, in the transposed output layout */
    void *want = malloc(out_elems * cs + 16), *got = malloc(out_elems * cs + 16);
    for (int64_t j = 0; j < oc; j++)
        for (int64_t i = 0; i < n0; i++)
            memcpy((char *)want + (size_t)((j * n0 + i) * t) * cs, (char *)ref + (size_t)((i * m1 + os + j) * t) * cs,
                   (size_t)t * cs);

    size_t ib = in_elems * rs * isc, ob = out_elems * cs, big = ib > ob ? ib : ob;
    const char *xin = (const char *)x + (size_t)(is * plane) * rs * isc;
    void *din = to_dev(xin, ib, big), *dout = inplace ? din : to_dev(NULL, 0, big);
    TEST_OK(hs_dfft_execute(plan, HS_FFT_FORWARD, din, dout));
    TEST_OK(hs_ctx_sync(ctx));
    test_download(got, dout, ob);
    double err = global_rel_err(p, got, want, out_elems * 2);
    if (!(err <= tol_of(p)))
        fail_msg("forward %s rank %d n %lldx%lld %s inplace %d on %d ranks: rel err %.3e", real ? "R2C" : "C2C", rank,
                 (long long)n[0], (long long)n[1], hs_dtype_name(p), inplace, ctx->size, err);

    if (!inplace) { /* the forward leaves its input as it was */
        void *kept = malloc(ib + 16);
        test_download(kept, din, ib);
        assert_int_equal(ib ? memcmp(kept, xin, ib) : 0, 0);
        free(kept);
    }
    /* backward returns the input layout; it must not touch its input */
    void *back = inplace ? dout : to_dev(NULL, 0, big);
    TEST_OK(hs_dfft_execute(plan, HS_FFT_BACKWARD, dout, back));
    if (!inplace) {
        test_download(got, dout, ob);
        TEST_LE(global_rel_err(p, got, want, out_elems * 2), tol_of(p));
    }
    TEST_OK(hs_dfft_normalize(plan, back));
    TEST_OK(hs_ctx_sync(ctx));
    void *y = malloc(ib + 16);
    test_download(y, back, ib);
    err = global_rel_err(p, y, xin, in_elems * isc);
    if (!(err <= tol_of(p)))
        fail_msg("round trip %s rank %d %s inplace %d on %d ranks: rel err %.3e", real ? "R2C" : "C2C", rank,
                 hs_dtype_name(p), inplace, ctx->size, err);

    hs_mem_free(ctx, din);
    if (!inplace) hs_mem_free(ctx, dout), hs_mem_free(ctx, back);
    hs_dfft_plan_destroy(plan);
    free(x), free(ref), free(want), free(got), free(y);
}

static const hs_dtype precs[] = {HS_F64, HS_F32};

static void test_dfft_2d(void **state)
{
    (void)state;
    static const int64_t a[] = {10, 12}, b[] = {3, 5}, c[] = {7, 9};
    for (int pi = 0; pi < 2; pi++)
        for (int k = 0; k < 2; k++) {
            hs_fft_kind kind = k ? HS_FFT_R2C : HS_FFT_C2C;
            check_case(2, a, kind, precs[pi], 0, 10 + pi);
            check_case(2, b, kind, precs[pi], 0, 20 + pi); /* fewer planes than 4 ranks */
            check_case(2, c, kind, precs[pi], 1, 30 + pi);
        }
}

static void test_dfft_3d(void **state)
{
    (void)state;
    static const int64_t a[] = {6, 9, 8}, b[] = {5, 3, 7}, c[] = {2, 6, 1};
    for (int pi = 0; pi < 2; pi++)
        for (int k = 0; k < 2; k++) {
            hs_fft_kind kind = k ? HS_FFT_R2C : HS_FFT_C2C;
            check_case(3, a, kind, precs[pi], 0, 40 + pi);
            check_case(3, a, kind, precs[pi], 1, 50 + pi);
            check_case(3, b, kind, precs[pi], 0, 60 + pi);
            check_case(3, c, kind, precs[pi], 0, 70 + pi);
        }
}

static void test_dfft_bad_arguments(void **state)
{
    (void)state;
    hs_ctx *ctx = test_ctx();
    hs_dfft_plan *plan = NULL;
    static const int64_t n[] = {4, 0, 4};
    assert_int_equal(hs_dfft_plan_create(ctx, ctx->comm, 3, n, HS_FFT_C2C, HS_F64, &plan), HS_ERR_INPUT);
    assert_int_equal(hs_dfft_plan_create(ctx, ctx->comm, 1, n, HS_FFT_C2C, HS_F64, &plan), HS_ERR_INPUT);
    assert_null(plan);
    hs_error_clear();
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_dfft_2d),
    cmocka_unit_test(test_dfft_3d),
    cmocka_unit_test(test_dfft_bad_arguments),
};

TEST_MAIN("dfft_mpi", tests)
