/* Global reductions of structured-grid fields: a local pass on the backend, then the ranks' values combined in rank order. */
#include <math.h>
#include <stdlib.h>

#include "kernels/dispatch.h"
#include "kernels/grid/grid.h"
#include "kernels/grid/grid_impl.h"

/* Error-free sum: s + c == a + b exactly (Knuth's two-sum), so no compensation is lost. */
static void two_sum_acc(double *s, double *c, double x)
{
    double t = *s + x, bp = t - *s;
    *c += (*s - (t - bp)) + (x - bp);
    *s = t;
}

static int local_reduce(hs_field *f, int op, double *v)
{
    hs_ctx *ctx = f->d->ctx;
    const int64_t *l = f->local;
    const void *origin = (const char *)f->data + hs_field_index(f, 0, 0, 0) * hs_field_esize(f);
    const int64_t sy = hs_field_stride_y(f), sz = hs_field_stride_z(f);
    if (f->dtype == HS_F16) return HS_FAIL(HS_ERR_RUNTIME, "field reductions: f16 fields are storage only");
    return HS_DISPATCH(ctx, hs_grid_reduce_cpu(f->dtype, origin, l[0], l[1], l[2], sy, sz, op, v),
                       hs_grid_reduce_cuda(ctx->cuda, f->dtype, origin, l[0], l[1], l[2], sy, sz, op, v));
}

/* Combine one value per rank in rank order, the same on every rank. */
static int combine_ranks(hs_field *f, int op, double *v)
{
    hs_ctx *ctx = f->d->ctx;
    double *all = malloc((size_t)ctx->size * sizeof *all);
    if (!all) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory for a reduction");
    int rc = hs_host_allgather(f->d->cart, HS_F64, v, all, 1);
    if (rc != HS_OK) {
        free(all);
        return hs_error_trace(rc, __FILE__, __LINE__, "allgather of field reduction partials");
    }
    double s = 0, c = 0, m = all[0];
    for (int r = 0; r < ctx->size; r++) {
        two_sum_acc(&s, &c, all[r]);
        m = op == HS_GRID_RED_MIN ? hs_grid_min_nan(m, all[r]) : hs_grid_max_nan(m, all[r]);
    }
    *v = (op == HS_GRID_RED_SUM || op == HS_GRID_RED_SUMSQ) ? s + c : m;
    free(all);
    return HS_OK;
}

int hs_field_reduce(hs_field *f, hs_field_op op, double *result)
{
    static const int local_op[] = {HS_GRID_RED_SUM, HS_GRID_RED_MIN, HS_GRID_RED_MAX, HS_GRID_RED_SUMSQ,
                                   HS_GRID_RED_MAXABS};
    if ((unsigned)op > HS_FIELD_MAXABS) return hs_input_error("field", 0, NULL, "unknown reduction %d", (int)op);
    double v = 0;
    HS_CHECK(local_reduce(f, local_op[op], &v));
    HS_CHECK(combine_ranks(f, local_op[op], &v));
    *result = op == HS_FIELD_NORM2 ? sqrt(v) : v;
    return HS_OK;
}

int hs_field_sum(hs_field *f, double *result) { return hs_field_reduce(f, HS_FIELD_SUM, result); }
int hs_field_max(hs_field *f, double *result) { return hs_field_reduce(f, HS_FIELD_MAX, result); }
int hs_field_min(hs_field *f, double *result) { return hs_field_reduce(f, HS_FIELD_MIN, result); }
int hs_field_norm2(hs_field *f, double *result) { return hs_field_reduce(f, HS_FIELD_NORM2, result); }
int hs_field_maxabs(hs_field *f, double *result) { return hs_field_reduce(f, HS_FIELD_MAXABS, result); }
