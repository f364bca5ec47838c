/* The driver: the run policy around a solver's ops (time loop, output cadence, checkpoints,
 * restarts, signals, progress). */
#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <libgen.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
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
    {"run", "walltime", HS_PARAM_STRING, "none", 0, 0, NULL,
     "wall-clock limit hh:mm:ss from the run's start: checkpoint and exit 3 before it (none: no limit)"},
    {"run", "walltime_reserve", HS_PARAM_REAL, "10", 0, HS_NO_MAX, NULL,
     "seconds kept free before run.walltime beyond the predicted step and checkpoint (for closing files and MPI)"},
    {"output", "format", HS_PARAM_ENUM, "auto", 0, 0, HS_OUTPUT_FORMAT_CHOICES, "gridded output format (auto: NetCDF when built in, else HDF5)"},
    {"output", "path", HS_PARAM_STRING, "output", 0, 0, NULL, "output file name without extension (.nc or .h5 is added)"},
    {"output", "every_steps", HS_PARAM_INT, "0", 0, HS_NO_MAX, NULL, "write a record every N steps (0: off)"},
    {"output", "every_time", HS_PARAM_REAL, "0", 0, HS_NO_MAX, NULL, "write a record every T of simulated time (0: off)"},
    {"output", "deflate", HS_PARAM_INT, "0", 0, 9, NULL, "zlib compression level of the output (0: none)"},
    {"output", "parallel", HS_PARAM_ENUM, "auto", 0, 0, HS_OUTPUT_PARALLEL_CHOICES,
     "how the ranks write: auto (collectively, each rank its own part, where the build has parallel HDF5/NetCDF), off (gathered through rank 0)"},
    {"output", "time_units", HS_PARAM_STRING, "seconds since 2000-01-01 00:00:00", 0, 0, NULL, "CF units of the time axis: UNIT since DATE, the date in the standard calendar"},
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
    "run.restart", "run.max_steps", "run.quiet", "run.progress_interval", "run.walltime", "run.walltime_reserve", "run.device", "run.allow_shared_gpu",
    "run.gpu_comm", "run.deterministic", "output.format", "output.path", "output.every_steps", "output.every_time",
    "output.deflate", "output.parallel", "output.overwrite", "checkpoint.every_steps", "checkpoint.path", "checkpoint.format",
    "checkpoint.on_signal", NULL,
};

/* ------------------------------------------------------------------ checks before anything runs */

/* Test hook: HS_TEST_MEMORY_BYTES=N makes the memory check take N bytes as the free GPU memory and
 * the available host memory, so that a test sees its figures and its verdict on a small grid (a grid
 * too large for the test machine took minutes to check and may fit a larger one). */
static double test_memory_bytes(void)
{
    const char *s = getenv("HS_TEST_MEMORY_BYTES");
    return s ? atof(s) : 0;
}

int hs_driver_check_memory(hs_ctx *ctx, const hs_params *p, const char *key, const char *what, const char *advice,
                           double device, double host)
{
    if (ctx->device == HS_DEVICE_CPU) host += device, device = 0; /* one memory: count it once */
    const double fake = test_memory_bytes();
    const double gpu_free = fake > 0 ? fake : hs_mem_available(ctx), host_free = fake > 0 ? fake : hs_mem_host_available();
    double worst[4] = {device / gpu_free, host / host_free, device, host};
    HS_CHECK(hs_allreduce_max(ctx->comm, worst, 4));
    if (worst[0] > 1)
        return hs_params_error(p, key, "%s needs %.4g GB (%.0f bytes) of GPU memory on the busiest rank, %.4g GB (%.0f bytes) are free; %s",
                               what, worst[2] / 1e9, worst[2], worst[2] / worst[0] / 1e9, worst[2] / worst[0], advice);
    if (worst[1] > 1)
        return hs_params_error(p, key, "%s needs %.4g GB (%.0f bytes) of host memory on the busiest rank, %.4g GB (%.0f bytes) are "
                                       "available; %s",
                               what, worst[3] / 1e9, worst[3], worst[3] / worst[1] / 1e9, worst[3] / worst[1], advice);
    return HS_OK;
}

/* A wall-time stop writes its checkpoint whatever checkpoint.on_signal says. */
static int checkpoints_used(const hs_params *p)
{
    return hs_params_int(p, "checkpoint.every_steps") > 0 || hs_params_bool(p, "checkpoint.on_signal") ||
           strcmp(hs_params_string(p, "run.walltime"), "none") != 0;
}

/* The extensions the writers add to output.path (gridded files, the XDMF companion, JSON reports). */
static const char *const g_output_exts[] = {"", ".nc", ".h5", ".xmf", ".json", NULL};

/* A run's identity: 16 hex digits drawn when it starts fresh, written to its output file
 * (hpcsim_run_id) and its checkpoints; a restart keeps it, and continues an output file only if
 * the file is this run's (a restart into another run's file spliced the two runs' records). */
enum { HS_RUN_ID_LEN = 24 };
#define RUN_ID_ARRAY "hpcsim_run_id"
/* 1 when the record at a checkpoint's step came from the output cadence (or is the first): a
 * restart keeps the record at the checkpoint's time only then.  A run stopped at run.max_steps
 * writes its final state off the cadence, and the restart kept it: one record more than the same
 * run without the stop. */
#define RECORD_ARRAY "hpcsim_record_on_cadence"
/* A checkpoint holds the FNV-1a hash of each input file the run read (a mask, a mesh, a model...)
 * under "hpcsim_input:KEY": a restart whose file has other contents since (the same name) would
 * continue a state made from another input, so it is refused.  (A new name is a changed key,
 * refused by the parameter comparison already.) */
#define INPUT_ARRAY_PREFIX "hpcsim_input:"
enum { HS_MAX_HASHED_INPUTS = 16 };
typedef struct {
    int n;
    const char *keys[HS_MAX_HASHED_INPUTS];
    uint64_t hash[HS_MAX_HASHED_INPUTS]; /* 0: the file could not be read (not judged) */
} input_hashes;

/* "hh:mm:ss" (hours of any number of digits, minutes and seconds below 60, seconds may have a
 * fraction) as seconds; -1 when malformed. */
static double parse_hms(const char *s)
{
    long h, m;
    double sec;
    int used = 0;
    if (sscanf(s, "%ld:%ld:%lf%n", &h, &m, &sec, &used) != 3 || s[used] != '\0') return -1;
    if (h < 0 || m < 0 || m > 59 || !(sec >= 0) || sec >= 60 || strchr(s, '-') || strchr(s, '+')) return -1;
    return (double)h * 3600 + (double)m * 60 + sec;
}

