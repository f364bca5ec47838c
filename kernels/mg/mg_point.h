/* The multigrid family's pointwise operations (stencil, Chebyshev step, transfers), shared verbatim by the CPU and CUDA kernels. */
#ifndef HS_MG_POINT_H
#define HS_MG_POINT_H

#include "kernels/hd.h"
#include "kernels/mg/mg_impl.h"

HS_HD int64_t hs_mg_at(const hs_mg_lay *l, int64_t i, int64_t j, int64_t k) { return l->origin + i + j * l->sy + k * l->sz; }

/* Where the six neighbours of a cell are read: per dimension d and side, an element offset from
 * the cell and a factor: (-+stride, 1) inside the domain and across rank boundaries (the halo, filled
 * by the exchange), (0, wall) across a wall of this rank (the cell itself: ghost = cell for Neumann,
 * -cell for Dirichlet, the face halfway between).  diag is A's diagonal at the cell.  Reading
 * through offset and factor instead of branching lets a row's inside run as one vector loop. */
typedef struct hs_mg_nb {
    int64_t off[3][2];
    double fac[3][2];
    double diag;
} hs_mg_nb;

/* Dimension d of the descriptor for a cell at index `at` of the launch's n[d] along it. */
HS_HD void hs_mg_nb_dim(const hs_mg_launch *L, int d, int64_t at, int64_t stride, hs_mg_nb *nb)
{
    const int wl = at == 0 ? L->wall_lo[d] : 0, wh = at == L->n[d] - 1 ? L->wall_hi[d] : 0;
    nb->off[d][0] = wl ? 0 : -stride;
    nb->off[d][1] = wh ? 0 : stride;
    nb->fac[d][0] = wl ? (double)wl : 1.0;
    nb->fac[d][1] = wh ? (double)wh : 1.0;
    nb->diag += (2.0 - wl - wh) * L->idx2[d];
}

/* The descriptor of local cell (i, j, k) (u's layout). */
HS_HD void hs_mg_nb_at(const hs_mg_launch *L, int64_t i, int64_t j, int64_t k, hs_mg_nb *nb)
{
    nb->diag = 0.0;
    for (int d = 1; d < 3; d++) nb->off[d][0] = nb->off[d][1] = 0, nb->fac[d][0] = nb->fac[d][1] = 0.0; /* unused */
    hs_mg_nb_dim(L, 0, i, 1, nb);
    if (L->ndim > 1) hs_mg_nb_dim(L, 1, j, L->lu.sy, nb);
    if (L->ndim > 2) hs_mg_nb_dim(L, 2, k, L->lu.sz, nb);
}

/* (A u) at element P of u: sum_d (2 u - u_lo - u_hi) / dx_d^2 over the first nd dimensions. */
HS_HD double hs_mg_Au(const hs_mg_launch *L, const double *u, int64_t P, const hs_mg_nb *nb, int nd)
{
    const double c = u[P];
    double s = (2.0 * c - nb->fac[0][0] * u[P + nb->off[0][0]] - nb->fac[0][1] * u[P + nb->off[0][1]]) * L->idx2[0];
    if (nd > 1) s += (2.0 * c - nb->fac[1][0] * u[P + nb->off[1][0]] - nb->fac[1][1] * u[P + nb->off[1][1]]) * L->idx2[1];
    if (nd > 2) s += (2.0 * c - nb->fac[2][0] * u[P + nb->off[2][0]] - nb->fac[2][1] * u[P + nb->off[2][1]]) * L->idx2[2];
    return s;
}

/* The Jacobi-scaled Chebyshev factor c2 / diag of a cell (0 on a cell without any coupling). */
HS_HD double hs_mg_jacobi(const hs_mg_launch *L, const hs_mg_nb *nb) { return nb->diag > 0.0 ? L->c2 / nb->diag : 0.0; }

/* The stencil operations at a cell: P its element in u, Po in u_out, Pr in r, q its index in the
 * contiguous arrays, nb its descriptor and jac = hs_mg_jacobi.  The flags are the launch's (has_u:
 * u != NULL, has_c1: c1 != 0, nd: ndim), passed apart so that the CPU's row loops can fix them as
 * constants (one branch-free vector loop per case) while the GPU passes the launch's values. */
