/* The ConvLSTM encoder-forecaster: parameters, initialisation, forward pass and backpropagation through time. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/memory.h"
#include "kernels/nn/conv.h"
#include "kernels/rng/rng.h"
#include "ml_surrogate/surrogate.h"
#include "ml_surrogate/surrogate_kernels.h"

#define MAX_BLOCKS (4 * HS_SURR_MAX_LAYERS * 2 + 8)
#define ALIGN 64 /* parameter blocks start on multiples of 64 elements (cuDNN's aligned paths) */

/* One ConvLSTM layer of the encoder or the forecaster, with its sequences (frames first, each
 * frame n x ch x ny x nx for the batch's n):
 *   encoder:    H, Cs: k frames (h_1 .. h_k); G: k frames of 4 ch
 *   forecaster: H, Cs: m + 1 frames, frame 0 a copy of the encoder's final state; G: m frames
 * G holds the pre-activations, then the gates, then (backward) their gradients; dH the gradient of H. */
typedef struct {
    int ch, k;
    hs_conv *cx, *chh;     /* input and hidden convolutions (cx NULL: no input) */
    size_t wx, wh, b;      /* parameter offsets */
    void *H, *G, *dH;      /* compute type */
    void *Cs, *dc;         /* accumulation type; dc one frame */
    size_t lo;             /* where its parameters (and gradient) start: its first block */
} layer;

struct hs_surr_model {
    hs_ctx *ctx;
    hs_surr_arch a;
    int cap, hw, n;
    hs_dtype t, at;
    size_t es, aes, nparams;
    double *params, *grad;     /* fp64 */
    void *params_c, *grad_c;   /* compute copy; gradient in the accumulation type (alias in fp64) */
    void *wscratch;            /* 16-bit: a filter gradient before it is widened */
    hs_conv *cin;              /* input head */
    size_t w_in, b_in;
    void *E, *dE;
    void *Zh;                  /* one frame of the widest layer's gates: the hidden convolution's part */
    layer enc[HS_SURR_MAX_LAYERS], fc[HS_SURR_MAX_LAYERS];
    hs_conv *cout[HS_SURR_MAX_LAYERS];
    size_t w_out[HS_SURR_MAX_LAYERS], b_out;
    void *pred, *dpred;
    const void *x;             /* the last forward pass's input */
    int nblocks;
    const char *bname[MAX_BLOCKS];
    char bname_buf[MAX_BLOCKS][32];
    size_t boff[MAX_BLOCKS], bcount[MAX_BLOCKS], bfan[MAX_BLOCKS];
    int bkind[MAX_BLOCKS];     /* 0 weights, 1 bias, 2 gate bias (forget gate = 1) */
    hs_surr_grad_ready ready;  /* told of each layer's final gradient (NULL: nobody) */
    void *ready_user;
};

const hs_surr_arch *hs_surr_model_arch(const hs_surr_model *m) { return &m->a; }
int hs_surr_model_cap(const hs_surr_model *m) { return m->cap; }
size_t hs_surr_model_nparams(const hs_surr_model *m) { return m->nparams; }
double *hs_surr_model_params(hs_surr_model *m) { return m->params; }
double *hs_surr_model_grad(hs_surr_model *m) { return m->grad; }
void *hs_surr_model_pred(hs_surr_model *m) { return m->pred; }
void *hs_surr_model_dpred(hs_surr_model *m) { return m->dpred; }
int hs_surr_model_blocks(const hs_surr_model *m) { return m->nblocks; }

void hs_surr_model_block(const hs_surr_model *m, int b, const char **name, size_t *offset, size_t *count)
{
    *name = m->bname[b], *offset = m->boff[b], *count = m->bcount[b];
}

void hs_surr_model_set_grad_ready(hs_surr_model *m, hs_surr_grad_ready fn, void *user)
{
    m->ready = fn, m->ready_user = user;
}

/* ------------------------------------------------------------------ layout */

