/* The fast Poisson solver's CUDA kernels against their CPU twins, kernel by kernel and whole solves; skipped (77) without a GPU. */
#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/fft/fft.h"
#include "kernels/fft/poisson.h"
#include "kernels/fft/poisson_impl.h"
#include "kernels/fft/poisson_point.h"
#include "kernels/memory.h"

#if HS_HAVE_CUDA

/* Both backends do the same operations in the same order; the GPU contracts a*b + c into fma,
 * which changes the last bit of the twiddle products and of the Thomas updates at most. */
#define KERNEL_TOL 1e-14
/* A whole solve chains a few dozen such roundings through cuFFT against FFTW. */
#define SOLVE_TOL 1e-12

static double *rnd(size_t n, uint64_t seed)
{
    double *x = malloc(n * sizeof *x + 8);
    test_fill_f64(x, n, seed, -1, 1);
    return x;
}

static double *dev(const double *h, size_t n) { return test_upload(h, n * sizeof(double)); }

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

static struct hs_cuda_ctx *cu(void) { return test_ctx()->cuda; }

/* DCT4's table for a mixed x of n (even): per k < n/2 the cos, sin of pi k / n and of pi (4k+1) / (4n). */
static double *twiddles4(int64_t n)
{
    double *t = malloc((size_t)(2 * n + 1) * sizeof *t);
    for (int64_t k = 0; k < n / 2; k++) {
        t[4 * k] = cos(M_PI * (double)k / (double)n), t[4 * k + 1] = sin(M_PI * (double)k / (double)n);
        t[4 * k + 2] = cos(M_PI * (double)(4 * k + 1) / (double)(4 * n)), t[4 * k + 3] = sin(M_PI * (double)(4 * k + 1) / (double)(4 * n));
    }
    return t;
}

static double *twiddles(int64_t n)
{
    double *tw = malloc((size_t)(n / 2 + 1) * 2 * sizeof *tw);
    for (int64_t k = 0; k <= n / 2; k++) {
        tw[2 * k] = cos(M_PI * (double)k / (double)(2 * n));
        tw[2 * k + 1] = sin(M_PI * (double)k / (double)(2 * n));
    }
    return tw;
}

/* The transpositions both ways, of odd shapes with padded strides, on every kind of columns (real,
 * halfcomplex and DCT spectra of two lines per row, even and odd line lengths) and every order of
 * the rows (a block in the middle of longer lines, as in a global transpose); and strided run
 * copies.  Moves and sign flips are exact; the DCT's twiddle products may differ by an fma. */
