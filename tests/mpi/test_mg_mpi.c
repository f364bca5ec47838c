/* MPI tests of the multigrid: decompositions with given boxes, and on 1, 2 and 4 ranks with every split the solve equals the one-rank solve to round-off. */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/memory.h"
#include "kernels/mg/mg.h"

#define P_ HS_BC_PERIODIC
#define N_ HS_BC_NEUMANN
#define D_ HS_BC_DIRICHLET

/* The test context restricted to this rank (as in test_poisson_mpi.c). */
static hs_ctx *self_ctx(void)
{
    static hs_ctx self;
    static int made;
    if (!made) {
        self = *test_ctx();
        self.comm = MPI_COMM_SELF;
        self.rank = 0;
        self.size = 1;
        self.owns_mpi = 0;
        made = 1;
    }
    return &self;
}

/* A decomposition with uneven given boxes: every rank's box, the halo exchange, the interior stored
 * contiguously and a gather. */
static void test_split_decomposition(void **state)
{
    (void)state;
    hs_ctx *ctx = test_ctx();
    int P = ctx->size;
    /* boxes of 6, 8, 6, ... cells, the last 3 more: not the even split */
    int64_t *sx = malloc((size_t)(P + 1) * sizeof *sx);
    sx[0] = 0;
    for (int c = 0; c < P; c++) sx[c + 1] = sx[c] + 6 + 2 * (c % 2) + (c == P - 1 ? 3 : 0);
    const int64_t global[2] = {sx[P], 5};
    const int64_t *const starts[3] = {sx, NULL, NULL};
    hs_decomp *d = NULL;
    TEST_OK(hs_decomp_create_split(ctx, 2, global, (const int[2]){1, 0}, (const int[2]){P, 1}, starts, &d));
    int64_t s[16];
    hs_decomp_starts(d, 0, s);
    for (int c = 0; c <= P; c++) assert_int_equal(s[c], sx[c]);
    assert_int_equal(d->offset[0], sx[ctx->rank]);
    assert_int_equal(d->local[0], sx[ctx->rank + 1] - sx[ctx->rank]);
    for (int r = 0; r < P; r++) {
        int64_t off[3], loc[3];
        TEST_OK(hs_decomp_rank_box(d, r, off, loc));
        assert_int_equal(off[0], sx[r]);
        assert_int_equal(loc[0], sx[r + 1] - sx[r]);
        assert_int_equal(loc[1], 5);
    }
    /* each cell holds its global x index; after an exchange (periodic in x) the halos hold the neighbours' */
    hs_field *f = NULL;
    TEST_OK(hs_field_create(d, HS_F64, 2, &f));
    size_t n = (size_t)(d->local[0] * d->local[1]);
    double *h = malloc(n * sizeof *h), *g = malloc((size_t)(global[0] * global[1]) * sizeof *g);
    for (int64_t j = 0; j < d->local[1]; j++)
        for (int64_t i = 0; i < d->local[0]; i++) h[j * d->local[0] + i] = (double)(d->offset[0] + i) + 1000.0 * (double)j;
    TEST_OK(hs_field_set_interior(f, h));
    TEST_OK(hs_halo_exchange(f));
    double *all = test_download_new(f->data, f->count * sizeof(double));
    for (int m = 1; m <= 2; m++) {
        int64_t gl = (d->offset[0] - m + global[0]) % global[0], gh = (d->offset[0] + d->local[0] - 1 + m) % global[0];
        assert_true(all[hs_field_index(f, -m, 3, 0)] == (double)gl + 3000.0);
        assert_true(all[hs_field_index(f, d->local[0] - 1 + m, 2, 0)] == (double)gh + 2000.0);
    }
    /* the interior back into a contiguous device array */
    double *dc = test_upload(NULL, n * sizeof(double));
    TEST_OK(hs_field_store_interior(f, dc));
    double *back = test_download_new(dc, n * sizeof(double));
    assert_memory_equal(back, h, n * sizeof(double));
    free(back);
    hs_mem_free(ctx, dc);
    TEST_OK(hs_field_gather(f, 0, g));
    if (ctx->rank == 0)
        for (int64_t j = 0; j < global[1]; j++)
            for (int64_t i = 0; i < global[0]; i++) assert_true(g[j * global[0] + i] == (double)i + 1000.0 * (double)j);
    free(all), free(h), free(g);
    hs_field_destroy(f);
    hs_decomp_destroy(d);
    /* boundaries that leave a coordinate without cells, or do not end at the grid's size */
    hs_decomp *bad = NULL;
    sx[P] = global[0] + 1;
    hs_error_clear();
    assert_int_equal(hs_decomp_create_split(ctx, 2, global, NULL, (const int[2]){P, 1}, starts, &bad), HS_ERR_INPUT);
    if (!strstr(hs_error_message(), "runs from")) fail_msg("message '%s'", hs_error_message());
    sx[P] = global[0];
    if (P > 1) {
        sx[1] = 0;
        hs_error_clear();
        assert_int_equal(hs_decomp_create_split(ctx, 2, global, NULL, (const int[2]){P, 1}, starts, &bad), HS_ERR_INPUT);
        if (!strstr(hs_error_message(), "without cells")) fail_msg("message '%s'", hs_error_message());
    }
    hs_error_clear();
    assert_null(bad);
    free(sx);
}

