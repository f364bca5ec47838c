/* Overlapping cells that share no facet: boundary facets cutting each other, points covered twice (a boundary BVH). */
#include "solvers/fem/fem_mesh_overlap.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/error.h"

#define CUT_TOL 1e-4 /* a cut must pass beyond this fraction of the larger facet's longest edge: thinner overlaps are
                        * taken for touching pieces whose coordinates were written with 7 or 8 digits */
#define RAY_TOL 1e-9 /* a ray this near (relative to the facet) to a facet's edge or plane is ambiguous */
#define INSIDE 0.01  /* the test point: this fraction of the way from a facet to its cell's opposite vertex */
#define LEAF 4

typedef struct {
    double lo[3], hi[3];
    int64_t first, count; /* the facets order[first .. first + count) */
    int64_t left, right;  /* children, -1 for a leaf */
} bvh_node;

/* The boundary facets and a bounding-volume tree over them. */
typedef struct {
    const hs_fem_mesh *m;
    int dim;
    int64_t n;
    int64_t *v;       /* 3 per facet (dim used), outwards: 2-D the cell on the left, 3-D (b - a) x (c - a) outwards */
    int64_t *cell;    /* the cell of the facet */
    int64_t *opp;     /* that cell's vertex off the facet */
    double *lo, *hi;  /* 3 per facet: the bounding box */
    double *size;     /* the longest edge */
    int64_t *order;   /* facets in tree order */
    bvh_node *node;
    int64_t nnodes;
} bnd;

typedef struct {
    double key;
    int64_t f;
} keyed;

static void bnd_free(bnd *b)
{
    free(b->v), free(b->cell), free(b->opp), free(b->lo), free(b->hi), free(b->size), free(b->order), free(b->node);
}

static const double *X(const bnd *b, int64_t vert) { return b->m->x + 3 * vert; }

static void sub3(const double *a, const double *b, double *o)
{
    for (int d = 0; d < 3; d++) o[d] = a[d] - b[d];
}
static void cross3(const double *a, const double *b, double *o)
{
    o[0] = a[1] * b[2] - a[2] * b[1], o[1] = a[2] * b[0] - a[0] * b[2], o[2] = a[0] * b[1] - a[1] * b[0];
}
static double dot3(const double *a, const double *b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
static double orient2(const double *a, const double *b, const double *c)
{
    return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]);
}

