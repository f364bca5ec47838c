/* Unit tests of the multigrid-preconditioned CG: second-order manufactured solutions, iteration counts flat under refinement, agreement with the transform solver and a naive Laplacian. */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/fft/poisson.h"
#include "kernels/memory.h"
#include "kernels/mg/mg.h"
#include "poisson_ref.h"

#define P_ HS_BC_PERIODIC
#define N_ HS_BC_NEUMANN
#define D_ HS_BC_DIRICHLET

static int verbose(void) { return getenv("HS_TEST_VERBOSE") != NULL; }

typedef struct {
    int ndim;
    int64_t n[3];
    hs_bc_kind bc[3][2];
    double dx[3];
} mcase;

static mcase mk(int ndim, int64_t n0, int64_t n1, int64_t n2, const hs_bc_kind *b, double L0, double L1, double L2)
{
    mcase c;
    memset(&c, 0, sizeof c);
    c.ndim = ndim;
    const int64_t n[3] = {n0, n1, n2};
    const double len[3] = {L0, L1, L2};
    for (int d = 0; d < 3; d++) {
        c.n[d] = d < ndim ? n[d] : 1;
        c.dx[d] = d < ndim ? len[d] / (double)n[d] : 1.0;
        c.bc[d][0] = d < ndim ? b[2 * d] : P_;
        c.bc[d][1] = d < ndim ? b[2 * d + 1] : P_;
    }
    return c;
}

static int64_t cells(const mcase *c) { return c->n[0] * c->n[1] * c->n[2]; }

static const char *name_of(const mcase *c)
{
    static char buf[128];
    static const char k[] = "PDN";
    int len = snprintf(buf, sizeof buf, "%dD", c->ndim);
    for (int d = 0; d < c->ndim; d++)
        len += snprintf(buf + len, sizeof buf - (size_t)len, " %c%c%lld", k[c->bc[d][0]], k[c->bc[d][1]], (long long)c->n[d]);
    return buf;
}

/* The transform solver's and the reference's names for the same boundaries. */
static void to_poisson_bc(const mcase *c, hs_poisson_bc pb[3][2])
{
    for (int d = 0; d < 3; d++)
        for (int s = 0; s < 2; s++)
            pb[d][s] = c->bc[d][s] == P_ ? HS_POISSON_PERIODIC : c->bc[d][s] == N_ ? HS_POISSON_NEUMANN : HS_POISSON_DIRICHLET;
}

static int singular(const mcase *c)
{
    for (int d = 0; d < c->ndim; d++)
        if (c->bc[d][0] == D_ || c->bc[d][1] == D_) return 0;
    return 1;
}

static hs_decomp *decomp_of(const mcase *c)
{
    int per[3] = {0, 0, 0};
    for (int d = 0; d < c->ndim; d++) per[d] = c->bc[d][0] == P_;
    hs_decomp *d = NULL;
    TEST_OK(hs_decomp_create(test_ctx(), c->ndim, c->n, per, (const int[3]){1, 1, 1}, 1, &d));
    return d;
}

/* Solve L p = f (host arrays) with the multigrid on the test device. */
static void mg_solve(const mcase *c, const hs_mg_opts *o, const double *f, double *p, hs_mg_stats *st, int *levels)
{
    hs_decomp *d = decomp_of(c);
    hs_mg *mg = NULL;
    TEST_OK(hs_mg_create(d, c->bc, c->dx, o, &mg));
    if (levels) *levels = hs_mg_levels(mg);
    if (verbose()) print_message("%s: %s\n", name_of(c), hs_mg_summary(mg));
    size_t bytes = (size_t)cells(c) * sizeof(double);
    double *df = test_upload(f, bytes), *dp = test_upload(NULL, bytes);
    TEST_OK(hs_mg_solve(mg, df, dp, 0, NULL, st));
    test_download(p, dp, bytes);
    hs_mem_free(test_ctx(), df);
    hs_mem_free(test_ctx(), dp);
    hs_mg_destroy(mg);
    hs_decomp_destroy(d);
}

/* ------------------------------------------------------------------ manufactured solutions */

/* A factor of the exact solution along one dimension of length len that meets the ends exactly
 * (p = 0 at a Dirichlet face, dp/dn = 0 at a Neumann face, periodic), with phi'' = -k^2 phi. */
