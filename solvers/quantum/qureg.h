/* hpcsim's quantum register: a state-vector simulator for C and MPI codes (QuEST-like API).
 *
 *   hs_ctx *ctx;  hs_ctx_create(&argc, &argv, "auto", 0, &ctx);
 *   hs_qureg *q;  hs_qureg_create(ctx, 20, HS_C128, 1, &q);        // |0...0>, split over the ranks
 *   hs_qureg_gate(q, "h", NULL, (int[]){0});
 *   for (int j = 1; j < 20; j++) hs_qureg_gate(q, "cx", NULL, (int[]){j - 1, j});
 *   double p[2];  hs_qureg_marginal(q, 1, (int[]){19}, p);        // p = {0.5, 0.5}
 *   hs_qureg_destroy(q);
 *
 * Qubit q is bit q of the amplitude index (qubit 0 least significant).  Amplitudes are complex128
 * (HS_C128) or complex64 (HS_C64) in the context's device memory.  A distributed register of n
 * qubits on 2^g ranks keeps 2^(n-g) amplitudes per rank; gates on the g "global" qubits are made
 * local by swapping qubits between ranks (pairwise exchanges of half the local slice, staged
 * through pinned host buffers), so the physical order of qubits may differ from the logical one;
 * every function here speaks logical qubits.  Unless said otherwise, functions are collective over
 * ctx->comm for a distributed register and local for a replicated one (every rank a full copy). */
#ifndef HS_QUREG_H
#define HS_QUREG_H

#include <stdint.h>

#include "kernels/context.h"
#include "solvers/quantum/circuit.h"
#include "solvers/quantum/pauli.h"
#include "kernels/rng/rng.h"

typedef struct hs_qureg hs_qureg;

/* Smallest number of local qubits of a distributed register (fused gates need room to move). */
#define HS_QUREG_MIN_LOCAL 6

/* Bytes one rank needs for a register of n qubits on `ranks` ranks (amplitudes plus exchange
 * buffers).  Not collective. */
double hs_qureg_bytes_needed(int nqubits, hs_dtype t, int ranks);
/* Bytes available for a register on this rank's device (free GPU memory or available RAM). */
double hs_qureg_bytes_available(hs_ctx *ctx);

/* Create |0...0> of n qubits (1..50).  distributed = 1 splits it over ctx->comm (its size must be
 * a power of two with at least HS_QUREG_MIN_LOCAL qubits per rank); 0 replicates it.  Collective. */
int hs_qureg_create(hs_ctx *ctx, int nqubits, hs_dtype t, int distributed, hs_qureg **q);
/* The same, split over ctx->comm with at least min_local (>= 1) qubits per rank: for registers that
 * only see gates and Pauli terms needing at most min_local local qubits at once (targets plus local
 * controls; X/Y factors of a Pauli term).  Collective. */
int hs_qureg_create_split(hs_ctx *ctx, int nqubits, hs_dtype t, int min_local, hs_qureg **q);
void hs_qureg_destroy(hs_qureg *q);
int hs_qureg_nqubits(const hs_qureg *q);
hs_dtype hs_qureg_dtype(const hs_qureg *q);
/* 1 when the amplitudes are split over the ranks. */
int hs_qureg_distributed(const hs_qureg *q);

/* |index>. */
int hs_qureg_init_basis(hs_qureg *q, uint64_t index);
/* Set every amplitude from the host array amps (2^n interleaved complex128, the same on all ranks). */
int hs_qureg_set_amplitudes(hs_qureg *q, const double *amps);
/* All 2^n amplitudes, logical order, into amps (host, interleaved complex128) on every rank. */
int hs_qureg_get_amplitudes(hs_qureg *q, double *amps);
/* Copy src (same size, type and distribution) into dst. */
int hs_qureg_copy(hs_qureg *dst, const hs_qureg *src);

/* Apply the 2^nt matrix m (row-major, interleaved complex128; bit j of its index is qubit t[j])
 * where every qubit in cmask has its bit in cval. */
int hs_qureg_apply_matrix(hs_qureg *q, int nt, const int *t, uint64_t cmask, uint64_t cval, const double *m);
/* A qelib1.inc gate by name: params as the gate takes them, qubits controls first (as in OpenQASM:
 * "cx" {control, target}).  An unknown name is a runtime error. */
int hs_qureg_gate(hs_qureg *q, const char *name, const double *params, const int *qubits);
/* Run a circuit.  Measurements and resets sample with rng (the same sequence on every rank) and
 * write classical bits to clbits (bit b is bit b%64 of clbits[b/64]; may be NULL when the circuit
 * has no measurement).  Conditions read clbits. */
int hs_qureg_run(hs_qureg *q, const hs_circuit *c, hs_rng *rng, uint64_t *clbits);
/* The same for one op. */
int hs_qureg_apply_op(hs_qureg *q, const hs_qop *op, hs_rng *rng, uint64_t *clbits);

/* Measure qubit `qubit`: outcome 1 when u < P(1) (u uniform in [0,1), equal on every rank); the
 * state collapses and is renormalised.  prob (may be NULL) receives the outcome's probability. */
int hs_qureg_measure(hs_qureg *q, int qubit, double u, int *outcome, double *prob);
/* Measure and flip to |0>. */
int hs_qureg_reset(hs_qureg *q, int qubit, double u);

/* sum |a|^2. */
int hs_qureg_norm2(hs_qureg *q, double *norm2);
/* All 2^n probabilities, logical order, on every rank (host). */
int hs_qureg_probabilities(hs_qureg *q, double *p);
/* Probabilities of the 2^nm outcomes of qubits qs (nm <= 12); bit j of the index is qs[j]. */
int hs_qureg_marginal(hs_qureg *q, int nm, const int *qs, double *p);
/* `shots` basis indices drawn from |a|^2 with rng (identical results on every rank, in increasing
 * order of the uniform numbers drawn, not shot order). */
int hs_qureg_sample(hs_qureg *q, int64_t shots, hs_rng *rng, uint64_t *outcomes);

/* <psi| P |psi> of the Pauli string X^xm Z^zm times i^(popcount(xm & zm)) (Y where both bits). */
int hs_qureg_expect_pauli(hs_qureg *q, uint64_t xm, uint64_t zm, double *value);
/* <psi| H |psi>. */
int hs_qureg_expect(hs_qureg *q, const hs_pauli_sum *h, double *value);
/* out = H in (replicated registers, or distributed ones whose X factors stay on local qubits). */
int hs_qureg_apply_pauli_sum(hs_qureg *out, hs_qureg *in, const hs_pauli_sum *h);
/* <a|b> (complex: out[0] + i out[1]). */
int hs_qureg_inner(hs_qureg *a, hs_qureg *b, double out[2]);

/* Bring the qubits back to the logical order (done automatically by the readouts that need it). */
int hs_qureg_canonical(hs_qureg *q);
/* Swaps between ranks done so far (each moves half of every rank's slice). */
int64_t hs_qureg_exchanges(const hs_qureg *q);

#endif
