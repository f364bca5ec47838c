// CUDA backend of the structured-grid family: halo pack/unpack box copies, fills, ghosts at walls, strided local reductions.
#include "kernels/cuda_util.h"
#include "kernels/grid/grid_impl.h"

#include <math.h>
#include <string.h>

#define THREADS 256                 // threads per block of every kernel here
#define SEG_PER_THREAD 16           // a work item covers up to blockDim.x * this many x cells
#define STAGE_BYTES (32u << 20)     // device staging per chunk of a host <-> device interior copy

static cudaStream_t pick(struct hs_cuda_ctx *cu, void *stream)
{
    return stream ? (cudaStream_t)stream : cu->stream;
}

// Work is split into items: one row (j, k) of the box, or a segment of it when rows are long (1D
// grids), so that a handful of long rows still fills the GPU.  Threads along x keep accesses coalesced.
struct rows_plan {
    dim3 block;
    int grid;
    long long nseg, seg_len, nitems;
};

static rows_plan plan_rows(const struct hs_cuda_ctx *cu, int64_t ex, int64_t ey, int64_t ez)
{
    rows_plan p;
    int bx = 32;
    while (bx < ex && bx < THREADS) bx *= 2;
    p.block = dim3(bx, THREADS / bx, 1);
    p.seg_len = (long long)bx * SEG_PER_THREAD;
    if (ex < p.seg_len) p.seg_len = ex > 0 ? ex : 1;
    p.nseg = (ex + p.seg_len - 1) / p.seg_len;
    p.nitems = (long long)ey * ez * p.nseg;
    p.grid = hs_cuda_blocks(cu, (size_t)p.nitems, (int)p.block.y);
    return p;
}

struct seg {
    long long j, k, i0, i1;
};

__device__ inline seg seg_of(long long v, long long nseg, long long seg_len, long long ex, long long ey)
{
    long long row = v / nseg, sg = v - row * nseg;
    seg s;
    s.k = row / ey;
    s.j = row - s.k * ey;
    s.i0 = sg * seg_len;
    s.i1 = s.i0 + seg_len < ex ? s.i0 + seg_len : ex;
    return s;
}

struct box_args {
    long long ex, ey, ssy, ssz, dsy, dsz;
};

static box_args to_args(const hs_grid_copy *b)
{
    box_args a = {b->ex, b->ey, b->src_sy, b->src_sz, b->dst_sy, b->dst_sz};
    return a;
}

// Boxes at least half a warp wide (y and z faces, interiors, CPML slabs): a warp copies one row at a
// time, its lanes along x; rows go over blockIdx.x and the warps of a block, planes over blockIdx.y,
// so that no thread divides.  (With one flat item index split by two 64-bit divisions for every
// element, ncu on the H200 showed the seismic checkpoints' slab copies at about 1 TB/s.)
constexpr int ROW_WARPS = 8;

template <typename T>
__device__ __forceinline__ void copy_rows(const T *__restrict__ src, T *__restrict__ dst, const box_args &a, long long ez)
{
    for (long long k = blockIdx.y; k < ez; k += gridDim.y)
        for (long long j = (long long)blockIdx.x * ROW_WARPS + threadIdx.y; j < a.ey; j += (long long)gridDim.x * ROW_WARPS) {
            const T *sp = src + j * a.ssy + k * a.ssz;
            T *dp = dst + j * a.dsy + k * a.dsz;
#pragma unroll 4
            for (long long i = threadIdx.x; i < a.ex; i += 32) dp[i] = sp[i];
        }
}

template <typename T>
__global__ void __launch_bounds__(32 * ROW_WARPS) copy_rows_kernel(const T *__restrict__ src, T *__restrict__ dst,
                                                                   box_args a, long long ez)
{
    copy_rows<T>(src, dst, a, ez);
}

// Narrow boxes (x faces, under 16 cells wide): consecutive threads take consecutive cells of the
// packed order, so a warp covers 32/ex rows and each row's cells are read by neighbouring lanes.
template <typename T, typename I>
__device__ __forceinline__ void copy_narrow(const T *__restrict__ src, T *__restrict__ dst, const box_args &a, I n)
{
    const I ex = (I)a.ex, ey = (I)a.ey;
    for (I idx = (I)blockIdx.x * blockDim.x + threadIdx.x; idx < n; idx += (I)gridDim.x * blockDim.x) {
        I row = idx / ex, i = idx - row * ex;
        I k = row / ey, j = row - k * ey;
        dst[(long long)j * a.dsy + (long long)k * a.dsz + i] = src[(long long)j * a.ssy + (long long)k * a.ssz + i];
    }
}

