/* VQE and QAOA: energies, adjoint and parameter-shift gradients, optimisation with kernels/optim. */
#include "solvers/quantum/vqe.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/memory.h"
#include "kernels/nn/optim.h"

struct hs_vqe {
    hs_ctx *ctx;
    hs_circuit *c;
    const hs_pauli_sum *h;
    hs_qureg *psi, *lam, *mu;
    hs_dtype t;
    int64_t evals;
    double *hx, *hg;      /* host copies of x and the gradient */
    double *history;
    int nhist, caphist;
};

hs_circuit *hs_ansatz_hardware_efficient(int n, int layers)
{
    hs_circuit *c = hs_circuit_new(n, 0);
    if (!c) return NULL;
    int k = 0;
    static const double cx[32] = {0, 0, 1, 0, 1, 0, 0, 0};
    for (int l = 0; l <= layers; l++) {
        for (int q = 0; q < n; q++) {
            if (!hs_circuit_rotation(c, HS_QGEN_Y, &q, k++, 1.0)) goto fail;
            if (!hs_circuit_rotation(c, HS_QGEN_Z, &q, k++, 1.0)) goto fail;
        }
        if (l == layers) break;
        for (int q = 0; q + 1 < n; q++) {
            int t = q + 1;
            if (!hs_circuit_gate(c, "cx", 1, &t, 1ull << q, 1ull << q, cx)) goto fail;
        }
    }
    return c;
fail:
    hs_circuit_free(c);
    return NULL;
}

hs_circuit *hs_ansatz_qaoa(int n, int p, int ne, const int *edges, const double *w)
{
    hs_circuit *c = hs_circuit_new(n, 0);
    if (!c) return NULL;
    const double r = M_SQRT1_2, h[8] = {r, 0, r, 0, r, 0, -r, 0};
    for (int q = 0; q < n; q++)
        if (!hs_circuit_gate(c, "h", 1, &q, 0, 0, h)) goto fail;
    for (int l = 0; l < p; l++) {
        for (int e = 0; e < ne; e++)
            if (!hs_circuit_rotation(c, HS_QGEN_ZZ, &edges[2 * e], 2 * l, -w[e])) goto fail;
        for (int q = 0; q < n; q++)
            if (!hs_circuit_rotation(c, HS_QGEN_X, &q, 2 * l + 1, 2.0)) goto fail;
    }
    c->nparams = 2 * p;
    return c;
fail:
    hs_circuit_free(c);
    return NULL;
}

int hs_vqe_local_qubits(const hs_circuit *ansatz, const hs_pauli_sum *h)
{
    int need = 1;
    for (int i = 0; i < ansatz->nops; i++) {
        const hs_qop *op = &ansatz->ops[i];
        int w = op->nt + __builtin_popcountll(op->cmask);
        if (op->kind == HS_QOP_GATE && w > need) need = w;
    }
    for (int k = 0; k < h->nterms; k++)
        if (__builtin_popcountll(h->xm[k]) > need) need = __builtin_popcountll(h->xm[k]);
    return need;
}

int hs_vqe_distributed(const hs_vqe *v) { return hs_qureg_distributed(v->psi); }

int hs_vqe_create(hs_ctx *ctx, hs_circuit *ansatz, const hs_pauli_sum *h, hs_dtype t, int distributed, hs_vqe **out)
{
    if (h->nqubits > ansatz->nqubits)
        return hs_input_error(NULL, 0, NULL, "the observable acts on %d qubits but the ansatz has %d", h->nqubits,
                              ansatz->nqubits);
    hs_vqe *v = calloc(1, sizeof *v);
    if (!v) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    v->ctx = ctx;
    v->c = ansatz;
    v->h = h;
    v->t = t;
    v->hx = calloc((size_t)ansatz->nparams + 1, sizeof(double));
    v->hg = calloc((size_t)ansatz->nparams + 1, sizeof(double));
    int rc = (!v->hx || !v->hg) ? HS_FAIL(HS_ERR_RUNTIME, "out of memory") : HS_OK;
    int g = 0, need = hs_vqe_local_qubits(ansatz, h);
    while ((1 << g) < ctx->size) g++;
    int split = distributed && ctx->size > 1 && (1 << g) == ctx->size && ansatz->nqubits - g >= need;
    hs_qureg **regs[3] = {&v->psi, &v->lam, &v->mu};
    for (int r = 0; r < 3 && rc == HS_OK; r++)
        rc = split ? hs_qureg_create_split(ctx, ansatz->nqubits, t, need, regs[r])
                   : hs_qureg_create(ctx, ansatz->nqubits, t, 0, regs[r]);
    if (rc != HS_OK) {
        hs_vqe_destroy(v);
        return rc;
    }
    *out = v;
    return HS_OK;
}

