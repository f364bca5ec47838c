/* Simplex meshes: built from Gmsh files with orientation checks, generated boxes, red refinement, edges. */
#include "solvers/fem/fem_mesh.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/error.h"
#include "solvers/fem/fem_mesh_overlap.h"

const int hs_fem_tri_edges[3][2] = {{0, 1}, {1, 2}, {2, 0}};
const int hs_fem_tet_edges[6][2] = {{0, 1}, {1, 2}, {0, 2}, {0, 3}, {2, 3}, {1, 3}};

static void *xmalloc(size_t bytes) { return malloc(bytes ? bytes : 1); }

void hs_fem_mesh_free(hs_fem_mesh *m)
{
    if (!m) return;
    free(m->x);
    free(m->cell);
    free(m->region);
    free(m->cell_line);
    free(m->cell_elem);
    free(m->shared);
    free(m->facet);
    free(m->facet_group);
    free(m->groups);
    free(m->edge);
    free(m->cell_edge);
    free(m->edge_start);
    free(m->v2c_ptr);
    free(m->v2c);
    free(m);
}

static double det3(const double *a, const double *b, const double *c)
{
    return a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0]) + a[2] * (b[0] * c[1] - b[1] * c[0]);
}

/* Signed area (triangle) or volume (tetrahedron) of the vertices v. */
static double simplex_measure(int dim, const double *x, const int64_t *v)
{
    if (dim == 2) {
        const double *a = x + 3 * v[0], *b = x + 3 * v[1], *c = x + 3 * v[2];
        return 0.5 * ((b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]));
    }
    double e[3][3];
    for (int k = 0; k < 3; k++)
        for (int d = 0; d < 3; d++) e[k][d] = x[3 * v[k + 1] + d] - x[3 * v[0] + d];
    return det3(e[0], e[1], e[2]) / 6.0;
}

double hs_fem_cell_measure(const hs_fem_mesh *m, int64_t c)
{
    return simplex_measure(m->dim, m->x, m->cell + (int64_t)(m->dim + 1) * c);
}

const hs_gmsh_group *hs_fem_mesh_group(const hs_fem_mesh *m, int dim, const char *name)
{
    for (int i = 0; i < m->ngroups; i++)
        if (m->groups[i].dim == dim && !strcmp(m->groups[i].name, name)) return &m->groups[i];
    return NULL;
}

/* Every cell positive: flip clockwise triangles (marked in flipped), refuse inverted tetrahedra and
 * degenerate cells. */
static int orient(hs_fem_mesh *m, const hs_gmsh *g, const int *line, char *flipped)
{
    int nv = m->dim + 1;
    for (int64_t c = 0; c < m->ncells; c++) {
        int64_t *v = m->cell + (int64_t)nv * c;
        double s = simplex_measure(m->dim, m->x, v);
        const char *path = g ? g->path : "mesh";
        int ln = line ? line[c] : 0;
        /* "degenerate" relative to the cell's own size, so that the small well-shaped cells of a graded
         * mesh pass (a bound on the whole mesh's box refused them): a regular cell's measure is 0.43
         * (triangle) or 0.12 (tetrahedron) times its longest edge to the power dim */
        double lmax = 0;
        for (int a = 0; a < nv; a++)
            for (int b = a + 1; b < nv; b++) {
                double l2 = 0;
                for (int d = 0; d < m->dim; d++) {
                    double e = m->x[3 * v[a] + d] - m->x[3 * v[b] + d];
                    l2 += e * e;
                }
                lmax = fmax(lmax, sqrt(l2));
            }
        if (!isfinite(s) || !isfinite(lmax))
            return hs_input_error(path, ln, NULL, "%s %lld: the %s of its vertices is not a finite number (coordinates too large?)",
                                  m->dim == 2 ? "triangle" : "tetrahedron", (long long)c + 1, m->dim == 2 ? "area" : "volume");
        if (fabs(s) <= 1e-12 * pow(lmax, m->dim))
            return hs_input_error(path, ln, NULL, "%s %lld is degenerate (%s %.3e, longest edge %.3e)", m->dim == 2 ? "triangle" : "tetrahedron",
                                  (long long)c + 1, m->dim == 2 ? "area" : "volume", s, lmax);
        if (s < 0 && m->dim == 3)
            return hs_input_error(path, ln, NULL, "tetrahedron %lld is inverted (volume %.6e < 0: its nodes are in the wrong "
                                                  "order)", (long long)c + 1, s);
        flipped[c] = s < 0;
        if (s < 0) {
            int64_t t = v[1];
            v[1] = v[2];
            v[2] = t;
        }
    }
    return HS_OK;
}

/* The cells other than c that hold the facet of c opposite its local vertex k (up to 2 in out);
 * returns how many there are. */
static int facet_neighbours(const hs_fem_mesh *m, int64_t c, int k, int64_t out[2])
{
    const int nv = m->dim + 1;
    const int64_t *v = m->cell + nv * c;
    int64_t fv[3];
    for (int a = 0, j = 0; a < nv; a++)
        if (a != k) fv[j++] = v[a];
    int n = 0;
    for (int64_t p = m->v2c_ptr[fv[0]]; p < m->v2c_ptr[fv[0] + 1]; p++) {
        int64_t d = m->v2c[p];
        if (d == c) continue;
        const int64_t *w = m->cell + nv * d;
        int hit = 0;
        for (int a = 0; a < nv; a++)
            for (int j = 1; j < m->dim; j++) hit += w[a] == fv[j];
        if (hit == m->dim - 1) {
            if (n < 2) out[n] = d;
            n++;
        }
    }
    return n;
}

/* The sign of the simplex made of the facet's vertices fv (in the order given) and the vertex of
 * cell c off the facet: two cells across a facet lie on opposite sides of it exactly when their
 * signs for the same fv differ. */
