/* Data-parallel training of the surrogate: batches (prefetched), loss, overlapped gradient all-reduce, clipping, AdamW, loss scaling. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/blas/blas.h"
#include "kernels/comm/comm.h"
#include "kernels/dispatch.h"
#include "kernels/memory.h"
#include "kernels/reduce/reduce.h"
#include "kernels/rng/rng.h"
#include "ml_surrogate/surrogate.h"
#include "ml_surrogate/surrogate_kernels.h"

enum { USE_SHUFFLE = 0x5348 /* "SH" */ };
/* Gradient buckets: at most one per range the backward pass reports (heads and layers). */
#define MAX_BUCKETS (2 * HS_SURR_MAX_LAYERS + 2)
#define BUCKET_BYTES ((size_t)1 << 20)

struct hs_surr_trainer {
    hs_ctx *ctx;
    hs_surr_train_config c;
    hs_surr_data *d;
    hs_surr_model *m;
    hs_adam *adam;
    hs_comm *gcomm;
    int cap;                       /* this rank's largest share of a batch */
    size_t frame_elems, window_elems;
    int64_t step, good, skipped;
    double scale, last_lr, last_gnorm;
    /* batches: two slots; on the GPU, host[] are pinned and filled while the previous step computes */
    void *host[2], *dev[2], *ready[2], *copy_stream;
    int slot;
    int64_t prepared;              /* the step whose batch is in dev[slot] (-1: none) */
    int *bfile;
    int64_t *bfirst;
    int64_t *perm, perm_epoch, nwin;
    double *sq;                    /* device fp64: squared errors of one batch */
    /* this step's gradient buckets: adjoining ranges of the flat gradient, from its end to its start,
     * in the order every rank starts their all-reduces */
    size_t bucket_min;             /* elements */
    size_t open_lo, open_hi;       /* ranges reported but not yet in a bucket (empty when equal) */
    int nbuckets;
    size_t blo[MAX_BUCKETS], bhi[MAX_BUCKETS];
    hs_comm_request *req[MAX_BUCKETS];
};

hs_surr_model *hs_surr_trainer_model(hs_surr_trainer *t) { return t->m; }
int64_t hs_surr_trainer_steps(const hs_surr_trainer *t) { return t->step; }

void hs_surr_trainer_last(const hs_surr_trainer *t, double *lr, double *gnorm, double *scale, int64_t *skipped)
{
    if (lr) *lr = t->last_lr;
    if (gnorm) *gnorm = t->last_gnorm;
    if (scale) *scale = t->scale;
    if (skipped) *skipped = t->skipped;
}

/* ------------------------------------------------------------------ sampling */

static int permutation(hs_surr_trainer *t, int64_t epoch)
{
    if (t->perm_epoch == epoch) return HS_OK;
    hs_rng r;
    hs_rng_seed(&r, t->c.seed, hs_rng_stream(USE_SHUFFLE, (uint32_t)epoch));
    for (int64_t i = 0; i < t->nwin; i++) t->perm[i] = i;
    for (int64_t i = t->nwin - 1; i > 0; i--) {
        int64_t j = (int64_t)hs_rng_below(&r, (uint64_t)(i + 1)), s = t->perm[i];
        t->perm[i] = t->perm[j], t->perm[j] = s;
    }
    t->perm_epoch = epoch;
    return HS_OK;
}

/* This rank's samples of global step s: [B r / P, B (r + 1) / P) of the step's B. */
static void share(const hs_surr_trainer *t, int64_t *lo, int *n)
{
    int B = t->c.batch, r = t->ctx->rank, P = t->ctx->size;
    int64_t a = (int64_t)B * r / P, b = (int64_t)B * (r + 1) / P;
    *lo = a, *n = (int)(b - a);
}

static int windows_of_step(hs_surr_trainer *t, int64_t s, int *n)
{
    int64_t lo;
    share(t, &lo, n);
    for (int b = 0; b < *n; b++) {
        int64_t j = s * t->c.batch + lo + b;
        HS_CHECK(permutation(t, j / t->nwin));
        hs_surr_data_window(t->d, 0, t->perm[j % t->nwin], &t->bfile[b], &t->bfirst[b]);
    }
    return HS_OK;
}

