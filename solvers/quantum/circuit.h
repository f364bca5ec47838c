/* Quantum circuits as lists of operations (gates as small matrices, measurements, resets), gate
 * tables for OpenQASM's qelib1.inc, variational rotations and gate fusion. */
#ifndef HS_QCIRCUIT_H
#define HS_QCIRCUIT_H

#include <stdint.h>

/* Limits: qubits in a register (amplitude indices are 64-bit), targets of one (fused) block. */
#define HS_Q_MAX_QUBITS 50
#define HS_Q_MAX_TARGETS 6

typedef enum { HS_QOP_GATE, HS_QOP_MEASURE, HS_QOP_RESET, HS_QOP_BARRIER } hs_qop_kind;

/* How a gate matrix is applied: any matrix; diagonal (one multiply per amplitude); a permutation
 * with phases (one non-zero per row: X, CX, SWAP, Y, ...). */
typedef enum { HS_QMAT_DENSE = 0, HS_QMAT_DIAG = 1, HS_QMAT_PERM = 2 } hs_qmat_kind;

/* Generators of variational rotations exp(-i a G / 2); G a Pauli product on the targets. */
typedef enum { HS_QGEN_NONE = 0, HS_QGEN_X, HS_QGEN_Y, HS_QGEN_Z, HS_QGEN_XX, HS_QGEN_YY, HS_QGEN_ZZ } hs_qgen;

/* One operation.  Qubit q is bit q of the amplitude index (qubit 0 least significant, as in
 * Qiskit and QuEST).  The matrix acts on the targets: bit j of its row/column index is the state of
 * t[j].  It is applied where every qubit in cmask has the value given by cval. */
typedef struct hs_qop {
    hs_qop_kind kind;
    int nt;                       /* targets (GATE: 1..HS_Q_MAX_TARGETS; MEASURE/RESET: 1) */
    int t[HS_Q_MAX_TARGETS];
    uint64_t cmask, cval;         /* controls and their required values */
    double *m;                    /* 2^nt x 2^nt complex matrix, row-major, interleaved re/im */
    hs_qmat_kind mk;
    int cbit;                     /* MEASURE: classical bit written */
    int cond;                     /* 1: only when creg bits [cond_off, cond_off+cond_len) == cond_value */
    int cond_off, cond_len;
    uint64_t cond_value;
    int param;                    /* variational: index into the parameters, -1 when fixed */
    double pscale;                /* angle a = pscale * x[param] */
    hs_qgen gen;
    int line;                     /* source line (0 when built from C) */
    char name[16];
} hs_qop;

typedef struct hs_qreg_decl {
    char name[64];
    int off, len;
} hs_qreg_decl;

typedef struct hs_circuit {
    int nqubits, nclbits, nparams;
    int nops, cap;
    hs_qop *ops;
    int nqregs, ncregs;
    hs_qreg_decl qregs[64], cregs[64];
    int qreg_line;                /* line of the first qreg (for size errors) */
} hs_circuit;

/* An empty circuit of n qubits and c classical bits (heap). */
hs_circuit *hs_circuit_new(int nqubits, int nclbits);
void hs_circuit_free(hs_circuit *c);
/* Append a gate with the given matrix (copied; NULL for variational gates, bound later).  The
 * matrix kind (dense/diagonal/permutation) is detected.  Returns the new op or NULL (no memory). */
hs_qop *hs_circuit_gate(hs_circuit *c, const char *name, int nt, const int *t, uint64_t cmask, uint64_t cval,
                        const double *m);
/* Append a measurement of qubit q into classical bit b, a reset, a barrier. */
hs_qop *hs_circuit_measure(hs_circuit *c, int q, int b);
hs_qop *hs_circuit_reset(hs_circuit *c, int q);
/* Append a variational rotation exp(-i (scale x[param]) G / 2) on nt = 1 or 2 targets. */
hs_qop *hs_circuit_rotation(hs_circuit *c, hs_qgen g, const int *t, int param, double scale);
/* Set the matrices of all variational gates from the parameters x. */
void hs_circuit_bind(hs_circuit *c, const double *x);
/* Matrix (and optionally its derivative with respect to the angle) of a rotation. */
void hs_qgen_matrix(hs_qgen g, double angle, double *m, double *dm);
/* Classify a matrix of dimension d (interleaved complex) as dense, diagonal or permutation. */
hs_qmat_kind hs_qmat_classify(int d, const double *m);

