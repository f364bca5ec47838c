/* The elastic seismic solver against exact solutions of a homogeneous medium (a point or line force:
 * the P and S waves' arrival times and amplitudes, whole waveforms with the near field; the snapshots'
 * staggered coordinates and times), its CPML against a larger domain, and (with HS_TEST_VALIDATE=1) Lamb's problem: a vertical force on the
 * free surface of a Poisson solid. */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/output.h"
#include "io/params.h"
#include "kernels/comm/comm.h"
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

/* Run to t_end, writing one snapshot at the first step at or after t_snap through the writer (as the
 * driver does: describe_output, define_vars, write) into `path`; the traces of the whole run too.
 * *t_file: the snapshot's time. */
static void run_snapshot(const char *const *over, int count, double t_snap, const char *path, traces *tr)
{
    char *ov[48];
    int n = 0;
    ov[n++] = "run.solver=seismic";
    ov[n++] = "seismic.seismograms=none";
    ov[n++] = "seismic.precision=float64";
    ov[n++] = "seismic.model=elastic";
    for (int i = 0; i < count; i++) ov[n++] = (char *)over[i];
    hs_params *p = NULL;
    TEST_OK(hs_params_load(NULL, n, ov, &p));
    void *s = NULL;
    TEST_OK(hs_seismic_solver.create(test_ctx(), p, &s));
    hs_output_desc desc;
    memset(&desc, 0, sizeof desc);
    TEST_OK(hs_seismic_solver.describe_output(s, &desc));
    desc.path = path;
    desc.format = HS_HAVE_NETCDF ? HS_FORMAT_NETCDF : HS_FORMAT_HDF5;
    desc.history = "test_seismic_elastic";
    desc.time_units = "seconds since 2000-01-01 00:00:00";
    hs_writer *w = NULL;
    TEST_OK(hs_writer_open(test_ctx(), &desc, &w));
    TEST_OK(hs_seismic_solver.define_vars(s, w));
    double t, t_end, work;
    int64_t step, taken;
    int written = 0;
    hs_seismic_solver.progress(s, &t, &step, &t_end, &work);
    while (t < t_end) {
        TEST_OK(hs_seismic_solver.advance(s, written ? t_end : t_snap, 1 << 30, &taken));
        hs_seismic_solver.progress(s, &t, &step, &t_end, &work);
        if (!written && t >= t_snap * (1 - 1e-12)) {
            TEST_OK(hs_writer_begin_step(w, t));
            TEST_OK(hs_seismic_solver.write(s, w));
            written = 1;
        }
    }
    TEST_OK(hs_writer_close(w));
    TEST_OK(hs_seismic_traces(s, &tr->ns, &tr->nrec, &tr->ncomp, &tr->dt, &tr->d));
    hs_seismic_solver.destroy(s);
    hs_params_free(p);
}

/* A variable of the snapshot file (malloc'd), with its element count. */
static double *read_var(hs_reader *r, const char *name, int64_t *count)
{
    int64_t shape[8];
    int rank;
    TEST_OK(hs_reader_var_shape(r, name, shape, &rank));
    int64_t m = 1;
    for (int i = 0; i < rank; i++) m *= shape[i];
    double *v = malloc((size_t)m * sizeof *v);
    TEST_OK(hs_reader_read(r, name, v));
    if (count) *count = m;
    return v;
}

/* The elastic snapshots label each velocity at its own staggered points (vx on x_half = x + h/2, vz on
 * z_half = z + h/2) and hold it at the record's time (the mean of the half steps around it): against
 * the exact 2D line-force solution evaluated at the file's own coordinates and time, over an annulus
 * of points 100-450 m from the source, within 2%; read at the main points (x, z), as the files
 * labelled them before, the same values are several times further off (the test would not notice a
 * half-spacing error otherwise).  And each snapshot value equals the seismogram of a receiver put at
 * its labelled coordinates (a sample exact on a staggered point, the mean of the same half steps),
 * here and with a free surface and snapshot_stride = 2; writing the snapshot changes no trace. */
