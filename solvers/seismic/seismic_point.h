/* The seismic solver's pointwise updates, shared verbatim by the CPU and CUDA kernels.  Included once
 * per floating-point type: the includer defines SEIS_T (float or double) and SEIS_FN(name) (the name
 * with a type suffix); R, the stencil radius, is a parameter that the callers pass as a constant so
 * that every loop over it unrolls. */
#include "kernels/hd.h"
#include "solvers/seismic/seismic_impl.h"

#ifndef SEIS_T
#error "define SEIS_T and SEIS_FN before including seismic_point.h"
#endif

/* SEIS_I: the type of the index arithmetic, int64_t unless the includer defines it.  seismic_cuda.cu
 * also includes the file with SEIS_I int32_t (and SEIS_COEF naming the launch's coefficients of
 * SEIS_T), for launches whose every element lies below 2^31 (hs_seis_launch.index32): the 64-bit
 * address arithmetic was most of the CPML and elastic kernels' integer instructions. */
#ifndef SEIS_I
#define SEIS_I int64_t
#define SEIS_I_DEFAULTED
#endif

#define SEIS_F(L, role) ((SEIS_T *)(L)->f[role])
#define SEIS_C(x) ((SEIS_T)(x))
#undef SEIS_K
#ifdef SEIS_COEF
#define SEIS_K(L) (&(L)->SEIS_COEF) /* the coefficients in SEIS_T */
#else
#define SEIS_K(L) (&(L)->SEIS_FN(k))
#endif

/* ---------------------------------------------------------------- differences along one axis */

/* sum_m c[m] (f(+m) + f(-m)) + c[0] f: the centred second difference (c over h^2). */
HS_HD SEIS_T SEIS_FN(seis_d2)(const SEIS_T *f, SEIS_I i, SEIS_I s, const SEIS_T *c, int R)
{
    SEIS_T v = c[0] * f[i];
    for (int m = 1; m <= R; m++) v += c[m] * (f[i + m * s] + f[i - m * s]);
    return v;
}

/* sum_m c[m-1] (f(+m) - f(-m)): the centred first difference. */
HS_HD SEIS_T SEIS_FN(seis_d1)(const SEIS_T *f, SEIS_I i, SEIS_I s, const SEIS_T *c, int R)
{
    SEIS_T v = 0;
    for (int m = 1; m <= R; m++) v += c[m - 1] * (f[i + m * s] - f[i - m * s]);
    return v;
}

/* DP: from the points to the half point i + 1/2: sum_m c[m-1] (f(i+m) - f(i-m+1)). */
HS_HD SEIS_T SEIS_FN(seis_dp)(const SEIS_T *f, SEIS_I i, SEIS_I s, const SEIS_T *c, int R)
{
    SEIS_T v = 0;
    for (int m = 1; m <= R; m++) v += c[m - 1] * (f[i + m * s] - f[i - (m - 1) * s]);
    return v;
}

/* DM: from the half points (i + 1/2 stored at i) to the point i: sum_m c[m-1] (f(i+m-1) - f(i-m)). */
HS_HD SEIS_T SEIS_FN(seis_dm)(const SEIS_T *f, SEIS_I i, SEIS_I s, const SEIS_T *c, int R)
{
    SEIS_T v = 0;
    for (int m = 1; m <= R; m++) v += c[m - 1] * (f[i + (m - 1) * s] - f[i - m * s]);
    return v;
}

/* The centred first difference of a product g(x) f(x) where g is a profile along the axis
 * (prof[pi] at the point): sum_m c[m-1] (g(+m) f(+m) - g(-m) f(-m)). */
HS_HD SEIS_T SEIS_FN(seis_d1_prof)(const SEIS_T *f, SEIS_I i, SEIS_I s, const SEIS_T *prof, SEIS_I pi, const SEIS_T *c,
                                    int R)
{
    SEIS_T v = 0;
    for (int m = 1; m <= R; m++) v += c[m - 1] * (prof[pi + m] * f[i + m * s] - prof[pi - m] * f[i - m * s]);
    return v;
}

/* Whether a CPML profile (a) is nonzero anywhere within R of profile index pi.  The profiles are
 * nonzero exactly on the layers, which run from the model's ends inwards (hs_seis_profiles), so the
 * window meets a layer iff one of its ends lies in it.  The memory variables of a dimension are 0
 * wherever its profile is (they start at 0 and their updates are multiplied by a, or by b, which is 0
 * there too), so the kernels skip them outside this reach. */
HS_HD int SEIS_FN(seis_layer_near)(const SEIS_T *a, SEIS_I pi, int R) { return a[pi - R] != 0 || a[pi + R] != 0; }

/* ---------------------------------------------------------------- acoustic, constant density */

HS_HD SEIS_I SEIS_FN(seis_index)(const hs_seis_launch *L, SEIS_I i, SEIS_I j, SEIS_I k)
{
    return (SEIS_I)L->origin + i + j * (SEIS_I)L->st[1] + k * (SEIS_I)L->st[2];
}

/* The Laplacian sum_d D2_d from the centre value and the pairs pair[d][m-1] = f(+m) + f(-m): the one
 * formula of every constant-density kernel (the GPU's tiled kernel gathers the pairs from shared
 * memory and registers, the others from the field). */
HS_HD SEIS_T SEIS_FN(seis_lap_pairs)(const hs_seis_launch *L, SEIS_T c, const SEIS_T pair[3][4], int R)
{
    SEIS_T v = SEIS_K(L)->c2sum * c;
    for (int d = 0; d < 3; d++) {
        if (d >= L->ndim) break;
        for (int m = 1; m <= R; m++) v += SEIS_K(L)->c2[d][m] * pair[d][m - 1];
    }
    return v;
}

