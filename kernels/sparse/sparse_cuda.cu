// CUDA backend of the sparse family: cuSPARSE SpMV with cached state, our CSR-stream and vector-CSR SpMVs, diagonal, packing.
#include <stdlib.h>

#include "kernels/cuda_util.h"
#include "kernels/sparse/sparse_impl.h"

static const int kThreads = 256;

// ------------------------------------------------------------------ our SpMV

// y[row] (or y[rowmap[row]]) = alpha sum + beta y; y is not read when beta is 0.
__device__ __forceinline__ void store_row(const int32_t *__restrict__ rowmap, int64_t row, double alpha, double sum,
                                          double beta, double *__restrict__ y)
{
    const int64_t out = rowmap ? (int64_t)rowmap[row] : row;
    y[out] = beta == 0.0 ? alpha * sum : alpha * sum + beta * y[out];
}

// Sum of val[k] x[colind[k]] over this lane's entries start + sub, start + sub + W, ... < end, two
// per step with both gathers issued before either is used (short rows would otherwise pay one
// memory round trip per entry).  The order of the additions is fixed, so results are reproducible.
template <int W>
__device__ __forceinline__ double lane_sum(int32_t start, int32_t end, int sub, const int32_t *__restrict__ colind,
                                           const double *__restrict__ val, const double *__restrict__ x)
{
    double sum = 0.0;
    for (int32_t k = start + sub; k < end; k += 2 * W) {
        const bool two = k + W < end;
        const double a = __ldcs(val + k), xa = __ldg(x + __ldcs(colind + k));
        double b = 0.0, xb = 0.0;
        if (two) b = __ldcs(val + k + W), xb = __ldg(x + __ldcs(colind + k + W));
        sum += a * xa;
        if (two) sum += b * xb;
    }
    return sum;
}

// W lanes per row, 32 / W rows per warp.  The row loop is warp-uniform so that every lane reaches
// the shuffles (a lane past the last row contributes 0), and the next row's bounds are loaded
// before the current row is summed, taking that round trip off the critical path.  The matrix
// arrays are read once, so they are loaded with the streaming hint and leave the L2 cache to x,
// whose entries are reused by neighbouring rows.
template <int W>
__global__ void csr_vector_kernel(int64_t nrows, const int32_t *__restrict__ rowptr,
                                  const int32_t *__restrict__ colind, const double *__restrict__ val,
                                  const int32_t *__restrict__ rowmap, double alpha, const double *__restrict__ x,
                                  double beta, double *__restrict__ y)
{
    const int lane = threadIdx.x & 31;
    const int sub = lane & (W - 1);
    const int64_t rows_per_warp = 32 / W;
    const int64_t warp = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int64_t step = (((int64_t)gridDim.x * blockDim.x) >> 5) * rows_per_warp;
    int64_t row = warp * rows_per_warp + lane / W;
    int32_t start = 0, end = 0;
    if (row < nrows) start = __ldg(rowptr + row), end = __ldg(rowptr + row + 1);
    for (int64_t base = warp * rows_per_warp; base < nrows; base += step) {
        const int64_t next = row + step;
        int32_t next_start = 0, next_end = 0;
        if (next < nrows) next_start = __ldg(rowptr + next), next_end = __ldg(rowptr + next + 1);
        double sum = lane_sum<W>(start, end, sub, colind, val, x); // 0 for a row past the end
#pragma unroll
        for (int off = W / 2; off > 0; off >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, off);
        if (row < nrows && sub == 0) store_row(rowmap, row, alpha, sum, beta, y);
        row = next, start = next_start, end = next_end;
    }
}

// CSR-stream: a warp takes kStreamRows consecutive rows, whose entries are contiguous, so it reads
// val and colind fully coalesced (lane l: entries start + l, start + l + 32, ...; every load issued
// before the first product is formed), parks the products in shared memory and each lane then sums
// its own row's products in index order (fixed order: reproducible).  Every lane does useful work
// whatever the row length, which the vector kernel cannot for 7-entry rows.  A group with more
// entries than the buffer holds (more than 8 per row on average) takes the rows one at a time, a
// whole warp per row.
constexpr int kStreamRows = 32;
constexpr int kStreamBuf = HS_SPMV_STREAM_ROW_ENTRIES * kStreamRows; // products per warp