/* The facets marked in boundary, oriented outwards, with their boxes and sizes. */
static int collect(bnd *b, const hs_fem_mesh *m, const unsigned char *boundary)
{
    const int dim = m->dim, nv = dim + 1;
    b->m = m, b->dim = dim, b->n = 0;
    for (int64_t c = 0; c < m->ncells; c++)
        for (int k = 0; k < nv; k++) b->n += (boundary[c] >> k) & 1;
    size_t n = (size_t)(b->n ? b->n : 1);
    b->v = malloc(3 * n * sizeof *b->v), b->cell = malloc(n * sizeof *b->cell), b->opp = malloc(n * sizeof *b->opp);
    b->lo = malloc(3 * n * sizeof *b->lo), b->hi = malloc(3 * n * sizeof *b->hi), b->size = malloc(n * sizeof *b->size);
    b->order = malloc(n * sizeof *b->order), b->node = malloc((2 * n + 1) * sizeof *b->node);
    if (!b->v || !b->cell || !b->opp || !b->lo || !b->hi || !b->size || !b->order || !b->node)
        return HS_FAIL(HS_ERR_RUNTIME, "out of memory for the mesh's boundary");
    int64_t f = 0;
    for (int64_t c = 0; c < m->ncells; c++)
        for (int k = 0; k < nv; k++) {
            if (!((boundary[c] >> k) & 1)) continue;
            const int64_t *cv = m->cell + (int64_t)nv * c;
            int64_t *fv = b->v + 3 * f;
            if (dim == 2) { /* anticlockwise cell: its sides in order keep it on their left */
                fv[0] = cv[(k + 1) % 3], fv[1] = cv[(k + 2) % 3], fv[2] = -1;
            } else {
                for (int a = 0, j = 0; a < 4; a++)
                    if (a != k) fv[j++] = cv[a];
                double e1[3], e2[3], nrm[3], to[3];
                sub3(m->x + 3 * fv[1], m->x + 3 * fv[0], e1), sub3(m->x + 3 * fv[2], m->x + 3 * fv[0], e2);
                cross3(e1, e2, nrm), sub3(m->x + 3 * cv[k], m->x + 3 * fv[0], to);
                if (dot3(nrm, to) > 0) {
                    int64_t t = fv[1];
                    fv[1] = fv[2], fv[2] = t;
                }
            }
            b->cell[f] = c, b->opp[f] = cv[k], b->order[f] = f;
            double L = 0;
            for (int d = 0; d < 3; d++) b->lo[3 * f + d] = HUGE_VAL, b->hi[3 * f + d] = -HUGE_VAL;
            for (int a = 0; a < dim; a++) {
                const double *xa = m->x + 3 * fv[a], *xb = m->x + 3 * fv[(a + 1) % dim];
                for (int d = 0; d < 3; d++) {
                    b->lo[3 * f + d] = fmin(b->lo[3 * f + d], xa[d]);
                    b->hi[3 * f + d] = fmax(b->hi[3 * f + d], xa[d]);
                }
                double e[3];
                sub3(xa, xb, e);
                L = fmax(L, sqrt(dot3(e, e)));
            }
            b->size[f] = L;
            f++;
        }
    return HS_OK;
}

static int cmp_keyed(const void *x, const void *y)
{
    const keyed *a = x, *b = y;
    if (a->key != b->key) return a->key < b->key ? -1 : 1;
    return (a->f > b->f) - (a->f < b->f);
}

/* A node over order[first .. first + count): split at the median centroid along the longest side. */
static int64_t build(bnd *b, keyed *tmp, int64_t first, int64_t count)
{
    int64_t id = b->nnodes++;
    bvh_node *nd = &b->node[id];
    double clo[3] = {HUGE_VAL, HUGE_VAL, HUGE_VAL}, chi[3] = {-HUGE_VAL, -HUGE_VAL, -HUGE_VAL};
    for (int d = 0; d < 3; d++) nd->lo[d] = HUGE_VAL, nd->hi[d] = -HUGE_VAL;
    for (int64_t i = first; i < first + count; i++) {
        int64_t f = b->order[i];
        for (int d = 0; d < 3; d++) {
            nd->lo[d] = fmin(nd->lo[d], b->lo[3 * f + d]), nd->hi[d] = fmax(nd->hi[d], b->hi[3 * f + d]);
            double cen = b->lo[3 * f + d] + b->hi[3 * f + d];
            clo[d] = fmin(clo[d], cen), chi[d] = fmax(chi[d], cen);
        }
    }
    nd->first = first, nd->count = count, nd->left = nd->right = -1;
    if (count <= LEAF) return id;
    int axis = 0;
    for (int d = 1; d < b->dim; d++)
        if (chi[d] - clo[d] > chi[axis] - clo[axis]) axis = d;
    for (int64_t i = 0; i < count; i++) {
        int64_t f = b->order[first + i];
        tmp[i].key = b->lo[3 * f + axis] + b->hi[3 * f + axis], tmp[i].f = f;
    }
    qsort(tmp, (size_t)count, sizeof *tmp, cmp_keyed);
    for (int64_t i = 0; i < count; i++) b->order[first + i] = tmp[i].f;
    int64_t half = count / 2;
    int64_t l = build(b, tmp, first, half), r = build(b, tmp, first + half, count - half);
    b->node[id].left = l, b->node[id].right = r;
    return id;
}

