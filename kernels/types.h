/* Element types and small shared enums used by every kernel family. */
#ifndef HS_TYPES_H
#define HS_TYPES_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    HS_F64 = 0, /* double */
    HS_F32 = 1, /* float */
    HS_I32 = 2, /* int32_t */
    HS_I64 = 3, /* int64_t */
    HS_U32 = 4, /* uint32_t */
    HS_U64 = 5, /* uint64_t */
    HS_C128 = 6, /* double complex, interleaved re,im */
    HS_C64 = 7,  /* float complex, interleaved re,im */
    HS_BF16 = 8, /* bfloat16 (uint16_t storage; kernels/half.h converts) */
    HS_F16 = 9   /* IEEE binary16 (uint16_t storage) */
} hs_dtype;

/* Size in bytes of one element; 0 for an unknown type. */
static inline size_t hs_dtype_size(hs_dtype t)
{
    static const size_t sz[] = {8, 4, 4, 8, 4, 8, 16, 8, 2, 2};
    return (unsigned)t < sizeof sz / sizeof sz[0] ? sz[t] : 0;
}

/* Human-readable type name ("f64", ...). */
static inline const char *hs_dtype_name(hs_dtype t)
{
    static const char *nm[] = {"f64", "f32", "i32", "i64", "u32", "u64", "c128", "c64", "bf16", "f16"};
    return (unsigned)t < sizeof nm / sizeof nm[0] ? nm[t] : "?";
}

/* Reduction operators of the collectives (kernels/comm/comm.h). */
typedef enum { HS_COMM_SUM = 0, HS_COMM_MIN = 1, HS_COMM_MAX = 2 } hs_comm_op;

/* Where an object's data lives and which backend computes on it. */
typedef enum { HS_DEVICE_CPU = 0, HS_DEVICE_CUDA = 1 } hs_device;

#ifdef __cplusplus
}
#endif
#endif
