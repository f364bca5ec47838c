/* Structured grids on one rank: layout, interior copies, periodic self-exchange, corners, reductions, errors,
 * boundary ghosts against their formulas, and the CPU and CUDA twins of ghost filling. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/grid/grid.h"
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

/* The estimate before a field exists is the field's allocation: hs_field_layout_bytes is the storage
 * the created field reports (row padding and alignment lead included), and hs_field_footprint counts
 * at least that on the device, for dense and padded rows, both types, 2D and 3D, staggered. */
static void test_footprint(void **state)
{
    (void)state;
    const int64_t sizes[3][3] = {{9, 6, 5}, {130, 3, 2}, {7, 3, 1}};
    const int ndims[3] = {3, 3, 2};
    for (int c = 0; c < 3; c++)
        for (int t = 0; t < 2; t++)
            for (int fd = -1; fd < ndims[c]; fd++) {
                const hs_dtype type = t ? HS_F32 : HS_F64;
                hs_decomp *d = make_decomp(ndims[c], sizes[c], NULL, 1);
                hs_field *f = NULL;
                TEST_OK(hs_field_create_staggered(d, type, 2, fd, &f));
                double dev = 0, host = 0;
                hs_field_footprint(d, type, 2, fd, &dev, &host);
                const size_t lead = (size_t)((char *)f->data - (char *)f->base);
                assert_int_equal(hs_field_layout_bytes(d, type, 2, fd), hs_field_storage_bytes(f));
                assert_int_equal(hs_field_storage_bytes(f), lead + f->count * hs_field_esize(f));
                assert_true(dev >= (double)hs_field_storage_bytes(f));
                assert_true(dev <= (double)hs_field_storage_bytes(f) + 8192);
                hs_field_destroy(f);
                hs_decomp_destroy(d);
            }
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

/* The whole allocation's bytes. */
static unsigned char *raw_all(hs_field *f)
{
    size_t bytes = f->count * hs_field_esize(f);
    unsigned char *raw = malloc(bytes);
    TEST_OK(hs_mem_copy(f->d->ctx, raw, f->data, bytes, HS_COPY_D2H));
    return raw;
}

/* A group exchange (one copy launch a dimension for every field) leaves every field, halos
 * included, bit for bit as each field's own exchange does: every periodicity pattern, halo widths
 * 1..3, corners off and on, f64 / f32 / f16, five fields of distinct data; and a group whose fields
 * differ in type (each exchanged on its own) as well. */
static void test_group_exchange(void **state)
{
    (void)state;
    enum { NF = 5 };
    const int64_t sizes[3][3] = {{37, 1, 1}, {13, 7, 1}, {9, 6, 5}};
    const hs_dtype types[3] = {HS_F64, HS_F32, HS_F16};
    long bad = 0;
    for (int ndim = 1; ndim <= 3; ndim++)
        for (int pmask = 1; pmask < (1 << ndim); pmask++)
            for (int h = 1; h <= 3; h++)
                for (int t = 0; t < 4; t++)
                    for (int corners = 0; corners < 2; corners++) {
                        int per[3] = {pmask & 1, (pmask >> 1) & 1, (pmask >> 2) & 1};
                        hs_decomp *d = make_decomp(ndim, sizes[ndim - 1], per, h);
                        hs_field *g[NF], *one[NF];
                        for (int m = 0; m < NF; m++) {
                            /* t = 3: a mixed group, one field in f32 among f64 */
                            hs_dtype dt = t < 3 ? types[t] : m == 2 ? HS_F32 : HS_F64;
                            TEST_OK(hs_field_create(d, dt, h, &g[m]));
                            TEST_OK(hs_field_create(d, dt, h, &one[m]));
                            TEST_OK(hs_field_set_corners(g[m], corners));
                            TEST_OK(hs_field_set_corners(one[m], corners));
                            size_t n = local_count(d);
                            double *v = malloc(n * sizeof *v);
                            test_fill_f64(v, n, 101 + 7 * (uint64_t)m + (uint64_t)n, -1, 1);
                            void *in = to_type(dt, v, n);
                            if (dt != HS_F16) { /* f16 fields are storage only: they start zero */
                                TEST_OK(hs_field_fill(g[m], SENTINEL));
                                TEST_OK(hs_field_fill(one[m], SENTINEL));
                            }
                            /* (for f16 the doubles' float copies are read as pairs of halves: bits all the same) */
                            TEST_OK(hs_field_set_interior(g[m], in));
                            TEST_OK(hs_field_set_interior(one[m], in));
                            free(v), free(in);
                        }
                        TEST_OK(hs_halo_exchange_group_begin(g, NF));
                        TEST_OK(hs_halo_exchange_group_end(g, NF));
                        for (int m = 0; m < NF; m++) TEST_OK(hs_halo_exchange(one[m]));
                        for (int m = 0; m < NF; m++) {
                            unsigned char *a = raw_all(g[m]), *b = raw_all(one[m]);
                            if (memcmp(a, b, g[m]->count * hs_field_esize(g[m])) != 0 && bad++ < 5)
                                print_error("%dD periodic mask %d halo %d type case %d corners %d: field %d differs\n", ndim, pmask,
                                            h, t, corners, m);
                            free(a), free(b);
                            hs_field_destroy(g[m]);
                            hs_field_destroy(one[m]);
                        }
                        hs_decomp_destroy(d);
                    }
    assert_int_equal(bad, 0);
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

/* NaN in the interior propagates through min, max and the sum (as in kernels/reduce/reduce.h). */
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

/* ------------------------------------------------------------------ boundaries and ghosts */

/* Per-face conditions of a test: kinds and values differ on every face. */
static void make_bcs(int ndim, const int *per, int pattern, hs_bc bc[3][2])
{
    memset(bc, 0, sizeof(hs_bc) * 6);
    for (int d = 0; d < 3; d++)
        for (int s = 0; s < 2; s++) {
            bc[d][s].kind = d < ndim && per[d] ? HS_BC_PERIODIC
                            : ((d + s + pattern) % 2 ? HS_BC_NEUMANN : HS_BC_DIRICHLET);
            bc[d][s].value = 0.25 * (1 + d) - 1.5 * s + 0.125 * pattern;
        }
}

/* The reference fill on a host copy of the whole allocation, written from the formulas of
 * kernels/grid/grid.h independently of the kernels' shared code (rounded to f32 on store for f32). */
static void reference_ghosts(const hs_field *f, const hs_bc bc[3][2], const double dx[3], int homogeneous, double *u)
{
    int64_t st[3] = {1, hs_field_stride_y(f), hs_field_stride_z(f)};
    int64_t o = (int64_t)hs_field_index(f, 0, 0, 0);
    for (int d = 0; d < f->d->ndim; d++)
        for (int s = 0; s < 2; s++) {
            const hs_bc *b = &bc[d][s];
            if (b->kind == HS_BC_PERIODIC) continue;
            double g = homogeneous ? 0.0 : b->value;
            int node = f->face_dim == d;
            int e1 = (d + 1) % 3, e2 = (d + 2) % 3;
            int64_t n = f->local[d];
            for (int64_t q = -f->hw[e2]; q < f->local[e2] + f->hw[e2]; q++)
                for (int64_t p = -f->hw[e1]; p < f->local[e1] + f->hw[e1]; p++) {
                    int64_t base = o + p * st[e1] + q * st[e2];
#define AT(i) u[base + (i) * st[d]]
#define STORE(i, v) AT(i) = f->dtype == HS_F32 ? (double)(float)(v) : (v)
                    if (node && b->kind == HS_BC_DIRICHLET) STORE(s ? n - 1 : 0, g);
                    for (int m = 0; m < f->hw[d]; m++) {
                        int64_t gh = s ? n + m : -1 - m;
                        int64_t in = node ? (s ? n - 2 - m : 1 + m) : (s ? n - 1 - m : m);
                        double dist = node ? 2.0 * (m + 1) : 2.0 * m + 1.0;
                        double v = b->kind == HS_BC_DIRICHLET ? 2 * g - AT(in) : AT(in) + dist * dx[d] * g;
                        STORE(gh, v);
                    }
#undef STORE
#undef AT
                }
        }
}

/* Interior := a smooth function with distinct values, halos := SENTINEL (halo exchange first). */
static void fill_smooth(hs_field *f)
{
    size_t n = (size_t)(f->local[0] * f->local[1] * f->local[2]), p = 0;
    double *v = malloc(n * sizeof *v + 8);
    for (int64_t k = 0; k < f->local[2]; k++)
        for (int64_t j = 0; j < f->local[1]; j++)
            for (int64_t i = 0; i < f->local[0]; i++) { v[p] = sin(0.3 * i + 0.7 * j + 1.1 * k) + 0.01 * (double)p; p++; }
    void *h = to_type(f->dtype, v, n);
    TEST_OK(hs_field_fill(f, SENTINEL));
    TEST_OK(hs_field_set_interior(f, h));
    free(h);
    free(v);
}

static long compare_all(const double *a, const double *b, size_t n, double tol, const char *what)
{
    long bad = 0;
    for (size_t i = 0; i < n; i++)
        if (!(fabs(a[i] - b[i]) <= tol * fmax(1.0, fabs(b[i]))) && bad++ == 0)
            print_error("%s: element %zu holds %.17g, expected %.17g\n", what, i, a[i], b[i]);
    return bad;
}

static void ghosts_case(int ndim, const int *per, int face_dim, int halo, hs_dtype t, int pattern, int homogeneous)
{
    const int64_t g[3] = {7, 6, 5};
    const double dx[3] = {0.1, 0.2, 0.05};
    hs_decomp *d = make_decomp(ndim, g, per, 1);
    hs_field *f = NULL;
    TEST_OK(hs_field_create_staggered(d, t, halo, face_dim, &f));
    hs_bc bc[3][2];
    make_bcs(ndim, per, pattern, bc);
    fill_smooth(f);
    TEST_OK(hs_halo_exchange(f));
    double *want = download_all(f);
    reference_ghosts(f, bc, dx, homogeneous, want);
    TEST_OK(hs_field_fill_ghosts(f, bc, dx, homogeneous));
    double *got = download_all(f);
    char what[128];
    snprintf(what, sizeof what, "%dD periodic %d%d%d face_dim %d halo %d %s pattern %d homogeneous %d", ndim, per[0],
             per[1], per[2], face_dim, halo, hs_dtype_name(t), pattern, homogeneous);
    /* the same formulas in the same order: equal to the last bit on the CPU; the GPU may contract
     * u + d dx g into one fma */
    long bad = compare_all(got, want, f->count, test_on_gpu() ? 1e-15 : 0.0, what);
    if (bad) fail_msg("%s: %ld elements differ", what, bad);
    free(want), free(got);
    hs_field_destroy(f);
    hs_decomp_destroy(d);
}

static void test_fill_ghosts(void **state)
{
    (void)state;
    const int pers[3][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 1}};
    for (int ndim = 1; ndim <= 3; ndim++)
        for (int p = 0; p < 3; p++)
            for (int fd = -1; fd < ndim; fd++)
                for (int h = 1; h <= 3; h++)
                    for (int pattern = 0; pattern < 2; pattern++) {
                        ghosts_case(ndim, pers[p], fd, h, HS_F64, pattern, 0);
                        ghosts_case(ndim, pers[p], fd, h, HS_F32, pattern, h == 2);
                    }
    /* halo 0: nothing to fill, but a face-centred Dirichlet wall still takes its value */
    ghosts_case(2, pers[0], 0, 0, HS_F64, 0, 0);
}

/* A custom wall: the hook is called for exactly the wall faces that are custom, and fills the box
 * hs_field_ghost_box names. */
typedef struct {
    int calls[3][2];
    int homogeneous;
} hook_log;

static int hook_fill(hs_field *f, int dim, int side, const hs_bc *bc, int homogeneous, void *user)
{
    hook_log *log = user;
    log->calls[dim][side]++;
    log->homogeneous = homogeneous;
    hs_box b = hs_field_ghost_box(f, dim, side);
    double *all = download_all(f);
    size_t es = hs_field_esize(f);
    void *raw = malloc(f->count * es);
    for (int64_t k = b.lo[2]; k < b.hi[2]; k++)
        for (int64_t j = b.lo[1]; j < b.hi[1]; j++)
            for (int64_t i = b.lo[0]; i < b.hi[0]; i++) all[hs_field_index(f, i, j, k)] = bc->value;
    for (size_t i = 0; i < f->count; i++) {
        if (f->dtype == HS_F64) ((double *)raw)[i] = all[i];
        else ((float *)raw)[i] = (float)all[i];
    }
    int rc = hs_mem_copy(f->d->ctx, f->data, raw, f->count * es, HS_COPY_H2D);
    free(raw), free(all);
    return rc;
}

static void test_custom_bc(void **state)
{
    (void)state;
    const int64_t g[3] = {6, 5, 4};
    const int per[3] = {0, 0, 1};
    const double dx[3] = {1, 1, 1};
    hs_decomp *d = make_decomp(3, g, per, 1);
    hs_field *f = NULL;
    TEST_OK(hs_field_create_staggered(d, HS_F64, 2, 1, &f));
    hook_log log;
    memset(&log, 0, sizeof log);
    hs_bc bc[3][2];
    make_bcs(3, per, 0, bc);
    bc[1][1] = (hs_bc){HS_BC_CUSTOM, 42.0, hook_fill, &log};
    fill_smooth(f);
    TEST_OK(hs_halo_exchange(f));
    double *want = download_all(f);
    hs_bc ref_bc[3][2];
    memcpy(ref_bc, bc, sizeof bc);
    ref_bc[1][1].kind = HS_BC_PERIODIC; /* the reference skips the custom face ... */
    reference_ghosts(f, ref_bc, dx, 1, want);
    TEST_OK(hs_field_fill_ghosts(f, bc, dx, 1));
    double *got = download_all(f);
    for (int dd = 0; dd < 3; dd++)
        for (int s = 0; s < 2; s++) assert_int_equal(log.calls[dd][s], dd == 1 && s == 1);
    assert_int_equal(log.homogeneous, 1);
    /* ... which holds 42 over the face's ghost box: y = local..local+1, all x and z */
    hs_box b = hs_field_ghost_box(f, 1, 1);
    assert_int_equal(b.lo[1], f->local[1]);
    assert_int_equal(b.hi[1], f->local[1] + 2);
    assert_int_equal(b.lo[0], -2);
    assert_int_equal(b.hi[2], f->local[2] + 2);
    for (int64_t k = b.lo[2]; k < b.hi[2]; k++)
        for (int64_t j = b.lo[1]; j < b.hi[1]; j++)
            for (int64_t i = b.lo[0]; i < b.hi[0]; i++) want[hs_field_index(f, i, j, k)] = 42.0;
    assert_int_equal(compare_all(got, want, f->count, 0.0, "custom"), 0);
    /* the kinds must agree with the decomposition, and a custom wall needs its hook */
    bc[2][0].kind = HS_BC_DIRICHLET;
    expect_input_error(hs_field_fill_ghosts(f, bc, dx, 0), "decomposition is periodic");
    bc[2][0].kind = HS_BC_PERIODIC;
    bc[0][0].kind = HS_BC_PERIODIC;
    expect_input_error(hs_field_fill_ghosts(f, bc, dx, 0), "not");
    bc[0][0] = (hs_bc){HS_BC_CUSTOM, 0, NULL, NULL};
    expect_input_error(hs_field_fill_ghosts(f, bc, dx, 0), "has no hook");
    free(want), free(got);
    hs_field_destroy(f);
    hs_decomp_destroy(d);
}

/* load_interior from a contiguous device array: the interior only, bit for bit. */
static void test_load_interior(void **state)
{
    (void)state;
    const int64_t g[3] = {9, 4, 3};
    hs_decomp *d = make_decomp(3, g, NULL, 1);
    for (int t = 0; t < 2; t++)
        for (int fd = -1; fd < 3; fd++) {
            hs_field *f = NULL;
            TEST_OK(hs_field_create_staggered(d, t ? HS_F32 : HS_F64, 2, fd, &f));
            TEST_OK(hs_field_fill(f, SENTINEL));
            size_t n = (size_t)(f->local[0] * f->local[1] * f->local[2]), es = hs_field_esize(f);
            double *v = malloc(n * sizeof *v);
            test_fill_f64(v, n, 11 + fd, -1, 1);
            void *h = to_type(f->dtype, v, n), *back = malloc(n * es);
            void *dev = test_upload(h, n * es);
            TEST_OK(hs_field_load_interior(f, dev));
            TEST_OK(hs_field_get_interior(f, back));
            assert_memory_equal(h, back, n * es);
            double sum = 0;
            TEST_OK(hs_field_sum(f, &sum)); /* the halos kept their sentinel: only the interior counts */
            double want = 0;
            for (size_t i = 0; i < n; i++) want += t ? (double)(float)v[i] : v[i];
            TEST_LE(fabs(sum - want), 1e-12);
            double *all = download_all(f);
            long outside = 0;
            for (size_t i = 0; i < f->count; i++) outside += all[i] == SENTINEL;
            assert_int_equal((size_t)outside, (size_t)(f->alloc[0] * f->alloc[1] * f->alloc[2]) - n);
            free(all);
            hs_mem_free(test_ctx(), dev);
            free(v), free(h), free(back);
            hs_field_destroy(f);
        }
    hs_decomp_destroy(d);
}

/* store_box and load_box over boxes of every width the CUDA copy kernels tell apart (under 16 cells:
 * a thread a cell; 16 and more: a warp a row), against the host's own indexing of the field. */
static void test_box_copies(void **state)
{
    (void)state;
    const int64_t g[3] = {45, 7, 5};
    static const int64_t widths[] = {1, 5, 15, 16, 17, 31, 32, 33, 45};
    hs_decomp *d = make_decomp(3, g, NULL, 1);
    for (int t = 0; t < 2; t++) {
        hs_field *f = NULL, *f2 = NULL;
        TEST_OK(hs_field_create_staggered(d, t ? HS_F32 : HS_F64, 2, -1, &f));
        TEST_OK(hs_field_create_staggered(d, t ? HS_F32 : HS_F64, 2, -1, &f2));
        size_t n = (size_t)(f->local[0] * f->local[1] * f->local[2]), es = hs_field_esize(f);
        double *v = malloc(n * sizeof *v);
        test_fill_f64(v, n, 5 + t, -1, 1);
        void *h = to_type(f->dtype, v, n);
        void *dev = test_upload(h, n * es);
        TEST_OK(hs_field_fill(f, SENTINEL));
        TEST_OK(hs_field_load_interior(f, dev));
        double *all = download_all(f);
        for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++) {
            const int64_t x0 = (int64_t)(w % 3) * (g[0] - widths[w]) / 2; /* left, middle, right */
            const hs_box b = {{x0, 1, 0}, {x0 + widths[w], 6, 5}};
            const size_t m = (size_t)(hs_box_points(&b));
            void *packed = NULL, *back = malloc(m * es);
            TEST_OK(hs_mem_alloc(test_ctx(), m * es, &packed));
            TEST_OK(hs_field_store_box(f, &b, packed));
            TEST_OK(hs_mem_copy(test_ctx(), back, packed, m * es, HS_COPY_D2H));
            size_t at = 0;
            long bad = 0;
            for (int64_t k = b.lo[2]; k < b.hi[2]; k++)
                for (int64_t j = b.lo[1]; j < b.hi[1]; j++)
                    for (int64_t i = b.lo[0]; i < b.hi[0]; i++, at++) {
                        const double got = t ? (double)((float *)back)[at] : ((double *)back)[at];
                        bad += got != all[hs_field_index(f, i, j, k)];
                    }
            assert_int_equal(bad, 0);
            TEST_OK(hs_field_fill(f2, SENTINEL));
            TEST_OK(hs_field_load_box(f2, &b, packed));
            double *all2 = download_all(f2);
            for (int64_t k = -2; k < f->local[2] + 2; k++)
                for (int64_t j = -2; j < f->local[1] + 2; j++)
                    for (int64_t i = -2; i < f->local[0] + 2; i++) {
                        const int64_t e = hs_field_index(f, i, j, k);
                        const int inside = i >= b.lo[0] && i < b.hi[0] && j >= b.lo[1] && j < b.hi[1] && k >= b.lo[2] && k < b.hi[2];
                        bad += all2[e] != (inside ? all[e] : SENTINEL);
                    }
            if (bad) print_error("box of width %lld: %ld cells differ after load_box\n", (long long)widths[w], bad);
            assert_int_equal(bad, 0);
            free(all2), free(back);
            hs_mem_free(test_ctx(), packed);
        }
        free(all), free(v), free(h);
        hs_mem_free(test_ctx(), dev);
        hs_field_destroy(f), hs_field_destroy(f2);
    }
    hs_decomp_destroy(d);
}

