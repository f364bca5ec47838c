/* CPU (OpenMP) kernels of the fast Poisson solver: transpositions fused with the transforms' pre/post steps, those steps alone, the divide and the tridiagonal sweeps. */
#include <string.h>

#include "kernels/dispatch.h"
#include "kernels/error.h"
#include "kernels/fft/poisson_impl.h"
#include "kernels/fft/poisson_point.h"

/* 32 x 32 tiles of one batch entry and one source line: the rows read and the rows written stay in
 * L1 while a tile is moved. */
#define TILE 32

/* The end of tile t along an extent of n. */
static int64_t tile_end(int64_t t, int64_t n) { return (t + 1) * TILE < n ? (t + 1) * TILE : n; }

int hs_poisson_transpose_cpu(const hs_poisson_tpose *t, const double *src, double *dst)
{
    if (t->batch <= 0 || t->rows <= 0 || t->cols <= 0) return HS_OK;
    const int64_t n = t->n, nq = t->cols / n, tr = (t->rows + TILE - 1) / TILE, tc = (n + TILE - 1) / TILE;
#pragma omp parallel for collapse(3) schedule(static) if (t->batch * t->rows * t->cols > HS_CPU_SERIAL_BELOW)
    for (int64_t bq = 0; bq < t->batch * nq; bq++)
        for (int64_t ti = 0; ti < tr; ti++)
            for (int64_t tj = 0; tj < tc; tj++) {
                int64_t b = bq / nq, q = bq % nq;
                const int64_t r1 = tile_end(ti, t->rows), c1 = tile_end(tj, n);
                double *d = dst + b * t->dbs + q * n * t->dcs;
                for (int64_t c = tj * TILE; c < c1; c++)
                    for (int64_t r = ti * TILE; r < r1; r++)
                        d[c * t->dcs + hs_poisson_tpose_pos(t, r)] =
                            hs_poisson_tpose_sign(t, r) * hs_poisson_tpose_get(t, src + b * t->sbs + r * t->srs, q, c);
            }
    return HS_OK;
}

int hs_poisson_transpose_back_cpu(const hs_poisson_tpose *t, const double *from, double *to)
{
    if (t->batch <= 0 || t->rows <= 0 || t->cols <= 0) return HS_OK;
    /* per source line, the spectrum's n/2+1 entries from the coefficients, or the n values */
    const int spectra = t->kind != HS_POISSON_COLS_REAL, dct = t->kind == HS_POISSON_COLS_DCT;
    const int64_t n = t->n, h = n / 2 + 1, w = spectra ? h : n, nq = t->cols / n;
    const int64_t tr = (t->rows + TILE - 1) / TILE, tc = (w + TILE - 1) / TILE;
#pragma omp parallel for collapse(3) schedule(static) if (t->batch * t->rows * t->cols > HS_CPU_SERIAL_BELOW)
    for (int64_t bq = 0; bq < t->batch * nq; bq++)
        for (int64_t ti = 0; ti < tr; ti++)
            for (int64_t tj = 0; tj < tc; tj++) {
                int64_t b = bq / nq, q = bq % nq;
                const int64_t r1 = tile_end(ti, t->rows), k1 = tile_end(tj, w);
                const double *f = from + b * t->dbs + q * n * t->dcs;
                for (int64_t r = ti * TILE; r < r1; r++) {
                    const double *x = f + hs_poisson_tpose_pos(t, r), sg = hs_poisson_tpose_sign(t, r);
                    double *row = to + b * t->sbs + r * t->srs;
                    for (int64_t k = tj * TILE; k < k1; k++) {
                        double a = sg * x[k * t->dcs];
                        if (!spectra) row[q * n + k] = a;
                        else hs_poisson_spec_at(n, k, dct, t->tw, a, k > 0 ? sg * x[(n - k) * t->dcs] : 0.0, row + 2 * q * h);
                    }
                }
            }
    return HS_OK;
}

int hs_poisson_copy_runs_cpu(int64_t rows, int64_t run, const double *src, int64_t srs, double *dst, int64_t drs)
{
    if (rows <= 0 || run <= 0) return HS_OK;
#pragma omp parallel for schedule(static) if (rows * run > HS_CPU_SERIAL_BELOW)
    for (int64_t r = 0; r < rows; r++) memcpy(dst + r * drs, src + r * srs, (size_t)run * sizeof(double));
    return HS_OK;
}

int hs_poisson_line_post_cpu(int64_t lines, int64_t n, int dct, const double *tw, const double *spec, double *dst)
{
    const int64_t h = n / 2 + 1;
#pragma omp parallel for schedule(static) if (lines * n > HS_CPU_SERIAL_BELOW)
    for (int64_t l = 0; l < lines; l++)
        for (int64_t c = 0; c < n; c++) dst[l * n + c] = hs_poisson_coef_at(n, c, dct, tw, spec + 2 * l * h);
    return HS_OK;
}

int hs_poisson_line_pre_cpu(int64_t lines, int64_t n, int dct, const double *tw, const double *src, double *spec)
{
    const int64_t h = n / 2 + 1;
#pragma omp parallel for schedule(static) if (lines * n > HS_CPU_SERIAL_BELOW)
    for (int64_t l = 0; l < lines; l++) {
        const double *x = src + l * n;
        for (int64_t k = 0; k < h; k++) hs_poisson_spec_at(n, k, dct, tw, x[k], k > 0 ? x[n - k] : 0.0, spec + 2 * l * h);
    }
    return HS_OK;
}

