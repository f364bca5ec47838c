/* CSR family: structure checks, creation, SpMV/diagonal dispatch to the CPU or CUDA backend, Laplacians. */
#include "kernels/sparse/sparse.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "kernels/memory.h"
#include "kernels/sparse/sparse_impl.h"
#include "kernels/dispatch.h"

typedef struct csr_impl {
    hs_spmv_kernel kernel;
    int width;         /* native lanes per row; 0: chosen from the average row length */
    int32_t *rowmap;   /* device; NULL: row i writes y[i] */
    int64_t nrows_out; /* length of y when rowmap is set */
    void *cusparse;    /* cached cuSPARSE descriptors and buffer */
    char name[32];
} csr_impl;

/* ------------------------------------------------------------------ structure checks */

static int check_sizes(int64_t nrows, int64_t ncols, int64_t nnz, const int32_t *rowptr, const int32_t *colind,
                       const double *val)
{
    const char *fn = "hs_csr_create";
    if (nrows < 0 || ncols < 0 || nnz < 0)
        return hs_input_error(fn, 0, NULL, "negative size (nrows = %lld, ncols = %lld, nnz = %lld)", (long long)nrows,
                              (long long)ncols, (long long)nnz);
    /* 32-bit indices: half the index traffic of 64-bit ones, which matters for a bandwidth-bound SpMV */
    if (nrows >= INT32_MAX || ncols > INT32_MAX || nnz > INT32_MAX)
        return hs_input_error(fn, 0, NULL, "sizes (nrows = %lld, ncols = %lld, nnz = %lld) exceed the 32-bit index range",
                              (long long)nrows, (long long)ncols, (long long)nnz);
    if (!rowptr) return hs_input_error(fn, 0, "rowptr", "is NULL");
    if (nnz > 0 && (!colind || !val)) return hs_input_error(fn, 0, colind ? "val" : "colind", "is NULL with nnz = %lld", (long long)nnz);
    return HS_OK;
}

static int check_rowptr(int64_t nrows, int64_t nnz, const int32_t *rowptr)
{
    const char *fn = "hs_csr_create";
    if (rowptr[0] != 0) return hs_input_error(fn, 0, "rowptr", "rowptr[0] = %d, must be 0", rowptr[0]);
    for (int64_t i = 0; i < nrows; i++)
        if (rowptr[i + 1] < rowptr[i])
            return hs_input_error(fn, 0, "rowptr", "rowptr[%lld] = %d < rowptr[%lld] = %d: row pointers must not decrease",
                                  (long long)(i + 1), rowptr[i + 1], (long long)i, rowptr[i]);
    if (rowptr[nrows] != nnz)
        return hs_input_error(fn, 0, "rowptr", "rowptr[nrows = %lld] = %d, must equal nnz = %lld", (long long)nrows,
                              rowptr[nrows], (long long)nnz);
    return HS_OK;
}

static int check_colind(int64_t nrows, int64_t ncols, const int32_t *rowptr, const int32_t *colind)
{
    for (int64_t i = 0; i < nrows; i++)
        for (int32_t k = rowptr[i]; k < rowptr[i + 1]; k++)
            if (colind[k] < 0 || colind[k] >= ncols)
                return hs_input_error("hs_csr_create", 0, "colind",
                                      "colind[%d] = %d in row %lld is outside the columns [0, %lld)", k, colind[k],
                                      (long long)i, (long long)ncols);
    return HS_OK;
}

/* ------------------------------------------------------------------ creation */

static int upload(hs_ctx *ctx, void **dst, const void *src, size_t bytes)
{
    HS_CHECK(hs_mem_alloc(ctx, bytes, dst));
    if (bytes) HS_CHECK(hs_mem_copy(ctx, *dst, src, bytes, HS_COPY_H2D));
    return HS_OK;
}

