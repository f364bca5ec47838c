// Convolution family, CUDA backend: cuDNN convolutions (im2col + cuBLAS without it), bias, casts, fused ConvLSTM gates.
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "kernels/blas/blas_impl.h"
#include "kernels/cuda_backend.h"
#include "kernels/cuda_block_reduce.cuh"
#include "kernels/cuda_util.h"
#include "kernels/error.h"
#include "kernels/half_cuda.cuh"
#include "kernels/nn/conv_impl.h"
#include "kernels/nn/conv_point.h"

#if HS_HAVE_CUDNN
#include <cudnn.h>
#endif

namespace {

constexpr int kThreads = 256;

using hs::bf16s;
using hs::f16s;
using hs::tr;

__device__ __forceinline__ void lstm_fwd(float zi, float zf, float zg, float zo, float cp, float *i, float *f, float *g,
                                         float *o, float *c, float *h)
{
    hs_conv_lstm_fwd_f(zi, zf, zg, zo, cp, i, f, g, o, c, h);
}
__device__ __forceinline__ void lstm_fwd(double zi, double zf, double zg, double zo, double cp, double *i, double *f,
                                         double *g, double *o, double *c, double *h)
{
    hs_conv_lstm_fwd_d(zi, zf, zg, zo, cp, i, f, g, o, c, h);
}
__device__ __forceinline__ void lstm_bwd(float i, float f, float g, float o, float cp, float c, float dh, float *dc,
                                         float *di, float *df, float *dg, float *dout)
{
    hs_conv_lstm_bwd_f(i, f, g, o, cp, c, dh, dc, di, df, dg, dout);
}
__device__ __forceinline__ void lstm_bwd(double i, double f, double g, double o, double cp, double c, double dh,
                                         double *dc, double *di, double *df, double *dg, double *dout)
{
    hs_conv_lstm_bwd_d(i, f, g, o, cp, c, dh, dc, di, df, dg, dout);
}

// ------------------------------------------------------------------ ConvLSTM gates

// The pointwise kernels walk (plane, pixel) on a 2D grid: y the plane (image x channel, strided
// past the grid's 65,535), x the pixel.  A flat index would need two 64-bit divisions per element to
// find its image and channel, which cost more than the element's memory traffic (the bf16 training
// step spent most of its pointwise time on them).
struct planes {
    int n, ch, hw;
};

__host__ dim3 plane_grid(const planes &P, int threads)
{
    long long rows = (long long)P.n * P.ch;
    return dim3((unsigned)((P.hw + threads - 1) / threads), (unsigned)(rows < 65535 ? rows : 65535));
}

// The thread's elements of the (plane, pixel) grid: f(img, cc, rem, e) with rem = cc hw + pixel the
// offset within the image and e = img ch hw + rem the element.
template <typename F> __device__ __forceinline__ void for_each_element(const planes &P, F f)
{
    const int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= P.hw) return;
    const size_t chw = (size_t)P.ch * P.hw;
    for (int row = blockIdx.y; row < P.n * P.ch; row += gridDim.y) {
        const int img = row / P.ch, cc = row - img * P.ch;
        const size_t rem = (size_t)cc * P.hw + p;
        f(img, cc, rem, img * chw + rem);
    }
}

// One thread per (image, channel, pixel): the four gates of that element, so every activation is
// evaluated once and z is overwritten in place.
template <typename T>
__global__ void lstm_fwd_kernel(planes P, T *__restrict__ z, const T *__restrict__ za, const T *__restrict__ b,
                                const typename tr<T>::R *__restrict__ cp, typename tr<T>::R *__restrict__ c,
                                T *__restrict__ h)
{
    typedef typename tr<T>::R R;
    const size_t chw = (size_t)P.ch * P.hw;
    for_each_element(P, [&](int img, int cc, size_t rem, size_t e) {
        T *zb = z + img * 4 * chw + rem;
        const T *ab = za ? za + img * 4 * chw + rem : nullptr;
        R zq[4];
#pragma unroll
        for (int q = 0; q < 4; q++)
            zq[q] = ab ? (R)((R)(tr<T>::ld(zb[q * chw]) + tr<T>::ld(ab[q * chw])) + tr<T>::ld(b[q * P.ch + cc]))
                       : (R)(tr<T>::ld(zb[q * chw]) + tr<T>::ld(b[q * P.ch + cc]));
        R i, f, g, o, cn, hn;
        lstm_fwd(zq[0], zq[1], zq[2], zq[3], cp ? cp[e] : (R)0, &i, &f, &g, &o, &cn, &hn);
        zb[0] = tr<T>::st(i), zb[chw] = tr<T>::st(f), zb[2 * chw] = tr<T>::st(g), zb[3 * chw] = tr<T>::st(o);
        c[e] = cn;
        h[e] = tr<T>::st(hn);
    });
}

