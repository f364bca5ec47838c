/* The fem solver: P1/P2 finite elements on Gmsh meshes for Poisson, transient heat and linear elasticity, AMG-preconditioned CG. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/blas/blas.h"
#include "kernels/memory.h"
#include "kernels/sparse/amg.h"
#include "kernels/sparse/pcg.h"
#include "solvers/fem/fem.h"
#include "solvers/fem/fem_memory.h"
#include "solvers/fem/fem_partition.h"
#include "solvers/fem/fem_system.h"

enum { FEM_POISSON = 0, FEM_HEAT = 1, FEM_ELASTICITY = 2 };
#define FEM_PROBLEM_CHOICES "poisson|heat|elasticity"
enum { FEM_BACKWARD_EULER = 0, FEM_CRANK_NICOLSON = 1 };
#define FEM_SCHEME_CHOICES "backward_euler|crank_nicolson"
enum { FEM_PC_AMG = 0, FEM_PC_JACOBI = 1, FEM_PC_NONE = 2 };
#define FEM_PC_CHOICES "amg|jacobi|none"

static const hs_param_decl g_fem_params[] = {
    {"fem", "mesh", HS_PARAM_STRING, "", 0, 0, NULL, "Gmsh mesh file (.msh 2.2 or 4.1, ASCII or binary; triangles or tetrahedra); required"},
    {"fem", "refine", HS_PARAM_INT, "0", 0, 8, NULL, "uniform refinements after reading (each: 4 triangles / 8 tetrahedra per cell)"},
    {"fem", "problem", HS_PARAM_ENUM, "poisson", 0, 0, FEM_PROBLEM_CHOICES,
     "poisson: -div(k grad u) = f; heat: rho_cp dT/dt = div(k grad T) + f; elasticity: linear, plane strain in 2-D"},
    {"fem", "order", HS_PARAM_INT, "1", 1, 2, NULL, "Lagrange element order (1: P1, 2: P2)"},
    {"fem", "regions", HS_PARAM_NAMES, "", 0, 0, NULL,
     "cell physical groups with coefficients of their own, space-separated (\"a name\" with blanks quoted); '': one set for every cell"},
    {"fem", "conductivity", HS_PARAM_REAL_LIST, "1", 1e-300, HS_NO_MAX, NULL, "poisson, heat: k per region (one value: all)"},
    {"fem", "rho_cp", HS_PARAM_REAL_LIST, "1", 1e-300, HS_NO_MAX, NULL, "heat: volumetric heat capacity per region (J/(m^3 K))"},
    {"fem", "source", HS_PARAM_REAL_LIST, "0", HS_NO_MIN, HS_NO_MAX, NULL, "poisson, heat: volumetric source f per region (W/m^3)"},
    {"fem", "young", HS_PARAM_REAL_LIST, "1", 1e-300, HS_NO_MAX, NULL, "elasticity: Young's modulus per region (Pa)"},
    {"fem", "poisson_ratio", HS_PARAM_REAL_LIST, "0.3", -0.999, 0.4999, NULL, "elasticity: Poisson's ratio per region"},
    {"fem", "body_force", HS_PARAM_REAL_LIST, "0", HS_NO_MIN, HS_NO_MAX, "1|2|3",
     "elasticity: body force per volume fx fy [fz] (N/m^3), every region (one value: 0 only)"},
    {"fem", "dirichlet", HS_PARAM_NAMES, "", 0, 0, NULL,
     "boundary groups with a fixed value, space-separated, \"a name\" with blanks quoted (elasticity: clamped, displacement 0)"},
    {"fem", "dirichlet_value", HS_PARAM_REAL_LIST, "0", HS_NO_MIN, HS_NO_MAX, NULL, "poisson, heat: the value per dirichlet group (one: all)"},
    {"fem", "neumann", HS_PARAM_NAMES, "", 0, 0, NULL, "boundary groups with a given flux (poisson, heat) or traction (elasticity)"},
    {"fem", "neumann_value", HS_PARAM_REAL_LIST, "0", HS_NO_MIN, HS_NO_MAX, NULL,
     "flux into the body per neumann group (W/m^2; one: all); elasticity: dim traction components per group (Pa)"},
    {"fem", "robin", HS_PARAM_NAMES, "", 0, 0, NULL, "poisson, heat: convective groups, -k du/dn = h (u - robin_value)"},
    {"fem", "robin_h", HS_PARAM_REAL_LIST, "1", 0, HS_NO_MAX, NULL, "heat transfer coefficient h per robin group (W/(m^2 K); one: all)"},
    {"fem", "robin_value", HS_PARAM_REAL_LIST, "0", HS_NO_MIN, HS_NO_MAX, NULL, "ambient value per robin group (one: all)"},
    {"fem", "t_end", HS_PARAM_REAL, "1", 0, HS_NO_MAX, NULL, "heat: end time (s)"},
    {"fem", "dt", HS_PARAM_REAL, "0.01", 1e-300, HS_NO_MAX, NULL, "heat: time step (s)"},
    {"fem", "scheme", HS_PARAM_ENUM, "backward_euler", 0, 0, FEM_SCHEME_CHOICES, "heat: time integration with the mass matrix"},
    {"fem", "initial", HS_PARAM_REAL, "0", HS_NO_MIN, HS_NO_MAX, NULL, "heat: initial temperature (Dirichlet nodes take their value)"},
    {"fem", "temperature_units", HS_PARAM_ENUM, "K", 0, 0, "K|degC",
     "heat: the unit of the temperatures given (initial, dirichlet_value, robin_value) and of T in the output (CF units)"},
    {"fem", "precond", HS_PARAM_ENUM, "amg", 0, 0, FEM_PC_CHOICES,
     "CG preconditioner: amg (smoothed aggregation, block Jacobi over ranks), jacobi or none"},
    {"fem", "rtol", HS_PARAM_REAL, "1e-8", 1e-16, 0.1, NULL, "CG stopping test: ||r|| <= rtol ||b||"},
    {"fem", "max_iter", HS_PARAM_INT, "5000", 1, 1e9, NULL, "CG iterations at most per solve"},
    {"fem", "amg_theta", HS_PARAM_REAL, "-1", -1, 1, NULL,
     "AMG strength-of-connection threshold; -1: automatic (0.02 for poisson and heat, 0.08 for elasticity, as measured)"},
    {"fem", "partition", HS_PARAM_ENUM, "auto", 0, 0, HS_FEM_PART_CHOICES,
     "mesh split over ranks: metis (where built in), rcb (coordinate bisection), auto: metis when built in"},
    {"fem", "vtu", HS_PARAM_BOOL, "true", 0, 0, NULL, "also write VTU files (one per record) and a .pvd collection for ParaView"},
};

static int declare(void) {
    static const char *const inputs[] = {"fem.mesh", NULL}; /* no output may replace them */
    HS_CHECK(hs_params_declare_inputs(inputs));
    return hs_params_declare(g_fem_params, (int)(sizeof g_fem_params / sizeof g_fem_params[0]));
}

typedef struct fem {
    hs_ctx *ctx;
    int problem, order, scheme, precond;
    const char *t_units; /* heat: T's CF units, as the inputs give temperatures (a file of 20 C said 20 K) */
    hs_fem_mesh *mesh;
    hs_fem_region *regions;
    int nregions;
    hs_fem_bc *bcs;
    int nbcs;
    hs_fem_system *sys;
    hs_fem_matrix A, B;          /* A: the system; B: heat's right-side operator */
    double *val, *valB, *rhs, *c, *x, *y; /* device */
    hs_precond P;
    int have_P;
    hs_pcg_workspace work;
    double rtol;
    int max_iter;
    double t_end, dt, time;
    int64_t step, iterations, solves;
    double assemble_s, setup_s, solve_s;
    int part_used, vtu;
    /* output */
    hs_mesh_desc md;
    int64_t *onode_index, *ocell_index, *ocell_nodes;
    int32_t *oregion;
    double *ox, *oy, *oz;
    int64_t nonodes, nocells;
    double *full, *host;
    int var[4], var_vm;
} fem;

/* ------------------------------------------------------------------ configuration */

#define FEM_MAX_GROUPS 64

