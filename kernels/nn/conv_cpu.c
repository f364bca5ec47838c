/* Convolution family, OpenMP backend: im2col + GEMM convolutions, bias, casts and the fused ConvLSTM gates. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/blas/blas_impl.h"
#include "kernels/error.h"
#include "kernels/half.h"
#include "kernels/nn/conv_impl.h"
#include "kernels/nn/conv_point.h"

/* ------------------------------------------------------------------ element access */

/* Runs of elements between the storage type t and the accumulation type (double for HS_F64,
 * float otherwise), with the conversion chosen once per run. */
static void load_run(hs_dtype t, const void *src, size_t off, size_t n, void *dst)
{
    switch (t) {
    case HS_F64: memcpy(dst, (const double *)src + off, n * sizeof(double)); break;
    case HS_F32: memcpy(dst, (const float *)src + off, n * sizeof(float)); break;
    case HS_BF16: {
        const uint16_t *s = (const uint16_t *)src + off;
        float *d = dst;
        for (size_t i = 0; i < n; i++) d[i] = hs_bf16_to_f32(s[i]);
        break;
    }
    default: {
        const uint16_t *s = (const uint16_t *)src + off;
        float *d = dst;
        for (size_t i = 0; i < n; i++) d[i] = hs_f16_to_f32(s[i]);
        break;
    }
    }
}

/* dst[off + i] = acc[i] + beta dst[off + i], rounded to t once. */
static void store_run(hs_dtype t, const void *acc, size_t n, double beta, void *dst, size_t off)
{
    if (t == HS_F64) {
        const double *a = acc;
        double *d = (double *)dst + off;
        if (beta != 0.0)
            for (size_t i = 0; i < n; i++) d[i] = a[i] + d[i];
        else
            memcpy(d, a, n * sizeof *d);
        return;
    }
    const float *a = acc;
    if (t == HS_F32) {
        float *d = (float *)dst + off;
        if (beta != 0.0)
            for (size_t i = 0; i < n; i++) d[i] = a[i] + d[i];
        else
            memcpy(d, a, n * sizeof *d);
        return;
    }
    uint16_t *d = (uint16_t *)dst + off;
    if (t == HS_BF16) {
        for (size_t i = 0; i < n; i++) d[i] = hs_f32_to_bf16(beta != 0.0 ? a[i] + hs_bf16_to_f32(d[i]) : a[i]);
    } else {
        for (size_t i = 0; i < n; i++) d[i] = hs_f32_to_f16(beta != 0.0 ? a[i] + hs_f16_to_f32(d[i]) : a[i]);
    }
}

/* One element as double, and one stored from double (casts and small loops). */
static double load1(hs_dtype t, const void *p, size_t i)
{
    switch (t) {
    case HS_F64: return ((const double *)p)[i];
    case HS_F32: return ((const float *)p)[i];
    case HS_BF16: return hs_bf16_to_f32(((const uint16_t *)p)[i]);
    default: return hs_f16_to_f32(((const uint16_t *)p)[i]);
    }
}

static void store1(hs_dtype t, void *p, size_t i, double v)
{
    switch (t) {
    case HS_F64: ((double *)p)[i] = v; break;
    case HS_F32: ((float *)p)[i] = (float)v; break;
    case HS_BF16: ((uint16_t *)p)[i] = hs_f32_to_bf16((float)v); break;
    default: ((uint16_t *)p)[i] = hs_f32_to_f16((float)v); break;
    }
}

static hs_dtype acc_of(hs_dtype t) { return t == HS_F64 ? HS_F64 : HS_F32; }
static size_t acc_size(hs_dtype t) { return t == HS_F64 ? sizeof(double) : sizeof(float); }

/* ------------------------------------------------------------------ convolution */

/* Work buffers of one convolution, in the accumulation type: the im2col matrix (cin kh kw rows of
 * h w), the weights (16-bit data: converted), outputs or output gradients of one image, and one
 * image of input gradients. */
typedef struct {
    void *col, *wbuf, *ybuf, *xbuf;
} conv_cpu;