static double factor(hs_bc_kind lo, hs_bc_kind hi, double x, double len, double *k)
{
    if (lo == P_) return *k = 2 * M_PI / len, cos(*k * x) + sin(*k * x);
    if (lo == D_ && hi == D_) return *k = M_PI / len, sin(*k * x);
    if (lo == N_ && hi == N_) return *k = M_PI / len, cos(*k * x);
    if (lo == N_) return *k = M_PI / (2 * len), cos(*k * x);
    return *k = M_PI / (2 * len), sin(*k * x);
}

/* max |p - p_exact| over the cells (zero means compared in a singular case). */
static double manufactured_error(const mcase *c)
{
    int64_t N = cells(c);
    double *pe = malloc((size_t)N * sizeof *pe), *f = malloc((size_t)N * sizeof *f), *p = malloc((size_t)N * sizeof *p);
    for (int64_t k = 0; k < c->n[2]; k++)
        for (int64_t j = 0; j < c->n[1]; j++)
            for (int64_t i = 0; i < c->n[0]; i++) {
                const int64_t at[3] = {i, j, k};
                double v = 1.0, k2 = 0.0;
                for (int d = 0; d < c->ndim; d++) {
                    double kd;
                    v *= factor(c->bc[d][0], c->bc[d][1], ((double)at[d] + 0.5) * c->dx[d], (double)c->n[d] * c->dx[d], &kd);
                    k2 += kd * kd;
                }
                pe[i + c->n[0] * (j + c->n[1] * k)] = v;
                f[i + c->n[0] * (j + c->n[1] * k)] = -k2 * v;
            }
    hs_mg_opts o = hs_mg_default_opts();
    o.rtol = 1e-13;
    hs_mg_stats st;
    mg_solve(c, &o, f, p, &st, NULL);
    assert_true(st.converged);
    double shift = singular(c) ? ref_mean(pe, N) - ref_mean(p, N) : 0.0, e = 0.0;
    for (int64_t i = 0; i < N; i++) e = fmax(e, fabs(p[i] + shift - pe[i]));
    free(pe), free(f), free(p);
    return e;
}

static void test_manufactured_second_order(void **state)
{
    (void)state;
    /* every end in 2D and 3D: Dirichlet, Neumann, periodic and mixed, on non-square domains */
    const hs_bc_kind b2[][4] = {{D_, D_, D_, D_}, {N_, N_, N_, N_}, {P_, P_, P_, P_}, {N_, D_, D_, N_}, {P_, P_, N_, D_}};
    const hs_bc_kind b3[][6] = {{D_, D_, D_, D_, D_, D_}, {N_, N_, N_, N_, P_, P_}, {N_, D_, N_, D_, N_, D_},
                                {P_, P_, D_, N_, N_, N_}};
    long bad = 0;
    for (size_t t = 0; t < sizeof b2 / sizeof b2[0] + sizeof b3 / sizeof b3[0]; t++) {
        int three = t >= sizeof b2 / sizeof b2[0];
        double err[2];
        for (int l = 0; l < 2; l++) {
            int64_t n = (three ? 12 : 24) << l;
            mcase c = three ? mk(3, n, n, n, b3[t - 5], 1.0, 1.2, 0.9) : mk(2, n, 2 * n, 1, b2[t], 1.0, 1.7, 1);
            err[l] = manufactured_error(&c);
            if (verbose()) print_message("%s: max error %.3e\n", name_of(&c), err[l]);
        }
        double order = log2(err[0] / err[1]);
        if (!(order > 1.85 && order < 2.15)) {
            print_error("case %zu: observed order %.3f (errors %.3e, %.3e), expected 2\n", t, order, err[0], err[1]);
            bad++;
        }
    }
    assert_int_equal(bad, 0);
}

/* ------------------------------------------------------------------ iteration counts */

