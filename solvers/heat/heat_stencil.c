/* The heat solver's operator: layout bookkeeping and dispatch to the CPU or CUDA backend. */
#include "solvers/heat/heat_stencil.h"

#include <string.h>

#include "solvers/heat/heat_stencil_impl.h"
#include "kernels/dispatch.h"

/* Layout strides of the field (the real ones, also in unused dimensions). */
static void layout(const hs_field *f, int64_t stride[3], int64_t *origin)
{
    stride[0] = 1;
    stride[1] = hs_field_stride_y(f);
    stride[2] = hs_field_stride_z(f);
    *origin = (int64_t)hs_field_index(f, 0, 0, 0);
}

int hs_heat_apply(hs_field *T, const hs_heat_op *op, double a, double b, double c, const hs_box *box, void *out,
                  int out_contiguous)
{
    hs_heat_launch L;
    memset(&L, 0, sizeof L);
    int64_t stride[3];
    layout(T, stride, &L.origin);
    for (int d = 0; d < 3; d++) {
        /* a zero stride marks a dimension without a stencil */
        L.stride[d] = d < op->ndim ? stride[d] : 0;
        L.local[d] = T->d->local[d];
        L.lo[d] = box->lo[d];
        L.hi[d] = box->hi[d];
        L.inv_dx2[d] = d < op->ndim ? op->inv_dx2[d] : 0.0;
    }
    L.order = op->order;
    L.alpha = op->alpha;
    L.inv_rhoc = op->inv_rhoc;
    L.q_const = op->q_const;
    L.k = op->k;
    L.q = op->q;
    L.a = a;
    L.b = b;
    L.c = c;
    L.out_contiguous = out_contiguous;
    L.kernel = op->gpu_kernel;
    return HS_DISPATCH(T->d->ctx, hs_heat_apply_cpu(&L, T->data, out),
                       hs_heat_apply_cuda(T->d->ctx->cuda, &L, T->data, out));
}
