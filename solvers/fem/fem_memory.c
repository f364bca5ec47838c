/* The fem solver's memory estimate: what a run allocates on the device and the host, item by item as the code allocates it, from the mesh's counts before refining. */
#include "solvers/fem/fem_memory.h"

#include <math.h>

#include "kernels/memory.h"

hs_fem_counts hs_fem_counts_refined(hs_fem_counts c, int dim)
{
    hs_fem_counts f;
    f.verts = c.verts + c.edges;
    f.edges = 2 * c.edges + (dim == 2 ? 3 * c.cells : 3 * c.faces + c.cells);
    f.faces = dim == 2 ? 4 * c.cells : 4 * c.faces + 8 * c.cells;
    f.cells = (dim == 2 ? 4 : 8) * c.cells;
    f.facets = (dim == 2 ? 2 : 4) * c.facets;
    return f;
}

double hs_fem_dof_nodes(int order, hs_fem_counts c) { return order == 1 ? c.verts : c.verts + c.edges; }

double hs_fem_matrix_entries(int dim, int order, int ncomp, hs_fem_counts c)
{
    const double pairs = order == 1 ? c.edges : dim == 2 ? 3 * c.edges + 6 * c.cells : 3 * c.edges + 6 * c.faces + 3 * c.cells;
    return (double)ncomp * ncomp * (hs_fem_dof_nodes(order, c) + 2 * pairs);
}

typedef struct {
    const hs_ctx *ctx;
    double dev, host;
} sum;

static void h(sum *s, double count, double bytes) { s->host += count * hs_host_footprint(bytes); }
static void d(sum *s, double count, double bytes) { s->dev += count * hs_mem_footprint(s->ctx, bytes); }

/* The mesh's arrays (hs_fem_mesh_from_gmsh, hs_fem_mesh_refine). */
static void mesh(sum *s, const hs_fem_memory_case *c, hs_fem_counts m)
{
    const int dim = c->dim;
    h(s, 1, m.verts * 3 * 8);
    h(s, 1, m.cells * (dim + 1) * 8);
    h(s, 1 + c->lines, m.cells * 4); /* region, file line */
    h(s, c->lines, m.cells * 8);     /* element tag */
    h(s, 1, m.facets * dim * 8);
    h(s, 1, m.facets * 4);
}

/* hs_fem_mesh_edges: vertex -> cells, the edges, each cell's edges (and the fill it builds them with). */
static void edges(sum *s, const hs_fem_memory_case *c, hs_fem_counts m)
{
    const int dim = c->dim;
    h(s, 3, (m.verts + 1) * 8); /* v2c_ptr, edge_start, fill */
    h(s, 1, m.cells * (dim + 1) * 8);
    h(s, 1, m.edges * 2 * 8);
    h(s, 1, m.cells * (dim == 2 ? 3 : 6) * 8);
}

/* The AMG hierarchy and its setup (kernels/sparse/amg.c), per matrix entry and row of the fine
 * level: the levels' CSR on the host (12 bytes an entry) and the device (12), the strength graph,
 * the prolongators and the Galerkin products' work, the smoother's six vectors a level.  Measured
 * (the run's allocations with amg less those with jacobi, over the fine level's entries): 19-39
 * bytes an entry for poisson (P1/P2, 2-D/3-D, operator complexity 1.04-1.13), 41-69 for
 * elasticity (1.25-1.68: the rigid-body modes make denser coarse levels); the allowance is 48 and
 * 80 bytes an entry and 64 a row, a fifth above the largest.  A mesh whose hierarchy is denser
 * still (operator complexity above about 2) can take more. */
static void amg(sum *s, const hs_fem_memory_case *c, double n, double nnz)
{
    const int elastic = c->ncomp > 1;
    /* on the device: the coarse levels' CSR (12 bytes an entry, up to 0.7 of the fine level's entries
     * for elasticity), prolongators and restrictions, the smoother's vectors (from the code, not
     * measured on a GPU); the rest of the allowance on the host, where the setup runs */
    s->dev += (elastic ? 24.0 : 12.0) * nnz + 64.0 * n;
    s->host += (elastic ? 56.0 : 36.0) * nnz;
    /* the coarsest level's dense inverse (at most 300 unknowns: its matrix and inverse on the host,
     * the inverse on the device) and, for elasticity, the rigid-body modes of every node */
    h(s, 2, 300.0 * 300 * 8);
    d(s, 1, 300.0 * 300 * 8);
    if (elastic) h(s, 1, n * (c->dim == 2 ? 3 : 6) * 8);
}

