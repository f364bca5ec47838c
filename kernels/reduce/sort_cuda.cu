// Radix sort, CUDA backend: one histogram pass for all digits, then one single-pass scatter per
// 8-bit digit with decoupled look-back over tiles (integer counts, so exact); CUB peer.
//
// Old implementation (the test reference hs_sort_*_ref; the new one is further down).  Per digit pass each block takes the next tile of 4096 keys (atomic counter: tiles it waits for
// are already running), ranks its keys stably with warp match-any and per-warp digit counters,
// publishes its 256 digit counts, looks back over earlier tiles' counts (aggregate or inclusive
// prefix, packed with a 2-bit state into one word), sorts the tile by digit in shared memory and
// writes each digit's run contiguously.  Keys are read and written once per pass (plus one read
// for the histograms), as in CUB's onesweep.
#include "kernels/cuda_block_reduce.cuh"
#include "kernels/cuda_util.h"
#include "kernels/reduce/sort_impl.h"

#include <stdint.h>

#include <string.h>

#include <cuda/atomic>
#include <cub/device/device_radix_sort.cuh>

namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kItems = 16;
constexpr int kTile = kThreads * kItems;
constexpr int kRadix = 256;
constexpr unsigned kInvalid = 256; // digit of the padding past n

// The order-preserving image of a key (the same map as hs_sort_ord32/64, see sort_impl.h).
__device__ __forceinline__ uint32_t ord(uint32_t u, int kind)
{
    if (kind == 1) return u ^ 0x80000000u;
    if (kind == 2) return ((u & 0x80000000u) ? ~u : u ^ 0x80000000u) - 0x007FFFFFu;
    return u;
}
__device__ __forceinline__ unsigned long long ord(unsigned long long u, int kind)
{
    if (kind == 1) return u ^ 0x8000000000000000ull;
    if (kind == 2) return ((u & 0x8000000000000000ull) ? ~u : u ^ 0x8000000000000000ull) - 0x000FFFFFFFFFFFFFull;
    return u;
}

// Look-back words: 2-bit state (0 not ready, 1 tile count, 2 inclusive prefix) over the count.
template <typename W> struct lb {
    static constexpr int shift = (int)sizeof(W) * 8 - 2;
    static constexpr W mask = (W(1) << shift) - 1;
    static constexpr W aggregate = W(1) << shift;
    static constexpr W inclusive = W(2) << shift;
};

template <typename U> __device__ __forceinline__ U block_exclusive_scan(U v, U *s_warp)
{
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const U x = hs_warp_inclusive_scan<U>(v);
    if (lane == 31) s_warp[warp] = x;
    __syncthreads();
    U pre = 0;
    for (int j = 0; j < warp; j++) pre += s_warp[j];
    __syncthreads();
    return pre + x - v;
}

// One key's digits of every pass into the block's counters.
template <typename K> __device__ __forceinline__ void count_digits(unsigned *s_h, K u)
{
#pragma unroll
    for (int p = 0; p < (int)sizeof(K); p++) atomicAdd(&s_h[p * kRadix + (unsigned)((u >> (8 * p)) & 0xFF)], 1u);
}

// Counts of every digit of every pass; 16-byte loads over the aligned body (nvec vectors;
// 0: scalar loads throughout).
template <typename K>
__global__ void __launch_bounds__(kThreads) hist2_kernel(const K *__restrict__ keys, size_t n, size_t nvec, int kind,
                                                         unsigned long long *__restrict__ hist)
{
    constexpr int P = sizeof(K), PER = 16 / sizeof(K);
    __shared__ unsigned s_h[P * kRadix];
    for (int i = threadIdx.x; i < P * kRadix; i += kThreads) s_h[i] = 0;
    __syncthreads();
    const size_t stride = (size_t)gridDim.x * blockDim.x, gid = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const uint4 *kv = reinterpret_cast<const uint4 *>(keys);
    for (size_t v = gid; v < nvec; v += stride) {
        uint4 q = kv[v];
        K k[PER];
        memcpy(k, &q, sizeof q);
#pragma unroll
        for (int e = 0; e < PER; e++) {
            count_digits<K>(s_h, ord(k[e], kind));
        }
    }
    for (size_t i = nvec * PER + gid; i < n; i += stride) {
        count_digits<K>(s_h, ord(keys[i], kind));
    }
    __syncthreads();
    for (int i = threadIdx.x; i < P * kRadix; i += kThreads)
        if (s_h[i]) atomicAdd(&hist[i], (unsigned long long)s_h[i]);
}

