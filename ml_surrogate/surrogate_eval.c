/* Forecasts from a trained surrogate and their scores against persistence and climatology (RMSE, ACC). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/comm/comm.h"
#include "kernels/memory.h"
#include "kernels/nn/conv.h"
#include "ml_surrogate/surrogate.h"

/* Device buffers of one batch: the inputs, and the prediction widened to fp64. */
typedef struct {
    hs_ctx *ctx;
    hs_surr_model *m;
    const hs_surr_data *d;
    int cap;
    size_t fs;          /* values of one frame (V ny nx) */
    void *host, *dev;   /* k frames of cap samples, compute type */
    double *pred64, *pred_host;
} runner;

static int runner_open(runner *r, hs_ctx *ctx, hs_surr_model *m, const hs_surr_data *d)
{
    memset(r, 0, sizeof *r);
    const hs_surr_arch *a = hs_surr_model_arch(m);
    r->ctx = ctx, r->m = m, r->d = d, r->cap = hs_surr_model_cap(m);
    r->fs = (size_t)a->nvars * a->ny * a->nx;
    size_t in = (size_t)a->k_in * r->cap * r->fs * hs_dtype_size(a->dtype), out = (size_t)a->k_out * r->cap * r->fs;
    r->host = malloc(in + 8);
    r->pred_host = malloc(out * sizeof(double) + 8);
    if (!r->host || !r->pred_host) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
    HS_CHECK(hs_mem_alloc(ctx, in, &r->dev));
    return hs_mem_alloc(ctx, out * sizeof(double), (void **)&r->pred64);
}

static void runner_close(runner *r)
{
    free(r->host), free(r->pred_host);
    hs_mem_free(r->ctx, r->dev), hs_mem_free(r->ctx, r->pred64);
}

/* Forecast n <= cap states; pred_host gets [m][n][V][ny][nx] in physical units. */
static int run_batch(runner *r, int n, const int *files, const int64_t *lasts)
{
    const hs_surr_arch *a = hs_surr_model_arch(r->m);
    int64_t firsts[4096];
    if (n > 4096) return HS_FAIL(HS_ERR_RUNTIME, "surrogate: batch of %d forecasts (4096 at most)", n);
    for (int b = 0; b < n; b++) firsts[b] = lasts[b] - a->k_in + 1;
    HS_CHECK(hs_surr_data_fill(r->d, a->dtype, n, files, firsts, a->k_in, r->host));
    HS_CHECK(hs_mem_copy(r->ctx, r->dev, r->host, (size_t)a->k_in * n * r->fs * hs_dtype_size(a->dtype), HS_COPY_H2D));
    HS_CHECK(hs_surr_model_forward(r->m, n, r->dev));
    size_t count = (size_t)a->k_out * n * r->fs;
    HS_CHECK(hs_conv_cast(r->ctx, a->dtype, HS_F64, count, hs_surr_model_pred(r->m), 0, r->pred64));
    HS_CHECK(hs_mem_copy(r->ctx, r->pred_host, r->pred64, count * sizeof(double), HS_COPY_D2H));
    const double *mean = hs_surr_data_mean(r->d), *sd = hs_surr_data_std(r->d);
    size_t hw = (size_t)a->ny * a->nx;
    for (size_t i = 0; i < count; i++) {
        int v = (int)((i / hw) % (size_t)a->nvars);
        r->pred_host[i] = r->pred_host[i] * sd[v] + mean[v];
    }
    return HS_OK;
}

/* Frame `frame` of a file in physical units into out (V ny nx). */
static void physical_frame(const hs_surr_data *d, int nvars, size_t hw, int file, int64_t frame, double *out)
{
    const float *f = hs_surr_data_frame(d, file, frame);
    for (size_t p = 0; p < (size_t)nvars * hw; p++) out[p] = (double)f[p];
}

int hs_surr_forecast(hs_ctx *ctx, hs_surr_model *m, const hs_surr_data *d, int n, const int *files, const int64_t *lasts,
                     double *out)
{
    const hs_surr_arch *a = hs_surr_model_arch(m);
    runner r;
    int rc = runner_open(&r, ctx, m, d);
    size_t per = (size_t)a->k_out * r.fs; /* one forecast */
    memset(out, 0, (size_t)n * per * sizeof *out);
    int lo = (int)((int64_t)n * ctx->rank / ctx->size), hi = (int)((int64_t)n * (ctx->rank + 1) / ctx->size);
    for (int s = lo; rc == HS_OK && s < hi; s += r.cap) {
        int nb = hi - s < r.cap ? hi - s : r.cap;
        rc = run_batch(&r, nb, files + s, lasts + s);
        for (int b = 0; rc == HS_OK && b < nb; b++)
            for (int j = 0; j < a->k_out; j++)
                memcpy(out + (size_t)(s + b) * per + (size_t)j * r.fs, r.pred_host + ((size_t)j * nb + b) * r.fs,
                       r.fs * sizeof *out);
    }
    runner_close(&r);
    HS_CHECK(rc);
    if (ctx->size > 1) HS_CHECK(hs_host_allreduce(ctx->comm, HS_F64, HS_COMM_SUM, out, (size_t)n * per));
    return HS_OK;
}

/* ------------------------------------------------------------------ scores */

void hs_surr_scores_free(hs_surr_scores *s)
{
    free(s->rmse), free(s->rmse_persistence), free(s->rmse_climatology), free(s->acc), free(s->acc_persistence);
    free(s->truth), free(s->forecast);
    memset(s, 0, sizeof *s);
}

