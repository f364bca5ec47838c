/* Distributed CSR and PCG on any rank count against the single-rank hs_csr of the same global matrix. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/sparse/dcsr.h"
#include "kernels/memory.h"
#include "kernels/sparse/pcg.h"
#include "test_util.h"

/* A global host matrix with int64 indices, built identically on every rank. */
typedef struct {
    int64_t N, nnz;
    int64_t *rp, *ci;
    double *v;
} gmat;

static void gmat_free(gmat *g) { free(g->rp), free(g->ci), free(g->v); }

static gmat global_laplacian(int ndim, const int64_t n[3], const double *scale)
{
    gmat g = {1, 0, NULL, NULL, NULL};
    for (int d = 0; d < ndim; d++) g.N *= n[d];
    TEST_OK(hs_laplacian_rows(ndim, n, 0, g.N, &g.rp, &g.ci, &g.v, &g.nnz));
    if (scale)
        for (int64_t i = 0; i < g.N; i++)
            for (int64_t k = g.rp[i]; k < g.rp[i + 1]; k++) g.v[k] *= scale[i] * scale[g.ci[k]];
    return g;
}

/* Unsymmetric structure: every 7th row empty, the rest a few near-diagonal and a few far columns. */
static gmat global_random(int64_t N, uint64_t seed)
{
    gmat g = {N, 0, malloc(sizeof(int64_t) * (size_t)(N + 1)), malloc(sizeof(int64_t) * (size_t)N * 8),
              malloc(sizeof(double) * (size_t)N * 8)};
    hs_rng s;
    hs_rng_seed(&s, seed, 0);
    g.rp[0] = 0;
    for (int64_t i = 0; i < N; i++) {
        int len = i % 7 == 2 ? 0 : 1 + (int)(hs_rng_next(&s) % 8);
        for (int k = 0; k < len; k++) {
            int64_t c = k < 3 ? i + (int64_t)(hs_rng_next(&s) % 5) - 2 : (int64_t)(hs_rng_next(&s) % (uint64_t)N);
            g.ci[g.nnz++] = c < 0 ? 0 : c >= N ? N - 1 : c;
        }
        g.rp[i + 1] = g.nnz;
    }
    test_fill_f64(g.v, (size_t)g.nnz, seed + 1, -1, 1);
    return g;
}

/* Uneven contiguous blocks; on 4 ranks rank 2 holds nothing. */
static void split(int64_t N, int64_t *start, int64_t *count)
{
    hs_ctx *ctx = test_ctx();
    static const int w4[] = {1, 3, 0, 2};
    int64_t W = 0, before = 0;
    for (int r = 0; r < ctx->size; r++) {
        int w = ctx->size == 4 ? w4[r] : r % 2 ? 3 : 1;
        if (r < ctx->rank) before += w;
        W += w;
    }
    int mine = ctx->size == 4 ? w4[ctx->rank] : ctx->rank % 2 ? 3 : 1;
    *start = N * before / W;
    *count = N * (before + mine) / W - *start;
}

static hs_csr *full_csr(const gmat *g)
{
    int32_t *rp = malloc(sizeof *rp * (size_t)(g->N + 1)), *ci = malloc(sizeof *ci * (size_t)(g->nnz + 1));
    for (int64_t i = 0; i <= g->N; i++) rp[i] = (int32_t)g->rp[i];
    for (int64_t k = 0; k < g->nnz; k++) ci[k] = (int32_t)g->ci[k];
    hs_csr *A = NULL;
    TEST_OK(hs_csr_create(test_ctx(), g->N, g->N, g->nnz, rp, ci, g->v, &A));
    free(rp), free(ci);
    return A;
}

/* This rank's rows with a shifted rowptr; colind and val point into the global arrays. */
static int make_dist(const gmat *g, int64_t start, int64_t count, int64_t ncols, hs_dcsr **A)
{
    int64_t *rp = malloc(sizeof *rp * (size_t)(count + 1));
    for (int64_t i = 0; i <= count; i++) rp[i] = g->rp[start + i] - g->rp[start];
    int rc = hs_dcsr_create(test_ctx(), test_ctx()->comm, start, count, ncols, rp, g->ci + g->rp[start],
                            g->v + g->rp[start], A);
    free(rp);
    return rc;
}

/* n doubles to a new device array (h NULL: uninitialised) and back */
static double *dev(const double *h, int64_t n) { return test_upload(h, (size_t)n * 8); }
static void host(double *h, const double *d, int64_t n) { test_download(h, d, (size_t)n * 8); }

/* ||got - ref[start..]|| / ||ref|| over all ranks. */
static double global_rel_err(const double *got, const double *ref_full, int64_t start, int64_t count)
{
    double s[2] = {0, 0};
    for (int64_t i = 0; i < count; i++) {
        double d = got[i] - ref_full[start + i];
        s[0] += d * d;
        s[1] += ref_full[start + i] * ref_full[start + i];
    }
    TEST_OK(hs_allreduce_sum(test_ctx()->comm, s, 2));
    return s[1] > 0 ? sqrt(s[0] / s[1]) : sqrt(s[0]);
}

