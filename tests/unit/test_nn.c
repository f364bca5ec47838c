/* Dense networks: input-derivative jets and parameter gradients against central finite differences
 * (fp64, relative error < 1e-6), fp32 against fp64, Xavier statistics, bad arguments. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/memory.h"
#include "kernels/nn/nn.h"
#include "test_util.h"

typedef struct net {
    hs_mlp *mlp;
    hs_mlp_batch *val, *jet;
    void *dx;
    size_t n;
} net;

static const hs_jet burgers_jet = {2, {0, 1}, 1, {1}};
static const hs_jet full_jet = {2, {0, 1}, 2, {1, 0}};

static void net_create(net *t, hs_dtype dt, int nl, const int *w, hs_activation act, const hs_jet *jet, size_t n,
                       uint64_t seed)
{
    hs_ctx *ctx = test_ctx();
    TEST_OK(hs_mlp_create(ctx, dt, nl, w, act, &t->mlp));
    TEST_OK(hs_mlp_init_xavier(t->mlp, seed));
    TEST_OK(hs_mlp_batch_create(t->mlp, NULL, n, &t->val));
    TEST_OK(hs_mlp_batch_create(t->mlp, jet, n, &t->jet));
    TEST_OK(hs_mem_alloc(ctx, (size_t)w[0] * n * hs_dtype_size(dt) + 8, &t->dx));
    t->n = n;
}

static void net_destroy(net *t)
{
    hs_mem_free(test_ctx(), t->dx);
    hs_mlp_batch_destroy(t->val), hs_mlp_batch_destroy(t->jet);
    hs_mlp_destroy(t->mlp);
}

/* Forward n points of host inputs x (in x n) through a batch; outputs to host (out x C*n). */
static void run(net *t, hs_mlp_batch *b, const double *x, double *out)
{
    hs_mlp *m = t->mlp;
    TEST_OK(hs_nn_from_host(test_ctx(), m->dtype, (size_t)m->width[0] * t->n, x, t->dx));
    TEST_OK(hs_mlp_forward(b, t->n, t->dx));
    TEST_OK(hs_nn_to_host(test_ctx(), m->dtype, (size_t)m->width[m->nlayers] * b->channels * t->n, b->out, out));
}

/* Every jet channel against central differences of the value (first derivatives) or of the
 * first-derivative channel (second derivatives). */
static void check_jet(hs_activation act, const hs_jet *jet, size_t n)
{
    const int w[] = {2, 9, 7, 8, 3};
    net t;
    net_create(&t, HS_F64, 4, w, act, jet, n, 42);
    int C = hs_jet_channels(jet), no = 3;
    size_t len = (size_t)no * C * n;
    double *x = malloc(2 * n * 8), *xp = malloc(2 * n * 8), *u = malloc(len * 8), *up = malloc(len * 8),
           *um = malloc(len * 8), *v = malloc(no * n * 8), *fd = malloc(no * n * 8), *an = malloc(no * n * 8);
    test_fill_f64(x, 2 * n, 5, -1, 1);
    run(&t, t.jet, x, u);
    run(&t, t.val, x, v);
    TEST_LE(test_rel_err_f64(u, v, no * n), 1e-15); /* value channel = value-only pass */
    const double h = 1e-5;
    for (int c = 1; c < C; c++) {
        int second = c > jet->nfirst, k = second ? c - 1 - jet->nfirst : c - 1;
        int dir = second ? jet->second[k] : jet->first[k];
        int src = 0; /* channel differentiated by the finite difference */
        if (second)
            for (int q = 0; q < jet->nfirst; q++)
                if (jet->first[q] == dir) src = 1 + q;
        memcpy(xp, x, 2 * n * 8);
        for (size_t p = 0; p < n; p++) xp[2 * p + dir] += h;
        run(&t, t.jet, xp, up);
        for (size_t p = 0; p < n; p++) xp[2 * p + dir] -= 2 * h;
        run(&t, t.jet, xp, um);
        for (size_t i = 0; i < no * n; i++) {
            fd[i] = (up[src * no * n + i] - um[src * no * n + i]) / (2 * h);
            an[i] = u[c * no * n + i];
        }
        double e = test_rel_err_f64(an, fd, no * n);
        print_message("%s jet channel %d (d%s/dx%d): rel err %.2e\n", hs_activation_name(act), c, second ? "2" : "", dir, e);
        TEST_LE(e, 1e-6);
    }
    free(x), free(xp), free(u), free(up), free(um), free(v), free(fd), free(an);
    net_destroy(&t);
}

static void test_jet_tanh(void **s) { (void)s; check_jet(HS_ACT_TANH, &burgers_jet, 31); }
static void test_jet_sin(void **s) { (void)s; check_jet(HS_ACT_SIN, &full_jet, 17); }
static void test_jet_sigmoid(void **s) { (void)s; check_jet(HS_ACT_SIGMOID, &full_jet, 1); }

