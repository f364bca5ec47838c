/* Finite elements: quadrature exactness, patch tests (P1 linear, P2 quadratic to round-off), exact 1-D solutions across two regions with Neumann and Robin ends. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fem_test_util.h"
#include "solvers/fem/fem_memory.h"

/* ------------------------------------------------------------------ quadrature */

static double monomial_exact(int dim, const int *p)
{
    /* int over the reference simplex of lam1^a lam2^b lam3^c = a! b! c! dim! / (a + b + c + dim)! times its measure */
    double f = 1;
    int s = 0;
    for (int i = 0; i < dim; i++) {
        for (int k = 2; k <= p[i]; k++) f *= k;
        s += p[i];
    }
    double num = f, den = 1;
    for (int k = 2; k <= s + dim; k++) den *= k;
    double dimf = 1;
    for (int k = 2; k <= dim; k++) dimf *= k;
    return num * dimf / den; /* relative to the measure */
}

static void test_quadrature(void **state)
{
    (void)state;
    for (int dim = 1; dim <= 3; dim++)
        for (int deg = 2; deg <= 5; deg += 3)
            for (int a = 0; a <= deg; a++)
                for (int b = 0; a + b <= deg; b++)
                    for (int c = 0; a + b + c <= deg; c++) {
                        int p[3] = {a, dim > 1 ? b : 0, dim > 2 ? c : 0};
                        if ((dim < 2 && b) || (dim < 3 && c)) continue;
                        double sum = 0, lam[4], w;
                        int n = hs_fem_rule(dim, deg, 0, lam, &w);
                        for (int q = 0; q < n; q++) {
                            hs_fem_rule(dim, deg, q, lam, &w);
                            double v = w;
                            for (int i = 0; i < dim; i++) v *= pow(lam[i + 1], p[i]);
                            sum += v;
                        }
                        double ex = monomial_exact(dim, p);
                        if (fabs(sum - ex) > 1e-13)
                            fail_msg("dim %d degree %d monomial (%d %d %d): %.16g vs %.16g", dim, deg, a, b, c, sum, ex);
                    }
}

/* ------------------------------------------------------------------ patch tests */

typedef struct {
    int dim, order;
} patch_case;

static void patch_exact(const double *x, void *user, double *out)
{
    const patch_case *pc = user;
    if (pc->order == 1) out[0] = 1 + 2 * x[0] - 3 * x[1] + (pc->dim == 3 ? 0.5 * x[2] : 0.0);
    else if (pc->dim == 2) out[0] = x[0] * x[0] + x[0] * x[1] - 2 * x[1] * x[1] + x[1];
    else out[0] = x[0] * x[0] + x[1] * x[1] - 2 * x[2] * x[2] + x[0] * x[1] - x[1] * x[2] + x[2];
}

static void patch_run(const char *file, int order)
{
    char path[512];
    snprintf(path, sizeof path, "%s", file);
    hs_fem_mesh *m;
    TEST_OK(hs_fem_mesh_read(path, &m));
    hs_fem_bc bcs[16];
    int nb = fem_test_walls(m, bcs);
    patch_case pc = {m->dim, order};
    /* -lap u: P2 2-D: -(2 - 4) = 2; 3-D: -(2 + 2 - 4) = 0 */
    double f = order == 2 && m->dim == 2 ? 2.0 : 0.0;
    hs_fem_region reg = {m->groups[0].dim == m->dim ? m->groups[0].tag : 10, {1.0, 0.0, f}};
    for (int i = 0; i < m->ngroups; i++)
        if (m->groups[i].dim == m->dim) reg.tag = m->groups[i].tag;
    hs_fem_problem prob = {HS_FEM_SCALAR, order, 1, &reg, nb, bcs};
    hs_fem_system *s;
    TEST_OK(hs_fem_system_create(test_ctx(), m, &prob, NULL, &s));
    TEST_OK(hs_fem_system_set_dirichlet(s, patch_exact, &pc));
    double *u = fem_test_solve(s, NULL, 0, 1e-14, NULL), err = 0, x[3], v;
    for (int64_t n = 0; n < s->nnodes; n++) {
        hs_fem_node_x(s, n, x);
        patch_exact(x, &pc, &v);
        err = fmax(err, fabs(u[n] - v));
    }
    if (!(err < 1e-11)) fail_msg("%s P%d: max nodal error %.3e", file, order, err);
    printf("patch %s P%d: %lld DOFs, max nodal error %.2e\n", file, order, (long long)s->n_global, err);
    free(u);
    hs_fem_system_destroy(s);
    hs_fem_mesh_free(m);
}

static void test_patch(void **state)
{
    (void)state;
    const char *files[] = {"tests/data/fem/tri_22a.msh", "tests/data/fem/tet_41b.msh", "inputs/meshes/square.msh",
                           "inputs/meshes/cube.msh"};
    for (int i = 0; i < 4; i++)
        for (int order = 1; order <= 2; order++) patch_run(files[i], order);
}

/* ------------------------------------------------------------------ counts for the memory estimate */

/* The memory estimate's counts against the meshes themselves: hs_fem_counts_refined's recurrences
 * give the vertices, edges (and 3-D faces, counted by sorting the cells' vertex tuples), cells and
 * facets of hs_fem_mesh_refine's meshes, twice over; hs_fem_matrix_entries gives the entries of the
 * system without Dirichlet rows, P1 and P2, scalar and elasticity, 2-D and 3-D. */