/* The leapfrog update p^{n+1} = 2 p^n - p^{n-1} + w L(p^n). */
HS_HD SEIS_T SEIS_FN(seis_leapfrog)(SEIS_T p, SEIS_T q, SEIS_T w, SEIS_T lap) { return 2 * p - q + w * lap; }

/* The Laplacian sum_d D2_d f at element idx. */
HS_HD SEIS_T SEIS_FN(seis_lap)(const hs_seis_launch *L, const SEIS_T *f, SEIS_I idx, int R)
{
    SEIS_T pair[3][4];
    for (int d = 0; d < 3; d++) {
        if (d >= L->ndim) break;
        const SEIS_I s = L->st[d];
        for (int m = 1; m <= R; m++) pair[d][m - 1] = f[idx + m * s] + f[idx - m * s];
    }
    return SEIS_FN(seis_lap_pairs)(L, f[idx], pair, R);
}

/* Whether local index x of dimension d lies in one of its AC_MARCH ranges. */
HS_HD int SEIS_FN(seis_in_march)(const hs_seis_launch *L, int d, SEIS_I x)
{
    return (x >= (SEIS_I)L->mlo[d][0] && x < (SEIS_I)L->mhi[d][0]) || (x >= (SEIS_I)L->mlo[d][1] && x < (SEIS_I)L->mhi[d][1]);
}

/* The operator of AC_STEP with AC_MARCH's sums C, at a point that a march range holds (m[d]: d's
 * range holds it): seis_ac_pml's sum over dimensions, with C in the place of the first marched
 * dimension's term (it holds every marched dimension's), D2_d P for the others.  Where one range
 * holds the point (the faces of the layers) it is seis_ac_pml's sum bit for bit. */
HS_HD SEIS_T SEIS_FN(seis_march_sum)(const hs_seis_launch *L, const int *m, SEIS_T c, const SEIS_T *lapd)
{
    SEIS_T sum = 0;
    int seen = 0;
    for (int d = 0; d < 3; d++) {
        if (d >= L->ndim) break;
        if (!m[d]) sum += lapd[d];
        else if (!seen) sum += c, seen = 1;
    }
    return sum;
}

HS_HD void SEIS_FN(seis_ac_step)(const hs_seis_launch *L, SEIS_I i, SEIS_I j, SEIS_I k, int R)
{
    const SEIS_I idx = SEIS_FN(seis_index)(L, i, j, k);
    const SEIS_T *P = SEIS_F(L, HS_SEIS_F_P), *C = SEIS_F(L, HS_SEIS_F_C);
    SEIS_T *Q = SEIS_F(L, HS_SEIS_F_Q);
    const int m[3] = {C && SEIS_FN(seis_in_march)(L, 0, i), C && SEIS_FN(seis_in_march)(L, 1, j), C && SEIS_FN(seis_in_march)(L, 2, k)};
    SEIS_T lap;
    if (m[0] || m[1] || m[2]) {
        SEIS_T lapd[3] = {0, 0, 0};
        for (int d = 0; d < 3; d++) {
            if (d >= L->ndim) break;
            if (!m[d]) lapd[d] = SEIS_FN(seis_d2)(P, idx, L->st[d], SEIS_K(L)->c2[d], R);
        }
        lap = SEIS_FN(seis_march_sum)(L, m, C[idx], lapd);
    } else {
        lap = SEIS_FN(seis_lap)(L, P, idx, R);
    }
    Q[idx] = SEIS_FN(seis_leapfrog)(P[idx], Q[idx], SEIS_F(L, HS_SEIS_F_W)[idx], lap);
}

HS_HD void SEIS_FN(seis_ac_psi)(const hs_seis_launch *L, SEIS_I i, SEIS_I j, SEIS_I k, int R)
{
    const SEIS_I idx = SEIS_FN(seis_index)(L, i, j, k), ijk[3] = {i, j, k};
    const SEIS_T *P = SEIS_F(L, HS_SEIS_F_P);
    for (int d = 0; d < 3; d++) {
        if (d >= L->ndim) break;
        const SEIS_I pi = ijk[d] + L->hw;
        const SEIS_T a = ((const SEIS_T *)L->pa[d])[pi], b = ((const SEIS_T *)L->pb[d])[pi];
        if (a == 0) continue; /* outside d's layer PSI_d stays 0: no traffic */
        SEIS_T *psi = SEIS_F(L, HS_SEIS_F_PSI + d);
        psi[idx] = b * psi[idx] + a * SEIS_FN(seis_d1)(P, idx, L->st[d], SEIS_K(L)->c1[d], R);
    }
}

HS_HD void SEIS_FN(seis_ac_pml)(const hs_seis_launch *L, SEIS_I i, SEIS_I j, SEIS_I k, int R)
{
    const SEIS_I idx = SEIS_FN(seis_index)(L, i, j, k), ijk[3] = {i, j, k};
    const SEIS_T *P = SEIS_F(L, HS_SEIS_F_P);
    SEIS_T sum = 0;
    for (int d = 0; d < 3; d++) {
        if (d >= L->ndim) break;
        const SEIS_I pi = ijk[d] + L->hw;
        const SEIS_T *pa = (const SEIS_T *)L->pa[d];
        const SEIS_T a = pa[pi], b = ((const SEIS_T *)L->pb[d])[pi];
        const SEIS_T lap = SEIS_FN(seis_d2)(P, idx, L->st[d], SEIS_K(L)->c2[d], R);
        /* PSI_d and ZETA_d are 0 where d's profile is: read them only where they may not be */
        SEIS_T dpsi = 0, z = 0;
        if (SEIS_FN(seis_layer_near)(pa, pi, R)) dpsi = SEIS_FN(seis_d1)(SEIS_F(L, HS_SEIS_F_PSI + d), idx, L->st[d], SEIS_K(L)->c1[d], R);
        if (a != 0) {
            SEIS_T *zeta = SEIS_F(L, HS_SEIS_F_ZETA + d);
            z = b * zeta[idx] + a * (lap + dpsi);
            zeta[idx] = z;
        }
        sum += lap + dpsi + z;
    }
    SEIS_T *Q = SEIS_F(L, HS_SEIS_F_Q);
    Q[idx] = 2 * P[idx] - Q[idx] + SEIS_F(L, HS_SEIS_F_W)[idx] * sum;
}

