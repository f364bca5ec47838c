// Scans, CUDA backend: single pass over tiles with decoupled look-back (new) or a base-32 tree (old); CUB peer.
//
// Old implementation (HS_SCAN_IMPL=old, kept reachable; the new one is further down).  Each block
// scans one tile (tiles are numbered in the order blocks start, through an atomic counter, so
// every tile it waits for is already running).  Tile k publishes its total A0[k]; the
// tile that completes a group of 32 entries of level l-1 publishes their sum A_l[...].  The prefix
// of tile k is then the sum, level by level from the top, of the entries left of k's base-32
// digits: at most 31 values per level, each summed by one warp in a fixed butterfly.  Because the
// combination never depends on which predecessors happened to be finished, float results are
// bitwise reproducible, yet the data is read and written once (2n traffic).
#include "kernels/cuda_util.h"
#include "kernels/scan_impl.h"

#include <stdint.h>

#include <type_traits>

#include <cuda/atomic>
#include <cub/device/device_scan.cuh>

namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kMaxLevels = 7; // 32^7 tiles

template <typename T> struct acc_of { using type = T; };
template <> struct acc_of<float> { using type = double; };
template <> struct acc_of<int32_t> { using type = uint32_t; };
template <> struct acc_of<int64_t> { using type = unsigned long long; };
template <> struct acc_of<uint64_t> { using type = unsigned long long; };

struct levels {
    void *val[kMaxLevels];
    unsigned *flag[kMaxLevels];
    int count;
};

template <typename A> __device__ __forceinline__ void publish(A *val, unsigned *flag, size_t i, A v)
{
    val[i] = v;
    cuda::atomic_ref<unsigned, cuda::thread_scope_device> f(flag[i]);
    f.store(1u, cuda::memory_order_release);
}

template <typename A> __device__ __forceinline__ A wait_for(const A *val, unsigned *flag, size_t i)
{
    cuda::atomic_ref<unsigned, cuda::thread_scope_device> f(flag[i]);
    while (f.load(cuda::memory_order_acquire) == 0u) __nanosleep(32);
    return *reinterpret_cast<const volatile A *>(val + i); // a real load, after the acquire
}

// Butterfly sum: every lane ends with the same bits (a + b == b + a exactly).
template <typename A> __device__ __forceinline__ A warp_sum(A v)
{
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) v = v + __shfl_xor_sync(0xffffffffu, v, off);
    return v;
}

// Warp 0: publish this tile's total (and any completed group sums), then gather its prefix.
template <typename A> __device__ A tile_prefix(size_t tile, A total, const levels &lv)
{
    int lane = threadIdx.x & 31;
    if (lane == 0) publish<A>((A *)lv.val[0], lv.flag[0], tile, total);
    size_t span = 1;
    for (int l = 1; l < lv.count; l++) {
        span *= 32;
        if ((tile + 1) % span != 0) break;
        size_t m = (tile + 1) / span - 1;
        A v = warp_sum<A>(wait_for<A>((const A *)lv.val[l - 1], lv.flag[l - 1], m * 32 + lane));
        if (lane == 0) publish<A>((A *)lv.val[l], lv.flag[l], m, v);
    }
    A pre = A(0);
    bool any = false;
    for (int l = lv.count - 1; l >= 0; l--) {
        unsigned d = (unsigned)((tile >> (5 * l)) & 31);
        if (d == 0) continue;
        size_t base = (tile >> (5 * (l + 1))) << 5;
        A v = (unsigned)lane < d ? wait_for<A>((const A *)lv.val[l], lv.flag[l], base + lane) : A(0);
        v = warp_sum<A>(v);
        pre = any ? pre + v : v;
        any = true;
    }
    return pre;
}

