/* Lagrange P1/P2 simplex elements shared verbatim by the CPU and CUDA assembly: quadrature, shapes, element matrices. */
#ifndef HS_FEM_POINT_H
#define HS_FEM_POINT_H

#include <math.h>
#include <stdint.h>

#include "kernels/hd.h"

/* Physics of an element kernel. */
enum { HS_FEM_SCALAR = 0, HS_FEM_ELASTIC = 1 };

/* What the element kernels read and write.  Per cell (facet) the local nodes are numbered as the
 * mesh orders them: vertices first, then (P2) the edge midpoints.  Element matrices and vectors are
 * stored entry-major: entry k of cell e at Ke[k * ncells + e] (coalesced on the GPU), the facets'
 * after all the cells' (Ke + L*L*ncells, entry k of facet f at k * nfacets + f).  The local index of
 * component c of node a is a * ncomp + c; L = nl * ncomp. */
typedef struct hs_fem_kargs {
    int dim, order, ncomp, physics;
    int nl, nfl;                 /* nodes per cell, per facet */
    int64_t ncells, nfacets;
    const int32_t *cell_nodes;   /* nl per cell: local node ids */
    const int32_t *cell_slot;    /* region slot per cell */
    const int32_t *facet_nodes;  /* nfl per facet */
    const int32_t *facet_slot;   /* boundary-condition slot per facet */
    const double *node_x;        /* 3 per local node */
    const uint8_t *bc_mask;      /* ncomp per local node: 1 = Dirichlet */
    const double *bc_value;      /* ncomp per local node: the Dirichlet value */
    const double *cell_coef;     /* HS_FEM_NCOEF per region slot (see below) */
    const double *facet_coef;    /* HS_FEM_NCOEF per boundary slot */
    double cK, cM, cF;           /* A = cK K + cM M (+ cK Robin), F = cF load */
    int lift;                    /* subtract A[:, Dirichlet] g from F */
    double *Ke, *Fe;             /* outputs */
} hs_fem_kargs;

/* Region coefficients: scalar [kappa, mass (rho c), source]; elastic [lambda, mu, fx, fy, fz].
 * Boundary coefficients: scalar [robin h, flux into the body: q + h T_inf]; elastic [0, tx, ty, tz]. */
#define HS_FEM_NCOEF 8

/* ------------------------------------------------------------------ quadrature (barycentric points) */

/* Triangle, degree 2 (3 points) and degree 5 (7 points); weights sum to 1. */
HS_HD int hs_fem_tri_rule(int degree, int q, double lam[4], double *w)
{
    if (degree <= 2) {
        const double a = 2.0 / 3.0, b = 1.0 / 6.0;
        lam[0] = q == 0 ? a : b, lam[1] = q == 1 ? a : b, lam[2] = q == 2 ? a : b, lam[3] = 0;
        *w = 1.0 / 3.0;
        return 3;
    }
    if (q == 0) {
        lam[0] = lam[1] = lam[2] = 1.0 / 3.0, lam[3] = 0;
        *w = 0.225;
        return 7;
    }
    const int grp = (q - 1) / 3, r = (q - 1) % 3;
    const double a = grp == 0 ? 0.059715871789770 : 0.797426985353087;
    const double b = grp == 0 ? 0.470142064105115 : 0.101286507323456;
    lam[0] = r == 0 ? a : b, lam[1] = r == 1 ? a : b, lam[2] = r == 2 ? a : b, lam[3] = 0;
    *w = grp == 0 ? 0.132394152788506 : 0.125939180544827;
    return 7;
}

/* Tetrahedron, degree 2 (4 points) and degree 5 (14 points, Walkington); weights sum to 1. */
HS_HD int hs_fem_tet_rule(int degree, int q, double lam[4], double *w)
{
    if (degree <= 2) {
        const double a = 0.585410196624969, b = 0.138196601125011;
        for (int i = 0; i < 4; i++) lam[i] = i == q ? a : b;
        *w = 0.25;
        return 4;
    }
    if (q < 8) {
        const double a = q < 4 ? 0.0927352503108912 : 0.3108859192633006;
        const int r = q & 3;
        for (int i = 0; i < 4; i++) lam[i] = i == r ? 1.0 - 3.0 * a : a;
        *w = q < 4 ? 0.07349304311636196 : 0.11268792571801584;
        return 14;
    }
    /* (b, b, 1/2 - b, 1/2 - b) over the 6 ways of choosing the two b's */
    const double b = 0.0455037041256496;
    const int pairs[6][2] = {{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}};
    const int p = q - 8;
    for (int i = 0; i < 4; i++) lam[i] = 0.5 - b;
    lam[pairs[p][0]] = b, lam[pairs[p][1]] = b;
    *w = 0.04254602077708147;
    return 14;
}

