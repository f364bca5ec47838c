/* Quantum simulator tests: kernels vs a naive gather-per-amplitude reference on random circuits
 * (every gate kind, 1-12 qubits, both precisions), fusion, known circuits (GHZ, QFT, Grover),
 * sampling (chi-square), marginals, Pauli expectations, measurement and reset, the OpenQASM reader
 * (errors, non-finite parameters, the expansion limit), the Pauli and graph readers, VQE against
 * exact diagonalisation, its stopping reasons, and adjoint against parameter-shift gradients. */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/json.h"
#include "kernels/memory.h"
#include "solvers/quantum/qasm.h"
#include "solvers/quantum/qureg.h"
#include "solvers/quantum/vqe.h"
#include "test_util.h"


#include "quantum_ref.h"

static cplx *random_state(int n, uint64_t seed)
{
    size_t N = (size_t)1 << n;
    double *x = malloc(2 * N * sizeof *x);
    test_fill_f64(x, 2 * N, seed, -1, 1);
    double nn = 0;
    for (size_t i = 0; i < 2 * N; i++) nn += x[i] * x[i];
    for (size_t i = 0; i < 2 * N; i++) x[i] /= sqrt(nn);
    return (cplx *)x;
}

static double max_diff(const double *a, const cplx *b, size_t N)
{
    double e = 0;
    for (size_t i = 0; i < N; i++) e = fmax(e, cabs(a[2 * i] + I * a[2 * i + 1] - b[i]));
    return e;
}

static void test_random_circuits(void **st)
{
    (void)st;
    hs_ctx *ctx = test_ctx();
    static const int sizes[] = {1, 2, 3, 4, 6, 9, 12};
    for (int prec = 0; prec < 2; prec++)
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
            int n = sizes[si];
            size_t N = (size_t)1 << n;
            hs_circuit *c = random_circuit(n, n >= 12 ? 60 : 120, 1000 + 17 * (uint64_t)n + (uint64_t)prec);
            cplx *ref = random_state(n, 77 + (uint64_t)n);
            hs_qureg *q;
            TEST_OK(hs_qureg_create(ctx, n, prec ? HS_C64 : HS_C128, 0, &q));
            TEST_OK(hs_qureg_set_amplitudes(q, (double *)ref));
            TEST_OK(hs_qureg_run(q, c, NULL, NULL));
            naive_run(ref, n, c);
            double *got = malloc(2 * N * sizeof *got);
            TEST_OK(hs_qureg_get_amplitudes(q, got));
            double err = max_diff(got, ref, N), nrm;
            TEST_OK(hs_qureg_norm2(q, &nrm));
            if (prec == 0) {
                TEST_LE(err, 1e-12);
                TEST_LE(fabs(nrm - 1), 1e-12); /* unitary gates keep the norm */
            } else {
                TEST_LE(err, 2e-5);
                TEST_LE(fabs(nrm - 1), 1e-4);
            }
            free(got);
            free(ref);
            hs_qureg_destroy(q);
            hs_circuit_free(c);
        }
}

/* Fused blocks of 2..5 qubits against the unfused run: 1e-12 in complex128. */
static void test_fusion(void **st)
{
    (void)st;
    hs_ctx *ctx = test_ctx();
    int n = 10;
    size_t N = (size_t)1 << n;
    hs_circuit *c = random_circuit(n, 200, 4242);
    cplx *init = random_state(n, 5);
    double *a = malloc(2 * N * sizeof *a), *b = malloc(2 * N * sizeof *b);
    hs_qureg *q;
    TEST_OK(hs_qureg_create(ctx, n, HS_C128, 0, &q));
    TEST_OK(hs_qureg_set_amplitudes(q, (double *)init));
    TEST_OK(hs_qureg_run(q, c, NULL, NULL));
    TEST_OK(hs_qureg_get_amplitudes(q, a));
    for (int k = 2; k <= HS_Q_MAX_TARGETS; k++)
        for (int w = 0; w < 2; w++) {
            hs_circuit *f = hs_circuit_fuse(c, k, w ? 1.0 / 16 : 1.0 / 4);
            assert_non_null(f);
            assert_true(f->nops < c->nops);
            for (int i = 0; i < f->nops; i++) assert_true(f->ops[i].nt <= k);
            TEST_OK(hs_qureg_set_amplitudes(q, (double *)init));
            TEST_OK(hs_qureg_run(q, f, NULL, NULL));
            TEST_OK(hs_qureg_get_amplitudes(q, b));
            double e = 0;
            for (size_t i = 0; i < 2 * N; i++) e = fmax(e, fabs(a[i] - b[i]));
            TEST_LE(e, 1e-12);
            hs_circuit_free(f);
        }
    hs_qureg_destroy(q);
    free(a);
    free(b);
    free(init);
    hs_circuit_free(c);
}

/* U then U^dagger (gates reversed, each conjugate-transposed) returns the input. */
static void test_inverse(void **st)
{
    (void)st;
    hs_ctx *ctx = test_ctx();
    int n = 8;
    size_t N = (size_t)1 << n;
    hs_circuit *c = random_circuit(n, 100, 99);
    cplx *init = random_state(n, 3);
    hs_qureg *q;
    TEST_OK(hs_qureg_create(ctx, n, HS_C128, 0, &q));
    TEST_OK(hs_qureg_set_amplitudes(q, (double *)init));
    TEST_OK(hs_qureg_run(q, c, NULL, NULL));
    for (int i = c->nops - 1; i >= 0; i--) {
        const hs_qop *op = &c->ops[i];
        int d = 1 << op->nt;
        double md[2 * 16];
        for (int r = 0; r < d; r++)
            for (int k = 0; k < d; k++) {
                md[2 * (k * d + r)] = op->m[2 * (r * d + k)];
                md[2 * (k * d + r) + 1] = -op->m[2 * (r * d + k) + 1];
            }
        TEST_OK(hs_qureg_apply_matrix(q, op->nt, op->t, op->cmask, op->cval, md));
    }
    double *got = malloc(2 * N * sizeof *got);
    TEST_OK(hs_qureg_get_amplitudes(q, got));
    TEST_LE(max_diff(got, init, N), 1e-12);
    free(got);
    free(init);
    hs_qureg_destroy(q);
    hs_circuit_free(c);
}

static hs_qureg *run_text(const char *text, hs_dtype t)
{
    hs_circuit *c;
    TEST_OK(hs_qasm_parse_string("test.qasm", text, &c));
    hs_qureg *q;
    TEST_OK(hs_qureg_create(test_ctx(), c->nqubits, t, 0, &q));
    hs_rng rng;
    hs_rng_seed(&rng, 1, 0);
    uint64_t cl[1] = {0};
    TEST_OK(hs_qureg_run(q, c, &rng, cl));
    hs_circuit_free(c);
    return q;
}

static void test_ghz(void **st)
{
    (void)st;
    for (int prec = 0; prec < 2; prec++) {
        hs_qureg *q = run_text("OPENQASM 2.0; include \"qelib1.inc\"; qreg q[6]; h q[0];"
                               "cx q[0],q[1]; cx q[1],q[2]; cx q[2],q[3]; cx q[3],q[4]; cx q[4],q[5];",
                               prec ? HS_C64 : HS_C128);
        double a[2 * 64];
        TEST_OK(hs_qureg_get_amplitudes(q, a));
        double tol = prec ? 1e-7 : 1e-15;
        for (int i = 0; i < 64; i++) {
            double want = (i == 0 || i == 63) ? M_SQRT1_2 : 0.0;
            TEST_LE(fabs(a[2 * i] - want), tol);
            TEST_LE(fabs(a[2 * i + 1]), tol);
        }
        hs_qureg_destroy(q);
    }
}