/* A value list of one entry (for all) or `count` entries: value i. */
static int per_group(const hs_params *p, const char *key, int count, int width, double *out)
{
    double v[3 * FEM_MAX_GROUPS];
    int n = hs_params_real_list(p, key, v, 3 * FEM_MAX_GROUPS);
    if (n == width) {
        for (int i = 0; i < count; i++) memcpy(out + i * width, v, (size_t)width * sizeof(double));
        return HS_OK;
    }
    if (n != count * width && count == 1) return hs_params_error(p, key, "has %d values: give %d", n, width);
    if (n != count * width)
        return hs_params_error(p, key, "has %d values: give %d (the same for every group) or %d (%d per group for %d groups)", n,
                               width, count * width, width, count);
    memcpy(out, v, (size_t)n * sizeof(double));
    return HS_OK;
}

static int group_names_list(const hs_fem_mesh *m, int dim, char *buf, size_t len)
{
    int w = 0;
    buf[0] = 0;
    for (int i = 0; i < m->ngroups && w < (int)len; i++)
        if (m->groups[i].dim == dim) w += snprintf(buf + w, len - (size_t)w, "%s'%s'", w ? ", " : "", m->groups[i].name);
    if (!w) snprintf(buf, len, "none");
    return HS_OK;
}

/* The physical group `name` of dimension dim, or an input error about key listing what the mesh has. */
static int find_group(const hs_params *p, const hs_fem_mesh *m, const char *key, int dim, const char *name, int *tag)
{
    const hs_gmsh_group *g = hs_fem_mesh_group(m, dim, name);
    if (g) {
        *tag = g->tag;
        return HS_OK;
    }
    char have[1024];
    group_names_list(m, dim, have, sizeof have);
    /* a group of another dimension by that name is in the mesh: saying it is not hid the mistake (a
     * region named as a boundary, a physical point named for a wall) */
    for (int i = 0; i < m->ngroups; i++)
        if (m->groups[i].dim != dim && !strcmp(m->groups[i].name, name))
            return hs_params_error(p, key, "physical group '%s' of the mesh %s has dimension %d, but %s takes %s groups (dimension %d: %s)",
                                   name, hs_params_input_path(p, "fem.mesh"), m->groups[i].dim, key,
                                   dim == m->dim ? "cell" : "boundary", dim, have);
    /* "left wall" unquoted is read as two names: say how to name it */
    int blank = 0;
    for (int i = 0; i < m->ngroups; i++) blank |= m->groups[i].dim == dim && strpbrk(m->groups[i].name, " \t,") != NULL;
    return hs_params_error(p, key, "physical group '%s' is not in the mesh %s (its %s groups: %s)%s", name,
                           hs_params_input_path(p, "fem.mesh"), dim == m->dim ? "cell" : "boundary", have,
                           blank ? "; a name with blanks or commas goes in double quotes: \"left wall\", right" : "");
}

/* The name of cell group `tag` of the mesh (its tag in decimal when $PhysicalNames names it not). */
static const char *cell_group_name(const hs_fem_mesh *m, int tag)
{
    for (int g = 0; g < m->ngroups; g++)
        if (m->groups[g].dim == m->dim && m->groups[g].tag == tag) return m->groups[g].name;
    return "(no physical group)";
}

/* The region of a cell in several cell groups (an entity in two physical groups; MSH 2.2 repeats
 * the element for each): the one fem.regions names, since only those carry coefficients; the
 * others may overlap freely (a group of every cell for a post-processor, a material group inside a
 * part group).  Two named groups would give one cell two sets of coefficients: an input error
 * naming the mesh file, the element(s) and both groups (the first group won without a word).
 * Without fem.regions every cell has the same coefficients and keeps its first group (the output's
 * region).  Before refining: the children inherit the region. */
static int resolve_regions(fem *f, const hs_params *p)
{
    hs_fem_mesh *m = f->mesh;
    char names[FEM_MAX_GROUPS][HS_PARAM_NAME_MAX];
    int n = hs_params_names(p, "fem.regions", names, FEM_MAX_GROUPS), named[FEM_MAX_GROUPS], nnamed = 0;
    if (n <= 0 || m->nshared == 0) return HS_OK;
    /* names not in the mesh, or too many, are config_regions' errors */
    for (int i = 0; i < n && i < FEM_MAX_GROUPS; i++) {
        const hs_gmsh_group *g = hs_fem_mesh_group(m, m->dim, names[i]);
        if (g) named[nnamed++] = g->tag;
    }
    const char *path = hs_params_input_path(p, "fem.mesh"), *cell = m->dim == 2 ? "triangle" : "tetrahedron";
    for (int64_t k = 0, end; k < m->nshared; k = end) {
        const int64_t c = m->shared[k].cell;
        for (end = k; end < m->nshared && m->shared[end].cell == c; end++) {}
        /* the cell's groups: its first (region) and the further ones, the first named one kept */
        int64_t pick = -2; /* -2: none named; -1: the first group; else the entry */
        for (int64_t q = k - 1; q < end; q++) {
            const int tag = q < k ? m->region[c] : m->shared[q].tag;
            int is_named = 0;
            for (int i = 0; i < nnamed && !is_named; i++) is_named = named[i] == tag;
            if (!is_named) continue;
            if (pick == -2) {
                pick = q < k ? -1 : q;
                continue;
            }
            const int64_t e1 = pick < 0 ? m->cell_elem[c] : m->shared[pick].elem, e2 = m->shared[q].elem;
            const int l1 = pick < 0 ? m->cell_line[c] : m->shared[pick].line, l2 = m->shared[q].line;
            const char *g1 = cell_group_name(m, pick < 0 ? m->region[c] : m->shared[pick].tag), *g2 = cell_group_name(m, tag);
            if (e1 == e2)
                return hs_params_error(p, "fem.regions", "the %s of element %lld (%s:%d) is in physical groups '%s' and '%s', both "
                                                         "named here: a cell takes the coefficients of one region (take it out of "
                                                         "one group, or name only one of them)",
                                       cell, (long long)e1, path, l1, g1, g2);
            return hs_params_error(p, "fem.regions", "the %s of element %lld (%s:%d, physical group '%s') is element %lld too "
                                                     "(line %d, physical group '%s'), both groups named here: a cell takes the "
                                                     "coefficients of one region (take it out of one group, or name only one of "
                                                     "them)",
                                   cell, (long long)e1, path, l1, g1, (long long)e2, l2, g2);
        }
        if (pick >= 0) m->region[c] = m->shared[pick].tag;
    }
    return HS_OK;
}

static int read_mesh(fem *f, const hs_params *p)
{
    if (!hs_params_string(p, "fem.mesh")[0])
        return hs_params_error(p, "fem.mesh", "is required: the Gmsh mesh file (.msh) to solve on");
    const char *path = hs_params_input_path(p, "fem.mesh");
    /* a file that cannot be opened is the parameter's fault: say where it was given */
    HS_CHECK(hs_params_check_input_file(p, "fem.mesh", path, "mesh file"));
    HS_CHECK(hs_fem_mesh_read(path, &f->mesh));
    HS_CHECK(resolve_regions(f, p));
    /* the run's peak (the refinement, the replicated mesh, the rank's share of the system, the
     * matrix, vectors, CG and preconditioner, the output: hs_fem_memory) must fit, before refining:
     * refine = 8 of a 360-cell cube asked for 6e9 tetrahedra and failed with exit 1, out of memory,
     * or woke the OOM killer; the mesh alone was counted, a tenth of what P2 elasticity takes */
    const int refine = (int)hs_params_int(p, "fem.refine"), d = f->mesh->dim;
    hs_fem_memory_case mc = {.dim = d, .order = f->order, .ncomp = f->problem == FEM_ELASTICITY ? d : 1, .refine = refine,
                             .verts = f->mesh->nverts, .cells = f->mesh->ncells, .facets = f->mesh->nfacets,
                             .lines = f->mesh->cell_line != NULL, .heat = f->problem == FEM_HEAT, .amg = f->precond == FEM_PC_AMG,
                             .jacobi = f->precond == FEM_PC_JACOBI,
                             .metis = hs_params_enum(p, "fem.partition") == HS_FEM_PART_METIS ||
                                      (hs_params_enum(p, "fem.partition") == HS_FEM_PART_AUTO && HS_HAVE_METIS),
                             .output = hs_params_enum(p, "output.format") != HS_OUTPUT_NONE};
    HS_CHECK(hs_fem_mesh_count(f->mesh, &mc.edges, &mc.faces));
    double device, host;
    hs_fem_memory(f->ctx, &mc, &device, &host);
    char what[160] = "the run";
    if (refine > 0)
        snprintf(what, sizeof what, "%d refinements make %.3g %s: the run", refine,
                 (double)f->mesh->ncells * pow(d == 3 ? 8.0 : 4.0, refine), d == 3 ? "tetrahedra" : "triangles");
    HS_CHECK(hs_driver_check_memory(f->ctx, p, refine > 0 ? "fem.refine" : "fem.mesh", what,
                                    refine > 0 ? "refine less, or use more ranks" : "use more ranks or a coarser mesh", device, host));
    for (int r = 0; r < refine; r++) {
        hs_fem_mesh *fine;
        HS_CHECK(hs_fem_mesh_refine(f->mesh, &fine));
        hs_fem_mesh_free(f->mesh);
        f->mesh = fine;
    }
    return HS_OK;
}

