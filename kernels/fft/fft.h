/* Local (single-rank) FFT plans on either backend: cuFFT on CUDA, FFTW3 on the CPU.
 *
 * Conventions, the same as FFTW's and cuFFT's:
 * - Sizes are row-major: n[rank-1] varies fastest.  `batch` transforms lie one after another.
 * - Complex data is interleaved (re, im) in the plan's precision (HS_F64: double, HS_F32: float).
 * - R2C output and C2R input hold n[rank-1]/2+1 complex values in the last dimension (the other
 *   half follows from Hermitian symmetry): per transform prod(n[0..rank-2]) * (n[rank-1]/2+1).
 * - Forward is exp(-2 pi i j k / n), backward exp(+2 pi i j k / n); neither is scaled, so
 *   backward(forward(x)) = N x with N = prod n.  hs_fft_normalize applies the 1/N.
 * - In-place (in == out) is allowed for C2C.  R2C and C2R must be out-of-place (in-place is an
 *   input error: their padded in-place layout is not offered).  C2R overwrites its input
 *   (both cuFFT and FFTW use it as scratch); C2C and R2C leave an out-of-place input intact.
 * - Arrays live in the context's device memory.  Nothing here is collective over MPI.
 * - CPU plans use FFTW_ESTIMATE unless hs_fft_set_cpu_planning says otherwise; the FFTW plan for
 *   each (direction, in-place, alignment) combination is made on its first use and reused, so
 *   the first execute of a combination includes the planning time.  FFTW planning is serialised
 *   by a process-wide lock (it is not thread-safe); executing plans from several threads is safe.
 * - Without FFTW (HS_HAVE_FFTW=0) CPU plan creation fails with "built without FFTW". */
#ifndef HS_FFT_H
#define HS_FFT_H

#include <stdint.h>

#include "kernels/context.h"

typedef enum { HS_FFT_C2C = 0, HS_FFT_R2C = 1, HS_FFT_C2R = 2 } hs_fft_kind;
#define HS_FFT_FORWARD (-1)  /* exp(-2 pi i j k / n) */
#define HS_FFT_BACKWARD (+1) /* exp(+2 pi i j k / n) */

typedef struct hs_fft_plan hs_fft_plan;

/* Plan `batch` contiguous rank-dimensional transforms (rank 1..3, sizes n[0..rank-1] >= 1,
 * batch >= 0; batch 0 makes a plan whose execute does nothing) of the given kind, precision
 * HS_F64 or HS_F32, on ctx's backend.  Not collective.  Input error for bad arguments; runtime
 * error when the library refuses (e.g. out of GPU memory for cuFFT's work area). */
int hs_fft_plan_create(hs_ctx *ctx, int rank, const int64_t *n, int64_t batch, hs_fft_kind kind,
                       hs_dtype precision, hs_fft_plan **plan);

/* Plan C2C transforms of length n along a strided axis, with two batch loops (the layout of a
 * transform along a non-contiguous axis of a multi-dimensional array): element x of transform
 * (o, b) is at o*outer_dist + b*inner_dist + x*stride, the same for input and output, all in
 * complex elements.  o < outer, b < inner.  In-place and out-of-place allowed.  Not collective. */
int hs_fft_plan_create_strided(hs_ctx *ctx, int64_t n, int64_t stride, int64_t inner, int64_t inner_dist,
                               int64_t outer, int64_t outer_dist, hs_dtype precision, hs_fft_plan **plan);

/* A device function that cuFFT calls to load each input element of a plan (a load callback, linked
 * into cuFFT's own kernels when the plan is made, from LTO-IR): a pointwise operation before a
 * transform then rides on the transform's read instead of taking a pass over the data of its own.
 * Its signature is cuFFT's for the plan's input type (cufftJITCallbackLoadZ for a double C2R or
 * C2C plan, ...): it gets the execute's input pointer, the element's offset from it (counted in
 * elements of the input type, batch included) and `info` as callerInfo. */
typedef struct hs_fft_load_hook {
    const char *symbol;  /* the __device__ function's name */
    const void *lto_ir;  /* its LTO-IR fatbin (nvcc -dc -fatbin -gencode arch=compute_XX,code=lto_XX) */
    size_t lto_ir_size;
    void *info;          /* device pointer handed to it as callerInfo; must outlive the plan */
} hs_fft_load_hook;

/* hs_fft_plan_create with a load hook.  The hook runs only on the CUDA backend, and only where cuFFT
 * takes it (a cuFFT with JIT LTO callbacks, a link that succeeds, sizes it runs as one plan); the
 * plan is made without it otherwise (the CPU backend always), and hs_fft_plan_hooked says which:
 * the caller applies the operation itself when it is 0.  Linking the hook costs time at plan
 * creation (a JIT link: 1.0 s for one C2R plan on an H100), and cuFFT's kernels with a callback
 * linked in may be slower than the plain ones (kernels/fft/poisson.c measured so): measure first.
 * Not collective. */
int hs_fft_plan_create_hooked(hs_ctx *ctx, int rank, const int64_t *n, int64_t batch, hs_fft_kind kind,
                              hs_dtype precision, const hs_fft_load_hook *hook, hs_fft_plan **plan);

/* 1 when the plan's load hook runs in its transforms, else 0 (no hook, or not taken). */
int hs_fft_plan_hooked(const hs_fft_plan *plan);

/* Transform `in` into `out` (both on the plan's device).  C2C: either direction; R2C: FORWARD
 * only; C2R: BACKWARD only.  On CUDA the work is queued on the context's stream and this returns
 * without waiting.  Not collective. */
int hs_fft_execute(hs_fft_plan *plan, int direction, const void *in, void *out);

/* Multiply the plan's output-shaped array (C2C, R2C: complex; C2R: real; batch included) by 1/N,
 * N = prod n.  Not collective. */
int hs_fft_normalize(hs_fft_plan *plan, void *data);

/* Element counts (complex for complex data, real for real data) of the input and output arrays
 * the plan reads and writes, batch included. */
int64_t hs_fft_in_elems(const hs_fft_plan *plan);
int64_t hs_fft_out_elems(const hs_fft_plan *plan);

/* Release the plan (NULL is ignored). */
void hs_fft_plan_destroy(hs_fft_plan *plan);

/* Peer version for the benchmark: the library's own execute on the plan the wrapper holds
 * (cufftExecZ2Z / cufftExecD2Z / ... on CUDA; fftw_execute_dft / ... on the CPU) with no
 * argument checks, so that the benchmark can show the wrapper's overhead. */
int hs_fft_execute_raw(hs_fft_plan *plan, int direction, const void *in, void *out);

/* CPU planning effort for plans created after the call: 0 = FFTW_ESTIMATE (default, fast
 * planning, arrays untouched), 1 = FFTW_MEASURE (slower planning on scratch arrays, faster
 * transforms).  Process-wide; not collective. */
void hs_fft_set_cpu_planning(int measure);

#endif
