/* Ascending stable LSD radix sort of keys, or of key/value pairs, on either backend, local to the rank. */
#ifndef HS_SORT_H
#define HS_SORT_H

#include "kernels/context.h"

/* Sort keys[0..n) ascending in place; stable, so equal keys keep their order (and, in the pairs
 * version, values follow their keys).  keys and values live in the context's device memory.
 * Not collective.
 * - key dtype: HS_U32, HS_U64, HS_I32, HS_I64, HS_F32 or HS_F64.  Floats are ordered by value with
 *   -inf < ... < -0.0 < +0.0 < ... < +inf < NaN: every NaN goes last (NaNs with the sign bit clear
 *   before those with it set, each group by payload), and every key's bits are kept exactly.
 * - value dtype (pairs): any 4- or 8-byte dtype (I32, U32, F32, C64 or I64, U64, F64); values are
 *   moved as raw bits.
 * - Radix passes of 8 bits (4 for 32-bit keys, 8 for 64-bit).  Scratch of n keys (+ n values) is
 *   taken from the backend (CUDA: the context's device scratch).  CUDA: one histogram pass for all
 *   digits, then per digit one onesweep pass (each tile counts its digits and publishes the counts
 *   before ranking; keys are ranked per group of equal digits, found with ballots, or for 32-bit
 *   keys alone with lane bits OR-ed into a word per digit; decoupled
 *   look-back on per-digit tile counts; scatter through shared memory).  The result is unique, so it is
 *   identical run to run whatever the thread count or device. */
int hs_sort_keys(hs_ctx *ctx, hs_dtype key, size_t n, void *keys);
int hs_sort_pairs(hs_ctx *ctx, hs_dtype key, hs_dtype value, size_t n, void *keys, void *values);

/* Test references (tests and the benchmark only; CUDA only, HS_ERR_RUNTIME elsewhere): the first
 * CUDA sort kernels (match-any ranking), superseded by hs_sort_*'s (early counts, ballot ranking,
 * 384-thread tiles, windowed look-back); the same (unique) result. */
int hs_sort_keys_ref(hs_ctx *ctx, hs_dtype key, size_t n, void *keys);
int hs_sort_pairs_ref(hs_ctx *ctx, hs_dtype key, hs_dtype value, size_t n, void *keys, void *values);

/* Peer versions for the benchmark (CUDA only; HS_ERR_RUNTIME elsewhere): CUB DeviceRadixSort::SortKeys
 * and SortPairs on the same data (in place through a double buffer; note that CUB orders -0.0 and
 * +0.0 as equal and NaNs by their bits, unlike hs_sort_*). */
int hs_sort_keys_cub(hs_ctx *ctx, hs_dtype key, size_t n, void *keys);
int hs_sort_pairs_cub(hs_ctx *ctx, hs_dtype key, hs_dtype value, size_t n, void *keys, void *values);

#endif
