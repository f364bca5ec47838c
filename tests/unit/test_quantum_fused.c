/* Fused and planned circuits against the unfused run and a naive reference on random circuits of 10-20 qubits. */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/rng/rng.h"
#include "solvers/quantum/qasm.h"
#include "solvers/quantum/qureg.h"
#include "test_util.h"

#include "quantum_ref.h"

/* Tolerances of the issue: complex128 1e-12, complex64 1e-5, relative to the largest amplitude. */
#define TOL128 1e-12
#define TOL64 1e-5

/* max |a - b| / max |b| over n interleaved complex values (b the reference) */
static double maxdiff(const double *a, const double *b, size_t n)
{
    double e = 0, m = 0;
    for (size_t i = 0; i < 2 * n; i++) e = fmax(e, fabs(a[i] - b[i])), m = fmax(m, fabs(b[i]));
    return m > 0 ? e / m : e;
}

/* A random normalised state. */
static double *unit_state(int n, uint64_t seed)
{
    size_t N = (size_t)1 << n;
    double *x = malloc(2 * N * sizeof *x), s = 0;
    test_fill_f64(x, 2 * N, seed, -1, 1);
    for (size_t i = 0; i < 2 * N; i++) s += x[i] * x[i];
    for (size_t i = 0; i < 2 * N; i++) x[i] /= sqrt(s);
    return x;
}

static void run_on(hs_qureg *q, const double *init, const hs_circuit *c, double *out)
{
    TEST_OK(hs_qureg_set_amplitudes(q, init));
    TEST_OK(hs_qureg_run(q, c, NULL, NULL));
    TEST_OK(hs_qureg_get_amplitudes(q, out));
}

/* Every block of the plan has at most k qubits and no more passes than the circuit has gates. */
static void check_plan(const hs_circuit *c, const hs_circuit *f, int k, const hs_qplan_stats *st)
{
    int gates = 0;
    for (int i = 0; i < c->nops; i++) gates += c->ops[i].kind == HS_QOP_GATE;
    assert_true(st->passes <= gates);
    assert_int_equal(st->passes, st->dense + st->diag + st->perm);
    for (int i = 0; i < f->nops; i++) {
        const hs_qop *op = &f->ops[i];
        if (op->kind != HS_QOP_GATE || strcmp(op->name, "fused") != 0) continue;
        assert_true(op->nt <= k);
        assert_int_equal(op->cmask, 0);
        assert_int_equal(op->mk, hs_qmat_classify(1 << op->nt, op->m));
    }
}

/* Random circuits (qelib1 gates, controlled 1-4 qubit unitaries, diagonal and permutation gates) on
 * 10, 13, 16 and 20 qubits: unfused against the naive reference, and planned with every limit k
 * = 2..6, both device models, against the unfused run and the reference, in both precisions. */
static void test_planned_random(void **st)
{
    (void)st;
    hs_ctx *ctx = test_ctx();
    const int sizes[4] = {10, 13, 16, 20}, nops[4] = {160, 140, 120, 90};
    for (int si = 0; si < 4; si++) {
        int n = sizes[si];
        size_t N = (size_t)1 << n;
        hs_circuit *c = random_circuit_k(n, nops[si], 900 + (uint64_t)n, 4);
        double *init = unit_state(n, 31 + (uint64_t)n);
        cplx *ref = malloc(N * sizeof *ref);
        memcpy(ref, init, N * sizeof *ref);
        naive_run(ref, n, c);
        double *un = malloc(2 * N * sizeof *un), *got = malloc(2 * N * sizeof *got);
        for (int prec = 0; prec < 2; prec++) {
            hs_dtype t = prec ? HS_C64 : HS_C128;
            double tol = prec ? TOL64 : TOL128;
            hs_qureg *q;
            TEST_OK(hs_qureg_create(ctx, n, t, 0, &q));
            run_on(q, init, c, un);
            double e_ref = maxdiff(un, (double *)ref, N);
            if (e_ref > tol) fprintf(stderr, "unfused %d qubits %s: %.3g from the reference\n", n, prec ? "c64" : "c128", e_ref);
            TEST_LE(e_ref, tol);
            double worst = 0;
            for (int gpu = 0; gpu < 3; gpu++) /* the CPU's model, the GPU's, the GPU's with the bulk-copy 5-qubit blocks */
                for (int k = 2; k <= HS_Q_MAX_TARGETS; k++) {
                    if (n >= 16 && (k % 2 || (n >= 20 && gpu != 1))) continue; /* fewer plans where a run is long */
                    hs_qcost model = hs_qcost_model(gpu, n, (int)hs_dtype_size(t));
                    hs_qplan_stats ps;
                    hs_circuit *f = hs_circuit_plan(c, k, &model, &ps);
                    assert_non_null(f);
                    check_plan(c, f, k, &ps);
                    assert_true(ps.passes < c->nops); /* something was fused */
                    run_on(q, init, f, got);
                    double e_un = maxdiff(got, un, N), e_r = maxdiff(got, (double *)ref, N);
                    if (e_un > tol || e_r > tol)
                        fprintf(stderr, "%d qubits %s k=%d model %s: %.3g from unfused, %.3g from the reference\n", n,
                                prec ? "c64" : "c128", k, gpu ? "gpu" : "cpu", e_un, e_r);
                    TEST_LE(e_un, tol);
                    TEST_LE(e_r, tol);
                    worst = fmax(worst, fmax(e_un, e_r));
                    hs_circuit_free(f);
                }
            printf("%d qubits %s, %d gates: unfused %.2g from the reference, planned at most %.2g from either (relative)\n", n,
                   prec ? "complex64" : "complex128", c->nops, e_ref, worst);
            hs_qureg_destroy(q);
        }
        free(un);
        free(got);
        free(ref);
        free(init);
        hs_circuit_free(c);
    }
}

