/* PCG against manufactured solutions on Laplacians, Jacobi on badly scaled matrices, CG's n-step bound, failures. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/blas/blas.h"
#include "kernels/memory.h"
#include "kernels/sparse/amg.h"
#include "kernels/sparse/pcg.h"
#include "test_util.h"

/* A host copy of a CSR matrix (int32 indices) and its device twin. */
typedef struct {
    int64_t n, nnz;
    int32_t *rowptr, *colind;
    double *val;
    hs_csr *A;
} problem;

static void problem_free(problem *p)
{
    hs_csr_destroy(p->A);
    free(p->rowptr), free(p->colind), free(p->val);
}

/* The Laplacian, each entry scaled by s[i] s[j] (s NULL: unscaled) and by sign. */
static problem laplacian(int ndim, const int64_t n[3], const double *s, double sign)
{
    problem p;
    int64_t *rp, *ci, N = 1;
    for (int d = 0; d < ndim; d++) N *= n[d];
    TEST_OK(hs_laplacian_rows(ndim, n, 0, N, &rp, &ci, &p.val, &p.nnz));
    p.n = N;
    p.rowptr = malloc(sizeof *p.rowptr * (size_t)(N + 1));
    p.colind = malloc(sizeof *p.colind * (size_t)p.nnz);
    for (int64_t i = 0; i <= N; i++) p.rowptr[i] = (int32_t)rp[i];
    for (int64_t i = 0; i < N; i++)
        for (int64_t k = rp[i]; k < rp[i + 1]; k++) {
            p.colind[k] = (int32_t)ci[k];
            p.val[k] *= sign * (s ? s[i] * s[ci[k]] : 1.0);
        }
    free(rp), free(ci);
    TEST_OK(hs_csr_create(test_ctx(), N, N, p.nnz, p.rowptr, p.colind, p.val, &p.A));
    return p;
}

static void host_spmv(const problem *p, const double *x, double *y)
{
    for (int64_t i = 0; i < p->n; i++) {
        long double s = 0;
        for (int32_t k = p->rowptr[i]; k < p->rowptr[i + 1]; k++) s += (long double)p->val[k] * x[p->colind[k]];
        y[i] = (double)s;
    }
}

static double norm2(const double *x, int64_t n)
{
    long double s = 0;
    for (int64_t i = 0; i < n; i++) s += (long double)x[i] * x[i];
    return sqrt((double)s);
}

/* Condition number of the (unscaled) Laplacian: eigenvalues sum_d 2 - 2 cos(k_d pi / (n_d + 1)). */
static double laplacian_cond(int ndim, const int64_t n[3])
{
    double lo = 0, hi = 0;
    for (int d = 0; d < ndim; d++) {
        lo += 2 - 2 * cos(M_PI / (n[d] + 1));
        hi += 2 - 2 * cos(M_PI * n[d] / (n[d] + 1));
    }
    return hi / lo;
}

typedef struct {
    double *x_exact, *b, *x; /* host */
    double *db, *dx;         /* device */
    double true_residual;    /* ||b - A x|| / ||b|| of the returned x, on the host */
    double error;            /* ||x - x_exact|| / ||x_exact|| */
    hs_pcg_result res;
} solve_run;

/* b = A x_exact for a random x_exact, solve from x = 0, measure residual and error on the host. */
static int solve(const problem *p, const hs_pcg_opts *o, uint64_t seed, solve_run *r)
{
    hs_ctx *ctx = test_ctx();
    size_t bytes = (size_t)p->n * 8;
    memset(r, 0, sizeof *r);
    r->x_exact = malloc(bytes), r->b = malloc(bytes), r->x = malloc(bytes);
    double *ax = malloc(bytes);
    test_fill_f64(r->x_exact, (size_t)p->n, seed, -1, 1);
    host_spmv(p, r->x_exact, r->b);
    TEST_OK(hs_mem_alloc(ctx, bytes, (void **)&r->db));
    TEST_OK(hs_mem_alloc(ctx, bytes, (void **)&r->dx));
    TEST_OK(hs_mem_copy(ctx, r->db, r->b, bytes, HS_COPY_H2D));
    TEST_OK(hs_mem_zero(ctx, r->dx, bytes));
    hs_linop op = hs_csr_linop(p->A);
    int rc = hs_pcg_solve(&op, r->db, r->dx, o, &r->res);
    if (rc == HS_OK) {
        TEST_OK(hs_mem_copy(ctx, r->x, r->dx, bytes, HS_COPY_D2H));
        host_spmv(p, r->x, ax);
        for (int64_t i = 0; i < p->n; i++) ax[i] = r->b[i] - ax[i];
        r->true_residual = norm2(ax, p->n) / norm2(r->b, p->n);
        r->error = test_rel_err_f64(r->x, r->x_exact, (size_t)p->n);
    }
    free(ax);
    return rc;
}

