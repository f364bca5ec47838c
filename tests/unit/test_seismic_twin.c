/* The seismic solver's CUDA kernels against their CPU twins, through whole runs (seismograms) of every
 * model and option; skipped (77) without a GPU. */
#include "test_util.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/params.h"
#include "kernels/dispatch.h"
#include "solvers/seismic/seismic.h"

int hs_driver_declare(void);

typedef struct {
    const char *name;
    const char *over[24];
    double tol; /* max |cuda - cpu| over the peak of the seismograms */
} tcase;

/* Both backends do the same operations; the GPU contracts a*b + c into fma, which rounds
 * differently, and the difference grows slowly over the steps: fp64 cases agree to ~1e-13 of the
 * peak, fp32 to ~1e-5 (the tolerances leave an order of magnitude). */
static const tcase g_cases[] = {
    {"2D acoustic, order 8, fp64, CPML",
     {"seismic.ndim=2", "seismic.n=83 67", "seismic.pml=12", "seismic.precision=float64", "seismic.f0=12",
      "seismic.t_end=0.3", "seismic.source_position=411 323", "seismic.receiver_start=150.5 140.2",
      "seismic.receiver_end=700.7 500.1", "seismic.receiver_count=9", NULL},
     1e-11},
    {"2D acoustic, order 2, fp32, free surface",
     {"seismic.ndim=2", "seismic.n=83 67", "seismic.pml=12", "seismic.order=2", "seismic.precision=float32",
      "seismic.f0=8", "seismic.t_end=0.3", "seismic.free_surface=true", "seismic.source_position=411 43",
      "seismic.receiver_start=150.5 0", "seismic.receiver_end=700.7 100.1", "seismic.receiver_count=9", NULL},
     1e-4},
    {"2D acoustic, variable density, order 4, fp64",
     {"seismic.ndim=2", "seismic.n=83 67", "seismic.pml=12", "seismic.order=4", "seismic.precision=float64",
      "seismic.density=variable", "seismic.medium=layered", "seismic.layer_depths=355", "seismic.layer_vp=1800 2500",
      "seismic.layer_rho=1500 2300", "seismic.f0=12", "seismic.t_end=0.3", "seismic.source_position=411 223",
      "seismic.receiver_start=150.5 140.2", "seismic.receiver_end=700.7 500.1", "seismic.receiver_count=9", NULL},
     1e-11},
    {"3D acoustic, order 8, fp32 (tiled kernel), CPML",
     {"seismic.ndim=3", "seismic.n=45 39 37", "seismic.pml=8", "seismic.precision=float32", "seismic.f0=12",
      "seismic.t_end=0.15", "seismic.source_position=221 193 181", "seismic.receiver_start=100.5 90.2 95.3",
      "seismic.receiver_end=320.7 280.1 270.9", "seismic.receiver_count=7", NULL},
     1e-4},
    {"3D acoustic, order 4, fp64 (tiled kernel), variable density",
     {"seismic.ndim=3", "seismic.n=45 39 37", "seismic.pml=8", "seismic.order=4", "seismic.precision=float64",
      "seismic.density=variable", "seismic.f0=12", "seismic.t_end=0.15", "seismic.source_position=221 193 181",
      "seismic.receiver_start=100.5 90.2 95.3", "seismic.receiver_end=320.7 280.1 270.9", "seismic.receiver_count=7", NULL},
     1e-11},
    {"3D acoustic, order 2, fp64 (tiled kernel)",
     {"seismic.ndim=3", "seismic.n=45 39 37", "seismic.pml=8", "seismic.order=2", "seismic.precision=float64",
      "seismic.f0=8", "seismic.t_end=0.15", "seismic.source_position=221 193 181",
      "seismic.receiver_start=100.5 90.2 95.3", "seismic.receiver_end=320.7 280.1 270.9", "seismic.receiver_count=7", NULL},
     1e-11},
    {"2D elastic, order 4, fp64, moment tensor, free surface",
     {"seismic.model=elastic", "seismic.ndim=2", "seismic.n=83 67", "seismic.pml=12", "seismic.precision=float64",
      "seismic.vp=3000", "seismic.vs=1700", "seismic.f0=8", "seismic.t_end=0.25", "seismic.free_surface=true",
      "seismic.source_type=moment", "seismic.moment=1 -0.5 0.3", "seismic.source_position=411 153",
      "seismic.receiver_start=150.5 0", "seismic.receiver_end=700.7 300.1", "seismic.receiver_count=9", NULL},
     1e-11},
    {"3D elastic, order 2, fp32, point force",
     {"seismic.model=elastic", "seismic.ndim=3", "seismic.n=41 37 35", "seismic.pml=8", "seismic.order=2",
      "seismic.precision=float32", "seismic.vp=3000", "seismic.vs=1700", "seismic.f0=6", "seismic.t_end=0.12",
      "seismic.source_type=force", "seismic.force=1 1 1", "seismic.source_position=201 183 171",
      "seismic.receiver_start=100.5 90.2 95.3", "seismic.receiver_end=300.7 280.1 250.9", "seismic.receiver_count=7", NULL},
     1e-4},
    /* the core's updates in the tiled kernels; the free surface's two stress planes pointwise */
    {"3D elastic, order 4, fp64 (tiled core), layered, moment tensor, free surface",
     {"seismic.model=elastic", "seismic.ndim=3", "seismic.n=43 37 35", "seismic.pml=8", "seismic.precision=float64",
      "seismic.medium=layered", "seismic.layer_depths=125", "seismic.layer_vp=2600 3200", "seismic.layer_vs=1400 1800",
      "seismic.layer_rho=2000 2400", "seismic.f0=6", "seismic.t_end=0.12", "seismic.free_surface=true",
      "seismic.source_type=moment", "seismic.moment=1 -0.5 0.3 0.2 -0.1 0.4", "seismic.source_position=211 183 91",
      "seismic.receiver_start=100.5 90.2 0", "seismic.receiver_end=300.7 280.1 150.9", "seismic.receiver_count=7", NULL},
     1e-11},
    {"3D elastic, order 4, fp32 (tiled, CPML too), free surface, force",
     {"seismic.model=elastic", "seismic.ndim=3", "seismic.n=39 45 33", "seismic.pml=7", "seismic.precision=float32",
      "seismic.vp=2800", "seismic.vs=1500", "seismic.f0=6", "seismic.t_end=0.12", "seismic.free_surface=true",
      "seismic.source_type=force", "seismic.force=0.3 -1 0.6", "seismic.source_position=191 223 61",
      "seismic.receiver_start=90.5 80.2 0", "seismic.receiver_end=290.7 380.1 200.9", "seismic.receiver_count=7", NULL},
     1e-4},
    {"3D elastic, order 4, fp32 (tiled everywhere), no CPML",
     {"seismic.model=elastic", "seismic.ndim=3", "seismic.n=45 39 37", "seismic.pml=0", "seismic.precision=float32",
      "seismic.vp=3000", "seismic.vs=1700", "seismic.f0=6", "seismic.t_end=0.1", "seismic.source_type=explosive",
      "seismic.source_position=221 193 181", "seismic.receiver_start=100.5 90.2 95.3",
      "seismic.receiver_end=320.7 280.1 270.9", "seismic.receiver_count=7", NULL},
     1e-4},
};

