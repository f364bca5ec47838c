/* Optimisers: Adam (dispatch to the fused update) and L-BFGS with a strong-Wolfe line search,
 * written once on top of the BLAS family so it runs on either backend. */
#include "kernels/nn/optim.h"
#include "kernels/nn/lbfgs.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/blas/blas.h"
#include "kernels/dispatch.h"
#include "kernels/error.h"
#include "kernels/memory.h"
#include "kernels/nn/optim_impl.h"
#include "kernels/reduce/reduce.h"

/* ------------------------------------------------------------------ Adam */

struct hs_adam {
    hs_ctx *ctx;
    size_t n;
    double beta1, beta2, eps;
    double *m, *v; /* device */
    int64_t step;
};

int hs_adam_create(hs_ctx *ctx, size_t n, double beta1, double beta2, double eps, hs_adam **opt)
{
    *opt = NULL;
    if (!(beta1 >= 0 && beta1 < 1) || !(beta2 >= 0 && beta2 < 1) || !(eps > 0))
        return HS_FAIL(HS_ERR_RUNTIME, "hs_adam_create: need 0 <= beta1, beta2 < 1 and eps > 0 (got %g, %g, %g)",
                       beta1, beta2, eps);
    hs_adam *a = calloc(1, sizeof *a);
    if (!a) return HS_FAIL(HS_ERR_RUNTIME, "hs_adam_create: out of host memory");
    a->ctx = ctx, a->n = n, a->beta1 = beta1, a->beta2 = beta2, a->eps = eps;
    int rc = hs_mem_alloc(ctx, n * sizeof(double), (void **)&a->m);
    if (rc == HS_OK) rc = hs_mem_alloc(ctx, n * sizeof(double), (void **)&a->v);
    if (rc == HS_OK && n) rc = hs_mem_zero(ctx, a->m, n * sizeof(double));
    if (rc == HS_OK && n) rc = hs_mem_zero(ctx, a->v, n * sizeof(double));
    if (rc != HS_OK) {
        hs_adam_destroy(a);
        return hs_error_trace(rc, __FILE__, __LINE__, "hs_adam_create");
    }
    *opt = a;
    return HS_OK;
}

int hs_adamw_step(hs_adam *a, double lr, double wd, double gscale, double *x, const double *grad)
{
    a->step++;
    double bc1 = 1.0 - pow(a->beta1, (double)a->step);
    double bc2 = 1.0 - pow(a->beta2, (double)a->step);
    if (a->n == 0) return HS_OK;
    return HS_DISPATCH(a->ctx,
                       hs_adam_update_cpu(a->n, lr, a->beta1, a->beta2, a->eps, bc1, bc2, wd, gscale, x, grad, a->m, a->v),
                       hs_adam_update_cuda(a->ctx->cuda, a->n, lr, a->beta1, a->beta2, a->eps, bc1, bc2, wd, gscale, x,
                                           grad, a->m, a->v));
}

int hs_adam_step(hs_adam *a, double lr, double *x, const double *grad) { return hs_adamw_step(a, lr, 0.0, 1.0, x, grad); }

double hs_lr_at(const hs_lr_plan *p, int64_t k)
{
    double lr = p->lr;
    switch (p->kind) {
    case HS_LR_EXPONENTIAL: lr = p->lr * pow(p->decay, (double)k / (double)p->decay_steps); break;
    case HS_LR_COSINE: {
        double frac = p->total_steps > 0 ? (double)k / (double)p->total_steps : 1.0;
        if (frac > 1.0) frac = 1.0;
        lr = p->lr * (p->decay + (1.0 - p->decay) * 0.5 * (1.0 + cos(M_PI * frac)));
        break;
    }
    default: break;
    }
    if (p->warmup_steps > 0 && k < p->warmup_steps) lr *= (double)(k + 1) / (double)p->warmup_steps;
    return lr;
}

int64_t hs_adam_steps(const hs_adam *a) { return a->step; }

int hs_adam_state(hs_adam *a, double **m, double **v, int64_t **step)
{
    if (m) *m = a->m;
    if (v) *v = a->v;
    if (step) *step = &a->step;
    return HS_OK;
}