void hs_vqe_destroy(hs_vqe *v)
{
    if (!v) return;
    hs_qureg_destroy(v->psi);
    hs_qureg_destroy(v->lam);
    hs_qureg_destroy(v->mu);
    free(v->hx);
    free(v->hg);
    free(v->history);
    free(v);
}

int64_t hs_vqe_evaluations(const hs_vqe *v) { return v->evals; }

static int forward(hs_vqe *v, const double *x)
{
    hs_circuit_bind(v->c, x);
    HS_CHECK(hs_qureg_init_basis(v->psi, 0));
    return hs_qureg_run(v->psi, v->c, NULL, NULL);
}

int hs_vqe_state(hs_vqe *v, const double *x, hs_qureg **psi)
{
    HS_CHECK(forward(v, x));
    *psi = v->psi;
    return HS_OK;
}

int hs_vqe_energy(hs_vqe *v, const double *x, double *e)
{
    HS_CHECK(forward(v, x));
    v->evals++;
    return hs_qureg_expect(v->psi, v->h, e);
}

static void dagger(int d, const double *m, double *out)
{
    for (int r = 0; r < d; r++)
        for (int c = 0; c < d; c++) {
            out[2 * (c * d + r)] = m[2 * (r * d + c)];
            out[2 * (c * d + r) + 1] = -m[2 * (r * d + c) + 1];
        }
}

int hs_vqe_gradient_adjoint(hs_vqe *v, const double *x, double *e, double *grad)
{
    HS_CHECK(forward(v, x));
    v->evals++;
    HS_CHECK(hs_qureg_apply_pauli_sum(v->lam, v->psi, v->h));
    double ee[2];
    HS_CHECK(hs_qureg_inner(v->psi, v->lam, ee));
    *e = ee[0];
    memset(grad, 0, (size_t)v->c->nparams * sizeof(double));
    double md[2 * 1024], dm[32];
    for (int i = v->c->nops - 1; i >= 0; i--) {
        const hs_qop *op = &v->c->ops[i];
        if (op->kind != HS_QOP_GATE) continue;
        int d = 1 << op->nt;
        dagger(d, op->m, md);
        HS_CHECK(hs_qureg_apply_matrix(v->psi, op->nt, op->t, op->cmask, op->cval, md));
        if (op->param >= 0) {
            double m[32], ip[2];
            hs_qgen_matrix(op->gen, op->pscale * x[op->param], m, dm);
            HS_CHECK(hs_qureg_copy(v->mu, v->psi));
            HS_CHECK(hs_qureg_apply_matrix(v->mu, op->nt, op->t, op->cmask, op->cval, dm));
            HS_CHECK(hs_qureg_inner(v->lam, v->mu, ip));
            grad[op->param] += 2.0 * op->pscale * ip[0];
        }
        HS_CHECK(hs_qureg_apply_matrix(v->lam, op->nt, op->t, op->cmask, op->cval, md));
    }
    return HS_OK;
}