/* AC_MARCH's two formulas, shared by the column march below and the GPU's row kernel for d = 0.
 * The new PSI_d at a point with profile (a, b) from P around it (pw[m] = P(point + m), |m| <= R). */
HS_HD SEIS_T SEIS_FN(seis_pml_psi)(SEIS_T a, SEIS_T b, SEIS_T psi_old, const SEIS_T *pw, const SEIS_T *c1, int R)
{
    return b * psi_old + a * SEIS_FN(seis_d1)(pw, 0, 1, c1, R);
}

/* D2_d P + D1_d PSI_d + ZETA_d at a point with profile (a, b) and old ZETA_d zeta, from P and the new
 * PSI_d around it (pw[m], sw[m]; PSI_d's difference only where d's layer is near); the new ZETA_d in
 * *znew (meaningful where a != 0).  The arithmetic and order of seis_ac_pml's term of d. */
HS_HD SEIS_T SEIS_FN(seis_pml_term)(SEIS_T a, SEIS_T b, int near, SEIS_T zeta, SEIS_T *znew, const SEIS_T *pw,
                                     const SEIS_T *sw, const SEIS_T *c1, const SEIS_T *c2, int R)
{
    const SEIS_T lap = SEIS_FN(seis_d2)(pw, 0, 1, c2, R), dpsi = near ? SEIS_FN(seis_d1)(sw, 0, 1, c1, R) : 0;
    SEIS_T z = 0;
    if (a != 0) z = b * zeta + a * (lap + dpsi);
    *znew = z;
    return lap + dpsi + z;
}

/* AC_MARCH: the CPML terms of dimension d (L->dim, passed apart so that the GPU's kernels make it a
 * constant) along one column of points (the column through (ia, ib) in the other two dimensions,
 * ascending in them), for [lo[d], hi[d]) along d, before the step (AC_STEP), with
 * the terms summed over the marched dimensions into C, which AC_STEP takes in the place of their
 * second differences (seis_march_sum):
 *   PSI_d = b_d PSI_d + a_d D1_d P                      (where a_d != 0)
 *   ZETA_d = b_d ZETA_d + a_d (D2_d P + D1_d PSI_d)     (where a_d != 0)
 *   C (+)= D2_d P + D1_d PSI_d + ZETA_d                 (PSI_d's term where d's layer is within R)
 * which is AC_PSI and AC_PML term by term.  The first dimension whose range holds a point writes
 * its C, the others add (dimensions in order).  Deep in the layer ZETA_d nearly cancels D2_d P, so
 * the two must come from the same rounded D2_d P: adding D1_d PSI_d + ZETA_d to a step computed with
 * the plain Laplacian measured 3.0e-6 (H200) and 1.0e-5 (CPU) in the fp32 dot-product test of the
 * adjoint, against 5.6e-7 and 4.2e-7 with the slab passes.  The
 * column keeps P over [g - 2R, g + 2R] and the new PSI_d over [g - R, g + R] in two queues as it
 * marches, so that every value is loaded once and PSI_d is never read back: one pass over the
 * layer instead of two, and without the other dimensions' differences at every layer point.
 * Conditions (hs_seis_boxes): every point with a_d != 0 within R of the range lies in it, and
 * PSI_d needs no exchange; PSI_d is 0 where a_d is, and read from memory in the ghosts. */
