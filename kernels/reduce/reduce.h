/* Reductions over one vector (sum, min, max, argmax/argmin, norms) on either backend, local to the rank. */
#ifndef HS_REDUCE_H
#define HS_REDUCE_H

#include "kernels/context.h"

typedef enum { HS_REDUCE_SUM, HS_REDUCE_MIN, HS_REDUCE_MAX } hs_reduce_op;

/* Accuracy and reproducibility of every function here:
 * - x lives in the context's device memory; dtype is HS_F64 or HS_F32; results are returned on the
 *   host in double.  Nothing is collective over MPI: all-reduce the result for distributed vectors.
 * - Sums accumulate in double (f32 input too) in a fixed tree: on the CPU chunks of 16384 elements,
 *   each summed pairwise down to leaves of 256 in 8 interleaved lanes, then the chunk sums pairwise;
 *   on CUDA a fixed grid (a multiple of the SM count) where each thread sums its grid-stride share
 *   (about n / (threads in the grid) elements) and the thread sums are combined in a fixed tree.
 *   The error is bounded by about (L + log2 n) * 1.1e-16 * sum|x_i| with L = 32 on the CPU and
 *   L = n / (2048 * SMs) on CUDA (about 1000 for 2^28 elements on 132 SMs); typical errors are far
 *   smaller (random-walk growth, ~1e-15 relative in the tests).  For f32 data this is ~1e-12
 *   relative or better, far better than a float accumulator.
 * - ctx->deterministic is honoured by construction: the order depends only on n (and, on CUDA, the
 *   device's SM count), never on the OpenMP thread count or on timing; min, max and arg* are exact.
 * - NaN: min, max, the infinity norm and the sum propagate NaN (any NaN in x gives NaN).  argmax and
 *   argmin return the index of the first NaN when there is one (numpy's convention).  -0.0 and +0.0
 *   compare equal, so the first of them wins in argmax/argmin. */

/* result = sum, min or max of x[0..n).  n == 0 gives 0 for sum, +inf for min, -inf for max. */
int hs_reduce(hs_ctx *ctx, hs_dtype t, hs_reduce_op op, size_t n, const void *x, double *result);

/* First index of the maximum (minimum) of x and that value (exact).  n == 0 gives index 0 and
 * value -inf (+inf).  With NaNs: the first NaN's index and NaN. */
int hs_argmax(hs_ctx *ctx, hs_dtype t, size_t n, const void *x, size_t *index, double *value);
int hs_argmin(hs_ctx *ctx, hs_dtype t, size_t n, const void *x, size_t *index, double *value);

/* Vector norm: which = 1 (sum |x_i|), 2 (Euclidean) or 0 (max |x_i|, the infinity norm).  The
 * 2-norm accumulates squares in double and rescales by max|x_i| when the plain sum over- or
 * underflows (f64 data beyond ~1e154 or below ~1e-154), so it never overflows spuriously. */
int hs_norm(hs_ctx *ctx, hs_dtype t, int which, size_t n, const void *x, double *result);

/* Peer version for the benchmark (CUDA only; HS_ERR_RUNTIME elsewhere): CUB DeviceReduce::Sum
 * (f64; f32 data summed into a double accumulator with DeviceReduce::Reduce). */
int hs_reduce_sum_cub(hs_ctx *ctx, hs_dtype t, size_t n, const void *x, double *result);

#endif
