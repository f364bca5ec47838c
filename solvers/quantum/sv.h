/* State-vector kernels: gates on the amplitudes a rank holds, reductions, packing for exchanges. */
#ifndef HS_QSV_H
#define HS_QSV_H

#include <stdint.h>

#include "kernels/context.h"
#include "solvers/quantum/circuit.h"

/* Every function works on one rank's slice: 2^nloc amplitudes of type t (HS_C128 or HS_C64) in the
 * context's device memory; qubit arguments are local bit positions (< nloc).  None is collective:
 * qureg.c combines ranks.  Reductions return host values accumulated in double precision in a
 * fixed order (bitwise reproducible on the same device and thread count). */

/* a <- G a where G is the 2^nt matrix m (host, row-major, interleaved complex128) on targets t,
 * applied where (index & cmask) == cval.  mk picks the specialised kernel (diagonal, permutation). */
int hs_sv_apply(hs_ctx *ctx, hs_dtype t, void *a, int nloc, int nt, const int *targets, uint64_t cmask,
                uint64_t cval, const double *m, hs_qmat_kind mk);

/* Set a to the basis state |index> (index < 0: all zero). */
/* What the planner's cost model (hs_qcost_model's gpu) is to assume of ctx's device: 0 the CPU, 1 a
 * GPU, 2 a GPU whose complex64 5-qubit blocks take the bulk-copy kernel (compute capability 9 in a
 * build for it, unless HS_QSV_TMA=0). */
int hs_sv_model_device(hs_ctx *ctx);

int hs_sv_set_basis(hs_ctx *ctx, hs_dtype t, void *a, int nloc, int64_t index);

/* out[b] = sum of |a_i|^2 over the block i in [b 2^bbits, (b+1) 2^bbits); out has 2^(nloc-bbits)
 * host entries. */
int hs_sv_prob_blocks(hs_ctx *ctx, hs_dtype t, const void *a, int nloc, int bbits, double *out);

/* Marginal probabilities of the nm (<= HS_SV_MAX_MARGINAL) qubits q: out[k] (2^nm host entries)
 * sums |a_i|^2 over the i whose bit q[j] equals bit j of k. */
#define HS_SV_MAX_MARGINAL 12
int hs_sv_marginal(hs_ctx *ctx, hs_dtype t, const void *a, int nloc, int nm, const int *q, double *out);

/* a_i <- (index & mask) == val ? scale a_i : 0 (measurement collapse, normalisation). */
int hs_sv_collapse(hs_ctx *ctx, hs_dtype t, void *a, int nloc, uint64_t mask, uint64_t val, double scale);

/* out = sum_i conj(a[i ^ xm]) a[i] (-1)^popcount(i & zm)  (complex, out[0] real part). */
int hs_sv_pauli_expect(hs_ctx *ctx, hs_dtype t, const void *a, int nloc, uint64_t xm, uint64_t zm, double out[2]);

/* out = sum_i conj(a_i) b_i. */
int hs_sv_inner(hs_ctx *ctx, hs_dtype t, const void *a, const void *b, int nloc, double out[2]);

/* y[i ^ xm] += c (-1)^popcount(i & zm) x[i]  (c complex: c[0] + i c[1]). */
int hs_sv_pauli_axpy(hs_ctx *ctx, hs_dtype t, void *y, const void *x, int nloc, uint64_t xm, uint64_t zm,
                     const double c[2]);

/* Exchange buffers: for j in [start, start+count), with i = j with bit v inserted at position q,
 * pack copies a[i] to buf[j-start]; unpack copies back. */
int hs_sv_pack(hs_ctx *ctx, hs_dtype t, void *a, int nloc, int q, int v, int64_t start, int64_t count, void *buf,
               int unpack);

#endif