HS_HD void SEIS_FN(seis_ac_march)(const hs_seis_launch *L, int d, SEIS_I ia, SEIS_I ib, int R)
{
    const int d1 = d == 0 ? 1 : 0, d2 = d == 2 ? 1 : 2;
    SEIS_I ijk[3] = {0, 0, 0};
    ijk[d1] = ia, ijk[d2] = ib;
    const SEIS_I base = SEIS_FN(seis_index)(L, ijk[0], ijk[1], ijk[2]), s = (SEIS_I)L->st[d];
    const SEIS_I g0 = (SEIS_I)L->lo[d], g1 = (SEIS_I)L->hi[d], nl = (SEIS_I)L->local[d], hw = (SEIS_I)L->hw;
    const SEIS_T *P = SEIS_F(L, HS_SEIS_F_P);
    const SEIS_T *pa = (const SEIS_T *)L->pa[d], *pb = (const SEIS_T *)L->pb[d];
    SEIS_T *psi = SEIS_F(L, HS_SEIS_F_PSI + d), *zeta = SEIS_F(L, HS_SEIS_F_ZETA + d), *C = SEIS_F(L, HS_SEIS_F_C);
    const SEIS_T *c1 = SEIS_K(L)->c1[d], *c2 = SEIS_K(L)->c2[d];
    /* C is this column's to write when no lower dimension's range holds it (constant along d) */
    int first = 1;
    for (int e = 0; e < d; e++) first = first && !SEIS_FN(seis_in_march)(L, e, ijk[e]);
    SEIS_T pq[17], sq[9]; /* P at g - 2R + m (m <= 4R), PSI_d at g - R + m (m <= 2R) */
    /* P where a PSI_d or the second difference may need it (the allocation's ghosts hold >= R) */
#define SEIS_MARCH_P(pos) ((pos) >= -R && (pos) < nl + R ? P[base + (pos) * s] : SEIS_C(0))
    /* PSI_d at pos: new from the old (old) and the P queue centred on it (pq[c] = P(pos)) where
     * a_d != 0 on this rank, 0 where a_d = 0, the memory's in the ghosts */
#define SEIS_MARCH_PSI(pos, old, c, out)                                                           \
    do {                                                                                           \
        const SEIS_I ps_ = (pos);                                                                  \
        if (ps_ < 0 || ps_ >= nl) out = (old);                                                     \
        else if (pa[ps_ + hw] == 0) out = 0;                                                       \
        else psi[base + ps_ * s] = out = SEIS_FN(seis_pml_psi)(pa[ps_ + hw], pb[ps_ + hw], (old), pq + (c), c1, R); \
    } while (0)
    /* the old PSI_d at pos where it is read (as SEIS_MARCH_PSI) */
#define SEIS_MARCH_OLD(pos) ((pos) < 0 || (pos) >= nl || pa[(pos) + hw] != 0 ? psi[base + (pos) * s] : SEIS_C(0))
    for (int m = 0; m < 4 * R; m++) pq[m + 1] = SEIS_MARCH_P(g0 - 2 * R + m);
    /* PSI_d at g0 - R .. g0 + R - 1 (pq[1 + R + m] is P(g0 - R + m)) */
    for (int m = 0; m < 2 * R; m++) SEIS_MARCH_PSI(g0 - R + m, SEIS_MARCH_OLD(g0 - R + m), 1 + R + m, sq[m + 1]);
    /* position g's loads are issued during position g - 1 (before its stores, to other elements),
     * so that a column has two positions' loads in flight */
    SEIS_T p_n = 0, o_n = 0, z_n = 0, c_n = 0;
#define SEIS_MARCH_LOAD(g)                                                                         \
    do {                                                                                           \
        p_n = SEIS_MARCH_P((g) + 2 * R);                                                           \
        o_n = SEIS_MARCH_OLD((g) + R);                                                             \
        z_n = pa[(g) + hw] != 0 ? zeta[base + (g) * s] : SEIS_C(0);                                \
        c_n = first ? SEIS_C(0) : C[base + (g) * s];                                               \
    } while (0)
    if (g0 < g1) SEIS_MARCH_LOAD(g0);
    for (SEIS_I g = g0; g < g1; g++) {
        const SEIS_T p_g = p_n, o_g = o_n, z_g = z_n, c_g = c_n;
        if (g + 1 < g1) SEIS_MARCH_LOAD(g + 1);
        for (int m = 0; m < 4 * R; m++) pq[m] = pq[m + 1];
        pq[4 * R] = p_g;
        for (int m = 0; m < 2 * R; m++) sq[m] = sq[m + 1];
        SEIS_MARCH_PSI(g + R, o_g, 3 * R, sq[2 * R]);
        const SEIS_I e = base + g * s;
        const SEIS_T a = pa[g + hw];
        const int near = pa[g + hw - R] != 0 || pa[g + hw + R] != 0; /* d's layer within reach */
        SEIS_T znew;
        const SEIS_T term = SEIS_FN(seis_pml_term)(a, pb[g + hw], near, z_g, &znew, pq + 2 * R, sq + R, c1, c2, R);
        if (a != 0) zeta[e] = znew;
        C[e] = first ? term : c_g + term;
    }
#undef SEIS_MARCH_P
#undef SEIS_MARCH_PSI
#undef SEIS_MARCH_OLD
#undef SEIS_MARCH_LOAD
}

/* ---------------------------------------------------------------- acoustic, variable density */

/* DM_d (B_d (DP_d P + PSI_d)) at idx: the flux at the 2R half points around it, each from P directly. */
HS_HD SEIS_T SEIS_FN(seis_av_div)(const hs_seis_launch *L, SEIS_I idx, int d, int with_psi, int R)
{
    const SEIS_T *P = SEIS_F(L, HS_SEIS_F_P), *B = SEIS_F(L, HS_SEIS_F_B + d), *psi = SEIS_F(L, HS_SEIS_F_PSI + d);
    const SEIS_I s = L->st[d];
    const SEIS_T *c = SEIS_K(L)->cs[d];
    SEIS_T v = 0;
    for (int m = 1; m <= R; m++) {
        const SEIS_I hp = idx + (m - 1) * s, hm = idx - m * s; /* the half points i + m - 1/2 and i - m + 1/2 */
        SEIS_T fp = SEIS_FN(seis_dp)(P, hp, s, c, R), fm = SEIS_FN(seis_dp)(P, hm, s, c, R);
        if (with_psi) fp += psi[hp], fm += psi[hm];
        v += c[m - 1] * (B[hp] * fp - B[hm] * fm);
    }
    return v;
}

HS_HD void SEIS_FN(seis_av_step)(const hs_seis_launch *L, SEIS_I i, SEIS_I j, SEIS_I k, int R)
{
    const SEIS_I idx = SEIS_FN(seis_index)(L, i, j, k);
    const SEIS_T *P = SEIS_F(L, HS_SEIS_F_P);
    SEIS_T *Q = SEIS_F(L, HS_SEIS_F_Q);
    SEIS_T sum = 0;
    for (int d = 0; d < 3; d++) {
        if (d >= L->ndim) break;
        sum += SEIS_FN(seis_av_div)(L, idx, d, 0, R);
    }
    Q[idx] = 2 * P[idx] - Q[idx] + SEIS_F(L, HS_SEIS_F_W)[idx] * sum;
}

