/* Distributed slab FFT: local FFT plans, the pack / Alltoallv / unpack transpose, and dispatch. */
#include "kernels/fft/dfft.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/fft/fft_impl.h"
#include "kernels/memory.h"
#include "kernels/dispatch.h"

struct hs_dfft_plan {
    hs_ctx *ctx;
    MPI_Comm comm;
    int nprocs, me;
    int rank, real;
    hs_dtype precision;
    int64_t n[3];            /* n[2] = 1 in 2D */
    int64_t m1, t;           /* spectral extent of dimension 1 and the run length (see dfft.h) */
    size_t cbytes;           /* bytes of one complex value */
    int64_t *in_start, *in_count, *out_start, *out_count; /* per rank */
    int *fsend, *fsdis, *frecv, *frdis; /* forward exchange in complex values; backward swaps them */
    hs_fft_plan *trail, *trail_back, *dim0;
    void *work, *work_real;  /* device: trailing-FFT output / dim-0 output; C2R input (real plans) */
    void *dsend, *drecv;     /* device pack buffers for the off-rank blocks */
    void *hsend, *hrecv;     /* pinned host staging (CUDA only) */
    size_t xfer;             /* complex values in the larger of the send / receive totals */
};

static void split(int64_t n, int p, int64_t *start, int64_t *count)
{
    int64_t s = 0;
    for (int r = 0; r < p; r++) {
        count[r] = n / p + (r < n % p);
        start[r] = s;
        s += count[r];
    }
}

static char *at(const hs_dfft_plan *p, const void *base, int64_t off) { return (char *)base + (size_t)off * p->cbytes; }

/* dst[r*drs + c*dcs + k] = src[r*srs + c*scs + k] for rows x cols runs of p->t complex values. */
static int copy_runs(hs_dfft_plan *p, int64_t rows, int64_t cols, const void *src, int64_t soff, int64_t srs,
                     int64_t scs, void *dst, int64_t doff, int64_t drs, int64_t dcs)
{
    if (rows == 0 || cols == 0 || p->t == 0) return HS_OK;
    const char *s = at(p, src, soff);
    char *d = at(p, dst, doff);
    return HS_DISPATCH(p->ctx, hs_dfft_copy_runs_cpu(p->precision, rows, cols, p->t, s, srs, scs, d, drs, dcs),
                       hs_dfft_copy_runs_cuda(p->ctx->cuda, p->precision, rows, cols, p->t, s, srs, scs, d, drs, dcs));
}

static int exchange(hs_dfft_plan *p, int forward)
{
    if (p->nprocs == 1) return HS_OK;
    const int *sc = forward ? p->fsend : p->frecv, *sd = forward ? p->fsdis : p->frdis;
    const int *rc = forward ? p->frecv : p->fsend, *rd = forward ? p->frdis : p->fsdis;
    MPI_Datatype type = p->precision == HS_F64 ? MPI_C_DOUBLE_COMPLEX : MPI_C_FLOAT_COMPLEX;
    size_t sbytes = (size_t)(sd[p->nprocs - 1] + sc[p->nprocs - 1]) * p->cbytes;
    size_t rbytes = (size_t)(rd[p->nprocs - 1] + rc[p->nprocs - 1]) * p->cbytes;
    if (!HS_ON_GPU(p->ctx)) {
        HS_MPI_CHECK(MPI_Alltoallv(p->dsend, sc, sd, type, p->drecv, rc, rd, type, p->comm));
        return HS_OK;
    }
    if (sbytes) HS_CHECK(hs_mem_copy(p->ctx, p->hsend, p->dsend, sbytes, HS_COPY_D2H));
    HS_MPI_CHECK(MPI_Alltoallv(p->hsend, sc, sd, type, p->hrecv, rc, rd, type, p->comm));
    if (rbytes) HS_CHECK(hs_mem_copy(p->ctx, p->drecv, p->hrecv, rbytes, HS_COPY_H2D));
    return HS_OK;
}

