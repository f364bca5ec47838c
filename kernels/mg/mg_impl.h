/* Backend entry point of the multigrid family (mg_cpu.c / mg_cuda.cu): one launch record per call. */
#ifndef HS_MG_IMPL_H
#define HS_MG_IMPL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct hs_cuda_ctx;

/* Where a field's local cell (0, 0, 0) is and how rows and planes follow (elements; 0 in unused
 * dimensions, which are never read across). */
typedef struct hs_mg_lay {
    int64_t origin, sy, sz;
} hs_mg_lay;

/* What a launch computes over the n[0] x n[1] x n[2] local cells of the level it writes.  A is the
 * second-order operator -L (L the 3/5/7-point Laplacian): (A u)_i = sum_d (2 u_i - u_lo - u_hi) / dx_d^2,
 * with the neighbour across a wall of this rank (wall_lo/hi[d] = +1 Neumann, -1 Dirichlet) taken
 * as wall * u_i (the homogeneous ghost rule of kernels/grid), and read from the field's halo
 * elsewhere (rank boundaries, periodic images: exchanged before).  "b" is a contiguous array of the
 * level's local cells (x fastest) read as b + bshift; diag is A's diagonal at the cell. */
typedef enum {
    HS_MG_CHEB = 0,   /* d = c1 d + c2 (b - A u) / diag;  u_out = u + d  (u NULL: u = 0, and c1 must be 0) */
    HS_MG_RESIDUAL,   /* r = b - A u into the field r (u NULL: r = b) */
    HS_MG_RESIDUAL_C, /* out (contiguous) = b - A u */
    HS_MG_APPLY,      /* out (contiguous) = scale * A u */
    HS_MG_RESTRICT,   /* out (contiguous, coarse cells) = R r: per halved dimension the fine cells 2I-1, 2I,
                       * 2I+1, 2I+2 (global) weighted 1/8, 3/8, 3/8, 1/8; the same cell in the others */
    HS_MG_PROLONG,    /* u_out (+)= P uc: per halved dimension 3/4 of the parent and 1/4 of the parent's
                       * neighbour on the fine cell's side (cell-centred linear interpolation); the
                       * same cell in the others.  accumulate = 0 assigns instead of adding.
                       * Both transfers read across a wall as the stencil does (the mirrored cell
                       * times wall), and from the halo elsewhere (exchanged with corners) */
    HS_MG_STORE,      /* out (contiguous) = scale * u + shift */
    HS_MG_ADD,        /* u_out += scale * b (contiguous) */
    HS_MG_SHIFT_C     /* out (contiguous) = scale * b + shift (out may be b) */
} hs_mg_op;

typedef struct hs_mg_launch {
    int op;                /* hs_mg_op */
    int ndim;
    int64_t n[3];          /* local cells written (coarse cells for RESTRICT, fine for PROLONG) */
    hs_mg_lay lu, lo, lr;  /* layouts of u, u_out and r (the fine r of RESTRICT) */
    hs_mg_lay lc;          /* PROLONG: layout of the coarse uc */
    const double *u;       /* read with its halo */
    double *u_out;         /* CHEB (may not be u), PROLONG, ADD */
    const double *b;       /* contiguous right-hand side */
    double bshift;
    double *d;             /* CHEB: contiguous direction */
    double *r;             /* RESIDUAL: output field; RESTRICT: input (const) */
    const double *uc;      /* PROLONG: coarse field with halo and ghosts */
    double *out;           /* contiguous outputs */
    double idx2[3];        /* 1 / dx^2 of the level (0 in unused dimensions) */
    int wall_lo[3], wall_hi[3];
    double c1, c2;         /* CHEB */
    double scale, shift;   /* APPLY, STORE, ADD, SHIFT_C */
    int halve[3];          /* RESTRICT, PROLONG: the dimensions coarsened between the two levels */
    int64_t off_f[3], off_c[3]; /* RESTRICT, PROLONG: global index of the first local fine / coarse cell */
    int64_t nt[3];         /* RESTRICT: the fine local cells; PROLONG: the coarse ones (the level read) */
    int accumulate;        /* PROLONG */
} hs_mg_launch;

int hs_mg_launch_cpu(const hs_mg_launch *L);
int hs_mg_launch_cuda(struct hs_cuda_ctx *cu, const hs_mg_launch *L);

#ifdef __cplusplus
}
#endif
#endif
