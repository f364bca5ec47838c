/* Internal: backend entry points of the structured-grid family (grid_cpu.c, grid_cuda.cu) and halo setup. */
#ifndef HS_GRID_IMPL_H
#define HS_GRID_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/hd.h"
#include "kernels/types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct hs_cuda_ctx;
struct hs_field;

/* A strided copy of ex*ey*ez elements between two layouts (x stride 1 on both sides); the pointers
 * handed with it point at the first element.  (The public hs_box of grid.h is a box of points.) */
typedef struct hs_grid_copy {
    int64_t ex, ey, ez;
    int64_t src_sy, src_sz;
    int64_t dst_sy, dst_sz;
} hs_grid_copy;

/* Local reduction operators (norm2 is a sum of squares here; the square root comes after the ranks). */
enum { HS_GRID_RED_SUM = 0, HS_GRID_RED_SUMSQ = 1, HS_GRID_RED_MIN = 2, HS_GRID_RED_MAX = 3, HS_GRID_RED_MAXABS = 4 };

/* min/max that propagate NaN (as kernels/reduce/reduce.h does): once NaN, always NaN. */
HS_HD double hs_grid_min_nan(double m, double x) { return (x < m || x != x) ? x : m; }
HS_HD double hs_grid_max_nan(double m, double x) { return (x > m || x != x) ? x : m; }

/* One face's ghost filling (hs_field_fill_ghosts) in plain numbers, for both backends. */
typedef struct hs_grid_ghosts {
    int64_t stride[3];  /* element strides of the field layout (x = 1) */
    int64_t origin;     /* element index of local point (0, 0, 0) */
    int64_t local[3];   /* points owned */
    int hw[3];
    int dim, side;      /* the face */
    int kind;           /* HS_BC_DIRICHLET or HS_BC_NEUMANN */
    int node;           /* 1: points lie on the wall (face dimension of a face-centred field) */
    double value, dx;
} hs_grid_ghosts;

/* Local index along the face's dimension of the m-th ghost (m = 0 next to the face) and of the
 * interior point it mirrors.  Cell-centred: the wall lies halfway between -1 and 0 (local and
 * local - 1 above); node: on point 0 (local - 1 above). */
HS_HD void hs_grid_ghost_pair(const hs_grid_ghosts *G, int m, int64_t *ghost, int64_t *inside)
{
    const int64_t n = G->local[G->dim];
    const int64_t s = G->node ? 1 : 0;
    *ghost = G->side ? n + m : -1 - m;
    *inside = G->side ? n - 1 - s - m : s + m;
}

/* The ghost value from the mirrored interior value: Dirichlet 2 g - u; Neumann (outward
 * derivative g) u + d dx g with d the ghost-to-mirror distance in points (2m + 1, or 2m + 2 on nodes). */
HS_HD double hs_grid_ghost_value(int kind, int node, double inside, int m, double value, double dx)
{
    if (kind == 1) return 2.0 * value - inside;                              /* Dirichlet */
    return inside + (node ? 2.0 * m + 2.0 : 2.0 * m + 1.0) * dx * value;     /* Neumann */
}

/* Halo machinery owned by halo.c, created with the field. */
int hs_halo_setup(struct hs_field *f);
/* Elements of each of the buffers hs_halo_setup gives face (d, side) of f (0: the face does not
 * exchange, or exchanges with this rank itself); f needs its layout only. */
size_t hs_halo_face_elems(const struct hs_field *f, int d, int side);
/* The bytes of a field's halo plan (the host structure hs_halo_setup allocates). */
size_t hs_halo_plan_bytes(void);
void hs_halo_teardown(struct hs_field *f);

/* CPU (OpenMP) */
int hs_grid_copy_box_cpu(size_t esize, const void *src, void *dst, const hs_grid_copy *b);
int hs_grid_copy_boxes_cpu(size_t esize, int n, const void *const *src, void *const *dst, const hs_grid_copy *b);
int hs_grid_fill_cpu(hs_dtype t, void *x, size_t n, double value);
/* The ghost layers of one face (G) of the field at `data` (element (-hw, -hw, -hw)). */
int hs_grid_ghosts_cpu(hs_dtype t, const hs_grid_ghosts *G, void *data);
/* src at the box origin, box strides sy, sz; result in double (compensated for sums). */
int hs_grid_reduce_cpu(hs_dtype t, const void *src, int64_t ex, int64_t ey, int64_t ez, int64_t sy, int64_t sz,
                       int op, double *result);

/* CUDA; stream NULL means the context stream. */
int hs_grid_copy_box_cuda(struct hs_cuda_ctx *cu, void *stream, size_t esize, const void *src, void *dst,
                          const hs_grid_copy *b);
/* n copies of one box shape (the same b for each: src[c] -> dst[c]) in one launch per 64 copies. */
int hs_grid_copy_boxes_cuda(struct hs_cuda_ctx *cu, void *stream, size_t esize, int n, const void *const *src, void *const *dst,
                            const hs_grid_copy *b);
/* The same copy with cudaMemcpy3DAsync (the benchmark's peer); needs src_sz % src_sy == 0 and
 * dst_sz % dst_sy == 0, as every box of a field and of a packed buffer has. */
int hs_grid_copy_box_memcpy3d_cuda(struct hs_cuda_ctx *cu, void *stream, size_t esize, const void *src, void *dst,
                                   const hs_grid_copy *b);
int hs_grid_fill_cuda(struct hs_cuda_ctx *cu, hs_dtype t, void *x, size_t n, double value);
int hs_grid_ghosts_cuda(struct hs_cuda_ctx *cu, hs_dtype t, const hs_grid_ghosts *G, void *data);
int hs_grid_reduce_cuda(struct hs_cuda_ctx *cu, hs_dtype t, const void *src, int64_t ex, int64_t ey, int64_t ez,
                        int64_t sy, int64_t sz, int op, double *result);
/* Between a strided device box (origin dev, strides sy, sz) and a contiguous host array of
 * ex*ey*ez elements, staged through the context's device scratch; synchronous. */
int hs_grid_box_to_host_cuda(struct hs_cuda_ctx *cu, size_t esize, const void *dev, int64_t ex, int64_t ey,
                             int64_t ez, int64_t sy, int64_t sz, void *host);
int hs_grid_box_from_host_cuda(struct hs_cuda_ctx *cu, size_t esize, const void *host, void *dev, int64_t ex,
                               int64_t ey, int64_t ez, int64_t sy, int64_t sz);
/* A non-blocking stream of the highest priority, so that halo packing overtakes bulk interior work. */
int hs_grid_stream_create_cuda(void **stream);
/* An event for ordering only (no timing, which makes record and wait cheaper). */
int hs_grid_event_create_cuda(void **event);
/* *done = 1 when all work before the event has finished (does not wait). */
int hs_grid_event_done_cuda(void *event, int *done);
/* Wait on the host until the event has happened. */
int hs_grid_event_sync_cuda(void *event);

#ifdef __cplusplus
}
#endif
#endif
