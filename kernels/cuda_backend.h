/* C declarations of the CUDA backend context and memory entry points (kernels/context_cuda.cu). */
#ifndef HS_CUDA_BACKEND_H
#define HS_CUDA_BACKEND_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct hs_cuda_ctx;

int hs_cuda_count(int *count);
int hs_cuda_describe(int device, char *name, size_t name_len, size_t *mem_total, size_t *mem_free,
                     int *cc_major, int *cc_minor);
int hs_cuda_ctx_create(int device, struct hs_cuda_ctx **cu);
void hs_cuda_ctx_destroy(struct hs_cuda_ctx *cu);
int hs_cuda_sync(struct hs_cuda_ctx *cu);

int hs_cuda_malloc(struct hs_cuda_ctx *cu, size_t bytes, void **ptr);
void hs_cuda_free(struct hs_cuda_ctx *cu, void *ptr);
/* kind: 0 H2D, 1 D2H, 2 D2D, 3 H2H (matches hs_copy_kind); stream NULL = context stream. */
int hs_cuda_memcpy(struct hs_cuda_ctx *cu, void *dst, const void *src, size_t bytes, int kind,
                   void *stream, int wait);
int hs_cuda_memzero(struct hs_cuda_ctx *cu, void *ptr, size_t bytes);
int hs_cuda_host_alloc(size_t bytes, void **ptr);
void hs_cuda_host_free(void *ptr);
int hs_cuda_stream_create(void **stream);
void hs_cuda_stream_destroy(void *stream);
int hs_cuda_stream_sync(struct hs_cuda_ctx *cu, void *stream);
int hs_cuda_event_create(void **event);
void hs_cuda_event_destroy(void *event);
int hs_cuda_event_record(struct hs_cuda_ctx *cu, void *event, void *stream);
int hs_cuda_stream_wait_event(struct hs_cuda_ctx *cu, void *stream, void *event);
int hs_cuda_event_elapsed(void *start, void *stop, double *seconds);

#ifdef __cplusplus
}
#endif
#endif
