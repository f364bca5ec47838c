// Scans, CUDA backend: persistent rounds fed by the bulk-copy engine (sm_90), single-pass decoupled look-back, or a base-32 tree (old); CUB peer.
//
// Old implementation (the test reference hs_scan_ref; the new one is further down).  Each block
// scans one tile (tiles are numbered in the order blocks start, through an atomic counter, so
// every tile it waits for is already running).  Tile k publishes its total A0[k]; the
// tile that completes a group of 32 entries of level l-1 publishes their sum A_l[...].  The prefix
// of tile k is then the sum, level by level from the top, of the entries left of k's base-32
// digits: at most 31 values per level, each summed by one warp in a fixed butterfly.  Because the
// combination never depends on which predecessors happened to be finished, float results are
// bitwise reproducible, yet the data is read and written once (2n traffic).
#include "kernels/cuda_block_reduce.cuh"
#include "kernels/cuda_bulk.cuh"
#include "kernels/cuda_util.h"
#include "kernels/reduce/scan_impl.h"

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

// The block-wide part of a tile's scan, shared by both implementations: a[] (this thread's ITEMS
// consecutive elements) becomes its running sum; `before` gets the sum of the earlier lanes of the
// warp and `wpre` that of the earlier warps (s_warp holds the warp totals; block-synchronising).
template <typename A, int ITEMS> __device__ __forceinline__ void block_scan_totals(A a[ITEMS], A *s_warp, A &before, A &wpre)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
    for (int i = 1; i < ITEMS; i++) a[i] = a[i - 1] + a[i];
    const A x = hs_warp_inclusive_scan<A>(a[ITEMS - 1]); // over the warp's thread totals
    before = __shfl_up_sync(0xffffffffu, x, 1);
    if (lane == 0) before = A(0);
    if (lane == 31) s_warp[warp] = x;
    __syncthreads();
    wpre = A(0);
    for (int j = 0; j < warp; j++) wpre = wpre + s_warp[j];
}