static int config_regions(fem *f, const hs_params *p)
{
    const hs_fem_mesh *m = f->mesh;
    char names[FEM_MAX_GROUPS][HS_PARAM_NAME_MAX];
    int n = hs_params_names(p, "fem.regions", names, FEM_MAX_GROUPS);
    if (n > FEM_MAX_GROUPS) return hs_params_error(p, "fem.regions", "names %d groups: %d at most", n, FEM_MAX_GROUPS);
    int count = n ? n : 1;
    double k[FEM_MAX_GROUPS], rc[FEM_MAX_GROUPS], src[FEM_MAX_GROUPS], E[FEM_MAX_GROUPS], nu[FEM_MAX_GROUPS], bf[3] = {0, 0, 0};
    HS_CHECK(per_group(p, "fem.conductivity", count, 1, k));
    HS_CHECK(per_group(p, "fem.rho_cp", count, 1, rc));
    HS_CHECK(per_group(p, "fem.source", count, 1, src));
    HS_CHECK(per_group(p, "fem.young", count, 1, E));
    HS_CHECK(per_group(p, "fem.poisson_ratio", count, 1, nu));
    int nbf = hs_params_real_list(p, "fem.body_force", bf, 3);
    if (f->problem == FEM_ELASTICITY && nbf != m->dim && !(nbf == 1 && bf[0] == 0))
        return hs_params_error(p, "fem.body_force", "needs %d components for this %d-D mesh", m->dim, m->dim);
    if (nbf == 1) bf[0] = 0;
    /* the tags of the cells' groups */
    int *tags = malloc((size_t)(m->ncells ? m->ncells : 1) * sizeof(int)), ntags = 0;
    if (!tags) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    for (int64_t c = 0; c < m->ncells; c++) {
        int seen = 0;
        for (int i = 0; i < ntags && !seen; i++) seen = tags[i] == m->region[c];
        if (!seen) tags[ntags++] = m->region[c];
    }
    f->regions = calloc((size_t)(ntags + 1), sizeof *f->regions);
    if (!f->regions) {
        free(tags);
        return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    }
    int named[FEM_MAX_GROUPS];
    int err = HS_OK;
    for (int i = 0; i < n && err == HS_OK; i++) {
        err = find_group(p, m, "fem.regions", m->dim, names[i], &named[i]);
        for (int j = 0; j < i && err == HS_OK; j++)
            if (named[j] == named[i]) err = hs_params_error(p, "fem.regions", "names '%s' twice", names[i]);
    }
    /* a named region without cells would have its coefficients ignored: a group whose cells were
     * not saved with their physical tags, as fem.dirichlet refuses a group without facets (a cell
     * in two named groups is resolve_regions' error) */
    for (int i = 0; i < n && err == HS_OK; i++) {
        int seen = 0;
        for (int t = 0; t < ntags && !seen; t++) seen = tags[t] == named[i];
        if (!seen)
            err = hs_params_error(p, "fem.regions", "physical group '%s' has no %s in the mesh %s (its cells were not saved with "
                                                    "their physical tags?)",
                                  names[i], m->dim == 2 ? "triangles" : "tetrahedra", hs_params_input_path(p, "fem.mesh"));
    }
    if (err != HS_OK) {
        free(tags);
        return err;
    }
    for (int t = 0; t < ntags; t++) {
        int idx = 0;
        if (n) {
            idx = -1;
            for (int i = 0; i < n; i++)
                if (named[i] == tags[t]) idx = i;
            if (idx < 0) {
                /* the first such cell's line, so that the user can find the cells; and cells in no
                 * group at all (Gmsh's Mesh.SaveAll keeps them) cannot be named here: the message
                 * was "the cells of physical group (no physical group) (tag 0) ...: name it here" */
                int64_t first = 0;
                while (first < m->ncells && m->region[first] != tags[t]) first++;
                const char *mesh = hs_params_input_path(p, "fem.mesh");
                if (tags[t] == 0)
                    err = hs_params_error(p, "fem.regions", "cells of %s are in no physical group (the first on line %d; Gmsh's "
                                                           "Mesh.SaveAll keeps such cells), and only the groups named here have "
                                                           "coefficients: put them in a physical group, or leave fem.regions out",
                                          mesh, m->cell_line[first]);
                else
                    err = hs_params_error(p, "fem.regions", "the cells of physical group '%s' (tag %d; the first on %s:%d) have no "
                                                           "coefficients: name it here",
                                          cell_group_name(m, tags[t]), tags[t], mesh, m->cell_line[first]);
                free(tags);
                return err;
            }
        }
        hs_fem_region *r = &f->regions[t];
        r->tag = tags[t];
        if (f->problem == FEM_ELASTICITY) {
            double lam = E[idx] * nu[idx] / ((1 + nu[idx]) * (1 - 2 * nu[idx])), mu = E[idx] / (2 * (1 + nu[idx]));
            r->coef[0] = lam, r->coef[1] = mu, r->coef[2] = bf[0], r->coef[3] = bf[1], r->coef[4] = bf[2];
        } else {
            r->coef[0] = k[idx], r->coef[1] = rc[idx], r->coef[2] = src[idx];
        }
    }
    f->nregions = ntags;
    free(tags);
    return HS_OK;
}

static int64_t piece_root(int64_t *parent, int64_t v)
{
    while (parent[v] != v) v = parent[v] = parent[parent[v]];
    return v;
}

/* Poisson's and elasticity's operators are singular on a connected piece of the mesh (cells joined
 * through shared vertices) that no Dirichlet facet and no Robin facet of h > 0 holds: u + const (a
 * rigid motion) solves it too, and CG failed in the run with exit 1 after check had passed.  An
 * unmerged interface (coincident duplicate nodes) makes such pieces; robin_h = 0 is only a flux.
 * Heat's mass matrix keeps its operator definite: not refused there. */
/* A cell's side (2D) or face (3D) as its sorted vertices, with the cell: sorted together, the
 * records of one facet stand side by side. */
typedef struct {
    int64_t v[3];
    int64_t cell;
} facet_key;

static int facet_cmp(const void *a, const void *b)
{
    const facet_key *x = a, *y = b;
    for (int k = 0; k < 3; k++)
        if (x->v[k] != y->v[k]) return x->v[k] < y->v[k] ? -1 : 1;
    return 0;
}

static void sort_small(int64_t *v, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
            int64_t t = v[j];
            v[j] = v[j - 1], v[j - 1] = t;
        }
}

/* Elasticity: cells joined through a vertex (2D) or an edge (3D) can turn about it, so a piece is
 * cells joined through whole sides or faces; its rigid motions are held only where it has a clamped
 * facet itself.  Fills cell_root (the piece's first-found representative per cell, through parent
 * over cells) and marks held pieces; returns HS_OK or a runtime error. */
