/* Structured grids over 1, 2 and 4 ranks: decomposition coverage, halo exchange, reductions, gather/scatter. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/grid/grid.h"
#include "kernels/memory.h"
#include "test_util.h"

#include "grid_test_util.h"

static size_t global_count(const hs_decomp *d) { return (size_t)(d->global[0] * d->global[1] * d->global[2]); }

/* Failures must be agreed on before asserting, or the other ranks would hang in the next collective. */
static long all_sum(long v)
{
    long long x = v;
    MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_LONG_LONG, MPI_SUM, test_ctx()->comm);
    return (long)x;
}


/* Cells of this rank's whole allocation that differ from `expected`; the first is printed. */
static long check_field(hs_field *f, int corners, const char *what)
{
    size_t es = hs_field_esize(f);
    void *raw = malloc(f->count * es);
    TEST_OK(hs_mem_copy(f->d->ctx, raw, f->data, f->count * es, HS_COPY_D2H));
    long bad = 0;
    const int *h = f->hw;
    const int64_t *l = f->d->local;
    for (int64_t k = -h[2]; k < l[2] + h[2]; k++)
        for (int64_t j = -h[1]; j < l[1] + h[1]; j++)
            for (int64_t i = -h[0]; i < l[0] + h[0]; i++) {
                size_t x = hs_field_index(f, i, j, k);
                double got = f->dtype == HS_F64 ? ((double *)raw)[x] : (double)((float *)raw)[x];
                double want = expected(f, corners, i, j, k);
                if (got != want && bad++ == 0)
                    print_error("%s: rank %d (coords %d,%d,%d) cell (%lld,%lld,%lld) holds %g, expected %g\n", what,
                                f->d->ctx->rank, f->d->coords[0], f->d->coords[1], f->d->coords[2], (long long)i,
                                (long long)j, (long long)k, got, want);
            }
    free(raw);
    return bad;
}

/* ------------------------------------------------------------------ decomposition */

static long check_cover(const hs_decomp *d)
{
    hs_ctx *ctx = d->ctx;
    size_t n = global_count(d);
    int *cover = calloc(n, sizeof *cover);
    long bad = 0;
    for (int64_t k = 0; k < d->local[2]; k++)
        for (int64_t j = 0; j < d->local[1]; j++)
            for (int64_t i = 0; i < d->local[0]; i++)
                cover[((d->offset[2] + k) * d->global[1] + d->offset[1] + j) * d->global[0] + d->offset[0] + i]++;
    MPI_Allreduce(MPI_IN_PLACE, cover, (int)n, MPI_INT, MPI_SUM, ctx->comm);
    for (size_t c = 0; c < n; c++) bad += cover[c] != 1;
    for (int e = 0; e < 3; e++) {
        int64_t base = d->global[e] / d->procs[e], extra = d->global[e] % d->procs[e];
        bad += d->local[e] != base + (d->coords[e] < extra);
        int64_t off[3], loc[3];
        TEST_OK(hs_decomp_rank_box(d, ctx->rank, off, loc));
        bad += off[e] != d->offset[e] || loc[e] != d->local[e];
        /* the upper neighbour starts where this rank ends (wrapping when periodic) */
        if (d->neighbor[e][1] != MPI_PROC_NULL) {
            TEST_OK(hs_decomp_rank_box(d, d->neighbor[e][1], off, loc));
            bad += off[e] != (d->offset[e] + d->local[e]) % d->global[e];
        } else {
            bad += d->offset[e] + d->local[e] != d->global[e] || d->periodic[e];
        }
    }
    long long cells = (long long)local_count(d);
    MPI_Allreduce(MPI_IN_PLACE, &cells, 1, MPI_LONG_LONG, MPI_SUM, ctx->comm);
    bad += cells != (long long)n;
    int procs = d->procs[0] * d->procs[1] * d->procs[2];
    bad += procs != ctx->size;
    free(cover);
    return bad;
}

static void test_decomp_covers(void **state)
{
    (void)state;
    hs_ctx *ctx = test_ctx();
    const int64_t g1[1] = {101}, g2[2] = {23, 17}, g3[3] = {13, 11, 12};
    const int64_t *gs[3] = {g1, g2, g3};
    const int per[3] = {1, 0, 1};
    for (int ndim = 1; ndim <= 3; ndim++)
        for (int split = 0; split < 2; split++) {
            /* split 0: MPI_Dims_create; split 1: all ranks along the last dimension */
            int procs[3] = {0, 0, 0};
            if (split)
                for (int e = 0; e < ndim; e++) procs[e] = e == ndim - 1 ? ctx->size : 1;
            hs_decomp *d = NULL;
            TEST_OK(hs_decomp_create(ctx, ndim, gs[ndim - 1], per, procs, 2, &d));
            long bad = all_sum(check_cover(d));
            if (bad) fail_msg("%dD split %d: %ld coverage errors", ndim, split, bad);
            hs_decomp_destroy(d);
        }
}

