/* Smoothed-aggregation AMG: host setup (strength, aggregation, QR tentative prolongation, smoothing, Galerkin products) and the device V-cycle. */
#include "kernels/sparse/amg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/blas/blas.h"
#include "kernels/memory.h"

#ifdef _OPENMP
#include <omp.h>
#endif

#define AMG_MAX_LEVELS 40
/* nodes per aggregate above which a level's threshold is raised: aggregates of ~100 nodes make the
 * coarse space too poor (21 iterations on the 60^3 P1 box instead of 11), while the ~48-node
 * aggregates that P2 matrices form naturally are worth keeping: forcing them down to 30 made the
 * coarse operators dense (operator complexity 2.6 instead of 1.07, a setup 7x longer) for 14
 * iterations instead of 18 */
#define AMG_MAX_RATIO 50.0
#define OOM() HS_FAIL(HS_ERR_RUNTIME, "out of host memory in the AMG setup")

hs_amg_opts hs_amg_default_opts(void)
{
    hs_amg_opts o = {0.02, 1, 0, NULL, 3, 30.0, 25, 300};
    return o;
}

/* ------------------------------------------------------------------ host CSR */

typedef struct {
    int64_t n, m; /* rows, columns */
    int64_t *rp;
    int32_t *ci;
    double *v;
} hmat;

static void hmat_free(hmat *A)
{
    free(A->rp), free(A->ci), free(A->v);
    memset(A, 0, sizeof *A);
}

static int hmat_alloc(hmat *A, int64_t n, int64_t m, int64_t nnz)
{
    A->n = n, A->m = m;
    A->rp = calloc((size_t)n + 1, sizeof(int64_t));
    A->ci = malloc((size_t)(nnz ? nnz : 1) * sizeof(int32_t));
    A->v = malloc((size_t)(nnz ? nnz : 1) * sizeof(double));
    return A->rp && A->ci && A->v ? HS_OK : OOM();
}

/* T = A^T with sorted columns: each thread takes a contiguous block of A's rows, counts its entries
 * per column, and fills its own slots of every row of T, so the result is the same whatever the
 * thread count. */
static int hmat_transpose(const hmat *A, hmat *T)
{
    int64_t nnz = A->rp[A->n], m = A->m;
    HS_CHECK(hmat_alloc(T, A->m, A->n, nnz));
    int nt = 1;
#ifdef _OPENMP
    if (A->n > 20000) nt = omp_get_max_threads();
#endif
    int64_t *cnt = calloc((size_t)nt * (size_t)(m + 1), sizeof(int64_t));
    if (!cnt) return OOM();
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
        int t = 0;
#ifdef _OPENMP
        t = omp_get_thread_num();
#endif
        int64_t r0 = A->n * t / nt, r1 = A->n * (t + 1) / nt, *c = cnt + (size_t)t * (size_t)(m + 1);
        for (int64_t k = A->rp[r0]; k < A->rp[r1]; k++) c[A->ci[k]]++;
#pragma omp barrier
#pragma omp for schedule(static)
        for (int64_t j = 0; j < m; j++) {
            int64_t s = 0;
            for (int q = 0; q < nt; q++) {
                int64_t x = cnt[(size_t)q * (size_t)(m + 1) + j];
                cnt[(size_t)q * (size_t)(m + 1) + j] = s;
                s += x;
            }
            T->rp[j + 1] = s;
        }
#pragma omp single
        for (int64_t j = 0; j < m; j++) T->rp[j + 1] += T->rp[j];
        /* rows in order within the block, blocks in thread order: the columns of T come out sorted */
        for (int64_t i = r0; i < r1; i++)
            for (int64_t k = A->rp[i]; k < A->rp[i + 1]; k++) {
                int32_t j = A->ci[k];
                int64_t p = T->rp[j] + c[j]++;
                T->ci[p] = (int32_t)i;
                T->v[p] = A->v[k];
            }
    }
    free(cnt);
    return HS_OK;
}

/* C = A B (Gustavson, rows in parallel, two passes; columns in the order first met, not sorted). */
static int hmat_mul(const hmat *A, const hmat *B, hmat *C)
{
    int64_t n = A->n, m = B->m;
    C->n = n, C->m = m;
    C->rp = calloc((size_t)n + 1, sizeof(int64_t));
    if (!C->rp) return OOM();
    int err = 0;
#pragma omp parallel reduction(| : err) if (n > 20000)
    {
        int32_t *mark = malloc((size_t)(m ? m : 1) * sizeof(int32_t));
        if (!mark) err = 1;
        else
            for (int64_t j = 0; j < m; j++) mark[j] = -1;
#pragma omp for schedule(dynamic, 512)
        for (int64_t i = 0; i < n; i++) {
            if (!mark) continue;
            int64_t cnt = 0;
            for (int64_t ka = A->rp[i]; ka < A->rp[i + 1]; ka++) {
                int32_t r = A->ci[ka];
                for (int64_t kb = B->rp[r]; kb < B->rp[r + 1]; kb++)
                    if (mark[B->ci[kb]] != (int32_t)(i & 0x7fffffff)) mark[B->ci[kb]] = (int32_t)(i & 0x7fffffff), cnt++;
            }
            C->rp[i + 1] = cnt;
        }
        free(mark);
    }
    if (err) return OOM();
    for (int64_t i = 0; i < n; i++) C->rp[i + 1] += C->rp[i];
    int64_t nnz = C->rp[n];
    C->ci = malloc((size_t)(nnz ? nnz : 1) * sizeof(int32_t));
    C->v = malloc((size_t)(nnz ? nnz : 1) * sizeof(double));
    if (!C->ci || !C->v) return OOM();
#pragma omp parallel reduction(| : err) if (n > 20000)
    {
        int64_t *pos = malloc((size_t)(m ? m : 1) * sizeof(int64_t));
        if (!pos) err = 1;
        else
            for (int64_t j = 0; j < m; j++) pos[j] = -1;
#pragma omp for schedule(dynamic, 512)
        for (int64_t i = 0; i < n; i++) {
            if (!pos) continue;
            int64_t start = C->rp[i], k = start;
            for (int64_t ka = A->rp[i]; ka < A->rp[i + 1]; ka++) {
                int32_t r = A->ci[ka];
                double a = A->v[ka];
                for (int64_t kb = B->rp[r]; kb < B->rp[r + 1]; kb++) {
                    int32_t c = B->ci[kb];
                    if (pos[c] < start) {
                        pos[c] = k;
                        C->ci[k] = c;
                        C->v[k++] = a * B->v[kb];
                    } else {
                        C->v[pos[c]] += a * B->v[kb];
                    }
                }
            }
        }
        free(pos);
    }
    return err ? OOM() : HS_OK;
}