HS_HD void SEIS_FN(seis_av_psi)(const hs_seis_launch *L, SEIS_I i, SEIS_I j, SEIS_I k, int R)
{
    const SEIS_I idx = SEIS_FN(seis_index)(L, i, j, k), ijk[3] = {i, j, k};
    const SEIS_T *P = SEIS_F(L, HS_SEIS_F_P);
    for (int d = 0; d < 3; d++) {
        if (d >= L->ndim) break;
        const SEIS_I pi = ijk[d] + L->hw;
        const SEIS_T a = ((const SEIS_T *)L->pah[d])[pi], b = ((const SEIS_T *)L->pbh[d])[pi];
        if (a == 0) continue; /* outside d's layer PSI_d stays 0 */
        SEIS_T *psi = SEIS_F(L, HS_SEIS_F_PSI + d);
        psi[idx] = b * psi[idx] + a * SEIS_FN(seis_dp)(P, idx, L->st[d], SEIS_K(L)->cs[d], R);
    }
}

HS_HD void SEIS_FN(seis_av_pml)(const hs_seis_launch *L, SEIS_I i, SEIS_I j, SEIS_I k, int R)
{
    const SEIS_I idx = SEIS_FN(seis_index)(L, i, j, k), ijk[3] = {i, j, k};
    const SEIS_T *P = SEIS_F(L, HS_SEIS_F_P);
    SEIS_T sum = 0;
    for (int d = 0; d < 3; d++) {
        if (d >= L->ndim) break;
        const SEIS_I pi = ijk[d] + L->hw;
        const SEIS_T a = ((const SEIS_T *)L->pa[d])[pi], b = ((const SEIS_T *)L->pb[d])[pi];
        /* PSI_d (at the half points) is read where the half-point profile may be nonzero */
        const SEIS_T div = SEIS_FN(seis_av_div)(L, idx, d, SEIS_FN(seis_layer_near)((const SEIS_T *)L->pah[d], pi, R), R);
        SEIS_T z = 0;
        if (a != 0) {
            SEIS_T *zeta = SEIS_F(L, HS_SEIS_F_ZETA + d);
            z = b * zeta[idx] + a * div;
            zeta[idx] = z;
        }
        sum += div + z;
    }
    SEIS_T *Q = SEIS_F(L, HS_SEIS_F_Q);
    Q[idx] = 2 * P[idx] - Q[idx] + SEIS_F(L, HS_SEIS_F_W)[idx] * sum;
}

/* ---------------------------------------------------------------- adjoint (constant density) */

/* sum_d D2_d (w U) at idx. */
HS_HD SEIS_T SEIS_FN(seis_lap_wu)(const hs_seis_launch *L, const SEIS_T *W, const SEIS_T *U, SEIS_I idx, int R)
{
    SEIS_T v = SEIS_K(L)->c2sum * W[idx] * U[idx];
    for (int d = 0; d < 3; d++) {
        if (d >= L->ndim) break;
        const SEIS_I s = L->st[d];
        for (int m = 1; m <= R; m++)
            v += SEIS_K(L)->c2[d][m] * (W[idx + m * s] * U[idx + m * s] + W[idx - m * s] * U[idx - m * s]);
    }
    return v;
}

/* p^{n+1} - 2 p^n + p^{n-1} at a core point: w (lap p^n + s^n delta), the forward step's
 * increment, so that the gradient needs no second stencil (seismic_adjoint.c divides by w once). */
HS_HD SEIS_T SEIS_FN(seis_second_difference)(const hs_seis_launch *L, SEIS_I idx)
{
    return SEIS_F(L, HS_SEIS_F_PN)[idx] - 2 * SEIS_F(L, HS_SEIS_F_PF)[idx] + SEIS_F(L, HS_SEIS_F_PP)[idx];
}

HS_HD void SEIS_FN(seis_adj_step)(const hs_seis_launch *L, SEIS_I i, SEIS_I j, SEIS_I k, int R)
{
    const SEIS_I idx = SEIS_FN(seis_index)(L, i, j, k);
    const SEIS_T *U = SEIS_F(L, HS_SEIS_F_P), *W = SEIS_F(L, HS_SEIS_F_W);
    SEIS_T *Q = SEIS_F(L, HS_SEIS_F_Q), *G = SEIS_F(L, HS_SEIS_F_G);
    const SEIS_T u = U[idx];
    if (G) G[idx] += u * SEIS_FN(seis_second_difference)(L, idx);
    Q[idx] = 2 * u - Q[idx] + SEIS_FN(seis_lap_wu)(L, W, U, idx, R);
}

HS_HD void SEIS_FN(seis_adj_psi)(const hs_seis_launch *L, SEIS_I i, SEIS_I j, SEIS_I k, int R)
{
    const SEIS_I idx = SEIS_FN(seis_index)(L, i, j, k), ijk[3] = {i, j, k};
    const SEIS_T *U = SEIS_F(L, HS_SEIS_F_P), *W = SEIS_F(L, HS_SEIS_F_W);
    for (int d = 0; d < 3; d++) {
        if (d >= L->ndim) break;
        const SEIS_I s = L->st[d], pi = ijk[d] + L->hw;
        const SEIS_T *a = (const SEIS_T *)L->pa[d], *Z = SEIS_F(L, HS_SEIS_F_ZETA + d);
        /* PSI_d is read only with the weight a (ADJ_PML) and reset to b PSI_d (ADJ_MEM): where a is 0
         * it stays 0 */
        if (a[pi] == 0) continue;
        SEIS_T v = 0;
        for (int m = 1; m <= R; m++) {
            const SEIS_I ip = idx + m * s, im = idx - m * s;
            const SEIS_T wup = W[ip] * U[ip], wum = W[im] * U[im];
            v += SEIS_K(L)->c1[d][m - 1] * ((wup + a[pi + m] * (Z[ip] + wup)) - (wum + a[pi - m] * (Z[im] + wum)));
        }
        SEIS_T *psi = SEIS_F(L, HS_SEIS_F_PSI + d);
        psi[idx] -= v;
    }
}

