/* Helpers shared by the C tests: the test context, seeded random data, error norms, assertions. */
#ifndef HS_TEST_UTIL_H
#define HS_TEST_UTIL_H

/* helpers used only by the cases of one output format: unused in a build without that library */
#define TEST_MAYBE_UNUSED __attribute__((unused))

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "kernels/context.h"
#include "kernels/error.h"
#include "kernels/rng/rng.h"

/* The context the tests run on: backend from HS_TEST_DEVICE (cpu | cuda, default cpu); several
 * ranks may share one GPU here.  Created once per process, destroyed by test_ctx_finish. */
hs_ctx *test_ctx(void);
void test_ctx_finish(void);
/* 1 when the tests run on the CUDA backend. */
int test_on_gpu(void);

/* Seeded uniform values in [lo, hi) from the kernel RNG (kernels/rng/rng.h, stream 0 of `seed`),
 * identical on every machine.  Other seeded draws in tests use hs_rng directly. */
void test_fill_f64(double *x, size_t n, uint64_t seed, double lo, double hi);
void test_fill_f32(float *x, size_t n, uint64_t seed, float lo, float hi);

/* A new buffer of the test context (device memory on CUDA) holding a copy of h's `bytes` (left
 * uninitialised when h is NULL); at least 8 bytes are allocated, so it is never NULL.  Free with
 * hs_mem_free(test_ctx(), ...). */
void *test_upload(const void *h, size_t bytes);
/* Copy `bytes` of the context's buffer d into h. */
void test_download(void *h, const void *d, size_t bytes);
/* A new malloc'd host copy of the context's buffer d (never NULL). */
void *test_download_new(const void *d, size_t bytes);

/* Path of `name` in the test program's scratch folder, made on first use (by rank 0 of the test
 * context, shared with the other ranks: collective on that first call; made again, by any rank, after
 * a test_tmp_cleanup removed it).  Four calls' results stay valid at a time. */
const char *test_tmp_path(const char *name);
/* The extension of the files a solver writes under output.format = auto: NetCDF where the build has
 * it, else HDF5 (the GPU machine has no NetCDF). */
#define TEST_AUTO_EXT (HS_HAVE_NETCDF ? ".nc" : ".h5")
/* Removes the scratch folder (collective); a cmocka teardown. */
int test_tmp_cleanup(void **state);
/* 1 when path exists. */
int test_file_exists(const char *path);

/* ||a - b|| / ||b|| (2-norm; absolute when ||b|| == 0). */
double test_rel_err_f64(const double *a, const double *b, size_t n);
double test_rel_err_f32(const float *a, const float *b, size_t n);

/* Assert an hs call succeeded, printing the pending error message when it did not. */
#define TEST_OK(call)                                                                  \
    do {                                                                               \
        int test_rc_ = (call);                                                         \
        if (test_rc_ != HS_OK) fail_msg("%s returned %d: %s", #call, test_rc_, hs_error_message()); \
    } while (0)

/* Assert a value is within tol, printing both. */
#define TEST_LE(value, tol)                                                            \
    do {                                                                               \
        double test_v_ = (value), test_t_ = (tol);                                     \
        if (!(test_v_ <= test_t_)) fail_msg("%s = %.3e exceeds %.3e", #value, test_v_, test_t_); \
    } while (0)

/* Run a cmocka group on the test context, then finish MPI; returns the process exit status. */
int test_run_group(const char *name, const struct CMUnitTest *tests, size_t count);
#define TEST_MAIN(name, tests) \
    int main(void) { return test_run_group(name, tests, sizeof(tests) / sizeof((tests)[0])); }

#endif
