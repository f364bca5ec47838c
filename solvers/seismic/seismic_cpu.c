/* The seismic solver's kernels, CPU twin: OpenMP over the rows of the box, the pointwise updates of seismic_point.h. */
#include "kernels/error.h"

#define SEIS_T double
#define SEIS_FN(name) name##_f64
#include "solvers/seismic/seismic_point.h"
#undef SEIS_T
#undef SEIS_FN
#define SEIS_T float
#define SEIS_FN(name) name##_f32
#include "solvers/seismic/seismic_point.h"
#undef SEIS_T
#undef SEIS_FN

/* Boxes smaller than this run on one thread: a parallel region costs more than their work (the CPML
 * slabs of small grids, the free-surface row). */
#define SMALL_BOX 16384

static int64_t box_points(const hs_seis_launch *L)
{
    return (L->hi[0] - L->lo[0]) * (L->hi[1] - L->lo[1]) * (L->hi[2] - L->lo[2]);
}

/* The box loop with the radius as a constant, so that the stencil loops unroll; rows are independent
 * (each update writes its own point only), so x vectorises. */
#define BOX_LOOP(FN, R)                                                                            \
    _Pragma("omp parallel for collapse(2) schedule(static) if (box_points(L) > SMALL_BOX)")       \
    for (int64_t k = L->lo[2]; k < L->hi[2]; k++)                                                  \
        for (int64_t j = L->lo[1]; j < L->hi[1]; j++) {                                            \
            _Pragma("omp simd")                                                                     \
            for (int64_t i = L->lo[0]; i < L->hi[0]; i++) FN(L, i, j, k, R);                       \
        }

#define DEFINE_RUN(NAME)                                                                            \
    static void run_##NAME(const hs_seis_launch *L)                                                \
    {                                                                                              \
        switch (L->radius) {                                                                       \
        case 1: BOX_LOOP(NAME, 1) break;                                                           \
        case 2: BOX_LOOP(NAME, 2) break;                                                           \
        default: BOX_LOOP(NAME, 4) break;                                                          \
        }                                                                                          \
    }