void hs_adam_destroy(hs_adam *a)
{
    if (!a) return;
    hs_mem_free(a->ctx, a->m);
    hs_mem_free(a->ctx, a->v);
    free(a);
}

/* ------------------------------------------------------------------ L-BFGS */

enum { LS_MAX_EVALS = 25 };

struct hs_lbfgs {
    hs_ctx *ctx;
    size_t n;
    hs_objective fn;
    void *data;
    hs_lbfgs_opts o;
    /* The vectors live on the host when n is small (host = 1): a few hundred short dots per
     * iteration then cost microseconds instead of a device round trip each; only the evaluation
     * point and its gradient cross (xe, ge).  Otherwise on the device, through the BLAS family. */
    int host;
    double *ux;                  /* the caller's iterate (device) */
    double *x, *g, *d, *xt, *gt; /* iterate, gradient, direction, trial point and gradient */
    double **s, **y;             /* correction pairs, ring buffer */
    double *xe, *ge;             /* host mode: device buffers of the evaluation */
    double *rho, *alpha;         /* host */
    int stored, head;            /* pairs stored; index of the next slot */
    int evals, iter;             /* totals over every hs_lbfgs_run */
    int started, finished, converged, reason; /* f and g are known at x; a stop condition was met */
    double f;
};
typedef struct hs_lbfgs lbfgs;

static const char *const g_reasons[] = {"not started", "gradient tolerance met", "relative decrease below ftol",
                                        "line search found no decrease", "evaluation limit reached",
                                        "iteration limit reached", "stopped by the callback",
                                        "objective not finite at the starting point", "iteration budget of this call used"};
enum { R_NONE, R_GTOL, R_FTOL, R_LINESEARCH, R_EVALS, R_ITERS, R_CALLBACK, R_NONFINITE, R_CHUNK };

enum { HOST_MAX_N = 1 << 16 };

static int vdot(lbfgs *L, const double *a, const double *b, double *r)
{
    if (!L->host) return hs_dot(L->ctx, HS_F64, L->n, a, b, r);
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    size_t i = 0;
    for (; i + 3 < L->n; i += 4) s0 += a[i] * b[i], s1 += a[i + 1] * b[i + 1], s2 += a[i + 2] * b[i + 2], s3 += a[i + 3] * b[i + 3];
    for (; i < L->n; i++) s0 += a[i] * b[i];
    *r = (s0 + s1) + (s2 + s3);
    return HS_OK;
}

static int vaxpy(lbfgs *L, double alpha, const double *x, double *y)
{
    if (!L->host) return hs_axpy(L->ctx, HS_F64, L->n, alpha, x, y);
    for (size_t i = 0; i < L->n; i++) y[i] += alpha * x[i];
    return HS_OK;
}

static int vcopy(lbfgs *L, const double *x, double *y)
{
    if (!L->host) return hs_copy(L->ctx, HS_F64, L->n, x, y);
    if (L->n) memcpy(y, x, L->n * sizeof *y);
    return HS_OK;
}

static int vscal(lbfgs *L, double alpha, double *x)
{
    if (!L->host) return hs_scal(L->ctx, HS_F64, L->n, alpha, x);
    for (size_t i = 0; i < L->n; i++) x[i] *= alpha;
    return HS_OK;
}

static int vnorm_inf(lbfgs *L, const double *x, double *r)
{
    if (!L->host) return hs_norm(L->ctx, HS_F64, 0, L->n, x, r);
    double m = 0;
    for (size_t i = 0; i < L->n; i++) m = fmax(m, fabs(x[i]));
    *r = m;
    return HS_OK;
}

static int vec_alloc(lbfgs *L, double **p)
{
    if (!L->host) return hs_mem_alloc(L->ctx, L->n * sizeof(double), (void **)p);
    *p = calloc(L->n + 1, sizeof(double));
    return *p ? HS_OK : HS_FAIL(HS_ERR_RUNTIME, "hs_lbfgs: out of host memory");
}

static void vec_free(lbfgs *L, double *p)
{
    if (L->host) free(p);
    else hs_mem_free(L->ctx, p);
}