static double *run(const tcase *c, int64_t *n)
{
    char *ov[40];
    int k = 0;
    ov[k++] = "run.solver=seismic";
    ov[k++] = "output.format=none";
    ov[k++] = "seismic.seismograms=none";
    ov[k++] = "seismic.spacing=10";
    for (int i = 0; c->over[i]; i++) ov[k++] = (char *)c->over[i];
    hs_params *p = NULL;
    TEST_OK(hs_params_load(NULL, k, ov, &p));
    void *s = NULL;
    TEST_OK(hs_seismic_solver.create(test_ctx(), p, &s));
    double t, t_end, work, dt, *d = NULL;
    int64_t step, taken, ns, nrec;
    int ncomp;
    hs_seismic_solver.progress(s, &t, &step, &t_end, &work);
    while (t < t_end) {
        TEST_OK(hs_seismic_solver.advance(s, t_end, 1 << 30, &taken));
        hs_seismic_solver.progress(s, &t, &step, &t_end, &work);
    }
    TEST_OK(hs_seismic_traces(s, &ns, &nrec, &ncomp, &dt, &d));
    *n = ns * nrec * ncomp;
    hs_seismic_solver.destroy(s);
    hs_params_free(p);
    return d;
}

static void test_seismic_twins(void **state)
{
    (void)state;
    hs_ctx *ctx = test_ctx();
    const char *was = hs_device_name(ctx->device);
    int nc = (int)(sizeof g_cases / sizeof g_cases[0]), bad = 0;
    double *cpu[16];
    int64_t ncpu[16];
    TEST_OK(hs_ctx_set_device(ctx, "cpu", 1));
    for (int i = 0; i < nc; i++) cpu[i] = run(&g_cases[i], &ncpu[i]);
    TEST_OK(hs_ctx_set_device(ctx, "cuda", 1));
    for (int i = 0; i < nc; i++) {
        int64_t n;
        double *gpu = run(&g_cases[i], &n), e = 0, m = 0;
        assert_int_equal(n, ncpu[i]);
        for (int64_t q = 0; q < n; q++) e = fmax(e, fabs(gpu[q] - cpu[i][q])), m = fmax(m, fabs(cpu[i][q]));
        int fine = m > 0 && e <= g_cases[i].tol * m;
        print_message("%-60s |cuda - cpu| %.2e of the peak %.3e (tolerance %.0e)%s\n", g_cases[i].name, e / m, m, g_cases[i].tol,
                      fine ? "" : "  FAIL");
        bad += !fine;
        free(gpu), free(cpu[i]);
    }
    TEST_OK(hs_ctx_set_device(ctx, was, 1));
    assert_int_equal(bad, 0);
}

