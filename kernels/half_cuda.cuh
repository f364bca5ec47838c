// Element types of 16-bit storage on the GPU and their conversions, shared by every CUDA kernel that is
// templated on the stored type (the convolution family, the surrogate's loss kernels).
#ifndef HS_HALF_CUDA_CUH
#define HS_HALF_CUDA_CUH

#include <stdint.h>

#include <cuda_fp16.h>

#include "kernels/half.h"

namespace hs {

// 16-bit storage as distinct types, so that templates pick the right conversion.
struct bf16s {
    uint16_t b;
};
struct f16s {
    uint16_t b;
};

// R: the compute (= accumulation) type; ld/st convert one element (st rounds once, to nearest even).
template <typename T> struct tr;
template <> struct tr<double> {
    typedef double R;
    __device__ static double ld(double v) { return v; }
    __device__ static double st(double v) { return v; }
    __device__ static double from_double(double v) { return v; }
};
template <> struct tr<float> {
    typedef float R;
    __device__ static float ld(float v) { return v; }
    __device__ static float st(float v) { return v; }
    __device__ static float from_double(double v) { return (float)v; }
};
template <> struct tr<bf16s> {
    typedef float R;
    __device__ static float ld(bf16s v) { return hs_bf16_to_f32(v.b); }
    __device__ static bf16s st(float v) { bf16s o; o.b = hs_f32_to_bf16(v); return o; }
    __device__ static bf16s from_double(double v) { return st((float)v); }
};
template <> struct tr<f16s> {
    typedef float R;
    __device__ static float ld(f16s v) { return hs_f16_to_f32(v.b); }
    __device__ static f16s st(float v) { f16s o; o.b = hs_f32_to_f16(v); return o; }
    __device__ static f16s from_double(double v) { return st((float)v); }
};

// binary16 <-> float by the hardware's conversion instructions: the same bits as hs_f16_to_f32 and
// hs_f32_to_f16 (round to nearest even), one instruction instead of a dozen integer operations, for
// bandwidth-bound kernels that convert every element they move (the lattice Boltzmann populations).
// (Host-callable too, for code shared by both sides: there they are the integer versions.)
__host__ __device__ __forceinline__ float f16_to_f32_hw(uint16_t b)
{
#ifdef __CUDA_ARCH__
    return __half2float(__ushort_as_half(b));
#else
    return hs_f16_to_f32(b);
#endif
}
__host__ __device__ __forceinline__ uint16_t f32_to_f16_hw(float v)
{
#ifdef __CUDA_ARCH__
    return __half_as_ushort(__float2half_rn(v));
#else
    return hs_f32_to_f16(v);
#endif
}

} // namespace hs

#endif