int hs_conv_create_cpu(struct hs_conv *c)
{
    conv_cpu *b = calloc(1, sizeof *b);
    if (!b) return HS_FAIL(HS_ERR_RUNTIME, "hs_conv_create: out of host memory");
    c->impl = b;
    size_t es = acc_size(c->t), hw = (size_t)c->h * c->w, ckk = (size_t)c->cin * c->kh * c->kw;
    b->col = malloc(ckk * hw * es);
    b->wbuf = malloc(ckk * (size_t)c->cout * es);
    b->ybuf = malloc(hw * (size_t)c->cout * es);
    b->xbuf = malloc(hw * (size_t)c->cin * es);
    if (!b->col || !b->wbuf || !b->ybuf || !b->xbuf)
        return HS_FAIL(HS_ERR_RUNTIME, "hs_conv_create: out of host memory for %zu bytes of im2col buffer", ckk * hw * es);
    return HS_OK;
}

void hs_conv_destroy_cpu(struct hs_conv *c)
{
    conv_cpu *b = c->impl;
    if (!b) return;
    free(b->col), free(b->wbuf), free(b->ybuf), free(b->xbuf);
    free(b);
    c->impl = NULL;
}

/* The valid output columns [*x0, *x1) of kernel column kx: those whose input column lies inside. */
static void valid_cols(int w, int kx, int pw, int *x0, int *x1)
{
    int s = kx - pw; /* input column = x + s */
    *x0 = s < 0 ? -s : 0;
    *x1 = s > 0 ? w - s : w;
    if (*x1 < *x0) *x1 = *x0;
}

/* col[r, p] (r = (ci kh + ky) kw + kx, p = y w + x) = x[ci, y + ky - ph, x + kx - pw], zero outside. */
static void im2col(const struct hs_conv *c, const void *x, void *col)
{
    int H = c->h, W = c->w, ph = c->kh / 2, pw = c->kw / 2, rows = c->cin * c->kh * c->kw;
    size_t hw = (size_t)H * W, es = acc_size(c->t);
#pragma omp parallel for schedule(static) if (rows * hw > 65536)
    for (int r = 0; r < rows; r++) {
        int kx = r % c->kw, ky = (r / c->kw) % c->kh, ci = r / (c->kw * c->kh);
        char *dst = (char *)col + (size_t)r * hw * es;
        int x0, x1;
        valid_cols(W, kx, pw, &x0, &x1);
        for (int y = 0; y < H; y++) {
            int yy = y + ky - ph;
            char *row = dst + (size_t)y * W * es;
            if (yy < 0 || yy >= H || x1 <= x0) {
                memset(row, 0, (size_t)W * es);
                continue;
            }
            memset(row, 0, (size_t)x0 * es);
            load_run(c->t, x, ((size_t)ci * H + yy) * W + (x0 + kx - pw), (size_t)(x1 - x0), row + (size_t)x0 * es);
            memset(row + (size_t)x1 * es, 0, (size_t)(W - x1) * es);
        }
    }
}

/* acc[ci, yy, xx] = sum over (ky, kx) of dcol[r, yy - ky + ph, xx - kx + pw] (the adjoint of im2col),
 * in a fixed order: kernel offsets in turn, each added to the whole image. */
#define COL2IM(R)                                                                                          \
    static void col2im_##R(const struct hs_conv *c, const R *dcol, R *acc)                                 \
    {                                                                                                      \
        int H = c->h, W = c->w, ph = c->kh / 2, pw = c->kw / 2;                                            \
        size_t hw = (size_t)H * W;                                                                         \
        _Pragma("omp parallel for schedule(static) if (c->cin * hw > 16384)") for (int ci = 0; ci < c->cin; ci++) \
        {                                                                                                  \
            R *a = acc + (size_t)ci * hw;                                                                  \
            for (size_t p = 0; p < hw; p++) a[p] = 0;                                                      \
            for (int ky = 0; ky < c->kh; ky++)                                                             \
                for (int kx = 0; kx < c->kw; kx++) {                                                       \
                    const R *d = dcol + ((size_t)(ci * c->kh + ky) * c->kw + kx) * hw;                     \
                    int x0, x1;                                                                            \
                    valid_cols(W, kx, pw, &x0, &x1);                                                       \
                    for (int y = 0; y < H; y++) {                                                          \
                        int yy = y + ky - ph;                                                              \
                        if (yy < 0 || yy >= H) continue;                                                   \
                        R *arow = a + (size_t)yy * W + (kx - pw);                                          \
                        const R *drow = d + (size_t)y * W;                                                 \
                        for (int xx = x0; xx < x1; xx++) arow[xx] += drow[xx];                             \
                    }                                                                                      \
                }                                                                                          \
        }                                                                                                  \
    }