static int csr_fill(hs_csr *A, const int32_t *rowptr, const int32_t *colind, const double *val)
{
    A->impl = calloc(1, sizeof(csr_impl));
    if (!A->impl) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory for a CSR matrix");
    HS_CHECK(upload(A->ctx, (void **)&A->rowptr, rowptr, (size_t)(A->nrows + 1) * sizeof(int32_t)));
    HS_CHECK(upload(A->ctx, (void **)&A->colind, colind, (size_t)A->nnz * sizeof(int32_t)));
    HS_CHECK(upload(A->ctx, (void **)&A->val, val, (size_t)A->nnz * sizeof(double)));
    return HS_OK;
}

int hs_csr_create(hs_ctx *ctx, int64_t nrows, int64_t ncols, int64_t nnz, const int32_t *rowptr,
                  const int32_t *colind, const double *val, hs_csr **A)
{
    if (!A) return hs_input_error("hs_csr_create", 0, "A", "is NULL");
    *A = NULL;
    if (!ctx) return hs_input_error("hs_csr_create", 0, "ctx", "is NULL");
    HS_CHECK(check_sizes(nrows, ncols, nnz, rowptr, colind, val));
    HS_CHECK(check_rowptr(nrows, nnz, rowptr));
    HS_CHECK(check_colind(nrows, ncols, rowptr, colind));
    hs_csr *m = calloc(1, sizeof *m);
    if (!m) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory for a CSR matrix");
    m->ctx = ctx;
    m->nrows = nrows;
    m->ncols = ncols;
    m->nnz = nnz;
    int rc = csr_fill(m, rowptr, colind, val);
    if (rc != HS_OK) {
        hs_csr_destroy(m);
        return hs_error_trace(rc, __FILE__, __LINE__, "csr_fill");
    }
    *A = m;
    return HS_OK;
}

void hs_csr_destroy(hs_csr *A)
{
    if (!A) return;
    csr_impl *m = A->impl;
    if (m) {
#if HS_HAVE_CUDA
        if (m->cusparse) hs_csr_cusparse_free_cuda(m->cusparse);
#endif
        hs_mem_free(A->ctx, m->rowmap);
        free(m);
    }
    hs_mem_free(A->ctx, A->rowptr);
    hs_mem_free(A->ctx, A->colind);
    hs_mem_free(A->ctx, A->val);
    free(A);
}

int hs_csr_set_spmv_kernel(hs_csr *A, hs_spmv_kernel kernel, int width)
{
    if (!A) return hs_input_error("hs_csr_set_spmv_kernel", 0, "A", "is NULL");
    if ((unsigned)kernel > HS_SPMV_NATIVE)
        return hs_input_error("hs_csr_set_spmv_kernel", 0, "kernel", "unknown SpMV kernel %d", (int)kernel);
    if (width < 0 || width > 32 || (width & (width - 1)))
        return hs_input_error("hs_csr_set_spmv_kernel", 0, "width", "%d is not 0 or a power of two up to 32", width);
    csr_impl *m = A->impl;
    m->kernel = kernel;
    m->width = width;
    return HS_OK;
}

int hs_csr_set_rowmap(hs_csr *A, int64_t nrows_out, const int32_t *rowmap)
{
    const char *fn = "hs_csr_set_rowmap";
    if (!A || (!rowmap && A->nrows > 0)) return hs_input_error(fn, 0, NULL, "A or rowmap is NULL");
    if (nrows_out < A->nrows || nrows_out > INT32_MAX)
        return hs_input_error(fn, 0, "nrows_out", "%lld cannot hold %lld rows", (long long)nrows_out, (long long)A->nrows);
    for (int64_t i = 0; i < A->nrows; i++)
        if (rowmap[i] < 0 || rowmap[i] >= nrows_out || (i > 0 && rowmap[i] <= rowmap[i - 1]))
            return hs_input_error(fn, 0, "rowmap", "rowmap[%lld] = %d: must increase strictly within [0, %lld)",
                                  (long long)i, rowmap[i], (long long)nrows_out);
    csr_impl *m = A->impl;
    int32_t *d = NULL;
    HS_CHECK(upload(A->ctx, (void **)&d, rowmap, (size_t)A->nrows * sizeof(int32_t)));
    hs_mem_free(A->ctx, m->rowmap);
    m->rowmap = d;
    m->nrows_out = nrows_out;
    return HS_OK;
}