/* Assemble step s's batch into slot k: on the GPU through the pinned buffer and the copy stream
 * (the event ready[k] marks its arrival); on the CPU straight into the batch buffer. */
static int prepare(hs_surr_trainer *t, int64_t s, int k)
{
    int n;
    HS_CHECK(windows_of_step(t, s, &n));
    int frames = t->c.arch.k_in + t->c.arch.k_out;
    hs_dtype dt = t->c.arch.dtype;
    if (!HS_ON_GPU(t->ctx)) return hs_surr_data_fill(t->d, dt, n, t->bfile, t->bfirst, frames, t->dev[k]);
    HS_CHECK(hs_surr_data_fill(t->d, dt, n, t->bfile, t->bfirst, frames, t->host[k]));
    size_t bytes = (size_t)n * t->window_elems * hs_dtype_size(dt);
    HS_CHECK(hs_mem_copy_async(t->ctx, t->dev[k], t->host[k], bytes, HS_COPY_H2D, t->copy_stream));
    return hs_event_record(t->ctx, t->ready[k], t->copy_stream);
}

/* ------------------------------------------------------------------ gradient all-reduce */

/* Start bucket b's all-reduce (in place on the fp64 gradient). */
static int start_bucket(hs_surr_trainer *t, int b)
{
    double *grad = hs_surr_model_grad(t->m);
    return hs_comm_allreduce_begin(t->gcomm, HS_F64, HS_COMM_SUM, grad + t->blo[b], t->bhi[b] - t->blo[b], &t->req[b]);
}

/* The ranges gathered so far become a bucket, started at once when overlapping.  The buckets, and
 * so the all-reduce calls, are the same with and without overlap: MPI and NCCL choose how to sum
 * (and so the bits) by message size, so only the moment each call is made may differ. */
static int close_bucket(hs_surr_trainer *t)
{
    if (t->open_lo == t->open_hi) return HS_OK;
    if (t->nbuckets == MAX_BUCKETS) return HS_FAIL(HS_ERR_RUNTIME, "surrogate: more than %d gradient buckets", MAX_BUCKETS);
    int b = t->nbuckets++;
    t->blo[b] = t->open_lo, t->bhi[b] = t->open_hi;
    t->open_lo = t->open_hi = 0;
    return t->c.overlap_allreduce ? start_bucket(t, b) : HS_OK;
}

/* The backward pass's report that grad[lo, lo + count) is final: merged with the ranges before it
 * until the bucket holds bucket_min elements (small layers would otherwise pay a message each). */
static int grad_ready(void *user, size_t lo, size_t count)
{
    hs_surr_trainer *t = user;
    if (t->open_lo == t->open_hi) t->open_hi = lo + count;
    else if (lo + count != t->open_lo)
        return HS_FAIL(HS_ERR_RUNTIME, "surrogate: gradient range [%zu, %zu) does not adjoin [%zu, %zu)", lo, lo + count,
                       t->open_lo, t->open_hi);
    t->open_lo = lo;
    return t->open_hi - t->open_lo >= t->bucket_min ? close_bucket(t) : HS_OK;
}

/* After the backward pass: the last bucket, every all-reduce started (without overlap: now, in the
 * same order) and waited for.  The buckets must cover the gradient. */
static int finish_allreduce(hs_surr_trainer *t)
{
    HS_CHECK(close_bucket(t));
    size_t np = hs_surr_model_nparams(t->m), covered = 0;
    for (int b = 0; b < t->nbuckets; b++) covered += t->bhi[b] - t->blo[b];
    if (covered != np || (t->nbuckets > 0 && t->blo[t->nbuckets - 1] != 0))
        return HS_FAIL(HS_ERR_RUNTIME, "surrogate: the gradient buckets cover %zu of %zu parameters", covered, np);
    if (!t->c.overlap_allreduce)
        for (int b = 0; b < t->nbuckets; b++) HS_CHECK(start_bucket(t, b));
    for (int b = 0; b < t->nbuckets; b++) HS_CHECK(hs_comm_wait(&t->req[b]));
    return HS_OK;
}

