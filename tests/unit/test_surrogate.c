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


/* ------------------------------------------------------------------ data */

static char g_files[4][512];

/* Three trajectories of 16 frames on 8 x 10, and one on 8 x 12 (a mismatched grid). */
static void make_files(void)
{
    if (g_files[0][0]) return;
    for (int f = 0; f < 4; f++) {
        char name[32];
        snprintf(name, sizeof name, "traj%d.nc", f);
        snprintf(g_files[f], sizeof g_files[f], "%s", test_tmp_path(name));
        surr_test_file(g_files[f], 16, 8, f == 3 ? 12 : 10, 0.7 * f, -1);
    }
}

static void data_config(hs_surr_data_config *dc, char **names, int nfiles)
{
    memset(dc, 0, sizeof *dc);
    dc->nfiles = nfiles, dc->files = names, dc->nvars = 2;
    strcpy(dc->vars[0], "a"), strcpy(dc->vars[1], "b");
    dc->k_in = 3, dc->k_out = 2, dc->stride = 1;
    dc->split[0] = 0.6, dc->split[1] = 0.2, dc->split[2] = 0.2;
}

/* The pattern of surrogate_test_util.h, written out again. */
static double pattern(int v, int t, int j, int i, int nx, int ny, double phase)
{
    double x = (i + 0.5) / nx, y = (j + 0.5) / ny, tt = 0.1 * t;
    if (v == 0) return sin(2 * M_PI * (x - 0.5 * tt)) * cos(2 * M_PI * y + 0.3 * tt) + 0.3 * sin(4 * M_PI * (y - 0.2 * tt));
    return cos(2 * M_PI * (x + y) - phase - 0.5 * tt);
}

/* Windows and splits by the documented rule, statistics and climatology of the training frames
 * against sums of the pattern itself, and a batch against the normalised values. */
static void test_data(void **state)
{
    (void)state;
    hs_ctx *ctx = test_ctx();
    make_files();
    char *names[3] = {g_files[0], g_files[1], g_files[2]};
    hs_surr_data_config dc;
    data_config(&dc, names, 3);
    hs_surr_data *d;
    TEST_OK(hs_surr_data_open(ctx, &dc, 1, &d));
    /* 48 frames: training frames 0..28 (round(0.6 * 48) = 29), validation 29..37, test 38..47 */
    int64_t expect[3] = {0, 0, 0};
    for (int f = 0; f < 3; f++)
        for (int s0 = 0; s0 + 5 <= 16; s0++) {
            int g0 = 16 * f + s0, g1 = g0 + 4;
            if (g1 < 29) expect[0]++;
            else if (g0 >= 29 && g1 < 38) expect[1]++;
            else if (g0 >= 38) expect[2]++;
        }
    for (int k = 0; k < 3; k++) assert_int_equal(hs_surr_data_windows(d, k), expect[k]);
    assert_int_equal(expect[0], 21), assert_int_equal(expect[1], 2), assert_int_equal(expect[2], 6);
    const hs_surr_grid *g = hs_surr_data_grid(d);
    assert_int_equal(g->ny, 8), assert_int_equal(g->nx, 10);
    assert_string_equal(g->var_units[1], "m s-1");
    assert_string_equal(g->time_units, "seconds since 2000-01-01 00:00:00");
    TEST_LE(fabs(hs_surr_data_time(d, 1, 5) - 0.5), 1e-15);
    /* statistics over the training frames (global 0..28: file 0 whole, file 1 frames 0..12) */
    double mean[2] = {0, 0}, sq[2] = {0, 0}, n = 0, *clim = calloc(2 * 80, 8);
    for (int f = 0; f < 2; f++)
        for (int t = 0; t < (f == 0 ? 16 : 13); t++) {
            for (int v = 0; v < 2; v++)
                for (int j = 0; j < 8; j++)
                    for (int i = 0; i < 10; i++) {
                        double x = (float)pattern(v, t, j, i, 10, 8, 0.7 * f);
                        mean[v] += x, sq[v] += x * x, clim[v * 80 + j * 10 + i] += x;
                    }
            n += 80;
        }
    for (int v = 0; v < 2; v++) {
        double mu = mean[v] / n, sd = sqrt(sq[v] / n - mu * mu);
        TEST_LE(fabs(hs_surr_data_mean(d)[v] - mu), 1e-12);
        TEST_LE(fabs(hs_surr_data_std(d)[v] - sd) / sd, 1e-10);
    }
    for (int i = 0; i < 160; i++) TEST_LE(fabs(hs_surr_data_climatology(d)[i] - clim[i] / 29), 1e-12);
    /* a batch of two test windows, frames first, normalised */
    int files[2];
    int64_t firsts[2];
    hs_surr_data_window(d, 2, 0, &files[0], &firsts[0]);
    hs_surr_data_window(d, 2, 5, &files[1], &firsts[1]);
    assert_int_equal(files[0], 2), assert_int_equal(firsts[0], 6), assert_int_equal(firsts[1], 11);
    double *b = malloc(5 * 2 * 160 * 8);
    TEST_OK(hs_surr_data_fill(d, HS_F64, 2, files, firsts, 5, b));
    double worst = 0;
    for (int fr = 0; fr < 5; fr++)
        for (int s0 = 0; s0 < 2; s0++)
            for (int v = 0; v < 2; v++)
                for (int p = 0; p < 80; p++) {
                    double raw = (float)pattern(v, (int)firsts[s0] + fr, p / 10, p % 10, 10, 8, 0.7 * 2);
                    double want = (raw - hs_surr_data_mean(d)[v]) / hs_surr_data_std(d)[v];
                    worst = fmax(worst, fabs(b[((fr * 2 + s0) * 2 + v) * 80 + p] - want));
                }
    TEST_LE(worst, 1e-6);
    free(b), free(clim);
    hs_surr_data_close(d);
}

