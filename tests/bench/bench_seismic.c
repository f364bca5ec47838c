/* Benchmark of the seismic solver: whole time steps (CPML, source and receivers included) of the 3D
 * acoustic 8th-order model and the 3D elastic 4th-order model in fp32, as grid points per second
 * and as the fraction of the copy bandwidth measured in the same run (bytes: every field a step
 * must read once and write once); and the adjoint gradient's cost in forward-run equivalents.
 * HS_BENCH_SEISMIC_N sets the acoustic grid's side (default 512 on a GPU, 96 on a CPU), the elastic
 * and adjoint grids follow from it; HS_BENCH_SEISMIC_PARTS (a comma list of acoustic, elastic,
 * acoustic_nopml, elastic_nopml, adjoint, adjoint_nopml; default all) picks the rows, e.g. to
 * profile one of them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/bench_util.h"
#include "io/params.h"
#include "kernels/memory.h"
#include "solvers/seismic/seismic.h"

int hs_driver_declare(void);

enum { STEPS_PER_CALL = 5 };

static int run_steps(void *arg)
{
    int rc = 0;
    for (int s = 0; s < STEPS_PER_CALL && rc == 0; s++) rc = hs_seismic_bench_step(arg);
    return rc;
}

static void *make(hs_ctx *ctx, hs_params **p, const char *model, int n, const char *extra0, const char *extra1, const char *extra2,
                  const char *extra3, const char *extra4)
{
    char nbuf[64], src[96], rs[96], re[96];
    snprintf(nbuf, sizeof nbuf, "seismic.n=%d", n);
    double c = 10.0 * (n - 1) / 2;
    snprintf(src, sizeof src, "seismic.source_position=%g %g %g", c, c, c);
    snprintf(rs, sizeof rs, "seismic.receiver_start=%g %g %g", c / 2, c, 250.0);
    snprintf(re, sizeof re, "seismic.receiver_end=%g %g %g", 1.5 * c, c, 250.0);
    const char *ov[] = {"run.solver=seismic", "output.format=none", "seismic.ndim=3", nbuf, "seismic.spacing=10", "seismic.pml=20",
                        "seismic.precision=float32", "seismic.f0=8", "seismic.vp=3000", src, "seismic.receivers=line",
                        rs, re, "seismic.receiver_count=64", model, extra0, extra1, extra2, extra3, extra4,
                        /* vs for the elastic model only: a key the run would not use is bad input */
                        strcmp(model, "seismic.model=elastic") ? NULL : "seismic.vs=1700"};
    int count = (int)(sizeof ov / sizeof ov[0]);
    int kept = 0; /* the overrides given, the NULLs among the extras left out */
    for (int i = 0; i < count; i++)
        if (ov[i]) ov[kept++] = ov[i];
    count = kept;
    bench_check(hs_params_load(NULL, count, (char *const *)ov, p), "parameters");
    void *s = NULL;
    bench_check(hs_seismic_solver.create(ctx, *p, &s), "seismic create");
    return s;
}

static void time_model(hs_ctx *ctx, const char *label, const char *model, const char *order, int n, const char *extra)
{
    hs_params *p = NULL;
    void *s = make(ctx, &p, model, n, order, extra ? extra : "seismic.t_end=1", "seismic.seismograms=none", NULL, NULL);
    double bytes, points;
    hs_seismic_bench_traffic(s, &bytes, &points);
    double t = bench_time(run_steps, s, 1, 5) / STEPS_PER_CALL;
    char size[64];
    snprintf(size, sizeof size, "%d^3", n);
    bench_row(label, size, "f32", t, bytes, 0, NULL, 0);
    if (ctx->rank == 0) printf("# %s: %.3f GPts/s (whole steps: CPML, source and 64 receivers included)\n", label, points / t / 1e9);
    hs_seismic_solver.destroy(s);
    hs_params_free(p);
}

/* The gradient's time over a forward run's of the same steps (forward-run equivalents); pml: the
 * CPML override ("seismic.pml=0": the same without CPML, to tell the adjoint's CPML passes apart);
 * slots: checkpoint slots (seismic.snapshots; 0: automatic, which keeps every step's wavefield
 * where memory holds it). */
