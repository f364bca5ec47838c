/* The surrogate: every layer's gradient against finite differences (fp64), the lower precisions
 * against fp64, the data set (windows, splits, statistics, bad files), AdamW and the schedules,
 * training that resumes bit for bit, and mixed precision's loss curve against fp32's. */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/memory.h"
#include "kernels/nn/conv.h"
#include "kernels/reduce/reduce.h"
#include "ml_surrogate/surrogate.h"
#include "ml_surrogate/surrogate_kernels.h"
#include "surrogate_test_util.h"

/* ------------------------------------------------------------------ model gradients */

typedef struct {
    hs_surr_model *m;
    int n;
    size_t count;
    void *x, *target;
    double *sq;
} fixture;

static void fixture_make(fixture *f, hs_dtype t, int n, const double *xh, size_t xcount)
{
    hs_ctx *ctx = test_ctx();
    hs_surr_arch a;
    surr_test_arch(&a, t, 5, 6, 3, 2);
    f->n = n;
    TEST_OK(hs_surr_model_create(ctx, &a, n, &f->m));
    TEST_OK(hs_surr_model_init(f->m, 7));
    double *d = test_upload(xh, xcount * 8);
    f->x = test_upload(NULL, xcount * hs_dtype_size(t));
    TEST_OK(hs_conv_cast(ctx, HS_F64, t, xcount, d, 0, f->x));
    hs_mem_free(ctx, d);
    f->count = (size_t)n * a.k_out * a.nvars * a.ny * a.nx;
    f->target = (char *)f->x + (size_t)a.k_in * n * a.nvars * a.ny * a.nx * hs_dtype_size(t);
    f->sq = test_upload(NULL, f->count * 8);
}

static void fixture_free(fixture *f)
{
    hs_surr_model_destroy(f->m);
    hs_mem_free(test_ctx(), f->x), hs_mem_free(test_ctx(), f->sq);
}

/* The mean squared error of the current parameters; with grad, also the gradient (fp64, host). */
static double loss_of(fixture *f, double *grad)
{
    hs_ctx *ctx = test_ctx();
    hs_dtype t = hs_surr_model_arch(f->m)->dtype;
    TEST_OK(hs_surr_model_forward(f->m, f->n, f->x));
    double s;
    TEST_OK(hs_surr_mse(ctx, t, f->count, hs_surr_model_pred(f->m), f->target, 2.0 / f->count, hs_surr_model_dpred(f->m), f->sq));
    TEST_OK(hs_reduce(ctx, HS_F64, HS_REDUCE_SUM, f->count, f->sq, &s));
    if (grad) {
        TEST_OK(hs_surr_model_backward(f->m));
        test_download(grad, hs_surr_model_grad(f->m), hs_surr_model_nparams(f->m) * 8);
    }
    return s / f->count;
}

static double *random_window(size_t n, uint64_t seed)
{
    double *x = malloc(n * 8);
    test_fill_f64(x, n, seed, -1, 1);
    return x;
}

static size_t window_count(int n) { return (size_t)(3 + 2) * n * 2 * 5 * 6; }

/* Central differences of the fp64 loss for entries of every parameter block (the heads, every
 * encoder and forecaster gate convolution and bias): the backward pass through time must agree. */
static void test_gradient_fd(void **state)
{
    (void)state;
    int n = 2;
    size_t xc = window_count(n);
    double *xh = random_window(xc, 11);
    fixture f;
    fixture_make(&f, HS_F64, n, xh, xc);
    size_t np = hs_surr_model_nparams(f.m);
    double *g = malloc(np * 8), *p = malloc(np * 8);
    loss_of(&f, g);
    test_download(p, hs_surr_model_params(f.m), np * 8);
    double worst = 0, h = 1e-5;
    for (int b = 0; b < hs_surr_model_blocks(f.m); b++) {
        const char *name;
        size_t off, cnt;
        hs_surr_model_block(f.m, b, &name, &off, &cnt);
        double berr = 0, gmax = 0;
        for (size_t i = 0; i < cnt; i++) gmax = fmax(gmax, fabs(g[off + i]));
        for (int q = 0; q < 6; q++) {
            size_t i = off + (size_t)(q * 7919) % cnt;
            double keep = p[i], lp, lm;
            p[i] = keep + h;
            TEST_OK(hs_mem_copy(test_ctx(), hs_surr_model_params(f.m), p, np * 8, HS_COPY_H2D));
            TEST_OK(hs_surr_model_sync_params(f.m));
            lp = loss_of(&f, NULL);
            p[i] = keep - h;
            TEST_OK(hs_mem_copy(test_ctx(), hs_surr_model_params(f.m), p, np * 8, HS_COPY_H2D));
            TEST_OK(hs_surr_model_sync_params(f.m));
            lm = loss_of(&f, NULL);
            p[i] = keep;
            double fd = (lp - lm) / (2 * h);
            /* relative to the block's largest entry, floored at what differences of a loss of order
             * one resolve with h = 1e-5 (round-off 1e-16 / 1e-5) */
            berr = fmax(berr, fabs(fd - g[i]) / (gmax + 1e-5));
        }
        TEST_OK(hs_mem_copy(test_ctx(), hs_surr_model_params(f.m), p, np * 8, HS_COPY_H2D));
        TEST_OK(hs_surr_model_sync_params(f.m));
        print_message("  %-28s %6zu weights, max |g| %.2e, max |fd - g| / (max |g| + 1e-5) %.2e\n", name, cnt, gmax, berr);
        assert_true(gmax > 0);
        worst = fmax(worst, berr);
    }
    print_message("model gradient against central differences (fp64): worst %.2e\n", worst);
    TEST_LE(worst, 1e-6);
    free(g), free(p), free(xh);
    fixture_free(&f);
}