/* Copy a vector to or from host values (checkpoints). */
static int vget(lbfgs *L, double *host, const double *v)
{
    if (L->host) return vcopy(L, v, host);
    return L->n ? hs_mem_copy(L->ctx, host, v, L->n * sizeof(double), HS_COPY_D2H) : HS_OK;
}

static int vset(lbfgs *L, double *v, const double *host)
{
    if (L->host) return vcopy(L, host, v);
    return L->n ? hs_mem_copy(L->ctx, v, host, L->n * sizeof(double), HS_COPY_H2D) : HS_OK;
}

/* f and gradient at the point in xv (the vector space's xt or x); host mode moves it across. */
static int evaluate(lbfgs *L, const double *xv, double *f, double *gv)
{
    if (!L->host) return L->fn(L->data, xv, f, gv);
    size_t b = L->n * sizeof(double);
    if (b) HS_CHECK(hs_mem_copy(L->ctx, L->xe, xv, b, HS_COPY_H2D));
    HS_CHECK(L->fn(L->data, L->xe, f, L->ge));
    if (b) HS_CHECK(hs_mem_copy(L->ctx, gv, L->ge, b, HS_COPY_D2H));
    return HS_OK;
}

/* One point of the line-search function phi(a) = f(x + a d). */
typedef struct { double a, f, dphi; } ls_point;


/* Evaluate phi at step a: xt = x + a d, (ft, gt) = f(xt). */
static int phi(lbfgs *L, double a, ls_point *p)
{
    HS_CHECK(vcopy(L, L->x, L->xt));
    HS_CHECK(vaxpy(L, a, L->d, L->xt));
    HS_CHECK(evaluate(L, L->xt, &p->f, L->gt));
    L->evals++;
    p->a = a;
    HS_CHECK(vdot(L, L->gt, L->d, &p->dphi));
    return HS_OK;
}

/* Minimiser of the cubic through two points with slopes, kept inside [lo, hi] away from the ends;
 * bisection when the cubic has no minimum there (Nocedal & Wright eq. 3.59). */
static double cubic_min(const ls_point *p0, const ls_point *p1, double lo, double hi)
{
    double d1 = p0->dphi + p1->dphi - 3.0 * (p0->f - p1->f) / (p0->a - p1->a);
    double disc = d1 * d1 - p0->dphi * p1->dphi;
    double a = 0.5 * (lo + hi);
    if (disc >= 0 && p0->a != p1->a) {
        double d2 = copysign(sqrt(disc), p1->a - p0->a);
        double den = p1->dphi - p0->dphi + 2.0 * d2;
        if (den != 0) a = p1->a - (p1->a - p0->a) * (p1->dphi + d2 - d1) / den;
    }
    double w = hi - lo, margin = 0.1 * w;
    if (!isfinite(a) || a < lo + margin || a > hi - margin) a = 0.5 * (lo + hi);
    return a;
}

/* Algorithm 3.6: shrink [lo, hi] (lo satisfies sufficient decrease) until strong Wolfe holds.
 * *ok = 1 when the last evaluated point (L->xt, L->gt) is the accepted one. */
static int zoom(lbfgs *L, const ls_point *p0, ls_point lo, ls_point hi, int budget, ls_point *out, int *ok)
{
    *ok = 0;
    for (int k = 0; k < budget; k++) {
        double a_lo = fmin(lo.a, hi.a), a_hi = fmax(lo.a, hi.a);
        if ((a_hi - a_lo) <= 1e-14 * fmax(a_hi, 1e-300)) break;
        ls_point pj;
        HS_CHECK(phi(L, cubic_min(&lo, &hi, a_lo, a_hi), &pj));
        if (!isfinite(pj.f) || pj.f > p0->f + L->o.c1 * pj.a * p0->dphi || pj.f >= lo.f) {
            hi = pj;
        } else {
            if (fabs(pj.dphi) <= -L->o.c2 * p0->dphi) {
                *out = pj, *ok = 1;
                return HS_OK;
            }
            if (pj.dphi * (hi.a - lo.a) >= 0) hi = lo;
            lo = pj;
        }
    }
    /* No strong-Wolfe point within the budget: fall back to the best point with a decrease. */
    *out = lo;
    return HS_OK;
}

