/* The Navier-Stokes model's pointwise operators on the MAC grid, shared verbatim by the CPU and CUDA kernels. */
#ifndef HS_NS_POINT_H
#define HS_NS_POINT_H

#include <math.h>

#include "kernels/fft/poisson_point.h"
#include "kernels/hd.h"
#include "solvers/cfd/ns_impl.h"

/* Loops over dimensions run to 3 with an early exit, so that the CUDA compiler unrolls them and
 * every index into the launch record is a constant: an array of the kernel's parameter indexed at
 * run time makes each thread copy the whole record to local memory (measured: the momentum stage
 * at 24% of copy bandwidth on the H200). */
#ifdef __CUDA_ARCH__
#define HS_NS_UNROLL _Pragma("unroll")
#else
#define HS_NS_UNROLL
#endif
#define HS_NS_FOR_DIMS(d, L) HS_NS_UNROLL for (int d = 0; d < 3 && d < (L)->ndim; d++)

/* The type of the index arithmetic: int64_t, or what the includer defines as HS_NS_INDEX.
 * ns_cuda.cu includes this file twice, in two namespaces (undefining HS_NS_POINT_H between), and
 * takes the 32-bit copy where every element a launch touches lies below 2^31 (hs_ns_launch.index32):
 * the 64-bit address arithmetic was most of the momentum kernel's instructions (SASS: 423 integer
 * instructions against 172 floating-point ones). */
#ifdef HS_NS_INDEX
typedef HS_NS_INDEX hs_ns_i;
#else
typedef int64_t hs_ns_i;
#endif

HS_HD hs_ns_i hs_ns_at(const hs_ns_lay *l, hs_ns_i i, hs_ns_i j, hs_ns_i k)
{
    return (hs_ns_i)l->origin + i + j * (hs_ns_i)l->sy + k * (hs_ns_i)l->sz;
}

HS_HD hs_ns_i hs_ns_stride(const hs_ns_lay *l, int d) { return d == 0 ? 1 : d == 1 ? (hs_ns_i)l->sy : (hs_ns_i)l->sz; }

/* The value at the face between p0 and p1 carried by velocity a: central, or upwind-biased with the
 * van Leer limiter (second order where the field is smooth and monotone, no new extrema). */
HS_HD double hs_ns_face_value(int scheme, double pm1, double p0, double p1, double p2, double a)
{
    if (scheme == HS_NS_ADV_CENTRAL) return 0.5 * (p0 + p1);
    double up = a >= 0 ? p0 : p1, uu = a >= 0 ? pm1 : p2, dn = a >= 0 ? p1 : p0;
    double num = up - uu, den = dn - up;
    /* van Leer: psi(r) = 2r/(1+r), r = num/den; the face value up + psi (dn - up)/2 */
    return num * den > 0 ? up + num * den / (num + den) : up;
}

/* Where a momentum update reads the velocity: for each component f, plane[f][m] points at the
 * element of the updated point's (i, j) in the plane k + m - 2, and sy[f] is the step from one row
 * to the next.  The same operators then read the fields in global memory (hs_ns_view_global) or
 * a block's tiles of them in shared memory (ns_cuda.cu's fused kernel); with the dimension loops
 * unrolled every offset below is a constant. */
typedef struct hs_ns_view {
    const double *plane[3][5];
    hs_ns_i sy[3];
} hs_ns_view;

/* Component f at the offset (di, dj, dk) from the point. */
HS_HD double hs_ns_get(const hs_ns_view *V, int f, int di, int dj, int dk)
{
    return V->plane[f][dk + 2][di + dj * V->sy[f]];
}

/* Component f at the offset m along dimension d, and m along d plus n along e. */
HS_HD double hs_ns_get1(const hs_ns_view *V, int f, int d, int m)
{
    return hs_ns_get(V, f, d == 0 ? m : 0, d == 1 ? m : 0, d == 2 ? m : 0);
}
HS_HD double hs_ns_get2(const hs_ns_view *V, int f, int d, int m, int e, int n)
{
    return hs_ns_get(V, f, (d == 0 ? m : 0) + (e == 0 ? n : 0), (d == 1 ? m : 0) + (e == 1 ? n : 0),
                     (d == 2 ? m : 0) + (e == 2 ? n : 0));
}

