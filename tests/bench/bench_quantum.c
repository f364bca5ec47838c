/* Benchmark of the state-vector simulator: 1-qubit gates against the copy bandwidth, diagonal and
 * permutation gates, fused dense 4-6 qubit blocks per pass, three circuits (QFT, a random circuit of
 * the supremacy kind, a QAOA layer) unfused and planned with their passes and the bandwidth
 * fraction per pass, the largest register that fits, and (under mpirun) gates on global qubits.
 *
 *   build/tests/bench/bench_quantum --write-qasm DIR [QUBITS]   (the circuits as OpenQASM files)
 *   build/tests/bench/bench_quantum [QUBITS]        (or HS_BENCH_QUBITS; default 30 on a GPU, 22 on CPU)
 *   mpirun -n 2 build/tests/bench/bench_quantum 33  (the register split over 2 GPUs) */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/bench_util.h"
#include "kernels/memory.h"
#include "solvers/quantum/qasm.h"
#include "solvers/quantum/qureg.h"
#include "solvers/quantum/sv.h"

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

/* ---- The circuits, written as OpenQASM so that hpcsim, qsim and cuStateVec run the same text
 * (bench_quantum --write-qasm DIR writes them; scripts/peers/ converts them for qsim). */
typedef struct {
    char *s;
    size_t len, cap;
} sbuf;

static void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (b->len + (size_t)n + 1 > b->cap) {
        b->cap = 2 * (b->len + (size_t)n + 1) + 4096;
        b->s = realloc(b->s, b->cap);
        if (!b->s) {
            fprintf(stderr, "bench_quantum: out of memory\n");
            exit(1);
        }
    }
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

static uint64_t lcg(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 33;
}

/* QFT on n qubits (H and controlled phases, then the reversing swaps). */
static char *qasm_qft(int n)
{
    sbuf b = {0};
    sb_printf(&b, "OPENQASM 2.0;\ninclude \"qelib1.inc\";\nqreg q[%d];\n", n);
    for (int j = n - 1; j >= 0; j--) {
        sb_printf(&b, "h q[%d];\n", j);
        for (int k = j - 1; k >= 0; k--) sb_printf(&b, "cp(%.17g) q[%d], q[%d];\n", M_PI / ldexp(1.0, j - k), k, j);
    }
    for (int j = 0; j < n / 2; j++) sb_printf(&b, "swap q[%d], q[%d];\n", j, n - 1 - j);
    return b.s;
}

/* A random circuit of the supremacy kind on a rows x cols grid (qubit r cols + c): H on every
 * qubit, then per cycle a random gate from {sqrt-X, sqrt-Y, T} on every qubit (never the one
 * the qubit had in the previous cycle) and CZs on one of four couplers patterns in the order
 * A B C D C D A B (A, B: horizontal pairs starting on even / odd columns; C, D: vertical pairs
 * starting on even / odd rows), as in the Sycamore circuits. */
static char *qasm_supremacy(int rows, int cols, int cycles, uint64_t seed)
{
    static const char *g1[3] = {"sx", "ry(pi/2)", "t"};
    static const int order[8] = {0, 1, 2, 3, 2, 3, 0, 1};
    int n = rows * cols, last[64];
    sbuf b = {0};
    sb_printf(&b, "OPENQASM 2.0;\ninclude \"qelib1.inc\";\nqreg q[%d];\n", n);
    for (int q = 0; q < n; q++) sb_printf(&b, "h q[%d];\n", q), last[q] = -1;
    for (int c = 0; c < cycles; c++) {
        for (int q = 0; q < n; q++) {
            int g;
            do g = (int)(lcg(&seed) % 3);
            while (g == last[q]);
            last[q] = g;
            sb_printf(&b, "%s q[%d];\n", g1[g], q);
        }
        int pat = order[c % 8];
        for (int r = 0; r < rows; r++)
            for (int k = 0; k < cols; k++) {
                int horiz = pat < 2, par = pat & 1;
                if (horiz && k % 2 == par && k + 1 < cols) sb_printf(&b, "cz q[%d], q[%d];\n", r * cols + k, r * cols + k + 1);
                if (!horiz && r % 2 == par && r + 1 < rows) sb_printf(&b, "cz q[%d], q[%d];\n", r * cols + k, (r + 1) * cols + k);
            }
    }
    return b.s;
}