static size_t add_block(hs_surr_model *m, const char *name, int l, size_t count, size_t fan_in, int kind)
{
    int b = m->nblocks++;
    snprintf(m->bname_buf[b], sizeof m->bname_buf[b], name, l);
    m->bname[b] = m->bname_buf[b];
    m->boff[b] = m->nparams, m->bcount[b] = count, m->bfan[b] = fan_in, m->bkind[b] = kind;
    m->nparams += (count + ALIGN - 1) / ALIGN * ALIGN;
    return m->boff[b];
}

static void layout(hs_surr_model *m)
{
    const hs_surr_arch *a = &m->a;
    int V = a->nvars, E = a->head_channels, L = a->nlayers;
    size_t hk2 = (size_t)a->head_kernel * a->head_kernel, ok2 = (size_t)a->out_kernel * a->out_kernel;
    if (E > 0) {
        m->w_in = add_block(m, "input_head.weight", 0, (size_t)E * V * hk2, (size_t)V * hk2, 0);
        m->b_in = add_block(m, "input_head.bias", 0, (size_t)E, 0, 1);
    }
    for (int pass = 0; pass < 2; pass++) /* encoder, then forecaster */
        for (int l = 0; l < L; l++) {
            layer *y = pass ? &m->fc[l] : &m->enc[l];
            int C = a->hidden[l], K = a->kernel[l], cin = l > 0 ? a->hidden[l - 1] : pass ? 0 : (E > 0 ? E : V);
            size_t k2 = (size_t)K * K, fan = (size_t)(cin + C) * k2; /* one convolution over [x, h] */
            y->ch = C, y->k = K;
            y->lo = m->nparams;
            if (cin > 0) y->wx = add_block(m, pass ? "forecaster.%d.weight_x" : "encoder.%d.weight_x", l, (size_t)4 * C * cin * k2, fan, 0);
            y->wh = add_block(m, pass ? "forecaster.%d.weight_h" : "encoder.%d.weight_h", l, (size_t)4 * C * C * k2, fan, 0);
            y->b = add_block(m, pass ? "forecaster.%d.bias" : "encoder.%d.bias", l, (size_t)4 * C, 0, 2);
        }
    size_t fan_out = 0;
    for (int l = 0; l < L; l++) fan_out += (size_t)a->hidden[l] * ok2;
    for (int l = 0; l < L; l++) m->w_out[l] = add_block(m, "output_head.%d.weight", l, (size_t)V * a->hidden[l] * ok2, fan_out, 0);
    m->b_out = add_block(m, "output_head.bias", 0, (size_t)V, 0, 1);
}

size_t hs_surr_arch_nparams(const hs_surr_arch *a)
{
    hs_surr_model *m = calloc(1, sizeof *m);
    if (!m) return 0;
    m->a = *a;
    layout(m);
    size_t n = m->nparams;
    free(m);
    return n;
}

/* ------------------------------------------------------------------ creation */

static int alloc(hs_surr_model *m, size_t bytes, void **p)
{
    HS_CHECK(hs_mem_alloc(m->ctx, bytes ? bytes : 8, p));
    return HS_OK;
}

