/* Checkpoint files: bitwise round trips of every type (HDF5 and binary formats), tmp -> final rename, bad files, non-finite states. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/checkpoint.h"
#include "io/checkpoint_impl.h"
#include "kernels/config.h"
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

/* Bytes of n elements of every type, with special floats in the f64/f32 arrays. */
static void fill(hs_dtype t, int64_t n, uint64_t seed, void *p)
{
    size_t bytes = (size_t)n * hs_dtype_size(t);
    hs_rng s;
    hs_rng_seed(&s, seed, 0);
    unsigned char *b = p;
    for (size_t i = 0; i < bytes; i++) b[i] = (unsigned char)(hs_rng_next(&s) >> 56);
    if (t == HS_F64 && n >= 4) {
        double *d = p;
        d[0] = NAN;
        d[1] = -0.0;
        d[2] = INFINITY;
        d[3] = 4.9e-324;
    }
    if (t == HS_F32 && n >= 2) {
        float *f = p;
        f[0] = -NAN;
        f[1] = 1e-45f;
    }
}

static const int64_t SIZES[] = {0, 1, 31, 1000};

static void write_all(hs_ctx *ctx, const char *path, const char *params)
{
    hs_checkpoint *c;
    int had = test_file_exists(path); /* an older checkpoint stays until the new one is complete */
    TEST_OK(hs_checkpoint_create(ctx, path, "heat", params, 1234567890123ll, 0.1 + 0.2, g_format, &c));
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    assert_true(test_file_exists(tmp));
    assert_int_equal(test_file_exists(path), had);
    for (int t = 0; t < 8; t++)
        for (int s = 0; s < 4; s++) {
            char name[32];
            void *p = malloc((size_t)SIZES[s] * 16 + 1);
            snprintf(name, sizeof name, "%s_%lld", hs_dtype_name((hs_dtype)t), (long long)SIZES[s]);
            fill((hs_dtype)t, SIZES[s], 100 * t + s, p);
            TEST_OK(hs_checkpoint_write(c, name, (hs_dtype)t, SIZES[s], p));
            free(p);
        }
    assert_int_equal(hs_checkpoint_write(c, "f64_1", HS_F64, 1, &(double){1}), HS_ERR_RUNTIME); /* twice */
    hs_error_clear();
    TEST_OK(hs_checkpoint_close(c));
    assert_false(test_file_exists(tmp));
    assert_true(test_file_exists(path));
}

static void read_all(hs_ctx *ctx, const char *path, const char *params)
{
    hs_checkpoint *c;
    int64_t step;
    double time;
    TEST_OK(hs_checkpoint_open(ctx, path, "heat", &c, &step, &time));
    assert_int_equal(step, 1234567890123ll);
    assert_true(time == 0.1 + 0.2);
    assert_string_equal(hs_checkpoint_params(c), params);
    for (int t = 0; t < 8; t++)
        for (int s = 0; s < 4; s++) {
            char name[32];
            size_t bytes = (size_t)SIZES[s] * hs_dtype_size((hs_dtype)t);
            unsigned char *want = malloc(bytes + 1), *got = malloc(bytes + 1);
            snprintf(name, sizeof name, "%s_%lld", hs_dtype_name((hs_dtype)t), (long long)SIZES[s]);
            fill((hs_dtype)t, SIZES[s], 100 * t + s, want);
            memset(got, 0xA5, bytes + 1);
            TEST_OK(hs_checkpoint_read(c, name, (hs_dtype)t, SIZES[s], got));
            assert_memory_equal(got, want, bytes); /* bitwise, NaN payloads included */
            assert_int_equal(got[bytes], 0xA5);    /* nothing written past the end */
            free(want);
            free(got);
        }
    double x[31];
    assert_int_equal(hs_checkpoint_read(c, "missing", HS_F64, 1, x), HS_ERR_INPUT);
    assert_int_equal(hs_checkpoint_read(c, "f64_31", HS_F32, 31, x), HS_ERR_INPUT);
    assert_int_equal(hs_checkpoint_read(c, "f64_31", HS_F64, 30, x), HS_ERR_INPUT);
    hs_error_clear();
    TEST_OK(hs_checkpoint_close(c));
}