/* Segment, Gauss-Legendre with 3 points (degree 5): lam = (1 - t, t). */
HS_HD int hs_fem_line_rule(int q, double lam[4], double *w)
{
    const double s = 0.3872983346207417; /* sqrt(3/5) / 2 */
    const double t = q == 0 ? 0.5 - s : q == 1 ? 0.5 : 0.5 + s;
    lam[0] = 1.0 - t, lam[1] = t, lam[2] = lam[3] = 0;
    *w = q == 1 ? 4.0 / 9.0 : 5.0 / 18.0;
    return 3;
}

/* Point q of the rule of degree `degree` on a simplex of dimension sdim (1, 2, 3); returns the count. */
HS_HD int hs_fem_rule(int sdim, int degree, int q, double lam[4], double *w)
{
    if (sdim == 1) return hs_fem_line_rule(q, lam, w);
    if (sdim == 2) return hs_fem_tri_rule(degree, q, lam, w);
    return hs_fem_tet_rule(degree, q, lam, w);
}

/* ------------------------------------------------------------------ shapes */

/* Local edges of a simplex of dimension sdim: the P2 node nv + k sits on edge k. */
HS_HD void hs_fem_edge(int sdim, int k, int *i, int *j)
{
    /* segment: (0,1); triangle: (0,1) (1,2) (2,0); tetrahedron: (0,1) (1,2) (0,2) (0,3) (2,3) (1,3) */
    const int tri[3][2] = {{0, 1}, {1, 2}, {2, 0}};
    const int tet[6][2] = {{0, 1}, {1, 2}, {0, 2}, {0, 3}, {2, 3}, {1, 3}};
    if (sdim == 1) *i = 0, *j = 1;
    else if (sdim == 2) *i = tri[k][0], *j = tri[k][1];
    else *i = tet[k][0], *j = tet[k][1];
}

/* Number of nodes of the P1/P2 element on a simplex of dimension sdim. */
HS_HD int hs_fem_nodes(int sdim, int order)
{
    const int nv = sdim + 1;
    return order == 1 ? nv : nv + (sdim == 1 ? 1 : sdim == 2 ? 3 : 6);
}

/* Shape values at barycentric point lam. */
HS_HD void hs_fem_shape(int sdim, int order, const double lam[4], double *phi)
{
    const int nv = sdim + 1;
    if (order == 1) {
        for (int i = 0; i < nv; i++) phi[i] = lam[i];
        return;
    }
    for (int i = 0; i < nv; i++) phi[i] = lam[i] * (2.0 * lam[i] - 1.0);
    const int ne = hs_fem_nodes(sdim, 2) - nv;
    for (int k = 0; k < ne; k++) {
        int i, j;
        hs_fem_edge(sdim, k, &i, &j);
        phi[nv + k] = 4.0 * lam[i] * lam[j];
    }
}

/* Gradients of the barycentric coordinates of a cell (dim 2 or 3) with vertices x (3 per vertex):
 * g[i][d] = d lam_i / d x_d; returns the cell's measure (positive for a positive cell). */