#define DEFINE_RUNS(T)                                                                             \
    DEFINE_RUN(seis_ac_step_##T)                                                                   \
    DEFINE_RUN(seis_ac_psi_##T)                                                                    \
    DEFINE_RUN(seis_ac_pml_##T)                                                                    \
    DEFINE_RUN(seis_av_step_##T)                                                                   \
    DEFINE_RUN(seis_av_psi_##T)                                                                    \
    DEFINE_RUN(seis_av_pml_##T)                                                                    \
    DEFINE_RUN(seis_adj_step_##T)                                                                  \
    DEFINE_RUN(seis_adj_psi_##T)                                                                   \
    DEFINE_RUN(seis_adj_pml_##T)                                                                   \
    DEFINE_RUN(seis_adj_mem_##T)                                                                   \
    DEFINE_RUN(seis_el_vel_##T)                                                                    \
    DEFINE_RUN(seis_el_stress_##T)                                                                 \
    static void run_seis_mirror_##T(const hs_seis_launch *L)                                       \
    {                                                                                              \
        for (int64_t k = L->lo[2]; k < L->hi[2]; k++)                                              \
            for (int64_t j = L->lo[1]; j < L->hi[1]; j++)                                          \
                for (int64_t i = L->lo[0]; i < L->hi[0]; i++) seis_mirror_##T(L, i, j, k, 0);      \
    }                                                                                              \
    static void run_seis_el_image_##T(const hs_seis_launch *L)                                     \
    {                                                                                              \
        for (int64_t k = L->lo[2]; k < L->hi[2]; k++)                                              \
            for (int64_t j = L->lo[1]; j < L->hi[1]; j++)                                          \
                for (int64_t i = L->lo[0]; i < L->hi[0]; i++) seis_el_image_##T(L, i, j, k, 0);    \
    }                                                                                              \
    static void run_seis_inject_##T(const hs_seis_launch *L)                                       \
    {                                                                                              \
        for (int64_t g = 0; g < L->ngrp; g++) seis_inject_##T(L, g);                               \
    }                                                                                              \
    static void run_seis_sample_##T(const hs_seis_launch *L)                                       \
    {                                                                                              \
        for (int64_t g = 0; g < L->ngrp; g++) seis_sample_##T(L, g);                               \
    }

/* AC_MARCH: one column along dim per (a, b) of the other two dimensions */
#define MARCH_LOOP(FN, R)                                                                          \
    _Pragma("omp parallel for collapse(2) schedule(static) if (box_points(L) > SMALL_BOX)")       \
    for (int64_t b = L->lo[d2]; b < L->hi[d2]; b++)                                                \
        for (int64_t a = L->lo[d1]; a < L->hi[d1]; a++) FN(L, d, a, b, R);

#define DEFINE_MARCH(T)                                                                            \
    static void run_seis_ac_march_##T(const hs_seis_launch *L)                                     \
    {                                                                                              \
        const int d = L->dim, d1 = d == 0 ? 1 : 0, d2 = d == 2 ? 1 : 2;                            \
        switch (L->radius) {                                                                       \
        case 1: MARCH_LOOP(seis_ac_march_##T, 1) break;                                            \
        case 2: MARCH_LOOP(seis_ac_march_##T, 2) break;                                            \
        default: MARCH_LOOP(seis_ac_march_##T, 4) break;                                           \
        }                                                                                          \
    }

DEFINE_RUNS(f64)
DEFINE_RUNS(f32)
DEFINE_MARCH(f64)
DEFINE_MARCH(f32)

#define DISPATCH(T)                                                                                \
    switch (L->op) {                                                                               \
    case HS_SEIS_AC_STEP: run_seis_ac_step_##T(L); break;                                          \
    case HS_SEIS_AC_PSI: run_seis_ac_psi_##T(L); break;                                            \
    case HS_SEIS_AC_PML: run_seis_ac_pml_##T(L); break;                                            \
    case HS_SEIS_AV_STEP: run_seis_av_step_##T(L); break;                                          \
    case HS_SEIS_AV_PSI: run_seis_av_psi_##T(L); break;                                            \
    case HS_SEIS_AV_PML: run_seis_av_pml_##T(L); break;                                            \
    case HS_SEIS_ADJ_STEP: run_seis_adj_step_##T(L); break;                                        \
    case HS_SEIS_ADJ_PSI: run_seis_adj_psi_##T(L); break;                                          \
    case HS_SEIS_ADJ_PML: run_seis_adj_pml_##T(L); break;                                          \
    case HS_SEIS_ADJ_MEM: run_seis_adj_mem_##T(L); break;                                          \
    case HS_SEIS_AC_MARCH: run_seis_ac_march_##T(L); break;                                        \
    case HS_SEIS_EL_VEL: run_seis_el_vel_##T(L); break;                                            \
    case HS_SEIS_EL_STRESS: run_seis_el_stress_##T(L); break;                                      \
    case HS_SEIS_EL_IMAGE: run_seis_el_image_##T(L); break;                                        \
    case HS_SEIS_MIRROR: run_seis_mirror_##T(L); break;                                            \
    case HS_SEIS_INJECT: run_seis_inject_##T(L); break;                                            \
    case HS_SEIS_SAMPLE: run_seis_sample_##T(L); break;                                            \
    default: return HS_FAIL(HS_ERR_RUNTIME, "seismic kernel: operation %d not implemented", L->op); \
    }

int hs_seis_launch_cpu(const hs_seis_launch *L)
{
    if (L->op != HS_SEIS_INJECT && L->op != HS_SEIS_SAMPLE)
        for (int d = 0; d < 3; d++)
            if (L->hi[d] <= L->lo[d]) return HS_OK;
    if (L->f32) {
        DISPATCH(f32)
    } else {
        DISPATCH(f64)
    }
    return HS_OK;
}
