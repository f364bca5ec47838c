/* Local FFT plans: argument checks, the layout description, and dispatch to FFTW or cuFFT. */
#include "kernels/fft/fft.h"

#include <stdlib.h>

#include "kernels/dispatch.h"
#include "kernels/fft/fft_impl.h"

struct hs_fft_plan {
    hs_ctx *ctx;
    hs_fft_desc d;
    int measure;   /* CPU planning effort when the plan was made */
    void *backend; /* FFTW plan cache or cuFFT handle; NULL for an empty (batch 0) plan */
};

static int g_cpu_measure;

void hs_fft_set_cpu_planning(int measure) { g_cpu_measure = measure ? 1 : 0; }

static const char *kind_name(int kind)
{
    static const char *nm[] = {"C2C", "R2C", "C2R"};
    return (unsigned)kind < 3 ? nm[kind] : "?";
}

/* Span of a strided array: 1 + sum (count-1)*stride over its loops (0 when any count is 0). */
static int64_t span_of(const int64_t *count, const int64_t *stride, int nloops)
{
    int64_t s = 1;
    for (int i = 0; i < nloops; i++) {
        if (count[i] == 0) return 0;
        s += (count[i] - 1) * stride[i];
    }
    return s;
}

static void set_spans(hs_fft_desc *d)
{
    int r = d->rank;
    int64_t c[5], si[5], so[5], pi = d->istride, po = d->ostride;
    for (int k = r - 1; k >= 0; k--) {
        c[k] = d->n[k];
        si[k] = pi;
        so[k] = po;
        pi *= d->inembed[k];
        po *= d->onembed[k];
    }
    c[r] = d->batch, si[r] = d->idist, so[r] = d->odist;
    c[r + 1] = d->outer, si[r + 1] = d->outer_idist, so[r + 1] = d->outer_odist;
    int64_t full = d->n[r - 1], half = full / 2 + 1;
    c[r - 1] = d->kind == HS_FFT_DESC_C2R ? half : full;
    d->in_span = span_of(c, si, r + 2);
    c[r - 1] = d->kind == HS_FFT_DESC_R2C ? half : full;
    d->out_span = span_of(c, so, r + 2);
}

/* The contiguous layout of `batch` packed transforms. */
static void contiguous_desc(int rank, const int64_t *n, int64_t batch, int kind, hs_dtype prec, hs_fft_desc *d)
{
    d->rank = rank;
    d->kind = kind;
    d->precision = prec;
    d->batch = batch;
    d->istride = d->ostride = 1;
    d->outer = 1;
    d->total = 1;
    int64_t half = n[rank - 1] / 2 + 1, lead = 1;
    for (int k = 0; k < rank; k++) {
        d->n[k] = d->inembed[k] = d->onembed[k] = n[k];
        d->total *= n[k];
        if (k < rank - 1) lead *= n[k];
    }
    if (kind == HS_FFT_DESC_R2C) d->onembed[rank - 1] = half;
    if (kind == HS_FFT_DESC_C2R) d->inembed[rank - 1] = half;
    d->idist = lead * d->inembed[rank - 1];
    d->odist = lead * d->onembed[rank - 1];
    d->outer_idist = d->idist * batch;
    d->outer_odist = d->odist * batch;
    set_spans(d);
}

static int check_common(hs_ctx *ctx, hs_dtype precision, hs_fft_plan **plan)
{
    if (!plan) return hs_input_error("fft", 0, NULL, "plan output pointer is NULL");
    *plan = NULL;
    if (!ctx) return hs_input_error("fft", 0, NULL, "context is NULL");
    if (precision != HS_F64 && precision != HS_F32)
        return hs_input_error("fft", 0, "precision", "FFT precision must be f64 or f32, not %s",
                              hs_dtype_name(precision));
    return HS_OK;
}