template <typename T, typename I>
__global__ void copy_narrow_kernel(const T *__restrict__ src, T *__restrict__ dst, box_args a, I n)
{
    copy_narrow<T, I>(src, dst, a, n);
}

// Many copies of one box shape in one launch (hs_grid_copy_boxes_cuda): the copy is blockIdx.z (rows)
// or blockIdx.y (narrow boxes).
constexpr int kBatchMax = 64;
struct batch_ptrs {
    const void *src[kBatchMax];
    void *dst[kBatchMax];
};

template <typename T>
__global__ void __launch_bounds__(32 * ROW_WARPS) copy_rows_batch_kernel(const __grid_constant__ batch_ptrs P, box_args a, long long ez)
{
    copy_rows<T>((const T *)P.src[blockIdx.z], (T *)P.dst[blockIdx.z], a, ez);
}

template <typename T>
__global__ void copy_narrow_batch_kernel(const __grid_constant__ batch_ptrs P, box_args a, unsigned long long n)
{
    copy_narrow<T, unsigned long long>((const T *)P.src[blockIdx.y], (T *)P.dst[blockIdx.y], a, n);
}

template <typename T>
static int copy_box_t(struct hs_cuda_ctx *cu, cudaStream_t s, const void *src, void *dst, const hs_grid_copy *b)
{
    box_args a = to_args(b);
    unsigned long long n = (unsigned long long)b->ex * b->ey * b->ez;
    if (b->ex >= 16) {
        const long long gx = (b->ey + ROW_WARPS - 1) / ROW_WARPS;
        const dim3 grid((unsigned)(gx < 1048576 ? gx : 1048576), (unsigned)(b->ez < 65535 ? b->ez : 65535));
        copy_rows_kernel<T><<<grid, dim3(32, ROW_WARPS), 0, s>>>((const T *)src, (T *)dst, a, (long long)b->ez);
        HS_CUDA_LAUNCH_CHECK(copy_rows_kernel);
    } else if (n < (1ull << 31)) {
        copy_narrow_kernel<T, unsigned><<<hs_cuda_blocks(cu, n, THREADS), THREADS, 0, s>>>((const T *)src, (T *)dst,
                                                                                          a, (unsigned)n);
        HS_CUDA_LAUNCH_CHECK(copy_narrow_kernel);
    } else {
        copy_narrow_kernel<T, unsigned long long><<<hs_cuda_blocks(cu, n, THREADS), THREADS, 0, s>>>(
            (const T *)src, (T *)dst, a, n);
        HS_CUDA_LAUNCH_CHECK(copy_narrow_kernel);
    }
    return HS_OK;
}

extern "C" int hs_grid_copy_box_cuda(struct hs_cuda_ctx *cu, void *stream, size_t esize, const void *src, void *dst,
                                     const hs_grid_copy *b)
{
    if (b->ex <= 0 || b->ey <= 0 || b->ez <= 0) return HS_OK;
    cudaStream_t s = pick(cu, stream);
    // copies move bits: integer types keep NaN payloads and signed zeros exactly
    if (esize == 8) return copy_box_t<unsigned long long>(cu, s, src, dst, b);
    if (esize == 4) return copy_box_t<unsigned>(cu, s, src, dst, b);
    if (esize == 2) return copy_box_t<unsigned short>(cu, s, src, dst, b);
    return HS_FAIL(HS_ERR_RUNTIME, "halo copy of %zu-byte elements is not supported", esize);
}

template <typename T>
static int copy_boxes_t(struct hs_cuda_ctx *cu, cudaStream_t s, const batch_ptrs &P, int count, const hs_grid_copy *b)
{
    box_args a = to_args(b);
    unsigned long long n = (unsigned long long)b->ex * b->ey * b->ez;
    if (b->ex >= 16) {
        const long long gx = (b->ey + ROW_WARPS - 1) / ROW_WARPS;
        const dim3 grid((unsigned)(gx < 1048576 ? gx : 1048576), (unsigned)(b->ez < 65535 ? b->ez : 65535), (unsigned)count);
        copy_rows_batch_kernel<T><<<grid, dim3(32, ROW_WARPS), 0, s>>>(P, a, (long long)b->ez);
        HS_CUDA_LAUNCH_CHECK(copy_rows_batch_kernel);
    } else {
        // the blocks of one copy: enough to fill the device once over all the copies
        int bx = hs_cuda_blocks(cu, n, THREADS) / count;
        bx = bx < 1 ? 1 : bx;
        copy_narrow_batch_kernel<T><<<dim3((unsigned)bx, (unsigned)count, 1), THREADS, 0, s>>>(P, a, n);
        HS_CUDA_LAUNCH_CHECK(copy_narrow_batch_kernel);
    }
    return HS_OK;
}

