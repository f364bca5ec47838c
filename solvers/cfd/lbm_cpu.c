/* The lattice Boltzmann model's kernels, CPU twin: OpenMP over the rows of the box, the pointwise operators of lbm_point.h. */
#include "kernels/dispatch.h"
#include "kernels/error.h"
#include "solvers/cfd/lbm_point.h"

/* Points in the launch's box: loops over fewer run on one thread (HS_CPU_SERIAL_BELOW). */
static int64_t box_points(const hs_lbm_launch *L)
{
    return (L->hi[0] - L->lo[0]) * (L->hi[1] - L->lo[1]) * (L->hi[2] - L->lo[2]);
}

/* One step over the box with the lattice, storage and parity as constants (inlined per case). */
#define STEP_LOOP(FN, Q, S, ODD)                                                      \
    do {                                                                              \
        _Pragma("omp parallel for collapse(2) schedule(static) if (box_points(L) >= HS_CPU_SERIAL_BELOW)") \
        for (int64_t k = L->lo[2]; k < L->hi[2]; k++)                                 \
            for (int64_t j = L->lo[1]; j < L->hi[1]; j++)                             \
                for (int64_t i = L->lo[0]; i < L->hi[0]; i++) FN(L, i, j, k, Q, S, ODD); \
    } while (0)

#define STEP_CASES(Q)                                                                                   \
    do {                                                                                                \
        if (L->store == HS_LBM_F64) {                                                                   \
            if (L->odd) STEP_LOOP(hs_lbm_cell_d, Q, HS_LBM_F64, 1);                                     \
            else STEP_LOOP(hs_lbm_cell_d, Q, HS_LBM_F64, 0);                                            \
        } else if (L->store == HS_LBM_F32) {                                                            \
            if (L->odd) STEP_LOOP(hs_lbm_cell_f, Q, HS_LBM_F32, 1);                                     \
            else STEP_LOOP(hs_lbm_cell_f, Q, HS_LBM_F32, 0);                                            \
        } else {                                                                                        \
            if (L->odd) STEP_LOOP(hs_lbm_cell_f, Q, HS_LBM_F16, 1);                                     \
            else STEP_LOOP(hs_lbm_cell_f, Q, HS_LBM_F16, 0);                                            \
        }                                                                                               \
    } while (0)

static void moments(const hs_lbm_launch *L)
{
    const int Q = L->q, S = L->store;
#pragma omp parallel for collapse(2) schedule(static) if (box_points(L) >= HS_CPU_SERIAL_BELOW)
    for (int64_t k = L->lo[2]; k < L->hi[2]; k++)
        for (int64_t j = L->lo[1]; j < L->hi[1]; j++)
            for (int64_t i = L->lo[0]; i < L->hi[0]; i++) {
                if (S == HS_LBM_F64) hs_lbm_moments_cell_d(L, i, j, k, Q, S);
                else hs_lbm_moments_cell_f(L, i, j, k, Q, S);
            }
}

static void links(const hs_lbm_launch *L)
{
    const int Q = L->q, S = L->store;
#pragma omp parallel for schedule(static) if (L->nlinks >= HS_CPU_SERIAL_BELOW)
    for (int64_t l = 0; l < L->nlinks; l++) {
        if (S == HS_LBM_F64) hs_lbm_link_d(L, l, Q, S);
        else hs_lbm_link_f(L, l, Q, S);
    }
}

int hs_lbm_launch_cpu(const hs_lbm_launch *L)
{
    if (L->op == HS_LBM_LINKS) {
        links(L);
        return HS_OK;
    }
    for (int d = 0; d < 3; d++)
        if (L->hi[d] <= L->lo[d]) return HS_OK;
    if (L->op == HS_LBM_MOMENTS) {
        moments(L);
        return HS_OK;
    }
    if (L->q == 19) STEP_CASES(19);
    else STEP_CASES(9);
    return HS_OK;
}