static void test_round_trip(void **state)
{
    hs_ctx *ctx = test_ctx();
    /* a parameter text larger than an HDF5 object header (64 KiB) */
    size_t big = 100000;
    char *params = malloc(big + 1);
    for (size_t i = 0; i < big; i++) params[i] = i % 61 == 60 ? '\n' : (char)('a' + i % 26);
    params[big] = 0;
    for (size_t f = 0; f < NFORMATS; f++) {
        char name[64];
        g_format = FORMAT_IDS[f];
        snprintf(name, sizeof name, "rt_%s.ckpt", FORMATS[f]);
        write_all(ctx, test_tmp_path(name), params);
        read_all(ctx, test_tmp_path(name), params);
        write_all(ctx, test_tmp_path(name), "[heat]\nn = 3\n"); /* replaces the old file */
        read_all(ctx, test_tmp_path(name), "[heat]\nn = 3\n");
    }
    g_format = HS_CKPT_FORMAT_AUTO;
    free(params);
}

static void small_file(hs_ctx *ctx, const char *path)
{
    hs_checkpoint *c;
    double v[3] = {1, 2, 3};
    TEST_OK(hs_checkpoint_create(ctx, path, "heat", "", 7, 1.5, g_format, &c));
    TEST_OK(hs_checkpoint_write(c, "u", HS_F64, 3, v));
    TEST_OK(hs_checkpoint_close(c));
}

static void test_wrong_solver_and_ranks(void **state)
{
    hs_ctx *ctx = test_ctx();
    for (size_t f = 0; f < NFORMATS; f++) {
        char name[64];
        g_format = FORMAT_IDS[f];
        snprintf(name, sizeof name, "who_%s.ckpt", FORMATS[f]);
        const char *p = test_tmp_path(name);
        small_file(ctx, p);
        hs_checkpoint *c = NULL;
        int64_t step;
        double time;
        hs_error_clear();
        assert_int_equal(hs_checkpoint_open(ctx, p, "cfd", &c, &step, &time), HS_ERR_INPUT);
        assert_non_null(strstr(hs_error_message(), p));
        assert_non_null(strstr(hs_error_message(), "solver 'heat', not 'cfd'"));
        hs_error_clear();
        assert_null(c);
        /* the same process posing as a 2-rank run: only the stored rank count is compared */
        hs_ctx two = *ctx;
        two.size = 2;
        assert_int_equal(hs_checkpoint_open(&two, p, "heat", &c, &step, &time), HS_ERR_INPUT);
        assert_non_null(strstr(hs_error_message(), "written by 1 MPI rank, this run has 2"));
        hs_error_clear();
    }
    g_format = HS_CKPT_FORMAT_AUTO;
}

