/* Preconditioned conjugate gradient on any hs_linop (one rank or distributed), with preconditioner objects. */
#ifndef HS_PCG_H
#define HS_PCG_H

#include "kernels/sparse/sparse.h"

typedef enum { HS_PRECOND_NONE = 0, HS_PRECOND_JACOBI = 1 } hs_precond_kind;

/* A preconditioner z = M^-1 r on the operator's distributed vectors.  New kinds (SSOR, Chebyshev,
 * AMG) are written as a create function filling this struct and handed to the solver through
 * hs_pcg_opts.custom; pcg.c does not change.  apply NULL with diag_inverse NULL is the identity.
 * When diag_inverse is set (a device array of n_local entries), z = diag_inverse .* r and the solver
 * fuses it into its update pass instead of calling apply. */
typedef struct hs_precond {
    hs_ctx *ctx;
    void *data;
    int (*apply)(void *data, const double *r, double *z); /* collective over the operator's comm */
    void (*destroy)(void *data);
    const double *diag_inverse;
} hs_precond;

/* Jacobi: M = diag(A), from A->diagonal.  A diagonal entry <= 0 (or NaN) means A is not SPD: a
 * runtime error naming the first such row and the number of them (on every rank: collective over
 * A->comm). */
int hs_precond_jacobi(const hs_linop *A, hs_precond *P);
/* The preconditioner of a given kind (NONE: identity).  Collective over A->comm. */
int hs_precond_create(const hs_linop *A, hs_precond_kind kind, hs_precond *P);
void hs_precond_destroy(hs_precond *P);

/* Work vectors kept between solves (r, z, p, q: 4 n doubles of device memory), so that a time loop
 * solving every step does not allocate and free device memory each time.  Zero-initialise it,
 * pass it in hs_pcg_opts.work, and release it with hs_pcg_workspace_free. */
typedef struct hs_pcg_workspace {
    hs_ctx *ctx;
    size_t n;
    double *r, *z, *p, *q;
} hs_pcg_workspace;
void hs_pcg_workspace_free(hs_pcg_workspace *w);

typedef struct hs_pcg_opts {
    double rtol, atol;       /* stop when ||r||_2 <= max(rtol ||b||_2, atol) */
    int max_iter;            /* iterations at most (0: only the initial residual is evaluated) */
    hs_precond_kind precond; /* used when custom is NULL */
    int record_history;      /* fill hs_pcg_result.history */
    const hs_precond *custom;/* a preconditioner built by the caller (reused across solves), or NULL */
    hs_pcg_workspace *work;  /* work vectors reused across solves, or NULL (allocated per solve) */
} hs_pcg_opts;

/* rtol 1e-8, atol 0, max_iter 10000, Jacobi, no history, no custom preconditioner, no workspace. */
hs_pcg_opts hs_pcg_default_opts(void);

typedef struct hs_pcg_result {
    int iterations;          /* iterations performed (SpMVs after the initial residual) */
    int converged;
    double initial_residual, final_residual; /* ||b - A x||_2 at the start and the end (recursive residual) */
    double *history;         /* ||r_k||_2 for k = 0..iterations, malloc'd when record_history, else NULL */
} hs_pcg_result;

/* Solve A x = b from the initial x (device arrays of A->n_local entries) by preconditioned CG.
 * Per iteration: one A->apply, the dot p.Ap, one fused pass x += alpha p, r -= alpha Ap, z = M^-1 r
 * with r.z (hs_pcg_update; hs_cg_update without preconditioner), r.r for the stopping test (no
 * extra pass without preconditioner), and p = z + beta p; the two or three dot products of an
 * iteration are all-reduced together in two MPI_Allreduce calls.  Returns HS_OK also when not
 * converged (res->converged says so).  p.Ap <= 0 (negative curvature: A not SPD) or r.z <= 0 with
 * r != 0 (M not SPD) is a runtime error naming the iteration.  Collective over A->comm. */
int hs_pcg_solve(const hs_linop *A, const double *b, double *x, const hs_pcg_opts *opts, hs_pcg_result *res);
void hs_pcg_result_free(hs_pcg_result *res);

#endif