/* 1 when every measurement is terminal (no gate, reset or condition acts after a measurement of the
 * same qubit, and nothing is conditional) and every reset acts on a qubit that no earlier operation
 * touched (so it leaves |0> as it is): the state before the measurements is then the same for every
 * shot, and the shots can be drawn from it.  A reset of a qubit that a gate acted on collapses the
 * state (a new outcome per shot), so such a circuit runs one trajectory per shot. */
int hs_circuit_terminal_measurements(const hs_circuit *c);

/* Append a copy of op (its matrix, parameter binding, condition) to out; -1 when out of memory. */
int hs_circuit_copy_op(hs_circuit *out, const hs_qop *op);

/* ---- Fusion planning (fusion.c).
 * Cost model of one pass over the state, in units of the time to read and write every amplitude
 * once at the copy bandwidth: a dense block on m qubits costs max(1, 2^m / ratio) + launch, a
 * diagonal or permutation block 1 + launch.  ratio is the block size 2^m at which the complex
 * multiply-adds take as long as the memory traffic (the machine balance of the kernel in complex
 * multiply-adds per amplitude); launch is the fixed cost of one kernel (launch, matrix upload)
 * over the time of one pass. */
typedef struct hs_qcost {
    double ratio;
    double launch;
    /* NULL, or measured costs in passes that replace the ratio: dense[2 m] for a dense block on m
     * qubits whose targets are all at qubit 5 or above, dense[2 m + 1] with one below (m = 1..6),
     * and other for a diagonal or permutation block */
    const double *dense;
    double other;
} hs_qcost;

/* The stated model of a device (gpu: 0 the OpenMP kernels, 1 the CUDA ones, 2 the CUDA ones with
 * 5-qubit blocks on the bulk-copy kernel: hs_sv_model_device says which) for a slice of
 * 2^nloc amplitudes of amp_bytes each: for complex64 on the GPU a table of measured costs (unless
 * HS_QFUSION_RATIO or HS_QFUSION_RATIO_C64 asks for the ratio model), else the ratio model.
 * Constants and their sources are in fusion.c. */
hs_qcost hs_qcost_model(int gpu, int nloc, int amp_bytes);

/* The model's cost of one pass, in passes: a block on nq qubits, with a target below qubit 5 (low)
 * or not, dense or diagonal. */
double hs_qcost_pass(const hs_qcost *m, int nq, int low, int dense);

/* What a plan does: passes over the state (gate operations after fusion), blocks of each size,
 * dense/diagonal/permutation passes, and the model's total cost in passes. */
typedef struct hs_qplan_stats {
    int passes;
    int by_size[HS_Q_MAX_TARGETS + 1];
    int dense, diag, perm;
    double cost;
} hs_qplan_stats;

/* Gate fusion: a new circuit whose gates are blocks of at most max_qubits qubits (1..6).  Gates
 * commute past later gates on other qubits into an earlier block.  For each block the planner
 * weighs the blocks it finds two ways (gates taken in order within every limit k = 2..max_qubits;
 * and a qubit set grown one gate at a time towards the most useful gates) and keeps the one that
 * removes the most cost per unit of its own cost under the model (so k is chosen per block).  Blocks whose gates are all
 * diagonal stay diagonal, all diagonal or permutation stay permutations.  Measurements, resets,
 * barriers and conditional gates are kept in place and nothing moves across them; variational
 * gates are kept unfused.  stats may be NULL.  Returns NULL when out of memory. */
hs_circuit *hs_circuit_plan(const hs_circuit *c, int max_qubits, const hs_qcost *model, hs_qplan_stats *stats);

/* hs_circuit_plan with ratio = 1 / flop_weight and no launch cost (flop_weight: the cost of one
 * complex multiply-add per amplitude relative to a pass; 1/16 for the GPU, 1/4 for a CPU core). */
hs_circuit *hs_circuit_fuse(const hs_circuit *c, int max_qubits, double flop_weight);

/* Statistics of a circuit as it stands (every gate one pass). */
void hs_circuit_stats(const hs_circuit *c, const hs_qcost *model, hs_qplan_stats *stats);

/* ---- qelib1.inc gates. */
typedef struct hs_qgate_def {
    const char *name;
    int nparams;
    int nctrl;         /* leading qubit arguments that are controls */
    int ntarg;         /* qubit arguments the base matrix acts on */
    int std;           /* 1: defined by qelib1.inc (needs the include); 0: always (U, CX) */
    void (*build)(const double *p, double *m);
} hs_qgate_def;

/* The built-in gate called `name`, or NULL. */
const hs_qgate_def *hs_qgate_find(const char *name);
/* OpenQASM source of qelib1.inc gates defined by decomposition (rccx, rc3x), parsed on include. */
extern const char hs_qelib1_extra[];

#endif
