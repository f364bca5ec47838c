// CUDA backend of the finite-element assembly: one thread per element, gathers through the scatter map, Dirichlet rows.
#include "kernels/cuda_util.h"
#include "solvers/fem/fem_impl.h"

static const int kThreads = 128;

__global__ void cells_kernel(hs_fem_kargs a)
{
    for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < a.ncells; e += (int64_t)gridDim.x * blockDim.x)
        hs_fem_cell(&a, e);
}

__global__ void facets_kernel(hs_fem_kargs a)
{
    for (int64_t f = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; f < a.nfacets; f += (int64_t)gridDim.x * blockDim.x)
        hs_fem_facet(&a, f);
}

// One thread per output entry: its few map entries summed in the map's order (reproducible).
__global__ void gather_kernel(int64_t n, const int64_t *__restrict__ ptr, const int64_t *__restrict__ idx,
                              const double *__restrict__ buf, double *__restrict__ out)
{
    for (int64_t k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; k < n; k += (int64_t)gridDim.x * blockDim.x)
        hs_fem_gather_one(k, ptr, idx, buf, out);
}

__global__ void dirichlet_kernel(int64_t n, const int64_t *__restrict__ row, const int64_t *__restrict__ diag,
                                 const double *__restrict__ val, const double *__restrict__ g, double *__restrict__ b)
{
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
        b[row[i]] = val[diag[i]] * g[i];
}

extern "C" int hs_fem_elements_cuda(struct hs_cuda_ctx *cu, const hs_fem_kargs *a)
{
    if (a->ncells > 0) {
        cells_kernel<<<hs_cuda_blocks(cu, (size_t)a->ncells, kThreads), kThreads, 0, cu->stream>>>(*a);
        HS_CUDA_LAUNCH_CHECK("cells_kernel");
    }
    if (a->nfacets > 0) {
        facets_kernel<<<hs_cuda_blocks(cu, (size_t)a->nfacets, kThreads), kThreads, 0, cu->stream>>>(*a);
        HS_CUDA_LAUNCH_CHECK("facets_kernel");
    }
    return HS_OK;
}

extern "C" int hs_fem_gather_cuda(struct hs_cuda_ctx *cu, int64_t n, const int64_t *ptr, const int64_t *idx,
                                  const double *buf, double *out)
{
    if (n <= 0) return HS_OK;
    gather_kernel<<<hs_cuda_blocks(cu, (size_t)n, 256), 256, 0, cu->stream>>>(n, ptr, idx, buf, out);
    HS_CUDA_LAUNCH_CHECK("gather_kernel");
    return HS_OK;
}

extern "C" int hs_fem_dirichlet_cuda(struct hs_cuda_ctx *cu, int64_t n, const int64_t *row, const int64_t *diag,
                                     const double *val, const double *g, double *b)
{
    if (n <= 0) return HS_OK;
    dirichlet_kernel<<<hs_cuda_blocks(cu, (size_t)n, 256), 256, 0, cu->stream>>>(n, row, diag, val, g, b);
    HS_CUDA_LAUNCH_CHECK("dirichlet_kernel");
    return HS_OK;
}