int hs_vqe_gradient_shift(hs_vqe *v, const double *x, double *grad)
{
    memset(grad, 0, (size_t)v->c->nparams * sizeof(double));
    for (int i = 0; i < v->c->nops; i++) {
        hs_qop *op = &v->c->ops[i];
        if (op->param < 0) continue;
        double a = op->pscale * x[op->param], ep, em;
        for (int s = 0; s < 2; s++) {
            hs_circuit_bind(v->c, x);
            hs_qgen_matrix(op->gen, a + (s ? -M_PI / 2 : M_PI / 2), op->m, NULL);
            HS_CHECK(hs_qureg_init_basis(v->psi, 0));
            HS_CHECK(hs_qureg_run(v->psi, v->c, NULL, NULL));
            v->evals++;
            HS_CHECK(hs_qureg_expect(v->psi, v->h, s ? &em : &ep));
        }
        grad[op->param] += op->pscale * 0.5 * (ep - em);
    }
    hs_circuit_bind(v->c, x);
    return HS_OK;
}

typedef struct {
    hs_vqe *v;
    const hs_vqe_opts *o;
} objective_data;

/* f(x) and its gradient for the optimisers: x and grad are in the context's device memory. */
static int objective(void *data, const double *x, double *f, double *grad)
{
    objective_data *d = data;
    hs_vqe *v = d->v;
    size_t n = (size_t)v->c->nparams, bytes = n * sizeof(double);
    HS_CHECK(hs_mem_copy(v->ctx, v->hx, x, bytes, HS_COPY_D2H));
    if (d->o->shift_gradient) {
        HS_CHECK(hs_vqe_energy(v, v->hx, f));
        HS_CHECK(hs_vqe_gradient_shift(v, v->hx, v->hg));
    } else {
        HS_CHECK(hs_vqe_gradient_adjoint(v, v->hx, f, v->hg));
    }
    return hs_mem_copy(v->ctx, grad, v->hg, bytes, HS_COPY_H2D);
}

static int record(void *data, int iteration, double f)
{
    hs_vqe *v = ((objective_data *)data)->v;
    if (v->nhist == v->caphist) {
        int cap = v->caphist ? 2 * v->caphist : 64;
        double *h = realloc(v->history, (size_t)cap * sizeof *h);
        if (!h) return 1;
        v->history = h;
        v->caphist = cap;
    }
    v->history[v->nhist++] = f;
    const hs_vqe_opts *o = ((objective_data *)data)->o;
    return o->interrupted && o->interrupted(v->ctx) ? 1 : 0;
}

/* The stopping reasons of hs_lbfgs_minimize (kernels/nn/optim.c) as this file's codes. */
static const struct {
    const char *lbfgs, *code;
} g_lbfgs_reasons[] = {
    {"gradient tolerance met", "gradient_tolerance"},
    {"relative decrease below ftol", "energy_change"},
    {"line search found no decrease", "line_search_failed"},
    {"evaluation limit reached", "evaluation_limit"},
    {"iteration limit reached", "iteration_limit"},
    {"stopped by the callback", "interrupted"},
    {"objective not finite at the starting point", "not_finite"},
};

/* Whether x, where the line search found no lower energy, is stationary to round-off: the energy
 * E(x) = e0 is good to about delta = 64 eps ||H|| (||H|| <= sum |c_k|).  Along -g the energy falls
 * by at least |g|^2 / (2 lambda) at the step |g| / lambda, lambda = ||H|| |s|^2 bounding the
 * curvature (|d2E/dx_j dx_k| <= s_j s_k ||H|| for rotations exp(-i s x P / 2)); so (1) that
 * guaranteed decrease must be below delta, and (2) since lambda may overstate the curvature, no step
 * of 1, 4, ..., 4^7 times that one may lower the energy by more than delta either.  g is in v->hg. */
