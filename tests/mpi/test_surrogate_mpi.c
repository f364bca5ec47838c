/* Surrogate data parallelism over 1, 2 and 4 ranks: the same global batch gives the single-process
 * gradient (all-reduced) and the same loss curve; scores and forecasts do not depend on the rank count;
 * the all-reduce overlapped with the backward pass gives the bits of the one after it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/memory.h"
#include "ml_surrogate/surrogate.h"
#include "surrogate_test_util.h"
#include "test_util.h"

/* The same context on MPI_COMM_SELF: every rank computes the undistributed reference. */
static hs_ctx self_ctx(void)
{
    hs_ctx c = *test_ctx();
    c.comm = c.node_comm = MPI_COMM_SELF;
    c.rank = c.local_rank = 0, c.size = c.local_size = 1;
    return c;
}

static double all_max(double v)
{
    MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, MPI_MAX, test_ctx()->comm);
    return v;
}

static char g_files[3][512];

static void make_files(void)
{
    if (g_files[0][0]) return;
    for (int f = 0; f < 3; f++) {
        char name[32];
        snprintf(name, sizeof name, "traj%d.nc", f);
        snprintf(g_files[f], sizeof g_files[f], "%s", test_tmp_path(name));
        surr_test_file(g_files[f], 16, 8, 10, 0.7 * f, -1);
    }
}

static void configs(hs_surr_data_config *dc, hs_surr_train_config *tc, hs_dtype t)
{
    static char *names[3];
    for (int f = 0; f < 3; f++) names[f] = g_files[f];
    memset(dc, 0, sizeof *dc);
    dc->nfiles = 3, dc->files = names, dc->nvars = 2;
    strcpy(dc->vars[0], "a"), strcpy(dc->vars[1], "b");
    dc->k_in = 3, dc->k_out = 2, dc->stride = 1;
    dc->split[0] = 0.6, dc->split[1] = 0.2, dc->split[2] = 0.2;
    memset(tc, 0, sizeof *tc);
    surr_test_arch(&tc->arch, t, 8, 10, 3, 2);
    tc->batch = 8, tc->steps = 12;
    tc->lr = (hs_lr_plan){HS_LR_COSINE, 3e-3, 0.1, 1, 12, 2};
    tc->weight_decay = 1e-4, tc->beta1 = 0.9, tc->beta2 = 0.999, tc->eps = 1e-8, tc->clip = 0.5;
    tc->loss_scale = 1, tc->scale_window = 1000, tc->seed = 99;
}

/* One step's gradient over P ranks (the batch shared out, then all-reduced) against one process. */
static void test_gradient_allreduce(void **s)
{
    (void)s;
    make_files();
    hs_ctx *ctx = test_ctx(), self = self_ctx();
    hs_surr_data_config dc;
    hs_surr_train_config tc;
    configs(&dc, &tc, HS_F64);
    tc.overlap_allreduce = 1, tc.bucket_bytes = 1; /* a bucket per layer, each started in the backward pass */
    hs_surr_data *dd, *ds;
    TEST_OK(hs_surr_data_open(ctx, &dc, 1, &dd));
    TEST_OK(hs_surr_data_open(&self, &dc, 1, &ds));
    /* the frames held once per node (written by the node's first rank) read the same on every rank
     * as the frames this rank read alone */
    const hs_surr_grid *g = hs_surr_data_grid(dd);
    size_t fs = (size_t)dc.nvars * g->ny * g->nx;
    int same = 1;
    for (int f = 0; f < dc.nfiles; f++)
        for (int64_t j = 0; j < hs_surr_data_frames(dd, f); j++)
            same &= !memcmp(hs_surr_data_frame(dd, f, j), hs_surr_data_frame(ds, f, j), fs * sizeof(float));
    MPI_Allreduce(MPI_IN_PLACE, &same, 1, MPI_INT, MPI_LAND, ctx->comm);
    assert_true(same);
    hs_surr_trainer *td, *ts;
    TEST_OK(hs_surr_trainer_create(ctx, &tc, dd, &td));
    TEST_OK(hs_surr_trainer_create(&self, &tc, ds, &ts));
    double ld, ls;
    TEST_OK(hs_surr_trainer_step(td, &ld));
    TEST_OK(hs_surr_trainer_step(ts, &ls));
    size_t np = hs_surr_model_nparams(hs_surr_trainer_model(td));
    double *gd = malloc(np * 8), *gs = malloc(np * 8), *pd = malloc(np * 8), *ps = malloc(np * 8);
    TEST_OK(hs_mem_copy(ctx, gd, hs_surr_model_grad(hs_surr_trainer_model(td)), np * 8, HS_COPY_D2H));
    TEST_OK(hs_mem_copy(ctx, gs, hs_surr_model_grad(hs_surr_trainer_model(ts)), np * 8, HS_COPY_D2H));
    TEST_OK(hs_mem_copy(ctx, pd, hs_surr_model_params(hs_surr_trainer_model(td)), np * 8, HS_COPY_D2H));
    TEST_OK(hs_mem_copy(ctx, ps, hs_surr_model_params(hs_surr_trainer_model(ts)), np * 8, HS_COPY_D2H));
    double el = all_max(fabs(ld - ls) / ls), eg = all_max(test_rel_err_f64(gd, gs, np)), ep = all_max(test_rel_err_f64(pd, ps, np));
    if (ctx->rank == 0)
        print_message("%d ranks, fp64: loss rel diff %.2e, gradient %.2e, parameters after the update %.2e\n", ctx->size, el, eg, ep);
    /* the statistics are merged in rank order and the batch's sums split at other places: round-off only */
    TEST_LE(el, 1e-12);
    TEST_LE(eg, 1e-11);
    TEST_LE(ep, 1e-12);
    free(gd), free(gs), free(pd), free(ps);
    hs_surr_trainer_destroy(td), hs_surr_trainer_destroy(ts);
    hs_surr_data_close(dd), hs_surr_data_close(ds);
}

