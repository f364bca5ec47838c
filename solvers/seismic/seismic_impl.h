/* Backend entry point of the seismic solver's kernels (seismic_cpu.c / seismic_cuda.cu): one launch record per call. */
#ifndef HS_SEISMIC_IMPL_H
#define HS_SEISMIC_IMPL_H

#include <stdint.h>

#include "kernels/hd.h"

#ifdef __cplusplus
extern "C" {
#endif

struct hs_cuda_ctx;

/* What a launch computes over the points [lo, hi) of its box (local indices).  Notation: D2_d, D1_d
 * the centred 2nd and 1st differences of the scheme's order along d; DP_d, DM_d the staggered 1st
 * differences from points to half points (i -> i + 1/2, stored at index i) and back; a_d, b_d the
 * CPML coefficients of the points (pa, pb) and half points (pah, pbh) along d, 0 outside the layer. */
typedef enum {
    /* acoustic, constant density; w = c^2 dt^2 */
    HS_SEIS_AC_STEP = 0, /* Q = 2 P - Q + w sum_d D2_d P                                    (no CPML in reach) */
    HS_SEIS_AC_PSI,      /* PSI_d = b_d PSI_d + a_d D1_d P                                                     */
    HS_SEIS_AC_PML,      /* ZETA_d = b_d ZETA_d + a_d (D2_d P + D1_d PSI_d);
                          * Q = 2 P - Q + w sum_d (D2_d P + D1_d PSI_d + ZETA_d)                              */
    /* acoustic, variable density; w = rho c^2 dt^2, B_d the buoyancy 1/rho at the half points along d */
    HS_SEIS_AV_STEP,     /* Q = 2 P - Q + w sum_d DM_d (B_d DP_d P)                                            */
    HS_SEIS_AV_PSI,      /* PSI_d = bh_d PSI_d + ah_d DP_d P            (at half points)                       */
    HS_SEIS_AV_PML,      /* with F_d = B_d (DP_d P + PSI_d): ZETA_d = b_d ZETA_d + a_d DM_d F_d;
                          * Q = 2 P - Q + w sum_d (DM_d F_d + ZETA_d)                                         */
    /* adjoint of the constant-density steps (the exact transpose; U = adjoint of p^{n+1}, Q = of p^n) */
    HS_SEIS_ADJ_STEP,    /* Q = 2 U - Q + sum_d D2_d (w U); with G: G += U (PN - 2 PF + PP)  (no CPML in reach) */
    HS_SEIS_ADJ_PSI,     /* PSI_d = PSI_d - D1_d (w U) - D1_d (a_d (ZETA_d + w U))                             */
    HS_SEIS_ADJ_PML,     /* Q = 2 U - Q + sum_d [D2_d (w U) + D2_d (a_d (ZETA_d + w U)) - D1_d (a_d PSI_d)]    */
    HS_SEIS_ADJ_MEM,     /* ZETA_d = b_d (ZETA_d + w U); PSI_d = b_d PSI_d                                     */
    /* the CPML terms of one dimension d = dim, column by column along d over [lo[d], hi[d])
     * (seismic_point.h's seis_ac_march): AC_PSI and AC_PML's terms of d in one pass, summed into C
     * for AC_STEP to add (AC_STEP with C: Q = 2 P - Q + w (sum_d D2_d P + C) in the march ranges) */
    HS_SEIS_AC_MARCH,    /* PSI_d, ZETA_d as AC_PSI, AC_PML; C (+)= D1_d PSI_d + ZETA_d                       */
    /* elastic velocity-stress (staggered: v_d at half points along d; s_dd at points; s_de at half
     * points along d and e); BV_d buoyancy at v_d, L2M = lambda + 2 mu and LAM at the s_dd points,
     * MU_de at the s_de points; all multiplied by dt.  MV/MS: CPML memory of each derivative. */
    HS_SEIS_EL_VEL,      /* v_d += BV_d sum_e (e == d ? DP_d s_dd : DM_e s_de)                                */
    HS_SEIS_EL_STRESS,   /* s_dd += L2M DM_d v_d + LAM sum_{e != d} DM_e v_e; s_de += MU_de (DP_e v_d + DP_d v_e) */
    HS_SEIS_EL_IMAGE,    /* free surface: s_zz = 0 on the surface; s_zz, s_dz imaged oddly above it           */
    /* free surface of the acoustic model: P = 0 on the surface (global z index 0), P(-k) = -P(k) */
    HS_SEIS_MIRROR,      /* on X, over a box of one layer at z index 0 */
    /* point sets (sources and receivers), one thread per group g of points [gptr[g], gptr[g+1]):
     * INJECT's groups share one element (so that no two threads add to the same one), SAMPLE's one
     * receiver */
    HS_SEIS_INJECT,      /* X[idx] += value * sum_{k in g} vals[rec_k] wt_k * (Y ? Y[idx] : 1) (vals NULL: 1)  */
    HS_SEIS_SAMPLE       /* trace[g] = value trace[g] + scale sum_{k in g} wt_k X[idx_k] (Y ? Y[idx_k] : 1)    */
} hs_seis_op;

/* Field roles (hs_seis_launch.f). */
enum {
    HS_SEIS_F_P = 0, HS_SEIS_F_Q, HS_SEIS_F_W, HS_SEIS_F_G, HS_SEIS_F_PF,
    HS_SEIS_F_PSI,                     /* 3: one per dimension */
    HS_SEIS_F_ZETA = HS_SEIS_F_PSI + 3,
    HS_SEIS_F_B = HS_SEIS_F_ZETA + 3,  /* 3 */
    HS_SEIS_F_V = HS_SEIS_F_B + 3,     /* 3: v_x, v_y, v_z (2D: v_x, v_z as dimensions 0, 1) */
    HS_SEIS_F_S = HS_SEIS_F_V + 3,     /* 6: s_00 s_11 s_22 s_01 s_02 s_12 (hs_seis_sym) */
    HS_SEIS_F_BV = HS_SEIS_F_S + 6,    /* 3 */
    HS_SEIS_F_L2M = HS_SEIS_F_BV + 3,
    HS_SEIS_F_LAM,
    HS_SEIS_F_MU,                      /* 3: at s_01 s_02 s_12 */
    HS_SEIS_F_MV = HS_SEIS_F_MU + 3,   /* 9: memory of d_e s at v_d, index 3 d + e */
    HS_SEIS_F_MS = HS_SEIS_F_MV + 9,   /* 9: memory of d_e v_d at the stress points, index 3 d + e */
    HS_SEIS_F_X = HS_SEIS_F_MS + 9,    /* MIRROR's, INJECT's and SAMPLE's field */
    HS_SEIS_F_Y,                       /* INJECT's and SAMPLE's multiplier (NULL: none) */
    HS_SEIS_F_PN,                      /* ADJ_STEP's gradient: p^{n+1} (PF is p^n) */
    HS_SEIS_F_PP,                      /* ADJ_STEP's gradient: p^{n-1} */
    HS_SEIS_F_C,                       /* AC_MARCH's CPML terms of the step, summed over dimensions */
    HS_SEIS_NF
};

/* The stress component of dimensions (d, e): 0..2 normal, 3..5 shear (01, 02, 12). */
HS_HD int hs_seis_sym(int d, int e) { return d == e ? d : 2 + d + e; }

/* The difference coefficients of a launch, in the fields' type. */
#define HS_SEIS_COEFS(T)                                                                           \
    struct {                                                                                       \
        T c2[3][5]; /* D2: c2[d][0] the centre, c2[d][m] the pair at +-m; over h^2 */               \
        T c1[3][4]; /* D1: c1[d][m-1] (f(+m) - f(-m)); over h */                                   \
        T cs[3][4]; /* DP/DM: cs[d][m-1] (f(i+m) - f(i-m+1)); over h */                            \
        T cs2[3];   /* the 2nd-order staggered coefficient (1/h): near the free surface */          \
        T c2sum;    /* sum_d c2[d][0] */                                                           \
    }
typedef HS_SEIS_COEFS(double) hs_seis_coef_f64;
typedef HS_SEIS_COEFS(float) hs_seis_coef_f32;

typedef struct hs_seis_launch {
    int op;                  /* hs_seis_op */
    int ndim;
    int index32;             /* every element of the fields lies below 2^31: the GPU's box kernels take 32-bit offsets */
    int radius;              /* half the order: 1, 2 or 4 */
    int f32;                 /* 1: fields are float, else double */
    int64_t lo[3], hi[3];    /* the box */
    int64_t local[3];        /* the points this rank owns per dimension */
    int dim;                 /* AC_MARCH: the dimension marched along */
    int64_t mlo[3][2], mhi[3][2]; /* the AC_MARCH ranges per dimension (local; lo = hi where none):
                                   * where AC_STEP adds C (when f[HS_SEIS_F_C] is set) */
    int64_t origin;          /* element of local point (0, 0, 0) */
    int64_t st[3];           /* element strides per dimension (0 in unused ones) */
    int64_t hw;              /* ghost layers: profile arrays are indexed by local index + hw */
    int64_t offset[3];       /* global index of local point (0, 0, 0) */
    int free_top;            /* the free surface is at global z index 0 */
    int pml;                 /* elastic: the box lies in the CPML's reach (update the memory variables) */
    void *f[HS_SEIS_NF];     /* fields by role (NULL where unused) */
    const void *pa[3], *pb[3], *pah[3], *pbh[3]; /* CPML profiles per dimension (fields' type) */
    /* the stencil coefficients in both types: the float kernels read k_f32 (converting the doubles at
     * each use put 13 conversions per point into the 8th-order step's inner loop) */
    hs_seis_coef_f64 k_f64;
    hs_seis_coef_f32 k_f32;
    /* point sets (device arrays) */
    int64_t ngrp;            /* groups */
    const int64_t *gptr;     /* ngrp + 1: the points of group g are gptr[g] .. gptr[g+1]-1 */
    const int64_t *pidx;     /* element index of each point */
    const double *pwt;       /* weight of each point */
    const int64_t *prec;     /* INJECT: the receiver (source) of each point, indexing vals */
    double value;            /* INJECT: scale; SAMPLE: weight of the old trace value */
    double scale;            /* SAMPLE: weight of the new sum */
    const double *vals;      /* INJECT: per-receiver values or NULL */
    double *trace;           /* SAMPLE: ngrp outputs */
} hs_seis_launch;

int hs_seis_launch_cpu(const hs_seis_launch *L);
int hs_seis_launch_cuda(struct hs_cuda_ctx *cu, const hs_seis_launch *L);

#ifdef __cplusplus
}
#endif
#endif