HS_HD void hs_mg_cheb_cell(const hs_mg_launch *L, int64_t P, int64_t Po, int64_t q, const hs_mg_nb *nb, double jac,
                           int has_u, int has_c1, int nd)
{
    const double *u = L->u;
    const double res = L->b[q] + L->bshift - (has_u ? hs_mg_Au(L, u, P, nb, nd) : 0.0);
    /* c1 = 0 on a first step: d may hold anything then, even NaN */
    const double dn = (has_c1 ? L->c1 * L->d[q] : 0.0) + res * jac;
    L->d[q] = dn;
    L->u_out[Po] = (has_u ? u[P] : 0.0) + dn;
}

/* r (RESIDUAL, at Pr) or out (RESIDUAL_C, at q) = b - A u. */
HS_HD void hs_mg_residual_cell(const hs_mg_launch *L, int64_t P, int64_t Pr, int64_t q, const hs_mg_nb *nb, int has_u,
                               int to_field, int nd)
{
    const double v = L->b[q] + L->bshift - (has_u ? hs_mg_Au(L, L->u, P, nb, nd) : 0.0);
    if (to_field) L->r[Pr] = v;
    else L->out[q] = v;
}

HS_HD void hs_mg_apply_cell(const hs_mg_launch *L, int64_t P, int64_t q, const hs_mg_nb *nb, int nd)
{
    L->out[q] = L->scale * hs_mg_Au(L, L->u, P, nb, nd);
}

/* Weight t (0..3) of full weighting along a halved dimension: 1/8, 3/8, 3/8, 1/8. */
HS_HD double hs_mg_fw(int64_t t) { return t == 0 || t == 3 ? 0.125 : 0.375; }

/* Index a of a level with n local cells along a dimension, as a transfer reads it: inside as it
 * is; beyond a wall of this rank the mirrored cell (-1 - m <-> m, the homogeneous ghost rule of the
 * grid family) with *f = wall (+1 Neumann, -1 Dirichlet); elsewhere (rank boundary, periodic image)
 * as it is, from the exchanged halo. */
HS_HD int64_t hs_mg_mirror(int64_t a, int64_t n, int wall_lo, int wall_hi, double *f)
{
    *f = 1.0;
    if (a < 0 && wall_lo) {
        *f = (double)wall_lo;
        return -1 - a;
    }
    if (a >= n && wall_hi) {
        *f = (double)wall_hi;
        return 2 * n - 1 - a;
    }
    return a;
}

/* Along dimension d of the restriction: the first fine index (local) read for coarse index `at`:
 * 2I - 1 of the global coarse index I when halved (four fine cells follow), the same cell else. */
HS_HD int64_t hs_mg_restrict_first(const hs_mg_launch *L, int d, int halved, int64_t at)
{
    return halved ? 2 * (L->off_c[d] + at) - 1 - L->off_f[d] : at + L->off_c[d] - L->off_f[d];
}

/* The x part of the restriction on one fine row (its x = 0 element at row): 1/8, 3/8, 3/8, 1/8 of
 * the four cells from fx (through hs_mg_mirror), or the one cell. */
HS_HD double hs_mg_restrict_x(const hs_mg_launch *L, const double *row, int64_t fx, int hx)
{
    if (!hx) return row[fx];
    const int64_t n = L->nt[0];
    double f0, f3;
    const int64_t a0 = hs_mg_mirror(fx, n, L->wall_lo[0], L->wall_hi[0], &f0);
    const int64_t a3 = hs_mg_mirror(fx + 3, n, L->wall_lo[0], L->wall_hi[0], &f3);
    return 0.125 * (f0 * row[a0]) + 0.375 * row[fx + 1] + 0.375 * row[fx + 2] + 0.125 * (f3 * row[a3]);
}

/* Fine row b (0..3) of dimension d (1 or 2) in the restriction of coarse index `at`: its local index
 * (mirrored at walls) and weight (1/8, 3/8, 3/8, 1/8 times the wall factor; 1 when not halved). */