HS_HD double hs_fem_geometry(int dim, const double *x, double g[4][3])
{
    if (dim == 2) {
        const double a = x[3] - x[0], b = x[6] - x[0], c = x[4] - x[1], d = x[7] - x[1];
        const double det = a * d - b * c; /* J = [[a, b], [c, d]] */
        g[1][0] = d / det, g[1][1] = -b / det, g[1][2] = 0;
        g[2][0] = -c / det, g[2][1] = a / det, g[2][2] = 0;
        for (int k = 0; k < 3; k++) g[0][k] = -g[1][k] - g[2][k], g[3][k] = 0;
        return 0.5 * det;
    }
    double J[3][3];
    for (int c = 0; c < 3; c++)
        for (int r = 0; r < 3; r++) J[r][c] = x[3 * (c + 1) + r] - x[r];
    const double det = J[0][0] * (J[1][1] * J[2][2] - J[1][2] * J[2][1]) - J[0][1] * (J[1][0] * J[2][2] - J[1][2] * J[2][0]) +
                       J[0][2] * (J[1][0] * J[2][1] - J[1][1] * J[2][0]);
    /* rows of J^-1 are the gradients of lam_1..3 */
    const double inv = 1.0 / det;
    g[1][0] = (J[1][1] * J[2][2] - J[1][2] * J[2][1]) * inv;
    g[1][1] = (J[0][2] * J[2][1] - J[0][1] * J[2][2]) * inv;
    g[1][2] = (J[0][1] * J[1][2] - J[0][2] * J[1][1]) * inv;
    g[2][0] = (J[1][2] * J[2][0] - J[1][0] * J[2][2]) * inv;
    g[2][1] = (J[0][0] * J[2][2] - J[0][2] * J[2][0]) * inv;
    g[2][2] = (J[0][2] * J[1][0] - J[0][0] * J[1][2]) * inv;
    g[3][0] = (J[1][0] * J[2][1] - J[1][1] * J[2][0]) * inv;
    g[3][1] = (J[0][1] * J[2][0] - J[0][0] * J[2][1]) * inv;
    g[3][2] = (J[0][0] * J[1][1] - J[0][1] * J[1][0]) * inv;
    for (int k = 0; k < 3; k++) g[0][k] = -g[1][k] - g[2][k] - g[3][k];
    return det / 6.0;
}

/* Shape gradients at barycentric point lam: grad[a][d]. */
HS_HD void hs_fem_grad(int dim, int order, const double lam[4], const double g[4][3], double grad[10][3])
{
    const int nv = dim + 1;
    for (int i = 0; i < nv; i++)
        for (int d = 0; d < 3; d++) grad[i][d] = order == 1 ? g[i][d] : (4.0 * lam[i] - 1.0) * g[i][d];
    if (order == 1) return;
    const int ne = dim == 2 ? 3 : 6;
    for (int k = 0; k < ne; k++) {
        int i, j;
        hs_fem_edge(dim, k, &i, &j);
        for (int d = 0; d < 3; d++) grad[nv + k][d] = 4.0 * (lam[i] * g[j][d] + lam[j] * g[i][d]);
    }
}

/* Measure of a facet (segment in 2-D, triangle in 3-D) with vertices x (3 each). */
HS_HD double hs_fem_facet_measure(int dim, const double *x)
{
    if (dim == 2) {
        const double a = x[3] - x[0], b = x[4] - x[1];
        return sqrt(a * a + b * b);
    }
    const double u[3] = {x[3] - x[0], x[4] - x[1], x[5] - x[2]}, v[3] = {x[6] - x[0], x[7] - x[1], x[8] - x[2]};
    const double c0 = u[1] * v[2] - u[2] * v[1], c1 = u[2] * v[0] - u[0] * v[2], c2 = u[0] * v[1] - u[1] * v[0];
    return 0.5 * sqrt(c0 * c0 + c1 * c1 + c2 * c2);
}

/* ------------------------------------------------------------------ element kernels */

/* A scalar cell (at most 10 nodes): the element matrix and vector summed in the thread's own
 * arrays and stored once (no read-modify-write of device memory per quadrature point). */