static void test_snapshot_points(void **state)
{
    (void)state;
    const hs_wavelet wl = {HS_WAVELET_RICKER, 10.0, 1.5 / 10.0, 1.0};
    const char *path = test_tmp_path(HS_HAVE_NETCDF ? "snap.nc" : "snap.h5");
    char rfile[64], recf[96];
    snprintf(rfile, sizeof rfile, "%s", test_tmp_path("snaprec.txt"));
    snprintf(recf, sizeof recf, "seismic.receiver_file=%s", rfile);
    /* receivers on labelled points: vx's (x_half, z) and vz's (x, z_half) of a few snapshot indices */
    static const int pick[4][2] = {{50, 60}, {61, 77}, {88, 70}, {70, 95}}; /* (i, k) of the decimated grid */
    for (int cfgi = 0; cfgi < 2; cfgi++) {
        const int stride = cfgi ? 2 : 1;
        const double h = 10;
        FILE *f = test_ctx()->rank == 0 ? fopen(rfile, "w") : NULL;
        for (int q = 0; q < 4; q++) {
            const double i = pick[q][0] / stride, k = pick[q][1] / stride;
            if (f) fprintf(f, "vx%d %.17g %.17g\nvz%d %.17g %.17g\n", q, (i * stride + 0.5) * h, k * stride * h, q, i * stride * h,
                           (k * stride + 0.5) * h);
        }
        if (f) fclose(f);
        TEST_OK(hs_host_barrier(test_ctx()->comm));
        char stride_kv[48];
        snprintf(stride_kv, sizeof stride_kv, "seismic.snapshot_stride=%d", stride);
        const char *ov0[] = {"seismic.ndim=2", "seismic.n=141 141", "seismic.spacing=10", "seismic.pml=20", "seismic.vp=3000",
                             "seismic.vs=1732.0508075688772", "seismic.rho=2000", "seismic.f0=10", "seismic.cfl=0.5",
                             "seismic.t_end=0.3", "seismic.source_type=force", "seismic.force=0 1",
                             "seismic.source_position=700 700", "seismic.receivers=file", recf, stride_kv};
        const char *ov1[] = {"seismic.ndim=2", "seismic.n=141 141", "seismic.spacing=10", "seismic.pml=20", "seismic.vp=3000",
                             "seismic.vs=1732.0508075688772", "seismic.rho=2000", "seismic.f0=10", "seismic.cfl=0.5",
                             "seismic.t_end=0.3", "seismic.source_type=force", "seismic.force=1 2", "seismic.free_surface=true",
                             "seismic.source_position=700 300", "seismic.receivers=file", recf, stride_kv};
        traces tr, plain;
        run_snapshot(cfgi ? ov1 : ov0, cfgi ? 17 : 16, 0.27, path, &tr);
        /* the same run without a snapshot: bitwise the same traces */
        const char *ovp[18];
        const int np = cfgi ? 16 : 15; /* without the stride (no snapshots: not used) */
        memcpy(ovp, cfgi ? ov1 : ov0, (size_t)np * sizeof *ovp);
        run(ovp, np, &plain);
        assert_int_equal(plain.ns, tr.ns);
        assert_memory_equal(plain.d, tr.d, (size_t)(tr.ns * tr.nrec * tr.ncomp) * sizeof(double));
        hs_reader *r = NULL;
        TEST_OK(hs_reader_open(path, &r));
        int64_t nx, nz, nxh, nzh, nt;
        double *x = read_var(r, "x", &nx), *z = read_var(r, "z", &nz), *xh = read_var(r, "x_half", &nxh), *zh = read_var(r, "z_half", &nzh);
        double *tm = read_var(r, "time", &nt), *vx = read_var(r, "vx", NULL), *vz = read_var(r, "vz", NULL);
        hs_reader_close(r);
        assert_int_equal(nt, 1);
        assert_int_equal(nxh, nx);
        assert_int_equal(nzh, nz);
        for (int64_t i = 0; i < nx; i++) assert_true(xh[i] == x[i] + 0.5 * h && x[i] == (double)(i * stride) * h);
        for (int64_t k = 0; k < nz; k++) assert_true(zh[k] == z[k] + 0.5 * h && z[k] == (double)(k * stride) * h);
        /* the receivers at the labelled points: vx (component 0) of the vx receivers, vz (1) of the vz ones */
        const int64_t sample = (int64_t)llround(tm[0] / tr.dt);
        double dmax = 0, vmax = 0;
        for (int64_t q = 0; q < nx * nz; q++) vmax = fmax(vmax, fmax(fabs(vx[q]), fabs(vz[q])));
        for (int q = 0; q < 4; q++) {
            const int64_t i = pick[q][0] / stride, k = pick[q][1] / stride;
            dmax = fmax(dmax, fabs(vx[k * nx + i] - at(&tr, sample, 0, 2 * q)));
            dmax = fmax(dmax, fabs(vz[k * nx + i] - at(&tr, sample, 1, 2 * q + 1)));
        }
        if (test_ctx()->rank == 0)
            printf("snapshot %s, stride %d, t = %.4f s: against receivers at its labelled points %.2e of the peak\n",
                   cfgi ? "with a free surface" : "in a whole space", stride, tm[0], dmax / vmax);
        TEST_LE(dmax / vmax, 1e-6); /* the snapshot's float32 */
        if (cfgi == 0) {
            /* the exact solution at the labelled coordinates, and at the main points */
            const double dir[2] = {0, 1};
            double err = 0, err_main = 0, ref = 0;
            for (int64_t k = 0; k < nz; k += 3) /* every third point each way: the quadrature is slow */
                for (int64_t i = 0; i < nx; i += 3) {
                    double ax[2] = {xh[i] - 700, z[k] - 700}, az[2] = {x[i] - 700, zh[k] - 700}, am[2] = {x[i] - 700, z[k] - 700};
                    const double r = hypot(am[0], am[1]);
                    if (r < 100 || r > 450) continue;
                    double ex[2], ez[2], em[2];
                    hs_elastic_force_velocity_2d(&wl, VP, VS, RHO, dir, ax, tm[0], ex);
                    hs_elastic_force_velocity_2d(&wl, VP, VS, RHO, dir, az, tm[0], ez);
                    hs_elastic_force_velocity_2d(&wl, VP, VS, RHO, dir, am, tm[0], em);
                    const double fx = vx[k * nx + i], fz = vz[k * nx + i];
                    err += (fx - ex[0]) * (fx - ex[0]) + (fz - ez[1]) * (fz - ez[1]);
                    err_main += (fx - em[0]) * (fx - em[0]) + (fz - em[1]) * (fz - em[1]);
                    ref += ex[0] * ex[0] + ez[1] * ez[1];
                }
            err = sqrt(err / ref), err_main = sqrt(err_main / ref);
            if (test_ctx()->rank == 0)
                printf("snapshot at t = %.4f s against the exact solution, 100-450 m: %.2e at its labelled coordinates, %.2e read "
                       "at the main points\n", tm[0], err, err_main);
            TEST_LE(err, 0.02);
            assert_true(err_main > 5 * err);
        }
        free(x), free(z), free(xh), free(zh), free(tm), free(vx), free(vz), free(tr.d), free(plain.d);
    }
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_lamb),
    cmocka_unit_test(test_snapshot_points),
    cmocka_unit_test_teardown(test_force_2d, test_tmp_cleanup), /* the last to use the folder */
    cmocka_unit_test(test_force_3d),
    cmocka_unit_test(test_cpml),
};

int main(void)
{
    hs_driver_declare();
    hs_seismic_solver.declare();
    return test_run_group("seismic_elastic", tests, sizeof tests / sizeof tests[0]);
}
