/* The hpcsim command line: help, version, info, check, params and run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/compare.h"
#include "io/params.h"
#include "kernels/context.h"
#include "kernels/version.h"
#include "solvers/solver.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: hpcsim [--help | --version] COMMAND [ARGS]\n"
            "\n"
            "commands:\n"
            "  info                                  build features, MPI ranks, GPUs and the GPU of each rank\n"
            "  check FILE [section.key=value ...]    validate a parameter file and print the resolved set\n"
            "  run   FILE [section.key=value ...] [--quiet] [--restart CHECKPOINT]\n"
            "                                        run the simulation the file describes\n"
            "  params                                list every parameter with type, default, range and help\n"
            "  compare A B VARIABLE [RTOL] [--last]  compare a variable of two output files (--last: its last\n"
            "                                        record only); exit 0 when every value agrees within RTOL\n"
            "                                        relative to max |B| (default 0: bitwise), 1 when not\n"
            "\n"
            "solvers ([run] solver = NAME):\n");
    for (const hs_solver_ops *const *s = hs_solver_list(); *s; s++) fprintf(out, "  %-10s %s\n", (*s)->name, (*s)->summary);
    fprintf(out,
            "\n"
            "exit status: 0 success, 1 runtime failure, 2 bad input or usage, 3 stopped on a signal after a checkpoint\n"
            "Run under MPI with: mpirun -n N hpcsim run FILE (one rank per GPU).\n");
}

static void version(void)
{
    printf("hpcsim %s (git %s)\nfeatures: %s\n", hs_version(), hs_git_hash(), hs_features());
}

/* Usage errors are input errors: message on rank 0, exit 2. */
static void usage_error(const char *fmt, const char *arg)
{
    char msg[512];
    snprintf(msg, sizeof msg, fmt, arg);
    hs_input_error("hpcsim", 0, NULL, "%s (see 'hpcsim --help')", msg);
    hs_exit(HS_ERR_INPUT);
}

static void die_on(int rc)
{
    if (rc != HS_OK) hs_exit(rc);
}

/* hpcsim compare A B VARIABLE [RTOL]: 0 when equal within RTOL, 1 when not, 2 on bad input. */
static int compare_command(int argc, char **argv)
{
    int last = argc > 5 && !strcmp(argv[argc - 1], "--last");
    int nargs = argc - last;
    if (nargs != 5 && nargs != 6) usage_error("'compare' needs two files and a variable name%s", "");
    double rtol = 0;
    if (nargs == 6) {
        char *end;
        rtol = strtod(argv[5], &end);
        if (*end || rtol < 0) usage_error("compare: RTOL must be a number >= 0, got '%s'", argv[5]);
    }
    hs_compare_result r;
    die_on(hs_compare_files(argv[2], argv[3], argv[4], last, &r));
    int ok = rtol == 0 ? r.differing == 0 : r.max_rel <= rtol;
    printf("%s: %lld values, %lld not bitwise equal, max |a-b| = %.6e, relative to max |b| = %.6e: %s\n", argv[4],
           (long long)r.count, (long long)r.differing, r.max_abs, r.max_rel, ok ? "agree" : "DIFFER");
    return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    die_on(hs_solver_declare_all());
    if (argc < 2) {
        usage(stderr);
        return HS_ERR_INPUT;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        usage(stdout);
        return HS_OK;
    }
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "-V")) {
        version();
        return HS_OK;
    }
    if (!strcmp(cmd, "params")) {
        hs_params_print_declarations(stdout);
        return HS_OK;
    }
    if (!strcmp(cmd, "compare")) return compare_command(argc, argv);
    if (strcmp(cmd, "info") && strcmp(cmd, "check") && strcmp(cmd, "run")) usage_error("unknown command '%s'", cmd);

    /* MPI first (so only rank 0 reports input errors), on the CPU until the parameters are read. */
    hs_ctx *ctx = NULL;
    die_on(hs_ctx_create(&argc, &argv, "cpu", 0, &ctx));

    if (!strcmp(cmd, "info")) {
        if (argc > 2) usage_error("'info' takes no arguments, got '%s'", argv[2]);
        die_on(hs_ctx_set_device(ctx, "auto", 1));
        die_on(hs_ctx_report(ctx, stdout));
        hs_ctx_destroy(ctx);
        return HS_OK;
    }
    if (argc < 3) usage_error("'%s' needs a parameter file", cmd);
    if (argv[2][0] == '-') usage_error("expected a parameter file before options, got '%s'", argv[2]);

    /* Options become overrides, so that they show up in `check` and in the files' parameters. */
    char **overrides = calloc((size_t)argc, sizeof *overrides);
    char *restart_override = NULL;
    int noverrides = 0;
    for (int i = 3; i < argc; i++) {
        if (!strcmp(argv[i], "--quiet") && !strcmp(cmd, "run")) {
            overrides[noverrides++] = "run.quiet=true";
        } else if (!strcmp(argv[i], "--restart") && !strcmp(cmd, "run")) {
            if (i + 1 >= argc) usage_error("'%s' needs a checkpoint file", argv[i]);
            restart_override = malloc(strlen(argv[i + 1]) + 16);
            sprintf(restart_override, "run.restart=%s", argv[++i]);
            overrides[noverrides++] = restart_override;
        } else if (argv[i][0] == '-') {
            usage_error("unknown option '%s'", argv[i]);
        } else {
            overrides[noverrides++] = argv[i];
        }
    }

    hs_params *p = NULL;
    die_on(hs_params_load(argv[2], noverrides, overrides, &p));
    const char *solver = hs_params_string(p, "run.solver");
    if (!hs_solver_find(solver)) {
        char known[512] = "";
        for (const hs_solver_ops *const *s = hs_solver_list(); *s; s++) {
            strncat(known, known[0] ? ", " : "", sizeof known - strlen(known) - 1);
            strncat(known, (*s)->name, sizeof known - strlen(known) - 1);
        }
        die_on(hs_params_error(p, "run.solver", "unknown solver '%s' (known: %s)", solver, known));
    }
    /* check runs on the device run would use, so that memory and device rules are the same */
    die_on(hs_ctx_set_device(ctx, hs_params_string(p, "run.device"), hs_params_bool(p, "run.allow_shared_gpu")));
    ctx->deterministic = hs_params_bool(p, "run.deterministic");
    if (!strcmp(cmd, "check")) {
        die_on(hs_driver_validate(ctx, p));
        if (ctx->rank == 0) {
            printf("# %s: parameters valid; resolved set (value # source):\n", argv[2]);
            hs_params_print(p, stdout);
        }
        hs_params_free(p);
        free(overrides);
        free(restart_override);
        hs_ctx_destroy(ctx);
        return HS_OK;
    }
    int rc = hs_driver_run(ctx, p, argc, argv);
    hs_params_free(p);
    free(overrides);
    free(restart_override);
    die_on(rc);
    hs_ctx_destroy(ctx);
    return HS_OK;
}