static void time_adjoint(hs_ctx *ctx, int n, const char *pml, int slots_wanted)
{
    char tag[64], snap[48];
    snprintf(tag, sizeof tag, "%s%s", pml ? ", no CPML" : "", slots_wanted ? ", checkpointed" : "");
    snprintf(snap, sizeof snap, "seismic.snapshots=%d", slots_wanted);
    char stem[128], obs[160], seis[160];
    snprintf(stem, sizeof stem, "/tmp/hs_bench_seismic_%d", (int)getpid());
    snprintf(seis, sizeof seis, "seismic.seismograms=%s", stem);
    snprintf(obs, sizeof obs, "seismic.observed=%s%s", stem, HS_HAVE_NETCDF ? ".nc" : ".h5");
    hs_params *p = NULL;
    /* the observed data: a faster sphere, a forward run */
    void *s = make(ctx, &p, "seismic.model=acoustic", n, "seismic.t_end=0.3", seis, "seismic.dt=0.0005", pml, NULL);
    double t0 = hs_wtime(), tt, te, w;
    int64_t st, taken;
    hs_seismic_solver.progress(s, &tt, &st, &te, &w);
    while (tt < te) {
        bench_check(hs_seismic_solver.advance(s, te, 1 << 30, &taken), "forward");
        hs_seismic_solver.progress(s, &tt, &st, &te, &w);
    }
    bench_check(hs_ctx_sync(ctx), "sync");
    double forward = hs_wtime() - t0;
    bench_check(hs_seismic_solver.finish(s), "seismograms");
    hs_seismic_solver.destroy(s);
    hs_params_free(p);
    s = make(ctx, &p, "seismic.mode=gradient", n, "seismic.t_end=0.3", obs, "seismic.dt=0.0005", pml, snap);
    double J;
    t0 = hs_wtime();
    bench_check(hs_seismic_misfit_gradient(s, NULL, &J, NULL), "gradient");
    bench_check(hs_ctx_sync(ctx), "sync");
    double grad = hs_wtime() - t0;
    int64_t adv, rev;
    int slots;
    hs_seismic_adjoint_counts(s, &adv, &rev, &slots);
    char size[96], kept[48];
    if (slots) snprintf(kept, sizeof kept, "%d checkpoint slots", slots);
    else snprintf(kept, sizeof kept, "every step's wavefield kept");
    snprintf(size, sizeof size, "%d^3 x %lld steps, %s", n, (long long)rev, slots ? kept : "all kept");
    char label[160];
    snprintf(label, sizeof label, "seismic adjoint gradient%s (time of a forward run: peer)", tag);
    bench_row(label, size, "f32", grad, 0, 0, "forward run", forward);
    if (ctx->rank == 0) {
        printf("# seismic adjoint%s: the gradient costs %.2f forward runs (%lld forward steps in all, %lld adjoint "
               "steps, %s; goal <= 3.5)\n",
               tag, grad / forward, (long long)adv, (long long)rev, kept);
        /* where the time goes: the forward steps at the forward run's rate, the rest is the transposed steps' */
        double step = forward / (double)(rev > 0 ? rev : 1), fwd = (double)adv * step;
        printf("# seismic adjoint%s: forward steps %.1f%% of the gradient's time (%.2f forward runs), transposed steps %.2f "
               "forward steps each (%.2f forward runs; forward step %.3f ms)\n",
               tag, 100 * fwd / grad, fwd / forward, (grad - fwd) / (double)(rev > 0 ? rev : 1) / step, (grad - fwd) / forward, 1e3 * step);
    }
    hs_seismic_solver.destroy(s);
    hs_params_free(p);
    if (ctx->rank == 0) {
        char f[200];
        snprintf(f, sizeof f, "%s%s", stem, HS_HAVE_NETCDF ? ".nc" : ".h5");
        remove(f);
        snprintf(f, sizeof f, "%s.sgy", stem);
        remove(f);
    }
}

/* Whether HS_BENCH_SEISMIC_PARTS (unset: every part) names this part. */
static int wanted(const char *part)
{
    const char *list = getenv("HS_BENCH_SEISMIC_PARTS");
    if (!list || !*list) return 1;
    size_t n = strlen(part);
    for (const char *at = list; *at; at += strcspn(at, ",")) {
        if (*at == ',') at++;
        if (!strncmp(at, part, n) && (at[n] == ',' || at[n] == 0)) return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    hs_ctx *ctx = bench_init(&argc, &argv);
    bench_check(hs_driver_declare(), "declare");
    bench_check(hs_seismic_solver.declare(), "declare");
    int gpu = HS_ON_GPU(ctx);
    const char *env = getenv("HS_BENCH_SEISMIC_N");
    int n = env ? atoi(env) : gpu ? 512 : 96;
    bench_copy_bandwidth();
    if (wanted("acoustic"))
        time_model(ctx, "seismic acoustic 3D order 8 step", "seismic.model=acoustic", "seismic.order=8", n, NULL);
    if (wanted("elastic"))
        time_model(ctx, "seismic elastic 3D order 4 step", "seismic.model=elastic", "seismic.order=4", n, NULL);
    /* without CPML every point takes the interior update: how far the interior kernels alone get */
    if (wanted("acoustic_nopml"))
        time_model(ctx, "seismic acoustic 3D order 8 step, no CPML", "seismic.model=acoustic", "seismic.order=8", n, "seismic.pml=0");
    if (wanted("elastic_nopml"))
        time_model(ctx, "seismic elastic 3D order 4 step, no CPML", "seismic.model=elastic", "seismic.order=4", n, "seismic.pml=0");
    /* the adjoint on a model of half the side: automatic memory use (every step's wavefield kept
     * where it fits); the same with HS_BENCH_SEISMIC_SLOTS checkpoint slots (default 60, a tenth of
     * the steps: binomial checkpointing with bounded memory); and without CPML (the difference is
     * what the adjoint's CPML passes cost) */
    const int na = n / 2 < 64 ? 64 : n / 2;
    const char *slots_env = getenv("HS_BENCH_SEISMIC_SLOTS");
    const int slots = slots_env && atoi(slots_env) > 0 ? atoi(slots_env) : 60;
    if (wanted("adjoint")) time_adjoint(ctx, na, NULL, 0);
    if (wanted("adjoint_checkpointed")) time_adjoint(ctx, na, NULL, slots);
    if (wanted("adjoint_nopml")) time_adjoint(ctx, na, "seismic.pml=0", 0);
    bench_finish();
    return 0;
}