static void solve_free(solve_run *r)
{
    hs_mem_free(test_ctx(), r->db);
    hs_mem_free(test_ctx(), r->dx);
    free(r->x_exact), free(r->b), free(r->x);
    hs_pcg_result_free(&r->res);
}

static hs_pcg_opts opts(double rtol, int max_iter, hs_precond_kind pc)
{
    hs_pcg_opts o = hs_pcg_default_opts();
    o.rtol = rtol;
    o.max_iter = max_iter;
    o.precond = pc;
    o.record_history = 1;
    return o;
}

/* Manufactured solutions on 1D/2D/3D Laplacians: residual <= rtol (up to the drift of the
 * recursive residual), error <= cond(A) rtol (the bound ||e||/||x|| <= cond ||r||/||b||). */
static void test_laplacian_solutions(void **state)
{
    (void)state;
    static const int64_t grids[][4] = {{1, 200, 1, 1}, {2, 40, 30, 1}, {3, 14, 12, 10}};
    for (size_t g = 0; g < sizeof grids / sizeof *grids; g++) {
        int ndim = (int)grids[g][0];
        const int64_t *n = &grids[g][1];
        problem p = laplacian(ndim, n, NULL, 1.0);
        double cond = laplacian_cond(ndim, n);
        for (int pc = HS_PRECOND_NONE; pc <= HS_PRECOND_JACOBI; pc++) {
            hs_pcg_opts o = opts(1e-10, 5000, (hs_precond_kind)pc);
            solve_run r;
            TEST_OK(solve(&p, &o, 10 + g, &r));
            assert_true(r.res.converged);
            assert_true(r.res.iterations <= p.n);
            TEST_LE(r.res.final_residual / norm2(r.b, p.n), 1e-10);
            TEST_LE(r.true_residual, 2e-10);
            TEST_LE(r.error, 1e-10 * cond);
            assert_true(r.res.history[0] == r.res.initial_residual);
            assert_true(r.res.history[r.res.iterations] == r.res.final_residual);
            solve_free(&r);
        }
        problem_free(&p);
    }
}

/* D A D with D spread over four decades: Jacobi undoes the scaling, plain CG suffers from it. */
static void test_jacobi_scaling(void **state)
{
    (void)state;
    int64_t n[3] = {20, 20, 1};
    double *s = malloc(400 * 8);
    test_fill_f64(s, 400, 77, -2, 2);
    for (int i = 0; i < 400; i++) s[i] = pow(10.0, s[i]);
    problem p = laplacian(2, n, s, 1.0);
    hs_pcg_opts none = opts(1e-8, 1500, HS_PRECOND_NONE), jac = opts(1e-8, 1500, HS_PRECOND_JACOBI);
    solve_run a, b;
    TEST_OK(solve(&p, &none, 5, &a));
    TEST_OK(solve(&p, &jac, 5, &b));
    print_message("D A D, 400 rows: %d iterations without preconditioner (converged %d), %d with Jacobi\n",
                  a.res.iterations, a.res.converged, b.res.iterations);
    assert_true(b.res.converged);
    assert_true(4 * b.res.iterations < a.res.iterations);
    TEST_LE(b.true_residual, 1e-7);
    /* the Jacobi-scaled system is A / 4: its error bound applies to D (x - x_exact) */
    double *e = malloc(400 * 8), *ex = malloc(400 * 8);
    for (int i = 0; i < 400; i++) e[i] = s[i] * b.x[i], ex[i] = s[i] * b.x_exact[i];
    TEST_LE(test_rel_err_f64(e, ex, 400), 1e-6 * laplacian_cond(2, n));
    solve_free(&a);
    solve_free(&b);
    problem_free(&p);
    free(s), free(e), free(ex);
}