/* Make the backend plan for a filled-in description and hand out the object. */
static int plan_finish(hs_ctx *ctx, const hs_fft_desc *d, hs_fft_plan **plan)
{
    hs_fft_plan *p = calloc(1, sizeof *p);
    if (!p) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory for an FFT plan");
    p->ctx = ctx;
    p->d = *d;
    p->measure = g_cpu_measure;
    int rc = HS_OK;
    if (d->batch > 0 && d->outer > 0) {
        rc = HS_DISPATCH(ctx, hs_fft_create_cpu(d, ctx->nthreads, p->measure, &p->backend),
                         hs_fft_create_cuda(ctx->cuda, d, &p->backend));
    }
    if (rc != HS_OK) {
        hs_fft_plan_destroy(p);
        return hs_error_trace(rc, __FILE__, __LINE__, "FFT backend plan");
    }
    *plan = p;
    return HS_OK;
}

/* The arguments of a contiguous plan (hs_fft_plan_create, hs_fft_plan_create_hooked). */
static int check_contiguous(hs_ctx *ctx, int rank, const int64_t *n, int64_t batch, hs_fft_kind kind, hs_dtype precision,
                            hs_fft_plan **plan)
{
    HS_CHECK(check_common(ctx, precision, plan));
    if (rank < 1 || rank > 3) return hs_input_error("fft", 0, "rank", "FFT rank must be 1, 2 or 3, not %d", rank);
    if (!n) return hs_input_error("fft", 0, "n", "FFT sizes are NULL");
    for (int k = 0; k < rank; k++)
        if (n[k] < 1)
            return hs_input_error("fft", 0, "n", "FFT size n[%d] = %lld must be at least 1", k, (long long)n[k]);
    if (batch < 0) return hs_input_error("fft", 0, "batch", "FFT batch %lld is negative", (long long)batch);
    if (kind != HS_FFT_C2C && kind != HS_FFT_R2C && kind != HS_FFT_C2R)
        return hs_input_error("fft", 0, "kind", "unknown FFT kind %d", (int)kind);
    return HS_OK;
}

int hs_fft_plan_create(hs_ctx *ctx, int rank, const int64_t *n, int64_t batch, hs_fft_kind kind,
                       hs_dtype precision, hs_fft_plan **plan)
{
    HS_CHECK(check_contiguous(ctx, rank, n, batch, kind, precision, plan));
    hs_fft_desc d = {0};
    contiguous_desc(rank, n, batch, (int)kind, precision, &d);
    HS_CHECK(plan_finish(ctx, &d, plan));
    return HS_OK;
}

int hs_fft_plan_create_hooked(hs_ctx *ctx, int rank, const int64_t *n, int64_t batch, hs_fft_kind kind,
                              hs_dtype precision, const hs_fft_load_hook *hook, hs_fft_plan **plan)
{
    if (!hook || !hook->symbol || !hook->lto_ir || !hook->lto_ir_size)
        return hs_input_error("fft", 0, "hook", "load hook without a symbol or LTO-IR");
    HS_CHECK(check_contiguous(ctx, rank, n, batch, kind, precision, plan));
    hs_fft_desc d = {0};
    contiguous_desc(rank, n, batch, (int)kind, precision, &d);
    /* only the CUDA backend takes a hook (the desc's hook fields; the CPU backend ignores them) */
    if (HS_ON_GPU(ctx)) {
        d.hook_symbol = hook->symbol, d.hook_ir = hook->lto_ir;
        d.hook_ir_size = hook->lto_ir_size, d.hook_info = hook->info;
    }
    HS_CHECK(plan_finish(ctx, &d, plan));
    return HS_OK;
}

int hs_fft_plan_hooked(const hs_fft_plan *plan)
{
    if (!plan || !plan->backend || !plan->d.hook_symbol) return 0;
    return HS_DISPATCH(plan->ctx, 0, hs_fft_hooked_cuda(plan->backend));
}