/* fp32, bf16 and fp16 against fp64 on the same parameters and (rounded) data. */
static void test_precisions(void **state)
{
    (void)state;
    int n = 2;
    size_t xc = window_count(n);
    double *xh = random_window(xc, 12);
    fixture f64;
    fixture_make(&f64, HS_F64, n, xh, xc);
    size_t np = hs_surr_model_nparams(f64.m);
    double *g64 = malloc(np * 8), *g = malloc(np * 8);
    double l64 = loss_of(&f64, g64);
    const hs_dtype types[] = {HS_F32, HS_BF16, HS_F16};
    /* bf16 keeps 8 bits (unit roundoff 2^-9 = 2e-3), fp16 11 (4.9e-4): the loss within about two
     * units, the gradient (through the time steps) within ten */
    const double tl[] = {1e-6, 4e-3, 1e-3}, tg[] = {1e-5, 2e-2, 5e-3};
    for (int k = 0; k < 3; k++) {
        fixture f;
        fixture_make(&f, types[k], n, xh, xc);
        double l = loss_of(&f, g);
        double el = fabs(l - l64) / l64, eg = test_rel_err_f64(g, g64, np);
        print_message("%s: loss %.6e (fp64 %.6e) relative difference %.2e; gradient relative difference %.2e\n",
                      hs_dtype_name(types[k]), l, l64, el, eg);
        TEST_LE(el, tl[k]);
        TEST_LE(eg, tg[k]);
        fixture_free(&f);
    }
    free(g64), free(g), free(xh);
    fixture_free(&f64);
}

/* ------------------------------------------------------------------ optimiser pieces */

static void test_adamw_schedule(void **state)
{
    (void)state;
    hs_ctx *ctx = test_ctx();
    hs_adam *a;
    TEST_OK(hs_adam_create(ctx, 3, 0.9, 0.99, 1e-8, &a));
    double x[3] = {1.0, -2.0, 0.5}, g[3] = {0.3, -0.1, 2.0};
    double *dx = test_upload(x, 24), *dg = test_upload(g, 24);
    TEST_OK(hs_adamw_step(a, 0.1, 0.01, 0.5, dx, dg));
    double r[3];
    test_download(r, dx, 24);
    for (int i = 0; i < 3; i++) {
        double gi = 0.5 * g[i], m = 0.1 * gi, v = 0.01 * gi * gi;
        double e = x[i] - 0.1 * 0.01 * x[i] - 0.1 * (m / 0.1) / (sqrt(v / 0.01) + 1e-8);
        TEST_LE(fabs(r[i] - e), 1e-15);
    }
    hs_adam_destroy(a);
    hs_mem_free(ctx, dx), hs_mem_free(ctx, dg);
    hs_lr_plan cosine = {HS_LR_COSINE, 1e-3, 0.1, 0, 100, 10};
    TEST_LE(fabs(hs_lr_at(&cosine, 0) - 1e-3 * 0.1 * (0.1 + 0.9 * 1.0)), 1e-18);       /* warm-up: 1/10 */
    TEST_LE(fabs(hs_lr_at(&cosine, 50) - 1e-3 * (0.1 + 0.9 * 0.5)), 1e-18);            /* half way */
    TEST_LE(fabs(hs_lr_at(&cosine, 200) - 1e-4), 1e-18);                              /* after the end */
    hs_lr_plan expo = {HS_LR_EXPONENTIAL, 1.0, 0.5, 10, 0, 0};
    TEST_LE(fabs(hs_lr_at(&expo, 20) - 0.25), 1e-15);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_gradient_fd),
    cmocka_unit_test(test_precisions),
    cmocka_unit_test(test_adamw_schedule),
};

TEST_MAIN("surrogate", tests)