extern "C" int hs_grid_copy_boxes_cuda(struct hs_cuda_ctx *cu, void *stream, size_t esize, int n, const void *const *src,
                                       void *const *dst, const hs_grid_copy *b)
{
    if (b->ex <= 0 || b->ey <= 0 || b->ez <= 0) return HS_OK;
    cudaStream_t s = pick(cu, stream);
    for (int first = 0; first < n; first += kBatchMax) {
        const int count = n - first < kBatchMax ? n - first : kBatchMax;
        batch_ptrs P;
        memset(&P, 0, sizeof P);
        for (int c = 0; c < count; c++) P.src[c] = src[first + c], P.dst[c] = dst[first + c];
        if (esize == 8) HS_CHECK(copy_boxes_t<unsigned long long>(cu, s, P, count, b));
        else if (esize == 4) HS_CHECK(copy_boxes_t<unsigned>(cu, s, P, count, b));
        else if (esize == 2) HS_CHECK(copy_boxes_t<unsigned short>(cu, s, P, count, b));
        else return HS_FAIL(HS_ERR_RUNTIME, "halo copy of %zu-byte elements is not supported", esize);
    }
    return HS_OK;
}

static cudaPitchedPtr pitched(const void *p, int64_t sy, int64_t sz, size_t es, int64_t ex)
{
    return make_cudaPitchedPtr((void *)p, (size_t)sy * es, (size_t)ex * es, (size_t)(sz / sy));
}

extern "C" int hs_grid_copy_box_memcpy3d_cuda(struct hs_cuda_ctx *cu, void *stream, size_t esize, const void *src,
                                              void *dst, const hs_grid_copy *b)
{
    if (b->ex <= 0 || b->ey <= 0 || b->ez <= 0) return HS_OK;
    if (b->src_sz % b->src_sy || b->dst_sz % b->dst_sy)
        return HS_FAIL(HS_ERR_RUNTIME, "cudaMemcpy3D needs whole rows per plane (strides %lld/%lld, %lld/%lld)",
                       (long long)b->src_sy, (long long)b->src_sz, (long long)b->dst_sy, (long long)b->dst_sz);
    cudaMemcpy3DParms m;
    memset(&m, 0, sizeof m);
    m.srcPtr = pitched(src, b->src_sy, b->src_sz, esize, b->ex);
    m.dstPtr = pitched(dst, b->dst_sy, b->dst_sz, esize, b->ex);
    m.extent = make_cudaExtent((size_t)b->ex * esize, (size_t)b->ey, (size_t)b->ez);
    m.kind = cudaMemcpyDeviceToDevice;
    HS_CUDA_CHECK(cudaMemcpy3DAsync(&m, pick(cu, stream)));
    return HS_OK;
}

template <typename T>
__global__ void fill_kernel(T *x, size_t n, T value)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        x[i] = value;
}

extern "C" int hs_grid_fill_cuda(struct hs_cuda_ctx *cu, hs_dtype t, void *x, size_t n, double value)
{
    if (n == 0) return HS_OK;
    int blocks = hs_cuda_blocks(cu, n, THREADS);
    if (t == HS_F64) fill_kernel<double><<<blocks, THREADS, 0, cu->stream>>>((double *)x, n, value);
    else fill_kernel<float><<<blocks, THREADS, 0, cu->stream>>>((float *)x, n, (float)value);
    HS_CUDA_LAUNCH_CHECK(fill_kernel);
    return HS_OK;
}

// ------------------------------------------------------------------ ghosts at physical boundaries