/* ------------------------------------------------------------------ setup pieces */

static int diag_of(const hmat *A, double *d)
{
#pragma omp parallel for schedule(static) if (A->n > 20000)
    for (int64_t i = 0; i < A->n; i++) {
        d[i] = 0;
        for (int64_t k = A->rp[i]; k < A->rp[i + 1]; k++)
            if (A->ci[k] == i) d[i] += A->v[k];
    }
    return HS_OK;
}

/* Largest eigenvalue of the symmetric tridiagonal matrix (a, b) of order k by bisection on Sturm
 * counts. */
static double tridiag_max(const double *a, const double *b, int k)
{
    double lo = INFINITY, hi = -INFINITY;
    for (int i = 0; i < k; i++) {
        double r = (i > 0 ? fabs(b[i - 1]) : 0) + (i + 1 < k ? fabs(b[i]) : 0);
        lo = fmin(lo, a[i] - r), hi = fmax(hi, a[i] + r);
    }
    for (int it = 0; it < 100 && hi - lo > 1e-12 * fabs(hi); it++) {
        double x = 0.5 * (lo + hi), d = 1;
        int below = 0; /* eigenvalues below x */
        for (int i = 0; i < k; i++) {
            d = a[i] - x - (i > 0 ? b[i - 1] * b[i - 1] / d : 0.0);
            if (d == 0) d = -1e-300;
            below += d < 0;
        }
        if (below == k) hi = x;
        else lo = x;
    }
    return hi;
}

/* rho(D^-1 A) by 20 Lanczos steps on D^-1/2 A D^-1/2 from a fixed start (deterministic): the
 * largest Ritz value, which approaches rho from below much faster than power iterations do. */
static double spectral_radius(const hmat *A, const double *dinv)
{
    int64_t n = A->n;
    if (n == 0) return 1.0;
    enum { K = 20 };
    double *v = malloc((size_t)n * sizeof(double)), *vp = calloc((size_t)n, sizeof(double)), *w = malloc((size_t)n * sizeof(double));
    double *sq = malloc((size_t)n * sizeof(double));
    double al[K], be[K];
    int k = 0;
    if (!v || !vp || !w || !sq) {
        free(v), free(vp), free(w), free(sq);
        return 2.0;
    }
    double nrm = 0;
#pragma omp parallel for schedule(static) reduction(+ : nrm) if (n > 20000)
    for (int64_t i = 0; i < n; i++) {
        sq[i] = sqrt(fabs(dinv[i]));
        v[i] = 1.0 + 0.5 * sin(0.7 * (double)i + 0.3);
        nrm += v[i] * v[i];
    }
    nrm = sqrt(nrm);
#pragma omp parallel for schedule(static) if (n > 20000)
    for (int64_t i = 0; i < n; i++) v[i] /= nrm;
    double beta = 0;
    for (k = 0; k < K && k < n; k++) {
        double alpha = 0, bb = 0;
#pragma omp parallel for schedule(static) reduction(+ : alpha) if (n > 20000)
        for (int64_t i = 0; i < n; i++) {
            double s = 0;
            for (int64_t q = A->rp[i]; q < A->rp[i + 1]; q++) s += A->v[q] * sq[A->ci[q]] * v[A->ci[q]];
            w[i] = sq[i] * s - beta * vp[i];
            alpha += w[i] * v[i];
        }
#pragma omp parallel for schedule(static) reduction(+ : bb) if (n > 20000)
        for (int64_t i = 0; i < n; i++) {
            w[i] -= alpha * v[i];
            bb += w[i] * w[i];
        }
        al[k] = alpha;
        beta = sqrt(bb);
        be[k] = beta;
        if (!(beta > 1e-12 * fabs(alpha))) {
            k++;
            break;
        }
#pragma omp parallel for schedule(static) if (n > 20000)
        for (int64_t i = 0; i < n; i++) {
            vp[i] = v[i];
            v[i] = w[i] / beta;
        }
    }
    double lam = tridiag_max(al, be, k);
    free(v), free(vp), free(w), free(sq);
    return lam > 0 ? lam : 1.0;
}

/* Node connection graph (node = block of bs rows), as a host CSR matrix G (nn x nn): per node a,
 * its neighbours b != a with the strength ratio ||A_ab||_F / sqrt(||A_aa||_F ||A_bb||_F) as values;
 * a connection is strong when its ratio is at least theta.  Built once per level in two parallel
 * passes (count, fill), so that raising theta only repeats the greedy aggregation, not the pass
 * over the matrix. */

