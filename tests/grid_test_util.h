/* Helpers shared by the grid tests: a per-cell global function, typed host copies, the expected
 * content of every allocated cell after a halo exchange. */
#ifndef HS_GRID_TEST_UTIL_H
#define HS_GRID_TEST_UTIL_H

#include <stdlib.h>
#include <string.h>

#include "kernels/grid/grid.h"
#include "test_util.h"

#define SENTINEL (-7.0)

/* rc is an input error whose message contains fragment (the error is cleared). */
static void expect_input_error(int rc, const char *fragment)
{
    assert_int_equal(rc, HS_ERR_INPUT);
    if (!strstr(hs_error_message(), fragment)) fail_msg("message \"%s\" lacks \"%s\"", hs_error_message(), fragment);
    hs_error_clear();
}

/* The value stored at global point (i, j, k) of f (a cell, or a face of a face-centred field):
 * distinct per point, exact in f32 for the sizes here. */
static double gval(const hs_field *f, int64_t i, int64_t j, int64_t k)
{
    return 1.0 + (double)(i + f->global[0] * (j + f->global[1] * k));
}

static inline size_t local_count(const hs_decomp *d) { return (size_t)(d->local[0] * d->local[1] * d->local[2]); }

/* Host array of local interior values in the field's type from a double array. */
static void *to_type(hs_dtype t, const double *x, size_t n)
{
    void *out = malloc(n * 8 + 8);
    for (size_t i = 0; i < n; i++) {
        if (t == HS_F64) ((double *)out)[i] = x[i];
        else ((float *)out)[i] = (float)x[i];
    }
    return out;
}

/* Interior := gval at the global index, halos := SENTINEL. */
static void fill_global_fn(hs_field *f)
{
    size_t n = (size_t)(f->local[0] * f->local[1] * f->local[2]), p = 0;
    double *v = malloc(n * sizeof *v + 8);
    for (int64_t k = 0; k < f->local[2]; k++)
        for (int64_t j = 0; j < f->local[1]; j++)
            for (int64_t i = 0; i < f->local[0]; i++)
                v[p++] = gval(f, f->offset[0] + i, f->offset[1] + j, f->offset[2] + k);
    void *h = to_type(f->dtype, v, n);
    TEST_OK(hs_field_fill(f, SENTINEL));
    TEST_OK(hs_field_set_interior(f, h));
    free(h);
    free(v);
}

/* What allocated point (i, j, k) must hold after an exchange: the (periodically wrapped) global
 * function, or the untouched sentinel outside the domain and, without corners, on edges/corners.
 * (A periodic face dimension has as many faces as cells: face n is face 0.) */
static double expected(const hs_field *f, int corners, int64_t i, int64_t j, int64_t k)
{
    const hs_decomp *d = f->d;
    int64_t loc[3] = {i, j, k}, g[3];
    int nout = 0;
    for (int e = 0; e < 3; e++) {
        nout += loc[e] < 0 || loc[e] >= f->local[e];
        g[e] = f->offset[e] + loc[e];
        if (g[e] < 0 || g[e] >= f->global[e]) {
            if (!d->periodic[e]) return SENTINEL;
            g[e] = (g[e] % f->global[e] + f->global[e]) % f->global[e];
        }
    }
    if (nout >= 2 && !corners) return SENTINEL;
    return gval(f, g[0], g[1], g[2]);
}

#endif