__device__ __noinline__ void stream_rows_one_by_one(int64_t r0, int64_t r1, const int32_t *__restrict__ rowptr,
                                                    const int32_t *__restrict__ colind,
                                                    const double *__restrict__ val, const int32_t *__restrict__ rowmap,
                                                    double alpha, const double *__restrict__ x, double beta,
                                                    double *__restrict__ y)
{
    const int lane = threadIdx.x & 31;
    for (int64_t r = r0; r < r1; r++) {
        double sum = lane_sum<32>(__ldg(rowptr + r), __ldg(rowptr + r + 1), lane, colind, val, x);
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, off);
        if (lane == 0) store_row(rowmap, r, alpha, sum, beta, y);
    }
}

__global__ void __launch_bounds__(kThreads) csr_stream_kernel(int64_t nrows, const int32_t *__restrict__ rowptr,
                                                              const int32_t *__restrict__ colind,
                                                              const double *__restrict__ val,
                                                              const int32_t *__restrict__ rowmap, double alpha,
                                                              const double *__restrict__ x, double beta,
                                                              double *__restrict__ y)
{
    __shared__ double s_prod[kThreads / 32][kStreamBuf];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int64_t r0 = ((int64_t)blockIdx.x * (kThreads / 32) + warp) * kStreamRows;
    if (r0 >= nrows) return; // whole warps
    const int64_t row = r0 + lane;
    const int32_t start = __ldg(rowptr + min(row, nrows)), end = __ldg(rowptr + min(row + 1, nrows));
    const int32_t gs = __shfl_sync(0xffffffffu, start, 0), ge = __shfl_sync(0xffffffffu, end, 31);
    if (ge - gs > kStreamBuf) {
        stream_rows_one_by_one(r0, min(r0 + kStreamRows, nrows), rowptr, colind, val, rowmap, alpha, x, beta, y);
        return;
    }
    double *buf = s_prod[warp];
    constexpr int kSteps = kStreamBuf / 32;
    int32_t c[kSteps];
    double v[kSteps];
#pragma unroll
    for (int j = 0; j < kSteps; j++) {
        const int32_t k = gs + lane + 32 * j;
        c[j] = 0, v[j] = 0.0;
        if (k < ge) c[j] = __ldg(colind + k), v[j] = __ldg(val + k);
    }
#pragma unroll
    for (int j = 0; j < kSteps; j++)
        if (gs + lane + 32 * j < ge) buf[lane + 32 * j] = v[j] * __ldg(x + c[j]);
    __syncwarp();
    double sum = 0.0;
    for (int32_t k = start - gs; k < end - gs; k++) sum += buf[k];
    if (row < nrows) store_row(rowmap, row, alpha, sum, beta, y);
}

template <int W>
static int launch_vector(hs_cuda_ctx *cu, const hs_csr_arrays *a, double alpha, const double *x, double beta, double *y)
{
    int blocks = hs_cuda_blocks(cu, (size_t)a->nrows * W, kThreads);
    csr_vector_kernel<W><<<blocks, kThreads, 0, cu->stream>>>(a->nrows, a->rowptr, a->colind, a->val, a->rowmap, alpha,
                                                               x, beta, y);
    HS_CUDA_LAUNCH_CHECK(csr_vector_kernel);
    return HS_OK;
}

extern "C" int hs_csr_spmv_cuda(hs_cuda_ctx *cu, const hs_csr_arrays *a, int width, double alpha,
                                       const double *x, double beta, double *y)
{
    if (a->nrows == 0) return HS_OK;
    switch (width) {
    case 0: {
        const int64_t groups = (a->nrows + kStreamRows - 1) / kStreamRows, per_block = kThreads / 32;
        csr_stream_kernel<<<(unsigned)((groups + per_block - 1) / per_block), kThreads, 0, cu->stream>>>(
            a->nrows, a->rowptr, a->colind, a->val, a->rowmap, alpha, x, beta, y);
        HS_CUDA_LAUNCH_CHECK(csr_stream_kernel);
        return HS_OK;
    }
    case 1: return launch_vector<1>(cu, a, alpha, x, beta, y);
    case 2: return launch_vector<2>(cu, a, alpha, x, beta, y);
    case 4: return launch_vector<4>(cu, a, alpha, x, beta, y);
    case 8: return launch_vector<8>(cu, a, alpha, x, beta, y);
    case 16: return launch_vector<16>(cu, a, alpha, x, beta, y);
    case 32: return launch_vector<32>(cu, a, alpha, x, beta, y);
    default: return HS_FAIL(HS_ERR_RUNTIME, "SpMV: unsupported vector width %d", width);
    }
}

