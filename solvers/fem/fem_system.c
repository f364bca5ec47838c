/* Finite-element systems: DOF numbering over the ranks, the CSR pattern with its scatter maps, assembly, norms. */
#include "solvers/fem/fem_system.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/blas/blas.h"
#include "kernels/dispatch.h"
#include "kernels/error.h"
#include "kernels/memory.h"
#include "solvers/fem/fem_impl.h"

static void *xmalloc(size_t bytes) { return malloc(bytes ? bytes : 1); }
static void *xcalloc(size_t n, size_t size) { return calloc(n ? n : 1, size); }
#define OOM() HS_FAIL(HS_ERR_RUNTIME, "out of host memory building the finite-element system")

void hs_fem_node_x(const hs_fem_system *s, int64_t n, double x[3])
{
    const hs_fem_mesh *m = s->mesh;
    if (n < m->nverts) {
        memcpy(x, m->x + 3 * n, 3 * sizeof(double));
        return;
    }
    const int64_t *e = m->edge + 2 * (n - m->nverts);
    for (int d = 0; d < 3; d++) x[d] = 0.5 * (m->x[3 * e[0] + d] + m->x[3 * e[1] + d]);
}

void hs_fem_system_destroy(hs_fem_system *s)
{
    if (!s) return;
    free(s->cell_nodes), free(s->cell_part), free(s->node_owner), free(s->newnode), free(s->node_off), free(s->owned);
    free(s->mask), free(s->gval), free(s->acell), free(s->afacet), free(s->lnode);
    free(s->rowptr), free(s->colind), free(s->map_ptr), free(s->map_idx), free(s->vmap_ptr), free(s->vmap_idx);
    free(s->d_row), free(s->d_diag);
    free(s->h_cell_nodes), free(s->h_cell_slot), free(s->h_facet_nodes), free(s->h_facet_slot);
    free(s->h_node_x), free(s->h_cell_coef), free(s->h_facet_coef), free(s->h_bc_mask), free(s->h_bc_value);
    hs_ctx *c = s->ctx;
    if (c) {
        hs_mem_free(c, (void *)s->args.cell_nodes), hs_mem_free(c, (void *)s->args.cell_slot);
        hs_mem_free(c, (void *)s->args.facet_nodes), hs_mem_free(c, (void *)s->args.facet_slot);
        hs_mem_free(c, (void *)s->args.node_x), hs_mem_free(c, (void *)s->args.bc_mask), hs_mem_free(c, (void *)s->args.bc_value);
        hs_mem_free(c, (void *)s->args.cell_coef), hs_mem_free(c, (void *)s->args.facet_coef);
        hs_mem_free(c, s->dmap_ptr), hs_mem_free(c, s->dmap_idx), hs_mem_free(c, s->dvmap_ptr), hs_mem_free(c, s->dvmap_idx);
        hs_mem_free(c, s->dd_row), hs_mem_free(c, s->dd_diag), hs_mem_free(c, s->dd_g);
        hs_mem_free(c, s->Kbuf), hs_mem_free(c, s->Fbuf);
    }
    free(s);
}

/* ------------------------------------------------------------------ nodes and ownership */

/* Global node ids of the cells (vertices, then edges) and of a facet. */
static int number_cells(hs_fem_system *s)
{
    hs_fem_mesh *m = s->mesh;
    int nv = s->dim + 1, ne = s->dim == 2 ? 3 : 6;
    s->cell_nodes = xmalloc((size_t)m->ncells * s->nl * sizeof(int64_t));
    if (!s->cell_nodes) return OOM();
#pragma omp parallel for schedule(static)
    for (int64_t c = 0; c < m->ncells; c++) {
        int64_t *o = s->cell_nodes + c * s->nl;
        for (int k = 0; k < nv; k++) o[k] = m->cell[c * nv + k];
        if (s->order == 2)
            for (int k = 0; k < ne; k++) o[nv + k] = m->nverts + m->cell_edge[c * ne + k];
    }
    return HS_OK;
}

static int facet_nodes(const hs_fem_system *s, int64_t f, int64_t *o)
{
    const hs_fem_mesh *m = s->mesh;
    int dim = s->dim;
    for (int k = 0; k < dim; k++) o[k] = m->facet[f * dim + k];
    if (s->order == 1) return HS_OK;
    int ne = dim == 2 ? 1 : 3;
    for (int k = 0; k < ne; k++) {
        int i, j;
        hs_fem_edge(dim - 1, k, &i, &j);
        int64_t e = hs_fem_mesh_find_edge(m, o[i], o[j]);
        if (e < 0) return hs_input_error("mesh", 0, NULL, "boundary facet %lld is not a face of any cell", (long long)f + 1);
        o[dim + k] = m->nverts + e;
    }
    return HS_OK;
}

static const hs_fem_bc *facet_bc(const hs_fem_problem *p, int tag, int *slot)
{
    for (int i = p->nbcs - 1; i >= 0; i--)
        if (p->bcs[i].tag == tag) {
            if (slot) *slot = i;
            return &p->bcs[i];
        }
    return NULL;
}