// ITEMS consecutive elements per thread: 4 loads of 16 bytes when the tile is full and aligned.
template <typename T, typename A, int ITEMS>
__device__ __forceinline__ void load_items(const T *in, size_t first, size_t n, bool vec_ok, A a[ITEMS])
{
    alignas(16) T e[ITEMS];
    if (vec_ok) {
        const uint4 *p = reinterpret_cast<const uint4 *>(in + first);
#pragma unroll
        for (int k = 0; k < ITEMS * (int)sizeof(T) / 16; k++) reinterpret_cast<uint4 *>(e)[k] = p[k];
    } else {
#pragma unroll
        for (int i = 0; i < ITEMS; i++) e[i] = first + i < n ? in[first + i] : T(0);
    }
#pragma unroll
    for (int i = 0; i < ITEMS; i++) a[i] = (A)e[i];
}

template <typename T, int ITEMS>
__device__ __forceinline__ void store_items(T *out, size_t first, size_t n, bool vec_ok, const T e[ITEMS])
{
    if (vec_ok) {
        uint4 *p = reinterpret_cast<uint4 *>(out + first);
#pragma unroll
        for (int k = 0; k < ITEMS * (int)sizeof(T) / 16; k++) p[k] = reinterpret_cast<const uint4 *>(e)[k];
    } else {
#pragma unroll
        for (int i = 0; i < ITEMS; i++)
            if (first + i < n) out[first + i] = e[i];
    }
}

template <typename T, typename A, int ITEMS>
__global__ void __launch_bounds__(kThreads) scan_kernel(const T *in, T *out, size_t n, int exclusive, levels lv,
                                                        unsigned *tile_counter)
{
    __shared__ unsigned s_tile;
    __shared__ A s_warp[kWarps];
    __shared__ A s_prefix;
    if (threadIdx.x == 0) s_tile = atomicAdd(tile_counter, 1u);
    __syncthreads();
    const size_t tile = s_tile, tile_elems = (size_t)kThreads * ITEMS;
    const size_t first = tile * tile_elems + (size_t)threadIdx.x * ITEMS;
    const bool vec_ok = (tile + 1) * tile_elems <= n && ((reinterpret_cast<uintptr_t>(in) | reinterpret_cast<uintptr_t>(out)) & 15) == 0;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;

    A a[ITEMS];
    load_items<T, A, ITEMS>(in, first, n, vec_ok, a);
#pragma unroll
    for (int i = 1; i < ITEMS; i++) a[i] = a[i - 1] + a[i];

    A x = a[ITEMS - 1]; // Kogge-Stone over the warp's thread totals
#pragma unroll
    for (int off = 1; off < 32; off <<= 1) {
        A y = __shfl_up_sync(0xffffffffu, x, off);
        if (lane >= off) x = y + x;
    }
    A before = __shfl_up_sync(0xffffffffu, x, 1);
    if (lane == 0) before = A(0);
    if (lane == 31) s_warp[warp] = x;
    __syncthreads();

    A wpre = A(0);
    for (int j = 0; j < warp; j++) wpre = wpre + s_warp[j];
    if (warp == 0) {
        A total = s_warp[0];
        for (int j = 1; j < kWarps; j++) total = total + s_warp[j];
        A pre = A(0);
        if (tile == 0) {
            if (lane == 0) publish<A>((A *)lv.val[0], lv.flag[0], 0, total);
        } else {
            pre = tile_prefix<A>(tile, total, lv);
        }
        if (lane == 0) s_prefix = pre;
    }
    __syncthreads();

    A off = (s_prefix + wpre) + before;
    alignas(16) T e[ITEMS];
#pragma unroll
    for (int i = 0; i < ITEMS; i++) e[i] = (T)(exclusive ? (i == 0 ? off : off + a[i - 1]) : off + a[i]);
    store_items<T, ITEMS>(out, first, n, vec_ok, e);
}

