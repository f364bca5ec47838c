/* Gate fusion planner: blocks of up to 6 qubits chosen per block under a bytes-versus-flops cost model. */
#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "solvers/quantum/circuit.h"
#include "solvers/quantum/sv_impl.h"

typedef double complex cplx;

/* Stated device constants (the bench prints the measured fraction per pass to check them).
 * GPU (H200): 4.8 TB/s HBM3e, of which a device-to-device copy reaches about 4.0 TB/s; 67 TFLOP/s
 * FP32 and 34 TFLOP/s FP64 (vector FMA).  A complex multiply-add is 4 FMAs, so the dense kernel at
 * about 60% of peak does 5.0e12 (complex64) / 2.5e12 (complex128) multiply-adds per second, while
 * one pass moves 2.5e11 (16 bytes each) / 1.25e11 (32 bytes each) amplitudes per second: in both
 * precisions compute and memory balance at about 20 multiply-adds per amplitude, so ratio = 20
 * (a 4-qubit block is memory-bound, a 5-qubit one costs about 1.6 passes, a 6-qubit one 3.2).
 * A launch with its matrix upload costs about 6 us.
 * CPU (OpenMP): about 1 multiply-add per 4 bytes moved per core (ratio 4), 20 GB/s, 2 us. */
#define GPU_RATIO 20.0
#define GPU_BW 4.0e12
#define GPU_LAUNCH 6e-6
/* The tensor-core blocks (sv_cuda.cu) broke the ratio model: on the H200 (2026-12-04, bench_quantum
 * at 30 qubits, complex64, in copy passes) one dense block alone costs 1.21 (4 qubits, all targets
 * at qubit 5 or above; the CUDA-core kernel) / 1.18 (a target below), 1.65 / 1.78 (5 qubits), 2.69
 * / 2.73 (6 qubits); single gates 1.08.  Planned with those figures, the supremacy-style circuit
 * took 0.341 s (55 passes) against 0.327 s with the table of the kernel before (1.59 for 4 low,
 * 1.85 / 1.97, 2.98 / 3.15): in circuits the larger blocks cost more than alone.  The figures below
 * are the ones of five tables tried (hpcsim whole runs, best of three, same call) that gave the
 * shortest simulations of the three benchmark circuits together: supremacy-style 0.311 s (49
 * passes), QFT 0.305 s (58), QAOA 0.102 s (21).  2 and 3 qubits with a low target are estimates,
 * fused diagonal and permutation blocks about 1.1 (QFT's plans).  HS_QFUSION_TABLE replaces the
 * 4-6 qubit entries (another GPU's figures).
 * The 5-qubit blocks of the bulk-copy kernel (the default on compute capability 9 in a build for
 * it) cost less alone: 1.12 / 1.20 passes (a target below qubit 5 / none) against 1.43 / 1.31 for
 * the kernel before (H100, 2026-12-06, bench_quantum at 30 qubits).  Of three 5-qubit rows tried
 * with whole runs on that H100 (one call; 1.75 / 1.88, 1.45 / 1.60, 1.25 / 1.40), the last gave the
 * shortest simulations: supremacy-style 0.326 s (48 passes) against 0.343 s (49) and 0.346 s (52),
 * QAOA 0.113 s (17) against 0.133 s (21) and 0.119 s (18); QFT's plan has no dense 5-qubit block
 * and does not change.  That row is the second table, used where the planner is told the blocks
 * take the bulk-copy kernel (hs_qcost_model's gpu = 2).
 * The third table is the CUDA-core kernels' (HS_QSV_MMA=0), measured on 2026-12-02. */
static const double GPU_C64_DENSE[2 * (HS_Q_MAX_TARGETS + 1)] = {0, 0, 1.08, 1.08, 1.08, 1.25, 1.08, 1.35,
                                                                 1.21, 1.30, 1.75, 1.88, 2.98, 3.15};
