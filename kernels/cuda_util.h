/* CUDA-side helpers shared by every .cu file: the per-context CUDA state and status checks. */
#ifndef HS_CUDA_UTIL_H
#define HS_CUDA_UTIL_H

#include <stdint.h>

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cufft.h>
#include <cufftXt.h>
#include <cusparse.h>

#include "kernels/error.h"
#include "kernels/types.h"

struct hs_cuda_ctx {
    int device;
    cudaStream_t stream;        /* every kernel of the context runs here, in order */
    cublasHandle_t cublas;      /* NULL until hs_cuda_cublas_ready */
    cusparseHandle_t cusparse;  /* NULL until hs_cuda_cusparse_ready */
    int sm_count;
    int cc_major;               /* compute capability, major: 9 and up have the bulk-copy engine */
    int l2_bytes;
    size_t mem_total;
    char name[256];
    void *scratch;              /* device scratch (reduction partials, library buffers) */
    size_t scratch_bytes;
    void *host_scratch;         /* pinned host scratch for scalar results */
    size_t host_scratch_bytes;
    void *flags;                /* two halves of zeroed flag words, see hs_cuda_flags_acquire */
    size_t flags_bytes;         /* both halves */
    size_t flags_dirty[2];      /* bytes of each half that may be non-zero */
    int flags_next;             /* the half the next call gets */
};

/* One-time setups of a kernel (function attributes, occupancy) hold for one device only: memos
 * of them are kept per device ordinal, up to this many; HS_CHECK_DEVICE_MEMO fails beyond. */
#define HS_MAX_DEVICES 64
#define HS_CHECK_DEVICE_MEMO(cu)                                                                   \
    do {                                                                                           \
        if ((cu)->device >= HS_MAX_DEVICES)                                                        \
            return HS_FAIL(HS_ERR_RUNTIME, "device %d is beyond the %d this build keeps kernel setups for", \
                           (cu)->device, HS_MAX_DEVICES);                                          \
    } while (0)

/* Both pointers on 16-byte boundaries: the vector (uint4 / double2) and bulk-copy paths need it. */
static inline bool hs_aligned16(const void *a, const void *b)
{
    return (((uintptr_t)a | (uintptr_t)b) & 15) == 0;
}

const char *hs_cublas_status_name(cublasStatus_t s);
const char *hs_cufft_status_name(cufftResult s);
const char *hs_cusparse_status_name(cusparseStatus_t s);

/* The CUDA math libraries are not linked: each is loaded on first use (kernels/cuda_libs.cu),
 * since mapping them costs every process at start (libcublas and libcublasLt, 0.5 GB: 0.25-0.3 s;
 * cuSPARSE and cuFFT 0.02 s).  The functions we call, through hs_cublas(&api) and its siblings:
 * api->Dgemm(...) has cublasDgemm's signature, and so on.  Each returns the loaded functions, or
 * an error naming the library that could not be loaded. */
struct hs_cublas_api {
    decltype(&cublasCreate) Create;
    decltype(&cublasDestroy) Destroy;
    decltype(&cublasSetStream) SetStream;
    decltype(&cublasDgemm) Dgemm;
    decltype(&cublasSgemm) Sgemm;
    decltype(&cublasDdot_64) Ddot_64;
    decltype(&cublasSdot_64) Sdot_64;
    decltype(&cublasDnrm2_64) Dnrm2_64;
    decltype(&cublasSnrm2_64) Snrm2_64;
};
int hs_cublas(const hs_cublas_api **api);

struct hs_cusparse_api {
    decltype(&cusparseCreate) Create;
    decltype(&cusparseDestroy) Destroy;
    decltype(&cusparseSetStream) SetStream;
    decltype(&cusparseSetPointerMode) SetPointerMode;
    decltype(&cusparseCreateCsr) CreateCsr;
    decltype(&cusparseDestroySpMat) DestroySpMat;
    decltype(&cusparseCreateDnVec) CreateDnVec;
    decltype(&cusparseDestroyDnVec) DestroyDnVec;
    decltype(&cusparseDnVecSetValues) DnVecSetValues;
    decltype(&cusparseSpMV_bufferSize) SpMV_bufferSize;
    decltype(&cusparseSpMV_preprocess) SpMV_preprocess;
    decltype(&cusparseSpMV) SpMV;
};
int hs_cusparse(const hs_cusparse_api **api);

