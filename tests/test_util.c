/* Helpers shared by the C tests (see test_util.h). */
#include "test_util.h"

#include "kernels/comm/comm.h"
#include "kernels/dispatch.h"
#include "kernels/memory.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static hs_ctx *g_ctx;

hs_ctx *test_ctx(void)
{
    if (!g_ctx) {
        const char *dev = getenv("HS_TEST_DEVICE");
        if (hs_ctx_create(NULL, NULL, dev && *dev ? dev : "cpu", 1, &g_ctx) != HS_OK) {
            fprintf(stderr, "test context: %s\n", hs_error_message());
            exit(1);
        }
        /* wait for the driver's initialisation, which runs in a thread: several tests set
         * environment variables, and glibc's getenv in cuInit must not race with setenv */
        (void)hs_cuda_device_count();
    }
    return g_ctx;
}

int test_on_gpu(void) { return HS_ON_GPU(test_ctx()); }

void test_ctx_finish(void)
{
    hs_ctx_destroy(g_ctx);
    g_ctx = NULL;
}

void *test_upload(const void *h, size_t bytes)
{
    void *d = NULL;
    TEST_OK(hs_mem_alloc(test_ctx(), bytes ? bytes : 8, &d));
    if (bytes && h) TEST_OK(hs_mem_copy(test_ctx(), d, h, bytes, HS_COPY_H2D));
    return d;
}

void test_download(void *h, const void *d, size_t bytes)
{
    if (bytes) TEST_OK(hs_mem_copy(test_ctx(), h, d, bytes, HS_COPY_D2H));
}

void *test_download_new(const void *d, size_t bytes)
{
    void *h = malloc(bytes + 1);
    if (!h) fail_msg("out of host memory for %zu bytes", bytes);
    test_download(h, d, bytes);
    return h;
}

static char g_tmp_dir[256];

const char *test_tmp_path(const char *name)
{
    static char buf[4][512];
    static int k;
    hs_ctx *ctx = test_ctx();
    if (!g_tmp_dir[0]) {
        if (ctx->rank == 0) {
            /* mkdtemp replaces the name's last six characters, which must all be 'X', with a
             * unique suffix and creates the folder */
            static const char prefix[] = "/tmp/hs_test_";
            const size_t len = sizeof prefix - 1;
            memcpy(g_tmp_dir, prefix, len);
            memset(g_tmp_dir + len, 'X', 6);
            g_tmp_dir[len + 6] = '\0';
            if (!mkdtemp(g_tmp_dir)) g_tmp_dir[0] = 0;
        }
        MPI_Bcast(g_tmp_dir, sizeof g_tmp_dir, MPI_CHAR, 0, ctx->comm);
        if (!g_tmp_dir[0]) fail_msg("mkdtemp failed");
    } else if (mkdir(g_tmp_dir, 0700) != 0 && errno != EEXIST) {
        /* made again after a test_tmp_cleanup teardown removed it (a later test was handed paths in
         * the removed folder, and its fopen failed); by whichever rank asks, so not collective */
        fail_msg("mkdir %s: %s", g_tmp_dir, strerror(errno));
    }
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", g_tmp_dir, name);
    return buf[k];
}

int test_tmp_cleanup(void **state)
{
    (void)state;
    hs_ctx *ctx = test_ctx();
    MPI_Barrier(ctx->comm);
    if (ctx->rank == 0 && g_tmp_dir[0]) {
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_tmp_dir);
        if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g_tmp_dir);
    }
    return 0;
}

int test_file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

void test_fill_f64(double *x, size_t n, uint64_t seed, double lo, double hi)
{
    for (size_t i = 0; i < n; i++) x[i] = lo + (hi - lo) * hs_rng_u01(seed, 0, i);
}

void test_fill_f32(float *x, size_t n, uint64_t seed, float lo, float hi)
{
    for (size_t i = 0; i < n; i++) x[i] = lo + (hi - lo) * (float)((hs_rng_u64(seed, 0, i) >> 40) * 0x1.0p-24);
}

double test_rel_err_f64(const double *a, const double *b, size_t n)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        double d = a[i] - b[i];
        if (isnan(a[i]) != isnan(b[i])) return INFINITY;
        num += d * d;
        den += b[i] * b[i];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

double test_rel_err_f32(const float *a, const float *b, size_t n)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        double d = (double)a[i] - (double)b[i];
        if (isnan(a[i]) != isnan(b[i])) return INFINITY;
        num += d * d;
        den += (double)b[i] * b[i];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

int test_run_group(const char *name, const struct CMUnitTest *tests, size_t count)
{
    hs_ctx *ctx = test_ctx();
    if (ctx->rank != 0) cmocka_set_message_output(CM_OUTPUT_STDOUT);
    /* HS_TEST_FILTER=glob runs only the matching tests of a group (while working on one) */
    if (getenv("HS_TEST_FILTER")) cmocka_set_test_filter(getenv("HS_TEST_FILTER"));
    int failed = _cmocka_run_group_tests(name, tests, count, NULL, NULL);
    /* every rank must agree on the outcome, or a failing rank's status would be lost */
    int any = failed != 0;
    hs_allreduce_int_max(ctx->comm, &any, 1);
    test_ctx_finish();
    return any ? 1 : 0;
}
