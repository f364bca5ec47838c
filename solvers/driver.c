/* The driver: the run policy around a solver's ops (time loop, output cadence, checkpoints,
 * restarts, signals, progress). */
#include <errno.h>
#include <libgen.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/output_impl.h"
#include "io/written.h"
#include "kernels/comm/comm.h"
#include "kernels/memory.h"
#include "solvers/solver.h"

static const hs_param_decl g_driver_params[] = {
    {"run", "solver", HS_PARAM_STRING, NULL, 0, 0, NULL, "which solver runs (see hpcsim --help)"},
    {"run", "device", HS_PARAM_ENUM, "auto", 0, 0, "auto|cpu|cuda", "compute backend: auto uses the GPU when one is usable"},
    {"run", "allow_shared_gpu", HS_PARAM_BOOL, "false", 0, 0, NULL, "let several ranks of a node share one GPU"},
    {"run", "gpu_comm", HS_PARAM_ENUM, "auto", 0, 0, "auto|nccl|host",
     "how device data moves between ranks: auto (NCCL where each rank has its own GPU), nccl, host (pinned buffers + MPI)"},
    {"run", "deterministic", HS_PARAM_BOOL, "true", 0, 0, NULL, "bitwise run-to-run reproducible reductions"},
    {"run", "seed", HS_PARAM_INT, "12345", 0, HS_NO_MAX, NULL, "seed of every random number stream"},
    {"run", "restart", HS_PARAM_STRING, "none", 0, 0, NULL, "checkpoint file to continue from (none: start fresh)"},
    {"run", "max_steps", HS_PARAM_INT, "0", 0, HS_NO_MAX, NULL, "stop after this many steps (0: run to the end time)"},
    {"run", "quiet", HS_PARAM_BOOL, "false", 0, 0, NULL, "no progress output (also: hpcsim run --quiet)"},
    {"run", "progress_interval", HS_PARAM_REAL, "10", 0.1, 86400, NULL, "seconds between progress lines in logs (not on a terminal)"},
    {"output", "format", HS_PARAM_ENUM, "auto", 0, 0, HS_OUTPUT_FORMAT_CHOICES, "gridded output format (auto: NetCDF when built in, else HDF5)"},
    {"output", "path", HS_PARAM_STRING, "output", 0, 0, NULL, "output file name without extension (.nc or .h5 is added)"},
    {"output", "every_steps", HS_PARAM_INT, "0", 0, HS_NO_MAX, NULL, "write a record every N steps (0: off)"},
    {"output", "every_time", HS_PARAM_REAL, "0", 0, HS_NO_MAX, NULL, "write a record every T of simulated time (0: off)"},
    {"output", "deflate", HS_PARAM_INT, "0", 0, 9, NULL, "zlib compression level of the output (0: none)"},
    {"output", "parallel", HS_PARAM_ENUM, "auto", 0, 0, HS_OUTPUT_PARALLEL_CHOICES,
     "how the ranks write: auto (collectively, each rank its own part, where the build has parallel HDF5/NetCDF), off (gathered through rank 0)"},
    {"output", "time_units", HS_PARAM_STRING, "seconds since 2000-01-01 00:00:00", 0, 0, NULL, "CF units of the time axis"},
    {"output", "overwrite", HS_PARAM_BOOL, "true", 0, 0, NULL, "replace an existing output file (false: refuse to start)"},
    {"checkpoint", "every_steps", HS_PARAM_INT, "0", 0, HS_NO_MAX, NULL, "write a checkpoint every N steps (0: off)"},
    {"checkpoint", "path", HS_PARAM_STRING, "checkpoint.h5", 0, 0, NULL, "checkpoint file (written to PATH.tmp, then renamed)"},
    {"checkpoint", "format", HS_PARAM_ENUM, "auto", 0, 0, HS_CKPT_FORMAT_CHOICES, "checkpoint file format (auto: HDF5 when built in, else binary; a restart reads either)"},
    {"checkpoint", "on_signal", HS_PARAM_BOOL, "true", 0, 0, NULL, "on SIGTERM/SIGUSR1: write a checkpoint and exit with status 3"},
};

