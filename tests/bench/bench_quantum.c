/* Benchmark of the state-vector simulator: 1-qubit gates against the copy bandwidth, diagonal and
 * permutation gates, QFT and a 10-layer random circuit with and without fusion, the largest
 * register that fits, and (under mpirun) the cost of gates on global qubits.
 *
 *   build/tests/bench/bench_quantum [QUBITS]        (or HS_BENCH_QUBITS; default 30 on a GPU, 22 on CPU)
 *   mpirun -n 2 build/tests/bench/bench_quantum 33  (the register split over 2 GPUs) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_util.h"
#include "kernels/memory.h"
#include "solvers/quantum/qureg.h"

static hs_ctx *ctx;
static hs_qureg *reg;
static const hs_circuit *circ;
static double mat[32];
static int target;
static int canon_after;

static int run_gate(void *a)
{
    (void)a;
    HS_CHECK(hs_qureg_apply_matrix(reg, 1, &target, 0, 0, mat));
    return canon_after ? hs_qureg_canonical(reg) : HS_OK;
}

static int run_circuit(void *a)
{
    (void)a;
    return hs_qureg_run(reg, circ, NULL, NULL);
}

static hs_circuit *qft(int n)
{
    hs_circuit *c = hs_circuit_new(n, 0);
    const hs_qgate_def *h = hs_qgate_find("h"), *cp = hs_qgate_find("cp"), *sw = hs_qgate_find("swap");
    double m[32];
    for (int j = n - 1; j >= 0; j--) {
        h->build(NULL, m);
        hs_circuit_gate(c, "h", 1, &j, 0, 0, m);
        for (int k = j - 1; k >= 0; k--) {
            double ang = M_PI / ldexp(1.0, j - k);
            cp->build(&ang, m);
            hs_circuit_gate(c, "cp", 1, &j, 1ull << k, 1ull << k, m);
        }
    }
    sw->build(NULL, m);
    for (int j = 0; j < n / 2; j++) {
        int t[2] = {j, n - 1 - j};
        hs_circuit_gate(c, "swap", 2, t, 0, 0, m);
    }
    return c;
}

/* Layers of random single-qubit unitaries on every qubit and CX on alternating neighbour pairs. */
static hs_circuit *random_layers(int n, int layers)
{
    hs_circuit *c = hs_circuit_new(n, 0);
    const hs_qgate_def *u = hs_qgate_find("u3"), *x = hs_qgate_find("x");
    uint64_t s = 1;
    double m[32];
    for (int l = 0; l < layers; l++) {
        for (int q = 0; q < n; q++) {
            double p[3];
            for (int k = 0; k < 3; k++) {
                s = s * 6364136223846793005ull + 1442695040888963407ull;
                p[k] = (double)(s >> 11) * 0x1.0p-53 * 2 * M_PI;
            }
            u->build(p, m);
            hs_circuit_gate(c, "u3", 1, &q, 0, 0, m);
        }
        x->build(NULL, m);
        for (int q = l % 2; q + 1 < n; q += 2) {
            int t = q + 1;
            hs_circuit_gate(c, "cx", 1, &t, 1ull << q, 1ull << q, m);
        }
    }
    return c;
}

static void circuit_rows(const char *name, hs_circuit *c, int n, hs_dtype t, double state_bytes)
{
    char size[32], label[96];
    snprintf(size, sizeof size, "%d qubits", n);
    const char *prec = t == HS_C128 ? "c128" : "c64";
    /* effective bytes: every unfused gate reads and writes the whole state once */
    double bytes = 2.0 * state_bytes * c->nops;
    /* HS_BENCH_FUSION=k times only the unfused circuit and blocks of k (the multi-GPU runs) */
    const char *only = getenv("HS_BENCH_FUSION");
    int kmin = only ? atoi(only) : 3;
    for (int k = 0; k <= (only ? kmin : 5); k += (k == 0 ? kmin : 1)) { /* unfused, then blocks of 3, 4, 5 */
        hs_circuit *f = k ? hs_circuit_fuse(c, k, 1.0 / 16) : c;
        circ = f;
        int big = state_bytes > 4.0 * (1 << 30); /* a circuit takes seconds: time one run */
        double sec = bench_time(run_circuit, NULL, big ? 0 : 1, big ? 1 : 3);
        snprintf(label, sizeof label, "%s (%d ops%s)", name, f->nops, k ? ", fused" : "");
        if (k) snprintf(label + strlen(label) - 1, sizeof label - strlen(label) + 1, " k=%d)", k);
        bench_row(label, size, prec, sec, bytes, 0, NULL, 0);
        if (k) hs_circuit_free(f);
    }
}