static int create_layers(hs_surr_model *m)
{
    const hs_surr_arch *a = &m->a;
    hs_ctx *ctx = m->ctx;
    int V = a->nvars, E = a->head_channels, k = a->k_in, mo = a->k_out;
    size_t img = (size_t)m->cap * m->hw;
    if (E > 0) {
        HS_CHECK(hs_conv_create(ctx, m->t, V, E, a->head_kernel, a->head_kernel, a->ny, a->nx, &m->cin));
        HS_CHECK(alloc(m, (size_t)k * img * E * m->es, &m->E));
        HS_CHECK(alloc(m, (size_t)k * img * E * m->es, &m->dE));
    }
    for (int pass = 0; pass < 2; pass++)
        for (int l = 0; l < a->nlayers; l++) {
            layer *y = pass ? &m->fc[l] : &m->enc[l];
            int C = y->ch, K = y->k, cin = l > 0 ? a->hidden[l - 1] : pass ? 0 : (E > 0 ? E : V);
            size_t frames = pass ? (size_t)mo + 1 : (size_t)k, gframes = pass ? (size_t)mo : (size_t)k;
            if (cin > 0) HS_CHECK(hs_conv_create(ctx, m->t, cin, 4 * C, K, K, a->ny, a->nx, &y->cx));
            HS_CHECK(hs_conv_create(ctx, m->t, C, 4 * C, K, K, a->ny, a->nx, &y->chh));
            HS_CHECK(alloc(m, frames * img * C * m->es, &y->H));
            HS_CHECK(alloc(m, frames * img * C * m->es, &y->dH));
            HS_CHECK(alloc(m, frames * img * C * m->aes, &y->Cs));
            HS_CHECK(alloc(m, gframes * img * 4 * C * m->es, &y->G));
            HS_CHECK(alloc(m, img * C * m->aes, &y->dc));
        }
    int cmax = 0;
    for (int l = 0; l < a->nlayers; l++) {
        HS_CHECK(hs_conv_create(ctx, m->t, a->hidden[l], V, a->out_kernel, a->out_kernel, a->ny, a->nx, &m->cout[l]));
        cmax = a->hidden[l] > cmax ? a->hidden[l] : cmax;
    }
    HS_CHECK(alloc(m, img * 4 * (size_t)cmax * m->es, &m->Zh));
    HS_CHECK(alloc(m, (size_t)mo * img * V * m->es, &m->pred));
    HS_CHECK(alloc(m, (size_t)mo * img * V * m->es, &m->dpred));
    return HS_OK;
}

int hs_surr_model_create(hs_ctx *ctx, const hs_surr_arch *a, int cap, hs_surr_model **out)
{
    *out = NULL;
    if (a->nlayers < 1 || a->nlayers > HS_SURR_MAX_LAYERS || a->nvars < 1 || a->k_in < 1 || a->k_out < 1 || cap < 1)
        return HS_FAIL(HS_ERR_RUNTIME, "hs_surr_model_create: bad architecture");
    hs_surr_model *m = calloc(1, sizeof *m);
    if (!m) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
    m->ctx = ctx, m->a = *a, m->cap = cap, m->hw = a->ny * a->nx;
    m->t = a->dtype, m->at = hs_conv_acc_type(a->dtype);
    m->es = hs_dtype_size(m->t), m->aes = hs_dtype_size(m->at);
    layout(m);
    size_t wmax = 0;
    for (int b = 0; b < m->nblocks; b++)
        if (m->bcount[b] > wmax) wmax = m->bcount[b];
    int rc = alloc(m, m->nparams * sizeof(double), (void **)&m->params);
    if (rc == HS_OK) rc = alloc(m, m->nparams * sizeof(double), (void **)&m->grad);
    if (rc == HS_OK) rc = hs_mem_zero(ctx, m->params, m->nparams * sizeof(double));
    if (rc == HS_OK) rc = hs_mem_zero(ctx, m->grad, m->nparams * sizeof(double));
    if (rc == HS_OK && m->t != HS_F64) rc = alloc(m, m->nparams * m->es, &m->params_c);
    if (rc == HS_OK && m->t != HS_F64) rc = alloc(m, m->nparams * m->aes, &m->grad_c);
    if (m->t == HS_F64) m->params_c = m->params, m->grad_c = m->grad;
    if (rc == HS_OK && m->es != m->aes) rc = alloc(m, wmax * m->es, &m->wscratch);
    if (rc == HS_OK) rc = create_layers(m);
    if (rc == HS_OK) rc = hs_surr_model_sync_params(m);
    if (rc != HS_OK) {
        hs_surr_model_destroy(m);
        return hs_error_trace(rc, __FILE__, __LINE__, "hs_surr_model_create");
    }
    *out = m;
    return HS_OK;
}

