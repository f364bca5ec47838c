// CUDA state-vector kernels (complex128 and complex64): dense, diagonal and permutation gates,
// deterministic reductions (per-block partials summed on the host in a fixed order), packing.
#include <cstdlib>
#include <cstring>

#include "kernels/config.h"
#include "kernels/cuda_block_reduce.cuh"
#include "kernels/cuda_bulk.cuh"
#include "kernels/cuda_util.h"
#include "solvers/quantum/circuit.h"
#include "solvers/quantum/sv_impl.h"

namespace {

const int THREADS = 256;

template <typename T> struct cx;
template <> struct cx<double> { typedef double2 t; };
template <> struct cx<float> { typedef float2 t; };

template <typename C> __device__ __forceinline__ C cmul_acc(C acc, double2 m, C v)
{
    typedef decltype(acc.x) R;
    R mr = (R)m.x, mi = (R)m.y;
    acc.x += mr * v.x - mi * v.y;
    acc.y += mr * v.y + mi * v.x;
    return acc;
}

template <typename C> __device__ __forceinline__ C cmul(C m, C v)
{
    C r;
    r.x = m.x * v.x - m.y * v.y;
    r.y = m.x * v.y + m.y * v.x;
    return r;
}

template <typename C> __device__ __forceinline__ C to_c(double2 v)
{
    C r;
    r.x = (decltype(r.x))v.x;
    r.y = (decltype(r.y))v.y;
    return r;
}

__device__ __forceinline__ uint64_t stride0() { return (uint64_t)gridDim.x * blockDim.x; }
__device__ __forceinline__ uint64_t tid0() { return (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; }

// ---------------------------------------------------------------- gates
// A dense block's matrix (up to 64 x 64, complex128) goes to this device buffer with a
// stream-ordered copy; every block of the kernel then loads it into shared memory in the
// amplitude precision, and every warp reads each entry as a broadcast.
__device__ double2 g_mat[1 << (2 * HS_Q_MAX_TARGETS)];

const int FW = 4;            // warps per block of the gate kernels (one tile per warp)
const int FTHREADS = FW * 32;
const int LOWB = 5;          // a warp covers 2^5 = 32 consecutive amplitudes
const int GK_DENSE = 0, GK_PERM = 2;

// Index layout of a dense or permutation gate on 1..6 targets (with any controls), host-built.
struct fgate {
    int nt, npos;
    int pos[64];                      // sorted targets and controls (zeros inserted there)
    uint64_t cmask, cval;
    uint64_t offs[1 << HS_Q_MAX_TARGETS];  // amplitude offset of matrix index k
    uint64_t doffs[1 << HS_Q_MAX_TARGETS]; // permutation: offset where input k goes
    int dst[1 << HS_Q_MAX_TARGETS];        // permutation: row that input k becomes
    double2 ph[1 << HS_Q_MAX_TARGETS];     // permutation: phase applied to input k
    // shared-memory tile of the low path: the targets plus the five lowest other qubits
    int ntb;                          // tile bits, nt + 5
    int tb[HS_Q_MAX_TARGETS + LOWB];  // amplitude bit of tile bit b (ascending; 0..4 always in)
    int w[HS_Q_MAX_TARGETS + LOWB];   // weight of tile bit b in the shared index g (D + 1) + k
    int gbit[LOWB];                   // amplitude bit of group bit r (the non-target tile bits)
};

__device__ __forceinline__ uint64_t insert_zeros(uint64_t g, const int *pos, int npos)
{
    for (int j = 0; j < npos; j++) {
        int p = pos[j];
        g = ((g >> p) << (p + 1)) | (g & ((1ull << p) - 1));
    }
    return g;
}

// Row of the matrix (shared, broadcast to the warp) times the group's amplitudes (registers);
// complex64 reads two entries per 16-byte load.
template <typename C, int D> __device__ __forceinline__ C row_dot(const C *mrow, const C (&x)[D])
{
    C acc;
    acc.x = 0;
    acc.y = 0;
    if constexpr (sizeof(C) == 8 && D >= 2) {
        const float4 *m4 = (const float4 *)mrow;
#pragma unroll
        for (int k = 0; k < D; k += 2) {
            float4 m = m4[k / 2];
            acc.x += m.x * x[k].x - m.y * x[k].y;
            acc.y += m.x * x[k].y + m.y * x[k].x;
            acc.x += m.z * x[k + 1].x - m.w * x[k + 1].y;
            acc.y += m.z * x[k + 1].y + m.w * x[k + 1].x;
        }
    } else {
#pragma unroll
        for (int k = 0; k < D; k++) {
            C m = mrow[k];
            acc.x += m.x * x[k].x - m.y * x[k].y;
            acc.y += m.x * x[k].y + m.y * x[k].x;
        }
    }
    return acc;
}

template <typename C, int D, int KIND> __device__ __forceinline__ void load_matrix(C *mat, const fgate &g)
{
    if (KIND == GK_DENSE)
        for (int i = threadIdx.x; i < D * D; i += blockDim.x) mat[i] = to_c<C>(g_mat[i]);
    else
        for (int i = threadIdx.x; i < D; i += blockDim.x) mat[i] = to_c<C>(g.ph[i]);
}

// All targets at qubit 5 or above: one thread per group of 2^NT amplitudes, straight from global
// memory; the 32 lanes of a warp take 32 consecutive groups, so every load and store of a warp
// covers 32 consecutive amplitudes.  The inputs stay in registers while the rows are computed.
template <typename T, int NT, int KIND>
__global__ void __launch_bounds__(FTHREADS) k_gate_high(typename cx<T>::t *a, const fgate g, uint64_t ng)
{
    typedef typename cx<T>::t C;
    const int D = 1 << NT;
    extern __shared__ __align__(16) unsigned char smem[];
    C *mat = (C *)smem;
    load_matrix<C, D, KIND>(mat, g);
    __syncthreads();
    for (uint64_t gi = tid0(); gi < ng; gi += stride0()) {
        uint64_t base = insert_zeros(gi, g.pos, g.npos) | g.cval;
        C x[D];
#pragma unroll
        for (int k = 0; k < D; k++) x[k] = a[base + g.offs[k]];
        if (KIND == GK_DENSE) {
#pragma unroll(NT >= 3 ? 1 : D)
            for (int r = 0; r < D; r++) a[base + g.offs[r]] = row_dot<C, D>(mat + r * D, x);
        } else {
#pragma unroll
            for (int k = 0; k < D; k++) a[base + g.doffs[k]] = cmul(mat[k], x[k]);
        }
    }
}

// A target below qubit 5: each warp stages a tile of 32 groups x 2^NT amplitudes (the targets
// plus the five lowest other qubits, so the tile is made of runs of 32 consecutive amplitudes)
// in shared memory, loading and storing whole runs; inside the tile it is transposed to
// [group][member] with a row stride of 2^NT + 1 (odd: no bank conflicts when lane g reads its
// group), and lane g applies the matrix to group g from registers.
template <typename T, int NT, int KIND>
__global__ void __launch_bounds__(FTHREADS) k_gate_low(typename cx<T>::t *a, const fgate g, uint64_t ntiles)
{
    typedef typename cx<T>::t C;
    const int D = 1 << NT, P = D + 1, NM = KIND == GK_DENSE ? D * D : D;
    extern __shared__ __align__(16) unsigned char smem[];
    C *mat = (C *)smem;
    C *tiles = mat + NM;
    uint64_t *coff = (uint64_t *)(tiles + FW * 32 * P);
    int *cw = (int *)(coff + D);
    load_matrix<C, D, KIND>(mat, g);
    for (int c = threadIdx.x; c < D; c += blockDim.x) { // tile bits 5.. of chunk c: global offset, shared index
        uint64_t o = 0;
        int s = 0;
        for (int b = LOWB; b < g.ntb; b++)
            if ((c >> (b - LOWB)) & 1) o |= 1ull << g.tb[b], s += g.w[b];
        coff[c] = o;
        cw[c] = s;
    }
    __syncthreads();
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    C *sh = tiles + warp * 32 * P;
    int lw = 0;
    uint64_t gq = 0;
    for (int b = 0; b < LOWB; b++)
        if ((lane >> b) & 1) lw += g.w[b], gq |= 1ull << g.gbit[b];
    for (uint64_t t = (uint64_t)blockIdx.x * FW + warp; t < ntiles; t += (uint64_t)gridDim.x * FW) {
        uint64_t base = t;
        for (int b = 0; b < g.ntb; b++) {
            int p = g.tb[b];
            base = ((base >> p) << (p + 1)) | (base & ((1ull << p) - 1));
        }
        const C *src = a + base + lane;
#pragma unroll
        for (int c = 0; c < D; c++) sh[lw + cw[c]] = src[coff[c]];
        __syncwarp();
        if (((base | gq) & g.cmask) == g.cval) {
            C x[D];
#pragma unroll
            for (int k = 0; k < D; k++) x[k] = sh[lane * P + k];
            if (KIND == GK_DENSE) {
#pragma unroll(NT >= 3 ? 1 : D)
                for (int r = 0; r < D; r++) sh[lane * P + r] = row_dot<C, D>(mat + r * D, x);
            } else {
#pragma unroll
                for (int k = 0; k < D; k++) sh[lane * P + g.dst[k]] = cmul(mat[k], x[k]);
            }
        }
        __syncwarp();
        C *dstp = a + base + lane;
#pragma unroll
        for (int c = 0; c < D; c++) dstp[coff[c]] = sh[lw + cw[c]];
        __syncwarp();
    }
}

// Diagonal gates touch every amplitude once, in order: coalesced for any targets.  The 2^nt
// entries sit in shared memory (lanes index them by their own target bits).
struct dgate {
    int nt;
    int tbit[HS_Q_MAX_TARGETS];
    uint64_t cmask, cval;
    double2 ph[1 << HS_Q_MAX_TARGETS];
};

template <typename T>
__global__ void k_diag(typename cx<T>::t *a, const dgate g, uint64_t n)
{
    typedef typename cx<T>::t C;
    __shared__ C ph[1 << HS_Q_MAX_TARGETS];
    for (int i = threadIdx.x; i < (1 << g.nt); i += blockDim.x) ph[i] = to_c<C>(g.ph[i]);
    __syncthreads();
    for (uint64_t i = tid0(); i < n; i += stride0()) {
        if ((i & g.cmask) != g.cval) continue;
        int k = 0;
        for (int j = 0; j < g.nt; j++) k |= (int)((i >> g.tbit[j]) & 1) << j;
        a[i] = cmul(ph[k], a[i]);
    }
}

struct mat2 {
    double2 m[4];
};

// One-qubit gates on a low target (t < 5): every lane loads its own amplitude (a warp reads 32
// consecutive ones) and takes its partner, 2^t lanes away, from a shuffle.  n is a multiple of 32
// and so is the stride, so whole warps enter and leave the loop together.
template <typename T>
__global__ void k_dense1_low(typename cx<T>::t *a, const mat2 m, int t, uint64_t cmask, uint64_t cval, uint64_t n)
{
    typedef typename cx<T>::t C;
    for (uint64_t i = tid0(); i < n; i += stride0()) {
        C x = a[i], p;
        p.x = __shfl_xor_sync(0xffffffffu, x.x, 1 << t);
        p.y = __shfl_xor_sync(0xffffffffu, x.y, 1 << t);
        if ((i & cmask) != cval) continue;
        int b = (int)((i >> t) & 1);
        C z;
        z.x = 0;
        z.y = 0;
        // row b of the matrix: own amplitude on the diagonal, partner off it
        C out = cmul_acc(cmul_acc(z, b ? m.m[3] : m.m[0], x), b ? m.m[2] : m.m[1], p);
        a[i] = out;
    }
}

// Dense 4-6 qubit blocks in complex64 on the tensor cores.  The CUDA-core kernels above need 2^k
// complex multiply-adds per amplitude, so 5- and 6-qubit blocks are bound by the FP32 units (2.1 and
// 4.1 copy passes on high targets, 3.2 and 7.5 on low ones, measured on the H200).  Here the
// amplitudes of a tile (the targets plus the five lowest other qubits) are a real matrix
// X[member][group] (2^k members, 32 groups), and Y = M X is computed with mma.m16n8k8 TF32
// products as [Yr; Yi] = [Mr -Mi; Mi Mr] [Xr; Xi] (-Mi by flipping the sign bits of Mi's split,
// which is exact).  Each product is split in three TF32 products (a_hi b_hi + a_hi b_lo + a_lo b_hi,
// the "3xTF32" of CUTLASS): the result keeps float's accuracy (a plain TF32 product keeps 11 bits).
//
// Each warp works alone on units of 16 groups x 2^k members of a tile: it loads the B fragments
// (X[member][group], re and im from one 8-byte load) straight from global memory and stores the
// accumulator fragments straight back.  A warp's load covers 4 members x 8 groups and its store 8
// members x 4 groups (pairs of adjacent groups as one 16-byte store when group bit 0 is amplitude
// bit 0): whole 32-byte sectors on any placement of the targets.  Each matrix fragment read from
// shared memory serves two column tiles of 8 groups.  H200, 30 qubits, 2026-12-04 (bench_quantum,
// copy passes, against the kernel before, which staged 32-group tiles through shared memory with
// four warps and block barriers): 4 qubits low 1.18 (1.64), 5 qubits 1.49-1.78 (1.82-1.98), 6
// qubits 2.69-2.73 (3.07-3.23).  Tried and measured no better there: units of 8 groups (5 qubits
// 1.85-2.40 passes), of 32 (the same at 4 qubits; spills at 5 and 6), the three-product complex
// multiply (Gauss: the same at 4 and 5 qubits, 6 qubits 4.2 passes in the units its registers
// allow), and each warp's next unit copied to shared memory with cp.async while the current one
// is multiplied (5 qubits 1.56-2.22).
// What limits it (Nsight Compute, 5 qubits): 25% occupancy (120 registers), the warps waiting on
// their global loads 45% of the time, the tensor pipe 38% busy, DRAM at 49-53% of peak; so
// 5-qubit blocks now go to k_gate_tma below, where the copy engine keeps the loads in flight.
__device__ __forceinline__ uint32_t to_tf32(float x)
{
    uint32_t r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
    return r & 0xffffe000u; // the tf32 value as a float bit pattern (its low mantissa bits zero)
}

__device__ __forceinline__ void split_tf32(float x, uint32_t &hi, uint32_t &lo)
{
    hi = to_tf32(x);
    lo = to_tf32(x - __uint_as_float(hi)); // exact in float: the rounding error of hi
}

__device__ __forceinline__ void mma_tf32(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1)
{
    asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// a += hi(A) hi(B) + hi(A) lo(B) + lo(A) hi(B), the small terms first
__device__ __forceinline__ void mma_3xtf32(float (&d)[4], const uint32_t (&ah)[4], const uint32_t (&al)[4],
                                           uint32_t bh0, uint32_t bh1, uint32_t bl0, uint32_t bl1)
{
    mma_tf32(d, al, bh0, bh1);
    mma_tf32(d, ah, bl0, bl1);
    mma_tf32(d, ah, bh0, bh1);
}

// The matrix is split into TF32 (hi, lo) pairs once per block for 4- and 5-qubit blocks (a
// fragment element is then one 8-byte load, no conversion); 6-qubit blocks split each fragment as
// they load it: their pairs would take 68 KiB of shared memory a block (with the tile-staging
// kernel before, that left two blocks an SM and measured slower; not tried with this one).
template <int NT> __host__ __device__ constexpr bool mma_presplit() { return NT < 6; }

const int MMA_NG = 2; // column tiles of 8 groups per unit of a warp

struct mgate {
    int ntb;
    int tb[HS_Q_MAX_TARGETS + LOWB];      // tile bits, ascending
    int pair;                             // group bit 0 is amplitude bit 0 (goff[1] == 1, but read from
                                          // shared memory in the kernel it cost 8 registers and spills)
    uint64_t moff[1 << HS_Q_MAX_TARGETS]; // offset of member (matrix index) c in the tile
    uint64_t goff[1 << LOWB];             // offset of group r in the tile
};

template <int NT> constexpr size_t mma_matrix_bytes()
{
    const size_t D = (size_t)1 << NT, mat = mma_presplit<NT>() ? sizeof(uint2) : sizeof(float);
    return 2 * D * (D + 4) * mat;
}

template <int NT> constexpr size_t mma_smem()
{
    return mma_matrix_bytes<NT>() + (((size_t)1 << NT) + (1 << LOWB)) * sizeof(uint64_t);
}

// The block's copy of the matrix in shared memory: rows of D + 4 entries (the fragment loads of a
// warp (4-byte) or half-warp (8-byte) then hit 32 banks), real and imaginary parts apart.
template <int NT> __device__ __forceinline__ void mma_load_matrix(unsigned char *mat)
{
    constexpr int D = 1 << NT, PM = D + 4;
    for (int i = threadIdx.x; i < D * D; i += blockDim.x) {
        double2 v = g_mat[i];
        const int at = (i / D) * PM + i % D;
        if constexpr (mma_presplit<NT>()) {
            uint2 r, m;
            split_tf32((float)v.x, r.x, r.y);
            split_tf32((float)v.y, m.x, m.y);
            ((uint2 *)mat)[at] = r;
            ((uint2 *)mat)[D * PM + at] = m;
        } else {
            ((float *)mat)[at] = (float)v.x;
            ((float *)mat)[D * PM + at] = (float)v.y;
        }
    }
}

// One k-step of a warp's unit: the matrix's columns ks 8 .. ks 8 + 7 times the B fragments
// v[n][h] (member ks 8 + tig + 4 h, group gid of column tile n), into the accumulators.
template <int NT>
__device__ __forceinline__ void mma_kstep(float (&re)[(1 << NT) / 16][MMA_NG][4], float (&im)[(1 << NT) / 16][MMA_NG][4],
                                          const float2 (&v)[MMA_NG][2], const unsigned char *mat, int ks, int gid, int tig)
{
    constexpr int D = 1 << NT, PM = D + 4, MT = D / 16, NG = MMA_NG;
    const uint2 *mr2 = (const uint2 *)mat, *mi2 = mr2 + D * PM;
    const float *mrf = (const float *)mat, *mif = mrf + D * PM;
    uint32_t xrh[NG][2], xrl[NG][2], xih[NG][2], xil[NG][2];
#pragma unroll
    for (int n = 0; n < NG; n++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            split_tf32(v[n][h].x, xrh[n][h], xrl[n][h]);
            split_tf32(v[n][h].y, xih[n][h], xil[n][h]);
        }
#pragma unroll
    for (int m = 0; m < MT; m++) {
        const int r0 = m * 16 + gid, c0 = ks * 8 + tig;
        const int idx[4] = {r0 * PM + c0, (r0 + 8) * PM + c0, r0 * PM + c0 + 4, (r0 + 8) * PM + c0 + 4};
        uint32_t rh[4], rl[4], ih[4], il[4], nih[4], nil[4];
#pragma unroll
        for (int e = 0; e < 4; e++) {
            if constexpr (mma_presplit<NT>()) {
                const uint2 r = mr2[idx[e]], mi = mi2[idx[e]];
                rh[e] = r.x, rl[e] = r.y, ih[e] = mi.x, il[e] = mi.y;
            } else {
                split_tf32(mrf[idx[e]], rh[e], rl[e]);
                split_tf32(mif[idx[e]], ih[e], il[e]);
            }
            nih[e] = ih[e] ^ 0x80000000u;
            nil[e] = il[e] ^ 0x80000000u;
        }
#pragma unroll
        for (int n = 0; n < NG; n++) {
            mma_3xtf32(re[m][n], rh, rl, xrh[n][0], xrh[n][1], xrl[n][0], xrl[n][1]);
            mma_3xtf32(re[m][n], nih, nil, xih[n][0], xih[n][1], xil[n][0], xil[n][1]);
            mma_3xtf32(im[m][n], ih, il, xrh[n][0], xrh[n][1], xrl[n][0], xrl[n][1]);
            mma_3xtf32(im[m][n], rh, rl, xih[n][0], xih[n][1], xil[n][0], xil[n][1]);
        }
    }
}

// The products of one unit into zeroed accumulators; fetch(ks, v) gives k-step ks's B fragments.
template <int NT, typename Fetch>
__device__ __forceinline__ void mma_unit(float (&re)[(1 << NT) / 16][MMA_NG][4], float (&im)[(1 << NT) / 16][MMA_NG][4],
                                         const unsigned char *mat, int gid, int tig, const Fetch &fetch)
{
    constexpr int MT = (1 << NT) / 16, KS = (1 << NT) / 8, NG = MMA_NG;
#pragma unroll
    for (int m = 0; m < MT; m++)
#pragma unroll
        for (int n = 0; n < NG; n++)
#pragma unroll
            for (int e = 0; e < 4; e++) re[m][n][e] = im[m][n][e] = 0.f;
#pragma unroll
    for (int ks = 0; ks < KS; ks++) {
        float2 v[NG][2];
        fetch(ks, v);
        mma_kstep<NT>(re, im, v, mat, ks, gid, tig);
    }
}

// The accumulators back to the tile at `at` (its groups g0 ..): element e is member m 16 + gid
// (+ 8 for e >= 2), group g0 + 8 n + 2 tig (+ 1 for odd e).
template <int NT>
__device__ __forceinline__ void mma_store(float2 *at, const float (&re)[(1 << NT) / 16][MMA_NG][4],
                                          const float (&im)[(1 << NT) / 16][MMA_NG][4], const uint64_t *moff,
                                          const uint64_t *goff, int g0, int pair, int gid, int tig)
{
    constexpr int MT = (1 << NT) / 16, NG = MMA_NG;
#pragma unroll
    for (int m = 0; m < MT; m++) {
        const uint64_t r0 = moff[m * 16 + gid], r1 = moff[m * 16 + gid + 8];
#pragma unroll
        for (int n = 0; n < NG; n++) {
            const int c = g0 + n * 8 + 2 * tig;
            const uint64_t c0 = goff[c];
            if (pair) {
                *(float4 *)(at + r0 + c0) = make_float4(re[m][n][0], im[m][n][0], re[m][n][1], im[m][n][1]);
                *(float4 *)(at + r1 + c0) = make_float4(re[m][n][2], im[m][n][2], re[m][n][3], im[m][n][3]);
            } else {
                const uint64_t c1 = goff[c + 1];
                at[r0 + c0] = make_float2(re[m][n][0], im[m][n][0]);
                at[r0 + c1] = make_float2(re[m][n][1], im[m][n][1]);
                at[r1 + c0] = make_float2(re[m][n][2], im[m][n][2]);
                at[r1 + c1] = make_float2(re[m][n][3], im[m][n][3]);
            }
        }
    }
}

template <int NT>
__global__ void __launch_bounds__(FTHREADS, 4) k_gate_mma(float2 *a, const mgate g, uint64_t nunits)
{
    constexpr int D = 1 << NT, MT = D / 16, NG = MMA_NG, GS = 4 / NG;
    extern __shared__ __align__(16) unsigned char smem[];
    uint64_t *moff = (uint64_t *)(smem + mma_matrix_bytes<NT>());
    uint64_t *goff = moff + D;
    mma_load_matrix<NT>(smem);
    for (int i = threadIdx.x; i < D; i += blockDim.x) moff[i] = g.moff[i];
    for (int i = threadIdx.x; i < (1 << LOWB); i += blockDim.x) goff[i] = g.goff[i];
    __syncthreads();
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, gid = lane >> 2, tig = lane & 3;
    const uint64_t nwarps = (uint64_t)gridDim.x * FW;
    for (uint64_t u = (uint64_t)blockIdx.x * FW + warp; u < nunits; u += nwarps) {
        const int g0 = (int)(u % GS) * 8 * NG;
        float2 *const at = a + insert_zeros(u / GS, g.tb, g.ntb);
        uint64_t gl[NG];
#pragma unroll
        for (int n = 0; n < NG; n++) gl[n] = goff[g0 + n * 8 + gid];
        float re[MT][NG][4], im[MT][NG][4];
        mma_unit<NT>(re, im, smem, gid, tig, [&](int ks, float2 (&v)[NG][2]) {
            const uint64_t m0 = moff[ks * 8 + tig], m1 = moff[ks * 8 + tig + 4];
#pragma unroll
            for (int n = 0; n < NG; n++) v[n][0] = at[m0 + gl[n]], v[n][1] = at[m1 + gl[n]];
        });
        // Every element of the unit was read above by a lane of this warp, and the products that
        // use them all are done before these stores (mma.sync takes every lane's fragments).
        mma_store<NT>(at, re, im, moff, goff, g0, g.pair, gid, tig);
    }
}

// ---- the same products with the units brought into shared memory by the bulk-copy engine.
// Nsight Compute put k_gate_mma's warps 45% of their time waiting on their own global loads (at
// 25% occupancy, a warp's next unit is not requested before its current one is multiplied).
// Here each warp keeps S units in flight: the copy engine moves a unit (2^k members x 16 groups)
// as runs of R = 16 or 32 consecutive amplitudes (qubits 0..3 are always in a unit: targets or
// its four lowest group bits) into a stage of the warp's ring, counted in bytes on the stage's
// mbarrier; the warp multiplies from shared memory and requests the unit S ahead into the stage
// it has just read.  A stage keeps the unit's amplitudes in amplitude order with PAD elements
// after every run, PAD chosen by the host to spread the fragment loads over the banks.
// H100, 30 qubits, bench_quantum (copy 3.04 TB/s), 5-qubit blocks low / high / spread: 90.6 / 84.3 /
// 89.7% of copy per pass with 8 warps a block and 2 stages, against 69.1 / 76.8 / 82.9% for
// k_gate_mma in the same call; 4 warps and 2 stages 87.1 / 82.3 / 88.0; 3 stages 78-79% (4 or 8
// warps: two blocks an SM at most); 4 stages 74-80%, 6 stages 47-56% (one block an SM).  More
// warps an SM count more than a deeper ring.  6-qubit blocks through it measured slower than
// k_gate_mma's (44-46% against 51-53%: 8 KiB units leave one block an SM) and stay there.
const int TMA_MAX_STAGES = 8;

struct tgate {
    mgate m;
    int rbits, nruns;         // runs of 2^rbits amplitudes, nruns of them a unit
    int pad;                  // elements after each run in a stage
    uint64_t roff[64];        // run k's first amplitude, from the unit's first
    int smm[1 << HS_Q_MAX_TARGETS], smg[16]; // stage index of member c / group j (they add)
};

template <int NT> __host__ __device__ constexpr int tma_stage_elems() { return (1 << NT) * 20; }

template <int NT> size_t tma_smem(int warps, int stages)
{
    return mma_smem<NT>() + (size_t)warps * stages * tma_stage_elems<NT>() * sizeof(float2) +
           (size_t)warps * stages * sizeof(unsigned long long) + ((1 << NT) + 16) * sizeof(int) + 64 * sizeof(uint64_t);
}

// TW warps a block share one copy of the matrix.
template <int NT, int TW>
__global__ void __launch_bounds__(TW * 32, TW >= 8 ? 2 : 3) k_gate_tma(float2 *a, const tgate g, uint64_t nunits, int S)
{
#if HS_HAVE_BULK_COPY
    constexpr int D = 1 << NT, MT = D / 16, KS = D / 8, NG = MMA_NG, GS = 4 / NG, SE = tma_stage_elems<NT>();
    extern __shared__ __align__(16) unsigned char smem[];
    float2 *stages = (float2 *)smem;
    unsigned char *mat = smem + (size_t)TW * S * SE * sizeof(float2);
    uint64_t *moff = (uint64_t *)(mat + mma_matrix_bytes<NT>()), *goff = moff + D, *roff = goff + (1 << LOWB);
    unsigned long long *bars = (unsigned long long *)(roff + 64);
    int *smm = (int *)(bars + TW * S), *smg = smm + D;
    mma_load_matrix<NT>(mat);
    for (int i = threadIdx.x; i < D; i += blockDim.x) moff[i] = g.m.moff[i], smm[i] = g.smm[i];
    for (int i = threadIdx.x; i < (1 << LOWB); i += blockDim.x) goff[i] = g.m.goff[i];
    for (int i = threadIdx.x; i < 16; i += blockDim.x) smg[i] = g.smg[i];
    for (int i = threadIdx.x; i < 64; i += blockDim.x) roff[i] = g.roff[i];
    if (threadIdx.x < TW * S) hs_bulk::barrier_init(&bars[threadIdx.x]);
    __syncthreads();
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, gid = lane >> 2, tig = lane & 3;
    const uint64_t nwarps = (uint64_t)gridDim.x * TW;
    float2 *ring = stages + (size_t)warp * S * SE;
    unsigned long long *bar = bars + warp * S;
    const int run = 1 << g.rbits, runpad = run + g.pad;
    const unsigned unit_bytes = D * 16 * sizeof(float2), run_bytes = run * sizeof(float2);
    // the request of unit u into stage s: lane 0 announces the bytes, every lane copies its runs
    auto request = [&](uint64_t u, int s) {
        const float2 *src = a + insert_zeros(u / GS, g.m.tb, g.m.ntb) + goff[(u % GS) * 16];
        if (lane == 0) hs_bulk::expect(&bar[s], unit_bytes);
        __syncwarp();
        for (int k = lane; k < g.nruns; k += 32) hs_bulk::copy_part(ring + s * SE + k * runpad, src + roff[k], run_bytes, &bar[s]);
    };
    const uint64_t u0 = (uint64_t)blockIdx.x * TW + warp;
    for (int s = 0; s < S && u0 + s * nwarps < nunits; s++) request(u0 + s * nwarps, s);
    int sidx[KS][2], gidx[NG];
#pragma unroll
    for (int ks = 0; ks < KS; ks++) sidx[ks][0] = smm[ks * 8 + tig], sidx[ks][1] = smm[ks * 8 + tig + 4];
#pragma unroll
    for (int n = 0; n < NG; n++) gidx[n] = smg[n * 8 + gid];
    unsigned parity = 0; // bit s: the phase of stage s to wait for
    int s = 0;
    for (uint64_t u = u0; u < nunits; u += nwarps) {
        const int g0 = (int)(u % GS) * 8 * NG;
        hs_bulk::barrier_wait(&bar[s], (parity >> s) & 1);
        parity ^= 1u << s;
        const float2 *x = ring + s * SE;
        float re[MT][NG][4], im[MT][NG][4];
        mma_unit<NT>(re, im, mat, gid, tig, [&](int ks, float2 (&v)[NG][2]) {
#pragma unroll
            for (int n = 0; n < NG; n++) v[n][0] = x[sidx[ks][0] + gidx[n]], v[n][1] = x[sidx[ks][1] + gidx[n]];
        });
        // every lane's reads of the stage are done (their products are); order them before the
        // copy engine's writes of the next request into it
        hs_bulk::fence_async_proxy();
        __syncwarp();
        if (u + (uint64_t)S * nwarps < nunits) request(u + (uint64_t)S * nwarps, s);
        mma_store<NT>(a + insert_zeros(u / GS, g.m.tb, g.m.ntb), re, im, moff, goff, g0, g.m.pair, gid, tig);
        s = s + 1 == S ? 0 : s + 1;
    }
#else
    __trap(); // not launched below sm_90 (use_tma checks the build and the device)
#endif
}

// ----------------------------------------------------------------------------- host side
// Whether a gate goes to k_gate_mma: complex64, dense, 4-6 targets, no controls, a tile that fits.
// HS_QSV_MMA=0 never (the CUDA-core kernels), 2 for every such gate; by default 5- and 6-qubit
// gates, and 4-qubit ones with a target below qubit 5 (on high targets the CUDA-core kernel already
// streams at about 83% of copy, as k_gate_mma does).
static int use_mma(const hs_sv_gate *s, int mk)
{
    if (mk != HS_QMAT_DENSE || s->nt < 4 || s->cmask || s->nloc < s->nt + LOWB) return 0;
    const int mode = hs_sv_mma_mode();
    if (mode == HS_SV_MMA_NEVER) return 0;
    if (mode == HS_SV_MMA_ALWAYS || s->nt >= 5) return 1;
    for (int j = 0; j < s->nt; j++)
        if (s->tbit[j] < LOWB) return 1;
    return 0;
}

// The tile of a gate (the shared-memory and tensor-core kernels): its targets and the LOWB lowest
// other qubits, ascending in tb (the count returned; s->nloc >= nt + LOWB); member[i] is the
// target index of tile bit i, -1 for a group bit; gbit the group bits, ascending.
static int tile_bits(const hs_sv_gate *s, int *tb, int *member, int *gbit)
{
    int n = 0, ngb = 0;
    for (int b = 0; b < 64 && n < s->nt + LOWB; b++) {
        int j = 0;
        while (j < s->nt && s->tbit[j] != b) j++;
        if (j == s->nt) {
            if (ngb == LOWB) continue;
            gbit[ngb++] = b;
        }
        member[n] = j < s->nt ? j : -1;
        tb[n++] = b;
    }
    return n;
}

// Member bit j is target j, group bit r the r-th group bit of the tile.
static void mgate_layout(const hs_sv_gate *s, mgate *f)
{
    memset(f, 0, sizeof *f);
    int nt = s->nt, gbit[LOWB], member[HS_Q_MAX_TARGETS + LOWB];
    f->ntb = tile_bits(s, f->tb, member, gbit);
    f->pair = gbit[0] == 0;
    for (int c = 0; c < (1 << nt); c++)
        for (int j = 0; j < nt; j++)
            if (c >> j & 1) f->moff[c] += 1ull << s->tbit[j];
    for (int r = 0; r < (1 << LOWB); r++)
        for (int i = 0; i < LOWB; i++)
            if (r >> i & 1) f->goff[r] += 1ull << gbit[i];
}

template <int NT> int launch_mma(struct hs_cuda_ctx *cu, float2 *a, const mgate &f, uint64_t nunits)
{
    static int resident[HS_MAX_DEVICES]; // blocks an SM holds: the grid is one wave, so each block
                                         // loads the matrix once and then walks its units
    HS_CHECK_DEVICE_MEMO(cu);
    const size_t shm = mma_smem<NT>();
    if (!resident[cu->device]) {
        HS_CUDA_CHECK(cudaFuncSetAttribute(k_gate_mma<NT>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shm));
        int nb = 0;
        HS_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nb, k_gate_mma<NT>, FTHREADS, shm));
        resident[cu->device] = nb > 0 ? nb : 1;
    }
    const uint64_t cap = (uint64_t)cu->sm_count * resident[cu->device], nb = (nunits + FW - 1) / FW;
    k_gate_mma<NT><<<(int)(nb < cap ? nb : cap), FTHREADS, shm, cu->stream>>>(a, f, nunits);
    HS_CUDA_LAUNCH_CHECK("k_gate_mma");
    return HS_OK;
}

// The bits of x under mask, packed (pext), and its inverse (pdep).
static uint64_t bits_extract(uint64_t x, uint64_t mask)
{
    uint64_t r = 0;
    for (int i = 0; mask; mask &= mask - 1, i++)
        if (x & mask & (~mask + 1)) r |= 1ull << i;
    return r;
}

static uint64_t bits_deposit(uint64_t x, uint64_t mask)
{
    uint64_t r = 0;
    for (int i = 0; mask; mask &= mask - 1, i++)
        if (x >> i & 1) r |= mask & (~mask + 1);
    return r;
}

// Shared-memory passes (wavefronts) the fragment loads of a unit take with stage indices smm + smg:
// 8-byte loads, a half-warp (gid 0..3 or 4..7, tig 0..3) at a time, 32 banks of 4 bytes.
static int tma_wavefronts(int nt, const int *smm, const int *smg)
{
    int total = 0;
    for (int c0 = 0; c0 < (1 << nt); c0 += 4)
        for (int n = 0; n < 2; n++)
            for (int half = 0; half < 2; half++) {
                int elem[16], ne = 0, worst = 0;
                for (int l = 16 * half; l < 16 * half + 16; l++) {
                    int e = smm[c0 + (l & 3)] + smg[n * 8 + (l >> 2)], seen = 0;
                    for (int i = 0; i < ne; i++) seen |= elem[i] == e;
                    if (!seen) elem[ne++] = e;
                }
                for (int b = 0; b < 32; b += 2) {
                    int k = 0;
                    for (int i = 0; i < ne; i++) k += (2 * elem[i]) % 32 == b;
                    worst = k > worst ? k : worst;
                }
                total += worst;
            }
    return total;
}

template <int NT> static void tgate_layout(const hs_sv_gate *s, tgate *f)
{
    constexpr int D = 1 << NT;
    memset(f, 0, sizeof *f);
    mgate_layout(s, &f->m);
    uint64_t v = f->m.goff[1] | f->m.goff[2] | f->m.goff[4] | f->m.goff[8]; // the unit's four lowest group bits
    for (int j = 0; j < NT; j++) v |= 1ull << s->tbit[j];
    int ones = 0;
    while (v >> ones & 1) ones++;
    f->rbits = ones < 5 ? ones : 5; // >= 4: qubits 0..3 are targets or among the group bits
    const int run = 1 << f->rbits;
    f->nruns = D * 16 / run;
    for (int k = 0; k < f->nruns; k++) f->roff[k] = bits_deposit((uint64_t)k * run, v);
    int pm[D], pg[16], best = -1;
    for (int c = 0; c < D; c++) pm[c] = (int)bits_extract(f->m.moff[c], v);
    for (int j = 0; j < 16; j++) pg[j] = (int)bits_extract(f->m.goff[j], v);
    for (int pad = 0; pad <= 8; pad += 2) {
        if (f->nruns * (run + pad) > tma_stage_elems<NT>()) break;
        int smm[D], smg[16];
        // a stage index p + (p / run) pad adds over the disjoint member and group bits of p
        for (int c = 0; c < D; c++) smm[c] = pm[c] + (pm[c] >> f->rbits) * pad;
        for (int j = 0; j < 16; j++) smg[j] = pg[j] + (pg[j] >> f->rbits) * pad;
        int w = tma_wavefronts(NT, smm, smg);
        if (best < 0 || w < best) {
            best = w;
            f->pad = pad;
            memcpy(f->smm, smm, sizeof smm);
            memcpy(f->smg, smg, sizeof smg);
        }
    }
}

// Units in flight per warp of the bulk-copy kernel (HS_QSV_TMA_STAGES, 2..8; default 2).
static int tma_stages(void)
{
    const char *e = getenv("HS_QSV_TMA_STAGES");
    int s = e && *e ? atoi(e) : 2;
    return s < 2 ? 2 : s > TMA_MAX_STAGES ? TMA_MAX_STAGES : s;
}

// Warps a block of the bulk-copy kernel (HS_QSV_TMA_WARPS, 4 or 8; default 8).
static int tma_warps(void)
{
    const char *e = getenv("HS_QSV_TMA_WARPS");
    return e && *e && atoi(e) == 4 ? 4 : 8;
}

template <int NT, int TW>
int launch_tma_w(struct hs_cuda_ctx *cu, float2 *a, const tgate &f, uint64_t nunits, int S, int optin)
{
    static int resident[HS_MAX_DEVICES][TMA_MAX_STAGES + 1], allowed[HS_MAX_DEVICES];
    HS_CHECK_DEVICE_MEMO(cu);
    const size_t shm = tma_smem<NT>(TW, S);
    // allowed once for the largest ring: a launch with another ring keeps its own smaller size
    if (!allowed[cu->device]) {
        HS_CUDA_CHECK(cudaFuncSetAttribute(k_gate_tma<NT, TW>, cudaFuncAttributeMaxDynamicSharedMemorySize, optin));
        allowed[cu->device] = 1;
    }
    if (!resident[cu->device][S]) {
        int nb = 0;
        HS_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nb, k_gate_tma<NT, TW>, TW * 32, shm));
        if (nb < 1) return HS_FAIL(HS_ERR_RUNTIME, "k_gate_tma: %zu bytes of shared memory a block do not fit an SM", shm);
        resident[cu->device][S] = nb;
    }
    const uint64_t cap = (uint64_t)cu->sm_count * resident[cu->device][S], nb = (nunits + TW - 1) / TW;
    k_gate_tma<NT, TW><<<(int)(nb < cap ? nb : cap), TW * 32, shm, cu->stream>>>(a, f, nunits, S);
    HS_CUDA_LAUNCH_CHECK("k_gate_tma");
    return HS_OK;
}