static void test_moves(void **state)
{
    (void)state;
    const int64_t batch = 3, rows = 37, roff = 5, rn = 45;
    for (int64_t n = 7; n <= 8; n++)
        for (int kind = HS_POISSON_COLS_REAL; kind <= HS_POISSON_COLS_DCT; kind++)
            for (int order = HS_POISSON_ROWS_NATURAL; order <= HS_POISSON_ROWS_MAKHOUL_ALT; order++) {
                const int64_t nq = kind == HS_POISSON_COLS_REAL ? 1 : 2, cols = nq * n;
                const int64_t srs = (kind == HS_POISSON_COLS_REAL ? cols : nq * 2 * (n / 2 + 1)) + 1;
                const int64_t dcs = rn + 3;
                double *tw = twiddles(n), *dtw = dev(tw, (size_t)(2 * (n / 2 + 1)));
                hs_poisson_tpose t = {.batch = batch, .rows = rows, .cols = cols, .sbs = rows * srs + 3, .srs = srs,
                                      .dbs = cols * dcs + 5, .dcs = dcs, .kind = kind,
                                      .n = kind == HS_POISSON_COLS_REAL ? cols : n, .tw = tw, .order = order,
                                      .rn = rn, .roff = roff};
                hs_poisson_tpose dt = t;
                dt.tw = dtw;
                size_t ns = (size_t)(batch * t.sbs), nd = (size_t)(batch * t.dbs);
                double *s = rnd(ns, 1 + (uint64_t)(n * 9 + kind * 3 + order)), *c = calloc(nd, sizeof *c);
                double *ds = dev(s, ns), *dd = dev(c, nd);
                double tol = kind == HS_POISSON_COLS_DCT ? KERNEL_TOL : 0.0;
                TEST_OK(hs_poisson_transpose_cpu(&t, s, c));
                TEST_OK(hs_poisson_transpose_cuda(cu(), &dt, ds, dd));
                TEST_LE(compare(dd, c, nd), tol);
                /* back, from random values in the destination's layout into zeros */
                double *x = rnd(nd, 2 + (uint64_t)(n * 9 + kind * 3 + order)), *z = calloc(ns, sizeof *z);
                double *dx = dev(x, nd), *dz = dev(z, ns);
                TEST_OK(hs_poisson_transpose_back_cpu(&t, x, z));
                TEST_OK(hs_poisson_transpose_back_cuda(cu(), &dt, dx, dz));
                TEST_LE(compare(dz, z, ns), tol);
                hs_mem_free(test_ctx(), ds), hs_mem_free(test_ctx(), dd), hs_mem_free(test_ctx(), dtw);
                hs_mem_free(test_ctx(), dx), hs_mem_free(test_ctx(), dz);
                free(s), free(c), free(tw), free(x), free(z);
            }
    const int64_t cols = 45;
    size_t ns = (size_t)(rows * (cols + 2)), nd = (size_t)(rows * 33);
    double *s = rnd(ns, 3), *c = calloc(nd, sizeof *c), *ds = dev(s, ns), *dd = dev(c, nd);
    TEST_OK(hs_poisson_copy_runs_cpu(rows, 30, s, cols + 2, c, 33));
    TEST_OK(hs_poisson_copy_runs_cuda(cu(), rows, 30, ds, cols + 2, dd, 33));
    assert_true(compare(dd, c, nd) == 0.0);
    hs_mem_free(test_ctx(), ds), hs_mem_free(test_ctx(), dd);
    free(s), free(c);
}

