// CUDA backend of the context and memory layer: devices, streams, handles, allocation, copies.
#include "kernels/cuda_backend.h"
#include "kernels/cuda_util.h"

#include <cuda_profiler_api.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *hs_cublas_status_name(cublasStatus_t s)
{
    switch (s) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    default: return "unknown cuBLAS status";
    }
}

const char *hs_cusparse_status_name(cusparseStatus_t s)
{
    switch (s) {
    case CUSPARSE_STATUS_SUCCESS: return "CUSPARSE_STATUS_SUCCESS";
    case CUSPARSE_STATUS_NOT_INITIALIZED: return "CUSPARSE_STATUS_NOT_INITIALIZED";
    case CUSPARSE_STATUS_ALLOC_FAILED: return "CUSPARSE_STATUS_ALLOC_FAILED";
    case CUSPARSE_STATUS_INVALID_VALUE: return "CUSPARSE_STATUS_INVALID_VALUE";
    case CUSPARSE_STATUS_ARCH_MISMATCH: return "CUSPARSE_STATUS_ARCH_MISMATCH";
    case CUSPARSE_STATUS_MAPPING_ERROR: return "CUSPARSE_STATUS_MAPPING_ERROR";
    case CUSPARSE_STATUS_EXECUTION_FAILED: return "CUSPARSE_STATUS_EXECUTION_FAILED";
    case CUSPARSE_STATUS_INTERNAL_ERROR: return "CUSPARSE_STATUS_INTERNAL_ERROR";
    case CUSPARSE_STATUS_MATRIX_TYPE_NOT_SUPPORTED: return "CUSPARSE_STATUS_MATRIX_TYPE_NOT_SUPPORTED";
    case CUSPARSE_STATUS_ZERO_PIVOT: return "CUSPARSE_STATUS_ZERO_PIVOT";
    case CUSPARSE_STATUS_NOT_SUPPORTED: return "CUSPARSE_STATUS_NOT_SUPPORTED";
    case CUSPARSE_STATUS_INSUFFICIENT_RESOURCES: return "CUSPARSE_STATUS_INSUFFICIENT_RESOURCES";
    default: return "unknown cuSPARSE status";
    }
}

const char *hs_cufft_status_name(cufftResult s)
{
    switch (s) {
    case CUFFT_SUCCESS: return "CUFFT_SUCCESS";
    case CUFFT_INVALID_PLAN: return "CUFFT_INVALID_PLAN";
    case CUFFT_ALLOC_FAILED: return "CUFFT_ALLOC_FAILED";
    case CUFFT_INVALID_VALUE: return "CUFFT_INVALID_VALUE";
    case CUFFT_INTERNAL_ERROR: return "CUFFT_INTERNAL_ERROR";
    case CUFFT_EXEC_FAILED: return "CUFFT_EXEC_FAILED";
    case CUFFT_SETUP_FAILED: return "CUFFT_SETUP_FAILED";
    case CUFFT_INVALID_SIZE: return "CUFFT_INVALID_SIZE";
    default: return "unknown cuFFT status";
    }
}

extern "C" int hs_ctx_count_cuda(int *count)
{
    *count = 0;
    if (cudaGetDeviceCount(count) != cudaSuccess) {
        cudaGetLastError(); // no driver or no device: not an error, just no GPU
        *count = 0;
    }
    return HS_OK;
}

extern "C" int hs_ctx_describe_cuda(int device, char *name, size_t name_len, size_t *mem_total,
                                size_t *mem_free, int *cc_major, int *cc_minor)
{
    cudaDeviceProp p;
    HS_CUDA_CHECK(cudaGetDeviceProperties(&p, device));
    snprintf(name, name_len, "%s", p.name);
    *mem_total = p.totalGlobalMem;
    *cc_major = p.major;
    *cc_minor = p.minor;
    int cur = 0;
    HS_CUDA_CHECK(cudaGetDevice(&cur));
    HS_CUDA_CHECK(cudaSetDevice(device));
    size_t fr = 0, tot = 0;
    HS_CUDA_CHECK(cudaMemGetInfo(&fr, &tot));
    *mem_free = fr;
    HS_CUDA_CHECK(cudaSetDevice(cur));
    return HS_OK;
}

