/* Optimisers: Adam against its formula and on a quadratic; L-BFGS on Rosenbrock (2D, 100D) with the
 * strong-Wolfe conditions checked at every accepted step, resumed from saved states, and interrupted
 * part-way through iterations. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/memory.h"
#include "kernels/nn/lbfgs.h"
#include "kernels/nn/optim.h"
#include "test_util.h"

/* Host mirror of a device objective, recording the last evaluated point for the Wolfe checks. */
typedef struct problem {
    size_t n;
    double *hx, *hg;      /* host scratch */
    double (*eval)(const struct problem *p, const double *x, double *g);
    const double *a, *c;  /* quadratic data */
    double *last_x, *last_g, last_f;
    double *acc_x, *acc_g, acc_f; /* previous accepted point */
    double c1, c2;
    int wolfe_fail, accepted;
} problem;

static double quadratic(const problem *p, const double *x, double *g)
{
    double f = 0;
    for (size_t i = 0; i < p->n; i++) {
        double r = x[i] - p->c[i];
        f += 0.5 * p->a[i] * r * r;
        g[i] = p->a[i] * r;
    }
    return f;
}

/* Extended Rosenbrock: independent pairs, unique minimum at (1, ..., 1). */
static double rosenbrock(const problem *p, const double *x, double *g)
{
    double f = 0;
    for (size_t i = 0; i + 1 < p->n; i += 2) {
        double t = x[i + 1] - x[i] * x[i], u = 1.0 - x[i];
        f += 100.0 * t * t + u * u;
        g[i] = -400.0 * x[i] * t - 2.0 * u;
        g[i + 1] = 200.0 * t;
    }
    return f;
}

static int objective(void *data, const double *x, double *f, double *grad)
{
    problem *p = data;
    hs_ctx *ctx = test_ctx();
    HS_CHECK(hs_mem_copy(ctx, p->hx, x, p->n * sizeof(double), HS_COPY_D2H));
    *f = p->eval(p, p->hx, p->hg);
    memcpy(p->last_x, p->hx, p->n * sizeof(double));
    memcpy(p->last_g, p->hg, p->n * sizeof(double));
    p->last_f = *f;
    return hs_mem_copy(ctx, grad, p->hg, p->n * sizeof(double), HS_COPY_H2D);
}

/* After each iteration the accepted point is the last one evaluated: check strong Wolfe from the
 * previous accepted point along s = x_{k+1} - x_k (both conditions are invariant to scaling s). */
static int wolfe_callback(void *data, int it, double f)
{
    problem *p = data;
    double gs0 = 0, gs1 = 0;
    for (size_t i = 0; i < p->n; i++) {
        double s = p->last_x[i] - p->acc_x[i];
        gs0 += p->acc_g[i] * s;
        gs1 += p->last_g[i] * s;
    }
    int armijo = f <= p->acc_f + p->c1 * gs0 && f == p->last_f;
    int curvature = fabs(gs1) <= p->c2 * fabs(gs0) * (1 + 1e-12);
    if (!(armijo && curvature && gs0 < 0)) p->wolfe_fail++;
    p->accepted++;
    memcpy(p->acc_x, p->last_x, p->n * sizeof(double));
    memcpy(p->acc_g, p->last_g, p->n * sizeof(double));
    p->acc_f = f;
    (void)it;
    return 0;
}

static void problem_init(problem *p, size_t n, double (*eval)(const problem *, const double *, double *))
{
    memset(p, 0, sizeof *p);
    p->n = n, p->eval = eval;
    p->hx = calloc(n, sizeof(double)), p->hg = calloc(n, sizeof(double));
    p->last_x = calloc(n, sizeof(double)), p->last_g = calloc(n, sizeof(double));
    p->acc_x = calloc(n, sizeof(double)), p->acc_g = calloc(n, sizeof(double));
}

static void problem_free(problem *p)
{
    free(p->hx), free(p->hg), free(p->last_x), free(p->last_g), free(p->acc_x), free(p->acc_g);
}