/* The same system at the ends of the double range: 2^a A and x scaled by 2^c, b = 2^(a+c) A x.  The
 * CG's products r.z and p.Ap of such vectors fell below the smallest double ("r.z = 0 <= 0: not
 * positive definite") or overflowed; scaled by powers of two they are exact, so the solution is
 * 2^c times that of the unscaled system, bitwise where no value left the normal range, and the
 * iteration count the same.  Jacobi, plain CG, warm and cold starts. */
static void test_extreme_scales(void **state)
{
    (void)state;
    hs_ctx *ctx = test_ctx();
    int64_t n[3] = {24, 24, 1};
    const int64_t N = n[0] * n[1];
    const size_t bytes = (size_t)N * 8;
    static const int ac[][2] = {{0, 0}, {0, -1000}, {900, 0}, {-1000, 60}, {500, 100}, {-600, -400}, {0, 700}};
    double *xe = malloc(bytes), *xs = malloc(bytes), *b = malloc(bytes), *x = malloc(bytes), *x0 = malloc(bytes);
    double *db, *dx;
    TEST_OK(hs_mem_alloc(ctx, bytes, (void **)&db));
    TEST_OK(hs_mem_alloc(ctx, bytes, (void **)&dx));
    test_fill_f64(xe, (size_t)N, 91, -1, 1);
    for (int pc = 0; pc < 2; pc++)
        for (int warm = 0; warm < 2; warm++) {
            double *ref = malloc(bytes);
            int ref_iter = -1;
            for (size_t t = 0; t < sizeof ac / sizeof ac[0]; t++) {
                const int a = ac[t][0], c = ac[t][1];
                double *sc = malloc(bytes);
                for (int64_t i = 0; i < N; i++) sc[i] = ldexp(1.0, a / 2);
                problem p = laplacian(2, n, sc, 1.0);
                for (int64_t i = 0; i < N; i++) xs[i] = ldexp(xe[i], c);
                host_spmv(&p, xs, b);
                /* a warm start: the exact solution's rounded halves (CG from a guess near the answer) */
                for (int64_t i = 0; i < N; i++) x0[i] = warm ? ldexp(round(xe[i] * 2) / 2, c) : 0.0;
                TEST_OK(hs_mem_copy(ctx, db, b, bytes, HS_COPY_H2D));
                TEST_OK(hs_mem_copy(ctx, dx, x0, bytes, HS_COPY_H2D));
                hs_pcg_opts o = opts(1e-10, 2000, pc ? HS_PRECOND_JACOBI : HS_PRECOND_NONE);
                hs_pcg_result res;
                hs_linop op = hs_csr_linop(p.A);
                TEST_OK(hs_pcg_solve(&op, db, dx, &o, &res));
                TEST_OK(hs_mem_copy(ctx, x, dx, bytes, HS_COPY_D2H));
                for (int64_t i = 0; i < N; i++) x[i] = ldexp(x[i], -c);
                print_message("2^%d A, x 2^%d (%s, %s start): %d iterations, error %.2e\n", a, c, pc ? "Jacobi" : "plain",
                              warm ? "warm" : "cold", res.iterations, test_rel_err_f64(x, xe, (size_t)N));
                assert_true(res.converged);
                TEST_LE(test_rel_err_f64(x, xe, (size_t)N), 1e-7);
                if (ref_iter < 0) {
                    memcpy(ref, x, bytes);
                    ref_iter = res.iterations;
                } else {
                    /* equal where every value stayed normal; 2^-1000 A makes A p's cancellations
                     * denormal (a few bits lost), which moves the iterates by the solve's tolerance */
                    const double d = test_rel_err_f64(x, ref, (size_t)N);
                    print_message("  against the unscaled solve: %.2e\n", d);
                    if (a >= -500) {
                        assert_int_equal(res.iterations, ref_iter);
                        TEST_LE(d, 1e-14);
                    } else {
                        TEST_LE(abs(res.iterations - ref_iter), 3);
                        TEST_LE(d, 1e-8);
                    }
                }
                hs_pcg_result_free(&res);
                problem_free(&p);
                free(sc);
            }
            free(ref);
        }
    hs_mem_free(ctx, db), hs_mem_free(ctx, dx);
    free(xe), free(xs), free(b), free(x), free(x0);
}

