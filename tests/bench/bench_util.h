/* Benchmark helpers: context, machine limits measured in the same run, timing, table + CSV rows. */
#ifndef HS_BENCH_UTIL_H
#define HS_BENCH_UTIL_H

#include <stddef.h>

#include "kernels/context.h"
#include "kernels/dispatch.h"

/* Context for benchmarks: device from HS_BENCH_DEVICE (auto | cpu | cuda; default auto).
 * Also opens the CSV named by HS_BENCH_CSV (default build/bench.csv) for appending. */
hs_ctx *bench_init(int *argc, char ***argv);
void bench_finish(void);

/* Limits measured once per process on the context's device:
 * copy bandwidth in bytes/s (bytes read + bytes written of a large device-to-device copy), and
 * GEMM rate in flop/s (cuBLAS / OpenBLAS, square n = 8192 on GPU, 2048 on CPU). */
double bench_copy_bandwidth(void);
double bench_gemm_rate(int single_precision);

/* Median seconds of `reps` calls of fn(arg) after `warmup` calls, each timed with the context's
 * timer (device events on CUDA).  fn returns an hs status; a failure aborts the benchmark. */
double bench_time(int (*fn)(void *arg), void *arg, int warmup, int reps);
/* Ours and its peer timed alternately (a, b, a, b, ...), medians into *ta and *tb: a drift of the
 * device's speed during the measurement then biases neither side of the ratio.  fb NULL: no peer,
 * a alone is timed and *tb is 0. */
void bench_time_pair(int (*fa)(void *arg), void *arg_a, int (*fb)(void *arg), void *arg_b, int warmup, int reps,
                     double *ta, double *tb);

/* One row of the result table.  bytes or flops may be 0 when not meaningful.  The fraction of the
 * limit is bytes/time over bench_copy_bandwidth() when bytes > 0, else flops/time over
 * bench_gemm_rate().  peer_name/peer_seconds (NULL/0 when none) give the peer library and its
 * time on the same job; the ratio printed is peer_seconds / seconds (> 1: we are faster). */
void bench_row(const char *kernel, const char *size, const char *precision, double seconds,
               double bytes, double flops, const char *peer_name, double peer_seconds);

/* Abort the benchmark with the pending error message when rc != HS_OK. */
void bench_check(int rc, const char *what);

#endif