/* Neighbours of node a with their summed squared entries (each times `scale`) into (list, acc),
 * which have room for the node's entries; mark is the thread's scratch of nn entries (-1 where
 * unused, left so). */
static int64_t node_neighbours(const hmat *A, int bs, int64_t a, double scale, int32_t *mark, int32_t *list, double *acc)
{
    int64_t nl = 0;
    for (int64_t i = a * bs; i < (a + 1) * bs; i++)
        for (int64_t k = A->rp[i]; k < A->rp[i + 1]; k++) {
            int32_t b = A->ci[k] / bs;
            if (b == a) continue;
            if (mark[b] < 0) mark[b] = (int32_t)nl, list[nl] = b, acc[nl++] = 0;
            const double v = A->v[k] * scale;
            acc[mark[b]] += v * v + 1e-300;
        }
    for (int64_t q = 0; q < nl; q++) mark[list[q]] = -1;
    return nl;
}

static int node_graph_build(const hmat *A, int bs, hmat *G)
{
    int64_t nn = A->n / bs;
    memset(G, 0, sizeof *G);
    G->n = G->m = nn;
    /* the ratios are scale-free, but squares of entries past 1e154 overflowed: every ratio was
     * inf/inf = NaN, nothing coarsened, and the dense coarsest inverse of all the unknowns took a
     * minute (a fem.dt of 1e300).  Entries are scaled by a power of two near 1/max|a|, which
     * changes no ratio of an ordinary matrix by a bit. */
    double amax = 0;
    for (int64_t k = 0; k < A->rp[A->n]; k++) amax = fmax(amax, fabs(A->v[k]));
    int e = 0;
    if (amax > 0 && isfinite(amax)) frexp(amax, &e);
    const double scale = ldexp(1.0, -e);
    /* block Frobenius norms of the node diagonal */
    double *dn = calloc((size_t)(nn ? nn : 1), sizeof(double));
    G->rp = calloc((size_t)nn + 1, sizeof(int64_t));
    if (!dn || !G->rp) {
        free(dn);
        return OOM();
    }
#pragma omp parallel for schedule(static) if (nn > 20000)
    for (int64_t a = 0; a < nn; a++) {
        double s = 0;
        for (int64_t i = a * bs; i < (a + 1) * bs; i++)
            for (int64_t k = A->rp[i]; k < A->rp[i + 1]; k++)
                if (A->ci[k] / bs == a) s += (A->v[k] * scale) * (A->v[k] * scale);
        dn[a] = s;
    }
    /* a node has at most as many neighbours as its rows have entries */
    int64_t maxdeg = 0;
    for (int64_t a = 0; a < nn; a++) maxdeg = A->rp[(a + 1) * bs] - A->rp[a * bs] > maxdeg ? A->rp[(a + 1) * bs] - A->rp[a * bs] : maxdeg;
    int err = 0;
    for (int pass = 0; pass < 2 && !err; pass++) {
        if (pass == 1) {
            for (int64_t a = 0; a < nn; a++) G->rp[a + 1] += G->rp[a];
            G->ci = malloc((size_t)(G->rp[nn] ? G->rp[nn] : 1) * sizeof(int32_t));
            G->v = malloc((size_t)(G->rp[nn] ? G->rp[nn] : 1) * sizeof(double));
            if (!G->ci || !G->v) {
                err = 1;
                break;
            }
        }
#pragma omp parallel reduction(| : err) if (nn > 20000)
        {
            int32_t *mark = malloc((size_t)(nn ? nn : 1) * sizeof(int32_t));
            int32_t *list = malloc((size_t)(maxdeg ? maxdeg : 1) * sizeof(int32_t));
            double *acc = malloc((size_t)(maxdeg ? maxdeg : 1) * sizeof(double));
            if (!mark || !list || !acc) err = 1;
            else
                for (int64_t b = 0; b < nn; b++) mark[b] = -1;
#pragma omp for schedule(dynamic, 256)
            for (int64_t a = 0; a < nn; a++) {
                if (!mark || !list || !acc) continue;
                int64_t nl = node_neighbours(A, bs, a, scale, mark, list, acc);
                if (pass == 0) {
                    G->rp[a + 1] = nl;
                    continue;
                }
                for (int64_t q = 0; q < nl; q++) {
                    int32_t b = list[q];
                    G->ci[G->rp[a] + q] = b;
                    G->v[G->rp[a] + q] = sqrt(acc[q]) / sqrt(sqrt(dn[a]) * sqrt(dn[b]));
                }
            }
            free(mark), free(list), free(acc);
        }
    }
    free(dn);
    if (err) {
        hmat_free(G);
        return OOM();
    }
    return HS_OK;
}