int hs_driver_declare(void)
{
    return hs_params_declare(g_driver_params, (int)(sizeof g_driver_params / sizeof g_driver_params[0]));
}

/* Keys of the driver's sections that a restart may change: they steer the run, not its state. */
static const char *const g_restart_may_change[] = {
    "run.restart", "run.max_steps", "run.quiet", "run.progress_interval", "run.device", "run.allow_shared_gpu",
    "run.gpu_comm", "run.deterministic", "output.format", "output.path", "output.every_steps", "output.every_time",
    "output.deflate", "output.parallel", "output.overwrite", "checkpoint.every_steps", "checkpoint.path", "checkpoint.format",
    "checkpoint.on_signal", NULL,
};

/* ------------------------------------------------------------------ checks before anything runs */

static int checkpoints_used(const hs_params *p)
{
    return hs_params_int(p, "checkpoint.every_steps") > 0 || hs_params_bool(p, "checkpoint.on_signal");
}

/* The extensions the writers add to output.path (gridded files, the XDMF companion, JSON reports). */
static const char *const g_output_exts[] = {"", ".nc", ".h5", ".xmf", ".json", NULL};

int hs_driver_check(const hs_params *p)
{
    const char *out = hs_params_string(p, "output.path");
    const char *ckpt = hs_params_string(p, "checkpoint.path");
    int fresh = !strcmp(hs_params_string(p, "run.restart"), "none");
    int writes_output = hs_params_enum(p, "output.format") != HS_OUTPUT_NONE;
    /* the directory of the files actually written (PATH.nc ...): "out/" names the folder out */
    char first[8192];
    snprintf(first, sizeof first, "%s.nc", out);
    HS_CHECK(hs_params_check_writable(p, "output.path", first, "output file", 0));
    for (int i = 1; g_output_exts[i]; i++) {
        char path[8192];
        struct stat st;
        snprintf(path, sizeof path, "%s%s", out, g_output_exts[i]);
        if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
            return hs_params_error(p, "output.path", "output file %s is a directory", path);
    }
    if (checkpoints_used(p)) {
        if (!HS_HAVE_HDF5 && hs_params_enum(p, "checkpoint.format") == HS_CKPT_FORMAT_HDF5)
            return hs_params_error(p, "checkpoint.format", "this build has no HDF5 (use auto or binary)");
        HS_CHECK(hs_params_check_writable(p, "checkpoint.path", ckpt, "checkpoint", 1));
        size_t lo = strlen(out);
        for (int i = 0; g_output_exts[i]; i++)
            if (!strncmp(ckpt, out, lo) && !strcmp(ckpt + lo, g_output_exts[i]))
                return hs_params_error(p, "checkpoint.path",
                                       "%s is also the output file (output.path = %s): the checkpoint would replace it",
                                       ckpt, out);
    }
    if (fresh && writes_output && !hs_params_bool(p, "output.overwrite")) {
        for (int i = 1; g_output_exts[i]; i++) {
            char path[8192];
            snprintf(path, sizeof path, "%s%s", out, g_output_exts[i]);
            if (hs_io_file_exists(path))
                return hs_params_error(p, "output.overwrite", "%s exists and output.overwrite = false", path);
        }
    }
    return HS_OK;
}

static int open_restart(hs_ctx *ctx, const hs_params *p, const hs_solver_ops *ops, const char *path, int report,
                        hs_checkpoint **c, double *time);

int hs_driver_validate(hs_ctx *ctx, const hs_params *p)
{
    HS_CHECK(hs_driver_check(p));
    const hs_solver_ops *ops = hs_solver_find(hs_params_string(p, "run.solver"));
    if (ops && ops->check) HS_CHECK(ops->check(ctx, p));
    /* a restart: the checkpoint must open (solver, rank count, header checksums) and keep the
     * state-defining keys, as run's restore() checks them; its arrays are not read */
    const char *restart = hs_params_string(p, "run.restart");
    if (ops && strcmp(restart, "none") != 0) {
        hs_checkpoint *c = NULL;
        double t = 0;
        HS_CHECK(open_restart(ctx, p, ops, restart, 0, &c, &t));
        HS_CHECK(hs_checkpoint_close(c));
    }
    return HS_OK;
}