/* The planner follows its cost model: with free multiply-adds a layer of H on 12 qubits becomes
 * two 6-qubit passes; where a dense block of m qubits costs 2^m passes (ratio 1), no block removes
 * more cost than it adds and the 12 gates stay single passes. */
static void test_plan_cost_model(void **st)
{
    (void)st;
    hs_circuit *c = hs_circuit_new(12, 0);
    const hs_qgate_def *h = hs_qgate_find("h");
    double m[8];
    h->build(NULL, m);
    for (int q = 0; q < 12; q++) assert_non_null(hs_circuit_gate(c, "h", 1, &q, 0, 0, m));
    hs_qcost cheap = {1e9, 0, NULL, 0}, dear = {1.0, 0, NULL, 0};
    hs_qplan_stats a, b;
    hs_circuit *fa = hs_circuit_plan(c, 6, &cheap, &a), *fb = hs_circuit_plan(c, 6, &dear, &b);
    assert_int_equal(a.passes, 2);
    assert_int_equal(a.by_size[6], 2);
    assert_int_equal(b.passes, 12);
    assert_int_equal(b.by_size[1], 12);
    /* a launch cost of 2 passes makes fusing pay even at ratio 1: one 6-qubit block costs 64 + 2,
     * its 6 gates alone 6 (2 + 2) = 24; two 2-qubit gates: 4 + 2 against 8 */
    hs_qcost launch = {1.0, 2.0, NULL, 0};
    hs_qplan_stats d;
    hs_circuit *fd = hs_circuit_plan(c, 6, &launch, &d);
    assert_int_equal(d.passes, 6);
    assert_int_equal(d.by_size[2], 6);
    /* a table where a block with a target below qubit 5 costs its size in passes and the others one
     * pass: qubits 5..11 fuse (into blocks of at most 6), qubits 0..4 stay single gates */
    static const double table[14] = {0, 0, 1, 1, 1, 2, 1, 3, 1, 4, 1, 5, 1, 6};
    hs_qcost tab = {20, 0, table, 1.0};
    hs_qplan_stats e;
    hs_circuit *fe = hs_circuit_plan(c, 6, &tab, &e);
    assert_int_equal(e.passes, 5 + 2);
    assert_int_equal(e.by_size[1], 5 + 1);
    assert_int_equal(e.by_size[6], 1);
    for (int i = 0; i < fe->nops; i++)
        if (fe->ops[i].nt > 1)
            for (int j = 0; j < fe->ops[i].nt; j++) assert_true(fe->ops[i].t[j] >= 5);
    assert_true(fabs(e.cost - 7.0) < 1e-12);
    assert_true(fabs(hs_qcost_pass(&tab, 4, 1, 1) - 4.0) < 1e-12 && fabs(hs_qcost_pass(&tab, 4, 0, 1) - 1.0) < 1e-12);
    hs_circuit_free(fa);
    hs_circuit_free(fb);
    hs_circuit_free(fd);
    hs_circuit_free(fe);
    hs_circuit_free(c);
}

/* HS_QFUSION_TABLE replaces the GPU complex64 table's 4-6 qubit entries; anything but six positive
 * numbers leaves the stated table (the model's costs with the variable unset). */