/* A loss of every output channel: L = sum w .* out + 0.5 sum out^2, so dL/dout = w + out. */
static double loss_of(const double *out, const double *w, size_t len)
{
    double L = 0;
    for (size_t i = 0; i < len; i++) L += w[i] * out[i] + 0.5 * out[i] * out[i];
    return L;
}

static void eval_grad(net *t, hs_mlp_batch *b, const double *x, const double *w, double *grad, double *L)
{
    hs_mlp *m = t->mlp;
    size_t len = (size_t)m->width[m->nlayers] * b->channels * t->n;
    double *out = malloc(len * 8);
    run(t, b, x, out);
    *L = loss_of(out, w, len);
    for (size_t i = 0; i < len; i++) out[i] += w[i];
    TEST_OK(hs_nn_from_host(test_ctx(), m->dtype, len, out, b->dout));
    TEST_OK(hs_mlp_zero_grad(m));
    TEST_OK(hs_mlp_backward(b));
    TEST_OK(hs_mlp_finish_grad(m));
    if (grad) TEST_OK(hs_mem_copy(test_ctx(), grad, m->grad, m->nparams * 8, HS_COPY_D2H));
    free(out);
}

static void check_param_grad(hs_activation act, const hs_jet *jet, size_t n)
{
    const int w[] = {2, 6, 5, 2};
    net t;
    net_create(&t, HS_F64, 3, w, act, jet, n, 7);
    hs_mlp *m = t.mlp;
    hs_mlp_batch *b = jet ? t.jet : t.val;
    size_t np = m->nparams, len = (size_t)2 * b->channels * n;
    double *x = malloc(2 * n * 8), *wt = malloc(len * 8), *g = malloc(np * 8), *fd = malloc(np * 8),
           *p = malloc(np * 8);
    test_fill_f64(x, 2 * n, 11, -1, 1);
    test_fill_f64(wt, len, 12, -1, 1);
    /* non-zero biases so that their gradient paths are exercised at a generic point */
    TEST_OK(hs_mem_copy(test_ctx(), p, m->params, np * 8, HS_COPY_D2H));
    for (int l = 0; l < m->nlayers; l++)
        test_fill_f64(p + m->b_off[l], (size_t)w[l + 1], 30 + l, -0.3, 0.3);
    TEST_OK(hs_mem_copy(test_ctx(), m->params, p, np * 8, HS_COPY_H2D));
    double L;
    eval_grad(&t, b, x, wt, g, &L);
    for (size_t i = 0; i < np; i++) {
        double h = 1e-5, save = p[i], Lp, Lm;
        p[i] = save + h;
        TEST_OK(hs_mem_copy(test_ctx(), m->params, p, np * 8, HS_COPY_H2D));
        eval_grad(&t, b, x, wt, NULL, &Lp);
        p[i] = save - h;
        TEST_OK(hs_mem_copy(test_ctx(), m->params, p, np * 8, HS_COPY_H2D));
        eval_grad(&t, b, x, wt, NULL, &Lm);
        p[i] = save;
        fd[i] = (Lp - Lm) / (2 * h);
    }
    double e = test_rel_err_f64(g, fd, np), emax = 0, scale = 0;
    for (size_t i = 0; i < np; i++) scale = fmax(scale, fabs(fd[i]));
    for (size_t i = 0; i < np; i++) emax = fmax(emax, fabs(g[i] - fd[i]) / fmax(fabs(fd[i]), 1e-3 * scale));
    print_message("%s param grad (%d channels, %zu params): rel err %.2e, worst component %.2e\n",
                  hs_activation_name(act), b->channels, np, e, emax);
    TEST_LE(e, 1e-6);
    TEST_LE(emax, 1e-6);
    free(x), free(wt), free(g), free(fd), free(p);
    net_destroy(&t);
}

static void test_grad_value_tanh(void **s) { (void)s; check_param_grad(HS_ACT_TANH, NULL, 13); }
static void test_grad_jet_tanh(void **s) { (void)s; check_param_grad(HS_ACT_TANH, &burgers_jet, 31); }
static void test_grad_jet_sin(void **s) { (void)s; check_param_grad(HS_ACT_SIN, &full_jet, 9); }
static void test_grad_jet_sigmoid(void **s) { (void)s; check_param_grad(HS_ACT_SIGMOID, &burgers_jet, 1); }

/* fp32 network against the fp64 one from the same parameters. */
static void test_fp32(void **s)
{
    (void)s;
    const int w[] = {2, 20, 20, 20, 1};
    size_t n = 257;
    net a, b;
    net_create(&a, HS_F64, 4, w, HS_ACT_TANH, &burgers_jet, n, 3);
    net_create(&b, HS_F32, 4, w, HS_ACT_TANH, &burgers_jet, n, 3);
    size_t len = 4 * n, np = a.mlp->nparams;
    double *x = malloc(2 * n * 8), *wt = malloc(len * 8), *ua = malloc(len * 8), *ub = malloc(len * 8),
           *ga = malloc(np * 8), *gb = malloc(np * 8), La, Lb;
    test_fill_f64(x, 2 * n, 1, -1, 1);
    test_fill_f64(wt, len, 2, -1, 1);
    run(&a, a.jet, x, ua);
    run(&b, b.jet, x, ub);
    TEST_LE(test_rel_err_f64(ub, ua, len), 1e-5);
    eval_grad(&a, a.jet, x, wt, ga, &La);
    eval_grad(&b, b.jet, x, wt, gb, &Lb);
    TEST_LE(fabs(La - Lb) / fabs(La), 1e-5);
    TEST_LE(test_rel_err_f64(gb, ga, np), 1e-4);
    free(x), free(wt), free(ua), free(ub), free(ga), free(gb);
    net_destroy(&a), net_destroy(&b);
}

