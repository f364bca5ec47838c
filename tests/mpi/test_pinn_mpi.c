/* PINN data parallelism over 1, 2 and 4 ranks: the loss and gradient over all ranks equal the
 * single-process ones (points split across ranks, gradients all-reduced), and a short Adam + L-BFGS
 * training (with adaptive refinement) follows the single-process run. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/memory.h"
#include "solvers/pinn/pinn_train.h"
#include "test_util.h"

/* The same context on MPI_COMM_SELF: every rank computes the undistributed reference. */
static hs_ctx self_ctx(void)
{
    hs_ctx c = *test_ctx();
    c.comm = MPI_COMM_SELF;
    c.rank = 0, c.size = 1;
    return c;
}

static void config(hs_pinn_config *c)
{
    hs_pinn_config_default(c);
    c->depth = 3;
    for (int l = 0; l < 3; l++) c->width[l] = 10;
    c->n_colloc = 301, c->n_data = 37;
    c->eval_nx = 40, c->eval_nt = 11;
    c->adam_iters = 30, c->lbfgs_iters = 30, c->lbfgs_history = 10;
    c->resample_every = 10, c->resample_candidates = 400, c->resample_add = 13;
    c->history_every = 10;
}

/* Agree on a failure before asserting so that no rank hangs in a later collective. */
static double all_max(double v)
{
    MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, MPI_MAX, test_ctx()->comm);
    return v;
}

static void test_objective(void **s)
{
    (void)s;
    hs_ctx *ctx = test_ctx(), self = self_ctx();
    hs_pinn_config c;
    config(&c);
    hs_pinn *pd, *ps;
    TEST_OK(hs_pinn_create(ctx, &c, &pd));
    TEST_OK(hs_pinn_create(&self, &c, &ps));
    size_t np = hs_pinn_network(pd)->nparams;
    double fd, fs, *gd = malloc(np * 8), *gs = malloc(np * 8);
    TEST_OK(hs_pinn_objective(pd, hs_pinn_network(pd)->params, &fd, NULL));
    TEST_OK(hs_pinn_objective(ps, hs_pinn_network(ps)->params, &fs, NULL));
    TEST_OK(hs_mem_copy(ctx, gd, hs_pinn_network(pd)->grad, np * 8, HS_COPY_D2H));
    TEST_OK(hs_mem_copy(ctx, gs, hs_pinn_network(ps)->grad, np * 8, HS_COPY_D2H));
    double ef = all_max(fabs(fd - fs) / fs), eg = all_max(test_rel_err_f64(gd, gs, np));
    if (ctx->rank == 0) print_message("%d ranks: loss rel diff %.2e, gradient rel diff %.2e\n", ctx->size, ef, eg);
    TEST_LE(ef, 1e-13);
    TEST_LE(eg, 1e-12);
    double *u = malloc(40 * 11 * 8), *v = malloc(40 * 11 * 8), ed, es;
    TEST_OK(hs_pinn_predict(pd, u, &ed));
    TEST_OK(hs_pinn_predict(ps, v, &es));
    TEST_LE(all_max(test_rel_err_f64(u, v, 40 * 11)), 1e-15);
    free(gd), free(gs), free(u), free(v);
    hs_pinn_destroy(pd), hs_pinn_destroy(ps);
}

static void test_training(void **s)
{
    (void)s;
    hs_ctx *ctx = test_ctx(), self = self_ctx();
    hs_pinn_config c;
    config(&c);
    hs_pinn *pd, *ps;
    TEST_OK(hs_pinn_create(ctx, &c, &pd));
    TEST_OK(hs_pinn_create(&self, &c, &ps));
    int done = 0;
    int64_t taken;
    while (!done) TEST_OK(hs_pinn_train(pd, 17, &taken, &done));
    TEST_OK(hs_pinn_train(ps, 1000, &taken, &done));
    int nd, ns;
    const hs_pinn_record *hd = hs_pinn_history(pd, &nd), *hs = hs_pinn_history(ps, &ns);
    assert_int_equal(nd, ns);
    double worst = 0;
    for (int i = 0; i < nd; i++) worst = fmax(worst, fabs(hd[i].loss - hs[i].loss) / hs[i].loss);
    worst = all_max(worst);
    if (ctx->rank == 0)
        print_message("%d ranks: %lld iterations (%s), loss %.4e (1 process %.4e), worst loss rel diff over the history %.2e\n",
                      ctx->size, (long long)hs_pinn_iteration(pd), hs_pinn_status(pd), hd[nd - 1].loss, hs[ns - 1].loss, worst);
    /* round-off of the summation order grows through the optimisation, but stays small */
    TEST_LE(worst, 1e-6);
    hs_pinn_destroy(pd), hs_pinn_destroy(ps);
}

static const struct CMUnitTest tests[] = {cmocka_unit_test(test_objective), cmocka_unit_test(test_training)};

TEST_MAIN("pinn_mpi", tests)
