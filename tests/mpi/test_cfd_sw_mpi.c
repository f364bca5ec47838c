/* MPI test of the shallow_water CFD model: on 1, 2 and 4 ranks, in every split, the state equals the one-rank run bitwise. */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/params.h"
#include "kernels/comm/comm.h"
#include "solvers/cfd/cfd.h"
#include "solvers/cfd/sw.h"

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

typedef struct {
    double *f[3]; /* h, u, v on their own points, gathered */
    double tot[3];
} result;

/* Run the case on ctx for `steps` steps and gather the state on its rank 0. */
static void run(hs_ctx *ctx, const char *const *ov, int count, const char *procs, int nx, int ny, result *r)
{
    char *args[24];
    for (int i = 0; i < count; i++) args[i] = (char *)ov[i];
    args[count++] = "run.solver=cfd";
    args[count++] = "cfd.model=shallow_water";
    args[count++] = "output.format=none";
    args[count++] = (char *)procs;
    hs_params *p = NULL;
    TEST_OK(hs_params_load(NULL, count, args, &p));
    void *s = NULL;
    TEST_OK(hs_cfd_shallow_water.create(ctx, p, &s));
    double t, t_end, work;
    int64_t step, taken;
    hs_cfd_shallow_water.progress(s, &t, &step, &t_end, &work);
    while (t < t_end) {
        TEST_OK(hs_cfd_shallow_water.advance(s, t_end, 1000, &taken));
        hs_cfd_shallow_water.progress(s, &t, &step, &t_end, &work);
    }
    size_t n = (size_t)nx * (size_t)(ny + 1);
    static const int what[3] = {HS_SW_GATHER_H, HS_SW_GATHER_U_FACE, HS_SW_GATHER_V_FACE};
    for (int v = 0; v < 3; v++) {
        r->f[v] = calloc(n, sizeof(double));
        TEST_OK(hs_sw_gather(s, what[v], r->f[v]));
    }
    TEST_OK(hs_sw_totals(s, &r->tot[0], &r->tot[1], &r->tot[2]));
    hs_cfd_shallow_water.destroy(s);
    hs_params_free(p);
}

static void free_result(result *r)
{
    for (int v = 0; v < 3; v++) free(r->f[v]);
}

/* One case on every split of the ranks against the one-rank run. */
static void check_case(const char *title, const char *const *ov, int count, int nx, int ny, int walls)
{
    hs_ctx *ctx = test_ctx();
    result ref;
    memset(&ref, 0, sizeof ref);
    if (ctx->rank == 0) run(self_ctx(), ov, count, "cfd.procs=1 1", nx, ny, &ref);
    char splits[4][32];
    int ns = 0;
    snprintf(splits[ns++], sizeof splits[0], "cfd.procs=0 0");
    snprintf(splits[ns++], sizeof splits[0], "cfd.procs=%d 1", ctx->size);
    snprintf(splits[ns++], sizeof splits[0], "cfd.procs=1 %d", ctx->size);
    if (ctx->size == 4) snprintf(splits[ns++], sizeof splits[0], "cfd.procs=2 2");
    static const char *names[3] = {"h", "u", "v"};
    for (int k = 0; k < ns; k++) {
        result r;
        memset(&r, 0, sizeof r);
        run(ctx, ov, count, splits[k], nx, ny, &r);
        int bad = 0;
        if (ctx->rank == 0) {
            size_t n[3] = {(size_t)nx * ny, (size_t)nx * ny, (size_t)nx * (ny + walls)};
            for (int v = 0; v < 3; v++)
                if (memcmp(r.f[v], ref.f[v], n[v] * sizeof(double)) != 0) {
                    size_t i = 0;
                    while (r.f[v][i] == ref.f[v][i]) i++;
                    print_error("%s, %s on %d ranks: %s differs from one rank first at point %zu: %.17g vs %.17g\n", title, splits[k], ctx->size,
                                names[v], i, r.f[v][i], ref.f[v][i]);
                    bad = 1;
                }
            double worst = 0;
            for (int i = 0; i < 3; i++) worst = fmax(worst, fabs(r.tot[i] - ref.tot[i]) / fabs(ref.tot[i]));
            printf("%s, %s on %d ranks: h, u, v %s; totals within %.1e\n", title, splits[k], ctx->size, bad ? "DIFFER" : "bitwise equal", worst);
            fflush(stdout);
            if (worst > 1e-14) bad = 1;
        }
        free_result(&r);
        TEST_OK(hs_allreduce_int_max(ctx->comm, &bad, 1));
        assert_int_equal(bad, 0);
    }
    if (ctx->rank == 0) free_result(&ref);
}

static void test_periodic_jet(void **st)
{
    (void)st;
    const char *ov[] = {"cfd.n=40 24", "cfd.length=1.5 1", "shallow_water.case=jet", "shallow_water.f0=5", "shallow_water.jet_width=0.07",
                        "shallow_water.perturbation=0.05", "shallow_water.topography=random", "shallow_water.nu4=1e-7", "cfd.t_end=0.3"};
    check_case("periodic jet, random bottom, hyperviscosity", ov, 9, 40, 24, 0);
}

static void test_beta_channel(void **st)
{
    (void)st;
    const char *ov[] = {"cfd.n=36 28", "shallow_water.case=vortex", "shallow_water.y_boundary=walls", "shallow_water.beta=10",
                        "shallow_water.f0=8", "shallow_water.topography=bump", "shallow_water.nu=2e-4", "cfd.t_end=0.3"};
    check_case("vortex in a beta channel, bump, viscosity", ov, 8, 36, 28, 1);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_periodic_jet),
    cmocka_unit_test(test_beta_channel),
};

int main(void)
{
    if (hs_driver_declare() != HS_OK || hs_cfd_solver.declare() != HS_OK) return 1;
    return test_run_group("shallow_water_mpi", tests, sizeof tests / sizeof tests[0]);
}
