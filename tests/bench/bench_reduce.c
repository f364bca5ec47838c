/* Benchmark of reductions, scans and radix sort, against CUB and the device copy bandwidth. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench/bench_util.h"
#include "kernels/memory.h"
#include "kernels/reduce/reduce.h"
#include "kernels/reduce/scan.h"
#include "kernels/rng/rng.h"
#include "kernels/reduce/sort.h"

static hs_ctx *ctx;
static size_t n;
static void *x, *y, *ksrc, *kbuf, *vsrc, *vbuf;
static double result;
static size_t index_;

typedef struct {
    hs_dtype key, value; /* value HS_C128 (16 bytes) means keys only */
    int cub;             /* 1: the CUB peer */
    int copy_only;       /* 1: only the restoring copy, to subtract from the sort's time */
    int ref;             /* 1: the test references hs_sort_*_ref (the "(old)" rows) */
} sort_job;

static int run_sum(void *a) { (void)a; return hs_reduce(ctx, HS_F64, HS_REDUCE_SUM, n, x, &result); }
static int run_sum_cub(void *a) { (void)a; return hs_reduce_sum_cub(ctx, HS_F64, n, x, &result); }
static int run_sum_f32(void *a) { (void)a; return hs_reduce(ctx, HS_F32, HS_REDUCE_SUM, 2 * n, ksrc, &result); }
static int run_sum_f32_cub(void *a) { (void)a; return hs_reduce_sum_cub(ctx, HS_F32, 2 * n, ksrc, &result); }
static int run_max(void *a) { (void)a; return hs_reduce(ctx, HS_F64, HS_REDUCE_MAX, n, x, &result); }
static int run_argmax(void *a) { (void)a; return hs_argmax(ctx, HS_F64, n, x, &index_, &result); }
static int run_norm2(void *a) { (void)a; return hs_norm(ctx, HS_F64, 2, n, x, &result); }
static int g_scan_ref; /* 1: the "(old)" rows, the test reference hs_scan_ref */
static int do_scan(hs_dtype t, int excl, size_t m, const void *in, void *out)
{
    return g_scan_ref ? hs_scan_ref(ctx, t, excl, m, in, out) : hs_scan(ctx, t, excl, m, in, out);
}
static int run_scan(void *a) { return do_scan(HS_F64, a != NULL, n, x, y); }
static int run_scan_cub(void *a) { return hs_scan_cub(ctx, HS_F64, a != NULL, n, x, y); }
static int run_scan_u32(void *a) { (void)a; return do_scan(HS_U32, 0, 2 * n, ksrc, y); }
static int run_scan_u32_cub(void *a) { (void)a; return hs_scan_cub(ctx, HS_U32, 0, 2 * n, ksrc, y); }
static int run_scan_u64(void *a) { (void)a; return do_scan(HS_U64, 0, n, ksrc, y); }
static int run_scan_u64_cub(void *a) { (void)a; return hs_scan_cub(ctx, HS_U64, 0, n, ksrc, y); }

/* One scan configuration: the new kernel (deterministic and, for floats, not), the old kernel, and
 * CUB once for all rows.  Rows are named "<name> (new)", "(new, nondet)", "(old)". */
static void bench_scan(const char *name, const char *size, const char *prec, int is_float, int (*fn)(void *),
                       int (*cub)(void *), void *arg, const char *peer, int gpu, int warm, int reps, double bytes)
{
    char row[96];
    int prev_det = ctx->deterministic;
    ctx->deterministic = 1;
    double t = 0, tp = 0;
    bench_time_pair(fn, arg, gpu ? cub : NULL, arg, warm, reps, &t, &tp);
    snprintf(row, sizeof row, "%s (new)", name);
    bench_row(row, size, prec, t, bytes, 0, gpu ? peer : NULL, tp);
    if (is_float && gpu) {
        ctx->deterministic = 0;
        snprintf(row, sizeof row, "%s (new, nondet)", name);
        bench_row(row, size, prec, bench_time(fn, arg, warm, reps), bytes, 0, peer, tp);
        ctx->deterministic = 1;
    }
    if (gpu) {
        g_scan_ref = 1;
        snprintf(row, sizeof row, "%s (old)", name);
        bench_row(row, size, prec, bench_time(fn, arg, warm, reps), bytes, 0, peer, tp);
        g_scan_ref = 0;
    }
    ctx->deterministic = prev_det;
}

