/* Distributed CSR matrices: rows in contiguous blocks over MPI ranks, ghost exchange, SpMV, operator. */
#ifndef HS_DCSR_H
#define HS_DCSR_H

#include "kernels/sparse/sparse.h"

/* A square matrix whose rows (and the entries of the vectors it acts on) are distributed in
 * contiguous blocks, rank 0 holding the first block (the PETSc MPIAIJ layout).  Each rank keeps a
 * diagonal block (its own columns, local numbering) and an off-diagonal block on its compressed
 * ghost columns (only the columns it references, ordered by owner), plus the lists of entries it
 * sends to and receives from each neighbour. */
typedef struct hs_dcsr hs_dcsr;

/* Build from each rank's rows [row_start, row_start + nrows_local) given as host CSR arrays with
 * GLOBAL column indices (int64, 0-based, rowptr[0] = 0).  The blocks must tile [0, ncols_global) in
 * rank order (a rank may own no rows), and ncols_global is also the number of rows.  Input errors
 * (bad layout, bad structure on any rank, a block above 2^31 entries) are reported on every rank.
 * Collective over comm. */
int hs_dcsr_create(hs_ctx *ctx, MPI_Comm comm, int64_t row_start, int64_t nrows_local, int64_t ncols_global,
                   const int64_t *rowptr, const int64_t *colind, const double *val, hs_dcsr **A);
void hs_dcsr_destroy(hs_dcsr *A);

/* y_local = alpha A x + beta y_local for device vectors of nrows_local entries that do not overlap
 * (y is only written when beta == 0).  The ghost values of x go out with non-blocking MPI while the diagonal block
 * multiplies; on CUDA they are gathered on the device on a second stream, staged through pinned
 * host buffers (the MPI need not be CUDA-aware), and copied back into the contiguous ghost vector.
 * Collective over comm (only neighbours exchange messages). */
int hs_dcsr_spmv(hs_dcsr *A, double alpha, const double *x, double beta, double *y);

/* The operator of the matrix for hs_pcg_solve (comm = the matrix's comm, diagonal from the
 * diagonal block).  A must outlive the operator. */
hs_linop hs_dcsr_linop(hs_dcsr *A);

/* Sizes of this rank's part: rows, ghost columns, entries of the two blocks, neighbours. */
typedef struct hs_dcsr_info {
    int64_t row_start, nrows_local, nrows_global;
    int64_t nghost, nsend;          /* ghost values received / owned values sent per SpMV */
    int64_t nnz_diag, nnz_off, off_rows;
    int nrecv_neighbours, nsend_neighbours;
} hs_dcsr_info;
void hs_dcsr_get_info(const hs_dcsr *A, hs_dcsr_info *info);

/* The diagonal block (local rows x local columns) as an hs_csr, e.g. to choose its SpMV kernel. */
hs_csr *hs_dcsr_diag_block(hs_dcsr *A);

#endif