void hs_surr_model_destroy(hs_surr_model *m)
{
    if (!m) return;
    hs_ctx *ctx = m->ctx;
    for (int pass = 0; pass < 2; pass++)
        for (int l = 0; l < m->a.nlayers; l++) {
            layer *y = pass ? &m->fc[l] : &m->enc[l];
            hs_conv_destroy(y->cx), hs_conv_destroy(y->chh);
            hs_mem_free(ctx, y->H), hs_mem_free(ctx, y->dH), hs_mem_free(ctx, y->Cs), hs_mem_free(ctx, y->G);
            hs_mem_free(ctx, y->dc);
        }
    for (int l = 0; l < m->a.nlayers; l++) hs_conv_destroy(m->cout[l]);
    hs_conv_destroy(m->cin);
    hs_mem_free(ctx, m->E), hs_mem_free(ctx, m->dE), hs_mem_free(ctx, m->pred), hs_mem_free(ctx, m->dpred);
    hs_mem_free(ctx, m->Zh);
    if (m->params_c != m->params) hs_mem_free(ctx, m->params_c);
    if (m->grad_c != m->grad) hs_mem_free(ctx, m->grad_c);
    hs_mem_free(ctx, m->params), hs_mem_free(ctx, m->grad), hs_mem_free(ctx, m->wscratch);
    free(m);
}

int hs_surr_model_init(hs_surr_model *m, uint64_t seed)
{
    double *h = calloc(m->nparams + 1, sizeof *h);
    if (!h) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
    for (int b = 0; b < m->nblocks; b++) {
        double *p = h + m->boff[b];
        if (m->bkind[b] == 0) {
            hs_rng r;
            hs_rng_seed(&r, seed, hs_rng_stream(0x5355u /* "SU" */, (uint32_t)b));
            double bound = 1.0 / sqrt((double)m->bfan[b]);
            for (size_t i = 0; i < m->bcount[b]; i++) p[i] = bound * (2.0 * hs_rng_uniform(&r) - 1.0);
        } else if (m->bkind[b] == 2) { /* gates i, f, g, o: the forget gate starts open */
            size_t C = m->bcount[b] / 4;
            for (size_t i = C; i < 2 * C; i++) p[i] = 1.0;
        }
    }
    int rc = hs_mem_copy(m->ctx, m->params, h, m->nparams * sizeof *h, HS_COPY_H2D);
    free(h);
    HS_CHECK(rc);
    return hs_surr_model_sync_params(m);
}

int hs_surr_model_sync_params(hs_surr_model *m)
{
    if (m->t == HS_F64) return HS_OK;
    return hs_conv_cast(m->ctx, HS_F64, m->t, m->nparams, m->params, 0, m->params_c);
}

/* ------------------------------------------------------------------ forward */

/* Frame f of a sequence of `ch` channels for the current batch size, element size es. */
static void *frame(const hs_surr_model *m, const void *base, size_t f, int ch, size_t es)
{
    return (char *)base + f * (size_t)m->n * ch * m->hw * es;
}

static const void *P(const hs_surr_model *m, size_t off) { return (const char *)m->params_c + off * m->es; }

static int encoder_layer(hs_surr_model *m, int l, const void *in)
{
    layer *y = &m->enc[l];
    int n = m->n, C = y->ch, k = m->a.k_in;
    HS_CHECK(hs_conv_forward(y->cx, k * n, in, P(m, y->wx), 0.0, y->G)); /* every step's input at once */
    for (int t = 0; t < k; t++) {
        void *z = frame(m, y->G, t, 4 * C, m->es);
        /* the hidden convolution apart (Zh), added to the input's part in the cell */
        if (t > 0) HS_CHECK(hs_conv_forward(y->chh, n, frame(m, y->H, t - 1, C, m->es), P(m, y->wh), 0.0, m->Zh));
        HS_CHECK(hs_conv_lstm_forward(m->ctx, m->t, n, C, m->hw, z, t > 0 ? m->Zh : NULL, P(m, y->b),
                                      t > 0 ? frame(m, y->Cs, t - 1, C, m->aes) : NULL,
                                      frame(m, y->Cs, t, C, m->aes), frame(m, y->H, t, C, m->es)));
    }
    return HS_OK;
}