/* Algorithm 3.5.  On success (x + a d) is in xt/gt and *out holds a, f and the slope. */
static int line_search(lbfgs *L, const ls_point *p0, double a1, ls_point *out, int *ok)
{
    ls_point prev = *p0, cur;
    *ok = 0;
    int budget = LS_MAX_EVALS;
    for (int i = 1; budget > 0; i++) {
        HS_CHECK(phi(L, a1, &cur));
        budget--;
        if (!isfinite(cur.f) || cur.f > p0->f + L->o.c1 * cur.a * p0->dphi || (i > 1 && cur.f >= prev.f))
            return zoom(L, p0, prev, cur, budget, out, ok);
        if (fabs(cur.dphi) <= -L->o.c2 * p0->dphi) {
            *out = cur, *ok = 1;
            return HS_OK;
        }
        if (cur.dphi >= 0) return zoom(L, p0, cur, prev, budget, out, ok);
        /* Extrapolate: cubic step, kept within [1.1 a, 10 a]. */
        double next = cubic_min(&prev, &cur, cur.a * 1.1, cur.a * 10.0);
        prev = cur;
        a1 = next;
    }
    *out = prev;
    return HS_OK;
}

/* d = -H g by the two-loop recursion (Algorithm 7.4), H0 = gamma I with gamma = s.y / y.y. */
static int two_loop(lbfgs *L)
{
    int m = L->o.history;
    HS_CHECK(vcopy(L, L->g, L->d));
    HS_CHECK(vscal(L, -1.0, L->d));
    for (int k = 0; k < L->stored; k++) {
        int i = (L->head - 1 - k + m) % m;
        double sq;
        HS_CHECK(vdot(L, L->s[i], L->d, &sq));
        L->alpha[i] = L->rho[i] * sq;
        HS_CHECK(vaxpy(L, -L->alpha[i], L->y[i], L->d));
    }
    if (L->stored > 0) {
        int i = (L->head - 1 + m) % m;
        double yy;
        HS_CHECK(vdot(L, L->y[i], L->y[i], &yy));
        HS_CHECK(vscal(L, 1.0 / (L->rho[i] * yy), L->d));
    }
    for (int k = L->stored - 1; k >= 0; k--) {
        int i = (L->head - 1 - k + m) % m;
        double yq;
        HS_CHECK(vdot(L, L->y[i], L->d, &yq));
        HS_CHECK(vaxpy(L, L->alpha[i] - L->rho[i] * yq, L->s[i], L->d));
    }
    return HS_OK;
}

/* Store s = xt - x, y = gt - g when the curvature s.y is safely positive (keeps H positive definite). */
static int push_pair(lbfgs *L)
{
    int i = L->head;
    HS_CHECK(vcopy(L, L->xt, L->s[i]));
    HS_CHECK(vaxpy(L, -1.0, L->x, L->s[i]));
    HS_CHECK(vcopy(L, L->gt, L->y[i]));
    HS_CHECK(vaxpy(L, -1.0, L->g, L->y[i]));
    double sy, yy;
    HS_CHECK(vdot(L, L->s[i], L->y[i], &sy));
    HS_CHECK(vdot(L, L->y[i], L->y[i], &yy));
    if (!(sy > 1e-10 * yy) || !(yy > 0)) return HS_OK;
    L->rho[i] = 1.0 / sy;
    L->head = (L->head + 1) % L->o.history;
    if (L->stored < L->o.history) L->stored++;
    return HS_OK;
}

static void set_defaults(hs_lbfgs_opts *o, const hs_lbfgs_opts *in)
{
    if (in) *o = *in;
    else memset(o, 0, sizeof *o);
    if (o->history <= 0) o->history = 10;
    if (o->max_iter <= 0) o->max_iter = 1000;
    if (o->max_evals <= 0) { /* 1.25 max_iter, in 64 bits: in int it wrapped negative above 1.7e9 iterations and
                              * L-BFGS stopped after one ("evaluation limit reached", exit 0) */
        long long e = (long long)o->max_iter + o->max_iter / 4;
        o->max_evals = e > INT_MAX ? INT_MAX : (int)e;
    }
    if (!(o->c1 > 0)) o->c1 = 1e-4;
    if (!(o->c2 > 0)) o->c2 = 0.9;
}