extern "C" int hs_ctx_create_cuda(int device, struct hs_cuda_ctx **out)
{
    struct hs_cuda_ctx *cu = (struct hs_cuda_ctx *)calloc(1, sizeof *cu);
    if (!cu) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory for the CUDA context");
    *out = cu;
    cu->device = device;
    HS_CUDA_CHECK(cudaSetDevice(device));
    cudaDeviceProp p;
    HS_CUDA_CHECK(cudaGetDeviceProperties(&p, device));
    cu->sm_count = p.multiProcessorCount;
    cu->cc_major = p.major;
    cu->l2_bytes = p.l2CacheSize;
    cu->mem_total = p.totalGlobalMem;
    snprintf(cu->name, sizeof cu->name, "%s", p.name);
    HS_CUDA_CHECK(cudaStreamCreateWithFlags(&cu->stream, cudaStreamNonBlocking));
    return HS_OK;
}

// The library handles are made on first use: making one loads its library (kernels/cuda_libs.cu)
// and its kernels, a noticeable part of a short run's start-up, which most solvers never need.
extern "C" int hs_cuda_cublas_ready(struct hs_cuda_ctx *cu)
{
    if (cu->cublas) return HS_OK;
    const hs_cublas_api *cb;
    HS_CHECK(hs_cublas(&cb));
    HS_CUBLAS_CHECK(cb->Create(&cu->cublas));
    HS_CUBLAS_CHECK(cb->SetStream(cu->cublas, cu->stream));
    return HS_OK;
}

extern "C" int hs_cuda_cusparse_ready(struct hs_cuda_ctx *cu)
{
    if (cu->cusparse) return HS_OK;
    const hs_cusparse_api *cs;
    HS_CHECK(hs_cusparse(&cs));
    HS_CUSPARSE_CHECK(cs->Create(&cu->cusparse));
    HS_CUSPARSE_CHECK(cs->SetStream(cu->cusparse, cu->stream));
    return HS_OK;
}

extern "C" void hs_ctx_destroy_cuda(struct hs_cuda_ctx *cu)
{
    if (!cu) return;
    cudaSetDevice(cu->device);
    if (cu->stream) cudaStreamSynchronize(cu->stream);
    if (cu->scratch) cudaFree(cu->scratch);
    if (cu->flags) cudaFree(cu->flags);
    if (cu->host_scratch) cudaFreeHost(cu->host_scratch);
    const hs_cusparse_api *cs; /* each library was loaded when its handle was made */
    if (cu->cusparse && hs_cusparse(&cs) == HS_OK) cs->Destroy(cu->cusparse);
    const hs_cublas_api *cb;
    if (cu->cublas && hs_cublas(&cb) == HS_OK) cb->Destroy(cu->cublas);
    if (cu->stream) cudaStreamDestroy(cu->stream);
    free(cu);
}

extern "C" int hs_ctx_sync_cuda(struct hs_cuda_ctx *cu)
{
    HS_CUDA_CHECK(cudaStreamSynchronize(cu->stream));
    return HS_OK;
}

// Device work buffers come in whole 2 MiB pages: cudaMalloc maps a smaller allocation with small
// pages, and the scan's look-back words on those measured 2.5% slower on the H200 (address
// translation misses while the data streams by).
static size_t whole_pages(size_t bytes)
{
    const size_t page = (size_t)2 << 20;
    return bytes <= page ? page : (bytes + page - 1) / page * page;
}

