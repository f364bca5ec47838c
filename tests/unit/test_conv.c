/* The convolution family against direct loops and finite differences (fp64), the 16-bit conversions
 * against IEEE values, and the lower precisions against fp64. */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/half.h"
#include "kernels/memory.h"
#include "kernels/nn/conv.h"

/* ------------------------------------------------------------------ 16-bit conversions */

static void test_half(void **state)
{
    (void)state;
    /* IEEE binary16: values at the edges of the format, and ties to even */
    assert_int_equal(hs_f32_to_f16(1.0f), 0x3c00);
    assert_int_equal(hs_f32_to_f16(-2.0f), 0xc000);
    assert_int_equal(hs_f32_to_f16(65504.0f), 0x7bff);
    assert_int_equal(hs_f32_to_f16(65519.0f), 0x7bff);
    assert_int_equal(hs_f32_to_f16(65520.0f), 0x7c00);
    assert_int_equal(hs_f32_to_f16(ldexpf(1, -14)), 0x0400);        /* smallest normal */
    assert_int_equal(hs_f32_to_f16(ldexpf(1, -24)), 0x0001);        /* smallest subnormal */
    assert_int_equal(hs_f32_to_f16(ldexpf(1, -25)), 0x0000);        /* tie: to even (zero) */
    assert_int_equal(hs_f32_to_f16(ldexpf(3, -26)), 0x0001);        /* 0.75 ulp: up */
    assert_int_equal(hs_f32_to_f16(ldexpf(3, -25)), 0x0002);        /* 1.5 ulp: tie, to even */
    assert_int_equal(hs_f32_to_f16(1.0f + ldexpf(1, -11)), 0x3c00); /* tie: to even */
    assert_int_equal(hs_f32_to_f16(1.0f + ldexpf(3, -11)), 0x3c02); /* tie: to even (up) */
    assert_int_equal(hs_f32_to_f16(INFINITY), 0x7c00);
    assert_true(isnan(hs_f16_to_f32(hs_f32_to_f16(NAN))));
    assert_true(hs_f16_to_f32(0x0001) == ldexpf(1, -24));
    assert_true(hs_f16_to_f32(0x7bff) == 65504.0f);
    /* bfloat16 */
    assert_int_equal(hs_f32_to_bf16(1.0f), 0x3f80);
    assert_int_equal(hs_f32_to_bf16(1.0f + ldexpf(1, -8)), 0x3f80); /* tie: to even */
    assert_int_equal(hs_f32_to_bf16(1.0f + ldexpf(3, -8)), 0x3f82);
    assert_int_equal(hs_f32_to_bf16(-3.0f), 0xc040);
    assert_true(isnan(hs_bf16_to_f32(hs_f32_to_bf16(NAN))));
    /* every finite 16-bit pattern survives the round trip through float */
    for (uint32_t b = 0; b < 65536; b++) {
        uint16_t h = (uint16_t)b;
        if ((h & 0x7c00) != 0x7c00) assert_int_equal(hs_f32_to_f16(hs_f16_to_f32(h)), h);
        if ((h & 0x7f80) != 0x7f80) assert_int_equal(hs_f32_to_bf16(hs_bf16_to_f32(h)), h);
    }
}

/* ------------------------------------------------------------------ references */

typedef struct {
    int n, cin, cout, kh, kw, h, w;
} shape;

static size_t nx(const shape *s) { return (size_t)s->n * s->cin * s->h * s->w; }
static size_t ny(const shape *s) { return (size_t)s->n * s->cout * s->h * s->w; }
static size_t nw(const shape *s) { return (size_t)s->cout * s->cin * s->kh * s->kw; }

/* x value at (i, c, yy, xx) or 0 outside the image */
static double xat(const shape *s, const double *x, int i, int c, int yy, int xx)
{
    if (yy < 0 || yy >= s->h || xx < 0 || xx >= s->w) return 0;
    return x[(((size_t)i * s->cin + c) * s->h + yy) * s->w + xx];
}