/* Three Adam steps against the textbook formula evaluated on the host. */
static void test_adam_formula(void **state)
{
    (void)state;
    hs_ctx *ctx = test_ctx();
    const size_t sizes[] = {1, 31, 1000};
    for (size_t s = 0; s < 3; s++) {
        size_t n = sizes[s];
        double *x = malloc(n * 8), *g = malloc(n * 8), *m = calloc(n, 8), *v = calloc(n, 8), *got = malloc(n * 8);
        test_fill_f64(x, n, 7 + s, -1, 1);
        double *dx = (double *)test_upload(x, n * sizeof(double)), *dg = NULL;
        TEST_OK(hs_mem_alloc(ctx, n * 8, (void **)&dg));
        hs_adam *opt;
        TEST_OK(hs_adam_create(ctx, n, 0.9, 0.999, 1e-8, &opt));
        for (int t = 1; t <= 3; t++) {
            test_fill_f64(g, n, 100 * t + s, -2, 2);
            TEST_OK(hs_mem_copy(ctx, dg, g, n * 8, HS_COPY_H2D));
            TEST_OK(hs_adam_step(opt, 0.01, dx, dg));
            for (size_t i = 0; i < n; i++) {
                m[i] = 0.9 * m[i] + 0.1 * g[i];
                v[i] = 0.999 * v[i] + 0.001 * g[i] * g[i];
                double mh = m[i] / (1 - pow(0.9, t)), vh = v[i] / (1 - pow(0.999, t));
                x[i] -= 0.01 * mh / (sqrt(vh) + 1e-8);
            }
        }
        test_download(got, dx, n * 8);
        TEST_LE(test_rel_err_f64(got, x, n), 1e-14);
        assert_int_equal(hs_adam_steps(opt), 3);
        double *dm, *dv;
        int64_t *step;
        TEST_OK(hs_adam_state(opt, &dm, &dv, &step));
        assert_int_equal(*step, 3);
        test_download(got, dm, n * 8);
        TEST_LE(test_rel_err_f64(got, m, n), 1e-14);
        hs_adam_destroy(opt);
        hs_mem_free(ctx, dx), hs_mem_free(ctx, dg);
        free(x), free(g), free(m), free(v), free(got);
    }
}

/* Adam with a decaying rate on an ill-scaled quadratic reaches the minimum. */
static void test_adam_quadratic(void **state)
{
    (void)state;
    hs_ctx *ctx = test_ctx();
    size_t n = 50;
    double a[50], c[50], x0[50], got[50];
    for (size_t i = 0; i < n; i++) a[i] = 1.0 + 99.0 * i / (n - 1);
    test_fill_f64(c, n, 3, -2, 2);
    test_fill_f64(x0, n, 4, -1, 1);
    problem p;
    problem_init(&p, n, quadratic);
    p.a = a, p.c = c;
    double *dx = (double *)test_upload(x0, n * sizeof(double)), *dg = NULL;
    TEST_OK(hs_mem_alloc(ctx, n * 8, (void **)&dg));
    hs_adam *opt;
    TEST_OK(hs_adam_create(ctx, n, 0.9, 0.999, 1e-12, &opt));
    double f = 0;
    for (int t = 0; t < 3000; t++) {
        TEST_OK(objective(&p, dx, &f, dg));
        TEST_OK(hs_adam_step(opt, 0.05 * pow(0.998, t), dx, dg));
    }
    test_download(got, dx, n * 8);
    TEST_LE(test_rel_err_f64(got, c, n), 1e-6);
    hs_adam_destroy(opt);
    hs_mem_free(ctx, dx), hs_mem_free(ctx, dg);
    problem_free(&p);
}

static int g_device_vectors; /* hs_lbfgs_opts.device_vectors of the next runs */

static void run_rosenbrock(size_t n, int max_iter, int *iters)
{
    hs_ctx *ctx = test_ctx();
    problem p;
    problem_init(&p, n, rosenbrock);
    double *x0 = malloc(n * 8), *ones = malloc(n * 8), *got = malloc(n * 8);
    /* the classic start, perturbed per pair so that the pairs are not identical copies */
    test_fill_f64(got, n, 21, -0.2, 0.2);
    for (size_t i = 0; i < n; i++) x0[i] = (i % 2 ? 1.0 : -1.2) + (n > 2 ? got[i] : 0.0), ones[i] = 1.0;
    double *dx = (double *)test_upload(x0, n * sizeof(double));
    hs_lbfgs_opts o = {.history = 10, .max_iter = max_iter, .gtol = 1e-12, .ftol = 0, .c1 = 1e-4, .c2 = 0.9,
                       .device_vectors = g_device_vectors};
    p.c1 = o.c1, p.c2 = o.c2;
    memcpy(p.acc_x, x0, n * 8);
    p.acc_f = rosenbrock(&p, x0, p.acc_g);
    hs_lbfgs_result r;
    TEST_OK(hs_lbfgs_minimize(ctx, n, dx, objective, &p, &o, wolfe_callback, &r));
    test_download(got, dx, n * 8);
    double err = 0;
    for (size_t i = 0; i < n; i++) err = fmax(err, fabs(got[i] - 1.0));
    print_message("rosenbrock n=%zu: %d iterations, %d evaluations, f=%.3e |g|=%.3e max|x-1|=%.3e (%s)\n", n,
                  r.iterations, r.evaluations, r.f, r.gnorm, err, r.reason);
    TEST_LE(err, 1e-8);
    TEST_LE(r.f, 1e-16);
    assert_int_equal(p.wolfe_fail, 0);
    assert_int_equal(p.accepted, r.iterations);
    assert_true(r.converged);
    *iters = r.iterations;
    hs_mem_free(ctx, dx);
    free(x0), free(ones), free(got);
    problem_free(&p);
}