/* run.walltime in seconds (0: none), with its input rules. */
static int walltime_seconds(const hs_params *p, double *seconds)
{
    const char *w = hs_params_string(p, "run.walltime");
    *seconds = 0;
    if (!strcmp(w, "none")) return HS_OK;
    double s = parse_hms(w);
    if (s < 0) return hs_params_error(p, "run.walltime", "'%s' is not a time hh:mm:ss (or none)", w);
    if (s <= 0) return hs_params_error(p, "run.walltime", "must be longer than 00:00:00 (none: no limit)");
    double reserve = hs_params_real(p, "run.walltime_reserve");
    if (reserve >= s)
        return hs_params_error(p, "run.walltime_reserve", "%g s leaves nothing of run.walltime = %s to run in", reserve, w);
    *seconds = s;
    return HS_OK;
}

/* Records a run may write at most through output.every_time: more is not output but a run that
 * never ends (output.every_time = 1e-300 stepped 1e-300 at a time). */
#define HS_MAX_TIME_RECORDS 1e9

/* The time keys of a time-dependent solver (SOLVER.t_end, SOLVER.dt): output.every_time must
 * leave a finite number of records, a fixed step must be able to move the time up to t_end. */
static int time_keys_check(const hs_params *p)
{
    char tkey[96], dkey[96];
    snprintf(tkey, sizeof tkey, "%s.t_end", hs_params_string(p, "run.solver"));
    snprintf(dkey, sizeof dkey, "%s.dt", hs_params_string(p, "run.solver"));
    if (!hs_params_declared(tkey)) return HS_OK;
    const double t_end = hs_params_real(p, tkey), every = hs_params_real(p, "output.every_time");
    /* a subnormal end or step: the solvers divide by the step (a projection, a rate), and 1/dt
     * overflowed (cfd.t_end = 4.9e-324 ended in NaN velocities, exit 1) */
    if (t_end > 0 && t_end < DBL_MIN)
        return hs_params_error(p, tkey, "%g is below the smallest normal double (%g): no step that short can be taken", t_end, DBL_MIN);
    if (hs_params_declared(dkey) && hs_params_real(p, dkey) > 0 && hs_params_real(p, dkey) < DBL_MIN)
        return hs_params_error(p, dkey, "%g is below the smallest normal double (%g): no step that short can be taken",
                               hs_params_real(p, dkey), DBL_MIN);
    if (every > 0 && t_end / every > HS_MAX_TIME_RECORDS)
        return hs_params_error(p, "output.every_time", "%g asks for %.3g records up to %s = %g: at most %g", every, t_end / every,
                               tkey, t_end, HS_MAX_TIME_RECORDS);
    if (hs_params_declared(dkey)) {
        const double dt = hs_params_real(p, dkey);
        if (hs_step_below_time_resolution(dt, t_end))
            return hs_params_error(p, dkey, "%g is below the resolution of the time near %s = %g (%g): the time could not advance to it",
                                   dt, tkey, t_end, t_end * DBL_EPSILON);
    }
    return HS_OK;
}

/* output.time_units: CF's "UNIT since DATE" for a time axis (a UDUNITS time unit, a date that
 * starts with its year and exists in the standard calendar); "banana" and "days since 2001-02-29"
 * made files that no CF reader could place in time. */
static int time_units_check(const hs_params *p)
{
    const char *v = hs_params_string(p, "output.time_units");
    char why[256];
    if (!hs_time_units_writable(v, why, sizeof why)) {
        if (*why) return hs_params_error(p, "output.time_units", "'%s' is not a valid reference time: %s", v, why);
        return hs_params_error(p, "output.time_units", "'%s' is not a CF time unit 'UNIT since DATE' (UNIT: seconds, minutes, hours or days; "
                                                      "DATE: YYYY-MM-DD, then optionally hh:mm:ss and a zone; e.g. seconds since 2000-01-01 00:00:00)", v);
    }
    return HS_OK;
}

/* Whether the gridded output writes files ending in `ext` (".nc" for NetCDF, ".h5" and ".xmf" for
 * HDF5; ".json" and the bare path for whatever a solver may write there): a checkpoint rk.h5 beside
 * NetCDF output rk.nc was refused as "also the output file". */
static int writes_ext(const hs_params *p, const char *ext)
{
    int format = hs_params_enum(p, "output.format");
    if (format == HS_OUTPUT_AUTO) format = HS_HAVE_NETCDF ? HS_OUTPUT_NETCDF : HS_OUTPUT_HDF5;
    if (!strcmp(ext, ".nc")) return format == HS_OUTPUT_NETCDF;
    if (!strcmp(ext, ".h5") || !strcmp(ext, ".xmf")) return format == HS_OUTPUT_HDF5;
    return 1;
}

int hs_driver_check_output_file(const hs_params *p, const char *key, const char *path, const char *what, int exact)
{
    HS_CHECK(hs_params_check_writable(p, key, path, what, exact));
    const char *ckpt = hs_params_string(p, "checkpoint.path");
    if (checkpoints_used(p) && (!strcmp(ckpt, path) || hs_same_target(ckpt, path)))
        return hs_params_error(p, "checkpoint.path", "%s is also the %s (%s): one would replace the other",
                               ckpt, what, key);
    return HS_OK;
}

/* A section of another solver than run.solver's, set in the file or on the command line: the run
 * would ignore it ([quantum] shots = 5 in a heat run ran without a word), so it is bad input, unless
 * it is a leftover of the file under a solver switched on the command line. */
static int foreign_section_check(const hs_params *p, const char *section)
{
    char key[160];
    if (hs_params_section_set_against(p, section, "run.solver", key, sizeof key)) return hs_params_unused(p, key, "run.solver");
    return HS_OK;
}

static int foreign_sections_check(const hs_params *p)
{
    const hs_solver_ops *mine = hs_solver_find(hs_params_string(p, "run.solver"));
    if (!mine) return HS_OK;
    for (const hs_solver_ops *const *o = hs_solver_list(); *o; o++) {
        if (*o == mine) continue;
        HS_CHECK(foreign_section_check(p, (*o)->name));
        for (const char *const *sec = (*o)->sections; sec && *sec; sec++) HS_CHECK(foreign_section_check(p, *sec));
    }
    return HS_OK;
}