static int forward(hs_dfft_plan *p, const void *in, void *out)
{
    int64_t t = p->t, m1 = p->m1, n0 = p->n[0], me = p->me;
    int64_t ic = p->in_count[me], oc = p->out_count[me];
    HS_CHECK(hs_fft_execute(p->trail, HS_FFT_FORWARD, in, p->work));
    for (int d = 0; d < p->nprocs; d++)
        if (d != me)
            HS_CHECK(copy_runs(p, ic, p->out_count[d], p->work, p->out_start[d] * t, m1 * t, t, p->dsend, p->fsdis[d],
                               p->out_count[d] * t, t));
    HS_CHECK(copy_runs(p, ic, oc, p->work, p->out_start[me] * t, m1 * t, t, out, p->in_start[me] * t, t, n0 * t));
    HS_CHECK(exchange(p, 1));
    for (int s = 0; s < p->nprocs; s++)
        if (s != me)
            HS_CHECK(copy_runs(p, p->in_count[s], oc, p->drecv, p->frdis[s], oc * t, t, out, p->in_start[s] * t, t,
                               n0 * t));
    HS_CHECK(hs_fft_execute(p->dim0, HS_FFT_FORWARD, out, out));
    return HS_OK;
}

static int backward(hs_dfft_plan *p, const void *in, void *out)
{
    int64_t t = p->t, m1 = p->m1, n0 = p->n[0], me = p->me;
    int64_t ic = p->in_count[me], oc = p->out_count[me];
    void *target = p->real ? p->work_real : out;
    HS_CHECK(hs_fft_execute(p->dim0, HS_FFT_BACKWARD, in, p->work));
    for (int d = 0; d < p->nprocs; d++)
        if (d != me)
            HS_CHECK(copy_runs(p, p->in_count[d], oc, p->work, p->in_start[d] * t, t, n0 * t, p->dsend, p->frdis[d],
                               oc * t, t));
    HS_CHECK(copy_runs(p, ic, oc, p->work, p->in_start[me] * t, t, n0 * t, target, p->out_start[me] * t, m1 * t, t));
    HS_CHECK(exchange(p, 0));
    for (int s = 0; s < p->nprocs; s++)
        if (s != me)
            HS_CHECK(copy_runs(p, ic, p->out_count[s], p->drecv, p->fsdis[s], p->out_count[s] * t, t, target,
                               p->out_start[s] * t, m1 * t, t));
    if (p->real)
        HS_CHECK(hs_fft_execute(p->trail_back, HS_FFT_BACKWARD, target, out));
    else
        HS_CHECK(hs_fft_execute(p->trail, HS_FFT_BACKWARD, out, out));
    return HS_OK;
}

int hs_dfft_execute(hs_dfft_plan *plan, int direction, const void *in, void *out)
{
    if (!plan) return hs_input_error("dfft", 0, NULL, "distributed FFT plan is NULL");
    if (direction == HS_FFT_FORWARD) return forward(plan, in, out);
    if (direction == HS_FFT_BACKWARD) return backward(plan, in, out);
    return hs_input_error("dfft", 0, "direction", "FFT direction must be HS_FFT_FORWARD (-1) or HS_FFT_BACKWARD (+1), not %d",
                          direction);
}

/* Forward exchange counts and displacements in complex values (the self block stays at 0). */
static int set_counts(hs_dfft_plan *p)
{
    int64_t so = 0, ro = 0, me = p->me;
    for (int r = 0; r < p->nprocs; r++) {
        int64_t s = r == me ? 0 : p->in_count[me] * p->out_count[r] * p->t;
        int64_t v = r == me ? 0 : p->in_count[r] * p->out_count[me] * p->t;
        if (so + s > INT_MAX || ro + v > INT_MAX)
            return HS_FAIL(HS_ERR_RUNTIME, "distributed FFT: rank %d exchanges more than 2^31 complex values; "
                           "use more ranks", p->me);
        p->fsend[r] = (int)s, p->fsdis[r] = (int)so;
        p->frecv[r] = (int)v, p->frdis[r] = (int)ro;
        so += s, ro += v;
    }
    p->xfer = (size_t)(so > ro ? so : ro);
    return HS_OK;
}