static void test_lbfgs_rosenbrock_2d(void **state)
{
    (void)state;
    int it;
    run_rosenbrock(2, 200, &it);
    TEST_LE(it, 100);
}

static void test_lbfgs_rosenbrock_100d(void **state)
{
    (void)state;
    int it;
    run_rosenbrock(100, 1000, &it);
    TEST_LE(it, 600);
}

/* The same problems with the vectors kept on the device (the path of large n). */
static void test_lbfgs_device_vectors(void **state)
{
    (void)state;
    int it;
    g_device_vectors = 1;
    run_rosenbrock(2, 200, &it);
    run_rosenbrock(100, 1000, &it);
    g_device_vectors = 0;
}

/* The callback can stop the run; the iteration limit is reported as not converged. */
static int stop_at_3(void *data, int it, double f)
{
    (void)data, (void)f;
    return it >= 3;
}

static void test_lbfgs_limits(void **state)
{
    (void)state;
    hs_ctx *ctx = test_ctx();
    problem p;
    problem_init(&p, 2, rosenbrock);
    double x0[2] = {-1.2, 1.0};
    double *dx = (double *)test_upload(x0, 2 * sizeof(double));
    hs_lbfgs_result r;
    TEST_OK(hs_lbfgs_minimize(ctx, 2, dx, objective, &p, NULL, stop_at_3, &r));
    assert_int_equal(r.iterations, 3);
    assert_false(r.converged);
    TEST_OK(hs_mem_copy(ctx, dx, x0, 16, HS_COPY_H2D));
    hs_lbfgs_opts o = {.max_iter = 5, .max_evals = 100};
    TEST_OK(hs_lbfgs_minimize(ctx, 2, dx, objective, &p, &o, NULL, &r));
    assert_int_equal(r.iterations, 5);
    assert_false(r.converged);
    /* bad Wolfe constants are refused */
    hs_lbfgs_opts bad = {.c1 = 0.5, .c2 = 0.1};
    assert_int_equal(hs_lbfgs_minimize(ctx, 2, dx, objective, &p, &bad, NULL, &r), HS_ERR_RUNTIME);
    hs_error_clear();
    hs_adam *opt;
    assert_int_equal(hs_adam_create(ctx, 2, 1.0, 0.999, 1e-8, &opt), HS_ERR_RUNTIME);
    hs_error_clear();
    hs_mem_free(ctx, dx);
    problem_free(&p);
}

/* A quadratic is solved by L-BFGS to round-off with gtol. */
static void test_lbfgs_quadratic(void **state)
{
    (void)state;
    hs_ctx *ctx = test_ctx();
    size_t n = 31;
    double a[31], c[31], x0[31], got[31];
    for (size_t i = 0; i < n; i++) a[i] = 1.0 + i;
    test_fill_f64(c, n, 11, -3, 3);
    memset(x0, 0, sizeof x0);
    problem p;
    problem_init(&p, n, quadratic);
    p.a = a, p.c = c;
    double *dx = (double *)test_upload(x0, n * sizeof(double));
    hs_lbfgs_opts o = {.gtol = 1e-11};
    hs_lbfgs_result r;
    TEST_OK(hs_lbfgs_minimize(ctx, n, dx, objective, &p, &o, NULL, &r));
    test_download(got, dx, n * 8);
    TEST_LE(test_rel_err_f64(got, c, n), 1e-11);
    assert_true(r.converged);
    hs_mem_free(ctx, dx);
    problem_free(&p);
}

/* Chunks of 7 iterations, each on a fresh object loaded from the previous one's saved state,
 * follow the uninterrupted run bitwise. */