/* QFT of |x> (the textbook circuit with swaps): amplitude y is exp(2 pi i x y / 2^n) / 2^(n/2). */
static void test_qft(void **st)
{
    (void)st;
    int n = 7, x = 83;
    char text[8192];
    int len = snprintf(text, sizeof text, "OPENQASM 2.0; include \"qelib1.inc\"; qreg q[%d];", n);
    for (int j = 0; j < n; j++)
        if (x >> j & 1) len += snprintf(text + len, sizeof text - (size_t)len, "x q[%d];", j);
    for (int j = n - 1; j >= 0; j--) {
        len += snprintf(text + len, sizeof text - (size_t)len, "h q[%d];", j);
        for (int k = j - 1; k >= 0; k--)
            len += snprintf(text + len, sizeof text - (size_t)len, "cp(pi/2^%d) q[%d],q[%d];", j - k, k, j);
    }
    for (int j = 0; j < n / 2; j++) len += snprintf(text + len, sizeof text - (size_t)len, "swap q[%d],q[%d];", j, n - 1 - j);
    hs_qureg *q = run_text(text, HS_C128);
    double a[2 * 128];
    TEST_OK(hs_qureg_get_amplitudes(q, a));
    double e = 0;
    for (int y = 0; y < 128; y++) {
        cplx want = cexp(2 * M_PI * I * (double)((x * y) % 128) / 128.0) / sqrt(128.0);
        e = fmax(e, cabs(a[2 * y] + I * a[2 * y + 1] - want));
        TEST_LE(fabs(cabs(a[2 * y] + I * a[2 * y + 1]) - pow(2, -n / 2.0)), 1e-14);
    }
    TEST_LE(e, 1e-14);
    hs_qureg_destroy(q);
}

static const char *g_grover =
    "OPENQASM 2.0;\ninclude \"qelib1.inc\";\n"
    "gate ccz a, b, c { h c; ccx a, b, c; h c; }\n"
    "gate oracle a, b, c { x b; ccz a, b, c; x b; }\n"
    "gate diffuse a, b, c { h a; h b; h c; x a; x b; x c; ccz a, b, c; x a; x b; x c; h a; h b; h c; }\n"
    "qreg q[3]; creg c[3]; h q;\n"
    "oracle q[0], q[1], q[2]; diffuse q[0], q[1], q[2];\n"
    "oracle q[0], q[1], q[2]; diffuse q[0], q[1], q[2];\n"
    "barrier q;\n";

/* Grover on 3 qubits, 2 iterations: P(|101>) = sin^2(5 asin(8^-1/2)) = 121/128. */
static void test_grover(void **st)
{
    (void)st;
    hs_qureg *q = run_text(g_grover, HS_C128);
    double p[8];
    TEST_OK(hs_qureg_probabilities(q, p));
    TEST_LE(fabs(p[5] - 121.0 / 128.0), 1e-14);
    TEST_LE(fabs(p[5] - 0.945), 5e-4);
    hs_qureg_destroy(q);
}

/* Counts of 10^5 shots against the exact probabilities: chi-square below the 99.9% quantile. */
static void test_sampling(void **st)
{
    (void)st;
    hs_ctx *ctx = test_ctx();
    int n = 5;
    hs_circuit *c = random_circuit(n, 40, 31337);
    hs_qureg *q;
    TEST_OK(hs_qureg_create(ctx, n, HS_C128, 0, &q));
    TEST_OK(hs_qureg_run(q, c, NULL, NULL));
    double p[32];
    TEST_OK(hs_qureg_probabilities(q, p));
    int64_t shots = 100000;
    uint64_t *out = malloc((size_t)shots * sizeof *out);
    hs_rng rng;
    hs_rng_seed(&rng, 2026, 0);
    TEST_OK(hs_qureg_sample(q, shots, &rng, out));
    double counts[32] = {0};
    for (int64_t k = 0; k < shots; k++) {
        assert_true(out[k] < 32);
        counts[out[k]]++;
    }
    double chi2 = 0;
    int dof = -1;
    for (int i = 0; i < 32; i++) {
        double e = p[i] * (double)shots;
        if (e < 5) { /* bins too small for chi-square must still be (almost) empty */
            assert_true(counts[i] <= 5 * e + 10);
            continue;
        }
        chi2 += (counts[i] - e) * (counts[i] - e) / e;
        dof++;
    }
    /* Wilson-Hilferty 99.9% quantile of chi-square(dof) */
    double z = 3.09, k = dof, q999 = k * pow(1 - 2 / (9 * k) + z * sqrt(2 / (9 * k)), 3);
    TEST_LE(chi2, q999);
    /* same seed, same samples */
    uint64_t *again = malloc((size_t)shots * sizeof *again);
    hs_rng_seed(&rng, 2026, 0);
    TEST_OK(hs_qureg_sample(q, shots, &rng, again));
    assert_memory_equal(out, again, (size_t)shots * sizeof *out);
    free(out);
    free(again);
    hs_qureg_destroy(q);
    hs_circuit_free(c);
}

/* Marginals, Pauli expectations and H|psi> against sums over the naive state. */
static void test_observables(void **st)
{
    (void)st;
    hs_ctx *ctx = test_ctx();
    int n = 9;
    size_t N = (size_t)1 << n;
    cplx *a = random_state(n, 8);
    for (int prec = 0; prec < 2; prec++) {
        double tol = prec ? 2e-6 : 1e-13;
        hs_qureg *q, *r;
        TEST_OK(hs_qureg_create(ctx, n, prec ? HS_C64 : HS_C128, 0, &q));
        TEST_OK(hs_qureg_create(ctx, n, prec ? HS_C64 : HS_C128, 0, &r));
        TEST_OK(hs_qureg_set_amplitudes(q, (double *)a));
        int qs[3] = {7, 0, 4};
        double m[8], mref[8] = {0};
        TEST_OK(hs_qureg_marginal(q, 3, qs, m));
        for (size_t i = 0; i < N; i++) {
            int k = (int)((i >> 7 & 1) | (i >> 0 & 1) << 1 | (i >> 4 & 1) << 2);
            mref[k] += creal(a[i] * conj(a[i]));
        }
        for (int k = 0; k < 8; k++) TEST_LE(fabs(m[k] - mref[k]), tol);
        /* Pauli strings with X, Y and Z */
        hs_rng g;
        hs_rng_seed(&g, 12, 0);
        hs_pauli_sum *h = hs_pauli_sum_new();
        for (int t = 0; t < 6; t++) {
            uint64_t xm = hs_rng_next(&g) & (N - 1), zm = hs_rng_next(&g) & (N - 1);
            double cval[1];
            test_fill_f64(cval, 1, hs_rng_next(&g), -1, 1);
            TEST_OK(hs_pauli_sum_add(h, cval[0], xm, zm));
            double v, ref = 0;
            TEST_OK(hs_qureg_expect_pauli(q, xm, zm, &v));
            for (size_t i = 0; i < N; i++) { /* P|i> = i^ny (-1)^(i.zm) |i ^ xm> */
                cplx ph = cpow(I, __builtin_popcountll(xm & zm)) * ((__builtin_popcountll(i & zm) & 1) ? -1 : 1);
                ref += creal(conj(a[i ^ xm]) * ph * a[i]);
            }
            TEST_LE(fabs(v - ref), tol);
        }
        double e, ip[2];
        TEST_OK(hs_qureg_expect(q, h, &e));
        TEST_OK(hs_qureg_apply_pauli_sum(r, q, h));
        TEST_OK(hs_qureg_inner(q, r, ip));
        TEST_LE(fabs(ip[0] - e), tol);
        TEST_LE(fabs(ip[1]), tol); /* Hermitian: <psi|H|psi> is real */
        hs_pauli_sum_free(h);
        hs_qureg_destroy(q);
        hs_qureg_destroy(r);
    }
    free(a);
}

