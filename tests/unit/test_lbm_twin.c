/* The lbm model's CUDA kernels against their CPU twins (D2Q9/D3Q19, BGK/TRT, fp64/fp32/fp16, every boundary, Bouzidi links, forces); skipped (77) without a GPU. */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/params.h"
#include "solvers/cfd/cfd.h"
#include "solvers/cfd/lbm.h"

int hs_driver_declare(void);

#if HS_HAVE_CUDA

/* Both backends evaluate lbm_point.h in the same order; the GPU contracts a*b + c into fused
 * multiply-adds, which moves the last bit of a population now and then.  Compared: every population
 * as stored (relative to the largest stored value), the velocity components (relative to the
 * largest speed: a component that is still tiny after one step is not its own scale) and the force
 * on the obstacle (relative to its size).  The tolerances: fp64 1e-12 after 1 and 40 steps (a few ulps, grown only by
 * the flow's own sensitivity over 40 steps of a viscous flow); fp32 storage 1e-5 (a few float ulps
 * of the deviations); fp16 storage 2e-2 (one binary16 rounding of a deviation flipping the other
 * way, 2^-11 of it, over a few steps).  A wrong direction, a race of the in-place update or a lost
 * boundary link shows as 1e-2 of the flow in fp64, and as O(1) in the lower precisions. */
static double tol_of(const char *storage)
{
    if (!strcmp(storage, "fp64")) return 1e-12;
    if (!strcmp(storage, "fp32")) return 1e-5;
    return 2e-2;
}

#define NF 3

typedef struct {
    double *f[NF];      /* u, v, w */
    double *pop[19];    /* populations as stored */
    int q;
    size_t n;
    double force[3];
} result;

static void run(const char *const *ov, int count, int steps, size_t cells, result *r)
{
    char *args[32];
    for (int i = 0; i < count; i++) args[i] = (char *)ov[i];
    args[count++] = "run.solver=cfd";
    args[count++] = "cfd.model=lbm";
    args[count++] = "output.format=none";
    args[count++] = "cfd.t_end=1e300";
    hs_params *p = NULL;
    TEST_OK(hs_params_load(NULL, count, args, &p));
    void *s = NULL;
    TEST_OK(hs_cfd_lbm.create(test_ctx(), p, &s));
    int64_t taken;
    TEST_OK(hs_cfd_lbm.advance(s, 1e300, steps, &taken));
    assert_int_equal((int)taken, steps);
    r->n = cells;
    static const int what[NF] = {HS_LBM_GATHER_U, HS_LBM_GATHER_V, HS_LBM_GATHER_W};
    for (int v = 0; v < NF; v++) {
        r->f[v] = calloc(cells, sizeof(double));
        TEST_OK(hs_lbm_gather(s, what[v], r->f[v]));
    }
    hs_lbm_units(s, NULL, NULL, NULL, NULL, &r->q);
    for (int q = 0; q < r->q; q++) {
        r->pop[q] = calloc(cells, sizeof(double));
        TEST_OK(hs_lbm_gather_population(s, q, r->pop[q]));
    }
    TEST_OK(hs_lbm_forces(s, r->force, NULL, NULL));
    hs_cfd_lbm.destroy(s);
    hs_params_free(p);
}

static double max_abs(const double *x, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++) m = fmax(m, fabs(x[i]));
    return m;
}

static double max_diff(const double *a, const double *b, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++) m = fmax(m, fabs(a[i] - b[i]));
    return m;
}

