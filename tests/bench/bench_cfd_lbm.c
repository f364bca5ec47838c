/* Benchmark of the lbm CFD model: MLUP/s of the fused AA stream-collide kernel (D3Q19 at 256^3 and 512^3, D2Q9) in fp32 and fp16 storage,
 * with the bandwidth fraction against a device copy measured in the same run (bytes per cell 2 Q sizeof(storage) + 1 flag byte), and
 * whole steps of a periodic box (halo copies included), and the kernel alone on a periodic box (no boundary cells).  HS_BENCH_LBM_N3 / HS_BENCH_LBM_N2 replace the 3D sides / the 2D side. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_util.h"
#include "io/params.h"
#include "solvers/cfd/cfd.h"
#include "solvers/cfd/lbm.h"

int hs_driver_declare(void);

typedef struct {
    void *state;
    int steps;
    double seconds, bpc;
} job;

static int run_kernel(void *arg)
{
    job *j = arg;
    return hs_lbm_bench_kernel(j->state, j->steps, &j->seconds, &j->bpc);
}

/* One case: ndim, side n, storage; mode CLOSED (a lid-driven box: the kernel alone, no halo), PERIODIC
 * (whole steps, the periodic images copied on the device) or BULK (the kernel alone on a periodic box:
 * no cell next to a boundary, every warp on the bulk path, the geometry of FluidX3D's own benchmark;
 * the images are not refreshed, so only the rate means anything). */
enum { CLOSED, PERIODIC, BULK };
static void bench_case(hs_ctx *ctx, int ndim, int n, const char *storage, int mode)
{
    const int periodic = mode != CLOSED;
    char nb[64], sb[48], size[64], kern[96], db[32];
    snprintf(nb, sizeof nb, ndim == 3 ? "cfd.n=%d %d %d" : "cfd.n=%d %d", n, n, n);
    snprintf(sb, sizeof sb, "lbm.storage=%s", storage);
    snprintf(db, sizeof db, "cfd.ndim=%d", ndim);
    const char *bound = ndim == 3 ? (periodic ? "lbm.boundary=periodic periodic periodic periodic periodic periodic"
                                              : "lbm.boundary=wall wall wall lid wall wall")
                                  : (periodic ? "lbm.boundary=periodic periodic periodic periodic" : "lbm.boundary=wall wall wall lid");
    const char *ov[] = {"run.solver=cfd", "cfd.model=lbm", db, nb, sb, bound, "cfd.t_end=1e300", "output.format=none",
                        "lbm.nu=1e-3", "lbm.u_ref=1", "lbm.u_lattice=0.05", "lbm.collision=trt", "lbm.force=0.01"};
    hs_params *p = NULL;
    bench_check(hs_params_load(NULL, 13, (char *const *)ov, &p), "parameters");
    job j = {NULL, 0, 0, 0};
    bench_check(hs_cfd_lbm.create(ctx, p, &j.state), "lbm create");
    int q = 0;
    hs_lbm_units(j.state, NULL, NULL, NULL, NULL, &q);
    const double cells = ndim == 3 ? (double)n * n * n : (double)n * n;
    snprintf(size, sizeof size, ndim == 3 ? "%d^3" : "%d^2", n);
    const int gpu = ctx->device == HS_DEVICE_CUDA;
    if (mode != PERIODIC) {
        j.steps = gpu ? 20 : 2;
        double per = bench_time(run_kernel, &j, 1, gpu ? 5 : 2) / j.steps;
        double bytes = j.bpc * cells;
        snprintf(kern, sizeof kern, mode == BULK ? "lbm D%dQ%d AA step kernel, bulk" : "lbm D%dQ%d AA step kernel", ndim, q);
        bench_row(kern, size, storage, per, bytes, 0, NULL, 0);
        if (ctx->rank == 0) {
            double bw = bench_copy_bandwidth();
            printf("  D%dQ%d %s %s storage%s: %.0f MLUP/s, %.0f B/cell (2 x %d populations + flag): %.1f%% of the copy bandwidth %.0f GB/s\n", ndim, q,
                   size, storage,
                   mode == BULK ? ", periodic box, kernel alone (no boundary cells)" : "", cells / per * 1e-6, j.bpc, q, 100 * bytes / per / bw, bw * 1e-9);
            /* FluidX3D's published H200 figures (its README; not measured here): the reference */
            if (gpu && ndim == 3 && mode == CLOSED)
                printf("    (FluidX3D publishes %s MLUP/s for D3Q19 %s on an H200; the goal is >= %s)\n",
                       !strcmp(storage, "fp16") ? "36610" : "23056", storage, !strcmp(storage, "fp16") ? "40000" : "25000");
            fflush(stdout);
        }
    } else {
        int steps = gpu ? 20 : 2;
        double t = 0;
        bench_check(hs_lbm_bench_steps(j.state, 2, &t), "warm-up");
        bench_check(hs_lbm_bench_steps(j.state, steps, &t), "steps");
        double per = t / steps;
        static const double es[3] = {8, 4, 2};
        double esz = !strcmp(storage, "fp64") ? es[0] : !strcmp(storage, "fp32") ? es[1] : es[2];
        double bytes = (2.0 * q * esz + 1.0) * cells;
        snprintf(kern, sizeof kern, "lbm D%dQ%d periodic step", ndim, q);
        bench_row(kern, size, storage, per, bytes, 0, NULL, 0);
        if (ctx->rank == 0) {
            printf("  D%dQ%d %s %s storage, periodic, whole steps (halo copies, ghost rings): %.0f MLUP/s\n", ndim, q, size, storage,
                   cells / per * 1e-6);
            fflush(stdout);
        }
    }
    hs_cfd_lbm.destroy(j.state);
    hs_params_free(p);
}

int main(int argc, char **argv)
{
    hs_ctx *ctx = bench_init(&argc, &argv);
    bench_check(hs_driver_declare(), "declare");
    bench_check(hs_cfd_solver.declare(), "declare");
    const int gpu = ctx->device == HS_DEVICE_CUDA;
    bench_copy_bandwidth();
    int n3[2] = {256, 512}, n2 = gpu ? 8192 : 1024, nn3 = gpu ? 2 : 1;
    if (!gpu) n3[0] = 64;
    const char *e3 = getenv("HS_BENCH_LBM_N3"), *e2 = getenv("HS_BENCH_LBM_N2");
    if (e3) nn3 = sscanf(e3, "%d %d", &n3[0], &n3[1]);
    if (e2) n2 = atoi(e2);
    static const char *const st[2] = {"fp32", "fp16"};
    for (int i = 0; i < nn3; i++)
        for (int s = 0; s < 2; s++) bench_case(ctx, 3, n3[i], st[s], CLOSED);
    for (int s = 0; s < 2; s++) bench_case(ctx, 2, n2, st[s], CLOSED);
    for (int s = 0; s < 2; s++) bench_case(ctx, 3, n3[nn3 - 1], st[s], BULK);
    bench_case(ctx, 3, n3[0], "fp32", PERIODIC);
    bench_case(ctx, 2, n2, "fp32", PERIODIC);
    bench_finish();
    return 0;
}