struct sort_smem {
    alignas(16) unsigned char buf[kTile * 8]; // the tile's keys, then its values, in sorted order
    unsigned short whist[kWarps][kRadix];     // per-warp digit counters, then per-warp offsets
    unsigned char dig[kTile];                 // digit of each sorted slot
    long long gbase[kRadix];                  // global position of slot 0 of each digit's run
    unsigned long long dstart[kRadix];        // first global position of each digit in this pass
    unsigned tstart[kRadix];                  // first slot of each digit in the tile
    unsigned long long scan64[kWarps];
    unsigned scan32[kWarps];
    unsigned tile;
};

// Stable rank of each key among the warp's keys of the same digit, in index order (item-major,
// lane-minor; ranks < 32 * ITEMS <= 65535).  dr[i] gets (digit << 16) | rank; whist[warp] ends with
// the warp's digit counts.
template <int ITEMS> __device__ __forceinline__ void rank_in_warp(unsigned short (*whist)[kRadix], unsigned dr[ITEMS])
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const unsigned below = (1u << lane) - 1;
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
        unsigned d = dr[i];
        unsigned peers = __match_any_sync(0xffffffffu, d);
        unsigned cur = d < kInvalid ? whist[warp][d] : 0;
        __syncwarp();
        if (d < kInvalid && lane == __ffs(peers) - 1) whist[warp][d] = (unsigned short)(cur + __popc(peers));
        dr[i] = (d << 16) | (cur + __popc(peers & below));
        __syncwarp();
    }
}

// Thread tid owns digit tid: the warps' counts of it become each warp's first rank among the
// tile's keys of that digit; returns the tile's count of the digit.
__device__ __forceinline__ unsigned warp_digit_offsets(unsigned short (*whist)[kRadix], int tid)
{
    unsigned run = 0;
#pragma unroll
    for (int w = 0; w < kWarps; w++) {
        unsigned c = whist[w][tid];
        whist[w][tid] = (unsigned short)run;
        run += c;
    }
    return run;
}

// The tile's keys into shared memory ordered by digit (s.tstart: each digit's first slot); dr[i]
// becomes the key's slot, ~0u for padding.
template <typename K, int ITEMS, typename S>
__device__ __forceinline__ void place_keys(S &s, int warp, const K key[ITEMS], unsigned dr[ITEMS], K *skeys)
{
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
        unsigned d = dr[i] >> 16;
        if (d < kInvalid) {
            unsigned p = s.tstart[d] + s.whist[warp][d] + (dr[i] & 0xFFFF);
            skeys[p] = key[i];
            s.dig[p] = (unsigned char)d;
            dr[i] = p;
        } else {
            dr[i] = ~0u;
        }
    }
}

// Thread d: exclusive prefix of digit d over all earlier tiles.
template <typename W> __device__ unsigned long long look_back(W *status, size_t tile, unsigned count)
{
    using cref = cuda::atomic_ref<W, cuda::thread_scope_device>;
    const unsigned d = threadIdx.x;
    cref mine(status[tile * kRadix + d]);
    if (tile == 0) {
        mine.store(lb<W>::inclusive | (W)count, cuda::memory_order_relaxed);
        return 0;
    }
    mine.store(lb<W>::aggregate | (W)count, cuda::memory_order_relaxed);
    unsigned long long prefix = 0;
    size_t j = tile - 1;
    for (;;) {
        cref other(status[j * kRadix + d]);
        W w = other.load(cuda::memory_order_relaxed);
        W state = w >> lb<W>::shift;
        if (state == 0) continue;
        prefix += (unsigned long long)(w & lb<W>::mask);
        if (state == 2) break;
        j--; // tile 0 is always inclusive, so j stays >= 0
    }
    mine.store(lb<W>::inclusive | (W)(prefix + count), cuda::memory_order_relaxed);
    return prefix;
}

