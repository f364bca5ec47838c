/* Finite-element systems: P1/P2 degrees of freedom on a (partitioned) simplex mesh, the CSR pattern and scatter map, assembly on either backend. */
#ifndef HS_FEM_SYSTEM_H
#define HS_FEM_SYSTEM_H

#include <stdint.h>

#include "kernels/context.h"
#include "kernels/sparse/dcsr.h"
#include "kernels/sparse/sparse.h"
#include "solvers/fem/fem_mesh.h"
#include "solvers/fem/fem_point.h"

enum { HS_FEM_DIRICHLET = 0, HS_FEM_NEUMANN = 1, HS_FEM_ROBIN = 2 };

/* A boundary condition on the facets of physical group `tag`:
 *  DIRICHLET  u_c = value[c] on the components c in `comps` (bit c; 0 means all)
 *  NEUMANN    scalar: flux into the body value[0] (W/m^2 for heat); elastic: traction value[0..2]
 *  ROBIN      scalar: -kappa du/dn = h (u - value[0]), i.e. matrix h, load h value[0] */
typedef struct hs_fem_bc {
    int tag, kind, comps;
    double value[3];
    double h;
} hs_fem_bc;

/* A region (cell physical tag) and its coefficients (HS_FEM_NCOEF, see fem_point.h). */
typedef struct hs_fem_region {
    int tag;
    double coef[HS_FEM_NCOEF];
} hs_fem_region;

typedef struct hs_fem_problem {
    int physics;   /* HS_FEM_SCALAR or HS_FEM_ELASTIC (ncomp = dim) */
    int order;     /* 1 or 2 */
    int nregions;
    const hs_fem_region *regions;
    int nbcs;
    const hs_fem_bc *bcs;
} hs_fem_problem;

/* The degrees of freedom, this rank's rows and everything assembly needs, host and device. */
typedef struct hs_fem_system {
    hs_ctx *ctx;
    hs_fem_mesh *mesh;       /* not owned */
    int dim, order, ncomp, physics, nl, nfl, L, Lf;
    int64_t nnodes;          /* DOF nodes: vertices, then (P2) edges */
    int64_t *cell_nodes;     /* nl per cell, global node ids */
    int *cell_part;          /* the rank that owns each cell (outputs and norms) */
    int *node_owner;
    int64_t *newnode;        /* node -> its position in rank order */
    int64_t *node_off;       /* size + 1: rank r owns new nodes node_off[r] .. node_off[r+1] */
    int64_t nowned, *owned;  /* this rank's nodes (global ids), in new order */
    int64_t n_global, row_start, n_local; /* DOFs: node-major, ncomp per node */
    uint8_t *mask;           /* nnodes * ncomp: Dirichlet */
    double *gval;            /* nnodes * ncomp: Dirichlet values */
    /* assembly set: cells (and loaded facets) touching an owned node, in global order */
    int64_t nac, naf, *acell, *afacet;
    int64_t nln, *lnode;     /* local nodes: their global ids */
    /* CSR of the local rows, global columns, and the maps */
    int64_t nnz, *rowptr, *colind;
    int64_t *map_ptr, *map_idx, *vmap_ptr, *vmap_idx;
    int64_t nd, *d_row, *d_diag;
    /* device */
    hs_fem_kargs args;
    int64_t *dmap_ptr, *dmap_idx, *dvmap_ptr, *dvmap_idx, *dd_row, *dd_diag;
    double *dd_g, *Kbuf, *Fbuf;
    int64_t kbuf_len, fbuf_len;
    /* host copies of the kernel inputs (twin tests, norms) */
    int32_t *h_cell_nodes, *h_cell_slot, *h_facet_nodes, *h_facet_slot;
    double *h_node_x, *h_cell_coef, *h_facet_coef;
    uint8_t *h_bc_mask;
    double *h_bc_value;
} hs_fem_system;

/* Build the system of `prob` on `mesh` for this rank: cell_part[c] is the rank owning cell c (NULL:
 * every cell on rank 0, for one rank).  A node belongs to the lowest rank among its cells'; each
 * rank's nodes are numbered contiguously in rank order, in their global order within a rank.  Each
 * rank assembles its rows from every cell touching them (the overlap is computed twice, no
 * messages), summing the contributions of an entry in global cell order: the matrix entries are
 * bitwise the same whatever the partition.  A cell region or boundary group that prob names
 * neither is taken as coefficient-less only for groups; a cell whose region is not listed is an
 * input error.  Collective (only through the context). */
int hs_fem_system_create(hs_ctx *ctx, hs_fem_mesh *mesh, const hs_fem_problem *prob, const int *cell_part,
                         hs_fem_system **sys);
void hs_fem_system_destroy(hs_fem_system *s);

/* Set the Dirichlet values from a function of position (manufactured solutions); keeps the mask. */
int hs_fem_system_set_dirichlet(hs_fem_system *s, void (*g)(const double *x, void *user, double *out), void *user);

/* Assemble on the context's device: val (nnz entries, the CSR order of rowptr/colind) = cK K + cM M
 * (+ cK Robin), and when rhs is not NULL, rhs (n_local) = cF load - lift * A[:, D] g on free rows and
 * A_ii g_i on Dirichlet rows.  Not collective. */
int hs_fem_assemble(hs_fem_system *s, double cK, double cM, double cF, int lift, double *val, double *rhs);

/* The assembled matrix as an operator: an hs_csr on one rank, an hs_dcsr on several. */
typedef struct hs_fem_matrix {
    hs_csr *csr;
    hs_dcsr *dcsr;
    hs_linop op;
} hs_fem_matrix;
/* Create from device values (nnz).  Collective. */
int hs_fem_matrix_create(hs_fem_system *s, const double *val, hs_fem_matrix *M);
void hs_fem_matrix_destroy(hs_fem_matrix *M);
/* The rank-local block (the whole matrix on one rank): what the AMG preconditioner coarsens. */
hs_csr *hs_fem_matrix_local(hs_fem_matrix *M);

/* rhs[i] = A_ii g_i on the Dirichlet rows (val: the device values of A).  Not collective. */
int hs_fem_set_dirichlet_rows(hs_fem_system *s, const double *val, double *rhs);

/* x (device, n_local) = the Dirichlet values on Dirichlet rows, `fill` elsewhere. */
int hs_fem_initial_guess(hs_fem_system *s, double fill, double *x);

/* The whole nodal vector on every rank (host, nnodes * ncomp, global node order) from the local
 * device vector x.  Collective. */
int hs_fem_gather(hs_fem_system *s, const double *x, double *full);

/* Host load b_i += int f phi_i over the cells (free rows only), f a function of position with ncomp
 * values: the manufactured solutions' sources.  b is host, n_local.  Not collective. */
int hs_fem_load_function(hs_fem_system *s, void (*f)(const double *x, void *user, double *out), void *user, double *b);

/* Errors of the full nodal solution u (hs_fem_gather) against an exact solution giving the value
 * (ncomp) and gradient (ncomp x 3) at x: ||u - u_h||_L2 and |u - u_h|_H1, degree-5 quadrature over
 * this rank's cells, summed over the ranks.  Collective. */
int hs_fem_error_norms(hs_fem_system *s, const double *u, void (*exact)(const double *x, void *user, double *val, double *grad),
                       void *user, double *l2, double *h1);

/* Coordinates of DOF node n (vertices; edge midpoints). */
void hs_fem_node_x(const hs_fem_system *s, int64_t n, double x[3]);

#endif