template <typename T>
__global__ void lstm_bwd_kernel(planes P, T *__restrict__ gz, const typename tr<T>::R *__restrict__ cp,
                                const typename tr<T>::R *__restrict__ c, const T *__restrict__ dh,
                                typename tr<T>::R *__restrict__ dc)
{
    typedef typename tr<T>::R R;
    const size_t chw = (size_t)P.ch * P.hw;
    for_each_element(P, [&](int img, int, size_t rem, size_t e) {
        T *gb = gz + img * 4 * chw + rem;
        R d = dc[e], di, df, dg, dout;
        lstm_bwd(tr<T>::ld(gb[0]), tr<T>::ld(gb[chw]), tr<T>::ld(gb[2 * chw]), tr<T>::ld(gb[3 * chw]),
                 cp ? cp[e] : (R)0, c[e], dh ? (R)tr<T>::ld(dh[e]) : (R)0, &d, &di, &df, &dg, &dout);
        gb[0] = tr<T>::st(di), gb[chw] = tr<T>::st(df), gb[2 * chw] = tr<T>::st(dg), gb[3 * chw] = tr<T>::st(dout);
        dc[e] = d;
    });
}

// ------------------------------------------------------------------ bias, casts, im2col

template <typename T>
__global__ void bias_add_kernel(planes P, const T *__restrict__ b, T *__restrict__ y)
{
    typedef typename tr<T>::R R;
    for_each_element(P, [&](int, int cc, size_t, size_t e) { y[e] = tr<T>::st((R)(tr<T>::ld(y[e]) + tr<T>::ld(b[cc]))); });
}

// The bias gradient in two deterministic passes.  Pass one: block (s, c) sums slice s of channel
// c's values in fp64 into part[c * slices + s]: a slice is a run of units, a unit one piece of one
// image's plane (pieces so that small batches of large planes still make enough blocks); each thread
// keeps four loads in flight (independent, added in a fixed order), then a fixed-order block sum.
// Pass two: a thread per channel adds its slices in order.  A block per channel (the first kernel)
// left most SMs idle, four blocks in all for the output head's four channels; one load in flight per
// thread (the second) moved 1.2 TB/s.
struct bias_units {
    int pieces;       // pieces per image plane
    int piece;        // pixels per piece
    int per_slice;    // units per slice
};

template <typename T>
__global__ void bias_grad_part_kernel(planes P, bias_units U, const T *__restrict__ dy, double *__restrict__ part)
{
    const int c = blockIdx.y, s = blockIdx.x, bd = blockDim.x;
    const long long units = (long long)P.n * U.pieces, u0 = (long long)s * U.per_slice;
    const long long u1 = u0 + U.per_slice < units ? u0 + U.per_slice : units;
    double acc = 0;
    for (long long u = u0; u < u1; u++) {
        const int img = (int)(u / U.pieces), piece = (int)(u - (long long)img * U.pieces);
        const int p0 = piece * U.piece, p1 = min(p0 + U.piece, P.hw);
        const T *row = dy + ((size_t)img * P.ch + c) * P.hw;
        for (int p = p0 + threadIdx.x; p < p1; p += 4 * bd) {
            const double v0 = (double)tr<T>::ld(row[p]);
            const double v1 = p + bd < p1 ? (double)tr<T>::ld(row[p + bd]) : 0.0;
            const double v2 = p + 2 * bd < p1 ? (double)tr<T>::ld(row[p + 2 * bd]) : 0.0;
            const double v3 = p + 3 * bd < p1 ? (double)tr<T>::ld(row[p + 3 * bd]) : 0.0;
            acc += v0, acc += v1, acc += v2, acc += v3;
        }
    }
    acc = hs_block_sum(acc);
    if (threadIdx.x == 0) part[(size_t)c * gridDim.x + s] = acc;
}

template <typename A>
__global__ void bias_grad_sum_kernel(int ch, int slices, const double *__restrict__ part, int accumulate, A *__restrict__ db)
{
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= ch) return;
    double s = 0;
    for (int k = 0; k < slices; k++) s += part[(size_t)c * slices + k];
    db[c] = tr<A>::from_double(accumulate ? s + (double)tr<A>::ld(db[c]) : s);
}

template <typename S, typename D>
__global__ void cast_kernel(size_t n, const S *__restrict__ src, int accumulate, D *__restrict__ dst)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        double v = (double)tr<S>::ld(src[i]);
        if (accumulate) v += (double)tr<D>::ld(dst[i]);
        dst[i] = tr<D>::from_double(v);
    }
}

// col[r, p] = x[ci, y + ky - ph, x + kx - pw] (zero outside), in the accumulation type.
template <typename T>
__global__ void im2col_kernel(int cin, int kh, int kw, int H, int W, const T *__restrict__ x,
                              typename tr<T>::R *__restrict__ col)
{
    typedef typename tr<T>::R R;
    size_t hw = (size_t)H * W, total = (size_t)cin * kh * kw * hw, stride = (size_t)gridDim.x * blockDim.x;
    for (size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += stride) {
        size_t r = e / hw, p = e - r * hw;
        int kx = (int)(r % kw), ky = (int)((r / kw) % kh), ci = (int)(r / ((size_t)kw * kh));
        int yy = (int)(p / W) + ky - kh / 2, xx = (int)(p % W) + kx - kw / 2;
        col[e] = (yy >= 0 && yy < H && xx >= 0 && xx < W) ? (R)tr<T>::ld(x[((size_t)ci * H + yy) * W + xx]) : (R)0;
    }
}