static int elastic_pieces(const hs_fem_mesh *m, const fem *f, int64_t *parent, char *held)
{
    const int nv = m->dim + 1, fv = m->dim;
    size_t n = (size_t)m->ncells * (size_t)nv;
    facet_key *keys = malloc((n ? n : 1) * sizeof *keys);
    if (!keys) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    size_t k = 0;
    for (int64_t c = 0; c < m->ncells; c++)
        for (int skip = 0; skip < nv; skip++, k++) {
            facet_key *e = &keys[k];
            int j = 0;
            e->v[2] = -1;
            for (int q = 0; q < nv; q++)
                if (q != skip) e->v[j++] = m->cell[c * nv + q];
            sort_small(e->v, fv);
            e->cell = c;
        }
    qsort(keys, n, sizeof *keys, facet_cmp);
    for (int64_t c = 0; c < m->ncells; c++) parent[c] = c;
    for (size_t i = 1; i < n; i++)
        if (!facet_cmp(&keys[i - 1], &keys[i])) {
            int64_t a = piece_root(parent, keys[i - 1].cell), b = piece_root(parent, keys[i].cell);
            if (a != b) parent[a < b ? b : a] = a < b ? a : b;
        }
    for (int64_t e = 0; e < m->nfacets; e++) {
        int holds = 0;
        for (int j = 0; j < f->nbcs && !holds; j++)
            holds = f->bcs[j].tag == m->facet_group[e] && (f->bcs[j].kind == HS_FEM_DIRICHLET || (f->bcs[j].kind == HS_FEM_ROBIN && f->bcs[j].h > 0));
        if (!holds) continue;
        facet_key want = {{-1, -1, -1}, 0};
        for (int q = 0; q < fv; q++) want.v[q] = m->facet[e * fv + q];
        sort_small(want.v, fv);
        const facet_key *hit = bsearch(&want, keys, n, sizeof *keys, facet_cmp);
        if (hit) held[piece_root(parent, hit->cell)] = 1;
    }
    free(keys);
    return HS_OK;
}

static int refuse_floating_pieces(fem *f, const hs_params *p)
{
    if (f->problem == FEM_HEAT) return HS_OK;
    const hs_fem_mesh *m = f->mesh;
    const int nv = m->dim + 1;
    if (f->problem == FEM_ELASTICITY) {
        int64_t *parent = malloc((size_t)(m->ncells ? m->ncells : 1) * sizeof(int64_t));
        char *held = calloc((size_t)(m->ncells ? m->ncells : 1), 1);
        int rc = parent && held ? elastic_pieces(m, f, parent, held) : HS_FAIL(HS_ERR_RUNTIME, "out of memory");
        int64_t pieces = 0, loose = -1, loose_cells = 0;
        for (int64_t c = 0; rc == HS_OK && c < m->ncells; c++) {
            pieces += parent[c] == c;
            int64_t r = piece_root(parent, c);
            if (held[r]) continue;
            if (loose < 0) loose = c;
            loose_cells += r == piece_root(parent, loose);
        }
        free(parent), free(held);
        HS_CHECK(rc);
        if (loose < 0) return HS_OK;
        char cell[1200];
        if (m->cell_line) snprintf(cell, sizeof cell, "the %s at %s:%d", m->dim == 2 ? "triangle" : "tetrahedron",
                                   hs_params_input_path(p, "fem.mesh"), m->cell_line[loose]);
        else snprintf(cell, sizeof cell, "cell %lld", (long long)loose + 1);
        if (pieces == 1) return hs_params_error(p, "fem.dirichlet", "the mesh has no clamped (dirichlet) facet: it can move freely");
        return hs_params_error(p, "fem.dirichlet", "the mesh falls into %lld pieces joined by no %s, and the one holding %s (%lld of %lld "
                                                   "cells) has no clamped (dirichlet) facet: it can move freely, or turn about a %s it "
                                                   "shares with a held piece",
                               (long long)pieces, m->dim == 2 ? "side" : "face", cell, (long long)loose_cells, (long long)m->ncells,
                               m->dim == 2 ? "node" : "node or edge");
    }
    int64_t *parent = malloc((size_t)(m->nverts ? m->nverts : 1) * sizeof(int64_t));
    char *held = calloc((size_t)(m->nverts ? m->nverts : 1), 1);
    if (!parent || !held) {
        free(parent), free(held);
        return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    }
    for (int64_t v = 0; v < m->nverts; v++) parent[v] = v;
    for (int64_t c = 0; c < m->ncells; c++)
        for (int k = 1; k < nv; k++) {
            int64_t a = piece_root(parent, m->cell[c * nv]), b = piece_root(parent, m->cell[c * nv + k]);
            if (a != b) parent[a < b ? b : a] = a < b ? a : b;
        }
    for (int64_t e = 0; e < m->nfacets; e++)
        for (int j = 0; j < f->nbcs; j++) {
            const hs_fem_bc *b = &f->bcs[j];
            if (b->tag == m->facet_group[e] && (b->kind == HS_FEM_DIRICHLET || (b->kind == HS_FEM_ROBIN && b->h > 0)))
                held[piece_root(parent, m->facet[e * m->dim])] = 1;
        }
    int64_t pieces = 0, loose = -1, loose_cells = 0;
    for (int64_t v = 0; v < m->nverts; v++) pieces += parent[v] == v;
    for (int64_t c = 0; c < m->ncells; c++) {
        int64_t r = piece_root(parent, m->cell[c * nv]);
        if (held[r]) continue;
        if (loose < 0) loose = c;
        loose_cells += r == piece_root(parent, m->cell[loose * nv]);
    }
    free(parent), free(held);
    if (loose < 0) return HS_OK;
    const char *elastic = f->problem == FEM_ELASTICITY ? "no clamped (dirichlet) facet: it can move freely"
                                                       : "no dirichlet facet and no robin facet with robin_h > 0 (robin_h = 0 is a "
                                                         "zero flux): its solution is not unique";
    char cell[1200];
    if (m->cell_line) snprintf(cell, sizeof cell, "the %s at %s:%d", m->dim == 2 ? "triangle" : "tetrahedron",
                               hs_params_input_path(p, "fem.mesh"), m->cell_line[loose]);
    else snprintf(cell, sizeof cell, "cell %lld", (long long)loose + 1);
    if (pieces == 1) return hs_params_error(p, "fem.dirichlet", "the mesh has %s", elastic);
    return hs_params_error(p, "fem.dirichlet", "the mesh falls into %lld pieces that share no node, and the one holding %s "
                                               "(%lld of %lld cells) has %s (an interface whose nodes were not merged?)",
                           (long long)pieces, cell, (long long)loose_cells, (long long)m->ncells, elastic);
}

static int config_bcs(fem *f, const hs_params *p)
{
    const hs_fem_mesh *m = f->mesh;
    int elastic = f->problem == FEM_ELASTICITY;
    static const char *keys[3] = {"fem.dirichlet", "fem.neumann", "fem.robin"};
    char names[3][FEM_MAX_GROUPS][HS_PARAM_NAME_MAX];
    int n[3];
    for (int k = 0; k < 3; k++) {
        n[k] = hs_params_names(p, keys[k], names[k], FEM_MAX_GROUPS);
        if (n[k] > FEM_MAX_GROUPS) return hs_params_error(p, keys[k], "names %d groups: %d at most", n[k], FEM_MAX_GROUPS);
    }
    if (elastic && n[2]) return hs_params_error(p, "fem.robin", "is for poisson and heat, not elasticity");
    f->bcs = calloc((size_t)(n[0] + n[1] + n[2] + 1), sizeof *f->bcs);
    if (!f->bcs) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    double dv[FEM_MAX_GROUPS], nv[3 * FEM_MAX_GROUPS], rh[FEM_MAX_GROUPS], rv[FEM_MAX_GROUPS];
    if (n[0] && !elastic) HS_CHECK(per_group(p, "fem.dirichlet_value", n[0], 1, dv));
    if (n[1]) HS_CHECK(per_group(p, "fem.neumann_value", n[1], elastic ? m->dim : 1, nv));
    if (n[2]) HS_CHECK(per_group(p, "fem.robin_h", n[2], 1, rh));
    if (n[2]) HS_CHECK(per_group(p, "fem.robin_value", n[2], 1, rv));
    f->nbcs = 0;
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < n[k]; i++) {
            int tag = 0;
            HS_CHECK(find_group(p, m, keys[k], m->dim - 1, names[k][i], &tag));
            int64_t used = 0;
            for (int64_t e = 0; e < m->nfacets && !used; e++) used = m->facet_group[e] == tag;
            if (!used)
                return hs_params_error(p, keys[k], "physical group '%s' has no %s in the mesh %s (its elements were not saved with "
                                                   "their physical tags?)",
                                       names[k][i], m->dim == 2 ? "lines" : "triangles", hs_params_input_path(p, "fem.mesh"));
            for (int j = 0; j < f->nbcs; j++)
                if (f->bcs[j].tag == tag)
                    return hs_params_error(p, keys[k], "boundary group '%s' already has a condition", names[k][i]);
            hs_fem_bc *b = &f->bcs[f->nbcs++];
            b->tag = tag;
            b->kind = k == 0 ? HS_FEM_DIRICHLET : k == 1 ? HS_FEM_NEUMANN : HS_FEM_ROBIN;
            if (k == 0) b->value[0] = elastic ? 0.0 : dv[i];
            if (k == 1)
                for (int c = 0; c < (elastic ? m->dim : 1); c++) b->value[c] = nv[i * (elastic ? m->dim : 1) + c];
            if (k == 2) b->h = rh[i], b->value[0] = rv[i];
        }
    if (elastic && n[0] == 0)
        return hs_params_error(p, "fem.dirichlet", "elasticity needs clamped groups: without them the body can move freely");
    if (f->problem == FEM_POISSON && n[0] == 0 && n[2] == 0)
        return hs_params_error(p, "fem.dirichlet", "poisson needs a dirichlet or robin group: with fluxes alone the solution is "
                                                   "not unique");
    return refuse_floating_pieces(f, p);
}