/* The split on one rank: periodic dimensions exchange (self copies), others do not. */
static void test_split_boxes(void **state)
{
    (void)state;
    const int64_t g[3] = {10, 8, 6};
    const int per[3] = {1, 0, 1};
    hs_decomp *d = make_decomp(3, g, per, 2);
    hs_field *f = NULL;
    TEST_OK(hs_field_create_staggered(d, HS_F64, 2, 1, &f));
    hs_box in, shell[6];
    int ns = hs_field_split_boxes(f, 2, &in, shell);
    assert_int_equal(ns, 4); /* z low/high, x low/high */
    assert_int_equal(in.lo[0], 2), assert_int_equal(in.hi[0], 8);
    assert_int_equal(in.lo[1], 0), assert_int_equal(in.hi[1], 9); /* 9 y-faces, no exchange in y */
    assert_int_equal(in.lo[2], 2), assert_int_equal(in.hi[2], 4);
    assert_int_equal(shell[0].hi[2], 2), assert_int_equal(shell[1].lo[2], 4);
    /* too thin for an inside: everything is shell */
    ns = hs_field_split_boxes(f, 3, &in, shell);
    assert_int_equal(ns, 1);
    assert_true(in.hi[0] == in.lo[0]);
    assert_int_equal(shell[0].hi[1], 9);
    hs_field_destroy(f);
    hs_decomp_destroy(d);
}