void hs_fem_memory(const hs_ctx *ctx, const hs_fem_memory_case *c, double *device, double *host)
{
    const int dim = c->dim, nc = c->ncomp, size = ctx->size;
    hs_fem_counts m = {(double)c->verts, (double)c->edges, (double)c->faces, (double)c->cells, (double)c->facets};
    /* refining: the mesh before the last step, its edges and the refined one at once */
    sum refine = {ctx, 0, 0};
    for (int r = 0; r < c->refine; r++) {
        sum step = {ctx, 0, 0};
        mesh(&step, c, m);
        edges(&step, c, m);
        m = hs_fem_counts_refined(m, dim);
        mesh(&step, c, m);
        refine.host = fmax(refine.host, step.host);
    }
    /* the mesh of the run, replicated on every rank, with its edges for P2 */
    sum held = {ctx, 0, 0};
    mesh(&held, c, m);
    if (c->order == 2) edges(&held, c, m);
    const int nl = dim == 2 ? (c->order == 1 ? 3 : 6) : (c->order == 1 ? 4 : 10), nfl = dim == 2 ? c->order + 1 : (c->order == 1 ? 3 : 6);
    const int L = nl * nc, Lf = nfl * nc;
    const double N = hs_fem_dof_nodes(c->order, m), nnz_all = hs_fem_matrix_entries(dim, c->order, nc, m);
    /* this rank's share: the cells that touch its nodes (its own and a layer of its neighbours'),
     * their local nodes, its rows.  The layer is the partition's surface, c (T/p)^(-1/dim) of the
     * even share T/p: measured on the square and the cube, METIS and RCB, 2 to 16 ranks, the busiest
     * rank held 1.015-1.43 of it in 2-D (c up to 5.5), 1.13-3.16 in 3-D (c up to 10); c = 8 and 12 */
    const double c_layer = dim == 2 ? 8 : 12;
    const double share = size == 1 ? 1 : fmin(1.0, (1 + c_layer * pow(m.cells / size, -1.0 / dim)) / size);
    const double nac = share * m.cells, naf = share * m.facets, nown = share * N, nln = share * N, n = nown * nc, nnz = share * nnz_all;
    const double contrib = nac * L * L + naf * Lf * Lf, vcontrib = nac * L + naf * Lf;
    /* the system (fem_system.c): replicated node and cell tables, then the rank's assembly set,
     * pattern and scatter maps on the host, their device copies and the element buffers */
    h(&held, 1, m.cells * nl * 8);            /* cell_nodes */
    h(&held, 1, m.cells * 4);                 /* cell_part */
    h(&held, 1, N * 4);                   /* node_owner */
    h(&held, 1, N * 8);                   /* newnode */
    h(&held, 1, N * nc);                  /* mask */
    h(&held, 1, N * nc * 8);              /* gval */
    h(&held, 1, m.cells * 8);                 /* acell */
    h(&held, 1, m.facets * 8);                /* afacet */
    h(&held, 1, nown * 8);                /* owned */
    h(&held, 1, (nac * nl + naf * nfl) * 8); /* lnode */
    h(&held, 2, nac * nl * 4 + naf * nfl * 4); /* h_cell_nodes, h_facet_nodes (and their slots, below) */
    h(&held, 2, (nac + naf) * 4);
    h(&held, 1, nln * 3 * 8);             /* h_node_x */
    h(&held, 1, nln * nc * 9);            /* h_bc_mask, h_bc_value */
    h(&held, 2, (n + 1) * 8);             /* rowptr, vmap_ptr */
    h(&held, 2, nnz * 8 + 8);             /* colind, map_ptr */
    h(&held, 1, contrib * 8);             /* map_idx */
    h(&held, 1, vcontrib * 8);            /* vmap_idx */
    h(&held, 2, n * 8);                   /* d_row, d_diag */
    d(&held, 2, nac * nl * 4 + naf * nfl * 4);
    d(&held, 2, (nac + naf) * 4);
    d(&held, 1, nln * 3 * 8);
    d(&held, 1, nln * nc * 9);
    d(&held, 1, (nnz + 1) * 8);           /* dmap_ptr */
    d(&held, 1, (n + 1) * 8);             /* dvmap_ptr */
    d(&held, 1, contrib * 8);             /* dmap_idx */
    d(&held, 1, vcontrib * 8);            /* dvmap_idx */
    d(&held, 3, n * 8);                   /* dd_row, dd_diag, dd_g */
    d(&held, 1, contrib * 8);             /* Kbuf: the element matrices */
    d(&held, 1, vcontrib * 8);            /* Fbuf */
    /* while the system is built: the partition, the assembly set's node map, the adjacency of the
     * owned nodes, the map sizes */
    sum build = {ctx, 0, 0};
    h(&build, 1, m.cells * 4);                /* part */
    if (size > 1) {
        /* RCB: centroids and a keyed list; METIS: the element lists and its own graph and work
         * (the cube refined 3 times, 2 ranks: 175 bytes a cell in all; 248 counted) */
        if (c->metis) h(&build, 1, m.cells * (8 + (dim + 1) * 8 + 8 + 200) + m.verts * 8);
        else h(&build, 1, m.cells * (24 + 24));
    }
    h(&build, 1, N * 8);                  /* lof */
    h(&build, 1, nln * 8);                /* own_of_l */
    h(&build, 4, (nown + 1) * 8);         /* cptr, fptr and their fill */
    h(&build, 1, (nac * nl + naf * nfl) * 8); /* cent, fent */
    h(&build, 1, (n + 1) * 8);            /* rmap */
    /* the solver: the values, right side and solution (heat: B's values, c, y too), the matrix
     * (int32 pattern and values on the device; over ranks its two blocks and ghost buffers), CG's
     * four vectors, the preconditioner */
    sum run = {ctx, 0, 0};
    const int mats = c->heat ? 2 : 1;
    d(&run, mats, nnz * 8);
    d(&run, c->heat ? 4 : 2, n * 8);
    if (size == 1) {
        d(&run, mats, (n + 1) * 4);
        d(&run, mats, nnz * 4);
        d(&run, mats, nnz * 8);
    } else {
        d(&run, 2 * mats, (n + 1) * 4);
        d(&run, mats, nnz * 12);
        d(&run, 2 * mats, n * 8);         /* ghost and send values */
        h(&run, 2 * mats, (n + 1) * 4);
        h(&run, mats, nnz * 12 + n * 4);
        h(&run, 2 * mats, n * 8);
    }
    d(&run, 4, n * 8);
    if (c->jacobi) d(&run, 2, n * 8);
    if (c->amg) amg(&run, c, n, nnz);
    /* the whole solution on every rank (ensure_full: output, the end's check) */
    h(&run, 1, N * nc * 8);
    /* transient: the matrix's host staging (values, int32 pattern), a vector on the host (initial
     * guess, gather, checkpoint) */
    sum event = {ctx, 0, 0};
    h(&event, 1, nnz * 8);
    h(&event, 1, (n + 1) * 4);
    h(&event, 1, nnz * 4);
    h(&event, 1, n * 8);
    if (c->output) {
        /* the output mesh (build_output_mesh: P2 cells drawn as 4 or 8 linear ones) */
        const double sub = c->order == 1 ? 1 : (dim == 2 ? 4 : 8), cells = nac * sub;
        h(&run, 4, nown * 8);
        h(&run, 1, cells * 8);
        h(&run, 1, cells * (dim + 1) * 8);
        h(&run, 1, cells * 4);
        h(&run, 1, fmax(cells, nown + 1) * 8);
        /* the writer gathers the mesh and a variable on rank 0 (io/output.c), and the VTU files
         * their points, cells and values */
        if (ctx->rank == 0) {
            const double all_cells = m.cells * sub;
            h(&run, 2, N * (3 * 8 + 8 + 8 * nc));
            h(&run, 2, all_cells * ((dim + 1) * 8 + 8 + 4 + 8));
        }
    }
    const double base_h = held.host + run.host, base_d = held.dev + run.dev;
    *host = fmax(refine.host, fmax(held.host + build.host, base_h + event.host));
    *device = fmax(held.dev + build.dev, base_d + event.dev);
}