// The adjoint: acc[ci, yy, xx] = sum over (ky, kx), in that order, of dcol[r, yy - ky + ph, xx - kx + pw]
// (the CPU twin adds the kernel offsets in the same order, so both give the same bits).
template <typename R>
__global__ void col2im_kernel(int cin, int kh, int kw, int H, int W, const R *__restrict__ dcol, R *__restrict__ acc)
{
    size_t hw = (size_t)H * W, total = (size_t)cin * hw, stride = (size_t)gridDim.x * blockDim.x;
    for (size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += stride) {
        size_t ci = e / hw, q = e - ci * hw;
        int yy = (int)(q / W), xx = (int)(q % W);
        R s = 0;
        for (int ky = 0; ky < kh; ky++) {
            int y = yy - ky + kh / 2;
            if (y < 0 || y >= H) continue;
            for (int kx = 0; kx < kw; kx++) {
                int x = xx - kx + kw / 2;
                if (x < 0 || x >= W) continue;
                s += dcol[((ci * kh + ky) * kw + kx) * hw + (size_t)y * W + x];
            }
        }
        acc[e] = s;
    }
}

// dst = acc + beta dst, rounded to T once.
template <typename T>
__global__ void store_kernel(size_t n, const typename tr<T>::R *__restrict__ acc, int beta, T *__restrict__ dst)
{
    typedef typename tr<T>::R R;
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        dst[i] = tr<T>::st(beta ? (R)(acc[i] + tr<T>::ld(dst[i])) : acc[i]);
}

// Calls fn.template operator()<T>() for the element type t.
template <typename F> int by_type(hs_dtype t, F fn)
{
    switch (t) {
    case HS_F64: return fn(double());
    case HS_F32: return fn(float());
    case HS_BF16: return fn(bf16s());
    default: return fn(f16s());
    }
}

// ------------------------------------------------------------------ convolution state

#if HS_HAVE_CUDNN
// Up to kPlans batch sizes keep their descriptors and algorithms (the surrogate uses two or three).
constexpr int kPlans = 8;

#define HS_CUDNN_CHECK(call)                                                                          \
    do {                                                                                              \
        cudnnStatus_t hs_s_ = (call);                                                                 \
        if (hs_s_ != CUDNN_STATUS_SUCCESS)                                                            \
            return hs_error_raise(HS_ERR_RUNTIME, __FILE__, __LINE__, "cuDNN call %s failed: %s", #call, \
                                  cudnnGetErrorString(hs_s_));                                        \
    } while (0)

struct plan {
    int n;
    cudnnTensorDescriptor_t x, y;
    int have[3]; // forward, backward data, backward filter chosen
    cudnnConvolutionFwdAlgo_t fwd;
    cudnnConvolutionBwdDataAlgo_t bwd_data;
    cudnnConvolutionBwdFilterAlgo_t bwd_filter;
    size_t ws[3];
};
#endif

struct conv_cuda {
#if HS_HAVE_CUDNN
    cudnnFilterDescriptor_t w;
    cudnnConvolutionDescriptor_t conv;
    plan plans[kPlans];
    int nplans;
#endif
    int cudnn;                      // 1: cuDNN convolves; 0: im2col + cuBLAS
    void *col, *wbuf, *ybuf, *xbuf; // im2col path: work buffers in the accumulation type
};

// cuDNN unless the build lacks it or HS_CONV_IM2COL=1 asks for the im2col path.
int use_cudnn()
{
    const char *e = getenv("HS_CONV_IM2COL");
    return HS_HAVE_CUDNN && !(e && *e && strcmp(e, "0") != 0);
}

size_t acc_size(hs_dtype t) { return t == HS_F64 ? sizeof(double) : sizeof(float); }
hs_dtype acc_of(hs_dtype t) { return t == HS_F64 ? HS_F64 : HS_F32; }

#if HS_HAVE_CUDNN
// One cuDNN handle per device for the process (creating one takes a good fraction of a second),
// bound to the calling context's stream before each use.
cudnnHandle_t g_handles[HS_MAX_DEVICES];

int handle(struct hs_cuda_ctx *cu, cudnnHandle_t *h)
{
    HS_CHECK_DEVICE_MEMO(cu);
    if (!g_handles[cu->device]) {
        // cuDNN finds cuBLAS(Lt) already loaded, as when cuBLAS was linked (it is loaded on first use now)
        const hs_cublas_api *cb;
        HS_CHECK(hs_cublas(&cb));
        HS_CUDNN_CHECK(cudnnCreate(&g_handles[cu->device]));
    }
    HS_CUDNN_CHECK(cudnnSetStream(g_handles[cu->device], cu->stream));
    *h = g_handles[cu->device];
    return HS_OK;
}

cudnnDataType_t cudnn_type(hs_dtype t)
{
    switch (t) {
    case HS_F64: return CUDNN_DATA_DOUBLE;
    case HS_F32: return CUDNN_DATA_FLOAT;
    case HS_BF16: return CUDNN_DATA_BFLOAT16;
    default: return CUDNN_DATA_HALF;
    }
}