/* The loss curve of fp32 training on P ranks against one process, step by step, with validation. */
static void test_loss_curve(void **s)
{
    (void)s;
    make_files();
    hs_ctx *ctx = test_ctx(), self = self_ctx();
    hs_surr_data_config dc;
    hs_surr_train_config tc;
    configs(&dc, &tc, HS_F32);
    hs_surr_data *dd, *ds;
    TEST_OK(hs_surr_data_open(ctx, &dc, 1, &dd));
    TEST_OK(hs_surr_data_open(&self, &dc, 1, &ds));
    hs_surr_trainer *td, *ts;
    TEST_OK(hs_surr_trainer_create(ctx, &tc, dd, &td));
    TEST_OK(hs_surr_trainer_create(&self, &tc, ds, &ts));
    double worst = 0, first = 0, last = 0;
    for (int k = 0; k < tc.steps; k++) {
        double ld, ls;
        TEST_OK(hs_surr_trainer_step(td, &ld));
        TEST_OK(hs_surr_trainer_step(ts, &ls));
        worst = fmax(worst, fabs(ld - ls) / ls);
        if (k == 0) first = ls;
        last = ls;
    }
    double vd, vs;
    TEST_OK(hs_surr_trainer_eval_loss(td, 1, 0, &vd));
    TEST_OK(hs_surr_trainer_eval_loss(ts, 1, 0, &vs));
    worst = all_max(worst);
    double ev = all_max(fabs(vd - vs) / vs);
    if (ctx->rank == 0)
        print_message("%d ranks, fp32: loss %.4e -> %.4e over %lld steps, worst rel diff of the curve %.2e, validation %.2e\n",
                      ctx->size, first, last, (long long)tc.steps, worst, ev);
    assert_true(last < first);
    TEST_LE(worst, 1e-5);
    TEST_LE(ev, 1e-5);
    /* scores of the test split: the same on any rank count */
    hs_surr_scores sd, ss;
    TEST_OK(hs_surr_evaluate(ctx, hs_surr_trainer_model(td), dd, 0, &sd));
    TEST_OK(hs_surr_evaluate(&self, hs_surr_trainer_model(ts), ds, 0, &ss));
    size_t n = (size_t)sd.nvars * sd.leads;
    double es = all_max(fmax(test_rel_err_f64(sd.rmse, ss.rmse, n), test_rel_err_f64(sd.acc, ss.acc, n)));
    double ep = all_max(fmax(test_rel_err_f64(sd.rmse_persistence, ss.rmse_persistence, n),
                             test_rel_err_f64(sd.rmse_climatology, ss.rmse_climatology, n)));
    if (ctx->rank == 0) print_message("  scores: model rel diff %.2e, persistence and climatology %.2e\n", es, ep);
    TEST_LE(es, 1e-4);
    TEST_LE(ep, 1e-12);
    hs_surr_scores_free(&sd), hs_surr_scores_free(&ss);
    hs_surr_trainer_destroy(td), hs_surr_trainer_destroy(ts);
    hs_surr_data_close(dd), hs_surr_data_close(ds);
}