static void free_work(lbfgs *L)
{
    vec_free(L, L->g), vec_free(L, L->d), vec_free(L, L->xt), vec_free(L, L->gt);
    if (L->host) free(L->x);
    hs_mem_free(L->ctx, L->xe), hs_mem_free(L->ctx, L->ge);
    for (int i = 0; i < L->o.history; i++) {
        if (L->s) vec_free(L, L->s[i]);
        if (L->y) vec_free(L, L->y[i]);
    }
    free(L->s), free(L->y), free(L->rho), free(L->alpha);
}

static int alloc_work(lbfgs *L)
{
    int m = L->o.history;
    L->s = calloc(m, sizeof *L->s), L->y = calloc(m, sizeof *L->y);
    L->rho = calloc(m, sizeof *L->rho), L->alpha = calloc(m, sizeof *L->alpha);
    if (!L->s || !L->y || !L->rho || !L->alpha) return HS_FAIL(HS_ERR_RUNTIME, "hs_lbfgs: out of host memory");
    HS_CHECK(vec_alloc(L, &L->g));
    HS_CHECK(vec_alloc(L, &L->d));
    HS_CHECK(vec_alloc(L, &L->xt));
    HS_CHECK(vec_alloc(L, &L->gt));
    if (L->host) {
        HS_CHECK(vec_alloc(L, &L->x));
        HS_CHECK(hs_mem_alloc(L->ctx, L->n * sizeof(double), (void **)&L->xe));
        HS_CHECK(hs_mem_alloc(L->ctx, L->n * sizeof(double), (void **)&L->ge));
    }
    for (int i = 0; i < m; i++) {
        HS_CHECK(vec_alloc(L, &L->s[i]));
        HS_CHECK(vec_alloc(L, &L->y[i]));
    }
    return HS_OK;
}

/* Record why the run stopped; terminal conditions make later hs_lbfgs_run calls return at once. */
static void stop(lbfgs *L, int reason, int converged, int terminal)
{
    L->reason = reason;
    L->converged = converged;
    L->finished = terminal;
}

/* One L-BFGS iteration from (x, f, g); *stopped when a stop condition was met. */
static int one_iteration(lbfgs *L, int (*callback)(void *, int, double), int *stopped)
{
    ls_point p0 = {0, L->f, 0};
    *stopped = 1;
    HS_CHECK(two_loop(L));
    HS_CHECK(vdot(L, L->g, L->d, &p0.dphi));
    if (!(p0.dphi < 0)) { /* lost descent (round-off in H): restart from steepest descent */
        L->stored = 0, L->head = 0;
        HS_CHECK(two_loop(L));
        HS_CHECK(vdot(L, L->g, L->d, &p0.dphi));
    }
    double a1 = 1.0;
    if (L->stored == 0) { /* unscaled first step: length at most 1 in the inf-norm */
        double dn;
        HS_CHECK(vnorm_inf(L, L->d, &dn));
        a1 = fmin(1.0, 1.0 / dn);
    }
    ls_point acc;
    int ok;
    HS_CHECK(line_search(L, &p0, a1, &acc, &ok));
    if (!ok) {
        if (acc.a == 0 || !(acc.f < p0.f)) {
            stop(L, R_LINESEARCH, 0, 1);
            return HS_OK;
        }
        HS_CHECK(phi(L, acc.a, &acc)); /* bring the fallback point's gradient into gt */
    }
    HS_CHECK(push_pair(L));
    HS_CHECK(vcopy(L, L->xt, L->x));
    HS_CHECK(vcopy(L, L->gt, L->g));
    /* the accepted point is always the last one evaluated: its device copy is in xe */
    if (L->host && L->n) HS_CHECK(hs_mem_copy(L->ctx, L->ux, L->xe, L->n * sizeof(double), HS_COPY_D2D));
    double fold = L->f, gn;
    L->f = acc.f;
    L->iter++;
    HS_CHECK(vnorm_inf(L, L->g, &gn));
    if (callback && callback(L->data, L->iter, acc.f)) return stop(L, R_CALLBACK, 0, 0), HS_OK;
    if (gn <= L->o.gtol) return stop(L, R_GTOL, 1, 1), HS_OK;
    if (fold - acc.f <= L->o.ftol * fmax(fmax(fabs(fold), fabs(acc.f)), 1.0)) return stop(L, R_FTOL, 1, 1), HS_OK;
    if (L->evals >= L->o.max_evals) return stop(L, R_EVALS, 0, 1), HS_OK;
    if (L->iter >= L->o.max_iter) return stop(L, R_ITERS, 0, 1), HS_OK;
    *stopped = 0;
    return HS_OK;
}

