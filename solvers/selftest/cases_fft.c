/* Self-check case of the FFT family: local C2C / R2C and the distributed FFT against a host DFT. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/fft/dfft.h"
#include "kernels/fft/fft.h"
#include "kernels/memory.h"
#include "kernels/rng/rng.h"
#include "solvers/selftest/selftest.h"

int hs_selftest_fft(hs_ctx *ctx, int64_t n, hs_selftest_result *r);

/* Forward DFT along axis `ax` of a complex n[0] x n[1] x n[2] array, in place, summed in long
 * double with exact integer phase reduction: the three axes in turn give the 3D reference in
 * O(N (n0 + n1 + n2)) operations. */
static int dft_axis(double *x, const int64_t *n, int ax)
{
    int64_t len = n[ax], stride = ax == 2 ? 1 : ax == 1 ? n[2] : n[1] * n[2];
    long double *tw = malloc(2 * (size_t)len * sizeof *tw);
    double *line = malloc(2 * (size_t)len * sizeof *line);
    if (!tw || !line) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    for (int64_t m = 0; m < len; m++) {
        long double a = -2 * 3.14159265358979323846264338327950288L * m / len;
        tw[2 * m] = cosl(a), tw[2 * m + 1] = sinl(a);
    }
    int64_t total = n[0] * n[1] * n[2];
    for (int64_t base = 0; base < total; base++) {
        int64_t pos = (base / stride) % len;
        if (pos != 0) continue; /* visit each line once, from its first element */
        for (int64_t j = 0; j < len; j++) memcpy(line + 2 * j, x + 2 * (base + j * stride), 2 * sizeof(double));
        for (int64_t k = 0; k < len; k++) {
            long double re = 0, im = 0;
            for (int64_t j = 0; j < len; j++) {
                int64_t m = j * k % len;
                re += line[2 * j] * tw[2 * m] - line[2 * j + 1] * tw[2 * m + 1];
                im += line[2 * j] * tw[2 * m + 1] + line[2 * j + 1] * tw[2 * m];
            }
            x[2 * (base + k * stride)] = (double)re;
            x[2 * (base + k * stride) + 1] = (double)im;
        }
    }
    free(tw);
    free(line);
    return HS_OK;
}

static double rel_err(const double *a, const double *b, size_t count, double sums[2])
{
    sums[0] = sums[1] = 0;
    for (size_t i = 0; i < count; i++) {
        sums[0] += (a[i] - b[i]) * (a[i] - b[i]);
        sums[1] += b[i] * b[i];
    }
    return sums[1] > 0 ? sqrt(sums[0] / sums[1]) : sqrt(sums[0]);
}

/* Local C2C and R2C of the whole array on this rank's device against the reference spectrum. */
static int local_errors(hs_ctx *ctx, const int64_t *n, const double *x, const double *ref, double *err)
{
    int64_t N = n[0] * n[1] * n[2], h = n[2] / 2 + 1, H = n[0] * n[1] * h;
    size_t cb = 2 * (size_t)N * sizeof(double);
    double *back = malloc(cb), *xr = malloc((size_t)N * sizeof(double)), *rh = malloc(2 * (size_t)H * sizeof(double));
    void *din = NULL, *dout = NULL;
    if (!back || !xr || !rh) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    HS_CHECK(hs_mem_alloc(ctx, cb, &din));
    HS_CHECK(hs_mem_alloc(ctx, cb, &dout));
    hs_fft_plan *c2c, *r2c;
    double s[2];
    HS_CHECK(hs_fft_plan_create(ctx, 3, n, 1, HS_FFT_C2C, HS_F64, &c2c));
    HS_CHECK(hs_mem_copy(ctx, din, x, cb, HS_COPY_H2D));
    HS_CHECK(hs_fft_execute(c2c, HS_FFT_FORWARD, din, dout));
    HS_CHECK(hs_mem_copy(ctx, back, dout, cb, HS_COPY_D2H));
    double e1 = rel_err(back, ref, 2 * (size_t)N, s);
    /* R2C of the real part; its reference is the DFT of a real array: recomputed on the host */
    for (int64_t i = 0; i < N; i++) xr[i] = x[2 * i];
    HS_CHECK(hs_fft_plan_create(ctx, 3, n, 1, HS_FFT_R2C, HS_F64, &r2c));
    HS_CHECK(hs_mem_copy(ctx, din, xr, (size_t)N * sizeof(double), HS_COPY_H2D));
    HS_CHECK(hs_fft_execute(r2c, HS_FFT_FORWARD, din, dout));
    HS_CHECK(hs_mem_copy(ctx, back, dout, 2 * (size_t)H * sizeof(double), HS_COPY_D2H));
    double *full = calloc(2 * (size_t)N, sizeof(double));
    if (!full) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    for (int64_t i = 0; i < N; i++) full[2 * i] = xr[i];
    for (int ax = 0; ax < 3; ax++) HS_CHECK(dft_axis(full, n, ax));
    for (int64_t l = 0; l < n[0] * n[1]; l++)
        memcpy(rh + 2 * l * h, full + 2 * l * n[2], 2 * (size_t)h * sizeof(double));
    double e2 = rel_err(back, rh, 2 * (size_t)H, s);
    *err = e1 > e2 ? e1 : e2;
    hs_fft_plan_destroy(c2c);
    hs_fft_plan_destroy(r2c);
    hs_mem_free(ctx, din);
    hs_mem_free(ctx, dout);
    free(back), free(xr), free(rh), free(full);
    return HS_OK;
}