/* Iterations to 1e-10 for a random f on grids doubling in size: flat (within `spread`). */
static long check_flat(int ndim, const hs_bc_kind *b, const int64_t *sizes, int count, int spread, int most)
{
    int it[8], lv[8];
    long bad = 0;
    char line[256];
    int len = 0;
    for (int s = 0; s < count; s++) {
        int64_t n = sizes[s];
        mcase c = mk(ndim, n, n, n, b, 1.0, 1.0, 1.0);
        int64_t N = cells(&c);
        double *f = malloc((size_t)N * sizeof *f), *p = malloc((size_t)N * sizeof *p);
        test_fill_f64(f, (size_t)N, 77 + (uint64_t)s, -1, 1);
        hs_mg_stats st;
        mg_solve(&c, NULL, f, p, &st, &lv[s]);
        it[s] = st.iterations;
        if (!st.converged || !(st.residual <= 1e-10)) {
            print_error("%s: not converged (%d iterations, residual %.3e)\n", name_of(&c), st.iterations, st.residual);
            bad++;
        }
        len += snprintf(line + len, sizeof line - (size_t)len, " %lld:%d(%d levels)", (long long)n, it[s], lv[s]);
        free(f), free(p);
    }
    mcase c0 = mk(ndim, 1, 1, 1, b, 1, 1, 1);
    print_message("%s iterations to 1e-10:%s\n", name_of(&c0), line);
    int lo = it[0], hi = it[0];
    for (int s = 1; s < count; s++) lo = it[s] < lo ? it[s] : lo, hi = it[s] > hi ? it[s] : hi;
    if (hi - lo > spread || hi > most) {
        print_error("iterations %d..%d: spread above %d or more than %d\n", lo, hi, spread, most);
        bad++;
    }
    return bad;
}

static void test_iterations_flat_2d(void **state)
{
    (void)state;
    const int64_t sizes[] = {32, 64, 128, 256};
    const hs_bc_kind cases[][4] = {{D_, D_, D_, D_}, {N_, N_, N_, N_}, {P_, P_, P_, P_}, {N_, D_, N_, D_}, {P_, P_, D_, N_}};
    long bad = 0;
    for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) bad += check_flat(2, cases[t], sizes, 4, 3, 20);
    assert_int_equal(bad, 0);
}

static void test_iterations_flat_3d(void **state)
{
    (void)state;
    const int64_t sizes[] = {16, 32, 64};
    const hs_bc_kind cases[][6] = {{D_, D_, D_, D_, D_, D_}, {N_, N_, N_, N_, N_, N_}, {N_, D_, N_, D_, P_, P_}};
    long bad = 0;
    for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) bad += check_flat(3, cases[t], sizes, 3, 3, 20);
    assert_int_equal(bad, 0);
}

/* ------------------------------------------------------------------ against other implementations */

/* Random f: the residual by the naive host Laplacian of poisson_ref.h, the solution against the
 * transform solver where that applies, hs_mg_apply against the naive loop. */
static long check_against_refs(const mcase *c, uint64_t seed, int fft_applies)
{
    int64_t N = cells(c);
    hs_poisson_bc pb[3][2];
    to_poisson_bc(c, pb);
    double *f = malloc((size_t)N * sizeof *f), *p = malloc((size_t)N * sizeof *p), *q = malloc((size_t)N * sizeof *q);
    double *r = malloc((size_t)N * sizeof *r);
    test_fill_f64(f, (size_t)N, seed, -1, 1);
    int sing = singular(c);
    for (int64_t i = 0; sing && i < N; i++) f[i] += 0.25; /* to be removed */
    hs_decomp *d = decomp_of(c);
    hs_mg_opts o = hs_mg_default_opts();
    o.rtol = 1e-12;
    hs_mg *mg = NULL;
    TEST_OK(hs_mg_create(d, c->bc, c->dx, &o, &mg));
    size_t bytes = (size_t)N * sizeof(double);
    double *df = test_upload(f, bytes), *dp = test_upload(NULL, bytes), fm = -1;
    hs_mg_stats st;
    TEST_OK(hs_mg_solve(mg, df, dp, 0, &fm, &st));
    test_download(p, dp, bytes);
    long bad = 0;
    double mean = sing ? ref_mean(f, N) : 0.0;
    if (fabs(fm - mean) > 1e-14) {
        print_error("%s: f_mean %.17g, expected %.17g\n", name_of(c), fm, mean);
        bad++;
    }
    ref_laplacian(c->ndim, c->n, pb, c->dx, p, q);
    double rn = 0, fn = 0;
    for (int64_t i = 0; i < N; i++) rn += pow(q[i] - (f[i] - mean), 2), fn += pow(f[i] - mean, 2);
    double res = sqrt(rn / fn);
    if (!(res < 2e-12) || !st.converged) {
        print_error("%s: residual |Lp - f| / |f| = %.3e (CG says %.3e after %d iterations)\n", name_of(c), res, st.residual,
                    st.iterations);
        bad++;
    }
    double rms = 0;
    for (int64_t i = 0; i < N; i++) rms += p[i] * p[i];
    rms = sqrt(rms / (double)N);
    if (sing && !(fabs(ref_mean(p, N)) < 1e-13 * rms)) {
        print_error("%s: singular case, mean of p %.3e is not 0\n", name_of(c), ref_mean(p, N));
        bad++;
    }
    /* hs_mg_apply against the naive loop */
    double *dl = test_upload(NULL, bytes);
    TEST_OK(hs_mg_apply(mg, dp, dl));
    test_download(r, dl, bytes);
    double ae = 0, an = 0;
    for (int64_t i = 0; i < N; i++) ae += pow(r[i] - q[i], 2), an += q[i] * q[i];
    if (!(sqrt(ae / an) < 1e-14)) {
        print_error("%s: hs_mg_apply against the naive loop %.3e\n", name_of(c), sqrt(ae / an));
        bad++;
    }
    if (fft_applies) {
        hs_poisson *ps = NULL;
        TEST_OK(hs_poisson_create(d, pb, c->dx, &ps));
        TEST_OK(hs_poisson_solve(ps, df, dl, NULL));
        test_download(r, dl, bytes);
        double e = test_rel_err_f64(p, r, (size_t)N);
        if (verbose()) print_message("%s: against the transform solver %.3e (%d iterations)\n", name_of(c), e, st.iterations);
        if (!(e < 1e-9)) {
            print_error("%s: against the transform solver %.3e\n", name_of(c), e);
            bad++;
        }
        hs_poisson_destroy(ps);
    }
    hs_mem_free(test_ctx(), df), hs_mem_free(test_ctx(), dp), hs_mem_free(test_ctx(), dl);
    hs_mg_destroy(mg);
    hs_decomp_destroy(d);
    free(f), free(p), free(q), free(r);
    return bad;
}