/* The transform steps that no transposition does, on even and odd lengths. */
static void test_transform_steps(void **state)
{
    (void)state;
    for (int64_t n = 7; n <= 8; n++) {
        const int64_t lines = 29, h = n / 2 + 1;
        size_t nr = (size_t)(lines * n), nc = (size_t)(2 * lines * h);
        double *x = rnd(nr, 10 + (uint64_t)n), *spec = rnd(nc, 20 + (uint64_t)n), *tw = twiddles(n);
        double *cr = calloc(nr, sizeof *cr), *cc = calloc(nc, sizeof *cc);
        double *dx = dev(x, nr), *dspec = dev(spec, nc), *dtw = dev(tw, (size_t)(2 * h));
        double *dr = dev(cr, nr), *dc = dev(cc, nc);
        double err = 0;
        for (int o = HS_POISSON_ROWS_MAKHOUL; o <= HS_POISSON_ROWS_MAKHOUL_ALT; o++) /* the line transforms' reorders */
            for (int fwd = 0; fwd < 2; fwd++) {
                TEST_OK(hs_poisson_order_cpu(1, lines, n, 0, o, 0, 0, fwd, x, cr));
                TEST_OK(hs_poisson_order_cuda(cu(), 1, lines, n, 0, o, 0, 0, fwd, dx, dr));
                err = fmax(err, compare(dr, cr, nr));
            }
        assert_true(err == 0.0); /* pure moves and sign flips */
        for (int dct = 0; dct < 2; dct++) {
            TEST_OK(hs_poisson_line_post_cpu(lines, n, dct, tw, spec, cr));
            TEST_OK(hs_poisson_line_post_cuda(cu(), lines, n, dct, dtw, dspec, dr));
            TEST_LE(compare(dr, cr, nr), dct ? KERNEL_TOL : 0.0);
            TEST_OK(hs_poisson_line_pre_cpu(lines, n, dct, tw, x, cc));
            TEST_OK(hs_poisson_line_pre_cuda(cu(), lines, n, dct, dtw, dx, dc));
            TEST_LE(compare(dc, cc, nc), dct ? KERNEL_TOL : 0.0);
        }
        hs_mem_free(test_ctx(), dx), hs_mem_free(test_ctx(), dspec), hs_mem_free(test_ctx(), dtw);
        hs_mem_free(test_ctx(), dr), hs_mem_free(test_ctx(), dc);
        free(x), free(spec), free(tw), free(cr), free(cc);
    }
    /* the plane solve's two kernels: the 2D orders (pure moves; with the extensions of a mixed
     * dimension, whose ordered arrays are twice as long along it) and the pair divide, on a plane of
     * odd x even and even x odd sizes, with random spectra and negative eigenvalues (the null mode's zero among them) */
    for (int v = 0; v < 2; v++) {
        const int64_t n1 = v ? 12 : 9, n0 = v ? 7 : 10, planes = 3, h0 = n0 / 2 + 1;
        size_t nr = (size_t)(planes * n1 * n0), nc = (size_t)(2 * n1 * h0);
        double *x = rnd(4 * nr, 30 + (uint64_t)v), *cr = calloc(4 * nr, sizeof *cr), *dx = dev(x, 4 * nr), *dr = dev(cr, 4 * nr);
        double err = 0;
        for (int o1 = 0; o1 < 3; o1++)
            for (int o0 = 0; o0 < 3; o0++)
                for (int x1 = 0; x1 < 3; x1++)
                    for (int x0 = 0; x0 < 3; x0++)
                        for (int fwd = 0; fwd < 2; fwd++) {
                            const size_t out = fwd ? (size_t)(planes * hs_poisson_ext_len(x1, n1) * hs_poisson_ext_len(x0, n0)) : nr;
                            TEST_OK(hs_poisson_order_cpu(planes, n1, n0, o1, o0, x1, x0, fwd, x, cr));
                            TEST_OK(hs_poisson_order_cuda(cu(), planes, n1, n0, o1, o0, x1, x0, fwd, dx, dr));
                            err = fmax(err, compare(dr, cr, out));
                        }
        assert_true(err == 0.0);
        double *tw1 = twiddles(n1), *tw0 = twiddles(n0), *ev1 = rnd((size_t)n1, 40 + (uint64_t)v), *ev0 = rnd((size_t)n0, 50 + (uint64_t)v);
        for (int64_t i = 0; i < n1; i++) ev1[i] = -0.1 - 0.45 * (ev1[i] + 1.0); /* in [-1, -0.1], as eigenvalues are */
        for (int64_t i = 0; i < n0; i++) ev0[i] = -0.1 - 0.45 * (ev0[i] + 1.0);
        ev1[0] = ev0[0] = 0.0; /* the null mode */
        double *spec = rnd(nc, 60 + (uint64_t)v), *dspec = dev(spec, nc), *dtw1 = dev(tw1, (size_t)(2 * (n1 / 2 + 1)));
        double *dtw0 = dev(tw0, (size_t)(2 * h0)), *dev1 = dev(ev1, (size_t)n1), *dev0 = dev(ev0, (size_t)n0);
        for (int dct = 0; dct < 2; dct++) {
            double *hs = malloc(nc * sizeof *hs);
            memcpy(hs, spec, nc * sizeof *hs);
            TEST_OK(hs_poisson_plane_divide_cpu(n1, n0, dct, tw1, tw0, 0.37, ev1, ev0, hs));
            TEST_OK(hs_mem_copy(test_ctx(), dspec, spec, nc * sizeof *spec, HS_COPY_H2D));
            TEST_OK(hs_poisson_plane_divide_cuda(cu(), n1, n0, dct, dtw1, dtw0, 0.37, dev1, dev0, dspec));
            TEST_LE(compare(dspec, hs, nc), KERNEL_TOL);
            free(hs);
        }
        /* DCT4 (an even x of m0 = n0 + 1 or n0 - 1, whichever is even): the divide, the pack and
         * the unpack of every y order and both sides */
        const int64_t m0 = n0 % 2 ? n0 + 1 : n0, hm = m0 / 2;
        const size_t n4 = (size_t)(2 * n1 * hm), nf = (size_t)(n1 * m0);
        double *tw4 = twiddles4(m0), *ev4 = rnd((size_t)m0, 55 + (uint64_t)v), *dtw4 = dev(tw4, (size_t)(2 * m0 + 1));
        for (int64_t i = 0; i < m0; i++) ev4[i] = -0.1 - 0.45 * (ev4[i] + 1.0);
        double *dev4 = dev(ev4, (size_t)m0), *h4 = rnd(n4, 65 + (uint64_t)v), *d4 = dev(h4, n4);
        TEST_OK(hs_poisson_plane_divide_cpu(n1, m0, HS_POISSON_PLANE_DCT4, tw1, tw4, 0.37, ev1, ev4, h4));
        TEST_OK(hs_poisson_plane_divide_cuda(cu(), n1, m0, HS_POISSON_PLANE_DCT4, dtw1, dtw4, 0.37, dev1, dev4, d4));
        TEST_LE(compare(d4, h4, n4), KERNEL_TOL);
        double *f4 = rnd(nf, 75 + (uint64_t)v), *df4 = dev(f4, nf), *p4 = calloc(nf, sizeof *p4), *dp4 = dev(p4, nf);
        for (int o1 = 0; o1 < 3; o1++)
            for (int side = HS_POISSON_EXT_HIGH; side <= HS_POISSON_EXT_LOW; side++) {
                TEST_OK(hs_poisson_dct4_pack_cpu(n1, m0, o1, side, tw4, f4, h4));
                TEST_OK(hs_poisson_dct4_pack_cuda(cu(), n1, m0, o1, side, dtw4, df4, d4));
                TEST_LE(compare(d4, h4, n4), KERNEL_TOL);
                TEST_OK(hs_poisson_dct4_unpack_cpu(n1, m0, o1, side, tw4, h4, p4));
                TEST_OK(hs_poisson_dct4_unpack_cuda(cu(), n1, m0, o1, side, dtw4, d4, dp4));
                TEST_LE(compare(dp4, p4, nf), KERNEL_TOL);
            }
        hs_mem_free(test_ctx(), dtw4), hs_mem_free(test_ctx(), dev4), hs_mem_free(test_ctx(), d4);
        hs_mem_free(test_ctx(), df4), hs_mem_free(test_ctx(), dp4);
        free(tw4), free(ev4), free(h4), free(f4), free(p4);
        hs_mem_free(test_ctx(), dx), hs_mem_free(test_ctx(), dr), hs_mem_free(test_ctx(), dspec);
        hs_mem_free(test_ctx(), dtw1), hs_mem_free(test_ctx(), dtw0), hs_mem_free(test_ctx(), dev1), hs_mem_free(test_ctx(), dev0);
        free(x), free(cr), free(tw1), free(tw0), free(ev1), free(ev0), free(spec);
    }
}