HS_HD void hs_fem_cell_scalar(const hs_fem_kargs *a, int64_t e)
{
    const int dim = a->dim, nl = a->nl, nv = dim + 1;
    const int64_t ne = a->ncells;
    const int32_t *nodes = a->cell_nodes + e * nl;
    double x[12];
    for (int i = 0; i < nv; i++)
        for (int d = 0; d < 3; d++) x[3 * i + d] = a->node_x[3 * (int64_t)nodes[i] + d];
    double g[4][3];
    const double vol = hs_fem_geometry(dim, x, g);
    const double *coef = a->cell_coef + HS_FEM_NCOEF * a->cell_slot[e];
    double K[100], F[10];
    for (int k = 0; k < nl * nl; k++) K[k] = 0.0;
    for (int k = 0; k < nl; k++) F[k] = 0.0;
    const double kap = a->cK * coef[0] * vol;
    if (kap != 0.0) {
        const int ns = a->order == 1 ? 1 : (dim == 2 ? 3 : 4);
        for (int q = 0; q < ns; q++) {
            double lam[4], w, grad[10][3];
            if (a->order == 1) {
                for (int i = 0; i < 4; i++) lam[i] = 1.0 / nv;
                w = 1.0;
            } else {
                hs_fem_rule(dim, 2, q, lam, &w);
            }
            hs_fem_grad(dim, a->order, lam, g, grad);
            for (int i = 0; i < nl; i++)
                for (int j = 0; j < nl; j++)
                    K[i * nl + j] += kap * w * (grad[i][0] * grad[j][0] + grad[i][1] * grad[j][1] + grad[i][2] * grad[j][2]);
        }
    }
    const double mass = a->cM * coef[1] * vol, load = a->cF * coef[2] * vol;
    if (mass != 0.0 || load != 0.0) {
        const int nq = dim == 2 ? 7 : 14;
        for (int q = 0; q < nq; q++) {
            double lam[4], w, phi[10];
            hs_fem_rule(dim, 5, q, lam, &w);
            hs_fem_shape(dim, a->order, lam, phi);
            for (int i = 0; i < nl; i++) {
                if (mass != 0.0)
                    for (int j = 0; j < nl; j++) K[i * nl + j] += w * mass * phi[i] * phi[j];
                F[i] += w * load * phi[i];
            }
        }
    }
    if (a->lift)
        for (int j = 0; j < nl; j++) {
            if (!a->bc_mask[nodes[j]]) continue;
            const double gj = a->bc_value[nodes[j]];
            for (int i = 0; i < nl; i++) F[i] -= K[i * nl + j] * gj;
        }
    for (int k = 0; k < nl * nl; k++) a->Ke[(int64_t)k * ne + e] = K[k];
    for (int k = 0; k < nl; k++) a->Fe[(int64_t)k * ne + e] = F[k];
}

/* Cell e: Ke = cK K + cM M (scalar: kappa grad.grad and rho c phi phi; elastic: lambda div div + 2 mu
 * eps:eps, no mass), Fe = cF (source phi) - lift * Ke[:, D] g.  Elastic element matrices (up to 30 x
 * 30) are summed in place in the output. */
HS_HD void hs_fem_cell(const hs_fem_kargs *a, int64_t e)
{
    if (a->physics == HS_FEM_SCALAR) {
        hs_fem_cell_scalar(a, e);
        return;
    }
    const int dim = a->dim, nl = a->nl, nc = a->ncomp, L = nl * nc, nv = dim + 1;
    const int64_t ne = a->ncells;
    const int32_t *nodes = a->cell_nodes + e * nl;
    double x[12];
    for (int i = 0; i < nv; i++)
        for (int d = 0; d < 3; d++) x[3 * i + d] = a->node_x[3 * (int64_t)nodes[i] + d];
    double g[4][3];
    const double vol = hs_fem_geometry(dim, x, g);
    const double *coef = a->cell_coef + HS_FEM_NCOEF * a->cell_slot[e];
    double *Ke = a->Ke, *Fe = a->Fe;
    for (int k = 0; k < L * L; k++) Ke[(int64_t)k * ne + e] = 0.0;
    for (int k = 0; k < L; k++) Fe[(int64_t)k * ne + e] = 0.0;
    /* stiffness: gradients are exact with degree 2 (P2: linear gradients) */
    const int ns = a->order == 1 ? 1 : (dim == 2 ? 3 : 4);
    for (int q = 0; q < ns; q++) {
        double lam[4], w, grad[10][3];
        if (a->order == 1) {
            for (int i = 0; i < 4; i++) lam[i] = 1.0 / nv;
            w = 1.0;
        } else {
            hs_fem_rule(dim, 2, q, lam, &w);
        }
        hs_fem_grad(dim, a->order, lam, g, grad);
        const double s = a->cK * w * vol;
        if (s == 0.0) continue;
        for (int i = 0; i < nl; i++)
            for (int j = 0; j < nl; j++) {
                if (a->physics == HS_FEM_SCALAR) {
                    const double v = grad[i][0] * grad[j][0] + grad[i][1] * grad[j][1] + grad[i][2] * grad[j][2];
                    Ke[(int64_t)(i * L + j) * ne + e] += s * coef[0] * v;
                } else {
                    const double lm = coef[0], mu = coef[1];
                    const double gg = grad[i][0] * grad[j][0] + grad[i][1] * grad[j][1] + grad[i][2] * grad[j][2];
                    for (int c = 0; c < nc; c++)
                        for (int d = 0; d < nc; d++) {
                            const double v = lm * grad[i][c] * grad[j][d] + mu * grad[i][d] * grad[j][c] + (c == d ? mu * gg : 0.0);
                            Ke[(int64_t)((i * nc + c) * L + j * nc + d) * ne + e] += s * v;
                        }
                }
            }
    }
    /* mass and load: degree 5 */
    const int nq = dim == 2 ? 7 : 14;
    const int scalar = a->physics == HS_FEM_SCALAR;
    const double mass = scalar ? a->cM * coef[1] : 0.0;
    for (int q = 0; q < nq; q++) {
        double lam[4], w, phi[10];
        hs_fem_rule(dim, 5, q, lam, &w);
        hs_fem_shape(dim, a->order, lam, phi);
        const double s = w * vol;
        for (int i = 0; i < nl; i++) {
            if (mass != 0.0)
                for (int j = 0; j < nl; j++) Ke[(int64_t)(i * L + j) * ne + e] += s * mass * phi[i] * phi[j];
            for (int c = 0; c < nc; c++) {
                const double f = scalar ? coef[2] : coef[2 + c];
                Fe[(int64_t)(i * nc + c) * ne + e] += a->cF * s * f * phi[i];
            }
        }
    }
    if (!a->lift) return;
    for (int j = 0; j < L; j++) {
        const int32_t nj = nodes[j / nc];
        if (!a->bc_mask[(int64_t)nj * nc + j % nc]) continue;
        const double gj = a->bc_value[(int64_t)nj * nc + j % nc];
        for (int i = 0; i < L; i++) Fe[(int64_t)i * ne + e] -= Ke[(int64_t)(i * L + j) * ne + e] * gj;
    }
}