static void test_against_transform_solver(void **state)
{
    (void)state;
    long bad = 0;
    const hs_bc_kind b1[][2] = {{P_, P_}, {N_, N_}, {D_, D_}, {N_, D_}, {D_, N_}};
    for (int t = 0; t < 5; t++) {
        mcase c = mk(1, 96, 1, 1, b1[t], 2.0, 1, 1);
        bad += check_against_refs(&c, 10 + (uint64_t)t, 1);
    }
    const hs_bc_kind b2[][4] = {{N_, N_, N_, N_}, {P_, P_, D_, D_}, {N_, D_, N_, N_}, {D_, N_, P_, P_}, {P_, P_, P_, P_}};
    const int64_t s2[][2] = {{64, 48}, {40, 96}, {128, 32}, {48, 48}, {80, 64}};
    for (int t = 0; t < 5; t++) {
        mcase c = mk(2, s2[t][0], s2[t][1], 1, b2[t], 1.0, 0.8, 1);
        bad += check_against_refs(&c, 20 + (uint64_t)t, 1);
    }
    const hs_bc_kind b3[][6] = {{N_, N_, N_, N_, N_, N_}, {P_, P_, D_, D_, N_, N_}, {N_, D_, P_, P_, N_, N_}};
    const int64_t s3[][3] = {{24, 16, 32}, {32, 32, 16}, {16, 24, 24}};
    for (int t = 0; t < 3; t++) {
        mcase c = mk(3, s3[t][0], s3[t][1], s3[t][2], b3[t], 1.0, 1.1, 0.7);
        bad += check_against_refs(&c, 30 + (uint64_t)t, 1);
    }
    assert_int_equal(bad, 0);
}

/* What only the multigrid does: Dirichlet on the ends of several dimensions mixed with Neumann
 * (outflows on two sides of a channel), odd sizes that coarsen little, stretched cells, 1D. */
static void test_beyond_transforms(void **state)
{
    (void)state;
    long bad = 0;
    const hs_bc_kind two_mixed[] = {N_, D_, N_, D_}, three_mixed[] = {N_, D_, D_, N_, N_, D_};
    mcase a = mk(2, 96, 64, 1, two_mixed, 3.0, 1.0, 1);
    bad += check_against_refs(&a, 40, 0);
    mcase b = mk(3, 32, 24, 16, three_mixed, 2.0, 1.0, 0.5);
    bad += check_against_refs(&b, 41, 0);
    mcase odd = mk(2, 45, 33, 1, two_mixed, 1.0, 1.0, 1); /* 45 x 33: one coarse level, then Chebyshev */
    bad += check_against_refs(&odd, 42, 0);
    mcase stretched = mk(2, 128, 32, 1, two_mixed, 1.0, 1.0, 1); /* dy = 4 dx: x halves first */
    bad += check_against_refs(&stretched, 43, 0);
    mcase one = mk(1, 200, 1, 1, two_mixed, 1.0, 1, 1);
    bad += check_against_refs(&one, 44, 0);
    assert_int_equal(bad, 0);
}

