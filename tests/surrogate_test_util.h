/* Helpers of the surrogate's tests: small CF files of an analytic flow (written by our own writer) and
 * a small architecture. */
#ifndef HS_SURROGATE_TEST_UTIL_H
#define HS_SURROGATE_TEST_UTIL_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "io/output.h"
#include "ml_surrogate/surrogate.h"
#include "test_util.h"

/* A pattern advected through a periodic box and rotating slowly, two variables:
 *   a(t, y, x) = sin(2 pi (x - u t)) cos(2 pi y + w t) + 0.3 sin(4 pi (y - v t))
 *   b(t, y, x) = cos(2 pi (x + y) - phase - 0.5 t)
 * on [0, 1)^2, frames at t = 0.1 j (seconds since 2000-01-01).  `phase` makes trajectories differ;
 * nan_at >= 0 puts a NaN into a at that frame.  Collective over the test context. */
static inline void surr_test_file(const char *path, int nt, int ny, int nx, double phase, int nan_at)
{
    hs_ctx *ctx = test_ctx();
    double *x = malloc(nx * sizeof *x), *y = malloc(ny * sizeof *y);
    for (int i = 0; i < nx; i++) x[i] = (i + 0.5) / nx;
    for (int j = 0; j < ny; j++) y[j] = (j + 0.5) / ny;
    hs_output_desc d;
    memset(&d, 0, sizeof d);
    d.path = path, d.format = HS_HAVE_NETCDF ? HS_FORMAT_NETCDF : HS_FORMAT_HDF5;
    d.title = "surrogate test pattern", d.history = "test", d.params_ini = "";
    d.ndim = 2, d.dim_names[0] = "x", d.dim_names[1] = "y", d.n[0] = nx, d.n[1] = ny;
    d.coords[0] = x, d.coords[1] = y, d.coord_units[0] = d.coord_units[1] = "m";
    d.coord_long_names[0] = "x", d.coord_long_names[1] = "y";
    d.time_units = "seconds since 2000-01-01 00:00:00";
    hs_writer *w;
    TEST_OK(hs_writer_open(ctx, &d, &w));
    int va, vb;
    TEST_OK(hs_writer_def_var(w, "a", "1", "advected pattern", NULL, HS_F64, 1, &va));
    TEST_OK(hs_writer_def_var(w, "b", "m s-1", "travelling wave", NULL, HS_F64, 1, &vb));
    double *fa = malloc((size_t)nx * ny * sizeof *fa), *fb = malloc((size_t)nx * ny * sizeof *fb);
    for (int t = 0; t < nt; t++) {
        double tt = 0.1 * t;
        for (int j = 0; j < ny; j++)
            for (int i = 0; i < nx; i++) {
                size_t o = (size_t)j * nx + i;
                fa[o] = sin(2 * M_PI * (x[i] - 0.5 * tt)) * cos(2 * M_PI * y[j] + 0.3 * tt) + 0.3 * sin(4 * M_PI * (y[j] - 0.2 * tt));
                fb[o] = cos(2 * M_PI * (x[i] + y[j]) - phase - 0.5 * tt);
            }
        if (t == nan_at) fa[ny / 2 * nx + 1] = NAN;
        TEST_OK(hs_writer_begin_step(w, tt));
        hs_writer_put(w, va, ctx->rank == 0 ? fa : NULL); /* a NaN fails the put after writing it */
        hs_error_clear();
        TEST_OK(hs_writer_put(w, vb, ctx->rank == 0 ? fb : NULL));
    }
    TEST_OK(hs_writer_close(w));
    free(x), free(y), free(fa), free(fb);
}

/* A small network: 2 variables, 2 layers of 4 and 3 channels with 3x3 and 1x1 gates, an input
 * head of 3 channels, a 3x3 output head. */
static inline void surr_test_arch(hs_surr_arch *a, hs_dtype t, int ny, int nx, int k, int m)
{
    memset(a, 0, sizeof *a);
    a->nvars = 2, a->ny = ny, a->nx = nx, a->k_in = k, a->k_out = m;
    a->nlayers = 2, a->hidden[0] = 4, a->hidden[1] = 3, a->kernel[0] = 3, a->kernel[1] = 1;
    a->head_channels = 3, a->head_kernel = 3, a->out_kernel = 3, a->residual = 1, a->dtype = t;
}

#endif
