/* Preconditioned CG with the fused BLAS updates, and the Jacobi preconditioner. */
#include "kernels/sparse/pcg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/blas/blas.h"
#include "kernels/memory.h"

/* Sum over the operator's ranks; an operator on MPI_COMM_SELF has nothing to reduce. */
static int global_sum(MPI_Comm comm, double *v, int n)
{
    if (comm == MPI_COMM_SELF || comm == MPI_COMM_NULL) return HS_OK;
    return hs_allreduce_sum(comm, v, n);
}

/* ------------------------------------------------------------------ preconditioners */

typedef struct {
    hs_ctx *ctx;
    size_t n;
    double *dinv;
} jacobi_data;

static void jacobi_free(void *data)
{
    jacobi_data *j = data;
    if (!j) return;
    hs_mem_free(j->ctx, j->dinv);
    free(j);
}

/* The solver fuses diag_inverse into its update; this is for callers that apply M themselves. */
static int jacobi_apply(void *data, const double *r, double *z)
{
    jacobi_data *j = data;
    return hs_pointwise_mult(j->ctx, HS_F64, j->n, j->dinv, r, z);
}

/* dinv = 1 / diag(A), rejecting a diagonal that is not positive on any rank. */
static int jacobi_setup(const hs_linop *A, jacobi_data *j)
{
    size_t bytes = (size_t)A->n_local * sizeof(double);
    double *d = NULL;
    HS_CHECK(hs_mem_alloc(A->ctx, bytes, (void **)&j->dinv));
    HS_CHECK(hs_mem_alloc(A->ctx, bytes, (void **)&d));
    int64_t bad = 0, first = -1;
    int rc = A->n_local ? A->diagonal(A->data, d) : HS_OK;
    if (rc == HS_OK) rc = hs_diag_inverse(A->ctx, A->n_local, d, j->dinv, &bad, &first);
    hs_mem_free(A->ctx, d);
    HS_CHECK(rc);
    double count = (double)bad;
    HS_CHECK(global_sum(A->comm, &count, 1));
    if (count > 0 && bad > 0)
        return HS_FAIL(HS_ERR_RUNTIME,
                       "Jacobi preconditioner: diagonal entry of local row %lld is not positive (%.0f such rows in "
                       "all): the matrix is not symmetric positive definite",
                       (long long)first, count);
    if (count > 0)
        return HS_FAIL(HS_ERR_RUNTIME,
                       "Jacobi preconditioner: %.0f diagonal entries on other ranks are not positive: the matrix is "
                       "not symmetric positive definite",
                       count);
    return HS_OK;
}

int hs_precond_jacobi(const hs_linop *A, hs_precond *P)
{
    memset(P, 0, sizeof *P);
    if (!A || !A->ctx) return hs_input_error("hs_precond_jacobi", 0, "A", "is NULL");
    if (!A->diagonal) return hs_input_error("hs_precond_jacobi", 0, "A", "the operator cannot give its diagonal");
    jacobi_data *j = calloc(1, sizeof *j);
    if (!j) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory for the Jacobi preconditioner");
    j->ctx = A->ctx;
    j->n = (size_t)A->n_local;
    int rc = jacobi_setup(A, j);
    if (rc != HS_OK) {
        jacobi_free(j);
        return rc;
    }
    P->ctx = A->ctx;
    P->data = j;
    P->apply = jacobi_apply;
    P->destroy = jacobi_free;
    P->diag_inverse = j->dinv;
    return HS_OK;
}

int hs_precond_create(const hs_linop *A, hs_precond_kind kind, hs_precond *P)
{
    memset(P, 0, sizeof *P);
    switch (kind) {
    case HS_PRECOND_NONE: P->ctx = A ? A->ctx : NULL; return HS_OK;
    case HS_PRECOND_JACOBI: return hs_precond_jacobi(A, P);
    default: return hs_input_error("hs_precond_create", 0, "kind", "unknown preconditioner %d", (int)kind);
    }
}

void hs_precond_destroy(hs_precond *P)
{
    if (P && P->destroy) P->destroy(P->data);
    if (P) memset(P, 0, sizeof *P);
}

/* ------------------------------------------------------------------ solver */

hs_pcg_opts hs_pcg_default_opts(void)
{
    hs_pcg_opts o = {1e-8, 0.0, 10000, HS_PRECOND_JACOBI, 0, NULL, NULL};
    return o;
}