// Launches the bulk-copy kernel, or answers *taken = 0 where its smallest ring (4 warps, 2
// stages) does not fit a block's shared memory (devices with 99 KiB a block).
template <int NT> int launch_tma(struct hs_cuda_ctx *cu, float2 *a, const hs_sv_gate *g, uint64_t nunits, int *taken)
{
    static int optin[HS_MAX_DEVICES]; // shared memory a block may have
    HS_CHECK_DEVICE_MEMO(cu);
    if (!optin[cu->device])
        HS_CUDA_CHECK(cudaDeviceGetAttribute(&optin[cu->device], cudaDevAttrMaxSharedMemoryPerBlockOptin, cu->device));
    *taken = tma_smem<NT>(4, 2) <= (size_t)optin[cu->device];
    if (!*taken) return HS_OK;
    // the layout depends on the ordered targets only; its padding search takes about 0.1 ms on
    // the host (a 2-core test machine), far more than a pass over a small register, and circuits
    // repeat their blocks' targets (a VQE's every evaluation): a small direct-mapped cache, one a
    // host thread (an entry is rewritten in place)
    struct entry {
        int tbit[NT];
        tgate f;
    };
    static thread_local entry cache[32];
    static thread_local bool filled[32];
    unsigned h = 0;
    for (int j = 0; j < NT; j++) h = h * 31u + (unsigned)g->tbit[j];
    entry &e = cache[h % 32];
    bool hit = filled[h % 32];
    for (int j = 0; hit && j < NT; j++) hit = e.tbit[j] == g->tbit[j];
    if (!hit) {
        tgate_layout<NT>(g, &e.f);
        for (int j = 0; j < NT; j++) e.tbit[j] = g->tbit[j];
        filled[h % 32] = true;
    }
    const tgate &f = e.f;
    int S = tma_stages(), TW = tma_warps();
    // fewer stages, then fewer warps, where the ring does not fit
    while (S > 2 && tma_smem<NT>(TW, S) > (size_t)optin[cu->device]) S--;
    if (tma_smem<NT>(TW, S) > (size_t)optin[cu->device]) TW = 4;
    return TW == 4 ? launch_tma_w<NT, 4>(cu, a, f, nunits, S, optin[cu->device])
                   : launch_tma_w<NT, 8>(cu, a, f, nunits, S, optin[cu->device]);
}

