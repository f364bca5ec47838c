/* The quantum solver ([run] solver = quantum): OpenQASM circuits with sampling, marginals and
 * expectation values, VQE and QAOA; results written as JSON. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "io/json.h"
#include "io/output.h"
#include "kernels/dispatch.h"
#include "kernels/memory.h"
#include "kernels/version.h"
#include "solvers/quantum/qasm.h"
#include "solvers/quantum/qureg.h"
#include "solvers/quantum/sv.h"
#include "solvers/quantum/vqe.h"
#include "solvers/solver.h"

/* Streams of the kernel RNG under run.seed: the same numbers on every rank (measurement and
 * sampling must agree across ranks). */
enum { QRNG_SHOTS = 1, QRNG_VQE_INIT = 7 };

/* quantum.mode's choices in qmode's order; quantum.precision's with the dtype of each */
typedef enum { MODE_CIRCUIT, MODE_VQE, MODE_QAOA } qmode;
#define MODE_CHOICES "circuit|vqe|qaoa"
#define PRECISION_CHOICES "complex128|complex64"
static const hs_dtype g_precision[] = {HS_C128, HS_C64};
/* quantum.fusion: the index of the choice is the largest block; auto allows HS_Q_MAX_TARGETS */
#define FUSION_CHOICES "0|1|2|3|4|5|6|auto"
#define FUSION_AUTO 7

static const hs_param_decl g_params[] = {
    {"quantum", "mode", HS_PARAM_ENUM, "circuit", 0, 0, MODE_CHOICES, "what to run: an OpenQASM circuit, VQE for a Pauli Hamiltonian, QAOA for MaxCut"},
    {"quantum", "circuit", HS_PARAM_STRING, "", 0, 0, NULL, "OpenQASM 2.0 file (mode = circuit)"},
    {"quantum", "precision", HS_PARAM_ENUM, "complex128", 0, 0, PRECISION_CHOICES, "amplitude type"},
    {"quantum", "fusion", HS_PARAM_ENUM, "auto", 0, 0, FUSION_CHOICES, "fuse gates into blocks of up to this many qubits (0 or 1: off; auto: up to 6, the size chosen per block by the cost model)"},
    {"quantum", "distributed", HS_PARAM_BOOL, "true", 0, 0, NULL, "split the state over the MPI ranks (false: every rank holds all of it)"},
    {"quantum", "shots", HS_PARAM_INT, "1024", 0, 1e9, NULL, "measurement samples (counts in the output; 0: none)"},
    {"quantum", "amplitudes_max_qubits", HS_PARAM_INT, "12", 0, 26, NULL, "write amplitudes and probabilities for registers up to this size"},
    {"quantum", "marginal", HS_PARAM_INT_LIST, "-1", -1, 49, NULL, "qubits whose marginal probabilities are written (-1: none; at most 12)"},
    {"quantum", "observable", HS_PARAM_STRING, "", 0, 0, NULL, "Pauli-sum file whose expectation value is written (circuit mode)"},
    {"quantum", "hamiltonian", HS_PARAM_STRING, "", 0, 0, NULL, "Pauli-sum Hamiltonian file (mode = vqe)"},
    {"quantum", "ansatz_layers", HS_PARAM_INT, "2", 1, 100, NULL, "entangling layers of the hardware-efficient VQE ansatz"},
    {"quantum", "graph", HS_PARAM_STRING, "", 0, 0, NULL, "MaxCut graph file (mode = qaoa)"},
    {"quantum", "qaoa_layers", HS_PARAM_INT, "1", 1, 50, NULL, "QAOA depth p"},
    {"quantum", "optimizer", HS_PARAM_ENUM, "lbfgs", 0, 0, "lbfgs|adam" /* hs_vqe_opts.optimizer: 0 L-BFGS, 1 Adam */, "optimiser of the variational parameters"},
    {"quantum", "gradient", HS_PARAM_ENUM, "adjoint", 0, 0, "adjoint|parameter_shift" /* hs_vqe_opts.shift_gradient */, "gradient method used by the optimiser"},
    {"quantum", "max_iter", HS_PARAM_INT, "500", 1, 1e7, NULL, "optimiser iterations"},
    {"quantum", "learning_rate", HS_PARAM_REAL, "0.05", 1e-12, 10, NULL, "Adam step size"},
    {"quantum", "gtol", HS_PARAM_REAL, "1e-10", 0, 1, NULL, "stop when the largest gradient component is below this"},
    {"quantum", "init_scale", HS_PARAM_REAL, "0.5", 0, 10, NULL, "initial parameters uniform in [-init_scale, init_scale] (seeded by run.seed)"},
    {"quantum", "check_gradient", HS_PARAM_BOOL, "true", 0, 0, NULL, "compare adjoint and parameter-shift gradients at the start and report"},
};

