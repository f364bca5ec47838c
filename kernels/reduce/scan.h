/* Prefix sums (inclusive and exclusive scans) of one vector on either backend, local to the rank. */
#ifndef HS_SCAN_H
#define HS_SCAN_H

#include "kernels/context.h"

/* out[i] = in[0] + ... + in[i] (exclusive = 0) or in[0] + ... + in[i-1] (exclusive = 1, out[0] = 0).
 * dtype HS_F64, HS_F32, HS_I32, HS_I64, HS_U32 or HS_U64; in and out live in the context's device
 * memory and may be the same array (in == out); partial overlap is not allowed.  Not collective.
 * - Integers are exact; signed types wrap around in two's complement on overflow (no UB).
 * - Floats accumulate in double (f32 too, rounded to float only when stored).
 * - CPU: chunks of 65536 elements scanned sequentially, each chunk starting from the sequential
 *   sum of the preceding chunk totals; bitwise reproducible whatever the OpenMP thread count.
 * - CUDA, default implementation "new", on sm_90 and later (in a build for compute_90 or later) with
 *   in and out 16-byte aligned: a
 *   persistent kernel fed by the bulk-copy engine over tiles of 2816 (8-byte types), 3840 (f32) or
 *   5376 (32-bit integers) elements, 256 tiles to a round.  The prefix of tile t in round r is
 *   base(r) + (the totals of round r's tiles before t, in a fixed tree), base(r) being the
 *   left-to-right sum of whole-round totals (each a fixed tree): bitwise reproducible run to run
 *   for every type, and independent of the grid size.  (Float results of this path and of the
 *   one below differ in the last bits: the same data at another alignment, or a build for an
 *   older target, gives other, equally reproducible, bits.)  The error of out[i] is bounded by about
 *   (64 + i / 720896) * 1.1e-16 * sum_{j<=i} |in[j]| for f64.
 * - CUDA, default implementation "new", otherwise (older GPUs, unaligned data): one pass with
 *   decoupled look-back over tiles of 6144 (8-byte types), 4096 (f32) or 8192 (32-bit integers)
 *   elements, each scanned in a fixed
 *   thread/warp order.  Every type (integers, and floats whatever ctx->deterministic says) uses a
 *   canonical order: the prefix
 *   before tile t is by definition the left-to-right sum ((T0 + T1) + T2) + ... of the tile
 *   totals; a tile continues that sum from the nearest published prefix, adding the remaining
 *   tile totals one at a time in index order, which gives the same bits whichever prefix was
 *   found, so results are bitwise reproducible run to run while the data is still read and
 *   written once.  The error of out[i] is then bounded by about (64 + i / 6144) * 1.1e-16 *
 *   sum_{j<=i} |in[j]| (typically ~sqrt of that).  (A free look-back, adding values in arrival
 *   order, gave wrong integer sums on the H200 with thousands of tiles in flight; it is not used.)
 */
int hs_scan(hs_ctx *ctx, hs_dtype t, int exclusive, size_t n, const void *in, void *out);

/* Test reference (tests and the benchmark only; CUDA only, HS_ERR_RUNTIME elsewhere): the
 * previous CUDA kernel, offset by tile prefixes combined in a fixed base-32 tree over the tile
 * index; always reproducible, error about (64 + log2 n) * 1.1e-16 * sum |in[j]|, slower. */
int hs_scan_ref(hs_ctx *ctx, hs_dtype t, int exclusive, size_t n, const void *in, void *out);

/* Peer version for the benchmark (CUDA only; HS_ERR_RUNTIME elsewhere): CUB DeviceScan::InclusiveSum
 * or ExclusiveSum in the element type (f32 accumulates in float there). */
int hs_scan_cub(hs_ctx *ctx, hs_dtype t, int exclusive, size_t n, const void *in, void *out);

#endif
