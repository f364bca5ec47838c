/* The kernel RNG (Philox-4x32-10): published and independently computed answers, uniformity,
 * independence of streams, the sequential wrapper, and the CPU and CUDA fills bit for bit. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/memory.h"
#include "kernels/rng/rng.h"
#include "test_util.h"

/* Random123 1.14 kat_vectors, "philox4x32 10" (counter words, key words, output words). */
static void test_random123_answers(void **state)
{
    (void)state;
    static const uint32_t kat[3][10] = {
        {0, 0, 0, 0, 0, 0, 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
        {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0x408f276d, 0x41c83b0e, 0xa20bc7c6,
         0x6d5451fd},
        {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0, 0xd16cfe09, 0x94fdcceb, 0x5001e420,
         0x24126ea1},
    };
    for (int k = 0; k < 3; k++) {
        hs_rng_block c = {{kat[k][0], kat[k][1], kat[k][2], kat[k][3]}};
        hs_rng_block r = hs_philox4x32_10(c, kat[k][4], kat[k][5]);
        for (int i = 0; i < 4; i++) assert_int_equal(r.v[i], kat[k][6 + i]);
    }
}

/* Values printed by scripts/rng_philox.py, a Python reimplementation that reproduces the
 * Random123 answers above; they pin down the (seed, stream, counter) layout and the conversions. */
static void test_layout_answers(void **state)
{
    (void)state;
    assert_true(hs_rng_u64(0, 0, 0) == 0xe169c58d6627e8d5ull);
    assert_true(hs_rng_u64(12345, 1, 0) == 0xed9b7e2b7c2d3f06ull);
    assert_true(hs_rng_u64(12345, 1, 1) == 0xa10a0e549e61c7caull);
    assert_true(hs_rng_u64(UINT64_MAX, UINT64_MAX, UINT64_MAX) == 0x41c83b0e408f276dull);
    assert_true(hs_rng_u64(0xDEADBEEFCAFEF00Dull, 0x0000000700000003ull, 123456789) == 0x4f51e3ad757cdc14ull);
    assert_true(hs_rng_u01(12345, 1, 0) == 0.92815388261458487);
    assert_true(hs_rng_u01(7, 0, 42) == 0.72065936602708092);
    TEST_LE(fabs(hs_rng_normal(12345, 1, 0) - -0.37082146180464942), 1e-15);
    TEST_LE(fabs(hs_rng_normal(7, 0, 42) - -0.79940410649339888), 1e-15);
}

/* Pearson chi-square of n uniforms in nb bins, (seed, stream) fixed. */
static double chi_square(uint64_t seed, uint64_t stream, size_t n, int nb)
{
    size_t *cnt = calloc((size_t)nb, sizeof *cnt);
    for (size_t i = 0; i < n; i++) {
        double u = hs_rng_u01(seed, stream, i);
        assert_true(u >= 0.0 && u < 1.0);
        cnt[(int)(u * nb)]++;
    }
    double e = (double)n / nb, x2 = 0;
    for (int b = 0; b < nb; b++) x2 += (cnt[b] - e) * (cnt[b] - e) / e;
    free(cnt);
    return x2;
}

/* 100 bins, 99 degrees of freedom: mean 99, sd 14; 99 + 6 sd is exceeded with probability ~1e-7. */
static void test_uniformity(void **state)
{
    (void)state;
    for (uint64_t stream = 0; stream < 3; stream++) TEST_LE(chi_square(2026, stream, 1000000, 100), 99 + 6 * 14.07);
    /* a generator stuck on few values fails: the same test on u rounded to 1/20 */
    size_t cnt[100] = {0};
    for (size_t i = 0; i < 100000; i++) cnt[(int)(floor(hs_rng_u01(1, 0, i) * 20) / 20 * 100)]++;
    double x2 = 0;
    for (int b = 0; b < 100; b++) x2 += (cnt[b] - 1000.0) * (cnt[b] - 1000.0) / 1000.0;
    assert_true(x2 > 99 + 6 * 14.07);
    /* normals: mean 0, variance 1, and the share beyond 2 sd (4.55 %) */
    double s = 0, s2 = 0;
    size_t tail = 0, n = 1000000;
    for (size_t i = 0; i < n; i++) {
        double g = hs_rng_normal(9, 4, i);
        s += g, s2 += g * g, tail += fabs(g) > 2;
    }
    TEST_LE(fabs(s / n), 5 / sqrt((double)n));
    TEST_LE(fabs(s2 / n - 1), 5 * sqrt(2.0 / n));
    TEST_LE(fabs((double)tail / n - 0.0455003), 5 * sqrt(0.0455 * 0.9545 / n));
}

/* Sample correlation of two sequences of uniforms. */
static double correlation(uint64_t s1, uint64_t t1, uint64_t s2, uint64_t t2, size_t n, size_t lag)
{
    double a = 0, b = 0, ab = 0, aa = 0, bb = 0;
    for (size_t i = 0; i < n; i++) {
        double x = hs_rng_u01(s1, t1, i), y = hs_rng_u01(s2, t2, i + lag);
        a += x, b += y, ab += x * y, aa += x * x, bb += y * y;
    }
    double cov = ab / n - a / n * b / n;
    return cov / sqrt((aa / n - a / n * a / n) * (bb / n - b / n * b / n));
}

/* Neighbouring streams, seeds and ranks are uncorrelated, also when shifted against each other. */
static void test_streams_independent(void **state)
{
    (void)state;
    size_t n = 200000;
    double bound = 5 / sqrt((double)n);
    for (size_t lag = 0; lag < 3; lag++) {
        TEST_LE(fabs(correlation(5, 0, 5, 1, n, lag)), bound);
        TEST_LE(fabs(correlation(5, 0, 6, 0, n, lag)), bound);
        TEST_LE(fabs(correlation(5, hs_rng_stream(1, 0), 5, hs_rng_stream(1, 1), n, lag)), bound);
    }
    TEST_LE(fabs(correlation(5, 0, 5, 0, n, 1)), bound); /* successive draws of one stream */
    assert_true(correlation(5, 0, 5, 0, n, 0) > 0.999);   /* and the check can fail */
    /* no shared values between the first draws of neighbouring streams */
    int same = 0;
    for (uint64_t i = 0; i < 1000; i++)
        for (uint64_t j = 0; j < 1000; j++) same += hs_rng_u64(5, 0, i) == hs_rng_u64(5, 1, j);
    assert_int_equal(same, 0);
    assert_true(hs_rng_stream(3, 7) == (3ull << 32 | 7));
}

/* The sequential wrapper is the counter-based generator at 0, 1, 2, ...; below() stays in range
 * and is uniform. */
static void test_sequential(void **state)
{
    (void)state;
    hs_rng r;
    hs_rng_seed(&r, 77, 3);
    for (uint64_t i = 0; i < 100; i++) assert_true(hs_rng_next(&r) == hs_rng_u64(77, 3, i));
    assert_true(hs_rng_uniform(&r) == hs_rng_u01(77, 3, 100));
    assert_true(hs_rng_gaussian(&r) == hs_rng_normal(77, 3, 101));
    size_t cnt[7] = {0};
    for (int i = 0; i < 70000; i++) {
        uint64_t v = hs_rng_below(&r, 7);
        assert_true(v < 7);
        cnt[v]++;
    }
    double x2 = 0;
    for (int b = 0; b < 7; b++) x2 += (cnt[b] - 10000.0) * (cnt[b] - 10000.0) / 10000.0;
    TEST_LE(x2, 6 + 6 * 3.47);
    assert_true(hs_rng_below(&r, 1) == 0);
}

/* The fills on the test context's backend equal the inline host functions. */
static void check_fill(hs_ctx *ctx, const char *what)
{
    size_t n = 100003;
    uint64_t *d = NULL, *h = malloc(n * sizeof *h);
    TEST_OK(hs_mem_alloc(ctx, n * sizeof *h, (void **)&d));
    TEST_OK(hs_rng_fill_u64(ctx, 31, 9, 1000, n, d));
    TEST_OK(hs_mem_copy(ctx, h, d, n * sizeof *h, HS_COPY_D2H));
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) bad += h[i] != hs_rng_u64(31, 9, 1000 + i);
    TEST_OK(hs_rng_fill_uniform(ctx, 31, 9, 1000, n, (double *)d));
    TEST_OK(hs_mem_copy(ctx, h, d, n * sizeof *h, HS_COPY_D2H));
    for (size_t i = 0; i < n; i++) {
        double u;
        memcpy(&u, &h[i], sizeof u);
        bad += u != hs_rng_u01(31, 9, 1000 + i);
    }
    if (bad) fail_msg("%s: %zu of %zu values differ from the host generator", what, bad, 2 * n);
    hs_mem_free(ctx, d);
    free(h);
}

static void test_fill_backend(void **state)
{
    (void)state;
    check_fill(test_ctx(), test_on_gpu() ? "cuda fill" : "cpu fill");
}

static void test_fill_cpu_vs_cuda(void **state)
{
    (void)state;
    if (!HS_HAVE_CUDA || hs_cuda_device_count() == 0) {
        print_message("no GPU here: the CUDA fill is not compared with the CPU generator\n");
        skip();
    }
    hs_ctx *ctx = test_ctx();
    const char *was = hs_device_name(ctx->device);
    TEST_OK(hs_ctx_set_device(ctx, "cuda", 1));
    check_fill(ctx, "cuda fill");
    TEST_OK(hs_ctx_set_device(ctx, was, 1));
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_random123_answers), cmocka_unit_test(test_layout_answers),
    cmocka_unit_test(test_uniformity),        cmocka_unit_test(test_streams_independent),
    cmocka_unit_test(test_sequential),        cmocka_unit_test(test_fill_backend),
    cmocka_unit_test(test_fill_cpu_vs_cuda),
};
TEST_MAIN("rng", tests)