typedef struct {
    int ndim;
    int64_t n[3];
    hs_bc_kind bc[3][2];
} mcase;

static mcase mk(int ndim, int64_t n0, int64_t n1, int64_t n2, const hs_bc_kind *b)
{
    mcase c = {ndim, {n0, ndim > 1 ? n1 : 1, ndim > 2 ? n2 : 1}, {{P_, P_}, {P_, P_}, {P_, P_}}};
    for (int d = 0; d < ndim; d++) c.bc[d][0] = b[2 * d], c.bc[d][1] = b[2 * d + 1];
    return c;
}

static hs_decomp *split(hs_ctx *ctx, const mcase *c, const int *procs)
{
    int per[3] = {0, 0, 0};
    for (int d = 0; d < c->ndim; d++) per[d] = c->bc[d][0] == P_;
    hs_decomp *d = NULL;
    TEST_OK(hs_decomp_create(ctx, c->ndim, c->n, per, procs, 2, &d));
    return d;
}

/* Solve the block of f that d gives this rank; p and the iterations out. */
static void solve_block(hs_decomp *d, const mcase *c, const double dx[3], const double *f, double *p, hs_mg_stats *st,
                        char *summary, size_t len, int64_t coarse_cells)
{
    hs_ctx *ctx = d->ctx;
    const int64_t *g = c->n, *o = d->offset, *l = d->local;
    size_t n = (size_t)(l[0] * l[1] * l[2]), bytes = n * sizeof(double);
    double *blk = malloc(bytes + 8);
    for (int64_t k = 0; k < l[2]; k++)
        for (int64_t j = 0; j < l[1]; j++)
            for (int64_t i = 0; i < l[0]; i++) blk[(k * l[1] + j) * l[0] + i] = f[((o[2] + k) * g[1] + o[1] + j) * g[0] + o[0] + i];
    hs_mg_opts opt = hs_mg_default_opts();
    opt.rtol = 1e-10;
    opt.coarse_cells = coarse_cells;
    hs_mg *mg = NULL;
    TEST_OK(hs_mg_create(d, c->bc, dx, &opt, &mg));
    snprintf(summary, len, "%s", hs_mg_summary(mg));
    double *df = NULL, *dp = NULL;
    TEST_OK(hs_mem_alloc(ctx, bytes + 8, (void **)&df));
    TEST_OK(hs_mem_alloc(ctx, bytes + 8, (void **)&dp));
    TEST_OK(hs_mem_copy(ctx, df, blk, bytes, HS_COPY_H2D));
    TEST_OK(hs_mg_solve(mg, df, dp, 0, NULL, st));
    TEST_OK(hs_mem_copy(ctx, p, dp, bytes, HS_COPY_D2H));
    hs_mem_free(ctx, df), hs_mem_free(ctx, dp);
    hs_mg_destroy(mg);
    free(blk);
}

/* sqrt(sum over ranks |a - b_block|^2 / sum |b_block|^2) for this rank's block of the global b. */
static double global_rel(const hs_decomp *d, const int64_t *g, const double *a, const double *b)
{
    const int64_t *o = d->offset, *l = d->local;
    double s[2] = {0, 0};
    for (int64_t k = 0; k < l[2]; k++)
        for (int64_t j = 0; j < l[1]; j++)
            for (int64_t i = 0; i < l[0]; i++) {
                double x = a[(k * l[1] + j) * l[0] + i], y = b[((o[2] + k) * g[1] + o[1] + j) * g[0] + o[0] + i];
                s[0] += (x - y) * (x - y), s[1] += y * y;
            }
    TEST_OK(hs_allreduce_sum(test_ctx()->comm, s, 2));
    return s[1] > 0 ? sqrt(s[0] / s[1]) : sqrt(s[0]);
}