// Whether 5-qubit blocks may take the bulk-copy kernel (HS_QSV_TMA, default 1; 0: k_gate_mma).
static int tma_mode(void)
{
    const char *e = getenv("HS_QSV_TMA");
    return e && *e ? atoi(e) != 0 : 1;
}

// The bulk-copy kernel (unless HS_QSV_TMA=0) takes 5-qubit blocks on a device of compute
// capability 9 or more in a build for it; cp.async.bulk needs the state 16-byte aligned (as the
// paired stores of k_gate_mma do; cudaMalloc's are).
// The planner's device (hs_sv_model_device): 2 where 5-qubit blocks take the bulk-copy kernel
// (the state's alignment aside: cudaMalloc's always is).
extern "C" int hs_sv_model_device_cuda(struct hs_cuda_ctx *cu)
{
#if defined(HS_CUDA_ARCH) && HS_CUDA_ARCH >= 90
    return tma_mode() && cu->cc_major >= 9 ? 2 : 1;
#else
    (void)cu;
    return 1;
#endif
}

// The block takes the bulk-copy kernel: a 5-qubit one, on the planner's device of kind 2 (one test
// of the device for both), with the state 16-byte aligned.
static int use_tma(struct hs_cuda_ctx *cu, const hs_sv_gate *g, const void *a)
{
    return g->nt == 5 && ((uintptr_t)a & 15) == 0 && hs_sv_model_device_cuda(cu) == 2;
}

