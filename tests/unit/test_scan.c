/* Scans against sequential host scans: exact for integers (with wraparound), long-double bound for floats. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "kernels/memory.h"
#include "kernels/reduce/scan.h"
#include "test_util.h"

/* CUDA tiles (aligned data, sm_90: 2816 elements for 8-byte types, 3840 for f32, 5376 for 32-bit
 * integers, 256 tiles a round; otherwise 6144, 4096 or 8192; the old kernel 2048 or 4096): sizes
 * around one and two tiles and many tiles; test_many_tiles covers many rounds. */
static const size_t g_sizes[] = {1,    2,     31,    1000,  2049,  2817,   4095,    4096,         4097, 5377,
                                 8191, 8192,  8193,  10753, 16385, 131073, 1000003, (1u << 20) + 7};
#define NSIZES (sizeof g_sizes / sizeof g_sizes[0])

/* Random integers over the full range, so 32-bit sums overflow and must wrap like the reference. */
static void fill_int(void *x, hs_dtype t, size_t n, uint64_t seed)
{
    hs_rng s;
    hs_rng_seed(&s, seed, 0);
    for (size_t i = 0; i < n; i++) {
        uint64_t r = hs_rng_next(&s);
        if (hs_dtype_size(t) == 4) ((uint32_t *)x)[i] = (uint32_t)r;
        else ((uint64_t *)x)[i] = r >> 3;
    }
}

/* The host's prefix of n integers of type t (wrapping like the device), inclusive or exclusive. */
static void int_prefix_ref(hs_dtype t, int excl, size_t n, const void *in, void *ref)
{
    size_t es = hs_dtype_size(t);
    uint64_t acc = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t v = es == 4 ? ((const uint32_t *)in)[i] : ((const uint64_t *)in)[i];
        if (!excl) acc += v;
        if (es == 4) ((uint32_t *)ref)[i] = (uint32_t)acc;
        else ((uint64_t *)ref)[i] = acc;
        if (excl) acc += v;
    }
}

static int g_ref; /* 1: the tests run the reference kernel hs_scan_ref */
static int scan(hs_dtype t, int excl, size_t n, const void *in, void *out)
{
    return g_ref ? hs_scan_ref(test_ctx(), t, excl, n, in, out) : hs_scan(test_ctx(), t, excl, n, in, out);
}

/* Runs the scan out of place, then in place, and checks both against ref (exact compare). */
static void run_both(hs_dtype t, int excl, size_t n, const void *in, void **out_h, void **inplace_h)
{
    size_t bytes = n * hs_dtype_size(t);
    void *d_in = test_upload(in, bytes), *d_out = NULL;
    TEST_OK(hs_mem_alloc(test_ctx(), bytes, &d_out));
    TEST_OK(scan(t, excl, n, d_in, d_out));
    *out_h = test_download_new(d_out, bytes);
    TEST_OK(scan(t, excl, n, d_in, d_in));
    *inplace_h = test_download_new(d_in, bytes);
    hs_mem_free(test_ctx(), d_in);
    hs_mem_free(test_ctx(), d_out);
}

static void check_int(hs_dtype t)
{
    size_t es = hs_dtype_size(t);
    for (size_t s = 0; s < NSIZES; s++)
        for (int excl = 0; excl <= 1; excl++) {
            size_t n = g_sizes[s];
            void *in = malloc(n * es), *ref = malloc(n * es), *out, *inpl;
            fill_int(in, t, n, 40 + s);
            int_prefix_ref(t, excl, n, in, ref);
            run_both(t, excl, n, in, &out, &inpl);
            assert_memory_equal(out, ref, n * es);
            assert_memory_equal(inpl, ref, n * es);
            free(in); free(ref); free(out); free(inpl);
        }
}
static void test_i32(void **state) { (void)state; check_int(HS_I32); }
static void test_u32(void **state) { (void)state; check_int(HS_U32); }
static void test_i64(void **state) { (void)state; check_int(HS_I64); }
static void test_u64(void **state) { (void)state; check_int(HS_U64); }