static void test_solves_and_operator(void **state)
{
    (void)state;
    /* the divide inside the last transform, with a null mode, for the FFT and the DCT (even and odd n) */
    for (int64_t n = 16; n <= 17; n++)
        for (int dct = 0; dct < 2; dct++) {
            const int64_t rows = 33, h = n / 2 + 1;
            size_t C = (size_t)(2 * rows * h);
            double *rev = rnd((size_t)rows, 30), *ev = rnd((size_t)n, 31), *spec = rnd(C, 32), *tw = twiddles(n);
            for (int64_t i = 0; i < rows; i++) rev[i] -= 2.0;
            for (int64_t i = 0; i < n; i++) ev[i] -= 2.0;
            rev[0] = ev[0] = 0.0;
            double *drev = dev(rev, (size_t)rows), *dev_ = dev(ev, (size_t)n), *dspec = dev(spec, C);
            double *dtw = dev(tw, (size_t)(2 * h));
            TEST_OK(hs_poisson_spectral_divide_cpu(rows, n, dct, tw, 0.25, rev, ev, spec));
            TEST_OK(hs_poisson_spectral_divide_cuda(cu(), rows, n, dct, dtw, 0.25, drev, dev_, dspec));
            TEST_LE(compare(dspec, spec, C), KERNEL_TOL);
            hs_mem_free(test_ctx(), drev), hs_mem_free(test_ctx(), dev_), hs_mem_free(test_ctx(), dspec);
            hs_mem_free(test_ctx(), dtw);
            free(rev), free(ev), free(spec), free(tw);
        }
    /* tridiagonal sweeps along the middle index, both end kinds, inner 1 and > 1 */
    for (int inner = 1; inner <= 5; inner += 4) {
        const int64_t outer = 6, m = 40;
        size_t T = (size_t)(outer * m * inner);
        double *sig = rnd((size_t)(outer * inner), 33), *src = rnd(T, 34), *out = calloc(T, sizeof *out);
        double *work = calloc(T, sizeof *work);
        for (int64_t i = 0; i < outer * inner; i++) sig[i] = -50.0 * (sig[i] + 1.0);
        double *dsig = dev(sig, (size_t)(outer * inner)), *dsrc = dev(src, T), *dout = dev(out, T), *dw = dev(work, T);
        for (int g = 0; g < 2; g++) {
            TEST_OK(hs_poisson_tridiag_cpu(outer, m, inner, sig, 0.01, 0.5, g ? 1 : -1, g ? -1 : 1, src, out, work));
            TEST_OK(hs_poisson_tridiag_cuda(cu(), outer, m, inner, dsig, 0.01, 0.5, g ? 1 : -1, g ? -1 : 1, dsrc, dout, dw));
            TEST_LE(compare(dout, out, T), KERNEL_TOL);
        }
        hs_mem_free(test_ctx(), dsig), hs_mem_free(test_ctx(), dsrc), hs_mem_free(test_ctx(), dout);
        hs_mem_free(test_ctx(), dw);
        free(sig), free(src), free(out), free(work);
    }
    /* the Laplacian on a padded layout */
    const int64_t ln[3] = {9, 7, 5}, sy = 13, sz = 13 * 10;
    size_t U = (size_t)(sz * 8), O = (size_t)(ln[0] * ln[1] * ln[2]);
    const double idx2[3] = {4.0, 9.0, 25.0};
    double *u = rnd(U, 35), *lo = calloc(O, sizeof *lo), *du = dev(u, U), *dlo = dev(lo, O);
    const int64_t origin = sz + sy + 1;
    TEST_OK(hs_poisson_laplacian_cpu(3, ln, u + origin, sy, sz, idx2, lo));
    TEST_OK(hs_poisson_laplacian_cuda(cu(), 3, ln, du + origin, sy, sz, idx2, dlo));
    TEST_LE(compare(dlo, lo, O), KERNEL_TOL);
    hs_mem_free(test_ctx(), du), hs_mem_free(test_ctx(), dlo);
    free(u), free(lo);
}