static const double GPU_C64_DENSE_BULK[2 * (HS_Q_MAX_TARGETS + 1)] = {0, 0, 1.08, 1.08, 1.08, 1.25, 1.08, 1.35,
                                                                      1.21, 1.30, 1.25, 1.40, 2.98, 3.15};
static const double GPU_C64_DENSE_NO_MMA[2 * (HS_Q_MAX_TARGETS + 1)] = {0, 0, 1.08, 1.08, 1.08, 1.25, 1.08, 1.35,
                                                                        1.21, 1.72, 2.10, 3.20, 4.11, 7.49};
/* complex128 has neither kernel of tensor cores nor bulk copies: its blocks with a target below
 * qubit 5 run the shared-memory tile kernel, which holds few warps an SM there (H100, 2026-12-06,
 * bench_quantum at 30 qubits, complex128, in copy passes: 1 qubit 1.06; 4 qubits 1.10 / 1.64 (no
 * target below / one below), 5 qubits 1.39 / 2.73, 6 qubits 5.10 / 11.6; 2 and 3 qubits as
 * complex64's estimates).  The one-ratio model priced them all at 1 to 3.2 passes and planned
 * low-target 5-qubit blocks that took 2.7.  With this table (same bench, same H100) the auto plans
 * took QFT 862 ms against 1111, supremacy-style 976 against 1014, QAOA 300 against 295. */
static const double GPU_C128_DENSE[2 * (HS_Q_MAX_TARGETS + 1)] = {0, 0, 1.06, 1.06, 1.08, 1.25, 1.08, 1.35,
                                                                  1.10, 1.64, 1.39, 2.73, 5.10, 11.6};
#define GPU_FUSED_OTHER 1.1
#define CPU_RATIO 4.0
#define CPU_BW 2.0e10
#define CPU_LAUNCH 2e-6

/* Gates scanned ahead of a block's first gate when looking for gates that can join it. */
#define WINDOW 1024

/* Below this qubit a target puts the CUDA kernels on their shared-memory tile paths. */
#define LOW_QUBITS 5

static double pass_cost(const hs_qcost *m, uint64_t qubits, int rk);

/* A positive number from the environment, or def. */
static double env_or(const char *name, double def)
{
    const char *v = getenv(name);
    char *end;
    double x = v ? strtod(v, &end) : 0;
    return v && end != v && *end == '\0' && x > 0 && isfinite(x) ? x : def;
}

hs_qcost hs_qcost_model(int gpu, int nloc, int amp_bytes)
{
    hs_qcost m = {0, 0, NULL, 1.0};
    /* HS_QFUSION_RATIO (or HS_QFUSION_RATIO_C64 / _C128 for one precision), HS_QFUSION_LAUNCH_US
     * and HS_QFUSION_BW (bytes/s) replace the stated constants with measured ones (bench_quantum
     * prints what each block size costs per pass and the ratio that implies) */
    double bw = env_or("HS_QFUSION_BW", gpu ? GPU_BW : CPU_BW);
    double pass = 2.0 * ldexp((double)amp_bytes, nloc) / bw;
    m.ratio = env_or("HS_QFUSION_RATIO", gpu ? GPU_RATIO : CPU_RATIO);
    m.ratio = env_or(amp_bytes == 8 ? "HS_QFUSION_RATIO_C64" : "HS_QFUSION_RATIO_C128", m.ratio); /* per precision */
    m.launch = env_or("HS_QFUSION_LAUNCH_US", 1e6 * (gpu ? GPU_LAUNCH : CPU_LAUNCH)) * 1e-6 / pass;
    /* complex64 on the GPU: the measured table, unless a ratio is given */
    if (gpu && amp_bytes == 8 && !getenv("HS_QFUSION_RATIO") && !getenv("HS_QFUSION_RATIO_C64")) {
        m.dense = hs_sv_mma_mode() == HS_SV_MMA_NEVER ? GPU_C64_DENSE_NO_MMA : gpu == 2 ? GPU_C64_DENSE_BULK : GPU_C64_DENSE;
        m.other = GPU_FUSED_OTHER;
        /* HS_QFUSION_TABLE="c4,c4low,c5,c5low,c6,c6low": the dense 4-6 qubit blocks' costs in copy
         * passes (another GPU's, as bench_quantum prints them); malformed: the stated table */
        static double table[2 * (HS_Q_MAX_TARGETS + 1)];
        const char *t = getenv("HS_QFUSION_TABLE");
        if (t) {
            memcpy(table, m.dense, sizeof table);
            int k = 8;
            char *end;
            for (; k < 2 * (HS_Q_MAX_TARGETS + 1); k++, t = end + 1) {
                table[k] = strtod(t, &end);
                if (end == t || !(table[k] > 0) || !isfinite(table[k]) || *end != (k == 2 * HS_Q_MAX_TARGETS + 1 ? '\0' : ',')) break;
            }
            if (k == 2 * (HS_Q_MAX_TARGETS + 1)) m.dense = table;
        }
    }
    if (gpu && amp_bytes == 16 && !getenv("HS_QFUSION_RATIO") && !getenv("HS_QFUSION_RATIO_C128")) {
        m.dense = GPU_C128_DENSE;
        m.other = GPU_FUSED_OTHER;
    }
    return m;
}

