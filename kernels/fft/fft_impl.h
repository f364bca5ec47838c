/* Internal interface between the FFT front ends (fft.c, dfft.c) and their FFTW / cuFFT backends. */
#ifndef HS_FFT_IMPL_H
#define HS_FFT_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct hs_cuda_ctx;

/* Kinds as plain ints so this header needs nothing from fft.h (0 C2C, 1 R2C, 2 C2R). */
enum { HS_FFT_DESC_C2C = 0, HS_FFT_DESC_R2C = 1, HS_FFT_DESC_C2R = 2 };

/* One transform family in the cuFFT "advanced layout" vocabulary, plus a second batch loop:
 * element x of transform (o, b) lives at o*outer_idist + b*idist + offset(x) where
 * offset(x) = ((x0*inembed[1] + x1)*inembed[2] + x2)*istride (likewise for the output).
 * Strides and distances count elements of the array's own type (real or complex). */
typedef struct hs_fft_desc {
    int rank;                 /* 1..3 */
    int64_t n[3];             /* logical sizes, row-major */
    int kind;                 /* HS_FFT_DESC_* */
    hs_dtype precision;       /* HS_F64 or HS_F32 */
    int64_t batch, idist, odist;
    int64_t istride, ostride;
    int64_t inembed[3], onembed[3];
    int64_t outer, outer_idist, outer_odist;
    int64_t total;            /* prod n: the factor of a forward + backward round trip */
    int64_t in_span, out_span; /* elements from the first to one past the last touched */
    /* a load hook (hs_fft_load_hook; hook_symbol NULL: none), taken only by the CUDA backend */
    const char *hook_symbol;
    const void *hook_ir;
    size_t hook_ir_size;
    void *hook_info;
} hs_fft_desc;

/* CPU backend (FFTW).  Plans are made lazily per (direction, in-place, alignment) and cached. */
int hs_fft_create_cpu(const hs_fft_desc *d, int nthreads, int measure, void **backend);
int hs_fft_execute_cpu(void *backend, const hs_fft_desc *d, int direction, const void *in, void *out);
void hs_fft_destroy_cpu(void *backend);
int hs_fft_scale_cpu(hs_dtype precision, size_t count, double factor, void *data);

/* CUDA backend (cuFFT on cu->stream). */
int hs_fft_create_cuda(struct hs_cuda_ctx *cu, const hs_fft_desc *d, void **backend);
int hs_fft_execute_cuda(void *backend, int direction, const void *in, void *out);
void hs_fft_destroy_cuda(void *backend);
/* Whether the plan's load hook was linked into its transforms. */
int hs_fft_hooked_cuda(const void *backend);
int hs_fft_scale_cuda(struct hs_cuda_ctx *cu, hs_dtype precision, size_t count, double factor, void *data);

/* Copy rows*cols runs of `run` complex elements (precision HS_F64: double2, HS_F32: float2):
 * dst[r*dst_rs + c*dst_cs + k] = src[r*src_rs + c*src_cs + k], strides in complex elements.
 * The pack / unpack step of the distributed FFT's transpose (CUDA: queued on cu->stream). */
int hs_dfft_copy_runs_cpu(hs_dtype precision, int64_t rows, int64_t cols, int64_t run, const void *src, int64_t src_rs,
                          int64_t src_cs, void *dst, int64_t dst_rs, int64_t dst_cs);
int hs_dfft_copy_runs_cuda(struct hs_cuda_ctx *cu, hs_dtype precision, int64_t rows, int64_t cols,
                           int64_t run, const void *src, int64_t src_rs, int64_t src_cs, void *dst,
                           int64_t dst_rs, int64_t dst_cs);

#ifdef __cplusplus
}
#endif
#endif
