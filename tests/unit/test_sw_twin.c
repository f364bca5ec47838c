/* The shallow_water model's CUDA kernels against their CPU twins: one step and twenty of each case, every diagnostic; skipped (77) without a GPU. */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/params.h"
#include "solvers/cfd/cfd.h"
#include "solvers/cfd/sw.h"

int hs_driver_declare(void);

#if HS_HAVE_CUDA

/* Both backends evaluate sw_point.h in the same order; the GPU contracts a*b + c into fused
 * multiply-adds, which moves the last bits of a term.  One step changes the state by dt times the
 * tendencies, so after one step the fields agree to a few ulps of their largest value, and the
 * derived ones (centred velocities, vorticity: differences over dx) to a few ulps times the ratio
 * of the velocity to the vorticity scale; ONE_TOL leaves a factor of about ten over that.  Twenty
 * steps of a jet, a vortex and waves let those differences grow only as the flow's own sensitivity
 * (growth rates of order 1 over t ~ 0.1): TWENTY_TOL.  A wrong stencil point or a race shows as
 * 1e-3 or more. */
#define ONE_TOL 1e-13
#define TWENTY_TOL 1e-11

#define NFIELDS 7

typedef struct {
    double *f[NFIELDS];
    size_t n[NFIELDS];
    double tot[3];
} result;

static void run(const char *const *ov, int count, int steps, int nx, int ny, int walls, result *r)
{
    char *args[24];
    for (int i = 0; i < count; i++) args[i] = (char *)ov[i];
    args[count++] = "run.solver=cfd";
    args[count++] = "cfd.model=shallow_water";
    args[count++] = "output.format=none";
    hs_params *p = NULL;
    TEST_OK(hs_params_load(NULL, count, args, &p));
    void *s = NULL;
    TEST_OK(hs_cfd_shallow_water.create(test_ctx(), p, &s));
    int64_t taken;
    for (int k = 0; k < steps; k++) TEST_OK(hs_cfd_shallow_water.advance(s, 1e300, 1, &taken));
    const size_t cells = (size_t)nx * ny;
    for (int v = 0; v < NFIELDS; v++) {
        r->n[v] = v == HS_SW_GATHER_V_FACE ? (size_t)nx * (ny + walls) : cells;
        r->f[v] = calloc(r->n[v], sizeof(double));
        TEST_OK(hs_sw_gather(s, v, r->f[v]));
    }
    TEST_OK(hs_sw_totals(s, &r->tot[0], &r->tot[1], &r->tot[2]));
    hs_cfd_shallow_water.destroy(s);
    hs_params_free(p);
}

static double max_abs(const double *x, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++) m = fmax(m, fabs(x[i]));
    return m;
}

/* The largest difference of each field relative to the field's largest value; fails above tol. */
static void compare(const char *title, const result *gpu, const result *cpu, double tol)
{
    static const char *names[NFIELDS] = {"h", "u (faces)", "v (faces)", "u (centres)", "v (centres)", "vorticity", "b"};
    double worst = 0;
    int bad = 0;
    for (int v = 0; v < NFIELDS; v++) {
        double scale = max_abs(cpu->f[v], cpu->n[v]), e = 0;
        for (size_t i = 0; i < cpu->n[v]; i++) e = fmax(e, fabs(gpu->f[v][i] - cpu->f[v][i]));
        double rel = scale > 0 ? e / scale : e;
        if (!(rel <= tol)) {
            print_error("%s: %s differs by %.2e of its largest value (tolerance %.1e)\n", title, names[v], rel, tol);
            bad = 1;
        }
        worst = fmax(worst, rel);
    }
    for (int i = 0; i < 3; i++) {
        double rel = fabs(gpu->tot[i] - cpu->tot[i]) / fabs(cpu->tot[i]);
        if (!(rel <= tol)) {
            print_error("%s: total %d differs by %.2e\n", title, i, rel);
            bad = 1;
        }
        worst = fmax(worst, rel);
    }
    print_message("%s: largest |cuda - cpu| %.2e of the field's scale (tolerance %.1e)\n", title, worst, tol);
    assert_int_equal(bad, 0);
}

