/* Backend entry point of the lattice Boltzmann model's kernels (lbm_cpu.c / lbm_cuda.cu): one launch record per call. */
#ifndef HS_LBM_IMPL_H
#define HS_LBM_IMPL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct hs_cuda_ctx;

#define HS_LBM_QMAX 19

/* Storage of the populations (the arithmetic is double for F64, float otherwise). */
enum { HS_LBM_F64 = 0, HS_LBM_F32 = 1, HS_LBM_F16 = 2 };

/* Cell kinds (the low 7 bits of a flag); HS_LBM_NEAR marks a fluid cell with a non-fluid neighbour. */
enum {
    HS_LBM_FLUID = 0,
    HS_LBM_WALL = 1,     /* resting wall: half-way bounce-back */
    HS_LBM_MOVING = 2,   /* moving wall (lid): bounce-back with the wall's momentum, L->wall_u */
    HS_LBM_INLET = 3,    /* velocity inlet: bounce-back with the inlet velocity at the link's midpoint */
    HS_LBM_OUTLET = 4,   /* pressure outlet: anti-bounce-back at the reference density */
    HS_LBM_OBSTACLE = 5  /* solid obstacle: bounce-back, its links in the link list (interpolation, forces) */
};
#define HS_LBM_NEAR 0x80
#define HS_LBM_KIND 0x7f

/* What a launch computes. */
typedef enum {
    HS_LBM_STEP = 0,   /* one fused stream-collide step (AA pattern) of the fluid cells in [lo, hi) */
    HS_LBM_LINKS,      /* the obstacle links after a step: interpolated bounce-back (Bouzidi), momentum exchange */
    HS_LBM_MOMENTS     /* rho, u of the fluid cells in [lo, hi) as the next step will see them, into rho/u (contiguous, local box) */
} hs_lbm_op;

typedef struct hs_lbm_launch {
    int op;                      /* hs_lbm_op */
    int q;                       /* 9 (D2Q9) or 19 (D3Q19) */
    int store;                   /* HS_LBM_F64 | F32 | F16 */
    int odd;                     /* parity of the step (STEP, MOMENTS: of the next one; LINKS: of the one just taken) */
    void *f[HS_LBM_QMAX];        /* population q at element index origin + i + j sy + k sz of local cell (i, j, k) */
    int64_t origin, sy, sz;      /* the populations' layout (elements; one layout for all q) */
    int64_t off[HS_LBM_QMAX];    /* element offset of the neighbour in direction c_q */
    const uint8_t *flag;         /* cell kinds, own layout: foriginx + i + j fsy + k fsz, 3 ghost layers */
    int64_t forigin, fsy, fsz;
    int64_t foff[HS_LBM_QMAX];   /* flag offset of the neighbour in direction c_q */
    int64_t lo[3], hi[3];        /* the box of cells (local indices, ghosts allowed) */
    int64_t local[3];            /* cells of this rank (contiguous outputs) */
    int64_t offset[3];           /* global index of this rank's first cell */
    int64_t global[3];           /* cells of the whole grid */
    double om_p, om_m;           /* relaxation rates of the symmetric and antisymmetric parts (BGK: equal) */
    double force[3];             /* body force per unit volume, lattice units */
    double wall_u[3];            /* velocity of moving walls, lattice units */
    int inlet_dim, inlet_sign;   /* the inlet's face: its normal dimension and the inward direction (+1 / -1) */
    int inlet_parabolic[3];      /* per tangential dimension: parabolic profile (1) or uniform (0) */
    double u_in;                 /* inlet speed (peak of the parabola), lattice units */
    double scale, inv_scale;     /* f16: the stored value is scale times the population's deviation from its weight */
    /* the float arithmetic's copies of the above, rounded once here (converted at each use they were
     * about ten double-to-float conversions per cell in the fp32/fp16 step kernels) */
    struct { float om_p, om_m, force[3], half_force[3], scale, inv_scale; } kf;
    /* links (HS_LBM_LINKS) */
    int64_t nlinks;
    const int64_t *link_cell;    /* population element index of the fluid cell */
    const int32_t *link_dir;     /* direction c_i from the fluid cell into the obstacle */
    const double *link_q;        /* wall distance along the link in (0, 1] (0.5: half-way; fall-backs are 0.5) */
    double *link_force;          /* 3 per link: momentum given to the obstacle (lattice units) */
    /* moments (HS_LBM_MOMENTS) */
    double *rho, *u[3];
} hs_lbm_launch;

int hs_lbm_launch_cpu(const hs_lbm_launch *L);
int hs_lbm_launch_cuda(struct hs_cuda_ctx *cu, const hs_lbm_launch *L);

#ifdef __cplusplus
}
#endif
#endif