int create_cudnn(struct hs_conv *c, conv_cuda *s)
{
    HS_CUDNN_CHECK(cudnnCreateFilterDescriptor(&s->w));
    HS_CUDNN_CHECK(cudnnSetFilter4dDescriptor(s->w, cudnn_type(c->t), CUDNN_TENSOR_NCHW, c->cout, c->cin, c->kh, c->kw));
    HS_CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&s->conv));
    // 16-bit data are computed in fp32 (cuDNN's pseudo-half configurations)
    HS_CUDNN_CHECK(cudnnSetConvolution2dDescriptor(s->conv, c->kh / 2, c->kw / 2, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION,
                                                   c->t == HS_F64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT));
    // fp32 stays fp32 (FMA math: no TF32 tensor-core rounding of the inputs); 16-bit uses tensor cores
    cudnnMathType_t math = c->t == HS_BF16 || c->t == HS_F16 ? CUDNN_TENSOR_OP_MATH
                           : c->t == HS_F32                  ? CUDNN_FMA_MATH
                                                             : CUDNN_DEFAULT_MATH;
    HS_CUDNN_CHECK(cudnnSetConvolutionMathType(s->conv, math));
    return HS_OK;
}

int get_plan(struct hs_conv *c, conv_cuda *s, int n, plan **out)
{
    for (int i = 0; i < s->nplans; i++)
        if (s->plans[i].n == n) {
            *out = &s->plans[i];
            return HS_OK;
        }
    if (s->nplans == kPlans) { // forget the oldest
        cudnnDestroyTensorDescriptor(s->plans[0].x);
        cudnnDestroyTensorDescriptor(s->plans[0].y);
        memmove(&s->plans[0], &s->plans[1], (kPlans - 1) * sizeof(plan));
        s->nplans--;
    }
    plan *p = &s->plans[s->nplans];
    memset(p, 0, sizeof *p);
    p->n = n;
    HS_CUDNN_CHECK(cudnnCreateTensorDescriptor(&p->x));
    HS_CUDNN_CHECK(cudnnCreateTensorDescriptor(&p->y));
    s->nplans++;
    HS_CUDNN_CHECK(cudnnSetTensor4dDescriptor(p->x, CUDNN_TENSOR_NCHW, cudnn_type(c->t), n, c->cin, c->h, c->w));
    HS_CUDNN_CHECK(cudnnSetTensor4dDescriptor(p->y, CUDNN_TENSOR_NCHW, cudnn_type(c->t), n, c->cout, c->h, c->w));
    *out = p;
    return HS_OK;
}

// Work space cuDNN may use: algorithms needing more are passed over.
constexpr size_t kMaxWorkspace = (size_t)4 << 30;

// The algorithm of an operation: deterministic runs take cuDNN's heuristic ranking (a fixed choice
// for given shapes and device, so a rerun or a restart computes the same bits), keeping to
// deterministic algorithms; otherwise cudnnFind times them all and the fastest is kept.
template <typename Perf> int pick(const Perf *perf, int count, int need_deterministic)
{
    for (int i = 0; i < count; i++) {
        if (perf[i].status != CUDNN_STATUS_SUCCESS || perf[i].memory > kMaxWorkspace) continue;
        if (need_deterministic && perf[i].determinism != CUDNN_DETERMINISTIC) continue;
        return i;
    }
    return -1;
}

int choose(cudnnHandle_t h, struct hs_conv *c, conv_cuda *s, plan *p, int op)
{
    const int kMax = 16;
    int det = c->deterministic, got = 0, i = -1;
    if (op == 0) {
        cudnnConvolutionFwdAlgoPerf_t perf[kMax];
        if (det) HS_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(h, p->x, s->w, s->conv, p->y, kMax, &got, perf));
        else HS_CUDNN_CHECK(cudnnFindConvolutionForwardAlgorithm(h, p->x, s->w, s->conv, p->y, kMax, &got, perf));
        if ((i = pick(perf, got, 0)) >= 0) p->fwd = perf[i].algo, p->ws[0] = perf[i].memory;
    } else if (op == 1) {
        cudnnConvolutionBwdDataAlgoPerf_t perf[kMax];
        if (det) HS_CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithm_v7(h, s->w, p->y, s->conv, p->x, kMax, &got, perf));
        else HS_CUDNN_CHECK(cudnnFindConvolutionBackwardDataAlgorithm(h, s->w, p->y, s->conv, p->x, kMax, &got, perf));
        if ((i = pick(perf, got, det)) >= 0) p->bwd_data = perf[i].algo, p->ws[1] = perf[i].memory;
    } else {
        cudnnConvolutionBwdFilterAlgoPerf_t perf[kMax];
        if (det) HS_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, p->x, p->y, s->conv, s->w, kMax, &got, perf));
        else HS_CUDNN_CHECK(cudnnFindConvolutionBackwardFilterAlgorithm(h, p->x, p->y, s->conv, s->w, kMax, &got, perf));
        if ((i = pick(perf, got, det)) >= 0) p->bwd_filter = perf[i].algo, p->ws[2] = perf[i].memory;
    }
    if (i < 0)
        return HS_FAIL(HS_ERR_RUNTIME, "cuDNN offers no %salgorithm for the %s pass of a %dx%d convolution %d -> %d channels on %dx%d, %d images",
                       det && op ? "deterministic " : "", op == 0 ? "forward" : op == 1 ? "backward data" : "backward filter",
                       c->kh, c->kw, c->cin, c->cout, c->h, c->w, p->n);
    // the heuristics' workspace figure is an estimate: ask for the exact size of the chosen one
    if (op == 0) HS_CUDNN_CHECK(cudnnGetConvolutionForwardWorkspaceSize(h, p->x, s->w, s->conv, p->y, p->fwd, &p->ws[0]));
    else if (op == 1)
        HS_CUDNN_CHECK(cudnnGetConvolutionBackwardDataWorkspaceSize(h, s->w, p->y, s->conv, p->x, p->bwd_data, &p->ws[1]));
    else
        HS_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterWorkspaceSize(h, p->x, p->y, s->conv, s->w, p->bwd_filter, &p->ws[2]));
    p->have[op] = 1;
    return HS_OK;
}

