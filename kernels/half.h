/* 16-bit floating-point storage (bfloat16, IEEE binary16) <-> float, the same bits on CPU and GPU. */
#ifndef HS_HALF_H
#define HS_HALF_H

/* HS_BF16 and HS_F16 values are stored as uint16_t; arithmetic is done in float.  Both
 * conversions to 16 bits round to nearest, ties to even (what the GPU's __float2bfloat16_rn and
 * __float2half_rn do), overflow to infinity, keep subnormals (binary16) and turn NaN into a quiet
 * NaN, so the CPU twins and the CUDA kernels store identical bits for identical floats.  The
 * functions are written with integer operations only, usable from host and device code (HS_HD). */

#include <stdint.h>
#include <string.h>

#include "kernels/hd.h"

HS_HD uint32_t hs_f32_bits(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    return x;
}

HS_HD float hs_bits_f32(uint32_t x)
{
    float f;
    memcpy(&f, &x, sizeof f);
    return f;
}

HS_HD float hs_bf16_to_f32(uint16_t h) { return hs_bits_f32((uint32_t)h << 16); }

HS_HD uint16_t hs_f32_to_bf16(float f)
{
    uint32_t x = hs_f32_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u); /* quiet NaN */
    x += 0x7fffu + ((x >> 16) & 1u);                                             /* ties to even */
    return (uint16_t)(x >> 16);
}

HS_HD float hs_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    if (e == 0x1f) return hs_bits_f32(sign | 0x7f800000u | (m << 13));
    if (e != 0) return hs_bits_f32(sign | ((e + 112u) << 23) | (m << 13));
    float v = (float)m * 5.9604644775390625e-8f; /* subnormal: m 2^-24, exact */
    return sign ? -v : v;
}

HS_HD uint16_t hs_f32_to_f16(float f)
{
    uint32_t x = hs_f32_bits(f), sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
    if (ax >= 0x7f800000u) return (uint16_t)(sign | (ax > 0x7f800000u ? 0x7e00u : 0x7c00u));
    if (ax >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* >= 65520 rounds to infinity */
    if (ax < 0x38800000u) {                                    /* below 2^-14: subnormal or zero */
        if (ax < 0x33000000u) return (uint16_t)sign;           /* <= 2^-25 rounds to zero */
        uint32_t e = ax >> 23, m = (ax & 0x7fffffu) | 0x800000u, shift = 126u - e;
        uint32_t r = m >> shift, rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1u);
        if (rem > half || (rem == half && (r & 1u))) r++;
        return (uint16_t)(sign | r);
    }
    uint32_t v = ax - 0x38000000u, r = v >> 13, rem = v & 0x1fffu; /* exponent rebiased 127 -> 15 */
    if (rem > 0x1000u || (rem == 0x1000u && (r & 1u))) r++;         /* a carry moves into the exponent */
    return (uint16_t)(sign | r);
}

#endif