static void test_bad_files(void **state)
{
    hs_ctx *ctx = test_ctx();
    hs_checkpoint *c = NULL;
    int64_t step;
    double time;
    assert_int_equal(hs_checkpoint_open(ctx, test_tmp_path("none.ckpt"), "heat", &c, &step, &time), HS_ERR_INPUT);
    const char *p = test_tmp_path("garbage.ckpt");
    FILE *f = fopen(p, "w");
    fputs("not a checkpoint at all, just text\n", f);
    fclose(f);
    hs_error_clear();
    assert_int_equal(hs_checkpoint_open(ctx, p, "heat", &c, &step, &time), HS_ERR_INPUT);
    assert_non_null(strstr(hs_error_message(), "garbage.ckpt"));
    hs_error_clear();
    /* a flipped byte in the data of a binary checkpoint fails its checksum */
    g_format = HS_CKPT_FORMAT_BINARY;
    p = test_tmp_path("flip.ckpt");
    small_file(ctx, p);
    g_format = HS_CKPT_FORMAT_AUTO;
    f = fopen(p, "r+b");
    fseek(f, -20, SEEK_END); /* inside the array's data (before the end tag and hash) */
    int ch = fgetc(f);
    fseek(f, -20, SEEK_END);
    fputc(ch ^ 0x10, f);
    fclose(f);
    assert_int_equal(hs_checkpoint_open(ctx, p, "heat", &c, &step, &time), HS_ERR_INPUT);
    assert_non_null(strstr(hs_error_message(), "checksum mismatch"));
    hs_error_clear();
    /* a truncated one */
    p = test_tmp_path("short.ckpt");
    g_format = HS_CKPT_FORMAT_BINARY;
    small_file(ctx, p);
    g_format = HS_CKPT_FORMAT_AUTO;
    assert_int_equal(truncate(p, 40), 0);
    assert_int_equal(hs_checkpoint_open(ctx, p, "heat", &c, &step, &time), HS_ERR_INPUT);
    hs_error_clear();
    assert_null(c);
}

/* A binary checkpoint of 2 ranks with one f64 array "u" whose counts are c0 and c1, no data, and
 * `text_len` as the stored length of the parameter text ("" follows whatever it says). */
static void damaged_binary(const char *path, int64_t c0, int64_t c1, uint64_t text_len)
{
    FILE *f = fopen(path, "wb");
    uint32_t head[5] = {1, 0x01020304u, 2, 0, 0}, slen = 4, arr[4] = {1, 1, HS_F64, 0};
    int64_t step = 1, counts[2] = {c0, c1};
    double time = 0;
    fwrite("\x89HSCKPT\n", 1, 8, f);
    fwrite(head, sizeof head[0], 4, f);
    fwrite(&step, sizeof step, 1, f);
    fwrite(&time, sizeof time, 1, f);
    fwrite(&slen, sizeof slen, 1, f);
    fwrite("heat", 1, 4, f);
    fwrite(&text_len, sizeof text_len, 1, f);
    fwrite(arr, sizeof arr[0], 2, f);
    fputc('u', f);
    fwrite(arr + 2, sizeof arr[0], 2, f);
    fwrite(counts, sizeof counts[0], 2, f);
    fwrite(&head[4], sizeof head[4], 1, f); /* end tag; no hash: the counts are refused first */
    fclose(f);
}

/* Counts a damaged file stores are checked before they are summed or used (2^62 + 2^62 was a
 * signed overflow, found by UBSan), in both formats through hs_ckpt_check_counts. */