/* Greedy aggregation on the strong connections of G: agg[node] = aggregate or -1 (isolated). */
static int aggregate(const hmat *G, double theta, int32_t *agg, int64_t *nagg)
{
    int64_t nn = G->n;
    const int64_t *sp = G->rp;
    const int32_t *sj = G->ci;
    const double *sr = G->v;
    char *has = malloc((size_t)(nn ? nn : 1));
    int32_t *p1 = malloc((size_t)(nn ? nn : 1) * sizeof(int32_t));
    if (!has || !p1) {
        free(has), free(p1);
        return OOM();
    }
#pragma omp parallel for schedule(static) if (nn > 20000)
    for (int64_t a = 0; a < nn; a++) {
        char h = 0;
        for (int64_t k = sp[a]; k < sp[a + 1] && !h; k++) h = sr[k] >= theta;
        has[a] = h;
        agg[a] = -1;
    }
    /* phase 1: a node whose strong neighbours are all free starts an aggregate with them */
    int64_t na = 0;
    for (int64_t a = 0; a < nn; a++) {
        if (agg[a] >= 0 || !has[a]) continue;
        int free_all = 1;
        for (int64_t k = sp[a]; k < sp[a + 1] && free_all; k++) free_all = sr[k] < theta || agg[sj[k]] < 0;
        if (!free_all) continue;
        agg[a] = (int32_t)na;
        for (int64_t k = sp[a]; k < sp[a + 1]; k++)
            if (sr[k] >= theta) agg[sj[k]] = (int32_t)na;
        na++;
    }
    /* phase 2: join a neighbouring aggregate (the first strong neighbour's, from phase 1) */
    memcpy(p1, agg, (size_t)nn * sizeof(int32_t));
#pragma omp parallel for schedule(static) if (nn > 20000)
    for (int64_t a = 0; a < nn; a++) {
        if (p1[a] >= 0) continue;
        for (int64_t k = sp[a]; k < sp[a + 1]; k++)
            if (sr[k] >= theta && p1[sj[k]] >= 0) {
                agg[a] = p1[sj[k]];
                break;
            }
    }
    free(p1);
    /* phase 3: what is left forms aggregates with its free strong neighbours; isolated nodes stay out */
    for (int64_t a = 0; a < nn; a++) {
        if (agg[a] >= 0 || !has[a]) continue;
        agg[a] = (int32_t)na;
        for (int64_t k = sp[a]; k < sp[a + 1]; k++)
            if (sr[k] >= theta && agg[sj[k]] < 0) agg[sj[k]] = (int32_t)na;
        na++;
    }
    free(has);
    *nagg = na;
    return HS_OK;
}

/* Tentative prolongation: per aggregate, the rows of its nodes' unknowns times the near-null space
 * B (nrow x k, column j at j * n), orthonormalised by modified Gram-Schmidt (Q into P, R into the
 * coarse near-null space Bc, column j at j * nc).  A column that depends on the earlier ones is set
 * to zero (its coarse unknown is then decoupled and fixed to zero). */
static int tentative(int64_t n, int bs, int k, const double *B, const int32_t *agg, int64_t na, hmat *P, double *Bc)
{
    int64_t nn = n / bs, nc = na * k;
    /* rows of each aggregate */
    int64_t *ap = calloc((size_t)na + 1, sizeof(int64_t)), *rows = malloc((size_t)(n ? n : 1) * sizeof(int64_t));
    if (!ap || !rows) {
        free(ap), free(rows);
        return OOM();
    }
    for (int64_t a = 0; a < nn; a++)
        if (agg[a] >= 0) ap[agg[a] + 1] += bs;
    for (int64_t g = 0; g < na; g++) ap[g + 1] += ap[g];
    int64_t *fill = malloc((size_t)(na + 1) * sizeof(int64_t));
    if (!fill) {
        free(ap), free(rows);
        return OOM();
    }
    memcpy(fill, ap, (size_t)(na + 1) * sizeof(int64_t));
    for (int64_t a = 0; a < nn; a++)
        if (agg[a] >= 0)
            for (int c = 0; c < bs; c++) rows[fill[agg[a]]++] = a * bs + c;
    free(fill);
    int rc = hmat_alloc(P, n, nc, ap[na] * k);
    if (rc == HS_OK) {
        /* every aggregated row has k entries, the others none */
        for (int64_t i = 0; i < n; i++) P->rp[i + 1] = agg[i / bs] >= 0 ? k : 0;
        for (int64_t i = 0; i < n; i++) P->rp[i + 1] += P->rp[i];
        for (int64_t i = 0; i < nc * k; i++) Bc[i] = 0;
#pragma omp parallel for schedule(dynamic, 64) if (na > 5000)
        for (int64_t g = 0; g < na; g++) {
            int64_t m = ap[g + 1] - ap[g];
            const int64_t *r = rows + ap[g];
            for (int j = 0; j < k; j++) {
                /* column j of the block, then minus its projections on the earlier columns */
                for (int64_t t = 0; t < m; t++) P->v[P->rp[r[t]] + j] = B ? B[(int64_t)j * n + r[t]] : (r[t] % bs == j % bs ? 1.0 : 0.0);
                double n0 = 0;
                for (int64_t t = 0; t < m; t++) n0 += P->v[P->rp[r[t]] + j] * P->v[P->rp[r[t]] + j];
                for (int i = 0; i < j; i++) {
                    double dot = 0;
                    for (int64_t t = 0; t < m; t++) dot += P->v[P->rp[r[t]] + i] * P->v[P->rp[r[t]] + j];
                    for (int64_t t = 0; t < m; t++) P->v[P->rp[r[t]] + j] -= dot * P->v[P->rp[r[t]] + i];
                    Bc[(int64_t)j * nc + g * k + i] = dot;
                }
                double nrm = 0;
                for (int64_t t = 0; t < m; t++) nrm += P->v[P->rp[r[t]] + j] * P->v[P->rp[r[t]] + j];
                nrm = sqrt(nrm);
                if (!(nrm > 1e-10 * sqrt(n0)) || nrm == 0) {
                    for (int64_t t = 0; t < m; t++) P->v[P->rp[r[t]] + j] = 0;
                    nrm = 0;
                } else {
                    for (int64_t t = 0; t < m; t++) P->v[P->rp[r[t]] + j] /= nrm;
                }
                Bc[(int64_t)j * nc + g * k + j] = nrm;
            }
            for (int64_t t = 0; t < m; t++)
                for (int j = 0; j < k; j++) P->ci[P->rp[r[t]] + j] = (int32_t)(g * k + j);
        }
    }
    free(ap), free(rows);
    return rc;
}