static void free_result(result *r)
{
    for (int v = 0; v < NFIELDS; v++) free(r->f[v]);
}

static void twin(const char *title, const char *const *ov, int count, int nx, int ny, int walls)
{
    hs_ctx *ctx = test_ctx();
    const char *was = hs_device_name(ctx->device);
    for (int k = 0; k < 2; k++) {
        int steps = k == 0 ? 1 : 20;
        result cpu, gpu;
        TEST_OK(hs_ctx_set_device(ctx, "cpu", 1));
        run(ov, count, steps, nx, ny, walls, &cpu);
        TEST_OK(hs_ctx_set_device(ctx, "cuda", 1));
        run(ov, count, steps, nx, ny, walls, &gpu);
        TEST_OK(hs_ctx_set_device(ctx, was, 1));
        char what[160];
        snprintf(what, sizeof what, "%s, %d step%s", title, steps, steps > 1 ? "s" : "");
        compare(what, &gpu, &cpu, k == 0 ? ONE_TOL : TWENTY_TOL);
        free_result(&cpu);
        free_result(&gpu);
    }
}

static void test_periodic_jet(void **st)
{
    (void)st;
    const char *ov[] = {"cfd.n=67 45", "cfd.length=1.5 1", "shallow_water.case=jet", "shallow_water.f0=5", "shallow_water.jet_width=0.07",
                        "shallow_water.perturbation=0.05", "shallow_water.topography=random", "shallow_water.nu4=1e-7", "cfd.dt=0.003"};
    twin("periodic jet, random bottom, hyperviscosity", ov, 9, 67, 45, 0);
}

static void test_beta_channel(void **st)
{
    (void)st;
    const char *ov[] = {"cfd.n=50 38", "shallow_water.case=vortex", "shallow_water.y_boundary=walls", "shallow_water.beta=10", "shallow_water.f0=8",
                        "shallow_water.topography=bump", "shallow_water.nu=2e-4", "cfd.dt=0.004"};
    twin("vortex in a beta channel, bump, viscosity", ov, 8, 50, 38, 1);
}

/* both friction terms at the walls, on a grid that is no multiple of the CUDA kernel's tiles */
static void test_channel_friction(void **st)
{
    (void)st;
    const char *ov[] = {"cfd.n=70 37", "cfd.length=1.9 1", "shallow_water.case=jet", "shallow_water.y_boundary=walls", "shallow_water.f0=6",
                        "shallow_water.beta=4", "shallow_water.jet_width=0.08", "shallow_water.perturbation=0.05", "shallow_water.topography=random",
                        "shallow_water.nu=1e-4", "shallow_water.nu4=1e-8", "cfd.dt=0.003"};
    twin("jet in a channel, random bottom, viscosity and hyperviscosity", ov, 12, 70, 37, 1);
}

static void test_wave(void **st)
{
    (void)st;
    const char *ov[] = {"cfd.n=33 40", "shallow_water.case=wave", "shallow_water.wave_mode=3 -2", "shallow_water.wave_amplitude=0.05",
                        "shallow_water.f0=4", "cfd.dt=0.005"};
    twin("inertia-gravity wave", ov, 6, 33, 40, 0);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_periodic_jet),
    cmocka_unit_test(test_beta_channel),
    cmocka_unit_test(test_wave),
    cmocka_unit_test(test_channel_friction),
};
#endif

int main(void)
{
#if HS_HAVE_CUDA
    if (hs_cuda_device_count() > 0) {
        if (hs_driver_declare() != HS_OK || hs_cfd_solver.declare() != HS_OK) return 1;
        return test_run_group("sw_twin", tests, sizeof tests / sizeof tests[0]);
    }
    printf("SKIP: no GPU here: the CUDA kernels of the shallow-water model are not compared with their CPU twins\n");
#else
    printf("SKIP: built without CUDA: the shallow-water model has no CUDA twin to compare\n");
#endif
    return 77;
}
