/* Fast direct Poisson solver: the plan (layouts, eigenvalue tables, FFT plans, buffers), the solve as a sequence of steps, and dispatch. */
#include "kernels/fft/poisson.h"
#include "kernels/dispatch.h"

#include <math.h>
#include <stdlib.h>

#include "kernels/comm/comm.h"
#include "kernels/fft/fft.h"
#include "kernels/fft/poisson_impl.h"
#include "kernels/memory.h"
#include "kernels/reduce/reduce.h"

/*
 * Layouts of the data during a solve (n0, n1, n2 the global cells, L = ndim - 1 the last used
 * dimension, the one split over the P ranks; this rank holds lloc of its cells from loff):
 *   A      [lloc][..][n0]       the caller's arrays (x fastest);
 *   B      [lloc][n0][n1]       3D only: each z plane of A transposed, so that y lines are contiguous;
 *   pre-C  the layout just before the global transpose: A in 1D and 2D, B in 3D; seen as
 *          [lloc][mtot] with the plane index m = x (2D) or x*n1 + y (3D), mtot the plane's cells;
 *   C      [mloc][nL]           whole lines of dimension L: rows mst..mst+mloc-1 of the plane index,
 *          balanced over the ranks (the first mtot % P hold one more; a rank may hold none).
 * pre-C -> C is a global transpose (hs_comm_alltoall of equal blocks, padded to the largest); with
 * one rank it is a local transpose (and nothing at all in 1D).
 *
 * The solve: forward transforms along x (in A) and y (in B) for every dimension that has one; then
 * in C either L's transform with the divide by the eigenvalue sums inside it (between its R2C and
 * C2R), or, with a mixed dimension M, L's forward transform (unless M = L) and the tridiagonal
 * sweeps along M: in C when M = L or when one rank holds everything, else back in pre-C (the only
 * layout where M's lines are whole) and forth again, then L's inverse transform; then the inverse
 * transforms in reverse order.
 * Each transform leaves a real array in the same layout (halfcomplex for the FFT, DCT-II/DST-II
 * coefficients), or its R2C spectrum in cw for a transposition that finishes it (below); no step
 * needs complex data beyond that work buffer.  The 1/n of every inverse transform is folded into
 * the divide (or the tridiagonal right-hand side).
 *
 * The solve is memory-bound: its cost is the passes over the data.  A line transform is three
 * (Makhoul's reorder for a DCT/DST, the R2C, the post step; the inverse: pre, C2R, unreorder) and
 * a transposition one, so a transposition between two transforms takes over the post step of the
 * one before it (reading the R2C spectrum from cw) and the reorder of the one after it (writing
 * the rows in Makhoul's order), and its inverse the unreorder and the pre step (writing the
 * spectrum into cw): hs_poisson_tpose.  It takes over the post and pre steps where it is local
 * (A <-> B, and pre-C <-> C on one rank), and the reorder and unreorder also in the blocks of a
 * split's all-to-all.  The steps left on their own are the first reorder and the last unreorder
 * (no transposition before or after), those of the transforms beside a tridiagonal solve, and the
 * post and pre steps before and after an all-to-all.  Passes over the data (an FFT library call
 * is one) for all-Neumann on one rank:
 *   2D: reorder, R2C, post+transpose+reorder, R2C, divide, C2R, unreorder+transpose+pre, C2R,
 *       unreorder: 9 (13 with every step apart).  That is the least with library FFTs: their four
 *       passes, one of ours between each two, and the first reorder and the last unreorder;
 *   3D: 13 (21): the same with y's R2C and C2R and the transpositions A <-> B among them.
 * A 2D problem on one rank whose two dimensions are both cosine/sine transforms or both periodic
 * runs as the plane solve instead (want_plane, plane_solve): the R2C of the x rows into cw, the C2C
 * of its y columns in place, one pass that solves the four modes of each pair of rows
 * (hs_poisson_plane_divide_pair), the inverse column and row transforms; with the caller's order
 * (hs_poisson_ordered: both dimensions in Makhoul's order) that is the row R2C, the column work
 * and the row C2R, and on the GPU the column work is one kernel (hs_poisson_column_solve_cuda) for
 * power-of-two columns up to 4096: three passes over the data where the line solve makes seven.
 * With a mixed dimension (want_plane) the plane solve takes x by the DCT-IV (pack, row C2C of
 * n0/2, the column work, the row C2C back, unpack: five passes, three with the caller's layout)
 * or extends the mixed dimension.
 */

/* How a dimension is diagonalised (COS4: the DCT-IV of the plane solve's DCT4 kind). */
enum { DIM_FFT = 0, DIM_COS = 1, DIM_SIN = 2, DIM_MIXED = 3, DIM_COS4 = 4 };

typedef enum { ST_FWD, ST_INV, ST_A2B, ST_B2A, ST_PRE2C, ST_C2PRE, ST_SPECTRAL, ST_TRIDIAG } step_kind;

/* One step of the solve, and what the transpositions next to it do for it (see above).  An inverse
 * step has the fields of the forward step it undoes. */
typedef struct {
    step_kind kind;
    int dim;   /* FWD, INV, SPECTRAL, TRIDIAG: the dimension */
    int post;  /* FWD, INV: the transposition after (before) it does the post (pre) step, and the data
                * between the two is the R2C spectrum in cw */
    int order; /* FWD, INV, SPECTRAL: the transposition before (after) it does the reorder (unreorder) */
    int pdim;  /* transpositions: the dimension whose post (pre) step they do, or -1 */
    int odim;  /* transpositions: the dimension whose reorder (unreorder) they do, or -1 */
} step;

struct hs_poisson {
    hs_decomp *d;
    hs_ctx *ctx;
    int ndim, L, mixed, singular;
    int kind[3];
    int64_t n[3];
    double dx[3];
    hs_bc gbc[3][2];          /* the same boundaries for ghost filling (hs_poisson_apply) */
    int P, me;
    int64_t lloc, loff, mtot, mloc, mst, block, nlocal;
    int64_t *lcnt, *lst, *mcnt, *mstv; /* per rank: the L split and the C row split */
    int64_t lines[3];         /* lines of each transformed dimension in its layout */
    hs_fft_plan *r2c[3], *c2r[3];
    int plane;                /* the plane solve (want_plane) */
    int ext[3];               /* per dimension HS_POISSON_EXT_*: the plane solve's mixed dimension, extended */
    int dct4;                 /* the plane solve's DCT4 kind: x mixed, HS_POISSON_EXT_HIGH or _LOW (its Dirichlet face) */
    hs_fft_plan *rows4;       /* its n1 C2C of n0/2 */
    int64_t tn[3];            /* per dimension the transform's length: n, 2n where extended */
    int fused_columns;        /* its column transforms and divide in one CUDA kernel (hs_poisson_column_solve_cuda) */
    hs_fft_plan *r2c_rows, *c2r_rows, *columns; /* its row R2C / C2R and column C2C plans */
    double *col_tw;           /* device: exp(-2 pi i t / n1), t < n1, for the fused column kernel */
    double *tw[3];            /* device twiddles of the DCT/DST dimensions */
    double *ev[3];            /* device eigenvalue of each stored coefficient, per dimension */
    double *row_ev;           /* device: per C row, the eigenvalue sum of the dimensions other than L */
    double *sigma;            /* device: per line of the mixed solve, the other dimensions' eigenvalue sum */
    int tri_in_c;             /* the mixed solve runs in C (1) or in pre-C (0) */
    int64_t tri_outer, tri_inner;
    double scale;             /* prod 1/n over the transformed dimensions */
    double *u, *w, *cw;       /* device work: two real arrays and the complex / receive buffer */
    hs_poisson_hook_info *hook_info; /* device: what the divide's load hook reads (c2r[L] hooked) */
    hs_comm *comm;
    hs_field *fld;            /* halo 1, for hs_poisson_apply */
    step step[24];
    int nsteps;
};

