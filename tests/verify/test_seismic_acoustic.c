/* The acoustic seismic solver against exact solutions: the homogeneous 2D and 3D Green's functions
 * convolved with the wavelet (8th order, 8 points per wavelength, misfit <= 1%), the free surface
 * (image source), a density contrast (exact image with R = (rho2 - rho1)/(rho2 + rho1)), the CPML
 * (reflection against a run on a larger domain), and the spatial order of the stencils.  With
 * HS_TEST_VALIDATE=1 also the convergence of whole seismograms with the grid spacing. */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/params.h"
#include "kernels/rng/rng.h"
#include "physics/seismic_exact.h"
#include "solvers/seismic/seismic.h"

int hs_driver_declare(void);

typedef struct {
    int64_t ns, nrec;
    int ncomp;
    double dt;
    double *d; /* ns x (ncomp nrec), time-major */
} traces;

/* Run the seismic solver with the given overrides to its end; the seismograms (every rank); the
 * CPML by columns or not (hs_seismic_cpml_columns) in *columns where asked. */
static void run_cols(const char *const *over, int count, traces *tr, int *columns)
{
    char *ov[48];
    int n = 0;
    ov[n++] = "run.solver=seismic";
    ov[n++] = "output.format=none";
    ov[n++] = "seismic.seismograms=none";
    ov[n++] = "seismic.precision=float64";
    for (int i = 0; i < count; i++) ov[n++] = (char *)over[i];
    hs_params *p = NULL;
    TEST_OK(hs_params_load(NULL, n, ov, &p));
    void *s = NULL;
    TEST_OK(hs_seismic_solver.create(test_ctx(), p, &s));
    if (columns) *columns = hs_seismic_cpml_columns(s);
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

static void run(const char *const *over, int count, traces *tr) { run_cols(over, count, tr, NULL); }

/* ||a - b|| / ||b|| over a trace. */
static double misfit(const double *num, const double *ref, int64_t n)
{
    double e = 0, r = 0;
    for (int64_t i = 0; i < n; i++) e += (num[i] - ref[i]) * (num[i] - ref[i]), r += ref[i] * ref[i];
    return sqrt(e / r);
}

static double trace_at(const traces *tr, int64_t t, int64_t r) { return tr->d[t * tr->nrec * tr->ncomp + r]; }

/* Receivers on a line: position of receiver r of n from a to b. */
static void line_point(const double *a, const double *b, int n, int r, double *x)
{
    double f = n > 1 ? (double)r / (n - 1) : 0;
    for (int d = 0; d < 3; d++) x[d] = a[d] + f * (b[d] - a[d]);
}

static const hs_wavelet g_ricker9 = {HS_WAVELET_RICKER, 9.0, 1.5 / 9.0, 1.0};

/* 2D, homogeneous, order 8 at 8 points per minimum wavelength (f0 9 Hz, fmax 24.9 Hz, c 2000 m/s,
 * h 10 m), receivers off the grid at 100..500 m: misfit <= 1% against the exact 2D solution. */
static void test_homogeneous_2d(void **state)
{
    (void)state;
    const double a[3] = {503.7, 611.3, 0}, b[3] = {1102.9, 1207.4, 0}, src[2] = {800, 800};
    const int nr = 7;
    const char *ov[] = {"seismic.ndim=2", "seismic.n=161 161", "seismic.spacing=10", "seismic.f0=9", "seismic.cfl=0.35",
                        "seismic.t_end=0.6", "seismic.source_position=800 800", "seismic.receivers=line",
                        "seismic.receiver_start=503.7 611.3", "seismic.receiver_end=1102.9 1207.4", "seismic.receiver_count=7"};
    traces tr;
    run(ov, 11, &tr);
    double *num = malloc((size_t)tr.ns * sizeof *num), *ref = malloc((size_t)tr.ns * sizeof *ref), worst = 0;
    for (int r = 0; r < nr; r++) {
        double x[3];
        line_point(a, b, nr, r, x);
        double dist = hypot(x[0] - src[0], x[1] - src[1]);
        for (int64_t t = 0; t < tr.ns; t++) {
            num[t] = trace_at(&tr, t, r);
            ref[t] = hs_acoustic_green_2d(&g_ricker9, 2000, dist, (double)t * tr.dt);
        }
        double m = misfit(num, ref, tr.ns);
        if (test_ctx()->rank == 0) printf("2D r = %6.1f m: misfit %.2e\n", dist, m);
        worst = fmax(worst, m);
    }
    TEST_LE(worst, 0.01);
    free(num), free(ref), free(tr.d);
}

/* 3D, homogeneous, order 8 at 8 points per wavelength: misfit <= 1% against s(t - r/c) / (4 pi r). */
static void test_homogeneous_3d(void **state)
{
    (void)state;
    const double a[3] = {220, 220, 320.3}, b[3] = {301.1, 311.7, 220}, src[3] = {220, 220, 220};
    const int nr = 4;
    const char *ov[] = {"seismic.ndim=3", "seismic.n=45", "seismic.spacing=10", "seismic.pml=8", "seismic.f0=9",
                        "seismic.cfl=0.4", "seismic.t_end=0.3", "seismic.source_position=220 220 220",
                        "seismic.receivers=line", "seismic.receiver_start=220 220 320.3",
                        "seismic.receiver_end=301.1 311.7 220", "seismic.receiver_count=4"};
    traces tr;
    run(ov, 12, &tr);
    double *num = malloc((size_t)tr.ns * sizeof *num), *ref = malloc((size_t)tr.ns * sizeof *ref), worst = 0;
    for (int r = 0; r < nr; r++) {
        double x[3];
        line_point(a, b, nr, r, x);
        double dist = sqrt((x[0] - src[0]) * (x[0] - src[0]) + (x[1] - src[1]) * (x[1] - src[1]) + (x[2] - src[2]) * (x[2] - src[2]));
        for (int64_t t = 0; t < tr.ns; t++) {
            num[t] = trace_at(&tr, t, r);
            ref[t] = hs_acoustic_green_3d(&g_ricker9, 2000, dist, (double)t * tr.dt);
        }
        double m = misfit(num, ref, tr.ns);
        if (test_ctx()->rank == 0) printf("3D r = %6.1f m: misfit %.2e\n", dist, m);
        worst = fmax(worst, m);
    }
    TEST_LE(worst, 0.01);
    free(num), free(ref), free(tr.d);
}

/* The free surface at z = 0 (image method): the field of the source and its odd image. */
static void test_free_surface(void **state)
{
    (void)state;
    const char *ov[] = {"seismic.ndim=2", "seismic.n=161 101", "seismic.spacing=10", "seismic.f0=9", "seismic.cfl=0.35",
                        "seismic.t_end=0.6", "seismic.free_surface=true", "seismic.source_position=800 150",
                        "seismic.receivers=line", "seismic.receiver_start=400 73.3", "seismic.receiver_end=1200 73.3",
                        "seismic.receiver_count=5"};
    traces tr;
    run(ov, 12, &tr);
    double *num = malloc((size_t)tr.ns * sizeof *num), *ref = malloc((size_t)tr.ns * sizeof *ref), worst = 0;
    for (int r = 0; r < 5; r++) {
        double x = 400 + 200.0 * r, z = 73.3, r1 = hypot(x - 800, z - 150), r2 = hypot(x - 800, z + 150);
        for (int64_t t = 0; t < tr.ns; t++) {
            double tt = (double)t * tr.dt;
            num[t] = trace_at(&tr, t, r);
            ref[t] = hs_acoustic_green_2d(&g_ricker9, 2000, r1, tt) - hs_acoustic_green_2d(&g_ricker9, 2000, r2, tt);
        }
        double m = misfit(num, ref, tr.ns);
        if (test_ctx()->rank == 0) printf("free surface x = %4.0f m: misfit %.2e\n", x, m);
        worst = fmax(worst, m);
    }
    TEST_LE(worst, 0.01);
    free(num), free(ref), free(tr.d);
}

/* Variable density, one speed, a density jump at z = 905 m (between the points at 900 and 910 m):
 * exactly the source plus an image of strength R = (rho2 - rho1) / (rho2 + rho1) above, T = 1 + R
 * times the source's field below.  At a jump the scheme converges at first order (the misfit halves
 * with h: 3.6% at h = 10 m, 1.8% at 5 m, measured), so the waveforms are held to 5% and the peak
 * amplitudes, which carry R and T, to 1%. */
static void test_density_contrast(void **state)
{
    (void)state;
    const char *ov[] = {"seismic.ndim=2", "seismic.n=161 161", "seismic.spacing=10", "seismic.f0=9", "seismic.cfl=0.5",
                        "seismic.t_end=0.6", "seismic.density=variable", "seismic.medium=layered", "seismic.order=4",
                        "seismic.layer_depths=905", "seismic.layer_vp=2000 2000", "seismic.layer_rho=1000 3000",
                        "seismic.source_position=800 700", "seismic.receivers=grid", "seismic.receiver_start=500 650",
                        "seismic.receiver_step=150 400", "seismic.receiver_count=5 2"};
    traces tr;
    run(ov, 17, &tr);
    double R = (3000.0 - 1000.0) / 4000.0, zi = 905;
    double *num = malloc((size_t)tr.ns * sizeof *num), *ref = malloc((size_t)tr.ns * sizeof *ref), worst = 0, peak = 0;
    for (int r = 0; r < 10; r++) {
        double x = 500 + 150.0 * (r % 5), z = 650 + 400.0 * (r / 5);
        double r1 = hypot(x - 800, z - 700), r2 = hypot(x - 800, z - (2 * zi - 700));
        for (int64_t t = 0; t < tr.ns; t++) {
            double tt = (double)t * tr.dt, g = hs_acoustic_green_2d(&g_ricker9, 2000, r1, tt);
            num[t] = trace_at(&tr, t, r);
            ref[t] = z < zi ? g + R * hs_acoustic_green_2d(&g_ricker9, 2000, r2, tt) : (1 + R) * g;
        }
        double m = misfit(num, ref, tr.ns), pn = 0, pr = 0;
        for (int64_t t = 0; t < tr.ns; t++) pn = fmax(pn, fabs(num[t])), pr = fmax(pr, fabs(ref[t]));
        if (test_ctx()->rank == 0) printf("density contrast (%4.0f, %4.0f) m: misfit %.2e, peak ratio %.4f\n", x, z, m, pn / pr);
        worst = fmax(worst, m);
        peak = fmax(peak, fabs(pn / pr - 1));
    }
    TEST_LE(worst, 0.05);
    TEST_LE(peak, 0.01);
    free(num), free(ref), free(tr.d);
}

/* CPML: receivers 5 points from the layer; the same geometry inside a domain 40 points larger on
 * every side (its own boundary's echo arrives after the window).  The difference is what the CPML
 * reflects: at most 1% of the direct wave's peak. */
static void test_cpml(void **state)
{
    (void)state;
    const char *base[] = {"seismic.ndim=2", "seismic.spacing=10", "seismic.f0=9", "seismic.cfl=0.5", "seismic.t_end=0.5",
                          "seismic.pml=15", "seismic.receivers=line", "seismic.receiver_count=6"};
    const char *small[] = {base[0], base[1], base[2], base[3], base[4], base[5], base[6], base[7], "seismic.n=81 81",
                           "seismic.source_position=400 400", "seismic.receiver_start=200 200",
                           "seismic.receiver_end=200 600"};
    const char *big[] = {base[0], base[1], base[2], base[3], base[4], base[5], base[6], base[7], "seismic.n=161 161",
                         "seismic.source_position=800 800", "seismic.receiver_start=600 600",
                         "seismic.receiver_end=600 1000"};
    /* the constant-density 8th order; with HS_TEST_VALIDATE=1 also the variable-density (staggered)
     * 4th order */
    const int orders[2] = {8, 4}, variable[2] = {0, 1};
    for (int c = 0; c < (getenv("HS_TEST_VALIDATE") ? 2 : 1); c++) {
        char ord[32];
        snprintf(ord, sizeof ord, "seismic.order=%d", orders[c]);
        const char *o1[14], *o2[14];
        memcpy(o1, small, sizeof small), memcpy(o2, big, sizeof big);
        o1[12] = o2[12] = ord;
        o1[13] = o2[13] = variable[c] ? "seismic.density=variable" : "seismic.density=constant";
        traces a, b;
        run(o1, 14, &a);
        run(o2, 14, &b);
        double worst = 0;
        for (int r = 0; r < 6; r++) {
            double dmax = 0, pmax = 0;
            for (int64_t t = 0; t < a.ns; t++) {
                dmax = fmax(dmax, fabs(trace_at(&a, t, r) - trace_at(&b, t, r)));
                pmax = fmax(pmax, fabs(trace_at(&b, t, r)));
            }
            worst = fmax(worst, dmax / pmax);
        }
        if (test_ctx()->rank == 0)
            printf("CPML, order %d, %s density: largest reflection %.2e of the direct peak\n", orders[c],
                   variable[c] ? "variable" : "constant", worst);
        TEST_LE(worst, 0.01);
        free(a.d), free(b.d);
    }
}

/* The CPML terms by columns (AC_MARCH, the default where no PSI is exchanged) against the slab
 * passes (AC_PSI then AC_PML, HS_SEIS_MARCH=0): the same sums in another order, so the seismograms
 * agree to round-off.  2D and 3D, orders 8, 4 and 2, a free surface (no layer on top), and grids
 * whose two layers' columns merge into one range (45 points along x: two chunks of the GPU's row
 * kernel). */
static void test_cpml_march(void **state)
{
    (void)state;
    static const char *const cases[][12] = {
        {"seismic.ndim=2", "seismic.n=81 73", "seismic.pml=15", "seismic.source_position=330 420",
         "seismic.receiver_start=60 50", "seismic.receiver_end=750 690", NULL},
        {"seismic.ndim=3", "seismic.n=37 33 31", "seismic.pml=8", "seismic.order=4", "seismic.free_surface=true",
         "seismic.source_position=170 150 60", "seismic.receiver_start=20 30 0", "seismic.receiver_end=340 300 290", NULL},
        {"seismic.ndim=3", "seismic.n=45 36 35", "seismic.pml=13", "seismic.source_position=220 180 170",
         "seismic.receiver_start=10 10 10", "seismic.receiver_end=430 340 330", NULL},
        {"seismic.ndim=3", "seismic.n=20 23 19", "seismic.pml=6", "seismic.order=2", "seismic.source_position=100 110 90",
         "seismic.receiver_start=10 10 10", "seismic.receiver_end=180 210 170", NULL},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const char *o[20];
        int n = 0;
        o[n++] = "seismic.spacing=10", o[n++] = "seismic.f0=6", o[n++] = "seismic.t_end=0.3";
        o[n++] = "seismic.receivers=line", o[n++] = "seismic.receiver_count=9";
        for (int i = 0; cases[c][i]; i++) o[n++] = cases[c][i];
        traces cols, slabs;
        int took_cols = -1, took_slabs = -1;
        unsetenv("HS_SEIS_MARCH");
        run_cols(o, n, &cols, &took_cols);
        setenv("HS_SEIS_MARCH", "0", 1);
        run_cols(o, n, &slabs, &took_slabs);
        unsetenv("HS_SEIS_MARCH");
        assert_int_equal(took_cols, 1); /* one rank: no PSI exchange, the columns by default */
        assert_int_equal(took_slabs, 0);
        assert_int_equal(cols.ns * cols.nrec * cols.ncomp, slabs.ns * slabs.nrec * slabs.ncomp);
        double dmax = 0, pmax = 0;
        for (int64_t i = 0; i < cols.ns * cols.nrec * cols.ncomp; i++)
            dmax = fmax(dmax, fabs(cols.d[i] - slabs.d[i])), pmax = fmax(pmax, fabs(slabs.d[i]));
        if (test_ctx()->rank == 0) printf("CPML by columns against slab passes, case %zu: %.2e of the peak\n", c, dmax / pmax);
        TEST_LE(1e-30, pmax);
        TEST_LE(dmax / pmax, 1e-12);
        free(cols.d), free(slabs.d);
    }
}

/* With HS_TEST_VALIDATE=1: the columns against the slab passes on 24 random geometries (2D and 3D,
 * orders 2, 4, 8, layers of 1-12 points, grids from the smallest the layers allow, free surface or
 * not), fp64, 1e-12 of the peak. */
static void test_cpml_march_random(void **state)
{
    (void)state;
    if (!getenv("HS_TEST_VALIDATE")) {
        printf("random geometries of the CPML by columns: with HS_TEST_VALIDATE=1 only\n");
        return;
    }
    hs_rng g;
    hs_rng_seed(&g, 1717, 0);
    double worst = 0;
    for (int c = 0; c < 24; c++) {
        const int ndim = 2 + (int)(hs_rng_next(&g) % 2), order = 2 << (hs_rng_next(&g) % 3), R = order / 2;
        const int pml = 1 + (int)(hs_rng_next(&g) % 12), free_surface = (int)(hs_rng_next(&g) % 2);
        int n[3];
        char sn[64] = "seismic.n=", src[96] = "seismic.source_position=", r0[96] = "seismic.receiver_start=",
             r1[96] = "seismic.receiver_end=", sd[32], so[32], sp[32];
        for (int d = 0; d < ndim; d++) {
            n[d] = 2 * pml + 2 * R + 1 + (int)(hs_rng_next(&g) % (ndim == 2 ? 40 : 16));
            snprintf(sn + strlen(sn), 12, "%d ", n[d]);
            snprintf(src + strlen(src), 16, "%g ", 10.0 * (n[d] / 2));
            snprintf(r0 + strlen(r0), 16, "%g ", 10.0 * (pml + R + 0.3));
            snprintf(r1 + strlen(r1), 16, "%g ", 10.0 * (n[d] - 1 - pml - R - 0.3));
        }
        snprintf(sd, sizeof sd, "seismic.ndim=%d", ndim);
        snprintf(so, sizeof so, "seismic.order=%d", order);
        snprintf(sp, sizeof sp, "seismic.pml=%d", pml);
        const char *o[] = {"seismic.spacing=10", "seismic.f0=5", "seismic.t_end=0.25", "seismic.receivers=line",
                           "seismic.receiver_count=7", sd, so, sp, sn, src, r0, r1,
                           free_surface ? "seismic.free_surface=true" : "seismic.free_surface=false"};
        traces cols, slabs;
        int took_cols = -1, took_slabs = -1;
        unsetenv("HS_SEIS_MARCH");
        run_cols(o, 13, &cols, &took_cols);
        setenv("HS_SEIS_MARCH", "0", 1);
        run_cols(o, 13, &slabs, &took_slabs);
        unsetenv("HS_SEIS_MARCH");
        assert_int_equal(took_cols, 1);
        assert_int_equal(took_slabs, 0);
        double dmax = 0, pmax = 0;
        for (int64_t i = 0; i < cols.ns * cols.nrec * cols.ncomp; i++)
            dmax = fmax(dmax, fabs(cols.d[i] - slabs.d[i])), pmax = fmax(pmax, fabs(slabs.d[i]));
        TEST_LE(1e-30, pmax);
        if (dmax / pmax > 1e-12) printf("case %d (%s %s %s %s, free surface %d): %.3e\n", c, sd, so, sp, sn, free_surface, dmax / pmax);
        TEST_LE(dmax / pmax, 1e-12);
        worst = fmax(worst, dmax / pmax);
        free(cols.d), free(slabs.d);
    }
    printf("CPML by columns against slab passes, 24 random geometries: at most %.2e of the peak\n", worst);
}

/* The stencils' order: the step kernel with p^{n-1} = 0 and w = 1 gives 2 p + L(p); against the
 * exact Laplacian of a smooth field the error falls as h^order. */
static double smooth(const double *x) { return sin(2.1 * x[0] + 0.3) * cos(1.7 * x[1] - 0.2); }

static void test_stencil_order(void **state)
{
    (void)state;
    for (int var = 0; var < 2; var++)
        for (int order = 2; order <= 8; order *= 2) {
            double e[3];
            for (int g = 0; g < 3; g++) {
                int n = 16 << g; /* a domain of 2 x 2: the 8th order's error stays above round-off at first */
                char nn[32], hh[48], ord[32];
                snprintf(nn, sizeof nn, "seismic.n=%d %d", n + 1, n + 1);
                snprintf(hh, sizeof hh, "seismic.spacing=%.17g", 2.0 / n);
                snprintf(ord, sizeof ord, "seismic.order=%d", order);
                const char *ov[] = {"run.solver=seismic", "output.format=none", "seismic.seismograms=none",
                                    "seismic.precision=float64", "seismic.pml=0", nn, hh, ord, "seismic.source_position=1 1",
                                    "seismic.f0=0.1", "seismic.t_end=0",
                                    var ? "seismic.density=variable" : "seismic.density=constant"};
                hs_params *p = NULL;
                TEST_OK(hs_params_load(NULL, 12, (char *const *)ov, &p));
                void *s = NULL;
                TEST_OK(hs_seismic_solver.create(test_ctx(), p, &s));
                TEST_OK(hs_seismic_test_laplacian(s, smooth, &e[g]));
                hs_seismic_solver.destroy(s);
                hs_params_free(p);
            }
            double r1 = log2(e[0] / e[1]), r2 = log2(e[1] / e[2]);
            if (test_ctx()->rank == 0)
                printf("%s operator, order %d: errors %.2e %.2e %.2e at h = 1/8, 1/16, 1/32; observed orders %.2f %.2f\n",
                       var ? "staggered (variable-density)" : "centred (constant-density)", order, e[0], e[1], e[2], r1, r2);
            /* the 8th order reaches round-off (1e-12) on the finest grid: its first ratio counts */
            assert_true(r1 > order - 0.3);
            if (order < 8) assert_true(r2 > order - 0.3);
        }
}

/* Validation: whole 2D seismograms of the 8th-order scheme as the grid is refined with dt
 * proportional to h: the misfit falls at the leapfrog's second order (the time error dominates). */
static void test_convergence(void **state)
{
    (void)state;
    if (!getenv("HS_TEST_VALIDATE")) {
        if (test_ctx()->rank == 0) printf("convergence in h: with HS_TEST_VALIDATE=1 only\n");
        return;
    }
    double e[3];
    for (int g = 0; g < 3; g++) {
        int k = 1 << g;
        char nn[48], hh[48], pml[32];
        snprintf(nn, sizeof nn, "seismic.n=%d %d", 80 * k + 1, 80 * k + 1);
        snprintf(hh, sizeof hh, "seismic.spacing=%g", 20.0 / k);
        snprintf(pml, sizeof pml, "seismic.pml=%d", 10 * k);
        const char *ov[] = {"seismic.ndim=2", nn, hh, pml, "seismic.f0=9", "seismic.cfl=0.6", "seismic.t_end=0.5",
                            "seismic.source_position=800 800", "seismic.receivers=line", "seismic.receiver_start=1100 800",
                            "seismic.receiver_end=1100 800", "seismic.receiver_count=1", "seismic.order=8"};
        traces tr;
        run(ov, 13, &tr);
        double *num = malloc((size_t)tr.ns * sizeof *num), *ref = malloc((size_t)tr.ns * sizeof *ref);
        for (int64_t t = 0; t < tr.ns; t++) {
            num[t] = trace_at(&tr, t, 0);
            ref[t] = hs_acoustic_green_2d(&g_ricker9, 2000, 300, (double)t * tr.dt);
        }
        e[g] = misfit(num, ref, tr.ns);
        free(num), free(ref), free(tr.d);
    }
    double r1 = log2(e[0] / e[1]), r2 = log2(e[1] / e[2]);
    if (test_ctx()->rank == 0) printf("2D seismogram misfit with h = 20, 10, 5 m: %.2e %.2e %.2e, observed orders %.2f %.2f\n", e[0], e[1], e[2], r1, r2);
    assert_true(r1 > 1.8 && r2 > 1.8);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_stencil_order),  cmocka_unit_test(test_homogeneous_2d), cmocka_unit_test(test_homogeneous_3d),
    cmocka_unit_test(test_free_surface),   cmocka_unit_test(test_density_contrast), cmocka_unit_test(test_cpml),
    cmocka_unit_test(test_cpml_march),
    cmocka_unit_test(test_cpml_march_random),
    cmocka_unit_test(test_convergence),
};

int main(void)
{
    hs_driver_declare();
    hs_seismic_solver.declare();
    return test_run_group("seismic_acoustic", tests, sizeof tests / sizeof tests[0]);
}
