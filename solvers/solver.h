/* The solver interface: a table of functions registered by name, driven by solvers/driver.c. */
#ifndef HS_SOLVER_H
#define HS_SOLVER_H

#include <float.h>
#include <math.h>

#include "io/checkpoint.h"
#include "io/output.h"
#include "io/params.h"
#include "kernels/context.h"

/* The driver (solvers/driver.c) owns the run policy: the time loop, output cadence, checkpoints,
 * signals and progress.  The solver owns its state and its physics.  Every function returns an hs
 * status; all of them are collective over ctx->comm. */
typedef struct hs_solver_ops {
    const char *name;      /* value of [run] solver */
    const char *summary;   /* one line for `hpcsim --help` */
    /* Declare the solver's own parameter section(s) (once per process). */
    int (*declare)(void);
    /* Every input rule of the solver, without building the state (no fields, no registers):
     * `hpcsim check` runs it, and `create` applies the same rules, so that both reject exactly
     * the same inputs.  NULL: the solver has no rules beyond its declarations. */
    int (*check)(hs_ctx *ctx, const hs_params *p);
    /* Validate parameters (input errors through hs_params_error, before anything is written) and
     * build the state on ctx's device. */
    int (*create)(hs_ctx *ctx, const hs_params *p, void **state);
    /* Advance by at most max_steps steps without passing simulated time `until`; report the steps
     * taken.  A solver that is not time-dependent (a circuit, a training run) may do all its work
     * in one call; it reports completion through progress (time >= t_end). */
    int (*advance)(void *state, double until, int64_t max_steps, int64_t *steps_taken);
    /* Where the run stands: simulated time, step count, end time, and the work per step in the
     * solver's natural unit (cells, amplitudes, samples) for the progress line's rate. */
    void (*progress)(void *state, double *time, int64_t *step, double *t_end, double *work_per_step);
    /* Gridded output: describe the file (grid, coordinates, title; the driver fills path, format,
     * history and parameters) and declare variables on the opened writer; NULL when the solver
     * has no gridded output, desc->ndim = -1 when this run has none (it writes files of its own). */
    int (*describe_output)(void *state, hs_output_desc *desc);
    int (*define_vars)(void *state, hs_writer *w);
    /* Write the current state as one record (the driver has called hs_writer_begin_step). */
    int (*write)(void *state, hs_writer *w);
    /* Final, non-gridded products (counts, histories, reports); may be NULL. */
    int (*finish)(void *state);
    /* Save / load everything needed to continue bitwise-exactly (same ranks and device). */
    int (*checkpoint)(void *state, hs_checkpoint *c);
    int (*restore)(void *state, hs_checkpoint *c);
    void (*destroy)(void *state);
    /* Parameters of the solver's section that a restart may change (its end time, reporting
     * cadences), NULL-terminated; every other key must equal the checkpoint's, else the restart
     * is an input error.  NULL: none. */
    const char *const *restart_may_change;
    /* What work_per_step counts, for the progress line's rate ("cell updates"); NULL: no rate. */
    const char *work_unit;
    /* The simulated end time the parameters ask for, where it is not SECTION.t_end itself (the
     * seismic solver's shots run one after another on one time axis); NULL: SECTION.t_end. */
    double (*run_end)(const hs_params *p);
    /* The key that sets where the run ends, where it is not SECTION.t_end (the surrogate's
     * surrogate.steps: its time is the optimiser's step); run_end then gives its value.  NULL:
     * SECTION.t_end. */
    const char *end_key;
    /* The parameter sections the solver reads besides its name's, [run], [output] and [checkpoint]
     * (the CFD models'), NULL-terminated; NULL: none.  Another solver's are bad input (the driver). */
    const char *const *sections;
    /* Why the run ended before its end time by a rule of its own (a steady state, an optimiser's
     * stopping test), in words for the file's stop detail; NULL (or a NULL op): no such rule fired. */
    const char *(*stop_rule)(void *state);
    /* 1 when a stop on a signal or run.walltime should also write the state as a record (off the
     * output cadence, so that a restart drops it again), because the latest state is the run's result
     * so far (the seismic inversion's current model); NULL or 0: the output keeps the records of its
     * cadence only. */
    int (*record_on_stop)(void *state);
} hs_solver_ops;

/* output.format, in the order of its choices (hs_params_enum). */
enum { HS_OUTPUT_AUTO = 0, HS_OUTPUT_NETCDF = 1, HS_OUTPUT_HDF5 = 2, HS_OUTPUT_NONE = 3 };
#define HS_OUTPUT_FORMAT_CHOICES "auto|netcdf|hdf5|none"

/* Rules of the driver's sections that need the file system (output and checkpoint paths
 * writable, distinct, not replacing a file when output.overwrite = false): input errors naming
 * the key, exit 2.  Called by `hpcsim check` and at the start of `hpcsim run`.  Not collective. */
int hs_driver_check(const hs_params *p);
/* All of a parameter set's input rules: the driver's (hs_driver_check) and the solver's check.
 * What `hpcsim check` runs.  Collective. */
int hs_driver_validate(hs_ctx *ctx, const hs_params *p);

/* The solver registered under `name`, or NULL. */
const hs_solver_ops *hs_solver_find(const char *name);
/* All registered solvers, NULL-terminated. */
const hs_solver_ops *const *hs_solver_list(void);
/* Declare the [run], [output] and [checkpoint] sections and every solver's (once per process). */
int hs_solver_declare_all(void);

