/* Surrogate benchmark: training throughput (samples/s) of the ConvLSTM encoder-forecaster (2 layers of
 * 64 channels, 3x3 gates, 10 -> 10 frames, 4 variables) at 64^2 with batch 16 and 128^2 with batch 8,
 * fp32 and bf16, against the same model in PyTorch (scripts/surrogate_pytorch.py, whose step times
 * come in HS_PEER_PYTORCH_SURR_<N>_<PREC>_S); forecast latency per sample; and the share of a
 * training step spent in the convolutions (cuDNN) against our own kernels (gates, bias, loss, AdamW).
 * HS_BENCH_SURR_ONLY="SIZE PREC" (e.g. "128 bf16") runs one configuration; HS_BENCH_PROFILE_STEP=1
 * then wraps one more training step in cudaProfilerStart/Stop, for
 * `ncu --profile-from-start off --metrics gpu__time_duration.sum` to time each kernel of a step. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_util.h"
#include "kernels/config.h"
#include "kernels/cuda_backend.h"
#include "kernels/blas/blas.h"
#include "kernels/memory.h"
#include "kernels/nn/conv.h"
#include "kernels/nn/optim.h"
#include "kernels/reduce/reduce.h"
#include "kernels/rng/rng.h"
#include "ml_surrogate/surrogate.h"
#include "ml_surrogate/surrogate_kernels.h"

typedef struct {
    hs_ctx *ctx;
    hs_surr_arch a;
    int n;
    hs_surr_model *m;
    hs_adam *adam;
    void *x;
    double *sq;
    size_t count;
    /* the convolution replay: the same shapes and calls as one training step */
    hs_conv *conv[3 * 3 * 2 + 4];
    int nconv;
    void *buf[4], *wbuf;
} job;

static double env_seconds(const char *name)
{
    const char *v = getenv(name);
    return v ? atof(v) : 0.0;
}

static void arch_of(hs_surr_arch *a, hs_dtype t, int size, int hidden, int layers)
{
    memset(a, 0, sizeof *a);
    a->nvars = 4, a->ny = a->nx = size, a->k_in = a->k_out = 10, a->nlayers = layers;
    for (int l = 0; l < layers; l++) a->hidden[l] = hidden, a->kernel[l] = 3;
    a->head_channels = 16, a->head_kernel = 3, a->out_kernel = 1, a->residual = 1, a->dtype = t;
}

/* Multiply-adds of one sample's forward pass (the backward pass does about twice as many). */
static double macs_forward(const hs_surr_arch *a)
{
    double hw = (double)a->ny * a->nx, k = a->k_in, m = a->k_out, s = 0;
    int E = a->head_channels, V = a->nvars;
    s += (double)E * V * a->head_kernel * a->head_kernel * hw * k;
    for (int l = 0; l < a->nlayers; l++) {
        double C = a->hidden[l], K2 = (double)a->kernel[l] * a->kernel[l], cin = l ? a->hidden[l - 1] : (E ? E : V);
        s += 4 * C * cin * K2 * hw * k + 4 * C * C * K2 * hw * (k - 1);               /* encoder */
        s += (l ? 4 * C * a->hidden[l - 1] * K2 * hw * m : 0) + 4 * C * C * K2 * hw * m; /* forecaster */
        s += (double)V * C * a->out_kernel * a->out_kernel * hw * m;                   /* output head */
    }
    return s;
}

