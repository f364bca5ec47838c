// The shallow-water model's kernels on the GPU: the RK4 stage over tiles whose corner, face and cell
// values sit in shared memory, the diagnostics one thread per cell; the pointwise operators of sw_point.h.
#include "kernels/cuda_util.h"
#include "solvers/cfd/sw_point.h"

namespace {

// A stage evaluated cell by cell computes each corner's potential vorticity (a division and eight
// loads) for the eight cells around it, each mass flux and Bernoulli value three to five times and
// each Laplacian of the hyperviscosity five times: fp64 work that kept the kernel at 29% of copy
// bandwidth on the H200.  A block first evaluates every value its tile of cells needs once, into
// shared memory, then combines them cell by cell (hs_sw_combine, as on the CPU): 56% of copy
// (ncu: L1 79% busy, DRAM 47%).  Copying the tile's input (h, u, v, b) into shared memory first and
// evaluating from there measured slower (48.5%: 53 KB of shared memory a block, and generic loads
// through a launch record in shared memory).
constexpr int TX = 32, TY = 16, BY = 8; // tile of TX x TY cells, blocks of TX x BY threads
constexpr int WX = TX + 2, WY = TY + 2; // the tile with one point more on every side

struct sw_tile {
    double q[WY][WX];  // corner (i0 - 1 + x, j0 - 1 + y)
    double U[WY][WX];  // x-face (i0 - 1 + x, j0 - 1 + y)
    double V[WY][WX];  // y-face
    double B[WY][WX];  // cell
    double lu[WY][WX]; // Laplacian of u at its point
    double lv[WY][WX]; // Laplacian of v at its point
};

__global__ void __launch_bounds__(TX * BY, 4) sw_stage_kernel(const hs_sw_launch L)
{
    __shared__ sw_tile t;
    const int64_t i0 = L.lo[0] + (int64_t)blockIdx.x * TX, j0 = L.lo[1] + (int64_t)blockIdx.y * TY;
    // the tile's cells [i0, ie) x [j0, je); the values evaluated are those these cells read
    const int64_t ie = min(i0 + TX, L.hi[0]), je = min(j0 + TY, L.hi[1]);
    const bool friction = L.nu != 0.0 || L.nu4 != 0.0;
    for (int p = threadIdx.y * TX + threadIdx.x; p < WX * WY; p += TX * BY) {
        const int x = p % WX, y = p / WX;
        const int64_t i = i0 - 1 + x, j = j0 - 1 + y;
        if (i > ie || j > je) continue;
        t.q[y][x] = hs_sw_q(&L, i, j);
        if (j < je) t.U[y][x] = hs_sw_U(&L, i, j);
        if (i < ie) t.V[y][x] = hs_sw_V(&L, i, j);
        if (i < ie && j < je) t.B[y][x] = hs_sw_B(&L, i, j);
        if (friction) {
            t.lu[y][x] = hs_sw_lap(&L, L.u, &L.lu, hs_sw_at(&L.lu, i, j));
            t.lv[y][x] = hs_sw_lap(&L, L.v, &L.lv, hs_sw_at(&L.lv, i, j));
        }
    }
    __syncthreads();
    const int x = threadIdx.x;
    const int64_t i = i0 + x;
    if (i >= ie) return;
    for (int y = threadIdx.y; y < TY && j0 + y < je; y += BY) {
        const int64_t j = j0 + y;
        const int Y = y + 1, X = x + 1;
        hs_sw_near n;
        n.q00 = t.q[Y][X], n.q10 = t.q[Y][X + 1], n.q01 = t.q[Y + 1][X], n.q11 = t.q[Y + 1][X + 1];
        n.qm0 = t.q[Y][X - 1], n.qm1 = t.q[Y + 1][X - 1], n.q0m = t.q[Y - 1][X], n.q1m = t.q[Y - 1][X + 1];
        n.U00 = t.U[Y][X], n.U10 = t.U[Y][X + 1], n.Um0 = t.U[Y][X - 1], n.U0m = t.U[Y - 1][X], n.U1m = t.U[Y - 1][X + 1];
        n.V00 = t.V[Y][X], n.V01 = t.V[Y + 1][X], n.Vm0 = t.V[Y][X - 1], n.Vm1 = t.V[Y + 1][X - 1], n.V0m = t.V[Y - 1][X];
        n.B00 = t.B[Y][X], n.Bm0 = t.B[Y][X - 1], n.B0m = t.B[Y - 1][X];
        n.fu = n.fv = 0.0;
        if (friction) {
            n.fu = hs_sw_friction_of(&L, t.lu[Y][X], t.lu[Y][X - 1], t.lu[Y][X + 1], t.lu[Y - 1][X], t.lu[Y + 1][X]);
            n.fv = hs_sw_friction_of(&L, t.lv[Y][X], t.lv[Y][X - 1], t.lv[Y][X + 1], t.lv[Y - 1][X], t.lv[Y + 1][X]);
        }
        double kh, ku, kv;
        hs_sw_combine(&L, j, &n, &kh, &ku, &kv);
        hs_sw_stage_update(&L, i, j, kh, ku, kv);
    }
}

__global__ void __launch_bounds__(256) sw_cell_kernel(const hs_sw_launch L)
{
    const int64_t i = L.lo[0] + blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    const int64_t j = L.lo[1] + blockIdx.y * (int64_t)blockDim.y + threadIdx.y;
    if (i >= L.hi[0] || j >= L.hi[1]) return;
    hs_sw_cell_op(&L, i, j);
}

} // namespace

extern "C" int hs_sw_launch_cuda(struct hs_cuda_ctx *cu, const hs_sw_launch *L)
{
    const int64_t nx = L->hi[0] - L->lo[0], ny = L->hi[1] - L->lo[1];
    if (nx <= 0 || ny <= 0) return HS_OK;
    if (ny > 65535LL * 8) return HS_FAIL(HS_ERR_RUNTIME, "shallow_water: %lld rows exceed one launch", (long long)ny);
    if (L->op == HS_SW_STAGE) {
        dim3 grid((unsigned)((nx + TX - 1) / TX), (unsigned)((ny + TY - 1) / TY), 1);
        sw_stage_kernel<<<grid, dim3(TX, BY, 1), 0, cu->stream>>>(*L);
    } else {
        dim3 grid((unsigned)((nx + 31) / 32), (unsigned)((ny + 7) / 8), 1);
        sw_cell_kernel<<<grid, dim3(32, 8, 1), 0, cu->stream>>>(*L);
    }
    HS_CUDA_CHECK(cudaGetLastError());
    return HS_OK;
}