/* Run the parameter set end to end.  argc/argv form the `history` attribute.  Collective. */
int hs_driver_run(hs_ctx *ctx, const hs_params *p, int argc, char **argv);
/* For a solver whose one step is long (VQE, QAOA, the seismic gradient and inversion): has a signal
 * come (checkpoint.on_signal), or is run.walltime running out (now, not at the next step)?  0 when
 * not; else the signal's number, or -1 for run.walltime.  Collective (every rank calls it at the same
 * point and gets the same answer), and free when neither is watched.  After a nonzero answer:
 *  - a solver without a time axis (t_end = 0) that writes its results anyway makes the run end as
 *    stopped (exit 3) once they are written;
 *  - one that cannot stop part-way fails with an error that says so: the driver then discards the
 *    output (nothing is written) and the run exits 1;
 *  - in the time loop, advance goes back to its last step boundary and returns (having taken the
 *    steps before it): the driver writes the checkpoint there and exits 3, as at a signal between
 *    steps.
 * Test hook: HS_TEST_SIGNAL_AT_POLL=N sends SIGTERM at the N-th call. */
int hs_driver_interrupted(hs_ctx *ctx);

/* A solver's own output file `path` named by `key` (seismograms, a PINN history):
 * hs_params_check_writable, and not the checkpoint file when checkpoints are written (the two
 * replaced each other; the input error names checkpoint.path). */
int hs_driver_check_output_file(const hs_params *p, const char *key, const char *path, const char *what, int exact);

/* Refuse a run whose busiest rank needs more memory than it has, before anything is allocated:
 * `device` and `host` are this rank's bytes (on the CPU backend they add up, one memory), against
 * the free GPU memory and the available host memory; every rank gets the worst rank's verdict.  The
 * input error names `key`: "WHAT needs N GB (B bytes) of GPU|host memory on the busiest rank, M GB
 * (B bytes) are free|available; ADVICE".  Test hook: HS_TEST_MEMORY_BYTES=N takes N bytes for both.
 * Collective. */
int hs_driver_check_memory(hs_ctx *ctx, const hs_params *p, const char *key, const char *what, const char *advice,
                           double device, double host);

/* True when a time step dt cannot carry the time to t_end: below t_end's spacing of doubles, t + dt
 * rounds back to t before the end (the run never ends).  The driver asks it of a fixed step, the
 * solvers of the step their stability limit gives. */
static inline int hs_step_below_time_resolution(double dt, double t_end) { return dt > 0 && t_end > 0 && dt < t_end * DBL_EPSILON; }

/* The length of the next step toward `until` when the nominal step is dt: dt itself, or what is
 * left to land exactly on `until`; 0 when the time has arrived (what is left is a sliver below
 * 1e-9 dt and 1e-9 |until|, rounding of the accumulated time).  A step that would stop within
 * 1e-9 dt of the target takes the sliver along: 100 steps of 0.001 from t = 1 fall 1.1e-14 short
 * of 1.1, and with one step per call (signals watched) nothing snapped it, so every_time = 0.1
 * wrote records at 1.099999999999989 ... 1.99999999999989.  The heat and CFD solvers share it. */
static inline double hs_step_toward(double time, double dt, double until)
{
    double left = until - time;
    if (left <= 1e-9 * dt && left <= 1e-9 * fabs(until)) return 0;
    return until - (time + dt) <= 1e-9 * dt ? left : dt;
}

/* The simulated time of a solver that steps with hs_step_toward: `base` plus n steps of dt, the
 * product rounded once, not a running sum (a sum of 0.001 s steps wrote output.every_steps records at
 * 0.010000000000000002, 0.015000000000000006, ..., the error growing with the steps).  A step of
 * another length (a landing on a target, a new adaptive dt) starts a new base.  The heat and CFD
 * solvers share it; checkpoints keep it whole (hs_clock_checkpoint) so that a restart continues the
 * same products. */
typedef struct hs_clock {
    double time; /* the simulated time */
    double base; /* where the current run of equal steps began */
    double dt;   /* their length (0: none yet) */
    int64_t n;   /* their count */
} hs_clock;

/* The time is `time` (a start, a landing): a new base. */
static inline void hs_clock_set(hs_clock *c, double time)
{
    c->time = c->base = time;
    c->dt = 0, c->n = 0;
}

/* After a step of length h that hs_step_toward(c->time, dt, until) gave: h == dt is one more step of
 * dt (a new base where dt changed since the last), any other h landed on `until`. */
static inline void hs_clock_step(hs_clock *c, double h, double dt, double until)
{
    if (h != dt) {
        hs_clock_set(c, until);
        return;
    }
    if (dt != c->dt) c->base = c->time, c->dt = dt, c->n = 0;
    c->n++;
    c->time = c->base + (double)c->n * dt;
}

/* Store the clock in a checkpoint, beside the solver's own arrays.  Collective. */
int hs_clock_checkpoint(hs_checkpoint *k, const hs_clock *c);
/* Restore it; `time` is the time the solver's own arrays hold (a checkpoint from before the clock
 * was kept continues from there as a new base).  Collective. */
int hs_clock_restore(hs_checkpoint *k, hs_clock *c, double time);

#endif
