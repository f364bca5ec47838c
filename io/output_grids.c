/* Extra rectilinear grids (staggered faces, other sizes) and unstructured meshes of an output file: validation, coordinates, SGRID/UGRID names, gathering the mesh. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/output_impl.h"
#include "kernels/comm/comm.h"

/* ------------------------------------------------------------------ names */

static int good_name(const char *s)
{
    if (!s || !*s || strlen(s) >= HS_IO_NAME_MAX - 16) return 0;
    for (const char *c = s; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_')) return 0;
    return 1;
}

void hs_writer_mesh_name(const hs_writer *w, const char *what, char *buf, size_t len)
{
    const char *m = w->mesh.name, *cells = hs_writer_mesh_cells(w);
    if (!strcmp(what, "node_dim")) snprintf(buf, len, "n%s_node", m);
    else if (!strcmp(what, "cell_dim")) snprintf(buf, len, "n%s_%s", m, cells);
    else if (!strcmp(what, "corner_dim")) snprintf(buf, len, "n%s_%s_nodes", m, cells);
    else if (!strcmp(what, "conn")) snprintf(buf, len, "%s_%s_nodes", m, cells);
    else if (!strcmp(what, "types")) snprintf(buf, len, "%s_%s_types", m, cells);
    else if (!strcmp(what, "xdmf_nodes")) snprintf(buf, len, "%s_nodes", m);
    else if (!strcmp(what, "x") || !strcmp(what, "y") || !strcmp(what, "z")) snprintf(buf, len, "%s_node_%s", m, what);
    else snprintf(buf, len, "%s_%s", m, what); /* region */
}

const char *hs_writer_mesh_cells(const hs_writer *w) { return w->mesh.dim == 3 ? "volume" : "face"; }

/* 1 when `name` is one of the names the extra grids and the mesh define. */
static int is_grid_name(const hs_writer *w, const char *name)
{
    for (int k = 0; k < w->nxdims; k++) {
        char b[HS_IO_NAME_MAX + 8];
        snprintf(b, sizeof b, "%s_bnds", w->xdims[k].name);
        if (!strcmp(name, w->xdims[k].name) || !strcmp(name, b)) return 1;
    }
    if (w->sgrid && !strcmp(name, "grid")) return 1;
    if (w->has_mesh) {
        static const char *const what[] = {"node_dim", "cell_dim", "corner_dim", "conn", "types", "x", "y", "z", "region"};
        if (!strcmp(name, w->mesh.name)) return 1;
        for (size_t i = 0; i < sizeof what / sizeof what[0]; i++) {
            char b[HS_IO_NAME_MAX + 24];
            hs_writer_mesh_name(w, what[i], b, sizeof b);
            if (!strcmp(name, b)) return 1;
        }
    }
    return 0;
}

int hs_writer_grid_owns_name(const hs_writer *w, const char *name) { return is_grid_name(w, name); }

const char *hs_writer_conventions(const hs_writer *w)
{
    if (w->has_mesh) return HS_CF_CONVENTIONS " UGRID-1.0";
    if (w->sgrid) return HS_CF_CONVENTIONS " SGRID-0.3";
    return HS_CF_CONVENTIONS;
}

/* ------------------------------------------------------------------ extra grids */

/* Edges midway between n coordinates, the end cells as wide as their neighbours (one cell: 1 wide). */
static void midway_edges(const double *c, int64_t n, double *e)
{
#define HS_C(i) (c ? c[i] : (double)(i))
    if (n == 1) {
        e[0] = HS_C(0) - 0.5, e[1] = HS_C(0) + 0.5;
        return;
    }
    for (int64_t i = 1; i < n; i++) e[i] = 0.5 * (HS_C(i - 1) + HS_C(i));
    e[0] = HS_C(0) - (e[1] - HS_C(0));
    e[n] = HS_C(n - 1) + (HS_C(n - 1) - e[n - 1]);
#undef HS_C
}

/* Rank 0: coordinates and edges of extra dimension k from the main grid's edges (FACE) or the desc (OWN). */
static int fill_xdim(hs_writer *w, hs_writer_dim *x, const hs_grid_desc *g)
{
    int64_t n = x->n;
    x->coords = malloc((size_t)n * sizeof(double));
    x->edges = malloc((size_t)(n + 1) * sizeof(double));
    if (!x->coords || !x->edges) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory for the coordinates of %s", x->name);
    int a = x->axis;
    if (x->kind == HS_STAGGER_OWN) {
        const double *c = g->coords[a];
        for (int64_t i = 0; i < n; i++) x->coords[i] = c ? c[i] : (double)i;
        if (g->edges[a]) memcpy(x->edges, g->edges[a], (size_t)(n + 1) * sizeof(double));
        else midway_edges(c, n, x->edges);
        return HS_OK;
    }
    /* a face: the main grid's cell edge; its cell is the half cells on either side, clipped at a
     * wall, across the periodic boundary otherwise */
    const double *E = w->edges[a];
    int64_t nm = w->n[a];
    for (int64_t i = 0; i < n; i++) x->coords[i] = E[i];
    for (int64_t i = 1; i < n; i++) x->edges[i] = 0.5 * (E[i - 1] + E[i]);
    x->edges[0] = x->periodic ? E[0] - 0.5 * (E[nm] - E[nm - 1]) : E[0];
    x->edges[n] = x->periodic ? 0.5 * (E[nm - 1] + E[nm]) : E[nm];
    return HS_OK;
}

/* The extra dimension of grid g along axis a: an existing one of that name, or a new one. */
static int add_xdim(hs_writer *w, const hs_grid_desc *g, int a, int *index)
{
    const char *p = w->path, *nm = g->dim_names[a];
    int kind = (int)g->stagger[a], periodic = kind == HS_STAGGER_FACE && g->periodic[a];
    int64_t n = kind == HS_STAGGER_FACE ? w->n[a] + (periodic ? 0 : 1) : g->n[a];
    if (!good_name(nm)) return hs_input_error(p, 0, g->name, "axis %d needs a dimension name (letters, digits, '_')", a);
    if (kind == HS_STAGGER_OWN && n < 1) return hs_input_error(p, 0, g->name, "dimension %s has size %lld, must be >= 1", nm, (long long)n);
    for (int k = 0; k < w->nxdims; k++) {
        hs_writer_dim *x = &w->xdims[k];
        if (strcmp(x->name, nm)) continue;
        if (x->axis != a || x->kind != kind || x->n != n || x->periodic != periodic)
            return hs_input_error(p, 0, g->name, "dimension %s declared again with another axis, kind or size", nm);
        *index = k;
        return HS_OK;
    }
    int clash = !strcmp(nm, w->rec_name) || !strcmp(nm, "bnds") || !strcmp(nm, "grid") || !strcmp(nm, HS_CELL_AREA);
    for (int d = 0; d < w->ndim; d++) {
        char b[HS_IO_NAME_MAX + 8];
        hs_writer_bounds_name(w, d, b, sizeof b);
        clash |= !strcmp(nm, w->dim_names[d]) || !strcmp(nm, b);
    }
    for (int k = 0; k < w->nxdims; k++) {
        char b[HS_IO_NAME_MAX + 8];
        snprintf(b, sizeof b, "%s_bnds", w->xdims[k].name);
        clash |= !strcmp(nm, b);
    }
    if (clash) return hs_input_error(p, 0, g->name, "dimension name %s is taken by the file", nm);
    if (w->nxdims >= HS_WRITER_MAX_XDIMS) return hs_input_error(p, 0, g->name, "too many grid dimensions");
    hs_writer_dim *x = &w->xdims[w->nxdims];
    memset(x, 0, sizeof *x);
    snprintf(x->name, sizeof x->name, "%s", nm);
    x->axis = a;
    x->kind = kind;
    x->periodic = periodic;
    x->n = n;
    snprintf(x->units, sizeof x->units, "%s", g->coord_units[a] ? g->coord_units[a] : "");
    snprintf(x->long_name, sizeof x->long_name, "%s", g->coord_long_names[a] ? g->coord_long_names[a] : "");
    if (!*x->long_name) snprintf(x->long_name, sizeof x->long_name, "%s coordinate", nm);
    snprintf(x->positive, sizeof x->positive, "%s", g->coord_positive[a] ? g->coord_positive[a] : "");
    x->shift = kind == HS_STAGGER_FACE ? -0.5 : g->axis_shift[a];
    *index = w->nxdims++;
    return w->edges[a] ? fill_xdim(w, x, g) : HS_OK; /* rank 0 (or every rank, shared later) */
}

/* SGRID: with a face dimension along every axis of a 2-D or 3-D main grid, the first one of each
 * axis is its node dimension, and a grid made of main and those face dimensions has a location. */
static int sgrid_node_dim(const hs_writer *w, int a)
{
    for (int k = 0; k < w->nxdims; k++)
        if (w->xdims[k].axis == a && w->xdims[k].kind == HS_STAGGER_FACE) return k;
    return -1;
}

/* The SGRID location of the grid with face axes `mask` (bit a: axis a at the nodes). */
static const char *sgrid_location(int ndim, int mask)
{
    static const char *const loc2[4] = {"face", "edge1", "edge2", "node"};
    static const char *const loc3[8] = {"volume", "face1", "face2", "edge3", "face3", "edge2", "edge1", "node"};
    return ndim == 2 ? loc2[mask & 3] : loc3[mask & 7];
}

static void set_locations(hs_writer *w)
{
    w->sgrid = w->ndim >= 2 && w->ngrids > 1;
    for (int a = 0; a < w->ndim; a++) w->sgrid &= sgrid_node_dim(w, a) >= 0;
    for (int g = 0; g < w->ngrids; g++) {
        hs_writer_grid *G = &w->grids[g];
        G->location = NULL;
        if (!w->sgrid) continue;
        int mask = 0, ok = 1;
        for (int a = 0; a < w->ndim; a++) {
            if (G->xdim[a] < 0) continue;
            ok &= G->xdim[a] == sgrid_node_dim(w, a);
            mask |= 1 << a;
        }
        if (ok) G->location = sgrid_location(w->ndim, mask);
    }
}

int hs_writer_sgrid_attr(const hs_writer *w, int i, const char **name, char *value, size_t len)
{
    /* the locations of a topology, node first; mask bit a: axis a at the nodes */
    static const int masks2[4] = {3, 0, 1, 2}, masks3[8] = {7, 0, 1, 2, 4, 6, 5, 3};
    static char attr[32];
    int nloc = w->ndim == 2 ? 4 : 8;
    if (!w->sgrid || i < 0 || i >= 2 * nloc) return 0;
    int coords = i >= nloc, mask = (w->ndim == 2 ? masks2 : masks3)[i % nloc];
    const char *loc = sgrid_location(w->ndim, mask);
    snprintf(attr, sizeof attr, "%s_%s", loc, coords ? "coordinates" : "dimensions");
    *name = attr;
    value[0] = 0;
    for (int a = 0; a < w->ndim; a++) {
        const hs_writer_dim *F = &w->xdims[sgrid_node_dim(w, a)];
        size_t u = strlen(value);
        if (coords || (mask >> a & 1))
            snprintf(value + u, len - u, "%s%s", u ? " " : "", (mask >> a & 1) ? F->name : w->dim_names[a]);
        else
            snprintf(value + u, len - u, "%s%s: %s (padding: %s)", u ? " " : "", w->dim_names[a], F->name,
                     F->periodic ? "high" : "none");
    }
    return 1;
}

double *hs_writer_xdim_bounds(const hs_writer *w, int k)
{
    const hs_writer_dim *x = &w->xdims[k];
    double *b = malloc((size_t)x->n * 2 * sizeof *b);
    for (int64_t i = 0; b && i < x->n; i++) {
        b[2 * i] = x->edges[i];
        b[2 * i + 1] = x->edges[i + 1];
    }
    return b;
}

/* Point the grids at their names and edges (after every rank has its arrays). */
static void link_grids(hs_writer *w)
{
    for (int g = 0; g < w->ngrids; g++) {
        hs_writer_grid *G = &w->grids[g];
        for (int a = 0; a < 3; a++) {
            if (a >= w->ndim) {
                G->n[a] = 1, G->dim_name[a] = NULL, G->edges[a] = NULL;
            } else if (G->xdim[a] < 0) {
                G->n[a] = w->n[a], G->dim_name[a] = w->dim_names[a], G->edges[a] = w->edges[a];
            } else {
                const hs_writer_dim *x = &w->xdims[G->xdim[a]];
                G->n[a] = x->n, G->dim_name[a] = x->name, G->edges[a] = x->edges;
            }
        }
    }
}

static int setup_mesh_names(hs_writer *w, const hs_mesh_desc *m)
{
    const char *p = w->path, *name = m->name ? m->name : "mesh";
    if (!good_name(name)) return hs_input_error(p, 0, name, "bad mesh name (letters, digits, '_')");
    if (m->dim != 2 && m->dim != 3) return hs_input_error(p, 0, name, "mesh dim = %d: 2 (triangles) or 3 (tetrahedra)", m->dim);
    if (w->ndim != 0) return hs_input_error(p, 0, name, "a mesh goes in a file of its own (ndim = 0)");
    w->has_mesh = 1;
    snprintf(w->mesh.name, sizeof w->mesh.name, "%s", name);
    snprintf(w->mesh.units, sizeof w->mesh.units, "%s", m->units ? m->units : "m");
    w->mesh.dim = m->dim;
    w->mesh.ncoord = m->dim == 3 || m->z ? 3 : 2;
    w->mesh.vtu = m->vtu != 0;
    if (!strcmp(name, w->rec_name)) return hs_input_error(p, 0, name, "the mesh is named like the record dimension");
    return HS_OK;
}

int hs_writer_setup_grids(hs_writer *w, const hs_output_desc *desc)
{
    const char *p = w->path;
    w->ngrids = 1; /* grids[0]: the main grid (of no dimension in a file without one) */
    memset(w->grids, 0, sizeof w->grids);
    for (int a = 0; a < 3; a++) w->grids[0].xdim[a] = -1;
    if (desc->ngrids < 0 || desc->ngrids > HS_WRITER_MAX_GRIDS)
        return hs_input_error(p, 0, NULL, "%d extra grids (0 .. %d)", desc->ngrids, HS_WRITER_MAX_GRIDS);
    if (desc->ngrids > 0 && (w->ndim == 0 || !desc->grids))
        return hs_input_error(p, 0, NULL, "extra grids need a main grid (ndim >= 1) and their descriptions");
    for (int i = 0; i < desc->ngrids; i++) {
        const hs_grid_desc *g = &desc->grids[i];
        if (!good_name(g->name)) return hs_input_error(p, 0, g->name ? g->name : "(null)", "bad grid name (letters, digits, '_')");
        for (int j = 0; j < i; j++)
            if (!strcmp(desc->grids[j].name, g->name)) return hs_input_error(p, 0, g->name, "two grids have this name");
        hs_writer_grid *G = &w->grids[w->ngrids];
        snprintf(G->name, sizeof G->name, "%s", g->name);
        int own = 0;
        for (int a = 0; a < 3; a++) {
            G->xdim[a] = -1;
            if (a >= w->ndim || g->stagger[a] == HS_STAGGER_CELL) continue;
            if (g->stagger[a] != HS_STAGGER_FACE && g->stagger[a] != HS_STAGGER_OWN)
                return hs_input_error(p, 0, g->name, "axis %d: unknown stagger %d", a, (int)g->stagger[a]);
            HS_CHECK(add_xdim(w, g, a, &G->xdim[a]));
            own = 1;
        }
        if (!own) return hs_input_error(p, 0, g->name, "an extra grid needs a FACE or OWN axis (else it is the main grid)");
        w->ngrids++;
    }
    /* names of the extra dimensions' units default to the main axis' */
    for (int k = 0; k < w->nxdims; k++)
        if (!*w->xdims[k].units)
            snprintf(w->xdims[k].units, sizeof w->xdims[k].units, "%s",
                     desc->coord_units[w->xdims[k].axis] ? desc->coord_units[w->xdims[k].axis] : "1");
    set_locations(w);
    if (desc->mesh) HS_CHECK(setup_mesh_names(w, desc->mesh));
    link_grids(w);
    return HS_OK;
}

int hs_writer_share_grids(hs_writer *w)
{
    hs_ctx *ctx = w->ctx;
    for (int k = 0; k < w->nxdims; k++) {
        hs_writer_dim *x = &w->xdims[k];
        int rc = HS_OK;
        if (ctx->rank != 0 && !x->coords) {
            x->coords = malloc((size_t)x->n * sizeof(double));
            x->edges = malloc((size_t)(x->n + 1) * sizeof(double));
            if (!x->coords || !x->edges) rc = HS_FAIL(HS_ERR_RUNTIME, "out of host memory for the coordinates of %s", x->name);
        }
        int bad = rc != HS_OK, anybad = 0;
        HS_MPI_CHECK(MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, ctx->comm));
        if (anybad) return rc != HS_OK ? rc : HS_FAIL(HS_ERR_RUNTIME, "out of host memory on another rank");
        HS_MPI_CHECK(MPI_Bcast(x->coords, (int)x->n, MPI_DOUBLE, 0, ctx->comm));
        HS_MPI_CHECK(MPI_Bcast(x->edges, (int)(x->n + 1), MPI_DOUBLE, 0, ctx->comm));
    }
    link_grids(w);
    return HS_OK;
}