/* |out_i - ref_i| <= tol * sum_{j<=i} |in_j|: the natural bound for a float prefix sum. */
static void check_float_sizes(hs_dtype t, double tol, const size_t *sizes, size_t nsizes)
{
    size_t es = hs_dtype_size(t);
    for (size_t s = 0; s < nsizes; s++)
        for (int excl = 0; excl <= 1; excl++) {
            size_t n = sizes[s];
            void *in = malloc(n * es), *out, *inpl;
            if (t == HS_F64) test_fill_f64(in, n, 60 + s, -1.0, 2.0);
            else test_fill_f32(in, n, 60 + s, -1.0f, 2.0f);
            run_both(t, excl, n, in, &out, &inpl);
            long double acc = 0, abs_acc = 0;
            double worst = 0;
            for (size_t i = 0; i < n; i++) {
                double v = t == HS_F64 ? ((double *)in)[i] : ((float *)in)[i];
                if (!excl) { acc += v; abs_acc += fabs(v); }
                double o = t == HS_F64 ? ((double *)out)[i] : ((float *)out)[i];
                double e = (double)(fabsl(o - acc) / (abs_acc > 0 ? abs_acc : 1));
                worst = e > worst ? e : worst;
                if (excl) { acc += v; abs_acc += fabs(v); }
            }
            TEST_LE(worst, tol);
            assert_memory_equal(out, inpl, n * es); /* in place gives the very same numbers */
            free(in); free(out); free(inpl);
        }
}
static void check_float(hs_dtype t, double tol) { check_float_sizes(t, tol, g_sizes, NSIZES); }
/* f64: bound ~ chunk length * eps worst case; random rounding keeps it far below. */
static void test_f64(void **state) { (void)state; check_float(HS_F64, 1e-12); }
/* f32: accumulated in double, so only the final rounding to float (6e-8) remains. */
static void test_f32(void **state) { (void)state; check_float(HS_F32, 1e-6); }

/* ctx->deterministic == 0 must give the same accuracy (the CUDA scan keeps its ordered fold anyway). */
static void test_nondeterministic(void **state)
{
    (void)state;
    if (!test_on_gpu()) return; /* the CPU backend has one implementation */
    int prev = test_ctx()->deterministic;
    test_ctx()->deterministic = 0;
    check_float(HS_F64, 1e-12);
    check_float(HS_F32, 1e-6);
    test_ctx()->deterministic = prev;
}

/* The previous CUDA kernel, kept as the test reference hs_scan_ref, must stay correct. */
static void test_old_impl(void **state)
{
    (void)state;
    if (!test_on_gpu()) return; /* the CPU backend has one implementation */
    g_ref = 1;
    check_int(HS_U32);
    check_int(HS_I64);
    check_float(HS_F64, 1e-12);
    g_ref = 0;
}

static void test_errors(void **state)
{
    (void)state;
    double x[4] = {1, 2, 3, 4};
    TEST_OK(hs_scan(test_ctx(), HS_F64, 0, 0, NULL, NULL));
    assert_int_equal(hs_scan(test_ctx(), HS_C128, 0, 2, x, x), HS_ERR_INPUT);
    assert_int_equal(hs_scan(test_ctx(), HS_F64, 0, 3, x, x + 1), HS_ERR_INPUT);
    hs_error_clear();
}

/* Thousands of tiles in flight, several times over: the look-back must find every predecessor's
 * published value however the tiles interleave (integers exact against the host's prefix). */
static void test_many_tiles(void **state)
{
    (void)state;
    if (!test_on_gpu()) return; /* the CPU backend has no tiles */
    static const hs_dtype types[] = {HS_U32, HS_I32, HS_I64, HS_U64};
    for (size_t ti = 0; ti < sizeof types / sizeof *types; ti++) {
        hs_dtype t = types[ti];
        size_t es = hs_dtype_size(t), n = (1u << 25) + 3, bytes = n * es;
        void *in = malloc(bytes), *ref = malloc(bytes), *got = malloc(bytes);
        fill_int(in, t, n, 70 + ti);
        int_prefix_ref(t, 0, n, in, ref);
        void *d_in = test_upload(in, bytes), *d_out = NULL;
        TEST_OK(hs_mem_alloc(test_ctx(), bytes, &d_out));
        for (int r = 0; r < 5; r++) {
            TEST_OK(hs_mem_zero(test_ctx(), d_out, bytes));
            TEST_OK(hs_scan(test_ctx(), t, 0, n, d_in, d_out));
            test_download(got, d_out, bytes);
            size_t bad = n;
            for (size_t i = 0; i < n && bad == n; i++)
                if (memcmp((char *)got + i * es, (char *)ref + i * es, es)) bad = i;
            if (bad < n) fail_msg("%s scan of %zu elements, repetition %d: first wrong element %zu", hs_dtype_name(t), n, r, bad);
        }
        /* one element in: pointers off 16-byte alignment take the kernel that does not need it */
        TEST_OK(hs_scan(test_ctx(), t, 0, n - 1, (char *)d_in + es, (char *)d_out + es));
        test_download(got, d_out, bytes);
        for (size_t i = 1; i < n; i++) {
            uint64_t want = es == 4 ? (uint64_t)(((uint32_t *)ref)[i] - ((uint32_t *)in)[0])
                                    : ((uint64_t *)ref)[i] - ((uint64_t *)in)[0];
            uint64_t have = es == 4 ? ((uint32_t *)got)[i] : ((uint64_t *)got)[i];
            if (have != want) fail_msg("%s scan of %zu unaligned elements: first wrong element %zu", hs_dtype_name(t), n - 1, i - 1);
        }
        hs_mem_free(test_ctx(), d_in);
        hs_mem_free(test_ctx(), d_out);
        free(in), free(ref), free(got);
    }
    /* floats over many rounds too (f32: 3840-element tiles, 6 stages), same bounds as above */
    static const size_t big[] = {(1u << 25) + 3};
    check_float_sizes(HS_F32, 1e-6, big, 1);
    check_float_sizes(HS_F64, 1e-12, big, 1);
}