/* The ghost filling of the CPU twin and the CUDA twin on the same inputs (skipped without a GPU). */
static double *ghosts_on(const char *device, int face_dim, hs_dtype t, int homogeneous)
{
    hs_ctx *ctx = test_ctx();
    TEST_OK(hs_ctx_set_device(ctx, device, 1));
    const int64_t g[3] = {37, 9, 6};
    const int per[3] = {0, 1, 0};
    const double dx[3] = {0.01, 0.3, 0.07};
    hs_decomp *d = make_decomp(3, g, per, 1);
    hs_field *f = NULL;
    TEST_OK(hs_field_create_staggered(d, t, 3, face_dim, &f));
    hs_bc bc[3][2];
    make_bcs(3, per, face_dim + 1, bc);
    fill_smooth(f);
    TEST_OK(hs_halo_exchange(f));
    TEST_OK(hs_field_fill_ghosts(f, bc, dx, homogeneous));
    double *all = download_all(f);
    hs_field_destroy(f);
    hs_decomp_destroy(d);
    return all;
}

static void test_ghosts_cpu_vs_cuda(void **state)
{
    (void)state;
    if (!HS_HAVE_CUDA || hs_cuda_device_count() == 0) {
        print_message("no GPU here: the CUDA twin of ghost filling is not compared\n");
        skip();
    }
    hs_ctx *ctx = test_ctx();
    const char *was = hs_device_name(ctx->device);
    long bad = 0;
    for (int fd = -1; fd < 3; fd++)
        for (int t = 0; t < 2; t++)
            for (int hom = 0; hom < 2; hom++) {
                hs_dtype dt = t ? HS_F32 : HS_F64;
                double *cpu = ghosts_on("cpu", fd, dt, hom), *gpu = ghosts_on("cuda", fd, dt, hom);
                /* same layout on both: the pitch depends on the element size only */
                hs_decomp *d = make_decomp(3, (const int64_t[3]){37, 9, 6}, (const int[3]){0, 1, 0}, 1);
                hs_field *f = NULL;
                TEST_OK(hs_field_create_staggered(d, dt, 3, fd, &f));
                char what[64];
                snprintf(what, sizeof what, "cpu vs cuda face_dim %d %s homogeneous %d", fd, hs_dtype_name(dt), hom);
                /* fma contraction on the GPU: a rounding of the Neumann term at most */
                bad += compare_all(gpu, cpu, f->count, t ? 1e-6 : 1e-14, what);
                hs_field_destroy(f);
                hs_decomp_destroy(d);
                free(cpu), free(gpu);
            }
    TEST_OK(hs_ctx_set_device(ctx, was, 1));
    assert_int_equal(bad, 0);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_index_layout),
    cmocka_unit_test(test_footprint),
    cmocka_unit_test(test_interior_roundtrip),
    cmocka_unit_test(test_self_exchange),
    cmocka_unit_test(test_group_exchange),
    cmocka_unit_test(test_single_cell_periodic),
    cmocka_unit_test(test_begin_end),
    cmocka_unit_test(test_reductions),
    cmocka_unit_test(test_reduction_nan),
    cmocka_unit_test(test_decomp_errors),
    cmocka_unit_test(test_gather_scatter),
    cmocka_unit_test(test_bench_hooks),
    cmocka_unit_test(test_fill_ghosts),
    cmocka_unit_test(test_custom_bc),
    cmocka_unit_test(test_load_interior),
    cmocka_unit_test(test_box_copies),
    cmocka_unit_test(test_split_boxes),
    cmocka_unit_test(test_ghosts_cpu_vs_cuda),
};

TEST_MAIN("grid", tests)
