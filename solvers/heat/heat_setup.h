/* The heat solver's parameters: declaration, validation, and the pointwise set-up (k, Q, T at t=0). */
#ifndef HS_HEAT_SETUP_H
#define HS_HEAT_SETUP_H

#include <stdint.h>

#include "io/params.h"
#include "physics/heat_exact.h"
#include "solvers/heat/heat_stencil.h"

#include "solvers/heat/heat_stencil_impl.h"

/* Each enum is in the order of its key's choices (hs_params_enum returns the index;
 * tests/unit/test_params.c checks every pair). */
enum { HS_HEAT_EXPLICIT = 0, HS_HEAT_BACKWARD_EULER = 1, HS_HEAT_CRANK_NICOLSON = 2 };
#define HS_HEAT_SCHEME_CHOICES "explicit|backward_euler|crank_nicolson"
enum { HS_HEAT_K_CONSTANT = 0, HS_HEAT_K_LAYERED = 1, HS_HEAT_K_FILE = 2 };
#define HS_HEAT_K_CHOICES "constant|layered|file"
enum { HS_HEAT_INIT_CONSTANT = 0, HS_HEAT_INIT_SINE = 1, HS_HEAT_INIT_GAUSSIAN = 2 };
#define HS_HEAT_INIT_CHOICES "constant|sine|gaussian"
enum { HS_HEAT_SOURCE_NONE = 0, HS_HEAT_SOURCE_CONSTANT = 1, HS_HEAT_SOURCE_GAUSSIAN = 2 };
#define HS_HEAT_SOURCE_CHOICES "none|constant|gaussian"

#define HS_HEAT_MAX_LAYERS 32

typedef struct hs_heat_config {
    int ndim;
    int64_t n[3];
    double length[3], dx[3];
    int procs[3];
    double t_end, dt_user, cfl;
    int scheme, order;
    double rho, cp;
    int cond_kind;
    double k;
    int nbounds;
    double layer_bounds[HS_HEAT_MAX_LAYERS], layer_k[HS_HEAT_MAX_LAYERS + 1];
    const char *k_file, *k_var;
    int initial;
    double T0, amplitude, sigma, center[3];
    int mode[3];
    hs_bc_kind bc[3][2];
    double bc_value[3][2];
    int source;
    double Q, source_center[3], source_sigma;
    double pcg_rtol;
    int pcg_max_iter;
    int gpu_kernel;       /* HS_HEAT_KERNEL_* (heat.gpu_kernel) */
} hs_heat_config;

/* Declare the [heat] section. */
int hs_heat_declare(void);

/* Read and check the [heat] section: list lengths against ndim, boundary pairs, the 4th-order
 * restrictions, layer tables.  Problems are input errors naming the key.  Not collective. */
int hs_heat_config_read(const hs_params *p, hs_heat_config *c);

/* Cell-centre coordinate of global cell index i along dimension d. */
static inline double hs_heat_coord(const hs_heat_config *c, int d, int64_t i) { return (i + 0.5) * c->dx[d]; }

/* Conductivity (constant or layered along the last dimension) at a point. */
double hs_heat_k_at(const hs_heat_config *c, const double x[3]);
/* Source Q (W/m^3) at a point. */
double hs_heat_source_at(const hs_heat_config *c, const double x[3]);
/* Initial temperature at a point. */
double hs_heat_initial_at(const hs_heat_config *c, const double x[3]);

/* The exact solution of this configuration at (x, t), when it has one (sine or Gaussian start,
 * constant k, no source, boundaries consistent with the mode): returns 1 and sets *value. */
int hs_heat_exact_at(const hs_heat_config *c, const double x[3], double t, double *value);

/* Read the conductivity of the cells [offset, offset + local) from the configured file (NetCDF or
 * HDF5; variable k_var with the grid's shape, slowest dimension first).  A missing file, a missing
 * variable or a wrong shape is an input error naming the file and key.  Not collective. */
int hs_heat_read_k(const hs_params *p, const hs_heat_config *c, const int64_t offset[3], const int64_t local[3],
                   double *k_local);

#endif
