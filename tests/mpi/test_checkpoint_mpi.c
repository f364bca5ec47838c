/* Checkpoints under MPI: uneven per-rank arrays round-trip bitwise; a different rank count is refused. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "io/checkpoint.h"
#include "kernels/comm/comm.h"
#include "test_util.h"

static const char *FORMATS[] = {
#if HS_HAVE_HDF5
    "hdf5",
#endif
    "binary"};
#define NFORMATS (sizeof FORMATS / sizeof FORMATS[0])
static const int FORMAT_IDS[] = {
#if HS_HAVE_HDF5
    HS_CKPT_FORMAT_HDF5,
#endif
    HS_CKPT_FORMAT_BINARY};
static int g_format = HS_CKPT_FORMAT_AUTO; /* checkpoint.format of the files the tests write */

/* Rank r holds 3 + 5 r values, except rank 1 which holds none. */
static int64_t my_count(const hs_ctx *ctx) { return ctx->rank == 1 ? 0 : 3 + 5 * ctx->rank; }

static void fill(hs_dtype t, int64_t n, uint64_t seed, void *p)
{
    size_t bytes = (size_t)n * hs_dtype_size(t);
    hs_rng s;
    hs_rng_seed(&s, seed, 0);
    unsigned char *b = p;
    for (size_t i = 0; i < bytes; i++) b[i] = (unsigned char)(hs_rng_next(&s) >> 56);
}

static const hs_dtype TYPES[] = {HS_F64, HS_F32, HS_I64, HS_C128};

static void test_round_trip(void **state)
{
    hs_ctx *ctx = test_ctx();
    int64_t n = my_count(ctx);
    for (size_t f = 0; f < NFORMATS; f++) {
        char name[64];
        g_format = FORMAT_IDS[f];
        snprintf(name, sizeof name, "rt_%s.ckpt", FORMATS[f]);
        char path[512];
        snprintf(path, sizeof path, "%s", test_tmp_path(name));
        hs_checkpoint *c;
        TEST_OK(hs_checkpoint_create(ctx, path, "cfd", "[cfd]\nn = 8\n", 42, 2.5, g_format, &c));
        for (int t = 0; t < 4; t++) {
            unsigned char *p = malloc((size_t)n * 16 + 1);
            fill(TYPES[t], n, 1000 * ctx->rank + t, p);
            snprintf(name, sizeof name, "a%d", t);
            TEST_OK(hs_checkpoint_write(c, name, TYPES[t], n, p));
            free(p);
        }
        TEST_OK(hs_checkpoint_close(c));
        int64_t step;
        double time;
        TEST_OK(hs_checkpoint_open(ctx, path, "cfd", &c, &step, &time));
        assert_int_equal(step, 42);
        assert_true(time == 2.5);
        assert_string_equal(hs_checkpoint_params(c), "[cfd]\nn = 8\n");
        for (int t = 0; t < 4; t++) {
            size_t bytes = (size_t)n * hs_dtype_size(TYPES[t]);
            unsigned char *want = malloc(bytes + 1), *got = malloc(bytes + 1);
            fill(TYPES[t], n, 1000 * ctx->rank + t, want);
            snprintf(name, sizeof name, "a%d", t);
            TEST_OK(hs_checkpoint_read(c, name, TYPES[t], n, got));
            assert_memory_equal(got, want, bytes);
            free(want);
            free(got);
        }
        /* a rank asking for a different count than it stored: an input error everywhere */
        double x[64];
        int64_t wrong = ctx->rank == ctx->size - 1 ? n + 1 : n;
        assert_int_equal(hs_checkpoint_read(c, "a0", HS_F64, wrong, x), HS_ERR_INPUT);
        hs_error_clear();
        TEST_OK(hs_checkpoint_close(c));
    }
    g_format = HS_CKPT_FORMAT_AUTO;
}

/* A checkpoint written by rank 0 alone cannot be opened by a run of several ranks. */
static void test_rank_count_mismatch(void **state)
{
    hs_ctx *ctx = test_ctx();
    if (ctx->size == 1) return; /* needs a second rank */
    for (size_t f = 0; f < NFORMATS; f++) {
        char name[64], path[512];
        g_format = FORMAT_IDS[f];
        snprintf(name, sizeof name, "solo_%s.ckpt", FORMATS[f]);
        snprintf(path, sizeof path, "%s", test_tmp_path(name));
        if (ctx->rank == 0) {
            hs_ctx solo = *ctx;
            solo.comm = MPI_COMM_SELF;
            solo.size = 1;
            hs_checkpoint *c;
            double v = 1;
            TEST_OK(hs_checkpoint_create(&solo, path, "cfd", "", 1, 0.0, g_format, &c));
            TEST_OK(hs_checkpoint_write(c, "u", HS_F64, 1, &v));
            TEST_OK(hs_checkpoint_close(c));
        }
        MPI_Barrier(ctx->comm);
        hs_checkpoint *c = NULL;
        int64_t step;
        double time;
        hs_error_clear();
        assert_int_equal(hs_checkpoint_open(ctx, path, "cfd", &c, &step, &time), HS_ERR_INPUT);
        if (ctx->rank == 0) {
            char want[128];
            snprintf(want, sizeof want, "written by 1 MPI rank, this run has %d", ctx->size);
            assert_non_null(strstr(hs_error_message(), want));
            assert_non_null(strstr(hs_error_message(), path));
        }
        hs_error_clear();
        assert_null(c);
    }
    g_format = HS_CKPT_FORMAT_AUTO;
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_round_trip),
    cmocka_unit_test_teardown(test_rank_count_mismatch, test_tmp_cleanup),
};

TEST_MAIN("checkpoint_mpi", tests)