/* Cross-correlation with "same" zero padding, written out. */
static void conv_ref(const shape *s, const double *x, const double *w, double *y)
{
    for (int i = 0; i < s->n; i++)
        for (int co = 0; co < s->cout; co++)
            for (int yy = 0; yy < s->h; yy++)
                for (int xx = 0; xx < s->w; xx++) {
                    double acc = 0;
                    for (int ci = 0; ci < s->cin; ci++)
                        for (int ky = 0; ky < s->kh; ky++)
                            for (int kx = 0; kx < s->kw; kx++)
                                acc += w[((co * s->cin + ci) * s->kh + ky) * s->kw + kx] *
                                       xat(s, x, i, ci, yy + ky - s->kh / 2, xx + kx - s->kw / 2);
                    y[(((size_t)i * s->cout + co) * s->h + yy) * s->w + xx] = acc;
                }
}

static double *rnd(size_t n, uint64_t seed)
{
    double *v = malloc(n * sizeof *v + 8);
    test_fill_f64(v, n, seed, -1, 1);
    return v;
}

static double dot(const double *a, const double *b, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}

static double max_rel(const double *a, const double *b, size_t n)
{
    double e = 0, m = 0;
    for (size_t i = 0; i < n; i++) e = fmax(e, fabs(a[i] - b[i])), m = fmax(m, fabs(b[i]));
    return m > 0 ? e / m : e;
}

/* The family's three passes in fp64 on the test context, results on the host. */
static void passes(const shape *s, const double *x, const double *w, const double *dy, double beta, double *y,
                   double *dx, double *dw)
{
    hs_ctx *ctx = test_ctx();
    hs_conv *c;
    TEST_OK(hs_conv_create(ctx, HS_F64, s->cin, s->cout, s->kh, s->kw, s->h, s->w, &c));
    assert_int_equal(hs_conv_weights(c), nw(s));
    double *dX = test_upload(x, nx(s) * 8), *dW = test_upload(w, nw(s) * 8), *dDY = test_upload(dy, ny(s) * 8);
    double *dY = test_upload(y, ny(s) * 8), *dDX = test_upload(dx, nx(s) * 8), *dDW = test_upload(dw, nw(s) * 8);
    TEST_OK(hs_conv_forward(c, s->n, dX, dW, beta, dY));
    TEST_OK(hs_conv_backward_data(c, s->n, dDY, dW, beta, dDX));
    TEST_OK(hs_conv_backward_filter(c, s->n, dX, dDY, beta, dDW));
    test_download(y, dY, ny(s) * 8), test_download(dx, dDX, nx(s) * 8), test_download(dw, dDW, nw(s) * 8);
    hs_mem_free(ctx, dX), hs_mem_free(ctx, dW), hs_mem_free(ctx, dDY), hs_mem_free(ctx, dY), hs_mem_free(ctx, dDX),
        hs_mem_free(ctx, dDW);
    hs_conv_destroy(c);
}

/* Forward against the direct loops; backward data and filter against the adjoint identities
 * <conv(x), dy> = <x, dx> and the filter gradient written out; beta = 1 adds to what was there. */