static void job_make(job *j, hs_ctx *ctx, hs_dtype t, int size, int n, int hidden, int layers)
{
    memset(j, 0, sizeof *j);
    j->ctx = ctx, j->n = n;
    arch_of(&j->a, t, size, hidden, layers);
    bench_check(hs_surr_model_create(ctx, &j->a, n, &j->m), "hs_surr_model_create");
    bench_check(hs_surr_model_init(j->m, 1), "hs_surr_model_init");
    bench_check(hs_adam_create(ctx, hs_surr_model_nparams(j->m), 0.9, 0.999, 1e-8, &j->adam), "hs_adam_create");
    size_t fs = (size_t)j->a.nvars * size * size, xc = (size_t)(j->a.k_in + j->a.k_out) * n * fs;
    j->count = (size_t)j->a.k_out * n * fs;
    /* a smooth random batch (values of order one, as normalised data) */
    double *h = malloc(xc * sizeof *h), *d;
    hs_rng r;
    hs_rng_seed(&r, 7, 0);
    for (size_t i = 0; i < xc; i++) h[i] = 2 * hs_rng_uniform(&r) - 1;
    bench_check(hs_mem_alloc(ctx, xc * 8, (void **)&d), "alloc");
    bench_check(hs_mem_copy(ctx, d, h, xc * 8, HS_COPY_H2D), "copy");
    bench_check(hs_mem_alloc(ctx, xc * hs_dtype_size(t), &j->x), "alloc");
    bench_check(hs_conv_cast(ctx, HS_F64, t, xc, d, 0, j->x), "cast");
    hs_mem_free(ctx, d), free(h);
    bench_check(hs_mem_alloc(ctx, j->count * 8, (void **)&j->sq), "alloc");
}

static void job_free(job *j)
{
    hs_surr_model_destroy(j->m);
    hs_adam_destroy(j->adam);
    hs_mem_free(j->ctx, j->x), hs_mem_free(j->ctx, j->sq);
    for (int i = 0; i < j->nconv; i++) hs_conv_destroy(j->conv[i]);
    for (int i = 0; i < 4; i++) hs_mem_free(j->ctx, j->buf[i]);
    hs_mem_free(j->ctx, j->wbuf);
}

/* One training step as the trainer takes it: forward, loss, backward, gradient norm, clipped AdamW,
 * the compute copy of the weights refreshed (the data already on the device). */
static int train_step(void *arg)
{
    job *j = arg;
    hs_ctx *ctx = j->ctx;
    HS_CHECK(hs_surr_model_forward(j->m, j->n, j->x));
    const void *target = (const char *)j->x + (size_t)j->a.k_in * j->n * j->a.nvars * j->a.ny * j->a.nx * hs_dtype_size(j->a.dtype);
    double s, norm;
    HS_CHECK(hs_surr_mse(ctx, j->a.dtype, j->count, hs_surr_model_pred(j->m), target, 2.0 / j->count, hs_surr_model_dpred(j->m), j->sq));
    HS_CHECK(hs_reduce(ctx, HS_F64, HS_REDUCE_SUM, j->count, j->sq, &s));
    HS_CHECK(hs_surr_model_backward(j->m));
    size_t np = hs_surr_model_nparams(j->m);
    HS_CHECK(hs_nrm2(ctx, HS_F64, np, hs_surr_model_grad(j->m), &norm));
    double clip = norm > 1.0 ? 1.0 / norm : 1.0;
    HS_CHECK(hs_adamw_step(j->adam, 1e-4, 1e-4, clip, hs_surr_model_params(j->m), hs_surr_model_grad(j->m)));
    return hs_surr_model_sync_params(j->m);
}

static int forecast_step(void *arg)
{
    job *j = arg;
    return hs_surr_model_forward(j->m, j->n, j->x);
}

/* ------------------------------------------------------------------ the convolutions alone */

static hs_conv *conv_of(job *j, int cin, int cout, int k)
{
    hs_conv *c;
    bench_check(hs_conv_create(j->ctx, j->a.dtype, cin, cout, k, k, j->a.ny, j->a.nx, &c), "hs_conv_create");
    return j->conv[j->nconv++] = c;
}

/* Every convolution call of one training step with the model's shapes and counts (weights and
 * data arbitrary): what the step spends in cuDNN. */