static int side_of_facet(const hs_fem_mesh *m, int64_t c, const int64_t *fv)
{
    const int nv = m->dim + 1;
    const int64_t *v = m->cell + nv * c;
    int64_t s[4];
    for (int j = 0; j < m->dim; j++) s[j] = fv[j];
    for (int a = 0; a < nv; a++) {
        int on = 0;
        for (int j = 0; j < m->dim; j++) on |= v[a] == fv[j];
        if (!on) s[m->dim] = v[a];
    }
    return simplex_measure(m->dim, m->x, s) > 0 ? 1 : -1;
}

/* Whether a facet of cell c is shared with a cell on its own side, or by more than two cells (the
 * partner, or -1, in *other; the facet's vertices in fv).  With bnd, bit k of *bnd is set when the
 * facet opposite local vertex k has no other cell (a boundary facet). */
static int cell_folds(const hs_fem_mesh *m, int64_t c, int64_t *other, int64_t fv[3], unsigned char *bnd)
{
    const int nv = m->dim + 1;
    const int64_t *v = m->cell + nv * c;
    if (bnd) *bnd = 0;
    for (int k = 0; k < nv; k++) {
        int64_t nb[2];
        int n = facet_neighbours(m, c, k, nb);
        if (bnd && n == 0) *bnd |= (unsigned char)(1u << k);
        for (int a = 0, j = 0; a < nv; a++)
            if (a != k) fv[j++] = v[a];
        if (n > 1) {
            *other = -1;
            return 1;
        }
        if (n == 1 && side_of_facet(m, c, fv) == side_of_facet(m, nb[0], fv)) {
            *other = nb[0];
            return 1;
        }
    }
    return 0;
}

/* Refuse a folded mesh.  orient() turns each clockwise triangle on its own, which is right only when
 * a whole connected piece is clockwise: a node moved across an edge of its star inverts a triangle,
 * turned around it overlaps its neighbours, and the solution came out silently wrong.  Across every
 * interior facet (edge, face) the two cells must lie on opposite sides, and no facet may have three
 * cells.  Tetrahedra are never turned (inverted ones are refused), but cells written overlapping
 * fold the same way.  The cell named is the one turned against the majority, else the later one.
 * Fills boundary (per cell, bit k: the facet opposite vertex k has no other cell) on the way. */
static int refuse_folds(const hs_fem_mesh *m, const hs_gmsh *g, const int *line, const char *flipped, unsigned char *boundary)
{
    int64_t first = m->ncells, nflipped = 0;
#pragma omp parallel for schedule(dynamic, 1024) reduction(min : first) reduction(+ : nflipped)
    for (int64_t c = 0; c < m->ncells; c++) {
        int64_t o, fv[3];
        nflipped += flipped[c];
        if (cell_folds(m, c, &o, fv, &boundary[c]) && c < first) first = c;
    }
    if (first == m->ncells) return HS_OK;
    int64_t other, fv[3], bad = first;
    cell_folds(m, first, &other, fv, NULL);
    const char *cell = m->dim == 2 ? "triangle" : "tetrahedron", *cells = m->dim == 2 ? "triangles" : "tetrahedra";
    char at[200];
    int w = 0;
    for (int j = 0; j < m->dim; j++) {
        const double *x = m->x + 3 * fv[j];
        const char *sep = j == 0 ? "" : j + 1 == m->dim ? " and " : ", ";
        if (m->dim == 2) w += snprintf(at + w, sizeof at - (size_t)w, "%s(%g, %g)", sep, x[0], x[1]);
        else w += snprintf(at + w, sizeof at - (size_t)w, "%s(%g, %g, %g)", sep, x[0], x[1], x[2]);
    }
    if (other < 0)
        return hs_input_error(g->path, line[bad], NULL, "%s %lld: its %s through %s is shared by more than two %s (the mesh "
                                                         "overlaps itself)",
                              cell, (long long)bad + 1, m->dim == 2 ? "side" : "face", at, cells);
    /* the cell turned against most of the mesh is the one out of place */
    int majority = 2 * nflipped > m->ncells;
    if (flipped[other] != majority && flipped[first] == majority) bad = other;
    else if (flipped[first] == flipped[other] && other > first) bad = other;
    int64_t mate = bad == first ? other : first;
    return hs_input_error(g->path, line[bad], NULL, "%s %lld folds over %s %lld (line %d): both lie on the same side of "
                                                     "their shared %s through %s, so the mesh overlaps itself (a node "
                                                     "moved across an edge?)",
                          cell, (long long)bad + 1, cell, (long long)mate + 1, line[mate], m->dim == 2 ? "side" : "face", at);
}

/* A cell's sorted vertices (the unused fourth one -1 for triangles) and its index. */
typedef struct {
    int64_t v[4], cell;
} cell_key;

static int cmp_cell_key(const void *a, const void *b)
{
    const cell_key *x = a, *y = b;
    for (int k = 0; k < 4; k++)
        if (x->v[k] != y->v[k]) return x->v[k] < y->v[k] ? -1 : 1;
    return (x->cell > y->cell) - (x->cell < y->cell);
}

/* Drop the repeats of simplices (n of nv vertices each, with a tag, a file line and, where elem is
 * not NULL, an element tag per simplex) that have the same vertices and, where `by_tag`, the same
 * tag; the first copy is kept, and newidx (where not NULL) says where each simplex, a repeat too,
 * went.  Cells: MSH 2.2
 * writes an element once for each physical group it belongs to (4.1 names the entity once), so the
 * first copy (its region the first group, as for 4.1) is kept and the repeats, which would be
 * assembled twice, dropped.  Facets: the same side repeated in one group doubled its flux or its
 * Robin term (a side in two groups keeps both, one per group). */
