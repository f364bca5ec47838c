/* Benchmark of the FFT family: the wrapper against the raw cuFFT / FFTW call, and the distributed FFT. */
#include <stdint.h>
#include <stdio.h>

#include "bench/bench_util.h"
#include "kernels/blas/blas.h"
#include "kernels/fft/dfft.h"
#include "kernels/fft/fft.h"
#include "kernels/memory.h"

static hs_ctx *ctx;

typedef struct {
    hs_fft_plan *plan;
    hs_dfft_plan *dplan;
    int dir;
    void *in, *out;
} fft_job;

static int run_wrapper(void *a) { fft_job *j = a; return hs_fft_execute(j->plan, j->dir, j->in, j->out); }
static int run_raw(void *a) { fft_job *j = a; return hs_fft_execute_raw(j->plan, j->dir, j->in, j->out); }
static int run_dfft(void *a) { fft_job *j = a; return hs_dfft_execute(j->dplan, j->dir, j->in, j->out); }

static size_t real_size(hs_dtype p) { return p == HS_F64 ? sizeof(double) : sizeof(float); }

/* Time one local plan through the wrapper and raw; bytes = one read of the input and one write of
 * the output (a lower bound: large FFTs make several passes). */
static void bench_local(const char *name, int rank, const int64_t *n, int64_t batch, hs_fft_kind kind, hs_dtype p,
                        int warm, int reps)
{
    char size[64];
    int len = 0;
    for (int k = 0; k < rank; k++) {
        len += snprintf(size + len, sizeof size - (size_t)len, "%s%lld", k ? "x" : "", (long long)n[k]);
    }
    if (batch > 1) snprintf(size + len, sizeof size - (size_t)len, " b%lld", (long long)batch);
    fft_job j = {NULL, NULL, kind == HS_FFT_C2R ? HS_FFT_BACKWARD : HS_FFT_FORWARD, NULL, NULL};
    bench_check(hs_fft_plan_create(ctx, rank, n, batch, kind, p, &j.plan), "plan");
    size_t rs = real_size(p);
    size_t in_b = (size_t)hs_fft_in_elems(j.plan) * rs * (kind == HS_FFT_R2C ? 1 : 2);
    size_t out_b = (size_t)hs_fft_out_elems(j.plan) * rs * (kind == HS_FFT_C2R ? 1 : 2);
    bench_check(hs_mem_alloc(ctx, in_b, &j.in), "input");
    bench_check(hs_mem_alloc(ctx, out_b, &j.out), "output");
    bench_check(hs_fill(ctx, p, in_b / rs, 0.5, j.in), "fill");
    double t = bench_time(run_wrapper, &j, warm, reps);
    double tr = bench_time(run_raw, &j, warm, reps);
    int gpu = HS_ON_GPU(ctx);
    bench_row(name, size, hs_dtype_name(p), t, (double)(in_b + out_b), 0, gpu ? "cuFFT raw exec" : "FFTW raw exec", tr);
    hs_fft_plan_destroy(j.plan);
    hs_mem_free(ctx, j.in);
    hs_mem_free(ctx, j.out);
}

/* Forward and backward distributed FFT over every rank; bytes are this rank's share (one read and
 * one write of its slabs), so the fraction compares with one device's copy bandwidth. */