/* ------------------------------------------------------------------ signals */

/* The handler only records the signal; ranks agree on stopping at a step boundary. */
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
    char output_path[8192];
    int64_t out_every, ckpt_every, max_steps;
    double out_dt, next_out_time;
    int quiet, tty;
    double wall0, loop0, last_print, print_every;  /* run start, time-loop start, last progress line */
    int64_t step0;
    int64_t last_written_step;
    int checkpoints;            /* checkpoints written */
    const char *argv0;          /* how the program was called, for the restart hint */
    /* signal agreement: a non-blocking all-reduce started at one step boundary, completed at the next */
    MPI_Request sig_req;
    int sig_local, sig_global, sig_pending;
} run_state;

/* Has any rank caught a signal?  Every rank gets the same answer at the same boundary: the flag
 * reduced here was sent at the previous boundary, while the step ran (one rank: no collective). */
static int signal_agreed(run_state *r, int *sig)
{
    *sig = 0;
    if (r->ctx->size == 1) {
        *sig = (int)g_signal;
        return HS_OK;
    }
    if (r->sig_pending) {
        HS_CHECK(hs_host_wait(&r->sig_req));
        r->sig_pending = 0;
        if (r->sig_global) {
            *sig = r->sig_global;
            return HS_OK;
        }
    }
    r->sig_local = (int)g_signal;
    HS_CHECK(hs_host_iallreduce(r->ctx->comm, HS_I32, HS_COMM_MAX, &r->sig_local, &r->sig_global, 1, &r->sig_req));
    r->sig_pending = 1;
    return HS_OK;
}

static void signal_drain(run_state *r)
{
    /* on the way out, after success or failure alike: a pending error must keep its message */
    if (r->sig_pending) (void)hs_host_wait(&r->sig_req);
    r->sig_pending = 0;
}

/* ------------------------------------------------------------------ progress and summary */

static void progress_line(run_state *r, int final)
{
    if (r->quiet || r->ctx->rank != 0) return;
    double t, t_end, work;
    int64_t step;
    r->ops->progress(r->state, &t, &step, &t_end, &work);
    double now = hs_wtime(), wall = now - r->loop0;
    if (!final && now - r->last_print < (r->tty ? 0.25 : r->print_every)) return;
    if (!final && !r->tty && step == r->step0) return;
    r->last_print = now;
    double frac = t_end > 0 ? t / t_end : 1.0;
    if (frac > 1) frac = 1;
    double rate = wall > 0 ? work * (double)(step - r->step0) / wall : 0;
    double eta = frac > 0 && frac < 1 ? wall * (1 - frac) / frac : 0;
    char line[256];
    int n = snprintf(line, sizeof line, "step %lld  t = %.6g (%.1f%%)  wall %.1f s", (long long)step, t, 100 * frac, wall);
    if (!final) n += snprintf(line + n, sizeof line - (size_t)n, "  ETA %.1f s", eta);
    if (work > 0) snprintf(line + n, sizeof line - (size_t)n, "  %.3g %s/s", rate, r->ops->work_unit ? r->ops->work_unit : "updates");
    if (r->tty) fprintf(stderr, "\r%-100s%s", line, final ? "\n" : "");
    else fprintf(stderr, "%s\n", line);
    fflush(stderr);
}

/* One line at the end of every run: why it ended, files written, wall time. */
static void summary_line(run_state *r, const char *how)
{
    if (r->ctx->rank != 0) return;
    double t = 0, t_end = 0, work = 0;
    int64_t step = 0;
    if (r->state) r->ops->progress(r->state, &t, &step, &t_end, &work);
    char files[16384];
    const char *list = hs_io_written_list();
    size_t n = (size_t)snprintf(files, sizeof files, "%s", list);
    if (r->checkpoints > 0 && n < sizeof files)
        snprintf(files + n, sizeof files - n, "%scheckpoint %s (%d written)", n ? ", " : "",
                 hs_params_string(r->p, "checkpoint.path"), r->checkpoints);
    printf("hpcsim: %s at step %lld, t = %.9g; wrote %s; wall time %.2f s\n", how, (long long)step, t,
           files[0] ? files : "nothing", hs_wtime() - r->wall0);
    fflush(stdout);
}

