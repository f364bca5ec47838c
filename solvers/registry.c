/* The solver registry and the [run] section every parameter file starts with. */
#include <string.h>

#include "solvers/solver.h"

extern const hs_solver_ops hs_selftest_solver;

static const hs_solver_ops *const g_solvers[] = {
    &hs_selftest_solver,
    NULL,
};

static const hs_param_decl g_run_params[] = {
    {"run", "solver", HS_PARAM_STRING, NULL, 0, 0, NULL, "which solver runs (see hpcsim --help)"},
    {"run", "device", HS_PARAM_ENUM, "auto", 0, 0, "auto|cpu|cuda", "compute backend: auto uses the GPU when one is usable"},
    {"run", "allow_shared_gpu", HS_PARAM_BOOL, "false", 0, 0, NULL, "let several ranks of a node share one GPU"},
    {"run", "deterministic", HS_PARAM_BOOL, "true", 0, 0, NULL, "bitwise run-to-run reproducible reductions"},
    {"run", "seed", HS_PARAM_INT, "12345", 0, HS_NO_MAX, NULL, "seed of every random number stream"},
};

const hs_solver_ops *hs_solver_find(const char *name)
{
    for (int i = 0; g_solvers[i]; i++)
        if (!strcmp(g_solvers[i]->name, name)) return g_solvers[i];
    return NULL;
}

const hs_solver_ops *const *hs_solver_list(void) { return g_solvers; }

int hs_solver_declare_all(void)
{
    HS_CHECK(hs_params_declare(g_run_params, (int)(sizeof g_run_params / sizeof g_run_params[0])));
    for (int i = 0; g_solvers[i]; i++)
        if (g_solvers[i]->declare) HS_CHECK(g_solvers[i]->declare());
    return HS_OK;
}
