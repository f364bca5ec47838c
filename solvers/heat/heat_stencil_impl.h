/* Backend entry points of the heat solver's grid kernels (heat_stencil_cpu.c / heat_stencil_cuda.cu). */
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

typedef struct hs_heat_ghosts {
    int64_t stride[3];
    int64_t origin;
    int64_t local[3];
    int hw[3];
    int dim, side;          /* the face */
    int kind;               /* hs_bc_kind */
    double value, dx;
} hs_heat_ghosts;

int hs_heat_apply_cpu(const hs_heat_launch *L, const double *T, double *out);
int hs_heat_ghosts_cpu(const hs_heat_ghosts *G, double *T);
int hs_heat_load_cpu(const int64_t stride[3], int64_t origin, const int64_t local[3], const double *src, double *T);

int hs_heat_apply_cuda(struct hs_cuda_ctx *cu, const hs_heat_launch *L, const double *T, double *out);
int hs_heat_ghosts_cuda(struct hs_cuda_ctx *cu, const hs_heat_ghosts *G, double *T);
int hs_heat_load_cuda(struct hs_cuda_ctx *cu, const int64_t stride[3], int64_t origin, const int64_t local[3],
                      const double *src, double *T);

#ifdef __cplusplus
}
#endif
#endif
