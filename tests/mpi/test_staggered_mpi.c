/* Face-centred (staggered) and wide-halo fields over 1, 2 and 4 ranks: every ghost after exchange, gather/scatter and reductions against a single-rank reference. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/grid/grid.h"
#include "kernels/memory.h"
#include "test_util.h"

#include "grid_test_util.h"

/* Failures must be agreed on before asserting, or the other ranks would hang in the next collective. */
static long all_sum(long v)
{
    long long x = v;
    MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_LONG_LONG, MPI_SUM, test_ctx()->comm);
    return (long)x;
}

static size_t points(const int64_t n[3]) { return (size_t)(n[0] * n[1] * n[2]); }

/* Points of this rank's whole allocation that differ from `expected`; the first is printed. */
static long check_ghosts(hs_field *f, int corners, const char *what)
{
    size_t es = hs_field_esize(f);
    void *raw = malloc(f->count * es);
    TEST_OK(hs_mem_copy(f->d->ctx, raw, f->data, f->count * es, HS_COPY_D2H));
    long bad = 0;
    const int *h = f->hw;
    const int64_t *l = f->local;
    for (int64_t k = -h[2]; k < l[2] + h[2]; k++)
        for (int64_t j = -h[1]; j < l[1] + h[1]; j++)
            for (int64_t i = -h[0]; i < l[0] + h[0]; i++) {
                size_t x = hs_field_index(f, i, j, k);
                double got = f->dtype == HS_F64 ? ((double *)raw)[x] : (double)((float *)raw)[x];
                double want = expected(f, corners, i, j, k);
                if (got != want && bad++ == 0)
                    print_error("%s: rank %d (coords %d,%d,%d) point (%lld,%lld,%lld) holds %g, expected %g\n", what,
                                f->d->ctx->rank, f->d->coords[0], f->d->coords[1], f->d->coords[2], (long long)i,
                                (long long)j, (long long)k, got, want);
            }
    free(raw);
    return bad;
}

/* A context of this rank alone (the test context's backend and handles, MPI_COMM_SELF), for the
 * single-rank reference. */
static hs_ctx self_ctx(void)
{
    hs_ctx c = *test_ctx();
    c.comm = MPI_COMM_SELF;
    c.rank = 0;
    c.size = 1;
    return c;
}

/* The points of the face-centred layout: owned points tile the global points exactly once. */
static long check_ownership(const hs_field *f)
{
    hs_ctx *ctx = f->d->ctx;
    size_t n = points(f->global);
    int *cover = calloc(n, sizeof *cover);
    long bad = 0;
    for (int64_t k = 0; k < f->local[2]; k++)
        for (int64_t j = 0; j < f->local[1]; j++)
            for (int64_t i = 0; i < f->local[0]; i++)
                cover[((f->offset[2] + k) * f->global[1] + f->offset[1] + j) * f->global[0] + f->offset[0] + i]++;
    MPI_Allreduce(MPI_IN_PLACE, cover, (int)n, MPI_INT, MPI_SUM, ctx->comm);
    for (size_t c = 0; c < n; c++) bad += cover[c] != 1;
    int64_t off[3], loc[3];
    TEST_OK(hs_field_rank_box(f, ctx->rank, off, loc));
    for (int e = 0; e < 3; e++) bad += off[e] != f->offset[e] || loc[e] != f->local[e];
    free(cover);
    return bad;
}

/* Reference: the same field on one rank, filled alike; its gather is its interior. */
static void reference(const hs_field *f, const int *per, double *ref, double sums[3])
{
    hs_ctx self = self_ctx();
    hs_decomp *d1 = NULL;
    hs_field *r = NULL;
    TEST_OK(hs_decomp_create(&self, f->d->ndim, f->d->global, per, NULL, 1, &d1));
    TEST_OK(hs_field_create_staggered(d1, HS_F64, 1, f->face_dim, &r));
    for (int e = 0; e < 3; e++) assert_int_equal(r->global[e], f->global[e]);
    fill_global_fn(r);
    TEST_OK(hs_field_gather(r, 0, ref));
    TEST_OK(hs_field_sum(r, &sums[0]));
    TEST_OK(hs_field_max(r, &sums[1]));
    TEST_OK(hs_field_norm2(r, &sums[2]));
    hs_field_destroy(r);
    hs_decomp_destroy(d1);
}

