/* OpenMP reductions: fixed chunks summed pairwise, so results do not depend on the thread count. */
#include <math.h>
#include <stdlib.h>

#include "kernels/error.h"
#include "kernels/reduce/reduce_impl.h"

#define CHUNK 16384 /* elements per parallel task: fixed, so the tree depends on n only */
#define LEAF 256    /* below this a tree node is summed in 8 interleaved lanes */

/* Combinations that propagate NaN: once a NaN is in the accumulator it stays. */
static inline double max_nan(double a, double b) { return (b > a || b != b) ? b : a; }
static inline double min_nan(double a, double b) { return (b < a || b != b) ? b : a; }

static int is_sum_op(hs_rop op) { return op == HS_ROP_SUM || op == HS_ROP_ASUM || op == HS_ROP_SSQ; }

static double combine(hs_rop op, double a, double b)
{
    if (is_sum_op(op)) return a + b;
    return op == HS_ROP_MIN ? min_nan(a, b) : max_nan(a, b);
}

/* One leaf per (type, op): 8 lanes so the compiler can vectorise, lanes combined pairwise. */
#define DEFINE_LEAF(NAME, T, INIT, MAP, ACC)                                          \
    static double NAME(const void *xv, size_t n, double s)                            \
    {                                                                                 \
        const T *x = (const T *)xv;                                                   \
        double a[8] = {INIT, INIT, INIT, INIT, INIT, INIT, INIT, INIT};               \
        size_t i = 0;                                                                 \
        (void)s;                                                                      \
        for (; i + 8 <= n; i += 8)                                                    \
            for (int j = 0; j < 8; j++) {                                             \
                double v = (double)x[i + j];                                          \
                v = MAP;                                                              \
                a[j] = ACC(a[j], v);                                                  \
            }                                                                         \
        for (int j = 0; i < n; i++, j++) {                                            \
            double v = (double)x[i];                                                  \
            v = MAP;                                                                  \
            a[j] = ACC(a[j], v);                                                      \
        }                                                                             \
        return ACC(ACC(ACC(a[0], a[1]), ACC(a[2], a[3])), ACC(ACC(a[4], a[5]), ACC(a[6], a[7]))); \
    }

#define ADD(a, b) ((a) + (b))
#define LEAVES(T, SUF)                                                                \
    DEFINE_LEAF(leaf_sum_##SUF, T, 0.0, v, ADD)                                       \
    DEFINE_LEAF(leaf_asum_##SUF, T, 0.0, fabs(v), ADD)                                \
    DEFINE_LEAF(leaf_ssq_##SUF, T, 0.0, (v * s) * (v * s), ADD)                       \
    DEFINE_LEAF(leaf_min_##SUF, T, INFINITY, v, min_nan)                              \
    DEFINE_LEAF(leaf_max_##SUF, T, -INFINITY, v, max_nan)                             \
    DEFINE_LEAF(leaf_amax_##SUF, T, -INFINITY, fabs(v), max_nan)
LEAVES(double, f64)
LEAVES(float, f32)

typedef double (*leaf_fn)(const void *x, size_t n, double s);

static leaf_fn pick_leaf(hs_dtype t, hs_rop op)
{
    static const leaf_fn f64[] = {leaf_sum_f64, leaf_min_f64, leaf_max_f64, leaf_asum_f64, leaf_ssq_f64, leaf_amax_f64};
    static const leaf_fn f32[] = {leaf_sum_f32, leaf_min_f32, leaf_max_f32, leaf_asum_f32, leaf_ssq_f32, leaf_amax_f32};
    return t == HS_F64 ? f64[op] : f32[op];
}

/* Pairwise tree: split at a multiple of LEAF so the leaves are the same whatever the recursion. */
static double tree(leaf_fn leaf, hs_rop op, const char *x, size_t es, size_t n, double s)
{
    if (n <= LEAF) return leaf(x, n, s);
    size_t half = ((n / LEAF + 1) / 2) * LEAF;
    return combine(op, tree(leaf, op, x, es, half, s), tree(leaf, op, x + half * es, es, n - half, s));
}

/* The operation that combines partial results (already mapped by |.| or squared). */
static hs_rop partial_op(hs_rop op)
{
    if (is_sum_op(op)) return HS_ROP_SUM;
    return op == HS_ROP_MIN ? HS_ROP_MIN : HS_ROP_MAX;
}

int hs_reduce_apply_cpu(hs_dtype t, hs_rop op, size_t n, const void *x, double scale, double *result)
{
    size_t es = t == HS_F64 ? sizeof(double) : sizeof(float);
    leaf_fn leaf = pick_leaf(t, op);
    size_t nchunks = (n + CHUNK - 1) / CHUNK;
    if (nchunks <= 1) {
        *result = tree(leaf, op, (const char *)x, es, n, scale);
        return HS_OK;
    }
    double *part = malloc(nchunks * sizeof *part);
    if (!part) return HS_FAIL(HS_ERR_RUNTIME, "out of memory for %zu reduction partials", nchunks);
#pragma omp parallel for schedule(static)
    for (size_t c = 0; c < nchunks; c++) {
        size_t lo = c * CHUNK, len = n - lo < CHUNK ? n - lo : CHUNK;
        part[c] = tree(leaf, op, (const char *)x + lo * es, es, len, scale);
    }
    hs_rop pop = partial_op(op);
    *result = tree(pick_leaf(HS_F64, pop), pop, (const char *)part, sizeof(double), nchunks, 1.0);
    free(part);
    return HS_OK;
}

/* ---------------------------------------------------------------- argmax / argmin */

typedef struct {
    double v;
    size_t i;
} vi;

/* a precedes b in index order: b replaces a only when strictly better, or a NaN first seen. */
static vi better(vi a, vi b, int want_max)
{
    if (a.v != a.v) return a;
    if (b.v != b.v) return b;
    if (want_max ? b.v > a.v : b.v < a.v) return b;
    return a;
}

#define DEFINE_SCAN_EXT(NAME, T)                                                      \
    static vi NAME(const T *x, size_t lo, size_t hi, int want_max)                    \
    {                                                                                 \
        vi best = {(double)x[lo], lo};                                                \
        for (size_t i = lo + 1; i < hi && best.v == best.v; i++) {                    \
            double v = (double)x[i];                                                  \
            if (v != v || (want_max ? v > best.v : v < best.v)) best = (vi){v, i};    \
        }                                                                             \
        return best;                                                                  \
    }
DEFINE_SCAN_EXT(ext_f64, double)
DEFINE_SCAN_EXT(ext_f32, float)

int hs_reduce_argext_cpu(hs_dtype t, int want_max, size_t n, const void *x, size_t *index, double *value)
{
    size_t nchunks = (n + CHUNK - 1) / CHUNK;
    vi *part = malloc(nchunks * sizeof *part);
    if (!part) return HS_FAIL(HS_ERR_RUNTIME, "out of memory for %zu reduction partials", nchunks);
#pragma omp parallel for schedule(static) if (nchunks > 1)
    for (size_t c = 0; c < nchunks; c++) {
        size_t lo = c * CHUNK, hi = n - lo < CHUNK ? n : lo + CHUNK;
        part[c] = t == HS_F64 ? ext_f64((const double *)x, lo, hi, want_max) : ext_f32((const float *)x, lo, hi, want_max);
    }
    vi best = part[0];
    for (size_t c = 1; c < nchunks; c++) best = better(best, part[c], want_max);
    *index = best.i;
    *value = best.v;
    free(part);
    return HS_OK;
}