// The tile's total from N warp totals (all the block's warps by default), in warp order.
template <typename A, int N = kWarps> __device__ __forceinline__ A tile_total(const A *s_warp)
{
    A total = s_warp[0];
    for (int j = 1; j < N; j++) total = total + s_warp[j];
    return total;
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
    A before, wpre;
    block_scan_totals<A, ITEMS>(a, s_warp, before, wpre);
    if (warp == 0) {
        const A total = tile_total<A>(s_warp);
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
// Every tile publishes its aggregate as soon as its own reduction is done; warp 0 then looks back
// over windows of 32*K predecessors until it meets an inclusive prefix.  The status of a tile and
// its value live in one self-contained word, written by one relaxed store and read by relaxed
// loads, so no fence is needed anywhere (the separate flag and value arrays of the old look-back
// needed a release on every publish and an acquire on every window, and ran at half the speed):
//   SV (accumulator double: f64 and f32 scans): a 16-byte slot per tile, {aggregate, inclusive},
//       each field holding bits(value) XOR a signalling-NaN key, so that 0 (the memset) reads as
//       "not yet" and any published value reads non-zero (an addition never yields a signalling
//       NaN).  8-byte accesses are single-copy atomic; each field validates itself.
//   PK (32-bit integers): one 64-bit word per tile, status in the high half, value in the low.
//   FLAGS (64-bit integers, which have no spare bits): flag and value arrays with release/acquire.
// Floating point uses the canonical fold: the inclusive prefix of tile t is by definition
// incl(t-1) + agg(t); any published incl(p) is that fold, so continuing from the nearest one with
// agg(p+1), ..., agg(t-1) in index order gives the same bits whichever p was found: results are
// bitwise reproducible.  Integers add what they see in any order (exact).  Tiles are read and
// written in coalesced 16-byte units and transposed through shared memory (per warp, XOR-swizzled)
// so that each thread scans ITEMS consecutive elements.

constexpr unsigned kFlagAgg = 1u, kFlagIncl = 2u;
constexpr unsigned long long kSvKey = 0xFFF0000000000001ull; // a signalling NaN
enum { LB_SV = 0, LB_PK = 1, LB_FLAGS = 2 };

template <typename A> struct lb_kind {
    static constexpr int value = std::is_same<A, double>::value ? LB_SV : sizeof(A) == 4 ? LB_PK : LB_FLAGS;
};

struct lb_state {
    unsigned long long *slots; // SV: 2 words per tile; PK: 1 word per tile
    void *agg, *incl;          // FLAGS
    unsigned *flag;            // FLAGS
};

__device__ __forceinline__ unsigned long long ld_relaxed(const unsigned long long *p)
{
    unsigned long long v;
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}

// two 8-byte relaxed loads in one instruction: each element is single-copy atomic, the pair need not be
__device__ __forceinline__ void ld_relaxed2(const unsigned long long *p, unsigned long long &a, unsigned long long &b)
{
    asm volatile("ld.relaxed.gpu.global.v2.u64 {%0, %1}, [%2];" : "=l"(a), "=l"(b) : "l"(p) : "memory");
}

__device__ __forceinline__ void st_relaxed(unsigned long long *p, unsigned long long v)
{
    asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

__device__ __forceinline__ unsigned flag_load(unsigned *f)
{
    return cuda::atomic_ref<unsigned, cuda::thread_scope_device>(*f).load(cuda::memory_order_relaxed);
}

// Status (0 not yet, kFlagAgg, kFlagIncl) and value of predecessor j (j < 0: an aggregate 0, never used).
template <typename A, int LBK> __device__ __forceinline__ void read_slot(const lb_state &st, long long j, unsigned &s, A &v)
{
    s = kFlagAgg;
    v = A(0);
    if (j < 0) return;
    if constexpr (LBK == LB_SV) {
        unsigned long long a, i;
        ld_relaxed2(st.slots + 2 * j, a, i);
        s = i ? kFlagIncl : a ? kFlagAgg : 0u;
        v = __longlong_as_double((long long)((i ? i : a) ^ kSvKey));
    } else if constexpr (LBK == LB_PK) {
        const unsigned long long w = ld_relaxed(st.slots + j);
        s = (unsigned)(w >> 32);
        v = (A)(unsigned)w;
    } else {
        s = flag_load(st.flag + j);
        if (s) {
            cuda::atomic_thread_fence(cuda::memory_order_acquire, cuda::thread_scope_device);
            v = __ldcg((s == kFlagIncl ? (const A *)st.incl : (const A *)st.agg) + j);
        }
    }
}

// The aggregate of predecessor j, already seen published (as aggregate or inclusive prefix).  PK
// keeps one value per tile, which the inclusive prefix replaces: only the free order may use it.
template <typename A, int LBK> __device__ __forceinline__ A read_aggregate(const lb_state &st, long long j)
{
    if constexpr (LBK == LB_SV) return __longlong_as_double((long long)(ld_relaxed(st.slots + 2 * j) ^ kSvKey));
    else if constexpr (LBK == LB_FLAGS) return __ldcg((const A *)st.agg + j);
    else return A(0);
}

template <typename A, int LBK> __device__ __forceinline__ void publish(const lb_state &st, long long tile, unsigned s, A v)
{
    if constexpr (LBK == LB_SV) {
        st_relaxed(st.slots + 2 * tile + (s == kFlagIncl), (unsigned long long)__double_as_longlong(v) ^ kSvKey);
    } else if constexpr (LBK == LB_PK) {
        st_relaxed(st.slots + tile, ((unsigned long long)s << 32) | (unsigned long long)(unsigned)v);
    } else {
        ((A *)(s == kFlagIncl ? st.incl : st.agg))[tile] = v;
        cuda::atomic_ref<unsigned, cuda::thread_scope_device>(st.flag[tile]).store(s, cuda::memory_order_release);
    }
}

// Warp 0, tile > 0: the exclusive prefix of the tile.  Windows of W = 32 K predecessors
// [base - W, base), position g = k * 32 + lane; a window is usable once every position above its
// nearest inclusive prefix P is published (all of them when there is none).
template <typename A, int LBK, int K, bool CANON> __device__ A look_back(const lb_state &st, long long tile, A *s_fold)
{
    static_assert(!(CANON && LBK == LB_PK), "the canonical fold needs every aggregate");
    constexpr int W = 32 * K;
    const int lane = threadIdx.x & 31;
    long long base = tile;
    A run = A(0); // free order: this lane's share
    for (;;) {
        unsigned s[K];
        A v[K];
        int P;
        for (;;) {
#pragma unroll
            for (int k = 0; k < K; k++) read_slot<A, LBK>(st, base - W + k * 32 + lane, s[k], v[k]);
            P = -1;
            bool ok = true;
#pragma unroll
            for (int k = K - 1; k >= 0; k--) {
                const unsigned incl = __ballot_sync(0xffffffffu, s[k] == kFlagIncl);
                const unsigned none = __ballot_sync(0xffffffffu, s[k] == 0u);
                if (P < 0) {
                    if (incl) {
                        P = k * 32 + 31 - __clz((int)incl);
                        ok = ok && ((none >> (P - k * 32)) >> 1) == 0u;
                    } else {
                        ok = ok && none == 0u;
                    }
                }
            }
            if (ok) break;
            __nanosleep(32); // polling flat out would compete with the tiles' own traffic
        }
        if constexpr (!CANON) {
#pragma unroll
            for (int k = 0; k < K; k++)
                if (k * 32 + lane >= P) run = run + v[k];
            if (P >= 0) return warp_sum<A>(run);
        } else if (P >= 0) {
            // incl(P) + agg(P+1) + ... in index order, by lane 0
#pragma unroll
            for (int k = 0; k < K; k++) s_fold[k * 32 + lane] = v[k];
            __syncwarp();
            A acc = A(0);
            if (lane == 0) {
                acc = s_fold[P];
                for (int g = P + 1; g < W; g++) acc = acc + s_fold[g];
            }
            // the windows passed on the way back held aggregates only: read them again, in order
            for (long long b = base + W; b <= tile; b += W) {
                __syncwarp();
#pragma unroll
                for (int k = 0; k < K; k++) s_fold[k * 32 + lane] = read_aggregate<A, LBK>(st, b - W + k * 32 + lane);
                __syncwarp();
                if (lane == 0)
                    for (int g = 0; g < W; g++) acc = acc + s_fold[g];
            }
            __syncwarp();
            return __shfl_sync(0xffffffffu, acc, 0);
        }
        base -= W;
    }
}

// Position of 16-byte unit u in a warp's shared buffer: rows of 8 units, columns XOR the row, so
// that both the striped (k*32 + lane) and the blocked (lane*V + k) access spread over the banks.
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

// EXCLUSIVE is a template parameter: a run-time choice kept both a[i] and a[i-1] live, costing
// registers and a block per SM.
template <typename T, typename A, int ITEMS, int K, bool EXCLUSIVE>
__global__ void __launch_bounds__(kThreads, sizeof(A) == 4 ? 4 : 2) // 32-bit: 64 registers, 4 blocks per SM
    scan_lb_kernel(const T *in, T *out, size_t n, int vec_ok, lb_state st, unsigned *tile_counter)
{
    constexpr int LBK = lb_kind<A>::value;
    constexpr bool CANON = std::is_floating_point<A>::value;
    constexpr int V = ITEMS * (int)sizeof(T) / 16;
    static_assert(V * 16 == ITEMS * (int)sizeof(T), "tile layout");
    extern __shared__ uint4 s_buf[]; // kThreads * V units: dynamic, a 48 KiB tile exceeds the static limit
    __shared__ unsigned s_tile;
    __shared__ A s_warp[kWarps];
    __shared__ A s_prefix;
    __shared__ A s_fold[32 * K];
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
#pragma unroll
    for (int i = 0; i < ITEMS; i++) a[i] = (A)e[i];
    A before, wpre;
    block_scan_totals<A, ITEMS>(a, s_warp, before, wpre);
    if (warp == 0) {
        const A total = tile_total<A>(s_warp);
        A pre = A(0);
        if (tile == 0) {
            if (lane == 0) publish<A, LBK>(st, 0, kFlagIncl, total);
        } else {
            if (lane == 0) publish<A, LBK>(st, (long long)tile, kFlagAgg, total);
            pre = look_back<A, LBK, K, CANON>(st, (long long)tile, s_fold);
            if (lane == 0) publish<A, LBK>(st, (long long)tile, kFlagIncl, pre + total);
        }
        if (lane == 0) s_prefix = pre;
    }
    __syncthreads();

    const A off = (s_prefix + wpre) + before;
#pragma unroll
    for (int i = 0; i < ITEMS; i++) e[i] = (T)(EXCLUSIVE ? (i == 0 ? off : off + a[i - 1]) : off + a[i]);
    if (full) {
        store_tile_vec<V>(reinterpret_cast<uint4 *>(out + wfirst), sb, reinterpret_cast<const uint4 *>(e));
    } else {
#pragma unroll
        for (int i = 0; i < ITEMS; i++)
            if (first + i < n) out[first + i] = e[i];
    }
}

// Tile shapes measured on the H200 (exp. of 2026-11-30): 256 x 24 doubles (48 KiB) with a window
// of 64 predecessors; 256 x 32 for 32-bit integers with a window of 32.
template <typename T> struct lb_tune {
    static constexpr int items = sizeof(T) == 8 ? 24 : std::is_same<T, float>::value ? 16 : 32;
    static constexpr int window = sizeof(T) == 8 ? 2 : 1;
};

template <typename T> int scan_new_launch(hs_cuda_ctx *cu, int exclusive, int deterministic, size_t n, const T *in, T *out)
{
    (void)deterministic; // floating point is always reproducible here
    using A = typename acc_of<T>::type;
    constexpr int ITEMS = lb_tune<T>::items, K = lb_tune<T>::window, LBK = lb_kind<A>::value;
    const size_t tile_elems = (size_t)kThreads * ITEMS;
    const size_t ntiles = (n + tile_elems - 1) / tile_elems;
    if (ntiles >= (1ull << 31)) return HS_FAIL(HS_ERR_RUNTIME, "scan: %zu elements is too many for one call", n);
    const size_t smem = (size_t)kThreads * ITEMS * sizeof(T);
    static bool configured[HS_MAX_DEVICES]; // per instantiation and device
    HS_CHECK_DEVICE_MEMO(cu);
    if (!configured[cu->device]) {
        HS_CUDA_CHECK(cudaFuncSetAttribute(scan_lb_kernel<T, A, ITEMS, K, false>,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        HS_CUDA_CHECK(cudaFuncSetAttribute(scan_lb_kernel<T, A, ITEMS, K, true>,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        configured[cu->device] = true;
    }
    // status words (and for FLAGS the values), then the tile counter, zeroed together
    const size_t words = LBK == LB_SV ? 2 * ntiles : LBK == LB_PK ? ntiles : 0;
    const size_t vbytes = LBK == LB_FLAGS ? 2 * ntiles * sizeof(A) : words * 8;
    const size_t zbytes = (LBK == LB_FLAGS ? vbytes + ntiles * sizeof(unsigned) : vbytes) + sizeof(unsigned);
    char *buf = NULL;
    HS_CHECK(hs_cuda_scratch(cu, zbytes, (void **)&buf));
    lb_state st = {};
    st.slots = (unsigned long long *)buf;
    st.agg = buf;
    st.incl = buf + ntiles * sizeof(A);
    st.flag = (unsigned *)(buf + vbytes);
    unsigned *counter = (unsigned *)(buf + zbytes - sizeof(unsigned));
    HS_CUDA_CHECK(cudaMemsetAsync(buf, 0, zbytes, cu->stream));
    const int vec_ok = hs_aligned16(in, out);
    if (exclusive)
        scan_lb_kernel<T, A, ITEMS, K, true><<<(unsigned)ntiles, kThreads, smem, cu->stream>>>(in, out, n, vec_ok, st, counter);
    else
        scan_lb_kernel<T, A, ITEMS, K, false><<<(unsigned)ntiles, kThreads, smem, cu->stream>>>(in, out, n, vec_ok, st, counter);
    HS_CUDA_LAUNCH_CHECK("scan_lb_kernel");
    return HS_OK;
}


// ---------------------------------------------------------------- new, sm_90: persistent rounds
//
// Where the bulk-copy engine exists and the data is 16-byte aligned, a persistent kernel replaces
// the one-tile-per-block kernel above, which keeps nothing in flight while a block looks back.
// Each block claims tiles in order (atomic counter) and the copy engine loads the next STAGES-1
// tiles into shared memory while the block scans the current one; results go back into the
// same stage and out by a bulk store.  Threads touch only shared memory (except in the last,
// partial tile, read and written directly): ITEMS is odd, so each thread's run of consecutive
// elements is free of bank conflicts.
//
// Tile t belongs to round t / kRound.  A tile's aggregate (one self-validating word) is published
// two iterations before the block scans it, by warps 1.. while warp 0 gathers the prefix of the
// tile being scanned (the gathering is a round trip to L2 that the loaded memory system makes
// long, so the other warps' work hides behind it).  The exclusive prefix of tile t is
//     base(r) + (the aggregates of round r before t, summed in a fixed tree),
//     base(r) = base(r-1) + T(r-1), T = a whole round in the same tree, base(0) = 0.
// The round's leader publishes base(r+1) ahead; any block that needs base(r) and finds it
// unpublished computes it from base(r-1) and publishes it: the same bits whoever does.  So no chain of inclusive prefixes forms, one round trip
// gathers what a tile needs, results are bitwise reproducible for every type (they depend on the
// tile shape only, not on the grid or the timing), and a tile waits only for earlier tiles, which
// running blocks hold: no deadlock whatever the residency.

constexpr int kRound = 256; // tiles per round: 8 per lane of the gathering warp

// Published words; 0 (the memset) reads "not yet".  double: bits ^ a signalling NaN (an addition
// never yields one); 32-bit: 1 << 32 | value; 64-bit integers: two such words (low, high half).
template <typename A> struct agg_word {
    static constexpr bool kDouble = std::is_same<A, double>::value;
    static constexpr int per = sizeof(A) == 8 && !kDouble ? 2 : 1;
    struct raw {
        unsigned long long a, b;
    };
    __device__ static void put(unsigned long long *w, size_t i, A v)
    {
        if constexpr (kDouble) {
            st_relaxed(w + i, (unsigned long long)__double_as_longlong(v) ^ kSvKey);
        } else if constexpr (per == 1) {
            st_relaxed(w + i, (1ull << 32) | (unsigned long long)(uint32_t)v);
        } else {
            st_relaxed(w + 2 * i, (1ull << 32) | (unsigned long long)(uint32_t)v);
            st_relaxed(w + 2 * i + 1, (1ull << 32) | (unsigned long long)(uint32_t)((unsigned long long)v >> 32));
        }
    }
    __device__ static raw load(const unsigned long long *w, size_t i)
    {
        raw r;
        if constexpr (per == 1) {
            r.a = ld_relaxed(w + i);
            r.b = 1;
        } else {
            ld_relaxed2(w + 2 * i, r.a, r.b); // each half validates itself
        }
        return r;
    }
    __device__ static bool ready(raw r) { return r.a != 0 && r.b != 0; }
    // lane 0's words in every lane: decisions taken on them stay warp-uniform
    __device__ static raw from_lane0(raw r)
    {
        r.a = __shfl_sync(0xffffffffu, r.a, 0);
        r.b = __shfl_sync(0xffffffffu, r.b, 0);
        return r;
    }
    __device__ static A value(raw r)
    {
        if constexpr (kDouble) return __longlong_as_double((long long)(r.a ^ kSvKey));
        else if constexpr (per == 1) return (A)(uint32_t)r.a;
        else return (A)(((unsigned long long)(uint32_t)r.b << 32) | (unsigned long long)(uint32_t)r.a);
    }
};

struct round_state {
    unsigned long long *agg;   // per tile
    unsigned long long *base;  // per round (entry 0 unused)
    unsigned long long *clear; // the previous call's words, zeroed here for the next call
    size_t clear_words;
};

// Warp 0: the exclusive prefix of tile t > 0.  One batch of loads: the aggregates of round r
// before t, base(r) and base(r-1).  Tile r*kRound + 1, the round's leader, loads its whole round
// and, when every aggregate of it is already published at that first look, publishes base(r+1)
// about a round before the next round's tiles need it; it never waits for those later tiles,
// which its own block may hold.  A tile that finds base(r) unpublished walks back from the latest
// published base.  (Measured on the H200: against loading round r-1's aggregates speculatively in
// the first half of every round, the u32 scan went from 88.2% to 90.5% of copy bandwidth and the
// f64 scan stayed at 90%.)
template <typename A> __device__ A round_prefix(const round_state &st, size_t t, size_t ntiles)
{
    using W = agg_word<A>;
    using raw = typename W::raw;
    constexpr int kPerLane = kRound / 32;
    const int lane = threadIdx.x & 31;
    const size_t r = t / kRound, r0 = r * kRound;
    const bool leader = t - r0 == 1 && (r + 1) * kRound <= ntiles; // a whole round to sum
    raw w[kPerLane], br = {0, 0}, bp = {0, 0};
#pragma unroll
    for (int k = 0; k < kPerLane; k++) {
        const size_t j = r0 + (size_t)k * 32 + lane;
        if (j < t || leader) w[k] = W::load(st.agg, j);
    }
    if (r >= 1) br = W::load(st.base, r);
    if (r >= 2) bp = W::load(st.base, r - 1);
    for (;;) { // this round's earlier aggregates: published two iterations ago, as a rule
        bool ok = true;
#pragma unroll
        for (int k = 0; k < kPerLane; k++)
            if (r0 + (size_t)k * 32 + lane < t) ok = ok && W::ready(w[k]);
        if (__all_sync(0xffffffffu, ok)) break;
        __nanosleep(20);
#pragma unroll
        for (int k = 0; k < kPerLane; k++) {
            const size_t j = r0 + (size_t)k * 32 + lane;
            if (j < t && !W::ready(w[k])) w[k] = W::load(st.agg, j);
        }
    }
    A acc = A(0);
#pragma unroll
    for (int k = 0; k < kPerLane; k++)
        if (r0 + (size_t)k * 32 + lane < t) acc = acc + W::value(w[k]);
    const A in_round = warp_sum<A>(acc);
    A b = A(0); // base(r)
    if (r >= 1) {
        // Broadcast here, not before the poll above: with the shuffles ahead of the poll the f64
        // scan measured 74-76% of copy bandwidth instead of 82-83% (H200).
        br = W::from_lane0(br);
        bp = W::from_lane0(bp);
        if (W::ready(br)) {
            b = W::value(br);
        } else { // base(r) = base(q) + T(q) + ... + T(r-1) from the latest published base(q)
            size_t q = r - 1;
            if (r == 1 || W::ready(bp)) {
                b = r == 1 ? A(0) : W::value(bp);
            } else {
                while (q > 0) {
                    const raw x = W::from_lane0(W::load(st.base, q));
                    if (W::ready(x)) {
                        b = W::value(x);
                        break;
                    }
                    q--;
                }
            }
            for (; q < r; q++) {
                raw v[kPerLane];
#pragma unroll
                for (int k = 0; k < kPerLane; k++) v[k] = W::load(st.agg, q * kRound + (size_t)k * 32 + lane);
                for (;;) {
                    bool ok = true;
#pragma unroll
                    for (int k = 0; k < kPerLane; k++) ok = ok && W::ready(v[k]);
                    if (__all_sync(0xffffffffu, ok)) break;
                    __nanosleep(20);
#pragma unroll
                    for (int k = 0; k < kPerLane; k++)
                        if (!W::ready(v[k])) v[k] = W::load(st.agg, q * kRound + (size_t)k * 32 + lane);
                }
                A sum = A(0);
#pragma unroll
                for (int k = 0; k < kPerLane; k++) sum = sum + W::value(v[k]);
                b = b + warp_sum<A>(sum);
                if (lane == 0) W::put(st.base, q + 1, b);
            }
        }
    }
    if (leader) { // base(r+1) in the walk's order and tree, so the same bits as any walk's
        bool ok = true;
#pragma unroll
        for (int k = 0; k < kPerLane; k++) ok = ok && W::ready(w[k]);
        if (__all_sync(0xffffffffu, ok)) {
            A sum = A(0);
#pragma unroll
            for (int k = 0; k < kPerLane; k++) sum = sum + W::value(w[k]);
            const A next = b + warp_sum<A>(sum);
            if (lane == 0) W::put(st.base, r + 1, next);
        }
    }
    return b + in_round;
}

template <typename T, int ITEMS, int STAGES> struct round_cfg {
    static constexpr int tile = kThreads * ITEMS;
    static constexpr unsigned bytes = tile * sizeof(T);
    static constexpr size_t smem = (size_t)STAGES * bytes;
};

// 64-bit integers declare two blocks per SM in the launch bounds: without them ptxas gave those
// kernels 128 registers and a 16-byte stack (spills).  The others run better without the hint:
// with it the f64 exclusive scan read 90.2% of copy against 90.5% (experiment program, H200).
template <typename T> constexpr int round_min_blocks() { return sizeof(T) == 8 && std::is_integral<T>::value ? 2 : 1; }

// The exclusive scan writes each inclusive value one place on and the tile's prefix at its start:
// the same code as the inclusive one, and exclusive[k+1] is bitwise inclusive[k].  (Computing
// off + a[i-1] instead cost registers: ptxas spilled the f64 kernel, 89.1-89.5% of copy against
// 90.2-90.5% for the shifted form.)
template <typename T, typename A, int ITEMS, int STAGES, bool EXCLUSIVE>
__global__ void __launch_bounds__(kThreads, round_min_blocks<T>())
    scan_round_kernel(const T *in, T *out, size_t n, unsigned ntiles, round_state st, unsigned *counter)
{
#if HS_HAVE_BULK_COPY
    constexpr int TILE = round_cfg<T, ITEMS, STAGES>::tile;
    constexpr unsigned BYTES = round_cfg<T, ITEMS, STAGES>::bytes;
    constexpr int kSharers = kThreads - 32; // warps 1.. sum tiles while warp 0 looks back
    static_assert(ITEMS % 2 == 1, "odd ITEMS: conflict-free runs");
    // iteration it refills stage (it-1) % STAGES while others already read (it+1) .. (it+3) % STAGES
    static_assert(STAGES >= 5, "the refilled stage must differ from the next three iterations' stages");
    static_assert(BYTES % 16 == 0, "bulk copies move 16-byte units");
    extern __shared__ __align__(128) unsigned char s_raw[];
    T *s_buf = reinterpret_cast<T *>(s_raw);
    __shared__ __align__(8) unsigned long long s_bar[STAGES];
    __shared__ unsigned s_tile[STAGES];
    __shared__ A s_warp[kWarps], s_share[kWarps - 1];
    __shared__ A s_prefix;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    unsigned claimed = 0; // thread 0: claimed a refill ahead, so the atomic's latency is hidden

    auto load_stage = [&](int stage, unsigned t) { // thread 0
        s_tile[stage] = t;
        if (t < ntiles && (size_t)(t + 1) * TILE <= n)
            hs_bulk::load(s_buf + (size_t)stage * TILE, in + (size_t)t * TILE, BYTES, &s_bar[stage]);
    };
    // Tile t's aggregate (stage s, loaded for iteration it), published by warps 1..: each thread
    // sums a stride of the tile in order, then the warp sums, then warp 1 adds the warps in order.
    // Every tile's aggregate is made this one way, so results do not depend on the timing.
    auto publish_aggregate = [&](unsigned t, int s, unsigned it) {
        const int k = tid - 32;
        A x = A(0);
        if ((size_t)(t + 1) * TILE <= n) {
            hs_bulk::barrier_wait(&s_bar[s], (it / STAGES) & 1);
            const T *sb = s_buf + (size_t)s * TILE;
#pragma unroll 4
            for (int i = k; i < TILE; i += kSharers) x = x + (A)sb[i];
        } else { // the last tile, partial: read directly
            const T *g = in + (size_t)t * TILE;
            for (int i = k; i < TILE; i += kSharers)
                if ((size_t)t * TILE + i < n) x = x + (A)g[i];
        }
        x = warp_sum<A>(x);
        if (lane == 0) s_share[warp - 1] = x;
        asm volatile("bar.sync 1, %0;" ::"n"(kSharers) : "memory"); // warps 1.. only
        if (tid == 32) agg_word<A>::put(st.agg, t, tile_total<A, kWarps - 1>(s_share));
    };

    if (tid == 0) {
        for (int s = 0; s < STAGES; s++) hs_bulk::barrier_init(&s_bar[s]);
        for (int s = 0; s < STAGES; s++) load_stage(s, atomicAdd(counter, 1u));
        claimed = atomicAdd(counter, 1u);
    }
    __syncthreads();
    for (size_t i = (size_t)blockIdx.x * kThreads + tid; i < st.clear_words; i += (size_t)gridDim.x * kThreads) st.clear[i] = 0;
    // the first two tiles' aggregates: each tile's is published two iterations before its scan
    for (int k = 0; k < 2; k++) {
        if (warp > 0 && s_tile[k] < ntiles) publish_aggregate(s_tile[k], k, k);
        __syncthreads(); // s_share is reused
    }

    for (unsigned it = 0;; it++) {
        const int s = (int)(it % STAGES), s2 = (int)((it + 2) % STAGES);
        const unsigned t = s_tile[s], t2 = s_tile[s2];
        if (t >= ntiles) break; // tiles are claimed in order: no later one is valid either
        const bool full = (size_t)(t + 1) * TILE <= n;
        T *sb = s_buf + (size_t)s * TILE;
        const size_t first = (size_t)t * TILE + (size_t)tid * ITEMS;
        A a[ITEMS];
        if (full) {
            hs_bulk::barrier_wait(&s_bar[s], (it / STAGES) & 1); // completed long ago (warps 1..)
#pragma unroll
            for (int i = 0; i < ITEMS; i++) a[i] = (A)sb[tid * ITEMS + i];
        } else {
#pragma unroll
            for (int i = 0; i < ITEMS; i++) a[i] = first + i < n ? (A)in[first + i] : A(0);
        }
        A before, wpre;
        block_scan_totals<A, ITEMS>(a, s_warp, before, wpre);
        // Warp 0 gathers this tile's prefix, a round trip to L2 that the loaded memory system
        // makes long; meanwhile the other warps publish the aggregate of the tile after next.
        // Gathering any earlier than this finds predecessors unpublished (measured slower).
        if (warp == 0) {
            const A pre = t > 0 ? round_prefix<A>(st, t, ntiles) : A(0);
            if (lane == 0) s_prefix = pre;
        } else if (t2 < ntiles) {
            publish_aggregate(t2, s2, it + 2);
        }
        __syncthreads();
        const A off = (s_prefix + wpre) + before;
        constexpr int shift = EXCLUSIVE ? 1 : 0;
        if (full) {
            if (EXCLUSIVE && tid == 0) sb[0] = (T)s_prefix;
#pragma unroll
            for (int i = 0; i < ITEMS; i++) // (the tile's last inclusive value is not part of an exclusive scan)
                if (!EXCLUSIVE || i < ITEMS - 1 || tid < kThreads - 1) sb[tid * ITEMS + i + shift] = (T)(off + a[i]);
            hs_bulk::fence_async_proxy();
        } else {
            if (EXCLUSIVE && tid == 0) out[(size_t)t * TILE] = (T)s_prefix;
#pragma unroll
            for (int i = 0; i < ITEMS; i++)
                if (first + i + shift < n) out[first + i + shift] = (T)(off + a[i]);
        }
        __syncthreads();
        if (tid == 0) {
            if (full) hs_bulk::store(out + (size_t)t * TILE, sb, BYTES);
            if (it > 0) { // refill the previous stage once its store has left shared memory
                hs_bulk::wait_stores_read<1>();
                load_stage((int)((it - 1) % STAGES), claimed);
                claimed = atomicAdd(counter, 1u);
            }
        }
    }
    if (tid == 0) hs_bulk::wait_stores();
#else
    __trap(); // not launched below sm_90 (scan_round_launch checks the device)
#endif
}

// Shapes measured on the H200 (exp. of 2026-11-30): 256 x 11 (22 KiB tiles) for 8-byte types and
// 256 x 21 for 32-bit integers, 5 stages (the aggregate two tiles ahead needs them), two blocks per
// SM (three per SM, with smaller tiles, measured slower).  f32 (accumulated in double) is not
// benchmarked: 256 x 15 with 6 stages keeps its registers and shared memory at two blocks per SM.
template <typename T> struct round_tune {
    static constexpr int items = sizeof(T) == 8 ? 11 : std::is_same<T, float>::value ? 15 : 21;
    static constexpr int stages = std::is_same<T, float>::value ? 6 : 5;
};

template <typename T> int scan_round_launch(hs_cuda_ctx *cu, int exclusive, size_t n, const T *in, T *out)
{
    using A = typename acc_of<T>::type;
    constexpr int ITEMS = round_tune<T>::items, STAGES = round_tune<T>::stages;
    using C = round_cfg<T, ITEMS, STAGES>;
    const size_t ntiles = (n + C::tile - 1) / C::tile;
    if (ntiles >= (1ull << 31)) return HS_FAIL(HS_ERR_RUNTIME, "scan: %zu elements is too many for one call", n);
    static int per_device[HS_MAX_DEVICES]; // blocks per SM, per instantiation and device
    HS_CHECK_DEVICE_MEMO(cu);
    int &blocks_per_sm = per_device[cu->device];
    if (!blocks_per_sm) {
        HS_CUDA_CHECK(cudaFuncSetAttribute(scan_round_kernel<T, A, ITEMS, STAGES, false>,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize, (int)C::smem));
        HS_CUDA_CHECK(cudaFuncSetAttribute(scan_round_kernel<T, A, ITEMS, STAGES, true>,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize, (int)C::smem));
        HS_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, scan_round_kernel<T, A, ITEMS, STAGES, false>,
                                                                    kThreads, C::smem));
        if (blocks_per_sm < 1) blocks_per_sm = 1;
    }
    // tile words, round words, then the tile counter (a word of its own); the words come zeroed by
    // the previous call's kernel, which saves a memset launch per call (hs_cuda_flags_acquire)
    const size_t per = agg_word<A>::per, nrounds = ntiles / kRound + 1;
    const size_t words = (ntiles + nrounds) * per + 1, zbytes = words * sizeof(unsigned long long);
    hs_cuda_flags f;
    HS_CHECK(hs_cuda_flags_acquire(cu, zbytes, &f));
    unsigned long long *w = (unsigned long long *)f.use;
    round_state st = {w, w + ntiles * per, (unsigned long long *)f.clear, f.clear_bytes / sizeof(unsigned long long)};
    unsigned *counter = (unsigned *)(w + words - 1);
    size_t grid = (size_t)blocks_per_sm * cu->sm_count;
    if (grid > ntiles) grid = ntiles;
    if (exclusive)
        scan_round_kernel<T, A, ITEMS, STAGES, true><<<(unsigned)grid, kThreads, C::smem, cu->stream>>>(in, out, n, (unsigned)ntiles, st, counter);
    else
        scan_round_kernel<T, A, ITEMS, STAGES, false><<<(unsigned)grid, kThreads, C::smem, cu->stream>>>(in, out, n, (unsigned)ntiles, st, counter);
    HS_CUDA_LAUNCH_CHECK("scan_round_kernel");
    hs_cuda_flags_commit(cu, zbytes);
    return HS_OK;
}

// The persistent kernel runs on sm_90 and up, and only from a build for compute_90 or later
// (HS_CUDA_ARCH, from the Makefile's CUDA_ARCH): a build for an older target runs JIT-compiled PTX
// in which its body is a trap.
bool round_kernel_usable(const hs_cuda_ctx *cu)
{
#if defined(HS_CUDA_ARCH) && HS_CUDA_ARCH >= 90
    return cu->cc_major >= 9;
#else
    (void)cu;
    return false;
#endif
}

template <typename T> int cub_launch(hs_cuda_ctx *cu, int exclusive, size_t n, const T *in, T *out)
{
    size_t tmp = 0;
    if (exclusive) HS_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(NULL, tmp, in, out, n, cu->stream));
    else HS_CUDA_CHECK(cub::DeviceScan::InclusiveSum(NULL, tmp, in, out, n, cu->stream));
    void *buf = NULL;
    HS_CHECK(hs_cuda_scratch(cu, tmp, &buf));
    if (exclusive) HS_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(buf, tmp, in, out, n, cu->stream));
    else HS_CUDA_CHECK(cub::DeviceScan::InclusiveSum(buf, tmp, in, out, n, cu->stream));
    return HS_OK;
}

} // namespace

// A switch over the element type (the template argument), not a backend choice.
#define HS_SCAN_BY_TYPE(FN, ...)                                                                         \
    switch (t) {                                                                                          \
    case HS_F64: return FN<double>(cu, __VA_ARGS__, n, (const double *)in, (double *)out);                \
    case HS_F32: return FN<float>(cu, __VA_ARGS__, n, (const float *)in, (float *)out);                   \
    case HS_I32: return FN<int32_t>(cu, __VA_ARGS__, n, (const int32_t *)in, (int32_t *)out);             \
    case HS_I64: return FN<int64_t>(cu, __VA_ARGS__, n, (const int64_t *)in, (int64_t *)out);             \
    case HS_U32: return FN<uint32_t>(cu, __VA_ARGS__, n, (const uint32_t *)in, (uint32_t *)out);          \
    case HS_U64: return FN<uint64_t>(cu, __VA_ARGS__, n, (const uint64_t *)in, (uint64_t *)out);          \
    default: return HS_FAIL(HS_ERR_RUNTIME, "scan: unsupported dtype %s", hs_dtype_name(t));              \
    }

extern "C" int hs_scan_apply_cuda(hs_cuda_ctx *cu, hs_dtype t, int exclusive, int deterministic, size_t n,
                                  const void *in, void *out)
{
    // the persistent kernel needs the bulk-copy engine and 16-byte aligned data
    if (round_kernel_usable(cu) && hs_aligned16(in, out)) {
        HS_SCAN_BY_TYPE(scan_round_launch, exclusive)
    }
    HS_SCAN_BY_TYPE(scan_new_launch, exclusive, deterministic)
}

extern "C" int hs_scan_apply_ref_cuda(hs_cuda_ctx *cu, hs_dtype t, int exclusive, size_t n, const void *in, void *out)
{
    HS_SCAN_BY_TYPE(scan_launch, exclusive)
}

extern "C" int hs_scan_apply_cub_cuda(hs_cuda_ctx *cu, hs_dtype t, int exclusive, size_t n, const void *in, void *out)
{
    HS_SCAN_BY_TYPE(cub_launch, exclusive)
}