// Grows a device buffer of the context to hold `bytes` (contents not kept), once the stream is
// done with the old one.
static int grow_device_buffer(struct hs_cuda_ctx *cu, void **buf, size_t *cap, size_t bytes)
{
    if (bytes <= *cap) return HS_OK;
    HS_CUDA_CHECK(cudaStreamSynchronize(cu->stream));
    if (*buf) HS_CUDA_CHECK(cudaFree(*buf));
    *buf = NULL;
    *cap = 0;
    const size_t want = whole_pages(bytes);
    HS_CUDA_CHECK(cudaMalloc(buf, want));
    *cap = want;
    return HS_OK;
}

extern "C" int hs_cuda_scratch(struct hs_cuda_ctx *cu, size_t bytes, void **ptr)
{
    HS_CHECK(grow_device_buffer(cu, &cu->scratch, &cu->scratch_bytes, bytes));
    *ptr = cu->scratch;
    return HS_OK;
}

extern "C" int hs_cuda_flags_acquire(struct hs_cuda_ctx *cu, size_t bytes, struct hs_cuda_flags *f)
{
    if (2 * bytes > cu->flags_bytes) {
        HS_CHECK(grow_device_buffer(cu, &cu->flags, &cu->flags_bytes, 2 * bytes));
        HS_CUDA_CHECK(cudaMemsetAsync(cu->flags, 0, cu->flags_bytes, cu->stream));
        cu->flags_dirty[0] = cu->flags_dirty[1] = 0;
        cu->flags_next = 0;
    }
    const int h = cu->flags_next;
    const size_t half = cu->flags_bytes / 2; // whole pages are an even number of bytes
    char *base = (char *)cu->flags;
    f->use = base + (size_t)h * half;
    f->clear = base + (size_t)(1 - h) * half;
    f->clear_bytes = cu->flags_dirty[1 - h];
    // a half handed out is clean unless a caller skipped the commit; then clean it here
    if (cu->flags_dirty[h]) {
        HS_CUDA_CHECK(cudaMemsetAsync(f->use, 0, cu->flags_dirty[h], cu->stream));
        cu->flags_dirty[h] = 0;
    }
    return HS_OK;
}

extern "C" void hs_cuda_flags_commit(struct hs_cuda_ctx *cu, size_t bytes)
{
    const int h = cu->flags_next;
    cu->flags_dirty[h] = bytes;
    cu->flags_dirty[1 - h] = 0;
    cu->flags_next = 1 - h;
}

extern "C" int hs_cuda_host_scratch(struct hs_cuda_ctx *cu, size_t bytes, void **ptr)
{
    if (bytes > cu->host_scratch_bytes) {
        HS_CUDA_CHECK(cudaStreamSynchronize(cu->stream));
        if (cu->host_scratch) HS_CUDA_CHECK(cudaFreeHost(cu->host_scratch));
        cu->host_scratch = NULL;
        size_t want = bytes < 4096 ? 4096 : bytes;
        HS_CUDA_CHECK(cudaMallocHost(&cu->host_scratch, want));
        cu->host_scratch_bytes = want;
    }
    *ptr = cu->host_scratch;
    return HS_OK;
}

extern "C" int hs_cuda_fetch(struct hs_cuda_ctx *cu, const void *dev, size_t bytes, void **host)
{
    HS_CHECK(hs_cuda_host_scratch(cu, bytes, host));
    HS_CUDA_CHECK(cudaMemcpyAsync(*host, dev, bytes, cudaMemcpyDeviceToHost, cu->stream));
    HS_CUDA_CHECK(cudaStreamSynchronize(cu->stream));
    return HS_OK;
}

extern "C" int hs_mem_alloc_cuda(struct hs_cuda_ctx *cu, size_t bytes, void **ptr)
{
    *ptr = NULL;
    if (bytes == 0) return HS_OK;
    cudaError_t e = cudaMalloc(ptr, bytes);
    if (e != cudaSuccess) {
        size_t fr = 0, tot = 0;
        cudaGetLastError();
        cudaMemGetInfo(&fr, &tot);
        return HS_FAIL(HS_ERR_RUNTIME, "CUDA call cudaMalloc(%zu bytes) failed on GPU %d (%s): %s; %zu of %zu bytes free",
                       bytes, cu->device, cu->name, cudaGetErrorString(e), fr, tot);
    }
    return HS_OK;
}