/* ------------------------------------------------------------------ kernels */

static hs_csr_arrays arrays_of(const hs_csr *A)
{
    const csr_impl *m = A->impl;
    hs_csr_arrays a = {A->nrows, A->ncols, A->nnz, A->rowptr, A->colind, A->val, m->rowmap};
    return a;
}

/* Our kernel for this matrix: 0 the CSR-stream kernel, else the vector kernel's lanes per row. */
static int auto_width(const hs_csr *A)
{
    const csr_impl *m = A->impl;
    if (m->kernel == HS_SPMV_NATIVE) return m->width;
    /* the stream kernel holds 8 products per row of a warp's 32 rows: short rows (stencils, low-order
     * elements) take it; longer ones the vector kernel with about two entries per lane, so that each
     * lane has two independent gathers in flight */
    double avg = A->nrows > 0 ? (double)A->nnz / (double)A->nrows : 0.0;
    if (avg <= HS_SPMV_STREAM_ROW_ENTRIES) return 0;
    int w = 1;
    while (w < avg / 2 && w < 32) w <<= 1;
    return w;
}

/* 0: our kernel; else the cuSPARSE algorithm. */
static int cusparse_alg(const hs_csr *A)
{
    const csr_impl *m = A->impl;
    if (m->rowmap || A->nrows == 0 || A->ncols == 0 || A->nnz == 0) return 0;
    /* cuSPARSE refuses more stored entries than the matrix has cells (repeated columns) */
    if ((double)A->nnz > (double)A->nrows * (double)A->ncols) return 0;
    switch (m->kernel) {
    case HS_SPMV_AUTO: return 0; /* ours: deterministic, and faster than cuSPARSE in bench_sparse on the H200 */
    case HS_SPMV_CUSPARSE: return A->ctx->deterministic ? HS_CUSPARSE_ALG2 : HS_CUSPARSE_ALG1;
    case HS_SPMV_CUSPARSE_ALG1: return HS_CUSPARSE_ALG1;
    case HS_SPMV_CUSPARSE_ALG2: return HS_CUSPARSE_ALG2;
    default: return 0;
    }
}

const char *hs_csr_spmv_kernel_name(const hs_csr *A)
{
    csr_impl *m = A->impl;
    int alg = cusparse_alg(A);
    if (!HS_ON_GPU(A->ctx))
        snprintf(m->name, sizeof m->name, "cpu");
    else if (alg)
        snprintf(m->name, sizeof m->name, "cusparse-alg%d", alg);
    else if (auto_width(A) == 0)
        snprintf(m->name, sizeof m->name, "native-stream");
    else
        snprintf(m->name, sizeof m->name, "native-w%d", auto_width(A));
    return m->name;
}

int hs_csr_spmv(hs_csr *A, double alpha, const double *x, double beta, double *y)
{
    if (!A) return hs_input_error("hs_csr_spmv", 0, "A", "is NULL");
    if (A->nrows == 0) return HS_OK;
    if (!y || (!x && A->ncols > 0)) return hs_input_error("hs_csr_spmv", 0, NULL, "x or y is NULL");
    hs_csr_arrays a = arrays_of(A);
    csr_impl *m = A->impl;
    int alg = HS_ON_GPU(A->ctx) ? cusparse_alg(A) : 0;
    /* cuSPARSE is the peer, picked through hs_csr_set_spmv_kernel (CUDA only) */
    if (alg) return HS_DISPATCH(A->ctx, HS_FAIL(HS_ERR_RUNTIME, "cuSPARSE SpMV needs the CUDA backend"),
                                hs_csr_spmv_cusparse_cuda(A->ctx->cuda, &m->cusparse, &a, alg, alpha, x, beta, y));
    return HS_DISPATCH(A->ctx, hs_csr_spmv_cpu(&a, alpha, x, beta, y),
                       hs_csr_spmv_cuda(A->ctx->cuda, &a, auto_width(A), alpha, x, beta, y));
}

