/* The heat solver's grid kernel: the diffusion operator and fused explicit updates (boxes, boundaries and ghosts are the grid family's, kernels/grid/grid.h). */
#ifndef HS_HEAT_STENCIL_H
#define HS_HEAT_STENCIL_H

#include <stdint.h>

#include "kernels/grid/grid.h"

/* The operator L(T) = div(k grad T) / (rho c) on a uniform grid, 2nd order (3/5/7-point, constant
 * or variable k with harmonic-mean face conductivities) or 4th order (constant k). */
typedef struct hs_heat_op {
    int ndim, order;
    double inv_dx2[3];   /* 1 / dx_d^2 (0 in unused dimensions) */
    double dx[3];
    double alpha;        /* k / (rho c) for constant k */
    double inv_rhoc;     /* 1 / (rho c), with a k field */
    const double *k;     /* device k field in the T field's layout (ghosts filled), or NULL */
    const double *q;     /* device source Q / (rho c) per cell in the field's layout, or NULL */
    double q_const;      /* constant Q / (rho c) (used when q is NULL) */
    int gpu_kernel;      /* HS_HEAT_KERNEL_* (heat_stencil_impl.h): the GPU's 7-point variant */
} hs_heat_op;

/* out = a * T + b * L(T) + c * q  over the box.  `T` is a field with valid ghosts;
 * out is either a field of the same layout (out_contiguous = 0) or a contiguous array of the
 * local interior (x fastest; out_contiguous = 1, used by the implicit solve).  On the context's
 * stream.  Not collective. */
int hs_heat_apply(hs_field *T, const hs_heat_op *op, double a, double b, double c, const hs_box *box, void *out,
                  int out_contiguous);

#endif
