/* Helpers of the finite-element tests: Dirichlet walls, an assembled and solved system, box problems. */
#ifndef HS_FEM_TEST_UTIL_H
#define HS_FEM_TEST_UTIL_H

#include <stdlib.h>

#include "kernels/memory.h"
#include "kernels/sparse/amg.h"
#include "kernels/sparse/pcg.h"
#include "solvers/fem/fem_system.h"
#include "test_util.h"

/* Dirichlet on every boundary group of a mesh (values set later, by a function or 0). */
static inline int fem_test_walls(const hs_fem_mesh *m, hs_fem_bc *bcs)
{
    int n = 0;
    for (int i = 0; i < m->ngroups; i++)
        if (m->groups[i].dim == m->dim - 1) bcs[n++] = (hs_fem_bc){m->groups[i].tag, HS_FEM_DIRICHLET, 0, {0, 0, 0}, 0};
    return n;
}

/* Assemble s (with lifting), add the host load b_extra (n_local, may be NULL), solve by PCG with
 * AMG (amg = 1) or Jacobi to rtol; the nodal solution of every node on every rank (malloc'd). */
static inline double *fem_test_solve(hs_fem_system *s, const double *b_extra, int amg, double rtol, int *iters)
{
    hs_ctx *ctx = test_ctx();
    size_t nb = (size_t)(s->n_local ? s->n_local : 1) * sizeof(double);
    double *val, *rhs, *x;
    TEST_OK(hs_mem_alloc(ctx, (size_t)(s->nnz ? s->nnz : 1) * sizeof(double), (void **)&val));
    TEST_OK(hs_mem_alloc(ctx, nb, (void **)&rhs));
    TEST_OK(hs_mem_alloc(ctx, nb, (void **)&x));
    TEST_OK(hs_fem_assemble(s, 1.0, 0.0, 1.0, 1, val, rhs));
    if (b_extra) {
        double *b = malloc(nb);
        test_download(b, rhs, (size_t)s->n_local * sizeof(double));
        for (int64_t i = 0; i < s->n_local; i++) b[i] += b_extra[i];
        TEST_OK(hs_mem_copy(ctx, rhs, b, (size_t)s->n_local * sizeof(double), HS_COPY_H2D));
        free(b);
    }
    hs_fem_matrix M;
    TEST_OK(hs_fem_matrix_create(s, val, &M));
    TEST_OK(hs_fem_initial_guess(s, 0.0, x));
    hs_pcg_opts o = hs_pcg_default_opts();
    o.rtol = rtol;
    hs_precond P;
    if (amg) {
        hs_amg_opts ao = hs_amg_default_opts();
        TEST_OK(hs_precond_amg(hs_fem_matrix_local(&M), &ao, &P));
        o.custom = &P;
    }
    hs_pcg_result r;
    TEST_OK(hs_pcg_solve(&M.op, rhs, x, &o, &r));
    assert_true(r.converged);
    if (iters) *iters = r.iterations;
    double *u = malloc((size_t)(s->nnodes * s->ncomp) * sizeof(double));
    TEST_OK(hs_fem_gather(s, x, u));
    if (amg) hs_precond_destroy(&P);
    hs_fem_matrix_destroy(&M);
    hs_mem_free(ctx, val), hs_mem_free(ctx, rhs), hs_mem_free(ctx, x);
    return u;
}

#endif
