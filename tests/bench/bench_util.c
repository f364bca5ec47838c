/* Benchmark helpers: measured machine limits, median timing, and the table/CSV rows. */
#include "bench/bench_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/blas/blas.h"
#include "kernels/memory.h"

static hs_ctx *g_ctx;
static FILE *g_csv;
static double g_copy_bw, g_gemm_rate[2];
static int g_header_printed;

void bench_check(int rc, const char *what)
{
    if (rc == HS_OK) return;
    fprintf(stderr, "benchmark failed in %s: %s\n", what, hs_error_message());
    hs_exit(rc);
}

hs_ctx *bench_init(int *argc, char ***argv)
{
    const char *dev = getenv("HS_BENCH_DEVICE");
    bench_check(hs_ctx_create(argc, argv, dev && *dev ? dev : "auto", 1, &g_ctx), "context");
    const char *path = getenv("HS_BENCH_CSV");
    if (g_ctx->rank == 0) {
        g_csv = fopen(path && *path ? path : "build/bench.csv", "a");
        if (!g_csv) fprintf(stderr, "bench: cannot append to %s; CSV rows skipped\n", path ? path : "build/bench.csv");
    }
    return g_ctx;
}

void bench_finish(void)
{
    if (g_csv) fclose(g_csv);
    g_csv = NULL;
    hs_ctx_destroy(g_ctx);
    g_ctx = NULL;
}

typedef struct {
    void *dst, *src;
    size_t bytes;
} copy_job;

static int run_copy(void *arg)
{
    copy_job *j = arg;
    return hs_mem_copy_async(g_ctx, j->dst, j->src, j->bytes, HS_COPY_D2D, NULL);
}

double bench_copy_bandwidth(void)
{
    if (g_copy_bw > 0) return g_copy_bw;
    /* large enough to dwarf the caches: 2 GiB on a GPU, 256 MiB on a CPU */
    size_t bytes = HS_ON_GPU(g_ctx) ? ((size_t)2 << 30) : ((size_t)256 << 20);
    copy_job j = {NULL, NULL, bytes};
    bench_check(hs_mem_alloc(g_ctx, bytes, &j.src), "copy buffer");
    bench_check(hs_mem_alloc(g_ctx, bytes, &j.dst), "copy buffer");
    bench_check(hs_mem_zero(g_ctx, j.src, bytes), "copy buffer");
    bench_check(hs_fill(g_ctx, HS_F64, bytes / 8, 1.25, j.src), "copy buffer");
    double t = bench_time(run_copy, &j, 3, 20);
    g_copy_bw = 2.0 * bytes / t;
    hs_mem_free(g_ctx, j.src);
    hs_mem_free(g_ctx, j.dst);
    if (g_ctx->rank == 0)
        printf("# limit: device copy bandwidth %.1f GB/s (read + write, %zu MiB)\n", g_copy_bw * 1e-9, bytes >> 20);
    return g_copy_bw;
}

typedef struct {
    hs_dtype t;
    int n;
    void *a, *b, *c;
} gemm_job;

static int run_gemm(void *arg)
{
    gemm_job *j = arg;
    return hs_gemm(g_ctx, j->t, 0, 0, j->n, j->n, j->n, 1.0, j->a, j->n, j->b, j->n, 0.0, j->c, j->n);
}