/* kind ranks: a product of diagonals is diagonal, of diagonals and permutations a permutation */
enum { RK_DIAG = 0, RK_PERM = 1, RK_DENSE = 2 };

static int rank_of(hs_qmat_kind k) { return k == HS_QMAT_DIAG ? RK_DIAG : k == HS_QMAT_PERM ? RK_PERM : RK_DENSE; }

static double pass_cost(const hs_qcost *m, uint64_t qubits, int rk)
{
    int nq = __builtin_popcountll(qubits);
    double c;
    if (m->dense) c = rk == RK_DENSE ? m->dense[2 * nq + ((qubits & ((1u << LOW_QUBITS) - 1)) != 0)] : m->other;
    else c = rk == RK_DENSE ? fmax(1.0, ldexp(1.0, nq) / m->ratio) : 1.0;
    return c + m->launch;
}

/* The qubits a gate's own pass touches as targets (what the cost's placement looks at). */
static uint64_t target_mask(const hs_qop *op)
{
    uint64_t q = 0;
    for (int j = 0; j < op->nt; j++) q |= 1ull << op->t[j];
    return q;
}

double hs_qcost_pass(const hs_qcost *m, int nq, int low, int dense)
{
    uint64_t q = ((1ull << nq) - 1) << (low ? 0 : LOW_QUBITS);
    return pass_cost(m, q, dense ? RK_DENSE : RK_DIAG);
}

/* How an operation takes part in fusion. */
enum { OP_FUSE, OP_SOFT /* a gate kept as it is; others move past it on other qubits */, OP_HARD /* nothing moves past it */ };

typedef struct {
    const hs_circuit *c;
    const hs_qcost *model;
    int n, kmax;
    uint64_t *qm;    /* qubits of each op (targets and controls) */
    int *cls, *prev, *next;
    double *alone;   /* cost of each gate as a pass of its own */
    int head;        /* first op not yet emitted; -1 at the end */
    int *idx, *idx2; /* candidate members (scratch) */
} planner;

typedef struct {
    int count;
    uint64_t q;
    int rk;
    double gain, cost;
} cand;

static void unlink_op(planner *p, int i)
{
    if (p->prev[i] >= 0) p->next[p->prev[i]] = p->next[i];
    else p->head = p->next[i];
    if (p->next[i] >= 0) p->prev[p->next[i]] = p->prev[i];
}

/* The block that starts at the first pending op and takes every later gate that can move to it
 * (no skipped gate before it shares a qubit) while the block stays within k qubits. */
