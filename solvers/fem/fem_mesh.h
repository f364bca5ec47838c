/* Simplex meshes for the finite elements: from Gmsh files, generated boxes, uniform refinement, edges. */
#ifndef HS_FEM_MESH_H
#define HS_FEM_MESH_H

#include <stdint.h>

#include "io/gmsh.h"

/* A further physical group of a cell (the cell keeps its first in region), with the element of the
 * file that says so: MSH 2.2 repeats the element for each group under a tag and line of its own,
 * 4.1 gives an entity several groups (the cell's own element). */
typedef struct hs_fem_shared {
    int64_t cell;
    int tag, line;
    int64_t elem;
} hs_fem_shared;

/* A conforming mesh of triangles (dim 2) or tetrahedra (dim 3) with its boundary facets (segments
 * or triangles that the file tags with a physical group).  Cells are positively oriented
 * (anticlockwise triangles, tetrahedra of positive volume).  Not distributed: every rank holds the
 * whole mesh. */
typedef struct hs_fem_mesh {
    int dim;
    int64_t nverts;
    double *x;            /* 3 per vertex (z = 0 in 2-D) */
    int64_t ncells;
    int64_t *cell;        /* dim + 1 vertices per cell */
    int *region;          /* physical tag of each cell (0: none) */
    int *cell_line;       /* the file line of each cell (of its parent before refinement), for input
                           * errors about a cell; NULL for a generated mesh */
    int64_t *cell_elem;   /* the file's element tag of each cell (of its parent), likewise */
    int64_t nshared;      /* the further groups of the cells in more than one, by cell (refined: */
    hs_fem_shared *shared;/* each child keeps its parent's); fem.c picks the region among them */
    int64_t nfacets;
    int64_t *facet;       /* dim vertices per facet */
    int *facet_group;     /* physical tag of each facet */
    int ngroups;
    hs_gmsh_group *groups;/* the physical groups (names) */
    /* edges (hs_fem_mesh_edges): sorted vertex pairs, and per cell its 3 (6) edges in the local
     * order (0,1) (1,2) (2,0) of a triangle, (0,1) (1,2) (0,2) (0,3) (2,3) (1,3) of a tetrahedron
     * (the order of Gmsh's 6-node triangle and 10-node tetrahedron) */
    int64_t nedges;
    int64_t *edge;        /* 2 per edge, first < second */
    int64_t *cell_edge;   /* 3 or 6 per cell */
    int64_t *edge_start;  /* nverts + 1: the edges whose first vertex is a are edge_start[a] .. edge_start[a+1] */
    /* vertex -> cells (hs_fem_mesh_edges builds it too) */
    int64_t *v2c_ptr, *v2c;
} hs_fem_mesh;

/* The local vertex pairs of the edges of a cell, in the order above. */
extern const int hs_fem_tri_edges[3][2];
extern const int hs_fem_tet_edges[6][2];

/* Build from a Gmsh file's contents: cells are the elements of the highest dimension present
 * (triangles or tetrahedra, order 1 or 2: corners only, the geometry is affine), facets the
 * elements one dimension lower.  Vertices are the nodes that cells use, in file order.  Input
 * errors naming the file and line: no triangles or tetrahedra, a tetrahedron of non-positive
 * volume (inverted), a degenerate triangle, a 2-D mesh that is not planar in z, a boundary
 * element whose nodes no cell uses, a fold (two cells on the same side of their shared facet, or a
 * facet of three cells), cells over one another that share no facet (hs_fem_mesh_refuse_overlaps,
 * key fem.mesh).  Clockwise triangles are turned anticlockwise (a plane has no preferred side).
 * Not collective. */
int hs_fem_mesh_from_gmsh(const hs_gmsh *g, hs_fem_mesh **mesh);
/* Read and build in one step. */
int hs_fem_mesh_read(const char *path, hs_fem_mesh **mesh);

/* The box [0, L0] x [0, L1] (x [0, L2]) split into n0 x n1 (x n2) squares (cubes) of 2 triangles
 * (6 Kuhn tetrahedra), region tag 1 named "domain", boundary facets in groups "xlo" (tag 11),
 * "xhi" (12), "ylo" (13), "yhi" (14), "zlo" (15), "zhi" (16).  Refining it uniformly gives the box
 * of twice the cells again (Freudenthal's subdivision), so it also stands for a refinement chain. */
int hs_fem_mesh_box(int dim, const int64_t n[3], const double L[3], hs_fem_mesh **mesh);

/* Uniform refinement: every triangle into 4, every tetrahedron into 8 (Bey's red refinement, the
 * shortest interior diagonal), facets likewise; regions and groups kept. */
int hs_fem_mesh_refine(const hs_fem_mesh *m, hs_fem_mesh **fine);

/* Build the edges and the vertex -> cell adjacency (idempotent). */
int hs_fem_mesh_edges(hs_fem_mesh *m);

/* The edges and (3-D) the triangular faces of the cells, counted (each once however many cells share
 * it), without building them: sorted keys, freed before it returns.  For the memory estimate of a
 * refined mesh.  Not collective. */
int hs_fem_mesh_count(const hs_fem_mesh *m, int64_t *edges, int64_t *faces);

/* The edge joining vertices a and b (either order), or -1. */
int64_t hs_fem_mesh_find_edge(const hs_fem_mesh *m, int64_t a, int64_t b);

/* Signed measure (area, volume) of cell c. */
double hs_fem_cell_measure(const hs_fem_mesh *m, int64_t c);

/* The physical group called `name` of dimension dim, or NULL. */
const hs_gmsh_group *hs_fem_mesh_group(const hs_fem_mesh *m, int dim, const char *name);

void hs_fem_mesh_free(hs_fem_mesh *m);

#endif