/* ------------------------------------------------------------------ facets cutting each other */

static int straddles(double s, double t, double tol) { return (s > tol && t < -tol) || (s < -tol && t > tol); }

/* Segments ab and cd cross at a point inside both, each end beyond tol of the other's line. */
static int segments_cut(const double *a, const double *b, const double *c, const double *d, double tol)
{
    double lab = hypot(b[0] - a[0], b[1] - a[1]), lcd = hypot(d[0] - c[0], d[1] - c[1]);
    return straddles(orient2(a, b, c) / lab, orient2(a, b, d) / lab, tol) && straddles(orient2(c, d, a) / lcd, orient2(c, d, b) / lcd, tol);
}

/* Segment pq passes through the inside of triangle abc: its ends beyond tol on either side of the
 * plane, the crossing point beyond tol inside every edge. */
static int segment_cuts_triangle(const double *p, const double *q, const double *a, const double *b, const double *c, double tol)
{
    double e1[3], e2[3], n[3], ap[3], aq[3];
    sub3(b, a, e1), sub3(c, a, e2), cross3(e1, e2, n);
    double nn = sqrt(dot3(n, n));
    if (!(nn > 0)) return 0;
    sub3(p, a, ap), sub3(q, a, aq);
    double sp = dot3(ap, n) / nn, sq = dot3(aq, n) / nn;
    if (!straddles(sp, sq, tol)) return 0;
    double s = sp / (sp - sq), x[3];
    for (int d = 0; d < 3; d++) x[d] = p[d] + s * (q[d] - p[d]);
    const double *t[3] = {a, b, c};
    for (int i = 0; i < 3; i++) {
        double e[3], ux[3], w[3];
        sub3(t[(i + 1) % 3], t[i], e), sub3(x, t[i], ux), cross3(e, ux, w);
        if (!(dot3(w, n) / (nn * sqrt(dot3(e, e))) > tol)) return 0;
    }
    return 1;
}

/* Whether boundary facets f and g cut through each other.  Facets sharing a node meet there; in 2-D
 * that is all they can do, in 3-D one sharing a single node cuts the other only through its edge
 * opposite that node; ones sharing an edge meet along it. */
static int facets_cut(const bnd *b, int64_t f, int64_t g)
{
    const int dim = b->dim;
    const int64_t *fv = b->v + 3 * f, *gv = b->v + 3 * g;
    int shared = 0, fs = -1, gs = -1;
    for (int i = 0; i < dim; i++)
        for (int j = 0; j < dim; j++)
            if (fv[i] == gv[j]) shared++, fs = i, gs = j;
    double tol = CUT_TOL * fmax(b->size[f], b->size[g]);
    if (dim == 2) return !shared && segments_cut(X(b, fv[0]), X(b, fv[1]), X(b, gv[0]), X(b, gv[1]), tol);
    if (shared >= 2) return 0;
    const double *F[3] = {X(b, fv[0]), X(b, fv[1]), X(b, fv[2])}, *G[3] = {X(b, gv[0]), X(b, gv[1]), X(b, gv[2])};
    for (int i = 0; i < 3; i++) {
        if (shared && i != (fs + 1) % 3) continue; /* with a shared node: only the edge opposite it */
        if (segment_cuts_triangle(F[i], F[(i + 1) % 3], G[0], G[1], G[2], tol)) return 1;
    }
    for (int i = 0; i < 3; i++) {
        if (shared && i != (gs + 1) % 3) continue;
        if (segment_cuts_triangle(G[i], G[(i + 1) % 3], F[0], F[1], F[2], tol)) return 1;
    }
    return 0;
}

static int boxes_meet(const double *alo, const double *ahi, const double *blo, const double *bhi)
{
    for (int d = 0; d < 3; d++)
        if (alo[d] > bhi[d] || blo[d] > ahi[d]) return 0;
    return 1;
}