/* Measurement: outcome by u against P(1), collapse and renormalisation; reset gives |0>. */
static void test_measure_reset(void **st)
{
    (void)st;
    hs_ctx *ctx = test_ctx();
    hs_qureg *q;
    TEST_OK(hs_qureg_create(ctx, 3, HS_C128, 0, &q));
    double ry[1] = {2 * acos(sqrt(0.3))}; /* P(1) = 0.7 on qubit 1 */
    TEST_OK(hs_qureg_gate(q, "ry", ry, (int[]){1}));
    TEST_OK(hs_qureg_gate(q, "cx", NULL, (int[]){1, 2}));
    int b;
    double pb, a[16];
    TEST_OK(hs_qureg_measure(q, 1, 0.69, &b, &pb));
    assert_int_equal(b, 1);
    TEST_LE(fabs(pb - 0.7), 1e-14);
    TEST_OK(hs_qureg_get_amplitudes(q, a));
    TEST_LE(fabs(a[2 * 6] - 1.0), 1e-14); /* |110> */
    TEST_OK(hs_qureg_reset(q, 2, 0.5));
    TEST_OK(hs_qureg_get_amplitudes(q, a));
    TEST_LE(fabs(a[2 * 2] - 1.0), 1e-14); /* |010> */
    hs_qureg_destroy(q);
    /* mid-circuit measurement with a condition: teleport-like correction always ends in |1> on q[1] */
    hs_circuit *c;
    TEST_OK(hs_qasm_parse_string("m.qasm", "OPENQASM 2.0; include \"qelib1.inc\"; qreg q[2]; creg c[1];"
                                           "h q[0]; measure q[0] -> c[0]; if (c == 0) x q[1]; if (c == 1) x q[1];"
                                           "reset q[0];", &c));
    assert_false(hs_circuit_terminal_measurements(c));
    TEST_OK(hs_qureg_create(ctx, 2, HS_C128, 0, &q));
    hs_rng rng;
    hs_rng_seed(&rng, 1, 0);
    int ones = 0;
    for (int s = 0; s < 200; s++) {
        uint64_t cl[1] = {0};
        TEST_OK(hs_qureg_init_basis(q, 0));
        TEST_OK(hs_qureg_run(q, c, &rng, cl));
        ones += (int)cl[0];
        TEST_OK(hs_qureg_get_amplitudes(q, a));
        TEST_LE(fabs(a[2 * 2] - 1.0), 1e-14);
    }
    assert_true(ones > 60 && ones < 140);
    hs_qureg_destroy(q);
    hs_circuit_free(c);
}

static void expect_qasm_error(const char *text, const char *msg)
{
    hs_circuit *c = NULL;
    int rc = hs_qasm_parse_string("bad.qasm", text, &c);
    assert_int_equal(rc, HS_ERR_INPUT);
    if (!strstr(hs_error_message(), msg)) fail_msg("message '%s' lacks '%s'", hs_error_message(), msg);
    hs_error_clear();
}

static void test_qasm_errors(void **st)
{
    (void)st;
    expect_qasm_error("OPENQASM 2.0;\nqreg q[2]\nh q[0];\n", "bad.qasm:3:1: expected ';' (at 'h')");
    expect_qasm_error("OPENQASM 2.0;\ninclude \"qelib1.inc\";\nqreg q[2];\nfoo q[0];\n", "bad.qasm:4:1: undefined gate (at 'foo')");
    expect_qasm_error("OPENQASM 2.0;\nqreg q[2];\nh q[0];\n", "bad.qasm:3:1: undefined gate (it is in qelib1.inc");
    expect_qasm_error("OPENQASM 2.0;\ninclude \"qelib1.inc\";\nqreg q[3];\nx q[3];\n",
                      "bad.qasm:4:5: index out of range for qreg q[3] (at '3')");
    expect_qasm_error("OPENQASM 2.0;\ninclude \"qelib1.inc\";\nqreg q[3];\ncx q[1], q[1];\n", "the same qubit is used twice");
    expect_qasm_error("OPENQASM 2.0;\ninclude \"qelib1.inc\";\nqreg q[3];\nrx q[1];\n", "wrong number of parameters");
    expect_qasm_error("OPENQASM 2.0;\ninclude \"qelib1.inc\";\nqreg q[3];\nrx(pi/2 + ) q[1];\n", "expected an expression");
    expect_qasm_error("OPENQASM 2.0;\nqreg q[51];\n", "register too large");
    /* keywords where the grammar allows none were "undefined gate" (at 'if', 'barrier', 'measure') */
    expect_qasm_error("OPENQASM 2.0;\ninclude \"qelib1.inc\";\nqreg q[1];\ncreg c[1];\nif (c == 1) if (c == 1) x q[0];\n",
                      "bad.qasm:5:13: nested if (at 'if')");
    expect_qasm_error("OPENQASM 2.0;\ninclude \"qelib1.inc\";\nqreg q[1];\ncreg c[1];\nif (c == 1) barrier q;\n",
                      "bad.qasm:5:13: only a gate, measure or reset may follow if (...) (at 'barrier')");
    expect_qasm_error("OPENQASM 2.0;\ncreg c[1];\ngate g a { measure a -> c[0]; }\n",
                      "bad.qasm:3:12: a gate body holds only gate calls and barrier (at 'measure')");
    expect_qasm_error("OPENQASM 2.0;\ngate g a { reset a; }\n", "bad.qasm:2:12: a gate body holds only gate calls and barrier (at 'reset')");
    /* a parameter called pi was pi in the body whatever the call passed; a name both parameter and qubit */
    expect_qasm_error("OPENQASM 2.0;\ninclude \"qelib1.inc\";\ngate g(pi) a { rz(pi) a; }\nqreg q[1];\ng(1) q[0];\n",
                      "bad.qasm:3:8: a reserved word, not a name for parameter names (at 'pi')");
    expect_qasm_error("OPENQASM 2.0;\ninclude \"qelib1.inc\";\ngate g(a) sin { rz(a) sin; }\n", "a reserved word, not a name for qubit arguments");
    expect_qasm_error("OPENQASM 2.0;\ninclude \"qelib1.inc\";\ngate g(a) a { rz(a) a; }\n", "'a' names both a parameter and a qubit argument");
    /* keywords as register or gate names (qreg gate[2] was a register called gate) */
    expect_qasm_error("OPENQASM 2.0;\ninclude \"qelib1.inc\";\nqreg gate[2];\nh gate[0];\n",
                      "bad.qasm:3:6: a reserved word, not a name for a register (at 'gate')");
    expect_qasm_error("OPENQASM 2.0;\ncreg measure[1];\n", "a reserved word, not a name for a register (at 'measure')");
    expect_qasm_error("OPENQASM 2.0;\nqreg pi[1];\n", "a reserved word, not a name for a register (at 'pi')");
    expect_qasm_error("OPENQASM 2.0;\ngate cos a { U(0,0,0) a; }\n", "bad.qasm:2:6: a reserved word, not a name for a gate (at 'cos')");
    expect_qasm_error("OPENQASM 2.0;\ngate barrier a { U(0,0,0) a; }\n", "a reserved word, not a name for a gate (at 'barrier')");
    expect_qasm_error("OPENQASM 3.0;\n", "only OpenQASM 2.x");
    expect_qasm_error("OPENQASM 2.0;\nqreg q[2];\nU(theta,0,0) q[0];\n", "unknown identifier in expression");
    /* expressions, user gates with parameters, broadcast */
    hs_circuit *c;
    TEST_OK(hs_qasm_parse_string("ok.qasm", "OPENQASM 2.0; include \"qelib1.inc\"; gate g(a,b) x,y { rx(a*2-b) x; cx x,y; }"
                                            "qreg q[2]; qreg r[2]; g(sin(pi/2)+ln(exp(1))^2, -sqrt(4)/2) q, r;", &c));
    assert_int_equal(c->nqubits, 4);
    assert_int_equal(c->nops, 4);
    double want[8];
    hs_qgen_matrix(HS_QGEN_X, 2 * 2.0 + 1.0, want, NULL);
    for (int i = 0; i < 8; i++) TEST_LE(fabs(c->ops[0].m[i] - want[i]), 1e-15);
    assert_int_equal(c->ops[1].t[0], 2);          /* cx q[0], r[0]: target r[0] = qubit 2 */
    assert_int_equal((int)c->ops[1].cmask, 1);
    hs_circuit_free(c);
    /* a sign binds more loosely than ^ (mathematics, OpenQASM 2, Qiskit's qasm2 reader: -2^2 = -4;
     * it was (-2)^2 = 4, a silent wrong angle, and -2^0.5 NaN), an exponent may be signed, unary plus */
    static const struct {
        const char *text;
        double value;
    } signs[] = {{"-2^2", -4},      {"2*-2^2", -8},        {"-sin(1)^2", -0.70807341827357119},
                 {"-2^0.5", -1.4142135623730951}, {"2^-2", 0.25}, {"+1", 1},   {"-(-3)", 3},
                 {"2^3^2", 512},    {"-2^-1", -0.5},       {"1--2^2", 5}};
    for (size_t k = 0; k < sizeof signs / sizeof signs[0]; k++) {
        char text[256];
        snprintf(text, sizeof text, "OPENQASM 2.0; include \"qelib1.inc\"; qreg q[1]; rx(%s) q[0];", signs[k].text);
        TEST_OK(hs_qasm_parse_string("sign.qasm", text, &c));
        hs_qgen_matrix(HS_QGEN_X, signs[k].value, want, NULL);
        for (int i = 0; i < 8; i++)
            if (fabs(c->ops[0].m[i] - want[i]) > 1e-15) fail_msg("rx(%s): element %d is %.17g, want %.17g (angle %g)", signs[k].text, i, c->ops[0].m[i], want[i], signs[k].value);
        hs_circuit_free(c);
    }
    /* rccx equals the Toffoli up to phases on |11x> */
    TEST_OK(hs_qasm_parse_string("ok.qasm", "OPENQASM 2.0; include \"qelib1.inc\"; qreg q[3]; x q[0]; x q[1]; rccx q[0],q[1],q[2];", &c));
    hs_qureg *q;
    TEST_OK(hs_qureg_create(test_ctx(), 3, HS_C128, 0, &q));
    TEST_OK(hs_qureg_run(q, c, NULL, NULL));
    double p[8];
    TEST_OK(hs_qureg_probabilities(q, p));
    TEST_LE(fabs(p[7] - 1.0), 1e-14);
    hs_qureg_destroy(q);
    hs_circuit_free(c);
}

