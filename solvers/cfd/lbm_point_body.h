/* The lattice Boltzmann pointwise operators in one arithmetic type and one index type, included by lbm_point.h (LBM_REAL double or float, LBM_IDX int64_t or, for the CUDA step kernels on arrays under 2^31 elements, int32_t; LBM_FN names them). */

/* One stored population as LBM_REAL (f16: unscaled). */
HS_LBM_FN LBM_REAL LBM_FN(ld)(const hs_lbm_launch *L, const int S, int q, LBM_IDX e)
{
    if (S == HS_LBM_F64) return (LBM_REAL)((const double *)L->f[q])[e];
    if (S == HS_LBM_F32) return (LBM_REAL)((const float *)L->f[q])[e];
    return (LBM_REAL)(HS_LBM_H2F(((const uint16_t *)L->f[q])[e]) * (float)LBM_K(L, inv_scale));
}

HS_LBM_FN void LBM_FN(st)(const hs_lbm_launch *L, const int S, int q, LBM_IDX e, LBM_REAL v)
{
    if (S == HS_LBM_F64) ((double *)L->f[q])[e] = (double)v;
    else if (S == HS_LBM_F32) ((float *)L->f[q])[e] = (float)v;
    else ((uint16_t *)L->f[q])[e] = HS_LBM_F2H((float)v * (float)LBM_K(L, scale));
}

/* The populations cell element e reads in a step of parity odd when all its neighbours are fluid:
 * F_q[e] (even), F_opp(q)[e - c_q] (odd).  They do not depend on the cell's flags, so a kernel can
 * issue them together with the flag loads instead of after them; every cell of a step's box has
 * these elements inside the arrays (the population halo is wider than a step's reach). */
HS_LBM_FN void LBM_FN(load)(const hs_lbm_launch *L, LBM_IDX e, const int Q, const int S, int odd, LBM_REAL *f)
{
    f[0] = LBM_FN(ld)(L, S, 0, e);
    HS_LBM_UNROLL
    for (int q = 1; q < Q; q++) f[q] = odd ? LBM_FN(ld)(L, S, hs_lbm_opp(q), e - (LBM_IDX)L->off[q]) : LBM_FN(ld)(L, S, q, e);
}

/* Completes the incoming (shifted) populations f[0..Q) that LBM_FN(load) read for fluid cell
 * (i, j, k), element e, flag element fe: where the neighbour a population comes from is not fluid
 * (near: the cell has such a neighbour) it is replaced by the boundary's value; *outl gets a bit per
 * population that came from an outlet (its anti-bounce-back still lacks the velocity term, added by
 * LBM_FN(moments)). */
HS_LBM_FN void LBM_FN(boundary_in)(const hs_lbm_launch *L, LBM_IDX i, LBM_IDX j, LBM_IDX k, LBM_IDX e, LBM_IDX fe, int near, const int Q,
                               const int S, int odd, LBM_REAL *f, unsigned *outl)
{
    *outl = 0;
    if (!near) return;
    HS_LBM_UNROLL
    for (int q = 1; q < Q; q++) {
        const int kind = L->flag[fe - (LBM_IDX)L->foff[q]] & HS_LBM_KIND;
        if (kind == HS_LBM_FLUID) continue;
        /* this cell's own post-collision f_opp(q) of the previous step (the even step loaded it already) */
        LBM_REAL raw = odd ? LBM_FN(ld)(L, S, q, e) : f[q];
        if (kind == HS_LBM_MOVING) {
            double cu = hs_lbm_c(Q, 0, q) * L->wall_u[0] + hs_lbm_c(Q, 1, q) * L->wall_u[1] + hs_lbm_c(Q, 2, q) * L->wall_u[2];
            raw += (LBM_REAL)(6.0 * hs_lbm_w(Q, q) * cu);
        } else if (kind == HS_LBM_INLET) {
            double cu = hs_lbm_c(Q, L->inlet_dim, q) * hs_lbm_inlet_u(L, i, j, k, q);
            raw += (LBM_REAL)(6.0 * hs_lbm_w(Q, q) * cu);
        } else if (kind == HS_LBM_OUTLET) {
            raw = -raw;
            *outl |= 1u << q;
        }
        f[q] = raw;
    }
}

/* Density deviation rho - 1 (the sum of the shifted populations, kept apart from the 1 so that fp32
 * loses none of it) and velocity (with half the body force) of incoming populations f; completes the
 * outlet populations' anti-bounce-back 2 w (4.5 (c.u)^2 - 1.5 u^2) with the velocity they imply first. */
