/* CPU (OpenMP) backend of the structured-grid family: strided box copies (halo pack/unpack), fills, ghosts at walls, local reductions. */
#include <math.h>
#include <stdint.h>

#include "kernels/error.h"
#include "kernels/grid/grid_impl.h"

/* Below this many bytes a box is copied by one thread: forking costs more than it saves. */
#define PAR_BYTES (256 * 1024)
/* Reductions split rows into this many fixed chunks so that the result does not depend on the
 * number of threads. */
#define RED_CHUNKS 64

/* Typed rows rather than memcpy: x faces are rows of a few elements, where a call per row costs
 * more than the copy. */
#define DEFINE_COPY_BOX(NAME, T)                                                               \
    static void NAME(const T *s, T *d, const hs_grid_copy *b)                                        \
    {                                                                                          \
        int64_t rows = b->ey * b->ez;                                                          \
        _Pragma("omp parallel for schedule(static) if (rows * b->ex * 8 > PAR_BYTES)")         \
        for (int64_t r = 0; r < rows; r++) {                                                   \
            int64_t j = r % b->ey, k = r / b->ey;                                              \
            const T *sp = s + j * b->src_sy + k * b->src_sz;                                   \
            T *dp = d + j * b->dst_sy + k * b->dst_sz;                                         \
            for (int64_t i = 0; i < b->ex; i++) dp[i] = sp[i];                                 \
        }                                                                                      \
    }
DEFINE_COPY_BOX(copy_box_64, uint64_t)
DEFINE_COPY_BOX(copy_box_32, uint32_t)
DEFINE_COPY_BOX(copy_box_16, uint16_t)

int hs_grid_copy_box_cpu(size_t es, const void *src, void *dst, const hs_grid_copy *b)
{
    if (b->ex <= 0 || b->ey <= 0 || b->ez <= 0) return HS_OK;
    if (es == 8) copy_box_64(src, dst, b);
    else if (es == 4) copy_box_32(src, dst, b);
    else if (es == 2) copy_box_16(src, dst, b);
    else return HS_FAIL(HS_ERR_RUNTIME, "box copy of %zu-byte elements is not supported", es);
    return HS_OK;
}

int hs_grid_copy_boxes_cpu(size_t es, int n, const void *const *src, void *const *dst, const hs_grid_copy *b)
{
    for (int c = 0; c < n; c++) HS_CHECK(hs_grid_copy_box_cpu(es, src[c], dst[c], b));
    return HS_OK;
}

int hs_grid_fill_cpu(hs_dtype t, void *x, size_t n, double value)
{
    if (t == HS_F64) {
        double *p = x;
#pragma omp parallel for schedule(static) if (n * 8 > PAR_BYTES)
        for (size_t i = 0; i < n; i++) p[i] = value;
    } else {
        float *p = x;
        float v = (float)value;
#pragma omp parallel for schedule(static) if (n * 4 > PAR_BYTES)
        for (size_t i = 0; i < n; i++) p[i] = v;
    }
    return HS_OK;
}

/* Ghosts of one face: the face spans the whole allocation in the other two dimensions, ghosts
 * included; each (a, b) column of ghosts is independent of the others.  Small faces (a multigrid's
 * coarse levels) run on one thread. */
#define DEFINE_GHOSTS(NAME, T)                                                                              \
    static void NAME(const hs_grid_ghosts *G, T *u)                                                         \
    {                                                                                                       \
        int d = G->dim, e1 = (d + 1) % 3, e2 = (d + 2) % 3;                                                 \
        int64_t n1 = G->local[e1] + 2 * G->hw[e1], n2 = G->local[e2] + 2 * G->hw[e2];                       \
        _Pragma("omp parallel for collapse(2) schedule(static) if (n1 * n2 * 8 > PAR_BYTES)")              \
        for (int64_t b = 0; b < n2; b++)                                                                    \
            for (int64_t a = 0; a < n1; a++) {                                                              \
                int64_t base = G->origin + (a - G->hw[e1]) * G->stride[e1] + (b - G->hw[e2]) * G->stride[e2]; \
                if (G->node && G->kind == 1)                                                                \
                    u[base + (G->side ? G->local[d] - 1 : 0) * G->stride[d]] = (T)G->value;                 \
                for (int m = 0; m < G->hw[d]; m++) {                                                        \
                    int64_t gh, in;                                                                         \
                    hs_grid_ghost_pair(G, m, &gh, &in);                                                     \
                    u[base + gh * G->stride[d]] =                                                           \
                        (T)hs_grid_ghost_value(G->kind, G->node, u[base + in * G->stride[d]], m, G->value, G->dx); \
                }                                                                                           \
            }                                                                                               \
    }