static void test_conv_f64(void **state)
{
    (void)state;
    static const shape shapes[] = {{2, 3, 4, 3, 3, 7, 5}, {1, 1, 1, 1, 1, 4, 4}, {3, 2, 5, 5, 3, 6, 9}, {2, 4, 2, 3, 5, 2, 3}};
    for (int k = 0; k < (int)(sizeof shapes / sizeof *shapes); k++) {
        const shape *s = &shapes[k];
        for (int b = 0; b < 2; b++) {
            double *x = rnd(nx(s), 10 + k), *w = rnd(nw(s), 20 + k), *dy = rnd(ny(s), 30 + k);
            double *y = rnd(ny(s), 40 + k), *dx = rnd(nx(s), 50 + k), *dw = rnd(nw(s), 60 + k);
            double *y0 = malloc(ny(s) * 8), *dx0 = malloc(nx(s) * 8), *dw0 = malloc(nw(s) * 8 + 8);
            memcpy(y0, y, ny(s) * 8), memcpy(dx0, dx, nx(s) * 8), memcpy(dw0, dw, nw(s) * 8);
            passes(s, x, w, dy, b, y, dx, dw);
            double *yr = malloc(ny(s) * 8), *dwr = calloc(nw(s) + 1, 8);
            conv_ref(s, x, w, yr);
            for (size_t i = 0; i < ny(s); i++) yr[i] += b * y0[i];
            TEST_LE(max_rel(y, yr, ny(s)), 1e-14);
            /* the filter gradient: dw[co, ci, ky, kx] = sum over images and pixels of x(shifted) dy */
            for (int co = 0; co < s->cout; co++)
                for (int ci = 0; ci < s->cin; ci++)
                    for (int ky = 0; ky < s->kh; ky++)
                        for (int kx = 0; kx < s->kw; kx++) {
                            double acc = 0;
                            for (int i = 0; i < s->n; i++)
                                for (int yy = 0; yy < s->h; yy++)
                                    for (int xx = 0; xx < s->w; xx++)
                                        acc += xat(s, x, i, ci, yy + ky - s->kh / 2, xx + kx - s->kw / 2) *
                                               dy[(((size_t)i * s->cout + co) * s->h + yy) * s->w + xx];
                            size_t o = ((co * s->cin + ci) * s->kh + ky) * s->kw + kx;
                            dwr[o] = acc + b * dw0[o];
                        }
            TEST_LE(max_rel(dw, dwr, nw(s)), 1e-14);
            /* adjoint: <conv(x), dy> = <x, conv^T dy> for the increment */
            for (size_t i = 0; i < nx(s); i++) dx[i] -= b * dx0[i];
            conv_ref(s, x, w, yr);
            double lhs = dot(yr, dy, ny(s)), rhs = dot(x, dx, nx(s));
            TEST_LE(fabs(lhs - rhs) / fmax(fabs(lhs), 1e-300), 1e-13);
            free(x), free(w), free(dy), free(y), free(dx), free(dw), free(y0), free(dx0), free(dw0), free(yr), free(dwr);
        }
    }
}

/* The data gradient against central finite differences of L(x) = <conv(x, w), dy> (linear in x:
 * the difference quotient is exact up to round-off). */
static void test_conv_fd(void **state)
{
    (void)state;
    shape s = {2, 3, 2, 3, 3, 4, 5};
    double *x = rnd(nx(&s), 1), *w = rnd(nw(&s), 2), *dy = rnd(ny(&s), 3), *y = calloc(ny(&s), 8);
    double *dx = calloc(nx(&s), 8), *dw = calloc(nw(&s), 8), *yr = malloc(ny(&s) * 8);
    passes(&s, x, w, dy, 0, y, dx, dw);
    double worst = 0, h = 1e-3;
    for (size_t i = 0; i < nx(&s); i += 7) {
        double keep = x[i], lp, lm;
        x[i] = keep + h, conv_ref(&s, x, w, yr), lp = dot(yr, dy, ny(&s));
        x[i] = keep - h, conv_ref(&s, x, w, yr), lm = dot(yr, dy, ny(&s));
        x[i] = keep;
        worst = fmax(worst, fabs((lp - lm) / (2 * h) - dx[i]));
    }
    for (size_t i = 0; i < nw(&s); i += 5) {
        double keep = w[i], lp, lm;
        w[i] = keep + h, conv_ref(&s, x, w, yr), lp = dot(yr, dy, ny(&s));
        w[i] = keep - h, conv_ref(&s, x, w, yr), lm = dot(yr, dy, ny(&s));
        w[i] = keep;
        worst = fmax(worst, fabs((lp - lm) / (2 * h) - dw[i]));
    }
    print_message("conv: max |finite difference - gradient| = %.2e\n", worst);
    TEST_LE(worst, 1e-10);
    free(x), free(w), free(dy), free(y), free(dx), free(dw), free(yr);
}

