/* Dense networks with input-derivative jets: construction, Xavier initialisation, forward and
 * backward passes built from GEMMs (kernels/blas/blas.h) and fused element-wise kernels. */
#include "kernels/nn/nn.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/blas/blas.h"
#include "kernels/error.h"
#include "kernels/memory.h"
#include "kernels/nn/nn_impl.h"
#include "kernels/rng/rng.h"
#include "kernels/dispatch.h"

static const char *const act_names[] = {"tanh", "sin", "sigmoid", "relu", "identity"};

int hs_activation_parse(const char *name, hs_activation *act)
{
    for (int i = 0; i < (int)(sizeof act_names / sizeof *act_names); i++)
        if (name && strcmp(name, act_names[i]) == 0) {
            *act = (hs_activation)i;
            return HS_OK;
        }
    return HS_ERR_INPUT;
}

const char *hs_activation_name(hs_activation act)
{
    return (unsigned)act < sizeof act_names / sizeof *act_names ? act_names[act] : "?";
}

int hs_jet_channels(const hs_jet *jet) { return jet ? 1 + jet->nfirst + jet->nsecond : 1; }

/* ------------------------------------------------------------------ backend dispatch */

static int input_jet(hs_ctx *ctx, hs_dtype t, int in, size_t n, const hs_nn_jet_layout *j, const void *x, void *h0)
{
    return HS_DISPATCH(ctx, hs_nn_input_jet_cpu(t, in, n, j, x, h0),
                       hs_nn_input_jet_cuda(ctx->cuda, t, in, n, j, x, h0));
}

static int act_forward(hs_ctx *ctx, hs_dtype t, int act, int rows, size_t n, const hs_nn_jet_layout *j, const void *b,
                       void *z, void *h)
{
    return HS_DISPATCH(ctx, hs_nn_act_forward_cpu(t, act, rows, n, j, b, z, h),
                       hs_nn_act_forward_cuda(ctx->cuda, t, act, rows, n, j, b, z, h));
}

static int act_backward(hs_ctx *ctx, hs_dtype t, int act, int rows, size_t n, const hs_nn_jet_layout *j,
                        const void *z, const void *h, void *dh)
{
    return HS_DISPATCH(ctx, hs_nn_act_backward_cpu(t, act, rows, n, j, z, h, dh),
                       hs_nn_act_backward_cuda(ctx->cuda, t, act, rows, n, j, z, h, dh));
}

static int add_bias(hs_ctx *ctx, hs_dtype t, int rows, size_t n, const void *b, void *out)
{
    return HS_DISPATCH(ctx, hs_nn_bias_cpu(t, rows, n, b, out), hs_nn_bias_cuda(ctx->cuda, t, rows, n, b, out));
}

static int cast(hs_ctx *ctx, hs_dtype st, hs_dtype dt, size_t n, const void *src, void *dst)
{
    if (n == 0) return HS_OK;
    return HS_DISPATCH(ctx, hs_nn_cast_cpu(st, dt, n, src, dst), hs_nn_cast_cuda(ctx->cuda, st, dt, n, src, dst));
}

/* ------------------------------------------------------------------ network */