static int apply_mma(struct hs_cuda_ctx *cu, float2 *a, const hs_sv_gate *g)
{
    const uint64_t nunits = (1ull << (g->nloc - g->nt - LOWB)) * (4 / MMA_NG);
    if (use_tma(cu, g, a)) {
        int taken = 0;
        HS_CHECK(launch_tma<5>(cu, a, g, nunits, &taken));
        if (taken) return HS_OK;
    }
    mgate f;
    mgate_layout(g, &f);
    switch (g->nt) {
    case 4: return launch_mma<4>(cu, a, f, nunits);
    case 5: return launch_mma<5>(cu, a, f, nunits);
    default: return launch_mma<6>(cu, a, f, nunits);
    }
}

// The device layout of a dense or permutation gate; 1 when the shared-memory tile path applies
// (a target below qubit 5 and room for a tile of 2^(nt+5) amplitudes).
int fgate_layout(const hs_sv_gate *s, int mk, fgate *f)
{
    memset(f, 0, sizeof *f);
    int nt = s->nt, D = 1 << nt;
    f->nt = nt;
    f->npos = s->npos;
    for (int j = 0; j < s->npos; j++) f->pos[j] = s->pos[j];
    f->cmask = s->cmask;
    f->cval = s->cval;
    for (int k = 0; k < D; k++) f->offs[k] = s->offs[k];
    if (mk == HS_QMAT_PERM)
        for (int r = 0; r < D; r++) {
            int c = s->src[r];
            f->dst[c] = r;
            f->doffs[c] = s->offs[r];
            f->ph[c] = make_double2(s->ph[2 * r], s->ph[2 * r + 1]);
        }
    int low = 0;
    for (int j = 0; j < nt; j++) low |= s->tbit[j] < LOWB;
    if (!low || s->nloc < nt + LOWB) return 0;
    int member[HS_Q_MAX_TARGETS + LOWB], nlow = 0;
    f->ntb = tile_bits(s, f->tb, member, f->gbit);
    for (int i = 0; i < f->ntb; i++) f->w[i] = member[i] >= 0 ? 1 << member[i] : (1 << nlow++) * (D + 1);
    return 1;
}

