/* PINN training core: the loss against a host evaluation of the Burgers residual, its gradient
 * against central differences, training reducing the loss, chunked and checkpointed training
 * following one uninterrupted run bitwise, fp32, adaptive refinement. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/memory.h"
#include "kernels/nn/nn.h"
#include "solvers/pinn/pinn_points.h"
#include "solvers/pinn/pinn_train.h"
#include "test_util.h"

static void small_config(hs_pinn_config *c)
{
    hs_pinn_config_default(c);
    c->depth = 3;
    for (int l = 0; l < 3; l++) c->width[l] = 8;
    c->n_colloc = 97, c->n_data = 23;
    c->eval_nx = 32, c->eval_nt = 10;
    c->adam_iters = 20, c->lbfgs_iters = 30, c->lbfgs_history = 8;
    c->history_every = 10;
}

/* The residual part of the loss, recomputed on the host from the network's jets. */
static void test_loss_matches_host(void **s)
{
    (void)s;
    hs_ctx *ctx = test_ctx();
    hs_pinn_config c;
    small_config(&c);
    hs_pinn *p;
    TEST_OK(hs_pinn_create(ctx, &c, &p));
    double f, res, data;
    TEST_OK(hs_pinn_objective(p, hs_pinn_network(p)->params, &f, NULL));
    hs_pinn_last_loss(p, &res, &data);
    /* the same points and network, evaluated directly */
    double *pts, *dpts, *du;
    TEST_OK(hs_pinn_lhs(c.n_colloc, c.seed + 1, &pts, c.n_data));
    TEST_OK(hs_pinn_data_points(hs_pde1d_get(c.pde), c.n_data, c.eval_nx, c.eval_nt, c.eval_tmax, c.seed, &dpts, &du));
    memcpy(pts + 2 * c.n_colloc, dpts, 2 * c.n_data * sizeof(double));
    size_t n = (size_t)(c.n_colloc + c.n_data);
    double *in = malloc(2 * n * 8), *out = malloc(4 * n * 8);
    for (size_t i = 0; i < n; i++) in[2 * i] = 2 * pts[2 * i] - 1, in[2 * i + 1] = pts[2 * i + 1];
    hs_mlp *m = hs_pinn_network(p);
    hs_jet jet = {2, {0, 1}, 1, {1}};
    hs_mlp_batch *b;
    void *din;
    TEST_OK(hs_mlp_batch_create(m, &jet, n, &b));
    TEST_OK(hs_mem_alloc(ctx, 2 * n * 8, &din));
    TEST_OK(hs_nn_from_host(ctx, HS_F64, 2 * n, in, din));
    TEST_OK(hs_mlp_forward(b, n, din));
    TEST_OK(hs_nn_to_host(ctx, HS_F64, 4 * n, b->out, out));
    double sum = 0, nu = 0.01 / M_PI;
    for (size_t i = 0; i < n; i++) {
        double u = out[i], ut = 2 * out[n + i], ux = out[2 * n + i], uxx = out[3 * n + i];
        double r = ut + u * ux - nu * uxx;
        sum += r * r;
    }
    TEST_LE(fabs(sum / n - res) / res, 1e-12);
    /* the data part: u at the drawn initial/boundary points against their values */
    TEST_OK(hs_nn_from_host(ctx, HS_F64, 2 * n, in, din));
    double dsum = 0;
    for (int64_t k = 0; k < c.n_data; k++) {
        double e = out[c.n_colloc + k] - du[k];
        dsum += e * e;
    }
    TEST_LE(fabs(dsum / c.n_data - data) / data, 1e-12);
    TEST_LE(fabs(f - (res + data)) / f, 1e-15);
    hs_mem_free(ctx, din);
    hs_mlp_batch_destroy(b);
    free(pts), free(dpts), free(du), free(in), free(out);
    hs_pinn_destroy(p);
}