static void test_counts(void **state)
{
    (void)state;
    const char *files[] = {"tests/data/fem/tri_22a.msh", "tests/data/fem/tet_41b.msh", "inputs/meshes/square.msh",
                           "inputs/meshes/cube.msh"};
    for (int i = 0; i < 4; i++) {
        hs_fem_mesh *m;
        TEST_OK(hs_fem_mesh_read(files[i], &m));
        int64_t e, f;
        TEST_OK(hs_fem_mesh_count(m, &e, &f));
        hs_fem_counts want = {(double)m->nverts, (double)e, (double)f, (double)m->ncells, (double)m->nfacets};
        for (int level = 0; level <= 2; level++) {
            if (level > 0) {
                hs_fem_mesh *fine;
                TEST_OK(hs_fem_mesh_refine(m, &fine));
                hs_fem_mesh_free(m);
                m = fine;
                want = hs_fem_counts_refined(want, m->dim);
                TEST_OK(hs_fem_mesh_count(m, &e, &f));
                if (want.verts != (double)m->nverts || want.edges != (double)e || want.faces != (double)f ||
                    want.cells != (double)m->ncells || want.facets != (double)m->nfacets)
                    fail_msg("%s refined %d times: counted V %lld E %lld F %lld T %lld facets %lld, predicted %.0f %.0f %.0f %.0f %.0f",
                             files[i], level, (long long)m->nverts, (long long)e, (long long)f, (long long)m->ncells,
                             (long long)m->nfacets, want.verts, want.edges, want.faces, want.cells, want.facets);
            }
            if (level == 2 && m->dim == 3) break; /* the systems of the finest 3-D meshes take long */
            /* every region a coefficient, no boundary condition: every row keeps all its entries */
            hs_fem_region reg[16];
            int nreg = 0;
            for (int64_t c = 0; c < m->ncells; c++) {
                int seen = 0;
                for (int k = 0; k < nreg; k++) seen |= reg[k].tag == m->region[c];
                if (!seen && nreg < 16) reg[nreg++] = (hs_fem_region){m->region[c], {1, 1, 0, 0, 0}};
            }
            for (int order = 1; order <= 2; order++)
                for (int physics = HS_FEM_SCALAR; physics <= HS_FEM_ELASTIC; physics++) {
                    hs_fem_problem prob = {physics, order, nreg, reg, 0, NULL};
                    hs_fem_system *s;
                    TEST_OK(hs_fem_system_create(test_ctx(), m, &prob, NULL, &s));
                    const double nnz = hs_fem_matrix_entries(m->dim, order, physics == HS_FEM_ELASTIC ? m->dim : 1, want);
                    if (nnz != (double)s->nnz || hs_fem_dof_nodes(order, want) != (double)s->nnodes)
                        fail_msg("%s level %d P%d %s: %lld entries, %lld nodes; predicted %.0f, %.0f", files[i], level, order,
                                 physics == HS_FEM_ELASTIC ? "elasticity" : "scalar", (long long)s->nnz, (long long)s->nnodes, nnz,
                                 hs_fem_dof_nodes(order, want));
                    hs_fem_system_destroy(s);
                }
        }
        hs_fem_mesh_free(m);
    }
}

/* ------------------------------------------------------------------ 1-D solutions across two regions */

static void test_regions_neumann_robin(void **state)
{
    (void)state;
    const double k1 = 2.0, k2 = 0.5, q = 3.0, h = 4.0, Tinf = 7.0;
    for (int dim = 2; dim <= 3; dim++)
        for (int kind = HS_FEM_NEUMANN; kind <= HS_FEM_ROBIN; kind++) {
            hs_fem_mesh *m;
            int64_t n[3] = {6, 3, 2};
            double Lb[3] = {1, 0.5, 0.4};
            TEST_OK(hs_fem_mesh_box(dim, n, Lb, &m));
            for (int64_t c = 0; c < m->ncells; c++) {
                double cx = 0;
                for (int k = 0; k <= dim; k++) cx += m->x[3 * m->cell[c * (dim + 1) + k]] / (dim + 1);
                m->region[c] = cx > 0.5 ? 2 : 1;
            }
            hs_fem_region reg[2] = {{1, {k1, 0, 0}}, {2, {k2, 0, 0}}};
            hs_fem_bc bcs[2] = {{11, HS_FEM_DIRICHLET, 0, {0, 0, 0}, 0}, {12, kind, 0, {kind == HS_FEM_NEUMANN ? q : Tinf, 0, 0}, h}};
            double F = kind == HS_FEM_NEUMANN ? q : h * Tinf / (1 + h * (0.5 / k1 + 0.5 / k2));
            for (int order = 1; order <= 2; order++) {
                hs_fem_problem prob = {HS_FEM_SCALAR, order, 2, reg, 2, bcs};
                hs_fem_system *s;
                TEST_OK(hs_fem_system_create(test_ctx(), m, &prob, NULL, &s));
                double *u = fem_test_solve(s, NULL, 0, 1e-14, NULL), err = 0, x[3];
                for (int64_t i = 0; i < s->nnodes; i++) {
                    hs_fem_node_x(s, i, x);
                    double ex = x[0] <= 0.5 ? F * x[0] / k1 : F * (0.5 / k1 + (x[0] - 0.5) / k2);
                    err = fmax(err, fabs(u[i] - ex));
                }
                if (!(err < 1e-11)) fail_msg("dim %d %s P%d: max error %.3e", dim, kind == HS_FEM_NEUMANN ? "Neumann" : "Robin", order, err);
                free(u);
                hs_fem_system_destroy(s);
            }
            hs_fem_mesh_free(m);
        }
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_quadrature),
    cmocka_unit_test(test_patch),
    cmocka_unit_test(test_regions_neumann_robin),
    cmocka_unit_test(test_counts),
};

TEST_MAIN("fem", tests)