static int forecaster_layer(hs_surr_model *m, int l)
{
    layer *y = &m->fc[l], *e = &m->enc[l];
    int n = m->n, C = y->ch, k = m->a.k_in, mo = m->a.k_out;
    size_t one = (size_t)n * C * m->hw;
    /* frame 0: the encoder's final state */
    HS_CHECK(hs_mem_copy(m->ctx, y->H, frame(m, e->H, k - 1, C, m->es), one * m->es, HS_COPY_D2D));
    HS_CHECK(hs_mem_copy(m->ctx, y->Cs, frame(m, e->Cs, k - 1, C, m->aes), one * m->aes, HS_COPY_D2D));
    if (y->cx) HS_CHECK(hs_conv_forward(y->cx, mo * n, frame(m, m->fc[l - 1].H, 1, m->fc[l - 1].ch, m->es), P(m, y->wx), 0.0, y->G));
    for (int t = 1; t <= mo; t++) {
        void *z = frame(m, y->G, t - 1, 4 * C, m->es);
        HS_CHECK(hs_conv_forward(y->chh, n, frame(m, y->H, t - 1, C, m->es), P(m, y->wh), 0.0, y->cx ? m->Zh : z));
        HS_CHECK(hs_conv_lstm_forward(m->ctx, m->t, n, C, m->hw, z, y->cx ? m->Zh : NULL, P(m, y->b), frame(m, y->Cs, t - 1, C, m->aes),
                                      frame(m, y->Cs, t, C, m->aes), frame(m, y->H, t, C, m->es)));
    }
    return HS_OK;
}

int hs_surr_model_forward(hs_surr_model *m, int n, const void *x)
{
    const hs_surr_arch *a = &m->a;
    if (n < 1 || n > m->cap) return HS_FAIL(HS_ERR_RUNTIME, "surrogate: batch of %d samples (capacity %d)", n, m->cap);
    m->n = n, m->x = x;
    int V = a->nvars, E = a->head_channels, k = a->k_in, mo = a->k_out;
    const void *in = x;
    if (E > 0) {
        HS_CHECK(hs_conv_forward(m->cin, k * n, x, P(m, m->w_in), 0.0, m->E));
        HS_CHECK(hs_conv_bias_add(m->ctx, m->t, k * n, E, m->hw, P(m, m->b_in), m->E));
        in = m->E;
    }
    for (int l = 0; l < a->nlayers; l++) {
        HS_CHECK(encoder_layer(m, l, in));
        in = m->enc[l].H;
    }
    for (int l = 0; l < a->nlayers; l++) HS_CHECK(forecaster_layer(m, l));
    for (int l = 0; l < a->nlayers; l++)
        HS_CHECK(hs_conv_forward(m->cout[l], mo * n, frame(m, m->fc[l].H, 1, m->fc[l].ch, m->es), P(m, m->w_out[l]),
                                 l > 0 ? 1.0 : 0.0, m->pred));
    HS_CHECK(hs_conv_bias_add(m->ctx, m->t, mo * n, V, m->hw, P(m, m->b_out), m->pred));
    if (a->residual)
        HS_CHECK(hs_surr_add_frame(m->ctx, m->t, mo, (size_t)n * V * m->hw, frame(m, x, k - 1, V, m->es), m->pred));
    return HS_OK;
}

/* ------------------------------------------------------------------ backward */