/* Each sort starts from the same random keys (a sorted input would flatter a radix sort), so the
 * timed job restores them first; the restoring copy's own time is measured and subtracted. */
static int run_sort(void *arg)
{
    sort_job *j = arg;
    size_t kb = hs_dtype_size(j->key), vb = j->value == HS_C128 ? 0 : hs_dtype_size(j->value);
    HS_CHECK(hs_mem_copy_async(ctx, kbuf, ksrc, n * kb, HS_COPY_D2D, NULL));
    if (vb) HS_CHECK(hs_mem_copy_async(ctx, vbuf, vsrc, n * vb, HS_COPY_D2D, NULL));
    if (j->copy_only) return HS_OK;
    if (!vb)
        return j->cub ? hs_sort_keys_cub(ctx, j->key, n, kbuf)
             : j->ref ? hs_sort_keys_ref(ctx, j->key, n, kbuf) : hs_sort_keys(ctx, j->key, n, kbuf);
    return j->cub ? hs_sort_pairs_cub(ctx, j->key, j->value, n, kbuf, vbuf)
         : j->ref ? hs_sort_pairs_ref(ctx, j->key, j->value, n, kbuf, vbuf) : hs_sort_pairs(ctx, j->key, j->value, n, kbuf, vbuf);
}

static void bench_sort(const char *name, const char *size, hs_dtype key, hs_dtype value, int gpu, int warm, int reps)
{
    sort_job j = {key, value, 0, 1, 0};
    double tc = bench_time(run_sort, &j, warm, reps), tp = 0;
    if (gpu) {
        j.copy_only = 0;
        j.cub = 1;
        tp = bench_time(run_sort, &j, warm, reps) - tc;
    }
    size_t kb = hs_dtype_size(key), vb = value == HS_C128 ? 0 : hs_dtype_size(value);
    double bytes = 2.0 * (double)n * (double)(kb + vb) * (double)kb; /* one pass per key byte */
    char prec[32], row[96];
    snprintf(prec, sizeof prec, vb ? "%s+%s" : "%s", hs_dtype_name(key), hs_dtype_name(value));
    for (int ref = 0; ref <= gpu; ref++) {
        j.ref = ref;
        j.copy_only = 0;
        j.cub = 0;
        double t = bench_time(run_sort, &j, warm, reps) - tc;
        snprintf(row, sizeof row, "%s (%s)", name, ref ? "old" : "new");
        bench_row(row, size, prec, t, bytes, 0, gpu ? (vb ? "cub::DeviceRadixSort::SortPairs" : "cub::DeviceRadixSort::SortKeys") : NULL, tp);
        if (ctx->rank == 0) printf("#   %s %s: %.3g Gkeys/s\n", row, prec, (double)n / t * 1e-9);
    }
}

static void fill_random(uint64_t *h, size_t count, uint64_t seed, int as_double)
{
    for (size_t i = 0; i < count; i++) {
        uint64_t z = hs_rng_u64(seed, 0, i);
        if (as_double) ((double *)h)[i] = (double)(z >> 11) * 0x1.0p-53 - 0.25;
        else h[i] = z;
    }
}

