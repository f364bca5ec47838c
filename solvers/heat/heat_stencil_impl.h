/* Backend entry points of the heat solver's operator (heat_stencil_cpu.c / heat_stencil_cuda.cu). */
#ifndef HS_HEAT_STENCIL_IMPL_H
#define HS_HEAT_STENCIL_IMPL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct hs_cuda_ctx;

/* The GPU's 7-point kernel for constant k (heat.gpu_kernel, in the order of its choices): auto picks
 * vec2 where every row is 16-byte aligned and holds whole pairs, else zc; cell is the simple
 * one-thread-per-cell baseline; vec2 falls back to zc where it does not apply. */
enum { HS_HEAT_KERNEL_AUTO = 0, HS_HEAT_KERNEL_CELL = 1, HS_HEAT_KERNEL_ZC = 2, HS_HEAT_KERNEL_VEC2 = 3 };
#define HS_HEAT_KERNEL_CHOICES "auto|cell|zc|vec2"

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
    int kernel;             /* HS_HEAT_KERNEL_* */
} hs_heat_launch;

int hs_heat_apply_cpu(const hs_heat_launch *L, const double *T, double *out);

int hs_heat_apply_cuda(struct hs_cuda_ctx *cu, const hs_heat_launch *L, const double *T, double *out);

#ifdef __cplusplus
}
#endif
#endif