template <typename C> size_t gate_smem(int nt, int mk, int low)
{
    size_t D = (size_t)1 << nt, nm = mk == HS_QMAT_DENSE ? D * D : D;
    size_t b = nm * sizeof(C);
    if (low) b += (size_t)FW * 32 * (D + 1) * sizeof(C) + D * (sizeof(uint64_t) + sizeof(int));
    return b;
}

// Launch one of the gate kernels; the first launch on a device allows its shared memory size.
template <typename T, int NT, int KIND, int LOW>
int launch_gate(struct hs_cuda_ctx *cu, typename cx<T>::t *a, const fgate &f, uint64_t count)
{
    typedef typename cx<T>::t C;
    static bool ready[HS_MAX_DEVICES];
    HS_CHECK_DEVICE_MEMO(cu);
    size_t shm = gate_smem<C>(NT, KIND, LOW);
    auto kern = LOW ? k_gate_low<T, NT, KIND> : k_gate_high<T, NT, KIND>;
    if (!ready[cu->device]) {
        HS_CUDA_CHECK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shm));
        ready[cu->device] = true;
    }
    uint64_t units = LOW ? (count + FW - 1) / FW : (count + FTHREADS - 1) / FTHREADS;
    uint64_t cap = (uint64_t)cu->sm_count * 16;
    int blocks = (int)(units < cap ? (units ? units : 1) : cap);
    kern<<<blocks, FTHREADS, shm, cu->stream>>>(a, f, count);
    HS_CUDA_LAUNCH_CHECK(LOW ? "k_gate_low" : "k_gate_high");
    return HS_OK;
}