int main(int argc, char **argv)
{
    ctx = bench_init(&argc, &argv);
    int gpu = HS_ON_GPU(ctx);
    n = gpu ? (size_t)1 << 28 : (size_t)1 << 24;
    int warm = gpu ? 3 : 1, reps = gpu ? 20 : 5;
    size_t bytes = n * 8;
    uint64_t *h = malloc(bytes);
    if (!h) bench_check(HS_FAIL(HS_ERR_RUNTIME, "out of host memory"), "host buffer");
    void **bufs[] = {&x, &y, &ksrc, &kbuf, &vsrc, &vbuf};
    for (int i = 0; i < 6; i++) bench_check(hs_mem_alloc(ctx, bytes, bufs[i]), "alloc");
    fill_random(h, n, 1, 1);
    bench_check(hs_mem_copy(ctx, x, h, bytes, HS_COPY_H2D), "copy");
    fill_random(h, n, 2, 0);
    bench_check(hs_mem_copy(ctx, ksrc, h, bytes, HS_COPY_H2D), "copy");
    fill_random(h, n, 3, 0);
    bench_check(hs_mem_copy(ctx, vsrc, h, bytes, HS_COPY_H2D), "copy");
    free(h);
    bench_copy_bandwidth();
    char size[32], size2[32];
    snprintf(size, sizeof size, "2^%d", gpu ? 28 : 24);
    snprintf(size2, sizeof size2, "2^%d", gpu ? 29 : 25);

    /* reductions read n elements once */
    double t = 0, tp = 0;
    bench_time_pair(run_sum, NULL, gpu ? run_sum_cub : NULL, NULL, warm, reps, &t, &tp);
    bench_row("reduce sum", size, "f64", t, (double)bytes, 0, gpu ? "cub::DeviceReduce::Sum" : NULL, tp);
    /* f32 data (the random key bits reinterpreted, so some are NaN: timing only), double accumulator */
    bench_time_pair(run_sum_f32, NULL, gpu ? run_sum_f32_cub : NULL, NULL, warm, reps, &t, &tp);
    bench_row("reduce sum", size2, "f32", t, (double)bytes, 0, gpu ? "cub::DeviceReduce::Reduce(double)" : NULL, tp);
    t = bench_time(run_max, NULL, warm, reps);
    bench_row("reduce max", size, "f64", t, (double)bytes, 0, NULL, 0);
    t = bench_time(run_argmax, NULL, warm, reps);
    bench_row("argmax", size, "f64", t, (double)bytes, 0, NULL, 0);
    t = bench_time(run_norm2, NULL, warm, reps);
    bench_row("norm2", size, "f64", t, (double)bytes, 0, NULL, 0);

    /* scans read and write n elements: 2n of traffic */
    int excl = 1;
    bench_scan("scan inclusive", size, "f64", 1, run_scan, run_scan_cub, NULL, "cub::DeviceScan::InclusiveSum", gpu,
               warm, reps, 2.0 * bytes);
    bench_scan("scan exclusive", size, "f64", 1, run_scan, run_scan_cub, &excl, "cub::DeviceScan::ExclusiveSum", gpu,
               warm, reps, 2.0 * bytes);
    bench_scan("scan inclusive", size2, "u32", 0, run_scan_u32, run_scan_u32_cub, NULL, "cub::DeviceScan::InclusiveSum",
               gpu, warm, reps, 2.0 * bytes);
    bench_scan("scan inclusive", size, "u64", 0, run_scan_u64, run_scan_u64_cub, NULL, "cub::DeviceScan::InclusiveSum",
               gpu, warm, reps, 2.0 * bytes);

    /* sorts: bytes = (key bytes) passes x (read + write) x n x (key + value bytes), the traffic of an
     * ideal one-read-one-write pass per 8-bit digit (the histogram read is not counted) */
    if (ctx->rank == 0)
        printf("# sort bytes = passes (8-bit digits) x 2 x n x (key + value bytes); restoring copy subtracted\n");
    bench_sort("sort keys", size, HS_U32, HS_C128, gpu, warm, reps);
    bench_sort("sort keys", size, HS_U64, HS_C128, gpu, warm, reps);
    bench_sort("sort keys", size, HS_F64, HS_C128, gpu, warm, reps);
    bench_sort("sort pairs", size, HS_U32, HS_U32, gpu, warm, reps);
    bench_sort("sort pairs", size, HS_U64, HS_U64, gpu, warm, reps);

    for (int i = 0; i < 6; i++) hs_mem_free(ctx, *bufs[i]);
    bench_finish();
    return 0;
}