// One thread per (a, b) column of the face, as the CPU twin's loop body (hs_grid_ghost_pair and
// hs_grid_ghost_value are shared verbatim).
template <typename T>
__global__ void ghosts_kernel(const hs_grid_ghosts G, T *u)
{
    int d = G.dim, e1 = (d + 1) % 3, e2 = (d + 2) % 3;
    long long n1 = G.local[e1] + 2 * G.hw[e1], n2 = G.local[e2] + 2 * G.hw[e2];
    for (long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x; t < n1 * n2;
         t += (long long)gridDim.x * blockDim.x) {
        long long a = t % n1, b = t / n1;
        long long base = G.origin + (a - G.hw[e1]) * G.stride[e1] + (b - G.hw[e2]) * G.stride[e2];
        if (G.node && G.kind == 1) u[base + (G.side ? G.local[d] - 1 : 0) * G.stride[d]] = (T)G.value;
        for (int m = 0; m < G.hw[d]; m++) {
            int64_t gh, in;
            hs_grid_ghost_pair(&G, m, &gh, &in);
            u[base + gh * G.stride[d]] = (T)hs_grid_ghost_value(G.kind, G.node, u[base + in * G.stride[d]], m, G.value, G.dx);
        }
    }
}

extern "C" int hs_grid_ghosts_cuda(struct hs_cuda_ctx *cu, hs_dtype t, const hs_grid_ghosts *G, void *data)
{
    int d = G->dim, e1 = (d + 1) % 3, e2 = (d + 2) % 3;
    int64_t n = (G->local[e1] + 2 * G->hw[e1]) * (G->local[e2] + 2 * G->hw[e2]);
    if (n <= 0 || (G->hw[d] == 0 && !(G->node && G->kind == 1))) return HS_OK;
    int blocks = hs_cuda_blocks(cu, (size_t)n, THREADS);
    if (t == HS_F64) ghosts_kernel<double><<<blocks, THREADS, 0, cu->stream>>>(*G, (double *)data);
    else ghosts_kernel<float><<<blocks, THREADS, 0, cu->stream>>>(*G, (float *)data);
    HS_CUDA_LAUNCH_CHECK(ghosts_kernel);
    return HS_OK;
}

// ------------------------------------------------------------------ reductions

// Error-free accumulation (two-sum) with explicit rounding so that no contraction changes it.
__device__ inline void acc_sum(double &s, double &c, double x)
{
    double t = __dadd_rn(s, x), bp = __dsub_rn(t, s);
    c = __dadd_rn(c, __dadd_rn(__dsub_rn(s, __dsub_rn(t, bp)), __dsub_rn(x, bp)));
    s = t;
}

template <int OP>
__device__ inline void acc(double &s, double &c, double x)
{
    if (OP == HS_GRID_RED_SUM) acc_sum(s, c, x);
    else if (OP == HS_GRID_RED_SUMSQ) acc_sum(s, c, __dmul_rn(x, x));
    else if (OP == HS_GRID_RED_MIN) s = hs_grid_min_nan(s, x);
    else if (OP == HS_GRID_RED_MAX) s = hs_grid_max_nan(s, x);
    else s = hs_grid_max_nan(s, fabs(x));
}

template <int OP>
__host__ __device__ inline double neutral()
{
    return OP == HS_GRID_RED_MIN ? INFINITY : OP == HS_GRID_RED_MAX ? -INFINITY : 0.0;
}

// Each block leaves (sum, compensation) -- or (min/max, 0) -- in partials[2 * block]; the tree has a
// fixed shape, so the result is the same run to run.
template <typename T, int OP>
__global__ void reduce_kernel(const T *__restrict__ src, long long ex, long long ey, long long sy, long long sz,
                              long long nseg, long long seg_len, long long nitems, double *partials)
{
    __shared__ double sh_s[THREADS], sh_c[THREADS];
    double s = neutral<OP>(), c = 0.0;
    for (long long v = (long long)blockIdx.x * blockDim.y + threadIdx.y; v < nitems;
         v += (long long)gridDim.x * blockDim.y) {
        seg g = seg_of(v, nseg, seg_len, ex, ey);
        const T *row = src + g.j * sy + g.k * sz;
        for (long long i = g.i0 + threadIdx.x; i < g.i1; i += blockDim.x) acc<OP>(s, c, (double)row[i]);
    }
    const int tid = threadIdx.y * blockDim.x + threadIdx.x;
    sh_s[tid] = s;
    sh_c[tid] = c;
    __syncthreads();
    for (int w = THREADS / 2; w > 0; w >>= 1) {
        if (tid < w) {
            if (OP == HS_GRID_RED_SUM || OP == HS_GRID_RED_SUMSQ) {
                double a = sh_s[tid], ac = sh_c[tid];
                acc_sum(a, ac, sh_s[tid + w]);
                sh_s[tid] = a;
                sh_c[tid] = __dadd_rn(ac, sh_c[tid + w]);
            } else {
                double other = sh_s[tid + w];
                sh_s[tid] = OP == HS_GRID_RED_MIN ? hs_grid_min_nan(sh_s[tid], other) : hs_grid_max_nan(sh_s[tid], other);
            }
        }
        __syncthreads();
    }
    if (tid == 0) {
        partials[2 * blockIdx.x] = sh_s[0];
        partials[2 * blockIdx.x + 1] = sh_c[0];
    }
}

