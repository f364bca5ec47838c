/* Geometric multigrid: the hierarchy (aligned coarse decompositions, gathered levels, the dense coarse inverse), the V-cycle, and CG with it. */
#include "kernels/mg/mg.h"
#include "kernels/dispatch.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/blas/blas.h"
#include "kernels/memory.h"
#include "kernels/mg/mg_impl.h"
#include "kernels/reduce/reduce.h"

#define MAX_DEGREE 16
#define MAX_COARSE_DEGREE 200

typedef struct level {
    hs_ctx *ctx;              /* the caller's, or the self context on gathered levels */
    hs_decomp *d;
    int own_d;
    int gathered;             /* this grid is the previous level's, gathered onto every rank */
    int halve[3];             /* the dimensions halved from the previous level */
    double dx[3], idx2[3];
    int wall_lo[3], wall_hi[3];
    int64_t nloc, nglob;
    hs_field *u[2];           /* the iterate and its Chebyshev partner (halo 1) */
    int cur;                  /* which of u holds the iterate */
    hs_field *r;              /* residual to restrict (halo 2, corners), on levels followed by a halved one */
    const double *b;          /* right-hand side: the preconditioner's input on level 0, bown below */
    double bshift;            /* added to b (level 0 of a singular problem: minus the input's mean) */
    double *bown, *dvec, *tmp;/* contiguous: right-hand side, Chebyshev direction, work */
    double *ainv;             /* coarsest: dense inverse (device, nglob^2), or NULL for Chebyshev */
    int coarse_degree;
    double cc1[MAX_COARSE_DEGREE], cc2[MAX_COARSE_DEGREE];
} level;

struct hs_mg {
    hs_ctx *ctx;
    hs_ctx self;              /* the same device on MPI_COMM_SELF: gathered levels */
    int ndim, singular;
    hs_mg_opts o;
    double c1[MAX_DEGREE], c2[MAX_DEGREE];
    int nlev;
    level lv[HS_MG_MAX_LEVELS];
    int gather_at;            /* index of the first gathered level, 0 when none */
    int64_t (*box)[6];        /* per rank: offset and local size on the level before it */
    int64_t maxloc;
    double *h_send, *h_recv, *h_glob;
    double *rhs;              /* hs_mg_solve: -(f - mean) */
    hs_pcg_workspace ws;
    hs_linop op;
    hs_precond pc;
    char summary[400];
};

hs_mg_opts hs_mg_default_opts(void)
{
    hs_mg_opts o = {2, 4.0, 256, 1e-10, 500};
    return o;
}

/* ------------------------------------------------------------------ launches */

static hs_mg_lay lay_of(const hs_field *f, int ndim)
{
    hs_mg_lay l;
    l.origin = (int64_t)hs_field_index(f, 0, 0, 0);
    l.sy = ndim > 1 ? hs_field_stride_y(f) : 0;
    l.sz = ndim > 2 ? hs_field_stride_z(f) : 0;
    return l;
}

/* A launch over the local cells of level L. */
static hs_mg_launch launch_of(const hs_mg *mg, const level *L, int op)
{
    hs_mg_launch K;
    memset(&K, 0, sizeof K);
    K.op = op;
    K.ndim = mg->ndim;
    K.scale = 1.0;
    for (int e = 0; e < 3; e++) {
        K.n[e] = L->d->local[e];
        K.idx2[e] = L->idx2[e];
        K.wall_lo[e] = L->wall_lo[e];
        K.wall_hi[e] = L->wall_hi[e];
    }
    return K;
}

/* A halo exchange of a field of level L, skipped where no dimension exchanges (one rank, no
 * periodic dimension: walls are inside the stencil), which spares the GPU its stream handshakes. */
static int exchange(const level *L, hs_field *f)
{
    const hs_decomp *d = L->d;
    for (int e = 0; e < d->ndim; e++)
        if (d->procs[e] > 1 || d->periodic[e]) return hs_halo_exchange(f);
    return HS_OK;
}

static int run(const level *L, const hs_mg_launch *K)
{
    return HS_DISPATCH(L->ctx, hs_mg_launch_cpu(K), hs_mg_launch_cuda(L->ctx->cuda, K));
}

/* out = scale * x + shift over the level's contiguous cells (out may be x). */
static int shift_c(const hs_mg *mg, const level *L, const double *x, double scale, double shift, double *out)
{
    hs_mg_launch K = launch_of(mg, L, HS_MG_SHIFT_C);
    K.b = x, K.scale = scale, K.shift = shift, K.out = out;
    return run(L, &K);
}

/* Sum over all ranks of a contiguous array of level 0. */
static int sum_c(hs_mg *mg, const double *x, double *s)
{
    level *L = &mg->lv[0];
    HS_CHECK(hs_reduce(L->ctx, HS_F64, HS_REDUCE_SUM, (size_t)L->nloc, x, s));
    return hs_allreduce_sum(L->d->cart, s, 1);
}

/* ------------------------------------------------------------------ the cycle */

