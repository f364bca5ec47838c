/* Distributed state vectors (2^k ranks, qubit remapping by pairwise exchange) against the same
 * circuits on a replicated register: amplitudes, marginals, expectations, measurement, sampling. */
#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "solvers/quantum/pauli.h"
#include "solvers/quantum/qureg.h"
#include "solvers/quantum/vqe.h"
#include "test_util.h"

/* Random gates that touch every qubit, the highest (global) ones included. */
static hs_circuit *random_circuit(int n, int nops, uint64_t seed)
{
    static const char *names[] = {"h", "x", "y", "rz", "ry", "u3", "cx", "cz", "cp", "swap", "ccx", "cswap", "rxx", "rzz", "sx", "t"};
    hs_circuit *c = hs_circuit_new(n, 0);
    hs_rng g;
    hs_rng_seed(&g, seed, 0);
    for (int i = 0; i < nops; i++) {
        const hs_qgate_def *d = hs_qgate_find(names[hs_rng_next(&g) % (sizeof names / sizeof names[0])]);
        int q[4];
        for (int j = 0; j < d->nctrl + d->ntarg; j++) {
            int ok;
            do {
                q[j] = (int)(hs_rng_next(&g) % (uint64_t)n);
                ok = 1;
                for (int k = 0; k < j; k++) ok &= q[k] != q[j];
            } while (!ok);
        }
        double p[3], m[32];
        test_fill_f64(p, 3, hs_rng_next(&g), -M_PI, M_PI);
        d->build(p, m);
        uint64_t cm = 0;
        for (int j = 0; j < d->nctrl; j++) cm |= 1ull << q[j];
        hs_circuit_gate(c, d->name, d->ntarg, q + d->nctrl, cm, cm, m);
    }
    return c;
}

static double max_diff(const double *a, const double *b, size_t n)
{
    double e = 0;
    for (size_t i = 0; i < n; i++) e = fmax(e, fabs(a[i] - b[i]));
    return e;
}

static void run_pair(int n, hs_dtype t, const hs_circuit *c, hs_qureg **dist, hs_qureg **rep)
{
    hs_ctx *ctx = test_ctx();
    TEST_OK(hs_qureg_create(ctx, n, t, 1, dist));
    TEST_OK(hs_qureg_create(ctx, n, t, 0, rep));
    TEST_OK(hs_qureg_run(*dist, c, NULL, NULL));
    TEST_OK(hs_qureg_run(*rep, c, NULL, NULL));
}

static void test_amplitudes(void **st)
{
    (void)st;
    int n = 12;
    size_t N = (size_t)1 << n;
    for (int prec = 0; prec < 2; prec++) {
        hs_circuit *c = random_circuit(n, 150, 11 + (uint64_t)prec);
        hs_qureg *d, *r;
        run_pair(n, prec ? HS_C64 : HS_C128, c, &d, &r);
        if (test_ctx()->size > 1) assert_true(hs_qureg_exchanges(d) > 0);
        double *a = malloc(2 * N * sizeof *a), *b = malloc(2 * N * sizeof *b);
        TEST_OK(hs_qureg_get_amplitudes(d, a));
        TEST_OK(hs_qureg_get_amplitudes(r, b));
        TEST_LE(max_diff(a, b, 2 * N), prec ? 1e-5 : 1e-12);
        /* fused blocks across the rank boundary give the same state */
        hs_circuit *f = hs_circuit_fuse(c, 4, 1.0 / 16);
        TEST_OK(hs_qureg_init_basis(d, 0));
        TEST_OK(hs_qureg_run(d, f, NULL, NULL));
        TEST_OK(hs_qureg_get_amplitudes(d, a));
        TEST_LE(max_diff(a, b, 2 * N), prec ? 1e-5 : 1e-12);
        free(a);
        free(b);
        hs_circuit_free(f);
        hs_circuit_free(c);
        hs_qureg_destroy(d);
        hs_qureg_destroy(r);
    }
}