typedef struct {
    hs_ctx *ctx;
    const hs_params *p;
    qmode mode;
    hs_dtype t;
    int fusion, dist, amp_max, nmarg, marg[HS_SV_MAX_MARGINAL];
    int64_t shots;
    uint64_t seed;
    const char *circuit_file, *observable_file, *ham_file, *graph_file;
    char out_path[8200];  /* output.path (at most 8188 characters, solvers/driver.c) and .json */
    hs_circuit *c, *run_c;      /* parsed, and fused (or the same) */
    hs_pauli_sum *obs;
    hs_qureg *q;
    int done;
    double seconds;
    /* circuit results */
    double *amps;               /* 2^n interleaved when n <= amp_max */
    double marg_p[1 << HS_SV_MAX_MARGINAL];
    double expect, norm2;
    uint64_t *outcomes;         /* classical register values per shot (sorted) */
    int terminal;
    int64_t exchanges;
    hs_qplan_stats plan;        /* passes over the state after fusion */
    double t_process, t_parse, t_plan, t_register; /* start-up: to the solver, parsing, planning, |0> */
    /* variational results */
    int nv, ne, *edges;
    double *w;
    hs_vqe *vqe;
    hs_circuit *ansatz;
    double *x, energy, exact, grad_diff, *history, gnorm;
    int iterations, converged;
    const char *reason;         /* why the optimiser stopped (hs_vqe_minimize's codes) */
    int64_t evaluations;
    double best_cut;
    uint64_t best_string;
    int check_only;             /* inputs read and checked, nothing built (hpcsim check) */
} qstate;

static int declare(void) {
    static const char *const inputs[] = {"quantum.circuit", "quantum.observable", "quantum.hamiltonian", "quantum.graph", NULL}; /* no output may replace them */
    HS_CHECK(hs_params_declare_inputs(inputs));
    return hs_params_declare(g_params, (int)(sizeof g_params / sizeof g_params[0]));
}

/* quantum.distributed (the default) cannot split the state here: every rank holds all of it.  Said
 * once, by check as by run, since the run's memory and speed per rank are then one rank's (the
 * result file's "distributed": false alone left a user of 3 ranks guessing). */
static void note_replicated(qstate *s, int nq, int min_local)
{
    s->dist = 0;
    if (s->ctx->rank == 0)
        fprintf(stderr, "hpcsim: note: quantum: the state of %d qubits is held whole on each of the %d ranks: quantum.distributed "
                        "splits it over a power-of-two rank count that leaves at least %d qubits a rank\n", nq, s->ctx->size, min_local);
}

static int check_memory(qstate *s, int nq, int registers, const char *src, int line)
{
    int ranks = s->dist ? s->ctx->size : 1;
    double need = registers * hs_qureg_bytes_needed(nq, s->t, ranks), avail = hs_qureg_bytes_available(s->ctx);
    if (s->ctx->device == HS_DEVICE_CPU && s->ctx->local_size > 1) avail /= s->ctx->local_size;
    HS_CHECK(hs_allreduce_min(s->ctx->comm, &avail, 1));
    if (need > avail) {
        double gib = 1024.0 * 1024.0 * 1024.0;
        /* the variational modes hold three registers (state, adjoint, derivative): say so, the figure is
         * their total */
        char what[96];
        if (registers > 1) snprintf(what, sizeof what, "%d registers of %d qubits (the state, its adjoint and a derivative) need", registers, nq);
        else snprintf(what, sizeof what, "a register of %d qubits needs", nq);
        return hs_input_error(src, line, NULL, "%s %.4g GiB per rank (%s, %d rank%s) but only %.4g GiB is available on %s", what,
                              need / gib, s->t == HS_C128 ? "complex128" : "complex64", ranks, ranks > 1 ? "s" : "", avail / gib,
                              HS_ON_GPU(s->ctx) ? "the GPU" : "this node");
    }
    return HS_OK;
}

/* quantum.circuit parsed: a file that cannot be read is an input error naming the key; one inside
 * the file names the file, line and column. */
static int parse_circuit(const qstate *s, hs_circuit **c)
{
    HS_CHECK(hs_params_check_input_file(s->p, "quantum.circuit", s->circuit_file, "OpenQASM file"));
    return hs_qasm_parse_file(s->circuit_file, c);
}