static int ownership(hs_fem_system *s, const int *cell_part)
{
    hs_fem_mesh *m = s->mesh;
    int size = s->ctx->size, rank = s->ctx->rank;
    s->cell_part = xmalloc((size_t)m->ncells * sizeof(int));
    s->node_owner = xmalloc((size_t)s->nnodes * sizeof(int));
    s->newnode = xmalloc((size_t)s->nnodes * sizeof(int64_t));
    s->node_off = xcalloc((size_t)size + 1, sizeof(int64_t));
    if (!s->cell_part || !s->node_owner || !s->newnode || !s->node_off) return OOM();
    for (int64_t c = 0; c < m->ncells; c++) {
        s->cell_part[c] = cell_part ? cell_part[c] : 0;
        if (s->cell_part[c] < 0 || s->cell_part[c] >= size)
            return HS_FAIL(HS_ERR_RUNTIME, "cell %lld is given to rank %d of %d", (long long)c, s->cell_part[c], size);
    }
    for (int64_t n = 0; n < s->nnodes; n++) s->node_owner[n] = size;
    for (int64_t c = 0; c < m->ncells; c++)
        for (int k = 0; k < s->nl; k++) {
            int64_t n = s->cell_nodes[c * s->nl + k];
            if (s->cell_part[c] < s->node_owner[n]) s->node_owner[n] = s->cell_part[c];
        }
    for (int64_t n = 0; n < s->nnodes; n++) s->node_off[s->node_owner[n] + 1]++;
    for (int r = 0; r < size; r++) s->node_off[r + 1] += s->node_off[r];
    int64_t *next = xmalloc((size_t)size * sizeof(int64_t));
    if (!next) return OOM();
    memcpy(next, s->node_off, (size_t)size * sizeof(int64_t));
    for (int64_t n = 0; n < s->nnodes; n++) s->newnode[n] = next[s->node_owner[n]]++;
    free(next);
    s->nowned = s->node_off[rank + 1] - s->node_off[rank];
    s->owned = xmalloc((size_t)s->nowned * sizeof(int64_t));
    if (!s->owned) return OOM();
    for (int64_t n = 0; n < s->nnodes; n++)
        if (s->node_owner[n] == rank) s->owned[s->newnode[n] - s->node_off[rank]] = n;
    s->n_global = s->nnodes * s->ncomp;
    s->row_start = s->node_off[rank] * s->ncomp;
    s->n_local = s->nowned * s->ncomp;
    return HS_OK;
}

static int dirichlet_mask(hs_fem_system *s, const hs_fem_problem *p)
{
    hs_fem_mesh *m = s->mesh;
    int nc = s->ncomp;
    s->mask = xcalloc((size_t)s->nnodes * nc, 1);
    s->gval = xcalloc((size_t)s->nnodes * nc, sizeof(double));
    if (!s->mask || !s->gval) return OOM();
    int64_t fn[6];
    /* in the order of the conditions, so that a later one wins on shared nodes */
    for (int b = 0; b < p->nbcs; b++) {
        const hs_fem_bc *bc = &p->bcs[b];
        if (bc->kind != HS_FEM_DIRICHLET) continue;
        for (int64_t f = 0; f < m->nfacets; f++) {
            if (m->facet_group[f] != bc->tag) continue;
            HS_CHECK(facet_nodes(s, f, fn));
            for (int k = 0; k < s->nfl; k++)
                for (int c = 0; c < nc; c++)
                    if (!bc->comps || (bc->comps >> c & 1)) {
                        s->mask[fn[k] * nc + c] = 1;
                        s->gval[fn[k] * nc + c] = bc->value[c];
                    }
        }
    }
    return HS_OK;
}

/* ------------------------------------------------------------------ the assembly set */

static int region_slot(const hs_fem_problem *p, int tag)
{
    for (int i = 0; i < p->nregions; i++)
        if (p->regions[i].tag == tag) return i;
    return -1;
}

static int assembly_set(hs_fem_system *s, const hs_fem_problem *p)
{
    hs_fem_mesh *m = s->mesh;
    int rank = s->ctx->rank;
    s->acell = xmalloc((size_t)m->ncells * sizeof(int64_t));
    s->afacet = xmalloc((size_t)m->nfacets * sizeof(int64_t));
    if (!s->acell || !s->afacet) return OOM();
    for (int64_t c = 0; c < m->ncells; c++) {
        int touch = 0;
        for (int k = 0; k < s->nl && !touch; k++) touch = s->node_owner[s->cell_nodes[c * s->nl + k]] == rank;
        if (touch) s->acell[s->nac++] = c;
    }
    int64_t fn[6];
    for (int64_t f = 0; f < m->nfacets; f++) {
        const hs_fem_bc *bc = facet_bc(p, m->facet_group[f], NULL);
        if (!bc || bc->kind == HS_FEM_DIRICHLET) continue;
        HS_CHECK(facet_nodes(s, f, fn));
        int touch = 0;
        for (int k = 0; k < s->nfl && !touch; k++) touch = s->node_owner[fn[k]] == rank;
        if (touch) s->afacet[s->naf++] = f;
    }
    /* local nodes */
    int64_t *lof = xmalloc((size_t)s->nnodes * sizeof(int64_t));
    if (!lof) return OOM();
    for (int64_t n = 0; n < s->nnodes; n++) lof[n] = -1;
    s->lnode = xmalloc((size_t)(s->nac * s->nl + s->naf * s->nfl) * sizeof(int64_t));
    s->h_cell_nodes = xmalloc((size_t)s->nac * s->nl * sizeof(int32_t));
    s->h_cell_slot = xmalloc((size_t)s->nac * sizeof(int32_t));
    s->h_facet_nodes = xmalloc((size_t)s->naf * s->nfl * sizeof(int32_t));
    s->h_facet_slot = xmalloc((size_t)s->naf * sizeof(int32_t));
    if (!s->lnode || !s->h_cell_nodes || !s->h_cell_slot || !s->h_facet_nodes || !s->h_facet_slot) {
        free(lof);
        return OOM();
    }
    int rc = HS_OK;
    for (int64_t i = 0; i < s->nac && rc == HS_OK; i++) {
        int64_t c = s->acell[i];
        for (int k = 0; k < s->nl; k++) {
            int64_t n = s->cell_nodes[c * s->nl + k];
            if (lof[n] < 0) lof[n] = s->nln, s->lnode[s->nln++] = n;
            s->h_cell_nodes[i * s->nl + k] = (int32_t)lof[n];
        }
        int slot = region_slot(p, m->region[c]);
        if (slot < 0) rc = hs_input_error("mesh", 0, NULL, "cell %lld has region tag %d, which no region coefficient names", (long long)c + 1, m->region[c]);
        s->h_cell_slot[i] = slot;
    }
    for (int64_t i = 0; i < s->naf && rc == HS_OK; i++) {
        rc = facet_nodes(s, s->afacet[i], fn);
        for (int k = 0; k < s->nfl && rc == HS_OK; k++) {
            int64_t n = fn[k];
            if (lof[n] < 0) lof[n] = s->nln, s->lnode[s->nln++] = n;
            s->h_facet_nodes[i * s->nfl + k] = (int32_t)lof[n];
        }
        int slot = 0;
        facet_bc(p, m->facet_group[s->afacet[i]], &slot);
        s->h_facet_slot[i] = slot;
    }
    free(lof);
    if (rc != HS_OK) return rc;
    if (s->nln > 2147483647LL) return HS_FAIL(HS_ERR_RUNTIME, "more than 2^31 local nodes on one rank");
    int nc = s->ncomp;
    s->h_node_x = xmalloc((size_t)s->nln * 3 * sizeof(double));
    s->h_bc_mask = xmalloc((size_t)s->nln * nc);
    s->h_bc_value = xmalloc((size_t)s->nln * nc * sizeof(double));
    s->h_cell_coef = xcalloc((size_t)(p->nregions + 1) * HS_FEM_NCOEF, sizeof(double));
    s->h_facet_coef = xcalloc((size_t)(p->nbcs + 1) * HS_FEM_NCOEF, sizeof(double));
    if (!s->h_node_x || !s->h_bc_mask || !s->h_bc_value || !s->h_cell_coef || !s->h_facet_coef) return OOM();
    for (int64_t i = 0; i < s->nln; i++) {
        hs_fem_node_x(s, s->lnode[i], s->h_node_x + 3 * i);
        for (int c = 0; c < nc; c++) {
            s->h_bc_mask[i * nc + c] = s->mask[s->lnode[i] * nc + c];
            s->h_bc_value[i * nc + c] = s->gval[s->lnode[i] * nc + c];
        }
    }
    for (int i = 0; i < p->nregions; i++) memcpy(s->h_cell_coef + HS_FEM_NCOEF * i, p->regions[i].coef, sizeof p->regions[i].coef);
    for (int i = 0; i < p->nbcs; i++) {
        double *c = s->h_facet_coef + HS_FEM_NCOEF * i;
        const hs_fem_bc *bc = &p->bcs[i];
        if (bc->kind == HS_FEM_ROBIN) c[0] = bc->h, c[1] = bc->h * bc->value[0];
        else if (bc->kind == HS_FEM_NEUMANN && s->physics == HS_FEM_SCALAR) c[1] = bc->value[0];
        else if (bc->kind == HS_FEM_NEUMANN)
            for (int k = 0; k < 3; k++) c[1 + k] = bc->value[k];
    }
    return HS_OK;
}

