/* The seismic solver's adjoint (acoustic, constant density, CPML): the dot-product test of the
 * forward map against its transpose, the Taylor test of the misfit gradient (remainders falling at
 * rates 1 and 2), the checkpointing's cost and independence of the slot count, and a few L-BFGS
 * iterations of full-waveform inversion that reduce the misfit of a disc anomaly. */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/params.h"
#include "kernels/rng/rng.h"
#include "solvers/seismic/seismic.h"

int hs_driver_declare(void);

/* The geometry shared by every case: 2D, 8th order, CPML on every face; a source above a disc
 * anomaly, receivers below and beside it.  dt is given so that the modelled and observed samples
 * line up whatever the model. */
#define GEOMETRY                                                                                                     \
    "seismic.ndim=2", "seismic.n=71 61", "seismic.spacing=10", "seismic.pml=12", "seismic.f0=10", "seismic.dt=0.001", \
        "seismic.t_end=0.5", "seismic.vp=2000", "seismic.source_position=350 160", "seismic.receivers=line",         \
        "seismic.receiver_start=150 450", "seismic.receiver_end=550 450", "seismic.receiver_count=9"

static char g_observed[256];

static void *create(const char *const *extra, int n, hs_params **pp)
{
    const char *base[] = {"run.solver=seismic", "output.format=none", GEOMETRY};
    char *ov[48];
    int k = 0;
    for (size_t i = 0; i < sizeof base / sizeof base[0]; i++) ov[k++] = (char *)base[i];
    for (int i = 0; i < n; i++) ov[k++] = (char *)extra[i];
    TEST_OK(hs_params_load(NULL, k, ov, pp));
    void *s = NULL;
    TEST_OK(hs_seismic_solver.create(test_ctx(), *pp, &s));
    return s;
}

/* The observed seismograms: the true model (a disc 150 m/s faster) run forward. */
static int setup(void **state)
{
    (void)state;
    const char *stem = test_tmp_path("observed");
    char seis[300];
    snprintf(seis, sizeof seis, "seismic.seismograms=%s", stem);
    snprintf(g_observed, sizeof g_observed, "%s%s", stem, TEST_AUTO_EXT);
    const char *ov[] = {seis, "seismic.segy=false", "seismic.precision=float64", "seismic.anomaly=disc",
                        "seismic.anomaly_center=350 300", "seismic.anomaly_radius=90", "seismic.anomaly_dvp=150"};
    hs_params *p;
    void *s = create(ov, 7, &p);
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
    return 0;
}

static void *gradient_state(const char *precision, const char *snapshots, hs_params **p)
{
    char obs[300];
    snprintf(obs, sizeof obs, "seismic.observed=%s", g_observed);
    const char *ov[] = {"seismic.mode=gradient", obs, precision, snapshots, "seismic.seismograms=none"};
    return create(ov, 5, p);
}

/* <F s, d> = <s, F^T d> for random s and d: 1e-12 in fp64, 1e-6 in fp32. */
static void test_dot_product(void **state)
{
    (void)state;
    const char *prec[2] = {"seismic.precision=float64", "seismic.precision=float32"};
    const double tol[2] = {1e-12, 1e-6};
    for (int q = 0; q < 2; q++) {
        hs_params *p;
        void *s = gradient_state(prec[q], "seismic.snapshots=4", &p);
        double dt, lim;
        int64_t N;
        hs_seismic_time_step(s, &dt, &lim, &N);
        int64_t ns = N + 1, nrec = 9;
        double *src = malloc((size_t)N * sizeof *src), *srcT = malloc((size_t)N * sizeof *srcT);
        double *dat = malloc((size_t)(ns * nrec) * sizeof *dat), *Fs = malloc((size_t)(ns * nrec) * sizeof *Fs);
        test_fill_f64(src, (size_t)N, 11, -1, 1);
        test_fill_f64(dat, (size_t)(ns * nrec), 12, -1, 1);
        TEST_OK(hs_seismic_forward_op(s, src, Fs));
        TEST_OK(hs_seismic_adjoint_op(s, dat, srcT));
        long double a = 0, b = 0;
        for (int64_t i = 0; i < ns * nrec; i++) a += (long double)Fs[i] * dat[i];
        for (int64_t i = 0; i < N; i++) b += (long double)src[i] * srcT[i];
        double rel = (double)fabsl(a - b) / (double)fabsl(a);
        if (test_ctx()->rank == 0)
            printf("dot-product test, %s: <F s, d> = %.15e, <s, F^T d> = %.15e, relative difference %.2e (tolerance %.0e)\n",
                   q ? "fp32" : "fp64", (double)a, (double)b, rel, tol[q]);
        TEST_LE(rel, tol[q]);
        free(src), free(srcT), free(dat), free(Fs);
        hs_seismic_solver.destroy(s);
        hs_params_free(p);
    }
}