/* Keys this configuration would ignore though the user set them: `dirichlet_value = 0.01` with
 * elasticity (its dirichlet groups are clamped at 0), `young` with poisson, heat's time keys with
 * a static problem, a condition's values with no group of that condition, `amg_theta` under
 * another preconditioner, `vtu = true` with no output all ran without a word.  The file's
 * leftovers under a setting switched on the command line pass (hs_params_unused), as in the other
 * solvers. */
static int refuse_unused_keys(const fem *f, const hs_params *p)
{
    const int heat = f->problem == FEM_HEAT, elastic = f->problem == FEM_ELASTICITY;
    const struct {
        const char *key, *cause;
        int used;
        const char *why; /* NULL: "is not used with CAUSE = VALUE" */
    } keys[] = {
        {"fem.conductivity", "fem.problem", !elastic, NULL},
        {"fem.source", "fem.problem", !elastic, NULL},
        {"fem.dirichlet_value", "fem.problem", !elastic, "fem.problem = elasticity clamps its dirichlet groups (displacement 0)"},
        {"fem.rho_cp", "fem.problem", heat, NULL},
        {"fem.t_end", "fem.problem", heat, NULL},
        {"fem.dt", "fem.problem", heat, NULL},
        {"fem.scheme", "fem.problem", heat, NULL},
        {"fem.initial", "fem.problem", heat, NULL},
        {"fem.temperature_units", "fem.problem", heat, NULL},
        {"fem.young", "fem.problem", elastic, NULL},
        {"fem.poisson_ratio", "fem.problem", elastic, NULL},
        {"fem.body_force", "fem.problem", elastic, NULL},
        {"fem.dirichlet_value", "fem.dirichlet", hs_params_names(p, "fem.dirichlet", NULL, 0) > 0, "fem.dirichlet names no group"},
        {"fem.neumann_value", "fem.neumann", hs_params_names(p, "fem.neumann", NULL, 0) > 0, "fem.neumann names no group"},
        {"fem.robin_h", "fem.robin", hs_params_names(p, "fem.robin", NULL, 0) > 0, "fem.robin names no group"},
        {"fem.robin_value", "fem.robin", hs_params_names(p, "fem.robin", NULL, 0) > 0, "fem.robin names no group"},
        {"fem.amg_theta", "fem.precond", f->precond == FEM_PC_AMG, NULL},
        /* the VTU files come with the output's records: none writes none */
        {"fem.vtu", "output.format", hs_params_enum(p, "output.format") != HS_OUTPUT_NONE || !hs_params_bool(p, "fem.vtu"), NULL},
    };
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        if (keys[k].used) continue;
        if (!keys[k].why) HS_CHECK(hs_params_unused(p, keys[k].key, keys[k].cause));
        else if (hs_params_set_against(p, keys[k].key, keys[k].cause))
            return hs_params_error(p, keys[k].key, "is set, but %s: it would be ignored", keys[k].why);
    }
    return HS_OK;
}

/* heat: the n temperatures v that key gives are at or above absolute zero in the run's units
 * (initial = -5 with temperature_units = K ran, and its output said T = -5 K). */
static int above_absolute_zero(const fem *f, const hs_params *p, const char *key, const double *v, int n)
{
    const double zero = !strcmp(f->t_units, "degC") ? -273.15 : 0.0;
    for (int i = 0; i < n; i++)
        if (v[i] < zero)
            return hs_params_error(p, key, "%g %s is below absolute zero (%g %s; fem.temperature_units = %s)", v[i], f->t_units, zero,
                                   f->t_units, f->t_units);
    return HS_OK;
}

static int validate(fem *f, const hs_params *p)
{
    f->problem = hs_params_enum(p, "fem.problem");
    f->order = (int)hs_params_int(p, "fem.order");
    f->scheme = hs_params_enum(p, "fem.scheme");
    f->t_units = hs_params_enum(p, "fem.temperature_units") == 1 ? "degC" : "K";
    f->precond = hs_params_enum(p, "fem.precond");
    f->rtol = hs_params_real(p, "fem.rtol");
    f->max_iter = (int)hs_params_int(p, "fem.max_iter");
    f->t_end = f->problem == FEM_HEAT ? hs_params_real(p, "fem.t_end") : 0.0;
    f->dt = hs_params_real(p, "fem.dt");
    f->vtu = hs_params_bool(p, "fem.vtu");
    /* the pieces are the longest names the output writes: PATH_000000.vtu.partial */
    if (f->vtu && hs_params_enum(p, "output.format") != HS_OUTPUT_NONE)
        HS_CHECK(hs_params_check_name_length(p, "output.path", hs_params_string(p, "output.path"), strlen("_000000.vtu.partial"), "VTU file"));
    if (hs_params_enum(p, "fem.partition") == HS_FEM_PART_METIS && !HS_HAVE_METIS)
        return hs_params_error(p, "fem.partition", "metis: this build has no METIS (feature -metis; install libmetis-dev and "
                                                   "rebuild, or use rcb)");
    if (f->problem == FEM_HEAT) {
        /* the matrices are built for one step length: every stop must be a whole number of steps,
         * one at least (a span below half a step was 0 steps, "whole": fem.dt = 1e12 beside t_end =
         * 600 took one step of 1e12 s and called its steady state t = 600); t_end = 0 is the initial
         * state alone */
        const double every = hs_params_real(p, "output.every_time");
        if (f->t_end > 0 && f->t_end < 0.5 * f->dt)
            return hs_params_error(p, "fem.dt", "%g is longer than fem.t_end = %g", f->dt, f->t_end);
        if (every > 0 && every < 0.5 * f->dt)
            return hs_params_error(p, "output.every_time", "%g is shorter than one step of fem.dt = %g", every, f->dt);
        double q = f->t_end / f->dt, qo = every / f->dt;
        if (fabs(q - nearbyint(q)) > 1e-9 * fmax(1.0, q))
            return hs_params_error(p, "fem.t_end", "%g is not a whole number of steps of fem.dt = %g", f->t_end, f->dt);
        if (fabs(qo - nearbyint(qo)) > 1e-9 * fmax(1.0, qo))
            return hs_params_error(p, "output.every_time", "%g is not a whole number of steps of fem.dt = %g", every, f->dt);
        double v[3 * FEM_MAX_GROUPS];
        v[0] = hs_params_real(p, "fem.initial");
        HS_CHECK(above_absolute_zero(f, p, "fem.initial", v, 1));
        static const char *const lists[2] = {"fem.dirichlet_value", "fem.robin_value"};
        for (int k = 0; k < 2; k++) {
            const int n = hs_params_real_list(p, lists[k], v, 3 * FEM_MAX_GROUPS);
            HS_CHECK(above_absolute_zero(f, p, lists[k], v, n < 3 * FEM_MAX_GROUPS ? n : 3 * FEM_MAX_GROUPS));
        }
    }
    HS_CHECK(refuse_unused_keys(f, p));
    HS_CHECK(read_mesh(f, p));
    HS_CHECK(config_regions(f, p));
    return config_bcs(f, p);
}

static void destroy(void *state);