static void test_bias(void **state)
{
    (void)state;
    hs_ctx *ctx = test_ctx();
    int n = 3, ch = 5, hw = 7;
    size_t m = (size_t)n * ch * hw;
    double *y = rnd(m, 1), *b = rnd(ch, 2), *db = rnd(ch, 3), *out = malloc(m * 8), *dbo = malloc(ch * 8);
    double *dY = test_upload(y, m * 8), *dB = test_upload(b, ch * 8), *dDB = test_upload(db, ch * 8);
    TEST_OK(hs_conv_bias_add(ctx, HS_F64, n, ch, hw, dB, dY));
    TEST_OK(hs_conv_bias_grad(ctx, HS_F64, n, ch, hw, dY, 1.0, dDB));
    test_download(out, dY, m * 8), test_download(dbo, dDB, ch * 8);
    for (int i = 0; i < n; i++)
        for (int c = 0; c < ch; c++)
            for (int p = 0; p < hw; p++) {
                size_t o = ((size_t)i * ch + c) * hw + p;
                assert_true(out[o] == y[o] + b[c]);
            }
    for (int c = 0; c < ch; c++) {
        double s = db[c];
        for (int i = 0; i < n; i++)
            for (int p = 0; p < hw; p++) s += out[((size_t)i * ch + c) * hw + p];
        TEST_LE(fabs(dbo[c] - s), 1e-13);
    }
    hs_mem_free(ctx, dY), hs_mem_free(ctx, dB), hs_mem_free(ctx, dDB);
    free(y), free(b), free(db), free(out), free(dbo);
}

/* ------------------------------------------------------------------ ConvLSTM gates */

static double sig(double x) { return 1 / (1 + exp(-x)); }

/* L = <a, h> + <bc, c> after one cell step from (z + bias, c_prev), written out. */
static double cell_loss(int n, int ch, int hw, const double *z, const double *b, const double *cp, const double *a,
                        const double *bc)
{
    size_t chw = (size_t)ch * hw;
    double L = 0;
    for (int i = 0; i < n; i++)
        for (size_t r = 0; r < chw; r++) {
            size_t e = i * chw + r, c = r / hw;
            const double *zb = z + i * 4 * chw + r;
            double gi = sig(zb[0] + b[c]), gf = sig(zb[chw] + b[ch + c]), gg = tanh(zb[2 * chw] + b[2 * ch + c]),
                   go = sig(zb[3 * chw] + b[3 * ch + c]);
            double cn = gf * cp[e] + gi * gg, h = go * tanh(cn);
            L += a[e] * h + bc[e] * cn;
        }
    return L;
}

