/* Structured grids: boundary conditions (ghost filling at the domain's walls) and the interior/shell split for overlapped exchange. */
#include <string.h>

#include "kernels/grid/grid.h"
#include "kernels/grid/grid_impl.h"
#include "kernels/dispatch.h"

hs_box hs_field_ghost_box(const hs_field *f, int dim, int side)
{
    hs_box b;
    for (int e = 0; e < 3; e++) {
        b.lo[e] = -f->hw[e];
        b.hi[e] = f->local[e] + f->hw[e];
    }
    b.lo[dim] = side ? f->local[dim] : -f->hw[dim];
    b.hi[dim] = side ? f->local[dim] + f->hw[dim] : 0;
    return b;
}

/* Whether this rank's box touches face (dim, side) of the global domain. */
static int at_wall(const hs_field *f, int dim, int side)
{
    return side ? f->offset[dim] + f->local[dim] == f->global[dim] : f->offset[dim] == 0;
}

static int bc_args(const hs_field *f, const hs_bc bc[3][2])
{
    static const char *sides[2] = {"low", "high"};
    for (int dim = 0; dim < f->d->ndim; dim++)
        for (int side = 0; side < 2; side++) {
            const hs_bc *b = &bc[dim][side];
            if ((unsigned)b->kind > HS_BC_CUSTOM)
                return hs_input_error("boundary", 0, NULL, "unknown boundary kind %d on the %s face of dimension %d",
                                      (int)b->kind, sides[side], dim);
            if ((b->kind == HS_BC_PERIODIC) != (f->d->periodic[dim] != 0))
                return hs_input_error("boundary", 0, NULL,
                                      "the %s face of dimension %d is %s but the decomposition is %s there",
                                      sides[side], dim, b->kind == HS_BC_PERIODIC ? "periodic" : "not periodic",
                                      f->d->periodic[dim] ? "periodic" : "not");
            if (b->kind == HS_BC_CUSTOM && !b->hook)
                return hs_input_error("boundary", 0, NULL, "the custom boundary on the %s face of dimension %d has no hook",
                                      sides[side], dim);
        }
    return HS_OK;
}

static int fill_face(hs_field *f, const hs_bc *b, int dim, int side, const double dx[3], int homogeneous)
{
    hs_grid_ghosts G;
    memset(&G, 0, sizeof G);
    G.stride[0] = 1;
    G.stride[1] = hs_field_stride_y(f);
    G.stride[2] = hs_field_stride_z(f);
    G.origin = (int64_t)hs_field_index(f, 0, 0, 0);
    for (int e = 0; e < 3; e++) {
        G.local[e] = f->local[e];
        G.hw[e] = f->hw[e];
    }
    G.dim = dim;
    G.side = side;
    G.kind = (int)b->kind;
    G.node = f->face_dim == dim;
    G.value = homogeneous ? 0.0 : b->value;
    G.dx = dx[dim];
    hs_ctx *ctx = f->d->ctx;
    return HS_DISPATCH(ctx, hs_grid_ghosts_cpu(f->dtype, &G, f->data),
                       hs_grid_ghosts_cuda(ctx->cuda, f->dtype, &G, f->data));
}

int hs_field_fill_ghosts(hs_field *f, const hs_bc bc[3][2], const double dx[3], int homogeneous)
{
    HS_CHECK(bc_args(f, bc));
    for (int dim = 0; dim < f->d->ndim; dim++)
        for (int side = 0; side < 2; side++) {
            const hs_bc *b = &bc[dim][side];
            if (b->kind == HS_BC_PERIODIC || !at_wall(f, dim, side)) continue;
            if (b->kind == HS_BC_CUSTOM) HS_CHECK(b->hook(f, dim, side, b, homogeneous, b->user));
            else HS_CHECK(fill_face(f, b, dim, side, dx, homogeneous));
        }
    return HS_OK;
}

int hs_field_split_boxes(const hs_field *f, int margin, hs_box *interior, hs_box shell[6])
{
    const hs_decomp *d = f->d;
    hs_box rest = hs_field_interior_box(f);
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
