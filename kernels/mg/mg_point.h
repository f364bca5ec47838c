/* The multigrid family's pointwise operations (stencil, Chebyshev step, transfers), shared verbatim by the CPU and CUDA kernels. */
#ifndef HS_MG_POINT_H
#define HS_MG_POINT_H

#include "kernels/hd.h"
#include "kernels/mg/mg_impl.h"

HS_HD int64_t hs_mg_at(const hs_mg_lay *l, int64_t i, int64_t j, int64_t k) { return l->origin + i + j * l->sy + k * l->sz; }

/* One dimension's share of (A u) and of A's diagonal at a cell at index `at` of n along it (stride
 * s, P the cell's element, c its value; u NULL: the diagonal only).  The neighbour across a wall of
 * this rank is wall * c. */
HS_HD void hs_mg_dim(const double *u, int64_t P, int64_t s, int64_t at, int64_t n, int wall_lo, int wall_hi, double idx2,
                     double c, double *sum, double *diag)
{
    const int wl = at == 0 ? wall_lo : 0, wh = at == n - 1 ? wall_hi : 0;
    *diag += (2.0 - wl - wh) * idx2;
    if (!u) return;
    const double lo = wl ? wl * c : u[P - s], hi = wh ? wh * c : u[P + s];
    *sum += (2.0 * c - lo - hi) * idx2;
}

/* (A u) at local cell (i, j, k) of the launch's level, and A's diagonal there (written out per
 * dimension, without arrays, so that the GPU keeps everything in registers).  xedge = 0 promises
 * that the cell is not at either end of its row (no wall along x to look for): the CPU's rows call
 * it so for their inside cells, where the x part then has no branches and the diagonal is the
 * same along the row. */
HS_HD double hs_mg_stencil(const hs_mg_launch *L, int64_t i, int64_t j, int64_t k, int xedge, double *diag)
{
    const double *u = L->u;
    const int64_t P = hs_mg_at(&L->lu, i, j, k);
    const double c = u ? u[P] : 0.0;
    double s = 0.0, dg = 0.0;
    if (xedge) hs_mg_dim(u, P, 1, i, L->n[0], L->wall_lo[0], L->wall_hi[0], L->idx2[0], c, &s, &dg);
    else hs_mg_dim(u, P, 1, 1, 3, 0, 0, L->idx2[0], c, &s, &dg);
    if (L->ndim > 1) hs_mg_dim(u, P, L->lu.sy, j, L->n[1], L->wall_lo[1], L->wall_hi[1], L->idx2[1], c, &s, &dg);
    if (L->ndim > 2) hs_mg_dim(u, P, L->lu.sz, k, L->n[2], L->wall_lo[2], L->wall_hi[2], L->idx2[2], c, &s, &dg);
    *diag = dg;
    return s;
}

/* Weight t (0..3) of full weighting along a halved dimension: 1/8, 3/8, 3/8, 1/8. */
HS_HD double hs_mg_fw(int64_t t) { return t == 0 || t == 3 ? 0.125 : 0.375; }

/* Full weighting, the transpose of hs_mg_prolong_at up to the factor 2 per halved dimension:
 * coarse cell (I, J, K) from the fine residual (ghosts filled with the homogeneous rule, which is
 * what makes it the exact transpose at walls). */