int hs_driver_check(const hs_params *p)
{
    double walltime;
    HS_CHECK(foreign_sections_check(p));
    HS_CHECK(walltime_seconds(p, &walltime));
    HS_CHECK(time_units_check(p));
    HS_CHECK(time_keys_check(p));
    const char *out = hs_params_string(p, "output.path");
    const char *ckpt = hs_params_string(p, "checkpoint.path");
    int fresh = !strcmp(hs_params_string(p, "run.restart"), "none");
    int writes_output = hs_params_enum(p, "output.format") != HS_OUTPUT_NONE;
    /* the directory of the files actually written (PATH.nc ...): "out/" names the folder out */
    char first[8192];
    /* the run's output_path holds PATH.nc where the solver writes through the driver (selftest writes nothing) */
    const hs_solver_ops *ops = hs_solver_find(hs_params_string(p, "run.solver"));
    const int gridded = writes_output && ops && ops->describe_output;
    if (snprintf(first, sizeof first, "%s.nc", out) >= (int)sizeof first && gridded)
        return hs_params_error(p, "output.path", "is longer than %zu characters", sizeof first - 4);
    HS_CHECK(hs_params_check_writable(p, "output.path", first, "output file", 0));
    /* PATH.nc.partial, PATH.xmf.partial: the longest names the output writes (a solver with longer
     * companions checks them: FEM's VTU pieces) */
    if (gridded)
        HS_CHECK(hs_params_check_name_length(p, "output.path", out, (writes_ext(p, ".xmf") ? strlen(".xmf") : strlen(".nc")) + strlen(".partial"),
                                             "output file"));
    /* The .xmf names its data as FILE.h5:/dataset, and XDMF readers split that at the first ':'
     * (ParaView's XDMF 3 reader aborted on output.path = c:d, the legacy one showed an empty grid);
     * XDMF has no escape for it.  The references hold the file's own name only, so a ':' in a
     * folder name is fine. */
    const char *base = strrchr(out, '/');
    base = base ? base + 1 : out;
    if (writes_output && writes_ext(p, ".xmf") && strchr(base, ':'))
        return hs_params_error(p, "output.path",
                               "the file name '%s' has a ':', which the .xmf cannot reference (XDMF readers take the first ':' of "
                               "'%s.h5:/dataset' as the end of the file name, and ParaView cannot open it); a ':' in a folder is fine",
                               base, base);
    for (int i = 1; g_output_exts[i]; i++) {
        char path[8192];
        struct stat st;
        snprintf(path, sizeof path, "%s%s", out, g_output_exts[i]);
        if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
            return hs_params_error(p, "output.path", "output file %s is a directory", path);
        if (hs_params_is_param_file(p, path))
            return hs_params_error(p, "output.path", "output file %s is the parameter file: writing it would replace the input", path);
        const char *input = writes_ext(p, g_output_exts[i]) ? hs_params_input_named(p, path) : NULL;
        if (input)
            return hs_params_error(p, "output.path", "output file %s is the input file of %s: writing it would replace the input",
                                   path, input);
    }
    if (checkpoints_used(p)) {
        if (!HS_HAVE_HDF5 && hs_params_enum(p, "checkpoint.format") == HS_CKPT_FORMAT_HDF5)
            return hs_params_error(p, "checkpoint.format", "this build has no HDF5 (use auto or binary)");
        HS_CHECK(hs_params_check_writable(p, "checkpoint.path", ckpt, "checkpoint", 1));
        size_t lo = strlen(out);
        for (int i = 0; g_output_exts[i]; i++)
            if (writes_output && writes_ext(p, g_output_exts[i]) && !strncmp(ckpt, out, lo) && !strcmp(ckpt + lo, g_output_exts[i]))
                return hs_params_error(p, "checkpoint.path",
                                       "%s is also the output file (output.path = %s): the checkpoint would replace it",
                                       ckpt, out);
    }
    if (fresh && writes_output && !hs_params_bool(p, "output.overwrite")) {
        for (int i = 1; g_output_exts[i]; i++) {
            char path[8192];
            snprintf(path, sizeof path, "%s%s", out, g_output_exts[i]);
            if (writes_ext(p, g_output_exts[i]) && hs_io_file_exists(path))
                return hs_params_error(p, "output.overwrite", "%s exists and output.overwrite = false", path);
        }
    }
    return HS_OK;
}

static int open_restart(hs_ctx *ctx, const hs_params *p, const hs_solver_ops *ops, const char *path, int report,
                        hs_checkpoint **c, double *time, char run_id[HS_RUN_ID_LEN], input_hashes *inputs);

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
        char id[HS_RUN_ID_LEN];
        input_hashes inputs;
        HS_CHECK(open_restart(ctx, p, ops, restart, 0, &c, &t, id, &inputs));
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
    double time_scale;          /* file time units per second of model time (output.time_units) */
    char output_path[8192];
    int64_t out_every, ckpt_every, max_steps;
    double out_dt, next_out_time;
    int quiet, tty;
    double wall0, loop0, last_print, print_every;  /* run start, time-loop start, last progress line */
    int64_t step0;
    int64_t last_written_step;
    int checkpoints;            /* checkpoints written */
    int stopped_by;             /* an early stop: 1 signal, 2 run.walltime */
    int watch;                  /* signals are caught (checkpoint.on_signal) or run.walltime is set */
    const char *argv0;          /* how the program was called, for the restart hint */
    char started[32];           /* UTC time stamp of the run's start */
    char run_id[HS_RUN_ID_LEN];   /* see HS_RUN_ID_LEN */
    int keep_restart_record;      /* see RECORD_ARRAY */
    int inputs_hashed;            /* see INPUT_ARRAY_PREFIX: at the first checkpoint, or verified by a restart */
    input_hashes inputs;
    /* run.walltime: the limit and reserve (s), and what the prediction of the next stop needs */
    double walltime, reserve, clock_skew;
    double max_chunk, max_ckpt, max_record; /* longest advance call, checkpoint, record written (s) */
    double t_output, t_ckpt;    /* wall time spent writing records and checkpoints */
    /* stop agreement: a non-blocking all-reduce of {signal, wall time due} started at one step
     * boundary, completed at the next */
    MPI_Request stop_req;
    int stop_local[2], stop_global[2], stop_pending;
} run_state;

/* Is this rank's wall time running out?  1 when the next step boundary might come too late: the
 * time so far, `chunks` times the longest advance call (2 at a step boundary, whose agreement lags a
 * step behind; 0 inside a solver's long step, which answers at once), the longest checkpoint (before
 * the first, the longest record written stands in for it) and the reserve reach the limit. */
static int walltime_due_in(const run_state *r, int chunks)
{
    if (r->walltime <= 0) return 0;
    double ckpt = r->max_ckpt > 0 ? r->max_ckpt : r->max_record;
    return hs_wtime() - r->wall0 + r->clock_skew + chunks * r->max_chunk + ckpt + r->reserve >= r->walltime;
}

static int walltime_due(const run_state *r) { return walltime_due_in(r, 2); }

/* Test hook: HS_TEST_WALLTIME_SKEW=RANK:SECONDS puts that rank's clock SECONDS ahead, so that one
 * rank alone finds run.walltime running out (the others must stop at the same step with it). */
static double test_clock_skew(int rank)
{
    const char *s = getenv("HS_TEST_WALLTIME_SKEW");
    int r;
    double sec;
    return s && sscanf(s, "%d:%lf", &r, &sec) == 2 && r == rank ? sec : 0;
}

/* The run in progress (its wall-time rule) and whether a solver's long step was cut short. */
static run_state *g_current_run;
static int g_interrupted; /* the signal, or -1 for run.walltime */

/* Test hook: HS_TEST_SIGNAL_AT_POLL=N makes the N-th call of hs_driver_interrupted (from 1) send the
 * process SIGTERM first (through the real handler), so that tests stop a solver's long step at a
 * known point inside it (HS_TEST_SIGNAL_AT_STEP stops at a step boundary). */
static void test_poll_hook(void)
{
    static long long at = -2, calls = 0;
    if (at == -2) {
        const char *e = getenv("HS_TEST_SIGNAL_AT_POLL");
        at = e ? atoll(e) : -1;
    }
    if (at > 0 && ++calls == at) raise(SIGTERM);
}

