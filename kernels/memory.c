/* Memory, copies, streams, events and timers: dispatch to the CPU or CUDA backend. */
#include "kernels/memory.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kernels/cuda_backend.h"
#include "kernels/dispatch.h"

double hs_wtime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

double hs_process_age(void)
{
#ifdef __linux__
    FILE *f = fopen("/proc/self/stat", "r");
    if (!f) return -1;
    char buf[1024];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *p = strrchr(buf, ')'); /* the command name may hold spaces: fields count from its end */
    if (!p) return -1;
    unsigned long long start = 0;
    int field = 2;
    char *save = NULL;
    for (char *tok = strtok_r(p + 1, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
        if (++field == 22) {
            start = strtoull(tok, NULL, 10);
            break;
        }
    struct timespec ts;
    long hz = sysconf(_SC_CLK_TCK);
    if (field != 22 || hz <= 0 || clock_gettime(CLOCK_BOOTTIME, &ts)) return -1;
    return ts.tv_sec + 1e-9 * ts.tv_nsec - (double)start / (double)hz;
#else
    return -1;
#endif
}

static int g_timeline = -1;
static double g_timeline_age0, g_timeline_w0; /* the process age once (coarse), then the monotonic clock from there */

int hs_timeline_on(void)
{
    if (g_timeline < 0) {
        g_timeline = getenv("HS_TIMELINE") != NULL;
        if (g_timeline) g_timeline_age0 = hs_process_age(), g_timeline_w0 = hs_wtime();
    }
    return g_timeline;
}

void hs_timeline(const char *event)
{
    if (hs_timeline_on())
        fprintf(stderr, "hpcsim timeline: %.4f s %s\n", g_timeline_age0 + (hs_wtime() - g_timeline_w0), event);
}

double hs_mem_host_available(void)
{
    /* "MemAvailable:   123456 kB", read line by line (whole lines, the number checked) */
    FILE *f = fopen("/proc/meminfo", "r");
    double kb = -1;
    if (f) {
        char *line = NULL;
        size_t cap = 0;
        static const char key[] = "MemAvailable:";
        while (kb < 0 && getline(&line, &cap, f) >= 0) {
            if (strncmp(line, key, sizeof key - 1)) continue;
            char *e;
            double v = strtod(line + sizeof key - 1, &e);
            while (*e == ' ' || *e == '\t') e++;
            if (e != line + sizeof key - 1 && isfinite(v) && v >= 0 && !strncmp(e, "kB", 2)) kb = v;
            else break;
        }
        free(line);
        fclose(f);
    }
    if (kb >= 0) return kb * 1024.0;
    return (double)sysconf(_SC_AVPHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
}

double hs_mem_available(hs_ctx *ctx)
{
#if HS_HAVE_CUDA
    if (HS_ON_GPU(ctx)) {
        char name[256];
        size_t total = 0, free_b = 0;
        int ma, mi;
        if (hs_ctx_describe_cuda(ctx->gpu, name, sizeof name, &total, &free_b, &ma, &mi) == HS_OK) return (double)free_b;
        hs_error_clear();
    }
#endif
    return hs_mem_host_available();
}

/* Whole multiples of `unit` holding `bytes`. */
static double round_up(double bytes, double unit) { return ceil(bytes / unit) * unit; }

/* glibc's malloc: a 16-byte header, 16-byte multiples; a block of 128 KiB or more (the mmap
 * threshold) mapped on its own, in whole pages */
double hs_host_footprint(double bytes)
{
    if (bytes <= 0) return 0;
    return bytes < 131072.0 ? round_up(bytes + 16, 16) : round_up(bytes + 16, 4096);
}

/* host_alloc: whole 128-byte lines, aligned: the C library takes the alignment's worth more and
 * gives back what it skips */
static double host_alloc_footprint(double bytes) { return bytes > 0 ? hs_host_footprint(round_up(bytes, 128) + 128 + 32) : 0; }

/* cudaMalloc: small blocks share the driver's pages (256-byte alignment, counted as 512 for its
 * book-keeping), large ones take whole 2 MiB pages */
static double cuda_footprint(double bytes)
{
    if (bytes <= 0) return 0;
    return bytes < 1048576.0 ? round_up(bytes, 512) : round_up(bytes, 2097152.0);
}

double hs_mem_footprint(const hs_ctx *ctx, double bytes)
{
    return HS_ON_GPU(ctx) ? cuda_footprint(bytes) : host_alloc_footprint(bytes);
}

/* the same rules: cudaMallocHost's pages on a GPU, host_alloc's lines on the CPU backend */
double hs_pinned_footprint(const hs_ctx *ctx, double bytes) { return hs_mem_footprint(ctx, bytes); }

static int host_alloc(size_t bytes, void **ptr)
{
    *ptr = NULL;
    if (bytes == 0) return HS_OK;
    /* whole 128-byte lines: the fields' row alignment (grid.c) counts on it */
    size_t rounded = (bytes + 127) & ~(size_t)127;
    *ptr = aligned_alloc(128, rounded);
    if (!*ptr) return HS_FAIL(HS_ERR_RUNTIME, "host allocation of %zu bytes failed", bytes);
    return HS_OK;
}

/* The CPU twins of the copies: host memory on both sides, so every kind is a memmove. */
static int host_copy(void *dst, const void *src, size_t bytes)
{
    if (bytes && dst != src) memmove(dst, src, bytes);
    return HS_OK;
}

static int host_zero(void *ptr, size_t bytes)
{
    if (bytes) memset(ptr, 0, bytes);
    return HS_OK;
}

int hs_mem_alloc(hs_ctx *ctx, size_t bytes, void **ptr)
{
    return HS_DISPATCH(ctx, host_alloc(bytes, ptr), hs_mem_alloc_cuda(ctx->cuda, bytes, ptr));
}

void hs_mem_free(hs_ctx *ctx, void *ptr) { HS_DISPATCH(ctx, free(ptr), hs_mem_free_cuda(ctx->cuda, ptr)); }

int hs_mem_copy(hs_ctx *ctx, void *dst, const void *src, size_t bytes, hs_copy_kind kind)
{
    /* a copy to the host waits for its data; one to the device is ordered on the context stream */
    int wait = kind == HS_COPY_D2H || kind == HS_COPY_H2H || kind == HS_COPY_H2D;
    return HS_DISPATCH(ctx, host_copy(dst, src, bytes), hs_mem_copy_cuda(ctx->cuda, dst, src, bytes, (int)kind, NULL, wait));
}

int hs_mem_copy_async(hs_ctx *ctx, void *dst, const void *src, size_t bytes, hs_copy_kind kind, void *stream)
{
    return HS_DISPATCH(ctx, host_copy(dst, src, bytes), hs_mem_copy_cuda(ctx->cuda, dst, src, bytes, (int)kind, stream, 0));
}

int hs_mem_zero(hs_ctx *ctx, void *ptr, size_t bytes)
{
    return HS_DISPATCH(ctx, host_zero(ptr, bytes), hs_mem_zero_cuda(ctx->cuda, ptr, bytes));
}

int hs_host_alloc_pinned(hs_ctx *ctx, size_t bytes, void **ptr)
{
    return HS_DISPATCH(ctx, host_alloc(bytes, ptr), hs_mem_host_alloc_cuda(bytes, ptr));
}

void hs_host_free_pinned(hs_ctx *ctx, void *ptr) { HS_DISPATCH(ctx, free(ptr), hs_mem_host_free_cuda(ptr)); }

/* Streams and events have no CPU counterpart (work there is synchronous): NULL handles, no-ops. */
int hs_stream_create(hs_ctx *ctx, void **stream)
{
    *stream = NULL;
    return HS_DISPATCH(ctx, HS_OK, hs_mem_stream_create_cuda(stream));
}

void hs_stream_destroy(hs_ctx *ctx, void *stream)
{
    HS_DISPATCH(ctx, (void)0, hs_mem_stream_destroy_cuda(stream));
}

int hs_stream_sync(hs_ctx *ctx, void *stream)
{
    return HS_DISPATCH(ctx, HS_OK, hs_mem_stream_sync_cuda(ctx->cuda, stream));
}

int hs_event_create(hs_ctx *ctx, void **event)
{
    *event = NULL;
    return HS_DISPATCH(ctx, HS_OK, hs_mem_event_create_cuda(event));
}

void hs_event_destroy(hs_ctx *ctx, void *event)
{
    HS_DISPATCH(ctx, (void)0, hs_mem_event_destroy_cuda(event));
}

int hs_event_record(hs_ctx *ctx, void *event, void *stream)
{
    return HS_DISPATCH(ctx, HS_OK, hs_mem_event_record_cuda(ctx->cuda, event, stream));
}

int hs_stream_wait_event(hs_ctx *ctx, void *stream, void *event)
{
    return HS_DISPATCH(ctx, HS_OK, hs_mem_stream_wait_event_cuda(ctx->cuda, stream, event));
}

int hs_timer_init(hs_ctx *ctx, hs_timer *t)
{
    memset(t, 0, sizeof *t);
    t->ctx = ctx;
    HS_CHECK(hs_event_create(ctx, &t->start));
    HS_CHECK(hs_event_create(ctx, &t->stop));
    return HS_OK;
}

int hs_timer_start(hs_timer *t)
{
    t->t0 = hs_wtime();
    return hs_event_record(t->ctx, t->start, NULL);
}

static int host_elapsed(const hs_timer *t, double *seconds)
{
    *seconds = hs_wtime() - t->t0;
    return HS_OK;
}

int hs_timer_stop(hs_timer *t, double *seconds)
{
    HS_CHECK(hs_event_record(t->ctx, t->stop, NULL));
    return HS_DISPATCH(t->ctx, host_elapsed(t, seconds), hs_mem_event_elapsed_cuda(t->start, t->stop, seconds));
}

void hs_timer_free(hs_timer *t)
{
    hs_event_destroy(t->ctx, t->start);
    hs_event_destroy(t->ctx, t->stop);
}