static int create_circuit(qstate *s)
{
    if (!*s->circuit_file) return hs_params_error(s->p, "quantum.circuit", "mode = circuit needs an OpenQASM file");
    double t0 = hs_wtime();
    s->t_process = hs_process_age();
    HS_CHECK(parse_circuit(s, &s->c));
    s->t_parse = hs_wtime() - t0;
    int n = s->c->nqubits;
    for (int j = 0; j < s->nmarg; j++)
        if (s->marg[j] >= n) return hs_params_error(s->p, "quantum.marginal", "qubit %d is outside the %d-qubit register", s->marg[j], n);
    if (s->c->nclbits > 64 && s->shots > 0)
        return hs_params_error(s->p, "quantum.shots", "counts support up to 64 classical bits; the circuit has %d", s->c->nclbits);
    if (*s->observable_file) {
        HS_CHECK(hs_params_check_input_file(s->p, "quantum.observable", s->observable_file, "Pauli-sum file"));
        HS_CHECK(hs_pauli_sum_read(s->observable_file, &s->obs));
        /* the width the terms are written for, not only the qubits they act on: "0.5 I7" or
         * "0.5 IIIIIZ" on 3 qubits is a mistake (Qiskit refuses it too), and was accepted */
        if (s->obs->width > n) {
            char where[PATH_MAX + 64];
            snprintf(where, sizeof where, "%s:%d:%d", s->observable_file, s->obs->width_line, s->obs->width_col);
            return hs_input_error(where, 0, NULL, "the term names qubit %d but the circuit has %d qubit%s (quantum.observable)",
                                  s->obs->width - 1, n, n > 1 ? "s" : "");
        }
    }
    if (s->dist && s->ctx->size > 1) {
        int g = 0;
        while ((1 << g) < s->ctx->size) g++;
        /* too small to split, or an odd rank count: every rank simulates the whole register */
        if ((1 << g) != s->ctx->size || n - g < HS_QUREG_MIN_LOCAL) note_replicated(s, n, HS_QUREG_MIN_LOCAL);
    }
    HS_CHECK(check_memory(s, n, 1, s->circuit_file, s->c->qreg_line));
    if (s->check_only) return HS_OK;
    s->terminal = hs_circuit_terminal_measurements(s->c);
    s->run_c = s->c;
    int nloc = n;
    if (s->dist)
        while ((1 << (n - nloc)) < s->ctx->size) nloc--;
    hs_qcost model = hs_qcost_model(hs_sv_model_device(s->ctx), nloc, (int)hs_dtype_size(s->t));
    t0 = hs_wtime();
    if (s->fusion >= 2) {
        s->run_c = hs_circuit_plan(s->c, s->fusion, &model, &s->plan);
        if (!s->run_c) return HS_FAIL(HS_ERR_RUNTIME, "out of memory fusing the circuit");
    } else {
        hs_circuit_stats(s->c, &model, &s->plan);
    }
    double t1 = hs_wtime();
    HS_CHECK(hs_qureg_create(s->ctx, n, s->t, s->dist, &s->q));
    HS_CHECK(hs_ctx_sync(s->ctx));
    s->t_plan = t1 - t0;
    s->t_register = hs_wtime() - t1;
    return HS_OK;
}

/* An OpenQASM state preparation (e.g. the Hartree-Fock determinant) run before the ansatz. */
static int prepend_reference(qstate *s)
{
    hs_circuit *ref, *all;
    HS_CHECK(parse_circuit(s, &ref));
    int rc = HS_OK;
    if (ref->nqubits > s->ansatz->nqubits)
        rc = hs_input_error(s->circuit_file, ref->qreg_line, NULL, "the reference circuit has %d qubits, the ansatz %d",
                            ref->nqubits, s->ansatz->nqubits);
    for (int i = 0; rc == HS_OK && i < ref->nops; i++)
        if (ref->ops[i].kind == HS_QOP_MEASURE || ref->ops[i].kind == HS_QOP_RESET || ref->ops[i].cond)
            rc = hs_input_error(s->circuit_file, ref->ops[i].line, NULL,
                                "a reference-state circuit may contain gates only (no measure, reset or if)");
    all = rc == HS_OK ? hs_circuit_new(s->ansatz->nqubits, 0) : NULL;
    for (int pass = 0; all && pass < 2; pass++) {
        const hs_circuit *from = pass ? s->ansatz : ref;
        for (int i = 0; all && i < from->nops; i++) {
            const hs_qop *op = &from->ops[i];
            if (op->kind != HS_QOP_GATE) continue;
            hs_qop *n = op->param >= 0 ? hs_circuit_rotation(all, op->gen, op->t, op->param, op->pscale)
                                       : hs_circuit_gate(all, op->name, op->nt, op->t, op->cmask, op->cval, op->m);
            if (!n) {
                hs_circuit_free(all);
                all = NULL;
            }
        }
    }
    if (rc == HS_OK && !all) rc = HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    hs_circuit_free(ref);
    if (rc != HS_OK) return rc;
    all->nparams = s->ansatz->nparams;
    hs_circuit_free(s->ansatz);
    s->ansatz = all;
    return HS_OK;
}

