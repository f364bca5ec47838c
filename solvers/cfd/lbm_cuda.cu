// The lattice Boltzmann model's kernels on the GPU: one thread per cell (x fastest, coalesced SoA), the AA pattern in place, the pointwise operators of lbm_point.h.
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "kernels/cuda_util.h"
#include "kernels/half_cuda.cuh"
#define HS_LBM_H2F(b) hs::f16_to_f32_hw(b)
#define HS_LBM_F2H(v) hs::f32_to_f16_hw(v)
#include "solvers/cfd/lbm_point.h"

namespace {

constexpr int BX = 128;

// The populations and the update of a cell through the index type's functions (I32: the 32-bit ones).
template <int S>
using real_of = typename std::conditional<S == HS_LBM_F64, double, float>::type;

template <int Q, int S, int ODD, bool I32, typename T>
__device__ __forceinline__ void load_at(const hs_lbm_launch &L, T e, real_of<S> *f)
{
    if (I32) {
        if (S == HS_LBM_F64) hs_lbm_load_di(&L, (int32_t)e, Q, S, ODD, (double *)f);
        else hs_lbm_load_fi(&L, (int32_t)e, Q, S, ODD, (float *)f);
    } else {
        if (S == HS_LBM_F64) hs_lbm_load_d(&L, e, Q, S, ODD, (double *)f);
        else hs_lbm_load_f(&L, e, Q, S, ODD, (float *)f);
    }
}

template <int Q, int S, int ODD, bool I32, typename T>
__device__ __forceinline__ void update_at(const hs_lbm_launch &L, T i, T j, T k, T e, T fe, int near, real_of<S> *f)
{
    if (I32) {
        if (S == HS_LBM_F64) hs_lbm_cell_loaded_di(&L, (int32_t)i, (int32_t)j, (int32_t)k, (int32_t)e, (int32_t)fe, near, Q, S, ODD, (double *)f);
        else hs_lbm_cell_loaded_fi(&L, (int32_t)i, (int32_t)j, (int32_t)k, (int32_t)e, (int32_t)fe, near, Q, S, ODD, (float *)f);
    } else {
        if (S == HS_LBM_F64) hs_lbm_cell_loaded_d(&L, i, j, k, e, fe, near, Q, S, ODD, (double *)f);
        else hs_lbm_cell_loaded_f(&L, i, j, k, e, fe, near, Q, S, ODD, (float *)f);
    }
}

// One thread per cell of the box; blockIdx.y and .z walk the rows and planes.  The populations are
// 19 separate arrays (structure of arrays), so a warp's 32 consecutive cells read and write 32
// consecutive elements of each array: whole cache lines, each population moved once per step.
// The populations a bulk cell needs are loaded together with its flag, not after it: waiting for the
// flag first put two memory latencies in a row into every cell's update, and with them the cell rate
// stayed the same whether a population took 4 bytes or 2.  A boundary cell's update replaces what
// came from non-fluid neighbours; non-fluid cells load and drop.
// Register caps (blocks per SM in __launch_bounds__): uncapped, the step kernels take 130-170
// registers (the boundary path), too few warps to keep the memory busy; at 8 blocks (64 registers)
// the odd step spills nothing, and the even step, capped at 6 blocks, takes 64 as well since its
// loads are issued with the flag.  H200, D3Q19 512^3, 2026-12-03: fp32 23,124 MLUP/s, fp16 storage
// 31,240 with these caps; 8/8 the same, 10/10 22,709 / 32,005, 12/12 19,844 / 29,471.  fp64 would
// spill hundreds of bytes under these caps and goes without.  Arrays under 2^31 elements (every
// fp32 box that fits an H200) are indexed in 32 bits.
// FLAT: the box's rows are numbered one after another and a block takes BX consecutive cells of
// that order (a warp may end one row and start the next), for rows that are not whole blocks long:
// a periodic or split axis widens the box by its ghost rings (258 or 260 cells where the interior is
// 256), and a block a row would leave a third block per row with two or four cells to do.
template <int Q, int S, int ODD, bool I32, bool FLAT>
__global__ void __launch_bounds__(BX, S == HS_LBM_F64 ? 1 : ODD ? 8 : 6) step_kernel(const hs_lbm_launch L)
{
    typedef typename std::conditional<I32, int32_t, int64_t>::type T;
    T i, j;
    if (FLAT) {
        const T nx = (T)(L.hi[0] - L.lo[0]), cell = (T)blockIdx.x * BX + (T)threadIdx.x, row = cell / nx;
        if (row >= (T)(L.hi[1] - L.lo[1])) return;
        i = (T)L.lo[0] + (cell - row * nx), j = (T)L.lo[1] + row;
    } else {
        i = (T)L.lo[0] + (T)blockIdx.x * BX + (T)threadIdx.x;
        if (i >= (T)L.hi[0]) return;
        j = (T)L.lo[1] + (T)blockIdx.y;
    }
    const T k = (T)L.lo[2] + (T)(FLAT ? blockIdx.y : blockIdx.z);
    const T fe = (T)L.forigin + i + j * (T)L.fsy + k * (T)L.fsz, e = (T)L.origin + i + j * (T)L.sy + k * (T)L.sz;
    const int fl = L.flag[fe];
    real_of<S> f[HS_LBM_QMAX];
    load_at<Q, S, ODD, I32>(L, e, f);
    const bool fluid = (fl & HS_LBM_KIND) == HS_LBM_FLUID;
    // A warp with no cell next to a boundary takes the bulk path, compiled without neighbour flags
    // or boundary branches: the general path is several times larger, and warps that mix the two
    // (the row ends of every box) would otherwise keep it in the instruction cache for all
    if (__all_sync(__activemask(), !(fl & HS_LBM_NEAR))) {
        if (fluid) update_at<Q, S, ODD, I32>(L, i, j, k, e, fe, 0, f);
        return;
    }
    if (fluid) update_at<Q, S, ODD, I32>(L, i, j, k, e, fe, fl & HS_LBM_NEAR, f);
}

// fp16 storage: two neighbouring cells per thread, every population moved as one 4-byte word.
// With two-byte populations a warp's access of 32 cells is one L2 request for 64 bytes, as many
// requests per cell as fp32 for half the bytes, and ncu showed the L2, not the DRAM, saturated
// (83-91% of L2 throughput at 46-52% of DRAM bandwidth).  Here a warp covers 64 cells and each
// access is one request for 128 bytes.  Lane t holds cells x and x + 1 (x even in element index) as
// (low, high) halves of one word per population.  The streaming step's directions with an x
// component read and write words one cell off the pair: each lane loads or stores the aligned word
// and takes the missing half from its neighbour lane (a warp shuffle); the half beyond the warp's
// ends is a two-byte access by the end lane.  Cells are updated one after the other with cell_at's
// arithmetic (same rounding).  A warp takes this path when all 32 lanes hold two bulk fluid cells
// of the box; otherwise each cell goes its own way as in step_kernel.  D2Q9 only: H200 2026-12-03,
// D2Q9 8192^2 fp16 71,025 -> 81,241 MLUP/s, but D3Q19 512^3 fp16 31,240 -> 21,459 (38 populations
// a thread need 80 registers: 6 blocks per SM, 29-32% occupancy, and the L2 was no longer the limit).
constexpr unsigned kFull = 0xffffffffu;

__device__ __forceinline__ uint32_t ld_word(const void *base, int32_t e) { return ((const uint32_t *)base)[e >> 1]; }
__device__ __forceinline__ uint32_t ld_half(const void *base, int32_t e) { return ((const uint16_t *)base)[e]; }
__device__ __forceinline__ void st_word(void *base, int32_t e, uint32_t w) { ((uint32_t *)base)[e >> 1] = w; }
__device__ __forceinline__ void st_half(void *base, int32_t e, uint32_t h) { ((uint16_t *)base)[e] = (uint16_t)h; }
// (high half of a, low half of b)
__device__ __forceinline__ uint32_t straddle(uint32_t a, uint32_t b) { return __byte_perm(a, b, 0x5432); }

// The words of the pair at element e (even) that the step of parity ODD streams in: P[q] = (f_q of
// cell e, f_q of cell e + 1), raw halves.  Issued before the flags are known: every element read
// is one cell e or e + 1 reads in step_kernel, or one of those two cells themselves.
template <int Q, int ODD>
__device__ __forceinline__ void pair_load(const hs_lbm_launch &L, int32_t e, bool both, unsigned act, int lane, uint32_t *P)
{
#pragma unroll
    for (int q = 0; q < Q; q++) {
        const int cx = hs_lbm_c(Q, 0, q);
        const void *F = L.f[ODD ? hs_lbm_opp(q) : q];
        const int32_t p = ODD && q ? e - (int32_t)L.off[q] : e; // cell e's element; cell e + 1's is p + 1
        uint32_t w = 0, edge = 0;
        if (!ODD || cx == 0) {
            if (both) w = ld_word(F, p);
            P[q] = w;
        } else if (cx > 0) { // p odd: (p, p + 1) = (high of the word below, low of the word at p + 1)
            if (both) w = ld_word(F, p + 1);
            if (both && lane == 0) edge = ld_half(F, p) << 16;
            const uint32_t below = __shfl_up_sync(act, w, 1);
            P[q] = straddle(lane == 0 ? edge : below, w);
        } else {             // p odd: (high of the word at p - 1, low of the word above)
            if (both) w = ld_word(F, p - 1);
            if (both && lane == 31) edge = ld_half(F, p + 1);
            const uint32_t above = __shfl_down_sync(act, w, 1);
            P[q] = straddle(w, lane == 31 ? edge : above);
        }
    }
}

// One cell of the pair: the halves of P at shift in, the updated populations' halves out in their place.
template <int Q>
__device__ __forceinline__ void pair_cell(const hs_lbm_launch &L, uint32_t *P, int shift)
{
    float f[HS_LBM_QMAX], drho, u[3];
#pragma unroll
    for (int q = 0; q < Q; q++) f[q] = HS_LBM_H2F((uint16_t)(P[q] >> shift)) * L.kf.inv_scale;
    hs_lbm_moments_fi(&L, Q, f, 0u, &drho, u);
    hs_lbm_collide_fi(&L, Q, f, drho, u);
    const uint32_t keep = shift ? 0x0000ffffu : 0xffff0000u;
#pragma unroll
    for (int q = 0; q < Q; q++) P[q] = (P[q] & keep) | (uint32_t)HS_LBM_F2H(f[q] * L.kf.scale) << shift;
}

// Writes the pair's post-collision words R[q] = (f_q of e, f_q of e + 1) where the AA pattern puts them.
template <int Q, int ODD>
__device__ __forceinline__ void pair_store(const hs_lbm_launch &L, int32_t e, int lane, const uint32_t *R)
{
#pragma unroll
    for (int q = 0; q < Q; q++) {
        const int cx = hs_lbm_c(Q, 0, q);
        if (!ODD) {
            st_word(L.f[hs_lbm_opp(q)], e, R[q]);
            continue;
        }
        void *F = L.f[q];
        const int32_t p = q ? e + (int32_t)L.off[q] : e;
        if (cx == 0) {
            st_word(F, p, R[q]);
        } else if (cx > 0) { // p odd: the word at p - 1 is (lane below's cell e + 1, this lane's cell e)
            const uint32_t below = __shfl_up_sync(kFull, R[q], 1);
            if (lane == 0) st_half(F, p, R[q]);
            else st_word(F, p - 1, straddle(below, R[q]));
            if (lane == 31) st_half(F, p + 1, R[q] >> 16);
        } else {             // p odd: the word at p + 1 is (this lane's cell e + 1, lane above's cell e)
            const uint32_t above = __shfl_down_sync(kFull, R[q], 1);
            if (lane == 31) st_half(F, p + 1, R[q] >> 16);
            else st_word(F, p + 1, straddle(R[q], above));
            if (lane == 0) st_half(F, p, R[q]);
        }
    }
}

// Thread t of block b takes cells x0 + 2 (BX b + t) and the next, x0 = lo or lo - 1, whichever
// puts the first cell of a pair on an even element.
template <int Q, int ODD>
__global__ void __launch_bounds__(BX, 6) half_pair_kernel(const hs_lbm_launch L, int32_t x0)
{
    const int32_t i = x0 + ((int32_t)blockIdx.x * BX + (int32_t)threadIdx.x) * 2;
    const int32_t lo = (int32_t)L.lo[0], hi = (int32_t)L.hi[0];
    if (i >= hi) return;
    const unsigned act = __activemask();
    const int lane = (int)(threadIdx.x & 31);
    const int32_t j = (int32_t)L.lo[1] + (int32_t)blockIdx.y, k = (int32_t)L.lo[2] + (int32_t)blockIdx.z;
    const int32_t fe = (int32_t)L.forigin + i + j * (int32_t)L.fsy + k * (int32_t)L.fsz;
    const int32_t e = (int32_t)L.origin + i + j * (int32_t)L.sy + k * (int32_t)L.sz;
    const bool in0 = i >= lo, in1 = i + 1 < hi, both = in0 && in1;
    const int fl = in0 ? L.flag[fe] : HS_LBM_WALL, fl2 = in1 ? L.flag[fe + 1] : HS_LBM_WALL;
    uint32_t P[HS_LBM_QMAX];
    pair_load<Q, ODD>(L, e, both, act, lane, P);
    const bool fluid = (fl & HS_LBM_KIND) == HS_LBM_FLUID, fluid2 = (fl2 & HS_LBM_KIND) == HS_LBM_FLUID;
    const bool bulk = !((fl | fl2) & HS_LBM_NEAR);
    if (act == kFull && __all_sync(kFull, both && fluid && fluid2 && bulk)) {
        pair_cell<Q>(L, P, 0);
        pair_cell<Q>(L, P, 16);
        pair_store<Q, ODD>(L, e, lane, P);
        return;
    }
    float f[HS_LBM_QMAX];
    if (fluid) {
        load_at<Q, HS_LBM_F16, ODD, true>(L, e, f);
        update_at<Q, HS_LBM_F16, ODD, true>(L, i, j, k, e, fe, fl & HS_LBM_NEAR, f);
    }
    if (fluid2) {
        load_at<Q, HS_LBM_F16, ODD, true>(L, e + 1, f);
        update_at<Q, HS_LBM_F16, ODD, true>(L, i + 1, j, k, e + 1, fe + 1, fl2 & HS_LBM_NEAR, f);
    }
}

// The pair kernel's layout needs: 4-byte aligned arrays and even row and plane strides (then a
// pair's first element is even in every row when it is in one).
bool pairs_fit(const hs_lbm_launch *L)
{
    for (int q = 0; q < L->q; q++)
        if ((uintptr_t)L->f[q] & 3u) return false;
    return L->store == HS_LBM_F16 && L->sy % 2 == 0 && L->sz % 2 == 0;
}

// fp16 storage through shared memory: a block's 128 cells of a row move every population as 4-byte
// words, a warp's access one request for 128 bytes, without the pair kernel's registers (two cells a
// thread: D3Q19 needed 80 and ran at 6 blocks an SM).  The block loads, for each population, the
// words that hold its cells' incoming halves (64 words, or 65 where the odd step's shift by c_x puts
// the cells' elements one half off the words), two populations a round (threads 0-63 and 64-127),
// into sw; each thread then takes its cell's halves from there as step_kernel would have loaded them.
// A bulk fluid cell's updated halves go back through sw and out as words, halves only where a word's
// other cell is not one of the block's bulk cells; a cell next to a boundary is updated and stored as
// in step_kernel.  The AA pattern writes exactly the elements its cells read, and a boundary cell's
// bounce-back writes go to elements no bulk cell writes (the bulk cell that would stream there is the
// boundary), so the words a block stores hold only its own bulk cells' elements; a load's other half
// may be a neighbour block's, read and not used.
// Opt-in only (HS_LBM_F16_KERNEL=staged): on an H100 (2026-12-05) it ran D3Q19 512^3 fp16 at 17,172
// MLUP/s against the one-cell kernel's 28,140, and D2Q9 8192^2 at 45,515 against the pair kernel's
// 70,268; not yet profiled.
// Thread t of block b takes cell x0 + BX b + t, x0 = lo or lo - 1, whichever puts the block's first
// cell on an even element (pairs_fit: even strides, 4-byte aligned arrays, whole planes allocated,
// so a word that holds an element of the box lies in its array).
template <int Q, int ODD>
__device__ __forceinline__ bool staged_shift(int q)
{
    return ODD && hs_lbm_c(Q, 0, q) != 0;
}

template <int Q, int ODD>
__global__ void __launch_bounds__(BX, ODD ? 8 : 6) half_staged_kernel(const hs_lbm_launch L, int32_t x0)
{
    constexpr int W = BX / 2; // words a population's BX cells fill, one more where shifted
    __shared__ uint32_t sw[Q][W + 2];
    const int t = (int)threadIdx.x, grp = t / W, w = t % W;
    const int32_t xb = x0 + (int32_t)blockIdx.x * BX, i = xb + t;
    const int32_t lo = (int32_t)L.lo[0], hi = (int32_t)L.hi[0];
    const int32_t j = (int32_t)L.lo[1] + (int32_t)blockIdx.y, k = (int32_t)L.lo[2] + (int32_t)blockIdx.z;
    const int32_t eb = (int32_t)L.origin + xb + j * (int32_t)L.sy + k * (int32_t)L.sz; // even
    const int32_t fe = (int32_t)L.forigin + i + j * (int32_t)L.fsy + k * (int32_t)L.fsz;
    const bool active = i >= lo && i < hi;
    const int fl = active ? L.flag[fe] : HS_LBM_WALL;
    // cell c of the block (0 <= c < BX) is in the box
    auto in_box = [&](int c) { return c >= 0 && c < BX && xb + c >= lo && xb + c < hi; };
    // load: population q's incoming elements start at est (ODD: F_opp(q) at eb - off[q]; even: F_q at
    // eb).  All words go to registers before any goes to sw: a load and its shared store a round,
    // under the round's condition, made each round wait for the one before (ten memory latencies in a
    // row, 15,400 MLUP/s at D3Q19 512^3 on the H200).
    constexpr int R = (Q + 1) / 2;
    uint32_t v[R];
#pragma unroll
    for (int r = 0; r < R; r++) {
        const int qa = 2 * r, qb = 2 * r + 1 < Q ? 2 * r + 1 : 2 * r;
        const bool second = grp == 1;
        const int q_src_a = ODD ? hs_lbm_opp(qa) : qa, q_src_b = ODD ? hs_lbm_opp(qb) : qb;
        const int s = second ? staged_shift<Q, ODD>(qb) : staged_shift<Q, ODD>(qa);
        const uint32_t *F = (const uint32_t *)(second ? L.f[q_src_b] : L.f[q_src_a]);
        const int32_t est = ODD ? eb - (int32_t)(second ? L.off[qb] : L.off[qa]) : eb;
        const int c0 = 2 * w - s;
        v[r] = !(second && qb == qa) && (in_box(c0) || in_box(c0 + 1)) ? F[((est - s) >> 1) + w] : 0u;
    }
    // the 65th word of each shifted population (its low half is cell BX - 1's), one thread each
    uint32_t xv = 0;
    int xq = -1;
    if (ODD) {
        int n = 0;
#pragma unroll
        for (int q = 1; q < Q; q++) {
            if (!staged_shift<Q, ODD>(q)) continue;
            if (t == 32 * (n & 3) + (n >> 2) && in_box(BX - 1)) {
                xv = ((const uint32_t *)L.f[hs_lbm_opp(q)])[((eb - (int32_t)L.off[q] - 1) >> 1) + W];
                xq = q;
            }
            n++;
        }
    }
#pragma unroll
    for (int r = 0; r < R; r++) {
        const int qa = 2 * r, qb = 2 * r + 1 < Q ? 2 * r + 1 : 2 * r;
        if (!(grp == 1 && qb == qa)) sw[grp == 1 ? qb : qa][w] = v[r];
    }
    if (xq >= 0) sw[xq][W] = xv;
    const bool fluid = (fl & HS_LBM_KIND) == HS_LBM_FLUID, staged = active && fluid && !(fl & HS_LBM_NEAR);
    __shared__ bool s_staged[BX];
    s_staged[t] = staged;
    __syncthreads();
    float f[HS_LBM_QMAX];
#pragma unroll
    for (int q = 0; q < Q; q++) {
        const int sh = staged_shift<Q, ODD>(q);
        f[q] = HS_LBM_H2F(((const uint16_t *)sw[q])[t + sh]) * L.kf.inv_scale;
    }
    if (staged) {
        float drho, u[3];
        hs_lbm_moments_fi(&L, Q, f, 0u, &drho, u);
        hs_lbm_collide_fi(&L, Q, f, drho, u);
#pragma unroll
        for (int q = 0; q < Q; q++) {
            const int sh = staged_shift<Q, ODD>(q);
            ((uint16_t *)sw[q])[t + sh] = HS_LBM_F2H(f[q] * L.kf.scale);
        }
    } else if (active && fluid) {
        update_at<Q, HS_LBM_F16, ODD, true>(L, i, j, k, eb + t, fe, fl & HS_LBM_NEAR, f);
    }
    __syncthreads();
    auto out = [&](int c) { return c >= 0 && c < BX && s_staged[c]; };
    // store: f_q goes to F_opp(q) at eb (even) or to F_q at eb + off[q] (odd)
#pragma unroll
    for (int r = 0; r < R; r++) {
        const int qa = 2 * r, qb = 2 * r + 1 < Q ? 2 * r + 1 : 2 * r;
        v[r] = sw[grp == 1 ? qb : qa][w];
    }
#pragma unroll
    for (int r = 0; r < R; r++) {
        const int qa = 2 * r, qb = 2 * r + 1 < Q ? 2 * r + 1 : 2 * r;
        const bool second = grp == 1;
        if (second && qb == qa) continue;
        const int q_dst_a = ODD ? qa : hs_lbm_opp(qa), q_dst_b = ODD ? qb : hs_lbm_opp(qb);
        const int s = second ? staged_shift<Q, ODD>(qb) : staged_shift<Q, ODD>(qa);
        uint32_t *F = (uint32_t *)(second ? L.f[q_dst_b] : L.f[q_dst_a]);
        const int32_t est = ODD ? eb + (int32_t)(second ? L.off[qb] : L.off[qa]) : eb;
        const int32_t e0 = est - s + 2 * w; // the word's first element
        const int c0 = 2 * w - s;
        const bool a0 = out(c0), a1 = out(c0 + 1);
        if (a0 && a1) st_word(F, e0, v[r]);
        else if (a0) st_half(F, e0, v[r] & 0xffffu);
        else if (a1) st_half(F, e0 + 1, v[r] >> 16);
    }
    if (ODD) {
        int n = 0;
#pragma unroll
        for (int q = 1; q < Q; q++) {
            if (!staged_shift<Q, ODD>(q)) continue;
            if (t == 32 * (n & 3) + (n >> 2) && out(BX - 1))
                st_half(L.f[q], eb + (int32_t)L.off[q] - 1 + 2 * W, sw[q][W] & 0xffffu);
            n++;
        }
    }
}

template <int Q, int S>
__global__ void __launch_bounds__(BX) moments_kernel(const hs_lbm_launch L)
{
    const int64_t i = L.lo[0] + (int64_t)blockIdx.x * BX + threadIdx.x;
    if (i >= L.hi[0]) return;
    const int64_t j = L.lo[1] + blockIdx.y, k = L.lo[2] + blockIdx.z;
    if (S == HS_LBM_F64) hs_lbm_moments_cell_d(&L, i, j, k, Q, S);
    else hs_lbm_moments_cell_f(&L, i, j, k, Q, S);
}

template <int Q, int S>
__global__ void __launch_bounds__(256) links_kernel(const hs_lbm_launch L)
{
    const int64_t l = (int64_t)blockIdx.x * 256 + threadIdx.x;
    if (l >= L.nlinks) return;
    if (S == HS_LBM_F64) hs_lbm_link_d(&L, l, Q, S);
    else hs_lbm_link_f(&L, l, Q, S);
}

// Every population and flag element a step of box L can touch (its cells and their neighbours, the
// ghost ring included) has an index below 2^31.
bool fits_int32(const hs_lbm_launch *L)
{
    const int64_t lim = INT32_MAX;
    int64_t maxoff = 0, maxfoff = 0;
    for (int q = 0; q < L->q; q++) {
        maxoff = L->off[q] > maxoff ? L->off[q] : -L->off[q] > maxoff ? -L->off[q] : maxoff;
        maxfoff = L->foff[q] > maxfoff ? L->foff[q] : -L->foff[q] > maxfoff ? -L->foff[q] : maxfoff;
    }
    // an even step reads and writes every population at its own cell only: the box of a periodic or
    // split axis reaches two rings into the halo of two, and counting the streaming offsets there
    // had put every even step of such a run on the 64-bit kernels
    const int64_t reach = L->op == HS_LBM_STEP && !L->odd ? 0 : maxoff;
    const int64_t e_hi = L->origin + L->hi[0] + L->hi[1] * L->sy + L->hi[2] * L->sz + reach;
    const int64_t e_lo = L->origin + L->lo[0] + L->lo[1] * L->sy + L->lo[2] * L->sz - reach;
    const int64_t f_hi = L->forigin + L->hi[0] + L->hi[1] * L->fsy + L->hi[2] * L->fsz + maxfoff;
    const int64_t f_lo = L->forigin + L->lo[0] + L->lo[1] * L->fsy + L->lo[2] * L->fsz - maxfoff;
    return e_hi < lim && f_hi < lim && e_lo >= 0 && f_lo >= 0 && L->sy < lim && L->sz < lim && L->fsy < lim && L->fsz < lim;
}

// The fp16 D2Q9 step through half_pair_kernel where the layout allows; false: not launched.
// Which fp16 step kernel a lattice takes: staged (shared memory), pairs (two cells a thread) or cell
// (step_kernel); HS_LBM_F16_KERNEL=staged|pairs|cell overrides for benchmarks.
int f16_kernel_of(int q)
{
    static const int forced = [] {
        const char *v = getenv("HS_LBM_F16_KERNEL");
        return !v ? -1 : !strcmp(v, "staged") ? 0 : !strcmp(v, "pairs") ? 1 : !strcmp(v, "cell") ? 2 : -1;
    }();
    return forced >= 0 ? forced : q == 9 ? 1 : 2;
}

template <int Q, int S>
bool launch_pairs(struct hs_cuda_ctx *cu, const hs_lbm_launch *L, int64_t ny, int64_t nz)
{
    if constexpr (S == HS_LBM_F16) {
        const int kind = f16_kernel_of(Q);
        if (kind == 2 || !fits_int32(L) || !pairs_fit(L)) return false;
        const int64_t x0 = L->lo[0] - ((L->origin + L->lo[0]) & 1);
        if (kind == 0) {
            dim3 grid((unsigned)((L->hi[0] - x0 + BX - 1) / BX), (unsigned)ny, (unsigned)nz);
            if (L->odd) half_staged_kernel<Q, 1><<<grid, BX, 0, cu->stream>>>(*L, (int32_t)x0);
            else half_staged_kernel<Q, 0><<<grid, BX, 0, cu->stream>>>(*L, (int32_t)x0);
            return true;
        }
        dim3 grid((unsigned)((L->hi[0] - x0 + 2 * BX - 1) / (2 * BX)), (unsigned)ny, (unsigned)nz);
        if (L->odd) half_pair_kernel<Q, 1><<<grid, BX, 0, cu->stream>>>(*L, (int32_t)x0);
        else half_pair_kernel<Q, 0><<<grid, BX, 0, cu->stream>>>(*L, (int32_t)x0);
        return true;
    } else {
        (void)cu, (void)L, (void)ny, (void)nz;
        return false;
    }
}

template <int Q, int S>
int launch_qs(struct hs_cuda_ctx *cu, const hs_lbm_launch *L)
{
    if (L->op == HS_LBM_LINKS) {
        if (L->nlinks <= 0) return HS_OK;
        links_kernel<Q, S><<<(unsigned)((L->nlinks + 255) / 256), 256, 0, cu->stream>>>(*L);
        HS_CUDA_CHECK(cudaGetLastError());
        return HS_OK;
    }
    const int64_t nx = L->hi[0] - L->lo[0], ny = L->hi[1] - L->lo[1], nz = L->hi[2] - L->lo[2];
    if (nx <= 0 || ny <= 0 || nz <= 0) return HS_OK;
    if (ny > 65535 || nz > 65535) return HS_FAIL(HS_ERR_RUNTIME, "lbm: a box of %lld x %lld rows exceeds one launch", (long long)ny, (long long)nz);
    dim3 grid((unsigned)((nx + BX - 1) / BX), (unsigned)ny, (unsigned)nz);
    if (L->op == HS_LBM_MOMENTS) moments_kernel<Q, S><<<grid, BX, 0, cu->stream>>>(*L);
    else if (!launch_pairs<Q, S>(cu, L, ny, nz)) {
        const bool i32 = fits_int32(L);
        // row order only where a block a row would leave more than a tenth of the threads idle: the
        // flat index costs a division a cell, and on the H200 the periodic D2Q9 8192^2 steps (rows of
        // 8196, 1.5% idle) measured 41,225 MLUP/s with row order (and two other changes of that day)
        // against 44,247 before; the three were not measured apart
        const bool flat = nx % BX != 0 && 10 * (((nx + BX - 1) / BX) * BX - nx) > nx;
        if (i32 && flat && nx * ny < INT32_MAX - BX) {
            const dim3 flat((unsigned)((nx * ny + BX - 1) / BX), (unsigned)nz, 1);
            if (L->odd) step_kernel<Q, S, 1, true, true><<<flat, BX, 0, cu->stream>>>(*L);
            else step_kernel<Q, S, 0, true, true><<<flat, BX, 0, cu->stream>>>(*L);
        } else if (i32) {
            if (L->odd) step_kernel<Q, S, 1, true, false><<<grid, BX, 0, cu->stream>>>(*L);
            else step_kernel<Q, S, 0, true, false><<<grid, BX, 0, cu->stream>>>(*L);
        } else if (L->odd) step_kernel<Q, S, 1, false, false><<<grid, BX, 0, cu->stream>>>(*L);
        else step_kernel<Q, S, 0, false, false><<<grid, BX, 0, cu->stream>>>(*L);
    }
    HS_CUDA_CHECK(cudaGetLastError());
    return HS_OK;
}

template <int Q>
int launch_q(struct hs_cuda_ctx *cu, const hs_lbm_launch *L)
{
    if (L->store == HS_LBM_F64) return launch_qs<Q, HS_LBM_F64>(cu, L);
    if (L->store == HS_LBM_F32) return launch_qs<Q, HS_LBM_F32>(cu, L);
    return launch_qs<Q, HS_LBM_F16>(cu, L);
}

} // namespace

extern "C" int hs_lbm_launch_cuda(struct hs_cuda_ctx *cu, const hs_lbm_launch *L)
{
    return L->q == 19 ? launch_q<19>(cu, L) : launch_q<9>(cu, L);
}
