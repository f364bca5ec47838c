/* Device and pinned-host memory, copies, streams, events and timers, on either backend. */
#ifndef HS_MEMORY_H
#define HS_MEMORY_H

#include "kernels/context.h"

typedef enum { HS_COPY_H2D, HS_COPY_D2H, HS_COPY_D2D, HS_COPY_H2H } hs_copy_kind;

/* Allocate `bytes` on the context's device (64-byte aligned host memory on the CPU backend).
 * *ptr is NULL for bytes == 0.  An allocation failure names the size and the device. */
int hs_mem_alloc(hs_ctx *ctx, size_t bytes, void **ptr);
void hs_mem_free(hs_ctx *ctx, void *ptr);

/* Copy between host and the context's device.  Returns when the data is usable at the target
 * (host targets: copied; device targets: ordered on the context's stream). */
int hs_mem_copy(hs_ctx *ctx, void *dst, const void *src, size_t bytes, hs_copy_kind kind);
/* Same, queued on `stream` (NULL = context stream) without waiting; host memory should be pinned. */
int hs_mem_copy_async(hs_ctx *ctx, void *dst, const void *src, size_t bytes, hs_copy_kind kind, void *stream);
int hs_mem_zero(hs_ctx *ctx, void *ptr, size_t bytes);

/* Page-locked host buffers for fast, asynchronous transfers (plain aligned memory on CPU). */
int hs_host_alloc_pinned(hs_ctx *ctx, size_t bytes, void **ptr);
void hs_host_free_pinned(hs_ctx *ctx, void *ptr);

/* Extra streams (CUDA streams; NULL handles on CPU, where work is synchronous). */
int hs_stream_create(hs_ctx *ctx, void **stream);
void hs_stream_destroy(hs_ctx *ctx, void *stream);
int hs_stream_sync(hs_ctx *ctx, void *stream);

/* Events order work between streams: wait makes `stream` wait for `event` recorded elsewhere. */
int hs_event_create(hs_ctx *ctx, void **event);
void hs_event_destroy(hs_ctx *ctx, void *event);
int hs_event_record(hs_ctx *ctx, void *event, void *stream);
int hs_stream_wait_event(hs_ctx *ctx, void *stream, void *event);

/* Timer of work on the context's stream: device events on CUDA, the monotonic clock on CPU. */
typedef struct hs_timer {
    hs_ctx *ctx;
    double t0;
    void *start, *stop;
} hs_timer;
int hs_timer_init(hs_ctx *ctx, hs_timer *t);
int hs_timer_start(hs_timer *t);
/* Seconds since start (waits for the queued work to finish). */
int hs_timer_stop(hs_timer *t, double *seconds);
void hs_timer_free(hs_timer *t);

/* What an allocation of `bytes` takes, for memory estimates made before anything is allocated: the
 * request as the allocator rounds it, its book-keeping included.  hs_host_footprint: malloc's (a
 * 16-byte header, 16-byte multiples; a block of 128 KiB or more mapped on its own in whole pages).
 * hs_mem_footprint: hs_mem_alloc's (on the CPU backend whole 128-byte lines, aligned by malloc; on
 * CUDA 512-byte multiples below 1 MiB, where the driver packs blocks together, and whole 2 MiB pages
 * above, the driver's large-page granularity).  hs_pinned_footprint: hs_host_alloc_pinned's (as
 * hs_mem_alloc's on the CPU backend; cudaMallocHost's, counted as device blocks, on CUDA).  0 for 0
 * bytes.  Not collective. */
double hs_mem_footprint(const hs_ctx *ctx, double bytes);
double hs_host_footprint(double bytes);
double hs_pinned_footprint(const hs_ctx *ctx, double bytes);

/* Bytes this rank can still allocate on the context's device: the GPU's free memory on CUDA,
 * MemAvailable of /proc/meminfo (else the free pages) on the CPU.  Not collective. */
double hs_mem_available(hs_ctx *ctx);
/* Bytes of host memory this process can still allocate (MemAvailable).  Not collective. */
double hs_mem_host_available(void);

/* Wall-clock seconds (monotonic). */
double hs_wtime(void);

/* Seconds since this process started (Linux: /proc/self/stat, 1/100 s resolution); -1 elsewhere. */
double hs_process_age(void);

/* With HS_TIMELINE set in the environment: "hpcsim timeline: S s EVENT" on stderr, S the seconds
 * since the process started (for finding where a run's start-up and exit go); nothing otherwise. */
void hs_timeline(const char *event);
/* Whether HS_TIMELINE is set: a stage that queues device work syncs before its event only then. */
int hs_timeline_on(void);

#endif