/* A file in the test scratch folder holding `text` (len bytes; -1: strlen); returns its path. */
static const char *write_file(const char *name, const char *text, long len)
{
    const char *path = test_tmp_path(name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    size_t n = len < 0 ? strlen(text) : (size_t)len;
    assert_int_equal(fwrite(text, 1, n, f), n);
    fclose(f);
    return path;
}

/* reset is not unitary: only a reset of a qubit nothing has touched yet (it is |0>, the reset does
 * nothing) leaves the circuit on the sample-the-final-state path; a reset after a gate needs one
 * trajectory per shot.  Reference: x; reset gives |0> (amplitude 1 at index 0, by hand). */
static void test_reset_paths(void **st)
{
    (void)st;
    static const struct { const char *body; int terminal; } cases[] = {
        {"x q[0]; reset q[0]; measure q -> c;", 0},          /* the circuit */
        {"h q[0]; cx q[0], q[1]; reset q[1]; measure q -> c;", 0},
        {"h q[0]; cx q[0], q[1]; reset q[0]; measure q -> c;", 0}, /* q[0] touched as a control */
        {"x q[0]; reset q[0];", 0},                           /* no measurement at all */
        {"reset q; x q[1]; measure q -> c;", 1},              /* resets of fresh qubits: no-ops */
        {"x q[1]; reset q[0]; measure q -> c;", 1},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char text[256];
        snprintf(text, sizeof text, "OPENQASM 2.0; include \"qelib1.inc\"; qreg q[2]; creg c[2]; %s", cases[k].body);
        hs_circuit *c;
        TEST_OK(hs_qasm_parse_string("r.qasm", text, &c));
        if (hs_circuit_terminal_measurements(c) != cases[k].terminal)
            fail_msg("'%s': terminal = %d, expected %d", cases[k].body, !cases[k].terminal, cases[k].terminal);
        hs_circuit_free(c);
    }
    /* the trajectory of x; reset ends in |00> and measures 00, whatever u is */
    hs_circuit *c;
    TEST_OK(hs_qasm_parse_string("r.qasm", "OPENQASM 2.0; include \"qelib1.inc\"; qreg q[2]; creg c[2];"
                                           "x q[0]; reset q[0]; measure q -> c;", &c));
    hs_qureg *q;
    TEST_OK(hs_qureg_create(test_ctx(), 2, HS_C128, 0, &q));
    hs_rng rng;
    hs_rng_seed(&rng, 3, 0);
    for (int s = 0; s < 20; s++) {
        uint64_t cl[1] = {3};
        double a[8];
        TEST_OK(hs_qureg_init_basis(q, 0));
        TEST_OK(hs_qureg_run(q, c, &rng, cl));
        assert_int_equal((int)cl[0], 0);
        TEST_OK(hs_qureg_get_amplitudes(q, a));
        TEST_LE(fabs(a[0] - 1.0), 1e-15);
    }
    hs_qureg_destroy(q);
    hs_circuit_free(c);
}

/* Gate parameters must be finite numbers: literals past the double range, 0/0, division by zero,
 * overflow in exp or ^, ln(0), sqrt(-1), also inside gate bodies (reported at the call). */
static void test_qasm_nonfinite(void **st)
{
    (void)st;
    static const struct { const char *expr, *msg; } cases[] = {
        {"1e400", "bad.qasm:4:4: '1e400' overflows a double"},
        {"5e-400", "bad.qasm:4:4: '5e-400' underflows a double"}, /* it ran as 0 */
        {"0x10", "bad.qasm:4:4: '0x10' is not a decimal number"}, /* it ran as rx(16) */
        {"0x1p-3", "bad.qasm:4:4: '0x1p' is not a decimal number"},
        {"3e", "bad.qasm:4:4: '3e' is not a decimal number"},
        {"12abc", "bad.qasm:4:4: '12abc' is not a decimal number"},
        {"0/0", "bad.qasm:4:4: parameter 1 of 'rx' is not a finite number ('/' gives nan) (at '0')"},
        {"1/0", "bad.qasm:4:4: parameter 1 of 'rx' is not a finite number ('/' gives inf)"},
        {"pi/(1-1)", "'/' gives inf"},
        {"exp(1000)", "'exp' gives inf"},
        {"1/exp(1000)", "'exp' gives inf"},          /* an intermediate overflow, even if the end is 0 */
        {"2^2000", "'^' gives inf"},
        {"(-8)^(1/3)", "'^' gives nan"},
        {"ln(0)", "'ln' gives -inf"},
        {"sqrt(-1)", "'sqrt' gives nan"},
        {"asin(2)", "'asin' gives nan"},
        {"1e308*10", "'*' gives inf"},
        {"1e308+1e308", "'+' gives inf"},
        {"-1e308-1e308", "'-' gives -inf"},
        {"tan(pi/2)*1e300*1e300", "'*' gives inf"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char text[256];
        snprintf(text, sizeof text, "OPENQASM 2.0;\ninclude \"qelib1.inc\";\nqreg q[1];\nrx(%s) q[0];\n", cases[k].expr);
        expect_qasm_error(text, cases[k].msg);
    }
    expect_qasm_error("OPENQASM 2.0;\ninclude \"qelib1.inc\";\nqreg q[1];\nu3(0, 1, 0/0) q[0];\n",
                      "bad.qasm:4:10: parameter 3 of 'u3' is not a finite number ('/' gives nan)");
    /* in a gate body: evaluated when the gate is applied; reported at the application */
    expect_qasm_error("OPENQASM 2.0;\ninclude \"qelib1.inc\";\ngate g(a) r { h r; rz(1/a) r; }\nqreg q[1];\n"
                      "g(0.5) q[0];\n  g(0) q[0];\n",
                      "bad.qasm:6:3: parameter 1 of 'rz' in the body of gate 'g' is not a finite number ('/' gives inf) (at 'g')");
    expect_qasm_error("OPENQASM 2.0;\ninclude \"qelib1.inc\";\ngate g(a) r { rz(a) r; }\ngate f(b) r { g(exp(b)) r; }\n"
                      "qreg q[1];\nf(800) q[0];\n",
                      "bad.qasm:6:1: parameter 1 of 'g' in the body of gate 'f' is not a finite number ('exp' gives inf)");
    /* large finite values are legal, and tiny ones (a denormal literal; an expression may underflow
     * to 0, a literal may not, as in parameter files) */
    hs_circuit *c;
    TEST_OK(hs_qasm_parse_string("ok.qasm", "OPENQASM 2.0; include \"qelib1.inc\"; qreg q[1]; rx(1e300) q[0];"
                                            "rz(1e-310) q[0]; rx(exp(-800)) q[0];", &c));
    assert_int_equal(c->nops, 3);
    hs_circuit_free(c);
}

/* The expansion of user gates is counted before anything is built: 30 nested doublings (2^30
 * operations from a 1 KB file) and 70 (past 2^64: the count saturates) are refused at once,
 * naming the gate and the count; so is a broadcast that multiplies a large gate. */
static void test_qasm_expansion_limit(void **st)
{
    (void)st;
    char *text = malloc(1 << 16);
    for (int depth = 30; depth <= 33; depth += 3) {
        /* 30 levels of 2 calls (2^30), 33 levels of 4 calls (2^66: saturated) */
        int n = snprintf(text, 1 << 16, "OPENQASM 2.0;\ninclude \"qelib1.inc\";\ngate g0 a { x a; }\n");
        for (int k = 1; k <= depth; k++)
            n += snprintf(text + n, (size_t)(1 << 16) - (size_t)n, depth == 30 ? "gate g%d a { g%d a; g%d a; }\n"
                                                                                 : "gate g%d a { g%d a; g%d a; g%d a; g%d a; }\n",
                          k, k - 1, k - 1, k - 1, k - 1);
        snprintf(text + n, (size_t)(1 << 16) - (size_t)n, "qreg q[1];\ng%d q[0];\n", depth);
        char want[256];
        if (depth == 30)
            snprintf(want, sizeof want, "bad.qasm:35:1: gate 'g30' expands to 1073741824 operations; a circuit may have at most %d (at 'g30')",
                     HS_QASM_MAX_OPERATIONS);
        else
            snprintf(want, sizeof want, "bad.qasm:38:1: gate 'g33' expands to at least 18446744073709551615 operations; a circuit may have at most %d", HS_QASM_MAX_OPERATIONS);
        double t0 = hs_wtime();
        expect_qasm_error(text, want);
        TEST_LE(hs_wtime() - t0, 1.0); /* counted, not built */
    }
    /* 2^22 operations per application fit; broadcast over 5 qubits (5 * 2^22) does not */
    int n = snprintf(text, 1 << 16, "OPENQASM 2.0;\ninclude \"qelib1.inc\";\ngate g0 a { x a; }\n");
    for (int k = 1; k <= 22; k++) n += snprintf(text + n, (size_t)(1 << 16) - (size_t)n, "gate g%d a { g%d a; g%d a; }\n", k, k - 1, k - 1);
    snprintf(text + n, (size_t)(1 << 16) - (size_t)n, "qreg q[5];\nh q;\ng22 q;\n");
    expect_qasm_error(text, "bad.qasm:28:1: gate 'g22' expands to 20971520 operations (4194304 per application, "
                            "5 applications); a circuit may have at most 16777216 (at 'g22')");
    /* nesting deeper than 64 is refused where it is defined (the expansion recurses per level) */
    n = snprintf(text, 1 << 16, "OPENQASM 2.0;\ninclude \"qelib1.inc\";\ngate g0 a { x a; }\n");
    for (int k = 1; k <= 64; k++) n += snprintf(text + n, (size_t)(1 << 16) - (size_t)n, "gate g%d a { g%d a; }\n", k, k - 1);
    expect_qasm_error(text, "bad.qasm:67:6: 'g64' nests gate definitions 65 deep; at most 64 (at 'g64')");
    free(text);
}

/* Errors inside gate bodies free what the body had built (checked by the sanitizer build), and an
 * include must be a regular file. */
static void test_qasm_body_errors(void **st)
{
    (void)st;
    const char *head = "OPENQASM 2.0;\ninclude \"qelib1.inc\";\n";
    static const struct { const char *body, *msg; } cases[] = {
        {"gate g a, b { h a; rx(1, 2) b; }", "wrong number of parameters: the gate takes 1"},
        {"gate g a, b { h a; rx(pi +) b; }", "expected an expression"},
        {"gate g a, b { h a; rx(pi; }", "expected ',' or ')'"},
        {"gate g a, b { h a; cx a, c; }", "not a qubit argument of this gate"},
        {"gate g a, b { h a; cx a, a; }", "duplicate qubit argument"},
        {"gate g a, b { h a; cx a; }", "wrong number of qubit arguments: the gate takes 2"},
        {"gate g a, b { h a; cx a, b, a; }", "too many qubit arguments"},
        {"gate g a, b { h a; cx a, b }", "expected ';'"},
        {"gate g a, b { h a; foo a; }", "undefined gate"},
        {"gate g a, b { h a; 3 a; }", "expected a gate call in the gate body"},
        {"gate g a, b { h a; cx a, b;", "expected '}' to close gate 'g'"},
        {"gate g a, b { h a; } gate g a { x a; }", "gate already defined"},
        {"gate g(t) a, b { rz(t) a; rz(u) b; }", "unknown identifier in expression"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char text[512];
        snprintf(text, sizeof text, "%sqreg q[2];\n%s\n", head, cases[k].body);
        expect_qasm_error(text, cases[k].msg);
    }
    /* include of a directory, and of a file that is fine */
    const char *dir = test_tmp_path("incdir");
    assert_int_equal(mkdir(dir, 0700), 0);
    write_file("ok.inc", "gate g a { x a; }\n", -1);
    const char *main_path = write_file("main.qasm", "OPENQASM 2.0;\ninclude \"qelib1.inc\";\ninclude \"ok.inc\";\n"
                                                    "  include \"incdir\";\nqreg q[1];\n", -1);
    hs_circuit *c = NULL;
    assert_int_equal(hs_qasm_parse_file(main_path, &c), HS_ERR_INPUT);
    if (!strstr(hs_error_message(), "main.qasm:4:11: include file is not a regular file")) fail_msg("%s", hs_error_message());
    hs_error_clear();
    assert_int_equal(hs_qasm_parse_file(dir, &c), HS_ERR_INPUT);
    if (!strstr(hs_error_message(), "incdir: not a regular file")) fail_msg("%s", hs_error_message());
    hs_error_clear();
    rmdir(dir);
}

/* Smallest eigenvalue by power iteration on (s I - H), H built by Kronecker products of 2x2
 * Pauli matrices: independent of the bit tricks in the library. */
static double reference_ground(const hs_pauli_sum *h, int n)
{
    int d = 1 << n;
    cplx *H = calloc((size_t)d * d, sizeof *H);
    double s = 0;
    for (int k = 0; k < h->nterms; k++) {
        cplx *M = calloc((size_t)d * d, sizeof *M);
        M[0] = 1;
        int dim = 1;
        for (int q = n - 1; q >= 0; q--) { /* kron from the highest qubit down */
            int x = h->xm[k] >> q & 1, z = h->zm[k] >> q & 1;
            cplx P[4] = {1, 0, 0, 1};
            if (x && z) P[0] = 0, P[1] = -I, P[2] = I, P[3] = 0;
            else if (x) P[0] = 0, P[1] = 1, P[2] = 1, P[3] = 0;
            else if (z) P[3] = -1;
            cplx *R = calloc((size_t)4 * dim * dim, sizeof *R);
            for (int a = 0; a < dim; a++)
                for (int b = 0; b < dim; b++)
                    for (int i = 0; i < 2; i++)
                        for (int j = 0; j < 2; j++) R[(a * 2 + i) * 2 * dim + b * 2 + j] = M[a * dim + b] * P[i * 2 + j];
            dim *= 2;
            memcpy(M, R, sizeof(cplx) * (size_t)dim * dim);
            free(R);
        }
        for (int i = 0; i < d * d; i++) H[i] += h->c[k] * M[i];
        s += fabs(h->c[k]);
        free(M);
    }
    cplx *v = malloc(sizeof(cplx) * (size_t)d), *w = malloc(sizeof(cplx) * (size_t)d);
    for (int i = 0; i < d; i++) v[i] = 1.0 + 0.1 * i;
    double lam = 0;
    for (int it = 0; it < 20000; it++) {
        double nn = 0;
        for (int i = 0; i < d; i++) {
            w[i] = s * v[i];
            for (int j = 0; j < d; j++) w[i] -= H[i * d + j] * v[j];
            nn += creal(w[i] * conj(w[i]));
        }
        nn = sqrt(nn);
        for (int i = 0; i < d; i++) v[i] = w[i] / nn;
        lam = s - nn;
    }
    free(H);
    free(v);
    free(w);
    return lam;
}

static const char *g_h2 = "-1.052373245772859 II\n0.39793742484318045 IZ\n-0.39793742484318045 ZI\n"
                          "-0.01128010425623538 ZZ\n0.18093119978423156 XX\n";

/* VQE for H2 (the 2-qubit file in inputs/) reaches the exact ground energy within 1e-6 Ha;
 * adjoint and parameter-shift gradients agree to 1e-8. */
static void test_vqe_h2(void **st)
{
    (void)st;
    char path[] = "/tmp/hs_test_h2_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs("# test copy of inputs/h2_sto3g_parity_0735.pauli\n", f);
    fputs(g_h2, f);
    fclose(f);
    hs_pauli_sum *h;
    TEST_OK(hs_pauli_sum_read(path, &h));
    remove(path);
    assert_int_equal(h->nqubits, 2);
    double exact = reference_ground(h, 2), e0;
    TEST_OK(hs_pauli_ground_energy(h, 2, &e0));
    TEST_LE(fabs(e0 - exact), 1e-10);
    TEST_LE(fabs(exact - -1.857275030202), 1e-9); /* published value for this Hamiltonian */
    hs_circuit *c = hs_ansatz_hardware_efficient(2, 2);
    hs_vqe *v;
    TEST_OK(hs_vqe_create(test_ctx(), c, h, HS_C128, 0, &v));
    double x[12], ga[12], gs[12], e;
    test_fill_f64(x, 12, 5, -1, 1);
    TEST_OK(hs_vqe_gradient_adjoint(v, x, &e, ga));
    TEST_OK(hs_vqe_gradient_shift(v, x, gs));
    for (int k = 0; k < 12; k++) TEST_LE(fabs(ga[k] - gs[k]), 1e-8);
    double e2;
    TEST_OK(hs_vqe_energy(v, x, &e2));
    TEST_LE(fabs(e - e2), 1e-13);
    hs_vqe_opts o = {0, 500, 1e-10, 0, 0.05, 0, NULL};
    hs_vqe_result r;
    TEST_OK(hs_vqe_minimize(v, x, &o, &r));
    TEST_LE(fabs(r.energy - exact), 1e-6);
    free(r.history);
    /* Adam gets there too (more evaluations) */
    test_fill_f64(x, 12, 77, -1, 1);
    hs_vqe_opts oa = {1, 800, 1e-7, 0, 0.05, 0, NULL};
    TEST_OK(hs_vqe_minimize(v, x, &oa, &r));
    TEST_LE(fabs(r.energy - exact), 1e-5);
    free(r.history);
    hs_vqe_destroy(v);
    hs_circuit_free(c);
    hs_pauli_sum_free(h);
}

/* The optimiser's stopping reason decides "converged": from several starts L-BFGS ends at the
 * exact H2 ground energy (to 1e-12) by the gradient tolerance, by an energy change below ftol, or
 * because no lower energy is resolvable in floating point with a gradient within the round-off
 * bound; each is convergence.  An iteration limit is not. */
static void test_vqe_stopping(void **st)
{
    (void)st;
    const char *path = write_file("h2.pauli", g_h2, -1);
    hs_pauli_sum *h;
    TEST_OK(hs_pauli_sum_read(path, &h));
    double exact = reference_ground(h, 2);
    hs_circuit *c = hs_ansatz_hardware_efficient(2, 2);
    hs_vqe *v;
    TEST_OK(hs_vqe_create(test_ctx(), c, h, HS_C128, 0, &v));
    int roundoff = 0;
    for (uint64_t seed = 1; seed <= 12; seed++) {
        double x[12];
        test_fill_f64(x, 12, seed, -0.5, 0.5);
        hs_vqe_opts o = {0, 500, 1e-10, 0, 0.05, 0, NULL};
        hs_vqe_result r;
        TEST_OK(hs_vqe_minimize(v, x, &o, &r));
        free(r.history);
        TEST_LE(fabs(r.energy - exact), 1e-12);
        assert_non_null(r.reason);
        if (!r.converged) fail_msg("start %d: energy error %.3g but not converged (%s, |g| %.3g)", (int)seed,
                                   r.energy - exact, r.reason, r.gnorm);
        if (strcmp(r.reason, "gradient_tolerance") && strcmp(r.reason, "energy_change") && strcmp(r.reason, "energy_roundoff"))
            fail_msg("start %d: reason '%s'", (int)seed, r.reason);
        if (!strcmp(r.reason, "gradient_tolerance")) TEST_LE(r.gnorm, 1e-10);
        roundoff += !strcmp(r.reason, "energy_roundoff");
    }
    assert_true(roundoff > 0); /* the case of the report: stopped by the line search at round-off */
    /* three iterations from a random start: not converged, and says why */
    double x[12];
    test_fill_f64(x, 12, 99, -1, 1);
    hs_vqe_opts o = {0, 3, 1e-10, 0, 0.05, 0, NULL};
    hs_vqe_result r;
    TEST_OK(hs_vqe_minimize(v, x, &o, &r));
    free(r.history);
    assert_false(r.converged);
    if (strcmp(r.reason, "iteration_limit") && strcmp(r.reason, "evaluation_limit")) fail_msg("reason '%s'", r.reason);
    assert_true(r.gnorm > 1e-6);
    /* Adam: converged only by its gradient tolerance */
    hs_vqe_opts oa = {1, 20, 1e-10, 0, 0.05, 0, NULL};
    TEST_OK(hs_vqe_minimize(v, x, &oa, &r));
    free(r.history);
    assert_false(r.converged);
    assert_string_equal(r.reason, "iteration_limit");
    hs_vqe_destroy(v);
    hs_circuit_free(c);
    hs_pauli_sum_free(h);
}

/* QAOA p = 1 on the 4-cycle: the optimum expected cut is exactly 3 (Farhi et al. 2014: 3/4 of the
 * edges of a 2-regular graph); shared parameters' adjoint gradients match parameter shift. */
static void test_qaoa_ring(void **st)
{
    (void)st;
    int edges[8] = {0, 1, 1, 2, 2, 3, 3, 0};
    double w[4] = {1, 1, 1, 1};
    hs_pauli_sum *h;
    TEST_OK(hs_maxcut_hamiltonian(4, edges, w, &h));
    hs_circuit *c = hs_ansatz_qaoa(4, 1, 4, edges, w);
    hs_vqe *v;
    TEST_OK(hs_vqe_create(test_ctx(), c, h, HS_C128, 0, &v));
    double x[2] = {0.3, 0.2}, ga[2], gs[2], e;
    TEST_OK(hs_vqe_gradient_adjoint(v, x, &e, ga));
    TEST_OK(hs_vqe_gradient_shift(v, x, gs));
    for (int k = 0; k < 2; k++) TEST_LE(fabs(ga[k] - gs[k]), 1e-8);
    hs_vqe_opts o = {0, 200, 1e-10, 0, 0.05, 0, NULL};
    hs_vqe_result r;
    TEST_OK(hs_vqe_minimize(v, x, &o, &r));
    TEST_LE(fabs(-r.energy - 3.0), 1e-6);
    free(r.history);
    hs_vqe_destroy(v);
    hs_circuit_free(c);
    hs_pauli_sum_free(h);
}

static void test_pauli_file_errors(void **st)
{
    (void)st;
    hs_pauli_sum *h = NULL;
    static const struct { const char *text, *msg; } cases[] = {
        {"0.5 X0 Z1\n0.25 IZW\n", ":2:8: not a Pauli letter (I, X, Y, Z): 'W'"},
        {"0.5 Z0\nnan Z1\n", ":2:1: expected a finite coefficient, got 'nan'"},
        {"0.5 Z0\n-inf Z1\n", ":2:1: expected a finite coefficient, got '-inf'"},
        {"0.5 Z0\n  INFINITY X0\n", ":2:3: expected a finite coefficient, got 'INFINITY'"},
        {"1e400 Z0\n", ":1:1: expected a finite coefficient, got '1e400'"},
        {"NaN(123) ZZ\n", ":1:1: expected a finite coefficient, got 'NaN(123)'"},
        {"1e308 Z0\n1e308 Z1\n", ":2:1: the coefficients' magnitudes add up to more than the largest double"},
        /* decimal numbers only, a whitespace-separated token (strtod took both) */
        {"0.5ZZ\n", ":1:1: expected a coefficient (a decimal number), got '0.5ZZ'"},
        {"0x1p-1 Z0\n", ":1:1: expected a coefficient (a decimal number), got '0x1p-1'"},
        {"0.5 X+1\n", ":1:5: expected a factor like X0 or Z12, got 'X+1'"},
        {"0.5 X-0\n", ":1:5: expected a factor like X0 or Z12, got 'X-0'"},
        {"0.5 Z 1\n", ":1:5: expected a factor like X0 or Z12, got 'Z'"},
        {"0.5 Z18446744073709551617\n", ":1:5: expected a factor like X0 or Z12, got 'Z18446744073709551617'"},
        {"0.5 Z0 Y0\n", ":1:8: qubit given twice in one term: 'Y0'"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const char *path = write_file("bad.pauli", cases[k].text, -1);
        assert_int_equal(hs_pauli_sum_read(path, &h), HS_ERR_INPUT);
        if (!strstr(hs_error_message(), cases[k].msg)) fail_msg("'%s': %s", cases[k].text, hs_error_message());
        hs_error_clear();
    }
    /* a factor's qubit number is read whole, however long: X0...01 with 70 digits is X1 (a 64-byte
     * buffer cut it to X0), and 70 nines are out of range */
    char line[160];
    snprintf(line, sizeof line, "0.5 X%070d\n", 1);
    const char *path = write_file("x1.pauli", line, -1);
    TEST_OK(hs_pauli_sum_read(path, &h));
    assert_int_equal(h->nterms, 1);
    assert_int_equal((int)h->xm[0], 2);
    assert_int_equal((int)h->zm[0], 0);
    hs_pauli_sum_free(h);
    snprintf(line, sizeof line, "0.5 X%s\n", "9999999999999999999999999999999999999999999999999999999999999999999999");
    path = write_file("bad.pauli", line, -1);
    assert_int_equal(hs_pauli_sum_read(path, &h), HS_ERR_INPUT);
    if (!strstr(hs_error_message(), ":1:5: expected a factor like X0 or Z12")) fail_msg("%s", hs_error_message());
    hs_error_clear();
    /* a NUL byte is not text */
    path = write_file("bad.pauli", "0.5 Z0\n0.5 Z1\0 X0\n", 18);
    assert_int_equal(hs_pauli_sum_read(path, &h), HS_ERR_INPUT);
    if (!strstr(hs_error_message(), ":2:7: NUL byte")) fail_msg("%s", hs_error_message());
    hs_error_clear();
    /* whole lines of any length: a comment of 5000 characters whose tail looks like a term stays a
     * comment (it was cut at 4095 and its tail read as "1.0 Z0"), and a term after 6000 spaces is read */
    size_t big = 12000;
    char *text = malloc(big);
    size_t n = 0;
    text[n++] = '#';
    for (int i = 0; i < 4094; i++) text[n++] = 'c';
    n += (size_t)sprintf(text + n, " 1.0 Z0\n");
    for (int i = 0; i < 6000; i++) text[n++] = ' ';
    n += (size_t)sprintf(text + n, "0.5 Z1   # trailing comment\n-0.25 X0 Y1\n");
    path = write_file("long.pauli", text, (long)n);
    free(text);
    TEST_OK(hs_pauli_sum_read(path, &h));
    assert_int_equal(h->nterms, 2);
    TEST_LE(fabs(h->c[0] - 0.5), 0);
    assert_int_equal((int)h->zm[0], 2);
    assert_int_equal((int)h->xm[0], 0);
    TEST_LE(fabs(h->c[1] + 0.25), 0);
    assert_int_equal((int)h->xm[1], 3);
    assert_int_equal((int)h->zm[1], 2);
    hs_pauli_sum_free(h);
    /* a directory is not a Pauli file */
    const char *dir = test_tmp_path("pdir");
    assert_int_equal(mkdir(dir, 0700), 0);
    assert_int_equal(hs_pauli_sum_read(dir, &h), HS_ERR_INPUT);
    if (!strstr(hs_error_message(), "pdir: not a regular file")) fail_msg("%s", hs_error_message());
    hs_error_clear();
    rmdir(dir);
}

/* The MaxCut graph reader: integers checked against their ranges (no wrap-around), weights that
 * are finite numbers, nothing after the last field, lines of any length. */
static void test_graph_file_errors(void **st)
{
    (void)st;
    int nv, ne, *e = NULL;
    double *w = NULL;
    static const struct { const char *text, *msg; } cases[] = {
        {"4\n0 1\n4294967297 2\n", ":3:1: expected a vertex number 0..3, got '4294967297'"},
        {"4\n0 1\n1 18446744073709551617\n", ":3:3: expected a vertex number 0..3, got '18446744073709551617'"},
        {"4\n0 1\n1 -3\n", ":3:3: expected a vertex number 0..3, got '-3'"},
        {"4\n0 1\n1 4\n", ":3:3: expected a vertex number 0..3, got '4'"},
        {"4\n0 1\n1 1\n", ":3:1: an edge needs two different vertices, got '1 1'"},
        {"4\n0 1\n1\n", ":3:2: expected a vertex number 0..3, got end of line"},
        {"4\n0 1 abc\n", ":2:5: expected a finite edge weight, got 'abc'"},
        {"4\n0 1 nan\n", ":2:5: expected a finite edge weight, got 'nan'"},
        {"4\n0 1 -inf\n", ":2:5: expected a finite edge weight, got '-inf'"},
        {"4\n0 1 1e400\n", ":2:5: expected a finite edge weight, got '1e400'"},
        {"4\n0 1 2.5x\n", ":2:5: expected a finite edge weight, got '2.5x'"},
        {"4\n0 1 0x1p1\n", ":2:5: expected a finite edge weight, got '0x1p1'"},
        {"4\n0 1 2.5 junk\n", ":2:9: unexpected text after the edge: 'junk'"},
        {"4\n0 1x\n", ":2:3: expected a vertex number 0..3, got '1x'"},
        {"4\n0 1 1e308\n1 2 1e308\n", ":3:5: the edge weights' magnitudes add up to more than the largest double"},
        {"4 5\n0 1\n", ":1:3: unexpected text after the vertex count: '5'"},
        {"4294967300\n0 1\n", ":1:1: expected the number of vertices (1..50), got '4294967300'"},
        {"0x4\n0 1\n", ":1:1: expected the number of vertices (1..50), got '0x4'"},
        {"51\n0 1\n", ":1:1: expected the number of vertices (1..50), got '51'"},
        {"4\n0 1\n\0003 2\n", ":3:1: NUL byte"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        size_t len = strlen(cases[k].text);
        if (len == 6) len = 11; /* the NUL case */
        const char *path = write_file("bad.graph", cases[k].text, (long)len);
        assert_int_equal(hs_maxcut_read(path, &nv, &ne, &e, &w), HS_ERR_INPUT);
        if (!strstr(hs_error_message(), cases[k].msg)) fail_msg("'%s': %s", cases[k].text, hs_error_message());
        hs_error_clear();
    }
    /* good: comments, blank lines, a 3000-character comment, optional weights, CRLF */
    char *text = malloc(8000);
    size_t n = (size_t)sprintf(text, "# graph\n3\r\n\n");
    text[n++] = '#';
    for (int i = 0; i < 3000; i++) text[n++] = 'x';
    n += (size_t)sprintf(text + n, " 0 2 9\n0 1\n1 2 -0.5  # a comment\n  2 0 2e-3\r\n");
    const char *path = write_file("ok.graph", text, (long)n);
    free(text);
    TEST_OK(hs_maxcut_read(path, &nv, &ne, &e, &w));
    assert_int_equal(nv, 3);
    assert_int_equal(ne, 3);
    int want_e[6] = {0, 1, 1, 2, 2, 0};
    double want_w[3] = {1, -0.5, 2e-3};
    for (int k = 0; k < 6; k++) assert_int_equal(e[k], want_e[k]);
    for (int k = 0; k < 3; k++) TEST_LE(fabs(w[k] - want_w[k]), 0);
    free(e);
    free(w);
}

/* The JSON writer: nesting, escaping, numbers, atomic rename. */
static void test_json(void **st)
{
    (void)st;
    char path[] = "/tmp/hs_test_json_XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    hs_json j;
    TEST_OK(hs_json_open(&j, path, 0));
    hs_json_begin_object(&j);
    hs_json_key(&j, "a\"b");
    hs_json_begin_array(&j);
    hs_json_int(&j, -3);
    hs_json_double(&j, 0.5);
    hs_json_string(&j, "x\ny\\");
    hs_json_null(&j);
    hs_json_bool(&j, 1);
    hs_json_end_array(&j);
    hs_json_key(&j, "e");
    hs_json_begin_object(&j);
    hs_json_end_object(&j);
    hs_json_end_object(&j);
    TEST_OK(hs_json_close(&j));
    FILE *f = fopen(path, "r");
    char buf[256] = {0};
    assert_true(fread(buf, 1, sizeof buf - 1, f) > 0);
    fclose(f);
    remove(path);
    assert_string_equal(buf, "{\"a\\\"b\":[-3,0.5,\"x\\ny\\\\\",null,true],\"e\":{}}\n");
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_random_circuits), cmocka_unit_test(test_fusion),      cmocka_unit_test(test_inverse),
    cmocka_unit_test(test_ghz),             cmocka_unit_test(test_qft),         cmocka_unit_test(test_grover),
    cmocka_unit_test(test_sampling),        cmocka_unit_test(test_observables), cmocka_unit_test(test_measure_reset),
    cmocka_unit_test(test_qasm_errors),     cmocka_unit_test(test_vqe_h2),      cmocka_unit_test(test_qaoa_ring),
    cmocka_unit_test(test_pauli_file_errors), cmocka_unit_test(test_json),
    cmocka_unit_test(test_reset_paths),     cmocka_unit_test(test_qasm_nonfinite),
    cmocka_unit_test(test_qasm_expansion_limit), cmocka_unit_test(test_qasm_body_errors),
    cmocka_unit_test(test_graph_file_errors), cmocka_unit_test(test_vqe_stopping),
};

TEST_MAIN("quantum", tests)