static long check_case(const mcase *c, uint64_t seed, const int (*procs)[3], int nprocs, int64_t coarse_cells)
{
    static const double dx[3] = {0.11, 0.13, 0.09};
    hs_ctx *ctx = test_ctx();
    int64_t N = c->n[0] * c->n[1] * c->n[2];
    double *f = malloc((size_t)N * sizeof *f), *p1 = malloc((size_t)N * sizeof *p1);
    test_fill_f64(f, (size_t)N, seed, -1, 1);
    char s1[256], s[256];
    hs_mg_stats st1, st;
    hs_decomp *d1 = split(self_ctx(), c, (const int[3]){1, 1, 1});
    solve_block(d1, c, dx, f, p1, &st1, s1, sizeof s1, coarse_cells);
    hs_decomp_destroy(d1);
    long bad = 0;
    const int one[3] = {1, 1, 1};
    for (int t = 0; t < nprocs + 1; t++) {
        /* the listed splits of this rank count, and on one rank the test context itself */
        const int *pr = t < nprocs ? procs[t] : one;
        if (pr[0] * pr[1] * pr[2] != ctx->size || (t == nprocs && ctx->size > 1)) continue;
        hs_decomp *d = split(ctx, c, pr);
        double *p = malloc((size_t)(d->local[0] * d->local[1] * d->local[2]) * sizeof *p + 8);
        solve_block(d, c, dx, f, p, &st, s, sizeof s, coarse_cells);
        double e = global_rel(d, c->n, p, p1);
        if (ctx->rank == 0 && getenv("HS_TEST_VERBOSE"))
            printf("%dD %lldx%lldx%lld on %dx%dx%d: %d iterations (one rank %d), against one rank %.3e; %s\n", c->ndim,
                   (long long)c->n[0], (long long)c->n[1], (long long)c->n[2], pr[0], pr[1], pr[2], st.iterations,
                   st1.iterations, e, s);
        if (!(e < 1e-11) || abs(st.iterations - st1.iterations) > 1 || !st.converged) {
            print_error("%dD %lldx%lldx%lld on %dx%dx%d ranks: %d iterations (one rank %d), against one rank %.3e\n", c->ndim,
                        (long long)c->n[0], (long long)c->n[1], (long long)c->n[2], pr[0], pr[1], pr[2], st.iterations,
                        st1.iterations, e);
            bad++;
        }
        hs_decomp_destroy(d);
        free(p);
    }
    free(f), free(p1);
    return bad;
}

/* Uneven boxes (odd local sizes: coarse cells straddle the ranks), every kind of end, splits along
 * x, y, z and in two dimensions over the cases, and grids that the ranks coarsen down to one cell
 * each before the gathered levels take over (coarse_cells 1).  Each case lists its splits for 2
 * and 4 ranks (one rank: the case itself). */
static void test_rank_equivalence(void **state)
{
    (void)state;
    long bad = 0;
    const hs_bc_kind b1[] = {N_, D_};
    const int p1[][3] = {{2, 1, 1}, {4, 1, 1}};
    mcase c1 = mk(1, 1000, 0, 0, b1); /* 1000 -> 125 on the ranks, then gathered */
    bad += check_case(&c1, 1, p1, 2, 4);
    const hs_bc_kind b2[][4] = {{N_, D_, N_, D_}, {P_, P_, N_, N_}, {D_, D_, P_, P_}};
    const int64_t s2[][2] = {{60, 44}, {96, 80}, {128, 64}}, cc2[] = {256, 4, 1};
    const int p2[][3][3] = {{{2, 1, 1}, {4, 1, 1}, {2, 2, 1}}, {{1, 2, 1}, {1, 4, 1}, {0, 0, 0}},
                            {{2, 1, 1}, {2, 2, 1}, {0, 0, 0}}};
    for (int t = 0; t < 3; t++) {
        mcase c = mk(2, s2[t][0], s2[t][1], 0, b2[t]);
        bad += check_case(&c, 10 + (uint64_t)t, p2[t], 3, cc2[t]);
    }
    const hs_bc_kind b3[][6] = {{N_, D_, N_, N_, D_, N_}, {P_, P_, N_, N_, P_, P_}};
    const int64_t s3[][3] = {{20, 18, 12}, {32, 24, 16}}, cc3[] = {256, 1};
    const int p3[][2][3] = {{{1, 1, 2}, {2, 2, 1}}, {{2, 1, 1}, {1, 2, 2}}};
    for (int t = 0; t < 2; t++) {
        mcase c = mk(3, s3[t][0], s3[t][1], s3[t][2], b3[t]);
        bad += check_case(&c, 20 + (uint64_t)t, p3[t], 2, cc3[t]);
    }
    assert_int_equal(bad, 0);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_split_decomposition),
    cmocka_unit_test(test_rank_equivalence),
};

TEST_MAIN("mg_mpi", tests)