static int drop_repeats(int64_t *n, int nv, int64_t *vert, int *tag, int *line, int64_t *elem, int by_tag, int64_t *newidx)
{
    const int64_t count = *n;
    cell_key *key = malloc((size_t)(count ? count : 1) * sizeof *key);
    int64_t *keep = malloc((size_t)(count ? count : 1) * sizeof *keep); /* the copy each simplex is (itself: kept) */
    if (!key || !keep) {
        free(key), free(keep);
        return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    }
    for (int64_t c = 0; c < count; c++) {
        cell_key *k = &key[c];
        for (int i = 0; i < 4; i++) k->v[i] = i < nv ? vert[c * nv + i] : -1;
        for (int i = 1; i < nv; i++)
            for (int j = i; j > 0 && k->v[j - 1] > k->v[j]; j--) {
                int64_t t = k->v[j];
                k->v[j] = k->v[j - 1], k->v[j - 1] = t;
            }
        if (by_tag) k->v[3] = tag[c]; /* facets have 3 vertices at most */
        k->cell = c;
        keep[c] = c;
    }
    qsort(key, (size_t)count, sizeof *key, cmp_cell_key);
    for (int64_t i = 1; i < count; i++)
        if (!memcmp(key[i].v, key[i - 1].v, sizeof key[i].v)) keep[key[i].cell] = keep[key[i - 1].cell];
    int64_t o = 0;
    for (int64_t c = 0; c < count; c++) {
        if (keep[c] != c) continue;
        if (newidx) newidx[c] = o;
        memmove(vert + o * nv, vert + c * nv, (size_t)nv * sizeof(int64_t));
        tag[o] = tag[c];
        if (elem) elem[o] = elem[c];
        line[o++] = line[c];
    }
    /* a repeat goes where its first copy went (which comes earlier in the file) */
    for (int64_t c = 0; newidx && c < count; c++)
        if (keep[c] != c) newidx[c] = newidx[keep[c]];
    *n = o;
    free(key), free(keep);
    return HS_OK;
}

static int cmp_shared(const void *a, const void *b)
{
    const hs_fem_shared *x = a, *y = b;
    if (x->cell != y->cell) return x->cell < y->cell ? -1 : 1;
    if (x->tag != y->tag) return x->tag < y->tag ? -1 : 1;
    return (x->line > y->line) - (x->line < y->line);
}

/* The cells' further groups (m->shared, by cell, each (cell, group) once): the repeats drop_repeats
 * folded into an earlier copy (the copies' first tags, lines and elements, and where each went), and
 * 4.1's entity groups (dup, numbered as the copies). */
static int collect_shared(hs_fem_mesh *m, const int *tag, const int *line, const int64_t *elem, int64_t ncopies,
                          const int64_t *newidx, const hs_fem_shared *dup, int64_t ndup)
{
    int64_t n = 0;
    for (int64_t c = 0; c < ncopies; c++) n += tag[c] != m->region[newidx[c]];
    for (int64_t k = 0; k < ndup; k++) n += dup[k].tag != m->region[newidx[dup[k].cell]];
    m->nshared = 0;
    if (n == 0) return HS_OK;
    m->shared = malloc((size_t)n * sizeof *m->shared);
    if (!m->shared) return HS_FAIL(HS_ERR_RUNTIME, "out of memory for the mesh");
    for (int64_t c = 0; c < ncopies; c++)
        if (tag[c] != m->region[newidx[c]]) m->shared[m->nshared++] = (hs_fem_shared){newidx[c], tag[c], line[c], elem[c]};
    for (int64_t k = 0; k < ndup; k++) {
        const int64_t c = newidx[dup[k].cell];
        if (dup[k].tag != m->region[c]) m->shared[m->nshared++] = (hs_fem_shared){c, dup[k].tag, dup[k].line, dup[k].elem};
    }
    qsort(m->shared, (size_t)m->nshared, sizeof *m->shared, cmp_shared);
    int64_t u = 0;
    for (int64_t k = 0; k < m->nshared; k++)
        if (u == 0 || m->shared[k].cell != m->shared[u - 1].cell || m->shared[k].tag != m->shared[u - 1].tag) m->shared[u++] = m->shared[k];
    m->nshared = u;
    return HS_OK;
}

