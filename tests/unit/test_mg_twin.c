/* The multigrid's CUDA kernels against their CPU twins, operation by operation, one V-cycle and whole solves; skipped (77) without a GPU. */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/memory.h"
#include "kernels/mg/mg.h"
#include "kernels/mg/mg_impl.h"

#if HS_HAVE_CUDA

/* Both backends run the same pointwise code; the GPU contracts a*b + c into fma, which changes the
 * last bits of a stencil or a weighted sum at most. */
#define KERNEL_TOL 1e-14
/* A V-cycle chains a few dozen such operations through every level. */
#define CYCLE_TOL 1e-12
/* Solved to 1e-12 both ways: the two solutions differ by about the condition number times that. */
#define SOLVE_TOL 1e-9

static struct hs_cuda_ctx *cu(void) { return test_ctx()->cuda; }

/* max |g - c| / max |c| over n values of the device result g and the host result c. */
static double compare(const double *dres, const double *c, size_t n)
{
    double *g = test_download_new(dres, n * sizeof(double)), e = 0, m = 0;
    for (size_t i = 0; i < n; i++) {
        e = fmax(e, fabs(g[i] - c[i]));
        m = fmax(m, fabs(c[i]));
    }
    free(g);
    return m > 0 ? e / m : e;
}

/* A padded box of n cells with h ghost layers (x fastest, rows `pad` longer than needed). */
typedef struct {
    int64_t n[3], alloc[3], pitch;
    int h;
    size_t count;
    hs_mg_lay lay;
} box;

static box make_box(int64_t n0, int64_t n1, int64_t n2, int h)
{
    box b;
    b.n[0] = n0, b.n[1] = n1, b.n[2] = n2, b.h = h;
    for (int d = 0; d < 3; d++) b.alloc[d] = b.n[d] + 2 * h;
    b.pitch = b.alloc[0] + 3;
    b.count = (size_t)(b.pitch * b.alloc[1] * b.alloc[2]);
    b.lay.sy = b.pitch;
    b.lay.sz = b.pitch * b.alloc[1];
    b.lay.origin = h + h * b.lay.sy + h * b.lay.sz;
    return b;
}

/* The arrays of one launch on the host, and their device copies. */
typedef struct {
    double *h[7], *d[7];
    size_t n[7];
} arrays;
enum { U, UOUT, R, UC, B, DV, OUT };

static void arrays_make(arrays *a, const box *fine2, const box *coarse, size_t cells, uint64_t seed)
{
    const size_t n[7] = {fine2->count, fine2->count, fine2->count, coarse->count, cells, cells, cells};
    for (int i = 0; i < 7; i++) {
        a->n[i] = n[i];
        a->h[i] = malloc(n[i] * sizeof(double));
        test_fill_f64(a->h[i], n[i], seed + (uint64_t)i, -1, 1);
        a->d[i] = test_upload(a->h[i], n[i] * sizeof(double));
    }
}

static void arrays_free(arrays *a)
{
    for (int i = 0; i < 7; i++) {
        free(a->h[i]);
        hs_mem_free(test_ctx(), a->d[i]);
    }
}

/* Point the launch at host (dev = 0) or device (dev = 1) arrays. */
static hs_mg_launch bind(const hs_mg_launch *K, arrays *a, int dev)
{
    hs_mg_launch L = *K;
    double **p = dev ? a->d : a->h;
    L.u = K->u ? p[U] : NULL;
    L.u_out = p[UOUT];
    L.r = p[R];
    L.uc = p[UC];
    L.b = p[B];
    L.d = p[DV];
    L.out = p[OUT];
    return L;
}

/* Every operation, with walls on some faces and halos elsewhere, on both backends. */
static void test_operations(void **state)
{
    (void)state;
    /* fine cells 9 x 7 x 5 with two ghost layers (u, u_out and r share that layout), coarse 4 x 7 x 2
     * with one (x and z halved, boxes starting at fine 1, 3 and coarse 1, 2: cells straddle) */
    const box F = make_box(9, 7, 5, 2), C = make_box(4, 7, 2, 1);
    double err = 0;
    for (int op = HS_MG_CHEB; op <= HS_MG_SHIFT_C; op++)
        for (int variant = 0; variant < 2; variant++) {
            hs_mg_launch K;
            memset(&K, 0, sizeof K);
            K.op = op;
            K.ndim = 3;
            const int transfer = op == HS_MG_RESTRICT;
            for (int d = 0; d < 3; d++) K.n[d] = transfer ? C.n[d] : F.n[d];
            K.lu = K.lo = K.lr = F.lay;
            K.lc = C.lay;
            K.u = (const double *)1; /* bound below; NULL in the zero-iterate variants */
            if (variant && (op == HS_MG_CHEB || op == HS_MG_RESIDUAL || op == HS_MG_RESIDUAL_C)) K.u = NULL;
            K.bshift = variant ? 0.25 : 0.0;
            K.idx2[0] = 4.0, K.idx2[1] = 9.0, K.idx2[2] = 2.5;
            K.wall_lo[0] = 1, K.wall_hi[0] = -1, K.wall_lo[2] = -1, K.wall_hi[1] = variant ? 1 : 0;
            K.c1 = K.u ? 0.3 : 0.0, K.c2 = 0.7;
            K.scale = variant ? -1.0 : 0.5, K.shift = 0.125;
            K.halve[0] = K.halve[2] = 1;
            K.off_f[0] = 1, K.off_f[2] = 3, K.off_c[0] = 1, K.off_c[2] = 2;
            for (int d = 0; d < 3; d++) K.nt[d] = op == HS_MG_RESTRICT ? F.n[d] : C.n[d];
            K.accumulate = variant;
            arrays a;
            arrays_make(&a, &F, &C, (size_t)(F.n[0] * F.n[1] * F.n[2]), 100 + (uint64_t)(op * 2 + variant));
            hs_mg_launch Lh = bind(&K, &a, 0), Ld = bind(&K, &a, 1);
            TEST_OK(hs_mg_launch_cpu(&Lh));
            TEST_OK(hs_mg_launch_cuda(cu(), &Ld));
            double e = 0;
            for (int i = 0; i < 7; i++) e = fmax(e, compare(a.d[i], a.h[i], a.n[i]));
            if (!(e <= KERNEL_TOL)) fail_msg("operation %d variant %d: CUDA against CPU %.3e", op, variant, e);
            err = fmax(err, e);
            arrays_free(&a);
        }
    print_message("every operation: CUDA against CPU %.3e\n", err);
}