COL2IM(double)
COL2IM(float)

static int gemm(hs_dtype at, int ta, int tb, int m, int n, int k, const void *A, int lda, const void *B, int ldb,
                double beta, void *C, int ldc)
{
    return hs_blas_gemm_cpu(at, ta, tb, m, n, k, 1.0, A, lda, B, ldb, beta, C, ldc);
}

/* The weights in the accumulation type: the caller's array itself, or converted into wbuf. */
static const void *weights_acc(const struct hs_conv *c, const void *w)
{
    if (c->t == HS_F64 || c->t == HS_F32) return w;
    conv_cpu *b = c->impl;
    load_run(c->t, w, 0, (size_t)c->cout * c->cin * c->kh * c->kw, b->wbuf);
    return b->wbuf;
}

int hs_conv_forward_cpu(struct hs_conv *c, int n, const void *x, const void *w, double beta, void *y)
{
    conv_cpu *b = c->impl;
    hs_dtype at = acc_of(c->t);
    int hw = c->h * c->w, ckk = c->cin * c->kh * c->kw, direct = c->t == HS_F64 || c->t == HS_F32;
    size_t es = hs_dtype_size(c->t), xs = (size_t)c->cin * hw, ys = (size_t)c->cout * hw;
    const void *wa = weights_acc(c, w);
    for (int i = 0; i < n; i++) {
        im2col(c, (const char *)x + i * xs * es, b->col);
        void *yi = (char *)y + i * ys * es;
        /* y_i (hw x cout, column-major) = col (hw x ckk) w (ckk x cout) */
        if (direct) {
            HS_CHECK(gemm(at, 0, 0, hw, c->cout, ckk, b->col, hw, wa, ckk, beta, yi, hw));
        } else {
            HS_CHECK(gemm(at, 0, 0, hw, c->cout, ckk, b->col, hw, wa, ckk, 0.0, b->ybuf, hw));
            store_run(c->t, b->ybuf, ys, beta, yi, 0);
        }
    }
    return HS_OK;
}

int hs_conv_backward_data_cpu(struct hs_conv *c, int n, const void *dy, const void *w, double beta, void *dx)
{
    conv_cpu *b = c->impl;
    hs_dtype at = acc_of(c->t);
    int hw = c->h * c->w, ckk = c->cin * c->kh * c->kw;
    size_t es = hs_dtype_size(c->t), xs = (size_t)c->cin * hw, ys = (size_t)c->cout * hw;
    const void *wa = weights_acc(c, w);
    for (int i = 0; i < n; i++) {
        const void *dyi = (const char *)dy + i * ys * es;
        if (c->t != at) {
            load_run(c->t, dyi, 0, ys, b->ybuf);
            dyi = b->ybuf;
        }
        /* dcol (hw x ckk) = dy_i (hw x cout) w^T (cout x ckk) */
        HS_CHECK(gemm(at, 0, 1, hw, ckk, c->cout, dyi, hw, wa, ckk, 0.0, b->col, hw));
        if (at == HS_F64) col2im_double(c, b->col, b->xbuf);
        else col2im_float(c, b->col, b->xbuf);
        store_run(c->t, b->xbuf, xs, beta, dx, i * xs);
    }
    return HS_OK;
}