/* ------------------------------------------------------------------ pattern and maps */

/* Owned local node -> (assembly cell index, local position) and (facet index, position) lists. */
typedef struct {
    int64_t *cptr, *cent, *fptr, *fent; /* entries: index * 16 + position */
} adjacency;

static int build_adjacency(const hs_fem_system *s, const int64_t *own_of_l, adjacency *a)
{
    int64_t no = s->nowned;
    a->cptr = xcalloc((size_t)no + 1, sizeof(int64_t));
    a->fptr = xcalloc((size_t)no + 1, sizeof(int64_t));
    if (!a->cptr || !a->fptr) return OOM();
    for (int64_t i = 0; i < s->nac; i++)
        for (int k = 0; k < s->nl; k++) {
            int64_t o = own_of_l[s->h_cell_nodes[i * s->nl + k]];
            if (o >= 0) a->cptr[o + 1]++;
        }
    for (int64_t i = 0; i < s->naf; i++)
        for (int k = 0; k < s->nfl; k++) {
            int64_t o = own_of_l[s->h_facet_nodes[i * s->nfl + k]];
            if (o >= 0) a->fptr[o + 1]++;
        }
    for (int64_t o = 0; o < no; o++) a->cptr[o + 1] += a->cptr[o], a->fptr[o + 1] += a->fptr[o];
    a->cent = xmalloc((size_t)a->cptr[no] * sizeof(int64_t));
    a->fent = xmalloc((size_t)a->fptr[no] * sizeof(int64_t));
    int64_t *cc = xmalloc((size_t)(no + 1) * sizeof(int64_t)), *fc = xmalloc((size_t)(no + 1) * sizeof(int64_t));
    if (!a->cent || !a->fent || !cc || !fc) {
        free(cc), free(fc);
        return OOM();
    }
    memcpy(cc, a->cptr, (size_t)no * sizeof(int64_t));
    memcpy(fc, a->fptr, (size_t)no * sizeof(int64_t));
    /* ascending assembly index: the global order of the cells */
    for (int64_t i = 0; i < s->nac; i++)
        for (int k = 0; k < s->nl; k++) {
            int64_t o = own_of_l[s->h_cell_nodes[i * s->nl + k]];
            if (o >= 0) a->cent[cc[o]++] = i * 16 + k;
        }
    for (int64_t i = 0; i < s->naf; i++)
        for (int k = 0; k < s->nfl; k++) {
            int64_t o = own_of_l[s->h_facet_nodes[i * s->nfl + k]];
            if (o >= 0) a->fent[fc[o]++] = i * 16 + k;
        }
    free(cc), free(fc);
    return HS_OK;
}

typedef struct {
    int64_t *nb, *cnt, *cols;
    int64_t cap;
} scratch;

static int scratch_need(scratch *w, int64_t n)
{
    if (n <= w->cap) return 0;
    int64_t cap = w->cap ? w->cap : 256;
    while (cap < n) cap *= 2;
    free(w->nb), free(w->cnt), free(w->cols);
    w->nb = malloc((size_t)cap * sizeof(int64_t));
    w->cnt = malloc((size_t)cap * sizeof(int64_t));
    w->cols = malloc((size_t)cap * sizeof(int64_t));
    w->cap = cap;
    return !w->nb || !w->cnt || !w->cols;
}

