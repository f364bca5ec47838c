/* The elastic seismic solver against exact solutions of a homogeneous medium (a point or line force:
 * the P and S waves' arrival times and amplitudes, whole waveforms with the near field), its CPML
 * against a larger domain, and (with HS_TEST_VALIDATE=1) Lamb's problem: a vertical force on the
 * free surface of a Poisson solid. */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/params.h"
#include "physics/seismic_exact.h"
#include "solvers/seismic/seismic.h"

int hs_driver_declare(void);

typedef struct {
    int64_t ns, nrec;
    int ncomp;
    double dt;
    double *d; /* ns x (ncomp nrec), time-major; component c of receiver r in column c nrec + r */
} traces;

static void run(const char *const *over, int count, traces *tr)
{
    char *ov[48];
    int n = 0;
    ov[n++] = "run.solver=seismic";
    ov[n++] = "output.format=none";
    ov[n++] = "seismic.seismograms=none";
    ov[n++] = "seismic.precision=float64";
    ov[n++] = "seismic.model=elastic";
    for (int i = 0; i < count; i++) ov[n++] = (char *)over[i];
    hs_params *p = NULL;
    TEST_OK(hs_params_load(NULL, n, ov, &p));
    void *s = NULL;
    TEST_OK(hs_seismic_solver.create(test_ctx(), p, &s));
    double t, t_end, work;
    int64_t step, taken;
    hs_seismic_solver.progress(s, &t, &step, &t_end, &work);
    while (t < t_end) {
        TEST_OK(hs_seismic_solver.advance(s, t_end, 1 << 30, &taken));
        hs_seismic_solver.progress(s, &t, &step, &t_end, &work);
    }
    TEST_OK(hs_seismic_traces(s, &tr->ns, &tr->nrec, &tr->ncomp, &tr->dt, &tr->d));
    hs_seismic_solver.destroy(s);
    hs_params_free(p);
}

static double at(const traces *tr, int64_t t, int comp, int64_t r) { return tr->d[t * tr->nrec * tr->ncomp + comp * tr->nrec + r]; }

/* The largest |v| (over the components) in a window of times, and its time. */
static void peak(const double *v0, const double *v1, int64_t n, double dt, double t0, double t1, double *amp, double *when)
{
    *amp = 0, *when = 0;
    for (int64_t i = 0; i < n; i++) {
        double t = (double)i * dt, a = hypot(v0[i], v1[i]);
        if (t >= t0 && t <= t1 && a > *amp) *amp = a, *when = t;
    }
}

#define VP 3000.0
#define VS 1732.0508075688772 /* a Poisson solid: vp / vs = sqrt(3) */
#define RHO 2000.0

/* 2D P-SV, 4th order, a vertical line force; receivers 450 m away at 30, 45 and 60 degrees from the
 * force, where the P and S pulses are apart: each pulse's peak time within one sample and its
 * amplitude within 2% of the exact solution's, the whole waveforms (vx, vz) within 3%. */