/* Several training steps with the gradient all-reduce overlapped with the backward pass and after
 * it, in fp64, fp32 and bf16, with a bucket per layer, merged buckets and one bucket: the losses,
 * gradient norms, last gradients and weights agree bit for bit (the same sums in the same order
 * per element; an all-reduce started before its layer's gradient is final, or a range missed,
 * would not), and both follow one process's run (the independent reference) to round-off. */
static void test_overlap_bitwise(void **s)
{
    (void)s;
    make_files();
    hs_ctx *ctx = test_ctx(), self = self_ctx();
    const hs_dtype types[] = {HS_F64, HS_F32, HS_BF16};
    /* the test network's gradient is 2496 values (19,968 bytes) in six ranges of 128 to 1088:
     * 1 byte gives one bucket per range, 4096 merges them into three, 0 (1 MiB) into one */
    const size_t buckets[] = {1, 4096, 0};
    const int steps = 6;
    for (int it = 0; it < 3; it++)
        for (int ib = 0; ib < 3; ib++) {
            hs_surr_data_config dc;
            hs_surr_train_config tc;
            configs(&dc, &tc, types[it]);
            tc.bucket_bytes = buckets[ib];
            hs_surr_data *dd, *ds;
            TEST_OK(hs_surr_data_open(ctx, &dc, 1, &dd));
            TEST_OK(hs_surr_data_open(&self, &dc, 1, &ds));
            hs_surr_trainer *ton, *toff, *tref;
            tc.overlap_allreduce = 1;
            TEST_OK(hs_surr_trainer_create(ctx, &tc, dd, &ton));
            TEST_OK(hs_surr_trainer_create(&self, &tc, ds, &tref));
            tc.overlap_allreduce = 0;
            TEST_OK(hs_surr_trainer_create(ctx, &tc, dd, &toff));
            int differ = 0;
            double worst = 0;
            for (int k = 0; k < steps; k++) {
                double lon, loff, lref, gon, goff;
                TEST_OK(hs_surr_trainer_step(ton, &lon));
                TEST_OK(hs_surr_trainer_step(toff, &loff));
                TEST_OK(hs_surr_trainer_step(tref, &lref));
                hs_surr_trainer_last(ton, NULL, &gon, NULL, NULL);
                hs_surr_trainer_last(toff, NULL, &goff, NULL, NULL);
                differ += memcmp(&lon, &loff, sizeof lon) != 0 || memcmp(&gon, &goff, sizeof gon) != 0;
                worst = fmax(worst, fabs(lon - lref) / lref);
            }
            hs_surr_model *mon = hs_surr_trainer_model(ton), *moff = hs_surr_trainer_model(toff);
            size_t np = hs_surr_model_nparams(mon);
            assert_int_equal(np, 2496); /* the bucket sizes above were chosen for this */
            double *a = malloc(np * 8), *b = malloc(np * 8);
            TEST_OK(hs_mem_copy(ctx, a, hs_surr_model_params(mon), np * 8, HS_COPY_D2H));
            TEST_OK(hs_mem_copy(ctx, b, hs_surr_model_params(moff), np * 8, HS_COPY_D2H));
            differ += memcmp(a, b, np * 8) != 0;
            TEST_OK(hs_mem_copy(ctx, a, hs_surr_model_grad(mon), np * 8, HS_COPY_D2H));
            TEST_OK(hs_mem_copy(ctx, b, hs_surr_model_grad(moff), np * 8, HS_COPY_D2H));
            differ += memcmp(a, b, np * 8) != 0;
            free(a), free(b);
            double bad = all_max(differ);
            worst = all_max(worst);
            if (ctx->rank == 0)
                print_message("%d ranks, %s, buckets of %zu bytes: overlap on vs off %s over %d steps; loss vs one process %.2e\n",
                              ctx->size, hs_dtype_name(types[it]), buckets[ib], bad ? "DIFFER" : "bitwise equal", steps, worst);
            assert_true(bad == 0);
            /* fp64 and fp32 as test_gradient_allreduce and test_loss_curve; bf16 rounds the weights
             * to 8 bits, so a last-bit difference of the master weights may move a loss by 2^-8 */
            TEST_LE(worst, types[it] == HS_F64 ? 1e-12 : types[it] == HS_F32 ? 1e-5 : 1e-2);
            hs_surr_trainer_destroy(ton), hs_surr_trainer_destroy(toff), hs_surr_trainer_destroy(tref);
            hs_surr_data_close(dd), hs_surr_data_close(ds);
        }
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_gradient_allreduce),
    cmocka_unit_test(test_overlap_bitwise),
    cmocka_unit_test_teardown(test_loss_curve, test_tmp_cleanup),
};

TEST_MAIN("surrogate_mpi", tests)
