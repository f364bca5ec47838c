/* Self-check cases of the sparse family: distributed SpMV and PCG on a 3D Laplacian against host references. */
#include <math.h>
#include <stdlib.h>

#include "kernels/sparse/dcsr.h"
#include "kernels/memory.h"
#include "kernels/sparse/pcg.h"
#include "solvers/selftest/selftest.h"

/* A smooth field of the global index, so every rank evaluates its part without the whole vector. */
static double field(int64_t g, uint64_t seed) { return sin(0.001 * (double)g + 0.1 * (double)(seed % 97)) + 0.5; }

typedef struct {
    int64_t n[3], N, start, count, nnz;
    int64_t *rp, *ci;
    double *v;
    hs_dcsr *A;
} lap_part;

/* This rank's block of the m^3 Laplacian, as host arrays and as an hs_dcsr over ctx->comm. */
static int lap_part_create(hs_ctx *ctx, int64_t m, lap_part *p)
{
    p->n[0] = p->n[1] = p->n[2] = m;
    p->N = m * m * m;
    p->start = p->N * ctx->rank / ctx->size;
    p->count = p->N * (ctx->rank + 1) / ctx->size - p->start;
    p->A = NULL;
    HS_CHECK(hs_laplacian_rows(3, p->n, p->start, p->count, &p->rp, &p->ci, &p->v, &p->nnz));
    return hs_dcsr_create(ctx, ctx->comm, p->start, p->count, p->N, p->rp, p->ci, p->v, &p->A);
}

static void lap_part_free(lap_part *p)
{
    hs_dcsr_destroy(p->A);
    free(p->rp), free(p->ci), free(p->v);
}

/* y = A f on this rank's rows, on the host. */
static void host_apply(const lap_part *p, uint64_t seed, double *y)
{
    for (int64_t i = 0; i < p->count; i++) {
        double s = 0;
        for (int64_t k = p->rp[i]; k < p->rp[i + 1]; k++) s += p->v[k] * field(p->ci[k], seed);
        y[i] = s;
    }
}

/* ||a - b|| / ||b|| over all ranks. */
static int global_rel_err(hs_ctx *ctx, const double *a, const double *b, int64_t n, double *err)
{
    double s[2] = {0, 0};
    for (int64_t i = 0; i < n; i++) s[0] += (a[i] - b[i]) * (a[i] - b[i]), s[1] += b[i] * b[i];
    HS_CHECK(hs_allreduce_sum(ctx->comm, s, 2));
    *err = s[1] > 0 ? sqrt(s[0] / s[1]) : sqrt(s[0]);
    return HS_OK;
}

static int spmv_check(hs_ctx *ctx, lap_part *p, uint64_t seed, double *err)
{
    size_t bytes = (size_t)(p->count > 0 ? p->count : 1) * sizeof(double);
    double *x = malloc(bytes), *ref = malloc(bytes), *got = malloc(bytes), *dx = NULL, *dy = NULL;
    if (!x || !ref || !got) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
    for (int64_t i = 0; i < p->count; i++) x[i] = field(p->start + i, seed);
    host_apply(p, seed, ref);
    int rc = hs_mem_alloc(ctx, bytes, (void **)&dx);
    if (rc == HS_OK) rc = hs_mem_alloc(ctx, bytes, (void **)&dy);
    if (rc == HS_OK) rc = hs_mem_copy(ctx, dx, x, bytes, HS_COPY_H2D);
    if (rc == HS_OK) rc = hs_dcsr_spmv(p->A, 1.0, dx, 0.0, dy);
    if (rc == HS_OK) rc = hs_mem_copy(ctx, got, dy, bytes, HS_COPY_D2H);
    if (rc == HS_OK) rc = global_rel_err(ctx, got, ref, p->count, err);
    hs_mem_free(ctx, dx), hs_mem_free(ctx, dy);
    free(x), free(ref), free(got);
    return rc;
}

/* Distributed SpMV of the 3D Laplacian (about n rows) against the host loop; collective. */
int hs_selftest_sparse(hs_ctx *ctx, int64_t n, hs_selftest_result *r)
{
    int64_t m = (int64_t)cbrt((double)n) > 2 ? (int64_t)cbrt((double)n) : 2;
    lap_part p;
    int rc = lap_part_create(ctx, m, &p);
    if (rc == HS_OK) rc = spmv_check(ctx, &p, r->seed, &r->error);
    lap_part_free(&p);
    return rc;
}

static int pcg_check(hs_ctx *ctx, lap_part *p, uint64_t seed, double rtol, double *err)
{
    size_t bytes = (size_t)(p->count > 0 ? p->count : 1) * sizeof(double);
    double *xe = malloc(bytes), *b = malloc(bytes), *x = malloc(bytes), *db = NULL, *dx = NULL;
    if (!xe || !b || !x) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
    for (int64_t i = 0; i < p->count; i++) xe[i] = field(p->start + i, seed);
    host_apply(p, seed, b);
    hs_linop op = hs_dcsr_linop(p->A);
    hs_pcg_opts o = hs_pcg_default_opts();
    o.rtol = rtol;
    hs_pcg_result res = {0, 0, 0, 0, NULL};
    int rc = hs_mem_alloc(ctx, bytes, (void **)&db);
    if (rc == HS_OK) rc = hs_mem_alloc(ctx, bytes, (void **)&dx);
    if (rc == HS_OK) rc = hs_mem_copy(ctx, db, b, bytes, HS_COPY_H2D);
    if (rc == HS_OK) rc = hs_mem_zero(ctx, dx, bytes);
    if (rc == HS_OK) rc = hs_pcg_solve(&op, db, dx, &o, &res);
    if (rc == HS_OK) rc = hs_mem_copy(ctx, x, dx, bytes, HS_COPY_D2H);
    if (rc == HS_OK) rc = global_rel_err(ctx, x, xe, p->count, err);
    if (rc == HS_OK && !res.converged) *err = INFINITY;
    hs_pcg_result_free(&res);
    hs_mem_free(ctx, db), hs_mem_free(ctx, dx);
    free(xe), free(b), free(x);
    return rc;
}

/* Jacobi PCG on the distributed 3D Laplacian (at most 40^3 rows) with a manufactured solution, to
 * rtol 1e-10; the tolerance is the bound cond(A) * rtol on the relative error.  Collective. */
int hs_selftest_pcg(hs_ctx *ctx, int64_t n, hs_selftest_result *r)
{
    int64_t m = (int64_t)cbrt((double)n);
    m = m < 3 ? 3 : m > 40 ? 40 : m;
    const double rtol = 1e-10;
    double lo = 3 * (2 - 2 * cos(M_PI / (double)(m + 1))), hi = 3 * (2 - 2 * cos(M_PI * (double)m / (double)(m + 1)));
    r->tolerance = rtol * hi / lo;
    lap_part p;
    int rc = lap_part_create(ctx, m, &p);
    if (rc == HS_OK) rc = pcg_check(ctx, &p, r->seed, rtol, &r->error);
    lap_part_free(&p);
    return rc;
}
