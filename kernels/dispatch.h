/* The one way a kernel family picks its CPU or CUDA backend, and how backend functions are named. */
#ifndef HS_DISPATCH_H
#define HS_DISPATCH_H

/*
 * Dispatch.  Every object is created from a context (kernels/context.h) and computes where that
 * context's device says.  A family's public function checks its arguments, then hands the work to
 * one of its two backends with
 *
 *     return HS_DISPATCH(ctx, hs_fam_verb_cpu(args...), hs_fam_verb_cuda(ctx->cuda, args...));
 *
 * (or HS_CHECK(HS_DISPATCH(...)) when more follows).  HS_DISPATCH is an expression: the status of
 * whichever call ran (or nothing, for releases, where both calls return void).  In a build without
 * CUDA only the CPU call is compiled and the CUDA call sits in an unevaluated sizeof, so it is
 * still type-checked there but its symbol need not exist.
 * HS_ON_GPU(ctx) is the one test of the backend, for code that is not a pair of twin calls (a
 * transfer staged through pinned host buffers, buffers allocated only for the device); such code
 * names CUDA-only symbols inside `#if HS_HAVE_CUDA`.  Nothing else compares ctx->device.
 *
 * Naming.  A family is the prefix of its public names (csr, dcsr, fft, dfft, grid, nn, adam, reduce,
 * scan, sort, rng; blas for the BLAS-1/GEMM folder, whose public names carry none; the core's mem
 * and ctx; the solvers' heat, pinn, sv).  Its backends are declared side by side in
 * <family>_impl.h (the core's in kernels/cuda_backend.h):
 *
 *     hs_<family>_<verb>_cpu(args...)                            <family>_cpu.c (OpenMP)
 *     hs_<family>_<verb>_cuda(struct hs_cuda_ctx *cu, args...)   <family>_cuda.cu
 *
 * with the same arguments after cu; the backend is always the last word.  The verb is the public
 * function's (hs_csr_spmv -> hs_csr_spmv_cpu); a family whose public entry is its own name
 * (hs_scan, hs_reduce, hs_sort_*) uses `apply`.  A vendor library's version of the same work, kept
 * as the benchmark's peer, names the library before the backend (hs_reduce_sum_cub_cuda,
 * hs_blas_dot_cublas_cuda, hs_csr_spmv_cusparse_cuda); a superseded kernel kept as a test
 * reference ends its verb in _ref (public hs_scan_ref, backend hs_scan_apply_ref_cuda).  A CUDA
 * helper with nothing to do on the CPU keeps the scheme (hs_grid_stream_create_cuda) and its
 * caller passes HS_OK as the CPU call.  The device communication backend of kernels/comm is
 * NCCL: hs_comm_<verb>_nccl.  CUDA-side utilities shared by the .cu files and with no CPU side at
 * all (scratch, flag words, hs_cuda_fetch, launch checks) are hs_cuda_* in kernels/cuda_util.h.
 */

#include "kernels/config.h"
#include "kernels/types.h"

/* True when objects of this context compute on the GPU (constant false in builds without CUDA). */
#define HS_ON_GPU(ctx) (HS_HAVE_CUDA && (ctx)->device == HS_DEVICE_CUDA)

/* A CPU backend loop over fewer points than this runs on one thread (`#pragma omp parallel for ...
 * if (points >= HS_CPU_SERIAL_BELOW)`): below it, waking and joining the team costs more than the
 * threads save.  On CI's 2-core machine the 129^2 cavity stepped 2.3x slower on 2 threads than on
 * 1 while its 13 launches a step each woke the team. */
#define HS_CPU_SERIAL_BELOW 32768

#if HS_HAVE_CUDA
#define HS_DISPATCH(ctx, cpu_call, cuda_call) (HS_ON_GPU(ctx) ? (cuda_call) : (cpu_call))
#else
#define HS_DISPATCH(ctx, cpu_call, cuda_call) ((void)sizeof((cuda_call), 0), (void)(ctx), (cpu_call))
#endif

#endif