/* P = P_t - omega D^-1 A P_t. */
static int smooth_prolongation(const hmat *A, const double *dinv, double omega, const hmat *Pt, hmat *P)
{
    HS_CHECK(hmat_mul(A, Pt, P));
    int err = 0;
#pragma omp parallel reduction(| : err) if (P->n > 20000)
    {
        int64_t *pos = malloc((size_t)(P->m ? P->m : 1) * sizeof(int64_t));
        if (!pos) err = 1;
        else
            for (int64_t j = 0; j < P->m; j++) pos[j] = -1;
#pragma omp for schedule(dynamic, 512)
        for (int64_t i = 0; i < P->n; i++) {
            if (!pos) continue;
            int64_t s = P->rp[i], e = P->rp[i + 1];
            for (int64_t k = s; k < e; k++) {
                P->v[k] *= -omega * dinv[i];
                pos[P->ci[k]] = k;
            }
            /* A has its diagonal, so A P_t holds every entry of P_t's pattern */
            for (int64_t k = Pt->rp[i]; k < Pt->rp[i + 1]; k++)
                if (pos[Pt->ci[k]] >= s) P->v[pos[Pt->ci[k]]] += Pt->v[k];
        }
        free(pos);
    }
    return err ? OOM() : HS_OK;
}

/* ------------------------------------------------------------------ the hierarchy */

typedef struct {
    int64_t n;
    hs_csr *A;        /* level 0: the caller's matrix */
    int own_A;
    hs_csr *P, *R;    /* to the next level */
    double *dinv;     /* device */
    double lmax, lmin;
    double *r, *d, *t, *x, *b; /* device work: residual, step, scratch, solution, right side */
    int64_t nnz;
} level;

typedef struct {
    hs_ctx *ctx;
    hs_amg_opts o;
    int nlev;
    level lev[AMG_MAX_LEVELS];
    hs_csr *cinv;     /* dense inverse of the coarsest operator, as a CSR matrix with every entry */
    int64_t nc;
    double setup_s;
    /* setup phases (s): download, level scaling and spectrum, aggregation, tentative and smoothed
     * prolongation, transpose, Galerkin product, upload, coarse inverse */
    double t_phase[8];
} amg;

static void amg_free(void *data)
{
    amg *g = data;
    if (!g) return;
    for (int l = 0; l < g->nlev; l++) {
        level *v = &g->lev[l];
        if (v->own_A) hs_csr_destroy(v->A);
        hs_csr_destroy(v->P);
        hs_csr_destroy(v->R);
        hs_mem_free(g->ctx, v->dinv), hs_mem_free(g->ctx, v->r), hs_mem_free(g->ctx, v->d), hs_mem_free(g->ctx, v->t);
        hs_mem_free(g->ctx, v->x), hs_mem_free(g->ctx, v->b);
    }
    hs_csr_destroy(g->cinv);
    free(g);
}

static int to_device(hs_ctx *ctx, const hmat *H, hs_csr **A)
{
    int64_t nnz = H->rp[H->n];
    if (nnz > 2147483647LL) return HS_FAIL(HS_ERR_RUNTIME, "AMG: a level has more than 2^31 entries");
    int32_t *rp = malloc((size_t)(H->n + 1) * sizeof(int32_t));
    if (!rp) return OOM();
    for (int64_t i = 0; i <= H->n; i++) rp[i] = (int32_t)H->rp[i];
    int rc = hs_csr_create(ctx, H->n, H->m, nnz, rp, H->ci, H->v, A);
    free(rp);
    return rc;
}

static int from_device(hs_csr *A, hmat *H)
{
    HS_CHECK(hmat_alloc(H, A->nrows, A->ncols, A->nnz));
    int32_t *rp = malloc((size_t)(A->nrows + 1) * sizeof(int32_t));
    if (!rp) return OOM();
    int rc = hs_mem_copy(A->ctx, rp, A->rowptr, (size_t)(A->nrows + 1) * sizeof(int32_t), HS_COPY_D2H);
    if (rc == HS_OK && A->nnz) rc = hs_mem_copy(A->ctx, H->ci, A->colind, (size_t)A->nnz * sizeof(int32_t), HS_COPY_D2H);
    if (rc == HS_OK && A->nnz) rc = hs_mem_copy(A->ctx, H->v, A->val, (size_t)A->nnz * sizeof(double), HS_COPY_D2H);
    for (int64_t i = 0; i <= A->nrows; i++) H->rp[i] = rp[i];
    free(rp);
    return rc;
}

