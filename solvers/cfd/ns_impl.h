/* Backend entry point of the Navier-Stokes model's kernels (ns_cpu.c / ns_cuda.cu): one launch record per call. */
#ifndef HS_NS_IMPL_H
#define HS_NS_IMPL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct hs_cuda_ctx;

/* Where a field's local point (0, 0, 0) is and how rows and planes follow (elements; 0 in unused
 * dimensions, so that a neighbour there is the point itself). */
typedef struct hs_ns_lay {
    int64_t origin, sy, sz;
    int64_t first[3], end[3]; /* the local points the field has, ghosts included: [first, end) per dimension */
} hs_ns_lay;

/* What a launch computes, over the points [lo, hi) of the box (local indices of the field written;
 * cell indices for the cell-centred operations). */
typedef enum {
    HS_NS_MOMENTUM = 0,  /* out[P] = a q0[P] + b (q_c[P] + dt R_c(P)), component comp, on its faces */
    HS_NS_SCALAR,        /* out[P] = a T0[P] + b (T[P] + dt R_T(P)), on cells */
    HS_NS_DIVERGENCE,    /* out[cell] (contiguous) = scale * div q */
    HS_NS_CORRECT,       /* q_c[P] -= scale * d(phi)/dx_c at the faces of component comp (phi in lay[4]) */
    HS_NS_CENTRE,        /* out[cell] (contiguous) = q_comp interpolated to the cell centre */
    HS_NS_VORTICITY,     /* out[cell] (contiguous) = dv/dx - du/dy (2D), |curl q| (3D) */
    HS_NS_ENERGY,        /* out[cell] (contiguous) = |q|^2 / 2 at the centre */
    HS_NS_ENSTROPHY,     /* out[cell] (contiguous) = |curl q|^2 / 2 */
    HS_NS_WALL_FLUX,     /* out[cell] (contiguous) = -dT/dx at x = 0 for cells with global i = 0 (wall value a), else 0 */
    HS_NS_FACE_BC,       /* face (comp, side) of component comp: boundary points set (inflow) or kept, ghosts mirrored */
    HS_NS_PHI_IN,        /* the cells of field out (layout lay[4]) = phi (contiguous cells, in the order `order`) */
    HS_NS_MOMENTUM_ALL   /* HS_NS_MOMENTUM for every component c, each over its box part[c] into part[c].out
                          * (lo, hi: the union of the boxes) */
} hs_ns_op;

/* HS_NS_MOMENTUM_ALL: one component's box of faces, its outflow ends, output and start-of-step values. */
typedef struct hs_ns_part {
    int64_t lo[3], hi[3];
    int outflow_lo, outflow_hi;
    double *out;
    const double *q0;
} hs_ns_part;

/* hs_ns_launch.advection */
enum { HS_NS_ADV_TVD = 0, HS_NS_ADV_CENTRAL = 1 };
#define HS_NS_ADVECTION_CHOICES "tvd|central"

/* hs_ns_launch.profile (inflow shape across the face) */
enum { HS_NS_PROFILE_UNIFORM = 0, HS_NS_PROFILE_PARABOLIC = 1 };
#define HS_NS_PROFILE_CHOICES "uniform|parabolic"

typedef struct hs_ns_launch {
    int op;                 /* hs_ns_op */
    int ndim;
    int comp;               /* the velocity component a face operation works on */
    int advection;          /* HS_NS_ADV_* */
    hs_ns_lay lay[5];       /* q0 (u), q1 (v), q2 (w), T, and the cell field phi of HS_NS_CORRECT */
    const double *q[3];     /* velocity components (faces, ghosts valid) */
    const double *T;        /* temperature (cells, ghosts valid) or NULL */
    const double *phi;      /* HS_NS_CORRECT */
    const double *q0;       /* HS_NS_MOMENTUM / HS_NS_SCALAR: start-of-step values (layout of out) or NULL when a = 0 */
    double *out;
    int64_t lo[3], hi[3];   /* the box of points */
    int index32;            /* every element of every field the launch touches lies below 2^31 (the GPU's 32-bit offsets) */
    int order[2];           /* HS_NS_DIVERGENCE's out and HS_NS_PHI_IN's phi along x and y: 0 natural, 1 Makhoul's order of
                             * the transform Poisson solver, 2 the same with its sine transform's signs; order[0] 3: the
                             * plane solve's DCT-IV layout (hs_poisson_ordered) */
    int dct4_side;          /* that layout's side and table (hs_poisson_dct4_layout) */
    const double *dct4_tw;
    int64_t local[3];       /* cells of this rank (contiguous outputs) */
    int64_t offset[3];      /* global index of this rank's first point */
    double idx[3], idx2[3]; /* 1/dx, 1/dx^2 (0 in unused dimensions) */
    double dx[3];
    double nu, kappa;       /* viscosity, diffusivity */
    double buoy[3];         /* buoyancy coefficient per component: R_c += buoy[c] T */
    double force[3];        /* body force per component */
    double dt, a, b, scale;
    int outflow_lo, outflow_hi; /* HS_NS_MOMENTUM: the box's first / last point along comp is a convective-outflow face */
    double outflow_speed;       /* the convective speed there (> 0) */
    /* HS_NS_FACE_BC */
    int side;               /* 0 low, 1 high */
    int hw;                 /* ghost layers to mirror */
    int64_t face_index;     /* local index of the boundary point along comp */
    int set_value;          /* 1: inflow, set the boundary points from the profile; 0: keep them (outflow) */
    int profile;            /* HS_NS_PROFILE_* */
    double inflow_speed;    /* mean inflow velocity (signed, along +comp) */
    double length[3];       /* domain lengths (the profile's span) */
    int walled[3];          /* both faces of the dimension are walls (the parabolic profile's axes) */
    hs_ns_part part[3];     /* HS_NS_MOMENTUM_ALL */
} hs_ns_launch;

int hs_ns_launch_cpu(const hs_ns_launch *L);
int hs_ns_launch_cuda(struct hs_cuda_ctx *cu, const hs_ns_launch *L);

#ifdef __cplusplus
}
#endif
#endif