static int stationary_to_roundoff(hs_vqe *v, const double *x, double e0, double g2, int *yes)
{
    int n = v->c->nparams;
    double hnorm = 0, s2 = 0;
    *yes = 0;
    for (int k = 0; k < v->h->nterms; k++) hnorm += fabs(v->h->c[k]);
    double *sc = calloc((size_t)n + 1, sizeof *sc), *xt = calloc((size_t)n + 1, sizeof *xt);
    if (!sc || !xt) {
        free(sc), free(xt);
        return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    }
    for (int i = 0; i < v->c->nops; i++)
        if (v->c->ops[i].param >= 0) sc[v->c->ops[i].param] += fabs(v->c->ops[i].pscale);
    for (int k = 0; k < n; k++) s2 += sc[k] * sc[k];
    double eps = v->t == HS_C64 ? FLT_EPSILON / 2 : DBL_EPSILON / 2, delta = 64 * eps * hnorm, lambda = hnorm * s2;
    int rc = HS_OK, ok = g2 == 0 || (lambda > 0 && g2 * g2 / (2 * lambda) <= delta);
    for (int j = 0; ok && g2 > 0 && j < 8; j++) {
        double t = ldexp(1.0, 2 * j) / lambda, e; /* step t |g| along -g/|g| */
        for (int k = 0; k < n; k++) xt[k] = x[k] - t * v->hg[k];
        if ((rc = hs_vqe_energy(v, xt, &e)) != HS_OK) break;
        if (e < e0 - delta) ok = 0;
    }
    free(sc);
    free(xt);
    *yes = ok;
    return rc;
}

/* Gradient norms at x (adjoint): largest component and 2-norm. */
static int final_gradient(hs_vqe *v, const double *x, double *gmax, double *g2)
{
    double e, ss = 0;
    *gmax = 0;
    HS_CHECK(hs_vqe_gradient_adjoint(v, x, &e, v->hg));
    for (int k = 0; k < v->c->nparams; k++) *gmax = fmax(*gmax, fabs(v->hg[k])), ss += v->hg[k] * v->hg[k];
    *g2 = sqrt(ss);
    return HS_OK;
}

int hs_vqe_minimize(hs_vqe *v, double *x, const hs_vqe_opts *o, hs_vqe_result *r)
{
    size_t n = (size_t)v->c->nparams, bytes = n * sizeof(double);
    double *dx = NULL, *dg = NULL;
    memset(r, 0, sizeof *r);
    v->nhist = 0;
    HS_CHECK(hs_mem_alloc(v->ctx, bytes, (void **)&dx));
    HS_CHECK(hs_mem_alloc(v->ctx, bytes, (void **)&dg));
    HS_CHECK(hs_mem_copy(v->ctx, dx, x, bytes, HS_COPY_H2D));
    objective_data d = {v, o};
    int rc = HS_OK;
    if (o->optimizer == 0) {
        hs_lbfgs_opts lo = {0};
        lo.max_iter = o->max_iter;
        lo.gtol = o->gtol;
        lo.ftol = o->ftol;
        hs_lbfgs_result lr;
        rc = hs_lbfgs_minimize(v->ctx, n, dx, objective, &d, &lo, record, &lr);
        r->iterations = lr.iterations;
        r->gnorm = lr.gnorm;
        r->converged = lr.converged;
        r->reason = lr.reason; /* unknown to the table below: kept as it is */
        for (size_t k = 0; k < sizeof g_lbfgs_reasons / sizeof g_lbfgs_reasons[0]; k++)
            if (lr.reason && !strcmp(lr.reason, g_lbfgs_reasons[k].lbfgs)) r->reason = g_lbfgs_reasons[k].code;
    } else {
        hs_adam *adam = NULL;
        rc = hs_adam_create(v->ctx, n, 0.9, 0.999, 1e-8, &adam);
        double f = 0;
        for (int it = 0; rc == HS_OK && it < o->max_iter; it++) {
            rc = objective(&d, dx, &f, dg);
            if (rc == HS_OK) rc = hs_adam_step(adam, o->lr, dx, dg);
            int stop = record(&d, it, f);
            r->iterations = it + 1;
            if (stop) {
                r->reason = "interrupted";
                break;
            }
            double gmax = 0;
            for (size_t k = 0; k < n; k++) gmax = fmax(gmax, fabs(v->hg[k]));
            r->gnorm = gmax;
            if (gmax <= o->gtol) {
                r->converged = 1;
                break;
            }
        }
        if (!r->reason) r->reason = r->converged ? "gradient_tolerance" : "iteration_limit";
        hs_adam_destroy(adam);
    }
    if (rc == HS_OK) rc = hs_mem_copy(v->ctx, x, dx, bytes, HS_COPY_D2H);
    if (rc == HS_OK) rc = hs_vqe_energy(v, x, &r->energy);
    /* the gradient at the x returned (the optimiser's last one may belong to a trial point) */
    double g2 = 0;
    if (rc == HS_OK) rc = final_gradient(v, x, &r->gnorm, &g2);
    /* a line search that finds no lower energy is convergence when x is stationary to round-off */
    if (rc == HS_OK && r->reason && !strcmp(r->reason, "line_search_failed")) {
        int yes;
        rc = stationary_to_roundoff(v, x, r->energy, g2, &yes);
        if (rc == HS_OK && yes) {
            r->reason = "energy_roundoff";
            r->converged = 1;
        }
    }
    hs_mem_free(v->ctx, dx);
    hs_mem_free(v->ctx, dg);
    r->evaluations = v->evals;
    r->history = v->history;
    r->iterations = v->nhist;
    v->history = NULL;
    v->nhist = v->caphist = 0;
    return rc;
}

