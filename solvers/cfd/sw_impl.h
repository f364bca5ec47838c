/* Backend entry point of the shallow-water model's kernels (sw_cpu.c / sw_cuda.cu): one launch record per call. */
#ifndef HS_SW_IMPL_H
#define HS_SW_IMPL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct hs_cuda_ctx;

/* Where a field's local point (0, 0) is and how far apart its rows are (elements). */
typedef struct hs_sw_lay {
    int64_t origin, sy;
} hs_sw_lay;

/* What a launch computes over the cells [lo, hi) (local cell indices). */
typedef enum {
    HS_SW_STAGE = 0,    /* one stage of classic RK4: tendencies at the cell's h, its low x-face u and low y-face v */
    HS_SW_CENTRE_U,     /* out[cell] (contiguous) = u interpolated to the centre */
    HS_SW_CENTRE_V,     /* out[cell] (contiguous) = v interpolated to the centre */
    HS_SW_VORTICITY,    /* out[cell] (contiguous) = relative vorticity, the mean of the cell's four corner values */
    HS_SW_ENERGY,       /* out[cell] (contiguous) = h K + g h (h/2 + b): its sum times dx dy is the conserved energy */
    HS_SW_ENSTROPHY     /* out[cell] (contiguous) = h_q q^2 / 2 at the cell's low-left corner (wall corners half, the top wall row added) */
} hs_sw_op;

typedef struct hs_sw_launch {
    int op;                     /* hs_sw_op */
    int stage;                  /* HS_SW_STAGE: 0..3 */
    hs_sw_lay lh, lu, lv;       /* layouts of the cell fields (h, b and their stage copies), u fields, v fields */
    const double *h, *u, *v;    /* the stage's input (ghosts valid) */
    const double *b;            /* bottom height (cells, ghosts valid) */
    const double *h0, *u0, *v0; /* HS_SW_STAGE: the state at the start of the step */
    double *ah, *au, *av;       /* HS_SW_STAGE: the RK4 accumulators (k1 + 2 k2 + 2 k3) */
    double *oh, *ou, *ov;       /* HS_SW_STAGE: the next stage's input, or (stage 3) the new state, in place of h0, u0, v0 */
    double *out;                /* contiguous diagnostics */
    int64_t lo[2], hi[2];       /* the box of cells */
    int64_t local[2];           /* cells of this rank (contiguous outputs) */
    int64_t offset[2];          /* global index of this rank's first cell */
    int64_t ny;                 /* cells of the whole grid in y */
    int walls;                  /* free-slip walls at y = 0 and y = Ly (v = 0 there); 0: periodic */
    double idx, idy;            /* 1/dx, 1/dy */
    double rx, ry;              /* dy/dx, dx/dy: the aspect factors of the Arakawa-Lamb epsilon and phi terms */
    double dy;
    double g;                   /* gravity */
    double f0, beta, yc;        /* Coriolis parameter f = f0 + beta (y - yc) */
    double nu, nu4;             /* viscosity (Laplacian) and hyperviscosity (biharmonic) of the velocity */
    double dt;
} hs_sw_launch;

int hs_sw_launch_cpu(const hs_sw_launch *L);
int hs_sw_launch_cuda(struct hs_cuda_ctx *cu, const hs_sw_launch *L);

#ifdef __cplusplus
}
#endif
#endif