/* Level vectors, Jacobi scaling and Chebyshev interval of a level's host matrix. */
static int level_setup(amg *g, level *v, const hmat *H, double *dinv_host)
{
    hs_ctx *ctx = g->ctx;
    v->n = H->n;
    v->nnz = H->rp[H->n];
    double *d = malloc((size_t)(H->n ? H->n : 1) * sizeof(double));
    if (!d) return OOM();
    diag_of(H, d);
    double dmax = 0;
#pragma omp parallel for schedule(static) reduction(max : dmax) if (H->n > 20000)
    for (int64_t i = 0; i < H->n; i++) dmax = fmax(dmax, fabs(d[i]));
    for (int64_t i = 0; i < H->n; i++) {
        /* a coarse unknown whose null-space column was dropped has an empty row: decoupled, left at 0 */
        if (v != g->lev && fabs(d[i]) <= 1e-14 * dmax) {
            dinv_host[i] = 0;
            continue;
        }
        if (!(d[i] > 0)) {
            const double bad = d[i];
            free(d);
            return HS_FAIL(HS_ERR_RUNTIME, "AMG: diagonal entry %lld of level %d is %g: the matrix is not symmetric positive "
                                           "definite", (long long)i, (int)(v - g->lev), bad);
        }
        dinv_host[i] = 1.0 / d[i];
    }
    free(d);
    /* Lanczos approaches rho from below: a smoothing interval that misses the top of the spectrum
     * makes the cycle indefinite, so take a margin, but never above the Gershgorin bound */
    double rho = spectral_radius(H, dinv_host), gersh = 0;
#pragma omp parallel for schedule(static) reduction(max : gersh) if (H->n > 20000)
    for (int64_t i = 0; i < H->n; i++) {
        double sum = 0;
        for (int64_t k = H->rp[i]; k < H->rp[i + 1]; k++) sum += fabs(H->v[k]);
        gersh = fmax(gersh, sum * fabs(dinv_host[i]));
    }
    v->lmax = fmin(1.05 * rho, gersh);
    v->lmin = rho / g->o.cheb_ratio;
    size_t bytes = (size_t)(H->n ? H->n : 1) * sizeof(double);
    HS_CHECK(hs_mem_alloc(ctx, bytes, (void **)&v->dinv));
    HS_CHECK(hs_mem_copy(ctx, v->dinv, dinv_host, (size_t)H->n * sizeof(double), HS_COPY_H2D));
    HS_CHECK(hs_mem_alloc(ctx, bytes, (void **)&v->r));
    HS_CHECK(hs_mem_alloc(ctx, bytes, (void **)&v->d));
    HS_CHECK(hs_mem_alloc(ctx, bytes, (void **)&v->t));
    HS_CHECK(hs_mem_alloc(ctx, bytes, (void **)&v->x));
    HS_CHECK(hs_mem_alloc(ctx, bytes, (void **)&v->b));
    return HS_OK;
}

/* Dense inverse of the coarsest matrix by Cholesky (a zero row, from a dropped null-space
 * column, gets a unit diagonal: that unknown is decoupled). */
static int coarse_inverse(amg *g, const hmat *H)
{
    int64_t n = H->n;
    g->nc = n;
    if (n == 0) return HS_OK;
    double *a = calloc((size_t)(n * n), sizeof(double)), *inv = calloc((size_t)(n * n), sizeof(double));
    if (!a || !inv) {
        free(a), free(inv);
        return OOM();
    }
    for (int64_t i = 0; i < n; i++)
        for (int64_t k = H->rp[i]; k < H->rp[i + 1]; k++) a[i * n + H->ci[k]] += H->v[k];
    double scale = 0;
    for (int64_t i = 0; i < n; i++) scale = fmax(scale, fabs(a[i * n + i]));
    for (int64_t i = 0; i < n; i++)
        if (fabs(a[i * n + i]) <= 1e-14 * scale) {
            for (int64_t j = 0; j < n; j++) a[i * n + j] = a[j * n + i] = 0;
            a[i * n + i] = scale > 0 ? scale : 1.0;
        }
    /* Cholesky a = L L^T in place (lower) */
    int rc = HS_OK;
    for (int64_t j = 0; j < n && rc == HS_OK; j++) {
        double s = a[j * n + j];
        for (int64_t k = 0; k < j; k++) s -= a[j * n + k] * a[j * n + k];
        if (!(s > 0)) {
            rc = HS_FAIL(HS_ERR_RUNTIME, "AMG: the coarsest operator (%lld unknowns) is not positive definite", (long long)n);
            break;
        }
        double ljj = sqrt(s);
        a[j * n + j] = ljj;
#pragma omp parallel for schedule(static) if (n - j > 512)
        for (int64_t i = j + 1; i < n; i++) {
            double t = a[i * n + j];
            for (int64_t k = 0; k < j; k++) t -= a[i * n + k] * a[j * n + k];
            a[i * n + j] = t / ljj;
        }
    }
    /* columns of the inverse: solve L L^T x = e_c */
    if (rc == HS_OK) {
#pragma omp parallel for schedule(dynamic, 4) if (n > 256)
        for (int64_t c = 0; c < n; c++) {
            double *x = inv + c * n;
            for (int64_t i = 0; i < n; i++) {
                double t = i == c ? 1.0 : 0.0;
                for (int64_t k = 0; k < i; k++) t -= a[i * n + k] * x[k];
                x[i] = t / a[i * n + i];
            }
            for (int64_t i = n - 1; i >= 0; i--) {
                double t = x[i];
                for (int64_t k = i + 1; k < n; k++) t -= a[k * n + i] * x[k];
                x[i] = t / a[i * n + i];
            }
        }
    }
    /* applied as a dense CSR matrix through hs_csr_spmv: no BLAS threads competing with OpenMP's
     * for a few hundred unknowns (the inverse is symmetric: row c is column c) */
    if (rc == HS_OK) {
        hmat D = {0};
        rc = hmat_alloc(&D, n, n, n * n);
        for (int64_t i = 0; rc == HS_OK && i < n; i++) {
            D.rp[i + 1] = (i + 1) * n;
            for (int64_t j = 0; j < n; j++) D.ci[i * n + j] = (int32_t)j, D.v[i * n + j] = inv[i * n + j];
        }
        if (rc == HS_OK) rc = to_device(g->ctx, &D, &g->cinv);
        hmat_free(&D);
    }
    free(a), free(inv);
    return rc;
}