// Everything one call needs: handle, plan with its algorithm, workspace.
int prepare(struct hs_cuda_ctx *cu, struct hs_conv *c, int n, int op, cudnnHandle_t *h, plan **p, void **ws)
{
    conv_cuda *s = (conv_cuda *)c->impl;
    HS_CHECK(handle(cu, h));
    HS_CHECK(get_plan(c, s, n, p));
    if (!(*p)->have[op]) HS_CHECK(choose(*h, c, s, *p, op));
    *ws = NULL;
    if ((*p)->ws[op]) HS_CHECK(hs_cuda_scratch(cu, (*p)->ws[op], ws));
    return HS_OK;
}

// A call cuDNN refuses for these particular pointers (its kernels want aligned addresses; a frame
// inside a sequence of odd-sized images may not be) goes through im2col + cuBLAS instead; every
// other failure is an error.
bool refused(cudnnStatus_t st) { return st == CUDNN_STATUS_NOT_SUPPORTED || st == CUDNN_STATUS_BAD_PARAM; }
#endif

// ------------------------------------------------------------------ im2col + cuBLAS (no cuDNN)

int alloc_im2col(struct hs_cuda_ctx *cu, struct hs_conv *c, conv_cuda *s)
{
    if (s->col) return HS_OK;
    size_t es = acc_size(c->t), hw = (size_t)c->h * c->w, ckk = (size_t)c->cin * c->kh * c->kw;
    HS_CHECK(hs_mem_alloc_cuda(cu, ckk * hw * es, &s->col));
    HS_CHECK(hs_mem_alloc_cuda(cu, ckk * (size_t)c->cout * es, &s->wbuf));
    HS_CHECK(hs_mem_alloc_cuda(cu, hw * (size_t)c->cout * es, &s->ybuf));
    HS_CHECK(hs_mem_alloc_cuda(cu, hw * (size_t)c->cin * es, &s->xbuf));
    return HS_OK;
}

int launch_im2col(struct hs_cuda_ctx *cu, const struct hs_conv *c, const void *x, void *col)
{
    size_t total = (size_t)c->cin * c->kh * c->kw * c->h * c->w;
    return by_type(c->t, [&](auto tag) -> int {
        typedef decltype(tag) T;
        im2col_kernel<T><<<hs_cuda_blocks(cu, total, kThreads), kThreads, 0, cu->stream>>>(
            c->cin, c->kh, c->kw, c->h, c->w, (const T *)x, (typename tr<T>::R *)col);
        HS_CUDA_LAUNCH_CHECK("im2col_kernel");
        return HS_OK;
    });
}

int launch_store(struct hs_cuda_ctx *cu, hs_dtype t, size_t n, const void *acc, double beta, void *dst)
{
    return by_type(t, [&](auto tag) -> int {
        typedef decltype(tag) T;
        store_kernel<T><<<hs_cuda_blocks(cu, n, kThreads), kThreads, 0, cu->stream>>>(
            n, (const typename tr<T>::R *)acc, beta != 0.0, (T *)dst);
        HS_CUDA_LAUNCH_CHECK("store_kernel");
        return HS_OK;
    });
}

int launch_cast(struct hs_cuda_ctx *cu, hs_dtype st, hs_dtype dt, size_t n, const void *src, int accumulate, void *dst)
{
    return by_type(st, [&](auto stag) -> int {
        typedef decltype(stag) S;
        return by_type(dt, [&](auto dtag) -> int {
            typedef decltype(dtag) D;
            cast_kernel<S, D><<<hs_cuda_blocks(cu, n, kThreads), kThreads, 0, cu->stream>>>(n, (const S *)src, accumulate,
                                                                                            (D *)dst);
            HS_CUDA_LAUNCH_CHECK("cast_kernel");
            return HS_OK;
        });
    });
}