static cand build(planner *p, int k, int *members)
{
    const hs_qop *ops = p->c->ops;
    int first = p->head;
    cand b = {1, p->qm[first], rank_of(ops[first].mk), p->alone[first], 0};
    members[0] = first;
    uint64_t blocked = 0, all = p->c->nqubits >= 64 ? ~0ull : (1ull << p->c->nqubits) - 1;
    int scanned = 0;
    for (int j = p->next[first]; j >= 0 && scanned < WINDOW; j = p->next[j], scanned++) {
        if (p->cls[j] == OP_HARD) break;
        uint64_t m = p->qm[j];
        if ((m & blocked) || p->cls[j] == OP_SOFT || __builtin_popcountll(b.q | m) > k) {
            blocked |= m;
        } else {
            b.q |= m;
            members[b.count++] = j;
            b.gain += p->alone[j];
            int r = rank_of(ops[j].mk);
            if (r > b.rk) b.rk = r;
        }
        int full = __builtin_popcountll(b.q) >= k;
        if ((b.q & ~blocked) == 0 && (full || ((all & ~blocked & ~b.q) == 0))) break;
    }
    b.cost = pass_cost(p->model, b.q, b.rk);
    return b;
}

/* Candidate qubit sets looked at per growth step. */
#define MAXC 12

/* The block on the qubit set q: the first pending op and every later gate inside q that can move
 * to it.  Gates outside q block their qubits; those that nothing before them blocks and whose
 * qubits with q make at most kmax are returned as the ways q may grow (cands, up to MAXC). */
static cand build_set(planner *p, uint64_t q, int kmax, int *members, uint64_t *cands, int *ncand)
{
    const hs_qop *ops = p->c->ops;
    int first = p->head, nq = __builtin_popcountll(q);
    cand b = {1, q, rank_of(ops[first].mk), p->alone[first], 0};
    members[0] = first;
    uint64_t blocked = 0, all = p->c->nqubits >= 64 ? ~0ull : (1ull << p->c->nqubits) - 1;
    int scanned = 0;
    *ncand = 0;
    for (int j = p->next[first]; j >= 0 && scanned < WINDOW; j = p->next[j], scanned++) {
        if (p->cls[j] == OP_HARD) break;
        uint64_t m = p->qm[j];
        int free_ = !(m & blocked) && p->cls[j] == OP_FUSE;
        if (free_ && (m & ~q) == 0) {
            members[b.count++] = j;
            b.gain += p->alone[j];
            int r = rank_of(ops[j].mk);
            if (r > b.rk) b.rk = r;
            continue;
        }
        if (free_ && __builtin_popcountll(q | m) <= kmax && *ncand < MAXC) {
            uint64_t grown = q | m;
            int dup = 0;
            for (int c = 0; c < *ncand; c++) dup |= cands[c] == grown;
            if (!dup) cands[(*ncand)++] = grown;
        }
        blocked |= m;
        if ((q & ~blocked) == 0 && (nq >= kmax || *ncand >= MAXC || (all & ~blocked & ~q) == 0)) break;
    }
    b.cost = pass_cost(p->model, q, b.rk);
    return b;
}

/* Multiply the block matrix M (dimension 2^m over the sorted qubits q) by op from the left.  Row
 * by row: the rows that one group of op's amplitudes mixes are combined across all columns at once
 * (work holds dt rows), with op's matrix read once (column by column, with the entries rebuilt at
 * every use, this was two thirds of planning a 30-qubit circuit). */