/* CG ends in at most n steps on an n x n SPD matrix (exact arithmetic; the 1D Laplacian's n
 * distinct eigenvalues make it take about n), the history has iterations + 1 entries and never
 * climbs far above where it started. */
static void test_cg_n_steps(void **state)
{
    (void)state;
    int64_t n[3] = {30, 1, 1};
    problem p = laplacian(1, n, NULL, 1.0);
    hs_pcg_opts o = opts(1e-12, 1000, HS_PRECOND_NONE);
    solve_run r;
    TEST_OK(solve(&p, &o, 3, &r));
    print_message("1D Laplacian n = 30: %d iterations\n", r.res.iterations);
    assert_true(r.res.converged);
    assert_true(r.res.iterations <= n[0]);
    assert_true(r.res.iterations >= n[0] / 2);
    for (int k = 0; k <= r.res.iterations; k++) TEST_LE(r.res.history[k], 10 * r.res.history[0]);
    TEST_LE(r.res.history[r.res.iterations], 1e-12 * norm2(r.b, p.n));
    solve_free(&r);
    problem_free(&p);
}

static void test_not_converged(void **state)
{
    (void)state;
    int64_t n[3] = {50, 50, 1};
    problem p = laplacian(2, n, NULL, 1.0);
    hs_pcg_opts o = opts(1e-12, 3, HS_PRECOND_JACOBI);
    solve_run r;
    TEST_OK(solve(&p, &o, 4, &r));
    assert_false(r.res.converged);
    assert_int_equal(r.res.iterations, 3);
    assert_true(r.res.final_residual < r.res.initial_residual);
    solve_free(&r);
    /* a zero right-hand side from x = 0 needs no iteration, even with atol = 0 */
    double *db = NULL, *dx = NULL;
    size_t bytes = (size_t)p.n * 8;
    TEST_OK(hs_mem_alloc(test_ctx(), bytes, (void **)&db));
    TEST_OK(hs_mem_alloc(test_ctx(), bytes, (void **)&dx));
    TEST_OK(hs_mem_zero(test_ctx(), db, bytes));
    TEST_OK(hs_mem_zero(test_ctx(), dx, bytes));
    hs_linop op = hs_csr_linop(p.A);
    hs_pcg_result res;
    o.rtol = 0;
    TEST_OK(hs_pcg_solve(&op, db, dx, &o, &res));
    assert_true(res.converged);
    assert_int_equal(res.iterations, 0);
    hs_pcg_result_free(&res);
    o.rtol = -1;
    assert_int_equal(hs_pcg_solve(&op, db, dx, &o, &res), HS_ERR_INPUT);
    hs_error_clear();
    hs_mem_free(test_ctx(), db);
    hs_mem_free(test_ctx(), dx);
    problem_free(&p);
}

static void expect_runtime_error(const problem *p, const hs_pcg_opts *o, const char *w1, const char *w2)
{
    solve_run r;
    int rc = solve(p, o, 9, &r);
    if (rc != HS_ERR_RUNTIME || !strstr(hs_error_message(), w1) || !strstr(hs_error_message(), w2))
        fail_msg("expected a runtime error with '%s' and '%s', got %d: %s", w1, w2, rc, hs_error_message());
    assert_null(r.res.history);
    hs_error_clear();
    solve_free(&r);
}