/* Calls of changing size and type in a row: on the GPU each call's look-back words are zeroed by
 * the call before (two halves in turn), so a small call must clean up after a large one and a
 * 64-bit call (two words a tile) after a 32-bit one.  Integers, exact against the host. */
static void test_call_sequence(void **state)
{
    (void)state;
    static const struct {
        hs_dtype t;
        size_t n;
    } calls[] = {{HS_U64, (1u << 22) + 3}, {HS_U32, 1},    {HS_U32, 5000},          {HS_U64, (1u << 22) + 3},
                 {HS_U32, (1u << 23) + 9}, {HS_U64, 7},    {HS_I32, (1u << 23) + 9}, {HS_I64, (1u << 22) + 3},
                 {HS_U32, 2817},           {HS_U64, 3000}, {HS_U64, (1u << 22) + 3}};
    for (size_t c = 0; c < sizeof calls / sizeof *calls; c++) {
        hs_dtype t = calls[c].t;
        size_t n = calls[c].n, bytes = n * hs_dtype_size(t);
        void *in = malloc(bytes), *ref = malloc(bytes), *got = malloc(bytes);
        fill_int(in, t, n, 90 + c);
        int_prefix_ref(t, 0, n, in, ref);
        void *d_in = test_upload(in, bytes), *d_out = NULL;
        TEST_OK(hs_mem_alloc(test_ctx(), bytes, &d_out));
        TEST_OK(hs_scan(test_ctx(), t, 0, n, d_in, d_out));
        test_download(got, d_out, bytes);
        if (memcmp(got, ref, bytes)) fail_msg("call %zu (%s, %zu elements) differs from the host's prefix", c, hs_dtype_name(t), n);
        hs_mem_free(test_ctx(), d_in);
        hs_mem_free(test_ctx(), d_out);
        free(in), free(ref), free(got);
    }
}

/* Bitwise reproducible run to run, and on the CPU for any OpenMP thread count. */
static void test_determinism(void **state)
{
    (void)state;
    /* on the GPU enough tiles (5958 on sm_90, 23 rounds) that prefixes are gathered while
     * earlier tiles are still in flight */
    size_t n = test_on_gpu() ? (1u << 24) + 5 : (1u << 20) + 7, bytes = n * sizeof(double);
    double *x = malloc(bytes);
    test_fill_f64(x, n, 9, -1.0, 1.0);
    void *d_in = test_upload(x, bytes), *d_out = NULL;
    TEST_OK(hs_mem_alloc(test_ctx(), bytes, &d_out));
    TEST_OK(hs_scan(test_ctx(), HS_F64, 0, n, d_in, d_out));
    double *first = test_download_new(d_out, bytes);
    int reps = test_on_gpu() ? 3 : 1;
    for (int r = 0; r < reps; r++) {
        TEST_OK(hs_scan(test_ctx(), HS_F64, 0, n, d_in, d_out));
        double *again = test_download_new(d_out, bytes);
        assert_memory_equal(first, again, bytes);
        free(again);
    }
#ifdef _OPENMP
    if (!test_on_gpu()) {
        int saved = omp_get_max_threads();
        for (int nt = 1; nt <= 3; nt += 2) {
            omp_set_num_threads(nt);
            TEST_OK(hs_scan(test_ctx(), HS_F64, 0, n, d_in, d_out));
            assert_memory_equal(first, d_out, bytes);
        }
        omp_set_num_threads(saved);
    }
#endif
    free(first);
    free(x);
    hs_mem_free(test_ctx(), d_in);
    hs_mem_free(test_ctx(), d_out);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_i32), cmocka_unit_test(test_u32), cmocka_unit_test(test_i64),
    cmocka_unit_test(test_u64), cmocka_unit_test(test_f64), cmocka_unit_test(test_f32),
    cmocka_unit_test(test_errors), cmocka_unit_test(test_determinism), cmocka_unit_test(test_nondeterministic),
    cmocka_unit_test(test_old_impl), cmocka_unit_test(test_many_tiles), cmocka_unit_test(test_call_sequence),
};
TEST_MAIN("scan", tests)