static void test_force_2d(void **state)
{
    (void)state;
    const hs_wavelet wl = {HS_WAVELET_RICKER, 10.0, 1.5 / 10.0, 1.0};
    const double src[2] = {700, 700}, ang[3] = {30, 45, 60}, r = 450;
    char rfile[64], rline[3][64];
    snprintf(rfile, sizeof rfile, "%s", test_tmp_path("receivers.txt"));
    FILE *f = test_ctx()->rank == 0 ? fopen(rfile, "w") : NULL;
    for (int q = 0; q < 3; q++) {
        double th = ang[q] * M_PI / 180;
        snprintf(rline[q], sizeof rline[q], "a%d %.6f %.6f\n", (int)ang[q], src[0] + r * sin(th), src[1] + r * cos(th));
        if (f) fputs(rline[q], f);
    }
    if (f) fclose(f);
    TEST_OK(hs_host_barrier(test_ctx()->comm));
    char recf[96];
    snprintf(recf, sizeof recf, "seismic.receiver_file=%s", rfile);
    const char *ov[] = {"seismic.ndim=2", "seismic.n=141 141", "seismic.spacing=10", "seismic.pml=20", "seismic.vp=3000",
                        "seismic.vs=1732.0508075688772", "seismic.rho=2000", "seismic.f0=10", "seismic.cfl=0.5",
                        "seismic.t_end=0.56", "seismic.source_type=force", "seismic.force=0 1",
                        "seismic.source_position=700 700", "seismic.receivers=file", recf};
    traces tr;
    run(ov, 15, &tr);
    double *e0 = malloc((size_t)tr.ns * sizeof *e0), *e1 = malloc((size_t)tr.ns * sizeof *e1);
    double *n0 = malloc((size_t)tr.ns * sizeof *n0), *n1 = malloc((size_t)tr.ns * sizeof *n1), worst = 0;
    const double dir[2] = {0, 1};
    for (int q = 0; q < 3; q++) {
        double th = ang[q] * M_PI / 180, x[2] = {r * sin(th), r * cos(th)}, err = 0, ref = 0;
        for (int64_t t = 0; t < tr.ns; t++) {
            double v[2];
            hs_elastic_force_velocity_2d(&wl, VP, VS, RHO, dir, x, (double)t * tr.dt, v);
            e0[t] = v[0], e1[t] = v[1];
            n0[t] = at(&tr, t, 0, q), n1[t] = at(&tr, t, 1, q);
            err += (n0[t] - e0[t]) * (n0[t] - e0[t]) + (n1[t] - e1[t]) * (n1[t] - e1[t]);
            ref += e0[t] * e0[t] + e1[t] * e1[t];
        }
        double mis = sqrt(err / ref);
        worst = fmax(worst, mis);
        /* the pulses: P around t0 + r/vp, S around t0 + r/vs, half a period either side */
        const char *wave[2] = {"P", "S"};
        for (int w = 0; w < 2; w++) {
            double tc = wl.delay + r / (w ? VS : VP), a_n, t_n, a_e, t_e;
            peak(n0, n1, tr.ns, tr.dt, tc - 0.05, tc + 0.05, &a_n, &t_n);
            peak(e0, e1, tr.ns, tr.dt, tc - 0.05, tc + 0.05, &a_e, &t_e);
            if (test_ctx()->rank == 0)
                printf("2D force, %2.0f deg, %s: peak %.4e at %.4f s, exact %.4e at %.4f s (amplitude %+.2f%%)\n", ang[q], wave[w],
                       a_n, t_n, a_e, t_e, 100 * (a_n / a_e - 1));
            TEST_LE(fabs(a_n / a_e - 1), 0.02);
            TEST_LE(fabs(t_n - t_e), 1.01 * tr.dt);
        }
        if (test_ctx()->rank == 0) printf("2D force, %2.0f deg: waveform misfit %.2e\n", ang[q], mis);
    }
    TEST_LE(worst, 0.03);
    free(e0), free(e1), free(n0), free(n1), free(tr.d);
}

/* 3D, 4th order, an oblique point force; receivers 80-130 m away (near field included): the
 * waveforms of all three components within 3%. */
static void test_force_3d(void **state)
{
    (void)state;
    const hs_wavelet wl = {HS_WAVELET_RICKER, 10.0, 1.5 / 10.0, 1.0};
    const double a[3] = {200, 200, 310.7}, b[3] = {281.3, 291.9, 200}, src[3] = {200, 200, 200};
    const double dir[3] = {0.6, 0, 0.8};
    const char *ov[] = {"seismic.ndim=3", "seismic.n=41", "seismic.spacing=10", "seismic.pml=8", "seismic.vp=3000",
                        "seismic.vs=1732.0508075688772", "seismic.rho=2000", "seismic.f0=10", "seismic.cfl=0.5",
                        "seismic.t_end=0.25", "seismic.source_type=force", "seismic.force=0.6 0 0.8",
                        "seismic.source_position=200 200 200", "seismic.receivers=line", "seismic.receiver_start=200 200 310.7",
                        "seismic.receiver_end=281.3 291.9 200", "seismic.receiver_count=3"};
    traces tr;
    run(ov, 17, &tr);
    double worst = 0;
    for (int q = 0; q < 3; q++) {
        double x[3], err = 0, ref = 0;
        for (int d = 0; d < 3; d++) x[d] = a[d] + 0.5 * q * (b[d] - a[d]) - src[d];
        for (int64_t t = 0; t < tr.ns; t++) {
            double v[3];
            hs_elastic_force_velocity_3d(&wl, VP, VS, RHO, dir, x, (double)t * tr.dt, 7, v);
            for (int c = 0; c < 3; c++) {
                double dn = at(&tr, t, c, q) - v[c];
                err += dn * dn, ref += v[c] * v[c];
            }
        }
        double mis = sqrt(err / ref);
        if (test_ctx()->rank == 0)
            printf("3D force, r = %5.1f m: waveform misfit %.2e\n", sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]), mis);
        worst = fmax(worst, mis);
    }
    TEST_LE(worst, 0.03);
    free(tr.d);
}

/* CPML: receivers 5 points from the layer, against the same geometry in a domain 40 points larger
 * on every side: what the layer reflects is at most 1% of the direct waves' peak. */
