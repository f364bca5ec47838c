/* Self-check case of the dense-network family: a jet forward and backward pass (and an Adam step)
 * on the context's device against the same computation on the host backend. */
#include <math.h>
#include <stdlib.h>

#include "kernels/memory.h"
#include "kernels/nn/nn.h"
#include "kernels/nn/optim.h"
#include "kernels/rng/rng.h"
#include "solvers/selftest/selftest.h"

int hs_selftest_nn(hs_ctx *ctx, int64_t n, hs_selftest_result *r);

static double rel(const double *a, const double *b, size_t n)
{
    double e = 0, s = 0;
    for (size_t i = 0; i < n; i++) e += (a[i] - b[i]) * (a[i] - b[i]), s += b[i] * b[i];
    return s > 0 ? sqrt(e / s) : sqrt(e);
}

/* Outputs (4 channels) and parameter gradient after an Adam step, on the context c. */
static int run_net(hs_ctx *c, size_t n, uint64_t seed, double *out, double *params)
{
    const int w[] = {2, 20, 20, 20, 1};
    hs_jet jet = {2, {0, 1}, 1, {1}};
    hs_mlp *m = NULL;
    hs_mlp_batch *b = NULL;
    hs_adam *adam = NULL;
    void *dx = NULL;
    double *x = malloc(2 * n * sizeof *x);
    if (!x) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    for (size_t i = 0; i < 2 * n; i++) x[i] = 2.0 * hs_rng_u01(seed, 1, i) - 1.0;
    int rc = hs_mlp_create(c, HS_F64, 4, w, HS_ACT_TANH, &m);
    if (rc == HS_OK) rc = hs_mlp_init_xavier(m, seed);
    if (rc == HS_OK) rc = hs_mlp_batch_create(m, &jet, n, &b);
    if (rc == HS_OK) rc = hs_mem_alloc(c, 2 * n * sizeof(double), &dx);
    if (rc == HS_OK) rc = hs_mem_copy(c, dx, x, 2 * n * sizeof(double), HS_COPY_H2D);
    if (rc == HS_OK) rc = hs_mlp_forward(b, n, dx);
    if (rc == HS_OK) rc = hs_mem_copy(c, out, b->out, 4 * n * sizeof(double), HS_COPY_D2H);
    /* loss = 0.5 sum out^2 over every channel: dout = out */
    if (rc == HS_OK) rc = hs_mem_copy(c, b->dout, b->out, 4 * n * sizeof(double), HS_COPY_D2D);
    if (rc == HS_OK) rc = hs_mlp_zero_grad(m);
    if (rc == HS_OK) rc = hs_mlp_backward(b);
    if (rc == HS_OK) rc = hs_mlp_finish_grad(m);
    if (rc == HS_OK) rc = hs_adam_create(c, m->nparams, 0.9, 0.999, 1e-8, &adam);
    if (rc == HS_OK) rc = hs_adam_step(adam, 1e-3, m->params, m->grad);
    if (rc == HS_OK) rc = hs_mem_copy(c, params, m->params, m->nparams * sizeof(double), HS_COPY_D2H);
    hs_adam_destroy(adam);
    hs_mem_free(c, dx);
    hs_mlp_batch_destroy(b);
    hs_mlp_destroy(m);
    free(x);
    return rc;
}

int hs_selftest_nn(hs_ctx *ctx, int64_t n, hs_selftest_result *r)
{
    size_t pts = n > 50000 ? 50000 : (n < 1 ? 1 : (size_t)n);
    size_t np = 2 * 20 + 20 + 2 * (20 * 20 + 20) + 20 + 1;
    hs_ctx host = *ctx;
    host.device = HS_DEVICE_CPU;
    double *o1 = malloc(4 * pts * sizeof *o1), *o2 = malloc(4 * pts * sizeof *o2);
    double *p1 = malloc(np * sizeof *p1), *p2 = malloc(np * sizeof *p2);
    int rc = (o1 && o2 && p1 && p2) ? HS_OK : HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    if (rc == HS_OK) rc = run_net(ctx, pts, r->seed + 17, o1, p1);
    if (rc == HS_OK) rc = run_net(&host, pts, r->seed + 17, o2, p2);
    if (rc == HS_OK) {
        double e1 = rel(o1, o2, 4 * pts), e2 = rel(p1, p2, np);
        r->error = e1 > e2 ? e1 : e2;
        r->tolerance = r->tolerance > 1e-11 ? r->tolerance : 1e-11; /* GEMM summation order differs */
    }
    free(o1), free(o2), free(p1), free(p2);
    return rc;
}