/* The facet (the first in facet order) that cuts the facet at tree position i, or -1; with later_only,
 * only among the facets after position i (each pair looked at once: the tree's earlier subtrees are
 * skipped whole). */
static int64_t first_cut(const bnd *b, int64_t i, int later_only)
{
    const int64_t f = b->order[i];
    int64_t stack[128], top = 0, best = -1;
    const double *lo = b->lo + 3 * f, *hi = b->hi + 3 * f;
    stack[top++] = 0;
    while (top) {
        const bvh_node *nd = &b->node[stack[--top]];
        if ((later_only && nd->first + nd->count <= i + 1) || !boxes_meet(lo, hi, nd->lo, nd->hi)) continue;
        if (nd->left >= 0) {
            stack[top++] = nd->left, stack[top++] = nd->right;
            continue;
        }
        for (int64_t j = nd->first; j < nd->first + nd->count; j++) {
            int64_t g = b->order[j];
            if (j == i || (later_only && j < i) || (best >= 0 && g >= best) || !boxes_meet(lo, hi, b->lo + 3 * g, b->hi + 3 * g))
                continue;
            if (facets_cut(b, f, g)) best = g;
        }
    }
    return best;
}

/* ------------------------------------------------------------------ points covered twice */

enum { MISS = 0, AMBIGUOUS = 2 };

/* What the ray from p along axis ax in direction dir (+1, -1) does at 2-D facet f: leaves the
 * region through it (+1), enters it (-1), misses it, or passes too near a node or the facet's line
 * to tell (AMBIGUOUS). */
static int ray_segment(const bnd *b, int64_t f, const double *p, int ax, int dir)
{
    const double *a = X(b, b->v[3 * f]), *c = X(b, b->v[3 * f + 1]);
    const int u = 1 - ax;
    const double tol = RAY_TOL * b->size[f];
    if (dir * (a[ax] - p[ax]) < -tol && dir * (c[ax] - p[ax]) < -tol) return MISS; /* behind */
    double lo = fmin(a[u], c[u]), hi = fmax(a[u], c[u]);
    if (p[u] < lo - tol || p[u] > hi + tol) return MISS;
    if (!(p[u] > lo + tol && p[u] < hi - tol)) return AMBIGUOUS; /* near a node's level */
    double dist = orient2(a, c, p) / hypot(c[0] - a[0], c[1] - a[1]);
    if (fabs(dist) <= tol) return AMBIGUOUS;
    double s = (p[u] - a[u]) / (c[u] - a[u]), hit = a[ax] + s * (c[ax] - a[ax]);
    if (dir * (hit - p[ax]) <= 0) return MISS;
    double n_ax = ax == 0 ? c[1] - a[1] : a[0] - c[0]; /* the outward normal (dy, -dx) */
    return n_ax * dir > 0 ? 1 : -1;
}

