/* Radix sort: ascending order by an independent comparator, permutation, stability, special floats. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/memory.h"
#include "kernels/reduce/sort.h"
#include "test_util.h"

/* CUDA tiles hold 4096 keys (old kernel) or 6144, 7680 and 8832 (new: mixed widths; keys alone or
 * with values of their width; 32-bit pairs): sizes around one and two tiles, and many tiles. */
static const size_t g_sizes[] = {0,    1,    2,    31,   1000,  4095,  4096,  4097,           6143,
                                 6144, 6145, 7679, 7681, 8833, 12289, 15361, (1u << 20) + 7};
#define NSIZES (sizeof g_sizes / sizeof g_sizes[0])

/* Three-way compare by value (not by the sort's bit trick): NaN last, -0.0 before +0.0. */
static int cmp_key(hs_dtype t, const void *a, const void *b)
{
    switch (t) {
    case HS_U32: { uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b; return (x > y) - (x < y); }
    case HS_U64: { uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b; return (x > y) - (x < y); }
    case HS_I32: { int32_t x = *(const int32_t *)a, y = *(const int32_t *)b; return (x > y) - (x < y); }
    case HS_I64: { int64_t x = *(const int64_t *)a, y = *(const int64_t *)b; return (x > y) - (x < y); }
    default: {
        double x = t == HS_F32 ? *(const float *)a : *(const double *)a;
        double y = t == HS_F32 ? *(const float *)b : *(const double *)b;
        if (isnan(x) || isnan(y)) return isnan(x) - isnan(y);
        if (x == y) return (signbit(y) != 0) - (signbit(x) != 0);
        return (x > y) - (x < y);
    }
    }
}

/* Random keys; every other size draws from a few values so duplicates are frequent; floats get
 * negatives, zeros of both signs, infinities and NaNs of both signs mixed in. */
static void fill_keys(hs_dtype t, void *k, size_t n, uint64_t seed, int few)
{
    hs_rng s;
    hs_rng_seed(&s, seed, 0);
    size_t kb = hs_dtype_size(t);
    for (size_t i = 0; i < n; i++) {
        uint64_t r = hs_rng_next(&s);
        if (few) r %= 13;
        if (t == HS_F32 || t == HS_F64) {
            static const double special[] = {-0.0, 0.0, INFINITY, -INFINITY, NAN, -NAN, -1.5, 1e-310};
            double v = few ? (double)r - 6.0 : ((double)(int64_t)r) * 1e-9;
            if (r % 7 == 3) v = special[(r >> 8) % 8];
            if (t == HS_F32) ((float *)k)[i] = (float)v;
            else ((double *)k)[i] = v;
        } else if (kb == 4) {
            ((uint32_t *)k)[i] = (uint32_t)(r ^ (r >> 32));
        } else {
            ((uint64_t *)k)[i] = r;
        }
    }
}

/* vals hold the original positions: sorted order, values follow keys, equal keys keep order. */
static int g_ref; /* 1: the tests run the reference kernels hs_sort_*_ref */

static void check_sorted(hs_dtype t, size_t n, const char *orig, const char *k, const uint64_t *pos, int vb)
{
    size_t kb = hs_dtype_size(t);
    for (size_t i = 0; i < n; i++) {
        if (i + 1 < n) {
            int c = cmp_key(t, k + i * kb, k + (i + 1) * kb);
            if (c > 0) fail_msg("%s keys out of order at %zu of %zu", hs_dtype_name(t), i, n);
        }
        if (!pos) continue;
        uint64_t p = pos[i];
        if (p >= n || memcmp(orig + p * kb, k + i * kb, kb) != 0)
            fail_msg("%s value %zu (position %llu) does not follow its key", hs_dtype_name(t), i, (unsigned long long)p);
        if (i + 1 < n && memcmp(k + i * kb, k + (i + 1) * kb, kb) == 0 && pos[i + 1] <= p)
            fail_msg("%s sort not stable at %zu (vb %d)", hs_dtype_name(t), i, vb);
    }
}