/* ------------------------------------------------------------------ eigenvalues */

/* -(4/dx^2) sin^2(pi k / n) (FFT) or sin^2(pi k / (2n)) (DCT, DST), k the mode number. */
static double mode_eigenvalue(int kind, int64_t n, double dx, double k)
{
    double s = sin(M_PI * k / (double)(kind == DIM_FFT ? n : 2 * n));
    return -4.0 / (dx * dx) * s * s;
}

/* The mode stored at coefficient index j: halfcomplex holds mode min(j, n-j); the DST through the
 * DCT holds sine mode n - j at j. */
static double stored_eigenvalue(int kind, int64_t n, double dx, int64_t j)
{
    switch (kind) {
    case DIM_FFT: return mode_eigenvalue(kind, n, dx, (double)(j < n - j ? j : n - j));
    case DIM_COS: return mode_eigenvalue(kind, n, dx, (double)j);
    case DIM_SIN: return mode_eigenvalue(kind, n, dx, (double)(n - j));
    case DIM_COS4: return mode_eigenvalue(kind, n, dx, (double)j + 0.5);
    default: return 0.0;
    }
}

double hs_poisson_eigenvalue(const hs_poisson *ps, const int64_t k[3])
{
    double s = 0.0;
    for (int d = 0; d < ps->ndim; d++)
        if (ps->kind[d] != DIM_MIXED) s += mode_eigenvalue(ps->kind[d], ps->n[d], ps->dx[d], (double)k[d]);
    return s;
}

/* Coefficient indices of element e of the C layout (in_c = 1) or of the pre-C layout (0). */
static void decode(const hs_poisson *ps, int in_c, int64_t e, int64_t idx[3])
{
    int64_t plane, l, nL = ps->n[ps->L];
    if (in_c) plane = ps->mst + e / nL, l = e % nL;
    else plane = e % ps->mtot, l = ps->loff + e / ps->mtot;
    idx[0] = idx[1] = idx[2] = 0;
    idx[ps->L] = l;
    if (ps->ndim == 3) idx[0] = plane / ps->n[1], idx[1] = plane % ps->n[1];
    else if (ps->ndim == 2) idx[0] = plane;
}

/* ------------------------------------------------------------------ backend calls */

/* How dimension k is transformed: its kind, but the cosine transform for a mixed dimension that
 * the plane solve extends (ps->ext). */
static int transform_kind(const hs_poisson *ps, int k)
{
    return ps->ext[k] ? DIM_COS : (ps->dct4 && k == 0) ? DIM_COS4 : ps->kind[k];
}

/* The order dimension k's transform reads its lines in: Makhoul's for a cosine transform, with the
 * sine signs for a sine transform (HS_POISSON_ROWS_*), natural (0) for an FFT or the mixed one. */
static int dim_order(const hs_poisson *ps, int k)
{
    int t = transform_kind(ps, k);
    return t == DIM_SIN ? HS_POISSON_ROWS_MAKHOUL_ALT : t == DIM_COS ? HS_POISSON_ROWS_MAKHOUL : 0;
}

