/* Unit tests of the fast Poisson solver: residuals, exact discrete eigenfunctions and a dense LU reference over every boundary combination; its fused transpositions against the steps they fuse. */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/fft/poisson.h"
#include "kernels/fft/poisson_impl.h"
#include "kernels/fft/poisson_point.h"
#include "kernels/memory.h"
#include "poisson_ref.h"

#define P_ HS_POISSON_PERIODIC
#define N_ HS_POISSON_NEUMANN
#define D_ HS_POISSON_DIRICHLET

/* The five ways a dimension can end: PP, NN, DD and the two mixed ones. */
static const hs_poisson_bc g_pairs[5][2] = {{P_, P_}, {N_, N_}, {D_, D_}, {N_, D_}, {D_, N_}};
static const char *g_pair_name[5] = {"PP", "NN", "DD", "ND", "DN"};

typedef struct {
    int ndim;
    int64_t n[3];
    hs_poisson_bc bc[3][2];
    double dx[3];
    char name[64];
} pcase;

static pcase make_case(int ndim, const int64_t *n, const int *pair, const double *dx)
{
    pcase c;
    memset(&c, 0, sizeof c);
    c.ndim = ndim;
    int len = snprintf(c.name, sizeof c.name, "%dD", ndim);
    for (int d = 0; d < 3; d++) {
        c.n[d] = d < ndim ? n[d] : 1;
        c.dx[d] = d < ndim ? dx[d] : 1.0;
        int q = d < ndim ? pair[d] : 0;
        c.bc[d][0] = g_pairs[q][0], c.bc[d][1] = g_pairs[q][1];
        if (d < ndim) len += snprintf(c.name + len, sizeof c.name - (size_t)len, " %s%lld", g_pair_name[q], (long long)n[d]);
    }
    return c;
}

static int64_t cells(const pcase *c) { return c->n[0] * c->n[1] * c->n[2]; }

/* The whole grid on this one rank (the unit tests run on one; tests/mpi covers the splits). */
static hs_decomp *decomp_of(const pcase *c)
{
    int per[3] = {0, 0, 0}, procs[3] = {1, 1, 1};
    for (int d = 0; d < c->ndim; d++) per[d] = c->bc[d][0] == P_;
    hs_decomp *d = NULL;
    TEST_OK(hs_decomp_create(test_ctx(), c->ndim, c->n, per, procs, 1, &d));
    return d;
}

static double norm2(const double *x, int64_t n)
{
    double s = 0;
    for (int64_t i = 0; i < n; i++) s += x[i] * x[i];
    return sqrt(s);
}

/* Solve on the test device: host f in, host p out (p == f through one device buffer when inplace). */
static void device_solve(hs_poisson *ps, const double *f, double *p, int64_t N, int inplace, double *mean)
{
    size_t bytes = (size_t)N * sizeof(double);
    double *df = test_upload(f, bytes), *dp = inplace ? df : test_upload(NULL, bytes);
    TEST_OK(hs_poisson_solve(ps, df, dp, mean));
    test_download(p, dp, bytes);
    hs_mem_free(test_ctx(), df);
    if (!inplace) hs_mem_free(test_ctx(), dp);
}

static void device_apply(hs_poisson *ps, const double *p, double *Lp, int64_t N)
{
    size_t bytes = (size_t)N * sizeof(double);
    double *dp = test_upload(p, bytes), *dl = test_upload(NULL, bytes);
    TEST_OK(hs_poisson_apply(ps, dp, dl));
    test_download(Lp, dl, bytes);
    hs_mem_free(test_ctx(), dp);
    hs_mem_free(test_ctx(), dl);
}

/* Random f (plus a constant offset in a singular case, which the solve must remove): the residual
 * of the solve, measured with the naive host Laplacian, and the device apply against that
 * Laplacian.  (An offset of a regular case would make p large, and the residual, at the rounding
 * of p, |L| |p| 1e-16, larger than 1e-14 |f| on big grids.) */