static void compare(const char *title, const result *gpu, const result *cpu, double tol)
{
    static const char *names[NF] = {"u", "v", "w"};
    double worst = 0, fscale = 0, uscale = 0;
    int bad = 0;
    for (int q = 0; q < cpu->q; q++) fscale = fmax(fscale, max_abs(cpu->pop[q], cpu->n));
    for (int q = 0; q < cpu->q; q++) {
        double rel = max_diff(gpu->pop[q], cpu->pop[q], cpu->n) / fscale;
        if (!(rel <= tol)) {
            print_error("%s: population %d differs by %.2e of the largest population (tolerance %.1e)\n", title, q, rel, tol);
            bad = 1;
        }
        worst = fmax(worst, rel);
    }
    for (int v = 0; v < NF; v++) uscale = fmax(uscale, max_abs(cpu->f[v], cpu->n));
    for (int v = 0; v < NF && uscale > 0; v++) {
        double rel = max_diff(gpu->f[v], cpu->f[v], cpu->n) / uscale;
        if (!(rel <= tol)) {
            print_error("%s: %s differs by %.2e of the largest speed (tolerance %.1e)\n", title, names[v], rel, tol);
            bad = 1;
        }
        worst = fmax(worst, rel);
    }
    double fs = fmax(fabs(cpu->force[0]), fmax(fabs(cpu->force[1]), fabs(cpu->force[2])));
    for (int a = 0; a < 3 && fs > 0; a++) {
        double rel = fabs(gpu->force[a] - cpu->force[a]) / fs;
        if (!(rel <= tol)) {
            print_error("%s: force component %d differs by %.2e\n", title, a, rel);
            bad = 1;
        }
        worst = fmax(worst, rel);
    }
    print_message("%s: largest |cuda - cpu| %.2e of the scale (tolerance %.1e)\n", title, worst, tol);
    assert_int_equal(bad, 0);
}

static void free_result(result *r)
{
    for (int v = 0; v < NF; v++) free(r->f[v]);
    for (int q = 0; q < r->q; q++) free(r->pop[q]);
}

/* The case on both backends, after 1 and after 40 steps, in each storage. */
static void twin(const char *title, const char *const *ov, int count, size_t cells)
{
    hs_ctx *ctx = test_ctx();
    const char *was = hs_device_name(ctx->device);
    static const char *const storages[3] = {"fp64", "fp32", "fp16"};
    for (int st = 0; st < 3; st++)
        for (int k = 0; k < 2; k++) {
            int steps = k == 0 ? 1 : 40;
            const char *args[32];
            for (int i = 0; i < count; i++) args[i] = ov[i];
            char sb[32];
            snprintf(sb, sizeof sb, "lbm.storage=%s", storages[st]);
            args[count] = sb;
            result cpu, gpu;
            TEST_OK(hs_ctx_set_device(ctx, "cpu", 1));
            run(args, count + 1, steps, cells, &cpu);
            TEST_OK(hs_ctx_set_device(ctx, "cuda", 1));
            run(args, count + 1, steps, cells, &gpu);
            TEST_OK(hs_ctx_set_device(ctx, was, 1));
            char what[200];
            snprintf(what, sizeof what, "%s, %s, %d step%s", title, storages[st], steps, steps > 1 ? "s" : "");
            compare(what, &gpu, &cpu, tol_of(storages[st]));
            free_result(&cpu);
            free_result(&gpu);
        }
}

static void test_cavity_2d(void **st)
{
    (void)st;
    const char *ov[] = {"cfd.ndim=2", "cfd.n=37 29", "cfd.length=1 0.78378378378378378", "lbm.nu=0.01", "lbm.u_ref=1", "lbm.u_lattice=0.1",
                        "lbm.collision=bgk", "lbm.boundary=wall wall wall lid"};
    twin("D2Q9 BGK cavity", ov, 8, 37 * 29);
}

static void test_cylinder_2d(void **st)
{
    (void)st;
    const char *ov[] = {"cfd.ndim=2", "cfd.n=66 21", "cfd.length=2.2 0.7", "lbm.nu=2e-3", "lbm.u_ref=0.3", "lbm.u_lattice=0.08",
                        "lbm.collision=trt", "lbm.boundary=inlet outlet wall wall", "lbm.obstacle=cylinder", "lbm.obstacle_center=0.4 0.33",
                        "lbm.obstacle_radius=0.13", "lbm.force=0.01 0.02"};
    twin("D2Q9 TRT cylinder (inlet, outlet, Bouzidi, force)", ov, 12, 66 * 21);
}

static void test_sphere_3d(void **st)
{
    (void)st;
    const char *ov[] = {"cfd.ndim=3", "cfd.n=24 13 14", "cfd.length=1.2 0.65 0.7", "lbm.nu=2e-3", "lbm.u_ref=0.2", "lbm.u_lattice=0.08",
                        "lbm.collision=trt", "lbm.boundary=inlet outlet periodic periodic wall wall", "lbm.obstacle=sphere",
                        "lbm.obstacle_center=0.4 0.3 0.36", "lbm.obstacle_radius=0.15"};
    twin("D3Q19 TRT sphere (inlet, outlet, periodic y, Bouzidi)", ov, 11, 24 * 13 * 14);
}