template <typename T, int KIND, int LOW>
int launch_nt(struct hs_cuda_ctx *cu, typename cx<T>::t *a, const fgate &f, uint64_t count)
{
    switch (f.nt) {
    case 1: return launch_gate<T, 1, KIND, LOW>(cu, a, f, count);
    case 2: return launch_gate<T, 2, KIND, LOW>(cu, a, f, count);
    case 3: return launch_gate<T, 3, KIND, LOW>(cu, a, f, count);
    case 4: return launch_gate<T, 4, KIND, LOW>(cu, a, f, count);
    case 5: return launch_gate<T, 5, KIND, LOW>(cu, a, f, count);
    case 6: return launch_gate<T, 6, KIND, LOW>(cu, a, f, count);
    default: return HS_FAIL(HS_ERR_RUNTIME, "state vector: no kernel for %d targets", f.nt);
    }
}

template <typename T>
int apply_t(struct hs_cuda_ctx *cu, void *av, const hs_sv_gate *g, const double *m, int mk)
{
    typedef typename cx<T>::t C;
    C *a = (C *)av;
    if (mk == HS_QMAT_DIAG) {
        dgate d;
        memset(&d, 0, sizeof d);
        d.nt = g->nt;
        for (int j = 0; j < g->nt; j++) d.tbit[j] = g->tbit[j];
        d.cmask = g->cmask;
        d.cval = g->cval;
        for (int k = 0; k < (1 << g->nt); k++) d.ph[k] = make_double2(g->ph[2 * k], g->ph[2 * k + 1]);
        uint64_t n = 1ull << g->nloc;
        k_diag<T><<<hs_cuda_blocks(cu, n, THREADS), THREADS, 0, cu->stream>>>(a, d, n);
        HS_CUDA_LAUNCH_CHECK("k_diag");
        return HS_OK;
    }
    if (mk == HS_QMAT_DENSE && g->nt == 1 && g->tbit[0] < LOWB && g->nloc >= LOWB) {
        mat2 m2;
        for (int k = 0; k < 4; k++) m2.m[k] = make_double2(m[2 * k], m[2 * k + 1]);
        uint64_t n = 1ull << g->nloc;
        k_dense1_low<T><<<hs_cuda_blocks(cu, n, THREADS), THREADS, 0, cu->stream>>>(a, m2, g->tbit[0], g->cmask, g->cval, n);
        HS_CUDA_LAUNCH_CHECK("k_dense1_low");
        return HS_OK;
    }
    if (mk == HS_QMAT_DENSE) {
        size_t d = (size_t)1 << g->nt;
        HS_CUDA_CHECK(cudaMemcpyToSymbolAsync(g_mat, m, d * d * sizeof(double2), 0, cudaMemcpyHostToDevice, cu->stream));
    }
    if constexpr (sizeof(T) == 4)
        if (use_mma(g, mk)) return apply_mma(cu, (float2 *)a, g);
    fgate f;
    int low = fgate_layout(g, mk, &f);
    if (low) {
        uint64_t ntiles = 1ull << (g->nloc - f.ntb);
        return mk == HS_QMAT_DENSE ? launch_nt<T, GK_DENSE, 1>(cu, a, f, ntiles) : launch_nt<T, GK_PERM, 1>(cu, a, f, ntiles);
    }
    uint64_t ng = 1ull << (g->nloc - g->npos);
    return mk == HS_QMAT_DENSE ? launch_nt<T, GK_DENSE, 0>(cu, a, f, ng) : launch_nt<T, GK_PERM, 0>(cu, a, f, ng);
}