static void test_damaged_counts(void **state)
{
    hs_ctx *ctx = test_ctx();
    hs_checkpoint *c = NULL;
    int64_t step, total = -1;
    double time;
    const char *p = test_tmp_path("counts.ckpt");
    const int64_t big = (int64_t)1 << 62;
    struct {
        int64_t c0, c1;
        uint64_t text_len;
        const char *msg;
    } cases[] = {
        {big, big, 0, "u: checkpoint is damaged (the ranks' counts add up to more than the file holds)"},
        {0, 1, 0, "u: checkpoint is damaged (the ranks' counts add up to more than the file holds)"},
        {0, -3, 0, "u: checkpoint is damaged (rank 1's count is negative)"},
        {0, 0, (uint64_t)1 << 40, "checkpoint header is damaged"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        damaged_binary(p, cases[i].c0, cases[i].c1, cases[i].text_len);
        hs_error_clear();
        assert_int_equal(hs_checkpoint_open(ctx, p, "heat", &c, &step, &time), HS_ERR_INPUT);
        assert_non_null(strstr(hs_error_message(), cases[i].msg));
        assert_null(c);
    }
    hs_error_clear();
    /* the check itself, as the HDF5 reader calls it with the elements its dataset holds */
    hs_checkpoint fake = {.nranks = 2, .path = (char *)"fake.h5"};
    int64_t ok[2] = {2, 3}, over[2] = {big, big};
    TEST_OK(hs_ckpt_check_counts(&fake, "z", ok, 5, &total));
    assert_int_equal(total, 5);
    assert_int_equal(hs_ckpt_check_counts(&fake, "z", ok, 4, &total), HS_ERR_INPUT);
    assert_int_equal(hs_ckpt_check_counts(&fake, "z", over, INT64_MAX, &total), HS_ERR_INPUT);
    assert_non_null(strstr(hs_error_message(), "fake.h5: z: checkpoint is damaged (the ranks' counts add up"));
    hs_error_clear();
}

/* A solver's state with a NaN or an infinity: hs_checkpoint_write_state refuses it (runtime error
 * naming the array and element, nothing of it written), and hs_checkpoint_read_state refuses one
 * that a plain write stored (an input error about the file: a checkpoint of a run that had blown
 * up); finite states pass both, and integer arrays are not looked at. */
static void test_state_finite(void **state)
{
    hs_ctx *ctx = test_ctx();
    for (size_t f = 0; f < NFORMATS; f++) {
        g_format = FORMAT_IDS[f];
        char path[64];
        snprintf(path, sizeof path, "state_%s.ckpt", FORMATS[f]);
        const char *p = test_tmp_path(path);
        double good[4] = {1, -2, 1e300, 4.9e-324}, bad[4] = {1, 2, INFINITY, 4}, cbad[4] = {0, 0, 1, NAN};
        float fbad[3] = {1, NAN, 3};
        int64_t ints[2] = {INT64_MAX, -1};
        hs_checkpoint *c;
        TEST_OK(hs_checkpoint_create(ctx, p, "heat", "", 12, 0.5, g_format, &c));
        TEST_OK(hs_checkpoint_write_state(c, "good", HS_F64, 4, good));
        TEST_OK(hs_checkpoint_write_state(c, "ints", HS_I64, 2, ints));
        assert_int_equal(hs_checkpoint_write_state(c, "T", HS_F64, 4, bad), HS_ERR_RUNTIME);
        assert_non_null(strstr(hs_error_message(), "at step 12 (t = 0.5) the state 'T' holds a NaN or an infinity (element 2 of rank 0's part)"));
        hs_error_clear();
        assert_int_equal(hs_checkpoint_write_state(c, "c", HS_C128, 2, cbad), HS_ERR_RUNTIME); /* element 1's imaginary part */
        assert_non_null(strstr(hs_error_message(), "(element 1 of rank 0's part)"));
        hs_error_clear();
        assert_int_equal(hs_checkpoint_write_state(c, "f", HS_F32, 3, fbad), HS_ERR_RUNTIME);
        hs_error_clear();
        /* what an older version wrote without looking */
        TEST_OK(hs_checkpoint_write(c, "T", HS_F64, 4, bad));
        TEST_OK(hs_checkpoint_close(c));
        int64_t step;
        double time, x[4];
        TEST_OK(hs_checkpoint_open(ctx, p, "heat", &c, &step, &time));
        TEST_OK(hs_checkpoint_read_state(c, "good", HS_F64, 4, x));
        assert_memory_equal(x, good, sizeof good);
        assert_int_equal(hs_checkpoint_read_state(c, "T", HS_F64, 4, x), HS_ERR_INPUT);
        assert_non_null(strstr(hs_error_message(), "the state 'T' holds a NaN or an infinity (element 2 of rank 0's part): a checkpoint of a run that had blown up"));
        hs_error_clear();
        TEST_OK(hs_checkpoint_close(c));
    }
    g_format = HS_CKPT_FORMAT_AUTO;
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_round_trip),
    cmocka_unit_test(test_wrong_solver_and_ranks),
    cmocka_unit_test_teardown(test_bad_files, test_tmp_cleanup),
    cmocka_unit_test_teardown(test_damaged_counts, test_tmp_cleanup),
    cmocka_unit_test_teardown(test_state_finite, test_tmp_cleanup),
};

TEST_MAIN("checkpoint", tests)
