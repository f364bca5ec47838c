/* The kernel self-check solver: runs each kernel family on the chosen backend against a CPU reference. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/memory.h"
#include "solvers/selftest/selftest.h"
#include "solvers/solver.h"

static const hs_param_decl g_params[] = {
    {"selftest", "n", HS_PARAM_INT, "1000000", 1, 1e9, NULL, "vector length of the checks"},
    {"selftest", "tolerance", HS_PARAM_REAL, "1e-12", 0, 1, NULL, "relative tolerance of fp64 checks"},
};

typedef struct {
    hs_ctx *ctx;
    int64_t n;
    double tol;
    uint64_t seed;
    int done;
} selftest;

static int declare(void) { return hs_params_declare(g_params, (int)(sizeof g_params / sizeof g_params[0])); }

static int create(hs_ctx *ctx, const hs_params *p, void **state)
{
    selftest *s = calloc(1, sizeof *s);
    if (!s) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    s->ctx = ctx;
    s->n = hs_params_int(p, "selftest.n");
    s->tol = hs_params_real(p, "selftest.tolerance");
    s->seed = (uint64_t)hs_params_int(p, "run.seed");
    *state = s;
    return HS_OK;
}

/* Round trip through device memory: the simplest thing that proves the backend moves data. */
static int check_memory(hs_ctx *ctx, int64_t n, hs_selftest_result *r)
{
    size_t bytes = (size_t)n * sizeof(double);
    double *h = malloc(bytes), *back = malloc(bytes), *d = NULL, *d2 = NULL;
    if (!h || !back) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    for (int64_t i = 0; i < n; i++) h[i] = sin(0.001 * (double)i);
    HS_CHECK(hs_mem_alloc(ctx, bytes, (void **)&d));
    HS_CHECK(hs_mem_alloc(ctx, bytes, (void **)&d2));
    HS_CHECK(hs_mem_copy(ctx, d, h, bytes, HS_COPY_H2D));
    HS_CHECK(hs_mem_copy(ctx, d2, d, bytes, HS_COPY_D2D));
    HS_CHECK(hs_mem_copy(ctx, back, d2, bytes, HS_COPY_D2H));
    r->error = memcmp(h, back, bytes) ? 1.0 : 0.0;
    r->tolerance = 0.0;
    hs_mem_free(ctx, d);
    hs_mem_free(ctx, d2);
    free(h);
    free(back);
    return HS_OK;
}

static const hs_selftest_case g_cases[] = {
    {"memory copy round trip", check_memory},
};

static int advance(void *state, double until, int64_t max_steps, int64_t *taken)
{
    (void)until;
    (void)max_steps;
    selftest *s = state;
    *taken = 1;
    s->done = 1;
    int failures = 0;
    if (s->ctx->rank == 0)
        printf("hpcsim kernel self-check on %s, n = %lld\n%-36s %12s %12s  %s\n", hs_device_name(s->ctx->device),
               (long long)s->n, "check", "error", "tolerance", "result");
    int ncases = (int)(sizeof g_cases / sizeof g_cases[0]);
    for (int i = 0; i < ncases + hs_selftest_extra_count(); i++) {
        const hs_selftest_case *c = i < ncases ? &g_cases[i] : hs_selftest_extra(i - ncases);
        hs_selftest_result r = {0, s->tol, s->seed};
        HS_CHECK(c->run(s->ctx, s->n, &r));
        int ok = r.error <= r.tolerance;
        failures += !ok;
        if (s->ctx->rank == 0)
            printf("%-36s %12.3e %12.3e  %s\n", c->name, r.error, r.tolerance, ok ? "ok" : "FAILED");
    }
    if (s->ctx->rank == 0) printf("%d check(s) failed\n", failures);
    if (failures) return HS_FAIL(HS_ERR_RUNTIME, "kernel self-check: %d check(s) failed", failures);
    return HS_OK;
}

static void progress(void *state, double *time, int64_t *step, double *t_end, double *work)
{
    selftest *s = state;
    *time = s->done;
    *step = s->done;
    *t_end = 0; /* not time-dependent */
    *work = (double)s->n;
}

static void destroy(void *state) { free(state); }

const hs_solver_ops hs_selftest_solver = {
    .name = "selftest",
    .summary = "kernel self-check: every kernel family on the chosen backend against a CPU reference",
    .declare = declare,
    .create = create,
    .advance = advance,
    .progress = progress,
    .destroy = destroy,
};