/* The same for a 3-D facet (a triangle). */
static int ray_triangle(const bnd *b, int64_t f, const double *p, int ax, int dir)
{
    const double *t[3] = {X(b, b->v[3 * f]), X(b, b->v[3 * f + 1]), X(b, b->v[3 * f + 2])};
    const int u = (ax + 1) % 3, w = (ax + 2) % 3;
    const double L = b->size[f], tol = RAY_TOL * L, tolE = RAY_TOL * L * L;
    if (dir * (t[0][ax] - p[ax]) < -tol && dir * (t[1][ax] - p[ax]) < -tol && dir * (t[2][ax] - p[ax]) < -tol) return MISS;
    double e[3];
    for (int i = 0; i < 3; i++) {
        const double *A = t[i], *B = t[(i + 1) % 3];
        e[i] = (B[u] - A[u]) * (p[w] - A[w]) - (B[w] - A[w]) * (p[u] - A[u]);
    }
    double e1[3], e2[3], n[3];
    sub3(t[1], t[0], e1), sub3(t[2], t[0], e2), cross3(e1, e2, n);
    if (fabs(n[ax]) <= 3 * tolE) {
        /* edge-on: the ray runs along the facet's plane; a miss only when clearly off all its edges */
        for (int i = 0; i < 3; i++) {
            const double *A = t[i], *B = t[(i + 1) % 3];
            double du = B[u] - A[u], dw = B[w] - A[w], l2 = du * du + dw * dw;
            double s = l2 > 0 ? ((p[u] - A[u]) * du + (p[w] - A[w]) * dw) / l2 : 0;
            s = fmin(1, fmax(0, s));
            if (hypot(p[u] - A[u] - s * du, p[w] - A[w] - s * dw) <= 4 * tol) return AMBIGUOUS;
        }
        return MISS;
    }
    double sg = n[ax] > 0 ? 1 : -1;
    for (int i = 0; i < 3; i++)
        if (sg * e[i] < -tolE) return MISS;
    for (int i = 0; i < 3; i++)
        if (!(sg * e[i] > tolE)) return AMBIGUOUS;
    double ap[3];
    sub3(p, t[0], ap);
    if (fabs(dot3(ap, n)) / sqrt(dot3(n, n)) <= tol) return AMBIGUOUS; /* p on the facet's plane */
    double hit = t[0][ax] - (n[u] * (p[u] - t[0][u]) + n[w] * (p[w] - t[0][w])) / n[ax];
    if (dir * (hit - p[ax]) <= 0) return MISS;
    return n[ax] * dir > 0 ? 1 : -1;
}

/* The winding number of the boundary about p (the number of cells over it), counted along the ray
 * from p on axis ax in direction dir; *ambiguous set when the ray passes too near a node, an edge or
 * a plane of a facet to count it. */
static int winding(const bnd *b, const double *p, int ax, int dir, int *ambiguous)
{
    int64_t stack[128], top = 0;
    int w = 0;
    *ambiguous = 0;
    stack[top++] = 0;
    while (top && !*ambiguous) {
        const bvh_node *nd = &b->node[stack[--top]];
        int off = dir > 0 ? nd->hi[ax] < p[ax] : nd->lo[ax] > p[ax];
        for (int d = 0; d < b->dim; d++)
            if (d != ax && (p[d] < nd->lo[d] || p[d] > nd->hi[d])) off = 1;
        if (off) continue;
        if (nd->left >= 0) {
            stack[top++] = nd->left, stack[top++] = nd->right;
            continue;
        }
        for (int64_t i = nd->first; i < nd->first + nd->count; i++) {
            int r = b->dim == 2 ? ray_segment(b, b->order[i], p, ax, dir) : ray_triangle(b, b->order[i], p, ax, dir);
            if (r == AMBIGUOUS) *ambiguous = 1;
            else w += r;
        }
    }
    return w;
}

/* The number of cells over a point just inside facet f (its test point in p), or -1 when every ray
 * tried was ambiguous. */
static int cover_near(const bnd *b, int64_t f, double *p)
{
    static const double w2[3][3] = {{0.5, 0.5, 0}, {0.3, 0.7, 0}, {0.7, 0.3, 0}};
    static const double w3[3][3] = {{1.0 / 3, 1.0 / 3, 1.0 / 3}, {0.5, 0.3, 0.2}, {0.2, 0.5, 0.3}};
    const double *o = X(b, b->opp[f]);
    for (int var = 0; var < 3; var++) {
        const double *wt = b->dim == 2 ? w2[var] : w3[var], t = INSIDE * (var + 1);
        for (int d = 0; d < 3; d++) {
            double c = 0;
            for (int a = 0; a < b->dim; a++) c += wt[a] * X(b, b->v[3 * f + a])[d];
            p[d] = (1 - t) * c + t * o[d];
        }
        /* the rays along the axes, shortest first (to the side of the boundary's box): fewer facets */
        int ray[6], nr = 2 * b->dim;
        double len[6];
        for (int r = 0; r < nr; r++) {
            len[r] = r % 2 ? p[r / 2] - b->node[0].lo[r / 2] : b->node[0].hi[r / 2] - p[r / 2];
            int j = r;
            for (; j > 0 && len[ray[j - 1]] > len[r]; j--) ray[j] = ray[j - 1];
            ray[j] = r;
        }
        for (int i = 0; i < nr; i++) {
            int amb, w = winding(b, p, ray[i] / 2, ray[i] % 2 ? -1 : 1, &amb);
            if (!amb) return w;
        }
    }
    return -1;
}

