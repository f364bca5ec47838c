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

int hs_solver_declare_all(void)
{
    HS_CHECK(hs_driver_declare());
    for (int i = 0; g_solvers[i]; i++)
        if (g_solvers[i]->declare) HS_CHECK(g_solvers[i]->declare());
    return HS_OK;
}
