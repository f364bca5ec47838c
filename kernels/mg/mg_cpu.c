/* CPU (OpenMP) backend of the multigrid family: a loop over the level's cells per operation, running the pointwise code of mg_point.h. */
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

/* The same for the stencil operations: the two ends of each row as they are (walls along x), the
 * inside with xedge = 0, which the compiler turns into a loop without x branches and with the
 * row's one Jacobi factor. */
#define ROWS(fn)                                                                                        \
    do {                                                                                                \
        _Pragma("omp parallel for collapse(2) schedule(static) firstprivate(K) if (n0 * n1 * n2 > PAR_MIN)") \
        for (int64_t k = 0; k < n2; k++)                                                                \
            for (int64_t j = 0; j < n1; j++) {                                                          \
                fn(&K, 0, j, k, 1);                                                                     \
                for (int64_t i = 1; i < n0 - 1; i++) fn(&K, i, j, k, 0);                                \
                if (n0 > 1) fn(&K, n0 - 1, j, k, 1);                                                    \
            }                                                                                           \
    } while (0)

int hs_mg_launch_cpu(const hs_mg_launch *L)
{
    const hs_mg_launch K = *L;
    const int64_t n0 = K.n[0], n1 = K.n[1], n2 = K.n[2];
    if (n0 <= 0 || n1 <= 0 || n2 <= 0) return HS_OK;
    switch (K.op) {
    case HS_MG_CHEB: ROWS(hs_mg_cheb_at); break;
    case HS_MG_RESIDUAL: ROWS(hs_mg_residual_at); break;
    case HS_MG_RESIDUAL_C: ROWS(hs_mg_residual_c_at); break;
    case HS_MG_APPLY: ROWS(hs_mg_apply_at); break;
    case HS_MG_PROLONG: CELLS(hs_mg_prolong_store_at(&K, i, j, k)); break;
    default: CELLS(hs_mg_cell(&K, i, j, k)); break;
    }
    return HS_OK;
}