static void grad_check(int pde, hs_activation act)
{
    hs_ctx *ctx = test_ctx();
    hs_pinn_config c;
    small_config(&c);
    c.pde = pde, c.act = act;
    c.coef = pde == 0 ? 0.01 / M_PI : 0.1;
    c.w_data = 3.0, c.w_residual = 0.5;
    hs_pinn *p;
    TEST_OK(hs_pinn_create(ctx, &c, &p));
    hs_mlp *m = hs_pinn_network(p);
    size_t np = m->nparams;
    double *x = malloc(np * 8), *g = malloc(np * 8), *fd = malloc(np * 8), *dx, *dg;
    TEST_OK(hs_mem_alloc(ctx, np * 8, (void **)&dx));
    TEST_OK(hs_mem_alloc(ctx, np * 8, (void **)&dg));
    TEST_OK(hs_mem_copy(ctx, x, m->params, np * 8, HS_COPY_D2H));
    for (size_t i = 0; i < np; i++) x[i] += 0.05 * sin(1.0 + i); /* non-zero biases */
    TEST_OK(hs_mem_copy(ctx, dx, x, np * 8, HS_COPY_H2D));
    double f0, fp, fm;
    TEST_OK(hs_pinn_objective(p, dx, &f0, dg));
    TEST_OK(hs_mem_copy(ctx, g, dg, np * 8, HS_COPY_D2H));
    for (size_t i = 0; i < np; i++) {
        double h = 1e-5 * fmax(1.0, fabs(x[i])), save = x[i];
        x[i] = save + h;
        TEST_OK(hs_mem_copy(ctx, dx, x, np * 8, HS_COPY_H2D));
        TEST_OK(hs_pinn_objective(p, dx, &fp, NULL));
        x[i] = save - h;
        TEST_OK(hs_mem_copy(ctx, dx, x, np * 8, HS_COPY_H2D));
        TEST_OK(hs_pinn_objective(p, dx, &fm, NULL));
        x[i] = save;
        fd[i] = (fp - fm) / (2 * h);
    }
    double e = test_rel_err_f64(g, fd, np);
    print_message("pde %d, %s: loss %.4e, gradient of %zu parameters vs central differences: rel err %.2e\n", pde,
                  hs_activation_name(act), f0, np, e);
    TEST_LE(e, 1e-6);
    hs_mem_free(ctx, dx), hs_mem_free(ctx, dg);
    free(x), free(g), free(fd);
    hs_pinn_destroy(p);
}

static void test_grad_burgers(void **s) { (void)s; grad_check(0, HS_ACT_TANH); }
static void test_grad_allen_cahn(void **s) { (void)s; grad_check(2, HS_ACT_SIN); }

/* Train in one go, in chunks, and in chunks through a saved-and-loaded state on a fresh object. */
static void train(hs_pinn_config *c, int chunk, int reload, double *params, double *loss, double *err)
{
    hs_ctx *ctx = test_ctx();
    hs_pinn *p;
    TEST_OK(hs_pinn_create(ctx, c, &p));
    int done = 0;
    while (!done) {
        int64_t taken;
        TEST_OK(hs_pinn_train(p, chunk, &taken, &done));
        if (reload && !done) {
            hs_pinn *q;
            TEST_OK(hs_pinn_create(ctx, c, &q));
            for (int k = 0; k < HS_PINN_STATE_PIECES; k++) {
                const char *name;
                int64_t count;
                TEST_OK(hs_pinn_state_count(p, k, &name, &count));
                double *v = malloc((count + 1) * 8);
                TEST_OK(hs_pinn_state_get(p, k, v));
                TEST_OK(hs_pinn_state_set(q, k, v));
                free(v);
            }
            hs_pinn_destroy(p);
            p = q;
        }
    }
    hs_mlp *m = hs_pinn_network(p);
    TEST_OK(hs_mem_copy(ctx, params, m->params, m->nparams * 8, HS_COPY_D2H));
    int count;
    const hs_pinn_record *h = hs_pinn_history(p, &count);
    *loss = h[count - 1].loss, *err = h[count - 1].rel_l2;
    print_message("chunk %d reload %d: %lld iterations, %d records, loss %.3e -> %.3e, error %.3e -> %.3e (%s)\n", chunk,
                  reload, (long long)hs_pinn_iteration(p), count, h[0].loss, *loss, h[0].rel_l2, *err, hs_pinn_status(p));
    assert_true(*loss < h[0].loss);
    hs_pinn_destroy(p);
}