/* One solve on the given backend; *hooked (when not NULL) tells whether the divide ran inside cuFFT. */
static double *solve_on_hooked(const char *device, int ndim, const int64_t *n, const hs_poisson_bc bc[3][2],
                               const double *f, int *hooked)
{
    hs_ctx *ctx = test_ctx();
    TEST_OK(hs_ctx_set_device(ctx, device, 1));
    int per[3] = {0, 0, 0};
    for (int d = 0; d < ndim; d++) per[d] = bc[d][0] == HS_POISSON_PERIODIC;
    hs_decomp *d = NULL;
    TEST_OK(hs_decomp_create(ctx, ndim, n, per, (const int[3]){1, 1, 1}, 1, &d));
    hs_poisson *ps = NULL;
    TEST_OK(hs_poisson_create(d, bc, (const double[3]){0.01, 0.02, 0.03}, &ps));
    if (hooked) *hooked = hs_poisson_divide_hooked(ps);
    size_t N = (size_t)(d->local[0] * d->local[1] * d->local[2]);
    double *df = dev(f, N);
    TEST_OK(hs_poisson_solve(ps, df, df, NULL));
    double *p = test_download_new(df, N * sizeof(double));
    hs_mem_free(ctx, df);
    hs_poisson_destroy(ps);
    hs_decomp_destroy(d);
    return p;
}

static double *solve_on(const char *device, int ndim, const int64_t *n, const hs_poisson_bc bc[3][2], const double *f)
{
    return solve_on_hooked(device, ndim, n, bc, f, NULL);
}