/* The view of the velocity fields of L in global memory at point (i, j, k). */
HS_HD void hs_ns_view_global(const hs_ns_launch *L, hs_ns_i i, hs_ns_i j, hs_ns_i k, hs_ns_view *V)
{
    HS_NS_FOR_DIMS(f, L) {
        const hs_ns_lay *lf = &L->lay[f];
        const double *at = L->q[f] + hs_ns_at(lf, i, j, k);
        HS_NS_UNROLL for (int m = 0; m < 5; m++) V->plane[f][m] = at + (m - 2) * (hs_ns_i)lf->sz;
        V->sy[f] = (hs_ns_i)lf->sy;
    }
}

/* The flux of q_c through the high face along d of the control volume of the point s steps along d
 * from the view's point (s = 0: its own high face; s = -1: its low face): the advecting velocity
 * averaged to the face (q_c's own neighbours along c, q_d's two points across it otherwise) times
 * the transported q_c there.  The low face of a point is the high face of the one below, read from
 * the same values in the same order, so a kernel that evaluates each face once and hands it to both
 * points (ns_cuda.cu) computes what one evaluating both faces of every point does. */
HS_HD double hs_ns_face_flux(const hs_ns_launch *L, int c, int d, const hs_ns_view *V, int s)
{
    const double qm1 = hs_ns_get1(V, c, d, s - 1), q0 = hs_ns_get1(V, c, d, s);
    const double q1 = hs_ns_get1(V, c, d, s + 1), q2 = hs_ns_get1(V, c, d, s + 2);
    const double a = d == c ? 0.5 * (q0 + q1) : 0.5 * (hs_ns_get2(V, d, d, s + 1, c, -1) + hs_ns_get1(V, d, d, s + 1));
    return a * hs_ns_face_value(L->advection, qm1, q0, q1, q2, a);
}

/* dq_c/dt at face point (i, j, k) of component c: -div(q q_c) + nu lap q_c + force + buoyancy, in
 * flux form: flo[d] and fhi[d] are the fluxes of q_c through the low and high faces along d of its
 * control volume (cell centres along c, edges across; hs_ns_face_flux).  The velocity of the
 * diffusion comes from V; the temperature (buoyancy) from L at (i, j, k). */
HS_HD double hs_ns_momentum_rhs_from(const hs_ns_launch *L, int c, const hs_ns_view *V, hs_ns_i i, hs_ns_i j, hs_ns_i k,
                                     const double flo[3], const double fhi[3])
{
    double R = L->force[c];
    const double qP = hs_ns_get(V, c, 0, 0, 0);
    HS_NS_FOR_DIMS(d, L) {
        const double qm1 = hs_ns_get1(V, c, d, -1), qp1 = hs_ns_get1(V, c, d, 1);
        R += L->nu * (qm1 - 2.0 * qP + qp1) * L->idx2[d];
        R -= (fhi[d] - flo[d]) * L->idx[d];
    }
    if (L->T && L->buoy[c] != 0.0) {
        const hs_ns_lay *lt = &L->lay[3];
        const hs_ns_i Q = hs_ns_at(lt, i, j, k);
        R += L->buoy[c] * 0.5 * (L->T[Q - hs_ns_stride(lt, c)] + L->T[Q]);
    }
    return R;
}

/* q_c + dt dq_c/dt at point (i, j, k) of component c from its faces' fluxes (hs_ns_momentum_rhs_from);
 * side -1 / +1: the point is a convective-outflow face at the low / high end along c, where
 * dq/dt + U dq/dn = 0 is taken one-sided from inside (the fluxes are not used). */
HS_HD double hs_ns_momentum_advance_from(const hs_ns_launch *L, int c, int side, const hs_ns_view *V, hs_ns_i i, hs_ns_i j, hs_ns_i k,
                                         const double flo[3], const double fhi[3])
{
    const double qP = hs_ns_get(V, c, 0, 0, 0);
    double R;
    /* the inner neighbour by constant offsets, so that the view's planes stay in registers */
    if (side) R = -L->outflow_speed * (qP - (side > 0 ? hs_ns_get1(V, c, c, -1) : hs_ns_get1(V, c, c, 1))) * L->idx[c];
    else R = hs_ns_momentum_rhs_from(L, c, V, i, j, k, flo, fhi);
    return qP + L->dt * R;
}

/* The same, evaluating both faces of the point along every dimension. */
HS_HD double hs_ns_momentum_advance(const hs_ns_launch *L, int c, int side, const hs_ns_view *V, hs_ns_i i, hs_ns_i j, hs_ns_i k)
{
    double flo[3] = {0, 0, 0}, fhi[3] = {0, 0, 0};
    if (!side) HS_NS_FOR_DIMS(d, L) {
            fhi[d] = hs_ns_face_flux(L, c, d, V, 0);
            flo[d] = hs_ns_face_flux(L, c, d, V, -1);
        }
    return hs_ns_momentum_advance_from(L, c, side, V, i, j, k, flo, fhi);
}