static long check_residual(const pcase *c, uint64_t seed, double tol)
{
    int64_t N = cells(c);
    double *f = malloc((size_t)N * sizeof *f), *p = malloc((size_t)N * sizeof *p), *Lp = malloc((size_t)N * sizeof *Lp);
    double *La = malloc((size_t)N * sizeof *La), *r = malloc((size_t)N * sizeof *r);
    int sing = ref_singular(c->ndim, c->bc);
    test_fill_f64(f, (size_t)N, seed, -1, 1);
    for (int64_t i = 0; sing && i < N; i++) f[i] += 0.25;
    hs_decomp *d = decomp_of(c);
    hs_poisson *ps = NULL;
    TEST_OK(hs_poisson_create(d, c->bc, c->dx, &ps));
    double fm = -1;
    device_solve(ps, f, p, N, 0, &fm);
    double mean = sing ? ref_mean(f, N) : 0.0;
    long bad = 0;
    if (fabs(fm - mean) > 1e-14) {
        print_error("%s: f_mean %.17g, expected %.17g\n", c->name, fm, mean);
        bad++;
    }
    ref_laplacian(c->ndim, c->n, c->bc, c->dx, p, Lp);
    for (int64_t i = 0; i < N; i++) r[i] = Lp[i] - (f[i] - mean);
    double res = norm2(r, N) / norm2(f, N);
    if (getenv("HS_TEST_VERBOSE")) print_message("%s: residual %.3e\n", c->name, res);
    if (!(res < tol)) {
        print_error("%s: residual |Lp - f| / |f| = %.3e > %.1e\n", c->name, res, tol);
        bad++;
    }
    if (sing) {
        double pm = ref_mean(p, N), pn = norm2(p, N) / sqrt((double)N);
        if (!(fabs(pm) < 1e-13 * pn)) {
            print_error("%s: singular case, mean of p %.3e (rms %.3e) is not 0\n", c->name, pm, pn);
            bad++;
        }
    }
    device_apply(ps, p, La, N);
    for (int64_t i = 0; i < N; i++) r[i] = La[i] - Lp[i];
    double ae = norm2(r, N) / norm2(Lp, N);
    if (!(ae < 1e-14)) {
        print_error("%s: hs_poisson_apply against the naive loop: %.3e\n", c->name, ae);
        bad++;
    }
    hs_poisson_destroy(ps);
    hs_decomp_destroy(d);
    free(f), free(p), free(Lp), free(La), free(r);
    return bad;
}

/* Every combination of ends with at most one mixed dimension, on even and odd sizes. */
static void test_residual_all_bcs(void **state)
{
    (void)state;
    static const int64_t sizes[2][3] = {{8, 6, 10}, {7, 9, 5}};
    static const double dx[3] = {0.1, 0.37, 0.05};
    long bad = 0, count = 0;
    for (int nd = 1; nd <= 3; nd++) {
        int total = nd == 1 ? 5 : nd == 2 ? 25 : 125;
        for (int code = 0; code < total; code++) {
            int pair[3] = {code % 5, (code / 5) % 5, (code / 25) % 5}, mixed = 0;
            for (int d = 0; d < nd; d++) mixed += pair[d] >= 3;
            if (mixed > 1) continue;
            for (int s = 0; s < 2; s++) {
                pcase c = make_case(nd, sizes[s], pair, dx);
                bad += check_residual(&c, 100 + (uint64_t)code * 2 + (uint64_t)s, 1e-12);
                count++;
            }
        }
    }
    print_message("%ld cases\n", count);
    assert_int_equal(bad, 0);
}

/* The solver accuracy does not degrade with size: 2D and 3D grids of realistic shape. */
static void test_residual_large(void **state)
{
    (void)state;
    long bad = 0;
    const int nn_nn[3] = {1, 1, 1}, nd_dd[3] = {3, 1, 0}, p_n_d[3] = {0, 1, 2};
    const double dx2[3] = {1.0 / 384, 1.0 / 256, 1}, dx3[3] = {0.02, 0.03, 0.01};
    pcase a = make_case(2, (const int64_t[3]){384, 256, 1}, nn_nn, dx2);
    pcase b = make_case(2, (const int64_t[3]){255, 130, 1}, nd_dd, dx2);
    pcase c = make_case(3, (const int64_t[3]){48, 40, 33}, p_n_d, dx3);
    pcase e = make_case(3, (const int64_t[3]){32, 27, 40}, (const int[3]){1, 1, 4}, dx3);
    bad += check_residual(&a, 1, 1e-12);
    bad += check_residual(&b, 2, 1e-12);
    bad += check_residual(&c, 3, 1e-12);
    bad += check_residual(&e, 4, 1e-12);
    assert_int_equal(bad, 0);
}

/* One factor of an exact discrete eigenfunction along dimension d and its eigenvalue (computed
 * here from the closed forms, not from the solver). */