HS_HD int64_t hs_mg_restrict_row(const hs_mg_launch *L, int d, int halved, int64_t at, int64_t b, double *w)
{
    if (!halved) {
        *w = 1.0;
        return hs_mg_restrict_first(L, d, 0, at);
    }
    double f;
    const int64_t a = hs_mg_mirror(hs_mg_restrict_first(L, d, 1, at) + b, L->nt[d], L->wall_lo[d], L->wall_hi[d], &f);
    *w = hs_mg_fw(b) * f;
    return a;
}

/* Full weighting, the transpose of the prolongation up to the factor 2 per halved dimension, at
 * coarse cell (I, J, K).  The fine rows are taken z-major, y-minor, each weighted by its y and z
 * weights (the CPU's row loop keeps this order). */
HS_HD double hs_mg_restrict_at(const hs_mg_launch *L, int64_t I, int64_t J, int64_t K)
{
    const int hx = L->halve[0], hy = L->ndim > 1 && L->halve[1], hz = L->ndim > 2 && L->halve[2];
    const int64_t fx = hs_mg_restrict_first(L, 0, hx, I), ny = hy ? 4 : 1, nz = hz ? 4 : 1;
    double s = 0.0;
    for (int64_t c = 0; c < nz; c++) {
        double wz;
        const int64_t z = hs_mg_restrict_row(L, 2, hz, K, c, &wz);
        for (int64_t b = 0; b < ny; b++) {
            double wy;
            const int64_t y = hs_mg_restrict_row(L, 1, hy, J, b, &wy);
            s += wy * wz * hs_mg_restrict_x(L, L->r + hs_mg_at(&L->lr, 0, y, z), fx, hx);
        }
    }
    return s;
}

/* Along one dimension of the prolongation: the coarse index of the parent of the fine cell at local
 * index `at`, and the step to the parent's neighbour on the fine cell's side (0 when not halved). */
HS_HD int64_t hs_mg_parent(int halved, int64_t at, int64_t off_f, int64_t off_c, int64_t *step)
{
    if (!halved) {
        *step = 0;
        return at + off_f - off_c;
    }
    const int64_t g = off_f + at;
    *step = (g & 1) ? 1 : -1;
    return (g >> 1) - off_c;
}

/* The x part of the prolongation on one coarse row: 3/4 of the parent px and 1/4 of its neighbour
 * px + sx (through hs_mg_mirror), or the parent alone. */
HS_HD double hs_mg_prolong_x(const hs_mg_launch *L, const double *row, int64_t px, int64_t sx, int hx)
{
    if (!hx) return row[px];
    double f;
    const int64_t a = hs_mg_mirror(px + sx, L->nt[0], L->wall_lo[0], L->wall_hi[0], &f);
    return 0.75 * row[px] + 0.25 * (f * row[a]);
}

/* Coarse row b (0 parent, 1 its neighbour) of dimension d in the prolongation to fine index `at`:
 * its local index (mirrored at walls) and weight (3/4, 1/4 times the wall factor; 1 when not halved). */
HS_HD int64_t hs_mg_prolong_row(const hs_mg_launch *L, int d, int halved, int64_t at, int64_t b, double *w)
{
    int64_t step;
    const int64_t p = hs_mg_parent(halved, at, L->off_f[d], L->off_c[d], &step);
    if (!halved) {
        *w = 1.0;
        return p;
    }
    double f;
    const int64_t a = hs_mg_mirror(p + b * step, L->nt[d], L->wall_lo[d], L->wall_hi[d], &f);
    *w = (b ? 0.25 : 0.75) * f;
    return a;
}

/* Cell-centred linear interpolation of the coarse correction to fine cell (i, j, k): per halved
 * dimension 3/4 of the parent and 1/4 of the parent's neighbour on the fine cell's side (coarse
 * rows z-major, y-minor, as the CPU's row loop takes them). */