/* The filter gradient of `conv` over `images` into the gradient at `off` (overwritten). */
static int weight_grad(hs_surr_model *m, hs_conv *conv, int images, const void *x, const void *dy, size_t off)
{
    void *dst = (char *)m->grad_c + off * m->aes;
    if (m->es == m->aes) return hs_conv_backward_filter(conv, images, x, dy, 0.0, dst);
    HS_CHECK(hs_conv_backward_filter(conv, images, x, dy, 0.0, m->wscratch));
    return hs_conv_cast(m->ctx, m->t, m->at, hs_conv_weights(conv), m->wscratch, 0, dst);
}

static int bias_grad(hs_surr_model *m, int images, int ch, const void *dy, size_t off)
{
    return hs_conv_bias_grad(m->ctx, m->t, images, ch, m->hw, dy, 0.0, (char *)m->grad_c + off * m->aes);
}

/* Forecaster layer l, top-down: dH frames 1..m hold the output head's and the layer above's
 * gradients; leaves dH frame 0 and dc for the encoder's final state. */
static int forecaster_backward(hs_surr_model *m, int l)
{
    layer *y = &m->fc[l];
    int n = m->n, C = y->ch, mo = m->a.k_out;
    HS_CHECK(hs_mem_zero(m->ctx, y->dc, (size_t)n * C * m->hw * m->aes));
    for (int t = mo; t >= 1; t--) {
        void *g = frame(m, y->G, t - 1, 4 * C, m->es);
        HS_CHECK(hs_conv_lstm_backward(m->ctx, m->t, n, C, m->hw, g, frame(m, y->Cs, t - 1, C, m->aes),
                                       frame(m, y->Cs, t, C, m->aes), frame(m, y->dH, t, C, m->es), y->dc));
        HS_CHECK(hs_conv_backward_data(y->chh, n, g, P(m, y->wh), t > 1 ? 1.0 : 0.0, frame(m, y->dH, t - 1, C, m->es)));
    }
    HS_CHECK(weight_grad(m, y->chh, mo * n, y->H, y->G, y->wh));
    HS_CHECK(bias_grad(m, mo * n, 4 * C, y->G, y->b));
    if (y->cx) {
        layer *below = &m->fc[l - 1];
        const void *in = frame(m, below->H, 1, below->ch, m->es);
        HS_CHECK(weight_grad(m, y->cx, mo * n, in, y->G, y->wx));
        HS_CHECK(hs_conv_backward_data(y->cx, mo * n, y->G, P(m, y->wx), 1.0, frame(m, below->dH, 1, below->ch, m->es)));
    }
    return HS_OK;
}

/* Encoder layer l, top-down; dH was set by the layer above (or is zeroed for the top layer), and the
 * forecaster's gradient of the final state joins here. */
static int encoder_backward(hs_surr_model *m, int l, const void *in, void *din)
{
    layer *y = &m->enc[l], *f = &m->fc[l];
    int n = m->n, C = y->ch, k = m->a.k_in;
    size_t one = (size_t)n * C * m->hw;
    void *last = frame(m, y->dH, k - 1, C, m->es);
    if (l == m->a.nlayers - 1) {
        if (k > 1) HS_CHECK(hs_mem_zero(m->ctx, y->dH, (size_t)(k - 1) * one * m->es));
        HS_CHECK(hs_mem_copy(m->ctx, last, f->dH, one * m->es, HS_COPY_D2D));
    } else {
        HS_CHECK(hs_conv_cast(m->ctx, m->t, m->t, one, f->dH, 1, last));
    }
    void *dc = f->dc; /* the gradient of the final cell state, from the forecaster */
    for (int t = k - 1; t >= 0; t--) {
        void *g = frame(m, y->G, t, 4 * C, m->es);
        HS_CHECK(hs_conv_lstm_backward(m->ctx, m->t, n, C, m->hw, g, t > 0 ? frame(m, y->Cs, t - 1, C, m->aes) : NULL,
                                       frame(m, y->Cs, t, C, m->aes), frame(m, y->dH, t, C, m->es), dc));
        if (t > 0) HS_CHECK(hs_conv_backward_data(y->chh, n, g, P(m, y->wh), 1.0, frame(m, y->dH, t - 1, C, m->es)));
    }
    /* h_0 = 0: the hidden convolution's inputs are h_1 .. h_{k-1}, paired with steps 2 .. k */
    HS_CHECK(weight_grad(m, y->chh, (k - 1) * n, y->H, frame(m, y->G, 1, 4 * C, m->es), y->wh));
    HS_CHECK(bias_grad(m, k * n, 4 * C, y->G, y->b));
    HS_CHECK(weight_grad(m, y->cx, k * n, in, y->G, y->wx));
    if (din) HS_CHECK(hs_conv_backward_data(y->cx, k * n, y->G, P(m, y->wx), 0.0, din));
    return HS_OK;
}