static double eig_factor(int pair, int64_t n, int64_t k, int64_t i, double dx, double *lambda)
{
    double h = (double)i + 0.5, th;
    switch (pair) {
    case 0: /* periodic: a phase mixes the cosine and sine halves of the spectrum */
        *lambda = -4.0 / (dx * dx) * pow(sin(M_PI * (double)k / (double)n), 2);
        return cos(2.0 * M_PI * (double)k * (double)i / (double)n + 0.3);
    case 1: /* Neumann both ends */
        *lambda = -4.0 / (dx * dx) * pow(sin(M_PI * (double)k / (2.0 * (double)n)), 2);
        return cos(M_PI * (double)k * h / (double)n);
    case 2: /* Dirichlet both ends, k = 1..n */
        *lambda = -4.0 / (dx * dx) * pow(sin(M_PI * (double)k / (2.0 * (double)n)), 2);
        return sin(M_PI * (double)k * h / (double)n);
    default: /* Neumann / Dirichlet: theta n = pi (k + 1/2) */
        th = M_PI * (2.0 * (double)k + 1.0) / (2.0 * (double)n);
        *lambda = -4.0 / (dx * dx) * pow(sin(th / 2.0), 2);
        return pair == 3 ? cos(th * h) : sin(th * h);
    }
}

/* p = prod_d phi_d with L p = lambda p: the solve of lambda p returns p, apply returns lambda p,
 * and hs_poisson_eigenvalue gives the transformed dimensions' share of lambda. */
static long check_eigen(const pcase *c, const int *pair, const int64_t k[3])
{
    int64_t N = cells(c);
    double *p = malloc((size_t)N * sizeof *p), *f = malloc((size_t)N * sizeof *f), *q = malloc((size_t)N * sizeof *q);
    double lam_total = 0, lam_transformed = 0, lam[3] = {0, 0, 0};
    for (int64_t z = 0; z < c->n[2]; z++)
        for (int64_t y = 0; y < c->n[1]; y++)
            for (int64_t x = 0; x < c->n[0]; x++) {
                int64_t at[3] = {x, y, z};
                double v = 1.0;
                for (int d = 0; d < c->ndim; d++) v *= eig_factor(pair[d], c->n[d], k[d], at[d], c->dx[d], &lam[d]);
                p[x + c->n[0] * (y + c->n[1] * z)] = v;
            }
    for (int d = 0; d < c->ndim; d++) {
        lam_total += lam[d];
        if (pair[d] < 3) lam_transformed += lam[d];
    }
    for (int64_t i = 0; i < N; i++) f[i] = lam_total * p[i];
    long bad = 0;
    /* the test's own claim first: L p = lambda p by the naive loop */
    ref_laplacian(c->ndim, c->n, c->bc, c->dx, p, q);
    for (int64_t i = 0; i < N; i++) q[i] -= f[i];
    if (!(norm2(q, N) <= 1e-12 * norm2(f, N))) {
        print_error("%s k %lld %lld %lld: not an eigenfunction of the naive L (%.3e)\n", c->name, (long long)k[0],
                    (long long)k[1], (long long)k[2], norm2(q, N) / norm2(f, N));
        bad++;
    }
    hs_decomp *d = decomp_of(c);
    hs_poisson *ps = NULL;
    TEST_OK(hs_poisson_create(d, c->bc, c->dx, &ps));
    double ev = hs_poisson_eigenvalue(ps, k);
    if (!(fabs(ev - lam_transformed) <= 1e-13 * fabs(lam_total))) {
        print_error("%s: hs_poisson_eigenvalue %.17g, closed form %.17g\n", c->name, ev, lam_transformed);
        bad++;
    }
    device_solve(ps, f, q, N, 1, NULL);
    for (int64_t i = 0; i < N; i++) q[i] -= p[i];
    double err = norm2(q, N) / norm2(p, N);
    if (!(err < 1e-12)) {
        print_error("%s k %lld %lld %lld: solve of lambda p differs from p by %.3e\n", c->name, (long long)k[0],
                    (long long)k[1], (long long)k[2], err);
        bad++;
    }
    device_apply(ps, p, q, N);
    for (int64_t i = 0; i < N; i++) q[i] -= f[i];
    if (!(norm2(q, N) <= 1e-12 * norm2(f, N))) {
        print_error("%s: apply(p) != lambda p (%.3e)\n", c->name, norm2(q, N) / norm2(f, N));
        bad++;
    }
    hs_poisson_destroy(ps);
    hs_decomp_destroy(d);
    free(p), free(f), free(q);
    return bad;
}