/* The HS_NS_MOMENTUM launch of component c that an HS_NS_MOMENTUM_ALL launch L holds. */
HS_HD void hs_ns_part_launch(const hs_ns_launch *L, int c, hs_ns_launch *one)
{
    *one = *L;
    one->op = HS_NS_MOMENTUM;
    one->comp = c;
    for (int d = 0; d < 3; d++) one->lo[d] = L->part[c].lo[d], one->hi[d] = L->part[c].hi[d];
    one->outflow_lo = L->part[c].outflow_lo;
    one->outflow_hi = L->part[c].outflow_hi;
    one->out = L->part[c].out;
    one->q0 = L->part[c].q0;
}

/* The outflow side (hs_ns_momentum_advance) of the point at index ic along c of a box [first, last]
 * whose low / high end is an outflow face. */
HS_HD int hs_ns_outflow_side(int outflow_lo, int outflow_hi, hs_ns_i ic, hs_ns_i first, hs_ns_i last)
{
    return (outflow_hi && ic == last) ? 1 : (outflow_lo && ic == first) ? -1 : 0;
}

/* dT/dt at cell (i, j, k): -div(q T) + kappa lap T. */
HS_HD double hs_ns_scalar_rhs(const hs_ns_launch *L, hs_ns_i i, hs_ns_i j, hs_ns_i k)
{
    const hs_ns_lay *lt = &L->lay[3];
    const double *T = L->T;
    const hs_ns_i P = hs_ns_at(lt, i, j, k);
    double R = 0;
    HS_NS_FOR_DIMS(d, L) {
        const hs_ns_i sd = hs_ns_stride(lt, d);
        R += L->kappa * (T[P - sd] - 2.0 * T[P] + T[P + sd]) * L->idx2[d];
        const hs_ns_lay *ld = &L->lay[d];
        const hs_ns_i Q = hs_ns_at(ld, i, j, k);
        double alo = L->q[d][Q], ahi = L->q[d][Q + hs_ns_stride(ld, d)];
        double fhi = ahi * hs_ns_face_value(L->advection, T[P - sd], T[P], T[P + sd], T[P + 2 * sd], ahi);
        double flo = alo * hs_ns_face_value(L->advection, T[P - 2 * sd], T[P - sd], T[P], T[P + sd], alo);
        R -= (fhi - flo) * L->idx[d];
    }
    return R;
}

HS_HD double hs_ns_divergence(const hs_ns_launch *L, hs_ns_i i, hs_ns_i j, hs_ns_i k)
{
    double s = 0;
    HS_NS_FOR_DIMS(d, L) {
        const hs_ns_lay *ld = &L->lay[d];
        const hs_ns_i Q = hs_ns_at(ld, i, j, k);
        s += (L->q[d][Q + hs_ns_stride(ld, d)] - L->q[d][Q]) * L->idx[d];
    }
    return s;
}

/* Component b of the velocity at the centre of cell (i, j, k) (ghost cells allowed). */
HS_HD double hs_ns_centre(const hs_ns_launch *L, int b, hs_ns_i i, hs_ns_i j, hs_ns_i k)
{
    const hs_ns_lay *lb = &L->lay[b];
    const hs_ns_i Q = hs_ns_at(lb, i, j, k);
    return 0.5 * (L->q[b][Q] + L->q[b][Q + hs_ns_stride(lb, b)]);
}

/* d q_b / d x_a at the centre of cell (i, j, k): centred difference of the centred values. */
HS_HD double hs_ns_centre_grad(const hs_ns_launch *L, int b, int a, hs_ns_i i, hs_ns_i j, hs_ns_i k)
{
    if (a >= L->ndim || b >= L->ndim) return 0.0;
    hs_ns_i e[3] = {a == 0, a == 1, a == 2};
    return (hs_ns_centre(L, b, i + e[0], j + e[1], k + e[2]) - hs_ns_centre(L, b, i - e[0], j - e[1], k - e[2])) *
           (0.5 * L->idx[a]);
}

