/* The multigrid family's pointwise operations (stencil, Chebyshev step, transfers), shared verbatim by the CPU and CUDA kernels. */
#ifndef HS_MG_POINT_H
#define HS_MG_POINT_H

#include "kernels/hd.h"
#include "kernels/mg/mg_impl.h"

HS_HD int64_t hs_mg_at(const hs_mg_lay *l, int64_t i, int64_t j, int64_t k) { return l->origin + i + j * l->sy + k * l->sz; }

/* (A u) at local cell (i, j, k) of the launch's level, and A's diagonal there.  The neighbour across
 * a wall is wall * u (ghost = cell for Neumann, -cell for Dirichlet, the face halfway between). */
HS_HD double hs_mg_stencil(const hs_mg_launch *L, int64_t i, int64_t j, int64_t k, double *diag)
{
    const int64_t at[3] = {i, j, k}, stride[3] = {1, L->lu.sy, L->lu.sz};
    const double *u = L->u;
    const int64_t P = hs_mg_at(&L->lu, i, j, k);
    const double c = u ? u[P] : 0.0;
    double s = 0.0, dg = 0.0;
    for (int d = 0; d < L->ndim; d++) {
        const int wl = at[d] == 0 ? L->wall_lo[d] : 0, wh = at[d] == L->n[d] - 1 ? L->wall_hi[d] : 0;
        dg += (2.0 - wl - wh) * L->idx2[d];
        if (!u) continue;
        const double lo = wl ? wl * c : u[P - stride[d]], hi = wh ? wh * c : u[P + stride[d]];
        s += (2.0 * c - lo - hi) * L->idx2[d];
    }
    *diag = dg;
    return s;
}

/* Full weighting, the transpose of hs_mg_prolong_at up to the factor 2 per halved dimension:
 * coarse cell (I, J, K) from the fine residual (ghosts filled with the homogeneous rule, which is
 * what makes it the exact transpose at walls). */
HS_HD double hs_mg_restrict_at(const hs_mg_launch *L, int64_t I, int64_t J, int64_t K)
{
    const double w4[4] = {0.125, 0.375, 0.375, 0.125}, w1[4] = {1.0, 0.0, 0.0, 0.0};
    const int64_t at[3] = {I, J, K};
    int64_t first[3], count[3];
    const double *w[3];
    for (int d = 0; d < 3; d++) {
        const int h = d < L->ndim && L->halve[d];
        first[d] = h ? 2 * (L->off_c[d] + at[d]) - 1 - L->off_f[d] : at[d] + L->off_c[d] - L->off_f[d];
        count[d] = h ? 4 : 1;
        w[d] = h ? w4 : w1;
    }
    double s = 0.0;
    for (int64_t c = 0; c < count[2]; c++)
        for (int64_t b = 0; b < count[1]; b++) {
            double row = 0.0;
            for (int64_t a = 0; a < count[0]; a++)
                row += w[0][a] * L->r[hs_mg_at(&L->lr, first[0] + a, first[1] + b, first[2] + c)];
            s += w[1][b] * w[2][c] * row;
        }
    return s;
}

/* Cell-centred linear interpolation of the coarse correction to fine cell (i, j, k): per halved
 * dimension 3/4 of the parent and 1/4 of the parent's neighbour on the fine cell's side. */
HS_HD double hs_mg_prolong_at(const hs_mg_launch *L, int64_t i, int64_t j, int64_t k)
{
    const int64_t at[3] = {i, j, k};
    int64_t first[3], step[3], count[3];
    double w0[3], w1[3];
    for (int d = 0; d < 3; d++) {
        const int h = d < L->ndim && L->halve[d];
        if (h) {
            const int64_t g = L->off_f[d] + at[d], parent = g >> 1;
            first[d] = parent - L->off_c[d];
            step[d] = (g & 1) ? 1 : -1;
            count[d] = 2, w0[d] = 0.75, w1[d] = 0.25;
        } else {
            first[d] = at[d] + L->off_f[d] - L->off_c[d];
            step[d] = 0, count[d] = 1, w0[d] = 1.0, w1[d] = 0.0;
        }
    }
    double s = 0.0;
    for (int64_t c = 0; c < count[2]; c++)
        for (int64_t b = 0; b < count[1]; b++) {
            const double wbc = (b ? w1[1] : w0[1]) * (c ? w1[2] : w0[2]);
            double row = 0.0;
            for (int64_t a = 0; a < count[0]; a++)
                row += (a ? w1[0] : w0[0]) *
                       L->uc[hs_mg_at(&L->lc, first[0] + a * step[0], first[1] + b * step[1], first[2] + c * step[2])];
            s += wbc * row;
        }
    return s;
}

/* The launch's operation at local cell (i, j, k) (q its index in the contiguous arrays). */
HS_HD void hs_mg_cell(const hs_mg_launch *L, int64_t i, int64_t j, int64_t k)
{
    const int64_t q = (k * L->n[1] + j) * L->n[0] + i;
    double dg, Au, res;
    switch (L->op) {
    case HS_MG_CHEB: {
        Au = hs_mg_stencil(L, i, j, k, &dg);
        res = L->b[q] + L->bshift - Au;
        /* c1 = 0 on a first step: d may hold anything then, even NaN */
        const double dn = (L->c1 != 0.0 ? L->c1 * L->d[q] : 0.0) + (dg > 0.0 ? L->c2 * res / dg : 0.0);
        L->d[q] = dn;
        L->u_out[hs_mg_at(&L->lo, i, j, k)] = (L->u ? L->u[hs_mg_at(&L->lu, i, j, k)] : 0.0) + dn;
        break;
    }
    case HS_MG_RESIDUAL:
        Au = hs_mg_stencil(L, i, j, k, &dg);
        L->r[hs_mg_at(&L->lr, i, j, k)] = L->b[q] + L->bshift - Au;
        break;
    case HS_MG_RESIDUAL_C:
        Au = hs_mg_stencil(L, i, j, k, &dg);
        L->out[q] = L->b[q] + L->bshift - Au;
        break;
    case HS_MG_APPLY: L->out[q] = L->scale * hs_mg_stencil(L, i, j, k, &dg); break;
    case HS_MG_RESTRICT: L->out[q] = hs_mg_restrict_at(L, i, j, k); break;
    case HS_MG_PROLONG: {
        const int64_t P = hs_mg_at(&L->lo, i, j, k);
        const double v = hs_mg_prolong_at(L, i, j, k);
        L->u_out[P] = L->accumulate ? L->u_out[P] + v : v;
        break;
    }
    case HS_MG_STORE: L->out[q] = L->scale * L->u[hs_mg_at(&L->lu, i, j, k)] + L->shift; break;
    case HS_MG_ADD: L->u_out[hs_mg_at(&L->lo, i, j, k)] += L->scale * L->b[q]; break;
    case HS_MG_SHIFT_C: L->out[q] = L->scale * L->b[q] + L->shift; break;
    default: break;
    }
}

#endif