/* Chebyshev coefficients of `degree` steps on [lo, hi] (Saad, Iterative Methods, Alg. 12.1, with
 * the Jacobi scaling inside the kernel): d = c1[s] d + c2[s] D^-1 r, x += d. */
static void chebyshev(int degree, double lo, double hi, double *c1, double *c2)
{
    double theta = 0.5 * (hi + lo), delta = 0.5 * (hi - lo), sigma = theta / delta, rho = 1.0 / sigma;
    c1[0] = 0.0, c2[0] = 1.0 / theta;
    for (int k = 1; k < degree; k++) {
        double rn = 1.0 / (2.0 * sigma - rho);
        c1[k] = rn * rho;
        c2[k] = 2.0 * rn / delta;
        rho = rn;
    }
}

/* `steps` Chebyshev steps on level L, from u = 0 when from_zero (the first then needs no halo). */
static int smooth(const hs_mg *mg, level *L, int from_zero, int steps, const double *c1, const double *c2)
{
    for (int s = 0; s < steps; s++) {
        hs_field *u = L->u[L->cur], *v = L->u[1 - L->cur];
        int zero = from_zero && s == 0;
        if (!zero) HS_CHECK(exchange(L, u));
        hs_mg_launch K = launch_of(mg, L, HS_MG_CHEB);
        K.u = zero ? NULL : (const double *)u->data;
        K.lu = lay_of(u, mg->ndim);
        K.u_out = v->data;
        K.lo = lay_of(v, mg->ndim);
        K.b = L->b, K.bshift = L->bshift, K.d = L->dvec;
        K.c1 = c1[s], K.c2 = c2[s];
        HS_CHECK(run(L, &K));
        L->cur ^= 1;
    }
    return HS_OK;
}

static int coarse_solve(hs_mg *mg, level *L)
{
    if (!L->ainv) return smooth(mg, L, 1, L->coarse_degree, L->cc1, L->cc2);
    const double *b = L->b;
    if (L->bshift != 0.0) {
        HS_CHECK(shift_c(mg, L, b, 1.0, L->bshift, L->dvec));
        b = L->dvec;
    }
    int n = (int)L->nglob;
    HS_CHECK(hs_gemm(L->ctx, HS_F64, 0, 0, n, 1, n, 1.0, L->ainv, n, b, n, 0.0, L->tmp, n));
    return hs_field_load_interior(L->u[L->cur], L->tmp);
}

/* The residual of the last distributed level (in its tmp) onto every rank as the gathered level's b. */
static int gather_down(hs_mg *mg, level *L, level *C)
{
    const int64_t *g = C->d->global;
    HS_CHECK(hs_mem_copy(L->ctx, mg->h_send, L->tmp, (size_t)L->nloc * sizeof(double), HS_COPY_D2H));
    HS_CHECK(hs_host_allgather(L->ctx->comm, HS_F64, mg->h_send, mg->h_recv, (size_t)mg->maxloc));
    for (int r = 0; r < L->ctx->size; r++) {
        const int64_t *o = mg->box[r], *n = mg->box[r] + 3;
        const double *src = mg->h_recv + (size_t)r * (size_t)mg->maxloc;
        for (int64_t k = 0; k < n[2]; k++)
            for (int64_t j = 0; j < n[1]; j++)
                memcpy(mg->h_glob + ((o[2] + k) * g[1] + o[1] + j) * g[0] + o[0], src + (k * n[1] + j) * n[0],
                       (size_t)n[0] * sizeof(double));
    }
    return hs_mem_copy(C->ctx, C->bown, mg->h_glob, (size_t)C->nglob * sizeof(double), HS_COPY_H2D);
}

/* This rank's part of the gathered level's correction, added to the distributed level's iterate. */
static int gather_up(hs_mg *mg, level *L, level *C)
{
    const int64_t *g = C->d->global, *o = mg->box[L->ctx->rank], *n = mg->box[L->ctx->rank] + 3;
    hs_field *uc = C->u[C->cur];
    hs_mg_launch K = launch_of(mg, C, HS_MG_STORE);
    K.u = uc->data, K.lu = lay_of(uc, mg->ndim), K.out = C->tmp;
    HS_CHECK(run(C, &K));
    HS_CHECK(hs_mem_copy(C->ctx, mg->h_glob, C->tmp, (size_t)C->nglob * sizeof(double), HS_COPY_D2H));
    for (int64_t k = 0; k < n[2]; k++)
        for (int64_t j = 0; j < n[1]; j++)
            memcpy(mg->h_send + (k * n[1] + j) * n[0], mg->h_glob + ((o[2] + k) * g[1] + o[1] + j) * g[0] + o[0],
                   (size_t)n[0] * sizeof(double));
    HS_CHECK(hs_mem_copy(L->ctx, L->tmp, mg->h_send, (size_t)L->nloc * sizeof(double), HS_COPY_H2D));
    hs_field *u = L->u[L->cur];
    K = launch_of(mg, L, HS_MG_ADD);
    K.u_out = u->data, K.lo = lay_of(u, mg->ndim), K.b = L->tmp;
    return run(L, &K);
}