static void test_cpml(void **state)
{
    (void)state;
    const char *common[] = {"seismic.ndim=2", "seismic.spacing=10", "seismic.pml=15", "seismic.vp=3000", "seismic.vs=1500",
                            "seismic.f0=6", "seismic.cfl=0.5", "seismic.t_end=0.4", "seismic.source_type=moment",
                            "seismic.moment=0 0 1", "seismic.receivers=line", "seismic.receiver_count=5"};
    const char *small[15], *big[15];
    memcpy(small, common, sizeof common), memcpy(big, common, sizeof common);
    small[12] = "seismic.n=81 81", small[13] = "seismic.source_position=400 400";
    small[14] = "seismic.receiver_start=200 200";
    big[12] = "seismic.n=161 161", big[13] = "seismic.source_position=800 800";
    big[14] = "seismic.receiver_start=600 600";
    const char *s2[16], *b2[16];
    memcpy(s2, small, sizeof small), memcpy(b2, big, sizeof big);
    s2[15] = "seismic.receiver_end=200 600", b2[15] = "seismic.receiver_end=600 1000";
    traces a, b;
    run(s2, 16, &a);
    run(b2, 16, &b);
    double worst = 0;
    for (int r = 0; r < 5; r++) {
        double dmax = 0, pmax = 0;
        for (int64_t t = 0; t < a.ns; t++)
            for (int c = 0; c < 2; c++) {
                dmax = fmax(dmax, fabs(at(&a, t, c, r) - at(&b, t, c, r)));
                pmax = fmax(pmax, fabs(at(&b, t, c, r)));
            }
        worst = fmax(worst, dmax / pmax);
    }
    if (test_ctx()->rank == 0) printf("elastic CPML: largest reflection %.2e of the direct peak\n", worst);
    TEST_LE(worst, 0.01);
    free(a.d), free(b.d);
}

/* Lamb's problem (validation only): a vertical line force on the free surface of a Poisson solid
 * (vs 1000 m/s, h = 2.5 m: 14 points per S wavelength), the vertical surface displacement (the
 * integrated vz) at 150, 200 and 250 m against the exact half-space solution by wavenumber
 * integration (hs_lamb_line_displacement): misfit <= 5%. */
static void test_lamb(void **state)
{
    (void)state;
    if (!getenv("HS_TEST_VALIDATE")) {
        if (test_ctx()->rank == 0) printf("Lamb's problem: with HS_TEST_VALIDATE=1 only\n");
        return;
    }
    const hs_wavelet wl = {HS_WAVELET_RICKER, 10.0, 1.5 / 10.0, 1.0};
    const char *ov[] = {"seismic.ndim=2", "seismic.spacing=2.5", "seismic.n=361 201", "seismic.pml=40",
                        "seismic.free_surface=true", "seismic.t_end=0.55", "seismic.cfl=0.5",
                        "seismic.vp=1732.0508075688772", "seismic.vs=1000", "seismic.rho=2000", "seismic.f0=10",
                        "seismic.source_type=force", "seismic.force=0 1", "seismic.source_position=200 0",
                        "seismic.receivers=line", "seismic.receiver_start=350 0", "seismic.receiver_end=450 0",
                        "seismic.receiver_count=3"};
    traces tr;
    run(ov, 18, &tr);
    double *t = malloc((size_t)tr.ns * sizeof *t), *ref = malloc((size_t)tr.ns * sizeof *ref), worst = 0;
    for (int64_t i = 0; i < tr.ns; i++) t[i] = (double)i * tr.dt;
    for (int q = 0; q < 3; q++) {
        double x = 150 + 50.0 * q, err = 0, nrm = 0, u = 0, pn = 0, pr = 0;
        hs_lamb_line_displacement(&wl, 1732.0508075688772, 1000, 2000, 1.0, x, t, (int)tr.ns, ref);
        for (int64_t i = 0; i < tr.ns; i++) {
            if (i > 0) u += 0.5 * (at(&tr, i, 1, q) + at(&tr, i - 1, 1, q)) * tr.dt; /* displacement: the integrated vz */
            err += (u - ref[i]) * (u - ref[i]), nrm += ref[i] * ref[i];
            pn = fmax(pn, fabs(u)), pr = fmax(pr, fabs(ref[i]));
        }
        double m = sqrt(err / nrm);
        if (test_ctx()->rank == 0) printf("Lamb, x = %3.0f m: vertical displacement misfit %.2e, peak ratio %.4f\n", x, m, pn / pr);
        worst = fmax(worst, m);
    }
    TEST_LE(worst, 0.05);
    free(t), free(ref), free(tr.d);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_lamb),
    cmocka_unit_test_teardown(test_force_2d, test_tmp_cleanup),
    cmocka_unit_test(test_force_3d),
    cmocka_unit_test(test_cpml),
};

int main(void)
{
    hs_driver_declare();
    hs_seismic_solver.declare();
    return test_run_group("seismic_elastic", tests, sizeof tests / sizeof tests[0]);
}