DEFINE_GHOSTS(ghosts_64, double)
DEFINE_GHOSTS(ghosts_32, float)

int hs_grid_ghosts_cpu(hs_dtype t, const hs_grid_ghosts *G, void *data)
{
    if (t == HS_F64) ghosts_64(G, data);
    else ghosts_32(G, data);
    return HS_OK;
}

/* Error-free accumulation (two-sum): s + c carries the exact running sum to within c's rounding. */
static inline void acc_sum(double *s, double *c, double x)
{
    double t = *s + x, bp = t - *s;
    *c += (*s - (t - bp)) + (x - bp);
    *s = t;
}

typedef struct { double s, c, m; } partial;

static inline double load(hs_dtype t, const void *row, int64_t i)
{
    return t == HS_F64 ? ((const double *)row)[i] : (double)((const float *)row)[i];
}

/* One loop per operator, so that the inner loops carry no branch. */
static void reduce_row(hs_dtype t, const void *row, int64_t n, int op, partial *p)
{
    switch (op) {
    case HS_GRID_RED_SUM:
        for (int64_t i = 0; i < n; i++) acc_sum(&p->s, &p->c, load(t, row, i));
        break;
    case HS_GRID_RED_SUMSQ:
        for (int64_t i = 0; i < n; i++) {
            double x = load(t, row, i);
            acc_sum(&p->s, &p->c, x * x);
        }
        break;
    case HS_GRID_RED_MIN:
        for (int64_t i = 0; i < n; i++) p->m = hs_grid_min_nan(p->m, load(t, row, i));
        break;
    case HS_GRID_RED_MAX:
        for (int64_t i = 0; i < n; i++) p->m = hs_grid_max_nan(p->m, load(t, row, i));
        break;
    default:
        for (int64_t i = 0; i < n; i++) p->m = hs_grid_max_nan(p->m, fabs(load(t, row, i)));
        break;
    }
}

static double neutral(int op)
{
    return op == HS_GRID_RED_MIN ? INFINITY : op == HS_GRID_RED_MAX ? -INFINITY : 0.0;
}

int hs_grid_reduce_cpu(hs_dtype t, const void *src, int64_t ex, int64_t ey, int64_t ez, int64_t sy, int64_t sz,
                       int op, double *result)
{
    partial part[RED_CHUNKS];
    int64_t rows = ey * ez;
    size_t es = hs_dtype_size(t);
#pragma omp parallel for schedule(static) if (rows * ex * (int64_t)es > PAR_BYTES)
    for (int c = 0; c < RED_CHUNKS; c++) {
        partial p = {0, 0, neutral(op)};
        for (int64_t r = rows * c / RED_CHUNKS; r < rows * (c + 1) / RED_CHUNKS; r++) {
            int64_t j = r % ey, k = r / ey;
            reduce_row(t, (const char *)src + (size_t)(j * sy + k * sz) * es, ex, op, &p);
        }
        part[c] = p;
    }
    partial all = {0, 0, neutral(op)};
    for (int c = 0; c < RED_CHUNKS; c++) {
        acc_sum(&all.s, &all.c, part[c].s);
        acc_sum(&all.s, &all.c, part[c].c);
        all.m = op == HS_GRID_RED_MIN ? hs_grid_min_nan(all.m, part[c].m) : hs_grid_max_nan(all.m, part[c].m);
    }
    *result = (op == HS_GRID_RED_SUM || op == HS_GRID_RED_SUMSQ) ? all.s + all.c : all.m;
    return HS_OK;
}