/* b of level l + 1 from the residual of level l (whose iterate is u, NULL for zero). */
static int restrict_down(hs_mg *mg, level *L, level *C, hs_field *u)
{
    hs_mg_launch K = launch_of(mg, L, C->gathered ? HS_MG_RESIDUAL_C : HS_MG_RESIDUAL);
    K.u = u ? (const double *)u->data : NULL;
    K.lu = lay_of(L->u[0], mg->ndim);
    K.b = L->b, K.bshift = L->bshift;
    if (C->gathered) {
        K.out = L->tmp;
        HS_CHECK(run(L, &K));
        HS_CHECK(gather_down(mg, L, C));
    } else {
        K.r = L->r->data, K.lr = lay_of(L->r, mg->ndim);
        HS_CHECK(run(L, &K));
        HS_CHECK(exchange(L, L->r));
        /* walls: inside the transfer (the coarse and fine boxes touch the same walls) */
        hs_mg_launch R = launch_of(mg, C, HS_MG_RESTRICT);
        R.r = L->r->data, R.lr = lay_of(L->r, mg->ndim), R.out = C->bown;
        for (int e = 0; e < 3; e++)
            R.halve[e] = C->halve[e], R.off_f[e] = L->d->offset[e], R.off_c[e] = C->d->offset[e], R.nt[e] = L->d->local[e];
        HS_CHECK(run(C, &R));
    }
    C->b = C->bown;
    C->bshift = 0.0;
    return HS_OK;
}

/* Level l's iterate (+)= the prolonged correction of level l + 1. */
static int prolong_up(hs_mg *mg, level *L, level *C, int accumulate)
{
    if (C->gathered) return gather_up(mg, L, C);
    hs_field *uc = C->u[C->cur], *u = L->u[L->cur];
    HS_CHECK(hs_field_set_corners(uc, 1));
    int rc = exchange(C, uc);
    HS_CHECK(hs_field_set_corners(uc, 0));
    HS_CHECK(rc);
    hs_mg_launch K = launch_of(mg, L, HS_MG_PROLONG);
    K.uc = uc->data, K.lc = lay_of(uc, mg->ndim);
    K.u_out = u->data, K.lo = lay_of(u, mg->ndim);
    K.accumulate = accumulate;
    for (int e = 0; e < 3; e++)
        K.halve[e] = C->halve[e], K.off_f[e] = L->d->offset[e], K.off_c[e] = C->d->offset[e], K.nt[e] = C->d->local[e];
    return run(L, &K);
}

/* One V-cycle from zero on level l: its b in, its iterate in u[cur] out. */
static int vcycle(hs_mg *mg, int l)
{
    level *L = &mg->lv[l];
    if (l == mg->nlev - 1) return coarse_solve(mg, L);
    level *C = &mg->lv[l + 1];
    /* a gathered copy only passes its right-hand side on (it is the level above, on every rank) */
    const int smooths = !L->gathered;
    hs_field *u = NULL;
    if (smooths) {
        HS_CHECK(smooth(mg, L, 1, mg->o.degree, mg->c1, mg->c2));
        u = L->u[L->cur];
        HS_CHECK(exchange(L, u));
    }
    HS_CHECK(restrict_down(mg, L, C, u));
    HS_CHECK(vcycle(mg, l + 1));
    HS_CHECK(prolong_up(mg, L, C, smooths));
    if (smooths) HS_CHECK(smooth(mg, L, 0, mg->o.degree, mg->c1, mg->c2));
    return HS_OK;
}

/* z = M r: the V-cycle, with the means removed when A is singular. */
static int precond_apply(void *data, const double *r, double *z)
{
    hs_mg *mg = data;
    level *L = &mg->lv[0];
    L->b = r;
    L->bshift = 0.0;
    if (mg->singular) {
        double s = 0.0;
        HS_CHECK(sum_c(mg, r, &s));
        L->bshift = -s / (double)L->nglob;
    }
    HS_CHECK(vcycle(mg, 0));
    hs_field *u = L->u[L->cur];
    hs_mg_launch K = launch_of(mg, L, HS_MG_STORE);
    K.u = u->data, K.lu = lay_of(u, mg->ndim), K.out = z;
    if (mg->singular) {
        double m = 0.0;
        HS_CHECK(hs_field_sum(u, &m));
        K.shift = -m / (double)L->nglob;
    }
    return run(L, &K);
}

/* out = scale * A x on level 0 (through the field u[1], free outside a cycle). */
static int apply_scaled(hs_mg *mg, const double *x, double scale, double *out)
{
    level *L = &mg->lv[0];
    hs_field *f = L->u[1];
    HS_CHECK(hs_field_load_interior(f, x));
    HS_CHECK(exchange(L, f));
    hs_mg_launch K = launch_of(mg, L, HS_MG_APPLY);
    K.u = f->data, K.lu = lay_of(f, mg->ndim), K.out = out, K.scale = scale;
    return run(L, &K);
}

static int op_apply(void *data, const double *x, double *y) { return apply_scaled(data, x, 1.0, y); }

/* ------------------------------------------------------------------ public */