/* [[1 2] [2 1]] blocks: positive diagonal, eigenvalue -1 along (1, -1). */
static problem indefinite_blocks(int64_t nb)
{
    problem p = {2 * nb, 4 * nb, NULL, NULL, NULL, NULL};
    p.rowptr = malloc(sizeof *p.rowptr * (size_t)(p.n + 1));
    p.colind = malloc(sizeof *p.colind * (size_t)p.nnz);
    p.val = malloc(sizeof *p.val * (size_t)p.nnz);
    for (int64_t i = 0; i <= p.n; i++) p.rowptr[i] = (int32_t)(2 * i);
    for (int64_t i = 0; i < p.n; i++) {
        int64_t b0 = i - i % 2;
        p.colind[2 * i] = (int32_t)b0, p.colind[2 * i + 1] = (int32_t)(b0 + 1);
        p.val[2 * i] = i % 2 ? 2 : 1, p.val[2 * i + 1] = i % 2 ? 1 : 2;
    }
    TEST_OK(hs_csr_create(test_ctx(), p.n, p.n, p.nnz, p.rowptr, p.colind, p.val, &p.A));
    return p;
}

static int negate(void *data, const double *r, double *z)
{
    hs_ctx *ctx = data;
    TEST_OK(hs_copy(ctx, HS_F64, 400, r, z));
    return hs_scal(ctx, HS_F64, 400, -1.0, z);
}

static void test_not_spd(void **state)
{
    (void)state;
    int64_t n[3] = {20, 20, 1};
    problem neg = laplacian(2, n, NULL, -1.0);
    hs_pcg_opts none = opts(1e-10, 100, HS_PRECOND_NONE), jac = opts(1e-10, 100, HS_PRECOND_JACOBI);
    expect_runtime_error(&neg, &none, "p.Ap", "iteration 1");
    expect_runtime_error(&neg, &jac, "Jacobi", "not positive");
    problem ind = indefinite_blocks(5);
    /* b = A x_exact is random, so the first directions may be fine: detection at some iteration */
    expect_runtime_error(&ind, &none, "p.Ap", "iteration");
    expect_runtime_error(&ind, &jac, "p.Ap", "iteration");
    /* a preconditioner that is negative definite */
    problem pos = laplacian(2, n, NULL, 1.0);
    hs_precond bad = {test_ctx(), test_ctx(), negate, NULL, NULL};
    hs_pcg_opts o = opts(1e-10, 100, HS_PRECOND_NONE);
    o.custom = &bad;
    expect_runtime_error(&pos, &o, "r.z", "iteration 0");
    problem_free(&neg);
    problem_free(&ind);
    problem_free(&pos);
}

/* Jacobi through apply (the path of any future preconditioner) matches the fused path. */
static void test_custom_preconditioner(void **state)
{
    (void)state;
    int64_t n[3] = {12, 11, 9};
    double *s = malloc(1188 * 8);
    test_fill_f64(s, 1188, 78, 0.2, 3);
    problem p = laplacian(3, n, s, 1.0);
    hs_linop op = hs_csr_linop(p.A);
    hs_precond jac;
    TEST_OK(hs_precond_jacobi(&op, &jac));
    hs_precond via_apply = jac;
    via_apply.diag_inverse = NULL;
    hs_pcg_opts fused = opts(1e-10, 2000, HS_PRECOND_NONE), generic = fused;
    fused.custom = &jac;
    generic.custom = &via_apply;
    solve_run a, b;
    TEST_OK(solve(&p, &fused, 8, &a));
    TEST_OK(solve(&p, &generic, 8, &b));
    assert_true(a.res.converged && b.res.converged);
    assert_true(abs(a.res.iterations - b.res.iterations) <= 1);
    TEST_LE(test_rel_err_f64(a.x, b.x, (size_t)p.n), 1e-9);
    solve_free(&a);
    solve_free(&b);
    hs_precond_destroy(&jac);
    problem_free(&p);
    free(s);
}

/* A workspace and a prebuilt preconditioner reused across solves (and grown for a larger one)
 * give the same iterations as fresh allocations. */