/* One QAOA layer for MaxCut on the Moebius ladder of n vertices (the cycle plus the n/2 chords
 * i -- i + n/2: 3-regular): H on every qubit, rzz(2 gamma) per edge, rx(2 beta) on every qubit. */
static char *qasm_qaoa(int n, double gamma, double beta)
{
    sbuf b = {0};
    sb_printf(&b, "OPENQASM 2.0;\ninclude \"qelib1.inc\";\nqreg q[%d];\n", n);
    for (int q = 0; q < n; q++) sb_printf(&b, "h q[%d];\n", q);
    for (int q = 0; q < n; q++) sb_printf(&b, "rzz(%.17g) q[%d], q[%d];\n", 2 * gamma, q, (q + 1) % n);
    for (int q = 0; q < n / 2; q++) sb_printf(&b, "rzz(%.17g) q[%d], q[%d];\n", 2 * gamma, q, q + n / 2);
    for (int q = 0; q < n; q++) sb_printf(&b, "rx(%.17g) q[%d];\n", 2 * beta, q);
    return b.s;
}

typedef struct {
    const char *file;
    char *text;
} named_qasm;

/* The three benchmark circuits at n qubits (the supremacy grid is 5 x (n / 5)). */
static void make_circuits(int n, named_qasm out[3])
{
    out[0].file = "qft";
    out[0].text = qasm_qft(n);
    out[1].file = "supremacy";
    out[1].text = qasm_supremacy(5, n / 5, 20, 2026);
    out[2].file = "qaoa";
    out[2].text = qasm_qaoa(n, 0.7, 0.3);
}

static hs_circuit *parse(const named_qasm *q)
{
    hs_circuit *c = NULL;
    bench_check(hs_qasm_parse_string(q->file, q->text, &c), q->file);
    return c;
}

/* ---- Peers on the same circuit, when scripts/peers/run_peers.sh has built them and written the
 * circuits in qsim's format under HS_BENCH_PEERS (default build/peers): the time each reports for
 * applying the gates (qsim -v 2: "simu time", after fusing; cuStateVec: its gate loop), printed as
 * the peer of our planned run (ratio = peer / ours, > 1: we are faster). */
static double peer_seconds(const char *cmd, const char *key1, const char *key2)
{
    FILE *f = popen(cmd, "r");
    if (!f) return 0;
    char line[512];
    double a = 0, b = 0;
    while (fgets(line, sizeof line, f)) {
        const char *p = strstr(line, key1);
        if (p) a = atof(p + strlen(key1));
        if (key2 && (p = strstr(line, key2))) b = atof(p + strlen(key2));
    }
    int rc = pclose(f);
    return rc == 0 && a > 0 ? a - b : 0;
}