int hs_csr_diagonal(hs_csr *A, double *d)
{
    if (!A) return hs_input_error("hs_csr_diagonal", 0, "A", "is NULL");
    if (A->nrows == 0) return HS_OK;
    if (!d) return hs_input_error("hs_csr_diagonal", 0, "d", "is NULL");
    hs_csr_arrays a = arrays_of(A);
    return HS_DISPATCH(A->ctx, hs_csr_diagonal_cpu(&a, d), hs_csr_diagonal_cuda(A->ctx->cuda, &a, d));
}

int hs_diag_inverse(hs_ctx *ctx, int64_t n, const double *d, double *dinv, int64_t *nonpositive, int64_t *first_bad)
{
    if (nonpositive) *nonpositive = 0;
    if (first_bad) *first_bad = -1;
    if (n <= 0) return HS_OK;
    if (!d || !dinv) return hs_input_error("hs_diag_inverse", 0, NULL, "d or dinv is NULL");
    int64_t bad = 0, first = -1;
    HS_CHECK(HS_DISPATCH(ctx, hs_csr_diag_inverse_cpu(n, d, dinv, &bad, &first),
                         hs_csr_diag_inverse_cuda(ctx->cuda, n, d, dinv, &bad, &first)));
    if (nonpositive) *nonpositive = bad;
    if (first_bad) *first_bad = first;
    return HS_OK;
}

double hs_csr_spmv_bytes(const hs_csr *A)
{
    return 4.0 * (double)(A->nrows + 1) + 12.0 * (double)A->nnz + 8.0 * (double)A->ncols + 8.0 * (double)A->nrows;
}

/* ------------------------------------------------------------------ operator */

static int csr_apply(void *data, const double *x, double *y)
{
    hs_csr *A = data;
    if (A->nrows != A->ncols)
        return hs_input_error("hs_csr_linop", 0, NULL, "the matrix is %lld x %lld, an operator must be square",
                              (long long)A->nrows, (long long)A->ncols);
    return hs_csr_spmv(A, 1.0, x, 0.0, y);
}

static int csr_diag(void *data, double *d) { return hs_csr_diagonal(data, d); }

hs_linop hs_csr_linop(hs_csr *A)
{
    hs_linop op = {A ? A->ctx : NULL, MPI_COMM_SELF, A ? A->nrows : 0, A, csr_apply, csr_diag};
    return op;
}

/* ------------------------------------------------------------------ Laplacian */

/* Row g of the Laplacian into cols/vals (at most 7 entries, ascending columns); returns the count. */
static int lap_row(int ndim, const int64_t n[3], int64_t g, int64_t *cols, double *vals)
{
    int64_t stride[3] = {1, n[0], n[0] * n[1]}, c[3] = {0, 0, 0}, rest = g;
    for (int d = 0; d < ndim; d++) {
        c[d] = d == ndim - 1 ? rest : rest % n[d];
        rest /= n[d];
    }
    int k = 0;
    for (int d = ndim - 1; d >= 0; d--)
        if (c[d] > 0) cols[k] = g - stride[d], vals[k++] = -1.0;
    cols[k] = g, vals[k++] = 2.0 * ndim;
    for (int d = 0; d < ndim; d++)
        if (c[d] < n[d] - 1) cols[k] = g + stride[d], vals[k++] = -1.0;
    return k;
}

