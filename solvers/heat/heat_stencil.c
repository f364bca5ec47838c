/* The heat solver's grid kernels: layout bookkeeping and dispatch to the CPU or CUDA backend. */
#include "solvers/heat/heat_stencil.h"

#include <string.h>

#include "solvers/heat/heat_stencil_impl.h"

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
#if HS_HAVE_CUDA
    if (HS_ON_GPU(T->d->ctx)) return hs_heat_apply_cuda(T->d->ctx->cuda, &L, T->data, out);
#endif
    return hs_heat_apply_cpu(&L, T->data, out);
}

int hs_heat_fill_ghosts(hs_field *T, const hs_bc_kind bc[3][2], const double value[3][2], const double dx[3],
                        int homogeneous)
{
    const hs_decomp *d = T->d;
    for (int dim = 0; dim < d->ndim; dim++)
        for (int side = 0; side < 2; side++) {
            if (bc[dim][side] == HS_BC_PERIODIC) continue;
            int at_edge = side ? d->offset[dim] + d->local[dim] == d->global[dim] : d->offset[dim] == 0;
            if (!at_edge) continue;
            hs_heat_ghosts G;
            memset(&G, 0, sizeof G);
            layout(T, G.stride, &G.origin);
            for (int e = 0; e < 3; e++) {
                G.local[e] = d->local[e];
                G.hw[e] = T->hw[e];
            }
            G.dim = dim;
            G.side = side;
            G.kind = (int)bc[dim][side];
            G.value = homogeneous ? 0.0 : value[dim][side];
            G.dx = dx[dim];
#if HS_HAVE_CUDA
            if (HS_ON_GPU(T->d->ctx)) {
                HS_CHECK(hs_heat_ghosts_cuda(T->d->ctx->cuda, &G, T->data));
                continue;
            }
#endif
            HS_CHECK(hs_heat_ghosts_cpu(&G, T->data));
        }
    return HS_OK;
}

int hs_heat_load_interior(hs_field *T, const double *contiguous)
{
    int64_t stride[3], origin;
    layout(T, stride, &origin);
#if HS_HAVE_CUDA
    if (HS_ON_GPU(T->d->ctx)) return hs_heat_load_cuda(T->d->ctx->cuda, stride, origin, T->d->local, contiguous, T->data);
#endif
    return hs_heat_load_cpu(stride, origin, T->d->local, contiguous, T->data);
}

int hs_heat_split_boxes(const hs_field *T, int margin, hs_box *interior, hs_box shell[6])
{
    const hs_decomp *d = T->d;
    hs_box rest;
    for (int e = 0; e < 3; e++) {
        rest.lo[e] = 0;
        rest.hi[e] = d->local[e];
    }
    /* only faces that exchange (a neighbour, or a periodic image) wait for halos */
    int exchanges[3][2] = {{0}};
    for (int dim = 0; dim < d->ndim; dim++)
        for (int side = 0; side < 2; side++) exchanges[dim][side] = d->neighbor[dim][side] != MPI_PROC_NULL;
    for (int dim = 0; dim < d->ndim; dim++)
        if ((exchanges[dim][0] || exchanges[dim][1]) && rest.hi[dim] - rest.lo[dim] <= 2 * (int64_t)margin) {
            /* too thin to have an inside: all of it waits for the halos */
            *interior = rest;
            interior->hi[0] = interior->lo[0];
            shell[0] = rest;
            return 1;
        }
    int ns = 0;
    /* peel a slab off each exchanging face, z first so that the slabs are contiguous planes */
    for (int dim = d->ndim - 1; dim >= 0 && margin > 0; dim--)
        for (int side = 0; side < 2; side++) {
            if (!exchanges[dim][side]) continue;
            hs_box slab = rest;
            if (side == 0) {
                slab.hi[dim] = rest.lo[dim] + margin;
                rest.lo[dim] += margin;
            } else {
                slab.lo[dim] = rest.hi[dim] - margin;
                rest.hi[dim] -= margin;
            }
            shell[ns++] = slab;
        }
    *interior = rest;
    return ns;
}