int hs_mlp_create(hs_ctx *ctx, hs_dtype dtype, int nlayers, const int *width, hs_activation act, hs_mlp **out)
{
    *out = NULL;
    if (nlayers < 1) return hs_input_error("network", 0, NULL, "at least one layer is needed (got %d)", nlayers);
    for (int l = 0; l <= nlayers; l++)
        if (width[l] < 1) return hs_input_error("network", 0, NULL, "layer width %d is %d (must be >= 1)", l, width[l]);
    if (dtype != HS_F64 && dtype != HS_F32)
        return HS_FAIL(HS_ERR_RUNTIME, "hs_mlp_create: dtype %s not supported", hs_dtype_name(dtype));
    hs_mlp *m = calloc(1, sizeof *m);
    if (!m) return HS_FAIL(HS_ERR_RUNTIME, "hs_mlp_create: out of host memory");
    m->ctx = ctx, m->dtype = dtype, m->nlayers = nlayers, m->act = act;
    m->width = malloc((nlayers + 1) * sizeof *m->width);
    m->w_off = malloc(nlayers * sizeof *m->w_off), m->b_off = malloc(nlayers * sizeof *m->b_off);
    if (!m->width || !m->w_off || !m->b_off) {
        hs_mlp_destroy(m);
        return HS_FAIL(HS_ERR_RUNTIME, "hs_mlp_create: out of host memory");
    }
    memcpy(m->width, width, (nlayers + 1) * sizeof *width);
    for (int l = 0; l <= nlayers; l++)
        if (width[l] > m->max_width) m->max_width = width[l];
    for (int l = 0; l < nlayers; l++) {
        m->w_off[l] = m->nparams, m->nparams += (size_t)width[l] * width[l + 1];
        m->b_off[l] = m->nparams, m->nparams += (size_t)width[l + 1];
    }
    size_t b64 = m->nparams * sizeof(double), bc = m->nparams * hs_dtype_size(dtype);
    int rc = hs_mem_alloc(ctx, b64, (void **)&m->params);
    if (rc == HS_OK) rc = hs_mem_alloc(ctx, b64, (void **)&m->grad);
    if (rc == HS_OK) rc = hs_mem_zero(ctx, m->params, b64);
    if (rc == HS_OK) rc = hs_mem_zero(ctx, m->grad, b64);
    if (rc == HS_OK && dtype == HS_F32) rc = hs_mem_alloc(ctx, bc, &m->params_c);
    if (rc == HS_OK && dtype == HS_F32) rc = hs_mem_alloc(ctx, bc, &m->grad_c);
    if (dtype == HS_F64) m->params_c = m->params, m->grad_c = m->grad;
    if (rc != HS_OK) {
        hs_mlp_destroy(m);
        return hs_error_trace(rc, __FILE__, __LINE__, "hs_mlp_create");
    }
    *out = m;
    return HS_OK;
}

void hs_mlp_destroy(hs_mlp *m)
{
    if (!m) return;
    if (m->params_c != m->params) hs_mem_free(m->ctx, m->params_c);
    if (m->grad_c != m->grad) hs_mem_free(m->ctx, m->grad_c);
    hs_mem_free(m->ctx, m->params);
    hs_mem_free(m->ctx, m->grad);
    free(m->width), free(m->w_off), free(m->b_off);
    free(m);
}

/* Standard normal (kernels/rng/rng.h, Box-Muller), redrawn beyond two standard deviations (a truncated normal). */
static double truncated_normal(hs_rng *s)
{
    for (;;) {
        double g = hs_rng_gaussian(s);
        if (fabs(g) <= 2.0) return g;
    }
}

int hs_mlp_init_xavier(hs_mlp *m, uint64_t seed)
{
    double *h = calloc(m->nparams ? m->nparams : 1, sizeof *h);
    if (!h) return HS_FAIL(HS_ERR_RUNTIME, "hs_mlp_init_xavier: out of host memory");
    hs_rng s;
    hs_rng_seed(&s, seed, 0);
    for (int l = 0; l < m->nlayers; l++) {
        double sd = sqrt(2.0 / (m->width[l] + m->width[l + 1]));
        size_t nw = (size_t)m->width[l] * m->width[l + 1];
        for (size_t i = 0; i < nw; i++) h[m->w_off[l] + i] = sd * truncated_normal(&s);
    }
    int rc = hs_mem_copy(m->ctx, m->params, h, m->nparams * sizeof *h, HS_COPY_H2D);
    free(h);
    return rc;
}

/* ------------------------------------------------------------------ batches */

static hs_nn_jet_layout layout_of(const hs_jet *jet)
{
    hs_nn_jet_layout L;
    memset(&L, 0, sizeof L);
    L.nfirst = jet->nfirst, L.nsecond = jet->nsecond;
    for (int k = 0; k < jet->nfirst; k++) L.first[k] = jet->first[k];
    for (int k = 0; k < jet->nsecond; k++)
        for (int q = 0; q < jet->nfirst; q++)
            if (jet->first[q] == jet->second[k]) L.sidx[k] = q;
    return L;
}

static int check_jet(const hs_mlp *m, const hs_jet *jet)
{
    if (jet->nfirst < 0 || jet->nfirst > HS_JET_MAX || jet->nsecond < 0 || jet->nsecond > HS_JET_MAX)
        return HS_FAIL(HS_ERR_RUNTIME, "hs_mlp_batch_create: at most %d first and second derivatives", HS_JET_MAX);
    for (int k = 0; k < jet->nfirst; k++)
        if (jet->first[k] < 0 || jet->first[k] >= m->width[0])
            return HS_FAIL(HS_ERR_RUNTIME, "hs_mlp_batch_create: derivative direction %d is not an input", jet->first[k]);
    for (int k = 0; k < jet->nsecond; k++) {
        int found = 0;
        for (int q = 0; q < jet->nfirst; q++) found |= jet->first[q] == jet->second[k];
        if (!found)
            return HS_FAIL(HS_ERR_RUNTIME, "hs_mlp_batch_create: second derivative %d needs the first derivative too",
                           jet->second[k]);
    }
    return HS_OK;
}