template <typename T, int OP>
static int launch_reduce_op(struct hs_cuda_ctx *cu, const rows_plan &p, const void *src, int64_t ex, int64_t ey,
                            int64_t sy, int64_t sz, double *part)
{
    reduce_kernel<T, OP><<<p.grid, p.block, 0, cu->stream>>>((const T *)src, ex, ey, sy, sz, p.nseg, p.seg_len,
                                                              p.nitems, part);
    HS_CUDA_LAUNCH_CHECK(reduce_kernel);
    return HS_OK;
}

template <typename T>
static int launch_reduce(struct hs_cuda_ctx *cu, int op, const rows_plan &p, const void *src, int64_t ex, int64_t ey,
                         int64_t sy, int64_t sz, double *part)
{
    switch (op) {
    case HS_GRID_RED_SUM: return launch_reduce_op<T, HS_GRID_RED_SUM>(cu, p, src, ex, ey, sy, sz, part);
    case HS_GRID_RED_SUMSQ: return launch_reduce_op<T, HS_GRID_RED_SUMSQ>(cu, p, src, ex, ey, sy, sz, part);
    case HS_GRID_RED_MIN: return launch_reduce_op<T, HS_GRID_RED_MIN>(cu, p, src, ex, ey, sy, sz, part);
    case HS_GRID_RED_MAX: return launch_reduce_op<T, HS_GRID_RED_MAX>(cu, p, src, ex, ey, sy, sz, part);
    case HS_GRID_RED_MAXABS: return launch_reduce_op<T, HS_GRID_RED_MAXABS>(cu, p, src, ex, ey, sy, sz, part);
    default: return HS_FAIL(HS_ERR_RUNTIME, "unknown grid reduction %d", op);
    }
}

static void host_acc_sum(double *s, double *c, double x)
{
    double t = *s + x, bp = t - *s;
    *c += (*s - (t - bp)) + (x - bp);
    *s = t;
}

extern "C" int hs_grid_reduce_cuda(struct hs_cuda_ctx *cu, hs_dtype t, const void *src, int64_t ex, int64_t ey,
                                   int64_t ez, int64_t sy, int64_t sz, int op, double *result)
{
    int is_sum = op == HS_GRID_RED_SUM || op == HS_GRID_RED_SUMSQ;
    double m = op == HS_GRID_RED_MIN ? INFINITY : op == HS_GRID_RED_MAX ? -INFINITY : 0.0;
    *result = is_sum ? 0.0 : m;
    if (ex <= 0 || ey <= 0 || ez <= 0) return HS_OK;
    rows_plan p = plan_rows(cu, ex, ey, ez);
    size_t bytes = 2 * (size_t)p.grid * sizeof(double);
    void *part = NULL, *host = NULL;
    HS_CHECK(hs_cuda_scratch(cu, bytes, &part));
    if (t == HS_F64) HS_CHECK(launch_reduce<double>(cu, op, p, src, ex, ey, sy, sz, (double *)part));
    else HS_CHECK(launch_reduce<float>(cu, op, p, src, ex, ey, sy, sz, (double *)part));
    HS_CHECK(hs_cuda_fetch(cu, part, bytes, &host));
    const double *h = (const double *)host;
    double s = 0, c = 0;
    for (int b = 0; b < p.grid; b++) {
        if (is_sum) {
            host_acc_sum(&s, &c, h[2 * b]);
            host_acc_sum(&s, &c, h[2 * b + 1]);
        } else {
            m = op == HS_GRID_RED_MIN ? hs_grid_min_nan(m, h[2 * b]) : hs_grid_max_nan(m, h[2 * b]);
        }
    }
    *result = is_sum ? s + c : m;
    return HS_OK;
}

// ------------------------------------------------------------------ interiors to and from the host

