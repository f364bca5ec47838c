/* The convolution family's and the surrogate's CUDA paths (cuDNN and im2col + cuBLAS) against their
 * CPU twins, kernel by kernel and whole forward/backward passes; skipped (77) without a GPU. */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/dispatch.h"
#include "kernels/memory.h"
#include "kernels/nn/conv.h"
#include "kernels/reduce/reduce.h"
#include "ml_surrogate/surrogate.h"
#include "ml_surrogate/surrogate_kernels.h"
#include "surrogate_test_util.h"

#if HS_HAVE_CUDA

static const hs_dtype g_types[4] = {HS_F64, HS_F32, HS_BF16, HS_F16};
/* Tolerances, max |gpu - cpu| / max |cpu|, by type.  Convolutions: the backends sum the products in
 * different orders (cuDNN's algorithms, cuBLAS's tiles, the GPU's fused multiply-adds), which moves
 * fp64 by round-off and fp32 by ~1e-6; a 16-bit result rounds once from fp32 partial sums, so an
 * element may land one unit of the last place apart (2^-8 bf16, 2^-11 f16, relative). */
static const double g_conv_tol[4] = {1e-13, 2e-5, 1.6e-2, 2e-3};
/* The cell's pointwise kernels: exp and tanh of the device against libm (an ulp or two), then one
 * rounding to 16 bits. */
static const double g_cell_tol[4] = {1e-14, 2e-6, 1.6e-2, 2e-3};

static void on(const char *device) { TEST_OK(hs_ctx_set_device(test_ctx(), device, 1)); }

/* n host doubles -> a new device array of type t (rounded there). */
static void *put(hs_dtype t, const double *h, size_t n)
{
    hs_ctx *ctx = test_ctx();
    double *d64 = test_upload(h, n * 8);
    void *d = test_upload(NULL, n * hs_dtype_size(t));
    TEST_OK(hs_conv_cast(ctx, HS_F64, t, n, d64, 0, d));
    hs_mem_free(ctx, d64);
    return d;
}

/* A device array of type t -> new host doubles; frees the device array. */
static double *take(hs_dtype t, void *d, size_t n)
{
    hs_ctx *ctx = test_ctx();
    double *d64 = test_upload(NULL, n * 8), *h = malloc(n * 8 + 8);
    TEST_OK(hs_conv_cast(ctx, t, HS_F64, n, d, 0, d64));
    test_download(h, d64, n * 8);
    hs_mem_free(ctx, d64), hs_mem_free(ctx, d);
    return h;
}

static double *rnd(size_t n, uint64_t seed)
{
    double *x = malloc(n * 8 + 8);
    test_fill_f64(x, n, seed, -1, 1);
    return x;
}

static double max_rel(const double *a, const double *b, size_t n)
{
    double e = 0, m = 0;
    for (size_t i = 0; i < n; i++) e = fmax(e, fabs(a[i] - b[i])), m = fmax(m, fabs(b[i]));
    return m > 0 ? e / m : e;
}

/* ------------------------------------------------------------------ convolutions */

typedef struct {
    double *y, *dx, *dw, *db;
} conv_out;

/* The three passes (beta = 1 onto random contents) and the bias on the current device. */
static void conv_passes(hs_dtype t, int n, int cin, int cout, int k, int h, int w, const double *x, const double *wt,
                        const double *dy, const double *y0, const double *dx0, const double *dw0, conv_out *o)
{
    hs_ctx *ctx = test_ctx();
    size_t nx = (size_t)n * cin * h * w, ny = (size_t)n * cout * h * w, nw = (size_t)cout * cin * k * k;
    hs_conv *c;
    TEST_OK(hs_conv_create(ctx, t, cin, cout, k, k, h, w, &c));
    void *X = put(t, x, nx), *W = put(t, wt, nw), *DY = put(t, dy, ny), *Y = put(t, y0, ny), *DX = put(t, dx0, nx);
    void *DW = put(t, dw0, nw), *B = put(t, wt, (size_t)cout), *DB = put(hs_conv_acc_type(t), dw0, (size_t)cout);
    TEST_OK(hs_conv_forward(c, n, X, W, 1.0, Y));
    TEST_OK(hs_conv_bias_add(ctx, t, n, cout, h * w, B, Y));
    TEST_OK(hs_conv_backward_data(c, n, DY, W, 1.0, DX));
    TEST_OK(hs_conv_backward_filter(c, n, X, DY, 1.0, DW));
    TEST_OK(hs_conv_bias_grad(ctx, t, n, cout, h * w, DY, 1.0, DB));
    o->y = take(t, Y, ny), o->dx = take(t, DX, nx), o->dw = take(t, DW, nw), o->db = take(hs_conv_acc_type(t), DB, (size_t)cout);
    hs_mem_free(ctx, X), hs_mem_free(ctx, W), hs_mem_free(ctx, DY), hs_mem_free(ctx, B);
    hs_conv_destroy(c);
}