HS_HD void SEIS_FN(seis_adj_pml)(const hs_seis_launch *L, SEIS_I i, SEIS_I j, SEIS_I k, int R)
{
    const SEIS_I idx = SEIS_FN(seis_index)(L, i, j, k), ijk[3] = {i, j, k};
    const SEIS_T *U = SEIS_F(L, HS_SEIS_F_P), *W = SEIS_F(L, HS_SEIS_F_W);
    SEIS_T sum = SEIS_FN(seis_lap_wu)(L, W, U, idx, R);
    for (int d = 0; d < 3; d++) {
        if (d >= L->ndim) break;
        const SEIS_I s = L->st[d], pi = ijk[d] + L->hw;
        const SEIS_T *a = (const SEIS_T *)L->pa[d], *Z = SEIS_F(L, HS_SEIS_F_ZETA + d), *psi = SEIS_F(L, HS_SEIS_F_PSI + d);
        if (!SEIS_FN(seis_layer_near)(a, pi, R)) continue; /* every term carries an a of the window */
        /* D2_d (a (Z + w U)) - D1_d (a PSI) */
        SEIS_T v = SEIS_K(L)->c2[d][0] * a[pi] * (Z[idx] + W[idx] * U[idx]);
        for (int m = 1; m <= R; m++) {
            const SEIS_I ip = idx + m * s, im = idx - m * s;
            v += SEIS_K(L)->c2[d][m] * (a[pi + m] * (Z[ip] + W[ip] * U[ip]) + a[pi - m] * (Z[im] + W[im] * U[im]));
            v -= SEIS_K(L)->c1[d][m - 1] * (a[pi + m] * psi[ip] - a[pi - m] * psi[im]);
        }
        sum += v;
    }
    SEIS_T *Q = SEIS_F(L, HS_SEIS_F_Q);
    Q[idx] = 2 * U[idx] - Q[idx] + sum;
}

HS_HD void SEIS_FN(seis_adj_mem)(const hs_seis_launch *L, SEIS_I i, SEIS_I j, SEIS_I k, int R)
{
    (void)R;
    const SEIS_I idx = SEIS_FN(seis_index)(L, i, j, k), ijk[3] = {i, j, k};
    const SEIS_T wu = SEIS_F(L, HS_SEIS_F_W)[idx] * SEIS_F(L, HS_SEIS_F_P)[idx];
    for (int d = 0; d < 3; d++) {
        if (d >= L->ndim) break;
        const SEIS_T b = ((const SEIS_T *)L->pb[d])[ijk[d] + L->hw];
        if (b == 0) continue; /* outside the layer (where a is 0 too): Z_d and PSI_d stay 0 */
        SEIS_T *Z = SEIS_F(L, HS_SEIS_F_ZETA + d), *psi = SEIS_F(L, HS_SEIS_F_PSI + d);
        Z[idx] = b * (Z[idx] + wu);
        psi[idx] = b * psi[idx];
    }
}

/* ---------------------------------------------------------------- elastic (velocity-stress) */

/* The CPML-stretched derivative at one point, in two halves so that an update can issue every
 * load before its first store (a store to one field may alias another's load, which the compiler
 * must then keep after it: on the GPU each field became a trip to memory).  seis_memory_load: the
 * layer's a (along e, at the point or the half point) in *a and the memory's old value (0 outside
 * the layer, where it stays 0 and is not touched; in a launch without CPML, L->pml = 0, a = 0).
 * seis_stretch: with that memory m, m <- b m + a der and der + m; der itself where a = 0.  The
 * caller stores m where a != 0. */
HS_HD SEIS_T SEIS_FN(seis_memory_load)(const hs_seis_launch *L, int role, SEIS_I idx, int e, int half, SEIS_I pi, SEIS_T *a)
{
    *a = L->pml ? ((const SEIS_T *)(half ? L->pah[e] : L->pa[e]))[pi] : 0;
    return *a != 0 ? SEIS_F(L, role)[idx] : 0;
}

HS_HD SEIS_T SEIS_FN(seis_stretch)(const hs_seis_launch *L, SEIS_T der, SEIS_T a, SEIS_T *m, int e, int half, SEIS_I pi)
{
    if (a == 0) return der;
    const SEIS_T b = ((const SEIS_T *)(half ? L->pbh[e] : L->pb[e]))[pi];
    *m = b * *m + a * der;
    return der + *m;
}

HS_HD void SEIS_FN(seis_memory_store)(const hs_seis_launch *L, int role, SEIS_I idx, SEIS_T a, SEIS_T m)
{
    if (a != 0) SEIS_F(L, role)[idx] = m;
}