static void check_spmv(const gmat *g, uint64_t seed)
{
    hs_ctx *ctx = test_ctx();
    int64_t start, count;
    split(g->N, &start, &count);
    hs_dcsr *A = NULL;
    TEST_OK(make_dist(g, start, count, g->N, &A));
    hs_csr *F = full_csr(g);
    double *x = malloc((size_t)g->N * 8), *y = malloc((size_t)g->N * 8), *ref = malloc((size_t)g->N * 8),
           *got = malloc((size_t)(count + 1) * 8);
    test_fill_f64(x, (size_t)g->N, seed, -1, 1);
    test_fill_f64(y, (size_t)g->N, seed + 1, -1, 1);
    double *dxf = dev(x, g->N), *dyf = dev(y, g->N), *dzf = dev(NULL, g->N);
    double *dxl = dev(x + start, count), *dyl = dev(y + start, count), *dzl = dev(NULL, count);
    static const double coeffs[][2] = {{1, 0}, {-0.5, 2}};
    for (int c = 0; c < 2; c++) {
        TEST_OK(hs_mem_copy(ctx, dyf, y, (size_t)g->N * 8, HS_COPY_H2D));
        if (count) TEST_OK(hs_mem_copy(ctx, dyl, y + start, (size_t)count * 8, HS_COPY_H2D));
        TEST_OK(hs_csr_spmv(F, coeffs[c][0], dxf, coeffs[c][1], dyf));
        TEST_OK(hs_dcsr_spmv(A, coeffs[c][0], dxl, coeffs[c][1], dyl));
        host(ref, dyf, g->N);
        host(got, dyl, count);
        TEST_LE(global_rel_err(got, ref, start, count), 1e-13);
        /* back to back: the second product's exchange reuses every buffer of the first */
        TEST_OK(hs_csr_spmv(F, 1.0, dyf, 0.0, dzf));
        TEST_OK(hs_dcsr_spmv(A, 1.0, dyl, 0.0, dzl));
        host(ref, dzf, g->N);
        host(got, dzl, count);
        TEST_LE(global_rel_err(got, ref, start, count), 1e-13);
    }
    /* what one rank sends, another receives */
    hs_dcsr_info info;
    hs_dcsr_get_info(A, &info);
    double flow[2] = {(double)info.nsend, (double)info.nghost};
    TEST_OK(hs_allreduce_sum(ctx->comm, flow, 2));
    assert_true(flow[0] == flow[1]);
    if (ctx->size == 1) assert_int_equal(info.nghost, 0);
    assert_int_equal(info.nnz_diag + info.nnz_off, g->rp[start + count] - g->rp[start]);
    hs_mem_free(ctx, dxf), hs_mem_free(ctx, dyf), hs_mem_free(ctx, dzf);
    hs_mem_free(ctx, dxl), hs_mem_free(ctx, dyl), hs_mem_free(ctx, dzl);
    hs_dcsr_destroy(A);
    hs_csr_destroy(F);
    free(x), free(y), free(ref), free(got);
}

static void test_spmv_laplacians(void **state)
{
    (void)state;
    static const int64_t grids[][4] = {{1, 101, 1, 1}, {2, 13, 11, 1}, {3, 9, 8, 7}};
    for (size_t k = 0; k < sizeof grids / sizeof *grids; k++) {
        gmat g = global_laplacian((int)grids[k][0], &grids[k][1], NULL);
        check_spmv(&g, 40 + k);
        gmat_free(&g);
    }
}

static void test_spmv_random(void **state)
{
    (void)state;
    static const int64_t sizes[] = {1, 7, 300, 2001};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        gmat g = global_random(sizes[k], 60 + k);
        check_spmv(&g, 70 + k);
        gmat_free(&g);
    }
}