struct hs_cufft_api {
    decltype(&cufftCreate) Create;
    decltype(&cufftDestroy) Destroy;
    decltype(&cufftSetStream) SetStream;
    decltype(&cufftMakePlanMany64) MakePlanMany64;
    decltype(&cufftExecC2C) ExecC2C;
    decltype(&cufftExecZ2Z) ExecZ2Z;
    decltype(&cufftExecR2C) ExecR2C;
    decltype(&cufftExecD2Z) ExecD2Z;
    decltype(&cufftExecC2R) ExecC2R;
    decltype(&cufftExecZ2D) ExecZ2D;
    decltype(&cufftXtSetJITCallback) XtSetJITCallback; // NULL where this cuFFT has no JIT LTO callbacks
};
int hs_cufft(const hs_cufft_api **api);

/* Create the context's cuBLAS / cuSPARSE handle (on its stream) unless it exists: every user of
 * cu->cublas or cu->cusparse calls this first. */
extern "C" int hs_cuda_cublas_ready(struct hs_cuda_ctx *cu);
extern "C" int hs_cuda_cusparse_ready(struct hs_cuda_ctx *cu);

/* Device scratch of at least `bytes`, grown (after a stream sync) when too small. */
extern "C" int hs_cuda_scratch(struct hs_cuda_ctx *cu, size_t bytes, void **ptr);
/* Zeroed flag words for single-pass kernels, without a memset before every call.  Two halves
 * serve calls in turn: a call gets `use`, zero over its `bytes`, and its kernel zeroes `clear`
 * over `clear_bytes` (what the previous call left in the other half), so the next call finds
 * that half zero.  hs_cuda_flags_commit records this after a successful launch.  The kernels
 * must run on cu->stream, in order. */
struct hs_cuda_flags {
    void *use, *clear;
    size_t clear_bytes;
};
extern "C" int hs_cuda_flags_acquire(struct hs_cuda_ctx *cu, size_t bytes, struct hs_cuda_flags *f);
extern "C" void hs_cuda_flags_commit(struct hs_cuda_ctx *cu, size_t bytes);
/* Pinned host scratch of at least `bytes`. */
extern "C" int hs_cuda_host_scratch(struct hs_cuda_ctx *cu, size_t bytes, void **ptr);
/* Small results to the host: `bytes` from device address dev into the pinned host scratch, once
 * the work queued on the context stream before has finished; *host points there (valid until the
 * next use of the host scratch). */
extern "C" int hs_cuda_fetch(struct hs_cuda_ctx *cu, const void *dev, size_t bytes, void **host);

#define HS_CUDA_CHECK(call)                                                                    \
    do {                                                                                       \
        cudaError_t hs_e_ = (call);                                                            \
        if (hs_e_ != cudaSuccess)                                                              \
            return hs_error_raise(HS_ERR_RUNTIME, __FILE__, __LINE__, "CUDA call %s failed: %s (%s)", \
                                  #call, cudaGetErrorName(hs_e_), cudaGetErrorString(hs_e_));  \
    } while (0)

/* After a kernel launch: catch configuration errors now, execution errors at the next sync. */
#define HS_CUDA_LAUNCH_CHECK(kernel_name) HS_CUDA_CHECK(cudaGetLastError())

#define HS_CUBLAS_CHECK(call)                                                                  \
    do {                                                                                       \
        cublasStatus_t hs_s_ = (call);                                                         \
        if (hs_s_ != CUBLAS_STATUS_SUCCESS)                                                    \
            return hs_error_raise(HS_ERR_RUNTIME, __FILE__, __LINE__, "cuBLAS call %s failed: %s", \
                                  #call, hs_cublas_status_name(hs_s_));                        \
    } while (0)

#define HS_CUSPARSE_CHECK(call)                                                                \
    do {                                                                                       \
        cusparseStatus_t hs_s_ = (call);                                                       \
        if (hs_s_ != CUSPARSE_STATUS_SUCCESS)                                                  \
            return hs_error_raise(HS_ERR_RUNTIME, __FILE__, __LINE__, "cuSPARSE call %s failed: %s", \
                                  #call, hs_cusparse_status_name(hs_s_));                       \
    } while (0)

#define HS_CUFFT_CHECK(call)                                                                   \
    do {                                                                                       \
        cufftResult hs_s_ = (call);                                                            \
        if (hs_s_ != CUFFT_SUCCESS)                                                            \
            return hs_error_raise(HS_ERR_RUNTIME, __FILE__, __LINE__, "cuFFT call %s failed: %s", \
                                  #call, hs_cufft_status_name(hs_s_));                         \
    } while (0)

/* Blocks for a grid-stride loop over n items: enough to fill the GPU, never more than needed. */
static inline int hs_cuda_blocks(const struct hs_cuda_ctx *cu, size_t n, int threads)
{
    size_t want = (n + threads - 1) / threads;
    size_t cap = (size_t)cu->sm_count * 16;
    if (want > cap) want = cap;
    return want < 1 ? 1 : (int)want;
}

#endif