// ------------------------------------------------------------------ cuSPARSE

struct cusparse_state {
    cusparseSpMatDescr_t mat;
    cusparseDnVecDescr_t vx, vy;
    cusparseSpMVAlg_t alg;
    void *buffer;
    size_t buffer_bytes;
};

extern "C" void hs_csr_cusparse_free_cuda(void *state)
{
    cusparse_state *s = (cusparse_state *)state;
    if (!s) return;
    const hs_cusparse_api *cs; /* loaded: the state exists */
    if (hs_cusparse(&cs) == HS_OK) {
        if (s->mat) cs->DestroySpMat(s->mat);
        if (s->vx) cs->DestroyDnVec(s->vx);
        if (s->vy) cs->DestroyDnVec(s->vy);
    }
    if (s->buffer) cudaFree(s->buffer);
    free(s);
}

// Descriptors, the work buffer and the one-time analysis for this matrix and algorithm.
static int cusparse_setup(hs_cuda_ctx *cu, cusparse_state *s, const hs_csr_arrays *a, cusparseSpMVAlg_t alg,
                          const double *x, double *y)
{
    HS_CHECK(hs_cuda_cusparse_ready(cu));
    const hs_cusparse_api *cs;
    HS_CHECK(hs_cusparse(&cs));
    s->alg = alg;
    HS_CUSPARSE_CHECK(cs->CreateCsr(&s->mat, a->nrows, a->ncols, a->nnz, (void *)a->rowptr, (void *)a->colind,
                                        (void *)a->val, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                        CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
    HS_CUSPARSE_CHECK(cs->CreateDnVec(&s->vx, a->ncols, (void *)x, CUDA_R_64F));
    HS_CUSPARSE_CHECK(cs->CreateDnVec(&s->vy, a->nrows, (void *)y, CUDA_R_64F));
    const double one = 1.0;
    HS_CUSPARSE_CHECK(cs->SpMV_bufferSize(cu->cusparse, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, s->mat, s->vx, &one,
                                              s->vy, CUDA_R_64F, alg, &s->buffer_bytes));
    if (s->buffer_bytes) HS_CUDA_CHECK(cudaMalloc(&s->buffer, s->buffer_bytes));
    HS_CUSPARSE_CHECK(cs->SpMV_preprocess(cu->cusparse, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, s->mat, s->vx,
                                              &one, s->vy, CUDA_R_64F, alg, s->buffer));
    return HS_OK;
}

static int cusparse_state_for(hs_cuda_ctx *cu, void **state, const hs_csr_arrays *a, cusparseSpMVAlg_t alg,
                              const double *x, double *y)
{
    cusparse_state *s = (cusparse_state *)*state;
    if (s && s->alg == alg) return HS_OK;
    hs_csr_cusparse_free_cuda(s);
    *state = NULL;
    s = (cusparse_state *)calloc(1, sizeof *s);
    if (!s) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory for the cuSPARSE state");
    int rc = cusparse_setup(cu, s, a, alg, x, y);
    if (rc != HS_OK) {
        hs_csr_cusparse_free_cuda(s);
        return rc;
    }
    *state = s;
    return HS_OK;
}

extern "C" int hs_csr_spmv_cusparse_cuda(hs_cuda_ctx *cu, void **state, const hs_csr_arrays *a, int alg,
                                         double alpha, const double *x, double beta, double *y)
{
    HS_CHECK(hs_cuda_cusparse_ready(cu));
    cusparseSpMVAlg_t calg = alg == HS_CUSPARSE_ALG2 ? CUSPARSE_SPMV_CSR_ALG2 : CUSPARSE_SPMV_CSR_ALG1;
    HS_CHECK(cusparse_state_for(cu, state, a, calg, x, y));
    const hs_cusparse_api *cs;
    HS_CHECK(hs_cusparse(&cs));
    cusparse_state *s = (cusparse_state *)*state;
    // the descriptors are cached; only the vectors' addresses change from call to call
    HS_CUSPARSE_CHECK(cs->DnVecSetValues(s->vx, (void *)x));
    HS_CUSPARSE_CHECK(cs->DnVecSetValues(s->vy, (void *)y));
    // the handle is shared with other families: make sure alpha and beta are read from the host
    HS_CUSPARSE_CHECK(cs->SetPointerMode(cu->cusparse, CUSPARSE_POINTER_MODE_HOST));
    HS_CUSPARSE_CHECK(cs->SpMV(cu->cusparse, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, s->mat, s->vx, &beta, s->vy,
                                   CUDA_R_64F, calg, s->buffer));
    return HS_OK;
}

// ------------------------------------------------------------------ diagonal, Jacobi inverse, packing

__global__ void csr_diagonal_kernel(int64_t nrows, const int32_t *__restrict__ rowptr,
                                    const int32_t *__restrict__ colind, const double *__restrict__ val,
                                    double *__restrict__ d)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < nrows; i += (int64_t)gridDim.x * blockDim.x) {
        double s = 0.0;
        for (int32_t k = rowptr[i]; k < rowptr[i + 1]; k++)
            if (colind[k] == i) s += val[k];
        d[i] = s;
    }
}