static void test_plan_table_env(void **st)
{
    (void)st;
    unsetenv("HS_QFUSION_RATIO");
    unsetenv("HS_QFUSION_RATIO_C64");
    unsetenv("HS_QFUSION_TABLE");
    hs_qcost stated = hs_qcost_model(1, 30, 8);
    assert_non_null(stated.dense);
    setenv("HS_QFUSION_TABLE", "1.5,2.5,3.5,4.5,5.5,6.5", 1);
    hs_qcost given = hs_qcost_model(1, 30, 8);
    for (int k = 4; k <= 6; k++)
        for (int low = 0; low < 2; low++)
            assert_true(fabs(hs_qcost_pass(&given, k, low, 1) - given.launch - (1.5 + 2 * (k - 4) + low)) < 1e-12);
    assert_true(fabs(hs_qcost_pass(&given, 3, 1, 1) - hs_qcost_pass(&stated, 3, 1, 1)) < 1e-12);
    static const char *bad[] = {"", "1,2,3", "1,2,3,4,5,x", "1,2,3,4,5,6,7", "1,2,3,4,5,-6", "1,2,3,4,5,0", "1;2;3;4;5;6",
                                "1,2,3,4,5,inf", "1,2,3,4,5,6 "};
    for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
        setenv("HS_QFUSION_TABLE", bad[b], 1);
        hs_qcost m = hs_qcost_model(1, 30, 8);
        for (int k = 4; k <= 6; k++)
            for (int low = 0; low < 2; low++)
                assert_true(fabs(hs_qcost_pass(&m, k, low, 1) - hs_qcost_pass(&stated, k, low, 1)) < 1e-12);
    }
    unsetenv("HS_QFUSION_TABLE");
}

/* Nothing moves across a measurement: a circuit with a mid-circuit measurement gives the same
 * outcomes and state fused as unfused (same random stream), on 12 qubits. */
static void test_plan_measurement_order(void **st)
{
    (void)st;
    hs_ctx *ctx = test_ctx();
    int n = 12;
    size_t N = (size_t)1 << n;
    hs_circuit *a = random_circuit_k(n, 60, 77, 3), *b = random_circuit_k(n, 60, 78, 3);
    hs_circuit *c = hs_circuit_new(n, 2);
    for (int i = 0; i < a->nops; i++) assert_int_equal(hs_circuit_copy_op(c, &a->ops[i]), 0);
    assert_non_null(hs_circuit_measure(c, 3, 0));
    for (int i = 0; i < b->nops; i++) assert_int_equal(hs_circuit_copy_op(c, &b->ops[i]), 0);
    assert_non_null(hs_circuit_measure(c, 7, 1));
    hs_qcost model = hs_qcost_model(0, n, 16);
    hs_circuit *f = hs_circuit_plan(c, 6, &model, NULL);
    assert_non_null(f);
    int seen = 0;
    for (int i = 0; i < f->nops; i++) seen += f->ops[i].kind == HS_QOP_MEASURE;
    assert_int_equal(seen, 2);
    double *x = malloc(2 * N * sizeof *x), *y = malloc(2 * N * sizeof *y);
    for (int trial = 0; trial < 4; trial++) {
        uint64_t cl1[1] = {0}, cl2[1] = {0};
        hs_rng r1, r2;
        hs_rng_seed(&r1, 500 + (uint64_t)trial, 0);
        hs_rng_seed(&r2, 500 + (uint64_t)trial, 0);
        hs_qureg *q;
        TEST_OK(hs_qureg_create(ctx, n, HS_C128, 0, &q));
        TEST_OK(hs_qureg_run(q, c, &r1, cl1));
        TEST_OK(hs_qureg_get_amplitudes(q, x));
        TEST_OK(hs_qureg_init_basis(q, 0));
        TEST_OK(hs_qureg_run(q, f, &r2, cl2));
        TEST_OK(hs_qureg_get_amplitudes(q, y));
        assert_int_equal(cl1[0], cl2[0]);
        TEST_LE(maxdiff(x, y, N), TOL128);
        hs_qureg_destroy(q);
    }
    free(x);
    free(y);
    hs_circuit_free(f);
    hs_circuit_free(a);
    hs_circuit_free(b);
    hs_circuit_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_planned_random),
        cmocka_unit_test(test_plan_cost_model),
        cmocka_unit_test(test_plan_table_env),
        cmocka_unit_test(test_plan_measurement_order),
    };
    return test_run_group("quantum_fused", tests, sizeof tests / sizeof tests[0]);
}
