/* Self-check of the structured-grid family: periodic halo exchange with corners, a reduction and a gather against host references. */
#include <math.h>
#include <stdlib.h>

#include "kernels/grid/grid.h"
#include "kernels/memory.h"
#include "solvers/selftest/selftest.h"

/* Positive, so that relative errors of the sum mean something; exact copies are compared bitwise. */
static double fn(int64_t i, int64_t j, int64_t k) { return 3.0 + sin(0.1 * i) + cos(0.2 * j) + 0.5 * sin(0.3 * k); }

static int64_t wrap(int64_t g, int64_t n) { return (g + n) % n; }

/* Largest |got - fn| / max|fn| over every cell of the allocation, halos included (all periodic). */
static int check_halos(hs_field *f, double *err)
{
    const hs_decomp *d = f->d;
    double *all = malloc(f->count * sizeof *all);
    if (!all) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
    int rc = hs_mem_copy(d->ctx, all, f->data, f->count * sizeof *all, HS_COPY_D2H);
    const int *h = f->hw;
    *err = 0;
    for (int64_t k = -h[2]; rc == HS_OK && k < d->local[2] + h[2]; k++)
        for (int64_t j = -h[1]; j < d->local[1] + h[1]; j++)
            for (int64_t i = -h[0]; i < d->local[0] + h[0]; i++) {
                double want = fn(wrap(d->offset[0] + i, d->global[0]), wrap(d->offset[1] + j, d->global[1]),
                                 wrap(d->offset[2] + k, d->global[2]));
                *err = fmax(*err, fabs(all[hs_field_index(f, i, j, k)] - want) / 4.5);
            }
    free(all);
    return rc;
}

static int fill(hs_field *f)
{
    const hs_decomp *d = f->d;
    size_t n = (size_t)(d->local[0] * d->local[1] * d->local[2]), p = 0;
    double *v = malloc(n * sizeof *v);
    if (!v) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
    for (int64_t k = 0; k < d->local[2]; k++)
        for (int64_t j = 0; j < d->local[1]; j++)
            for (int64_t i = 0; i < d->local[0]; i++) v[p++] = fn(d->offset[0] + i, d->offset[1] + j, d->offset[2] + k);
    int rc = hs_field_fill(f, -1.0);
    if (rc == HS_OK) rc = hs_field_set_interior(f, v);
    free(v);
    return rc;
}

/* Relative error of the field sum and of the gathered array (on rank 0) against host loops. */
static int check_sum_gather(hs_field *f, double *err)
{
    const int64_t *g = f->d->global;
    size_t n = (size_t)(g[0] * g[1] * g[2]);
    int root = f->d->ctx->rank == 0;
    double *all = root ? malloc(n * sizeof *all) : NULL, sum = 0;
    if (root && !all) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
    HS_CHECK(hs_field_sum(f, &sum));
    int rc = hs_field_gather(f, 0, all);
    long double ref = 0;
    double gerr = 0;
    for (int64_t k = 0; k < g[2]; k++)
        for (int64_t j = 0; j < g[1]; j++)
            for (int64_t i = 0; i < g[0]; i++) {
                double v = fn(i, j, k);
                ref += v;
                if (root) gerr = fmax(gerr, fabs(all[(k * g[1] + j) * g[0] + i] - v) / 4.5);
            }
    *err = fmax(gerr, fabs(sum - (double)ref) / (double)ref);
    free(all);
    return rc;
}

int hs_selftest_grid(hs_ctx *ctx, int64_t n, hs_selftest_result *r)
{
    /* a cube of about n cells (at most 200^3, to stay quick), wide enough for any split of the ranks */
    int64_t side = (int64_t)cbrt((double)n);
    if (side > 200) side = 200;
    if (side < 8) side = 8;
    if (side < 2 * ctx->size) side = 2 * ctx->size;
    const int64_t g[3] = {side, side + 1, side - 1};
    const int per[3] = {1, 1, 1};
    hs_decomp *d = NULL;
    hs_field *f = NULL;
    HS_CHECK(hs_decomp_create(ctx, 3, g, per, NULL, 2, &d));
    int rc = hs_field_create(d, HS_F64, 2, &f);
    double e1 = 0, e2 = 0;
    if (rc == HS_OK) rc = hs_field_set_corners(f, 1);
    if (rc == HS_OK) rc = fill(f);
    if (rc == HS_OK) rc = hs_halo_exchange(f);
    if (rc == HS_OK) rc = check_halos(f, &e1);
    if (rc == HS_OK) rc = check_sum_gather(f, &e2);
    hs_field_destroy(f);
    hs_decomp_destroy(d);
    HS_CHECK(rc);
    r->error = fmax(e1, e2);
    HS_CHECK(hs_allreduce_max(ctx->comm, &r->error, 1));
    return HS_OK;
}