int hs_driver_interrupted(hs_ctx *ctx)
{
    /* nothing to watch (no handler, no wall-time limit; the same on every rank): no collective */
    if (!g_current_run || !g_current_run->watch) return 0;
    test_poll_hook();
    int flags[2] = {(int)g_signal, walltime_due_in(g_current_run, 0)};
    if (ctx->size > 1 && hs_allreduce_int_max(ctx->comm, flags, 2) != HS_OK) return 0;
    if (flags[0] || flags[1]) g_interrupted = flags[0] ? flags[0] : -1;
    return g_interrupted && (flags[0] || flags[1]) ? g_interrupted : 0;
}

/* Must the run stop here?  *sig: a signal some rank caught; *wall: some rank's wall time is
 * running out.  Every rank gets the same answer at the same boundary: the flags reduced here were
 * sent at the previous boundary, while the step ran (one rank: no collective). */
static int stop_agreed(run_state *r, int *sig, int *wall)
{
    *sig = *wall = 0;
    if (r->ctx->size == 1) {
        *sig = (int)g_signal;
        *wall = walltime_due(r);
        return HS_OK;
    }
    if (r->stop_pending) {
        HS_CHECK(hs_host_wait(&r->stop_req));
        r->stop_pending = 0;
        if (r->stop_global[0] || r->stop_global[1]) {
            *sig = r->stop_global[0];
            *wall = r->stop_global[1];
            return HS_OK;
        }
    }
    r->stop_local[0] = (int)g_signal;
    r->stop_local[1] = walltime_due(r);
    HS_CHECK(hs_host_iallreduce(r->ctx->comm, HS_I32, HS_COMM_MAX, r->stop_local, r->stop_global, 2, &r->stop_req));
    r->stop_pending = 1;
    return HS_OK;
}

static void stop_drain(run_state *r)
{
    /* on the way out, after success or failure alike: a pending error must keep its message */
    if (r->stop_pending) (void)hs_host_wait(&r->stop_req);
    r->stop_pending = 0;
}

/* ------------------------------------------------------------------ progress and summary */

/* Append to a line of len bytes at *n, truncating (never past the end; *n stays below len). */
static void line_append(char *line, size_t len, size_t *n, const char *fmt, ...)
{
    if (*n + 1 >= len) return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(line + *n, len - *n, fmt, ap);
    va_end(ap);
    if (k > 0) *n = *n + (size_t)k < len ? *n + (size_t)k : len - 1;
}

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
    /* %.3g keeps the ETA short: a %.1f of an ETA of 1e300 s (a run that cannot end) is 300 digits,
     * and snprintf's count of what it would have written then pointed past the line */
    size_t n = 0;
    line_append(line, sizeof line, &n, "step %lld  t = %.6g (%.1f%%)  wall %.1f s", (long long)step, t, 100 * frac, wall);
    if (!final) line_append(line, sizeof line, &n, eta < 1e6 ? "  ETA %.1f s" : "  ETA %.3g s", eta);
    if (work > 0) line_append(line, sizeof line, &n, "  %.3g %s/s", rate, r->ops->work_unit ? r->ops->work_unit : "updates");
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
    desc.run_id = r->run_id[0] ? r->run_id : NULL;
    desc.deflate_level = (int)hs_params_int(r->p, "output.deflate");
    desc.parallel = hs_params_enum(r->p, "output.parallel"); /* hs_output_parallel, in the choices' order */
    /* model time is in seconds: a file in minutes, hours or days since a date holds it in that unit
     * (the values were seconds under a "days since" label: xarray read 0.001 s as 86.4 s) */
    r->time_scale = 1;
    if (!desc.time_units) {
        desc.time_units = hs_params_string(r->p, "output.time_units");
        r->time_scale = 1 / hs_time_unit_seconds(desc.time_units);
    }
    /* the records up to the checkpoint's time are kept; the one at that time only when on the cadence */
    double keep = time * r->time_scale;
    if (resumed && !r->keep_restart_record) keep = nextafter(keep, -INFINITY);
    int rc = resumed ? hs_writer_resume(r->ctx, &desc, keep, &r->writer) : hs_writer_open(r->ctx, &desc, &r->writer);
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
    double w0 = hs_wtime();
    HS_CHECK(hs_writer_begin_step(r->writer, t * r->time_scale));
    int rc = r->ops->write(r->state, r->writer);
    r->last_written_step = step;
    /* the header and the first record on disk at once: a run killed before its first checkpoint
     * then leaves an output that opens (HDF5 holds its metadata in memory until a flush) */
    if (rc == HS_OK && hs_writer_records(r->writer) == 1) rc = hs_writer_sync(r->writer);
    double took = hs_wtime() - w0;
    r->t_output += took;
    if (took > r->max_record) r->max_record = took;
    if (rc != HS_OK && hs_writer_nonfinite(r->writer))
        return HS_FAIL(HS_ERR_RUNTIME, "the solution is no longer finite at step %lld, t = %.9g (the record was written)",
                       (long long)step, t);
    return rc;
}