static void run_case(hs_dtype t, size_t n, int vb, uint64_t seed, int few)
{
    size_t kb = hs_dtype_size(t);
    char *orig = malloc(n * kb + 1), *k = malloc(n * kb + 1);
    uint64_t *pos = malloc(n * sizeof *pos + 1);
    void *vals = malloc(n * 8 + 1);
    fill_keys(t, orig, n, seed, few);
    for (size_t i = 0; i < n; i++) {
        if (vb == 4) ((uint32_t *)vals)[i] = (uint32_t)i;
        else ((uint64_t *)vals)[i] = i;
    }
    void *dk = test_upload(orig, n * kb), *dv = vb ? test_upload(vals, n * vb) : NULL;
    if (vb && g_ref) TEST_OK(hs_sort_pairs_ref(test_ctx(), t, vb == 4 ? HS_U32 : HS_F64, n, dk, dv));
    else if (vb) TEST_OK(hs_sort_pairs(test_ctx(), t, vb == 4 ? HS_U32 : HS_F64, n, dk, dv));
    else if (g_ref) TEST_OK(hs_sort_keys_ref(test_ctx(), t, n, dk));
    else TEST_OK(hs_sort_keys(test_ctx(), t, n, dk));
    test_download(k, dk, n * kb);
    if (vb) {
        test_download(vals, dv, n * vb);
        for (size_t i = 0; i < n; i++) pos[i] = vb == 4 ? ((uint32_t *)vals)[i] : ((uint64_t *)vals)[i];
    }
    check_sorted(t, n, orig, k, vb ? pos : NULL, vb);
    if (!vb) { /* keys only: the multiset must be unchanged, checked through a pairs sort */
        run_case(t, n, 8, seed, few);
    }
    hs_mem_free(test_ctx(), dk);
    hs_mem_free(test_ctx(), dv);
    free(orig); free(k); free(pos); free(vals);
}

static void check_key(hs_dtype t)
{
    for (size_t s = 0; s < NSIZES; s++) {
        run_case(t, g_sizes[s], 0, 500 + s, s & 1);
        run_case(t, g_sizes[s], 4, 700 + s, !(s & 1));
    }
}
static void test_u32(void **state) { (void)state; check_key(HS_U32); }
static void test_u64(void **state) { (void)state; check_key(HS_U64); }
static void test_i32(void **state) { (void)state; check_key(HS_I32); }
static void test_i64(void **state) { (void)state; check_key(HS_I64); }
static void test_f32(void **state) { (void)state; check_key(HS_F32); }
static void test_f64(void **state) { (void)state; check_key(HS_F64); }

/* The previous CUDA kernels, kept as the test references hs_sort_*_ref, must stay correct. */
static void test_old_impl(void **state)
{
    (void)state;
    if (!test_on_gpu()) return; /* the CPU backend has one implementation */
    g_ref = 1;
    check_key(HS_U32);
    check_key(HS_F64);
    g_ref = 0;
}

/* Every special value at once, in a known order. */
static void test_special_floats(void **state)
{
    (void)state;
    double in[] = {NAN, 1.0, -0.0, INFINITY, -1.0, 0.0, -INFINITY, -NAN, -0.0, 2.5e-320, -2.5e-320, 0.0};
    size_t n = sizeof in / sizeof in[0];
    double *d = test_upload(in, sizeof in), out[sizeof in / sizeof in[0]];
    TEST_OK(hs_sort_keys(test_ctx(), HS_F64, n, d));
    test_download(out, d, sizeof out);
    const double expect[] = {-INFINITY, -1.0, -2.5e-320, -0.0, -0.0, 0.0, 0.0, 2.5e-320, 1.0, INFINITY};
    for (size_t i = 0; i < 10; i++) {
        assert_true(out[i] == expect[i]);
        assert_int_equal(signbit(out[i]) != 0, signbit(expect[i]) != 0);
    }
    assert_true(isnan(out[10]) && isnan(out[11]));
    hs_mem_free(test_ctx(), d);
}

static void test_errors(void **state)
{
    (void)state;
    uint32_t k[2] = {2, 1};
    assert_int_equal(hs_sort_keys(test_ctx(), HS_C128, 2, k), HS_ERR_INPUT);
    assert_int_equal(hs_sort_pairs(test_ctx(), HS_U32, HS_C128, 2, k, k), HS_ERR_INPUT);
    hs_error_clear();
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_u32), cmocka_unit_test(test_u64), cmocka_unit_test(test_i32),
    cmocka_unit_test(test_i64), cmocka_unit_test(test_f32), cmocka_unit_test(test_f64),
    cmocka_unit_test(test_special_floats), cmocka_unit_test(test_errors), cmocka_unit_test(test_old_impl),
};
TEST_MAIN("sort", tests)
