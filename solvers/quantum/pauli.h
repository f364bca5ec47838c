/* Pauli-sum observables H = sum_k c_k P_k: reading them from files, building MaxCut costs. */
#ifndef HS_QPAULI_H
#define HS_QPAULI_H

#include <stdint.h>

/* Term k is c[k] * i^ny[k] X^xm Z^zm in the bit-mask form: qubit j carries X when bit j of xm is
 * set and not of zm, Z for zm only, Y for both (ny counts the Ys so that the product is the Pauli
 * string itself: Y = i X Z). */
typedef struct hs_pauli_sum {
    int nterms, cap, nqubits; /* nqubits: 1 + the highest qubit any term touches */
    /* read from a file: the qubits its terms are written for (1 + the highest qubit a factor names,
     * identities included; L for a string of L letters) and where the first widest term is, so that
     * a term written for more qubits than the circuit has ("0.5 I7", "0.5 IIIIIZ" on 3 qubits) can
     * be refused at its line (0 when built from C) */
    int width, width_line, width_col;
    double *c;
    uint64_t *xm, *zm;
    int *ny;
} hs_pauli_sum;

/* Read a file of lines `COEFFICIENT TERM` ('#' starts a comment).  TERM is either a string of
 * I/X/Y/Z letters with the rightmost letter on qubit 0 (Qiskit's order, e.g. "IZ" is Z on qubit 0)
 * or space-separated factors with qubit numbers ("X0 Y1 Z3"); "I" or nothing is the identity.
 * Errors are input errors "file:line:column: message".  Not collective. */
int hs_pauli_sum_read(const char *path, hs_pauli_sum **h);
/* An empty sum. */
hs_pauli_sum *hs_pauli_sum_new(void);
/* Append c * (Pauli string given by the masks). */
int hs_pauli_sum_add(hs_pauli_sum *h, double c, uint64_t xm, uint64_t zm);
void hs_pauli_sum_free(hs_pauli_sum *h);

/* The MaxCut cost of a weighted graph as an energy to minimise: H = sum_(i,j) w/2 (Z_i Z_j - 1), so
 * <H> = -(expected cut weight).  The graph file has `n` on its first line, then `i j [w]` per edge
 * (w = 1 when absent).  Input errors name file:line:column. */
int hs_maxcut_read(const char *path, int *nvertices, int *nedges, int **edges, double **weights);
int hs_maxcut_hamiltonian(int nedges, const int *edges, const double *w, hs_pauli_sum **h);

#endif