/* UTC now as "YYYY-MM-DDThh:mm:ssZ". */
static void utc_stamp(char *buf, size_t len)
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* The run's record in the output file's global attributes, written just before the file is closed
 * or suspended (a restart's close replaces them; `hpcsim summary` prints them): why and where it
 * stopped, its wall times, rate, ranks, threads and device.  reason: finished | max_steps |
 * walltime | signal | failed (a state that stopped being finite); detail: one line for people.
 * Collective. */
static int write_run_attrs(run_state *r, const char *reason, const char *detail)
{
    double t, t_end, work;
    int64_t step;
    r->ops->progress(r->state, &t, &step, &t_end, &work);
    double now = hs_wtime(), loop = now - r->loop0;
    char ended[32], host[256] = "unknown";
    utc_stamp(ended, sizeof ended);
    gethostname(host, sizeof host - 1);
    int threads = r->ctx->nthreads;
    hs_writer *w = r->writer;
    int rc = hs_writer_attr_text(w, "hpcsim_stop_reason", reason);
    if (rc == HS_OK) rc = hs_writer_attr_text(w, "hpcsim_stop_detail", detail);
    if (rc == HS_OK) rc = hs_writer_attr_real(w, "hpcsim_stop_step", (double)step);
    if (rc == HS_OK) rc = hs_writer_attr_real(w, "hpcsim_stop_time", t);
    if (rc == HS_OK) rc = hs_writer_attr_real(w, "hpcsim_end_time", t_end);
    if (rc == HS_OK) rc = hs_writer_attr_text(w, "hpcsim_run_started", r->started);
    if (rc == HS_OK) rc = hs_writer_attr_text(w, "hpcsim_run_ended", ended);
    if (rc == HS_OK) rc = hs_writer_attr_text(w, "hpcsim_restarted_from", hs_params_string(r->p, "run.restart"));
    if (rc == HS_OK) rc = hs_writer_attr_real(w, "hpcsim_first_step", (double)r->step0);
    if (rc == HS_OK) rc = hs_writer_attr_real(w, "hpcsim_wall_time", now - r->wall0);
    if (rc == HS_OK) rc = hs_writer_attr_real(w, "hpcsim_loop_time", loop);
    if (rc == HS_OK) rc = hs_writer_attr_real(w, "hpcsim_output_time", r->t_output);
    if (rc == HS_OK) rc = hs_writer_attr_real(w, "hpcsim_checkpoint_time", r->t_ckpt);
    if (rc == HS_OK) rc = hs_writer_attr_real(w, "hpcsim_checkpoints", (double)r->checkpoints);
    if (rc == HS_OK)
        rc = hs_writer_attr_text(w, "hpcsim_checkpoint", r->checkpoints > 0 ? hs_params_string(r->p, "checkpoint.path") : "none");
    if (rc == HS_OK && work > 0 && loop > 0) {
        rc = hs_writer_attr_real(w, "hpcsim_rate", work * (double)(step - r->step0) / loop);
        if (rc == HS_OK) rc = hs_writer_attr_text(w, "hpcsim_rate_unit", r->ops->work_unit ? r->ops->work_unit : "updates");
    }
    if (rc == HS_OK) rc = hs_writer_attr_real(w, "hpcsim_ranks", (double)r->ctx->size);
    if (rc == HS_OK) rc = hs_writer_attr_real(w, "hpcsim_threads", (double)threads);
    if (rc == HS_OK) rc = hs_writer_attr_text(w, "hpcsim_device", hs_device_name(r->ctx->device));
    if (rc == HS_OK) rc = hs_writer_attr_text(w, "hpcsim_host", host);
    if (rc == HS_OK) rc = hs_writer_attr_text(w, "hpcsim_walltime", hs_params_string(r->p, "run.walltime"));
    return rc;
}

/* ------------------------------------------------------------------ checkpoints and restarts */

/* The driver's own small checkpoint arrays: one value, held by rank 0; read back with *found = 0
 * from a checkpoint older than the array.  Collective. */
static int put_scalar(hs_ctx *ctx, hs_checkpoint *c, const char *name, uint64_t v)
{
    return hs_checkpoint_write(c, name, HS_U64, ctx->rank == 0 ? 1 : 0, &v);
}

static int get_scalar(hs_ctx *ctx, hs_checkpoint *c, const char *name, uint64_t *v, int *found)
{
    HS_CHECK(hs_checkpoint_has(c, name, found));
    if (!*found) return HS_OK;
    HS_CHECK(hs_checkpoint_read(c, name, HS_U64, ctx->rank == 0 ? 1 : 0, v));
    HS_MPI_CHECK(MPI_Bcast(v, 1, MPI_UINT64_T, 0, ctx->comm));
    return HS_OK;
}

/* The FNV-1a hash of each input file the parameters name (rank 0 reads; 0 for a file that cannot
 * be read, which is then not judged); every rank gets them.  Collective. */
static int hash_input_files(hs_ctx *ctx, const hs_params *p, input_hashes *in)
{
    in->n = hs_params_inputs_used(p, in->keys, HS_MAX_HASHED_INPUTS);
    const int n = in->n;
    const char *const *keys = in->keys;
    uint64_t *hash = in->hash;
    if (ctx->rank == 0) {
        enum { CHUNK = 1 << 20 };
        unsigned char *buf = malloc(CHUNK);
        if (!buf) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory");
        for (int i = 0; i < n; i++) {
            FILE *f = fopen(hs_params_input_path(p, keys[i]), "rb");
            uint64_t h = HS_FNV1A64_INIT;
            size_t got;
            while (f && (got = fread(buf, 1, CHUNK, f)) > 0) h = hs_fnv1a64(h, buf, got);
            hash[i] = f && !ferror(f) ? h : 0;
            if (f) fclose(f);
        }
        free(buf);
    }
    if (n > 0) HS_MPI_CHECK(MPI_Bcast(hash, n, MPI_UINT64_T, 0, ctx->comm));
    return HS_OK;
}

static int write_input_hashes(run_state *r, hs_checkpoint *c)
{
    if (!r->inputs_hashed) HS_CHECK(hash_input_files(r->ctx, r->p, &r->inputs));
    r->inputs_hashed = 1;
    for (int i = 0; i < r->inputs.n; i++) {
        char name[128];
        snprintf(name, sizeof name, "%s%s", INPUT_ARRAY_PREFIX, r->inputs.keys[i]);
        if (r->inputs.hash[i]) HS_CHECK(put_scalar(r->ctx, c, name, r->inputs.hash[i]));
    }
    return HS_OK;
}

static int write_checkpoint(run_state *r)
{
    double t, t_end, work;
    int64_t step;
    r->ops->progress(r->state, &t, &step, &t_end, &work);
    if (!r->ops->checkpoint) return HS_FAIL(HS_ERR_RUNTIME, "solver %s cannot write checkpoints", r->ops->name);
    double w0 = hs_wtime();
    /* the records so far must survive a kill after this checkpoint: a restart from it reopens them */
    HS_CHECK(hs_writer_sync(r->writer));
    char *ini = hs_params_to_ini(r->p);
    hs_checkpoint *c = NULL;
    int rc = hs_checkpoint_create(r->ctx, hs_params_string(r->p, "checkpoint.path"), r->ops->name, ini, step, t,
                                  hs_params_enum(r->p, "checkpoint.format"), &c);
    free(ini);
    HS_CHECK(rc);
    rc = put_scalar(r->ctx, c, RUN_ID_ARRAY, strtoull(r->run_id, NULL, 16));
    /* the record at this step was written by the cadence before this checkpoint, or not */
    if (rc == HS_OK) rc = put_scalar(r->ctx, c, RECORD_ARRAY, step == r->last_written_step);
    if (rc == HS_OK) rc = write_input_hashes(r, c);
    if (rc == HS_OK) rc = r->ops->checkpoint(r->state, c);
    if (rc != HS_OK) {
        hs_checkpoint_discard(c);
        return hs_error_trace(rc, __FILE__, __LINE__, "checkpoint");
    }
    HS_CHECK(hs_checkpoint_close(c));
    r->checkpoints++;
    double took = hs_wtime() - w0;
    r->t_ckpt += took;
    if (took > r->max_ckpt) r->max_ckpt = took;
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

/* A fresh run's identity, drawn on rank 0 (the kernel's random bytes; the clock and the process as
 * a fallback) and broadcast. */
static int new_run_id(hs_ctx *ctx, char id[HS_RUN_ID_LEN])
{
    uint64_t v = 0;
    if (ctx->rank == 0) {
        FILE *f = fopen("/dev/urandom", "rb");
        if (!f || fread(&v, sizeof v, 1, f) != 1) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            v = ((uint64_t)ts.tv_sec * 1000000007u) ^ ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)getpid();
        }
        if (f) fclose(f);
    }
    HS_MPI_CHECK(MPI_Bcast(&v, 1, MPI_UINT64_T, 0, ctx->comm));
    snprintf(id, HS_RUN_ID_LEN, "%016llx", (unsigned long long)v);
    return HS_OK;
}