extern "C" void hs_mem_free_cuda(struct hs_cuda_ctx *cu, void *ptr)
{
    (void)cu;
    if (ptr) cudaFree(ptr);
}

static cudaMemcpyKind to_kind(int kind)
{
    static const cudaMemcpyKind k[] = {cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost,
                                       cudaMemcpyDeviceToDevice, cudaMemcpyHostToHost};
    return k[kind & 3];
}

extern "C" int hs_mem_copy_cuda(struct hs_cuda_ctx *cu, void *dst, const void *src, size_t bytes, int kind,
                              void *stream, int wait)
{
    if (bytes == 0) return HS_OK;
    cudaStream_t s = stream ? (cudaStream_t)stream : cu->stream;
    HS_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, to_kind(kind), s));
    if (wait) HS_CUDA_CHECK(cudaStreamSynchronize(s));
    return HS_OK;
}

extern "C" int hs_mem_zero_cuda(struct hs_cuda_ctx *cu, void *ptr, size_t bytes)
{
    if (bytes) HS_CUDA_CHECK(cudaMemsetAsync(ptr, 0, bytes, cu->stream));
    return HS_OK;
}

extern "C" int hs_mem_host_alloc_cuda(size_t bytes, void **ptr)
{
    *ptr = NULL;
    if (bytes) HS_CUDA_CHECK(cudaMallocHost(ptr, bytes));
    return HS_OK;
}

extern "C" void hs_mem_host_free_cuda(void *ptr)
{
    if (ptr) cudaFreeHost(ptr);
}

extern "C" int hs_mem_stream_create_cuda(void **stream)
{
    cudaStream_t s;
    HS_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    *stream = (void *)s;
    return HS_OK;
}

extern "C" void hs_mem_stream_destroy_cuda(void *stream)
{
    if (stream) cudaStreamDestroy((cudaStream_t)stream);
}

extern "C" int hs_mem_stream_sync_cuda(struct hs_cuda_ctx *cu, void *stream)
{
    HS_CUDA_CHECK(cudaStreamSynchronize(stream ? (cudaStream_t)stream : cu->stream));
    return HS_OK;
}

extern "C" int hs_mem_event_create_cuda(void **event)
{
    cudaEvent_t e;
    HS_CUDA_CHECK(cudaEventCreate(&e));
    *event = (void *)e;
    return HS_OK;
}

extern "C" void hs_mem_event_destroy_cuda(void *event)
{
    if (event) cudaEventDestroy((cudaEvent_t)event);
}

extern "C" int hs_mem_event_record_cuda(struct hs_cuda_ctx *cu, void *event, void *stream)
{
    HS_CUDA_CHECK(cudaEventRecord((cudaEvent_t)event, stream ? (cudaStream_t)stream : cu->stream));
    return HS_OK;
}

extern "C" int hs_mem_stream_wait_event_cuda(struct hs_cuda_ctx *cu, void *stream, void *event)
{
    HS_CUDA_CHECK(cudaStreamWaitEvent(stream ? (cudaStream_t)stream : cu->stream, (cudaEvent_t)event, 0));
    return HS_OK;
}

extern "C" int hs_mem_event_elapsed_cuda(void *start, void *stop, double *seconds)
{
    float ms = 0;
    HS_CUDA_CHECK(cudaEventSynchronize((cudaEvent_t)stop));
    HS_CUDA_CHECK(cudaEventElapsedTime(&ms, (cudaEvent_t)start, (cudaEvent_t)stop));
    *seconds = 1e-3 * ms;
    return HS_OK;
}

extern "C" int hs_cuda_profiler_cuda(int on)
{
    HS_CUDA_CHECK(on ? cudaProfilerStart() : cudaProfilerStop());
    return HS_OK;
}