static void test_eigenfunctions(void **state)
{
    (void)state;
    static const int64_t sizes[2][3] = {{12, 10, 8}, {9, 11, 7}};
    static const double dx[3] = {0.2, 0.15, 0.31};
    long bad = 0;
    for (int nd = 1; nd <= 3; nd++) {
        int total = nd == 1 ? 5 : nd == 2 ? 25 : 125;
        for (int code = 0; code < total; code++) {
            int pair[3] = {code % 5, (code / 5) % 5, (code / 25) % 5}, mixed = 0;
            for (int dd = 0; dd < nd; dd++) mixed += pair[dd] >= 3;
            if (mixed > 1) continue;
            int s = code % 2;
            pcase c = make_case(nd, sizes[s], pair, dx);
            /* a low and a high mode per dimension (the highest stored indices exercise the
             * halfcomplex Nyquist entry, the DST's mode n and the DCT's last coefficient) */
            for (int which = 0; which < 2; which++) {
                int64_t k[3] = {0, 0, 0};
                for (int dd = 0; dd < nd; dd++) {
                    int64_t n = c.n[dd];
                    if (pair[dd] == 0) k[dd] = which ? n / 2 : 1;
                    else if (pair[dd] == 2) k[dd] = which ? n : 1;
                    else k[dd] = which ? n - 1 : (pair[dd] == 1 ? 1 : 0);
                }
                bad += check_eigen(&c, pair, k);
            }
        }
    }
    assert_int_equal(bad, 0);
}

/* Against a second implementation: dense LU on small grids, every kind of dimension. */
static void test_dense_reference(void **state)
{
    (void)state;
    static const int pairs[][3] = {{1, 1, 0}, {0, 2, 0}, {3, 1, 0}, {1, 4, 0}, {0, 1, 2}, {2, 3, 0}, {1, 1, 1}, {0, 0, 4}};
    static const int ndims[] = {2, 2, 2, 2, 3, 3, 3, 3};
    static const double dx[3] = {0.3, 0.2, 0.45};
    long bad = 0;
    for (size_t t = 0; t < sizeof ndims / sizeof ndims[0]; t++) {
        int64_t n[3] = {7, 6, ndims[t] == 3 ? 5 : 1};
        if (ndims[t] == 2) n[0] = 13, n[1] = 10;
        pcase c = make_case(ndims[t], n, pairs[t], dx);
        int64_t N = cells(&c);
        double *f = malloc((size_t)N * sizeof *f), *p = malloc((size_t)N * sizeof *p), *ref = malloc((size_t)N * sizeof *ref);
        test_fill_f64(f, (size_t)N, 500 + t, -1, 1);
        assert_int_equal(ref_dense_solve(c.ndim, c.n, c.bc, c.dx, f, ref), 0);
        hs_decomp *d = decomp_of(&c);
        hs_poisson *ps = NULL;
        TEST_OK(hs_poisson_create(d, c.bc, c.dx, &ps));
        device_solve(ps, f, p, N, 0, NULL);
        double err = test_rel_err_f64(p, ref, (size_t)N);
        if (!(err < 1e-12)) {
            print_error("%s: against dense LU %.3e\n", c.name, err);
            bad++;
        }
        hs_poisson_destroy(ps);
        hs_decomp_destroy(d);
        free(f), free(p), free(ref);
    }
    assert_int_equal(bad, 0);
}

/* p == f gives the same bits as separate arrays, and a second solve with the same plan too. */
static void test_in_place_and_reuse(void **state)
{
    (void)state;
    pcase c = make_case(3, (const int64_t[3]){10, 9, 8}, (const int[3]){0, 3, 1}, (const double[3]){0.1, 0.2, 0.3});
    int64_t N = cells(&c);
    double *f = malloc((size_t)N * sizeof *f), *a = malloc((size_t)N * sizeof *a), *b = malloc((size_t)N * sizeof *b);
    double *e = malloc((size_t)N * sizeof *e);
    test_fill_f64(f, (size_t)N, 9, -1, 1);
    hs_decomp *d = decomp_of(&c);
    hs_poisson *ps = NULL;
    TEST_OK(hs_poisson_create(d, c.bc, c.dx, &ps));
    device_solve(ps, f, a, N, 0, NULL);
    device_solve(ps, f, b, N, 1, NULL);
    device_solve(ps, f, e, N, 0, NULL);
    assert_memory_equal(a, b, (size_t)N * sizeof *a);
    assert_memory_equal(a, e, (size_t)N * sizeof *a);
    hs_poisson_destroy(ps);
    hs_decomp_destroy(d);
    free(f), free(a), free(b), free(e);
}

/* The CPU transpositions that finish and start line transforms give the same bits as the steps
 * they replace (the post step, a plain transposition, Makhoul's reorder; and back: unreorder,
 * plain transposition, pre step), on lines moved in two blocks as in a global transpose. */