/* Wait for every all-reduce still in flight (a step that failed after starting some): MPI must not
 * write into the gradient after it is freed, nor leave requests behind. */
static void drain(hs_surr_trainer *t)
{
    for (int b = 0; b < MAX_BUCKETS; b++)
        if (t->req[b]) (void)hs_comm_wait(&t->req[b]);
}

/* ------------------------------------------------------------------ creation */

int hs_surr_trainer_create(hs_ctx *ctx, const hs_surr_train_config *c, hs_surr_data *d, hs_surr_trainer **out)
{
    *out = NULL;
    hs_surr_trainer *t = calloc(1, sizeof *t);
    if (!t) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
    *out = t;
    t->ctx = ctx, t->c = *c, t->d = d;
    t->nwin = hs_surr_data_windows(d, 0);
    if (t->nwin < 1) return HS_FAIL(HS_ERR_RUNTIME, "surrogate: no training window");
    if (c->batch < ctx->size) return HS_FAIL(HS_ERR_RUNTIME, "surrogate: batch %d smaller than the rank count %d", c->batch, ctx->size);
    t->cap = (c->batch + ctx->size - 1) / ctx->size;
    const hs_surr_arch *a = &c->arch;
    t->frame_elems = (size_t)a->nvars * a->ny * a->nx;
    t->window_elems = (size_t)(a->k_in + a->k_out) * t->frame_elems;
    t->scale = c->loss_scale > 0 ? c->loss_scale : 1.0;
    t->prepared = -1, t->perm_epoch = -1;
    HS_CHECK(hs_surr_model_create(ctx, a, t->cap, &t->m));
    HS_CHECK(hs_surr_model_init(t->m, c->seed));
    HS_CHECK(hs_adam_create(ctx, hs_surr_model_nparams(t->m), c->beta1, c->beta2, c->eps, &t->adam));
    HS_CHECK(hs_comm_create(ctx, &t->gcomm));
    t->perm = malloc((size_t)t->nwin * sizeof *t->perm);
    t->bfile = malloc((size_t)t->cap * sizeof *t->bfile);
    t->bfirst = malloc((size_t)t->cap * sizeof *t->bfirst);
    if (!t->perm || !t->bfile || !t->bfirst) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
    size_t bytes = (size_t)t->cap * t->window_elems * hs_dtype_size(a->dtype);
    for (int k = 0; k < 2; k++) {
        HS_CHECK(hs_mem_alloc(ctx, bytes, &t->dev[k]));
        if (HS_ON_GPU(ctx)) {
            HS_CHECK(hs_host_alloc_pinned(ctx, bytes, &t->host[k]));
            HS_CHECK(hs_event_create(ctx, &t->ready[k]));
        }
    }
    if (HS_ON_GPU(ctx)) HS_CHECK(hs_stream_create(ctx, &t->copy_stream));
    HS_CHECK(hs_mem_alloc(ctx, (size_t)t->cap * a->k_out * t->frame_elems * sizeof(double), (void **)&t->sq));
    size_t bb = c->bucket_bytes ? c->bucket_bytes : BUCKET_BYTES;
    t->bucket_min = (bb + sizeof(double) - 1) / sizeof(double);
    if (ctx->size > 1) hs_surr_model_set_grad_ready(t->m, grad_ready, t);
    return HS_OK;
}

void hs_surr_trainer_destroy(hs_surr_trainer *t)
{
    if (!t) return;
    hs_ctx *ctx = t->ctx;
    if (t->copy_stream) hs_stream_sync(ctx, t->copy_stream);
    for (int k = 0; k < 2; k++) {
        hs_mem_free(ctx, t->dev[k]);
        if (t->host[k]) hs_host_free_pinned(ctx, t->host[k]);
        if (t->ready[k]) hs_event_destroy(ctx, t->ready[k]);
    }
    if (t->copy_stream) hs_stream_destroy(ctx, t->copy_stream);
    hs_mem_free(ctx, t->sq);
    hs_adam_destroy(t->adam);
    drain(t);
    hs_comm_destroy(t->gcomm);
    hs_surr_model_destroy(t->m);
    free(t->perm), free(t->bfile), free(t->bfirst);
    free(t);
}

/* ------------------------------------------------------------------ one step */