static int start(lbfgs *L)
{
    double gn;
    HS_CHECK(evaluate(L, L->x, &L->f, L->g));
    L->evals++;
    L->started = 1;
    HS_CHECK(vnorm_inf(L, L->g, &gn));
    if (!isfinite(L->f)) stop(L, R_NONFINITE, 0, 1);
    else if (gn <= L->o.gtol) stop(L, R_GTOL, 1, 1);
    return HS_OK;
}

static int fill_result(lbfgs *L, hs_lbfgs_result *res)
{
    if (!res) return HS_OK;
    res->iterations = L->iter, res->evaluations = L->evals, res->f = L->f;
    res->converged = L->converged, res->reason = g_reasons[L->reason];
    res->gnorm = 0;
    if (L->started) HS_CHECK(vnorm_inf(L, L->g, &res->gnorm));
    return HS_OK;
}

void hs_lbfgs_footprint(const hs_ctx *ctx, size_t n, const hs_lbfgs_opts *opts, double *device, double *host)
{
    hs_lbfgs_opts o;
    set_defaults(&o, opts);
    const int on_host = n <= HOST_MAX_N && !o.device_vectors; /* as hs_lbfgs_create decides */
    const double vec = on_host ? hs_host_footprint((double)(n + 1) * sizeof(double)) : hs_mem_footprint(ctx, (double)n * sizeof(double));
    const double nvec = 4 + 2.0 * o.history + on_host; /* g, d, xt, gt, the pairs, and x when on the host */
    *host += 4 * hs_host_footprint((double)o.history * sizeof(double *)) + hs_host_footprint(sizeof(lbfgs));
    if (on_host) *host += nvec * vec, *device += 2 * hs_mem_footprint(ctx, (double)n * sizeof(double)); /* xe, ge */
    else *device += nvec * vec;
}

size_t hs_lbfgs_state_count_for(size_t n, const hs_lbfgs_opts *opts)
{
    hs_lbfgs_opts o;
    set_defaults(&o, opts);
    return 9 + n + (size_t)o.history + 2 * (size_t)o.history * n;
}

int hs_lbfgs_create(hs_ctx *ctx, size_t n, hs_objective f, void *data, const hs_lbfgs_opts *opts, hs_lbfgs **out)
{
    *out = NULL;
    hs_lbfgs_opts o;
    set_defaults(&o, opts);
    if (!f) return HS_FAIL(HS_ERR_RUNTIME, "hs_lbfgs_create: an objective is required");
    if (!(o.c1 < o.c2 && o.c2 < 1))
        return HS_FAIL(HS_ERR_RUNTIME, "hs_lbfgs_create: need 0 < c1 < c2 < 1 (got %g, %g)", o.c1, o.c2);
    lbfgs *L = calloc(1, sizeof *L);
    if (!L) return HS_FAIL(HS_ERR_RUNTIME, "hs_lbfgs_create: out of host memory");
    L->ctx = ctx, L->n = n, L->fn = f, L->data = data, L->o = o;
    L->host = n <= HOST_MAX_N && !o.device_vectors;
    int rc = alloc_work(L);
    if (rc != HS_OK) {
        hs_lbfgs_destroy(L);
        return hs_error_trace(rc, __FILE__, __LINE__, "hs_lbfgs_create");
    }
    *out = L;
    return HS_OK;
}

void hs_lbfgs_destroy(hs_lbfgs *L)
{
    if (!L) return;
    free_work(L);
    free(L);
}