/* Gather on rank 0 against the single-rank reference, scatter back, reductions. */
static long check_gather(hs_field *f, const int *per)
{
    hs_ctx *ctx = f->d->ctx;
    size_t n = points(f->global), es = hs_field_esize(f);
    long bad = 0;
    void *all = ctx->rank == 0 ? calloc(n, es) : NULL;
    TEST_OK(hs_field_gather(f, 0, all));
    double sums[3] = {0, 0, 0}, got[3];
    if (ctx->rank == 0) {
        double *ref = malloc(n * sizeof *ref);
        reference(f, per, ref, sums);
        for (size_t i = 0; i < n; i++) {
            double v = f->dtype == HS_F64 ? ((double *)all)[i] : (double)((float *)all)[i];
            if (v != ref[i] && bad++ == 0) print_error("gather: global point %zu holds %g, reference %g\n", i, v, ref[i]);
        }
        free(ref);
    }
    MPI_Bcast(sums, 3, MPI_DOUBLE, 0, ctx->comm);
    /* integers: every sum is exact, so the rank count cannot change it */
    TEST_OK(hs_field_sum(f, &got[0]));
    TEST_OK(hs_field_max(f, &got[1]));
    TEST_OK(hs_field_norm2(f, &got[2]));
    for (int i = 0; i < 3; i++)
        if (got[i] != sums[i] && bad++ == 0) print_error("reduction %d: %.17g, single rank %.17g\n", i, got[i], sums[i]);
    /* scatter a different global array back and read the interior */
    if (ctx->rank == 0)
        for (size_t i = 0; i < n; i++) {
            if (f->dtype == HS_F64) ((double *)all)[i] = -1.0 - (double)i;
            else ((float *)all)[i] = -1.0f - (float)i;
        }
    TEST_OK(hs_field_scatter(f, 0, all));
    size_t nl = points(f->local);
    void *mine = malloc(nl * es + 8);
    TEST_OK(hs_field_get_interior(f, mine));
    size_t p = 0;
    for (int64_t k = 0; k < f->local[2]; k++)
        for (int64_t j = 0; j < f->local[1]; j++)
            for (int64_t i = 0; i < f->local[0]; i++, p++) {
                double want = -gval(f, f->offset[0] + i, f->offset[1] + j, f->offset[2] + k);
                double v = f->dtype == HS_F64 ? ((double *)mine)[p] : (double)((float *)mine)[p];
                if (v != want && bad++ == 0) print_error("scatter: rank %d local %zu holds %g, want %g\n", ctx->rank, p, v, want);
            }
    free(mine);
    free(all);
    return bad;
}

/* procs NULL: the decomposition's own choice. */
static void staggered_case(int ndim, const int *per, const int *procs, int face_dim, int halo, hs_dtype t, int corners)
{
    static const int64_t g1[1] = {19}, g2[2] = {11, 9}, g3[3] = {9, 10, 17};
    const int64_t *g = ndim == 1 ? g1 : ndim == 2 ? g2 : g3;
    hs_decomp *d = NULL;
    TEST_OK(hs_decomp_create(test_ctx(), ndim, g, per, procs, halo, &d));
    hs_field *f = NULL;
    TEST_OK(hs_field_create_staggered(d, t, halo, face_dim, &f));
    for (int e = 0; e < 3; e++) {
        int64_t want = d->global[e] + (e == face_dim && !d->periodic[e]);
        if (f->global[e] != want) fail_msg("face_dim %d: %lld points in dimension %d, want %lld", face_dim,
                                           (long long)f->global[e], e, (long long)want);
    }
    TEST_OK(hs_field_set_corners(f, corners));
    fill_global_fn(f);
    TEST_OK(hs_halo_exchange(f));
    char what[160];
    snprintf(what, sizeof what, "%dD procs %dx%dx%d periodic %d%d%d face_dim %d halo %d %s corners %d", ndim,
             d->procs[0], d->procs[1], d->procs[2], per[0], per[1], per[2], face_dim, halo, hs_dtype_name(t), corners);
    long bad = all_sum(check_ownership(f));
    if (bad) fail_msg("%s: owned points do not tile the global grid once (%ld)", what, bad);
    bad = all_sum(check_ghosts(f, corners, what));
    if (bad) fail_msg("%s: %ld wrong points over all ranks", what, bad);
    /* a second exchange over valid halos changes nothing */
    TEST_OK(hs_halo_exchange(f));
    bad = all_sum(check_ghosts(f, corners, what));
    if (bad) fail_msg("%s: second exchange: %ld wrong points", what, bad);
    bad = all_sum(check_gather(f, per));
    if (bad) fail_msg("%s: gather/scatter/reductions: %ld wrong", what, bad);
    hs_field_destroy(f);
    hs_decomp_destroy(d);
}

