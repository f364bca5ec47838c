/* MPI tests of the fast Poisson solver: on 1, 2 and 4 ranks the solution equals the one-rank solution and a dense LU reference. */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/fft/poisson.h"
#include "kernels/memory.h"
#include "poisson_ref.h"

#define P_ HS_POISSON_PERIODIC
#define N_ HS_POISSON_NEUMANN
#define D_ HS_POISSON_DIRICHLET

/* The test context restricted to this rank: a one-rank solve of the whole grid inside a run of any
 * size (the context is a plain struct; only its communicator and rank numbers change). */
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

typedef struct {
    int ndim;
    int64_t n[3];
    hs_poisson_bc bc[3][2];
} mcase;

static hs_decomp *split_last(hs_ctx *ctx, const mcase *c)
{
    int per[3] = {0, 0, 0}, procs[3] = {1, 1, 1};
    for (int d = 0; d < c->ndim; d++) per[d] = c->bc[d][0] == P_;
    procs[c->ndim - 1] = ctx->size;
    hs_decomp *d = NULL;
    TEST_OK(hs_decomp_create(ctx, c->ndim, c->n, per, procs, 1, &d));
    return d;
}

/* Solve (and apply) the local block of f (a block of the global array, planes of the last
 * dimension from off) on decomposition d. */
static void solve_block(hs_decomp *d, const mcase *c, const double dx[3], const double *f_block, double *p_block,
                        double *Lp_block, double *mean)
{
    hs_ctx *ctx = d->ctx;
    int64_t n = d->local[0] * d->local[1] * d->local[2];
    size_t bytes = (size_t)n * sizeof(double);
    hs_poisson *ps = NULL;
    TEST_OK(hs_poisson_create(d, c->bc, dx, &ps));
    double *df = NULL, *dp = NULL, *dl = NULL;
    TEST_OK(hs_mem_alloc(ctx, bytes, (void **)&df));
    TEST_OK(hs_mem_alloc(ctx, bytes, (void **)&dp));
    TEST_OK(hs_mem_alloc(ctx, bytes, (void **)&dl));
    TEST_OK(hs_mem_copy(ctx, df, f_block, bytes, HS_COPY_H2D));
    TEST_OK(hs_poisson_solve(ps, df, dp, mean));
    TEST_OK(hs_poisson_apply(ps, dp, dl));
    TEST_OK(hs_mem_copy(ctx, p_block, dp, bytes, HS_COPY_D2H));
    TEST_OK(hs_mem_copy(ctx, Lp_block, dl, bytes, HS_COPY_D2H));
    hs_poisson_destroy(ps);
    hs_mem_free(ctx, df);
    hs_mem_free(ctx, dp);
    hs_mem_free(ctx, dl);
}

/* sqrt(sum over ranks |a - b|^2 / sum |b|^2). */
static double global_rel(const double *a, const double *b, int64_t n)
{
    double s[2] = {0, 0};
    for (int64_t i = 0; i < n; i++) {
        s[0] += (a[i] - b[i]) * (a[i] - b[i]);
        s[1] += b[i] * b[i];
    }
    TEST_OK(hs_allreduce_sum(test_ctx()->comm, s, 2));
    return s[1] > 0 ? sqrt(s[0] / s[1]) : sqrt(s[0]);
}

static long check_case(const mcase *c, uint64_t seed)
{
    static const double dx[3] = {0.11, 0.07, 0.2};
    hs_ctx *ctx = test_ctx();
    int64_t N = c->n[0] * c->n[1] * c->n[2];
    double *f = malloc((size_t)N * sizeof *f), *p1 = malloc((size_t)N * sizeof *p1), *L1 = malloc((size_t)N * sizeof *L1);
    test_fill_f64(f, (size_t)N, seed, -1, 1);
    if (ref_singular(c->ndim, c->bc))
        for (int64_t i = 0; i < N; i++) f[i] += 0.5;
    /* the whole grid on this rank alone */
    hs_decomp *d1 = split_last(self_ctx(), c);
    double m1 = 0;
    solve_block(d1, c, dx, f, p1, L1, &m1);
    hs_decomp_destroy(d1);

    hs_decomp *d = split_last(ctx, c);
    int L = c->ndim - 1;
    int64_t plane = N / c->n[L], off = d->offset[L] * plane, n = d->local[L] * plane;
    assert_int_equal(n, d->local[0] * d->local[1] * d->local[2]);
    double *p = malloc((size_t)n * sizeof *p), *Lp = malloc((size_t)n * sizeof *Lp), m = 0;
    solve_block(d, c, dx, f + off, p, Lp, &m);
    long bad = 0;
    char name[96];
    snprintf(name, sizeof name, "%dD %lldx%lldx%lld bc %d%d %d%d %d%d on %d ranks", c->ndim, (long long)c->n[0],
             (long long)c->n[1], (long long)c->n[2], c->bc[0][0], c->bc[0][1], c->bc[1][0], c->bc[1][1], c->bc[2][0],
             c->bc[2][1], ctx->size);
    double e1 = global_rel(p, p1 + off, n);
    if (!(e1 < 1e-12)) {
        print_error("%s: against the one-rank solution %.3e\n", name, e1);
        bad++;
    }
    if (!(fabs(m - m1) <= 1e-15 * (1 + fabs(m1)))) {
        print_error("%s: f_mean %.17g, one rank %.17g\n", name, m, m1);
        bad++;
    }
    /* the distributed apply (halo exchange between the slabs) against the naive loop */
    ref_laplacian(c->ndim, c->n, c->bc, dx, p1, L1);
    double ea = global_rel(Lp, L1 + off, n);
    if (!(ea < 1e-12)) {
        print_error("%s: distributed apply against the naive Laplacian %.3e\n", name, ea);
        bad++;
    }
    if (N <= 600) { /* and a second implementation */
        double *ref = malloc((size_t)N * sizeof *ref);
        assert_int_equal(ref_dense_solve(c->ndim, c->n, c->bc, dx, f, ref), 0);
        double er = global_rel(p, ref + off, n);
        if (!(er < 1e-11)) {
            print_error("%s: against dense LU %.3e\n", name, er);
            bad++;
        }
        free(ref);
    }
    hs_decomp_destroy(d);
    free(f), free(p1), free(L1), free(p), free(Lp);
    return bad;
}

