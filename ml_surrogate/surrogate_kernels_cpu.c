/* The surrogate's pointwise kernels, OpenMP backend. */
#include <stdint.h>

#include "kernels/error.h"
#include "kernels/half.h"
#include "ml_surrogate/surrogate_kernels_impl.h"

/* T: storage, R: compute type, LD/ST: conversions. */
#define SURR_KERNELS(NAME, T, R, LD, ST)                                                                        \
    static void mse_##NAME(size_t n, const T *p, const T *q, double scale, T *dp, double *sq)                   \
    {                                                                                                           \
        _Pragma("omp parallel for schedule(static) if (n > 65536)") for (size_t i = 0; i < n; i++)             \
        {                                                                                                       \
            R e = (R)(LD(p[i]) - LD(q[i]));                                                                     \
            sq[i] = (double)e * (double)e;                                                                      \
            dp[i] = ST((R)(scale * (double)e));                                                                 \
        }                                                                                                       \
    }                                                                                                           \
    static void add_frame_##NAME(int frames, size_t elems, const T *src, T *y)                                 \
    {                                                                                                           \
        size_t total = (size_t)frames * elems;                                                                  \
        _Pragma("omp parallel for schedule(static) if (total > 65536)") for (size_t i = 0; i < total; i++)     \
            y[i] = ST((R)(LD(y[i]) + LD(src[i % elems])));                                                      \
    }

#define ID(x) (x)
SURR_KERNELS(f64, double, double, ID, ID)
SURR_KERNELS(f32, float, float, ID, ID)
SURR_KERNELS(bf16, uint16_t, float, hs_bf16_to_f32, hs_f32_to_bf16)
SURR_KERNELS(f16, uint16_t, float, hs_f16_to_f32, hs_f32_to_f16)

int hs_surr_mse_cpu(hs_dtype t, size_t n, const void *pred, const void *target, double scale, void *dpred, double *sq)
{
    switch (t) {
    case HS_F64: mse_f64(n, pred, target, scale, dpred, sq); break;
    case HS_F32: mse_f32(n, pred, target, scale, dpred, sq); break;
    case HS_BF16: mse_bf16(n, pred, target, scale, dpred, sq); break;
    default: mse_f16(n, pred, target, scale, dpred, sq); break;
    }
    return HS_OK;
}

int hs_surr_add_frame_cpu(hs_dtype t, int frames, size_t elems, const void *src, void *y)
{
    switch (t) {
    case HS_F64: add_frame_f64(frames, elems, src, y); break;
    case HS_F32: add_frame_f32(frames, elems, src, y); break;
    case HS_BF16: add_frame_bf16(frames, elems, src, y); break;
    default: add_frame_f16(frames, elems, src, y); break;
    }
    return HS_OK;
}