int hs_poisson_spectral_divide_cpu(int64_t rows, int64_t n, int dct, const double *tw, double scale,
                                   const double *row_ev, const double *ev, double *spec)
{
    const int64_t h = n / 2 + 1;
#pragma omp parallel for schedule(static) if (rows * n > HS_CPU_SERIAL_BELOW)
    for (int64_t r = 0; r < rows; r++)
        for (int64_t k = 0; k < h; k++) hs_poisson_spectral_divide_at(n, k, dct, tw, scale, row_ev[r], ev, spec + 2 * r * h);
    return HS_OK;
}

int hs_poisson_order_cpu(int64_t planes, int64_t n1, int64_t n0, int o1, int o0, int x1, int x0, int to_ordered,
                         const double *src, double *dst)
{
    const int64_t m1 = hs_poisson_ext_len(x1, n1), m0 = hs_poisson_ext_len(x0, n0);
    const int64_t r1 = to_ordered ? m1 : n1, r0 = to_ordered ? m0 : n0; /* the destination's sizes */
#pragma omp parallel for collapse(2) schedule(static) if (planes * r1 * r0 > HS_CPU_SERIAL_BELOW)
    for (int64_t p = 0; p < planes; p++)
        for (int64_t j = 0; j < r1; j++) {
            double *d = dst + (p * r1 + j) * r0, s1, s0;
            if (to_ordered) { /* place (j, i) from element (source(j), source(i)) */
                const double *x = src + (p * n1 + hs_poisson_order_gather(o1, x1, n1, j, &s1)) * n0;
                for (int64_t i = 0; i < m0; i++) {
                    const int64_t si = hs_poisson_order_gather(o0, x0, n0, i, &s0);
                    d[i] = s1 * s0 * x[si];
                }
            } else { /* element (j, i) from place (position(j), position(i)) */
                const double *v = src + (p * m1 + hs_poisson_order_back(o1, x1, n1, j, &s1)) * m0;
                for (int64_t i = 0; i < n0; i++) {
                    const int64_t pi = hs_poisson_order_back(o0, x0, n0, i, &s0);
                    d[i] = s1 * s0 * v[pi];
                }
            }
        }
    return HS_OK;
}

int hs_poisson_plane_divide_cpu(int64_t n1, int64_t n0, int dct, const double *tw1, const double *tw0, double scale,
                                const double *ev1, const double *ev0, double *spec)
{
    const int64_t h0 = hs_poisson_plane_cols(n0, dct);
#pragma omp parallel for schedule(static) if (n1 * n0 > HS_CPU_SERIAL_BELOW)
    for (int64_t k1 = 0; k1 <= n1 / 2; k1++)
        for (int64_t k2 = 0; k2 < h0; k2++) hs_poisson_plane_divide_pair(n1, n0, k1, k2, dct, tw1, tw0, scale, ev1, ev0, spec);
    return HS_OK;
}

int hs_poisson_dct4_pack_cpu(int64_t n1, int64_t n0, int o1, int side, const double *tw4, const double *f, double *spec)
{
    const int64_t h = n0 / 2;
#pragma omp parallel for schedule(static) if (n1 * n0 > HS_CPU_SERIAL_BELOW)
    for (int64_t jp = 0; jp < n1; jp++)
        for (int64_t j = 0; j < h; j++) hs_poisson_dct4_pack_at(n1, n0, o1, side, tw4, f, jp, j, spec + 2 * (jp * h + j));
    return HS_OK;
}

int hs_poisson_dct4_unpack_cpu(int64_t n1, int64_t n0, int o1, int side, const double *tw4, const double *spec, double *p)
{
#pragma omp parallel for schedule(static) if (n1 * n0 > HS_CPU_SERIAL_BELOW)
    for (int64_t y = 0; y < n1; y++)
        for (int64_t i = 0; i < n0; i++) p[y * n0 + i] = hs_poisson_dct4_unpack_at(n1, n0, o1, side, tw4, spec, y, i);
    return HS_OK;
}

int hs_poisson_tridiag_cpu(int64_t outer, int64_t n, int64_t inner, const double *sigma, double h2, double scale,
                           int g_lo, int g_hi, const double *src, double *dst, double *work)
{
    if (outer <= 0 || n <= 0 || inner <= 0) return HS_OK;
    const double rs = h2 * scale;
#pragma omp parallel for collapse(2) schedule(static) if (outer * n * inner > HS_CPU_SERIAL_BELOW)
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            int64_t base = o * n * inner + i;
            hs_poisson_tridiag_line(n, inner, sigma[o * inner + i] * h2 - 2.0, rs, g_lo, g_hi, src + base, dst + base,
                                    work + base);
        }
    return HS_OK;
}

int hs_poisson_laplacian_cpu(int ndim, const int64_t n[3], const double *u, int64_t sy, int64_t sz,
                             const double idx2[3], double *out)
{
    const int64_t stride[3] = {1, sy, sz};
#pragma omp parallel for collapse(2) schedule(static) if (n[0] * n[1] * n[2] > HS_CPU_SERIAL_BELOW)
    for (int64_t k = 0; k < n[2]; k++)
        for (int64_t j = 0; j < n[1]; j++)
            for (int64_t i = 0; i < n[0]; i++)
                out[(k * n[1] + j) * n[0] + i] = hs_poisson_laplacian_at(ndim, u, k * sz + j * sy + i, stride, idx2);
    return HS_OK;
}
