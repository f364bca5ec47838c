/* The shallow-water model's pointwise operators on the C-grid (Arakawa & Lamb 1981), shared verbatim by the CPU and CUDA kernels. */
#ifndef HS_SW_POINT_H
#define HS_SW_POINT_H

#include "kernels/hd.h"
#include "solvers/cfd/sw_impl.h"

/*
 * Grid.  Cell (i, j) holds h; u(i, j) sits on its low x-face, v(i, j) on its low y-face, and the
 * corner (i, j) (potential vorticity q) at its low-left corner.  Equations, vector-invariant form:
 *     u_t - q V^ = -d_x B,   v_t + q U^ = -d_y B,   h_t + d_x U + d_y V = 0,
 * U = h u, V = h v (mass fluxes, h averaged to the face), q = (f + zeta) / h_q (h_q the mean of the
 * corner's four cells), B = K + g (h + b), K = (u^2 + u^2 + v^2 + v^2) / 4 over the cell's faces.
 * The q V^ and q U^ terms are Arakawa & Lamb's (1981): each pair of faces of a cell is weighted by
 * a mix of the cell's four corner q (alpha for the pairs (W, N) and (E, S), beta for (E, N) and
 * (W, S)), plus the epsilon and phi terms that couple the two faces across a cell.  With the
 * aspect factors dy/dx and dx/dy on epsilon and phi (1 on a square grid, as in the paper) the
 * semi-discrete system conserves mass, energy sum(h K + g h (h/2 + b)) dx dy and potential
 * enstrophy sum(h_q q^2 / 2) dx dy exactly on a doubly periodic grid; with walls, mass and energy.
 */

HS_HD int64_t hs_sw_at(const hs_sw_lay *l, int64_t i, int64_t j) { return l->origin + i + j * l->sy; }

/* The Coriolis parameter on corner row j (y = global row * dy). */
HS_HD double hs_sw_f(const hs_sw_launch *L, int64_t j) { return L->f0 + L->beta * ((double)(L->offset[1] + j) * L->dy - L->yc); }

/* Relative vorticity at corner (i, j). */
HS_HD double hs_sw_zeta(const hs_sw_launch *L, int64_t i, int64_t j)
{
    const int64_t U = hs_sw_at(&L->lu, i, j), V = hs_sw_at(&L->lv, i, j);
    return (L->v[V] - L->v[V - 1]) * L->idx - (L->u[U] - L->u[U - L->lu.sy]) * L->idy;
}

/* Layer depth at corner (i, j): the mean of its four cells. */
HS_HD double hs_sw_hq(const hs_sw_launch *L, int64_t i, int64_t j)
{
    const int64_t H = hs_sw_at(&L->lh, i, j), sy = L->lh.sy;
    return 0.25 * ((L->h[H - 1 - sy] + L->h[H - sy]) + (L->h[H - 1] + L->h[H]));
}

/* Potential vorticity (f + zeta) / h_q at corner (i, j). */
HS_HD double hs_sw_q(const hs_sw_launch *L, int64_t i, int64_t j) { return (hs_sw_zeta(L, i, j) + hs_sw_f(L, j)) / hs_sw_hq(L, i, j); }

/* Mass fluxes at the x-face u(i, j) and the y-face v(i, j). */
HS_HD double hs_sw_U(const hs_sw_launch *L, int64_t i, int64_t j)
{
    const int64_t H = hs_sw_at(&L->lh, i, j);
    return 0.5 * (L->h[H - 1] + L->h[H]) * L->u[hs_sw_at(&L->lu, i, j)];
}
HS_HD double hs_sw_V(const hs_sw_launch *L, int64_t i, int64_t j)
{
    const int64_t H = hs_sw_at(&L->lh, i, j);
    return 0.5 * (L->h[H - L->lh.sy] + L->h[H]) * L->v[hs_sw_at(&L->lv, i, j)];
}