static int build(amg *g, hs_csr *A0)
{
    hmat H = {0};
    double *tp = g->t_phase, t = hs_wtime();
#define PHASE(i) (tp[i] += hs_wtime() - t, t = hs_wtime())
    HS_CHECK(from_device(A0, &H));
    PHASE(0);
    /* a value that is not finite (a system that overflowed: fem.dt = 1e300) made every strength
     * NaN, so nothing coarsened and the dense coarsest inverse of all the unknowns took a minute
     * before CG found the NaN: refused here, at once */
    for (int64_t i = 0; i < H.n; i++)
        for (int64_t q = H.rp[i]; q < H.rp[i + 1]; q++)
            if (!isfinite(H.v[q])) {
                int rc = HS_FAIL(HS_ERR_RUNTIME, "AMG: matrix entry (%lld, %d) is %g, not finite", (long long)i, (int)H.ci[q], H.v[q]);
                hmat_free(&H);
                return rc;
            }
    int bs = g->o.block_size, k = g->o.nnull ? g->o.nnull : bs;
    double *B = NULL;
    if (g->o.nullspace) {
        B = malloc((size_t)(H.n * k > 0 ? H.n * k : 1) * sizeof(double));
        if (!B) return OOM();
        memcpy(B, g->o.nullspace, (size_t)(H.n * k) * sizeof(double));
    }
    int rc = HS_OK;
    g->lev[0].A = A0;
    for (int l = 0; rc == HS_OK; l++) {
        level *v = &g->lev[l];
        g->nlev = l + 1;
        double *dinv = malloc((size_t)(H.n ? H.n : 1) * sizeof(double));
        if (!dinv) {
            rc = OOM();
            break;
        }
        rc = level_setup(g, v, &H, dinv);
        PHASE(1);
        int last = H.n <= g->o.coarse_size || l + 1 >= g->o.max_levels || l + 1 >= AMG_MAX_LEVELS || H.n % bs;
        int32_t *agg = NULL;
        int64_t na = 0;
        if (rc == HS_OK && !last) {
            hmat G = {0};
            agg = malloc((size_t)(H.n / bs ? H.n / bs : 1) * sizeof(int32_t));
            rc = agg ? node_graph_build(&H, bs, &G) : OOM();
            if (rc == HS_OK) rc = aggregate(&G, g->o.theta, agg, &na);
            /* coarse operators (and P2 matrices) are denser: where a small threshold makes nearly every connection
             * strong, aggregates grow past a few dozen nodes and the coarse space gets too poor;
             * raise the threshold for this level until the coarsening ratio is moderate */
            double theta = g->o.theta;
            for (int t = 0; rc == HS_OK && t < 5 && na > 0 && (double)(H.n / bs) / (double)na > AMG_MAX_RATIO; t++) {
                theta = theta > 0 ? 2 * theta : 0.02;
                rc = aggregate(&G, theta, agg, &na);
            }
            hmat_free(&G);
            /* no coarsening progress: stop here */
            if (rc == HS_OK && (na == 0 || na * k >= H.n)) last = 1;
            PHASE(2);
        }
        if (rc == HS_OK && last) {
            /* coarsening stalled far above coarse_size (all connections weak, say): a dense inverse
             * would cost n^2 memory and n^3 time, so the coarsest level is only smoothed */
            if (H.n > 4 * (int64_t)g->o.coarse_size && H.n > 2000) g->nc = -1;
            else rc = coarse_inverse(g, &H);
            PHASE(7);
            free(agg), free(dinv);
            break;
        }
        hmat Pt = {0}, P = {0}, R = {0}, AP = {0}, Ac = {0};
        double *Bc = NULL;
        if (rc == HS_OK) {
            Bc = malloc((size_t)(na * k * k > 0 ? na * k * k : 1) * sizeof(double));
            rc = Bc ? tentative(H.n, bs, k, B, agg, na, &Pt, Bc) : OOM();
        }
        if (rc == HS_OK) rc = smooth_prolongation(&H, dinv, 4.0 / 3.0 / v->lmax, &Pt, &P);
        PHASE(3);
        if (rc == HS_OK) rc = hmat_transpose(&P, &R);
        PHASE(4);
        if (rc == HS_OK) rc = hmat_mul(&H, &P, &AP);
        if (rc == HS_OK) rc = hmat_mul(&R, &AP, &Ac);
        PHASE(5);
        if (rc == HS_OK) rc = to_device(g->ctx, &P, &v->P);
        if (rc == HS_OK) rc = to_device(g->ctx, &R, &v->R);
        if (rc == HS_OK) rc = to_device(g->ctx, &Ac, &g->lev[l + 1].A);
        g->lev[l + 1].own_A = rc == HS_OK;
        hmat_free(&Pt), hmat_free(&P), hmat_free(&R), hmat_free(&AP), hmat_free(&H);
        free(agg), free(dinv), free(B);
        PHASE(6);
        H = Ac;
        B = Bc;
        bs = k;
    }
    hmat_free(&H);
    free(B);
#undef PHASE
    return rc;
}

/* ------------------------------------------------------------------ the cycle */