static void bench_distributed(const int64_t *n, hs_fft_kind kind, hs_dtype p, int warm, int reps)
{
    fft_job j = {NULL, NULL, HS_FFT_FORWARD, NULL, NULL};
    bench_check(hs_dfft_plan_create(ctx, ctx->comm, 3, n, kind, p, &j.dplan), "dfft plan");
    size_t in_e, out_e;
    bench_check(hs_dfft_local_layout(j.dplan, NULL, NULL, NULL, NULL, &in_e, &out_e), "layout");
    size_t rs = real_size(p), in_b = in_e * rs * (kind == HS_FFT_C2C ? 2 : 1), out_b = out_e * 2 * rs;
    bench_check(hs_mem_alloc(ctx, in_b, &j.in), "dfft input");
    bench_check(hs_mem_alloc(ctx, out_b, &j.out), "dfft output");
    bench_check(hs_fill(ctx, p, in_b / rs, 0.5, j.in), "fill");
    double tf = bench_time(run_dfft, &j, warm, reps);
    /* the backward reads the spectrum the forward left */
    void *t = j.in;
    j.in = j.out, j.out = t, j.dir = HS_FFT_BACKWARD;
    double tb = bench_time(run_dfft, &j, warm, reps);
    /* on one rank the peer is the local 3D FFT of the same array: the ratio is the price of the
     * transpose and of the strided dimension-0 pass */
    double lf = 0, lb = 0;
    if (ctx->size == 1) {
        fft_job l = {NULL, NULL, HS_FFT_FORWARD, j.out, j.in};
        bench_check(hs_fft_plan_create(ctx, 3, n, 1, kind == HS_FFT_C2C ? HS_FFT_C2C : HS_FFT_R2C, p, &l.plan), "plan");
        lf = bench_time(run_wrapper, &l, warm, reps);
        hs_fft_plan_destroy(l.plan);
        l.in = j.in, l.out = j.out, l.dir = HS_FFT_BACKWARD;
        bench_check(hs_fft_plan_create(ctx, 3, n, 1, kind == HS_FFT_C2C ? HS_FFT_C2C : HS_FFT_C2R, p, &l.plan), "plan");
        lb = bench_time(run_wrapper, &l, warm, reps);
        hs_fft_plan_destroy(l.plan);
    }
    const char *peer = ctx->size == 1 ? "local 3D FFT" : NULL;
    char size[64];
    snprintf(size, sizeof size, "%lldx%lldx%lld np%d", (long long)n[0], (long long)n[1], (long long)n[2], ctx->size);
    bench_row(kind == HS_FFT_C2C ? "dfft slab C2C fwd" : "dfft slab R2C fwd", size, hs_dtype_name(p), tf,
              (double)(in_b + out_b), 0, peer, lf);
    bench_row(kind == HS_FFT_C2C ? "dfft slab C2C bwd" : "dfft slab C2R bwd", size, hs_dtype_name(p), tb,
              (double)(in_b + out_b), 0, peer, lb);
    hs_dfft_plan_destroy(j.dplan);
    hs_mem_free(ctx, j.in);
    hs_mem_free(ctx, j.out);
}

int main(int argc, char **argv)
{
    ctx = bench_init(&argc, &argv);
    int gpu = HS_ON_GPU(ctx);
    int warm = gpu ? 3 : 1, reps = gpu ? 20 : 5;
    int64_t c3 = gpu ? 512 : 128, l1 = gpu ? (int64_t)1 << 20 : (int64_t)1 << 16, b1 = gpu ? 64 : 16;
    int64_t n3[] = {c3, c3, c3}, n2[] = {gpu ? 8192 : 1024, gpu ? 8192 : 1024};
    if (ctx->size == 1) {
        /* local transforms only when one process owns the device, so the rows mean what they say */
        bench_local("fft C2C 3D", 3, n3, 1, HS_FFT_C2C, HS_F64, warm, reps);
        bench_local("fft C2C 3D", 3, n3, 1, HS_FFT_C2C, HS_F32, warm, reps);
        bench_local("fft R2C 3D", 3, n3, 1, HS_FFT_R2C, HS_F64, warm, reps);
        bench_local("fft C2R 3D", 3, n3, 1, HS_FFT_C2R, HS_F64, warm, reps);
        bench_local("fft C2C 2D", 2, n2, 1, HS_FFT_C2C, HS_F64, warm, reps);
        bench_local("fft C2C 1D batched", 1, &l1, b1, HS_FFT_C2C, HS_F32, warm, reps);
        bench_local("fft C2C 1D batched", 1, &l1, b1 / 2, HS_FFT_C2C, HS_F64, warm, reps);
        bench_local("fft R2C 1D batched", 1, &l1, b1, HS_FFT_R2C, HS_F32, warm, reps);
    }
    bench_distributed(n3, HS_FFT_C2C, HS_F64, warm, reps);
    bench_distributed(n3, HS_FFT_R2C, HS_F64, warm, reps);
    bench_distributed(n3, HS_FFT_C2C, HS_F32, warm, reps);
    bench_finish();
    return 0;
}