/* Bad files are input errors naming the file, and nothing is kept. */
static void expect_input_error(hs_surr_data_config *dc, const char *file, const char *words)
{
    hs_surr_data *d = NULL;
    int rc = hs_surr_data_open(test_ctx(), dc, 0, &d);
    hs_surr_data_close(d);
    const char *msg = hs_error_message();
    if (rc != HS_ERR_INPUT || !strstr(msg, file) || !strstr(msg, words))
        fail_msg("expected an input error about %s (%s), got %d: %s", file, words, rc, msg);
    hs_error_clear();
}

static void test_bad_data(void **state)
{
    (void)state;
    make_files();
    hs_surr_data_config dc;
    char *two[2] = {g_files[0], g_files[3]}, *one[1] = {g_files[0]};
    data_config(&dc, two, 2);
    expect_input_error(&dc, g_files[3], "one grid");
    data_config(&dc, one, 1);
    strcpy(dc.vars[1], "c");
    expect_input_error(&dc, g_files[0], "no variable 'c'");
    data_config(&dc, one, 1);
    dc.k_in = 10, dc.k_out = 7;
    expect_input_error(&dc, g_files[0], "16 time steps, fewer than one window needs");
    const char *nan_file = test_tmp_path("nan.nc");
    surr_test_file(nan_file, 8, 4, 4, 0, 5);
    char *bad[1] = {(char *)nan_file};
    data_config(&dc, bad, 1);
    expect_input_error(&dc, nan_file, "is nan at time step 5");
    char *missing[1] = {(char *)test_tmp_path("none.nc")};
    data_config(&dc, missing, 1);
    expect_input_error(&dc, missing[0], "cannot open");
}

/* ------------------------------------------------------------------ training */

static void train_config(hs_surr_train_config *tc, hs_dtype t)
{
    memset(tc, 0, sizeof *tc);
    surr_test_arch(&tc->arch, t, 8, 10, 3, 2);
    tc->batch = 4, tc->steps = 10;
    tc->lr = (hs_lr_plan){HS_LR_COSINE, 3e-3, 0.1, 1, 10, 2};
    tc->weight_decay = 1e-4, tc->beta1 = 0.9, tc->beta2 = 0.999, tc->eps = 1e-8, tc->clip = 0.5;
    tc->loss_scale = 1, tc->scale_window = 1000, tc->seed = 5;
    if (t == HS_F16) tc->loss_scale = 65536, tc->dynamic_scale = 1, tc->scale_window = 4;
}

/* Ten steps straight, and four steps, the state saved into a fresh trainer, six more: the same
 * losses and parameters, bit for bit. */
