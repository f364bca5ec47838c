/* OpenMP backend of the sparse family: CSR SpMV row loop, diagonal, Jacobi inverse, ghost packing. */
#include "kernels/sparse/sparse_impl.h"

#include "kernels/dispatch.h"
#include "kernels/error.h"

int hs_csr_spmv_cpu(const hs_csr_arrays *a, double alpha, const double *x, double beta, double *y)
{
    const int32_t *rowptr = a->rowptr, *colind = a->colind, *rowmap = a->rowmap;
    const double *val = a->val;
    /* the sum runs in storage order, the order of the naive reference, so results are reproducible */
#pragma omp parallel for schedule(static) if (a->nnz + a->nrows > HS_CPU_SERIAL_BELOW)
    for (int64_t i = 0; i < a->nrows; i++) {
        double s = 0.0;
        for (int32_t k = rowptr[i]; k < rowptr[i + 1]; k++) s += val[k] * x[colind[k]];
        int64_t row = rowmap ? rowmap[i] : i;
        y[row] = beta == 0.0 ? alpha * s : alpha * s + beta * y[row];
    }
    return HS_OK;
}

int hs_csr_diagonal_cpu(const hs_csr_arrays *a, double *d)
{
#pragma omp parallel for schedule(static) if (a->nnz + a->nrows > HS_CPU_SERIAL_BELOW)
    for (int64_t i = 0; i < a->nrows; i++) {
        double s = 0.0;
        for (int32_t k = a->rowptr[i]; k < a->rowptr[i + 1]; k++)
            if (a->colind[k] == i) s += a->val[k];
        d[i] = s;
    }
    return HS_OK;
}

int hs_csr_diag_inverse_cpu(int64_t n, const double *d, double *dinv, int64_t *nonpositive, int64_t *first_bad)
{
    int64_t bad = 0, first = n;
#pragma omp parallel for schedule(static) reduction(+ : bad) reduction(min : first) if (n > HS_CPU_SERIAL_BELOW)
    for (int64_t i = 0; i < n; i++) {
        if (d[i] > 0.0) {
            dinv[i] = 1.0 / d[i];
        } else { /* also NaN */
            dinv[i] = 0.0;
            bad++;
            if (i < first) first = i;
        }
    }
    if (nonpositive) *nonpositive = bad;
    if (first_bad) *first_bad = bad ? first : -1;
    return HS_OK;
}

int hs_dcsr_gather_cpu(int64_t n, const int32_t *idx, const double *x, double *buf)
{
#pragma omp parallel for schedule(static) if (n > HS_CPU_SERIAL_BELOW)
    for (int64_t k = 0; k < n; k++) buf[k] = x[idx[k]];
    return HS_OK;
}