template <typename K, typename V, bool HAS_V, typename W>
__global__ void __launch_bounds__(kThreads, 2)
    onesweep_kernel(const K *__restrict__ kin, K *__restrict__ kout, const V *__restrict__ vin, V *__restrict__ vout,
                    size_t n, int shift, int kind, const unsigned long long *__restrict__ hist, W *status,
                    unsigned *tile_counter)
{
    __shared__ sort_smem s;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    if (tid == 0) s.tile = atomicAdd(tile_counter, 1u);
    for (int i = tid; i < kWarps * kRadix / 2; i += kThreads) reinterpret_cast<unsigned *>(s.whist)[i] = 0;
    s.dstart[tid] = block_exclusive_scan<unsigned long long>(hist[tid], s.scan64); // syncs the block
    const size_t tile = s.tile, tile_base = tile * kTile;
    const size_t valid = n - tile_base < (size_t)kTile ? n - tile_base : (size_t)kTile;

    K key[kItems];
    V val[HAS_V ? kItems : 1];
    unsigned dr[kItems];
    const size_t first = tile_base + (size_t)warp * 32 * kItems + lane;
#pragma unroll
    for (int i = 0; i < kItems; i++) {
        size_t idx = first + (size_t)i * 32;
        dr[i] = kInvalid;
        if (idx < n) {
            key[i] = kin[idx];
            if constexpr (HAS_V) val[i] = vin[idx];
            dr[i] = (unsigned)((ord(key[i], kind) >> shift) & 0xFF);
        }
    }
    rank_in_warp<kItems>(s.whist, dr);
    __syncthreads();

    const unsigned run = warp_digit_offsets(s.whist, tid); // thread tid owns digit tid from here
    unsigned long long prefix = look_back<W>(status, tile, run);
    unsigned tstart = block_exclusive_scan<unsigned>(run, s.scan32);
    s.tstart[tid] = tstart;
    s.gbase[tid] = (long long)(s.dstart[tid] + prefix) - (long long)tstart;
    __syncthreads();

    K *skeys = reinterpret_cast<K *>(s.buf);
    place_keys<K, kItems>(s, warp, key, dr, skeys);
    __syncthreads();
    for (int j = tid; j < (int)valid; j += kThreads) kout[s.gbase[s.dig[j]] + j] = skeys[j];
    if constexpr (HAS_V) {
        __syncthreads();
        V *svals = reinterpret_cast<V *>(s.buf);
#pragma unroll
        for (int i = 0; i < kItems; i++)
            if (dr[i] != ~0u) svals[dr[i]] = val[i];
        __syncthreads();
        for (int j = tid; j < (int)valid; j += kThreads) vout[s.gbase[s.dig[j]] + j] = svals[j];
    }
}

size_t round_up(size_t b) { return (b + 255) & ~(size_t)255; }

template <typename K, typename V, bool HAS_V, typename W>
int sort_run(hs_cuda_ctx *cu, int kind, size_t n, K *keys, V *vals)
{
    constexpr int P = sizeof(K);
    const size_t ntiles = (n + kTile - 1) / kTile;
    if (ntiles >= (1ull << 32)) return HS_FAIL(HS_ERR_RUNTIME, "sort: %zu keys is too many for one call", n);
    size_t kbytes = round_up(n * sizeof(K)), vbytes = HAS_V ? round_up(n * sizeof(V)) : 0;
    size_t hbytes = round_up(P * kRadix * sizeof(unsigned long long));
    size_t sbytes = ntiles * kRadix * sizeof(W) + 16; // look-back words, then the tile counter
    char *buf = NULL;
    HS_CHECK(hs_cuda_scratch(cu, kbytes + vbytes + hbytes + sbytes, (void **)&buf));
    K *ktmp = (K *)buf;
    V *vtmp = (V *)(buf + kbytes);
    unsigned long long *hist = (unsigned long long *)(buf + kbytes + vbytes);
    W *status = (W *)(buf + kbytes + vbytes + hbytes);
    unsigned *counter = (unsigned *)((char *)status + ntiles * kRadix * sizeof(W));

    HS_CUDA_CHECK(cudaMemsetAsync(hist, 0, hbytes, cu->stream));
    int hgrid = hs_cuda_blocks(cu, n, kThreads);
    if (hgrid > cu->sm_count * 4) hgrid = cu->sm_count * 4;
    hist2_kernel<K><<<hgrid, kThreads, 0, cu->stream>>>(keys, n, 0, kind, hist); // scalar loads, as before
    HS_CUDA_LAUNCH_CHECK("hist2_kernel");
    for (int p = 0; p < P; p++) { // an even number of passes leaves the result in keys/vals
        K *ks = p % 2 ? ktmp : keys, *kd = p % 2 ? keys : ktmp;
        V *vs = p % 2 ? vtmp : vals, *vd = p % 2 ? vals : vtmp;
        HS_CUDA_CHECK(cudaMemsetAsync(status, 0, sbytes, cu->stream));
        onesweep_kernel<K, V, HAS_V, W><<<(unsigned)ntiles, kThreads, 0, cu->stream>>>(
            ks, kd, vs, vd, n, 8 * p, kind, hist + (size_t)p * kRadix, status, counter);
        HS_CUDA_LAUNCH_CHECK("onesweep_kernel");
    }
    return HS_OK;
}