static void test_decomp_errors(void **state)
{
    (void)state;
    hs_ctx *ctx = test_ctx();
    hs_decomp *d = NULL;
    const int64_t g[2] = {10, 10};
    char want[96];
    if (ctx->size != 3) {
        const int bad[2] = {3, 1};
        snprintf(want, sizeof want, "grid 10 x 10 cannot be split 3 x 1 over %d rank%s: 3 x 1 = 3 != %d", ctx->size,
                 ctx->size == 1 ? "" : "s", ctx->size);
        expect_input_error(hs_decomp_create(ctx, 2, g, NULL, bad, 1, &d), want);
    }
    /* no split leaves 11 cells per rank in a 10 x 10 periodic grid */
    const int per[2] = {1, 1};
    expect_input_error(hs_decomp_create(ctx, 2, g, per, NULL, 11, &d), "fewer than the 11 needed");
    if (ctx->size == 4) {
        /* 2 x 2 leaves 5, fine for 4; but 4 x 1 leaves 2 -- and the message proposes 2 x 2 */
        const int thin[2] = {4, 1};
        expect_input_error(hs_decomp_create(ctx, 2, g, NULL, thin, 4, &d), "2 x 2 would work");
        /* auto split of a flat grid: MPI_Dims_create's 2 x 2 leaves 1 cell in y; 4 x 1 does not */
        const int64_t flat[2] = {64, 2};
        TEST_OK(hs_decomp_create(ctx, 2, flat, NULL, NULL, 2, &d));
        assert_int_equal(d->procs[0], 4);
        assert_int_equal(d->procs[1], 1);
        hs_decomp_destroy(d);
    }
}

/* ------------------------------------------------------------------ exchange */

static void exchange_case(int ndim, const int *per, const int *procs, int h, hs_dtype t, int corners)
{
    const int64_t g2[2] = {23, 17}, g3[3] = {13, 11, 12};
    hs_decomp *d = NULL;
    TEST_OK(hs_decomp_create(test_ctx(), ndim, ndim == 2 ? g2 : g3, per, procs, h, &d));
    hs_field *f = NULL;
    TEST_OK(hs_field_create(d, t, h, &f));
    TEST_OK(hs_field_set_corners(f, corners));
    fill_global_fn(f);
    TEST_OK(hs_halo_exchange(f));
    char what[128];
    snprintf(what, sizeof what, "%dD procs %dx%dx%d periodic %d%d%d halo %d %s corners %d", ndim, d->procs[0],
             d->procs[1], d->procs[2], per[0], per[1], per[2], h, hs_dtype_name(t), corners);
    long bad = all_sum(check_field(f, corners, what));
    if (bad) fail_msg("%s: %ld wrong cells over all ranks", what, bad);
    hs_field_destroy(f);
    hs_decomp_destroy(d);
}

static void test_exchange(void **state)
{
    (void)state;
    hs_ctx *ctx = test_ctx();
    const int pers[3][3] = {{0, 0, 0}, {1, 1, 1}, {1, 0, 1}};
    for (int ndim = 2; ndim <= 3; ndim++)
        for (int split = 0; split < 2; split++) {
            int procs[3] = {0, 0, 0};
            if (split)
                for (int e = 0; e < ndim; e++) procs[e] = e == ndim - 1 ? ctx->size : 1;
            for (int p = 0; p < 3; p++)
                for (int h = 1; h <= 3; h += 2)
                    for (int corners = 0; corners < 2; corners++) {
                        exchange_case(ndim, pers[p], procs, h, HS_F64, corners);
                        exchange_case(ndim, pers[p], procs, h, HS_F32, corners);
                    }
        }
}

/* Two exchanges in flight at once, with device work queued between begin and end. */
static void test_overlapping_fields(void **state)
{
    (void)state;
    const int64_t g[3] = {13, 11, 12};
    const int per[3] = {1, 1, 0};
    hs_decomp *d = NULL;
    TEST_OK(hs_decomp_create(test_ctx(), 3, g, per, NULL, 2, &d));
    hs_field *a = NULL, *b = NULL, *c = NULL;
    TEST_OK(hs_field_create(d, HS_F64, 2, &a));
    TEST_OK(hs_field_create(d, HS_F32, 1, &b));
    TEST_OK(hs_field_create(d, HS_F64, 2, &c));
    TEST_OK(hs_field_set_corners(b, 1));
    fill_global_fn(a);
    fill_global_fn(b);
    TEST_OK(hs_halo_exchange_begin(a));
    TEST_OK(hs_halo_exchange_begin(b));
    TEST_OK(hs_field_fill(c, 2.0));
    TEST_OK(hs_halo_exchange_end(a));
    TEST_OK(hs_halo_exchange_end(b));
    long bad = all_sum(check_field(a, 0, "overlap a") + check_field(b, 1, "overlap b"));
    if (bad) fail_msg("%ld wrong cells", bad);
    double s = 0;
    TEST_OK(hs_field_sum(c, &s));
    assert_true(s == 2.0 * 13 * 11 * 12);
    hs_field_destroy(a), hs_field_destroy(b), hs_field_destroy(c);
    hs_decomp_destroy(d);
}

/* ------------------------------------------------------------------ reductions and gather/scatter */