/* The adjoint gradient (forward sweep, checkpoints, transposed steps with CPML) on both backends:
 * 2D (pointwise kernels), and 3D where the core's transposed step takes the tiled kernel (8th order
 * fp32, 4th order fp64). */
typedef struct {
    const char *label, *geometry[10];
    int64_t points;
    double tol;
} adjoint_case;

static const adjoint_case adjoint_cases[] = {
    {"2D, order 8, fp64",
     {"seismic.ndim=2", "seismic.n=71 61", "seismic.pml=12", "seismic.precision=float64", "seismic.source_position=350 160",
      "seismic.receiver_start=150.5 450", "seismic.receiver_end=550.5 430", "seismic.anomaly_center=350 300"},
     71 * 61, 1e-10},
    {"3D, order 8, fp32 (tiled)",
     {"seismic.ndim=3", "seismic.n=41 37 35", "seismic.pml=8", "seismic.precision=float32", "seismic.source_position=200 100 170",
      "seismic.receiver_start=100.5 270.5 170", "seismic.receiver_end=300.5 260.5 160", "seismic.anomaly_center=200 190 170",
      "seismic.t_end=0.2"},
     41 * 37 * 35, 1e-4},
    {"3D, order 4, fp64 (tiled)",
     {"seismic.ndim=3", "seismic.n=41 37 35", "seismic.pml=8", "seismic.order=4", "seismic.precision=float64",
      "seismic.source_position=200 100 170", "seismic.receiver_start=100.5 270.5 170", "seismic.receiver_end=300.5 260.5 160",
      "seismic.anomaly_center=200 190 170", "seismic.t_end=0.2"},
     41 * 37 * 35, 1e-10},
};

