/* CPU (OpenMP) backend of the multigrid family: loops per operation over the level's cells, running the pointwise code of mg_point.h. */
#include "kernels/error.h"
#include "kernels/mg/mg_point.h"

/* Below this many cells a launch runs on one thread: coarse levels are smaller than a fork costs. */
#define PAR_MIN 16384

/* The cells of the launch, planes and rows over the threads.  Each thread works on its own copy
 * of the launch record (firstprivate): the compiler then knows that the stores through the
 * record's pointers cannot change the record, and keeps its fields in registers. */
#define CELLS(call)                                                                                     \
    do {                                                                                                \
        _Pragma("omp parallel for collapse(2) schedule(static) firstprivate(K) if (n0 * n1 * n2 > PAR_MIN)") \
        for (int64_t k = 0; k < n2; k++)                                                                \
            for (int64_t j = 0; j < n1; j++)                                                            \
                for (int64_t i = 0; i < n0; i++) call;                                                  \
    } while (0)

/* One row (j, k) of a stencil operation: its two end cells with their own descriptors (walls along
 * x), the inside with the row's descriptor, whose y and z parts, diagonal and Jacobi factor are
 * the same along the row, so that the inside is one loop without branches. */
static void stencil_row(const hs_mg_launch *K, int64_t j, int64_t k)
{
    const int64_t n0 = K->n[0];
    hs_mg_stencil_at(K, K->op, 0, j, k);
    if (n0 > 1) hs_mg_stencil_at(K, K->op, n0 - 1, j, k);
    if (n0 < 3) return;
    hs_mg_nb nb;
    hs_mg_nb_at(K, 1, j, k, &nb); /* an inside cell: no wall along x */
    const double jac = hs_mg_jacobi(K, &nb);
    const int64_t P0 = hs_mg_at(&K->lu, 0, j, k), Po0 = hs_mg_at(&K->lo, 0, j, k), Pr0 = hs_mg_at(&K->lr, 0, j, k);
    const int64_t q0 = hs_mg_q(K, 0, j, k);
    const int nd = K->ndim, has_u = K->u != 0, has_c1 = K->c1 != 0.0, to_field = K->op == HS_MG_RESIDUAL;
    /* one loop per combination of the flags, each with them as constants */
#define INSIDE(call)                                                                                    \
    do {                                                                                                \
        for (int64_t i = 1; i < n0 - 1; i++) call;                                                      \
    } while (0)
#define BY_ND(macro)                                                                                    \
    do {                                                                                                \
        if (nd == 1) macro(1);                                                                          \
        else if (nd == 2) macro(2);                                                                     \
        else macro(3);                                                                                  \
    } while (0)
#define CHEB(ND)                                                                                        \
    do {                                                                                                \
        if (has_u && has_c1) INSIDE(hs_mg_cheb_cell(K, P0 + i, Po0 + i, q0 + i, &nb, jac, 1, 1, ND));   \
        else if (has_u) INSIDE(hs_mg_cheb_cell(K, P0 + i, Po0 + i, q0 + i, &nb, jac, 1, 0, ND));        \
        else INSIDE(hs_mg_cheb_cell(K, P0 + i, Po0 + i, q0 + i, &nb, jac, 0, 0, ND));                   \
    } while (0)
#define RESIDUAL(ND)                                                                                    \
    do {                                                                                                \
        if (has_u && to_field) INSIDE(hs_mg_residual_cell(K, P0 + i, Pr0 + i, q0 + i, &nb, 1, 1, ND));  \
        else if (has_u) INSIDE(hs_mg_residual_cell(K, P0 + i, Pr0 + i, q0 + i, &nb, 1, 0, ND));         \
        else if (to_field) INSIDE(hs_mg_residual_cell(K, P0 + i, Pr0 + i, q0 + i, &nb, 0, 1, ND));      \
        else INSIDE(hs_mg_residual_cell(K, P0 + i, Pr0 + i, q0 + i, &nb, 0, 0, ND));                    \
    } while (0)
#define APPLY(ND) INSIDE(hs_mg_apply_cell(K, P0 + i, q0 + i, &nb, ND))
    switch (K->op) {
    case HS_MG_CHEB: BY_ND(CHEB); break;
    case HS_MG_RESIDUAL:
    case HS_MG_RESIDUAL_C: BY_ND(RESIDUAL); break;
    default: BY_ND(APPLY); break;
    }
#undef INSIDE
#undef BY_ND
#undef CHEB
#undef RESIDUAL
#undef APPLY
}