// ---------------------------------------------------------------- new onesweep ("early counts")
//
// The same algorithm as above, reworked where the old kernel loses time (measured on the H200,
// exp. of 2026-11-30):
//   * ranking: each warp first counts its digits with shared atomics, the tile publishes its
//     counts to the look-back before ranking (so successors wait less), and those counts are
//     scanned into block-wide offsets; a key's rank is then its final slot in the tile: the
//     lanes holding the same digit (found by eight ballots, or for 32-bit keys by OR-ing lane
//     bits into a per-digit word: __match_any_sync is several times slower on sm_90) take one
//     atomicAdd per group;
//   * keys travel as their order-preserving bits (padding all ones: digit 255, ranked last) and
//     are mapped back as they are written; 384 threads, no register spills;
//   * values are loaded only for the scatter, through the same shared buffer.
// One thread per digit looks back over kLbWin predecessors' words at a time.

// Lanes whose labels agree in the low BITS bits (one ballot per bit).
template <int BITS> __device__ __forceinline__ unsigned match_ballot(unsigned label)
{
    unsigned m = 0xffffffffu;
#pragma unroll
    for (int b = 0; b < BITS; b++) {
        const unsigned bit = (label >> b) & 1u, bal = __ballot_sync(0xffffffffu, bit);
        m &= bit ? bal : ~bal;
    }
    return m;
}

__device__ __forceinline__ unsigned lanemask_le()
{
    unsigned r;
    asm("mov.u32 %0, %%lanemask_le;" : "=r"(r));
    return r;
}

// Inverse of ord.
__device__ __forceinline__ uint32_t ord_inv(uint32_t o, int kind)
{
    if (kind == 1) return o ^ 0x80000000u;
    if (kind == 2) {
        const uint32_t u = o + 0x007FFFFFu;
        return (u & 0x80000000u) ? u ^ 0x80000000u : ~u;
    }
    return o;
}
__device__ __forceinline__ unsigned long long ord_inv(unsigned long long o, int kind)
{
    if (kind == 1) return o ^ 0x8000000000000000ull;
    if (kind == 2) {
        const unsigned long long u = o + 0x000FFFFFFFFFFFFFull;
        return (u & 0x8000000000000000ull) ? u ^ 0x8000000000000000ull : ~u;
    }
    return o;
}

constexpr int kLbWin = 4;

// Thread d, tile > 0, after publishing its own count: exclusive prefix of digit d over all earlier
// tiles.  kLbWin words are requested together; they are then consumed newest first, spinning only
// on a word that is not ready, up to the first inclusive one.
template <typename W> __device__ unsigned long long look_back_win(W *status, long long tile)
{
    using cref = cuda::atomic_ref<W, cuda::thread_scope_device>;
    const unsigned d = threadIdx.x;
    unsigned long long prefix = 0;
    for (long long j = tile - 1;; j -= kLbWin) {
        W w[kLbWin];
#pragma unroll
        for (int k = 0; k < kLbWin; k++)
            w[k] = j - k >= 0 ? cref(status[(size_t)(j - k) * kRadix + d]).load(cuda::memory_order_relaxed)
                              : lb<W>::inclusive; // not reached: tile 0 is inclusive
        bool done = false;
#pragma unroll
        for (int k = 0; k < kLbWin; k++) {
            if (!done) { // no break: the loop must unroll to keep w[] in registers
                W x = w[k];
                while ((x >> lb<W>::shift) == 0) {
                    __nanosleep(16);
                    x = cref(status[(size_t)(j - k) * kRadix + d]).load(cuda::memory_order_relaxed);
                }
                prefix += (unsigned long long)(x & lb<W>::mask);
                done = (x >> lb<W>::shift) == 2;
            }
        }
        if (done) return prefix;
    }
}

// Block p: exclusive scan of pass p's digit counts (the first output position of each digit).
__global__ void __launch_bounds__(kThreads) digit_start_kernel(const unsigned long long *hist, unsigned long long *start)
{
    __shared__ unsigned long long s_warp[kWarps];
    const size_t i = (size_t)blockIdx.x * kRadix + threadIdx.x;
    start[i] = block_exclusive_scan<unsigned long long>(hist[i], s_warp);
}

// Dynamic shared memory of the kernel: one buffer (per-warp digit offsets and match words while
// ranking, then the tile's keys, then its values), the digits' global bases, scan scratch, tile.
template <typename K, typename V, bool HAS_V, int T, int I, int MATCH> struct ec_layout {
    static constexpr int tile = T * I;
    static constexpr int warps = T / 32;
    static constexpr int elem = (HAS_V && sizeof(V) > sizeof(K)) ? (int)sizeof(V) : (int)sizeof(K);
    static constexpr int rank_bytes = warps * kRadix * 4 * (MATCH == 1 ? 2 : 1);
    static constexpr int buf = ((tile * elem > rank_bytes ? tile * elem : rank_bytes) + 15) / 16 * 16;
    static constexpr int goff = buf;                // OffT[256]
    static constexpr int scan = goff + kRadix * 8;  // unsigned[32]
    static constexpr int tilew = scan + 32 * 4;     // unsigned
    static constexpr int bytes = tilew + 16;
};