/* The identity a checkpoint carries ("" for a checkpoint written before runs had one). */
static int read_run_id(hs_ctx *ctx, hs_checkpoint *c, char id[HS_RUN_ID_LEN])
{
    int found = 0;
    uint64_t v = 0;
    id[0] = 0;
    HS_CHECK(get_scalar(ctx, c, RUN_ID_ARRAY, &v, &found));
    if (found) snprintf(id, HS_RUN_ID_LEN, "%016llx", (unsigned long long)v);
    return HS_OK;
}

/* A restart continues the output file it finds at output.path (PATH.EXT.partial, else PATH.EXT):
 * one that another run wrote (its hpcsim_run_id differs from the checkpoint's) is refused, naming
 * both, before anything is touched; so is one the reader finds truncated or damaged.  Files without the attribute (older, or not hpcsim's) and
 * checkpoints without an identity are not judged.  Rank 0 looks; every rank gets its verdict. */
static int check_resumed_output(hs_ctx *ctx, const hs_params *p, const char *ckpt, const char *run_id)
{
    if (!run_id[0] || hs_params_enum(p, "output.format") == HS_OUTPUT_NONE) return HS_OK;
    int rc = HS_OK;
    if (ctx->rank == 0) {
        const char *out = hs_params_string(p, "output.path");
        static const char *const exts[] = {".nc", ".h5"};
        for (int i = 0; rc == HS_OK && i < 2; i++) {
            if (!writes_ext(p, exts[i])) continue;
            char path[8300];
            snprintf(path, sizeof path, "%s%s.partial", out, exts[i]);
            if (!hs_io_file_exists(path)) snprintf(path, sizeof path, "%s%s", out, exts[i]);
            if (!hs_io_file_exists(path)) continue;
            hs_reader *rd = NULL;
            int orc = hs_reader_open(path, &rd);
            if (orc == HS_ERR_INPUT) { /* truncated or damaged: refused here, by check as by run (the
                                        * writer's reopen failed as a runtime error, exit 1) */
                char why[600];
                snprintf(why, sizeof why, "%s", hs_error_message());
                why[strcspn(why, "\n")] = '\0';
                hs_error_clear();
                rc = hs_params_error(p, "output.path", "%s cannot be continued (%s); move it away to start a new file", path, why);
                break;
            }
            if (orc != HS_OK) {
                hs_error_clear();
                continue;
            }
            char theirs[64];
            int found = 0;
            rc = hs_reader_attr_text(rd, NULL, "hpcsim_run_id", theirs, sizeof theirs, &found);
            hs_reader_close(rd);
            if (rc == HS_OK && found && strcmp(theirs, run_id) != 0)
                rc = hs_params_error(p, "output.path",
                                     "%s belongs to another run (hpcsim_run_id %s), not to the run of the checkpoint %s "
                                     "(%s): continuing it would splice the two runs' records; name another output.path, "
                                     "or move the file away to start a new one",
                                     path, theirs, ckpt, run_id);
        }
    }
    int code = rc;
    HS_MPI_CHECK(MPI_Bcast(&code, 1, MPI_INT, 0, ctx->comm));
    if (ctx->rank != 0 && code != HS_OK) return code == HS_ERR_INPUT ? code : HS_FAIL(code, "checking the output file failed on rank 0");
    return rc;
}

/* The input files a restart reads must be the ones its checkpoint's run read (see
 * INPUT_ARRAY_PREFIX); keys a restart may change, files that cannot be read and checkpoints without
 * the hash are not judged.  *now gets the files' hashes, which the restarted run's checkpoints keep
 * (each file is read once). */
static int check_input_hashes(hs_ctx *ctx, const hs_params *p, const hs_solver_ops *ops, hs_checkpoint *c, const char *ckpt,
                              input_hashes *now)
{
    HS_CHECK(hash_input_files(ctx, p, now));
    for (int i = 0; i < now->n; i++) {
        const char *key = now->keys[i];
        if (!now->hash[i] || in_list(g_restart_may_change, key) || in_list(ops->restart_may_change, key)) continue;
        char name[128];
        snprintf(name, sizeof name, "%s%s", INPUT_ARRAY_PREFIX, key);
        int found = 0;
        uint64_t then = 0;
        HS_CHECK(get_scalar(ctx, c, name, &then, &found));
        if (found && then != now->hash[i])
            return hs_params_error(p, key,
                                   "the file %s is not the one the checkpoint %s was made from (its contents changed: FNV-1a "
                                   "%016llx then, %016llx now); a restart must read the same input (start afresh to change it)",
                                   hs_params_input_path(p, key), ckpt, (unsigned long long)then, (unsigned long long)now->hash[i]);
    }
    return HS_OK;
}

/* Open the checkpoint a restart continues from and compare its parameters with the run's: the
 * rules shared by `check` (hs_driver_validate) and `run` (restore). */
static int open_restart(hs_ctx *ctx, const hs_params *p, const hs_solver_ops *ops, const char *path, int report,
                        hs_checkpoint **c, double *time, char run_id[HS_RUN_ID_LEN], input_hashes *inputs)
{
    int64_t step = 0;
    *c = NULL;
    run_id[0] = 0;
    if (!ops->restore) return hs_params_error(p, "run.restart", "solver %s cannot restart from checkpoints", ops->name);
    /* a checkpoint that cannot be read or is none is the key's error, as for every input file a
     * key names (the reader named the file alone: "ck.h5: cannot read the checkpoint") */
    HS_CHECK(hs_checkpoint_open_key(ctx, p, "run.restart", "checkpoint", path, ops->name, c, &step, time));
    diff_ctx d = {ctx, p, ops, path, report};
    int rc = hs_params_diff_ini(p, hs_checkpoint_params(*c), on_changed_key, &d);
    if (rc == HS_OK) rc = read_run_id(ctx, *c, run_id);
    if (rc == HS_OK) rc = check_resumed_output(ctx, p, path, run_id);
    if (rc == HS_OK) rc = check_input_hashes(ctx, p, ops, *c, path, inputs);
    /* an end time before the checkpoint's time leaves nothing to run: such a restart finished
     * at once with exit 0 and an output of 0 records */
    char tkey[96];
    snprintf(tkey, sizeof tkey, "%s.t_end", ops->name);
    if (rc == HS_OK && ops->end_key && ops->run_end) {
        /* a run that ends at a count of its own (the surrogate's steps: one below the checkpoint's
         * wrote an empty output and a model, exit 0) */
        const double end = ops->run_end(p);
        if (end < *time)
            rc = hs_params_error(p, ops->end_key, "%.9g is before the checkpoint %s (at %.9g): nothing would be left to run", end, path,
                                 *time);
    } else if (rc == HS_OK && hs_params_declared(tkey) && hs_params_real(p, tkey) > 0) {
        const double end = ops->run_end ? ops->run_end(p) : hs_params_real(p, tkey);
        char whole[64] = "";
        if (ops->run_end) snprintf(whole, sizeof whole, " (the run ends at %.9g)", end);
        if (end < *time)
            rc = hs_params_error(p, tkey, "%.9g%s is before the time of the checkpoint %s (t = %.9g): nothing would be left to run",
                                 hs_params_real(p, tkey), whole, path, *time);
    }
    if (rc != HS_OK) {
        hs_checkpoint_close(*c);
        *c = NULL;
    }
    return rc;
}