typedef struct {
    const hs_linop *A;
    const hs_precond *M;
    const hs_pcg_opts *o;
    size_t n;
    double *r, *z, *p, *q; /* z aliases r without preconditioner */
    double rz;             /* global r.z of the current residual */
    int scale_exp;         /* x, r, z and p are held divided by 2^scale_exp (0 unless r.z left 2^+-200) */
    double threshold;      /* the stopping residual, in the held units */
    hs_pcg_result *res;
    int history_cap;
} pcg_state;

static int record(pcg_state *s, int k, double rnorm)
{
    hs_pcg_result *res = s->res;
    res->final_residual = rnorm;
    if (!s->o->record_history) return HS_OK;
    if (k >= s->history_cap) {
        int cap = s->history_cap * 2 > k + 1 ? s->history_cap * 2 : k + 64;
        double *h = realloc(res->history, sizeof *h * (size_t)cap);
        if (!h) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory for the residual history");
        res->history = h;
        s->history_cap = cap;
    }
    res->history[k] = rnorm;
    return HS_OK;
}

/* z = M^-1 r and the local [r.r, r.z]. */
static int precondition(pcg_state *s, double loc[2])
{
    hs_ctx *ctx = s->A->ctx;
    HS_CHECK(hs_dot(ctx, HS_F64, s->n, s->r, s->r, &loc[0]));
    if (s->z == s->r) {
        loc[1] = loc[0];
        return HS_OK;
    }
    if (s->M->diag_inverse)
        HS_CHECK(hs_pointwise_mult(ctx, HS_F64, s->n, s->M->diag_inverse, s->r, s->z));
    else
        HS_CHECK(s->M->apply(s->M->data, s->r, s->z));
    return hs_dot(ctx, HS_F64, s->n, s->r, s->z, &loc[1]);
}

/* x += alpha p, r -= alpha q, z = M^-1 r, local [r.r, r.z]: one fused pass where the BLAS has one. */
static int update(pcg_state *s, double alpha, double *x, double loc[2])
{
    hs_ctx *ctx = s->A->ctx;
    if (s->M->diag_inverse) {
        /* one pass yields r.z for beta and r.r for the stopping test */
        return hs_pcg_update(ctx, s->n, alpha, s->p, s->q, s->M->diag_inverse, x, s->r, s->z, &loc[1], &loc[0]);
    }
    HS_CHECK(hs_cg_update(ctx, s->n, alpha, s->p, s->q, x, s->r, &loc[0]));
    if (s->z == s->r) {
        loc[1] = loc[0];
        return HS_OK;
    }
    HS_CHECK(s->M->apply(s->M->data, s->r, s->z));
    return hs_dot(ctx, HS_F64, s->n, s->r, s->z, &loc[1]);
}

static int check_rz(double rz, double rnorm, int k)
{
    if (isnan(rnorm)) return HS_FAIL(HS_ERR_RUNTIME, "hs_pcg_solve: the residual is NaN at iteration %d", k);
    if (!(rz > 0))
        return HS_FAIL(HS_ERR_RUNTIME,
                       "hs_pcg_solve: r.z = %.6e <= 0 with ||r|| = %.6e at iteration %d: the preconditioner is not "
                       "symmetric positive definite",
                       rz, rnorm, k);
    return HS_OK;
}

/* The global 2-norm of v as norm x 2^*e where its squares under- or overflow: the dot product of v
 * scaled by 2^-600 or 2^+600 (exact) into the work vector q, the first whose sum of squares is a
 * normal double.  (OpenBLAS's dnrm2 returned inf for entries near 1e158.) */
static int scaled_norm(pcg_state *s, const double *v, double *norm, int *e)
{
    const hs_linop *A = s->A;
    static const int ex[2] = {600, -600};
    for (int t = 0; t < 2; t++) {
        double d = 0;
        /* a copy, then the scaling: q is uninitialised, and 0 q of its NaNs is NaN */
        HS_CHECK(hs_copy(A->ctx, HS_F64, s->n, v, s->q));
        HS_CHECK(hs_scal(A->ctx, HS_F64, s->n, ldexp(1.0, -ex[t]), s->q));
        HS_CHECK(hs_dot(A->ctx, HS_F64, s->n, s->q, s->q, &d));
        HS_CHECK(global_sum(A->comm, &d, 1));
        if (d >= 0x1p-1000 && d <= 0x1p+1000) {
            *norm = sqrt(d), *e = ex[t];
            return HS_OK;
        }
    }
    *e = 0;
    return HS_OK; /* zero, or NaN/Inf in v: *norm keeps the plain figure */
}

