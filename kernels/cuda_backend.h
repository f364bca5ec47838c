/* C declarations of the CUDA backend context and memory entry points (kernels/context_cuda.cu). */
#ifndef HS_CUDA_BACKEND_H
#define HS_CUDA_BACKEND_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct hs_cuda_ctx;

int hs_ctx_count_cuda(int *count);
int hs_ctx_describe_cuda(int device, char *name, size_t name_len, size_t *mem_total, size_t *mem_free,
                     int *cc_major, int *cc_minor);
int hs_ctx_create_cuda(int device, struct hs_cuda_ctx **cu);
void hs_ctx_destroy_cuda(struct hs_cuda_ctx *cu);
int hs_ctx_sync_cuda(struct hs_cuda_ctx *cu);

int hs_mem_alloc_cuda(struct hs_cuda_ctx *cu, size_t bytes, void **ptr);
void hs_mem_free_cuda(struct hs_cuda_ctx *cu, void *ptr);
/* kind: 0 H2D, 1 D2H, 2 D2D, 3 H2H (matches hs_copy_kind); stream NULL = context stream. */
int hs_mem_copy_cuda(struct hs_cuda_ctx *cu, void *dst, const void *src, size_t bytes, int kind,
                   void *stream, int wait);
int hs_mem_zero_cuda(struct hs_cuda_ctx *cu, void *ptr, size_t bytes);
int hs_mem_host_alloc_cuda(size_t bytes, void **ptr);
void hs_mem_host_free_cuda(void *ptr);
int hs_mem_stream_create_cuda(void **stream);
void hs_mem_stream_destroy_cuda(void *stream);
int hs_mem_stream_sync_cuda(struct hs_cuda_ctx *cu, void *stream);
int hs_mem_event_create_cuda(void **event);
void hs_mem_event_destroy_cuda(void *event);
int hs_mem_event_record_cuda(struct hs_cuda_ctx *cu, void *event, void *stream);
int hs_mem_stream_wait_event_cuda(struct hs_cuda_ctx *cu, void *stream, void *event);
int hs_mem_event_elapsed_cuda(void *start, void *stop, double *seconds);
/* Starts (on != 0) or stops the profilers' capture (cudaProfilerStart/Stop): what a benchmark run
 * under `ncu --profile-from-start off` profiles. */
int hs_cuda_profiler_cuda(int on);

#ifdef __cplusplus
}
#endif
#endif