/* The gradient of [lo, hi) is final in the accumulation type: widen it to fp64 now rather than all
 * at the end, so that its all-reduce can start while the layers below are differentiated (the same
 * elementwise cast, so the same bits), and say so. */
static int range_done(hs_surr_model *m, size_t lo, size_t hi)
{
    if (m->t != HS_F64)
        HS_CHECK(hs_conv_cast(m->ctx, m->at, HS_F64, hi - lo, (char *)m->grad_c + lo * m->aes, 0, m->grad + lo));
    return m->ready ? m->ready(m->ready_user, lo, hi - lo) : HS_OK;
}

int hs_surr_model_backward(hs_surr_model *m)
{
    const hs_surr_arch *a = &m->a;
    int n = m->n, V = a->nvars, E = a->head_channels, k = a->k_in, mo = a->k_out, L = a->nlayers;
    if (n < 1) return HS_FAIL(HS_ERR_RUNTIME, "surrogate: backward pass without a forward pass");
    HS_CHECK(hs_mem_zero(m->ctx, m->grad_c, m->nparams * m->aes)); /* the alignment gaps stay zero */
    /* layer by layer from the top, each one's range (the layout's order: input head, encoder
     * layers, forecaster layers, output head) handed on as soon as its last block is written */
    HS_CHECK(bias_grad(m, mo * n, V, m->dpred, m->b_out));
    for (int l = 0; l < L; l++) {
        layer *y = &m->fc[l];
        HS_CHECK(weight_grad(m, m->cout[l], mo * n, frame(m, y->H, 1, y->ch, m->es), m->dpred, m->w_out[l]));
        HS_CHECK(hs_conv_backward_data(m->cout[l], mo * n, m->dpred, P(m, m->w_out[l]), 0.0, frame(m, y->dH, 1, y->ch, m->es)));
    }
    HS_CHECK(range_done(m, m->w_out[0], m->nparams));
    for (int l = L - 1; l >= 0; l--) {
        HS_CHECK(forecaster_backward(m, l));
        HS_CHECK(range_done(m, m->fc[l].lo, l + 1 < L ? m->fc[l + 1].lo : m->w_out[0]));
    }
    for (int l = L - 1; l >= 0; l--) {
        const void *in = l > 0 ? m->enc[l - 1].H : E > 0 ? m->E : m->x;
        void *din = l > 0 ? m->enc[l - 1].dH : E > 0 ? m->dE : NULL;
        HS_CHECK(encoder_backward(m, l, in, din));
        HS_CHECK(range_done(m, m->enc[l].lo, l + 1 < L ? m->enc[l + 1].lo : m->fc[0].lo));
    }
    if (E > 0) {
        HS_CHECK(weight_grad(m, m->cin, k * n, m->x, m->dE, m->w_in));
        HS_CHECK(bias_grad(m, k * n, E, m->dE, m->b_in));
        HS_CHECK(range_done(m, 0, m->enc[0].lo));
    }
    return HS_OK;
}