HS_LBM_FN void LBM_FN(moments)(const hs_lbm_launch *L, const int Q, LBM_REAL *f, unsigned outl, LBM_REAL *drho, LBM_REAL *u)
{
    for (int pass = 0; pass < 2; pass++) {
        LBM_REAL d = 0, j0 = 0, j1 = 0, j2 = 0;
        HS_LBM_UNROLL
        for (int q = 0; q < Q; q++) {
            d += f[q];
            j0 += (LBM_REAL)hs_lbm_c(Q, 0, q) * f[q];
            j1 += (LBM_REAL)hs_lbm_c(Q, 1, q) * f[q];
            if (Q == 19) j2 += (LBM_REAL)hs_lbm_c(Q, 2, q) * f[q];
        }
        *drho = d;
        const LBM_REAL ir = (LBM_REAL)1 / ((LBM_REAL)1 + d);
        u[0] = (j0 + LBM_HALF_FORCE(L, 0)) * ir;
        u[1] = (j1 + LBM_HALF_FORCE(L, 1)) * ir;
        u[2] = Q == 19 ? (j2 + LBM_HALF_FORCE(L, 2)) * ir : (LBM_REAL)0;
        if (!outl || pass) break;
        const LBM_REAL u2 = u[0] * u[0] + u[1] * u[1] + u[2] * u[2];
        HS_LBM_UNROLL
        for (int q = 1; q < Q; q++)
            if (outl & (1u << q)) {
                LBM_REAL cu = (LBM_REAL)hs_lbm_c(Q, 0, q) * u[0] + (LBM_REAL)hs_lbm_c(Q, 1, q) * u[1] + (LBM_REAL)hs_lbm_c(Q, 2, q) * u[2];
                f[q] += (LBM_REAL)(2.0 * hs_lbm_w(Q, q)) * ((LBM_REAL)4.5 * cu * cu - (LBM_REAL)1.5 * u2);
            }
    }
}

/* Two-relaxation-time collision with Guo's forcing, pair by pair (BGK: om_m = om_p), in place. */
HS_LBM_FN void LBM_FN(collide)(const hs_lbm_launch *L, const int Q, LBM_REAL *f, LBM_REAL drho, const LBM_REAL *u)
{
    const LBM_REAL op = (LBM_REAL)LBM_K(L, om_p), om = (LBM_REAL)LBM_K(L, om_m);
    const LBM_REAL hp = (LBM_REAL)1 - (LBM_REAL)0.5 * op, hm = (LBM_REAL)1 - (LBM_REAL)0.5 * om;
    const LBM_REAL F0 = (LBM_REAL)LBM_K(L, force[0]), F1 = (LBM_REAL)LBM_K(L, force[1]), F2 = (LBM_REAL)LBM_K(L, force[2]);
    const LBM_REAL rho = (LBM_REAL)1 + drho;
    const LBM_REAL u2 = u[0] * u[0] + u[1] * u[1] + u[2] * u[2], uF = u[0] * F0 + u[1] * F1 + u[2] * F2;
    const LBM_REAL w0 = (LBM_REAL)hs_lbm_w(Q, 0);
    f[0] = f[0] - op * (f[0] - w0 * (drho - (LBM_REAL)1.5 * rho * u2)) - hp * (LBM_REAL)3 * w0 * uF;
    HS_LBM_UNROLL
    for (int a = 1; a < Q; a += 2) {
        const LBM_REAL w = (LBM_REAL)hs_lbm_w(Q, a);
        const LBM_REAL c0 = (LBM_REAL)hs_lbm_c(Q, 0, a), c1 = (LBM_REAL)hs_lbm_c(Q, 1, a), c2 = (LBM_REAL)hs_lbm_c(Q, 2, a);
        const LBM_REAL cu = c0 * u[0] + c1 * u[1] + c2 * u[2], cF = c0 * F0 + c1 * F1 + c2 * F2;
        const LBM_REAL fp = (LBM_REAL)0.5 * (f[a] + f[a + 1]), fm = (LBM_REAL)0.5 * (f[a] - f[a + 1]);
        const LBM_REAL ep = w * (drho + rho * ((LBM_REAL)4.5 * cu * cu - (LBM_REAL)1.5 * u2)), em = w * (LBM_REAL)3 * rho * cu;
        const LBM_REAL np = fp - op * (fp - ep) + hp * w * ((LBM_REAL)9 * cu * cF - (LBM_REAL)3 * uF);
        const LBM_REAL nm = fm - om * (fm - em) + hm * w * (LBM_REAL)3 * cF;
        f[a] = np + nm;
        f[a + 1] = np - nm;
    }
}

/* One fused stream-collide update of fluid cell (i, j, k), element e, flag element fe, in a step of
 * parity odd (AA pattern), from the populations LBM_FN(load) read into f; near: the cell has a
 * non-fluid neighbour (0 as a constant compiles the bulk path: no neighbour flags, no boundary
 * branches). */
