/* The hpcsim command line: COMMAND [options and arguments in any order], parsed with getopt_long. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/compare.h"
#include "io/output.h"
#include "io/params.h"
#include "io/summary.h"
#include "kernels/memory.h"
#include "kernels/context.h"
#include "kernels/version.h"
#include "solvers/solver.h"

/* One subcommand: its arguments, a line on what it does, more for its --help, and the options it
 * takes (as letters of long_options). */
typedef struct {
    const char *name, *args, *summary, *details, *options;
} command;

static const command commands[] = {
    {"info", "", "build features, MPI ranks, GPUs and the GPU of each rank", "", "h"},
    {"check", "FILE [section.key=value ...] [--quiet] [--restart CHECKPOINT]",
     "validate a parameter file and print the resolved set",
     "Each value is printed with its source (file:line, override or default); exit 2 on any mistake.\n"
     "It takes run's arguments, so 'run' replaced by 'check' validates a run's command line.\n", "hqr"},
    {"run", "FILE [section.key=value ...] [--quiet] [--restart CHECKPOINT]", "run the simulation the file describes",
     "Under MPI: mpirun -n N hpcsim run FILE (one rank per GPU).\n", "hqr"},
    {"train", "FILE [section.key=value ...] [--quiet] [--restart CHECKPOINT]", "train the surrogate a parameter file describes",
     "'run' with [surrogate] mode = train ([run] solver = surrogate).  Under MPI: mpirun -n N hpcsim train FILE\n"
     "(data-parallel, the same global batch on any rank count).  Writes surrogate.model_path at the end.\n", "hqr"},
    {"forecast", "FILE [section.key=value ...] [--quiet]", "forecast with a trained surrogate",
     "'run' with [surrogate] mode = forecast: reads surrogate.model_path and writes OUTPUT_i.nc for the i-th of\n"
     "surrogate.initial_times (OUTPUT is output.path).\n", "hq"},
    {"evaluate", "FILE [section.key=value ...] [--quiet]", "score a trained surrogate on the test split",
     "'run' with [surrogate] mode = evaluate: RMSE and anomaly correlation by variable and lead time against\n"
     "persistence and climatology, in OUTPUT.nc and OUTPUT.csv, and the first test window in OUTPUT_example.nc.\n", "hq"},
    {"params", "[--markdown [SECTION ...]]", "list every parameter with type, default, range and help",
     "With --markdown, a Markdown table per section (all sections, or the SECTIONs named): the parameter\n"
     "reference of docs/ is generated from it ('make docs').\n", "hm"},
    {"summary", "FILE", "what an output file says about its run",
     "Title, version, command lines, where and why the run stopped (finished, run.max_steps, run.walltime\n"
     "or a signal), timings, ranks, threads and device, the records, the diagnostics at the last record\n"
     "(series values; min, max and mean of fields) and the resolved parameters.  FILE is a NetCDF or HDF5\n"
     "output file (also PATH.partial, the file of a stopped run).\n", "h"},
    {"compare", "A B VARIABLE [RTOL] [--last] | --all A B [RTOL] [--last]", "compare a variable (or all) of two output files",
     "Exit 0 when every value agrees within RTOL relative to max |B| (default 0: bitwise), 1 when not.\n"
     "With --all, every numeric variable of the two files (one line each), and the variables found in one\n"
     "file only (each a difference); --last then takes the last record of the variables along the record\n"
     "dimension.\n"
     "A and B are NetCDF or HDF5 files, or two JSON result files (the quantum solver's): VARIABLE is then a\n"
     "key path (probabilities, expectation.value, amplitudes.3) and every number under it is compared.\n", "hla"},
    {"help", "[COMMAND]", "this help, or the help of COMMAND", "", "h"},
};
#define NCOMMANDS (int)(sizeof commands / sizeof commands[0])