void hs_writer_free_grids(hs_writer *w)
{
    for (int k = 0; k < w->nxdims; k++) {
        free(w->xdims[k].coords);
        free(w->xdims[k].edges);
        w->xdims[k].coords = w->xdims[k].edges = NULL;
    }
    free(w->mesh.xyz);
    free(w->mesh.conn);
    free(w->mesh.region);
    w->mesh.xyz = NULL;
    w->mesh.conn = w->mesh.region = NULL;
}

int hs_writer_match_dims(const hs_writer *w, int rank, const char *const *names)
{
    for (int g = 1; g < w->ngrids; g++) {
        if (rank != w->ndim) continue;
        int same = 1;
        for (int i = 0; i < rank; i++) same &= !strcmp(names[i], w->grids[g].dim_name[w->ndim - 1 - i]);
        if (same) return g;
    }
    if (w->has_mesh && rank == 1) {
        char b[HS_IO_NAME_MAX + 24];
        hs_writer_mesh_name(w, "node_dim", b, sizeof b);
        if (!strcmp(names[0], b)) return HS_GRID_MESH_NODE;
        hs_writer_mesh_name(w, "cell_dim", b, sizeof b);
        if (!strcmp(names[0], b)) return HS_GRID_MESH_CELL;
    }
    return -100;
}