int hs_fem_mesh_from_gmsh(const hs_gmsh *g, hs_fem_mesh **out)
{
    *out = NULL;
    int dim = 0;
    for (int64_t e = 0; e < g->nelems; e++) dim = g->dim[e] > dim ? g->dim[e] : dim;
    if (dim < 2) return hs_input_error(g->path, 0, NULL, "the mesh has no triangles or tetrahedra");
    hs_fem_mesh *m = calloc(1, sizeof *m);
    if (!m) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    m->dim = dim;
    int64_t nc = 0, nf = 0;
    for (int64_t e = 0; e < g->nelems; e++) {
        if (g->dim[e] == dim && !g->dup[e]) nc++;
        if (g->dim[e] == dim - 1) nf++;
    }
    int64_t *vid = xmalloc((size_t)g->nnodes * sizeof(int64_t));
    int *line = xmalloc((size_t)nc * sizeof(int));
    int *fline = xmalloc((size_t)nf * sizeof(int));
    int64_t *elem = xmalloc((size_t)nc * sizeof(int64_t));
    /* the cells' further groups: 4.1's repeats of an element for an entity's other groups now,
     * 2.2's repeated elements once drop_repeats has found them */
    int64_t ndup = 0;
    for (int64_t e = 0; e < g->nelems; e++) ndup += g->dim[e] == dim && g->dup[e];
    hs_fem_shared *dup = xmalloc((size_t)ndup * sizeof *dup);
    int64_t *newidx = xmalloc((size_t)nc * sizeof(int64_t));
    int *first_tag = xmalloc((size_t)nc * sizeof(int)), *first_line = xmalloc((size_t)nc * sizeof(int));
    int64_t *first_elem = xmalloc((size_t)nc * sizeof(int64_t));
    char *flipped = NULL;           /* per cell: turned anticlockwise by orient() */
    unsigned char *boundary = NULL; /* per cell: bit k, the facet opposite vertex k has no other cell */
    m->cell = xmalloc((size_t)nc * (dim + 1) * sizeof(int64_t));
    m->region = xmalloc((size_t)nc * sizeof(int));
    m->facet = xmalloc((size_t)nf * dim * sizeof(int64_t));
    m->facet_group = xmalloc((size_t)nf * sizeof(int));
    m->groups = xmalloc((size_t)g->ngroups * sizeof(hs_gmsh_group));
    int rc = HS_OK;
    if (!vid || !line || !fline || !elem || !dup || !newidx || !first_tag || !first_line || !first_elem || !m->cell || !m->region ||
        !m->facet || !m->facet_group || !m->groups)
        rc = HS_FAIL(HS_ERR_RUNTIME, "out of memory for the mesh");
    ndup = 0;
    if (rc == HS_OK) {
        for (int64_t i = 0; i < g->nnodes; i++) vid[i] = -1;
        /* vertices: corner nodes of cells, numbered in file order */
        for (int64_t e = 0; e < g->nelems; e++)
            if (g->dim[e] == dim)
                for (int k = 0; k <= dim; k++) vid[g->node[g->ptr[e] + k]] = 0;
        for (int64_t i = 0; i < g->nnodes; i++)
            if (vid[i] == 0) vid[i] = m->nverts++;
        m->x = xmalloc((size_t)m->nverts * 3 * sizeof(double));
        if (!m->x) rc = HS_FAIL(HS_ERR_RUNTIME, "out of memory for the mesh");
    }
    if (rc == HS_OK) {
        for (int64_t i = 0; i < g->nnodes; i++)
            if (vid[i] >= 0) memcpy(m->x + 3 * vid[i], g->xyz + 3 * i, 3 * sizeof(double));
        for (int64_t e = 0; e < g->nelems && rc == HS_OK; e++) {
            if (g->dim[e] == dim && !g->dup[e]) {
                for (int k = 0; k <= dim; k++) m->cell[m->ncells * (dim + 1) + k] = vid[g->node[g->ptr[e] + k]];
                m->region[m->ncells] = g->phys[e];
                elem[m->ncells] = g->etag[e];
                line[m->ncells++] = g->line[e];
            } else if (g->dim[e] == dim) { /* 4.1: the element just kept, in another group of its entity */
                dup[ndup++] = (hs_fem_shared){m->ncells - 1, g->phys[e], g->line[e], g->etag[e]};
            } else if (g->dim[e] == dim - 1) {
                /* the first unused node ends it (each raised the error again: printed twice) */
                for (int k = 0; k < dim && rc == HS_OK; k++) {
                    int64_t v = vid[g->node[g->ptr[e] + k]];
                    if (v < 0)
                        rc = hs_input_error(g->path, g->line[e], NULL, "a boundary %s uses a node that no %s uses",
                                            dim == 2 ? "line" : "triangle", dim == 2 ? "triangle" : "tetrahedron");
                    m->facet[m->nfacets * dim + k] = v;
                }
                fline[m->nfacets] = g->line[e];
                m->facet_group[m->nfacets++] = g->phys[e];
            }
        }
    }
    const int64_t ncopies = m->ncells;
    if (rc == HS_OK) {
        memcpy(first_tag, m->region, (size_t)ncopies * sizeof(int));
        memcpy(first_line, line, (size_t)ncopies * sizeof(int));
        memcpy(first_elem, elem, (size_t)ncopies * sizeof(int64_t));
        rc = drop_repeats(&m->ncells, dim + 1, m->cell, m->region, line, elem, 0, newidx);
    }
    if (rc == HS_OK) rc = drop_repeats(&m->nfacets, dim, m->facet, m->facet_group, fline, NULL, 1, NULL);
    if (rc == HS_OK) rc = collect_shared(m, first_tag, first_line, first_elem, ncopies, newidx, dup, ndup);
    if (rc == HS_OK && dim == 2) {
        /* a planar mesh: all z equal */
        for (int64_t i = 1; i < m->nverts && rc == HS_OK; i++)
            if (fabs(m->x[3 * i + 2] - m->x[2]) > 1e-12 * (1 + fabs(m->x[2]))) {
                /* named by the file's node tags (the vertex numbers were ours alone) */
                int64_t tag_i = -1, tag_0 = -1;
                for (int64_t n = 0; n < g->nnodes; n++) {
                    if (vid[n] == i) tag_i = g->node_tag[n];
                    if (vid[n] == 0) tag_0 = g->node_tag[n];
                }
                rc = hs_input_error(g->path, 0, NULL, "the triangles do not lie in one plane z = const (node %lld has z = %g, "
                                                      "node %lld z = %g)", (long long)tag_i, m->x[3 * i + 2], (long long)tag_0, m->x[2]);
            }
        for (int64_t i = 0; i < m->nverts; i++) m->x[3 * i + 2] = 0;
    }
    if (rc == HS_OK) {
        if (g->ngroups) memcpy(m->groups, g->groups, (size_t)g->ngroups * sizeof(hs_gmsh_group)); /* none: groups NULL */
        m->ngroups = g->ngroups;
        rc = (flipped = malloc((size_t)(m->ncells ? m->ncells : 1))) ? orient(m, g, line, flipped)
                                                                        : HS_FAIL(HS_ERR_RUNTIME, "out of memory for the mesh");
    }
    if (rc == HS_OK) rc = hs_fem_mesh_edges(m);
    if (rc == HS_OK && !(boundary = malloc((size_t)(m->ncells ? m->ncells : 1))))
        rc = HS_FAIL(HS_ERR_RUNTIME, "out of memory for the mesh");
    if (rc == HS_OK) rc = refuse_folds(m, g, line, flipped, boundary);
    for (int64_t f = 0; f < m->nfacets && rc == HS_OK; f++) {
        /* every vertex pair of the facet an edge, and one cell holding all its vertices */
        const int64_t *v = m->facet + f * dim;
        int ok = 1;
        for (int a = 0; a < dim && ok; a++)
            for (int b = a + 1; b < dim && ok; b++) ok = v[a] != v[b] && hs_fem_mesh_find_edge(m, v[a], v[b]) >= 0;
        if (ok && dim == 3) {
            ok = 0;
            for (int64_t p = m->v2c_ptr[v[0]]; p < m->v2c_ptr[v[0] + 1] && !ok; p++) {
                const int64_t *cv = m->cell + 4 * m->v2c[p];
                int hit = 0;
                for (int k = 0; k < 4; k++) hit += cv[k] == v[1] || cv[k] == v[2];
                ok = hit == 2;
            }
        }
        if (!ok)
            rc = hs_input_error(g->path, fline[f], NULL, "this boundary %s is not a %s of any %s", dim == 2 ? "line" : "triangle",
                                dim == 2 ? "side" : "face", dim == 2 ? "triangle" : "tetrahedron");
    }
    /* cells over one another without sharing a facet: pieces that intersect, one inside another, a
     * boundary that crosses itself */
    if (rc == HS_OK) rc = hs_fem_mesh_refuse_overlaps(m, boundary, g->path, line, "fem.mesh");
    if (rc == HS_OK) m->cell_line = line, line = NULL, m->cell_elem = elem, elem = NULL;
    free(boundary);
    free(vid);
    free(line);
    free(elem), free(dup), free(newidx), free(first_tag), free(first_line), free(first_elem);
    free(fline);
    free(flipped);
    if (rc != HS_OK) {
        hs_fem_mesh_free(m);
        return rc;
    }
    *out = m;
    return HS_OK;
}