/* Every face dimension (and cell-centred), periodic and not, halos 1..4 with corners. */
static void test_staggered_exchange(void **state)
{
    (void)state;
    const int pers[3][3] = {{0, 0, 0}, {1, 1, 1}, {1, 0, 1}};
    for (int ndim = 1; ndim <= 3; ndim++)
        for (int p = 0; p < 3; p++)
            for (int fd = -1; fd < ndim; fd++)
                for (int h = 1; h <= 4; h++) staggered_case(ndim, pers[p], NULL, fd, h, HS_F64, 1);
}

/* f32, without corners (edges keep the sentinel), and every rank along the slowest dimension. */
static void test_staggered_variants(void **state)
{
    (void)state;
    const int per[3] = {0, 1, 0}, none[3] = {0, 0, 0}, zper[3] = {0, 0, 1};
    const int zsplit[3] = {1, 1, test_ctx()->size};
    for (int fd = -1; fd < 3; fd++) {
        staggered_case(3, per, NULL, fd, 2, HS_F32, 1);
        staggered_case(3, none, NULL, fd, 3, HS_F64, 0);
        staggered_case(2, per, NULL, fd < 2 ? fd : 1, 4, HS_F32, 0);
        for (int h = 1; h <= 4; h += 3) {
            staggered_case(3, none, zsplit, fd, h, HS_F64, 1);
            staggered_case(3, zper, zsplit, fd, h, HS_F64, 1);
        }
    }
}

/* Overlapped exchange on a face-centred field: the split covers the owned points once. */
static void test_staggered_split(void **state)
{
    (void)state;
    const int64_t g[3] = {12, 10, 9};
    const int per[3] = {0, 0, 1};
    hs_decomp *d = NULL;
    TEST_OK(hs_decomp_create(test_ctx(), 3, g, per, NULL, 2, &d));
    long bad = 0;
    for (int fd = -1; fd < 3; fd++) {
        hs_field *f = NULL;
        TEST_OK(hs_field_create_staggered(d, HS_F64, 2, fd, &f));
        hs_box in, shell[6];
        int ns = hs_field_split_boxes(f, 2, &in, shell);
        size_t n = points(f->local);
        int *cover = calloc(n, sizeof *cover);
        for (int b = -1; b < ns; b++) {
            const hs_box *x = b < 0 ? &in : &shell[b];
            for (int64_t k = x->lo[2]; k < x->hi[2]; k++)
                for (int64_t j = x->lo[1]; j < x->hi[1]; j++)
                    for (int64_t i = x->lo[0]; i < x->hi[0]; i++) cover[(k * f->local[1] + j) * f->local[0] + i]++;
        }
        for (size_t c = 0; c < n; c++) bad += cover[c] != 1;
        free(cover);
        hs_field_destroy(f);
    }
    hs_decomp_destroy(d);
    bad = all_sum(bad);
    if (bad) fail_msg("split boxes cover %ld points other than once", bad);
}

static void test_staggered_errors(void **state)
{
    (void)state;
    const int64_t g[2] = {16, 12};
    hs_decomp *d = NULL;
    TEST_OK(hs_decomp_create(test_ctx(), 2, g, NULL, NULL, 1, &d));
    hs_field *f = NULL;
    expect_input_error(hs_field_create_staggered(d, HS_F64, 1, 2, &f), "face dimension 2");
    expect_input_error(hs_field_create_staggered(d, HS_F64, 1, -2, &f), "face dimension -2");
    assert_null(f);
    hs_decomp_destroy(d);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_staggered_exchange),
    cmocka_unit_test(test_staggered_variants),
    cmocka_unit_test(test_staggered_split),
    cmocka_unit_test(test_staggered_errors),
};

TEST_MAIN("staggered_mpi", tests)