static void test_lstm_fd(void **state)
{
    (void)state;
    hs_ctx *ctx = test_ctx();
    int n = 2, ch = 3, hw = 5;
    size_t m = (size_t)n * ch * hw, mz = 4 * m;
    double *z = rnd(mz, 1), *b = rnd(4 * ch, 2), *cp = rnd(m, 3), *a = rnd(m, 4), *bc = rnd(m, 5);
    for (size_t i = 0; i < mz; i++) z[i] *= 2;
    double *dZ = test_upload(z, mz * 8), *dB = test_upload(b, 4 * ch * 8), *dCP = test_upload(cp, m * 8);
    double *dC = test_upload(NULL, m * 8), *dH = test_upload(NULL, m * 8), *dA = test_upload(a, m * 8);
    double *dDC = test_upload(bc, m * 8);
    /* the pre-activations split in halves (z / 2 twice: exact) through zadd give the same bits */
    double *half = malloc(mz * 8);
    for (size_t i = 0; i < mz; i++) half[i] = 0.5 * z[i];
    double *dZ1 = test_upload(half, mz * 8), *dZ2 = test_upload(half, mz * 8);
    double *dC2 = test_upload(NULL, m * 8), *dH2 = test_upload(NULL, m * 8);
    TEST_OK(hs_conv_lstm_forward(ctx, HS_F64, n, ch, hw, dZ1, dZ2, dB, dCP, dC2, dH2));
    TEST_OK(hs_conv_lstm_forward(ctx, HS_F64, n, ch, hw, dZ, NULL, dB, dCP, dC, dH));
    double *h = malloc(m * 8), *c = malloc(m * 8), *h2 = malloc(m * 8), *g1 = malloc(mz * 8), *g2 = malloc(mz * 8);
    test_download(h, dH, m * 8), test_download(c, dC, m * 8), test_download(h2, dH2, m * 8);
    test_download(g1, dZ, mz * 8), test_download(g2, dZ1, mz * 8);
    assert_memory_equal(h, h2, m * 8);
    assert_memory_equal(g1, g2, mz * 8);
    free(half), free(h2), free(g1), free(g2);
    hs_mem_free(ctx, dZ1), hs_mem_free(ctx, dZ2), hs_mem_free(ctx, dC2), hs_mem_free(ctx, dH2);
    /* forward values against the formulas */
    size_t chw = (size_t)ch * hw;
    double werr = 0;
    for (int i = 0; i < n; i++)
        for (size_t r = 0; r < chw; r++) {
            size_t e = i * chw + r, cc = r / hw;
            const double *zb = z + i * 4 * chw + r;
            double gi = sig(zb[0] + b[cc]), gf = sig(zb[chw] + b[ch + cc]), gg = tanh(zb[2 * chw] + b[2 * ch + cc]),
                   go = sig(zb[3 * chw] + b[3 * ch + cc]);
            double cn = gf * cp[e] + gi * gg;
            werr = fmax(werr, fmax(fabs(c[e] - cn), fabs(h[e] - go * tanh(cn))));
        }
    TEST_LE(werr, 1e-15);
    /* backward: dh = a, dc (in) = bc; out: dz in place of the gates and dc_prev */
    TEST_OK(hs_conv_lstm_backward(ctx, HS_F64, n, ch, hw, dZ, dCP, dC, dA, dDC));
    double *dz = malloc(mz * 8), *dcp = malloc(m * 8);
    test_download(dz, dZ, mz * 8), test_download(dcp, dDC, m * 8);
    double worst = 0, eps = 1e-6;
    for (size_t i = 0; i < mz; i++) {
        double keep = z[i];
        z[i] = keep + eps;
        double lp = cell_loss(n, ch, hw, z, b, cp, a, bc);
        z[i] = keep - eps;
        double lm = cell_loss(n, ch, hw, z, b, cp, a, bc);
        z[i] = keep;
        worst = fmax(worst, fabs((lp - lm) / (2 * eps) - dz[i]));
    }
    for (size_t i = 0; i < m; i++) {
        double keep = cp[i];
        cp[i] = keep + eps;
        double lp = cell_loss(n, ch, hw, z, b, cp, a, bc);
        cp[i] = keep - eps;
        double lm = cell_loss(n, ch, hw, z, b, cp, a, bc);
        cp[i] = keep;
        worst = fmax(worst, fabs((lp - lm) / (2 * eps) - dcp[i]));
    }
    print_message("lstm gates: max |finite difference - gradient| = %.2e\n", worst);
    TEST_LE(worst, 1e-8);
    hs_mem_free(ctx, dZ), hs_mem_free(ctx, dB), hs_mem_free(ctx, dCP), hs_mem_free(ctx, dC), hs_mem_free(ctx, dH),
        hs_mem_free(ctx, dA), hs_mem_free(ctx, dDC);
    free(z), free(b), free(cp), free(a), free(bc), free(h), free(c), free(dz), free(dcp);
}

/* ------------------------------------------------------------------ lower precisions */

/* Values of type t from doubles (through hs_conv_cast on the context) and back. */
static void *to_dev(hs_dtype t, const double *v, size_t n)
{
    double *d64 = test_upload(v, n * 8);
    void *d = test_upload(NULL, n * hs_dtype_size(t));
    TEST_OK(hs_conv_cast(test_ctx(), HS_F64, t, n, d64, 0, d));
    hs_mem_free(test_ctx(), d64);
    return d;
}

static double *from_dev(hs_dtype t, const void *d, size_t n)
{
    double *d64 = test_upload(NULL, n * 8), *h = malloc(n * 8 + 8);
    TEST_OK(hs_conv_cast(test_ctx(), t, HS_F64, n, d, 0, d64));
    test_download(h, d64, n * 8);
    hs_mem_free(test_ctx(), d64);
    return h;
}