HS_HD double hs_mg_prolong_at(const hs_mg_launch *L, int64_t i, int64_t j, int64_t k)
{
    const int hx = L->halve[0], hy = L->ndim > 1 && L->halve[1], hz = L->ndim > 2 && L->halve[2];
    int64_t sx;
    const int64_t px = hs_mg_parent(hx, i, L->off_f[0], L->off_c[0], &sx), ny = hy ? 2 : 1, nz = hz ? 2 : 1;
    double s = 0.0;
    for (int64_t c = 0; c < nz; c++) {
        double wz;
        const int64_t z = hs_mg_prolong_row(L, 2, hz, k, c, &wz);
        for (int64_t b = 0; b < ny; b++) {
            double wy;
            const int64_t y = hs_mg_prolong_row(L, 1, hy, j, b, &wy);
            s += wy * wz * hs_mg_prolong_x(L, L->uc + hs_mg_at(&L->lc, 0, y, z), px, sx, hx);
        }
    }
    return s;
}

/* The index of local cell (i, j, k) in the contiguous arrays. */
HS_HD int64_t hs_mg_q(const hs_mg_launch *L, int64_t i, int64_t j, int64_t k) { return (k * L->n[1] + j) * L->n[0] + i; }

/* A stencil operation at local cell (i, j, k), its descriptor made here (the GPU's way; the CPU
 * makes the y and z parts once per row). */
HS_HD void hs_mg_stencil_at(const hs_mg_launch *L, int op, int64_t i, int64_t j, int64_t k)
{
    hs_mg_nb nb;
    hs_mg_nb_at(L, i, j, k, &nb);
    const int64_t P = hs_mg_at(&L->lu, i, j, k), q = hs_mg_q(L, i, j, k);
    const int has_u = L->u != 0, nd = L->ndim;
    switch (op) {
    case HS_MG_CHEB:
        hs_mg_cheb_cell(L, P, hs_mg_at(&L->lo, i, j, k), q, &nb, hs_mg_jacobi(L, &nb), has_u, L->c1 != 0.0, nd);
        break;
    case HS_MG_RESIDUAL:
    case HS_MG_RESIDUAL_C:
        hs_mg_residual_cell(L, P, hs_mg_at(&L->lr, i, j, k), q, &nb, has_u, op == HS_MG_RESIDUAL, nd);
        break;
    default: hs_mg_apply_cell(L, P, q, &nb, nd); break;
    }
}

HS_HD void hs_mg_prolong_store_at(const hs_mg_launch *L, int64_t i, int64_t j, int64_t k)
{
    const int64_t P = hs_mg_at(&L->lo, i, j, k);
    const double v = hs_mg_prolong_at(L, i, j, k);
    L->u_out[P] = L->accumulate ? L->u_out[P] + v : v;
}

/* Operation op (the launch's) at local cell (i, j, k): the GPU's kernels, one per operation (op a
 * template constant there, so each keeps only its own code and registers); the CPU's loops for the
 * light operations. */
HS_HD void hs_mg_cell(const hs_mg_launch *L, int op, int64_t i, int64_t j, int64_t k)
{
    switch (op) {
    case HS_MG_CHEB:
    case HS_MG_RESIDUAL:
    case HS_MG_RESIDUAL_C:
    case HS_MG_APPLY: hs_mg_stencil_at(L, op, i, j, k); break;
    case HS_MG_RESTRICT: L->out[hs_mg_q(L, i, j, k)] = hs_mg_restrict_at(L, i, j, k); break;
    case HS_MG_PROLONG: hs_mg_prolong_store_at(L, i, j, k); break;
    case HS_MG_STORE: L->out[hs_mg_q(L, i, j, k)] = L->scale * L->u[hs_mg_at(&L->lu, i, j, k)] + L->shift; break;
    case HS_MG_ADD: L->u_out[hs_mg_at(&L->lo, i, j, k)] += L->scale * L->b[hs_mg_q(L, i, j, k)]; break;
    case HS_MG_SHIFT_C: L->out[hs_mg_q(L, i, j, k)] = L->scale * L->b[hs_mg_q(L, i, j, k)] + L->shift; break;
    default: break;
    }
}

#endif