static int conv_replay(void *arg)
{
    job *j = arg;
    const hs_surr_arch *a = &j->a;
    int n = j->n, k = a->k_in, m = a->k_out, q = 0;
    void *x = j->buf[0], *y = j->buf[1], *w = j->wbuf;
    HS_CHECK(hs_conv_forward(j->conv[q], k * n, x, w, 0, y));                     /* input head */
    HS_CHECK(hs_conv_backward_filter(j->conv[q++], k * n, x, y, 0, w));
    for (int l = 0; l < a->nlayers; l++) {
        hs_conv *ex = j->conv[q++], *eh = j->conv[q++], *fx = l ? j->conv[q++] : NULL, *fh = j->conv[q++], *o = j->conv[q++];
        HS_CHECK(hs_conv_forward(ex, k * n, x, w, 0, y));
        for (int t = 1; t < k; t++) HS_CHECK(hs_conv_forward(eh, n, x, w, 0, y));
        if (fx) HS_CHECK(hs_conv_forward(fx, m * n, x, w, 0, y));
        for (int t = 0; t < m; t++) HS_CHECK(hs_conv_forward(fh, n, x, w, 0, y));
        HS_CHECK(hs_conv_forward(o, m * n, x, w, 1, y));
        /* backward */
        HS_CHECK(hs_conv_backward_filter(o, m * n, x, y, 0, w));
        HS_CHECK(hs_conv_backward_data(o, m * n, y, w, 0, x));
        for (int t = 0; t < m; t++) HS_CHECK(hs_conv_backward_data(fh, n, y, w, 1, x));
        HS_CHECK(hs_conv_backward_filter(fh, m * n, x, y, 0, w));
        if (fx) {
            HS_CHECK(hs_conv_backward_filter(fx, m * n, x, y, 0, w));
            HS_CHECK(hs_conv_backward_data(fx, m * n, y, w, 1, x));
        }
        for (int t = 1; t < k; t++) HS_CHECK(hs_conv_backward_data(eh, n, y, w, 1, x));
        HS_CHECK(hs_conv_backward_filter(eh, (k - 1) * n, x, y, 0, w));
        HS_CHECK(hs_conv_backward_filter(ex, k * n, x, y, 0, w));
        HS_CHECK(hs_conv_backward_data(ex, k * n, y, w, 0, x));
    }
    return HS_OK;
}

static void replay_make(job *j)
{
    const hs_surr_arch *a = &j->a;
    int E = a->head_channels, V = a->nvars, cmax = 4 * a->hidden[0];
    for (int l = 0; l < a->nlayers; l++) cmax = 4 * a->hidden[l] > cmax ? 4 * a->hidden[l] : cmax;
    conv_of(j, V, E, a->head_kernel);
    for (int l = 0; l < a->nlayers; l++) {
        int C = a->hidden[l], K = a->kernel[l], cin = l ? a->hidden[l - 1] : E;
        conv_of(j, cin, 4 * C, K);
        conv_of(j, C, 4 * C, K);
        if (l) conv_of(j, a->hidden[l - 1], 4 * C, K);
        conv_of(j, C, 4 * C, K);
        conv_of(j, C, V, a->out_kernel);
    }
    size_t images = (size_t)(a->k_in > a->k_out ? a->k_in : a->k_out) * j->n, es = hs_dtype_size(a->dtype);
    size_t elems = images * cmax * a->ny * a->nx;
    for (int i = 0; i < 2; i++) {
        bench_check(hs_mem_alloc(j->ctx, elems * es, &j->buf[i]), "alloc");
        bench_check(hs_mem_zero(j->ctx, j->buf[i], elems * es), "zero");
    }
    bench_check(hs_mem_alloc(j->ctx, (size_t)cmax * cmax * 25 * es, &j->wbuf), "alloc");
    bench_check(hs_mem_zero(j->ctx, j->wbuf, (size_t)cmax * cmax * 25 * es), "zero");
}

/* ------------------------------------------------------------------ rows */