static mcase mk(int ndim, int64_t n0, int64_t n1, int64_t n2, const hs_poisson_bc *b)
{
    mcase c = {ndim, {n0, ndim > 1 ? n1 : 1, ndim > 2 ? n2 : 1}, {{P_, P_}, {P_, P_}, {P_, P_}}};
    for (int d = 0; d < ndim; d++) c.bc[d][0] = b[2 * d], c.bc[d][1] = b[2 * d + 1];
    return c;
}

/* Every path: transforms only, the mixed dimension last (solved in C), and the mixed dimension
 * elsewhere (solved in pre-C between two more transposes when split), on sizes that the ranks
 * divide unevenly and whose transposed rows do not split evenly either. */
static void test_rank_equivalence(void **state)
{
    (void)state;
    const hs_poisson_bc b1[][2] = {{P_, P_}, {N_, N_}, {D_, D_}, {N_, D_}, {D_, N_}};
    long bad = 0;
    for (int i = 0; i < 5; i++) {
        mcase c = mk(1, 37, 0, 0, b1[i]);
        bad += check_case(&c, 10 + (uint64_t)i);
    }
    const hs_poisson_bc b2[][4] = {{N_, N_, N_, N_}, {P_, P_, D_, D_}, {N_, D_, N_, N_}, {D_, N_, P_, P_},
                                   {N_, N_, N_, D_}, {P_, P_, D_, N_}, {D_, D_, P_, P_}};
    const int64_t s2[][2] = {{13, 11}, {16, 9}, {21, 14}, {3, 10}, {12, 13}, {9, 8}, {25, 19}};
    for (int i = 0; i < 7; i++) {
        mcase c = mk(2, s2[i][0], s2[i][1], 0, b2[i]);
        bad += check_case(&c, 20 + (uint64_t)i);
    }
    const hs_poisson_bc b3[][6] = {{N_, N_, N_, N_, N_, N_}, {P_, P_, D_, D_, N_, N_}, {N_, D_, P_, P_, N_, N_},
                                   {P_, P_, D_, N_, D_, D_}, {N_, N_, P_, P_, D_, N_}, {D_, D_, N_, N_, P_, P_}};
    const int64_t s3[][3] = {{6, 5, 7}, {8, 6, 9}, {7, 4, 6}, {5, 9, 6}, {6, 7, 11}, {16, 12, 10}};
    for (int i = 0; i < 6; i++) {
        mcase c = mk(3, s3[i][0], s3[i][1], s3[i][2], b3[i]);
        bad += check_case(&c, 30 + (uint64_t)i);
    }
    assert_int_equal(bad, 0);
}

/* A decomposition that splits another dimension than the last is refused, naming what works. */
static void test_split_error(void **state)
{
    (void)state;
    hs_ctx *ctx = test_ctx();
    if (ctx->size == 1) return; /* one rank splits nothing */
    hs_decomp *d = NULL;
    TEST_OK(hs_decomp_create(ctx, 2, (const int64_t[2]){16, 16}, NULL, (const int[2]){ctx->size, 1}, 1, &d));
    const hs_poisson_bc bc[3][2] = {{N_, N_}, {N_, N_}, {P_, P_}};
    hs_poisson *ps = NULL;
    hs_error_clear();
    assert_int_equal(hs_poisson_create(d, bc, (const double[3]){1, 1, 1}, &ps), HS_ERR_INPUT);
    if (!strstr(hs_error_message(), "{1, P}")) fail_msg("message '%s' does not say what works", hs_error_message());
    hs_error_clear();
    hs_decomp_destroy(d);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_rank_equivalence),
    cmocka_unit_test(test_split_error),
};

TEST_MAIN("poisson_mpi", tests)
