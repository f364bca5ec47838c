/* The heat solver's grid kernels: the diffusion operator, fused explicit updates, boundary ghosts. */
#ifndef HS_HEAT_STENCIL_H
#define HS_HEAT_STENCIL_H

#include <stdint.h>

#include "kernels/grid.h"

/* Boundary kinds per face. */
typedef enum { HS_BC_PERIODIC = 0, HS_BC_DIRICHLET = 1, HS_BC_NEUMANN = 2 } hs_bc_kind;

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
} hs_heat_op;

/* A box of local cells [lo, hi) per dimension. */
typedef struct hs_box {
    int64_t lo[3], hi[3];
} hs_box;

/* out = a * T + b * L(T) + c * q  over the box.  `T` is a field with valid ghosts;
 * out is either a field of the same layout (out_contiguous = 0) or a contiguous array of the
 * local interior (x fastest; out_contiguous = 1, used by the implicit solve).  On the context's
 * stream.  Not collective. */
int hs_heat_apply(hs_field *T, const hs_heat_op *op, double a, double b, double c, const hs_box *box, void *out,
                  int out_contiguous);

/* Fill the ghost layers of T at the non-periodic global faces: Dirichlet g: mirror T(-1-i) =
 * 2 g - T(i); Neumann g (outward normal derivative dT/dn): T(-1-i) = T(i) + (2 i + 1) dx g.
 * homogeneous = 1 uses g = 0 (the linear part, for the implicit operator).  Not collective. */
int hs_heat_fill_ghosts(hs_field *T, const hs_bc_kind bc[3][2], const double value[3][2], const double dx[3],
                        int homogeneous);

/* Copy a contiguous interior array (device) into a field's interior. */
int hs_heat_load_interior(hs_field *T, const double *contiguous);

/* The boxes of the interior (cells at least `margin` from every exchanging face) and of the
 * shell around it (up to 6 boxes); returns the number of shell boxes. */
int hs_heat_split_boxes(const hs_field *T, int margin, hs_box *interior, hs_box shell[6]);

#endif