static void test_readouts(void **st)
{
    (void)st;
    int n = 10;
    hs_circuit *c = random_circuit(n, 80, 5);
    hs_qureg *d, *r;
    run_pair(n, HS_C128, c, &d, &r);
    /* marginals of global and local qubits */
    int qs[3] = {9, 0, 8};
    double md[8], mr[8];
    TEST_OK(hs_qureg_marginal(d, 3, qs, md));
    TEST_OK(hs_qureg_marginal(r, 3, qs, mr));
    TEST_LE(max_diff(md, mr, 8), 1e-13);
    /* Pauli strings with X, Y, Z on global qubits */
    uint64_t masks[4][2] = {{1u << 9, 0}, {(1u << 9) | 3, (1u << 8) | 1}, {0, (1u << 9) | (1u << 8)}, {(1u << 8) | (1u << 2), 1u << 8}};
    hs_pauli_sum *h = hs_pauli_sum_new();
    for (int k = 0; k < 4; k++) {
        double vd, vr;
        TEST_OK(hs_qureg_expect_pauli(d, masks[k][0], masks[k][1], &vd));
        TEST_OK(hs_qureg_expect_pauli(r, masks[k][0], masks[k][1], &vr));
        TEST_LE(fabs(vd - vr), 1e-13);
        TEST_OK(hs_pauli_sum_add(h, 0.3 * (k + 1), masks[k][0], masks[k][1]));
    }
    /* H|psi> with X factors on global qubits, then <psi|H psi> */
    hs_qureg *hd, *hr;
    TEST_OK(hs_qureg_create(test_ctx(), n, HS_C128, 1, &hd));
    TEST_OK(hs_qureg_create(test_ctx(), n, HS_C128, 0, &hr));
    double id[2], ir[2], e;
    TEST_OK(hs_qureg_apply_pauli_sum(hd, d, h));
    TEST_OK(hs_qureg_apply_pauli_sum(hr, r, h));
    TEST_OK(hs_qureg_inner(d, hd, id));
    TEST_OK(hs_qureg_inner(r, hr, ir));
    TEST_OK(hs_qureg_expect(r, h, &e));
    TEST_LE(fabs(id[0] - ir[0]), 1e-13);
    TEST_LE(fabs(ir[0] - e), 1e-13);
    /* sampling: the same seed draws the same outcomes on every rank count */
    int64_t shots = 2000;
    uint64_t *sd = malloc((size_t)shots * sizeof *sd), *sr = malloc((size_t)shots * sizeof *sr);
    hs_rng g1, g2;
    hs_rng_seed(&g1, 9, 0);
    hs_rng_seed(&g2, 9, 0);
    TEST_OK(hs_qureg_sample(d, shots, &g1, sd));
    TEST_OK(hs_qureg_sample(r, shots, &g2, sr));
    int same = 0;
    for (int64_t k = 0; k < shots; k++) same += sd[k] == sr[k];
    assert_true(same >= shots - 1); /* a u within rounding of a boundary may fall either side */
    /* measuring a global qubit collapses both alike */
    int bd, br;
    TEST_OK(hs_qureg_measure(d, 9, 0.4, &bd, NULL));
    TEST_OK(hs_qureg_measure(r, 9, 0.4, &br, NULL));
    assert_int_equal(bd, br);
    size_t N = (size_t)1 << n;
    double *a = malloc(2 * N * sizeof *a), *b = malloc(2 * N * sizeof *b);
    TEST_OK(hs_qureg_get_amplitudes(d, a));
    TEST_OK(hs_qureg_get_amplitudes(r, b));
    TEST_LE(max_diff(a, b, 2 * N), 1e-13);
    free(a);
    free(b);
    free(sd);
    free(sr);
    hs_pauli_sum_free(h);
    hs_qureg_destroy(hd);
    hs_qureg_destroy(hr);
    hs_qureg_destroy(d);
    hs_qureg_destroy(r);
    hs_circuit_free(c);
}

/* Energy, adjoint and parameter-shift gradients on registers split over the ranks against the same
 * on replicated ones, at seeded random parameters; then whole L-BFGS minimisations. */
