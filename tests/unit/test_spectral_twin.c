/* The spectral CFD model's CUDA kernels against their CPU twins, operation by operation and whole runs; skipped (77) without a GPU. */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/params.h"
#include "kernels/memory.h"
#include "solvers/cfd/cfd.h"
#include "solvers/cfd/spectral.h"
#include "solvers/cfd/spectral_impl.h"

int hs_driver_declare(void);

#if HS_HAVE_CUDA

/* Both backends run spectral_point.h; the GPU contracts a*b + c into fused multiply-adds and its
 * exp, sin and cos may differ from glibc's in the last bit: a few ulp per operation. */
#define KERNEL_TOL 1e-14
/* Whole runs chain 16 transforms (cuFFT against FFTW) and the kernels per step over 20 steps of a
 * nonlinear flow. */
#define RUN_TOL 1e-10

/* max |g - c| / max(max |c|, floor) of the device array g against the host array c (n doubles);
 * floor is the scale of the terms when the result is a cancellation (the divergence). */
static double compare(const double *dg, const double *c, size_t n, double floor)
{
    double *g = test_download_new(dg, n * sizeof(double)), e = 0, m = 0;
    for (size_t i = 0; i < n; i++) {
        e = fmax(e, fabs(g[i] - c[i]));
        m = fmax(m, fabs(c[i]));
    }
    free(g);
    m = fmax(m, floor);
    return m > 0 ? e / m : e;
}

enum { W0, ACC, A, B, OUT, NBUF };

/* One launch on both backends from the same random inputs; the largest relative difference over
 * the arrays the launch may write (relative to at least floor). */
static double twin(hs_spectral_launch L, uint64_t seed, double floor)
{
    const size_t n = (size_t)(L.op == HS_SP_PRODUCTS ? L.count : 2 * L.count);
    double *h[NBUF], *d[NBUF];
    for (int k = 0; k < NBUF; k++) {
        h[k] = malloc(n * sizeof(double) + 8);
        test_fill_f64(h[k], n, seed + (uint64_t)k, -1, 1);
        d[k] = test_upload(h[k], n * sizeof(double));
    }
    hs_spectral_launch Lc = L, Lg = L;
    Lc.w0 = h[W0], Lc.acc = h[ACC], Lc.a = h[A], Lc.b = h[B], Lc.out = h[OUT];
    Lg.w0 = d[W0], Lg.acc = d[ACC], Lg.a = d[A], Lg.b = d[B], Lg.out = d[OUT];
    TEST_OK(hs_spectral_launch_cpu(&Lc));
    TEST_OK(hs_spectral_launch_cuda(test_ctx()->cuda, &Lg));
    TEST_OK(hs_ctx_sync(test_ctx()));
    double e = 0;
    for (int k = 0; k < NBUF; k++) {
        e = fmax(e, compare(d[k], h[k], n, floor));
        hs_mem_free(test_ctx(), d[k]);
        free(h[k]);
    }
    return e;
}

static hs_spectral_launch base(int op, int64_t kx0)
{
    hs_spectral_launch L;
    memset(&L, 0, sizeof L);
    L.op = op;
    L.nx = 48, L.ny = 40, L.kx0 = kx0, L.planes = 7, L.count = L.planes * L.ny;
    L.kxs = 2 * M_PI / 6.0, L.kys = 2 * M_PI / 5.0;
    L.inv_n = 1.0 / (48.0 * 40.0);
    L.nu = 0.01, L.drag = 0.1, L.h = 0.013;
    L.force_mode = 3, L.force_re = -0.7, L.force_im = 0.2;
    L.scale = 2.5, L.k0 = 4, L.shape_shift = 0.0625, L.seed = 17, L.stream = hs_rng_stream(0x5350u, 0);
    return L;
}