/* snapshots: the seismic.snapshots override (7: binomial checkpointing; 0: every step's p kept) */
static void *adjoint_state(const adjoint_case *c, const char *observed, const char *snapshots, int write_observed, hs_params **p)
{
    char obs[300], seis[300];
    snprintf(obs, sizeof obs, "seismic.observed=%s%s", observed, TEST_AUTO_EXT);
    snprintf(seis, sizeof seis, "seismic.seismograms=%s", observed);
    const char *ov[40] = {"run.solver=seismic", "output.format=none", "seismic.spacing=10", "seismic.f0=10", "seismic.dt=0.001",
                          "seismic.t_end=0.3", "seismic.receiver_count=9", "seismic.segy=false"};
    int n = 8;
    for (int i = 0; i < 10 && c->geometry[i]; i++)
        if (write_observed || strncmp(c->geometry[i], "seismic.anomaly_", 16) != 0) ov[n++] = c->geometry[i];
    /* the anomaly's shape for the observed run, the adjoint's slots for the gradient's: a key the run
     * would not use is bad input */
    if (write_observed) {
        ov[n++] = "seismic.anomaly=disc";
        ov[n++] = "seismic.anomaly_radius=90";
        ov[n++] = "seismic.anomaly_dvp=150";
        ov[n++] = seis;
    } else {
        ov[n++] = "seismic.mode=gradient";
        ov[n++] = snapshots;
        ov[n++] = obs;
    }
    TEST_OK(hs_params_load(NULL, n, (char *const *)ov, p));
    void *s = NULL;
    TEST_OK(hs_seismic_solver.create(test_ctx(), *p, &s));
    return s;
}

static void test_adjoint_twins(void **state)
{
    (void)state;
    hs_ctx *ctx = test_ctx();
    const char *was = hs_device_name(ctx->device);
    int bad = 0;
    for (size_t ci = 0; ci < sizeof adjoint_cases / sizeof adjoint_cases[0]; ci++) {
        const adjoint_case *c = &adjoint_cases[ci];
        const char *stem = test_tmp_path(ci == 0 ? "observed0" : ci == 1 ? "observed1" : "observed2");
        TEST_OK(hs_ctx_set_device(ctx, "cpu", 1));
        hs_params *p;
        void *s = adjoint_state(c, stem, "seismic.snapshots=7", 1, &p);
        double t, te, w;
        int64_t st, taken;
        hs_seismic_solver.progress(s, &t, &st, &te, &w);
        while (t < te) {
            TEST_OK(hs_seismic_solver.advance(s, te, 1 << 30, &taken));
            hs_seismic_solver.progress(s, &t, &st, &te, &w);
        }
        TEST_OK(hs_seismic_solver.finish(s));
        hs_seismic_solver.destroy(s);
        hs_params_free(p);
        /* the CPU with binomial checkpointing; the GPU with it and with every step's p kept */
        static const char *const device[3] = {"cpu", "cuda", "cuda"};
        static const char *const kept[3] = {"seismic.snapshots=7", "seismic.snapshots=7", "seismic.snapshots=0"};
        double J[3], *g[3];
        for (int b = 0; b < 3; b++) {
            TEST_OK(hs_ctx_set_device(ctx, device[b], 1));
            s = adjoint_state(c, stem, kept[b], 0, &p);
            g[b] = malloc((size_t)c->points * sizeof *g[b]);
            TEST_OK(hs_seismic_misfit_gradient(s, NULL, &J[b], g[b]));
            hs_seismic_solver.destroy(s);
            hs_params_free(p);
        }
        for (int b = 1; b < 3; b++) {
            double e = 0, m = 0;
            for (int64_t i = 0; i < c->points; i++) e = fmax(e, fabs(g[b][i] - g[0][i])), m = fmax(m, fabs(g[0][i]));
            const double dJ = fabs(J[b] - J[0]) / J[0];
            print_message("adjoint gradient %s, %s: |cuda - cpu| %.2e of its largest, misfit %.3e of the cpu's (tolerance %.0e)\n",
                          c->label, b == 1 ? "checkpointed" : "every step kept", e / m, dJ, c->tol);
            if (!(m > 0 && e / m <= c->tol && dJ <= c->tol)) bad++;
        }
        free(g[0]), free(g[1]), free(g[2]);
    }
    TEST_OK(hs_ctx_set_device(ctx, was, 1));
    assert_int_equal(bad, 0);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_seismic_twins),
    cmocka_unit_test_teardown(test_adjoint_twins, test_tmp_cleanup),
};

int main(void)
{
    /* the comparison needs both backends: without a GPU (or without CUDA in the build) nothing is compared */
    if (!HS_HAVE_CUDA || hs_cuda_device_count() == 0) {
        printf("SKIP: no CUDA device\n");
        return 77;
    }
    hs_driver_declare();
    hs_seismic_solver.declare();
    return test_run_group("seismic_twin", tests, sizeof tests / sizeof tests[0]);
}