/* Host b = A x_exact, solved from 0 on one rank (hs_csr) and distributed (hs_dcsr). */
static void check_pcg(const gmat *g, hs_precond_kind pc)
{
    hs_ctx *ctx = test_ctx();
    int64_t start, count;
    split(g->N, &start, &count);
    double *xe = malloc((size_t)g->N * 8), *b = malloc((size_t)g->N * 8), *xr = malloc((size_t)g->N * 8),
           *xd = malloc((size_t)(count + 1) * 8);
    test_fill_f64(xe, (size_t)g->N, 90, -1, 1);
    for (int64_t i = 0; i < g->N; i++) {
        long double s = 0;
        for (int64_t k = g->rp[i]; k < g->rp[i + 1]; k++) s += (long double)g->v[k] * xe[g->ci[k]];
        b[i] = (double)s;
    }
    hs_pcg_opts o = hs_pcg_default_opts();
    o.rtol = 1e-10;
    o.max_iter = 2000;
    o.precond = pc;
    hs_csr *F = full_csr(g);
    hs_linop fop = hs_csr_linop(F);
    double *dbf = dev(b, g->N), *dxf = dev(NULL, g->N);
    TEST_OK(hs_mem_zero(ctx, dxf, (size_t)g->N * 8));
    hs_pcg_result rf, rd;
    TEST_OK(hs_pcg_solve(&fop, dbf, dxf, &o, &rf));
    host(xr, dxf, g->N);

    hs_dcsr *A = NULL;
    TEST_OK(make_dist(g, start, count, g->N, &A));
    hs_linop dop = hs_dcsr_linop(A);
    double *dbl = dev(b + start, count), *dxl = dev(NULL, count);
    TEST_OK(hs_mem_zero(ctx, dxl, (size_t)(count > 0 ? count : 1) * 8));
    TEST_OK(hs_pcg_solve(&dop, dbl, dxl, &o, &rd));
    host(xd, dxl, count);
    if (ctx->rank == 0)
        print_message("N = %lld, preconditioner %d, %d ranks: %d iterations (one rank: %d)\n", (long long)g->N, (int)pc,
                      ctx->size, rd.iterations, rf.iterations);
    assert_true(rf.converged && rd.converged);
    assert_int_equal(rd.iterations, rf.iterations);
    TEST_LE(fabs(rd.final_residual - rf.final_residual), 1e-10 * rf.initial_residual);
    TEST_LE(global_rel_err(xd, xr, start, count), 1e-10);
    TEST_LE(global_rel_err(xd, xe, start, count), 1e-5); /* and it is the solution */
    hs_mem_free(ctx, dbf), hs_mem_free(ctx, dxf), hs_mem_free(ctx, dbl), hs_mem_free(ctx, dxl);
    hs_dcsr_destroy(A);
    hs_csr_destroy(F);
    free(xe), free(b), free(xr), free(xd);
}

static void test_pcg(void **state)
{
    (void)state;
    int64_t n3[3] = {10, 9, 8}, n2[3] = {24, 20, 1};
    gmat g = global_laplacian(3, n3, NULL);
    check_pcg(&g, HS_PRECOND_NONE);
    check_pcg(&g, HS_PRECOND_JACOBI);
    gmat_free(&g);
    double *s = malloc(480 * 8);
    test_fill_f64(s, 480, 91, 0.3, 3);
    g = global_laplacian(2, n2, s);
    check_pcg(&g, HS_PRECOND_JACOBI);
    gmat_free(&g);
    free(s);
}

/* Invalid input on one rank is an input error on every rank (no rank is left waiting). */
static void test_input_errors(void **state)
{
    (void)state;
    hs_ctx *ctx = test_ctx();
    int64_t n[3] = {40, 1, 1}, start, count;
    gmat g = global_laplacian(1, n, NULL);
    split(g.N, &start, &count);
    hs_dcsr *A = NULL;
    /* blocks that do not tile the rows */
    int64_t bad_start = ctx->rank == 0 ? start + 1 : start;
    int64_t *rp = malloc(sizeof *rp * (size_t)(count + 1));
    for (int64_t i = 0; i <= count; i++) rp[i] = g.rp[start + i] - g.rp[start];
    assert_int_equal(hs_dcsr_create(ctx, ctx->comm, bad_start, count, g.N, rp, g.ci + g.rp[start], g.v + g.rp[start], &A),
                     HS_ERR_INPUT);
    assert_null(A);
    hs_error_clear();
    assert_int_equal(make_dist(&g, start, count, g.N + 1, &A), HS_ERR_INPUT);
    hs_error_clear();
    /* a column out of range on the last rank only */
    int64_t *ci = malloc(sizeof *ci * (size_t)(g.nnz + 1));
    memcpy(ci, g.ci, sizeof *ci * (size_t)g.nnz);
    if (ctx->rank == ctx->size - 1 && count > 0) ci[g.rp[start]] = g.N;
    int rc = hs_dcsr_create(ctx, ctx->comm, start, count, g.N, rp, ci + g.rp[start], g.v + g.rp[start], &A);
    if (rc != HS_ERR_INPUT || !strstr(hs_error_message(), ctx->rank == ctx->size - 1 ? "colind" : "rank"))
        fail_msg("rank %d: expected an input error, got %d: %s", ctx->rank, rc, hs_error_message());
    assert_null(A);
    hs_error_clear();
    free(rp), free(ci);
    gmat_free(&g);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_spmv_laplacians),
    cmocka_unit_test(test_spmv_random),
    cmocka_unit_test(test_pcg),
    cmocka_unit_test(test_input_errors),
};
TEST_MAIN("dcsr_mpi", tests)