void hs_mlp_batch_destroy(hs_mlp_batch *b)
{
    if (!b) return;
    hs_ctx *ctx = b->mlp->ctx;
    for (int l = 0; l < b->mlp->nlayers; l++) {
        if (b->h) hs_mem_free(ctx, b->h[l]);
        if (b->z) hs_mem_free(ctx, b->z[l]);
    }
    hs_mem_free(ctx, b->out), hs_mem_free(ctx, b->dout);
    hs_mem_free(ctx, b->buf[0]), hs_mem_free(ctx, b->buf[1]), hs_mem_free(ctx, b->ones);
    free(b->h), free(b->z);
    free(b);
}

static int batch_alloc(hs_mlp_batch *b)
{
    hs_mlp *m = b->mlp;
    hs_ctx *ctx = m->ctx;
    size_t es = hs_dtype_size(m->dtype), cols = (size_t)b->channels * b->cap;
    for (int l = 0; l < m->nlayers; l++) {
        HS_CHECK(hs_mem_alloc(ctx, (size_t)m->width[l] * cols * es, &b->h[l]));
        if (l < m->nlayers - 1) HS_CHECK(hs_mem_alloc(ctx, (size_t)m->width[l + 1] * cols * es, &b->z[l]));
    }
    size_t outb = (size_t)m->width[m->nlayers] * cols * es;
    HS_CHECK(hs_mem_alloc(ctx, outb, &b->out));
    HS_CHECK(hs_mem_alloc(ctx, outb, &b->dout));
    HS_CHECK(hs_mem_alloc(ctx, (size_t)m->max_width * cols * es, &b->buf[0]));
    HS_CHECK(hs_mem_alloc(ctx, (size_t)m->max_width * cols * es, &b->buf[1]));
    HS_CHECK(hs_mem_alloc(ctx, b->cap * es, &b->ones));
    if (b->cap) HS_CHECK(hs_fill(ctx, m->dtype, b->cap, 1.0, b->ones));
    if (outb) HS_CHECK(hs_mem_zero(ctx, b->dout, outb));
    return HS_OK;
}

int hs_mlp_batch_create(hs_mlp *m, const hs_jet *jet, size_t cap, hs_mlp_batch **out)
{
    *out = NULL;
    hs_jet none = {0, {0}, 0, {0}};
    if (!jet) jet = &none;
    HS_CHECK(check_jet(m, jet));
    hs_mlp_batch *b = calloc(1, sizeof *b);
    if (!b) return HS_FAIL(HS_ERR_RUNTIME, "hs_mlp_batch_create: out of host memory");
    b->mlp = m, b->jet = *jet, b->channels = hs_jet_channels(jet), b->cap = cap;
    b->h = calloc(m->nlayers, sizeof *b->h), b->z = calloc(m->nlayers, sizeof *b->z);
    int rc = (b->h && b->z) ? batch_alloc(b) : HS_FAIL(HS_ERR_RUNTIME, "hs_mlp_batch_create: out of host memory");
    if (rc != HS_OK) {
        hs_mlp_batch_destroy(b);
        return hs_error_trace(rc, __FILE__, __LINE__, "hs_mlp_batch_create");
    }
    *out = b;
    return HS_OK;
}

/* ------------------------------------------------------------------ passes */

static const void *at(const void *base, size_t off, hs_dtype t) { return (const char *)base + off * hs_dtype_size(t); }
static void *at_mut(void *base, size_t off, hs_dtype t) { return (char *)base + off * hs_dtype_size(t); }