// Digit of order-mapped bits; asm volatile so that the compiler recomputes the digits of the
// histogram loop in the ranking loop instead of keeping them live (which spilled).
__device__ __forceinline__ unsigned ec_digit(uint32_t k, int shift)
{
    unsigned d;
    asm volatile("bfe.u32 %0, %1, %2, 8;" : "=r"(d) : "r"(k), "r"(shift));
    return d;
}
__device__ __forceinline__ unsigned ec_digit(unsigned long long k, int shift)
{
    unsigned long long d;
    asm volatile("bfe.u64 %0, %1, %2, 8;" : "=l"(d) : "l"(k), "r"(shift));
    return (unsigned)d;
}

// MATCH: 0 ballots, 1 OR-ed lane bits.  PK: two 16-bit ranks per register.  OffT: type of the
// digits' global bases (unsigned while n < 2^32).  T >= 256 (a thread per digit).
template <typename K, typename V, bool HAS_V, typename W, typename OffT, int T, int I, int MINB, int MATCH, bool PK>
__global__ void __launch_bounds__(T, MINB)
    onesweep_ec_kernel(const K *__restrict__ kin, K *__restrict__ kout, const V *__restrict__ vin, V *__restrict__ vout,
                       size_t n, int shift, int kind, const unsigned long long *__restrict__ dstart, W *status,
                       unsigned *tile_counter)
{
    static_assert(T >= kRadix && T % 32 == 0, "a thread per digit, whole warps");
    static_assert(!PK || T * I <= 65536, "packed ranks are 16-bit");
    using L = ec_layout<K, V, HAS_V, T, I, MATCH>;
    constexpr int TILE = L::tile, WARPS = L::warps;
    extern __shared__ __align__(16) unsigned char ec_smem[];
    int *warp_off = reinterpret_cast<int *>(ec_smem);               // [WARPS][256]
    int *masks = reinterpret_cast<int *>(ec_smem) + WARPS * kRadix; // [WARPS][256], MATCH 1
    K *skeys = reinterpret_cast<K *>(ec_smem);
    OffT *goff = reinterpret_cast<OffT *>(ec_smem + L::goff);
    unsigned *sscan = reinterpret_cast<unsigned *>(ec_smem + L::scan);
    unsigned *stile = reinterpret_cast<unsigned *>(ec_smem + L::tilew);

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    if (tid == 0) *stile = atomicAdd(tile_counter, 1u);
    {
        constexpr int NZ = WARPS * kRadix * (MATCH == 1 ? 2 : 1) / 4;
        uint4 *z = reinterpret_cast<uint4 *>(ec_smem);
        for (int i = tid; i < NZ; i += T) z[i] = make_uint4(0, 0, 0, 0);
    }
    __syncthreads();
    const unsigned tile = *stile;
    const size_t tile_base = (size_t)tile * TILE;
    const bool full = n - tile_base >= (size_t)TILE;
    const int valid = full ? TILE : (int)(n - tile_base);
    const int mine = warp * 32 * I + lane; // warp-striped: item i of this thread is slot mine + 32 i
    const K *kp = kin + tile_base + mine;

    K key[I];
    if (full) {
#pragma unroll
        for (int i = 0; i < I; i++) key[i] = kp[i * 32];
#pragma unroll
        for (int i = 0; i < I; i++) key[i] = ord(key[i], kind);
    } else {
#pragma unroll
        for (int i = 0; i < I; i++) key[i] = mine + i * 32 < valid ? ord(kp[i * 32], kind) : ~K(0);
    }

    int *wo = warp_off + warp * kRadix;
#pragma unroll
    for (int i = 0; i < I; i++) atomicAdd(&wo[ec_digit(key[i], shift)], 1);
    __syncthreads();

    // thread d < 256 owns digit d: per-warp exclusive offsets, the tile's count, published early
    using cref = cuda::atomic_ref<W, cuda::thread_scope_device>;
    unsigned count = 0, excl = 0;
    if (tid < kRadix) {
#pragma unroll
        for (int w = 0; w < WARPS; w++) {
            const int c = warp_off[w * kRadix + tid];
            warp_off[w * kRadix + tid] = (int)count;
            count += (unsigned)c;
        }
        cref(status[(size_t)tile * kRadix + tid])
            .store((tile == 0 ? lb<W>::inclusive : lb<W>::aggregate) | (W)count, cuda::memory_order_relaxed);
        // exclusive scan of the counts over the digits (block_exclusive_scan's, without its
        // block barriers: only threads below 256 take part)
        const unsigned x = hs_warp_inclusive_scan<unsigned>(count);
        if (lane == 31) sscan[warp] = x;
        excl = x - count;
    }
    __syncthreads();
    if (tid < kRadix) {
#pragma unroll
        for (int j = 0; j < kRadix / 32; j++)
            if (j < warp) excl += sscan[j];
#pragma unroll
        for (int w = 0; w < WARPS; w++) warp_off[w * kRadix + tid] += (int)excl;
        goff[tid] = (OffT)dstart[tid] - (OffT)excl;
    }
    __syncthreads();

    // ranks: the final slot of each key in the tile (stable: item-major, lane-minor per warp)
    constexpr int NR = PK ? (I + 1) / 2 : I;
    unsigned rk[NR];
#pragma unroll
    for (int j = 0; j < NR; j++) rk[j] = 0;
    auto rank_of = [&](int i) -> int { return PK ? (int)((rk[i / 2] >> (16 * (i % 2))) & 0xFFFFu) : (int)rk[i]; };
    {
        int *wm = masks + warp * kRadix;
        const unsigned le = lanemask_le();
#pragma unroll
        for (int i = 0; i < I; i++) {
            const unsigned d = ec_digit(key[i], shift);
            unsigned m;
            if constexpr (MATCH == 0) {
                m = match_ballot<8>(d);
            } else {
                atomicOr(&wm[d], 1 << lane);
                __syncwarp();
                m = (unsigned)wm[d];
            }
            const int leader = 31 - __clz((int)m);
            const int pc = __popc(m & le);
            int off = 0;
            if (lane == leader) off = atomicAdd(&wo[d], pc);
            off = __shfl_sync(0xffffffffu, off, leader);
            if constexpr (MATCH == 1) {
                if (lane == leader) wm[d] = 0;
                __syncwarp();
            }
            const unsigned r = (unsigned)(off + pc - 1);
            if (PK) rk[i / 2] |= r << (16 * (i % 2));
            else rk[i] = r;
        }
    }
    __syncthreads(); // the ranking words are dead; the buffer takes the keys
#pragma unroll
    for (int i = 0; i < I; i++) skeys[rank_of(i)] = key[i];

    if (tid < kRadix && tile != 0) {
        const unsigned long long prefix = look_back_win<W>(status, (long long)tile);
        cref(status[(size_t)tile * kRadix + tid]).store(lb<W>::inclusive | (W)(prefix + count), cuda::memory_order_relaxed);
        goff[tid] += (OffT)prefix;
    }
    __syncthreads();

    // scatter the keys (slot tid + u T); the digits are kept for the values
    constexpr int ND = HAS_V ? (I + 3) / 4 : 1;
    unsigned dpk[ND];
#pragma unroll
    for (int u = 0; u < ND; u++) dpk[u] = 0;
#pragma unroll
    for (int u = 0; u < I; u++) {
        const int idx = tid + u * T;
        if (full || idx < valid) {
            const K k = skeys[idx];
            const unsigned d = (unsigned)(k >> shift) & 0xFFu;
            kout[(size_t)(goff[d] + (OffT)idx)] = ord_inv(k, kind);
            if constexpr (HAS_V) dpk[u / 4] |= d << (8 * (u % 4));
        }
    }
    if constexpr (HAS_V) {
        const V *vp = vin + tile_base + mine;
        V val[I];
#pragma unroll
        for (int i = 0; i < I; i++) val[i] = full || mine + i * 32 < valid ? vp[i * 32] : V(0);
        __syncthreads(); // every key has left the buffer
        V *svals = reinterpret_cast<V *>(ec_smem);
#pragma unroll
        for (int i = 0; i < I; i++) svals[rank_of(i)] = val[i]; // padding ranks are >= valid, < TILE
        __syncthreads();
#pragma unroll
        for (int u = 0; u < I; u++) {
            const int idx = tid + u * T;
            if (full || idx < valid) {
                const unsigned d = (dpk[u / 4] >> (8 * (u % 4))) & 0xFFu;
                vout[(size_t)(goff[d] + (OffT)idx)] = svals[idx];
            }
        }
    }
}

