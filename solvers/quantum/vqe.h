/* Variational algorithms on the state vector: energies <H>, adjoint and parameter-shift gradients,
 * VQE (hardware-efficient ansatz) and QAOA (MaxCut) driven by Adam or L-BFGS (kernels/nn/optim.h). */
#ifndef HS_QVQE_H
#define HS_QVQE_H

#include "solvers/quantum/circuit.h"
#include "solvers/quantum/pauli.h"
#include "solvers/quantum/qureg.h"

/* Hardware-efficient ansatz on n qubits: `layers` times [RY, RZ on every qubit; CX chain
 * 0->1->...->n-1], then a last RY, RZ layer: 2 n (layers + 1) parameters. */
hs_circuit *hs_ansatz_hardware_efficient(int nqubits, int layers);
/* QAOA for MaxCut: H on every qubit, then p times [exp(-i gamma_l C) as RZZ(-gamma_l w) per edge
 * (C = sum w (1 - Z_i Z_j) / 2, up to a global phase); RX(2 beta_l) per qubit].  Parameters
 * x = (gamma_1, beta_1, ..., gamma_p, beta_p). */
hs_circuit *hs_ansatz_qaoa(int nqubits, int p, int nedges, const int *edges, const double *w);

typedef struct hs_vqe hs_vqe;

/* Energy evaluator for the ansatz (variational gates only; its matrices are rebound on every call)
 * and the observable h, on registers of type t (three of them for the adjoint method).  With
 * distributed = 1 they are split over the context's ranks when the rank count is a power of two
 * and each rank keeps enough local qubits for the widest gate (targets plus controls) and the
 * widest X/Y part of a Pauli term (hs_vqe_local_qubits); otherwise every rank holds them whole.
 * Energies and gradients are the same either way (to round-off).  Collective. */
int hs_vqe_create(hs_ctx *ctx, hs_circuit *ansatz, const hs_pauli_sum *h, hs_dtype t, int distributed, hs_vqe **v);
/* Local qubits a split register needs for this ansatz and observable. */
int hs_vqe_local_qubits(const hs_circuit *ansatz, const hs_pauli_sum *h);
/* 1 when the registers are split over the ranks. */
int hs_vqe_distributed(const hs_vqe *v);
void hs_vqe_destroy(hs_vqe *v);
/* E(x) = <0| U(x)^dag H U(x) |0> (x on the host). */
int hs_vqe_energy(hs_vqe *v, const double *x, double *energy);
/* E and dE/dx by the adjoint method: one forward pass, then one backward pass that un-computes the
 * state and the co-state H|psi> gate by gate (Jones & Gacon 2020). */
int hs_vqe_gradient_adjoint(hs_vqe *v, const double *x, double *energy, double *grad);
/* dE/dx by the parameter-shift rule, exact for exp(-i a P / 2) gates: (E(a + pi/2) - E(a - pi/2)) / 2
 * per gate, summed over the gates that share a parameter. */
int hs_vqe_gradient_shift(hs_vqe *v, const double *x, double *grad);
/* Objective evaluations so far. */
int64_t hs_vqe_evaluations(const hs_vqe *v);
/* The state for x (replicated register owned by v). */
int hs_vqe_state(hs_vqe *v, const double *x, hs_qureg **psi);

typedef struct hs_vqe_opts {
    int optimizer;        /* 0: L-BFGS, 1: Adam */
    int max_iter;
    double gtol, ftol;    /* L-BFGS stopping */
    double lr;            /* Adam step */
    int shift_gradient;   /* 1: use parameter-shift gradients in the optimiser */
    /* asked after every iteration, on every rank alike (collective): nonzero stops the optimiser
     * with reason "interrupted" (a signal, the wall time); NULL: never */
    int (*interrupted)(hs_ctx *ctx);
} hs_vqe_opts;

typedef struct hs_vqe_result {
    double energy;
    int iterations;
    int64_t evaluations;
    double gnorm;         /* largest |dE/dx_k| at the final x (adjoint gradient) */
    int converged;
    double *history;      /* energy after each iteration (malloc'd, `iterations` entries) */
    const char *reason;   /* why the optimiser stopped (a static string, below) */
} hs_vqe_result;

/* Minimise E from x (host, updated in place).  r->reason is the criterion that stopped the
 * optimiser, and r->converged follows from it:
 *   converged:  "gradient_tolerance" (largest gradient component <= gtol),
 *               "energy_change" (L-BFGS: the energy of an iteration fell by at most ftol |E|),
 *               "energy_roundoff" (L-BFGS: the line search found no lower energy along a descent
 *               direction, and the gradient is so small that no decrease above the energy's
 *               round-off can exist: |g|_2 <= ||H|| |s| sqrt(2 delta), delta = 64 eps, where
 *               ||H|| <= sum |c_k|, s_k sums the angle scales of the gates of parameter k
 *               (|d2E/dx_j dx_k| <= s_j s_k ||H||) and eps is the precision's unit round-off);
 *   not converged: "iteration_limit", "evaluation_limit", "line_search_failed" (no decrease
 *               found while the gradient allows one), "not_finite" (E is not finite at the start),
 *               "interrupted". */
int hs_vqe_minimize(hs_vqe *v, double *x, const hs_vqe_opts *o, hs_vqe_result *r);

/* Lowest eigenvalue of h by dense diagonalisation (n <= 10 qubits; Jacobi on the real 2^(n+1)
 * embedding of the Hermitian matrix).  For reports; not collective. */
int hs_pauli_ground_energy(const hs_pauli_sum *h, int nqubits, double *e0);

#endif