/* Taylor test from the background model along a smooth perturbation dm of the core (the CPML layers
 * and their reach, 12 + 4 + 1 points, keep their vp): r1(h) = |J(m + h dm) - J(m)| falls as h,
 * r2(h) = |J(m + h dm) - J(m) - h <g, dm>| as h^2, over five step sizes h = 1/2 .. 1/32 (four halvings). */
static void test_taylor(void **state)
{
    (void)state;
    hs_params *p;
    void *s = gradient_state("seismic.precision=float64", "seismic.snapshots=40", &p);
    const int64_t nx = 71, nz = 61, n = nx * nz;
    double *m = malloc((size_t)n * sizeof *m), *dm = malloc((size_t)n * sizeof *dm), *g = malloc((size_t)n * sizeof *g), *mh = malloc((size_t)n * sizeof *mh);
    for (int64_t k = 0; k < nz; k++)
        for (int64_t i = 0; i < nx; i++) {
            double x = i * 10.0, z = k * 10.0;
            int core = i >= 17 && i < nx - 17 && k >= 17 && k < nz - 17;
            m[k * nx + i] = 2000;
            dm[k * nx + i] = !core ? 0 : 15 * exp(-((x - 330) * (x - 330) + (z - 310) * (z - 310)) / (2 * 70.0 * 70.0)) +
                             6 * sin(x / 53.0) * cos(z / 41.0) * exp(-((x - 350) * (x - 350) + (z - 300) * (z - 300)) / (2 * 120.0 * 120.0));
        }
    double J0;
    TEST_OK(hs_seismic_misfit_gradient(s, m, &J0, g));
    double gdm = 0;
    for (int64_t i = 0; i < n; i++) gdm += g[i] * dm[i];
    double r1[5], r2[5];
    for (int e = 0; e < 5; e++) {
        double h = 1.0 / (2 << e), J;
        for (int64_t i = 0; i < n; i++) mh[i] = m[i] + h * dm[i];
        TEST_OK(hs_seismic_misfit_gradient(s, mh, &J, NULL));
        r1[e] = fabs(J - J0);
        r2[e] = fabs(J - J0 - h * gdm);
    }
    int ok = 1;
    for (int e = 0; e < 4; e++) {
        double o1 = log2(r1[e] / r1[e + 1]), o2 = log2(r2[e] / r2[e + 1]);
        if (test_ctx()->rank == 0)
            printf("Taylor test: h = 1/%-2d r1 = %.4e r2 = %.4e   rates %.3f %.3f\n", 2 << e, r1[e], r2[e], o1, o2);
        ok &= fabs(o1 - 1) < 0.1 && fabs(o2 - 2) < 0.1;
    }
    if (test_ctx()->rank == 0) printf("Taylor test: h = 1/32 r1 = %.4e r2 = %.4e (J = %.6e, <g, dm> = %.6e)\n", r1[4], r2[4], J0, gdm);
    assert_true(ok);
    free(m), free(dm), free(g), free(mh);
    hs_seismic_solver.destroy(s);
    hs_params_free(p);
}

/* The gradient does not depend on how many checkpoint slots the schedule has, and the forward steps
 * it recomputes stay within binomial checkpointing's bound: with s slots and r the fewest
 * repetitions with C(s + r, s) >= steps, at most r + 1 forward runs (the first sweep included).
 * With seismic.snapshots = 0 the test's small model fits one field per step: every step's
 * wavefield is kept, and the gradient takes one forward run and is bitwise the binomial schedules'. */