static void absorb(cplx *M, int m, const int *q, const hs_qop *op, cplx *work)
{
    int d = 1 << m, pos[HS_Q_MAX_TARGETS];
    uint64_t cm = 0, cv = 0, tm = 0;
    for (int j = 0; j < op->nt; j++)
        for (int i = 0; i < m; i++)
            if (q[i] == op->t[j]) pos[j] = i, tm |= 1ull << i;
    for (int i = 0; i < m; i++)
        if (op->cmask >> q[i] & 1) cm |= 1ull << i, cv |= (uint64_t)(op->cval >> q[i] & 1) << i;
    const int dt = 1 << op->nt;
    cplx g[1 << (2 * HS_Q_MAX_TARGETS)];
    for (int e = 0; e < dt * dt; e++) g[e] = CMPLX(op->m[2 * e], op->m[2 * e + 1]);
    int rows[1 << HS_Q_MAX_TARGETS];
    for (int base = 0; base < d; base++) {
        if ((uint64_t)base & tm) continue;
        if (((uint64_t)base & cm) != cv) continue;
        for (int k = 0; k < dt; k++) {
            int idx = base;
            for (int j = 0; j < op->nt; j++) idx |= (k >> j & 1) << pos[j];
            rows[k] = idx;
            memcpy(work + (size_t)k * d, M + (size_t)idx * d, (size_t)d * sizeof(cplx));
        }
        for (int r = 0; r < dt; r++) {
            cplx *out = M + (size_t)rows[r] * d;
            for (int c = 0; c < d; c++) out[c] = 0;
            for (int k = 0; k < dt; k++) {
                const cplx gk = g[r * dt + k], *in = work + (size_t)k * d;
                for (int c = 0; c < d; c++) out[c] += gk * in[c];
            }
        }
    }
}

static int emit_block(planner *p, hs_circuit *out, const cand *b, const int *members)
{
    if (b->count == 1) return hs_circuit_copy_op(out, &p->c->ops[members[0]]);
    int q[HS_Q_MAX_TARGETS], m = 0;
    for (int i = 0; i < 64; i++)
        if (b->q >> i & 1) q[m++] = i; /* ascending: the matrix index follows the amplitude index */
    int d = 1 << m;
    cplx *M = calloc((size_t)d * d + (size_t)d * (1u << HS_Q_MAX_TARGETS), sizeof(cplx));
    if (!M) return -1;
    for (int i = 0; i < d; i++) M[i * d + i] = 1;
    for (int i = 0; i < b->count; i++) absorb(M, m, q, &p->c->ops[members[i]], M + (size_t)d * d);
    hs_qop *op = hs_circuit_gate(out, "fused", m, q, 0, 0, (const double *)M);
    free(M);
    return op ? 0 : -1;
}

static void count_op(const hs_qop *op, const hs_qcost *model, hs_qplan_stats *st)
{
    if (op->kind != HS_QOP_GATE) return;
    st->passes++;
    st->by_size[op->nt]++;
    int rk = rank_of(op->mk);
    if (rk == RK_DENSE) st->dense++;
    else if (rk == RK_DIAG) st->diag++;
    else st->perm++;
    st->cost += pass_cost(model, target_mask(op), rk);
}

void hs_circuit_stats(const hs_circuit *c, const hs_qcost *model, hs_qplan_stats *st)
{
    memset(st, 0, sizeof *st);
    for (int i = 0; i < c->nops; i++) count_op(&c->ops[i], model, st);
}

static hs_circuit *new_like(const hs_circuit *c)
{
    hs_circuit *out = hs_circuit_new(c->nqubits, c->nclbits);
    if (!out) return NULL;
    memcpy(out->qregs, c->qregs, sizeof c->qregs);
    memcpy(out->cregs, c->cregs, sizeof c->cregs);
    out->nqregs = c->nqregs;
    out->ncregs = c->ncregs;
    out->nparams = c->nparams;
    out->qreg_line = c->qreg_line;
    return out;
}