static void test_fused_transpositions(void **state)
{
    (void)state;
    const int64_t batch = 2, rows = 13, r1 = 6;
    for (int64_t n = 5; n <= 6; n++)
        for (int kind = HS_POISSON_COLS_REAL; kind <= HS_POISSON_COLS_DCT; kind++)
            for (int order = HS_POISSON_ROWS_NATURAL; order <= HS_POISSON_ROWS_MAKHOUL_ALT; order++) {
                const int spectra = kind != HS_POISSON_COLS_REAL, dct = kind == HS_POISSON_COLS_DCT;
                const int64_t nq = spectra ? 3 : 1, cols = nq * n, h = n / 2 + 1, srs = spectra ? nq * 2 * h : cols;
                const size_t ns = (size_t)(batch * rows * srs), nr = (size_t)(batch * rows * cols);
                double *tw = malloc((size_t)(2 * h) * sizeof *tw);
                for (int64_t k = 0; k < h; k++)
                    tw[2 * k] = cos(M_PI * (double)k / (double)(2 * n)), tw[2 * k + 1] = sin(M_PI * (double)k / (double)(2 * n));
                double *src = malloc(ns * sizeof *src), *real = malloc(nr * sizeof *real), *tr = malloc(nr * sizeof *tr);
                double *ref = malloc(nr * sizeof *ref), *out = malloc(nr * sizeof *out);
                test_fill_f64(src, ns, 700 + (uint64_t)(n * 9 + kind * 3 + order), -1, 1);
                /* the steps apart: coefficients, [b][r][c] -> [b][c][r], Makhoul's order along r */
                hs_poisson_tpose plain = {.batch = batch, .rows = rows, .cols = cols, .sbs = rows * cols, .srs = cols,
                                          .dbs = cols * rows, .dcs = rows, .kind = HS_POISSON_COLS_REAL, .n = cols,
                                          .order = HS_POISSON_ROWS_NATURAL, .rn = rows};
                if (spectra) TEST_OK(hs_poisson_line_post_cpu(batch * rows * nq, n, dct, tw, src, real));
                else memcpy(real, src, nr * sizeof *real);
                TEST_OK(hs_poisson_transpose_cpu(&plain, real, tr));
                if (order) TEST_OK(hs_poisson_order_cpu(1, batch * cols, rows, 0, order, 0, 0, 1, tr, ref));
                else memcpy(ref, tr, nr * sizeof *ref);
                /* fused, rows 0..r1-1 and r1..rows-1 as two blocks */
                hs_poisson_tpose t = {.batch = batch, .sbs = rows * srs, .srs = srs, .dbs = cols * rows, .dcs = rows,
                                      .kind = kind, .n = spectra ? n : cols, .tw = tw, .order = order, .rn = rows};
                for (int blk = 0; blk < 2; blk++) {
                    t.rows = blk ? rows - r1 : r1, t.cols = cols, t.roff = blk ? r1 : 0;
                    TEST_OK(hs_poisson_transpose_cpu(&t, src + t.roff * srs, out));
                }
                assert_memory_equal(out, ref, nr * sizeof *out);
                /* back from the transposed layout (ref), apart and fused */
                double *back_ref = calloc(ns, sizeof *back_ref), *back = calloc(ns, sizeof *back);
                if (order) TEST_OK(hs_poisson_order_cpu(1, batch * cols, rows, 0, order, 0, 0, 0, ref, tr));
                else memcpy(tr, ref, nr * sizeof *tr);
                TEST_OK(hs_poisson_transpose_back_cpu(&plain, tr, real));
                if (spectra) TEST_OK(hs_poisson_line_pre_cpu(batch * rows * nq, n, dct, tw, real, back_ref));
                else memcpy(back_ref, real, nr * sizeof *real);
                for (int blk = 0; blk < 2; blk++) {
                    t.rows = blk ? rows - r1 : r1, t.roff = blk ? r1 : 0;
                    TEST_OK(hs_poisson_transpose_back_cpu(&t, ref, back + t.roff * srs));
                }
                assert_memory_equal(back, back_ref, ns * sizeof *back);
                free(tw), free(src), free(real), free(tr), free(ref), free(out), free(back_ref), free(back);
            }
}

/* dst = src in the orders o1, o0 along y and x ([planes][n1][n0]; 0 natural, 1 Makhoul's, 2 with
 * the sine signs): the host's reference, written from the definition one element at a time. */
static void host_order(int64_t planes, int64_t n1, int64_t n0, int o1, int o0, const double *src, double *dst)
{
    for (int64_t p = 0; p < planes; p++)
        for (int64_t j = 0; j < n1; j++)
            for (int64_t i = 0; i < n0; i++) {
                int64_t jj = o1 ? hs_poisson_reorder_position(n1, j) : j, ii = o0 ? hs_poisson_reorder_position(n0, i) : i;
                dst[(p * n1 + jj) * n0 + ii] = hs_poisson_sign(o1 == 2, j) * hs_poisson_sign(o0 == 2, i) * src[(p * n1 + j) * n0 + i];
            }
}