static int check(hs_ctx *ctx, const hs_params *p)
{
    fem *f = calloc(1, sizeof *f);
    if (!f) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    f->ctx = ctx;
    int rc = validate(f, p);
    destroy(f);
    return rc;
}

/* ------------------------------------------------------------------ solves */

static int make_precond(fem *f, hs_fem_matrix *M, const hs_params *p)
{
    if (f->have_P) hs_precond_destroy(&f->P);
    f->have_P = 0;
    double t0 = hs_wtime();
    if (f->precond == FEM_PC_AMG) {
        hs_amg_opts o = hs_amg_default_opts();
        o.theta = hs_params_real(p, "fem.amg_theta");
        if (o.theta < 0) o.theta = f->problem == FEM_ELASTICITY ? 0.08 : 0.02;
        double *ns = NULL;
        if (f->problem == FEM_ELASTICITY) {
            /* rigid-body modes of the owned nodes: translations and rotations */
            hs_fem_system *s = f->sys;
            int d = s->dim, k = d == 2 ? 3 : 6;
            int64_t n = s->n_local;
            ns = calloc((size_t)(n * k > 0 ? n * k : 1), sizeof(double));
            if (!ns) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
            for (int64_t o2 = 0; o2 < s->nowned; o2++) {
                double x[3];
                hs_fem_node_x(s, s->owned[o2], x);
                for (int c = 0; c < d; c++) ns[(int64_t)c * n + o2 * d + c] = 1.0;
                if (d == 2) {
                    ns[2 * n + o2 * 2] = -x[1], ns[2 * n + o2 * 2 + 1] = x[0];
                } else {
                    ns[3 * n + o2 * 3] = -x[1], ns[3 * n + o2 * 3 + 1] = x[0];
                    ns[4 * n + o2 * 3 + 1] = -x[2], ns[4 * n + o2 * 3 + 2] = x[1];
                    ns[5 * n + o2 * 3 + 2] = -x[0], ns[5 * n + o2 * 3] = x[2];
                }
            }
            o.block_size = d, o.nnull = k, o.nullspace = ns;
        }
        int rc = hs_precond_amg(hs_fem_matrix_local(M), &o, &f->P);
        free(ns);
        HS_CHECK(rc);
    } else {
        HS_CHECK(hs_precond_create(&M->op, f->precond == FEM_PC_JACOBI ? HS_PRECOND_JACOBI : HS_PRECOND_NONE, &f->P));
    }
    f->have_P = 1;
    f->setup_s += hs_wtime() - t0;
    return HS_OK;
}

static int solve(fem *f, const double *b)
{
    hs_pcg_opts o = hs_pcg_default_opts();
    o.rtol = f->rtol;
    o.max_iter = f->max_iter;
    o.custom = &f->P;
    o.work = &f->work;
    hs_pcg_result r;
    double t0 = hs_wtime();
    HS_CHECK(hs_pcg_solve(&f->A.op, b, f->x, &o, &r));
    f->solve_s += hs_wtime() - t0;
    f->iterations += r.iterations;
    f->solves++;
    int ok = r.converged;
    double res = r.final_residual, r0 = r.initial_residual;
    hs_pcg_result_free(&r);
    if (!ok)
        return HS_FAIL(HS_ERR_RUNTIME, "fem: CG did not reach fem.rtol = %g in %d iterations (residual %g of %g)", f->rtol,
                       f->max_iter, res, r0);
    return HS_OK;
}

static int alloc_vec(hs_ctx *ctx, int64_t n, double **v) { return hs_mem_alloc(ctx, (size_t)(n > 0 ? n : 1) * sizeof(double), (void **)v); }

static int create(hs_ctx *ctx, const hs_params *p, void **state)
{
    fem *f = calloc(1, sizeof *f);
    if (!f) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    *state = f;
    f->ctx = ctx;
    HS_CHECK(validate(f, p));
    int *part = malloc((size_t)(f->mesh->ncells ? f->mesh->ncells : 1) * sizeof(int));
    if (!part) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    int rc = hs_fem_partition(f->mesh, ctx->size, hs_params_enum(p, "fem.partition"), part, &f->part_used);
    hs_fem_problem prob = {f->problem == FEM_ELASTICITY ? HS_FEM_ELASTIC : HS_FEM_SCALAR, f->order, f->nregions, f->regions,
                           f->nbcs, f->bcs};
    if (rc == HS_OK) rc = hs_fem_system_create(ctx, f->mesh, &prob, part, &f->sys);
    free(part);
    HS_CHECK(rc);
    hs_fem_system *s = f->sys;
    HS_CHECK(alloc_vec(ctx, s->nnz, &f->val));
    HS_CHECK(alloc_vec(ctx, s->n_local, &f->rhs));
    HS_CHECK(alloc_vec(ctx, s->n_local, &f->x));
    double t0 = hs_wtime();
    if (f->problem == FEM_HEAT) {
        /* (M + theta dt K) T+ = (M - (1 - theta) dt K) T + dt (F - K_fD g): A, B and the constant c */
        double theta = f->scheme == FEM_CRANK_NICOLSON ? 0.5 : 1.0;
        HS_CHECK(alloc_vec(ctx, s->nnz, &f->valB));
        HS_CHECK(alloc_vec(ctx, s->n_local, &f->c));
        HS_CHECK(alloc_vec(ctx, s->n_local, &f->y));
        HS_CHECK(hs_fem_assemble(s, 1.0, 0.0, 1.0, 1, f->valB, f->c)); /* c = F - K_fD g (B's values overwritten below) */
        HS_CHECK(hs_scal(ctx, HS_F64, (size_t)s->n_local, f->dt, f->c));
        HS_CHECK(hs_fem_assemble(s, -(1.0 - theta) * f->dt, 1.0, 0.0, 0, f->valB, NULL));
        HS_CHECK(hs_fem_assemble(s, theta * f->dt, 1.0, 0.0, 0, f->val, NULL));
        HS_CHECK(hs_ctx_sync(ctx));
        f->assemble_s = hs_wtime() - t0;
        HS_CHECK(hs_fem_matrix_create(s, f->val, &f->A));
        HS_CHECK(hs_fem_matrix_create(s, f->valB, &f->B));
        HS_CHECK(hs_fem_initial_guess(s, hs_params_real(p, "fem.initial"), f->x));
        return make_precond(f, &f->A, p);
    }
    /* static problems are solved here: the record at step 0 is the answer */
    HS_CHECK(hs_fem_assemble(s, 1.0, 0.0, 1.0, 1, f->val, f->rhs));
    HS_CHECK(hs_ctx_sync(ctx));
    f->assemble_s = hs_wtime() - t0;
    HS_CHECK(hs_fem_matrix_create(s, f->val, &f->A));
    HS_CHECK(hs_fem_initial_guess(s, 0.0, f->x));
    HS_CHECK(make_precond(f, &f->A, p));
    return solve(f, f->rhs);
}

/* One heat step: rhs = B T + c on free rows, A_dd g on Dirichlet rows; A T+ = rhs. */
static int heat_step(fem *f)
{
    hs_fem_system *s = f->sys;
    HS_CHECK(f->B.op.apply(f->B.op.data, f->x, f->rhs));
    HS_CHECK(hs_axpy(f->ctx, HS_F64, (size_t)s->n_local, 1.0, f->c, f->rhs));
    /* Dirichlet rows: B's row there is M_dd - (1 - theta) dt K_dd, so reset them to A_dd g */
    HS_CHECK(hs_fem_set_dirichlet_rows(s, f->val, f->rhs));
    return solve(f, f->rhs);
}

static int advance(void *state, double until, int64_t max_steps, int64_t *taken)
{
    fem *f = state;
    *taken = 0;
    if (until > f->t_end) until = f->t_end;
    while (*taken < max_steps && f->time < until * (1 - 1e-12)) {
        HS_CHECK(heat_step(f));
        f->step++;
        (*taken)++;
        /* from the step count, so that stops land exactly (they are whole numbers of steps) */
        f->time = (double)f->step * f->dt;
        if (f->time > f->t_end * (1 - 1e-12)) f->time = f->t_end;
    }
    return HS_OK;
}

static void progress(void *state, double *time, int64_t *step, double *t_end, double *work)
{
    fem *f = state;
    *time = f->time;
    *step = f->step;
    *t_end = f->t_end;
    *work = f->sys ? (double)f->sys->n_global : 0;
}

