/* Backend entry points of the state-vector kernels (solvers/quantum/sv.h). */
#ifndef HS_QSV_IMPL_H
#define HS_QSV_IMPL_H

#include <stdint.h>

#include "kernels/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The index layout of one gate application, computed once on the host. */
typedef struct hs_sv_gate {
    int nloc, nt, npos;
    int pos[64];          /* sorted bit positions of targets and controls (zeros inserted there) */
    uint64_t cval;        /* control bits ORed into every group base */
    uint64_t cmask;
    uint64_t offs[64];    /* offset of matrix index k from the group base */
    int tbit[8];          /* target positions in matrix order */
    int src[64];          /* permutation: row r takes column src[r] */
    double ph[128];       /* permutation phases / diagonal entries (interleaved complex) */
} hs_sv_gate;

/* The layout of a gate on nt targets (distinct, < nloc) with controls cmask (values cval) and
 * matrix m of kind mk (diagonal entries and permutation sources are taken from m). */
void hs_sv_gate_layout(hs_sv_gate *g, int nloc, int nt, const int *targets, uint64_t cmask, uint64_t cval,
                       const double *m, int mk);

int hs_sv_apply_cpu(hs_dtype t, void *a, const hs_sv_gate *g, const double *m, int mk);
int hs_sv_prob_blocks_cpu(hs_dtype t, const void *a, int nloc, int bbits, double *out);
int hs_sv_marginal_cpu(hs_dtype t, const void *a, int nloc, int nm, const int *q, double *out);
int hs_sv_collapse_cpu(hs_dtype t, void *a, int nloc, uint64_t mask, uint64_t val, double scale);
int hs_sv_pauli_expect_cpu(hs_dtype t, const void *a, int nloc, uint64_t xm, uint64_t zm, double out[2]);
int hs_sv_inner_cpu(hs_dtype t, const void *a, const void *b, int nloc, double out[2]);
int hs_sv_pauli_axpy_cpu(hs_dtype t, void *y, const void *x, int nloc, uint64_t xm, uint64_t zm, const double c[2]);
int hs_sv_pack_cpu(hs_dtype t, void *a, int nloc, int q, int v, int64_t start, int64_t count, void *buf, int unpack);

/* HS_QSV_MMA: whether complex64 dense 4-6 qubit gates go to the tensor cores: 0 never, 2 always,
 * else (unset, 1) the default choice of sv_cuda.cu.  Read here once for the kernels and the
 * planner's cost table (fusion.c), which must agree. */
enum { HS_SV_MMA_NEVER = 0, HS_SV_MMA_DEFAULT = 1, HS_SV_MMA_ALWAYS = 2 };
int hs_sv_mma_mode(void);

struct hs_cuda_ctx;
int hs_sv_model_device_cuda(struct hs_cuda_ctx *cu);
int hs_sv_apply_cuda(struct hs_cuda_ctx *cu, hs_dtype t, void *a, const hs_sv_gate *g, const double *m, int mk);
int hs_sv_prob_blocks_cuda(struct hs_cuda_ctx *cu, hs_dtype t, const void *a, int nloc, int bbits, double *out);
int hs_sv_marginal_cuda(struct hs_cuda_ctx *cu, hs_dtype t, const void *a, int nloc, int nm, const int *q, double *out);
int hs_sv_collapse_cuda(struct hs_cuda_ctx *cu, hs_dtype t, void *a, int nloc, uint64_t mask, uint64_t val, double scale);
int hs_sv_pauli_expect_cuda(struct hs_cuda_ctx *cu, hs_dtype t, const void *a, int nloc, uint64_t xm, uint64_t zm,
                            double out[2]);
int hs_sv_inner_cuda(struct hs_cuda_ctx *cu, hs_dtype t, const void *a, const void *b, int nloc, double out[2]);
int hs_sv_pauli_axpy_cuda(struct hs_cuda_ctx *cu, hs_dtype t, void *y, const void *x, int nloc, uint64_t xm,
                          uint64_t zm, const double c[2]);
int hs_sv_pack_cuda(struct hs_cuda_ctx *cu, hs_dtype t, void *a, int nloc, int q, int v, int64_t start, int64_t count,
                    void *buf, int unpack);

#ifdef __cplusplus
}
#endif
#endif