/* The ordered solve (f in, p out in Makhoul's order along x, and along y for the plane solve,
 * signed for the sine transform) against the plain solve with the order applied on the host:
 * bitwise, over every x end (only NN and DD reorder; the plane solve where y is NN in 2D, the line
 * solve in 3D), 2D and 3D, even and odd n0, and hs_poisson_order's reorder and back. */
static void test_ordered(void **state)
{
    (void)state;
    int checked = 0;
    for (int nd = 2; nd <= 3; nd++)
        for (int q = 0; q < 5; q++)
            for (int64_t n0 = 11; n0 <= 12; n0++) {
                pcase c = make_case(nd, (const int64_t[3]){n0, 7, 6}, (const int[3]){q, 1, 2}, (const double[3]){0.1, 0.2, 0.3});
                const int64_t N = cells(&c), n1 = c.n[1], planes = c.n[2];
                const size_t bytes = (size_t)N * sizeof(double);
                double *f = malloc(bytes), *fo = malloc(bytes), *p = malloc(bytes), *po = malloc(bytes), *ref = malloc(bytes);
                test_fill_f64(f, (size_t)N, 40 + (uint64_t)(nd * 10 + q), -1, 1);
                hs_decomp *d = decomp_of(&c);
                hs_poisson *ps = NULL;
                TEST_OK(hs_poisson_create(d, c.bc, c.dx, &ps));
                int o[3] = {-1, -1, -1};
                const int ordered = hs_poisson_ordered(ps, o);
                /* NN: the cosine transform, DD: the sine transform (signed); PP is an FFT and ND, DN the
                 * tridiagonal dimension: no reorder, but in 2D on an even x the plane solve's DCT-IV
                 * layout.  y (NN) is ordered by the plane solve (2D) only. */
                const int dct4 = nd == 2 && q >= 3 && n0 % 2 == 0;
                assert_int_equal(ordered, q == 1 || q == 2 || dct4);
                assert_int_equal(o[0], q == 1 ? 1 : q == 2 ? 2 : dct4 ? HS_POISSON_ROWS_DCT4 : 0);
                assert_int_equal(o[1], ordered && nd == 2 ? 1 : 0);
                assert_int_equal(o[2], 0);
                if (dct4) {
                    /* the layout is complex (packed, twisted), so the reference is the library's own
                     * hs_poisson_order around the plain solve: equal to round-off, and the layout's
                     * way there and back equal to round-off too */
                    double *df = test_upload(f, bytes), *dfo = test_upload(NULL, bytes), *dp = test_upload(NULL, bytes);
                    double *dn = test_upload(NULL, bytes);
                    TEST_OK(hs_poisson_order(ps, 1, df, dfo));
                    TEST_OK(hs_poisson_order(ps, 0, dfo, dn));
                    test_download(fo, dn, bytes);
                    double e = 0, m = 0;
                    for (int64_t i = 0; i < N; i++) e = fmax(e, fabs(fo[i] - f[i])), m = fmax(m, fabs(f[i]));
                    if (!(e <= 1e-15 * m)) fail_msg("%s: the DCT-IV layout there and back: %.3e of %.3e", c.name, e, m);
                    device_solve(ps, f, ref, N, 0, NULL);
                    TEST_OK(hs_poisson_solve_ordered(ps, dfo, dp, NULL));
                    TEST_OK(hs_poisson_order(ps, 0, dp, dn));
                    test_download(po, dn, bytes);
                    e = m = 0;
                    for (int64_t i = 0; i < N; i++) e = fmax(e, fabs(po[i] - ref[i])), m = fmax(m, fabs(ref[i]));
                    if (!(e <= 1e-13 * m)) fail_msg("%s: the ordered DCT-IV solve differs by %.3e of %.3e", c.name, e, m);
                    hs_mem_free(test_ctx(), df), hs_mem_free(test_ctx(), dfo), hs_mem_free(test_ctx(), dp), hs_mem_free(test_ctx(), dn);
                    checked++;
                } else if (ordered) {
                    /* host: the order of f, and of the plain solve's p */
                    host_order(planes, n1, n0, o[1], o[0], f, fo);
                    device_solve(ps, f, p, N, 0, NULL);
                    host_order(planes, n1, n0, o[1], o[0], p, ref);
                    double *df = test_upload(fo, bytes), *dp = test_upload(NULL, bytes), *dn = test_upload(NULL, bytes);
                    double mean = -1;
                    TEST_OK(hs_poisson_solve_ordered(ps, df, dp, &mean));
                    test_download(po, dp, bytes);
                    if (memcmp(po, ref, bytes)) fail_msg("%s: the ordered solve differs from the ordered plain solve", c.name);
                    /* hs_poisson_order: the host's order of f back to natural, and natural to the order */
                    TEST_OK(hs_poisson_order(ps, 0, df, dn));
                    test_download(p, dn, bytes);
                    if (memcmp(p, f, bytes)) fail_msg("%s: hs_poisson_order back", c.name);
                    TEST_OK(hs_poisson_order(ps, 1, dn, dp));
                    test_download(p, dp, bytes);
                    if (memcmp(p, fo, bytes)) fail_msg("%s: hs_poisson_order forth", c.name);
                    hs_mem_free(test_ctx(), df), hs_mem_free(test_ctx(), dp), hs_mem_free(test_ctx(), dn);
                    checked++;
                } else {
                    assert_int_equal(hs_poisson_solve_ordered(ps, f, p, NULL), HS_ERR_RUNTIME);
                    hs_error_clear();
                }
                hs_poisson_destroy(ps);
                hs_decomp_destroy(d);
                free(f), free(fo), free(p), free(po), free(ref);
            }
    print_message("ordered solves equal to the ordered plain solves (bitwise; the DCT-IV layout to round-off): %d cases\n", checked);
    assert_int_equal(checked, 10);
}