static int create_variational(qstate *s)
{
    const hs_pauli_sum *h;
    int n;
    if (s->mode == MODE_VQE) {
        if (!*s->ham_file) return hs_params_error(s->p, "quantum.hamiltonian", "mode = vqe needs a Pauli-sum file");
        HS_CHECK(hs_params_check_input_file(s->p, "quantum.hamiltonian", s->ham_file, "Pauli-sum file"));
        HS_CHECK(hs_pauli_sum_read(s->ham_file, &s->obs));
        n = s->obs->nqubits;
        if (n < 1) /* a sum of identity terms: nothing to vary (the register would have no qubit) */
            return hs_params_error(s->p, "quantum.hamiltonian", "'%s' acts on no qubit (every term is the identity): VQE needs one at least",
                                   s->ham_file);
        s->ansatz = hs_ansatz_hardware_efficient(n, (int)hs_params_int(s->p, "quantum.ansatz_layers"));
    } else {
        if (!*s->graph_file) return hs_params_error(s->p, "quantum.graph", "mode = qaoa needs a graph file");
        HS_CHECK(hs_params_check_input_file(s->p, "quantum.graph", s->graph_file, "graph file"));
        HS_CHECK(hs_maxcut_read(s->graph_file, &s->nv, &s->ne, &s->edges, &s->w));
        HS_CHECK(hs_maxcut_hamiltonian(s->ne, s->edges, s->w, &s->obs));
        n = s->nv;
        s->ansatz = hs_ansatz_qaoa(n, (int)hs_params_int(s->p, "quantum.qaoa_layers"), s->ne, s->edges, s->w);
    }
    h = s->obs;
    if (!s->ansatz) return HS_FAIL(HS_ERR_RUNTIME, "out of memory building the ansatz");
    if (*s->circuit_file) HS_CHECK(prepend_reference(s));
    if (s->dist && s->ctx->size > 1) { /* split only where every rank keeps room for the widest gate */
        int g = 0;
        while ((1 << g) < s->ctx->size) g++;
        if ((1 << g) != s->ctx->size || n - g < hs_vqe_local_qubits(s->ansatz, h)) note_replicated(s, n, hs_vqe_local_qubits(s->ansatz, h));
    }
    HS_CHECK(check_memory(s, n, 3, s->mode == MODE_VQE ? s->ham_file : s->graph_file, 0));
    if (s->check_only) return HS_OK;
    HS_CHECK(hs_vqe_create(s->ctx, s->ansatz, h, s->t, s->dist, &s->vqe));
    s->x = calloc((size_t)s->ansatz->nparams + 1, sizeof(double));
    if (!s->x) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    hs_rng r;
    hs_rng_seed(&r, s->seed, QRNG_VQE_INIT);
    double sc = hs_params_real(s->p, "quantum.init_scale");
    for (int k = 0; k < s->ansatz->nparams; k++) s->x[k] = sc * (2 * hs_rng_uniform(&r) - 1);
    return HS_OK;
}

static void qstate_free(qstate *s)
{
    if (s->run_c != s->c) hs_circuit_free(s->run_c);
    hs_circuit_free(s->c);
    hs_pauli_sum_free(s->obs);
    hs_qureg_destroy(s->q);
    hs_vqe_destroy(s->vqe);
    hs_circuit_free(s->ansatz);
    free(s->amps);
    free(s->outcomes);
    free(s->edges);
    free(s->w);
    free(s->x);
    free(s->history);
    free(s);
}

/* Read every input (circuit, observable, Hamiltonian, graph) and check the memory; with
 * check_only, stop there, before any register or optimiser is allocated (`hpcsim check`). */
static int build(hs_ctx *ctx, const hs_params *p, int check_only, void **state)
{
    qstate *s = calloc(1, sizeof *s);
    if (!s) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    s->check_only = check_only;
    s->ctx = ctx;
    s->p = p;
    s->mode = (qmode)hs_params_enum(p, "quantum.mode");
    s->t = g_precision[hs_params_enum(p, "quantum.precision")];
    s->fusion = hs_params_enum(p, "quantum.fusion");
    if (s->fusion == FUSION_AUTO) s->fusion = HS_Q_MAX_TARGETS;
    s->dist = hs_params_bool(p, "quantum.distributed");
    s->shots = hs_params_int(p, "quantum.shots");
    s->amp_max = (int)hs_params_int(p, "quantum.amplitudes_max_qubits");
    s->seed = (uint64_t)hs_params_int(p, "run.seed");
    s->circuit_file = hs_params_input_path(p, "quantum.circuit");
    s->observable_file = hs_params_input_path(p, "quantum.observable");
    s->ham_file = hs_params_input_path(p, "quantum.hamiltonian");
    s->graph_file = hs_params_input_path(p, "quantum.graph");
    const int path_cut = snprintf(s->out_path, sizeof s->out_path, "%s.json", hs_params_string(p, "output.path")) >=
                         (int)sizeof s->out_path;
    /* the results are a JSON document, not gridded records: a NetCDF or HDF5 format asked for was
     * ignored without a word (the JSON came instead); none writes nothing */
    const int out_format = hs_params_enum(p, "output.format");
    int rc = HS_OK;
    if (out_format == HS_OUTPUT_NETCDF || out_format == HS_OUTPUT_HDF5)
        rc = hs_params_error(p, "output.format", "the quantum solver writes its results as JSON (%s); the formats are for "
                             "gridded output (auto or none: no result file)", s->out_path);
    /* a path cut at the buffer wrote another file (a 1100-byte buffer cut longer paths); a file
     * name too long for the file system failed at the write, exit 1 (written as PATH.json.partial) */
    if (rc == HS_OK && out_format != HS_OUTPUT_NONE && path_cut)
        rc = hs_params_error(p, "output.path", "is longer than %zu characters", sizeof s->out_path - sizeof ".json");
    if (rc == HS_OK && out_format != HS_OUTPUT_NONE)
        rc = hs_params_check_name_length(p, "output.path", s->out_path, strlen(".partial"), "result file");
    if (out_format == HS_OUTPUT_NONE) s->out_path[0] = '\0';
    int64_t m[64];
    int nm = hs_params_int_list(p, "quantum.marginal", m, 64);
    if (rc == HS_OK && !(nm == 1 && m[0] == -1)) {
        if (nm > HS_SV_MAX_MARGINAL) rc = hs_params_error(p, "quantum.marginal", "at most %d qubits", HS_SV_MAX_MARGINAL);
        for (int j = 0; j < nm && rc == HS_OK; j++) {
            if (m[j] < 0) rc = hs_params_error(p, "quantum.marginal", "-1 (none) cannot be mixed with qubit numbers");
            for (int k = 0; k < j && rc == HS_OK; k++)
                if (m[k] == m[j]) rc = hs_params_error(p, "quantum.marginal", "qubit %lld is listed twice", (long long)m[j]);
            s->marg[j] = (int)m[j];
        }
        s->nmarg = nm;
    }
    /* a file key that the mode does not read was ignored without a word: `hamiltonian = h.pauli` in
     * circuit mode (meaning `observable`) ran and wrote no expectation value, and a misspelt path
     * there was never opened */
    static const struct {
        const char *key, *modes, *instead;
    } used_by[] = {
        {"quantum.observable", "circuit", "the energy of quantum.hamiltonian or the cut of quantum.graph is what it reports"},
        {"quantum.hamiltonian", "vqe", "mode = circuit takes quantum.observable, mode = qaoa quantum.graph"},
        {"quantum.graph", "qaoa", "mode = circuit takes quantum.observable, mode = vqe quantum.hamiltonian"},
    };
    static const char *const mode_names[] = {"circuit", "vqe", "qaoa"};
    for (size_t k = 0; rc == HS_OK && k < sizeof used_by / sizeof used_by[0]; k++)
        if (*hs_params_string(p, used_by[k].key) && strcmp(used_by[k].modes, mode_names[s->mode]) &&
            hs_params_set_against(p, used_by[k].key, "quantum.mode"))
            rc = hs_params_error(p, used_by[k].key, "is read by mode = %s only, and this is mode = %s (%s)", used_by[k].modes,
                                 mode_names[s->mode], used_by[k].instead);
    if (rc == HS_OK) rc = s->mode == MODE_CIRCUIT ? create_circuit(s) : create_variational(s);
    if (rc != HS_OK || check_only) {
        qstate_free(s);
        return rc;
    }
    *state = s;
    return HS_OK;
}