typedef struct {
    int ndim;
    int64_t n[3];
    hs_bc_kind bc[3][2];
} tcase;

/* One preconditioner application and one solve of f on the given backend. */
static void run_on(const char *device, const tcase *c, const double *f, double *z, double *p, int *iters)
{
    hs_ctx *ctx = test_ctx();
    TEST_OK(hs_ctx_set_device(ctx, device, 1));
    int per[3] = {0, 0, 0};
    for (int d = 0; d < c->ndim; d++) per[d] = c->bc[d][0] == HS_BC_PERIODIC;
    hs_decomp *d = NULL;
    TEST_OK(hs_decomp_create(ctx, c->ndim, c->n, per, (const int[3]){1, 1, 1}, 1, &d));
    hs_mg_opts o = hs_mg_default_opts();
    o.rtol = 1e-12;
    o.coarse_cells = 8; /* many levels */
    hs_mg *mg = NULL;
    TEST_OK(hs_mg_create(d, c->bc, (const double[3]){0.01, 0.012, 0.009}, &o, &mg));
    size_t N = (size_t)(d->local[0] * d->local[1] * d->local[2]), bytes = N * sizeof(double);
    double *df = test_upload(f, bytes), *dz = test_upload(NULL, bytes);
    const hs_precond *M = hs_mg_precond(mg);
    TEST_OK(M->apply(M->data, df, dz));
    test_download(z, dz, bytes);
    hs_mg_stats st;
    TEST_OK(hs_mg_solve(mg, df, dz, 0, NULL, &st));
    test_download(p, dz, bytes);
    *iters = st.iterations;
    hs_mem_free(ctx, df), hs_mem_free(ctx, dz);
    hs_mg_destroy(mg);
    hs_decomp_destroy(d);
}

static void test_cycles_and_solves(void **state)
{
    (void)state;
    const hs_bc_kind P = HS_BC_PERIODIC, N = HS_BC_NEUMANN, D = HS_BC_DIRICHLET;
    const tcase cases[] = {{2, {128, 96, 1}, {{N, D}, {N, D}, {P, P}}},
                           {2, {64, 64, 1}, {{P, P}, {N, N}, {P, P}}},
                           {3, {32, 24, 40}, {{N, D}, {P, P}, {D, N}}},
                           {3, {16, 16, 16}, {{N, N}, {N, N}, {N, N}}}};
    for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
        const tcase *c = &cases[t];
        size_t n = (size_t)(c->n[0] * c->n[1] * c->n[2]);
        double *f = malloc(n * sizeof *f), *zc = malloc(n * sizeof *zc), *zg = malloc(n * sizeof *zg);
        double *pc = malloc(n * sizeof *pc), *pg = malloc(n * sizeof *pg);
        test_fill_f64(f, n, 50 + (uint64_t)t, -1, 1);
        int ic, ig;
        run_on("cpu", c, f, zc, pc, &ic);
        run_on("cuda", c, f, zg, pg, &ig);
        double ez = test_rel_err_f64(zg, zc, n), ep = test_rel_err_f64(pg, pc, n);
        print_message("case %zu: V-cycle CUDA against CPU %.3e; solve %.3e (%d and %d iterations)\n", t, ez, ep, ig, ic);
        if (!(ez <= CYCLE_TOL) || !(ep <= SOLVE_TOL) || abs(ic - ig) > 1)
            fail_msg("case %zu: V-cycle %.3e, solve %.3e, iterations %d (CPU) and %d (CUDA)", t, ez, ep, ic, ig);
        free(f), free(zc), free(zg), free(pc), free(pg);
    }
    TEST_OK(hs_ctx_set_device(test_ctx(), "cuda", 1));
}

static int setup_cuda(void **state)
{
    (void)state;
    return hs_ctx_set_device(test_ctx(), "cuda", 1) == HS_OK ? 0 : -1;
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup(test_operations, setup_cuda),
    cmocka_unit_test(test_cycles_and_solves),
};
#endif

int main(void)
{
#if HS_HAVE_CUDA
    if (hs_cuda_device_count() > 0) return test_run_group("mg_twin", tests, sizeof tests / sizeof tests[0]);
    printf("SKIP: no GPU here: the CUDA kernels of the multigrid are not compared with their CPU twins\n");
#else
    printf("SKIP: built without CUDA: the multigrid has no CUDA twin to compare\n");
#endif
    return 77;
}