/* Sorts v[0..k) and drops repeats in place; returns the count left.  Insertion into the sorted
 * prefix by binary search: rows gather a few dozen distinct values from a few hundred, where this
 * is several times faster than qsort and a comparison callback. */
static int64_t sort_unique(int64_t *v, int64_t k)
{
    int64_t u = 0;
    for (int64_t i = 0; i < k; i++) {
        int64_t x = v[i], lo = 0, hi = u;
        while (lo < hi) {
            int64_t mid = (lo + hi) / 2;
            if (v[mid] < x) lo = mid + 1;
            else hi = mid;
        }
        if (lo < u && v[lo] == x) continue;
        /* u <= i: v[i] is already in x, so the shift may overwrite it */
        memmove(v + lo + 1, v + lo, (size_t)(u - lo) * sizeof(int64_t));
        v[lo] = x;
        u++;
    }
    return u;
}

/* The distinct local nodes of the cells around owned node o, sorted, into w->nb; returns their count. */
static int64_t neighbours(const hs_fem_system *s, const adjacency *a, int64_t o, scratch *w, int *err)
{
    int64_t k = 0;
    int64_t need = (a->cptr[o + 1] - a->cptr[o]) * s->nl;
    if (scratch_need(w, need * s->ncomp + 1)) {
        *err = 1;
        return 0;
    }
    for (int64_t p = a->cptr[o]; p < a->cptr[o + 1]; p++) {
        int64_t i = a->cent[p] / 16;
        for (int q = 0; q < s->nl; q++) w->nb[k++] = s->h_cell_nodes[i * s->nl + q];
    }
    return sort_unique(w->nb, k);
}

/* Free (not Dirichlet) components among the nloc nodes of element e of `nodes`. */
static int64_t free_dofs(const hs_fem_system *s, const int32_t *nodes, int nloc, int64_t e)
{
    int64_t n = 0;
    for (int b = 0; b < nloc; b++)
        for (int d = 0; d < s->ncomp; d++) n += !s->h_bc_mask[(int64_t)nodes[e * nloc + b] * s->ncomp + d];
    return n;
}

/* Position of global column col in cols[0..n), or -1. */
static int64_t find_col(const int64_t *cols, int64_t n, int64_t col)
{
    int64_t lo = 0, hi = n - 1;
    while (lo <= hi) {
        int64_t mid = (lo + hi) / 2;
        if (cols[mid] == col) return mid;
        if (cols[mid] < col) lo = mid + 1;
        else hi = mid - 1;
    }
    return -1;
}

/* Walk the contributions of row (o, c): emit(pos, flat) for each, cells then facets, ascending. */
typedef struct {
    const hs_fem_system *s;
    const adjacency *a;
    const int64_t *cols;
    int64_t ncols;
    int dirichlet;
    int64_t diag_col;
} row_walk;

static int walk_row(const row_walk *r, int64_t o, int c, int64_t *count, int64_t *ptrs, int64_t *out)
{
    const hs_fem_system *s = r->s;
    int nc = s->ncomp, L = s->L, Lf = s->Lf;
    int64_t nac = s->nac, naf = s->naf;
    for (int pass = 0; pass < 2; pass++) {
        const int64_t *pp = pass ? r->a->fptr : r->a->cptr, *ent = pass ? r->a->fent : r->a->cent;
        int nloc = pass ? s->nfl : s->nl, LL = pass ? Lf : L;
        int64_t n = pass ? naf : nac, base = pass ? nac * L * L : 0;
        const int32_t *nodes = pass ? s->h_facet_nodes : s->h_cell_nodes;
        for (int64_t p = pp[o]; p < pp[o + 1]; p++) {
            int64_t e = ent[p] / 16;
            int i = (int)(ent[p] % 16) * nc + c;
            for (int b = 0; b < nloc; b++) {
                int32_t ln = nodes[e * nloc + b];
                for (int d = 0; d < nc; d++) {
                    int j = b * nc + d;
                    int64_t pos;
                    if (r->dirichlet) {
                        if (j != i) continue;
                        pos = 0;
                    } else {
                        if (s->h_bc_mask[(int64_t)ln * nc + d]) continue;
                        pos = find_col(r->cols, r->ncols, s->newnode[s->lnode[ln]] * nc + d);
                        if (pos < 0) return -1;
                    }
                    int64_t flat = base + (int64_t)(i * LL + j) * n + e;
                    if (count) count[pos]++;
                    else out[ptrs[pos]++] = flat;
                }
            }
        }
    }
    return 0;
}