/* Facet f: Robin matrix cK h phi phi, load cF (flux or traction) phi, lifted like the cells. */
HS_HD void hs_fem_facet(const hs_fem_kargs *a, int64_t f)
{
    const int dim = a->dim, nl = a->nfl, nc = a->ncomp, L = nl * nc, sdim = dim - 1;
    const int64_t nf = a->nfacets;
    const int32_t *nodes = a->facet_nodes + f * nl;
    double x[9];
    for (int i = 0; i < dim; i++)
        for (int d = 0; d < 3; d++) x[3 * i + d] = a->node_x[3 * (int64_t)nodes[i] + d];
    const double area = hs_fem_facet_measure(dim, x);
    const double *coef = a->facet_coef + HS_FEM_NCOEF * a->facet_slot[f];
    double *Ke = a->Ke + (int64_t)a->ncells * (a->nl * nc) * (a->nl * nc);
    double *Fe = a->Fe + (int64_t)a->ncells * (a->nl * nc);
    for (int k = 0; k < L * L; k++) Ke[(int64_t)k * nf + f] = 0.0;
    for (int k = 0; k < L; k++) Fe[(int64_t)k * nf + f] = 0.0;
    const int scalar = a->physics == HS_FEM_SCALAR;
    const int nq = sdim == 1 ? 3 : 7;
    for (int q = 0; q < nq; q++) {
        double lam[4], w, phi[10];
        hs_fem_rule(sdim, 5, q, lam, &w);
        hs_fem_shape(sdim, a->order, lam, phi);
        const double s = w * area;
        for (int i = 0; i < nl; i++) {
            if (scalar && coef[0] != 0.0)
                for (int j = 0; j < nl; j++) Ke[(int64_t)(i * L + j) * nf + f] += a->cK * s * coef[0] * phi[i] * phi[j];
            for (int c = 0; c < nc; c++) {
                const double t = scalar ? coef[1] : coef[1 + c];
                Fe[(int64_t)(i * nc + c) * nf + f] += a->cF * s * t * phi[i];
            }
        }
    }
    if (!a->lift) return;
    for (int j = 0; j < L; j++) {
        const int32_t nj = nodes[j / nc];
        if (!a->bc_mask[(int64_t)nj * nc + j % nc]) continue;
        const double gj = a->bc_value[(int64_t)nj * nc + j % nc];
        for (int i = 0; i < L; i++) Fe[(int64_t)i * nf + f] -= Ke[(int64_t)(i * L + j) * nf + f] * gj;
    }
}

/* val[k] = sum of Kbuf over the map entries of k (in the map's order: reproducible). */
HS_HD void hs_fem_gather_one(int64_t k, const int64_t *ptr, const int64_t *idx, const double *buf, double *out)
{
    double s = 0.0;
    for (int64_t j = ptr[k]; j < ptr[k + 1]; j++) s += buf[idx[j]];
    out[k] = s;
}

#endif