template <typename T> int scan_launch(hs_cuda_ctx *cu, int exclusive, size_t n, const T *in, T *out)
{
    using A = typename acc_of<T>::type;
    constexpr int ITEMS = sizeof(T) == 8 ? 8 : 16; // 64 bytes per thread
    const size_t tile_elems = (size_t)kThreads * ITEMS;
    size_t ntiles = (n + tile_elems - 1) / tile_elems;
    if (ntiles >= (1ull << 31)) return HS_FAIL(HS_ERR_RUNTIME, "scan: %zu elements is too many for one call", n);
    levels lv = {};
    size_t entries[kMaxLevels], total = 0, span = 1;
    lv.count = 0;
    do {
        entries[lv.count] = (ntiles + span - 1) / span;
        total += entries[lv.count];
        lv.count++;
        span *= 32;
    } while (span < ntiles && lv.count < kMaxLevels);
    // values first (8-byte aligned), then flags and the tile counter, zeroed together
    size_t flag_bytes = (total + 1) * sizeof(unsigned);
    char *buf = NULL;
    HS_CHECK(hs_cuda_scratch(cu, total * sizeof(A) + flag_bytes, (void **)&buf));
    unsigned *flags = (unsigned *)(buf + total * sizeof(A));
    size_t at = 0;
    for (int l = 0; l < lv.count; l++) {
        lv.val[l] = (A *)buf + at;
        lv.flag[l] = flags + at;
        at += entries[l];
    }
    HS_CUDA_CHECK(cudaMemsetAsync(flags, 0, flag_bytes, cu->stream));
    scan_kernel<T, A, ITEMS><<<(unsigned)ntiles, kThreads, 0, cu->stream>>>(in, out, n, exclusive, lv, flags + total);
    HS_CUDA_LAUNCH_CHECK("scan_kernel");
    return HS_OK;
}

// ---------------------------------------------------------------- new: decoupled look-back
//
// Every tile publishes its aggregate as soon as its own reduction is done, then warp 0 looks back
// 32 predecessors at a time (status flag: 0 nothing yet, 1 aggregate, 2 inclusive prefix) until it
// meets an inclusive prefix.  Integers (and floats with ctx->deterministic == 0) add what they see
// in any order.  Deterministic floats use CANON: the inclusive prefix of tile t is by definition
// the left-to-right fold incl(t) = incl(t-1) + agg(t); any published incl(p) is that fold, so
// continuing from the nearest one with agg(p+1), ..., agg(t-1) one at a time, in index order,
// gives the same bits whichever p was found.  Tiles are read and written in coalesced 16-byte
// units and transposed through shared memory (per warp, XOR-swizzled: no bank conflicts) so that
// each thread scans ITEMS consecutive elements.

constexpr unsigned kFlagAgg = 1u, kFlagIncl = 2u;

template <typename A> struct lb_state {
    A *agg;
    A *incl;
    unsigned *flag;
};

__device__ __forceinline__ unsigned flag_load(unsigned *f)
{
    return cuda::atomic_ref<unsigned, cuda::thread_scope_device>(*f).load(cuda::memory_order_relaxed);
}

__device__ __forceinline__ void flag_publish(unsigned *f, unsigned v)
{
    cuda::atomic_ref<unsigned, cuda::thread_scope_device>(*f).store(v, cuda::memory_order_release);
}

// Position of 16-byte unit u in a warp's shared buffer: rows of 8 units, columns XOR the row, so
// that both the striped (k*32 + lane) and the blocked (lane*V + k) access hit 8 distinct columns
// per quarter warp.
__device__ __forceinline__ int swz(int u) { return u ^ ((u >> 3) & 7); }

template <int V> __device__ __forceinline__ void load_tile_vec(const uint4 *g, uint4 *sb, uint4 e[V])
{
    const int lane = threadIdx.x & 31;
    uint4 r[V];
#pragma unroll
    for (int k = 0; k < V; k++) r[k] = g[k * 32 + lane];
#pragma unroll
    for (int k = 0; k < V; k++) sb[swz(k * 32 + lane)] = r[k];
    __syncwarp();
#pragma unroll
    for (int k = 0; k < V; k++) e[k] = sb[swz(lane * V + k)];
    __syncwarp(); // the buffer is reused by the store
}