int hs_mlp_forward(hs_mlp_batch *b, size_t n, const void *x)
{
    hs_mlp *m = b->mlp;
    hs_ctx *ctx = m->ctx;
    hs_dtype t = m->dtype;
    if (n > b->cap) return HS_FAIL(HS_ERR_RUNTIME, "hs_mlp_forward: %zu points exceed the batch capacity %zu", n, b->cap);
    b->n = n;
    if (n == 0) return HS_OK;
    if (t == HS_F32) HS_CHECK(cast(ctx, HS_F64, HS_F32, m->nparams, m->params, m->params_c));
    hs_nn_jet_layout J = layout_of(&b->jet);
    int cols = (int)((size_t)b->channels * n), L = m->nlayers;
    HS_CHECK(input_jet(ctx, t, m->width[0], n, &J, x, b->h[0]));
    for (int l = 0; l < L; l++) {
        int in = m->width[l], out = m->width[l + 1];
        const void *W = at(m->params_c, m->w_off[l], t), *bias = at(m->params_c, m->b_off[l], t);
        void *dst = l < L - 1 ? b->z[l] : b->out;
        HS_CHECK(hs_gemm(ctx, t, 0, 0, out, cols, in, 1.0, W, out, b->h[l], in, 0.0, dst, out));
        if (l < L - 1) HS_CHECK(act_forward(ctx, t, (int)m->act, out, n, &J, bias, b->z[l], b->h[l + 1]));
        else HS_CHECK(add_bias(ctx, t, out, n, bias, b->out));
    }
    return HS_OK;
}

int hs_mlp_zero_grad(hs_mlp *m) { return hs_mem_zero(m->ctx, m->grad_c, m->nparams * hs_dtype_size(m->dtype)); }

int hs_mlp_finish_grad(hs_mlp *m)
{
    if (m->dtype == HS_F32) HS_CHECK(cast(m->ctx, HS_F32, HS_F64, m->nparams, m->grad_c, m->grad));
    return HS_OK;
}

int hs_mlp_backward(hs_mlp_batch *b)
{
    hs_mlp *m = b->mlp;
    hs_ctx *ctx = m->ctx;
    hs_dtype t = m->dtype;
    size_t n = b->n;
    if (n == 0) return HS_OK;
    hs_nn_jet_layout J = layout_of(&b->jet);
    int cols = (int)((size_t)b->channels * n);
    void *dz = b->dout;
    int next = 0;
    for (int l = m->nlayers - 1; l >= 0; l--) {
        int in = m->width[l], out = m->width[l + 1];
        void *gW = at_mut(m->grad_c, m->w_off[l], t), *gb = at_mut(m->grad_c, m->b_off[l], t);
        HS_CHECK(hs_gemm(ctx, t, 0, 1, out, in, cols, 1.0, dz, out, b->h[l], in, 1.0, gW, out));
        HS_CHECK(hs_gemm(ctx, t, 0, 0, out, 1, (int)n, 1.0, dz, out, b->ones, (int)n, 1.0, gb, out));
        if (l == 0) break;
        void *dh = b->buf[next];
        next ^= 1;
        const void *W = at(m->params_c, m->w_off[l], t);
        HS_CHECK(hs_gemm(ctx, t, 1, 0, in, cols, out, 1.0, W, out, dz, out, 0.0, dh, in));
        HS_CHECK(act_backward(ctx, t, (int)m->act, in, n, &J, b->z[l - 1], b->h[l], dh));
        dz = dh;
    }
    return HS_OK;
}

/* ------------------------------------------------------------------ host transfers */

int hs_nn_to_host(hs_ctx *ctx, hs_dtype t, size_t n, const void *dev, double *host)
{
    if (n == 0) return HS_OK;
    if (t == HS_F64) return hs_mem_copy(ctx, host, dev, n * sizeof(double), HS_COPY_D2H);
    float *tmp = malloc(n * sizeof *tmp);
    if (!tmp) return HS_FAIL(HS_ERR_RUNTIME, "hs_nn_to_host: out of host memory");
    int rc = hs_mem_copy(ctx, tmp, dev, n * sizeof *tmp, HS_COPY_D2H);
    for (size_t i = 0; rc == HS_OK && i < n; i++) host[i] = tmp[i];
    free(tmp);
    return rc;
}

int hs_nn_from_host(hs_ctx *ctx, hs_dtype t, size_t n, const double *host, void *dev)
{
    if (n == 0) return HS_OK;
    if (t == HS_F64) return hs_mem_copy(ctx, dev, host, n * sizeof(double), HS_COPY_H2D);
    float *tmp = malloc(n * sizeof *tmp);
    if (!tmp) return HS_FAIL(HS_ERR_RUNTIME, "hs_nn_from_host: out of host memory");
    for (size_t i = 0; i < n; i++) tmp[i] = (float)host[i];
    int rc = hs_mem_copy(ctx, dev, tmp, n * sizeof *tmp, HS_COPY_H2D);
    free(tmp);
    return rc;
}