int hs_conv_backward_filter_cpu(struct hs_conv *c, int n, const void *x, const void *dy, double beta, void *dw)
{
    conv_cpu *b = c->impl;
    hs_dtype at = acc_of(c->t);
    int hw = c->h * c->w, ckk = c->cin * c->kh * c->kw, direct = c->t == HS_F64 || c->t == HS_F32;
    size_t es = hs_dtype_size(c->t), xs = (size_t)c->cin * hw, ys = (size_t)c->cout * hw, nw = (size_t)ckk * c->cout;
    void *acc = direct ? dw : b->wbuf;
    double first = direct ? beta : 0.0;
    if (n == 0) { /* beta == 0 (conv.c returns early for beta == 1): the sum of nothing */
        memset(acc, 0, nw * acc_size(c->t));
    }
    for (int i = 0; i < n; i++) {
        im2col(c, (const char *)x + i * xs * es, b->col);
        const void *dyi = (const char *)dy + i * ys * es;
        if (!direct) {
            load_run(c->t, dyi, 0, ys, b->ybuf);
            dyi = b->ybuf;
        }
        /* dw (ckk x cout) += col^T (ckk x hw) dy_i (hw x cout) */
        HS_CHECK(gemm(at, 1, 0, ckk, c->cout, hw, b->col, hw, dyi, hw, i == 0 ? first : 1.0, acc, ckk));
    }
    if (!direct) store_run(c->t, b->wbuf, nw, beta, dw, 0);
    return HS_OK;
}

/* ------------------------------------------------------------------ bias and casts */

int hs_conv_bias_add_cpu(hs_dtype t, int n, int ch, int hw, const void *b, void *y)
{
    size_t rows = (size_t)n * ch;
#pragma omp parallel for schedule(static) if (rows * (size_t)hw > 65536)
    for (size_t r = 0; r < rows; r++) {
        double bc = load1(t, b, r % (size_t)ch);
        size_t o = r * (size_t)hw;
        if (t == HS_F64) {
            double *d = (double *)y + o;
            for (int p = 0; p < hw; p++) d[p] += bc;
        } else if (t == HS_F32) {
            float *d = (float *)y + o, bf = (float)bc;
            for (int p = 0; p < hw; p++) d[p] += bf;
        } else {
            for (int p = 0; p < hw; p++) store1(t, y, o + p, (float)load1(t, y, o + p) + (float)bc);
        }
    }
    return HS_OK;
}

int hs_conv_bias_grad_cpu(hs_dtype t, int n, int ch, int hw, const void *dy, double beta, void *db)
{
    hs_dtype at = acc_of(t);
#pragma omp parallel for schedule(static) if ((size_t)n * ch * hw > 65536)
    for (int c = 0; c < ch; c++) {
        double s = 0;
        for (int i = 0; i < n; i++) {
            size_t o = ((size_t)i * ch + c) * hw;
            for (int p = 0; p < hw; p++) s += load1(t, dy, o + p);
        }
        store1(at, db, (size_t)c, beta != 0.0 ? s + load1(at, db, (size_t)c) : s);
    }
    return HS_OK;
}

int hs_conv_cast_cpu(hs_dtype st, hs_dtype dt, size_t n, const void *src, int accumulate, void *dst)
{
#pragma omp parallel for schedule(static) if (n > 65536)
    for (size_t i = 0; i < n; i++) {
        double v = load1(st, src, i);
        store1(dt, dst, i, accumulate ? v + load1(dt, dst, i) : v);
    }
    return HS_OK;
}

/* ------------------------------------------------------------------ ConvLSTM gates */