double bench_gemm_rate(int single)
{
    if (g_gemm_rate[single] > 0) return g_gemm_rate[single];
    gemm_job j = {single ? HS_F32 : HS_F64, HS_ON_GPU(g_ctx) ? 8192 : 2048, NULL, NULL, NULL};
    size_t elems = (size_t)j.n * j.n, bytes = elems * hs_dtype_size(j.t);
    bench_check(hs_mem_alloc(g_ctx, bytes, &j.a), "gemm buffer");
    bench_check(hs_mem_alloc(g_ctx, bytes, &j.b), "gemm buffer");
    bench_check(hs_mem_alloc(g_ctx, bytes, &j.c), "gemm buffer");
    /* not zeros: zero operands can run faster than real data */
    bench_check(hs_fill(g_ctx, j.t, elems, 0.5, j.a), "gemm fill");
    bench_check(hs_fill(g_ctx, j.t, elems, 1.5, j.b), "gemm fill");
    double t = bench_time(run_gemm, &j, 2, 10);
    g_gemm_rate[single] = 2.0 * j.n * (double)j.n * j.n / t;
    hs_mem_free(g_ctx, j.a);
    hs_mem_free(g_ctx, j.b);
    hs_mem_free(g_ctx, j.c);
    if (g_ctx->rank == 0)
        printf("# limit: %s GEMM %.1f GFLOP/s (n = %d)\n", single ? "fp32" : "fp64", g_gemm_rate[single] * 1e-9, j.n);
    return g_gemm_rate[single];
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Medians of `count` functions timed in turn (f0, f1, ..., f0, f1, ...) after their warm-ups. */
static void time_in_turn(int count, int (*const fn[])(void *), void *const arg[], int warmup, int reps, double *median)
{
    for (int k = 0; k < count; k++)
        for (int i = 0; i < warmup; i++) bench_check(fn[k](arg[k]), "warm-up");
    bench_check(hs_ctx_sync(g_ctx), "sync");
    if (reps <= 0) {
        for (int k = 0; k < count; k++) median[k] = 0;
        return;
    }
    double *t = malloc(sizeof *t * (size_t)(count * reps));
    if (!t) bench_check(HS_FAIL(HS_ERR_RUNTIME, "out of host memory"), "timings");
    hs_timer timer;
    bench_check(hs_timer_init(g_ctx, &timer), "timer");
    for (int i = 0; i < reps; i++)
        for (int k = 0; k < count; k++) {
            bench_check(hs_timer_start(&timer), "timer");
            bench_check(fn[k](arg[k]), "timed call");
            bench_check(hs_timer_stop(&timer, &t[k * reps + i]), "timer");
        }
    hs_timer_free(&timer);
    for (int k = 0; k < count; k++) {
        qsort(t + k * reps, (size_t)reps, sizeof *t, cmp_double);
        median[k] = t[k * reps + reps / 2];
    }
    free(t);
}

double bench_time(int (*fn)(void *), void *arg, int warmup, int reps)
{
    int (*const fns[1])(void *) = {fn};
    void *const args[1] = {arg};
    double m = 0;
    time_in_turn(1, fns, args, warmup, reps, &m);
    return m;
}

void bench_time_pair(int (*fa)(void *), void *arg_a, int (*fb)(void *), void *arg_b, int warmup, int reps, double *ta,
                     double *tb)
{
    int (*const fns[2])(void *) = {fa, fb};
    void *const args[2] = {arg_a, arg_b};
    double m[2] = {0, 0};
    time_in_turn(fb ? 2 : 1, fns, args, warmup, reps, m);
    *ta = m[0];
    *tb = m[1];
}

/* One CSV field: quoted (RFC 4180) when it holds a comma or a quote, e.g. "scan (new, nondet)". */
static void csv_text(const char *t)
{
    if (!t) t = "";
    if (!strpbrk(t, ",\"")) {
        fputs(t, g_csv);
        return;
    }
    fputc('"', g_csv);
    for (; *t; t++) {
        if (*t == '"') fputc('"', g_csv);
        fputc(*t, g_csv);
    }
    fputc('"', g_csv);
}

void bench_row(const char *kernel, const char *size, const char *precision, double seconds, double bytes,
               double flops, const char *peer_name, double peer_seconds)
{
    if (g_ctx->rank != 0) return;
    double gbs = bytes > 0 ? bytes / seconds * 1e-9 : 0, gfs = flops > 0 ? flops / seconds * 1e-9 : 0;
    double frac = 0;
    const char *limit = "";
    if (bytes > 0) {
        frac = bytes / seconds / bench_copy_bandwidth();
        limit = "copy";
    } else if (flops > 0 && precision && (!strcmp(precision, "f32") || !strcmp(precision, "f64"))) {
        /* only a GEMM of the same precision is a fair ceiling; 16-bit rows print no fraction */
        frac = flops / seconds / bench_gemm_rate(!strcmp(precision, "f32"));
        limit = "gemm";
    }
    double ratio = peer_seconds > 0 ? peer_seconds / seconds : 0;
    if (!g_header_printed) {
        printf("%-28s %-16s %-5s %11s %10s %10s %8s %-14s %7s\n", "kernel", "size", "prec", "time_ms", "GB/s",
               "GFLOP/s", "%limit", "peer", "ratio");
        g_header_printed = 1;
    }
    char frac_text[16] = "       -";
    if (*limit) snprintf(frac_text, sizeof frac_text, "%7.1f%%", 100 * frac);
    printf("%-28s %-16s %-5s %11.4f %10.1f %10.1f %8s %-14s %7.3f\n", kernel, size, precision, seconds * 1e3,
           gbs, gfs, frac_text, peer_name ? peer_name : "-", ratio);
    fflush(stdout);
    if (g_csv) {
        csv_text(kernel);
        fputc(',', g_csv);
        csv_text(size);
        fputc(',', g_csv);
        csv_text(precision);
        fprintf(g_csv, ",%.6e,%.3f,%.3f,%.4f,%s,", seconds, gbs, gfs, frac, limit);
        csv_text(peer_name ? peer_name : "");
        fprintf(g_csv, ",%.6e,%.4f\n", peer_seconds, ratio);
        fflush(g_csv);
    }
}