// The weights in the accumulation type: the caller's array, or converted into wbuf.
int weights_acc(struct hs_cuda_ctx *cu, const struct hs_conv *c, conv_cuda *s, const void *w, const void **wa)
{
    *wa = w;
    if (c->t == HS_F64 || c->t == HS_F32) return HS_OK;
    HS_CHECK(launch_cast(cu, c->t, HS_F32, (size_t)c->cout * c->cin * c->kh * c->kw, w, 0, s->wbuf));
    *wa = s->wbuf;
    return HS_OK;
}

int forward_im2col(struct hs_cuda_ctx *cu, struct hs_conv *c, conv_cuda *s, int n, const void *x, const void *w,
                   double beta, void *y)
{
    hs_dtype at = acc_of(c->t);
    int hw = c->h * c->w, ckk = c->cin * c->kh * c->kw, direct = c->t == HS_F64 || c->t == HS_F32;
    size_t es = hs_dtype_size(c->t), xs = (size_t)c->cin * hw, ys = (size_t)c->cout * hw;
    const void *wa;
    HS_CHECK(weights_acc(cu, c, s, w, &wa));
    for (int i = 0; i < n; i++) {
        HS_CHECK(launch_im2col(cu, c, (const char *)x + i * xs * es, s->col));
        void *yi = (char *)y + i * ys * es;
        if (direct) {
            HS_CHECK(hs_blas_gemm_cuda(cu, at, 0, 0, hw, c->cout, ckk, 1.0, s->col, hw, wa, ckk, beta, yi, hw));
        } else {
            HS_CHECK(hs_blas_gemm_cuda(cu, at, 0, 0, hw, c->cout, ckk, 1.0, s->col, hw, wa, ckk, 0.0, s->ybuf, hw));
            HS_CHECK(launch_store(cu, c->t, ys, s->ybuf, beta, yi));
        }
    }
    return HS_OK;
}

int backward_data_im2col(struct hs_cuda_ctx *cu, struct hs_conv *c, conv_cuda *s, int n, const void *dy, const void *w,
                         double beta, void *dx)
{
    hs_dtype at = acc_of(c->t);
    int hw = c->h * c->w, ckk = c->cin * c->kh * c->kw;
    size_t es = hs_dtype_size(c->t), xs = (size_t)c->cin * hw, ys = (size_t)c->cout * hw;
    const void *wa;
    HS_CHECK(weights_acc(cu, c, s, w, &wa));
    for (int i = 0; i < n; i++) {
        const void *dyi = (const char *)dy + i * ys * es;
        if (c->t != at) {
            HS_CHECK(launch_cast(cu, c->t, at, ys, dyi, 0, s->ybuf));
            dyi = s->ybuf;
        }
        HS_CHECK(hs_blas_gemm_cuda(cu, at, 0, 1, hw, ckk, c->cout, 1.0, dyi, hw, wa, ckk, 0.0, s->col, hw));
        size_t total = xs;
        if (at == HS_F64)
            col2im_kernel<double><<<hs_cuda_blocks(cu, total, kThreads), kThreads, 0, cu->stream>>>(
                c->cin, c->kh, c->kw, c->h, c->w, (const double *)s->col, (double *)s->xbuf);
        else
            col2im_kernel<float><<<hs_cuda_blocks(cu, total, kThreads), kThreads, 0, cu->stream>>>(
                c->cin, c->kh, c->kw, c->h, c->w, (const float *)s->col, (float *)s->xbuf);
        HS_CUDA_LAUNCH_CHECK("col2im_kernel");
        HS_CHECK(launch_store(cu, c->t, xs, s->xbuf, beta, (char *)dx + i * xs * es));
    }
    return HS_OK;
}

int backward_filter_im2col(struct hs_cuda_ctx *cu, struct hs_conv *c, conv_cuda *s, int n, const void *x,
                           const void *dy, double beta, void *dw)
{
    hs_dtype at = acc_of(c->t);
    int hw = c->h * c->w, ckk = c->cin * c->kh * c->kw, direct = c->t == HS_F64 || c->t == HS_F32;
    size_t es = hs_dtype_size(c->t), xs = (size_t)c->cin * hw, ys = (size_t)c->cout * hw, nw = (size_t)ckk * c->cout;
    void *acc = direct ? dw : s->wbuf;
    double first = direct ? beta : 0.0;
    if (n == 0) HS_CUDA_CHECK(cudaMemsetAsync(acc, 0, nw * acc_size(c->t), cu->stream));
    for (int i = 0; i < n; i++) {
        HS_CHECK(launch_im2col(cu, c, (const char *)x + i * xs * es, s->col));
        const void *dyi = (const char *)dy + i * ys * es;
        if (!direct) {
            HS_CHECK(launch_cast(cu, c->t, at, ys, dyi, 0, s->ybuf));
            dyi = s->ybuf;
        }
        HS_CHECK(hs_blas_gemm_cuda(cu, at, 1, 0, ckk, c->cout, hw, 1.0, s->col, hw, dyi, hw, i == 0 ? first : 1.0, acc, ckk));
    }
    if (!direct) HS_CHECK(launch_store(cu, c->t, nw, s->wbuf, beta, dw));
    return HS_OK;
}