/* ------------------------------------------------------------------ output */

static int ensure_full(fem *f);

/* The sub-cells drawn for a P2 cell (local node indices): 4 triangles, 8 tetrahedra. */
static const int g_sub_tri[4][3] = {{0, 3, 5}, {3, 1, 4}, {5, 4, 2}, {3, 4, 5}};
static const int g_sub_tet[8][4] = {{0, 4, 6, 7}, {4, 1, 5, 9}, {6, 5, 2, 8}, {7, 9, 8, 3},
                                    {4, 8, 6, 7}, {4, 8, 7, 9}, {4, 8, 9, 5}, {4, 8, 5, 6}};

static int build_output_mesh(fem *f)
{
    hs_fem_system *s = f->sys;
    hs_fem_mesh *m = f->mesh;
    int rank = f->ctx->rank, dim = s->dim, nv = dim + 1;
    int sub = s->order == 1 ? 1 : (dim == 2 ? 4 : 8);
    f->nonodes = s->nowned;
    f->onode_index = malloc((size_t)(f->nonodes ? f->nonodes : 1) * sizeof(int64_t));
    f->ox = malloc((size_t)(f->nonodes ? f->nonodes : 1) * sizeof(double));
    f->oy = malloc((size_t)(f->nonodes ? f->nonodes : 1) * sizeof(double));
    f->oz = malloc((size_t)(f->nonodes ? f->nonodes : 1) * sizeof(double));
    int64_t mine = 0;
    for (int64_t c = 0; c < m->ncells; c++) mine += s->cell_part[c] == rank;
    f->nocells = mine * sub;
    f->ocell_index = malloc((size_t)(f->nocells ? f->nocells : 1) * sizeof(int64_t));
    f->ocell_nodes = malloc((size_t)(f->nocells ? f->nocells : 1) * nv * sizeof(int64_t));
    f->oregion = malloc((size_t)(f->nocells ? f->nocells : 1) * sizeof(int32_t));
    f->full = malloc((size_t)(s->nnodes * s->ncomp > 0 ? s->nnodes * s->ncomp : 1) * sizeof(double));
    f->host = malloc((size_t)(f->nocells > f->nonodes ? f->nocells : f->nonodes + 1) * sizeof(double));
    if (!f->onode_index || !f->ox || !f->oy || !f->oz || !f->ocell_index || !f->ocell_nodes || !f->oregion || !f->full || !f->host)
        return HS_FAIL(HS_ERR_RUNTIME, "out of memory for the output mesh");
    for (int64_t o = 0; o < s->nowned; o++) {
        double x[3];
        hs_fem_node_x(s, s->owned[o], x);
        f->onode_index[o] = s->owned[o];
        f->ox[o] = x[0], f->oy[o] = x[1], f->oz[o] = x[2];
    }
    int64_t k = 0;
    for (int64_t c = 0; c < m->ncells; c++) {
        if (s->cell_part[c] != rank) continue;
        const int64_t *cn = s->cell_nodes + c * s->nl;
        for (int q = 0; q < sub; q++, k++) {
            int64_t *o = f->ocell_nodes + k * nv;
            for (int i = 0; i < nv; i++) o[i] = s->order == 1 ? cn[i] : cn[dim == 2 ? g_sub_tri[q][i] : g_sub_tet[q][i]];
            if (dim == 3) {
                /* VTK wants positive tetrahedra */
                double e[3][3], x0[3], xi[3];
                hs_fem_node_x(s, o[0], x0);
                for (int i = 0; i < 3; i++) {
                    hs_fem_node_x(s, o[i + 1], xi);
                    for (int d = 0; d < 3; d++) e[i][d] = xi[d] - x0[d];
                }
                double det = e[0][0] * (e[1][1] * e[2][2] - e[1][2] * e[2][1]) - e[0][1] * (e[1][0] * e[2][2] - e[1][2] * e[2][0]) +
                             e[0][2] * (e[1][0] * e[2][1] - e[1][1] * e[2][0]);
                if (det < 0) {
                    int64_t t = o[1];
                    o[1] = o[2];
                    o[2] = t;
                }
            }
            f->ocell_index[k] = c * sub + q;
            f->oregion[k] = m->region[c];
        }
    }
    hs_mesh_desc *md = &f->md;
    md->name = "mesh";
    md->dim = dim;
    md->units = "m";
    md->nnodes = f->nonodes;
    md->node_index = f->onode_index;
    md->x = f->ox, md->y = f->oy, md->z = dim == 3 ? f->oz : NULL;
    md->ncells = f->nocells;
    md->cell_index = f->ocell_index;
    md->cell_nodes = f->ocell_nodes;
    md->region = f->oregion;
    md->vtu = f->vtu;
    return HS_OK;
}

static int describe_output(void *state, hs_output_desc *desc)
{
    fem *f = state;
    if (!f->ocell_nodes) HS_CHECK(build_output_mesh(f));
    desc->title = f->problem == FEM_ELASTICITY ? "hpcsim finite elements: linear elasticity"
                  : f->problem == FEM_HEAT     ? "hpcsim finite elements: heat equation"
                                               : "hpcsim finite elements: Poisson equation";
    desc->ndim = 0;
    desc->mesh = &f->md;
    return HS_OK;
}

static int define_vars(void *state, hs_writer *w)
{
    fem *f = state;
    if (f->problem != FEM_ELASTICITY)
        return hs_writer_def_mesh_var(w, f->problem == FEM_HEAT ? "T" : "u", f->problem == FEM_HEAT ? f->t_units : "1",
                                      f->problem == FEM_HEAT ? "temperature" : "solution", NULL, HS_MESH_NODE, HS_F64, 1, &f->var[0]);
    static const char *names[3] = {"ux", "uy", "uz"};
    static const char *longs[3] = {"displacement along x", "displacement along y", "displacement along z"};
    for (int c = 0; c < f->sys->dim; c++) HS_CHECK(hs_writer_def_mesh_var(w, names[c], "m", longs[c], NULL, HS_MESH_NODE, HS_F64, 1, &f->var[c]));
    return hs_writer_def_mesh_var(w, "von_mises", "Pa", "von Mises stress (cell centroid)", NULL, HS_MESH_CELL, HS_F64, 1, &f->var_vm);
}

/* von Mises stress at the centroid of cell c from the full displacement u. */
static double von_mises(const fem *f, int64_t c, const double *u)
{
    const hs_fem_system *s = f->sys;
    int dim = s->dim, nc = s->ncomp;
    const int64_t *cn = s->cell_nodes + c * s->nl;
    double x[12], g[4][3], grad[10][3], lam[4];
    for (int i = 0; i <= dim; i++) memcpy(x + 3 * i, f->mesh->x + 3 * cn[i], 3 * sizeof(double));
    hs_fem_geometry(dim, x, g);
    for (int i = 0; i < 4; i++) lam[i] = 1.0 / (dim + 1);
    hs_fem_grad(dim, s->order, lam, g, grad);
    double du[3][3] = {{0}};
    for (int a = 0; a < s->nl; a++)
        for (int i = 0; i < nc; i++)
            for (int j = 0; j < dim; j++) du[i][j] += u[cn[a] * nc + i] * grad[a][j];
    int slot = 0;
    for (int r = 0; r < f->nregions; r++)
        if (f->regions[r].tag == f->mesh->region[c]) slot = r;
    double lm = f->regions[slot].coef[0], mu = f->regions[slot].coef[1];
    double eps[3][3] = {{0}}, tr = 0;
    for (int i = 0; i < dim; i++)
        for (int j = 0; j < dim; j++) eps[i][j] = 0.5 * (du[i][j] + du[j][i]);
    for (int i = 0; i < dim; i++) tr += eps[i][i];
    double sg[3][3];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) sg[i][j] = 2 * mu * eps[i][j] + (i == j ? lm * tr : 0.0);
    /* plane strain: eps_zz = 0 and sigma_zz = lambda tr(eps) (set above) */
    double a = sg[0][0] - sg[1][1], b = sg[1][1] - sg[2][2], cc = sg[2][2] - sg[0][0];
    return sqrt(0.5 * (a * a + b * b + cc * cc) + 3 * (sg[0][1] * sg[0][1] + sg[1][2] * sg[1][2] + sg[0][2] * sg[0][2]));
}