int hs_fft_plan_create_strided(hs_ctx *ctx, int64_t n, int64_t stride, int64_t inner, int64_t inner_dist,
                               int64_t outer, int64_t outer_dist, hs_dtype precision, hs_fft_plan **plan)
{
    HS_CHECK(check_common(ctx, precision, plan));
    if (n < 1 || stride < 1 || inner < 0 || outer < 0 || inner_dist < 0 || outer_dist < 0)
        return hs_input_error("fft", 0, NULL,
                              "strided FFT needs n, stride >= 1 and non-negative batches and distances "
                              "(n %lld, stride %lld, inner %lld dist %lld, outer %lld dist %lld)",
                              (long long)n, (long long)stride, (long long)inner, (long long)inner_dist,
                              (long long)outer, (long long)outer_dist);
    hs_fft_desc d = {0};
    d.rank = 1;
    d.n[0] = d.inembed[0] = d.onembed[0] = n;
    d.kind = HS_FFT_DESC_C2C;
    d.precision = precision;
    d.batch = inner;
    d.idist = d.odist = inner_dist;
    d.istride = d.ostride = stride;
    d.outer = outer;
    d.outer_idist = d.outer_odist = outer_dist;
    d.total = n;
    set_spans(&d);
    HS_CHECK(plan_finish(ctx, &d, plan));
    return HS_OK;
}

int64_t hs_fft_in_elems(const hs_fft_plan *plan) { return plan ? plan->d.in_span : 0; }
int64_t hs_fft_out_elems(const hs_fft_plan *plan) { return plan ? plan->d.out_span : 0; }

static int check_execute(const hs_fft_plan *plan, int direction, const void *in, const void *out)
{
    if (!plan) return hs_input_error("fft", 0, NULL, "FFT plan is NULL");
    int kind = plan->d.kind;
    if (direction != HS_FFT_FORWARD && direction != HS_FFT_BACKWARD)
        return hs_input_error("fft", 0, "direction", "FFT direction must be HS_FFT_FORWARD (-1) or "
                              "HS_FFT_BACKWARD (+1), not %d", direction);
    if ((kind == HS_FFT_DESC_R2C && direction != HS_FFT_FORWARD) ||
        (kind == HS_FFT_DESC_C2R && direction != HS_FFT_BACKWARD))
        return hs_input_error("fft", 0, "direction", "an %s plan runs only %s", kind_name(kind),
                              kind == HS_FFT_DESC_R2C ? "forward" : "backward");
    if (!plan->backend) return HS_OK; /* an empty plan touches nothing */
    if (!in || !out) return hs_input_error("fft", 0, NULL, "FFT input or output array is NULL");
    if (kind != HS_FFT_DESC_C2C && in == out)
        return hs_input_error("fft", 0, NULL, "%s transforms must be out-of-place (in != out)", kind_name(kind));
    return HS_OK;
}

int hs_fft_execute(hs_fft_plan *plan, int direction, const void *in, void *out)
{
    HS_CHECK(check_execute(plan, direction, in, out));
    if (!plan->backend) return HS_OK;
    return HS_DISPATCH(plan->ctx, hs_fft_execute_cpu(plan->backend, &plan->d, direction, in, out),
                       hs_fft_execute_cuda(plan->backend, direction, in, out));
}

int hs_fft_execute_raw(hs_fft_plan *plan, int direction, const void *in, void *out)
{
    if (!plan->backend) return HS_OK;
    return HS_DISPATCH(plan->ctx, hs_fft_execute_cpu(plan->backend, &plan->d, direction, in, out),
                       hs_fft_execute_cuda(plan->backend, direction, in, out));
}

int hs_fft_normalize(hs_fft_plan *plan, void *data)
{
    if (!plan) return hs_input_error("fft", 0, NULL, "FFT plan is NULL");
    if (!plan->backend || plan->d.out_span == 0) return HS_OK;
    if (!data) return hs_input_error("fft", 0, NULL, "array to normalise is NULL");
    size_t count = (size_t)plan->d.out_span * (plan->d.kind == HS_FFT_DESC_C2R ? 1 : 2);
    double factor = 1.0 / (double)plan->d.total;
    return HS_DISPATCH(plan->ctx, hs_fft_scale_cpu(plan->d.precision, count, factor, data),
                       hs_fft_scale_cuda(plan->ctx->cuda, plan->d.precision, count, factor, data));
}

void hs_fft_plan_destroy(hs_fft_plan *plan)
{
    if (!plan) return;
    if (plan->backend) HS_DISPATCH(plan->ctx, hs_fft_destroy_cpu(plan->backend), hs_fft_destroy_cuda(plan->backend));
    free(plan);
}