static int alloc_tables(hs_dfft_plan *p)
{
    int np = p->nprocs;
    p->in_start = calloc(4 * (size_t)np, sizeof(int64_t));
    p->fsend = calloc(4 * (size_t)np, sizeof(int));
    if (!p->in_start || !p->fsend) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory for a distributed FFT plan");
    p->in_count = p->in_start + np, p->out_start = p->in_start + 2 * np, p->out_count = p->in_start + 3 * np;
    p->fsdis = p->fsend + np, p->frecv = p->fsend + 2 * np, p->frdis = p->fsend + 3 * np;
    split(p->n[0], np, p->in_start, p->in_count);
    split(p->m1, np, p->out_start, p->out_count);
    return HS_OK;
}

static int make_local_plans(hs_dfft_plan *p)
{
    int64_t ic = p->in_count[p->me], oc = p->out_count[p->me];
    hs_ctx *ctx = p->ctx;
    HS_CHECK(hs_fft_plan_create(ctx, p->rank - 1, p->n + 1, ic, p->real ? HS_FFT_R2C : HS_FFT_C2C, p->precision, &p->trail));
    if (p->real) HS_CHECK(hs_fft_plan_create(ctx, p->rank - 1, p->n + 1, ic, HS_FFT_C2R, p->precision, &p->trail_back));
    HS_CHECK(hs_fft_plan_create_strided(ctx, p->n[0], p->t, p->t, 1, oc, p->n[0] * p->t, p->precision, &p->dim0));
    return HS_OK;
}

static int make_buffers(hs_dfft_plan *p)
{
    hs_ctx *ctx = p->ctx;
    int64_t a = p->in_count[p->me] * p->m1 * p->t, b = p->out_count[p->me] * p->n[0] * p->t;
    HS_CHECK(hs_mem_alloc(ctx, (size_t)(a > b ? a : b) * p->cbytes, &p->work));
    if (p->real) HS_CHECK(hs_mem_alloc(ctx, (size_t)a * p->cbytes, &p->work_real));
    HS_CHECK(hs_mem_alloc(ctx, p->xfer * p->cbytes, &p->dsend));
    HS_CHECK(hs_mem_alloc(ctx, p->xfer * p->cbytes, &p->drecv));
    if (HS_ON_GPU(ctx) && p->xfer > 0) {
        HS_CHECK(hs_host_alloc_pinned(ctx, p->xfer * p->cbytes, &p->hsend));
        HS_CHECK(hs_host_alloc_pinned(ctx, p->xfer * p->cbytes, &p->hrecv));
    }
    return HS_OK;
}

static int check_args(hs_ctx *ctx, int rank, const int64_t *n, hs_fft_kind kind, hs_dtype precision)
{
    if (!ctx) return hs_input_error("dfft", 0, NULL, "context is NULL");
    if (rank != 2 && rank != 3)
        return hs_input_error("dfft", 0, "rank", "distributed FFT rank must be 2 or 3, not %d", rank);
    if (!n) return hs_input_error("dfft", 0, "n", "distributed FFT sizes are NULL");
    for (int k = 0; k < rank; k++)
        if (n[k] < 1)
            return hs_input_error("dfft", 0, "n", "distributed FFT size n[%d] = %lld must be at least 1", k,
                                  (long long)n[k]);
    if (kind != HS_FFT_C2C && kind != HS_FFT_R2C && kind != HS_FFT_C2R)
        return hs_input_error("dfft", 0, "kind", "unknown FFT kind %d", (int)kind);
    if (precision != HS_F64 && precision != HS_F32)
        return hs_input_error("dfft", 0, "precision", "FFT precision must be f64 or f32, not %s", hs_dtype_name(precision));
    return HS_OK;
}