template <int V> __device__ __forceinline__ void store_tile_vec(uint4 *g, uint4 *sb, const uint4 e[V])
{
    const int lane = threadIdx.x & 31;
#pragma unroll
    for (int k = 0; k < V; k++) sb[swz(lane * V + k)] = e[k];
    __syncwarp();
#pragma unroll
    for (int k = 0; k < V; k++) g[k * 32 + lane] = sb[swz(k * 32 + lane)];
}

// Warp 0, tile > 0: the exclusive prefix of the tile (see the comment above for CANON).
template <typename A, bool CANON> __device__ A look_back(const lb_state<A> &st, long long tile)
{
    const int lane = threadIdx.x & 31;
    long long base = tile; // window [base - 32, base)
    A run = A(0), v = A(0);
    int p = 0;
    for (;;) {
        const long long j = base - 32 + lane;
        unsigned f = kFlagAgg; // left of tile 0: never used (tile 0 is inclusive)
        if (j >= 0) {
            int spins = 0;
            while ((f = flag_load(st.flag + j)) == 0u)
                if (++spins > 4) __nanosleep(32);
        }
        __syncwarp();
        cuda::atomic_thread_fence(cuda::memory_order_acquire, cuda::thread_scope_device);
        const unsigned incl = __ballot_sync(0xffffffffu, f == kFlagIncl);
        p = incl ? 31 - __clz((int)incl) : 0;
        A x = A(0);
        if (j >= 0 && (incl ? lane >= p : !CANON)) x = (incl && lane == p) ? __ldcg(st.incl + j) : __ldcg(st.agg + j);
        if (!CANON) {
            run = run + warp_sum<A>(x);
            if (incl) return run;
        } else if (incl) {
            v = x;
            break;
        }
        base -= 32;
    }
    A acc = __shfl_sync(0xffffffffu, v, p);
#pragma unroll
    for (int i = 1; i < 32; i++) {
        A y = __shfl_sync(0xffffffffu, v, i);
        if (i > p) acc = acc + y;
    }
    for (base += 32; base <= tile; base += 32) { // later windows: aggregates seen ready above
        A w = __ldcg(st.agg + (base - 32 + lane));
#pragma unroll
        for (int i = 0; i < 32; i++) acc = acc + __shfl_sync(0xffffffffu, w, i);
    }
    return acc;
}