/* A dense LU of a small grid: a second, independent solve. */
static void test_dense_reference(void **state)
{
    (void)state;
    const hs_bc_kind b[][6] = {{N_, D_, D_, N_, P_, P_}, {D_, D_, N_, N_, N_, D_}};
    long bad = 0;
    for (int t = 0; t < 2; t++) {
        mcase c = mk(3, 8, 6, 4, b[t], 1.0, 0.6, 0.5);
        int64_t N = cells(&c);
        hs_poisson_bc pb[3][2];
        to_poisson_bc(&c, pb);
        double *f = malloc((size_t)N * sizeof *f), *p = malloc((size_t)N * sizeof *p), *ref = malloc((size_t)N * sizeof *ref);
        test_fill_f64(f, (size_t)N, 60 + (uint64_t)t, -1, 1);
        assert_int_equal(ref_dense_solve(c.ndim, c.n, pb, c.dx, f, ref), 0);
        hs_mg_opts o = hs_mg_default_opts();
        o.rtol = 1e-13;
        o.coarse_cells = 16; /* levels 8x6x4 -> 4x3x2 -> dense, not the dense solve alone */
        hs_mg_stats st;
        mg_solve(&c, &o, f, p, &st, NULL);
        double e = test_rel_err_f64(p, ref, (size_t)N);
        if (!(e < 1e-11)) {
            print_error("%s: against dense LU %.3e\n", name_of(&c), e);
            bad++;
        }
        free(f), free(p), free(ref);
    }
    assert_int_equal(bad, 0);
}

static void expect_input_error(hs_decomp *d, const hs_bc_kind bc[3][2], const double dx[3], const hs_mg_opts *o,
                               const char *word)
{
    hs_mg *mg = (hs_mg *)1;
    hs_error_clear();
    assert_int_equal(hs_mg_create(d, bc, dx, o, &mg), HS_ERR_INPUT);
    assert_null(mg);
    if (!strstr(hs_error_message(), word)) fail_msg("message '%s' lacks '%s'", hs_error_message(), word);
    hs_error_clear();
}

static void test_input_errors(void **state)
{
    (void)state;
    const double dx[3] = {0.1, 0.1, 0.1};
    hs_decomp *d = NULL;
    TEST_OK(hs_decomp_create(test_ctx(), 3, (const int64_t[3]){8, 8, 8}, (const int[3]){1, 0, 0}, (const int[3]){1, 1, 0},
                             1, &d));
    const hs_bc_kind half_periodic[3][2] = {{P_, N_}, {N_, N_}, {N_, N_}};
    expect_input_error(d, half_periodic, dx, NULL, "periodic on one face");
    const hs_bc_kind not_periodic_x[3][2] = {{N_, N_}, {N_, N_}, {N_, N_}};
    expect_input_error(d, not_periodic_x, dx, NULL, "periodic there");
    const hs_bc_kind custom[3][2] = {{P_, P_}, {HS_BC_CUSTOM, N_}, {D_, D_}};
    expect_input_error(d, custom, dx, NULL, "not periodic, Neumann or Dirichlet");
    const hs_bc_kind ok[3][2] = {{P_, P_}, {N_, D_}, {D_, N_}};
    expect_input_error(d, ok, (const double[3]){0.1, 0, 0.1}, NULL, "positive");
    hs_mg_opts o = hs_mg_default_opts();
    o.degree = 0;
    expect_input_error(d, ok, dx, &o, "degree");
    o = hs_mg_default_opts();
    o.coarse_cells = HS_MG_DENSE_MAX + 1;
    expect_input_error(d, ok, dx, &o, "coarse_cells");
    hs_mg *mg = NULL;
    TEST_OK(hs_mg_create(d, ok, dx, NULL, &mg));
    hs_mg_destroy(mg);
    hs_decomp_destroy(d);
    hs_mg_destroy(NULL);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_manufactured_second_order),
    cmocka_unit_test(test_iterations_flat_2d),
    cmocka_unit_test(test_iterations_flat_3d),
    cmocka_unit_test(test_against_transform_solver),
    cmocka_unit_test(test_beyond_transforms),
    cmocka_unit_test(test_dense_reference),
    cmocka_unit_test(test_input_errors),
};

TEST_MAIN("mg", tests)