/* ------------------------------------------------------------------ output */

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
    int fmt = hs_params_enum(r->p, "output.format");
    if (!r->ops->describe_output || fmt == HS_OUTPUT_NONE) return HS_OK;
    hs_output_desc desc;
    memset(&desc, 0, sizeof desc);
    HS_CHECK(r->ops->describe_output(r->state, &desc));
    if (desc.ndim < 0) return HS_OK; /* this run of the solver writes no file through the driver */
    if (fmt == HS_OUTPUT_AUTO) fmt = HS_HAVE_NETCDF ? HS_OUTPUT_NETCDF : HS_OUTPUT_HDF5;
    desc.format = fmt == HS_OUTPUT_NETCDF ? HS_FORMAT_NETCDF : HS_FORMAT_HDF5;
    if (snprintf(r->output_path, sizeof r->output_path, "%s%s", hs_params_string(r->p, "output.path"),
                 desc.format == HS_FORMAT_NETCDF ? ".nc" : ".h5") >= (int)sizeof r->output_path)
        return hs_params_error(r->p, "output.path", "is longer than %zu characters", sizeof r->output_path - 4);
    desc.path = r->output_path;
    char *history = join_args(argc, argv), *ini = hs_params_to_ini(r->p);
    desc.history = history;
    desc.params_ini = ini;
    desc.deflate_level = (int)hs_params_int(r->p, "output.deflate");
    desc.parallel = hs_params_enum(r->p, "output.parallel"); /* hs_output_parallel, in the choices' order */
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
    int rc = r->ops->write(r->state, r->writer);
    r->last_written_step = step;
    if (rc != HS_OK && hs_writer_nonfinite(r->writer))
        return HS_FAIL(HS_ERR_RUNTIME, "the solution is no longer finite at step %lld, t = %.9g (the record was written)",
                       (long long)step, t);
    return rc;
}

/* ------------------------------------------------------------------ checkpoints and restarts */

static int write_checkpoint(run_state *r)
{
    double t, t_end, work;
    int64_t step;
    r->ops->progress(r->state, &t, &step, &t_end, &work);
    if (!r->ops->checkpoint) return HS_FAIL(HS_ERR_RUNTIME, "solver %s cannot write checkpoints", r->ops->name);
    /* the records so far must survive a kill after this checkpoint: a restart from it reopens them */
    HS_CHECK(hs_writer_sync(r->writer));
    char *ini = hs_params_to_ini(r->p);
    hs_checkpoint *c = NULL;
    int rc = hs_checkpoint_create(r->ctx, hs_params_string(r->p, "checkpoint.path"), r->ops->name, ini, step, t,
                                  hs_params_enum(r->p, "checkpoint.format"), &c);
    free(ini);
    HS_CHECK(rc);
    rc = r->ops->checkpoint(r->state, c);
    if (rc != HS_OK) {
        hs_checkpoint_discard(c);
        return hs_error_trace(rc, __FILE__, __LINE__, "checkpoint");
    }
    HS_CHECK(hs_checkpoint_close(c));
    r->checkpoints++;
    return HS_OK;
}

static int in_list(const char *const *list, const char *name)
{
    for (int i = 0; list && list[i]; i++)
        if (!strcmp(list[i], name)) return 1;
    return 0;
}

typedef struct {
    hs_ctx *ctx;
    const hs_params *p;
    const hs_solver_ops *ops;
    const char *path;
    int report; /* say the allowed changes in the log (run; check is silent) */
} diff_ctx;

/* A key whose change would make the stored state meaningless refuses the restart; the others are
 * said in the log. */
static int on_changed_key(void *user, const char *name, const char *stored, const char *now)
{
    diff_ctx *d = user;
    if (in_list(g_restart_may_change, name) || in_list(d->ops->restart_may_change, name)) {
        static const char *const unremarkable[] = {"run.restart", "run.quiet", "run.progress_interval", NULL};
        if (d->report && d->ctx->rank == 0 && !in_list(unremarkable, name))
            fprintf(stderr, "hpcsim: restart: %s changed from %s to %s\n", name, stored, now);
        return HS_OK;
    }
    return hs_params_error(d->p, name,
                           "the checkpoint %s was made with %s = %s, this run has %s = %s; a restart must keep it "
                           "(start afresh to change it)",
                           d->path, name, stored, name, now);
}

