/* Prefix sums (inclusive and exclusive scans) of one vector on either backend, local to the rank. */
#ifndef HS_SCAN_H
#define HS_SCAN_H

#include "kernels/context.h"

/* out[i] = in[0] + ... + in[i] (exclusive = 0) or in[0] + ... + in[i-1] (exclusive = 1, out[0] = 0).
 * dtype HS_F64, HS_F32, HS_I32, HS_I64, HS_U32 or HS_U64; in and out live in the context's device
 * memory and may be the same array (in == out); partial overlap is not allowed.  Not collective.
 * - Integers are exact; signed types wrap around in two's complement on overflow (no UB).
 * - Floats accumulate in double (f32 too, rounded to float only when stored).  The order is fixed:
 *   on the CPU chunks of 65536 elements scanned sequentially, each chunk starting from the
 *   sequential sum of the preceding chunk totals; on CUDA tiles of a few thousand elements scanned
 *   in a fixed thread/warp tree, offset by tile prefixes combined in a fixed base-32 tree over the
 *   tile index.  Results are therefore bitwise reproducible run to run (independent of the OpenMP
 *   thread count on the CPU and of block scheduling on CUDA).  The error of out[i] is bounded by about
 *   (65536 on CPU, 64 on CUDA + log2 n) * 1.1e-16 * sum_{j<=i} |in[j]|, typically far less. */
int hs_scan(hs_ctx *ctx, hs_dtype t, int exclusive, size_t n, const void *in, void *out);

/* Peer version for the benchmark (CUDA only; HS_ERR_RUNTIME elsewhere): CUB DeviceScan::InclusiveSum
 * or ExclusiveSum in the element type (f32 accumulates in float there). */
int hs_scan_cub(hs_ctx *ctx, hs_dtype t, int exclusive, size_t n, const void *in, void *out);

#endif
