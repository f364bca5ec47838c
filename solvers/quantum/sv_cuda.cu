// CUDA state-vector kernels (complex128 and complex64): dense, diagonal and permutation gates,
// deterministic reductions (per-block partials summed on the host in a fixed order), packing.
#include <cstdlib>
#include <cstring>

#include "kernels/config.h"
#include "kernels/cuda_block_reduce.cuh"
#include "kernels/cuda_util.h"
#include "solvers/quantum/circuit.h"
#include "solvers/quantum/sv_impl.h"

namespace {

const int THREADS = 256;

// Gate matrix of up to 32x32 entries: every thread reads the same entry at once (broadcast).
__constant__ double2 c_mat[1 << (2 * HS_Q_MAX_TARGETS)];

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

__device__ __forceinline__ uint64_t insert_zeros(uint64_t g, const hs_sv_gate &gt)
{
    for (int j = 0; j < gt.npos; j++) {
        int p = gt.pos[j];
        g = ((g >> p) << (p + 1)) | (g & ((1ull << p) - 1));
    }
    return g;
}

__device__ __forceinline__ uint64_t stride0() { return (uint64_t)gridDim.x * blockDim.x; }
__device__ __forceinline__ uint64_t tid0() { return (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; }

// Row r of the gate matrix (c_mat) times the group's input amplitudes.
template <typename C, int D> __device__ __forceinline__ C gate_row(int r, const C in[D])
{
    C acc;
    acc.x = 0;
    acc.y = 0;
#pragma unroll
    for (int k = 0; k < D; k++) acc = cmul_acc(acc, c_mat[r * D + k], in[k]);
    return acc;
}

// One thread per group of 2^NT amplitudes that the gate mixes: consecutive threads touch
// consecutive amplitudes when every target is at qubit 5 or above (gates with lower targets go
// to k_dense1_low or k_dense_tile; permutations with low targets rely on L1).
template <typename T, int NT>
__global__ void k_dense(typename cx<T>::t *a, const hs_sv_gate g, uint64_t ng)
{
    typedef typename cx<T>::t C;
    const int D = 1 << NT;
    for (uint64_t gi = tid0(); gi < ng; gi += stride0()) {
        uint64_t base = insert_zeros(gi, g) | g.cval;
        C in[D];
#pragma unroll
        for (int k = 0; k < D; k++) in[k] = a[base + g.offs[k]];
// rows one or two at a time for large blocks: the inputs stay in registers, the code stays small
#pragma unroll(NT >= 4 ? 2 : D)
        for (int r = 0; r < D; r++) a[base + g.offs[r]] = gate_row<C, D>(r, in);
    }
}

template <typename T, int NT>
__global__ void k_perm(typename cx<T>::t *a, const hs_sv_gate g, uint64_t ng)
{
    typedef typename cx<T>::t C;
    const int D = 1 << NT;
    for (uint64_t gi = tid0(); gi < ng; gi += stride0()) {
        uint64_t base = insert_zeros(gi, g) | g.cval;
        C in[D];
#pragma unroll
        for (int k = 0; k < D; k++) in[k] = a[base + g.offs[k]];
#pragma unroll
        for (int r = 0; r < D; r++) {
            C v;
            v.x = 0;
            v.y = 0;
            double2 ph = make_double2(g.ph[2 * r], g.ph[2 * r + 1]);
            if constexpr (NT <= 2) {
                // a sum of selected terms keeps in[] in registers for the small (common) gates
#pragma unroll
                for (int k = 0; k < D; k++) {
                    double2 w = g.src[r] == k ? ph : make_double2(0.0, 0.0);
                    v = cmul_acc(v, w, in[k]);
                }
            } else {
                C u = in[0];
#pragma unroll
                for (int k = 1; k < D; k++)
                    if (g.src[r] == k) u = in[k];
                v = cmul_acc(v, ph, u);
            }
            a[base + g.offs[r]] = v;
        }
    }
}

// Diagonal gates touch every amplitude once, in order: fully coalesced for any targets.
template <typename T>
__global__ void k_diag(typename cx<T>::t *a, const hs_sv_gate g, uint64_t n)
{
    typedef typename cx<T>::t C;
    for (uint64_t i = tid0(); i < n; i += stride0()) {
        if ((i & g.cmask) != g.cval) continue;
        int k = 0;
        for (int j = 0; j < g.nt; j++) k |= (int)((i >> g.tbit[j]) & 1) << j;
        C z;
        z.x = 0;
        z.y = 0;
        a[i] = cmul_acc(z, make_double2(g.ph[2 * k], g.ph[2 * k + 1]), a[i]);
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

// Dense gates with a target among the lowest five qubits: a block stages a tile of 2^10
// amplitudes in shared memory (bits 0..B-1 plus the targets above B), so that both the loads and
// the stores of a warp cover 32 consecutive amplitudes whatever the targets.
const int TILE_BITS = 10;

struct tile_layout {
    int ntb, B;             // tile index bits; the lowest B of them are amplitude bits 0..B-1
    int tb[TILE_BITS];      // amplitude bit of tile bit j (sorted)
    int tsort[HS_Q_MAX_TARGETS]; // target positions in the tile index, sorted (zeros go there)
    int toffs[1 << HS_Q_MAX_TARGETS]; // tile offset of matrix index k
};

__device__ __forceinline__ uint64_t deposit(int j, const tile_layout &L)
{
    uint64_t idx = (uint64_t)(j & ((1 << L.B) - 1));
    for (int b = L.B; b < L.ntb; b++)
        if ((j >> b) & 1) idx |= 1ull << L.tb[b];
    return idx;
}

template <typename T, int NT>
__global__ void k_dense_tile(typename cx<T>::t *a, const hs_sv_gate g, const tile_layout L, uint64_t ntiles)
{
    typedef typename cx<T>::t C;
    extern __shared__ unsigned char smem[];
    C *tile = (C *)smem;
    const int TS = 1 << L.ntb, D = 1 << NT, NG = TS >> NT;
    for (uint64_t t = blockIdx.x; t < ntiles; t += gridDim.x) {
        uint64_t base = t;
        for (int b = 0; b < L.ntb; b++) {
            int p = L.tb[b];
            base = ((base >> p) << (p + 1)) | (base & ((1ull << p) - 1));
        }
        for (int j = threadIdx.x; j < TS; j += blockDim.x) tile[j] = a[base | deposit(j, L)];
        __syncthreads();
        for (int grp = threadIdx.x; grp < NG; grp += blockDim.x) {
            int lb = grp;
            for (int j = 0; j < NT; j++) {
                int p = L.tsort[j];
                lb = ((lb >> p) << (p + 1)) | (lb & ((1 << p) - 1));
            }
            if (((base | deposit(lb, L)) & g.cmask) != g.cval) continue;
            C in[D];
#pragma unroll
            for (int k = 0; k < D; k++) in[k] = tile[lb + L.toffs[k]];
#pragma unroll(NT >= 4 ? 2 : D)
            for (int r = 0; r < D; r++) tile[lb + L.toffs[r]] = gate_row<C, D>(r, in);
        }
        __syncthreads();
        for (int j = threadIdx.x; j < TS; j += blockDim.x) a[base | deposit(j, L)] = tile[j];
        __syncthreads();
    }
}

// The tile layout for the gate, or 0 when the generic kernel is the better choice.
int tile_for(const hs_sv_gate *g, tile_layout *L)
{
    int low = 0;
    for (int j = 0; j < g->nt; j++) low |= g->tbit[j] < 5;
    if (!low || g->nt < 2 || g->nloc < TILE_BITS) return 0;
    int B = TILE_BITS;
    for (;;) { // low bits plus the targets above them make TILE_BITS bits
        int above = 0;
        for (int j = 0; j < g->nt; j++) above += g->tbit[j] >= B;
        if (B + above <= TILE_BITS) break;
        B--;
    }
    memset(L, 0, sizeof *L);
    L->B = B;
    for (int b = 0; b < B; b++) L->tb[L->ntb++] = b;
    for (int b = B; b < 64 && L->ntb < TILE_BITS; b++)
        for (int j = 0; j < g->nt; j++)
            if (g->tbit[j] == b) L->tb[L->ntb++] = b;
    int tpos[HS_Q_MAX_TARGETS];
    for (int j = 0; j < g->nt; j++)
        for (int b = 0; b < L->ntb; b++)
            if (L->tb[b] == g->tbit[j]) tpos[j] = b;
    for (int j = 0; j < g->nt; j++) L->tsort[j] = tpos[j];
    for (int i = 1; i < g->nt; i++)
        for (int j = i; j > 0 && L->tsort[j - 1] > L->tsort[j]; j--) {
            int x = L->tsort[j];
            L->tsort[j] = L->tsort[j - 1];
            L->tsort[j - 1] = x;
        }
    for (int k = 0; k < (1 << g->nt); k++) {
        int o = 0;
        for (int j = 0; j < g->nt; j++) o |= ((k >> j) & 1) << tpos[j];
        L->toffs[k] = o;
    }
    return 1;
}

template <typename T>
int apply_t(struct hs_cuda_ctx *cu, void *av, const hs_sv_gate *g, const double *m, int mk)
{
    typedef typename cx<T>::t C;
    C *a = (C *)av;
    if (mk == HS_QMAT_DIAG) {
        uint64_t n = 1ull << g->nloc;
        k_diag<T><<<hs_cuda_blocks(cu, n, THREADS), THREADS, 0, cu->stream>>>(a, *g, n);
        HS_CUDA_LAUNCH_CHECK("k_diag");
        return HS_OK;
    }
    if (g->nt == 1 && g->tbit[0] < 5 && g->nloc >= 5) {
        mat2 m2;
        for (int k = 0; k < 4; k++) m2.m[k] = make_double2(m[2 * k], m[2 * k + 1]);
        uint64_t n = 1ull << g->nloc;
        k_dense1_low<T><<<hs_cuda_blocks(cu, n, THREADS), THREADS, 0, cu->stream>>>(a, m2, g->tbit[0], g->cmask, g->cval, n);
        HS_CUDA_LAUNCH_CHECK("k_dense1_low");
        return HS_OK;
    }
    uint64_t ng = 1ull << (g->nloc - g->npos);
    int blocks = hs_cuda_blocks(cu, ng, THREADS);
    if (mk == HS_QMAT_DENSE) {
        size_t d = (size_t)1 << g->nt;
        HS_CUDA_CHECK(cudaMemcpyToSymbolAsync(c_mat, m, d * d * sizeof(double2), 0, cudaMemcpyHostToDevice, cu->stream));
    }
    tile_layout L;
    if (mk == HS_QMAT_DENSE && tile_for(g, &L)) {
        uint64_t ntiles = 1ull << (g->nloc - L.ntb);
        int tb = (int)(ntiles < (uint64_t)cu->sm_count * 8 ? ntiles : (uint64_t)cu->sm_count * 8);
        size_t shm = sizeof(C) << L.ntb;
#define TLAUNCH(NT) k_dense_tile<T, NT><<<tb, THREADS, shm, cu->stream>>>(a, *g, L, ntiles)
        switch (g->nt) {
        case 2: TLAUNCH(2); break;
        case 3: TLAUNCH(3); break;
        case 4: TLAUNCH(4); break;
        default: TLAUNCH(5); break;
        }
#undef TLAUNCH
        HS_CUDA_LAUNCH_CHECK("k_dense_tile");
        return HS_OK;
    }
#define LAUNCH(K, NT) K<T, NT><<<blocks, THREADS, 0, cu->stream>>>(a, *g, ng)
    switch (g->nt * 4 + mk) {
    case 1 * 4 + HS_QMAT_DENSE: LAUNCH(k_dense, 1); break;
    case 2 * 4 + HS_QMAT_DENSE: LAUNCH(k_dense, 2); break;
    case 3 * 4 + HS_QMAT_DENSE: LAUNCH(k_dense, 3); break;
    case 4 * 4 + HS_QMAT_DENSE: LAUNCH(k_dense, 4); break;
    case 5 * 4 + HS_QMAT_DENSE: LAUNCH(k_dense, 5); break;
    case 1 * 4 + HS_QMAT_PERM: LAUNCH(k_perm, 1); break;
    case 2 * 4 + HS_QMAT_PERM: LAUNCH(k_perm, 2); break;
    case 3 * 4 + HS_QMAT_PERM: LAUNCH(k_perm, 3); break;
    case 4 * 4 + HS_QMAT_PERM: LAUNCH(k_perm, 4); break;
    case 5 * 4 + HS_QMAT_PERM: LAUNCH(k_perm, 5); break;
    default: return HS_FAIL(HS_ERR_RUNTIME, "state vector: no kernel for %d targets", g->nt);
    }
#undef LAUNCH
    HS_CUDA_LAUNCH_CHECK("k_dense/k_perm");
    return HS_OK;
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