static void conv_engine(const char *engine)
{
    if (engine) setenv("HS_CONV_IM2COL", "1", 1);
    else unsetenv("HS_CONV_IM2COL");
    static const int shapes[][6] = {{3, 5, 8, 3, 9, 7}, {2, 16, 64, 3, 16, 16}, {4, 3, 2, 5, 6, 11}, {1, 4, 4, 1, 5, 5}};
    for (int s = 0; s < 4; s++) {
        int n = shapes[s][0], cin = shapes[s][1], cout = shapes[s][2], k = shapes[s][3], h = shapes[s][4], w = shapes[s][5];
        size_t nx = (size_t)n * cin * h * w, ny = (size_t)n * cout * h * w, nw = (size_t)cout * cin * k * k;
        double *x = rnd(nx, 1), *wt = rnd(nw, 2), *dy = rnd(ny, 3), *y0 = rnd(ny, 4), *dx0 = rnd(nx, 5), *dw0 = rnd(nw, 6);
        for (int ti = 0; ti < 4; ti++) {
            hs_dtype t = g_types[ti];
            conv_out c, g;
            on("cpu");
            conv_passes(t, n, cin, cout, k, h, w, x, wt, dy, y0, dx0, dw0, &c);
            on("cuda");
            const char *used = hs_conv_engine(test_ctx());
            conv_passes(t, n, cin, cout, k, h, w, x, wt, dy, y0, dx0, dw0, &g);
            double e[4] = {max_rel(g.y, c.y, ny), max_rel(g.dx, c.dx, nx), max_rel(g.dw, c.dw, nw), max_rel(g.db, c.db, (size_t)cout)};
            print_message("%-13s %-4s n %d %2d -> %2d %dx%d on %2dx%2d: forward %.1e, data %.1e, filter %.1e, bias %.1e\n", used,
                          hs_dtype_name(t), n, cin, cout, k, k, h, w, e[0], e[1], e[2], e[3]);
            for (int q = 0; q < 3; q++) TEST_LE(e[q], g_conv_tol[ti]);
            TEST_LE(e[3], 1e-12); /* fp64 sums of the same (rounded) values in another order */
            free(c.y), free(c.dx), free(c.dw), free(c.db), free(g.y), free(g.dx), free(g.dw), free(g.db);
        }
        free(x), free(wt), free(dy), free(y0), free(dx0), free(dw0);
    }
    unsetenv("HS_CONV_IM2COL");
    on("cuda");
}

static void test_conv_cudnn(void **state)
{
    (void)state;
    if (!HS_HAVE_CUDNN) print_message("built without cuDNN: the default engine is im2col + cuBLAS\n");
    conv_engine(NULL);
}

static void test_conv_im2col(void **state)
{
    (void)state;
    conv_engine("im2col");
}

/* ------------------------------------------------------------------ pointwise kernels */

typedef struct {
    double *g, *c, *h, *dz, *dc, *cast, *dp, *sq, *yf;
} cell_out;

static void cell_run(hs_dtype t, int n, int ch, int hw, const double *z, const double *b, const double *cp,
                     const double *dh, const double *dc0, cell_out *o)
{
    hs_ctx *ctx = test_ctx();
    hs_dtype at = hs_conv_acc_type(t);
    size_t m = (size_t)n * ch * hw;
    void *Z = put(t, z, 4 * m), *B = put(t, b, 4 * (size_t)ch), *CP = put(at, cp, m), *DH = put(t, dh, m);
    void *C = put(at, cp, m), *H = put(t, dh, m), *DC = put(at, dc0, m);
    /* a second part of the pre-activations (the hidden convolution's), added in the cell */
    double *za = malloc(4 * m * sizeof *za);
    for (size_t i = 0; i < 4 * m; i++) za[i] = 0.5 * z[(i + 7) % (4 * m)];
    void *ZA = put(t, za, 4 * m);
    free(za);
    TEST_OK(hs_conv_lstm_forward(ctx, t, n, ch, hw, Z, ZA, B, CP, C, H));
    hs_mem_free(ctx, ZA);
    void *Zcopy = test_upload(NULL, 4 * m * hs_dtype_size(t));
    TEST_OK(hs_mem_copy(ctx, Zcopy, Z, 4 * m * hs_dtype_size(t), HS_COPY_D2D));
    o->g = take(t, Zcopy, 4 * m);
    TEST_OK(hs_conv_lstm_backward(ctx, t, n, ch, hw, Z, CP, C, DH, DC));
    o->dz = take(t, Z, 4 * m), o->dc = take(at, DC, m), o->h = take(t, H, m), o->c = take(at, C, m);
    /* casts, the loss and the residual frame */
    void *S = put(t, z, m), *Q = put(t, dh, m), *DP = put(t, z, m);
    double *sq = test_upload(NULL, m * 8);
    TEST_OK(hs_surr_mse(ctx, t, m, S, Q, 0.37, DP, sq));
    o->dp = take(t, DP, m), o->sq = malloc(m * 8);
    test_download(o->sq, sq, m * 8);
    hs_mem_free(ctx, sq);
    TEST_OK(hs_surr_add_frame(ctx, t, n, (size_t)ch * hw, Q, S)); /* S holds n frames of ch * hw */
    o->yf = take(t, S, m);
    void *F = put(HS_F32, z, m);
    TEST_OK(hs_conv_cast(ctx, t, HS_F32, m, Q, 1, F));
    o->cast = take(HS_F32, F, m);
    hs_mem_free(ctx, Q), hs_mem_free(ctx, B), hs_mem_free(ctx, CP), hs_mem_free(ctx, DH);
}