static void peer_rows(const char *label, const char *file, int n, hs_dtype t, double sec, double bytes)
{
    if (ctx->rank != 0 || ctx->size > 1 || !HS_ON_GPU(ctx)) return;
    const char *dir = getenv("HS_BENCH_PEERS") ? getenv("HS_BENCH_PEERS") : "build/peers";
    char circ[1024], bin[1024], cmd[3072], row[160];
    snprintf(circ, sizeof circ, "%s/circuits/%s_%d.qsim", dir, file, n);
    FILE *probe = fopen(circ, "r");
    if (!probe) return;
    fclose(probe);
    char size[32];
    snprintf(size, sizeof size, "%d qubits", n);
    const char *prec = t == HS_C128 ? "c128" : "c64";
    for (int f = 4; f <= 5 && t == HS_C64; f++) { /* qsim's CUDA simulator is complex64 only */
        snprintf(bin, sizeof bin, "%s/build/qsim_base_cuda", dir);
        if (access(bin, X_OK)) break;
        snprintf(cmd, sizeof cmd, "'%s' -c '%s' -f %d -v 2 2>&1", bin, circ, f);
        double ps = peer_seconds(cmd, "simu time is ", NULL); /* at -v 2 qsim restarts its clock after fusing */
        char peer[32];
        snprintf(peer, sizeof peer, "qsim f=%d", f);
        snprintf(row, sizeof row, "%s vs qsim", label);
        if (ps > 0) bench_row(row, size, prec, sec, bytes, 0, peer, ps);
    }
    snprintf(bin, sizeof bin, "%s/build/custatevec_bench", dir);
    if (!access(bin, X_OK)) {
        snprintf(cmd, sizeof cmd, "'%s' '%s' %s 2>&1", bin, circ, prec);
        double ps = peer_seconds(cmd, ", gates ", NULL);
        snprintf(row, sizeof row, "%s vs cuStateVec", label);
        if (ps > 0) bench_row(row, size, prec, sec, bytes, 0, "cuStateVec", ps);
    }
}

/* A circuit unfused, planned (fusion = auto), and planned with blocks of at most 4 and 5 qubits.
 * The bytes of a row are those its passes move (every pass reads and writes the state once), so
 * %limit is the mean fraction of the copy bandwidth per pass; the label gives the passes. */
static void circuit_rows(const char *name, const char *file, hs_circuit *c, int n, int nloc, hs_dtype t,
                         double state_bytes)
{
    char size[32], label[128];
    snprintf(size, sizeof size, "%d qubits", n);
    const char *prec = t == HS_C128 ? "c128" : "c64";
    hs_qcost model = hs_qcost_model(hs_sv_model_device(ctx), nloc, (int)hs_dtype_size(t));
    /* HS_BENCH_FUSION=k times only the unfused circuit and blocks of at most k (multi-GPU runs) */
    const char *only = getenv("HS_BENCH_FUSION");
    int ks[4] = {0, HS_Q_MAX_TARGETS + 1, 4, 5}, nk = 4;
    if (only) ks[1] = atoi(only), nk = 2;
    for (int i = 0; i < nk; i++) {
        int k = ks[i];
        hs_qplan_stats st;
        hs_circuit *f = k ? hs_circuit_plan(c, k > HS_Q_MAX_TARGETS ? HS_Q_MAX_TARGETS : k, &model, &st) : c;
        if (!f) bench_check(HS_FAIL(HS_ERR_RUNTIME, "out of memory planning"), name);
        if (!k) hs_circuit_stats(c, &model, &st);
        circ = f;
        int big = state_bytes > 4.0 * (1 << 30); /* a circuit takes seconds: time one run */
        double sec = bench_time(run_circuit, NULL, big ? 0 : 1, big ? 1 : 3);
        const char *how = k == 0 ? "unfused" : k > HS_Q_MAX_TARGETS ? "auto" : k == 4 ? "k<=4" : "k<=5";
        snprintf(label, sizeof label, "%s %s (%d passes)", name, how, st.passes);
        bench_row(label, size, prec, sec, 2.0 * state_bytes * st.passes, 0, NULL, 0);
        if (k > HS_Q_MAX_TARGETS) peer_rows(label, file, n, t, sec, 2.0 * state_bytes * st.passes);
        if (ctx->rank == 0)
            printf("#   %s %s: %d gates -> %d passes (%d dense, %d diagonal, %d permutation; sizes 1..6: %d %d %d %d "
                   "%d %d), model %.1f passes, %.3g s per pass\n",
                   name, how, c->nops, st.passes, st.dense, st.diag, st.perm, st.by_size[1], st.by_size[2],
                   st.by_size[3], st.by_size[4], st.by_size[5], st.by_size[6], st.cost, sec / st.passes);
        if (k) hs_circuit_free(f);
    }
}