int hs_mg_apply(hs_mg *mg, const double *p, double *Lp)
{
    if (!mg) return hs_input_error("multigrid", 0, NULL, "multigrid is NULL");
    if (mg->lv[0].nloc > 0 && (!p || !Lp)) return hs_input_error("multigrid", 0, NULL, "input or output array is NULL");
    return apply_scaled(mg, p, -1.0, Lp);
}

hs_linop hs_mg_linop(hs_mg *mg) { return mg->op; }

const hs_precond *hs_mg_precond(hs_mg *mg) { return &mg->pc; }

const char *hs_mg_summary(const hs_mg *mg) { return mg->summary; }

int hs_mg_levels(const hs_mg *mg) { return mg->nlev; }

void hs_mg_level_size(const hs_mg *mg, int l, int64_t n[3])
{
    for (int e = 0; e < 3; e++) n[e] = l >= 0 && l < mg->nlev ? mg->lv[l].d->global[e] : 0;
}

int hs_mg_solve(hs_mg *mg, const double *f, double *p, int guess, double *f_mean, hs_mg_stats *stats)
{
    if (stats) memset(stats, 0, sizeof *stats);
    if (f_mean) *f_mean = 0.0;
    if (!mg) return hs_input_error("multigrid", 0, NULL, "multigrid is NULL");
    level *L = &mg->lv[0];
    if (L->nloc > 0 && (!f || !p)) return hs_input_error("multigrid", 0, NULL, "right-hand side or solution array is NULL");
    if (L->nloc > 0 && f == p) return hs_input_error("multigrid", 0, NULL, "p and f must be different arrays");
    double mean = 0.0;
    if (mg->singular) {
        HS_CHECK(sum_c(mg, f, &mean));
        mean /= (double)L->nglob;
    }
    if (f_mean) *f_mean = mean;
    /* A = -L, so A p = -(f - mean) */
    HS_CHECK(shift_c(mg, L, f, -1.0, mean, mg->rhs));
    if (!guess) HS_CHECK(hs_fill(L->ctx, HS_F64, (size_t)L->nloc, 0.0, p));
    hs_pcg_opts o = hs_pcg_default_opts();
    o.rtol = mg->o.rtol, o.atol = 0.0, o.max_iter = mg->o.max_iter;
    o.custom = &mg->pc, o.work = &mg->ws;
    hs_pcg_result res;
    HS_CHECK(hs_pcg_solve(&mg->op, mg->rhs, p, &o, &res));
    if (mg->singular) {
        double m = 0.0;
        HS_CHECK(sum_c(mg, p, &m));
        HS_CHECK(shift_c(mg, L, p, 1.0, -m / (double)L->nglob, p));
    }
    if (stats) {
        double bn = 0.0; /* ||b||: CG's threshold is relative to it, and from a guess r0 != b */
        HS_CHECK(hs_dot(L->ctx, HS_F64, (size_t)L->nloc, mg->rhs, mg->rhs, &bn));
        HS_CHECK(hs_allreduce_sum(L->d->cart, &bn, 1));
        stats->iterations = res.iterations;
        stats->converged = res.converged;
        stats->residual = bn > 0 ? res.final_residual / sqrt(bn) : 0.0;
    }
    hs_pcg_result_free(&res);
    return HS_OK;
}

/* ------------------------------------------------------------------ planning */

static int check_args(const hs_decomp *d, const hs_bc_kind bc[3][2], const double dx[3], const hs_mg_opts *o)
{
    static const char axis[] = "xyz";
    if (!d) return hs_input_error("multigrid", 0, NULL, "decomposition is NULL");
    if (!bc || !dx) return hs_input_error("multigrid", 0, NULL, "boundary kinds or spacings are NULL");
    for (int k = 0; k < d->ndim; k++) {
        for (int s = 0; s < 2; s++)
            if (bc[k][s] != HS_BC_PERIODIC && bc[k][s] != HS_BC_NEUMANN && bc[k][s] != HS_BC_DIRICHLET)
                return hs_input_error("multigrid", 0, "bc", "%c %s face: boundary kind %d is not periodic, Neumann or "
                                      "Dirichlet", axis[k], s ? "high" : "low", (int)bc[k][s]);
        int per0 = bc[k][0] == HS_BC_PERIODIC, per1 = bc[k][1] == HS_BC_PERIODIC;
        if (per0 != per1)
            return hs_input_error("multigrid", 0, "bc", "%c: periodic on one face only; periodic takes both faces", axis[k]);
        if (per0 != (d->periodic[k] != 0))
            return hs_input_error("multigrid", 0, "bc", "%c: %s boundaries on a decomposition that is %speriodic there "
                                  "(make the two agree)", axis[k], per0 ? "periodic" : "non-periodic",
                                  d->periodic[k] ? "" : "not ");
        if (!(dx[k] > 0.0) || !isfinite(dx[k]))
            return hs_input_error("multigrid", 0, "dx", "spacing in %c must be positive and finite, not %g", axis[k], dx[k]);
    }
    if (o->degree < 1 || o->degree > MAX_DEGREE)
        return hs_input_error("multigrid", 0, "degree", "%d is not in [1, %d]", o->degree, MAX_DEGREE);
    if (!(o->smooth_ratio > 1.0) || !isfinite(o->smooth_ratio))
        return hs_input_error("multigrid", 0, "smooth_ratio", "%g must be above 1", o->smooth_ratio);
    if (o->coarse_cells < 1 || o->coarse_cells > HS_MG_DENSE_MAX)
        return hs_input_error("multigrid", 0, "coarse_cells", "%lld is not in [1, %d]", (long long)o->coarse_cells,
                              HS_MG_DENSE_MAX);
    if (!(o->rtol >= 0.0) || o->max_iter < 0)
        return hs_input_error("multigrid", 0, "rtol", "rtol = %g and max_iter = %d must be >= 0", o->rtol, o->max_iter);
    return HS_OK;
}

