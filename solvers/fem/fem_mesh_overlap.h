/* Refusing meshes whose cells overlap without being neighbours (pieces over one another, a boundary crossing itself). */
#ifndef HS_FEM_MESH_OVERLAP_H
#define HS_FEM_MESH_OVERLAP_H

#include "solvers/fem/fem_mesh.h"

/* Refuse a mesh in which some point lies inside two cells that are not neighbours.  Called once the
 * cells are positive and no two lie on the same side of a shared facet (no folds): then the number of
 * cells over a point is the winding number of the mesh's boundary (the facets of one cell only,
 * boundary[c] bit k set for the facet of cell c opposite its local vertex k, oriented outwards)
 * about it, so it is enough to look at the boundary:
 *   - two boundary facets that cut through each other (2-D: segments crossing at a point inside
 *     both; 3-D: an edge of one triangle through the inside of the other), each beyond 1e-4 of the
 *     larger one's longest edge, overlap: two pieces intersect or the boundary crosses itself;
 *   - just inside every boundary facet (at 1/100 of the way to its cell's opposite vertex) the
 *     winding number, counted along an axis-parallel ray, must be 1; a piece lying wholly inside
 *     another, or a region covered twice, gives 2 there (confirmed by finding the second cell).
 * Facets that touch (shared nodes, coincident unmerged interfaces, a node on another piece's side)
 * are not overlaps.  The cost is O(B log B) for B boundary facets (a bounding-volume tree), in
 * OpenMP threads.  The error names path, the line of a cell (line[c]), and the key `key`.  Not
 * collective. */
int hs_fem_mesh_refuse_overlaps(const hs_fem_mesh *m, const unsigned char *boundary, const char *path, const int *line,
                                const char *key);

#endif
