/* Backend entry points of the sort family (kernels/reduce/sort_cpu.c and kernels/reduce/sort_cuda.cu). */
#ifndef HS_SORT_IMPL_H
#define HS_SORT_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct hs_cuda_ctx;

/* The order-preserving unsigned image of a key: unsigned keys as they are, signed keys with the
 * sign bit flipped, floats by sign-magnitude to two's-order, then rotated so that every NaN
 * lands above +inf.  A bijection, so keys are moved as raw bits and never converted back. */
static inline uint32_t hs_sort_ord32(uint32_t u, int kind)
{
    if (kind == 1) return u ^ 0x80000000u; /* i32 */
    if (kind == 2) return ((u & 0x80000000u) ? ~u : u ^ 0x80000000u) - 0x007FFFFFu; /* f32 */
    return u;
}
static inline uint64_t hs_sort_ord64(uint64_t u, int kind)
{
    if (kind == 1) return u ^ 0x8000000000000000ull;
    if (kind == 2) return ((u & 0x8000000000000000ull) ? ~u : u ^ 0x8000000000000000ull) - 0x000FFFFFFFFFFFFFull;
    return u;
}
/* 0 unsigned, 1 signed, 2 float */
static inline int hs_sort_key_kind(hs_dtype t)
{
    return (t == HS_I32 || t == HS_I64) ? 1 : (t == HS_F32 || t == HS_F64) ? 2 : 0;
}

/* n >= 2; value_bytes is 0 (keys only), 4 or 8; key_bytes 4 or 8. */
int hs_sort_apply_cpu(int key_kind, size_t key_bytes, size_t value_bytes, size_t n, void *keys, void *values);
int hs_sort_apply_cuda(struct hs_cuda_ctx *cu, int key_kind, size_t key_bytes, size_t value_bytes, size_t n, void *keys,
                       void *values);
/* The superseded kernels, kept as the test references hs_sort_*_ref (kernels/reduce/sort.h). */
int hs_sort_apply_ref_cuda(struct hs_cuda_ctx *cu, int key_kind, size_t key_bytes, size_t value_bytes, size_t n,
                           void *keys, void *values);
int hs_sort_apply_cub_cuda(struct hs_cuda_ctx *cu, hs_dtype key, size_t value_bytes, size_t n, void *keys, void *values);

#ifdef __cplusplus
}
#endif
#endif