static int64_t cells_of(const hs_decomp *d) { return d->global[0] * d->global[1] * d->global[2]; }

/* The dimensions to halve from level L (the ones whose spacing is below twice the smallest, so that
 * stretched cells become square before the others coarsen); 0 when none can be (an odd count among
 * them: halving the others would leave the smoother a strong anisotropy). */
static int choose_halving(const hs_mg *mg, const level *L, int halve[3])
{
    const hs_decomp *d = L->d;
    double hmin = HUGE_VAL;
    for (int e = 0; e < mg->ndim; e++)
        if (d->global[e] > 1) hmin = fmin(hmin, L->dx[e]);
    int any = 0;
    for (int e = 0; e < 3; e++) {
        halve[e] = e < mg->ndim && d->global[e] > 1 && L->dx[e] < 2.0 * hmin;
        if (halve[e] && d->global[e] % 2) return 0;
        any |= halve[e];
    }
    return any;
}

/* Whether level L can restrict to the halving `halve` on its ranks: a residual with a 2-cell halo
 * (each rank owns 2 cells where it exchanges) and every coarse box non-empty.  The coarse boxes
 * (the first-child rule) go to starts[e] (procs[e] + 1 entries each). */
static int fits_ranks(const level *L, const int halve[3], int64_t *starts[3])
{
    const hs_decomp *d = L->d;
    int ok = 1;
    for (int e = 0; e < 3; e++) {
        int P = d->procs[e], exchanges = P > 1 || d->periodic[e];
        hs_decomp_starts(d, e, starts[e]);
        for (int c = 0; c < P; c++)
            if (exchanges && e < d->ndim && starts[e][c + 1] - starts[e][c] < 2) ok = 0;
        if (!halve[e]) continue;
        for (int c = 0; c <= P; c++) starts[e][c] = (starts[e][c] + 1) / 2;
        for (int c = 0; c < P; c++)
            if (starts[e][c + 1] <= starts[e][c]) ok = 0;
    }
    return ok;
}

/* The next level's slot, NULL beyond HS_MG_MAX_LEVELS. */
static level *add_level(hs_mg *mg)
{
    if (mg->nlev >= HS_MG_MAX_LEVELS) {
        HS_FAIL(HS_ERR_RUNTIME, "multigrid: more than %d levels", HS_MG_MAX_LEVELS);
        return NULL;
    }
    return &mg->lv[mg->nlev++];
}

/* The next level: L halved on the same ranks (aligned boxes). */
static int add_halved(hs_mg *mg, const level *L, const int halve[3], int64_t *const starts[3])
{
    level *C = add_level(mg);
    if (!C) return HS_ERR_RUNTIME;
    const hs_decomp *d = L->d;
    int64_t global[3];
    for (int e = 0; e < 3; e++) {
        C->halve[e] = halve[e];
        global[e] = halve[e] ? d->global[e] / 2 : d->global[e];
        C->dx[e] = halve[e] ? 2.0 * L->dx[e] : L->dx[e];
    }
    C->ctx = L->ctx;
    C->own_d = 1;
    return hs_decomp_create_split(L->ctx, mg->ndim, global, d->periodic, d->procs, (const int64_t *const *)starts, &C->d);
}

/* The next level: L's grid gathered onto every rank (on the self context). */
static int add_gathered(hs_mg *mg, const level *L)
{
    level *C = add_level(mg);
    if (!C) return HS_ERR_RUNTIME;
    const hs_decomp *d = L->d;
    memcpy(C->dx, L->dx, sizeof C->dx);
    C->ctx = &mg->self;
    C->gathered = 1;
    C->own_d = 1;
    mg->gather_at = mg->nlev - 1;
    const int one[3] = {1, 1, 1};
    return hs_decomp_create(&mg->self, mg->ndim, d->global, d->periodic, one, 1, &C->d);
}