/* ------------------------------------------------------------------ gathering the mesh */

/* Gather `count` items of `size` bytes from every rank to rank 0 (malloc'd, in rank order). */
static int gather_bytes(hs_ctx *ctx, const void *mine, int64_t count, size_t size, void **all, int64_t *total)
{
    int n = (int)(count * (int64_t)size), *counts = NULL, *displs = NULL, rc = HS_OK;
    *all = NULL;
    if (ctx->rank == 0) {
        counts = malloc(2 * (size_t)ctx->size * sizeof(int));
        if (!counts) rc = HS_FAIL(HS_ERR_RUNTIME, "out of host memory gathering the mesh");
    }
    HS_MPI_CHECK(MPI_Gather(&n, 1, MPI_INT, counts, 1, MPI_INT, 0, ctx->comm));
    int64_t bytes = 0;
    if (ctx->rank == 0 && counts) {
        displs = counts + ctx->size;
        for (int r = 0; r < ctx->size; r++) {
            displs[r] = (int)bytes;
            bytes += counts[r];
        }
        if (bytes > INT32_MAX) rc = HS_FAIL(HS_ERR_RUNTIME, "a mesh of more than 2 GiB per array cannot be gathered");
        else if (!(*all = malloc((size_t)(bytes ? bytes : 1)))) rc = HS_FAIL(HS_ERR_RUNTIME, "out of host memory gathering the mesh");
    }
    int code = rc;
    HS_MPI_CHECK(MPI_Bcast(&code, 1, MPI_INT, 0, ctx->comm));
    if (code == HS_OK) {
        static const char none;
        HS_MPI_CHECK(MPI_Gatherv(n ? mine : &none, n, MPI_BYTE, *all, counts, displs, MPI_BYTE, 0, ctx->comm));
    }
    free(counts);
    if (code != HS_OK) {
        free(*all);
        *all = NULL;
        return ctx->rank == 0 ? rc : HS_FAIL(code, "gathering the mesh failed on rank 0");
    }
    *total = ctx->rank == 0 ? bytes / (int64_t)size : 0;
    return HS_OK;
}