/* v_d += BV_d sum_e d_e s_de (DP along d for s_dd, DM along e for the shear stresses). */
HS_HD void SEIS_FN(seis_el_vel)(const hs_seis_launch *L, SEIS_I i, SEIS_I j, SEIS_I k, int R)
{
    const SEIS_I idx = SEIS_FN(seis_index)(L, i, j, k), ijk[3] = {i, j, k};
    SEIS_T der[3][3] = {{0}}, a[3][3] = {{0}}, m[3][3] = {{0}}, v[3] = {0, 0, 0}, bv[3] = {0, 0, 0};
    for (int d = 0; d < 3; d++) { /* every load first */
        if (d >= L->ndim) break;
        for (int e = 0; e < 3; e++) {
            if (e >= L->ndim) break;
            const SEIS_T *S = SEIS_F(L, HS_SEIS_F_S + hs_seis_sym(d, e));
            der[d][e] = e == d ? SEIS_FN(seis_dp)(S, idx, L->st[e], SEIS_K(L)->cs[e], R)
                               : SEIS_FN(seis_dm)(S, idx, L->st[e], SEIS_K(L)->cs[e], R);
            m[d][e] = SEIS_FN(seis_memory_load)(L, HS_SEIS_F_MV + 3 * d + e, idx, e, e == d, ijk[e] + L->hw, &a[d][e]);
        }
        v[d] = SEIS_F(L, HS_SEIS_F_V + d)[idx];
        bv[d] = SEIS_F(L, HS_SEIS_F_BV + d)[idx];
    }
    for (int d = 0; d < 3; d++) {
        if (d >= L->ndim) break;
        SEIS_T sum = 0;
        for (int e = 0; e < 3; e++) {
            if (e >= L->ndim) break;
            sum += SEIS_FN(seis_stretch)(L, der[d][e], a[d][e], &m[d][e], e, e == d, ijk[e] + L->hw);
        }
        SEIS_F(L, HS_SEIS_F_V + d)[idx] = v[d] + bv[d] * sum;
        for (int e = 0; e < 3; e++) {
            if (e >= L->ndim) break;
            SEIS_FN(seis_memory_store)(L, HS_SEIS_F_MV + 3 * d + e, idx, a[d][e], m[d][e]);
        }
    }
}

/* The stresses from the velocities' derivatives.  With a free surface on top (global z index 0 on
 * this rank) the stress imaging of Levander (1988): s_zz = 0 on the surface, where s_xx (s_yy) take
 * d_z v_z = -lambda / (lambda + 2 mu) (div_h v) from it; the vertical derivatives that would reach a
 * velocity above the surface (s_dz half a point below it, the normal stresses one point below) are
 * taken to second order.  Every load is issued before the first store (seis_memory_load). */
HS_HD void SEIS_FN(seis_el_stress)(const hs_seis_launch *L, SEIS_I i, SEIS_I j, SEIS_I k, int R)
{
    const SEIS_I idx = SEIS_FN(seis_index)(L, i, j, k), ijk[3] = {i, j, k};
    const int z = L->ndim - 1;
    const int64_t gz = (z == 2 ? k : z == 1 ? j : i) + L->offset[z];
    const int surface = L->free_top && gz == 0, near = L->free_top && R > 1 && gz <= 1;
    const int low = near && gz == 0; /* s_dz half a point below the surface */
    /* g: the normal derivatives; sh[p][0..1]: DP_e v_d and DP_d v_e of shear pair p = hs_seis_sym(d, e) - 3;
     * an, ash, mn, msh: their layers' a and memories; s: the stresses' old values; mu: MU_de */
    SEIS_T g[3] = {0, 0, 0}, an[3] = {0, 0, 0}, mn[3] = {0, 0, 0}, sh[3][2] = {{0, 0}}, ash[3][2] = {{0, 0}}, msh[3][2] = {{0, 0}},
           s[6] = {0, 0, 0, 0, 0, 0}, mu[3] = {0, 0, 0};
    for (int d = 0; d < 3; d++) {
        if (d >= L->ndim) break;
        const SEIS_T *V = SEIS_F(L, HS_SEIS_F_V + d);
        g[d] = near && d == z && gz == 1 ? SEIS_FN(seis_dm)(V, idx, L->st[d], &SEIS_K(L)->cs2[d], 1)
                                         : SEIS_FN(seis_dm)(V, idx, L->st[d], SEIS_K(L)->cs[d], R);
        mn[d] = SEIS_FN(seis_memory_load)(L, HS_SEIS_F_MS + 3 * d + d, idx, d, 0, ijk[d] + L->hw, &an[d]);
        s[d] = SEIS_F(L, HS_SEIS_F_S + d)[idx];
    }
    for (int d = 0; d < 3; d++)
        for (int e = d + 1; e < 3; e++) {
            if (e >= L->ndim) break;
            const int p = hs_seis_sym(d, e) - 3;
            const SEIS_T *Vd = SEIS_F(L, HS_SEIS_F_V + d), *Ve = SEIS_F(L, HS_SEIS_F_V + e);
            sh[p][0] = low && e == z ? SEIS_FN(seis_dp)(Vd, idx, L->st[e], &SEIS_K(L)->cs2[e], 1) : SEIS_FN(seis_dp)(Vd, idx, L->st[e], SEIS_K(L)->cs[e], R);
            sh[p][1] = low && d == z ? SEIS_FN(seis_dp)(Ve, idx, L->st[d], &SEIS_K(L)->cs2[d], 1) : SEIS_FN(seis_dp)(Ve, idx, L->st[d], SEIS_K(L)->cs[d], R);
            msh[p][0] = SEIS_FN(seis_memory_load)(L, HS_SEIS_F_MS + 3 * d + e, idx, e, 1, ijk[e] + L->hw, &ash[p][0]);
            msh[p][1] = SEIS_FN(seis_memory_load)(L, HS_SEIS_F_MS + 3 * e + d, idx, d, 1, ijk[d] + L->hw, &ash[p][1]);
            s[3 + p] = SEIS_F(L, HS_SEIS_F_S + 3 + p)[idx];
            mu[p] = SEIS_F(L, HS_SEIS_F_MU + p)[idx];
        }
    const SEIS_T l2m = SEIS_F(L, HS_SEIS_F_L2M)[idx], lam = SEIS_F(L, HS_SEIS_F_LAM)[idx];
    SEIS_T div = 0;
    for (int d = 0; d < 3; d++) {
        if (d >= L->ndim) break;
        g[d] = SEIS_FN(seis_stretch)(L, g[d], an[d], &mn[d], d, 0, ijk[d] + L->hw);
        div += g[d];
    }
    if (surface) { /* d_z v_z from s_zz = 0 (g indexed by constants only: z is not one, and an array
                    * indexed by it went to the GPU's local memory) */
        SEIS_T gzz = z == 2 ? g[2] : z == 1 ? g[1] : g[0];
        div -= gzz;
        gzz = -lam / l2m * div;
        div += gzz;
        if (z == 2) g[2] = gzz;
        else if (z == 1) g[1] = gzz;
        else g[0] = gzz;
    }
    for (int d = 0; d < 3; d++) {
        if (d >= L->ndim) break;
        SEIS_T *S = SEIS_F(L, HS_SEIS_F_S + d);
        if (surface && d == z) S[idx] = 0;
        else S[idx] = s[d] + (l2m * g[d] + lam * (div - g[d]));
        SEIS_FN(seis_memory_store)(L, HS_SEIS_F_MS + 3 * d + d, idx, an[d], mn[d]);
    }
    for (int d = 0; d < 3; d++)
        for (int e = d + 1; e < 3; e++) {
            if (e >= L->ndim) break;
            const int p = hs_seis_sym(d, e) - 3;
            const SEIS_T a = SEIS_FN(seis_stretch)(L, sh[p][0], ash[p][0], &msh[p][0], e, 1, ijk[e] + L->hw);
            const SEIS_T b = SEIS_FN(seis_stretch)(L, sh[p][1], ash[p][1], &msh[p][1], d, 1, ijk[d] + L->hw);
            SEIS_F(L, HS_SEIS_F_S + 3 + p)[idx] = s[3 + p] + mu[p] * (a + b);
            SEIS_FN(seis_memory_store)(L, HS_SEIS_F_MS + 3 * d + e, idx, ash[p][0], msh[p][0]);
            SEIS_FN(seis_memory_store)(L, HS_SEIS_F_MS + 3 * e + d, idx, ash[p][1], msh[p][1]);
        }
}