/* x, r, z (where it is not r) and p (with_p) divided by 2^e, exactly; r.z and the threshold with
 * them. */
static int rescale(pcg_state *s, double *x, int with_p, int e)
{
    /* 2^-e must be a double: a denormal ||r|| (e down to -1074) made it inf, and p.Ap NaN */
    e = e < -1000 ? -1000 : e > 1000 ? 1000 : e;
    const double c = ldexp(1.0, -e);
    hs_ctx *ctx = s->A->ctx;
    HS_CHECK(hs_scal(ctx, HS_F64, s->n, c, s->r));
    HS_CHECK(hs_scal(ctx, HS_F64, s->n, c, x));
    if (s->z != s->r) HS_CHECK(hs_scal(ctx, HS_F64, s->n, c, s->z));
    if (with_p) HS_CHECK(hs_scal(ctx, HS_F64, s->n, c, s->p));
    s->rz *= c * c;
    s->threshold *= c;
    s->scale_exp += e;
    return HS_OK;
}

/* Hold x, r, z and p in units of a power of two that keeps r.z near 1 when it leaves 2^+-200: r.z and
 * p.Ap are products of two such vectors and a diagonal, and fell below the smallest double (a heat
 * field decayed to 1e-150 under backward Euler, or a conductivity of 1e100, stopped with "r.z = 0 <=
 * 0: not positive definite") or overflowed.  CG's recurrences are homogeneous in that scale (alpha
 * and beta unchanged; r.z scales by its square), and a power of two scales exactly, so the iterates
 * are bitwise those of the unscaled solve wherever it stayed in range.  The exponent to divide by:
 * half r.z's where it is a normal double, +-500 a try where it under- or overflowed (an underflow
 * to 0 says only that it is small); 0 within 2^+-200, or for a negative or NaN r.z (check_rz's). */
static int rz_shift(double rz)
{
    if (!(rz >= 0) || (rz >= 0x1p-200 && rz <= 0x1p+200)) return 0;
    if (rz >= 0x1p-1000 && rz <= 0x1p+1000) return ilogb(rz) / 2;
    return rz < 0x1p-1000 ? -500 : 500;
}

/* The same between iterations, p (the current direction) included. */
static int renormalize(pcg_state *s, double *x)
{
    const int e = rz_shift(s->rz);
    return e ? rescale(s, x, 1, e) : HS_OK;
}

/* Before the first direction: x and r divided by 2^e, z = M^-1 r and r.r, r.z (v[0], v[1]) anew. */
static int rescale_start(pcg_state *s, double *x, int e, double v[3])
{
    HS_CHECK(rescale(s, x, 0, e));
    HS_CHECK(precondition(s, v));
    HS_CHECK(global_sum(s->A->comm, v, 2));
    s->rz = v[1];
    return HS_OK;
}

/* r = b - A x, z = M^-1 r, p = z, and the stopping threshold from ||b||; where the squares under-
 * or overflow, the norms from scaled copies, and x and r held in units of ||r||, then of r.z
 * (rz_shift). */