// Shapes measured on the H200 (exp. of 2026-11-30; CUB/ours in brackets): u32 keys 384 x 20 with
// OR-ed match words (0.95), u32 pairs 384 x 23 (1.12), 64-bit keys and pairs 384 x 20 with packed
// ranks (1.06, 1.08); mixed widths 384 x 16.  Two blocks per SM throughout.
template <typename K, typename V, bool HAS_V> struct ec_tune {
    static constexpr int kb = sizeof(K), vb = HAS_V ? (int)sizeof(V) : 0;
    static constexpr int threads = 384;
    static constexpr int items = (vb == 0 || vb == kb) ? (kb == 4 && vb == 4 ? 23 : 20) : 16;
    static constexpr int match = kb == 4 && vb == 0 ? 1 : 0;
    static constexpr bool packed = kb == 8 && (vb == 0 || vb == 8);
};

template <typename K, typename V, bool HAS_V, typename W>
int sort_run2(hs_cuda_ctx *cu, int kind, size_t n, K *keys, V *vals)
{
    using TU = ec_tune<K, V, HAS_V>;
    constexpr int P = sizeof(K), T = TU::threads, I = TU::items, MATCH = TU::match;
    using L = ec_layout<K, V, HAS_V, T, I, MATCH>;
    auto kernel = onesweep_ec_kernel<K, V, HAS_V, W, W, T, I, 2, MATCH, TU::packed>; // OffT = W: n < 2^30 or 64-bit
    constexpr size_t TILE = (size_t)L::tile;
    const size_t ntiles = (n + TILE - 1) / TILE;
    if (ntiles >= (1ull << 32)) return HS_FAIL(HS_ERR_RUNTIME, "sort: %zu keys is too many for one call", n);
    static bool configured[HS_MAX_DEVICES]; // per instantiation and device
    HS_CHECK_DEVICE_MEMO(cu);
    if (!configured[cu->device]) {
        HS_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, L::bytes));
        configured[cu->device] = true;
    }
    size_t kbytes = round_up(n * sizeof(K)), vbytes = HAS_V ? round_up(n * sizeof(V)) : 0;
    size_t hbytes = round_up(2 * P * kRadix * sizeof(unsigned long long)); // counts, then digit starts
    size_t sbytes = ntiles * kRadix * sizeof(W) + 16;                      // look-back words, tile counter
    char *buf = NULL;
    HS_CHECK(hs_cuda_scratch(cu, kbytes + vbytes + hbytes + sbytes, (void **)&buf));
    K *ktmp = (K *)buf;
    V *vtmp = (V *)(buf + kbytes);
    unsigned long long *hist = (unsigned long long *)(buf + kbytes + vbytes), *start = hist + P * kRadix;
    W *status = (W *)(buf + kbytes + vbytes + hbytes);
    unsigned *counter = (unsigned *)((char *)status + ntiles * kRadix * sizeof(W));

    HS_CUDA_CHECK(cudaMemsetAsync(hist, 0, P * kRadix * sizeof(unsigned long long), cu->stream));
    const size_t nvec = (reinterpret_cast<uintptr_t>(keys) & 15) == 0 ? n * sizeof(K) / 16 : 0;
    int hgrid = hs_cuda_blocks(cu, nvec ? nvec : n, kThreads);
    if (hgrid > cu->sm_count * 8) hgrid = cu->sm_count * 8;
    hist2_kernel<K><<<hgrid, kThreads, 0, cu->stream>>>(keys, n, nvec, kind, hist);
    HS_CUDA_LAUNCH_CHECK("hist2_kernel");
    digit_start_kernel<<<P, kThreads, 0, cu->stream>>>(hist, start);
    HS_CUDA_LAUNCH_CHECK("digit_start_kernel");
    for (int p = 0; p < P; p++) { // an even number of passes leaves the result in keys/vals
        K *ks = p % 2 ? ktmp : keys, *kd = p % 2 ? keys : ktmp;
        V *vs = p % 2 ? vtmp : vals, *vd = p % 2 ? vals : vtmp;
        HS_CUDA_CHECK(cudaMemsetAsync(status, 0, sbytes, cu->stream));
        kernel<<<(unsigned)ntiles, T, L::bytes, cu->stream>>>(ks, kd, vs, vd, n, 8 * p, kind, start + (size_t)p * kRadix,
                                                               status, counter);
        HS_CUDA_LAUNCH_CHECK("onesweep_ec_kernel");
    }
    return HS_OK;
}