/* The plane solve (2D on one rank: one 2D R2C, the pair divide, one 2D C2R) against the line solve
 * (HS_POISSON_PLANE=0: the per-dimension transforms and transpositions) on the same f: every
 * combination of NN and DD, and PP x PP, on even, odd, unit and uneven sizes; and a mixed dimension
 * (ND, DN: the plane solve's extension, the line solve's tridiagonal sweeps) along x and along y
 * beside NN and DD.  The two share only the FFT library and the eigenvalue tables; they agree to
 * round-off (1e-12 of |p|). */
static void test_plane_against_lines(void **state)
{
    (void)state;
    static const int64_t sizes[][2] = {{16, 12}, {11, 9}, {1, 7}, {6, 1}, {2, 3}, {33, 64}};
    static const int combos[][2] = {{1, 1}, {1, 2}, {2, 1}, {2, 2}, {0, 0}, {3, 1}, {4, 2}, {1, 3}, {2, 4}, {3, 2}, {4, 1}};
    int checked = 0, checked_ext = 0;
    double worst = 0;
    for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++)
        for (size_t b = 0; b < sizeof combos / sizeof combos[0]; b++) {
            pcase c = make_case(2, (const int64_t[3]){sizes[z][0], sizes[z][1], 1}, (const int[3]){combos[b][0], combos[b][1], 0},
                                (const double[3]){0.3, 0.7, 1});
            const int64_t N = cells(&c);
            double *f = malloc((size_t)N * sizeof *f), *pp = malloc((size_t)N * sizeof *pp), *pl = malloc((size_t)N * sizeof *pl);
            test_fill_f64(f, (size_t)N, 700 + (uint64_t)(z * 10 + b), -1, 1);
            hs_decomp *d = decomp_of(&c);
            hs_poisson *plane = NULL, *lines = NULL;
            TEST_OK(hs_poisson_create(d, c.bc, c.dx, &plane));
            setenv("HS_POISSON_PLANE", "0", 1);
            int rc = hs_poisson_create(d, c.bc, c.dx, &lines);
            unsetenv("HS_POISSON_PLANE");
            TEST_OK(rc);
            int o[3];
            /* the plane solve orders y as well; the line solve x at most; where a dimension is
             * mixed the plane solve offers the DCT-IV layout for an even x and nothing otherwise
             * (it extends the mixed dimension as it orders) */
            const int mixed = combos[b][0] >= 3 || combos[b][1] >= 3, dct4 = combos[b][0] >= 3 && c.n[0] % 2 == 0;
            if (mixed) {
                assert_int_equal(hs_poisson_ordered(plane, o), dct4);
                if (dct4) assert_int_equal(o[0], HS_POISSON_ROWS_DCT4);
            }
            else if (combos[b][0]) {
                assert_int_equal(hs_poisson_ordered(plane, o), 1);
                assert_int_equal(o[1], combos[b][1]);
                hs_poisson_ordered(lines, o);
                assert_int_equal(o[1], 0);
            }
            device_solve(plane, f, pp, N, 0, NULL);
            device_solve(lines, f, pl, N, 0, NULL);
            double dmax = 0, pmax = 0;
            for (int64_t i = 0; i < N; i++) {
                dmax = fmax(dmax, fabs(pp[i] - pl[i]));
                pmax = fmax(pmax, fabs(pl[i]));
            }
            if (!(dmax <= 1e-12 * pmax)) fail_msg("%s: plane and line solves differ by %.3e of |p| %.3e", c.name, dmax, pmax);
            worst = fmax(worst, dmax / pmax);
            if (combos[b][0] >= 3 && c.n[0] % 2 == 0) { /* x mixed and even: DCT4 above; the extension too */
                hs_poisson *ext = NULL;
                setenv("HS_POISSON_DCT4", "0", 1);
                rc = hs_poisson_create(d, c.bc, c.dx, &ext);
                unsetenv("HS_POISSON_DCT4");
                TEST_OK(rc);
                device_solve(ext, f, pp, N, 0, NULL);
                dmax = 0;
                for (int64_t i = 0; i < N; i++) dmax = fmax(dmax, fabs(pp[i] - pl[i]));
                if (!(dmax <= 1e-12 * pmax)) fail_msg("%s: extended plane and line solves differ by %.3e of |p| %.3e", c.name, dmax, pmax);
                worst = fmax(worst, dmax / pmax);
                hs_poisson_destroy(ext);
                checked_ext++;
            }
            hs_poisson_destroy(plane), hs_poisson_destroy(lines);
            hs_decomp_destroy(d);
            free(f), free(pp), free(pl);
            checked++;
        }
    print_message("plane solve against the line solve: %d cases (%d also extended), largest difference %.2e of |p|\n",
                  checked, checked_ext, worst);
    assert_int_equal(checked_ext, 12);
}