/* Coarsen from level 0 until small enough, or until no dimension can be halved. */
static int build_levels(hs_mg *mg)
{
    int64_t *starts[3] = {NULL, NULL, NULL};
    int rc = HS_OK;
    for (int e = 0; e < 3 && rc == HS_OK; e++)
        if (!(starts[e] = malloc(((size_t)mg->ctx->size + 1) * sizeof(int64_t))))
            rc = HS_FAIL(HS_ERR_RUNTIME, "out of host memory for a multigrid plan");
    while (rc == HS_OK) {
        const level *L = &mg->lv[mg->nlev - 1];
        int64_t N = cells_of(L->d);
        int split = L->ctx->size > 1, halve[3] = {0, 0, 0};
        int can = N > mg->o.coarse_cells && choose_halving(mg, L, halve);
        int fits = can && fits_ranks(L, halve, starts);
        if (can && fits) rc = add_halved(mg, L, halve, starts);
        else if (split && N <= (can ? HS_MG_GATHER_MAX : HS_MG_DENSE_MAX)) rc = add_gathered(mg, L);
        else break;
    }
    for (int e = 0; e < 3; e++) free(starts[e]);
    return rc;
}

/* The smallest eigenvalue of -d2/dx2 (3-point, cell-centred) on n cells of size 1/sqrt(idx2) with
 * these ends: the lowest mode, or (nonzero = 1) the lowest nonzero one. */
static double lowest_mode(int64_t n, double idx2, hs_bc_kind lo, hs_bc_kind hi, int nonzero)
{
    double k;
    if (lo == HS_BC_PERIODIC) k = nonzero && n > 1 ? M_PI / (double)n : 0.0;
    else if (lo == HS_BC_NEUMANN && hi == HS_BC_NEUMANN) k = nonzero && n > 1 ? M_PI / (2.0 * n) : 0.0;
    else if (lo == HS_BC_DIRICHLET && hi == HS_BC_DIRICHLET) k = M_PI / (2.0 * n);
    else k = M_PI / (4.0 * n);
    double s = sin(k);
    return 4.0 * idx2 * s * s;
}

/* The coarsest level without a dense solve: Chebyshev on [lambda_min estimate, 2] of D^-1 A of the
 * degree that makes the residual polynomial at most 1/100 there (capped). */
static void coarse_chebyshev(hs_mg *mg, level *L, const hs_bc_kind bc[3][2])
{
    double lam = 0.0, next = HUGE_VAL, dmax = 0.0;
    for (int e = 0; e < mg->ndim; e++) {
        int64_t n = L->d->global[e];
        lam += lowest_mode(n, L->idx2[e], bc[e][0], bc[e][1], 0);
        if (n > 1) next = fmin(next, lowest_mode(n, L->idx2[e], bc[e][0], bc[e][1], 1));
        dmax += 4.0 * L->idx2[e];
    }
    if (lam <= 0.0) lam = next;
    double a = fmin(lam / dmax, 1.0), x0 = (2.0 + a) / (2.0 - a);
    int k = (int)ceil(acosh(100.0) / acosh(x0));
    if (k < 1) k = 1;
    if (k > MAX_COARSE_DEGREE) k = MAX_COARSE_DEGREE;
    L->coarse_degree = k;
    chebyshev(k, a, 2.0, L->cc1, L->cc2);
}

/* The dense A of a level on one rank (global cell order), its Cholesky factor and inverse, on the
 * device.  Without a Dirichlet face A + c 1 1^T, whose inverse maps a zero-mean b to the zero-mean
 * solution (1^T A = 0). */
static int coarse_dense(hs_mg *mg, level *L, const hs_bc_kind bc[3][2])
{
    const int64_t *g = L->d->global, N = L->nglob;
    double *A = calloc((size_t)(N * N), sizeof *A), *X = calloc((size_t)(N * N), sizeof *X);
    int rc = HS_OK;
    if (!A || !X) {
        rc = HS_FAIL(HS_ERR_RUNTIME, "out of host memory for the coarse solve (%lld cells)", (long long)N);
        goto done;
    }
    for (int64_t k = 0; k < g[2]; k++)
        for (int64_t j = 0; j < g[1]; j++)
            for (int64_t i = 0; i < g[0]; i++) {
                const int64_t at[3] = {i, j, k}, stride[3] = {1, g[0], g[0] * g[1]};
                const int64_t row = i + stride[1] * j + stride[2] * k;
                for (int e = 0; e < mg->ndim; e++) {
                    A[row * N + row] += 2.0 * L->idx2[e];
                    for (int s = -1; s <= 1; s += 2) {
                        int64_t a = at[e] + s;
                        if (a >= 0 && a < g[e]) A[row * N + row + s * stride[e]] -= L->idx2[e];
                        else if (bc[e][0] == HS_BC_PERIODIC) A[row * N + row + ((a + g[e]) % g[e] - at[e]) * stride[e]] -= L->idx2[e];
                        else A[row * N + row] -= (bc[e][s > 0] == HS_BC_NEUMANN ? 1.0 : -1.0) * L->idx2[e];
                    }
                }
            }
    if (mg->singular) {
        double c = 0.0;
        for (int e = 0; e < mg->ndim; e++) c += 2.0 * L->idx2[e];
        c /= (double)N;
        for (int64_t q = 0; q < N * N; q++) A[q] += c;
    }
    /* Cholesky A = G G^T (lower, in place) */
    for (int64_t j = 0; j < N && rc == HS_OK; j++) {
        double s = A[j * N + j];
        for (int64_t k = 0; k < j; k++) s -= A[j * N + k] * A[j * N + k];
        if (!(s > 0.0)) {
            rc = HS_FAIL(HS_ERR_RUNTIME, "multigrid: the coarse operator (%lld cells) is not positive definite at row %lld",
                         (long long)N, (long long)j);
            break;
        }
        double gjj = sqrt(s);
        A[j * N + j] = gjj;
        for (int64_t i = j + 1; i < N; i++) {
            double t = A[i * N + j];
            for (int64_t k = 0; k < j; k++) t -= A[i * N + k] * A[j * N + k];
            A[i * N + j] = t / gjj;
        }
    }
    if (rc != HS_OK) goto done;
    /* X = A^-1, column c from G y = e_c, G^T x = y (stored as row c: X is symmetric) */
    for (int64_t c = 0; c < N; c++) {
        double *x = X + c * N;
        for (int64_t i = 0; i < N; i++) {
            double t = i == c ? 1.0 : 0.0;
            for (int64_t k = c; k < i; k++) t -= A[i * N + k] * x[k];
            x[i] = i < c ? 0.0 : t / A[i * N + i];
        }
        for (int64_t i = N - 1; i >= 0; i--) {
            double t = x[i];
            for (int64_t k = i + 1; k < N; k++) t -= A[k * N + i] * x[k];
            x[i] = t / A[i * N + i];
        }
    }
    /* exact symmetry, so that the preconditioner is symmetric to the last bit */
    for (int64_t i = 0; i < N; i++)
        for (int64_t j = i + 1; j < N; j++) X[i * N + j] = X[j * N + i] = 0.5 * (X[i * N + j] + X[j * N + i]);
    rc = hs_mem_alloc(L->ctx, (size_t)(N * N) * sizeof(double), (void **)&L->ainv);
    if (rc == HS_OK) rc = hs_mem_copy(L->ctx, L->ainv, X, (size_t)(N * N) * sizeof(double), HS_COPY_H2D);
done:
    free(A);
    free(X);
    return rc;
}