static void bench_precision(int n, hs_dtype t)
{
    int ranks = ctx->size, nloc = n;
    while ((1 << (n - nloc)) < ranks) nloc--;
    if (hs_qureg_bytes_needed(n, t, ranks) > 0.9 * hs_qureg_bytes_available(ctx)) {
        if (ctx->rank == 0) printf("# %d qubits %s do not fit; skipped\n", n, t == HS_C128 ? "c128" : "c64");
        return;
    }
    bench_check(hs_qureg_create(ctx, n, t, 1, &reg), "register");
    double state_bytes = ldexp((double)hs_dtype_size(t), nloc); /* per rank */
    char size[32], label[64];
    snprintf(size, sizeof size, "%d qubits", n);
    const char *prec = t == HS_C128 ? "c128" : "c64";
    const hs_qgate_def *h = hs_qgate_find("u3");
    double p[3] = {0.3, 0.2, 0.1};
    h->build(p, mat);
    int targets[4] = {0, 4, nloc / 2, nloc - 1};
    for (int i = 0; i < 4; i++) {
        target = targets[i];
        /* enough warm-up that the first row does not pay for clocks ramping after the previous work */
        double sec = bench_time(run_gate, NULL, 5, 10);
        snprintf(label, sizeof label, "1q dense gate, target %d", target);
        bench_row(label, size, prec, sec, 2.0 * state_bytes, 0, NULL, 0);
    }
    hs_qgate_find("rz")->build(p, mat);
    target = 3;
    bench_row("1q diagonal gate (rz)", size, prec, bench_time(run_gate, NULL, 2, 10), 2.0 * state_bytes, 0, NULL, 0);
    hs_qgate_find("x")->build(p, mat);
    bench_row("1q permutation gate (x)", size, prec, bench_time(run_gate, NULL, 2, 10), 2.0 * state_bytes, 0, NULL, 0);
    if (ranks > 1) { /* swap in, apply, swap back: two exchanges of half the slice each */
        hs_qgate_find("u3")->build(p, mat);
        target = n - 1;
        canon_after = 1;
        bench_row("1q gate on a global qubit (+2 exchanges)", size, prec, bench_time(run_gate, NULL, 1, 5),
                  2.0 * state_bytes, 0, NULL, 0);
        canon_after = 0;
    }
    hs_circuit *c = qft(n);
    circuit_rows("QFT", c, n, t, state_bytes);
    hs_circuit_free(c);
    c = random_layers(n, 10);
    circuit_rows("random 10 layers", c, n, t, state_bytes);
    hs_circuit_free(c);
    hs_qureg_destroy(reg);
    reg = NULL;
}

/* The largest register of each precision that fits on this device (all ranks together). */
static void largest(hs_dtype t)
{
    double avail = hs_qureg_bytes_available(ctx);
    hs_allreduce_min(ctx->comm, &avail, 1);
    int n = 1;
    while (n < HS_Q_MAX_QUBITS && hs_qureg_bytes_needed(n + 1, t, ctx->size) <= avail) n++;
    hs_qureg *q = NULL;
    int rc = hs_qureg_create(ctx, n, t, 1, &q);
    char size[32];
    snprintf(size, sizeof size, "%d qubits", n);
    if (rc == HS_OK) {
        reg = q;
        hs_qgate_find("h")->build(NULL, mat);
        target = 0;
        double sec = bench_time(run_gate, NULL, 1, 3);
        bench_row("largest register: 1q gate", size, t == HS_C128 ? "c128" : "c64", sec,
                  2.0 * ldexp((double)hs_dtype_size(t), n) / ctx->size, 0, NULL, 0);
        hs_qureg_destroy(q);
        reg = NULL;
    } else {
        hs_error_clear();
        if (ctx->rank == 0) printf("# largest register: %d qubits could not be allocated\n", n);
    }
}

int main(int argc, char **argv)
{
    ctx = bench_init(&argc, &argv);
    const char *env = getenv("HS_BENCH_QUBITS");
    int n = HS_ON_GPU(ctx) ? 30 : 22;
    if (argc > 1) n = atoi(argv[1]);
    else if (env && *env) n = atoi(env);
    if (n < 8 || n > HS_Q_MAX_QUBITS) {
        fprintf(stderr, "bench_quantum: qubits must be 8..%d\n", HS_Q_MAX_QUBITS);
        return 2;
    }
    bench_copy_bandwidth();
    if (!getenv("HS_BENCH_C64_ONLY")) bench_precision(n, HS_C128);
    if (!getenv("HS_BENCH_C128_ONLY")) bench_precision(n, HS_C64);
    if (!getenv("HS_BENCH_SKIP_LARGEST")) {
        largest(HS_C128);
        largest(HS_C64);
    }
    bench_finish();
    return 0;
}
