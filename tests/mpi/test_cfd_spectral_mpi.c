/* MPI test of the spectral CFD model: on 1, 2 and 4 ranks the run equals the one-rank run of the same case (to round-off; bitwise in practice on the CPU). */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/params.h"
#include "solvers/cfd/cfd.h"
#include "solvers/cfd/spectral.h"

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

/* Run the case to t_end on ctx; u, vorticity gathered (rank 0 of ctx) and the diagnostics. */
static void run_case(hs_ctx *ctx, const char *const *overrides, int count, double *u, double *w, double diag[4])
{
    char *ov[24];
    for (int i = 0; i < count; i++) ov[i] = (char *)overrides[i];
    ov[count] = "run.solver=cfd";
    ov[count + 1] = "cfd.model=spectral";
    ov[count + 2] = "output.format=none";
    hs_params *p = NULL;
    TEST_OK(hs_params_load(NULL, count + 3, ov, &p));
    void *s = NULL;
    TEST_OK(hs_cfd_spectral.create(ctx, p, &s));
    double t, t_end, work;
    int64_t step, taken;
    hs_cfd_spectral.progress(s, &t, &step, &t_end, &work);
    while (t < t_end) {
        TEST_OK(hs_cfd_spectral.advance(s, t_end, 1000000, &taken));
        hs_cfd_spectral.progress(s, &t, &step, &t_end, &work);
    }
    TEST_OK(hs_spectral_field(s, HS_SP_U, u));
    TEST_OK(hs_spectral_field(s, HS_SP_VORT, w));
    TEST_OK(hs_spectral_diagnostics(s, &diag[0], &diag[1], &diag[2], &diag[3]));
    hs_cfd_spectral.destroy(s);
    hs_params_free(p);
}

static double max_rel(const double *a, const double *b, size_t n)
{
    double e = 0, m = 0;
    for (size_t k = 0; k < n; k++) e = fmax(e, fabs(a[k] - b[k])), m = fmax(m, fabs(b[k]));
    return m > 0 ? e / m : e;
}

static void compare_case(const char *name, const char *const *ov, int count, int64_t nx, int64_t ny)
{
    hs_ctx *ctx = test_ctx();
    size_t N = (size_t)(nx * ny);
    double *u = calloc(N, sizeof *u), *w = calloc(N, sizeof *w), *u1 = calloc(N, sizeof *u1), *w1 = calloc(N, sizeof *w1), d[4], d1[4];
    run_case(ctx, ov, count, u, w, d);
    double r[4] = {0, 0, 0, 0};
    if (ctx->rank == 0) {
        run_case(self_ctx(), ov, count, u1, w1, d1);
        r[0] = max_rel(u, u1, N);
        r[1] = max_rel(w, w1, N);
        r[2] = fabs(d[0] - d1[0]) / d1[0];
        r[3] = fabs(d[1] - d1[1]) / d1[1];
        printf("%s on %d ranks against 1: max relative difference u %.3e, vorticity %.3e (%s); kinetic energy %.3e, enstrophy %.3e\n",
               name, ctx->size, r[0], r[1], memcmp(u, u1, N * sizeof *u) || memcmp(w, w1, N * sizeof *w) ? "not bitwise" : "bitwise", r[2], r[3]);
        fflush(stdout);
    }
    TEST_OK(hs_allreduce_max(ctx->comm, r, 4));
    /* Everything but the transforms is pointwise, and these cases come out bitwise equal on the CPU;
     * but a batch's split over the ranks may change which lines FFTW hands to its SIMD codelets
     * (fused multiply-adds, pairs of lines) and which to its scalar ones (seen on 8 x 64 points on
     * 4 ranks: 5e-15), and cuFFT may choose other kernels for other batch counts: round-off, not
     * bitwise, is what the algorithm promises.  The diagnostics' sums are split over the ranks. */
    double tol = 1e-12;
    TEST_LE(r[0], tol);
    TEST_LE(r[1], tol);
    TEST_LE(r[2], 1e-13);
    TEST_LE(r[3], 1e-13);
    free(u), free(w), free(u1), free(w1);
}

/* Turbulence on a non-square grid and box (an odd split of rows and kx planes), adaptive dt,
 * viscosity, drag and forcing. */
static void test_turbulence(void **st)
{
    (void)st;
    const char *ov[] = {"cfd.n=48 40", "cfd.length=6 5", "spectral.initial=turbulence", "spectral.k0=4", "spectral.nu=2e-3",
                        "spectral.drag=0.05", "spectral.force=0.5", "spectral.force_mode=3", "cfd.t_end=0.3"};
    compare_case("turbulence 48 x 40", ov, 9, 48, 40);
}

/* The double shear layer (initial vorticity transformed from the grid), fixed dt. */
static void test_shear_layer(void **st)
{
    (void)st;
    const char *ov[] = {"cfd.n=32 64", "cfd.length=6.283185307179586", "spectral.initial=shear_layer", "spectral.nu=1e-3", "cfd.dt=0.01",
                        "cfd.t_end=0.2"};
    compare_case("shear layer 32 x 64", ov, 6, 32, 64);
}

int main(void)
{
    if (hs_driver_declare() != HS_OK || hs_cfd_solver.declare() != HS_OK) return 1;
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_turbulence), cmocka_unit_test(test_shear_layer)};
    return test_run_group("spectral_mpi", tests, sizeof tests / sizeof tests[0]);
}