/* Open the checkpoint a restart continues from and compare its parameters with the run's: the
 * rules shared by `check` (hs_driver_validate) and `run` (restore). */
static int open_restart(hs_ctx *ctx, const hs_params *p, const hs_solver_ops *ops, const char *path, int report,
                        hs_checkpoint **c, double *time)
{
    int64_t step = 0;
    *c = NULL;
    if (!ops->restore) return hs_params_error(p, "run.restart", "solver %s cannot restart from checkpoints", ops->name);
    HS_CHECK(hs_checkpoint_open(ctx, path, ops->name, c, &step, time));
    diff_ctx d = {ctx, p, ops, path, report};
    int rc = hs_params_diff_ini(p, hs_checkpoint_params(*c), on_changed_key, &d);
    if (rc != HS_OK) {
        hs_checkpoint_close(*c);
        *c = NULL;
    }
    return rc;
}

static int restore(run_state *r, const char *path, double *time)
{
    hs_checkpoint *c = NULL;
    HS_CHECK(open_restart(r->ctx, r->p, r->ops, path, 1, &c, time));
    int rc = r->ops->restore(r->state, c);
    int rc2 = hs_checkpoint_close(c);
    HS_CHECK(rc);
    HS_CHECK(rc2);
    return HS_OK;
}

/* The command that continues this run: the same file and overrides, from the checkpoint. */
static void print_continue_hint(run_state *r, int sig, int64_t step, double t)
{
    if (r->ctx->rank != 0) return;
    char *prog = hs_params_shell_quote(r->argv0 ? r->argv0 : "hpcsim");
    const char *path = hs_params_string(r->p, "checkpoint.path");
    char *file = hs_params_shell_quote(hs_params_file(r->p));
    char *over = hs_params_overrides_text(r->p, "run.restart");
    char *ck = hs_params_shell_quote(path);
    fprintf(stderr,
            "hpcsim: stopped by signal %d at step %lld (t = %.9g); checkpoint written to %s; "
            "continue with: %s%s run %s%s%s --restart %s\n",
            sig, (long long)step, t, path, r->ctx->size > 1 ? "mpirun -n N " : "", prog ? prog : "hpcsim", file ? file : "",
            over && *over ? " " : "", over ? over : "", ck ? ck : path);
    if (r->ctx->size > 1) fprintf(stderr, "hpcsim: (N = %d: a restart needs the same rank count)\n", r->ctx->size);
    fflush(stderr);
    free(prog);
    free(file);
    free(over);
    free(ck);
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
    print_continue_hint(r, sig, step, t);
    return HS_ERR_SIGNAL;
}

/* ------------------------------------------------------------------ the time loop */

/* Steps the next advance may take: one when signals are watched (they are agreed on at every step
 * boundary), else up to the next output or checkpoint step or the step limit. */