static void test_whole_solves(void **state)
{
    (void)state;
    const hs_poisson_bc P = HS_POISSON_PERIODIC, Nm = HS_POISSON_NEUMANN, D = HS_POISSON_DIRICHLET;
    /* the fused transpositions (post and reorder) on every kind of dimension, the mixed dimension
     * first, between and last, the one-cell dimensions of a grid without C, and one line (1D); the
     * plane solve (2D NN x NN, DD x NN, NN x DD, PP x PP) with cuFFT's column transforms (y of 130,
     * 48, 37) and with the fused column kernel (y of 4096, 128, 16; the CPU always the former); the
     * plane solve's extended mixed dimension (ND x NN above, DN x DD, NN x ND with y extended to 128
     * for the fused kernel, DD x DN to 4096, ND x NN with y of 50 for cuFFT's columns); DCT4 for a
     * mixed x of even length (ND x NN above with cuFFT's columns, ND x NN and DN x DD with the fused
     * kernel at y of 4096 and 16) */
    const hs_poisson_bc cases[][3][2] = {{{Nm, Nm}, {Nm, Nm}, {P, P}}, {{Nm, D}, {Nm, Nm}, {P, P}},
                                         {{P, P}, {D, D}, {Nm, Nm}}, {{P, P}, {Nm, Nm}, {D, Nm}},
                                         {{Nm, Nm}, {Nm, Nm}, {Nm, Nm}}, {{D, D}, {P, P}, {P, P}},
                                         {{D, D}, {Nm, D}, {P, P}}, {{Nm, Nm}, {D, Nm}, {D, D}},
                                         {{Nm, Nm}, {P, P}, {P, P}}, {{D, D}, {Nm, Nm}, {P, P}},
                                         {{P, P}, {P, P}, {P, P}}, {{Nm, Nm}, {Nm, Nm}, {P, P}},
                                         {{Nm, Nm}, {D, D}, {P, P}}, {{P, P}, {P, P}, {P, P}},
                                         {{D, Nm}, {D, D}, {P, P}}, {{Nm, Nm}, {Nm, D}, {P, P}},
                                         {{D, D}, {D, Nm}, {P, P}}, {{Nm, D}, {Nm, Nm}, {P, P}},
                                         {{Nm, D}, {Nm, Nm}, {P, P}}, {{D, Nm}, {D, D}, {P, P}}};
    const int ndims[] = {2, 2, 3, 3, 3, 2, 3, 3, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2};
    const int64_t sizes[][3] = {{129, 130, 1}, {200, 63, 1}, {33, 40, 31}, {32, 27, 24}, {20, 17, 36},
                                {31, 64, 1},   {9, 14, 19},  {1, 1, 9},    {301, 1, 1},  {63, 48, 1},
                                {50, 37, 1},   {37, 4096, 1}, {64, 128, 1}, {9, 16, 1}, {45, 64, 1},
                                {33, 64, 1},   {24, 2048, 1}, {77, 50, 1}, {64, 4096, 1}, {30, 16, 1}};
    for (int t = 0; t < (int)(sizeof ndims / sizeof ndims[0]); t++) {
        size_t N = (size_t)(sizes[t][0] * sizes[t][1] * sizes[t][2]);
        double *f = rnd(N, 40 + (uint64_t)t);
        double *pc = solve_on("cpu", ndims[t], sizes[t], cases[t], f);
        double *pg = solve_on("cuda", ndims[t], sizes[t], cases[t], f);
        double err = test_rel_err_f64(pg, pc, N);
        if (!(err <= SOLVE_TOL)) fail_msg("case %d: CUDA solve against the CPU solve %.3e", t, err);
        free(f), free(pc), free(pg);
    }
    TEST_OK(hs_ctx_set_device(test_ctx(), "cuda", 1));
}

/* The divide inside cuFFT's C2R as its load callback (HS_POISSON_HOOK=1 asks for it at any size)
 * against the divide in a pass of its own on the GPU (the same arithmetic per coefficient: equal
 * but for what cuFFT's callback kernels do differently) and against the CPU: real FFT, cosine and
 * sine transforms along the last dimension, odd and even lengths, 1D to 3D, singular and not. */
