/* Backend entry points of the heat solver's operator (heat_stencil_cpu.c / heat_stencil_cuda.cu). */
#ifndef HS_HEAT_STENCIL_IMPL_H
#define HS_HEAT_STENCIL_IMPL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct hs_cuda_ctx;

/* Everything a kernel needs, in plain numbers (no MPI, no hs_field). */
typedef struct hs_heat_launch {
    int order;
    int64_t stride[3];      /* element strides of the field layout per dimension (0 when unused) */
    int64_t origin;         /* element index of local cell (0, 0, 0) */
    int64_t local[3];
    int64_t lo[3], hi[3];   /* the box */
    double inv_dx2[3];
    double alpha, inv_rhoc, q_const;
    const double *k, *q;
    double a, b, c;
    int out_contiguous;
} hs_heat_launch;

int hs_heat_apply_cpu(const hs_heat_launch *L, const double *T, double *out);

int hs_heat_apply_cuda(struct hs_cuda_ctx *cu, const hs_heat_launch *L, const double *T, double *out);

#ifdef __cplusplus
}
#endif
#endif