/* One dense k-qubit block (a random unitary-like matrix; the kernel's time does not depend on
 * it) on the lowest k qubits, the highest k, and spread ones: the fused kernel per pass. */
static double blockmat[2 << (2 * HS_Q_MAX_TARGETS)];
static int block_k, block_t[HS_Q_MAX_TARGETS];

static int run_block(void *a)
{
    (void)a;
    return hs_qureg_apply_matrix(reg, block_k, block_t, 0, 0, blockmat);
}

static void block_rows(int n, int nloc, hs_dtype t, double state_bytes)
{
    char size[32], label[96];
    snprintf(size, sizeof size, "%d qubits", n);
    uint64_t s = 7;
    for (size_t i = 0; i < sizeof blockmat / sizeof blockmat[0]; i++) blockmat[i] = (double)lcg(&s) / 0x1p31 - 0.5;
    double passes[HS_Q_MAX_TARGETS + 1] = {0}, pass = 2.0 * state_bytes / bench_copy_bandwidth();
    for (int k = 4; k <= HS_Q_MAX_TARGETS; k++) {
        const char *where[3] = {"low", "high", "spread"};
        for (int w = 0; w < 3; w++) {
            block_k = k;
            for (int j = 0; j < k; j++)
                block_t[j] = w == 0 ? j : w == 1 ? nloc - k + j : (j * (nloc - 1)) / (k - 1);
            double sec = bench_time(run_block, NULL, 2, 5);
            snprintf(label, sizeof label, "fused %dq dense block, %s", k, where[w]);
            bench_row(label, size, t == HS_C128 ? "c128" : "c64", sec, 2.0 * state_bytes, 0, NULL, 0);
            passes[k] = fmax(passes[k], sec / pass);
        }
    }
    /* what the planner's model says of the same blocks (a table, or cost = 2^k / ratio) */
    hs_qcost model = hs_qcost_model(hs_sv_model_device(ctx), nloc, (int)hs_dtype_size(t));
    if (ctx->rank == 0)
        printf("#   dense blocks cost (worst placement) k=4 %.2f, k=5 %.2f, k=6 %.2f copy passes; the model (%s) says "
               "%.2f, %.2f, %.2f; measured ratio 2^6 / cost(6) = %.1f (HS_QFUSION_RATIO sets a ratio model)\n",
               passes[4], passes[5], passes[6], model.dense ? "measured table" : "ratio",
               hs_qcost_pass(&model, 4, 1, 1), hs_qcost_pass(&model, 5, 1, 1), hs_qcost_pass(&model, 6, 1, 1),
               64 / passes[6]);
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
    block_rows(n, nloc, t, state_bytes);
    named_qasm qs[3];
    make_circuits(n, qs);
    static const char *names[3] = {"QFT", "supremacy 20 cyc", "QAOA layer"};
    for (int i = 0; i < 3; i++) {
        hs_circuit *c = parse(&qs[i]);
        circuit_rows(names[i], qs[i].file, c, n, nloc, t, state_bytes);
        hs_circuit_free(c);
        free(qs[i].text);
    }
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

/* bench_quantum --write-qasm DIR [QUBITS]: the benchmark circuits as DIR/{qft,supremacy,qaoa}_N.qasm */
static int write_qasm(const char *dir, int n)
{
    named_qasm qs[3];
    make_circuits(n, qs);
    for (int i = 0; i < 3; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s_%d.qasm", dir, qs[i].file, n);
        FILE *f = fopen(path, "w");
        if (!f || fputs(qs[i].text, f) < 0 || fclose(f)) {
            fprintf(stderr, "bench_quantum: cannot write %s\n", path);
            return 1;
        }
        printf("%s\n", path);
        free(qs[i].text);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 2 && !strcmp(argv[1], "--write-qasm")) return write_qasm(argv[2], argc > 3 ? atoi(argv[3]) : 30);
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