/* Kinetic energy per unit mass at the centre of cell (i, j), the mean of its faces' squares. */
HS_HD double hs_sw_K(const hs_sw_launch *L, int64_t i, int64_t j)
{
    const int64_t U = hs_sw_at(&L->lu, i, j), V = hs_sw_at(&L->lv, i, j);
    const double u0 = L->u[U], u1 = L->u[U + 1], v0 = L->v[V], v1 = L->v[V + L->lv.sy];
    return 0.25 * ((u0 * u0 + u1 * u1) + (v0 * v0 + v1 * v1));
}

/* Bernoulli function K + g (h + b) at cell (i, j). */
HS_HD double hs_sw_B(const hs_sw_launch *L, int64_t i, int64_t j)
{
    const int64_t H = hs_sw_at(&L->lh, i, j);
    return hs_sw_K(L, i, j) + L->g * (L->h[H] + L->b[H]);
}

/* The 5-point Laplacian of a velocity field at its point P (l its layout). */
HS_HD double hs_sw_lap(const hs_sw_launch *L, const double *w, const hs_sw_lay *l, int64_t P)
{
    const double idx2 = L->idx * L->idx, idy2 = L->idy * L->idy;
    return (w[P - 1] - 2.0 * w[P] + w[P + 1]) * idx2 + (w[P - l->sy] - 2.0 * w[P] + w[P + l->sy]) * idy2;
}

/* nu lap w - nu4 lap lap w of a velocity field from its Laplacian at the point (c) and at the
 * point's four neighbours (w, e, s, n). */
HS_HD double hs_sw_friction_of(const hs_sw_launch *L, double c, double w, double e, double s, double n)
{
    double r = 0.0;
    if (L->nu != 0.0) r += L->nu * c;
    if (L->nu4 != 0.0) {
        const double idx2 = L->idx * L->idx, idy2 = L->idy * L->idy;
        r -= L->nu4 * ((w - 2.0 * c + e) * idx2 + (s - 2.0 * c + n) * idy2);
    }
    return r;
}

/* nu lap w - nu4 lap lap w at point P of a velocity field. */
HS_HD double hs_sw_friction(const hs_sw_launch *L, const double *w, const hs_sw_lay *l, int64_t P)
{
    const double c = hs_sw_lap(L, w, l, P);
    if (L->nu4 == 0.0) return hs_sw_friction_of(L, c, 0.0, 0.0, 0.0, 0.0);
    return hs_sw_friction_of(L, c, hs_sw_lap(L, w, l, P - 1), hs_sw_lap(L, w, l, P + 1), hs_sw_lap(L, w, l, P - l->sy),
                             hs_sw_lap(L, w, l, P + l->sy));
}

/* The Arakawa-Lamb weights of a cell from its corners NE, NW, SW, SE. */
HS_HD double hs_sw_alpha(double ne, double nw, double sw, double se) { return (2.0 * ne + nw + 2.0 * sw + se) * (1.0 / 24.0); }
HS_HD double hs_sw_beta(double ne, double nw, double sw, double se) { return (ne + 2.0 * nw + sw + 2.0 * se) * (1.0 / 24.0); }

/* What the tendencies of cell (i, j) combine: the eight corners' q ((i-1..i+1, j..j+1) and
 * (i..i+1, j-1); m stands for -1), the mass fluxes and Bernoulli values around the cell, and the
 * friction terms of u(i, j) and v(i, j).  The CPU evaluates them point by point
 * (hs_sw_tendency); the CUDA kernel evaluates each once per tile in shared memory and gathers them. */
typedef struct hs_sw_near {
    double q00, q10, q01, q11, qm0, qm1, q0m, q1m;
    double U00, U10, Um0, U0m, U1m;
    double V00, V01, Vm0, Vm1, V0m;
    double B00, Bm0, B0m;
    double fu, fv;
} hs_sw_near;