static void compare_split(hs_circuit *ansatz, const hs_pauli_sum *h, hs_dtype t, double tol, double min_tol,
                          const char *what)
{
    hs_ctx *ctx = test_ctx();
    hs_vqe *vs, *vr;
    TEST_OK(hs_vqe_create(ctx, ansatz, h, t, 1, &vs));
    TEST_OK(hs_vqe_create(ctx, ansatz, h, t, 0, &vr));
    /* the registers split on every power-of-two rank count above 1 that leaves room */
    int g = 0;
    while ((1 << g) < ctx->size) g++;
    int can = ctx->size > 1 && ansatz->nqubits - g >= hs_vqe_local_qubits(ansatz, h);
    assert_int_equal(hs_vqe_distributed(vs), can);
    assert_int_equal(hs_vqe_distributed(vr), 0);
    int np = ansatz->nparams;
    double *x = malloc((size_t)np * sizeof *x), *gs = malloc((size_t)np * sizeof *gs), *gr = malloc((size_t)np * sizeof *gr);
    double *ss = malloc((size_t)np * sizeof *ss), *sr = malloc((size_t)np * sizeof *sr);
    double worst = 0;
    for (int trial = 0; trial < 3; trial++) {
        test_fill_f64(x, (size_t)np, 40 + (uint64_t)trial, -1, 1);
        double es, er, e2s, e2r;
        TEST_OK(hs_vqe_energy(vs, x, &es));
        TEST_OK(hs_vqe_energy(vr, x, &er));
        TEST_OK(hs_vqe_gradient_adjoint(vs, x, &e2s, gs));
        TEST_OK(hs_vqe_gradient_adjoint(vr, x, &e2r, gr));
        TEST_OK(hs_vqe_gradient_shift(vs, x, ss));
        TEST_OK(hs_vqe_gradient_shift(vr, x, sr));
        TEST_LE(fabs(es - er), tol);
        TEST_LE(fabs(e2s - er), tol);
        worst = fmax(worst, fabs(es - er));
        for (int k = 0; k < np; k++) {
            TEST_LE(fabs(gs[k] - gr[k]), tol);
            TEST_LE(fabs(ss[k] - sr[k]), tol);
            worst = fmax(worst, fmax(fabs(gs[k] - gr[k]), fabs(ss[k] - sr[k])));
        }
    }
    /* whole minimisations from the same start: the optimiser's path may part at round-off near the
     * optimum (iterations differ by one or two), the energies reached agree */
    hs_vqe_opts o = {0, 200, 1e-10, 0, 0.05, 0, NULL};
    hs_vqe_result rs, rr;
    test_fill_f64(x, (size_t)np, 7, -0.5, 0.5);
    memcpy(gs, x, (size_t)np * sizeof *x);
    TEST_OK(hs_vqe_minimize(vs, x, &o, &rs));
    TEST_OK(hs_vqe_minimize(vr, gs, &o, &rr));
    TEST_LE(fabs(rs.energy - rr.energy), min_tol);
    if (ctx->rank == 0)
        printf("%s on %d rank%s (%s): energies and gradients within %.2g of the replicated run; minimised %.15g vs "
               "%.15g (%s, largest gradient component %.2g)\n", what, ctx->size, ctx->size > 1 ? "s" : "",
               hs_vqe_distributed(vs) ? "split" : "replicated", worst, rs.energy, rr.energy, rs.reason, rs.gnorm);
    free(rs.history);
    free(rr.history);
    free(x);
    free(gs);
    free(gr);
    free(ss);
    free(sr);
    hs_vqe_destroy(vs);
    hs_vqe_destroy(vr);
}

/* QAOA p = 3 on the 6-vertex prism of inputs/maxcut_6.graph (split on 2 and 4 ranks: Z terms and
 * 2-qubit gates need 2 local qubits), and VQE with the hardware-efficient ansatz for an 8-qubit
 * Heisenberg-like chain with X, Y and Z couplings (XX and YY terms need 2 local qubits). */
static void test_variational_split(void **st)
{
    (void)st;
    const int edges[18] = {0, 1, 1, 2, 2, 0, 3, 4, 4, 5, 5, 3, 0, 3, 1, 4, 2, 5};
    const double w[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    hs_pauli_sum *h;
    TEST_OK(hs_maxcut_hamiltonian(9, edges, w, &h));
    hs_circuit *a = hs_ansatz_qaoa(6, 3, 9, edges, w);
    assert_non_null(a);
    compare_split(a, h, HS_C128, 1e-12, 1e-9, "QAOA p=3, 6-vertex prism, complex128");
    compare_split(a, h, HS_C64, 1e-5, 1e-4, "QAOA p=3, 6-vertex prism, complex64");
    hs_circuit_free(a);
    hs_pauli_sum_free(h);

    int n = 8;
    h = hs_pauli_sum_new();
    for (int i = 0; i + 1 < n; i++) {
        uint64_t pair = (1ull << i) | (1ull << (i + 1));
        assert_int_equal(hs_pauli_sum_add(h, 1.0, pair, 0), 0);           /* X X */
        assert_int_equal(hs_pauli_sum_add(h, 0.8, pair, pair), 0);        /* Y Y (up to the i^ny sign) */
        assert_int_equal(hs_pauli_sum_add(h, 0.6, 0, pair), 0);           /* Z Z */
    }
    for (int i = 0; i < n; i++) assert_int_equal(hs_pauli_sum_add(h, 0.3, 0, 1ull << i), 0);
    a = hs_ansatz_hardware_efficient(n, 2);
    assert_non_null(a);
    /* 200 L-BFGS iterations leave this one short of the optimum (gradient ~1e-5): the two paths end
     * within 1e-8 |E| */
    compare_split(a, h, HS_C128, 1e-12, 1e-7, "VQE, 8-qubit XYZ chain, complex128");
    hs_circuit_free(a);
    hs_pauli_sum_free(h);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_amplitudes),
    cmocka_unit_test(test_readouts),
    cmocka_unit_test(test_variational_split),
};

TEST_MAIN("quantum_mpi", tests)