static void test_workspace(void **state)
{
    (void)state;
    int64_t small[3] = {30, 30, 1}, big[3] = {50, 40, 1};
    problem a = laplacian(2, small, NULL, 1.0), b = laplacian(2, big, NULL, 1.0);
    hs_pcg_workspace ws = {0};
    hs_linop op = hs_csr_linop(a.A);
    hs_precond jac;
    TEST_OK(hs_precond_jacobi(&op, &jac));
    hs_pcg_opts plain = opts(1e-10, 2000, HS_PRECOND_JACOBI), reuse = plain;
    reuse.work = &ws;
    reuse.custom = &jac;
    solve_run r0, r1, r2, r3;
    TEST_OK(solve(&a, &plain, 21, &r0));
    TEST_OK(solve(&a, &reuse, 21, &r1));
    TEST_OK(solve(&a, &reuse, 21, &r2));
    assert_int_equal(r1.res.iterations, r0.res.iterations);
    assert_int_equal(r2.res.iterations, r0.res.iterations);
    TEST_LE(test_rel_err_f64(r2.x, r0.x, (size_t)a.n), 1e-14);
    reuse.custom = NULL;
    TEST_OK(solve(&b, &reuse, 22, &r3));
    assert_true(r3.res.converged);
    assert_true(ws.n == (size_t)b.n);
    solve_free(&r0), solve_free(&r1), solve_free(&r2), solve_free(&r3);
    hs_pcg_workspace_free(&ws);
    hs_precond_destroy(&jac);
    problem_free(&a);
    problem_free(&b);
}

/* The AMG's levels as hs_amg_describe names them ("AMG 3 levels: 1600 178 20 unknowns"). */
static void amg_levels(const problem *p, char *buf, size_t len)
{
    hs_amg_opts o = hs_amg_default_opts();
    hs_precond P;
    TEST_OK(hs_precond_amg(p->A, &o, &P));
    char d[512];
    hs_amg_describe(&P, d, sizeof d);
    snprintf(buf, len, "%.*s", (int)(strstr(d, " unknowns") - d), d);
    hs_precond_destroy(&P);
}

/* The strength of connection is scale-free: a matrix of entries near 1e200 coarsens as the same
 * matrix near 1 (the squares overflowed: no coarsening, and the dense coarsest inverse of every
 * unknown took a minute on fem.dt = 1e300); an entry that is not finite is refused at once. */
static void test_amg_scale(void **state)
{
    (void)state;
    const int64_t n[3] = {40, 40, 1};
    double *s = malloc(sizeof *s * 1600);
    for (int i = 0; i < 1600; i++) s[i] = 1e100;
    problem a = laplacian(2, n, NULL, 1.0), b = laplacian(2, n, s, 1.0);
    char la[256], lb[256];
    amg_levels(&a, la, sizeof la);
    amg_levels(&b, lb, sizeof lb);
    assert_string_equal(la, lb);
    assert_null(strstr(la, "AMG 1 levels"));
    problem_free(&b);
    a.val[7] = NAN;
    TEST_OK(hs_csr_create(test_ctx(), a.n, a.n, a.nnz, a.rowptr, a.colind, a.val, &b.A));
    hs_amg_opts o = hs_amg_default_opts();
    hs_precond P;
    hs_error_clear();
    assert_int_equal(hs_precond_amg(b.A, &o, &P), HS_ERR_RUNTIME);
    if (!strstr(hs_error_message(), "AMG: matrix entry (2, 1) is nan, not finite")) fail_msg("%s", hs_error_message());
    hs_error_clear();
    hs_csr_destroy(b.A);
    problem_free(&a);
    free(s);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_laplacian_solutions), cmocka_unit_test(test_jacobi_scaling),
    cmocka_unit_test(test_cg_n_steps),          cmocka_unit_test(test_not_converged),
    cmocka_unit_test(test_not_spd),             cmocka_unit_test(test_custom_preconditioner),
    cmocka_unit_test(test_workspace),           cmocka_unit_test(test_amg_scale),
    cmocka_unit_test(test_extreme_scales),
};
TEST_MAIN("pcg", tests)