/* At a point of the surface: s_zz = 0 there and odd images above it (points: -m <-> m; the shear
 * stresses s_dz at half points: -1-m <-> m). */
HS_HD void SEIS_FN(seis_el_image)(const hs_seis_launch *L, SEIS_I i, SEIS_I j, SEIS_I k, int R)
{
    (void)R;
    const SEIS_I idx = SEIS_FN(seis_index)(L, i, j, k);
    const int z = L->ndim - 1;
    const SEIS_I s = L->st[z];
    SEIS_T *Szz = SEIS_F(L, HS_SEIS_F_S + z);
    Szz[idx] = 0;
    for (SEIS_I m = 1; m <= L->hw; m++) Szz[idx - m * s] = -Szz[idx + m * s];
    for (int d = 0; d < 3; d++) {
        if (d >= z) break;
        SEIS_T *S = SEIS_F(L, HS_SEIS_F_S + hs_seis_sym(d, z));
        for (SEIS_I m = 0; m < L->hw; m++) S[idx - (m + 1) * s] = -S[idx + m * s];
    }
}

/* ---------------------------------------------------------------- free surface (acoustic) */

/* At a point of the surface (global z index 0): X = 0 there and the ghosts above it the odd image of the
 * points below. */
HS_HD void SEIS_FN(seis_mirror)(const hs_seis_launch *L, SEIS_I i, SEIS_I j, SEIS_I k, int R)
{
    (void)R;
    const SEIS_I idx = SEIS_FN(seis_index)(L, i, j, k), s = L->st[L->ndim - 1];
    SEIS_T *X = SEIS_F(L, HS_SEIS_F_X);
    X[idx] = 0;
    for (SEIS_I m = 1; m <= L->hw; m++) X[idx - m * s] = -X[idx + m * s];
}

/* ---------------------------------------------------------------- point sets */

HS_HD void SEIS_FN(seis_inject)(const hs_seis_launch *L, int64_t g)
{
    SEIS_T *X = SEIS_F(L, HS_SEIS_F_X);
    const SEIS_T *Y = SEIS_F(L, HS_SEIS_F_Y);
    const int64_t idx = L->pidx[L->gptr[g]];
    double v = 0;
    for (int64_t k = L->gptr[g]; k < L->gptr[g + 1]; k++) v += (L->vals ? L->vals[L->prec[k]] : 1.0) * L->pwt[k];
    v *= L->value;
    X[idx] += SEIS_C(Y ? v * (double)Y[idx] : v);
}

HS_HD void SEIS_FN(seis_sample)(const hs_seis_launch *L, int64_t g)
{
    const SEIS_T *X = SEIS_F(L, HS_SEIS_F_X), *Y = SEIS_F(L, HS_SEIS_F_Y);
    double v = 0;
    for (int64_t k = L->gptr[g]; k < L->gptr[g + 1]; k++)
        v += L->pwt[k] * (double)X[L->pidx[k]] * (Y ? (double)Y[L->pidx[k]] : 1.0);
    L->trace[g] = L->value * L->trace[g] + L->scale * v;
}

#undef SEIS_F
#undef SEIS_C

#ifdef SEIS_I_DEFAULTED
#undef SEIS_I
#undef SEIS_I_DEFAULTED
#endif