static int lap_check(int ndim, const int64_t n[3], int64_t row_start, int64_t nrows)
{
    const char *fn = "hs_laplacian_rows";
    if (ndim < 1 || ndim > 3) return hs_input_error(fn, 0, "ndim", "%d, must be 1, 2 or 3", ndim);
    int64_t total = 1;
    for (int d = 0; d < ndim; d++) {
        if (n[d] < 1 || n[d] > ((int64_t)1 << 40) || total > ((int64_t)1 << 60) / n[d])
            return hs_input_error(fn, 0, "n", "n[%d] = %lld is not a usable grid size", d, (long long)n[d]);
        total *= n[d];
    }
    if (row_start < 0 || nrows < 0 || row_start > total - nrows)
        return hs_input_error(fn, 0, NULL, "rows [%lld, %lld) are outside [0, %lld)", (long long)row_start,
                              (long long)(row_start + nrows), (long long)total);
    return HS_OK;
}

int hs_laplacian_rows(int ndim, const int64_t n[3], int64_t row_start, int64_t nrows, int64_t **rowptr,
                      int64_t **colind, double **val, int64_t *nnz)
{
    *rowptr = NULL, *colind = NULL, *val = NULL, *nnz = 0;
    HS_CHECK(lap_check(ndim, n, row_start, nrows));
    int64_t *rp = malloc(sizeof *rp * (size_t)(nrows + 1));
    if (!rp) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory for %lld Laplacian rows", (long long)nrows);
    rp[0] = 0;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < nrows; i++) {
        int64_t c[7];
        double v[7];
        rp[i + 1] = lap_row(ndim, n, row_start + i, c, v);
    }
    for (int64_t i = 0; i < nrows; i++) rp[i + 1] += rp[i];
    int64_t total = rp[nrows];
    int64_t *ci = malloc(sizeof *ci * (size_t)(total ? total : 1));
    double *va = malloc(sizeof *va * (size_t)(total ? total : 1));
    if (!ci || !va) {
        free(rp), free(ci), free(va);
        return HS_FAIL(HS_ERR_RUNTIME, "out of host memory for %lld Laplacian entries", (long long)total);
    }
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < nrows; i++) lap_row(ndim, n, row_start + i, ci + rp[i], va + rp[i]);
    *rowptr = rp, *colind = ci, *val = va, *nnz = total;
    return HS_OK;
}

static int lap_to_csr(hs_ctx *ctx, int64_t nrows, int64_t nnz, const int64_t *rp, const int64_t *ci, const double *va,
                      hs_csr **A)
{
    if (nnz > INT32_MAX) return hs_input_error("hs_csr_laplacian", 0, NULL, "%lld entries exceed the 32-bit range", (long long)nnz);
    int32_t *rp32 = malloc(sizeof *rp32 * (size_t)(nrows + 1)), *ci32 = malloc(sizeof *ci32 * (size_t)(nnz ? nnz : 1));
    if (!rp32 || !ci32) {
        free(rp32), free(ci32);
        return HS_FAIL(HS_ERR_RUNTIME, "out of host memory for a %lld-entry Laplacian", (long long)nnz);
    }
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i <= nrows; i++) rp32[i] = (int32_t)rp[i];
#pragma omp parallel for schedule(static)
    for (int64_t k = 0; k < nnz; k++) ci32[k] = (int32_t)ci[k];
    int rc = hs_csr_create(ctx, nrows, nrows, nnz, rp32, ci32, va, A);
    free(rp32), free(ci32);
    return rc;
}

int hs_csr_laplacian(hs_ctx *ctx, int ndim, const int64_t n[3], hs_csr **A)
{
    *A = NULL;
    HS_CHECK(lap_check(ndim, n, 0, 0));
    int64_t rows = 1, nnz = 0, *rp = NULL, *ci = NULL;
    double *va = NULL;
    for (int d = 0; d < ndim; d++) rows *= n[d];
    HS_CHECK(hs_laplacian_rows(ndim, n, 0, rows, &rp, &ci, &va, &nnz));
    int rc = lap_to_csr(ctx, rows, nnz, rp, ci, va, A);
    free(rp), free(ci), free(va);
    return rc;
}