/* Spatial RMSE of f against o, and the anomaly correlation of f and o about c. */
static void score(const double *f, const double *o, const double *c, size_t hw, double *rmse, double *acc)
{
    double se = 0, fo = 0, ff = 0, oo = 0;
    for (size_t p = 0; p < hw; p++) {
        double e = f[p] - o[p], fa = f[p] - c[p], oa = o[p] - c[p];
        se += e * e, fo += fa * oa, ff += fa * fa, oo += oa * oa;
    }
    *rmse = sqrt(se / (double)hw);
    *acc = ff > 0 && oo > 0 ? fo / sqrt(ff * oo) : 0.0;
}

int hs_surr_evaluate(hs_ctx *ctx, hs_surr_model *m, const hs_surr_data *d, int64_t max, hs_surr_scores *s)
{
    const hs_surr_arch *a = hs_surr_model_arch(m);
    int V = a->nvars, M = a->k_out;
    size_t hw = (size_t)a->ny * a->nx, fs = (size_t)V * hw, nvl = (size_t)V * M;
    memset(s, 0, sizeof *s);
    s->nvars = V, s->leads = M;
    int64_t N = hs_surr_data_windows(d, 2);
    if (max > 0 && N > max) N = max;
    s->windows = N;
    /* sums over this rank's windows: five score arrays, then the example */
    double *sums = calloc(5 * nvl + 2 * (size_t)M * fs + 1, sizeof *sums);
    double *truth = malloc(fs * sizeof *truth), *pers = malloc(fs * sizeof *pers);
    int *files = malloc((size_t)hs_surr_model_cap(m) * sizeof *files + 1);
    int64_t *lasts = malloc((size_t)hs_surr_model_cap(m) * sizeof *lasts + 1);
    if (!sums || !truth || !pers || !files || !lasts) {
        free(sums), free(truth), free(pers), free(files), free(lasts);
        return HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
    }
    runner r;
    int rc = runner_open(&r, ctx, m, d);
    int64_t lo = N * ctx->rank / ctx->size, hi = N * (ctx->rank + 1) / ctx->size;
    const double *clim = hs_surr_data_climatology(d);
    double *ex_truth = sums + 5 * nvl, *ex_fc = ex_truth + (size_t)M * fs;
    for (int64_t w0 = lo; rc == HS_OK && w0 < hi; w0 += r.cap) {
        int nb = (int)(hi - w0 < r.cap ? hi - w0 : r.cap);
        for (int b = 0; b < nb; b++) {
            int64_t first;
            hs_surr_data_window(d, 2, w0 + b, &files[b], &first);
            lasts[b] = first + a->k_in - 1;
        }
        rc = run_batch(&r, nb, files, lasts);
        for (int b = 0; rc == HS_OK && b < nb; b++) {
            physical_frame(d, V, hw, files[b], lasts[b], pers);
            for (int j = 0; j < M; j++) {
                physical_frame(d, V, hw, files[b], lasts[b] + 1 + j, truth);
                const double *fc = r.pred_host + ((size_t)j * nb + b) * fs;
                if (w0 + b == 0) /* the example: the first test window, on rank 0 */
                    memcpy(ex_truth + (size_t)j * fs, truth, fs * sizeof *truth), memcpy(ex_fc + (size_t)j * fs, fc, fs * sizeof *fc);
                for (int v = 0; v < V; v++) {
                    size_t o = (size_t)v * hw, k = (size_t)v * M + j;
                    double rm, am, rp, ap, rc_, ac;
                    score(fc + o, truth + o, clim + o, hw, &rm, &am);
                    score(pers + o, truth + o, clim + o, hw, &rp, &ap);
                    score(clim + o, truth + o, clim + o, hw, &rc_, &ac);
                    sums[k] += rm, sums[nvl + k] += rp, sums[2 * nvl + k] += rc_, sums[3 * nvl + k] += am, sums[4 * nvl + k] += ap;
                }
            }
        }
    }
    runner_close(&r);
    free(truth), free(pers), free(files), free(lasts);
    size_t total = 5 * nvl + 2 * (size_t)M * fs;
    if (rc == HS_OK && ctx->size > 1) rc = hs_host_allreduce(ctx->comm, HS_F64, HS_COMM_SUM, sums, total);
    if (rc != HS_OK) {
        free(sums);
        return rc;
    }
    double **dst[5] = {&s->rmse, &s->rmse_persistence, &s->rmse_climatology, &s->acc, &s->acc_persistence};
    for (int q = 0; q < 5; q++) {
        *dst[q] = malloc(nvl * sizeof(double));
        if (!*dst[q]) {
            free(sums);
            return HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
        }
        for (size_t k = 0; k < nvl; k++) (*dst[q])[k] = N > 0 ? sums[q * nvl + k] / (double)N : 0.0;
    }
    s->truth = malloc((size_t)M * fs * sizeof(double)), s->forecast = malloc((size_t)M * fs * sizeof(double));
    if (!s->truth || !s->forecast) {
        free(sums);
        return HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
    }
    memcpy(s->truth, ex_truth, (size_t)M * fs * sizeof(double)), memcpy(s->forecast, ex_fc, (size_t)M * fs * sizeof(double));
    if (N > 0) {
        int64_t first;
        hs_surr_data_window(d, 2, 0, &s->example_file, &first);
        s->example_last = first + a->k_in - 1;
    }
    free(sums);
    return HS_OK;
}