#define DISPATCH(ps, name, ...) \
    HS_DISPATCH((ps)->ctx, hs_poisson_##name##_cpu(__VA_ARGS__), hs_poisson_##name##_cuda((ps)->ctx->cuda, __VA_ARGS__))

/* Forward or inverse real-to-real transform of dimension dim along the contiguous lines of the
 * current layout, step st: src -> dst (may be equal), scratch differs from both.  Forward: the
 * reorder is skipped when the transposition before did it (st->order), and with st->post the
 * result is the spectrum left in cw for the transposition after (dst unused).  Inverse: the
 * converse (with st->post src is the spectrum in cw). */
static int line_transform(hs_poisson *ps, const step *st, int forward, const double *src, double *dst, double *scratch)
{
    int dim = st->dim;
    int64_t lines = ps->lines[dim], n = ps->n[dim];
    int dct = ps->kind[dim] != DIM_FFT, o = dim_order(ps, dim), reorder = dct && !st->order;
    if (lines == 0) return HS_OK;
    if (forward) {
        if (reorder) HS_CHECK(DISPATCH(ps, order, 1, lines, n, 0, o, 0, 0, 1, src, scratch));
        HS_CHECK(hs_fft_execute(ps->r2c[dim], HS_FFT_FORWARD, reorder ? scratch : src, ps->cw));
        if (!st->post) HS_CHECK(DISPATCH(ps, line_post, lines, n, dct, ps->tw[dim], ps->cw, dst));
    } else {
        if (!st->post) HS_CHECK(DISPATCH(ps, line_pre, lines, n, dct, ps->tw[dim], src, ps->cw));
        HS_CHECK(hs_fft_execute(ps->c2r[dim], HS_FFT_BACKWARD, ps->cw, reorder ? scratch : dst));
        if (reorder) HS_CHECK(DISPATCH(ps, order, 1, lines, n, 0, o, 0, 0, 0, scratch, dst));
    }
    return HS_OK;
}

/* Forward transform of L, divide, inverse transform of L, all on the R2C spectrum of the C rows:
 * the divide sits between the R2C and the C2R (hs_poisson_spectral_divide_at), which saves the
 * post, divide and pre passes of doing the three apart; the reorder and unreorder are skipped where
 * the transpositions around do them (st->order). */
static int spectral_solve(hs_poisson *ps, const step *st, const double *src, double *dst, double *scratch)
{
    int L = ps->L, dct = ps->kind[L] != DIM_FFT, o = dim_order(ps, L), reorder = dct && !st->order;
    int64_t rows = ps->mloc, n = ps->n[L];
    if (rows == 0) return HS_OK;
    if (reorder) HS_CHECK(DISPATCH(ps, order, 1, rows, n, 0, o, 0, 0, 1, src, scratch));
    HS_CHECK(hs_fft_execute(ps->r2c[L], HS_FFT_FORWARD, reorder ? scratch : src, ps->cw));
    /* the C2R divides as it reads where its load hook is linked in (make_plans_buffers) */
    if (!hs_fft_plan_hooked(ps->c2r[L]))
        HS_CHECK(DISPATCH(ps, spectral_divide, rows, n, dct, ps->tw[L], ps->scale, ps->row_ev, ps->ev[L], ps->cw));
    HS_CHECK(hs_fft_execute(ps->c2r[L], HS_FFT_BACKWARD, ps->cw, reorder ? scratch : dst));
    if (reorder) HS_CHECK(DISPATCH(ps, order, 1, rows, n, 0, o, 0, 0, 0, scratch, dst));
    return HS_OK;
}

/* A transposition's source columns: real, or the R2C spectra of dimension pdim's lines. */
static void tpose_cols(const hs_poisson *ps, int pdim, int64_t cols, hs_poisson_tpose *t)
{
    if (pdim < 0) {
        t->kind = HS_POISSON_COLS_REAL, t->n = cols, t->tw = NULL;
        return;
    }
    t->kind = ps->kind[pdim] == DIM_FFT ? HS_POISSON_COLS_HALFCOMPLEX : HS_POISSON_COLS_DCT;
    t->n = ps->n[pdim], t->tw = ps->tw[pdim];
}

/* Its rows: in order, or in Makhoul's order of dimension odim, as elements roff.. of lines of rn. */
static void tpose_rows(const hs_poisson *ps, int odim, int64_t rn, int64_t roff, hs_poisson_tpose *t)
{
    t->order = odim < 0 ? HS_POISSON_ROWS_NATURAL : dim_order(ps, odim);
    t->rn = rn, t->roff = roff;
}

/* The row stride of a source of `cols` columns: real values, or the spectra of lines of t->n. */
static int64_t tpose_row_stride(const hs_poisson_tpose *t, int64_t cols)
{
    return t->kind == HS_POISSON_COLS_REAL ? cols : cols / t->n * 2 * (t->n / 2 + 1);
}

#define TRANSPOSE(ps, back, t, src, dst) \
    ((back) ? DISPATCH(ps, transpose_back, t, src, dst) : DISPATCH(ps, transpose, t, src, dst))

/* pre-C [lloc][mtot] -> C [mloc][nL] (!back) or back; src != dst.  One rank: one local
 * transposition with the fusions of st, from the spectrum in cw (forward, st->pdim >= 0) or into it
 * (back).  Split: all-to-all blocks; send differs from src (may be dst), the receive buffer is cw;
 * the transpositions of the blocks do L's reorder and unreorder (st->odim). */
static int global_transpose(hs_poisson *ps, const step *st, int back, const double *src, double *dst, double *send)
{
    int64_t nL = ps->n[ps->L], lloc = ps->lloc, mloc = ps->mloc, mtot = ps->mtot;
    hs_poisson_tpose t = {.batch = 1, .dcs = nL};
    if (ps->P == 1) { /* [nL][mtot] <-> [mtot][nL] */
        t.rows = nL, t.cols = mtot;
        tpose_cols(ps, st->pdim, mtot, &t);
        tpose_rows(ps, st->odim, nL, 0, &t);
        t.srs = tpose_row_stride(&t, mtot);
        return TRANSPOSE(ps, back, &t, src, dst);
    }
    /* rank s's block of C's columns, [lcnt[s]][mloc] as received, <-> C */
    double *recv = ps->cw;
    int64_t B = ps->block;
    t.cols = mloc, t.srs = mloc;
    tpose_cols(ps, -1, mloc, &t);
    for (int r = 0; r < ps->P; r++) {
        if (!back) /* columns of rank r's C rows, [lloc][mcnt[r]] */
            HS_CHECK(DISPATCH(ps, copy_runs, lloc, ps->mcnt[r], src + ps->mstv[r], mtot, send + r * B, ps->mcnt[r]));
        else { /* rank r's cells of every local C row, transposed to [lcnt[r]][mloc] */
            t.rows = ps->lcnt[r];
            tpose_rows(ps, st->odim, nL, ps->lst[r], &t);
            HS_CHECK(TRANSPOSE(ps, 1, &t, src, send + r * B));
        }
    }
    HS_CHECK(hs_comm_alltoall(ps->comm, HS_F64, send, recv, (size_t)B));
    for (int s = 0; s < ps->P; s++) {
        if (!back) { /* [lcnt[s]][mloc] from rank s into columns lst[s].. of C */
            t.rows = ps->lcnt[s];
            tpose_rows(ps, st->odim, nL, ps->lst[s], &t);
            HS_CHECK(TRANSPOSE(ps, 0, &t, recv + s * B, dst));
        } else /* [lloc][mcnt[s]] from rank s into columns mstv[s].. of pre-C */
            HS_CHECK(DISPATCH(ps, copy_runs, lloc, ps->mcnt[s], recv + s * B, ps->mcnt[s], dst + ps->mstv[s], mtot));
    }
    return HS_OK;
}

/* A [lloc][n1][n0] <-> B [lloc][n0][n1] (!back / back), with the fusions of st. */
static int local_ab(hs_poisson *ps, const step *st, int back, const double *src, double *dst)
{
    int64_t n0 = ps->n[0], n1 = ps->n[1], pl = n0 * n1;
    hs_poisson_tpose t = {.batch = ps->lloc, .rows = n1, .cols = n0, .dbs = pl, .dcs = n1};
    tpose_cols(ps, st->pdim, n0, &t);
    tpose_rows(ps, st->odim, n1, 0, &t);
    t.srs = tpose_row_stride(&t, n0);
    t.sbs = n1 * t.srs;
    return TRANSPOSE(ps, back, &t, src, dst);
}

static int mixed_solve(hs_poisson *ps, const double *src, double *dst, double *work)
{
    int M = ps->mixed;
    int g_lo = ps->gbc[M][0].kind == HS_BC_NEUMANN ? 1 : -1, g_hi = ps->gbc[M][1].kind == HS_BC_NEUMANN ? 1 : -1;
    return DISPATCH(ps, tridiag, ps->tri_outer, ps->n[M], ps->tri_inner, ps->sigma, ps->dx[M] * ps->dx[M], ps->scale,
                    g_lo, g_hi, src, dst, work);
}

/* Whether the solve starts with Makhoul's reorder of x and ends with its unreorder (a cosine or
 * sine transform along whole local x lines first: the first step is x's forward transform with no
 * transposition before it, and the last its inverse). */
static int x_reorders(const hs_poisson *ps)
{
    if (ps->nsteps < 2 || (ps->kind[0] != DIM_COS && ps->kind[0] != DIM_SIN)) return 0;
    const step *a = &ps->step[0], *z = &ps->step[ps->nsteps - 1];
    return a->kind == ST_FWD && a->dim == 0 && !a->order && z->kind == ST_INV && z->dim == 0 && !z->order;
}

/* The column work of the plane solve, in place on its spectrum in cw: one CUDA kernel, or the
 * column C2C, the divide and the inverse C2C. */
static int plane_columns(hs_poisson *ps, int dct)
{
    const int64_t n1 = ps->tn[1], n0 = ps->tn[0];
    if (ps->fused_columns)
        return HS_DISPATCH(ps->ctx, HS_FAIL(HS_ERR_RUNTIME, "poisson: the fused column solve runs only on the GPU"),
                           hs_poisson_column_solve_cuda(ps->ctx->cuda, n1, n0, dct, ps->col_tw, ps->tw[1], ps->tw[0],
                                                        ps->scale, ps->ev[1], ps->ev[0], ps->cw));
    HS_CHECK(hs_fft_execute(ps->columns, HS_FFT_FORWARD, ps->cw, ps->cw));
    HS_CHECK(DISPATCH(ps, plane_divide, n1, n0, dct, ps->tw[1], ps->tw[0], ps->scale, ps->ev[1], ps->ev[0], ps->cw));
    return hs_fft_execute(ps->columns, HS_FFT_BACKWARD, ps->cw, ps->cw);
}

/* DCT4 (poisson_impl.h): pack and twist the rows (unless ordered: f comes so), their C2C forward,
 * the column work, the rows' C2C backward, which leaves the solution packed and twisted as f was
 * (hs_poisson_plane_pair4), and its unpack (unless ordered). */
static int plane_solve_dct4(hs_poisson *ps, const double *f, double *p, int ordered)
{
    const int64_t n1 = ps->n[1], n0 = ps->n[0];
    const int o1 = dim_order(ps, 1);
    if (!ordered) HS_CHECK(DISPATCH(ps, dct4_pack, n1, n0, o1, ps->dct4, ps->tw[0], f, ps->cw));
    HS_CHECK(hs_fft_execute(ps->rows4, HS_FFT_FORWARD, ordered ? f : ps->cw, ps->cw));
    HS_CHECK(plane_columns(ps, HS_POISSON_PLANE_DCT4));
    HS_CHECK(hs_fft_execute(ps->rows4, HS_FFT_BACKWARD, ps->cw, ordered ? p : ps->cw));
    return ordered ? HS_OK : DISPATCH(ps, dct4_unpack, n1, n0, o1, ps->dct4, ps->tw[0], ps->cw, p);
}

/* The plane solve: f (in the transforms' order, or put in it here) -> the R2C of its rows in cw ->
 * the column transforms (C2C along y, in place), the divide and the inverse column transforms ->
 * the C2R of the rows, which gives p in the same order (put back here unless ordered).  On the GPU
 * the middle three are one kernel where the column length allows (hs_poisson_column_solve_cuda:
 * one pass over the spectrum where cuFFT's 2D transforms take about three each way). */
static int plane_solve(hs_poisson *ps, const double *f, double *p, int ordered)
{
    if (ps->dct4) return plane_solve_dct4(ps, f, p, ordered);
    const int dct = transform_kind(ps, 0) != DIM_FFT, o1 = dim_order(ps, 1), o0 = dim_order(ps, 0);
    const int reorder = (dct && !ordered) || ps->ext[0] || ps->ext[1];
    /* an extended dimension's lines are made here (hs_poisson_ordered offers no order then) */
    if (reorder) HS_CHECK(DISPATCH(ps, order, 1, ps->n[1], ps->n[0], o1, o0, ps->ext[1], ps->ext[0], 1, f, ps->u));
    HS_CHECK(hs_fft_execute(ps->r2c_rows, HS_FFT_FORWARD, reorder ? ps->u : f, ps->cw));
    HS_CHECK(plane_columns(ps, dct));
    HS_CHECK(hs_fft_execute(ps->c2r_rows, HS_FFT_BACKWARD, ps->cw, reorder ? ps->u : p));
    if (reorder) HS_CHECK(DISPATCH(ps, order, 1, ps->n[1], ps->n[0], o1, o0, ps->ext[1], ps->ext[0], 0, ps->u, p));
    return HS_OK;
}

/* Run the steps: src is f at first, p receives the last step; in between the data lives in one
 * of the two real work arrays, or as a spectrum in cw between a transform and the transposition
 * that finishes it (or starts it, going back).  ordered: f comes and p goes in the order of
 * hs_poisson_ordered, so the first reorder and the last unreorder are skipped. */
static int run_steps(hs_poisson *ps, const double *f, double *p, int ordered)
{
    if (ps->plane) return plane_solve(ps, f, p, ordered);
    const double *src = f;
    for (int s = 0; s < ps->nsteps; s++) {
        step here = ps->step[s];
        const step *st = &here;
        int last = s == ps->nsteps - 1;
        if (ordered && (s == 0 || last)) here.order = 1;
        /* the work array holding the data (u while the data is f or in cw), and the other */
        double *mine = src == ps->w ? ps->w : ps->u, *other = mine == ps->u ? ps->w : ps->u;
        double *same = last ? p : mine, *moved = last ? p : other, *out = same;
        switch (st->kind) {
        case ST_FWD:
        case ST_INV:
            HS_CHECK(line_transform(ps, st, st->kind == ST_FWD, src, same, other));
            if (st->kind == ST_FWD && st->post) out = ps->cw;
            break;
        case ST_SPECTRAL:
            HS_CHECK(spectral_solve(ps, st, src, same, other));
            break;
        case ST_TRIDIAG:
            HS_CHECK(mixed_solve(ps, src, same, other));
            break;
        case ST_A2B:
        case ST_B2A:
            out = st->kind == ST_B2A && st->pdim >= 0 ? ps->cw : moved;
            HS_CHECK(local_ab(ps, st, st->kind == ST_B2A, src, out));
            break;
        case ST_PRE2C:
        case ST_C2PRE:
            out = st->kind == ST_C2PRE && st->pdim >= 0 ? ps->cw : moved;
            HS_CHECK(global_transpose(ps, st, st->kind == ST_C2PRE, src, out, other));
            break;
        }
        src = out;
    }
    return HS_OK;
}

int hs_poisson_ordered(const hs_poisson *ps, int order[3])
{
    order[0] = order[1] = order[2] = 0;
    if (!ps) return 0;
    if (ps->plane) {
        if (ps->kind[0] == DIM_FFT || ps->ext[0] || ps->ext[1]) return 0;
        if (ps->dct4) {
            order[0] = HS_POISSON_ROWS_DCT4, order[1] = dim_order(ps, 1);
            return 1;
        }
        order[0] = dim_order(ps, 0), order[1] = dim_order(ps, 1);
        return 1;
    }
    if (!x_reorders(ps)) return 0;
    order[0] = dim_order(ps, 0);
    return 1;
}

int hs_poisson_order(hs_poisson *ps, int to_ordered, const double *src, double *dst)
{
    int o[3];
    if (!hs_poisson_ordered(ps, o)) return HS_FAIL(HS_ERR_RUNTIME, "hs_poisson_order: this solver reorders nothing");
    const int64_t n0 = ps->n[0], n1 = ps->d->local[1], planes = ps->d->local[2];
    if (o[0] == HS_POISSON_ROWS_DCT4) /* the plane solve: 2D, one rank */
        return to_ordered ? DISPATCH(ps, dct4_pack, n1, n0, o[1], ps->dct4, ps->tw[0], src, dst)
                          : DISPATCH(ps, dct4_unpack, n1, n0, o[1], ps->dct4, ps->tw[0], src, dst);
    return DISPATCH(ps, order, planes, n1, n0, o[1], o[0], 0, 0, to_ordered, src, dst);
}

static int solve(hs_poisson *ps, const double *f, double *p, double *f_mean, int ordered)
{
    if (!ps) return hs_input_error("poisson", 0, NULL, "Poisson solver is NULL");
    if (ps->nlocal > 0 && (!f || !p)) return hs_input_error("poisson", 0, NULL, "right-hand side or solution array is NULL");
    if (f_mean) {
        *f_mean = 0.0;
        if (ps->singular) {
            double s = 0.0;
            HS_CHECK(hs_reduce(ps->ctx, HS_F64, HS_REDUCE_SUM, (size_t)ps->nlocal, f, &s));
            HS_CHECK(hs_allreduce_sum(ps->d->cart, &s, 1));
            *f_mean = s / ((double)ps->n[0] * (double)ps->n[1] * (double)ps->n[2]);
        }
    }
    /* the mean itself needs no pass: the null mode's coefficient is set to 0 by the divide */
    HS_CHECK(run_steps(ps, f, p, ordered));
    return HS_OK;
}

int hs_poisson_solve(hs_poisson *ps, const double *f, double *p, double *f_mean) { return solve(ps, f, p, f_mean, 0); }

int hs_poisson_solve_ordered(hs_poisson *ps, const double *f, double *p, double *f_mean)
{
    int o[3];
    if (!hs_poisson_ordered(ps, o))
        return HS_FAIL(HS_ERR_RUNTIME, "hs_poisson_solve_ordered: this solver reorders nothing (hs_poisson_ordered)");
    return solve(ps, f, p, f_mean, 1);
}

int hs_poisson_apply(hs_poisson *ps, const double *p, double *Lp)
{
    if (!ps) return hs_input_error("poisson", 0, NULL, "Poisson solver is NULL");
    if (ps->nlocal > 0 && (!p || !Lp)) return hs_input_error("poisson", 0, NULL, "input or output array is NULL");
    hs_field *F = ps->fld;
    HS_CHECK(hs_field_load_interior(F, p));
    HS_CHECK(hs_halo_exchange(F));
    HS_CHECK(hs_field_fill_ghosts(F, ps->gbc, ps->dx, 1));
    double idx2[3] = {0, 0, 0};
    for (int d = 0; d < ps->ndim; d++) idx2[d] = 1.0 / (ps->dx[d] * ps->dx[d]);
    const double *u = (const double *)F->data + hs_field_index(F, 0, 0, 0);
    HS_CHECK(DISPATCH(ps, laplacian, ps->ndim, ps->d->local, u, hs_field_stride_y(F), hs_field_stride_z(F), idx2, Lp));
    return HS_OK;
}

/* ------------------------------------------------------------------ planning */

static const char *bc_name(hs_poisson_bc b)
{
    return b == HS_POISSON_PERIODIC ? "periodic" : b == HS_POISSON_NEUMANN ? "Neumann" : "Dirichlet";
}

static int check_args(const hs_decomp *d, const hs_poisson_bc bc[3][2], const double dx[3])
{
    if (!d) return hs_input_error("poisson", 0, NULL, "decomposition is NULL");
    if (!bc || !dx) return hs_input_error("poisson", 0, NULL, "boundary conditions or spacings are NULL");
    int nd = d->ndim, mixed = -1, L = nd - 1;
    static const char axis[] = "xyz";
    for (int k = 0; k < nd; k++) {
        for (int s = 0; s < 2; s++)
            if (bc[k][s] != HS_POISSON_PERIODIC && bc[k][s] != HS_POISSON_NEUMANN && bc[k][s] != HS_POISSON_DIRICHLET)
                return hs_input_error("poisson", 0, "bc", "%c %s face: unknown boundary kind %d", axis[k],
                                      s ? "high" : "low", (int)bc[k][s]);
        if (!(dx[k] > 0.0) || !isfinite(dx[k]))
            return hs_input_error("poisson", 0, "dx", "spacing in %c must be positive and finite, not %g", axis[k], dx[k]);
        int per0 = bc[k][0] == HS_POISSON_PERIODIC, per1 = bc[k][1] == HS_POISSON_PERIODIC;
        if (per0 != per1)
            return hs_input_error("poisson", 0, "bc", "%c: periodic on one face only (%s below, %s above); periodic "
                                  "takes both faces", axis[k], bc_name(bc[k][0]), bc_name(bc[k][1]));
        if (per0 != (d->periodic[k] != 0))
            return hs_input_error("poisson", 0, "bc", "%c: %s boundaries on a decomposition that is %speriodic there "
                                  "(make the two agree)", axis[k], per0 ? "periodic" : "non-periodic",
                                  d->periodic[k] ? "" : "not ");
        if (!per0 && bc[k][0] != bc[k][1]) {
            if (mixed >= 0)
                return hs_input_error("poisson", 0, "bc", "%c and %c both have different boundaries at their two faces; "
                                      "the fast solver takes at most one such dimension (the others need periodic, "
                                      "Neumann or Dirichlet on both faces)", axis[mixed], axis[k]);
            mixed = k;
        }
        if (k != L && d->procs[k] != 1)
            return hs_input_error("poisson", 0, "procs", "the decomposition splits %c over %d ranks; the fast solver "
                                  "splits only the last dimension (%c): use procs = %s", axis[k], d->procs[k], axis[L],
                                  nd == 2 ? "{1, P}" : "{1, 1, P}");
    }
    if (d->coords[L] != d->ctx->rank)
        return HS_FAIL(HS_ERR_RUNTIME, "poisson: rank %d sits at position %d of the split, not at its rank", d->ctx->rank,
                       d->coords[L]);
    return HS_OK;
}

static int upload(hs_poisson *ps, const double *h, size_t count, double **dev)
{
    HS_CHECK(hs_mem_alloc(ps->ctx, (count ? count : 1) * sizeof(double), (void **)dev));
    if (count) HS_CHECK(hs_mem_copy(ps->ctx, *dev, h, count * sizeof(double), HS_COPY_H2D));
    return HS_OK;
}

/* The splits of L (from the decomposition) and of the C rows (balanced blocks). */
static int make_splits(hs_poisson *ps)
{
    int P = ps->P, L = ps->L;
    ps->lcnt = calloc(4 * (size_t)P, sizeof(int64_t));
    if (!ps->lcnt) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory for a Poisson solver");
    ps->lst = ps->lcnt + P, ps->mcnt = ps->lcnt + 2 * P, ps->mstv = ps->lcnt + 3 * P;
    int64_t s = 0, lmax = 0, mmax = 0;
    for (int r = 0; r < P; r++) {
        int64_t off[3], loc[3];
        HS_CHECK(hs_decomp_rank_box(ps->d, r, off, loc));
        ps->lst[r] = off[L], ps->lcnt[r] = loc[L];
        ps->mcnt[r] = ps->mtot / P + (r < ps->mtot % P);
        ps->mstv[r] = s;
        s += ps->mcnt[r];
        if (ps->lcnt[r] > lmax) lmax = ps->lcnt[r];
        if (ps->mcnt[r] > mmax) mmax = ps->mcnt[r];
    }
    ps->mloc = ps->mcnt[ps->me], ps->mst = ps->mstv[ps->me];
    ps->block = P > 1 ? lmax * mmax : 0;
    if (ps->block > INT32_MAX)
        return HS_FAIL(HS_ERR_RUNTIME, "poisson: a transpose block of %lld values exceeds MPI's 2^31; use more ranks",
                       (long long)ps->block);
    return HS_OK;
}

static step mk_step(step_kind k, int dim) { return (step){.kind = k, .dim = dim, .pdim = -1, .odim = -1}; }

/* The sequence of steps (see the comment at the top), which transpositions do which transforms'
 * post and reorder steps, and where the mixed solve runs. */
static void make_steps(hs_poisson *ps)
{
    int nd = ps->ndim, L = ps->L, M = ps->mixed;
    int need_c = !(ps->P == 1 && ps->mtot == 1);
    step fwd[8], mid[3];
    int nf = 0, nm = 0;
    if (nd >= 2 && M != 0) fwd[nf++] = mk_step(ST_FWD, 0);
    if (nd == 3) {
        fwd[nf++] = mk_step(ST_A2B, -1);
        if (M != 1) fwd[nf++] = mk_step(ST_FWD, 1);
    }
    if (need_c) fwd[nf++] = mk_step(ST_PRE2C, -1);
    if (M >= 0 && M != L) fwd[nf++] = mk_step(ST_FWD, L);
    if (M < 0) mid[nm++] = mk_step(ST_SPECTRAL, L);
    else if (M == L || ps->P == 1) mid[nm++] = mk_step(ST_TRIDIAG, M);
    else { /* these two move L's coefficients only */
        mid[nm++] = mk_step(ST_C2PRE, -1);
        mid[nm++] = mk_step(ST_TRIDIAG, M);
        mid[nm++] = mk_step(ST_PRE2C, -1);
    }
    /* a transposition does the post step of the transform before it (along its columns: x for
     * A2B, x or y for PRE2C) where it is local, and the reorder of a DCT or DST after it along its
     * rows (y for A2B, L for PRE2C; not a transform of L after A2B when there is no C) */
    for (int i = 0; i < nf; i++) {
        if (fwd[i].kind != ST_A2B && fwd[i].kind != ST_PRE2C) continue;
        int rdim = fwd[i].kind == ST_A2B ? 1 : L;
        step *prev = i > 0 ? &fwd[i - 1] : NULL, *next = i + 1 < nf ? &fwd[i + 1] : &mid[0];
        if (prev && prev->kind == ST_FWD && (fwd[i].kind == ST_A2B || ps->P == 1)) prev->post = 1, fwd[i].pdim = prev->dim;
        if ((next->kind == ST_FWD || next->kind == ST_SPECTRAL) && next->dim == rdim && ps->kind[rdim] != DIM_FFT)
            next->order = 1, fwd[i].odim = rdim;
    }
    for (int i = 0; i < nf; i++) ps->step[ps->nsteps++] = fwd[i];
    for (int i = 0; i < nm; i++) ps->step[ps->nsteps++] = mid[i];
    for (int i = nf - 1; i >= 0; i--) {
        step k = fwd[i];
        k.kind = k.kind == ST_FWD ? ST_INV : k.kind == ST_A2B ? ST_B2A : ST_C2PRE;
        ps->step[ps->nsteps++] = k;
    }
    /* where the tridiagonal lines lie: [outer][n][inner] of the layout the solve runs in */
    if (M < 0) return;
    int64_t n0 = ps->n[0], n1 = ps->n[1];
    ps->tri_in_c = M == L || ps->P == 1;
    if (M == L) ps->tri_outer = ps->mloc, ps->tri_inner = 1;
    else if (ps->tri_in_c) { /* one rank: C = [x][y] (2D) or [x][y][z] (3D) */
        int64_t nL = ps->n[L];
        if (M == 0) ps->tri_outer = 1, ps->tri_inner = nd == 3 ? n1 * nL : nL;
        else ps->tri_outer = n0, ps->tri_inner = nL;
    } else { /* pre-C = [lloc][x] (2D) or [lloc][x][y] (3D) */
        if (M == 0) ps->tri_outer = ps->lloc, ps->tri_inner = nd == 3 ? n1 : 1;
        else ps->tri_outer = ps->lloc * n0, ps->tri_inner = 1;
    }
}

/* Eigenvalue tables, twiddles and the per-row / per-line shifts, built on the host and uploaded. */
static int make_tables(hs_poisson *ps)
{
    int nd = ps->ndim, L = ps->L, M = ps->mixed;
    double *host[3] = {NULL, NULL, NULL};
    int rc = HS_OK;
    int64_t nmax = ps->tn[0] > ps->tn[1] ? ps->tn[0] : ps->tn[1];
    if (ps->tn[2] > nmax) nmax = ps->tn[2];
    double *tw = malloc((size_t)(nmax + 2) * 2 * sizeof(double));
    int64_t rows = ps->mloc, tlines = 0;
    if (M >= 0) tlines = ps->tri_outer * ps->tri_inner;
    double *rev = malloc((size_t)(rows + 1) * sizeof(double)), *sig = malloc((size_t)(tlines + 1) * sizeof(double));
    for (int k = 0; k < 3; k++) host[k] = malloc((size_t)ps->tn[k] * sizeof(double));
    if (!tw || !rev || !sig || !host[0] || !host[1] || !host[2]) {
        rc = HS_FAIL(HS_ERR_RUNTIME, "out of host memory for a Poisson solver's tables");
        goto done;
    }
    for (int k = 0; k < 3; k++) {
        const int kind = transform_kind(ps, k);
        for (int64_t j = 0; j < ps->tn[k]; j++) host[k][j] = k < nd ? stored_eigenvalue(kind, ps->tn[k], ps->dx[k], j) : 0.0;
        if (k < nd) {
            rc = upload(ps, host[k], (size_t)ps->tn[k], &ps->ev[k]);
            if (rc) goto done;
        }
        if (k < nd && kind == DIM_COS4) { /* p_k and q_k of DCT4: 2n values, which tw holds */
            int64_t n = ps->tn[k];
            for (int64_t j = 0; j < n / 2; j++) {
                tw[4 * j] = cos(M_PI * (double)j / (double)n), tw[4 * j + 1] = sin(M_PI * (double)j / (double)n);
                tw[4 * j + 2] = cos(M_PI * (double)(4 * j + 1) / (double)(4 * n));
                tw[4 * j + 3] = sin(M_PI * (double)(4 * j + 1) / (double)(4 * n));
            }
            rc = upload(ps, tw, (size_t)(2 * n), &ps->tw[k]);
            if (rc) goto done;
        }
        if (k < nd && (kind == DIM_COS || kind == DIM_SIN)) {
            int64_t n = ps->tn[k];
            for (int64_t j = 0; j <= n / 2; j++) {
                tw[2 * j] = cos(M_PI * (double)j / (double)(2 * n));
                tw[2 * j + 1] = sin(M_PI * (double)j / (double)(2 * n));
            }
            rc = upload(ps, tw, (size_t)(2 * (n / 2 + 1)), &ps->tw[k]);
            if (rc) goto done;
        }
    }
    for (int64_t r = 0; r < rows; r++) {
        int64_t idx[3];
        decode(ps, 1, r * ps->n[L], idx);
        double s = 0.0;
        for (int k = 0; k < nd; k++)
            if (k != L) s += host[k][idx[k]];
        rev[r] = s;
    }
    rc = upload(ps, rev, (size_t)rows, &ps->row_ev);
    if (rc || M < 0) goto done;
    for (int64_t t = 0; t < tlines; t++) {
        int64_t o = t / ps->tri_inner, i = t % ps->tri_inner, idx[3];
        decode(ps, ps->tri_in_c, o * ps->n[M] * ps->tri_inner + i, idx);
        double s = 0.0;
        for (int k = 0; k < nd; k++)
            if (k != M) s += host[k][idx[k]];
        sig[t] = s;
    }
    rc = upload(ps, sig, (size_t)tlines, &ps->sigma);
done:
    free(tw), free(rev), free(sig);
    for (int k = 0; k < 3; k++) free(host[k]);
    return rc;
}

int hs_poisson_dct4_layout(const hs_poisson *ps, int *side, const double **tw4)
{
    if (!ps || !ps->dct4) return 0;
    *side = ps->dct4, *tw4 = ps->tw[0];
    return 1;
}

int hs_poisson_divide_hooked(const hs_poisson *ps) { return ps && hs_fft_plan_hooked(ps->c2r[ps->L]); }

/* Whether to try the hook: only where HS_POISSON_HOOK=1 asks.  Measured on an H100 (bench_cfd_ns,
 * 4096^2 all-Neumann, 2026-12-06) cuFFT's C2R with the callback linked in took 0.869 ms a solve
 * against 0.728 ms for the plain C2R plus the divide's own pass, and the JIT link 1.0 s at
 * creation: the callback kernels are slower than the pass they save.  Kept for side-by-side
 * measurements on other cards and cuFFT versions. */
static int want_divide_hook(const hs_poisson *ps)
{
    if (!HS_ON_GPU(ps->ctx) || ps->mixed >= 0 || ps->mloc == 0) return 0;
    const char *e = getenv("HS_POISSON_HOOK");
    return e && atoi(e) == 1;
}

/* L's C2R with the spectral divide as its load hook (poisson_hook_lto.cu); a plain plan where the
 * hook is not wanted or cuFFT does not take it (spectral_solve then divides in a pass of its own). */
static int make_c2r_last(hs_poisson *ps, int64_t lines)
{
    int L = ps->L;
    if (want_divide_hook(ps)) {
        hs_fft_load_hook hook = {0};
        HS_CHECK(HS_DISPATCH(ps->ctx, HS_OK, hs_poisson_divide_hook_cuda(&hook.symbol, &hook.lto_ir, &hook.lto_ir_size)));
        if (hook.lto_ir_size) {
            hs_poisson_hook_info h = {.n = ps->n[L], .half = ps->n[L] / 2 + 1, .dct = ps->kind[L] != DIM_FFT,
                                      .tw = ps->tw[L], .scale = ps->scale, .row_ev = ps->row_ev, .ev = ps->ev[L]};
            HS_CHECK(hs_mem_alloc(ps->ctx, sizeof h, (void **)&ps->hook_info));
            HS_CHECK(hs_mem_copy(ps->ctx, ps->hook_info, &h, sizeof h, HS_COPY_H2D));
            hook.info = ps->hook_info;
            return hs_fft_plan_create_hooked(ps->ctx, 1, &ps->n[L], lines, HS_FFT_C2R, HS_F64, &hook, &ps->c2r[L]);
        }
    }
    return hs_fft_plan_create(ps->ctx, 1, &ps->n[L], lines, HS_FFT_C2R, HS_F64, &ps->c2r[L]);
}

/* Whether the plane solve's column work runs as one CUDA kernel: on the GPU, for the column lengths
 * the kernel takes, unless HS_POISSON_COLUMNS=0 asks for the cuFFT column transforms and the
 * divide apart (comparisons). */
static int want_fused_columns(const hs_poisson *ps)
{
    if (!HS_ON_GPU(ps->ctx) || !hs_poisson_column_fits(ps->tn[1])) return 0;
    const char *e = getenv("HS_POISSON_COLUMNS");
    return !(e && atoi(e) == 0);
}

/* The plane solve's plans (rows: n1 R2C / C2R of n0; columns: h0 C2C of n1, stride h0, in place;
 * the transforms' lengths tn) and the fused kernel's twiddles; *ccap the complex buffer's size in
 * doubles. */
static int make_plane_plans(hs_poisson *ps, int64_t *ccap)
{
    const int64_t n1 = ps->tn[1], n0 = ps->tn[0];
    const int64_t h0 = hs_poisson_plane_cols(n0, ps->dct4 ? HS_POISSON_PLANE_DCT4 : HS_POISSON_PLANE_DCT);
    if (ps->dct4) HS_CHECK(hs_fft_plan_create(ps->ctx, 1, &h0, n1, HS_FFT_C2C, HS_F64, &ps->rows4));
    else {
        HS_CHECK(hs_fft_plan_create(ps->ctx, 1, &ps->tn[0], n1, HS_FFT_R2C, HS_F64, &ps->r2c_rows));
        HS_CHECK(hs_fft_plan_create(ps->ctx, 1, &ps->tn[0], n1, HS_FFT_C2R, HS_F64, &ps->c2r_rows));
    }
    ps->fused_columns = want_fused_columns(ps);
    if (!ps->fused_columns) HS_CHECK(hs_fft_plan_create_strided(ps->ctx, n1, h0, h0, 1, 1, 0, HS_F64, &ps->columns));
    else {
        double *w = malloc((size_t)(2 * n1) * sizeof *w);
        if (!w) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory for a Poisson solver's tables");
        for (int64_t t = 0; t < n1; t++) w[2 * t] = cos(2.0 * M_PI * (double)t / (double)n1), w[2 * t + 1] = -sin(2.0 * M_PI * (double)t / (double)n1);
        int rc = upload(ps, w, (size_t)(2 * n1), &ps->col_tw);
        free(w);
        HS_CHECK(rc);
    }
    *ccap = 2 * n1 * h0;
    return HS_OK;
}

/* FFT plans per transformed dimension, and the work buffers. */
static int make_plans_buffers(hs_poisson *ps)
{
    int nd = ps->ndim, L = ps->L;
    int64_t cap = ps->nlocal, ccap = ps->P * ps->block;
    if (ps->plane) {
        HS_CHECK(make_plane_plans(ps, &ccap));
        if (ps->tn[0] * ps->tn[1] > cap) cap = ps->tn[0] * ps->tn[1]; /* u holds the extended plane */
    }
    if (ps->mloc * ps->n[L] > cap) cap = ps->mloc * ps->n[L];
    if (ps->P * ps->block > cap) cap = ps->P * ps->block;
    for (int k = 0; k < (ps->plane ? 0 : nd); k++) { /* the line plans */
        if (ps->kind[k] == DIM_MIXED) continue;
        int64_t lines = k == L ? ps->mloc : ps->nlocal / ps->n[k];
        ps->lines[k] = lines;
        HS_CHECK(hs_fft_plan_create(ps->ctx, 1, &ps->n[k], lines, HS_FFT_R2C, HS_F64, &ps->r2c[k]));
        if (k == L) HS_CHECK(make_c2r_last(ps, lines));
        else HS_CHECK(hs_fft_plan_create(ps->ctx, 1, &ps->n[k], lines, HS_FFT_C2R, HS_F64, &ps->c2r[k]));
        if (2 * lines * (ps->n[k] / 2 + 1) > ccap) ccap = 2 * lines * (ps->n[k] / 2 + 1);
    }
    /* the plane solve uses no second real array, and DCT4 not even the first (cw only) */
    const int64_t ucap = ps->plane && ps->dct4 ? 0 : cap, wcap = ps->plane ? 0 : cap;
    HS_CHECK(hs_mem_alloc(ps->ctx, (size_t)(ucap ? ucap : 1) * sizeof(double), (void **)&ps->u));
    HS_CHECK(hs_mem_alloc(ps->ctx, (size_t)(wcap ? wcap : 1) * sizeof(double), (void **)&ps->w));
    HS_CHECK(hs_mem_alloc(ps->ctx, (size_t)(ccap ? ccap : 1) * sizeof(double), (void **)&ps->cw));
    return HS_OK;
}

/* Whether a 2D problem on one rank runs as the plane solve (plane_solve): the R2C of the rows, the
 * column transforms, a divide of the pairs of rows (hs_poisson_plane_divide_pair) and the inverse
 * transforms, where the line solve transposes between the dimensions' transforms.  Both
 * dimensions must be cosine/sine transforms or both periodic (the pair formulas do not mix a
 * real FFT with a DCT); a mixed dimension counts as a cosine/sine one: a mixed x of even length by
 * the DCT-IV (HS_POISSON_PLANE_DCT4), another (a mixed y, an odd x) as the cosine transform of its
 * antisymmetric extension, twice as long (HS_POISSON_EXT_*).  The line solve's tridiagonal sweeps
 * run a thread a line, a few thousand threads on a 2D grid: bench_poisson's 4096^2 ND x NN took
 * 3.99 ms on an H100, the extension 1.81 ms and DCT4 0.75 ms (all-Neumann 0.79).
 * HS_POISSON_PLANE=0 in the environment keeps the line solve, HS_POISSON_DCT4=0 the extension
 * (comparisons). */
static int want_plane(const hs_poisson *ps)
{
    if (ps->ndim != 2 || ps->P != 1) return 0;
    const int dct0 = ps->kind[0] != DIM_FFT, dct1 = ps->kind[1] != DIM_FFT;
    if (dct0 != dct1) return 0;
    const char *e = getenv("HS_POISSON_PLANE");
    return !(e && atoi(e) == 0);
}

static int setup(hs_poisson *ps, const hs_poisson_bc bc[3][2], const double dx[3])
{
    hs_decomp *d = ps->d;
    int nd = d->ndim;
    ps->ndim = nd, ps->L = nd - 1, ps->mixed = -1, ps->singular = 1;
    ps->P = d->procs[ps->L], ps->me = d->coords[ps->L];
    ps->scale = 1.0;
    ps->mtot = 1;
    ps->nlocal = d->local[0] * d->local[1] * d->local[2];
    for (int k = 0; k < 3; k++) {
        ps->n[k] = k < nd ? d->global[k] : 1;
        ps->dx[k] = k < nd ? dx[k] : 1.0;
        for (int s = 0; s < 2; s++) {
            hs_poisson_bc b = k < nd ? bc[k][s] : HS_POISSON_PERIODIC;
            ps->gbc[k][s].kind = b == HS_POISSON_PERIODIC ? HS_BC_PERIODIC
                                 : b == HS_POISSON_NEUMANN ? HS_BC_NEUMANN : HS_BC_DIRICHLET;
            if (k < nd && b == HS_POISSON_DIRICHLET) ps->singular = 0;
        }
        if (k >= nd) continue;
        if (bc[k][0] != bc[k][1]) ps->kind[k] = DIM_MIXED, ps->mixed = k;
        else ps->kind[k] = bc[k][0] == HS_POISSON_PERIODIC ? DIM_FFT : bc[k][0] == HS_POISSON_NEUMANN ? DIM_COS : DIM_SIN;
        if (ps->kind[k] != DIM_MIXED) ps->scale /= (double)ps->n[k];
        if (k < ps->L) ps->mtot *= ps->n[k];
    }
    ps->lloc = d->local[ps->L], ps->loff = d->offset[ps->L];
    for (int k = 0; k < 3; k++) ps->tn[k] = ps->n[k];
    ps->plane = want_plane(ps);
    if (ps->plane && ps->mixed >= 0) {
        /* a mixed x of even length by the DCT-IV (DCT4), else the mixed dimension as the cosine
         * transform of its extension; HS_POISSON_DCT4=0 takes the extension (comparisons) */
        int M = ps->mixed, side = bc[M][1] == HS_POISSON_DIRICHLET ? HS_POISSON_EXT_HIGH : HS_POISSON_EXT_LOW;
        const char *e = getenv("HS_POISSON_DCT4");
        if (M == 0 && ps->n[0] % 2 == 0 && !(e && atoi(e) == 0)) {
            ps->dct4 = side;
            ps->scale *= 2.0 / (double)ps->n[0];
        } else {
            ps->ext[M] = side;
            ps->tn[M] = 2 * ps->n[M];
            ps->scale /= (double)ps->tn[M];
        }
        ps->mixed = -1;
    }
    HS_CHECK(make_splits(ps));
    if (!ps->plane) make_steps(ps);
    HS_CHECK(make_tables(ps));
    HS_CHECK(make_plans_buffers(ps));
    if (ps->P > 1) HS_CHECK(hs_comm_create(ps->ctx, &ps->comm));
    HS_CHECK(hs_field_create(d, HS_F64, 1, &ps->fld));
    return HS_OK;
}

int hs_poisson_create(hs_decomp *d, const hs_poisson_bc bc[3][2], const double dx[3], hs_poisson **out)
{
    if (!out) return hs_input_error("poisson", 0, NULL, "solver output pointer is NULL");
    *out = NULL;
    HS_CHECK(check_args(d, bc, dx));
    hs_poisson *ps = calloc(1, sizeof *ps);
    if (!ps) return HS_FAIL(HS_ERR_RUNTIME, "out of host memory for a Poisson solver");
    ps->d = d;
    ps->ctx = d->ctx;
    int rc = setup(ps, bc, dx);
    if (rc != HS_OK) {
        hs_poisson_destroy(ps);
        return hs_error_trace(rc, __FILE__, __LINE__, "Poisson solver plan");
    }
    *out = ps;
    return HS_OK;
}

void hs_poisson_destroy(hs_poisson *ps)
{
    if (!ps) return;
    hs_ctx *ctx = ps->ctx;
    hs_ctx_sync(ctx); /* queued steps may still use the buffers */
    for (int k = 0; k < 3; k++) {
        hs_fft_plan_destroy(ps->r2c[k]);
        hs_fft_plan_destroy(ps->c2r[k]);
        hs_mem_free(ctx, ps->tw[k]);
        hs_mem_free(ctx, ps->ev[k]);
    }
    hs_fft_plan_destroy(ps->r2c_rows);
    hs_fft_plan_destroy(ps->rows4);
    hs_fft_plan_destroy(ps->c2r_rows);
    hs_fft_plan_destroy(ps->columns);
    hs_mem_free(ctx, ps->col_tw);
    hs_mem_free(ctx, ps->row_ev);
    hs_mem_free(ctx, ps->sigma);
    hs_mem_free(ctx, ps->hook_info);
    hs_mem_free(ctx, ps->u);
    hs_mem_free(ctx, ps->w);
    hs_mem_free(ctx, ps->cw);
    hs_field_destroy(ps->fld);
    hs_comm_destroy(ps->comm);
    free(ps->lcnt);
    free(ps);
}