/* A cell other than c with p well inside it (barycentric coordinates above 1e-9), or -1. */
static int64_t other_cell_over(const hs_fem_mesh *m, int64_t c, const double *p)
{
    const int nv = m->dim + 1;
    for (int64_t k = 0; k < m->ncells; k++) {
        if (k == c) continue;
        const int64_t *v = m->cell + (int64_t)nv * k;
        int out = 0;
        for (int d = 0; d < m->dim && !out; d++) {
            double lo = HUGE_VAL, hi = -HUGE_VAL;
            for (int a = 0; a < nv; a++) lo = fmin(lo, m->x[3 * v[a] + d]), hi = fmax(hi, m->x[3 * v[a] + d]);
            out = p[d] < lo || p[d] > hi;
        }
        if (out) continue;
        double lam_min = HUGE_VAL;
        if (m->dim == 2) {
            const double *x0 = m->x + 3 * v[0], *x1 = m->x + 3 * v[1], *x2 = m->x + 3 * v[2];
            double area = orient2(x0, x1, x2);
            lam_min = fmin(orient2(p, x1, x2), fmin(orient2(x0, p, x2), orient2(x0, x1, p))) / area;
        } else {
            const double *x[4] = {m->x + 3 * v[0], m->x + 3 * v[1], m->x + 3 * v[2], m->x + 3 * v[3]};
            double e[3][3], vol;
            for (int a = 0; a < 3; a++) sub3(x[a + 1], x[0], e[a]);
            double cr[3];
            cross3(e[1], e[2], cr);
            vol = dot3(e[0], cr);
            for (int r = 0; r < 4; r++) {
                const double *y[4] = {x[0], x[1], x[2], x[3]};
                y[r] = p;
                for (int a = 0; a < 3; a++) sub3(y[a + 1], y[0], e[a]);
                cross3(e[1], e[2], cr);
                lam_min = fmin(lam_min, dot3(e[0], cr) / vol);
            }
        }
        if (lam_min > 1e-9) return k;
    }
    return -1;
}

/* "(x, y)" or "(x, y, z)" of each vertex, joined as a list. */
static void describe_facet(const bnd *b, int64_t f, const char *sep_last, char *out, size_t len)
{
    int w = 0;
    for (int j = 0; j < b->dim; j++) {
        const double *x = X(b, b->v[3 * f + j]);
        const char *sep = j == 0 ? "" : j + 1 == b->dim ? sep_last : ", ";
        if (b->dim == 2) w += snprintf(out + w, len - (size_t)w, "%s(%g, %g)", sep, x[0], x[1]);
        else w += snprintf(out + w, len - (size_t)w, "%s(%g, %g, %g)", sep, x[0], x[1], x[2]);
    }
}