/* The tendencies of h(i, j), u(i, j) and v(i, j) on row j from the values around the cell. */
HS_HD void hs_sw_combine(const hs_sw_launch *L, int64_t j, const hs_sw_near *n, double *th, double *tu, double *tv)
{
    /* this cell (the east cell of u, the north cell of v), its west and its south neighbours */
    const double aC = hs_sw_alpha(n->q11, n->q01, n->q00, n->q10), bC = hs_sw_beta(n->q11, n->q01, n->q00, n->q10);
    const double eC = L->rx * (n->q11 + n->q01 - n->q00 - n->q10) * (1.0 / 24.0), pC = L->ry * (-n->q11 + n->q01 + n->q00 - n->q10) * (1.0 / 24.0);
    const double aW = hs_sw_alpha(n->q01, n->qm1, n->qm0, n->q00), bW = hs_sw_beta(n->q01, n->qm1, n->qm0, n->q00);
    const double eW = L->rx * (n->q01 + n->qm1 - n->qm0 - n->q00) * (1.0 / 24.0);
    const double aS = hs_sw_alpha(n->q10, n->q00, n->q0m, n->q1m), bS = hs_sw_beta(n->q10, n->q00, n->q0m, n->q1m);
    const double pS = L->ry * (-n->q10 + n->q00 + n->q0m - n->q1m) * (1.0 / 24.0);
    *tu = (aC * n->V01 + bW * n->Vm1) + (aW * n->Vm0 + bC * n->V00) - eC * n->U10 + eW * n->Um0 - (n->B00 - n->Bm0) * L->idx;
    *tv = -(bC * n->U00 + aC * n->U10) - (aS * n->U0m + bS * n->U1m) - pC * n->V01 + pS * n->V0m - (n->B00 - n->B0m) * L->idy;
    *th = -((n->U10 - n->U00) * L->idx + (n->V01 - n->V00) * L->idy);
    if (L->nu != 0.0 || L->nu4 != 0.0) {
        *tu += n->fu;
        *tv += n->fv;
    }
    /* the wall itself (v = 0 at y = 0; the top wall's faces lie outside the cells' range) */
    if (L->walls && L->offset[1] + j == 0) *tv = 0.0;
}

/* The tendencies of h(i, j), u(i, j) and v(i, j) from the stage input (ghosts valid). */
HS_HD void hs_sw_tendency(const hs_sw_launch *L, int64_t i, int64_t j, double *th, double *tu, double *tv)
{
    hs_sw_near n;
    n.q00 = hs_sw_q(L, i, j), n.q10 = hs_sw_q(L, i + 1, j), n.q01 = hs_sw_q(L, i, j + 1), n.q11 = hs_sw_q(L, i + 1, j + 1);
    n.qm0 = hs_sw_q(L, i - 1, j), n.qm1 = hs_sw_q(L, i - 1, j + 1), n.q0m = hs_sw_q(L, i, j - 1), n.q1m = hs_sw_q(L, i + 1, j - 1);
    n.U00 = hs_sw_U(L, i, j), n.U10 = hs_sw_U(L, i + 1, j), n.Um0 = hs_sw_U(L, i - 1, j);
    n.U0m = hs_sw_U(L, i, j - 1), n.U1m = hs_sw_U(L, i + 1, j - 1);
    n.V00 = hs_sw_V(L, i, j), n.V01 = hs_sw_V(L, i, j + 1), n.Vm0 = hs_sw_V(L, i - 1, j);
    n.Vm1 = hs_sw_V(L, i - 1, j + 1), n.V0m = hs_sw_V(L, i, j - 1);
    n.B00 = hs_sw_B(L, i, j), n.Bm0 = hs_sw_B(L, i - 1, j), n.B0m = hs_sw_B(L, i, j - 1);
    n.fu = n.fv = 0.0;
    if (L->nu != 0.0 || L->nu4 != 0.0) {
        n.fu = hs_sw_friction(L, L->u, &L->lu, hs_sw_at(&L->lu, i, j));
        n.fv = hs_sw_friction(L, L->v, &L->lv, hs_sw_at(&L->lv, i, j));
    }
    hs_sw_combine(L, j, &n, th, tu, tv);
}

