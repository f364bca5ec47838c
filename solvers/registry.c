/* The solver registry: every solver's ops table, found by its [run] solver name. */
#include <string.h>

#include "solvers/solver.h"

extern const hs_solver_ops hs_selftest_solver;
extern const hs_solver_ops hs_quantum_solver;
extern const hs_solver_ops hs_heat_solver;
extern const hs_solver_ops hs_pinn_solver;
extern const hs_solver_ops hs_cfd_solver;
extern const hs_solver_ops hs_surrogate_solver; /* ml_surrogate/surrogate_solver.c */
extern const hs_solver_ops hs_seismic_solver;
extern const hs_solver_ops hs_fem_solver; /* solvers/fem/fem.h */

static const hs_solver_ops *const g_solvers[] = {
    &hs_selftest_solver,
    &hs_heat_solver,
    &hs_quantum_solver,
    &hs_pinn_solver,
    &hs_cfd_solver,
    &hs_surrogate_solver,
    &hs_seismic_solver,
    &hs_fem_solver,
    NULL,
};

int hs_driver_declare(void); /* solvers/driver.c: [run], [output], [checkpoint] */

const hs_solver_ops *hs_solver_find(const char *name)
{
    for (int i = 0; g_solvers[i]; i++)
        if (!strcmp(g_solvers[i]->name, name)) return g_solvers[i];
    return NULL;
}

const hs_solver_ops *const *hs_solver_list(void) { return g_solvers; }

const char *const *hs_solver_sections(const hs_solver_ops *ops)
{
    /* the sections a solver reads besides [run], [output] and [checkpoint]: its own name's, and the
     * CFD models' */
    static const char *const cfd[] = {"cfd", "navier_stokes", "spectral", "shallow_water", "lbm", NULL};
    static const char *own[sizeof g_solvers / sizeof g_solvers[0]][2];
    if (!strcmp(ops->name, "cfd")) return cfd;
    for (int i = 0; g_solvers[i]; i++)
        if (g_solvers[i] == ops) {
            own[i][0] = ops->name;
            return own[i];
        }
    return NULL;
}

int hs_solver_declare_all(void)
{
    HS_CHECK(hs_driver_declare());
    for (int i = 0; g_solvers[i]; i++)
        if (g_solvers[i]->declare) HS_CHECK(g_solvers[i]->declare());
    return HS_OK;
}