/* Rank 0: place gathered items by their global index, each exactly once. */
static int place_items(const char *p, const char *what, int64_t n, const int64_t *idx, const char *src, size_t size,
                       char *dst)
{
    unsigned char *seen = calloc((size_t)(n ? n : 1), 1);
    if (!seen) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory placing the mesh");
    int rc = HS_OK;
    for (int64_t k = 0; rc == HS_OK && k < n; k++) {
        if (idx[k] < 0 || idx[k] >= n)
            rc = HS_FAIL(HS_ERR_RUNTIME, "%s: mesh %s index %lld outside 0 .. %lld", p, what, (long long)idx[k], (long long)n - 1);
        else if (seen[idx[k]]++)
            rc = HS_FAIL(HS_ERR_RUNTIME, "%s: mesh %s %lld given twice", p, what, (long long)idx[k]);
        else
            memcpy(dst + (size_t)idx[k] * size, src + (size_t)k * size, size);
    }
    free(seen); /* n items, none twice: every index was given */
    return rc;
}

/* Rank 0: the gathered arrays in global order. */
static int assemble_mesh(hs_writer *w, const int64_t *nidx, const double *nxyz, const int64_t *cidx, const int64_t *ccorner,
                         const int32_t *creg)
{
    hs_writer_mesh *m = &w->mesh;
    int nv = m->dim + 1;
    m->xyz = malloc((size_t)(m->nnodes ? m->nnodes : 1) * 3 * sizeof(double));
    int64_t *corner = malloc((size_t)(m->ncells ? m->ncells : 1) * (size_t)nv * sizeof(int64_t));
    m->conn = malloc((size_t)(m->ncells ? m->ncells : 1) * (size_t)nv * sizeof(int32_t));
    m->region = malloc((size_t)(m->ncells ? m->ncells : 1) * sizeof(int32_t));
    int rc = m->xyz && corner && m->conn && m->region ? HS_OK : HS_FAIL(HS_ERR_RUNTIME, "out of host memory for the mesh");
    if (rc == HS_OK) rc = place_items(w->path, "node", m->nnodes, nidx, (const char *)nxyz, 3 * sizeof(double), (char *)m->xyz);
    if (rc == HS_OK)
        rc = place_items(w->path, "cell", m->ncells, cidx, (const char *)ccorner, (size_t)nv * sizeof(int64_t), (char *)corner);
    if (rc == HS_OK) rc = place_items(w->path, "cell", m->ncells, cidx, (const char *)creg, sizeof(int32_t), (char *)m->region);
    for (int64_t i = 0; rc == HS_OK && i < m->ncells * nv; i++) {
        if (corner[i] < 0 || corner[i] >= m->nnodes)
            rc = HS_FAIL(HS_ERR_RUNTIME, "%s: mesh cell %lld names node %lld, outside 0 .. %lld", w->path, (long long)(i / nv),
                         (long long)corner[i], (long long)m->nnodes - 1);
        else
            m->conn[i] = (int32_t)corner[i];
    }
    for (int64_t i = 0; rc == HS_OK && i < 3 * m->nnodes; i++)
        if (!isfinite(m->xyz[i])) rc = HS_FAIL(HS_ERR_RUNTIME, "%s: mesh node %lld has a coordinate that is not finite", w->path, (long long)(i / 3));
    free(corner);
    return rc;
}