static int write_state(void *state, hs_writer *w)
{
    fem *f = state;
    hs_fem_system *s = f->sys;
    int nc = s->ncomp;
    HS_CHECK(ensure_full(f));
    for (int c = 0; c < nc; c++) {
        for (int64_t o = 0; o < s->nowned; o++) f->host[o] = f->full[s->owned[o] * nc + c];
        HS_CHECK(hs_writer_put_mesh(w, f->var[c], f->nonodes, f->onode_index, f->host));
    }
    if (f->problem != FEM_ELASTICITY) return HS_OK;
    int sub = s->order == 1 ? 1 : (s->dim == 2 ? 4 : 8);
    for (int64_t k = 0; k < f->nocells; k += sub) {
        double v = von_mises(f, f->ocell_index[k] / sub, f->full);
        for (int q = 0; q < sub; q++) f->host[k + q] = v;
    }
    return hs_writer_put_mesh(w, f->var_vm, f->nocells, f->ocell_index, f->host);
}

/* ------------------------------------------------------------------ checkpoints, report */

static int checkpoint(void *state, hs_checkpoint *c)
{
    fem *f = state;
    double clock[2] = {f->time, (double)f->step};
    int64_t n = f->sys->n_local;
    double *h = malloc((size_t)(n ? n : 1) * sizeof(double));
    if (!h) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    int rc = hs_mem_copy(f->ctx, h, f->x, (size_t)n * sizeof(double), HS_COPY_D2H);
    if (rc == HS_OK) rc = hs_checkpoint_write_state(c, "x", HS_F64, n, h);
    free(h);
    HS_CHECK(rc);
    return hs_checkpoint_write(c, "clock", HS_F64, 2, clock);
}

static int restore(void *state, hs_checkpoint *c)
{
    fem *f = state;
    double clock[2];
    int64_t n = f->sys->n_local;
    double *h = malloc((size_t)(n ? n : 1) * sizeof(double));
    if (!h) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    int rc = hs_checkpoint_read_state(c, "x", HS_F64, n, h);
    if (rc == HS_OK) rc = hs_mem_copy(f->ctx, f->x, h, (size_t)n * sizeof(double), HS_COPY_H2D);
    free(h);
    HS_CHECK(rc);
    HS_CHECK(hs_checkpoint_read(c, "clock", HS_F64, 2, clock));
    f->time = clock[0];
    f->step = (int64_t)clock[1];
    return HS_OK;
}

/* The tip deflection of a beam: the mean of uy over the nodes at the largest x (fem_cantilever.ini). */
static int tip_deflection(fem *f, double *mean_uy)
{
    hs_fem_system *s = f->sys;
    double xmax = -INFINITY, sum = 0, cnt = 0, x[3];
    for (int64_t n = 0; n < s->nnodes; n++) {
        hs_fem_node_x(s, n, x);
        xmax = fmax(xmax, x[0]);
    }
    for (int64_t n = 0; n < s->nnodes; n++) {
        hs_fem_node_x(s, n, x);
        if (x[0] >= xmax - 1e-9 * fabs(xmax)) sum += f->full[n * s->ncomp + 1], cnt++;
    }
    *mean_uy = cnt > 0 ? sum / cnt : 0;
    return HS_OK;
}

static int ensure_full(fem *f)
{
    hs_fem_system *s = f->sys;
    if (!f->full) f->full = malloc((size_t)(s->nnodes * s->ncomp > 0 ? s->nnodes * s->ncomp : 1) * sizeof(double));
    if (!f->full) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    return hs_fem_gather(s, f->x, f->full);
}

int hs_fem_tip_deflection(void *state, double *uy)
{
    fem *f = state;
    HS_CHECK(ensure_full(f));
    return tip_deflection(f, uy);
}

void hs_fem_stats(void *state, int64_t *solves, int64_t *iterations)
{
    fem *f = state;
    *solves = f->solves;
    *iterations = f->iterations;
}

int hs_fem_solution(void *state, const double **u, int64_t *nnodes, int *ncomp)
{
    fem *f = state;
    HS_CHECK(ensure_full(f));
    *u = f->full;
    *nnodes = f->sys->nnodes;
    *ncomp = f->sys->ncomp;
    return HS_OK;
}

static int finish(void *state)
{
    fem *f = state;
    hs_fem_system *s = f->sys;
    HS_CHECK(ensure_full(f));
    int bad = 0;
    double umin = INFINITY, umax = -INFINITY;
    for (int64_t i = 0; i < s->nnodes * s->ncomp; i++) {
        bad |= !isfinite(f->full[i]);
        umin = fmin(umin, f->full[i]), umax = fmax(umax, f->full[i]);
    }
    if (bad) return HS_FAIL(HS_ERR_RUNTIME, "fem: the solution is not finite at step %lld", (long long)f->step);
    if (f->ctx->rank != 0) return HS_OK;
    char buf[512] = "";
    if (f->precond == FEM_PC_AMG) hs_amg_describe(&f->P, buf, sizeof buf);
    printf("fem: %s, P%d, %lld cells, %lld unknowns on %d rank%s (%s), %lld matrix entries on rank 0\n",
           f->problem == FEM_ELASTICITY ? "elasticity" : f->problem == FEM_HEAT ? "heat" : "poisson", f->order,
           (long long)f->mesh->ncells, (long long)s->n_global, f->ctx->size, f->ctx->size > 1 ? "s" : "",
           f->ctx->size == 1 ? "not split" : f->part_used == HS_FEM_PART_METIS ? "METIS partition" : "RCB partition", (long long)s->nnz);
    printf("fem: %lld CG solve%s, %lld iterations (%.1f per solve) with %s preconditioning; assembly %.3f s, preconditioner setup %.3f "
           "s, solves %.3f s\n",
           (long long)f->solves, f->solves == 1 ? "" : "s", (long long)f->iterations, f->solves ? (double)f->iterations / f->solves : 0.0,
           f->precond == FEM_PC_AMG ? "AMG" : f->precond == FEM_PC_JACOBI ? "Jacobi" : "no", f->assemble_s, f->setup_s, f->solve_s);
    if (buf[0]) printf("fem: %s\n", buf);
    if (f->problem == FEM_ELASTICITY) {
        double tip;
        tip_deflection(f, &tip);
        printf("fem: displacement range [%.6e, %.6e] m; mean uy at the largest x: %.6e m\n", umin, umax, tip);
    } else {
        printf("fem: %s range [%.6e, %.6e] at t = %.6g\n", f->problem == FEM_HEAT ? "T" : "u", umin, umax, f->time);
    }
    return HS_OK;
}

static void destroy(void *state)
{
    fem *f = state;
    if (!f) return;
    if (f->have_P) hs_precond_destroy(&f->P);
    hs_pcg_workspace_free(&f->work);
    hs_fem_matrix_destroy(&f->A);
    hs_fem_matrix_destroy(&f->B);
    if (f->ctx) {
        hs_mem_free(f->ctx, f->val), hs_mem_free(f->ctx, f->valB), hs_mem_free(f->ctx, f->rhs);
        hs_mem_free(f->ctx, f->c), hs_mem_free(f->ctx, f->x), hs_mem_free(f->ctx, f->y);
    }
    hs_fem_system_destroy(f->sys);
    hs_fem_mesh_free(f->mesh);
    free(f->regions), free(f->bcs);
    free(f->onode_index), free(f->ocell_index), free(f->ocell_nodes), free(f->oregion);
    free(f->ox), free(f->oy), free(f->oz), free(f->full), free(f->host);
    free(f);
}

static const char *const g_restart_may_change[] = {"fem.t_end", "fem.rtol", "fem.max_iter", NULL};

const hs_solver_ops hs_fem_solver = {
    .name = "fem",
    .summary = "finite elements (P1/P2) on Gmsh meshes: Poisson, transient heat, linear elasticity; AMG-preconditioned CG",
    .declare = declare,
    .check = check,
    .create = create,
    .advance = advance,
    .progress = progress,
    .describe_output = describe_output,
    .define_vars = define_vars,
    .write = write_state,
    .finish = finish,
    .checkpoint = checkpoint,
    .restore = restore,
    .destroy = destroy,
    .restart_may_change = g_restart_may_change,
    .work_unit = "unknowns",
};