// ---------------------------------------------------------------- reductions
template <typename C> __device__ __forceinline__ double norm2(C v) { return (double)v.x * v.x + (double)v.y * v.y; }

// Output b is split over bpo blocks; block j of output b sums [b*bs + j*sub, b*bs + (j+1)*sub).
template <typename T>
__global__ void k_prob_blocks(const typename cx<T>::t *a, uint64_t nb, uint64_t bs, uint64_t bpo, double *part)
{
    uint64_t sub = bs / bpo;
    for (uint64_t ob = blockIdx.x; ob < nb * bpo; ob += gridDim.x) {
        uint64_t start = (ob / bpo) * bs + (ob % bpo) * sub;
        double s = 0;
        for (uint64_t i = threadIdx.x; i < sub; i += blockDim.x) s += norm2(a[start + i]);
        s = hs_block_sum(s);
        if (threadIdx.x == 0) part[ob] = s;
    }
}

// Bins [bin0, bin0+16) of the marginal over qubits q: registers per bin (selects, no atomics).
template <typename T>
__global__ void k_marginal(const typename cx<T>::t *a, uint64_t n, int nm, const int4 q0, const int4 q1,
                           const int4 q2, int bin0, double *part)
{
    int q[12] = {q0.x, q0.y, q0.z, q0.w, q1.x, q1.y, q1.z, q1.w, q2.x, q2.y, q2.z, q2.w};
    double acc[16];
#pragma unroll
    for (int j = 0; j < 16; j++) acc[j] = 0;
    for (uint64_t i = tid0(); i < n; i += stride0()) {
        int k = 0;
        for (int j = 0; j < nm; j++) k |= (int)((i >> q[j]) & 1) << j;
        double p = norm2(a[i]);
#pragma unroll
        for (int j = 0; j < 16; j++) acc[j] += (k - bin0 == j) ? p : 0.0;
    }
#pragma unroll
    for (int j = 0; j < 16; j++) {
        double s = hs_block_sum(acc[j]);
        if (threadIdx.x == 0) part[(size_t)blockIdx.x * 16 + j] = s;
    }
}

template <typename T>
__global__ void k_pauli_expect(const typename cx<T>::t *a, uint64_t n, uint64_t xm, uint64_t zm, double *part)
{
    double sr = 0, si = 0;
    for (uint64_t i = tid0(); i < n; i += stride0()) {
        typename cx<T>::t u = a[i ^ xm], v = a[i];
        double re = (double)u.x * v.x + (double)u.y * v.y, im = (double)u.x * v.y - (double)u.y * v.x;
        double sg = (__popcll(i & zm) & 1) ? -1.0 : 1.0;
        sr += sg * re;
        si += sg * im;
    }
    sr = hs_block_sum(sr);
    si = hs_block_sum(si);
    if (threadIdx.x == 0) part[2 * blockIdx.x] = sr, part[2 * blockIdx.x + 1] = si;
}

template <typename T>
__global__ void k_inner(const typename cx<T>::t *a, const typename cx<T>::t *b, uint64_t n, double *part)
{
    double sr = 0, si = 0;
    for (uint64_t i = tid0(); i < n; i += stride0()) {
        typename cx<T>::t u = a[i], v = b[i];
        sr += (double)u.x * v.x + (double)u.y * v.y;
        si += (double)u.x * v.y - (double)u.y * v.x;
    }
    sr = hs_block_sum(sr);
    si = hs_block_sum(si);
    if (threadIdx.x == 0) part[2 * blockIdx.x] = sr, part[2 * blockIdx.x + 1] = si;
}

template <typename T>
__global__ void k_collapse(typename cx<T>::t *a, uint64_t n, uint64_t mask, uint64_t val, T scale)
{
    for (uint64_t i = tid0(); i < n; i += stride0()) {
        typename cx<T>::t v = a[i];
        T s = (i & mask) == val ? scale : (T)0;
        v.x *= s;
        v.y *= s;
        a[i] = v;
    }
}

// y[i ^ xm] += c (-1)^popcount(i & zm) x[i]: i -> i ^ xm is a bijection, so no two threads collide.
template <typename T>
__global__ void k_pauli_axpy(typename cx<T>::t *y, const typename cx<T>::t *x, uint64_t n, uint64_t xm, uint64_t zm,
                             double2 c)
{
    for (uint64_t i = tid0(); i < n; i += stride0()) {
        typename cx<T>::t v = x[i], z;
        z.x = 0;
        z.y = 0;
        double2 cc = (__popcll(i & zm) & 1) ? make_double2(-c.x, -c.y) : c;
        typename cx<T>::t w = cmul_acc(z, cc, v), o = y[i ^ xm];
        o.x += w.x;
        o.y += w.y;
        y[i ^ xm] = o;
    }
}

template <typename T>
__global__ void k_pack(typename cx<T>::t *a, int q, int v, uint64_t start, uint64_t count, typename cx<T>::t *buf,
                       int unpack)
{
    uint64_t lo = (1ull << q) - 1;
    for (uint64_t jj = tid0(); jj < count; jj += stride0()) {
        uint64_t j = start + jj;
        uint64_t i = ((j & ~lo) << 1) | ((uint64_t)v << q) | (j & lo);
        if (unpack) a[i] = buf[jj];
        else buf[jj] = a[i];
    }
}

// Partials to the host (pinned scratch), after the stream has finished them.
int fetch(struct hs_cuda_ctx *cu, const double *dev, size_t count, double **host)
{
    return hs_cuda_fetch(cu, dev, count * sizeof(double), (void **)host);
}