/* T: storage, R: compute (= accumulation) type, LD/ST: conversions, SFX: the point functions'. */
#define LSTM_KERNELS(NAME, T, R, LD, ST, SFX)                                                                    \
    static void lstm_fwd_##NAME(int n, int ch, int hw, T *z, const T *za, const T *b, const R *cp, R *c, T *h)   \
    {                                                                                                            \
        size_t chw = (size_t)ch * hw, total = (size_t)n * chw;                                                   \
        _Pragma("omp parallel for schedule(static) if (total > 32768)") for (size_t e = 0; e < total; e++)      \
        {                                                                                                        \
            size_t img = e / chw, rem = e % chw, cc = rem / (size_t)hw;                                          \
            T *zb = z + img * 4 * chw + rem;                                                                     \
            const T *ab = za ? za + img * 4 * chw + rem : NULL;                                                  \
            R zq[4];                                                                                             \
            for (int q = 0; q < 4; q++)                                                                          \
                zq[q] = ab ? (R)((R)(LD(zb[q * chw]) + LD(ab[q * chw])) + LD(b[q * ch + cc]))                    \
                           : (R)(LD(zb[q * chw]) + LD(b[q * ch + cc]));                                         \
            R i, f, g, o, cn, hn;                                                                                \
            hs_conv_lstm_fwd_##SFX(zq[0], zq[1], zq[2], zq[3], cp ? cp[e] : (R)0, &i, &f, &g, &o, &cn, &hn);     \
            zb[0] = ST(i), zb[chw] = ST(f), zb[2 * chw] = ST(g), zb[3 * chw] = ST(o);                             \
            c[e] = cn;                                                                                           \
            h[e] = ST(hn);                                                                                       \
        }                                                                                                        \
    }                                                                                                            \
    static void lstm_bwd_##NAME(int n, int ch, int hw, T *gz, const R *cp, const R *c, const T *dh, R *dc)       \
    {                                                                                                            \
        size_t chw = (size_t)ch * hw, total = (size_t)n * chw;                                                   \
        _Pragma("omp parallel for schedule(static) if (total > 32768)") for (size_t e = 0; e < total; e++)      \
        {                                                                                                        \
            size_t img = e / chw, rem = e % chw;                                                                 \
            T *gb = gz + img * 4 * chw + rem;                                                                    \
            R d = dc[e], di, df, dg, dout;                                                                       \
            hs_conv_lstm_bwd_##SFX(LD(gb[0]), LD(gb[chw]), LD(gb[2 * chw]), LD(gb[3 * chw]), cp ? cp[e] : (R)0,  \
                                   c[e], dh ? (R)LD(dh[e]) : (R)0, &d, &di, &df, &dg, &dout);                    \
            gb[0] = ST(di), gb[chw] = ST(df), gb[2 * chw] = ST(dg), gb[3 * chw] = ST(dout);                       \
            dc[e] = d;                                                                                           \
        }                                                                                                        \
    }

#define ID(x) (x)
#define TO_F(x) ((float)(x))
LSTM_KERNELS(f64, double, double, ID, ID, d)
LSTM_KERNELS(f32, float, float, ID, TO_F, f)
LSTM_KERNELS(bf16, uint16_t, float, hs_bf16_to_f32, hs_f32_to_bf16, f)
LSTM_KERNELS(f16, uint16_t, float, hs_f16_to_f32, hs_f32_to_f16, f)

int hs_conv_lstm_forward_cpu(hs_dtype t, int n, int ch, int hw, void *z, const void *zadd, const void *b,
                             const void *c_prev, void *c, void *h)
{
    switch (t) {
    case HS_F64: lstm_fwd_f64(n, ch, hw, z, zadd, b, c_prev, c, h); break;
    case HS_F32: lstm_fwd_f32(n, ch, hw, z, zadd, b, c_prev, c, h); break;
    case HS_BF16: lstm_fwd_bf16(n, ch, hw, z, zadd, b, c_prev, c, h); break;
    default: lstm_fwd_f16(n, ch, hw, z, zadd, b, c_prev, c, h); break;
    }
    return HS_OK;
}

int hs_conv_lstm_backward_cpu(hs_dtype t, int n, int ch, int hw, void *gates, const void *c_prev, const void *c,
                              const void *dh, void *dc)
{
    switch (t) {
    case HS_F64: lstm_bwd_f64(n, ch, hw, gates, c_prev, c, dh, dc); break;
    case HS_F32: lstm_bwd_f32(n, ch, hw, gates, c_prev, c, dh, dc); break;
    case HS_BF16: lstm_bwd_bf16(n, ch, hw, gates, c_prev, c, dh, dc); break;
    default: lstm_bwd_f16(n, ch, hw, gates, c_prev, c, dh, dc); break;
    }
    return HS_OK;
}