/* The distributed C2C over every rank: each rank checks its transposed slab of the reference. */
static int distributed_error(hs_ctx *ctx, const int64_t *n, const double *x, const double *ref, double *err)
{
    hs_dfft_plan *plan;
    HS_CHECK(hs_dfft_plan_create(ctx, ctx->comm, 3, n, HS_FFT_C2C, HS_F64, &plan));
    int64_t is, ic, os, oc;
    size_t ie, oe;
    HS_CHECK(hs_dfft_local_layout(plan, &is, &ic, &os, &oc, &ie, &oe));
    void *din = NULL, *dout = NULL;
    HS_CHECK(hs_mem_alloc(ctx, 2 * ie * sizeof(double), &din));
    HS_CHECK(hs_mem_alloc(ctx, 2 * oe * sizeof(double), &dout));
    HS_CHECK(hs_mem_copy(ctx, din, x + 2 * is * n[1] * n[2], 2 * ie * sizeof(double), HS_COPY_H2D));
    HS_CHECK(hs_dfft_execute(plan, HS_FFT_FORWARD, din, dout));
    HS_CHECK(hs_ctx_sync(ctx));
    double *got = malloc(2 * oe * sizeof(double) + 16), *want = malloc(2 * oe * sizeof(double) + 16);
    if (!got || !want) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    HS_CHECK(hs_mem_copy(ctx, got, dout, 2 * oe * sizeof(double), HS_COPY_D2H));
    for (int64_t j = 0; j < oc; j++)
        for (int64_t i = 0; i < n[0]; i++)
            memcpy(want + 2 * (j * n[0] + i) * n[2], ref + 2 * (i * n[1] + os + j) * n[2], 2 * (size_t)n[2] * sizeof(double));
    double s[2];
    rel_err(got, want, 2 * oe, s);
    HS_CHECK(hs_allreduce_sum(ctx->comm, s, 2));
    *err = s[1] > 0 ? sqrt(s[0] / s[1]) : sqrt(s[0]);
    hs_dfft_plan_destroy(plan);
    hs_mem_free(ctx, din);
    hs_mem_free(ctx, dout);
    free(got), free(want);
    return HS_OK;
}

/* Collective over ctx->comm.  The shape grows slowly with n (non-powers of two, odd last size). */
int hs_selftest_fft(hs_ctx *ctx, int64_t n, hs_selftest_result *r)
{
    int64_t s = n >= 1000000 ? 2 : 1;
    int64_t shape[3] = {12 * s, 10 * s, 9 * s}, N = shape[0] * shape[1] * shape[2];
    double *x = malloc(2 * (size_t)N * sizeof(double)), *ref = malloc(2 * (size_t)N * sizeof(double));
    if (!x || !ref) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    for (int64_t i = 0; i < 2 * N; i++) x[i] = hs_rng_u01(r->seed, 0xF0, (uint64_t)i) * 2 - 1;
    memcpy(ref, x, 2 * (size_t)N * sizeof(double));
    for (int ax = 0; ax < 3; ax++) HS_CHECK(dft_axis(ref, shape, ax));
    double e_local = 0, e_dist = 0;
    HS_CHECK(local_errors(ctx, shape, x, ref, &e_local));
    HS_CHECK(distributed_error(ctx, shape, x, ref, &e_dist));
    HS_CHECK(hs_allreduce_max(ctx->comm, &e_local, 1)); /* every rank reports the same verdict */
    r->error = e_local > e_dist ? e_local : e_dist;
    free(x);
    free(ref);
    return HS_OK;
}