HS_HD double hs_mg_restrict_at(const hs_mg_launch *L, int64_t I, int64_t J, int64_t K)
{
    const int hx = L->halve[0], hy = L->ndim > 1 && L->halve[1], hz = L->ndim > 2 && L->halve[2];
    const int64_t fx = hx ? 2 * (L->off_c[0] + I) - 1 - L->off_f[0] : I + L->off_c[0] - L->off_f[0];
    const int64_t fy = hy ? 2 * (L->off_c[1] + J) - 1 - L->off_f[1] : J + L->off_c[1] - L->off_f[1];
    const int64_t fz = hz ? 2 * (L->off_c[2] + K) - 1 - L->off_f[2] : K + L->off_c[2] - L->off_f[2];
    const int64_t nx = hx ? 4 : 1, ny = hy ? 4 : 1, nz = hz ? 4 : 1;
    double s = 0.0;
    for (int64_t c = 0; c < nz; c++)
        for (int64_t b = 0; b < ny; b++) {
            double row = 0.0;
            for (int64_t a = 0; a < nx; a++)
                row += (hx ? hs_mg_fw(a) : 1.0) * L->r[hs_mg_at(&L->lr, fx + a, fy + b, fz + c)];
            s += (hy ? hs_mg_fw(b) : 1.0) * (hz ? hs_mg_fw(c) : 1.0) * row;
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

/* Cell-centred linear interpolation of the coarse correction to fine cell (i, j, k): per halved
 * dimension 3/4 of the parent and 1/4 of the parent's neighbour on the fine cell's side. */
HS_HD double hs_mg_prolong_at(const hs_mg_launch *L, int64_t i, int64_t j, int64_t k)
{
    const int hx = L->halve[0], hy = L->ndim > 1 && L->halve[1], hz = L->ndim > 2 && L->halve[2];
    int64_t sx, sy, sz;
    const int64_t px = hs_mg_parent(hx, i, L->off_f[0], L->off_c[0], &sx);
    const int64_t py = hs_mg_parent(hy, j, L->off_f[1], L->off_c[1], &sy);
    const int64_t pz = hs_mg_parent(hz, k, L->off_f[2], L->off_c[2], &sz);
    const int64_t nx = hx ? 2 : 1, ny = hy ? 2 : 1, nz = hz ? 2 : 1;
    double s = 0.0;
    for (int64_t c = 0; c < nz; c++)
        for (int64_t b = 0; b < ny; b++) {
            double row = 0.0;
            for (int64_t a = 0; a < nx; a++)
                row += (hx ? (a ? 0.25 : 0.75) : 1.0) * L->uc[hs_mg_at(&L->lc, px + a * sx, py + b * sy, pz + c * sz)];
            s += (hy ? (b ? 0.25 : 0.75) : 1.0) * (hz ? (c ? 0.25 : 0.75) : 1.0) * row;
        }
    return s;
}

/* The operations of hs_mg_op at local cell (i, j, k) (q: its index in the contiguous arrays). */
HS_HD int64_t hs_mg_q(const hs_mg_launch *L, int64_t i, int64_t j, int64_t k) { return (k * L->n[1] + j) * L->n[0] + i; }

HS_HD void hs_mg_cheb_at(const hs_mg_launch *L, int64_t i, int64_t j, int64_t k, int xedge)
{
    const int64_t q = hs_mg_q(L, i, j, k);
    double dg;
    const double Au = hs_mg_stencil(L, i, j, k, xedge, &dg), res = L->b[q] + L->bshift - Au;
    /* c1 = 0 on a first step: d may hold anything then, even NaN.  res (c2 / dg): the factor is
     * the same along a row's inside, so the CPU divides once per row */
    const double dn = (L->c1 != 0.0 ? L->c1 * L->d[q] : 0.0) + (dg > 0.0 ? res * (L->c2 / dg) : 0.0);
    L->d[q] = dn;
    L->u_out[hs_mg_at(&L->lo, i, j, k)] = (L->u ? L->u[hs_mg_at(&L->lu, i, j, k)] : 0.0) + dn;
}

HS_HD void hs_mg_residual_at(const hs_mg_launch *L, int64_t i, int64_t j, int64_t k, int xedge)
{
    double dg;
    L->r[hs_mg_at(&L->lr, i, j, k)] = L->b[hs_mg_q(L, i, j, k)] + L->bshift - hs_mg_stencil(L, i, j, k, xedge, &dg);
}

HS_HD void hs_mg_residual_c_at(const hs_mg_launch *L, int64_t i, int64_t j, int64_t k, int xedge)
{
    double dg;
    const int64_t q = hs_mg_q(L, i, j, k);
    L->out[q] = L->b[q] + L->bshift - hs_mg_stencil(L, i, j, k, xedge, &dg);
}

HS_HD void hs_mg_apply_at(const hs_mg_launch *L, int64_t i, int64_t j, int64_t k, int xedge)
{
    double dg;
    L->out[hs_mg_q(L, i, j, k)] = L->scale * hs_mg_stencil(L, i, j, k, xedge, &dg);
}

HS_HD void hs_mg_prolong_store_at(const hs_mg_launch *L, int64_t i, int64_t j, int64_t k)
{
    const int64_t P = hs_mg_at(&L->lo, i, j, k);
    const double v = hs_mg_prolong_at(L, i, j, k);
    L->u_out[P] = L->accumulate ? L->u_out[P] + v : v;
}

/* The launch's operation at local cell (i, j, k) (the GPU's one kernel; the CPU loops per operation). */
HS_HD void hs_mg_cell(const hs_mg_launch *L, int64_t i, int64_t j, int64_t k)
{
    switch (L->op) {
    case HS_MG_CHEB: hs_mg_cheb_at(L, i, j, k, 1); break;
    case HS_MG_RESIDUAL: hs_mg_residual_at(L, i, j, k, 1); break;
    case HS_MG_RESIDUAL_C: hs_mg_residual_c_at(L, i, j, k, 1); break;
    case HS_MG_APPLY: hs_mg_apply_at(L, i, j, k, 1); break;
    case HS_MG_RESTRICT: L->out[hs_mg_q(L, i, j, k)] = hs_mg_restrict_at(L, i, j, k); break;
    case HS_MG_PROLONG: hs_mg_prolong_store_at(L, i, j, k); break;
    case HS_MG_STORE: L->out[hs_mg_q(L, i, j, k)] = L->scale * L->u[hs_mg_at(&L->lu, i, j, k)] + L->shift; break;
    case HS_MG_ADD: L->u_out[hs_mg_at(&L->lo, i, j, k)] += L->scale * L->b[hs_mg_q(L, i, j, k)]; break;
    case HS_MG_SHIFT_C: L->out[hs_mg_q(L, i, j, k)] = L->scale * L->b[hs_mg_q(L, i, j, k)] + L->shift; break;
    default: break;
    }
}

#endif