static void test_training_resumes_exactly(void **s)
{
    (void)s;
    hs_pinn_config c;
    small_config(&c);
    double a[400], b[400], d[400], la, lb, ld, ea, eb, ed;
    train(&c, 1000, 0, a, &la, &ea);
    train(&c, 7, 0, b, &lb, &eb);
    train(&c, 9, 1, d, &ld, &ed);
    assert_memory_equal(a, b, 8 * 8 * 8 + 8);
    assert_true(la == lb && la == ld);
    assert_memory_equal(a, d, 8 * 8 * 8 + 8);
}

/* fp32 arithmetic follows the fp64 run closely over a few Adam steps. */
static void test_fp32(void **s)
{
    (void)s;
    hs_pinn_config c;
    small_config(&c);
    c.lbfgs_iters = 0;
    double a[400], b[400], la, lb, ea, eb;
    train(&c, 100, 0, a, &la, &ea);
    c.dtype = HS_F32;
    train(&c, 100, 0, b, &lb, &eb);
    TEST_LE(fabs(la - lb) / la, 1e-3);
}

/* Adaptive refinement adds points (the loss then includes them) and still trains. */
static void test_resampling(void **s)
{
    (void)s;
    hs_pinn_config c;
    small_config(&c);
    c.resample_every = 5, c.resample_candidates = 500, c.resample_add = 11;
    double a[400], la, ea;
    train(&c, 1000, 0, a, &la, &ea);
    int64_t k[3] = {0, 1, 2};
    double v[3] = {1, 5, 3};
    int64_t *top;
    TEST_OK(hs_pinn_top_k(v, 3, 2, &top));
    assert_true(top[0] == 1 && top[1] == 2);
    (void)k;
    free(top);
}

static void test_points(void **s)
{
    (void)s;
    double *pts, *u;
    int64_t n = 1000;
    TEST_OK(hs_pinn_lhs(n, 5, &pts, 0));
    /* one point in each stratum of each dimension */
    int *seen = calloc(n, sizeof *seen);
    for (int64_t i = 0; i < n; i++) {
        int st = (int)floor(pts[2 * i] * n), sx = (int)floor((pts[2 * i + 1] + 1) / 2 * n);
        assert_true(st >= 0 && st < n && sx >= 0 && sx < n);
        seen[st] |= 1, seen[sx] |= 2;
    }
    for (int64_t i = 0; i < n; i++) assert_int_equal(seen[i], 3);
    free(seen), free(pts);
    TEST_OK(hs_pinn_data_points(hs_pde1d_get(0), 100, 256, 100, 0.99, 7, &pts, &u));
    for (int k = 0; k < 100; k++) {
        double t = pts[2 * k], x = pts[2 * k + 1];
        if (t == 0) TEST_LE(fabs(u[k] + sin(M_PI * x)), 1e-15);
        else assert_true(fabs(fabs(x) - 1) == 0 && u[k] == 0);
    }
    free(pts), free(u);
    assert_int_equal(hs_pinn_data_points(hs_pde1d_get(0), 457, 256, 100, 0.99, 7, &pts, &u), HS_ERR_INPUT);
    hs_error_clear();
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_points),         cmocka_unit_test(test_loss_matches_host),
    cmocka_unit_test(test_grad_burgers),   cmocka_unit_test(test_grad_allen_cahn),
    cmocka_unit_test(test_training_resumes_exactly), cmocka_unit_test(test_fp32),
    cmocka_unit_test(test_resampling),
};

TEST_MAIN("pinn", tests)