/* Walls, sizes, fields and arrays of every level; the coarse solve of the last. */
static int level_setup(hs_mg *mg, const hs_bc_kind bc[3][2])
{
    for (int l = 0; l < mg->nlev; l++) {
        level *L = &mg->lv[l];
        const hs_decomp *d = L->d;
        L->nloc = d->local[0] * d->local[1] * d->local[2];
        L->nglob = cells_of(d);
        for (int e = 0; e < 3; e++) {
            L->idx2[e] = e < mg->ndim ? 1.0 / (L->dx[e] * L->dx[e]) : 0.0;
            int lo = e < mg->ndim && bc[e][0] != HS_BC_PERIODIC && d->offset[e] == 0;
            int hi = e < mg->ndim && bc[e][1] != HS_BC_PERIODIC && d->offset[e] + d->local[e] == d->global[e];
            L->wall_lo[e] = lo ? (bc[e][0] == HS_BC_NEUMANN ? 1 : -1) : 0;
            L->wall_hi[e] = hi ? (bc[e][1] == HS_BC_NEUMANN ? 1 : -1) : 0;
        }
        for (int i = 0; i < 2; i++) HS_CHECK(hs_field_create(L->d, HS_F64, 1, &L->u[i]));
        size_t bytes = (size_t)(L->nloc ? L->nloc : 1) * sizeof(double);
        HS_CHECK(hs_mem_alloc(L->ctx, bytes, (void **)&L->dvec));
        HS_CHECK(hs_mem_alloc(L->ctx, bytes, (void **)&L->tmp));
        if (l > 0) HS_CHECK(hs_mem_alloc(L->ctx, bytes, (void **)&L->bown));
        if (l + 1 < mg->nlev && !mg->lv[l + 1].gathered) {
            HS_CHECK(hs_field_create(L->d, HS_F64, 2, &L->r));
            HS_CHECK(hs_field_set_corners(L->r, 1));
        }
    }
    level *C = &mg->lv[mg->nlev - 1];
    if (C->ctx->size == 1 && C->nglob <= HS_MG_DENSE_MAX) return coarse_dense(mg, C, bc);
    coarse_chebyshev(mg, C, bc);
    return HS_OK;
}

/* Host buffers and rank boxes of the gather. */
static int gather_setup(hs_mg *mg)
{
    if (!mg->gather_at) return HS_OK;
    const level *L = &mg->lv[mg->gather_at - 1];
    int P = L->ctx->size;
    mg->box = calloc((size_t)P, sizeof *mg->box);
    if (!mg->box) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory for a multigrid plan");
    for (int r = 0; r < P; r++) {
        HS_CHECK(hs_decomp_rank_box(L->d, r, mg->box[r], mg->box[r] + 3));
        int64_t n = mg->box[r][3] * mg->box[r][4] * mg->box[r][5];
        if (n > mg->maxloc) mg->maxloc = n;
    }
    mg->h_send = malloc((size_t)mg->maxloc * sizeof(double));
    mg->h_recv = malloc((size_t)mg->maxloc * (size_t)P * sizeof(double));
    mg->h_glob = malloc((size_t)L->nglob * sizeof(double));
    if (!mg->h_send || !mg->h_recv || !mg->h_glob) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory for a multigrid plan");
    return HS_OK;
}