static void test_xavier(void **s)
{
    (void)s;
    hs_ctx *ctx = test_ctx();
    const int w[] = {2, 200, 100, 1};
    hs_mlp *m, *m2;
    TEST_OK(hs_mlp_create(ctx, HS_F64, 3, w, HS_ACT_TANH, &m));
    TEST_OK(hs_mlp_create(ctx, HS_F64, 3, w, HS_ACT_TANH, &m2));
    assert_int_equal(m->nparams, 2 * 200 + 200 + 200 * 100 + 100 + 100 + 1);
    TEST_OK(hs_mlp_init_xavier(m, 99));
    TEST_OK(hs_mlp_init_xavier(m2, 99));
    double *p = malloc(m->nparams * 8), *p2 = malloc(m->nparams * 8);
    TEST_OK(hs_mem_copy(ctx, p, m->params, m->nparams * 8, HS_COPY_D2H));
    TEST_OK(hs_mem_copy(ctx, p2, m2->params, m->nparams * 8, HS_COPY_D2H));
    assert_memory_equal(p, p2, m->nparams * 8);
    /* a truncated (at 2 sd) normal has standard deviation 0.8796 sd */
    size_t nw = 200 * 100;
    double sd = sqrt(2.0 / 300), ss = 0, mean = 0;
    for (size_t i = 0; i < nw; i++) {
        double v = p[m->w_off[1] + i];
        assert_true(fabs(v) <= 2 * sd);
        ss += v * v, mean += v;
    }
    TEST_LE(fabs(sqrt(ss / nw) / (0.8796 * sd) - 1), 0.02);
    TEST_LE(fabs(mean / nw) / sd, 0.03);
    for (int l = 0; l < 3; l++)
        for (int i = 0; i < w[l + 1]; i++) assert_true(p[m->b_off[l] + i] == 0.0);
    free(p), free(p2);
    hs_mlp_destroy(m), hs_mlp_destroy(m2);
}

static void test_bad_args(void **s)
{
    (void)s;
    hs_ctx *ctx = test_ctx();
    hs_mlp *m = NULL;
    const int w0[] = {2, 0, 1}, w[] = {2, 4, 1};
    assert_int_equal(hs_mlp_create(ctx, HS_F64, 0, w, HS_ACT_TANH, &m), HS_ERR_INPUT);
    hs_error_clear();
    assert_int_equal(hs_mlp_create(ctx, HS_F64, 2, w0, HS_ACT_TANH, &m), HS_ERR_INPUT);
    hs_error_clear();
    hs_activation a;
    assert_int_equal(hs_activation_parse("softsign", &a), HS_ERR_INPUT);
    TEST_OK(hs_activation_parse("sin", &a));
    assert_int_equal(a, HS_ACT_SIN);
    TEST_OK(hs_mlp_create(ctx, HS_F64, 2, w, HS_ACT_TANH, &m));
    hs_mlp_batch *b = NULL;
    hs_jet bad = {1, {0}, 1, {1}}, out_of_range = {1, {2}, 0, {0}};
    assert_int_equal(hs_mlp_batch_create(m, &bad, 4, &b), HS_ERR_RUNTIME);
    hs_error_clear();
    assert_int_equal(hs_mlp_batch_create(m, &out_of_range, 4, &b), HS_ERR_RUNTIME);
    hs_error_clear();
    TEST_OK(hs_mlp_batch_create(m, NULL, 4, &b));
    assert_int_equal(hs_mlp_forward(b, 5, NULL), HS_ERR_RUNTIME);
    hs_error_clear();
    TEST_OK(hs_mlp_forward(b, 0, NULL)); /* an empty batch is a no-op */
    TEST_OK(hs_mlp_backward(b));
    hs_mlp_batch_destroy(b);
    hs_mlp_destroy(m);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_jet_tanh),        cmocka_unit_test(test_jet_sin),
    cmocka_unit_test(test_jet_sigmoid),     cmocka_unit_test(test_grad_value_tanh),
    cmocka_unit_test(test_grad_jet_tanh),   cmocka_unit_test(test_grad_jet_sin),
    cmocka_unit_test(test_grad_jet_sigmoid), cmocka_unit_test(test_fp32),
    cmocka_unit_test(test_xavier),          cmocka_unit_test(test_bad_args),
};

TEST_MAIN("nn", tests)