int hs_fem_mesh_refuse_overlaps(const hs_fem_mesh *m, const unsigned char *boundary, const char *path, const int *line,
                                const char *key)
{
    bnd b = {0};
    int rc = collect(&b, m, boundary);
    if (rc != HS_OK || b.n == 0) {
        bnd_free(&b);
        return rc;
    }
    keyed *tmp = malloc((size_t)b.n * sizeof *tmp);
    if (!tmp) {
        bnd_free(&b);
        return HS_FAIL(HS_ERR_RUNTIME, "out of memory for the mesh's boundary");
    }
    build(&b, tmp, 0, b.n);
    free(tmp);
    const char *cell = m->dim == 2 ? "triangle" : "tetrahedron", *side = m->dim == 2 ? "side" : "face";
    char fa[240], ga[240];

    /* 1. boundary facets that cut through each other: any pair, then (an error) the first facet in
     * file order that is cut, and the first that cuts it */
    int cut = 0;
#pragma omp parallel for schedule(dynamic, 256) reduction(max : cut)
    for (int64_t i = 0; i < b.n; i++)
        if (first_cut(&b, i, 1) >= 0) cut = 1;
    if (cut) {
        int64_t *pos = malloc((size_t)b.n * sizeof *pos), f = 0, g = -1;
        if (!pos) {
            bnd_free(&b);
            return HS_FAIL(HS_ERR_RUNTIME, "out of memory for the mesh's boundary");
        }
        for (int64_t i = 0; i < b.n; i++) pos[b.order[i]] = i;
        for (f = 0; f < b.n && g < 0; f++) g = first_cut(&b, pos[f], 0);
        free(pos);
        f--;
        int64_t bad = b.cell[g] > b.cell[f] ? g : f, mate = bad == g ? f : g;
        describe_facet(&b, bad, m->dim == 2 ? " to " : " and ", fa, sizeof fa);
        describe_facet(&b, mate, m->dim == 2 ? " to " : " and ", ga, sizeof ga);
        rc = hs_input_error(path, line[b.cell[bad]], key, "%s %lld overlaps %s %lld (line %d): its boundary %s %s %s %s the "
                                                          "boundary %s %s %s of the other, so two parts of the mesh lie over "
                                                          "one another (pieces that intersect, or a boundary that crosses itself)",
                            cell, (long long)b.cell[bad] + 1, cell, (long long)b.cell[mate] + 1, line[b.cell[mate]], side,
                            m->dim == 2 ? "from" : "through", fa, m->dim == 2 ? "crosses" : "cuts through", side,
                            m->dim == 2 ? "from" : "through", ga);
        bnd_free(&b);
        return rc;
    }

    /* 2. a point just inside each boundary facet must be covered once: a piece inside another, or a
     * region meshed twice, covers it twice without any facets cutting */
    signed char *twice = calloc((size_t)b.n, 1);
    if (!twice) {
        bnd_free(&b);
        return HS_FAIL(HS_ERR_RUNTIME, "out of memory for the mesh's boundary");
    }
#pragma omp parallel for schedule(dynamic, 256)
    for (int64_t f = 0; f < b.n; f++) {
        double p[3];
        twice[f] = cover_near(&b, f, p) >= 2;
    }
    int tried = 0;
    for (int64_t f = 0; f < b.n && rc == HS_OK && tried < 16; f++) {
        if (!twice[f]) continue;
        tried++;
        double p[3];
        cover_near(&b, f, p);
        int64_t c = b.cell[f], o = other_cell_over(m, c, p); /* confirmed by a second cell over p */
        if (o < 0) continue;
        describe_facet(&b, f, m->dim == 2 ? " to " : " and ", fa, sizeof fa);
        char at[120];
        if (m->dim == 2) snprintf(at, sizeof at, "(%g, %g)", p[0], p[1]);
        else snprintf(at, sizeof at, "(%g, %g, %g)", p[0], p[1], p[2]);
        rc = hs_input_error(path, line[c], key, "%s %lld overlaps %s %lld (line %d): the point %s, inside it near its boundary "
                                                "%s %s %s, lies inside both, so the mesh covers that region twice (a piece "
                                                "inside another, or cells over one another)",
                            cell, (long long)c + 1, cell, (long long)o + 1, line[o], at, side, m->dim == 2 ? "from" : "through", fa);
    }
    free(twice);
    bnd_free(&b);
    return rc;
}
