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
    snprintf(line, sizeof line, "step %lld  t = %.6g (%.1f%%)  wall %.1f s  ETA %.1f s  %.3g updates/s", (long long)step, t,
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

static int open_output(run_state *r, int argc, char **argv, int resumed, double time)
{
    const char *fmt = hs_params_string(r->p, "output.format");
    if (!r->ops->describe_output || !strcmp(fmt, "none")) return HS_OK;
    hs_output_desc desc;
    memset(&desc, 0, sizeof desc);
    HS_CHECK(r->ops->describe_output(r->state, &desc));
    if (!strcmp(fmt, "auto")) fmt = HS_HAVE_NETCDF ? "netcdf" : "hdf5";
    desc.format = !strcmp(fmt, "netcdf") ? HS_FORMAT_NETCDF : HS_FORMAT_HDF5;
    char path[4096];
    snprintf(path, sizeof path, "%s%s", hs_params_string(r->p, "output.path"), desc.format == HS_FORMAT_NETCDF ? ".nc" : ".h5");
    desc.path = path;
    char *history = join_args(argc, argv), *ini = hs_params_to_ini(r->p);
    desc.history = history;
    desc.params_ini = ini;
    desc.deflate_level = (int)hs_params_int(r->p, "output.deflate");
    if (!desc.time_units) desc.time_units = hs_params_string(r->p, "output.time_units");
    int rc = resumed ? hs_writer_resume(r->ctx, &desc, time, &r->writer) : hs_writer_open(r->ctx, &desc, &r->writer);
    free(history);
    free(ini);
    HS_CHECK(rc);
    HS_CHECK(r->ops->define_vars(r->state, r->writer));
    return HS_OK;
}

static int write_record(run_state *r)
{
    if (!r->writer) return HS_OK;
    double t, t_end, work;
    int64_t step;
    r->ops->progress(r->state, &t, &step, &t_end, &work);
    if (step == r->last_written_step) return HS_OK;
    HS_CHECK(hs_writer_begin_step(r->writer, t));
    HS_CHECK(r->ops->write(r->state, r->writer));
    r->last_written_step = step;
    r->last_written_time = t;
    return HS_OK;
}

static int write_checkpoint(run_state *r)
{
    double t, t_end, work;
    int64_t step;
    r->ops->progress(r->state, &t, &step, &t_end, &work);
    if (!r->ops->checkpoint) return HS_FAIL(HS_ERR_RUNTIME, "solver %s cannot write checkpoints", r->ops->name);
    char *ini = hs_params_to_ini(r->p);
    hs_checkpoint *c = NULL;
    int rc = hs_checkpoint_create(r->ctx, hs_params_string(r->p, "checkpoint.path"), r->ops->name, ini, step, t, &c);
    free(ini);
    HS_CHECK(rc);
    HS_CHECK(r->ops->checkpoint(r->state, c));
    HS_CHECK(hs_checkpoint_close(c));
    return HS_OK;
}

static int restore(run_state *r, const char *path, double *time)
{
    hs_checkpoint *c = NULL;
    int64_t step = 0;
    if (!r->ops->restore) return hs_params_error(r->p, "run.restart", "solver %s cannot restart from checkpoints", r->ops->name);
    HS_CHECK(hs_checkpoint_open(r->ctx, path, r->ops->name, &c, &step, time));
    HS_CHECK(r->ops->restore(r->state, c));
    HS_CHECK(hs_checkpoint_close(c));
    return HS_OK;
}

/* All ranks agree whether any of them caught a signal (a collective at each chunk boundary). */
static int signal_seen(run_state *r)
{
    int s = (int)g_signal;
    if (hs_allreduce_int_max(r->ctx->comm, &s, 1) != HS_OK) return 0;
    return s;
}

static int stop_on_signal(run_state *r, int sig)
{
    double t, t_end, work;
    int64_t step;
    r->ops->progress(r->state, &t, &step, &t_end, &work);
    HS_CHECK(write_checkpoint(r));
    if (r->writer) {
        HS_CHECK(hs_writer_suspend(r->writer));
        r->writer = NULL;
    }
    progress_line(r, 1);
    const char *path = hs_params_string(r->p, "checkpoint.path");
    if (r->ctx->rank == 0)
        fprintf(stderr, "hpcsim: stopped by signal %d at step %lld (t = %.9g); checkpoint written to %s; "
                        "continue with: hpcsim run %s --restart %s\n",
                sig, (long long)step, t, path, hs_params_file(r->p), path);
    return HS_ERR_SIGNAL;
}

/* Steps the next advance may take: up to the next output or checkpoint step, or the step limit. */
static int64_t chunk_steps(const run_state *r, int64_t step)
{
    int64_t n = 100; /* also the signal-check interval */
    if (r->out_every > 0) {
        int64_t k = r->out_every - step % r->out_every;
        if (k < n) n = k;
    }
    if (r->ckpt_every > 0) {
        int64_t k = r->ckpt_every - step % r->ckpt_every;
        if (k < n) n = k;
    }
    if (r->max_steps > 0 && r->max_steps - step < n) n = r->max_steps - step;
    return n < 1 ? 1 : n;
}

/* Test hook: HS_TEST_SIGNAL_AT_STEP=N makes the run signal itself (SIGTERM) once it has passed
 * step N, so that tests can stop a run at a known step through the real signal path. */
static void test_signal_hook(int64_t step)
{
    static int64_t at = -2;
    if (at == -2) {
        const char *s = getenv("HS_TEST_SIGNAL_AT_STEP");
        at = s ? atoll(s) : -1;
    }
    if (at >= 0 && step >= at) {
        at = -1;
        raise(SIGTERM);
    }
}

static int time_loop(run_state *r)
{
    double t, t_end, work;
    int64_t step;
    r->ops->progress(r->state, &t, &step, &t_end, &work);
    if (r->out_dt > 0) r->next_out_time = (floor(t / r->out_dt + 1e-9) + 1) * r->out_dt;
    int on_signal = hs_params_bool(r->p, "checkpoint.on_signal");
    while (t < t_end && !(r->max_steps > 0 && step >= r->max_steps)) {
        double until = t_end;
        if (r->out_dt > 0 && r->next_out_time < until) until = r->next_out_time;
        int64_t taken = 0;
        HS_CHECK(r->ops->advance(r->state, until, chunk_steps(r, step), &taken));
        r->ops->progress(r->state, &t, &step, &t_end, &work);
        if (taken <= 0 && t < t_end) return HS_FAIL(HS_ERR_RUNTIME, "solver %s made no progress at t = %g", r->ops->name, t);
        int due = (r->out_every > 0 && step % r->out_every == 0);
        if (r->out_dt > 0 && t >= r->next_out_time * (1 - 1e-12)) {
            due = 1;
            r->next_out_time = (floor(t / r->out_dt + 1e-9) + 1) * r->out_dt;
        }
        if (due) HS_CHECK(write_record(r));
        if (r->ckpt_every > 0 && step % r->ckpt_every == 0) HS_CHECK(write_checkpoint(r));
        progress_line(r, 0);
        test_signal_hook(step);
        if (on_signal) {
            int sig = signal_seen(r);
            if (sig) return stop_on_signal(r, sig);
        }
    }
    return HS_OK;
}

int hs_driver_run(hs_ctx *ctx, const hs_params *p, int argc, char **argv)
{
    run_state r;
    memset(&r, 0, sizeof r);
    r.ctx = ctx;
    r.p = p;
    r.ops = hs_solver_find(hs_params_string(p, "run.solver"));
    r.out_every = hs_params_int(p, "output.every_steps");
    r.out_dt = hs_params_real(p, "output.every_time");
    r.ckpt_every = hs_params_int(p, "checkpoint.every_steps");
    r.max_steps = hs_params_int(p, "run.max_steps");
    r.quiet = hs_params_bool(p, "run.quiet");
    r.tty = isatty(STDERR_FILENO);
    r.print_every = hs_params_real(p, "run.progress_interval");
    r.last_written_step = -1;
    install_handlers();

    int rc = r.ops->create(ctx, p, &r.state);
    if (rc != HS_OK) {
        /* a solver hands back what it built so far, so that it can be released */
        if (r.state) r.ops->destroy(r.state);
        return rc;
    }
    const char *restart = hs_params_string(p, "run.restart");
    int resumed = strcmp(restart, "none") != 0;
    double t0 = 0, t_end, work;
    if (resumed) rc = restore(&r, restart, &t0);
    if (rc == HS_OK) rc = open_output(&r, argc, argv, resumed, t0);
    r.ops->progress(r.state, &t0, &r.step0, &t_end, &work);
    r.wall0 = hs_wtime();
    if (rc == HS_OK && resumed) r.last_written_step = r.step0; /* the resumed file has this record */
    if (rc == HS_OK && !resumed) rc = write_record(&r);
    if (rc == HS_OK) {
        if (t_end > 0) {
            rc = time_loop(&r);
        } else {
            int64_t taken = 0; /* not time-dependent: all work in one call */
            rc = r.ops->advance(r.state, 0.0, 1, &taken);
        }
    }
    if (rc == HS_OK) rc = write_record(&r); /* the final state, unless just written */
    if (rc == HS_OK && r.writer) {
        rc = hs_writer_close(r.writer);
        r.writer = NULL;
    }
    if (rc != HS_OK && rc != HS_ERR_SIGNAL && r.writer) {
        /* a failed run leaves no half-written file; a resumed one keeps what it had */
        if (resumed) hs_writer_suspend(r.writer);
        else hs_writer_discard(r.writer);
        r.writer = NULL;
    }
    if (rc == HS_OK && r.ops->finish) rc = r.ops->finish(r.state);
    if (rc == HS_OK && t_end > 0) progress_line(&r, 1);
    r.ops->destroy(r.state);
    return rc;
}