static int64_t chunk_steps(const run_state *r, int64_t step, int watch_signals)
{
    int64_t n = watch_signals ? 1 : 1000;
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

/* Test hooks: HS_TEST_SIGNAL_AT_STEP=N makes the run send itself SIGTERM once it has passed step
 * N (through the real handler), HS_TEST_KILL_AT_STEP=N SIGKILL (a hard kill: no handler, no
 * clean-up), so that tests stop a run at a known step without depending on timing. */
static int64_t test_step_env(const char *name, int64_t *cache)
{
    if (*cache == -2) {
        const char *s = getenv(name);
        *cache = s ? atoll(s) : -1;
    }
    return *cache;
}

static void test_hooks(int64_t step)
{
    static int64_t sig_at = -2, kill_at = -2;
    if (test_step_env("HS_TEST_SIGNAL_AT_STEP", &sig_at) >= 0 && step >= sig_at) {
        sig_at = -1;
        raise(SIGTERM);
    }
    if (test_step_env("HS_TEST_KILL_AT_STEP", &kill_at) >= 0 && step >= kill_at) raise(SIGKILL);
}

static int time_loop(run_state *r)
{
    double t, t_end, work;
    int64_t step;
    r->ops->progress(r->state, &t, &step, &t_end, &work);
    if (r->out_dt > 0) r->next_out_time = (floor(t / r->out_dt + 1e-9) + 1) * r->out_dt;
    int watch = hs_params_bool(r->p, "checkpoint.on_signal");
    while (t < t_end && !(r->max_steps > 0 && step >= r->max_steps)) {
        double until = t_end;
        if (r->out_dt > 0 && r->next_out_time < until) until = r->next_out_time;
        int64_t taken = 0;
        int rc = r->ops->advance(r->state, until, chunk_steps(r, step, watch), &taken);
        if (rc != HS_OK)
            return hs_error_raise(rc, __FILE__, __LINE__, "%s stopped while advancing from step %lld, t = %.9g", r->ops->name,
                                  (long long)step, t);
        r->ops->progress(r->state, &t, &step, &t_end, &work);
        if (!isfinite(t)) return HS_FAIL(HS_ERR_RUNTIME, "solver %s: simulated time is %g after step %lld", r->ops->name, t, (long long)step);
        if (taken <= 0 && t < t_end) return HS_FAIL(HS_ERR_RUNTIME, "solver %s made no progress at t = %g", r->ops->name, t);
        int due = (r->out_every > 0 && step % r->out_every == 0);
        if (r->out_dt > 0 && t >= r->next_out_time * (1 - 1e-12)) {
            due = 1;
            r->next_out_time = (floor(t / r->out_dt + 1e-9) + 1) * r->out_dt;
        }
        if (due) HS_CHECK(write_record(r));
        if (r->ckpt_every > 0 && step % r->ckpt_every == 0) HS_CHECK(write_checkpoint(r));
        progress_line(r, 0);
        test_hooks(step);
        if (watch) {
            int sig;
            HS_CHECK(signal_agreed(r, &sig));
            if (sig) return stop_on_signal(r, sig);
        }
    }
    return HS_OK;
}

/* After a failure: a non-finite state closes the file under its name (its records show where it
 * went wrong); a runtime failure keeps the records so far as PATH.partial; bad input found
 * before any time step leaves nothing. */
static void release_output(run_state *r, int rc, int resumed)
{
    if (!r->writer) return;
    if (hs_writer_nonfinite(r->writer)) {
        hs_writer_close(r->writer);
    } else if (resumed || (rc == HS_ERR_RUNTIME && hs_writer_records(r->writer) > 0)) {
        if (hs_writer_suspend(r->writer) == HS_OK && r->ctx->rank == 0)
            fprintf(stderr, "hpcsim: the records written so far are kept in %s.partial\n", r->output_path);
    } else {
        hs_writer_discard(r->writer);
    }
    r->writer = NULL;
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
    r.argv0 = argc > 0 ? argv[0] : NULL;
    r.wall0 = hs_wtime();
    hs_io_written_reset();
    HS_CHECK(hs_driver_check(p));
    if (hs_params_bool(p, "checkpoint.on_signal")) install_handlers();

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
    r.loop0 = r.last_print = hs_wtime();
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
    signal_drain(&r);
    if (rc == HS_OK) rc = write_record(&r); /* the final state, unless just written */
    if (rc == HS_OK && r.writer) {
        rc = hs_writer_close(r.writer);
        r.writer = NULL;
    }
    if (rc != HS_OK && rc != HS_ERR_SIGNAL) release_output(&r, rc, resumed);
    if (rc == HS_OK && r.ops->finish) rc = r.ops->finish(r.state);
    if (rc == HS_OK && t_end > 0) progress_line(&r, 1);
    if (rc == HS_OK) {
        double t, te;
        int64_t step;
        r.ops->progress(r.state, &t, &step, &te, &work);
        summary_line(&r, te > 0 && t < te ? "stopped at run.max_steps" : "finished");
    } else if (rc == HS_ERR_SIGNAL) {
        summary_line(&r, "stopped on a signal");
    } else if (*hs_io_written_list()) {
        summary_line(&r, "failed");
    }
    r.ops->destroy(r.state);
    return rc;
}
