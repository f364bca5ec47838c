/* Distributed 2D / 3D FFT over MPI with a slab decomposition, for spectral solvers.
 *
 * Global array n[0] x n[1] (rank 2) or n[0] x n[1] x n[2] (rank 3), row-major, complex (C2C) or
 * real (R2C; the backward transform of that plan is the matching C2R).  Let
 *   m1 = n[1], t = n[2]            (rank 3, C2C)      m1 = n[1],       t = n[2]/2+1  (rank 3, R2C)
 *   m1 = n[1], t = 1               (rank 2, C2C)      m1 = n[1]/2+1,   t = 1         (rank 2, R2C)
 * so the spectral (forward output) array is n[0] x m1 x t complex (x the R2C half spectrum).
 *
 * Layouts on MPI rank r (both contiguous, row-major, in the context's device memory):
 *   input  (physical): planes [in_start, in_start+in_count) of dimension 0:
 *                      x[i - in_start][j][k] (k absent in 2D), complex for C2C, real for R2C;
 *   output (spectral): planes [out_start, out_start+out_count) of dimension 1 of the spectrum,
 *                      transposed:  X[j - out_start][i][k] = F(i, j, k)  (local [out_count][n0][t]).
 * The splits are balanced blocks (the first n % P ranks hold one plane more); a rank may hold none.
 * The transforms follow fft.h: forward exp(-2 pi i ...), backward exp(+...), unnormalised, so
 * backward(forward(x)) = N x with N = prod n; hs_dfft_normalize applies 1/N.
 *
 * Method: local FFTs over the trailing dimensions, a global transpose with MPI_Alltoallv (pack and
 * unpack run on the device; on CUDA the data goes through pinned host buffers because MPI is not
 * assumed CUDA-aware; a rank's own block is copied on the device without MPI), then FFTs along
 * dimension 0.  Backward runs the reverse and returns the input layout.  Inputs are preserved
 * (also by the backward C2R).  in == out is allowed when the buffer holds the larger of the two
 * local arrays.  Block counts go to MPI as int: each rank's exchange must stay below 2^31 complex
 * values.  The plan holds work buffers of about two local arrays on the device (plus two pinned
 * host buffers for the off-rank blocks on CUDA). */
#ifndef HS_DFFT_H
#define HS_DFFT_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/context.h"
#include "kernels/fft/fft.h"

typedef struct hs_dfft_plan hs_dfft_plan;

/* Plan a distributed transform of rank 2 or 3 (sizes n[i] >= 1) over comm (the plan keeps a
 * duplicate), kind HS_FFT_C2C or HS_FFT_R2C (HS_FFT_C2R is accepted as the same real plan),
 * precision HS_F64 or HS_F32.  Collective over comm: every rank passes the same arguments. */
int hs_dfft_plan_create(hs_ctx *ctx, MPI_Comm comm, int rank, const int64_t *n, hs_fft_kind kind, hs_dtype precision,
                        hs_dfft_plan **plan);

/* This rank's slab: planes of dimension 0 in the input, of dimension 1 of the spectrum in the
 * output, and the element counts of the local input (complex or real) and output (complex) arrays.
 * Any pointer may be NULL.  Not collective. */
int hs_dfft_local_layout(const hs_dfft_plan *plan, int64_t *in_start, int64_t *in_count, int64_t *out_start,
                         int64_t *out_count, size_t *in_elems, size_t *out_elems);

/* Global spectral shape {n[0], m1, t} (see above).  Not collective. */
void hs_dfft_spectral_shape(const hs_dfft_plan *plan, int64_t shape[3]);

/* Forward (in: input layout, out: output layout) or backward (in: output layout, out: input
 * layout).  Collective over the plan's communicator.  On CUDA the steps after the exchange are
 * queued on the context's stream, like any kernel: synchronise (hs_ctx_sync) before reading out
 * on the host. */
int hs_dfft_execute(hs_dfft_plan *plan, int direction, const void *in, void *out);

/* Multiply a local input-layout (physical) array by 1/N, N = prod n: the normalisation after a
 * backward transform.  Not collective. */
int hs_dfft_normalize(hs_dfft_plan *plan, void *data);

/* Release the plan (NULL is ignored).  Collective over the plan's communicator (frees it). */
void hs_dfft_plan_destroy(hs_dfft_plan *plan);

#endif
