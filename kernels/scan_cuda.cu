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

// The block-wide part of a tile's scan, shared by both implementations: a[] (this thread's ITEMS
// consecutive elements) becomes its running sum; `before` gets the sum of the earlier lanes of the
// warp and `wpre` that of the earlier warps (s_warp holds the warp totals; block-synchronising).
template <typename A, int ITEMS> __device__ __forceinline__ void block_scan_totals(A a[ITEMS], A *s_warp, A &before, A &wpre)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
    for (int i = 1; i < ITEMS; i++) a[i] = a[i - 1] + a[i];
    A x = a[ITEMS - 1]; // Kogge-Stone over the warp's thread totals
#pragma unroll
    for (int off = 1; off < 32; off <<= 1) {
        A y = __shfl_up_sync(0xffffffffu, x, off);
        if (lane >= off) x = y + x;
    }
    before = __shfl_up_sync(0xffffffffu, x, 1);
    if (lane == 0) before = A(0);
    if (lane == 31) s_warp[warp] = x;
    __syncthreads();
    wpre = A(0);
    for (int j = 0; j < warp; j++) wpre = wpre + s_warp[j];
}

// The tile's total from the warp totals, in warp order.
template <typename A> __device__ __forceinline__ A tile_total(const A *s_warp)
{
    A total = s_warp[0];
    for (int j = 1; j < kWarps; j++) total = total + s_warp[j];
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
    static bool configured = false; // one per instantiation
    if (!configured) {
        HS_CUDA_CHECK(cudaFuncSetAttribute(scan_lb_kernel<T, A, ITEMS, K, false>,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        HS_CUDA_CHECK(cudaFuncSetAttribute(scan_lb_kernel<T, A, ITEMS, K, true>,
                                           cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        configured = true;
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
    const int vec_ok = ((reinterpret_cast<uintptr_t>(in) | reinterpret_cast<uintptr_t>(out)) & 15) == 0;
    if (exclusive)
        scan_lb_kernel<T, A, ITEMS, K, true><<<(unsigned)ntiles, kThreads, smem, cu->stream>>>(in, out, n, vec_ok, st, counter);
    else
        scan_lb_kernel<T, A, ITEMS, K, false><<<(unsigned)ntiles, kThreads, smem, cu->stream>>>(in, out, n, vec_ok, st, counter);
    HS_CUDA_LAUNCH_CHECK("scan_lb_kernel");
    return HS_OK;
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