extern "C" int hs_csr_diagonal_cuda(hs_cuda_ctx *cu, const hs_csr_arrays *a, double *d)
{
    if (a->nrows == 0) return HS_OK;
    int blocks = hs_cuda_blocks(cu, (size_t)a->nrows, kThreads);
    csr_diagonal_kernel<<<blocks, kThreads, 0, cu->stream>>>(a->nrows, a->rowptr, a->colind, a->val, d);
    HS_CUDA_LAUNCH_CHECK(csr_diagonal_kernel);
    return HS_OK;
}

// flags[0] counts the non-positive entries, flags[1] keeps the smallest such index.
__global__ void diag_inverse_kernel(int64_t n, const double *__restrict__ d, double *__restrict__ dinv,
                                    unsigned long long *flags)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        double v = d[i];
        if (v > 0.0) {
            dinv[i] = 1.0 / v;
        } else {
            dinv[i] = 0.0;
            atomicAdd(&flags[0], 1ull);
            atomicMin(&flags[1], (unsigned long long)i);
        }
    }
}

extern "C" int hs_csr_diag_inverse_cuda(hs_cuda_ctx *cu, int64_t n, const double *d, double *dinv, int64_t *nonpositive,
                                    int64_t *first_bad)
{
    unsigned long long *flags = nullptr, *host = nullptr;
    HS_CHECK(hs_cuda_scratch(cu, 2 * sizeof *flags, (void **)&flags));
    HS_CHECK(hs_cuda_host_scratch(cu, 2 * sizeof *host, (void **)&host));
    host[0] = 0;
    host[1] = ~0ull;
    HS_CUDA_CHECK(cudaMemcpyAsync(flags, host, 2 * sizeof *flags, cudaMemcpyHostToDevice, cu->stream));
    int blocks = hs_cuda_blocks(cu, (size_t)n, kThreads);
    diag_inverse_kernel<<<blocks, kThreads, 0, cu->stream>>>(n, d, dinv, flags);
    HS_CUDA_LAUNCH_CHECK(diag_inverse_kernel);
    HS_CUDA_CHECK(cudaMemcpyAsync(host, flags, 2 * sizeof *flags, cudaMemcpyDeviceToHost, cu->stream));
    HS_CUDA_CHECK(cudaStreamSynchronize(cu->stream));
    *nonpositive = (int64_t)host[0];
    *first_bad = host[0] ? (int64_t)host[1] : -1;
    return HS_OK;
}

__global__ void gather_kernel(int64_t n, const int32_t *__restrict__ idx, const double *__restrict__ x,
                              double *__restrict__ buf)
{
    for (int64_t k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; k < n; k += (int64_t)gridDim.x * blockDim.x)
        buf[k] = x[idx[k]];
}

extern "C" int hs_dcsr_gather_cuda(hs_cuda_ctx *cu, void *stream, int64_t n, const int32_t *idx, const double *x,
                              double *buf)
{
    if (n == 0) return HS_OK;
    cudaStream_t s = stream ? (cudaStream_t)stream : cu->stream;
    int blocks = hs_cuda_blocks(cu, (size_t)n, kThreads);
    gather_kernel<<<blocks, kThreads, 0, s>>>(n, idx, x, buf);
    HS_CUDA_LAUNCH_CHECK(gather_kernel);
    return HS_OK;
}
