/* MPI test of the lbm CFD model: on 1, 2 and 4 ranks, in every split, the populations equal the one-rank run bitwise (halo exchange, redundant ghost rings, Bouzidi links across rank edges), forces to round-off. */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/params.h"
#include "kernels/comm/comm.h"
#include "solvers/cfd/cfd.h"
#include "solvers/cfd/lbm.h"

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
    double *f[19]; /* the populations as stored, gathered */
    double force[3];
    int q;
} result;

/* Run the case on ctx for `steps` steps (an odd count: the state between the two halves of the AA
 * pair is compared too) and gather the state on its rank 0. */
static void run(hs_ctx *ctx, const char *const *ov, int count, const char *procs, size_t cells, int steps, result *r)
{
    char *args[32];
    for (int i = 0; i < count; i++) args[i] = (char *)ov[i];
    args[count++] = "run.solver=cfd";
    args[count++] = "cfd.model=lbm";
    args[count++] = "output.format=none";
    args[count++] = "cfd.t_end=1e300";
    args[count++] = (char *)procs;
    hs_params *p = NULL;
    TEST_OK(hs_params_load(NULL, count, args, &p));
    void *s = NULL;
    TEST_OK(hs_cfd_lbm.create(ctx, p, &s));
    int64_t taken;
    TEST_OK(hs_cfd_lbm.advance(s, 1e300, steps, &taken));
    hs_lbm_units(s, NULL, NULL, NULL, NULL, &r->q);
    for (int q = 0; q < r->q; q++) {
        r->f[q] = calloc(cells, sizeof(double));
        TEST_OK(hs_lbm_gather_population(s, q, r->f[q]));
    }
    TEST_OK(hs_lbm_forces(s, r->force, NULL, NULL));
    hs_cfd_lbm.destroy(s);
    hs_params_free(p);
}

static void free_result(result *r)
{
    for (int q = 0; q < r->q; q++) free(r->f[q]);
}

/* One case on every split of the ranks against the one-rank run. */
static void check_case(const char *title, const char *const *ov, int count, int ndim, size_t cells, int steps)
{
    hs_ctx *ctx = test_ctx();
    result ref;
    memset(&ref, 0, sizeof ref);
    if (ctx->rank == 0) run(self_ctx(), ov, count, ndim == 3 ? "cfd.procs=1 1 1" : "cfd.procs=1 1", cells, steps, &ref);
    char splits[5][40];
    int ns = 0;
    const int P = ctx->size;
    if (ndim == 2) {
        snprintf(splits[ns++], sizeof splits[0], "cfd.procs=0 0");
        snprintf(splits[ns++], sizeof splits[0], "cfd.procs=%d 1", P);
        snprintf(splits[ns++], sizeof splits[0], "cfd.procs=1 %d", P);
        if (P == 4) snprintf(splits[ns++], sizeof splits[0], "cfd.procs=2 2");
    } else {
        snprintf(splits[ns++], sizeof splits[0], "cfd.procs=0 0 0");
        snprintf(splits[ns++], sizeof splits[0], "cfd.procs=%d 1 1", P);
        snprintf(splits[ns++], sizeof splits[0], "cfd.procs=1 1 %d", P);
        if (P == 4) snprintf(splits[ns++], sizeof splits[0], "cfd.procs=2 1 2");
    }
    for (int k = 0; k < ns; k++) {
        result r;
        memset(&r, 0, sizeof r);
        run(ctx, ov, count, splits[k], cells, steps, &r);
        int bad = 0;
        if (ctx->rank == 0) {
            for (int q = 0; q < r.q && !bad; q++)
                if (memcmp(r.f[q], ref.f[q], cells * sizeof(double)) != 0) {
                    size_t i = 0;
                    while (r.f[q][i] == ref.f[q][i]) i++;
                    print_error("%s, %s on %d ranks: population %d differs from one rank first at cell %zu: %.17g vs %.17g\n", title, splits[k], P,
                                q, i, r.f[q][i], ref.f[q][i]);
                    bad = 1;
                }
            double fs = fmax(fabs(ref.force[0]), fabs(ref.force[1])), worst = 0;
            for (int a = 0; a < 3 && fs > 0; a++) worst = fmax(worst, fabs(r.force[a] - ref.force[a]) / fs);
            printf("%s, %s on %d ranks, %d steps: populations %s; force within %.1e of its size\n", title, splits[k], P, steps,
                   bad ? "DIFFER" : "bitwise equal", worst);
            fflush(stdout);
            /* the force sums the same links in another order: round-off only */
            if (worst > 1e-12) bad = 1;
        }
        free_result(&r);
        TEST_OK(hs_allreduce_int_max(ctx->comm, &bad, 1));
        assert_int_equal(bad, 0);
    }
    if (ctx->rank == 0) free_result(&ref);
}

static void test_cylinder_2d(void **st)
{
    (void)st;
    /* the cylinder straddles the middle of the channel, where the splits cut it */
    const char *ov[] = {"cfd.ndim=2", "cfd.n=48 20", "cfd.length=2.4 1", "lbm.nu=4e-3", "lbm.u_ref=0.3", "lbm.u_lattice=0.08",
                        "lbm.collision=trt", "lbm.storage=fp64", "lbm.boundary=inlet outlet wall wall", "lbm.obstacle=cylinder",
                        "lbm.obstacle_center=1.2 0.5", "lbm.obstacle_radius=0.26"};
    check_case("D2Q9 cylinder, inlet/outlet, Bouzidi", ov, 12, 2, 48 * 20, 81);
}

static void test_periodic_lid_2d(void **st)
{
    (void)st;
    const char *ov[] = {"cfd.ndim=2", "cfd.n=24 18", "cfd.length=1 0.75", "lbm.nu=0.01", "lbm.u_ref=1", "lbm.u_lattice=0.1",
                        "lbm.collision=bgk", "lbm.storage=fp32", "lbm.boundary=periodic periodic wall lid", "lbm.force=0.3 0"};
    check_case("D2Q9 periodic x, lid, force, fp32", ov, 10, 2, 24 * 18, 31);
}

static void test_sphere_3d(void **st)
{
    (void)st;
    const char *ov[] = {"cfd.ndim=3", "cfd.n=16 12 16", "cfd.length=1.6 1.2 1.6", "lbm.nu=4e-3", "lbm.u_ref=0.2", "lbm.u_lattice=0.08",
                        "lbm.collision=trt", "lbm.storage=fp16", "lbm.boundary=inlet outlet periodic periodic wall wall",
                        "lbm.obstacle=sphere", "lbm.obstacle_center=0.8 0.6 0.8", "lbm.obstacle_radius=0.3"};
    check_case("D3Q19 sphere, periodic y, fp16", ov, 12, 3, 16 * 12 * 16, 41);
}

int main(void)
{
    if (hs_driver_declare() != HS_OK || hs_cfd_solver.declare() != HS_OK) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cylinder_2d),
        cmocka_unit_test(test_periodic_lid_2d),
        cmocka_unit_test(test_sphere_3d),
    };
    return test_run_group("lbm_mpi", tests, sizeof tests / sizeof tests[0]);
}