static int start(pcg_state *s, const double *b, double *x)
{
    const hs_linop *A = s->A;
    double v[3] = {0, 0, 0}; /* r.r, r.z, b.b */
    s->scale_exp = 0;
    HS_CHECK(hs_dot(A->ctx, HS_F64, s->n, b, b, &v[2]));
    HS_CHECK(A->apply(A->data, x, s->r)); /* collective: ranks without rows take part too */
    HS_CHECK(hs_axpby(A->ctx, HS_F64, s->n, 1.0, b, -1.0, s->r));
    HS_CHECK(precondition(s, v));
    HS_CHECK(global_sum(A->comm, v, 3));
    double rnorm = sqrt(v[0]), bnorm = sqrt(v[2]);
    int re = 0, be = 0; /* ||r|| = rnorm 2^re, ||b|| = bnorm 2^be */
    const int normal_rr = v[0] >= 0x1p-1000 && v[0] <= 0x1p+1000, normal_bb = v[2] >= 0x1p-1000 && v[2] <= 0x1p+1000;
    if (!normal_rr) HS_CHECK(scaled_norm(s, s->r, &rnorm, &re));
    if (!normal_bb) HS_CHECK(scaled_norm(s, b, &bnorm, &be));
    s->rz = v[1];
    s->threshold = 0;
    if (!normal_rr && rnorm > 0 && isfinite(rnorm)) HS_CHECK(rescale_start(s, x, ilogb(rnorm) + re, v));
    /* then r.z near 1 (rz_shift; a few tries where it under- or overflowed) */
    int e;
    for (int t = 0; t < 4 && rnorm > 0 && (e = rz_shift(s->rz)) != 0; t++) HS_CHECK(rescale_start(s, x, e, v));
    /* the threshold in the held units, from the norms' mantissas and exponents (rtol ||b|| itself
     * underflowed to 0 for a b of 1e-320: never reached) */
    s->threshold = fmax(ldexp(s->o->rtol * bnorm, be - s->scale_exp), ldexp(s->o->atol, -s->scale_exp));
    const double held = sqrt(v[0]);
    rnorm = ldexp(held, s->scale_exp);
    s->res->initial_residual = rnorm;
    HS_CHECK(record(s, 0, rnorm));
    /* ||b|| or ||r|| overflowing would make any residual look converged */
    if (!isfinite(held) || !isfinite(bnorm) || !isfinite(s->threshold))
        return HS_FAIL(HS_ERR_RUNTIME, "hs_pcg_solve: |b| = %g, |r0| = %g: not finite (NaN or Inf in the system)",
                       ldexp(bnorm, be), rnorm);
    s->res->converged = held <= s->threshold;
    if (s->res->converged) return HS_OK;
    HS_CHECK(check_rz(v[1], rnorm, 0));
    return hs_copy(A->ctx, HS_F64, s->n, s->z, s->p);
}

/* Iteration k: q = A p, step along p, new residual, new direction. */
static int step(pcg_state *s, double *x, int k)
{
    const hs_linop *A = s->A;
    double pq = 0, loc[2] = {0, 0};
    HS_CHECK(renormalize(s, x));
    HS_CHECK(A->apply(A->data, s->p, s->q));
    HS_CHECK(hs_dot(A->ctx, HS_F64, s->n, s->p, s->q, &pq));
    HS_CHECK(global_sum(A->comm, &pq, 1));
    if (!(pq > 0))
        return HS_FAIL(HS_ERR_RUNTIME,
                       "hs_pcg_solve: p.Ap = %.6e <= 0 at iteration %d: the operator is not symmetric positive "
                       "definite",
                       pq, k);
    HS_CHECK(update(s, s->rz / pq, x, loc));
    HS_CHECK(global_sum(A->comm, loc, 2));
    const double held = sqrt(loc[0]), rnorm = ldexp(held, s->scale_exp);
    s->res->iterations = k;
    HS_CHECK(record(s, k, rnorm));
    if (!isfinite(held))
        return HS_FAIL(HS_ERR_RUNTIME, "hs_pcg_solve: the residual norm is %g at iteration %d", rnorm, k);
    /* compared as held: rnorm itself may be a denormal of a few bits */
    s->res->converged = held <= s->threshold;
    if (s->res->converged) return HS_OK;
    HS_CHECK(check_rz(loc[1], rnorm, k));
    double beta = loc[1] / s->rz;
    s->rz = loc[1];
    return hs_axpby(A->ctx, HS_F64, s->n, 1.0, s->z, beta, s->p);
}

static int run(pcg_state *s, const double *b, double *x)
{
    int rc = start(s, b, x);
    for (int k = 1; rc == HS_OK && k <= s->o->max_iter && !s->res->converged; k++) rc = step(s, x, k);
    /* back to the caller's units, in factors a double holds */
    while (s->scale_exp != 0) {
        const int e = s->scale_exp > 1000 ? 1000 : s->scale_exp < -1000 ? -1000 : s->scale_exp;
        const int rc2 = hs_scal(s->A->ctx, HS_F64, s->n, ldexp(1.0, e), x);
        if (rc == HS_OK) rc = rc2;
        s->scale_exp -= e;
    }
    return rc;
}