template <typename K, typename V, bool HAS_V>
int sort_width(hs_cuda_ctx *cu, bool ref, int kind, size_t n, void *keys, void *vals)
{
    // 30-bit counts in 32-bit look-back words while they suffice: half the look-back traffic
    if (ref) {
        if (n < (1ull << 30)) return sort_run<K, V, HAS_V, unsigned>(cu, kind, n, (K *)keys, (V *)vals);
        return sort_run<K, V, HAS_V, unsigned long long>(cu, kind, n, (K *)keys, (V *)vals);
    }
    if (n < (1ull << 30)) return sort_run2<K, V, HAS_V, unsigned>(cu, kind, n, (K *)keys, (V *)vals);
    return sort_run2<K, V, HAS_V, unsigned long long>(cu, kind, n, (K *)keys, (V *)vals);
}

template <typename K> int sort_key(hs_cuda_ctx *cu, bool ref, int kind, size_t vb, size_t n, void *keys, void *vals)
{
    if (vb == 0) return sort_width<K, uint32_t, false>(cu, ref, kind, n, keys, NULL);
    if (vb == 4) return sort_width<K, uint32_t, true>(cu, ref, kind, n, keys, vals);
    return sort_width<K, unsigned long long, true>(cu, ref, kind, n, keys, vals);
}