hs_circuit *hs_circuit_plan(const hs_circuit *c, int max_qubits, const hs_qcost *model, hs_qplan_stats *stats)
{
    if (max_qubits > HS_Q_MAX_TARGETS) max_qubits = HS_Q_MAX_TARGETS;
    hs_circuit *out = new_like(c);
    planner p = {c, model, c->nops, max_qubits, NULL, NULL, NULL, NULL, NULL, -1, NULL, NULL};
    size_t n = (size_t)c->nops + 1;
    int *best = NULL;
    p.qm = malloc(n * sizeof *p.qm);
    p.cls = malloc(n * sizeof(int));
    p.prev = malloc(n * sizeof(int));
    p.next = malloc(n * sizeof(int));
    p.alone = malloc(n * sizeof(double));
    p.idx = malloc((WINDOW + 2) * sizeof(int));
    p.idx2 = malloc((WINDOW + 2) * sizeof(int));
    best = malloc((WINDOW + 2) * sizeof(int));
    if (!out || !p.qm || !p.cls || !p.prev || !p.next || !p.alone || !p.idx || !p.idx2 || !best) goto fail;
    for (int i = 0; i < c->nops; i++) {
        const hs_qop *op = &c->ops[i];
        uint64_t m = op->cmask;
        for (int j = 0; j < op->nt; j++) m |= 1ull << op->t[j];
        p.qm[i] = m;
        p.prev[i] = i - 1;
        p.next[i] = i + 1 < c->nops ? i + 1 : -1;
        if (op->kind != HS_QOP_GATE || op->cond) p.cls[i] = OP_HARD;
        else if (op->param >= 0 || __builtin_popcountll(m) > max_qubits || max_qubits < 2) p.cls[i] = OP_SOFT;
        else p.cls[i] = OP_FUSE;
        p.alone[i] = op->kind == HS_QOP_GATE ? pass_cost(model, target_mask(op), rank_of(op->mk)) : 0;
    }
    p.head = c->nops ? 0 : -1;
    while (p.head >= 0) {
        int i = p.head;
        if (p.cls[i] != OP_FUSE) {
            if (hs_circuit_copy_op(out, &c->ops[i])) goto fail;
            unlink_op(&p, i);
            continue;
        }
        /* the gate alone (gain = cost) unless a block removes more cost than it adds */
        cand bc = {1, p.qm[i], rank_of(c->ops[i].mk), p.alone[i], p.alone[i]};
        best[0] = i;
        double beff = 1;
        /* first way: take gates in order, new qubits as they come, within k = 2..max qubits */
        for (int k = 2; k <= max_qubits; k++) {
            cand b = build(&p, k, p.idx);
            double eff = b.gain / b.cost;
            if (eff > beff * (1 + 1e-9)) { /* ties keep the smaller block */
                beff = eff;
                bc = b;
                memcpy(best, p.idx, (size_t)b.count * sizeof(int));
            }
        }
        /* second way: grow the qubit set one gate's qubits at a time, each time by the candidate
         * whose block removes the most cost per unit of its own; every stage is a block to weigh */
        uint64_t q = p.qm[i], cands[MAXC], tcands[MAXC];
        int ncand, tn;
        cand cur = build_set(&p, q, max_qubits, p.idx, cands, &ncand);
        for (;;) {
            double eff = cur.gain / cur.cost;
            if (eff > beff * (1 + 1e-9)) {
                beff = eff;
                bc = cur;
                memcpy(best, p.idx, (size_t)cur.count * sizeof(int));
            }
            if (ncand == 0) break;
            double geff = -1;
            uint64_t gq = 0;
            for (int c = 0; c < ncand; c++) {
                cand t = build_set(&p, cands[c], max_qubits, p.idx2, tcands, &tn);
                if (t.gain / t.cost > geff) geff = t.gain / t.cost, gq = cands[c];
            }
            q = gq;
            cur = build_set(&p, q, max_qubits, p.idx, cands, &ncand);
        }
        if (emit_block(&p, out, &bc, best)) goto fail;
        for (int j = 0; j < bc.count; j++) unlink_op(&p, best[j]);
    }
    if (stats) hs_circuit_stats(out, model, stats);
    goto done;
fail:
    hs_circuit_free(out);
    out = NULL;
done:
    free(p.qm);
    free(p.cls);
    free(p.prev);
    free(p.next);
    free(p.alone);
    free(p.idx);
    free(p.idx2);
    free(best);
    return out;
}

hs_circuit *hs_circuit_fuse(const hs_circuit *c, int max_qubits, double flop_weight)
{
    hs_qcost m = {1.0 / flop_weight, 0.0, NULL, 0.0};
    return hs_circuit_plan(c, max_qubits, &m, NULL);
}