/* The cell, loss, residual and cast kernels on one shape, CPU against CUDA. */
static void pointwise_shape(int n, int ch, int hw)
{
    size_t m = (size_t)n * ch * hw;
    double *z = rnd(4 * m, 10), *b = rnd(4 * (size_t)ch, 11), *cp = rnd(m, 12), *dh = rnd(m, 13), *dc0 = rnd(m, 14);
    for (size_t i = 0; i < 4 * m; i++) z[i] *= 3;
    for (int ti = 0; ti < 4; ti++) {
        hs_dtype t = g_types[ti];
        cell_out c, g;
        on("cpu");
        cell_run(t, n, ch, hw, z, b, cp, dh, dc0, &c);
        on("cuda");
        cell_run(t, n, ch, hw, z, b, cp, dh, dc0, &g);
        double e[5] = {max_rel(g.g, c.g, 4 * m), max_rel(g.h, c.h, m), max_rel(g.c, c.c, m), max_rel(g.dz, c.dz, 4 * m),
                       max_rel(g.dc, c.dc, m)};
        double worst = 0;
        for (int q = 0; q < 5; q++) worst = fmax(worst, e[q]);
        print_message("%-4s cell: gates %.1e h %.1e c %.1e dz %.1e dc %.1e\n", hs_dtype_name(t), e[0], e[1], e[2], e[3], e[4]);
        TEST_LE(worst, g_cell_tol[ti]);
        /* one subtraction, one product, one sum, one rounding: the same bits */
        assert_memory_equal(g.dp, c.dp, m * 8);
        assert_memory_equal(g.sq, c.sq, m * 8);
        assert_memory_equal(g.yf, c.yf, m * 8);
        assert_memory_equal(g.cast, c.cast, m * 8);
        cell_out *o[2] = {&c, &g};
        for (int k = 0; k < 2; k++)
            free(o[k]->g), free(o[k]->c), free(o[k]->h), free(o[k]->dz), free(o[k]->dc), free(o[k]->cast), free(o[k]->dp),
                free(o[k]->sq), free(o[k]->yf);
    }
    free(z), free(b), free(cp), free(dh), free(dc0);
}

static void test_pointwise(void **state)
{
    (void)state;
    pointwise_shape(3, 7, 37);
    pointwise_shape(1000, 70, 1); /* 70,000 (image, channel) rows: past the grid's 65,535 */
    pointwise_shape(2, 3, 300);   /* planes wider than a thread block */
}

/* The bias add and bias gradient (beta 0 and 1) on shapes whose per-channel sums split into one or
 * many slices (and rows past the grid's height), CPU against CUDA: fp64 sums of the same values. */
static void test_bias(void **state)
{
    (void)state;
    static const int shapes[][3] = {{9, 5, 777}, {2, 3, 70001}, {1, 1, 1}, {70000, 1, 2}, {3, 256, 66}};
    for (int s = 0; s < 5; s++) {
        int n = shapes[s][0], ch = shapes[s][1], hw = shapes[s][2];
        size_t m = (size_t)n * ch * hw;
        double *y = rnd(m, 31), *b = rnd((size_t)ch, 32), *db0 = rnd((size_t)ch, 33);
        for (int ti = 0; ti < 4; ti++) {
            hs_dtype t = g_types[ti], at = hs_conv_acc_type(t);
            double *out[2][3];
            for (int d = 0; d < 2; d++) {
                on(d ? "cuda" : "cpu");
                hs_ctx *ctx = test_ctx();
                void *Y = put(t, y, m), *B = put(t, b, (size_t)ch), *D0 = put(at, db0, (size_t)ch), *D1 = put(at, db0, (size_t)ch);
                TEST_OK(hs_conv_bias_grad(ctx, t, n, ch, hw, Y, 0.0, D0));
                TEST_OK(hs_conv_bias_grad(ctx, t, n, ch, hw, Y, 1.0, D1));
                TEST_OK(hs_conv_bias_add(ctx, t, n, ch, hw, B, Y));
                out[d][0] = take(at, D0, (size_t)ch), out[d][1] = take(at, D1, (size_t)ch), out[d][2] = take(t, Y, m);
                hs_mem_free(ctx, B);
            }
            double e0 = max_rel(out[1][0], out[0][0], (size_t)ch), e1 = max_rel(out[1][1], out[0][1], (size_t)ch);
            print_message("bias %-4s n %5d ch %3d hw %5d: gradient %.1e (beta 1: %.1e)\n", hs_dtype_name(t), n, ch, hw, e0, e1);
            TEST_LE(e0, 1e-12);
            TEST_LE(e1, 1e-12);
            assert_memory_equal(out[1][2], out[0][2], m * 8); /* one add, one rounding: the same bits */
            for (int d = 0; d < 2; d++) free(out[d][0]), free(out[d][1]), free(out[d][2]);
        }
        free(y), free(b), free(db0);
    }
}