static const struct option long_options[] = {
    {"help", no_argument, NULL, 'h'},
    {"quiet", no_argument, NULL, 'q'},
    {"restart", required_argument, NULL, 'r'},
    {"last", no_argument, NULL, 'l'},
    {"all", no_argument, NULL, 'a'},
    {"markdown", no_argument, NULL, 'm'},
    {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0},
};

static const char *option_help(int letter)
{
    switch (letter) {
    case 'q': return "  -q, --quiet                 no progress lines (the same as run.quiet=true)\n";
    case 'r': return "  -r, --restart CHECKPOINT    continue from a checkpoint (the same as run.restart=CHECKPOINT)\n";
    case 'l': return "      --last                  compare the last record only\n";
    case 'a': return "      --all                   compare every variable the files hold\n";
    case 'm': return "      --markdown              Markdown tables, one per section\n";
    case 'h': return "  -h, --help                  print this help\n";
    }
    return "";
}

static const command *find_command(const char *name)
{
    for (int i = 0; i < NCOMMANDS; i++)
        if (!strcmp(commands[i].name, name)) return &commands[i];
    return NULL;
}

static void usage(FILE *out)
{
    fprintf(out, "usage: hpcsim [--help | --version] COMMAND [ARGS]\n\ncommands:\n");
    for (int i = 0; i < NCOMMANDS; i++) fprintf(out, "  %-9s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\nsolvers ([run] solver = NAME):\n");
    for (const hs_solver_ops *const *s = hs_solver_list(); *s; s++) fprintf(out, "  %-9s %s\n", (*s)->name, (*s)->summary);
    fprintf(out,
            "\n'hpcsim COMMAND --help' (or 'hpcsim help COMMAND') shows a command's arguments and options.\n"
            "exit status: 0 success, 1 runtime failure, 2 bad input or usage, 3 stopped early (a signal or run.walltime)\n"
            "after writing a checkpoint\n");
}

/* The surrogate's commands are 'run' with [surrogate] mode set: the mode, or NULL for other commands. */
static const char *surrogate_mode(const command *c)
{
    return !strcmp(c->name, "train") || !strcmp(c->name, "forecast") || !strcmp(c->name, "evaluate") ? c->name : NULL;
}

static void command_usage(const command *c, FILE *out)
{
    fprintf(out, "usage: hpcsim %s%s%s\n\n%s.\n", c->name, *c->args ? " " : "", c->args, c->summary);
    if (!strcmp(c->name, "check") || !strcmp(c->name, "run") || surrogate_mode(c))
        fprintf(out, "section.key=value overrides a key of FILE ('hpcsim params' lists them).\n");
    fputs(c->details, out);
    if (*c->options) {
        fprintf(out, "\noptions (before or after the arguments; '--' ends them):\n");
        for (const char *o = c->options; *o; o++) fputs(option_help(*o), out);
    }
}

/* Record a usage error (exit 2 once the caller reaches hs_exit), pointing at the help. */
static int usage_error(const command *c, const char *fmt, const char *arg)
{
    char msg[512];
    snprintf(msg, sizeof msg, fmt, arg);
    return c ? hs_input_error(NULL, 0, NULL, "%s (see 'hpcsim %s --help')", msg, c->name)
             : hs_input_error(NULL, 0, NULL, "%s (see 'hpcsim --help')", msg);
}

static void die_on(int rc)
{
    if (rc != HS_OK) hs_exit(rc);
}

/* A command line parsed: the flags, and the other arguments in their order (options that stand for
 * overrides, --quiet and --restart, become "section.key=value" arguments in place). */
typedef struct {
    int help, last, all, markdown;
    int nargs;
    char **args;  /* positional arguments and overrides, in command-line order */
    const char **labels; /* per argument: the option an override stands for (--quiet, --restart), else NULL */
    char **owned; /* the strings made here, to free */
    int nowned;
} cmdline;

static void cmdline_free(cmdline *o)
{
    for (int i = 0; i < o->nowned; i++) free(o->owned[i]);
    free(o->owned);
    free(o->args);
    free(o->labels);
}