static void run(hs_ctx *ctx, hs_dtype t, int size, int n, int hidden, int layers, int reps)
{
    job j;
    job_make(&j, ctx, t, size, n, hidden, layers);
    char what[96], env[64];
    snprintf(what, sizeof what, "%d^2 x %d, batch %d, %dx%d ch", size, j.a.nvars, n, layers, hidden);
    snprintf(env, sizeof env, "HS_PEER_PYTORCH_SURR_%d_%s_S", size, t == HS_F32 ? "F32" : "BF16");
    for (int c = 0; env[c]; c++) env[c] = (char)(env[c] >= 'a' && env[c] <= 'z' ? env[c] - 32 : env[c]);
    double step = bench_time(train_step, &j, 2, reps);
#if HS_HAVE_CUDA
    if (HS_ON_GPU(ctx) && getenv("HS_BENCH_PROFILE_STEP")) {
        bench_check(hs_ctx_sync(ctx), "sync");
        bench_check(hs_cuda_profiler_cuda(1), "profiler start");
        bench_check(train_step(&j), "train step");
        bench_check(hs_ctx_sync(ctx), "sync");
        bench_check(hs_cuda_profiler_cuda(0), "profiler stop");
    }
#endif
    double flops = 2.0 * 3.0 * macs_forward(&j.a) * n;
    double peer = env_seconds(env);
    bench_row("surrogate training step", what, hs_dtype_name(t), step, 0, flops, peer > 0 ? "pytorch" : NULL, peer);
    printf("  %.1f samples/s%s", n / step, peer > 0 ? "" : "\n");
    if (peer > 0) printf(" (pytorch %.1f samples/s: %.2fx)\n", n / peer, peer / step);
    double fc = bench_time(forecast_step, &j, 2, reps);
    snprintf(env, sizeof env, "HS_PEER_PYTORCH_SURR_%d_%s_FC_S", size, t == HS_F32 ? "F32" : "BF16");
    double peer_fc = env_seconds(env);
    bench_row("surrogate forecast (10 frames)", what, hs_dtype_name(t), fc, 0, 2.0 * macs_forward(&j.a) * n,
              peer_fc > 0 ? "pytorch" : NULL, peer_fc);
    printf("  forecast latency %.3f ms per sample (batch %d)\n", 1e3 * fc / n, n);
    replay_make(&j);
    double conv = bench_time(conv_replay, &j, 1, reps);
    printf("  convolutions (%s) %.1f%% of the training step, our kernels and the optimiser %.1f%%\n", hs_conv_engine(ctx),
           100 * conv / step, 100 * (1 - conv / step));
    job_free(&j);
}

int main(int argc, char **argv)
{
    hs_ctx *ctx = bench_init(&argc, &argv);
    /* cuDNN's fastest algorithms as cudnnFind measures them (PyTorch's cudnn.benchmark); with
     * HS_BENCH_DETERMINISTIC=1 the fixed heuristic choice of deterministic training runs */
    const char *det = getenv("HS_BENCH_DETERMINISTIC");
    ctx->deterministic = det ? atoi(det) : 0;
    printf("surrogate: convolutions by %s, %s algorithm choice\n", hs_conv_engine(ctx),
           ctx->deterministic ? "deterministic (heuristic)" : "fastest measured (cudnnFind)");
    if (HS_ON_GPU(ctx)) {
        /* the configurations of the issue, fp32 and bf16, as scripts/surrogate_pytorch.py runs them */
        const hs_dtype types[2] = {HS_F32, HS_BF16};
        const char *only = getenv("HS_BENCH_SURR_ONLY");
        for (int k = 0; k < 2; k++)
            for (int size = 64; size <= 128; size *= 2) {
                char tag[32];
                snprintf(tag, sizeof tag, "%d %s", size, hs_dtype_name(types[k]));
                if (!only || !strcmp(only, tag)) run(ctx, types[k], size, size == 64 ? 16 : 8, 64, 2, 10);
            }
    } else {
        /* the CPU twin on a smaller model (the GPU's would take minutes a step on two cores) */
        run(ctx, HS_F32, 32, 2, 16, 2, 2);
    }
    bench_finish();
    return 0;
}