template <typename T, typename A, int ITEMS, bool CANON>
__global__ void __launch_bounds__(kThreads, 2)
    scan_lb_kernel(const T *in, T *out, size_t n, int exclusive, int vec_ok, lb_state<A> st, unsigned *tile_counter)
{
    constexpr int V = ITEMS * (int)sizeof(T) / 16;
    static_assert(V * 16 == ITEMS * (int)sizeof(T) && (V == 4 || V == 8), "tile layout");
    __shared__ uint4 s_buf[kThreads * V];
    __shared__ unsigned s_tile;
    __shared__ A s_warp[kWarps];
    __shared__ A s_prefix;
    if (threadIdx.x == 0) s_tile = atomicAdd(tile_counter, 1u);
    __syncthreads();
    const size_t tile = s_tile, tile_elems = (size_t)kThreads * ITEMS;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const bool full = vec_ok && (tile + 1) * tile_elems <= n;
    const size_t wfirst = tile * tile_elems + (size_t)warp * 32 * ITEMS; // the warp's segment
    const size_t first = wfirst + (size_t)lane * ITEMS;                   // this thread's items
    uint4 *sb = s_buf + warp * 32 * V;

    alignas(16) T e[ITEMS];
    if (full) {
        load_tile_vec<V>(reinterpret_cast<const uint4 *>(in + wfirst), sb, reinterpret_cast<uint4 *>(e));
    } else {
#pragma unroll
        for (int i = 0; i < ITEMS; i++) e[i] = first + i < n ? in[first + i] : T(0);
    }
    A a[ITEMS];
    a[0] = (A)e[0];
#pragma unroll
    for (int i = 1; i < ITEMS; i++) a[i] = a[i - 1] + (A)e[i];

    A x = a[ITEMS - 1]; // Kogge-Stone over the warp's thread totals
#pragma unroll
    for (int off = 1; off < 32; off <<= 1) {
        A y = __shfl_up_sync(0xffffffffu, x, off);
        if (lane >= off) x = y + x;
    }
    A before = __shfl_up_sync(0xffffffffu, x, 1);
    if (lane == 0) before = A(0);
    if (lane == 31) s_warp[warp] = x;
    __syncthreads();

    A wpre = A(0);
    for (int j = 0; j < warp; j++) wpre = wpre + s_warp[j];
    if (warp == 0) {
        A total = s_warp[0];
        for (int j = 1; j < kWarps; j++) total = total + s_warp[j];
        A pre = A(0);
        if (tile == 0) {
            if (lane == 0) {
                st.incl[0] = total;
                flag_publish(st.flag, kFlagIncl);
            }
        } else {
            if (lane == 0) {
                st.agg[tile] = total;
                flag_publish(st.flag + tile, kFlagAgg);
            }
            pre = look_back<A, CANON>(st, (long long)tile);
            if (lane == 0) {
                st.incl[tile] = pre + total;
                flag_publish(st.flag + tile, kFlagIncl);
            }
        }
        if (lane == 0) s_prefix = pre;
    }
    __syncthreads();

    const A off = (s_prefix + wpre) + before;
#pragma unroll
    for (int i = 0; i < ITEMS; i++) e[i] = (T)(exclusive ? (i == 0 ? off : off + a[i - 1]) : off + a[i]);
    if (full) {
        store_tile_vec<V>(reinterpret_cast<uint4 *>(out + wfirst), sb, reinterpret_cast<const uint4 *>(e));
    } else {
#pragma unroll
        for (int i = 0; i < ITEMS; i++)
            if (first + i < n) out[first + i] = e[i];
    }
}

template <typename T> constexpr int lb_items() { return sizeof(T) == 8 ? 16 : std::is_same<T, float>::value ? 16 : 32; }

template <typename T, bool CANON> int scan_lb_launch(hs_cuda_ctx *cu, int exclusive, size_t n, const T *in, T *out)
{
    using A = typename acc_of<T>::type;
    constexpr int ITEMS = lb_items<T>();
    const size_t tile_elems = (size_t)kThreads * ITEMS;
    const size_t ntiles = (n + tile_elems - 1) / tile_elems;
    if (ntiles >= (1ull << 31)) return HS_FAIL(HS_ERR_RUNTIME, "scan: %zu elements is too many for one call", n);
    // aggregates and inclusive prefixes (8-byte aligned), then the flags and the tile counter
    const size_t vbytes = 2 * ntiles * sizeof(A), fbytes = (ntiles + 1) * sizeof(unsigned);
    char *buf = NULL;
    HS_CHECK(hs_cuda_scratch(cu, vbytes + fbytes, (void **)&buf));
    lb_state<A> st;
    st.agg = (A *)buf;
    st.incl = st.agg + ntiles;
    st.flag = (unsigned *)(buf + vbytes);
    HS_CUDA_CHECK(cudaMemsetAsync(st.flag, 0, fbytes, cu->stream));
    const int vec_ok = ((reinterpret_cast<uintptr_t>(in) | reinterpret_cast<uintptr_t>(out)) & 15) == 0;
    scan_lb_kernel<T, A, ITEMS, CANON>
        <<<(unsigned)ntiles, kThreads, 0, cu->stream>>>(in, out, n, exclusive, vec_ok, st, st.flag + ntiles);
    HS_CUDA_LAUNCH_CHECK("scan_lb_kernel");
    return HS_OK;
}