static char *joined(cmdline *o, const char *a, const char *b)
{
    char *s = malloc(strlen(a) + strlen(b) + 1);
    if (!s) return NULL;
    strcpy(s, a);
    strcat(s, b);
    return o->owned[o->nowned++] = s;
}

/* The option getopt_long just read, as given: "--name" (the argument as typed) or "-x". */
static const char *option_name(char **argv, int letter, char name[8])
{
    const char *arg = argv[optind - 1];
    if (!letter || !strncmp(arg, "--", 2)) return arg;
    snprintf(name, 8, "-%c", letter);
    return name;
}

/* Parse argv[0..argc) (argv[0] is the command) in order: options anywhere, '--' ends them. */
static int parse_command_line(const command *c, int argc, char **argv, cmdline *o)
{
    memset(o, 0, sizeof *o);
    o->args = calloc((size_t)argc + 1, sizeof *o->args);
    o->labels = calloc((size_t)argc + 1, sizeof *o->labels);
    o->owned = calloc((size_t)argc + 1, sizeof *o->owned);
    char **copy = calloc((size_t)argc + 1, sizeof *copy); /* getopt may reorder what it is given */
    if (!o->args || !o->labels || !o->owned || !copy) {
        free(copy);
        return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    }
    memcpy(copy, argv, sizeof *copy * (size_t)argc);
    int rc = HS_OK, ch;
    optind = 0; /* a fresh scan: glibc's full reset */
    opterr = 0;
    while (rc == HS_OK && (ch = getopt_long(argc, copy, "-:hqr:", long_options, NULL)) != -1) {
        if (ch == 1) { /* an argument, in order */
            o->args[o->nargs++] = optarg;
            continue;
        }
        char name[8];
        const char *given = option_name(copy, ch == '?' || ch == ':' ? optopt : ch, name);
        if (ch == '?') rc = usage_error(c, "unknown option '%s'", given);
        else if (ch == ':') rc = usage_error(c, "option '%s' needs a value", given);
        else if (!strchr(c->options, ch)) rc = usage_error(c, "'%s' is not an option of this command", given);
        else if (ch == 'h') o->help = 1;
        else if (ch == 'l') o->last = 1;
        else if (ch == 'a') o->all = 1;
        else if (ch == 'm') o->markdown = 1;
        else if (ch == 'q') o->labels[o->nargs] = "--quiet", o->args[o->nargs++] = "run.quiet=true";
        else if (ch == 'r' && (o->labels[o->nargs] = "--restart", !(o->args[o->nargs++] = joined(o, "run.restart=", optarg))))
            rc = HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    }
    while (optind < argc) o->args[o->nargs++] = copy[optind++];
    free(copy);
    return rc;
}