/* Sum of squared errors of the last forward pass over n samples against `target` (the window's
 * last m frames), and the loss's gradient (scaled by `scale`) into the model's dpred. */
static int batch_loss(hs_surr_trainer *t, int n, const void *target, double scale, double *sum)
{
    size_t count = (size_t)n * t->c.arch.k_out * t->frame_elems;
    HS_CHECK(hs_surr_mse(t->ctx, t->c.arch.dtype, count, hs_surr_model_pred(t->m), target, scale,
                         hs_surr_model_dpred(t->m), t->sq));
    return hs_reduce(t->ctx, HS_F64, HS_REDUCE_SUM, count, t->sq, sum);
}

static const void *targets(const hs_surr_trainer *t, const void *batch, int n)
{
    return (const char *)batch + (size_t)t->c.arch.k_in * n * t->frame_elems * hs_dtype_size(t->c.arch.dtype);
}

int hs_surr_trainer_step(hs_surr_trainer *t, double *loss)
{
    hs_ctx *ctx = t->ctx;
    hs_surr_model *m = t->m;
    const hs_surr_arch *a = &t->c.arch;
    int n;
    int64_t lo;
    share(t, &lo, &n);
    if (t->prepared != t->step) {
        t->slot = 0;
        HS_CHECK(prepare(t, t->step, t->slot));
    }
    int k = t->slot;
    if (HS_ON_GPU(ctx)) HS_CHECK(hs_stream_wait_event(ctx, NULL, t->ready[k]));
    double total = (double)t->c.batch * a->k_out * t->frame_elems;
    HS_CHECK(hs_surr_model_forward(m, n, t->dev[k]));
    double sum = 0;
    HS_CHECK(batch_loss(t, n, targets(t, t->dev[k], n), 2.0 * t->scale / total, &sum));
    t->nbuckets = 0, t->open_lo = t->open_hi = 0;
    int rc = hs_surr_model_backward(m); /* over several ranks, starts the all-reduces (grad_ready) */
    /* the next batch is assembled on the host while the device works (the other slot's last reader,
     * the step before this one, has finished: its loss was fetched) */
    if (rc == HS_OK && HS_ON_GPU(ctx)) {
        rc = prepare(t, t->step + 1, 1 - k);
        if (rc == HS_OK) t->slot = 1 - k, t->prepared = t->step + 1;
    }
    if (rc == HS_OK && ctx->size > 1) rc = finish_allreduce(t);
    if (rc != HS_OK) {
        drain(t);
        return hs_error_trace(rc, __FILE__, __LINE__, "hs_surr_trainer_step");
    }
    size_t np = hs_surr_model_nparams(m);
    double *grad = hs_surr_model_grad(m);
    if (ctx->size > 1) HS_CHECK(hs_allreduce_sum(ctx->comm, &sum, 1));
    *loss = sum / total;
    if (!isfinite(*loss))
        return HS_FAIL(HS_ERR_RUNTIME, "surrogate: the training loss became %g at step %lld (lower surrogate.lr)", *loss,
                       (long long)t->step);
    double norm;
    HS_CHECK(hs_nrm2(ctx, HS_F64, np, grad, &norm));
    norm /= t->scale;
    t->last_gnorm = norm;
    t->last_lr = hs_lr_at(&t->c.lr, t->step);
    if (!isfinite(norm)) { /* an overflow in the scaled gradient: skip the update, lower the scale */
        if (!t->c.dynamic_scale)
            return HS_FAIL(HS_ERR_RUNTIME, "surrogate: the gradient is not finite at step %lld (lower surrogate.lr or "
                           "surrogate.loss_scale)", (long long)t->step);
        t->scale /= 2, t->good = 0, t->skipped++;
    } else {
        double clip = t->c.clip > 0 && norm > t->c.clip ? t->c.clip / norm : 1.0;
        HS_CHECK(hs_adamw_step(t->adam, t->last_lr, t->c.weight_decay, clip / t->scale, hs_surr_model_params(m), grad));
        HS_CHECK(hs_surr_model_sync_params(m));
        if (t->c.dynamic_scale && ++t->good >= t->c.scale_window) t->scale *= 2, t->good = 0;
    }
    t->step++;
    return HS_OK;
}