HS_LBM_FN void LBM_FN(cell_loaded)(const hs_lbm_launch *L, LBM_IDX i, LBM_IDX j, LBM_IDX k, LBM_IDX e, LBM_IDX fe, const int near,
                               const int Q, const int S, const int odd, LBM_REAL *f)
{
    LBM_REAL drho, u[3];
    unsigned outl;
    LBM_FN(boundary_in)(L, i, j, k, e, fe, near, Q, S, odd, f, &outl);
    LBM_FN(moments)(L, Q, f, outl, &drho, u);
    LBM_FN(collide)(L, Q, f, drho, u);
    if (!odd) {
        HS_LBM_UNROLL
        for (int q = 0; q < Q; q++) LBM_FN(st)(L, S, hs_lbm_opp(q), e, f[q]);
        return;
    }
    LBM_FN(st)(L, S, 0, e, f[0]);
    HS_LBM_UNROLL
    for (int q = 1; q < Q; q++) {
        if (!near || (L->flag[fe + (LBM_IDX)L->foff[q]] & HS_LBM_KIND) == HS_LBM_FLUID) LBM_FN(st)(L, S, q, e + (LBM_IDX)L->off[q], f[q]);
        else LBM_FN(st)(L, S, hs_lbm_opp(q), e, f[q]); /* back to this cell: next step's bounce-back */
    }
}

/* One fused stream-collide update of cell (i, j, k) in a step of parity odd (AA pattern). */
HS_LBM_FN void LBM_FN(cell)(const hs_lbm_launch *L, int64_t i, int64_t j, int64_t k, const int Q, const int S, const int odd)
{
    const int64_t fe = L->forigin + i + j * L->fsy + k * L->fsz;
    const int fl = L->flag[fe];
    if ((fl & HS_LBM_KIND) != HS_LBM_FLUID) return;
    const int64_t e = L->origin + i + j * L->sy + k * L->sz;
    LBM_REAL f[HS_LBM_QMAX];
    LBM_FN(load)(L, e, Q, S, odd, f);
    LBM_FN(cell_loaded)(L, i, j, k, e, fe, fl & HS_LBM_NEAR, Q, S, odd, f);
}

/* Density and velocity of cell (i, j, k) as the next step (parity L->odd) sees them, into the
 * contiguous outputs; non-fluid cells get rho = 1, u = 0. */
HS_LBM_FN void LBM_FN(moments_cell)(const hs_lbm_launch *L, int64_t i, int64_t j, int64_t k, const int Q, const int S)
{
    const int64_t o = i + L->local[0] * (j + L->local[1] * k);
    const int64_t fe = L->forigin + i + j * L->fsy + k * L->fsz;
    const int fl = L->flag[fe];
    LBM_REAL f[HS_LBM_QMAX] = {0}, drho = 0, u[3] = {0, 0, 0};
    if ((fl & HS_LBM_KIND) == HS_LBM_FLUID) {
        unsigned outl;
        const int64_t e = L->origin + i + j * L->sy + k * L->sz;
        LBM_FN(load)(L, e, Q, S, L->odd, f);
        LBM_FN(boundary_in)(L, i, j, k, e, fe, fl & HS_LBM_NEAR, Q, S, L->odd, f, &outl);
        LBM_FN(moments)(L, Q, f, outl, &drho, u);
    }
    L->rho[o] = 1.0 + (double)drho;
    for (int a = 0; a < 3; a++) L->u[a][o] = (double)u[a];
}

/* Link l of an obstacle after a step of parity L->odd: Bouzidi's interpolated bounce-back replaces
 * the half-way value the step left for the next one, and the link's momentum exchange
 * c_i (f_i* + f_opp(i)) is recorded. */
HS_LBM_FN void LBM_FN(link)(const hs_lbm_launch *L, int64_t l, const int Q, const int S)
{
    const int64_t e = L->link_cell[l];
    const int i = L->link_dir[l], o = hs_lbm_opp(i);
    const double qd = L->link_q[l];
    const LBM_REAL A = LBM_FN(ld)(L, S, o, e); /* f_i*(x): post-collision, toward the wall */
    LBM_REAL nw = A;
    if (qd > 0.5) {
        const LBM_REAL B = L->odd ? LBM_FN(ld)(L, S, o, e - L->off[i]) : LBM_FN(ld)(L, S, i, e); /* f_opp(i)*(x) */
        nw = (LBM_REAL)(0.5 / qd) * A + (LBM_REAL)((qd - 0.5) / qd) * B;
    } else if (qd < 0.5) {
        const LBM_REAL C = L->odd ? LBM_FN(ld)(L, S, i, e) : LBM_FN(ld)(L, S, o, e - L->off[i]); /* f_i*(x - c_i) */
        nw = (LBM_REAL)(2.0 * qd) * A + (LBM_REAL)(1.0 - 2.0 * qd) * C;
    }
    if (qd != 0.5) LBM_FN(st)(L, S, o, e, nw);
    /* the populations are stored less their rest value w_i: the exchange of the deviations is that
     * of the gauge pressure.  The rest value's share, 2 w_i c_i a link, sums to zero over a body the
     * fluid surrounds and is the lattice's background pressure rho c_s^2 on the exposed faces of one
     * that touches a wall or the inlet (a cylinder on the floor of fluid at rest had Cl = -62.5 at
     * u_lattice 0.1, -250 at 0.05) */
    const double m = (double)A + (double)nw;
    for (int a = 0; a < 3; a++) L->link_force[3 * l + a] = m * hs_lbm_c(Q, a, i);
}