static void make_summary(hs_mg *mg)
{
    char a[64], b[64], g[112] = "";
    const level *F = &mg->lv[0], *C = &mg->lv[mg->nlev - 1];
    const char *fmt[3] = {"%lld", "%lldx%lld", "%lldx%lldx%lld"};
    snprintf(a, sizeof a, fmt[mg->ndim - 1], (long long)F->d->global[0], (long long)F->d->global[1], (long long)F->d->global[2]);
    snprintf(b, sizeof b, fmt[mg->ndim - 1], (long long)C->d->global[0], (long long)C->d->global[1], (long long)C->d->global[2]);
    if (mg->gather_at) {
        char t[64];
        const hs_decomp *d = mg->lv[mg->gather_at].d;
        snprintf(t, sizeof t, fmt[mg->ndim - 1], (long long)d->global[0], (long long)d->global[1], (long long)d->global[2]);
        snprintf(g, sizeof g, " (gathered onto every rank at %s)", t);
    }
    int levels = mg->nlev - (mg->gather_at ? 1 : 0);
    if (C->ainv)
        snprintf(mg->summary, sizeof mg->summary, "%d levels %s .. %s%s, dense coarse solve, Chebyshev smoothing of degree %d",
                 levels, a, b, g, mg->o.degree);
    else
        snprintf(mg->summary, sizeof mg->summary,
                 "%d levels %s .. %s%s, coarse solve by %d Chebyshev steps, Chebyshev smoothing of degree %d", levels, a, b,
                 g, C->coarse_degree, mg->o.degree);
}

static int setup(hs_mg *mg, hs_decomp *d, const hs_bc_kind bc[3][2], const double dx[3])
{
    mg->ndim = d->ndim;
    mg->singular = 1;
    for (int e = 0; e < d->ndim; e++)
        for (int s = 0; s < 2; s++)
            if (bc[e][s] == HS_BC_DIRICHLET) mg->singular = 0;
    /* the self context: this rank's device and stream, alone (a plain struct, as the tests use) */
    mg->self = *mg->ctx;
    mg->self.comm = MPI_COMM_SELF;
    mg->self.rank = 0;
    mg->self.size = 1;
    mg->self.owns_mpi = 0;
    level *L0 = &mg->lv[0];
    L0->ctx = mg->ctx;
    L0->d = d;
    for (int e = 0; e < 3; e++) L0->dx[e] = e < d->ndim ? dx[e] : 1.0;
    mg->nlev = 1;
    HS_CHECK(build_levels(mg));
    HS_CHECK(level_setup(mg, bc));
    HS_CHECK(gather_setup(mg));
    chebyshev(mg->o.degree, 2.0 / mg->o.smooth_ratio, 2.0, mg->c1, mg->c2);
    HS_CHECK(hs_mem_alloc(mg->ctx, (size_t)(L0->nloc ? L0->nloc : 1) * sizeof(double), (void **)&mg->rhs));
    mg->op = (hs_linop){mg->ctx, d->cart, L0->nloc, mg, op_apply, NULL};
    mg->pc = (hs_precond){mg->ctx, mg, precond_apply, NULL, NULL};
    make_summary(mg);
    return HS_OK;
}

int hs_mg_create(hs_decomp *d, const hs_bc_kind bc[3][2], const double dx[3], const hs_mg_opts *opts, hs_mg **out)
{
    if (!out) return hs_input_error("multigrid", 0, NULL, "output pointer is NULL");
    *out = NULL;
    hs_mg_opts o = opts ? *opts : hs_mg_default_opts();
    HS_CHECK(check_args(d, bc, dx, &o));
    hs_mg *mg = calloc(1, sizeof *mg);
    if (!mg) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory for a multigrid plan");
    mg->ctx = d->ctx;
    mg->o = o;
    int rc = setup(mg, d, bc, dx);
    if (rc != HS_OK) {
        hs_mg_destroy(mg);
        return hs_error_trace(rc, __FILE__, __LINE__, "multigrid plan");
    }
    *out = mg;
    return HS_OK;
}

void hs_mg_destroy(hs_mg *mg)
{
    if (!mg) return;
    hs_ctx_sync(mg->ctx); /* queued kernels may still use the arrays */
    for (int l = 0; l < mg->nlev; l++) {
        level *L = &mg->lv[l];
        hs_field_destroy(L->u[0]);
        hs_field_destroy(L->u[1]);
        hs_field_destroy(L->r);
        if (L->ctx) {
            hs_mem_free(L->ctx, L->bown);
            hs_mem_free(L->ctx, L->dvec);
            hs_mem_free(L->ctx, L->tmp);
            hs_mem_free(L->ctx, L->ainv);
        }
        if (L->own_d) hs_decomp_destroy(L->d);
    }
    hs_mem_free(mg->ctx, mg->rhs);
    hs_pcg_workspace_free(&mg->ws);
    free(mg->box);
    free(mg->h_send);
    free(mg->h_recv);
    free(mg->h_glob);
    free(mg);
}