// Every type takes the canonical look-back.  The free look-back (CANON = false) gave wrong
// integer sums on the H200 when thousands of tiles were in flight (test_scan's
// test_nondeterministic, 2^24 elements, off by one at element 1474560): a race in its status
// publication not yet found, so it is not used until it is.
template <typename T> int scan_new_launch(hs_cuda_ctx *cu, int exclusive, int deterministic, size_t n, const T *in, T *out)
{
    (void)deterministic;
    return scan_lb_launch<T, true>(cu, exclusive, n, in, out);
}

// CUB's temporary storage, kept between calls so the benchmark times the scan, not cudaMalloc.
void *g_cub_buf;
size_t g_cub_bytes;

int cub_buffer(hs_cuda_ctx *cu, size_t bytes, void **ptr)
{
    if (bytes > g_cub_bytes) {
        HS_CUDA_CHECK(cudaStreamSynchronize(cu->stream));
        if (g_cub_buf) HS_CUDA_CHECK(cudaFree(g_cub_buf));
        g_cub_buf = NULL;
        g_cub_bytes = 0;
        HS_CUDA_CHECK(cudaMalloc(&g_cub_buf, bytes));
        g_cub_bytes = bytes;
    }
    *ptr = g_cub_buf;
    return HS_OK;
}

template <typename T> int cub_launch(hs_cuda_ctx *cu, int exclusive, size_t n, const T *in, T *out)
{
    size_t tmp = 0;
    if (exclusive) HS_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(NULL, tmp, in, out, n, cu->stream));
    else HS_CUDA_CHECK(cub::DeviceScan::InclusiveSum(NULL, tmp, in, out, n, cu->stream));
    void *buf = NULL;
    HS_CHECK(cub_buffer(cu, tmp, &buf));
    if (exclusive) HS_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(buf, tmp, in, out, n, cu->stream));
    else HS_CUDA_CHECK(cub::DeviceScan::InclusiveSum(buf, tmp, in, out, n, cu->stream));
    return HS_OK;
}

} // namespace

#define HS_SCAN_DISPATCH(FN, ...)                                                                         \
    switch (t) {                                                                                          \
    case HS_F64: return FN<double>(cu, __VA_ARGS__, n, (const double *)in, (double *)out);                \
    case HS_F32: return FN<float>(cu, __VA_ARGS__, n, (const float *)in, (float *)out);                   \
    case HS_I32: return FN<int32_t>(cu, __VA_ARGS__, n, (const int32_t *)in, (int32_t *)out);             \
    case HS_I64: return FN<int64_t>(cu, __VA_ARGS__, n, (const int64_t *)in, (int64_t *)out);             \
    case HS_U32: return FN<uint32_t>(cu, __VA_ARGS__, n, (const uint32_t *)in, (uint32_t *)out);          \
    case HS_U64: return FN<uint64_t>(cu, __VA_ARGS__, n, (const uint64_t *)in, (uint64_t *)out);          \
    default: return HS_FAIL(HS_ERR_RUNTIME, "scan: unsupported dtype %s", hs_dtype_name(t));              \
    }

extern "C" int hs_scan_cuda(hs_cuda_ctx *cu, hs_dtype t, int exclusive, int impl, int deterministic, size_t n,
                            const void *in, void *out)
{
    if (impl == HS_SCAN_IMPL_OLD) {
        HS_SCAN_DISPATCH(scan_launch, exclusive)
    }
    HS_SCAN_DISPATCH(scan_new_launch, exclusive, deterministic)
}

extern "C" int hs_scan_cub_cuda(hs_cuda_ctx *cu, hs_dtype t, int exclusive, size_t n, const void *in, void *out)
{
    HS_SCAN_DISPATCH(cub_launch, exclusive)
}