static void test_hooked_solves(void **state)
{
    (void)state;
    const hs_poisson_bc P = HS_POISSON_PERIODIC, Nm = HS_POISSON_NEUMANN, D = HS_POISSON_DIRICHLET;
    const hs_poisson_bc cases[][3][2] = {{{Nm, Nm}, {Nm, Nm}, {P, P}}, {{P, P}, {P, P}, {P, P}},
                                         {{Nm, Nm}, {D, D}, {P, P}},   {{P, P}, {D, D}, {Nm, Nm}},
                                         {{D, D}, {P, P}, {D, D}},     {{Nm, Nm}, {P, P}, {P, P}}};
    const int ndims[] = {2, 2, 2, 3, 3, 1};
    const int64_t sizes[][3] = {{129, 131, 1}, {64, 48, 1}, {40, 257, 1}, {17, 20, 33}, {12, 9, 64}, {301, 1, 1}};
    for (int t = 0; t < (int)(sizeof ndims / sizeof ndims[0]); t++) {
        size_t N = (size_t)(sizes[t][0] * sizes[t][1] * sizes[t][2]);
        double *f = rnd(N, 60 + (uint64_t)t);
        int hooked = -1, plain = -1;
        double *pc = solve_on("cpu", ndims[t], sizes[t], cases[t], f);
        setenv("HS_POISSON_HOOK", "0", 1);
        double *pp = solve_on_hooked("cuda", ndims[t], sizes[t], cases[t], f, &plain);
        setenv("HS_POISSON_HOOK", "1", 1);
        double *ph = solve_on_hooked("cuda", ndims[t], sizes[t], cases[t], f, &hooked);
        unsetenv("HS_POISSON_HOOK");
        if (plain != 0) fail_msg("case %d: HS_POISSON_HOOK=0 still hooked the divide", t);
        if (hooked != 1) { /* a cuFFT without JIT LTO callbacks (before CUDA 13): the plain plan is used */
            printf("SKIP: cuFFT did not take the divide as its load callback (no JIT LTO callbacks here?)\n");
            free(f), free(pc), free(pp), free(ph);
            TEST_OK(hs_ctx_set_device(test_ctx(), "cuda", 1));
            skip();
        }
        double e_plain = test_rel_err_f64(ph, pp, N), e_cpu = test_rel_err_f64(ph, pc, N);
        printf("case %d: hooked against the separate divide %.2e, against the CPU %.2e\n", t, e_plain, e_cpu);
        if (!(e_plain <= 1e-13)) fail_msg("case %d: hooked solve against the separate divide %.3e", t, e_plain);
        if (!(e_cpu <= SOLVE_TOL)) fail_msg("case %d: hooked solve against the CPU %.3e", t, e_cpu);
        free(f), free(pc), free(pp), free(ph);
    }
    TEST_OK(hs_ctx_set_device(test_ctx(), "cuda", 1));
}

/* The fused column solve (hs_poisson_column_solve_cuda) against the CPU's column transforms
 * (kernels/fft strided C2C plans), hs_poisson_plane_divide_cpu and the backward transforms, on
 * random spectra: every column length class (a short first pass of radix 2, 4, 8 or none, up to
 * 4096), odd and even rows, both kinds of divide, the null mode's zero eigenvalue included. */