#if HS_HAVE_CUDNN
// alpha and beta as cuDNN reads them: double for double data, float otherwise.
struct scalars {
    double d[2];
    float f[2];
    const void *alpha(hs_dtype t) const { return t == HS_F64 ? (const void *)&d[0] : (const void *)&f[0]; }
    const void *beta(hs_dtype t) const { return t == HS_F64 ? (const void *)&d[1] : (const void *)&f[1]; }
};

scalars make_scalars(double beta)
{
    scalars s;
    s.d[0] = 1.0, s.d[1] = beta, s.f[0] = 1.0f, s.f[1] = (float)beta;
    return s;
}
#endif

} // namespace

// ------------------------------------------------------------------ entry points

extern "C" const char *hs_conv_engine_cuda(void) { return use_cudnn() ? "cudnn" : "im2col+cublas"; }

extern "C" int hs_conv_create_cuda(struct hs_cuda_ctx *cu, struct hs_conv *c)
{
    conv_cuda *s = (conv_cuda *)calloc(1, sizeof *s);
    if (!s) return HS_FAIL(HS_ERR_RUNTIME, "hs_conv_create: out of host memory");
    c->impl = s;
    s->cudnn = use_cudnn();
#if HS_HAVE_CUDNN
    if (s->cudnn) return create_cudnn(c, s);
#endif
    return alloc_im2col(cu, c, s);
}

extern "C" void hs_conv_destroy_cuda(struct hs_cuda_ctx *cu, struct hs_conv *c)
{
    conv_cuda *s = (conv_cuda *)c->impl;
    if (!s) return;
#if HS_HAVE_CUDNN
    for (int i = 0; i < s->nplans; i++) {
        cudnnDestroyTensorDescriptor(s->plans[i].x);
        cudnnDestroyTensorDescriptor(s->plans[i].y);
    }
    if (s->w) cudnnDestroyFilterDescriptor(s->w);
    if (s->conv) cudnnDestroyConvolutionDescriptor(s->conv);
#endif
    hs_mem_free_cuda(cu, s->col);
    hs_mem_free_cuda(cu, s->wbuf);
    hs_mem_free_cuda(cu, s->ybuf);
    hs_mem_free_cuda(cu, s->xbuf);
    free(s);
    c->impl = NULL;
}

extern "C" int hs_conv_forward_cuda(struct hs_cuda_ctx *cu, struct hs_conv *c, int n, const void *x, const void *w,
                                    double beta, void *y)
{
    conv_cuda *s = (conv_cuda *)c->impl;
#if HS_HAVE_CUDNN
    if (s->cudnn) {
        cudnnHandle_t h;
        plan *p;
        void *ws;
        HS_CHECK(prepare(cu, c, n, 0, &h, &p, &ws));
        scalars sc = make_scalars(beta);
        cudnnStatus_t st = cudnnConvolutionForward(h, sc.alpha(c->t), p->x, x, s->w, w, s->conv, p->fwd, ws, p->ws[0],
                                                   sc.beta(c->t), p->y, y);
        if (!refused(st)) {
            HS_CUDNN_CHECK(st);
            return HS_OK;
        }
        HS_CHECK(alloc_im2col(cu, c, s));
    }
#endif
    return forward_im2col(cu, c, s, n, x, w, beta, y);
}

extern "C" int hs_conv_backward_data_cuda(struct hs_cuda_ctx *cu, struct hs_conv *c, int n, const void *dy,
                                          const void *w, double beta, void *dx)
{
    conv_cuda *s = (conv_cuda *)c->impl;
#if HS_HAVE_CUDNN
    if (s->cudnn) {
        cudnnHandle_t h;
        plan *p;
        void *ws;
        HS_CHECK(prepare(cu, c, n, 1, &h, &p, &ws));
        scalars sc = make_scalars(beta);
        cudnnStatus_t st = cudnnConvolutionBackwardData(h, sc.alpha(c->t), s->w, w, p->y, dy, s->conv, p->bwd_data, ws,
                                                        p->ws[1], sc.beta(c->t), p->x, dx);
        if (!refused(st)) {
            HS_CUDNN_CHECK(st);
            return HS_OK;
        }
        HS_CHECK(alloc_im2col(cu, c, s));
    }
#endif
    return backward_data_im2col(cu, c, s, n, dy, w, beta, dx);
}

extern "C" int hs_conv_backward_filter_cuda(struct hs_cuda_ctx *cu, struct hs_conv *c, int n, const void *x,
                                            const void *dy, double beta, void *dw)
{
    conv_cuda *s = (conv_cuda *)c->impl;
#if HS_HAVE_CUDNN
    if (s->cudnn) {
        if (n == 0) { // beta == 0 here: the sum of nothing
            HS_CUDA_CHECK(cudaMemsetAsync(dw, 0, (size_t)c->cout * c->cin * c->kh * c->kw * hs_dtype_size(c->t), cu->stream));
            return HS_OK;
        }
        cudnnHandle_t h;
        plan *p;
        void *ws;
        HS_CHECK(prepare(cu, c, n, 2, &h, &p, &ws));
        scalars sc = make_scalars(beta);
        cudnnStatus_t st = cudnnConvolutionBackwardFilter(h, sc.alpha(c->t), p->x, x, p->y, dy, s->conv, p->bwd_filter,
                                                          ws, p->ws[2], sc.beta(c->t), s->w, dw);
        if (!refused(st)) {
            HS_CUDNN_CHECK(st);
            return HS_OK;
        }
        HS_CHECK(alloc_im2col(cu, c, s));
    }
#endif
    return backward_filter_im2col(cu, c, s, n, x, dy, beta, dw);
}