static int build_pattern(hs_fem_system *s)
{
    int nc = s->ncomp;
    int64_t no = s->nowned, nrows = s->n_local;
    /* owned index of each local node */
    int64_t *own_of_l = xmalloc((size_t)s->nln * sizeof(int64_t));
    if (!own_of_l) return OOM();
    for (int64_t i = 0; i < s->nln; i++) {
        int64_t n = s->lnode[i];
        own_of_l[i] = s->node_owner[n] == s->ctx->rank ? s->newnode[n] - s->node_off[s->ctx->rank] : -1;
    }
    adjacency a = {0};
    int rc = build_adjacency(s, own_of_l, &a);
    free(own_of_l);
    int64_t *rown = xcalloc((size_t)nrows + 1, sizeof(int64_t)), *rmap = xcalloc((size_t)nrows + 1, sizeof(int64_t));
    s->vmap_ptr = xcalloc((size_t)nrows + 1, sizeof(int64_t));
    if (rc == HS_OK && (!rown || !rmap || !s->vmap_ptr)) rc = OOM();
    int err = 0;
    /* pass 1: sizes of every row and of its map */
    if (rc == HS_OK) {
#pragma omp parallel reduction(| : err)
        {
            scratch w = {0};
#pragma omp for schedule(dynamic, 64)
            for (int64_t o = 0; o < no; o++) {
                int64_t nn = neighbours(s, &a, o, &w, &err);
                int64_t n = s->owned[o];
                for (int c = 0; c < nc && !err; c++) {
                    int64_t row = o * nc + c;
                    int dir = s->mask[n * nc + c];
                    int64_t cells = a.cptr[o + 1] - a.cptr[o], facets = a.fptr[o + 1] - a.fptr[o];
                    if (dir) {
                        /* the diagonal only: one contribution from each cell and facet */
                        rown[row + 1] = 1;
                        rmap[row + 1] = cells + facets;
                    } else {
                        /* columns: the free components of the neighbours; contributions: the free
                         * components of each cell and facet around the node */
                        int64_t ncol = 0, nmap = 0;
                        for (int64_t q = 0; q < nn; q++)
                            for (int d = 0; d < nc; d++) ncol += !s->h_bc_mask[w.nb[q] * nc + d];
                        for (int64_t p = a.cptr[o]; p < a.cptr[o + 1]; p++) nmap += free_dofs(s, s->h_cell_nodes, s->nl, a.cent[p] / 16);
                        for (int64_t p = a.fptr[o]; p < a.fptr[o + 1]; p++) nmap += free_dofs(s, s->h_facet_nodes, s->nfl, a.fent[p] / 16);
                        rown[row + 1] = ncol;
                        rmap[row + 1] = nmap;
                        s->vmap_ptr[row + 1] = cells + facets;
                    }
                }
            }
            free(w.nb), free(w.cnt), free(w.cols);
        }
        if (err) rc = OOM();
    }
    /* the counts are exact: pass 2 fills every row in place */
    if (rc == HS_OK) {
        for (int64_t r = 0; r < nrows; r++) rown[r + 1] += rown[r], rmap[r + 1] += rmap[r], s->vmap_ptr[r + 1] += s->vmap_ptr[r];
        s->rowptr = rown;
        rown = NULL;
        s->colind = xmalloc((size_t)s->rowptr[nrows] * sizeof(int64_t));
        s->map_ptr = xmalloc((size_t)(s->rowptr[nrows] + 1) * sizeof(int64_t));
        s->map_idx = xmalloc((size_t)rmap[nrows] * sizeof(int64_t));
        s->vmap_idx = xmalloc((size_t)s->vmap_ptr[nrows] * sizeof(int64_t));
        if (!s->rowptr || !s->colind || !s->map_ptr || !s->map_idx || !s->vmap_idx) rc = OOM();
    }
    /* pass 2: columns and maps, each row in its place */
    int bad = 0, miscount = 0;
    if (rc == HS_OK) {
#pragma omp parallel reduction(| : err, bad, miscount)
        {
            scratch w = {0};
#pragma omp for schedule(dynamic, 64)
            for (int64_t o = 0; o < no; o++) {
                /* scratch for this node's rows: candidate columns, counts, map pointers */
                if (scratch_need(&w, (a.cptr[o + 1] - a.cptr[o]) * s->nl * nc + 1)) {
                    err = 1;
                    continue;
                }
                int64_t n = s->owned[o];
                for (int c = 0; c < nc && !err; c++) {
                    int64_t row = o * nc + c, start = s->rowptr[row];
                    int64_t *cols = s->colind + start;
                    int64_t ncols = 0;
                    int dir = s->mask[n * nc + c];
                    if (dir) {
                        cols[0] = s->newnode[n] * nc + c;
                        ncols = 1;
                    } else {
                        /* free columns: walk the cells' nodes, keep the free (node, d) */
                        int64_t k = 0;
                        for (int64_t p = a.cptr[o]; p < a.cptr[o + 1]; p++) {
                            int64_t e = a.cent[p] / 16;
                            for (int b = 0; b < s->nl; b++) {
                                int32_t ln = s->h_cell_nodes[e * s->nl + b];
                                for (int d = 0; d < nc; d++)
                                    if (!s->h_bc_mask[(int64_t)ln * nc + d]) w.cols[k++] = s->newnode[s->lnode[ln]] * nc + d;
                            }
                        }
                        ncols = sort_unique(w.cols, k);
                        if (ncols != s->rowptr[row + 1] - start) {
                            miscount = 1;
                            continue;
                        }
                        memcpy(cols, w.cols, (size_t)ncols * sizeof(int64_t));
                    }
                    row_walk rw = {s, &a, cols, ncols, dir, 0};
                    for (int64_t i = 0; i < ncols; i++) w.cnt[i] = 0;
                    if (walk_row(&rw, o, c, w.cnt, NULL, NULL) < 0) {
                        bad = 1;
                        continue;
                    }
                    /* map pointers of this row's entries */
                    int64_t at = rmap[row];
                    int64_t *ptrs = w.nb; /* pass 2 does not list neighbours: w.nb is free */
                    for (int64_t i = 0; i < ncols; i++) {
                        s->map_ptr[start + i] = at;
                        ptrs[i] = at;
                        at += w.cnt[i];
                    }
                    if (at != rmap[row + 1]) {
                        miscount = 1;
                        continue;
                    }
                    walk_row(&rw, o, c, NULL, ptrs, s->map_idx);
                    if (!dir) {
                        int64_t v = s->vmap_ptr[row];
                        for (int pass = 0; pass < 2; pass++) {
                            const int64_t *pp = pass ? a.fptr : a.cptr, *ent = pass ? a.fent : a.cent;
                            int64_t nelem = pass ? s->naf : s->nac, base = pass ? s->nac * s->L : 0;
                            for (int64_t p = pp[o]; p < pp[o + 1]; p++) {
                                int64_t e = ent[p] / 16;
                                int i = (int)(ent[p] % 16) * nc + c;
                                s->vmap_idx[v++] = base + (int64_t)i * nelem + e;
                            }
                        }
                    }
                }
            }
            free(w.nb), free(w.cnt), free(w.cols);
        }
        if (err) rc = OOM();
        if (bad) rc = hs_input_error("mesh", 0, NULL, "a boundary facet is not a face of a cell of the mesh");
        else if (miscount) rc = HS_FAIL(HS_ERR_RUNTIME, "FEM pattern: a row's columns or contributions differ from their count");
    }
    if (rc == HS_OK) {
        s->nnz = s->rowptr[nrows];
        s->map_ptr[s->nnz] = rmap[nrows];
        s->nd = 0;
        for (int64_t r = 0; r < nrows; r++)
            if (s->mask[s->owned[r / nc] * nc + r % nc]) s->nd++;
        s->d_row = xmalloc((size_t)s->nd * sizeof(int64_t));
        s->d_diag = xmalloc((size_t)s->nd * sizeof(int64_t));
        if (!s->d_row || !s->d_diag) rc = OOM();
        int64_t k = 0;
        for (int64_t r = 0; r < nrows && rc == HS_OK; r++)
            if (s->mask[s->owned[r / nc] * nc + r % nc]) s->d_row[k] = r, s->d_diag[k++] = s->rowptr[r];
    }
    free(rown), free(rmap);
    free(a.cptr), free(a.cent), free(a.fptr), free(a.fent);
    return rc;
}