/* One RK4 stage of one value at point p with tendency k (see hs_sw_stage_point). */
HS_HD void hs_sw_rk4(int stage, double dt, const double *y0, double *acc, double *out, int64_t p, double k)
{
    if (stage == 0) {
        acc[p] = k;
        out[p] = y0[p] + (0.5 * dt) * k;
    } else if (stage == 3) {
        out[p] = y0[p] + (dt * (1.0 / 6.0)) * (acc[p] + k);
    } else {
        acc[p] += 2.0 * k;
        out[p] = y0[p] + (stage == 1 ? 0.5 * dt : dt) * k;
    }
}

/* One RK4 stage at cell (i, j): with k the tendency of the stage input,
 *   stage 0: acc = k,        out = y0 + dt/2 k
 *   stage 1: acc += 2 k,     out = y0 + dt/2 k
 *   stage 2: acc += 2 k,     out = y0 + dt k
 *   stage 3: y0 = y0 + dt/6 (acc + k)   (in place: each point reads only its own y0). */
HS_HD void hs_sw_stage_update(const hs_sw_launch *L, int64_t i, int64_t j, double kh, double ku, double kv)
{
    hs_sw_rk4(L->stage, L->dt, L->h0, L->ah, L->oh, hs_sw_at(&L->lh, i, j), kh);
    hs_sw_rk4(L->stage, L->dt, L->u0, L->au, L->ou, hs_sw_at(&L->lu, i, j), ku);
    hs_sw_rk4(L->stage, L->dt, L->v0, L->av, L->ov, hs_sw_at(&L->lv, i, j), kv);
}

/* One RK4 stage at cell (i, j), its tendencies evaluated point by point. */
HS_HD void hs_sw_stage_point(const hs_sw_launch *L, int64_t i, int64_t j)
{
    double kh, ku, kv;
    hs_sw_tendency(L, i, j, &kh, &ku, &kv);
    hs_sw_stage_update(L, i, j, kh, ku, kv);
}

/* One point of the cell-centred diagnostics (contiguous output). */
HS_HD void hs_sw_cell_op(const hs_sw_launch *L, int64_t i, int64_t j)
{
    const int64_t o = j * L->local[0] + i;
    switch (L->op) {
    case HS_SW_CENTRE_U: {
        const int64_t U = hs_sw_at(&L->lu, i, j);
        L->out[o] = 0.5 * (L->u[U] + L->u[U + 1]);
        break;
    }
    case HS_SW_CENTRE_V: {
        const int64_t V = hs_sw_at(&L->lv, i, j);
        L->out[o] = 0.5 * (L->v[V] + L->v[V + L->lv.sy]);
        break;
    }
    case HS_SW_VORTICITY:
        L->out[o] = 0.25 * ((hs_sw_zeta(L, i, j) + hs_sw_zeta(L, i + 1, j)) + (hs_sw_zeta(L, i, j + 1) + hs_sw_zeta(L, i + 1, j + 1)));
        break;
    case HS_SW_ENERGY: {
        const int64_t H = hs_sw_at(&L->lh, i, j);
        const double h = L->h[H];
        L->out[o] = h * hs_sw_K(L, i, j) + L->g * h * (0.5 * h + L->b[H]);
        break;
    }
    case HS_SW_ENSTROPHY: {
        /* corners on a wall stand for half a cell each */
        const int64_t jg = L->offset[1] + j;
        double q = hs_sw_q(L, i, j), z = 0.5 * hs_sw_hq(L, i, j) * q * q;
        if (L->walls && jg == 0) z *= 0.5;
        if (L->walls && jg + 1 == L->ny) {
            q = hs_sw_q(L, i, j + 1);
            z += 0.25 * hs_sw_hq(L, i, j + 1) * q * q;
        }
        L->out[o] = z;
        break;
    }
    default: break;
    }
}

#endif