static void test_kernels(void **state)
{
    (void)state;
    const int ops[] = {HS_SP_VELOCITY, HS_SP_FIELD, HS_SP_DIAG, HS_SP_RANDOM, HS_SP_MASK, HS_SP_TENDENCY, HS_SP_STAGE, HS_SP_PRODUCTS};
    const char *names[] = {"velocity", "field", "diag", "random", "mask", "tendency", "stage", "products"};
    for (int o = 0; o < 8; o++)
        for (int kx0 = 0; kx0 <= 5; kx0 += 5) { /* the kx = 0 plane (Hermitian line, forcing) and an inner slab */
            int variants = ops[o] == HS_SP_FIELD ? 5 : ops[o] == HS_SP_STAGE ? 4 : 1;
            for (int v = 0; v < variants; v++) {
                hs_spectral_launch L = base(ops[o], kx0);
                L.which = v;
                L.stage = v + 1;
                if (ops[o] == HS_SP_PRODUCTS) L.count = 48 * 9;
                /* the divergence (field variant 4) is zero up to rounding: measured against the size of
                 * its terms, ~inv_n for inputs in [-1, 1], not against its own rounding noise */
                double floor = ops[o] == HS_SP_FIELD && v == 4 ? L.inv_n : 0.0;
                double e = twin(L, 100 + (uint64_t)(o * 10 + v), floor);
                if (!(e <= KERNEL_TOL)) fail_msg("%s (variant %d, kx0 %d): CUDA against CPU %.3e", names[o], v, kx0, e);
            }
        }
}

/* The model on one backend: 20 adaptive steps of forced turbulence, the vorticity and velocity. */
static void run_on(const char *device, double *w, double *u, double diag[4])
{
    TEST_OK(hs_ctx_set_device(test_ctx(), device, 1));
    char *ov[] = {"run.solver=cfd", "cfd.model=spectral", "output.format=none", "cfd.n=64 48", "cfd.length=6.283185307179586",
                  "spectral.initial=turbulence", "spectral.k0=5", "spectral.nu=1e-3", "spectral.drag=0.02", "spectral.force=0.3",
                  "cfd.t_end=1e9"};
    hs_params *p = NULL;
    TEST_OK(hs_params_load(NULL, 11, ov, &p));
    void *s = NULL;
    TEST_OK(hs_cfd_spectral.create(test_ctx(), p, &s));
    int64_t taken;
    TEST_OK(hs_cfd_spectral.advance(s, 1e9, 20, &taken));
    TEST_OK(hs_spectral_field(s, HS_SP_VORT, w));
    TEST_OK(hs_spectral_field(s, HS_SP_U, u));
    TEST_OK(hs_spectral_diagnostics(s, &diag[0], &diag[1], &diag[2], &diag[3]));
    hs_cfd_spectral.destroy(s);
    hs_params_free(p);
}

static void test_whole_runs(void **state)
{
    (void)state;
    size_t N = 64 * 48;
    double *wc = malloc(N * sizeof *wc), *uc = malloc(N * sizeof *uc), *wg = malloc(N * sizeof *wg), *ug = malloc(N * sizeof *ug), dc[4], dg[4];
    run_on("cpu", wc, uc, dc);
    run_on("cuda", wg, ug, dg);
    double ew = test_rel_err_f64(wg, wc, N), eu = test_rel_err_f64(ug, uc, N);
    printf("20 steps of forced turbulence on 64 x 48: CUDA against CPU, vorticity %.3e, u %.3e; energy %.3e, enstrophy %.3e\n", ew, eu,
           fabs(dg[0] - dc[0]) / dc[0], fabs(dg[1] - dc[1]) / dc[1]);
    TEST_LE(ew, RUN_TOL);
    TEST_LE(eu, RUN_TOL);
    TEST_LE(fabs(dg[0] - dc[0]) / dc[0], RUN_TOL);
    TEST_LE(fabs(dg[1] - dc[1]) / dc[1], RUN_TOL);
    free(wc), free(uc), free(wg), free(ug);
    TEST_OK(hs_ctx_set_device(test_ctx(), "cuda", 1));
}

static int setup_cuda(void **state)
{
    (void)state;
    return hs_ctx_set_device(test_ctx(), "cuda", 1) == HS_OK ? 0 : -1;
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup(test_kernels, setup_cuda),
    cmocka_unit_test(test_whole_runs),
};
#endif

int main(void)
{
#if HS_HAVE_CUDA
    if (hs_cuda_device_count() > 0) {
        if (hs_driver_declare() != HS_OK || hs_cfd_solver.declare() != HS_OK) return 1;
        return test_run_group("spectral_twin", tests, sizeof tests / sizeof tests[0]);
    }
    printf("SKIP: no GPU here: the CUDA kernels of the spectral CFD model are not compared with their CPU twins\n");
#else
    printf("SKIP: built without CUDA: the spectral CFD model has no CUDA twin to compare\n");
#endif
    return 77;
}
