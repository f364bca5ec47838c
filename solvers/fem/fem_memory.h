/* The fem solver's memory estimate: the refined mesh, the system, the matrix, the vectors and the solver's work, before any of it exists. */
#ifndef HS_FEM_MEMORY_H
#define HS_FEM_MEMORY_H

#include <stdint.h>

#include "kernels/context.h"

/* What the estimate needs: the mesh as read (its counts) and the run's choices. */
typedef struct hs_fem_memory_case {
    int dim, order, ncomp;     /* ncomp: 1, or dim for elasticity */
    int refine;                /* uniform refinements still to come */
    int64_t verts, edges, faces, cells, facets; /* of the mesh as read (faces: 3-D; facets: the tagged ones) */
    int lines;                 /* the mesh keeps each cell's file line and element tag (read from a file) */
    int heat, amg, jacobi;     /* heat: a second matrix and two more vectors; the preconditioner */
    int metis;                 /* the partition over several ranks: METIS (else coordinate bisection) */
    int output;                /* records are written */
} hs_fem_memory_case;

/* A mesh's counts (doubles: 8 refinements of a large mesh pass 2^63 entries of some arrays):
 * vertices, edges, faces (3-D: triangles; 2-D: the cells), cells, tagged boundary facets. */
typedef struct hs_fem_counts {
    double verts, edges, faces, cells, facets;
} hs_fem_counts;

/* The counts after one red refinement (hs_fem_mesh_refine): every edge gets a midpoint, every
 * triangle 4 children (3 new edges inside), every tetrahedron 8 (3 new edges on each face, 1
 * inside; 4 faces from each face, 8 inside), every boundary facet 2 or 4. */
hs_fem_counts hs_fem_counts_refined(hs_fem_counts c, int dim);

/* The degree-of-freedom nodes (P1: vertices; P2: and edges) and the matrix entries of the whole
 * problem before Dirichlet rows are cut to their diagonal: ncomp^2 (N + 2 pairs), pairs the
 * distinct node pairs that share a cell (P1 the edges; P2 in 2-D 3E + 6T: vertex-vertex E, a
 * vertex and an edge of its own 2E, a vertex and the opposite edge 3T, two edges of a triangle 3T;
 * in 3-D 3E + 6F + 3T: E, 2E, a vertex and an edge of a face opposite it 3F, two edges of a face 3F,
 * opposite edges 3T). */
double hs_fem_dof_nodes(int order, hs_fem_counts c);
double hs_fem_matrix_entries(int dim, int order, int ncomp, hs_fem_counts c);

/* This rank's peak in bytes as the allocators take them (kernels/memory.h's footprints), on the
 * device and on the host: the refinement (two meshes at once), the replicated mesh and node
 * tables, the rank's share of the system (pattern, scatter maps, element buffers), the matrix, the
 * vectors, the CG work and the preconditioner, the output, from the counts read
 * (hs_fem_counts_refined, hs_fem_matrix_entries).  Over several ranks a
 * rank's share is the even share and the layer of cells beside it, by a measured surface law; the
 * AMG hierarchy is an allowance measured on P1/P2, scalar and elasticity (see fem_memory.c).
 * Not collective. */
void hs_fem_memory(const hs_ctx *ctx, const hs_fem_memory_case *c, double *device, double *host);

#endif