/* ------------------------------------------------------------------ device arrays */

static int upload(hs_ctx *ctx, const void *h, size_t bytes, void **d)
{
    HS_CHECK(hs_mem_alloc(ctx, bytes ? bytes : 8, d));
    if (bytes) HS_CHECK(hs_mem_copy(ctx, *d, h, bytes, HS_COPY_H2D));
    return HS_OK;
}

static int upload_dirichlet_values(hs_fem_system *s)
{
    double *g = xmalloc((size_t)s->nd * sizeof(double));
    if (!g) return OOM();
    for (int64_t k = 0; k < s->nd; k++) {
        int64_t r = s->d_row[k];
        g[k] = s->gval[s->owned[r / s->ncomp] * s->ncomp + r % s->ncomp];
    }
    int rc = s->dd_g ? hs_mem_copy(s->ctx, s->dd_g, g, (size_t)s->nd * sizeof(double), HS_COPY_H2D)
                     : upload(s->ctx, g, (size_t)s->nd * sizeof(double), (void **)&s->dd_g);
    free(g);
    if (rc != HS_OK) return rc;
    return hs_mem_copy(s->ctx, (void *)s->args.bc_value, s->h_bc_value, (size_t)s->nln * s->ncomp * sizeof(double), HS_COPY_H2D);
}

static int to_device(hs_fem_system *s, const hs_fem_problem *p)
{
    hs_ctx *c = s->ctx;
    hs_fem_kargs *a = &s->args;
    memset(a, 0, sizeof *a);
    a->dim = s->dim, a->order = s->order, a->ncomp = s->ncomp, a->physics = s->physics;
    a->nl = s->nl, a->nfl = s->nfl, a->ncells = s->nac, a->nfacets = s->naf;
    HS_CHECK(upload(c, s->h_cell_nodes, (size_t)s->nac * s->nl * sizeof(int32_t), (void **)&a->cell_nodes));
    HS_CHECK(upload(c, s->h_cell_slot, (size_t)s->nac * sizeof(int32_t), (void **)&a->cell_slot));
    HS_CHECK(upload(c, s->h_facet_nodes, (size_t)s->naf * s->nfl * sizeof(int32_t), (void **)&a->facet_nodes));
    HS_CHECK(upload(c, s->h_facet_slot, (size_t)s->naf * sizeof(int32_t), (void **)&a->facet_slot));
    HS_CHECK(upload(c, s->h_node_x, (size_t)s->nln * 3 * sizeof(double), (void **)&a->node_x));
    HS_CHECK(upload(c, s->h_bc_mask, (size_t)s->nln * s->ncomp, (void **)&a->bc_mask));
    HS_CHECK(upload(c, s->h_bc_value, (size_t)s->nln * s->ncomp * sizeof(double), (void **)&a->bc_value));
    HS_CHECK(upload(c, s->h_cell_coef, (size_t)(p->nregions + 1) * HS_FEM_NCOEF * sizeof(double), (void **)&a->cell_coef));
    HS_CHECK(upload(c, s->h_facet_coef, (size_t)(p->nbcs + 1) * HS_FEM_NCOEF * sizeof(double), (void **)&a->facet_coef));
    HS_CHECK(upload(c, s->map_ptr, (size_t)(s->nnz + 1) * sizeof(int64_t), (void **)&s->dmap_ptr));
    HS_CHECK(upload(c, s->map_idx, (size_t)s->map_ptr[s->nnz] * sizeof(int64_t), (void **)&s->dmap_idx));
    HS_CHECK(upload(c, s->vmap_ptr, (size_t)(s->n_local + 1) * sizeof(int64_t), (void **)&s->dvmap_ptr));
    HS_CHECK(upload(c, s->vmap_idx, (size_t)s->vmap_ptr[s->n_local] * sizeof(int64_t), (void **)&s->dvmap_idx));
    HS_CHECK(upload(c, s->d_row, (size_t)s->nd * sizeof(int64_t), (void **)&s->dd_row));
    HS_CHECK(upload(c, s->d_diag, (size_t)s->nd * sizeof(int64_t), (void **)&s->dd_diag));
    HS_CHECK(upload_dirichlet_values(s));
    s->kbuf_len = s->nac * s->L * s->L + s->naf * s->Lf * s->Lf;
    s->fbuf_len = s->nac * s->L + s->naf * s->Lf;
    HS_CHECK(hs_mem_alloc(c, (size_t)(s->kbuf_len ? s->kbuf_len : 1) * sizeof(double), (void **)&s->Kbuf));
    HS_CHECK(hs_mem_alloc(c, (size_t)(s->fbuf_len ? s->fbuf_len : 1) * sizeof(double), (void **)&s->Fbuf));
    a->Ke = s->Kbuf, a->Fe = s->Fbuf;
    return HS_OK;
}