static void test_column_solve(void **state)
{
    (void)state;
    const int64_t n1s[] = {16, 32, 64, 128, 512, 2048, 4096}, n0s[] = {9, 2, 40, 7, 1, 6, 5};
    for (size_t v = 0; v < sizeof n1s / sizeof n1s[0]; v++) {
        const int64_t n1 = n1s[v], n0 = n0s[v], h0 = n0 / 2 + 1;
        double *tw1 = twiddles(n1), *tw0 = twiddles(n0), *ev1 = rnd((size_t)n1, 80 + v), *ev0 = rnd((size_t)n0, 90 + v);
        double *tw4 = twiddles4(n0), *dtw4 = dev(tw4, (size_t)(2 * n0 + 1));
        for (int64_t i = 0; i < n1; i++) ev1[i] = -0.1 - 0.45 * (ev1[i] + 1.0);
        for (int64_t i = 0; i < n0; i++) ev0[i] = -0.1 - 0.45 * (ev0[i] + 1.0);
        ev1[0] = ev0[0] = 0.0;
        double *cw = malloc((size_t)(2 * n1) * sizeof *cw);
        for (int64_t t = 0; t < n1; t++) cw[2 * t] = cos(2.0 * M_PI * (double)t / (double)n1), cw[2 * t + 1] = -sin(2.0 * M_PI * (double)t / (double)n1);
        double *dcw = dev(cw, (size_t)(2 * n1)), *dtw1 = dev(tw1, (size_t)(2 * (n1 / 2 + 1))), *dtw0 = dev(tw0, (size_t)(2 * h0));
        double *dev1 = dev(ev1, (size_t)n1), *dev0 = dev(ev0, (size_t)n0);
        for (int dct = 0; dct < 3; dct++) {
            if (dct == HS_POISSON_PLANE_DCT4 && n0 % 2) continue; /* DCT4 takes an even x */
            const int64_t h = hs_poisson_plane_cols(n0, dct);
            const size_t nc = (size_t)(2 * n1 * h);
            const double *t0 = dct == HS_POISSON_PLANE_DCT4 ? tw4 : tw0, *dt0 = dct == HS_POISSON_PLANE_DCT4 ? dtw4 : dtw0;
            double *spec = rnd(nc, 100 + v * 3 + (uint64_t)dct), *dspec = dev(spec, nc);
            /* the CPU's way, on the host (the context on the CPU while its plan runs) */
            hs_fft_plan *col = NULL;
            TEST_OK(hs_ctx_set_device(test_ctx(), "cpu", 1));
            TEST_OK(hs_fft_plan_create_strided(test_ctx(), n1, h, h, 1, 1, 0, HS_F64, &col));
            TEST_OK(hs_fft_execute(col, HS_FFT_FORWARD, spec, spec));
            TEST_OK(hs_poisson_plane_divide_cpu(n1, n0, dct, tw1, t0, 1.0 / (double)n1, ev1, ev0, spec));
            TEST_OK(hs_fft_execute(col, HS_FFT_BACKWARD, spec, spec));
            hs_fft_plan_destroy(col);
            TEST_OK(hs_ctx_set_device(test_ctx(), "cuda", 1));
            TEST_OK(hs_poisson_column_solve_cuda(cu(), n1, n0, dct, dcw, dtw1, dt0, 1.0 / (double)n1, dev1, dev0, dspec));
            double e = compare(dspec, spec, nc);
            printf("column solve n1 %lld n0 %lld %s: %.2e\n", (long long)n1, (long long)n0,
                   dct == HS_POISSON_PLANE_DCT4 ? "DCT-IV x" : dct ? "cosine" : "periodic", e);
            TEST_LE(e, 1e-13);
            hs_mem_free(test_ctx(), dspec);
            free(spec);
        }
        hs_mem_free(test_ctx(), dcw), hs_mem_free(test_ctx(), dtw1), hs_mem_free(test_ctx(), dtw0), hs_mem_free(test_ctx(), dtw4);
        hs_mem_free(test_ctx(), dev1), hs_mem_free(test_ctx(), dev0);
        free(tw1), free(tw0), free(tw4), free(ev1), free(ev0), free(cw);
    }
}

static int setup_cuda(void **state)
{
    (void)state;
    return hs_ctx_set_device(test_ctx(), "cuda", 1) == HS_OK ? 0 : -1;
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup(test_moves, setup_cuda),
    cmocka_unit_test_setup(test_transform_steps, setup_cuda),
    cmocka_unit_test_setup(test_solves_and_operator, setup_cuda),
    cmocka_unit_test(test_whole_solves),
    cmocka_unit_test_setup(test_column_solve, setup_cuda),
    cmocka_unit_test(test_hooked_solves),
};
#endif

int main(void)
{
#if HS_HAVE_CUDA
    if (hs_cuda_device_count() > 0) return test_run_group("poisson_twin", tests, sizeof tests / sizeof tests[0]);
    printf("SKIP: no GPU here: the CUDA kernels of the Poisson solver are not compared with their CPU twins\n");
#else
    printf("SKIP: built without CUDA: the Poisson solver has no CUDA twin to compare\n");
#endif
    return 77;
}