static void test_checkpointing(void **state)
{
    (void)state;
    enum { kRuns = 4 };
    const int nslots[kRuns] = {3, 8, 1000, 0};
    const int64_t n = 71 * 61;
    double *g[kRuns], J[kRuns];
    for (int q = 0; q < kRuns; q++) {
        char sl[48];
        snprintf(sl, sizeof sl, "seismic.snapshots=%d", nslots[q]);
        hs_params *p;
        void *s = gradient_state("seismic.precision=float64", sl, &p);
        g[q] = malloc((size_t)n * sizeof *g[q]);
        TEST_OK(hs_seismic_misfit_gradient(s, NULL, &J[q], g[q]));
        int64_t adv, rev, steps;
        int ns;
        double dt, lim;
        hs_seismic_adjoint_counts(s, &adv, &rev, &ns);
        hs_seismic_time_step(s, &dt, &lim, &steps);
        assert_int_equal(rev, steps);
        if (nslots[q] == 0) {
            if (test_ctx()->rank == 0)
                printf("every step's wavefield kept: %lld forward steps and %lld adjoint steps for %lld steps\n", (long long)adv,
                       (long long)rev, (long long)steps);
            assert_int_equal(ns, 0);
            assert_int_equal(adv, steps);
        } else {
            int r = 0;
            double b = 1;
            while (b < (double)steps) { /* b = C(ns + r, ns) */
                r++;
                b = b * (ns + r) / r;
            }
            if (test_ctx()->rank == 0)
                printf("checkpointing with %4d slots: %lld forward steps (%.2f runs; bound %d) and %lld adjoint steps for %lld steps\n",
                       ns, (long long)adv, (double)adv / (double)steps, r + 1, (long long)rev, (long long)steps);
            assert_true(ns > 0);
            assert_true(adv <= (int64_t)(r + 1) * steps);
        }
        hs_seismic_solver.destroy(s);
        hs_params_free(p);
    }
    double e = 0, mx = 0;
    for (int64_t i = 0; i < n; i++) {
        for (int q = 0; q < kRuns; q++) e = fmax(e, fabs(g[q][i] - g[2][i]));
        mx = fmax(mx, fabs(g[2][i]));
    }
    if (test_ctx()->rank == 0)
        printf("gradients with 3, 8 and all slots and with every step kept: max difference %.2e of the largest\n", e / mx);
    assert_true(e == 0);
    for (int q = 0; q < kRuns; q++) assert_true(J[q] == J[2]);
    for (int q = 0; q < kRuns; q++) free(g[q]);
}

/* Four L-BFGS iterations from the background model reduce the misfit of the disc anomaly, and raise
 * vp where the disc is. */
static void test_fwi(void **state)
{
    (void)state;
    char obs[300];
    snprintf(obs, sizeof obs, "seismic.observed=%s", g_observed);
    const char *ov[] = {"seismic.mode=fwi", obs, "seismic.precision=float64", "seismic.fwi_iterations=4",
                        "seismic.fwi_vp_step=50", "seismic.seismograms=none"};
    hs_params *p;
    void *s = create(ov, 6, &p);
    /* the iterations are the steps of the driver's time axis */
    double t, te, w;
    int64_t st, taken;
    hs_seismic_solver.progress(s, &t, &st, &te, &w);
    while (t < te) {
        TEST_OK(hs_seismic_solver.advance(s, te, 1 << 30, &taken));
        hs_seismic_solver.progress(s, &t, &st, &te, &w);
    }
    double J0, J;
    const double *vp;
    hs_seismic_fwi_result(s, &J0, &J, &vp);
    double inside = 0, outside = 0;
    int ni = 0, no = 0;
    for (int64_t k = 0; k < 61; k++)
        for (int64_t i = 0; i < 71; i++) {
            double r = hypot(i * 10.0 - 350, k * 10.0 - 300), dv = vp[k * 71 + i] - 2000;
            if (r < 60) inside += dv, ni++;
            else if (r > 150) outside += fabs(dv), no++;
        }
    if (test_ctx()->rank == 0)
        printf("fwi: misfit %.4e -> %.4e (%.3f); mean vp change %+.1f m/s inside the disc, %.1f m/s (|.|) far from it\n", J0, J,
               J / J0, inside / ni, outside / no);
    TEST_LE(J / J0, 0.5);
    assert_true(inside / ni > 10);
    hs_seismic_solver.destroy(s);
    hs_params_free(p);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_dot_product),
    cmocka_unit_test(test_taylor),
    cmocka_unit_test(test_checkpointing),
    cmocka_unit_test_teardown(test_fwi, test_tmp_cleanup),
};

int main(void)
{
    hs_driver_declare();
    hs_seismic_solver.declare();
    setup(NULL);
    return test_run_group("seismic_adjoint", tests, sizeof tests / sizeof tests[0]);
}