static int setup(hs_dfft_plan *p, MPI_Comm comm, int rank, const int64_t *n, hs_fft_kind kind)
{
    HS_MPI_CHECK(MPI_Comm_dup(comm, &p->comm));
    HS_MPI_CHECK(MPI_Comm_size(p->comm, &p->nprocs));
    HS_MPI_CHECK(MPI_Comm_rank(p->comm, &p->me));
    p->rank = rank;
    p->real = kind != HS_FFT_C2C;
    p->n[0] = n[0], p->n[1] = n[1], p->n[2] = rank == 3 ? n[2] : 1;
    p->m1 = rank == 2 && p->real ? n[1] / 2 + 1 : n[1];
    p->t = rank == 2 ? 1 : p->real ? n[2] / 2 + 1 : n[2];
    p->cbytes = 2 * (p->precision == HS_F64 ? sizeof(double) : sizeof(float));
    HS_CHECK(alloc_tables(p));
    HS_CHECK(set_counts(p));
    HS_CHECK(make_local_plans(p));
    HS_CHECK(make_buffers(p));
    return HS_OK;
}

int hs_dfft_plan_create(hs_ctx *ctx, MPI_Comm comm, int rank, const int64_t *n, hs_fft_kind kind, hs_dtype precision,
                        hs_dfft_plan **plan)
{
    if (!plan) return hs_input_error("dfft", 0, NULL, "plan output pointer is NULL");
    *plan = NULL;
    HS_CHECK(check_args(ctx, rank, n, kind, precision));
    hs_dfft_plan *p = calloc(1, sizeof *p);
    if (!p) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory for a distributed FFT plan");
    p->ctx = ctx;
    p->comm = MPI_COMM_NULL;
    p->precision = precision;
    int rc = setup(p, comm, rank, n, kind);
    if (rc != HS_OK) {
        hs_dfft_plan_destroy(p);
        return hs_error_trace(rc, __FILE__, __LINE__, "distributed FFT plan");
    }
    *plan = p;
    return HS_OK;
}

int hs_dfft_local_layout(const hs_dfft_plan *p, int64_t *in_start, int64_t *in_count, int64_t *out_start,
                         int64_t *out_count, size_t *in_elems, size_t *out_elems)
{
    if (!p) return hs_input_error("dfft", 0, NULL, "distributed FFT plan is NULL");
    int me = p->me;
    if (in_start) *in_start = p->in_start[me];
    if (in_count) *in_count = p->in_count[me];
    if (out_start) *out_start = p->out_start[me];
    if (out_count) *out_count = p->out_count[me];
    if (in_elems) *in_elems = (size_t)(p->in_count[me] * p->n[1] * p->n[2]);
    if (out_elems) *out_elems = (size_t)(p->out_count[me] * p->n[0] * p->t);
    return HS_OK;
}

void hs_dfft_spectral_shape(const hs_dfft_plan *p, int64_t shape[3])
{
    shape[0] = p->n[0], shape[1] = p->m1, shape[2] = p->t;
}

int hs_dfft_normalize(hs_dfft_plan *p, void *data)
{
    if (!p) return hs_input_error("dfft", 0, NULL, "distributed FFT plan is NULL");
    size_t count = (size_t)(p->in_count[p->me] * p->n[1] * p->n[2]) * (p->real ? 1 : 2);
    if (count == 0) return HS_OK;
    if (!data) return hs_input_error("dfft", 0, NULL, "array to normalise is NULL");
    double factor = 1.0 / ((double)p->n[0] * (double)p->n[1] * (double)p->n[2]);
    return HS_DISPATCH(p->ctx, hs_fft_scale_cpu(p->precision, count, factor, data),
                       hs_fft_scale_cuda(p->ctx->cuda, p->precision, count, factor, data));
}

void hs_dfft_plan_destroy(hs_dfft_plan *p)
{
    if (!p) return;
    hs_ctx *ctx = p->ctx;
    hs_fft_plan_destroy(p->trail);
    hs_fft_plan_destroy(p->trail_back);
    hs_fft_plan_destroy(p->dim0);
    hs_ctx_sync(ctx); /* queued transforms may still read the work buffers */
    hs_mem_free(ctx, p->work);
    hs_mem_free(ctx, p->work_real);
    hs_mem_free(ctx, p->dsend);
    hs_mem_free(ctx, p->drecv);
    if (p->hsend) hs_host_free_pinned(ctx, p->hsend);
    if (p->hrecv) hs_host_free_pinned(ctx, p->hrecv);
    free(p->in_start);
    free(p->fsend);
    if (p->comm != MPI_COMM_NULL) MPI_Comm_free(&p->comm);
    free(p);
}