/* ------------------------------------------------------------------ the whole model */

/* Loss and gradient of one batch with the same parameters on the current device. */
static double model_run(hs_dtype t, const double *x, int n, double *grad, size_t *np_out)
{
    hs_ctx *ctx = test_ctx();
    hs_surr_arch a;
    surr_test_arch(&a, t, 12, 10, 4, 3);
    hs_surr_model *m;
    TEST_OK(hs_surr_model_create(ctx, &a, n, &m));
    TEST_OK(hs_surr_model_init(m, 3));
    size_t xc = (size_t)(a.k_in + a.k_out) * n * a.nvars * a.ny * a.nx, count = (size_t)a.k_out * n * a.nvars * a.ny * a.nx;
    void *X = put(t, x, xc);
    double *sq = test_upload(NULL, count * 8), s;
    TEST_OK(hs_surr_model_forward(m, n, X));
    const void *target = (const char *)X + (size_t)a.k_in * n * a.nvars * a.ny * a.nx * hs_dtype_size(t);
    TEST_OK(hs_surr_mse(ctx, t, count, hs_surr_model_pred(m), target, 2.0 / count, hs_surr_model_dpred(m), sq));
    TEST_OK(hs_reduce(ctx, HS_F64, HS_REDUCE_SUM, count, sq, &s));
    TEST_OK(hs_surr_model_backward(m));
    *np_out = hs_surr_model_nparams(m);
    test_download(grad, hs_surr_model_grad(m), *np_out * 8);
    hs_mem_free(ctx, X), hs_mem_free(ctx, sq);
    hs_surr_model_destroy(m);
    return s / count;
}

static void test_model(void **state)
{
    (void)state;
    int n = 3;
    size_t xc = (size_t)7 * n * 2 * 12 * 10, np;
    double *x = rnd(xc, 21), *gc = malloc(200000 * 8), *gg = malloc(200000 * 8);
    const double tl[4] = {1e-13, 1e-5, 2e-2, 3e-3}, tg[4] = {1e-11, 1e-4, 1e-1, 2e-2};
    for (int ti = 0; ti < 4; ti++) {
        hs_dtype t = g_types[ti];
        on("cpu");
        double lc = model_run(t, x, n, gc, &np);
        on("cuda");
        double lg = model_run(t, x, n, gg, &np);
        double el = fabs(lg - lc) / lc, eg = test_rel_err_f64(gg, gc, np);
        print_message("model %-4s: loss cpu %.10e cuda %.10e (rel %.1e), gradient rel %.1e\n", hs_dtype_name(t), lc, lg, el, eg);
        TEST_LE(el, tl[ti]);
        TEST_LE(eg, tg[ti]);
    }
    free(x), free(gc), free(gg);
}

static int setup_cuda(void **state)
{
    (void)state;
    return hs_ctx_set_device(test_ctx(), "cuda", 1) == HS_OK ? 0 : -1;
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup(test_conv_cudnn, setup_cuda),
    cmocka_unit_test_setup(test_conv_im2col, setup_cuda),
    cmocka_unit_test_setup(test_pointwise, setup_cuda),
    cmocka_unit_test_setup(test_bias, setup_cuda),
    cmocka_unit_test_setup(test_model, setup_cuda),
};
#endif

int main(void)
{
#if HS_HAVE_CUDA
    if (hs_cuda_device_count() > 0) return test_run_group("conv_twin", tests, sizeof tests / sizeof tests[0]);
    printf("SKIP: no GPU here: the CUDA convolutions, ConvLSTM cells and surrogate passes are not compared with their CPU twins\n");
#else
    printf("SKIP: built without CUDA: the convolution family has no CUDA twin to compare\n");
#endif
    return 77;
}
