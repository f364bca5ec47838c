/* Test helpers shared by the quantum tests: a naive gather-per-amplitude reference and random circuits. */
#ifndef HS_TEST_QUANTUM_REF_H
#define HS_TEST_QUANTUM_REF_H

#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "solvers/quantum/circuit.h"
#include "test_util.h"

typedef double complex cplx;

/* ---------------------------------------------------------------- naive reference */
/* out[i] = sum_k M[r(i)][k] in[i with the target bits set to k] where the controls hold. */
static inline void naive_apply(cplx *a, int n, const hs_qop *op)
{
    size_t N = (size_t)1 << n;
    int d = 1 << op->nt;
    cplx *out = malloc(N * sizeof *out);
    for (size_t i = 0; i < N; i++) {
        if ((i & op->cmask) != op->cval) {
            out[i] = a[i];
            continue;
        }
        int r = 0;
        size_t base = i;
        for (int j = 0; j < op->nt; j++) {
            r |= (int)((i >> op->t[j]) & 1) << j;
            base &= ~((size_t)1 << op->t[j]);
        }
        cplx s = 0;
        for (int k = 0; k < d; k++) {
            size_t src = base;
            for (int j = 0; j < op->nt; j++) src |= (size_t)((k >> j) & 1) << op->t[j];
            s += (op->m[2 * (r * d + k)] + I * op->m[2 * (r * d + k) + 1]) * a[src];
        }
        out[i] = s;
    }
    memcpy(a, out, N * sizeof *out);
    free(out);
}

static inline void naive_run(cplx *a, int n, const hs_circuit *c)
{
    for (int i = 0; i < c->nops; i++)
        if (c->ops[i].kind == HS_QOP_GATE) naive_apply(a, n, &c->ops[i]);
}

/* Random d x d unitary: Gram-Schmidt on seeded random complex columns. */
static inline void random_unitary(int d, hs_rng *g, double *m)
{
    static cplx u[64 * 64];
    for (int c = 0; c < d; c++) {
        for (int r = 0; r < d; r++) {
            double x[2];
            test_fill_f64(x, 2, hs_rng_next(g), -1, 1);
            u[r * d + c] = x[0] + I * x[1];
        }
        for (int p = 0; p < c; p++) {
            cplx dot = 0;
            for (int r = 0; r < d; r++) dot += conj(u[r * d + p]) * u[r * d + c];
            for (int r = 0; r < d; r++) u[r * d + c] -= dot * u[r * d + p];
        }
        double nn = 0;
        for (int r = 0; r < d; r++) nn += creal(u[r * d + c] * conj(u[r * d + c]));
        for (int r = 0; r < d; r++) u[r * d + c] /= sqrt(nn);
    }
    for (int i = 0; i < d * d; i++) m[2 * i] = creal(u[i]), m[2 * i + 1] = cimag(u[i]);
}

static const char *g_names[] = {"h", "x", "y", "z", "s", "sdg", "t", "tdg", "sx", "sxdg", "rx", "ry", "rz", "u1",
                                "u2", "u3", "p", "cx", "cy", "cz", "ch", "csx", "crx", "cry", "crz", "cu1", "cp", "cu3",
                                "cu", "swap", "cswap", "ccx", "c3x", "c4x", "c3sqrtx", "rxx", "ryy", "rzz", "id"};

/* Pick k distinct qubits of n. */
static inline void pick(int n, int k, hs_rng *g, int *q)
{
    for (int j = 0; j < k; j++) {
        int ok;
        do {
            q[j] = (int)hs_rng_below(g, (uint64_t)n);
            ok = 1;
            for (int i = 0; i < j; i++) ok &= q[i] != q[j];
        } while (!ok);
    }
}

/* A random circuit on n qubits: qelib1 gates, random (multi-)controlled 1- and 2-qubit unitaries,
 * random diagonal and permutation gates. */
static inline hs_circuit *random_circuit_k(int n, int nops, uint64_t seed, int maxnt)
{
    hs_circuit *c = hs_circuit_new(n, 0);
    hs_rng g;
    hs_rng_seed(&g, seed, 0);
    for (int i = 0; i < nops; i++) {
        int kind = (int)(hs_rng_next(&g) % 4);
        int q[16];
        double m[2 * 64 * 64];
        if (kind == 0) { /* named gate */
            const hs_qgate_def *d;
            do d = hs_qgate_find(g_names[hs_rng_next(&g) % (sizeof g_names / sizeof g_names[0])]);
            while (d->nctrl + d->ntarg > n);
            double p[4];
            test_fill_f64(p, 4, hs_rng_next(&g), -M_PI, M_PI);
            d->build(p, m);
            pick(n, d->nctrl + d->ntarg, &g, q);
            uint64_t cm = 0;
            for (int j = 0; j < d->nctrl; j++) cm |= 1ull << q[j];
            hs_circuit_gate(c, d->name, d->ntarg, q + d->nctrl, cm, cm, m);
        } else {
            int nt = maxnt <= 2 ? (n >= 2 && (hs_rng_next(&g) & 1) ? 2 : 1) : 1 + (int)(hs_rng_next(&g) % (uint64_t)maxnt);
            if (nt > n) nt = n;
            int nc = (int)(hs_rng_next(&g) % 3);
            if (nt + nc > n) nc = n - nt;
            int d = 1 << nt;
            pick(n, nt + nc, &g, q);
            if (kind == 1) random_unitary(d, &g, m);
            else {
                memset(m, 0, sizeof(double) * 2 * d * d);
                int perm[64];
                for (int k = 0; k < d; k++) perm[k] = k;
                for (int k = d - 1; kind == 3 && k > 0; k--) { /* random permutation */
                    int r = (int)(hs_rng_next(&g) % (uint64_t)(k + 1)), t = perm[k];
                    perm[k] = perm[r];
                    perm[r] = t;
                }
                for (int r = 0; r < d; r++) {
                    double ph[1];
                    test_fill_f64(ph, 1, hs_rng_next(&g), -M_PI, M_PI);
                    m[2 * (r * d + perm[r])] = cos(ph[0]);
                    m[2 * (r * d + perm[r]) + 1] = sin(ph[0]);
                }
            }
            uint64_t cm = 0, cv = 0;
            for (int j = 0; j < nc; j++) {
                cm |= 1ull << q[nt + j];
                cv |= (hs_rng_next(&g) & 1ull) << q[nt + j]; /* controls on 0 or on 1 */
            }
            hs_qop *op = hs_circuit_gate(c, "random", nt, q, cm, cv, m);
            assert_non_null(op);
            if (kind == 2) assert_int_equal(op->mk, HS_QMAT_DIAG);
            if (kind == 3) assert_int_not_equal(op->mk, HS_QMAT_DENSE); /* the identity permutation is diagonal */
        }
    }
    return c;
}

/* Gates of 1 or 2 targets (the qelib1 sizes). */
static inline hs_circuit *random_circuit(int n, int nops, uint64_t seed) { return random_circuit_k(n, nops, seed, 2); }

#endif