extern "C" int hs_conv_bias_add_cuda(struct hs_cuda_ctx *cu, hs_dtype t, int n, int ch, int hw, const void *b, void *y)
{
    const planes P = {n, ch, hw};
    return by_type(t, [&](auto tag) -> int {
        typedef decltype(tag) T;
        bias_add_kernel<T><<<plane_grid(P, kThreads), kThreads, 0, cu->stream>>>(P, (const T *)b, (T *)y);
        HS_CUDA_LAUNCH_CHECK("bias_add_kernel");
        return HS_OK;
    });
}

extern "C" int hs_conv_bias_grad_cuda(struct hs_cuda_ctx *cu, hs_dtype t, int n, int ch, int hw, const void *dy,
                                      double beta, void *db)
{
    const planes P = {n, ch, hw};
    // about eight blocks per SM over all channels, each summing at least 16 strides of 4 x 256 values
    // (planes cut into pieces when there are fewer images than blocks wanted)
    const long long want = (8LL * cu->sm_count + ch - 1) / ch, chunk = 16LL * 4 * kThreads;
    long long pieces = (want + n - 1) / n, most = ((long long)hw + chunk - 1) / chunk;
    if (pieces > most) pieces = most;
    if (pieces < 1) pieces = 1;
    bias_units U;
    U.pieces = (int)pieces;
    U.piece = (int)(((long long)hw + pieces - 1) / pieces);
    const long long units = (long long)n * pieces;
    long long slices = want < units ? want : units;
    if (slices > 65535) slices = 65535;
    U.per_slice = (int)((units + slices - 1) / slices);
    slices = (units + U.per_slice - 1) / U.per_slice;
    double *part;
    HS_CHECK(hs_cuda_scratch(cu, (size_t)ch * slices * sizeof(double), (void **)&part));
    return by_type(t, [&](auto tag) -> int {
        typedef decltype(tag) T;
        bias_grad_part_kernel<T><<<dim3((unsigned)slices, (unsigned)ch), kThreads, 0, cu->stream>>>(P, U, (const T *)dy, part);
        HS_CUDA_LAUNCH_CHECK("bias_grad_part_kernel");
        const int blocks = (ch + 127) / 128;
        if (t == HS_F64) bias_grad_sum_kernel<double><<<blocks, 128, 0, cu->stream>>>(ch, (int)slices, part, beta != 0.0, (double *)db);
        else bias_grad_sum_kernel<float><<<blocks, 128, 0, cu->stream>>>(ch, (int)slices, part, beta != 0.0, (float *)db);
        HS_CUDA_LAUNCH_CHECK("bias_grad_sum_kernel");
        return HS_OK;
    });
}

extern "C" int hs_conv_cast_cuda(struct hs_cuda_ctx *cu, hs_dtype st, hs_dtype dt, size_t n, const void *src,
                                 int accumulate, void *dst)
{
    return launch_cast(cu, st, dt, n, src, accumulate, dst);
}

extern "C" int hs_conv_lstm_forward_cuda(struct hs_cuda_ctx *cu, hs_dtype t, int n, int ch, int hw, void *z,
                                         const void *zadd, const void *b, const void *c_prev, void *c, void *h)
{
    const planes P = {n, ch, hw};
    return by_type(t, [&](auto tag) -> int {
        typedef decltype(tag) T;
        typedef typename tr<T>::R R;
        lstm_fwd_kernel<T><<<plane_grid(P, kThreads), kThreads, 0, cu->stream>>>(P, (T *)z, (const T *)zadd, (const T *)b,
                                                                                 (const R *)c_prev, (R *)c, (T *)h);
        HS_CUDA_LAUNCH_CHECK("lstm_fwd_kernel");
        return HS_OK;
    });
}

extern "C" int hs_conv_lstm_backward_cuda(struct hs_cuda_ctx *cu, hs_dtype t, int n, int ch, int hw, void *gates,
                                          const void *c_prev, const void *c, const void *dh, void *dc)
{
    const planes P = {n, ch, hw};
    return by_type(t, [&](auto tag) -> int {
        typedef decltype(tag) T;
        typedef typename tr<T>::R R;
        lstm_bwd_kernel<T><<<plane_grid(P, kThreads), kThreads, 0, cu->stream>>>(P, (T *)gates, (const R *)c_prev,
                                                                                 (const R *)c, (const T *)dh, (R *)dc);
        HS_CUDA_LAUNCH_CHECK("lstm_bwd_kernel");
        return HS_OK;
    });
}
