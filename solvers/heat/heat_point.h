/* The heat operator at one cell, shared verbatim by the CPU and CUDA kernels so both compute alike. */
#ifndef HS_HEAT_POINT_H
#define HS_HEAT_POINT_H

#include "kernels/hd.h"
#include "solvers/heat/heat_stencil_impl.h"

/* Harmonic mean: the conductivity of a face between two cells in series (0 when either is 0). */
HS_HD double hs_heat_face_k(double a, double b) { return a + b > 0 ? 2.0 * a * b / (a + b) : 0.0; }

/* L(T) at element idx: div(k grad T)/(rho c). */
HS_HD double hs_heat_operator(const hs_heat_launch *L, const double *T, int64_t idx)
{
    double c = T[idx], s = 0;
    if (!L->k) {
        for (int d = 0; d < 3; d++) {
            int64_t st = L->stride[d];
            if (st == 0) continue;
            if (L->order == 2)
                s += (T[idx - st] - 2.0 * c + T[idx + st]) * L->inv_dx2[d];
            else
                s += (16.0 * (T[idx - st] + T[idx + st]) - (T[idx - 2 * st] + T[idx + 2 * st]) - 30.0 * c) *
                     (L->inv_dx2[d] * (1.0 / 12.0));
        }
        return L->alpha * s;
    }
    double kc = L->k[idx];
    for (int d = 0; d < 3; d++) {
        int64_t st = L->stride[d];
        if (st == 0) continue;
        double kp = hs_heat_face_k(kc, L->k[idx + st]), km = hs_heat_face_k(kc, L->k[idx - st]);
        s += (kp * (T[idx + st] - c) - km * (c - T[idx - st])) * L->inv_dx2[d];
    }
    return L->inv_rhoc * s;
}

/* a T + b L(T) + c q at element idx. */
HS_HD double hs_heat_combine(const hs_heat_launch *L, const double *T, int64_t idx)
{
    double q = L->q ? L->q[idx] : L->q_const;
    return L->a * T[idx] + L->b * hs_heat_operator(L, T, idx) + L->c * q;
}

#endif