int hs_fem_system_create(hs_ctx *ctx, hs_fem_mesh *mesh, const hs_fem_problem *prob, const int *cell_part, hs_fem_system **out)
{
    *out = NULL;
    if (prob->order != 1 && prob->order != 2) return hs_input_error("fem", 0, "order", "%d is not 1 or 2", prob->order);
    hs_fem_system *s = calloc(1, sizeof *s);
    if (!s) return OOM();
    s->ctx = ctx;
    s->mesh = mesh;
    s->dim = mesh->dim;
    s->order = prob->order;
    s->physics = prob->physics;
    s->ncomp = prob->physics == HS_FEM_ELASTIC ? mesh->dim : 1;
    s->nl = hs_fem_nodes(s->dim, s->order);
    s->nfl = hs_fem_nodes(s->dim - 1, s->order);
    s->L = s->nl * s->ncomp;
    s->Lf = s->nfl * s->ncomp;
    /* P1 needs no edges: leave them out (a tenth of the memory of a 10 M unknown mesh) */
    int rc = s->order == 2 ? hs_fem_mesh_edges(mesh) : HS_OK;
    s->nnodes = mesh->nverts + (s->order == 2 ? mesh->nedges : 0);
    if (rc == HS_OK) rc = number_cells(s);
    if (rc == HS_OK) rc = ownership(s, cell_part);
    if (rc == HS_OK) rc = dirichlet_mask(s, prob);
    if (rc == HS_OK) rc = assembly_set(s, prob);
    if (rc == HS_OK) rc = build_pattern(s);
    if (rc == HS_OK && s->nnz > 2147483647LL) rc = HS_FAIL(HS_ERR_RUNTIME, "more than 2^31 matrix entries on one rank");
    if (rc == HS_OK) rc = to_device(s, prob);
    if (rc != HS_OK) {
        hs_fem_system_destroy(s);
        return rc;
    }
    *out = s;
    return HS_OK;
}

int hs_fem_system_set_dirichlet(hs_fem_system *s, void (*g)(const double *x, void *user, double *out), void *user)
{
    int nc = s->ncomp;
    double x[3], v[3];
    for (int64_t n = 0; n < s->nnodes; n++) {
        int any = 0;
        for (int c = 0; c < nc; c++) any |= s->mask[n * nc + c];
        if (!any) continue;
        hs_fem_node_x(s, n, x);
        g(x, user, v);
        for (int c = 0; c < nc; c++)
            if (s->mask[n * nc + c]) s->gval[n * nc + c] = v[c];
    }
    for (int64_t i = 0; i < s->nln; i++)
        for (int c = 0; c < nc; c++) s->h_bc_value[i * nc + c] = s->gval[s->lnode[i] * nc + c];
    return upload_dirichlet_values(s);
}

/* ------------------------------------------------------------------ assembly */

int hs_fem_assemble(hs_fem_system *s, double cK, double cM, double cF, int lift, double *val, double *rhs)
{
    hs_ctx *ctx = s->ctx;
    s->args.cK = cK, s->args.cM = cM, s->args.cF = cF, s->args.lift = lift;
    HS_CHECK(HS_DISPATCH(ctx, hs_fem_elements_cpu(&s->args), hs_fem_elements_cuda(ctx->cuda, &s->args)));
    HS_CHECK(HS_DISPATCH(ctx, hs_fem_gather_cpu(s->nnz, s->dmap_ptr, s->dmap_idx, s->Kbuf, val),
                         hs_fem_gather_cuda(ctx->cuda, s->nnz, s->dmap_ptr, s->dmap_idx, s->Kbuf, val)));
    if (!rhs) return HS_OK;
    HS_CHECK(HS_DISPATCH(ctx, hs_fem_gather_cpu(s->n_local, s->dvmap_ptr, s->dvmap_idx, s->Fbuf, rhs),
                         hs_fem_gather_cuda(ctx->cuda, s->n_local, s->dvmap_ptr, s->dvmap_idx, s->Fbuf, rhs)));
    return hs_fem_set_dirichlet_rows(s, val, rhs);
}

int hs_fem_set_dirichlet_rows(hs_fem_system *s, const double *val, double *rhs)
{
    hs_ctx *ctx = s->ctx;
    return HS_DISPATCH(ctx, hs_fem_dirichlet_cpu(s->nd, s->dd_row, s->dd_diag, val, s->dd_g, rhs),
                       hs_fem_dirichlet_cuda(ctx->cuda, s->nd, s->dd_row, s->dd_diag, val, s->dd_g, rhs));
}

int hs_fem_initial_guess(hs_fem_system *s, double fill, double *x)
{
    double *h = xmalloc((size_t)s->n_local * sizeof(double));
    if (!h) return OOM();
    int nc = s->ncomp;
    for (int64_t r = 0; r < s->n_local; r++) {
        int64_t n = s->owned[r / nc];
        h[r] = s->mask[n * nc + r % nc] ? s->gval[n * nc + r % nc] : fill;
    }
    int rc = hs_mem_copy(s->ctx, x, h, (size_t)s->n_local * sizeof(double), HS_COPY_H2D);
    free(h);
    return rc;
}

int hs_fem_matrix_create(hs_fem_system *s, const double *val, hs_fem_matrix *M)
{
    memset(M, 0, sizeof *M);
    double *hv = xmalloc((size_t)s->nnz * sizeof(double));
    if (!hv) return OOM();
    int rc = hs_mem_copy(s->ctx, hv, val, (size_t)s->nnz * sizeof(double), HS_COPY_D2H);
    if (rc == HS_OK && s->ctx->size == 1) {
        int32_t *rp = xmalloc((size_t)(s->n_local + 1) * sizeof(int32_t)), *ci = xmalloc((size_t)s->nnz * sizeof(int32_t));
        if (!rp || !ci) rc = OOM();
        for (int64_t i = 0; rc == HS_OK && i <= s->n_local; i++) rp[i] = (int32_t)s->rowptr[i];
        for (int64_t i = 0; rc == HS_OK && i < s->nnz; i++) ci[i] = (int32_t)s->colind[i];
        if (rc == HS_OK) rc = hs_csr_create(s->ctx, s->n_local, s->n_local, s->nnz, rp, ci, hv, &M->csr);
        if (rc == HS_OK) M->op = hs_csr_linop(M->csr);
        free(rp), free(ci);
    } else if (rc == HS_OK) {
        rc = hs_dcsr_create(s->ctx, s->ctx->comm, s->row_start, s->n_local, s->n_global, s->rowptr, s->colind, hv, &M->dcsr);
        if (rc == HS_OK) M->op = hs_dcsr_linop(M->dcsr);
    }
    free(hv);
    return rc;
}