static void expect_input_error(hs_decomp *d, const hs_poisson_bc bc[3][2], const double dx[3], const char *word)
{
    hs_poisson *ps = (hs_poisson *)1;
    hs_error_clear();
    int rc = hs_poisson_create(d, bc, dx, &ps);
    assert_int_equal(rc, HS_ERR_INPUT);
    assert_null(ps);
    if (!strstr(hs_error_message(), word)) fail_msg("message '%s' lacks '%s'", hs_error_message(), word);
    hs_error_clear();
}

static void test_input_errors(void **state)
{
    (void)state;
    const double dx[3] = {0.1, 0.1, 0.1};
    int64_t g[3] = {8, 8, 8};
    hs_decomp *d = NULL;
    TEST_OK(hs_decomp_create(test_ctx(), 3, g, (const int[3]){1, 0, 0}, (const int[3]){1, 1, 0}, 1, &d));
    const hs_poisson_bc two_mixed[3][2] = {{P_, P_}, {N_, D_}, {D_, N_}};
    expect_input_error(d, two_mixed, dx, "at most one");
    const hs_poisson_bc half_periodic[3][2] = {{P_, N_}, {N_, N_}, {N_, N_}};
    expect_input_error(d, half_periodic, dx, "periodic on one face");
    const hs_poisson_bc not_periodic_x[3][2] = {{N_, N_}, {N_, N_}, {N_, N_}};
    expect_input_error(d, not_periodic_x, dx, "periodic there");
    const hs_poisson_bc periodic_y[3][2] = {{P_, P_}, {P_, P_}, {N_, N_}};
    expect_input_error(d, periodic_y, dx, "not periodic there");
    const hs_poisson_bc ok[3][2] = {{P_, P_}, {N_, D_}, {D_, D_}};
    expect_input_error(d, ok, (const double[3]){0.1, -1, 0.1}, "positive");
    const hs_poisson_bc bad_kind[3][2] = {{P_, P_}, {(hs_poisson_bc)7, N_}, {D_, D_}};
    expect_input_error(d, bad_kind, dx, "unknown boundary");
    hs_poisson *ps = NULL;
    TEST_OK(hs_poisson_create(d, ok, dx, &ps));
    hs_poisson_destroy(ps);
    hs_decomp_destroy(d);
    hs_poisson_destroy(NULL);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_residual_all_bcs),
    cmocka_unit_test(test_residual_large),
    cmocka_unit_test(test_eigenfunctions),
    cmocka_unit_test(test_dense_reference),
    cmocka_unit_test(test_in_place_and_reuse),
    cmocka_unit_test(test_fused_transpositions),
    cmocka_unit_test(test_ordered),
    cmocka_unit_test(test_plane_against_lines),
    cmocka_unit_test(test_input_errors),
};

TEST_MAIN("poisson", tests)