// ---------------------------------------------------------------- CUB peer


template <typename K, typename V> int cub_sort(hs_cuda_ctx *cu, bool has_v, size_t n, K *keys, V *vals)
{
    size_t tmp = 0;
    cub::DoubleBuffer<K> dk(keys, keys);
    cub::DoubleBuffer<V> dv(vals, vals);
    if (has_v) HS_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(NULL, tmp, dk, dv, n, 0, (int)sizeof(K) * 8, cu->stream));
    else HS_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(NULL, tmp, dk, n, 0, (int)sizeof(K) * 8, cu->stream));
    size_t kbytes = round_up(n * sizeof(K)), vbytes = has_v ? round_up(n * sizeof(V)) : 0;
    char *buf = NULL;
    HS_CHECK(hs_cuda_scratch(cu, kbytes + vbytes + tmp, (void **)&buf));
    dk = cub::DoubleBuffer<K>(keys, (K *)buf);
    dv = cub::DoubleBuffer<V>(vals, (V *)(buf + kbytes));
    if (has_v)
        HS_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(buf + kbytes + vbytes, tmp, dk, dv, n, 0, (int)sizeof(K) * 8, cu->stream));
    else
        HS_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(buf + kbytes + vbytes, tmp, dk, n, 0, (int)sizeof(K) * 8, cu->stream));
    if (dk.Current() != keys)
        HS_CUDA_CHECK(cudaMemcpyAsync(keys, dk.Current(), n * sizeof(K), cudaMemcpyDeviceToDevice, cu->stream));
    if (has_v && dv.Current() != vals)
        HS_CUDA_CHECK(cudaMemcpyAsync(vals, dv.Current(), n * sizeof(V), cudaMemcpyDeviceToDevice, cu->stream));
    return HS_OK;
}

template <typename K> int cub_key(hs_cuda_ctx *cu, size_t vb, size_t n, void *keys, void *vals)
{
    if (vb == 8) return cub_sort<K, unsigned long long>(cu, true, n, (K *)keys, (unsigned long long *)vals);
    return cub_sort<K, uint32_t>(cu, vb == 4, n, (K *)keys, (uint32_t *)vals);
}

} // namespace

extern "C" int hs_sort_apply_cuda(hs_cuda_ctx *cu, int key_kind, size_t key_bytes, size_t value_bytes, size_t n,
                                  void *keys, void *values)
{
    if (key_bytes == 4) return sort_key<uint32_t>(cu, false, key_kind, value_bytes, n, keys, values);
    return sort_key<unsigned long long>(cu, false, key_kind, value_bytes, n, keys, values);
}

extern "C" int hs_sort_apply_ref_cuda(hs_cuda_ctx *cu, int key_kind, size_t key_bytes, size_t value_bytes, size_t n,
                                      void *keys, void *values)
{
    if (key_bytes == 4) return sort_key<uint32_t>(cu, true, key_kind, value_bytes, n, keys, values);
    return sort_key<unsigned long long>(cu, true, key_kind, value_bytes, n, keys, values);
}

extern "C" int hs_sort_apply_cub_cuda(hs_cuda_ctx *cu, hs_dtype key, size_t value_bytes, size_t n, void *keys, void *values)
{
    switch (key) {
    case HS_U32: return cub_key<uint32_t>(cu, value_bytes, n, keys, values);
    case HS_U64: return cub_key<uint64_t>(cu, value_bytes, n, keys, values);
    case HS_I32: return cub_key<int32_t>(cu, value_bytes, n, keys, values);
    case HS_I64: return cub_key<int64_t>(cu, value_bytes, n, keys, values);
    case HS_F32: return cub_key<float>(cu, value_bytes, n, keys, values);
    case HS_F64: return cub_key<double>(cu, value_bytes, n, keys, values);
    default: return HS_FAIL(HS_ERR_RUNTIME, "sort: unsupported key dtype %s", hs_dtype_name(key));
    }
}