static void test_lid_3d(void **st)
{
    (void)st;
    const char *ov[] = {"cfd.ndim=3", "cfd.n=15 12 11", "cfd.length=1.5 1.2 1.1", "lbm.nu=0.01", "lbm.u_ref=1", "lbm.u_lattice=0.1",
                        "lbm.collision=bgk", "lbm.boundary=periodic periodic wall lid wall wall"};
    twin("D3Q19 BGK lid, periodic x", ov, 8, 15 * 12 * 11);
}

/* Rows long enough that whole warps of bulk cells take the fp16 D2Q9 kernel's two-cells-per-thread
 * path (64 cells a warp), beside warps at walls and row ends that do not (D3Q19: the same long rows
 * through the one-cell kernel).  An obstacle across the
 * boundary between the first two warps of a row makes the flow vary along x there, so that a
 * population taken from the wrong neighbour shows (D3Q19 fp16: across the staged kernel's blocks).  Periodic x: the steps' boxes start one or two
 * cells into the ghost ring, so pairs start at odd cells as well; an odd row length leaves a lone
 * cell at the end. */
static void test_wide_rows(void **st)
{
    (void)st;
    const char *ov3[] = {"cfd.ndim=3", "cfd.n=160 12 12", "cfd.length=1.6 0.12 0.12", "lbm.nu=2e-3", "lbm.u_ref=0.2", "lbm.u_lattice=0.08",
                         "lbm.collision=trt", "lbm.boundary=periodic periodic periodic periodic wall wall", "lbm.force=0.5 0.1 0",
                         "lbm.obstacle=sphere", "lbm.obstacle_center=0.645 0.06 0.06", "lbm.obstacle_radius=0.04"};
    twin("D3Q19 TRT periodic channel, sphere, force, rows of 160", ov3, 12, 160 * 12 * 12);
    /* the fp16 D3Q19 kernel stages 128 cells a block: a sphere across the second block boundary of
     * rows of 300 (three blocks, the last partly outside the box) */
    const char *ov3b[] = {"cfd.ndim=3", "cfd.n=300 10 12", "cfd.length=3 0.1 0.12", "lbm.nu=2e-3", "lbm.u_ref=0.2", "lbm.u_lattice=0.08",
                          "lbm.collision=bgk", "lbm.boundary=periodic periodic periodic periodic wall wall", "lbm.force=0.5 0 0.1",
                          "lbm.obstacle=sphere", "lbm.obstacle_center=1.275 0.05 0.06", "lbm.obstacle_radius=0.035"};
    twin("D3Q19 BGK periodic channel, sphere across a block boundary, rows of 300", ov3b, 12, 300 * 10 * 12);
    const char *ov2[] = {"cfd.ndim=2", "cfd.n=131 24", "cfd.length=1.31 0.24", "lbm.nu=2e-3", "lbm.u_ref=0.2", "lbm.u_lattice=0.08",
                         "lbm.collision=trt", "lbm.boundary=periodic periodic wall wall", "lbm.force=0.5 0.1",
                         "lbm.obstacle=cylinder", "lbm.obstacle_center=0.645 0.12", "lbm.obstacle_radius=0.05"};
    twin("D2Q9 TRT periodic channel, cylinder, force, rows of 131", ov2, 12, 131 * 24);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_wide_rows),
    cmocka_unit_test(test_cavity_2d),
    cmocka_unit_test(test_cylinder_2d),
    cmocka_unit_test(test_sphere_3d),
    cmocka_unit_test(test_lid_3d),
};
#endif

int main(void)
{
#if HS_HAVE_CUDA
    if (hs_cuda_device_count() > 0) {
        if (hs_driver_declare() != HS_OK || hs_cfd_solver.declare() != HS_OK) return 1;
        return test_run_group("lbm_twin", tests, sizeof tests / sizeof tests[0]);
    }
    printf("SKIP: no GPU here: the CUDA kernels of the lbm model are not compared with their CPU twins\n");
#else
    printf("SKIP: built without CUDA: the lbm model has no CUDA twin to compare\n");
#endif
    return 77;
}