/* ---------------------------------------------------------------- exact ground energy */
static void jacobi_min(int n, double *A, double *emin)
{
    for (int sweep = 0; sweep < 100; sweep++) {
        double off = 0;
        for (int p = 0; p < n; p++)
            for (int q = p + 1; q < n; q++) off += A[p * n + q] * A[p * n + q];
        if (off < 1e-30) break;
        for (int p = 0; p < n; p++)
            for (int q = p + 1; q < n; q++) {
                double apq = A[p * n + q];
                if (fabs(apq) < 1e-300) continue;
                double th = (A[q * n + q] - A[p * n + p]) / (2 * apq);
                double t = (th >= 0 ? 1 : -1) / (fabs(th) + sqrt(th * th + 1));
                double c = 1 / sqrt(t * t + 1), s = t * c;
                for (int k = 0; k < n; k++) { /* columns p, q */
                    double akp = A[k * n + p], akq = A[k * n + q];
                    A[k * n + p] = c * akp - s * akq;
                    A[k * n + q] = s * akp + c * akq;
                }
                for (int k = 0; k < n; k++) { /* rows p, q */
                    double apk = A[p * n + k], aqk = A[q * n + k];
                    A[p * n + k] = c * apk - s * aqk;
                    A[q * n + k] = s * apk + c * aqk;
                }
            }
    }
    *emin = A[0];
    for (int i = 1; i < n; i++) *emin = fmin(*emin, A[i * n + i]);
}

int hs_pauli_ground_energy(const hs_pauli_sum *h, int nq, double *e0)
{
    if (nq < 1 || nq > 10 || h->nqubits > nq) return HS_FAIL(HS_ERR_RUNTIME, "exact energy: %d qubits (1..10)", nq);
    int d = 1 << nq, n2 = 2 * d;
    double *A = calloc((size_t)n2 * n2, sizeof *A);
    if (!A) return HS_FAIL(HS_ERR_RUNTIME, "out of memory");
    /* H = Re + i Im acts on (u, v) as [[Re, -Im], [Im, Re]]: same spectrum, each value twice. */
    for (int k = 0; k < h->nterms; k++)
        for (int c = 0; c < d; c++) {
            int r = c ^ (int)h->xm[k];
            double sgn = __builtin_popcountll((uint64_t)c & h->zm[k]) & 1 ? -1.0 : 1.0;
            double v = h->c[k] * sgn, re = 0, im = 0;
            switch (h->ny[k] & 3) {
            case 0: re = v; break;
            case 1: im = v; break;
            case 2: re = -v; break;
            default: im = -v; break;
            }
            A[r * n2 + c] += re;
            A[(r + d) * n2 + c + d] += re;
            A[r * n2 + c + d] -= im;
            A[(r + d) * n2 + c] += im;
        }
    jacobi_min(n2, A, e0);
    free(A);
    return HS_OK;
}