/* fp32, bf16 and fp16 convolutions against fp64 on the same (rounded) inputs: errors of the order
 * of the format's unit roundoff. */
static void test_conv_precisions(void **state)
{
    (void)state;
    hs_ctx *ctx = test_ctx();
    shape s = {2, 8, 6, 3, 3, 6, 7};
    const hs_dtype types[] = {HS_F32, HS_BF16, HS_F16};
    const double tol[] = {1e-6, 2e-2, 3e-3};
    for (int k = 0; k < 3; k++) {
        hs_dtype t = types[k];
        double *x = rnd(nx(&s), 1), *w = rnd(nw(&s), 2), *dy = rnd(ny(&s), 3);
        void *X = to_dev(t, x, nx(&s)), *W = to_dev(t, w, nw(&s)), *DY = to_dev(t, dy, ny(&s));
        /* the reference sees the rounded inputs */
        free(x), free(w), free(dy);
        x = from_dev(t, X, nx(&s)), w = from_dev(t, W, nw(&s)), dy = from_dev(t, DY, ny(&s));
        double *y = calloc(ny(&s), 8), *dx = calloc(nx(&s), 8), *dw = calloc(nw(&s), 8);
        passes(&s, x, w, dy, 0, y, dx, dw);
        hs_conv *c;
        TEST_OK(hs_conv_create(ctx, t, s.cin, s.cout, s.kh, s.kw, s.h, s.w, &c));
        void *Y = test_upload(NULL, ny(&s) * 8), *DX = test_upload(NULL, nx(&s) * 8), *DW = test_upload(NULL, nw(&s) * 8);
        TEST_OK(hs_conv_forward(c, s.n, X, W, 0, Y));
        TEST_OK(hs_conv_backward_data(c, s.n, DY, W, 0, DX));
        TEST_OK(hs_conv_backward_filter(c, s.n, X, DY, 0, DW));
        double *yl = from_dev(t, Y, ny(&s)), *dxl = from_dev(t, DX, nx(&s)), *dwl = from_dev(t, DW, nw(&s));
        double e1 = max_rel(yl, y, ny(&s)), e2 = max_rel(dxl, dx, nx(&s)), e3 = max_rel(dwl, dw, nw(&s));
        print_message("conv %s: max relative error forward %.2e, backward data %.2e, filter %.2e\n", hs_dtype_name(t), e1,
                      e2, e3);
        TEST_LE(fmax(e1, fmax(e2, e3)), tol[k]);
        hs_conv_destroy(c);
        hs_mem_free(ctx, X), hs_mem_free(ctx, W), hs_mem_free(ctx, DY), hs_mem_free(ctx, Y), hs_mem_free(ctx, DX),
            hs_mem_free(ctx, DW);
        free(x), free(w), free(dy), free(y), free(dx), free(dw), free(yl), free(dxl), free(dwl);
    }
}

/* The cast accumulates in double and rounds once. */
static void test_cast(void **state)
{
    (void)state;
    double v[4] = {1.0, 1.0 / 3.0, -65504.0, 1e-9}, acc[4] = {2.0, 0.5, 1.0, 1.0};
    void *d = to_dev(HS_F32, acc, 4), *s = test_upload(v, 32);
    TEST_OK(hs_conv_cast(test_ctx(), HS_F64, HS_F32, 4, s, 1, d));
    double *r = from_dev(HS_F32, d, 4);
    for (int i = 0; i < 4; i++) assert_true(r[i] == (double)(float)(v[i] + (double)(float)acc[i]));
    free(r);
    hs_mem_free(test_ctx(), d), hs_mem_free(test_ctx(), s);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_half),  cmocka_unit_test(test_conv_f64), cmocka_unit_test(test_conv_fd),
    cmocka_unit_test(test_bias),  cmocka_unit_test(test_lstm_fd),  cmocka_unit_test(test_conv_precisions),
    cmocka_unit_test(test_cast),
};

TEST_MAIN("conv", tests)