/* ------------------------------------------------------------------ evaluation loss */

int hs_surr_trainer_eval_loss(hs_surr_trainer *t, int split, int64_t max, double *loss)
{
    hs_ctx *ctx = t->ctx;
    const hs_surr_arch *a = &t->c.arch;
    int64_t N = hs_surr_data_windows(t->d, split);
    if (max > 0 && N > max) N = max;
    *loss = 0;
    if (N == 0) return HS_OK;
    int64_t lo = N * ctx->rank / ctx->size, hi = N * (ctx->rank + 1) / ctx->size;
    int frames = a->k_in + a->k_out;
    double sum = 0;
    if (t->copy_stream) HS_CHECK(hs_stream_sync(ctx, t->copy_stream)); /* a prefetch may still read host[] */
    t->prepared = -1;                                                   /* the slots are reused here */
    for (int64_t w = lo; w < hi; w += t->cap) {
        int n = (int)(hi - w < t->cap ? hi - w : t->cap);
        for (int b = 0; b < n; b++) hs_surr_data_window(t->d, split, w + b, &t->bfile[b], &t->bfirst[b]);
        void *dst = HS_ON_GPU(ctx) ? t->host[0] : t->dev[0];
        HS_CHECK(hs_surr_data_fill(t->d, a->dtype, n, t->bfile, t->bfirst, frames, dst));
        if (HS_ON_GPU(ctx))
            HS_CHECK(hs_mem_copy(ctx, t->dev[0], t->host[0], (size_t)n * t->window_elems * hs_dtype_size(a->dtype), HS_COPY_H2D));
        HS_CHECK(hs_surr_model_forward(t->m, n, t->dev[0]));
        double s;
        HS_CHECK(batch_loss(t, n, targets(t, t->dev[0], n), 0.0, &s));
        sum += s;
    }
    if (ctx->size > 1) HS_CHECK(hs_allreduce_sum(ctx->comm, &sum, 1));
    *loss = sum / ((double)N * a->k_out * t->frame_elems);
    return HS_OK;
}

/* ------------------------------------------------------------------ state */

enum { CLOCK = 5 };

size_t hs_surr_trainer_state_count(const hs_surr_trainer *t) { return CLOCK + 3 * hs_surr_model_nparams(t->m); }

int hs_surr_trainer_state_get(hs_surr_trainer *t, double *v)
{
    size_t np = hs_surr_model_nparams(t->m), b = np * sizeof(double);
    double *mm, *vv;
    int64_t *st;
    HS_CHECK(hs_adam_state(t->adam, &mm, &vv, &st));
    v[0] = (double)t->step, v[1] = (double)*st, v[2] = t->scale, v[3] = (double)t->good, v[4] = (double)t->skipped;
    HS_CHECK(hs_mem_copy(t->ctx, v + CLOCK, hs_surr_model_params(t->m), b, HS_COPY_D2H));
    HS_CHECK(hs_mem_copy(t->ctx, v + CLOCK + np, mm, b, HS_COPY_D2H));
    return hs_mem_copy(t->ctx, v + CLOCK + 2 * np, vv, b, HS_COPY_D2H);
}

int hs_surr_trainer_state_set(hs_surr_trainer *t, const double *v)
{
    size_t np = hs_surr_model_nparams(t->m), b = np * sizeof(double);
    double *mm, *vv;
    int64_t *st;
    HS_CHECK(hs_adam_state(t->adam, &mm, &vv, &st));
    t->step = (int64_t)v[0], *st = (int64_t)v[1], t->scale = v[2], t->good = (int64_t)v[3], t->skipped = (int64_t)v[4];
    HS_CHECK(hs_mem_copy(t->ctx, hs_surr_model_params(t->m), v + CLOCK, b, HS_COPY_H2D));
    HS_CHECK(hs_mem_copy(t->ctx, mm, v + CLOCK + np, b, HS_COPY_H2D));
    HS_CHECK(hs_mem_copy(t->ctx, vv, v + CLOCK + 2 * np, b, HS_COPY_H2D));
    t->prepared = -1;
    return hs_surr_model_sync_params(t->m);
}