static int restore(run_state *r, const char *path, double *time)
{
    hs_checkpoint *c = NULL;
    char id[HS_RUN_ID_LEN];
    HS_CHECK(open_restart(r->ctx, r->p, r->ops, path, 1, &c, time, id, &r->inputs));
    r->inputs_hashed = 1;
    if (id[0]) memcpy(r->run_id, id, sizeof id); /* a checkpoint without one (older) keeps the new id */
    int found = 0;
    uint64_t keep = 1;
    int rc0 = get_scalar(r->ctx, c, RECORD_ARRAY, &keep, &found);
    if (rc0 != HS_OK) {
        hs_checkpoint_close(c);
        return rc0;
    }
    r->keep_restart_record = !found || keep != 0; /* older checkpoints: the record at their time is kept */
    int rc = r->ops->restore(r->state, c);
    int rc2 = hs_checkpoint_close(c);
    HS_CHECK(rc);
    HS_CHECK(rc2);
    return HS_OK;
}

/* The command that continues this run: the same file and overrides, from the checkpoint. */
static void print_continue_hint(run_state *r, const char *why, int64_t step, double t)
{
    if (r->ctx->rank != 0) return;
    char *prog = hs_params_shell_quote(r->argv0 ? r->argv0 : "hpcsim");
    const char *path = hs_params_string(r->p, "checkpoint.path");
    char *file = hs_params_shell_quote(hs_params_file(r->p));
    char *over = hs_params_overrides_text(r->p, "run.restart");
    char *ck = hs_params_shell_quote(path);
    fprintf(stderr,
            "hpcsim: stopped %s at step %lld (t = %.9g); checkpoint written to %s; "
            "continue with: %s%s run %s%s%s --restart %s\n",
            why, (long long)step, t, path, r->ctx->size > 1 ? "mpirun -n N " : "", prog ? prog : "hpcsim", file ? file : "",
            over && *over ? " " : "", over ? over : "", ck ? ck : path);
    if (r->ctx->size > 1) fprintf(stderr, "hpcsim: (N = %d: a restart needs the same rank count)\n", r->ctx->size);
    fflush(stderr);
    free(prog);
    free(file);
    free(over);
    free(ck);
}

/* Stop before the end: a checkpoint, the output left as PATH.partial (with the run's record in its
 * attributes), the command that continues, exit status 3.  sig: the signal caught (0: none);
 * wall: run.walltime is running out. */