static void test_lbfgs_resume(void **state)
{
    (void)state;
    hs_ctx *ctx = test_ctx();
    size_t n = 20;
    problem p;
    problem_init(&p, n, rosenbrock);
    double x0[20], a[20], b[20];
    for (size_t i = 0; i < n; i++) x0[i] = i % 2 ? 1.0 : -1.2;
    double *dx = (double *)test_upload(x0, n * sizeof(double));
    hs_lbfgs_opts o = {.history = 5, .max_iter = 60, .max_evals = 1000};
    hs_lbfgs_result r1, r2;
    TEST_OK(hs_lbfgs_minimize(ctx, n, dx, objective, &p, &o, NULL, &r1));
    test_download(a, dx, sizeof a);
    TEST_OK(hs_mem_copy(ctx, dx, x0, sizeof x0, HS_COPY_H2D));
    double *saved = NULL;
    for (int chunk = 0; chunk < 100; chunk++) {
        hs_lbfgs *L;
        TEST_OK(hs_lbfgs_create(ctx, n, objective, &p, &o, &L));
        if (!saved) saved = calloc(hs_lbfgs_state_count(L), sizeof *saved);
        if (chunk) TEST_OK(hs_lbfgs_load(L, saved));
        TEST_OK(hs_lbfgs_run(L, dx, 7, NULL, &r2));
        TEST_OK(hs_lbfgs_save(L, saved));
        int done = hs_lbfgs_finished(L);
        hs_lbfgs_destroy(L);
        if (done) break;
    }
    test_download(b, dx, sizeof b);
    assert_int_equal(r2.iterations, r1.iterations);
    assert_int_equal(r2.evaluations, r1.evaluations);
    assert_memory_equal(a, b, sizeof a);
    free(saved);
    hs_mem_free(ctx, dx);
    problem_free(&p);
}

/* An objective interrupted at every 5th call (the 1st, 6th, 11th, ...: in the first evaluation and
 * inside line searches) returns HS_ERR_SIGNAL, as the seismic inversion's does at a signal. */
static int g_calls;
static int interrupted_objective(void *data, const double *x, double *f, double *grad)
{
    if (g_calls++ % 5 == 0) return HS_ERR_SIGNAL;
    return objective(data, x, f, grad);
}

/* Each interruption abandons the iteration in progress; the state saved then (the iteration's start)
 * and loaded into a fresh object runs on to the same iterates as the run never interrupted, bitwise,
 * with the same counts: the host and the device vectors. */
static void test_lbfgs_interrupted(void **state)
{
    (void)state;
    hs_ctx *ctx = test_ctx();
    size_t n = 20;
    problem p;
    problem_init(&p, n, rosenbrock);
    double x0[20], a[20], b[20];
    for (size_t i = 0; i < n; i++) x0[i] = i % 2 ? 1.0 : -1.2;
    for (int dev = 0; dev < 2; dev++) {
        double *dx = (double *)test_upload(x0, n * sizeof(double));
        hs_lbfgs_opts o = {.history = 5, .max_iter = 60, .max_evals = 1000, .device_vectors = dev};
        hs_lbfgs_result r1, r2;
        TEST_OK(hs_lbfgs_minimize(ctx, n, dx, objective, &p, &o, NULL, &r1));
        test_download(a, dx, sizeof a);
        TEST_OK(hs_mem_copy(ctx, dx, x0, sizeof x0, HS_COPY_H2D));
        double *saved = NULL;
        int stops = 0, rc = HS_ERR_SIGNAL;
        g_calls = 0;
        for (int part = 0; part < 1000 && rc == HS_ERR_SIGNAL; part++) {
            hs_lbfgs *L;
            TEST_OK(hs_lbfgs_create(ctx, n, interrupted_objective, &p, &o, &L));
            if (!saved) saved = calloc(hs_lbfgs_state_count(L), sizeof *saved);
            if (part) TEST_OK(hs_lbfgs_load(L, saved));
            rc = hs_lbfgs_run(L, dx, 1000, NULL, &r2);
            if (rc == HS_ERR_SIGNAL) stops++, hs_error_clear();
            else TEST_OK(rc);
            TEST_OK(hs_lbfgs_save(L, saved));
            hs_lbfgs_destroy(L);
        }
        test_download(b, dx, sizeof b);
        print_message("L-BFGS interrupted %d times (%s vectors): %d iterations, %d evaluations (uninterrupted: %d, %d)\n", stops,
                      dev ? "device" : "host", r2.iterations, r2.evaluations, r1.iterations, r1.evaluations);
        assert_true(stops > 10);
        assert_int_equal(r2.iterations, r1.iterations);
        assert_int_equal(r2.evaluations, r1.evaluations);
        assert_memory_equal(a, b, sizeof a);
        free(saved);
        hs_mem_free(ctx, dx);
    }
    problem_free(&p);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_lbfgs_interrupted),
    cmocka_unit_test(test_lbfgs_resume), cmocka_unit_test(test_lbfgs_device_vectors),
    cmocka_unit_test(test_adam_formula),        cmocka_unit_test(test_adam_quadratic),
    cmocka_unit_test(test_lbfgs_rosenbrock_2d), cmocka_unit_test(test_lbfgs_rosenbrock_100d),
    cmocka_unit_test(test_lbfgs_limits),        cmocka_unit_test(test_lbfgs_quadratic),
};

TEST_MAIN("optim", tests)