/* "section.key=..." (names of letters, digits and '_'): an override, not a file name. */
static int is_override(const char *a)
{
    size_t sec = strspn(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
    if (!sec || a[sec] != '.') return 0;
    size_t key = strspn(a + sec + 1, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
    return key && a[sec + 1 + key] == '=';
}

/* RTOL as parameter files write reals (hs_parse_real), >= 0: strtod took '' as 0, '0x1' as 1, and
 * '1e400' or 'inf' as infinity, under which every pair of files agreed with exit 0. */
static double parse_rtol(const command *c, const char *arg)
{
    double rtol = 0;
    if (hs_parse_real(arg, &rtol) || !(rtol >= 0)) die_on(usage_error(c, "RTOL must be a finite number >= 0, got '%s'", arg));
    return rtol;
}

/* hpcsim compare A B VARIABLE [RTOL]: 0 when equal within RTOL, 1 when not, 2 on bad input. */
static int compare_command(const command *c, const cmdline *o)
{
    if (o->all) {
        if (o->nargs != 2 && o->nargs != 3) die_on(usage_error(c, "'compare --all' needs two files%s", ""));
        double rtol = o->nargs == 3 ? parse_rtol(c, o->args[2]) : 0;
        int ndiffer = 0;
        die_on(hs_compare_all(o->args[0], o->args[1], o->last, rtol, stdout, &ndiffer));
        return ndiffer ? 1 : 0;
    }
    if (o->nargs != 3 && o->nargs != 4) die_on(usage_error(c, "'compare' needs two files and a variable name%s", ""));
    double rtol = o->nargs == 4 ? parse_rtol(c, o->args[3]) : 0;
    hs_compare_result r;
    die_on(hs_compare_files(o->args[0], o->args[1], o->args[2], o->last, &r));
    return hs_compare_report(stdout, o->args[2], &r, rtol) ? 0 : 1;
}

/* check and run: the parameter file, then the overrides in their order, wherever the file stood. */
static int check_or_run(hs_ctx *ctx, const command *c, cmdline *o, int argc, char **argv)
{
    const char *file = NULL, *mode = surrogate_mode(c);
    int noverrides = 0;
    char **overrides = calloc((size_t)o->nargs + 2, sizeof *overrides); /* the file taken out, the mode first */
    const char **labels = calloc((size_t)o->nargs + 2, sizeof *labels);
    char mode_override[64], mode_label[48];
    if (!overrides || !labels) {
        free(overrides), free(labels);
        return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    }
    if (mode) {
        snprintf(mode_override, sizeof mode_override, "surrogate.mode=%s", mode);
        snprintf(mode_label, sizeof mode_label, "hpcsim %s", c->name);
        labels[noverrides] = mode_label, overrides[noverrides++] = mode_override;
    }
    for (int i = 0; i < o->nargs; i++) {
        if (!file && !is_override(o->args[i])) file = o->args[i];
        else labels[noverrides] = o->labels[i], overrides[noverrides++] = o->args[i];
    }
    hs_params *p = NULL;
    int lrc = file ? hs_params_load_labeled(file, noverrides, overrides, labels, &p) : usage_error(c, "'%s' needs a parameter file", c->name);
    free(overrides), free(labels);
    HS_CHECK(lrc);
    const char *solver = hs_params_string(p, "run.solver");
    int rc = HS_OK;
    if (mode && strcmp(solver, "surrogate") != 0) {
        rc = hs_params_error(p, "run.solver", "'hpcsim %s' runs the surrogate; this file's solver is '%s'", mode, solver);
    } else if (!hs_solver_find(solver)) {
        char known[512] = "";
        for (const hs_solver_ops *const *s = hs_solver_list(); *s; s++) {
            strncat(known, known[0] ? ", " : "", sizeof known - strlen(known) - 1);
            strncat(known, (*s)->name, sizeof known - strlen(known) - 1);
        }
        rc = hs_params_error(p, "run.solver", "unknown solver '%s' (known: %s)", solver, known);
    } else if (!HS_HAVE_CUDA && !strcmp(hs_params_string(p, "run.device"), "cuda")) {
        /* what the build lacks is known from the file alone: the key's error (exit 2), where a
         * GPU missing at run time is the machine's (exit 1) */
        rc = hs_params_error(p, "run.device", "cuda: this build has no CUDA backend (rebuild with nvcc on PATH or CUDA=1); use auto or cpu");
    } else {
        /* check runs on the device run would use, so that memory and device rules are the same */
        rc = hs_ctx_set_device(ctx, hs_params_string(p, "run.device"), hs_params_bool(p, "run.allow_shared_gpu"));
        ctx->deterministic = hs_params_bool(p, "run.deterministic");
        ctx->gpu_comm = hs_gpu_comm_parse(hs_params_string(p, "run.gpu_comm"));
    }
    if (rc == HS_OK && !strcmp(c->name, "check")) {
        rc = hs_driver_validate(ctx, p);
        if (rc == HS_OK && ctx->rank == 0) {
            printf("# %s: parameters valid; resolved set (value # source):\n", file);
            hs_params_print(p, stdout);
        }
    } else if (rc == HS_OK) {
        rc = hs_driver_run(ctx, p, argc, argv);
    }
    hs_params_free(p);
    return rc;
}

/* The commands that run under MPI: input errors and help are printed by rank 0 only. */
static int mpi_command(const command *c, cmdline *o, int argc, char **argv, int parse_rc)
{
    hs_ctx *ctx = NULL;
    hs_timeline("main");
    die_on(hs_ctx_create(&argc, &argv, "cpu", 0, &ctx));
    hs_timeline("MPI ready");
    die_on(parse_rc);
    int rc = HS_OK;
    if (o->help) {
        if (ctx->rank == 0) command_usage(c, stdout);
    } else if (!strcmp(c->name, "info")) {
        if (o->nargs) rc = usage_error(c, "'info' takes no arguments, got '%s'", o->args[0]);
        if (rc == HS_OK) rc = hs_ctx_set_device(ctx, "auto", 1);
        if (rc == HS_OK) rc = hs_ctx_report(ctx, stdout);
        if (rc == HS_OK && ctx->rank == 0) printf("output: %s\n", hs_output_parallel_summary());
    } else {
        rc = check_or_run(ctx, c, o, argc, argv);
    }
    cmdline_free(o);
    die_on(rc);
    hs_ctx_destroy(ctx);
    hs_timeline("MPI finalized, returning from main");
    return HS_OK;
}

int main(int argc, char **argv)
{
    die_on(hs_solver_declare_all());
    /* Options before the command: --help and --version only. */
    int ch;
    char name[8];
    opterr = 0;
    if ((ch = getopt_long(argc, argv, "+:hV", long_options, NULL)) != -1) {
        if (ch == 'h') usage(stdout);
        else if (ch == 'V') printf("hpcsim %s (git %s)\nfeatures: %s\n", hs_version(), hs_git_hash(), hs_features());
        else if (ch == '?') die_on(usage_error(NULL, "unknown option '%s'", option_name(argv, optopt, name)));
        else die_on(usage_error(NULL, "'%s' is an option of a command: give it after the command",
                                option_name(argv, ch, name)));
        return HS_OK;
    }
    if (optind >= argc) {
        usage(stderr);
        return HS_ERR_INPUT;
    }
    const command *c = find_command(argv[optind]);
    if (!c) die_on(usage_error(NULL, "unknown command '%s'", argv[optind]));
    cmdline o;
    int rc = parse_command_line(c, argc - optind, argv + optind, &o);
    if (!strcmp(c->name, "info") || !strcmp(c->name, "check") || !strcmp(c->name, "run") || surrogate_mode(c))
        return mpi_command(c, &o, argc, argv, rc);
    die_on(rc);
    if (o.help) {
        command_usage(c, stdout);
    } else if (!strcmp(c->name, "help")) {
        const command *about = o.nargs ? find_command(o.args[0]) : NULL;
        if (o.nargs > 1) die_on(usage_error(c, "'help' takes one command name, got '%s'", o.args[1]));
        if (o.nargs && !about) die_on(usage_error(NULL, "unknown command '%s'", o.args[0]));
        about ? command_usage(about, stdout) : usage(stdout);
    } else if (!strcmp(c->name, "params")) {
        if (o.nargs && !o.markdown) die_on(usage_error(c, "'params' takes no arguments without --markdown, got '%s'", o.args[0]));
        if (o.markdown) die_on(hs_params_print_markdown(stdout, o.nargs, (const char *const *)o.args));
        else hs_params_print_declarations(stdout);
    } else if (!strcmp(c->name, "summary")) {
        if (o.nargs != 1) die_on(usage_error(c, "'summary' needs one output file%s", ""));
        die_on(hs_summary_print(o.args[0], stdout));
    } else {
        rc = compare_command(c, &o);
    }
    cmdline_free(&o);
    return rc;
}
