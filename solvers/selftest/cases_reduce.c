/* Self-check case of the reduction family: sum, scan and sort of n values against host references. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/memory.h"
#include "kernels/reduce/reduce.h"
#include "kernels/reduce/scan.h"
#include "kernels/reduce/sort.h"
#include "kernels/rng/rng.h"
#include "solvers/selftest/selftest.h"

int hs_selftest_reduce(hs_ctx *ctx, int64_t n, hs_selftest_result *r);

/* |sum - exact| / sum|x| and max_i |scan_i - exact_i| / sum_{j<=i} |x_j| (long double references). */
static int sum_and_scan(hs_ctx *ctx, size_t n, const double *h, double *dx, double *err)
{
    double sum = 0;
    HS_CHECK(hs_reduce(ctx, HS_F64, HS_REDUCE_SUM, n, dx, &sum));
    HS_CHECK(hs_scan(ctx, HS_F64, 0, n, dx, dx));
    double *back = malloc(n * sizeof *back);
    if (!back) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    HS_CHECK(hs_mem_copy(ctx, back, dx, n * sizeof *back, HS_COPY_D2H));
    long double acc = 0, abs_acc = 0;
    double worst = 0;
    for (size_t i = 0; i < n; i++) {
        acc += h[i];
        abs_acc += fabs(h[i]);
        double e = (double)(fabsl(back[i] - acc) / abs_acc);
        worst = e > worst ? e : worst;
    }
    double e_sum = (double)(fabsl(sum - acc) / abs_acc);
    *err = e_sum > worst ? e_sum : worst;
    free(back);
    return HS_OK;
}

/* 0 when the sorted copy is ascending and a permutation (sum of the keys' bits unchanged). */
static int sort_error(hs_ctx *ctx, size_t n, const double *h, double *dx, double *err)
{
    HS_CHECK(hs_mem_copy(ctx, dx, h, n * sizeof *h, HS_COPY_H2D));
    HS_CHECK(hs_sort_keys(ctx, HS_F64, n, dx));
    double *back = malloc(n * sizeof *back);
    if (!back) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    HS_CHECK(hs_mem_copy(ctx, back, dx, n * sizeof *back, HS_COPY_D2H));
    uint64_t before = 0, after = 0;
    int ordered = 1;
    for (size_t i = 0; i < n; i++) {
        uint64_t a, b;
        memcpy(&a, &h[i], 8);
        memcpy(&b, &back[i], 8);
        before += a * 0x9E3779B97F4A7C15ull ^ a;
        after += b * 0x9E3779B97F4A7C15ull ^ b;
        if (i && back[i - 1] > back[i]) ordered = 0;
    }
    *err = ordered && before == after ? 0.0 : 1.0;
    free(back);
    return HS_OK;
}

int hs_selftest_reduce(hs_ctx *ctx, int64_t n64, hs_selftest_result *r)
{
    size_t n = n64 > 0 ? (size_t)n64 : 1;
    double *h = malloc(n * sizeof *h), *dx = NULL;
    if (!h) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    for (size_t i = 0; i < n; i++) h[i] = hs_rng_u01(r->seed, 0, i) * 2.0 - 0.5;
    HS_CHECK(hs_mem_alloc(ctx, n * sizeof *h, (void **)&dx));
    HS_CHECK(hs_mem_copy(ctx, dx, h, n * sizeof *h, HS_COPY_H2D));
    double e1 = 0, e2 = 0;
    HS_CHECK(sum_and_scan(ctx, n, h, dx, &e1));
    HS_CHECK(sort_error(ctx, n, h, dx, &e2));
    r->error = e1 > e2 ? e1 : e2; /* a broken sort reports 1 */
    hs_mem_free(ctx, dx);
    free(h);
    return HS_OK;
}