static int check_args(const hs_linop *A, const double *b, double *x, const hs_pcg_opts *o, hs_pcg_result *res)
{
    const char *fn = "hs_pcg_solve";
    if (!A || !A->ctx || !A->apply) return hs_input_error(fn, 0, "A", "is NULL or has no apply function");
    if (!res) return hs_input_error(fn, 0, "res", "is NULL");
    if (A->n_local < 0) return hs_input_error(fn, 0, "A", "n_local = %lld is negative", (long long)A->n_local);
    if (A->n_local > 0 && (!b || !x)) return hs_input_error(fn, 0, NULL, "b or x is NULL");
    if (!(o->rtol >= 0) || !(o->atol >= 0))
        return hs_input_error(fn, 0, "rtol", "rtol = %g and atol = %g must be >= 0", o->rtol, o->atol);
    if (o->max_iter < 0) return hs_input_error(fn, 0, "max_iter", "%d is negative", o->max_iter);
    return HS_OK;
}

void hs_pcg_workspace_free(hs_pcg_workspace *w)
{
    if (!w || !w->ctx) return;
    hs_mem_free(w->ctx, w->r);
    hs_mem_free(w->ctx, w->z);
    hs_mem_free(w->ctx, w->p);
    hs_mem_free(w->ctx, w->q);
    memset(w, 0, sizeof *w);
}

/* The caller's workspace, grown when too small for this operator. */
static int workspace_ready(hs_pcg_workspace *w, hs_ctx *ctx, size_t n)
{
    if (w->ctx == ctx && w->n >= n && (n == 0 || w->r)) return HS_OK;
    hs_pcg_workspace_free(w);
    w->ctx = ctx;
    w->n = n;
    HS_CHECK(hs_mem_alloc(ctx, n * sizeof(double), (void **)&w->r));
    HS_CHECK(hs_mem_alloc(ctx, n * sizeof(double), (void **)&w->z));
    HS_CHECK(hs_mem_alloc(ctx, n * sizeof(double), (void **)&w->p));
    return hs_mem_alloc(ctx, n * sizeof(double), (void **)&w->q);
}

static int alloc_work(pcg_state *s)
{
    hs_ctx *ctx = s->A->ctx;
    int with_z = s->M->apply || s->M->diag_inverse;
    if (s->o->work) {
        hs_pcg_workspace *w = s->o->work;
        HS_CHECK(workspace_ready(w, ctx, s->n));
        s->r = w->r, s->p = w->p, s->q = w->q, s->z = with_z ? w->z : w->r;
        return HS_OK;
    }
    size_t bytes = s->n * sizeof(double);
    HS_CHECK(hs_mem_alloc(ctx, bytes, (void **)&s->r));
    HS_CHECK(hs_mem_alloc(ctx, bytes, (void **)&s->p));
    HS_CHECK(hs_mem_alloc(ctx, bytes, (void **)&s->q));
    if (with_z) HS_CHECK(hs_mem_alloc(ctx, bytes, (void **)&s->z));
    else s->z = s->r;
    return HS_OK;
}

static void free_work(pcg_state *s)
{
    hs_ctx *ctx = s->A->ctx;
    if (s->o->work) return;
    if (s->z != s->r) hs_mem_free(ctx, s->z);
    hs_mem_free(ctx, s->r);
    hs_mem_free(ctx, s->p);
    hs_mem_free(ctx, s->q);
}

int hs_pcg_solve(const hs_linop *A, const double *b, double *x, const hs_pcg_opts *opts, hs_pcg_result *res)
{
    hs_pcg_opts defaults = hs_pcg_default_opts();
    const hs_pcg_opts *o = opts ? opts : &defaults;
    if (res) memset(res, 0, sizeof *res);
    HS_CHECK(check_args(A, b, x, o, res));
    hs_precond own;
    const hs_precond *M = o->custom;
    if (!M) {
        HS_CHECK(hs_precond_create(A, o->precond, &own));
        M = &own;
    }
    pcg_state s = {A, M, o, (size_t)A->n_local, NULL, NULL, NULL, NULL, 0, 0, 0, res, 0};
    int rc = alloc_work(&s);
    if (rc == HS_OK) rc = run(&s, b, x);
    free_work(&s);
    if (!o->custom) hs_precond_destroy(&own);
    if (rc != HS_OK) hs_pcg_result_free(res);
    return rc == HS_OK ? HS_OK : hs_error_trace(rc, __FILE__, __LINE__, "pcg iteration");
}

void hs_pcg_result_free(hs_pcg_result *res)
{
    if (!res) return;
    free(res->history);
    res->history = NULL;
}
