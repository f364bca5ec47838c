/* The lattice Boltzmann model's pointwise operators (D2Q9/D3Q19, BGK/TRT, AA-pattern stream-collide, boundaries), shared verbatim by the CPU and CUDA kernels. */
#ifndef HS_LBM_POINT_H
#define HS_LBM_POINT_H

#include "kernels/half.h"
#include "kernels/hd.h"
#include "solvers/cfd/lbm_impl.h"

/*
 * Lattices.  D3Q19: 0 rest; pairs (2m-1, 2m) opposite: +-x, +-y, +-z, +-(x+y), +-(x+z), +-(y+z),
 * +-(x-y), +-(x-z), +-(y-z).  D2Q9: 0 rest, +-x, +-y, +-(x+y), +-(x-y).  opp(i) = i + 1 for odd i,
 * i - 1 for even i > 0.  Components are packed two bits per direction (c + 1), so that with the
 * direction a compile-time constant (unrolled loops) they fold into constants on both backends.
 *
 * Populations are stored shifted, f~_i = f_i - w_i (FluidX3D's DDF shifting): rho = 1 + sum f~, and
 * the stored numbers are the deviations from rest, which keeps fp32/fp16 storage accurate.  f16
 * storage holds scale * f~ (scale a power of two, so no extra rounding) to keep small deviations
 * out of binary16's subnormal range.
 *
 * AA pattern (Bailey et al. 2009): one array per population, updated in place.  Even step: cell x
 * reads F_i[x] and writes its post-collision f_i to F_opp(i)[x] (no neighbour touched).  Odd step:
 * cell x reads F_opp(i)[x - c_i] and writes f_i to F_i[x + c_i].  Each population is read and
 * written once per step, and a cell's writes are exactly the slots it read.  Where the neighbour
 * x - c_i is not fluid, the incoming f_i is taken from F_i[x] in both parities (x's own
 * post-collision f_opp(i) of the previous step, which the odd step writes back to x instead of
 * streaming it into a solid): half-way bounce-back, with the wall's momentum for moving walls and
 * inlets, anti-bounce-back for outlets.
 */
HS_HD int hs_lbm_c(int q, int a, int i)
{
    const uint64_t m = q == 19 ? (a == 0 ? 0x1489489549ull : a == 1 ? 0x960949495ull : 0x2214894955ull)
                               : (a == 0 ? 0x8949ull : a == 1 ? 0x20895ull : 0x15555ull);
    return (int)((m >> (2 * i)) & 3u) - 1;
}
HS_HD int hs_lbm_opp(int i) { return i == 0 ? 0 : (i & 1) ? i + 1 : i - 1; }
HS_HD double hs_lbm_w(int q, int i)
{
    if (q == 19) return i == 0 ? 1.0 / 3.0 : i <= 6 ? 1.0 / 18.0 : 1.0 / 36.0;
    return i == 0 ? 4.0 / 9.0 : i <= 4 ? 1.0 / 9.0 : 1.0 / 36.0;
}

/* Inlet velocity (its normal component, signed) at the midpoint of the link that enters fluid cell
 * (i, j, k) along c_q: a parabola over each tangential dimension that has walls, peak u_in. */
HS_HD double hs_lbm_inlet_u(const hs_lbm_launch *L, int64_t i, int64_t j, int64_t k, int q)
{
    const int64_t p[3] = {i, j, k};
    double u = L->u_in * L->inlet_sign;
    for (int a = 0; a < 3; a++) {
        if (a == L->inlet_dim || !L->inlet_parabolic[a]) continue;
        double s = ((double)(L->offset[a] + p[a]) + 0.5 - 0.5 * hs_lbm_c(L->q, a, q)) / (double)L->global[a];
        u *= 4.0 * s * (1.0 - s);
    }
    return u;
}

/* Loops over the directions are unrolled on the GPU (the populations stay in registers). */
#if defined(__CUDA_ARCH__)
#define HS_LBM_UNROLL _Pragma("unroll")
#elif defined(__CUDACC__)
#define HS_LBM_UNROLL
#else
#define HS_LBM_UNROLL _Pragma("GCC unroll 19")
#endif
/* The pointwise functions are inlined into each (lattice, storage, parity) loop of the CPU twin too,
 * so that the directions fold into constants there as they do on the GPU. */
#ifdef __CUDACC__
#define HS_LBM_FN HS_HD
#else
#define HS_LBM_FN static inline __attribute__((always_inline))
#endif
/* binary16 <-> float: the CUDA file substitutes the hardware conversions (the same bits). */
#ifndef HS_LBM_H2F
#define HS_LBM_H2F(b) hs_f16_to_f32(b)
#define HS_LBM_F2H(v) hs_f32_to_f16(v)
#endif

/* The launch's parameters as the arithmetic type reads them: double from the doubles, float from
 * their float copies (L->kf) */
#define LBM_K_D(L, name) ((L)->name)
#define LBM_HALF_FORCE_D(L, d) (0.5 * (L)->force[d])
#define LBM_K_F(L, name) ((L)->kf.name)
#define LBM_HALF_FORCE_F(L, d) ((L)->kf.half_force[d])

#define LBM_IDX int64_t
#define LBM_REAL double
#define LBM_FN(name) hs_lbm_##name##_d
#define LBM_K LBM_K_D
#define LBM_HALF_FORCE LBM_HALF_FORCE_D
#include "solvers/cfd/lbm_point_body.h"
#undef LBM_REAL
#undef LBM_FN
#undef LBM_K
#undef LBM_HALF_FORCE
#define LBM_REAL float
#define LBM_FN(name) hs_lbm_##name##_f
#define LBM_K LBM_K_F
#define LBM_HALF_FORCE LBM_HALF_FORCE_F
#include "solvers/cfd/lbm_point_body.h"
#undef LBM_REAL
#undef LBM_FN
#undef LBM_K
#undef LBM_HALF_FORCE
#undef LBM_IDX
/* 32-bit indices for the CUDA step kernels where every element index fits: half the registers per
 * live index and one instruction per address instead of two (the arithmetic is the same) */
#ifdef __CUDACC__
#define LBM_IDX int32_t
#define LBM_REAL double
#define LBM_FN(name) hs_lbm_##name##_di
#define LBM_K LBM_K_D
#define LBM_HALF_FORCE LBM_HALF_FORCE_D
#include "solvers/cfd/lbm_point_body.h"
#undef LBM_REAL
#undef LBM_FN
#undef LBM_K
#undef LBM_HALF_FORCE
#define LBM_REAL float
#define LBM_FN(name) hs_lbm_##name##_fi
#define LBM_K LBM_K_F
#define LBM_HALF_FORCE LBM_HALF_FORCE_F
#include "solvers/cfd/lbm_point_body.h"
#undef LBM_REAL
#undef LBM_FN
#undef LBM_K
#undef LBM_HALF_FORCE
#undef LBM_IDX
#endif

#endif
