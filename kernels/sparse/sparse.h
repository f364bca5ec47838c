/* CSR sparse matrices on either backend: creation with structure checks, SpMV (cuSPARSE or our
 * vector-CSR kernel / OpenMP), diagonal, Laplacian builders, and the linear-operator interface. */
#ifndef HS_SPARSE_H
#define HS_SPARSE_H

#include <stdint.h>

#include "kernels/context.h"

/* A CSR matrix whose arrays live in the context's device memory (0-based indices).  Nothing about
 * an hs_csr is collective: it belongs to one rank. */
typedef struct hs_csr {
    hs_ctx *ctx;
    int64_t nrows, ncols, nnz;
    int32_t *rowptr, *colind; /* device: nrows + 1 and nnz entries */
    double *val;              /* device: nnz entries */
    void *impl;               /* backend data: kernel choice, row map, cuSPARSE descriptors and buffer */
} hs_csr;

/* Copy host CSR arrays (0-based; column indices need not be sorted within a row; repeated columns
 * are summed by every operation) to the device.  Checks the structure: sizes >= 0, rowptr[0] = 0,
 * rowptr non-decreasing, rowptr[nrows] = nnz, 0 <= colind < ncols; a violation is an input error
 * (HS_ERR_INPUT) naming the first offending entry.  Not collective. */
int hs_csr_create(hs_ctx *ctx, int64_t nrows, int64_t ncols, int64_t nnz, const int32_t *rowptr,
                  const int32_t *colind, const double *val, hs_csr **A);
void hs_csr_destroy(hs_csr *A);

/* y = alpha A x + beta y, with x of length ncols and y of length nrows, both device arrays that do
 * not overlap; when beta == 0, y is only written (its old contents, even NaN, do not matter).  Asynchronous on the
 * context's stream on CUDA.  Not collective. */
int hs_csr_spmv(hs_csr *A, double alpha, const double *x, double beta, double *y);

/* d[i] = A(i,i) for i < nrows (0 where absent or i >= ncols; repeated entries summed); d is a
 * device array of length nrows.  Not collective. */
int hs_csr_diagonal(hs_csr *A, double *d);

/* Which SpMV kernel an hs_csr uses on CUDA (the CPU backend always runs its OpenMP row loop):
 *   HS_SPMV_AUTO            our kernel (deterministic; measured faster than cuSPARSE on the H200), the default
 *   HS_SPMV_CUSPARSE        cusparseSpMV, CSR_ALG2 when ctx->deterministic, else CSR_ALG1
 *   HS_SPMV_CUSPARSE_ALG1   cusparseSpMV with CUSPARSE_SPMV_CSR_ALG1
 *   HS_SPMV_CUSPARSE_ALG2   cusparseSpMV with CUSPARSE_SPMV_CSR_ALG2 (bitwise reproducible)
 *   HS_SPMV_NATIVE          our kernels, reproducible: `width` 0 the CSR-stream kernel (a warp reads
 *                           32 rows' entries coalesced and each lane sums its row; for short rows),
 *                           1, 2, 4, 8, 16 or 32 the vector-CSR kernel with that many lanes per row.
 *                           HS_SPMV_AUTO takes the stream kernel up to 8 entries per row on average,
 *                           else the vector kernel at about two entries per lane
 * A matrix with a row map (below), no rows, no columns or no entries always uses the native kernel. */
typedef enum {
    HS_SPMV_AUTO = 0,
    HS_SPMV_CUSPARSE,
    HS_SPMV_CUSPARSE_ALG1,
    HS_SPMV_CUSPARSE_ALG2,
    HS_SPMV_NATIVE
} hs_spmv_kernel;
int hs_csr_set_spmv_kernel(hs_csr *A, hs_spmv_kernel kernel, int width);
/* Name of the kernel in use ("cusparse-alg1", "native-stream", "native-w8", "cpu", ...), for benchmark tables. */
const char *hs_csr_spmv_kernel_name(const hs_csr *A);

/* Compressed rows: row i of A updates y[rowmap[i]] instead of y[i] in hs_csr_spmv, so y has length
 * nrows_out and rows of y not listed are left untouched (also not scaled by beta).  rowmap (host,
 * nrows entries) must be strictly increasing within [0, nrows_out).  Used for the off-diagonal block
 * of hs_dcsr, whose few non-empty rows should not cost a pass over all of y.  Not collective. */
int hs_csr_set_rowmap(hs_csr *A, int64_t nrows_out, const int32_t *rowmap);

/* dinv[i] = 1 / d[i] for device arrays of length n; *nonpositive (may be NULL) receives the number
 * of entries with d[i] <= 0 or NaN (dinv is then 0 there) and *first_bad (may be NULL) the index of
 * the first one (-1 when none): the Jacobi preconditioner's setup and SPD check.  Not collective. */
int hs_diag_inverse(hs_ctx *ctx, int64_t n, const double *d, double *dinv, int64_t *nonpositive,
                    int64_t *first_bad);

/* Rows [row_start, row_start + nrows) of the SPD Dirichlet Laplacian on an n[0] x n[1] x n[2] grid
 * (ndim = 1, 2 or 3; n[d] for d >= ndim ignored): 2*ndim on the diagonal and -1 for each neighbour
 * inside the grid (3-, 5- or 7-point stencil), the global row of grid point (i, j, k) being
 * i + n[0] (j + n[1] k).  Columns are global and sorted within each row.  Host arrays, malloc'd
 * (the caller frees): rowptr (nrows + 1 entries, starting at 0), colind and val (*nnz entries).
 * Used for hs_csr (one rank, full range) and hs_dcsr (each rank its block).  Not collective. */
int hs_laplacian_rows(int ndim, const int64_t n[3], int64_t row_start, int64_t nrows, int64_t **rowptr,
                      int64_t **colind, double **val, int64_t *nnz);

/* The whole Laplacian above as an hs_csr on ctx (needs nnz < 2^31).  Not collective. */
int hs_csr_laplacian(hs_ctx *ctx, int ndim, const int64_t n[3], hs_csr **A);

/* A square linear operator on distributed vectors of n_local entries per rank (device arrays), as
 * the solvers see it.  Dot products over comm are all-reduced; comm == MPI_COMM_SELF means the
 * operator lives on one rank and nothing is reduced. */
typedef struct hs_linop {
    hs_ctx *ctx;
    MPI_Comm comm;
    int64_t n_local;
    void *data;
    int (*apply)(void *data, const double *x, double *y); /* y = A x (collective over comm) */
    int (*diagonal)(void *data, double *d);               /* d = diag(A), local rows; may be NULL */
} hs_linop;

/* The operator of a square hs_csr on one rank (comm = MPI_COMM_SELF); applying a non-square
 * matrix is an input error.  A must outlive the operator. */
hs_linop hs_csr_linop(hs_csr *A);

/* Minimum bytes moved by y = A x (beta == 0) for the benchmarks' traffic models: rowptr, colind,
 * val, x and y each once, 4 (nrows + 1) + 12 nnz + 8 ncols + 8 nrows.  Add 8 nrows for beta != 0. */
double hs_csr_spmv_bytes(const hs_csr *A);

#endif