/* Chebyshev smoothing of A x = b on level v; x is zero on entry when `zero`. */
static int chebyshev(amg *g, level *v, const double *b, double *x, int zero)
{
    hs_ctx *ctx = g->ctx;
    size_t n = (size_t)v->n;
    double theta = 0.5 * (v->lmax + v->lmin), delta = 0.5 * (v->lmax - v->lmin), sigma = theta / delta;
    double rho = 1.0 / sigma;
    /* r = b - A x */
    if (zero) HS_CHECK(hs_copy(ctx, HS_F64, n, b, v->r));
    else {
        HS_CHECK(hs_copy(ctx, HS_F64, n, b, v->r));
        HS_CHECK(hs_csr_spmv(v->A, -1.0, x, 1.0, v->r));
    }
    /* d = D^-1 r / theta */
    HS_CHECK(hs_pointwise_mult(ctx, HS_F64, n, v->dinv, v->r, v->d));
    HS_CHECK(hs_scal(ctx, HS_F64, n, 1.0 / theta, v->d));
    if (zero) HS_CHECK(hs_copy(ctx, HS_F64, n, v->d, x));
    else HS_CHECK(hs_axpy(ctx, HS_F64, n, 1.0, v->d, x));
    for (int k = 1; k < g->o.degree; k++) {
        HS_CHECK(hs_csr_spmv(v->A, -1.0, v->d, 1.0, v->r)); /* r -= A d */
        double rho_new = 1.0 / (2.0 * sigma - rho);
        HS_CHECK(hs_pointwise_mult(ctx, HS_F64, n, v->dinv, v->r, v->t));
        HS_CHECK(hs_axpby(ctx, HS_F64, n, 2.0 * rho_new / delta, v->t, rho_new * rho, v->d));
        HS_CHECK(hs_axpy(ctx, HS_F64, n, 1.0, v->d, x));
        rho = rho_new;
    }
    return HS_OK;
}

static int vcycle(amg *g, int l, const double *b, double *x)
{
    hs_ctx *ctx = g->ctx;
    level *v = &g->lev[l];
    if (l == g->nlev - 1) {
        if (g->nc < 0) return chebyshev(g, v, b, x, 1);
        if (g->nc == 0) return HS_OK;
        return hs_csr_spmv(g->cinv, 1.0, b, 0.0, x);
    }
    level *c = &g->lev[l + 1];
    size_t n = (size_t)v->n;
    HS_CHECK(chebyshev(g, v, b, x, 1));
    /* b_c = R (b - A x) */
    HS_CHECK(hs_copy(ctx, HS_F64, n, b, v->t));
    HS_CHECK(hs_csr_spmv(v->A, -1.0, x, 1.0, v->t));
    HS_CHECK(hs_csr_spmv(v->R, 1.0, v->t, 0.0, c->b));
    HS_CHECK(vcycle(g, l + 1, c->b, c->x));
    HS_CHECK(hs_csr_spmv(v->P, 1.0, c->x, 1.0, x));
    return chebyshev(g, v, b, x, 0);
}

int hs_amg_apply(void *data, const double *r, double *z)
{
    amg *g = data;
    if (g->lev[0].n == 0) return HS_OK;
    return vcycle(g, 0, r, z);
}

int hs_precond_amg(hs_csr *A, const hs_amg_opts *opts, hs_precond *P)
{
    memset(P, 0, sizeof *P);
    if (!A) return hs_input_error("hs_precond_amg", 0, "A", "is NULL");
    if (A->nrows != A->ncols)
        return hs_input_error("hs_precond_amg", 0, "A", "is %lld x %lld, not square", (long long)A->nrows, (long long)A->ncols);
    amg *g = calloc(1, sizeof *g);
    if (!g) return OOM();
    g->ctx = A->ctx;
    g->o = opts ? *opts : hs_amg_default_opts();
    if (g->o.block_size < 1) g->o.block_size = 1;
    if (g->o.degree < 1) g->o.degree = 1;
    if (!(g->o.cheb_ratio > 1)) g->o.cheb_ratio = 30;
    if (g->o.coarse_size < 1) g->o.coarse_size = 1;
    double t0 = hs_wtime();
    int rc = build(g, A);
    if (rc == HS_OK) rc = hs_ctx_sync(g->ctx);
    g->setup_s = hs_wtime() - t0;
    if (rc != HS_OK) {
        amg_free(g);
        return rc;
    }
    P->ctx = A->ctx;
    P->data = g;
    P->apply = hs_amg_apply;
    P->destroy = amg_free;
    return HS_OK;
}

int hs_amg_describe(const hs_precond *P, char *buf, size_t len)
{
    const amg *g = P->data;
    if (!g || P->apply != hs_amg_apply) return snprintf(buf, len, "not an AMG preconditioner");
    double total = 0;
    int w = snprintf(buf, len, "AMG %d levels:", g->nlev);
    for (int l = 0; l < g->nlev; l++) {
        total += (double)g->lev[l].nnz;
        if (w < (int)len) w += snprintf(buf + w, len - (size_t)w, " %lld", (long long)g->lev[l].n);
    }
    if (w < (int)len)
        w += snprintf(buf + w, len - (size_t)w,
                      " unknowns; operator complexity %.3f; setup %.3f s (download %.2f, scaling and spectrum %.2f, "
                      "aggregation %.2f, prolongation %.2f, transpose %.2f, Galerkin %.2f, upload %.2f, coarse inverse %.2f)",
                      g->lev[0].nnz ? total / (double)g->lev[0].nnz : 0.0, g->setup_s, g->t_phase[0], g->t_phase[1],
                      g->t_phase[2], g->t_phase[3], g->t_phase[4], g->t_phase[5], g->t_phase[6], g->t_phase[7]);
    return w;
}