int reduce_blocks(struct hs_cuda_ctx *cu, uint64_t n) { return hs_cuda_blocks(cu, n, THREADS); }

template <typename T>
int prob_blocks_t(struct hs_cuda_ctx *cu, const void *a, int nloc, int bbits, double *out)
{
    uint64_t nb = 1ull << (nloc - bbits), bs = 1ull << bbits, bpo = 1;
    uint64_t want = (uint64_t)cu->sm_count * 8;
    while (bpo * nb < want && bs / (bpo * 2) >= 4096) bpo *= 2; // split big blocks so the GPU fills
    double *part, *h;
    HS_CHECK(hs_cuda_scratch(cu, nb * bpo * sizeof(double), (void **)&part));
    uint64_t grid = nb * bpo < 65535 ? nb * bpo : 65535;
    k_prob_blocks<T><<<(unsigned)grid, THREADS, 0, cu->stream>>>((const typename cx<T>::t *)a, nb, bs, bpo, part);
    HS_CUDA_LAUNCH_CHECK("k_prob_blocks");
    HS_CHECK(fetch(cu, part, nb * bpo, &h));
    for (uint64_t b = 0; b < nb; b++) {
        double s = 0;
        for (uint64_t j = 0; j < bpo; j++) s += h[b * bpo + j];
        out[b] = s;
    }
    return HS_OK;
}

template <typename T>
int marginal_t(struct hs_cuda_ctx *cu, const void *a, int nloc, int nm, const int *q, double *out)
{
    uint64_t n = 1ull << nloc;
    int qq[12] = {0};
    for (int j = 0; j < nm; j++) qq[j] = q[j];
    int4 q0 = make_int4(qq[0], qq[1], qq[2], qq[3]), q1 = make_int4(qq[4], qq[5], qq[6], qq[7]),
         q2 = make_int4(qq[8], qq[9], qq[10], qq[11]);
    int blocks = reduce_blocks(cu, n), nbins = 1 << nm;
    double *part, *h;
    HS_CHECK(hs_cuda_scratch(cu, (size_t)blocks * 16 * sizeof(double), (void **)&part));
    for (int bin0 = 0; bin0 < nbins; bin0 += 16) {
        k_marginal<T><<<blocks, THREADS, 0, cu->stream>>>((const typename cx<T>::t *)a, n, nm, q0, q1, q2, bin0, part);
        HS_CUDA_LAUNCH_CHECK("k_marginal");
        HS_CHECK(fetch(cu, part, (size_t)blocks * 16, &h));
        for (int j = 0; j < 16 && bin0 + j < nbins; j++) {
            double s = 0;
            for (int b = 0; b < blocks; b++) s += h[(size_t)b * 16 + j];
            out[bin0 + j] = s;
        }
    }
    return HS_OK;
}

int sum_pairs(struct hs_cuda_ctx *cu, const double *part, int blocks, double out[2])
{
    double *h;
    HS_CHECK(fetch(cu, part, 2 * (size_t)blocks, &h));
    out[0] = out[1] = 0;
    for (int b = 0; b < blocks; b++) out[0] += h[2 * b], out[1] += h[2 * b + 1];
    return HS_OK;
}

} // namespace

extern "C" int hs_sv_apply_cuda(struct hs_cuda_ctx *cu, hs_dtype t, void *a, const hs_sv_gate *g, const double *m, int mk)
{
    return t == HS_C128 ? apply_t<double>(cu, a, g, m, mk) : apply_t<float>(cu, a, g, m, mk);
}

extern "C" int hs_sv_prob_blocks_cuda(struct hs_cuda_ctx *cu, hs_dtype t, const void *a, int nloc, int bbits, double *out)
{
    return t == HS_C128 ? prob_blocks_t<double>(cu, a, nloc, bbits, out) : prob_blocks_t<float>(cu, a, nloc, bbits, out);
}

extern "C" int hs_sv_marginal_cuda(struct hs_cuda_ctx *cu, hs_dtype t, const void *a, int nloc, int nm, const int *q,
                                   double *out)
{
    return t == HS_C128 ? marginal_t<double>(cu, a, nloc, nm, q, out) : marginal_t<float>(cu, a, nloc, nm, q, out);
}

extern "C" int hs_sv_collapse_cuda(struct hs_cuda_ctx *cu, hs_dtype t, void *a, int nloc, uint64_t mask, uint64_t val,
                                   double scale)
{
    uint64_t n = 1ull << nloc;
    int blocks = hs_cuda_blocks(cu, n, THREADS);
    if (t == HS_C128) k_collapse<double><<<blocks, THREADS, 0, cu->stream>>>((double2 *)a, n, mask, val, scale);
    else k_collapse<float><<<blocks, THREADS, 0, cu->stream>>>((float2 *)a, n, mask, val, (float)scale);
    HS_CUDA_LAUNCH_CHECK("k_collapse");
    return HS_OK;
}

extern "C" int hs_sv_pauli_expect_cuda(struct hs_cuda_ctx *cu, hs_dtype t, const void *a, int nloc, uint64_t xm,
                                       uint64_t zm, double out[2])
{
    uint64_t n = 1ull << nloc;
    int blocks = reduce_blocks(cu, n);
    double *part;
    HS_CHECK(hs_cuda_scratch(cu, 2 * (size_t)blocks * sizeof(double), (void **)&part));
    if (t == HS_C128) k_pauli_expect<double><<<blocks, THREADS, 0, cu->stream>>>((const double2 *)a, n, xm, zm, part);
    else k_pauli_expect<float><<<blocks, THREADS, 0, cu->stream>>>((const float2 *)a, n, xm, zm, part);
    HS_CUDA_LAUNCH_CHECK("k_pauli_expect");
    return sum_pairs(cu, part, blocks, out);
}

extern "C" int hs_sv_inner_cuda(struct hs_cuda_ctx *cu, hs_dtype t, const void *a, const void *b, int nloc, double out[2])
{
    uint64_t n = 1ull << nloc;
    int blocks = reduce_blocks(cu, n);
    double *part;
    HS_CHECK(hs_cuda_scratch(cu, 2 * (size_t)blocks * sizeof(double), (void **)&part));
    if (t == HS_C128) k_inner<double><<<blocks, THREADS, 0, cu->stream>>>((const double2 *)a, (const double2 *)b, n, part);
    else k_inner<float><<<blocks, THREADS, 0, cu->stream>>>((const float2 *)a, (const float2 *)b, n, part);
    HS_CUDA_LAUNCH_CHECK("k_inner");
    return sum_pairs(cu, part, blocks, out);
}

extern "C" int hs_sv_pauli_axpy_cuda(struct hs_cuda_ctx *cu, hs_dtype t, void *y, const void *x, int nloc, uint64_t xm,
                                     uint64_t zm, const double c[2])
{
    uint64_t n = 1ull << nloc;
    int blocks = hs_cuda_blocks(cu, n, THREADS);
    double2 cc = make_double2(c[0], c[1]);
    if (t == HS_C128) k_pauli_axpy<double><<<blocks, THREADS, 0, cu->stream>>>((double2 *)y, (const double2 *)x, n, xm, zm, cc);
    else k_pauli_axpy<float><<<blocks, THREADS, 0, cu->stream>>>((float2 *)y, (const float2 *)x, n, xm, zm, cc);
    HS_CUDA_LAUNCH_CHECK("k_pauli_axpy");
    return HS_OK;
}

extern "C" int hs_sv_pack_cuda(struct hs_cuda_ctx *cu, hs_dtype t, void *a, int nloc, int q, int v, int64_t start,
                               int64_t count, void *buf, int unpack)
{
    int blocks = hs_cuda_blocks(cu, (size_t)count, THREADS);
    if (t == HS_C128)
        k_pack<double><<<blocks, THREADS, 0, cu->stream>>>((double2 *)a, q, v, (uint64_t)start, (uint64_t)count, (double2 *)buf, unpack);
    else
        k_pack<float><<<blocks, THREADS, 0, cu->stream>>>((float2 *)a, q, v, (uint64_t)start, (uint64_t)count, (float2 *)buf, unpack);
    HS_CUDA_LAUNCH_CHECK("k_pack");
    return HS_OK;
}

