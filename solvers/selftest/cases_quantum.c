/* Self-check case of the quantum simulator: a fused random circuit on the context's device against
 * a naive host evaluation of the same gates. */
#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "solvers/quantum/qureg.h"
#include "solvers/selftest/selftest.h"

int hs_selftest_quantum(hs_ctx *ctx, int64_t n, hs_selftest_result *r);

/* out[i] = sum_k M[r(i)][k] in[i with the target bits set to k] where the controls hold. */
static void naive_apply(double complex *a, double complex *out, int nq, const hs_qop *op)
{
    size_t N = (size_t)1 << nq;
    int d = 1 << op->nt;
    for (size_t i = 0; i < N; i++) {
        if ((i & op->cmask) != op->cval) {
            out[i] = a[i];
            continue;
        }
        int row = 0;
        size_t base = i;
        for (int j = 0; j < op->nt; j++) {
            row |= (int)((i >> op->t[j]) & 1) << j;
            base &= ~((size_t)1 << op->t[j]);
        }
        double complex s = 0;
        for (int k = 0; k < d; k++) {
            size_t src = base;
            for (int j = 0; j < op->nt; j++) src |= (size_t)((k >> j) & 1) << op->t[j];
            s += (op->m[2 * (row * d + k)] + I * op->m[2 * (row * d + k) + 1]) * a[src];
        }
        out[i] = s;
    }
    memcpy(a, out, N * sizeof *out);
}

static hs_circuit *layers(int nq, uint64_t seed)
{
    static const char *names[] = {"u3", "cx", "rzz", "ccx", "cp", "swap", "h", "ry"};
    hs_circuit *c = hs_circuit_new(nq, 0);
    for (int i = 0; c && i < 12 * nq; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        const hs_qgate_def *d = hs_qgate_find(names[(seed >> 33) % 8]);
        int k = d->nctrl + d->ntarg, q[4];
        if (k > nq) continue;
        int first = (int)((seed >> 40) % (uint64_t)nq);
        for (int j = 0; j < k; j++) q[j] = (first + j * (1 + (int)(seed >> 60) % 3)) % nq;
        int distinct = 1;
        for (int a = 0; a < k; a++)
            for (int b = 0; b < a; b++) distinct &= q[a] != q[b];
        if (!distinct) continue;
        double p[3] = {0.1 * (double)(i % 31), 0.7 - 0.03 * (double)(i % 17), 1.3}, m[32];
        d->build(p, m);
        uint64_t cm = 0;
        for (int j = 0; j < d->nctrl; j++) cm |= 1ull << q[j];
        if (!hs_circuit_gate(c, d->name, d->ntarg, q + d->nctrl, cm, cm, m)) {
            hs_circuit_free(c);
            return NULL;
        }
    }
    return c;
}

int hs_selftest_quantum(hs_ctx *ctx, int64_t n, hs_selftest_result *r)
{
    int nq = 2;
    while (nq < 14 && ((int64_t)1 << (nq + 1)) <= n) nq++;
    size_t N = (size_t)1 << nq;
    hs_circuit *c = layers(nq, r->seed ? r->seed : 1), *f = c ? hs_circuit_fuse(c, 4, 1.0 / 16) : NULL;
    double complex *ref = calloc(N, sizeof *ref), *tmp = malloc(N * sizeof *tmp);
    double *got = malloc(2 * N * sizeof *got);
    hs_qureg *q = NULL;
    int rc = (!c || !f || !ref || !tmp || !got) ? HS_FAIL(HS_ERR_RUNTIME, "out of memory") : HS_OK;
    if (rc == HS_OK) rc = hs_qureg_create(ctx, nq, HS_C128, 1, &q);
    if (rc == HS_OK) rc = hs_qureg_run(q, f, NULL, NULL);
    if (rc == HS_OK) rc = hs_qureg_get_amplitudes(q, got);
    if (rc == HS_OK) {
        ref[0] = 1;
        for (int i = 0; i < c->nops; i++) naive_apply(ref, tmp, nq, &c->ops[i]);
        double e = 0;
        for (size_t i = 0; i < N; i++) e = fmax(e, cabs(got[2 * i] + I * got[2 * i + 1] - ref[i]));
        r->error = e; /* the state has norm 1: absolute = relative */
        r->tolerance = 1e-12;
    }
    hs_qureg_destroy(q);
    hs_circuit_free(c);
    hs_circuit_free(f);
    free(ref);
    free(tmp);
    free(got);
    return rc;
}
