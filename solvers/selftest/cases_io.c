/* Self-check case of the I/O layer: a decomposed field through the writer and a checkpoint, read back bitwise. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/checkpoint.h"
#include "io/output.h"
#include "kernels/comm/comm.h"
#include "kernels/rng/rng.h"
#include "solvers/selftest/selftest.h"

int hs_selftest_io(hs_ctx *ctx, int64_t n, hs_selftest_result *r);

/* Fraction of values that differ bitwise. */
static double mismatch(const double *a, const double *b, int64_t n)
{
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) bad += memcmp(&a[i], &b[i], sizeof *a) != 0;
    return n ? (double)bad / (double)n : 0.0;
}

#if HS_HAVE_HDF5 || HS_HAVE_NETCDF
/* One record of a 1-D grid written by blocks (rank r owns a contiguous slice), read back on rank 0. */
static int output_round_trip(hs_ctx *ctx, const char *path, hs_output_format fmt, int64_t n, const double *g,
                             int64_t off, int64_t cnt, double *err)
{
    hs_output_desc d = {0};
    d.path = path;
    d.format = fmt;
    d.title = "hpcsim self-check";
    d.history = "hpcsim selftest";
    d.ndim = 1;
    d.dim_names[0] = "x";
    d.n[0] = n;
    d.coord_units[0] = "m";
    d.time_units = "seconds since 2000-01-01 00:00:00";
    hs_writer *w;
    int v;
    int64_t o[3] = {off, 0, 0}, c[3] = {cnt, 1, 1};
    HS_CHECK(hs_writer_open(ctx, &d, &w));
    HS_CHECK(hs_writer_def_var(w, "u", "1", "self-check field", NULL, HS_F64, 1, &v));
    HS_CHECK(hs_writer_begin_step(w, 1.0));
    HS_CHECK(hs_writer_put_block(w, v, o, c, g + off));
    HS_CHECK(hs_writer_close(w));
    *err = 0;
    if (ctx->rank != 0) return HS_OK;
    double *back = malloc((size_t)n * sizeof *back);
    hs_reader *rd;
    if (!back) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    int rc = hs_reader_open(path, &rd);
    if (rc == HS_OK) {
        rc = hs_reader_read_record(rd, "u", 0, back);
        hs_reader_close(rd);
    }
    if (rc == HS_OK) *err = mismatch(back, g, n);
    free(back);
    return rc;
}

#endif

static int checkpoint_round_trip(hs_ctx *ctx, const char *path, const double *mine, int64_t cnt, double *err)
{
    hs_checkpoint *c;
    int64_t step;
    double time;
    HS_CHECK(hs_checkpoint_create(ctx, path, "selftest", "[selftest]\n", 3, 0.5, HS_CKPT_FORMAT_AUTO, &c));
    HS_CHECK(hs_checkpoint_write(c, "u", HS_F64, cnt, mine));
    HS_CHECK(hs_checkpoint_close(c));
    double *back = malloc((size_t)(cnt ? cnt : 1) * sizeof *back);
    if (!back) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    int rc = hs_checkpoint_open(ctx, path, "selftest", &c, &step, &time);
    if (rc == HS_OK) {
        rc = hs_checkpoint_read(c, "u", HS_F64, cnt, back);
        hs_checkpoint_close(c);
    }
    *err = rc == HS_OK ? mismatch(back, mine, cnt) + (step != 3) + (time != 0.5) : 1.0;
    free(back);
    return rc;
}

static int run_all(hs_ctx *ctx, const char *dir, int64_t n, const double *g, int64_t off, int64_t cnt, double *worst)
{
    char path[512];
    double e = 0;
#if HS_HAVE_HDF5 || HS_HAVE_NETCDF
    snprintf(path, sizeof path, "%s/field.%s", dir, HS_HAVE_HDF5 ? "h5" : "nc");
    HS_CHECK(output_round_trip(ctx, path, HS_HAVE_HDF5 ? HS_FORMAT_HDF5 : HS_FORMAT_NETCDF, n, g, off, cnt, &e));
    *worst = e > *worst ? e : *worst;
#endif
    snprintf(path, sizeof path, "%s/state.ckpt", dir);
    HS_CHECK(checkpoint_round_trip(ctx, path, g + off, cnt, &e));
    *worst = e > *worst ? e : *worst;
    return HS_OK;
}

int hs_selftest_io(hs_ctx *ctx, int64_t n, hs_selftest_result *r)
{
    n = n < 1 ? 1 : n > (1 << 20) ? (1 << 20) : n;
    char dir[256] = "";
    if (ctx->rank == 0) {
        const char *t = getenv("TMPDIR");
        snprintf(dir, sizeof dir, "%s/hpcsim_selftest_io_XXXXXX", t && *t ? t : "/tmp");
        if (!mkdtemp(dir)) dir[0] = 0;
    }
    HS_CHECK(hs_host_bcast_bytes(ctx->comm, dir, sizeof dir, 0));
    if (!dir[0]) return HS_FAIL(HS_ERR_RUNTIME, "selftest io: cannot create a temporary directory");
    double *g = malloc((size_t)n * sizeof *g);
    if (!g) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    for (int64_t i = 0; i < n; i++) g[i] = hs_rng_u01(r->seed, 0x10, (uint64_t)i) * 2 - 1;
    int64_t off = n * ctx->rank / ctx->size, cnt = n * (ctx->rank + 1) / ctx->size - off;
    double worst = 0;
    int rc = run_all(ctx, dir, n, g, off, cnt, &worst);
    free(g);
    HS_CHECK(hs_host_barrier(ctx->comm));
    if (ctx->rank == 0) { /* only our own files are there */
        char path[600];
        const char *names[] = {"field.h5", "field.xmf", "field.nc", "state.ckpt"};
        for (int i = 0; i < 4; i++) {
            snprintf(path, sizeof path, "%s/%s", dir, names[i]);
            unlink(path);
        }
        rmdir(dir);
    }
    HS_CHECK(rc);
    HS_CHECK(hs_allreduce_max(ctx->comm, &worst, 1));
    r->error = worst;
    r->tolerance = 0.0; /* files must round-trip bitwise */
    return HS_OK;
}