int hs_writer_gather_mesh(hs_writer *w, const hs_output_desc *desc)
{
    hs_ctx *ctx = w->ctx;
    const hs_mesh_desc *md = desc->mesh;
    hs_writer_mesh *m = &w->mesh;
    int nv = m->dim + 1;
    int bad = md->nnodes < 0 || md->ncells < 0 || (md->nnodes > 0 && (!md->node_index || !md->x || !md->y)) ||
              (md->nnodes > 0 && m->ncoord == 3 && !md->z) || (md->ncells > 0 && (!md->cell_index || !md->cell_nodes));
    int anybad = 0;
    int64_t counts[2] = {bad ? 0 : md->nnodes, bad ? 0 : md->ncells}, totals[2];
    HS_MPI_CHECK(MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, ctx->comm));
    if (anybad) return HS_FAIL(HS_ERR_RUNTIME, "%s: a rank passed a bad mesh part (negative counts or missing arrays)", w->path);
    HS_MPI_CHECK(MPI_Allreduce(counts, totals, 2, MPI_INT64_T, MPI_SUM, ctx->comm));
    m->nnodes = totals[0];
    m->ncells = totals[1];
    if (m->nnodes < nv || m->ncells < 1 || m->nnodes > INT32_MAX)
        return HS_FAIL(HS_ERR_RUNTIME, "%s: a mesh of %lld nodes and %lld cells (at least %d and 1, at most 2^31 - 1 nodes)",
                       w->path, (long long)m->nnodes, (long long)m->ncells, nv);
    /* this rank's part in flat arrays */
    int64_t nn = md->nnodes, nc = md->ncells;
    double *xyz = malloc((size_t)(nn ? nn : 1) * 3 * sizeof *xyz);
    int32_t *reg = malloc((size_t)(nc ? nc : 1) * sizeof *reg);
    int rc = xyz && reg ? HS_OK : HS_FAIL(HS_ERR_RUNTIME, "out of host memory for the mesh");
    for (int64_t i = 0; rc == HS_OK && i < nn; i++) {
        xyz[3 * i] = md->x[i];
        xyz[3 * i + 1] = md->y[i];
        xyz[3 * i + 2] = md->z ? md->z[i] : 0.0;
    }
    for (int64_t i = 0; rc == HS_OK && i < nc; i++) reg[i] = md->region ? md->region[i] : 0;
    bad = rc != HS_OK;
    HS_MPI_CHECK(MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, ctx->comm));
    void *nidx = NULL, *nxyz = NULL, *cidx = NULL, *ccorner = NULL, *creg = NULL;
    int64_t got;
    if (!anybad) rc = gather_bytes(ctx, md->node_index, nn, sizeof(int64_t), &nidx, &got);
    if (!anybad && rc == HS_OK) rc = gather_bytes(ctx, xyz, nn, 3 * sizeof(double), &nxyz, &got);
    if (!anybad && rc == HS_OK) rc = gather_bytes(ctx, md->cell_index, nc, sizeof(int64_t), &cidx, &got);
    if (!anybad && rc == HS_OK) rc = gather_bytes(ctx, md->cell_nodes, nc, (size_t)nv * sizeof(int64_t), &ccorner, &got);
    if (!anybad && rc == HS_OK) rc = gather_bytes(ctx, reg, nc, sizeof(int32_t), &creg, &got);
    if (anybad && rc == HS_OK) rc = HS_FAIL(HS_ERR_RUNTIME, "out of host memory for the mesh on another rank");
    free(xyz);
    free(reg);
    if (rc == HS_OK && ctx->rank == 0) rc = assemble_mesh(w, nidx, nxyz, cidx, ccorner, creg);
    free(nidx);
    free(nxyz);
    free(cidx);
    free(ccorner);
    free(creg);
    int code = rc;
    HS_MPI_CHECK(MPI_Bcast(&code, 1, MPI_INT, 0, ctx->comm));
    if (ctx->rank == 0 || rc != HS_OK || code == HS_OK) return rc;
    return HS_FAIL(code, "gathering the mesh of %s failed on rank 0", w->path);
}
