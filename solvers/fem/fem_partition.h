/* Cell partitions of a simplex mesh over MPI ranks: METIS (where built in) or recursive coordinate bisection. */
#ifndef HS_FEM_PARTITION_H
#define HS_FEM_PARTITION_H

#include "solvers/fem/fem_mesh.h"

/* partition: HS_FEM_PART_AUTO (METIS when built in, else RCB), _METIS, _RCB; in the order of the choices. */
enum { HS_FEM_PART_AUTO = 0, HS_FEM_PART_METIS = 1, HS_FEM_PART_RCB = 2 };
#define HS_FEM_PART_CHOICES "auto|metis|rcb"

/* part[c] in [0, nparts) for every cell: METIS_PartMeshDual (cells sharing a facet are neighbours)
 * or recursive coordinate bisection of the cell centroids (split the longest extent at the
 * count's proportional point, ties broken by cell index).  Deterministic: every rank computing it
 * gets the same partition.  Not collective.  *used receives the method that ran (RCB or METIS). */
int hs_fem_partition(const hs_fem_mesh *m, int nparts, int method, int *part, int *used);

#endif