/* curl q at the centre; 2D: only the z component is non-zero. */
HS_HD void hs_ns_curl(const hs_ns_launch *L, hs_ns_i i, hs_ns_i j, hs_ns_i k, double w[3])
{
    w[2] = hs_ns_centre_grad(L, 1, 0, i, j, k) - hs_ns_centre_grad(L, 0, 1, i, j, k);
    if (L->ndim == 3) {
        w[0] = hs_ns_centre_grad(L, 2, 1, i, j, k) - hs_ns_centre_grad(L, 1, 2, i, j, k);
        w[1] = hs_ns_centre_grad(L, 0, 2, i, j, k) - hs_ns_centre_grad(L, 2, 0, i, j, k);
    } else {
        w[0] = w[1] = 0.0;
    }
}

/* The inflow shape at the tangential point (j, k) of a face normal to dim, parabolic across each
 * tangential axis with walls at both ends (L->walled), uniform across the others: mean exactly 1 over the
 * face's cells (the parabola sampled at n cell centres has mean 1 + 1/(2 n^2); that is divided out,
 * so that the flux through the face is the one asked for). */
HS_HD double hs_ns_profile(const hs_ns_launch *L, int dim, hs_ns_i t0, hs_ns_i t1)
{
    if (L->profile == HS_NS_PROFILE_UNIFORM) return 1.0;
    double s = 1.0;
    hs_ns_i t[2] = {t0, t1};
    int n = 0;
    HS_NS_FOR_DIMS(d, L) {
        if (d == dim) continue;
        const hs_ns_i td = t[n++];
        if (!L->walled[d]) continue; /* uniform across a periodic or open axis */
        double cells = floor(L->length[d] / L->dx[d] + 0.5);
        double x = ((double)(td + L->offset[d]) + 0.5) / cells;
        s *= 6.0 * x * (1.0 - x) / (1.0 + 0.5 / (cells * cells));
    }
    return s;
}

/* The contiguous index of cell (i, j, k) with x and y in the orders L->order (x lines whole on every
 * rank; y lines too where y is ordered), and the sign those orders carry at (i, j). */
HS_HD hs_ns_i hs_ns_cell_index(const hs_ns_launch *L, hs_ns_i i, hs_ns_i j, hs_ns_i k, double *sign)
{
    const hs_ns_i n0 = (hs_ns_i)L->local[0], n1 = (hs_ns_i)L->local[1];
    *sign = hs_poisson_sign(L->order[0] == 2, i) * hs_poisson_sign(L->order[1] == 2, j);
    return (k * n1 + (hs_ns_i)hs_poisson_order_position(L->order[1], n1, j)) * n0 +
           (hs_ns_i)hs_poisson_order_position(L->order[0], n0, i);
}

/* The divergence in the plane solve's DCT-IV layout (L->order[0] = HS_POISSON_ROWS_DCT4; 2D, one
 * rank): the cell holding x_e for an even e writes the packed value of its row's pair (x_e,
 * x_{n0-1-e}), the same arithmetic as the solver's pack; the other cells write nothing. */
HS_HD void hs_ns_divergence_dct4(const hs_ns_launch *L, hs_ns_i i, hs_ns_i j)
{
    const hs_ns_i n0 = (hs_ns_i)L->local[0], n1 = (hs_ns_i)L->local[1];
    const hs_ns_i e = (hs_ns_i)hs_poisson_dct4_cell(L->dct4_side, n0, i);
    if (e & 1) return;
    const hs_ns_i i2 = (hs_ns_i)hs_poisson_dct4_cell(L->dct4_side, n0, n0 - 1 - e), jp = (hs_ns_i)hs_poisson_order_position(L->order[1], n1, j);
    const double a = L->scale * hs_ns_divergence(L, i, j, 0), b = L->scale * hs_ns_divergence(L, i2, j, 0);
    hs_poisson_dct4_pack_values(hs_poisson_sign(L->order[1] == 2, j), a, b, L->dct4_tw, e / 2, L->out + 2 * (jp * (n0 / 2) + e / 2));
}

/* One point of the cell-centred operations (contiguous output index o; HS_NS_PHI_IN writes the
 * field out from contiguous phi); op and comp are L->op and L->comp (see hs_ns_point_op). */