static void test_resume(void **state)
{
    (void)state;
    hs_ctx *ctx = test_ctx();
    make_files();
    char *names[3] = {g_files[0], g_files[1], g_files[2]};
    hs_surr_data_config dc;
    data_config(&dc, names, 3);
    hs_surr_train_config tc;
    train_config(&tc, HS_F32);
    hs_surr_data *d;
    TEST_OK(hs_surr_data_open(ctx, &dc, 1, &d));
    hs_surr_trainer *a, *b, *c;
    TEST_OK(hs_surr_trainer_create(ctx, &tc, d, &a));
    TEST_OK(hs_surr_trainer_create(ctx, &tc, d, &b));
    double la[10], lc[10];
    for (int k = 0; k < 10; k++) TEST_OK(hs_surr_trainer_step(a, &la[k]));
    for (int k = 0; k < 4; k++) TEST_OK(hs_surr_trainer_step(b, &lc[k]));
    size_t n = hs_surr_trainer_state_count(b);
    double *st = malloc(n * 8);
    TEST_OK(hs_surr_trainer_state_get(b, st));
    hs_surr_trainer_destroy(b);
    TEST_OK(hs_surr_trainer_create(ctx, &tc, d, &c));
    TEST_OK(hs_surr_trainer_state_set(c, st));
    for (int k = 4; k < 10; k++) TEST_OK(hs_surr_trainer_step(c, &lc[k]));
    for (int k = 0; k < 10; k++) assert_true(la[k] == lc[k]);
    size_t np = hs_surr_model_nparams(hs_surr_trainer_model(a));
    double *pa = malloc(np * 8), *pc = malloc(np * 8);
    test_download(pa, hs_surr_model_params(hs_surr_trainer_model(a)), np * 8);
    test_download(pc, hs_surr_model_params(hs_surr_trainer_model(c)), np * 8);
    assert_memory_equal(pa, pc, np * 8);
    print_message("resume: 10 losses and %zu parameters bitwise equal (loss %.4e -> %.4e)\n", np, la[0], la[9]);
    free(st), free(pa), free(pc);
    hs_surr_trainer_destroy(a), hs_surr_trainer_destroy(c);
    hs_surr_data_close(d);
}

/* Mixed precision: bf16 (no loss scaling) and fp16 (dynamic loss scaling from 2^16) with fp64
 * master weights follow fp32's loss curve within a band of 2% at every step. */
static void test_mixed_precision(void **state)
{
    (void)state;
    hs_ctx *ctx = test_ctx();
    make_files();
    char *names[3] = {g_files[0], g_files[1], g_files[2]};
    hs_surr_data_config dc;
    data_config(&dc, names, 3);
    hs_surr_data *d;
    TEST_OK(hs_surr_data_open(ctx, &dc, 1, &d));
    const hs_dtype types[3] = {HS_F32, HS_BF16, HS_F16};
    double loss[3][10];
    int64_t skipped = 0;
    for (int k = 0; k < 3; k++) {
        hs_surr_train_config tc;
        train_config(&tc, types[k]);
        hs_surr_trainer *t;
        TEST_OK(hs_surr_trainer_create(ctx, &tc, d, &t));
        for (int s = 0; s < 10; s++) TEST_OK(hs_surr_trainer_step(t, &loss[k][s]));
        if (k == 2) hs_surr_trainer_last(t, NULL, NULL, NULL, &skipped);
        hs_surr_trainer_destroy(t);
    }
    double band[3] = {0, 0, 0};
    for (int k = 1; k < 3; k++)
        for (int s = 0; s < 10; s++) band[k] = fmax(band[k], fabs(loss[k][s] - loss[0][s]) / loss[0][s]);
    print_message("mixed precision: fp32 loss %.4e -> %.4e; largest relative departure bf16 %.2e, fp16 %.2e (%lld steps skipped)\n",
                  loss[0][0], loss[0][9], band[1], band[2], (long long)skipped);
    TEST_LE(band[1], 0.02);
    TEST_LE(band[2], 0.02);
    hs_surr_data_close(d);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_gradient_fd),
    cmocka_unit_test(test_precisions),
    cmocka_unit_test(test_adamw_schedule),
    cmocka_unit_test(test_data),
    cmocka_unit_test(test_bad_data),
    cmocka_unit_test(test_resume),
    cmocka_unit_test_teardown(test_mixed_precision, test_tmp_cleanup),
};

TEST_MAIN("surrogate", tests)