static int stop_early(run_state *r, int sig, int wall)
{
    double t, t_end, work;
    int64_t step;
    r->ops->progress(r->state, &t, &step, &t_end, &work);
    HS_CHECK(write_checkpoint(r));
    /* the state at the stop as a record, for a solver whose latest state is its result (the
     * checkpoint says it is off the cadence: a restart drops it) */
    if (r->writer && r->ops->record_on_stop && r->ops->record_on_stop(r->state)) HS_CHECK(write_record(r));
    char why[96];
    if (sig) snprintf(why, sizeof why, "by signal %d", sig);
    else snprintf(why, sizeof why, "before run.walltime = %s", hs_params_string(r->p, "run.walltime"));
    if (r->writer) {
        HS_CHECK(write_run_attrs(r, sig ? "signal" : "walltime", why));
        HS_CHECK(hs_writer_suspend(r->writer));
        r->writer = NULL;
    }
    progress_line(r, 1);
    print_continue_hint(r, why, step, t);
    r->stopped_by = sig ? 1 : 2;
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

/* The next output.every_time record after time t: the first multiple of `every` that t has not
 * reached by the rule that makes a record due (t >= k every (1 - 1e-12)).  A looser rule at the
 * start of a restart skipped a record: a checkpoint at t = 0.29999999995 took 0.3 as written, and
 * the restarted file lacked the record the uninterrupted run lands on by a last short step. */
static double next_output_time(double t, double every)
{
    double k = floor(t / every);
    while (t >= k * every * (1 - 1e-12)) k++;
    return k * every;
}

static int time_loop(run_state *r)
{
    double t, t_end, work;
    int64_t step;
    r->ops->progress(r->state, &t, &step, &t_end, &work);
    if (r->out_dt > 0) r->next_out_time = next_output_time(t, r->out_dt);
    const int watch = r->watch;
    while (t < t_end && !(r->max_steps > 0 && step >= r->max_steps)) {
        double until = t_end;
        if (r->out_dt > 0 && r->next_out_time < until) until = r->next_out_time;
        int64_t taken = 0;
        double a0 = hs_wtime(), t0 = t;
        int rc = r->ops->advance(r->state, until, chunk_steps(r, step, watch), &taken);
        if (hs_wtime() - a0 > r->max_chunk) r->max_chunk = hs_wtime() - a0;
        if (rc != HS_OK)
            return hs_error_raise(rc, __FILE__, __LINE__, "%s stopped while advancing from step %lld, t = %.9g", r->ops->name,
                                  (long long)step, t);
        r->ops->progress(r->state, &t, &step, &t_end, &work);
        /* a long step that the solver cut short at a signal or the wall time (hs_driver_interrupted):
         * it went back to its last step boundary, which the checkpoint keeps */
        if (g_interrupted) return stop_early(r, g_interrupted > 0 ? g_interrupted : 0, g_interrupted < 0);
        if (!isfinite(t)) return HS_FAIL(HS_ERR_RUNTIME, "solver %s: simulated time is %g after step %lld", r->ops->name, t, (long long)step);
        if (taken <= 0 && t < t_end) return HS_FAIL(HS_ERR_RUNTIME, "solver %s made no progress at t = %g", r->ops->name, t);
        /* An adaptive step below the resolution of the time at t_end could never get there (a lid
         * at 1e20 stepped 1e-22 a step: the run went on until killed).  A chunk that reached its
         * target may end on a tiny landing step, so only chunks that fell short are judged. */
        if (t < until * (1 - 1e-12) && hs_step_below_time_resolution((t - t0) / (double)taken, t_end))
            return HS_FAIL(HS_ERR_RUNTIME, "solver %s: the step fell to %.3g at t = %.9g, below the resolution of the time near the end "
                           "time %g: the run could never end (is a speed or force in the input far too large?)",
                           r->ops->name, (t - t0) / (double)taken, t, t_end);
        int due = (r->out_every > 0 && step % r->out_every == 0);
        if (r->out_dt > 0 && t >= r->next_out_time * (1 - 1e-12)) {
            due = 1;
            r->next_out_time = next_output_time(t, r->out_dt);
        }
        if (due) HS_CHECK(write_record(r));
        if (r->ckpt_every > 0 && step % r->ckpt_every == 0) HS_CHECK(write_checkpoint(r));
        progress_line(r, 0);
        test_hooks(step);
        if (watch) {
            int sig, wall;
            HS_CHECK(stop_agreed(r, &sig, &wall));
            if (sig || wall) return stop_early(r, sig, wall);
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
    if (g_interrupted && !resumed) {
        /* a solver that cannot stop part-way failed at a signal or the wall time (the seismic
         * gradient): it leaves nothing, not a file of half its results */
        hs_writer_discard(r->writer);
    } else if (hs_writer_nonfinite(r->writer)) {
        /* every rank knows (the writer agreed on it), so the collective attributes are safe here;
         * without them `hpcsim summary` called the file one from before runs were recorded and
         * collect.py counted the failed member as running or killed */
        double t, t_end, work;
        int64_t step;
        r->ops->progress(r->state, &t, &step, &t_end, &work);
        char detail[160];
        snprintf(detail, sizeof detail, "the solution is no longer finite at step %lld, t = %.9g", (long long)step, t);
        (void)write_run_attrs(r, "failed", detail);
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
    utc_stamp(r.started, sizeof r.started);
    hs_io_written_reset();
    HS_CHECK(hs_driver_check(p));
    HS_CHECK(new_run_id(ctx, r.run_id));
    HS_CHECK(walltime_seconds(p, &r.walltime));
    r.reserve = hs_params_real(p, "run.walltime_reserve");
    r.clock_skew = test_clock_skew(ctx->rank);
    if (hs_params_bool(p, "checkpoint.on_signal")) install_handlers();
    r.watch = hs_params_bool(p, "checkpoint.on_signal") || r.walltime > 0;
    /* from here on a solver's long step may ask hs_driver_interrupted (the seismic inversion's first
     * misfit and gradient are computed in create) */
    g_current_run = &r, g_interrupted = 0;

    hs_timeline("solver create");
    int rc = r.ops->create(ctx, p, &r.state);
    hs_timeline("solver created");
    if (rc != HS_OK) {
        /* a solver hands back what it built so far, so that it can be released */
        if (r.state) r.ops->destroy(r.state);
        g_current_run = NULL, g_interrupted = 0;
        return rc;
    }
    const char *restart = hs_params_string(p, "run.restart");
    int resumed = strcmp(restart, "none") != 0;
    double t0 = 0, t_end, work;
    if (resumed) rc = restore(&r, restart, &t0);
    if (rc == HS_OK) rc = open_output(&r, argc, argv, resumed, t0);
    r.ops->progress(r.state, &t0, &r.step0, &t_end, &work);
    r.loop0 = r.last_print = hs_wtime();
    /* the resumed file has this record, unless it was off the cadence (then the final write adds it
     * if the run ends here) */
    if (rc == HS_OK && resumed && r.keep_restart_record) r.last_written_step = r.step0;
    if (rc == HS_OK && !resumed) rc = write_record(&r);
    if (rc == HS_OK) {
        if (t_end > 0) {
            rc = time_loop(&r);
        } else {
            int64_t taken = 0; /* not time-dependent: all work in one call */
            rc = r.ops->advance(r.state, 0.0, 1, &taken);
        }
    }
    stop_drain(&r);
    hs_timeline("time loop done");
    if (rc == HS_OK) rc = write_record(&r); /* the final state, unless just written */
    int at_max_steps = 0;
    double t_final = t_end, te_final = t_end;
    if (rc == HS_OK) {
        int64_t step;
        r.ops->progress(r.state, &t_final, &step, &te_final, &work);
        at_max_steps = te_final > 0 && t_final < te_final;
    }
    /* the solver's own end (its health checks, seismograms, history, model, result file) before the
     * output is closed as finished: a failure there left a file that said "finished" beside exit 1 */
    if (rc == HS_OK && r.ops->finish) {
        rc = r.ops->finish(r.state);
        /* some ends write on rank 0 alone (the quantum result, a model file): every rank must take
         * the same way out, since closing or keeping the output is collective */
        int failed = rc != HS_OK;
        if (ctx->size > 1 && hs_allreduce_int_max(ctx->comm, &failed, 1) != HS_OK) failed = 1;
        if (failed && rc == HS_OK) rc = HS_FAIL(HS_ERR_RUNTIME, "the solver's end (its results and checks) failed on another rank");
    }
    if (rc == HS_OK && r.writer) {
        char detail[256];
        if (at_max_steps) snprintf(detail, sizeof detail, "stopped at run.max_steps = %lld", (long long)r.max_steps);
        /* a model that ends before its end time by a rule of its own (a steady state, a converged
         * L-BFGS) moves its end to where it stopped: the file said it reached the planned end */
        else if (t_end > 0 && te_final < t_end * (1 - 1e-12)) {
            const char *rule = r.ops->stop_rule ? r.ops->stop_rule(r.state) : NULL;
            snprintf(detail, sizeof detail, "the model stopped at t = %.9g by its own rule (%s), before the end time %.9g", te_final,
                     rule ? rule : "steady state, convergence", t_end);
        }
        else if (t_end > 0) snprintf(detail, sizeof detail, "reached the end time %.9g", t_end);
        else snprintf(detail, sizeof detail, "completed");
        rc = write_run_attrs(&r, at_max_steps ? "max_steps" : "finished", detail);
        if (rc == HS_OK) {
            rc = hs_writer_close(r.writer);
            r.writer = NULL;
        }
    }
    if (rc != HS_OK && rc != HS_ERR_SIGNAL) release_output(&r, rc, resumed);
    if (rc == HS_OK && t_end > 0) progress_line(&r, 1);
    /* a long step the solver cut short (hs_driver_interrupted): its results are written, and the run
     * ends as a stopped one, exit 3 (VQE ran on to its iteration limit after SIGTERM, exit 0) */
    if (rc == HS_OK && g_interrupted) {
        r.stopped_by = g_interrupted > 0 ? 1 : 2;
        if (ctx->rank == 0) {
            if (g_interrupted > 0) fprintf(stderr, "hpcsim: stopped by signal %d; the results so far are written\n", g_interrupted);
            else fprintf(stderr, "hpcsim: stopped before run.walltime = %s; the results so far are written\n", hs_params_string(p, "run.walltime"));
        }
        g_interrupted = 0;
        rc = HS_ERR_SIGNAL;
    }
    if (rc == HS_OK) {
        summary_line(&r, at_max_steps ? "stopped at run.max_steps" : "finished");
    } else if (rc == HS_ERR_SIGNAL) {
        summary_line(&r, r.stopped_by == 2 ? "stopped before run.walltime" : "stopped on a signal");
    } else if (*hs_io_written_list()) {
        summary_line(&r, "failed");
    }
    g_current_run = NULL, g_interrupted = 0;
    hs_timeline("solver finished");
    r.ops->destroy(r.state);
    hs_timeline("solver destroyed");
    return rc;
}
