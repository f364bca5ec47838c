/* Backend entry points of the sparse family (kernels/sparse/sparse_cpu.c, kernels/sparse/sparse_cuda.cu). */
#ifndef HS_SPARSE_IMPL_H
#define HS_SPARSE_IMPL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct hs_cuda_ctx;

/* Average entries per row up to which the CSR-stream kernel holds a warp's rows' products in
 * shared memory (HS_SPMV_AUTO's choice between it and the vector kernel follows it). */
#define HS_SPMV_STREAM_ROW_ENTRIES 8

/* The device arrays of one CSR matrix as the kernels see them; rowmap NULL: row i writes y[i]. */
typedef struct hs_csr_arrays {
    int64_t nrows, ncols, nnz;
    const int32_t *rowptr, *colind;
    const double *val;
    const int32_t *rowmap;
} hs_csr_arrays;

/* cuSPARSE algorithm codes as the C side names them (mapped to cusparseSpMVAlg_t in the .cu). */
enum { HS_CUSPARSE_ALG1 = 1, HS_CUSPARSE_ALG2 = 2 };

int hs_csr_spmv_cpu(const hs_csr_arrays *a, double alpha, const double *x, double beta, double *y);
int hs_csr_diagonal_cpu(const hs_csr_arrays *a, double *d);
int hs_csr_diag_inverse_cpu(int64_t n, const double *d, double *dinv, int64_t *nonpositive, int64_t *first_bad);
/* buf[k] = x[idx[k]] (packing ghost values for hs_dcsr). */
int hs_dcsr_gather_cpu(int64_t n, const int32_t *idx, const double *x, double *buf);

/* Vector-CSR SpMV: `width` lanes (power of two <= 32) per row. */
int hs_csr_spmv_cuda(struct hs_cuda_ctx *cu, const hs_csr_arrays *a, int width, double alpha, const double *x,
                            double beta, double *y);
/* cusparseSpMV with descriptors, buffer and preprocessing cached in *state (created on first use,
 * recreated when the algorithm changes; freed by hs_csr_cusparse_free_cuda). */
int hs_csr_spmv_cusparse_cuda(struct hs_cuda_ctx *cu, void **state, const hs_csr_arrays *a, int alg, double alpha,
                              const double *x, double beta, double *y);
void hs_csr_cusparse_free_cuda(void *state);
int hs_csr_diagonal_cuda(struct hs_cuda_ctx *cu, const hs_csr_arrays *a, double *d);
int hs_csr_diag_inverse_cuda(struct hs_cuda_ctx *cu, int64_t n, const double *d, double *dinv, int64_t *nonpositive,
                         int64_t *first_bad);
/* buf[k] = x[idx[k]] on `stream` (NULL: the context stream). */
int hs_dcsr_gather_cuda(struct hs_cuda_ctx *cu, void *stream, int64_t n, const int32_t *idx, const double *x, double *buf);

#ifdef __cplusplus
}
#endif
#endif
