/* Benchmark of halo exchange: a 512^3 f64 periodic field, halo 1 and 4, on the ranks given; pack kernels vs copy bandwidth. */
#include <stdio.h>
#include <stdlib.h>

#include "bench/bench_util.h"
#include "kernels/grid/grid.h"
#include "kernels/memory.h"

typedef struct {
    hs_field *f;
    int dim, peer;
    double bytes;
} job;

static int run_exchange(void *a) { return hs_halo_exchange(((job *)a)->f); }

static int run_pack(void *a)
{
    job *j = a;
    return hs_halo_bench_pack(j->f, j->dim, j->peer, &j->bytes);
}

/* The slowest rank's time: an exchange is only as fast as its last neighbour. */
static double slowest(hs_ctx *ctx, double t)
{
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, ctx->comm);
    return t;
}

static double total(hs_ctx *ctx, double v)
{
    MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, MPI_SUM, ctx->comm);
    return v;
}

static void bench_pack_rows(hs_ctx *ctx, job *j, const char *size)
{
    static const char *names[] = {"halo_pack x faces", "halo_pack y faces", "halo_pack z faces", "halo_pack all"};
    int gpu = HS_ON_GPU(ctx);
    for (int dim = 0; dim <= 3; dim++) {
        j->dim = dim == 3 ? -1 : dim;
        j->peer = 0;
        double t = slowest(ctx, bench_time(run_pack, j, 2, 10)), bytes = j->bytes, tp = 0;
        if (gpu) {
            j->peer = 1;
            tp = slowest(ctx, bench_time(run_pack, j, 2, 10));
        }
        if (bytes > 0) bench_row(names[dim], size, "f64", t, bytes, 0, gpu ? "cudaMemcpy3D" : NULL, tp);
    }
}

static void bench_width(hs_ctx *ctx, hs_decomp *d, int halo, const char *gsize)
{
    hs_field *f = NULL;
    bench_check(hs_field_create(d, HS_F64, halo, &f), "field");
    bench_check(hs_field_fill(f, 1.0), "fill");
    job j = {f, -1, 0, 0};
    char size[64];
    snprintf(size, sizeof size, "%s h=%d", gsize, halo);
    bench_pack_rows(ctx, &j, size);
    for (int corners = 0; corners < 2; corners++) {
        bench_check(hs_field_set_corners(f, corners), "corners");
        /* device traffic: every face packed (read + write) and every received face unpacked */
        double pack = 0;
        bench_check(hs_halo_bench_pack(f, -1, 0, &pack), "pack bytes");
        double msg = total(ctx, hs_halo_message_bytes(f)), bytes = pack + hs_halo_message_bytes(f);
        double t = slowest(ctx, bench_time(run_exchange, &j, 3, 20));
        if (ctx->rank == 0)
            printf("# halo h=%d corners=%d: %.1f MB sent + received over MPI in all, %.1f MB packed/unpacked on "
                   "rank 0\n", halo, corners, msg * 1e-6, bytes * 1e-6);
        bench_row(corners ? "halo_exchange +corners" : "halo_exchange", size, "f64", t, bytes, 0, NULL, 0);
    }
    hs_field_destroy(f);
}

int main(int argc, char **argv)
{
    hs_ctx *ctx = bench_init(&argc, &argv);
    /* 512^3 as asked; a smaller default on the CPU keeps `make bench` short on small machines */
    const char *env = getenv("HS_BENCH_HALO_N");
    int64_t n = env && *env ? atoll(env) : (HS_ON_GPU(ctx) ? 512 : 256);
    bench_copy_bandwidth();
    const int64_t g[3] = {n, n, n};
    const int per[3] = {1, 1, 1};
    hs_decomp *d = NULL;
    bench_check(hs_decomp_create(ctx, 3, g, per, NULL, 4, &d), "decomposition");
    char gsize[64];
    snprintf(gsize, sizeof gsize, "%lld^3/%dx%dx%d", (long long)n, d->procs[0], d->procs[1], d->procs[2]);
    bench_width(ctx, d, 1, gsize);
    bench_width(ctx, d, 4, gsize);
    hs_decomp_destroy(d);
    bench_finish();
    return 0;
}