static void reductions_case(hs_dtype t, int ndim, const int64_t *g, int halo)
{
    hs_ctx *ctx = test_ctx();
    hs_decomp *d = NULL;
    TEST_OK(hs_decomp_create(ctx, ndim, g, NULL, NULL, 1, &d));
    hs_field *f = NULL;
    TEST_OK(hs_field_create(d, t, halo, &f));
    size_t n = global_count(d);
    double *v = malloc(n * sizeof *v);
    test_fill_f64(v, n, 1234 + n, -1, 2);
    void *h = to_type(t, v, n);
    for (size_t i = 0; i < n; i++)
        if (t == HS_F32) v[i] = ((float *)h)[i];
    TEST_OK(hs_field_fill(f, 1e30));
    TEST_OK(hs_field_scatter(f, 0, h));
    /* reference: the whole grid on one process, in long double */
    long double sum = 0, sq = 0;
    double mn = INFINITY, mx = -INFINITY, ma = 0;
    for (size_t i = 0; i < n; i++) {
        sum += v[i], sq += (long double)v[i] * v[i];
        mn = fmin(mn, v[i]), mx = fmax(mx, v[i]), ma = fmax(ma, fabs(v[i]));
    }
    double r[5], lo[5], hi[5];
    TEST_OK(hs_field_sum(f, &r[0]));
    TEST_OK(hs_field_min(f, &r[1]));
    TEST_OK(hs_field_max(f, &r[2]));
    TEST_OK(hs_field_norm2(f, &r[3]));
    TEST_OK(hs_field_maxabs(f, &r[4]));
    /* every rank holds the same bits */
    memcpy(lo, r, sizeof r), memcpy(hi, r, sizeof r);
    MPI_Allreduce(MPI_IN_PLACE, lo, 5, MPI_DOUBLE, MPI_MIN, ctx->comm);
    MPI_Allreduce(MPI_IN_PLACE, hi, 5, MPI_DOUBLE, MPI_MAX, ctx->comm);
    assert_memory_equal(lo, hi, sizeof lo);
    TEST_LE(fabs(r[0] - (double)sum) / fabsl(sum), 1e-14);
    TEST_LE(fabs(r[3] - sqrt((double)sq)) / sqrt((double)sq), 1e-14);
    assert_true(r[1] == mn);
    assert_true(r[2] == mx);
    assert_true(r[4] == ma);
    free(v), free(h);
    hs_field_destroy(f);
    hs_decomp_destroy(d);
}

static void test_reductions(void **state)
{
    (void)state;
    const int64_t g1[1] = {100003}, g2[2] = {301, 207}, g3[3] = {41, 37, 29};
    for (int t = 0; t < 2; t++) {
        hs_dtype dt = t ? HS_F32 : HS_F64;
        reductions_case(dt, 1, g1, 2);
        reductions_case(dt, 2, g2, 1);
        reductions_case(dt, 3, g3, 4);
    }
}

static void test_gather_scatter(void **state)
{
    (void)state;
    hs_ctx *ctx = test_ctx();
    const int64_t g[3] = {17, 9, 10};
    const int per[3] = {0, 1, 0};
    hs_decomp *d = NULL;
    TEST_OK(hs_decomp_create(ctx, 3, g, per, NULL, 1, &d));
    size_t n = global_count(d);
    for (int t = 0; t < 2; t++)
        for (int root = 0; root < ctx->size; root += ctx->size > 1 ? ctx->size - 1 : 1) {
            hs_field *f = NULL;
            TEST_OK(hs_field_create(d, t ? HS_F32 : HS_F64, 2, &f));
            size_t es = hs_field_esize(f);
            double *v = malloc(n * sizeof *v);
            test_fill_f64(v, n, 77, -5, 5);
            void *in = to_type(f->dtype, v, n), *out = calloc(n, es);
            TEST_OK(hs_field_scatter(f, root, ctx->rank == root ? in : NULL));
            TEST_OK(hs_field_gather(f, root, ctx->rank == root ? out : NULL));
            long bad = ctx->rank == root && memcmp(in, out, n * es) != 0;
            /* and the gathered field function lands at its global index */
            fill_global_fn(f);
            TEST_OK(hs_field_gather(f, root, ctx->rank == root ? out : NULL));
            if (ctx->rank == root)
                for (size_t i = 0; i < n; i++)
                    bad += (t ? ((float *)out)[i] : ((double *)out)[i]) != 1.0 + (double)i;
            bad = all_sum(bad);
            if (bad) fail_msg("gather/scatter root %d %s: %ld wrong", root, hs_dtype_name(f->dtype), bad);
            free(v), free(in), free(out);
            hs_field_destroy(f);
        }
    hs_decomp_destroy(d);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_decomp_covers),
    cmocka_unit_test(test_decomp_errors),
    cmocka_unit_test(test_exchange),
    cmocka_unit_test(test_overlapping_fields),
    cmocka_unit_test(test_reductions),
    cmocka_unit_test(test_gather_scatter),
};

TEST_MAIN("halo_mpi", tests)
