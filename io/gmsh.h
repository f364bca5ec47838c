/* Gmsh mesh files (.msh 2.2 and 4.1, ASCII and binary): nodes, simplex elements and physical groups. */
#ifndef HS_GMSH_H
#define HS_GMSH_H

#include <stdint.h>

/* Gmsh element types that are read (others are an input error naming the type). */
enum {
    HS_GMSH_LINE2 = 1,
    HS_GMSH_TRI3 = 2,
    HS_GMSH_TET4 = 4,
    HS_GMSH_LINE3 = 8,
    HS_GMSH_TRI6 = 9,
    HS_GMSH_TET10 = 11,
    HS_GMSH_POINT = 15
};

/* A physical group: its dimension (0 point, 1 curve, 2 surface, 3 volume), tag and name (its tag in
 * decimal when $PhysicalNames names it not). */
typedef struct hs_gmsh_group {
    int dim, tag;
    char name[128];
} hs_gmsh_group;

/* The file's contents.  Nodes keep the file's order; elements keep the file's order too, an element
 * of an entity that belongs to several physical groups appearing once per group (dup = 1 on the
 * repeats), so that a boundary facet can carry two group names. */
typedef struct hs_gmsh {
    char *path;
    double version;           /* 2.2 or 4.1 */
    int binary;
    int64_t nnodes;
    int64_t *node_tag;        /* the file's node tags */
    double *xyz;              /* 3 per node */
    int64_t nelems;
    int *type;                /* HS_GMSH_* */
    int *dim;                 /* 0..3 */
    int *phys;                /* physical tag (0: none) */
    int *dup;                 /* 1: repeat of the previous element for another physical group */
    int *line;                /* line of the file where the element is (binary: its section's line) */
    int64_t *etag;            /* the file's element tag (the number Gmsh shows; a repeat keeps its own in MSH 2.2) */
    int64_t *ptr;             /* nelems + 1: element e's nodes are node[ptr[e] .. ptr[e+1]) */
    int64_t *node;            /* node INDICES (0-based positions in the node arrays), Gmsh order */
    int ngroups;
    hs_gmsh_group *groups;
} hs_gmsh;

/* Read a .msh file (a 2.2 $ParametricNodes section is read as $Nodes).  Malformed or unsupported contents (another version, a missing $MeshFormat,
 * $Nodes or $Elements section, a truncated number, an element naming a node the file lacks, an
 * element type other than points, lines, triangles and tetrahedra of order 1 or 2, a binary file of
 * the other endianness) are input errors "PATH:LINE: message" (HS_ERR_INPUT).  Not collective. */
int hs_gmsh_read(const char *path, hs_gmsh **mesh);
void hs_gmsh_free(hs_gmsh *mesh);

/* Number of nodes of a Gmsh element type (0 when unknown) and its name ("quadrangle", ...). */
int hs_gmsh_type_nodes(int type);
const char *hs_gmsh_type_name(int type);

/* The physical group of dimension dim called `name`, or NULL. */
const hs_gmsh_group *hs_gmsh_find_group(const hs_gmsh *mesh, int dim, const char *name);

#endif