// Move a strided device box to/from a contiguous host array one chunk (whole planes, or rows of one
// plane) at a time through the context's scratch, so that no second full-size device array is needed.
static int stage_chunk(struct hs_cuda_ctx *cu, size_t es, char *dev, int64_t ex, int64_t ny, int64_t nz, int64_t sy,
                       int64_t sz, char *host, void *scratch, int to_host)
{
    size_t bytes = (size_t)(ex * ny * nz) * es;
    if (to_host) {
        hs_grid_copy b = {ex, ny, nz, sy, sz, ex, ex * ny};
        HS_CHECK(hs_grid_copy_box_cuda(cu, NULL, es, dev, scratch, &b));
        HS_CUDA_CHECK(cudaMemcpyAsync(host, scratch, bytes, cudaMemcpyDeviceToHost, cu->stream));
        HS_CUDA_CHECK(cudaStreamSynchronize(cu->stream));
    } else {
        hs_grid_copy b = {ex, ny, nz, ex, ex * ny, sy, sz};
        HS_CUDA_CHECK(cudaMemcpyAsync(scratch, host, bytes, cudaMemcpyHostToDevice, cu->stream));
        HS_CHECK(hs_grid_copy_box_cuda(cu, NULL, es, scratch, dev, &b));
    }
    return HS_OK;
}

static int stage_box(struct hs_cuda_ctx *cu, size_t es, char *dev, int64_t ex, int64_t ey, int64_t ez, int64_t sy,
                     int64_t sz, char *host, int to_host)
{
    if (ex <= 0 || ey <= 0 || ez <= 0) return HS_OK;
    size_t row = (size_t)ex * es;
    int64_t rows_per = STAGE_BYTES / row > 0 ? (int64_t)(STAGE_BYTES / row) : 1;
    void *scratch = NULL;
    if (rows_per >= ey) {
        int64_t planes = rows_per / ey;
        if (planes > ez) planes = ez;
        HS_CHECK(hs_cuda_scratch(cu, (size_t)(planes * ey) * row, &scratch));
        for (int64_t k = 0; k < ez; k += planes) {
            int64_t nz = ez - k < planes ? ez - k : planes;
            HS_CHECK(stage_chunk(cu, es, dev + (size_t)(k * sz) * es, ex, ey, nz, sy, sz,
                                 host + (size_t)(k * ey) * row, scratch, to_host));
        }
    } else {
        HS_CHECK(hs_cuda_scratch(cu, (size_t)rows_per * row, &scratch));
        for (int64_t k = 0; k < ez; k++)
            for (int64_t j = 0; j < ey; j += rows_per) {
                int64_t ny = ey - j < rows_per ? ey - j : rows_per;
                HS_CHECK(stage_chunk(cu, es, dev + (size_t)(k * sz + j * sy) * es, ex, ny, 1, sy, sz,
                                     host + (size_t)(k * ey + j) * row, scratch, to_host));
            }
    }
    // the caller may reuse or free its host array as soon as we return
    HS_CUDA_CHECK(cudaStreamSynchronize(cu->stream));
    return HS_OK;
}

extern "C" int hs_grid_box_to_host_cuda(struct hs_cuda_ctx *cu, size_t esize, const void *dev, int64_t ex, int64_t ey,
                                        int64_t ez, int64_t sy, int64_t sz, void *host)
{
    return stage_box(cu, esize, (char *)dev, ex, ey, ez, sy, sz, (char *)host, 1);
}

extern "C" int hs_grid_box_from_host_cuda(struct hs_cuda_ctx *cu, size_t esize, const void *host, void *dev,
                                          int64_t ex, int64_t ey, int64_t ez, int64_t sy, int64_t sz)
{
    return stage_box(cu, esize, (char *)dev, ex, ey, ez, sy, sz, (char *)host, 0);
}

// ------------------------------------------------------------------ streams and events

extern "C" int hs_grid_stream_create_cuda(void **stream)
{
    int least = 0, greatest = 0;
    HS_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    cudaStream_t s;
    HS_CUDA_CHECK(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, greatest));
    *stream = (void *)s;
    return HS_OK;
}

extern "C" int hs_grid_event_create_cuda(void **event)
{
    cudaEvent_t e;
    HS_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    *event = (void *)e;
    return HS_OK;
}

extern "C" int hs_grid_event_done_cuda(void *event, int *done)
{
    cudaError_t e = cudaEventQuery((cudaEvent_t)event);
    *done = e == cudaSuccess;
    if (e == cudaErrorNotReady) {
        // "not ready" is an answer, not a failure: keep it out of the next launch check
        if (cudaPeekAtLastError() == cudaErrorNotReady) (void)cudaGetLastError();
        return HS_OK;
    }
    HS_CUDA_CHECK(e);
    return HS_OK;
}

extern "C" int hs_grid_event_sync_cuda(void *event)
{
    HS_CUDA_CHECK(cudaEventSynchronize((cudaEvent_t)event));
    return HS_OK;
}