static int create(hs_ctx *ctx, const hs_params *p, void **state) { return build(ctx, p, 0, state); }

static int check(hs_ctx *ctx, const hs_params *p)
{
    void *unused = NULL;
    return build(ctx, p, 1, &unused);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Classical register value of a basis state under the circuit's (terminal) measurements. */
static uint64_t clbits_of(const hs_circuit *c, uint64_t basis)
{
    uint64_t v = 0;
    for (int i = 0; i < c->nops; i++) {
        const hs_qop *op = &c->ops[i];
        if (op->kind == HS_QOP_MEASURE && op->cbit < 64) {
            uint64_t bit = 1ull << op->cbit;
            v = (basis >> op->t[0] & 1) ? v | bit : v & ~bit;
        }
    }
    return v;
}

static int run_circuit(qstate *s)
{
    int n = s->c->nqubits;
    hs_rng rng;
    hs_rng_seed(&rng, s->seed, QRNG_SHOTS);
    if (s->shots > 0) {
        s->outcomes = calloc((size_t)s->shots, sizeof *s->outcomes);
        if (!s->outcomes) return HS_FAIL(HS_ERR_RUNTIME, "out of memory for %lld shots", (long long)s->shots);
    }
    double t0 = hs_wtime();
    if (s->terminal) {
        /* everything but the (terminal) measurements once, then every shot from the final state:
         * gates, and resets of fresh qubits (no-ops that the terminal test allows; applied all the
         * same, so that a reset is never skipped) */
        for (int i = 0; i < s->run_c->nops; i++)
            if (s->run_c->ops[i].kind != HS_QOP_MEASURE) HS_CHECK(hs_qureg_apply_op(s->q, &s->run_c->ops[i], &rng, NULL));
        HS_CHECK(hs_ctx_sync(s->ctx));
        s->seconds = hs_wtime() - t0;
        if (s->shots > 0) {
            HS_CHECK(hs_qureg_sample(s->q, s->shots, &rng, s->outcomes));
            for (int64_t k = 0; k < s->shots; k++) s->outcomes[k] = clbits_of(s->c, s->outcomes[k]);
        }
    } else {
        /* mid-circuit measurement, reset or conditions: one trajectory per shot */
        int64_t runs = s->shots > 0 ? s->shots : 1;
        for (int64_t k = 0; k < runs; k++) {
            uint64_t cl[64] = {0};
            HS_CHECK(hs_qureg_init_basis(s->q, 0));
            HS_CHECK(hs_qureg_run(s->q, s->run_c, &rng, cl));
            if (s->shots > 0) s->outcomes[k] = cl[0];
        }
        HS_CHECK(hs_ctx_sync(s->ctx));
        s->seconds = hs_wtime() - t0;
    }
    if (s->shots > 0) qsort(s->outcomes, (size_t)s->shots, sizeof *s->outcomes, cmp_u64);
    HS_CHECK(hs_qureg_norm2(s->q, &s->norm2));
    if (s->nmarg) HS_CHECK(hs_qureg_marginal(s->q, s->nmarg, s->marg, s->marg_p));
    if (s->obs) HS_CHECK(hs_qureg_expect(s->q, s->obs, &s->expect));
    if (n <= s->amp_max) {
        s->amps = malloc(sizeof(double) * 2 << n);
        if (!s->amps) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
        HS_CHECK(hs_qureg_get_amplitudes(s->q, s->amps));
    }
    s->exchanges = hs_qureg_exchanges(s->q);
    return HS_OK;
}

static int run_variational(qstate *s)
{
    int np = s->ansatz->nparams, n = s->ansatz->nqubits;
    double t0 = hs_wtime();
    if (hs_params_bool(s->p, "quantum.check_gradient")) {
        double *ga = calloc((size_t)np, sizeof *ga), *gs = calloc((size_t)np, sizeof *gs), e;
        if (!ga || !gs) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
        int rc = hs_vqe_gradient_adjoint(s->vqe, s->x, &e, ga);
        if (rc == HS_OK) rc = hs_vqe_gradient_shift(s->vqe, s->x, gs);
        s->grad_diff = 0;
        for (int k = 0; k < np; k++) s->grad_diff = fmax(s->grad_diff, fabs(ga[k] - gs[k]));
        free(ga);
        free(gs);
        HS_CHECK(rc);
    }
    hs_vqe_opts o = {0};
    o.optimizer = hs_params_enum(s->p, "quantum.optimizer");
    o.max_iter = (int)hs_params_int(s->p, "quantum.max_iter");
    o.gtol = hs_params_real(s->p, "quantum.gtol");
    o.ftol = 0;
    o.lr = hs_params_real(s->p, "quantum.learning_rate");
    o.shift_gradient = hs_params_enum(s->p, "quantum.gradient");
    o.interrupted = hs_driver_interrupted;
    hs_vqe_result r;
    HS_CHECK(hs_vqe_minimize(s->vqe, s->x, &o, &r));
    s->energy = r.energy;
    s->iterations = r.iterations;
    s->evaluations = r.evaluations;
    s->converged = r.converged;
    s->reason = r.reason;
    s->gnorm = r.gnorm;
    s->history = r.history;
    s->exact = NAN;
    if (n <= 10) HS_CHECK(hs_pauli_ground_energy(s->obs, n, &s->exact));
    if (s->mode == MODE_QAOA) {
        s->best_cut = 0; /* brute force, for the approximation ratio */
        for (uint64_t z = 0; n <= 24 && z < (1ull << n); z++) {
            double cut = 0;
            for (int e = 0; e < s->ne; e++) cut += ((z >> s->edges[2 * e]) ^ (z >> s->edges[2 * e + 1])) & 1 ? s->w[e] : 0;
            if (cut > s->best_cut) s->best_cut = cut;
        }
        hs_qureg *psi;
        HS_CHECK(hs_vqe_state(s->vqe, s->x, &psi));
        if (n <= 26) {
            double *pr = malloc(sizeof(double) << n);
            if (!pr) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
            int rc = hs_qureg_probabilities(psi, pr);
            /* the first string within 1e-9 of the largest probability: a cut and its complement are
             * equally likely, and round-off chose between them by the rank count (001110 on 4 ranks,
             * 010101 on 1 and 2) */
            double pmax = 0;
            for (uint64_t z = 0; rc == HS_OK && z < (1ull << n); z++) pmax = fmax(pmax, pr[z]);
            uint64_t best = 0;
            while (rc == HS_OK && best + 1 < (1ull << n) && pr[best] < pmax * (1 - 1e-9)) best++;
            s->best_string = best;
            free(pr);
            HS_CHECK(rc);
        }
    }
    s->seconds = hs_wtime() - t0;
    return HS_OK;
}

static int advance(void *state, double until, int64_t max_steps, int64_t *steps_taken)
{
    qstate *s = state;
    *steps_taken = 0;
    if (s->done) return HS_OK;
    HS_CHECK(s->mode == MODE_CIRCUIT ? run_circuit(s) : run_variational(s));
    s->done = 1;
    *steps_taken = 1;
    return HS_OK;
}

static void progress(void *state, double *time, int64_t *step, double *t_end, double *work)
{
    qstate *s = state;
    *time = s->done ? 1.0 : 0.0;
    *step = s->done;
    *t_end = 0; /* one piece of work, not a time loop: no progress line */
    int n = s->c ? s->c->nqubits : s->ansatz ? s->ansatz->nqubits : 0;
    *work = ldexp(1.0, n) * (s->run_c ? s->run_c->nops : 1);
}

/* Qiskit's counts keys: classical registers last-declared first, each most significant bit first,
 * separated by spaces. */
static void counts_key(const hs_circuit *c, uint64_t v, char *key)
{
    char *p = key;
    for (int r = c->ncregs - 1; r >= 0; r--) {
        for (int b = c->cregs[r].len - 1; b >= 0; b--) {
            int bit = c->cregs[r].off + b;
            *p++ = bit < 64 && (v >> bit & 1) ? '1' : '0';
        }
        if (r > 0) *p++ = ' ';
    }
    *p = '\0';
}

static void write_common(qstate *s, hs_json *j)
{
    /* what the NetCDF/HDF5 outputs carry as global attributes (source, hpcsim_parameters): without
     * them a result file did not say which version made it, nor with which fusion, shots, files */
    char source[160];
    snprintf(source, sizeof source, "hpcsim %s (git %s)", hs_version(), hs_git_hash());
    hs_json_key(j, "source");
    hs_json_string(j, source);
    char *ini = hs_params_to_ini(s->p);
    hs_json_key(j, "hpcsim_parameters");
    if (ini) hs_json_string(j, ini);
    else hs_json_null(j);
    free(ini);
    hs_json_key(j, "solver");
    hs_json_string(j, "quantum");
    hs_json_key(j, "mode");
    hs_json_string(j, s->mode == MODE_CIRCUIT ? "circuit" : s->mode == MODE_VQE ? "vqe" : "qaoa");
    hs_json_key(j, "precision");
    hs_json_string(j, s->t == HS_C128 ? "complex128" : "complex64");
    hs_json_key(j, "device");
    hs_json_string(j, hs_device_name(s->ctx->device));
    hs_json_key(j, "ranks");
    hs_json_int(j, s->ctx->size);
    hs_json_key(j, "seed");
    hs_json_int(j, (int64_t)s->seed);
    hs_json_key(j, "seconds");
    hs_json_double(j, s->seconds);
}

static void write_circuit(qstate *s, hs_json *j)
{
    int n = s->c->nqubits;
    hs_json_key(j, "circuit");
    hs_json_string(j, s->circuit_file);
    hs_json_key(j, "qubits");
    hs_json_int(j, n);
    hs_json_key(j, "clbits");
    hs_json_int(j, s->c->nclbits);
    hs_json_key(j, "distributed");
    hs_json_bool(j, hs_qureg_distributed(s->q));
    hs_json_key(j, "operations");
    hs_json_int(j, s->c->nops);
    hs_json_key(j, "operations_after_fusion");
    hs_json_int(j, s->run_c->nops);
    hs_json_key(j, "passes");
    hs_json_int(j, s->plan.passes);
    hs_json_key(j, "rank_exchanges");
    hs_json_int(j, s->exchanges);
    hs_json_key(j, "norm");
    hs_json_double(j, sqrt(s->norm2));
    if (s->shots > 0) {
        hs_json_key(j, "shots");
        hs_json_int(j, s->shots);
        hs_json_key(j, "counts");
        hs_json_begin_object(j);
        char key[4200];
        for (int64_t k = 0; k < s->shots;) {
            int64_t e = k;
            while (e < s->shots && s->outcomes[e] == s->outcomes[k]) e++;
            counts_key(s->c, s->outcomes[k], key);
            hs_json_key(j, key);
            hs_json_int(j, e - k);
            k = e;
        }
        hs_json_end_object(j);
    }
    if (s->nmarg) {
        hs_json_key(j, "marginal");
        hs_json_begin_object(j);
        hs_json_key(j, "qubits");
        hs_json_begin_array(j);
        for (int k = 0; k < s->nmarg; k++) hs_json_int(j, s->marg[k]);
        hs_json_end_array(j);
        hs_json_key(j, "probabilities");
        hs_json_begin_array(j);
        for (int k = 0; k < (1 << s->nmarg); k++) hs_json_double(j, s->marg_p[k]);
        hs_json_end_array(j);
        hs_json_end_object(j);
    }
    if (s->obs) {
        hs_json_key(j, "expectation");
        hs_json_begin_object(j);
        hs_json_key(j, "observable");
        hs_json_string(j, s->observable_file);
        hs_json_key(j, "value");
        hs_json_double(j, s->expect);
        hs_json_end_object(j);
    }
    if (s->amps) {
        hs_json_key(j, "amplitudes");
        hs_json_begin_array(j);
        for (int64_t i = 0; i < ((int64_t)1 << n); i++) {
            hs_json_begin_array(j);
            hs_json_double(j, s->amps[2 * i]);
            hs_json_double(j, s->amps[2 * i + 1]);
            hs_json_end_array(j);
        }
        hs_json_end_array(j);
        hs_json_key(j, "probabilities");
        hs_json_begin_array(j);
        for (int64_t i = 0; i < ((int64_t)1 << n); i++)
            hs_json_double(j, s->amps[2 * i] * s->amps[2 * i] + s->amps[2 * i + 1] * s->amps[2 * i + 1]);
        hs_json_end_array(j);
    }
}

static void write_variational(qstate *s, hs_json *j)
{
    hs_json_key(j, s->mode == MODE_VQE ? "hamiltonian" : "graph");
    hs_json_string(j, s->mode == MODE_VQE ? s->ham_file : s->graph_file);
    hs_json_key(j, "qubits");
    hs_json_int(j, s->ansatz->nqubits);
    hs_json_key(j, "distributed");
    hs_json_bool(j, hs_vqe_distributed(s->vqe));
    hs_json_key(j, "energy");
    hs_json_double(j, s->energy);
    hs_json_key(j, "exact_ground_energy");
    hs_json_double(j, s->exact);
    hs_json_key(j, "error");
    hs_json_double(j, s->energy - s->exact);
    hs_json_key(j, "gradient_check_max_difference");
    hs_json_double(j, hs_params_bool(s->p, "quantum.check_gradient") ? s->grad_diff : NAN);
    hs_json_key(j, "iterations");
    hs_json_int(j, s->iterations);
    hs_json_key(j, "evaluations");
    hs_json_int(j, s->evaluations);
    hs_json_key(j, "converged");
    hs_json_bool(j, s->converged);
    hs_json_key(j, "stopping_reason");
    hs_json_string(j, s->reason ? s->reason : "unknown");
    hs_json_key(j, "gradient_max_abs");
    hs_json_double(j, s->gnorm);
    hs_json_key(j, "parameters");
    hs_json_begin_array(j);
    for (int k = 0; k < s->ansatz->nparams; k++) hs_json_double(j, s->x[k]);
    hs_json_end_array(j);
    hs_json_key(j, "history");
    hs_json_begin_array(j);
    for (int k = 0; k < s->iterations; k++) hs_json_double(j, s->history ? s->history[k] : NAN);
    hs_json_end_array(j);
    if (s->mode == MODE_QAOA) {
        char bits[64];
        int n = s->ansatz->nqubits;
        for (int b = 0; b < n; b++) bits[b] = (s->best_string >> (n - 1 - b)) & 1 ? '1' : '0';
        bits[n] = '\0';
        hs_json_key(j, "expected_cut");
        hs_json_double(j, -s->energy);
        hs_json_key(j, "max_cut");
        hs_json_double(j, s->best_cut);
        hs_json_key(j, "approximation_ratio");
        hs_json_double(j, s->best_cut > 0 ? -s->energy / s->best_cut : NAN);
        hs_json_key(j, "most_likely_cut");
        hs_json_string(j, bits);
    }
}

static void print_summary(qstate *s)
{
    if (s->mode == MODE_CIRCUIT) {
        printf("quantum: %d qubits, %d operations (%d after fusion), %s %s on %d rank%s, %.3g s\n", s->c->nqubits,
               s->c->nops, s->run_c->nops, s->t == HS_C128 ? "complex128" : "complex64",
               hs_device_name(s->ctx->device), s->ctx->size, s->ctx->size > 1 ? "s" : "", s->seconds);
        printf("quantum: %d passes over the state (%d dense, %d diagonal, %d permutation; model cost %.4g passes)\n",
               s->plan.passes, s->plan.dense, s->plan.diag, s->plan.perm, s->plan.cost);
        printf("quantum: start-up %.3g s before the first gate: %s%.3g s to the solver (of which MPI_Init %.3g s, "
               "device %.3g s), parse %.3g s, plan %.3g s, register |0> %.3g s\n",
               (s->t_process > 0 ? s->t_process : 0) + s->t_parse + s->t_plan + s->t_register,
               s->t_process < 0 ? "(unknown) " : "", s->t_process > 0 ? s->t_process : 0, s->ctx->t_mpi_init,
               s->ctx->t_device_init, s->t_parse, s->t_plan, s->t_register);
        if (s->obs) printf("quantum: <%s> = %.12g\n", s->observable_file, s->expect);
    } else {
        printf("quantum: %s energy %.12f (exact %.12f, error %.3g) after %d iterations, %lld evaluations\n",
               s->mode == MODE_VQE ? "VQE" : "QAOA", s->energy, s->exact, s->energy - s->exact, s->iterations,
               (long long)s->evaluations);
        printf("quantum: %s (stopped on %s; largest gradient component %.3g)\n",
               s->converged ? "converged" : "not converged", s->reason ? s->reason : "unknown", s->gnorm);
        if (hs_params_bool(s->p, "quantum.check_gradient"))
            printf("quantum: adjoint vs parameter-shift gradient, largest difference %.3g\n", s->grad_diff);
        if (s->mode == MODE_QAOA)
            printf("quantum: expected cut %.6f of max %.6f (ratio %.4f)\n", -s->energy, s->best_cut, -s->energy / s->best_cut);
    }
    if (s->out_path[0]) printf("quantum: wrote %s\n", s->out_path);
    else printf("quantum: no result file (output.format = none)\n");
}

static int finish(void *state)
{
    qstate *s = state;
    if (s->ctx->rank != 0 || !s->out_path[0]) return HS_OK;
    hs_json j;
    HS_CHECK(hs_json_open(&j, s->out_path, 1));
    hs_json_begin_object(&j);
    write_common(s, &j);
    if (s->mode == MODE_CIRCUIT) write_circuit(s, &j);
    else write_variational(s, &j);
    hs_json_end_object(&j);
    HS_CHECK(hs_json_close(&j));
    print_summary(s);
    fflush(stdout);
    return HS_OK;
}

static void destroy(void *state)
{
    if (state) qstate_free(state);
}

const hs_solver_ops hs_quantum_solver = {
    .name = "quantum",
    .summary = "state-vector quantum circuits (OpenQASM 2.0), sampling, expectations, VQE and QAOA",
    .declare = declare,
    .check = check,
    .create = create,
    .advance = advance,
    .progress = progress,
    .finish = finish,
    .destroy = destroy,
};