int hs_lbfgs_run(hs_lbfgs *L, double *x, int iterations, int (*callback)(void *data, int iteration, double f),
                 hs_lbfgs_result *result)
{
    if (L->n > 0 && !x) return HS_FAIL(HS_ERR_RUNTIME, "hs_lbfgs_run: x is required");
    L->ux = x;
    if (L->host) { /* the caller may have set x (a restart): take it as the iterate */
        if (L->n) HS_CHECK(hs_mem_copy(L->ctx, L->x, x, L->n * sizeof(double), HS_COPY_D2H));
    } else {
        L->x = x;
    }
    if (!L->finished && !L->started) HS_CHECK(start(L)); /* an interrupted start stays unstarted */
    for (int k = 0; k < iterations && !L->finished; k++) {
        int stopped;
        /* an objective interrupted (HS_ERR_SIGNAL) abandons the iteration: back to its start */
        const int evals = L->evals, stored = L->stored, head = L->head;
        int rc = one_iteration(L, callback, &stopped);
        if (rc == HS_ERR_SIGNAL) {
            L->evals = evals, L->stored = stored, L->head = head;
            return HS_ERR_SIGNAL;
        }
        HS_CHECK(rc);
        if (stopped) break;
        if (k == iterations - 1) stop(L, R_CHUNK, 0, 0);
    }
    return fill_result(L, result);
}

int hs_lbfgs_finished(const hs_lbfgs *L) { return L->finished; }

/* Checkpoint layout (doubles): 9 counters, g, rho, then the stored pairs s and y. */
size_t hs_lbfgs_state_count(const hs_lbfgs *L) { return hs_lbfgs_state_count_for(L->n, &L->o); }

int hs_lbfgs_save(hs_lbfgs *L, double *host)
{
    double hdr[9] = {L->started, L->finished, L->converged, L->reason, L->stored, L->head, L->evals, L->iter, L->f};
    size_t n = L->n, m = (size_t)L->o.history;
    memcpy(host, hdr, sizeof hdr);
    double *p = host + 9;
    HS_CHECK(vget(L, p, L->g));
    memcpy(p + n, L->rho, m * sizeof(double));
    p += n + m;
    for (size_t i = 0; i < m && n; i++) {
        HS_CHECK(vget(L, p + (2 * i) * n, L->s[i]));
        HS_CHECK(vget(L, p + (2 * i + 1) * n, L->y[i]));
    }
    return HS_OK;
}

int hs_lbfgs_load(hs_lbfgs *L, const double *host)
{
    size_t n = L->n, m = (size_t)L->o.history;
    L->started = (int)host[0], L->finished = (int)host[1], L->converged = (int)host[2], L->reason = (int)host[3];
    L->stored = (int)host[4], L->head = (int)host[5], L->evals = (int)host[6], L->iter = (int)host[7], L->f = host[8];
    if (L->reason < 0 || L->reason > R_CHUNK || L->stored < 0 || L->stored > (int)m || L->head < 0 || L->head >= (int)m)
        return HS_FAIL(HS_ERR_RUNTIME, "hs_lbfgs_load: inconsistent optimiser state");
    const double *p = host + 9;
    HS_CHECK(vset(L, L->g, p));
    memcpy(L->rho, p + n, m * sizeof(double));
    p += n + m;
    for (size_t i = 0; i < m && n; i++) {
        HS_CHECK(vset(L, L->s[i], p + (2 * i) * n));
        HS_CHECK(vset(L, L->y[i], p + (2 * i + 1) * n));
    }
    return HS_OK;
}

int hs_lbfgs_minimize(hs_ctx *ctx, size_t n, double *x, hs_objective f, void *data, const hs_lbfgs_opts *opts,
                      int (*callback)(void *data, int iteration, double f), hs_lbfgs_result *result)
{
    hs_lbfgs *L = NULL;
    if (result) *result = (hs_lbfgs_result){0, 0, 0.0, 0.0, 0, g_reasons[R_NONE]};
    if (n > 0 && !x) return HS_FAIL(HS_ERR_RUNTIME, "hs_lbfgs_minimize: x is required");
    HS_CHECK(hs_lbfgs_create(ctx, n, f, data, opts, &L));
    int rc = hs_lbfgs_run(L, x, L->o.max_iter, callback, result);
    hs_lbfgs_destroy(L);
    if (rc != HS_OK) return hs_error_trace(rc, __FILE__, __LINE__, "hs_lbfgs_minimize");
    return HS_OK;
}