void hs_fem_matrix_destroy(hs_fem_matrix *M)
{
    if (!M) return;
    hs_csr_destroy(M->csr);
    if (M->dcsr) hs_dcsr_destroy(M->dcsr);
    memset(M, 0, sizeof *M);
}

hs_csr *hs_fem_matrix_local(hs_fem_matrix *M) { return M->csr ? M->csr : hs_dcsr_diag_block(M->dcsr); }

int hs_fem_gather(hs_fem_system *s, const double *x, double *full)
{
    int nc = s->ncomp;
    double *h = xmalloc((size_t)s->n_local * sizeof(double));
    if (!h) return OOM();
    int rc = hs_mem_copy(s->ctx, h, x, (size_t)s->n_local * sizeof(double), HS_COPY_D2H);
    memset(full, 0, (size_t)s->nnodes * nc * sizeof(double));
    for (int64_t r = 0; rc == HS_OK && r < s->n_local; r++) full[s->owned[r / nc] * nc + r % nc] = h[r];
    free(h);
    HS_CHECK(rc);
    /* every entry comes from one rank, the others add zeros: exact */
    if (s->ctx->size > 1) HS_CHECK(hs_host_allreduce(s->ctx->comm, HS_F64, HS_COMM_SUM, full, (size_t)s->nnodes * nc));
    return HS_OK;
}

/* ------------------------------------------------------------------ host loads and norms */

int hs_fem_load_function(hs_fem_system *s, void (*f)(const double *x, void *user, double *out), void *user, double *b)
{
    int nc = s->ncomp, nl = s->nl, dim = s->dim, L = s->L;
    double *fe = xcalloc((size_t)s->nac * L, sizeof(double));
    if (!fe) return OOM();
    int nq = dim == 2 ? 7 : 14;
#pragma omp parallel for schedule(static)
    for (int64_t e = 0; e < s->nac; e++) {
        double x[12], g[4][3];
        const int32_t *nodes = s->h_cell_nodes + e * nl;
        for (int i = 0; i <= dim; i++) memcpy(x + 3 * i, s->h_node_x + 3 * (int64_t)nodes[i], 3 * sizeof(double));
        double vol = hs_fem_geometry(dim, x, g);
        for (int q = 0; q < nq; q++) {
            double lam[4], w, phi[10], p[3] = {0, 0, 0}, v[3];
            hs_fem_rule(dim, 5, q, lam, &w);
            hs_fem_shape(dim, s->order, lam, phi);
            for (int i = 0; i <= dim; i++)
                for (int d = 0; d < 3; d++) p[d] += lam[i] * x[3 * i + d];
            f(p, user, v);
            for (int i = 0; i < nl; i++)
                for (int c = 0; c < nc; c++) fe[(int64_t)(i * nc + c) * s->nac + e] += w * vol * v[c] * phi[i];
        }
    }
    int64_t cells_end = s->nac * L;
    for (int64_t r = 0; r < s->n_local; r++)
        for (int64_t j = s->vmap_ptr[r]; j < s->vmap_ptr[r + 1]; j++)
            if (s->vmap_idx[j] < cells_end) b[r] += fe[s->vmap_idx[j]];
    free(fe);
    return HS_OK;
}

int hs_fem_error_norms(hs_fem_system *s, const double *u, void (*exact)(const double *x, void *user, double *val, double *grad),
                       void *user, double *l2, double *h1)
{
    hs_fem_mesh *m = s->mesh;
    int nc = s->ncomp, nl = s->nl, dim = s->dim, rank = s->ctx->rank;
    double sums[2] = {0, 0};
    int nq = dim == 2 ? 7 : 14;
    double a0 = 0, a1 = 0;
#pragma omp parallel for schedule(static) reduction(+ : a0, a1)
    for (int64_t c = 0; c < m->ncells; c++) {
        if (s->cell_part[c] != rank) continue;
        const int64_t *nodes = s->cell_nodes + c * nl;
        double x[12], g[4][3];
        for (int i = 0; i <= dim; i++) memcpy(x + 3 * i, m->x + 3 * nodes[i], 3 * sizeof(double));
        double vol = hs_fem_geometry(dim, x, g);
        for (int q = 0; q < nq; q++) {
            double lam[4], w, phi[10], grad[10][3], p[3] = {0, 0, 0}, ve[3], ge[9];
            hs_fem_rule(dim, 5, q, lam, &w);
            hs_fem_shape(dim, s->order, lam, phi);
            hs_fem_grad(dim, s->order, lam, g, grad);
            for (int i = 0; i <= dim; i++)
                for (int d = 0; d < 3; d++) p[d] += lam[i] * x[3 * i + d];
            exact(p, user, ve, ge);
            for (int k = 0; k < nc; k++) {
                double uh = 0, gh[3] = {0, 0, 0};
                for (int i = 0; i < nl; i++) {
                    double ui = u[nodes[i] * nc + k];
                    uh += ui * phi[i];
                    for (int d = 0; d < 3; d++) gh[d] += ui * grad[i][d];
                }
                a0 += w * vol * (uh - ve[k]) * (uh - ve[k]);
                for (int d = 0; d < dim; d++) a1 += w * vol * (gh[d] - ge[3 * k + d]) * (gh[d] - ge[3 * k + d]);
            }
        }
    }
    sums[0] = a0, sums[1] = a1;
    HS_CHECK(hs_allreduce_sum(s->ctx->comm, sums, 2));
    *l2 = sqrt(sums[0]);
    *h1 = sqrt(sums[1]);
    return HS_OK;
}