HS_HD void hs_ns_cell_op(const hs_ns_launch *L, int op, int comp, hs_ns_i i, hs_ns_i j, hs_ns_i k)
{
    const hs_ns_i o = (k * (hs_ns_i)L->local[1] + j) * (hs_ns_i)L->local[0] + i;
    double w[3], sign;
    switch (op) {
    case HS_NS_DIVERGENCE: {
        if (L->order[0] == HS_POISSON_ROWS_DCT4) {
            hs_ns_divergence_dct4(L, i, j);
            break;
        }
        const hs_ns_i at = hs_ns_cell_index(L, i, j, k, &sign);
        L->out[at] = sign * (L->scale * hs_ns_divergence(L, i, j, k));
        break;
    }
    case HS_NS_PHI_IN: {
        if (L->order[0] == HS_POISSON_ROWS_DCT4) {
            L->out[hs_ns_at(&L->lay[4], i, j, k)] = hs_poisson_dct4_unpack_at(L->local[1], L->local[0], L->order[1], L->dct4_side,
                                                                             L->dct4_tw, L->phi, j, i);
            break;
        }
        const hs_ns_i at = hs_ns_cell_index(L, i, j, k, &sign);
        L->out[hs_ns_at(&L->lay[4], i, j, k)] = sign * L->phi[at];
        break;
    }
    case HS_NS_CENTRE: L->out[o] = hs_ns_centre(L, comp, i, j, k); break;
    case HS_NS_VORTICITY:
        hs_ns_curl(L, i, j, k, w);
        L->out[o] = L->ndim == 2 ? w[2] : sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
        break;
    case HS_NS_ENSTROPHY:
        hs_ns_curl(L, i, j, k, w);
        L->out[o] = 0.5 * (w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
        break;
    case HS_NS_ENERGY: {
        double s = 0;
        HS_NS_FOR_DIMS(b, L) {
            double v = hs_ns_centre(L, b, i, j, k);
            s += v * v;
        }
        L->out[o] = 0.5 * s;
        break;
    }
    case HS_NS_WALL_FLUX: {
        const hs_ns_i P = hs_ns_at(&L->lay[3], i, j, k);
        /* one-sided second-order derivative from the wall value and the first two cells */
        L->out[o] = (i + L->offset[0] == 0) ? -(-8.0 * L->a + 9.0 * L->T[P] - L->T[P + 1]) * L->idx[0] / 3.0 : 0.0;
        break;
    }
    default: break;
    }
}

/* One point of the face / field-writing operations (in the layout of the field written).  op and
 * comp are L->op and L->comp, passed apart so that the CUDA kernels can make them compile-time
 * constants. */
HS_HD void hs_ns_point_op(const hs_ns_launch *L, int op, int comp, hs_ns_i i, hs_ns_i j, hs_ns_i k)
{
    const int c = comp;
    if (op == HS_NS_MOMENTUM) {
        const hs_ns_i P = hs_ns_at(&L->lay[c], i, j, k);
        const hs_ns_i ic = c == 0 ? i : c == 1 ? j : k;
        const int side = hs_ns_outflow_side(L->outflow_lo, L->outflow_hi, ic, (hs_ns_i)L->lo[c], (hs_ns_i)L->hi[c] - 1);
        hs_ns_view V;
        hs_ns_view_global(L, i, j, k, &V);
        const double base = L->q0 ? L->a * L->q0[P] : 0.0;
        L->out[P] = base + L->b * hs_ns_momentum_advance(L, c, side, &V, i, j, k);
    } else if (op == HS_NS_SCALAR) {
        const hs_ns_i P = hs_ns_at(&L->lay[3], i, j, k);
        const double base = L->q0 ? L->a * L->q0[P] : 0.0;
        L->out[P] = base + L->b * (L->T[P] + L->dt * hs_ns_scalar_rhs(L, i, j, k));
    } else if (op == HS_NS_CORRECT) {
        const hs_ns_i P = hs_ns_at(&L->lay[c], i, j, k), Q = hs_ns_at(&L->lay[4], i, j, k);
        L->out[P] -= L->scale * (L->phi[Q] - L->phi[Q - hs_ns_stride(&L->lay[4], c)]) * L->idx[c];
    } else if (op == HS_NS_FACE_BC) {
        /* (i, j, k) runs over the face's tangential points; the normal index is face_index */
        const hs_ns_lay *lc = &L->lay[c];
        hs_ns_i ijk[3] = {i, j, k};
        hs_ns_i t[2] = {0, 0};
        int n = 0;
        for (int d = 0; d < 3; d++)
            if (d != c) t[n++] = ijk[d];
        ijk[c] = (hs_ns_i)L->face_index;
        const hs_ns_i B = hs_ns_at(lc, ijk[0], ijk[1], ijk[2]), s = hs_ns_stride(lc, c);
        if (L->set_value) L->out[B] = L->inflow_speed * hs_ns_profile(L, c, t[0], t[1]);
        const double g = L->out[B];
        const hs_ns_i dir = L->side ? 1 : -1;
        for (int m = 0; m < L->hw; m++) L->out[B + dir * (m + 1) * s] = 2.0 * g - L->out[B - dir * (m + 1) * s];
    }
}

#endif
