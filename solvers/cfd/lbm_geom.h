/* The lbm model's configuration and geometry: units, face kinds, obstacles (cylinder, sphere, mask file), cell flags and obstacle links. */
#ifndef HS_LBM_GEOM_H
#define HS_LBM_GEOM_H

#include <stdint.h>

#include "io/params.h"
#include "solvers/cfd/cfd.h"

/* lbm.boundary words, per face */
enum { HS_LBM_FACE_PERIODIC = 0, HS_LBM_FACE_WALL = 1, HS_LBM_FACE_LID = 2, HS_LBM_FACE_INLET = 3, HS_LBM_FACE_OUTLET = 4 };
/* lbm.obstacle */
enum { HS_LBM_OBS_NONE = 0, HS_LBM_OBS_CYLINDER = 1, HS_LBM_OBS_SPHERE = 2, HS_LBM_OBS_FILE = 3 };

typedef struct hs_lbm_geom {
    hs_cfd_config c;
    int ndim, q;                  /* 2 -> D2Q9, 3 -> D3Q19 */
    double dx;                    /* cell size (m) */
    int collision_trt;
    double magic;                 /* TRT Lambda */
    int store;                    /* HS_LBM_F64 | F32 | F16 */
    double nu, density, u_ref;    /* physical */
    double u_lat, tau, dt;        /* lattice velocity of u_ref, relaxation time, time step (s) */
    double ramp_time;             /* start-up of the inlet's and lid's speeds (s); 0: impulsive */
    double om_p, om_m;            /* relaxation rates */
    double accel[3], force_lat[3];/* body acceleration, physical and lattice */
    int face[3][2];               /* HS_LBM_FACE_* */
    int periodic[3];
    int inlet_dim, inlet_sign;    /* -1: no inlet */
    int parabolic;                /* inlet profile */
    double wall_u_lat[3];         /* the lid's velocity, lattice units */
    int obstacle, bouzidi;
    double center[3], radius;     /* physical */
    double cd_velocity, cd_length;
    double cd_u_lat, cd_ref_lat;  /* the coefficients' references in lattice units (length in 2D, area in 3D) */
    uint8_t *mask;                /* obstacle = file: the global mask (x fastest), nonzero solid */
} hs_lbm_geom;

/* The obstacle (reads and checks the mask file: its size against the grid), the lid's velocity and
 * the coefficients' references.  Input errors name the key.  Not collective. */
int hs_lbm_geom_setup(const hs_params *p, hs_lbm_geom *g);
void hs_lbm_geom_free(hs_lbm_geom *g);
/* The axis the flow goes along (the coefficients' drag axis): the inlet's, else the body force's
 * largest component, else x. */
int hs_lbm_flow_axis(const hs_lbm_geom *g);

/* The kind (HS_LBM_FLUID, WALL, ...) of the cell at global index gi (any integer: outside the grid,
 * the face's kind or the periodic image). */
int hs_lbm_geom_kind(const hs_lbm_geom *g, const int64_t gi[3]);

/* Flags of the local box with fh ghost layers in the used dimensions (x fastest over
 * local + 2 fh; unused dimensions 1): the kind, and HS_LBM_NEAR on fluid cells with a non-fluid
 * neighbour.  Not collective. */
void hs_lbm_geom_flags(const hs_lbm_geom *g, const int64_t offset[3], const int64_t local[3], int fh, uint8_t *flag);

/* 1.0 in obstacle cells, 0 elsewhere, over the local box (contiguous). */
void hs_lbm_geom_solid(const hs_lbm_geom *g, const int64_t offset[3], const int64_t local[3], double *out);

/* Obstacle links: (fluid cell, direction into an obstacle cell, wall distance q). */
typedef struct hs_lbm_link_list {
    int64_t n, nowned;  /* links; the first nowned have their cell in the local interior */
    int64_t *ijk;       /* local cell indices, 3 per link */
    int64_t *cell;      /* filled by the caller: element index in the populations' layout */
    int32_t *dir;
    double *q;          /* Bouzidi: exact distance along the link (cylinder, sphere); else 0.5; 0.5 also where
                         * the cell behind (x - c_i) is not fluid (interpolation needs it) */
} hs_lbm_link_list;

/* The links of the fluid cells in the local box [lo, hi) (local indices; ghosts allowed), owned
 * ones first, each group in cell order.  Not collective. */
int hs_lbm_geom_links(const hs_lbm_geom *g, const int64_t offset[3], const int64_t local[3], const int64_t lo[3], const int64_t hi[3],
                      hs_lbm_link_list *ll);
void hs_lbm_link_list_free(hs_lbm_link_list *ll);

#endif