int hs_fem_mesh_read(const char *path, hs_fem_mesh **mesh)
{
    hs_gmsh *g = NULL;
    *mesh = NULL;
    HS_CHECK(hs_gmsh_read(path, &g));
    int rc = hs_fem_mesh_from_gmsh(g, mesh);
    hs_gmsh_free(g);
    return rc;
}

/* ------------------------------------------------------------------ boxes */

static int add_groups(hs_fem_mesh *m, int dim)
{
    static const char *names[6] = {"xlo", "xhi", "ylo", "yhi", "zlo", "zhi"};
    m->ngroups = 1 + 2 * dim;
    m->groups = calloc((size_t)m->ngroups, sizeof *m->groups);
    if (!m->groups) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    m->groups[0] = (hs_gmsh_group){dim, 1, "domain"};
    for (int i = 0; i < 2 * dim; i++) {
        m->groups[1 + i].dim = dim - 1;
        m->groups[1 + i].tag = 11 + i;
        strcpy(m->groups[1 + i].name, names[i]);
    }
    return HS_OK;
}

int hs_fem_mesh_box(int dim, const int64_t n[3], const double L[3], hs_fem_mesh **out)
{
    *out = NULL;
    if (dim < 2 || dim > 3) return hs_input_error("hs_fem_mesh_box", 0, "dim", "%d is not 2 or 3", dim);
    int64_t nx = n[0], ny = n[1], nz = dim == 3 ? n[2] : 0;
    if (nx < 1 || ny < 1 || (dim == 3 && nz < 1)) return hs_input_error("hs_fem_mesh_box", 0, "n", "sizes must be >= 1");
    hs_fem_mesh *m = calloc(1, sizeof *m);
    if (!m) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    m->dim = dim;
    int64_t px = nx + 1, py = ny + 1, pz = dim == 3 ? nz + 1 : 1;
    m->nverts = px * py * pz;
    m->ncells = dim == 2 ? 2 * nx * ny : 6 * nx * ny * nz;
    m->nfacets = dim == 2 ? 2 * (nx + ny) : 4 * (nx * ny + ny * nz + nx * nz);
    m->x = xmalloc((size_t)m->nverts * 3 * sizeof(double));
    m->cell = xmalloc((size_t)m->ncells * (dim + 1) * sizeof(int64_t));
    m->region = xmalloc((size_t)m->ncells * sizeof(int));
    m->facet = xmalloc((size_t)m->nfacets * dim * sizeof(int64_t));
    m->facet_group = xmalloc((size_t)m->nfacets * sizeof(int));
    if (!m->x || !m->cell || !m->region || !m->facet || !m->facet_group || add_groups(m, dim) != HS_OK) {
        hs_fem_mesh_free(m);
        return HS_FAIL(HS_ERR_RUNTIME, "out of memory for a box mesh of %lld cells", (long long)m->ncells);
    }
#define VID(i, j, k) ((i) + px * ((j) + py * (k)))
#pragma omp parallel for schedule(static)
    for (int64_t k = 0; k < pz; k++)
        for (int64_t j = 0; j < py; j++)
            for (int64_t i = 0; i < px; i++) {
                double *x = m->x + 3 * VID(i, j, k);
                x[0] = L[0] * (double)i / (double)nx;
                x[1] = L[1] * (double)j / (double)ny;
                x[2] = dim == 3 ? L[2] * (double)k / (double)nz : 0.0;
            }
    if (dim == 2) {
        for (int64_t j = 0; j < ny; j++)
            for (int64_t i = 0; i < nx; i++) {
                int64_t *c = m->cell + 6 * (j * nx + i);
                int64_t a = VID(i, j, 0), b = VID(i + 1, j, 0), cc = VID(i + 1, j + 1, 0), d = VID(i, j + 1, 0);
                c[0] = a, c[1] = b, c[2] = cc;
                c[3] = a, c[4] = cc, c[5] = d;
            }
    } else {
        static const int perm[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
#pragma omp parallel for schedule(static)
        for (int64_t k = 0; k < nz; k++)
            for (int64_t j = 0; j < ny; j++)
                for (int64_t i = 0; i < nx; i++)
                    for (int t = 0; t < 6; t++) {
                        int64_t *c = m->cell + 4 * (6 * ((k * ny + j) * nx + i) + t);
                        int64_t p[3] = {i, j, k};
                        c[0] = VID(p[0], p[1], p[2]);
                        for (int s = 0; s < 3; s++) {
                            p[perm[t][s]]++;
                            c[s + 1] = VID(p[0], p[1], p[2]);
                        }
                        /* odd permutations come out negative */
                        if (simplex_measure(3, m->x, c) < 0) {
                            int64_t tmp = c[1];
                            c[1] = c[2];
                            c[2] = tmp;
                        }
                    }
    }
    for (int64_t c = 0; c < m->ncells; c++) m->region[c] = 1;
    int64_t f = 0;
    if (dim == 2) {
        for (int s = 0; s < 2; s++) {
            for (int64_t j = 0; j < ny; j++, f++) {
                int64_t i = s ? nx : 0;
                m->facet[2 * f] = VID(i, j, 0), m->facet[2 * f + 1] = VID(i, j + 1, 0), m->facet_group[f] = 11 + s;
            }
            for (int64_t i = 0; i < nx; i++, f++) {
                int64_t j = s ? ny : 0;
                m->facet[2 * f] = VID(i, j, 0), m->facet[2 * f + 1] = VID(i + 1, j, 0), m->facet_group[f] = 13 + s;
            }
        }
    } else {
        /* each face square split along its diagonal from the low corner, as the Kuhn cells split it */
        for (int axis = 0; axis < 3; axis++)
            for (int s = 0; s < 2; s++) {
                int a1 = (axis + 1) % 3, a2 = (axis + 2) % 3;
                int64_t na = n[a1], nb = n[a2];
                for (int64_t q = 0; q < nb; q++)
                    for (int64_t p = 0; p < na; p++) {
                        int64_t c0[3], c1[3], c2[3], c3[3];
                        c0[axis] = c1[axis] = c2[axis] = c3[axis] = s ? n[axis] : 0;
                        c0[a1] = p, c0[a2] = q;
                        c1[a1] = p + 1, c1[a2] = q;
                        c2[a1] = p + 1, c2[a2] = q + 1;
                        c3[a1] = p, c3[a2] = q + 1;
                        int64_t v0 = VID(c0[0], c0[1], c0[2]), v1 = VID(c1[0], c1[1], c1[2]), v2 = VID(c2[0], c2[1], c2[2]),
                                v3 = VID(c3[0], c3[1], c3[2]);
                        m->facet[3 * f] = v0, m->facet[3 * f + 1] = v1, m->facet[3 * f + 2] = v2, m->facet_group[f++] = 11 + 2 * axis + s;
                        m->facet[3 * f] = v0, m->facet[3 * f + 1] = v2, m->facet[3 * f + 2] = v3, m->facet_group[f++] = 11 + 2 * axis + s;
                    }
            }
    }
#undef VID
    *out = m;
    return HS_OK;
}

/* ------------------------------------------------------------------ counts */

static int cmp_key3(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    for (int k = 0; k < 3; k++)
        if (x[k] != y[k]) return x[k] < y[k] ? -1 : 1;
    return 0;
}

/* The distinct sorted k-tuples (k = 2: edges, 3: faces) of the cells' vertices. */
static int count_tuples(const hs_fem_mesh *m, int k, int64_t *out)
{
    const int nv = m->dim + 1, per = k == 2 ? (m->dim == 2 ? 3 : 6) : 4;
    const int64_t n = m->ncells * per;
    int64_t(*key)[3] = malloc((size_t)(n ? n : 1) * sizeof *key);
    if (!key) return HS_FAIL(HS_ERR_RUNTIME, "out of memory counting the mesh's %s", k == 2 ? "edges" : "faces");
    const int(*le)[2] = m->dim == 2 ? hs_fem_tri_edges : hs_fem_tet_edges;
    for (int64_t c = 0; c < m->ncells; c++)
        for (int j = 0; j < per; j++) {
            int64_t *t = key[c * per + j];
            if (k == 2) t[0] = m->cell[c * nv + le[j][0]], t[1] = m->cell[c * nv + le[j][1]], t[2] = -1;
            else
                for (int q = 0, w = 0; q < 4; q++)
                    if (q != j) t[w++] = m->cell[c * nv + q]; /* the face opposite vertex j */
            for (int a = 1; a < k; a++) /* sorted */
                for (int b = a; b > 0 && t[b - 1] > t[b]; b--) {
                    int64_t x = t[b];
                    t[b] = t[b - 1], t[b - 1] = x;
                }
        }
    qsort(key, (size_t)n, sizeof *key, cmp_key3);
    int64_t u = 0;
    for (int64_t i = 0; i < n; i++) u += i == 0 || cmp_key3(key[i], key[i - 1]) != 0;
    free(key);
    *out = u;
    return HS_OK;
}

int hs_fem_mesh_count(const hs_fem_mesh *m, int64_t *edges, int64_t *faces)
{
    *faces = m->dim == 2 ? m->ncells : 0;
    if (m->edge) *edges = m->nedges;
    else HS_CHECK(count_tuples(m, 2, edges));
    return m->dim == 3 ? count_tuples(m, 3, faces) : HS_OK;
}

/* ------------------------------------------------------------------ edges */

typedef struct {
    int64_t b, e;
} nb_edge;

int hs_fem_mesh_edges(hs_fem_mesh *m)
{
    if (m->edge) return HS_OK;
    int nv = m->dim + 1, ne = m->dim == 2 ? 3 : 6;
    const int(*le)[2] = m->dim == 2 ? hs_fem_tri_edges : hs_fem_tet_edges;
    /* vertex -> cells */
    m->v2c_ptr = calloc((size_t)m->nverts + 1, sizeof(int64_t));
    m->v2c = xmalloc((size_t)m->ncells * nv * sizeof(int64_t));
    if (!m->v2c_ptr || !m->v2c) return HS_FAIL(HS_ERR_RUNTIME, "out of memory for the mesh adjacency");
    for (int64_t i = 0; i < m->ncells * nv; i++) m->v2c_ptr[m->cell[i] + 1]++;
    for (int64_t v = 0; v < m->nverts; v++) m->v2c_ptr[v + 1] += m->v2c_ptr[v];
    int64_t *fill = xmalloc((size_t)m->nverts * sizeof(int64_t));
    if (!fill) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    memcpy(fill, m->v2c_ptr, (size_t)m->nverts * sizeof(int64_t));
    for (int64_t c = 0; c < m->ncells; c++)
        for (int k = 0; k < nv; k++) m->v2c[fill[m->cell[c * nv + k]]++] = c;
    /* edges (a, b) with a < b, numbered in lexicographic order: count per a, then fill */
    int64_t *cnt = calloc((size_t)m->nverts + 1, sizeof(int64_t));
    if (!cnt) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    int rc = HS_OK;
#pragma omp parallel
    {
        int64_t cap = 64, *nb = malloc(64 * sizeof *nb);
#pragma omp for schedule(dynamic, 256)
        for (int64_t a = 0; a < m->nverts; a++) {
            int64_t k = 0;
            for (int64_t p = m->v2c_ptr[a]; p < m->v2c_ptr[a + 1]; p++) {
                const int64_t *cv = m->cell + m->v2c[p] * nv;
                for (int q = 0; q < nv; q++) {
                    int64_t b = cv[q];
                    if (b <= a) continue;
                    int seen = 0;
                    for (int64_t r = 0; r < k && !seen; r++) seen = nb[r] == b;
                    if (seen) continue;
                    if (k == cap) {
                        cap *= 2;
                        int64_t *t = realloc(nb, (size_t)cap * sizeof *nb);
                        if (!t) continue;
                        nb = t;
                    }
                    nb[k++] = b;
                }
            }
            cnt[a + 1] = k;
        }
        free(nb);
    }
    for (int64_t a = 0; a < m->nverts; a++) cnt[a + 1] += cnt[a];
    m->nedges = cnt[m->nverts];
    m->edge = xmalloc((size_t)m->nedges * 2 * sizeof(int64_t));
    m->cell_edge = xmalloc((size_t)m->ncells * ne * sizeof(int64_t));
    if (!m->edge || !m->cell_edge) rc = HS_FAIL(HS_ERR_RUNTIME, "out of memory for %lld edges", (long long)m->nedges);
    if (rc == HS_OK) {
#pragma omp parallel for schedule(dynamic, 256)
        for (int64_t a = 0; a < m->nverts; a++) {
            int64_t k = cnt[a];
            for (int64_t p = m->v2c_ptr[a]; p < m->v2c_ptr[a + 1]; p++) {
                const int64_t *cv = m->cell + m->v2c[p] * nv;
                for (int q = 0; q < nv; q++) {
                    int64_t b = cv[q];
                    if (b <= a) continue;
                    int seen = 0;
                    for (int64_t r = cnt[a]; r < k && !seen; r++) seen = m->edge[2 * r + 1] == b;
                    if (!seen) m->edge[2 * k] = a, m->edge[2 * k + 1] = b, k++;
                }
            }
            /* sort this vertex's edges by the other end (insertion: few) */
            for (int64_t i = cnt[a] + 1; i < k; i++) {
                int64_t b = m->edge[2 * i + 1], j = i - 1;
                while (j >= cnt[a] && m->edge[2 * j + 1] > b) m->edge[2 * (j + 1) + 1] = m->edge[2 * j + 1], j--;
                m->edge[2 * (j + 1) + 1] = b;
            }
        }
    }
    free(fill);
    if (rc == HS_OK) {
        m->edge_start = cnt;
#pragma omp parallel for schedule(static)
        for (int64_t c = 0; c < m->ncells; c++)
            for (int k = 0; k < ne; k++)
                m->cell_edge[c * ne + k] = hs_fem_mesh_find_edge(m, m->cell[c * nv + le[k][0]], m->cell[c * nv + le[k][1]]);
    } else {
        free(cnt);
    }
    return rc;
}

int64_t hs_fem_mesh_find_edge(const hs_fem_mesh *m, int64_t a, int64_t b)
{
    if (a > b) {
        int64_t t = a;
        a = b;
        b = t;
    }
    int64_t lo = m->edge_start[a], hi = m->edge_start[a + 1] - 1;
    while (lo <= hi) {
        int64_t mid = (lo + hi) / 2, x = m->edge[2 * mid + 1];
        if (x == b) return mid;
        if (x < b) lo = mid + 1;
        else hi = mid - 1;
    }
    return -1;
}

/* ------------------------------------------------------------------ refinement */

int hs_fem_mesh_refine(const hs_fem_mesh *mc, hs_fem_mesh **out)
{
    *out = NULL;
    hs_fem_mesh *m = (hs_fem_mesh *)mc; /* the edges are a cache */
    HS_CHECK(hs_fem_mesh_edges(m));
    int dim = m->dim, nv = dim + 1, ne = dim == 2 ? 3 : 6, kids = dim == 2 ? 4 : 8, fk = dim == 2 ? 2 : 4;
    hs_fem_mesh *f = calloc(1, sizeof *f);
    if (!f) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    f->dim = dim;
    f->nverts = m->nverts + m->nedges;
    f->ncells = m->ncells * kids;
    f->nfacets = m->nfacets * fk;
    f->x = xmalloc((size_t)f->nverts * 3 * sizeof(double));
    f->cell = xmalloc((size_t)f->ncells * nv * sizeof(int64_t));
    f->region = xmalloc((size_t)f->ncells * sizeof(int));
    f->cell_line = m->cell_line ? xmalloc((size_t)f->ncells * sizeof(int)) : NULL;
    f->cell_elem = m->cell_elem ? xmalloc((size_t)f->ncells * sizeof(int64_t)) : NULL;
    f->nshared = m->nshared * kids;
    f->shared = m->nshared ? xmalloc((size_t)f->nshared * sizeof *f->shared) : NULL;
    f->facet = xmalloc((size_t)f->nfacets * dim * sizeof(int64_t));
    f->facet_group = xmalloc((size_t)f->nfacets * sizeof(int));
    f->groups = xmalloc((size_t)m->ngroups * sizeof(hs_gmsh_group));
    if (!f->x || !f->cell || !f->region || (m->cell_line && !f->cell_line) || (m->cell_elem && !f->cell_elem) ||
        (m->nshared && !f->shared) || !f->facet || !f->facet_group || !f->groups) {
        hs_fem_mesh_free(f);
        return HS_FAIL(HS_ERR_RUNTIME, "out of memory refining a mesh");
    }
    f->ngroups = m->ngroups;
    memcpy(f->groups, m->groups, (size_t)m->ngroups * sizeof(hs_gmsh_group));
    /* a child is in its parent's groups (by cell still: the children of c are c kids .. c kids + kids - 1) */
    for (int64_t q = 0; q < m->nshared; q++)
        for (int k = 0; k < kids; k++) {
            f->shared[q * kids + k] = m->shared[q];
            f->shared[q * kids + k].cell = m->shared[q].cell * kids + k;
        }
    if (f->nshared) qsort(f->shared, (size_t)f->nshared, sizeof *f->shared, cmp_shared);
    memcpy(f->x, m->x, (size_t)m->nverts * 3 * sizeof(double));
    for (int64_t e = 0; e < m->nedges; e++)
        for (int d = 0; d < 3; d++) f->x[3 * (m->nverts + e) + d] = 0.5 * (m->x[3 * m->edge[2 * e] + d] + m->x[3 * m->edge[2 * e + 1] + d]);
#pragma omp parallel for schedule(static)
    for (int64_t c = 0; c < m->ncells; c++) {
        const int64_t *v = m->cell + c * nv;
        int64_t mid[6];
        for (int k = 0; k < ne; k++) mid[k] = m->nverts + m->cell_edge[c * ne + k];
        int64_t *o = f->cell + c * kids * nv;
        for (int k = 0; k < kids; k++) f->region[c * kids + k] = m->region[c];
        if (m->cell_line)
            for (int k = 0; k < kids; k++) f->cell_line[c * kids + k] = m->cell_line[c];
        if (m->cell_elem)
            for (int k = 0; k < kids; k++) f->cell_elem[c * kids + k] = m->cell_elem[c];
        if (dim == 2) {
            /* edges (0,1)=m0 (1,2)=m1 (2,0)=m2 */
            int64_t t[4][3] = {{v[0], mid[0], mid[2]}, {mid[0], v[1], mid[1]}, {mid[2], mid[1], v[2]}, {mid[0], mid[1], mid[2]}};
            memcpy(o, t, sizeof t);
            continue;
        }
        /* midpoint of the edge (i, j) */
        int64_t M[4][4];
        for (int k = 0; k < 6; k++) {
            int a = hs_fem_tet_edges[k][0], b = hs_fem_tet_edges[k][1];
            M[a][b] = M[b][a] = mid[k];
        }
        int64_t t[8][4] = {{v[0], M[0][1], M[0][2], M[0][3]},
                           {M[0][1], v[1], M[1][2], M[1][3]},
                           {M[0][2], M[1][2], v[2], M[2][3]},
                           {M[0][3], M[1][3], M[2][3], v[3]}};
        /* the octahedron: the shortest of its three diagonals (01-23, 02-13, 03-12) */
        int64_t diag[3][2] = {{M[0][1], M[2][3]}, {M[0][2], M[1][3]}, {M[0][3], M[1][2]}};
        int best = 0;
        double bl = INFINITY;
        for (int d = 0; d < 3; d++) {
            double l = 0;
            for (int q = 0; q < 3; q++) {
                double dx = f->x[3 * diag[d][0] + q] - f->x[3 * diag[d][1] + q];
                l += dx * dx;
            }
            if (l < bl - 1e-12 * l) bl = l, best = d;
        }
        int o1 = (best + 1) % 3, o2 = (best + 2) % 3;
        /* the four others in a cycle: a, b, a', b' with (a, a') and (b, b') opposite */
        int64_t cyc[4] = {diag[o1][0], diag[o2][0], diag[o1][1], diag[o2][1]};
        for (int k = 0; k < 4; k++) {
            int64_t *q = t[4 + k];
            q[0] = diag[best][0], q[1] = diag[best][1], q[2] = cyc[k], q[3] = cyc[(k + 1) % 4];
        }
        for (int k = 0; k < 8; k++) {
            if (simplex_measure(3, f->x, t[k]) < 0) {
                int64_t s = t[k][1];
                t[k][1] = t[k][2];
                t[k][2] = s;
            }
        }
        memcpy(o, t, sizeof t);
    }
    for (int64_t s = 0; s < m->nfacets; s++) {
        const int64_t *v = m->facet + s * dim;
        int64_t *o = f->facet + s * fk * dim;
        for (int k = 0; k < fk; k++) f->facet_group[s * fk + k] = m->facet_group[s];
        if (dim == 2) {
            int64_t mm = m->nverts + hs_fem_mesh_find_edge(m, v[0], v[1]);
            o[0] = v[0], o[1] = mm, o[2] = mm, o[3] = v[1];
        } else {
            int64_t m01 = m->nverts + hs_fem_mesh_find_edge(m, v[0], v[1]), m12 = m->nverts + hs_fem_mesh_find_edge(m, v[1], v[2]),
                    m20 = m->nverts + hs_fem_mesh_find_edge(m, v[2], v[0]);
            int64_t t[4][3] = {{v[0], m01, m20}, {m01, v[1], m12}, {m20, m12, v[2]}, {m01, m12, m20}};
            memcpy(o, t, sizeof t);
        }
    }
    *out = f;
    return HS_OK;
}