/* One coarse row (J, K) of the restriction: the fine rows that feed it and their y-z weights once,
 * in the order of hs_mg_restrict_at, then the x sums along the row. */
static void restrict_row(const hs_mg_launch *K, int64_t J, int64_t Kz)
{
    const int hx = K->halve[0], hy = K->ndim > 1 && K->halve[1], hz = K->ndim > 2 && K->halve[2];
    const int64_t ny = hy ? 4 : 1, nz = hz ? 4 : 1;
    const double *row[16];
    double w[16];
    int rows = 0;
    for (int64_t c = 0; c < nz; c++) {
        double wz;
        const int64_t z = hs_mg_restrict_row(K, 2, hz, Kz, c, &wz);
        for (int64_t b = 0; b < ny; b++, rows++) {
            double wy;
            const int64_t y = hs_mg_restrict_row(K, 1, hy, J, b, &wy);
            row[rows] = K->r + hs_mg_at(&K->lr, 0, y, z);
            w[rows] = wy * wz;
        }
    }
    double *out = K->out + hs_mg_q(K, 0, J, Kz);
    for (int64_t I = 0; I < K->n[0]; I++) {
        const int64_t fx = hs_mg_restrict_first(K, 0, hx, I);
        double s = 0.0;
        for (int t = 0; t < rows; t++) s += w[t] * hs_mg_restrict_x(K, row[t], fx, hx);
        out[I] = s;
    }
}

/* One fine row (j, k) of the prolongation, likewise (the order of hs_mg_prolong_at). */
static void prolong_row(const hs_mg_launch *K, int64_t j, int64_t k)
{
    const int hx = K->halve[0], hy = K->ndim > 1 && K->halve[1], hz = K->ndim > 2 && K->halve[2];
    const int64_t ny = hy ? 2 : 1, nz = hz ? 2 : 1;
    const double *row[4];
    double w[4];
    int rows = 0;
    for (int64_t c = 0; c < nz; c++) {
        double wz;
        const int64_t z = hs_mg_prolong_row(K, 2, hz, k, c, &wz);
        for (int64_t b = 0; b < ny; b++, rows++) {
            double wy;
            const int64_t y = hs_mg_prolong_row(K, 1, hy, j, b, &wy);
            row[rows] = K->uc + hs_mg_at(&K->lc, 0, y, z);
            w[rows] = wy * wz;
        }
    }
    double *u = K->u_out + hs_mg_at(&K->lo, 0, j, k);
    for (int64_t i = 0; i < K->n[0]; i++) {
        int64_t sx;
        const int64_t px = hs_mg_parent(hx, i, K->off_f[0], K->off_c[0], &sx);
        double s = 0.0;
        for (int t = 0; t < rows; t++) s += w[t] * hs_mg_prolong_x(K, row[t], px, sx, hx);
        u[i] = K->accumulate ? u[i] + s : s;
    }
}

int hs_mg_launch_cpu(const hs_mg_launch *L)
{
    const hs_mg_launch K = *L;
    const int64_t n0 = K.n[0], n1 = K.n[1], n2 = K.n[2];
    if (n0 <= 0 || n1 <= 0 || n2 <= 0) return HS_OK;
    switch (K.op) {
    case HS_MG_CHEB:
    case HS_MG_RESIDUAL:
    case HS_MG_RESIDUAL_C:
    case HS_MG_APPLY: {
#pragma omp parallel for collapse(2) schedule(static) firstprivate(K) if (n0 * n1 * n2 > PAR_MIN)
        for (int64_t k = 0; k < n2; k++)
            for (int64_t j = 0; j < n1; j++) stencil_row(&K, j, k);
        break;
    }
    case HS_MG_RESTRICT:
    case HS_MG_PROLONG: {
        const int restr = K.op == HS_MG_RESTRICT;
#pragma omp parallel for collapse(2) schedule(static) firstprivate(K) if (n0 * n1 * n2 > PAR_MIN)
        for (int64_t k = 0; k < n2; k++)
            for (int64_t j = 0; j < n1; j++) {
                if (restr) restrict_row(&K, j, k);
                else prolong_row(&K, j, k);
            }
        break;
    }
    default: CELLS(hs_mg_cell(&K, K.op, i, j, k)); break;
    }
    return HS_OK;
}
