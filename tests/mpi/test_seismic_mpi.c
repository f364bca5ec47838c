/* MPI test of the seismic solver: on 1, 2 and 4 ranks the seismograms equal the one-rank run's (the
 * wavefield is bitwise the same; a receiver whose stencil straddles ranks sums their parts, which
 * may round differently), with splits that cut the CPML layers and the free surface. */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/params.h"
#include "solvers/seismic/seismic.h"

int hs_driver_declare(void);

/* The test context restricted to this rank: the one-rank reference inside a run of any size. */
static hs_ctx *self_ctx(void)
{
    static hs_ctx self;
    static int made;
    if (!made) {
        self = *test_ctx();
        self.comm = MPI_COMM_SELF;
        self.rank = 0;
        self.size = 1;
        self.owns_mpi = 0;
        made = 1;
    }
    return &self;
}

static int g_columns; /* the last run_case's CPML by columns (hs_seismic_cpml_columns) */

static double *run_case(hs_ctx *ctx, const char *const *over, int count, const char *procs, int64_t *n)
{
    char *ov[40];
    int k = 0;
    ov[k++] = "run.solver=seismic";
    ov[k++] = "output.format=none";
    ov[k++] = "seismic.seismograms=none";
    for (int i = 0; i < count; i++) ov[k++] = (char *)over[i];
    if (procs) ov[k++] = (char *)procs;
    hs_params *p = NULL;
    TEST_OK(hs_params_load(NULL, k, ov, &p));
    void *s = NULL;
    TEST_OK(hs_seismic_solver.create(ctx, p, &s));
    g_columns = hs_seismic_cpml_columns(s);
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

/* procs_fmt: a printf format of the split given the rank count (NULL: automatic). */
static void compare_case(const char *name, const char *const *ov, int count, const char *procs_fmt, double tol)
{
    hs_ctx *ctx = test_ctx();
    char procs[64];
    if (procs_fmt) snprintf(procs, sizeof procs, procs_fmt, ctx->size);
    int64_t n, n1;
    double *d = run_case(ctx, ov, count, procs_fmt ? procs : NULL, &n);
    double r = 0;
    if (ctx->rank == 0) {
        double *d1 = run_case(self_ctx(), ov, count, NULL, &n1);
        assert_int_equal(n, n1);
        double e = 0, m = 0;
        for (int64_t i = 0; i < n; i++) e = fmax(e, fabs(d[i] - d1[i])), m = fmax(m, fabs(d1[i]));
        r = e / m;
        printf("%s on %d ranks against 1: max difference %.3e of the peak (%s)\n", name, ctx->size, r,
               memcmp(d, d1, (size_t)n * sizeof *d) ? "not bitwise" : "bitwise");
        fflush(stdout);
        free(d1);
    }
    free(d);
    /* every rank reaches the verdict */
    TEST_OK(hs_allreduce_max(ctx->comm, &r, 1));
    TEST_LE(r, tol);
}

static void test_acoustic_2d(void **state)
{
    (void)state;
    const char *ov[] = {"seismic.ndim=2", "seismic.n=61 57", "seismic.spacing=10", "seismic.pml=14", "seismic.f0=12",
                        "seismic.t_end=0.35", "seismic.precision=float64", "seismic.source_position=303 281",
                        "seismic.receivers=grid", "seismic.receiver_start=101.3 95.7", "seismic.receiver_step=77.7 93.1",
                        "seismic.receiver_count=5 4"};
    /* the split along x puts rank boundaries inside the CPML's reach (its memory is exchanged) */
    compare_case("2D acoustic, order 8, fp64, split in x", ov, 12, "seismic.procs=%d 1", 1e-12);
    compare_case("2D acoustic, order 8, fp64, automatic split", ov, 12, NULL, 1e-12);
}

/* A split whose rank boundaries stay out of the layers' reach (PSI is not exchanged): every rank
 * takes the CPML's terms by columns, and the seismograms are those of one rank. */
static void test_acoustic_columns(void **state)
{
    (void)state;
    const char *ov[] = {"seismic.ndim=2", "seismic.n=161 45", "seismic.spacing=10", "seismic.pml=10", "seismic.f0=12",
                        "seismic.t_end=0.3", "seismic.precision=float64", "seismic.source_position=803 221",
                        "seismic.receivers=line", "seismic.receiver_start=120.5 60.2", "seismic.receiver_end=1480.3 390.8",
                        "seismic.receiver_count=11"};
    hs_ctx *ctx = test_ctx();
    char procs[64];
    snprintf(procs, sizeof procs, "seismic.procs=%d 1", ctx->size);
    int64_t n;
    free(run_case(ctx, ov, 12, procs, &n));
    double least = -(double)g_columns; /* the least over the ranks, as the max of the negatives */
    TEST_OK(hs_allreduce_max(ctx->comm, &least, 1));
    assert_true(-least == 1.0); /* split in x at 40 points or more: out of the reach (10 + 5 + ghosts) */
    compare_case("2D acoustic, order 8, fp64, CPML by columns on every rank, split in x", ov, 12, "seismic.procs=%d 1", 1e-12);
}

/* Grids whose two layers' ranges of columns merge into one, split through it (review of session 17:
 * the columns beside the split read the ghosts before the halo exchange ended; such splits now take
 * the two passes): against one rank, orders 2 and 8, split in x and in z. */
static void test_acoustic_merged_split(void **state)
{
    (void)state;
    static const char *const cases[][4] = {
        {"seismic.order=2", "seismic.pml=10", "seismic.n=26 27", "seismic.source_position=123 130"},
        {"seismic.order=8", "seismic.pml=9", "seismic.n=37 38", "seismic.source_position=183 180"},
    };
    for (int c = 0; c < 2; c++) {
        const char *ov[] = {"seismic.ndim=2", "seismic.spacing=10", "seismic.f0=8", "seismic.t_end=0.3",
                            "seismic.precision=float64", "seismic.receivers=line", "seismic.receiver_count=7",
                            "seismic.receiver_start=20.5 30.2", "seismic.receiver_end=230.3 240.8",
                            cases[c][0], cases[c][1], cases[c][2], cases[c][3]};
        compare_case(c ? "2D acoustic, order 8, merged layer ranges, split in x" : "2D acoustic, order 2, merged layer ranges, split in x",
                     ov, 13, "seismic.procs=%d 1", 1e-12);
        compare_case(c ? "2D acoustic, order 8, merged layer ranges, split in z" : "2D acoustic, order 2, merged layer ranges, split in z",
                     ov, 13, "seismic.procs=1 %d", 1e-12);
    }
}

static void test_acoustic_variable_free(void **state)
{
    (void)state;
    const char *ov[] = {"seismic.ndim=2", "seismic.n=64 49", "seismic.spacing=10", "seismic.pml=14", "seismic.f0=12",
                        "seismic.t_end=0.3", "seismic.precision=float32", "seismic.density=variable",
                        "seismic.free_surface=true", "seismic.medium=layered", "seismic.layer_depths=205",
                        "seismic.layer_vp=1800 2600", "seismic.layer_rho=1500 2400", "seismic.source_position=317 63",
                        "seismic.receivers=line", "seismic.receiver_start=90 0", "seismic.receiver_end=540 53.3",
                        "seismic.receiver_count=9"};
    compare_case("2D acoustic, variable density, free surface, fp32, split in z", ov, 18, "seismic.procs=1 %d", 1e-5);
    compare_case("2D acoustic, variable density, free surface, fp32, split in x", ov, 18, "seismic.procs=%d 1", 1e-5);
}

static void test_acoustic_3d(void **state)
{
    (void)state;
    const char *ov[] = {"seismic.ndim=3", "seismic.n=29 27 25", "seismic.spacing=10", "seismic.pml=6", "seismic.order=4",
                        "seismic.f0=15", "seismic.t_end=0.15", "seismic.precision=float64",
                        "seismic.source_position=141 133 120", "seismic.receivers=line",
                        "seismic.receiver_start=70.5 60.2 80.1", "seismic.receiver_end=210.3 200.8 170.4",
                        "seismic.receiver_count=6"};
    compare_case("3D acoustic, order 4, fp64", ov, 13, NULL, 1e-12);
}

static void test_elastic(void **state)
{
    (void)state;
    const char *ov2[] = {"seismic.model=elastic", "seismic.ndim=2", "seismic.n=64 57", "seismic.spacing=10", "seismic.pml=14",
                         "seismic.vp=3000", "seismic.vs=1700", "seismic.f0=8", "seismic.t_end=0.25", "seismic.precision=float64",
                         "seismic.free_surface=true", "seismic.source_type=moment", "seismic.moment=1 -0.5 0.3",
                         "seismic.source_position=317 113", "seismic.receivers=line", "seismic.receiver_start=90 0",
                         "seismic.receiver_end=540 153.3", "seismic.receiver_count=8"};
    compare_case("2D elastic, moment tensor, free surface, fp64, split in x", ov2, 18, "seismic.procs=%d 1", 1e-12);
    compare_case("2D elastic, moment tensor, free surface, fp64, split in z", ov2, 18, "seismic.procs=1 %d", 1e-12);
    const char *ov3[] = {"seismic.model=elastic", "seismic.ndim=3", "seismic.n=29 27 33", "seismic.spacing=10", "seismic.pml=6",
                         "seismic.vp=3000", "seismic.vs=1700", "seismic.f0=10", "seismic.t_end=0.12", "seismic.precision=float32",
                         "seismic.source_type=force", "seismic.force=1 1 1", "seismic.source_position=141 133 160",
                         "seismic.receivers=line", "seismic.receiver_start=70.5 60.2 80.1",
                         "seismic.receiver_end=210.3 200.8 250.4", "seismic.receiver_count=5"};
    compare_case("3D elastic, point force, fp32", ov3, 17, NULL, 1e-5);
}

/* The adjoint gradient (forward sweep, transposed steps, exchanges of the adjoint CPML memory) on
 * the ranks, keeping every step's wavefield (snapshots = 0, the ranks agreeing that it fits), against
 * one rank with binomial checkpointing (5 slots). */
static void *gradient_state(hs_ctx *ctx, const char *stem, int observed, const char *procs, const char *snapshots, hs_params **p)
{
    char obs[300], seis[300];
    snprintf(obs, sizeof obs, "seismic.observed=%s%s", stem, TEST_AUTO_EXT);
    snprintf(seis, sizeof seis, "seismic.seismograms=%s", stem);
    const char *ov[] = {"run.solver=seismic", "output.format=none", "seismic.n=61 51", "seismic.spacing=10", "seismic.pml=14",
                        "seismic.precision=float64", "seismic.f0=12", "seismic.dt=0.001", "seismic.t_end=0.25",
                        "seismic.source_position=303 171", "seismic.receiver_start=150.5 380", "seismic.receiver_end=450.5 370",
                        "seismic.receiver_count=7", "seismic.segy=false", procs ? procs : "seismic.procs=0",
                        observed ? "seismic.anomaly=disc" : "seismic.mode=gradient", observed ? seis : obs,
                        /* the anomaly's shape for the observed run, the adjoint's slots for the gradient's
                         * (a key the run would not use is bad input) */
                        observed ? "seismic.anomaly_center=300 280" : snapshots, "seismic.anomaly_radius=80", "seismic.anomaly_dvp=150"};
    int n = (int)(sizeof ov / sizeof ov[0]) - (observed ? 0 : 2);
    TEST_OK(hs_params_load(NULL, n, (char *const *)ov, p));
    void *s = NULL;
    TEST_OK(hs_seismic_solver.create(ctx, *p, &s));
    return s;
}

static void test_adjoint(void **state)
{
    (void)state;
    hs_ctx *ctx = test_ctx();
    const char *stem = test_tmp_path("observed");
    hs_params *p;
    void *s = gradient_state(ctx, stem, 1, NULL, "seismic.snapshots=5", &p);
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
    const int64_t n = 61 * 51;
    char procs[64];
    snprintf(procs, sizeof procs, "seismic.procs=%d 1", ctx->size);
    double J, *g = malloc((size_t)n * sizeof *g), r[2] = {0, 0};
    s = gradient_state(ctx, stem, 0, procs, "seismic.snapshots=0", &p);
    TEST_OK(hs_seismic_misfit_gradient(s, NULL, &J, g));
    hs_seismic_solver.destroy(s);
    hs_params_free(p);
    if (ctx->rank == 0) {
        double J1, *g1 = malloc((size_t)n * sizeof *g1), e = 0, m = 0;
        s = gradient_state(self_ctx(), stem, 0, NULL, "seismic.snapshots=5", &p);
        TEST_OK(hs_seismic_misfit_gradient(s, NULL, &J1, g1));
        hs_seismic_solver.destroy(s);
        hs_params_free(p);
        for (int64_t i = 0; i < n; i++) e = fmax(e, fabs(g[i] - g1[i])), m = fmax(m, fabs(g1[i]));
        r[0] = e / m, r[1] = fabs(J - J1) / J1;
        printf("adjoint gradient, split in x, on %d ranks against 1: gradient %.3e of its largest, misfit %.3e\n", ctx->size, r[0], r[1]);
        free(g1);
    }
    free(g);
    TEST_OK(hs_allreduce_max(ctx->comm, r, 2));
    TEST_LE(r[0], 1e-12);
    TEST_LE(r[1], 1e-12);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test_teardown(test_adjoint, test_tmp_cleanup),
    cmocka_unit_test(test_elastic),
    cmocka_unit_test(test_acoustic_2d),
    cmocka_unit_test(test_acoustic_columns),
    cmocka_unit_test(test_acoustic_merged_split),
    cmocka_unit_test(test_acoustic_variable_free),
    cmocka_unit_test(test_acoustic_3d),
};

int main(void)
{
    hs_driver_declare();
    hs_seismic_solver.declare();
    return test_run_group("seismic_mpi", tests, sizeof tests / sizeof tests[0]);
}
